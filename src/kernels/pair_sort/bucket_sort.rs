//! The sorts of one bucket of pairs: an LSD radix sort on a key as narrow as the bucket's
//! partners allow, and a counting sort by first index for buckets with few partners an
//! index or partners nearly in order.
//!
//! - Input: a bucket of pairs `[i, j]` or packed keys ([`Slot`]), first indices
//!   `i0..i0 + w`. Output: the bucket ascending, where it lies.
//! - Cost: O(m) for m pairs: one pass for the widest partner and the disorder, one counting
//!   pass, a pass a digit that is not constant; the counting sort adds a comparison sort of
//!   each first index's few partners. Buckets with fewer pairs than counters:
//!   `sort_unstable`.
//! - Stable: the radix sort is; it does not matter, since pairs are unique.
//! - Parallel: no; the caller runs buckets in parallel.
//! - Allocation: none; `tmp` and `hist` are the caller's, reused from bucket to bucket.
//! - Source: this crate.

use crate::kernels::simd::low_mask;

/// A pair as a bucket holds it: `[i, j]`, or packed in a `u32` (`(i - i0) << jbits | j`,
/// see [`packed_bits`](super::packed_bits)). Either way the order of the values is the pairs' order.
pub(super) trait Slot: Copy + Ord + Default + Send {
    /// The first index less the bucket's first `i0`, and the partner.
    fn ij(self, i0: u32, jbits: u32) -> (u32, u32);
}

impl Slot for [u32; 2] {
    #[inline(always)]
    fn ij(self, i0: u32, _: u32) -> (u32, u32) {
        (self[0] - i0, self[1])
    }
}

impl Slot for u32 {
    #[inline(always)]
    fn ij(self, _: u32, jbits: u32) -> (u32, u32) {
        (self >> jbits, self & (low_mask(jbits) as u32))
    }
}

/// The widest digit of [`sort_bucket`]: 2^11 four-byte counters stay in L1.
pub(super) const BUCKET_DIGIT: u32 = 11;

/// Sorts `bk`, pairs `[i, j]` with `i0 <= i < i0 + w` and `i < j`, ascending: a stable
/// LSD radix sort of the key `(i - i0) << jb | (j - i0)` (`jb` bits hold the widest
/// `j - i0`), in as few digits of at most [`BUCKET_DIGIT`] bits as the key needs, using
/// `tmp` as the other buffer and `hist` for the counts. One pass counts every digit; a
/// digit that is the same for every pair moves nothing.
#[inline(always)]
pub(super) fn sort_bucket<T: Slot>(
    bk: &mut [T],
    i0: u32,
    w: u32,
    jbits: u32,
    tmp: &mut Vec<T>,
    hist: &mut Vec<u32>,
) {
    let bits = |v: u32| u32::BITS - v.saturating_sub(1).leading_zeros();
    // The partners' spread, not the bound: in a spatially ordered input (a terrain) the
    // partners are near, and the key is shorter.
    // One pass for the widest partner and the disorder: pairs whose partner is below the
    // one before, with the same first index.
    let (mut j_max, mut descents) = (i0, 0usize);
    for q in bk.windows(2) {
        let ((a, ja), (b, jb)) = (q[0].ij(i0, jbits), q[1].ij(i0, jbits));
        j_max = j_max.max(jb);
        descents += (a == b && jb < ja) as usize;
    }
    j_max = j_max.max(bk.first().map_or(i0, |p| p.ij(i0, jbits).1));
    let jb = bits(j_max - i0 + 1);
    let width = jb + bits(w);
    // Few partners an index, or partners found nearly in order (a spatially ordered input:
    // insertion sorts then barely move anything): the counting sort by the first index,
    // unless the bucket has far fewer pairs than first indices. This test comes before the
    // one for fewer pairs than counters below: after it, the buckets of scenes with about
    // one pair an index (under 6,144 pairs, three digits of counters) would fall to the
    // slower `sort_unstable`. PERF: `benches/pairs.rs` (2D and 3D uniform 1M, 1 thread).
    if (bk.len() < SPARSE * w as usize || descents * ORDERED < bk.len()) && bk.len() * 4 >= w as usize {
        return sort_sparse(bk, i0, w, jbits, tmp, hist);
    }
    // (shift, width) of each digit of the key, least significant first, cut from the whole
    // key: digits cut from the two fields apart take four passes where three do (a 13 + 12
    // bit key). PERF: `benches/pairs.rs` (3D terrain 1M).
    // As few digits of at most BUCKET_DIGIT bits as the key needs, then one more while
    // the counters outnumber the pairs: with two digits of 11 bits (4,096 counters), a
    // bucket of 2,000 to 4,000 pairs would fall through to `sort_unstable` below, slower
    // than three narrower passes. PERF: `benches/pairs.rs` (3D clustered 10k, 2 threads).
    let plan = |parts: u32| {
        let mut digits = [(0u32, 0u32); 6];
        let mut shift = 0;
        for (k, dg) in digits.iter_mut().enumerate().take(parts as usize) {
            let d = (width - shift).div_ceil(parts - k as u32);
            *dg = (shift, d);
            shift += d;
        }
        let mut offs = [0usize; 6];
        let mut total = 0;
        for (k, &(_, d)) in digits.iter().enumerate().take(parts as usize) {
            offs[k] = total;
            total += 1 << d;
        }
        (digits, offs, total)
    };
    let mut parts = width.div_ceil(BUCKET_DIGIT).max(1);
    let (mut digits, mut offs, mut total) = plan(parts);
    while total > bk.len() && parts < width.min(6) {
        parts += 1;
        (digits, offs, total) = plan(parts);
    }
    let digits = &digits[..parts as usize];
    if bk.len() < total {
        // Fewer pairs than counters: clearing and summing them would cost more.
        bk.sort_unstable();
        return;
    }
    let key = |p: &T| {
        let (di, j) = p.ij(i0, jbits);
        (di as u64) << jb | (j - i0) as u64
    };
    let digit = |p: &T, (shift, d): (u32, u32)| (key(p) >> shift) as usize & ((1 << d) - 1);
    hist.clear();
    hist.resize(total, 0);
    for p in bk.iter() {
        for (k, &dg) in digits.iter().enumerate() {
            // SAFETY: a digit is below 1 << d, and offs[k] + (1 << d) <= total.
            unsafe { *hist.get_unchecked_mut(offs[k] + digit(p, dg)) += 1 };
        }
    }
    tmp.clear();
    tmp.resize(bk.len(), T::default());
    let mut in_bk = true;
    for (k, &dg) in digits.iter().enumerate() {
        let h = &mut hist[offs[k]..offs[k] + (1 << dg.1)];
        if h.iter().any(|&c| c as usize == bk.len()) {
            continue;
        }
        let mut sum = 0;
        for c in h.iter_mut() {
            (*c, sum) = (sum, sum + *c);
        }
        let (src, dst): (&[T], &mut [T]) = if in_bk { (bk, tmp) } else { (tmp, bk) };
        for p in src.iter() {
            let up = &mut h[digit(p, dg)];
            dst[*up as usize] = *p;
            *up += 1;
        }
        in_bk = !in_bk;
    }
    if !in_bk {
        bk.copy_from_slice(tmp);
    }
}

/// Pairs a first index has on average below which [`sort_sparse`] sorts a bucket: at about
/// one pair a box (a 2D terrain: a bucket of 4096 indices holds about 4000 pairs) the
/// counting sort costs less than radix passes. PERF: `benches/pairs.rs` (2D terrain 1M,
/// 1 thread).
pub(super) const SPARSE: usize = 4;

/// A bucket with fewer than one descent (a partner below the one before it, same first
/// index) in this many pairs is sorted by [`sort_sparse`]: with ids in grid order (a
/// terrain, about 8 partners an index) its insertion sorts barely move anything and beat
/// radix passes; with ids at random (3D varied, 11 partners) the radix passes win.
/// PERF: `benches/pairs.rs` (3D terrain 1M, 3D varied 1M).
pub(super) const ORDERED: usize = 4;

/// Sorts a bucket whose first indices have few partners each, or whose partners are nearly
/// in order: a counting sort by the first index, then each index's partners by a
/// comparison sort (an insertion sort for few: cheap when they are nearly in order).
pub(super) fn sort_sparse<T: Slot>(
    bk: &mut [T],
    i0: u32,
    w: u32,
    jbits: u32,
    tmp: &mut Vec<T>,
    hist: &mut Vec<u32>,
) {
    let w = w as usize;
    hist.clear();
    hist.resize(2 * (w + 1), 0);
    let (count, at) = hist.split_at_mut(w + 1);
    for p in bk.iter() {
        count[p.ij(i0, jbits).0 as usize + 1] += 1;
    }
    // PERF: the running sum stays in a register; `count[i + 1] += count[i]` would carry it
    // through memory, a store-to-load forward an index.
    let mut sum = 0;
    for c in count.iter_mut() {
        sum += *c;
        *c = sum;
    }
    tmp.clear();
    tmp.extend_from_slice(bk);
    at.copy_from_slice(count);
    for &p in tmp.iter() {
        let slot = &mut at[p.ij(i0, jbits).0 as usize];
        bk[*slot as usize] = p;
        *slot += 1;
    }
    for i in 0..w {
        let run = &mut bk[count[i] as usize..count[i + 1] as usize];
        match run.len() {
            0 | 1 => {}
            2 => exchange(run, 0, 1, |p| p.ij(i0, jbits).1),
            3 => {
                let key = |p: &T| p.ij(i0, jbits).1;
                exchange(run, 0, 1, key);
                exchange(run, 1, 2, key);
                exchange(run, 0, 1, key);
            }
            _ => run.sort_unstable_by_key(|p| p.ij(i0, jbits).1),
        }
    }
}

/// Puts `v[a]` and `v[b]` (`a < b`) in order of `key`, without a branch on the data.
/// `sort_unstable_by_key` on a run of two or three pairs costs a call and its checks for at
/// most three compares. An inline insertion sort for longer runs is not used: its exits
/// mispredict where partners come in random order, and the standard sort's small sort does
/// not branch. PERF: `benches/pairs.rs` (3D mixed and clustered 10k).
#[inline(always)]
pub(super) fn exchange<T: Copy, K: Ord>(v: &mut [T], a: usize, b: usize, key: impl Fn(&T) -> K) {
    let (x, y) = (v[a], v[b]);
    let swap = key(&y) < key(&x);
    v[a] = if swap { y } else { x };
    v[b] = if swap { x } else { y };
}
