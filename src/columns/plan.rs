//! Plan: every box's level and column count, and the entry layout that fits them.
//!
//! - Input: the boxes, the config (margin, `max_columns_per_box`), the grid bounds, the
//!   sweep axis and the scene scan's figures (densities, mean extent, bulk, size spread).
//! - Output: the quantiser, each box's level and column count, the entries of each
//!   [`chunk_len`] chunk and in all, and the [`Layout`] (bit widths, `qx` precision).
//! - Cost: `O(n)` a pass, the cost model evaluated once a size-class pair
//!   ([`LevelTable`]); a dense scene that overflows the memory cap takes up to four more
//!   passes, each coarser.
//! - Parallel: a rayon map over fixed chunks; each box's level depends on the box alone,
//!   so the plan does not depend on the thread count.
//! - Allocation: the per-box level and count arrays grow to `n` and are reused; a vector of
//!   per-chunk results a pass.
//! - Source: the level model and the density corrections, this crate; aligned Morton
//!   levels, Dmytry Lavrov's Morton-order collision detection article.

use super::layout::col_axes;
use super::layout::Layout;
use super::layout::X_BITS_LEAST;
use super::layout::X_BITS_MAX;
use super::layout::X_BITS_MIN;
use super::levels::cost_ratio;
use super::levels::pow2;
use super::levels::LevelModel;
use super::levels::LevelTable;
use super::levels::ENTRY_BYTES;
use super::levels::MEMORY_PER_BOX;
use super::{Columns, Strays};
use crate::kernels::morton::grid_bits;
use crate::kernels::morton::Quantizer;
use crate::kernels::par::chunk_len;
use crate::kernels::par::SendPtr;
use crate::par::prelude::*;
use crate::Aabb;
use crate::Config;

impl<const D: usize> Columns<D> {
    /// Chooses every box's level (in 1D every box is in the one column, level 0).
    /// `bounds` are the grid bounds (finite); `density` the expected tests a box of a
    /// whole-scene sweep along `ax` (the density along the sweep axis, for the cost model),
    /// over the spread of all lower bounds and over the bulk's
    /// ([`crate::choose::AxisStats::plan_density`]); `mean_ext` the boxes' mean extent along
    /// `ax` (for the `qx` precision); `bulk` the extent the bulk of the boxes occupies on
    /// each axis, where known, and the share of the axis they cover (for the cost model's
    /// density); `spread` how far the boxes' sizes spread
    /// ([`crate::choose::AxisStats::size_spread`]).
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
        split_strays: bool,
    ) {
        let m = config.margin;
        let bits = grid_bits(D);
        let c = D as u32 - 1;
        let cols = col_axes::<D>(ax);
        // One scale on the column axes, the widest one's: a column is square in world
        // units, whatever the world's shape. A scale per axis is not used: in a flat world
        // (a terrain, a game level, far wider than high) columns would be many times longer
        // than wide in world units, and a triangle's column would hold a strip of its
        // neighbours. The sweep axis keeps its own scale (`qx`).
        // PERF: benches/pairs.rs (3D terrain).
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
        crate::kernels::par::grow_to(&mut self.level, n);
        crate::kernels::par::grow_to(&mut self.count, n);
        // The extent on each column axis, in grid units (at least one), of the part of the
        // world the boxes occupy, and its cross-section: the boxes' density is that of this
        // part. Where a few boxes far larger than the rest (a ground plane, a level's
        // bounding volume) stretch the grid beyond the bulk of the scene, the rest are
        // denser than the whole grid's cross-section says, and columns chosen for the
        // whole grid's density are too coarse: more candidates a box. The bulk's
        // cross-section is taken only where it is under half the grid's: the model is
        // sensitive near its choices, and a scene whose bulk fills most of the grid on an
        // axis (3D tiles: 0.8 of it) would take a level that sweeps more.
        // PERF: benches/pairs.rs (3D tiles).
        // Boxes gathered in a few far-apart places (islands, levels, cities) cover a small
        // share of each axis: the density is that of the places (`AxisStats::covered`, 1
        // for any other scene), on the grid's extents and the bulk's alike. With the whole
        // cross-section's density such a scene takes one column a box and is swept almost
        // whole. PERF: benches/pairs.rs (3D levels).
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
        // Sizes spread widely (over [`crate::choose::SIZE_SPREAD_MAX`]), 3D: half the
        // candidates' weight. `per_box` is a whole-scene sweep's tests a box, which the big
        // boxes' extents along the sweep axis inflate; the many small boxes meet fewer
        // candidates than it says (a box of extent `e` meets about the boxes within
        // `e + mean` of it, not `2 mean`). Of the scenes of `scene::by_name` only varied
        // spreads that far. Not in 2D: 2D varied is slower so at 1M boxes.
        // PERF: benches/pairs.rs (3D varied, 2D varied).
        let wide = c == 2 && spread > crate::choose::SIZE_SPREAD_MAX;
        let lambda = per_box / area * cost_ratio() * if wide { 0.5 } else { 1.0 };
        let level_out = SendPtr(self.level.as_mut_ptr());
        let count_out = SendPtr(self.count.as_mut_ptr());
        let chunk = chunk_len(n);
        // Boxes wholly outside the grid (strays the trim left out: objects parked far
        // away) get no entries where `split_strays` is set: clamped onto the grid's border
        // they would crowd its border columns. The pipeline finds their pairs apart, with
        // the boxes that cross the grid's border (`Columns::strays`). They are told apart
        // in the level pass, before the level model: a parked half of the scene would
        // otherwise cost the model as much as the bulk. PERF: benches/pairs.rs
        // (`parked:50:1e9`).
        let grid = Aabb { min: bounds.min, max: grid_hi };
        let pass = |model: &LevelModel, table: &LevelTable| -> Vec<(u32, u32, usize, Strays)> {
            boxes
                .par_chunks(chunk)
                .enumerate()
                .map(|(ci, part)| {
                    crate::kernels::simd::fast(
                        #[inline(always)]
                        || {
                            let (mut l_min, mut l_max, mut cells) = (u32::MAX, 0, 0usize);
                            let mut st = Strays::default();
                            for (j, b) in part.iter().enumerate() {
                                let i = ci * chunk + j;
                                let g = b.grown(m);
                                let (l, count) = if g.is_inverted() {
                                    (0, 0)
                                } else if split_strays && !g.overlaps(&grid) {
                                    st.far.push(i as u32);
                                    (0, 0)
                                } else {
                                    if split_strays && !grid.contains(&g) {
                                        st.crossing.push(i as u32);
                                    }
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
                            (l_min, l_max, cells, st)
                        },
                    )
                })
                .collect()
        };
        let budget = config.max_columns_per_box as u64;
        let mut table = std::mem::take(&mut self.levels);
        table.begin(c, n);
        let mut parts = pass(&LevelModel::new(c, bits, budget, lambda, world), &table);
        // Memory: each entry takes its rows, its key and the radix scratch's slot
        // ([`ENTRY_BYTES`]). Where the model's choice makes more than a box's share of
        // [`MEMORY_PER_BOX`] (a dense scene, as `scene::copies`: ten copies of every box),
        // the candidates weigh less and the plan is made again, coarser, until it fits: at
        // `lambda = 0` every box takes its fewest columns, one.
        let cap = (MEMORY_PER_BOX / ENTRY_BYTES[D.min(3)] * n as f64) as usize;
        // Before the weight goes to zero, the column budget shrinks: where a few long boxes
        // take most of the entries (sticks at scale), they go coarser and the rest keep
        // their columns; at zero weight every box would go coarse, down to one column for
        // the whole scene.
        // PERF: benches/pairs.rs (sticks; copies, which fits before).
        let small = (budget / 16).max(1);
        let steps = [(budget, 0.5), (budget, 0.25), (budget, 0.0625), (small, 0.0625), (small, 0.0)];
        for (b, shrink) in steps {
            if parts.iter().map(|p| p.2).sum::<usize>() <= cap || lambda == 0.0 {
                break;
            }
            table.begin(c, n);
            parts = pass(&LevelModel::new(c, bits, b, lambda * shrink, world), &table);
        }
        self.levels = table;
        self.strays.far.clear();
        self.strays.crossing.clear();
        for p in &parts {
            self.strays.far.extend_from_slice(&p.3.far);
            self.strays.crossing.extend_from_slice(&p.3.crossing);
        }
        let (mut l_min, mut l_max, mut cells) = (u32::MAX, 0, 0);
        self.chunk_entries.clear();
        for &(a, b, k, _) in &parts {
            l_min = l_min.min(a);
            l_max = l_max.max(b);
            cells += k;
            self.chunk_entries.push(k);
        }
        let l_min = l_min.min(l_max);
        self.entries = cells;
        let id_bits = usize::BITS - n.saturating_sub(1).leading_zeros();
        let lvl_bits = u32::BITS - (l_max - l_min).leading_zeros();
        // At least one key bit, so that shifts stay below the width when every box is a
        // whole-grid column.
        let key_bits = (c * (bits - l_min)).max(1);
        // `qx` precision: a step of at most a quarter of the mean extent along the sweep
        // axis (a coarser `qx` widens every sweep window by up to a step; a finer one costs
        // sort passes), then as many more bits as fill the sort's last digit: those cost no
        // pass, while one bit past it costs a whole pass, more than the candidates a
        // coarser `qx` adds. PERF: benches/pairs.rs (3D uniform).
        let span = bounds.max[ax] as f64 - bounds.min[ax] as f64;
        let want = if mean_ext > 0.0 && span > 0.0 {
            ((4.0 * span / mean_ext).log2().ceil() as u32).clamp(X_BITS_LEAST, X_BITS_MAX)
        } else if span > 0.0 {
            X_BITS_MAX
        } else {
            X_BITS_LEAST
        };
        let other = lvl_bits + key_bits;
        let digit = crate::kernels::radix_sort::digit_bits(cells);
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
    pub(super) fn qx_of(&self, x: f32) -> u32 {
        self.quant.coord(self.ax, x) >> self.x_shift
    }
}
