//! Each dynamic leaf's list of the other leaves whose boxes meet its box, in one arena.
//!
//! - Input: the lists the walks make (`Search::keep_dynamic_lists`) and the leaves that
//!   grow (`Search::grown_dynamic`). Output: for a leaf, its list while valid: each
//!   other leaf's position and its box clipped to this leaf's box, in 16-bit steps of it
//!   ([`Entry`]; only the outer box is read, as a filter before the exact test).
//! - A list is valid while its leaf's mark is the current generation; every list goes
//!   stale at once when the generation moves on (a tree rebuilt, a frame where every
//!   dynamic object changed), and one list when its leaf grows. A leaf whose list would
//!   pass [`DYN_LIST_MAX`] is crowded: it keeps no list and walks the tree.
//! - Storage: a valid list owns `cap` entries of the arena from `start`, `len` of them in
//!   use. A list that outgrows its room moves to the arena's end; the arena is compacted
//!   once it passes a quarter again its owned entries, and cleared when every list goes
//!   stale. Against a vector a leaf, this saves the 24-byte header and the doubling
//!   slack, and gives the room back when the lists go stale.
//! - Cost: O(len) a list written, O(1) a list read or made stale, O(arena) a compaction.
//!   Threads: none (the walks only read). Allocation: the arena and heads, kept.
//! - Source: this crate.

use super::listed::{Entry, Grid};
use crate::Aabb;

/// The longest list of near dynamic leaves a leaf keeps: a crowd, or leaves grown over a
/// long way (an object re-inserted far off takes a freed leaf and stretches it), would
/// otherwise make lists of hundreds, each a place to update as leaves grow.
/// PERF: benches/world.rs (`move_10`); the demo's memory.
pub(super) const DYN_LIST_MAX: usize = 16;

/// The mark of a crowded leaf (the generation below it).
const CROWDED: u32 = 1 << 31;

/// No generation: a list never made, or stale on its own.
const STALE: u32 = u32::MAX;

/// A list's room in the arena.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Head {
    start: u32,
    len: u16,
    cap: u16,
}

/// The dynamic leaves' lists (module docs).
#[derive(Clone, Debug, Default)]
pub(super) struct LeafLists<const D: usize> {
    heads: Vec<Head>,
    /// Each leaf's mark: `generation` (valid), `generation | CROWDED`, or other (stale).
    marks: Vec<u32>,
    generation: u32,
    arena: Vec<Entry<D>>,
    /// Arena entries owned by valid lists (their `cap`s).
    owned: usize,
}

impl<const D: usize> LeafLists<D> {
    /// `n` leaves, every list stale (a tree rebuilt: new positions).
    pub(super) fn reset(&mut self, n: usize) {
        self.heads.clear();
        self.heads.resize(n, Head::default());
        self.marks.clear();
        self.marks.resize(n, STALE);
        self.arena.clear();
        self.owned = 0;
    }

    /// Every list goes stale, crowded marks too: O(1), but once in 2^31 times. The
    /// arena is given back: this happens on a frame where every dynamic object changed,
    /// and while such frames go on no list is made.
    pub(super) fn stale_all(&mut self) {
        self.generation += 1;
        if self.generation >= CROWDED - 1 {
            self.generation = 0;
            self.marks.fill(STALE);
        }
        self.arena = Vec::new();
        self.owned = 0;
    }

    /// Leaf `p`'s list, if valid.
    #[inline]
    pub(super) fn get(&self, p: usize) -> Option<&[Entry<D>]> {
        (self.marks[p] == self.generation).then(|| {
            let h = self.heads[p];
            &self.arena[h.start as usize..h.start as usize + h.len as usize]
        })
    }

    /// Whether leaf `p` is crowded (keeps no list and walks the tree).
    #[inline]
    pub(super) fn crowded(&self, p: usize) -> bool {
        self.marks[p] == self.generation | CROWDED
    }

    /// Hints leaf `p`'s mark and head into the cache.
    #[inline]
    pub(super) fn prefetch_head(&self, p: usize) {
        crate::kernels::par::prefetch(&self.marks[p]);
        crate::kernels::par::prefetch(&self.heads[p]);
    }

    /// Hints leaf `p`'s first entry into the cache, if its list is valid.
    #[inline]
    pub(super) fn prefetch_list(&self, p: usize) {
        if let Some(e) = self.get(p).and_then(|l| l.first()) {
            crate::kernels::par::prefetch(e);
        }
    }

    /// Gives up leaf `p`'s room, if it owns some.
    fn release(&mut self, p: usize) {
        if self.marks[p] == self.generation {
            self.owned -= self.heads[p].cap as usize;
        }
        self.heads[p] = Head::default();
    }

    /// Leaf `p`'s list goes stale (it grew).
    pub(super) fn stale(&mut self, p: usize) {
        self.release(p);
        self.marks[p] = STALE;
    }

    /// Leaf `p` is crowded.
    pub(super) fn crowd(&mut self, p: usize) {
        self.release(p);
        self.marks[p] = self.generation | CROWDED;
    }

    /// Leaf `p`'s list is `list` (at most [`DYN_LIST_MAX`] entries): in its room where it
    /// fits, else at the arena's end with room for `spare` more.
    pub(super) fn set(&mut self, p: usize, list: &[Entry<D>], spare: usize) {
        debug_assert!(list.len() <= DYN_LIST_MAX);
        let h = self.heads[p];
        if self.marks[p] == self.generation && list.len() <= h.cap as usize {
            self.arena[h.start as usize..h.start as usize + list.len()].copy_from_slice(list);
            self.heads[p].len = list.len() as u16;
            return;
        }
        self.release(p);
        let cap = (list.len() + spare).min(DYN_LIST_MAX);
        let start = self.arena.len();
        crate::world::reserve_slack(&mut self.arena, cap);
        self.arena.extend_from_slice(list);
        // The spare room, filled with a placeholder (never read: past `len`).
        self.arena.resize(start + cap, Entry::placeholder());
        self.heads[p] = Head { start: start as u32, len: list.len() as u16, cap: cap as u16 };
        self.marks[p] = self.generation;
        self.owned += cap;
    }

    /// Leaf `q` grew to box `b`, which meets leaf `r`'s box `rb`: its entry in `r`'s list
    /// (if valid) is updated, or added; past the cap, `r` is crowded.
    pub(super) fn grown(&mut self, r: usize, rb: &Aabb<D>, q: u32, b: &Aabb<D>) {
        if self.marks[r] != self.generation {
            return;
        }
        // A valid list's leaf has a grid: the list was made with it.
        let Some(grid) = Grid::new(rb) else { return self.crowd(r) };
        let e = grid.encode(q, b);
        let h = self.heads[r];
        let (start, len) = (h.start as usize, h.len as usize);
        if let Some(x) = self.arena[start..start + len].iter_mut().find(|x| x.slot == q) {
            *x = e;
        } else if len < h.cap as usize {
            self.arena[start + len] = e;
            self.heads[r].len += 1;
        } else if len < DYN_LIST_MAX {
            let mut moved = [e; DYN_LIST_MAX];
            moved[..len].copy_from_slice(&self.arena[start..start + len]);
            self.set(r, &moved[..len + 1], 1);
        } else {
            self.crowd(r);
        }
    }

    /// Compacts the arena once its entries pass a quarter again those the valid lists own.
    pub(super) fn compact(&mut self) {
        if self.arena.len() <= self.owned + self.owned / 4 + 4096 {
            return;
        }
        let mut packed = Vec::with_capacity(self.owned + self.owned / 8);
        for (h, &m) in self.heads.iter_mut().zip(&self.marks) {
            if m == self.generation {
                let at = packed.len() as u32;
                packed.extend_from_slice(&self.arena[h.start as usize..(h.start + h.cap as u32) as usize]);
                h.start = at;
            }
        }
        self.arena = packed;
    }

    /// Heap bytes held, from capacities.
    pub(super) fn bytes(&self) -> usize {
        self.heads.capacity() * std::mem::size_of::<Head>()
            + self.marks.capacity() * 4
            + self.arena.capacity() * std::mem::size_of::<Entry<D>>()
    }

    /// Leaves listed.
    pub(super) fn len(&self) -> usize {
        self.heads.len()
    }

    /// The arena's own invariants: every valid list's room inside the arena, rooms apart,
    /// `len <= cap <= DYN_LIST_MAX`, the owned count their sum; no room kept by a
    /// crowded or stale leaf.
    pub(super) fn check(&self) -> Result<(), String> {
        let mut rooms = Vec::new();
        for (p, (h, &m)) in self.heads.iter().zip(&self.marks).enumerate() {
            if m != self.generation {
                if m == self.generation | CROWDED && h.cap > 0 {
                    return Err(format!("crowded leaf {p} keeps a list"));
                }
                continue;
            }
            if h.len > h.cap
                || h.cap as usize > DYN_LIST_MAX
                || (h.start + h.cap as u32) as usize > self.arena.len()
            {
                return Err(format!("leaf {p}'s list has room {h:?} in an arena of {}", self.arena.len()));
            }
            rooms.push((h.start, h.start + h.cap as u32));
        }
        rooms.sort_unstable();
        if rooms.windows(2).any(|w| w[0].1 > w[1].0) {
            return Err("two dynamic lists share room".into());
        }
        let owned: usize = rooms.iter().map(|r| (r.1 - r.0) as usize).sum();
        if owned != self.owned {
            return Err(format!("{} arena entries counted owned, {owned} in the lists", self.owned));
        }
        Ok(())
    }

    /// Test access: leaf `p`'s list, to break it.
    #[cfg(test)]
    pub(super) fn get_mut(&mut self, p: usize) -> Option<(&mut u16, &mut [Entry<D>])> {
        (self.marks[p] == self.generation).then(|| {
            let h = &mut self.heads[p];
            (&mut h.len, &mut self.arena[h.start as usize..h.start as usize + h.cap as usize])
        })
    }
}
