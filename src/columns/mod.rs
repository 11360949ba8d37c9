//! The column pipeline: Morton columns over `D - 1` axes, sweep-and-prune along the last.
//!
//! - Input: the user's boxes (validated), the margin, the grid bounds and the sweep axis
//!   `ax` (the axis along which boxes overlap least, from the scene scan).
//! - Output: pair keys ([`crate::kernels::pair_sort::key`]) a sweep chunk, in idle memory
//!   and a shared spill ([`sink`]), and the sweep's counts; the pair stage sorts them.
//! - Columns: the grid is quantised on every axis, but columns split only the `D - 1`
//!   *column axes*; along `ax` a column is as long as the world (a column in 3D, a stripe
//!   in 2D). A box covers the aligned columns at its level `l` (side `2^l` grid units) that
//!   its quantised extent touches, one *entry* each. Along `ax` the entries of a column
//!   are kept sorted by their quantised lower bound, so the column is swept with
//!   sweep-and-prune: a box tests only the boxes of its column that start before it ends.
//! - Why columns rather than cubes: a box spans `(1 + s/c)^(D-1)` columns instead of
//!   `(1 + s/c)^D` cubes, and sweep-and-prune does along one axis what a cube split does
//!   with entries. Cubes are not used: every entry is written, sorted and gathered, and a
//!   cube split makes more of them a box for the same candidates.
//! - Entry key (u64 when it fits, else u128), low to high:
//!   `[id][first: D-1][qx: x_bits][l_max - level][column start >> (D-1) l_min]`
//!   ([`Layout`]). Sorting on everything above `first` gives columns in Morton pre-order
//!   (a coarse column is followed by the columns nested in it) and, inside a column,
//!   boxes by `qx`.
//! - Gather: after the sort every entry's box (grown by the margin) is copied into
//!   structure-of-arrays rows in entry order, so the sweep reads memory in order, 8 boxes
//!   at a time (`wide::f32x8`).
//! - Sweep: a *run* (one column at one level) against itself by sweep-and-prune; against
//!   its *range* (the finer entries nested in it) each range box looks up the window of the
//!   run that can reach it along `ax` (a search in the run's running maximum of upper
//!   bounds), so a big box over many small ones costs `O(r log m)`, not `O(r m)`. A crowded
//!   run (more candidates an entry than `Config::crowded_threshold`) goes to RDC instead
//!   when `Refine::Rdc` is set.
//! - Unique pairs without a dedup: see [`Layout::owns`]. A pair sharing several columns is
//!   reported only from the column, at the coarser box's level, that holds the reference
//!   point `p = max(qlo(A), qlo(B))` on the column axes. In a range a box is tested from one
//!   of its entries only ([`Layout::represents`]), and the pair is reported from the run's
//!   column holding `p`: the run's own rule on first-column flags, a SIMD lane mask.
//! - Cost: `O(n + e)` to plan, write, sort (radix, one pass a digit of the sorted bits)
//!   and gather `e` entries; the sweep is `O(e + candidates)`, plus a window search a
//!   range row.
//! - Parallel: every pass is a rayon map over fixed chunks; the sweep cuts the entries at
//!   run boundaries by position. The output and the counts do not depend on the thread count.
//! - Allocation: every buffer is owned by [`Columns`] or the caller and grows to the
//!   frame's size; a steady state reuses them.
//! - Source: Morton order over aligned columns, Dmytry Lavrov's Morton-order collision
//!   detection article; sweep-and-prune, P. Terdiman's box pruning ("Box pruning
//!   revisited"); RDC for crowded runs, Rabin, "Recursive Dimensional Clustering: A Fast
//!   Algorithm for Collision Detection" (Game Programming Gems 2); columns along the sweep
//!   axis, the level model and the ownership rules, this crate.
//!
//! The stages, a file each, in the order a frame runs them:
//!
//! | file | stage | input -> output |
//! |---|---|---|
//! | [`layout`] | entry key layout | bit widths -> `Entry` packing, field reads, ownership |
//! | [`plan`] | plan | boxes, scan figures -> a level and column count a box, the layout |
//! | [`levels`] | the plan's cost model | box extents -> the cheapest level |
//! | [`entries`] | entry write | boxes, levels -> one key a (box, column) |
//! | ([`crate::kernels::radix_sort`]) | radix sort | keys -> keys in column order |
//! | [`rows`] | gather | sorted keys -> structure-of-arrays rows |
//! | [`sweep`] | sweep driver | rows -> pair keys a chunk, counts |
//! | [`walker`] | runs | a run against itself, and RDC where crowded |
//! | [`ranges`] | ranges | a run against the finer entries nested in it |
//! | [`sink`] | pair sink | pair keys -> idle memory, then the spill |

mod entries;
mod layout;
mod levels;
mod plan;
mod ranges;
mod rows;
mod sink;
mod sweep;
#[cfg(test)]
mod tests;
mod walker;

pub(crate) use layout::{Entry, Layout};
use levels::LevelTable;

pub(crate) use sink::{found_order, grow};

use crate::kernels::morton::Quantizer;
use crate::par::prelude::*;
use crate::Aabb;

/// Boxes the plan sets apart, by input index, ascending: those wholly outside the grid
/// (`far`: no entries) and those that cross its border (`crossing`: entries as any box).
/// The pipeline finds every pair with a far box apart, among these two lists.
#[derive(Debug, Default)]
pub(crate) struct Strays {
    pub far: Vec<u32>,
    pub crossing: Vec<u32>,
}

impl Strays {
    /// Fills the lists for `bounds` from the live boxes of
    /// `boxes` grown by `margin`, for a finder with no columns (the whole-scene sweep).
    /// Parallel over fixed chunks, joined in order: the same lists for any thread count.
    pub(crate) fn find<const D: usize>(&mut self, boxes: &[Aabb<D>], margin: f32, bounds: &Aabb<D>) {
        let chunk = crate::kernels::par::chunk_len(boxes.len());
        let found: Vec<Strays> = boxes
            .par_chunks(chunk)
            .enumerate()
            .map(|(c, part)| {
                let mut st = Strays::default();
                for (j, b) in part.iter().enumerate() {
                    let (i, g) = ((c * chunk + j) as u32, b.grown(margin));
                    if g.is_inverted() {
                        continue;
                    }
                    if !g.overlaps(bounds) {
                        st.far.push(i);
                    } else if !bounds.contains(&g) {
                        st.crossing.push(i);
                    }
                }
                st
            })
            .collect();
        self.far.clear();
        self.crossing.clear();
        for st in found {
            self.far.extend_from_slice(&st.far);
            self.crossing.extend_from_slice(&st.crossing);
        }
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
    /// Columns of input box `i` at its level (at most `max_columns_per_box <= 4096`).
    count: Vec<u16>,
    /// Entries per chunk of `chunk_len(n)` input boxes (the plan's chunks).
    chunk_entries: Vec<usize>,
    /// Total entries.
    pub entries: usize,
    /// Boxes set apart by the plan (see [`Strays`]).
    pub strays: Strays,
    /// The plan's memo of levels by size classes.
    levels: LevelTable,
    /// Rows in entry order, one array after the other, [`row_stride`](rows::row_stride) apart: bounds of the
    /// entry's box on every axis (`lo` then `hi`), margin applied, its `qx` as an `f32`
    /// (exact: at most 24 bits), and `qxh`, the quantised upper bound on the sweep axis
    /// (same scale). Read through [`Columns::rows`].
    rows: Vec<f32>,
    stride: usize,
    n_rows: usize,
    /// The entry's first-column flags ([`Layout::first`]), and eight bytes of padding
    /// (see [`Rows::first_mask`](rows::Rows::first_mask)).
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
            chunk_entries: Vec::new(),
            entries: 0,
            strays: Strays::default(),
            levels: LevelTable::default(),
            rows: Vec::new(),
            stride: 0,
            n_rows: 0,
            fst: Vec::new(),
        }
    }
}
