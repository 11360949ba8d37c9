//! The structure-of-arrays box store, and Morton cell generation from it.
//!
//! - Input: the user's boxes (validated), the margin, optional grid bounds.
//! - Output: [`Store`]: the live (not inverted by a negative margin) boxes, grown by the
//!   margin, one contiguous `f32` array per axis and bound, **in Morton order** of their
//!   lower corners (a 21-bit prefix is enough for locality), with `orig[s]` mapping a store
//!   index back to the input index; each box's cell level and cell count; and the key
//!   [`Layout`] of the cell entries.
//! - Why Morton order: the sweep tests boxes that share a cell, which are near each other in
//!   space, hence near each other in the store: the exact tests read warm cache lines
//!   instead of one random line per axis and bound.
//! - Cells: a box covers the aligned cells at its level `l` (cell side `2^l` grid units)
//!   that its quantised extent touches. The seed takes the smallest level whose cell covers
//!   the box's largest extent (at most 2 cells per axis, so at most 2^D); big and long thin
//!   boxes go finer while a cost model says it pays, within `Config::max_cells_per_box`
//!   (see `choose_level`).
//! - Parallel: every pass is a rayon map over boxes or chunks of boxes; the order sort is
//!   the crate's radix sort. Output independent of the thread count.
//! - Allocates: the arrays above (reused across frames by `Broadphase`).

use crate::morton::{self, grid_bits, Quantizer};
use crate::radix_sort::RadixKey;
use crate::{Aabb, Config};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Boxes per parallel work item.
const CHUNK: usize = 4096;
/// The order-key prefix of a box a negative margin turned inside out (sorts after all live).
const DEAD: u64 = 1 << 21;

/// A cell-entry record: a radix-sortable integer holding `(start, inverse level, store id)`.
pub(crate) trait Entry: RadixKey + Ord {
    fn from_u128(v: u128) -> Self;
    fn to_u128(self) -> u128;
    /// The low 64 bits of `self >> s` (every field but the cell fits 64 bits).
    fn field(self, s: u32) -> u64;
}
impl Entry for u64 {
    #[inline(always)]
    fn from_u128(v: u128) -> Self {
        v as u64
    }
    #[inline(always)]
    fn to_u128(self) -> u128 {
        self as u128
    }
    #[inline(always)]
    fn field(self, s: u32) -> u64 {
        // Layouts keep every field shift below the width (key_bits >= 1).
        debug_assert!(s < 64);
        self >> s
    }
}
impl Entry for u128 {
    #[inline(always)]
    fn from_u128(v: u128) -> Self {
        v
    }
    #[inline(always)]
    fn to_u128(self) -> u128 {
        self
    }
    #[inline(always)]
    fn field(self, s: u32) -> u64 {
        debug_assert!(s < 128);
        (self >> s) as u64
    }
}

/// Bit layout of a cell entry, low to high:
///
/// ```text
/// [ id: id_bits ][ first: D ][ l_max - level: lvl_bits ][ start >> (D * l_min): key_bits ]
/// ```
///
/// `start` is the Morton code of the cell's lowest grid point; every cell's start has its
/// low `D * level >= D * l_min` bits zero, so they are dropped. `first` bit `k` is set when
/// the cell is the box's first on axis `k` (it holds the box's lower bound on that axis):
/// with it the sweep decides which entry pair owns a box pair from the entry bits alone
/// (see [`Layout::owns`]). The sort ignores the id and `first` bits. Sorting by everything above
/// the id gives pre-order: cells by start, and at equal start the larger cell first, so a
/// cell's entries are followed by exactly the entries of the cells nested in it.
/// INVARIANT: `bits() <= 64` for `u64` entries, `<= 128` for `u128`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Layout {
    pub id_bits: u32,
    /// Flag bits: `d`.
    pub flag_bits: u32,
    pub lvl_bits: u32,
    pub key_bits: u32,
    pub l_min: u32,
    pub l_max: u32,
    pub d: u32,
}

impl Layout {
    /// Total bits used.
    pub fn bits(&self) -> u32 {
        self.sort_from() + self.lvl_bits + self.key_bits
    }
    /// The lowest bit the sort looks at.
    pub fn sort_from(&self) -> u32 {
        self.id_bits + self.flag_bits
    }
    #[inline(always)]
    pub fn pack(&self, start_shifted: u64, level: u32, first: u32, id: u32) -> u128 {
        let cell = (start_shifted as u128) << self.lvl_bits | (self.l_max - level) as u128;
        (cell << self.flag_bits | first as u128) << self.id_bits | id as u128
    }
    #[inline(always)]
    pub fn first<T: Entry>(&self, e: T) -> u32 {
        (e.field(self.id_bits) & low_mask(self.flag_bits)) as u32
    }
    #[inline(always)]
    pub fn id<T: Entry>(&self, e: T) -> u32 {
        (e.field(0) & low_mask(self.id_bits)) as u32
    }
    /// The cell part (everything above the id and flags): equal for entries of one cell.
    #[inline(always)]
    pub fn cell(&self, e: u128) -> u128 {
        e >> self.sort_from()
    }
    #[inline(always)]
    pub fn level<T: Entry>(&self, e: T) -> u32 {
        self.l_max - (e.field(self.sort_from()) & low_mask(self.lvl_bits)) as u32
    }
    /// Shifted start (`start >> D * l_min`; at most 64 bits).
    #[inline(always)]
    pub fn start<T: Entry>(&self, e: T) -> u64 {
        e.field(self.sort_from() + self.lvl_bits)
    }
    /// The largest entry value whose cell starts inside the cell of `e`: entries after `e`
    /// up to this value are exactly those nested in `e`'s cell (pre-order).
    #[inline(always)]
    pub fn last_nested(&self, e: u128) -> u128 {
        let end = self.start(e) as u128 + (1u128 << (self.d * (self.level(e) - self.l_min)));
        (end << (self.lvl_bits + self.sort_from())) - 1
    }

    /// Does entry `e` own the pair of its box `B` with a box `A` whose quantised lower
    /// corner has the shifted Morton code `ma` (`morton(qlo(A)) >> D * l_min`)? `e` must be
    /// the finer (or equal) cell of the two entries.
    ///
    /// The owner is `B`'s cell holding `p = max(qlo(A), qlo(B))`. On axis `k` that cell's
    /// coordinate is `max(a_k, b0_k)` with `a_k = qlo(A)_k >> level` and `b0_k` `B`'s first
    /// cell. If `e` is `B`'s first cell on `k` (`e_k == b0_k`) it holds `p_k` iff
    /// `e_k >= a_k`; otherwise (`e_k > b0_k`) iff `e_k == a_k`. Interleaving keeps each
    /// axis' bit order, so masked codes compare like the coordinates themselves.
    #[inline(always)]
    pub fn owns<const D: usize, T: Entry>(&self, e: T, ma: u64) -> bool {
        let start = self.start(e);
        let a = ma & !low_mask(D as u32 * (self.level(e) - self.l_min));
        let first = self.first(e);
        // Axes that are not the box's first: the coordinates must be equal (one xor).
        let same = (start ^ a) & !FIRST_AXES[D][first as usize & 7] == 0;
        let mut ge = true;
        for k in 0..D {
            let m = AXIS_MASK[D][k];
            ge &= (first >> k & 1 == 0) | (start & m >= a & m);
        }
        same & ge
    }
}

/// Bits of axis `k` in a `d`-dimensional Morton code.
const AXIS_MASK: [[u64; 3]; 4] = [
    [0, 0, 0],
    [u64::MAX, 0, 0],
    [0x5555_5555_5555_5555, 0xaaaa_aaaa_aaaa_aaaa, 0],
    [0x9249_2492_4924_9249, 0x2492_4924_9249_2492, 0x4924_9249_2492_4924],
];

/// `FIRST_AXES[d][flags]`: the Morton bits of the axes whose flag is set.
const FIRST_AXES: [[u64; 8]; 4] = {
    let mut t = [[0u64; 8]; 4];
    let mut d = 1;
    while d <= 3 {
        let mut f = 0;
        while f < 8 {
            let mut k = 0;
            while k < d {
                if f >> k & 1 == 1 {
                    t[d][f] |= AXIS_MASK[d][k];
                }
                k += 1;
            }
            f += 1;
        }
        d += 1;
    }
    t
};

/// The low `bits` bits set (all of them from 64 on).
#[inline(always)]
const fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// `v << s`, zero when `s >= 64` (the 2D level-32 cell is the whole grid, start 0).
#[inline(always)]
fn shl64(v: u64, s: u32) -> u64 {
    if s >= 64 {
        0
    } else {
        v << s
    }
}

#[inline(always)]
fn shr32(v: u32, s: u32) -> u32 {
    if s >= 32 {
        0
    } else {
        v >> s
    }
}

/// A box with its Morton-order key, the record the store's order sort moves: sorting whole
/// records streams memory, where sorting keys and then gathering boxes reads the input at
/// random (PERF: the gather cost ~3x the sort at 1M boxes, `docs/BENCHMARKS.md`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Keyed<const D: usize> {
    /// `morton prefix << 40 | input index`.
    key: u64,
    b: Aabb<D>,
}
// SAFETY: `repr(C)` of a u64 and f32 arrays; sizes 16/24/32 bytes for D = 1/2/3 are
// multiples of the 8-byte alignment, so there is no padding; any bit pattern is valid.
unsafe impl<const D: usize> bytemuck::Zeroable for Keyed<D> {}
// SAFETY: as above.
unsafe impl<const D: usize> bytemuck::Pod for Keyed<D> {}
const _: () = assert!(std::mem::size_of::<Keyed<3>>() == 32 && std::mem::size_of::<Keyed<2>>() == 24);

impl<const D: usize> RadixKey for Keyed<D> {
    const BITS: u32 = 64;
    #[inline(always)]
    fn digit(self, shift: u32) -> usize {
        ((self.key >> shift) & (crate::radix_sort::DIGIT_MASK)) as usize
    }
}

/// The live boxes in Morton order, structure of arrays. See the module header.
#[derive(Debug)]
pub(crate) struct Store<const D: usize> {
    /// `lo[k][s]`, `hi[k][s]`: bounds of store box `s` on axis `k`, margin applied.
    pub lo: [Vec<f32>; D],
    pub hi: [Vec<f32>; D],
    /// Input index of store box `s`.
    pub orig: Vec<u32>,
    /// Cell level of store box `s`.
    pub level: Vec<u8>,
    /// Cells of store box `s` at its level (at most `max_cells_per_box <= 4096`).
    pub count: Vec<u16>,
    /// Morton code of store box `s`'s quantised lower corner (the sweep's ownership check).
    pub corner: Vec<u64>,
    /// Total cell entries (sum of every box's count at its level).
    pub cells: usize,
    pub quant: Quantizer<D>,
    pub layout: Layout,
}

impl<const D: usize> Default for Store<D> {
    fn default() -> Self {
        Self {
            lo: std::array::from_fn(|_| Vec::new()),
            hi: std::array::from_fn(|_| Vec::new()),
            orig: Vec::new(),
            level: Vec::new(),
            count: Vec::new(),
            corner: Vec::new(),
            cells: 0,
            quant: Quantizer::new([0.0; D], [0.0; D]),
            layout: Layout::default(),
        }
    }
}

/// A raw pointer for disjoint parallel writes.
#[derive(Clone, Copy)]
struct Out<T>(*mut T);
// SAFETY: only used to write each index from exactly one task (see `build`).
unsafe impl<T: Send> Send for Out<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Out<T> {}
impl<T> Out<T> {
    /// SAFETY: `i` is in bounds and written by no other task.
    #[inline(always)]
    unsafe fn put(self, i: usize, v: T) {
        self.0.add(i).write(v)
    }
}

impl<const D: usize> Store<D> {
    /// Number of live boxes.
    pub fn len(&self) -> usize {
        self.orig.len()
    }

    /// Store box `s`.
    #[inline(always)]
    pub fn get(&self, s: usize) -> Aabb<D> {
        Aabb { min: std::array::from_fn(|k| self.lo[k][s]), max: std::array::from_fn(|k| self.hi[k][s]) }
    }

    /// Quantised lower corner of store box `s`.
    #[inline(always)]
    pub fn qlo(&self, s: usize) -> [u32; D] {
        std::array::from_fn(|k| self.quant.coord(k, self.lo[k][s]))
    }

    /// Fills the store from validated `boxes`. `order` and `scratch` are working memory
    /// (the caller lends the cell-entry buffers, which are free at this stage).
    pub fn build(
        &mut self,
        boxes: &[Aabb<D>],
        config: &Config<D>,
        order: &mut Vec<u64>,
        scratch: &mut Vec<u64>,
    ) {
        let m = config.margin;
        let bits = grid_bits(D);
        // 1. Grid bounds: given, or a parallel reduction over the live grown boxes.
        let (lo, hi) = match config.bounds {
            Some(b) => (b.min, b.max),
            None => boxes
                .par_iter()
                .with_min_len(4096)
                .map(|b| b.grown(m))
                .filter(|g| !g.is_inverted())
                .fold(
                    || ([f32::INFINITY; D], [f32::NEG_INFINITY; D]),
                    |(mut lo, mut hi), g| {
                        for k in 0..D {
                            lo[k] = lo[k].min(g.min[k]);
                            hi[k] = hi[k].max(g.max[k]);
                        }
                        (lo, hi)
                    },
                )
                .reduce(
                    || ([f32::INFINITY; D], [f32::NEG_INFINITY; D]),
                    |(mut a, mut b), (c, d)| {
                        for k in 0..D {
                            a[k] = a[k].min(c[k]);
                            b[k] = b[k].max(d[k]);
                        }
                        (a, b)
                    },
                ),
        };
        // No live box: the reduction left +inf..-inf; any finite grid will do.
        let (lo, hi) = if lo[0] <= hi[0] { (lo, hi) } else { ([0.0; D], [0.0; D]) };
        // Grown coordinates of finite boxes may overflow to +-inf with a huge margin; the
        // quantiser works in f64 and clamps, so only clamp the grid bounds themselves.
        let lo = lo.map(|x| x.max(f32::MIN));
        let hi = hi.map(|x| x.min(f32::MAX));
        let quant = Quantizer::new(lo, hi);
        self.quant = quant;

        // 2. Morton order of the live boxes: key = top 21 bits of the lower corner's code
        //    (with the dead flag above them, 22 bits: two 11-bit radix passes).
        //    The records borrow the entry buffers' memory (free at this stage).
        let code_bits = D as u32 * bits;
        let top = code_bits.saturating_sub(21);
        let n_in = boxes.len();
        let words = n_in * std::mem::size_of::<Keyed<D>>() / 8;
        // Every record slot is written below; grow_to only zero-fills new capacity.
        crate::radix_sort::grow_to(order, words);
        crate::radix_sort::grow_to(scratch, words);
        let recs: &mut [Keyed<D>] = bytemuck::cast_slice_mut(&mut order[..]);
        let live = AtomicUsize::new(0);
        recs.par_chunks_mut(CHUNK).zip(boxes.par_chunks(CHUNK)).enumerate().for_each(|(c, (dst, src))| {
            for (j, (r, b)) in dst.iter_mut().zip(src).enumerate() {
                let g = b.grown(m);
                let i = (c * CHUNK + j) as u64;
                // A dead (inverted) box sorts last: its prefix 2^21 exceeds every live one.
                let k = if g.is_inverted() {
                    DEAD << 40
                } else {
                    (morton::encode(quant.point(&g.min)) >> top) << 40
                };
                *r = Keyed { key: k | i, b: g };
            }
            live.fetch_add(src.iter().filter(|b| !b.grown(m).is_inverted()).count(), Relaxed);
        });
        let n = live.into_inner();
        let (a, b) = (&mut order[..words], &mut scratch[..words]);
        let (ra, rb): (&mut [Keyed<D>], &mut [Keyed<D>]) =
            (bytemuck::cast_slice_mut(a), bytemuck::cast_slice_mut(b));
        let in_b = crate::radix_sort::sort_slices(ra, rb, 40..62, 0);
        let recs: &[Keyed<D>] = if in_b { rb } else { ra };
        let recs = &recs[..n];

        // 3. Unpack into the SoA arrays (sequential reads and writes), with each box's level.
        for k in 0..D {
            crate::radix_sort::grow_to(&mut self.lo[k], n);
            crate::radix_sort::grow_to(&mut self.hi[k], n);
        }
        crate::radix_sort::grow_to(&mut self.orig, n);
        crate::radix_sort::grow_to(&mut self.level, n);
        crate::radix_sort::grow_to(&mut self.count, n);
        crate::radix_sort::grow_to(&mut self.corner, n);
        let count_out = Out(self.count.as_mut_ptr());
        let corner_out = Out(self.corner.as_mut_ptr());
        let lo_out: [Out<f32>; D] = std::array::from_fn(|k| Out(self.lo[k].as_mut_ptr()));
        let hi_out: [Out<f32>; D] = std::array::from_fn(|k| Out(self.hi[k].as_mut_ptr()));
        let orig_out = Out(self.orig.as_mut_ptr());
        let level_out = Out(self.level.as_mut_ptr());
        let budget = config.max_cells_per_box as u64;
        // Boxes per grid-unit volume, for the level cost model (an axis of zero extent is
        // one grid unit thick).
        let world: f64 = (0..D).map(|k| if lo[k] < hi[k] { pow2(bits) } else { 1.0 }).product();
        let lambda = n as f64 / world * cost_ratio();
        let (l_min, l_max, cells) = recs
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(c, part)| {
                let (mut l_min, mut l_max, mut cells) = (u32::MAX, 0, 0u64);
                for (j, r) in part.iter().enumerate() {
                    let s = c * CHUNK + j;
                    let g = r.b;
                    let qlo = quant.point(&g.min);
                    let (l, count) = choose_level(qlo, quant.point(&g.max), budget, bits, lambda);
                    // SAFETY: `s` ranges over 0..n, each value in exactly one task, and the arrays
                    // have length n (initialised by grow_to).
                    unsafe {
                        for k in 0..D {
                            lo_out[k].put(s, g.min[k]);
                            hi_out[k].put(s, g.max[k]);
                        }
                        orig_out.put(s, r.key as u32);
                        level_out.put(s, l as u8);
                        count_out.put(s, count as u16);
                        corner_out.put(s, morton::encode(qlo));
                    }
                    l_min = l_min.min(l);
                    l_max = l_max.max(l);
                    cells += count;
                }
                (l_min, l_max, cells)
            })
            .reduce(|| (u32::MAX, 0, 0), |a, b| (a.0.min(b.0), a.1.max(b.1), a.2 + b.2));
        let l_min = l_min.min(l_max);
        self.cells = cells as usize;
        let id_bits = usize::BITS - n.saturating_sub(1).leading_zeros();
        let lvl_bits = u32::BITS - (l_max - l_min).leading_zeros();
        self.layout = Layout {
            id_bits,
            flag_bits: D as u32,
            lvl_bits,
            // At least one bit, so that the start field's shift stays below the width
            // even when every box is a whole-grid cell.
            key_bits: (D as u32 * (bits - l_min)).max(1),
            l_min,
            l_max,
            d: D as u32,
        };
    }

    /// Writes every box's cell entries into `out` (resized to `self.cells`), in parallel:
    /// each chunk of boxes counts its cells, a prefix over chunks gives each its slice.
    pub fn write_cells<T: crate::store::Entry>(&self, out: &mut Vec<T>) {
        crate::radix_sort::grow_to(out, self.cells);
        let n = self.len();
        let chunk_cells: Vec<usize> = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| self.count[c * CHUNK..((c + 1) * CHUNK).min(n)].iter().map(|&k| k as usize).sum())
            .collect();
        let mut parts = Vec::with_capacity(chunk_cells.len());
        let mut rest = &mut out[..];
        for &len in &chunk_cells {
            let (head, tail) = rest.split_at_mut(len);
            parts.push(head);
            rest = tail;
        }
        let layout = self.layout;
        parts.into_par_iter().enumerate().for_each(|(c, dst)| {
            let mut at = 0;
            for s in c * CHUNK..((c + 1) * CHUNK).min(n) {
                let level = self.level[s] as u32;
                self.for_each_cell(s, |start, first| {
                    dst[at] = T::from_u128(layout.pack(start, level, first, s as u32));
                    at += 1;
                });
            }
            debug_assert_eq!(at, dst.len());
        });
    }

    /// Calls `f(shifted start, first-on-axis flags)` for each cell of store box `s`.
    #[inline]
    fn for_each_cell(&self, s: usize, mut f: impl FnMut(u64, u32)) {
        let l = self.level[s] as u32;
        let lay = &self.layout;
        let qlo = self.qlo(s);
        let qhi: [u32; D] = std::array::from_fn(|k| self.quant.coord(k, self.hi[k][s]));
        let c0: [u32; D] = std::array::from_fn(|k| shr32(qlo[k], l));
        let c1: [u32; D] = std::array::from_fn(|k| shr32(qhi[k], l));
        let shift = D as u32 * (l - lay.l_min);
        let mut c = c0;
        loop {
            let mut first = 0;
            for k in 0..D {
                first |= ((c[k] == c0[k]) as u32) << k;
            }
            f(shl64(morton::encode(c), shift), first);
            // Odometer over the axes.
            let mut k = 0;
            loop {
                if k == D {
                    return;
                }
                if c[k] < c1[k] {
                    c[k] += 1;
                    break;
                }
                c[k] = c0[k];
                k += 1;
            }
        }
    }
}

/// Cells a box spans at level `l` (grid side `2^l`).
#[inline(always)]
fn count_at<const D: usize>(qlo: &[u32; D], qhi: &[u32; D], l: u32) -> u64 {
    let mut c = 1u64;
    for k in 0..D {
        c *= (shr32(qhi[k], l) - shr32(qlo[k], l)) as u64 + 1;
    }
    c
}

/// The level of a box with quantised corners `qlo..=qhi` and its cell count.
///
/// Start from the seed's level: the smallest whose cell side `2^l` exceeds the largest
/// extent, so the box spans at most 2 cells per axis. Then go one level finer while that
/// lowers the box's estimated cost, within `budget` cells:
///
/// `cost(l) = cells(l) + lambda * cells(l) * 2^(D l)`
///
/// The first term is the per-entry work (generate, sort, walk). The second is the
/// candidates: the other boxes in the volume the cells cover. `lambda` is the boxes per
/// grid-unit volume, times the candidate-to-entry cost ratio. Small boxes keep the seed's
/// level (their cells hold few others). Big boxes and long thin ones (planks and walls)
/// go finer, so a big box does not scan a volume up to 64 times its own. The seed always
/// keeps its level. PERF: the ratio is measured (`docs/BENCHMARKS.md`).
#[inline]
pub(crate) fn choose_level<const D: usize>(
    qlo: [u32; D],
    qhi: [u32; D],
    budget: u64,
    bits: u32,
    lambda: f64,
) -> (u32, u64) {
    let mut ext = 0u32;
    for k in 0..D {
        ext = ext.max(qhi[k] - qlo[k]);
    }
    let mut l = (u32::BITS - ext.leading_zeros()).min(bits);
    let mut c = count_at(&qlo, &qhi, l);
    let cost = |l: u32, c: u64| c as f64 * (1.0 + lambda * pow2(D as u32 * l));
    while l > 0 {
        let finer = count_at(&qlo, &qhi, l - 1);
        if finer > budget || cost(l - 1, finer) >= cost(l, c) {
            break;
        }
        l -= 1;
        c = finer;
    }
    (l, c)
}

/// `2^e` for `e < 1024`, exactly, without a libm call (PERF: `f64::exp2` is one).
#[inline(always)]
fn pow2(e: u32) -> f64 {
    f64::from_bits((1023 + e as u64) << 52)
}

/// Candidate cost over entry cost, times entries per box, for the level model.
/// PERF: 0.05, 0.3, 1 and 3 were tried on the 1M 3D uniform, varied and mixed scenes; 1 was
/// fastest on uniform and mixed, varied was flat (`docs/BENCHMARKS.md`).
fn cost_ratio() -> f64 {
    1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_level_for_cubes_finer_for_planks() {
        // A cube 10 units wide: level 4 (cells of 16), at most 8 cells.
        // Sparse scene (one box per 2^15 grid units): a cube 10 units wide keeps the seed
        // level 4 (cells of 16), 2 per axis.
        let sparse = 1.0 / (1u64 << 15) as f64;
        let (l, c) = choose_level::<3>([6, 6, 6], [16, 16, 16], 64, 21, sparse);
        assert_eq!((l, c), (4, 8));
        // Dense scene (one box per grid unit): the same cube goes finer, within the budget.
        let (l, c) = choose_level::<3>([6, 6, 6], [16, 16, 16], 64, 21, 1.0);
        assert!(l < 4 && c <= 64, "l={l} c={c}");
        // A plank 1000 long, 1 thick, in a moderately dense scene: refined until the
        // budget stops it.
        let (l, c) = choose_level::<3>([0, 0, 0], [1000, 1, 1], 64, 21, 1.0 / 64.0);
        assert!(l < 10 && c <= 64, "l={l} c={c}");
        // A point.
        assert_eq!(choose_level::<2>([5, 5], [5, 5], 16, 32, 1.0), (0, 1));
        // The whole grid, with no density to speak of.
        assert_eq!(choose_level::<3>([0; 3], [(1 << 21) - 1; 3], 8, 21, 0.0), (21, 1));
        assert_eq!(choose_level::<2>([0; 2], [u32::MAX; 2], 4, 32, 0.0), (32, 1));
    }

    #[test]
    fn layout_round_trips() {
        let lay = Layout { id_bits: 20, flag_bits: 3, lvl_bits: 3, key_bits: 30, l_min: 5, l_max: 9, d: 3 };
        let e = lay.pack(12345, 7, 5, 999);
        assert_eq!(lay.id(e), 999);
        assert_eq!(lay.first(e), 5);
        assert_eq!(lay.level(e), 7);
        assert_eq!(lay.start(e), 12345);
        // A level-7 cell spans 2^(3*(7-5)) = 64 shifted starts.
        assert!(lay.pack(12345 + 63, 5, 7, u32::MAX >> 12) <= lay.last_nested(e));
        assert!(lay.pack(12345 + 64, 5, 0, 0) > lay.last_nested(e));
    }
}
