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

use buckets::Buckets;

mod bucket_sort;
mod buckets;
mod packed;
mod spilled;
#[cfg(test)]
mod tests;

pub(crate) use buckets::fine_buckets;
pub(crate) use packed::packed_bits;
pub(crate) use spilled::Spilled;

use crate::kernels::par::SendPtr;

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

/// INVARIANT check: pairs strictly increasing (sorted, unique) and `i < j` in every pair.
pub(crate) fn validate(pairs: &[[u32; 2]]) -> bool {
    pairs.windows(2).all(|w| w[0] < w[1]) && pairs.iter().all(|p| p[0] < p[1])
}
