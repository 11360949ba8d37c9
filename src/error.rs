//! The crate's one error type. Every public entry point validates its input at the boundary
//! and reports the first problem it finds; hot loops never return errors.

use std::fmt;

/// What is wrong with a box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BoxProblem {
    /// A coordinate is NaN.
    NaN,
    /// A coordinate is +/- infinity.
    Infinite,
    /// `min > max` on this axis.
    MinGreaterThanMax {
        /// The axis (0 = x).
        axis: usize,
    },
}

/// Errors from the public API.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// Box `index` (the first offending one) is not a valid box.
    InvalidBox {
        /// Index of the first invalid box in the input slice.
        index: usize,
        /// What is wrong with it.
        problem: BoxProblem,
    },
    /// More boxes than a `u32` can index.
    TooManyBoxes {
        /// The number of boxes passed.
        len: usize,
    },
    /// A `Config` field is out of range.
    InvalidConfig {
        /// The field.
        field: &'static str,
        /// Why it was refused.
        reason: &'static str,
    },
    /// The call would report more pairs than [`Config::max_pairs`](crate::Config::max_pairs)
    /// allows. It stopped once the bound was passed, without allocating beyond it; the
    /// output is empty and the finder stays usable.
    TooManyPairs {
        /// The bound that was passed.
        limit: usize,
    },
    /// The pairs could not be allocated (the allocator refused, as `try_reserve` reports
    /// it). The output is empty and the finder stays usable.
    OutOfMemory {
        /// Pairs found when the allocation failed (a lower bound on all of them).
        pairs: usize,
    },
    /// A structure's `validate()` found one of its invariants broken (a bug in this crate:
    /// please report it with the detail).
    Invariant {
        /// Which invariant, and where.
        detail: String,
    },
    /// A [`Handle`](crate::Handle) that does not name a live object of the
    /// [`World`](crate::World) it was passed to: its object was removed, or its slot is
    /// out of range.
    StaleHandle {
        /// The handle's raw value, `(generation << 32) | index`
        /// ([`Handle::raw`](crate::Handle::raw)).
        handle: u64,
    },
    /// Query `index` of a call (0 for a single query) is not a valid query: a point, a
    /// ray origin or a ball's centre that is not finite, a cast's direction that is zero
    /// or not finite, a cast's length or a nearest query's `max_distance` that is NaN or
    /// negative, a radius that is not finite or negative, or an origin shift
    /// ([`World::shift_origin`](crate::World::shift_origin)) that is not finite or takes a
    /// box past `f32`'s range.
    InvalidQuery {
        /// Index of the first invalid query in the input slice.
        index: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidBox { index, problem } => match problem {
                BoxProblem::NaN => write!(f, "box {index} has a NaN coordinate"),
                BoxProblem::Infinite => write!(f, "box {index} has an infinite coordinate"),
                BoxProblem::MinGreaterThanMax { axis } => {
                    write!(f, "box {index} has min > max on axis {axis}")
                }
            },
            Error::TooManyBoxes { len } => {
                write!(f, "{len} boxes is more than a u32 index can name")
            }
            Error::InvalidConfig { field, reason } => write!(f, "config.{field}: {reason}"),
            Error::TooManyPairs { limit } => write!(f, "more than {limit} pairs (Config::max_pairs)"),
            Error::OutOfMemory { pairs } => write!(f, "out of memory after {pairs} pairs"),
            Error::Invariant { detail } => write!(f, "broken invariant: {detail}"),
            Error::StaleHandle { handle } => write!(f, "handle {handle:#x} is stale"),
            Error::InvalidQuery { index, reason } => write!(f, "query {index}: {reason}"),
        }
    }
}

impl std::error::Error for Error {}
