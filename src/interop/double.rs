//! `f64` corners into `f32` boxes, rounded outward (the `f64` rule of `interop`).

use crate::Aabb;

/// The greatest `f32` at or below `x` (NaN stays NaN; below `f32::MIN`, minus infinity).
#[inline]
pub(crate) fn round_down(x: f64) -> f32 {
    let f = x as f32;
    if f as f64 > x {
        f.next_down()
    } else {
        f
    }
}

/// The least `f32` at or above `x` (NaN stays NaN; above `f32::MAX`, infinity).
#[inline]
pub(crate) fn round_up(x: f64) -> f32 {
    let f = x as f32;
    if (f as f64) < x {
        f.next_up()
    } else {
        f
    }
}

impl<const D: usize> Aabb<D> {
    /// The smallest `f32` box holding the `f64` box `[min, max]`: each lower bound rounded
    /// down, each upper bound up, so that two overlapping (or touching) `f64` boxes always
    /// give overlapping `f32` boxes. Boxes within one `f32` step of each other may
    /// overlap after rounding (an extra pair, never a lost one). Not checked, like
    /// [`Aabb::new`]: NaN stays NaN and values past `f32`'s range become infinite, which
    /// the calls that take boxes report.
    ///
    /// ```
    /// use broadphase::{find_pairs, Aabb2};
    /// // Two parcels that touch at x = 0.1 (not an f32).
    /// let a = Aabb2::from_f64([0.0, 0.0], [0.1, 1.0]);
    /// let b = Aabb2::from_f64([0.1, 0.0], [0.2, 1.0]);
    /// assert!(a.max[0] as f64 >= 0.1 && b.min[0] as f64 <= 0.1);
    /// assert_eq!(find_pairs(&[a, b])?, vec![[0, 1]]);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    pub fn from_f64(min: [f64; D], max: [f64; D]) -> Self {
        Aabb { min: min.map(round_down), max: max.map(round_up) }
    }

    /// [`Aabb::from_f64`] for a slice of `(min, max)` corners, appended to `out` in order.
    ///
    /// ```
    /// use broadphase::Aabb2;
    /// let mut boxes = Vec::new();
    /// Aabb2::extend_from_f64(&[([0.0, 0.0], [1.0, 1.0]), ([2.5, 2.5], [3.0, 3.1])], &mut boxes);
    /// assert_eq!(boxes.len(), 2);
    /// assert!(boxes[1].max[1] as f64 >= 3.1);
    /// ```
    pub fn extend_from_f64(corners: &[([f64; D], [f64; D])], out: &mut Vec<Aabb<D>>) {
        out.extend(corners.iter().map(|&(min, max)| Aabb::from_f64(min, max)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_outward_and_keeps_exact_values() {
        for x in [0.1f64, -0.1, 1e-40, -1e-40, 3.0, 1e30, -1e30, 0.0, 16777217.0] {
            let (d, u) = (round_down(x), round_up(x));
            assert!(d as f64 <= x && u as f64 >= x, "{x}: {d} {u}");
            assert!(d == u || d.next_up() == u, "{x}: {d} and {u} are not neighbours");
        }
        assert_eq!((round_down(0.5), round_up(0.5)), (0.5, 0.5));
        assert_eq!(round_down(1e300), f32::MAX);
        assert_eq!(round_up(1e300), f32::INFINITY);
        assert_eq!(round_up(-1e300), f32::MIN);
        assert_eq!(round_down(-1e300), f32::NEG_INFINITY);
        assert!(round_down(f64::NAN).is_nan() && round_up(f64::NAN).is_nan());
        assert_eq!(round_down(f64::INFINITY), f32::INFINITY);
    }
}
