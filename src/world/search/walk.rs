//! The walks: for each changed object, the clean objects near it, each tested against the
//! object's state as of the last update and as of now, keeping only the pairs that ended
//! or began.
//!
//! - Input: a chunk of the dirty list (positions, in Morton order of the boxes), the store,
//!   the snapshots, the trees and the static lists. Output: the chunk's old and new pairs,
//!   and the static lists it made, in its [`Part`].
//! - Static objects: from the object's list, where the list is of the current static tree
//!   and its fat box holds the walk's region; else from a walk of the static tree, which
//!   makes the list anew.
//! - Dynamic objects: from the list of the object's leaf (the other leaves whose boxes
//!   meet its box), where the leaf holds the region and the list is valid; else from a
//!   walk of the dynamic tree, which makes the list anew. A walk down the dynamic tree is
//!   some thirty nodes, each a likely cache miss; a list is one run of memory. (Four or
//!   eight walks run in step, to keep several node loads in flight, were slower:
//!   `benches/world.rs`, `move_10`.)
//! - Cost: O(log n + k) a changed object for k objects met, O(k) where it reads lists.
//!   A chunk first hints its objects' slot entries, list headers and lists into the
//!   cache (`prefetch_chunk`), so their misses overlap. Threads: one chunk is one task.
//!   Allocation: the part's kept vectors.
//! - Source: Box2D v3's broad phase (the moved proxies query the trees).

use super::leaf_lists::DYN_LIST_MAX;
use super::listed::{Entry, Grid, Listed, Meets};
use super::{fat, holds, pair, Part, Search, EXTRA, NONE};
use crate::world::store::{pairable, Snapshot, Store};
use crate::world::{dirty::Dirty, handle::Slots, Handle, Kind};
use crate::Aabb;
use std::ops::ControlFlow;

/// What every walk of a frame reads.
pub(super) struct Frame<'a, const D: usize> {
    pub(super) slots: &'a Slots,
    pub(super) store: &'a Store<D>,
    pub(super) dirty: &'a Dirty,
    pub(super) margin: f32,
}

impl<const D: usize> Frame<'_, D> {
    /// The kind of clean object `y` of the dynamic tree: dynamic, unless some object is
    /// kinematic (then as stored; a clean object's kind is the same then and now).
    #[inline(always)]
    fn moving_kind(&self, y: u32) -> Kind {
        if self.store.kinematics == 0 {
            Kind::Dynamic
        } else {
            self.store.kinds[y as usize]
        }
    }
}

/// A changed object as its walks see it: its slot, its states then and now (and their
/// boxes grown by the margin), and the region its walks cover (the union of both boxes).
#[derive(Clone, Copy, Debug)]
struct Mover<const D: usize> {
    s: u32,
    was: Snapshot<D>,
    is: Snapshot<D>,
    was_g: Aabb<D>,
    is_g: Aabb<D>,
    region: Aabb<D>,
    /// One object then and now (neither removed nor its slot refilled).
    same: bool,
    /// Objects whose grown boxes meet this box are skipped: the second half of a mover
    /// split in two ([`Mover::split`]) skips what the first met. Inside out (nothing)
    /// otherwise.
    skip: Aabb<D>,
    /// Whether its walk of the static tree makes it a static list (not for the first
    /// half of a split mover, whose region is where it was).
    lists: bool,
}

/// A box that meets nothing.
fn nothing<const D: usize>() -> Aabb<D> {
    Aabb { min: [f32::INFINITY; D], max: [f32::NEG_INFINITY; D] }
}

impl<const D: usize> Mover<D> {
    /// The object at position `i` of the dirty list; none where it was dead then and is
    /// now, or where the margin turns its region inside out.
    fn new(i: usize, f: &Frame<'_, D>) -> Option<Self> {
        // INVARIANT (`Store::before`): the snapshot at position `i` is slot `list[i]`'s.
        let s = f.dirty.list()[i];
        let was = f.store.before[i];
        let is = f.store.snapshot(f.slots, s as usize);
        let region = match (was.alive, is.alive) {
            (false, false) => return None,
            (true, false) => was.aabb,
            (false, true) => is.aabb,
            (true, true) => was.aabb.union(&is.aabb),
        }
        .grown(f.margin);
        if region.is_inverted() {
            return None;
        }
        let same = was.alive && is.alive && was.generation == is.generation;
        let (was_g, is_g) = (was.aabb.grown(f.margin), is.aabb.grown(f.margin));
        Some(Mover { s, was, is, was_g, is_g, region, same, skip: nothing(), lists: true })
    }

    /// A mover whose boxes then and now lie far apart (see `far`: a teleport, a parking
    /// spot) as two walks, one around each box, rather than one around both, which would
    /// visit everything between: the first meets the objects near where it was (tested
    /// against both states), the second those near where it is that the first did not.
    fn split(&self) -> Option<(Self, Self)> {
        if !(self.was.alive && self.is.alive && super::far(&self.was_g, &self.is_g)) {
            return None;
        }
        let then = Mover { region: self.was_g, lists: false, ..*self };
        let now = Mover { region: self.is_g, skip: self.was_g, ..*self };
        Some((then, now))
    }

    /// Clean object `y` met, with `g` its box grown by the margin (kept beside the tree or
    /// the list) and `yk` its kind, known from where it was met (a clean object in the
    /// static tree or a static list is static, in the dynamic tree or the extras dynamic),
    /// so the store is read only for a filter, and only where some object has one. Tested
    /// against both states; only a pair that began or ended (or whose handle changed: the
    /// slot was emptied and refilled) is kept, so the caller sorts the changes, not every
    /// pair of every mover. The box is read first: most objects met are near misses.
    #[inline(always)]
    fn meet(
        &self,
        y: u32,
        g: &Aabb<D>,
        yk: Kind,
        f: &Frame<'_, D>,
        old: &mut Vec<[Handle; 2]>,
        new: &mut Vec<[Handle; 2]>,
    ) {
        if !self.region.overlaps(g) || g.is_inverted() || self.skip.overlaps(g) || f.dirty.contains(y) {
            return;
        }
        self.settle(y, yk, self.was_g.overlaps(g), self.is_g.overlaps(g), f, old, new);
    }

    /// A static object met in a list ([`Listed`]: its box in steps of the list's fat box,
    /// which holds the region): as [`Mover::meet`], with the exact box loaded only where
    /// the steps leave a test unsettled.
    #[inline(always)]
    fn meet_listed(
        &self,
        e: &Entry<D>,
        grid: &Grid<D>,
        f: &Frame<'_, D>,
        old: &mut Vec<[Handle; 2]>,
        new: &mut Vec<[Handle; 2]>,
    ) {
        let outer = grid.outer(e);
        if !self.region.overlaps(&outer) || f.dirty.contains(e.slot) {
            return;
        }
        if self.skip.overlaps(&outer) {
            // The second half of a split mover, near the box it skips: the exact test.
            let g = f.store.boxes[e.slot as usize].grown(f.margin);
            return self.meet(e.slot, &g, Kind::Static, f, old, new);
        }
        let listed = Listed { outer, inner: grid.inner(e) };
        match (listed.meets(&self.was_g), listed.meets(&self.is_g)) {
            (Meets::Unsure, _) | (_, Meets::Unsure) => {
                let g = f.store.boxes[e.slot as usize].grown(f.margin);
                self.settle(
                    e.slot,
                    Kind::Static,
                    self.was_g.overlaps(&g),
                    self.is_g.overlaps(&g),
                    f,
                    old,
                    new,
                );
            }
            (then, now) => {
                self.settle(e.slot, Kind::Static, then == Meets::Yes, now == Meets::Yes, f, old, new)
            }
        }
    }

    /// The pairs of clean object `y` (kind `yk`) with this object then and now, given
    /// whether its box meets this object's grown box then (`was_meets`) and now.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn settle(
        &self,
        y: u32,
        yk: Kind,
        was_meets: bool,
        is_meets: bool,
        f: &Frame<'_, D>,
        old: &mut Vec<[Handle; 2]>,
        new: &mut Vec<[Handle; 2]>,
    ) {
        let yi = y as usize;
        debug_assert_eq!(f.store.kinds[yi], yk, "slot {y} met as {yk:?}");
        let yf = f.store.filter_for_pairs(yi);
        let hit = |me: &Snapshot<D>, mg: &Aabb<D>, meets: bool| {
            me.alive && pairable(me.kind, me.filter, yk, yf) && !mg.is_inverted() && meets
        };
        let (then, now) = (hit(&self.was, &self.was_g, was_meets), hit(&self.is, &self.is_g, is_meets));
        if self.same && then == now {
            return;
        }
        let gy = f.slots.generations[yi];
        if then {
            old.push(pair(self.s, self.was.generation, y, gy));
        }
        if now {
            new.push(pair(self.s, self.is.generation, y, gy));
        }
    }
}

impl<const D: usize> Search<D> {
    /// The pairs with clean objects of the changed objects at positions `at` of the dirty
    /// list, old into `part.old` and new into `part.new` (module docs).
    pub(super) fn walk_chunk(&self, at: &[u32], f: &Frame<'_, D>, part: &mut Part<D>) {
        self.prefetch_chunk(at, f);
        for &i in at {
            let Some(m) = Mover::new(i as usize, f) else { continue };
            match m.split() {
                Some((then, now)) => {
                    self.walk_one(&then, f, part);
                    self.walk_one(&now, f, part);
                }
                None => self.walk_one(&m, f, part),
            }
        }
    }

    /// The walks of one mover (or of one of its two halves): the static objects, the
    /// objects without a leaf, the dynamic tree.
    fn walk_one(&self, m: &Mover<D>, f: &Frame<'_, D>, part: &mut Part<D>) {
        self.walk_statics(m, f, part);
        let _ = self.extra_tree.query(&m.region, |q| {
            let y = self.extras[self.extra_tree.ids[q] as usize];
            let g = f.store.boxes[y as usize].grown(f.margin);
            m.meet(y, &g, f.moving_kind(y), f, &mut part.old, &mut part.new);
            ControlFlow::Continue(())
        });
        // Where every dynamic object changed, the tree holds none to meet.
        if self.clean_dynamics > 0 {
            self.walk_dynamics(m, f, part);
        }
    }

    /// Hints into the cache what the chunk's walks read first, in three passes over the
    /// chunk (each pass's loads hit what the pass before fetched): each object's slot
    /// entries; its list headers and its leaf's box; the lists' first entries. A walk
    /// reads these one after another, each a likely miss; fetched a chunk at a time they
    /// overlap. PERF: benches/world.rs (`move_10`).
    fn prefetch_chunk(&self, at: &[u32], f: &Frame<'_, D>) {
        use crate::kernels::par::prefetch;
        let slot = |i: u32| f.dirty.list()[i as usize] as usize;
        for &i in at {
            let s = slot(i);
            prefetch(&f.store.boxes[s]);
            if let Some(p) = self.slot_pos.get(s) {
                prefetch(p);
            }
        }
        for &i in at {
            let s = slot(i);
            if let Some(&p) = self.slot_pos.get(s).filter(|&&p| p < EXTRA) {
                if let Some(h) = self.near.get(p as usize) {
                    prefetch(h);
                }
                prefetch(&self.dynamics.leaves[p as usize]);
                self.leaf_lists.prefetch_head(p as usize);
            }
        }
        for &i in at {
            let s = slot(i);
            if let Some(&p) = self.slot_pos.get(s).filter(|&&p| p < EXTRA) {
                if let Some(e) = self.near.get(p as usize).and_then(|h| self.arena.get(h.start as usize)) {
                    prefetch(e);
                }
                self.leaf_lists.prefetch_list(p as usize);
            }
        }
    }

    /// The dynamic objects met by a changed object: from its leaf's list, where its leaf
    /// holds the region (every leaf whose box meets the region then meets the leaf's box,
    /// so is listed) and the list is valid; from a walk with the leaf's box that makes
    /// the list anew, where it is stale (a list past `DYN_LIST_MAX` is not kept: the leaf
    /// is marked crowded); else (no leaf, a region its leaf does not hold, a crowded
    /// leaf) from a walk with the region.
    fn walk_dynamics(&self, m: &Mover<D>, f: &Frame<'_, D>, part: &mut Part<D>) {
        let (old, new) = (&mut part.old, &mut part.new);
        let mut meet = |q: usize| {
            let y = self.pos_slot[q];
            if y != NONE {
                m.meet(y, &self.leaf_box[q], f.moving_kind(y), f, old, new);
            }
        };
        // The leaf whose list serves: one that holds the region, is not crowded, and has a
        // grid (a leaf near the ends of f32's range has none, and keeps no list).
        let leaf = match self.slot_pos.get(m.s as usize) {
            Some(&p) if p < EXTRA && holds(&self.dynamics.leaves[p as usize], &m.region) => Some(p as usize),
            _ => None,
        };
        let listed = leaf.filter(|&p| !self.leaf_lists.crowded(p));
        let Some((p, grid)) = listed.and_then(|p| Some((p, Grid::new(&self.dynamics.leaves[p])?))) else {
            let _ = self.dynamics.query(&m.region, |q| {
                meet(q);
                ControlFlow::Continue(())
            });
            return;
        };
        let leaf_box = &self.dynamics.leaves[p];
        if let Some(list) = self.leaf_lists.get(p) {
            for e in list {
                if grid.outer(e).overlaps(&m.region) {
                    meet(e.slot as usize);
                }
            }
        } else {
            let start = part.dyn_items.len();
            let items = &mut part.dyn_items;
            let mut listed = 0;
            let _ = self.dynamics.query(leaf_box, |q| {
                if q != p {
                    let b = &self.dynamics.leaves[q];
                    // Past the cap the list is not kept: no need to hold more.
                    if listed <= DYN_LIST_MAX {
                        items.push(grid.encode(q as u32, b));
                        listed += 1;
                    }
                    if b.overlaps(&m.region) {
                        meet(q);
                    }
                }
                ControlFlow::Continue(())
            });
            let len = part.dyn_items.len() - start;
            if len > DYN_LIST_MAX {
                part.dyn_items.truncate(start);
                part.dyn_fresh.push((p as u32, start as u32, NONE));
            } else {
                part.dyn_fresh.push((p as u32, start as u32, len as u32));
            }
        }
    }

    /// The static objects met by a changed object that is dynamic then or now: its list,
    /// where the list is of this static tree and its fat box holds the region; else a walk
    /// of the static tree, which makes the list anew for a fat box around the box it has
    /// now.
    fn walk_statics(&self, m: &Mover<D>, f: &Frame<'_, D>, part: &mut Part<D>) {
        let dynamic = |st: &Snapshot<D>| st.alive && st.kind == Kind::Dynamic;
        if !dynamic(&m.was) && !dynamic(&m.is) {
            return;
        }
        let (old, new) = (&mut part.old, &mut part.new);
        // The object's leaf: a list is kept by leaf position.
        let at = self.slot_pos.get(m.s as usize).copied().filter(|&p| p < EXTRA && dynamic(&m.is) && m.lists);
        // (Not for the first half of a split mover: its state now lies outside its
        // region, where a list's clipped boxes are not exact.)
        let list = at.and_then(|p| self.near.get(p as usize));
        let list = list.filter(|l| l.generation == self.static_generation && holds(&l.fat, &m.region));
        // A list is kept only where its fat box has a grid.
        match list.and_then(|l| Some((l, Grid::new(&l.fat)?))) {
            Some((l, grid)) => {
                for e in &self.arena[l.start as usize..(l.start + l.len) as usize] {
                    m.meet_listed(e, &grid, f, old, new);
                }
            }
            None => {
                let fat = at.map(|_| fat(&m.is.aabb, f.margin));
                // A fat box near the ends of f32's range has no grid, and keeps no list.
                let grid = fat.and_then(|fb| Grid::new(&fb));
                let q = fat.map_or(m.region, |fb| m.region.union(&fb));
                let start = part.lists.len();
                let lists = &mut part.lists;
                let _ = self.statics.query(&q, |y, _, leaf| {
                    // The leaf is the box grown by the tree margin: the pair test's box
                    // only where the margin is not negative.
                    let g = if f.margin < 0.0 { f.store.boxes[y as usize].grown(f.margin) } else { *leaf };
                    m.meet(y, &g, Kind::Static, f, old, new);
                    if let (Some(fb), Some(grid)) = (fat, grid) {
                        if fb.overlaps(&g) && !g.is_inverted() {
                            lists.push(grid.encode(y, &g));
                        }
                    }
                    ControlFlow::Continue(())
                });
                if let (Some(p), Some(fb), Some(_)) = (at, fat, grid) {
                    part.fresh.push((p, start as u32, (part.lists.len() - start) as u32, fb));
                }
            }
        }
    }
}
