use std::sync::Mutex;

/// Keys a chunk gathers before it appends them to the shared spill under its lock, at
/// most. PERF (memory): the spill is the output vector, so the keys take no memory of
/// their own; before, each chunk kept blocks of 32k keys, and at 1M varied 3D boxes the
/// keys were 71 bytes a box.
pub(crate) const SPILL_BLOCK: usize = 1 << 12;

/// The block a sweep chunk of `entries` entries gathers its keys in: a quarter of a key an
/// entry, from 256 to [`SPILL_BLOCK`] keys. Every chunk running at once holds one, so
/// at a fixed size a small scene on many cores held a block a core: 3D varied 10k on
/// 16 cores (ten chunks of 2,048 entries) took 142.8 bytes a box, 113.7 on 2.
pub(super) fn block_keys(entries: usize) -> usize {
    (entries / 4).clamp(256, SPILL_BLOCK)
}

/// Makes room for `more` keys in the spill, growing it by an eighth, not doubling: the
/// spill becomes the output, and its unused capacity is working memory (at 1M varied 3D
/// boxes, doubling left 44 bytes a box unused). On the first frame this copies the keys
/// about eight times where the allocator cannot grow in place; later frames reuse the
/// output's capacity.
pub(crate) fn grow(spill: &mut Vec<[u32; 2]>, more: usize) {
    if spill.capacity() - spill.len() < more {
        spill.reserve_exact(more.max(spill.len() / 8).max(SPILL_BLOCK));
    }
}

/// Where a chunk's pair keys go: a fixed slice first, then, a block at a time, the shared
/// spill.
/// PERF (memory): the slice is the radix scratch, idle during the sweep, so pairs up to
/// one per entry cost no memory of their own (1M clustered 3D: 138 to under 128 bytes a
/// box, docs/BENCHMARKS.md).
pub(super) struct Sink<'a> {
    pub(super) buf: &'a mut [u64],
    pub(super) len: usize,
    pub(super) spill: &'a Mutex<Vec<[u32; 2]>>,
    pub(super) block: Vec<u64>,
    /// The block's capacity ([`block_keys`]).
    pub(super) cap: usize,
    /// The keys' counts by `key >> shift` (see [`crate::kernels::pair_sort::fine_buckets`]), taken as a
    /// block goes to the spill and as the sink finishes, while the keys are in cache.
    pub(super) hist: Vec<u32>,
    pub(super) shift: u32,
    /// Where this sink's blocks went in the spill: `(start, len)`.
    pub(super) blocks: Vec<(usize, usize)>,
}

/// What a sweep chunk's [`Sink`] left: its keys in its share of the pool (the first `len`),
/// its blocks in the spill, and the counts of all of them by fine bucket.
pub(crate) struct ChunkKeys {
    pub start: usize,
    pub len: usize,
    pub blocks: Vec<(usize, usize)>,
    pub hist: Vec<u32>,
}

impl<'a> Sink<'a> {
    /// `fine`: the bits and shift of the buckets to count keys in.
    pub(super) fn new(
        buf: &'a mut [u64],
        spill: &'a Mutex<Vec<[u32; 2]>>,
        fine: (u32, u32),
        block: usize,
    ) -> Self {
        Self {
            buf,
            len: 0,
            spill,
            block: Vec::new(),
            cap: block,
            hist: vec![0; 1 << fine.0],
            shift: fine.1,
            blocks: Vec::new(),
        }
    }

    #[inline(always)]
    pub(super) fn count(hist: &mut [u32], shift: u32, keys: &[u64]) {
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
    /// PERF: a loop over the set bits ends where the mask says, unpredictably (a mask has
    /// 0 to 8 hits); here every lane's key is written to the next free slot and the count
    /// advances by the lane's bit, so there is no branch but the room check. Demo, 1
    /// thread, against the bit loop (medians of p10 ratios, alternated): sweep 3D varied
    /// 100k 0.93-0.95, 10k 0.93, clustered 10k 0.98, 100k and 1M 1.01, uniform 1M 1.00;
    /// 2D varied 100k 0.93. A single hit taken by `push` instead (a branch on the mask)
    /// made the sweep 1.04x slower on varied and clustered 100k (same binary).
    #[inline(always)]
    pub(super) fn push_masked(&mut self, m: u32, key: impl Fn(usize) -> u64) {
        // Eight free slots: in the buffer, else in the block (flushed if short of them).
        let in_buf = self.len + 8 <= self.buf.len();
        if !in_buf && self.block.capacity() - self.block.len() < 8 {
            self.flush();
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
        if !self.block.is_empty() {
            Self::count(&mut self.hist, self.shift, &self.block);
            // A poisoned lock only means another chunk panicked: its keys are whole.
            let mut spill = self.spill.lock().unwrap_or_else(|e| e.into_inner());
            grow(&mut spill, self.block.len());
            self.blocks.push((spill.len(), self.block.len()));
            spill.extend_from_slice(bytemuck::cast_slice(&self.block));
        }
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
