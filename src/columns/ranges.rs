//! Ranges: a run against the finer entries nested in its column, each pair once.
//!
//! - Input: a run `a..b` and its range `b..r` (a sequence of finer runs, each sorted by
//!   `qx`), in one chunk's rows.
//! - Output: pair keys to the chunk's sink; candidates and exact tests to its counts.
//! - Cost: row by row ([`Walker::range`]), a window search a range row in the run's
//!   running maximum of upper bounds (eight SIMD steps, then a galloping search:
//!   `O(log m)`), then the window's scan; pieces of [`RANGE_PIECE`] rows that meet at most
//!   eight run boxes test each row in one SIMD step, no search. In groups
//!   ([`Walker::range_grouped`]), a sort of the range's representing rows, then one window
//!   a group of up to eight.
//! - Parallel: inside one chunk's walker; nothing shared.
//! - Allocation: the walker's scratch (running maxima, group order, hit masks), reused.
//! - Source: this crate (the nested ranges, the window search and the representing
//!   entries); the scan is sweep-and-prune, P. Terdiman's box pruning.

use super::walker::gallop_by;

use super::layout::Entry;
use super::rows::first_pairs;
use super::rows::Rows;
use super::walker::Walker;
use crate::kernels::simd::low_mask;
use crate::kernels::simd::F8;
use wide::f32x8;

/// Range rows tested together against a run's bounding box (see `Walker::range`).
pub(super) const RANGE_PIECE: usize = 32;

impl<'a, const D: usize, T: Entry> Walker<'a, D, T> {
    /// The run `a..b` against its range `b..r` (entries in finer columns nested in the
    /// run's): each range row tests the window of the run that can reach it along the
    /// sweep axis. The run is sorted by `qx`; `ends[x]` is the largest `qxhi` of run rows
    /// `..=x`, so it ascends, and the run boxes overlapping `[qx(y), qxhi(y)]` lie from the
    /// first `x` with `ends[x] >= qx(y)` to the last with `qx[x] <= qxhi(y)`.
    #[inline(always)]
    pub(super) fn range(&mut self, a: usize, b: usize, r: usize) {
        let cols = self.cols;
        let (e, lay) = (self.entries, self.lay);
        // The window starts at the first run row whose running maximum of `qxhi` reaches
        // `qx(y)`, not at `qx(y) - reach` (the run's longest box): that would test every
        // run row within the longest box's reach, many of them apart from `y` along the
        // axis. PERF: benches/pairs.rs (3D varied).
        let mut ends = std::mem::take(&mut self.ends);
        ends.clear();
        let mut top = f32::NEG_INFINITY;
        ends.extend(cols.qxh[a..b].iter().map(|&h| {
            top = if h > top { h } else { top };
            top
        }));
        // A box nested in the run's column may have several entries there (its columns at
        // its own level); only the one that starts at the run column's edge, or at its own
        // first column, on every column axis stands for it ([`Layout::represents`]); the
        // others are skipped. The pair of run box `x` and a range box is then reported from
        // the run column holding the reference point `p = max(qlo(x), qlo(y))` at the run's
        // level: on each column axis one of the two starts in this column, that is, one
        // entry is its box's first column there, the run's own rule
        // ([`Rows::first_mask`]). Every overlapping pair has `p` in one column of the run
        // box's, and its range box an entry standing for it there: one report, no dedup.
        // Testing every entry of a range box and masking the duplicates by a box test on the
        // run box's corner (at the range entry's level) is not used: a range box with
        // several entries in the column meets the run box once an entry, and every such hit
        // is an exact test. PERF: benches/pairs.rs (3D varied).
        let run_start = lay.start(e[a]);
        let mut tested = 0;
        // The range is a sequence of runs, each sorted by `qx`: within one the window's
        // start only moves forward (a merge); a new one starts with a binary search.
        let (mut from, mut prev) = (0, f32::INFINITY);
        // The range in pieces of `RANGE_PIECE` rows. The run boxes that meet a piece's
        // bounding box are picked out first: none, and the piece is skipped; at most eight,
        // and each row tests them in one SIMD step, no window search (a plank's column
        // over a crowd of small boxes). Otherwise the rows search their windows. After a
        // piece done either way, the next row searches afresh. Where pieces meet too many
        // run boxes (sizes that vary smoothly: every run box is big), the test backs off:
        // after `k` misses in a row it skips the next `k` pieces' tests.
        let (mut y0, mut misses, mut wait) = (b, 0, 0);
        while y0 < r && !self.out.stopped {
            let y1 = (y0 + RANGE_PIECE).min(r);
            if wait > 0 {
                wait -= 1;
            } else if let Some(lanes) = cols.lanes_meeting(a, b, &cols.bounds_of(y0, y1)) {
                misses = 0;
                prev = f32::INFINITY;
                tested += lanes.test(&cols, e, lay, run_start, y0, y1, &mut self.out);
                y0 = y1;
                continue;
            } else {
                misses += 1;
                wait = misses;
            }
            for y in y0..y1 {
                let ey = e[y];
                if !lay.represents(ey, run_start) {
                    continue;
                }
                let by = cols.get(y);
                let (qy, qh) = (cols.qx[y], cols.qxh[y]);
                if qy < prev {
                    from = ends.partition_point(|&h| h < qy);
                } else {
                    from = advance_to(&ends, from, qy);
                }
                prev = qy;
                let fi = lay.first(ey);
                let pre = |j: usize| cols.first_mask(j, fi);
                let (idy, out) = (lay.id(ey), &mut self.out);
                tested += cols.scan::<false>(
                    &by,
                    qh,
                    a + from..b,
                    pre,
                    |x| crate::kernels::pair_sort::key(lay.id(e[x]), idy),
                    out,
                );
            }
            y0 = y1;
        }
        self.ends = ends;
        self.counts.candidates += tested;
        self.counts.exact_tests += tested;
    }

    /// The run `a..b` against its range `b..r`, as [`Self::range`] but eight range rows at
    /// a time: the range's rows that stand for their boxes, sorted by `qx` (the range is a
    /// sequence of runs, each sorted), go in groups of up to eight whose starts lie within
    /// the run's mean extent along the sweep axis of the first's; a group's rows are the
    /// SIMD lanes, and every run row of the group's window (from the first `x` whose
    /// `ends[x]` reaches the first lane's start to the last that starts before the
    /// lanes' furthest end) is tested against all of them in one step: its box broadcast,
    /// the exact test and the ownership mask ([`first_pairs`]) of the eight pairs. The
    /// window holds every lane's own (starts ascend), so no pair is missed; its extra rows
    /// fail the exact test. A step's hits go to a byte, and the bytes are emitted after the
    /// group's window, eight steps a word (see [`Self::run`]).
    ///
    /// Row by row, a range row pays a window search, a scan of about three SIMD steps whose
    /// exit and hit branches mispredict, and its emits. Grouped, the searches and branches
    /// are a group's, at the cost of a wider window a row (more candidates a box).
    /// PERF: examples/demo.rs (3D varied 10k and 100k, sweep stage); where it is not taken:
    /// [`grouped`](super::walker::grouped).
    #[inline(always)]
    pub(super) fn range_grouped<V: F8>(&mut self, a: usize, b: usize, r: usize) {
        let cols = self.cols;
        let (e, lay) = (self.entries, self.lay);
        let mut ends = std::mem::take(&mut self.ends);
        ends.clear();
        let mut top = f32::NEG_INFINITY;
        let mut reach = 0.0;
        ends.extend(cols.qxh[a..b].iter().zip(&cols.qx[a..b]).map(|(&h, &q)| {
            top = if h > top { h } else { top };
            reach += h - q;
            top
        }));
        // A group's rows start within the run's mean extent of its first row's start: rows
        // far apart along the axis (a range over islands, or sparse) would make a window
        // the sum of theirs.
        let gap = reach / (b - a) as f32;
        let run_start = lay.start(e[a]);
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        // `qx` is a non-negative integer in an f32: its bits sort as it does.
        order.extend(
            (b..r)
                .filter(|&y| lay.represents(e[y], run_start))
                .map(|y| (cols.qx[y].to_bits() as u64) << 32 | y as u64),
        );
        order.sort_unstable();
        let all = low_mask(lay.c) as u32;
        let mut from = 0;
        let mut tested = 0;
        let mut hits = std::mem::take(&mut self.hits);
        let mut rest = &order[..];
        while !rest.is_empty() && !self.out.stopped {
            let q0 = f32::from_bits((rest[0] >> 32) as u32);
            let mut len = 1;
            while len < rest.len().min(8) && f32::from_bits((rest[len] >> 32) as u32) - q0 <= gap {
                len += 1;
            }
            let (g, tail) = rest.split_at(len);
            rest = tail;
            let mut lo = [[f32::INFINITY; 8]; D];
            let mut hi = [[f32::NEG_INFINITY; 8]; D];
            let mut fst = [0u8; 8];
            let mut id = [0u32; 8];
            let mut qh = f32::NEG_INFINITY;
            for (l, &v) in g.iter().enumerate() {
                let y = v as u32 as usize;
                for k in 0..D {
                    lo[k][l] = cols.lo[k][y];
                    hi[k][l] = cols.hi[k][y];
                }
                fst[l] = cols.fst[y];
                id[l] = lay.id(e[y]);
                let h = cols.qxh[y];
                qh = if h > qh { h } else { qh };
            }
            from = advance_to(&ends, from, q0);
            let fy = u64::from_le_bytes(fst);
            let x0 = a + from;
            let x = x0 + group_window::<V, D>(&cols, x0, b, qh, &lo, &hi, fy, all, &mut hits);
            tested += (x - x0) * g.len();
            hits.resize(hits.len().next_multiple_of(8), 0);
            for (wi, w8) in hits.chunks_exact(8).enumerate() {
                // Bit `t` of the word: run row `x0 + 8 wi + t / 8`, lane `t % 8`.
                let mut w = u64::from_le_bytes(w8.try_into().expect("eight bytes"));
                while w != 0 {
                    let t = w.trailing_zeros() as usize;
                    self.out.push(crate::kernels::pair_sort::key(lay.id(e[x0 + wi * 8 + t / 8]), id[t % 8]));
                    w &= w - 1;
                }
            }
        }
        self.order = order;
        self.hits = hits;
        self.ends = ends;
        self.counts.candidates += tested;
        self.counts.exact_tests += tested;
    }
}

/// Tests run rows `x0..` (up to `b`, while `qx <= qh`) against a group's eight lanes
/// (`lo`, `hi`, first flags `fy`; see [`Walker::range_grouped`]): one hit mask a run row
/// into `hits` (cleared first). Returns the rows tested.
///
/// The group's boxes stay in registers across the steps: six vectors of eight lanes in
/// 3D. As `wide::f32x8` on the AVX2 path they are twelve 128-bit halves, which the loop
/// spills to the stack with its broadcasts at every step; as
/// [`crate::kernels::simd::Avx8`] they are six 256-bit registers.
/// PERF: examples/demo.rs (3D varied 10k and 100k, sweep stage).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn group_window<V: F8, const D: usize>(
    cols: &Rows<'_, D>,
    x0: usize,
    b: usize,
    qh: f32,
    lo: &[[f32; 8]; D],
    hi: &[[f32; 8]; D],
    fy: u64,
    all: u32,
    hits: &mut Vec<u8>,
) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let qx = &cols.qx[x0..b];
    let n = qx.len();
    let fst = &cols.fst[x0..x0 + n];
    let rlo: [&[f32]; D] = std::array::from_fn(|k| &cols.lo[k][x0..x0 + n]);
    let rhi: [&[f32]; D] = std::array::from_fn(|k| &cols.hi[k][x0..x0 + n]);
    let lo8: [V; D] = std::array::from_fn(|k| V::load(&lo[k]));
    let hi8: [V; D] = std::array::from_fn(|k| V::load(&hi[k]));
    hits.clear();
    hits.reserve(n);
    let dst = &mut hits.spare_capacity_mut()[..n];
    let mut x = 0;
    // Empty lanes (`lo` = inf, `hi` = -inf) overlap nothing.
    while x < n && qx[x] <= qh {
        let mut ok = lo8[0].le(V::splat(rhi[0][x])).and(V::splat(rlo[0][x]).le(hi8[0]));
        for k in 1..D {
            ok = ok.and(lo8[k].le(V::splat(rhi[k][x]))).and(V::splat(rlo[k][x]).le(hi8[k]));
        }
        dst[x].write((first_pairs(fy | (fst[x] as u64 * ONES), all) & ok.bits()) as u8);
        x += 1;
    }
    // SAFETY: `x <= n` slots were reserved above (`hits.reserve(n)` after the clear), and
    // the first `x` written.
    unsafe { hits.set_len(x) };
    x
}

/// The first index `>= from` whose `ends` is at least `q` (`ends` ascending): eight values
/// a step, the step's count read from a SIMD mask (a prefix, as `ends` ascends), for up to
/// [`ADVANCE_STEPS`] steps; past those, an exponential then binary search, so that a window
/// that jumps far (a long run under rows spread along the axis) costs a logarithm, not a
/// step every eight rows.
/// The search alone is not used: its branches depend on the data at every range row, and
/// most windows move a few rows. Eight steps, not four, before the search.
/// PERF: examples/demo.rs (2D varied 100k and 1M, 2D mixed and 3D varied 100k; sweep
/// stage).
#[inline(always)]
pub(super) fn advance_to(ends: &[f32], mut from: usize, q: f32) -> usize {
    let qv = f32x8::splat(q);
    for _ in 0..ADVANCE_STEPS {
        if from + 8 > ends.len() {
            return from + ends[from..].partition_point(|&h| h < q);
        }
        let below = f32x8::from(&ends[from..from + 8]).simd_lt(qv).to_bitmask();
        let k = (!below).trailing_zeros() as usize;
        from += k;
        if k < 8 {
            return from;
        }
    }
    gallop_by(ends, from, |&h| h < q)
}

/// SIMD steps [`advance_to`] takes before it searches.
pub(super) const ADVANCE_STEPS: usize = 8;
