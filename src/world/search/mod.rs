//! The world's candidate search: the pairs of the objects changed since the last update
//! that may have ended and that may have begun, found by walking two trees, one over the
//! static objects and one over the dynamic ones, and by one pair search among the changed
//! objects themselves.
//!
//! - Input: the changed list (`world::dirty`), each changed slot's state as of the last
//!   update (its snapshot, at the same position) and now, the store, the pair store.
//!   Output: `old` (named as they were) and `new` (named as they are), neither sorted;
//!   their difference is the events.
//! - A frame's stages ([`Search::changed_pairs`]): the upkeep of the trees and lists
//!   (`upkeep`); the choice between the walks and a whole frame (`cost`); the walks of the
//!   changed objects through the clean ones near them (`walk`), or the whole frame
//!   (`whole`); the pairs among the changed objects (`among`).
//! - The owners, one a module, each with its invariants (`validate`) and its memory count
//!   (`bytes`): the static tree ([`Statics`]: every live static object's box grown by the
//!   margin, the changed ones masked and kept in a small tree beside it until enough
//!   call for a rebuild); the dynamic tree ([`Dynamics`]: a fat box for each dynamic
//!   object, its box grown by the margin and by [`FAT`] of its size, so that an object
//!   whose box shifts a little stays inside it and costs the tree nothing; the objects
//!   without a leaf beside it); the neighbour lists ([`Lists`]: each dynamic leaf's list
//!   of the static objects near its object and of the other leaves whose boxes meet its
//!   box, each kind in an arena of its own); the frame's buffers ([`Scratch`]).
//! - INVARIANT: every live dynamic object that is clean this frame has a leaf whose box
//!   holds its box grown by the margin (and a copy of that box beside the leaf), or is
//!   among the dynamic objects without a leaf.
//! - Pairs: a changed object walks once with the union of its old and new boxes (twice,
//!   once around each, where they lie far apart), and each clean object met is tested
//!   against both states; only pairs that began or ended are kept (a changed object met
//!   is skipped: the pairs among changed objects come from a search over their old boxes
//!   and one over their new boxes, `among`). The walks' new pairs count against
//!   [`Config::max_pairs`](crate::Config::max_pairs) as they are found.
//! - Whole frames: where most objects changed, or where the frames before show the walks
//!   costing more than that (`cost`), the frame is found whole instead
//!   (`Search::whole`): the pairs among the dynamic objects and a join of the static
//!   ones against them, from the one-shot finder; static pairs are never searched.
//! - Cost: O(c log n + k) for c changed objects and k candidates, plus the trees'
//!   upkeep: O(depth) a grown leaf, O(n) a rebuild.
//! - Threads: the walks in fixed chunks of the changed list, in Morton order, on the
//!   caller's rayon pool; the builds as `Bvh::build_sah` and `Bvh::build_for_queries`.
//!   Results are sorted by the caller, so the same bytes for any thread count.
//! - Allocation: the trees, maps, lists and scratch buffers are kept from frame to frame;
//!   the lists' arenas are compacted now and then, and buffers an outsized frame grew are
//!   trimmed after it.
//! - Source: Box2D v3's broad phase (fat AABBs with a margin in a tree for dynamic proxies,
//!   a separate static tree, queries of the proxies in its move buffer only); Karras'
//!   LBVH and Wald's binned surface area build for the trees.

use super::pairs::PairStore;
use super::store::Store;
use super::{dirty::Dirty, handle::Slots, Handle};
use crate::time::Instant;
use crate::{Aabb, Broadphase, Error};

mod among;
mod cost;
mod dynamics;
mod lists;
mod query;
mod scratch;
mod statics;
mod upkeep;
mod validate;
mod walk;
mod whole;

use among::Among;
pub(crate) use cost::is_whole;
use dynamics::Dynamics;
use lists::Lists;
use scratch::Scratch;
use statics::Statics;

pub(crate) use query::{EachHit, Hits, Sight};

/// A dynamic leaf's box (and the box its static neighbour list is taken for) is the
/// object's box grown by the margin and by this share of its longest side on every side:
/// a body whose box shifts a few percent of its size a frame leaves it every dozen frames
/// or so, and only then walks the static tree. Half a side: at a quarter, the walks on
/// leaving cost frames where every object changed about a quarter more.
/// PERF: benches/world.rs (`move_100`).
const FAT: f32 = 0.5;

/// A dynamic tree that lasted this many frames is rebuilt by the surface area heuristic,
/// else in Morton order (`Dynamics::build`); likewise a static tree whose objects
/// stayed unchanged that many frames.
const SAH_FRAMES: u64 = 64;

/// No position, generation or list (a free leaf, a slot without a leaf, a dropped list,
/// a crowded leaf's list made).
const NONE: u32 = u32::MAX;

/// Whether boxes `a` and `b` lie far apart: on some axis the gap between them is wider
/// than their two extents together, so that one box around both would be over twice as
/// long as the two. A leaf grown from `a` to hold `b` would stretch every node above it
/// across the gap (a teleport, an object pool's parking spot), and one walk with a region
/// around both would visit everything between: such a pair is taken one box at a time.
fn far<const D: usize>(a: &Aabb<D>, b: &Aabb<D>) -> bool {
    (0..D).any(|k| {
        let gap = a.min[k].max(b.min[k]) as f64 - a.max[k].min(b.max[k]) as f64;
        gap > (a.max[k] as f64 - a.min[k] as f64) + (b.max[k] as f64 - b.min[k] as f64)
    })
}

/// Whether box `a` holds box `b`.
fn holds<const D: usize>(a: &Aabb<D>, b: &Aabb<D>) -> bool {
    (0..D).all(|k| a.min[k] <= b.min[k] && b.max[k] <= a.max[k])
}

/// The margin the trees grow boxes by: the configured one, or none where it is negative,
/// so that every live object has a leaf holding the box it was set to (queries find
/// objects by those boxes; the pair tests use the boxes grown by the true margin).
fn tree_margin(margin: f32) -> f32 {
    margin.max(0.0)
}

/// `b` grown by the tree margin and by [`FAT`] of its longest side.
fn fat<const D: usize>(b: &Aabb<D>, margin: f32) -> Aabb<D> {
    let g = b.grown(tree_margin(margin));
    let side = (0..D).map(|k| g.max[k] - g.min[k]).fold(0.0f32, f32::max);
    g.grown(FAT * side)
}

/// The pair of slots `a` and `b` with their generations, lower slot first.
#[inline]
fn pair(a: u32, ga: u32, b: u32, gb: u32) -> [Handle; 2] {
    if a < b {
        [Handle::new(a, ga), Handle::new(b, gb)]
    } else {
        [Handle::new(b, gb), Handle::new(a, ga)]
    }
}

/// The search: its owners, in the order a frame's stages use them (module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct Search<const D: usize> {
    /// The static tree, with the static objects changed since it was built.
    statics: Statics<D>,
    /// The dynamic tree, its leaf maps, and the dynamic objects without a leaf.
    dynamics: Dynamics<D>,
    /// Each dynamic leaf's neighbour lists, static and dynamic.
    lists: Lists<D>,
    /// The pair searches among the changed objects, as they were and as they are.
    among: [Among<D>; 2],
    /// The choice between the walks and a whole frame.
    cost: cost::Cost,
    /// The frame's buffers.
    scratch: Scratch<D>,
    /// Frames searched so far ([`Search::count_frame`]).
    frames: u64,
    /// The last frame's stage times ([`WorldStats`](crate::WorldStats)).
    pub(crate) times: Times,
    /// The last frame failed (a pair bound, a refused allocation): its walks may have
    /// stopped part way, leaving lists that miss objects, so the retry drops every list
    /// and finds the frame whole.
    retry: bool,
}

/// Stage times of a frame, for [`WorldStats`](crate::WorldStats).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Times {
    /// The trees' upkeep.
    pub(crate) upkeep: std::time::Duration,
    /// The events' sort and difference.
    pub(crate) events: std::time::Duration,
    /// The pair store's update.
    pub(crate) apply: std::time::Duration,
    /// Stages that run on one thread (or two side by side).
    pub(crate) serial: std::time::Duration,
    /// The upkeep's tree builds, which run on every thread.
    builds: std::time::Duration,
    /// Whether the frame searched for pairs (not where no object moves).
    pub(crate) searched: bool,
}

impl<const D: usize> Search<D> {
    /// Heap bytes held for objects and for pairs, from capacities.
    pub(crate) fn bytes(&self) -> (usize, usize) {
        let (scratch_objects, scratch_pairs) = self.scratch.bytes();
        let objects = self.statics.bytes()
            + self.dynamics.bytes()
            + self.lists.bytes()
            + self.among.iter().map(Among::bytes).sum::<usize>()
            + scratch_objects;
        let pairs = scratch_pairs + 8 * self.among.iter().map(|a| a.found.capacity()).sum::<usize>();
        (objects, pairs)
    }

    /// Marks the frame failed: the retry finds it whole (see `retry`).
    pub(crate) fn failed(&mut self) {
        self.retry = true;
    }

    /// For a world restored from a snapshot: a search built over the world as of its last
    /// update (`slots` and `store` as they were then, nothing changed since), as a first
    /// frame's upkeep builds it, and every pair the rule makes there into `found` (the
    /// whole frame's search, by `finder`).
    #[cfg(feature = "serde")]
    pub(crate) fn restored(
        slots: &Slots,
        store: &Store<D>,
        finder: &mut Broadphase<D>,
        found: &mut Vec<[Handle; 2]>,
    ) -> Result<Self, Error> {
        let mut search = Self::default();
        let (nothing, none) = (Dirty::default(), PairStore::default());
        search.upkeep(slots, store, &nothing, finder.config().margin);
        let mut old = Vec::new();
        search.whole(slots, store, &nothing, &none, finder, &mut old, found)?;
        search.count_frame(0, slots.live);
        Ok(search)
    }

    /// Counts a frame searched, of `changed` of `live` objects: called once its events are
    /// found and applied, so that a failed frame is retried as the same frame.
    pub(crate) fn count_frame(&mut self, changed: usize, live: usize) {
        self.retry = false;
        self.cost.record(changed, live);
        self.frames += 1;
        self.statics.unsettled = false;
    }

    /// The old and new pairs of the changed slots into `old` and `new` (module docs): the
    /// trees and lists brought up to date, then the walks and the pairs among the changed
    /// objects, or the whole frame.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn changed_pairs(
        &mut self,
        slots: &Slots,
        store: &Store<D>,
        changed: &Dirty,
        pairs: &PairStore,
        finder: &mut Broadphase<D>,
        old: &mut Vec<[Handle; 2]>,
        new: &mut Vec<[Handle; 2]>,
    ) -> Result<(), Error> {
        old.clear();
        new.clear();
        self.times = Times { searched: true, ..Times::default() };
        let t = Instant::now();
        self.upkeep(slots, store, changed, finder.config().margin);
        self.times.upkeep = t.elapsed();
        let builds = self.times.builds + self.statics.builds;
        self.times.serial += self.times.upkeep.saturating_sub(builds);
        if self.retry {
            self.lists.statics.stale_all();
            self.lists.leaves.stale_all();
        }
        if store.moving == 0 || self.retry || self.cost.choose(changed.list().len(), slots.live) {
            return self.whole(slots, store, changed, pairs, finder, old, new);
        }
        self.walks(slots, store, changed, finder, old, new)?;
        self.among(slots, store, changed, finder, old, new)
    }
}
