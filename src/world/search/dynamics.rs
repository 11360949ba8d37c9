//! The dynamic tree: a "fat" box for each live dynamic object (its box grown by the tree
//! margin and by [`FAT`](super::FAT) of its size), the maps between its leaves and the
//! objects' slots, and the dynamic objects without a leaf beside it.
//!
//! - Input: each frame's changed slots, the store. Output: for each live dynamic object a
//!   leaf whose box holds its box grown by the tree margin, with a copy of its box grown by
//!   the margin beside the leaf (`leaf_box`), or a place among the extras, whose small
//!   tree walks and queries visit too.
//! - Changes ([`Dynamics::follow`]): an object that stays inside its leaf costs the tree
//!   nothing; one that leaves it grows the leaf and its ancestors (`Bvh::enlarge`,
//!   O(depth)); one that goes far (see `far`: a teleport, a parking spot) gives its leaf
//!   up rather than stretch it across the world. An object without a leaf takes the last
//!   freed one where that lies near, else joins the extras, whose tree is rebuilt on a
//!   frame where one of them changed. The tree is rebuilt ([`Dynamics::wants_build`])
//!   once [`REBUILD_SHARE`] of its leaves have grown or been freed, or once the extras
//!   pass [`EXTRAS_MIN`] plus that share of the leaves (then in the same frame).
//! - Cost: O(changed) and O(depth) a grown leaf; O(n) a rebuild, O(e log e) the extras'
//!   tree. Threads: the builds as `Bvh::build_sah` and `Bvh::build_for_queries`; the rest
//!   sequential. Allocation: the trees, maps and extras, kept.
//! - Source: Box2D v3's broad phase (fat AABBs with a margin in a tree for dynamic
//!   proxies, enlarged AABBs, a rebuild once the tree is loose).

use super::scratch::Scratch;
use super::{far, fat, holds, tree_margin, NONE, SAH_FRAMES};
use crate::bvh::Bvh;
use crate::time::{Duration, Instant};
use crate::world::handle::Slots;
use crate::world::store::Store;
use crate::{Aabb, Error};

/// The dynamic tree is rebuilt once this share of its leaves have grown or been freed
/// since it was built (a grown leaf loosens every node above it), or once the objects
/// without a leaf pass [`EXTRAS_MIN`] and this share of the leaves.
const REBUILD_SHARE: usize = 8;

/// Objects without a leaf that never call for a rebuild of the dynamic tree.
const EXTRAS_MIN: usize = 256;

/// The position of a slot in [`Dynamics::extras`].
const EXTRA: u32 = u32::MAX - 1;

/// Whether slot `s` holds a live dynamic object now.
fn live_dynamic<const D: usize>(slots: &Slots, store: &Store<D>, s: u32) -> bool {
    slots.alive[s as usize] && store.kinds[s as usize].moves()
}

/// The dynamic tree, its maps and the objects without a leaf (module docs).
#[derive(Clone, Debug, Default)]
pub(super) struct Dynamics<const D: usize> {
    /// The tree over the fat boxes.
    pub(super) tree: Bvh<D>,
    /// The slot at each leaf position (`NONE`: a free leaf), and each slot's position
    /// (`NONE`: none, `EXTRA`: among the extras). INVARIANT: the two agree, and a
    /// position holds `NONE` iff it is in `free`.
    pub(super) pos_slot: Vec<u32>,
    pub(super) slot_pos: Vec<u32>,
    /// Free leaf positions.
    free: Vec<u32>,
    /// Live dynamic slots without a leaf (changed far from theirs, inserted far from the
    /// last freed leaf, or turned dynamic since the tree was built), and a tree over
    /// their boxes (grown by the tree margin; its ids index `extras`), rebuilt on each
    /// frame where one of them changed: walks and queries meet them through it, so an
    /// object without a leaf costs O(log e), not a pass over the list.
    pub(super) extras: Vec<u32>,
    pub(super) extra_tree: Bvh<D>,
    /// The box of the object at each leaf position grown by the margin (current for every
    /// clean object), read beside the tree rather than from the store by slot.
    pub(super) leaf_box: Vec<Aabb<D>>,
    /// Live dynamic objects unchanged this frame.
    pub(super) clean: usize,
    /// Leaves grown or freed since the tree was built, and whether that (or the extras'
    /// count) calls for a rebuild not yet done.
    loosened: usize,
    rebuild: bool,
    /// A tree was built, and the frame it was last built in.
    built: bool,
    built_at: u64,
}

impl<const D: usize> Dynamics<D> {
    /// Slot `s`'s leaf position, if it has a leaf.
    #[inline]
    pub(super) fn leaf_of(&self, s: u32) -> Option<u32> {
        self.slot_pos.get(s as usize).copied().filter(|&p| p < EXTRA)
    }

    /// Whether a tree was built.
    pub(super) fn built(&self) -> bool {
        self.built
    }

    /// Starts a frame with the changed slots `list`: counts the clean dynamic objects, and
    /// gives every slot a position.
    pub(super) fn begin(&mut self, slots: &Slots, store: &Store<D>, list: &[u32]) {
        self.clean = store.moving - list.iter().filter(|&&s| live_dynamic(slots, store, s)).count();
        if self.slot_pos.len() < store.len() {
            let more = store.len() - self.slot_pos.len();
            crate::world::reserve_slack(&mut self.slot_pos, more);
            self.slot_pos.resize(store.len(), NONE);
        }
    }

    /// Follows the changed slots `list` (module docs): a live dynamic object keeps its
    /// leaf, grows it, gives it up for the extras, or takes the last freed leaf; any other
    /// object gives up what it held. `freed(p)` is told of each leaf freed, and
    /// `grown(tree, p)` of each leaf grown, once the nodes above it have grown. Returns
    /// whether the extras changed.
    pub(super) fn follow(
        &mut self,
        slots: &Slots,
        store: &Store<D>,
        list: &[u32],
        margin: f32,
        mut freed: impl FnMut(usize),
        mut grown: impl FnMut(&Bvh<D>, usize),
    ) -> bool {
        let mut extras_changed = false;
        for &s in list {
            let p = self.slot_pos[s as usize];
            if !live_dynamic(slots, store, s) {
                if p == EXTRA {
                    self.slot_pos[s as usize] = NONE;
                } else if p != NONE {
                    self.free_leaf(s, p);
                    freed(p as usize);
                }
                continue;
            }
            let b = store.boxes[s as usize].grown(margin);
            let fb = fat(&store.boxes[s as usize], margin);
            if p == EXTRA {
                extras_changed = true;
            } else if p == NONE {
                // The last freed leaf, unless it lies far away: then none.
                match self.free.pop() {
                    Some(q) if !far(&self.tree.leaves[q as usize], &fb) => {
                        self.pos_slot[q as usize] = s;
                        self.slot_pos[s as usize] = q;
                        self.leaf_box[q as usize] = b;
                        if self.tree.enlarge(q as usize, &fb) {
                            grown(&self.tree, q as usize);
                        }
                    }
                    q => {
                        self.free.extend(q);
                        self.slot_pos[s as usize] = EXTRA;
                        self.extras.push(s);
                        extras_changed = true;
                    }
                }
            } else {
                let t = store.boxes[s as usize].grown(tree_margin(margin));
                let leaf = &self.tree.leaves[p as usize];
                if holds(leaf, &t) {
                    self.leaf_box[p as usize] = b;
                } else if far(leaf, &fb) {
                    // Gone far (a teleport, a parking spot): its leaf is freed rather
                    // than stretched across the world.
                    self.free_leaf(s, p);
                    freed(p as usize);
                    self.slot_pos[s as usize] = EXTRA;
                    self.extras.push(s);
                    extras_changed = true;
                } else {
                    self.leaf_box[p as usize] = b;
                    if self.tree.enlarge(p as usize, &fb) {
                        grown(&self.tree, p as usize);
                    }
                    self.loosened += 1;
                }
            }
        }
        let slot_pos = &self.slot_pos;
        let before = self.extras.len();
        self.extras.retain(|&s| slot_pos[s as usize] == EXTRA);
        extras_changed | (self.extras.len() != before)
    }

    /// Slot `s` gives up its leaf `p`.
    fn free_leaf(&mut self, s: u32, p: u32) {
        self.pos_slot[p as usize] = NONE;
        self.free.push(p);
        self.slot_pos[s as usize] = NONE;
        self.loosened += 1;
    }

    /// Whether the tree is to be rebuilt now: the extras never wait for a later frame, so
    /// past their bound the tree is rebuilt whatever changed; a tree loosened by grown or
    /// freed leaves is rebuilt on a frame that walks it (where every dynamic object
    /// changed, none does: see `walk`).
    pub(super) fn wants_build(&mut self) -> bool {
        let leaves = self.tree.len();
        let crowded = self.extras.len() > EXTRAS_MIN + leaves / REBUILD_SHARE;
        self.rebuild |= self.loosened > leaves / REBUILD_SHARE;
        crowded || (self.rebuild && self.clean > 0)
    }

    /// Rebuilds the extras' tree over their boxes (gathered into `boxes`); returns the
    /// time the build took.
    pub(super) fn build_extras(
        &mut self,
        store: &Store<D>,
        margin: f32,
        boxes: &mut Vec<Aabb<D>>,
    ) -> Duration {
        boxes.clear();
        boxes.extend(self.extras.iter().map(|&s| store.boxes[s as usize]));
        let t = Instant::now();
        self.extra_tree.build_for_queries(boxes, tree_margin(margin));
        t.elapsed()
    }

    /// Rebuilds the tree over the live dynamic objects' fat boxes (gathered into
    /// `scratch.gather`, their slots into `scratch.gather_slots`) in frame `frame`, each
    /// object in a leaf, none among the extras; each new leaf's old position (`NONE`: none)
    /// into `scratch.order`, for the lists to follow their objects. Returns the time the
    /// tree's build took.
    pub(super) fn build(
        &mut self,
        slots: &Slots,
        store: &Store<D>,
        margin: f32,
        frame: u64,
        scratch: &mut Scratch<D>,
    ) -> Duration {
        let (boxes, ids) = (&mut scratch.gather, &mut scratch.gather_slots);
        boxes.clear();
        ids.clear();
        for (s, &alive) in slots.alive.iter().enumerate() {
            if alive && store.kinds[s].moves() {
                boxes.push(fat(&store.boxes[s], margin));
                ids.push(s as u32);
            }
        }
        // The surface area build walks faster and costs about five times the Morton-order
        // one: worth it for a tree that lasts (where the one before lasted `SAH_FRAMES`
        // frames), not where crowds loosen it every few frames, nor for the first one (a
        // world's build costs no more than one search of every box).
        // PERF: benches/world.rs (`move_1`, `move_10`).
        let t = Instant::now();
        if self.built && frame - self.built_at >= SAH_FRAMES {
            self.tree.build_sah(boxes, 0.0);
        } else {
            self.tree.build_for_queries(boxes, 0.0);
        }
        let took = t.elapsed();
        self.built_at = frame;
        let from = &mut scratch.order;
        from.clear();
        from.extend(self.tree.ids.iter().map(|&id| {
            let s = ids[id as usize] as usize;
            self.slot_pos.get(s).copied().filter(|&p| p < EXTRA).unwrap_or(NONE)
        }));
        let n = self.tree.len();
        self.slot_pos.clear();
        self.slot_pos.resize(store.len(), NONE);
        self.pos_slot.clear();
        self.pos_slot.resize(n, NONE);
        self.leaf_box.clear();
        for (p, &id) in self.tree.ids.iter().enumerate() {
            let s = ids[id as usize];
            self.pos_slot[p] = s;
            self.slot_pos[s as usize] = p as u32;
            self.leaf_box.push(store.boxes[s as usize].grown(margin));
        }
        // Fat boxes are grown by the tree margin, never negative: every live dynamic
        // object has a leaf, even one that a negative margin turns inside out.
        self.free.clear();
        self.extras.clear();
        self.extra_tree.build_for_queries(&[], 0.0);
        self.loosened = 0;
        self.rebuild = false;
        self.built = true;
        took
    }

    /// Heap bytes held, from capacities.
    pub(super) fn bytes(&self) -> usize {
        self.tree.bytes()
            + self.extra_tree.bytes()
            + 4 * (self.pos_slot.capacity()
                + self.slot_pos.capacity()
                + self.free.capacity()
                + self.extras.capacity())
            + std::mem::size_of::<Aabb<D>>() * self.leaf_box.capacity()
    }

    /// Checks the type's invariants against the world as of the last update: both trees
    /// valid; every live dynamic object in a leaf whose box holds its box grown by the
    /// tree margin, with the maps agreeing and a current copy of its box grown by the
    /// margin beside the leaf, or among the extras, whose tree holds each one's box grown
    /// by the tree margin; every other position a free leaf, each once. O(n log n).
    pub(super) fn validate(&self, slots: &Slots, store: &Store<D>, margin: f32) -> Result<(), Error> {
        let bad = |detail: String| Err(Error::Invariant { detail: format!("dynamic tree: {detail}") });
        self.tree.validate()?;
        self.extra_tree.validate()?;
        if !self.built {
            return Ok(());
        }
        let n = self.tree.len();
        if self.pos_slot.len() != n || self.leaf_box.len() != n {
            return bad(format!(
                "{} slots and {} boxes for {n} leaves",
                self.pos_slot.len(),
                self.leaf_box.len()
            ));
        }
        for s in (0..store.len()).filter(|&s| live_dynamic(slots, store, s as u32)) {
            let b = store.boxes[s].grown(margin);
            let t = store.boxes[s].grown(tree_margin(margin));
            match self.slot_pos.get(s).copied().unwrap_or(NONE) {
                EXTRA if self.extras.contains(&(s as u32)) => {}
                p if p < EXTRA => {
                    if self.pos_slot.get(p as usize) != Some(&(s as u32)) {
                        return bad(format!("slot {s} and leaf {p} disagree"));
                    }
                    if !holds(&self.tree.leaves[p as usize], &t) {
                        return bad(format!("leaf {p} does not hold slot {s}'s box"));
                    }
                    if self.leaf_box.get(p as usize) != Some(&b) {
                        return bad(format!("leaf {p} keeps a stale copy of slot {s}'s box"));
                    }
                }
                p => return bad(format!("live dynamic slot {s} has no leaf ({p:#x})")),
            }
        }
        for (p, &s) in self.pos_slot.iter().enumerate().filter(|&(_, &s)| s != NONE) {
            if self.slot_pos.get(s as usize) != Some(&(p as u32)) {
                return bad(format!("leaf {p} holds slot {s}, which is not at it"));
            }
        }
        let mut free = self.free.clone();
        free.sort_unstable();
        free.dedup();
        let unheld = self.pos_slot.iter().filter(|&&s| s == NONE).count();
        if free.len() != self.free.len() || unheld != free.len() {
            return bad(format!("{} free leaves listed, {unheld} without a slot", self.free.len()));
        }
        if let Some(&p) = free.iter().find(|&&p| self.pos_slot.get(p as usize) != Some(&NONE)) {
            return bad(format!("free leaf {p} holds a slot"));
        }
        if self.extra_tree.len() != self.extras.len() {
            return bad(format!("{} extras, {} in their tree", self.extras.len(), self.extra_tree.len()));
        }
        for (q, &i) in self.extra_tree.ids.iter().enumerate() {
            let s = self.extras[i as usize];
            if self.slot_pos.get(s as usize) != Some(&EXTRA)
                || self.extra_tree.leaves[q] != store.boxes[s as usize].grown(tree_margin(margin))
            {
                return bad(format!("extra {i} (slot {s}) is not as its object is"));
            }
        }
        Ok(())
    }

    /// Test access: the tree is to be rebuilt on the next frame that walks it.
    #[cfg(test)]
    pub(super) fn call_for_rebuild(&mut self) {
        self.rebuild = true;
    }

    /// Test access: the frame the tree was last built in.
    #[cfg(test)]
    pub(super) fn built_at(&self) -> u64 {
        self.built_at
    }
}
