//! Batched queries: many regions, points, balls, nearest queries, rays or swept boxes at
//! once, on all cores, results in input order.
//!
//! - Input: a slice of queries and one [`QueryFilter`] for all. Output: a [`Batch`] (each
//!   query's results, one after another) or one closest hit a cast.
//! - Every query is checked before any runs: the first bad one is the error, and `out`
//!   is left as it was.
//! - Cost: that of the queries one by one ([`crate::world`]'s query docs), divided among
//!   the threads.
//! - Threads: fixed chunks of [`CHUNK`] queries on the caller's rayon pool, the queries
//!   taken along a Morton curve through their positions (`order`); each query's results
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
    /// query, in parallel chunks, taking the queries in `order` where given, and gathers
    /// the results in input order (in parallel too).
    fn run<Q: Sync>(
        &mut self,
        queries: &[Q],
        order: Option<Order<'_>>,
        one: impl Fn(&Q, &mut Vec<T>) + Sync,
    ) {
        let n = queries.len();
        let chunks = n.div_ceil(CHUNK);
        if self.parts.len() < chunks {
            self.parts.resize_with(chunks, Default::default);
        }
        self.parts[..chunks].par_iter_mut().enumerate().for_each(|(c, (items, ends))| {
            items.clear();
            ends.clear();
            for j in c * CHUNK..((c + 1) * CHUNK).min(n) {
                one(&queries[order.map_or(j, |o| o.run[j] as usize)], items);
                ends.push(items.len());
            }
        });
        let parts = &self.parts[..chunks];
        let at = |i: usize| order.map_or(i, |o| o.at[i] as usize);
        self.ends.clear();
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

/// `closest(query)` for each query into `out` (entry `i` for query `i`), in parallel, the
/// queries taken in `order` where given.
fn each_closest<Q: Sync>(
    queries: &[Q],
    order: Option<Order<'_>>,
    closest: impl Fn(&Q) -> Option<(Handle, f32)> + Sync + Send,
    out: &mut Hits,
) {
    let Some(order) = order else {
        queries.par_iter().with_min_len(CHUNK).map(closest).collect_into_vec(out);
        return;
    };
    let mut ran = HITS.take();
    order
        .run
        .par_iter()
        .with_min_len(CHUNK)
        .map(|&i| closest(&queries[i as usize]))
        .collect_into_vec(&mut ran);
    order.at.par_iter().with_min_len(GATHER).map(|&j| ran[j as usize]).collect_into_vec(out);
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
        with_order(
            regions.len(),
            |i| centre(&regions[i]),
            |o| out.run(regions, o, |r, v| self.region_into(r, &filter, v)),
        );
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
        with_order(
            points.len(),
            |i| points[i],
            |o| out.run(points, o, |p, v| self.region_into(&Aabb { min: *p, max: *p }, &filter, v)),
        );
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
        with_order(
            spheres.len(),
            |i| spheres[i].center,
            |o| out.run(spheres, o, |b, v| self.sphere_into(b, &filter, v)),
        );
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
        with_order(
            points.len(),
            |i| points[i],
            |o| out.run(points, o, |p, v| self.nearest_into(p, k, max_distance, &filter, v)),
        );
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
        with_order(rays.len(), mid, |o| each_closest(rays, o, |r| self.closest(&r.prepared(), &filter), out));
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
        with_order(rays.len(), mid, |o| {
            out.run(rays, o, |r, v| self.hits_into(&r.prepared(), max_hits, &filter, v))
        });
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
        with_order(sweeps.len(), mid, |o| {
            each_closest(sweeps, o, |s| self.closest(&s.prepared(), &filter), out)
        });
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
        with_order(sweeps.len(), mid, |o| {
            out.run(sweeps, o, |s, v| self.hits_into(&s.prepared(), max_hits, &filter, v))
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Batch;
    use crate::world::{Kind, QueryFilter, World};
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
}
