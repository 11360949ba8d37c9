//! What [`World::update`] does: turn the changes since the last update into the pairs
//! that ended and began, and apply them to the pair store.
//!
//! 1. **take** the dirty slots, with each one's snapshot of the last update;
//! 2. **old**: the pairs with a changed member that may have ended, named with the
//!    generations of the last update (a removed object's pairs carry its old handle);
//! 3. **new**: those that may have begun, named with the current generations;
//! 4. **diff**: both sorted; removed = old \ new, added = new \ old (handles compared whole,
//!    so a slot emptied and refilled in one frame gives distinct old and new pairs);
//!    under [`Config::hysteresis`](crate::Config::hysteresis), the removed pairs still
//!    near are kept and not reported (`world::hysteresis`);
//! 5. **apply** removed, then added, to the pair store;
//! 6. **clear** the dirty set and the snapshots.
//!
//! Steps 2 and 3 are [`changed_pairs`], the candidate search (`world::search`: the trees
//! and the walks), which is all that depends on how pairs are found; the rest is
//! O(changed pairs).
//!
//! - Input: the dirty set, the snapshots, the store, the pair store. Output: the events
//!   (sorted) and the updated pair store.
//! - Cost: a frame with no change returns at once, O(1). Otherwise the search's, O(c log
//!   n + candidates) for c changed objects plus the trees' upkeep, then O(k log k) for
//!   the k pairs it hands over.
//! - Threads: the search on the caller's rayon pool; the two sorts side by side, each in
//!   parallel; the difference in pieces cut where the merge path crosses fixed counts;
//!   the pair store shard by shard. The events are the same bytes for any thread count.
//! - Allocation: every buffer is the world's, reused from frame to frame (the finder's
//!   own included).
//! - Source: the update step of Box2D v3's broad phase (`b2UpdateBroadPhasePairs`: query
//!   the moved proxies, then add the new pairs), with removals found by difference rather
//!   than by the narrow phase.

use super::handle::Slots;
use super::pairs::PairStore;
use super::search::{Search, Times};
use super::store::Store;
use super::{dirty::Dirty, Handle, Kind, World};
use crate::par::prelude::*;
use crate::time::{Duration, Instant};
use crate::{Broadphase, Error};

/// What the last successful [`World::update`] changed ([`World::events`]): the pairs that
/// began and the pairs that ended, each list sorted, each pair `[a, b]` with
/// `a.index() < b.index()`, and the objects removed before it. It borrows the world
/// immutably, so a loop over the events may query and read the world.
///
/// ```
/// use broadphase::{Aabb2, Config, Kind, World2};
/// let mut world = World2::new(Config::default())?;
/// let ground = world.insert(Aabb2::new([0.0, 0.0], [10.0, 1.0]), Kind::Static)?;
/// let coin = world.insert_with(Aabb2::new([4.0, 0.5], [5.0, 1.5]), Kind::Dynamic, Default::default(), 42)?;
/// world.update()?;
/// world.remove(coin)?;
/// world.update()?;
/// let events = world.events();
/// assert_eq!(events.removed, &[[ground, coin]]);
/// // The removed coin's data, though its handle is stale now:
/// assert_eq!(events.user_data(coin), Some(42));
/// assert_eq!(events.user_data(ground), Some(0));
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Events<'a, const D: usize> {
    /// Pairs in `pairs()` now that were not before the update.
    pub added: &'a [[Handle; 2]],
    /// Pairs in `pairs()` before the update that are not now, named as they were (a
    /// removed object by its old handle).
    pub removed: &'a [[Handle; 2]],
    /// The objects removed since the update before (inserted and removed between two
    /// updates included), sorted by handle, with their kind and user data.
    pub departed: &'a [Departed],
    world: &'a World<D>,
}

impl<const D: usize> Events<'_, D> {
    /// True when no pair began or ended and no object was removed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.departed.is_empty()
    }

    /// The user data of the object `h` names where it is live, or was removed before
    /// this update (every handle its pairs in `removed` carry): `None` for any other.
    /// O(log removed objects) for a removed one.
    pub fn user_data(&self, h: Handle) -> Option<u64> {
        match self.world.user_data(h) {
            Ok(d) => Some(d),
            Err(_) => {
                self.departed.binary_search_by_key(&h, |d| d.handle).ok().map(|i| self.departed[i].user_data)
            }
        }
    }
}

/// An object removed since the update before, as [`Events::departed`] lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Departed {
    /// Its handle (stale now).
    pub handle: Handle,
    /// Its kind when removed.
    pub kind: Kind,
    /// Its user data when removed.
    pub user_data: u64,
}

/// What a successful [`World::update`] did, in counts; the pairs themselves are in
/// [`World::events`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct FrameSummary {
    /// Pairs that began.
    pub added: usize,
    /// Pairs that ended.
    pub removed: usize,
    /// Objects changed since the update before (each counted once).
    pub changed: usize,
}

impl FrameSummary {
    /// True when no pair began or ended.
    pub fn is_empty(&self) -> bool {
        self.added == 0 && self.removed == 0
    }
}

/// What the last [`World::update`] did, and what the world holds.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct WorldStats {
    /// The whole update.
    pub t_update: Duration,
    /// The candidate search in it: the stored pairs and the new pairs of the changed
    /// objects (steps 2 and 3 of the frame), the trees' upkeep included.
    pub t_search: Duration,
    /// The trees' upkeep in the search: the static tree's changes, each changed dynamic
    /// object's leaf, the rebuilds.
    pub t_upkeep: Duration,
    /// The events: both pair lists sorted (in parallel) and their difference (step 4).
    pub t_events: Duration,
    /// The pair store brought up to date (step 5).
    pub t_apply: Duration,
    /// The part of the update spent in stages that run on one thread (or on two, side by
    /// side): the upkeep's passes over the changed objects (all of the upkeep but its
    /// tree builds), the changed objects' order, the merge of the walks' pairs and lists,
    /// the searches among the changed objects up to 16k of them, a whole frame's map of
    /// the changed slots and (where some object has a filter) the naming of its pairs.
    /// The rest (walks, tree builds, the one-shot searches, a whole frame's gather, the
    /// sorts, the difference, the pair store) runs on every thread of the pool. What
    /// this leaves of `t_update` bounds how far more threads speed a frame.
    pub t_serial: Duration,
    /// Objects changed since the update before (inserted, moved, re-kinded, re-filtered or
    /// removed; each counted once).
    pub moved: usize,
    /// Whether the update searched for pairs: not where nothing changed, nor where no
    /// object is dynamic or kinematic (a level or a map loaded for queries: its update
    /// builds the trees and finds no pair).
    pub pair_search: bool,
    /// Pairs that began.
    pub added: usize,
    /// Pairs that ended.
    pub removed: usize,
    /// Live pairs after the update.
    pub pairs: usize,
    /// Live static objects.
    pub statics: usize,
    /// Live kinematic objects.
    pub kinematics: usize,
    /// Live dynamic objects.
    pub dynamics: usize,
    /// Heap bytes held for objects: the slot table, the store, the dirty set, the
    /// snapshots and the search's per-object scratch, from capacities (the pair finder's
    /// own buffers are not counted).
    pub object_bytes: usize,
    /// Heap bytes held for pairs: the pair set (estimated from its capacity), the cached
    /// sorted list, the events and the search's pair scratch.
    pub pair_bytes: usize,
}

/// The frame's buffers, kept from frame to frame.
#[derive(Debug)]
pub(crate) struct Scratch<const D: usize> {
    /// The pair finder for the pairs among changed objects, with the world's configuration.
    pub(crate) finder: Broadphase<D>,
    /// The trees and maps of the candidate search.
    pub(crate) search: Search<D>,
    /// Steps 2 and 3's pairs.
    old: Vec<[Handle; 2]>,
    new: Vec<[Handle; 2]>,
    /// The events of the last successful update, and the buffers the next one's are
    /// found in (swapped on success, so a failed update leaves the events as they were).
    pub(crate) added: Vec<[Handle; 2]>,
    pub(crate) removed: Vec<[Handle; 2]>,
    pub(crate) departed: Vec<Departed>,
    added_next: Vec<[Handle; 2]>,
    removed_next: Vec<[Handle; 2]>,
    /// The difference's per-piece buffers.
    pieces: Pieces<[Handle; 2]>,
}

/// A clone keeps the search (its trees follow the world's objects) and the last events;
/// the finder and the working buffers start empty.
impl<const D: usize> Clone for Scratch<D> {
    fn clone(&self) -> Self {
        Self {
            search: self.search.clone(),
            added: self.added.clone(),
            removed: self.removed.clone(),
            departed: self.departed.clone(),
            ..Self::new(Broadphase::checked(self.finder.config, false))
        }
    }
}

impl<const D: usize> Scratch<D> {
    /// Empty buffers around `finder`.
    pub(crate) fn new(finder: Broadphase<D>) -> Self {
        Self {
            finder,
            search: Search::default(),
            old: Vec::new(),
            new: Vec::new(),
            added: Vec::new(),
            removed: Vec::new(),
            departed: Vec::new(),
            added_next: Vec::new(),
            removed_next: Vec::new(),
            pieces: Vec::new(),
        }
    }

    /// Heap bytes held for objects and for pairs, from capacities.
    fn bytes(&self) -> (usize, usize) {
        use std::mem::size_of;
        let (search_objects, search_pairs) = self.search.bytes();
        let objects = search_objects;
        let pair = size_of::<[Handle; 2]>();
        let pairs = search_pairs
            + (self.old.capacity()
                + self.new.capacity()
                + self.added.capacity()
                + self.removed.capacity()
                + self.added_next.capacity()
                + self.removed_next.capacity())
                * pair
            + self.departed.capacity() * size_of::<Departed>()
            + self.pieces.iter().map(|(r, a)| (r.capacity() + a.capacity()) * pair).sum::<usize>();
        (objects, pairs)
    }
}

impl<const D: usize> World<D> {
    /// Brings the pairs up to date with every change since the last update, and counts
    /// the pairs that began and ended; the pairs themselves, and the objects removed
    /// before the update, are [`World::events`] until the next successful update. The
    /// first update reports every pair as added.
    ///
    /// A frame with no change returns empty events at once, doing no work proportional to
    /// the number of objects. Otherwise the cost is that of the candidate search (see the
    /// [`World`] docs) plus O(c log c) for the c changed pairs.
    ///
    /// Errors: [`Error::TooManyPairs`] where the pairs the world would hold after the
    /// update pass [`Config::max_pairs`](crate::Config::max_pairs) (the search stops soon
    /// after the bound is passed, so a frame that would make millions of pairs fails
    /// without allocating for them), or [`Error::OutOfMemory`] where an allocation is
    /// refused; the world is then as before the call (its last events included), its
    /// changes still pending, and a later update retries them with whatever changed in
    /// between.
    pub fn update(&mut self) -> Result<FrameSummary, Error> {
        let t0 = Instant::now();
        let moved = self.dirty.list().len();
        let mut t_search = Duration::ZERO;
        let mut times = Times::default();
        if moved == 0 {
            self.scratch.added.clear();
            self.scratch.removed.clear();
            self.scratch.departed.clear();
        } else {
            // 1 to 5. A failed frame leaves the world as it was; the search is told, so
            // that the retry trusts nothing the failed frame left in its lists.
            t_search = match self.find_and_apply(&mut times) {
                Ok(t) => t,
                Err(e) => {
                    self.scratch.search.failed();
                    return Err(e);
                }
            };
            let s = &mut self.scratch;
            std::mem::swap(&mut s.added, &mut s.added_next);
            std::mem::swap(&mut s.removed, &mut s.removed_next);
            // Handles are unique: the same order from any sort.
            s.departed.clear();
            s.departed.extend_from_slice(&self.departing);
            s.departed.sort_unstable_by_key(|d| d.handle);
            self.departing.clear();
            self.scratch.search.count_frame(moved, self.slots.live);
            // 6. The frame is over: nothing is pending.
            self.dirty.clear();
            self.store.before.clear();
            // A frame found whole (a first update, a level loaded at once) sized the
            // change list and the snapshots by most objects: given back, as the frames
            // after change far fewer. (The search gives back its own such buffers.)
            if super::search::is_whole(moved, self.slots.live) {
                self.dirty.release_list();
                self.store.before = Vec::new();
            }
        }
        times.upkeep = self.scratch.search.times.upkeep;
        self.stats = self.frame_stats(moved, t_search, times, t0.elapsed());
        Ok(FrameSummary {
            added: self.scratch.added.len(),
            removed: self.scratch.removed.len(),
            changed: moved,
        })
    }

    /// Steps 1 to 5 of an update with changes: the search, the events' sort and
    /// difference, the bound, the pair store. Returns the search's time. On error nothing
    /// but the scratch and the trees' upkeep has changed.
    fn find_and_apply(&mut self, times: &mut Times) -> Result<Duration, Error> {
        // 1 to 3. Nothing is changed until the search has succeeded.
        let t = Instant::now();
        changed_pairs(&self.slots, &self.store, &self.dirty, &self.pairs, &mut self.scratch)?;
        let t_search = t.elapsed();
        // 4. Both sorted, then their differences. (Unique pairs: the same bytes from
        // any sort.)
        let t = Instant::now();
        let s = &mut self.scratch;
        crate::par::join(|| s.old.par_sort_unstable(), || s.new.par_sort_unstable());
        // The search names each pair once (the pair store's update relies on it).
        debug_assert!(s.old.windows(2).all(|w| w[0] != w[1]), "a pair named twice in old");
        debug_assert!(s.new.windows(2).all(|w| w[0] != w[1]), "a pair named twice in new");
        difference(&s.old, &s.new, &mut s.removed_next, &mut s.added_next, &mut s.pieces)?;
        // 4b. Under hysteresis, pairs that parted but stay near are kept (`hysteresis`).
        let h = self.config.hysteresis;
        let hold = h > 0.0 || !self.apart.kept.is_empty();
        if hold {
            let margin = self.config.margin;
            let (slots, store, dirty) = (&self.slots, &self.store, &self.dirty);
            self.apart.events(h, margin, slots, store, dirty, &mut s.removed_next, &mut s.added_next)?;
        }
        times.events = t.elapsed();
        times.serial = s.search.times.serial;
        times.searched = s.search.times.searched;
        // The bound is on the pairs the world holds: checked before anything changes.
        let live = self.pairs.len() - s.removed_next.len() + s.added_next.len();
        if let Some(limit) = self.config.max_pairs.filter(|&m| live > m) {
            return Err(Error::TooManyPairs { limit });
        }
        // The objects removed, for the events: room taken before anything changes.
        let departing = self.departing.len();
        s.departed.try_reserve(departing).map_err(|_| Error::OutOfMemory { pairs: live })?;
        // 5. Into the store.
        let t = Instant::now();
        self.pairs.apply(&s.removed_next, &s.added_next)?;
        if hold {
            self.apart.commit();
        }
        times.apply = t.elapsed();
        Ok(t_search)
    }

    /// The events of the last successful [`World::update`] (empty before the first): the
    /// pairs that began and ended, and the objects removed before it. Calls made since
    /// do not change them; a failed update leaves them as they were.
    pub fn events(&self) -> Events<'_, D> {
        let s = &self.scratch;
        Events { added: &s.added, removed: &s.removed, departed: &s.departed, world: self }
    }

    /// The statistics of a frame that just ended: O(1).
    fn frame_stats(&self, moved: usize, t_search: Duration, times: Times, t_update: Duration) -> WorldStats {
        // Nothing changed: nothing grew either, and the byte counts stand (counting them
        // walks the per-chunk buffers, which would make an idle frame cost O(n)).
        if moved == 0 {
            return WorldStats {
                t_update,
                added: 0,
                removed: 0,
                moved: 0,
                t_search,
                t_upkeep: Duration::ZERO,
                t_events: Duration::ZERO,
                t_apply: Duration::ZERO,
                t_serial: t_update,
                pair_search: false,
                ..self.stats.clone()
            };
        }
        let (scratch_objects, scratch_pairs) = self.scratch.bytes();
        WorldStats {
            t_update,
            t_search,
            t_upkeep: times.upkeep,
            t_events: times.events,
            t_apply: times.apply,
            t_serial: times.serial,
            pair_search: times.searched,
            moved,
            added: self.scratch.added.len(),
            removed: self.scratch.removed.len(),
            pairs: self.pairs.len(),
            statics: self.store.statics,
            kinematics: self.store.kinematics,
            dynamics: self.store.moving - self.store.kinematics,
            object_bytes: self.slots.bytes()
                + self.store.bytes()
                + self.dirty.bytes()
                + self.departing.capacity() * std::mem::size_of::<Departed>()
                + scratch_objects,
            pair_bytes: self.pairs.bytes() + self.apart.bytes() + scratch_pairs,
        }
    }
}

/// The candidate search (`world::search`): into `scratch.old`, the pairs with a changed
/// member that may have ended, named as of the last update; into `scratch.new`, those
/// that may have begun, named with the current generations. Neither is sorted; a pair in
/// both is unchanged (their difference is the events).
///
/// Reads the world only; on error nothing but the scratch has changed, and the trees'
/// upkeep, which the retry repeats.
pub(crate) fn changed_pairs<const D: usize>(
    slots: &Slots,
    store: &Store<D>,
    dirty: &Dirty,
    pairs: &PairStore,
    scratch: &mut Scratch<D>,
) -> Result<(), Error> {
    let s = scratch;
    s.search.changed_pairs(slots, store, dirty, pairs, &mut s.finder, &mut s.old, &mut s.new)
}

/// Per piece of the difference: what it removed and what it added.
type Pieces<T> = Vec<(Vec<T>, Vec<T>)>;

/// Events a piece of the difference merges: below twice this, one piece.
const PIECE: usize = 1 << 14;

/// `removed` = `old` \ `new`, `added` = `new` \ `old`, both sorted (from sorted, unique
/// inputs). The merge of both is cut into pieces of about [`PIECE`] elements (where the
/// merge path crosses each multiple, an element of `new` equal to the last of `old` taken
/// kept with it), each piece merged on its own in parallel into its buffers in `pieces`
/// (kept between frames), then the pieces put together in order: the same bytes for any
/// thread count. A refused allocation is [`Error::OutOfMemory`].
fn difference<T: Ord + Copy + Send + Sync>(
    old: &[T],
    new: &[T],
    removed: &mut Vec<T>,
    added: &mut Vec<T>,
    pieces: &mut Pieces<T>,
) -> Result<(), Error> {
    removed.clear();
    added.clear();
    let oom = |_| Error::OutOfMemory { pairs: old.len() + new.len() };
    removed.try_reserve(old.len()).map_err(oom)?;
    added.try_reserve(new.len()).map_err(oom)?;
    let n = old.len() + new.len();
    if n < 2 * PIECE {
        merge(old, new, removed, added);
        return Ok(());
    }
    let count = n / PIECE;
    if pieces.len() < count {
        pieces.resize_with(count, Default::default);
    }
    pieces[..count].par_iter_mut().enumerate().for_each(|(p, (r, a))| {
        let start = if p == 0 { (0, 0) } else { split(old, new, p * PIECE) };
        let end = if p + 1 == count { (old.len(), new.len()) } else { split(old, new, (p + 1) * PIECE) };
        r.clear();
        a.clear();
        merge(&old[start.0..end.0.max(start.0)], &new[start.1..end.1.max(start.1)], r, a);
    });
    for (r, a) in &pieces[..count] {
        removed.extend_from_slice(r);
        added.extend_from_slice(a);
    }
    Ok(())
}

/// Where the merge of sorted, unique `a` and `b` (ties: `a`'s first) has taken `d`
/// elements: `(i, j)` with `i + j = d`, then `j` one further where `b[j]` equals `a[i - 1]`,
/// so that equal elements fall in the same piece. Monotone in `d`. O(log n).
fn split<T: Ord>(a: &[T], b: &[T], d: usize) -> (usize, usize) {
    let (mut lo, mut hi) = (d.saturating_sub(b.len()), d.min(a.len()));
    while lo < hi {
        let i = (lo + hi) / 2;
        if a[i] <= b[d - i - 1] {
            lo = i + 1;
        } else {
            hi = i;
        }
    }
    let (i, j) = (lo, d - lo);
    (i, if i > 0 && j < b.len() && a[i - 1] == b[j] { j + 1 } else { j })
}

/// The sequential merge: what only `old` holds into `removed`, what only `new` holds into
/// `added`.
fn merge<T: Ord + Copy>(old: &[T], new: &[T], removed: &mut Vec<T>, added: &mut Vec<T>) {
    let (mut i, mut j) = (0, 0);
    while i < old.len() && j < new.len() {
        match old[i].cmp(&new[j]) {
            std::cmp::Ordering::Less => {
                removed.push(old[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                added.push(new[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
    }
    removed.extend_from_slice(&old[i..]);
    added.extend_from_slice(&new[j..]);
}

#[cfg(test)]
mod tests {
    use super::{difference, PIECE};

    /// The pieced difference against the sequential one, on lists that share most of
    /// their elements, none, or all, of sizes around the piece boundaries.
    #[test]
    fn pieced_difference_is_the_merge() {
        let mut pieces = Vec::new();
        let mut x = 1u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for (n_old, n_new, shared) in [
            (0, 3 * PIECE, 0),
            (3 * PIECE, 0, 0),
            (2 * PIECE, 2 * PIECE, 100),
            (5 * PIECE + 7, 3 * PIECE, 90),
            (PIECE, 4 * PIECE + 1, 50),
        ] {
            let mut old: Vec<u64> = (0..n_old).map(|_| next() % 1_000_000).collect();
            let mut new: Vec<u64> = (0..n_new)
                .map(|i| if i < n_old && next() % 100 < shared { old[i] } else { next() % 1_000_000 })
                .collect();
            for v in [&mut old, &mut new] {
                v.sort_unstable();
                v.dedup();
            }
            let want_removed: Vec<u64> =
                old.iter().copied().filter(|x| new.binary_search(x).is_err()).collect();
            let want_added: Vec<u64> =
                new.iter().copied().filter(|x| old.binary_search(x).is_err()).collect();
            let (mut removed, mut added) = (Vec::new(), Vec::new());
            difference(&old, &new, &mut removed, &mut added, &mut pieces).unwrap();
            assert_eq!(
                (removed, added),
                (want_removed, want_added),
                "{n_old} old, {n_new} new, {shared}% shared"
            );
        }
    }
}
