//! The trim sample: up to 512 boxes, one a block of the input, whose order statistics
//! leave far-out strays out of the scan's spreads and bounds, count equal lower bounds,
//! measure the spread of sizes, and tell whether the boxes lie gathered in a few far-apart
//! places ([`AxisStats::trim`](super::AxisStats::trim) applies them).
//!
//! - Input: the boxes and the margin (each sampled box grown by it; inverted ones skipped).
//! - Output: [`TrimSample`], or `None` where the sample is too small to trim.
//! - Cost: O(s log s) an axis for a sample of s boxes; independent of n but for the
//!   strided reads.
//! - Parallel: no; it runs on one thread beside the scan (`rayon::join` in the pipeline).
//! - Allocation: a few vectors of up to [`TRIM_SAMPLE`] values an axis.
//! - Source: this crate.

use super::cliff::CLIFF_SAMPLE;
use crate::kernels::sample::sample_index;
use crate::Aabb;

/// Boxes sampled by [`AxisStats::trim`](super::AxisStats::trim).
pub(super) const TRIM_SAMPLE: usize = 512;

/// One sampled box in this many, each side, is left out of the trimmed spreads and bounds
/// (8 of 512: 1.6%, so up to that share of strays; fewer samples leave fewer out).
pub(super) const TRIM_OUT: usize = 64;
/// A gap in the sample's lower bounds on one axis this many times wider than the span of
/// the boxes on its fuller side (plus their mean extent) sets the boxes beyond it apart as
/// strays, however many of the sample they are (up to half): objects parked far away, a
/// second scene far off. Worlds laid out side by side, even 100 world sides apart, stay
/// whole: their gaps are narrower than the worlds' span.
pub(super) const STRAY_GAP: f64 = 64.0;

/// How many times `density + ties` the sample's own sweep must expect for the boxes to
/// count as gathered in a few far-apart places
/// ([`AxisStats::per_box`](super::AxisStats::per_box)).
pub(super) const GATHERED: f64 = 4.0;
/// Below this share of an axis covered ([`AxisStats::covered`](super::AxisStats::covered))
/// the sample is swept on its own along it, to see whether the boxes are gathered in a
/// few far-apart places.
pub(super) const SPARSE_COVER: f64 = 0.5;

/// What [`AxisStats::trim`](super::AxisStats::trim) takes from its sample of the boxes
/// ([`sample_index`]): the order statistics and shares it needs, none of which depends on
/// the scan, so that the sample's sorts and selections run beside it (`rayon::join` in the
/// pipeline) rather than on one thread after it. PERF: benches/pairs.rs (3D varied, 10k).
pub(crate) struct TrimSample<const D: usize> {
    /// Boxes in the sample, and the `k` left out at each end.
    pub(super) s: usize,
    pub(super) out: usize,
    pub(super) size_spread: f64,
    /// The sample's largest box (its largest extent) over the 90th percentile of them.
    pub(super) size_top: f64,
    /// The share of the sample set apart as strays ([`cut_strays`]).
    pub(super) cut: f64,
    /// Per axis: the mean extent without the `out` largest, the sample's cover, its own
    /// sweep's tests ([`sweep_tests`]), its tie share, the
    /// `out`-th smallest and largest lower bounds, and the `out`-th largest upper bound.
    pub(super) trimmed: [f64; D],
    pub(super) covered: [f64; D],
    pub(super) tests: [f64; D],
    pub(super) ties: [f64; D],
    pub(super) l_lo: [f64; D],
    pub(super) l_hi: [f64; D],
    pub(super) u_hi: [f64; D],
    /// Every few of the sample's boxes (at most [`CLIFF_SAMPLE`]), per axis, for the
    /// cliff estimate ([`TrimSample::column_tests`]).
    pub(super) cliff_lo: [Vec<f32>; D],
    pub(super) cliff_hi: [Vec<f32>; D],
}

impl<const D: usize> TrimSample<D> {
    /// The sample of `boxes` (grown by `margin`; inverted ones left out), `None` where it
    /// is too small to trim.
    pub fn take(boxes: &[Aabb<D>], margin: f32) -> Option<Self> {
        let stride = boxes.len().div_ceil(TRIM_SAMPLE).max(1);
        let mut lo: [Vec<f32>; D] = std::array::from_fn(|_| Vec::with_capacity(TRIM_SAMPLE));
        let mut hi: [Vec<f32>; D] = std::array::from_fn(|_| Vec::with_capacity(TRIM_SAMPLE));
        for block in 0..boxes.len().div_ceil(stride) {
            let g = boxes[sample_index(block, stride, boxes.len())].grown(margin);
            if g.is_inverted() {
                continue;
            }
            for k in 0..D {
                lo[k].push(g.min[k]);
                hi[k].push(g.max[k]);
            }
        }
        let s0 = lo[0].len();
        cut_strays(&mut lo, &mut hi);
        let s = lo[0].len();
        let out = s / TRIM_OUT;
        if out == 0 {
            return None;
        }
        let step = s.div_ceil(CLIFF_SAMPLE).max(1);
        let cliff_lo = std::array::from_fn(|k| lo[k].iter().copied().step_by(step).collect());
        let cliff_hi = std::array::from_fn(|k| hi[k].iter().copied().step_by(step).collect());
        let mut size: Vec<f32> =
            (0..s).map(|i| (0..D).map(|k| hi[k][i] - lo[k][i]).fold(0.0, f32::max)).collect();
        let p10 = *size.select_nth_unstable_by(s / 10, f32::total_cmp).1 as f64;
        let p90 = *size.select_nth_unstable_by(s - 1 - s / 10, f32::total_cmp).1 as f64;
        let top = size.iter().fold(0.0f32, |a, &b| a.max(b)) as f64;
        let mut t = Self {
            s,
            out,
            size_spread: if p10 > 0.0 { p90 / p10 } else { f64::INFINITY },
            size_top: if p90 > 0.0 {
                top / p90
            } else if top > 0.0 {
                f64::INFINITY
            } else {
                1.0
            },
            cut: (s0 - s) as f64 / s0.max(1) as f64,
            trimmed: [0.0; D],
            covered: [0.0; D],
            tests: [0.0; D],
            ties: [0.0; D],
            l_lo: [0.0; D],
            l_hi: [0.0; D],
            u_hi: [0.0; D],
            cliff_lo,
            cliff_hi,
        };
        for k in 0..D {
            let mut ext: Vec<f64> = lo[k].iter().zip(&hi[k]).map(|(&l, &h)| h as f64 - l as f64).collect();
            ext.select_nth_unstable_by(s - 1 - out, f64::total_cmp);
            t.trimmed[k] = ext[..s - out].iter().sum::<f64>() / (s - out) as f64;
            // The sample's cover, before `lo[k]` is sorted (one pass over the pairs).
            t.covered[k] = sample_cover(&lo[k], &hi[k]);
            // Then the ties, which sort `lo[k]`, and the sample's own sweep, which sorts
            // `hi[k]` too: the order statistics are then at hand.
            t.ties[k] = tie_share(&mut lo[k]);
            sort_total(&mut hi[k]);
            t.tests[k] = sweep_tests(&lo[k], &hi[k]);
            t.l_lo[k] = lo[k][out] as f64;
            t.l_hi[k] = lo[k][s - 1 - out] as f64;
            t.u_hi[k] = hi[k][s - 1 - out] as f64;
        }
        Some(t)
    }
}

impl<const D: usize> TrimSample<D> {
    /// The candidates a box of `n` would meet in the columns swept along `k`, and the pairs
    /// a box has, estimated from the sample ([`super::cliff`]): the sample's counts times
    /// `n / s^2`, since pairs grow as the square of the boxes.
    pub fn column_tests(&self, k: usize, n: usize) -> (f64, f64) {
        let (t, p) = super::cliff::column_tests(&self.cliff_lo, &self.cliff_hi, k);
        let s = self.cliff_lo[0].len().max(1) as f64;
        let per_box = n as f64 / (s * s);
        (t as f64 * per_box, p as f64 * per_box)
    }
}

/// Slabs of the sample's range, per axis, for the share of it the boxes cover
/// ([`AxisStats::covered`](super::AxisStats::covered)).
pub(super) const COVER_SLABS: usize = 256;

/// The share of pairs of `v`'s values that are equal (sorts `v`). Why: points on a grid
/// (zero-size boxes at integer coordinates) have no extent, so the extents alone say a
/// whole-scene sweep tests nothing, while it tests every box at the same coordinate; the
/// ties make `Auto` take the columns there. PERF: benches/pairs.rs (tiles).
pub(super) fn tie_share(v: &mut [f32]) -> f64 {
    let s = v.len();
    if s < 2 {
        return 0.0;
    }
    sort_total(v);
    let mut equal = 0usize;
    let mut run = 1usize;
    for i in 1..=s {
        if i < s && v[i] == v[i - 1] {
            run += 1;
        } else {
            equal += run * (run - 1) / 2;
            run = 1;
        }
    }
    equal as f64 / (s * (s - 1) / 2) as f64
}

/// Sorts `v` by `f32::total_cmp`, as integers: each value's bits mapped to a `u32` of the
/// same order, sorted, and mapped back by the inverse map. PERF: a comparison sort with
/// `total_cmp` branches on every compare, and these sorts are most of the trim's work
/// (benches/pairs.rs, 3D at 10k, one thread).
pub(super) fn sort_total(v: &mut [f32]) {
    // `total_cmp`'s key, with the sign bit flipped so that unsigned order is its order.
    let map = |b: u32| b ^ (((b as i32 >> 31) as u32) >> 1) ^ 0x8000_0000;
    let keys: &mut [u32] = bytemuck::cast_slice_mut(v);
    for k in keys.iter_mut() {
        *k = map(*k);
    }
    keys.sort_unstable();
    let unmap = |k: u32| {
        let b = k ^ 0x8000_0000;
        b ^ (((b as i32 >> 31) as u32) >> 1)
    };
    for k in keys.iter_mut() {
        *k = unmap(*k);
    }
}

/// The share of the range of a sample's lower bounds that its boxes `(lo[i], hi[i])`
/// cover, in [`COVER_SLABS`] slabs (a box covers the slabs from its lower to its upper
/// bound, clamped to the range); 1 for no range. One pass, no sort.
pub(super) fn sample_cover(lo: &[f32], hi: &[f32]) -> f64 {
    let (a, b) =
        lo.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x as f64), b.max(x as f64)));
    if !(b - a).is_finite() || b <= a {
        return 1.0;
    }
    let scale = COVER_SLABS as f64 / (b - a);
    let slab = |x: f32| (((x as f64 - a) * scale).max(0.0) as usize).min(COVER_SLABS - 1);
    // Difference array: +1 where a box starts covering, -1 past where it stops.
    let mut diff = [0i32; COVER_SLABS + 1];
    for (&l, &h) in lo.iter().zip(hi) {
        diff[slab(l)] += 1;
        diff[slab(h) + 1] -= 1;
    }
    let (mut run, mut covered) = (0, 0);
    for d in &diff[..COVER_SLABS] {
        run += d;
        covered += (run > 0) as usize;
    }
    covered as f64 / COVER_SLABS as f64
}

/// The pairs of a sample that a sweep along the axis tests (a box and each later one whose
/// lower bound lies in its extent, equal lower bounds once), from its lower bounds `lo`
/// and its upper bounds `hi`, each sorted on its own (`sort_total`): the sweep tests, for
/// the box of rank `i` by lower bound, the boxes whose lower bound is at most its upper
/// bound but for the `i + 1` up to itself, so the tests are the sum over the boxes of the
/// lower bounds at most their upper bound, less `s (s + 1) / 2`; a sum that does not
/// depend on which upper bound goes with which box. One merge of the two sorted lists.
pub(super) fn sweep_tests(lo: &[f32], hi: &[f32]) -> f64 {
    let (mut at, mut sum) = (0usize, 0usize);
    for &h in hi {
        while at < lo.len() && lo[at].total_cmp(&h).is_le() {
            at += 1;
        }
        sum += at;
    }
    let s = lo.len();
    sum.saturating_sub(s * (s + 1) / 2) as f64
}

/// Drops from the sample, axis by axis, the boxes beyond a [`STRAY_GAP`] gap in the lower
/// bounds: the side with fewer boxes (of equal counts, the wider one) goes, so that the
/// sample's figures, and the grid bounds taken from them, are the bulk's. At most half
/// the sample goes in all.
fn cut_strays<const D: usize>(lo: &mut [Vec<f32>; D], hi: &mut [Vec<f32>; D]) {
    let s0 = lo[0].len();
    let mut sorted = Vec::with_capacity(s0);
    for k in 0..D {
        let s = lo[k].len();
        if s < 8 {
            return;
        }
        // The widest gap between neighbours in value order: `sorted[p - 1]..sorted[p]`.
        sorted.clear();
        sorted.extend_from_slice(&lo[k]);
        sort_total(&mut sorted);
        let at = |j: usize| sorted[j] as f64;
        let (mut p, mut gap) = (0, 0.0);
        for j in 1..s {
            let g = at(j) - at(j - 1);
            if g > gap {
                (p, gap) = (j, g);
            }
        }
        if p == 0 {
            continue;
        }
        let (low_span, high_span) = (at(p - 1) - at(0), at(s - 1) - at(p));
        // Keep the fuller side; of equal counts, the narrower.
        let keep_low = p > s - p || (p == s - p && low_span <= high_span);
        let (span, cut) = if keep_low { (low_span, s - p) } else { (high_span, p) };
        let split = sorted[p];
        let kept = |v: f32| (v < split) == keep_low;
        let (mut ext, mut m) = (0.0, 0usize);
        for (&l, &h) in lo[k].iter().zip(&hi[k]) {
            if kept(l) {
                ext += h as f64 - l as f64;
                m += 1;
            }
        }
        let ext = ext / m.max(1) as f64;
        if gap <= STRAY_GAP * (span + ext) || s0 - (s - cut) > s0 / 2 {
            continue;
        }
        let keep: Vec<bool> = lo[k].iter().map(|&v| kept(v)).collect();
        for v in lo.iter_mut().chain(hi.iter_mut()) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
    }
}
