//! Ray casts, and the three forms every cast takes (a ray here, a swept box in `sweep`):
//! the closest hit, every hit in order (or the first `max_hits`), and each hit in order to
//! a callback that may clip the cast, ignore the hit or stop.
//!
//! - Input: a [`Ray`] (or a swept box), a [`QueryFilter`]. Output: `(handle, t)` hits, `t`
//!   the entry in units of the direction, never `-0.0`; or [`CastHit`]s with the entry
//!   face's normal.
//! - The closest hit: a depth-first walk, nearer subtrees first, whose cutoff drops to
//!   each closer hit (ties to the lower handle): the fast path, unchanged by the rest.
//!   Every hit: the same walk without the cutoff, then a sort by `(t, handle)`. The first
//!   `max_hits` and the callback: the best-first walk (`bvh::best`), which hands the hits
//!   over in order of `(t, handle)` and stops or shortens as it goes.
//! - Cost: O(log n) a closest hit (about), O(log n + k) for k hits, O((m + k) log m)
//!   an ordered walk of m queued subtrees; plus one test of each changed object.
//! - Threads: none. Allocation: the ordered walk's queue (one a thread, kept).
//! - Source: the slab test (T. L. Kay and J. T. Kajiya, "Ray tracing complex scenes",
//!   SIGGRAPH 1986); the callback's clip after Box2D v3's `b2World_CastRay` (its return
//!   value clips the ray) and parry's `Bvh::cast_ray` (its leaf test returns the exact
//!   hit, which prunes the rest).

use super::QueryFilter;
use crate::bvh::{Enters, RayTest, Slab};
use crate::world::{Handle, World};
use crate::Error;
use std::ops::ControlFlow;

/// A ray `origin + t * dir` for `0 <= t <= max_t` (so `t` is in units of `dir`'s length),
/// as the batched casts take it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray<const D: usize> {
    /// Where the ray starts: finite.
    pub origin: [f32; D],
    /// Its direction: finite, not zero (need not be of unit length).
    pub dir: [f32; D],
    /// How far it goes, in units of `dir`: at least 0, not NaN (may be infinite).
    pub max_t: f32,
}

impl<const D: usize> Ray<D> {
    /// The ray from `origin` along `dir` up to `max_t` (checked where it is cast).
    pub const fn new(origin: [f32; D], dir: [f32; D], max_t: f32) -> Self {
        Self { origin, dir, max_t }
    }

    /// Checks the ray; `index` names it in the error.
    pub(crate) fn check(&self, index: usize) -> Result<RayTest<D>, Error> {
        if !self.origin.iter().all(|x| x.is_finite()) {
            return Err(Error::InvalidQuery { index, reason: "ray origin is not finite" });
        }
        check_motion(&self.dir, self.max_t, index)?;
        Ok(self.prepared())
    }

    /// The ray prepared for slab tests, for a ray already checked.
    pub(crate) fn prepared(&self) -> RayTest<D> {
        RayTest::new(self.origin, self.dir, self.max_t)
    }
}

/// Checks a cast's direction and length; `index` names the cast in the error.
pub(crate) fn check_motion<const D: usize>(dir: &[f32; D], max_t: f32, index: usize) -> Result<(), Error> {
    let bad = |reason| Err(Error::InvalidQuery { index, reason });
    if !dir.iter().all(|x| x.is_finite()) {
        return bad("direction is not finite");
    }
    if dir.iter().all(|&x| x == 0.0) {
        return bad("direction is zero");
    }
    if max_t.is_nan() || max_t < 0.0 {
        return bad("max_t is NaN or negative");
    }
    Ok(())
}

/// One hit of a cast, as its callback sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CastHit<const D: usize> {
    /// The object hit.
    pub handle: Handle,
    /// Where the cast enters its box, in units of the direction (0 where it starts in
    /// or on the box; never `-0.0`).
    pub t: f32,
    /// The outward normal of the face entered: `±1` on the first axis whose slab the
    /// cast enters at `t` (an edge or a corner takes the lowest such axis), 0 on the
    /// others; the zero vector where the cast starts inside the box on every axis it
    /// moves along (a face it starts on and moves into counts as entered at 0).
    pub normal: [f32; D],
}

/// What a cast does after its callback saw a hit (Box2D's return value of a cast
/// callback, as an enum).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CastAction {
    /// Go on, but no further than `t` (the exact hit a narrow phase found in the box):
    /// hits entered after `t` are not visited, and parts of the world entered after it
    /// are not walked. A NaN, or a `t` past the cast's current length, changes nothing.
    Clip(f32),
    /// Go on as before: the hit is not taken.
    Ignore,
    /// End the cast now.
    Stop,
}

impl<const D: usize> World<D> {
    /// The closest object the filter takes whose box the ray `origin + t * dir`,
    /// `0 <= t <= max_t`, meets, with the `t` where it enters the box (0 for a box the
    /// ray starts in or on; closed boxes, so a ray grazing a face or an edge hits; never
    /// `-0.0`). Ties go to the lower handle. A ray cast from inside the caster finds it at
    /// `t = 0`: leave it out with [`QueryFilter::exclude_handle`].
    ///
    /// The slab test: per axis, `t = (bound - origin) * (1 / dir)`, rounded as `f32`; an
    /// axis whose direction component is 0 (or so small that its reciprocal overflows)
    /// needs the origin within the box's bounds there. Sees every call made so far, as
    /// [`World::query_aabb`]. Cost: about O(log n) (a walk nearer subtrees first, cut at
    /// the closest hit so far), plus a test of each object changed since the last update.
    pub fn cast_ray(
        &self,
        origin: [f32; D],
        dir: [f32; D],
        max_t: f32,
        filter: QueryFilter<'_>,
    ) -> Result<Option<(Handle, f32)>, Error> {
        let ray = Ray::new(origin, dir, max_t).check(0)?;
        Ok(self.closest(&ray, &filter))
    }

    /// Every hit [`World::cast_ray`] considers, or the first `max_hits` of them, into
    /// `out` (cleared first), sorted by `(t, handle)`.
    ///
    /// Cost: with `max_hits` at least the live objects, O(log n + k) for k hits and a sort;
    /// with fewer, a best-first walk that stops at the last hit wanted, O((m + k) log m)
    /// for the m subtrees it queues.
    #[allow(clippy::too_many_arguments)]
    pub fn cast_ray_all(
        &self,
        origin: [f32; D],
        dir: [f32; D],
        max_t: f32,
        max_hits: usize,
        filter: QueryFilter<'_>,
        out: &mut Vec<(Handle, f32)>,
    ) -> Result<(), Error> {
        let ray = Ray::new(origin, dir, max_t).check(0)?;
        out.clear();
        self.hits_into(&ray, max_hits, &filter, out);
        Ok(())
    }

    /// Each hit of [`World::cast_ray_all`] to `visit`, in order of `(t, handle)`, with the
    /// normal of the face entered, until `visit` stops; [`CastAction::Clip`] shortens the
    /// ray (to the exact hit a narrow phase found), which leaves out the hits and the
    /// parts of the world beyond. Returns `Break` where `visit` stopped the cast.
    ///
    /// ```
    /// use broadphase::{Aabb2, CastAction, Config, Kind, QueryFilter, World2};
    /// use std::ops::ControlFlow;
    /// let mut world = World2::new(Config::default())?;
    /// let near = world.insert(Aabb2::new([2.0, 0.0], [4.0, 2.0]), Kind::Static)?;
    /// let far = world.insert(Aabb2::new([6.0, 0.0], [7.0, 2.0]), Kind::Static)?;
    /// // A narrow phase that finds the shape in `near` at t = 3.5: `far` is not visited.
    /// let mut seen = Vec::new();
    /// let flow = world.cast_ray_with([0.0, 1.0], [1.0, 0.0], 100.0, QueryFilter::new(), |hit| {
    ///     seen.push((hit.handle, hit.t, hit.normal));
    ///     CastAction::Clip(3.5)
    /// })?;
    /// assert_eq!(seen, [(near, 2.0, [-1.0, 0.0])]);
    /// assert_eq!(flow, ControlFlow::Continue(()));
    /// # let _ = far;
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    ///
    /// Cost: a best-first walk, O((m + k) log m) for the m subtrees it queues and k hits it
    /// hands over, plus a test of each object changed since the last update.
    pub fn cast_ray_with(
        &self,
        origin: [f32; D],
        dir: [f32; D],
        max_t: f32,
        filter: QueryFilter<'_>,
        visit: impl FnMut(CastHit<D>) -> CastAction,
    ) -> Result<ControlFlow<()>, Error> {
        let ray = Ray::new(origin, dir, max_t).check(0)?;
        Ok(self.cast_with(&ray, &filter, visit))
    }

    /// Each hit at `t <= *cut` to `visit(handle, t, cut)`: the clean objects through the
    /// trees, nearer subtrees first, then the changed ones.
    fn slab_each<S: Slab<D>>(
        &self,
        slab: &S,
        cut: &mut f32,
        filter: &QueryFilter<'_>,
        mut visit: impl FnMut(Handle, f32, &mut f32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let plain = filter.plain();
        self.scratch.search.ray_hits(slab, cut, &self.sight(filter), |s, g, t, cut| {
            if self.takes_found(plain, s, g, filter) {
                visit(Handle::new(s, g), t, cut)
            } else {
                ControlFlow::Continue(())
            }
        })?;
        for &s in self.dirty.list() {
            if !self.slots.alive[s as usize] {
                continue;
            }
            match slab.enters_box(&self.store.boxes[s as usize], *cut) {
                Some(t) if self.takes_changed(s, filter) => visit(self.handle_of(s), t, cut)?,
                _ => {}
            }
        }
        ControlFlow::Continue(())
    }

    /// Each hit in order of `(t, slot)` to `visit(slot, t, cut)`, which may lower `*cut`
    /// or stop: the best-first walk over the trees and the changed objects.
    fn slab_ordered<S: Slab<D>>(
        &self,
        slab: &S,
        filter: &QueryFilter<'_>,
        visit: impl FnMut(u32, f32, &mut f32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let mut cut = slab.max_t();
        self.ordered(filter, &mut cut, 0, Enters(slab), visit)
    }

    /// The closest hit, ties to the lower handle.
    pub(crate) fn closest<S: Slab<D>>(&self, slab: &S, filter: &QueryFilter<'_>) -> Option<(Handle, f32)> {
        let mut best: Option<(Handle, f32)> = None;
        let mut cut = slab.max_t();
        let _ = self.slab_each(slab, &mut cut, filter, |h, t, cut| {
            if best.is_none_or(|(bh, bt)| t < bt || (t == bt && h < bh)) {
                best = Some((h, t));
                *cut = t;
            }
            ControlFlow::Continue(())
        });
        best
    }

    /// Every hit, or the first `max_hits`, appended to `out`, that part sorted by
    /// `(t, handle)`.
    pub(crate) fn hits_into<S: Slab<D>>(
        &self,
        slab: &S,
        max_hits: usize,
        filter: &QueryFilter<'_>,
        out: &mut Vec<(Handle, f32)>,
    ) {
        if max_hits == 0 {
            return;
        }
        let start = out.len();
        if max_hits < self.slots.live {
            let _ = self.slab_ordered(slab, filter, |s, t, _| {
                out.push((self.handle_of(s), t));
                if out.len() - start == max_hits {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            });
            return;
        }
        let mut cut = slab.max_t();
        let _ = self.slab_each(slab, &mut cut, filter, |h, t, _| {
            out.push((h, t));
            ControlFlow::Continue(())
        });
        sort_hits(&mut out[start..]);
    }

    /// Each hit in order to the caller's `visit`, which clips, ignores or stops.
    pub(crate) fn cast_with<S: Slab<D>>(
        &self,
        slab: &S,
        filter: &QueryFilter<'_>,
        mut visit: impl FnMut(CastHit<D>) -> CastAction,
    ) -> ControlFlow<()> {
        self.slab_ordered(slab, filter, |s, t, cut| {
            let normal = slab.normal(&self.store.boxes[s as usize], t);
            match visit(CastHit { handle: self.handle_of(s), t, normal }) {
                CastAction::Clip(to) => {
                    // `min` keeps `*cut` where `to` is NaN.
                    *cut = cut.min(to);
                    ControlFlow::Continue(())
                }
                CastAction::Ignore => ControlFlow::Continue(()),
                CastAction::Stop => ControlFlow::Break(()),
            }
        })
    }
}

/// Sorts hits of distinct live objects by `(t, handle)`. The walk goes down nearer
/// subtrees first, so the hits come nearly sorted: an insertion sort finishes them in
/// about one pass, and hands over to a comparison sort once it has moved more than a few
/// times their number. The key is one integer: no `t` is NaN or -0.0, so its bits order
/// as the numbers do, and distinct live objects have distinct indices. PERF:
/// benches/queries.rs (`rays_all`).
fn sort_hits(v: &mut [(Handle, f32)]) {
    let key = |h: &(Handle, f32)| (h.1.to_bits() as u64) << 32 | h.0.index() as u64;
    let budget = 4 * v.len() + 64;
    let mut moved = 0;
    for i in 1..v.len() {
        let (x, k) = (v[i], key(&v[i]));
        let mut j = i;
        while j > 0 && key(&v[j - 1]) > k {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
        moved += i - j;
        if moved > budget {
            v.sort_unstable_by_key(key);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sort_hits;
    use crate::internals::scene::Rng;
    use crate::world::Handle;

    /// Nearly sorted, shuffled, reversed and tied hits of distinct objects come out as a
    /// plain sort by `(t, handle)` puts them, through both the insertion sort and its
    /// hand-over.
    #[test]
    fn hits_sort_by_t_then_handle() {
        let mut rng = Rng::new(11);
        for n in [0, 1, 2, 7, 64, 300, 2000] {
            let base: Vec<(Handle, f32)> = (0..n)
                .map(|i| (Handle::new(i as u32 * 7919 % 4099, i as u32 % 3), (rng.below(50) as f32) * 0.25))
                .collect();
            let mut sorted = base.clone();
            sorted.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            let mut near = sorted.clone();
            for _ in 0..n / 10 {
                let i = rng.below(n.max(2) - 1);
                near.swap(i, i + 1);
            }
            let mut shuffled = base.clone();
            for i in (1..n).rev() {
                shuffled.swap(i, rng.below(i + 1));
            }
            let reversed: Vec<_> = sorted.iter().rev().copied().collect();
            for (what, mut v) in [("near", near), ("shuffled", shuffled), ("reversed", reversed)] {
                sort_hits(&mut v);
                assert!(v == sorted, "{what}, n = {n}: not sorted by (t, handle)");
            }
        }
    }
}
