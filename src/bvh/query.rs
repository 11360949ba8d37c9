//! Region queries: the leaves whose boxes meet a given box.
//!
//! - Input: a built [`Bvh`] and a region (a closed box).
//! - Output: each leaf meeting the region, by position (with its box), to a visitor
//!   that may stop the walk.
//! - Cost: the nodes whose bounds meet the region: O(log n + k) for k leaves in scenes of
//!   boxes about as large as their spacing.
//! - Parallel: no; one query is one walk (batches of queries run in parallel above it).
//! - Allocation: none (a fixed stack of [`MAX_DEPTH`] subtrees, `stack`).
//! - Source: the standard stack-based BVH walk (T. Karras, "Thinking parallel, part II:
//!   tree traversal on the GPU", NVIDIA, 2012).

use super::stack::{buffer, Stack};
use super::{Bvh, Node, LEAF, MAX_DEPTH};
use crate::Aabb;
use std::ops::ControlFlow;

impl<const D: usize> Bvh<D> {
    /// Passes every leaf whose box meets `region` to `visit`, by position (see
    /// [`Bvh::leaves`], [`Bvh::ids`]), in no fixed order; stops when `visit` breaks.
    pub(crate) fn query(
        &self,
        region: &Aabb<D>,
        mut visit: impl FnMut(usize) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.query_boxes(region, |p, _| visit(p))
    }

    /// [`Bvh::query_boxes`] over the binary nodes.
    pub(super) fn query_binary(
        &self,
        region: &Aabb<D>,
        mut visit: impl FnMut(usize, &Aabb<D>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if self.nodes.is_empty() {
            return match self.leaves.first() {
                Some(b) if b.overlaps(region) => visit(0, b),
                _ => ControlFlow::Continue(()),
            };
        }
        walk(&self.nodes, &self.leaves, region, |_, _| true, visit)
    }
}

/// The stack walk every search of the tree shares: from the root (of at least two leaves)
/// into each child that `keep(node, child)` keeps and whose bounds meet `region`; each leaf
/// so reached (in a bucket, each of its leaves whose box meets `region`) goes to
/// `leaf(position, box)`, which may stop the walk. A single leaf's box is its parent's
/// stored bounds for it, so only a bucket reads `leaves`.
#[inline(always)]
pub(super) fn walk<const D: usize>(
    nodes: &[Node<D>],
    leaves: &[Aabb<D>],
    region: &Aabb<D>,
    mut keep: impl FnMut(&Node<D>, usize) -> bool,
    mut leaf: impl FnMut(usize, &Aabb<D>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    // Pending subtrees: at most one a level (the second child met), and no path is longer
    // than `MAX_DEPTH`.
    let mut buf = buffer::<u32, MAX_DEPTH>();
    let mut stack = Stack::new(&mut buf);
    let mut at = 0u32;
    loop {
        let nd = &nodes[at as usize];
        let mut next = None;
        for c in 0..2 {
            if !keep(nd, c) || !nd.meets(c, region) {
                continue;
            }
            let r = nd.child[c];
            if r & LEAF != 0 {
                leaf_or_bucket(r, nd.last[c], || nd.child_box(c), leaves, region, &mut leaf)?;
            } else if next.is_none() {
                next = Some(r);
            } else {
                stack.push(r);
            }
        }
        match next {
            Some(r) => at = r,
            None => match stack.pop() {
                Some(r) => at = r,
                None => return ControlFlow::Continue(()),
            },
        }
    }
}

/// A leaf child `r` (`LEAF | first`, ending at `last`) met by `region`: a single leaf
/// (its box the child's bounds, `bounds`) to `leaf`, or each leaf of a bucket whose box
/// meets `region`.
#[inline(always)]
pub(super) fn leaf_or_bucket<const D: usize>(
    r: u32,
    last: u32,
    bounds: impl FnOnce() -> Aabb<D>,
    leaves: &[Aabb<D>],
    region: &Aabb<D>,
    leaf: &mut impl FnMut(usize, &Aabb<D>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let (first, last) = ((r & !LEAF) as usize, last as usize);
    if first == last {
        return leaf(first, &bounds());
    }
    for (p, b) in leaves[first..=last].iter().enumerate() {
        if b.overlaps(region) {
            leaf(first + p, b)?;
        }
    }
    ControlFlow::Continue(())
}
