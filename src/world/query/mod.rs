//! The world's queries: the objects in a region, at a point or in a ball, the nearest
//! objects to a point, and the objects along a ray or a swept box (the closest, all of
//! them in order, or each to a callback that may clip the cast or stop it). A file a
//! shape: `filter` ([`QueryFilter`]), `ray` (rays, and the casts rays and swept boxes
//! share), `sweep`, `nearest`, `sphere`; the regions here.
//!
//! - Input: a shape and a [`QueryFilter`]. Output: handles in the trees' order (sorted
//!   by handle where the filter asks: [`QueryFilter::sorted`]), hits `(handle, t)` sorted
//!   by `(t, handle)`, or `(handle, distance)` sorted by `(distance, handle)`.
//! - The trees' order: the static tree's hits in its walk's order, then the moving
//!   objects' tree's, then the objects changed since the last update in the order of
//!   their first change. The trees are a function of the calls made on the world (their
//!   parallel builds give the same tree for any thread count), so the order is the same
//!   bytes for any thread count and for any world made by the same calls. A world
//!   restored from a snapshot rebuilds its trees: the same hits, maybe in another order
//!   (the sorted form is the same bytes). Not sorting is what the peers do (parry, rstar,
//!   geo-index, Box2D return hits as their trees find them): a large region's thousand
//!   hits sorted cost about what its walk does.
//! - What a query sees: every call made so far, changes since the last update included
//!   (the boxes as [`World::aabb`] returns them, not grown by the margin). Objects clean
//!   since the last update are found through the search's trees (`world::search::query`),
//!   whose leaves hold their boxes; the objects changed since are each tested directly.
//! - Cost: O(log n + k) a query for k candidates, plus one test for each object changed
//!   since the last update: call [`World::update`] before many queries after many changes.
//!   Ordered walks (nearest, a cast's callback, a cast's first `max_hits` hits) keep a
//!   priority queue: O(log m) more for each of the m subtrees and objects it holds.
//! - Threads: none for one query; the batches (`world::batch`) run on the caller's pool.
//! - Allocation: none beyond the caller's output, but for the priority queue of ordered
//!   walks (`bvh::best`: one a thread, kept and reused) and the scratch of the sort of a
//!   large region's hits (one a thread, kept).
//! - Errors: a NaN, infinite or inverted region or swept box is [`Error::InvalidBox`]; a
//!   non-finite point, origin or centre, a zero or non-finite direction, a NaN or
//!   negative `max_t` or `max_distance`, a radius that is not finite or negative is
//!   [`Error::InvalidQuery`]. Nothing panics.
//! - Source: the slab test (Kay and Kajiya, "Ray tracing complex scenes", 1986) for rays
//!   and swept boxes; Hjaltason and Samet's best-first search ("Distance browsing in
//!   spatial databases", 1999) for ordered walks; the stack walks of the tree stage.

mod filter;
mod nearest;
mod ray;
mod sphere;
mod sweep;

pub use filter::QueryFilter;
pub(crate) use nearest::check_max_distance;
pub use ray::{CastAction, CastHit, Ray};
pub use sphere::Sphere;
pub use sweep::Sweep;

use super::search::{EachHit, Hits, Sight};
use super::{Handle, World};
use crate::bvh::{with_frontier, Key};
use crate::{Aabb, Error};
use std::ops::ControlFlow;

/// Checks a point; `index` names it in the error.
pub(crate) fn check_point<const D: usize>(p: &[f32; D], index: usize) -> Result<Aabb<D>, Error> {
    if p.iter().all(|x| x.is_finite()) {
        Ok(Aabb { min: *p, max: *p })
    } else {
        Err(Error::InvalidQuery { index, reason: "point is not finite" })
    }
}

impl<const D: usize> World<D> {
    /// Every live object whose box overlaps `region` (closed boxes: touching counts) and
    /// that `filter` takes, into `out` (cleared first), in the trees' order (the same for
    /// any thread count and any world made by the same calls; sorted by handle with
    /// [`QueryFilter::sorted`]).
    ///
    /// Like every query, it sees every call made so far, changes since the last update
    /// included, and reads the boxes as set (not grown by the margin). Cost: O(log n + k)
    /// for k candidates, plus a test of each object changed since the last update.
    ///
    /// ```
    /// use broadphase::{Aabb2, Config, Kind, QueryFilter, World2};
    /// let mut world = World2::new(Config::default())?;
    /// let wall = world.insert(Aabb2::new([0.0, 0.0], [1.0, 10.0]), Kind::Static)?;
    /// let ball = world.insert(Aabb2::new([5.0, 5.0], [6.0, 6.0]), Kind::Dynamic)?;
    /// world.update()?;
    /// let mut out = Vec::new();
    /// let all = QueryFilter::default();
    /// world.query_aabb(Aabb2::new([0.5, 4.0], [5.0, 5.0]), all, &mut out)?;
    /// assert_eq!(out, [wall, ball]);
    /// world.query_aabb(Aabb2::new([0.5, 4.0], [5.0, 5.0]), all.only_dynamic(), &mut out)?;
    /// assert_eq!(out, [ball]);
    /// assert_eq!(world.cast_ray([3.0, 5.5], [1.0, 0.0], 10.0, all)?, Some((ball, 2.0)));
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    pub fn query_aabb(
        &self,
        region: Aabb<D>,
        filter: QueryFilter<'_>,
        out: &mut Vec<Handle>,
    ) -> Result<(), Error> {
        super::check(&region, 0)?;
        out.clear();
        self.region_into(&region, &filter, out);
        Ok(())
    }

    /// [`World::query_aabb`] for the point `point` (a box of zero size).
    pub fn query_point(
        &self,
        point: [f32; D],
        filter: QueryFilter<'_>,
        out: &mut Vec<Handle>,
    ) -> Result<(), Error> {
        let region = check_point(&point, 0)?;
        out.clear();
        self.region_into(&region, &filter, out);
        Ok(())
    }

    /// Each object [`World::query_aabb`] would return, to `visit`, in no set order, until
    /// `visit` breaks; returns what the last call of `visit` did (`Continue` if none).
    pub fn query_aabb_each(
        &self,
        region: Aabb<D>,
        filter: QueryFilter<'_>,
        visit: impl FnMut(Handle) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, Error> {
        super::check(&region, 0)?;
        Ok(self.each_in(&region, &filter, visit))
    }

    /// The live handle of slot `s`.
    #[inline]
    fn handle_of(&self, s: u32) -> Handle {
        Handle::new(s, self.slots.generations[s as usize])
    }

    /// Whether live slot `s`, named `h`, passes the whole filter.
    #[inline]
    fn takes(&self, s: usize, h: Handle, filter: &QueryFilter<'_>) -> bool {
        filter.takes(h, self.store.kinds[s], self.store.filter(s).membership, || self.store.user_data(s))
    }

    /// Whether the clean slot `s` of generation `g`, found in a tree the filter picked,
    /// passes the rest of the filter (nothing to test where it is plain).
    #[inline]
    fn takes_found(&self, plain: bool, s: u32, g: u32, filter: &QueryFilter<'_>) -> bool {
        plain || self.takes(s as usize, Handle::new(s, g), filter)
    }

    /// Whether slot `s` is a live object the filter takes (for the changed objects,
    /// tested outside the trees).
    #[inline]
    fn takes_changed(&self, s: u32, filter: &QueryFilter<'_>) -> bool {
        self.slots.alive[s as usize] && self.takes(s as usize, self.handle_of(s), filter)
    }

    /// Each object whose box has `key(box, cut)` at most `*cut`, in order of `(key, slot)`,
    /// to `visit(slot, key, cut)`, which may lower `*cut` or stop: the best-first walk
    /// (`bvh::best`) over the trees the filter picks, with the changed objects queued
    /// beside them. `key` must be monotone (a box holding another keys no greater).
    /// `keep`: the visitor stops after that many objects (k nearest; 0: no such bound),
    /// which lets the walk leave out whatever lies beyond the `keep` nearest queued.
    fn ordered(
        &self,
        filter: &QueryFilter<'_>,
        cut: &mut f32,
        keep: usize,
        key: impl Key<D>,
        visit: impl FnMut(u32, f32, &mut f32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let plain = filter.plain();
        with_frontier(|frontier| {
            frontier.keep(keep);
            for &s in self.dirty.list() {
                if !self.slots.alive[s as usize] {
                    continue;
                }
                match key.one(&self.store.boxes[s as usize], *cut) {
                    Some(k) if self.takes_changed(s, filter) => frontier.push_leaf(k, s),
                    _ => {}
                }
            }
            let take = |s, g| self.takes_found(plain, s, g, filter);
            self.scratch.search.best_first(frontier, &self.sight(filter), cut, &key, take, visit)
        })
    }

    /// The region query's hits appended to `out`, in the trees' order (sorted by handle
    /// where the filter asks).
    pub(crate) fn region_into(&self, region: &Aabb<D>, filter: &QueryFilter<'_>, out: &mut Vec<Handle>) {
        let start = out.len();
        if filter.plain() {
            // Every object the trees find is taken: runs of them are copied whole.
            let _ = self.scratch.search.region_hits(region, &self.sight(filter), &mut Pushed(&mut *out));
            let _ = self.each_changed_in(region, filter, |h| {
                out.push(h);
                ControlFlow::Continue(())
            });
        } else {
            let _ = self.each_in(region, filter, |h| {
                out.push(h);
                ControlFlow::Continue(())
            });
        }
        if filter.is_sorted() {
            sort_by_index(&mut out[start..]);
        }
    }

    /// What the search's side of a query reads: the trees of the kinds the filter takes.
    fn sight(&self, filter: &QueryFilter<'_>) -> Sight<'_, D> {
        Sight {
            statics: filter.statics(),
            dynamics: filter.moving(),
            dirty: &self.dirty,
            store: &self.store,
            generations: &self.slots.generations,
            margin: self.config.margin,
        }
    }

    /// Each object in the region: the clean ones through the trees (which hold the static
    /// objects apart), then the changed ones.
    fn each_in(
        &self,
        region: &Aabb<D>,
        filter: &QueryFilter<'_>,
        mut visit: impl FnMut(Handle) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let plain = filter.plain();
        let mut found = EachHit(|s, g| {
            if self.takes_found(plain, s, g, filter) {
                visit(Handle::new(s, g))
            } else {
                ControlFlow::Continue(())
            }
        });
        self.scratch.search.region_hits(region, &self.sight(filter), &mut found)?;
        self.each_changed_in(region, filter, visit)
    }

    /// Each object changed since the last update whose box meets `region` and that
    /// `filter` takes.
    fn each_changed_in(
        &self,
        region: &Aabb<D>,
        filter: &QueryFilter<'_>,
        mut visit: impl FnMut(Handle) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for &s in self.dirty.list() {
            if self.slots.alive[s as usize]
                && self.store.boxes[s as usize].overlaps(region)
                && self.takes_changed(s, filter)
            {
                visit(self.handle_of(s))?;
            }
        }
        ControlFlow::Continue(())
    }
}

/// A region query's output as [`Hits`] of a plain filter: each found object pushed, a
/// run's handles made side by side.
struct Pushed<'a>(&'a mut Vec<Handle>);

impl<const D: usize> Hits<D> for Pushed<'_> {
    #[inline(always)]
    fn hit(&mut self, s: u32, g: u32) -> ControlFlow<()> {
        self.0.push(Handle::new(s, g));
        ControlFlow::Continue(())
    }

    #[inline(always)]
    fn run(&mut self, names: &[[u32; 2]]) -> ControlFlow<()> {
        self.0.extend(names.iter().map(|&[s, g]| Handle::new(s, g)));
        ControlFlow::Continue(())
    }
}

/// Sorts the handles of distinct live objects by index (their slots are distinct, so the
/// index alone orders them and there is one result): a comparison sort for a few, else
/// an LSD radix sort by the index's bytes, each pass skipped where every handle shares
/// its byte. A large region's thousand hits sorted by comparison cost about as much as
/// its walk. PERF: benches/queries.rs (`regions_large`).
fn sort_by_index(v: &mut [Handle]) {
    if v.len() < 256 {
        v.sort_unstable_by_key(|h| h.index());
        return;
    }
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<Handle>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|scratch| {
        let mut scratch = scratch.borrow_mut();
        scratch.clear();
        scratch.resize(v.len(), Handle::new(0, 0));
        let mut in_scratch = false;
        for shift in [0u32, 8, 16, 24] {
            let (src, dst): (&[Handle], &mut [Handle]) =
                if in_scratch { (&scratch[..], &mut *v) } else { (&*v, &mut scratch[..]) };
            let mut at = [0usize; 256];
            for h in src {
                at[(h.index() >> shift) as usize & 255] += 1;
            }
            if at.contains(&src.len()) {
                continue;
            }
            let mut sum = 0;
            for c in at.iter_mut() {
                (*c, sum) = (sum, sum + *c);
            }
            for &h in src {
                let d = (h.index() >> shift) as usize & 255;
                dst[at[d]] = h;
                at[d] += 1;
            }
            in_scratch = !in_scratch;
        }
        if in_scratch {
            v.copy_from_slice(&scratch);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::{sort_by_index, Handle};
    use crate::internals::scene::Rng;

    /// The radix path and the comparison path agree with a plain sort, on sizes around
    /// the switch and on indices that share their high bytes (passes skipped).
    #[test]
    fn handles_sort_by_index() {
        let mut rng = Rng::new(4);
        for (n, span) in [
            (10, 1u32 << 31),
            (255, 1 << 31),
            (256, 1 << 31),
            (3000, 1 << 31),
            (3000, 4096),
            (70_000, 1 << 20),
        ] {
            let mut idx: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32 % span).collect();
            idx.sort_unstable();
            idx.dedup();
            let mut want: Vec<Handle> = idx.iter().map(|&i| Handle::new(i, i ^ 7)).collect();
            let mut got = want.clone();
            for i in (1..got.len()).rev() {
                got.swap(i, rng.below(i + 1));
            }
            sort_by_index(&mut got);
            want.sort_unstable();
            assert_eq!(got, want, "n = {n}, span = {span}");
        }
    }
}
