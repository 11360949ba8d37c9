//! # broadphase
//!
//! Every pair of overlapping axis-aligned boxes among millions, exactly, on all cores.
//!
//! ```
//! use broadphase::{find_pairs, Aabb3};
//! let boxes = [
//!     Aabb3::new([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]),
//!     Aabb3::new([1.0, 0.5, 0.5], [2.0, 2.0, 2.0]), // touches box 0: closed boxes overlap
//!     Aabb3::new([5.0, 5.0, 5.0], [6.0, 6.0, 6.0]),
//! ];
//! assert_eq!(find_pairs(&boxes).unwrap(), vec![[0, 1]]);
//! ```
//!
//! First, one O(n) pass validates the boxes and estimates what a sweep-and-prune along the
//! best axis would cost ([`Method::Auto`]). Small, sparse and layered scenes are swept
//! whole. Dense ones take the column pipeline (see `docs/architecture.md`): each box gets
//! one entry per aligned [`morton`] cell of the other axes (a column, as long as the world
//! along the sweep axis) that it touches, the entries are [`radix_sort`]ed by column and by
//! position along the sweep axis, gathered into a structure-of-arrays store, and each
//! column is swept with [`sap`] sweep-and-prune; then the pair keys are sorted.
//! [`brute_force_pairs`] is the reference every algorithm
//! is tested against. Everything runs on the caller's rayon pool:
//! `pool.install(|| find_pairs(&boxes))` sets the thread count, and the output is the same
//! bytes for any thread count.
#![deny(missing_docs, missing_debug_implementations)]

mod aabb;
mod brute_force;
mod columns;
mod config;
mod error;
mod isa;
mod pairs;
mod pipeline;
mod stats;
mod validate;

pub mod morton;
pub mod radix_sort;
pub mod rdc;
pub mod sap;
pub mod scene;

pub use aabb::{Aabb, Aabb2, Aabb3};
pub use brute_force::brute_force_pairs;
pub use config::{Config, Method, Refine};
pub use error::{BoxProblem, Error};
pub use pipeline::{find_pairs, find_pairs_with, Broadphase, SWEEP_MAX_PER_BOX};
pub use rdc::{Clusters, Rdc};
pub use stats::Stats;
