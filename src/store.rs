//! The structure-of-arrays box store, and Morton cell generation from it.
//!
//! - Input: the user's boxes (validated), the margin, optional grid bounds.
//! - Output: [`Store`]: the live (not inverted by a negative margin) boxes, grown by the
//!   margin, one contiguous `f32` array per axis and bound, **in Morton order** of their
//!   lower corners (a 24-bit prefix is enough for locality), with `orig[s]` mapping a store
//!   index back to the input index; each box's cell level and cell count; and the key
//!   [`Layout`] of the cell entries.
//! - Why Morton order: the sweep tests boxes that share a cell, which are near each other in
//!   space, hence near each other in the store: the exact tests read warm cache lines
//!   instead of one random line per axis and bound.
//! - Cells: a box covers the aligned cells at its level `l` (cell side `2^l` grid units)
//!   that its quantised extent touches. The seed takes the smallest level whose cell covers
//!   the box's largest extent (at most 2 cells per axis, so at most 2^D); we also go finer
//!   while that at least halves the covered volume and stays within
//!   `Config::max_cells_per_box` (long thin boxes: planks and walls), see `choose_level`.
//! - Parallel: every pass is a rayon map over boxes or chunks of boxes; the order sort is
//!   the crate's radix sort. Output independent of the thread count.
//! - Allocates: the arrays above (reused across frames by `Broadphase`).

use crate::morton::{self, grid_bits, Quantizer};
use crate::radix_sort::RadixKey;
use crate::{Aabb, Config};
use rayon::prelude::*;

/// A cell-entry record: a radix-sortable integer holding `(start, inverse level, store id)`.
pub(crate) trait Entry: RadixKey {
    fn from_u128(v: u128) -> Self;
    fn to_u128(self) -> u128;
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
}

/// Bit layout of a cell entry, low to high:
///
/// ```text
/// [ id: id_bits ][ l_max - level: lvl_bits ][ start >> (D * l_min): key_bits ]
/// ```
///
/// `start` is the Morton code of the cell's lowest grid point; every cell's start has its
/// low `D * level >= D * l_min` bits zero, so they are dropped. Sorting by everything above
/// the id gives pre-order: cells by start, and at equal start the larger cell first, so a
/// cell's entries are followed by exactly the entries of the cells nested in it.
/// INVARIANT: `id_bits + lvl_bits + key_bits <= 64` for `u64` entries, `<= 128` for `u128`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Layout {
    pub id_bits: u32,
    pub lvl_bits: u32,
    pub key_bits: u32,
    pub l_min: u32,
    pub l_max: u32,
    pub d: u32,
}

impl Layout {
    /// Total bits used.
    pub fn bits(&self) -> u32 {
        self.id_bits + self.lvl_bits + self.key_bits
    }
    #[inline(always)]
    pub fn pack(&self, start_shifted: u64, level: u32, id: u32) -> u128 {
        ((start_shifted as u128) << self.lvl_bits | (self.l_max - level) as u128) << self.id_bits | id as u128
    }
    #[inline(always)]
    pub fn id(&self, e: u128) -> u32 {
        (e & ((1u128 << self.id_bits) - 1)) as u32
    }
    /// The cell part (everything above the id): equal for entries of the same cell.
    #[inline(always)]
    pub fn cell(&self, e: u128) -> u128 {
        e >> self.id_bits
    }
    #[inline(always)]
    pub fn level(&self, e: u128) -> u32 {
        self.l_max - (self.cell(e) & ((1u128 << self.lvl_bits) - 1)) as u32
    }
    #[inline(always)]
    pub fn start(&self, e: u128) -> u128 {
        self.cell(e) >> self.lvl_bits
    }
    /// The largest entry value whose cell starts inside the cell of `e`: entries after `e`
    /// up to this value are exactly those nested in `e`'s cell (pre-order).
    #[inline(always)]
    pub fn last_nested(&self, e: u128) -> u128 {
        let end = self.start(e) + (1u128 << (self.d * (self.level(e) - self.l_min)));
        (end << (self.lvl_bits + self.id_bits)) - 1
    }
    /// Shifted start of the level-`level` cell holding grid point `q`.
    #[inline(always)]
    pub fn start_of<const D: usize>(&self, q: [u32; D], level: u32) -> u64 {
        let c: [u32; D] = std::array::from_fn(|k| shr32(q[k], level));
        shl64(morton::encode(c), D as u32 * (level - self.l_min))
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
    /// After `build`: first cell-entry slot of store box `s` (exclusive prefix of the cell
    /// counts), with one extra element holding the total.
    pub offset: Vec<u64>,
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
            offset: Vec::new(),
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

        // 2. Morton order of the live boxes: key = top 24 bits of the lower corner's code.
        let code_bits = D as u32 * bits;
        let top = code_bits.saturating_sub(24);
        order.clear();
        order.par_extend(boxes.par_iter().enumerate().with_min_len(4096).filter_map(|(i, b)| {
            let g = b.grown(m);
            (!g.is_inverted()).then(|| (morton::encode(quant.point(&g.min)) >> top) << 40 | i as u64)
        }));
        crate::radix_sort::sort(order, scratch, 40..64);

        // 3. Gather the SoA arrays in that order, with each box's level and cell count.
        let n = order.len();
        for k in 0..D {
            resize_uninit(&mut self.lo[k], n);
            resize_uninit(&mut self.hi[k], n);
        }
        resize_uninit(&mut self.orig, n);
        resize_uninit(&mut self.level, n);
        resize_uninit(&mut self.offset, n + 1);
        let lo_out: [Out<f32>; D] = std::array::from_fn(|k| Out(self.lo[k].as_mut_ptr()));
        let hi_out: [Out<f32>; D] = std::array::from_fn(|k| Out(self.hi[k].as_mut_ptr()));
        let orig_out = Out(self.orig.as_mut_ptr());
        let level_out = Out(self.level.as_mut_ptr());
        let count_out = Out(self.offset.as_mut_ptr());
        let budget = config.max_cells_per_box as u64;
        let (l_min, l_max) = order
            .par_iter()
            .enumerate()
            .with_min_len(4096)
            .map(|(s, &rec)| {
                let i = rec as u32;
                let g = boxes[i as usize].grown(m);
                let qlo = quant.point(&g.min);
                let qhi = quant.point(&g.max);
                let (l, c) = choose_level(qlo, qhi, budget, bits);
                // SAFETY: `s` ranges over 0..n, each value in exactly one task; the arrays
                // have length n (n + 1 for offset) and are written before being read.
                unsafe {
                    for k in 0..D {
                        lo_out[k].put(s, g.min[k]);
                        hi_out[k].put(s, g.max[k]);
                    }
                    orig_out.put(s, i);
                    level_out.put(s, l as u8);
                    count_out.put(s, c);
                }
                (l, l)
            })
            .reduce(|| (u32::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
        let l_min = l_min.min(l_max);

        // 4. Exclusive prefix of the counts (a sequential scan: ~1 ns a box).
        let mut run = 0u64;
        for c in &mut self.offset[..n] {
            let v = *c;
            *c = run;
            run += v;
        }
        self.offset[n] = run;
        let id_bits = usize::BITS - n.saturating_sub(1).leading_zeros();
        let lvl_bits = u32::BITS - (l_max - l_min).leading_zeros();
        self.layout =
            Layout { id_bits, lvl_bits, key_bits: D as u32 * (bits - l_min), l_min, l_max, d: D as u32 };
    }

    /// Total cell entries.
    pub fn cells(&self) -> usize {
        self.offset.last().copied().unwrap_or(0) as usize
    }

    /// Writes every box's cell entries, in parallel, into `out` (resized to [`cells`]).
    pub fn write_cells<T: crate::store::Entry>(&self, out: &mut Vec<T>) {
        let total = self.cells();
        resize_uninit(out, total);
        let layout = self.layout;
        let n = self.len();
        let chunk = 4096;
        let dst = Out(out.as_mut_ptr());
        (0..n.div_ceil(chunk)).into_par_iter().for_each(|c| {
            for s in c * chunk..((c + 1) * chunk).min(n) {
                let mut at = self.offset[s] as usize;
                self.for_each_cell(s, |start| {
                    // SAFETY: box `s` owns slots offset[s]..offset[s + 1], which it fills
                    // exactly (for_each_cell yields as many cells as choose_level counted).
                    unsafe { dst.put(at, T::from_u128(layout.pack(start, self.level[s] as u32, s as u32))) };
                    at += 1;
                });
                debug_assert_eq!(at, self.offset[s + 1] as usize);
            }
        });
    }

    /// Calls `f(shifted start)` for each cell of store box `s`, in odometer order.
    #[inline]
    fn for_each_cell(&self, s: usize, mut f: impl FnMut(u64)) {
        let l = self.level[s] as u32;
        let lay = &self.layout;
        let qlo = self.qlo(s);
        let qhi: [u32; D] = std::array::from_fn(|k| self.quant.coord(k, self.hi[k][s]));
        let c0: [u32; D] = std::array::from_fn(|k| shr32(qlo[k], l));
        let c1: [u32; D] = std::array::from_fn(|k| shr32(qhi[k], l));
        let shift = D as u32 * (l - lay.l_min);
        let mut c = c0;
        loop {
            f(shl64(morton::encode(c), shift));
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
/// extent, so the box spans at most 2 cells per axis. Then go one level finer while the
/// count stays within `budget` and at most 2^(D-1) times the current one, i.e. while the
/// covered volume at least halves: true for planks (x2 per level) and walls (x4 in 3D),
/// false for cubes (x2^D), which keep the seed's level.
#[inline]
pub(crate) fn choose_level<const D: usize>(
    qlo: [u32; D],
    qhi: [u32; D],
    budget: u64,
    bits: u32,
) -> (u32, u64) {
    let mut ext = 0u32;
    for k in 0..D {
        ext = ext.max(qhi[k] - qlo[k]);
    }
    let mut l = (u32::BITS - ext.leading_zeros()).min(bits);
    let mut c = count_at(&qlo, &qhi, l);
    while l > 0 {
        let finer = count_at(&qlo, &qhi, l - 1);
        if finer > budget || finer > c << (D - 1) {
            break;
        }
        l -= 1;
        c = finer;
    }
    (l, c)
}

/// Sets `v.len() = n` without initialising new slots (the caller writes them all).
fn resize_uninit<T: Copy>(v: &mut Vec<T>, n: usize) {
    v.clear();
    v.reserve(n);
    // SAFETY: capacity >= n; `T: Copy` (no drop); every caller writes slots 0..n before
    // reading them (build's gather and write_cells fill every index exactly once).
    unsafe { v.set_len(n) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_level_for_cubes_finer_for_planks() {
        // A cube 10 units wide: level 4 (cells of 16), at most 8 cells.
        let (l, c) = choose_level::<3>([3, 3, 3], [13, 13, 13], 64, 21);
        assert_eq!(l, 4);
        assert_eq!(c, 1);
        // A plank 1000 long, 1 thick: refined until the budget stops it.
        let (l, c) = choose_level::<3>([0, 0, 0], [1000, 1, 1], 64, 21);
        assert!(l < 10 && c <= 64, "l={l} c={c}");
        // A point.
        assert_eq!(choose_level::<2>([5, 5], [5, 5], 16, 32), (0, 1));
        // The whole grid.
        assert_eq!(choose_level::<3>([0; 3], [(1 << 21) - 1; 3], 8, 21), (21, 1));
        assert_eq!(choose_level::<2>([0; 2], [u32::MAX; 2], 4, 32), (32, 1));
    }

    #[test]
    fn layout_round_trips() {
        let lay = Layout { id_bits: 20, lvl_bits: 3, key_bits: 30, l_min: 5, l_max: 9, d: 3 };
        let e = lay.pack(12345, 7, 999);
        assert_eq!(lay.id(e), 999);
        assert_eq!(lay.level(e), 7);
        assert_eq!(lay.start(e), 12345);
        // A level-7 cell spans 2^(3*(7-5)) = 64 shifted starts.
        assert!(lay.pack(12345 + 63, 5, 0) <= lay.last_nested(e));
        assert!(lay.pack(12345 + 64, 5, 0) > lay.last_nested(e));
    }
}
