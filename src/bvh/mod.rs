//! The tree stage: a bounding-volume hierarchy over boxes, for layouts that defeat sweeps
//! and columns, and for the queries that ask where one box lies among many. Built two
//! ways: as a linear BVH (LBVH) over boxes in Morton order (`build`: fast, for trees made
//! every frame), or by the surface area heuristic (`sah`: several times slower to build,
//! about twice as fast to walk, for trees built once and walked often: the world's static
//! objects).
//!
//! - Input: boxes (grown by the margin; inverted ones are dead and left out).
//! - Output: [`Bvh`], a binary tree whose leaves are the live boxes (in Morton order of
//!   their centres from the LBVH build), each subtree's leaves at consecutive positions;
//!   from it, every overlapping pair ([`Bvh::pairs_into`]), the boxes meeting a region
//!   ([`Bvh::query`]), or the leaves a ray enters ([`Bvh::cast`]).
//! - Cost: the LBVH build O(n): one pass for the codes, a radix sort of 32 code bits, one
//!   pass for the nodes; the surface area build O(n log n). All pairs: O(n log n + k) for k pairs where boxes are not much longer than
//!   their neighbours' spacing, and, unlike a sweep or the columns, still near that where
//!   long boxes cross each other on every axis (a staircase, sticks): a subtree is entered
//!   only where its bounds meet the box.
//! - Parallel: the codes, the sort and the leaf gather in chunks; the nodes by recursion
//!   split with `rayon::join`; the pair search over fixed chunks of leaves. The tree (so
//!   every count) depends only on the boxes, never on the thread count, and the pairs are
//!   sorted, so the output is the same bytes for any thread count.
//! - Allocation: the tree keeps its nodes, leaves, keys and per-chunk pair lists between
//!   builds; a steady stream of scenes of similar size allocates only the output's growth.
//! - Source: T. Karras, "Maximizing parallelism in the construction of BVHs, octrees, and
//!   k-d trees" (HPG 2012): the binary radix tree over sorted Morton codes, each internal
//!   node split where the codes' highest differing bit changes. The Morton-order article's
//!   "internal references between cells, for a full octree" is this tree. Here it is built
//!   top-down with `rayon::join` (the same tree as Karras' per-node search, its nodes
//!   numbered depth first), and each node stores its two children's bounds, so a step
//!   reads one node. The surface area build: I. Wald, "On fast construction of SAH-based
//!   bounding volume hierarchies" (2007).
//!
//! `build` makes the LBVH, `sah` the surface area tree, `pairs` finds every overlapping
//! pair of its leaves, `query` visits the leaves meeting a box, `ray` the leaves a ray
//! enters (`sweep`: or a moving box); `best` walks several trees at once in order of a
//! key (an entry `t`, a distance); `bucket` and `wide` make a tree kept for walks
//! (buckets of leaves under four-wide nodes), which `query`, `ray` and `best` walk the
//! same way; `stack` is the walks' fixed stack of pending subtrees.

mod best;
mod between;
mod bucket;
mod build;
mod pairs;
mod query;
mod ray;
mod sah;
mod stack;
mod sweep;
#[cfg(test)]
mod tests;
mod wide;

pub(crate) use best::{distance, with_frontier, Enters, Frontier, Key, Near};
pub(crate) use ray::{RayTest, Slab};
pub(crate) use sweep::SweepTest;

use crate::{Aabb, Error};
use std::ops::ControlFlow;

/// What a region walk finds: each leaf whose box meets the region, by position and box,
/// and each run of consecutive leaves under a child whose bounds lie within the region
/// (every leaf of it meets the region; by default each goes to `leaf`). Either may stop
/// the walk.
pub(crate) trait Finds<const D: usize> {
    /// Leaf `p`, whose box `b` meets the region.
    fn leaf(&mut self, p: usize, b: &Aabb<D>) -> ControlFlow<()>;

    /// Leaves `first..=last` of `leaves`, each of which meets the region.
    #[inline(always)]
    fn run(&mut self, first: usize, last: usize, leaves: &[Aabb<D>]) -> ControlFlow<()> {
        for (p, b) in leaves[first..=last].iter().enumerate() {
            self.leaf(first + p, b)?;
        }
        ControlFlow::Continue(())
    }
}

/// A closure as a [`Finds`] that takes each leaf of a run alone.
pub(crate) struct Each<F>(pub(crate) F);

impl<const D: usize, F: FnMut(usize, &Aabb<D>) -> ControlFlow<()>> Finds<D> for Each<F> {
    #[inline(always)]
    fn leaf(&mut self, p: usize, b: &Aabb<D>) -> ControlFlow<()> {
        (self.0)(p, b)
    }
}

/// A child reference with this bit set is a leaf: the low bits are its position (in a
/// tree kept for walks, the first of a bucket of leaves that ends at the child's `last`).
/// Without it, the index of an internal node.
const LEAF: u32 = 1 << 31;

/// The deepest a tree goes: each level splits on a lower bit of the 64-bit keys (32 code
/// bits above a 32-bit box index), so no path is longer, and a traversal's stack of
/// pending subtrees fits a fixed array.
const MAX_DEPTH: usize = 65;

/// An internal node: its two children's bounds (so that a step down reads one node) and
/// references, and the last leaf position under each child (the all-pairs search enters
/// only subtrees with leaves after its own).
///
/// Aligned to a cache line: a walk is bound by the loads of the nodes it visits (a tree
/// over a million boxes is some 64 MB of nodes), and a 3D node (64 bytes) at any other
/// offset spans two lines. PERF: benches/queries.rs (`regions_small`).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct Node<const D: usize> {
    pub(crate) min: [[f32; D]; 2],
    pub(crate) max: [[f32; D]; 2],
    /// `LEAF | position`, or an internal node's index.
    pub(crate) child: [u32; 2],
    /// The last leaf position under each child.
    pub(crate) last: [u32; 2],
}

impl<const D: usize> Default for Node<D> {
    fn default() -> Self {
        Self { min: [[0.0; D]; 2], max: [[0.0; D]; 2], child: [0; 2], last: [0; 2] }
    }
}

impl<const D: usize> Node<D> {
    /// Child `c`'s bounds as a box: a leaf child's box exactly.
    #[inline(always)]
    pub(crate) fn child_box(&self, c: usize) -> Aabb<D> {
        Aabb { min: self.min[c], max: self.max[c] }
    }

    /// Whether child `c`'s bounds meet `b` (closed boxes).
    #[inline(always)]
    pub(crate) fn meets(&self, c: usize, b: &Aabb<D>) -> bool {
        let mut ok = true;
        for k in 0..D {
            ok &= (self.min[c][k] <= b.max[k]) & (b.min[k] <= self.max[c][k]);
        }
        ok
    }
}

/// A bounding-volume hierarchy over boxes (module docs).
///
/// INVARIANTS ([`Bvh::validate`]): `leaves`, `ids` have one entry a live box, each
/// subtree's at consecutive positions; `nodes` has `leaves.len() - 1` internal nodes
/// (fewer in a tree kept for walks, whose children may be buckets of leaves), node 0
/// the root; each child's stored bounds are the union of the leaves under it, and its
/// `last` the greatest leaf position under it; every leaf and every internal node but
/// the root is under exactly one node's child.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bvh<const D: usize> {
    pub(crate) nodes: Vec<Node<D>>,
    /// A tree kept for walks: its nodes, four-wide (`wide`); `nodes` is then empty.
    pub(crate) wide: Vec<wide::Wide<D>>,
    /// The live boxes (grown by the margin), in the build's order.
    pub(crate) leaves: Vec<Aabb<D>>,
    /// The caller's index of each leaf.
    pub(crate) ids: Vec<u32>,
    /// The node whose child each internal node is (the root's: 0), and each leaf's
    /// parent node, for [`Bvh::enlarge`].
    parents: Vec<u32>,
    leaf_parents: Vec<u32>,
    /// Sort keys (`code << 32 | index`) and their radix scratch, kept between builds.
    keys: Vec<u64>,
    scratch: Vec<u64>,
    /// Pair keys of the all-pairs search, one list a chunk of leaves, kept between calls.
    parts: Vec<Vec<u64>>,
    /// The other set's boxes in Morton order (`code << 32 | index`), for a join whose
    /// input is incoherent ([`Bvh::pairs_against`]).
    order: Vec<u64>,
}

impl<const D: usize> Bvh<D> {
    /// Live leaves.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// Makes the tree one for walks only: subtrees of at most [`bucket::BUCKET`] leaves become
    /// buckets (`bucket::collapse`), the binary nodes are folded into four-wide ones
    /// (`wide`), and everything a region or ray walk does not read is given back. For a tree that is walked until it is rebuilt, never grown by
    /// [`Bvh::enlarge`] nor searched for all its pairs (the next build allocates the rest
    /// again).
    pub(crate) fn keep_for_walks(&mut self) {
        self.collapse();
        self.widen();
        self.keys = Vec::new();
        self.scratch = Vec::new();
        self.parents = Vec::new();
        self.leaf_parents = Vec::new();
        self.parts = Vec::new();
        self.order = Vec::new();
    }

    /// [`Bvh::query`] that also passes each leaf's box: the walk over the four-wide
    /// nodes of a tree kept for walks (`wide`), else over the binary ones (`query`). The
    /// choice is made here, so that neither walk's module knows of the other's.
    pub(crate) fn query_boxes(
        &self,
        region: &Aabb<D>,
        visit: impl FnMut(usize, &Aabb<D>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.query_finds(region, &mut Each(visit))
    }

    /// [`Bvh::query_boxes`] to a [`Finds`], which takes the leaves under a child whose
    /// bounds lie within `region` as one run (over four-wide nodes; a binary tree's walk
    /// passes each leaf).
    pub(crate) fn query_finds(&self, region: &Aabb<D>, finds: &mut impl Finds<D>) -> ControlFlow<()> {
        if self.wide.is_empty() {
            self.query_binary(region, |p, b| finds.leaf(p, b))
        } else {
            wide::walk_wide(&self.wide, &self.leaves, region, finds)
        }
    }

    /// Passes each leaf the ray (or swept box) enters at `t <= *cut` to
    /// `visit(position, t, cut)`, nearer subtrees first; `visit` may lower `*cut`
    /// (subtrees entered later are then skipped) or stop the walk. Over the four-wide nodes of a tree kept for walks, else over
    /// the binary ones (`ray`).
    pub(crate) fn cast<S: Slab<D>>(
        &self,
        ray: &S,
        cut: &mut f32,
        visit: impl FnMut(usize, f32, &mut f32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if self.wide.is_empty() {
            self.cast_binary(ray, cut, visit)
        } else {
            wide::cast_wide(&self.wide, &self.leaves, ray, cut, visit)
        }
    }

    /// Gives back the buffers of [`Bvh::pairs_against`] (per-chunk keys, the other
    /// set's order): for a tree joined now and then, whose joins are sized by the other
    /// set.
    pub(crate) fn release_join_buffers(&mut self) {
        self.parts = Vec::new();
        self.order = Vec::new();
    }

    /// Heap bytes held, from capacities.
    pub(crate) fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.nodes.capacity() * size_of::<Node<D>>()
            + self.wide.capacity() * size_of::<wide::Wide<D>>()
            + self.leaves.capacity() * size_of::<Aabb<D>>()
            + 4 * (self.ids.capacity() + self.parents.capacity() + self.leaf_parents.capacity())
            + 8 * (self.keys.capacity() + self.scratch.capacity())
            + self.parts.iter().map(|p| 8 * p.capacity()).sum::<usize>()
            + 8 * self.order.capacity()
    }

    /// Checks every invariant of the type (O(n)); for tests and debug builds.
    pub(crate) fn validate(&self) -> Result<(), Error> {
        let bad = |detail: String| Err(Error::Invariant { detail: format!("bvh: {detail}") });
        let n = self.leaves.len();
        if self.ids.len() != n {
            return bad(format!("{} ids for {n} leaves", self.ids.len()));
        }
        if !self.wide.is_empty() {
            return self.validate_wide();
        }
        // Buckets make fewer nodes; a tree of two leaves or more has a root.
        if self.nodes.len() > n.saturating_sub(1) || (n >= 2) == self.nodes.is_empty() {
            return bad(format!("{} nodes for {n} leaves", self.nodes.len()));
        }
        if n < 2 {
            return Ok(());
        }
        let mut seen_leaf = vec![false; n];
        let mut seen_node = vec![false; self.nodes.len()];
        seen_node[0] = true;
        // (node, first leaf, last leaf) of every internal node, from the root down.
        let mut todo = vec![0usize];
        while let Some(i) = todo.pop() {
            let nd = &self.nodes[i];
            for c in 0..2 {
                let r = nd.child[c];
                let (lo, hi, last) = if r & LEAF != 0 {
                    // A leaf, or a bucket of the leaves from it to the child's `last`.
                    let (first, last) = ((r & !LEAF) as usize, nd.last[c] as usize);
                    if first > last || last >= n || seen_leaf[first..=last].iter().any(|&s| s) {
                        return bad(format!("leaves {first}..={last} out of range or referenced twice"));
                    }
                    seen_leaf[first..=last].fill(true);
                    let u = self.leaves[first..=last].iter().fold(self.leaves[first], |u, b| u.union(b));
                    (u.min, u.max, last)
                } else {
                    let j = r as usize;
                    if j >= self.nodes.len() || std::mem::replace(&mut seen_node[j], true) {
                        return bad(format!("node {j} out of range or referenced twice"));
                    }
                    todo.push(j);
                    let (lo, hi) = self.union_below(j);
                    (lo, hi, self.nodes[j].last[1] as usize)
                };
                if lo != nd.min[c] || hi != nd.max[c] {
                    return bad(format!("node {i} child {c}: stored bounds are not its leaves' union"));
                }
                if nd.last[c] as usize != last {
                    return bad(format!("node {i} child {c}: last leaf {} is not {last}", nd.last[c]));
                }
            }
        }
        if !seen_leaf.iter().all(|&s| s) || !seen_node.iter().all(|&s| s) {
            return bad("a leaf or node is unreachable from the root".into());
        }
        Ok(())
    }

    /// Grows leaf `pos`'s box to take in `b`, and its ancestors' stored bounds with it:
    /// O(depth), and the tree stays exact (each stored bound is still the union of the
    /// leaves under it). The tree gets looser as leaves grow; its owner rebuilds it.
    /// Returns whether the leaf grew.
    pub(crate) fn enlarge(&mut self, pos: usize, b: &Aabb<D>) -> bool {
        let grow = |lo: &mut [f32; D], hi: &mut [f32; D]| {
            let mut changed = false;
            for k in 0..D {
                changed |= (b.min[k] < lo[k]) | (b.max[k] > hi[k]);
                lo[k] = lo[k].min(b.min[k]);
                hi[k] = hi[k].max(b.max[k]);
            }
            changed
        };
        assert_eq!(self.leaf_parents.len(), self.leaves.len(), "enlarge on a tree kept for walks");
        let leaf = &mut self.leaves[pos];
        if !grow(&mut leaf.min, &mut leaf.max) {
            return false;
        }
        if self.nodes.is_empty() {
            return true;
        }
        let (mut child, mut at) = (LEAF | pos as u32, self.leaf_parents[pos] as usize);
        loop {
            let nd = &mut self.nodes[at];
            let c = (nd.child[1] == child) as usize;
            if !grow(&mut nd.min[c], &mut nd.max[c]) || at == 0 {
                return true;
            }
            child = at as u32;
            at = self.parents[at] as usize;
        }
    }

    /// The union of node `i`'s two children's stored bounds.
    fn union_below(&self, i: usize) -> ([f32; D], [f32; D]) {
        let nd = &self.nodes[i];
        (
            std::array::from_fn(|k| nd.min[0][k].min(nd.min[1][k])),
            std::array::from_fn(|k| nd.max[0][k].max(nd.max[1][k])),
        )
    }
}
