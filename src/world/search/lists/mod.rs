//! The neighbour lists kept by dynamic leaf: each leaf's list of the static objects near
//! its object (`statics`) and of the other leaves whose boxes meet its box (`leaves`). A
//! walk whose region a list covers reads the list instead of walking a tree.
//!
//! - Input: the lists the walks make, the static tree's changes, the dynamic leaves that
//!   grow or are freed, the dynamic tree's rebuilds. Output: a leaf's lists while valid.
//! - Entries: each listed object's id and its box in 16-bit steps of the list's box
//!   (`entry`); each kind keeps its entries in an [`Arena`](arena::Arena) of its own, with one
//!   compaction rule.
//! - Cost: O(len) a list kept, O(1) a list read or dropped, O(leaves) a rebuild followed.
//!   Threads: the static changes' check in fixed chunks on the caller's pool; the rest
//!   sequential (the walks only read). Allocation: heads and arenas, kept; the arenas
//!   grow by an eighth and are compacted now and then.
//! - Source: this crate; the boxes in steps after compressed BVHs.

mod arena;
mod entry;
mod leaves;
mod statics;

use super::statics::Statics;
use crate::bvh::Bvh;
use crate::world::store::Store;
use crate::Error;

pub(super) use entry::{Entry, Grid, Listed, Meets};
pub(super) use leaves::{LeafLists, LEAF_LIST_MAX};
pub(super) use statics::StaticLists;

/// Both kinds of list (module docs).
#[derive(Clone, Debug, Default)]
pub(super) struct Lists<const D: usize> {
    /// Each leaf's list of the static objects near its object's fat box.
    pub(super) statics: StaticLists<D>,
    /// Each leaf's list of the other leaves whose boxes meet its box.
    pub(super) leaves: LeafLists<D>,
}

impl<const D: usize> Lists<D> {
    /// Compacts both arenas where their dead entries call for it, once the lists a frame
    /// made are kept.
    pub(super) fn compact(&mut self) {
        self.statics.compact();
        self.leaves.compact();
    }

    /// The dynamic tree was rebuilt into `n` leaves, new leaf `p` holding the object of
    /// old leaf `from[p]` (`NONE`: none): each static list follows its object, and every
    /// leaf list goes stale (its entries name old positions). `from` is scratch.
    pub(super) fn rebuilt(&mut self, from: &mut Vec<u32>, n: usize) {
        debug_assert_eq!(from.len(), n);
        self.statics.follow(from);
        self.leaves.reset(n);
    }

    /// Heap bytes held, from capacities.
    pub(super) fn bytes(&self) -> usize {
        self.statics.bytes() + self.leaves.bytes()
    }

    /// Checks both kinds against the world as of the last update: the static lists
    /// against `statics` (the static tree), the leaf lists against `tree` (the dynamic
    /// tree), each kind a list a leaf (see their `validate`).
    pub(super) fn validate(
        &self,
        statics: &Statics<D>,
        tree: &Bvh<D>,
        store: &Store<D>,
        margin: f32,
    ) -> Result<(), Error> {
        self.statics.validate(statics, store, margin, tree.len())?;
        self.leaves.validate(tree)
    }
}
