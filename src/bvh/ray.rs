//! Ray casts: the leaves whose boxes a ray (or a swept box, `sweep`) enters before a
//! cutoff, nearest subtree first; and [`Slab`], the test both motions share.
//!
//! - Input: a built [`Bvh`], a [`Slab`] test ([`RayTest`] here), and a cutoff `cut` that
//!   the visitor may lower (to the closest hit so far, for a closest-hit cast).
//! - Output: each leaf whose box the motion enters at some `t <= cut`, with that entry
//!   `t` (never `-0.0`), to a visitor that may stop the walk.
//! - Cost: the nodes the ray enters before the cutoff: about O(log n) a node along its
//!   path for a closest hit (the nearer child goes first, a farther one waits on a stack
//!   and is dropped once a hit is closer), O(log n + k) for all k hits. Walks in strict
//!   order of entry are `best`'s.
//! - Parallel: no; one cast is one walk (batches run casts in parallel above it).
//! - Allocation: none (a fixed stack of [`MAX_DEPTH`] subtrees).
//! - Source: the slab test (T. L. Kay and J. T. Kajiya, "Ray tracing complex scenes",
//!   SIGGRAPH 1986) in a front-to-back stack traversal, as in Karras' "Thinking parallel,
//!   part II: tree traversal on the GPU" (NVIDIA, 2012).

use super::stack::{buffer, Stack};
use super::{Bvh, LEAF, MAX_DEPTH};
use crate::Aabb;
use std::ops::ControlFlow;

/// A motion tested against boxes by slabs, as the casts walk it: a ray ([`RayTest`]) or a
/// swept box (`sweep::SweepTest`). Each test gives where the motion first meets a closed
/// box, in units of its direction, never `-0.0`, and rounds monotonically, so that a box
/// holding another is met no later (a walk that prunes by a node's bounds never loses a
/// leaf the test accepts).
pub(crate) trait Slab<const D: usize>: Sync {
    /// How far the motion goes.
    fn max_t(&self) -> f32;

    /// Where the motion meets the closed box `min..=max` (0 if it starts there), if it
    /// does at or before `cut`.
    fn enters(&self, min: &[f32; D], max: &[f32; D], cut: f32) -> Option<f32>;

    /// [`Slab::enters`] for four boxes at once, their bounds axis by axis (a wide node's
    /// children): the same arithmetic lane by lane, so the same answers.
    fn enters_four(&self, min: &[[f32; 4]; D], max: &[[f32; 4]; D], cut: f32) -> [Option<f32>; 4];

    /// [`Slab::enters`] for a box.
    #[inline(always)]
    fn enters_box(&self, b: &Aabb<D>, cut: f32) -> Option<f32> {
        self.enters(&b.min, &b.max, cut)
    }

    /// The outward normal of the face of `b` the motion enters through at `t` (as
    /// [`Slab::enters`] gave it): the first axis whose slab is entered at `t` (an edge or
    /// a corner takes the lowest such axis), or the zero vector where the motion starts
    /// inside `b` on every axis it moves along.
    fn normal(&self, b: &Aabb<D>, t: f32) -> [f32; D];
}

/// The reciprocal of each component of `dir`, 0 where it overflows (the motion is then
/// parallel to that axis).
#[inline]
pub(crate) fn reciprocal<const D: usize>(dir: &[f32; D]) -> [f32; D] {
    std::array::from_fn(|k| {
        let r = 1.0 / dir[k];
        if r.is_finite() {
            r
        } else {
            0.0
        }
    })
}

/// The normal of the face whose slab was entered at `t`: `near(k)` is axis `k`'s entry,
/// computed as the test computed it (`None` on an axis the motion is parallel to).
#[inline]
pub(crate) fn face<const D: usize>(inv: &[f32; D], t: f32, near: impl Fn(usize) -> f32) -> [f32; D] {
    let mut n = [0.0; D];
    // An entry of -0.0 is the entry 0 (the test returns +0.0 for both).
    if let Some(k) = (0..D).find(|&k| inv[k] != 0.0 && near(k) == t) {
        n[k] = if inv[k] > 0.0 { -1.0 } else { 1.0 };
    }
    n
}

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
        Self { origin, inv: reciprocal(&dir), max_t }
    }
}

impl<const D: usize> Slab<D> for RayTest<D> {
    #[inline(always)]
    fn max_t(&self) -> f32 {
        self.max_t
    }

    /// Per axis, `t = (bound - origin) * inv`; on an axis the ray is parallel to, the
    /// origin must lie within the bounds. Each step rounds monotonically. The entry is
    /// `lo + 0.0`: `max(0.0, -0.0)` may be either zero, and a `-0.0` would sort before
    /// `+0.0` by `total_cmp` and by its bits.
    #[inline(always)]
    fn enters(&self, min: &[f32; D], max: &[f32; D], cut: f32) -> Option<f32> {
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
        (lo <= hi).then_some(lo + 0.0)
    }

    #[inline(always)]
    fn enters_four(&self, min: &[[f32; 4]; D], max: &[[f32; 4]; D], cut: f32) -> [Option<f32>; 4] {
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
        std::array::from_fn(|c| (inside[c] && lo[c] <= hi[c]).then_some(lo[c] + 0.0))
    }

    fn normal(&self, b: &Aabb<D>, t: f32) -> [f32; D] {
        face(&self.inv, t, |k| {
            let a = (b.min[k] - self.origin[k]) * self.inv[k];
            let c = (b.max[k] - self.origin[k]) * self.inv[k];
            a.min(c)
        })
    }
}

/// A leaf child `r` (`LEAF | first`, ending at `last`) the motion enters at `t`: a single
/// leaf to `visit` at `t`, or each leaf of a bucket the motion enters before `*cut`.
#[inline(always)]
pub(super) fn leaf_or_bucket<const D: usize, S: Slab<D>>(
    slab: &S,
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
        if let Some(t) = slab.enters_box(b, *cut) {
            visit(first + p, t, cut)?;
        }
    }
    ControlFlow::Continue(())
}

impl<const D: usize> Bvh<D> {
    /// [`Bvh::cast`] over the binary nodes.
    pub(super) fn cast_binary<S: Slab<D>>(
        &self,
        ray: &S,
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
        let mut buf = buffer::<(u32, f32), MAX_DEPTH>();
        let mut stack = Stack::new(&mut buf);
        let mut at = 0u32;
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
                    leaf_or_bucket(ray, r, nd.last[c], t, &self.leaves, cut, &mut visit)?;
                } else if next.is_none() {
                    next = Some(r);
                } else {
                    stack.push((r, t));
                }
            }
            match next.or_else(|| pop_nearer(&mut stack, *cut)) {
                Some(r) => at = r,
                None => return ControlFlow::Continue(()),
            }
        }
    }
}

/// The next pending subtree the ray enters at or before `cut`, popped from the top of
/// `stack`; those entered after it are dropped on the way.
#[inline(always)]
pub(super) fn pop_nearer<const N: usize>(stack: &mut Stack<'_, (u32, f32), N>, cut: f32) -> Option<u32> {
    while let Some((r, t)) = stack.pop() {
        if t <= cut {
            return Some(r);
        }
    }
    None
}
