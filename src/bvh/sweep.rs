//! Swept boxes: a box moving along a direction, tested against boxes by slabs, for the
//! same walks as rays (`ray`, `wide`, `best`).
//!
//! - Input: the moving box `A`, its direction `d` (finite, not zero) and length `max_t`.
//!   Output: where `A + t * d` first meets a closed box `B`, `0 <= t <= max_t` (0 where
//!   they already overlap).
//! - Per axis `k` the two overlap while `A.min + t d <= B.max` and `B.min <= A.max + t d`:
//!   the slab of `t` between `(B.min - A.max) / d` and `(B.max - A.min) / d`. That is the
//!   ray from `A`'s centre against `B` grown by `A`'s half extents (its Minkowski sum
//!   with `-A`), written with the bounds themselves so that no centre or half extent is
//!   rounded. On an axis the box moves parallel to, the two must overlap there.
//! - Cost: that of a ray test, per box. Allocation: none.
//! - Source: the slab test (T. L. Kay and J. T. Kajiya, "Ray tracing complex scenes",
//!   SIGGRAPH 1986) on the Minkowski sum of the two boxes, as in G. van den Bergen,
//!   "Collision Detection in Interactive 3D Environments" (2004), on swept AABBs.

use super::ray::{face, reciprocal, Slab};
use crate::Aabb;

/// A swept box prepared for slab tests: the box, the reciprocal of its direction (0 on an
/// axis it moves parallel to, as for [`RayTest`](super::RayTest)), and its length.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SweepTest<const D: usize> {
    aabb: Aabb<D>,
    inv: [f32; D],
    max_t: f32,
}

impl<const D: usize> SweepTest<D> {
    /// The box `aabb` moved by `t * dir`, `0 <= t <= max_t` (inputs checked by the
    /// caller: a valid box, a finite direction, `max_t >= 0`, not NaN).
    pub(crate) fn new(aabb: Aabb<D>, dir: [f32; D], max_t: f32) -> Self {
        Self { aabb, inv: reciprocal(&dir), max_t }
    }
}

impl<const D: usize> Slab<D> for SweepTest<D> {
    #[inline(always)]
    fn max_t(&self) -> f32 {
        self.max_t
    }

    /// As the ray's test, with `B.min - A.max` and `B.max - A.min` for the two bounds'
    /// offsets; `lo + 0.0` keeps `-0.0` out.
    #[inline(always)]
    fn enters(&self, min: &[f32; D], max: &[f32; D], cut: f32) -> Option<f32> {
        let (mut lo, mut hi) = (0.0f32, cut);
        for k in 0..D {
            if self.inv[k] == 0.0 {
                if self.aabb.max[k] < min[k] || self.aabb.min[k] > max[k] {
                    return None;
                }
            } else {
                let a = (min[k] - self.aabb.max[k]) * self.inv[k];
                let b = (max[k] - self.aabb.min[k]) * self.inv[k];
                lo = lo.max(a.min(b));
                hi = hi.min(a.max(b));
            }
        }
        (lo <= hi).then_some(lo + 0.0)
    }

    #[inline(always)]
    fn enters_four(&self, min: &[[f32; 4]; D], max: &[[f32; 4]; D], cut: f32) -> [Option<f32>; 4] {
        let (mut lo, mut hi) = ([0.0f32; 4], [cut; 4]);
        let mut inside = [true; 4];
        for k in 0..D {
            if self.inv[k] == 0.0 {
                for c in 0..4 {
                    inside[c] &= (self.aabb.max[k] >= min[k][c]) & (self.aabb.min[k] <= max[k][c]);
                }
            } else {
                for c in 0..4 {
                    let a = (min[k][c] - self.aabb.max[k]) * self.inv[k];
                    let b = (max[k][c] - self.aabb.min[k]) * self.inv[k];
                    lo[c] = lo[c].max(a.min(b));
                    hi[c] = hi[c].min(a.max(b));
                }
            }
        }
        std::array::from_fn(|c| (inside[c] && lo[c] <= hi[c]).then_some(lo[c] + 0.0))
    }

    fn normal(&self, b: &Aabb<D>, t: f32) -> [f32; D] {
        face(&self.inv, t, |k| {
            let a = (b.min[k] - self.aabb.max[k]) * self.inv[k];
            let c = (b.max[k] - self.aabb.min[k]) * self.inv[k];
            a.min(c)
        })
    }
}
