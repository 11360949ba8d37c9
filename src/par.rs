//! The crate's one door to threads: rayon under the default `parallel` feature, and
//! sequential stand-ins with the same names and meaning without it. Every stage imports
//! `crate::par::prelude::*` and calls `par::join`, `par::scope` and
//! `par::current_num_threads` from here, never `rayon` itself, so that the crate builds
//! with no thread library at all (`--no-default-features`, e.g. for
//! `wasm32-unknown-unknown`).
//!
//! - With `parallel`: re-exports of rayon, nothing more; every stage runs on the caller's
//!   rayon pool.
//! - Without it (`seq`): every stage runs on the calling thread, in the order of its
//!   input. The stand-ins keep rayon's meaning: `join` runs its left closure, then its
//!   right; a `scope` runs its spawned jobs (one after the other, none nested in another's
//!   stack) before it returns; `fold` folds the whole input into one accumulator;
//!   `current_num_threads` is 1 and `current_thread_index` is `Some(0)` (the calling
//!   thread is the one worker). The output is the same bytes either way: every stage
//!   already gives the same bytes for any thread count, one included.
//! - Cost: none of its own. Allocation: a `scope` keeps its pending jobs in a `Vec`.
//! - Source: rayon's API (`rayon::prelude`, `rayon::join`, `rayon::scope`).

#[cfg(feature = "parallel")]
pub(crate) use rayon::{current_num_threads, current_thread_index, join, scope, Scope};

/// The iterator traits: rayon's, or their sequential stand-ins.
pub(crate) mod prelude {
    #[cfg(feature = "parallel")]
    pub(crate) use rayon::prelude::*;

    #[cfg(not(feature = "parallel"))]
    pub(crate) use super::seq::prelude::*;
}

// Built in tests with the feature as well, so that its unit tests compare it with rayon.
#[cfg(any(test, not(feature = "parallel")))]
#[cfg_attr(feature = "parallel", allow(dead_code))]
pub(crate) mod seq;

#[cfg(not(feature = "parallel"))]
pub(crate) use seq::{current_num_threads, current_thread_index, join, scope, Scope};
