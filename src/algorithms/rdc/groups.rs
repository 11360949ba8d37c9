//! The pairs inside RDC's final groups: pair by pair up to [`DIRECT_MAX`] members, a
//! scalar sweep along the axis the group is already sorted on below [`SWEEP_SIMD`], the
//! crate's SIMD sweep-and-prune above, in parallel row chunks from [`PAR_GROUP`].
//!
//! - Input: one final group's records, and a run limit (pairs of two ids at or above it
//!   are not wanted: crowded column runs). Output: each wanted overlapping pair once, to a
//!   callback (the big parallel case: pair keys a chunk).
//! - Cost: O(g + k') a group of g members, k' the pairs overlapping on the sweep axis.
//! - Parallel: only the big groups, by row chunks; the rest runs on the caller's task.
//! - Allocation: none of its own: the caller's [`GroupSweep`] and, for a big group, its
//!   key lists, reused (they grow to the most a call needs).
//! - Source: P. Terdiman, "Box pruning" (the sweeps).

use super::Rec;
use crate::algorithms::sap::{self, Sorted};
use crate::kernels::pair_sort::PairBudget;
use crate::par::prelude::*;

/// Final groups with at most this many members are tested pair by pair.
const DIRECT_MAX: usize = 16;
/// Final groups with fewer members, already sorted on some axis, are swept along it by a
/// scalar loop; bigger ones are copied into a [`Sorted`] and swept 8 boxes at a time.
const SWEEP_SIMD: usize = 256;
/// Final groups with at least this many members are swept in parallel row chunks.
pub(super) const PAR_GROUP: usize = 4096;
/// Rows per chunk of the parallel group sweep.
const GROUP_ROWS: usize = 512;

/// Working memory for sweeping a final group: its members below the run limit and the
/// others, as sorted SIMD sets (big groups) and as records (small sorted groups).
pub(super) struct GroupSweep<const D: usize> {
    /// Also the sorted set of a big group ([`par_group_pairs`]).
    pub(super) run: Sorted<D>,
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
pub(super) fn group_pairs<const D: usize>(
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

/// Every overlapping pair of a big final group as pair keys (the everything-overlaps case:
/// one group holding the whole input), swept in parallel row chunks by the whole-scene
/// sweep's chunk kernel, which counts them against `budget` and stops with it. `set` is
/// the caller's sorted set; the chunks' keys go to `parts[*used..]` (lists added where
/// missing, kept ones reused), and `used` moves past them. Returns the boxes tested.
pub(super) fn par_group_pairs<const D: usize>(
    g: &[Rec<D>],
    set: &mut Sorted<D>,
    parts: &mut Vec<Vec<u64>>,
    used: &mut usize,
    budget: &PairBudget,
) -> usize {
    set.clear();
    for x in g {
        set.push(x.b, x.id);
    }
    set.sort();
    let (n, from) = (set.len(), *used);
    let chunks = n.div_ceil(GROUP_ROWS);
    if parts.len() < from + chunks {
        parts.resize_with(from + chunks, Vec::new);
    }
    *used += chunks;
    let s = &*set;
    parts[from..from + chunks]
        .par_iter_mut()
        .enumerate()
        .map(|(c, part)| sap::sweep_chunk(s, c * GROUP_ROWS..((c + 1) * GROUP_ROWS).min(n), budget, part))
        .sum()
}
