//! The choice of algorithm: one O(n) scan of the scene, a trimmed sample of it, and the
//! `Method::Auto` rule that turns them into a whole-scene sweep, the columns, the tree or
//! the hierarchical grid.
//!
//! - Input: the user's boxes and the margin.
//! - Output: [`AxisStats`] (validity, bounds, the sweep axis, the expected tests a box of a
//!   whole-scene sweep, how far the sizes spread), and [`choose`]'s verdict on them.
//! - Cost: O(n) for the scan; O(s log s) an axis for the sample of s <= 512 boxes.
//! - Parallel: the scan runs over fixed chunks combined in order, so every figure is the
//!   same for any thread count; the sample is taken and sorted on one thread beside it.
//! - Allocation: one partial sum a chunk, and the sample (a few vectors of up to 512
//!   values an axis).
//! - Source: this crate. The estimate is the cost of P. Terdiman's box pruning ("Box
//!   pruning revisited"): one sort along the best axis, then each box against the boxes
//!   whose lower bound lies in its extent.
//!
//! `scan` holds the one pass and [`AxisStats`], `trim` the sample and its order
//! statistics. Every threshold of the choice lives in this module and in `trim`.
//!
//! ## The rule
//!
//! A whole-scene sweep pays one sort plus a small cost for each box a box tests; the
//! columns pay more a box up front (plan, entries, radix sort, gather) and test far fewer
//! candidates in a dense scene. So `Auto` sweeps whole where the expected tests a box
//! ([`AxisStats::sweep_best`]: from the extents, or from a sample's own sweep where it
//! expects more, as in clumps) are at most a bound, [`sweep_max_per_box`], and takes the
//! columns above it. The bound:
//!
//! - [`SWEEP_MAX_PER_BOX`] where the sizes spread over more than [`SIZE_SPREAD_MAX`]:
//!   boxes of many sizes take many levels of columns, which cost more a box.
//! - Otherwise half of it, up to [`SWEEP_FULL_BELOW`] live boxes; beyond, it falls as
//!   `1 / n`, since the sweep's sort and scattered reads cost more a box as the scene
//!   outgrows the caches and the columns' cost a box grows much less.
//! - Never under [`SWEEP_MIN_PER_BOX`]: below it neither wins reliably across scene sizes,
//!   and the sweep is kept.
//! - In 1D a column is the whole line, so `Auto` always sweeps.
//!
//! Above the bound, the tree where long boxes cross each other across the column axes
//! ([`TREE_MIN_PER_BOX`]); else the hierarchical grid where the boxes are of one size but
//! for a few far longer ones ([`GRID_TOP_MIN`]); else the columns.
//!
//! PERF: benches/pairs.rs (uniform, varied, clustered; 10k to 1M; 2D and 3D) and
//! benches/rdc.rs (`sap` against `pipeline`) show where the two cross.

mod cliff;
mod scan;
#[cfg(test)]
mod tests;
mod trim;

pub(crate) use scan::{scan_scene, AxisStats};
pub(crate) use trim::TrimSample;

use crate::config::Method;

/// The most expected tests a box at which `Method::Auto` sweeps a scene whole: the bound
/// for boxes of widely spread sizes at any count; half of it for boxes of one size (see
/// [`sweep_max_per_box`] and the module's rule).
pub const SWEEP_MAX_PER_BOX: f64 = 128.0;

/// Scenes up to this many live boxes keep the whole bound of [`sweep_max_per_box`];
/// larger ones get a bound falling as `1 / n`.
const SWEEP_FULL_BELOW: f64 = 16_384.0;

/// The least bound [`sweep_max_per_box`] falls to.
const SWEEP_MIN_PER_BOX: f64 = 32.0;

/// Boxes whose sizes spread over more than this ([`AxisStats::size_spread`]: the sampled
/// boxes' largest extents, 90th percentile over 10th) keep [`SWEEP_MAX_PER_BOX`] at every
/// count: they take many levels of columns, which cost more a box.
/// PERF: benches/pairs.rs (varied).
pub(crate) const SIZE_SPREAD_MAX: f64 = 5.0;

/// The most expected tests a box at which `Method::Auto` sweeps a scene of `n` live boxes
/// whole instead of taking the columns. Where the boxes' sizes spread over more than
/// [`SIZE_SPREAD_MAX`], [`SWEEP_MAX_PER_BOX`]; otherwise half of it up to
/// [`SWEEP_FULL_BELOW`] live boxes, then falling as `1 / n` to [`SWEEP_MIN_PER_BOX`]
/// (reached at 32,768 boxes). Why half for one size, in 2D as in 3D: measured with the
/// sample's test count, the two crossed at 60 to 76 tests a box (2D `uniform`: 10k, 60
/// tests, sweep 0.94 / 0.62 ms against the columns' 1.03 / 0.58 at 1 / 2 threads; 16k,
/// 76 tests, 1.56 / 1.00 against 1.25 / 0.84; `clustered` 5k, about 80 tests, 1.04 /
/// 0.74 against 0.84 / 0.51). Widely spread sizes cost the columns many levels: 2D
/// `varied` at 10k, 93 tests, sweeps in 1.89 / 1.35 ms against their 2.37 / 1.62. The
/// module's rule says more. PERF: benches/scaling.rs (uniform, clustered, varied).
pub(crate) fn sweep_max_per_box(n: usize, size_spread: f64) -> f64 {
    if size_spread > SIZE_SPREAD_MAX {
        return SWEEP_MAX_PER_BOX;
    }
    (0.5 * SWEEP_MAX_PER_BOX * (SWEEP_FULL_BELOW / n as f64).min(1.0)).max(SWEEP_MIN_PER_BOX)
}

/// The largest share of strays set apart by the trim ([`AxisStats::cut`]) at which `Auto`
/// may still sweep the scene whole where the trim did not narrow the grid bounds (so
/// that the strays would be swept along: the estimate is the bulk's). Where it narrowed
/// them, the strays wholly outside are found apart, by the sweep as by the columns, and
/// any share may be swept. PERF: benches/pairs.rs (`parked:50:1e9`, 3D).
pub(crate) const STRAYS_SWEPT_MAX: f64 = 0.125;

/// How far the sampled boxes' largest box must stand out ([`AxisStats::size_top`]: the
/// greatest largest extent over the 90th percentile) for `Auto` to take the hierarchical
/// grid, where the boxes are too dense to sweep whole, not a cliff for the columns, and
/// otherwise of one size (spread at most [`SIZE_SPREAD_MAX`]). A few long boxes among many
/// of one size (`mixed`: 6 in 3D and 28 in 2D at 10k boxes; the rooms of `tiles`: 8) sit
/// on levels of their own there and look through the small boxes' rows along them, where
/// the columns hold them at coarse levels over many columns. Boxes all of one size
/// (`uniform`, `clustered`, `terrain`, `sticks`, parked boxes: 1.0 to 1.4) keep the
/// columns: there the grid's time over the columns' was 0.87 to 1.5 on `uniform` and
/// `clustered` (3D `clustered` 1.1 to 1.4) and 1.5 to 2.4 on `sticks` at 100k; widely spread
/// sizes (`varied`, 3D: 1.3 to 1.6) cost it windows as wide as a level's longest box.
/// Grid over columns on `mixed`: 0.61 to 0.88; `tiles`: 0.75 to 0.92 (2-core machine
/// under load, 10k and 100k boxes, 1 and 2 threads, `docs/BENCHMARKS.md`).
/// PERF: benches/scaling.rs (mixed, tiles, uniform, clustered, varied, sticks).
pub(crate) const GRID_TOP_MIN: f64 = 4.0;

/// The fewest candidates a box must be expected to meet in the columns
/// ([`TrimSample::column_tests`]) for `Method::Auto` to take the tree. The estimate takes
/// every box at its coarsest level, so it overstates the columns' candidates several
/// times where long boxes are few or short. The staircase estimates 1,273 at 10k boxes in
/// 2D (the tree 9x faster); the 3D sticks (an eighth of the world long, in three
/// directions) about 270 at 100k (the columns 3x faster) and 2,400 at 1M, where the tree
/// runs 1.4x slower than the columns. PERF: benches/pairs.rs (`staircase`, `sticks`).
pub(crate) const TREE_MIN_PER_BOX: f64 = 1024.0;

/// How many times a box's pairs its candidates in the columns must be for `Auto` to take
/// the tree: where most candidates are pairs (dense crowds), the columns' sweep finds
/// them at less cost a pair than a walk down the tree: 2D sticks at 100k (395 pairs a
/// box) estimate 3 times their pairs, and run 1.3x faster on the columns.
/// PERF: benches/pairs.rs (`sticks`, 2D).
pub(crate) const TREE_WASTE: f64 = 8.0;

/// The method that runs for `method` (itself, but for `Auto`) on a scene of these
/// statistics, `axis` being the columns' sweep axis ([`AxisStats::best`]) and `per_box`
/// the whole-scene sweep's expected tests a box along its own ([`AxisStats::sweep_best`]);
/// never `Auto`. `strays_apart`: the boxes wholly outside the
/// scan's (trimmed) bounds will be found apart, whatever runs.
///
/// `Auto`: in 1D a column is the whole line, so it sweeps. Otherwise it sweeps where the
/// sweep is cheap (the module's rule); else it takes the tree where the columns would
/// test far more candidates than the boxes have pairs ([`TREE_MIN_PER_BOX`],
/// [`TREE_WASTE`]: long boxes crossing each other across the column axes), and the
/// columns elsewhere. The columns test a subset of the whole-scene sweep's candidates, so
/// the estimate runs only where the sweep's exceed the bound. Of the rest, boxes of one
/// size (spread at most [`SIZE_SPREAD_MAX`]) with a few far longer ones among them
/// ([`GRID_TOP_MIN`]) take the hierarchical grid. Every input is the same for any thread
/// count, and so is the choice.
pub(crate) fn choose<const D: usize>(
    method: Method,
    scan: &AxisStats<D>,
    sample: Option<&TrimSample<D>>,
    axis: usize,
    per_box: f64,
    strays_apart: bool,
) -> Method {
    match method {
        Method::Auto => {
            if D < 2
                || ((strays_apart || scan.cut() <= STRAYS_SWEPT_MAX)
                    && per_box <= sweep_max_per_box(scan.count(), scan.size_spread()))
            {
                Method::Sweep
            } else if per_box > TREE_MIN_PER_BOX
                && sample.is_some_and(|t| {
                    let (col, pairs) = t.column_tests(axis, scan.count());
                    col > TREE_MIN_PER_BOX && col > TREE_WASTE * pairs
                })
            {
                Method::Tree
            } else if scan.size_spread() <= SIZE_SPREAD_MAX && scan.size_top() >= GRID_TOP_MIN {
                Method::Grid
            } else {
                Method::Columns
            }
        }
        given => given,
    }
}
