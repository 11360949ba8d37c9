//! Ray casts: the leaves whose boxes a ray enters before a cutoff, nearest subtree first.
//!
//! - Input: a built [`Bvh`], a [`RayTest`], and a cutoff `cut` that the visitor may lower
//!   (to the closest hit so far, for a closest-hit cast).
//! - Output: each leaf whose box the ray enters at some `t <= cut`, with that entry `t`, to
//!   a visitor that may stop the walk.
//! - Cost: the nodes the ray enters before the cutoff: about O(log n) a node along its
//!   path for a closest hit (the nearer child goes first, a farther one waits on a stack
//!   and is dropped once a hit is closer), O(log n + k) for all k hits.
//! - Parallel: no; one cast is one walk (batches run casts in parallel above it).
//! - Allocation: none (a fixed stack of [`MAX_DEPTH`] subtrees).
//! - Source: the slab test (T. L. Kay and J. T. Kajiya, "Ray tracing complex scenes",
//!   SIGGRAPH 1986) in a front-to-back stack traversal, as in Karras' "Thinking parallel,
//!   part II: tree traversal on the GPU" (NVIDIA, 2012).

use super::{Bvh, LEAF, MAX_DEPTH};
use crate::Aabb;
use std::ops::ControlFlow;

/// A ray prepared for slab tests: its origin, the reciprocal of its direction on each
/// axis (0 where the direction's component is 0, or so small that its reciprocal
/// overflows: the ray is then parallel to that axis), and its length.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RayTest<const D: usize> {
    origin: [f32; D],
    inv: [f32; D],
    max_t: f32,
}

impl<const D: usize> RayTest<D> {
    /// The ray `origin + t * dir`, `0 <= t <= max_t` (inputs checked by the caller: finite
    /// origin and direction, `max_t >= 0`, not NaN).
    pub(crate) fn new(origin: [f32; D], dir: [f32; D], max_t: f32) -> Self {
        let inv = std::array::from_fn(|k| {
            let r = 1.0 / dir[k];
            if r.is_finite() {
                r
            } else {
                0.0
            }
        });
        Self { origin, inv, max_t }
    }

    /// The ray's length.
    pub(crate) fn max_t(&self) -> f32 {
        self.max_t
    }

    /// Where the ray enters the closed box `min..=max` (0 if it starts inside), if it does
    /// before `cut`. Per axis, `t = (bound - origin) * inv`; on an axis the ray is
    /// parallel to, the origin must lie within the bounds. Each step rounds monotonically,
    /// so a box holding another is entered no later and left no earlier: a walk that
    /// prunes by a node's bounds never loses a leaf this test accepts.
    #[inline(always)]
    pub(crate) fn enters(&self, min: &[f32; D], max: &[f32; D], cut: f32) -> Option<f32> {
        let (mut lo, mut hi) = (0.0f32, cut);
        for k in 0..D {
            if self.inv[k] == 0.0 {
                if self.origin[k] < min[k] || self.origin[k] > max[k] {
                    return None;
                }
            } else {
                let a = (min[k] - self.origin[k]) * self.inv[k];
                let b = (max[k] - self.origin[k]) * self.inv[k];
                lo = lo.max(a.min(b));
                hi = hi.min(a.max(b));
            }
        }
        (lo <= hi).then_some(lo)
    }

    /// [`RayTest::enters`] for four boxes at once, their bounds axis by axis (a wide
    /// node's children): the same arithmetic lane by lane, so the same answers.
    #[inline(always)]
    pub(crate) fn enters_four(&self, min: &[[f32; 4]; D], max: &[[f32; 4]; D], cut: f32) -> [Option<f32>; 4] {
        let (mut lo, mut hi) = ([0.0f32; 4], [cut; 4]);
        let mut inside = [true; 4];
        for k in 0..D {
            if self.inv[k] == 0.0 {
                for c in 0..4 {
                    inside[c] &= (self.origin[k] >= min[k][c]) & (self.origin[k] <= max[k][c]);
                }
            } else {
                for c in 0..4 {
                    let a = (min[k][c] - self.origin[k]) * self.inv[k];
                    let b = (max[k][c] - self.origin[k]) * self.inv[k];
                    lo[c] = lo[c].max(a.min(b));
                    hi[c] = hi[c].min(a.max(b));
                }
            }
        }
        std::array::from_fn(|c| (inside[c] && lo[c] <= hi[c]).then_some(lo[c]))
    }

    /// A leaf child `r` (`LEAF | first`, ending at `last`) the ray enters at `t`: a single
    /// leaf to `visit` at `t`, or each leaf of a bucket the ray enters before `*cut`.
    #[inline(always)]
    pub(crate) fn leaf_or_bucket(
        &self,
        r: u32,
        last: u32,
        t: f32,
        leaves: &[Aabb<D>],
        cut: &mut f32,
        visit: &mut impl FnMut(usize, f32, &mut f32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let (first, last) = ((r & !LEAF) as usize, last as usize);
        if first == last {
            return visit(first, t, cut);
        }
        for (p, b) in leaves[first..=last].iter().enumerate() {
            if let Some(t) = self.enters_box(b, *cut) {
                visit(first + p, t, cut)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// [`RayTest::enters`] for a box.
    #[inline(always)]
    pub(crate) fn enters_box(&self, b: &Aabb<D>, cut: f32) -> Option<f32> {
        self.enters(&b.min, &b.max, cut)
    }
}

impl<const D: usize> Bvh<D> {
    /// [`Bvh::cast`] over the binary nodes.
    pub(super) fn cast_binary(
        &self,
        ray: &RayTest<D>,
        cut: &mut f32,
        mut visit: impl FnMut(usize, f32, &mut f32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if self.nodes.is_empty() {
            return match self.leaves.first().and_then(|b| ray.enters_box(b, *cut)) {
                Some(t) => visit(0, t, cut),
                None => ControlFlow::Continue(()),
            };
        }
        // Pending subtrees with the `t` the ray enters them at: at most one a level.
        let mut stack = [(0u32, 0.0f32); MAX_DEPTH];
        let (mut sp, mut at) = (0usize, 0u32);
        loop {
            let nd = &self.nodes[at as usize];
            let e = [ray.enters(&nd.min[0], &nd.max[0], *cut), ray.enters(&nd.min[1], &nd.max[1], *cut)];
            // The nearer child first (the first on ties).
            let order = if matches!((e[0], e[1]), (Some(a), Some(b)) if b < a) { [1, 0] } else { [0, 1] };
            let mut next = None;
            for c in order {
                let Some(t) = e[c] else { continue };
                if t > *cut {
                    continue;
                }
                let r = nd.child[c];
                if r & LEAF != 0 {
                    ray.leaf_or_bucket(r, nd.last[c], t, &self.leaves, cut, &mut visit)?;
                } else if next.is_none() {
                    next = Some(r);
                } else {
                    stack[sp] = (r, t);
                    sp += 1;
                }
            }
            match next.or_else(|| pop_nearer(&stack, &mut sp, *cut)) {
                Some(r) => at = r,
                None => return ControlFlow::Continue(()),
            }
        }
    }
}

/// The next pending subtree the ray enters at or before `cut`, popped from the top of
/// `stack[..*sp]`; those entered after it are dropped on the way.
#[inline(always)]
pub(super) fn pop_nearer(stack: &[(u32, f32)], sp: &mut usize, cut: f32) -> Option<u32> {
    while *sp > 0 {
        *sp -= 1;
        let (r, t) = stack[*sp];
        if t <= cut {
            return Some(r);
        }
    }
    None
}
