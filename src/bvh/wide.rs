//! Four-wide nodes: a tree kept for walks, its binary nodes folded so that each node holds
//! up to four children, their bounds axis by axis.
//!
//! - Input: a tree kept for walks (binary, with buckets: `bucket`). Output: `Bvh::wide`,
//!   the same leaves and buckets under nodes of up to four children each; the binary
//!   nodes are given back. A node's children are found by opening, from a binary node's
//!   two, the child with the largest bounds (by surface area) until there are four or
//!   only leaves and buckets are left.
//! - Why: a walk is bound by its node loads. A four-wide node replaces a binary node and
//!   its two children, so a walk takes about half the steps down, each a likely miss, and
//!   tests four children's bounds side by side (the bounds lie axis by axis, so the test
//!   is one vector compare an axis). PERF: benches/queries.rs (`regions_small`,
//!   `regions_large`, `rays_closest`), benches/world.rs (`move_10`).
//! - Cost: O(nodes), sequential. Allocation: the wide nodes; the binary ones given back.
//! - Walks: region walks visit each child whose bounds meet the region; ray casts compute
//!   the four children's entry points and go down the nearest first, the others waiting
//!   on the stack nearest on top.
//! - Source: multi-branching BVHs (H. Dammertz, J. Hanika, A. Keller, "Shallow bounding
//!   volume hierarchies for fast SIMD ray tracing of incoherent rays", 2008; I. Wald, C.
//!   Benthin, S. Boulos, "Getting rid of packets: efficient SIMD single-ray traversal
//!   using multi-branching BVHs", 2008), collapsed from a binary tree.

use super::query::leaf_or_bucket;
use super::ray::{leaf_or_bucket as cast_leaf_or_bucket, pop_nearer, Slab};
use super::stack::{buffer, Stack};
use super::{Bvh, Finds, Node, LEAF, MAX_DEPTH};
use crate::kernels::par::prefetch;
use crate::Aabb;
use std::ops::ControlFlow;
use wide::f32x4;

/// Children a node holds.
const WIDTH: usize = 4;

/// No child (its bounds are empty, `+inf..-inf`; walks test the reference, as a region
/// grown to infinity meets even those).
pub(super) const EMPTY: u32 = u32::MAX;

/// A node of up to four children: their bounds axis by axis, references (`LEAF | first`
/// for a leaf or a bucket ending at `last`, a node's index, or [`EMPTY`]) and last leaves.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct Wide<const D: usize> {
    pub(crate) min: [[f32; WIDTH]; D],
    pub(crate) max: [[f32; WIDTH]; D],
    pub(crate) child: [u32; WIDTH],
    pub(crate) last: [u32; WIDTH],
}

impl<const D: usize> Wide<D> {
    const NONE: Self = Wide {
        min: [[f32::INFINITY; WIDTH]; D],
        max: [[f32::NEG_INFINITY; WIDTH]; D],
        child: [EMPTY; WIDTH],
        last: [0; WIDTH],
    };

    /// Child `c`'s bounds as a box.
    #[inline(always)]
    pub(crate) fn child_box(&self, c: usize) -> Aabb<D> {
        Aabb { min: std::array::from_fn(|k| self.min[k][c]), max: std::array::from_fn(|k| self.max[k][c]) }
    }

    /// A bit a child whose bounds meet `region` (closed boxes), and a bit a child whose
    /// bounds lie within it: four lanes an axis, two compares each.
    #[inline(always)]
    fn meets(&self, region: &Aabb<D>) -> (u32, u32) {
        let all = f32x4::splat(0.0).simd_eq(f32x4::splat(0.0));
        let (mut meet, mut within) = (all, all);
        for k in 0..D {
            let (lo, hi) = (f32x4::from(self.min[k]), f32x4::from(self.max[k]));
            let (rlo, rhi) = (f32x4::splat(region.min[k]), f32x4::splat(region.max[k]));
            meet &= lo.simd_le(rhi) & rlo.simd_le(hi);
            within &= rlo.simd_le(lo) & hi.simd_le(rhi);
        }
        // Empty bounds meet a region reaching to infinity (a huge box grown by the
        // margin): empty children are masked out by reference.
        let live = (0..WIDTH).fold(0, |m, c| m | ((self.child[c] != EMPTY) as u32) << c);
        let meet = meet.to_bitmask() & live;
        (meet, within.to_bitmask() & meet)
    }

    /// Asks for the lines child `c` will be read from (its node, or its bucket's first
    /// and last leaf) before any is read, so that the misses of a node's met children
    /// overlap. PERF: benches/queries.rs (`regions_large`, `points`, `rays_closest`).
    #[inline(always)]
    fn ask(&self, c: usize, nodes: &[Wide<D>], leaves: &[Aabb<D>]) {
        let r = self.child[c];
        if r & LEAF != 0 {
            prefetch(&leaves[(r & !LEAF) as usize]);
            prefetch(&leaves[self.last[c] as usize]);
        } else {
            prefetch(&nodes[r as usize]);
        }
    }
}

/// A binary child: its reference, last leaf and bounds.
type Part<const D: usize> = (u32, u32, Aabb<D>);

/// Half the surface area of a box (its "size" for choosing which child to open).
fn area<const D: usize>(b: &Aabb<D>) -> f32 {
    let e: [f32; D] = std::array::from_fn(|k| (b.max[k] - b.min[k]).max(0.0));
    match D {
        1 => e[0],
        2 => e[0] + e[1],
        _ => (0..D).map(|k| e[k] * e[(k + 1) % D]).sum(),
    }
}

impl<const D: usize> Bvh<D> {
    /// Folds the binary nodes of a tree kept for walks into four-wide ones (module docs).
    pub(super) fn widen(&mut self) {
        if self.nodes.is_empty() {
            return;
        }
        let old = std::mem::take(&mut self.nodes);
        let mut wide = Vec::with_capacity(old.len() / 2 + 1);
        fold(&old, 0, &mut wide);
        wide.shrink_to_fit();
        self.wide = wide;
    }
}

/// The two children of a binary node.
fn parts<const D: usize>(nd: &Node<D>) -> [Part<D>; 2] {
    [0, 1].map(|c| (nd.child[c], nd.last[c], nd.child_box(c)))
}

/// Writes the wide node for binary node `i` (and those below it) to `wide`, in preorder;
/// returns its index. Recursion depth is the binary tree's, at most `MAX_DEPTH`.
fn fold<const D: usize>(old: &[Node<D>], i: usize, wide: &mut Vec<Wide<D>>) -> u32 {
    let [x, y] = parts(&old[i]);
    let mut kids = [x, y, x, x];
    let mut n = 2;
    while n < WIDTH {
        // The internal child with the largest bounds is opened (the first on ties); its
        // two children take its place, in order.
        let open = (0..n)
            .filter(|&c| kids[c].0 & LEAF == 0)
            .max_by(|&a, &b| area(&kids[a].2).total_cmp(&area(&kids[b].2)).then(b.cmp(&a)));
        let Some(c) = open else { break };
        let [x, y] = parts(&old[kids[c].0 as usize]);
        kids.copy_within(c + 1..n, c + 2);
        kids[c] = x;
        kids[c + 1] = y;
        n += 1;
    }
    let at = wide.len();
    wide.push(Wide::NONE);
    let mut nd = Wide::NONE;
    for (c, &(r, last, b)) in kids[..n].iter().enumerate() {
        for k in 0..D {
            nd.min[k][c] = b.min[k];
            nd.max[k][c] = b.max[k];
        }
        nd.last[c] = last;
        nd.child[c] = if r & LEAF != 0 { r } else { fold(old, r as usize, wide) };
    }
    wide[at] = nd;
    at as u32
}

/// The region walk over wide nodes (see `query::walk`): each leaf whose box meets
/// `region` to `finds`, which may stop the walk. A child whose bounds lie within the
/// region has every leaf in it, which goes out untested as one run, the subtree unwalked
/// (a large region's hits are mostly such runs). PERF: benches/queries.rs
/// (`regions_large`).
#[inline(always)]
pub(super) fn walk_wide<const D: usize>(
    nodes: &[Wide<D>],
    leaves: &[Aabb<D>],
    region: &Aabb<D>,
    finds: &mut impl Finds<D>,
) -> ControlFlow<()> {
    // Pending subtrees (node, first leaf): at most three a level.
    let mut buf = buffer::<(u32, u32), { (WIDTH - 1) * MAX_DEPTH }>();
    let mut stack = Stack::new(&mut buf);
    let (mut at, mut first) = (0u32, 0u32);
    loop {
        let nd = &nodes[at as usize];
        let (mut hits, within) = nd.meets(region);
        let mut ask = hits & !within;
        while ask != 0 {
            nd.ask(ask.trailing_zeros() as usize, nodes, leaves);
            ask &= ask - 1;
        }
        // Internal children go down in order: the last met is pushed first.
        let mut inner = [(0u32, 0u32); WIDTH];
        let mut n = 0;
        while hits != 0 {
            let c = hits.trailing_zeros() as usize;
            hits &= hits - 1;
            // Children cover consecutive runs of leaves, in order.
            let start = if c == 0 { first } else { nd.last[c - 1] + 1 };
            let r = nd.child[c];
            if within >> c & 1 != 0 {
                finds.run(start as usize, nd.last[c] as usize, leaves)?;
            } else if r & LEAF != 0 {
                let mut leaf = |p, b: &Aabb<D>| finds.leaf(p, b);
                leaf_or_bucket(r, nd.last[c], || nd.child_box(c), leaves, region, &mut leaf)?;
            } else {
                inner[n] = (r, start);
                n += 1;
            }
        }
        if n > 0 {
            for &r in inner[1..n].iter().rev() {
                stack.push(r);
            }
            (at, first) = inner[0];
        } else if let Some(r) = stack.pop() {
            (at, first) = r;
        } else {
            return ControlFlow::Continue(());
        }
    }
}

/// The ray (or swept box) cast over wide nodes (see `ray`): each leaf the motion enters
/// at `t <= *cut`, nearer subtrees first, to `visit(position, t, cut)`, which may lower
/// `*cut` or stop.
pub(super) fn cast_wide<const D: usize, S: Slab<D>>(
    nodes: &[Wide<D>],
    leaves: &[Aabb<D>],
    ray: &S,
    cut: &mut f32,
    mut visit: impl FnMut(usize, f32, &mut f32) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let mut buf = buffer::<(u32, f32), { (WIDTH - 1) * MAX_DEPTH }>();
    let mut stack = Stack::new(&mut buf);
    let mut at = 0u32;
    loop {
        let nd = &nodes[at as usize];
        // The children entered, by entry point (children in order on ties).
        let entered = ray.enters_four(&nd.min, &nd.max, *cut);
        let mut met = [(0.0f32, 0usize); WIDTH];
        let mut n = 0;
        for (c, &e) in entered.iter().enumerate() {
            if nd.child[c] == EMPTY {
                break;
            }
            if let Some(t) = e {
                let mut j = n;
                while j > 0 && met[j - 1].0 > t {
                    met[j] = met[j - 1];
                    j -= 1;
                }
                met[j] = (t, c);
                n += 1;
            }
        }
        for &(_, c) in &met[..n] {
            nd.ask(c, nodes, leaves);
        }
        // Leaves and buckets at once, nearest first; nodes onto the stack, farthest
        // first, so that the nearest is walked next.
        let mut next = None;
        for &(t, c) in &met[..n] {
            if t > *cut {
                continue;
            }
            let r = nd.child[c];
            if r & LEAF != 0 {
                cast_leaf_or_bucket(ray, r, nd.last[c], t, leaves, cut, &mut visit)?;
            }
        }
        for &(t, c) in met[..n].iter().rev() {
            let r = nd.child[c];
            if r & LEAF != 0 || t > *cut {
                continue;
            }
            if let Some(far) = next.replace((r, t)) {
                stack.push(far);
            }
        }
        match next.map(|(r, _)| r).or_else(|| pop_nearer(&mut stack, *cut)) {
            Some(r) => at = r,
            None => return ControlFlow::Continue(()),
        }
    }
}

impl<const D: usize> Bvh<D> {
    /// [`Bvh::validate`] for a tree of four-wide nodes: every leaf under exactly one
    /// child; every node but the root under exactly one child of a node before it
    /// (preorder); each child's stored bounds the union of the leaves under it and its
    /// `last` the greatest of them; at least two children a node, and the empty ones
    /// after the others, with empty bounds.
    pub(super) fn validate_wide(&self) -> Result<(), crate::Error> {
        let bad = |detail: String| Err(crate::Error::Invariant { detail: format!("bvh (wide): {detail}") });
        let (n, nodes) = (self.leaves.len(), &self.wide);
        if n < 2 || !self.nodes.is_empty() || self.ids.len() != n {
            return bad(format!("{n} leaves, {} binary nodes, {} ids", self.nodes.len(), self.ids.len()));
        }
        // Each node's union of its children's stored bounds, and its last leaf.
        let mut below: Vec<(Aabb<D>, u32)> = Vec::with_capacity(nodes.len());
        for nd in nodes {
            let live = (0..WIDTH).filter(|&c| nd.child[c] != EMPTY).count();
            if live < 2 || nd.child[live..].iter().any(|&r| r != EMPTY) {
                return bad("a node has fewer than two children, or an empty one before another".into());
            }
            let empty = Wide::<D>::NONE;
            if (live..WIDTH).any(|c| nd.child_box(c) != empty.child_box(c)) {
                return bad("an empty child has bounds".into());
            }
            let u = (1..live).fold(nd.child_box(0), |u, c| u.union(&nd.child_box(c)));
            below.push((u, nd.last[live - 1]));
        }
        let mut seen_leaf = vec![false; n];
        let mut seen_node = vec![false; nodes.len()];
        seen_node[0] = true;
        for (i, nd) in nodes.iter().enumerate() {
            for c in (0..WIDTH).filter(|&c| nd.child[c] != EMPTY) {
                let r = nd.child[c];
                let (u, last) = if r & LEAF != 0 {
                    let (first, last) = ((r & !LEAF) as usize, nd.last[c] as usize);
                    if first > last || last >= n || seen_leaf[first..=last].iter().any(|&s| s) {
                        return bad(format!("leaves {first}..={last} out of range or referenced twice"));
                    }
                    seen_leaf[first..=last].fill(true);
                    (
                        self.leaves[first..=last].iter().fold(self.leaves[first], |u, b| u.union(b)),
                        last as u32,
                    )
                } else {
                    let j = r as usize;
                    if j <= i || j >= nodes.len() || std::mem::replace(&mut seen_node[j], true) {
                        return bad(format!("node {j} out of order, out of range or referenced twice"));
                    }
                    below[j]
                };
                if u != nd.child_box(c) || last != nd.last[c] {
                    return bad(format!(
                        "node {i} child {c}: stored bounds or last leaf are not its leaves'"
                    ));
                }
            }
        }
        if !seen_leaf.iter().all(|&s| s) || !seen_node.iter().all(|&s| s) {
            return bad("a leaf or node is unreachable from the root".into());
        }
        Ok(())
    }
}
