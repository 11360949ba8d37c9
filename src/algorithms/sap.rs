//! Sweep-and-prune (Terdiman's "box pruning"): sort boxes by their lower bound on the sweep
//! axis, then each box scans forward only while the next boxes start before it ends,
//! testing the remaining axes 8 boxes at a time with `wide::f32x8`.
//!
//! - Input: boxes with a `u32` payload each. Output: overlapping pairs through a callback
//!   (complete: all pairs within one set; bipartite: pairs across two sets, each once), or,
//!   for the whole-scene sweep ([`sweep_into`]), the sorted unique pairs.
//! - Axis: the whole-scene sweep runs along the axis the scene scan picks
//!   ([`AxisStats::best`](crate::choose::AxisStats::best): the fewest expected tests a
//!   box), so parallel planks are swept across, not along; [`Sorted::set_axis`] swaps it
//!   into slot 0. RDC's groups sweep axis 0.
//! - Cost: O(n) to sort (a radix sort of the flipped lower bounds) plus O(n + k') to
//!   sweep, where k' counts the pairs that overlap on the sweep axis; SIMD cuts the
//!   per-candidate cost of the other axes.
//! - Used on its own as the whole-scene sweep ([`Method::Sweep`](crate::Method::Sweep),
//!   or where [`find_pairs`](crate::find_pairs) chooses it), by RDC inside its bigger
//!   final groups, and, through [`overlap_mask8`], by the column sweep's rows.
//! - Parallel: [`Sorted::fill`] and [`sweep_into`] over chunks of the sweep's outer index;
//!   the pair sort makes the output independent of the chunking. [`scan`], [`complete`]
//!   and [`bipartite`] are the sequential kernels.
//! - Allocation: the sorted structure-of-arrays copy, its sort keys and the whole-scene
//!   sweep's per-chunk pair keys (owned by [`Sorted`], reused after `clear`), a list of
//!   one entry a chunk for the pair sort, and the output.
//! - Source: P. Terdiman, "Box pruning" and "Box pruning revisited": one-axis sort and
//!   SIMD tests.

use crate::kernels::pair_sort::PairBudget;
use crate::kernels::par::SendPtr;

use crate::par::prelude::*;
use crate::Aabb;
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
    /// Payload of each box (its index in the caller's list).
    pub payload: Vec<u32>,
    /// The sweep axis: pushed boxes have it swapped into slot 0 (see [`Sorted::set_axis`]).
    axis: usize,
    keys: Vec<u64>,
    scratch: Vec<u64>,
    staging: Vec<(Aabb<D>, u32)>,
    /// The whole-scene sweep's pair keys, a chunk each ([`sweep_into`]), kept between calls.
    parts: Vec<Vec<u64>>,
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
            staging: Vec::new(),
            parts: Vec::new(),
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
        crate::kernels::radix_sort::sort(&mut self.keys, &mut self.scratch, 32..64);
        self.take_sorted();
    }

    /// Empties the set and fills it with the live boxes of `boxes` grown by `margin` (of
    /// them, only those that reach into `within` where it is given), each
    /// with its index as payload, sorted along `axis`, in parallel: the same set as
    /// [`Sorted::set_axis`], a [`Sorted::push`] of each live box in order, and
    /// [`Sorted::sort`]. PERF: faster than those steps in turn, on one thread as on many
    /// (`benches/pairs.rs`, 2D terrain 1M).
    pub fn fill(&mut self, boxes: &[Aabb<D>], margin: f32, axis: usize, within: Option<&Aabb<D>>) {
        self.set_axis(axis);
        let ax = self.axis;
        // Keys: flipped lower bound on the sweep axis, then the box index (ties in push
        // order, as `sort` orders them). In parallel, a box left out (inverted, or outside
        // `within`) gets `LEFT_OUT`, which sorts after every box's key, and the sorted
        // keys end where those begin. PERF: there a key a box, kept or not, is written in
        // place by an indexed parallel extend, where a filtered one collects parts in
        // fresh memory and moves them (benches/pairs.rs, `parked:50:1e9`, 3D 100k: the
        // strays' sweep); on one thread the filter is kept (2D `parked:50:1e9` at 10k,
        // where half the keys would be left out and sorted).
        const LEFT_OUT: u64 = u64::MAX;
        self.keys.clear();
        let key = |(i, b): (usize, &Aabb<D>)| {
            let g = b.grown(margin);
            let outside = within.is_some_and(|w| !g.overlaps(w));
            (!g.is_inverted() && !outside).then(|| (flip(g.min[ax]) as u64) << 32 | i as u64)
        };
        if boxes.len() < FILL_PAR_MIN {
            self.keys.extend(boxes.iter().enumerate().filter_map(key));
        } else {
            self.keys.par_extend(boxes.par_iter().enumerate().map(|ib| key(ib).unwrap_or(LEFT_OUT)));
        }
        crate::kernels::radix_sort::sort(&mut self.keys, &mut self.scratch, 32..64);
        // A live box's key is below `LEFT_OUT`: `flip` of a finite bound is under
        // `flip(inf)` = 0xff80_0000 in the high half.
        let n = self.keys.partition_point(|&k| k != LEFT_OUT);
        self.keys.truncate(n);
        for k in 0..D {
            crate::kernels::par::grow_to(&mut self.lo[k], n);
            crate::kernels::par::grow_to(&mut self.hi[k], n);
        }
        crate::kernels::par::grow_to(&mut self.payload, n);
        let lo: [SendPtr<f32>; D] = std::array::from_fn(|k| SendPtr(self.lo[k].as_mut_ptr()));
        let hi: [SendPtr<f32>; D] = std::array::from_fn(|k| SendPtr(self.hi[k].as_mut_ptr()));
        let payload = SendPtr(self.payload.as_mut_ptr());
        let chunk = crate::kernels::par::chunk_len(n);
        self.keys.par_chunks(chunk).enumerate().for_each(|(c, part)| {
            crate::kernels::simd::fast(
                #[inline(always)]
                || {
                    for (j, &key) in part.iter().enumerate() {
                        if let Some(&f) = part.get(j + crate::kernels::par::PREFETCH) {
                            crate::kernels::par::prefetch(&boxes[f as u32 as usize]);
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
/// overlap `b` on the axes `from..D` (bit `l` is row `j + l`). Shared by [`scan`] and the
/// column sweep's rows (`columns::rows`); the caller guarantees `j + 8 <=` every row
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

/// Boxes from which [`Sorted::fill`] makes its keys in parallel.
const FILL_PAR_MIN: usize = 1 << 15;

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

/// The whole-scene sweep: every live (grown) box into `s` along `axis`, sorted, swept in
/// parallel chunks of the outer index, pairs into `out`. Returns the boxes tested.
/// Where `within` is given, boxes wholly outside it are left out, and `apart` holds the
/// pair keys found for them elsewhere (`pair_sort::key`), joined to the output and
/// counted against `budget`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sweep_into<const D: usize>(
    s: &mut Sorted<D>,
    boxes: &[Aabb<D>],
    margin: f32,
    axis: usize,
    within: Option<&Aabb<D>>,
    apart: &[u64],
    budget: &PairBudget,
    out: &mut Vec<[u32; 2]>,
) -> usize {
    if !budget.take(apart.len()) {
        return 0;
    }
    s.fill(boxes, margin, axis, within);
    let n = s.len();
    // Four chunks a thread, of 512 to 4096 boxes: at 10k boxes a fixed 4096 a chunk would
    // leave 3 jobs for any number of threads.
    let chunk = (n / (4 * crate::par::current_num_threads())).clamp(512, 4096);
    // Each chunk's keys go to a buffer of its own, kept in `s` for the next call.
    let mut kept = std::mem::take(&mut s.parts);
    if kept.len() < n.div_ceil(chunk) {
        kept.resize_with(n.div_ceil(chunk), Vec::new);
    }
    let parts = &mut kept[..n.div_ceil(chunk)];
    let sorted = &*s;
    let tested: usize = parts
        .par_iter_mut()
        .enumerate()
        .map(|(c, part)| {
            crate::kernels::simd::fast(
                #[inline(always)]
                || sweep_chunk(sorted, c * chunk..((c + 1) * chunk).min(n), budget, part),
            )
        })
        .sum();
    let keys = parts.iter().map(|p| p.as_slice()).chain([apart]);
    crate::kernels::pair_sort::finish_parts(keys, boxes.len(), budget, out);
    s.parts = kept;
    tested
}

/// The pair keys of sweep rows `rows` into `part` (cleared first: a caller's kept buffer
/// or a fresh one); returns the boxes tested. Counts its keys against `budget` every
/// [`BUDGET_STEP`](crate::kernels::pair_sort::BUDGET_STEP) or so, and ends early, `part`
/// emptied, once the budget stops (keys past the bound, or an allocation the allocator
/// refused). Used by the whole-scene sweep and
/// by RDC's big final groups. Inlined into the whole-scene sweep's `simd::fast` closure,
/// so that it is compiled for the fast instruction set there too.
#[inline(always)]
pub(crate) fn sweep_chunk<const D: usize>(
    s: &Sorted<D>,
    rows: std::ops::Range<usize>,
    budget: &PairBudget,
    part: &mut Vec<u64>,
) -> usize {
    part.clear();
    if budget.stopped() {
        // Another chunk has stopped the call: a row here could add a scene's worth of keys.
        return 0;
    }
    let (mut counted, mut tests) = (0, 0);
    let mut failed = false;
    for i in rows {
        let a = s.get(i);
        tests += scan(&a, s, i + 1, |j| {
            if part.len() == part.capacity() && part.try_reserve(part.len().max(64)).is_err() {
                failed = true;
                return;
            }
            part.push(crate::kernels::pair_sort::key(s.payload[i], s.payload[j]));
        });
        if budget.account(part.len(), &mut counted, failed) {
            part.clear();
            return tests;
        }
    }
    budget.settle(part.len(), counted);
    tests
}

#[cfg(test)]
mod tests {
    use super::*;

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
