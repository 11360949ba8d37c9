//! Parallel plumbing shared by every stage: how a pass is cut into work items, the one
//! raw-pointer wrapper for disjoint parallel writes, buffer growth, and prefetch hints.
//!
//! - Work items are a function of the input size alone ([`chunk_len`]), never of the
//!   pool, so that sums combined chunk by chunk and every count in `Stats` are the same
//!   for any thread count.
//! - Allocation: [`grow_to`] grows a kept buffer exactly and never shrinks it, so steady
//!   frames of similar size allocate nothing.
//! - Cost: O(1) but for [`grow_to`], which zero-fills only the slots it adds.
//! - Parallel: no threads of its own; [`SendPtr`] is how the parallel stages share one
//!   output buffer.
//! - Source: this crate.

/// Boxes (or entries) a parallel work item holds at the most.
const CHUNK: usize = 4096;
/// Boxes (or entries) a parallel work item holds at the least, where the input has that
/// many ([`chunk_len`]).
const CHUNK_MIN: usize = 512;

/// Boxes (or entries) a parallel work item of a pass over `n` holds: about a 64th of
/// them, within [`CHUNK_MIN`]..=[`CHUNK`], so that a 10k-box pass still makes about twenty
/// work items for the threads to share. A function of `n` alone, not of the pool: the scan
/// combines its sums chunk by chunk, and the plan (so the `Stats` counts) must not depend
/// on the thread count.
pub(crate) fn chunk_len(n: usize) -> usize {
    (n / 64).clamp(CHUNK_MIN, CHUNK)
}

/// A raw pointer that crosses threads, for parallel writes to disjoint indices of one
/// buffer (the radix scatter, the gathers, the pair buckets). Sound only under the
/// invariant each user states: no index is written by two tasks, and the buffer outlives
/// the tasks.
pub(crate) struct SendPtr<T>(pub(crate) *mut T);

impl<T> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SendPtr<T> {}
// SAFETY: every user writes each index from exactly one task (see the type's docs).
unsafe impl<T: Send> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// Writes `v` at index `i`.
    ///
    /// # Safety
    /// `i` is in bounds of the buffer and written by no other task.
    #[inline(always)]
    pub(crate) unsafe fn put(self, i: usize, v: T) {
        unsafe { self.0.add(i).write(v) }
    }
}

/// Sets `v.len() = n`, keeping old contents and zero-filling only new slots, for buffers
/// that are about to be overwritten whole. Grows, never shrinks its allocation, so steady
/// frames pay no fill.
pub(crate) fn grow_to<T: Copy + bytemuck::Zeroable>(v: &mut Vec<T>, n: usize) {
    if v.len() < n {
        // Exact: amortised doubling would leave up to 2x the need allocated.
        v.reserve_exact(n - v.len());
        v.resize(n, T::zeroed());
    } else {
        v.truncate(n);
    }
}

/// Rows ahead whose boxes the gathers prefetch: they read the input at random (entries
/// are in column order, the input in the caller's), and without the hint the gather is
/// most of the sweep stage's time at a million boxes. PERF: `benches/pairs.rs` (1M).
pub(crate) const PREFETCH: usize = 16;

/// Hints the cache lines of `b` into L1 (a no-op off x86_64).
#[inline(always)]
pub(crate) fn prefetch<T>(b: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint and never faults; both addresses lie inside `*b`.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = b as *const T as *const i8;
        _mm_prefetch(p, _MM_HINT_T0);
        _mm_prefetch(p.add(std::mem::size_of::<T>() - 1), _MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = b;
}
