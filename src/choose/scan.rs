//! The scan: one pass over the boxes that validates them and sums, per axis, what the
//! choice and the column plan need ([`AxisStats`]); [`AxisStats::trim`] then folds the
//! trim sample in.
//!
//! - Input: the boxes and the margin (each box grown by it; inverted ones count as dead).
//! - Output: [`AxisStats`]: count, total extents, ranges of lower bounds, grid bounds, and
//!   whether some box is invalid.
//! - Cost: O(n), branch-free per box.
//! - Parallel: fixed chunks (`kernels::par::chunk_len`), combined in order, so the sums are
//!   the same bits for any thread count.
//! - Allocation: one [`AxisStats`] a chunk.
//! - Source: this crate.

use super::trim::TrimSample;
use super::trim::{GATHERED, SPARSE_COVER};
use crate::par::prelude::*;
use crate::Aabb;

/// Per-axis sums for choosing a sweep axis: boxes, total extent, range of lower bounds,
/// and the bounds of the whole set.
#[derive(Clone, Copy)]
pub(crate) struct AxisStats<const D: usize> {
    pub(super) count: f64,
    pub(super) ext: [f64; D],
    pub(super) lo: [f64; D],
    pub(super) hi: [f64; D],
    /// Expected tests per box of a whole-scene sweep from lower bounds that are equal (set
    /// by [`AxisStats::trim`]).
    pub(super) ties: [f64; D],
    /// Expected tests per box of a whole-scene sweep along each axis, from the sample's own
    /// sweep (set by [`AxisStats::trim`] on axes the sample covers under
    /// [`SPARSE_COVER`] of; 0 elsewhere): unlike `density`, it
    /// sees boxes gathered in a few far-apart places.
    pub(super) local: [f64; D],
    /// Expected tests per bulk box of a whole-scene sweep along each axis, from the
    /// sample's own sweep on every axis (set by [`AxisStats::trim`]; 0 where it has not
    /// run): it sees clumps that the extents do not (`sweep_best`).
    pub(super) swept: [f64; D],
    /// The share of the sample's range on each axis that its boxes cover, in
    /// [`COVER_SLABS`](super::trim::COVER_SLABS) slabs (set by [`AxisStats::trim`]; 1 where
    /// it has not run).
    pub(super) covered: [f64; D],
    /// The extent the bulk of the boxes occupies on each axis (set by
    /// [`AxisStats::trim`]; 0 where it has not run).
    pub(super) bulk: [f64; D],
    /// How far the boxes' sizes spread: the sampled boxes' largest extents, 90th percentile
    /// over 10th (infinite when the 10th is 0; set by [`AxisStats::trim`], 1 where it has
    /// not run).
    pub(super) size_spread: f64,
    /// How far the largest boxes stand out: the sampled boxes' largest extents, the
    /// greatest over the 90th percentile (set by [`AxisStats::trim`], 1 where it has not
    /// run).
    pub(super) size_top: f64,
    /// The share of the trim sample set apart as strays (0 before the trim).
    pub(super) cut: f64,

    /// Bounds of the boxes added (`+inf..-inf` when none).
    pub min: [f32; D],
    pub max: [f32; D],
    /// Some box scanned was invalid (NaN, infinite, or `min > max`): see
    /// [`crate::validate::check_boxes`] for which.
    pub invalid: bool,
}

impl<const D: usize> AxisStats<D> {
    pub(super) const EMPTY: Self = Self {
        count: 0.0,
        ext: [0.0; D],
        ties: [0.0; D],
        local: [0.0; D],
        swept: [0.0; D],
        covered: [1.0; D],
        bulk: [0.0; D],
        size_spread: 1.0,
        size_top: 1.0,
        cut: 0.0,
        lo: [f64::INFINITY; D],
        hi: [f64::NEG_INFINITY; D],
        min: [f32::INFINITY; D],
        max: [f32::NEG_INFINITY; D],
        invalid: false,
    };

    pub(super) fn merge(&mut self, o: &Self) {
        self.invalid |= o.invalid;
        self.count += o.count;
        for k in 0..D {
            self.ext[k] += o.ext[k];
            self.lo[k] = self.lo[k].min(o.lo[k]);
            self.hi[k] = self.hi[k].max(o.hi[k]);
            self.min[k] = self.min[k].min(o.min[k]);
            self.max[k] = self.max[k].max(o.max[k]);
        }
    }

    /// [`AxisStats::trim`] with its sample taken here.
    #[cfg(test)]
    pub fn trim_boxes(&mut self, boxes: &[Aabb<D>], margin: f32) {
        if let Some(sample) = TrimSample::take(boxes, margin) {
            self.trim(&sample);
        }
    }

    /// Leaves a few far-out boxes out of the spreads and bounds (see
    /// [`TRIM_SAMPLE`](super::trim::TRIM_SAMPLE)): a stray box far away (a sentinel
    /// position, an object falling out of the world) would otherwise stretch the grid until
    /// the whole scene lies in a few columns, and make the whole-scene sweep look cheap. Boxes outside the trimmed bounds are clamped to the
    /// grid's border, exact as always; the pairs do not change, only the speed.
    ///
    /// From a sample of the (grown, live) boxes ([`sample_index`](crate::kernels::sample::sample_index)),
    /// per axis: the lower bounds' range without the `k` smallest and `k` largest, widened
    /// by the share left out, bounds the spread; the grid runs from the `k`-th smallest
    /// lower bound to the `k`-th largest upper bound, plus 5% of that and the same
    /// widening. Each applies only where it halves the full range or more, and is never
    /// wider. The mean extent becomes the mean without the `k` largest where it is under
    /// half the full mean (a heavy tail of sizes: strays, a sky box).
    ///
    /// The sample is taken apart ([`TrimSample::take`]), so that its sorts can run beside
    /// the scan.
    pub fn trim(&mut self, t: &TrimSample<D>) {
        let (s, out) = (t.s, t.out);
        self.size_spread = t.size_spread;
        self.size_top = t.size_top;
        self.cut = t.cut;
        for k in 0..D {
            // Extents first: a few huge strays would make the mean extent, and so the
            // whole-scene sweep's cost and the level model's candidate cost, as large as
            // theirs.
            if self.mean_extent(k) > 2.0 * t.trimmed[k] {
                self.ext[k] = t.trimmed[k] * self.count;
            }
            self.covered[k] = t.covered[k];
            let swept = t.tests[k] / (s * s) as f64;
            self.local[k] = if t.covered[k] < SPARSE_COVER { swept * self.count } else { 0.0 };
            // The sample is the bulk's, strays cut: its tests scale by the bulk's count.
            self.swept[k] = swept * self.count * (1.0 - t.cut);
            self.ties[k] = self.count * t.ties[k] / 2.0;
            let (l_lo, l_hi, u_hi) = (t.l_lo[k], t.l_hi[k], t.u_hi[k]);
            let widen = (l_hi - l_lo) * out as f64 / (s - 2 * out) as f64;
            let (lo_t, hi_t) = (l_lo - widen, l_hi + widen);
            // Only where strays stretch the axis (twice the span or more): otherwise the
            // full statistics stand, and scenes without strays keep their plan exactly.
            if hi_t - lo_t < 0.5 * (self.hi[k] - self.lo[k]) {
                self.lo[k] = self.lo[k].max(lo_t);
                self.hi[k] = self.hi[k].min(hi_t);
            }
            let pad = 0.05 * (u_hi - l_lo) + widen;
            let (min_t, max_t) = (l_lo - pad, u_hi + pad);
            self.bulk[k] = max_t - min_t;
            if max_t - min_t < 0.5 * (self.max[k] as f64 - self.min[k] as f64) {
                self.min[k] = self.min[k].max(min_t as f32);
                self.max[k] = self.max[k].min(max_t as f32);
            }
        }
    }

    /// The mean extent of the boxes added along axis `k` (0 when none).
    pub fn mean_extent(&self, k: usize) -> f64 {
        if self.count > 0.0 {
            self.ext[k] / self.count
        } else {
            0.0
        }
    }

    /// The extent the bulk of the boxes occupies along axis `k`: the trimmed sample's, from
    /// its `k`-th smallest lower bound to its `k`-th largest upper bound, padded as the
    /// trimmed grid bounds are; `None` before [`AxisStats::trim`], when the sample is too
    /// small to trim, or when it is not finite.
    pub fn bulk(&self, k: usize) -> Option<f64> {
        (self.bulk[k] > 0.0).then_some(self.bulk[k])
    }

    /// Whether the boxes lie gathered in a few far-apart places (islands, levels, cities):
    /// the sample's own sweep along `k` ([`AxisStats::local`]) expects over
    /// [`GATHERED`] times the tests that `density + ties` does, which assumes boxes spread
    /// over the whole range.
    pub(super) fn gathered(&self, k: usize) -> bool {
        self.local[k] > GATHERED * (self.density(k) + self.ties[k])
    }

    /// The expected tests per box of a whole-scene sweep along `k`: from the extents
    /// (`density + ties`), or from the sample's own sweep where the boxes are
    /// [`AxisStats::gathered`].
    pub fn per_box(&self, k: usize) -> f64 {
        if self.gathered(k) {
            self.local[k]
        } else {
            self.density(k) + self.ties[k]
        }
    }

    /// The densities the level model uses along `k`: over the spread of all lower bounds
    /// ([`AxisStats::density`]) and over the bulk's ([`AxisStats::bulk`]: where one box far
    /// larger than the rest, a ground plane, stretches the spread, the density of the
    /// rest). Both are the sample's own sweep where the boxes are [`AxisStats::gathered`]
    /// along `k`: it measures the density where the boxes are.
    pub fn plan_density(&self, k: usize) -> [f64; 2] {
        if self.gathered(k) {
            return [self.local[k]; 2];
        }
        let spread = self.hi[k] - self.lo[k];
        [self.density(k), self.over(k, self.bulk(k).map_or(spread, |b| b.min(spread)))]
    }

    /// The share of axis `k`'s range that the boxes cover, where they are gathered in a
    /// few far-apart places along some axis, else 1.
    pub fn covered(&self, k: usize) -> f64 {
        if (0..D).any(|a| self.gathered(a)) {
            self.covered[k]
        } else {
            1.0
        }
    }

    /// The share of the boxes set apart as strays beyond a gap, as the trim sample saw it.
    pub fn cut(&self) -> f64 {
        self.cut
    }

    /// How far the boxes' sizes spread (see `size_spread`).
    pub fn size_spread(&self) -> f64 {
        self.size_spread
    }

    /// How far the largest boxes stand out (see `size_top`).
    pub fn size_top(&self) -> f64 {
        self.size_top
    }

    /// Live boxes added.
    pub fn count(&self) -> usize {
        self.count as usize
    }

    /// The expected tests per box of a whole-scene sweep along axis `k` from the extents
    /// alone, `total extent / spread` (no ties): the density the level model uses.
    pub fn density(&self, k: usize) -> f64 {
        self.over(k, self.hi[k] - self.lo[k])
    }

    /// Total extent along axis `k` over `spread` (0 for no spread).
    pub(super) fn over(&self, k: usize, spread: f64) -> f64 {
        if spread > 0.0 {
            self.ext[k] / spread
        } else {
            0.0
        }
    }

    /// The axis along which a whole-scene sweep is expected to test the fewest boxes a
    /// box, and that number: as [`AxisStats::best`], each axis's estimate raised to the
    /// sample's own sweep along it (`swept`) where that expects more. Why: the extents
    /// assume boxes spread evenly over the whole range; boxes in clumps that between them
    /// cover most of it (ten crowds over a map) meet more, which the sample's sweep counts
    /// (2D `clustered`, 10k boxes: 64.5 tests a box from the extents, 100 and 118 from the
    /// sample along the two axes, 118 tested along the first). The columns keep
    /// [`AxisStats::best`]'s axis, which their level model was measured with.
    /// PERF: benches/scaling.rs (2D clustered).
    pub fn sweep_best(&self) -> (usize, f64) {
        self.best_by(|k| self.per_box(k).max(self.swept[k]))
    }

    /// The axis with the fewest expected tests per box, and that number:
    /// `count * mean extent / spread of lower bounds` = `total extent / spread` (uniform
    /// placement), plus the boxes whose lower bound equals the box's (the ties found by
    /// [`AxisStats::trim`]). All-equal lower bounds (spread 0) make an axis the worst unless
    /// every axis is; a single box tests nothing.
    pub fn best(&self) -> (usize, f64) {
        self.best_by(|k| self.per_box(k))
    }

    /// The axis with the fewest of `per_box(k)` tests a box, and that number; an axis where
    /// all lower bounds are equal is the worst unless every axis is, and a single box tests
    /// nothing.
    fn best_by(&self, per_box: impl Fn(usize) -> f64) -> (usize, f64) {
        let mut best = (0, f64::INFINITY);
        for k in 0..D {
            let spread = self.hi[k] - self.lo[k];
            let per_box = if spread > 0.0 {
                per_box(k)
            } else if self.count <= 1.0 {
                0.0
            } else {
                f64::INFINITY
            };
            if per_box < best.1 {
                best = (k, per_box);
            }
        }
        best
    }
}

/// The statistics of the live (grown) boxes: sweep axis estimate and bounds, one pass.
pub(crate) fn scan_scene<const D: usize>(boxes: &[Aabb<D>], margin: f32) -> AxisStats<D> {
    let parts: Vec<AxisStats<D>> = boxes
        .par_chunks(crate::kernels::par::chunk_len(boxes.len()))
        .map(|c| {
            crate::kernels::simd::fast(
                #[inline(always)]
                || {
                    // PERF: min and max as compares (one instruction each; `f32::min` adds NaN
                    // fix-ups, and a NaN box is reported invalid anyway), in f32 where exact.
                    let (mut lo, mut hi_lo, mut hi) =
                        ([f32::INFINITY; D], [f32::NEG_INFINITY; D], [f32::NEG_INFINITY; D]);
                    let mut ext = [0.0f64; D];
                    let mut count = 0usize;
                    let mut ok = true;
                    for b in c {
                        // Branch-free validity (NaN fails every comparison); the caller looks for
                        // the first bad box only when some chunk saw one.
                        for k in 0..D {
                            ok &= (b.min[k] <= b.max[k])
                                & (b.min[k].abs() <= f32::MAX)
                                & (b.max[k].abs() <= f32::MAX);
                        }
                        let g = b.grown(margin);
                        if g.is_inverted() {
                            continue;
                        }
                        count += 1;
                        for k in 0..D {
                            let (l, h) = (g.min[k], g.max[k]);
                            ext[k] += h as f64 - l as f64;
                            lo[k] = if l < lo[k] { l } else { lo[k] };
                            hi_lo[k] = if l > hi_lo[k] { l } else { hi_lo[k] };
                            hi[k] = if h > hi[k] { h } else { hi[k] };
                        }
                    }
                    AxisStats {
                        count: count as f64,
                        ext,
                        lo: lo.map(f64::from),
                        hi: hi_lo.map(f64::from),
                        min: lo,
                        max: hi,
                        invalid: !ok,
                        ..AxisStats::EMPTY
                    }
                },
            )
        })
        .collect();
    let mut total = AxisStats::EMPTY;
    parts.iter().for_each(|p| total.merge(p));
    total
}
