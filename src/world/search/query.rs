//! The trees' side of the world's queries: the clean objects whose boxes a region meets
//! or a ray or swept box enters, and the clean objects in order of a key (an entry `t`,
//! a distance). The caller adds the objects changed since the last update (which the
//! trees do not know yet) and applies the query filter.
//!
//! - Input: a region, a [`Slab`] test (a ray or a swept box) or a key, which trees to
//!   search, the changed set, the store, the generations, the margin. Output: each clean
//!   live object of the trees searched whose box (as set) the region meets or the motion
//!   enters, once, by slot and generation (a static leaf's kept beside the tree), to a
//!   visitor ([`Hits`] for regions: the static leaves under a subtree that lies within
//!   the region go as one run of `[slot, generation]` pairs where none is masked or
//!   changed, which a plain query copies whole); or, for [`Search::best_first`], each one
//!   the caller's test takes, in order of `(key, slot)`.
//! - The exact test reads the box nearest to hand: where the margin is 0 or less, a
//!   static leaf is the box itself (the trees grow boxes by the margin only where it is
//!   positive), so the walk's own test is exact; a dynamic leaf is fat, and its copy of
//!   the box beside the tree (`leaf_box`) is exact where the margin is 0. Otherwise the
//!   store's box, by slot. A static leaf's id is its slot.
//! - Cost: one walk of each selected tree, O(log n + candidates), plus the short list of
//!   dynamic objects without a leaf. Where nothing changed since the last update the
//!   changed set is not read.
//! - Threads: none (batches run queries in parallel above it). Allocation: none but the
//!   best-first walk's queue, the caller's ([`Frontier`]).
//! - Source: the walks of [`crate::bvh`].

use super::{Search, NONE};
use crate::bvh::{Bvh, Finds, Frontier, Key, Slab};
use crate::world::dirty::Dirty;
use crate::world::store::Store;
use crate::Aabb;
use std::ops::ControlFlow;

/// What a query reads beside the trees.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sight<'a, const D: usize> {
    pub(crate) statics: bool,
    pub(crate) dynamics: bool,
    /// The objects changed since the last update (`world::dirty`).
    pub(crate) dirty: &'a Dirty,
    pub(crate) store: &'a Store<D>,
    /// Each slot's generation.
    pub(crate) generations: &'a [u32],
    pub(crate) margin: f32,
}

impl<const D: usize> Sight<'_, D> {
    /// Whether slot `s` changed since the last update (never read where nothing did).
    #[inline(always)]
    fn changed(&self, s: u32) -> bool {
        !self.dirty.is_empty() && self.dirty.contains(s)
    }
}

/// What a region search finds: each clean object, by slot and generation, and runs of
/// them side by side (static objects under a subtree whose bounds lie within the region,
/// where no leaf is masked and nothing changed since the last update: every one a hit).
/// Where the static tree holds the objects' boxes as they are (no margin), its leaves'
/// boxes come along (`*_boxed`), so that a test of the object's box needs no read of
/// the store.
pub(crate) trait Hits<const D: usize> {
    /// The object in slot `s`, of generation `g`.
    fn hit(&mut self, s: u32, g: u32) -> ControlFlow<()>;

    /// The objects named in `names` (`[slot, generation]`); by default each to `hit`.
    #[inline(always)]
    fn run(&mut self, names: &[[u32; 2]]) -> ControlFlow<()> {
        for &[s, g] in names {
            self.hit(s, g)?;
        }
        ControlFlow::Continue(())
    }

    /// [`Hits::hit`] of an object whose box is `_b`; by default `hit`.
    #[inline(always)]
    fn hit_boxed(&mut self, s: u32, g: u32, _b: &Aabb<D>) -> ControlFlow<()> {
        self.hit(s, g)
    }

    /// [`Hits::run`] of objects whose boxes are `_boxes` (one a name); by default `run`.
    #[inline(always)]
    fn run_boxed(&mut self, names: &[[u32; 2]], _boxes: &[Aabb<D>]) -> ControlFlow<()> {
        self.run(names)
    }
}

/// A closure as [`Hits`] that takes each object of a run alone.
pub(crate) struct EachHit<F>(pub(crate) F);

impl<const D: usize, F: FnMut(u32, u32) -> ControlFlow<()>> Hits<D> for EachHit<F> {
    #[inline(always)]
    fn hit(&mut self, s: u32, g: u32) -> ControlFlow<()> {
        (self.0)(s, g)
    }
}

/// The static tree's [`Finds`], passed on to [`Hits`]: masked leaves and changed objects
/// skipped, the store's box tested where the leaves are grown, whole runs as slices.
struct StaticFinds<'a, 'b, const D: usize, H> {
    names: &'a [[u32; 2]],
    runs: bool,
    exact: bool,
    at: &'a Sight<'b, D>,
    region: &'a Aabb<D>,
    hits: &'a mut H,
}

impl<const D: usize, H: Hits<D>> Finds<D> for StaticFinds<'_, '_, D, H> {
    #[inline(always)]
    fn leaf(&mut self, p: usize, b: &Aabb<D>) -> ControlFlow<()> {
        let [s, g] = self.names[p];
        if g == NONE || self.at.changed(s) {
            return ControlFlow::Continue(());
        }
        if self.exact {
            // The leaf's box is the object's, and the walk found it meets the region.
            return self.hits.hit_boxed(s, g, b);
        }
        if !self.at.store.boxes[s as usize].overlaps(self.region) {
            return ControlFlow::Continue(());
        }
        self.hits.hit(s, g)
    }

    /// A run's leaves lie within the region, so their boxes (within the leaves) meet it.
    #[inline(always)]
    fn run(&mut self, first: usize, last: usize, leaves: &[Aabb<D>]) -> ControlFlow<()> {
        let names = &self.names[first..=last];
        let boxes = &leaves[first..=last];
        match (self.runs, self.exact) {
            (true, true) => return self.hits.run_boxed(names, boxes),
            (true, false) => return self.hits.run(names),
            _ => {}
        }
        for (&[s, g], b) in names.iter().zip(boxes) {
            if g != NONE && !self.at.changed(s) {
                if self.exact {
                    self.hits.hit_boxed(s, g, b)?;
                } else {
                    self.hits.hit(s, g)?;
                }
            }
        }
        ControlFlow::Continue(())
    }
}

impl<const D: usize> Search<D> {
    /// Each clean object of the selected kinds whose box meets `region`, by slot and
    /// generation.
    pub(crate) fn region_hits(
        &self,
        region: &Aabb<D>,
        at: &Sight<'_, D>,
        hits: &mut impl Hits<D>,
    ) -> ControlFlow<()> {
        let boxes = &at.store.boxes;
        if at.statics {
            let (st, exact) = (&self.statics, at.margin <= 0.0);
            let mut finds = StaticFinds {
                names: &st.names,
                // A run is whole where no leaf of the tree is masked and no object changed.
                runs: st.unmasked() && at.dirty.is_empty(),
                exact,
                at,
                region,
                hits: &mut *hits,
            };
            st.tree.query_finds(region, &mut finds)?;
            st.query_extras(region, |s, g, _| {
                if at.changed(s) || !(exact || boxes[s as usize].overlaps(region)) {
                    return ControlFlow::Continue(());
                }
                hits.hit(s, g)
            })?;
        }
        let mut visit = |s, g| hits.hit(s, g);
        if at.dynamics {
            let exact = at.margin == 0.0;
            let d = &self.dynamics;
            d.tree.query(region, |p| {
                let s = d.pos_slot[p];
                if s == NONE || at.changed(s) {
                    return ControlFlow::Continue(());
                }
                let b = if exact { &d.leaf_box[p] } else { &boxes[s as usize] };
                if b.overlaps(region) {
                    visit(s, at.generations[s as usize])
                } else {
                    ControlFlow::Continue(())
                }
            })?;
            d.extra_tree.query(region, |q| {
                let s = d.extras[d.extra_tree.ids[q] as usize];
                if !at.changed(s) && boxes[s as usize].overlaps(region) {
                    visit(s, at.generations[s as usize])
                } else {
                    ControlFlow::Continue(())
                }
            })?;
        }
        ControlFlow::Continue(())
    }

    /// Each clean object of the selected kinds whose box the ray (or swept box) enters at
    /// `t <= *cut`, with that `t`, nearer subtrees first, by slot and generation; `visit`
    /// may lower `*cut` or stop.
    pub(crate) fn ray_hits<S: Slab<D>>(
        &self,
        ray: &S,
        cut: &mut f32,
        at: &Sight<'_, D>,
        mut visit: impl FnMut(u32, u32, f32, &mut f32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let boxes = &at.store.boxes;
        if at.statics {
            let exact = at.margin <= 0.0;
            self.statics.cast(ray, cut, |s, g, t, cut| {
                if at.changed(s) {
                    return ControlFlow::Continue(());
                }
                match if exact { Some(t) } else { ray.enters_box(&boxes[s as usize], *cut) } {
                    Some(t) => visit(s, g, t, cut),
                    None => ControlFlow::Continue(()),
                }
            })?;
        }
        if at.dynamics {
            let exact = at.margin == 0.0;
            let d = &self.dynamics;
            d.tree.cast(ray, cut, |p, _, cut| {
                let s = d.pos_slot[p];
                if s == NONE || at.changed(s) {
                    return ControlFlow::Continue(());
                }
                let b = if exact { &d.leaf_box[p] } else { &boxes[s as usize] };
                match ray.enters_box(b, *cut) {
                    Some(t) => visit(s, at.generations[s as usize], t, cut),
                    None => ControlFlow::Continue(()),
                }
            })?;
            d.extra_tree.cast(ray, cut, |q, _, cut| {
                let s = d.extras[d.extra_tree.ids[q] as usize];
                if at.changed(s) {
                    return ControlFlow::Continue(());
                }
                match ray.enters_box(&boxes[s as usize], *cut) {
                    Some(t) => visit(s, at.generations[s as usize], t, cut),
                    None => ControlFlow::Continue(()),
                }
            })?;
        }
        ControlFlow::Continue(())
    }

    /// Each clean object of the selected kinds that `take(slot, generation)` accepts and
    /// whose box (as set) has `key(box, cut)` at most `*cut`, by slot, with that key, in
    /// order of `(key, slot)`, together with the leaves the caller pushed into `frontier`
    /// (the changed objects); `visit` may lower `*cut` or stop. `key` must be monotone
    /// (`bvh::best`): it keys the trees' nodes and leaves (grown by the margin) too.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn best_first(
        &self,
        frontier: &mut Frontier,
        at: &Sight<'_, D>,
        cut: &mut f32,
        key: &impl Key<D>,
        take: impl Fn(u32, u32) -> bool,
        visit: impl FnMut(u32, f32, &mut f32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        /// Where a tree's leaves name their objects.
        #[derive(Clone, Copy)]
        enum Leaves {
            /// The static tree: its ids are slots, a generation of `NONE` masks a leaf.
            Statics,
            /// A tree over extras: its ids index the list of their slots.
            Extras,
            /// The dynamic tree: `pos_slot` by position, `NONE` for a free leaf.
            Dynamics,
        }
        let (st, d) = (&self.statics, &self.dynamics);
        let mut trees: [&Bvh<D>; 4] = [&st.tree; 4];
        let mut kinds = [(Leaves::Statics, &st.extras); 4];
        let mut n = 0;
        let mut add = |t, k| {
            trees[n] = t;
            kinds[n] = k;
            n += 1;
        };
        if at.statics {
            add(&st.tree, (Leaves::Statics, &st.extras));
            add(&st.extra_tree, (Leaves::Extras, &st.extras));
        }
        if at.dynamics {
            add(&d.tree, (Leaves::Dynamics, &d.extras));
            add(&d.extra_tree, (Leaves::Extras, &d.extras));
        }
        // Without a margin a static leaf's box is its object's: its key is the object's.
        let exact = at.margin <= 0.0;
        let leaf = |i: usize, p: usize, leaf_key: f32, cut: f32| {
            let (s, g) = match kinds[i] {
                (Leaves::Statics, _) => match st.names[p] {
                    [_, NONE] => return None,
                    [s, g] => (s, g),
                },
                (Leaves::Extras, extras) => {
                    let s = extras[trees[i].ids[p] as usize];
                    (s, at.generations[s as usize])
                }
                (Leaves::Dynamics, _) => match d.pos_slot[p] {
                    NONE => return None,
                    s => (s, at.generations[s as usize]),
                },
            };
            if at.changed(s) {
                return None;
            }
            let k = match kinds[i] {
                (Leaves::Statics, _) if exact => leaf_key,
                _ => key.one(&at.store.boxes[s as usize], cut)?,
            };
            take(s, g).then_some((k, s))
        };
        frontier.walk(&trees[..n], cut, key, leaf, visit)
    }
}
