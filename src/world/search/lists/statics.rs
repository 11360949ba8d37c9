//! Each dynamic leaf's list of the static objects near its object: those whose boxes
//! (grown by the margin) meet the object's fat box, as of the current static tree.
//!
//! - Input: the lists the walks make ([`StaticLists::keep`]), the static tree's changes
//!   ([`StaticLists::stale_all`], [`StaticLists::stale_near`]), the leaves freed and the
//!   dynamic tree's rebuilds ([`StaticLists::follow`]). Output: for a leaf position, its
//!   list while valid: the fat box it was made for and its entries, each static object's
//!   slot and its box in 16-bit steps of the fat box ([`Entry`]).
//! - A list is valid while its generation is the lists' own; `NONE` marks a list
//!   dropped. A list stays valid while no static object near its fat box changes, and
//!   follows its object through a rebuild of the dynamic tree to its new leaf.
//! - Storage: a list owns a room of exactly its length in the [`Arena`]; a list made
//!   again is written over its room where it fits (the room shrinks to it), else at the
//!   arena's end.
//! - Cost: O(len) a list kept, O(1) read or dropped; O(lists log changes) the lists near
//!   the static changes dropped, in fixed chunks on the caller's pool; O(leaves) a rebuild
//!   followed. Allocation: the heads, the marks for a rebuild and the arena, kept.
//! - Source: this crate.

use super::super::statics::Statics;
use super::super::NONE;
use super::arena::Arena;
use super::entry::{Entry, Grid};
use crate::par::prelude::*;
use crate::world::store::Store;
use crate::{Aabb, Error};
use std::ops::ControlFlow;

/// A dynamic leaf's list of the static objects near its object: those whose grown boxes
/// meet `fat`, as of list generation `generation` (`NONE`: no list); its room in the arena
/// is `len` entries from `start`.
#[derive(Clone, Copy, Debug)]
pub(in crate::world::search) struct StaticHead<const D: usize> {
    start: u32,
    len: u32,
    generation: u32,
    pub(in crate::world::search) fat: Aabb<D>,
}

impl<const D: usize> StaticHead<D> {
    /// No list.
    const NO_LIST: Self =
        StaticHead { start: 0, len: 0, generation: NONE, fat: Aabb { min: [0.0; D], max: [0.0; D] } };
}

/// The static lists (module docs).
#[derive(Clone, Debug, Default)]
pub(in crate::world::search) struct StaticLists<const D: usize> {
    /// Each dynamic leaf position's list (for the object at that leaf).
    heads: Vec<StaticHead<D>>,
    /// The generation every valid list has.
    generation: u32,
    /// Marks over leaf positions, for following a rebuild.
    taken: Vec<u64>,
    /// INVARIANT: the rooms it counts owned are those of the lists not dropped.
    arena: Arena<D>,
}

impl<const D: usize> StaticLists<D> {
    /// Leaf position `p`'s list, if it has a valid one.
    #[inline]
    pub(in crate::world::search) fn get(&self, p: u32) -> Option<&StaticHead<D>> {
        self.heads.get(p as usize).filter(|h| h.generation == self.generation)
    }

    /// The entries of a list.
    #[inline]
    pub(in crate::world::search) fn entries(&self, h: &StaticHead<D>) -> &[Entry<D>] {
        self.arena.list(h.start, h.len as usize)
    }

    /// Hints leaf position `p`'s head into the cache.
    #[inline]
    pub(in crate::world::search) fn prefetch_head(&self, p: usize) {
        if let Some(h) = self.heads.get(p) {
            crate::kernels::par::prefetch(h);
        }
    }

    /// Hints the first entry of leaf position `p`'s room into the cache.
    #[inline]
    pub(in crate::world::search) fn prefetch_list(&self, p: usize) {
        if let Some(e) = self.heads.get(p).and_then(|h| self.arena.get(h.start)) {
            crate::kernels::par::prefetch(e);
        }
    }

    /// Keeps the lists one chunk of walks made: `made` holds for each its leaf position,
    /// start in `entries`, length and the fat box it was made for. Each replaces its leaf's
    /// list, over its room where it fits, else at the arena's end.
    pub(in crate::world::search) fn keep(&mut self, made: &[(u32, u32, u32, Aabb<D>)], entries: &[Entry<D>]) {
        for &(p, start, len, fat) in made {
            let list = &entries[start as usize..(start + len) as usize];
            let head = &mut self.heads[p as usize];
            let held = head.generation != NONE;
            let start = if held && len <= head.len {
                self.arena.write(head.start, list);
                self.arena.release((head.len - len) as usize);
                head.start
            } else {
                if held {
                    self.arena.release(head.len as usize);
                }
                self.arena.push(list, list.len())
            };
            *head = StaticHead { start, len, generation: self.generation, fat };
        }
    }

    /// Compacts the arena (see [`Arena`]) over the rooms of the lists not dropped.
    pub(super) fn compact(&mut self) {
        let rooms = self.heads.iter_mut().filter(|h| h.generation != NONE);
        self.arena.compact(rooms.map(|h| (&mut h.start, h.len as usize)));
    }

    /// Every list is dropped (the static tree rebuilt, or after a failed frame).
    pub(in crate::world::search) fn stale_all(&mut self) {
        for h in self.heads.iter_mut() {
            h.generation = NONE;
        }
        self.arena.clear();
    }

    /// The lists whose fat boxes meet one of the frame's static changes
    /// ([`Statics::changed`]) are dropped: a list holds the static objects that met its
    /// fat box when it was made, so only a change that meets the fat box can make it
    /// wrong. O(lists log changes), in fixed chunks on the caller's pool.
    pub(in crate::world::search) fn stale_near(&mut self, statics: &Statics<D>) {
        let dropped: usize = self
            .heads
            .par_chunks_mut(1024)
            .map(|chunk| {
                let mut dropped = 0;
                for h in chunk.iter_mut().filter(|h| h.generation != NONE) {
                    if statics.changed(&h.fat) {
                        dropped += h.len as usize;
                        h.generation = NONE;
                    }
                }
                dropped
            })
            .sum();
        self.arena.release(dropped);
    }

    /// The list kept at leaf position `p`, if any, is dropped (its leaf was freed).
    pub(in crate::world::search) fn drop_list(&mut self, p: usize) {
        if let Some(h) = self.heads.get_mut(p).filter(|h| h.generation != NONE) {
            self.arena.release(h.len as usize);
            h.generation = NONE;
        }
    }

    /// Moves the lists to their objects' new leaf positions, in place: the list at new
    /// position `p` is the one at old position `from[p]` (`NONE`: none; no old position
    /// twice), and a list no new position takes is dropped. `from` is extended into a
    /// whole permutation (each new position without a list takes an old one that is
    /// dropped), which is applied by following its cycles, with `taken` as the marks.
    /// O(old + new), and nothing allocated where the arrays are as long as before.
    pub(super) fn follow(&mut self, from: &mut Vec<u32>) {
        let (n_old, n_new) = (self.heads.len(), from.len());
        let m = n_old.max(n_new);
        self.heads.resize(m, StaticHead::NO_LIST);
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
            let h = &mut self.heads[free];
            if h.generation != NONE {
                self.arena.release(h.len as usize);
            }
            *h = StaticHead::NO_LIST;
            *f = free as u32;
            free += 1;
        }
        // The permutation's cycles: position `p` takes what was at `from[p]`.
        taken.fill(0);
        for start in 0..m {
            if bit(taken, start) {
                continue;
            }
            let first = self.heads[start];
            let mut j = start;
            loop {
                taken[j / 64] |= 1 << (j % 64);
                let k = from[j] as usize;
                if k == start {
                    self.heads[j] = first;
                    break;
                }
                self.heads[j] = self.heads[k];
                j = k;
            }
        }
        self.heads.truncate(n_new);
        from.truncate(n_new);
    }

    /// Heap bytes held, from capacities.
    pub(super) fn bytes(&self) -> usize {
        self.heads.capacity() * std::mem::size_of::<StaticHead<D>>()
            + 8 * self.taken.capacity()
            + self.arena.bytes()
    }

    /// Checks the lists against the world as of the last update, with `leaves` dynamic
    /// leaves: a head a leaf; every valid list holding exactly the static objects whose
    /// pair-test boxes (grown by the margin) meet its fat box, each once, in any order,
    /// each entry's steps bracketing its object's box clipped to the fat box; the arena
    /// sound over the rooms of the lists not dropped. A walk of the static tree a list.
    pub(super) fn validate(
        &self,
        statics: &Statics<D>,
        store: &Store<D>,
        margin: f32,
        leaves: usize,
    ) -> Result<(), Error> {
        let bad = |detail: String| Err(Error::Invariant { detail: format!("static lists: {detail}") });
        if self.heads.len() != leaves {
            return bad(format!("{} lists for {leaves} dynamic leaves", self.heads.len()));
        }
        let held = self.heads.iter().filter(|h| h.generation != NONE);
        self.arena.validate("static lists", held.map(|h| (h.start, h.len as usize)))?;
        let (mut want, mut have) = (Vec::new(), Vec::new());
        for (i, h) in self.heads.iter().enumerate().filter(|(_, h)| h.generation == self.generation) {
            let list = self.entries(h);
            let Some(grid) = Grid::new(&h.fat) else {
                return bad(format!("list {i} is kept for a box without a grid"));
            };
            want.clear();
            let _ = statics.query(&h.fat, |y, _, _| {
                let g = store.boxes[y as usize].grown(margin);
                if h.fat.overlaps(&g) && !g.is_inverted() {
                    want.push(y);
                }
                ControlFlow::Continue(())
            });
            have.clear();
            have.extend(list.iter().map(|e| e.id));
            want.sort_unstable();
            have.sort_unstable();
            if want != have {
                return bad(format!("list {i} is not the static objects near its box"));
            }
            for e in list {
                let g = store.boxes[e.id as usize].grown(margin);
                let (outer, inner) = (grid.outer(e), grid.inner(e));
                let off = (0..D).any(|k| {
                    let (lo, hi) = (g.min[k].max(h.fat.min[k]), g.max[k].min(h.fat.max[k]));
                    !(outer.min[k] <= lo && hi <= outer.max[k] && lo <= inner.min[k] && inner.max[k] <= hi)
                });
                if off {
                    return bad(format!("list {i}'s entry for slot {} is off its box", e.id));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::NONE;
    use crate::world::{Kind, World};
    use crate::{Aabb, Config, Error};

    /// A static list that loses an entry no longer holds the static objects near it.
    #[test]
    fn validate_catches_an_incomplete_static_list() {
        let mut w = World::<2>::new(Config::default()).unwrap();
        let statics: Vec<_> = (0..40).map(|i| Aabb::new([i as f32, 0.0], [i as f32 + 1.0, 1.0])).collect();
        w.extend(&statics, Kind::Static).unwrap();
        let d: Vec<_> =
            (0..4).map(|i| Aabb::new([10.0 * i as f32 + 0.5, 0.5], [10.0 * i as f32 + 1.5, 1.5])).collect();
        let hs = w.extend(&d, Kind::Dynamic).unwrap();
        w.update().unwrap();
        w.set_aabb(hs[1], Aabb::new([10.6, 0.5], [11.6, 1.5])).unwrap();
        w.update().unwrap();
        w.validate().unwrap();
        let lists = &mut w.scratch.search.lists.statics;
        let h = lists.heads.iter_mut().find(|h| h.len > 0).expect("a changed object made a list");
        h.len -= 1;
        lists.arena.release(1);
        match w.validate() {
            Err(Error::Invariant { detail }) => assert!(detail.contains("near its box"), "{detail}"),
            other => panic!("validate returned {other:?}"),
        }
    }

    /// A rebuild of the dynamic tree moves each object's static list to its new leaf:
    /// the clean objects keep their lists (the same fat boxes and entries), a removed
    /// object's list is dropped, and the arena's count stays right.
    #[test]
    fn static_lists_follow_their_objects_through_a_rebuild() {
        let mut w = World::<2>::new(Config::default()).unwrap();
        let statics: Vec<_> = (0..200).map(|i| Aabb::new([i as f32, 0.0], [i as f32 + 1.0, 1.0])).collect();
        w.extend(&statics, Kind::Static).unwrap();
        let mut now: Vec<_> =
            (0..60).map(|i| Aabb::new([3.0 * i as f32 + 0.5, 0.5], [3.0 * i as f32 + 1.5, 1.5])).collect();
        let hs = w.extend(&now, Kind::Dynamic).unwrap();
        w.update().unwrap();
        // Every dynamic object changes once, and so makes its list.
        for b in now.iter_mut() {
            b.min[0] += 0.01;
            b.max[0] += 0.01;
        }
        let changes: Vec<_> = hs.iter().copied().zip(now.iter().copied()).collect();
        w.set_aabbs(&changes).unwrap();
        w.update().unwrap();
        w.validate().unwrap();
        let list_of = |w: &World<2>, s: u32| {
            let search = &w.scratch.search;
            let p = search.dynamics.slot_pos[s as usize];
            search.lists.statics.get(p).map(|h| (h.fat, search.lists.statics.entries(h).to_vec()))
        };
        let before: Vec<_> = hs.iter().map(|h| list_of(&w, h.index())).collect();
        assert!(before.iter().all(Option::is_some), "every changed object made a list");
        // One object removed, one changed, and the tree rebuilt in that frame.
        w.remove(hs[0]).unwrap();
        now[1].min[0] += 0.01;
        now[1].max[0] += 0.01;
        w.set_aabb(hs[1], now[1]).unwrap();
        w.scratch.search.dynamics.call_for_rebuild();
        let built = w.scratch.search.dynamics.built_at();
        w.update().unwrap();
        assert_ne!(w.scratch.search.dynamics.built_at(), built, "the tree was rebuilt");
        w.validate().unwrap();
        for (i, h) in hs.iter().enumerate().skip(2) {
            assert_eq!(list_of(&w, h.index()), before[i], "object {i}'s list");
        }
        let lists = w.scratch.search.lists.statics.heads.iter().filter(|h| h.generation != NONE).count();
        assert_eq!(lists, hs.len() - 1, "the removed object's list is dropped");
    }
}
