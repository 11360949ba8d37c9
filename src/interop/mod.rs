//! Boxes from other number types and vector crates: `f64` input rounded outward
//! (always), and conversions for `glam` and `mint` (features of those names).
//!
//! - Input: corners as `f64` arrays, or as vectors of glam or mint. Output: [`Aabb`]s
//!   (and, for f32 vectors, the corners back).
//! - The `f64` rule: a lower bound rounds down and an upper bound up to the nearest `f32`
//!   (exact where the value is an `f32`), so a box never shrinks and two `f64` boxes that
//!   overlap or touch give `f32` boxes that do too: a pair is never lost. Boxes that lie
//!   within one `f32` step of each other may gain a pair. Values past `f32`'s range go to
//!   the infinities, and NaN stays NaN, so the calls that take boxes report them.
//! - Cost: O(1) a box; no allocation but the caller's output. Threads: none.
//! - Source: directed rounding as interval arithmetic does it (IEEE 754 `nextDown` and
//!   `nextUp` after a round to nearest).
//!
//! [`Aabb`]: crate::Aabb

mod double;

pub(crate) use double::{round_down, round_up};
#[cfg(feature = "glam")]
mod glam;
#[cfg(feature = "glam")]
pub use glam::{as_points2, as_points3};
#[cfg(feature = "mint")]
mod mint;
