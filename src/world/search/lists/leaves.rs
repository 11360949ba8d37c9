//! Each dynamic leaf's list of the other leaves whose boxes meet its box.
//!
//! - Input: the lists the walks make ([`LeafLists::keep`]) and the leaves that grow
//!   ([`LeafLists::grown`]). Output: for a leaf, its list while valid: each other leaf's
//!   position and its box clipped to this leaf's box, in 16-bit steps of it ([`Entry`];
//!   only the outer box is read, as a filter before the exact test).
//! - A list is valid while its leaf's mark is the current generation; every list goes
//!   stale at once when the generation moves on (a tree rebuilt, a frame where every
//!   dynamic object changed), and one list when its leaf grows. A leaf whose list would
//!   pass [`LEAF_LIST_MAX`] is crowded: it keeps no list and walks the tree.
//! - Storage: a valid list owns a room of `cap` entries in the [`Arena`] from `start`,
//!   `len` of them in use; a list that outgrows its room moves to the arena's end. The
//!   arena is cleared when every list goes stale.
//! - Cost: O(len) a list written, O(1) a list read or made stale, O(log n + k) a grown leaf
//!   for k leaves it meets. Threads: none (the walks only read). Allocation: the arena and
//!   heads, kept.
//! - Source: this crate.

use super::super::NONE;
use super::arena::Arena;
use super::entry::{Entry, Grid};
use crate::bvh::Bvh;
use crate::{Aabb, Error};
use std::ops::ControlFlow;

/// The longest list of near dynamic leaves a leaf keeps: a crowd, or leaves grown over a
/// long way (an object re-inserted far off takes a freed leaf and stretches it), would
/// otherwise make lists of hundreds, each a place to update as leaves grow.
/// PERF: benches/world.rs (`move_10`); the demo's memory.
pub(in crate::world::search) const LEAF_LIST_MAX: usize = 16;

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
pub(in crate::world::search) struct LeafLists<const D: usize> {
    heads: Vec<Head>,
    /// Each leaf's mark: `generation` (valid), `generation | CROWDED`, or other (stale).
    marks: Vec<u32>,
    generation: u32,
    /// INVARIANT: the rooms it counts owned are those of the valid lists (their `cap`s).
    arena: Arena<D>,
}

impl<const D: usize> LeafLists<D> {
    /// `n` leaves, every list stale (a tree rebuilt: new positions).
    pub(super) fn reset(&mut self, n: usize) {
        self.heads.clear();
        self.heads.resize(n, Head::default());
        self.marks.clear();
        self.marks.resize(n, STALE);
        self.arena.clear();
    }

    /// Every list goes stale, crowded marks too: O(1), but once in 2^31 times. The
    /// arena is given back: this happens on a frame where every dynamic object changed,
    /// and while such frames go on no list is made.
    pub(in crate::world::search) fn stale_all(&mut self) {
        self.generation += 1;
        if self.generation >= CROWDED - 1 {
            self.generation = 0;
            self.marks.fill(STALE);
        }
        self.arena.give_back();
    }

    /// Leaf `p`'s list, if valid.
    #[inline]
    pub(in crate::world::search) fn get(&self, p: usize) -> Option<&[Entry<D>]> {
        (self.marks[p] == self.generation).then(|| {
            let h = self.heads[p];
            self.arena.list(h.start, h.len as usize)
        })
    }

    /// Whether leaf `p` is crowded (keeps no list and walks the tree).
    #[inline]
    pub(in crate::world::search) fn crowded(&self, p: usize) -> bool {
        self.marks[p] == self.generation | CROWDED
    }

    /// Hints leaf `p`'s mark and head into the cache.
    #[inline]
    pub(in crate::world::search) fn prefetch_head(&self, p: usize) {
        crate::kernels::par::prefetch(&self.marks[p]);
        crate::kernels::par::prefetch(&self.heads[p]);
    }

    /// Hints leaf `p`'s first entry into the cache, if its list is valid.
    #[inline]
    pub(in crate::world::search) fn prefetch_list(&self, p: usize) {
        if let Some(e) = self.get(p).and_then(|l| l.first()) {
            crate::kernels::par::prefetch(e);
        }
    }

    /// Gives up leaf `p`'s room, if it owns some.
    fn release(&mut self, p: usize) {
        if self.marks[p] == self.generation {
            self.arena.release(self.heads[p].cap as usize);
        }
        self.heads[p] = Head::default();
    }

    /// Leaf `p` is crowded.
    fn crowd(&mut self, p: usize) {
        self.release(p);
        self.marks[p] = self.generation | CROWDED;
    }

    /// Leaf `p`'s list is `list` (at most [`LEAF_LIST_MAX`] entries): in its room where
    /// it fits, else at the arena's end with room for `spare` more.
    fn set(&mut self, p: usize, list: &[Entry<D>], spare: usize) {
        debug_assert!(list.len() <= LEAF_LIST_MAX);
        let h = self.heads[p];
        if self.marks[p] == self.generation && list.len() <= h.cap as usize {
            self.arena.write(h.start, list);
            self.heads[p].len = list.len() as u16;
            return;
        }
        self.release(p);
        let cap = (list.len() + spare).min(LEAF_LIST_MAX);
        let start = self.arena.push(list, cap);
        self.heads[p] = Head { start, len: list.len() as u16, cap: cap as u16 };
        self.marks[p] = self.generation;
    }

    /// Keeps the lists one chunk of walks made: `made` holds for each its leaf position,
    /// start in `entries` and length (`NONE`: the leaf is crowded).
    pub(in crate::world::search) fn keep(&mut self, made: &[(u32, u32, u32)], entries: &[Entry<D>]) {
        for &(p, start, len) in made {
            if len == NONE {
                self.crowd(p as usize);
            } else {
                self.set(p as usize, &entries[start as usize..(start + len) as usize], 0);
            }
        }
    }

    /// Compacts the arena (see [`Arena`]) over the valid lists' rooms.
    pub(super) fn compact(&mut self) {
        let generation = self.generation;
        let rooms = self.heads.iter_mut().zip(&self.marks).filter(|&(_, &m)| m == generation);
        self.arena.compact(rooms.map(|(h, _)| (&mut h.start, h.cap as usize)));
    }

    /// Leaf `q` of `tree` grew: its own list goes stale, and it is put in (or its box
    /// updated in) every valid list of a leaf it meets. O(log n + k) for k leaves met.
    pub(in crate::world::search) fn grown(&mut self, tree: &Bvh<D>, q: usize) {
        self.release(q);
        self.marks[q] = STALE;
        let b = tree.leaves[q];
        let _ = tree.query(&b, |r| {
            if r != q {
                self.grown_in(r, &tree.leaves[r], q as u32, &b);
            }
            ControlFlow::Continue(())
        });
    }

    /// Leaf `q` grew to box `b`, which meets leaf `r`'s box `rb`: its entry in `r`'s list
    /// (if valid) is updated, or added; past the cap, `r` is crowded.
    fn grown_in(&mut self, r: usize, rb: &Aabb<D>, q: u32, b: &Aabb<D>) {
        if self.marks[r] != self.generation {
            return;
        }
        // A valid list's leaf has a grid: the list was made with it.
        let Some(grid) = Grid::new(rb) else { return self.crowd(r) };
        let e = grid.encode(q, b);
        let h = self.heads[r];
        let len = h.len as usize;
        let room = self.arena.list_mut(h.start, h.cap as usize);
        if let Some(x) = room[..len].iter_mut().find(|x| x.id == q) {
            *x = e;
        } else if len < h.cap as usize {
            room[len] = e;
            self.heads[r].len += 1;
        } else if len < LEAF_LIST_MAX {
            let mut longer = [e; LEAF_LIST_MAX];
            longer[..len].copy_from_slice(&room[..len]);
            self.set(r, &longer[..len + 1], 1);
        } else {
            self.crowd(r);
        }
    }

    /// Heap bytes held, from capacities.
    pub(super) fn bytes(&self) -> usize {
        self.heads.capacity() * std::mem::size_of::<Head>() + self.marks.capacity() * 4 + self.arena.bytes()
    }

    /// Leaves listed.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.heads.len()
    }

    /// Checks the lists against `tree`, the dynamic tree: a head and a mark a leaf; every
    /// valid list `len <= cap <= LEAF_LIST_MAX`, holding each other leaf whose box meets
    /// its leaf's box, with that leaf's box as it is (in steps of its own leaf's box), and
    /// nothing else; no room kept by a crowded leaf; the arena sound over the
    /// valid lists' rooms. O(n log n + listed).
    pub(super) fn validate(&self, tree: &Bvh<D>) -> Result<(), Error> {
        let bad = |detail: String| Err(Error::Invariant { detail: format!("leaf lists: {detail}") });
        let n = tree.len();
        if self.heads.len() != n || self.marks.len() != n {
            return bad(format!("{} heads and {} marks for {n} leaves", self.heads.len(), self.marks.len()));
        }
        for (p, (h, &m)) in self.heads.iter().zip(&self.marks).enumerate() {
            if m != self.generation {
                if m == self.generation | CROWDED && h.cap > 0 {
                    return bad(format!("crowded leaf {p} keeps a list"));
                }
                continue;
            }
            if h.len > h.cap || h.cap as usize > LEAF_LIST_MAX {
                return bad(format!("leaf {p}'s list has room {h:?}"));
            }
        }
        let valid = self.heads.iter().zip(&self.marks).filter(|&(_, &m)| m == self.generation);
        self.arena.validate("leaf lists", valid.map(|(h, _)| (h.start, h.cap as usize)))?;
        let leaves = &tree.leaves;
        for p in 0..n {
            let Some(l) = self.get(p) else { continue };
            let Some(grid) = Grid::new(&leaves[p]) else {
                return bad(format!("leaf {p} keeps a list for a box without a grid"));
            };
            let stale = |e: &Entry<D>| {
                let q = e.id as usize;
                q >= n || q == p || *e != grid.encode(e.id, &leaves[q])
            };
            if let Some(e) = l.iter().find(|e| stale(e)) {
                return bad(format!("leaf {p}'s list has leaf {} with a stale box", e.id));
            }
            let mut missing = None;
            let _ = tree.query(&leaves[p], |q| {
                if q != p && !l.iter().any(|e| e.id as usize == q) {
                    missing = Some(q);
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            });
            if let Some(q) = missing {
                return bad(format!("leaf {p}'s list misses leaf {q}, which meets it"));
            }
        }
        Ok(())
    }

    /// Test access: leaf `p`'s list, to break it.
    #[cfg(test)]
    fn get_mut(&mut self, p: usize) -> Option<(&mut u16, &mut [Entry<D>])> {
        (self.marks[p] == self.generation).then(|| {
            let h = &mut self.heads[p];
            (&mut h.len, self.arena.list_mut(h.start, h.cap as usize))
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::world::{Kind, World};
    use crate::{Aabb, Config, Error};

    /// A row of touching dynamic boxes, each changed a little every frame while the
    /// others stay: the changed objects' leaf lists are made, kept and read.
    #[test]
    fn validate_catches_an_incomplete_or_stale_leaf_list() {
        let mut w = World::<2>::new(Config::default()).unwrap();
        let boxes: Vec<_> = (0..40).map(|i| Aabb::new([i as f32, 0.0], [i as f32 + 1.0, 1.0])).collect();
        let hs = w.extend(&boxes, Kind::Dynamic).unwrap();
        w.update().unwrap();
        for (frame, h) in hs.iter().enumerate().take(6) {
            let b = boxes[frame];
            w.set_aabb(*h, Aabb::new([b.min[0] + 0.01, 0.0], [b.max[0] + 0.01, 1.0])).unwrap();
            w.update().unwrap();
            w.validate().unwrap();
        }
        let lists = &mut w.scratch.search.lists.leaves;
        let p =
            (0..lists.len()).find(|&p| lists.get(p).is_some_and(|l| !l.is_empty())).expect("a valid list");
        *lists.get_mut(p).unwrap().0 -= 1;
        assert!(matches!(w.validate(), Err(Error::Invariant { detail }) if detail.contains("misses")));
        *w.scratch.search.lists.leaves.get_mut(p).unwrap().0 += 1;
        w.validate().unwrap();
        w.scratch.search.lists.leaves.get_mut(p).unwrap().1[0].max[0] ^= 1;
        assert!(matches!(w.validate(), Err(Error::Invariant { detail }) if detail.contains("stale box")));
    }

    /// Forty dynamic boxes that all overlap: every leaf's list would pass the cap, so the
    /// leaves are marked crowded and walk the tree; the pairs stay exact.
    #[test]
    fn a_crowd_past_the_list_cap_walks_the_tree() {
        let mut w = World::<2>::new(Config::default()).unwrap();
        let mut now: Vec<_> =
            (0..40).map(|i| Aabb::new([i as f32 * 0.1, 0.0], [i as f32 * 0.1 + 5.0, 1.0])).collect();
        let hs = w.extend(&now, Kind::Dynamic).unwrap();
        w.update().unwrap();
        for frame in 0..30 {
            let i = frame % now.len();
            now[i].min[0] += 0.01;
            now[i].max[0] += 0.01;
            w.set_aabb(hs[i], now[i]).unwrap();
            w.update().unwrap();
            w.validate().unwrap();
            let got: Vec<[u32; 2]> = w.pairs().iter().map(|p| [p[0].index(), p[1].index()]).collect();
            assert_eq!(got, crate::brute_force_pairs(&now, &Config::default()).unwrap(), "frame {frame}");
        }
        let lists = &w.scratch.search.lists.leaves;
        let crowded = (0..lists.len()).filter(|&p| lists.crowded(p)).count();
        assert!(crowded > 0, "no leaf was marked crowded");
    }
}
