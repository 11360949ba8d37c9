//! The choice of algorithm: one O(n) scan of the scene, a trimmed sample of it, and the
//! `Method::Auto` rule that turns them into "sweep the scene whole" or "take the columns".
//!
//! - Input: the user's boxes and margin. Output: [`AxisStats`] (validity, bounds, the
//!   sweep axis, the expected tests a box of a whole-scene sweep, the sizes' spread).
//! - Cost: one parallel pass over the boxes (fixed chunks combined in order, so every
//!   figure is the same for any thread count) and a sort of a 512-box sample beside it.
//! - Allocates: per-chunk partial sums and the sample.
//! - Every threshold of the choice lives in this module.

mod scan;
#[cfg(test)]
mod tests;
mod trim;

pub(crate) use scan::{scan_scene, AxisStats};
pub(crate) use trim::TrimSample;

use crate::config::Method;
/// The most tests a box at which `Method::Auto` sweeps a scene whole: for small scenes in
/// 2D, and for boxes of widely spread sizes. Where sizes are alike the bound is half of it
/// in 3D, and beyond 16,384 boxes it falls as `1 / n`, to no less than 32
/// (`docs/architecture.md`, "Which algorithm").
/// PERF: sweep-and-prune costs about 30-40 + 0.5-0.9 x (tests per box) ns a box; the cell
/// pipeline, once faster, costs
/// 80-260 ns a box in 2D and 120-560 in 3D at 10k-100k (1 thread, `docs/BENCHMARKS.md`).
/// At 256, 2D uniform and clustered 100k were swept (190 and 226 tests a box) in 12.4 and
/// 21.7 ms where the cells took 8.1 and 13.7, and 3D terrain 10k (209) in 2.04 ms against
/// 1.61.
pub const SWEEP_MAX_PER_BOX: f64 = 128.0;

/// Scenes up to this many live boxes keep the whole [`sweep_max_per_box`]; larger ones
/// get a bound falling as `1 / n`.
const SWEEP_FULL_BELOW: f64 = 16_384.0;

/// The least bound [`sweep_max_per_box`] falls to.
const SWEEP_MIN_PER_BOX: f64 = 32.0;

/// Boxes whose sizes spread over more than this ([`crate::choose::AxisStats::size_spread`]: the
/// sampled boxes' largest extents, 90th percentile over 10th) keep [`SWEEP_MAX_PER_BOX`]
/// at every size in [`sweep_max_per_box`]. PERF: on sparse scenes of 100k boxes with
/// sizes log-uniform over a range of 2, 4, 10, 32 and 100 (spreads of about 1.7, 3.0,
/// 6.3, 16 and 40), the columns were faster than the sweep at 64 tests a box for the
/// first two (1.02-1.37x), even or mixed at 10 (0.83-1.17x), and slower at 32 and 100
/// (0.57-0.82x) (2 threads, two runs, `docs/BENCHMARKS.md`). Many levels of columns cost
/// more a box.
pub(crate) const SIZE_SPREAD_MAX: f64 = 5.0;

/// The most tests a box (as estimated) at which `Method::Auto` sweeps a scene of `n` live
/// boxes whole instead of taking the columns. Where the boxes' sizes spread over more than
/// [`SIZE_SPREAD_MAX`], [`SWEEP_MAX_PER_BOX`]; otherwise that in 2D and half of it in 3D
/// up to 16,384 live boxes, then falling as `1 / n`, to at least 32 (from 65,536 boxes
/// in 2D, 32,768 in 3D). PERF: the sweep's sort and reads cost more a box as `n` grows,
/// the columns' cost a box much less so. On sparse uniform scenes (sizes within 3x; 2
/// threads, two runs, `docs/BENCHMARKS.md`) the two broke even at about 96-128 tests a
/// box in 2D and 48-64 in 3D at 10k boxes, 48-64 and 48 at 30k, 16-24 and 16 at 100k,
/// 8-16 and 16-32 at 1M, but at 32 tests a box the ratio ranged from 0.8 to 1.2 across
/// runs and sizes: up to 32 the sweep is kept. With 128 at every size, 100k boxes at 128
/// tests a box were swept 1.5x (2D) and 1.9-2.0x (3D) slower than the columns.
pub(crate) fn sweep_max_per_box<const D: usize>(n: usize, size_spread: f64) -> f64 {
    if size_spread > SIZE_SPREAD_MAX {
        return SWEEP_MAX_PER_BOX;
    }
    let base = if D >= 3 { 0.5 * SWEEP_MAX_PER_BOX } else { SWEEP_MAX_PER_BOX };
    (base * (SWEEP_FULL_BELOW / n as f64).min(1.0)).max(SWEEP_MIN_PER_BOX)
}

/// Whether `method` sweeps a scene of these statistics whole (else: the columns). In 1D a
/// column is the whole line, so `Auto` always sweeps there.
pub(crate) fn sweeps<const D: usize>(method: Method, scan: &AxisStats<D>, per_box: f64) -> bool {
    match method {
        Method::Sweep => true,
        Method::Columns => false,
        Method::Auto => D < 2 || per_box <= sweep_max_per_box::<D>(scan.count(), scan.size_spread()),
    }
}
