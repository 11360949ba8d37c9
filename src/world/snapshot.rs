//! The world's snapshot (feature `serde`): [`World`] implements `Serialize` and
//! `Deserialize`, and a world read back is the world written, call for call.
//!
//! - Format ([`Image`], version [`VERSION`]): the format version and the dimension `D`
//!   first (each checked as it is read), the configuration, the slot table (generations,
//!   live flags, the free list in its order), the store (boxes, kinds, the stored prefix
//!   of filters and of user data), the changes pending since the last update (each
//!   changed slot, in the order of its first change, with its state as of the last
//!   update), the pairs as slot pairs in ascending order, the pairs the hysteresis keeps,
//!   the last update's events and the objects removed since. The search's trees and
//!   lists are not written: they are rebuilt on reading. Equal worlds write equal bytes.
//! - Reading checks everything: another version or dimension, arrays that disagree in
//!   length, a box that is not finite with `min <= max` (anywhere, a dead slot's or a
//!   snapshot's included), a changed slot past the slots or named twice, a pair out of
//!   order or naming a slot past the end, events that do not fit the pairs, then every
//!   invariant of [`World::validate`], and the pairs against the pairs the boxes make (a
//!   whole frame's search over the world as of the last update): each is an error, never
//!   a panic, and a world read back passes `validate`.
//! - Not written: the statistics (a restored world's are the counts of its last update's
//!   events and objects, with zero times and bytes, until its next update), the cost model's timings and the
//!   search's frame count (which pick how a frame is found and when a tree is rebuilt,
//!   never what a call returns).
//! - Cost: writing O(n + p log p) for n slots and p pairs; reading O(n + p log p) plus the
//!   trees' build and one whole frame's search, about a first update's cost, and the
//!   O(n^2) pair test of `validate` where at most 2048 objects are live.
//! - Threads: the rebuild and search on the caller's rayon pool. Allocation: the image
//!   (borrowed while writing, but for the sorted pairs), a copy of the slot table and
//!   store as of the last update where changes are pending.
//! - Source: this crate.

use super::dirty::Dirty;
use super::frame::Scratch;
use super::handle::{Slots, MAX_SLOTS};
use super::pairs::{key, slots_of, PairStore};
use super::search::Search;
use super::store::{Snapshot, Store};
use super::{hysteresis, Departed, Filter, Handle, Kind, World, WorldStats};
use crate::{Aabb, Broadphase, Config};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;

/// The format version this build writes and reads.
const VERSION: u32 = 1;

/// The format version, checked as it is read, before the fields after it.
struct Version;

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(VERSION)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<De: Deserializer<'de>>(deserializer: De) -> Result<Self, De::Error> {
        match u32::deserialize(deserializer)? {
            VERSION => Ok(Version),
            v => Err(De::Error::custom(format!(
                "world snapshot of format version {v}; this build reads version {VERSION}"
            ))),
        }
    }
}

/// The dimension `D`, checked as it is read.
struct Dimensions<const D: usize>;

impl<const D: usize> Serialize for Dimensions<D> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(D as u64)
    }
}

impl<'de, const D: usize> Deserialize<'de> for Dimensions<D> {
    fn deserialize<De: Deserializer<'de>>(deserializer: De) -> Result<Self, De::Error> {
        match u64::deserialize(deserializer)? {
            d if d == D as u64 => Ok(Dimensions),
            d => Err(De::Error::custom(format!("world snapshot in {d} dimensions, read as {D}"))),
        }
    }
}

/// A slot changed since the last update, with its state as of the last update (the
/// store's snapshot).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Changed<const D: usize> {
    slot: u32,
    alive: bool,
    generation: u32,
    aabb: Aabb<D>,
    kind: Kind,
    filter: Filter,
}

/// The world as written (module docs); borrowed from the world while writing, owned
/// while reading.
#[derive(Serialize, Deserialize)]
#[serde(rename = "World", deny_unknown_fields)]
struct Image<'a, const D: usize> {
    version: Version,
    dimensions: Dimensions<D>,
    config: Config<D>,
    /// Per slot: its generation, whether it is live, its box and kind.
    generations: Cow<'a, [u32]>,
    alive: Cow<'a, [bool]>,
    boxes: Cow<'a, [Aabb<D>]>,
    kinds: Cow<'a, [Kind]>,
    /// The free slots, the next one reused last.
    free: Cow<'a, [u32]>,
    /// The filters and user data of the first slots (the rest have the defaults), and
    /// the filter changes that pace giving the filters back.
    filters: Cow<'a, [Filter]>,
    filter_changes: u64,
    user_data: Cow<'a, [u64]>,
    /// The changes pending, in the order of each slot's first change.
    changed: Vec<Changed<D>>,
    /// The pairs as of the last update, `[lo, hi]` slots, ascending.
    pairs: Vec<[u32; 2]>,
    /// The stored pairs the hysteresis keeps apart, ascending.
    kept: Cow<'a, [[Handle; 2]]>,
    /// The last update's events.
    added: Cow<'a, [[Handle; 2]]>,
    removed: Cow<'a, [[Handle; 2]]>,
    departed: Cow<'a, [Departed]>,
    /// The objects removed since the last update, in call order.
    departing: Cow<'a, [Departed]>,
}

/// Writes the world's snapshot: see [`World`]'s `Deserialize` for the format and an
/// example.
impl<const D: usize> Serialize for World<D> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut keys: Vec<u64> = self.pairs.keys().collect();
        // Keys are unique: one order from any sort, so equal worlds write equal bytes.
        keys.sort_unstable();
        let changed = self.dirty.list().iter().zip(&self.store.before);
        let (sl, st, s) = (&self.slots, &self.store, &self.scratch);
        Image::<D> {
            version: Version,
            dimensions: Dimensions,
            config: self.config,
            generations: Cow::Borrowed(&sl.generations),
            alive: Cow::Borrowed(&sl.alive),
            boxes: Cow::Borrowed(&st.boxes),
            kinds: Cow::Borrowed(&st.kinds),
            free: Cow::Borrowed(&sl.free),
            filters: Cow::Borrowed(&st.filters),
            filter_changes: st.filter_changes as u64,
            user_data: Cow::Borrowed(&st.data),
            changed: changed
                .map(|(&slot, b)| Changed {
                    slot,
                    alive: b.alive,
                    generation: b.generation,
                    aabb: b.aabb,
                    kind: b.kind,
                    filter: b.filter,
                })
                .collect(),
            pairs: keys.into_iter().map(|k| slots_of(k).into()).collect(),
            kept: Cow::Borrowed(&self.apart.kept),
            added: Cow::Borrowed(&s.added),
            removed: Cow::Borrowed(&s.removed),
            departed: Cow::Borrowed(&s.departed),
            departing: Cow::Borrowed(&self.departing),
        }
        .serialize(serializer)
    }
}

/// Reads a world's snapshot, as `Serialize` wrote it: the world as it was, its handles
/// (the free list's order and the generations), pairs, last events, pending changes and
/// hysteresis included, so that every later call returns what it would have returned on
/// the world written, but for the order of region, point and sphere hits: the search's
/// trees are rebuilt, at about the cost of a first update, and those hits come in the new
/// trees' order (the same objects; [`QueryFilter::sorted`](crate::QueryFilter::sorted)
/// gives the same bytes). Not kept: the statistics (until its next update, a restored world's are the
/// counts of the last update's events and objects, without times or bytes).
///
/// The format is versioned: a snapshot of another format version or dimension, or one
/// that is not a consistent world (lengths that disagree, a free list naming a live
/// slot, a box with NaN or `min > max`, a pair naming a dead slot, pairs that are not
/// those its boxes make, ...) is an error, never a panic.
///
/// ```
/// use broadphase::{Aabb2, Config, Kind, World2};
/// let mut world = World2::new(Config::default())?;
/// let ground = world.insert(Aabb2::new([0.0, 0.0], [10.0, 1.0]), Kind::Static)?;
/// let ball = world.insert(Aabb2::new([4.0, 0.5], [5.0, 1.5]), Kind::Dynamic)?;
/// world.update()?;
/// world.set_aabb(ball, Aabb2::new([4.0, 5.0], [5.0, 6.0]))?; // pending
///
/// let json = serde_json::to_string(&world).expect("a world serializes");
/// let mut copy: World2 = serde_json::from_str(&json).expect("a snapshot reads back");
/// assert_eq!(copy.pairs(), &[[ground, ball]]);
/// assert_eq!(copy.events().added, world.events().added);
/// copy.update()?;
/// world.update()?;
/// assert_eq!(copy.events().removed, &[[ground, ball]]);
/// assert_eq!(copy.insert(Aabb2::new([0.0; 2], [1.0; 2]), Kind::Dynamic)?,
///            world.insert(Aabb2::new([0.0; 2], [1.0; 2]), Kind::Dynamic)?);
///
/// // Another dimension is refused.
/// assert!(serde_json::from_str::<broadphase::World3>(&json).is_err());
/// # Ok::<(), broadphase::Error>(())
/// ```
impl<'de, const D: usize> Deserialize<'de> for World<D> {
    fn deserialize<De: Deserializer<'de>>(deserializer: De) -> Result<Self, De::Error> {
        let image = Image::<'static, D>::deserialize(deserializer)?;
        World::restore(image).map_err(|e| De::Error::custom(format!("world snapshot: {e}")))
    }
}

/// `Err` with the formatted reason unless `cond` holds.
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

/// Whether `v` is strictly ascending.
fn ascending<T: Ord>(v: &[T]) -> bool {
    v.windows(2).all(|w| w[0] < w[1])
}

impl<const D: usize> World<D> {
    /// The world an image describes, checked (module docs).
    fn restore(im: Image<'_, D>) -> Result<Self, String> {
        let config = im.config;
        let finder = Broadphase::new(config).map_err(|e| e.to_string())?;
        let n = im.generations.len();
        ensure!(n <= MAX_SLOTS as usize, "{n} slots, more than a world holds");
        ensure!(
            im.alive.len() == n && im.boxes.len() == n && im.kinds.len() == n,
            "{n} generations, {} live flags, {} boxes, {} kinds",
            im.alive.len(),
            im.boxes.len(),
            im.kinds.len()
        );
        ensure!(
            im.filters.len() <= n && im.user_data.len() <= n,
            "filters for {} and user data for {} of {n} slots",
            im.filters.len(),
            im.user_data.len()
        );
        for (s, b) in im.boxes.iter().enumerate() {
            ensure!(b.is_valid(), "slot {s} has an invalid box {b:?}");
        }
        let alive = im.alive.into_owned();
        let live = alive.iter().filter(|&&a| a).count();
        let slots = Slots {
            generations: im.generations.into_owned(),
            alive,
            free: im.free.into_owned(),
            live,
            limit: MAX_SLOTS,
        };
        let filters = im.filters.into_owned();
        let plain = Filter::default();
        let mut store = Store {
            boxes: im.boxes.into_owned(),
            kinds: im.kinds.into_owned(),
            filtered: filters.iter().filter(|&&f| f != plain).count(),
            filters,
            filter_changes: usize::try_from(im.filter_changes).unwrap_or(usize::MAX),
            data: im.user_data.into_owned(),
            ..Store::default()
        };
        for s in (0..n).filter(|&s| slots.alive[s]) {
            store.count(store.kinds[s], 1, true);
        }
        let mut dirty = Dirty::default();
        dirty.grow(n);
        for (i, c) in im.changed.iter().enumerate() {
            ensure!((c.slot as usize) < n, "change {i} names slot {}, past the {n} slots", c.slot);
            ensure!(dirty.mark(c.slot), "change {i}: slot {} changed twice", c.slot);
            ensure!(c.aabb.is_valid(), "change {i}: slot {} was an invalid box {:?}", c.slot, c.aabb);
            let (alive, generation, aabb, kind, filter) = (c.alive, c.generation, c.aabb, c.kind, c.filter);
            store.before.push(Snapshot { alive, generation, aabb, kind, filter });
        }
        let mut world = World {
            config,
            slots,
            store,
            dirty,
            pairs: PairStore::default(),
            apart: hysteresis::Apart::default(),
            scratch: Scratch::new(finder),
            stats: WorldStats::default(),
            departing: im.departing.into_owned(),
        };
        ensure!(ascending(&im.pairs), "pairs not in ascending order");
        for &[lo, hi] in &im.pairs {
            ensure!(lo < hi && (hi as usize) < n, "pair ({lo}, {hi}) is not lo < hi < {n}");
        }
        // The pair store takes keys only: the generations are the slots' own.
        let named: Vec<[Handle; 2]> =
            im.pairs.iter().map(|&[lo, hi]| [Handle::new(lo, 0), Handle::new(hi, 0)]).collect();
        world.pairs.apply(&[], &named).map_err(|e| e.to_string())?;
        world.apart.kept = im.kept.into_owned();
        world.validate().map_err(|e| e.to_string())?;
        world.rebuild_search()?;
        world.validate().map_err(|e| e.to_string())?;
        let (added, removed, departed) =
            (im.added.into_owned(), im.removed.into_owned(), im.departed.into_owned());
        world.check_events(&added, &removed, &departed)?;
        let s = &mut world.scratch;
        (s.added, s.removed, s.departed) = (added, removed, departed);
        world.check_departing()?;
        world.stats = world.restored_stats();
        Ok(world)
    }

    /// The slot table and store as of the last update, where changes are pending: the
    /// current ones with each changed slot put back as its snapshot says.
    fn as_of_last_update(&self) -> (Slots, Store<D>) {
        let mut slots = Slots::new();
        slots.generations.clone_from(&self.slots.generations);
        slots.alive.clone_from(&self.slots.alive);
        let mut store = Store::<D> {
            boxes: self.store.boxes.clone(),
            kinds: self.store.kinds.clone(),
            filters: self.store.filters.clone(),
            filtered: self.store.filtered,
            ..Store::default()
        };
        for (&s, b) in self.dirty.list().iter().zip(&self.store.before) {
            let s = s as usize;
            slots.alive[s] = b.alive;
            slots.generations[s] = b.generation;
            store.boxes[s] = b.aabb;
            store.kinds[s] = b.kind;
            store.set_filter(s, if b.alive { b.filter } else { Filter::default() });
        }
        for s in 0..slots.len() {
            if slots.alive[s] {
                slots.live += 1;
                store.count(store.kinds[s], 1, true);
            }
        }
        (slots, store)
    }

    /// Builds the search over the world as of the last update, and checks the pairs
    /// against those its boxes make (the stored pairs are those and the kept ones).
    fn rebuild_search(&mut self) -> Result<(), String> {
        let then = (!self.dirty.is_empty()).then(|| self.as_of_last_update());
        let (slots, store) = match &then {
            Some((slots, store)) => (slots, store),
            None => (&self.slots, &self.store),
        };
        let kept = &self.apart.kept;
        let mut stored: Vec<[Handle; 2]> = self
            .pairs
            .keys()
            .map(|k| {
                let (lo, hi) = slots_of(k);
                [
                    Handle::new(lo, slots.generations[lo as usize]),
                    Handle::new(hi, slots.generations[hi as usize]),
                ]
            })
            .filter(|p| kept.binary_search(p).is_err())
            .collect();
        stored.sort_unstable();
        // No bound: the search counts pairs the kinds or filters then refuse, and a bound
        // set since the last update may be below the pairs it left.
        let mut finder = Broadphase::new(self.config.with_max_pairs(None)).map_err(|e| e.to_string())?;
        let mut found = Vec::new();
        let search = Search::restored(slots, store, &mut finder, &mut found)
            .map_err(|e| format!("the boxes make other pairs than those stored ({e})"))?;
        found.sort_unstable();
        ensure!(
            found == stored,
            "{} pairs stored (kept ones aside), the boxes make {}",
            stored.len(),
            found.len()
        );
        self.scratch.search = search;
        Ok(())
    }

    /// The last update's events against the pairs as of it: each list ascending with
    /// `a.index() < b.index()`; every pair added stored, named as its slots were; no pair
    /// removed stored under the same names; every handle in them and every object
    /// departed of an earlier generation than its slot's at the update, or its own.
    fn check_events(
        &self,
        added: &[[Handle; 2]],
        removed: &[[Handle; 2]],
        departed: &[Departed],
    ) -> Result<(), String> {
        let n = self.slots.len();
        let mut index = Vec::new();
        super::store::index_dirty(self.dirty.list(), &mut index);
        let view = super::store::PreFrame {
            slots: &self.slots,
            store: &self.store,
            dirty: &self.dirty,
            index: &index,
        };
        let then = |h: Handle| view.generation(h.index());
        for (name, list) in [("added", added), ("removed", removed)] {
            ensure!(ascending(list), "{name} pairs not in ascending order");
            for p in list {
                ensure!(
                    p[0].index() < p[1].index() && (p[1].index() as usize) < n,
                    "{name} pair {p:?} does not name two slots in order"
                );
                ensure!(
                    p.iter().all(|&h| h.generation() <= then(h)),
                    "{name} pair {p:?} names a later object"
                );
                let stored = self.pairs.contains(key(p[0].index(), p[1].index()))
                    && p.iter().all(|&h| h.generation() == then(h));
                ensure!(stored == (name == "added"), "{name} pair {p:?} does not fit the pairs");
            }
        }
        ensure!(
            departed.windows(2).all(|w| w[0].handle < w[1].handle),
            "departed objects not in ascending order"
        );
        for d in departed {
            let h = d.handle;
            ensure!(
                (h.index() as usize) < n && h.generation() < then(h),
                "departed object {h:?} was not removed"
            );
        }
        Ok(())
    }

    /// The objects removed since the last update: each named once, its slot changed since
    /// and now at a later generation.
    fn check_departing(&self) -> Result<(), String> {
        let n = self.slots.len();
        let mut handles: Vec<Handle> = self.departing.iter().map(|d| d.handle).collect();
        handles.sort_unstable();
        ensure!(ascending(&handles), "an object departs twice");
        for h in handles {
            let s = h.index();
            ensure!(
                (s as usize) < n
                    && self.dirty.contains(s)
                    && h.generation() < self.slots.generations[s as usize],
                "departing object {h:?} was not removed since the last update"
            );
        }
        Ok(())
    }

    /// The statistics of a restored world: the counts of its events and of what it held
    /// at the last update, no time and no bytes.
    fn restored_stats(&self) -> WorldStats {
        let mut then = Store::<D>::default();
        (then.statics, then.moving, then.kinematics) =
            (self.store.statics, self.store.moving, self.store.kinematics);
        for (&s, b) in self.dirty.list().iter().zip(&self.store.before) {
            if self.slots.alive[s as usize] {
                then.count(self.store.kinds[s as usize], 1, false);
            }
            if b.alive {
                then.count(b.kind, 1, true);
            }
        }
        WorldStats {
            added: self.scratch.added.len(),
            removed: self.scratch.removed.len(),
            pairs: self.pairs.len(),
            statics: then.statics,
            kinematics: then.kinematics,
            dynamics: then.moving - then.kinematics,
            ..WorldStats::default()
        }
    }
}
