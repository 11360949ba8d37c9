//! Gather: every sorted entry's box copied into structure-of-arrays rows, and the SIMD
//! reads of those rows the sweep is made of ([`Rows`], [`Lanes`]).
//!
//! - Input: the sorted entries, the boxes and the margin.
//! - Output: the rows in entry order: each axis' `lo` and `hi` (margin applied), `qx` and
//!   `qxh` as `f32`, and the first-column flags, one array each, [`row_stride`] apart.
//! - Cost: `O(e)` for `e` entries: random reads of the boxes (prefetched
//!   `PREFETCH` entries ahead), writes in order.
//! - Parallel: a rayon map over fixed chunks; each writes its own rows.
//! - Allocation: the rows grow to `(2 D + 2) * stride` floats and the flags to `e + 8`
//!   bytes, reused across frames (and lent to the pair stage, see
//!   [`Columns::spare_rows`]).
//! - Source: the sweep-and-prune scan, P. Terdiman's box pruning ("Box pruning
//!   revisited"); the row layout and the lane masks, this crate.

use super::layout::Layout;

use super::layout::col_axes;
use super::layout::col_code;
use super::layout::Entry;
use super::sink::Sink;
use super::Columns;
use crate::kernels::par::chunk_len;
use crate::kernels::par::prefetch;
use crate::kernels::par::SendPtr;
use crate::kernels::par::PREFETCH;
use crate::kernels::simd::low_mask;
use crate::par::prelude::*;
use crate::Aabb;
use wide::f32x8;

impl<const D: usize> Columns<D> {
    /// Copies every sorted entry's box into the rows (entry order).
    pub fn gather<T: Entry>(&mut self, boxes: &[Aabb<D>], margin: f32, entries: &[T]) {
        let n = entries.len();
        let st = row_stride(n, 2 * D + 2);
        crate::kernels::par::grow_to(&mut self.rows, (2 * D + 2) * st);
        (self.stride, self.n_rows) = (st, n);
        crate::kernels::par::grow_to(&mut self.fst, n + 8);
        self.fst[n..].fill(0);
        let fst = SendPtr(self.fst.as_mut_ptr());
        let base = self.rows.as_mut_ptr();
        // SAFETY: array `m` is rows[m * st..m * st + n], inside the (2D + 2) st floats.
        let at = |m: usize| SendPtr(unsafe { base.add(m * st) });
        let lo: [SendPtr<f32>; D] = std::array::from_fn(at);
        let hi: [SendPtr<f32>; D] = std::array::from_fn(|k| at(D + k));
        let (qx, qxh) = (at(2 * D), at(2 * D + 1));
        let lay = self.layout;
        let chunk = chunk_len(n);
        entries.par_chunks(chunk).enumerate().for_each(|(ci, part)| {
            crate::kernels::simd::fast(
                #[inline(always)]
                || {
                    for (j, &e) in part.iter().enumerate() {
                        let s = ci * chunk + j;
                        if let Some(&f) = part.get(j + PREFETCH) {
                            prefetch(&boxes[lay.id(f) as usize]);
                        }
                        let g = boxes[lay.id(e) as usize].grown(margin);
                        // SAFETY: `s` ranges over 0..n, each value in exactly one task; every row
                        // array has n slots (`at`).
                        unsafe {
                            for k in 0..D {
                                lo[k].put(s, g.min[k]);
                                hi[k].put(s, g.max[k]);
                            }
                            qx.put(s, lay.qx(e) as f32);
                            qxh.put(s, self.qx_of(g.max[self.ax]) as f32);
                            fst.put(s, lay.first(e) as u8);
                        }
                    }
                },
            )
        });
    }

    /// The rows, as slices (see [`Rows`]).
    #[inline(always)]
    pub fn rows(&self) -> Rows<'_, D> {
        let (st, n) = (self.stride, self.n_rows);
        let at = |m: usize| &self.rows[m * st..m * st + n];
        Rows {
            lo: std::array::from_fn(at),
            hi: std::array::from_fn(|k| at(D + k)),
            qx: at(2 * D),
            qxh: at(2 * D + 1),
            fst: &self.fst,
            c: self.layout.c,
            owner: self,
        }
    }

    /// Shifted Morton code of row `s`'s quantised lower corner on the column axes.
    #[inline(always)]
    pub(super) fn corner(&self, s: usize) -> u64 {
        let cols = col_axes::<D>(self.ax);
        let q = cols.map(|k| self.quant.coord(k, self.rows[k * self.stride + s]));
        col_code(self.layout.c, q).checked_shr(self.layout.c * self.layout.l_min).unwrap_or(0)
    }
}

/// Floats from the start of one row array to the next, for `arrays` (at most 8) arrays of `n` rows:
/// `n` rounded up to a cache line (16 floats), and as many lines more as put the arrays'
/// starts at least four lines apart from each other modulo a 4 KiB page. Row `s` of every
/// array then lies in a different L1 set; arrays a whole number of pages apart (as
/// separate allocations of this size are) put row `s` of every array in one set, and a
/// sweep step reads eight or more of them at once (4K aliasing). The padding is at most
/// seven lines an array (checked by a test for every `n` modulo a page).
pub(super) fn row_stride(n: usize, arrays: usize) -> usize {
    const PAGE: usize = 1024;
    const LINE: usize = 16;
    let arrays = arrays.min(8);
    let apart = |st: usize| {
        // At most eight arrays (2 D + 2, D <= 3): on the stack, not an allocation a try.
        let mut at = [0usize; 8];
        for (m, a) in at[..arrays].iter_mut().enumerate() {
            *a = m * st % PAGE;
        }
        let at = &mut at[..arrays];
        at.sort_unstable();
        at.iter().zip(at.iter().cycle().skip(1)).all(|(&a, &b)| (b + PAGE - a) % PAGE >= 4 * LINE)
    };
    let st = n.next_multiple_of(LINE);
    (0..PAGE / LINE).map(|k| st + k * LINE).find(|&st| apart(st)).unwrap_or(st)
}

/// The rows of [`Columns`] as slices, `n` rows each (`fst` has eight rows of padding).
#[derive(Clone, Copy)]
pub(crate) struct Rows<'a, const D: usize> {
    pub(super) lo: [&'a [f32]; D],
    pub(super) hi: [&'a [f32]; D],
    pub(super) qx: &'a [f32],
    pub(super) qxh: &'a [f32],
    pub(super) fst: &'a [u8],
    /// Column axes.
    pub(super) c: u32,
    pub(super) owner: &'a Columns<D>,
}

impl<const D: usize> Rows<'_, D> {
    /// Row `s` as a box.
    #[inline(always)]
    pub(super) fn get(&self, s: usize) -> Aabb<D> {
        Aabb { min: std::array::from_fn(|k| self.lo[k][s]), max: std::array::from_fn(|k| self.hi[k][s]) }
    }

    /// The bounding box of rows `from..to` (not empty).
    #[inline(always)]
    pub(super) fn bounds_of(&self, from: usize, to: usize) -> Aabb<D> {
        let mut u = self.get(from);
        for s in from + 1..to {
            for k in 0..D {
                let (l, h) = (self.lo[k][s], self.hi[k][s]);
                u.min[k] = if l < u.min[k] { l } else { u.min[k] };
                u.max[k] = if h > u.max[k] { h } else { u.max[k] };
            }
        }
        u
    }

    /// The run rows `a..b` whose boxes overlap `bx`, as SIMD lanes, when there are at most
    /// eight of them; `None` when there are more.
    #[inline(always)]
    pub(super) fn lanes_meeting(&self, a: usize, b: usize, bx: &Aabb<D>) -> Option<Lanes<D>> {
        let mut lanes = Lanes::<D>::empty();
        let mut put = |x: usize| {
            if lanes.len == 8 {
                return false;
            }
            let i = lanes.len;
            for k in 0..D {
                lanes.lo[k][i] = self.lo[k][x];
                lanes.hi[k][i] = self.hi[k][x];
            }
            lanes.fst[i] = self.fst[x];
            lanes.row[i] = x as u32;
            lanes.len += 1;
            true
        };
        let n = self.qx.len();
        let mut j = a;
        while j < b && j + 8 <= n {
            let live = if b - j >= 8 { 0xff } else { (1u32 << (b - j)) - 1 };
            let mut m = crate::algorithms::sap::overlap_mask8(&self.lo, &self.hi, j, bx, 0) & live;
            while m != 0 {
                if !put(j + m.trailing_zeros() as usize) {
                    return None;
                }
                m &= m - 1;
            }
            j += 8;
        }
        for x in j..b {
            if bx.overlaps(&self.get(x)) && !put(x) {
                return None;
            }
        }
        Some(lanes)
    }

    /// Tests box `bx` against `rows` in order while their `qx` is at most `qh`
    /// (rows sorted by `qx`), and pushes `key(row)` to `out` for each row whose box
    /// overlaps `bx` and whose lane is set in `pre(j)`, a mask over rows `j..j + 8` (bit 0
    /// is row `j`), asked only for blocks with an overlap. `key` may be asked for rows that
    /// are not pushed (all eight of a block, [`Sink::push_masked`]).
    /// Returns the rows tested.
    ///
    /// `BATCH`: a block's hits go to a 64-row word, emitted bit by bit once the word is
    /// full or the scan ends, for long windows (a run row's, after
    /// [`Walker::run`](super::walker::Walker::run)'s steps); else each block's hits are
    /// emitted at once, eight lanes written ([`Sink::push_masked`]), for windows of a few
    /// blocks (a range row's).
    ///
    /// Eight rows a step with `wide::f32x8`, reading past `to` (masked) while the arrays
    /// last; the `qx` mask is a prefix because `qx` ascends. `BATCH` is for run rows only:
    /// it is faster on their long windows and slower on range rows' short ones.
    /// PERF: examples/demo.rs (3D varied and 2D varied, 10k and 100k, sweep stage).
    #[inline(always)]
    pub(super) fn scan<const BATCH: bool>(
        &self,
        bx: &Aabb<D>,
        qh: f32,
        rows: std::ops::Range<usize>,
        mut pre: impl FnMut(usize) -> u32,
        key: impl Fn(usize) -> u64,
        out: &mut Sink<'_>,
    ) -> usize {
        let n = self.qx.len();
        let (mut j, to) = (rows.start, rows.end);
        let mut tested = 0;
        let emit = |w: u64, j0: usize, out: &mut Sink<'_>| {
            let mut w = w;
            while w != 0 {
                out.push(key(j0 + w.trailing_zeros() as usize));
                w &= w - 1;
            }
        };
        let (mut word, mut j0) = (0u64, j);
        while j < to && j + 8 <= n {
            let xs = f32x8::from(&self.qx[j..j + 8]);
            let live = if to - j >= 8 { 0xff } else { (1u32 << (to - j)) - 1 };
            let in_x = xs.simd_le(f32x8::splat(qh)).to_bitmask() & live;
            // A prefix (`qx` ascends): its length is a trailing-zero count (PERF: baseline
            // x86_64 has no popcnt instruction; `count_ones` is a dozen instructions).
            tested += (!in_x).trailing_zeros() as usize;
            let m = in_x & crate::algorithms::sap::overlap_mask8(&self.lo, &self.hi, j, bx, 0);
            if !BATCH {
                if m != 0 {
                    let m = m & pre(j);
                    if m != 0 {
                        out.push_masked(m, |l| key(j + l));
                    }
                }
            } else if m != 0 {
                word |= ((m & pre(j)) as u64) << (j - j0);
            }
            if in_x != 0xff {
                emit(word, j0, out);
                return tested;
            }
            j += 8;
            if j - j0 == 64 {
                emit(word, j0, out);
                (word, j0) = (0, j);
            }
        }
        emit(word, j0, out);
        while j < to && self.qx[j] <= qh {
            tested += 1;
            if bx.overlaps(&self.get(j)) && pre(j) & 1 != 0 {
                out.push(key(j));
            }
            j += 1;
        }
        tested
    }

    /// The lanes of rows `j..j + 8` (bit 0 is row `j`) whose first-column flags complete
    /// `fi` on every column axis: the pairs a run owns (see
    /// [`Walker::run`](super::walker::Walker::run)).
    /// PERF: a mask before the emit loop, not a test after each hit (a mispredicted branch
    /// per duplicate hit).
    #[inline(always)]
    pub(super) fn first_mask(&self, j: usize, fi: u32) -> u32 {
        let v = u64::from_le_bytes(self.fst[j..j + 8].try_into().expect("eight bytes"));
        // Each row's flags or'ed with `fi`, then the run's rule on the pair.
        first_pairs(v | (fi as u64 * 0x0101_0101_0101_0101), low_mask(self.c) as u32)
    }

    /// See [`Columns::corner`].
    #[inline(always)]
    pub(super) fn corner(&self, s: usize) -> u64 {
        self.owner.corner(s)
    }
}

/// The lanes whose byte of `v` (first-column flags of two rows, or'ed) is `all`: bit `k`
/// for byte `k`. Flags are at most two bits.
#[inline(always)]
pub(super) fn first_pairs(v: u64, all: u32) -> u32 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Byte k is zero iff row pair k has every flag.
    let t = v ^ (all as u64 * ONES);
    let bad = (t | t >> 1) & ONES;
    // Byte k's low bit to bit 56 + k (no carries: each sum bit has one source).
    !(bad.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32 & 0xff
}

/// Up to eight run boxes in SIMD lanes (structure of arrays), for testing one range row
/// against all of them at once (see [`Rows::lanes_meeting`]). Empty lanes can overlap
/// nothing: their bounds are `+inf..-inf`.
pub(super) struct Lanes<const D: usize> {
    pub(super) lo: [[f32; 8]; D],
    pub(super) hi: [[f32; 8]; D],
    /// The boxes' first-column flags ([`Layout::first`]).
    pub(super) fst: [u8; 8],
    /// Their rows.
    pub(super) row: [u32; 8],
    pub(super) len: usize,
}

impl<const D: usize> Lanes<D> {
    pub(super) fn empty() -> Self {
        Self {
            lo: [[f32::INFINITY; 8]; D],
            hi: [[f32::NEG_INFINITY; 8]; D],
            fst: [0; 8],
            row: [0; 8],
            len: 0,
        }
    }

    /// Tests range rows `y0..y1` against the lanes: the rows that represent their boxes in
    /// the run's column (`run_start`), the exact box test and the ownership mask (as in
    /// `Walker::range`), one SIMD step a row. Returns the tests made.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn test<T: Entry>(
        &self,
        cols: &Rows<'_, D>,
        e: &[T],
        lay: Layout,
        run_start: u64,
        y0: usize,
        y1: usize,
        out: &mut Sink<'_>,
    ) -> usize {
        if self.len == 0 {
            return 0;
        }
        let lo = self.lo.map(f32x8::from);
        let hi = self.hi.map(f32x8::from);
        // The lanes that own their pair with a range row of first flags `fi`: those whose
        // flags complete `fi` (see `Walker::range`).
        let all = low_mask(lay.c) as u32;
        let fst = u64::from_le_bytes(self.fst);
        let own: [u32; 4] =
            std::array::from_fn(|fi| first_pairs(fst | (fi as u64 * 0x0101_0101_0101_0101), all));
        let mut tested = 0;
        for y in y0..y1 {
            let ey = e[y];
            if !lay.represents(ey, run_start) {
                continue;
            }
            tested += self.len;
            let mut m = own[lay.first(ey) as usize & 3];
            for k in 0..D {
                let ok =
                    lo[k].simd_le(f32x8::splat(cols.hi[k][y])) & f32x8::splat(cols.lo[k][y]).simd_le(hi[k]);
                m &= ok.to_bitmask();
            }
            if m == 0 {
                continue;
            }
            let idy = lay.id(ey);
            while m != 0 {
                let x = self.row[m.trailing_zeros() as usize] as usize;
                out.push(crate::kernels::pair_sort::key(lay.id(e[x]), idy));
                m &= m - 1;
            }
        }
        tested
    }
}
