//! The MSD pass: how many buckets by the first index's high bits, their counts and
//! offsets, the parallel scatter into them, and the grouping of the bucket sorts into jobs.
//!
//! - Input: the producers' key lists (or their counts by fine bucket, [`fine_buckets`]).
//!   Output: [`Buckets`], then every key in its bucket's place.
//! - Cost: one counting pass over the keys (none where fine counts are given) and one
//!   scatter.
//! - Parallel: a producer's list a task, each writing its own disjoint slots of every
//!   bucket (the prefix over the counts).
//! - Allocation: a counter and a cursor a bucket a list.
//! - Source: this crate.

use super::packed::Bucket;
use super::unslot;
use super::IDS_PER_BUCKET;
use super::MAX_BUCKET_BITS;
use super::MIN_PAIRS_PER_BUCKET;
use super::MIN_PAIRS_PER_JOB;
use super::PAIRS_PER_BUCKET;
use crate::kernels::par::SendPtr;
use crate::par::prelude::*;
use std::mem::MaybeUninit;

/// The MSD pass's buckets: bucket `b` holds the pairs whose first index has the high bits
/// `b` (`i >> (shift - 32) == b`), at `starts[b]..starts[b + 1]` of the sorted output.
pub(super) struct Buckets {
    pub(super) shift: u32,
    pub(super) starts: Vec<usize>,
    /// `offs[part][b]`: that part's first slot in bucket `b`, counted from `starts[b]`.
    pub(super) offs: Vec<Vec<usize>>,
}

/// The bits of a first index and of the bucket number for `total` keys of `n_ids` boxes:
/// enough buckets to keep every thread busy, few enough to stay in L2 and the
/// TLB, at least `min` if the indices allow.
pub(super) fn bucket_bits(total: usize, n_ids: usize, min: usize) -> (u32, u32) {
    let max_i = n_ids.saturating_sub(1) as u64;
    let ibits = u64::BITS - max_i.leading_zeros();
    let want = (total / PAIRS_PER_BUCKET)
        .max((max_i as usize + 1) / IDS_PER_BUCKET)
        .max((8 * crate::par::current_num_threads()).min(total / MIN_PAIRS_PER_BUCKET))
        .max(min);
    let bbits = (usize::BITS - want.leading_zeros()).min(MAX_BUCKET_BITS).min(ibits);
    (ibits, bbits)
}

/// The buckets a sweep chunk counts its keys in, for keys of `n_ids` boxes: their bits and
/// the shift that takes a key (`i << 32 | j`) to its bucket. A bucket count the MSD pass
/// picks that is a power of two no greater has counts that are sums of these; a greater one
/// counts the keys again ([`Buckets::count_from`]). At most a 64th of the boxes: a chunk's
/// counters are working memory, and 4 KiB of them a chunk would take a small scene on a
/// big pool past the 128 bytes a box the crate promises. PERF (memory):
/// `benches/pairs.rs` (3D mixed 10k, 16 threads).
pub(crate) fn fine_buckets(n_ids: usize) -> (u32, u32) {
    let ibits = u64::BITS - (n_ids.saturating_sub(1) as u64).leading_zeros();
    let fbits = MAX_BUCKET_BITS.min(ibits).min((n_ids / 64).max(1).ilog2());
    (fbits, 32 + ibits - fbits)
}

impl Buckets {
    /// Counts the keys of every part (a list of slices, counted and scattered by one task)
    /// into buckets, at least `min` if the indices allow. `total` keys, every index below
    /// `n_ids` (no pass over the keys).
    pub(super) fn count(parts: &[Vec<&[[u32; 2]]>], total: usize, n_ids: usize, min: usize) -> Self {
        let (ibits, bbits) = bucket_bits(total, n_ids, min);
        let shift = 32 + ibits - bbits;
        let nb = 1usize << bbits;
        let hists: Vec<Vec<u32>> = parts
            .par_iter()
            .map(|p| {
                crate::kernels::simd::fast(
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
    pub(super) fn count_from(fine: &[Vec<u32>], total: usize, n_ids: usize, min: usize) -> Option<Self> {
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
    pub(super) fn from_hists(hists: &[Vec<u32>], shift: u32) -> Self {
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

    pub(super) fn len(&self, b: usize) -> usize {
        self.starts[b + 1] - self.starts[b]
    }

    /// First indices a bucket spans.
    pub(super) fn width(&self) -> u32 {
        1 << (self.shift - 32)
    }

    /// Writes every key of `parts`, as `slot(key)`, into its bucket: bucket `b` starts at
    /// `base[b]`.
    ///
    /// # Safety
    /// `base[b]` is valid for writes of `self.len(b)` slots, and the buckets' ranges are
    /// disjoint.
    pub(super) unsafe fn scatter<T: Copy + Send>(
        &self,
        parts: &[Vec<&[[u32; 2]]>],
        base: &[SendPtr<T>],
        slot: impl Fn(u64) -> T + Sync,
    ) {
        let shift = self.shift;
        parts.par_iter().zip(self.offs.par_iter()).for_each(|(p, off)| {
            crate::kernels::simd::fast(
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
    /// last (and the buckets past the last index are empty). Groups of equal numbers of
    /// buckets are not used: rayon splits a range once per thread and again only when a
    /// job is stolen, so one thread would sort most of the pairs. PERF: `benches/pairs.rs`
    /// (3D clustered 10k, 2 threads).
    pub(super) fn sort<B: Bucket>(&self, bks: Vec<B>, dst: Vec<&mut [MaybeUninit<[u32; 2]>]>) {
        let total = *self.starts.last().unwrap_or(&0);
        let w = self.width();
        let want = 4 * crate::par::current_num_threads();
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
            crate::kernels::simd::fast(
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
