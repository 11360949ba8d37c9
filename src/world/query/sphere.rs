//! Sphere queries: the objects whose boxes a ball meets.
//!
//! - Input: a centre, a radius (finite, not negative), a [`QueryFilter`]. Output: the
//!   handles of the objects whose boxes lie within the radius of the centre (closed:
//!   touching counts), in the trees' order (sorted by handle where the filter asks), as
//!   the region query returns them.
//! - The test: [`crate::bvh::distance`] from the centre to the box at most the radius,
//!   the distance the nearest query sorts by, so a sphere query keeps exactly the objects
//!   a nearest query of unbounded `k` with that `max_distance` returns.
//! - How: the region walk with the ball's bounding box, grown by a relative 2^-20 of the
//!   radius and rounded outward ([`bounds`]), then the distance test on each box it finds.
//!   The growth covers the rounding of the distance (`f64` terms, one `f32` rounding), so
//!   no box the test keeps lies outside the region. With a plain filter and no margin,
//!   a static object is tested on its leaf's box (the same box, already read by the
//!   walk) rather than read again from the store. PERF: benches/queries.rs (`spheres`).
//! - Cost: O(log n + k) for the k boxes the bounding box meets (a ball keeps about half
//!   of them in 3D, more in 2D), plus a test of each changed object, and the sort.
//!   Threads: none. Allocation: none beyond the output (and the sort's scratch, as for
//!   regions).
//! - Source: J. Arvo, "A simple method for box-sphere intersection testing" (Graphics
//!   Gems, 1990): the squared distance to the box, axis by axis.

use super::{check_point, sort_by_index, QueryFilter};
use crate::bvh::distance;
use crate::world::search::Hits;
use crate::world::{Handle, World};
use crate::{Aabb, Error};
use std::ops::ControlFlow;

/// A ball, as the batched sphere queries take it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere<const D: usize> {
    /// Its centre: finite.
    pub center: [f32; D],
    /// Its radius: finite, at least 0.
    pub radius: f32,
}

impl<const D: usize> Sphere<D> {
    /// The ball around `center` of `radius` (checked where it is queried).
    pub const fn new(center: [f32; D], radius: f32) -> Self {
        Self { center, radius }
    }

    /// Checks the ball; `index` names it in the error.
    pub(crate) fn check(&self, index: usize) -> Result<(), Error> {
        check_point(&self.center, index)?;
        if !self.radius.is_finite() || self.radius < 0.0 {
            return Err(Error::InvalidQuery { index, reason: "radius is not finite or is negative" });
        }
        Ok(())
    }
}

/// The largest `f32` at most `x` (a finite `f64`), at least `-f32::MAX`.
fn down(x: f64) -> f32 {
    let y = (x as f32).max(-f32::MAX);
    if (y as f64) <= x || y == -f32::MAX {
        y
    } else if y > 0.0 {
        f32::from_bits(y.to_bits() - 1)
    } else if y == 0.0 {
        -f32::from_bits(1)
    } else {
        f32::from_bits(y.to_bits() + 1)
    }
}

/// The region holding every box within `radius` of `center` by [`distance`]: the ball's
/// bounding box grown by 2^-20 of the radius (more than the distance's rounding loses:
/// a relative 2^-24 for the `f32` result, a few 2^-53 for the `f64` terms), its bounds
/// rounded outward to `f32` and kept within `±f32::MAX` (every box is finite).
fn bounds<const D: usize>(center: &[f32; D], radius: f32) -> Aabb<D> {
    let r = radius as f64 * (1.0 + 2f64.powi(-20));
    Aabb {
        min: std::array::from_fn(|k| down(center[k] as f64 - r)),
        max: std::array::from_fn(|k| -down(-(center[k] as f64 + r))),
    }
}

impl<const D: usize> World<D> {
    /// Every object the filter takes whose box the ball of `radius` around `center` meets
    /// (closed: a box the sphere touches counts), into `out` (cleared first), sorted by
    /// handle.
    ///
    /// The test: the Euclidean distance from the centre to the box, as [`World::nearest`]
    /// computes it (in `f64`, rounded to `f32` once), at most `radius`; so this is every
    /// object that `nearest` with `max_distance = radius` and unbounded `k` returns. Sees
    /// every call made so far, as [`World::query_aabb`]. Cost: that of the region query
    /// of the ball's bounding box, plus a distance test of each box it meets.
    ///
    /// ```
    /// use broadphase::{Aabb2, Config, Kind, QueryFilter, World2};
    /// let mut world = World2::new(Config::default())?;
    /// let a = world.insert(Aabb2::new([3.0, 4.0], [5.0, 5.0]), Kind::Static)?;
    /// let corner = world.insert(Aabb2::new([3.6, 3.6], [5.0, 5.0]), Kind::Static)?;
    /// let mut out = Vec::new();
    /// // `a` touches the ball at (3, 4); `corner`'s nearest point is 5.09 away.
    /// world.query_sphere([0.0, 0.0], 5.0, QueryFilter::new(), &mut out)?;
    /// assert_eq!(out, [a]);
    /// # let _ = corner;
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    pub fn query_sphere(
        &self,
        center: [f32; D],
        radius: f32,
        filter: QueryFilter<'_>,
        out: &mut Vec<Handle>,
    ) -> Result<(), Error> {
        let ball = Sphere::new(center, radius);
        ball.check(0)?;
        out.clear();
        self.sphere_into(&ball, &filter, out);
        Ok(())
    }

    /// The sphere query's objects appended to `out`, in the trees' order (sorted by
    /// handle where the filter asks).
    pub(crate) fn sphere_into(&self, ball: &Sphere<D>, filter: &QueryFilter<'_>, out: &mut Vec<Handle>) {
        let start = out.len();
        let region = bounds(&ball.center, ball.radius);
        let within = |b: &Aabb<D>| distance(&ball.center, b) <= ball.radius;
        if filter.plain() {
            // Every object the trees find is taken: the test reads a static leaf's box
            // where it is the object's.
            let boxes = &self.store.boxes;
            let mut hits = Inside { within: &within, boxes, out: &mut *out };
            let _ = self.scratch.search.region_hits(&region, &self.sight(filter), &mut hits);
            let _ = self.each_changed_in(&region, filter, |h| hits.hit(h.index(), h.generation()));
        } else {
            // The filter's predicate runs before the distance test here: the region walk
            // applies the filter to each box the bounding box meets.
            let _ = self.each_in(&region, filter, |h| {
                if within(&self.store.boxes[h.index() as usize]) {
                    out.push(h);
                }
                ControlFlow::Continue(())
            });
        }
        if filter.is_sorted() {
            sort_by_index(&mut out[start..]);
        }
    }
}

/// A sphere query's output as [`Hits`] of a plain filter: each found object whose box
/// (the leaf's where it is the object's, else the store's) is `within` the ball, pushed.
struct Inside<'a, const D: usize, W> {
    within: &'a W,
    boxes: &'a [Aabb<D>],
    out: &'a mut Vec<Handle>,
}

impl<const D: usize, W: Fn(&Aabb<D>) -> bool> Hits<D> for Inside<'_, D, W> {
    #[inline(always)]
    fn hit(&mut self, s: u32, g: u32) -> ControlFlow<()> {
        self.hit_boxed(s, g, &self.boxes[s as usize])
    }

    #[inline(always)]
    fn hit_boxed(&mut self, s: u32, g: u32, b: &Aabb<D>) -> ControlFlow<()> {
        if (self.within)(b) {
            self.out.push(Handle::new(s, g));
        }
        ControlFlow::Continue(())
    }

    #[inline(always)]
    fn run_boxed(&mut self, names: &[[u32; 2]], boxes: &[Aabb<D>]) -> ControlFlow<()> {
        for (&[s, g], b) in names.iter().zip(boxes) {
            self.hit_boxed(s, g, b)?;
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::{bounds, distance, down};
    use crate::internals::scene::Rng;
    use crate::Aabb;

    /// The next `f32` up or down (zero steps to the least subnormal either way).
    fn step(x: f32, up: bool) -> f32 {
        if x == 0.0 {
            return if up { f32::from_bits(1) } else { -f32::from_bits(1) };
        }
        let b = x.to_bits();
        f32::from_bits(if (x > 0.0) == up { b + 1 } else { b - 1 })
    }

    /// `down` gives the largest `f32` at most its input (within `±f32::MAX`).
    #[test]
    fn down_rounds_to_the_largest_float_below() {
        for x in [0.0f64, 1.0, -1.0, 0.1, -0.1, 1e-45, -1e-45, 1e-46, -1e-46, 3.4e38, -3.5e38, 1e300, -1e300]
        {
            let y = down(x);
            assert!(y as f64 <= x || y == -f32::MAX, "{x}: {y} is above it");
            let next = step(y, true);
            assert!(y == f32::MAX || y == -f32::MAX || next as f64 > x, "{x}: {y} is not the largest");
        }
    }

    /// The region of [`bounds`] holds every box the distance test keeps: a point one ulp
    /// outside it on any axis is farther than the radius, for centres and radii at scales
    /// from 1e-30 to 1e38.
    #[test]
    fn the_region_holds_every_box_within_the_radius() {
        let mut r = Rng::new(9);
        for i in 0..200_000 {
            let scale = 10f32.powi(r.below(69) as i32 - 30);
            let c: [f32; 3] = std::array::from_fn(|_| r.range(-1.0, 1.0) * scale);
            let radius = r.range(0.0, 2.0) * 10f32.powi(r.below(69) as i32 - 30);
            let region = bounds(&c, radius);
            let k = i % 3;
            let mut p = c;
            p[k] = if i % 2 == 0 { step(region.max[k], true) } else { step(region.min[k], false) };
            if !p[k].is_finite() {
                continue;
            }
            let b = Aabb { min: p, max: p };
            assert!(distance(&c, &b) > radius, "{c:?} r {radius}: {p:?} outside {region:?} is within reach");
        }
    }
}
