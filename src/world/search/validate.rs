//! The search's invariants ([`Search::validate`]), checked by `World::validate` where
//! nothing is pending: the trees, the static tree's contents, and every dynamic object's
//! leaf and its copy of the box, and the neighbour lists. O(n) for the trees, a walk a list
//! for the lists.

use super::listed::{Entry, Grid};
use super::{holds, Search, EXTRA, NONE};
use crate::world::{handle::Slots, store::Store};
use crate::Error;
use std::ops::ControlFlow;

impl<const D: usize> Search<D> {
    /// Checks the search's invariants against the world as of the last update (nothing
    /// changed since): both trees valid, the static tree holding exactly the live static
    /// objects, and every live dynamic object in a leaf whose box holds its grown box, or
    /// in the list, with the maps agreeing. O(n).
    pub(crate) fn validate(&self, slots: &Slots, store: &Store<D>, margin: f32) -> Result<(), Error> {
        let bad = |detail: String| Err(Error::Invariant { detail: format!("world search: {detail}") });
        self.statics.validate(slots, store, margin)?;
        self.dynamics.validate()?;
        if !self.dynamic_built {
            return Ok(());
        }
        for s in (0..store.len()).filter(|&s| slots.alive[s] && store.kinds[s].moves()) {
            let b = store.boxes[s].grown(margin);
            let t = store.boxes[s].grown(super::tree_margin(margin));
            match self.slot_pos.get(s).copied().unwrap_or(NONE) {
                EXTRA if self.extras.contains(&(s as u32)) => {}
                p if p < EXTRA => {
                    if self.pos_slot.get(p as usize) != Some(&(s as u32)) {
                        return bad(format!("slot {s} and leaf {p} disagree"));
                    }
                    if !holds(&self.dynamics.leaves[p as usize], &t) {
                        return bad(format!("leaf {p} does not hold slot {s}'s box"));
                    }
                    if self.leaf_box.get(p as usize) != Some(&b) {
                        return bad(format!("leaf {p} keeps a stale copy of slot {s}'s box"));
                    }
                }
                p => return bad(format!("live dynamic slot {s} has no leaf ({p:#x})")),
            }
        }
        self.validate_static_lists(store, margin)?;
        self.validate_dynamic_lists()
    }

    /// Every valid static list holds exactly the static objects whose pair-test boxes
    /// (grown by the margin) meet the list's fat box, each with that box, in any order;
    /// the arena's live count is the valid lists' lengths.
    fn validate_static_lists(&self, store: &Store<D>, margin: f32) -> Result<(), Error> {
        let bad = |detail: String| Err(Error::Invariant { detail: format!("world search: {detail}") });
        if self.dynamic_built && self.near.len() != self.dynamics.len() {
            return bad(format!(
                "{} static lists for {} dynamic leaves",
                self.near.len(),
                self.dynamics.len()
            ));
        }
        let mut live = 0;
        let (mut want, mut have) = (Vec::new(), Vec::new());
        for (i, l) in self.near.iter().enumerate().filter(|(_, l)| l.generation != NONE) {
            live += l.len as usize;
            if l.generation != self.static_generation {
                continue;
            }
            let Some(list) = self.arena.get(l.start as usize..(l.start + l.len) as usize) else {
                return bad(format!("static list {i} runs past the arena"));
            };
            let Some(grid) = Grid::new(&l.fat) else {
                return bad(format!("static list {i} is kept for a box without a grid"));
            };
            want.clear();
            let _ = self.statics.query(&l.fat, |y, _, _| {
                let g = store.boxes[y as usize].grown(margin);
                if l.fat.overlaps(&g) && !g.is_inverted() {
                    want.push(y);
                }
                ControlFlow::Continue(())
            });
            have.clear();
            have.extend(list.iter().map(|e| e.slot));
            want.sort_unstable();
            have.sort_unstable();
            if want != have {
                return bad(format!("static list {i} is not the static objects near its box"));
            }
            // Each entry's steps bracket its object's box clipped to the fat box.
            for e in list {
                let g = store.boxes[e.slot as usize].grown(margin);
                let (outer, inner) = (grid.outer(e), grid.inner(e));
                let off = (0..D).any(|k| {
                    let (lo, hi) = (g.min[k].max(l.fat.min[k]), g.max[k].min(l.fat.max[k]));
                    !(outer.min[k] <= lo && hi <= outer.max[k] && lo <= inner.min[k] && inner.max[k] <= hi)
                });
                if off {
                    return bad(format!("static list {i}'s entry for slot {} is off its box", e.slot));
                }
            }
        }
        if live != self.arena_live {
            return bad(format!("{} live arena entries counted, {live} in the lists", self.arena_live));
        }
        Ok(())
    }

    /// Every valid dynamic list holds each other leaf whose box meets its leaf's box, with
    /// that leaf's box as it is (in steps of its own leaf's box), and nothing else; the
    /// lists' arena is sound.
    fn validate_dynamic_lists(&self) -> Result<(), Error> {
        let bad = |detail: String| Err(Error::Invariant { detail: format!("world search: {detail}") });
        let n = self.dynamics.len();
        if self.leaf_lists.len() != n {
            return bad(format!("{} dynamic lists for {n} leaves", self.leaf_lists.len()));
        }
        if let Err(detail) = self.leaf_lists.check() {
            return bad(detail);
        }
        let leaves = &self.dynamics.leaves;
        for p in 0..n {
            let Some(l) = self.leaf_lists.get(p) else { continue };
            let Some(grid) = Grid::new(&leaves[p]) else {
                return bad(format!("leaf {p} keeps a list for a box without a grid"));
            };
            let stale = |e: &Entry<D>| {
                let q = e.slot as usize;
                q >= n || q == p || *e != grid.encode(e.slot, &leaves[q])
            };
            if let Some(e) = l.iter().find(|e| stale(e)) {
                return bad(format!("leaf {p}'s list has leaf {} with a stale box", e.slot));
            }
            let mut missing = None;
            let _ = self.dynamics.query(&leaves[p], |q| {
                if q != p && !l.iter().any(|e| e.slot as usize == q) {
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
}

#[cfg(test)]
mod tests {
    use crate::world::{Kind, World};
    use crate::{Aabb, Config, Error};

    /// A static box that changes behind the world's back (no dirty mark) no longer
    /// matches its leaf.
    #[test]
    fn validate_catches_a_static_leaf_off_its_box() {
        let mut w = World::<2>::new(Config::default()).unwrap();
        let statics: Vec<_> =
            (0..5).map(|i| Aabb::new([3.0 * i as f32, 0.0], [3.0 * i as f32 + 1.0, 1.0])).collect();
        w.extend(&statics, Kind::Static).unwrap();
        w.insert(Aabb::new([0.5; 2], [2.5; 2]), Kind::Dynamic).unwrap();
        w.update().unwrap();
        w.validate().unwrap();
        w.store.boxes[2].max[1] = 0.5;
        match w.validate() {
            Err(Error::Invariant { detail }) => assert!(detail.contains("grown box"), "{detail}"),
            other => panic!("validate returned {other:?}"),
        }
    }

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
        let search = &mut w.scratch.search;
        let l = search.near.iter_mut().find(|l| l.len > 0).expect("a moved object made a list");
        search.arena_live -= 1;
        l.len -= 1;
        match w.validate() {
            Err(Error::Invariant { detail }) => assert!(detail.contains("near its box"), "{detail}"),
            other => panic!("validate returned {other:?}"),
        }
    }

    /// A row of touching dynamic boxes, each moved a little every frame while the others
    /// stay: the movers' leaf lists are made, kept and read.
    #[test]
    fn validate_catches_an_incomplete_or_stale_dynamic_list() {
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
        let lists = &mut w.scratch.search.leaf_lists;
        let p =
            (0..lists.len()).find(|&p| lists.get(p).is_some_and(|l| !l.is_empty())).expect("a valid list");
        *lists.get_mut(p).unwrap().0 -= 1;
        assert!(matches!(w.validate(), Err(Error::Invariant { detail }) if detail.contains("misses")));
        *w.scratch.search.leaf_lists.get_mut(p).unwrap().0 += 1;
        w.validate().unwrap();
        w.scratch.search.leaf_lists.get_mut(p).unwrap().1[0].max[0] ^= 1;
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
        let s = &w.scratch.search;
        let crowded = (0..s.leaf_lists.len()).filter(|&p| s.leaf_lists.crowded(p)).count();
        assert!(crowded > 0, "no leaf was marked crowded");
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
        // Every dynamic object moves once, and so makes its list.
        for b in now.iter_mut() {
            b.min[0] += 0.01;
            b.max[0] += 0.01;
        }
        let moves: Vec<_> = hs.iter().copied().zip(now.iter().copied()).collect();
        w.set_aabbs(&moves).unwrap();
        w.update().unwrap();
        w.validate().unwrap();
        let list_of = |w: &World<2>, s: u32| {
            let search = &w.scratch.search;
            let p = search.slot_pos[s as usize] as usize;
            let l = search.near[p];
            (l.generation != super::NONE)
                .then(|| (l.fat, search.arena[l.start as usize..(l.start + l.len) as usize].to_vec()))
        };
        let before: Vec<_> = hs.iter().map(|h| list_of(&w, h.index())).collect();
        assert!(before.iter().all(Option::is_some), "every mover made a list");
        // One object removed, one moved, and the tree rebuilt in that frame.
        w.remove(hs[0]).unwrap();
        now[1].min[0] += 0.01;
        now[1].max[0] += 0.01;
        w.set_aabb(hs[1], now[1]).unwrap();
        w.scratch.search.rebuild = true;
        let built = w.scratch.search.dynamic_built_at;
        w.update().unwrap();
        assert_ne!(w.scratch.search.dynamic_built_at, built, "the tree was rebuilt");
        w.validate().unwrap();
        for (i, h) in hs.iter().enumerate().skip(2) {
            assert_eq!(list_of(&w, h.index()), before[i], "object {i}'s list");
        }
        let lists = w.scratch.search.near.iter().filter(|l| l.generation != super::NONE).count();
        assert_eq!(lists, hs.len() - 1, "the removed object's list is dropped");
    }
}
