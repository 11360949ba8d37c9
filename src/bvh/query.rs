//! Region queries: the leaves whose boxes meet a given box.
//!
//! - Input: a built [`Bvh`] and a region (a closed box).
//! - Output: each leaf meeting the region, by position, to a visitor that may
//!   stop the walk.
//! - Cost: the nodes whose bounds meet the region: O(log n + k) for k leaves in scenes of
//!   boxes about as large as their spacing.
//! - Parallel: no; one query is one walk (batches of queries run in parallel above it).
//! - Allocation: none (a fixed stack of [`MAX_DEPTH`] subtrees).
//! - Source: the standard stack-based BVH walk (T. Karras, "Thinking parallel, part II:
//!   tree traversal on the GPU", NVIDIA, 2012).

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
        match self.leaves.len() {
            0 => return ControlFlow::Continue(()),
            1 => return if self.leaves[0].overlaps(region) { visit(0) } else { ControlFlow::Continue(()) },
            _ => {}
        }
        walk(&self.nodes, region, |_, _| true, visit)
    }
}

/// The stack walk every search of the tree shares: from the root (of at least two leaves)
/// into each child that `keep(node, child)` keeps and whose bounds meet `region`; each leaf
/// so reached goes to `leaf(position)`, which may stop the walk.
#[inline(always)]
pub(super) fn walk<const D: usize>(
    nodes: &[Node<D>],
    region: &Aabb<D>,
    mut keep: impl FnMut(&Node<D>, usize) -> bool,
    mut leaf: impl FnMut(usize) -> ControlFlow<()>,
) -> ControlFlow<()> {
    // Pending subtrees: at most one a level (the second child met), and no path is longer
    // than `MAX_DEPTH`.
    let mut stack = [0u32; MAX_DEPTH];
    let (mut sp, mut at) = (0usize, 0u32);
    loop {
        let nd = &nodes[at as usize];
        let mut next = None;
        for c in 0..2 {
            if !keep(nd, c) || !nd.meets(c, region) {
                continue;
            }
            let r = nd.child[c];
            if r & LEAF != 0 {
                leaf((r & !LEAF) as usize)?;
            } else if next.is_none() {
                next = Some(r);
            } else {
                stack[sp] = r;
                sp += 1;
            }
        }
        match next {
            Some(r) => at = r,
            None if sp > 0 => {
                sp -= 1;
                at = stack[sp];
            }
            None => return ControlFlow::Continue(()),
        }
    }
}
