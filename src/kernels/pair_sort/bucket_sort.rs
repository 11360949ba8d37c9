use crate::kernels::simd::low_mask;

/// A pair as a bucket holds it: `[i, j]`, or packed in a `u32` (`(i - i0) << jbits | j`,
/// see [`packed_bits`]). Either way the order of the values is the pairs' order.
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
pub(super) const SPARSE: usize = 4;

/// A bucket with fewer than one descent (a partner below the one before it, same first
/// index) in this many pairs is sorted by [`sort_sparse`]. PERF: 3D terrain 1M (ids in grid
/// order, about 8 partners an index) had a pair stage of 54-75 ms that way, 87-89 ms by
/// radix passes; 3D varied 1M (ids at random, 11 partners) 152-158 ms against 116-134.
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
pub(super) fn exchange<T: Copy, K: Ord>(v: &mut [T], a: usize, b: usize, key: impl Fn(&T) -> K) {
    let (x, y) = (v[a], v[b]);
    let swap = key(&y) < key(&x);
    v[a] = if swap { y } else { x };
    v[b] = if swap { x } else { y };
}
