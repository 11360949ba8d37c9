//! The axis-aligned box type users hand us, and its exact closed overlap test.
//!
//! `Aabb<D>` is `#[repr(C)]` and `Pod`, so a user's `&[f32]` or vertex-buffer slice of
//! `[min; D][max; D]` records can be viewed as `&[Aabb<D>]` with `bytemuck::cast_slice`
//! without a copy.

use bytemuck::{Pod, Zeroable};

/// An axis-aligned box in `D` dimensions. Boxes are closed: boxes that merely touch overlap.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb<const D: usize> {
    /// Lower corner; `min[k] <= max[k]` on every axis for a valid box.
    pub min: [f32; D],
    /// Upper corner.
    pub max: [f32; D],
}

// SAFETY: `Aabb<D>` is `repr(C)` and made only of `f32` arrays: no padding, every bit
// pattern is a valid value (invalid *boxes* are rejected by validation, not by the type).
unsafe impl<const D: usize> Zeroable for Aabb<D> {}
// SAFETY: see above; `Copy + 'static`, no padding, no interior references.
unsafe impl<const D: usize> Pod for Aabb<D> {}

/// A box in the plane.
pub type Aabb2 = Aabb<2>;
/// A box in space.
pub type Aabb3 = Aabb<3>;

const _: () = assert!(std::mem::size_of::<Aabb3>() == 24);
const _: () = assert!(std::mem::size_of::<Aabb2>() == 16);

impl<const D: usize> Aabb<D> {
    /// A box from its two corners (not checked; the pipeline validates at its boundary).
    pub const fn new(min: [f32; D], max: [f32; D]) -> Self {
        Self { min, max }
    }

    /// Closed overlap: `a.min <= b.max && b.min <= a.max` on every axis.
    #[inline]
    pub fn overlaps(&self, other: &Self) -> bool {
        let mut ok = true;
        for k in 0..D {
            ok &= self.min[k] <= other.max[k] && other.min[k] <= self.max[k];
        }
        ok
    }

    /// This box grown by `margin` on every side (shrunk when `margin` is negative).
    #[inline]
    pub fn grown(&self, margin: f32) -> Self {
        let mut b = *self;
        for k in 0..D {
            b.min[k] -= margin;
            b.max[k] += margin;
        }
        b
    }

    /// The box's centre along axis `k` (halves first: the sum of two f32 extremes
    /// overflows).
    #[inline(always)]
    pub(crate) fn centre_on(&self, k: usize) -> f32 {
        self.min[k] * 0.5 + self.max[k] * 0.5
    }

    /// True when `other` lies wholly inside this box (closed: faces may touch).
    #[inline]
    pub(crate) fn contains(&self, other: &Self) -> bool {
        (0..D).all(|k| self.min[k] <= other.min[k] && other.max[k] <= self.max[k])
    }

    /// The smallest box holding this one and `other`.
    #[inline]
    pub(crate) fn union(&self, other: &Self) -> Self {
        Aabb {
            min: std::array::from_fn(|k| self.min[k].min(other.min[k])),
            max: std::array::from_fn(|k| self.max[k].max(other.max[k])),
        }
    }

    /// True when `min > max` on some axis (a box a negative margin turned inside out).
    #[inline]
    pub fn is_inverted(&self) -> bool {
        (0..D).any(|k| self.min[k] > self.max[k])
    }

    /// True when every coordinate is finite and `min <= max` on every axis.
    pub fn is_valid(&self) -> bool {
        crate::validate::check_box(self).is_ok()
    }
}
