//! Pair sink: where a sweep chunk's pair keys go, first into idle memory, then into the
//! shared spill that becomes the output.
//!
//! - Input: pair keys pushed by the chunk's walker, one at a time or eight lanes at once.
//! - Output: a [`ChunkKeys`]: the keys in the chunk's share of the pool, its blocks in the
//!   spill, and the counts of all of them by fine bucket for the pair stage.
//! - Cost: `O(1)` a key; a lock a block of up to [`SPILL_BLOCK`] keys.
//! - Parallel: one sink a chunk; the spill is shared under a mutex and appended a block
//!   at a time, so the lock is taken rarely.
//! - Allocation: a block a chunk ([`block_keys`]) and the bucket counts; the spill grows by
//!   an eighth ([`grow`]).
//! - [`found_order`] reads the keys back in the order the sweep found them, as pairs.
//! - Source: this crate.

use crate::kernels::pair_sort::{split, unslot, PairBudget};
use crate::par::prelude::*;
use std::mem::MaybeUninit;
use std::sync::Mutex;

/// Keys a chunk gathers before it appends them to the shared spill under its lock, at
/// most. The spill is the output vector, so the keys take no memory of their own beyond
/// the blocks, which stay small. PERF (memory): examples/demo.rs (3D varied 1M, memory a
/// box).
pub(crate) const SPILL_BLOCK: usize = 1 << 12;

/// The block a sweep chunk of `entries` entries gathers its keys in: a quarter of a key an
/// entry, from 256 to [`SPILL_BLOCK`] keys. Every chunk running at once holds one, so a
/// fixed size would make a small scene on many cores hold a full block a core.
/// PERF (memory): examples/demo.rs (3D varied 10k, 16 threads, memory a box).
pub(super) fn block_keys(entries: usize) -> usize {
    (entries / 4).clamp(256, SPILL_BLOCK)
}

/// Makes room for `more` keys in the spill, growing it by an eighth, not doubling: the
/// spill becomes the output, and its unused capacity is working memory (doubling can
/// leave half of it unused). On the first frame this copies the keys about eight times
/// where the allocator cannot grow in place; later frames reuse the output's capacity.
/// Fails, changing nothing, where the allocator refuses.
pub(crate) fn grow(spill: &mut Vec<[u32; 2]>, more: usize) -> Result<(), std::collections::TryReserveError> {
    if spill.capacity() - spill.len() < more {
        // The eighth is a wish: where the allocator refuses it, exactly `more` may still fit.
        let wish = more.max(spill.len() / 8).max(SPILL_BLOCK);
        if spill.try_reserve_exact(wish).is_err() {
            spill.try_reserve_exact(more)?;
        }
    }
    Ok(())
}

/// Where a chunk's pair keys go: a fixed slice first, then, a block at a time, the shared
/// spill. The slice is the radix scratch, idle during the sweep, so pairs up to one per entry
/// cost no memory of their own. PERF (memory): examples/demo.rs (3D clustered 1M, memory
/// a box).
pub(super) struct Sink<'a> {
    pub(super) buf: &'a mut [u64],
    pub(super) len: usize,
    pub(super) spill: &'a Mutex<Vec<[u32; 2]>>,
    pub(super) block: Vec<u64>,
    /// The block's capacity ([`block_keys`]).
    pub(super) cap: usize,
    /// The keys' counts by `key >> shift` (see [`crate::kernels::pair_sort::fine_buckets`]), taken as a
    /// block goes to the spill and as the sink finishes, while the keys are in cache; empty
    /// (nothing counted) where the keys will not be sorted.
    pub(super) hist: Vec<u32>,
    pub(super) shift: u32,
    /// Where this sink's blocks went in the spill: `(start, len)`.
    pub(super) blocks: Vec<(usize, usize)>,
    /// The call's pair budget: every block the spill takes is counted against it.
    pub(super) budget: &'a PairBudget,
    /// The budget said stop (read at each flush): the walker ends its chunk.
    pub(super) stopped: bool,
}

/// What a sweep chunk's [`Sink`] left: its keys in its share of the pool (the first `len`),
/// its blocks in the spill, and the counts of all of them by fine bucket (empty where the
/// keys were not counted: they will not be sorted).
pub(crate) struct ChunkKeys {
    pub start: usize,
    pub len: usize,
    pub blocks: Vec<(usize, usize)>,
    pub hist: Vec<u32>,
}

impl<'a> Sink<'a> {
    /// `fine`: the bits and shift of the buckets to count keys in; `None`: count nothing
    /// (the keys will not be sorted).
    pub(super) fn new(
        buf: &'a mut [u64],
        spill: &'a Mutex<Vec<[u32; 2]>>,
        fine: Option<(u32, u32)>,
        block: usize,
        budget: &'a PairBudget,
    ) -> Self {
        Self {
            buf,
            len: 0,
            spill,
            block: Vec::new(),
            cap: block,
            hist: fine.map_or(Vec::new(), |(bits, _)| vec![0; 1 << bits]),
            shift: fine.map_or(0, |(_, shift)| shift),
            blocks: Vec::new(),
            budget,
            stopped: false,
        }
    }

    #[inline(always)]
    pub(super) fn count(hist: &mut [u32], shift: u32, keys: &[u64]) {
        if hist.is_empty() {
            return;
        }
        for &k in keys {
            hist[(k >> shift) as usize] += 1;
        }
    }

    #[inline(always)]
    pub(super) fn push(&mut self, k: u64) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = k;
            self.len += 1;
        } else {
            if self.block.len() == self.block.capacity() {
                self.flush();
            }
            let l = self.block.len();
            // SAFETY: `l < capacity` (the flush leaves the block empty, with room).
            unsafe {
                self.block.as_mut_ptr().add(l).write(k);
                self.block.set_len(l + 1);
            }
        }
    }

    /// The keys `key(l)` of the lanes `l` set in `m` (bits 0 to 7), in lane order.
    /// `key` may be called for every lane 0 to 7, set or not.
    ///
    /// A loop over the set bits is not used: it ends where the mask says, unpredictably (a
    /// mask has 0 to 8 hits). Here every lane's key is written to the next free slot and
    /// the count advances by the lane's bit, so there is no branch but the room check. Nor
    /// is a single hit taken by `push` (a branch on the mask): slower on the varied and
    /// clustered scenes. PERF: examples/demo.rs (3D varied and clustered, 2D varied; sweep
    /// stage).
    #[inline(always)]
    pub(super) fn push_masked(&mut self, m: u32, key: impl Fn(usize) -> u64) {
        // Eight free slots: in the buffer, else in the block (flushed if short of them).
        let in_buf = self.len + 8 <= self.buf.len();
        if !in_buf {
            // The slice's last few slots are given up, so that no later key goes back
            // into it: its keys come before the blocks' in the order found
            // ([`found_order`]).
            if self.len < self.buf.len() {
                self.buf = &mut std::mem::take(&mut self.buf)[..self.len];
            }
            if self.block.capacity() - self.block.len() < 8 {
                self.flush();
            }
        }
        let dst = if in_buf {
            self.buf[self.len..].as_mut_ptr()
        } else {
            // SAFETY: the block's length is within its capacity.
            unsafe { self.block.as_mut_ptr().add(self.block.len()) }
        };
        let mut at = 0;
        for l in 0..8 {
            // SAFETY: `dst` has eight writable slots (above) and `at <= l < 8`.
            unsafe { dst.add(at).write(key(l)) };
            at += (m >> l & 1) as usize;
        }
        if in_buf {
            self.len += at;
        } else {
            // SAFETY: the `at` slots past the old length were written above.
            unsafe { self.block.set_len(self.block.len() + at) };
        }
    }

    /// Counts the block's keys and appends them to the spill; empties the block.
    #[cold]
    #[inline(never)]
    pub(super) fn flush(&mut self) {
        // Once the budget says stop, blocks are dropped: nothing more is allocated.
        if !self.block.is_empty() && !self.budget.stopped() && self.budget.take(self.block.len()) {
            Self::count(&mut self.hist, self.shift, &self.block);
            // A poisoned lock only means another chunk panicked: its keys are whole.
            let mut spill = self.spill.lock().unwrap_or_else(|e| e.into_inner());
            if grow(&mut spill, self.block.len()).is_ok() {
                self.blocks.push((spill.len(), self.block.len()));
                spill.extend_from_slice(bytemuck::cast_slice(&self.block));
            } else {
                self.budget.out_of_memory();
            }
        }
        self.stopped = self.budget.stopped();
        self.block.clear();
        self.block.reserve_exact(self.cap);
    }

    /// Flushes the last keys and counts those in the slice.
    pub(super) fn finish(mut self, start: usize) -> ChunkKeys {
        self.flush();
        Self::count(&mut self.hist, self.shift, &self.buf[..self.len]);
        ChunkKeys { start, len: self.len, blocks: self.blocks, hist: self.hist }
    }
}

/// The pairs of the keys the chunks left (`chunks`, their shares of `pool` and their blocks
/// in `out`), then those of `apart`, in the order found: chunk by chunk, a chunk's keys in
/// its share then in its blocks, which is the order its walker pushed them. Every run is
/// walked whole by one chunk, in order, so the sequence is that of the runs, whatever the
/// chunking (so the thread count). Written to `extra`, which then becomes `out` (the old
/// output kept as `extra`'s memory for the next call). One parallel pass. Allocation:
/// `extra`'s growth (which fails as `Err(pairs)`, `out` left as it was) and two lists of
/// one entry a chunk's share or block.
pub(crate) fn found_order(
    chunks: &[ChunkKeys],
    pool: &[u64],
    apart: &[u64],
    out: &mut Vec<[u32; 2]>,
    extra: &mut Vec<[u32; 2]>,
) -> Result<(), usize> {
    /// Keys as they lie: in a share of the pool, or in a block of slots.
    enum Src<'a> {
        Keys(&'a [u64]),
        Slots(&'a [[u32; 2]]),
    }
    let srcs: Vec<Src> = chunks
        .iter()
        .flat_map(|c| {
            std::iter::once(Src::Keys(&pool[c.start..c.start + c.len]))
                .chain(c.blocks.iter().map(|&(at, len)| Src::Slots(&out[at..at + len])))
        })
        .chain(std::iter::once(Src::Keys(apart)))
        .collect();
    let len = |s: &Src| match s {
        Src::Keys(k) => k.len(),
        Src::Slots(k) => k.len(),
    };
    let total: usize = srcs.iter().map(len).sum();
    extra.clear();
    extra.try_reserve_exact(total).map_err(|_| total)?;
    let mut rest = &mut extra.spare_capacity_mut()[..total];
    let mut jobs: Vec<(&Src, &mut [MaybeUninit<[u32; 2]>])> = Vec::with_capacity(srcs.len());
    for s in &srcs {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(len(s));
        jobs.push((s, head));
        rest = tail;
    }
    jobs.into_par_iter().for_each(|(s, dst)| match s {
        Src::Keys(k) => dst.iter_mut().zip(k.iter()).for_each(|(d, &k)| {
            d.write(split(k));
        }),
        Src::Slots(k) => dst.iter_mut().zip(k.iter()).for_each(|(d, &k)| {
            d.write(split(unslot(k)));
        }),
    });
    drop(srcs);
    // SAFETY: the jobs' slices partition the first `total` spare slots, and each job wrote
    // every slot of its slice (its source has the slice's length).
    unsafe { extra.set_len(total) };
    std::mem::swap(out, extra);
    Ok(())
}
