//! The cell pipeline: Morton columns over `D - 1` axes, sweep-and-prune along the last.
//!
//! - Input: the user's boxes (validated), the margin, the grid bounds and the sweep axis
//!   `ax` (the axis along which boxes overlap least, from the scene scan).
//! - Cells: the grid is quantised on every axis, but cells split only the `D - 1` *column
//!   axes*; along `ax` a cell is as long as the world (a column in 3D, a stripe in 2D). A
//!   box covers the aligned columns at its level `l` (side `2^l` grid units) that its
//!   quantised extent touches. Along `ax` the boxes of a column are kept sorted by their
//!   quantised lower bound, so the column is swept with sweep-and-prune (Terdiman): a box
//!   tests only the boxes of its column that start before it ends.
//! - Why columns rather than cubes: a box spans `(1 + s/c)^(D-1)` columns instead of
//!   `(1 + s/c)^D` cubes, and sweep-and-prune does along one axis what a cube split does
//!   with entries. At 1M uniform 3D boxes the cube version made 4.6 entries a box and cost
//!   3-4x more end to end (docs/BENCHMARKS.md).
//! - Entry key (u64 when it fits, else u128), low to high:
//!   `[id][first: D-1][qx: x_bits][l_max - level][column start >> (D-1) l_min]`.
//!   Sorting on everything above `first` gives columns in Morton pre-order (a coarse column
//!   is followed by the columns nested in it) and, inside a column, boxes by `qx`.
//! - Gather: after the sort every entry's box (grown by the margin) is copied into
//!   structure-of-arrays rows in entry order, so the sweep reads memory in order, 8 boxes
//!   at a time (`wide::f32x8`).
//! - Sweep: a *run* (one column at one level) against itself by sweep-and-prune; against
//!   its *range* (the finer entries nested in it) each range box looks up the window of the
//!   run that can reach it along `ax` (a search in the run's running maximum of upper
//!   bounds), so a big box over many small ones costs `O(r log m)`, not `O(r m)`.
//! - Unique pairs without a dedup: see [`Layout::owns`]. A pair sharing several columns is
//!   reported only from the column, at the coarser box's level, that holds the reference
//!   point `p = max(qlo(A), qlo(B))` on the column axes. In a range a box is tested from one
//!   of its entries only ([`Layout::represents`]), and the pair is reported from the run's
//!   column holding `p`: the run's own rule on first-column flags, a SIMD lane mask.
//! - Parallel: every pass is a rayon map over fixed chunks; the sweep cuts the entries at
//!   run boundaries by position. The output and the counts do not depend on the thread count.

use crate::config::Refine;
use crate::isa::F8;
use crate::morton::{self, grid_bits, Quantizer};
use crate::radix_sort::RadixKey;
use crate::{Aabb, Config};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Mutex;
use wide::f32x8;

/// Boxes (or entries) a parallel work item holds at the most.
const CHUNK: usize = 4096;
/// Boxes (or entries) a parallel work item holds at the least, where the input has that
/// many ([`chunk_len`]).
const CHUNK_MIN: usize = 512;

/// Boxes (or entries) a parallel work item of a pass over `n` holds: about a 64th of
/// them, within [`CHUNK_MIN`]..=[`CHUNK`]. A function of `n` alone, not of the pool: the
/// scan combines its sums chunk by chunk, and the plan (so the `Stats` counts) must not
/// depend on the thread count. PERF: with 4096 boxes a chunk whatever `n`, 10k boxes made
/// three work items for the scan, the plan and the cell writes, so two threads split
/// them two to one and more threads had nothing to do. 3D varied 10k, 2 threads (demo
/// median, alternated): cells 0.09 -> 0.07 ms; the frame within the noise (2.10-2.19 ->
/// 2.07-2.13 ms). Not measured on more cores.
pub(crate) fn chunk_len(n: usize) -> usize {
    (n / 64).clamp(CHUNK_MIN, CHUNK)
}
/// Bits of the quantised lower bound along the sweep axis (exact in an `f32`).
const X_BITS_MAX: u32 = 24;
/// Fewer x bits than this (or than wanted) in a u64 entry: use u128 entries instead.
const X_BITS_MIN: u32 = 12;
/// The least `qx` precision (a 256th of the grid's extent along the sweep axis).
const X_BITS_LEAST: u32 = 8;

/// A cell-entry record: a radix-sortable integer (see the module header for the fields).
pub(crate) trait Entry: RadixKey + Ord + bytemuck::Pod {
    fn from_u128(v: u128) -> Self;
    fn to_u128(self) -> u128;
    /// The low 64 bits of `self >> s` (every field but the column fits 64 bits).
    fn field(self, s: u32) -> u64;
    /// `base | start << s_pos | first << f_pos`, in the entry's own width (PERF: with
    /// u128 shifts for u64 entries the 1M uniform 3D entry write took 25.6-25.8 ms, with
    /// u64 shifts 24.5, 1 thread).
    fn with_column(base: Self, start: u64, s_pos: u32, first: u32, f_pos: u32) -> Self;
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
        debug_assert!(s < 64);
        self >> s
    }
    #[inline(always)]
    fn with_column(base: Self, start: u64, s_pos: u32, first: u32, f_pos: u32) -> Self {
        debug_assert!(s_pos < 64 && f_pos < 64);
        base | start << s_pos | (first as u64) << f_pos
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
    #[inline(always)]
    fn with_column(base: Self, start: u64, s_pos: u32, first: u32, f_pos: u32) -> Self {
        base | (start as u128) << s_pos | (first as u128) << f_pos
    }
}

/// Bit layout of a cell entry, low to high:
///
/// ```text
/// [ id: id_bits ][ first: c ][ qx: x_bits ][ l_max - level: lvl_bits ][ start >> (c l_min): key_bits ]
/// ```
///
/// `c = D - 1` column axes. `start` is the Morton code (over the column axes) of the
/// column's lowest grid point; its low `c * level` bits are zero. `first` bit `k` is set
/// when the column is the box's first on column axis `k`. `qx` is the box's quantised lower
/// bound on the sweep axis. INVARIANT: `bits() <= 64` for `u64` entries, `<= 128` for `u128`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Layout {
    pub id_bits: u32,
    /// Column axes `c = D - 1`, also the number of flag bits.
    pub c: u32,
    pub x_bits: u32,
    pub lvl_bits: u32,
    pub key_bits: u32,
    pub l_min: u32,
    pub l_max: u32,
}

impl Layout {
    /// Total bits used.
    pub fn bits(&self) -> u32 {
        self.cell_from() + self.lvl_bits + self.key_bits
    }
    /// The lowest bit the sort looks at (`qx`).
    pub fn sort_from(&self) -> u32 {
        self.id_bits + self.c
    }
    /// The lowest bit of the column part (level and start): equal within a run.
    pub fn cell_from(&self) -> u32 {
        self.sort_from() + self.x_bits
    }
    #[inline(always)]
    pub fn pack(&self, start_shifted: u64, level: u32, qx: u32, first: u32, id: u32) -> u128 {
        let cell = (start_shifted as u128) << self.lvl_bits | (self.l_max - level) as u128;
        ((cell << self.x_bits | qx as u128) << self.c | first as u128) << self.id_bits | id as u128
    }
    #[inline(always)]
    pub fn first<T: Entry>(&self, e: T) -> u32 {
        (e.field(self.id_bits) & low_mask(self.c)) as u32
    }
    #[inline(always)]
    pub fn id<T: Entry>(&self, e: T) -> u32 {
        (e.field(0) & low_mask(self.id_bits)) as u32
    }
    #[inline(always)]
    pub fn qx<T: Entry>(&self, e: T) -> u32 {
        (e.field(self.sort_from()) & low_mask(self.x_bits)) as u32
    }
    /// The column part (level and start): equal for the entries of one run.
    #[inline(always)]
    pub fn cell(&self, e: u128) -> u128 {
        e >> self.cell_from()
    }
    #[inline(always)]
    pub fn level<T: Entry>(&self, e: T) -> u32 {
        self.l_max - (e.field(self.cell_from()) & low_mask(self.lvl_bits)) as u32
    }
    /// Shifted start (`start >> c * l_min`; at most 64 bits).
    #[inline(always)]
    pub fn start<T: Entry>(&self, e: T) -> u64 {
        e.field(self.cell_from() + self.lvl_bits)
    }
    /// The largest entry value whose column starts inside the column of `e`: entries after
    /// `e`'s run up to this value are exactly those nested in it (pre-order).
    #[inline(always)]
    pub fn last_nested(&self, e: u128) -> u128 {
        let end = self.start(e) as u128 + (1u128 << (self.c * (self.level(e) - self.l_min)));
        (end << (self.lvl_bits + self.cell_from())) - 1
    }

    /// Does entry `e` own the pair of its box `B` with a box `A` whose quantised lower
    /// corner on the column axes has the shifted Morton code `ma`? `e` must be the finer
    /// (or equal) column of the two entries; called with the coarser one, it answers
    /// whether that column holds the reference point.
    ///
    /// The owner is `B`'s column holding `p = max(qlo(A), qlo(B))`. On axis `k` that
    /// column's coordinate is `max(a_k, b0_k)` with `a_k = qlo(A)_k >> level` and `b0_k`
    /// `B`'s first column. If `e` is `B`'s first column on `k` (`e_k == b0_k`) it holds
    /// `p_k` iff `e_k >= a_k`; otherwise (`e_k > b0_k`) iff `e_k == a_k`. Interleaving
    /// keeps each axis' bit order, so masked codes compare like the coordinates themselves.
    #[inline(always)]
    pub fn owns<T: Entry>(&self, e: T, ma: u64) -> bool {
        let c = self.c as usize;
        let start = self.start(e);
        let a = ma & !low_mask(self.c * (self.level(e) - self.l_min));
        let first = self.first(e);
        let same = (start ^ a) & !FIRST_AXES[c][first as usize & 3] == 0;
        let mut ge = true;
        for (k, &m) in AXIS_MASK[c].iter().enumerate().take(c) {
            ge &= (first >> k & 1 == 0) | (start & m >= a & m);
        }
        same & ge
    }
}

impl Layout {
    /// Is range entry `e` its box's one entry in the column of a run whose start is
    /// `run_start` (a column at a coarser level, nesting `e`'s)? On every column axis `e`
    /// is its box's first column, or its column starts where the run's does. A box nested
    /// in a coarse column has one such entry there, whatever its columns inside it.
    #[inline(always)]
    pub fn represents<T: Entry>(&self, e: T, run_start: u64) -> bool {
        (self.start(e) ^ run_start) & !FIRST_AXES[self.c as usize][self.first(e) as usize & 3] == 0
    }
}

/// Bits of column axis `k` in a `c`-dimensional Morton code (`c` is 1 or 2).
const AXIS_MASK: [[u64; 2]; 3] = [[0, 0], [u64::MAX, 0], [0x5555_5555_5555_5555, 0xaaaa_aaaa_aaaa_aaaa]];

/// `FIRST_AXES[c][flags]`: the Morton bits of the column axes whose flag is set.
const FIRST_AXES: [[u64; 4]; 3] = {
    let mut t = [[0u64; 4]; 3];
    let mut c = 1;
    while c <= 2 {
        let mut f = 0;
        while f < 4 {
            let mut k = 0;
            while k < c {
                if f >> k & 1 == 1 {
                    t[c][f] |= AXIS_MASK[c][k];
                }
                k += 1;
            }
            f += 1;
        }
        c += 1;
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

/// The column axes of a `D`-dimensional scene swept along `ax` (up to two of them).
#[inline(always)]
fn col_axes<const D: usize>(ax: usize) -> [usize; 2] {
    let mut out = [0; 2];
    let mut i = 0;
    for k in 0..D {
        if k != ax && i < 2 {
            out[i] = k;
            i += 1;
        }
    }
    out
}

/// Morton code of column coordinates (`c` of them used).
#[inline(always)]
fn col_code(c: u32, q: [u32; 2]) -> u64 {
    match c {
        1 => q[0] as u64,
        2 => morton::encode::<2>(q),
        _ => 0,
    }
}

/// The boxes' levels, counts and the layout; after [`Columns::gather`] the rows in entry order.
#[derive(Debug)]
pub(crate) struct Columns<const D: usize> {
    pub quant: Quantizer<D>,
    pub ax: usize,
    pub layout: Layout,
    /// `coord >> x_shift` is the `qx` of a coordinate on the sweep axis.
    x_shift: u32,
    /// Column level of input box `i` (dead boxes: count 0).
    level: Vec<u8>,
    /// Columns of input box `i` at its level (at most `max_cells_per_box <= 4096`).
    count: Vec<u16>,
    /// Entries per chunk of `chunk_len(n)` input boxes (the plan's chunks).
    chunk_cells: Vec<usize>,
    /// Total entries.
    pub cells: usize,
    /// The plan's memo of levels by size classes.
    levels: LevelTable,
    /// Rows in entry order, one array after the other, [`row_stride`] apart: bounds of the
    /// entry's box on every axis (`lo` then `hi`), margin applied, its `qx` as an `f32`
    /// (exact: at most 24 bits), and `qxh`, the quantised upper bound on the sweep axis
    /// (same scale). Read through [`Columns::rows`].
    rows: Vec<f32>,
    stride: usize,
    n_rows: usize,
    /// The entry's first-column flags ([`Layout::first`]), and eight bytes of padding
    /// (see [`Rows::first_mask`]).
    fst: Vec<u8>,
}

impl<const D: usize> Default for Columns<D> {
    fn default() -> Self {
        Self {
            quant: Quantizer::new([0.0; D], [0.0; D]),
            ax: 0,
            layout: Layout::default(),
            x_shift: 0,
            level: Vec::new(),
            count: Vec::new(),
            chunk_cells: Vec::new(),
            cells: 0,
            levels: LevelTable::default(),
            rows: Vec::new(),
            stride: 0,
            n_rows: 0,
            fst: Vec::new(),
        }
    }
}

/// A raw pointer for disjoint parallel writes (also the whole-scene sweep's gather).
#[derive(Clone, Copy)]
pub(crate) struct Out<T>(pub(crate) *mut T);
// SAFETY: only used to write each index from exactly one task.
unsafe impl<T: Send> Send for Out<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Out<T> {}
impl<T> Out<T> {
    /// SAFETY: `i` is in bounds and written by no other task.
    #[inline(always)]
    pub(crate) unsafe fn put(self, i: usize, v: T) {
        self.0.add(i).write(v)
    }
}

/// Range rows tested together against a run's bounding box (see `Walker::range`).
const RANGE_PIECE: usize = 32;

/// Rows ahead whose boxes the gather prefetches. PERF: the gather reads the input at random
/// (entries are in column order, the input in the caller's); prefetching cut it from 67 to
/// 25 ms at 1M uniform 3D boxes, 1 thread (docs/BENCHMARKS.md).
pub(crate) const PREFETCH: usize = 16;

/// Hints the cache lines of `b` into L1 (a no-op off x86_64).
#[inline(always)]
pub(crate) fn prefetch<T>(b: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint and never faults; both addresses lie inside `*b`.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = b as *const T as *const i8;
        _mm_prefetch(p, _MM_HINT_T0);
        _mm_prefetch(p.add(std::mem::size_of::<T>() - 1), _MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = b;
}

impl<const D: usize> Columns<D> {
    /// Chooses every box's level (in 1D every box is in the one column, level 0). `bounds` are the grid bounds (finite),
    /// `density` the expected tests a box of a whole-scene sweep along `ax` (the density
    /// along the sweep axis, for the cost model), over the spread of all lower bounds and
    /// over the bulk's ([`crate::sap::AxisStats::plan_density`]), `mean_ext` the boxes' mean extent along `ax` (for the `qx`
    /// precision), `bulk` the extent the bulk of the boxes occupies on each axis, where
    /// known, and the share of the axis they cover (for the cost model's density), and
    /// `spread` how far the boxes' sizes spread ([`crate::sap::AxisStats::size_spread`]).
    #[allow(clippy::too_many_arguments)]
    pub fn plan(
        &mut self,
        boxes: &[Aabb<D>],
        config: &Config<D>,
        bounds: Aabb<D>,
        ax: usize,
        density: [f64; 2],
        mean_ext: f64,
        bulk: [(Option<f64>, f64); D],
        spread: f64,
    ) {
        let m = config.margin;
        let bits = grid_bits(D);
        let c = D as u32 - 1;
        let cols = col_axes::<D>(ax);
        // One scale on the column axes, the widest one's: a column is square in world
        // units, whatever the world's shape. With a scale per axis, a flat world (a
        // terrain, a game level: 700 x 26 x 700) made columns 27 times longer than wide
        // in world units, and a triangle's column held a strip of its neighbours.
        // The sweep axis keeps its own scale (`qx`).
        let widest = cols[..c as usize]
            .iter()
            .map(|&k| bounds.max[k] as f64 - bounds.min[k] as f64)
            .fold(0.0, f64::max);
        let mut grid_hi = bounds.max;
        for &k in &cols[..c as usize] {
            grid_hi[k] = grid_hi[k].max((bounds.min[k] as f64 + widest) as f32);
        }
        let quant = Quantizer::new(bounds.min, grid_hi);
        self.quant = quant;
        self.ax = ax;
        let n = boxes.len();
        crate::radix_sort::grow_to(&mut self.level, n);
        crate::radix_sort::grow_to(&mut self.count, n);
        // The extent on each column axis, in grid units (at least one), of the part of the
        // world the boxes occupy, and its cross-section: the boxes' density is that of this
        // part. Where a few boxes far larger than the rest (a ground plane, a level's
        // bounding volume) stretch the grid beyond the bulk of the scene, the rest are
        // denser than the whole grid's cross-section says. Only where the bulk's is under
        // half the grid's: the model is sensitive near its choices, and 3D tiles (whose
        // bulk is 0.8 of the grid on one axis) took a level that doubled its sweep.
        // PERF: 200k uniform 3D boxes plus one box over twice their world made 1.57 columns
        // a box and 16.6 candidates, and took 42.7 ms against 25.7 without it (1 thread);
        // with the bulk's density, 1.75 columns a box and 8.1 candidates, 34.4-42.6 ms
        // against 42.7-55.5 (three alternations).
        // Boxes gathered in a few far-apart places (islands, levels, cities) cover a small
        // share of each axis: the density is that of the places (`AxisStats::covered`, 1
        // for any other scene), on the grid's extents and the bulk's alike. PERF: 200k
        // uniform 3D boxes in two cubes 100 of their sides apart were swept whole at 1,301
        // tests a box, 81.7 ms at 2 threads (the column pipeline, with the whole
        // cross-section's density, made one column a box and 1,310 candidates); now 1.59
        // columns a box, 8.0 candidates and 14.3 ms. Four such islands: 120.6 ms (0.97x
        // parry3d) before, 17.6 ms now.
        let mut world = [1.0; 2];
        let mut occupied = [1.0; 2];
        for ((w, o), &k) in world.iter_mut().zip(&mut occupied).zip(&cols[..c as usize]) {
            let ext = bounds.max[k] as f64 - bounds.min[k] as f64;
            if widest > 0.0 {
                let (bulk_ext, cover) = bulk[k];
                let full = (ext / widest * pow2(bits)).max(1.0);
                let part = bulk_ext.map_or(full, |b| (b / widest * pow2(bits)).clamp(1.0, full));
                *w = (full * cover).max(1.0);
                *o = (part * cover).clamp(1.0, *w);
            }
        }
        let section = |v: &[f64; 2]| v[..c as usize].iter().product::<f64>();
        let mut per_box = density[0];
        if section(&occupied) < 0.5 * section(&world) {
            world = occupied;
            per_box = density[1];
        }
        let area = section(&world);
        // Sizes spread widely (over [`crate::pipeline::SIZE_SPREAD_MAX`]), 3D: half the
        // candidates' weight. `per_box` is a whole-scene sweep's tests a box, which the big
        // boxes' extents along the sweep axis inflate; the many small boxes meet fewer
        // candidates than it says (a box of extent `e` meets about the boxes within
        // `e + mean` of it, not `2 mean`). PERF: 3D varied (sizes over two orders of
        // magnitude, spread about 40), ratio 0.125 against 0.25, 2 threads: frame 0.955
        // at 10k, 0.974 at 100k; 1M (1 thread) 0.988; no other scene of `scene::by_name` at
        // 100k has a spread over 5. Not in 2D: 2D varied 100k was 0.913 but 1M 1.075.
        let wide = c == 2 && spread > crate::pipeline::SIZE_SPREAD_MAX;
        let lambda = per_box / area * cost_ratio() * if wide { 0.5 } else { 1.0 };
        let level_out = Out(self.level.as_mut_ptr());
        let count_out = Out(self.count.as_mut_ptr());
        let chunk = chunk_len(n);
        let pass = |model: &LevelModel, table: &LevelTable| -> Vec<(u32, u32, usize)> {
            boxes
                .par_chunks(chunk)
                .enumerate()
                .map(|(ci, part)| {
                    crate::isa::fast(
                        #[inline(always)]
                        || {
                            let (mut l_min, mut l_max, mut cells) = (u32::MAX, 0, 0usize);
                            for (j, b) in part.iter().enumerate() {
                                let i = ci * chunk + j;
                                let g = b.grown(m);
                                let (l, count) = if g.is_inverted() {
                                    (0, 0)
                                } else {
                                    let qlo = cols.map(|k| quant.coord(k, g.min[k]));
                                    let qhi = cols.map(|k| quant.coord(k, g.max[k]));
                                    let (l, count) = table.choose(model, qlo, qhi);
                                    l_min = l_min.min(l);
                                    l_max = l_max.max(l);
                                    (l, count)
                                };
                                // SAFETY: `i` ranges over 0..n, each value in exactly one task; both
                                // arrays have length n (grow_to).
                                unsafe {
                                    level_out.put(i, l as u8);
                                    count_out.put(i, count as u16);
                                }
                                cells += count as usize;
                            }
                            (l_min, l_max, cells)
                        },
                    )
                })
                .collect()
        };
        let budget = config.max_cells_per_box as u64;
        let mut table = std::mem::take(&mut self.levels);
        table.begin(c, n);
        let mut parts = pass(&LevelModel::new(c, bits, budget, lambda, world), &table);
        // Memory: each entry takes its rows, its key and the radix scratch's slot
        // ([`ENTRY_BYTES`]). Where the model's choice makes more than a box's share of
        // [`MEMORY_PER_BOX`] (a dense scene: ten copies of every box went to 3.6 columns a
        // box, 175 bytes), the candidates weigh less and the plan is made again, coarser,
        // until it fits: at `lambda = 0` every box takes its fewest columns, one.
        let cap = (MEMORY_PER_BOX / ENTRY_BYTES[D.min(3)] * n as f64) as usize;
        for shrink in [0.5, 0.25, 0.0625, 0.0] {
            if parts.iter().map(|p| p.2).sum::<usize>() <= cap || lambda == 0.0 {
                break;
            }
            table.begin(c, n);
            parts = pass(&LevelModel::new(c, bits, budget, lambda * shrink, world), &table);
        }
        self.levels = table;
        let (mut l_min, mut l_max, mut cells) = (u32::MAX, 0, 0);
        self.chunk_cells.clear();
        for &(a, b, k) in &parts {
            l_min = l_min.min(a);
            l_max = l_max.max(b);
            cells += k;
            self.chunk_cells.push(k);
        }
        let l_min = l_min.min(l_max);
        self.cells = cells;
        let id_bits = usize::BITS - n.saturating_sub(1).leading_zeros();
        let lvl_bits = u32::BITS - (l_max - l_min).leading_zeros();
        // At least one key bit, so that shifts stay below the width when every box is a
        // whole-grid column.
        let key_bits = (c * (bits - l_min)).max(1);
        // `qx` precision: a step of at most a quarter of the mean extent along the sweep
        // axis (a coarser `qx` widens every sweep window by up to a step; a finer one costs
        // sort passes), then as many more bits as fill the sort's last digit. PERF: at 1M
        // uniform 3D boxes 21 `qx` bits took three 11-bit passes, 10 take two, for 8% more
        // candidates (docs/BENCHMARKS.md).
        let span = bounds.max[ax] as f64 - bounds.min[ax] as f64;
        let want = if mean_ext > 0.0 && span > 0.0 {
            ((4.0 * span / mean_ext).log2().ceil() as u32).clamp(X_BITS_LEAST, X_BITS_MAX)
        } else if span > 0.0 {
            X_BITS_MAX
        } else {
            X_BITS_LEAST
        };
        let other = lvl_bits + key_bits;
        let digit = crate::radix_sort::digit_bits(cells);
        let digits = (other + want).div_ceil(digit);
        let mut x_bits = (digits * digit - other).clamp(want, X_BITS_MAX).min(bits);
        let rest = id_bits + c + other;
        if rest + x_bits > 64 && rest + want.min(X_BITS_MIN) <= 64 {
            x_bits = 64 - rest;
        }
        self.x_shift = bits - x_bits;
        self.layout = Layout { id_bits, c, x_bits, lvl_bits, key_bits, l_min, l_max };
    }

    /// The `qx` of coordinate `x` on the sweep axis.
    #[inline(always)]
    fn qx_of(&self, x: f32) -> u32 {
        self.quant.coord(self.ax, x) >> self.x_shift
    }

    /// Writes every box's entries into `out` (resized to `self.cells`), in parallel.
    pub fn write_entries<T: Entry>(&self, boxes: &[Aabb<D>], margin: f32, out: &mut Vec<T>) {
        crate::radix_sort::grow_to(out, self.cells);
        let mut parts = Vec::with_capacity(self.chunk_cells.len());
        let mut rest = &mut out[..self.cells];
        for &len in &self.chunk_cells {
            let (head, tail) = rest.split_at_mut(len);
            parts.push(head);
            rest = tail;
        }
        let lay = self.layout;
        let cols = col_axes::<D>(self.ax);
        let c = lay.c;
        let (s_pos, f_pos) = (lay.cell_from() + lay.lvl_bits, lay.id_bits);
        let pdep = crate::isa::pdep();
        // The plan's chunks, whose entry counts cut `out`.
        let chunk = chunk_len(boxes.len());
        parts.into_par_iter().zip(boxes.par_chunks(chunk)).enumerate().for_each(|(ci, (dst, src))| {
            crate::isa::fast(
                #[inline(always)]
                || {
                    // The column code of two column coordinates: `pdep` where it is fast
                    // (this closure then runs compiled for BMI2), else the tables.
                    let code2 = |q: [u32; 2]| -> u64 {
                        #[cfg(target_arch = "x86_64")]
                        if pdep {
                            // SAFETY: `isa::pdep()` is true only on a CPU with BMI2.
                            return unsafe { morton::pdep_encode::<2>(q) };
                        }
                        col_code(2, q)
                    };
                    let mut at = 0;
                    for (j, b) in src.iter().enumerate() {
                        let i = ci * chunk + j;
                        if self.count[i] == 0 {
                            continue;
                        }
                        let g = b.grown(margin);
                        let l = self.level[i] as u32;
                        let qx = self.qx_of(g.min[self.ax]);
                        let c0 = cols.map(|k| shr32(self.quant.coord(k, g.min[k]), l));
                        let c1 = cols.map(|k| shr32(self.quant.coord(k, g.max[k]), l));
                        // Every field but the column start and the first flags is the box's.
                        let base = T::from_u128(lay.pack(0, l, qx, 0, i as u32));
                        let shift = c * (l - lay.l_min);
                        let entry = |code: u64, first: u32| {
                            T::with_column(base, shl64(code, shift), s_pos, first, f_pos)
                        };
                        let (nx, ny) = (c1[0] - c0[0], c1[1] - c0[1]);
                        // PERF: a box spans one or two columns per axis at its seed level, in no
                        // predictable pattern, so loops over them end unpredictably (at 1M uniform
                        // 3D boxes, 1 thread, this path took the write from 28.4-28.6 ms to
                        // 27.0-27.3). The common case writes every candidate entry and advances by
                        // the real ones:
                        // a slot written beyond the box's entries is rewritten by the next box
                        // (boxes write in order), so only a box within 2^c slots of the end of
                        // the chunk's slice takes the loops.
                        if c == 2 && nx <= 1 && ny <= 1 && at + 4 <= dst.len() {
                            let (x0, x1) = (code2([c0[0], 0]), code2([c1[0], 0]));
                            let (y0, y1) = (code2([0, c0[1]]), code2([0, c1[1]]));
                            dst[at] = entry(x0 | y0, 3);
                            at += 1;
                            dst[at] = entry(x1 | y0, 2);
                            at += nx as usize;
                            dst[at] = entry(x0 | y1, 1);
                            at += ny as usize;
                            dst[at] = entry(x1 | y1, 0);
                            at += (nx & ny) as usize;
                            continue;
                        }
                        if c == 1 && nx <= 1 && at + 2 <= dst.len() {
                            dst[at] = entry(c0[0] as u64, 1);
                            at += 1;
                            dst[at] = entry(c1[0] as u64, 0);
                            at += nx as usize;
                            continue;
                        }
                        let mut put = |code: u64, first: u32| {
                            dst[at] = entry(code, first);
                            at += 1;
                        };
                        match c {
                            2 => {
                                for y in c0[1]..=c1[1] {
                                    let my = code2([0, y]);
                                    let fy = ((y == c0[1]) as u32) << 1;
                                    for x in c0[0]..=c1[0] {
                                        put(code2([x, 0]) | my, (x == c0[0]) as u32 | fy);
                                    }
                                }
                            }
                            1 => {
                                for x in c0[0]..=c1[0] {
                                    put(x as u64, (x == c0[0]) as u32);
                                }
                            }
                            _ => put(0, 0),
                        }
                    }
                    debug_assert_eq!(at, dst.len());
                },
            )
        });
    }

    /// Copies every sorted entry's box into the rows (entry order).
    pub fn gather<T: Entry>(&mut self, boxes: &[Aabb<D>], margin: f32, entries: &[T]) {
        let n = entries.len();
        let st = row_stride(n, 2 * D + 2);
        crate::radix_sort::grow_to(&mut self.rows, (2 * D + 2) * st);
        (self.stride, self.n_rows) = (st, n);
        crate::radix_sort::grow_to(&mut self.fst, n + 8);
        self.fst[n..].fill(0);
        let fst = Out(self.fst.as_mut_ptr());
        let base = self.rows.as_mut_ptr();
        // SAFETY: array `m` is rows[m * st..m * st + n], inside the (2D + 2) st floats.
        let at = |m: usize| Out(unsafe { base.add(m * st) });
        let lo: [Out<f32>; D] = std::array::from_fn(at);
        let hi: [Out<f32>; D] = std::array::from_fn(|k| at(D + k));
        let (qx, qxh) = (at(2 * D), at(2 * D + 1));
        let lay = self.layout;
        let chunk = chunk_len(n);
        entries.par_chunks(chunk).enumerate().for_each(|(ci, part)| {
            crate::isa::fast(
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
    fn corner(&self, s: usize) -> u64 {
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
fn row_stride(n: usize, arrays: usize) -> usize {
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
    lo: [&'a [f32]; D],
    hi: [&'a [f32]; D],
    qx: &'a [f32],
    qxh: &'a [f32],
    fst: &'a [u8],
    /// Column axes.
    c: u32,
    owner: &'a Columns<D>,
}

impl<const D: usize> Rows<'_, D> {
    /// Row `s` as a box.
    #[inline(always)]
    fn get(&self, s: usize) -> Aabb<D> {
        Aabb { min: std::array::from_fn(|k| self.lo[k][s]), max: std::array::from_fn(|k| self.hi[k][s]) }
    }

    /// The bounding box of rows `from..to` (not empty).
    #[inline(always)]
    fn bounds_of(&self, from: usize, to: usize) -> Aabb<D> {
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
    fn lanes_meeting(&self, a: usize, b: usize, bx: &Aabb<D>) -> Option<Lanes<D>> {
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
            let mut m = crate::sap::overlap_mask8(&self.lo, &self.hi, j, bx, 0) & live;
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
    /// full or the scan ends, for long windows (a run row's, after [`Walker::run`]'s
    /// steps); else each block's hits are emitted at once, eight lanes written
    /// ([`Sink::push_masked`]), for windows of a few blocks (a range row's).
    ///
    /// PERF: eight rows a step with `wide::f32x8`, reading past `to` (masked) while the
    /// arrays last; the `qx` mask is a prefix because `qx` ascends. Batched, against a
    /// block at a time, 1 thread (p10 ratios, same binary): sweep 3D varied 100k 0.97,
    /// 10k 0.96 (run rows); range rows were slower so (2D varied 100k 1.05), and keep
    /// the block at a time.
    #[inline(always)]
    fn scan<const BATCH: bool>(
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
            // x86_64 has no popcnt instruction; `count_ones` is a dozen).
            tested += (!in_x).trailing_zeros() as usize;
            let m = in_x & crate::sap::overlap_mask8(&self.lo, &self.hi, j, bx, 0);
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
    /// `fi` on every column axis: the pairs a run owns (see [`Walker::run`]).
    /// PERF: a mask before the emit loop, not a test after each hit (a mispredicted branch
    /// per duplicate hit).
    #[inline(always)]
    fn first_mask(&self, j: usize, fi: u32) -> u32 {
        let v = u64::from_le_bytes(self.fst[j..j + 8].try_into().expect("eight bytes"));
        // Each row's flags or'ed with `fi`, then the run's rule on the pair.
        first_pairs(v | (fi as u64 * 0x0101_0101_0101_0101), low_mask(self.c) as u32)
    }

    /// See [`Columns::corner`].
    #[inline(always)]
    fn corner(&self, s: usize) -> u64 {
        self.owner.corner(s)
    }
}

/// The lanes whose byte of `v` (first-column flags of two rows, or'ed) is `all`: bit `k`
/// for byte `k`. Flags are at most two bits.
#[inline(always)]
fn first_pairs(v: u64, all: u32) -> u32 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Byte k is zero iff row pair k has every flag.
    let t = v ^ (all as u64 * ONES);
    let bad = (t | t >> 1) & ONES;
    // Byte k's low bit to bit 56 + k (no carries: each sum bit has one source).
    !(bad.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32 & 0xff
}

/// Offsets a block of eight run rows takes together before its lanes go on one at a time
/// (see `Walker::run`).
const RUN_STEPS: usize = 16;
const _: () = assert!(RUN_STEPS % 8 == 0, "Walker::run reads its step bytes eight a word");

/// Columns a box spans at level `l` on `c` column axes.
#[inline(always)]
fn count_at(c: u32, qlo: &[u32; 2], qhi: &[u32; 2], l: u32) -> u64 {
    let mut n = 1u64;
    for k in 0..c as usize {
        n *= (shr32(qhi[k], l) - shr32(qlo[k], l)) as u64 + 1;
    }
    n
}

/// The level choice: a cost model over the levels, tabulated once per run.
///
/// Start from the seed's level: the smallest whose side `2^l` exceeds the box's largest
/// extent on the column axes (at most 2 columns per axis). Then move while the model says
/// it pays, within `budget` columns:
///
/// `cost(l) = cols(l) * (1 + lambda * 2^(c l))`
///
/// The first term is the per-entry work (write, sort, gather, walk). The second is the
/// sweep's candidates: the boxes of a column that overlap a box along the sweep axis grow
/// with the column's cross-section. `lambda` is the whole-scene sweep's tests per box
/// spread over the world's cross-section, times the candidate-to-entry cost ratio. The
/// cross-section counts only what lies inside the world: `2^l` on each column axis, but no
/// more than the world's extent there. A flat world (every box on one plane, as in a 2D
/// game or map laid out in 3D) thus weighs a column as the strip it is. Small
/// boxes in a sparse scene go coarser (one column), dense ones may go finer; long thin
/// boxes across the columns go finer, so a plank does not drag a wide column along.
///
/// `cols(l)` is the number of columns a box of this size spans *on average* over its
/// positions, `prod(1 + ext_k / 2^l)`, not the count at its actual position: boxes of one
/// size then share a level wherever they lie, so runs rarely have ranges to visit (with
/// the actual count, a uniform 1M scene spread over five levels and swept 2x slower).
pub(crate) struct LevelModel {
    c: u32,
    bits: u32,
    budget: u64,
    /// `1 / 2^l` and `1 + lambda * (cross-section of a level-l column inside the world)`
    /// for `l` in `0..=bits`.
    inv: [f64; 33],
    dens: [f64; 33],
}

impl LevelModel {
    /// `world`: the world's extent on each of the `c` column axes, in grid units.
    /// PERF: with `2^(c l)` for the cross-section, 200k unit squares on the plane `z = 0`
    /// (3D, columns over `y` and `z`) went to 19.3 columns a box and took 102 ms at 2
    /// threads; as strips, 1.29 columns a box and 13.8 ms (docs/BENCHMARKS.md).
    pub fn new(c: u32, bits: u32, budget: u64, lambda: f64, world: [f64; 2]) -> Self {
        let lambda = if lambda.is_nan() { 0.0 } else { lambda };
        let mut m = Self { c, bits, budget, inv: [0.0; 33], dens: [0.0; 33] };
        for l in 0..=bits.min(32) {
            m.inv[l as usize] = 1.0 / pow2(l);
            let section: f64 = world[..c as usize].iter().map(|&w| pow2(l).min(w)).product();
            m.dens[l as usize] = 1.0 + lambda * section;
        }
        m
    }

    #[inline(always)]
    fn cost(&self, ext: &[f64; 2], l: u32) -> f64 {
        let mut n = self.dens[l as usize];
        for e in ext.iter().take(self.c as usize) {
            n *= 1.0 + e * self.inv[l as usize];
        }
        n
    }

    /// The level of a box with quantised column-axis corners `qlo..=qhi`, and its count
    /// (at most `max(budget, 2^c)`).
    #[cfg(test)]
    pub fn choose(&self, qlo: [u32; 2], qhi: [u32; 2]) -> (u32, u64) {
        let class = size_classes(self.c, &qlo, &qhi);
        let l = self.level(class);
        (l, count_at(self.c, &qlo, &qhi, l))
    }

    /// The level of every box whose extents fall in the size classes `class` (see
    /// [`size_class`]): a function of the classes alone, so that [`LevelTable`] can keep it.
    /// The model is evaluated at the classes' largest extents, and the budget holds for
    /// any box of the classes wherever it lies.
    fn level(&self, class: [u32; 2]) -> u32 {
        let (c, bits) = (self.c, self.bits);
        let mut ext = [0.0; 2];
        let mut widest = 0u32;
        let mut top = [0u32; 2];
        for k in 0..c as usize {
            top[k] = class_max(class[k]);
            widest = widest.max(top[k]);
            ext[k] = top[k] as f64;
        }
        let mut l = (u32::BITS - widest.leading_zeros()).min(bits);
        let mut here = self.cost(&ext, l);
        // Coarser while it pays (fewer entries, more candidates).
        while l < bits {
            let up = self.cost(&ext, l + 1);
            if up >= here {
                break;
            }
            l += 1;
            here = up;
        }
        // Finer while it pays, within the budget. The seed's level may exceed the budget
        // only for budgets below 2^c (rejected by Config::validate).
        while l > 0 {
            let down = self.cost(&ext, l - 1);
            if down >= here || most_at(c, &top, l - 1) > self.budget {
                break;
            }
            l -= 1;
            here = down;
        }
        l
    }
}

/// The size class of an extent of `e` grid units: `e` itself below 8, else its leading
/// four bits with their position (classes 8..=239, each within 12.5% of its extents).
#[inline(always)]
fn size_class(e: u32) -> u32 {
    if e < 8 {
        e
    } else {
        let p = 31 - e.leading_zeros();
        (p - 2) * 8 + (e >> (p - 3) & 7)
    }
}

/// The largest extent of size class `k`.
#[inline(always)]
fn class_max(k: u32) -> u32 {
    if k < 8 {
        k
    } else {
        let (p, mant) = (k / 8 + 2, (k % 8) as u64);
        (((9 + mant) << (p - 3)) - 1).min(u32::MAX as u64) as u32
    }
}

/// The size classes of a box's extents on the column axes.
#[inline(always)]
fn size_classes(c: u32, qlo: &[u32; 2], qhi: &[u32; 2]) -> [u32; 2] {
    let mut k = [0; 2];
    for a in 0..c as usize {
        k[a] = size_class(qhi[a] - qlo[a]);
    }
    k
}

/// The most columns a box of extents up to `top` can span at level `l`, wherever it lies.
#[inline(always)]
fn most_at(c: u32, top: &[u32; 2], l: u32) -> u64 {
    let mut n = 1u64;
    for &e in top.iter().take(c as usize) {
        n *= (e as u64 >> l) + 2;
    }
    n
}

/// [`LevelModel::level`] by size classes, remembered for one plan pass and shared by its
/// jobs: a two-way table of about `n / 16` slots (256 to 65,536; in 2D one a class), the
/// set of a pair of classes picked by Fibonacci hashing, each slot holding a class pair,
/// the pass's number and the level, so that a new pass starts afresh without clearing the
/// slots (they are cleared once every 255 passes). Jobs
/// that meet a class pair at the same time may both evaluate the model; they store the
/// same level, and a slot is one atomic word, so a reader sees one store or the other.
/// PERF: evaluated per box, the model (a chain of dependent multiplies and branches) took
/// the 1M uniform 3D plan from 14.6 to 29-36 ms (1 thread). A direct-mapped memo of 512
/// slots a job missed on a quarter of the boxes of the varied scene (sizes spread over two
/// orders of magnitude make thousands of class pairs, learnt again by every job): 25k
/// evaluations at 100k boxes. Memory: a slot a pair would be 256 KiB, 26 bytes a box at 10k.
#[derive(Debug, Default)]
pub(crate) struct LevelTable {
    /// `tag << 16 | pass << 8 | level`, `tag` the class pair.
    slots: Vec<AtomicU32>,
    pass: u32,
    /// Model evaluations (for the tests).
    #[cfg(test)]
    evals: std::sync::atomic::AtomicUsize,
}

impl LevelTable {
    /// Starts a pass over `n` boxes with `c` column axes.
    pub fn begin(&mut self, c: u32, n: usize) {
        let want = if c < 2 { 256 } else { (n / 16).clamp(256, 1 << 16).next_power_of_two() };
        if self.slots.len() != want {
            self.slots = (0..want).map(|_| AtomicU32::new(0)).collect();
            self.pass = 0;
        }
        if self.pass == 255 {
            for s in &self.slots {
                s.store(0, Relaxed);
            }
            self.pass = 0;
        }
        self.pass += 1;
    }

    /// The level and the column count of a box, as [`LevelModel::level`] gives them, with the
    /// level remembered by size classes.
    #[inline(always)]
    pub fn choose(&self, model: &LevelModel, qlo: [u32; 2], qhi: [u32; 2]) -> (u32, u64) {
        let class = size_classes(model.c, &qlo, &qhi);
        // Classes are below 240: a tag fits 8 bits an axis.
        let tag = class[0] | class[1] << 8;
        let want = tag << 8 | self.pass;
        // Two ways, slots `s` and `s + 1` (one cache line), the newer pair first; `s` by
        // Fibonacci hashing (the tag times 2^32 / phi, its top bits). PERF: one way at
        // `class[0] ^ 37 class[1]` (low bits) put a scene's close classes on few slots: 3D
        // uniform 100k boxes, 169 class pairs in 8,192 slots, made 2,513 model evaluations
        // a pass, 3D varied 10k (487 pairs, 1,024 slots) 1,991. Now one evaluation a pair
        // in both (one way with this hash: 2,299 at varied 10k).
        let s = (tag.wrapping_mul(0x9E37_79B1) >> (32 - self.slots.len().trailing_zeros())) as usize & !1;
        let (first, second) = (&self.slots[s], &self.slots[s + 1]);
        let v = first.load(Relaxed);
        let l = if v >> 8 == want {
            v & 0xff
        } else {
            let w = second.load(Relaxed);
            if w >> 8 == want {
                w & 0xff
            } else {
                let l = model.level(class);
                #[cfg(test)]
                self.evals.fetch_add(1, Relaxed);
                second.store(v, Relaxed);
                first.store(tag << 16 | self.pass << 8 | l, Relaxed);
                l
            }
        };
        (l, count_at(model.c, &qlo, &qhi, l))
    }
}

/// `2^e` for `e < 1024`, exactly, without a libm call (PERF: `f64::exp2` is one).
#[inline(always)]
fn pow2(e: u32) -> f64 {
    f64::from_bits((1023 + e as u64) << 52)
}

/// Bytes an entry takes, by dimension (0 to 3): its rows (`lo`, `hi` per axis, `qx`,
/// `qxh`, first flags: `8 D + 9`) and its `u64` key and radix scratch slot (16).
const ENTRY_BYTES: [f64; 4] = [25.0, 33.0, 41.0, 49.0];

/// The working memory a box's entries may take: under the 128 bytes a box the crate
/// promises, with room for the plan (3 bytes a box) and the small buffers.
const MEMORY_PER_BOX: f64 = 120.0;

/// Candidate cost over entry cost, for the level model.
/// PERF: tuned on the 1M 3D and 2D scenes of `benches/pairs.rs` (docs/BENCHMARKS.md).
fn cost_ratio() -> f64 {
    0.25
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
    fn add(self, o: Self) -> Self {
        Self {
            candidates: self.candidates + o.candidates,
            exact_tests: self.exact_tests + o.exact_tests,
            crowded: self.crowded + o.crowded,
            rdc_splits: self.rdc_splits + o.rdc_splits,
            ranges: [self.ranges[0] + o.ranges[0], self.ranges[1] + o.ranges[1]],
        }
    }
}

impl<const D: usize> Columns<D> {
    /// Sweeps the sorted, gathered `entries` into pair keys. Chunk `c` writes its keys
    /// into its share of `pool` (idle memory, e.g. the radix scratch: as many keys as the
    /// chunk has entries times `pool.len() / entries.len()`) and, past that, appends them
    /// to `spill` (their bit patterns, `bytemuck::cast_slice`) a block at a time. Returns the counts and,
    /// per chunk, the `(start, len)` of the keys it left in `pool`.
    pub fn sweep<T: Entry>(
        &self,
        entries: &[T],
        crowded_threshold: u32,
        refine: Refine,
        pool: &mut [u64],
        spill: &Mutex<Vec<[u32; 2]>>,
        n_ids: usize,
    ) -> (SweepCounts, Vec<ChunkKeys>) {
        let n = entries.len();
        let lay = self.layout;
        // Many chunks, also at small n: a run's range is swept by the chunk holding the
        // run, so a few long planks over a small scene made one chunk do most of the work.
        // PERF: 10k + 1000 mixed 3D, 2 threads: sweep 1.1 -> 0.8 ms (8192 entries a chunk
        // before; 1024 and 4096 measured too).
        let chunks = (n / 2048).clamp(1, rayon::current_num_threads() * 16);
        let mut bounds: Vec<usize> = (0..=chunks).map(|c| n * c / chunks).collect();
        for b in bounds.iter_mut().take(chunks).skip(1) {
            while *b < n && *b > 0 && lay.cell(entries[*b].to_u128()) == lay.cell(entries[*b - 1].to_u128()) {
                *b += 1;
            }
        }
        // Each chunk's share of the pool, in proportion to its entries.
        let per = pool.len().checked_div(n).unwrap_or(0);
        let mut shares = Vec::with_capacity(chunks);
        let mut rest = &mut pool[..n * per];
        for c in 0..chunks {
            let len = (bounds[c + 1].max(bounds[c]) - bounds[c]) * per;
            let (head, tail) = rest.split_at_mut(len.min(rest.len()));
            shares.push(head);
            rest = tail;
        }
        let mut starts = Vec::with_capacity(chunks);
        let mut start = 0;
        for c in 0..chunks {
            starts.push(start);
            start += (bounds[c + 1].max(bounds[c]) - bounds[c]) * per;
        }
        let fine = crate::pairs::fine_buckets(n_ids);
        let res: Vec<(SweepCounts, ChunkKeys)> = shares
            .into_par_iter()
            .enumerate()
            .map(|(c, share)| {
                let mut w = Walker {
                    cols: self.rows(),
                    entries,
                    lay,
                    threshold: crowded_threshold as u64,
                    refine,
                    out: Sink::new(share, spill, fine, block_keys(bounds[c + 1].max(bounds[c]) - bounds[c])),
                    uniq: Vec::new(),
                    ends: Vec::new(),
                    order: Vec::new(),
                    hits: Vec::new(),
                    counts: SweepCounts::default(),
                };
                let (from, to) = (bounds[c], bounds[c + 1].max(bounds[c]));
                crate::isa::fast_lanes(
                    &mut w,
                    #[inline(always)]
                    |w| w.walk::<crate::isa::Avx8>(from, to),
                    #[inline(always)]
                    |w| w.walk::<f32x8>(from, to),
                );
                (w.counts, w.out.finish(starts[c]))
            })
            .collect();
        let counts = res.iter().fold(SweepCounts::default(), |a, r| a.add(r.0));
        (counts, res.into_iter().map(|r| r.1).collect())
    }

    /// The rows as pair slots, for the pair stage to sort in once the sweep is done (their
    /// contents are rewritten by the next [`Columns::gather`]).
    pub fn spare_rows(&mut self) -> Vec<&mut [[u32; 2]]> {
        // One slice an array, as the pair stage's bucket count depends on the slices.
        let n = self.n_rows;
        let mut spare: Vec<&mut [[u32; 2]]> = self
            .rows
            .chunks_mut(self.stride.max(1))
            .map(|v| {
                let even = v.len().min(n) & !1;
                bytemuck::cast_slice_mut(&mut v[..even])
            })
            .collect();
        spare.push(bytemuck::pod_align_to_mut(&mut self.fst[..]).1);
        spare
    }
}

/// Keys a chunk gathers before it appends them to the shared spill under its lock, at
/// most. PERF (memory): the spill is the output vector, so the keys take no memory of
/// their own; before, each chunk kept blocks of 32k keys, and at 1M varied 3D boxes the
/// keys were 71 bytes a box.
pub(crate) const SPILL_BLOCK: usize = 1 << 12;

/// The block a sweep chunk of `entries` entries gathers its keys in: a quarter of a key an
/// entry, from 256 to [`SPILL_BLOCK`] keys. Every chunk running at once holds one, so
/// at a fixed size a small scene on many cores held a block a core: 3D varied 10k on
/// 16 cores (ten chunks of 2,048 entries) took 142.8 bytes a box, 113.7 on 2.
fn block_keys(entries: usize) -> usize {
    (entries / 4).clamp(256, SPILL_BLOCK)
}

/// Makes room for `more` keys in the spill, growing it by an eighth, not doubling: the
/// spill becomes the output, and its unused capacity is working memory (at 1M varied 3D
/// boxes, doubling left 44 bytes a box unused). On the first frame this copies the keys
/// about eight times where the allocator cannot grow in place; later frames reuse the
/// output's capacity.
pub(crate) fn grow(spill: &mut Vec<[u32; 2]>, more: usize) {
    if spill.capacity() - spill.len() < more {
        spill.reserve_exact(more.max(spill.len() / 8).max(SPILL_BLOCK));
    }
}

/// Where a chunk's pair keys go: a fixed slice first, then, a block at a time, the shared
/// spill.
/// PERF (memory): the slice is the radix scratch, idle during the sweep, so pairs up to
/// one per entry cost no memory of their own (1M clustered 3D: 138 to under 128 bytes a
/// box, docs/BENCHMARKS.md).
struct Sink<'a> {
    buf: &'a mut [u64],
    len: usize,
    spill: &'a Mutex<Vec<[u32; 2]>>,
    block: Vec<u64>,
    /// The block's capacity ([`block_keys`]).
    cap: usize,
    /// The keys' counts by `key >> shift` (see [`crate::pairs::fine_buckets`]), taken as a
    /// block goes to the spill and as the sink finishes, while the keys are in cache.
    hist: Vec<u32>,
    shift: u32,
    /// Where this sink's blocks went in the spill: `(start, len)`.
    blocks: Vec<(usize, usize)>,
}

/// What a sweep chunk's [`Sink`] left: its keys in its share of the pool (the first `len`),
/// its blocks in the spill, and the counts of all of them by fine bucket.
pub(crate) struct ChunkKeys {
    pub start: usize,
    pub len: usize,
    pub blocks: Vec<(usize, usize)>,
    pub hist: Vec<u32>,
}

impl<'a> Sink<'a> {
    /// `fine`: the bits and shift of the buckets to count keys in.
    fn new(buf: &'a mut [u64], spill: &'a Mutex<Vec<[u32; 2]>>, fine: (u32, u32), block: usize) -> Self {
        Self {
            buf,
            len: 0,
            spill,
            block: Vec::new(),
            cap: block,
            hist: vec![0; 1 << fine.0],
            shift: fine.1,
            blocks: Vec::new(),
        }
    }

    #[inline(always)]
    fn count(hist: &mut [u32], shift: u32, keys: &[u64]) {
        for &k in keys {
            hist[(k >> shift) as usize] += 1;
        }
    }

    #[inline(always)]
    fn push(&mut self, k: u64) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = k;
            self.len += 1;
        } else {
            if self.block.len() == self.block.capacity() {
                self.flush();
            }
            let l = self.block.len();
            // SAFETY: `l < capacity` (the flush leaves the block empty, with room).
            unsafe {
                self.block.as_mut_ptr().add(l).write(k);
                self.block.set_len(l + 1);
            }
        }
    }

    /// The keys `key(l)` of the lanes `l` set in `m` (bits 0 to 7), in lane order.
    /// `key` may be called for every lane 0 to 7, set or not.
    ///
    /// PERF: a loop over the set bits ends where the mask says, unpredictably (a mask has
    /// 0 to 8 hits); here every lane's key is written to the next free slot and the count
    /// advances by the lane's bit, so there is no branch but the room check. Demo, 1
    /// thread, against the bit loop (medians of p10 ratios, alternated): sweep 3D varied
    /// 100k 0.93-0.95, 10k 0.93, clustered 10k 0.98, 100k and 1M 1.01, uniform 1M 1.00;
    /// 2D varied 100k 0.93. A single hit taken by `push` instead (a branch on the mask)
    /// made the sweep 1.04x slower on varied and clustered 100k (same binary).
    #[inline(always)]
    fn push_masked(&mut self, m: u32, key: impl Fn(usize) -> u64) {
        // Eight free slots: in the buffer, else in the block (flushed if short of them).
        let in_buf = self.len + 8 <= self.buf.len();
        if !in_buf && self.block.capacity() - self.block.len() < 8 {
            self.flush();
        }
        let dst = if in_buf {
            self.buf[self.len..].as_mut_ptr()
        } else {
            // SAFETY: the block's length is within its capacity.
            unsafe { self.block.as_mut_ptr().add(self.block.len()) }
        };
        let mut at = 0;
        for l in 0..8 {
            // SAFETY: `dst` has eight writable slots (above) and `at <= l < 8`.
            unsafe { dst.add(at).write(key(l)) };
            at += (m >> l & 1) as usize;
        }
        if in_buf {
            self.len += at;
        } else {
            // SAFETY: the `at` slots past the old length were written above.
            unsafe { self.block.set_len(self.block.len() + at) };
        }
    }

    /// Counts the block's keys and appends them to the spill; empties the block.
    #[cold]
    #[inline(never)]
    fn flush(&mut self) {
        if !self.block.is_empty() {
            Self::count(&mut self.hist, self.shift, &self.block);
            // A poisoned lock only means another chunk panicked: its keys are whole.
            let mut spill = self.spill.lock().unwrap_or_else(|e| e.into_inner());
            grow(&mut spill, self.block.len());
            self.blocks.push((spill.len(), self.block.len()));
            spill.extend_from_slice(bytemuck::cast_slice(&self.block));
        }
        self.block.clear();
        self.block.reserve_exact(self.cap);
    }

    /// Flushes the last keys and counts those in the slice.
    fn finish(mut self, start: usize) -> ChunkKeys {
        self.flush();
        Self::count(&mut self.hist, self.shift, &self.buf[..self.len]);
        ChunkKeys { start, len: self.len, blocks: self.blocks, hist: self.hist }
    }
}

/// Up to eight run boxes in SIMD lanes (structure of arrays), for testing one range row
/// against all of them at once (see [`Rows::lanes_meeting`]). Empty lanes can overlap
/// nothing: their bounds are `+inf..-inf`.
struct Lanes<const D: usize> {
    lo: [[f32; 8]; D],
    hi: [[f32; 8]; D],
    /// The boxes' first-column flags ([`Layout::first`]).
    fst: [u8; 8],
    /// Their rows.
    row: [u32; 8],
    len: usize,
}

impl<const D: usize> Lanes<D> {
    fn empty() -> Self {
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
    fn test<T: Entry>(
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
                out.push(crate::pairs::key(lay.id(e[x]), idy));
                m &= m - 1;
            }
        }
        tested
    }
}

/// One chunk's walk state and scratch.
struct Walker<'a, const D: usize, T> {
    cols: Rows<'a, D>,
    entries: &'a [T],
    lay: Layout,
    threshold: u64,
    refine: Refine,
    out: Sink<'a>,
    /// Distinct boxes of a range, `(id, row)` (RDC path).
    uniq: Vec<(u32, u32)>,
    /// The run's running maximum of `qxhi` (range path).
    ends: Vec<f32>,
    /// A range's rows that stand for their boxes, as `qx << 32 | row`, sorted (grouped
    /// range path).
    order: Vec<u64>,
    /// A group's hit masks, one a run row (grouped range path).
    hits: Vec<u8>,
    counts: SweepCounts,
}

impl<'a, const D: usize, T: Entry> Walker<'a, D, T> {
    /// Handles every run starting in `from..to`.
    #[inline(always)]
    fn walk<V: F8>(&mut self, from: usize, to: usize) {
        let e = self.entries;
        let mut a = from;
        while a < to {
            let head = e[a].to_u128();
            // Entries of the same column differ only below the column bits.
            let run_last = T::from_u128(head | ((1u128 << self.lay.cell_from()) - 1));
            let b = gallop(e, a + 1, run_last);
            let r = gallop(e, b, T::from_u128(self.lay.last_nested(head)));
            let (m, rr) = ((b - a) as u64, (r - b) as u64);
            let crowded = m > 1 && m * (m - 1) / 2 + m * rr > self.threshold * (m + rr);
            self.counts.crowded += crowded as usize;
            if crowded && self.refine == Refine::Rdc && r - a > crate::rdc::Rdc::<D>::default().min_group_size
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
    /// among short ones does not make the other seven lanes wait. PERF: one row at a time,
    /// a sparse run (two or three rows a window) paid a call, a mask and a mispredicted
    /// exit a row. Sweep, demo best warm frame, 2 threads, alternating with the build
    /// before: 2D uniform 1M 17.8-18.0 -> 12.4 ms, 3D uniform 1M 32.9-33.1 -> 26.4-28.0,
    /// 100k 2.91-2.93 -> 2.08, 3D mixed 1M 52.1-54.1 -> 45.4-46.0; 3D tiles 100k (dense
    /// runs) 9.05-9.06 -> 9.3-9.9. `RUN_STEPS` 8 or 32 measured the same as 16.
    ///
    /// A step's hit mask goes to a byte; after the steps the bytes are read eight a word
    /// and each set bit emitted (bit `t`: lane `t % 8`, offset `t / 8 + 1`). PERF: a
    /// branch on every step's mask, then an emit of all eight lanes, mispredicted where
    /// hits come now and then; the words' loops end once per eight steps. Sweep, 1 thread,
    /// demo (p10 ratios, alternated): 3D uniform 1M 0.87, 3D varied 100k 0.91, 10k 0.91.
    #[inline(always)]
    fn run(&mut self, a: usize, b: usize) {
        let cols = self.cols;
        let (e, lay) = (self.entries, self.lay);
        let n = cols.qx.len();
        let all = low_mask(lay.c) as u32;
        let mut tested = 0;
        let mut i = a;
        while i + 1 < b && i + 8 <= n {
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
                    self.out.push(crate::pairs::key(lay.id(e[i + l]), lay.id(e[i + l + dd])));
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
        while i < b {
            tested += self.run_row(i, i + 1, b);
            i += 1;
        }
        self.counts.candidates += tested;
        self.counts.exact_tests += tested;
    }

    /// Run row `i` against run rows `from..b` (see [`Self::run`]); returns the rows tested.
    #[inline(always)]
    fn run_row(&mut self, i: usize, from: usize, b: usize) -> usize {
        let cols = self.cols;
        let (e, lay) = (self.entries, self.lay);
        let (fi, oi) = (lay.first(e[i]), lay.id(e[i]));
        let out = &mut self.out;
        cols.scan::<true>(
            &cols.get(i),
            cols.qxh[i],
            from..b,
            |j| cols.first_mask(j, fi),
            |y| crate::pairs::key(oi, lay.id(e[y])),
            out,
        )
    }

    /// The run `a..b` against its range `b..r` (entries in finer columns nested in the
    /// run's): each range row tests the window of the run that can reach it along the
    /// sweep axis. The run is sorted by `qx`; `ends[x]` is the largest `qxhi` of run rows
    /// `..=x`, so it ascends, and the run boxes overlapping `[qx(y), qxhi(y)]` lie from the
    /// first `x` with `ends[x] >= qx(y)` to the last with `qx[x] <= qxhi(y)`.
    #[inline(always)]
    fn range(&mut self, a: usize, b: usize, r: usize) {
        let cols = self.cols;
        let (e, lay) = (self.entries, self.lay);
        // PERF: the window started at `qx(y) - reach` (the run's longest box) before: on
        // 100k varied 3D boxes the ranges tested 5.94M rows, of which 4.09M overlap along
        // the axis. Now the frame tests 66.2 candidates a box, not 77.3 (1M: 63.9, not
        // 76.2); sweep at 2 threads (demo, best warm) 16.3-16.5 -> 15.7-16.0 ms at 100k,
        // 178-184 -> 168 ms at 1M.
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
        // PERF: before, every entry of a range box was tested and the duplicates masked by a
        // box test on the run box's corner (at the range entry's level): on 100k varied 3D
        // boxes 2.53M exact hits for 1.15M pairs.
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
        while y0 < r {
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
                    |x| crate::pairs::key(lay.id(e[x]), idy),
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
    /// PERF: row by row, a range row paid a window search, a scan of about three SIMD steps
    /// whose exit and hit branches mispredict, and its emits. Grouped, the searches and
    /// branches are a group's, at the cost of a wider window a row (3D varied 100k: 64.7
    /// candidates a box, 56.4 row by row). 3D varied, 1 thread, demo, row by row against
    /// grouped by a switch in one binary (p10 ratios, alternated): sweep 1.18 at 100k and
    /// 1.17 at 10k, frame 1.10 and 1.09 (docs/BENCHMARKS.md, also for where it is not
    /// taken).
    #[inline(always)]
    fn range_grouped<V: F8>(&mut self, a: usize, b: usize, r: usize) {
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
        while !rest.is_empty() {
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
                    self.out.push(crate::pairs::key(lay.id(e[x0 + wi * 8 + t / 8]), id[t % 8]));
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

    /// RDC over the run and the distinct boxes of its range together; inside each final
    /// group only pairs with a run entry are offered, each once (range x range pairs belong
    /// to the ranges' own runs). A run x range hit is this run's iff the run's column holds
    /// the reference point: `owns(run entry, corner of the range box)` (see [`Layout::owns`]).
    #[inline(never)]
    fn rdc(&mut self, a: usize, b: usize, r: usize) {
        let cols = self.cols;
        let (e, lay, m) = (self.entries, self.lay, b - a);
        let mut uniq = std::mem::take(&mut self.uniq);
        uniq.clear();
        uniq.extend((b..r).map(|y| (lay.id(e[y]), y as u32)));
        uniq.sort_unstable();
        uniq.dedup_by_key(|u| u.0);
        let all = low_mask(lay.c) as u32;
        let boxes = (a..b).map(|x| cols.get(x)).chain(uniq.iter().map(|u| cols.get(u.1 as usize)));
        let (splits, tests) = crate::rdc::refine_cell(boxes, m, |x, y| {
            let ex = e[a + x];
            if y < m {
                let ey = e[a + y];
                if lay.first(ex) | lay.first(ey) == all {
                    self.out.push(crate::pairs::key(lay.id(ex), lay.id(ey)));
                }
            } else {
                let (id, row) = uniq[y - m];
                if lay.owns(ex, cols.corner(row as usize)) {
                    self.out.push(crate::pairs::key(lay.id(ex), id));
                }
            }
        });
        self.uniq = uniq;
        self.counts.rdc_splits += splits;
        self.counts.candidates += tests;
        self.counts.exact_tests += tests;
    }
}

/// Tests run rows `x0..` (up to `b`, while `qx <= qh`) against a group's eight lanes
/// (`lo`, `hi`, first flags `fy`; see [`Walker::range_grouped`]): one hit mask a run row
/// into `hits` (cleared first). Returns the rows tested.
///
/// PERF: the group's boxes stay in registers across the steps: six of eight lanes in 3D.
/// As `wide::f32x8` on the AVX2 path they are twelve 128-bit halves, and the loop spilled
/// them and its broadcasts to the stack at every step; as [`crate::isa::Avx8`] six
/// 256-bit registers. Sweep, 1 thread, demo (p10 ratios, alternated with the build
/// before): 3D varied 10k 0.91, 100k 0.91.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn group_window<V: F8, const D: usize>(
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
    // SAFETY: the first `x` slots were written.
    unsafe { hits.set_len(x) };
    x
}

/// Whether a run of `m` rows sweeps its range of `rr` rows in groups
/// ([`Walker::range_grouped`]) rather than row by row ([`Walker::range`]): in 3D, for a
/// range of 16 rows or more, at least a third of the run's and at most four times it.
/// - A sparser range spreads a group's starts over many run rows, each tested against
///   every lane.
/// - A denser one is a crowd under a few long boxes (planks), where the row-by-row path's
///   pieces test each range row against the few run boxes meeting its piece
///   ([`Rows::lanes_meeting`]).
/// - In 2D grouping was slower: 2D varied 100k sweep 1.02, 2D mixed 100k 1.16 (1 thread;
///   docs/BENCHMARKS.md).
#[inline(always)]
fn grouped<const D: usize>(m: usize, rr: usize) -> bool {
    D == 3 && rr >= 16 && 3 * rr >= m && rr <= 4 * m
}

/// The first index `>= from` whose `ends` is at least `q` (`ends` ascending): eight values
/// a step, the step's count read from a SIMD mask (a prefix, as `ends` ascends), for up to
/// [`ADVANCE_STEPS`] steps; past those, an exponential then binary search, so that a window
/// that jumps far (a long run under rows spread along the axis) costs a logarithm, not a
/// step every eight rows.
/// PERF: the search alone (branches that depend on the data at every range row) made the
/// sweep slower. Demo, 1 thread, builds alternated run by run, median ratio of the sweep
/// stage with the steps: 2D varied 100k 0.81, 1M 0.85, 2D mixed 100k 0.88, 3D varied 100k
/// 0.96; 3D mixed and clustered 100k 1.00 and 1.02 (within the noise). The search after
/// eight steps, against the steps alone: 2D varied 100k 1.00, 1M 1.02 (four steps: 1.03).
#[inline(always)]
fn advance_to(ends: &[f32], mut from: usize, q: f32) -> usize {
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
const ADVANCE_STEPS: usize = 8;

/// The first index `>= from` whose entry is greater than `last` (entries sorted).
fn gallop<T: Entry>(e: &[T], from: usize, last: T) -> usize {
    gallop_by(e, from, |&v| v <= last)
}

/// The first index `>= from` of `v` where `below` stops holding (it holds on a prefix of
/// `v[from..]`): exponential then binary search, so a short way costs a compare or two,
/// and a long one a logarithm.
#[inline(always)]
fn gallop_by<T>(v: &[T], from: usize, below: impl Fn(&T) -> bool) -> usize {
    let mut lo = from;
    let mut step = 1;
    while lo + step <= v.len() && below(&v[lo + step - 1]) {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(v.len());
    lo + v[lo..hi].partition_point(&below)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key comes back: the slice's in push order, the spilled ones once each, over
    /// slices and spills of several sizes (a spill holding keys of other chunks before).
    #[test]
    fn sink_keeps_every_key() {
        for (case, &(slots, n, before)) in [
            (10usize, 3 * SPILL_BLOCK + 5, 0usize),
            (0, SPILL_BLOCK, 3),
            (4, 7, 0),
            (1, 2 * SPILL_BLOCK + 1, 1),
            (0, 0, 0),
        ]
        .iter()
        .enumerate()
        {
            let mut buf = vec![0u64; slots];
            let spill = Mutex::new(vec![[5u32, 5]; before]);
            let mut sink = Sink::new(&mut buf, &spill, (2, 62), SPILL_BLOCK);
            let want: Vec<u64> = (0..n as u64).map(|k| k * 7 + case as u64).collect();
            for &k in &want {
                sink.push(k);
            }
            let keys = sink.finish(0);
            let len = keys.len;
            assert_eq!(len, slots.min(n), "case {case}");
            // Counted by the top two bits (all zero here), and placed where the blocks say.
            assert_eq!(keys.hist, vec![n as u32, 0, 0, 0], "case {case}");
            let placed: usize = keys.blocks.iter().map(|b| b.1).sum();
            assert_eq!(placed, n - len, "case {case}");
            assert_eq!(buf[..len], want[..len], "case {case}");
            let spill = spill.into_inner().unwrap();
            assert_eq!(spill[..before], vec![[5u32, 5]; before][..], "case {case}");
            let mut got: Vec<u64> = spill[before..].iter().map(|&s| bytemuck::cast(s)).collect();
            got.sort_unstable();
            assert_eq!(got, want[len..], "case {case}");
        }
    }

    /// The spill grows by an eighth (or a block), so its unused capacity stays small.
    #[test]
    fn spill_grows_by_an_eighth() {
        let mut spill: Vec<[u32; 2]> = Vec::new();
        for step in 0..4000usize {
            let more = [1, SPILL_BLOCK, 3 * SPILL_BLOCK + 7, 100][step % 4];
            grow(&mut spill, more);
            assert!(spill.capacity() - spill.len() >= more, "step {step}: no room");
            spill.extend(std::iter::repeat_n([step as u32, 0], more));
            let slack = spill.capacity() - spill.len();
            assert!(
                slack <= (spill.len() / 8).max(3 * SPILL_BLOCK + 7),
                "step {step}: slack {slack} at {}",
                spill.len()
            );
        }
    }

    #[test]
    fn layout_round_trips() {
        let lay = Layout { id_bits: 20, c: 2, x_bits: 21, lvl_bits: 3, key_bits: 18, l_min: 5, l_max: 9 };
        let e = lay.pack(12345, 7, 777_777, 3, 999);
        assert_eq!(lay.id(e), 999);
        assert_eq!(lay.first(e), 3);
        assert_eq!(lay.qx(e), 777_777);
        assert_eq!(lay.level(e), 7);
        assert_eq!(lay.start(e), 12345);
        // A level-7 column spans 2^(2*(7-5)) = 16 shifted starts.
        assert!(lay.pack(12345 + 15, 5, (1 << 21) - 1, 3, (1 << 20) - 1) <= lay.last_nested(e));
        assert!(lay.pack(12345 + 16, 5, 0, 0, 0) > lay.last_nested(e));
    }

    /// A world as wide as the grid on both column axes.
    fn full(bits: u32) -> [f64; 2] {
        [pow2(bits); 2]
    }

    /// Boxes on one plane (a 2D scene laid out in 3D: `z = 0` for all, swept along `x`, so
    /// the columns are over `y` and `z`): a column's cross-section inside the world is a
    /// strip `2^l` by one unit, not a square, and a unit square keeps one or two columns.
    /// Taken as squares, the candidates seemed to grow as `4^l` and the same box went to
    /// many fine columns (19 a box at 200k boxes).
    #[test]
    fn flat_world_keeps_columns_coarse() {
        // 200k unit squares over 894 x 894 world units, 21 bits: a square is 2,345 grid
        // units wide; a whole-scene sweep along x tests about 224 boxes a box.
        let lambda = 224.0 / pow2(21) * cost_ratio();
        let (qlo, qhi) = ([1000, 0], [3345, 0]);
        let flat = LevelModel::new(2, 21, 64, lambda, [pow2(21), 1.0]).choose(qlo, qhi);
        let square = LevelModel::new(2, 21, 64, lambda, full(21)).choose(qlo, qhi);
        assert!(flat.1 <= 2, "flat world: {flat:?}");
        assert!(square.0 < flat.0 && square.1 > 4, "square columns: {square:?} against {flat:?}");
    }

    #[test]
    fn levels_seed_coarser_finer() {
        let choose = |c, qlo, qhi, budget, bits, lambda| {
            LevelModel::new(c, bits, budget, lambda, full(bits)).choose(qlo, qhi)
        };
        // Sparse: a box 10 units wide keeps the seed level 4 or goes coarser.
        let (l, n) = choose(2, [6, 6], [16, 16], 64, 21, 1e-12);
        assert!(l >= 4 && n <= 4, "l={l} n={n}");
        // Dense: the same box goes finer, within the budget.
        let (l, n) = choose(2, [6, 6], [16, 16], 64, 21, 1.0);
        assert!(l < 4 && n <= 64, "l={l} n={n}");
        // A plank across the columns goes finer than its seed level.
        let (l, n) = choose(2, [0, 0], [1000, 1], 64, 21, 1.0 / 64.0);
        assert!(l < 10 && n <= 64, "l={l} n={n}");
        // A point, and the whole grid.
        assert_eq!(choose(1, [5, 0], [5, 0], 16, 32, 1.0), (0, 1));
        assert_eq!(choose(2, [0; 2], [(1 << 21) - 1; 2], 8, 21, 0.0), (21, 1));
        assert_eq!(choose(1, [0, 0], [u32::MAX, 0], 4, 32, 0.0), (32, 1));
    }

    /// `advance_to` finds what a binary search finds, from every start at or before it, on
    /// ascending values with long ties.
    #[test]
    fn advance_to_matches_a_binary_search() {
        let mut r = crate::scene::Rng::new(7);
        for len in [0usize, 1, 2, 7, 8, 9, 100, 1000] {
            let mut v: Vec<f32> = (0..len).map(|_| r.below(len / 4 + 2) as f32).collect();
            v.sort_by(f32::total_cmp);
            for q in [-1.0, 0.0, 0.5, 1.0, (len / 8) as f32, (len / 4 + 1) as f32, 1e9] {
                let want = v.partition_point(|&h| h < q);
                for from in (0..=want).step_by(want / 64 + 1).chain([want]) {
                    assert_eq!(advance_to(&v, from, q), want, "len {len} q {q} from {from}");
                }
            }
        }
    }

    #[test]
    fn size_classes_bound_their_extents() {
        let mut r = crate::scene::Rng::new(5);
        let sample = (0..70_000u32).chain((0..100_000).map(|_| r.next_u64() as u32 >> (r.next_u64() % 32)));
        for e in sample.chain([u32::MAX, u32::MAX - 1, 1 << 31]) {
            let k = size_class(e);
            assert!(k < 240, "{e}");
            let top = class_max(k);
            assert!(top >= e && size_class(top) == k, "e={e} k={k} top={top}");
            // Within 12.5% of the class's largest extent.
            assert!(top as u64 - e as u64 <= (top as u64 >> 3), "e={e} top={top}");
            if e > 0 {
                assert!(size_class(e - 1) <= k);
            }
        }
    }

    #[test]
    fn cached_levels_match_the_model_and_keep_the_budget() {
        let mut r = crate::scene::Rng::new(11);
        for &(c, bits, budget, lambda) in
            &[(2, 21, 8, 1e-9), (2, 21, 64, 1e-3), (1, 32, 4, 1e-6), (1, 32, 4096, 1.0)]
        {
            let model = LevelModel::new(c, bits, budget, lambda, full(bits));
            let mut memo = LevelTable::default();
            memo.begin(c, 20_000);
            for _ in 0..20_000 {
                let top = (1u64 << bits) - 1;
                let mut qlo = [0u32; 2];
                let mut qhi = [0u32; 2];
                for k in 0..c as usize {
                    let a = (r.next_u64() % (top + 1)) as u32;
                    let w = (r.next_u64() >> (r.next_u64() % 64)) as u32;
                    qlo[k] = a;
                    qhi[k] = (a as u64 + w as u64).min(top) as u32;
                }
                let (l, n) = model.choose(qlo, qhi);
                assert_eq!(memo.choose(&model, qlo, qhi), (l, n));
                assert!(n <= budget.max(1 << c), "{qlo:?} {qhi:?} l={l} n={n}");
                assert_eq!(n, count_at(c, &qlo, &qhi, l));
            }
        }
    }

    /// The row arrays' stride: room for the rows, at most seven lines of padding (and the
    /// rounding to a line), and every array's start four lines or more from every other's
    /// modulo a page, for every `n` modulo a page.
    #[test]
    fn row_strides_stagger_the_arrays() {
        for arrays in [4, 6, 8] {
            for n in (0..3000).chain((1 << 20)..(1 << 20) + 1024) {
                let st = row_stride(n, arrays);
                assert!(st >= n && st - n.next_multiple_of(16) <= 7 * 16, "n {n}: stride {st}");
                let at: Vec<usize> = (0..arrays).map(|m| m * st % 1024).collect();
                for (a, &x) in at.iter().enumerate() {
                    for &y in &at[a + 1..] {
                        let d = x.abs_diff(y);
                        assert!(d.min(1024 - d) >= 64, "n {n}, {arrays} arrays: starts {at:?}");
                    }
                }
            }
        }
    }

    /// Each pass of the level table answers for its own model: passes alternate between
    /// models that choose different levels, more passes than the slots' pass numbers hold
    /// (so the slots are cleared and counted afresh on the way).
    #[test]
    fn level_table_forgets_between_passes() {
        let mut r = crate::scene::Rng::new(12);
        for c in 1..=2u32 {
            let models = [1e-9, 1e-3].map(|lambda| LevelModel::new(c, 21, 64, lambda, full(21)));
            let mut table = LevelTable::default();
            let mut differ = 0;
            for pass in 0..600 {
                table.begin(c, 0);
                let model = &models[pass % 2];
                for _ in 0..20 {
                    let mut qlo = [0u32; 2];
                    let mut qhi = [0u32; 2];
                    for k in 0..c as usize {
                        qlo[k] = (r.next_u64() % (1 << 20)) as u32;
                        qhi[k] = qlo[k] + (r.next_u64() % (1 << (r.next_u64() % 20))) as u32;
                    }
                    let want = model.choose(qlo, qhi);
                    differ += (models[(pass + 1) % 2].choose(qlo, qhi) != want) as usize;
                    assert_eq!(table.choose(model, qlo, qhi), want, "c={c} pass {pass}");
                    assert_eq!(table.choose(model, qlo, qhi), want, "c={c} pass {pass}, again");
                }
            }
            assert!(differ > 100, "the two models should choose differently: {differ}");
        }
    }

    /// A scene's class pairs are close (sizes within a few octaves; 256 to 576 pairs
    /// here): each is evaluated once a pass, in the tables sized for 10k and 100k boxes
    /// (1,024 and 8,192 slots). With the old hash (low bits, one way) this failed (1,639
    /// evaluations for 576 pairs), and with this hash in one way (1,025 for 256).
    #[test]
    fn level_table_evaluates_each_class_pair_once() {
        let model = LevelModel::new(2, 21, 64, 1e-9, full(21));
        let mut r = crate::scene::Rng::new(5);
        for (n, octaves) in [(10_000, 2u32), (10_000, 3), (100_000, 2), (100_000, 4)] {
            let mut table = LevelTable::default();
            table.begin(2, n);
            let mut pairs = std::collections::BTreeSet::new();
            for _ in 0..20_000 {
                let mut qlo = [0u32; 2];
                let mut qhi = [0u32; 2];
                for k in 0..2 {
                    qlo[k] = (r.next_u64() % (1 << 19)) as u32;
                    let ext = (1u64 << 12) << (r.next_u64() % octaves as u64);
                    qhi[k] = qlo[k] + (ext + r.next_u64() % ext) as u32;
                }
                pairs.insert(size_classes(2, &qlo, &qhi));
                assert_eq!(table.choose(&model, qlo, qhi), model.choose(qlo, qhi));
            }
            let evals = table.evals.load(Relaxed);
            assert_eq!(evals, pairs.len(), "n {n}, {octaves} octaves: {} slots", table.slots.len());
        }
    }

    /// [`Layout::represents`] against its definition on coordinates: a column at a fine
    /// level nested in a coarser one, first flags at random; the entry represents its box
    /// iff on every column axis it is the box's first column or starts at the coarse
    /// column's edge.
    #[test]
    fn represents_is_first_or_at_the_edge() {
        let mut r = crate::scene::Rng::new(3);
        for &(c, bits, l_min, l_max) in
            &[(2u32, 21u32, 3u32, 9u32), (2, 21, 0, 21), (1, 32, 5, 32), (1, 32, 0, 2), (0, 32, 0, 4)]
        {
            let lvl_bits = u32::BITS - (l_max - l_min).leading_zeros();
            let lay = Layout {
                id_bits: 10,
                c,
                x_bits: 8,
                lvl_bits,
                key_bits: (c * (bits - l_min)).max(1),
                l_min,
                l_max,
            };
            let top = (1u64 << bits) - 1;
            let start_of = |col: [u32; 2], level: u32| {
                col_code(c, col.map(|v| (v as u64).checked_shl(level).unwrap_or(0) as u32)) >> (c * l_min)
            };
            let mut seen = [0usize; 2];
            for _ in 0..20_000 {
                let coarse = l_min + 1 + (r.next_u64() % (l_max - l_min) as u64) as u32;
                let fine = l_min + (r.next_u64() % (coarse - l_min) as u64) as u32;
                let q: [u32; 2] =
                    std::array::from_fn(|k| if k < c as usize { (r.next_u64() & top) as u32 } else { 0 });
                // The fine column at the coarse one's edge on some axes, at random elsewhere.
                let edge = r.next_u64();
                let fcol: [u32; 2] = std::array::from_fn(|k| {
                    let v = if edge >> k & 1 == 1 {
                        shr32(q[k], coarse) << (coarse - fine).min(31)
                    } else {
                        shr32(q[k], fine)
                    };
                    if k < c as usize {
                        v
                    } else {
                        0
                    }
                });
                let ccol = q.map(|v| shr32(v, coarse));
                let first = (r.next_u64() & 3) as u32 & low_mask(c) as u32;
                // As a u128 entry: the layouts of 21-bit levels take more than 64 bits.
                let e = lay.pack(start_of(fcol, fine), fine, 0, first, 1);
                let want = (0..c as usize)
                    .all(|k| first >> k & 1 == 1 || (fcol[k] as u64) << fine == (ccol[k] as u64) << coarse);
                seen[want as usize] += 1;
                assert_eq!(
                    lay.represents(e, start_of(ccol, coarse)),
                    want,
                    "c={c} coarse={coarse} fine={fine} first={first} fcol={fcol:?} ccol={ccol:?}"
                );
            }
            assert!(c == 0 || seen[0] > 1000 && seen[1] > 1000, "both answers: {seen:?}");
        }
    }

    #[test]
    fn first_mask_is_the_run_rule() {
        let mut r = crate::scene::Rng::new(5);
        let mut cols = Columns::<3>::default();
        for c in 1..=2u32 {
            cols.layout.c = c;
            let all = low_mask(c) as u32;
            for _ in 0..5_000 {
                cols.fst = (0..8).map(|_| (r.next_u64() as u32 & all) as u8).collect();
                let fi = r.next_u64() as u32 & all;
                let want = (0..8).filter(|&k| fi | cols.fst[k] as u32 == all).fold(0, |m, k| m | 1 << k);
                assert_eq!(cols.rows().first_mask(0, fi), want, "c={c} fi={fi} fst={:?}", cols.fst);
            }
        }
    }
}
