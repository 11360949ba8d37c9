//! The crate's insides that its own benches, tests and examples reach for: seeded scene
//! generators ([`scene`], [`cliffs`]) and the kernels measured on their own ([`morton`],
//! [`radix_sort`], [`sort_pair_keys`]). Built for the crate's unit tests and behind the
//! non-default `internals` feature, hidden from the docs: no stability promise.

pub mod cliffs;
pub mod scene;

pub use crate::kernels::{morton, radix_sort};

use crate::Aabb;

/// The scene called `name`: one of [`scene::SCENES`] or a cliff scene of
/// [`cliffs::by_name`]; `None` for an unknown name.
pub fn by_name<const D: usize>(name: &str, n: usize, seed: u64) -> Option<Vec<Aabb<D>>> {
    scene::by_name(name, n, seed).or_else(|| cliffs::by_name(name, n, seed))
}

/// The pair stage alone: sorts unique pair keys `i << 32 | j` (`i < j < n_ids`), cut into
/// parts as the sweep's chunks leave them, into the ascending pairs `[i, j]`.
pub fn sort_pair_keys(parts: Vec<Vec<u64>>, n_ids: usize) -> Vec<[u32; 2]> {
    crate::kernels::pair_sort::finish(parts, n_ids)
}

/// The tree a static-only world builds on its first `update`, alone: the surface area
/// build (`Bvh::build_sah`, margin 0) over the boxes, collapsed into the four-wide tree
/// kept for walks. Returns its leaf count, so the build is not optimised away. `benches/queries.rs` (`build`) times a static-only
/// world's first update against it.
pub fn static_tree_build<const D: usize>(boxes: &[Aabb<D>]) -> usize {
    let mut tree = crate::bvh::Bvh::default();
    tree.build_sah(boxes, 0.0);
    tree.keep_for_walks();
    tree.ids.len()
}
