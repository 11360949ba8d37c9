//! The pair budget of one call: how many pair keys its sweeps may keep, shared by every
//! task that emits them, and whether they must stop.
//!
//! - Input: the bound (`Config::max_pairs`, or none), then the key counts the emitting
//!   tasks take from it a block at a time, and any allocation they could not make.
//! - Output: whether to go on ([`PairBudget::stopped`]), and the call's verdict
//!   ([`PairBudget::verdict`]).
//! - Cost: one atomic add a block of keys; one relaxed load where a task checks.
//! - Parallel: shared by reference between the tasks of one call.
//! - Allocation: none.
//! - Source: this crate.

use crate::Error;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering::Relaxed};

/// Still within the bound.
const GOING: u8 = 0;
/// Past the bound.
const OVER: u8 = 1;
/// An allocation for the keys failed.
const NO_MEMORY: u8 = 2;

/// Keys a task collects before it counts them against the budget: one atomic add a step
/// of keys, not one a key.
pub(crate) const BUDGET_STEP: usize = 4096;

/// The keys a call may keep, and whether its tasks must stop. INVARIANT: `state` moves
/// only away from `GOING`, and `taken` only grows.
#[derive(Debug)]
pub(crate) struct PairBudget {
    limit: Option<usize>,
    taken: AtomicUsize,
    state: AtomicU8,
}

impl PairBudget {
    /// A budget of `limit` keys (`None`: no bound).
    pub(crate) fn new(limit: Option<usize>) -> Self {
        Self { limit, taken: AtomicUsize::new(0), state: AtomicU8::new(GOING) }
    }

    /// Counts `k` more keys kept; false (and stops every task) where they pass the bound.
    #[inline]
    pub(crate) fn take(&self, k: usize) -> bool {
        let t = self.taken.fetch_add(k, Relaxed).saturating_add(k);
        match self.limit {
            Some(l) if t > l => {
                let _ = self.state.compare_exchange(GOING, OVER, Relaxed, Relaxed);
                false
            }
            _ => true,
        }
    }

    /// After a box's (or a block's) keys, `len` of them in the task's buffer, `counted` of
    /// those taken already: reports an allocation that `failed`, takes the new keys once
    /// [`BUDGET_STEP`] of them have gathered, and returns true where the task must stop.
    /// A task that ends takes its last keys with [`PairBudget::settle`].
    #[inline]
    pub(crate) fn account(&self, len: usize, counted: &mut usize, failed: bool) -> bool {
        if failed {
            self.out_of_memory();
        }
        if len - *counted >= BUDGET_STEP {
            self.take(len - *counted);
            *counted = len;
        }
        self.stopped()
    }

    /// Takes a task's keys not yet counted by [`PairBudget::account`]: `len` in its
    /// buffer, `counted` of them taken.
    #[inline]
    pub(crate) fn settle(&self, len: usize, counted: usize) {
        self.take(len - counted);
    }

    /// Records that an allocation for the keys failed, and stops every task.
    #[cold]
    pub(crate) fn out_of_memory(&self) {
        let _ = self.state.compare_exchange(GOING, NO_MEMORY, Relaxed, Relaxed);
    }

    /// Whether the tasks must stop (the keys kept so far will not be reported).
    #[inline]
    pub(crate) fn stopped(&self) -> bool {
        self.state.load(Relaxed) != GOING
    }

    /// `Ok` where every key fit, else the error to report.
    pub(crate) fn verdict(&self) -> Result<(), Error> {
        match self.state.load(Relaxed) {
            GOING => Ok(()),
            OVER => Err(Error::TooManyPairs { limit: self.limit.unwrap_or(usize::MAX) }),
            _ => Err(Error::OutOfMemory { pairs: self.taken.load(Relaxed) }),
        }
    }
}
