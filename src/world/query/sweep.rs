//! Swept boxes: a box moving along a direction, and the objects its motion meets (the
//! first, all of them in order, or each to a callback), the casts of `ray` for a box.
//!
//! - Input: a [`Sweep`] (a valid box, a finite non-zero direction, a length), a
//!   [`QueryFilter`]. Output: as a ray's: `(handle, t)` hits, `t` where the moving box
//!   first touches the object's box (0 where they overlap at the start), or [`CastHit`]s
//!   with the normal of the face touched.
//! - The test (`bvh::sweep`): the slab test against each box grown by the swept box's
//!   extents (their Minkowski sum), written with both boxes' bounds; the walks prune by
//!   the trees' bounds in the same way, so a sweep costs about what a ray costs.
//! - Cost, threads, allocation: those of the ray casts (`ray`).
//! - Source: the slab test (T. L. Kay and J. T. Kajiya, "Ray tracing complex scenes",
//!   SIGGRAPH 1986) on the Minkowski sum; Box2D v3's `b2World_CastShape` and parry's
//!   shape casts for the forms.

use super::ray::check_motion;
use super::{CastAction, CastHit, QueryFilter};
use crate::bvh::SweepTest;
use crate::world::{Handle, World};
use crate::{Aabb, Error};
use std::ops::ControlFlow;

/// A box moved by `t * dir` for `0 <= t <= max_t`, as the batched casts take it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sweep<const D: usize> {
    /// The box at `t = 0`: finite, `min <= max`.
    pub aabb: Aabb<D>,
    /// Its direction: finite, not zero (need not be of unit length).
    pub dir: [f32; D],
    /// How far it goes, in units of `dir`: at least 0, not NaN (may be infinite).
    pub max_t: f32,
}

impl<const D: usize> Sweep<D> {
    /// The box `aabb` swept along `dir` up to `max_t` (checked where it is cast).
    pub const fn new(aabb: Aabb<D>, dir: [f32; D], max_t: f32) -> Self {
        Self { aabb, dir, max_t }
    }

    /// Checks the sweep: the box first ([`Error::InvalidBox`]), then the motion
    /// ([`Error::InvalidQuery`]); `index` names it in the error.
    pub(crate) fn check(&self, index: usize) -> Result<SweepTest<D>, Error> {
        crate::world::check(&self.aabb, index)?;
        check_motion(&self.dir, self.max_t, index)?;
        Ok(self.prepared())
    }

    /// The sweep prepared for slab tests, for a sweep already checked.
    pub(crate) fn prepared(&self) -> SweepTest<D> {
        SweepTest::new(self.aabb, self.dir, self.max_t)
    }
}

impl<const D: usize> World<D> {
    /// The first object the filter takes that the box `aabb`, moved by `t * dir` for
    /// `0 <= t <= max_t`, touches, with that `t` (0 for an object it overlaps at the
    /// start; closed boxes, so sliding along a face touches). Ties go to the lower handle.
    ///
    /// The test: per axis, the moving box meets a box `B` for `t` between
    /// `(B.min - aabb.max) * (1 / dir)` and `(B.max - aabb.min) * (1 / dir)`, rounded as
    /// `f32` (the slab test against `B` grown by the moving box's extents); on an axis
    /// where `dir` is 0 (or its reciprocal overflows) the two must overlap. Sees every
    /// call made so far, as [`World::query_aabb`]. Cost: that of [`World::cast_ray`].
    ///
    /// ```
    /// use broadphase::{Aabb2, Config, Kind, QueryFilter, World2};
    /// let mut world = World2::new(Config::default())?;
    /// let wall = world.insert(Aabb2::new([5.0, 0.0], [6.0, 10.0]), Kind::Static)?;
    /// let crate_ = Aabb2::new([0.0, 1.0], [2.0, 3.0]);
    /// assert_eq!(world.cast_aabb(crate_, [1.0, 0.0], 10.0, QueryFilter::new())?, Some((wall, 3.0)));
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    pub fn cast_aabb(
        &self,
        aabb: Aabb<D>,
        dir: [f32; D],
        max_t: f32,
        filter: QueryFilter<'_>,
    ) -> Result<Option<(Handle, f32)>, Error> {
        let sweep = Sweep::new(aabb, dir, max_t).check(0)?;
        Ok(self.closest(&sweep, &filter))
    }

    /// Every object [`World::cast_aabb`] considers, or the first `max_hits`, into `out`
    /// (cleared first), sorted by `(t, handle)`; costs as [`World::cast_ray_all`].
    #[allow(clippy::too_many_arguments)]
    pub fn cast_aabb_all(
        &self,
        aabb: Aabb<D>,
        dir: [f32; D],
        max_t: f32,
        max_hits: usize,
        filter: QueryFilter<'_>,
        out: &mut Vec<(Handle, f32)>,
    ) -> Result<(), Error> {
        let sweep = Sweep::new(aabb, dir, max_t).check(0)?;
        out.clear();
        self.hits_into(&sweep, max_hits, &filter, out);
        Ok(())
    }

    /// Each hit of [`World::cast_aabb_all`] to `visit` in order of `(t, handle)`, with the
    /// normal of the face touched, as [`World::cast_ray_with`] (clip, ignore or stop);
    /// returns `Break` where `visit` stopped the cast.
    pub fn cast_aabb_with(
        &self,
        aabb: Aabb<D>,
        dir: [f32; D],
        max_t: f32,
        filter: QueryFilter<'_>,
        visit: impl FnMut(CastHit<D>) -> CastAction,
    ) -> Result<ControlFlow<()>, Error> {
        let sweep = Sweep::new(aabb, dir, max_t).check(0)?;
        Ok(self.cast_with(&sweep, &filter, visit))
    }
}
