//! The frame's scratch buffers: what the search's stages write and read within one frame
//! and keep, emptied, for the next, so that a steady frame allocates nothing.
//!
//! - Input and output: whatever a stage leaves for the next (the gathered boxes a tree is
//!   built from, the Morton order of the walks, each chunk of walks' pairs and lists, the
//!   whole frame's boxes and pairs). No buffer carries meaning from one frame to the next.
//! - Cost: none of its own; [`trim_parts`] O(chunks). Threads: a chunk of walks writes
//!   its own [`Part`]. Allocation: the buffers grow to the largest frame and are kept;
//!   an outsized frame's per-chunk buffers are trimmed after it ([`trim_parts`]) and the
//!   whole frame's given back after a frame where most objects changed
//!   ([`Scratch::give_back_whole`]).
//! - Source: parry's `BvhWorkspace` (one place for a tree's reusable buffers).

use super::lists::Entry;
use crate::world::Handle;
use crate::{Aabb, Error};

/// What a chunk of walks produces: its old and new pairs, and the lists it made.
#[derive(Clone, Debug, Default)]
pub(super) struct Part<const D: usize> {
    pub(super) old: Vec<[Handle; 2]>,
    pub(super) new: Vec<[Handle; 2]>,
    /// The static lists it made: their entries, and for each list its leaf position,
    /// start in `static_entries`, length and the fat box it was made for.
    pub(super) static_entries: Vec<Entry<D>>,
    pub(super) static_made: Vec<(u32, u32, u32, Aabb<D>)>,
    /// The leaf lists it made: their entries, and for each list its leaf position, start
    /// in `leaf_entries` and length (`NONE`: the leaf is crowded).
    pub(super) leaf_entries: Vec<Entry<D>>,
    pub(super) leaf_made: Vec<(u32, u32, u32)>,
}

impl<const D: usize> Part<D> {
    /// Emptied for a chunk's walks.
    pub(super) fn clear(&mut self) {
        self.old.clear();
        self.new.clear();
        self.static_entries.clear();
        self.static_made.clear();
        self.leaf_entries.clear();
        self.leaf_made.clear();
    }
}

/// The frame's buffers (module docs).
#[derive(Clone, Debug, Default)]
pub(super) struct Scratch<const D: usize> {
    /// The boxes a tree is built from (the dynamic tree's fat boxes, the boxes of the
    /// dynamic objects without a leaf), or the whole frame's live boxes, dynamic ones
    /// first.
    pub(super) gather: Vec<Aabb<D>>,
    /// The dynamic tree's build: the slot of each box in `gather`. The whole frame: each
    /// changed slot's position in the changed list, by slot (`NONE`: unchanged).
    pub(super) gather_slots: Vec<u32>,
    /// The walks: the changed list's positions in Morton order of their boxes. The dynamic
    /// tree's build: each new leaf's old position (`NONE`: none).
    pub(super) order: Vec<u32>,
    /// The Morton order's sort keys.
    pub(super) keys: Vec<u64>,
    /// Per chunk of the changed list: its walks' pairs and lists.
    pub(super) parts: Vec<Part<D>>,
    /// The whole frame: the slot of each box in `gather`, the live objects of each kind a
    /// chunk of slots holds, and the pairs found (positions in `gather`).
    pub(super) gather_ids: Vec<u32>,
    pub(super) gather_counts: Vec<[usize; 2]>,
    pub(super) gather_found: Vec<[u32; 2]>,
}

impl<const D: usize> Scratch<D> {
    /// The whole frame's buffers given back (they are sized by every live object and
    /// every pair; the frames after a frame where most objects changed need them at the
    /// size of what changes).
    pub(super) fn give_back_whole(&mut self) {
        self.gather = Vec::new();
        self.gather_ids = Vec::new();
        self.gather_found = Vec::new();
        self.gather_slots = Vec::new();
    }

    /// Heap bytes held, from capacities: for objects, and for pairs (the chunks' pairs,
    /// the whole frame's pairs and the Morton keys). The chunk counts are not counted.
    pub(super) fn bytes(&self) -> (usize, usize) {
        use std::mem::size_of;
        let objects = 4 * (self.gather_slots.capacity() + self.order.capacity() + self.gather_ids.capacity())
            + size_of::<Aabb<D>>() * self.gather.capacity()
            + self
                .parts
                .iter()
                .map(|p| {
                    size_of::<Entry<D>>() * (p.static_entries.capacity() + p.leaf_entries.capacity())
                        + size_of::<(u32, u32, u32, Aabb<D>)>() * p.static_made.capacity()
                        + 12 * p.leaf_made.capacity()
                })
                .sum::<usize>();
        let pairs = self.parts.iter().map(|p| p.old.capacity() + p.new.capacity()).sum::<usize>()
            * size_of::<[Handle; 2]>()
            + 8 * (self.gather_found.capacity() + self.keys.capacity());
        (objects, pairs)
    }
}

/// Gives back what an outsized frame left in the per-chunk buffers (a first frame of
/// walks makes every changed object's lists at once; the frames after, a few): a chunk's
/// list buffers down to twice what they held once they hold over four times more, and
/// the chunks past twice this frame's. Steady frames trim nothing, so allocate nothing.
pub(super) fn trim_parts<const D: usize>(parts: &mut Vec<Part<D>>, chunks: usize) {
    fn trim<T>(v: &mut Vec<T>) {
        let keep = 2 * v.len().max(16);
        if v.capacity() > 2 * keep {
            v.shrink_to(keep);
        }
    }
    if parts.len() > 2 * chunks {
        parts.truncate(chunks);
    }
    for p in parts.iter_mut() {
        trim(&mut p.static_entries);
        trim(&mut p.leaf_entries);
        trim(&mut p.static_made);
    }
}

/// The chunks' old and new pairs into `old` and `new`, the room reserved first: a refused
/// allocation is [`Error::OutOfMemory`].
pub(super) fn merge_parts<const D: usize>(
    parts: &[Part<D>],
    old: &mut Vec<[Handle; 2]>,
    new: &mut Vec<[Handle; 2]>,
) -> Result<(), Error> {
    let (o, n) = parts.iter().fold((0, 0), |(o, n), p| (o + p.old.len(), n + p.new.len()));
    let oom = |_| Error::OutOfMemory { pairs: o + n };
    old.try_reserve(o).map_err(oom)?;
    new.try_reserve(n).map_err(oom)?;
    for p in parts {
        old.extend_from_slice(&p.old);
        new.extend_from_slice(&p.new);
    }
    Ok(())
}
