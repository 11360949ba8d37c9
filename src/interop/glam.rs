//! Conversions between boxes and pairs of glam vectors (feature `glam`): `Vec2`, `Vec3`
//! and `Vec3A` both ways; `DVec2` and `DVec3` into boxes by the `f64` rule (rounded
//! outward). Points for the queries come from glam's own `Into<[f32; D]>`, and slices of
//! them for the batches by [`as_points2`] and [`as_points3`], without a copy.

use crate::{Aabb, Aabb2, Aabb3};
use glam::{DVec2, DVec3, Vec2, Vec3, Vec3A};

impl From<(Vec2, Vec2)> for Aabb2 {
    /// The box with corners `min` and `max` (not checked, like [`Aabb::new`]).
    fn from((min, max): (Vec2, Vec2)) -> Self {
        Aabb::new(min.to_array(), max.to_array())
    }
}

impl From<Aabb2> for (Vec2, Vec2) {
    fn from(b: Aabb2) -> Self {
        (Vec2::from_array(b.min), Vec2::from_array(b.max))
    }
}

impl From<(Vec3, Vec3)> for Aabb3 {
    /// The box with corners `min` and `max` (not checked, like [`Aabb::new`]).
    fn from((min, max): (Vec3, Vec3)) -> Self {
        Aabb::new(min.to_array(), max.to_array())
    }
}

impl From<Aabb3> for (Vec3, Vec3) {
    fn from(b: Aabb3) -> Self {
        (Vec3::from_array(b.min), Vec3::from_array(b.max))
    }
}

impl From<(Vec3A, Vec3A)> for Aabb3 {
    /// The box with corners `min` and `max` (not checked, like [`Aabb::new`]).
    fn from((min, max): (Vec3A, Vec3A)) -> Self {
        Aabb::new(min.to_array(), max.to_array())
    }
}

impl From<Aabb3> for (Vec3A, Vec3A) {
    fn from(b: Aabb3) -> Self {
        (Vec3A::from_array(b.min), Vec3A::from_array(b.max))
    }
}

impl From<(DVec2, DVec2)> for Aabb2 {
    /// [`Aabb::from_f64`]: rounded outward, so no overlap is lost.
    fn from((min, max): (DVec2, DVec2)) -> Self {
        Aabb::from_f64(min.to_array(), max.to_array())
    }
}

impl From<(DVec3, DVec3)> for Aabb3 {
    /// [`Aabb::from_f64`]: rounded outward, so no overlap is lost.
    fn from((min, max): (DVec3, DVec3)) -> Self {
        Aabb::from_f64(min.to_array(), max.to_array())
    }
}

/// A slice of `Vec2` as the points the batch queries take ([`World::query_points`],
/// [`World::nearest_to_points`]), without a copy: a `Vec2` is two `f32`s, as
/// `[f32; 2]` (glam's `bytemuck` casts).
///
/// [`World::query_points`]: crate::World::query_points
/// [`World::nearest_to_points`]: crate::World::nearest_to_points
pub fn as_points2(points: &[Vec2]) -> &[[f32; 2]] {
    bytemuck::cast_slice(points)
}

/// A slice of `Vec3` as the points the batch queries take, without a copy: a `Vec3` is
/// three `f32`s, as `[f32; 3]` (`Vec3A`, padded to 16 bytes, is not: map it with
/// `to_array`).
pub fn as_points3(points: &[Vec3]) -> &[[f32; 3]] {
    bytemuck::cast_slice(points)
}
