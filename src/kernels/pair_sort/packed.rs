//! Buckets as they lie in memory, and the sort of keys packed in 32 bits.
//!
//! - Input: a bucket of pairs `[i, j]` or of packed keys `(i - i0) << jbits | j`, and its
//!   place in the output. Output: the bucket's pairs, ascending, in that place.
//! - Cost: O(m) for a bucket of m keys: one pass for the widest partner and the disorder,
//!   then one to three LSD passes of at most 11 bits ([`lsd`]) or a counting sort by first
//!   index (`sort_unstable` for a bucket too small for either).
//! - Parallel: no; [`Buckets::sort`](super::buckets::Buckets::sort) runs buckets in
//!   parallel.
//! - Allocation: none of its own; a packed bucket's radix sort uses its place in the
//!   output as the other buffer; the per-job counters and the sparse sort's buffer are
//!   reused from bucket to bucket.
//! - Source: this crate.

use super::bucket_sort::sort_bucket;
use super::bucket_sort::sort_sparse;
use super::bucket_sort::BUCKET_DIGIT;
use super::bucket_sort::ORDERED;
use crate::kernels::simd::low_mask;
use std::mem::MaybeUninit;

/// Per-task scratch of the bucket sorts: the radix sort's other buffer for pairs, its
/// counters, and the sparse sort's buffer for packed keys (a packed bucket's radix sort
/// takes the bucket's place in the output, see [`Packed`]'s `sort_into`).
pub(super) type Scratch<'a> = (&'a mut Vec<[u32; 2]>, &'a mut Vec<u32>, &'a mut Vec<u32>);

/// A bucket of the MSD pass, as it lies in memory: pairs `[i, j]`, or packed in a `u32`.
pub(super) trait Bucket: Send {
    fn len(&self) -> usize;
    /// Sorts the bucket (first indices `i0..i0 + w`) and copies it to `to` if given (else it
    /// is left sorted where it lies; packed buckets always have a `to`).
    fn sort_into(self, i0: u32, w: u32, s: Scratch<'_>, to: Option<&mut [MaybeUninit<[u32; 2]>]>);
}

/// Copies sorted pairs into their place in the output: a copy after the sort, in cache.
/// A last radix pass into the output is not used: its scattered writes to memory not in
/// cache are slower. PERF: `benches/pairs.rs` (3D varied 1M, 2 threads).
#[inline(always)]
pub(super) fn copy_out(to: &mut [MaybeUninit<[u32; 2]>], from: &[[u32; 2]]) {
    for (d, s) in to.iter_mut().zip(from.iter()) {
        d.write(*s);
    }
}

impl Bucket for &mut [[u32; 2]] {
    fn len(&self) -> usize {
        <[[u32; 2]]>::len(self)
    }

    #[inline(always)]
    fn sort_into(self, i0: u32, w: u32, s: Scratch<'_>, to: Option<&mut [MaybeUninit<[u32; 2]>]>) {
        sort_bucket(self, i0, w, 0, s.0, s.1);
        if let Some(to) = to {
            copy_out(to, self);
        }
    }
}

/// A bucket of keys packed in 32 bits: `(i - i0) << jbits | j` (see [`packed_bits`]).
pub(super) struct Packed<'a> {
    pub(super) keys: &'a mut [u32],
    pub(super) jbits: u32,
}

impl Bucket for Packed<'_> {
    fn len(&self) -> usize {
        self.keys.len()
    }

    /// The bucket's place in the output is the radix sort's other buffer: it has room for
    /// two keys a pair. Where the sorted keys end there, each widens to its pair in place,
    /// last first. PERF (memory): no buffer of a bucket's size a sort job, which with a job
    /// on every core of a big pool adds up beside a small scene (`benches/pairs.rs`, 3D
    /// varied 10k, 16 threads).
    #[inline(always)]
    fn sort_into(self, i0: u32, w: u32, s: Scratch<'_>, to: Option<&mut [MaybeUninit<[u32; 2]>]>) {
        let (_, hist, tmp) = s;
        let n = self.keys.len();
        let Some(to) = to else {
            debug_assert!(false, "a packed bucket is copied out");
            return;
        };
        debug_assert!(to.len() >= n, "a bucket's place holds its pairs");
        let to = &mut to[..n];
        let base = to.as_mut_ptr();
        // SAFETY: `MaybeUninit<[u32; 2]>` is two `MaybeUninit<u32>` (size 8, align 4): the
        // place of `n` pairs is that of `2 n` keys, borrowed through `to` only here.
        let other: &mut [MaybeUninit<u32>] =
            unsafe { std::slice::from_raw_parts_mut(base.cast::<MaybeUninit<u32>>(), 2 * n) };
        let (jb, j0, in_other) = sort_packed(self.keys, i0, w, self.jbits, tmp, other, hist);
        let mask = low_mask(jb) as u32;
        let pair = |k: u32| [i0 + (k >> jb), j0 + (k & mask)];
        if !in_other {
            for (d, &k) in to.iter_mut().zip(self.keys.iter()) {
                d.write(pair(k));
            }
            return;
        }
        let keys = base.cast::<u32>();
        for m in (0..n).rev() {
            // SAFETY: the sorted keys are the first `n` of the `2 n` key slots at `base`, all
            // written by the sort. Pair `m` covers key slots `2 m` and `2 m + 1`, at or past
            // `m`: key `m` is read before they are written, and the keys past it were read
            // already (last first).
            unsafe {
                let k = keys.add(m).read();
                base.add(m).write(MaybeUninit::new(pair(k)));
            }
        }
    }
}

/// Sorts a bucket of packed keys (`(i - i0) << jbits | j`, first indices `i0..i0 + w`) and
/// says how to read a sorted key `k` back: `(jb, j0)` for the pair `[i0 + (k >> jb), j0 +
/// (k & (low_mask(jb) as u32))]`, and where the sorted keys lie: `keys`, or (`true`) the first
/// `keys.len()` of `other` (at least that long; the radix sort's other buffer). `tmp` is
/// the sparse sort's.
///
/// A bucket of under two pairs a first index goes to [`sort_sparse`] (the counters of the
/// radix digits would outnumber its pairs); a bigger one is sorted by [`lsd`] on the key
/// `(i - i0) << jb | (j - i0)`, with `jb` as narrow as the widest partner allows (a
/// spatially ordered input, as a terrain, has its partners near: one digit less).
/// The generic [`sort_bucket`] is not used here: its digits as many as keep the counters
/// below the pairs and its loop over the digits per key cost more than fixed 11-bit digits
/// on the buckets of a clustered scene. PERF: `benches/pairs.rs` (3D clustered
/// 10k).
pub(super) fn sort_packed(
    keys: &mut [u32],
    i0: u32,
    w: u32,
    jbits: u32,
    tmp: &mut Vec<u32>,
    other: &mut [MaybeUninit<u32>],
    hist: &mut Vec<u32>,
) -> (u32, u32, bool) {
    let n = keys.len();
    if n < 8 || n * 4 < w as usize {
        // Few keys, or few for many indices: counters of either kind would cost more.
        keys.sort_unstable();
        return (jbits, 0, false);
    }
    let mask = low_mask(jbits) as u32;
    // One pass for the widest partner and the disorder: keys below the one before with
    // the same first index (a partner out of order).
    let (mut j_max, mut descents) = (keys[0] & mask, 0usize);
    for q in keys.windows(2) {
        j_max = j_max.max(q[1] & mask);
        descents += (q[1] < q[0] && q[1] >> jbits == q[0] >> jbits) as usize;
    }
    if n < SPARSE_PACKED * w as usize || (descents * ORDERED < n && n < ORDERED_PACKED * w as usize) {
        sort_sparse(keys, i0, w, jbits, tmp, hist);
        return (jbits, 0, false);
    }
    // j > i >= i0 for every pair, so j - i0 is in 1..=j_max - i0.
    let jb = u32::BITS - (j_max - i0).leading_zeros();
    let (jb, j0) = if jb < jbits {
        for k in keys.iter_mut() {
            *k = (*k >> jbits) << jb | ((*k & mask) - i0);
        }
        (jb, i0)
    } else {
        (jbits, 0)
    };
    let width = jb + (u32::BITS - (w - 1).leading_zeros());
    let in_tmp = match width.div_ceil(BUCKET_DIGIT) {
        0 | 1 => lsd::<1>(keys, width, other, hist),
        2 => lsd::<2>(keys, width, other, hist),
        _ => lsd::<3>(keys, width, other, hist),
    };
    (jb, j0, in_tmp)
}

/// Pairs a first index below which [`sort_packed`] takes [`sort_sparse`]: on buckets with
/// partners at random, the counting sort wins below about two pairs an index and the radix
/// digits above. PERF: `benches/pairs.rs` (3D clustered and mixed 10k).
pub(super) const SPARSE_PACKED: usize = 2;

/// Pairs a first index below which [`sort_packed`] takes [`sort_sparse`] for a bucket whose
/// partners come nearly in order.
pub(super) const ORDERED_PACKED: usize = 12;

/// Stable LSD radix sort of `keys` on their low `width <= 11 P` bits, in `P` equal digits:
/// one pass counts every digit, then a pass a digit that is not the same for every key.
/// The passes go back and forth between `keys` and `tmp` (at least as long); returns `true`
/// where the sorted keys end in `tmp` (its first `keys.len()`, all written then), for the
/// caller to read them there: a copy back would be a pass more (three digits end in
/// `tmp`). [`crate::kernels::radix_sort::sort_slices`] is not used here: its count pass a
/// digit and per-pass buffers make the pair stage slower. PERF: `benches/pairs.rs` (3D
/// varied 10k and 100k, 3D tiles 100k, 2 threads).
#[inline(always)]
pub(super) fn lsd<const P: usize>(
    keys: &mut [u32],
    width: u32,
    tmp: &mut [MaybeUninit<u32>],
    hist: &mut Vec<u32>,
) -> bool {
    let n = keys.len();
    // Each digit's shift, mask and first counter: the counters of digit `q` are
    // `hist[at..=at + m]`, as many as its values, so that only those are cleared.
    let mut dg = [(0u32, 0u32, 0usize); P];
    let (mut shift, mut at) = (0, 0);
    for (q, d) in dg.iter_mut().enumerate() {
        let bits = (width - shift).div_ceil((P - q) as u32);
        *d = (shift, (low_mask(bits) as u32), at);
        shift += bits;
        at += 1 << bits;
    }
    hist.clear();
    hist.resize(at, 0);
    for &k in keys.iter() {
        for &(s, m, o) in dg.iter() {
            // SAFETY: a digit is at most `m`, and digit `q`'s counters are `o..=o + m`,
            // inside `hist` (its length is the sum of the digits' `m + 1`).
            unsafe { *hist.get_unchecked_mut(o + ((k >> s) & m) as usize) += 1 };
        }
    }
    let tmp = tmp[..n].as_mut_ptr().cast::<u32>();
    let keys_at = keys.as_mut_ptr();
    let mut in_keys = true;
    for &(s, m, o) in dg.iter() {
        let h = &mut hist[o..o + m as usize + 1];
        if h.iter().any(|&c| c as usize == n) {
            continue;
        }
        let mut sum = 0;
        for c in h.iter_mut() {
            (*c, sum) = (sum, sum + *c);
        }
        let (src, dst) = if in_keys { (keys_at.cast_const(), tmp) } else { (tmp.cast_const(), keys_at) };
        for q in 0..n {
            // SAFETY: `src` holds `n` written keys (`keys`, or `tmp` after a pass wrote all
            // of it). The digit is at most `m` (h's last slot); `h` holds the prefix of
            // this digit's counts over the same keys (a pass permutes them), so each slot's
            // cursor stays below the next slot's start, and the last below `n`, inside
            // `dst` (`n` slots either way).
            unsafe {
                let k = src.add(q).read();
                let up = h.get_unchecked_mut(((k >> s) & m) as usize);
                dst.add(*up as usize).write(k);
                *up += 1;
            }
        }
        in_keys = !in_keys;
    }
    !in_keys
}

/// The bits of a partner index, when the keys of `n_ids` boxes can wait in the MSD buckets
/// packed in 32 bits (`(i - i0) << jbits | j`: a bucket's first indices take at most
/// `32 - jbits` bits): up to 2^21 boxes, with at least `2^(2 jbits - 32)` buckets
/// ([`packed_min_buckets`]). Half the idle memory a key: at many pairs a box (3D tiles
/// 1M, 17.6 pairs a box) wide keys outgrow the idle memory the caller lends and need a
/// buffer of their own.
pub(crate) fn packed_bits(n_ids: usize) -> Option<u32> {
    let jbits = usize::BITS - n_ids.saturating_sub(1).leading_zeros();
    (jbits <= 21).then_some(jbits)
}

/// The fewest buckets that make a bucket's first indices fit beside `jbits` in 32 bits.
pub(super) fn packed_min_buckets(jbits: u32) -> usize {
    1 << (2 * jbits).saturating_sub(32)
}
