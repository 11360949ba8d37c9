//! The upkeep before each frame's walks: the static tree brought up to date (`statics`)
//! and the static lists near its changes dropped; each changed dynamic object's leaf
//! kept, grown, freed or taken (`dynamics`), the lists of the leaves grown or freed kept
//! up to date; the dynamic tree rebuilt once loose, the lists following it.
//!
//! - Input: the changed slots, the store, the margin. Output: the trees, maps and lists
//!   as the walks need them (the search's INVARIANT).
//! - Cost: O(changed) and O(log n + k) a grown leaf for the k leaves it meets; O(n) a
//!   rebuild. Static changes make stale only the static lists whose fat boxes meet a
//!   changed box, O(lists log changes); a rebuild after a failed frame, or more changes
//!   than the static tree follows, make every list stale.
//! - Threads: the builds as `Bvh::build_sah` and `Bvh::build_for_queries`, the static
//!   lists' check in chunks on the caller's pool; the rest sequential.
//! - Allocation: the trees', lists' and scratch buffers, kept; a static rebuild gives back
//!   what only it needs.
//! - Source: Box2D v3's broad phase (enlarged AABBs, a rebuild once the tree is loose).

use super::statics::Stale;
use super::Search;
use crate::world::store::Store;
use crate::world::{dirty::Dirty, handle::Slots};

impl<const D: usize> Search<D> {
    /// Brings the trees and lists up to date with the changed slots (module docs).
    /// Idempotent for a given state, so a frame that fails after it and is retried does
    /// it again safely.
    pub(super) fn upkeep(&mut self, slots: &Slots, store: &Store<D>, changed: &Dirty, margin: f32) {
        let list = changed.list();
        self.dynamics.begin(slots, store, list);
        match self.statics.upkeep(slots, store, changed, margin, self.frames) {
            Stale::All => self.lists.statics.stale_all(),
            Stale::Near => self.lists.statics.stale_near(&self.statics),
            Stale::None => {}
        }
        if !self.dynamics.built() {
            return self.build_dynamics(slots, store, margin);
        }
        // Where every dynamic object changed, no walk reads the leaf lists this frame:
        // rather than kept up to date leaf by leaf, they all go stale at once.
        let keep = self.dynamics.clean > 0;
        if !keep {
            self.lists.leaves.stale_all();
        }
        let (near, leaves) = (&mut self.lists.statics, &mut self.lists.leaves);
        let extras_changed = self.dynamics.follow(
            slots,
            store,
            list,
            margin,
            |p| near.drop_list(p),
            |tree, p| {
                if keep {
                    leaves.grown(tree, p);
                }
            },
        );
        if self.dynamics.wants_build() {
            self.build_dynamics(slots, store, margin);
        } else if extras_changed {
            self.times.builds += self.dynamics.build_extras(store, margin, &mut self.scratch.gather);
        }
    }

    /// Rebuilds the dynamic tree; every leaf list goes stale (new positions), and each
    /// object's static list follows it from its old leaf.
    fn build_dynamics(&mut self, slots: &Slots, store: &Store<D>, margin: f32) {
        self.times.builds += self.dynamics.build(slots, store, margin, self.frames, &mut self.scratch);
        self.lists.rebuilt(&mut self.scratch.order, self.dynamics.tree.len());
    }
}
