//! A persistent world of boxes: objects are inserted, moved and removed between frames,
//! and each [`World::update`] reports the pairs that began and ended since the last one.
//!
//! The pair rule: two live objects pair when their boxes, each grown by
//! [`Config::margin`], overlap as closed boxes (a box the margin turns inside out overlaps
//! nothing), at least one of them is [`Kind::Dynamic`], and their [`Filter`]s accept each
//! other. Under [`Config::hysteresis`] `h`, a pair once begun also stays while its
//! grown boxes lie within `h` of each other on every axis. A pair `[a, b]` has
//! `a.index() < b.index()`; lists of pairs are sorted.
//!
//! The parts, one a file: `handle` (handles, generations, the LIFO free list), `store`
//! (boxes, kinds and filters by slot; the snapshot of each changed slot as of the last
//! update), `dirty` (the changed slots: a bit vector and a list, after Box2D v3's broad
//! phase move buffer), `pairs` (the pair keys in a hash set; the sorted list built on
//! demand), `hysteresis` (the pairs kept apart but near), `search` (the candidate search: a static and a dynamic tree, each changed
//! object's walk), `frame` (the update, stage by stage), `validate` (every invariant,
//! checked), `snapshot` (feature `serde`: the world written and read back).
//!
//! - Input: the calls. Output: the events of each update, and [`World::pairs`].
//! - Cost: a change is O(1); an update with no change is O(1). An update with changes
//!   costs the candidate search, a walk a changed object through its neighbourhood (O(log
//!   n + candidates), or a read of its kept list of static neighbours), plus the trees'
//!   upkeep and O(k log k) for the k pairs that may have changed.
//! - Threads: the search runs on the caller's rayon pool (`pool.install(|| world.update())`);
//!   the pairs and events are the same bytes for any thread count, and depend only on the
//!   sequence of calls.
//! - Allocation: per-slot arrays grow with the slots, but for the filters, stored only up
//!   to the last slot with a filter other than the default (none where every object has
//!   the default) and given back once no object has another; the pair set grows with the
//!   pairs; frame buffers are reused.
//! - Errors: every call checks its input first and changes nothing when it fails, batches
//!   included (all or nothing). No call panics.
//! - Source: Box2D v3's broad phase (the move buffer, the pair set, generational ids).

mod batch;
mod dirty;
mod frame;
mod handle;
mod hysteresis;
mod origin;
mod pairs;
mod query;
mod search;
#[cfg(feature = "serde")]
mod snapshot;
mod store;
mod validate;

#[cfg(test)]
mod tests;

pub use batch::Batch;
pub use frame::{Departed, Events, FrameSummary, WorldStats};
pub use handle::Handle;
pub use query::{CastAction, CastHit, QueryFilter, Ray, Sphere, Sweep};
pub use store::{Filter, Kind};

use crate::{Aabb, Broadphase, Config, Error};
use dirty::Dirty;
use frame::Scratch;
use handle::Slots;
use pairs::PairStore;
use store::{index_dirty, PreFrame, Snapshot, Store};

/// A persistent set of boxes whose overlapping pairs are kept up to date frame by frame.
///
/// ```
/// use broadphase::{Aabb2, Config, Kind, World2};
/// let mut world = World2::new(Config::default())?;
/// let ground = world.insert(Aabb2::new([0.0, 0.0], [10.0, 1.0]), Kind::Static)?;
/// let ball = world.insert(Aabb2::new([4.0, 5.0], [5.0, 6.0]), Kind::Dynamic)?;
/// assert!(world.update()?.is_empty());
/// world.set_aabb(ball, Aabb2::new([4.0, 0.5], [5.0, 1.5]))?;
/// world.update()?;
/// assert_eq!(world.events().added, &[[ground, ball]]);
/// world.remove(ball)?;
/// world.update()?;
/// assert_eq!(world.events().removed, &[[ground, ball]]);
/// # Ok::<(), broadphase::Error>(())
/// ```
///
/// Each object is named by a [`Handle`]. In a new world inserts take slots 0, 1, 2, ... in
/// order; a removed object's slot is reused last in, first out (the most recently freed
/// first), with a higher generation, so the old handle stays stale. Changes (insert,
/// `set_*`, remove) are recorded and take effect on the pairs at the next
/// [`World::update`].
///
/// Two live objects pair when their boxes, each grown by [`Config::margin`], overlap as
/// closed boxes (touching boxes overlap; a box a negative margin turns inside out overlaps
/// nothing), at least one of them is [`Kind::Dynamic`], and their [`Filter`]s accept each
/// other. Under [`Config::hysteresis`] `h`, a pair once begun also stays until its grown
/// boxes lie more than `h` apart on some axis (a contact resting at the margin does not
/// chatter). [`World::pairs`] is every such pair as of the last update, and each update's
/// [`Events`] are the difference from the update before.
///
/// Cost: a change is O(1), an update with no change O(1). An update with changes walks
/// each changed object through a tree of the static and a tree of the dynamic objects
/// (or reads its kept list of static neighbours), O(log n + candidates) each, and finds
/// the pairs among changed objects with a sweep (or a [`Broadphase`] run) over their old
/// and one over their new boxes. Where over half the live objects changed (a first
/// update), or where the frames before show the walks costing more, the frame is found
/// whole instead: one [`Broadphase`] run over the dynamic boxes and a join of the static
/// boxes against them (static pairs are never searched), so a frame costs about what
/// the one-shot finder over every live box costs, whatever moves how far. An object
/// moved far (a teleport, a parking spot) walks around where it was and where it is,
/// not the space between. [`Config::max_pairs`] bounds the pairs the world holds after
/// an update: the search stops soon after the bound is passed and the update fails.
///
/// Threads: the search runs on the caller's rayon pool (`pool.install(|| world.update())`);
/// the pairs and events are the same bytes for any thread count.
///
/// Errors: every call checks its input before changing anything, batches included (all
/// or nothing); after a failed call the world is exactly as before. No call panics.
///
/// Snapshots: with the `serde` feature, a world serializes to a versioned snapshot and
/// reads back as the same world, every later call answering alike (see its
/// `Deserialize` impl).
#[derive(Clone)]
pub struct World<const D: usize> {
    /// The configuration (checked in `new`).
    config: Config<D>,
    /// Generations, live flags and the free list.
    slots: Slots,
    /// Boxes, kinds and filters by slot, the kind counts, the snapshots of changed slots.
    /// INVARIANT: as many slots as `slots`.
    store: Store<D>,
    /// The slots changed since the last update. INVARIANT: a slot has a snapshot in
    /// `store.before` iff it is here.
    dirty: Dirty,
    /// The pairs as of the last update.
    pairs: PairStore,
    /// The stored pairs kept by the hysteresis, apart but near, as of the last update.
    apart: hysteresis::Apart,
    /// The frame's buffers and the events of the last update.
    scratch: Scratch<D>,
    /// The last update's statistics.
    stats: WorldStats,
    /// The objects removed since the last update, in call order (the next update's
    /// [`Events::departed`]).
    departing: Vec<Departed>,
}

/// A summary, not the arrays: a world of a million objects prints a few lines.
impl<const D: usize> std::fmt::Debug for World<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("dimensions", &D)
            .field("objects", &self.slots.live)
            .field("statics", &self.store.statics)
            .field("kinematics", &self.store.kinematics)
            .field("dynamics", &(self.store.moving - self.store.kinematics))
            .field("pairs", &self.pairs.len())
            .field("changed", &self.dirty.list().len())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// One live object as [`World::iter`] lists it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Object<const D: usize> {
    /// Its handle.
    pub handle: Handle,
    /// Its box, as last set.
    pub aabb: Aabb<D>,
    /// Its kind.
    pub kind: Kind,
    /// Its filter.
    pub filter: Filter,
    /// Its user data.
    pub user_data: u64,
}

/// A world in the plane.
pub type World2 = World<2>;
/// A world in space.
pub type World3 = World<3>;

/// Checks one box of a call; `index` is its position in the batch (0 for single calls).
fn check<const D: usize>(aabb: &Aabb<D>, index: usize) -> Result<(), Error> {
    crate::validate::check_box(aabb).map_err(|problem| Error::InvalidBox { index, problem })
}

/// Whether two boxes are the same bits (so that `-0.0` set over `0.0` is kept as set).
fn same_bits<const D: usize>(a: &Aabb<D>, b: &Aabb<D>) -> bool {
    bytemuck::bytes_of(a) == bytemuck::bytes_of(b)
}

impl<const D: usize> World<D> {
    /// An empty world with this configuration (checked here, as by [`Broadphase::new`]).
    pub fn new(config: Config<D>) -> Result<Self, Error> {
        let finder = Broadphase::new(config)?;
        Ok(Self {
            config,
            slots: Slots::new(),
            store: Store::default(),
            dirty: Dirty::default(),
            pairs: PairStore::default(),
            apart: hysteresis::Apart::default(),
            scratch: Scratch::new(finder),
            stats: WorldStats::default(),
            departing: Vec::new(),
        })
    }

    /// Adds an object with the default [`Filter`] (pairs with everything) and user data 0;
    /// see [`World::insert_with`].
    pub fn insert(&mut self, aabb: Aabb<D>, kind: Kind) -> Result<Handle, Error> {
        self.insert_with(aabb, kind, Filter::default(), 0)
    }

    /// Adds an object and returns its handle. Its pairs appear at the next update.
    /// `user_data` is the caller's own (an entity id, an index), returned by
    /// [`World::user_data`], [`World::iter`], query filters' predicates and, once the
    /// object is removed, its update's [`Events`].
    ///
    /// Errors: [`Error::InvalidBox`] (index 0) for a NaN or infinite coordinate or
    /// `min > max`; [`Error::TooManyBoxes`] (with the number of objects the world would
    /// hold) when every one of the `u32::MAX - 1` slots is taken.
    pub fn insert_with(
        &mut self,
        aabb: Aabb<D>,
        kind: Kind,
        filter: Filter,
        user_data: u64,
    ) -> Result<Handle, Error> {
        check(&aabb, 0)?;
        self.slots.room(1)?;
        self.reserve_slots(1);
        Ok(self.put(aabb, kind, filter, user_data))
    }

    /// Adds one object of `kind` a box, with the default filter and user data 0, in order;
    /// their handles, in the same order. All or nothing: the first invalid box is
    /// [`Error::InvalidBox`] with its position in `aabbs`, and then nothing is added.
    pub fn extend(&mut self, aabbs: &[Aabb<D>], kind: Kind) -> Result<Vec<Handle>, Error> {
        self.extend_with(aabbs, kind, Filter::default(), &[])
    }

    /// Adds one object of `kind` and `filter` a box, in order, object `i` with user data
    /// `user_data[i]` (all 0 where `user_data` is empty); their handles, in the same
    /// order. All or nothing: [`Error::InvalidQuery`] where `user_data` is neither empty
    /// nor as long as `aabbs`, else the first invalid box is [`Error::InvalidBox`] with
    /// its position in `aabbs`; then nothing is added.
    pub fn extend_with(
        &mut self,
        aabbs: &[Aabb<D>],
        kind: Kind,
        filter: Filter,
        user_data: &[u64],
    ) -> Result<Vec<Handle>, Error> {
        if !user_data.is_empty() && user_data.len() != aabbs.len() {
            let reason = "user data neither empty nor one a box";
            return Err(Error::InvalidQuery { index: user_data.len().min(aabbs.len()), reason });
        }
        crate::validate::check_boxes(aabbs)?;
        self.slots.room(aabbs.len())?;
        self.reserve_slots(aabbs.len());
        let data = |i: usize| user_data.get(i).copied().unwrap_or(0);
        // The freed slots first, one by one (as `insert` takes them); the rest are new
        // slots at the end, appended array by array.
        let (reused, fresh) = aabbs.split_at(self.slots.free.len().min(aabbs.len()));
        let mut handles = Vec::with_capacity(aabbs.len());
        for (i, &b) in reused.iter().enumerate() {
            handles.push(self.put(b, kind, filter, data(i)));
        }
        let s0 = self.slots.len();
        self.append(fresh, kind);
        for (i, s) in (s0..s0 + fresh.len()).enumerate() {
            self.store.set_filter(s, filter);
            self.store.set_user_data(s, data(reused.len() + i));
        }
        handles.extend((s0..s0 + fresh.len()).map(|s| Handle::new(s as u32, 0)));
        Ok(handles)
    }

    /// Sets the box of the object `h` names. Setting the box it has (the same bits)
    /// changes nothing.
    ///
    /// Errors: [`Error::StaleHandle`] (checked first), then [`Error::InvalidBox`] (index 0).
    pub fn set_aabb(&mut self, h: Handle, aabb: Aabb<D>) -> Result<(), Error> {
        let s = self.slots.slot(h)?;
        check(&aabb, 0)?;
        self.move_to(s, aabb);
        Ok(())
    }

    /// Sets many boxes, in order (where a handle comes twice, its last box stays). All or
    /// nothing: every handle and box is checked first, and the first bad move, in batch
    /// order, is the error ([`Error::StaleHandle`], or [`Error::InvalidBox`] with its
    /// position in `moves`), and then nothing is set.
    pub fn set_aabbs(&mut self, moves: &[(Handle, Aabb<D>)]) -> Result<(), Error> {
        for (i, (h, aabb)) in moves.iter().enumerate() {
            self.slots.slot(*h)?;
            check(aabb, i)?;
        }
        for &(h, aabb) in moves {
            // Checked above, and no move kills an object.
            if let Ok(s) = self.slots.slot(h) {
                self.move_to(s, aabb);
            }
        }
        Ok(())
    }

    /// Sets the kind of the object `h` names (the same kind changes nothing). Its pairs
    /// follow at the next update: a pair its new kind does not allow ends. A body at
    /// rest needs no change of kind: an object not moved costs nothing (see [`Kind`]).
    pub fn set_kind(&mut self, h: Handle, kind: Kind) -> Result<(), Error> {
        let s = self.slots.slot(h)?;
        let old = self.store.kinds[s];
        if old != kind {
            self.touch(s);
            self.store.count(old, 1, false);
            self.store.count(kind, 1, true);
            self.store.kinds[s] = kind;
        }
        Ok(())
    }

    /// Sets the user data of the object `h` names: no change to its pairs, and seen at
    /// once by [`World::user_data`], [`World::iter`] and queries.
    pub fn set_user_data(&mut self, h: Handle, user_data: u64) -> Result<(), Error> {
        let s = self.slots.slot(h)?;
        self.store.set_user_data(s, user_data);
        Ok(())
    }

    /// Sets the filter of the object `h` names (the same filter changes nothing).
    pub fn set_filter(&mut self, h: Handle, filter: Filter) -> Result<(), Error> {
        let s = self.slots.slot(h)?;
        if self.store.filter(s) != filter {
            self.touch(s);
            self.store.set_filter(s, filter);
        }
        Ok(())
    }

    /// Removes the object `h` names: `h` is stale from now on, and the next update reports
    /// the object's pairs as removed, named with `h`. Its slot is the next one reused.
    pub fn remove(&mut self, h: Handle) -> Result<(), Error> {
        let s = self.slots.slot(h)?;
        // The next update's events name it with its data: room for the record is taken
        // before anything changes.
        self.departing.try_reserve(1).map_err(|_| Error::OutOfMemory { pairs: 0 })?;
        self.touch(s);
        let kind = self.store.kinds[s];
        self.store.count(kind, 1, false);
        self.departing.push(Departed { handle: h, kind, user_data: self.store.user_data(s) });
        // The snapshot keeps the filter for the pairs of the last update; a dead slot has
        // the default, so that the filters are given back once no live object has another.
        self.store.set_filter(s, Filter::default());
        self.store.set_user_data(s, 0);
        self.slots.kill(s);
        Ok(())
    }

    /// Removes every object, as [`World::remove`] would one by one in slot order (the
    /// next update ends every pair and names every object in its [`Events::departed`]),
    /// keeping every buffer's capacity.
    pub fn clear(&mut self) {
        let live: Vec<Handle> = self.iter().map(|o| o.handle).collect();
        self.departing.reserve(live.len());
        for h in live {
            // Every handle is live, and the room is reserved.
            let _ = self.remove(h);
        }
    }

    /// The box of the object `h` names, as last set (not grown by the margin).
    pub fn aabb(&self, h: Handle) -> Result<Aabb<D>, Error> {
        Ok(self.store.boxes[self.slots.slot(h)?])
    }

    /// The kind of the object `h` names.
    pub fn kind(&self, h: Handle) -> Result<Kind, Error> {
        Ok(self.store.kinds[self.slots.slot(h)?])
    }

    /// The filter of the object `h` names.
    pub fn filter(&self, h: Handle) -> Result<Filter, Error> {
        Ok(self.store.filter(self.slots.slot(h)?))
    }

    /// The user data of the object `h` names (see [`World::insert_with`]).
    pub fn user_data(&self, h: Handle) -> Result<u64, Error> {
        Ok(self.store.user_data(self.slots.slot(h)?))
    }

    /// Every live object, in slot order (changes since the last update included).
    pub fn iter(&self) -> impl Iterator<Item = Object<D>> + '_ {
        (0..self.store.len()).filter(|&s| self.slots.alive[s]).map(|s| Object {
            handle: Handle::new(s as u32, self.slots.generations[s]),
            aabb: self.store.boxes[s],
            kind: self.store.kinds[s],
            filter: self.store.filter(s),
            user_data: self.store.user_data(s),
        })
    }

    /// Room for `additional` more objects in every per-object array, so that inserting
    /// them allocates nothing there (the pair store and the trees grow at the update).
    pub fn reserve(&mut self, additional: usize) {
        self.reserve_slots(additional);
    }

    /// Whether `h` names a live object.
    pub fn contains(&self, h: Handle) -> bool {
        self.slots.slot(h).is_ok()
    }

    /// Live objects.
    pub fn len(&self) -> usize {
        self.slots.live
    }

    /// True when no object is live.
    pub fn is_empty(&self) -> bool {
        self.slots.live == 0
    }

    /// The pairs as of the last update (empty before the first), sorted, each `[a, b]`
    /// with `a.index() < b.index()`; changes made since are not in it yet, and a pair
    /// of an object removed since keeps its old handle.
    ///
    /// The first call after an update that changed the pairs sorts them, O(pairs log
    /// pairs), and keeps the list; later calls are free until the next such update.
    /// Engines are expected to follow [`World::update`]'s events instead.
    pub fn pairs(&self) -> &[[Handle; 2]] {
        if let Some(cached) = self.pairs.cache.get() {
            return cached;
        }
        if self.dirty.is_empty() {
            return self.pairs.sorted(|s| self.slots.generations[s as usize]);
        }
        // Changes are pending: a changed slot is named as its snapshot says.
        let mut index = Vec::new();
        index_dirty(self.dirty.list(), &mut index);
        let before = PreFrame { slots: &self.slots, store: &self.store, dirty: &self.dirty, index: &index };
        self.pairs.sorted(|s| before.generation(s))
    }

    /// The last update's statistics.
    pub fn stats(&self) -> &WorldStats {
        &self.stats
    }

    /// The configuration.
    pub fn config(&self) -> &Config<D> {
        &self.config
    }

    /// Sets [`Config::max_pairs`], the bound on the pairs the world holds after an update
    /// (static pairs never count: they are never searched). An update that failed on the
    /// bound leaves its changes pending; raise the bound and update again. The other
    /// fields of the configuration shape the trees and stay as the world was made.
    pub fn set_max_pairs(&mut self, max_pairs: Option<usize>) {
        self.config.max_pairs = max_pairs;
        self.scratch.finder.config.max_pairs = max_pairs;
    }

    /// Puts a new object into a slot (room checked): the last freed slot, else a new one.
    fn put(&mut self, aabb: Aabb<D>, kind: Kind, filter: Filter, user_data: u64) -> Handle {
        let s = self.slots.claim();
        let si = s as usize;
        if si == self.store.len() {
            self.store.push_dead();
            self.dirty.grow(self.slots.len());
        }
        self.touch(si);
        let h = self.slots.revive(s);
        self.store.boxes[si] = aabb;
        self.store.kinds[si] = kind;
        self.store.set_filter(si, filter);
        self.store.set_user_data(si, user_data);
        self.store.count(kind, 1, true);
        h
    }

    /// New slots at the end for `aabbs`, of `kind` and the default filter: what `put` does
    /// for each when no slot is free (a dead slot of generation 0 claimed, its snapshot
    /// taken as it changes, then filled and revived), one array at a time. O(n), without
    /// the per-object branches: a level's `extend` costs a fraction of its first update.
    /// PERF: benches/regimes.rs (`build`).
    fn append(&mut self, aabbs: &[Aabb<D>], kind: Kind) {
        let (s0, n) = (self.slots.len(), aabbs.len());
        let end = s0 + n;
        let dead = Snapshot {
            alive: false,
            generation: 0,
            aabb: Aabb { min: [0.0; D], max: [0.0; D] },
            kind: Kind::Static,
            filter: Filter::default(),
        };
        self.slots.generations.resize(end, 0);
        self.slots.alive.resize(end, true);
        self.slots.live += n;
        self.store.boxes.extend_from_slice(aabbs);
        self.store.kinds.resize(end, kind);
        self.store.count(kind, n, true);
        self.store.before.extend(std::iter::repeat_n(dead, n));
        self.dirty.grow(end);
        for s in s0..end {
            self.dirty.bits[s / 64] |= 1 << (s % 64);
        }
        self.dirty.list.extend(s0 as u32..end as u32);
    }

    /// Room for `n` more objects in every per-slot array and in the change list, at once:
    /// grown one push at a time, a million-object `extend` copies each array some twenty
    /// times. A refused reservation is let go: the pushes then grow the arrays as before.
    /// PERF: benches/world.rs (`build`).
    fn reserve_slots(&mut self, n: usize) {
        let fresh = n.saturating_sub(self.slots.free.len());
        reserve_slack(&mut self.slots.generations, fresh);
        reserve_slack(&mut self.slots.alive, fresh);
        reserve_slack(&mut self.store.boxes, fresh);
        reserve_slack(&mut self.store.kinds, fresh);
        let _ = self.store.before.try_reserve(n);
        let _ = self.dirty.list.try_reserve(n);
        let words = (self.slots.len() + fresh).div_ceil(64);
        let _ = self.dirty.bits.try_reserve(words.saturating_sub(self.dirty.bits.len()));
    }

    /// Sets live slot `s`'s box (checked), unless it has those bits already.
    fn move_to(&mut self, s: usize, aabb: Aabb<D>) {
        if !same_bits(&self.store.boxes[s], &aabb) {
            self.touch(s);
            self.store.boxes[s] = aabb;
        }
    }

    /// Marks slot `s` changed; at its first change this frame, snapshots its state first.
    fn touch(&mut self, s: usize) {
        if !self.dirty.contains(s as u32) {
            let snap = self.store.snapshot(&self.slots, s);
            self.store.before.push(snap);
            self.dirty.mark(s as u32);
        }
    }
}

/// Room for `n` more items in a per-slot array (or the search's list arena), with an
/// eighth of slack rather than `Vec`'s doubling: a level of a million statics followed
/// by a hundred thousand dynamics would otherwise hold room for two million objects for
/// good. Repeated small batches still grow geometrically (by at least an eighth), so an
/// item is copied a bounded number of times. A refused reservation is let go (the
/// pushes then grow it).
pub(crate) fn reserve_slack<T>(v: &mut Vec<T>, n: usize) {
    if v.capacity() - v.len() < n {
        let _ = v.try_reserve_exact(n.max(v.len() / 8));
    }
}
