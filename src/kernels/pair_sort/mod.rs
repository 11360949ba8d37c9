//! Pair keys and the last stage: gather the per-chunk pair keys, sort them, and write the
//! sorted `[i, j]` output.
//!
//! - Input: lists of pair-key slices, one list a producer's chunk, and the number of boxes.
//!   Output: every pair `[i, j]`, `i < j`, strictly ascending.
//! - Key layout (u64): `i << 32 | j` with `i < j`, so ascending keys are the output order.
//! - Unique by construction in every producer (the column sweep's reference-point rule),
//!   so no dedup pass runs; debug builds check uniqueness ([`validate`]).
//! - A key may wait in a `[u32; 2]` slot as its bit pattern ([`unslot`] reads it back):
//!   that is how the column sweep spills keys into the output vector itself.
//! - Method: one parallel MSD scatter into buckets by the first index's high bits
//!   ([`buckets`]), then each small bucket sorted in cache, in parallel ([`bucket_sort`],
//!   [`packed`]). [`finish_into`] scatters into the output; [`Spilled`] scatters keys that
//!   wait in the output into idle memory the caller lends, then writes each sorted bucket
//!   back.
//! - Cost: O(k) for k pairs: a count and a scatter, then per bucket an LSD radix sort of a
//!   few digits or a counting sort by first index. Fewer than 4096 keys: `sort_unstable`.
//! - Parallel: a task a producer's chunk for the count and the scatter; the bucket sorts
//!   in jobs of about equal numbers of pairs. Keys are unique, so the output depends
//!   neither on the order the keys came in nor on the thread count.
//! - Allocation: the output (or, for [`Spilled`], what the lent memory lacks), and per
//!   chunk and per job cursors, counters and scratch of a bucket's size.
//! - Source: this crate.

use buckets::Buckets;

mod bucket_sort;
mod buckets;
mod budget;
mod packed;
mod spilled;
#[cfg(test)]
mod tests;

pub(crate) use buckets::fine_buckets;
pub(crate) use budget::{PairBudget, BUDGET_STEP};
pub(crate) use packed::packed_bits;
pub(crate) use spilled::Spilled;

use crate::kernels::par::SendPtr;

/// Pairs a bucket of the MSD pass aims at: a bucket and its copy stay in a core's L2.
/// Much smaller buckets are many more (2^15 at ten million pairs), and the scatter into
/// them misses the TLB. PERF: `benches/pairs.rs` (3D varied 1M, 1 thread).
const PAIRS_PER_BUCKET: usize = 32768;
/// First indices a bucket aims at, so that the counting sort's cursors stay in L1 (sized
/// by pairs alone, the 0.87M pairs of 1M uniform 3D boxes would make 32 buckets of 32k
/// indices, with 128 KiB cursor arrays). PERF: `benches/pairs.rs` (3D uniform 1M) shows
/// no change of the pair stage either way; the bound keeps the cursors' footprint.
const IDS_PER_BUCKET: usize = 4096;
/// Pairs a bucket holds at the least where buckets are added for the threads' sake (eight
/// a thread): each costs every part a cursor and its sort a clear of its counters, so a
/// small scene on a big pool would pay more for its buckets and jobs than they split.
/// PERF: `benches/pairs.rs` (3D clustered 10k, all threads), with [`MIN_PAIRS_PER_JOB`].
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
pub(crate) fn unslot(s: [u32; 2]) -> u64 {
    bytemuck::cast(s)
}

/// The pair `[i, j]` of key `k`.
#[inline(always)]
pub(crate) fn split(k: u64) -> [u32; 2] {
    [(k >> 32) as u32, k as u32]
}

/// Concatenates `parts`, sorts, checks, and returns the pairs (for the pair stage measured
/// alone, `internals::sort_pair_keys`, and the tests).
#[cfg(any(test, feature = "internals"))]
pub(crate) fn finish(parts: Vec<Vec<u64>>, n_ids: usize) -> Vec<[u32; 2]> {
    let mut out = Vec::new();
    let parts: Vec<Vec<&[[u32; 2]]>> = parts.iter().map(|p| vec![bytemuck::cast_slice(p)]).collect();
    finish_into(&parts, n_ids, &mut out);
    out
}

/// The keys of `parts` (one task's each), sorted into `out` by [`finish_into`], room
/// reserved first: a refused allocation stops `budget` and leaves `out` as it was. Does nothing
/// once the budget has stopped (the caller reports its verdict).
pub(crate) fn finish_parts<'a>(
    parts: impl Iterator<Item = &'a [u64]> + Clone,
    n_ids: usize,
    budget: &PairBudget,
    out: &mut Vec<[u32; 2]>,
) {
    if budget.stopped() {
        return;
    }
    let total: usize = parts.clone().map(|p| p.len()).sum();
    // Room for `total` pairs in all: `out` is cleared before it is filled.
    if out.try_reserve_exact(total.saturating_sub(out.len())).is_err() {
        budget.out_of_memory();
    } else {
        let slices: Vec<Vec<&[[u32; 2]]>> = parts.map(|p| vec![bytemuck::cast_slice(p)]).collect();
        finish_into(&slices, n_ids, out);
    }
}

/// `finish` (the tests' form) writing into `out` (cleared first). Each part is a list of
/// slices of key slots ([`unslot`]; a sweep chunk's keys), counted and scattered by one task.
///
/// One MSD pass scatters the keys, as `[i, j]`, straight into `out`, bucketed by the high
/// bits of `i` (about [`IDS_PER_BUCKET`] first indices and at most about
/// [`PAIRS_PER_BUCKET`] pairs a bucket); then each bucket is sorted where it lies, in
/// cache, in parallel. The output is the only pair buffer besides the parts. A full LSD
/// radix sort of the keys is not used: it takes five to six passes over memory plus a
/// conversion to pairs. PERF: `benches/pairs.rs`.
pub(crate) fn finish_into(parts: &[Vec<&[[u32; 2]]>], n_ids: usize, out: &mut Vec<[u32; 2]>) {
    let total: usize = parts.iter().flatten().map(|p| p.len()).sum();
    out.clear();
    if total < SMALL {
        out.extend(parts.iter().flatten().flat_map(|p| p.iter()).map(|&s| split(unslot(s))));
        out.sort_unstable();
    } else {
        let bk = Buckets::count(parts, total, n_ids, 0);
        // PERF: no zero fill: the scatter writes every slot, and a fill would be one more
        // pass over the whole output.
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
