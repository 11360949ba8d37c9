//! The walks: for each changed object, the clean objects near it, each tested against the
//! object's state as of the last update and as of now, keeping only the pairs that ended
//! or began.
//!
//! - Input: the changed list (in Morton order of the boxes, cut into fixed chunks), the
//!   store, the snapshots, the trees and the lists. Output: the old and new pairs, and the
//!   lists the walks made, kept once the frame's walks succeed. Each chunk writes its own
//!   [`Part`].
//! - Static objects: from the object's static list, where the list is of the current
//!   static tree and its fat box holds the walk's region; else from a walk of the static
//!   tree, which makes the list anew.
//! - Dynamic objects: from the list of the object's leaf (the other leaves whose boxes
//!   meet its box), where the leaf holds the region and the list is valid; else from a
//!   walk of the dynamic tree, which makes the list anew. A walk down the dynamic tree is
//!   some thirty nodes, each a likely cache miss; a list is one run of memory. (Four or
//!   eight walks run in step, to keep several node loads in flight, were slower:
//!   `benches/world.rs`, `move_10`.)
//! - Cost: O(log n + k) a changed object for k objects met, O(k) where it reads lists.
//!   A chunk first hints its objects' slot entries, list headers and lists into the
//!   cache (`prefetch_chunk`), so their misses overlap.
//! - Threads: one chunk is one task on the caller's pool; the Morton order, the merge
//!   and the lists' keeping sequential. The caller sorts, so the same bytes for any
//!   thread count. Allocation: the scratch's kept buffers.
//! - Source: Box2D v3's broad phase (the proxies in its move buffer query the trees).

use super::lists::{Entry, Grid, Listed, Meets, LEAF_LIST_MAX};
use super::scratch::{merge_parts, trim_parts, Part};
use super::{fat, holds, pair, Search, NONE};
use crate::par::prelude::*;
use crate::time::Instant;
use crate::world::store::{pairable, Snapshot, Store};
use crate::world::{dirty::Dirty, handle::Slots, Handle, Kind};
use crate::{Aabb, Broadphase, Error};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Changed slots a parallel work item walks for.
const CHUNK: usize = 64;

/// What every walk of a frame reads.
pub(super) struct Frame<'a, const D: usize> {
    pub(super) slots: &'a Slots,
    pub(super) store: &'a Store<D>,
    pub(super) changed: &'a Dirty,
    pub(super) margin: f32,
}

impl<const D: usize> Frame<'_, D> {
    /// The kind of clean object `y` of the dynamic tree: dynamic, unless some object is
    /// kinematic (then as stored; a clean object's kind is the same then and now).
    #[inline(always)]
    fn moving_kind(&self, y: u32) -> Kind {
        if self.store.kinematics == 0 {
            Kind::Dynamic
        } else {
            self.store.kinds[y as usize]
        }
    }
}

/// A changed object as its walks see it: its slot, its states then and now (and their
/// boxes grown by the margin), and the region its walks cover (the union of both boxes).
#[derive(Clone, Copy, Debug)]
struct Changed<const D: usize> {
    s: u32,
    was: Snapshot<D>,
    is: Snapshot<D>,
    was_g: Aabb<D>,
    is_g: Aabb<D>,
    region: Aabb<D>,
    /// One object then and now (neither removed nor its slot refilled).
    same: bool,
    /// Objects whose grown boxes meet this box are skipped: the second half of a changed
    /// object split in two ([`Changed::split`]) skips what the first met. Inside out (nothing)
    /// otherwise.
    skip: Aabb<D>,
    /// Whether its walk of the static tree makes it a static list (not for the first
    /// half of a split object, whose region is where it was).
    lists: bool,
}

/// A box that meets nothing.
fn nothing<const D: usize>() -> Aabb<D> {
    Aabb { min: [f32::INFINITY; D], max: [f32::NEG_INFINITY; D] }
}

impl<const D: usize> Changed<D> {
    /// The object at position `i` of the changed list; none where it was dead then and is
    /// now, or where the margin turns its region inside out.
    fn new(i: usize, f: &Frame<'_, D>) -> Option<Self> {
        // INVARIANT (`Store::before`): the snapshot at position `i` is slot `list[i]`'s.
        let s = f.changed.list()[i];
        let was = f.store.before[i];
        let is = f.store.snapshot(f.slots, s as usize);
        let (was_g, is_g) = (was.aabb.grown(f.margin), is.aabb.grown(f.margin));
        // Only a state whose box the margin leaves right side out can pair: the region
        // covers those (and a split object's halves are then both right side out, so
        // the second's skip box is never the inside-out "nothing").
        let region = match (was.alive && !was_g.is_inverted(), is.alive && !is_g.is_inverted()) {
            (false, false) => return None,
            (true, false) => was_g,
            (false, true) => is_g,
            (true, true) => was.aabb.union(&is.aabb).grown(f.margin),
        };
        let same = was.alive && is.alive && was.generation == is.generation;
        Some(Changed { s, was, is, was_g, is_g, region, same, skip: nothing(), lists: true })
    }

    /// A changed object whose boxes then and now lie far apart (see `far`: a teleport, a parking
    /// spot) as two walks, one around each box, rather than one around both, which would
    /// visit everything between: the first meets the objects near where it was (tested
    /// against both states), the second those near where it is that the first did not.
    fn split(&self) -> Option<(Self, Self)> {
        let pairs = |alive: bool, g: &Aabb<D>| alive && !g.is_inverted();
        if !(pairs(self.was.alive, &self.was_g)
            && pairs(self.is.alive, &self.is_g)
            && super::far(&self.was_g, &self.is_g))
        {
            return None;
        }
        let then = Changed { region: self.was_g, lists: false, ..*self };
        let now = Changed { region: self.is_g, skip: self.was_g, ..*self };
        Some((then, now))
    }

    /// Clean object `y` met, with `g` its box grown by the margin (kept beside the tree or
    /// the list) and `yk` its kind, known from where it was met (a clean object in the
    /// static tree or a static list is static, in the dynamic tree or the extras dynamic),
    /// so the store is read only for a filter, and only where some object has one. Tested
    /// against both states; only a pair that began or ended (or whose handle changed: the
    /// slot was emptied and refilled) is kept, so the caller sorts the changes, not every
    /// pair of every changed object. The box is read first: most objects met are near misses.
    #[inline(always)]
    fn meet(
        &self,
        y: u32,
        g: &Aabb<D>,
        yk: Kind,
        f: &Frame<'_, D>,
        old: &mut Vec<[Handle; 2]>,
        new: &mut Vec<[Handle; 2]>,
    ) {
        if !self.region.overlaps(g) || g.is_inverted() || self.skip.overlaps(g) || f.changed.contains(y) {
            return;
        }
        self.settle(y, yk, self.was_g.overlaps(g), self.is_g.overlaps(g), f, old, new);
    }

    /// A static object met in a list ([`Listed`]: its box in steps of the list's fat box,
    /// which holds the region): as [`Changed::meet`], with the exact box loaded only where
    /// the steps leave a test unsettled.
    #[inline(always)]
    fn meet_listed(
        &self,
        e: &Entry<D>,
        grid: &Grid<D>,
        f: &Frame<'_, D>,
        old: &mut Vec<[Handle; 2]>,
        new: &mut Vec<[Handle; 2]>,
    ) {
        let outer = grid.outer(e);
        if !self.region.overlaps(&outer) || f.changed.contains(e.id) {
            return;
        }
        if !self.skip.is_inverted() {
            // The second half of a split object: the exact test, as the skip test needs
            // the whole box (a listed box is clipped to the list's fat box, so a long
            // static box met by both halves would be met twice).
            let g = f.store.boxes[e.id as usize].grown(f.margin);
            return self.meet(e.id, &g, Kind::Static, f, old, new);
        }
        let listed = Listed { outer, inner: grid.inner(e) };
        match (listed.meets(&self.was_g), listed.meets(&self.is_g)) {
            (Meets::Unsure, _) | (_, Meets::Unsure) => {
                let g = f.store.boxes[e.id as usize].grown(f.margin);
                self.settle(e.id, Kind::Static, self.was_g.overlaps(&g), self.is_g.overlaps(&g), f, old, new);
            }
            (then, now) => {
                self.settle(e.id, Kind::Static, then == Meets::Yes, now == Meets::Yes, f, old, new)
            }
        }
    }

    /// The pairs of clean object `y` (kind `yk`) with this object then and now, given
    /// whether its box meets this object's grown box then (`was_meets`) and now.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn settle(
        &self,
        y: u32,
        yk: Kind,
        was_meets: bool,
        is_meets: bool,
        f: &Frame<'_, D>,
        old: &mut Vec<[Handle; 2]>,
        new: &mut Vec<[Handle; 2]>,
    ) {
        let yi = y as usize;
        debug_assert_eq!(f.store.kinds[yi], yk, "slot {y} met as {yk:?}");
        let yf = f.store.filter_for_pairs(yi);
        let hit = |me: &Snapshot<D>, mg: &Aabb<D>, meets: bool| {
            me.alive && pairable(me.kind, me.filter, yk, yf) && !mg.is_inverted() && meets
        };
        let (then, now) = (hit(&self.was, &self.was_g, was_meets), hit(&self.is, &self.is_g, is_meets));
        if self.same && then == now {
            return;
        }
        let gy = f.slots.generations[yi];
        if then {
            old.push(pair(self.s, self.was.generation, y, gy));
        }
        if now {
            new.push(pair(self.s, self.is.generation, y, gy));
        }
    }
}

impl<const D: usize> Search<D> {
    /// The walks of the frame (module docs): their old pairs into `old` and new pairs
    /// into `new`, and the lists they made kept, all or none: once the new pairs pass
    /// [`Config::max_pairs`](crate::Config::max_pairs) the frame fails.
    pub(super) fn walks(
        &mut self,
        slots: &Slots,
        store: &Store<D>,
        changed: &Dirty,
        finder: &Broadphase<D>,
        old: &mut Vec<[Handle; 2]>,
        new: &mut Vec<[Handle; 2]>,
    ) -> Result<(), Error> {
        let margin = finder.config().margin;
        // The walks in Morton order of the changed boxes: neighbours walk down the same
        // paths, which are then in cache. PERF: benches/world.rs (`move_10`, `move_100`).
        let t = Instant::now();
        let sc = &mut self.scratch;
        morton_order(changed.list(), |s| store.boxes[s as usize], &mut sc.keys, &mut sc.order);
        self.times.serial += t.elapsed();
        let chunks = self.scratch.order.len().div_ceil(CHUNK);
        if self.scratch.parts.len() < chunks {
            self.scratch.parts.resize_with(chunks, Default::default);
        }
        let mut parts = std::mem::take(&mut self.scratch.parts);
        let me = &*self;
        let list = &me.scratch.order[..];
        let frame = Frame { slots, store, changed, margin };
        // The walks' new pairs all began this frame, so all are held after it: once they
        // pass the bound, the chunks not yet walked are skipped and the frame fails.
        let bound = finder.config().max_pairs.unwrap_or(usize::MAX);
        let began = AtomicUsize::new(0);
        parts[..chunks].par_iter_mut().enumerate().for_each(|(c, part)| {
            part.clear();
            if began.load(Relaxed) <= bound {
                me.walk_chunk(&list[c * CHUNK..((c + 1) * CHUNK).min(list.len())], &frame, part);
                began.fetch_add(part.new.len(), Relaxed);
            }
        });
        let over = began.load(Relaxed) > bound;
        let t = Instant::now();
        let merged = if over { Ok(()) } else { merge_parts(&parts[..chunks], old, new) };
        if !over && merged.is_ok() {
            for p in &parts[..chunks] {
                self.lists.statics.keep(&p.static_made, &p.static_entries);
                self.lists.leaves.keep(&p.leaf_made, &p.leaf_entries);
            }
            self.lists.compact();
        }
        trim_parts(&mut parts, chunks);
        self.scratch.parts = parts;
        self.times.serial += t.elapsed();
        if over {
            return Err(Error::TooManyPairs { limit: bound });
        }
        merged
    }

    /// The pairs with clean objects of the changed objects at positions `at` of the
    /// changed list, old into `part.old` and new into `part.new` (module docs).
    fn walk_chunk(&self, at: &[u32], f: &Frame<'_, D>, part: &mut Part<D>) {
        self.prefetch_chunk(at, f);
        for &i in at {
            let Some(c) = Changed::new(i as usize, f) else { continue };
            match c.split() {
                Some((then, now)) => {
                    self.walk_one(&then, f, part);
                    self.walk_one(&now, f, part);
                }
                None => self.walk_one(&c, f, part),
            }
        }
    }

    /// The walks of one changed object (or of one of its two halves): the static objects,
    /// the dynamic objects without a leaf, the dynamic tree.
    fn walk_one(&self, c: &Changed<D>, f: &Frame<'_, D>, part: &mut Part<D>) {
        self.walk_statics(c, f, part);
        let d = &self.dynamics;
        let _ = d.extra_tree.query(&c.region, |q| {
            let y = d.extras[d.extra_tree.ids[q] as usize];
            let g = f.store.boxes[y as usize].grown(f.margin);
            c.meet(y, &g, f.moving_kind(y), f, &mut part.old, &mut part.new);
            ControlFlow::Continue(())
        });
        // Where every dynamic object changed, the tree holds none to meet.
        if d.clean > 0 {
            self.walk_dynamics(c, f, part);
        }
    }

    /// Hints into the cache what the chunk's walks read first, in three passes over the
    /// chunk (each pass's loads hit what the pass before fetched): each object's slot
    /// entries; its list headers and its leaf's box; the lists' first entries. A walk
    /// reads these one after another, each a likely miss; fetched a chunk at a time they
    /// overlap. PERF: benches/world.rs (`move_10`).
    fn prefetch_chunk(&self, at: &[u32], f: &Frame<'_, D>) {
        use crate::kernels::par::prefetch;
        let (d, lists) = (&self.dynamics, &self.lists);
        let slot = |i: u32| f.changed.list()[i as usize];
        for &i in at {
            let s = slot(i) as usize;
            prefetch(&f.store.boxes[s]);
            if let Some(p) = d.slot_pos.get(s) {
                prefetch(p);
            }
        }
        for &i in at {
            if let Some(p) = d.leaf_of(slot(i)) {
                let p = p as usize;
                lists.statics.prefetch_head(p);
                prefetch(&d.tree.leaves[p]);
                lists.leaves.prefetch_head(p);
            }
        }
        for &i in at {
            if let Some(p) = d.leaf_of(slot(i)) {
                let p = p as usize;
                lists.statics.prefetch_list(p);
                lists.leaves.prefetch_list(p);
            }
        }
    }

    /// The dynamic objects met by a changed object: from its leaf's list, where its leaf
    /// holds the region (every leaf whose box meets the region then meets the leaf's box,
    /// so is listed) and the list is valid; from a walk with the leaf's box that makes
    /// the list anew, where it is stale (a list past `LEAF_LIST_MAX` is not kept: the
    /// leaf is marked crowded); else (no leaf, a region its leaf does not hold, a crowded
    /// leaf) from a walk with the region.
    fn walk_dynamics(&self, c: &Changed<D>, f: &Frame<'_, D>, part: &mut Part<D>) {
        let (d, lists) = (&self.dynamics, &self.lists.leaves);
        let (old, new) = (&mut part.old, &mut part.new);
        let mut meet = |q: usize| {
            let y = d.pos_slot[q];
            if y != NONE {
                c.meet(y, &d.leaf_box[q], f.moving_kind(y), f, old, new);
            }
        };
        // The leaf whose list serves: one that holds the region, is not crowded, and has a
        // grid (a leaf near the ends of f32's range has none, and keeps no list).
        let leaf = match d.leaf_of(c.s) {
            Some(p) if holds(&d.tree.leaves[p as usize], &c.region) => Some(p as usize),
            _ => None,
        };
        let listed = leaf.filter(|&p| !lists.crowded(p));
        let Some((p, grid)) = listed.and_then(|p| Some((p, Grid::new(&d.tree.leaves[p])?))) else {
            let _ = d.tree.query(&c.region, |q| {
                meet(q);
                ControlFlow::Continue(())
            });
            return;
        };
        let leaf_box = &d.tree.leaves[p];
        if let Some(list) = lists.get(p) {
            for e in list {
                if grid.outer(e).overlaps(&c.region) {
                    meet(e.id as usize);
                }
            }
        } else {
            let start = part.leaf_entries.len();
            let entries = &mut part.leaf_entries;
            let mut listed = 0;
            let _ = d.tree.query(leaf_box, |q| {
                if q != p {
                    let b = &d.tree.leaves[q];
                    // Past the cap the list is not kept: no need to hold more.
                    if listed <= LEAF_LIST_MAX {
                        entries.push(grid.encode(q as u32, b));
                        listed += 1;
                    }
                    if b.overlaps(&c.region) {
                        meet(q);
                    }
                }
                ControlFlow::Continue(())
            });
            let len = part.leaf_entries.len() - start;
            if len > LEAF_LIST_MAX {
                part.leaf_entries.truncate(start);
                part.leaf_made.push((p as u32, start as u32, NONE));
            } else {
                part.leaf_made.push((p as u32, start as u32, len as u32));
            }
        }
    }

    /// The static objects met by a changed object that is dynamic then or now: its list,
    /// where the list is of this static tree and its fat box holds the region; else a walk
    /// of the static tree, which makes the list anew for a fat box around the box it has
    /// now.
    fn walk_statics(&self, c: &Changed<D>, f: &Frame<'_, D>, part: &mut Part<D>) {
        let dynamic = |st: &Snapshot<D>| st.alive && st.kind == Kind::Dynamic;
        if !dynamic(&c.was) && !dynamic(&c.is) {
            return;
        }
        let lists = &self.lists.statics;
        let (old, new) = (&mut part.old, &mut part.new);
        // The object's leaf: a list is kept by leaf position.
        let at = self.dynamics.leaf_of(c.s).filter(|_| dynamic(&c.is) && c.lists);
        // (Not for the first half of a split object: its state now lies outside its
        // region, where a list's clipped boxes are not exact.)
        let list = at.and_then(|p| lists.get(p)).filter(|l| holds(&l.fat, &c.region));
        // A list is kept only where its fat box has a grid.
        match list.and_then(|l| Some((l, Grid::new(&l.fat)?))) {
            Some((l, grid)) => {
                for e in lists.entries(l) {
                    c.meet_listed(e, &grid, f, old, new);
                }
            }
            None => {
                let fat = at.map(|_| fat(&c.is.aabb, f.margin));
                // A fat box near the ends of f32's range has no grid, and keeps no list.
                let grid = fat.and_then(|fb| Grid::new(&fb));
                let q = fat.map_or(c.region, |fb| c.region.union(&fb));
                let start = part.static_entries.len();
                let entries = &mut part.static_entries;
                let _ = self.statics.query(&q, |y, _, leaf| {
                    // The leaf is the box grown by the tree margin: the pair test's box
                    // only where the margin is not negative.
                    let g = if f.margin < 0.0 { f.store.boxes[y as usize].grown(f.margin) } else { *leaf };
                    c.meet(y, &g, Kind::Static, f, old, new);
                    if let (Some(fb), Some(grid)) = (fat, grid)
                        && fb.overlaps(&g)
                        && !g.is_inverted()
                    {
                        entries.push(grid.encode(y, &g));
                    }
                    ControlFlow::Continue(())
                });
                if let (Some(p), Some(fb), Some(_)) = (at, fat, grid) {
                    part.static_made.push((p, start as u32, (part.static_entries.len() - start) as u32, fb));
                }
            }
        }
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
