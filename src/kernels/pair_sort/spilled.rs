//! Keys sorted outside the output, for keys that wait in the output vector itself.
//!
//! - Input: the producers' key lists, which lie in the output vector, their counts by fine
//!   bucket if taken, and idle memory the caller lends. Output: the sorted pairs in the
//!   output vector.
//! - Cost: one scatter into the lent memory, then the bucket sorts ([`Buckets::sort`]),
//!   each writing its bucket into the output.
//! - Parallel: as [`Buckets`]: a list a task for the scatter, groups of buckets for the
//!   sorts.
//! - Allocation: only what the lent memory lacks (into a kept `extra` buffer, grown, never
//!   shrunk), and a fresh output where its capacity is short.
//! - Source: this crate.

use super::buckets::Buckets;
use super::packed::packed_bits;
use super::packed::packed_min_buckets;
use super::packed::Packed;
use super::split;
use super::unslot;
use super::validate;
use super::{SMALL, SPARE_FIT};
use crate::kernels::par::SendPtr;
use crate::kernels::simd::low_mask;

/// Keys sorted outside the output, for keys that wait in the output vector itself (the
/// column sweep spills them there): [`Spilled::scatter`] moves every key into idle memory
/// the caller lends (and an allocation for what that lacks), after which the output's
/// contents are dead; [`Spilled::write`] sorts each bucket there and writes it into the
/// output. PERF (memory): the keys never take memory of their own beside the output, which
/// would be 8 bytes a pair (`benches/pairs.rs`, 3D varied 1M).
pub(crate) struct Spilled<'s> {
    /// Few keys: sorted here.
    pub(super) small: Vec<[u32; 2]>,
    pub(super) buckets: Option<Buckets>,
    /// The buckets, once scattered.
    pub(super) bks: Kind<'s>,
}

/// How [`Spilled`]'s buckets hold their keys.
pub(super) enum Kind<'s> {
    /// As pairs `[i, j]`.
    Wide(Vec<&'s mut [[u32; 2]]>),
    /// Packed in 32 bits ([`packed_bits`]).
    Packed(Vec<Packed<'s>>),
}

/// Places buckets `0..nb` of lengths `len(b)` whole in the slices of `spare`, first fit;
/// `None` for those no slice holds, and their total length.
pub(super) fn first_fit<T>(
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
pub(super) fn fill_in<'s, T>(
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
    /// Scatters the keys of `parts` (lists of key slot slices, as for
    /// [`finish_into`](super::finish_into)) into `spare`, whole buckets first fit, and the
    /// buckets no spare slice holds into `extra` (grown if short, never shrunk or cleared:
    /// a kept buffer is not zeroed anew). `fine`: each list's counts by fine bucket
    /// ([`fine_buckets`](super::fine_buckets)), where the producer took them. Up to
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
                let wmask = low_mask(wbits) as u32;
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
