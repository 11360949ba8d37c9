//! Sweep-and-prune (Terdiman's "box pruning"): sort boxes by their lower bound on axis 0,
//! then each box scans forward only while the next boxes start before it ends, testing the
//! remaining axes 8 boxes at a time with `wide::f32x8`.
//!
//! - Axis: the sweep axis is chosen per set ([`best_axis`]: least mean extent relative to the
//!   spread), so parallel planks are swept across, not along.
//! - Input: boxes with a `u32` payload each. Output: overlapping pairs through a callback
//!   (complete: all pairs within one set; bipartite: pairs across two sets, each once).
//! - Complexity: O(n log n) to sort plus O(n + k') to sweep, where k' counts the pairs that
//!   overlap on axis 0; SIMD cuts the per-candidate cost of the other axes.
//! - Used by the core sweep inside crowded Morton cells (a dense clump, many boxes sharing
//!   one cell), by RDC inside its final groups, and on its own by [`find_pairs`] (a complete
//!   broadphase: parallel over the sweep's outer index, output sorted and unique).
//! - Allocates: the sorted structure-of-arrays copy (owned by [`Sorted`], reused by `clear`).
//! - Idea: P. Terdiman, "Box pruning revisited" (2002-2017), one-axis sort + SIMD tests.

use crate::{Aabb, Config, Error};
use rayon::prelude::*;
use wide::f32x8;

/// Order-preserving map of an `f32` to a `u32` ("float flip"): `a < b` implies
/// `flip(a) < flip(b)` for all non-NaN floats (and -0.0 sorts just before +0.0).
#[inline(always)]
pub fn flip(x: f32) -> u32 {
    let b = x.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// Boxes sorted by `min[0]`, stored as one array per axis and bound, with a payload each.
#[derive(Debug, Clone)]
pub struct Sorted<const D: usize> {
    /// `lo[k][i]`: lower bound of box `i` on axis `k`. INVARIANT: `lo[0]` ascends.
    lo: [Vec<f32>; D],
    /// `hi[k][i]`: upper bound of box `i` on axis `k`.
    hi: [Vec<f32>; D],
    /// Payload of each box (a box index or a cell-entry index).
    pub payload: Vec<u32>,
    /// The sweep axis: pushed boxes have it swapped into slot 0 (see [`Sorted::set_axis`]).
    axis: usize,
    keys: Vec<u64>,
    scratch: Vec<u64>,
    wide: Vec<u128>,
    wide_scratch: Vec<u128>,
    staging: Vec<(Aabb<D>, u32)>,
}

impl<const D: usize> Default for Sorted<D> {
    fn default() -> Self {
        Self {
            lo: std::array::from_fn(|_| Vec::new()),
            hi: std::array::from_fn(|_| Vec::new()),
            payload: Vec::new(),
            axis: 0,
            keys: Vec::new(),
            scratch: Vec::new(),
            wide: Vec::new(),
            wide_scratch: Vec::new(),
            staging: Vec::new(),
        }
    }
}

impl<const D: usize> Sorted<D> {
    /// Empties the set, keeping its memory.
    pub fn clear(&mut self) {
        for k in 0..D {
            self.lo[k].clear();
            self.hi[k].clear();
        }
        self.payload.clear();
        self.staging.clear();
    }

    /// Number of boxes.
    pub fn len(&self) -> usize {
        self.payload.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.payload.is_empty()
    }

    /// Empties the set and sweeps along `axis` from now on. Boxes are stored with that axis
    /// swapped into slot 0, so [`Sorted::get`] returns them permuted; overlap does not care,
    /// but two sets meeting in [`bipartite`] must share the axis.
    pub fn set_axis(&mut self, axis: usize) {
        self.clear();
        self.axis = axis.min(D - 1);
    }

    /// Adds a box (valid: finite, `min <= max`) with its payload; call [`Sorted::sort`] after
    /// the last push.
    #[inline]
    pub fn push(&mut self, mut b: Aabb<D>, payload: u32) {
        if self.axis != 0 {
            b.min.swap(0, self.axis);
            b.max.swap(0, self.axis);
        }
        self.staging.push((b, payload));
    }

    /// Sorts the pushed boxes by `min[0]` (radix sort of flipped keys; ties keep push order).
    pub fn sort(&mut self) {
        self.keys.clear();
        self.keys.extend(
            self.staging.iter().enumerate().map(|(i, (b, _))| (flip(b.min[0]) as u64) << 32 | i as u64),
        );
        crate::radix_sort::sort(&mut self.keys, &mut self.scratch, 32..64);
        self.take_sorted();
    }

    /// Like [`Sorted::sort`], but keeps one box per payload: pushes with equal payloads must
    /// be the same box (ties on `min[0]` are then ordered by payload, so copies are adjacent).
    pub fn sort_unique(&mut self) {
        // u128 key: [staging index: 32][payload: 32][flip(min0): 32], sorted on the upper 64.
        let mut wide = std::mem::take(&mut self.wide);
        let mut wide_scratch = std::mem::take(&mut self.wide_scratch);
        wide.clear();
        wide.extend(
            self.staging
                .iter()
                .enumerate()
                .map(|(i, (b, p))| (flip(b.min[0]) as u128) << 64 | (*p as u128) << 32 | i as u128),
        );
        crate::radix_sort::sort(&mut wide, &mut wide_scratch, 32..96);
        wide.dedup_by_key(|k| (*k >> 32) as u32);
        self.keys.clear();
        self.keys.extend(wide.iter().map(|&k| k as u32 as u64));
        self.wide = wide;
        self.wide_scratch = wide_scratch;
        self.take_sorted();
    }

    /// Empties the set and fills it with the live boxes of `boxes` grown by `margin`, each
    /// with its index as payload, sorted along `axis`, in parallel: the same set as
    /// [`Sorted::set_axis`], a [`Sorted::push`] of each live box in order, and
    /// [`Sorted::sort`]. PERF: with those steps sequential, 2D terrain 1M (the whole-scene
    /// sweep) took 31.5 ms at 1 thread and 26.2 ms at 2 (bench); filled in parallel, 29.6-29.8
    /// ms at 1 thread against 34.8-38.5 (demo A/B; docs/BENCHMARKS.md).
    pub fn fill(&mut self, boxes: &[Aabb<D>], margin: f32, axis: usize) {
        self.set_axis(axis);
        let ax = self.axis;
        // Keys: flipped lower bound on the sweep axis, then the box index (ties in push
        // order, as `sort` orders them).
        self.keys.clear();
        let key = |(i, b): (usize, &Aabb<D>)| {
            let g = b.grown(margin);
            (!g.is_inverted()).then(|| (flip(g.min[ax]) as u64) << 32 | i as u64)
        };
        if boxes.len() < FILL_PAR_MIN {
            self.keys.extend(boxes.iter().enumerate().filter_map(key));
        } else {
            self.keys.par_extend(boxes.par_iter().enumerate().filter_map(key));
        }
        crate::radix_sort::sort(&mut self.keys, &mut self.scratch, 32..64);
        let n = self.keys.len();
        for k in 0..D {
            crate::radix_sort::grow_to(&mut self.lo[k], n);
            crate::radix_sort::grow_to(&mut self.hi[k], n);
        }
        crate::radix_sort::grow_to(&mut self.payload, n);
        use crate::columns::Out;
        let lo: [Out<f32>; D] = std::array::from_fn(|k| Out(self.lo[k].as_mut_ptr()));
        let hi: [Out<f32>; D] = std::array::from_fn(|k| Out(self.hi[k].as_mut_ptr()));
        let payload = Out(self.payload.as_mut_ptr());
        let chunk = crate::columns::chunk_len(n);
        self.keys.par_chunks(chunk).enumerate().for_each(|(c, part)| {
            crate::isa::fast(
                #[inline(always)]
                || {
                    for (j, &key) in part.iter().enumerate() {
                        if let Some(&f) = part.get(j + crate::columns::PREFETCH) {
                            crate::columns::prefetch(&boxes[f as u32 as usize]);
                        }
                        let i = key as u32 as usize;
                        let mut g = boxes[i].grown(margin);
                        if ax != 0 {
                            g.min.swap(0, ax);
                            g.max.swap(0, ax);
                        }
                        let s = c * chunk + j;
                        // SAFETY: `s` ranges over 0..n, each value in exactly one task; every array
                        // has length n (grow_to).
                        unsafe {
                            for k in 0..D {
                                lo[k].put(s, g.min[k]);
                                hi[k].put(s, g.max[k]);
                            }
                            payload.put(s, i as u32);
                        }
                    }
                },
            )
        });
    }

    /// Moves the staged boxes into the arrays in the order of `keys` (low 32 bits: the
    /// staging index).
    fn take_sorted(&mut self) {
        let n = self.keys.len();
        for k in 0..D {
            self.lo[k].clear();
            self.hi[k].clear();
            self.lo[k].reserve(n);
            self.hi[k].reserve(n);
        }
        self.payload.clear();
        self.payload.reserve(n);
        for &key in &self.keys {
            let (b, p) = self.staging[key as u32 as usize];
            for k in 0..D {
                self.lo[k].push(b.min[k]);
                self.hi[k].push(b.max[k]);
            }
            self.payload.push(p);
        }
        self.staging.clear();
    }

    /// Box `i` (in sorted order).
    #[inline(always)]
    pub fn get(&self, i: usize) -> Aabb<D> {
        Aabb { min: std::array::from_fn(|k| self.lo[k][i]), max: std::array::from_fn(|k| self.hi[k][i]) }
    }
}

/// The lanes of rows `j..j + 8` of the structure-of-arrays bounds `lo`, `hi` whose boxes
/// overlap `b` on the axes `from..D` (bit `l` is row `j + l`). Shared by the whole-scene
/// sweep and the column sweep (`columns.rs`); the caller guarantees `j + 8 <=` every row
/// array's length.
#[inline(always)]
pub(crate) fn overlap_mask8<const D: usize, V: std::ops::Deref<Target = [f32]>>(
    lo: &[V; D],
    hi: &[V; D],
    j: usize,
    b: &Aabb<D>,
    from: usize,
) -> u32 {
    let mut m = 0xff;
    for k in from..D {
        let l = f32x8::from(&lo[k][j..j + 8]);
        let h = f32x8::from(&hi[k][j..j + 8]);
        let ok = l.simd_le(f32x8::splat(b.max[k])) & f32x8::splat(b.min[k]).simd_le(h);
        m &= ok.to_bitmask();
    }
    m
}

/// Tests box `a` against `t`'s boxes from `start` on while they begin (axis 0) no later
/// than `a` ends; calls `emit(j)` for every `j` that overlaps `a` on all axes.
/// Returns the number of boxes put to the test.
///
/// Precondition: every box of `t` at `start..` has `min[0] >= a.min[0]` (so the axis-0
/// overlap reduces to `t.min[0] <= a.max[0]`), which the sweep order guarantees.
#[inline(always)]
pub fn scan<const D: usize>(a: &Aabb<D>, t: &Sorted<D>, start: usize, mut emit: impl FnMut(usize)) -> usize {
    let n = t.len();
    let mut j = start;
    let ax = a.max[0];
    // PERF: eight candidates per step; the axis-0 mask is a prefix because `x_min` ascends.
    while j + 8 <= n {
        let xs = f32x8::from(&t.lo[0][j..j + 8]);
        let in_x = xs.simd_le(f32x8::splat(ax)).to_bitmask();
        if in_x == 0 {
            return j - start;
        }
        let mut m = in_x & overlap_mask8(&t.lo, &t.hi, j, a, 1);
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            emit(j + l);
            m &= m - 1;
        }
        if in_x != 0xff {
            // A prefix (sorted minima): its length without a popcount.
            return j + (!in_x).trailing_zeros() as usize - start;
        }
        j += 8;
    }
    while j < n && t.lo[0][j] <= ax {
        let mut ok = true;
        for k in 1..D {
            ok &= t.lo[k][j] <= a.max[k] && a.min[k] <= t.hi[k][j];
        }
        if ok {
            emit(j);
        }
        j += 1;
    }
    j - start
}

/// All overlapping pairs `(i, j)`, `i < j` in sorted order, for sweep indices `rows` (the
/// per-chunk kernel; the full sweep is `rows = 0..len`). Returns the boxes tested.
#[inline(always)]
pub fn complete<const D: usize>(
    s: &Sorted<D>,
    rows: std::ops::Range<usize>,
    mut emit: impl FnMut(usize, usize),
) -> usize {
    let mut tests = 0;
    for i in rows {
        let a = s.get(i);
        tests += scan(&a, s, i + 1, |j| emit(i, j));
    }
    tests
}

/// Boxes from which [`Sorted::fill`] makes its keys in parallel (rayon's collection of a
/// filtered iterator costs more than it saves below).
const FILL_PAR_MIN: usize = 1 << 15;

/// Boxes sampled by [`AxisStats::trim`].
const TRIM_SAMPLE: usize = 512;

/// The box sampled from block `block` of `stride` consecutive boxes (of `n`): one at a
/// position in the block that a hash of the block's number picks, the same on every call.
/// A fixed stride aliases with ids that cycle: 10k boxes in 20 clumps, box `i` in clump
/// `i % 20`, sampled every 20th box, showed one clump; the trimmed grid covered it alone,
/// the other 19 clamped onto its border columns, and the columns tested 838 candidates a
/// box for 7.6 pairs (3D, 5.6 ms at 2 threads; with this sample 60 candidates, 1.6 ms:
/// docs/BENCHMARKS.md).
fn sample_index(block: usize, stride: usize, n: usize) -> usize {
    let start = block * stride;
    // SplitMix64's finaliser: every bit of the block number moves every bit of the hash.
    let mut h = (block as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^= h >> 31;
    start + (h % (stride.min(n - start)) as u64) as usize
}
/// One sampled box in this many, each side, is left out of the trimmed spreads and bounds
/// (8 of 512: 1.6%, so up to that share of strays; fewer samples leave fewer out).
const TRIM_OUT: usize = 64;
/// How many times `density + ties` the sample's own sweep must expect for the boxes to
/// count as gathered in a few far-apart places ([`AxisStats::per_box`]).
const GATHERED: f64 = 4.0;
/// Below this share of an axis covered ([`AxisStats::covered`]) the sample is swept on its
/// own along it, to see whether the boxes are gathered in a few far-apart places.
const SPARSE_COVER: f64 = 0.5;

/// What [`AxisStats::trim`] takes from its sample of the boxes ([`sample_index`]): the
/// order statistics and shares it needs, none of which depends on the scan, so that the
/// sample's sorts and selections can run beside it (`rayon::join` in the pipeline).
/// PERF: they took 34 us of a 1.9 ms frame (3D varied 10k, 2 threads), on one thread
/// after the scan.
pub(crate) struct TrimSample<const D: usize> {
    /// Boxes in the sample, and the `k` left out at each end.
    s: usize,
    out: usize,
    size_spread: f64,
    /// Per axis: the mean extent without the `out` largest, the sample's cover, its own
    /// sweep's tests (0 where it covers [`SPARSE_COVER`] or more), its tie share, the
    /// `out`-th smallest and largest lower bounds, and the `out`-th largest upper bound.
    trimmed: [f64; D],
    covered: [f64; D],
    tests: [f64; D],
    ties: [f64; D],
    l_lo: [f64; D],
    l_hi: [f64; D],
    u_hi: [f64; D],
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
        let s = lo[0].len();
        let out = s / TRIM_OUT;
        if out == 0 {
            return None;
        }
        let mut size: Vec<f32> =
            (0..s).map(|i| (0..D).map(|k| hi[k][i] - lo[k][i]).fold(0.0, f32::max)).collect();
        let p10 = *size.select_nth_unstable_by(s / 10, f32::total_cmp).1 as f64;
        let p90 = *size.select_nth_unstable_by(s - 1 - s / 10, f32::total_cmp).1 as f64;
        let mut t = Self {
            s,
            out,
            size_spread: if p10 > 0.0 { p90 / p10 } else { f64::INFINITY },
            trimmed: [0.0; D],
            covered: [0.0; D],
            tests: [0.0; D],
            ties: [0.0; D],
            l_lo: [0.0; D],
            l_hi: [0.0; D],
            u_hi: [0.0; D],
        };
        for k in 0..D {
            let mut ext: Vec<f64> = lo[k].iter().zip(&hi[k]).map(|(&l, &h)| h as f64 - l as f64).collect();
            ext.select_nth_unstable_by(s - 1 - out, f64::total_cmp);
            t.trimmed[k] = ext[..s - out].iter().sum::<f64>() / (s - out) as f64;
            // The sample's cover and, where it leaves most of the axis empty, its own sweep,
            // before `lo[k]` is sorted. PERF: the sweep sorts the sample, 20-60 us a frame
            // over three axes (10k 3D boxes: 2-5% of the frame); the cover is one pass, 1.8
            // us an axis.
            t.covered[k] = sample_cover(&lo[k], &hi[k]);
            if t.covered[k] < SPARSE_COVER {
                t.tests[k] = sample_tests(&lo[k], &hi[k]);
            }
            // Then the ties, which sort `lo[k]` (so its order statistics are at hand).
            t.ties[k] = tie_share(&mut lo[k]);
            t.l_lo[k] = lo[k][out] as f64;
            t.l_hi[k] = lo[k][s - 1 - out] as f64;
            t.u_hi[k] = *hi[k].select_nth_unstable_by(s - 1 - out, f32::total_cmp).1 as f64;
        }
        Some(t)
    }
}
/// Slabs of the sample's range, per axis, for the share of it the boxes cover
/// ([`AxisStats::covered`]).
const COVER_SLABS: usize = 256;

/// Per-axis sums for choosing a sweep axis: boxes, total extent, range of lower bounds,
/// and the bounds of the whole set.
#[derive(Clone, Copy)]
pub(crate) struct AxisStats<const D: usize> {
    count: f64,
    ext: [f64; D],
    lo: [f64; D],
    hi: [f64; D],
    /// Expected tests per box of a whole-scene sweep from lower bounds that are equal (set
    /// by [`AxisStats::trim`]).
    ties: [f64; D],
    /// Expected tests per box of a whole-scene sweep along each axis, from the sample's own
    /// sweep (set by [`AxisStats::trim`] on axes the sample covers under [`SPARSE_COVER`]
    /// of; 0 elsewhere): unlike `density`, it sees boxes gathered in a few far-apart places.
    local: [f64; D],
    /// The share of the sample's range on each axis that its boxes cover, in
    /// [`COVER_SLABS`] slabs (set by [`AxisStats::trim`]; 1 where it has not run).
    covered: [f64; D],
    /// The extent the bulk of the boxes occupies on each axis (set by
    /// [`AxisStats::trim`]; 0 where it has not run).
    bulk: [f64; D],
    /// How far the boxes' sizes spread: the sampled boxes' largest extents, 90th percentile
    /// over 10th (infinite when the 10th is 0; set by [`AxisStats::trim`], 1 where it has
    /// not run).
    size_spread: f64,
    /// Bounds of the boxes added (`+inf..-inf` when none).
    pub min: [f32; D],
    pub max: [f32; D],
    /// Some box scanned was invalid (NaN, infinite, or `min > max`): see
    /// [`crate::validate::check_boxes`] for which.
    pub invalid: bool,
}

impl<const D: usize> AxisStats<D> {
    const EMPTY: Self = Self {
        count: 0.0,
        ext: [0.0; D],
        ties: [0.0; D],
        local: [0.0; D],
        covered: [1.0; D],
        bulk: [0.0; D],
        size_spread: 1.0,
        lo: [f64::INFINITY; D],
        hi: [f64::NEG_INFINITY; D],
        min: [f32::INFINITY; D],
        max: [f32::NEG_INFINITY; D],
        invalid: false,
    };

    fn add(&mut self, b: &Aabb<D>) {
        self.count += 1.0;
        for k in 0..D {
            self.ext[k] += b.max[k] as f64 - b.min[k] as f64;
            self.lo[k] = self.lo[k].min(b.min[k] as f64);
            self.hi[k] = self.hi[k].max(b.min[k] as f64);
            self.min[k] = self.min[k].min(b.min[k]);
            self.max[k] = self.max[k].max(b.max[k]);
        }
    }

    fn merge(&mut self, o: &Self) {
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

    /// Leaves a few far-out boxes out of the spreads and bounds (see [`TRIM_SAMPLE`]): a
    /// stray box far away (a sentinel position, an object falling out of the world) would
    /// otherwise stretch the grid until the whole scene lies in a few columns, and make the
    /// whole-scene sweep look cheap. Boxes outside the trimmed bounds are clamped to the
    /// grid's border, exact as always; the pairs do not change, only the speed.
    ///
    /// From a sample of the (grown, live) boxes ([`sample_index`]), per axis: the lower bounds' range
    /// without the `k` smallest and `k` largest, widened by the share left out, bounds the
    /// spread; the grid runs from the `k`-th smallest lower bound to the `k`-th largest
    /// upper bound, plus 5% of that and the same widening. Each applies only where it
    /// halves the full range or more, and is never wider. The
    /// mean extent becomes the mean without the `k` largest where it is under half the
    /// full mean (a heavy tail of sizes: strays, a sky box).
    ///
    /// The sample is taken apart ([`TrimSample::take`]), so that its sorts can run beside
    /// the scan.
    pub fn trim(&mut self, t: &TrimSample<D>) {
        let (s, out) = (t.s, t.out);
        self.size_spread = t.size_spread;
        for k in 0..D {
            // Extents first: a few huge strays would make the mean extent, and so the
            // whole-scene sweep's cost and the level model's candidate cost, as large as
            // theirs.
            if self.mean_extent(k) > 2.0 * t.trimmed[k] {
                self.ext[k] = t.trimmed[k] * self.count;
            }
            self.covered[k] = t.covered[k];
            self.local[k] = t.tests[k] * self.count / (s * s) as f64;
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
    fn gathered(&self, k: usize) -> bool {
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

    /// How far the boxes' sizes spread (see `size_spread`).
    pub fn size_spread(&self) -> f64 {
        self.size_spread
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
    fn over(&self, k: usize, spread: f64) -> f64 {
        if spread > 0.0 {
            self.ext[k] / spread
        } else {
            0.0
        }
    }

    /// The axis with the fewest expected tests per box, and that number:
    /// `count * mean extent / spread of lower bounds` = `total extent / spread` (uniform
    /// placement), plus the boxes whose lower bound equals the box's (the ties found by
    /// [`AxisStats::trim`]). All-equal lower bounds (spread 0) make an axis the worst unless
    /// every axis is; a single box tests nothing.
    pub fn best(&self) -> (usize, f64) {
        let mut best = (0, f64::INFINITY);
        for k in 0..D {
            let spread = self.hi[k] - self.lo[k];
            let per_box = if spread > 0.0 {
                self.per_box(k)
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

/// The axis to sweep along: the one where boxes overlap least, i.e. the smallest mean
/// extent relative to the spread of lower bounds. Sweeping a set of long parallel planks
/// along their length would test every pair; across it, almost none.
pub fn best_axis<const D: usize>(boxes: impl Iterator<Item = Aabb<D>>) -> usize {
    let mut st = AxisStats::EMPTY;
    boxes.for_each(|b| st.add(&b));
    st.best().0
}

/// All overlapping pairs `(i in a, j in b)`, each once. Returns the boxes tested.
pub fn bipartite<const D: usize>(a: &Sorted<D>, b: &Sorted<D>, mut emit: impl FnMut(usize, usize)) -> usize {
    debug_assert_eq!(a.axis, b.axis, "bipartite sets must sweep the same axis");
    let (mut i, mut j, mut tests) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        if a.lo[0][i] < b.lo[0][j] {
            let bi = a.get(i);
            tests += scan(&bi, b, j, |k| emit(i, k));
            i += 1;
        } else {
            let bj = b.get(j);
            tests += scan(&bj, a, i, |k| emit(k, j));
            j += 1;
        }
    }
    tests
}

/// A complete sweep-and-prune broadphase: every pair `[i, j]`, `i < j`, of overlapping
/// boxes (grown by `config.margin`), sorted and unique. Parallel over the sweep's outer
/// index; same output for any thread count. Only `config.margin` is used.
pub fn find_pairs<const D: usize>(boxes: &[Aabb<D>], config: &Config<D>) -> Result<Vec<[u32; 2]>, Error> {
    config.validate()?;
    crate::validate::check_boxes(boxes)?;
    let mut out = Vec::new();
    let axis = estimate(boxes, config.margin).0;
    sweep_into(&mut Sorted::default(), boxes, config.margin, axis, &mut out);
    Ok(out)
}

/// The whole-scene sweep: every live (grown) box into `s` along `axis`, sorted, swept in
/// parallel chunks of the outer index, pairs into `out`. Returns the boxes tested.
pub(crate) fn sweep_into<const D: usize>(
    s: &mut Sorted<D>,
    boxes: &[Aabb<D>],
    margin: f32,
    axis: usize,
    out: &mut Vec<[u32; 2]>,
) -> usize {
    s.fill(boxes, margin, axis);
    let n = s.len();
    // Four chunks a thread, of 512 to 4096 boxes: at 10k boxes, 4096 a chunk left 3 jobs
    // for any number of threads.
    let chunk = (n / (4 * rayon::current_num_threads())).clamp(512, 4096);
    let s = &*s;
    let (parts, tests): (Vec<Vec<u64>>, Vec<usize>) = (0..n.div_ceil(chunk))
        .into_par_iter()
        .map(|c| {
            crate::isa::fast(
                #[inline(always)]
                || {
                    let mut part = Vec::new();
                    let t = complete(s, c * chunk..((c + 1) * chunk).min(n), |i, j| {
                        part.push(crate::pairs::key(s.payload[i], s.payload[j]));
                    });
                    (part, t)
                },
            )
        })
        .unzip();
    let parts: Vec<Vec<&[[u32; 2]]>> = parts.iter().map(|p| vec![bytemuck::cast_slice(p)]).collect();
    crate::pairs::finish_into(&parts, boxes.len(), out);
    tests.iter().sum()
}

/// The sweep axis for a whole scene and the expected boxes each box tests along it,
/// `live * mean extent / spread of lower bounds` (uniform placement). The reduction runs
/// over fixed chunks combined in order, so the result does not depend on the thread count.
pub(crate) fn estimate<const D: usize>(boxes: &[Aabb<D>], margin: f32) -> (usize, f64) {
    scan_scene(boxes, margin).best()
}

/// The share of pairs of `v`'s values that are equal (sorts `v`). PERF: points on a
/// grid (zero-size boxes at integer coordinates, 200 values an axis) have no extent, so the
/// uniform estimate said a whole-scene sweep tests nothing; it tested 750 boxes a box, and
/// took 57.6 ms at 300k boxes against 18.4 ms for the columns (2 threads).
fn tie_share(v: &mut [f32]) -> f64 {
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
/// same order, sorted, and mapped back by the inverse map. PERF: a comparison
/// sort with `total_cmp` branches on every compare; the sorts of the trim's sample (512
/// values an axis) were most of its 60-75 us a frame (10k 3D boxes, 1 thread).
fn sort_total(v: &mut [f32]) {
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
fn sample_cover(lo: &[f32], hi: &[f32]) -> f64 {
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

/// The pairs of a sample `(lo[i], hi[i])` that a sweep along the axis tests: a box and each
/// later one whose lower bound lies in its extent, equal lower bounds once.
fn sample_tests(lo: &[f32], hi: &[f32]) -> f64 {
    let mut order: Vec<(f32, f32)> = lo.iter().copied().zip(hi.iter().copied()).collect();
    order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let mut tests = 0usize;
    for (i, &(_, h)) in order.iter().enumerate() {
        tests += order.partition_point(|c| c.0 <= h).saturating_sub(i + 1);
    }
    tests as f64
}

/// The statistics of the live (grown) boxes: sweep axis estimate and bounds, one pass.
pub(crate) fn scan_scene<const D: usize>(boxes: &[Aabb<D>], margin: f32) -> AxisStats<D> {
    let parts: Vec<AxisStats<D>> = boxes
        .par_chunks(crate::columns::chunk_len(boxes.len()))
        .map(|c| {
            crate::isa::fast(
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
                        ties: [0.0; D],
                        local: [0.0; D],
                        covered: [1.0; D],
                        bulk: [0.0; D],
                        size_spread: 1.0,
                        lo: lo.map(f64::from),
                        hi: hi_lo.map(f64::from),
                        min: lo,
                        max: hi,
                        invalid: !ok,
                    }
                },
            )
        })
        .collect();
    let mut total = AxisStats::EMPTY;
    parts.iter().for_each(|p| total.merge(p));
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The integer sort of floats is `total_cmp`'s order, bit for bit: signed zeros,
    /// infinities, NaNs of either sign, subnormals, repeats, and random bit patterns.
    #[test]
    fn sort_total_is_total_cmp() {
        let mut r = crate::scene::Rng::new(9);
        let special = [
            0.0f32,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::MIN_POSITIVE / 4.0,
            -f32::MIN_POSITIVE / 4.0,
            f32::MAX,
            f32::MIN,
            1.0,
            -1.0,
        ];
        for len in [0usize, 1, 2, 17, 512, 3000] {
            let mut v: Vec<f32> = (0..len)
                .map(|i| match i % 3 {
                    0 => special[r.below(special.len())],
                    1 => f32::from_bits(r.next_u64() as u32),
                    _ => (r.below(41) as f32 - 20.0) * 0.5,
                })
                .collect();
            let mut want = v.clone();
            want.sort_unstable_by(f32::total_cmp);
            sort_total(&mut v);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&v), bits(&want), "len {len}");
        }
    }

    #[test]
    fn trim_leaves_strays_out_and_scenes_alone() {
        let mut boxes = crate::scene::uniform::<3>(5000, 4);
        let w = crate::scene::world_side::<3>(5000) as f32;
        let plain = {
            let mut st = scan_scene(&boxes, 0.0);
            let before = (st.min, st.max, st.best(), st.mean_extent(0));
            st.trim_boxes(&boxes, 0.0);
            assert_eq!(before, (st.min, st.max, st.best(), st.mean_extent(0)), "no strays: unchanged");
            st
        };
        // Strays: far boxes, one of them huge, at spread-out indices.
        for (i, at) in [(100, 1.0e9f32), (2000, -1.0e9), (4000, 1.0e30)] {
            boxes.insert(i, Aabb::new([at; 3], [at * 1.5_f32.copysign(at) + 1.0; 3]));
        }
        let mut st = scan_scene(&boxes, 0.0);
        assert!(st.max[0] > 1.0e29);
        st.trim_boxes(&boxes, 0.0);
        for k in 0..3 {
            assert!(st.min[k] >= -0.1 * w && st.max[k] <= 1.2 * w, "axis {k}: {} {}", st.min[k], st.max[k]);
            assert!(st.mean_extent(k) < 2.0 * plain.mean_extent(k), "axis {k}: {}", st.mean_extent(k));
        }
        let (per_trim, per_plain) = (st.best().1, plain.best().1);
        assert!(per_trim > 0.5 * per_plain && per_trim < 2.0 * per_plain, "{per_trim} vs {per_plain}");
    }

    /// Zero-size boxes at integer coordinates (20 values an axis) have no extent, but a
    /// whole-scene sweep tests every box with the same lower bound: the estimate must see
    /// those ties (about n / 20 / 2 a box), and continuous scenes must have none.
    #[test]
    fn estimate_counts_equal_lower_bounds() {
        let mut r = crate::scene::Rng::new(8);
        let n = 20_000;
        let points: Vec<Aabb<3>> = (0..n)
            .map(|_| {
                let p = [0; 3].map(|_: i32| r.below(20) as f32);
                Aabb::new(p, p)
            })
            .collect();
        let mut st = scan_scene(&points, 0.0);
        assert_eq!(st.best().1, 0.0);
        st.trim_boxes(&points, 0.0);
        let per_box = st.best().1;
        let want = n as f64 / 20.0 / 2.0;
        assert!(per_box > 0.7 * want && per_box < 1.3 * want, "{per_box} vs {want}");
        assert_eq!(st.density(st.best().0), 0.0, "the level model's density leaves ties out");
        let uniform = crate::scene::uniform::<3>(n, 9);
        let mut st = scan_scene(&uniform, 0.0);
        st.trim_boxes(&uniform, 0.0);
        assert!(st.ties.iter().all(|&t| t == 0.0), "{:?}", st.ties);
    }

    #[test]
    fn flip_orders_floats() {
        let xs = [f32::MIN, -1e30, -1.0, -f32::MIN_POSITIVE, -0.0, 0.0, 1e-40, 1.0, 3e38, f32::MAX];
        for w in xs.windows(2) {
            assert!(flip(w[0]) < flip(w[1]), "{} {}", w[0], w[1]);
        }
    }

    #[test]
    fn bipartite_finds_cross_pairs_once() {
        let mut a = Sorted::<2>::default();
        let mut b = Sorted::<2>::default();
        for i in 0..40 {
            let x = (i % 7) as f32;
            a.push(Aabb::new([x, 0.0], [x + 1.0, 1.0]), i);
            b.push(Aabb::new([x + 0.5, 0.5], [x + 0.5, 2.0]), 100 + i);
        }
        a.sort();
        b.sort();
        let mut got = Vec::new();
        bipartite(&a, &b, |i, j| got.push((a.payload[i], b.payload[j])));
        let mut want = Vec::new();
        for i in 0..a.len() {
            for j in 0..b.len() {
                if a.get(i).overlaps(&b.get(j)) {
                    want.push((a.payload[i], b.payload[j]));
                }
            }
        }
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
    }
}
