//! The search's invariants ([`Search::validate`]), checked by `World::validate` where
//! nothing is pending: each owner's own (the static tree, the dynamic tree and its maps,
//! both kinds of neighbour list and their arenas), each against the world as of the last
//! update. O(n log n) for the trees, a walk a list for the lists.

use super::Search;
use crate::world::{handle::Slots, store::Store};
use crate::Error;

impl<const D: usize> Search<D> {
    /// Checks the search's invariants against the world as of the last update (nothing
    /// changed since): the static tree's ([`Statics::validate`](super::Statics::validate)),
    /// the dynamic tree's ([`Dynamics::validate`](super::Dynamics::validate)), and, once
    /// the dynamic tree is built, the lists' against both trees
    /// ([`Lists::validate`](super::Lists::validate)).
    pub(crate) fn validate(&self, slots: &Slots, store: &Store<D>, margin: f32) -> Result<(), Error> {
        self.statics.validate(slots, store, margin)?;
        self.dynamics.validate(slots, store, margin)?;
        if !self.dynamics.built() {
            return Ok(());
        }
        self.lists.validate(&self.statics, &self.dynamics.tree, store, margin)
    }
}

#[cfg(test)]
mod tests {
    use crate::world::{Kind, World};
    use crate::{Aabb, Config, Error};

    /// A static box that changes behind the world's back (not marked changed) no longer
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
}
