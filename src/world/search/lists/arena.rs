//! The entries of one kind of neighbour list, every list in one vector: a list owns a room
//! of it (a start and a length its heads keep), and the arena counts the entries that the
//! rooms of live lists own.
//!
//! - Input: lists put in a room of their own or at the end, rooms given up. Output: a
//!   list's entries by its room.
//! - Compaction: once the entries pass a quarter again (plus 4096) those the rooms own,
//!   the rooms are copied, in the order the lists give them, into a new vector an eighth
//!   larger than they need, and their starts rewritten. A new list grows the vector by an
//!   eighth at a time (`reserve_slack`), not by doubling: the lists are the largest thing
//!   the world keeps after its trees. PERF: benches/world.rs (`move_10`, and the memory
//!   it reports).
//! - Against a vector a list, this saves a 24-byte header and the doubling slack a list,
//!   and gives the room back when lists go stale.
//! - Cost: O(len) a list written, O(1) read, O(entries) a compaction. Threads: none (the
//!   walks only read). Allocation: the entries, kept; a compaction allocates the packed
//!   vector and frees the old one.
//! - Source: this crate.

use super::entry::Entry;
use crate::Error;

/// The arena (module docs).
#[derive(Clone, Debug, Default)]
pub(super) struct Arena<const D: usize> {
    entries: Vec<Entry<D>>,
    /// Entries owned by the rooms of live lists.
    owned: usize,
}

impl<const D: usize> Arena<D> {
    /// The `len` entries from `start`.
    #[inline]
    pub(super) fn list(&self, start: u32, len: usize) -> &[Entry<D>] {
        &self.entries[start as usize..start as usize + len]
    }

    /// The `len` entries from `start`, to write.
    #[inline]
    pub(super) fn list_mut(&mut self, start: u32, len: usize) -> &mut [Entry<D>] {
        &mut self.entries[start as usize..start as usize + len]
    }

    /// The entry at `at`, if the arena reaches it (for a prefetch).
    #[inline]
    pub(super) fn get(&self, at: u32) -> Option<&Entry<D>> {
        self.entries.get(at as usize)
    }

    /// `list` written over the start of the room from `start`, which keeps its length.
    pub(super) fn write(&mut self, start: u32, list: &[Entry<D>]) {
        self.list_mut(start, list.len()).copy_from_slice(list);
    }

    /// `list` put at the end in a room of `room` entries (at least its length; the spare
    /// room filled with a placeholder, never read): returns the room's start.
    pub(super) fn push(&mut self, list: &[Entry<D>], room: usize) -> u32 {
        debug_assert!(list.len() <= room);
        let start = self.entries.len();
        crate::world::reserve_slack(&mut self.entries, room);
        self.entries.extend_from_slice(list);
        self.entries.resize(start + room, Entry::placeholder());
        self.owned += room;
        start as u32
    }

    /// `room` entries are given up by a list (the whole room of one gone stale, or the
    /// tail of one rewritten shorter).
    #[inline]
    pub(super) fn release(&mut self, room: usize) {
        self.owned -= room;
    }

    /// Every list gone stale: the entries dropped, their memory kept.
    pub(super) fn clear(&mut self) {
        self.entries.clear();
        self.owned = 0;
    }

    /// Every list gone stale: the memory given back too.
    pub(super) fn give_back(&mut self) {
        *self = Self::default();
    }

    /// Compacts the entries (module docs) once they pass a quarter again those the rooms
    /// own; `rooms` gives each live list's start, rewritten, and room length.
    pub(super) fn compact<'a>(&mut self, rooms: impl Iterator<Item = (&'a mut u32, usize)>) {
        if self.entries.len() <= self.owned + self.owned / 4 + 4096 {
            return;
        }
        let mut packed = Vec::with_capacity(self.owned + self.owned / 8);
        for (start, room) in rooms {
            let at = packed.len() as u32;
            packed.extend_from_slice(self.list(*start, room));
            *start = at;
        }
        self.entries = packed;
    }

    /// Heap bytes held, from capacities.
    pub(super) fn bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry<D>>()
    }

    /// Checks the arena against the rooms of the live lists of `owner` (each a start and
    /// a length, in any order): each inside the entries, no two sharing an entry, and the
    /// owned count their sum. O(r log r) for r rooms.
    pub(super) fn validate(
        &self,
        owner: &str,
        rooms: impl Iterator<Item = (u32, usize)>,
    ) -> Result<(), Error> {
        let bad = |detail: String| Err(Error::Invariant { detail: format!("{owner}: {detail}") });
        let mut spans: Vec<(usize, usize)> = rooms.map(|(s, n)| (s as usize, s as usize + n)).collect();
        if let Some(&(s, e)) = spans.iter().find(|&&(_, e)| e > self.entries.len()) {
            return bad(format!("a list's room {s}..{e} runs past the arena of {}", self.entries.len()));
        }
        spans.sort_unstable();
        if spans.windows(2).any(|w| w[0].1 > w[1].0) {
            return bad("two lists share room in the arena".into());
        }
        let owned: usize = spans.iter().map(|&(s, e)| e - s).sum();
        if owned != self.owned {
            return bad(format!("{} arena entries counted owned, {owned} in the lists", self.owned));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Arena, Entry};

    fn entry(id: u32) -> Entry<2> {
        Entry { id, min: [0; 2], max: [1; 2] }
    }

    /// Lists put, rewritten shorter and given up: the arena compacts once its dead
    /// entries pass the bound, keeping each live list's entries at its new start, and
    /// stays valid throughout.
    #[test]
    fn compaction_keeps_the_live_lists() {
        let mut a = Arena::<2>::default();
        let mut rooms: Vec<(u32, usize, u32)> = Vec::new();
        for i in 0..3000u32 {
            let list: Vec<_> = (0..4).map(|k| entry(i * 4 + k)).collect();
            let start = a.push(&list, 4);
            rooms.push((start, 4, i));
            if i % 3 != 0 {
                // Given up: the room becomes dead entries.
                let (_, room, _) = rooms.pop().unwrap();
                a.release(room);
            }
            a.validate("test lists", rooms.iter().map(|&(s, n, _)| (s, n))).unwrap();
            a.compact(rooms.iter_mut().map(|(s, n, _)| (s, *n)));
            a.validate("test lists", rooms.iter().map(|&(s, n, _)| (s, n))).unwrap();
        }
        assert!(a.entries.len() < 3000 * 4, "the arena was compacted");
        for &(s, n, i) in &rooms {
            let ids: Vec<u32> = a.list(s, n).iter().map(|e| e.id).collect();
            assert_eq!(ids, (0..4).map(|k| i * 4 + k).collect::<Vec<_>>());
        }
        a.release(1);
        assert!(a.validate("test lists", rooms.iter().map(|&(s, n, _)| (s, n))).is_err());
    }
}
