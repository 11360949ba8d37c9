//! Batched queries: many regions, points, balls, nearest queries, rays or swept boxes at
//! once, on all cores, results in input order.
//!
//! - Input: a slice of queries and one [`QueryFilter`] for all. Output: a [`Batch`] (each
//!   query's results, one after another) or one closest hit a cast.
//! - Every query is checked before any runs: the first bad one is the error, and `out`
//!   is left as it was.
//! - Cost: that of the queries one by one ([`crate::world`]'s query docs), divided among
//!   the threads.
//! - Threads: fixed chunks of [`CHUNK`] queries on the caller's rayon pool, the first in
//!   input order, the rest along a Morton curve through their positions (`order`) where
//!   the first found enough to show that the queries reach the leaves; each query's results
//!   depend on it alone and are put back in input order (a parallel gather), so the
//!   output is the same bytes for any thread count.
//! - Allocation: a [`Batch`] keeps its buffers (and one per chunk) between calls; reused,
//!   it allocates only to grow.
//! - Source: this crate.

mod order;

use super::query::{check_max_distance, check_point, QueryFilter, Ray, Sphere, Sweep};
use super::{Handle, World};
use crate::par::join;
use crate::par::prelude::*;
use crate::{Aabb, Error};
use order::{midway, with_order, Order};
use std::cell::Cell;

/// Queries a parallel work item runs.
const CHUNK: usize = 64;

/// Queries (or sixteen times as many results) a work item of the gather back to input
/// order copies at the most.
const GATHER: usize = 2048;

/// Whether a batch runs along the curve, from how many of its first [`CHUNK`] queries
/// (run in input order) found something: at least one in sixteen. A query that finds
/// nothing mostly stops in the tree's upper levels, which stay in cache in any order, so
/// a batch of such queries (points in a level's open air) pays for the order and gains
/// nothing from it; queries that reach leaves share their paths along the curve.
/// PERF: benches/queries.rs (`points` on `terrain` and `uniform`).
fn ordered(found: usize) -> bool {
    found * 16 >= CHUNK
}

/// The results of a batch of queries: query `i`'s are `get(i)`, in the order the single
/// query gives them.
#[derive(Clone, Debug)]
pub struct Batch<T> {
    /// Every query's results, one query after another.
    items: Vec<T>,
    /// Where each query's results end in `items`.
    ends: Vec<usize>,
    /// Per chunk of queries: its results and where each query's results end there, kept
    /// between calls.
    parts: Vec<(Vec<T>, Vec<usize>)>,
}

impl<T> Default for Batch<T> {
    fn default() -> Self {
        Self { items: Vec::new(), ends: Vec::new(), parts: Vec::new() }
    }
}

/// Two batches are equal where they hold the same results for the same queries.
impl<T: PartialEq> PartialEq for Batch<T> {
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items && self.ends == other.ends
    }
}

impl<T: Copy + Send> Batch<T> {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queries answered.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when no query was answered.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Query `i`'s results (empty past the end).
    pub fn get(&self, i: usize) -> &[T] {
        match self.ends.get(i) {
            Some(&end) => &self.items[if i == 0 { 0 } else { self.ends[i - 1] }..end],
            None => &[],
        }
    }

    /// Each query's results, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[T]> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// Every query's results, one query after another.
    pub fn items(&self) -> &[T] {
        &self.items
    }
}

impl<T: Copy + Send + Sync> Batch<T> {
    /// Runs `one(query, out)` (which appends that query's results to `out`) for each
    /// query, in parallel chunks, and gathers the results in input order (in parallel
    /// too). The first chunk runs first, in input order, on this thread: where
    /// [`ordered`] finds that its queries found enough, the rest run along the curve
    /// through `position(i)`.
    fn run<Q: Sync, const D: usize>(
        &mut self,
        queries: &[Q],
        position: impl Fn(usize) -> [f32; D] + Sync,
        one: impl Fn(&Q, &mut Vec<T>) + Sync,
    ) {
        let n = queries.len();
        let chunks = n.div_ceil(CHUNK);
        if self.parts.len() < chunks {
            self.parts.resize_with(chunks, Default::default);
        }
        let mut found = 0;
        if let Some((items, ends)) = self.parts.first_mut() {
            items.clear();
            ends.clear();
            for q in &queries[..n.min(CHUNK)] {
                let start = items.len();
                one(q, items);
                found += (items.len() > start) as usize;
                ends.push(items.len());
            }
        }
        let n = if ordered(found) { n } else { 0 };
        with_order(n, CHUNK, position, |order| self.rest(queries, order, one));
    }

    /// [`Batch::run`] past the first chunk, then the gather.
    fn rest<Q: Sync>(
        &mut self,
        queries: &[Q],
        order: Option<Order<'_>>,
        one: impl Fn(&Q, &mut Vec<T>) + Sync,
    ) {
        let n = queries.len();
        let chunks = n.div_ceil(CHUNK);
        if chunks > 1 {
            self.parts[1..chunks].par_iter_mut().enumerate().for_each(|(c, (items, ends))| {
                items.clear();
                ends.clear();
                for j in (c + 1) * CHUNK..((c + 2) * CHUNK).min(n) {
                    one(&queries[order.map_or(j, |o| o.run[j] as usize)], items);
                    ends.push(items.len());
                }
            });
        }
        let parts = &self.parts[..chunks];
        self.ends.clear();
        let Some(order) = order else {
            // In place (a batch whose queries found little): the chunks' results one
            // after another, a copy a chunk.
            self.items.clear();
            for (items, ends) in parts {
                let base = self.items.len();
                self.items.extend_from_slice(items);
                self.ends.extend(ends.iter().map(|e| base + e));
            }
            return;
        };
        let at = |i: usize| order.at[i] as usize;
        let mut total = 0;
        for i in 0..n {
            let (s, e) = span(parts, at(i));
            total += e - s;
            self.ends.push(total);
        }
        // Every slot is written below; a longer buffer from an earlier call is cut, a
        // shorter one grown with a copy of some result (only the new slots are filled).
        if self.items.len() < total
            && let Some(fill) = parts.iter().find_map(|(items, _)| items.first().copied())
        {
            self.items.resize(total, fill);
        }
        self.items.truncate(total);
        gather(parts, &self.ends, &at, 0, n, &mut self.items);
    }
}

/// Query `j` of the run's results in its chunk's buffer: start and end.
#[inline]
fn span<T>(parts: &[(Vec<T>, Vec<usize>)], j: usize) -> (usize, usize) {
    let (ends, r) = (&parts[j / CHUNK].1, j % CHUNK);
    (if r == 0 { 0 } else { ends[r - 1] }, ends[r])
}

/// Copies the results of queries `lo..hi` (input order; query `i` ran `at(i)`-th) from
/// the chunks' buffers into `out` (their results, one query after another; `ends` are
/// the batch's), halving the range on the pool while it holds more than [`GATHER`]
/// queries or results.
fn gather<T: Copy + Send + Sync>(
    parts: &[(Vec<T>, Vec<usize>)],
    ends: &[usize],
    at: &(impl Fn(usize) -> usize + Sync),
    lo: usize,
    hi: usize,
    out: &mut [T],
) {
    let base = if lo == 0 { 0 } else { ends[lo - 1] };
    if hi - lo > 1 && (hi - lo > GATHER || out.len() > GATHER * 16) {
        let mid = lo + (hi - lo) / 2;
        let (a, b) = out.split_at_mut(ends[mid - 1] - base);
        join(|| gather(parts, ends, at, lo, mid, a), || gather(parts, ends, at, mid, hi, b));
        return;
    }
    for (i, &end) in (lo..hi).zip(&ends[lo..hi]) {
        let j = at(i);
        let (s, e) = span(parts, j);
        let from = &parts[j / CHUNK].0;
        let to = end - base;
        match e - s {
            0 => {}
            1 => out[to - 1] = from[s],
            k => out[to - k..to].copy_from_slice(&from[s..e]),
        }
    }
}

/// A thread's buffer of closest hits in the order they ran (taken out while in use).
type Hits = Vec<Option<(Handle, f32)>>;

thread_local! {
    static HITS: Cell<Hits> = const { Cell::new(Vec::new()) };
}

/// `closest(query)` for each query into `out` (entry `i` for query `i`), in parallel: the
/// first [`CHUNK`] in input order on this thread, the rest along the curve through
/// `position(i)` where [`ordered`] says so.
fn each_closest<Q: Sync, const D: usize>(
    queries: &[Q],
    position: impl Fn(usize) -> [f32; D] + Sync,
    closest: impl Fn(&Q) -> Option<(Handle, f32)> + Sync + Send,
    out: &mut Hits,
) {
    let mut ran = HITS.take();
    ran.clear();
    ran.extend(queries.iter().take(CHUNK).map(&closest));
    let found = ran.iter().filter(|h| h.is_some()).count();
    let n = if ordered(found) { queries.len() } else { 0 };
    with_order(n, CHUNK, position, |order| {
        let Some(order) = order else {
            out.clear();
            out.extend_from_slice(&ran);
            let rest = queries.get(CHUNK..).unwrap_or(&[]);
            out.par_extend(rest.par_iter().with_min_len(CHUNK).map(&closest));
            return;
        };
        let rest = &order.run[CHUNK..];
        ran.par_extend(rest.par_iter().with_min_len(CHUNK).map(|&i| closest(&queries[i as usize])));
        order.at.par_iter().with_min_len(GATHER).map(|&j| ran[j as usize]).collect_into_vec(out);
    });
    HITS.set(ran);
}

/// A box's centre.
fn centre<const D: usize>(b: &Aabb<D>) -> [f32; D] {
    std::array::from_fn(|k| b.centre_on(k))
}

impl<const D: usize> World<D> {
    /// [`World::query_aabb`] for each region, into `out` (its query `i` is region `i`).
    /// An invalid region is [`Error::InvalidBox`] with its index, and nothing runs.
    pub fn query_aabbs(
        &self,
        regions: &[Aabb<D>],
        filter: QueryFilter<'_>,
        out: &mut Batch<Handle>,
    ) -> Result<(), Error> {
        crate::validate::check_boxes(regions)?;
        out.run(regions, |i| centre(&regions[i]), |r, v| self.region_into(r, &filter, v));
        Ok(())
    }

    /// [`World::query_point`] for each point, into `out`. A non-finite point is
    /// [`Error::InvalidQuery`] with its index, and nothing runs.
    pub fn query_points(
        &self,
        points: &[[f32; D]],
        filter: QueryFilter<'_>,
        out: &mut Batch<Handle>,
    ) -> Result<(), Error> {
        for (i, p) in points.iter().enumerate() {
            check_point(p, i)?;
        }
        out.run(points, |i| points[i], |p, v| self.region_into(&Aabb { min: *p, max: *p }, &filter, v));
        Ok(())
    }

    /// [`World::query_sphere`] for each ball, into `out`. An invalid ball is
    /// [`Error::InvalidQuery`] with its index, and nothing runs.
    pub fn query_spheres(
        &self,
        spheres: &[Sphere<D>],
        filter: QueryFilter<'_>,
        out: &mut Batch<Handle>,
    ) -> Result<(), Error> {
        for (i, b) in spheres.iter().enumerate() {
            b.check(i)?;
        }
        out.run(spheres, |i| spheres[i].center, |b, v| self.sphere_into(b, &filter, v));
        Ok(())
    }

    /// [`World::nearest`] for each point, with the same `k` and `max_distance`, into
    /// `out`. A non-finite point is [`Error::InvalidQuery`] with its index (as is a NaN or
    /// negative `max_distance`, with index 0), and nothing runs.
    pub fn nearest_to_points(
        &self,
        points: &[[f32; D]],
        k: usize,
        max_distance: f32,
        filter: QueryFilter<'_>,
        out: &mut Batch<(Handle, f32)>,
    ) -> Result<(), Error> {
        check_max_distance(max_distance, 0)?;
        for (i, p) in points.iter().enumerate() {
            check_point(p, i)?;
        }
        out.run(points, |i| points[i], |p, v| self.nearest_into(p, k, max_distance, &filter, v));
        Ok(())
    }

    /// [`World::cast_ray`] for each ray, into `out` (cleared first; entry `i` is ray `i`'s
    /// closest hit). An invalid ray is [`Error::InvalidQuery`] with its index, and nothing
    /// runs.
    pub fn cast_rays(
        &self,
        rays: &[Ray<D>],
        filter: QueryFilter<'_>,
        out: &mut Vec<Option<(Handle, f32)>>,
    ) -> Result<(), Error> {
        for (i, r) in rays.iter().enumerate() {
            r.check(i)?;
        }
        let mid = |i: usize| midway(rays[i].origin, &rays[i].dir, rays[i].max_t);
        each_closest(rays, mid, |r| self.closest(&r.prepared(), &filter), out);
        Ok(())
    }

    /// [`World::cast_ray_all`] for each ray, with the same `max_hits`, into `out`. An
    /// invalid ray is [`Error::InvalidQuery`] with its index, and nothing runs.
    pub fn cast_rays_all(
        &self,
        rays: &[Ray<D>],
        max_hits: usize,
        filter: QueryFilter<'_>,
        out: &mut Batch<(Handle, f32)>,
    ) -> Result<(), Error> {
        for (i, r) in rays.iter().enumerate() {
            r.check(i)?;
        }
        let mid = |i: usize| midway(rays[i].origin, &rays[i].dir, rays[i].max_t);
        out.run(rays, mid, |r, v| self.hits_into(&r.prepared(), max_hits, &filter, v));
        Ok(())
    }

    /// [`World::cast_aabb`] for each swept box, into `out` (cleared first; entry `i` is
    /// sweep `i`'s first hit). An invalid box is [`Error::InvalidBox`] and an invalid
    /// motion [`Error::InvalidQuery`], with its index, and nothing runs.
    pub fn cast_aabbs(
        &self,
        sweeps: &[Sweep<D>],
        filter: QueryFilter<'_>,
        out: &mut Vec<Option<(Handle, f32)>>,
    ) -> Result<(), Error> {
        for (i, s) in sweeps.iter().enumerate() {
            s.check(i)?;
        }
        let mid = |i: usize| midway(centre(&sweeps[i].aabb), &sweeps[i].dir, sweeps[i].max_t);
        each_closest(sweeps, mid, |s| self.closest(&s.prepared(), &filter), out);
        Ok(())
    }

    /// [`World::cast_aabb_all`] for each swept box, with the same `max_hits`, into `out`;
    /// errors as [`World::cast_aabbs`].
    pub fn cast_aabbs_all(
        &self,
        sweeps: &[Sweep<D>],
        max_hits: usize,
        filter: QueryFilter<'_>,
        out: &mut Batch<(Handle, f32)>,
    ) -> Result<(), Error> {
        for (i, s) in sweeps.iter().enumerate() {
            s.check(i)?;
        }
        let mid = |i: usize| midway(centre(&sweeps[i].aabb), &sweeps[i].dir, sweeps[i].max_t);
        out.run(sweeps, mid, |s, v| self.hits_into(&s.prepared(), max_hits, &filter, v));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Batch;
    use crate::world::{Kind, QueryFilter, Ray, World};
    use crate::{Aabb, Config, Handle};

    /// A reused batch gives each query's results as the single query does, whether the
    /// batch before held more results or fewer.
    #[test]
    fn a_reused_batch_matches_single_queries() {
        let mut w = World::<2>::new(Config::default()).unwrap();
        let boxes: Vec<_> = (0..3000)
            .map(|i| {
                let (x, y) = ((i % 60) as f32, (i / 60) as f32);
                Aabb::new([x, y], [x + 1.0, y + 1.0])
            })
            .collect();
        w.extend(&boxes, Kind::Static).unwrap();
        w.update().unwrap();
        let mut batch = Batch::<Handle>::new();
        let mut one = Vec::new();
        for side in [20.0f32, 0.5, 8.0, 0.0, 30.0] {
            let regions: Vec<_> = (0..700)
                .map(|i| {
                    let (x, y) = ((i * 7 % 60) as f32, (i * 13 % 50) as f32);
                    Aabb::new([x, y], [x + side, y + side])
                })
                .collect();
            w.query_aabbs(&regions, QueryFilter::new(), &mut batch).unwrap();
            assert_eq!(batch.len(), regions.len());
            for (i, r) in regions.iter().enumerate() {
                w.query_aabb(*r, QueryFilter::new(), &mut one).unwrap();
                assert_eq!(batch.get(i), &one[..], "side {side}, region {i}");
            }
            assert_eq!(batch.items().len(), batch.iter().map(<[Handle]>::len).sum::<usize>());
        }
    }

    /// Batches whose first queries find too little to be put in order (points and rays
    /// mostly off the boxes, one in forty on them) and those that find enough give what
    /// the single queries give.
    #[test]
    fn batches_in_place_and_in_order_match_single_queries() {
        let mut w = World::<2>::new(Config::default()).unwrap();
        let boxes: Vec<_> = (0..400).map(|i| Aabb::new([i as f32, 0.0], [i as f32 + 0.5, 1.0])).collect();
        w.extend(&boxes, Kind::Static).unwrap();
        w.update().unwrap();
        for every in [40, 1] {
            let points: Vec<[f32; 2]> = (0..900)
                .map(|i| [(i * 7 % 400) as f32 + 0.25, if i % every == 0 { 0.5 } else { 5.0 + i as f32 }])
                .collect();
            let mut batch = Batch::<Handle>::new();
            w.query_points(&points, QueryFilter::new(), &mut batch).unwrap();
            let mut one = Vec::new();
            for (i, p) in points.iter().enumerate() {
                w.query_point(*p, QueryFilter::new(), &mut one).unwrap();
                assert_eq!(batch.get(i), &one[..], "every {every}, point {i}");
            }
            let rays: Vec<Ray<2>> = points.iter().map(|&p| Ray::new(p, [0.0, -1.0], 0.4)).collect();
            let mut hits = Vec::new();
            w.cast_rays(&rays, QueryFilter::new(), &mut hits).unwrap();
            assert_eq!(hits.len(), rays.len());
            for (i, r) in rays.iter().enumerate() {
                let single = w.cast_ray(r.origin, r.dir, r.max_t, QueryFilter::new()).unwrap();
                assert_eq!(hits[i], single, "every {every}, ray {i}");
            }
            let found = hits.iter().filter(|h| h.is_some()).count();
            assert!(if every == 1 { found == rays.len() } else { found < rays.len() / 20 });
        }
    }
}
