//! The pairs between two sets of boxes: a tree over one set, walked by blocks of
//! consecutive boxes of the other.
//!
//! - Input: a [`Bvh`] built over one set, the other set (grown by the margin here), the
//!   id offsets that put both sets in one id space, a [`PairBudget`].
//! - Output: every pair of a leaf and an other box that overlap, as keys of the two ids
//!   (one space: the pair sort needs `i < j`), sorted.
//! - Cost: one walk a block of [`BLOCK`] other boxes with their union, gathering the leaves
//!   it meets, then each box of the block against those leaves; where a block gathers
//!   more than [`CANDIDATES`] a box, one walk a box, O(log n + k). Then the crate's pair
//!   sort, O(k).
//! - Parallel: fixed chunks of the other set, each with its own key list; the pair sort
//!   makes the output independent of which thread found what.
//! - Allocation: the per-chunk key lists are the tree's, kept between calls; the output
//!   grows as needed (`try_reserve`: a refused allocation is `Error::OutOfMemory`).
//! - Source: the stack walk of [`Bvh::query`]; blocks of queries sharing one walk, as
//!   packet traversal shares one among rays (I. Wald et al., "Interactive rendering with
//!   coherent ray tracing", 2001).

use super::Bvh;
use crate::kernels::pair_sort::{key, PairBudget};
use crate::kernels::par::chunk_len;
use crate::Aabb;
use rayon::prelude::*;
use std::ops::ControlFlow;

/// Keys a chunk collects before it counts them against the budget.
const BUDGET_STEP: usize = 4096;

/// Consecutive other boxes that walk the tree together, with their union: inputs in a
/// spatially coherent order (a mesh's triangles, a map's tiles, a level's rooms) make
/// tight blocks, and one walk a block replaces one a box. PERF: benches/queries.rs
/// (`between`).
const BLOCK: usize = 32;
/// Leaves a block may gather, a box: past it, each box of the block walks alone.
const CANDIDATES: usize = 8;

/// The union of two boxes.
fn union<const D: usize>(a: &Aabb<D>, b: &Aabb<D>) -> Aabb<D> {
    Aabb {
        min: std::array::from_fn(|k| a.min[k].min(b.min[k])),
        max: std::array::from_fn(|k| a.max[k].max(b.max[k])),
    }
}

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
                let mut cand: Vec<(u32, Aabb<D>)> = Vec::with_capacity(BLOCK * CANDIDATES);
                let end = ((c + 1) * chunk).min(n);
                for b0 in (c * chunk..end).step_by(BLOCK) {
                    let block = b0..(b0 + BLOCK).min(end);
                    // The block's bounds, and the leaves they meet (at most a few a box).
                    let mut bb: Option<Aabb<D>> = None;
                    for i in block.clone() {
                        let g = others[i].grown(margin);
                        if !g.is_inverted() {
                            bb = Some(bb.map_or(g, |u| union(&u, &g)));
                        }
                    }
                    let Some(bb) = bb else { continue };
                    cand.clear();
                    let crowded = me
                        .query(&bb, |p| {
                            if cand.len() == BLOCK * CANDIDATES {
                                return ControlFlow::Break(());
                            }
                            cand.push((me.ids[p], me.leaves[p]));
                            ControlFlow::Continue(())
                        })
                        .is_break();
                    for i in block {
                        let g = others[i].grown(margin);
                        if g.is_inverted() {
                            continue;
                        }
                        let mut emit = |id: u32| {
                            if part.len() == part.capacity() && part.try_reserve(part.len().max(64)).is_err()
                            {
                                failed = true;
                                return;
                            }
                            part.push(key(tree_offset + id, other_offset + i as u32));
                        };
                        if crowded {
                            // Too many leaves near the block (its boxes are far apart, or
                            // the tree is dense there): one walk a box.
                            let _ = me.query(&g, |p| {
                                tests += 1;
                                emit(me.ids[p]);
                                ControlFlow::Continue(())
                            });
                        } else {
                            tests += cand.len();
                            for (id, l) in &cand {
                                if l.overlaps(&g) {
                                    emit(*id);
                                }
                            }
                        }
                    }
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
