//! Nearest objects: the k objects whose boxes lie closest to a point.
//!
//! - Input: a point, `k`, a `max_distance` (inclusive; infinite for no bound), a
//!   [`QueryFilter`]. Output: up to k `(handle, distance)`, sorted by `(distance,
//!   handle)`: the first k of every object the filter takes in that order, among those
//!   no farther than `max_distance`.
//! - Distance: Euclidean, from the point to the closed box (0 inside or on it), as
//!   [`crate::bvh::distance`] computes it: in `f64`, rounded to `f32` once.
//! - How: one best-first walk over the static and dynamic trees together, keyed by the
//!   distance to each subtree's bounds, with the objects changed since the last update
//!   queued beside them; the walk stops at the k-th object, and leaves out whatever lies
//!   beyond the k nearest objects queued so far. A wide node's four children are keyed
//!   in one pass; without a margin a static leaf's key is its object's (no second read).
//! - Cost: about O(k log n) for k objects in a scene where boxes are about as large as
//!   their spacing (the subtrees nearer than the k-th object are opened), plus a test of
//!   each changed object. Threads: none. Allocation: the walk's queue (one a thread, kept).
//! - Source: G. R. Hjaltason and H. Samet, "Distance browsing in spatial databases" (ACM
//!   TODS, 1999): the best-first k-nearest-neighbour search.

use super::{check_point, QueryFilter};
use crate::bvh::Near;
use crate::world::{Handle, World};
use crate::Error;
use std::ops::ControlFlow;

/// Checks a bound on a distance (a `max_distance`: not NaN, not negative, may be
/// infinite); `index` names the query in the error.
pub(crate) fn check_max_distance(d: f32, index: usize) -> Result<(), Error> {
    if d.is_nan() || d < 0.0 {
        return Err(Error::InvalidQuery { index, reason: "max_distance is NaN or negative" });
    }
    Ok(())
}

impl<const D: usize> World<D> {
    /// The `k` objects the filter takes whose boxes lie nearest to `point`, no farther
    /// than `max_distance` (inclusive; `f32::INFINITY` for no bound), into `out` (cleared
    /// first) with their distances, sorted by `(distance, handle)`: ties go to the lower
    /// handle. Fewer where fewer objects are within reach; none for `k = 0`.
    ///
    /// The distance is Euclidean, from the point to the closed box: 0 for a point inside
    /// or on it; computed in `f64` and rounded to `f32` once (infinite only where it
    /// passes `f32::MAX`). Sees every call made so far, as [`World::query_aabb`].
    ///
    /// Cost: a best-first walk over both trees at once, O((m + k) log m) for the m subtrees
    /// nearer than the k-th object (about O(k log n) in scenes of boxes about as large as
    /// their spacing), plus a test of each object changed since the last update.
    ///
    /// ```
    /// use broadphase::{Aabb2, Config, Kind, QueryFilter, World2};
    /// let mut world = World2::new(Config::default())?;
    /// let a = world.insert(Aabb2::new([3.0, 0.0], [4.0, 1.0]), Kind::Static)?;
    /// let b = world.insert(Aabb2::new([0.0, 4.0], [1.0, 5.0]), Kind::Dynamic)?;
    /// let mut out = Vec::new();
    /// world.nearest([0.0, 0.0], 2, f32::INFINITY, QueryFilter::new(), &mut out)?;
    /// assert_eq!(out, [(a, 3.0), (b, 4.0)]);
    /// world.nearest([0.0, 0.0], 2, 3.5, QueryFilter::new(), &mut out)?;
    /// assert_eq!(out, [(a, 3.0)]);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    pub fn nearest(
        &self,
        point: [f32; D],
        k: usize,
        max_distance: f32,
        filter: QueryFilter<'_>,
        out: &mut Vec<(Handle, f32)>,
    ) -> Result<(), Error> {
        check_point(&point, 0)?;
        check_max_distance(max_distance, 0)?;
        out.clear();
        self.nearest_into(&point, k, max_distance, &filter, out);
        Ok(())
    }

    /// The nearest query's objects appended to `out`, in order.
    pub(crate) fn nearest_into(
        &self,
        point: &[f32; D],
        k: usize,
        max_distance: f32,
        filter: &QueryFilter<'_>,
        out: &mut Vec<(Handle, f32)>,
    ) {
        if k == 0 {
            return;
        }
        let start = out.len();
        let mut cut = max_distance;
        let _ = self.ordered(filter, &mut cut, k, Near(*point), |s, d, _| {
            out.push((self.handle_of(s), d));
            if out.len() - start == k {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
    }
}
