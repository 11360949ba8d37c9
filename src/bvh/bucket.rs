//! Buckets: a built tree made into one for walks only, where each subtree of at most
//! [`BUCKET`] leaves becomes one child that names its leaves as a range.
//!
//! - Input: a built binary tree (every child one leaf or one node). Output: the same
//!   tree with fewer nodes: a child over at most [`BUCKET`] leaves is a bucket
//!   (`LEAF | first`, its `last` the range's end), its stored bounds unchanged (they are
//!   already the union of its leaves). The leaves, ids and their order are untouched.
//! - Why: the world's static tree is walked, never grown, and a cache-line node for each
//!   leaf was the largest share of the world's bytes an object; with buckets of up to
//!   eight there are about a fifth as many nodes, and a walk that reaches a bucket tests
//!   its few boxes, which lie side by side, instead of stepping down more levels of
//!   nodes, each a likely cache miss. PERF: benches/world.rs (`build`: memory;
//!   `move_10`), benches/queries.rs (`regions_small`, `regions_large`).
//! - Cost: O(nodes), one pass to count the kept nodes and one to copy them; sequential
//!   (a few milliseconds for a million leaves, against the build's hundreds).
//! - Allocation: the new nodes, exactly; the old ones are given back.
//! - Source: the leaves of several primitives that SAH builders make (I. Wald, "On fast
//!   construction of SAH-based bounding volume hierarchies", 2007), here made by a pass
//!   over the binary tree instead of a cost test in the build.

use super::{Bvh, Node, LEAF};

/// The most leaves a bucket holds: four, eight and sixteen walked regions about alike
/// (eight and sixteen a little faster than four), and eight keeps a bucket's boxes
/// within three cache lines in 3D. PERF: benches/queries.rs, benches/world.rs.
pub(super) const BUCKET: usize = 8;

impl<const D: usize> Bvh<D> {
    /// Makes every child over at most [`BUCKET`] leaves a bucket (module docs). The
    /// tree's links for [`Bvh::enlarge`] no longer hold: its caller gives them back.
    pub(super) fn collapse(&mut self) {
        if self.nodes.is_empty() {
            return;
        }
        let old = std::mem::take(&mut self.nodes);
        let mut nodes = Vec::with_capacity(kept(&old, 0, 0));
        copy(&old, 0, 0, &mut nodes);
        self.nodes = nodes;
    }
}

/// The leaves under child `c` of `nd`, whose first leaf is `first`.
fn under<const D: usize>(nd: &Node<D>, c: usize, first: usize) -> usize {
    nd.last[c] as usize + 1 - start(nd, c, first)
}

/// The first leaf under child `c` of `nd`, whose first leaf is `first`.
fn start<const D: usize>(nd: &Node<D>, c: usize, first: usize) -> usize {
    if c == 0 {
        first
    } else {
        nd.last[0] as usize + 1
    }
}

/// The nodes kept at and below node `i` (first leaf `first`). Recursion depth is the
/// tree's, at most `MAX_DEPTH`.
fn kept<const D: usize>(old: &[Node<D>], i: usize, first: usize) -> usize {
    let nd = &old[i];
    1 + (0..2)
        .filter(|&c| nd.child[c] & LEAF == 0 && under(nd, c, first) > BUCKET)
        .map(|c| kept(old, nd.child[c] as usize, start(nd, c, first)))
        .sum::<usize>()
}

/// Copies node `i` (first leaf `first`) and the nodes kept below it to the end of
/// `nodes`, in preorder; returns its new index.
fn copy<const D: usize>(old: &[Node<D>], i: usize, first: usize, nodes: &mut Vec<Node<D>>) -> u32 {
    let at = nodes.len();
    let mut nd = old[i];
    nodes.push(nd);
    for c in 0..2 {
        let r = nd.child[c];
        if r & LEAF != 0 {
            continue;
        }
        let s = start(&nd, c, first);
        nd.child[c] =
            if under(&nd, c, first) <= BUCKET { LEAF | s as u32 } else { copy(old, r as usize, s, nodes) };
    }
    nodes[at] = nd;
    at as u32
}
