//! The trees' upkeep before each frame's walks: the static tree's (`statics`) and the
//! static lists near its changes dropped; each changed dynamic object's leaf freed, grown
//! or taken; the dynamic tree rebuilt once loose (see the module docs of `world::search`).
//!
//! - Input: the changed slots, the store, the margin. Output: the trees, maps and lists
//!   as the walks need them (the search's INVARIANT).
//! - Cost: O(changed) and O(depth) a grown leaf; O(n) a rebuild.
//! - Static changes make stale only the static lists whose fat boxes meet a changed box,
//!   O(lists log changes), in parallel; a rebuild after a failed frame, or more changes
//!   than the static tree follows, make every list stale.
//! - Threads: the builds as `Bvh::build_sah` and `Bvh::build_for_queries`; the rest
//!   sequential.
//! - Allocation: the trees' kept buffers; a static rebuild gives back what only it needs.
//! - Source: Box2D v3's broad phase (enlarged AABBs, a rebuild once the tree is loose).

use super::statics::{Stale, Statics};
use super::{far, fat, holds, tree_margin, Near, Search, EXTRA, EXTRAS_MIN, NONE, REBUILD_SHARE, SAH_FRAMES};
use crate::world::store::Store;
use crate::world::{dirty::Dirty, handle::Slots};
use rayon::prelude::*;
use std::ops::ControlFlow;
use std::time::Instant;

impl<const D: usize> Search<D> {
    /// Brings the trees up to date with the changed slots (module docs). Idempotent for a
    /// given state, so a frame that fails after it and is retried does it again safely.
    pub(super) fn upkeep(&mut self, slots: &Slots, store: &Store<D>, dirty: &Dirty, margin: f32) {
        let list = dirty.list();
        let live_dynamic = |s: u32| slots.alive[s as usize] && store.kinds[s as usize].moves();
        self.clean_dynamics = store.moving - list.iter().filter(|&&s| live_dynamic(s)).count();
        match self.statics.upkeep(slots, store, dirty, margin, self.frames) {
            Stale::All => self.stale_static_lists(),
            Stale::Near => self.arena_live -= stale_lists_near(&mut self.near, &self.statics),
            Stale::None => {}
        }
        if self.slot_pos.len() < store.len() {
            let more = store.len() - self.slot_pos.len();
            crate::world::reserve_slack(&mut self.slot_pos, more);
            self.slot_pos.resize(store.len(), NONE);
        }
        if !self.dynamic_built {
            return self.build_dynamics(slots, store, margin);
        }
        // Where every dynamic object changed, no walk reads the dynamic lists this frame:
        // rather than kept up to date leaf by leaf, they all go stale at once.
        let lists = self.clean_dynamics > 0;
        if !lists {
            self.leaf_lists.stale_all();
        }
        let mut extras_changed = false;
        for &s in list {
            let p = self.slot_pos[s as usize];
            if !live_dynamic(s) {
                if p == EXTRA {
                    self.slot_pos[s as usize] = NONE;
                } else if p != NONE {
                    self.pos_slot[p as usize] = NONE;
                    self.drop_list(p as usize);
                    self.free.push(p);
                    self.slot_pos[s as usize] = NONE;
                    self.loosened += 1;
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
                    Some(q) if !far(&self.dynamics.leaves[q as usize], &fb) => {
                        self.pos_slot[q as usize] = s;
                        self.slot_pos[s as usize] = q;
                        self.leaf_box[q as usize] = b;
                        if self.dynamics.enlarge(q as usize, &fb) && lists {
                            self.grown_dynamic(q as usize);
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
                let leaf = &self.dynamics.leaves[p as usize];
                if holds(leaf, &t) {
                    self.leaf_box[p as usize] = b;
                } else if far(leaf, &fb) {
                    // Gone far (a teleport, a parking spot): its leaf is freed rather
                    // than stretched across the world.
                    self.pos_slot[p as usize] = NONE;
                    self.drop_list(p as usize);
                    self.free.push(p);
                    self.slot_pos[s as usize] = EXTRA;
                    self.extras.push(s);
                    self.loosened += 1;
                    extras_changed = true;
                } else {
                    self.leaf_box[p as usize] = b;
                    if self.dynamics.enlarge(p as usize, &fb) && lists {
                        self.grown_dynamic(p as usize);
                    }
                    self.loosened += 1;
                }
            }
        }
        let slot_pos = &self.slot_pos;
        let before = self.extras.len();
        self.extras.retain(|&s| slot_pos[s as usize] == EXTRA);
        extras_changed |= self.extras.len() != before;
        let leaves = self.dynamics.len();
        // Objects without a leaf never wait for a later frame: past their bound the tree is
        // rebuilt now, whatever moved. A tree loosened by grown leaves is rebuilt on a frame
        // that walks it: where every dynamic object changed, none does (see `walk`).
        let crowded = self.extras.len() > EXTRAS_MIN + leaves / REBUILD_SHARE;
        self.rebuild |= self.loosened > leaves / REBUILD_SHARE;
        if crowded || (self.rebuild && self.clean_dynamics > 0) {
            self.build_dynamics(slots, store, margin);
        } else if extras_changed {
            self.build_extras(store, margin);
        }
    }

    /// Rebuilds the tree over the objects without a leaf.
    fn build_extras(&mut self, store: &Store<D>, margin: f32) {
        self.gather.clear();
        self.gather.extend(self.extras.iter().map(|&s| store.boxes[s as usize]));
        let t = Instant::now();
        self.extra_tree.build_for_queries(&self.gather, tree_margin(margin));
        self.times.builds += t.elapsed();
    }

    /// Every static list is dropped.
    fn stale_static_lists(&mut self) {
        for l in self.near.iter_mut() {
            l.generation = NONE;
        }
        self.arena.clear();
        self.arena_live = 0;
    }

    /// Dynamic leaf `q` grew: its own list goes stale, and it is put in (or its box
    /// updated in) every valid list of a leaf it meets. O(log n + k) for k leaves met.
    fn grown_dynamic(&mut self, q: usize) {
        self.leaf_lists.stale(q);
        let b = self.dynamics.leaves[q];
        let (lists, leaves) = (&mut self.leaf_lists, &self.dynamics.leaves);
        let _ = self.dynamics.query(&b, |r| {
            if r != q {
                lists.grown(r, &leaves[r], q as u32, &b);
            }
            ControlFlow::Continue(())
        });
    }

    /// The static list kept at leaf position `p`, if any, is dropped (its leaf was freed).
    fn drop_list(&mut self, p: usize) {
        if let Some(l) = self.near.get_mut(p).filter(|l| l.generation != NONE) {
            self.arena_live -= l.len as usize;
            l.generation = NONE;
        }
    }

    /// Moves the static lists to their objects' new leaf positions, in place: the list at
    /// new position `p` is the one at old position `from[p]` (`NONE`: none; no old position
    /// twice), and a list no new position takes is dropped. `from` is extended into a
    /// whole permutation (each new position without a list takes an old one that is
    /// dropped), which is applied by following its cycles, with `taken` as the marks.
    /// O(old + new), and nothing allocated where the arrays are as long as before.
    fn follow_lists(&mut self, from: &mut Vec<u32>) {
        let (n_old, n_new) = (self.near.len(), from.len());
        let m = n_old.max(n_new);
        self.near.resize(m, Near::NO_LIST);
        from.resize(m, NONE);
        let taken = &mut self.taken;
        taken.clear();
        taken.resize(m.div_ceil(64), 0);
        let bit = |t: &[u64], i: usize| t[i / 64] >> (i % 64) & 1 != 0;
        for &i in from.iter().filter(|&&i| (i as usize) < n_old) {
            taken[i as usize / 64] |= 1 << (i % 64);
        }
        // Lists left behind are dropped; their places go to the positions without one
        // (as many old positions are untaken as new ones lack a list).
        let mut free = 0;
        for f in from.iter_mut() {
            if (*f as usize) < n_old {
                continue;
            }
            while bit(taken, free) {
                free += 1;
            }
            let l = &mut self.near[free];
            if l.generation != NONE {
                self.arena_live -= l.len as usize;
            }
            *l = Near::NO_LIST;
            *f = free as u32;
            free += 1;
        }
        // The permutation's cycles: position `p` takes what was at `from[p]`.
        taken.fill(0);
        for start in 0..m {
            if bit(taken, start) {
                continue;
            }
            let first = self.near[start];
            let mut j = start;
            loop {
                taken[j / 64] |= 1 << (j % 64);
                let k = from[j] as usize;
                if k == start {
                    self.near[j] = first;
                    break;
                }
                self.near[j] = self.near[k];
                j = k;
            }
        }
        self.near.truncate(n_new);
        from.truncate(n_new);
    }

    /// Rebuilds the dynamic tree over the live dynamic objects' fat boxes.
    fn build_dynamics(&mut self, slots: &Slots, store: &Store<D>, margin: f32) {
        self.gather.clear();
        self.gather_slots.clear();
        for (s, &alive) in slots.alive.iter().enumerate() {
            if alive && store.kinds[s].moves() {
                self.gather.push(fat(&store.boxes[s], margin));
                self.gather_slots.push(s as u32);
            }
        }
        // The surface area build walks faster and costs about five times the Morton-order
        // one: worth it for a tree that lasts (where the one before lasted `SAH_FRAMES`
        // frames), not where crowds loosen it every few frames, nor for the first one (a
        // world's build costs no more than one search of every box).
        // PERF: benches/world.rs (`move_1`, `move_10`).
        let t = Instant::now();
        if self.dynamic_built && self.frames - self.dynamic_built_at >= SAH_FRAMES {
            self.dynamics.build_sah(&self.gather, 0.0);
        } else {
            self.dynamics.build_for_queries(&self.gather, 0.0);
        }
        self.times.builds += t.elapsed();
        self.dynamic_built_at = self.frames;
        // New positions: every dynamic list is stale, and each object's static list
        // follows it from its old leaf (`from`: each new leaf's old position, in the walks'
        // scratch, which every frame rewrites).
        let n = self.dynamics.len();
        let mut from = std::mem::take(&mut self.order);
        from.clear();
        from.extend(self.dynamics.ids.iter().map(|&id| {
            let s = self.gather_slots[id as usize] as usize;
            self.slot_pos.get(s).copied().filter(|&p| p < EXTRA).unwrap_or(NONE)
        }));
        self.follow_lists(&mut from);
        self.order = from;
        self.leaf_lists.reset(n);
        self.slot_pos.clear();
        self.slot_pos.resize(store.len(), NONE);
        self.pos_slot.clear();
        self.pos_slot.resize(n, NONE);
        self.leaf_box.clear();
        for (p, &id) in self.dynamics.ids.iter().enumerate() {
            let s = self.gather_slots[id as usize];
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
        self.dynamic_built = true;
    }
}

/// The static lists whose fat boxes meet one of the frame's static changes are dropped:
/// a list holds the static objects that met its fat box when it was made, so only a
/// change that meets the fat box can make it wrong. Returns the entries dropped.
/// O(lists log changes), in fixed chunks on the caller's pool.
fn stale_lists_near<const D: usize>(near: &mut [Near<D>], statics: &Statics<D>) -> usize {
    near.par_chunks_mut(1024)
        .map(|chunk| {
            let mut dropped = 0;
            for l in chunk.iter_mut().filter(|l| l.generation != NONE) {
                if statics.changed(&l.fat) {
                    dropped += l.len as usize;
                    l.generation = NONE;
                }
            }
            dropped
        })
        .sum()
}
