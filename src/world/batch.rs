//! Batched queries: many regions, points, balls, nearest queries, rays or swept boxes at
//! once, on all cores, results in input order.
//!
//! - Input: a slice of queries and one [`QueryFilter`] for all. Output: a [`Batch`] (each
//!   query's results, one after another) or one closest hit a cast.
//! - Every query is checked before any runs: the first bad one is the error, and `out`
//!   is left as it was.
//! - Cost: that of the queries one by one ([`crate::world`]'s query docs), divided among
//!   the threads.
//! - Threads: fixed chunks of [`CHUNK`] queries on the caller's rayon pool; each query's
//!   results depend on it alone and the chunks are joined in order, so the output is the
//!   same bytes for any thread count.
//! - Allocation: a [`Batch`] keeps its buffers (and one per chunk) between calls; reused,
//!   it allocates only to grow.
//! - Source: this crate.

use super::query::{check_max_distance, check_point, QueryFilter, Ray, Sphere, Sweep};
use super::{Handle, World};
use crate::par::prelude::*;
use crate::{Aabb, Error};

/// Queries a parallel work item runs.
const CHUNK: usize = 64;

/// The results of a batch of queries: query `i`'s are `get(i)`, in the order the single
/// query gives them.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch<T> {
    /// Every query's results, one query after another.
    items: Vec<T>,
    /// Where each query's results end in `items`.
    ends: Vec<usize>,
    /// Per chunk of queries: its results and each query's count, kept between calls.
    parts: Vec<(Vec<T>, Vec<usize>)>,
}

impl<T> Default for Batch<T> {
    fn default() -> Self {
        Self { items: Vec::new(), ends: Vec::new(), parts: Vec::new() }
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
    /// query, in parallel chunks, and gathers the results in order.
    fn run<Q: Sync>(&mut self, queries: &[Q], one: impl Fn(&Q, &mut Vec<T>) + Sync) {
        let chunks = queries.len().div_ceil(CHUNK);
        if self.parts.len() < chunks {
            self.parts.resize_with(chunks, Default::default);
        }
        self.parts[..chunks].par_iter_mut().enumerate().for_each(|(c, (items, counts))| {
            items.clear();
            counts.clear();
            for q in &queries[c * CHUNK..((c + 1) * CHUNK).min(queries.len())] {
                let start = items.len();
                one(q, items);
                counts.push(items.len() - start);
            }
        });
        self.items.clear();
        self.ends.clear();
        for (items, counts) in &self.parts[..chunks] {
            self.items.extend_from_slice(items);
            for &n in counts {
                self.ends.push(self.ends.last().copied().unwrap_or(0) + n);
            }
        }
    }
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
        out.run(regions, |r, v| self.region_into(r, &filter, v));
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
        out.run(points, |p, v| self.region_into(&Aabb { min: *p, max: *p }, &filter, v));
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
        out.run(spheres, |b, v| self.sphere_into(b, &filter, v));
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
        out.run(points, |p, v| self.nearest_into(p, k, max_distance, &filter, v));
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
        rays.par_iter()
            .with_min_len(CHUNK)
            .map(|r| self.closest(&r.prepared(), &filter))
            .collect_into_vec(out);
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
        out.run(rays, |r, v| self.hits_into(&r.prepared(), max_hits, &filter, v));
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
        sweeps
            .par_iter()
            .with_min_len(CHUNK)
            .map(|s| self.closest(&s.prepared(), &filter))
            .collect_into_vec(out);
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
        out.run(sweeps, |s, v| self.hits_into(&s.prepared(), max_hits, &filter, v));
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
