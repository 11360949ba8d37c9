//! Pair keys and the last stage: gather the per-chunk pair keys, radix sort them, and write
//! the sorted `[i, j]` output.
//!
//! - Key layout (u64): `i << 32 | j` with `i < j`, so ascending keys are the output order.
//! - Unique by construction in the cell sweep (the reference-point rule in `sweep`), so no
//!   dedup pass runs; debug builds check uniqueness (`validate`).
//! - A key may wait in a `[u32; 2]` slot as its bit pattern ([`unslot`] reads it back): that is how the
//!   cell sweep spills keys into the output vector itself.
//! - Sort: one parallel MSD scatter into buckets by the first index's high bits, then each
//!   small bucket sorted in cache, in parallel (keys are unique, so the result does not
//!   depend on the order the keys came in). [`finish_into`] scatters into the output;
//!   [`Spilled`] scatters keys that wait in the output into idle memory the caller lends,
//!   then writes each sorted bucket back.

use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Pairs a bucket of the MSD pass aims at: a bucket and its copy stay in a core's L2.
/// PERF: at 11.2M pairs (1M varied 3D, 1 thread) 512 pairs a bucket (2^15 buckets, a
/// scatter that misses the TLB) took 210-225 ms, 16k-64k pairs 160-168 ms.
const PAIRS_PER_BUCKET: usize = 32768;
/// First indices a bucket aims at, so that the counting sort's cursors stay in L1 (sized
/// by pairs alone, 0.87M pairs at 1M uniform 3D made 32 buckets of 32k indices, with
/// 128 KiB cursor arrays). PERF: no change of the pair stage was measurable either way.
const IDS_PER_BUCKET: usize = 4096;
/// Pairs a bucket holds at the least where buckets are added for the threads' sake (eight
/// a thread): each costs every part a cursor and its sort a clear of its counters.
/// PERF: 10k clustered 3D boxes (49,888 pairs) on 16 threads (2 cores) took 0.43-0.50
/// ms in the pair stage with 128 buckets and 64 sort jobs, 0.27 on 2 threads; 0.34 with
/// this bound and [`MIN_PAIRS_PER_JOB`].
const MIN_PAIRS_PER_BUCKET: usize = 1024;
/// Pairs a job of the bucket sorts holds at the least (where the buckets hold them).
const MIN_PAIRS_PER_JOB: usize = 4096;
/// At most this many buckets: the MSD scatter writes to each at once.
const MAX_BUCKET_BITS: u32 = 10;
/// [`Spilled`] makes at least this many buckets a spare slice.
const SPARE_FIT: usize = 32;
/// Fewer keys than this are sorted by `sort_unstable` in one piece.
const SMALL: usize = 4096;

/// The pair key of boxes `a != b` (order-free).
#[inline(always)]
pub(crate) fn key(a: u32, b: u32) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    (lo as u64) << 32 | hi as u64
}

/// The key whose bit pattern slot `s` holds (`bytemuck::cast`, as `bytemuck::cast_slice`
/// puts keys in slots; not the pair `[i, j]`: see [`split`]).
#[inline(always)]
fn unslot(s: [u32; 2]) -> u64 {
    bytemuck::cast(s)
}

/// The pair `[i, j]` of key `k`.
#[inline(always)]
fn split(k: u64) -> [u32; 2] {
    [(k >> 32) as u32, k as u32]
}

/// Concatenates `parts`, sorts, checks, and returns the pairs.
pub(crate) fn finish(parts: Vec<Vec<u64>>, n_ids: usize) -> Vec<[u32; 2]> {
    let mut out = Vec::new();
    let parts: Vec<Vec<&[[u32; 2]]>> = parts.iter().map(|p| vec![bytemuck::cast_slice(p)]).collect();
    finish_into(&parts, n_ids, &mut out);
    out
}

/// The MSD pass's buckets: bucket `b` holds the pairs whose first index has the high bits
/// `b` (`i >> (shift - 32) == b`), at `starts[b]..starts[b + 1]` of the sorted output.
struct Buckets {
    shift: u32,
    starts: Vec<usize>,
    /// `offs[part][b]`: that part's first slot in bucket `b`, counted from `starts[b]`.
    offs: Vec<Vec<usize>>,
}

/// The bits of a first index and of the bucket number for `total` keys of `n_ids` boxes:
/// enough buckets to keep every thread busy, few enough to stay in L2 and the
/// TLB, at least `min` if the indices allow.
fn bucket_bits(total: usize, n_ids: usize, min: usize) -> (u32, u32) {
    let max_i = n_ids.saturating_sub(1) as u64;
    let ibits = u64::BITS - max_i.leading_zeros();
    let want = (total / PAIRS_PER_BUCKET)
        .max((max_i as usize + 1) / IDS_PER_BUCKET)
        .max((8 * rayon::current_num_threads()).min(total / MIN_PAIRS_PER_BUCKET))
        .max(min);
    let bbits = (usize::BITS - want.leading_zeros()).min(MAX_BUCKET_BITS).min(ibits);
    (ibits, bbits)
}

/// The buckets a sweep chunk counts its keys in, for keys of `n_ids` boxes: their bits and
/// the shift that takes a key (`i << 32 | j`) to its bucket. A bucket count the MSD pass
/// picks that is a power of two no greater has counts that are sums of these; a greater one
/// counts the keys again ([`Buckets::count_from`]). At most a 64th of the boxes: a chunk's
/// counters are working memory (4 KiB of them made 3D mixed 10k take 129.4 bytes a box
/// in a pool of 16 threads, over the 128 the crate promises).
pub(crate) fn fine_buckets(n_ids: usize) -> (u32, u32) {
    let ibits = u64::BITS - (n_ids.saturating_sub(1) as u64).leading_zeros();
    let fbits = MAX_BUCKET_BITS.min(ibits).min((n_ids / 64).max(1).ilog2());
    (fbits, 32 + ibits - fbits)
}

impl Buckets {
    /// Counts the keys of every part (a list of slices, counted and scattered by one task)
    /// into buckets, at least `min` if the indices allow. `total` keys, every index below
    /// `n_ids` (no pass over the keys).
    fn count(parts: &[Vec<&[[u32; 2]]>], total: usize, n_ids: usize, min: usize) -> Self {
        let (ibits, bbits) = bucket_bits(total, n_ids, min);
        let shift = 32 + ibits - bbits;
        let nb = 1usize << bbits;
        let hists: Vec<Vec<u32>> = parts
            .par_iter()
            .map(|p| {
                crate::isa::fast(
                    #[inline(always)]
                    || {
                        let mut h = vec![0u32; nb];
                        for &s in p.iter().flat_map(|s| s.iter()) {
                            h[(unslot(s) >> shift) as usize] += 1;
                        }
                        h
                    },
                )
            })
            .collect();
        Self::from_hists(&hists, shift)
    }

    /// As [`Buckets::count`], from each part's counts by fine bucket
    /// ([`fine_buckets`]), taken where the keys were made: no pass over the keys.
    /// `None` where the pass wants more buckets than were counted (a scene with many pairs
    /// a box).
    fn count_from(fine: &[Vec<u32>], total: usize, n_ids: usize, min: usize) -> Option<Self> {
        let (ibits, bbits) = bucket_bits(total, n_ids, min);
        let (fbits, _) = fine_buckets(n_ids);
        if bbits > fbits {
            return None;
        }
        let per = 1usize << (fbits - bbits);
        let hists: Vec<Vec<u32>> =
            fine.iter().map(|f| f.chunks(per).map(|c| c.iter().sum()).collect()).collect();
        Some(Self::from_hists(&hists, 32 + ibits - bbits))
    }

    /// The buckets' starts and each part's offsets in them, from the parts' counts.
    fn from_hists(hists: &[Vec<u32>], shift: u32) -> Self {
        let nb = hists.first().map_or(1, |h| h.len());
        let mut starts = Vec::with_capacity(nb + 1);
        let mut offs = vec![vec![0usize; nb]; hists.len()];
        let mut run = 0usize;
        for b in 0..nb {
            starts.push(run);
            for (pi, h) in hists.iter().enumerate() {
                offs[pi][b] = run - starts[b];
                run += h[b] as usize;
            }
        }
        starts.push(run);
        Self { shift, starts, offs }
    }

    fn len(&self, b: usize) -> usize {
        self.starts[b + 1] - self.starts[b]
    }

    /// First indices a bucket spans.
    fn width(&self) -> u32 {
        1 << (self.shift - 32)
    }

    /// Writes every key of `parts`, as `slot(key)`, into its bucket: bucket `b` starts at
    /// `base[b]`.
    ///
    /// # Safety
    /// `base[b]` is valid for writes of `self.len(b)` slots, and the buckets' ranges are
    /// disjoint.
    unsafe fn scatter<T: Copy>(
        &self,
        parts: &[Vec<&[[u32; 2]]>],
        base: &[SendPtr<T>],
        slot: impl Fn(u64) -> T + Sync,
    ) {
        let shift = self.shift;
        parts.par_iter().zip(self.offs.par_iter()).for_each(|(p, off)| {
            crate::isa::fast(
                #[inline(always)]
                || {
                    // SAFETY: `off[b]` is this part's first slot in bucket `b` (inside it).
                    let mut at: Vec<SendPtr<T>> =
                        base.iter().zip(off).map(|(b, &o)| SendPtr(unsafe { b.0.add(o) })).collect();
                    for &s in p.iter().flat_map(|s| s.iter()) {
                        let k = unslot(s);
                        let d = &mut at[(k >> shift) as usize];
                        // SAFETY: each part owns the disjoint slots off[b]..off[b] + (its count
                        // in b) of bucket b (the prefix over the histograms), and `d` stays
                        // inside them.
                        unsafe {
                            d.0.write(slot(k));
                            d.0 = d.0.add(1);
                        }
                    }
                },
            )
        });
    }

    /// Sorts every bucket where it lies (`bks[b]`, of `self.len(b)` pairs), and copies it
    /// to `dst[b]` if given. Consecutive buckets go in a few groups a thread, each with its
    /// own scratch: rayon's `for_each_init` makes a fresh one per split job, and a fresh
    /// buffer of a bucket's size is mapped and faulted in anew each time. The groups hold
    /// about equal numbers of pairs, not of buckets, and each is a job of its own: the
    /// first index is the smaller one, so the pairs thin out from the first bucket to the
    /// last (and the buckets past the last index are empty). PERF: with equal numbers of
    /// buckets, 10k clustered 3D boxes at 2 threads had one thread sort 96% of the pairs
    /// (rayon splits a range once per thread and again only when a job is stolen), and the
    /// bucket sorts took longer than at 1 thread.
    fn sort<B: Bucket>(&self, bks: Vec<B>, dst: Vec<&mut [MaybeUninit<[u32; 2]>]>) {
        let total = *self.starts.last().unwrap_or(&0);
        let w = self.width();
        let want = 4 * rayon::current_num_threads();
        let target = total.div_ceil(want).max(MIN_PAIRS_PER_JOB);
        type Job<'b, B> = (usize, Vec<(B, Option<&'b mut [MaybeUninit<[u32; 2]>]>)>);
        let mut groups: Vec<Job<'_, B>> = Vec::with_capacity(want + 1);
        let mut dst = dst.into_iter();
        let (mut group, mut first, mut pairs) = (Vec::new(), 0, 0);
        let nb = bks.len();
        for (b, bk) in bks.into_iter().enumerate() {
            pairs += bk.len();
            group.push((bk, dst.next()));
            if pairs >= target || b + 1 == nb {
                groups.push((first, std::mem::take(&mut group)));
                (first, pairs) = (b + 1, 0);
            }
        }
        groups.into_par_iter().with_max_len(1).for_each(|(g0, group)| {
            crate::isa::fast(
                #[inline(always)]
                || {
                    let (mut tmp, mut hist, mut tmp32) = (Vec::new(), Vec::new(), Vec::new());
                    for (k, (bk, to)) in group.into_iter().enumerate() {
                        let i0 = ((g0 + k) as u64 * w as u64) as u32;
                        bk.sort_into(i0, w, (&mut tmp, &mut hist, &mut tmp32), to);
                    }
                },
            )
        });
    }
}

/// Per-task scratch of the bucket sorts: the radix sort's other buffer for pairs, its
/// counters, and the sparse sort's buffer for packed keys (a packed bucket's radix sort
/// takes the bucket's place in the output, see [`Packed`]'s `sort_into`).
type Scratch<'a> = (&'a mut Vec<[u32; 2]>, &'a mut Vec<u32>, &'a mut Vec<u32>);

/// A bucket of the MSD pass, as it lies in memory: pairs `[i, j]`, or packed in a `u32`.
trait Bucket: Send {
    fn len(&self) -> usize;
    /// Sorts the bucket (first indices `i0..i0 + w`) and copies it to `to` if given (else it
    /// is left sorted where it lies; packed buckets always have a `to`).
    fn sort_into(self, i0: u32, w: u32, s: Scratch<'_>, to: Option<&mut [MaybeUninit<[u32; 2]>]>);
}

/// Copies sorted pairs into their place in the output.
/// PERF: a copy after the sort, in cache, not a last radix pass into the output: that
/// pass's scattered writes to memory not in cache made the pair stage slower (3D varied
/// 1M, 2 threads: 81-83 ms, 68-71 with the copy).
#[inline(always)]
fn copy_out(to: &mut [MaybeUninit<[u32; 2]>], from: &[[u32; 2]]) {
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
struct Packed<'a> {
    keys: &'a mut [u32],
    jbits: u32,
}

impl Bucket for Packed<'_> {
    fn len(&self) -> usize {
        self.keys.len()
    }

    /// The bucket's place in the output is the radix sort's other buffer: it has room for
    /// two keys a pair. Where the sorted keys end there, each widens to its pair in place,
    /// last first. PERF (memory): a buffer of a bucket's size a sort job took 8-20 KB a
    /// job, 16 jobs at once on 16 cores (3D varied 10k: 141 bytes a box there).
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
        let mask = low_bits(jb);
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
/// (k & low_bits(jb))]`, and where the sorted keys lie: `keys`, or (`true`) the first
/// `keys.len()` of `other` (at least that long; the radix sort's other buffer). `tmp` is
/// the sparse sort's.
///
/// A bucket of under two pairs a first index goes to [`sort_sparse`] (the counters of the
/// radix digits would outnumber its pairs); a bigger one is sorted by [`lsd`] on the key
/// `(i - i0) << jb | (j - i0)`, with `jb` as narrow as the widest partner allows (a
/// spatially ordered input, as a terrain, has its partners near: one digit less).
/// PERF: the generic [`sort_bucket`] (a pass for the disorder, digits as many as keep the
/// counters below the pairs, a loop over the digits per key) took 10-11 ns a pair on
/// buckets of 2,350 pairs of 256 first indices (10k clustered 3D boxes); two fixed 11-bit
/// digits took 4.6.
fn sort_packed(
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
    let mask = low_bits(jbits);
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

/// Pairs a first index below which [`sort_packed`] takes [`sort_sparse`]. PERF: buckets of
/// 256 first indices at random (microbenchmark): 300 pairs 4.4 ns a pair sparse against 6.8
/// in two digits, 780 pairs 7.2 against 4.1.
const SPARSE_PACKED: usize = 2;

/// Pairs a first index below which [`sort_packed`] takes [`sort_sparse`] for a bucket whose
/// partners come nearly in order.
const ORDERED_PACKED: usize = 12;

/// Stable LSD radix sort of `keys` on their low `width <= 11 P` bits, in `P` equal digits:
/// one pass counts every digit, then a pass a digit that is not the same for every key.
/// The passes go back and forth between `keys` and `tmp` (at least as long); returns `true`
/// where the sorted keys end in `tmp` (its first `keys.len()`, all written then), for the
/// caller to read them there: a copy back was a pass more (three digits end in `tmp`).
/// PERF: `radix_sort::sort_slices` in its place (a count pass a digit, per-pass buffers)
/// made the pair stage slower: 3D varied 100k 5.51-5.59 -> 7.08-7.22 ms, 10k 0.45-0.46 ->
/// 0.54-0.55, tiles 100k 8.44-8.47 -> 9.63-9.75 (demo, 2 threads, alternated).
#[inline(always)]
fn lsd<const P: usize>(
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
        *d = (shift, low_bits(bits), at);
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

/// `2^bits - 1` for `bits <= 32`.
#[inline(always)]
fn low_bits(bits: u32) -> u32 {
    ((1u64 << bits) - 1) as u32
}

/// The bits of a partner index, when the keys of `n_ids` boxes can wait in the MSD buckets
/// packed in 32 bits (`(i - i0) << jbits | j`: a bucket's first indices take at most
/// `32 - jbits` bits): up to 2^21 boxes, with at least `2^(2 jbits - 32)` buckets
/// ([`packed_min_buckets`]). Half the idle memory a key: a 3D tiled level of 1M boxes
/// (17.6 pairs a box) needed a buffer of its own beside the idle rows and entries.
pub(crate) fn packed_bits(n_ids: usize) -> Option<u32> {
    let jbits = usize::BITS - n_ids.saturating_sub(1).leading_zeros();
    (jbits <= 21).then_some(jbits)
}

/// The fewest buckets that make a bucket's first indices fit beside `jbits` in 32 bits.
fn packed_min_buckets(jbits: u32) -> usize {
    1 << (2 * jbits).saturating_sub(32)
}

/// [`finish`] writing into `out` (cleared first). Each part is a list of slices of key
/// slots ([`unslot`]; a sweep chunk's keys), counted and scattered by one task.
///
/// One MSD pass scatters the keys, as `[i, j]`, straight into `out`, bucketed by the high
/// bits of `i` (about [`IDS_PER_BUCKET`] first indices and at most about
/// [`PAIRS_PER_BUCKET`] pairs a bucket); then each bucket is sorted where it lies, in
/// cache, in parallel. The output is the only pair buffer besides the parts.
/// PERF: against a full LSD radix sort of the keys (5 to 6 passes plus a conversion),
/// measured in `docs/BENCHMARKS.md`.
pub(crate) fn finish_into(parts: &[Vec<&[[u32; 2]]>], n_ids: usize, out: &mut Vec<[u32; 2]>) {
    let total: usize = parts.iter().flatten().map(|p| p.len()).sum();
    out.clear();
    if total < SMALL {
        out.extend(parts.iter().flatten().flat_map(|p| p.iter()).map(|&s| split(unslot(s))));
        out.sort_unstable();
    } else {
        let bk = Buckets::count(parts, total, n_ids, 0);
        // PERF: no zero fill; the scatter writes every slot (a pass of 90 MB at 1M varied
        // 3D boxes saved).
        if out.capacity() < total {
            // A fresh allocation: growing would copy the old contents first.
            *out = Vec::new();
        }
        out.reserve_exact(total);
        let base: Vec<SendPtr<[u32; 2]>> = bk.starts[..bk.starts.len() - 1]
            .iter()
            // SAFETY: starts[b] <= total <= capacity.
            .map(|&s| SendPtr(unsafe { out.as_mut_ptr().add(s) }))
            .collect();
        // SAFETY: bucket b is out[starts[b]..starts[b + 1]], inside the capacity.
        unsafe { bk.scatter(parts, &base, split) };
        // SAFETY: the parts' slot ranges partition 0..total (the prefix over the
        // histograms), so the scatter initialised every slot below `total <= capacity`.
        unsafe { out.set_len(total) };
        let mut bks = Vec::with_capacity(bk.starts.len() - 1);
        let mut rest = &mut out[..];
        for b in 0..bk.starts.len() - 1 {
            let (head, tail) = rest.split_at_mut(bk.len(b));
            bks.push(head);
            rest = tail;
        }
        bk.sort(bks, Vec::new());
    }
    debug_assert!(validate(out), "pairs not unique and increasing");
}

/// Keys sorted outside the output, for keys that wait in the output vector itself (the
/// cell sweep spills them there): [`Spilled::scatter`] moves every key into idle memory
/// the caller lends (and an allocation for what that lacks), after which the output's
/// contents are dead; [`Spilled::write`] sorts each bucket there and writes it into the
/// output. PERF (memory): the keys never take memory of their own beside the output; at
/// 1M varied 3D boxes (11 pairs a box) they were 71 bytes a box.
pub(crate) struct Spilled<'s> {
    /// Few keys: sorted here.
    small: Vec<[u32; 2]>,
    buckets: Option<Buckets>,
    /// The buckets, once scattered.
    bks: Kind<'s>,
}

/// How [`Spilled`]'s buckets hold their keys.
enum Kind<'s> {
    /// As pairs `[i, j]`.
    Wide(Vec<&'s mut [[u32; 2]]>),
    /// Packed in 32 bits ([`packed_bits`]).
    Packed(Vec<Packed<'s>>),
}

/// Places buckets `0..nb` of lengths `len(b)` whole in the slices of `spare`, first fit;
/// `None` for those no slice holds, and their total length.
fn first_fit<T>(
    nb: usize,
    len: impl Fn(usize) -> usize,
    spare: Vec<&mut [T]>,
) -> (Vec<Option<&mut [T]>>, usize) {
    let mut rem = spare;
    let mut bks = Vec::with_capacity(nb);
    let mut short = 0;
    for b in 0..nb {
        let l = len(b);
        match rem.iter_mut().find(|r| r.len() >= l) {
            Some(r) => {
                let (head, tail) = std::mem::take(r).split_at_mut(l);
                *r = tail;
                bks.push(Some(head));
            }
            None => {
                bks.push(None);
                short += l;
            }
        }
    }
    (bks, short)
}

/// The buckets of [`first_fit`], those it left out carved in order from `rest`.
fn fill_in<'s, T>(
    bks: Vec<Option<&'s mut [T]>>,
    len: impl Fn(usize) -> usize,
    mut rest: &'s mut [T],
) -> Vec<&'s mut [T]> {
    bks.into_iter()
        .enumerate()
        .map(|(b, s)| {
            s.unwrap_or_else(|| {
                let (head, tail) = std::mem::take(&mut rest).split_at_mut(len(b));
                rest = tail;
                head
            })
        })
        .collect()
}

impl<'s> Spilled<'s> {
    /// Scatters the keys of `parts` (lists of key slot slices, as for [`finish_into`]) into
    /// `spare`, whole buckets first fit, and the buckets no spare slice holds into `extra`
    /// (grown if short, never shrunk or cleared: a kept buffer is not zeroed anew). Up to
    /// 2^21 boxes the keys wait packed in 32 bits ([`packed_bits`]): the room is twice the
    /// slots, and the scatter and the bucket sorts move half the bytes.
    pub(crate) fn scatter(
        parts: &[Vec<&[[u32; 2]]>],
        fine: Option<&[Vec<u32>]>,
        n_ids: usize,
        spare: Vec<&'s mut [[u32; 2]]>,
        extra: &'s mut Vec<[u32; 2]>,
    ) -> Self {
        let total: usize = parts.iter().flatten().map(|p| p.len()).sum();
        if total < SMALL {
            let mut small: Vec<[u32; 2]> =
                parts.iter().flatten().flat_map(|p| p.iter()).map(|&s| split(unslot(s))).collect();
            small.sort_unstable();
            return Self { small, buckets: None, bks: Kind::Wide(Vec::new()) };
        }
        // Buckets small beside the spare slices: each slice wastes at most one bucket's
        // room (and first fit packs the rest). Not tiny: each part counts every bucket.
        let packed = packed_bits(n_ids);
        let min = (SPARE_FIT * spare.len()).min(total / 1024).max(packed.map_or(0, packed_min_buckets));
        let bk = match fine.and_then(|f| Buckets::count_from(f, total, n_ids, min)) {
            Some(bk) => bk,
            None => Buckets::count(parts, total, n_ids, min),
        };
        let wbits = bk.shift - 32;
        let nb = bk.starts.len() - 1;
        let len = |b: usize| bk.len(b);
        let bks = match packed.filter(|&j| wbits + j <= 32) {
            Some(jbits) => {
                let spare: Vec<&'s mut [u32]> = spare.into_iter().map(bytemuck::cast_slice_mut).collect();
                let (fit, short) = first_fit(nb, len, spare);
                let need = short.div_ceil(2);
                if extra.len() < need {
                    extra.resize(need, [0; 2]);
                }
                let rest: &'s mut [u32] = bytemuck::cast_slice_mut(&mut extra[..need]);
                let mut bks = fill_in(fit, len, &mut rest[..short]);
                let base: Vec<SendPtr<u32>> = bks.iter_mut().map(|s| SendPtr(s.as_mut_ptr())).collect();
                let wmask = low_bits(wbits);
                // SAFETY: bucket b's slice has bk.len(b) slots and the slices are disjoint
                // (carved from disjoint borrows); it is not read through `bks` until the
                // scatter is done.
                unsafe { bk.scatter(parts, &base, move |k| ((k >> 32) as u32 & wmask) << jbits | k as u32) };
                Kind::Packed(bks.into_iter().map(|keys| Packed { keys, jbits }).collect())
            }
            None => {
                let (fit, short) = first_fit(nb, len, spare);
                if extra.len() < short {
                    extra.resize(short, [0; 2]);
                }
                let mut bks = fill_in(fit, len, &mut extra[..short]);
                let base: Vec<SendPtr<[u32; 2]>> = bks.iter_mut().map(|s| SendPtr(s.as_mut_ptr())).collect();
                // SAFETY: as above.
                unsafe { bk.scatter(parts, &base, split) };
                Kind::Wide(bks)
            }
        };
        Self { small: Vec::new(), buckets: Some(bk), bks }
    }

    /// Sorts the keys and writes them into `out` (cleared first): every pair `[i, j]`,
    /// ascending.
    pub(crate) fn write(self, out: &mut Vec<[u32; 2]>) {
        out.clear();
        match self.buckets {
            None => out.extend_from_slice(&self.small),
            Some(bk) => {
                let total = *bk.starts.last().unwrap_or(&0);
                if out.capacity() < total {
                    // A fresh allocation: growing would copy the dead keys first.
                    *out = Vec::new();
                    out.reserve_exact(total);
                }
                let nb = bk.starts.len() - 1;
                let mut dst = Vec::with_capacity(nb);
                let mut rest = &mut out.spare_capacity_mut()[..total];
                for b in 0..nb {
                    let (head, tail) = std::mem::take(&mut rest).split_at_mut(bk.len(b));
                    dst.push(head);
                    rest = tail;
                }
                match self.bks {
                    Kind::Wide(bks) => bk.sort(bks, dst),
                    Kind::Packed(bks) => bk.sort(bks, dst),
                }
                // SAFETY: the buckets' destinations partition out[..total], and `sort`
                // wrote every pair of every bucket there.
                unsafe { out.set_len(total) };
            }
        }
        debug_assert!(validate(out), "pairs not unique and increasing");
    }
}

/// A pair as a bucket holds it: `[i, j]`, or packed in a `u32` (`(i - i0) << jbits | j`,
/// see [`packed_bits`]). Either way the order of the values is the pairs' order.
trait Slot: Copy + Ord + Default + Send {
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
        (self >> jbits, self & low_bits(jbits))
    }
}

/// The widest digit of [`sort_bucket`]: 2^11 four-byte counters stay in L1.
const BUCKET_DIGIT: u32 = 11;

/// Sorts `bk`, pairs `[i, j]` with `i0 <= i < i0 + w` and `i < j`, ascending: a stable
/// LSD radix sort of the key `(i - i0) << jb | (j - i0)` (`jb` bits hold the widest
/// `j - i0`), in as few digits of at most [`BUCKET_DIGIT`] bits as the key needs, using
/// `tmp` as the other buffer and `hist` for the counts. One pass counts every digit; a
/// digit that is the same for every pair moves nothing.
#[inline(always)]
fn sort_bucket<T: Slot>(bk: &mut [T], i0: u32, w: u32, jbits: u32, tmp: &mut Vec<T>, hist: &mut Vec<u32>) {
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
    // unless the bucket has far fewer pairs than first indices. PERF: this test came after
    // the one below, so buckets of under 6,144 pairs (three digits of counters) took
    // `sort_unstable`: at 1M uniform boxes (0.7-0.9 pairs an index, 2,800-3,400 pairs a
    // bucket) the bucket sorts took 15-18 ms, now 7.3-7.9 (2D) and 9.1-13.7 (3D), 1 thread.
    if (bk.len() < SPARSE * w as usize || descents * ORDERED < bk.len()) && bk.len() * 4 >= w as usize {
        return sort_sparse(bk, i0, w, jbits, tmp, hist);
    }
    // (shift, width) of each digit of the key, least significant first. PERF: digits cut
    // from the two fields apart took four passes where three do: 3D terrain 1M (13 + 12
    // bits) had a pair stage of 96-99 ms, against 54-56 before the radix sort.
    // As few digits of at most BUCKET_DIGIT bits as the key needs, then one more while
    // the counters outnumber the pairs. PERF: with two digits of 11 bits (4,096 counters),
    // buckets of 2,000-4,000 pairs fell through to `sort_unstable` below, at 35-40 ns a
    // pair against 14 for three passes (10k clustered 3D boxes, 32 buckets at 2 threads).
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

/// Pairs a first index has on average below which [`sort_sparse`] sorts a bucket. PERF: on
/// a 1M-triangle 2D terrain (one pair a box, so a bucket of 4096 indices holds about 4000
/// pairs), radix passes for every bucket, together with `sap::scan` no longer inlined,
/// took the frame from 30.5-33.4 to 42-52 ms (1 thread); with this and the inlining,
/// 31.1-32.9 ms, and 4% fewer instructions than before either (callgrind).
const SPARSE: usize = 4;

/// A bucket with fewer than one descent (a partner below the one before it, same first
/// index) in this many pairs is sorted by [`sort_sparse`]. PERF: 3D terrain 1M (ids in grid
/// order, about 8 partners an index) had a pair stage of 54-75 ms that way, 87-89 ms by
/// radix passes; 3D varied 1M (ids at random, 11 partners) 152-158 ms against 116-134.
const ORDERED: usize = 4;

/// Sorts a bucket whose first indices have few partners each, or whose partners are nearly
/// in order: a counting sort by the first index, then each index's partners by a
/// comparison sort (an insertion sort for few: cheap when they are nearly in order).
fn sort_sparse<T: Slot>(bk: &mut [T], i0: u32, w: u32, jbits: u32, tmp: &mut Vec<T>, hist: &mut Vec<u32>) {
    let w = w as usize;
    hist.clear();
    hist.resize(2 * (w + 1), 0);
    let (count, at) = hist.split_at_mut(w + 1);
    for p in bk.iter() {
        count[p.ij(i0, jbits).0 as usize + 1] += 1;
    }
    // PERF: the running sum in a register; `count[i + 1] += count[i]` carried it through
    // memory, a store-to-load forward an index (perf at 1M uniform 2D boxes: 8.4% of the
    // bucket sort's samples on that one instruction).
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
/// PERF: `sort_unstable_by_key` on a run of two or three pairs (a call and its checks) took
/// the bucket sorts of 3D mixed 10k (29k pairs, 2.6 an index) to 13.5 ns a pair; an
/// insertion sort inline for up to 16 made 10k clustered slower (its exits mispredict
/// where partners come in random order; the standard sort's small sort does not branch).
#[inline(always)]
fn exchange<T: Copy, K: Ord>(v: &mut [T], a: usize, b: usize, key: impl Fn(&T) -> K) {
    let (x, y) = (v[a], v[b]);
    let swap = key(&y) < key(&x);
    v[a] = if swap { y } else { x };
    v[b] = if swap { x } else { y };
}

/// A raw pointer for the disjoint parallel scatter.
struct SendPtr<T>(*mut T);
impl<T> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SendPtr<T> {}
// SAFETY: only used to write disjoint slots from different tasks (see finish_into).
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

/// INVARIANT check: pairs strictly increasing (sorted, unique) and `i < j` in every pair.
pub(crate) fn validate(pairs: &[[u32; 2]]) -> bool {
    pairs.windows(2).all(|w| w[0] < w[1]) && pairs.iter().all(|p| p[0] < p[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unique random pairs, some first indices with thousands of partners (a mesh's fan),
    /// some with near partners only (a spatially ordered input), split into uneven parts:
    /// `finish` must return them sorted, as a plain sort does. The larger cases have
    /// buckets big enough for the radix sort (`sort_bucket`), the smaller ones not.
    #[test]
    fn finish_sorts_like_sort_unstable() {
        let mut r = crate::scene::Rng::new(11);
        // (ids, fans, pairs, partners within `near` ids of each other, or anywhere: 0).
        for &(n, fans, len, near) in &[
            (5_000u32, 0usize, 40_000, 0usize),
            (50_000, 3, 40_000, 0),
            (300_000, 20, 40_000, 0),
            (20_000, 2, 400_000, 0),
            (200_000, 0, 400_000, 500),
        ] {
            let mut keys: Vec<u64> = (0..len)
                .map(|_| {
                    let a = r.below(n as usize) as u32;
                    let b = if near == 0 {
                        r.below(n as usize) as u32
                    } else {
                        (a as usize + r.below(near)).min(n as usize - 1) as u32
                    };
                    if a == b {
                        key(a, (b + 1) % n)
                    } else {
                        key(a, b)
                    }
                })
                .collect();
            for f in 0..fans {
                let i = r.below(n as usize / 2) as u32;
                let len = 300 + 500 * f;
                keys.extend((0..len).map(|_| key(i, i + 1 + r.below((n - i - 1) as usize) as u32)));
            }
            keys.sort_unstable();
            keys.dedup();
            let want: Vec<[u32; 2]> = keys.iter().map(|&k| [(k >> 32) as u32, k as u32]).collect();
            // Shuffle, then cut into uneven parts.
            for i in (1..keys.len()).rev() {
                keys.swap(i, r.below(i + 1));
            }
            let mut parts = Vec::new();
            let mut rest = &keys[..];
            while !rest.is_empty() {
                let (head, tail) = rest.split_at(r.below(rest.len() + 1).max(1).min(rest.len()));
                parts.push(head.to_vec());
                rest = tail;
            }
            // The same parts in groups of up to three slices (a sweep chunk's scratch share
            // and its spill blocks), some empty.
            let mut groups: Vec<Vec<&[u64]>> = Vec::new();
            for (k, p) in parts.iter().enumerate() {
                if k % 3 == 0 {
                    groups.push(vec![&[]]);
                }
                groups.last_mut().unwrap().push(p);
            }
            let groups: Vec<Vec<&[[u32; 2]]>> =
                groups.iter().map(|g| g.iter().map(|s| bytemuck::cast_slice(s)).collect()).collect();
            let mut grouped = vec![[7, 7]; 3];
            finish_into(&groups, n as usize, &mut grouped);
            assert_eq!(grouped, want, "grouped: n={n} fans={fans} len={len}");
            // The same keys sorted through lent memory: none, too little (the rest in
            // `extra`), and plenty in uneven pieces (some smaller than any bucket), the
            // output holding stale pairs before.
            let total = keys.len();
            for &(pieces, share) in &[(0usize, 0usize), (1, total / 2), (40, 3 * total / 2)] {
                let mut lent: Vec<Vec<[u32; 2]>> =
                    (0..pieces).map(|k| vec![[u32::MAX; 2]; (share / pieces.max(1)) >> (k % 5)]).collect();
                let spare: Vec<&mut [[u32; 2]]> = lent.iter_mut().map(|v| v.as_mut_slice()).collect();
                let lent_len: usize = spare.iter().map(|s| s.len()).sum();
                let mut extra = vec![[1, 1]; 5];
                let mut got = vec![[9, 9]; 11];
                Spilled::scatter(&groups, None, n as usize, spare, &mut extra).write(&mut got);
                assert_eq!(got, want, "spilled: n={n} fans={fans} len={len} pieces={pieces}");
                // Keys packed in 32 bits take half a slot.
                let f = if packed_bits(n as usize).is_some() { 2 } else { 1 };
                assert!(f * (extra.len() + lent_len) >= total && (pieces > 0 || f * extra.len() >= total));
                // The same with each group's counts by fine bucket given, as the sweep
                // takes them.
                let (_, shift) = fine_buckets(n as usize);
                let fine: Vec<Vec<u32>> = groups
                    .iter()
                    .map(|g| {
                        let mut h = vec![0u32; 1 << fine_buckets(n as usize).0];
                        for &s in g.iter().flat_map(|s| s.iter()) {
                            h[(unslot(s) >> shift) as usize] += 1;
                        }
                        h
                    })
                    .collect();
                let mut lent: Vec<Vec<[u32; 2]>> =
                    (0..pieces).map(|k| vec![[u32::MAX; 2]; (share / pieces.max(1)) >> (k % 5)]).collect();
                let spare: Vec<&mut [[u32; 2]]> = lent.iter_mut().map(|v| v.as_mut_slice()).collect();
                let mut got = vec![[9, 9]; 11];
                Spilled::scatter(&groups, Some(&fine), n as usize, spare, &mut extra).write(&mut got);
                assert_eq!(got, want, "counted: n={n} fans={fans} len={len} pieces={pieces}");
            }
            assert_eq!(finish(parts, n as usize), want, "n={n} fans={fans} len={len}");
        }
    }

    /// Keys pack in 32 bits up to 2^21 boxes: with the fewest buckets packing asks for, a
    /// bucket's first indices and a partner index fit side by side, to the last bit,
    /// whatever the pair count (and whatever `IDS_PER_BUCKET` asks for besides).
    #[test]
    fn packed_keys_fit_in_32_bits() {
        for n in [2usize, 3, 1000, 1 << 16, (1 << 16) + 1, 300_000, 1 << 20, (1 << 21) - 1, 1 << 21] {
            let jbits = packed_bits(n).expect("packable");
            assert!(n - 1 <= low_bits(jbits) as usize, "n={n}");
            for total in [0, 5000, 1 << 24] {
                let bk = Buckets::count(&[], total, n, packed_min_buckets(jbits));
                assert!(bk.shift - 32 + jbits <= 32, "n={n} total={total}: {} + {jbits} bits", bk.shift - 32);
            }
        }
        assert_eq!(packed_bits((1 << 21) + 1), None);
        assert_eq!(packed_bits(5_000_000), None);
    }

    /// A bucket whose widest partner offset is a power of two (the key width's edge), one
    /// whose partners are all near (one digit), and one whose first index is constant.
    /// Sorts `bk` (first indices `i0..i0 + w`) as pairs and, where the indices fit, packed in
    /// 32 bits, and checks both against `want`.
    fn sort_both(bk: &[[u32; 2]], i0: u32, w: u32, want: &[[u32; 2]], what: &str) {
        let (mut tmp, mut hist, mut tmp32) = (Vec::new(), Vec::new(), Vec::new());
        let mut wide = bk.to_vec();
        sort_bucket(&mut wide, i0, w, 0, &mut tmp, &mut hist);
        assert_eq!(wide, want, "{what}: pairs");
        let jbits = 32 - bk.iter().map(|p| p[1]).max().unwrap_or(0).leading_zeros();
        if 32 - (w - 1).leading_zeros() + jbits > 32 {
            return;
        }
        let mut packed: Vec<u32> = bk.iter().map(|p| (p[0] - i0) << jbits | p[1]).collect();
        let n = packed.len();
        // Through the output's place, as the pair stage sorts (the keys widen in place
        // where the radix sort ends there).
        let mut back: Vec<[u32; 2]> = Vec::with_capacity(n);
        let bucket = Packed { keys: &mut packed, jbits };
        bucket.sort_into(i0, w, (&mut tmp, &mut hist, &mut tmp32), Some(&mut back.spare_capacity_mut()[..n]));
        // SAFETY: `sort_into` wrote all `n` pairs.
        unsafe { back.set_len(n) };
        assert_eq!(back, want, "{what}: packed");
    }

    /// Fisher-Yates.
    fn shuffle(v: &mut [[u32; 2]], r: &mut crate::scene::Rng) {
        for k in (1..v.len()).rev() {
            v.swap(k, r.below(k + 1));
        }
    }

    /// Sorts and dedups `bk`, returns that order, and leaves `bk` shuffled.
    fn sorted_then_shuffled(bk: &mut Vec<[u32; 2]>, r: &mut crate::scene::Rng) -> Vec<[u32; 2]> {
        bk.sort_unstable();
        bk.dedup();
        let want = bk.clone();
        shuffle(bk, r);
        want
    }

    /// The counting sort for few partners an index ([`sort_sparse`]), wide and packed: runs
    /// of zero to six partners an index (two and three take the exchanges), every order of
    /// each short run, partners equal to their neighbours' but for one bit.
    #[test]
    fn sparse_sort_orders_short_runs() {
        let mut r = crate::scene::Rng::new(17);
        let (i0, w) = (64u32, 64u32);
        for round in 0..200 {
            let mut bk: Vec<[u32; 2]> = Vec::new();
            for i in i0..i0 + w {
                let len = (i as usize + round) % 7;
                let base = i + 1 + r.below(1000) as u32 * 2;
                let mut run: Vec<[u32; 2]> = (0..len as u32).map(|k| [i, base + k * (1 + k % 2)]).collect();
                shuffle(&mut run, &mut r);
                bk.extend(run);
            }
            let want = sorted_then_shuffled(&mut bk, &mut r);
            let jbits = 32 - want.iter().map(|p| p[1]).max().unwrap_or(0).leading_zeros();
            let (mut tmp, mut hist) = (Vec::new(), Vec::new());
            let mut wide = bk.clone();
            sort_sparse(&mut wide, i0, w, 0, &mut tmp, &mut hist);
            assert_eq!(wide, want, "round {round}: pairs");
            let mut packed: Vec<u32> = bk.iter().map(|p| (p[0] - i0) << jbits | p[1]).collect();
            sort_sparse(&mut packed, i0, w, jbits, &mut Vec::new(), &mut hist);
            let back: Vec<[u32; 2]> =
                packed.iter().map(|&k| [i0 + (k >> jbits), k & low_bits(jbits)]).collect();
            assert_eq!(back, want, "round {round}: packed");
        }
    }

    #[test]
    fn sort_bucket_edges() {
        let mut r = crate::scene::Rng::new(5);
        let (i0, w) = (1000u32, 16u32);
        for &(reach, firsts) in &[(4096u32, 16u32), (100, 16), (5000, 1)] {
            let mut bk: Vec<[u32; 2]> = (0..6000)
                .map(|_| {
                    let i = i0 + r.below(firsts as usize) as u32;
                    [i, (i + 1 + r.below(reach as usize) as u32).min(i0 + reach)]
                })
                .collect();
            bk.push([i0, i0 + reach]);
            // Grouped by first index, partners in random order: the radix path (many
            // descents), not the counting sort for ordered partners.
            bk.sort_by_key(|p| p[0]);
            let mut want = bk.clone();
            want.sort_unstable();
            sort_both(&bk, i0, w, &want, &format!("reach {reach}"));
        }
        // Buckets of fewer pairs than the fewest radix digits' counters, with partners at
        // random: at least a quarter of a pair an index (the counting sort), and fewer
        // (more, narrower digits; `sort_unstable` for 17 pairs); some indices with several
        // partners, the tmp and hist buffers reused from above.
        let (i0, w) = (70_000u32, 4096u32);
        for &len in &[w as usize / 4, 3000, w as usize / 4 - 1, 17] {
            let mut bk: Vec<[u32; 2]> = (0..len)
                .map(|_| {
                    let i = i0 + r.below(w as usize / 8) as u32 * 8;
                    [i, i + 1 + r.below(1 << 20) as u32]
                })
                .collect();
            let want = sorted_then_shuffled(&mut bk, &mut r);
            sort_both(&bk, i0, w, &want, &format!("len {len}"));
        }
        // Six partners an index in random order and a 22-bit key: two 11-bit digits would
        // be 4,096 counters for 3,000 pairs, so three narrower ones (a bucket of 10k
        // clustered boxes at 2 threads).
        let (i0, w) = (2048u32, 512u32);
        let mut bk: Vec<[u32; 2]> = (0..3000)
            .map(|_| {
                let i = i0 + r.below(w as usize) as u32;
                [i, i + 1 + r.below(7000) as u32]
            })
            .collect();
        let want = sorted_then_shuffled(&mut bk, &mut r);
        sort_both(&bk, i0, w, &want, "22-bit key");
        // Packed keys of all 32 bits (three digits): 2,048 first indices, partners up to
        // 2^21 - 1, at random and then nearly in order (a few neighbours swapped: the
        // counting sort below `ORDERED_PACKED` pairs an index, the radix sort above).
        let (i0, w) = (1u32 << 20, 2048u32);
        for per in [5usize, 20] {
            let mut bk: Vec<[u32; 2]> = (0..per * w as usize)
                .map(|_| {
                    let i = i0 + r.below(w as usize) as u32;
                    [i, i + 1 + r.below((1 << 21) - 1 - i as usize) as u32]
                })
                .collect();
            bk.push([i0, (1 << 21) - 1]);
            bk.sort_unstable();
            bk.dedup();
            let want = bk.clone();
            for k in (1..bk.len()).step_by(97) {
                bk.swap(k - 1, k);
            }
            sort_both(&bk, i0, w, &want, &format!("32-bit key, {per} an index, nearly in order"));
            shuffle(&mut bk, &mut r);
            sort_both(&bk, i0, w, &want, &format!("32-bit key, {per} an index, at random"));
        }
    }
}
