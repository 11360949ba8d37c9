//! The pairs between two sets of boxes: a tree over one set, walked by blocks of
//! consecutive boxes of the other. The world's whole-frame search walks its settled
//! static tree so (`world::search::whole`); `find_pairs_between` files its smaller set
//! in a grid instead (`algorithms::grid::join`).
//!
//! - Input: a [`Bvh`] built over one set, the other set (grown by the margin here), the
//!   id offsets that put both sets in one id space, a [`PairBudget`].
//! - Output: every pair of a leaf and an other box that overlap, as keys of the two ids
//!   (one space: the pair sort needs `i < j`), sorted.
//! - Cost: one walk a block of [`BLOCK`] other boxes with their union, gathering the leaves
//!   it meets, then each box of the block against those leaves; where a block gathers
//!   more than [`CANDIDATES`] a box, one walk a box, O(log n + k). Where a sample of
//!   blocks finds the input's order incoherent (a quarter of them crowded), the other
//!   boxes are first sorted by the Morton code of their centres (O(n), a radix sort).
//!   Then the crate's pair sort, O(k).
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
use crate::par::prelude::*;
use crate::Aabb;
use std::ops::ControlFlow;

/// Consecutive other boxes that walk the tree together, with their union: inputs in a
/// spatially coherent order (a mesh's triangles, a map's tiles, a level's rooms) make
/// tight blocks, and one walk a block replaces one a box. PERF: benches/queries.rs
/// (`between`), measured while `find_pairs_between` walked this tree.
const BLOCK: usize = 32;
/// Leaves a block may gather, a box: past it, each box of the block walks alone.
const CANDIDATES: usize = 8;
/// Blocks the coherence test samples.
const SAMPLE_BLOCKS: usize = 64;
/// Fewer other boxes than this are never reordered.
const SORT_MIN: usize = 8192;

impl<const D: usize> Bvh<D> {
    /// Every pair of a leaf (id `tree_offset + id`) and a box of `others` (id
    /// `other_offset + index`, grown by `margin`; inverted ones meet nothing) that
    /// overlap, into `out` (cleared first), sorted; `n_ids` ids in all. Returns the leaf
    /// boxes tested. Stops early once `budget` stops (the caller reports its verdict and
    /// clears `out`).
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
        // Blocks are tight only where consecutive boxes lie near each other: a sample of
        // blocks tells, and an incoherent input is put in Morton order first.
        let (seen, crowded) = self.sample(others, margin);
        let sorted = n >= SORT_MIN && crowded * 4 > seen;
        if sorted {
            self.order_by_morton(others, margin);
        }
        let mut parts = std::mem::take(&mut self.parts);
        let me = &*self;
        let order = &self.order[..];
        let at = |k: usize| if sorted { order[k] as u32 as usize } else { k };
        let tests: usize = parts[..chunks]
            .par_iter_mut()
            .enumerate()
            .map(|(c, part)| {
                part.clear();
                let (mut counted, mut tests, mut failed) = (0, 0, false);
                // The leaves a block gathers, and the block's live boxes, grown, with their
                // indices (read once): on the stack, so a call allocates nothing for them.
                let zero = Aabb { min: [0.0; D], max: [0.0; D] };
                let mut cand = [(0u32, zero); BLOCK * CANDIDATES];
                let mut blk = [(0usize, zero); BLOCK];
                let end = ((c + 1) * chunk).min(n);
                for b0 in (c * chunk..end).step_by(BLOCK) {
                    if sorted {
                        // Reordered boxes are read at random: the next block's are
                        // fetched while this one works (not measured apart from the
                        // block's one read of its boxes, which came with it: no bench
                        // scene takes this path and joins).
                        for k in (b0 + BLOCK)..(b0 + 2 * BLOCK).min(end) {
                            crate::kernels::par::prefetch(&others[at(k)]);
                        }
                    }
                    // The block's bounds, and the leaves they meet (at most a few a box).
                    let mut n_blk = 0;
                    let mut bb: Option<Aabb<D>> = None;
                    for i in (b0..(b0 + BLOCK).min(end)).map(at) {
                        let g = others[i].grown(margin);
                        if !g.is_inverted() {
                            bb = Some(bb.map_or(g, |u| u.union(&g)));
                            blk[n_blk] = (i, g);
                            n_blk += 1;
                        }
                    }
                    let Some(bb) = bb else { continue };
                    let mut n_cand = 0;
                    let crowded = me
                        .query(&bb, |p| {
                            if n_cand == cand.len() {
                                return ControlFlow::Break(());
                            }
                            cand[n_cand] = (me.ids[p], me.leaves[p]);
                            n_cand += 1;
                            ControlFlow::Continue(())
                        })
                        .is_break();
                    for &(i, g) in &blk[..n_blk] {
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
                            tests += n_cand;
                            for (id, l) in &cand[..n_cand] {
                                if l.overlaps(&g) {
                                    emit(*id);
                                }
                            }
                        }
                    }
                    if budget.account(part.len(), &mut counted, failed) {
                        return tests;
                    }
                }
                budget.settle(part.len(), counted);
                tests
            })
            .sum();
        crate::kernels::pair_sort::finish_parts(parts[..chunks].iter().map(|p| &p[..]), n_ids, budget, out);
        self.parts = parts;
        tests
    }

    /// A sample of up to [`SAMPLE_BLOCKS`] blocks spread over `others`, in their order:
    /// how many were sampled, and how many gathered more than [`CANDIDATES`] leaves a box.
    fn sample(&self, others: &[Aabb<D>], margin: f32) -> (usize, usize) {
        let blocks = others.len() / BLOCK;
        let step = (blocks / SAMPLE_BLOCKS).max(1);
        let (mut seen, mut crowded) = (0, 0);
        for b in (0..blocks).step_by(step).take(SAMPLE_BLOCKS) {
            let mut bb: Option<Aabb<D>> = None;
            for g in others[b * BLOCK..(b + 1) * BLOCK].iter().map(|o| o.grown(margin)) {
                if !g.is_inverted() {
                    bb = Some(bb.map_or(g, |u| u.union(&g)));
                }
            }
            let Some(bb) = bb else { continue };
            let mut met = 0;
            seen += 1;
            crowded += self
                .query(&bb, |_| {
                    met += 1;
                    if met > BLOCK * CANDIDATES {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                })
                .is_break() as usize;
        }
        (seen, crowded)
    }

    /// `order` (as `code << 32 | index`, sorted): `others` by the Morton code of their
    /// centres over the tree's bounds (clamped outside them). O(n) codes, a radix sort.
    fn order_by_morton(&mut self, others: &[Aabb<D>], margin: f32) {
        let root = if self.nodes.is_empty() {
            self.leaves[0]
        } else {
            let nd = &self.nodes[0];
            Aabb {
                min: std::array::from_fn(|k| nd.min[0][k].min(nd.min[1][k])),
                max: std::array::from_fn(|k| nd.max[0][k].max(nd.max[1][k])),
            }
        };
        let bits = 32 / D as u32;
        let cells = ((1u64 << bits) - 1) as f64;
        let lo: [f64; D] = std::array::from_fn(|k| root.min[k] as f64);
        let scale: [f64; D] = std::array::from_fn(|k| {
            let e = root.max[k] as f64 - lo[k];
            if e > 0.0 {
                cells / e
            } else {
                0.0
            }
        });
        self.order.clear();
        self.order.par_extend(others.par_iter().enumerate().map(|(i, o)| {
            let g = o.grown(margin);
            let q: [u32; D] = std::array::from_fn(|k| {
                let c = (g.min[k] as f64 + g.max[k] as f64) * 0.5;
                ((c - lo[k]) * scale[k]).clamp(0.0, cells) as u32
            });
            crate::kernels::morton::encode_lut(q) << 32 | i as u64
        }));
        crate::kernels::radix_sort::sort(&mut self.order, &mut self.scratch, 32..32 + bits * D as u32);
    }
}
