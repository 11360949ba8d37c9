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
//! one entry per aligned Morton cell of the other axes (a column, as long as the world
//! along the sweep axis) that it touches, the entries are radix sorted by column and by
//! position along the sweep axis, gathered into structure-of-arrays rows, and each column
//! is swept with sweep-and-prune; then the pair keys are sorted. [`brute_force_pairs`] is
//! the reference every algorithm is tested against. Everything runs on the caller's rayon
//! pool: `pool.install(|| find_pairs(&boxes))` sets the thread count, and the output is
//! the same bytes for any thread count.
//!
//! Threads come with the default feature `parallel` (rayon). Without it
//! (`default-features = false`), every call runs on the calling thread, a
//! `pool.install` around it changes nothing, and the output is the same bytes; the crate
//! then builds for `wasm32-unknown-unknown`, where, having no clock, it reports every time
//! in [`Stats`] and [`WorldStats`] as zero and a [`World`] chooses how to find each frame
//! by counts alone (the times change, never the output).
//!
//! For a scene that lives from frame to frame, a [`World`] keeps the objects and their
//! pairs: insert, move ([`World::set_aabb`]) and remove objects by [`Handle`], give each a
//! [`Kind`] (static objects never pair with each other) and a [`Filter`], and each
//! [`World::update`] returns the pairs that began and ended ([`Events`]).
//!
//! The modules, in the order a frame meets them: `choose` (scan the scene, pick the
//! algorithm), `columns` (the column pipeline, a file a stage), `algorithms` (brute force,
//! sweep-and-prune, RDC) and `kernels` (Morton codes, radix sort, pair sort, SIMD,
//! parallel plumbing), with `bvh` (the tree for layouts that defeat columns, and for the
//! world); `pipeline` drives them, and `world` keeps a persistent scene on top (a file a
//! part: handles, store, dirty set, pair store, frame, validate). Threads and the clock
//! come through `par` and `time` alone. Dependencies point one way: world -> pipeline ->
//! choose, columns, bvh -> algorithms -> kernels -> the types.
#![deny(missing_docs, missing_debug_implementations)]

mod aabb;
mod algorithms;
mod between;
mod bvh;
mod choose;
mod columns;
mod config;
mod error;
mod interop;
mod kernels;
mod par;
mod pipeline;
#[cfg(feature = "serde")]
mod serde_impls;
mod stats;
mod time;
mod validate;
mod world;

#[cfg(any(test, feature = "internals"))]
#[doc(hidden)]
pub mod internals;

/// The guide (`docs/guide.md`): embedding the world in an engine loop, and GIS joins and
/// lookups. Its examples run as doc tests.
#[doc = include_str!("../docs/guide.md")]
pub mod guide {}

pub use aabb::{Aabb, Aabb2, Aabb3};
pub use algorithms::brute_force::brute_force_pairs;
pub use algorithms::rdc::{Clusters, Rdc};
pub use between::{find_pairs_between, find_pairs_between_with};
pub use config::{Config, Method, Refine};
pub use error::{BoxProblem, Error};
#[cfg(feature = "glam")]
pub use interop::{as_points2, as_points3};
pub use pipeline::{find_pairs, find_pairs_with, release_cached_buffers, Broadphase};
pub use stats::Stats;
pub use world::{
    Batch, CastAction, CastHit, Departed, Events, Filter, FrameSummary, Handle, Kind, Object, QueryFilter,
    Ray, Sphere, Sweep, World, World2, World3, WorldStats,
};
