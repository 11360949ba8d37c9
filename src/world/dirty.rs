//! The dirty set: the slots changed since the last update, as a bit vector for O(1)
//! membership and a list for O(changed) iteration.
//!
//! - Input: a slot on every change (insert, set_aabb, set_kind, set_filter, remove).
//!   Output: whether a slot changed, and the changed slots in the order of their first
//!   change this frame.
//! - INVARIANT: bit `s` is set iff `s` is in the list, and the list has no duplicates, so
//!   a frame touches only the changed slots and clearing costs O(changed), not O(slots).
//! - Cost: O(1) a mark; O(changed) to clear. Threads: none. Allocation: one bit a slot,
//!   grown with the slots; the list grows to the most slots changed in one frame and is
//!   kept.
//! - Source: Box2D v3's broad phase move buffer (`moveSet`, a hash set, beside
//!   `moveArray`, the same proxies in a deterministic order), with a bit vector for the
//!   set, since slots are dense.

/// The slots changed since the last update.
#[derive(Clone, Debug, Default)]
pub(crate) struct Dirty {
    /// Bit `s % 64` of word `s / 64`: slot `s` changed. INVARIANT: set iff `s` is in `list`;
    /// bits past the last slot are zero.
    pub(crate) bits: Vec<u64>,
    /// The changed slots, in the order of their first change; no duplicates.
    pub(crate) list: Vec<u32>,
}

impl Dirty {
    /// Room for the bits of `slots` slots.
    pub(crate) fn grow(&mut self, slots: usize) {
        let words = slots.div_ceil(64);
        if self.bits.len() < words {
            self.bits.resize(words, 0);
        }
    }

    /// Whether slot `s` changed (false for a slot past the bits).
    #[inline]
    pub(crate) fn contains(&self, s: u32) -> bool {
        self.bits.get(s as usize / 64).is_some_and(|w| w >> (s % 64) & 1 == 1)
    }

    /// Marks slot `s` (within the bits); true when it was not marked yet, so this is its
    /// first change this frame.
    pub(crate) fn mark(&mut self, s: u32) -> bool {
        let w = &mut self.bits[s as usize / 64];
        let bit = 1u64 << (s % 64);
        if *w & bit != 0 {
            return false;
        }
        *w |= bit;
        self.list.push(s);
        true
    }

    /// The changed slots, first change first.
    pub(crate) fn list(&self) -> &[u32] {
        &self.list
    }

    /// True when no slot changed.
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Unmarks every slot, in O(changed).
    pub(crate) fn clear(&mut self) {
        for &s in &self.list {
            self.bits[s as usize / 64] = 0;
        }
        self.list.clear();
    }

    /// Gives back the list's room, after a frame that changed most objects (a first
    /// update), so that it holds what the frames after need, not every slot.
    pub(crate) fn release_list(&mut self) {
        debug_assert!(self.list.is_empty(), "release_list with slots marked");
        self.list = Vec::new();
    }

    /// Heap bytes held, from capacities.
    pub(crate) fn bytes(&self) -> usize {
        self.bits.capacity() * 8 + self.list.capacity() * 4
    }
}
