//! Runs: one chunk's walk over its runs. A run is swept against itself by
//! sweep-and-prune, and its range handed to [`ranges`](super::ranges); a crowded run goes
//! to RDC with its range's boxes instead.
//!
//! - Input: one chunk's rows and entries (`from..to`, starting at run boundaries).
//! - Output: pair keys to the chunk's [`Sink`], each pair once; the chunk's
//!   [`SweepCounts`].
//! - Cost: a run of `m` rows, `O(m + candidates)`, eight rows a SIMD step; the ends of a
//!   run and of its range by galloping search, logarithmic in their lengths; a crowded
//!   run, RDC's cost over its run and range boxes.
//! - Parallel: one walker a chunk, nothing shared but the sink's spill.
//! - Allocation: the walker's scratch (range boxes for RDC, running maxima, group order and
//!   hit masks), grown on use and reused across the chunk's runs.
//! - Source: sweep-and-prune, P. Terdiman's box pruning ("Box pruning revisited" for the
//!   SIMD scan); RDC, Rabin, "Recursive Dimensional Clustering: A Fast Algorithm for
//!   Collision Detection" (Game Programming Gems 2); the ownership masks, this crate.

use super::layout::Entry;
use super::layout::Layout;
use super::rows::first_pairs;
use super::rows::Rows;
use super::sink::Sink;
use crate::kernels::simd::low_mask;
use crate::kernels::simd::F8;
use crate::Refine;
use wide::f32x8;

/// Offsets a block of eight run rows takes together before its lanes go on one at a time
/// (see `Walker::run`).
pub(super) const RUN_STEPS: usize = 16;
const _: () = assert!(RUN_STEPS.is_multiple_of(8), "Walker::run reads its step bytes eight a word");

/// One chunk's walk state and scratch.
pub(super) struct Walker<'a, const D: usize, T> {
    pub(super) cols: Rows<'a, D>,
    pub(super) entries: &'a [T],
    pub(super) lay: Layout,
    pub(super) threshold: u64,
    pub(super) refine: Refine,
    pub(super) out: Sink<'a>,
    /// Distinct boxes of a range, `(id, row)` (RDC path).
    pub(super) uniq: Vec<(u32, u32)>,
    /// The run's running maximum of `qxhi` (range path).
    pub(super) ends: Vec<f32>,
    /// A range's rows that stand for their boxes, as `qx << 32 | row`, sorted (grouped
    /// range path).
    pub(super) order: Vec<u64>,
    /// A group's hit masks, one a run row (grouped range path).
    pub(super) hits: Vec<u8>,
    pub(super) counts: SweepCounts,
}

impl<'a, const D: usize, T: Entry> Walker<'a, D, T> {
    /// Handles every run starting in `from..to`.
    #[inline(always)]
    pub(super) fn walk<V: F8>(&mut self, from: usize, to: usize) {
        let e = self.entries;
        let mut a = from;
        // A stopped budget (too many pairs) ends the chunk at the next run.
        while a < to && !self.out.stopped {
            let head = e[a].to_u128();
            // Entries of the same column differ only below the column bits.
            let run_last = T::from_u128(head | ((1u128 << self.lay.run_from()) - 1));
            let b = gallop(e, a + 1, run_last);
            let r = gallop(e, b, T::from_u128(self.lay.last_nested(head)));
            let (m, rr) = ((b - a) as u64, (r - b) as u64);
            let crowded = m > 1 && m * (m - 1) / 2 + m * rr > self.threshold * (m + rr);
            self.counts.crowded += crowded as usize;
            if crowded
                && self.refine == Refine::Rdc
                && r - a > crate::algorithms::rdc::Rdc::<D>::default().min_group_size
            {
                self.rdc(a, b, r);
            } else {
                self.run(a, b);
                if r > b {
                    if grouped::<D>(b - a, r - b) {
                        self.counts.ranges[1] += 1;
                        self.range_grouped::<V>(a, b, r);
                    } else {
                        self.counts.ranges[0] += 1;
                        self.range(a, b, r);
                    }
                }
            }
            a = b;
        }
    }

    /// The run `a..b` against itself: sweep-and-prune along the sweep axis. Two entries of
    /// one column own their pair iff on every column axis one of them is its box's first
    /// column (see [`Layout::owns`] with equal columns).
    ///
    /// Eight rows `i..i + 8` at a time, offset by offset: step `d` tests row `i + l`
    /// against row `i + l + d` in lane `l`, while some lane's window (rows up to its box's
    /// end along `ax`) reaches that far. A lane leaves at its first row past its end (`qx`
    /// ascends), so the steps are the longest window of the eight. After [`RUN_STEPS`]
    /// steps the lanes still in go on one row at a time ([`Rows::scan`]): one long box
    /// among short ones does not make the other seven lanes wait. One row at a time is not
    /// used: a sparse run (two or three rows a window) would pay a call, a mask and a
    /// mispredicted exit a row; only dense runs (3D tiles) are slightly faster that way.
    /// `RUN_STEPS` of 8 or 32 do no better than 16. PERF: examples/demo.rs (2D and 3D
    /// uniform, 3D mixed and tiles; sweep stage).
    ///
    /// A step's hit mask goes to a byte; after the steps the bytes are read eight a word
    /// and each set bit emitted (bit `t`: lane `t % 8`, offset `t / 8 + 1`). A branch on
    /// every step's mask, then an emit of all eight lanes, is not used: it mispredicts
    /// where hits come now and then, while the words' loops end once per eight steps.
    /// PERF: examples/demo.rs (3D uniform 1M, 3D varied 10k and 100k; sweep stage).
    #[inline(always)]
    pub(super) fn run(&mut self, a: usize, b: usize) {
        let cols = self.cols;
        let (e, lay) = (self.entries, self.lay);
        let n = cols.qx.len();
        let all = low_mask(lay.c) as u32;
        let mut tested = 0;
        let mut i = a;
        while i + 1 < b && i + 8 <= n && !self.out.stopped {
            let live = if b - i >= 8 { 0xff } else { (1u32 << (b - i)) - 1 };
            let lo: [f32x8; D] = std::array::from_fn(|k| f32x8::from(&cols.lo[k][i..i + 8]));
            let hi: [f32x8; D] = std::array::from_fn(|k| f32x8::from(&cols.hi[k][i..i + 8]));
            let qh = f32x8::from(&cols.qxh[i..i + 8]);
            let fi = u64::from_le_bytes(cols.fst[i..i + 8].try_into().expect("eight bytes"));
            let mut act = live;
            let mut d = 1;
            let mut hits = [0u8; RUN_STEPS];
            while act != 0 && d <= RUN_STEPS {
                let j = i + d;
                if j + 8 > n {
                    break;
                }
                let inb = if b - j >= 8 { 0xff } else { (1u32 << (b - j)) - 1 };
                act &= inb & f32x8::from(&cols.qx[j..j + 8]).simd_le(qh).to_bitmask();
                if act == 0 {
                    break;
                }
                tested += act.count_ones() as usize;
                let mut m = act;
                for k in 0..D {
                    let ok = lo[k].simd_le(f32x8::from(&cols.hi[k][j..j + 8]))
                        & f32x8::from(&cols.lo[k][j..j + 8]).simd_le(hi[k]);
                    m &= ok.to_bitmask();
                }
                let fj = u64::from_le_bytes(cols.fst[j..j + 8].try_into().expect("eight bytes"));
                m &= first_pairs(fi | fj, all);
                hits[d - 1] = m as u8;
                d += 1;
            }
            for (wi, w8) in hits.chunks_exact(8).enumerate() {
                let mut w = u64::from_le_bytes(w8.try_into().expect("eight bytes"));
                while w != 0 {
                    let t = w.trailing_zeros() as usize;
                    let (l, dd) = (t % 8, wi * 8 + t / 8 + 1);
                    self.out.push(crate::kernels::pair_sort::key(lay.id(e[i + l]), lay.id(e[i + l + dd])));
                    w &= w - 1;
                }
            }
            // Lanes still in: the rest of their windows, a row at a time.
            while act != 0 {
                let l = act.trailing_zeros() as usize;
                tested += self.run_row(i + l, i + l + d, b);
                act &= act - 1;
            }
            i += 8;
        }
        while i < b && !self.out.stopped {
            tested += self.run_row(i, i + 1, b);
            i += 1;
        }
        self.counts.candidates += tested;
        self.counts.exact_tests += tested;
    }

    /// Run row `i` against run rows `from..b` (see [`Self::run`]); returns the rows tested.
    #[inline(always)]
    pub(super) fn run_row(&mut self, i: usize, from: usize, b: usize) -> usize {
        let cols = self.cols;
        let (e, lay) = (self.entries, self.lay);
        let (fi, oi) = (lay.first(e[i]), lay.id(e[i]));
        let out = &mut self.out;
        cols.scan::<true>(
            &cols.get(i),
            cols.qxh[i],
            from..b,
            |j| cols.first_mask(j, fi),
            |y| crate::kernels::pair_sort::key(oi, lay.id(e[y])),
            out,
        )
    }

    /// RDC over the run and the distinct boxes of its range together; inside each final
    /// group only pairs with a run entry are offered, each once (range x range pairs belong
    /// to the ranges' own runs). A run x range hit is this run's iff the run's column holds
    /// the reference point: `owns(run entry, corner of the range box)` (see [`Layout::owns`]).
    #[inline(never)]
    pub(super) fn rdc(&mut self, a: usize, b: usize, r: usize) {
        let cols = self.cols;
        let (e, lay, m) = (self.entries, self.lay, b - a);
        let mut uniq = std::mem::take(&mut self.uniq);
        uniq.clear();
        uniq.extend((b..r).map(|y| (lay.id(e[y]), y as u32)));
        uniq.sort_unstable();
        uniq.dedup_by_key(|u| u.0);
        let all = low_mask(lay.c) as u32;
        let boxes = (a..b).map(|x| cols.get(x)).chain(uniq.iter().map(|u| cols.get(u.1 as usize)));
        let (splits, tests) = crate::algorithms::rdc::refine_run(boxes, m, |x, y| {
            let ex = e[a + x];
            if y < m {
                let ey = e[a + y];
                if lay.first(ex) | lay.first(ey) == all {
                    self.out.push(crate::kernels::pair_sort::key(lay.id(ex), lay.id(ey)));
                }
            } else {
                let (id, row) = uniq[y - m];
                if lay.owns(ex, cols.corner(row as usize)) {
                    self.out.push(crate::kernels::pair_sort::key(lay.id(ex), id));
                }
            }
        });
        self.uniq = uniq;
        self.counts.rdc_splits += splits;
        self.counts.candidates += tests;
        self.counts.exact_tests += tests;
    }
}

/// Counts from one sweep.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SweepCounts {
    pub candidates: usize,
    pub exact_tests: usize,
    pub crowded: usize,
    pub rdc_splits: usize,
    /// Ranges swept row by row ([`Walker::range`]) and in groups ([`Walker::range_grouped`]).
    pub ranges: [usize; 2],
}

impl SweepCounts {
    pub(super) fn add(self, o: Self) -> Self {
        Self {
            candidates: self.candidates + o.candidates,
            exact_tests: self.exact_tests + o.exact_tests,
            crowded: self.crowded + o.crowded,
            rdc_splits: self.rdc_splits + o.rdc_splits,
            ranges: [self.ranges[0] + o.ranges[0], self.ranges[1] + o.ranges[1]],
        }
    }
}

/// Whether a run of `m` rows sweeps its range of `rr` rows in groups
/// ([`Walker::range_grouped`]) rather than row by row ([`Walker::range`]): in 3D, for a
/// range of 16 rows or more, at least a third of the run's and at most four times it.
/// - A sparser range spreads a group's starts over many run rows, each tested against
///   every lane.
/// - A denser one is a crowd under a few long boxes (planks), where the row-by-row path's
///   pieces test each range row against the few run boxes meeting its piece
///   ([`Rows::lanes_meeting`]).
/// - Not in 2D: grouping is slower there. PERF: examples/demo.rs (2D varied and 2D mixed
///   100k, sweep stage).
#[inline(always)]
pub(super) fn grouped<const D: usize>(m: usize, rr: usize) -> bool {
    D == 3 && rr >= 16 && 3 * rr >= m && rr <= 4 * m
}

/// The first index `>= from` whose entry is greater than `last` (entries sorted).
pub(super) fn gallop<T: Entry>(e: &[T], from: usize, last: T) -> usize {
    gallop_by(e, from, |&v| v <= last)
}

/// The first index `>= from` of `v` where `below` stops holding (it holds on a prefix of
/// `v[from..]`): exponential then binary search, so a short way costs a compare or two,
/// and a long one a logarithm.
#[inline(always)]
pub(super) fn gallop_by<T>(v: &[T], from: usize, below: impl Fn(&T) -> bool) -> usize {
    let mut lo = from;
    let mut step = 1;
    while lo + step <= v.len() && below(&v[lo + step - 1]) {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(v.len());
    lo + v[lo..hi].partition_point(&below)
}
