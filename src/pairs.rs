//! Pair keys and the last stage: gather the per-chunk pair keys, radix sort them, and write
//! the sorted `[i, j]` output.
//!
//! - Key layout (u64): `i << 32 | j` with `i < j`, so ascending keys are the output order.
//! - Unique by construction in the cell sweep (the reference-point rule in `sweep`), so no
//!   dedup pass runs; debug builds check uniqueness (`validate`).
//! - Parallel: the gather and the conversion are parallel copies; the sort is the crate's
//!   parallel radix sort. Allocates: the key buffer and its radix scratch (reused by
//!   [`Broadphase`](crate::Broadphase)), and the output.

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
pub(crate) fn finish_into(
    parts: Vec<Vec<u64>>,
    keys: &mut Vec<u64>,
    scratch: &mut Vec<u64>,
    out: &mut Vec<[u32; 2]>,
) {
    let total: usize = parts.iter().map(Vec::len).sum();
    keys.clear();
    keys.resize(total, 0);
    let mut rest = &mut keys[..];
    let mut slots = Vec::with_capacity(parts.len());
    for p in &parts {
        let (head, tail) = rest.split_at_mut(p.len());
        slots.push(head);
        rest = tail;
    }
    slots.into_par_iter().zip(parts.par_iter()).for_each(|(dst, src)| dst.copy_from_slice(src));
    drop(parts);
    crate::radix_sort::sort(keys, scratch, 0..64);
    debug_assert!(validate(keys), "pair keys not unique and increasing");
    out.clear();
    out.par_extend(keys.par_iter().with_min_len(1 << 14).map(|&k| [(k >> 32) as u32, k as u32]));
}

/// INVARIANT check: keys strictly increasing (sorted, unique) and `i < j` in every key.
pub(crate) fn validate(keys: &[u64]) -> bool {
    keys.windows(2).all(|w| w[0] < w[1]) && keys.iter().all(|&k| (k >> 32) < (k & 0xffff_ffff))
}
