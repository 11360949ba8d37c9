//! The pairs between two sets of boxes: a tree over one set, and a walk of it for each box
//! of the other.
//!
//! - Input: a [`Bvh`] built over one set, the other set (grown by the margin here), the
//!   id offsets that put both sets in one id space, a [`PairBudget`].
//! - Output: every pair of a leaf and an other box that overlap, as keys of the two ids
//!   (one space: the pair sort needs `i < j`), sorted.
//! - Cost: one walk an other box, O(log n + k), then the crate's pair sort, O(k).
//! - Parallel: fixed chunks of the other set, each with its own key list; the pair sort
//!   makes the output independent of which thread found what.
//! - Allocation: the per-chunk key lists are the tree's, kept between calls; the output
//!   grows as needed (`try_reserve`: a refused allocation is `Error::OutOfMemory`).
//! - Source: the stack walk of [`Bvh::query`], one independent walk a box.

use super::Bvh;
use crate::kernels::pair_sort::{key, PairBudget};
use crate::kernels::par::chunk_len;
use crate::Aabb;
use rayon::prelude::*;
use std::ops::ControlFlow;

/// Keys a chunk collects before it counts them against the budget.
const BUDGET_STEP: usize = 4096;

impl<const D: usize> Bvh<D> {
    /// Every pair of a leaf (id `tree_offset + id`) and a box of `others` (id
    /// `other_offset + index`, grown by `margin`; inverted ones meet nothing) that
    /// overlap, into `out` (cleared first), sorted; `n_ids` ids in all. Returns the leaf
    /// boxes the walks reached. Stops early once `budget` stops (the caller reports its
    /// verdict and clears `out`).
    pub(crate) fn pairs_against(
        &mut self,
        others: &[Aabb<D>],
        margin: f32,
        [tree_offset, other_offset]: [u32; 2],
        n_ids: usize,
        budget: &PairBudget,
        out: &mut Vec<[u32; 2]>,
    ) -> usize {
        out.clear();
        if self.leaves.is_empty() || others.is_empty() {
            return 0;
        }
        let n = others.len();
        let chunk = chunk_len(n);
        let chunks = n.div_ceil(chunk);
        if self.parts.len() < chunks {
            self.parts.resize_with(chunks, Vec::new);
        }
        let mut parts = std::mem::take(&mut self.parts);
        let me = &*self;
        let tests: usize = parts[..chunks]
            .par_iter_mut()
            .enumerate()
            .map(|(c, part)| {
                part.clear();
                let (mut counted, mut tests, mut failed) = (0, 0, false);
                for i in c * chunk..((c + 1) * chunk).min(n) {
                    let g = others[i].grown(margin);
                    if g.is_inverted() {
                        continue;
                    }
                    let _ = me.query(&g, |p| {
                        tests += 1;
                        if part.len() == part.capacity() && part.try_reserve(part.len().max(64)).is_err() {
                            failed = true;
                            return ControlFlow::Break(());
                        }
                        part.push(key(tree_offset + me.ids[p], other_offset + i as u32));
                        ControlFlow::Continue(())
                    });
                    if failed {
                        budget.out_of_memory();
                    }
                    if part.len() - counted >= BUDGET_STEP {
                        budget.take(part.len() - counted);
                        counted = part.len();
                    }
                    if budget.stopped() {
                        return tests;
                    }
                }
                budget.take(part.len() - counted);
                tests
            })
            .sum();
        if !budget.stopped() {
            let total: usize = parts[..chunks].iter().map(|p| p.len()).sum();
            if out.try_reserve_exact(total).is_err() {
                budget.out_of_memory();
            } else {
                let slices: Vec<Vec<&[[u32; 2]]>> =
                    parts[..chunks].iter().map(|p| vec![bytemuck::cast_slice(p)]).collect();
                crate::kernels::pair_sort::finish_into(&slices, n_ids, out);
            }
        }
        self.parts = parts;
        tests
    }
}
