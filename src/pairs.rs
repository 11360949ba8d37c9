//! Pair keys and the last stage: gather the per-chunk pair keys, radix sort them, and write
//! the sorted `[i, j]` output.
//!
//! - Key layout (u64): `i << 32 | j` with `i < j`, so ascending keys are the output order.
//! - Unique by construction in the cell sweep (the reference-point rule in `sweep`), so no
//!   dedup pass runs; debug builds check uniqueness (`validate`).
//! - Sort: one parallel MSD scatter into buckets by the first index's high bits, then
//!   `sort_unstable` of each small bucket in parallel (keys are unique, so unstable is
//!   deterministic). Allocates: the key buffer (reused by [`Broadphase`](crate::Broadphase))
//!   and the output.

use rayon::prelude::*;

/// The pair key of boxes `a != b` (order-free).
#[inline(always)]
pub(crate) fn key(a: u32, b: u32) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    (lo as u64) << 32 | hi as u64
}

/// Concatenates `parts` (in order) into `keys`, sorts, checks, and returns the pairs.
pub(crate) fn finish(parts: Vec<Vec<u64>>, keys: &mut Vec<u64>, scratch: &mut Vec<u64>) -> Vec<[u32; 2]> {
    let mut out = Vec::new();
    finish_into(parts, keys, scratch, &mut out);
    out
}

/// [`finish`] writing into `out` (cleared first).
///
/// One MSD pass buckets the keys by the high bits of the first index (about 512 keys a
/// bucket), then each bucket is sorted where it lies, in cache, in parallel. PERF: against
/// the full LSD radix sort of the keys (5 to 6 passes over them), measured in
/// `docs/BENCHMARKS.md`.
pub(crate) fn finish_into(
    parts: Vec<Vec<u64>>,
    keys: &mut Vec<u64>,
    _scratch: &mut Vec<u64>,
    out: &mut Vec<[u32; 2]>,
) {
    let total: usize = parts.iter().map(Vec::len).sum();
    out.clear();
    if total < 4096 {
        keys.clear();
        keys.extend(parts.iter().flatten());
        keys.sort_unstable();
    } else {
        let max_i = parts.par_iter().map(|p| p.iter().map(|k| k >> 32).max().unwrap_or(0)).max().unwrap_or(0);
        let ibits = u64::BITS - max_i.leading_zeros();
        let bbits = (usize::BITS - (total / 512).leading_zeros()).min(16).min(ibits);
        let shift = 32 + ibits - bbits;
        let nb = 1usize << bbits;
        let hists: Vec<Vec<u32>> = parts
            .par_iter()
            .map(|p| {
                let mut h = vec![0u32; nb];
                for &k in p {
                    h[(k >> shift) as usize] += 1;
                }
                h
            })
            .collect();
        // start[b] = first slot of bucket b; offs[part][b] = that part's first slot in it.
        let mut starts = Vec::with_capacity(nb + 1);
        let mut offs = vec![vec![0usize; nb]; parts.len()];
        let mut run = 0usize;
        for b in 0..nb {
            starts.push(run);
            for (pi, h) in hists.iter().enumerate() {
                offs[pi][b] = run;
                run += h[b] as usize;
            }
        }
        starts.push(run);
        crate::radix_sort::grow_to(keys, total);
        let dst = SendPtr(keys.as_mut_ptr());
        parts.par_iter().zip(offs.into_par_iter()).for_each(|(p, mut off)| {
            let dst = dst;
            for &k in p {
                let b = (k >> shift) as usize;
                // SAFETY: each part owns the disjoint slots offs[part][b]..+hists[part][b] of
                // `keys` (length total), and off[b] stays inside them.
                unsafe { dst.0.add(off[b]).write(k) };
                off[b] += 1;
            }
        });
        drop(parts);
        let mut buckets = Vec::with_capacity(nb);
        let mut rest = &mut keys[..];
        for b in 0..nb {
            let (head, tail) = rest.split_at_mut(starts[b + 1] - starts[b]);
            buckets.push(head);
            rest = tail;
        }
        buckets.into_par_iter().for_each(|bk| bk.sort_unstable());
    }
    debug_assert!(validate(keys), "pair keys not unique and increasing");
    out.par_extend(keys.par_iter().with_min_len(1 << 14).map(|&k| [(k >> 32) as u32, k as u32]));
}

/// A raw pointer for the disjoint parallel scatter.
#[derive(Clone, Copy)]
struct SendPtr(*mut u64);
// SAFETY: only used to write disjoint slots from different tasks (see finish_into).
unsafe impl Send for SendPtr {}
// SAFETY: as above.
unsafe impl Sync for SendPtr {}

/// INVARIANT check: keys strictly increasing (sorted, unique) and `i < j` in every key.
pub(crate) fn validate(keys: &[u64]) -> bool {
    keys.windows(2).all(|w| w[0] < w[1]) && keys.iter().all(|&k| (k >> 32) < (k & 0xffff_ffff))
}
