//! [`World::validate`]: every invariant of the world, checked.
//!
//! - The slot table: the per-slot arrays agree in length (the filters cover at most every
//!   slot); the live count; live generations below the retired mark; the free list holds
//!   exactly the dead slots that are not retired, each once.
//! - The store: the kind counts; the count of slots with a filter other than the default;
//!   every dead slot with the default filter; every live box finite with `min <= max`.
//! - The dirty set: bit set iff listed, no duplicates, no bit past the last slot; a
//!   snapshot for each listed slot, in list order, consistent with the slot's generation
//!   now.
//! - The pairs: every key names two slots `lo < hi` that were live at the last update,
//!   and, as of the last update, paired by the rule (a dynamic member, filters accepting
//!   each other, grown boxes overlapping); where at most [`BRUTE_FORCE_MAX`] objects were
//!   live, every pair the rule makes is in the store (by testing all pairs). Under
//!   hysteresis, a stored pair that does not overlap is among the kept pairs, within
//!   the hysteresis; each kept pair is stored, apart and named as its slots were. The cached
//!   sorted list, if built, equals the keys.
//! - Cost: O(slots + pairs + changed log changed), plus O(n^2) box tests where n, the
//!   objects live at the last update, is at most [`BRUTE_FORCE_MAX`]. For tests and debug
//!   builds, not for every frame of a large world.
//! - Threads: none. Allocation: a flag a slot and the snapshot index.
//! - Source: Box2D v3's `b2ValidateBroadphase` (checks beside the structure).

use super::handle::RETIRED;
use super::hysteresis::near;
use super::pairs::{key, slots_of};
use super::store::{index_dirty, pairable, touching, PreFrame, Snapshot};
use super::{Handle, World};
use crate::Error;

/// The most objects for which `validate` also tests every pair (about 2 * 10^6 box tests
/// at this size).
pub(crate) const BRUTE_FORCE_MAX: usize = 2048;

/// `Err(Error::Invariant)` with the formatted detail unless `cond` holds.
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(Error::Invariant { detail: format!("world: {}", format_args!($($fmt)+)) });
        }
    };
}

impl<const D: usize> World<D> {
    /// Checks every invariant of the world (see the `validate` module docs): the slot
    /// table and free list, the store, the dirty set and its snapshots, and the pair
    /// store against the pair rule as of the last update. `Ok` unless this crate has a
    /// bug; then [`Error::Invariant`] names the broken invariant.
    ///
    /// O(objects + pairs), plus a test of every pair of objects where at most 2048 are
    /// live: meant for tests and debug builds.
    pub fn validate(&self) -> Result<(), Error> {
        self.validate_slots()?;
        self.validate_dirty()?;
        self.validate_pairs()?;
        // The search's trees describe the world as of the last update, which is the world
        // now where nothing is pending.
        if self.dirty.is_empty() {
            self.scratch.search.validate(&self.slots, &self.store, self.config.margin)?;
        }
        Ok(())
    }

    /// The slot table and the store.
    fn validate_slots(&self) -> Result<(), Error> {
        let (sl, st) = (&self.slots, &self.store);
        let n = sl.len();
        ensure!(
            sl.alive.len() == n && st.boxes.len() == n && st.kinds.len() == n && st.filters.len() <= n,
            "per-slot arrays differ in length: generations {n}, alive {}, boxes {}, kinds {}, filters {} (at most)",
            sl.alive.len(),
            st.boxes.len(),
            st.kinds.len(),
            st.filters.len()
        );
        ensure!(n <= sl.limit as usize, "{n} slots, more than the limit {}", sl.limit);
        let (mut live, mut statics, mut moving, mut kinematics, mut retired) = (0, 0, 0, 0, 0);
        for s in 0..n {
            if sl.alive[s] {
                live += 1;
                ensure!(sl.generations[s] != RETIRED, "live slot {s} has the retired generation");
                ensure!(st.boxes[s].is_valid(), "live slot {s} has an invalid box {:?}", st.boxes[s]);
                match st.kinds[s] {
                    super::Kind::Static => statics += 1,
                    super::Kind::Kinematic => {
                        moving += 1;
                        kinematics += 1;
                    }
                    super::Kind::Dynamic => moving += 1,
                }
            } else {
                ensure!(
                    st.filter(s) == super::Filter::default(),
                    "dead slot {s} has a filter {:?}",
                    st.filter(s)
                );
                if sl.generations[s] == RETIRED {
                    retired += 1;
                }
            }
        }
        ensure!(live == sl.live, "{live} live slots, counted {}", sl.live);
        // Slots past the stored filters have the default.
        let filtered = st.filters.iter().filter(|&&f| f != super::Filter::default()).count();
        ensure!(filtered == st.filtered, "{filtered} slots with a filter, counted {}", st.filtered);
        ensure!(
            statics == st.statics && moving == st.moving && kinematics == st.kinematics,
            "{statics} static, {moving} moving and {kinematics} kinematic objects, counted {}, {} and {}",
            st.statics,
            st.moving,
            st.kinematics
        );
        ensure!(st.data.len() <= n, "user data for {} of {n} slots", st.data.len());
        ensure!((0..n).all(|s| sl.alive[s] || st.user_data(s) == 0), "a dead slot has user data");
        let mut seen = vec![false; n];
        for (i, &s) in sl.free.iter().enumerate() {
            let su = s as usize;
            ensure!(su < n, "free list entry {i} is slot {s}, past the {n} slots");
            ensure!(!sl.alive[su], "free list entry {i}: slot {s} is live");
            ensure!(sl.generations[su] != RETIRED, "free list entry {i}: slot {s} is retired");
            ensure!(!seen[su], "free list entry {i}: slot {s} is listed twice");
            seen[su] = true;
        }
        // Every listed slot is dead, not retired and listed once; equal counts make the
        // list all of them.
        ensure!(
            sl.free.len() == n - live - retired,
            "{} free slots listed, {} dead slots not retired",
            sl.free.len(),
            n - live - retired
        );
        Ok(())
    }

    /// The dirty set and the snapshots.
    fn validate_dirty(&self) -> Result<(), Error> {
        let (d, n) = (&self.dirty, self.slots.len());
        ensure!(d.bits.len() * 64 >= n, "{} dirty words for {n} slots", d.bits.len());
        let set: usize = d.bits.iter().map(|w| w.count_ones() as usize).sum();
        ensure!(set == d.list.len(), "{set} dirty bits set, {} slots listed", d.list.len());
        let mut seen = vec![false; n];
        for (i, &s) in d.list.iter().enumerate() {
            let su = s as usize;
            ensure!(su < n, "dirty list entry {i} is slot {s}, past the {n} slots");
            ensure!(!seen[su], "dirty list entry {i}: slot {s} is listed twice");
            ensure!(d.contains(s), "dirty list entry {i}: slot {s} has no dirty bit");
            seen[su] = true;
        }
        // As many bits as listed slots, each listed slot's bit set: no other bit is set
        // (none past the last slot either).
        let before = &self.store.before;
        ensure!(before.len() == d.list.len(), "{} snapshots for {} dirty slots", before.len(), d.list.len());
        for (&s, b) in d.list.iter().zip(before) {
            let g = self.slots.generations[s as usize];
            ensure!(
                b.generation <= g,
                "slot {s}: snapshot generation {} above the current {g}",
                b.generation
            );
            if b.alive {
                ensure!(
                    b.generation != RETIRED,
                    "slot {s}: snapshot of a live object at the retired generation"
                );
                ensure!(b.aabb.is_valid(), "slot {s}: snapshot of a live object with an invalid box");
            }
        }
        Ok(())
    }

    /// The pair store against the rule, as of the last update.
    fn validate_pairs(&self) -> Result<(), Error> {
        let mut index = Vec::new();
        index_dirty(self.dirty.list(), &mut index);
        let view = PreFrame { slots: &self.slots, store: &self.store, dirty: &self.dirty, index: &index };
        let n = self.slots.len();
        let margin = self.config.margin;
        let (h, kept) = (self.config.hysteresis, &self.apart.kept);
        ensure!(h > 0.0 || kept.is_empty(), "{} pairs kept without hysteresis", kept.len());
        let misplaced = self.pairs.misplaced();
        ensure!(
            misplaced.is_none(),
            "pair key {:#x} is in another slot range's shard",
            misplaced.unwrap_or(0)
        );
        for k in self.pairs.keys() {
            let (lo, hi) = slots_of(k);
            ensure!(lo < hi && (hi as usize) < n, "pair key {k:#x}: slots {lo}, {hi} not lo < hi < {n}");
            let (a, b) = (view.get(lo), view.get(hi));
            ensure!(a.alive && b.alive, "pair ({lo}, {hi}): a member was not live at the last update");
            ensure!(
                pairable(a.kind, a.filter, b.kind, b.filter),
                "pair ({lo}, {hi}): kinds {:?}, {:?} or filters {:?}, {:?} refuse it",
                a.kind,
                a.filter,
                b.kind,
                b.filter
            );
            let held = || {
                let (x, y) = (a.aabb.grown(margin), b.aabb.grown(margin));
                let named = [Handle::new(lo, a.generation), Handle::new(hi, b.generation)];
                !x.is_inverted() && !y.is_inverted() && near(&x, &y, h) && kept.binary_search(&named).is_ok()
            };
            ensure!(
                touching(&a.aabb, &b.aabb, margin) || held(),
                "pair ({lo}, {hi}): boxes {:?}, {:?} neither overlap with margin {margin} nor are kept within {h}",
                a.aabb,
                b.aabb
            );
        }
        // The kept pairs: sorted, stored, apart and near as of the last update.
        for (i, p) in kept.iter().enumerate() {
            let (lo, hi) = (p[0].index(), p[1].index());
            ensure!(i == 0 || kept[i - 1] < *p, "kept pairs not ascending at {i}");
            ensure!(self.pairs.contains(key(lo, hi)), "kept pair {p:?} is not stored");
            let (a, b) = (view.get(lo), view.get(hi));
            ensure!(
                [a.generation, b.generation] == [p[0].generation(), p[1].generation()],
                "kept pair {p:?} names other objects than slots {lo}, {hi} held"
            );
            ensure!(!touching(&a.aabb, &b.aabb, margin), "kept pair {p:?} overlaps");
        }
        // Completeness, by testing every pair of the objects live at the last update.
        let objects: Vec<(u32, Snapshot<D>)> =
            (0..n as u32).map(|s| (s, view.get(s))).filter(|(_, o)| o.alive).collect();
        if objects.len() <= BRUTE_FORCE_MAX {
            let mut count = 0;
            for (i, (sa, a)) in objects.iter().enumerate() {
                for (sb, b) in &objects[i + 1..] {
                    if pairable(a.kind, a.filter, b.kind, b.filter) && touching(&a.aabb, &b.aabb, margin) {
                        ensure!(self.pairs.contains(key(*sa, *sb)), "pair ({sa}, {sb}) is missing");
                        count += 1;
                    }
                }
            }
            ensure!(
                count + kept.len() == self.pairs.len(),
                "{} pairs stored, the rule makes {count} and {} are kept",
                self.pairs.len(),
                kept.len()
            );
        }
        if let Some(cached) = self.pairs.cache.get() {
            ensure!(
                cached.len() == self.pairs.len(),
                "{} pairs cached, {} stored",
                cached.len(),
                self.pairs.len()
            );
            for (i, [a, b]) in cached.iter().enumerate() {
                ensure!(i == 0 || cached[i - 1] < [*a, *b], "cached pairs not ascending at {i}");
                ensure!(self.pairs.contains(key(a.index(), b.index())), "cached pair {i} is not stored");
                let named = [
                    Handle::new(a.index(), view.generation(a.index())),
                    Handle::new(b.index(), view.generation(b.index())),
                ];
                ensure!(named == [*a, *b], "cached pair {i} is {:?}, stored as {named:?}", [a, b]);
            }
        }
        Ok(())
    }
}
