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
//!   Each piece is analysed again on the *other* axes, per cluster (the seeds instead keep
//!   one global `divided` flag and alternate axes globally). A cluster is final when it has
//!   at most `min_group_size` members or when the last `D` axes tried in a row left it
//!   whole; a piece counts its split axis as tried (it is one connected run on that axis),
//!   so every step either shrinks a cluster or advances a counter bounded by `D`:
//!   termination is guaranteed.
//! - Keys: `flip(min + 0.0) << 32 | id` in a `u64` (bit layout beside [`Kernel::split`]),
//!   sorted on bits 32..64 with the crate's stable radix sort. Only lower bounds are sorted:
//!   the running maximum stands in for the seeds' close boundaries (see `docs/rdc.md`).
//! - Final groups: up to [`DIRECT_MAX`] members tested pair by pair, larger ones swept
//!   with [`crate::sap`] (row chunks in parallel from [`PAR_GROUP`] members), so one huge
//!   group that no axis splits (everything overlapping) costs `D` sorts plus one sweep,
//!   never a quadratic recursion or a brute-force pass.
//! - Complexity: O(n log n)-like per level (radix sorts are linear in the members), a few
//!   levels on scenes with gaps; the known worst case is a staircase that peels one box per
//!   split, O(n^2) sorting work with tiny output (tested, terminates, no deep recursion:
//!   the driver keeps an explicit stack). Dense scenes whose projections have no gaps do
//!   not split at all and cost `D` sorts plus a sweep-and-prune.
//! - Parallel: clusters of at least [`PAR_CLUSTER`] members become rayon tasks of one
//!   `rayon::scope`; a big first split builds its keys and radix sorts in parallel. The
//!   split of a cluster depends only on its members, so the clusters and pairs are the
//!   same for any thread count. Sequential driver (crowded cells) and parallel driver
//!   (public API) are thin twins around one kernel ([`Kernel::drive`]).
//! - Allocates: the grown boxes (only when `margin != 0`), the member buffer (permuted in
//!   place: every cluster is a contiguous slice of it), per task two key buffers, the pair
//!   keys and the output.
//! - Idea: S. Rabin, "Recursive Dimensional Clustering: A Fast Algorithm for Collision
//!   Detection", Game Programming Gems 2 (2001); the seeds' Python/JavaScript/ActionScript
//!   ports (`../shared/seeds/`).

use crate::sap::{self, Sorted};
use crate::{Aabb, Error};
use rayon::prelude::*;
use std::borrow::Cow;
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
    /// A cluster with at most this many members is not subdivided further (the seeds'
    /// "blend between brute force and RDC"). `1` gives the finest clusters. At least 1.
    pub min_group_size: usize,
    /// Grows every box by this much on every side (shrinks when negative, so touching boxes
    /// separate): the seeds' threshold with the sign flipped, the meaning of
    /// [`Config::margin`](crate::Config::margin). A box that a negative margin turns inside
    /// out is a group of its own and in no pair. Finite.
    pub margin: f32,
    /// The axes in the order they are tried; after a split each piece goes on with the axis
    /// after the one that split it. A permutation of `0..D`.
    pub axis_order: [usize; D],
}

impl<const D: usize> Default for Rdc<D> {
    /// `min_group_size` 16 (PERF: `docs/rdc.md`, "Measured"), margin 0, axes `0, 1, ..`.
    fn default() -> Self {
        Self { min_group_size: 16, margin: 0.0, axis_order: std::array::from_fn(|k| k) }
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

    /// Checks the structural invariants (not the geometric ones, which need the boxes).
    pub fn validate(&self) -> Result<(), String> {
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
            return Err(Error::InvalidConfig { field: "D", reason: "only 1, 2 and 3 dimensions are supported" });
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
                return Err(Error::InvalidConfig { field: "axis_order", reason: "must be a permutation of 0..D" });
            }
        }
        Ok(())
    }

    /// The final groups of every box (see [`Clusters`]); deterministic for any thread count.
    pub fn clusters(&self, boxes: &[Aabb<D>]) -> Result<Clusters, Error> {
        let (grown, mut live, dead) = self.prepare(boxes)?;
        let kernel = Kernel { boxes: &grown, min_group: self.min_group_size, axes: self.axis_order };
        let parts = kernel.run_parallel(&mut live, false);
        Ok(assemble(boxes.len(), &mut live, parts, &dead))
    }

    /// Every pair `[i, j]`, `i < j`, of overlapping boxes (grown by `margin`), sorted and
    /// unique: the same contract and output as [`find_pairs`](crate::find_pairs).
    pub fn pairs(&self, boxes: &[Aabb<D>]) -> Result<Vec<[u32; 2]>, Error> {
        let (grown, mut live, _) = self.prepare(boxes)?;
        let kernel = Kernel { boxes: &grown, min_group: self.min_group_size, axes: self.axis_order };
        let parts = kernel.run_parallel(&mut live, true);
        let keys: Vec<Vec<u64>> = parts.into_iter().flat_map(|p| p.keys).collect();
        Ok(crate::pairs::finish(keys, &mut Vec::new(), &mut Vec::new()))
    }

    /// Validates, grows the boxes by the margin and sorts out the inverted ones: returns
    /// the boxes to cluster, the live indices (ascending) and the dead ones (ascending).
    #[allow(clippy::type_complexity)]
    fn prepare<'b>(&self, boxes: &'b [Aabb<D>]) -> Result<(Cow<'b, [Aabb<D>]>, Vec<u32>, Vec<u32>), Error> {
        self.validate()?;
        crate::validate::check_boxes(boxes)?;
        let n = boxes.len() as u32;
        if self.margin == 0.0 {
            // Valid boxes have min <= max: none is inverted, nothing to copy.
            return Ok((Cow::Borrowed(boxes), (0..n).collect(), Vec::new()));
        }
        let m = self.margin;
        let grown: Vec<Aabb<D>> = boxes.par_iter().with_min_len(4096).map(|b| b.grown(m)).collect();
        let (live, dead): (Vec<u32>, Vec<u32>) =
            (0..n).into_par_iter().with_min_len(4096).partition(|&i| !grown[i as usize].is_inverted());
        Ok((Cow::Owned(grown), live, dead))
    }
}

/// One cluster waiting to be analysed.
struct Item<'m> {
    /// Its members: a disjoint piece of the member buffer, permuted in place.
    members: &'m mut [u32],
    /// Where that piece starts in the buffer (so groups can be put back in buffer order).
    at: usize,
    /// Position in `axis_order` of the axis to try next.
    next: usize,
    /// Axes tried in a row on exactly these members without splitting them.
    /// INVARIANT: `tried == D` means no axis splits the cluster.
    tried: usize,
}

/// Working memory of one task: sort keys, radix scratch, cut positions.
#[derive(Default)]
struct Scratch {
    keys: Vec<u64>,
    tmp: Vec<u64>,
    cuts: Vec<usize>,
}

/// What one parallel task found: its final groups as `(at, len)` buffer ranges, the pair
/// keys of those groups, and how many clusters it split.
#[derive(Default)]
struct Part {
    groups: Vec<(usize, usize)>,
    keys: Vec<Vec<u64>>,
    splits: usize,
}

/// The problem as the kernel sees it: boxes to cluster (grown, valid) and the settings.
struct Kernel<'b, const D: usize> {
    boxes: &'b [Aabb<D>],
    min_group: usize,
    axes: [usize; D],
}

impl<'b, const D: usize> Kernel<'b, D> {
    /// Sorts `m` by lower bound on `axis` and fills `s.cuts` with the positions where a new
    /// piece starts (empty: the axis does not split `m`). `m` is not empty.
    fn split(&self, m: &mut [u32], axis: usize, s: &mut Scratch) {
        let b = self.boxes;
        // Key layout (u64): [ flip(min) : 32 ][ member id : 32 ]. `+ 0.0` turns -0.0 into
        // +0.0, which `flip` would otherwise order below +0.0 although they are equal.
        let key = |id: u32| (sap::flip(b[id as usize].min[axis] + 0.0) as u64) << 32 | id as u64;
        if m.len() >= PAR_KEYS {
            m.par_iter().map(|&id| key(id)).collect_into_vec(&mut s.keys);
        } else {
            s.keys.clear();
            s.keys.extend(m.iter().map(|&id| key(id)));
        }
        if m.len() < SORT_SMALL {
            // PERF: keys are unique (the id is in them), so an unstable sort of whole keys
            // gives the one order a stable sort by position would with ids breaking ties.
            s.keys.sort_unstable();
        } else {
            crate::radix_sort::sort(&mut s.keys, &mut s.tmp, 32..64);
        }
        if m.len() >= PAR_KEYS {
            m.par_iter_mut().zip(s.keys.par_iter()).for_each(|(d, &k)| *d = k as u32);
        } else {
            m.iter_mut().zip(&s.keys).for_each(|(d, &k)| *d = k as u32);
        }
        // Cut where the next box starts strictly after the reach (running maximum of the
        // upper bounds): equal to the seeds' open/close count returning to zero with opens
        // sorted before closes at equal positions.
        s.cuts.clear();
        let mut reach = b[m[0] as usize].max[axis];
        for (i, &id) in m.iter().enumerate().skip(1) {
            let bx = &b[id as usize];
            if bx.min[axis] > reach {
                s.cuts.push(i);
            }
            reach = reach.max(bx.max[axis]);
        }
    }

    /// The kernel: analyses `first` and every piece it splits into, until each is final.
    /// `hand_off` may take a piece away (to run it elsewhere) by returning `None`;
    /// `on_final(members, at)` receives each final group. Adds one to `splits` per cluster
    /// split. Iterative (explicit stack), so a deep peeling recursion cannot overflow.
    fn drive<'m>(
        &self,
        first: Item<'m>,
        s: &mut Scratch,
        splits: &mut usize,
        mut hand_off: impl FnMut(Item<'m>) -> Option<Item<'m>>,
        mut on_final: impl FnMut(&'m mut [u32], usize),
    ) {
        let mut stack = vec![first];
        while let Some(mut it) = stack.pop() {
            loop {
                if it.members.len() <= self.min_group || it.tried >= D {
                    on_final(it.members, it.at);
                    break;
                }
                let axis = self.axes[it.next];
                it.next = (it.next + 1) % D;
                self.split(it.members, axis, s);
                if s.cuts.is_empty() {
                    it.tried += 1;
                    continue;
                }
                *splits += 1;
                // Each piece is one connected run on `axis`, so `axis` counts as tried.
                let (mut rest, mut at, mut prev) = (it.members, it.at, 0);
                let len = rest.len();
                for c in s.cuts.iter().copied().chain([len]) {
                    let (head, tail) = std::mem::take(&mut rest).split_at_mut(c - prev);
                    let piece = Item { members: head, at, next: it.next, tried: 1 };
                    if let Some(p) = hand_off(piece) {
                        stack.push(p);
                    }
                    (rest, at, prev) = (tail, at + c - prev, c);
                }
                break;
            }
        }
    }

    /// The parallel driver: clusters of at least [`PAR_CLUSTER`] members become tasks of one
    /// `rayon::scope` (spawned, not joined, so no stack grows with the recursion).
    fn run_parallel(&self, members: &mut [u32], want_pairs: bool) -> Vec<Part> {
        let parts = Mutex::new(Vec::new());
        if !members.is_empty() {
            let first = Item { members, at: 0, next: 0, tried: 0 };
            rayon::scope(|sc| self.task(sc, first, want_pairs, &parts));
        }
        parts.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// One task of [`Kernel::run_parallel`].
    fn task<'s>(&'s self, sc: &rayon::Scope<'s>, first: Item<'s>, want_pairs: bool, parts: &'s Mutex<Vec<Part>>) {
        let mut s = Scratch::default();
        let mut sweep = GroupSweep::default();
        let mut part = Part::default();
        let mut keys = Vec::new();
        let boxes = self.boxes;
        let hand_off = |it: Item<'s>| {
            if it.members.len() >= PAR_CLUSTER {
                sc.spawn(move |sc| self.task(sc, it, want_pairs, parts));
                None
            } else {
                Some(it)
            }
        };
        let on_final = |m: &'s mut [u32], at: usize| {
            part.groups.push((at, m.len()));
            if !want_pairs {
                return;
            }
            if m.len() >= PAR_GROUP {
                part.keys.extend(par_group_pairs(boxes, m));
            } else {
                group_pairs(boxes, m, u32::MAX, &mut sweep, |a, b| keys.push(crate::pairs::key(a, b)));
            }
        };
        self.drive(first, &mut s, &mut part.splits, hand_off, on_final);
        part.keys.push(keys);
        parts.lock().unwrap_or_else(|e| e.into_inner()).push(part);
    }
}

/// Sorted sets for sweeping a final group: members below the run limit, and the others.
#[derive(Default)]
struct GroupSweep<const D: usize> {
    run: Sorted<D>,
    range: Sorted<D>,
}

/// Offers every overlapping pair of final group `m` with at least one member below `run`
/// to `emit`, once (`run = u32::MAX`: every pair). Returns the number of box tests.
fn group_pairs<const D: usize>(
    boxes: &[Aabb<D>],
    m: &[u32],
    run: u32,
    g: &mut GroupSweep<D>,
    mut emit: impl FnMut(u32, u32),
) -> usize {
    if m.len() <= DIRECT_MAX {
        let mut tests = 0;
        for (i, &x) in m.iter().enumerate() {
            let bx = &boxes[x as usize];
            for &y in &m[i + 1..] {
                if x < run || y < run {
                    tests += 1;
                    if bx.overlaps(&boxes[y as usize]) {
                        emit(x, y);
                    }
                }
            }
        }
        return tests;
    }
    g.run.clear();
    g.range.clear();
    for &x in m {
        let set = if x < run { &mut g.run } else { &mut g.range };
        set.push(boxes[x as usize], x);
    }
    g.run.sort();
    g.range.sort();
    let (rs, gs) = (&g.run, &g.range);
    let mut tests = sap::complete(rs, 0..rs.len(), |i, j| emit(rs.payload[i], rs.payload[j]));
    if !gs.is_empty() {
        tests += sap::bipartite(rs, gs, |i, j| emit(rs.payload[i], gs.payload[j]));
    }
    tests
}

/// Every overlapping pair of a big final group as pair keys, swept in parallel row chunks
/// (the everything-overlaps case: one group holding the whole input).
fn par_group_pairs<const D: usize>(boxes: &[Aabb<D>], m: &[u32]) -> Vec<Vec<u64>> {
    let mut s = Sorted::default();
    for &x in m {
        s.push(boxes[x as usize], x);
    }
    s.sort();
    let n = s.len();
    (0..n.div_ceil(GROUP_ROWS))
        .into_par_iter()
        .map(|c| {
            let mut out = Vec::new();
            sap::complete(&s, c * GROUP_ROWS..((c + 1) * GROUP_ROWS).min(n), |i, j| {
                out.push(crate::pairs::key(s.payload[i], s.payload[j]));
            });
            out
        })
        .collect()
}

/// Builds the canonical [`Clusters`] from the permuted live buffer, the tasks' group
/// ranges, and the dead (inverted) boxes, each a group of its own.
fn assemble(n: usize, live: &mut [u32], parts: Vec<Part>, dead: &[u32]) -> Clusters {
    let mut ranges: Vec<(usize, usize)> = parts.into_iter().flat_map(|p| p.groups).collect();
    ranges.sort_unstable();
    // INVARIANT: the final groups tile the live buffer.
    debug_assert!(ranges.iter().try_fold(0, |at, &(a, l)| (a == at).then_some(a + l)) == Some(live.len()));
    let mut slices = Vec::with_capacity(ranges.len());
    let mut rest = live;
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

/// RDC as the refinement of one crowded cell of the core sweep (`Refine::Rdc`): clusters
/// `boxes` (valid, margin already applied) with the default settings and offers every
/// overlapping pair `(x, y)`, `x < y`, with `x < run` (at least one run entry) once to
/// `offer`. Returns `(clusters split, box tests)`. Sequential: the sweep is parallel
/// over cells already.
pub(crate) fn refine_cell<const D: usize>(
    boxes: &[Aabb<D>],
    run: usize,
    mut offer: impl FnMut(usize, usize),
) -> (usize, usize) {
    if boxes.is_empty() {
        return (0, 0);
    }
    let rdc = Rdc::<D>::default();
    let kernel = Kernel { boxes, min_group: rdc.min_group_size, axes: rdc.axis_order };
    let mut members: Vec<u32> = (0..boxes.len() as u32).collect();
    let (mut s, mut sweep, mut splits, mut tests) = (Scratch::default(), GroupSweep::default(), 0, 0);
    let first = Item { members: &mut members, at: 0, next: 0, tried: 0 };
    kernel.drive(first, &mut s, &mut splits, Some, |m, _| {
        tests += group_pairs(boxes, m, run as u32, &mut sweep, |x, y| {
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
        let k = Kernel { boxes: &boxes, min_group: 4, axes: [0, 1] };
        let mut a: Vec<u32> = (0..boxes.len() as u32).collect();
        let mut b = a.clone();
        let mut par: Vec<(usize, usize)> = k.run_parallel(&mut a, false).into_iter().flat_map(|p| p.groups).collect();
        par.sort_unstable();
        let mut seq = Vec::new();
        let first = Item { members: &mut b, at: 0, next: 0, tried: 0 };
        k.drive(first, &mut Scratch::default(), &mut 0, Some, |m, at| seq.push((at, m.len())));
        seq.sort_unstable();
        assert_eq!(par, seq);
        assert_eq!(a, b);
        assert!(par.len() > 1000, "the scene should split: {} groups", par.len());
    }
}
