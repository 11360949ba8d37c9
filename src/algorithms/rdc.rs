//! Recursive Dimensional Clustering (RDC): split boxes into groups that no axis separates,
//! then find the overlapping pairs inside each group.
//!
//! - Input: boxes (validated at the boundary), [`Rdc`] settings. Output: [`Clusters`]
//!   (groups in a canonical order: members ascending, groups by smallest member) or the
//!   overlapping pairs, sorted and unique (the contract of [`find_pairs`](crate::find_pairs)).
//! - Method: a cluster is sorted by lower bound on one axis; a sweep keeping the running
//!   maximum of the upper bounds cuts it wherever the next box starts strictly after every
//!   box so far has ended (so touching boxes stay together: closed semantics). No box of one
//!   piece overlaps a box of another on that axis, so no overlapping pair is ever separated.
//!   Each piece is analysed again on the *other* axes, per cluster (the chapter's code
//!   instead keeps one global `divided` flag and alternates axes globally). A cluster is
//!   final when it has at most `min_group_size` members or when the last `D` axes tried in
//!   a row left it whole; a piece counts its split axis as tried (it is one connected run
//!   on that axis), so every step either shrinks a cluster or advances a counter bounded
//!   by `D`: termination is guaranteed.
//! - Keys: `flip(min + 0.0) << 32 | position` in a `u64` (layout beside `Kernel::split`),
//!   sorted on bits 32..64 with the crate's stable radix sort (`sort_unstable` below
//!   `SORT_SMALL` keys: the position makes keys unique, so the order is the same). Only
//!   lower bounds are sorted: the running maximum stands in for the chapter's close
//!   boundaries (see `docs/rdc.md`).
//! - Final groups: up to `DIRECT_MAX` members tested pair by pair; below `SWEEP_SIMD`
//!   a scalar sweep along the axis the group is already sorted on; above, the crate's SIMD
//!   [`crate::algorithms::sap`] (row chunks in parallel from `PAR_GROUP` members). So one
//!   huge group that no axis splits (everything overlapping) costs `D` sorts plus one
//!   sweep, never a quadratic recursion or a brute-force pass.
//! - Cost: linear radix sorts per level, a few levels on scenes with gaps. The known
//!   worst case is a staircase that peels one box per split: O(n^2) sorting work with tiny
//!   output (tested: terminates, no deep recursion, since the driver keeps an explicit
//!   stack). Dense scenes whose projections have no gap do not split at all and cost `D`
//!   sorts plus a sweep-and-prune.
//! - Parallel: clusters of at least `PAR_CLUSTER` members become rayon tasks of one
//!   `rayon::scope`; a split of at least `PAR_KEYS` members builds its keys, gathers its
//!   records and radix sorts in parallel. The split of a cluster depends only on its
//!   members, so the clusters and pairs are the same for any thread count. The sequential
//!   driver (crowded column runs, [`refine_run`]) and the parallel one (public API) are
//!   thin twins around one kernel ([`Kernel::drive`]); a unit test shows they agree.
//! - Allocation: one record `(box + margin, index)` per live box, permuted in place (every
//!   cluster is a contiguous slice of it), per task a key buffer, radix scratch and a gather
//!   buffer as big as its largest cluster, the pair keys and the output.
//! - Source: S. Rabin, "Recursive Dimensional Clustering: A Fast Algorithm for Collision
//!   Detection", Game Programming Gems 2 (2001); the per-cluster axis counter, the
//!   running-maximum cut and the final-group sweeps are this crate's.

use crate::algorithms::sap::{self, Sorted};
use crate::par::prelude::*;
use crate::{Aabb, Error};
use std::sync::Mutex;

/// Clusters with at least this many members are handed to their own rayon task.
const PAR_CLUSTER: usize = 2048;
/// Splits of at least this many members build and write back their keys in parallel (the
/// radix sort itself goes parallel at the same size).
const PAR_KEYS: usize = 1 << 15;
/// Clusters with fewer members are sorted with `sort_unstable` (the radix sort's own
/// small-input path sorts by a masked wide key, slower at this size).
const SORT_SMALL: usize = 256;
/// Final groups with at most this many members are tested pair by pair.
pub(crate) const DIRECT_MAX: usize = 16;
/// Final groups with fewer members, already sorted on some axis, are swept along it by a
/// scalar loop; bigger ones are copied into a [`Sorted`] and swept 8 boxes at a time.
const SWEEP_SIMD: usize = 256;
/// Final groups with at least this many members are swept in parallel row chunks.
pub(crate) const PAR_GROUP: usize = 4096;
/// Rows per chunk of the parallel group sweep.
const GROUP_ROWS: usize = 512;

/// Recursive Dimensional Clustering settings; [`Rdc::clusters`] and [`Rdc::pairs`] run it.
///
/// ```
/// use broadphase::{Aabb2, Rdc};
/// let boxes = [
///     Aabb2::new([0.0, 0.0], [1.0, 1.0]),
///     Aabb2::new([1.0, 0.5], [2.0, 2.0]), // touches box 0
///     Aabb2::new([5.0, 5.0], [6.0, 6.0]),
/// ];
/// let rdc = Rdc { min_group_size: 1, ..Rdc::default() };
/// let c = rdc.clusters(&boxes).unwrap();
/// assert_eq!(c.iter().collect::<Vec<_>>(), vec![&[0, 1][..], &[2][..]]);
/// assert_eq!(rdc.pairs(&boxes).unwrap(), vec![[0, 1]]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rdc<const D: usize> {
    /// A cluster with at most this many members is not subdivided further (the chapter's
    /// "blend between brute force and RDC"). `1` gives the finest clusters. At least 1.
    pub min_group_size: usize,
    /// Grows every box by this much on every side (shrinks when negative, so touching boxes
    /// separate): the chapter's threshold with the sign flipped, the meaning of
    /// [`Config::margin`](crate::Config::margin). A box that a negative margin turns inside
    /// out is a group of its own and in no pair. Finite.
    pub margin: f32,
    /// The axes in the order they are tried; after a split each piece goes on with the axis
    /// after the one that split it. A permutation of `0..D`.
    pub axis_order: [usize; D],
}

impl<const D: usize> Default for Rdc<D> {
    /// `min_group_size` 64 (PERF: `benches/rdc.rs`, the `BP_TUNE=1` sweep), margin 0, axes
    /// `0, 1, ..`.
    fn default() -> Self {
        Self { min_group_size: 64, margin: 0.0, axis_order: std::array::from_fn(|k| k) }
    }
}

/// The final groups of a clustering, compressed: group `g` is
/// `members[offsets[g]..offsets[g + 1]]`.
///
/// INVARIANT (checked by [`Clusters::validate`]): every box is in exactly one group;
/// members ascend inside a group; groups are ordered by their smallest member; every
/// overlapping pair lies inside one group. A group need not be connected: RDC separates
/// boxes only where an axis has a gap, so with `min_group_size = 1` a group is a union of
/// overlap-connected components that no axis separates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Clusters {
    /// `len() + 1` ascending offsets into `members`, starting at 0.
    pub offsets: Vec<u32>,
    /// Box indices, group after group.
    pub members: Vec<u32>,
    /// `group_of[i]`: the group holding box `i`.
    pub group_of: Vec<u32>,
}

impl Clusters {
    /// Number of groups.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// True when there are no groups (no boxes).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The members of group `g`, ascending.
    pub fn group(&self, g: usize) -> &[u32] {
        &self.members[self.offsets[g] as usize..self.offsets[g + 1] as usize]
    }

    /// The groups in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        (0..self.len()).map(move |g| self.group(g))
    }

    /// Checks the structural invariants (not the geometric ones, which need the boxes):
    /// every box in exactly one group, groups non-empty, members ascending, groups ordered
    /// by their smallest member. A failure is [`Error::Invariant`].
    pub fn validate(&self) -> Result<(), Error> {
        self.check().map_err(|detail| Error::Invariant { detail })
    }

    fn check(&self) -> Result<(), String> {
        let n = self.group_of.len();
        if self.members.len() != n {
            return Err(format!("{} members for {n} boxes", self.members.len()));
        }
        if self.offsets.first() != Some(&0) || *self.offsets.last().unwrap() as usize != n {
            return Err("offsets must run from 0 to the number of boxes".into());
        }
        if self.offsets.windows(2).any(|w| w[0] >= w[1]) {
            return Err("offsets must strictly ascend (no empty group)".into());
        }
        let mut seen = vec![false; n];
        let mut prev_first = None;
        for (g, m) in self.iter().enumerate() {
            if m.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!("group {g}: members not ascending"));
            }
            if prev_first.is_some_and(|p| p >= m[0]) {
                return Err(format!("group {g}: not ordered by smallest member"));
            }
            prev_first = Some(m[0]);
            for &i in m {
                let i = i as usize;
                if i >= n || seen[i] {
                    return Err(format!("box {i} out of range or in two groups"));
                }
                seen[i] = true;
                if self.group_of[i] as usize != g {
                    return Err(format!("group_of[{i}] = {}, but it is in group {g}", self.group_of[i]));
                }
            }
        }
        Ok(())
    }
}

impl<const D: usize> Rdc<D> {
    /// Checks every field (and `D` in 1..=3); called by every entry point.
    pub fn validate(&self) -> Result<(), Error> {
        if D == 0 || D > 3 {
            return Err(Error::InvalidConfig {
                field: "D",
                reason: "only 1, 2 and 3 dimensions are supported",
            });
        }
        if self.min_group_size == 0 {
            return Err(Error::InvalidConfig { field: "min_group_size", reason: "must be at least 1" });
        }
        if !self.margin.is_finite() {
            return Err(Error::InvalidConfig { field: "margin", reason: "must be finite" });
        }
        let mut seen = [false; D];
        for &a in &self.axis_order {
            if a >= D || std::mem::replace(&mut seen[a], true) {
                return Err(Error::InvalidConfig {
                    field: "axis_order",
                    reason: "must be a permutation of 0..D",
                });
            }
        }
        Ok(())
    }

    /// The final groups of every box (see [`Clusters`]); deterministic for any thread count.
    pub fn clusters(&self, boxes: &[Aabb<D>]) -> Result<Clusters, Error> {
        let (mut recs, dead) = self.prepare(boxes)?;
        let parts = self.kernel().run_parallel(&mut recs, false);
        Ok(assemble(boxes.len(), &recs, parts, &dead))
    }

    /// Every pair `[i, j]`, `i < j`, of overlapping boxes (grown by `margin`), sorted and
    /// unique: the same contract and output as [`find_pairs`](crate::find_pairs).
    pub fn pairs(&self, boxes: &[Aabb<D>]) -> Result<Vec<[u32; 2]>, Error> {
        let (mut recs, _) = self.prepare(boxes)?;
        let parts = self.kernel().run_parallel(&mut recs, true);
        let keys: Vec<Vec<u64>> = parts.into_iter().flat_map(|p| p.keys).collect();
        Ok(crate::kernels::pair_sort::finish(keys, boxes.len()))
    }

    fn kernel(&self) -> Kernel<D> {
        Kernel { min_group: self.min_group_size, axes: self.axis_order }
    }

    /// Validates, grows the boxes by the margin and sorts out the inverted ones: returns
    /// the live boxes as records in input order, and the dead indices (ascending).
    fn prepare(&self, boxes: &[Aabb<D>]) -> Result<(Vec<Rec<D>>, Vec<u32>), Error> {
        self.validate()?;
        crate::validate::check_boxes(boxes)?;
        let m = self.margin;
        let rec = |(i, b): (usize, &Aabb<D>)| Rec { b: b.grown(m), id: i as u32 };
        let mut recs: Vec<Rec<D>> = Vec::new();
        boxes.par_iter().with_min_len(4096).enumerate().map(rec).collect_into_vec(&mut recs);
        if m >= 0.0 {
            // Valid boxes have min <= max, and growing keeps it so: nothing is dead.
            return Ok((recs, Vec::new()));
        }
        let dead = recs.iter().filter(|r| r.b.is_inverted()).map(|r| r.id).collect();
        recs.retain(|r| !r.b.is_inverted());
        Ok((recs, dead))
    }
}

/// A box (margin applied, valid) with its index: what RDC sorts and splits. Records move
/// with their cluster, so every level reads its cluster contiguously. Indices into the
/// input are not used: the split scan and the group tests would miss the cache on their
/// box loads. PERF: `benches/rdc.rs` (islands 100k).
#[derive(Clone, Copy, Debug)]
struct Rec<const D: usize> {
    b: Aabb<D>,
    id: u32,
}

/// One cluster waiting to be analysed.
struct Item<'m, const D: usize> {
    /// Its members: a disjoint piece of the record buffer, permuted in place.
    recs: &'m mut [Rec<D>],
    /// Where that piece starts in the buffer (so groups can be put back in buffer order).
    at: usize,
    /// Position in `axis_order` of the axis to try next.
    next: usize,
    /// Axes tried in a row on exactly these members without splitting them.
    /// INVARIANT: `tried == D` means no axis splits the cluster.
    tried: usize,
    /// The axis `recs` are sorted on by lower bound, if any (every cluster but the first
    /// is: it is a piece of a sorted slice, or was just sorted and left whole).
    sorted_on: Option<usize>,
}

/// Working memory of one task: sort keys, radix scratch, gathered records, cut positions.
struct Scratch<const D: usize> {
    keys: Vec<u64>,
    tmp: Vec<u64>,
    gather: Vec<Rec<D>>,
    cuts: Vec<usize>,
}

impl<const D: usize> Default for Scratch<D> {
    fn default() -> Self {
        Self { keys: Vec::new(), tmp: Vec::new(), gather: Vec::new(), cuts: Vec::new() }
    }
}

/// What one parallel task found: its final groups as `(at, len)` buffer ranges, the pair
/// keys of those groups, and how many clusters it split.
#[derive(Default)]
struct Part {
    groups: Vec<(usize, usize)>,
    keys: Vec<Vec<u64>>,
    splits: usize,
}

/// The settings as the kernel sees them.
struct Kernel<const D: usize> {
    min_group: usize,
    axes: [usize; D],
}

impl<const D: usize> Kernel<D> {
    /// Sorts `r` by lower bound on `axis` and fills `s.cuts` with the positions where a new
    /// piece starts (empty: the axis does not split `r`). `r` is not empty.
    fn split(&self, r: &mut [Rec<D>], axis: usize, s: &mut Scratch<D>) {
        let big = r.len() >= PAR_KEYS;
        // Key layout (u64): [ flip(min) : 32 ][ position in `r` : 32 ]. `+ 0.0` turns -0.0
        // into +0.0, which `flip` would otherwise order below +0.0 although they are equal.
        let key = |(i, x): (usize, &Rec<D>)| (sap::flip(x.b.min[axis] + 0.0) as u64) << 32 | i as u64;
        if big {
            r.par_iter().enumerate().map(key).collect_into_vec(&mut s.keys);
        } else {
            s.keys.clear();
            s.keys.extend(r.iter().enumerate().map(key));
        }
        if r.len() < SORT_SMALL {
            // PERF: keys are unique (the position is in them), so an unstable sort of whole
            // keys gives exactly the order of the stable radix sort.
            s.keys.sort_unstable();
        } else {
            crate::kernels::radix_sort::sort(&mut s.keys, &mut s.tmp, 32..64);
        }
        let src = &*r;
        if big {
            s.keys.par_iter().map(|&k| src[k as u32 as usize]).collect_into_vec(&mut s.gather);
            r.par_chunks_mut(1 << 14)
                .zip(s.gather.par_chunks(1 << 14))
                .for_each(|(d, g)| d.copy_from_slice(g));
        } else {
            s.gather.clear();
            s.gather.extend(s.keys.iter().map(|&k| src[k as u32 as usize]));
            r.copy_from_slice(&s.gather);
        }
        // Cut where the next box starts strictly after the reach (running maximum of the
        // upper bounds): equal to the chapter's open/close count returning to zero with opens
        // sorted before closes at equal positions.
        s.cuts.clear();
        let mut reach = r[0].b.max[axis];
        for (i, x) in r.iter().enumerate().skip(1) {
            if x.b.min[axis] > reach {
                s.cuts.push(i);
            }
            reach = reach.max(x.b.max[axis]);
        }
    }

    /// The kernel: analyses `first` and every piece it splits into, until each is final.
    /// `hand_off` may take a piece away (to run it elsewhere) by returning `None`;
    /// `on_final(recs, at, sorted_on)` receives each final group. Adds one to `splits` per
    /// cluster split. Iterative (explicit stack): a deep peeling recursion cannot overflow.
    fn drive<'m>(
        &self,
        first: Item<'m, D>,
        s: &mut Scratch<D>,
        splits: &mut usize,
        mut hand_off: impl FnMut(Item<'m, D>) -> Option<Item<'m, D>>,
        mut on_final: impl FnMut(&'m [Rec<D>], usize, Option<usize>),
    ) {
        let mut stack = vec![first];
        while let Some(mut it) = stack.pop() {
            loop {
                if it.recs.len() <= self.min_group || it.tried >= D {
                    on_final(it.recs, it.at, it.sorted_on);
                    break;
                }
                let axis = self.axes[it.next];
                it.next = (it.next + 1) % D;
                self.split(it.recs, axis, s);
                it.sorted_on = Some(axis);
                if s.cuts.is_empty() {
                    it.tried += 1;
                    continue;
                }
                *splits += 1;
                // Each piece is one connected run on `axis`, so `axis` counts as tried.
                let (mut rest, mut at, mut prev) = (it.recs, it.at, 0);
                let len = rest.len();
                for c in s.cuts.iter().copied().chain([len]) {
                    let (head, tail) = std::mem::take(&mut rest).split_at_mut(c - prev);
                    let piece = Item { recs: head, at, next: it.next, tried: 1, sorted_on: Some(axis) };
                    if let Some(p) = hand_off(piece) {
                        stack.push(p);
                    }
                    (rest, at, prev) = (tail, at + c - prev, c);
                }
                break;
            }
        }
    }

    /// The parallel driver: clusters of at least `PAR_CLUSTER` members become tasks of one
    /// `rayon::scope` (spawned, not joined, so no stack grows with the recursion).
    fn run_parallel(&self, recs: &mut [Rec<D>], want_pairs: bool) -> Vec<Part> {
        let parts = Mutex::new(Vec::new());
        if !recs.is_empty() {
            let first = Item { recs, at: 0, next: 0, tried: 0, sorted_on: None };
            crate::par::scope(|sc| self.task(sc, first, want_pairs, &parts));
        }
        parts.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// One task of [`Kernel::run_parallel`].
    fn task<'s>(
        &'s self,
        sc: &crate::par::Scope<'s>,
        first: Item<'s, D>,
        want_pairs: bool,
        parts: &'s Mutex<Vec<Part>>,
    ) {
        let mut s = Scratch::default();
        let mut sweep = GroupSweep::default();
        let mut part = Part::default();
        let mut keys = Vec::new();
        let hand_off = |it: Item<'s, D>| {
            if it.recs.len() >= PAR_CLUSTER {
                sc.spawn(move |sc| self.task(sc, it, want_pairs, parts));
                None
            } else {
                Some(it)
            }
        };
        let on_final = |g: &'s [Rec<D>], at: usize, sorted_on: Option<usize>| {
            part.groups.push((at, g.len()));
            if !want_pairs {
                return;
            }
            if g.len() >= PAR_GROUP {
                part.keys.extend(par_group_pairs(g));
            } else {
                let emit = |a, b| keys.push(crate::kernels::pair_sort::key(a, b));
                group_pairs(g, sorted_on, u32::MAX, &mut sweep, emit);
            }
        };
        self.drive(first, &mut s, &mut part.splits, hand_off, on_final);
        part.keys.push(keys);
        parts.lock().unwrap_or_else(|e| e.into_inner()).push(part);
    }
}

/// Working memory for sweeping a final group: its members below the run limit and the
/// others, as sorted SIMD sets (big groups) and as records (small sorted groups).
struct GroupSweep<const D: usize> {
    run: Sorted<D>,
    range: Sorted<D>,
    runs: Vec<Rec<D>>,
    ranges: Vec<Rec<D>>,
}

impl<const D: usize> Default for GroupSweep<D> {
    fn default() -> Self {
        Self { run: Sorted::default(), range: Sorted::default(), runs: Vec::new(), ranges: Vec::new() }
    }
}

/// Offers every overlapping pair of final group `g` with at least one id below `run` to
/// `emit`, once (`run = u32::MAX`: every pair). `sorted_on`: the axis `g` is sorted on by
/// lower bound, if any. Returns the number of box tests.
fn group_pairs<const D: usize>(
    g: &[Rec<D>],
    sorted_on: Option<usize>,
    run: u32,
    sets: &mut GroupSweep<D>,
    mut emit: impl FnMut(u32, u32),
) -> usize {
    let mut tests = 0;
    if g.len() <= DIRECT_MAX {
        for (i, x) in g.iter().enumerate() {
            for y in &g[i + 1..] {
                if x.id < run || y.id < run {
                    tests += 1;
                    if x.b.overlaps(&y.b) {
                        emit(x.id, y.id);
                    }
                }
            }
        }
        return tests;
    }
    if let (true, Some(a)) = (g.len() < SWEEP_SIMD, sorted_on) {
        // PERF: the group is already sorted on axis `a` (the last one RDC tried), so a
        // scalar sweep along it needs no sort. Range members are split off first, so that
        // range x range candidates (not wanted) cost nothing.
        sets.runs.clear();
        sets.ranges.clear();
        for x in g {
            if x.id < run {
                sets.runs.push(*x);
            } else {
                sets.ranges.push(*x);
            }
        }
        let (rs, gs) = (&sets.runs[..], &sets.ranges[..]);
        for (i, x) in rs.iter().enumerate() {
            tests += scan_scalar(x, &rs[i + 1..], a, |y| emit(x.id, y.id));
        }
        let (mut i, mut j) = (0, 0);
        while i < rs.len() && j < gs.len() {
            // The box that starts first scans the other list from its cursor on.
            if rs[i].b.min[a] < gs[j].b.min[a] {
                tests += scan_scalar(&rs[i], &gs[j..], a, |y| emit(rs[i].id, y.id));
                i += 1;
            } else {
                tests += scan_scalar(&gs[j], &rs[i..], a, |y| emit(y.id, gs[j].id));
                j += 1;
            }
        }
        return tests;
    }
    sets.run.clear();
    sets.range.clear();
    for x in g {
        let set = if x.id < run { &mut sets.run } else { &mut sets.range };
        set.push(x.b, x.id);
    }
    sets.run.sort();
    sets.range.sort();
    let (rs, gs) = (&sets.run, &sets.range);
    tests += sap::complete(rs, 0..rs.len(), |i, j| emit(rs.payload[i], rs.payload[j]));
    if !gs.is_empty() {
        tests += sap::bipartite(rs, gs, |i, j| emit(rs.payload[i], gs.payload[j]));
    }
    tests
}

/// Tests `x` against `ys` (sorted on axis `a`, none starting before `x`) while they start
/// no later than `x` ends (closed); calls `emit(y)` on overlap. Returns the boxes tested.
#[inline]
fn scan_scalar<const D: usize>(x: &Rec<D>, ys: &[Rec<D>], a: usize, mut emit: impl FnMut(&Rec<D>)) -> usize {
    let mut tests = 0;
    for y in ys {
        if y.b.min[a] > x.b.max[a] {
            break;
        }
        tests += 1;
        if x.b.overlaps(&y.b) {
            emit(y);
        }
    }
    tests
}

/// Every overlapping pair of a big final group as pair keys, swept in parallel row chunks
/// (the everything-overlaps case: one group holding the whole input).
fn par_group_pairs<const D: usize>(g: &[Rec<D>]) -> Vec<Vec<u64>> {
    let mut s = Sorted::default();
    for x in g {
        s.push(x.b, x.id);
    }
    s.sort();
    let n = s.len();
    (0..n.div_ceil(GROUP_ROWS))
        .into_par_iter()
        .map(|c| {
            let mut out = Vec::new();
            sap::complete(&s, c * GROUP_ROWS..((c + 1) * GROUP_ROWS).min(n), |i, j| {
                out.push(crate::kernels::pair_sort::key(s.payload[i], s.payload[j]));
            });
            out
        })
        .collect()
}

/// Builds the canonical [`Clusters`] from the permuted records, the tasks' group ranges,
/// and the dead (inverted) boxes, each a group of its own.
fn assemble<const D: usize>(n: usize, recs: &[Rec<D>], parts: Vec<Part>, dead: &[u32]) -> Clusters {
    let mut ranges: Vec<(usize, usize)> = parts.into_iter().flat_map(|p| p.groups).collect();
    ranges.sort_unstable();
    // INVARIANT: the final groups tile the record buffer.
    debug_assert!(ranges.iter().try_fold(0, |at, &(a, l)| (a == at).then_some(a + l)) == Some(recs.len()));
    let mut ids: Vec<u32> = Vec::new();
    recs.par_iter().with_min_len(4096).map(|r| r.id).collect_into_vec(&mut ids);
    let mut slices = Vec::with_capacity(ranges.len());
    let mut rest = &mut ids[..];
    for &(_, len) in &ranges {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
        slices.push(head);
        rest = tail;
    }
    slices.par_iter_mut().with_min_len(256).for_each(|g| g.sort_unstable());
    // Groups by smallest member; a dead box is a group of its own.
    let mut order: Vec<(u32, &[u32])> = slices.iter().map(|g| (g[0], &**g)).collect();
    order.extend(dead.iter().map(|d| (*d, std::slice::from_ref(d))));
    order.par_sort_unstable_by_key(|&(first, _)| first);
    let mut c = Clusters {
        offsets: Vec::with_capacity(order.len() + 1),
        members: Vec::with_capacity(n),
        group_of: vec![0; n],
    };
    c.offsets.push(0);
    for (g, (_, m)) in order.iter().enumerate() {
        c.members.extend_from_slice(m);
        for &i in *m {
            c.group_of[i as usize] = g as u32;
        }
        c.offsets.push(c.members.len() as u32);
    }
    debug_assert_eq!(c.validate(), Ok(()));
    c
}

/// RDC as the refinement of one crowded run of the column sweep
/// ([`Refine::Rdc`](crate::Refine::Rdc)): clusters
/// `boxes` (valid, margin already applied) with the default settings and offers every
/// overlapping pair `(x, y)`, `x < y`, with `x < run` (at least one run entry; positions in
/// `boxes`) once to `offer`. Returns `(clusters split, box tests)`. Sequential: the column
/// sweep is parallel over its chunks already.
pub(crate) fn refine_run<const D: usize>(
    boxes: impl Iterator<Item = Aabb<D>>,
    run: usize,
    mut offer: impl FnMut(usize, usize),
) -> (usize, usize) {
    let mut recs: Vec<Rec<D>> = boxes.enumerate().map(|(i, b)| Rec { b, id: i as u32 }).collect();
    if recs.is_empty() {
        return (0, 0);
    }
    let kernel = Rdc::<D>::default().kernel();
    let (mut s, mut sets, mut splits, mut tests) = (Scratch::default(), GroupSweep::default(), 0, 0);
    let first = Item { recs: &mut recs, at: 0, next: 0, tried: 0, sorted_on: None };
    kernel.drive(first, &mut s, &mut splits, Some, |g, _, sorted_on| {
        tests += group_pairs(g, sorted_on, run as u32, &mut sets, |x, y| {
            offer(x.min(y) as usize, x.max(y) as usize);
        });
    });
    (splits, tests)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sequential twin (one stack, no hand-off) finds the same groups as the parallel one.
    #[test]
    fn sequential_and_parallel_drivers_agree() {
        let mut s = 0x1234_5678u64;
        let mut r = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32
        };
        // Eight clumps apart on x (tasks of their own), each sparse on y (many groups).
        let boxes: Vec<Aabb<2>> = (0..24_000)
            .map(|i| {
                let (x, y) = ((i % 8) as f32 * 1000.0 + r() * 500.0, r() * 100_000.0);
                Aabb::new([x, y], [x + 4.0 * r(), y + 4.0 * r()])
            })
            .collect();
        let k = Kernel { min_group: 4, axes: [0, 1] };
        let mut a: Vec<Rec<2>> = boxes.iter().enumerate().map(|(i, &b)| Rec { b, id: i as u32 }).collect();
        let mut b = a.clone();
        let mut par: Vec<(usize, usize)> =
            k.run_parallel(&mut a, false).into_iter().flat_map(|p| p.groups).collect();
        par.sort_unstable();
        let mut seq = Vec::new();
        let first = Item { recs: &mut b, at: 0, next: 0, tried: 0, sorted_on: None };
        k.drive(first, &mut Scratch::default(), &mut 0, Some, |g, at, _| seq.push((at, g.len())));
        seq.sort_unstable();
        assert_eq!(par, seq);
        assert!(a.iter().zip(&b).all(|(x, y)| x.id == y.id), "same permutation");
        assert!(par.len() > 1000, "the scene should split: {} groups", par.len());
    }
}
