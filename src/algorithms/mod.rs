//! Whole algorithms that find pairs (or clusters) on their own, one a file. Each is
//! exact, and each is tested against [`brute_force`], the reference.
//!
//! - [`brute_force`]: every pair tested, O(n^2); the oracle.
//! - [`sap`]: sweep-and-prune along one axis (Terdiman's box pruning): the whole-scene
//!   sweep, the sorted structure-of-arrays set RDC's groups use, and the eight-lane overlap
//!   mask the column sweep also uses.
//! - [`rdc`]: Recursive Dimensional Clustering (Rabin): clusters, their pairs, and the
//!   refinement of crowded column runs.
//! - [`grid`]: a hierarchical uniform grid (spatial hash), one entry a box at its lower
//!   corner on the level that fits its size, big boxes on coarser levels of their own.
//! - [`quadtree`]: a quadtree (2D), octree (3D) or binary tree of intervals (1D) built by
//!   sorting node keys in Morton order, each box in the finest node that holds it, each
//!   pair found from the box in the coarser node.

pub(crate) mod brute_force;
pub(crate) mod grid;
pub(crate) mod quadtree;
pub(crate) mod rdc;
pub(crate) mod sap;
