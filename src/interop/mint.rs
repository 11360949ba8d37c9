//! Conversions between boxes and pairs of mint points or vectors (feature `mint`), the
//! interchange types nalgebra, cgmath, glam and others convert to: `f32` both ways, `f64`
//! into boxes by the `f64` rule (rounded outward).

use crate::{Aabb, Aabb2, Aabb3};
use mint::{Point2, Point3, Vector2, Vector3};

/// `From` both ways between a box and a pair of an `f32` mint type of `$n` components, and
/// from a pair of its `f64` form by the `f64` rule.
macro_rules! corners {
    ($ty:ident, $aabb:ident, $n:literal) => {
        impl From<($ty<f32>, $ty<f32>)> for $aabb {
            /// The box with corners `min` and `max` (not checked, like [`Aabb::new`]).
            fn from((min, max): ($ty<f32>, $ty<f32>)) -> Self {
                Aabb::new(<[f32; $n]>::from(min), <[f32; $n]>::from(max))
            }
        }

        impl From<$aabb> for ($ty<f32>, $ty<f32>) {
            fn from(b: $aabb) -> Self {
                ($ty::from(b.min), $ty::from(b.max))
            }
        }

        impl From<($ty<f64>, $ty<f64>)> for $aabb {
            /// [`Aabb::from_f64`]: rounded outward, so no overlap is lost.
            fn from((min, max): ($ty<f64>, $ty<f64>)) -> Self {
                Aabb::from_f64(<[f64; $n]>::from(min), <[f64; $n]>::from(max))
            }
        }
    };
}

corners!(Point2, Aabb2, 2);
corners!(Vector2, Aabb2, 2);
corners!(Point3, Aabb3, 3);
corners!(Vector3, Aabb3, 3);
