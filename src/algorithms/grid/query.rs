//! The grid's looks: every box through the windows of the levels it looks through, each
//! window's rows as runs of slots, each run as a run of rows tested eight at a time.
//!
//! - Input: the built [`Grid`] and the pair budget.
//! - Output: the sorted unique pairs (`kernels::pair_sort::finish_into`), and the
//!   candidates tested.
//! - Window: on level `t`, the cells from `cell(a.min - reach)` to `cell(a.max)` an axis
//!   (`reach`: `t`'s longest extent on the axis, rounded up). A box `b` of level `t` that
//!   overlaps `a` has `a.min - reach <= b.min <= a.max` on every axis, and the cell map is
//!   monotone, so `b`'s lower corner cell, the slot it is filed under, lies in the
//!   window. On a box's own level the relation is symmetric (`reach` bounds both), so
//!   each pair there is kept by its earlier row alone.
//! - Rows: a dense level's window rows (axes `1..D`) are runs of consecutive slots, in
//!   ascending order; on its own level a box starts at its own row, as the rows before
//!   hold only earlier rows. A hashed level's runs may wrap and overlap (two rows hashed
//!   near each other), so they are sorted and merged first: each slot is read once. A
//!   window of at least as many cells as the level has slots reads every slot once.
//! - Cost: per box, a few cell maps a level looked through, two table reads a run, and
//!   one eight-lane compare an axis per eight candidates.
//! - Parallel: chunks of rows of about equal expected work ([`Chunks`]: eight a thread,
//!   at most 4096 rows, never across levels), each with its own pair keys, counted
//!   against the budget every
//!   [`BUDGET_STEP`](crate::kernels::pair_sort::BUDGET_STEP) keys.
//! - Allocation: each chunk's pair keys, and where a hashed level is looked through, its
//!   list of runs.
//! - Source: this crate; the eight-lane test is the sweep's (`algorithms::sap`).

use super::plan::{Level, LEVELS};
use super::Grid;
use crate::algorithms::sap::overlap_mask8;
use crate::kernels::pair_sort::PairBudget;
use crate::par::prelude::*;
use crate::Aabb;

/// A chunk's pair keys, grown without aborting on a refused allocation.
struct Sink {
    keys: Vec<u64>,
    failed: bool,
}

impl Sink {
    /// The keys of box `a` with each of `ids` whose bit is set in `m` (bit `l`: `ids[l]`).
    #[inline(always)]
    fn push8(&mut self, a: u32, ids: &[u32], mut m: u32) {
        while m != 0 {
            if self.keys.len() == self.keys.capacity()
                && self.keys.try_reserve(self.keys.len().max(64)).is_err()
            {
                self.failed = true;
                return;
            }
            self.keys.push(crate::kernels::pair_sort::key(a, ids[m.trailing_zeros() as usize]));
            m &= m - 1;
        }
    }
}

/// The looks' chunks of rows: each level's rows cut into runs of about equal expected
/// work ([`Level::work`] plus [`ROW_WORK`] a row), [`CHUNKS_A_THREAD`] chunks a thread
/// over all levels (so that idle threads have chunks to steal where the estimate errs),
/// but no less than [`CHUNK_WORK`] a chunk (or one row), [`CHUNK_MAX`] rows at most; a
/// chunk never spans two levels. The cut depends on the thread count only
/// through how many chunks there are; the pairs are sorted after.
struct Chunks {
    /// Rows a chunk on each level, and the chunks up to and including each level.
    len: [usize; LEVELS],
    ends: [usize; LEVELS],
}

impl Chunks {
    fn new<const D: usize>(levels: &[Level<D>; LEVELS]) -> Self {
        let total: f64 = levels.iter().map(|l| l.count as f64 * (l.work + ROW_WORK)).sum();
        let target = (total / (CHUNKS_A_THREAD * crate::par::current_num_threads()) as f64).max(CHUNK_WORK);
        let (mut len, mut ends, mut at) = ([1; LEVELS], [0; LEVELS], 0);
        for (l, lv) in levels.iter().enumerate() {
            if lv.count > 0 {
                // `as` saturates; `target` is finite (every work is at most 1e12).
                len[l] = ((target / (lv.work + ROW_WORK)) as usize).clamp(1, CHUNK_MAX);
                at += lv.count.div_ceil(len[l]);
            }
            ends[l] = at;
        }
        Chunks { len, ends }
    }

    fn count(&self) -> usize {
        self.ends[LEVELS - 1]
    }

    /// The rows of chunk `c < count()`.
    fn rows<const D: usize>(&self, levels: &[Level<D>; LEVELS], c: usize) -> std::ops::Range<usize> {
        let l = self.ends.partition_point(|&e| e <= c);
        let lv = &levels[l];
        let k = c - if l == 0 { 0 } else { self.ends[l - 1] };
        let start = lv.first + k * self.len[l];
        start..(start + self.len[l]).min(lv.first + lv.count)
    }
}

/// A row's own cost in candidate tests: its windows' cells and their table reads, about
/// 35 ns against 1.7 ns a test (2D `mixed`, 10k boxes, 2 threads: 4096 rows of small
/// boxes at 4.7 tests a row took 232-252 us, 156 rows of long ones at 150-230 tests a
/// row 117-176 us).
/// PERF: benches/scaling.rs (mixed).
const ROW_WORK: f64 = 16.0;

/// Chunks of the looks a thread.
const CHUNKS_A_THREAD: usize = 8;

/// The most rows a chunk of the looks takes.
const CHUNK_MAX: usize = 4096;

/// The least expected candidate tests a chunk of the looks takes (a row more where one
/// row expects more): a few microseconds of work a task.
const CHUNK_WORK: f64 = 4096.0;

impl<const D: usize> Grid<D> {
    /// Every overlapping pair of the last build into `out` (cleared first; `n_ids` boxes
    /// in all), under `budget`. Returns the candidates tested.
    pub(crate) fn pairs_into(&self, n_ids: usize, budget: &PairBudget, out: &mut Vec<[u32; 2]>) -> usize {
        let chunks = Chunks::new(&self.levels);
        let (parts, tests): (Vec<Vec<u64>>, Vec<usize>) = (0..chunks.count())
            .into_par_iter()
            .map(|c| {
                crate::kernels::simd::fast(
                    #[inline(always)]
                    || self.look_chunk(chunks.rows(&self.levels, c), budget),
                )
            })
            .unzip();
        crate::kernels::pair_sort::finish_parts(parts.iter().map(|p| p.as_slice()), n_ids, budget, out);
        tests.iter().sum()
    }

    /// The pair keys found by rows `rows`, and the candidates they tested; stops early,
    /// with no keys, once the budget stops. Inlined into the caller's `simd::fast`
    /// closure, so that it is compiled for the fast instruction set too.
    #[inline(always)]
    fn look_chunk(&self, rows: std::ops::Range<usize>, budget: &PairBudget) -> (Vec<u64>, usize) {
        let mut sink = Sink { keys: Vec::new(), failed: false };
        let mut counted = 0;
        let mut runs = Vec::new();
        let (mut tests, mut l) = (0, 0);
        for r in rows {
            // Rows are level-major; empty levels have no rows (`first + count == 0`).
            while r >= self.levels[l].first + self.levels[l].count {
                l += 1;
            }
            let a = self.get(r);
            let ia = self.id[r];
            let mut looks = self.levels[l].looks;
            while looks != 0 {
                let t = looks.trailing_zeros() as usize;
                looks &= looks - 1;
                let from = if t == l { r + 1 } else { 0 };
                tests += self.look(&a, ia, from, &self.levels[t], &mut runs, &mut sink);
            }
            if budget.account(sink.keys.len(), &mut counted, sink.failed) {
                return (Vec::new(), tests);
            }
        }
        budget.settle(sink.keys.len(), counted);
        (sink.keys, tests)
    }

    /// Box `a` (id `ia`) through level `lv`'s window: the key of every row `j >= from` of
    /// it whose box overlaps `a` into `sink` (`from` is one past `a`'s own row on its own
    /// level, else 0). `runs` is scratch for a hashed level's runs. Returns the candidates
    /// tested.
    #[inline(always)]
    fn look(
        &self,
        a: &Aabb<D>,
        ia: u32,
        from: usize,
        lv: &Level<D>,
        runs: &mut Vec<(u64, u64)>,
        sink: &mut Sink,
    ) -> usize {
        let q = &lv.quant;
        let lo: [i64; D] = std::array::from_fn(|k| q.cell(k, a.min[k] as f64 - lv.reach[k]));
        let hi: [i64; D] = std::array::from_fn(|k| q.cell(k, a.max[k] as f64));
        // Rows from the first of the window, or from the box's own on its own level.
        let mut start = lo;
        if from > 0 {
            for (k, ck) in start.iter_mut().enumerate().skip(1) {
                *ck = q.cell(k, a.min[k] as f64);
            }
        }
        window_runs(lv, start, &lo, &hi, runs, |s0, s1| self.scan(a, ia, lv, s0, s1, from, sink))
    }

    /// Tests `a` (id `ia`) against the rows `>= from` of level `lv`'s slots `s0..=s1`,
    /// eight at a time, lanes past the run masked off; a run of eight rows or fewer (the
    /// common one) takes one step and no branch on its length. Returns the candidates
    /// tested.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn scan(
        &self,
        a: &Aabb<D>,
        ia: u32,
        lv: &Level<D>,
        s0: u64,
        s1: u64,
        from: usize,
        sink: &mut Sink,
    ) -> usize {
        let j0 = (self.starts[(lv.offset + s0) as usize] as usize).max(from);
        let j1 = self.starts[(lv.offset + s1 + 1) as usize] as usize;
        let mut j = j0;
        loop {
            // `j <= rows` and the rows (and ids) are `PAD` longer, so `j + 8` is in bounds.
            let lanes = j1.saturating_sub(j).min(8);
            let m = overlap_mask8(&self.lo, &self.hi, j, a, 0) & ((1u32 << lanes) - 1);
            sink.push8(ia, &self.id[j..], m);
            j += 8;
            if j >= j1 {
                break;
            }
        }
        j1.saturating_sub(j0)
    }
}

/// Calls `scan(s0, s1)` on every run of slots `s0..=s1` of level `lv`'s window
/// `lo..=hi` and returns the sum of what it returns. A hashed level's runs are computed
/// into `runs` (scratch); a dense level's rows, from row `start` on (the window's first
/// row, `lo`, or a later one), are joined where they follow one another (whole rows, one
/// after the other), so a window of full rows is one run.
#[inline(always)]
pub(super) fn window_runs<const D: usize>(
    lv: &Level<D>,
    start: [i64; D],
    lo: &[i64; D],
    hi: &[i64; D],
    runs: &mut Vec<(u64, u64)>,
    mut scan: impl FnMut(u64, u64) -> usize,
) -> usize {
    let mut tests = 0;
    if lv.hashed {
        hashed_runs(lv, lo, hi, runs);
        for &(s0, s1) in runs.iter() {
            tests += scan(s0, s1);
        }
    } else {
        let mut c = start;
        let row = lv.row(&c);
        let (mut p0, mut p1) = (row + lo[0] as u64, row + hi[0] as u64);
        while next_row(&mut c, lo, hi) {
            let row = lv.row(&c);
            let (s0, s1) = (row + lo[0] as u64, row + hi[0] as u64);
            if p1 + 1 != s0 {
                tests += scan(p0, p1);
                p0 = s0;
            }
            p1 = s1;
        }
        tests += scan(p0, p1);
    }
    tests
}

/// Steps `c` to the next row (axes `1..D`, axis 1 fastest) of the window `lo..=hi`;
/// false past the last.
#[inline(always)]
fn next_row<const D: usize>(c: &mut [i64; D], lo: &[i64; D], hi: &[i64; D]) -> bool {
    for k in 1..D {
        if c[k] < hi[k] {
            c[k] += 1;
            return true;
        }
        c[k] = lo[k];
    }
    false
}

/// The runs of slots of a hashed level's window `lo..=hi`, sorted, disjoint, each slot
/// once, into `runs`. A window of at least as many cells as the level has slots is every
/// slot.
fn hashed_runs<const D: usize>(lv: &Level<D>, lo: &[i64; D], hi: &[i64; D], runs: &mut Vec<(u64, u64)>) {
    runs.clear();
    let t = lv.slots;
    let cells = (0..D).fold(1u128, |n, k| n.saturating_mul((hi[k] - lo[k]) as u128 + 1));
    if cells >= t as u128 {
        runs.push((0, t - 1));
        return;
    }
    // Fewer cells than slots, so a row's run is shorter than the table: it wraps at most
    // once.
    let len = (hi[0] - lo[0]) as u64;
    let mut c = *lo;
    loop {
        let s0 = lv.slot(lv.row(&c), lo[0]);
        if s0 + len < t {
            runs.push((s0, s0 + len));
        } else {
            runs.push((s0, t - 1));
            runs.push((0, s0 + len - t));
        }
        if !next_row(&mut c, lo, hi) {
            break;
        }
    }
    runs.sort_unstable();
    let mut w = 0;
    for i in 1..runs.len() {
        let (s0, s1) = runs[i];
        if s0 <= runs[w].1 + 1 {
            runs[w].1 = runs[w].1.max(s1);
        } else {
            w += 1;
            runs[w] = (s0, s1);
        }
    }
    runs.truncate(w + 1);
}
