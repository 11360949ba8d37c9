//! Every overlapping pair of the tree's leaves: each leaf descends from the root into the
//! subtrees that meet its box and hold leaves after it, so each pair is found once, by its
//! first leaf in Morton order.
//!
//! - Input: a built [`Bvh`], the caller's box count, a [`PairBudget`].
//! - Output: every pair `[i, j]`, `i < j` (the caller's indices), sorted ascending, unique.
//! - Cost: per leaf, the nodes whose bounds meet its box: O(log n + k) for k pairs in
//!   scenes whose boxes are about as long as their neighbours' spacing; long boxes cost
//!   the subtrees they cross, not every box along their length as in a sweep. Then the
//!   crate's pair sort, O(k).
//! - Parallel: fixed chunks of leaves ([`chunk_len`]), each with its own key list; the
//!   pair sort makes the output independent of which thread found what.
//! - Allocation: the per-chunk key lists are kept in the tree and reused; the output grows
//!   as needed (`try_reserve`: a refused allocation is `Error::OutOfMemory`).
//! - Source: T. Karras, "Thinking parallel, part III: tree construction on the GPU" and
//!   "part II: tree traversal" (NVIDIA, 2012): one independent traversal a leaf, pruned to
//!   the leaves after it.

use super::{Bvh, LEAF};
use crate::kernels::pair_sort::{finish_parts, key, PairBudget};
use crate::kernels::par::chunk_len;
use crate::par::prelude::*;
use std::ops::ControlFlow;

impl<const D: usize> Bvh<D> {
    /// Every overlapping pair of leaves into `out` (cleared first), as the caller's
    /// indices, of `n_ids` boxes in all; returns the leaf boxes tested. Stops early once
    /// `budget` stops (the caller reports its verdict and clears `out`).
    pub(crate) fn pairs_into(&mut self, n_ids: usize, budget: &PairBudget, out: &mut Vec<[u32; 2]>) -> usize {
        out.clear();
        let n = self.leaves.len();
        if n < 2 {
            return 0;
        }
        let chunk = chunk_len(n);
        let chunks = n.div_ceil(chunk);
        if self.parts.len() < chunks {
            self.parts.resize_with(chunks, Vec::new);
        }
        let mut parts = std::mem::take(&mut self.parts);
        let (nodes, leaves, ids) = (&self.nodes, &self.leaves, &self.ids);
        let tests: usize = parts[..chunks]
            .par_iter_mut()
            .enumerate()
            .map(|(c, part)| {
                part.clear();
                let (mut counted, mut tests, mut failed) = (0, 0, false);
                for i in c * chunk..((c + 1) * chunk).min(n) {
                    tests += leaf_pairs(nodes, leaves, i, |j| {
                        if part.len() == part.capacity() && part.try_reserve(part.len().max(64)).is_err() {
                            failed = true;
                            return;
                        }
                        part.push(key(ids[i], ids[j]));
                    });
                    if budget.account(part.len(), &mut counted, failed) {
                        return tests;
                    }
                }
                budget.settle(part.len(), counted);
                tests
            })
            .sum();
        finish_parts(parts[..chunks].iter().map(|p| &p[..]), n_ids, budget, out);
        self.parts = parts;
        tests
    }
}

/// The leaves after leaf `i` (in Morton order) whose boxes meet its box, passed to `emit`
/// by position; returns the leaf boxes tested.
#[inline(always)]
fn leaf_pairs<const D: usize>(
    nodes: &[super::Node<D>],
    leaves: &[crate::Aabb<D>],
    i: usize,
    mut emit: impl FnMut(usize),
) -> usize {
    let mut tests = 0;
    let after = |nd: &super::Node<D>, c: usize| {
        let keep = nd.last[c] as usize > i;
        tests += (keep && nd.child[c] & LEAF != 0) as usize;
        keep
    };
    let _ = super::query::walk(nodes, leaves, &leaves[i], after, |p, _| {
        emit(p);
        ControlFlow::Continue(())
    });
    tests
}
