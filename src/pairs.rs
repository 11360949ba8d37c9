//! Pair keys and the last stage: gather the per-chunk pair keys, radix sort them, and write
//! the sorted `[i, j]` output.
//!
//! - Key layout (u64): `i << 32 | j` with `i < j`, so ascending keys are the output order.
//! - Unique by construction in the cell sweep (the reference-point rule in `sweep`), so no
//!   dedup pass runs; debug builds check uniqueness (`validate`).
//! - Sort: one parallel MSD scatter into buckets by the first index's high bits, then
//!   `sort_unstable` of each small bucket in parallel (keys are unique, so unstable is
//!   deterministic), done in the output vector itself. Allocates: the output only.

use rayon::prelude::*;

/// Pairs a bucket of the MSD pass aims at: a bucket and its copy stay in a core's L2.
/// PERF: at 11.2M pairs (1M varied 3D, 1 thread) 512 pairs a bucket (2^15 buckets, a
/// scatter that misses the TLB) took 210-225 ms, 16k-64k pairs 160-168 ms.
const PAIRS_PER_BUCKET: usize = 32768;
/// First indices a bucket aims at, so that the counting sort's cursors stay in L1 (sized
/// by pairs alone, 0.87M pairs at 1M uniform 3D made 32 buckets of 32k indices, with
/// 128 KiB cursor arrays). PERF: no change of the pair stage was measurable either way.
const IDS_PER_BUCKET: usize = 4096;
/// At most this many buckets: the MSD scatter writes to each at once.
const MAX_BUCKET_BITS: u32 = 10;

/// The pair key of boxes `a != b` (order-free).
#[inline(always)]
pub(crate) fn key(a: u32, b: u32) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    (lo as u64) << 32 | hi as u64
}

/// Concatenates `parts`, sorts, checks, and returns the pairs.
pub(crate) fn finish(parts: Vec<Vec<u64>>, n_ids: usize) -> Vec<[u32; 2]> {
    let mut out = Vec::new();
    let parts: Vec<&[u64]> = parts.iter().map(Vec::as_slice).collect();
    finish_into(&parts, n_ids, &mut out);
    out
}

/// [`finish`] writing into `out` (cleared first).
///
/// One MSD pass scatters the keys, as `[i, j]`, straight into `out`, bucketed by the high
/// bits of `i` (about [`IDS_PER_BUCKET`] first indices and at most about
/// [`PAIRS_PER_BUCKET`] pairs a bucket); then each bucket is sorted where it lies, in
/// cache, in parallel. The output is the only pair buffer besides the sweep's parts.
/// PERF: against a full LSD radix sort of the keys (5 to 6 passes plus a conversion),
/// measured in `docs/BENCHMARKS.md`.
pub(crate) fn finish_into(parts: &[&[u64]], n_ids: usize, out: &mut Vec<[u32; 2]>) {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    out.clear();
    let split = |k: u64| [(k >> 32) as u32, k as u32];
    if total < 4096 {
        out.extend(parts.iter().flat_map(|p| p.iter()).map(|&k| split(k)));
        out.sort_unstable();
    } else {
        // Every index is below `n_ids` (the caller's box count: no pass over the keys).
        let max_i = n_ids.saturating_sub(1) as u64;
        let ibits = u64::BITS - max_i.leading_zeros();
        // Enough buckets to keep every thread busy, few enough to stay in L2 and the TLB.
        let want = (total / PAIRS_PER_BUCKET)
            .max((max_i as usize + 1) / IDS_PER_BUCKET)
            .max(8 * rayon::current_num_threads());
        let bbits = (usize::BITS - want.leading_zeros()).min(MAX_BUCKET_BITS).min(ibits);
        let shift = 32 + ibits - bbits;
        let nb = 1usize << bbits;
        let hists: Vec<Vec<u32>> = parts
            .par_iter()
            .map(|p| {
                let mut h = vec![0u32; nb];
                for &k in p.iter() {
                    h[(k >> shift) as usize] += 1;
                }
                h
            })
            .collect();
        // starts[b] = first slot of bucket b; offs[part][b] = that part's first slot in it.
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
        // PERF: no zero fill; the scatter writes every slot (a pass of 90 MB at 1M varied
        // 3D boxes saved).
        out.reserve_exact(total);
        let dst = SendPtr(out.as_mut_ptr());
        parts.par_iter().zip(offs.into_par_iter()).for_each(|(p, mut off)| {
            // Rebound so the closure captures the whole Send wrapper, not its raw field.
            #[allow(clippy::redundant_locals)]
            let dst = dst;
            for &k in p.iter() {
                let b = (k >> shift) as usize;
                // SAFETY: each part owns the disjoint slots offs[part][b]..+hists[part][b] of
                // `out` (length total), and off[b] stays inside them.
                unsafe { dst.0.add(off[b]).write(split(k)) };
                off[b] += 1;
            }
        });
        // SAFETY: the parts' slot ranges partition 0..total (the prefix over the
        // histograms), so the scatter initialised every slot below `total <= capacity`.
        unsafe { out.set_len(total) };
        let mut buckets = Vec::with_capacity(nb);
        let mut rest = &mut out[..];
        for b in 0..nb {
            let (head, tail) = rest.split_at_mut(starts[b + 1] - starts[b]);
            buckets.push(head);
            rest = tail;
        }
        // Each bucket holds the pairs of `w` consecutive first indices: a counting sort by
        // the first index, then each index's few partners sorted by the second (insertion
        // sort territory). PERF: a comparison sort of whole buckets cost about 25 ns a pair
        // (docs/BENCHMARKS.md); `[u32; 2]` orders lexicographically, as the output wants.
        let w = 1usize << (shift - 32);
        buckets.into_par_iter().enumerate().for_each_init(
            || (Vec::new(), Vec::new(), Vec::new()),
            |(count, at, tmp): &mut (Vec<u32>, Vec<u32>, Vec<[u32; 2]>), (b, bk)| {
                if bk.len() <= 32 || w > 4 * bk.len() {
                    bk.sort_unstable();
                    return;
                }
                let i0 = (b as u64 * w as u64) as u32;
                count.clear();
                count.resize(w + 1, 0);
                for p in bk.iter() {
                    count[(p[0] - i0) as usize + 1] += 1;
                }
                // PERF: the running sum in a register; `count[i + 1] += count[i]` carried
                // it through memory, a store-to-load forward an index (perf at 1M uniform 2D
                // boxes: 8.4% of this closure's samples on that one instruction).
                let mut sum = 0;
                for c in count.iter_mut() {
                    sum += *c;
                    *c = sum;
                }
                tmp.clear();
                tmp.extend_from_slice(bk);
                at.clear();
                at.extend_from_slice(count);
                for &p in tmp.iter() {
                    let slot = &mut at[(p[0] - i0) as usize];
                    bk[*slot as usize] = p;
                    *slot += 1;
                }
                for i in 0..w {
                    let run = &mut bk[count[i] as usize..count[i + 1] as usize];
                    if run.len() > RADIX_GROUP {
                        sort_by_second(run, tmp);
                    } else if run.len() > 1 {
                        run.sort_unstable_by_key(|p| p[1]);
                    }
                }
            },
        );
    }
    debug_assert!(validate(out), "pairs not unique and increasing");
}

/// Partners of one first index above which they are radix sorted, not compared.
/// PERF: the triangles of a mesh that share a vertex (a fan, a pole) give one index
/// thousands of partners; on a 1M-triangle sphere, `sort_unstable` of those groups took
/// most of the pair stage (see `docs/BENCHMARKS.md`).
const RADIX_GROUP: usize = 256;

/// Sorts `run` by the second index: LSD radix, eight bits a pass, over the bits in which
/// the second indices differ; `scratch` is reused.
fn sort_by_second(run: &mut [[u32; 2]], scratch: &mut Vec<[u32; 2]>) {
    let (mut lo, mut hi) = (u32::MAX, 0);
    for p in run.iter() {
        lo = lo.min(p[1]);
        hi = hi.max(p[1]);
    }
    let bits = u32::BITS - (hi - lo).leading_zeros();
    scratch.clear();
    scratch.resize(run.len(), [0; 2]);
    let mut in_run = true;
    for shift in (0..bits).step_by(8) {
        let (src, dst): (&[[u32; 2]], &mut [[u32; 2]]) = if in_run { (run, scratch) } else { (scratch, run) };
        let digit = |p: &[u32; 2]| ((p[1] - lo) >> shift & 0xff) as usize;
        let mut at = [0usize; 256];
        for p in src.iter() {
            at[digit(p)] += 1;
        }
        let mut sum = 0;
        for a in at.iter_mut() {
            (*a, sum) = (sum, sum + *a);
        }
        for p in src.iter() {
            let d = digit(p);
            dst[at[d]] = *p;
            at[d] += 1;
        }
        in_run = !in_run;
    }
    if !in_run {
        run.copy_from_slice(scratch);
    }
}

/// A raw pointer for the disjoint parallel scatter.
#[derive(Clone, Copy)]
struct SendPtr(*mut [u32; 2]);
// SAFETY: only used to write disjoint slots from different tasks (see finish_into).
unsafe impl Send for SendPtr {}
// SAFETY: as above.
unsafe impl Sync for SendPtr {}

/// INVARIANT check: pairs strictly increasing (sorted, unique) and `i < j` in every pair.
pub(crate) fn validate(pairs: &[[u32; 2]]) -> bool {
    pairs.windows(2).all(|w| w[0] < w[1]) && pairs.iter().all(|p| p[0] < p[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unique random pairs, some first indices with thousands of partners (a mesh's fan),
    /// split into uneven parts: `finish` must return them sorted, as a plain sort does.
    #[test]
    fn finish_sorts_like_sort_unstable() {
        let mut r = crate::scene::Rng::new(11);
        for &(n, fans) in &[(5_000u32, 0usize), (50_000, 3), (300_000, 20)] {
            let mut keys: Vec<u64> = (0..40_000)
                .map(|_| {
                    let (a, b) = (r.below(n as usize) as u32, r.below(n as usize) as u32);
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
            assert_eq!(finish(parts, n as usize), want, "n={n} fans={fans}");
        }
    }
}
