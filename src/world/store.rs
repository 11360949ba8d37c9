//! The per-slot store (structure of arrays: box, kind, filter) and the pre-frame snapshot
//! of the slots changed this frame.
//!
//! - Input: the boxes, kinds and filters the caller sets, already checked. Output: each
//!   slot's current state, and, for a changed slot, its state as of the last update.
//! - The snapshot is taken at a slot's first change in a frame (when its dirty bit goes
//!   from clear to set), so it holds what the pair store was built from: the frame reads it
//!   to report a removed object's pairs with its old handle, and `pairs()` to name the
//!   pairs of the last update while changes are pending. Snapshots sit in dirty-list
//!   order; a lookup by slot goes through an index sorted by slot ([`index_dirty`], built
//!   once a frame), O(log changed).
//! - Cost: O(1) a change. Threads: none. Allocation: the boxes and kinds grow by one on
//!   each new slot. The filters are stored for a prefix of the slots only, up to the last
//!   slot given a filter other than the default (a slot past it has the default), so a
//!   world in which every object has the default filter stores none; once no slot has
//!   another, they are given back (see [`Store::set_filter`]). The snapshot list grows to
//!   the most slots changed in one frame and is kept.
//! - Source: this crate (the boxes are kept as the caller set them; the margin is applied
//!   where pairs are found).

use super::dirty::Dirty;
use super::handle::Slots;
use crate::Aabb;

/// How an object moves, and so what it pairs with. A pair needs at least one dynamic
/// object: two static objects never pair, however they overlap, and neither do two
/// kinematic ones, nor a kinematic and a static one (the rule of rapier's and Box2D's
/// default contact pairs).
///
/// Sleeping needs no kind of its own: an object whose box is not set again costs an
/// update nothing, whatever its kind, and keeps its pairs. Turning a resting body
/// [`Kind::Static`] would end its pairs with the static objects under it (a "collision
/// stopped" event), and turning it back would begin them again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Kind {
    /// Does not move, or moves rarely (terrain, walls): paired only with dynamic objects.
    Static,
    /// Moved by the user each frame (platforms, doors, characters), paired only with
    /// dynamic objects: a kinematic body is not stopped by the level, so its pairs with
    /// static and kinematic objects would be work for nothing.
    Kinematic,
    /// Paired with every object it overlaps that its filter accepts.
    Dynamic,
}

impl Kind {
    /// Whether objects of this kind move: they live in the dynamic tree.
    #[inline]
    pub(crate) fn moves(self) -> bool {
        self != Kind::Static
    }
}

/// Collision groups: two objects pair only when each one's `membership` shares a bit with
/// the other's `mask`. The default (every bit set in both) pairs with everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Filter {
    /// The groups this object belongs to.
    pub membership: u32,
    /// The groups this object pairs with.
    pub mask: u32,
}

impl Default for Filter {
    fn default() -> Self {
        Self { membership: u32::MAX, mask: u32::MAX }
    }
}

impl Filter {
    /// Whether objects with these filters may pair (the test is symmetric).
    #[inline]
    pub(crate) fn accepts(self, other: Filter) -> bool {
        self.membership & other.mask != 0 && other.membership & self.mask != 0
    }
}

/// Whether two objects of these kinds and filters may pair: at least one dynamic (so no
/// static or kinematic pair among themselves), and each filter accepting the other.
#[inline]
pub(crate) fn pairable(ka: Kind, fa: Filter, kb: Kind, fb: Filter) -> bool {
    (ka == Kind::Dynamic || kb == Kind::Dynamic) && fa.accepts(fb)
}

/// Whether two boxes, each grown by `margin`, overlap as closed boxes; a box the margin
/// turns inside out overlaps nothing (the rule `brute_force_pairs` applies).
#[inline]
pub(crate) fn touching<const D: usize>(a: &Aabb<D>, b: &Aabb<D>, margin: f32) -> bool {
    grown_pair(a, b, margin).is_some_and(|(a, b)| a.overlaps(&b))
}

/// Both boxes grown by `margin`, or `None` where the margin turns either inside out (such
/// a box pairs with nothing, however near).
#[inline]
pub(crate) fn grown_pair<const D: usize>(
    a: &Aabb<D>,
    b: &Aabb<D>,
    margin: f32,
) -> Option<(Aabb<D>, Aabb<D>)> {
    let (a, b) = (a.grown(margin), b.grown(margin));
    (!a.is_inverted() && !b.is_inverted()).then_some((a, b))
}

/// The stored filters are given back once no slot has a filter other than the default
/// only after a filter change per this many slots they cover (see [`Store::set_filter`]).
pub(crate) const GIVE_BACK_STEP: usize = 64;

/// One slot's state as of the last update.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Snapshot<const D: usize> {
    /// The slot held a live object.
    pub(crate) alive: bool,
    /// The slot's generation (that of its object, if alive).
    pub(crate) generation: u32,
    /// The object's box, kind and filter (meaningless where the slot was dead).
    pub(crate) aabb: Aabb<D>,
    pub(crate) kind: Kind,
    pub(crate) filter: Filter,
}

/// Boxes, kinds and filters by slot, the kind counts, and the snapshots of changed slots.
#[derive(Clone, Debug, Default)]
pub(crate) struct Store<const D: usize> {
    /// Each slot's box, as the caller set it (finite, `min <= max`; not grown). A dead slot
    /// keeps its last object's box (or zeros), read by nothing but its snapshot.
    pub(crate) boxes: Vec<Aabb<D>>,
    /// Each slot's kind (meaningless where dead).
    pub(crate) kinds: Vec<Kind>,
    /// The filters of the first `filters.len()` slots; every slot at or past the length
    /// has the default filter. Read through [`Store::filter`].
    /// INVARIANT: `filters.len() <= len()`; a dead slot has the default filter.
    pub(crate) filters: Vec<Filter>,
    /// Slots whose filter is not the default: while none is, every pair test skips the
    /// filters (the walks read no filter of the objects they meet).
    pub(crate) filtered: usize,
    /// Filter changes since `filters` was last grown from empty: it is given back when
    /// `filtered` falls to 0 only once these pay for growing it again (see
    /// [`Store::set_filter`]).
    pub(crate) filter_changes: usize,
    /// Live static objects, live moving (dynamic and kinematic) objects, and the kinematic
    /// ones among the moving.
    pub(crate) statics: usize,
    pub(crate) moving: usize,
    pub(crate) kinematics: usize,
    /// The user data of the first `data.len()` slots; every slot past it has 0 (stored
    /// only up to the last slot given other data).
    /// INVARIANT: `data.len() <= len()`.
    pub(crate) data: Vec<u64>,
    /// The state as of the last update of each changed slot.
    /// INVARIANT: `before[i]` is the snapshot of slot `dirty.list()[i]`.
    pub(crate) before: Vec<Snapshot<D>>,
}

impl<const D: usize> Store<D> {
    /// Slots stored.
    pub(crate) fn len(&self) -> usize {
        self.boxes.len()
    }

    /// A new dead slot at the end.
    pub(crate) fn push_dead(&mut self) {
        self.boxes.push(Aabb { min: [0.0; D], max: [0.0; D] });
        self.kinds.push(Kind::Static);
    }

    /// Slot `s`'s state now, `alive` and `generation` from the slot table.
    pub(crate) fn snapshot(&self, slots: &Slots, s: usize) -> Snapshot<D> {
        Snapshot {
            alive: slots.alive[s],
            generation: slots.generations[s],
            aabb: self.boxes[s],
            kind: self.kinds[s],
            filter: self.filter(s),
        }
    }

    /// Slot `s`'s filter (the default past the stored prefix).
    #[inline]
    pub(crate) fn filter(&self, s: usize) -> Filter {
        self.filters.get(s).copied().unwrap_or_default()
    }

    /// Sets slot `s`'s filter, keeping the count of filtered slots. The stored prefix
    /// grows (by at least an eighth, as the other per-slot arrays) only where a filter
    /// other than the default is set past it. When no slot has a filter other than the
    /// default any more, the filters are given back, provided at least one filter change
    /// per [`GIVE_BACK_STEP`] slots they cover happened since they were grown from
    /// empty: growing them again costs O(slots covered), so toggling one filter back and
    /// forth stays O(1) amortised (a world that set one filter in a million slots and took
    /// it back keeps them until some 16 000 changes more).
    pub(crate) fn set_filter(&mut self, s: usize, filter: Filter) {
        let plain = Filter::default();
        let was = self.filter(s);
        if was == filter {
            return;
        }
        self.filter_changes = self.filter_changes.saturating_add(1);
        if s >= self.filters.len() {
            // Past the prefix the filter is the default, so `filter` is not.
            if self.filters.is_empty() {
                self.filter_changes = 1;
            }
            let more = s + 1 - self.filters.len();
            super::reserve_slack(&mut self.filters, more);
            self.filters.resize(s + 1, plain);
        }
        self.filters[s] = filter;
        self.filtered = self.filtered + (filter != plain) as usize - (was != plain) as usize;
        if self.filtered == 0 && self.filter_changes.saturating_mul(GIVE_BACK_STEP) >= self.filters.len() {
            self.filters = Vec::new();
        }
    }

    /// The filter of slot `s` for a pair test: the default while no slot has another.
    #[inline(always)]
    pub(crate) fn filter_for_pairs(&self, s: usize) -> Filter {
        if self.filtered == 0 {
            Filter::default()
        } else {
            self.filter(s)
        }
    }

    /// Counts `n` live objects of kind `k` in (`add`) or out.
    pub(crate) fn count(&mut self, k: Kind, n: usize, add: bool) {
        let bump = |c: &mut usize| if add { *c += n } else { *c -= n };
        match k {
            Kind::Static => bump(&mut self.statics),
            Kind::Kinematic => {
                bump(&mut self.moving);
                bump(&mut self.kinematics);
            }
            Kind::Dynamic => bump(&mut self.moving),
        }
    }

    /// Slot `s`'s user data (0 past the stored prefix).
    #[inline]
    pub(crate) fn user_data(&self, s: usize) -> u64 {
        self.data.get(s).copied().unwrap_or(0)
    }

    /// Sets slot `s`'s user data; the stored prefix grows (by at least an eighth) only
    /// where data other than 0 is set past it.
    pub(crate) fn set_user_data(&mut self, s: usize, d: u64) {
        if s >= self.data.len() {
            if d == 0 {
                return;
            }
            let more = s + 1 - self.data.len();
            super::reserve_slack(&mut self.data, more);
            self.data.resize(s + 1, 0);
        }
        self.data[s] = d;
    }

    /// Heap bytes held, from capacities.
    pub(crate) fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.boxes.capacity() * size_of::<Aabb<D>>()
            + self.kinds.capacity() * size_of::<Kind>()
            + self.filters.capacity() * size_of::<Filter>()
            + self.data.capacity() * size_of::<u64>()
            + self.before.capacity() * size_of::<Snapshot<D>>()
    }
}

/// The world as of the last update, read through the current state and the snapshots: a
/// clean slot is as it is now, a changed one as its snapshot says.
#[derive(Debug)]
pub(crate) struct PreFrame<'a, const D: usize> {
    pub(crate) slots: &'a Slots,
    pub(crate) store: &'a Store<D>,
    pub(crate) dirty: &'a Dirty,
    /// `(slot, position in the dirty list)` for every changed slot, sorted by slot.
    pub(crate) index: &'a [(u32, u32)],
}

/// Fills `index` with `(slot, position)` for each slot of the dirty list, sorted by slot,
/// for [`PreFrame`]'s lookups: O(changed log changed).
pub(crate) fn index_dirty(list: &[u32], index: &mut Vec<(u32, u32)>) {
    index.clear();
    index.extend(list.iter().enumerate().map(|(i, &s)| (s, i as u32)));
    // Slots are unique, so the unstable sort has one result.
    index.sort_unstable();
}

impl<const D: usize> PreFrame<'_, D> {
    /// Slot `s`'s snapshot, if it changed this frame.
    fn changed(&self, s: u32) -> Option<&Snapshot<D>> {
        if !self.dirty.contains(s) {
            return None;
        }
        let at = self.index.binary_search_by_key(&s, |&(slot, _)| slot).ok()?;
        self.store.before.get(self.index[at].1 as usize)
    }

    /// Slot `s`'s generation as of the last update.
    pub(crate) fn generation(&self, s: u32) -> u32 {
        match self.changed(s) {
            Some(b) => b.generation,
            None => self.slots.generations[s as usize],
        }
    }

    /// Slot `s`'s whole state as of the last update.
    pub(crate) fn get(&self, s: u32) -> Snapshot<D> {
        match self.changed(s) {
            Some(b) => *b,
            None => self.store.snapshot(self.slots, s as usize),
        }
    }
}
