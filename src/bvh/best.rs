//! Best-first walks: the leaves of several trees (and loose leaves beside them) in order
//! of a key that only grows from a subtree to what it holds: a ray's or a swept box's
//! entry `t`, a point's distance to a box.
//!
//! - Input: up to four trees, a key for boxes (`bound`, a [`Key`]: a node's stored
//!   bounds, four children at once, or a leaf's box; `None` past the cutoff), a leaf test
//!   (`leaf`: the exact key of the object at a leaf, or `None` to leave it out), loose
//!   leaves pushed by the caller, and a cutoff the visitor may lower.
//! - Output: each leaf kept, to `visit(id, key, cut)`, in order of `(key, id)`, while its
//!   key is at most the cutoff; the visitor may lower the cutoff (a ray clipped to a
//!   narrow-phase hit) or stop (k found).
//! - Order: one priority queue holds subtrees by the key of their bounds and leaves by
//!   their exact key; at equal keys a subtree comes before a leaf (it may hold a leaf of
//!   that key with a lower id) and leaves go by id. A leaf comes out only once every
//!   subtree with a lower key has been opened, so none is passed over: the keys are
//!   monotone (a box holding another has a key no greater), which the slab tests and
//!   [`distance`] are.
//! - Bound: where the visitor takes k leaves at the most ([`Frontier::keep`]), the k-th
//!   smallest key queued so far cuts off every subtree and leaf past it (a k-nearest
//!   query queues about k leaves, not every leaf of each bucket it opens).
//! - Cost: O((m + k) log m) for the m subtrees and leaves whose key passes the cutoff
//!   until the walk stops; a closest hit or a nearest object opens about the nodes along
//!   one path and those whose bounds are nearer than it.
//! - Threads: none (batches run walks in parallel above it). Allocation: the queue and
//!   the bound's k keys, one a thread, kept between walks ([`with_frontier`]); they grow
//!   to the largest walk's and are never given back.
//! - Source: the best-first nearest-neighbour search of G. R. Hjaltason and H. Samet,
//!   "Distance browsing in spatial databases" (ACM TODS, 1999), with the slab test (T. L.
//!   Kay and J. T. Kajiya, "Ray tracing complex scenes", SIGGRAPH 1986) as the key of rays.

use super::wide::EMPTY;
use super::{Bvh, Slab, LEAF};
use crate::Aabb;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::ControlFlow;

/// The key of a best-first walk: monotone (a box holding another keys no greater),
/// `None` past the cutoff; a key may compute a wide node's four children at once.
pub(crate) trait Key<const D: usize> {
    /// The key of box `b`, if at most `cut`.
    fn one(&self, b: &Aabb<D>, cut: f32) -> Option<f32>;

    /// [`Key::one`] for four boxes, their bounds axis by axis (a wide node's children):
    /// the same answers.
    #[inline(always)]
    fn four(&self, min: &[[f32; 4]; D], max: &[[f32; 4]; D], cut: f32) -> [Option<f32>; 4] {
        std::array::from_fn(|c| {
            let b = Aabb { min: std::array::from_fn(|k| min[k][c]), max: std::array::from_fn(|k| max[k][c]) };
            self.one(&b, cut)
        })
    }
}

/// The key of a nearest query: the [`distance`] from a point, four children with one
/// pass of the same arithmetic lane by lane (the square roots side by side).
/// PERF: benches/queries.rs (`nearest_k1`, `nearest_k10`).
pub(crate) struct Near<const D: usize>(pub(crate) [f32; D]);

impl<const D: usize> Key<D> for Near<D> {
    #[inline(always)]
    fn one(&self, b: &Aabb<D>, cut: f32) -> Option<f32> {
        let d = distance(&self.0, b);
        (d <= cut).then_some(d)
    }

    #[inline(always)]
    fn four(&self, min: &[[f32; 4]; D], max: &[[f32; 4]; D], cut: f32) -> [Option<f32>; 4] {
        let mut sum = [0.0f64; 4];
        for k in 0..D {
            let x = self.0[k] as f64;
            for c in 0..4 {
                let (lo, hi) = (min[k][c] as f64, max[k][c] as f64);
                // `distance`'s gap: one of the two differences is positive at most.
                let gap = (lo - x).max(x - hi).max(0.0);
                sum[c] += gap * gap;
            }
        }
        sum.map(|s| {
            let d = s.sqrt() as f32;
            (d <= cut).then_some(d)
        })
    }
}

/// The key of a ray or swept box: where it enters a box ([`Slab`]), four children with
/// [`Slab::enters_four`].
pub(crate) struct Enters<'a, S>(pub(crate) &'a S);

impl<const D: usize, S: Slab<D>> Key<D> for Enters<'_, S> {
    #[inline(always)]
    fn one(&self, b: &Aabb<D>, cut: f32) -> Option<f32> {
        self.0.enters_box(b, cut)
    }

    #[inline(always)]
    fn four(&self, min: &[[f32; 4]; D], max: &[[f32; 4]; D], cut: f32) -> [Option<f32>; 4] {
        self.0.enters_four(min, max, cut)
    }
}

/// The tag bit of a leaf: leaves sort after subtrees of the same key.
const IS_LEAF: u64 = 1 << 63;

/// A subtree or a leaf waiting in the queue. Ordered by key (the bits of a key that is
/// never negative nor `-0.0`, so they order as the values do), then by tag: a subtree's
/// `tree << 32 | node`, a leaf's [`IS_LEAF`] `| id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Item {
    key: u32,
    tag: u64,
}

/// The queue of a best-first walk (module docs), reused from walk to walk.
#[derive(Debug, Default)]
pub(crate) struct Frontier {
    heap: BinaryHeap<Reverse<Item>>,
    /// How many leaves the visitor takes at the most before it stops (0: no bound;
    /// [`Frontier::keep`]).
    keep: usize,
    /// The keys of the `keep` nearest leaves queued so far (a max-heap): once full, its
    /// top bounds the key of every leaf the visitor will get.
    kept: BinaryHeap<u32>,
}

/// The largest `keep` whose leaves' keys a walk tracks: a larger `k` is walked
/// unbounded (its tracking would cost as much as the queue).
const KEEP_MAX: usize = 1024;

thread_local! {
    /// Each thread's queue: a query allocates only to grow it.
    static FRONTIER: RefCell<Frontier> = RefCell::new(Frontier::default());
}

/// Runs `f` with this thread's queue, emptied. A walk started from inside another's
/// visitor on the same thread (a callback that queries) gets a queue of its own, as
/// does one where the thread's is gone (at thread exit).
pub(crate) fn with_frontier<R>(f: impl FnOnce(&mut Frontier) -> R) -> R {
    let mut f = Some(f);
    let got = FRONTIER.try_with(|c| {
        c.try_borrow_mut().ok().map(|mut q| {
            q.heap.clear();
            q.kept.clear();
            q.keep = 0;
            (f.take().expect("called once"))(&mut q)
        })
    });
    match got {
        Ok(Some(r)) => r,
        _ => (f.take().expect("not called yet"))(&mut Frontier::default()),
    }
}

impl Frontier {
    /// Says that the visitor stops after `k` leaves (a k-nearest query): the walk then
    /// leaves out every subtree and leaf whose key passes the `k`-th smallest key of the
    /// leaves queued so far, as none of them would be visited. Subtrees and leaves at
    /// that key stay (one may hold a leaf of a lower id). Call before any leaf is pushed;
    /// a `k` past [`KEEP_MAX`] bounds nothing.
    pub(crate) fn keep(&mut self, k: usize) {
        debug_assert!(self.heap.is_empty(), "set before the walk");
        self.keep = if k <= KEEP_MAX { k } else { 0 };
    }

    /// The cutoff of the walk: `cut`, or the `keep`-th smallest queued leaf key if lower.
    #[inline]
    fn bound(&self, cut: f32) -> f32 {
        match self.kept.peek() {
            Some(&top) if self.kept.len() == self.keep => cut.min(f32::from_bits(top)),
            _ => cut,
        }
    }

    /// Adds the loose leaf `id` (an object outside the trees) at `key`.
    pub(crate) fn push_leaf(&mut self, key: f32, id: u32) {
        let bits = key.to_bits();
        if self.keep > 0 {
            if self.kept.len() < self.keep {
                self.kept.push(bits);
            } else if let Some(mut top) = self.kept.peek_mut()
                && bits < *top
            {
                *top = bits;
            }
        }
        self.heap.push(Reverse(Item { key: bits, tag: IS_LEAF | id as u64 }));
    }

    fn push_node(&mut self, key: f32, tree: usize, node: u32) {
        self.heap.push(Reverse(Item { key: key.to_bits(), tag: (tree as u64) << 32 | node as u64 }));
    }

    /// The best-first walk (module docs) over `trees` and the leaves pushed so far:
    /// `bound(box, cut)` keys a node's child or a leaf's box; `leaf(tree, position, key,
    /// cut)` gives the exact key and id of the object at a leaf whose box has `key`, or
    /// `None`;
    /// `visit(id, key, cut)` gets each kept leaf in order.
    pub(crate) fn walk<const D: usize>(
        &mut self,
        trees: &[&Bvh<D>],
        cut: &mut f32,
        bound: &impl Key<D>,
        mut leaf: impl FnMut(usize, usize, f32, f32) -> Option<(f32, u32)>,
        mut visit: impl FnMut(u32, f32, &mut f32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        debug_assert!(trees.len() <= 4, "a tree's index takes two bits of a tag at most");
        for (i, t) in trees.iter().enumerate() {
            if !t.nodes.is_empty() || !t.wide.is_empty() {
                // The root's key is not stored: 0 is no greater than any.
                self.push_node(0.0, i, 0);
            } else if let Some(k) = t.leaves.first().and_then(|b| bound.one(b, *cut))
                && let Some((k, id)) = leaf(i, 0, k, *cut)
            {
                self.push_leaf(k, id);
            }
        }
        while let Some(Reverse(item)) = self.heap.pop() {
            let key = f32::from_bits(item.key);
            if key > self.bound(*cut) {
                // Every item left has a key at least this one's.
                break;
            }
            if item.tag & IS_LEAF != 0 {
                visit(item.tag as u32, key, cut)?;
                continue;
            }
            let (i, node) = ((item.tag >> 32) as usize, item.tag as u32);
            let t = trees[i];
            t.children(node, bound, self.bound(*cut), |r, last, k| {
                if r & LEAF == 0 {
                    self.push_node(k, i, r);
                    return;
                }
                let (first, last) = ((r & !LEAF) as usize, last as usize);
                for p in first..=last {
                    // A single leaf's box is its stored bounds; a bucket's are each tested.
                    let lim = self.bound(*cut);
                    let k = if first == last { Some(k) } else { bound.one(&t.leaves[p], lim) };
                    if let Some((k, id)) = k.and_then(|k| leaf(i, p, k, lim)) {
                        self.push_leaf(k, id);
                    }
                }
            });
        }
        ControlFlow::Continue(())
    }
}

impl<const D: usize> Bvh<D> {
    /// Each child of node `node` (four-wide in a tree kept for walks, else binary) whose
    /// stored bounds key at most `cut` to `f(reference, last leaf, key)`.
    #[inline]
    fn children(&self, node: u32, key: &impl Key<D>, cut: f32, mut f: impl FnMut(u32, u32, f32)) {
        if self.wide.is_empty() {
            let nd = &self.nodes[node as usize];
            for c in 0..2 {
                if let Some(k) = key.one(&nd.child_box(c), cut) {
                    f(nd.child[c], nd.last[c], k);
                }
            }
        } else {
            let nd = &self.wide[node as usize];
            let keys = key.four(&nd.min, &nd.max, cut);
            for c in (0..4).take_while(|&c| nd.child[c] != EMPTY) {
                if let Some(k) = keys[c] {
                    f(nd.child[c], nd.last[c], k);
                }
            }
        }
    }
}

/// The Euclidean distance from `p` to the closed box `b` (0 inside or on it): per axis the
/// gap `max(b.min - p, 0, p - b.max)`, squared and summed in `f64` (no `f32` overflow for
/// any finite input), the root rounded to `f32` (infinite only past `f32::MAX`). Monotone:
/// a box holding another is no farther, so it keys the best-first walk of a nearest
/// query, and a sphere query keeps a box where it is at most the radius.
#[inline]
pub(crate) fn distance<const D: usize>(p: &[f32; D], b: &Aabb<D>) -> f32 {
    let mut sum = 0.0f64;
    for ((&x, &lo), &hi) in p.iter().zip(&b.min).zip(&b.max) {
        let (x, lo, hi) = (x as f64, lo as f64, hi as f64);
        let gap = if x < lo {
            lo - x
        } else if x > hi {
            x - hi
        } else {
            0.0
        };
        sum += gap * gap;
    }
    sum.sqrt() as f32
}
