//! The static tree: every live static object's box, grown by the tree margin, in a tree
//! kept for walks, and the static objects changed since it was built beside it.
//!
//! - Input: each frame's changed slots (their states as of the last update and now), the
//!   store. Output: [`Statics::query`] and [`Statics::cast`], which visit each live static
//!   object once, by slot and generation.
//! - Changes (doors, destructibles, streamed chunks, kind switches) cost O(c log n) for c
//!   changed objects: each one's leaf is found by a walk with its old box and masked (its
//!   generation set to `NONE`, which walks skip), and the objects as they are now join the
//!   changed ones (`extras`), whose small tree is rebuilt, O(e log e) for the e of them.
//!   Once the masked leaves and the extras pass [`LOOSE_MIN`] plus a [`LOOSE_SHARE`] of
//!   the tree, the tree is rebuilt over every live static object in Morton order, O(n);
//!   so is it where one frame changes more boxes than that bound. A tree whose objects
//!   stayed as they are for [`SAH_FRAMES`] frames is rebuilt by the surface area
//!   heuristic (faster walks and queries).
//! - The changed boxes, as they were and as they are, are kept for the frame with a tree
//!   over them ([`Statics::changed`]): a neighbour list is stale where its box meets one.
//! - Threads: the builds as `Bvh::build_for_queries` and `Bvh::build_sah`; the rest
//!   sequential, O(changes). Allocation: the extras' buffers, kept; a full rebuild gives
//!   back what only it needs.
//! - Source: Box2D v3's broad phase (a separate static tree, rebuilt rarely); the masked
//!   leaves and the small tree beside a frozen one are this crate's.

use super::{tree_margin, NONE, SAH_FRAMES};
use crate::bvh::{Bvh, Slab};
use crate::par::prelude::*;
use crate::time::{Duration, Instant};
use crate::world::store::{Snapshot, Store};
use crate::world::{dirty::Dirty, handle::Slots, Kind};
use crate::{Aabb, Error};
use std::ops::ControlFlow;

/// Masked leaves and extras that never call for a rebuild of the static tree.
const LOOSE_MIN: usize = 256;
/// The static tree is rebuilt once its masked leaves and the extras pass [`LOOSE_MIN`]
/// and this share of its leaves: a walk meets masked leaves and walks the extras' tree
/// too, so past a sixteenth of the tree it costs about what a rebuild saves.
const LOOSE_SHARE: usize = 16;

/// What [`Statics::upkeep`] did to the static objects the neighbour lists were made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stale {
    /// Nothing changed: every list stands.
    None,
    /// The lists whose fat boxes meet one of [`Statics::changed`] are stale.
    Near,
    /// Every list is stale.
    All,
}

/// The static tree, its masked leaves, and the changed objects beside it (module docs).
#[derive(Clone, Debug, Default)]
pub(super) struct Statics<const D: usize> {
    /// The tree; its ids are the objects' slots.
    pub(super) tree: Bvh<D>,
    /// The slot and generation of the object at each leaf, side by side, so that a query
    /// names a hit with one load (one cache line) and no load by slot; a generation of
    /// `NONE`: masked (the object changed since the tree was built, and is in `extras` if
    /// still a live static one). PERF: benches/queries.rs (`points`).
    pub(super) names: Vec<[u32; 2]>,
    masked: usize,
    /// Live static objects changed since the tree was built, their generations, and a
    /// tree over their grown boxes (its ids index `extras`).
    pub(super) extras: Vec<u32>,
    extra_gens: Vec<u32>,
    pub(super) extra_tree: Bvh<D>,
    extra_boxes: Vec<Aabb<D>>,
    /// A tree was built.
    built: bool,
    /// The tree was built by the surface area heuristic, and the frame its objects last
    /// changed in.
    by_area: bool,
    changed_at: u64,
    /// The tree was brought up to date by a frame that has not succeeded yet: it holds
    /// that frame's state, which calls made before the retry may have undone (a static
    /// object inserted and removed again, a kind flipped and flipped back), so the retry
    /// rebuilds it whatever the snapshots say.
    pub(super) unsettled: bool,
    /// The frame's changed static boxes (grown by the tree margin), as they were and as
    /// they are (at most one past the bound of [`Statics::loose_max`]), and a tree over
    /// them.
    changes: Vec<Aabb<D>>,
    change_tree: Bvh<D>,
    /// The leaves `mask_changed` found.
    found: Vec<u32>,
    /// Time spent in the trees' builds (on every thread) since `upkeep` began.
    pub(super) builds: Duration,
}

impl<const D: usize> Statics<D> {
    /// Whether `b` meets one of the frame's changed static boxes, as they were or as they
    /// are (after `upkeep` returned [`Stale::Near`]). O(log c).
    pub(super) fn changed(&self, b: &Aabb<D>) -> bool {
        self.change_tree.query(b, |_| ControlFlow::Break(())).is_break()
    }

    /// The masked leaves and extras past which the tree is rebuilt.
    fn loose_max(&self) -> usize {
        LOOSE_MIN + self.tree.len() / LOOSE_SHARE
    }

    /// Heap bytes held, from capacities.
    pub(super) fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.tree.bytes()
            + self.extra_tree.bytes()
            + self.change_tree.bytes()
            + 8 * self.names.capacity()
            + 4 * (self.extras.capacity() + self.extra_gens.capacity() + self.found.capacity())
            + size_of::<Aabb<D>>() * (self.extra_boxes.capacity() + self.changes.capacity())
    }

    /// Brings the tree up to date with the changed slots of frame `frame` (module docs);
    /// returns which neighbour lists the changes make stale. Idempotent for a given
    /// state, so a frame that fails after it and is retried does it again safely.
    pub(super) fn upkeep(
        &mut self,
        slots: &Slots,
        store: &Store<D>,
        changed: &Dirty,
        margin: f32,
        frame: u64,
    ) -> Stale {
        self.builds = Duration::ZERO;
        let tm = tree_margin(margin);
        let list = changed.list();
        let is_static = |st: &Snapshot<D>| st.alive && st.kind == Kind::Static;
        let max = self.loose_max();
        self.changes.clear();
        for (&s, was) in list.iter().zip(&store.before) {
            let is = store.snapshot(slots, s as usize);
            for st in [was, &is].into_iter().filter(|st| is_static(st)) {
                if self.changes.len() <= max {
                    self.changes.push(st.aabb.grown(tm));
                }
            }
        }
        if !self.built || self.unsettled || self.changes.len() > max {
            // A first build, a frame after a failed one (whose lists may hold objects
            // since undone), or too many changes to follow. In Morton order, so that a
            // world's build costs about one search of every box, but where no object is
            // dynamic: then no frame walks the tree, and it serves queries alone (a level
            // or a map loaded for lookups).
            self.build(slots, store, margin, store.moving == 0, frame);
            self.unsettled = true;
            return Stale::All;
        }
        if self.changes.is_empty() {
            if !self.by_area && frame - self.changed_at >= SAH_FRAMES {
                // The same objects, settled: the surface area build, for the walks and
                // queries of the frames to come. Every list stays valid.
                self.build(slots, store, margin, true, frame);
            }
            return Stale::None;
        }
        // A few changes: each changed object's leaf masked, and the objects as they are
        // now among the extras.
        self.unsettled = true;
        self.changed_at = frame;
        self.mask_changed(list, &store.before, tm);
        self.extras.retain(|&s| !changed.contains(s));
        self.extras.extend(list.iter().filter(|&&s| is_static(&store.snapshot(slots, s as usize))));
        let t = Instant::now();
        self.change_tree.build_for_queries(&self.changes, 0.0);
        self.builds += t.elapsed();
        if self.changes.len() > 4 * LOOSE_MIN {
            // Sized by an outsized frame: given back.
            self.changes = Vec::new();
        }
        if self.masked + self.extras.len() > max {
            // The same objects as the tree and the extras held: only the lists near a
            // change go stale.
            self.build(slots, store, margin, false, frame);
        } else {
            self.build_extras(slots, store, margin);
        }
        Stale::Near
    }

    /// Masks the leaf of each changed slot (`list`, with its state as of the last update
    /// at the same position of `before`) that was static and that the tree holds
    /// unmasked: found by a walk with its old box grown by `tm`, in parallel, O(log n)
    /// each.
    fn mask_changed(&mut self, list: &[u32], before: &[Snapshot<D>], tm: f32) {
        let (tree, names) = (&self.tree, &self.names);
        let find = |(&s, was): (&u32, &Snapshot<D>)| {
            let mut found = None;
            if was.alive && was.kind == Kind::Static {
                let _ = tree.query(&was.aabb.grown(tm), |p| {
                    if names[p][0] == s && names[p][1] != NONE {
                        found = Some(p as u32);
                        return ControlFlow::Break(());
                    }
                    ControlFlow::Continue(())
                });
            }
            found
        };
        let mut found = std::mem::take(&mut self.found);
        found.clear();
        found.par_extend(list.par_iter().zip(before).with_min_len(256).filter_map(find));
        for &p in &found {
            self.names[p as usize][1] = NONE;
        }
        self.masked += found.len();
        self.found = found;
    }

    /// Rebuilds the extras' tree over their boxes (grown by the tree margin).
    fn build_extras(&mut self, slots: &Slots, store: &Store<D>, margin: f32) {
        self.extras.sort_unstable();
        self.extra_boxes.clear();
        self.extra_boxes.extend(self.extras.iter().map(|&s| store.boxes[s as usize]));
        self.extra_gens.clear();
        self.extra_gens.extend(self.extras.iter().map(|&s| slots.generations[s as usize]));
        let t = Instant::now();
        self.extra_tree.build_for_queries(&self.extra_boxes, tree_margin(margin));
        self.builds += t.elapsed();
    }

    /// Rebuilds the tree over the live static objects, by the surface area heuristic
    /// where `by_area` (slower to build, faster to walk), else in Morton order.
    fn build(&mut self, slots: &Slots, store: &Store<D>, margin: f32, by_area: bool, frame: u64) {
        // Where every slot holds a live static object (a level or a map loaded whole), the
        // tree is built over the store's boxes as they lie, its ids already slots: no
        // gather. PERF: benches/queries.rs (`build`).
        let whole = store.statics == slots.alive.len();
        // Else the live static slots and their boxes, in slot order (an ordered parallel
        // collect: the same tree for any thread count).
        let (ids, gathered): (Vec<u32>, Vec<Aabb<D>>) = if whole {
            (Vec::new(), Vec::new())
        } else {
            let ids: Vec<u32> = (0..slots.alive.len() as u32)
                .into_par_iter()
                .with_min_len(1 << 14)
                .filter(|&s| slots.alive[s as usize] && store.kinds[s as usize] == Kind::Static)
                .collect();
            let boxes = ids.par_iter().with_min_len(1 << 14).map(|&s| store.boxes[s as usize]).collect();
            (ids, boxes)
        };
        let boxes = if whole { &store.boxes[..] } else { &gathered[..] };
        // Built once a level and walked every frame and by every query: the surface area
        // build, slower to build, faster to walk. PERF: benches/queries.rs.
        let t = Instant::now();
        if by_area {
            self.tree.build_sah(boxes, tree_margin(margin));
        } else {
            self.tree.build_for_queries(boxes, tree_margin(margin));
            self.changed_at = frame;
        }
        self.builds += t.elapsed();
        self.by_area = by_area;
        drop(gathered);
        // The tree's ids become slots: a walk reads its leaf's slot beside the leaf, and
        // a query its slot and generation side by side (`names`).
        if !whole {
            self.tree.ids.par_iter_mut().with_min_len(1 << 14).for_each(|id| *id = ids[*id as usize]);
        }
        self.names.clear();
        let names =
            self.tree.ids.par_iter().with_min_len(1 << 14).map(|&s| [s, slots.generations[s as usize]]);
        self.names.par_extend(names);
        self.masked = 0;
        self.extras.clear();
        self.extra_gens.clear();
        self.extra_boxes = Vec::new();
        self.extra_tree = Bvh::default();
        self.built = true;
        self.tree.keep_for_walks();
    }

    /// Whether no static object changed since the tree was built (so the tree alone
    /// holds them all, each in one live leaf).
    pub(super) fn settled(&self) -> bool {
        self.built && self.masked == 0 && self.extras.is_empty()
    }

    /// The tree itself, for a join against it (only where [`Statics::settled`]).
    pub(super) fn tree_mut(&mut self) -> &mut Bvh<D> {
        &mut self.tree
    }

    /// Each live static object whose leaf box (grown by the tree margin) meets `region`:
    /// its slot, generation and leaf box, once each; stops when `visit` breaks.
    pub(super) fn query(
        &self,
        region: &Aabb<D>,
        mut visit: impl FnMut(u32, u32, &Aabb<D>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let (tree, names) = (&self.tree, &self.names);
        tree.query_boxes(region, |p, leaf| match names[p] {
            [_, NONE] => ControlFlow::Continue(()),
            [s, g] => visit(s, g, leaf),
        })?;
        self.query_extras(region, visit)
    }

    /// Whether no leaf of the tree is masked.
    pub(super) fn unmasked(&self) -> bool {
        self.masked == 0
    }

    /// [`Statics::query`] of the extras alone (the objects changed since the tree was
    /// built).
    pub(super) fn query_extras(
        &self,
        region: &Aabb<D>,
        mut visit: impl FnMut(u32, u32, &Aabb<D>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if self.extras.is_empty() {
            return ControlFlow::Continue(());
        }
        let t = &self.extra_tree;
        t.query_boxes(region, |q, leaf| {
            let i = t.ids[q] as usize;
            visit(self.extras[i], self.extra_gens[i], leaf)
        })
    }

    /// Each live static object whose leaf box the ray (or swept box) enters at
    /// `t <= *cut`: its slot, generation and `t`, nearer subtrees of each tree first;
    /// `visit` may lower `*cut` or stop.
    pub(super) fn cast<S: Slab<D>>(
        &self,
        ray: &S,
        cut: &mut f32,
        mut visit: impl FnMut(u32, u32, f32, &mut f32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let (tree, names) = (&self.tree, &self.names);
        tree.cast(ray, cut, |p, t, cut| match names[p] {
            [_, NONE] => ControlFlow::Continue(()),
            [s, g] => visit(s, g, t, cut),
        })?;
        if self.extras.is_empty() {
            return ControlFlow::Continue(());
        }
        let x = &self.extra_tree;
        x.cast(ray, cut, |q, t, cut| {
            let i = x.ids[q] as usize;
            visit(self.extras[i], self.extra_gens[i], t, cut)
        })
    }

    /// Checks the type's invariants against the world as of the last update: both trees
    /// valid; the unmasked leaves and the extras together exactly the live static
    /// objects, each once, with its generation and its box grown by the tree margin; the
    /// masked count. O(n log n).
    pub(super) fn validate(&self, slots: &Slots, store: &Store<D>, margin: f32) -> Result<(), Error> {
        let bad = |detail: String| Err(Error::Invariant { detail: format!("static tree: {detail}") });
        self.tree.validate()?;
        self.extra_tree.validate()?;
        if !self.built {
            return Ok(());
        }
        if self.names.len() != self.tree.len() {
            return bad(format!("{} names for {} leaves", self.names.len(), self.tree.len()));
        }
        let masked = self.names.iter().filter(|&&[_, g]| g == NONE).count();
        if masked != self.masked {
            return bad(format!("{masked} masked leaves, counted {}", self.masked));
        }
        let n = self.extras.len();
        if self.extra_gens.len() != n || self.extra_tree.len() != n {
            return bad(format!(
                "{n} extras, {} generations, {} leaves",
                self.extra_gens.len(),
                self.extra_tree.len()
            ));
        }
        let grown = |s: u32| store.boxes[s as usize].grown(tree_margin(margin));
        let mut held = Vec::with_capacity(self.tree.len() + n);
        for (p, &s) in self.tree.ids.iter().enumerate() {
            if self.names[p][1] == NONE {
                continue;
            }
            if self.names[p] != [s, slots.generations[s as usize]] {
                return bad(format!("leaf {p}'s slot or generation is not slot {s}'s"));
            }
            if self.tree.leaves[p] != grown(s) {
                return bad(format!("leaf {p} does not hold slot {s}'s grown box"));
            }
            held.push(s);
        }
        for (q, &i) in self.extra_tree.ids.iter().enumerate() {
            let s = self.extras[i as usize];
            if self.extra_gens[i as usize] != slots.generations[s as usize]
                || self.extra_tree.leaves[q] != grown(s)
            {
                return bad(format!("extra {i} (slot {s}) is not as its object is"));
            }
            held.push(s);
        }
        held.sort_unstable();
        let live = (0..store.len()).filter(|&s| slots.alive[s] && store.kinds[s] == Kind::Static);
        if !live.eq(held.iter().map(|&s| s as usize)) {
            return bad("the tree and the extras do not hold exactly the live static objects".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::world::tests::settle;
    use crate::world::{Filter, Kind, World};
    use crate::{Aabb, Config, Error};

    #[test]
    fn validate_catches_a_stale_static_generation() {
        let mut w = World::<2>::new(Config::default()).unwrap();
        let statics = [Aabb::new([0.0; 2], [1.0; 2]), Aabb::new([2.0; 2], [3.0; 2])];
        w.extend(&statics, Kind::Static).unwrap();
        w.insert(Aabb::new([0.5; 2], [2.5; 2]), Kind::Dynamic).unwrap();
        w.update().unwrap();
        w.validate().unwrap();
        w.scratch.search.statics.names[1][1] += 1;
        match w.validate() {
            Err(Error::Invariant { detail }) => assert!(detail.contains("generation"), "{detail}"),
            other => panic!("validate returned {other:?}"),
        }
    }

    /// Doors: a few statics changed a frame mask their leaves and join the extras, and the
    /// tree is rebuilt once they pass the bound; the world stays valid throughout, and
    /// its pairs are the brute-force ones.
    #[test]
    fn few_static_changes_mask_leaves_then_rebuild() {
        let mut w = World::<2>::new(Config::default()).unwrap();
        let mut objs = Vec::new();
        for i in 0..4000 {
            let (x, y) = ((i % 64) as f32 * 2.0, (i / 64) as f32 * 2.0);
            let b = Aabb::new([x, y], [x + 1.5, y + 1.5]);
            objs.push((w.insert(b, Kind::Static).unwrap(), b, Kind::Static, Filter::default()));
        }
        for i in 0..50 {
            let x = (i * 5 % 120) as f32;
            let b = Aabb::new([x, x * 0.5], [x + 1.0, x * 0.5 + 1.0]);
            objs.push((w.insert(b, Kind::Dynamic).unwrap(), b, Kind::Dynamic, Filter::default()));
        }
        settle(&mut w, &objs, "build");
        let (mut saw_extras, mut saw_rebuild) = (false, false);
        for frame in 0..40 {
            for k in 0..10 {
                let i = (frame * 97 + k * 401) % 4000;
                let d = if frame % 2 == 0 { 0.75 } else { -0.75 };
                let b = objs[i].1;
                objs[i].1 = Aabb::new([b.min[0] + d, b.min[1]], [b.max[0] + d, b.max[1]]);
                w.set_aabb(objs[i].0, objs[i].1).unwrap();
            }
            settle(&mut w, &objs, &format!("frame {frame}"));
            let st = &w.scratch.search.statics;
            saw_extras |= !st.extras.is_empty();
            saw_rebuild |= saw_extras && st.masked == 0 && st.extras.is_empty();
        }
        assert!(saw_extras && saw_rebuild, "extras {saw_extras}, rebuilt {saw_rebuild}");
    }
}
