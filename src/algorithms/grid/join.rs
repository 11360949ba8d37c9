//! The grid as one side of a join: the smaller set filed in the grid, every box of the
//! larger set looking through every level's window of it (`find_pairs_between`).
//!
//! - Input: the grid built over the smaller set ([`Grid::build_for_join`]: its levels and
//!   rows as [`Grid::build`] makes them, each level's cells fitted to the larger set's
//!   looks, `plan::fit_join`), the larger set (grown by the margin here), the two sets'
//!   id offsets into one id space, the smaller set's live grown bounds, a [`PairBudget`].
//! - Output: every pair of a filed box and a larger-set box that overlap, sorted, as
//!   `[i, j]` in the one id space (`kernels::pair_sort::finish_into`); the candidates
//!   tested; whether some larger-set box is invalid (NaN, infinite, `min > max`: it is
//!   passed over, and the caller names the first).
//! - Exactness: a larger-set box `a` looks through level `t` in the window from
//!   `cell(a.min - reach)` to `cell(a.max)` an axis, as the grid's own looks do
//!   (`query`): a filed box overlapping `a` has its lower corner, so its slot, there.
//!   The sets are distinct and only the larger set looks, so each cross pair is found
//!   once, by its larger-set box, on every level (no forward-only rule, no directions).
//!   A box missing the smaller set's bounds is passed over (it meets no filed box); a
//!   box reaching outside them looks through windows clamped to the grid (the cell map
//!   clamps and stays monotone, `plan::Quant::cell`), so no coordinate (parked at 1e9,
//!   a margin overflowed to infinity) stretches or overflows anything.
//! - Cost: O(n) for the larger set's pass, and per box that meets the bounds, per level,
//!   a cell map an axis and bound, two table reads a run of slots (a hashed level's runs
//!   sorted and merged first) and one eight-lane compare an axis per eight candidates;
//!   empty runs read no row. The larger set is read once, in its own order: a grid does
//!   not care about it, so it is never sorted. Then the pair sort, O(pairs).
//! - Threads: fixed chunks of the larger set (`kernels::par::chunk_len`), each with its
//!   own pair keys, counted against the budget every
//!   [`BUDGET_STEP`](crate::kernels::pair_sort::BUDGET_STEP) keys; the pair sort makes the
//!   output the same bytes for any thread count, and the counts are sums.
//! - Allocation: each chunk's keys and run list are the grid's, kept between calls; a
//!   call allocates a list of slices a chunk for the pair sort, and the output's growth
//!   (`try_reserve`: a refused allocation is `Error::OutOfMemory`).
//! - Source: this crate (the grid's looks, from the other set).

use super::plan::Level;
use super::query::window_runs;
use super::Grid;
use crate::algorithms::sap::overlap_mask8;
use crate::kernels::pair_sort::{key, PairBudget};
use crate::kernels::par::chunk_len;
use crate::par::prelude::*;
use crate::Aabb;

/// One chunk's buffers, kept between calls: its pair keys and a hashed level's runs.
#[derive(Debug, Default)]
pub(super) struct JoinPart {
    keys: Vec<u64>,
    runs: Vec<(u64, u64)>,
}

/// What the larger set's looks found besides the pairs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Looked {
    /// Candidates tested.
    pub tested: usize,
    /// Some box of the larger set is invalid (passed over; the caller names the first).
    pub invalid: bool,
}

/// A chunk's key sink: the keys, and whether an allocation for them was refused.
struct Sink<'a> {
    keys: &'a mut Vec<u64>,
    failed: bool,
}

impl Sink<'_> {
    /// The keys of box `a` with `offset +` each of `ids` whose bit is set in `m`.
    #[inline(always)]
    fn push8(&mut self, a: u32, offset: u32, ids: &[u32], mut m: u32) {
        while m != 0 {
            if self.keys.len() == self.keys.capacity()
                && self.keys.try_reserve(self.keys.len().max(64)).is_err()
            {
                self.failed = true;
                return;
            }
            self.keys.push(key(a, offset + ids[m.trailing_zeros() as usize]));
            m &= m - 1;
        }
    }
}

impl<const D: usize> Grid<D> {
    /// Files `small` (grown by `margin`; `bounds` its live grown boxes' bounds, `bulk`
    /// those of its bulk) as [`Grid::build`] does, each level's cells fitted to the looks
    /// of `large`'s boxes (sampled).
    pub(crate) fn build_for_join(
        &mut self,
        small: &[Aabb<D>],
        large: &[Aabb<D>],
        margin: f32,
        bounds: Aabb<D>,
        bulk: Aabb<D>,
    ) {
        self.build_with(small, margin, bounds, bulk, Some(large));
    }

    /// Every pair of a filed box (id `small_offset + id`) and a box of `large` (id
    /// `large_offset + index`, grown by `margin`; inverted ones meet nothing) that
    /// overlap, into `out` (cleared first), sorted; `n_ids` ids in all, the filed ones'
    /// live grown bounds `bounds`. Stops early once `budget` stops (the caller reports
    /// its verdict), and leaves `out` empty where some box of `large` is invalid.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn pairs_against(
        &mut self,
        large: &[Aabb<D>],
        margin: f32,
        bounds: &Aabb<D>,
        [small_offset, large_offset]: [u32; 2],
        n_ids: usize,
        budget: &PairBudget,
        out: &mut Vec<[u32; 2]>,
    ) -> Looked {
        out.clear();
        let n = large.len();
        let chunk = chunk_len(n);
        let chunks = n.div_ceil(chunk);
        if self.join.len() < chunks {
            self.join.resize_with(chunks, JoinPart::default);
        }
        let mut parts = std::mem::take(&mut self.join);
        let me = &*self;
        let found = parts[..chunks]
            .par_iter_mut()
            .enumerate()
            .map(|(c, part)| {
                crate::kernels::simd::fast(
                    #[inline(always)]
                    || {
                        let boxes = &large[c * chunk..((c + 1) * chunk).min(n)];
                        let first = large_offset + (c * chunk) as u32;
                        me.join_chunk(boxes, first, small_offset, margin, bounds, budget, part)
                    },
                )
            })
            .reduce(Looked::default, |x, y| Looked {
                tested: x.tested + y.tested,
                invalid: x.invalid | y.invalid,
            });
        if !found.invalid {
            crate::kernels::pair_sort::finish_parts(
                parts[..chunks].iter().map(|p| &p.keys[..]),
                n_ids,
                budget,
                out,
            );
        }
        self.join = parts;
        found
    }

    /// The looks of `boxes` (ids from `first`) through every level, their keys into
    /// `part` (cleared first); stops early, with no keys, once the budget stops. Inlined
    /// into the caller's `simd::fast` closure, so that it is compiled for the fast
    /// instruction set too.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn join_chunk(
        &self,
        boxes: &[Aabb<D>],
        first: u32,
        small_offset: u32,
        margin: f32,
        bounds: &Aabb<D>,
        budget: &PairBudget,
        part: &mut JoinPart,
    ) -> Looked {
        part.keys.clear();
        let runs = &mut part.runs;
        let mut sink = Sink { keys: &mut part.keys, failed: false };
        let (mut counted, mut found) = (0, Looked::default());
        // The levels with boxes, a bit each.
        let live = self.levels.iter().enumerate().fold(0u32, |m, (l, lv)| m | ((lv.count > 0) as u32) << l);
        for (i, b) in boxes.iter().enumerate() {
            // Validity as `validate::check_box` has it (NaN fails every comparison).
            let mut ok = true;
            for k in 0..D {
                ok &= (b.min[k] <= b.max[k]) & (b.min[k].abs() <= f32::MAX) & (b.max[k].abs() <= f32::MAX);
            }
            let g = b.grown(margin);
            if !ok || g.is_inverted() || !g.overlaps(bounds) {
                found.invalid |= !ok;
                continue;
            }
            let ia = first + i as u32;
            let mut left = live;
            while left != 0 {
                let lv = &self.levels[left.trailing_zeros() as usize];
                left &= left - 1;
                found.tested += self.look_join(&g, ia, small_offset, lv, runs, &mut sink);
            }
            if budget.account(sink.keys.len(), &mut counted, sink.failed) {
                sink.keys.clear();
                return found;
            }
        }
        budget.settle(sink.keys.len(), counted);
        found
    }

    /// Box `a` (id `ia`) through level `lv`'s window: the key of every filed box (id
    /// `offset +` its own) of it that overlaps `a` into `sink`. `runs` is scratch for a
    /// hashed level's runs. Returns the candidates tested.
    #[inline(always)]
    fn look_join(
        &self,
        a: &Aabb<D>,
        ia: u32,
        offset: u32,
        lv: &Level<D>,
        runs: &mut Vec<(u64, u64)>,
        sink: &mut Sink<'_>,
    ) -> usize {
        let q = &lv.quant;
        let lo: [i64; D] = std::array::from_fn(|k| q.cell(k, a.min[k] as f64 - lv.reach[k]));
        let hi: [i64; D] = std::array::from_fn(|k| q.cell(k, a.max[k] as f64));
        window_runs(lv, lo, &lo, &hi, runs, |s0, s1| self.scan_join(a, ia, offset, lv, s0, s1, sink))
    }

    /// Tests `a` (id `ia`) against the rows of level `lv`'s slots `s0..=s1`, eight at a
    /// time, lanes past the run masked off. An empty run reads no row: most of a sparse
    /// level's runs are empty. Returns the candidates tested.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn scan_join(
        &self,
        a: &Aabb<D>,
        ia: u32,
        offset: u32,
        lv: &Level<D>,
        s0: u64,
        s1: u64,
        sink: &mut Sink<'_>,
    ) -> usize {
        let j0 = self.starts[(lv.offset + s0) as usize] as usize;
        let j1 = self.starts[(lv.offset + s1 + 1) as usize] as usize;
        let mut j = j0;
        while j < j1 {
            // `j < rows` and the rows (and ids) are `PAD` longer, so `j + 8` is in bounds.
            let lanes = (j1 - j).min(8);
            let m = overlap_mask8(&self.lo, &self.hi, j, a, 0) & ((1u32 << lanes) - 1);
            sink.push8(ia, offset, &self.id[j..], m);
            j += 8;
        }
        j1 - j0
    }
}
