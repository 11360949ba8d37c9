//! The world's candidate search: the pairs of the objects changed since the last update
//! that may have ended and that may have begun, found by walking two trees, one over the
//! static objects and one over the dynamic ones, and by one pair search among the changed
//! objects themselves.
//!
//! - Input: the dirty list, each changed slot's state as of the last update (its
//!   snapshot, at the same position) and now, the store, the pair store. Output: `old`
//!   (named as they were) and `new` (named as they are), neither sorted; their difference
//!   is the events.
//! - Trees ([`crate::bvh::Bvh`]): the static tree holds every live static object's box
//!   (grown by the margin), rebuilt on a frame where a static object changed (rare: level
//!   geometry); the dynamic tree holds a "fat" box for each dynamic object (its box grown
//!   by the margin and by [`FAT`] of its size), so an object that moves a little stays
//!   inside it and costs the tree nothing. One that leaves it grows its leaf and the leaf's
//!   ancestors (`Bvh::enlarge`, O(depth)); one that goes far (see [`far`]: a teleport, a
//!   parking spot) gives its leaf up rather than stretch it across the world. An object
//!   without a leaf takes the last freed one where that lies near, else joins the
//!   objects without a leaf (`Search::extras`), which have a small tree of their own,
//!   rebuilt on a frame where one of them changed. The dynamic tree is rebuilt when
//!   [`REBUILD_SHARE`] of its leaves have grown or been freed, or when the objects without
//!   a leaf pass [`EXTRAS_MIN`] plus that share of the leaves (then in the same frame).
//! - Neighbour lists: each dynamic object keeps the static objects near its fat box (slot
//!   and grown box, the box in 16-bit steps of the fat box: `listed`), as of the current
//!   static tree, at its leaf's position; a walk whose region stays inside that box reads
//!   the list instead of the static tree. Each dynamic leaf keeps the other leaves whose
//!   boxes meet its box (`leaf_lists`, in 16-bit steps of its box), kept current as
//!   leaves grow; a walk whose region its leaf holds reads that list instead of the
//!   dynamic tree.
//! - INVARIANT: every live dynamic object that is clean this frame has a leaf whose box
//!   holds its box grown by the margin (and a copy of that box beside the leaf), or is in
//!   the list.
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
//! - Threads: the walks in fixed chunks of the dirty list, in Morton order, on the
//!   caller's rayon pool; the builds as `Bvh::build_sah` and `Bvh::build_for_queries`.
//!   Results are sorted by the caller, so the same bytes for any thread count.
//! - Allocation: the trees, maps, lists and per-chunk buffers are kept from frame to
//!   frame; the lists' arena is compacted now and then, and buffers an outsized frame
//!   grew are trimmed after it (`trim_parts`).
//! - Source: Box2D v3's broad phase (fat AABBs with a margin in a tree for moving proxies,
//!   a separate static tree, queries of the moved proxies only); Karras' LBVH and Wald's
//!   binned surface area build for the trees.

use super::pairs::PairStore;
use super::store::Store;
use super::{dirty::Dirty, handle::Slots, Handle};
use crate::bvh::Bvh;
use crate::{Aabb, Broadphase, Error};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

mod among;
mod cost;
mod leaf_lists;
mod listed;
mod query;
mod statics;
mod upkeep;
mod validate;
mod walk;
mod whole;

use among::Among;
pub(crate) use cost::is_whole;
use leaf_lists::LeafLists;
use listed::Entry;
use statics::Statics;

pub(crate) use query::Sight;

/// A dynamic leaf's box (and the box its static neighbour list is taken for) is the
/// object's box grown by the margin and by this share of its longest side on every side:
/// a body moving a few percent of its size a frame leaves it every dozen frames or so,
/// and only then walks the static tree. Half a side: at a quarter, the walks on leaving
/// cost 100% moving frames about a quarter more. PERF: benches/world.rs (`move_100`).
const FAT: f32 = 0.5;

/// The dynamic tree is rebuilt once this share of its leaves have grown or been freed
/// since it was built (a grown leaf loosens every node above it), or once the objects
/// without a leaf pass [`EXTRAS_MIN`] and this share of the leaves.
const REBUILD_SHARE: usize = 8;

/// Objects without a leaf that never call for a rebuild of the dynamic tree.
const EXTRAS_MIN: usize = 256;

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

/// What a chunk of walks produces: its old and new pairs, and the static lists it made
/// (`fresh`: leaf position, start in `lists`, length, the fat box they were taken for).
#[derive(Clone, Debug, Default)]
struct Part<const D: usize> {
    old: Vec<[Handle; 2]>,
    new: Vec<[Handle; 2]>,
    lists: Vec<Entry<D>>,
    fresh: Vec<(u32, u32, u32, Aabb<D>)>,
    /// The dynamic lists it made: (leaf position, start in `dyn_items`, length; `NONE`:
    /// crowded).
    dyn_items: Vec<Entry<D>>,
    dyn_fresh: Vec<(u32, u32, u32)>,
}

/// Gives back what an outsized frame left in the per-chunk buffers (a first frame of
/// walks makes every moving object's lists at once; the frames after, a few): a chunk's
/// list buffers down to twice what they held once they hold over four times more, and
/// the chunks past twice this frame's. Steady frames trim nothing, so allocate nothing.
fn trim_parts<const D: usize>(parts: &mut Vec<Part<D>>, chunks: usize) {
    fn trim<T>(v: &mut Vec<T>) {
        let keep = 2 * v.len().max(16);
        if v.capacity() > 2 * keep {
            v.shrink_to(keep);
        }
    }
    if parts.len() > 2 * chunks {
        parts.truncate(chunks);
    }
    for p in parts.iter_mut() {
        trim(&mut p.lists);
        trim(&mut p.dyn_items);
        trim(&mut p.fresh);
    }
}

/// The chunks' old and new pairs into `old` and `new`, the room reserved first: a refused
/// allocation is [`Error::OutOfMemory`].
fn merge_parts<const D: usize>(
    parts: &[Part<D>],
    old: &mut Vec<[Handle; 2]>,
    new: &mut Vec<[Handle; 2]>,
) -> Result<(), Error> {
    let (o, n) = parts.iter().fold((0, 0), |(o, n), p| (o + p.old.len(), n + p.new.len()));
    let oom = |_| Error::OutOfMemory { pairs: o + n };
    old.try_reserve(o).map_err(oom)?;
    new.try_reserve(n).map_err(oom)?;
    for p in parts {
        old.extend_from_slice(&p.old);
        new.extend_from_slice(&p.new);
    }
    Ok(())
}

/// A dynamic object's list of the static objects near it: those whose grown boxes meet
/// `fat`, as of static tree `generation`; `arena[start..start + len]`.
#[derive(Clone, Copy, Debug)]
struct Near<const D: usize> {
    start: u32,
    len: u32,
    generation: u32,
    fat: Aabb<D>,
}

impl<const D: usize> Near<D> {
    /// No list.
    const NO_LIST: Self =
        Near { start: 0, len: 0, generation: NONE, fat: Aabb { min: [0.0; D], max: [0.0; D] } };
}

/// A dynamic tree that lasted this many frames is rebuilt by the surface area heuristic,
/// else in Morton order (`Search::build_dynamics`); likewise a static tree whose objects
/// stayed unchanged that many frames.
const SAH_FRAMES: u64 = 64;

/// No slot position (free leaf; slot without a leaf).
const NONE: u32 = u32::MAX;
/// A slot in [`Search::extras`].
const EXTRA: u32 = u32::MAX - 1;

/// Changed slots a parallel work item walks for.
const CHUNK: usize = 64;

/// The trees and maps of the search (module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct Search<const D: usize> {
    /// The static tree, with the static objects changed since it was built.
    statics: Statics<D>,
    dynamics: Bvh<D>,
    /// The slot at each dynamic tree leaf position (`NONE`: a free leaf), and each slot's
    /// position (`NONE`: none, `EXTRA`: in the list).
    pos_slot: Vec<u32>,
    slot_pos: Vec<u32>,
    /// Free leaf positions.
    free: Vec<u32>,
    /// Live dynamic slots without a leaf (moved far from theirs, inserted far from the
    /// last freed leaf, or turned dynamic since the tree was built), and a tree over
    /// their boxes (grown by the tree margin; its ids index `extras`), rebuilt on each
    /// frame where one of them changed: walks and queries meet them through it, so an
    /// object without a leaf costs O(log e), not a pass over the list.
    extras: Vec<u32>,
    extra_tree: Bvh<D>,
    /// Leaves grown or freed since the dynamic tree was built, and whether that (or the
    /// list's length) calls for a rebuild not yet done.
    loosened: usize,
    rebuild: bool,
    /// Live dynamic objects unchanged this frame.
    clean_dynamics: usize,
    dynamic_built: bool,
    /// Frames searched so far ([`Search::count_frame`]), and the frame the
    /// dynamic tree was last built in.
    frames: u64,
    dynamic_built_at: u64,
    /// The boxes a tree is built from, and their slots.
    gather: Vec<Aabb<D>>,
    gather_slots: Vec<u32>,
    /// The changed slots in Morton order of their boxes, and the sort's keys.
    order: Vec<u32>,
    keys: Vec<u64>,
    /// Per chunk of the dirty list: its pairs and its fresh static lists.
    parts: Vec<Part<D>>,
    /// Each dynamic leaf position's list of nearby static objects (`Near`, for the
    /// object at that leaf; `generation` `NONE`: none), the lists' arena, and the
    /// entries of it still in use. An object without a leaf keeps no list.
    near: Vec<Near<D>>,
    /// Marks over leaf positions, for moving the static lists on a rebuild.
    taken: Vec<u64>,
    arena: Vec<Entry<D>>,
    arena_live: usize,
    /// Each dynamic leaf position's list of the other dynamic leaves whose boxes meet its
    /// box (`leaf_lists`): a changed object whose region its leaf holds reads its list
    /// instead of walking the dynamic tree (`walk`). Made by a walk; a leaf that grows is
    /// put in (or updated in) every valid list it meets, and its own list goes stale.
    leaf_lists: LeafLists<D>,
    /// The grown box of the object at each dynamic leaf position (current for every clean
    /// object), read beside the tree rather than from the store by slot.
    leaf_box: Vec<Aabb<D>>,
    /// The generation every live static list has (a list of another is stale: `NONE`).
    static_generation: u32,
    /// The whole frame's slots (beside `gather`), its per-chunk counts and pairs
    /// ([`Search::whole`]).
    gather_ids: Vec<u32>,
    gather_counts: Vec<[usize; 2]>,
    gather_found: Vec<[u32; 2]>,
    /// The pair searches among the changed objects, as they were and as they are.
    among: [Among<D>; 2],
    /// The choice between the walks and a whole frame (`cost`).
    cost: cost::Cost,
    /// The last frame's stage times ([`WorldStats`](crate::WorldStats)).
    pub(crate) times: Times,
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

/// The positions in `list` into `order`, sorted by the Morton code of each slot's box's
/// centre (over the centres' bounds, 10 bits an axis), ties by position.
fn morton_order<const D: usize>(
    list: &[u32],
    aabb: impl Fn(u32) -> Aabb<D>,
    keys: &mut Vec<u64>,
    order: &mut Vec<u32>,
) {
    let centre = |b: &Aabb<D>, k: usize| (b.min[k] as f64 + b.max[k] as f64) * 0.5;
    let mut lo = [f64::INFINITY; D];
    let mut hi = [f64::NEG_INFINITY; D];
    for &s in list {
        let b = aabb(s);
        for k in 0..D {
            lo[k] = lo[k].min(centre(&b, k));
            hi[k] = hi[k].max(centre(&b, k));
        }
    }
    let scale: [f64; D] = std::array::from_fn(|k| if hi[k] > lo[k] { 1023.0 / (hi[k] - lo[k]) } else { 0.0 });
    keys.clear();
    keys.extend(list.iter().enumerate().map(|(i, &s)| {
        let b = aabb(s);
        let q: [u32; D] =
            std::array::from_fn(|k| ((centre(&b, k) - lo[k]) * scale[k]).clamp(0.0, 1023.0) as u32);
        crate::kernels::morton::encode_lut(q) << 32 | i as u64
    }));
    keys.sort_unstable();
    order.clear();
    order.extend(keys.iter().map(|&k| k as u32));
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

impl<const D: usize> Search<D> {
    /// Heap bytes held, from capacities.
    pub(crate) fn bytes(&self) -> (usize, usize) {
        let objects = self.statics.bytes()
            + self.dynamics.bytes()
            + self.extra_tree.bytes()
            + 4 * (self.pos_slot.capacity()
                + self.slot_pos.capacity()
                + self.free.capacity()
                + self.extras.capacity()
                + self.gather_slots.capacity()
                + self.order.capacity()
                + self.gather_ids.capacity())
            + std::mem::size_of::<Aabb<D>>() * self.gather.capacity()
            + self.among.iter().map(Among::bytes).sum::<usize>();
        let objects = objects
            + self.near.capacity() * std::mem::size_of::<Near<D>>()
            + 8 * self.taken.capacity()
            + std::mem::size_of::<Entry<D>>() * self.arena.capacity()
            + std::mem::size_of::<Aabb<D>>() * self.leaf_box.capacity()
            + self.leaf_lists.bytes()
            + self
                .parts
                .iter()
                .map(|p| {
                    std::mem::size_of::<Entry<D>>() * (p.lists.capacity() + p.dyn_items.capacity())
                        + std::mem::size_of::<(u32, u32, u32, Aabb<D>)>() * p.fresh.capacity()
                        + 12 * p.dyn_fresh.capacity()
                })
                .sum::<usize>();
        let pairs = self.parts.iter().map(|p| p.old.capacity() + p.new.capacity()).sum::<usize>()
            * std::mem::size_of::<[Handle; 2]>()
            + (self.gather_found.capacity() + self.among.iter().map(|a| a.found.capacity()).sum::<usize>())
                * 8
            + self.keys.capacity() * 8;
        (objects, pairs)
    }

    /// Counts a frame searched, of `changed` of `live` objects: called once its events are
    /// found and applied, so that a failed frame is retried as the same frame.
    pub(crate) fn count_frame(&mut self, changed: usize, live: usize) {
        self.cost.record(changed, live);
        self.frames += 1;
        self.statics.unsettled = false;
    }

    /// The old and new pairs of the changed slots into `old` and `new` (module docs).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn changed_pairs(
        &mut self,
        slots: &Slots,
        store: &Store<D>,
        dirty: &Dirty,
        pairs: &PairStore,
        finder: &mut Broadphase<D>,
        old: &mut Vec<[Handle; 2]>,
        new: &mut Vec<[Handle; 2]>,
    ) -> Result<(), Error> {
        let margin = finder.config().margin;
        old.clear();
        new.clear();
        self.times = Times::default();
        let t = Instant::now();
        self.upkeep(slots, store, dirty, margin);
        self.times.upkeep = t.elapsed();
        let builds = self.times.builds + self.statics.builds;
        self.times.serial += self.times.upkeep.saturating_sub(builds);
        if self.cost.choose(dirty.list().len(), slots.live) {
            return self.whole(slots, store, dirty, pairs, finder, old, new);
        }
        // The walks in Morton order of the changed boxes: neighbours walk down the same
        // paths, which are then in cache. PERF: benches/world.rs (`move_10`, `move_100`).
        let t = Instant::now();
        morton_order(dirty.list(), |s| store.boxes[s as usize], &mut self.keys, &mut self.order);
        self.times.serial += t.elapsed();
        let list = &self.order[..];
        let chunks = list.len().div_ceil(CHUNK);
        if self.parts.len() < chunks {
            self.parts.resize_with(chunks, Default::default);
        }
        let mut parts = std::mem::take(&mut self.parts);
        let me = &*self;
        let frame = walk::Frame { slots, store, dirty, margin };
        // The walks' new pairs all began this frame, so all are held after it: once they
        // pass the bound, the chunks not yet walked are skipped and the frame fails.
        let bound = finder.config().max_pairs.unwrap_or(usize::MAX);
        let began = AtomicUsize::new(0);
        parts[..chunks].par_iter_mut().enumerate().for_each(|(c, part)| {
            part.old.clear();
            part.new.clear();
            part.lists.clear();
            part.fresh.clear();
            part.dyn_items.clear();
            part.dyn_fresh.clear();
            if began.load(Relaxed) <= bound {
                me.walk_chunk(&list[c * CHUNK..((c + 1) * CHUNK).min(list.len())], &frame, part);
                began.fetch_add(part.new.len(), Relaxed);
            }
        });
        let over = began.load(Relaxed) > bound;
        let t = Instant::now();
        let merged = if over { Ok(()) } else { merge_parts(&parts[..chunks], old, new) };
        if !over && merged.is_ok() {
            self.keep_lists(&parts[..chunks]);
            self.keep_dynamic_lists(&parts[..chunks]);
        }
        trim_parts(&mut parts, chunks);
        self.parts = parts;
        self.times.serial += t.elapsed();
        if over {
            return Err(Error::TooManyPairs { limit: bound });
        }
        merged?;
        // The pairs among changed objects: as they were, then as they are.
        let list = dirty.list();
        let now = |i: usize| store.snapshot(slots, list[i] as usize);
        let t = Instant::now();
        let among = self.among_both(list, |i| store.before[i], now, finder, old, new);
        if list.len() <= among::AMONG_SWEEP_MAX {
            self.times.serial += t.elapsed();
        }
        among
    }

    /// Keeps the dynamic lists the walks made (module docs of `walk`).
    fn keep_dynamic_lists(&mut self, parts: &[Part<D>]) {
        for part in parts {
            for &(p, start, len) in &part.dyn_fresh {
                if len == NONE {
                    self.leaf_lists.crowd(p as usize);
                } else {
                    self.leaf_lists.set(
                        p as usize,
                        &part.dyn_items[start as usize..(start + len) as usize],
                        0,
                    );
                }
            }
        }
        self.leaf_lists.compact();
    }

    /// Keeps the static lists the walks made: each replaces its slot's list, in place
    /// where it is no longer than the list it replaces, else at the arena's end. The
    /// arena grows by an eighth at a time and is compacted (to an eighth over its live
    /// entries) once its dead entries pass a quarter of its live ones: a list per dynamic object
    /// is the largest thing the world keeps after its trees. PERF: benches/world.rs
    /// (`move_10`, and the memory after each moving group).
    fn keep_lists(&mut self, parts: &[Part<D>]) {
        for p in parts {
            for &(at, start, len, fat) in &p.fresh {
                let old = &mut self.near[at as usize];
                let list = &p.lists[start as usize..(start + len) as usize];
                let held = old.generation != NONE;
                if held {
                    self.arena_live -= old.len as usize;
                }
                let at = if held && len <= old.len {
                    self.arena[old.start as usize..(old.start + len) as usize].copy_from_slice(list);
                    old.start
                } else {
                    crate::world::reserve_slack(&mut self.arena, list.len());
                    self.arena.extend_from_slice(list);
                    (self.arena.len() - list.len()) as u32
                };
                *old = Near { start: at, len, generation: self.static_generation, fat };
                self.arena_live += len as usize;
            }
        }
        if self.arena.len() > self.arena_live + self.arena_live / 4 + 4096 {
            let mut packed = Vec::with_capacity(self.arena_live + self.arena_live / 8);
            for l in self.near.iter_mut().filter(|l| l.generation != NONE) {
                let at = packed.len() as u32;
                packed.extend_from_slice(&self.arena[l.start as usize..(l.start + l.len) as usize]);
                l.start = at;
            }
            self.arena = packed;
        }
    }
}
