//! [`World::shift_origin`]: every box moved by the same offset, for large worlds whose
//! coordinates drift far from the origin (Box2D v3's `b2World_ShiftOrigin`, Unreal's
//! origin rebasing): `f32` keeps about seven digits, so a world kept near the origin keeps
//! its precision.
//!
//! - Input: the offset. Output: every live box moved by minus it, each bound computed in
//!   `f64` and rounded outward (`interop`'s `f64` rule), so every pair stays (a pair may
//!   be added where boxes come within an `f32` step); every handle stays valid.
//! - Cost: O(n), every object changed: the next update finds its frame whole.
//! - Threads: none. Allocation: the change list and the snapshots of the last update's
//!   states, as for any move.
//! - Errors: an offset that is not finite, or that takes a box past `f32`'s range, is
//!   [`Error::InvalidQuery`], and nothing changes.
//! - Source: Box2D v3 (`b2World_ShiftOrigin`).

use super::World;
use crate::interop::{round_down, round_up};
use crate::{Aabb, Error};

impl<const D: usize> World<D> {
    /// Moves every object's box by `-delta` (the point `delta` becomes the new origin),
    /// each bound computed in `f64` and rounded outward, so that no pair is lost and
    /// every handle stays valid. Like any move, the pairs follow at the next
    /// [`World::update`] (which then finds its frame whole: every object changed), and
    /// queries see the new boxes at once.
    ///
    /// Errors: [`Error::InvalidQuery`] where `delta` is not finite or a moved box would
    /// leave `f32`'s range; then nothing changes.
    ///
    /// ```
    /// use broadphase::{Aabb2, Config, Kind, World2};
    /// let mut world = World2::new(Config::default())?;
    /// let a = world.insert(Aabb2::new([1e6, 1e6], [1e6 + 1.0, 1e6 + 1.0]), Kind::Static)?;
    /// let b = world.insert(Aabb2::new([1e6 + 1.0, 1e6], [1e6 + 2.0, 1e6 + 1.0]), Kind::Dynamic)?;
    /// world.update()?;
    /// world.shift_origin([1e6, 1e6])?;
    /// assert_eq!(world.aabb(a)?, Aabb2::new([0.0, 0.0], [1.0, 1.0]));
    /// world.update()?;
    /// assert_eq!(world.pairs(), &[[a, b]]);
    /// assert!(world.events().is_empty());
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    pub fn shift_origin(&mut self, delta: [f32; D]) -> Result<(), Error> {
        if !delta.iter().all(|d| d.is_finite()) {
            return Err(Error::InvalidQuery { index: 0, reason: "origin shift is not finite" });
        }
        let moved = |b: &Aabb<D>| Aabb {
            min: std::array::from_fn(|k| round_down(b.min[k] as f64 - delta[k] as f64)),
            max: std::array::from_fn(|k| round_up(b.max[k] as f64 - delta[k] as f64)),
        };
        let live = |s: usize| self.slots.alive[s];
        let finite = (0..self.slots.len()).filter(|&s| live(s)).all(|s| {
            let b = moved(&self.store.boxes[s]);
            b.min.iter().chain(&b.max).all(|x| x.is_finite())
        });
        if !finite {
            return Err(Error::InvalidQuery {
                index: 0,
                reason: "origin shift takes a box past f32's range",
            });
        }
        for s in 0..self.slots.len() {
            if self.slots.alive[s] {
                let b = moved(&self.store.boxes[s]);
                self.move_to(s, b);
            }
        }
        Ok(())
    }
}
