//! The search's invariants ([`Search::validate`]), checked by `World::validate` where
//! nothing is pending: the trees, the static tree's contents, and every dynamic object's
//! leaf and its copy of the box. O(n).

use super::{holds, Search, EXTRA, NONE};
use crate::world::{handle::Slots, store::Store, Kind};
use crate::Error;

impl<const D: usize> Search<D> {
    /// Checks the search's invariants against the world as of the last update (nothing
    /// changed since): both trees valid, the static tree holding exactly the live static
    /// objects, and every live dynamic object in a leaf whose box holds its grown box, or
    /// in the list, with the maps agreeing. O(n).
    pub(crate) fn validate(&self, slots: &Slots, store: &Store<D>, margin: f32) -> Result<(), Error> {
        let bad = |detail: String| Err(Error::Invariant { detail: format!("world search: {detail}") });
        self.statics.validate()?;
        self.dynamics.validate()?;
        if !self.static_built {
            return Ok(());
        }
        let live = |s: usize, k: Kind| slots.alive[s] && store.kinds[s] == k;
        let statics = (0..store.len()).filter(|&s| live(s, Kind::Static));
        let mut ids = self.statics.ids.clone();
        ids.sort_unstable();
        if !statics.eq(ids.iter().map(|&s| s as usize)) {
            return bad("the static tree does not hold exactly the live static objects".into());
        }
        let gens = self.statics.ids.iter().map(|&s| slots.generations[s as usize]);
        if self.static_gens.len() != self.statics.ids.len() || !gens.eq(self.static_gens.iter().copied()) {
            return bad("the static leaves' generations are not their objects'".into());
        }
        if !self.dynamic_built {
            return Ok(());
        }
        for s in (0..store.len()).filter(|&s| live(s, Kind::Dynamic)) {
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::world::{Kind, World};
    use crate::{Aabb, Config, Error};

    #[test]
    fn validate_catches_a_stale_static_generation() {
        let mut w = World::<2>::new(Config::default()).unwrap();
        let statics = [Aabb::new([0.0; 2], [1.0; 2]), Aabb::new([2.0; 2], [3.0; 2])];
        w.extend(&statics, Kind::Static).unwrap();
        w.insert(Aabb::new([0.5; 2], [2.5; 2]), Kind::Dynamic).unwrap();
        w.update().unwrap();
        w.validate().unwrap();
        w.scratch.search.static_gens[1] += 1;
        match w.validate() {
            Err(Error::Invariant { detail }) => assert!(detail.contains("generations"), "{detail}"),
            other => panic!("validate returned {other:?}"),
        }
    }
}
