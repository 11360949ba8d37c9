//! Kernels: the hot building blocks the stages are made of. They know boxes and keys,
//! never an algorithm or a stage: every dependency of this module points down to
//! `crate::aabb` or to another kernel. Each file opens with its own header (input,
//! output, cost, threads, allocation, source).
//!
//! - [`morton`]: Morton codes by lookup-table bit interlacing, and the grid quantiser.
//! - [`radix_sort`]: stable LSD radix sort of integer keys, sequential or parallel.
//! - [`pair_sort`]: the pair keys and their parallel MSD bucket sort into the output.
//! - [`simd`]: the run-time choice of instruction set, eight-lane vectors, bit masks.
//! - [`par`]: work-item sizes, the raw pointer for disjoint parallel writes, buffer growth.
//! - [`sample`]: sample positions that do not alias with periodic ids.

pub mod morton;
pub(crate) mod pair_sort;
pub(crate) mod par;
pub mod radix_sort;
pub(crate) mod sample;
pub(crate) mod simd;
