//! LSD radix sort of integer keys, sequential or parallel (rayon), one kernel for both.
//!
//! - Input: `u32`, `u64` or `u128` records and the range of their bits to sort on (bits
//!   below the range are payload and are not sorted on; bits above are expected to be zero
//!   or are sorted on if inside the range). Output: the records in `data`, ordered by those
//!   bits.
//! - Method: least-significant-digit first, 11-bit digits (8-bit from 2^19 records on, see
//!   [`digit_bits`]); below 256 records a stable comparison sort of the masked key.
//! - Stable: yes (so sorting `(key, payload)` records by the key bits keeps payload order
//!   among equal keys, which is what makes the pipeline's output independent of threads).
//! - Cost: O(n) a pass, one pass a digit of the range. Digits that are constant across the
//!   input are skipped: each pass counts its digit first, and a digit whose histogram has a
//!   single non-empty bucket moves nothing. Keys of clustered scenes or coarse columns often
//!   vary in only two or three bytes. The digits are not all counted in one pass up front:
//!   each pass's own count finds a constant digit without reading the keys once more.
//! - Not in place: ping-pongs between `data` and a caller-owned `scratch` (grown, never
//!   shrunk), and leaves the result in `data`.
//! - Parallel: the input is cut into chunks; each chunk counts its digit, a prefix over
//!   (bucket, chunk) gives every chunk its own write ranges, and chunks scatter
//!   concurrently into disjoint places. The result is the unique stable order, so it is the
//!   same for any chunking and thread count.
//! - Allocation: only `scratch` (n records) and per-chunk histograms and cursors.
//! - Source: the textbook LSD counting sort; the drivers and the constant-digit skip are
//!   this crate's.
//!
//! PERF: `benches/kernels.rs` (radix group, against `sort_unstable`, `rdst` and
//! `voracious_radix_sort`).

use crate::kernels::par::grow_to;
use crate::kernels::par::SendPtr;

use crate::par::prelude::*;
use std::ops::Range;

/// An unsigned integer record that can be sorted by a range of its bits.
pub trait RadixKey: Copy + Send + Sync + bytemuck::Zeroable + 'static {
    /// Width in bits.
    const BITS: u32;
    /// The [`DIGIT`]-bit digit starting at bit `shift`.
    fn digit(self, shift: u32) -> usize;
}

macro_rules! radix_key {
    ($($t:ty),*) => {$(
        impl RadixKey for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn digit(self, shift: u32) -> usize {
                ((self >> shift) & (RADIX as $t - 1)) as usize
            }
        }
    )*};
}
radix_key!(u32, u64, u128);

/// Below this many records one chunk, sorted without tasks (the parallel driver would
/// spend more on task setup than it saves). Low enough, with [`MIN_PER_BUCKET`] at 4, that
/// the 22.7k entries of 3D varied 10k boxes make two chunks on two threads.
/// PERF: `benches/pairs.rs` (3D varied and uniform 10k, 2 threads).
const PAR_MIN: usize = 1 << 13;
/// On one thread, below this many records one chunk: two chunks on one thread only add a
/// histogram and a prefix. PERF: `benches/pairs.rs` (3D varied 10k, 1 thread).
const SEQ_ONE_THREAD: usize = 1 << 15;
/// Below this many records a comparison sort of the whole value is used instead.
const SMALL: usize = 256;
/// Digit width in bits, and buckets per digit (the most: see [`digit_bits`]).
pub const DIGIT: u32 = 11;
const RADIX: usize = 1 << DIGIT;
/// The digit width of large inputs.
pub const NARROW_DIGIT: u32 = 8;
/// Records from which a sort uses [`NARROW_DIGIT`]-bit digits.
pub const NARROW_MIN: usize = 1 << 19;

/// The digit width a sort of `n` records uses: [`DIGIT`], or [`NARROW_DIGIT`] from
/// [`NARROW_MIN`] records on. A scatter into 2^11 buckets of a buffer of more than 2^11
/// pages misses the TLB on most writes; 2^8 buckets stay in it, so from there three 8-bit
/// passes beat two 11-bit ones, and below it the fewer passes win.
/// PERF: `benches/kernels.rs` (radix, 100k against 1M) and `benches/pairs.rs` (2D and 3D
/// uniform 100k and 1M, 1 thread).
pub fn digit_bits(n: usize) -> u32 {
    if n >= NARROW_MIN {
        NARROW_DIGIT
    } else {
        DIGIT
    }
}

/// Sorts `data` by its bits `bits.start..bits.end` (stable), on the current rayon pool.
/// `scratch` is working memory; its contents on return are unspecified.
pub fn sort<T: RadixKey>(data: &mut Vec<T>, scratch: &mut Vec<T>, bits: Range<u32>) {
    sort_in_chunks(data, scratch, bits, 0);
}

#[cfg(any(test, feature = "internals"))]
/// The sequential driver: the same kernel with one chunk and no tasks.
pub fn sort_sequential<T: RadixKey>(data: &mut Vec<T>, scratch: &mut Vec<T>, bits: Range<u32>) {
    sort_in_chunks(data, scratch, bits, 1);
}

fn sort_in_chunks<T: RadixKey>(data: &mut Vec<T>, scratch: &mut Vec<T>, bits: Range<u32>, chunks: usize) {
    let n = data.len();
    grow_to(scratch, n);
    if sort_slices(data, scratch, bits, chunks) {
        std::mem::swap(data, scratch);
    }
}

/// Records a chunk of the parallel driver holds at the least, per bucket of its digit: a
/// chunk's fixed work (its histogram and its share of the offsets) is one step a bucket.
/// A chunk count from the pool alone (four a thread whatever `n`) is not used: on a big
/// pool a small input pays for dozens of histograms of 2^11 buckets, their offsets and a
/// prefix that strides across them. PERF: `benches/pairs.rs` (2D uniform 100k, all
/// threads).
const MIN_PER_BUCKET: usize = 4;

/// The chunks the parallel driver cuts `n` records into, with `digit`-bit digits: one below
/// [`PAR_MIN`] records (or [`SEQ_ONE_THREAD`] on one thread); else as many as
/// [`MIN_PER_BUCKET`] allows, up to four a thread,
/// and a whole number a thread where there are enough for every thread, so that no
/// thread sorts a chunk more than the others. PERF: `benches/kernels.rs` (radix,
/// `ours/t{all}`).
fn chunk_count(n: usize, digit: u32) -> usize {
    let threads = crate::par::current_num_threads().max(1);
    if n < PAR_MIN || threads == 1 && n < SEQ_ONE_THREAD {
        return 1;
    }
    let most = n / (MIN_PER_BUCKET << digit);
    if most < threads {
        most.max(1)
    } else {
        most.min(4 * threads) / threads * threads
    }
}

/// Sorts `data` by `bits` using `scratch` (same length) as the other buffer; returns true
/// when the result ended in `scratch`. `chunks == 0` picks the chunk count from the pool
/// and `n`: one chunk below 8k records (32k on one thread), else up to four chunks a
/// thread of at least 4 records a bucket of the digit. A given count is cut to one chunk
/// per `2^digit` records.
pub fn sort_slices<T: RadixKey>(data: &mut [T], scratch: &mut [T], bits: Range<u32>, chunks: usize) -> bool {
    let n = data.len();
    assert_eq!(n, scratch.len(), "radix scratch must match the data length");
    let hi = bits.end.min(T::BITS);
    if n < 2 || bits.start >= hi {
        return false;
    }
    if n < SMALL {
        // Stable by the key bits: a stable comparison sort on the masked key.
        let lo = bits.start;
        let width = hi - lo;
        data.sort_by_key(|&v| masked(v, lo, width));
        return false;
    }
    let digit = digit_bits(n);
    let chunks = match chunks {
        0 => chunk_count(n, digit),
        // Counters for no more chunks than there are records a bucket.
        c => c.clamp(1, (n >> digit).max(1)),
    };
    let chunk_len = n.div_ceil(chunks);
    let chunks = n.div_ceil(chunk_len);
    let radix = 1usize << digit;
    // Counts, then write cursors, of every (chunk, bucket): allocated once for all passes.
    let mut hist = vec![0u32; chunks * radix];
    let mut offs = vec![0usize; chunks * radix];

    let mut swapped = false;
    for shift in (bits.start..hi).step_by(digit as usize) {
        let (src, dst) = if swapped { (&*scratch, &mut *data) } else { (&*data, &mut *scratch) };
        // The last digit may reach past `hi`: those bits are zero or sorted on (see the
        // module docs), so the order is the same.
        if scatter_pass(src, dst, shift, digit, chunk_len, &mut hist, &mut offs) {
            swapped = !swapped;
        }
    }
    swapped
}

/// `v`'s bits `lo..lo + width` as a u128 (for the small-input comparison sort).
#[inline]
fn masked<T: RadixKey>(v: T, lo: u32, width: u32) -> u128 {
    let mut k = 0u128;
    let mut s = 0;
    while s < width {
        k |= (v.digit(lo + s) as u128) << s;
        s += DIGIT;
    }
    if width < 128 {
        k &= (1u128 << width) - 1;
    }
    k
}

/// One stable counting-sort pass of `src` into `dst` on the `digit`-bit digit at `shift`,
/// in chunks of `chunk_len` records (`hist` and `offs` hold a row of `2^digit` for each);
/// false (and nothing written) when the digit is the same for every record.
fn scatter_pass<T: RadixKey>(
    src: &[T],
    dst: &mut [T],
    shift: u32,
    digit: u32,
    chunk_len: usize,
    hist: &mut [u32],
    offs: &mut [usize],
) -> bool {
    let radix = 1usize << digit;
    let mask = radix - 1;
    let count = |(c, h): (&[T], &mut [u32])| {
        crate::kernels::simd::fast(
            #[inline(always)]
            || {
                // Counted on the stack, where every digit is in bounds, then stored.
                let mut local = [0u32; RADIX];
                for &v in c {
                    local[v.digit(shift) & mask] += 1;
                }
                h.copy_from_slice(&local[..h.len()]);
            },
        )
    };
    if src.len() <= chunk_len {
        count((src, hist));
    } else {
        src.par_chunks(chunk_len).zip(hist.par_chunks_mut(radix)).for_each(count);
    }
    // offs[c][b] = records in buckets < b (all chunks) + records in bucket b of chunks < c,
    // row by row (the first row holds the bucket totals while they are summed).
    let (first, rest) = offs.split_at_mut(radix);
    for (t, &h) in first.iter_mut().zip(hist.iter()) {
        *t = h as usize;
    }
    for h in hist.chunks_exact(radix).skip(1) {
        for (t, &h) in first.iter_mut().zip(h) {
            *t += h as usize;
        }
    }
    // A constant digit moves nothing.
    if first.contains(&src.len()) {
        return false;
    }
    let mut run = 0usize;
    for t in first.iter_mut() {
        (*t, run) = (run, run + *t);
    }
    let mut prev: &[usize] = first;
    for (row, h) in rest.chunks_exact_mut(radix).zip(hist.chunks_exact(radix)) {
        for ((o, &p), &h) in row.iter_mut().zip(prev).zip(h) {
            *o = p + h as usize;
        }
        prev = row;
    }
    let out = SendPtr(dst.as_mut_ptr());
    let scatter = |(part, off): (&[T], &[usize])| {
        // Rebound so the closure captures the whole Send wrapper, not its raw field.
        #[allow(clippy::redundant_locals)]
        let out = out;
        let mut off: [usize; RADIX] = std::array::from_fn(|b| off.get(b).copied().unwrap_or(0));
        crate::kernels::simd::fast(
            #[inline(always)]
            || {
                for &v in part {
                    let b = v.digit(shift) & mask;
                    // SAFETY: offs[c][b] .. offs[c][b] + hist[c][b] is this chunk's private
                    // range for bucket b, inside 0..dst.len(); each record advances its
                    // bucket once.
                    unsafe { out.0.add(off[b]).write(v) };
                    off[b] += 1;
                }
            },
        )
    };
    if src.len() <= chunk_len {
        scatter((src, offs));
    } else {
        src.par_chunks(chunk_len).zip(offs.par_chunks(radix)).for_each(scatter);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut r = crate::internals::scene::Rng::new(seed);
        move || r.next_u64()
    }

    fn check(mut v: Vec<u64>) {
        let mut expect = v.clone();
        expect.sort_unstable();
        let mut s = Vec::new();
        sort(&mut v, &mut s, 0..64);
        assert_eq!(v, expect);
    }

    #[test]
    fn matches_std_on_nasty_patterns() {
        for &n in &[0usize, 1, 2, 255, 256, 257, 1000, (1 << 15) + 1, 100_000, NARROW_MIN + 3] {
            let mut r = rng(n as u64);
            check((0..n).map(|_| r()).collect()); // random
            check((0..n as u64).collect()); // sorted
            check((0..n as u64).rev().collect()); // reversed
            check(vec![42; n]); // all equal
            check((0..n).map(|_| r() & 0xff00_0000_00ff).collect()); // two live bytes
            check((0..n).map(|_| r() % 3).collect()); // few distinct
        }
    }

    #[test]
    fn stable_on_key_bits_only() {
        // key in bits 32.., payload (original position) in bits 0..32.
        let mut r = rng(7);
        let n = 70_000;
        let mut v: Vec<u64> = (0..n).map(|i| ((r() % 100) << 32) | i as u64).collect();
        let mut expect = v.clone();
        expect.sort_by_key(|x| x >> 32); // std stable sort
        let mut s = Vec::new();
        sort(&mut v, &mut s, 32..64);
        assert_eq!(v, expect);
    }

    #[test]
    fn narrow_digits_stable_and_partial_ranges() {
        // 8-bit digits (n >= NARROW_MIN), a range that is not a whole number of digits,
        // and payload below it: stable like std's sort by the key bits.
        let mut r = rng(21);
        let n = NARROW_MIN + 1000;
        assert_eq!(digit_bits(n), NARROW_DIGIT);
        let mut v: Vec<u64> = (0..n).map(|i| ((r() % (1 << 21)) << 24) | i as u64).collect();
        let mut expect = v.clone();
        expect.sort_by_key(|x| x >> 24);
        let mut s = Vec::new();
        sort(&mut v, &mut s, 24..45);
        assert_eq!(v, expect);
    }

    #[test]
    fn sequential_and_parallel_agree() {
        let mut r = rng(3);
        let base: Vec<u128> = (0..100_000).map(|_| ((r() as u128) << 40) ^ r() as u128).collect();
        let (mut a, mut b) = (base.clone(), base);
        let mut s = Vec::new();
        sort(&mut a, &mut s, 8..104);
        sort_sequential(&mut b, &mut s, 8..104);
        assert_eq!(a, b);
        assert!(a.windows(2).all(|w| (w[0] >> 8) <= (w[1] >> 8)));
    }

    #[test]
    fn any_chunking_agrees() {
        // Chunks of any count and size (the last one short) give the one stable order.
        let mut r = rng(11);
        let n = 3 * PAR_MIN + 17;
        let base: Vec<u64> = (0..n).map(|i| ((r() % 5000) << 32) | i as u64).collect();
        let mut expect = base.clone();
        expect.sort_by_key(|x| x >> 32);
        for chunks in [1, 2, 3, 7, 16, 64, n, n + 5] {
            let mut v = base.clone();
            let mut s = vec![0; n];
            if sort_slices(&mut v, &mut s, 32..64, chunks) {
                v = s;
            }
            assert_eq!(v, expect, "{chunks} chunks");
        }
    }

    #[test]
    #[cfg(feature = "parallel")]
    fn chunks_follow_the_pool_and_the_size() {
        for threads in [1, 2, 3, 16] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                for n in [PAR_MIN - 1, PAR_MIN, 22_677, SEQ_ONE_THREAD, 100_000, 127_231, 1 << 19, 5 << 20] {
                    let digit = digit_bits(n);
                    let c = chunk_count(n, digit);
                    assert!((1..=4 * threads).contains(&c), "{threads} threads, n {n}: {c}");
                    if n < PAR_MIN || threads == 1 && n < SEQ_ONE_THREAD {
                        assert_eq!(c, 1, "{threads} threads, n {n}");
                    } else if c > 1 {
                        assert!(n / c >= MIN_PER_BUCKET << digit, "{threads} threads, n {n}: {c}");
                    }
                    if c >= threads {
                        assert_eq!(c % threads, 0, "{threads} threads, n {n}: {c}");
                    }
                    if threads == 2 && n == 22_677 {
                        // 3D varied 10k boxes' entries: split between the two threads.
                        assert_eq!(c, 2);
                    }
                }
            });
        }
    }

    #[test]
    fn u32_keys() {
        let mut r = rng(9);
        let mut v: Vec<u32> = (0..50_000).map(|_| r() as u32).collect();
        let mut e = v.clone();
        e.sort_unstable();
        sort(&mut v, &mut Vec::new(), 0..32);
        assert_eq!(v, e);
    }
}
