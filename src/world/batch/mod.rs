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
//!   depend on it alone and are put back in input order, so the output is the same bytes
//!   for any thread count.
//! - Allocation: a [`Batch`] keeps its buffers (and one per chunk) between calls; reused,
//!   it allocates only to grow.
//! - Source: this crate.

mod order;

use super::query::{check_max_distance, check_point, QueryFilter, Ray, Sphere, Sweep};
use super::{Handle, World};
use crate::par::prelude::*;
use crate::{Aabb, Error};
use order::{midway, with_order};
use std::cell::Cell;

/// Queries a parallel work item runs.
const CHUNK: usize = 64;

/// The results of a batch of queries: query `i`'s are `get(i)`, in the order the single
/// query gives them.
#[derive(Clone, Debug)]
pub struct Batch<T> {
    /// Every query's results, one query after another.
    items: Vec<T>,
    /// Where each query's results end in `items`.
    ends: Vec<usize>,
    /// Per chunk of queries: its results and each query's count, kept between calls.
    parts: Vec<(Vec<T>, Vec<usize>)>,
    /// Per query, where its results lie in `parts`: chunk, start, count; kept.
    spots: Vec<(usize, usize, usize)>,
}

impl<T> Default for Batch<T> {
    fn default() -> Self {
        Self { items: Vec::new(), ends: Vec::new(), parts: Vec::new(), spots: Vec::new() }
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

    /// Runs `one(query, out)` (which appends that query's results to `out`) for each
    /// query, in parallel chunks, taking the queries in `order` (their indices) where
    /// given, and gathers the results in input order.
    fn run<Q: Sync>(&mut self, queries: &[Q], order: Option<&[u32]>, one: impl Fn(&Q, &mut Vec<T>) + Sync) {
        let n = queries.len();
        let chunks = n.div_ceil(CHUNK);
        if self.parts.len() < chunks {
            self.parts.resize_with(chunks, Default::default);
        }
        let index = |j: usize| order.map_or(j, |o| o[j] as usize);
        self.parts[..chunks].par_iter_mut().enumerate().for_each(|(c, (items, counts))| {
            items.clear();
            counts.clear();
            for j in c * CHUNK..((c + 1) * CHUNK).min(n) {
                let start = items.len();
                one(&queries[index(j)], items);
                counts.push(items.len() - start);
            }
        });
        self.items.clear();
        self.ends.clear();
        let Some(order) = order else {
            for (items, counts) in &self.parts[..chunks] {
                self.items.extend_from_slice(items);
                for &k in counts {
                    self.ends.push(self.ends.last().copied().unwrap_or(0) + k);
                }
            }
            return;
        };
        self.spots.clear();
        self.spots.resize(n, (0, 0, 0));
        for (c, (_, counts)) in self.parts[..chunks].iter().enumerate() {
            let mut start = 0;
            for (j, &k) in counts.iter().enumerate() {
                self.spots[order[c * CHUNK + j] as usize] = (c, start, k);
                start += k;
            }
        }
        for &(c, start, k) in &self.spots {
            self.items.extend_from_slice(&self.parts[c].0[start..start + k]);
            self.ends.push(self.items.len());
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
    order: Option<&[u32]>,
    closest: impl Fn(&Q) -> Option<(Handle, f32)> + Sync + Send,
    out: &mut Hits,
) {
    let Some(order) = order else {
        queries.par_iter().with_min_len(CHUNK).map(closest).collect_into_vec(out);
        return;
    };
    let mut ran = HITS.take();
    order.par_iter().with_min_len(CHUNK).map(|&i| closest(&queries[i as usize])).collect_into_vec(&mut ran);
    out.clear();
    out.resize(queries.len(), None);
    for (&i, &hit) in order.iter().zip(&ran) {
        out[i as usize] = hit;
    }
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
