//! Building the tree by the surface area heuristic, for a tree that is built once and
//! walked many times (the world's static objects): slower to build than the Morton-order
//! tree ([`super::build`]), tighter to walk.
//!
//! - Input: boxes and the margin. Output: the [`Bvh`]'s leaves, ids, nodes and parents,
//!   under the same invariants as the Morton-order build, but with the leaves in the
//!   order this build leaves them (each subtree's leaves consecutive), not Morton order.
//! - Split: each range of leaves is cut where the binned surface area heuristic is
//!   least: the centres are put in [`BINS`] bins along the axis where they spread widest,
//!   and the cut between two bins that minimises `area(left) * count(left) +
//!   area(right) * count(right)` wins.
//!   A range whose centres all coincide, or whose best cut leaves one side empty, or that
//!   would make the tree deeper than a walk's stack holds, is cut in the middle.
//! - Cost: O(n) a level, O(n log n) for a tree of balanced cuts; never deeper than
//!   [`MAX_DEPTH`], so O(n * MAX_DEPTH) at worst.
//! - Parallel: the two halves of a range over [`PAR_MIN`] leaves as two tasks
//!   (`rayon::join`), and the binning of a range over [`PAR_BIN`] leaves in parallel
//!   chunks whose sums (bounds by min and max, counts by integer adds) are exact, so the
//!   tree is the same for any thread count.
//! - Allocation: the tree's kept buffers; the recursion holds its bins on the stack.
//! - Source: I. Wald, "On fast construction of SAH-based bounding volume hierarchies"
//!   (2007): the binned SAH build; J. D. MacDonald and K. S. Booth, "Heuristics for ray
//!   tracing using space subdivision" (1990): the surface area heuristic.

use super::{Bvh, Node, LEAF, MAX_DEPTH};
use crate::kernels::par::{chunk_len, SendPtr};
use crate::par::prelude::*;
use crate::Aabb;

/// Bins along each axis.
const BINS: usize = 16;

/// Ranges of at least this many leaves build their halves as two tasks.
const PAR_MIN: usize = 4096;

/// Ranges of at least this many leaves are binned in parallel chunks.
const PAR_BIN: usize = 1 << 16;

impl<const D: usize> Bvh<D> {
    /// Rebuilds the tree over the live boxes of `boxes`, each grown by `margin`, by the
    /// binned surface area heuristic (module docs); for trees walked by region and ray
    /// queries far more often than they are built.
    pub(crate) fn build_sah(&mut self, boxes: &[Aabb<D>], margin: f32) {
        self.wide = Vec::new();
        self.leaves.clear();
        self.ids.clear();
        self.leaves.par_extend(boxes.par_iter().map(|b| b.grown(margin)).filter(|g| !g.is_inverted()));
        self.ids.par_extend(
            boxes
                .par_iter()
                .enumerate()
                .filter(|(_, b)| !b.grown(margin).is_inverted())
                .map(|(i, _)| i as u32),
        );
        let n = self.leaves.len();
        self.size_links(n);
        if n >= 2 {
            let t = Sah {
                nodes: SendPtr(self.nodes.as_mut_ptr()),
                parents: SendPtr(self.parents.as_mut_ptr()),
                leaf_parents: SendPtr(self.leaf_parents.as_mut_ptr()),
            };
            t.node(&mut self.leaves, &mut self.ids, 0, 0, 0);
        }
    }
}

/// Where the nodes go, shared by the build's tasks.
struct Sah<const D: usize> {
    nodes: SendPtr<Node<D>>,
    parents: SendPtr<u32>,
    leaf_parents: SendPtr<u32>,
}

// SAFETY (for the `Sync` the recursion's tasks need): as for the Morton-order build, a
// range of m leaves at position `lo` owns node index `idx` and the next m - 2, and writes
// `parents` and `leaf_parents` only at its two children; no two tasks write one index,
// and the buffers (sized n - 1, n - 1 and n) outlive the build.
unsafe impl<const D: usize> Sync for Sah<D> {}

/// Half a box's surface (its perimeter in 2D), in f64: the heuristic's weight of a
/// subtree, proportional to the chance that a small random region meets it.
fn area<const D: usize>(lo: &[f32; D], hi: &[f32; D]) -> f64 {
    let e: [f64; D] = std::array::from_fn(|k| (hi[k] as f64 - lo[k] as f64).max(0.0));
    if D < 3 {
        e.iter().sum()
    } else {
        let mut a = 0.0;
        for k in 0..D {
            for l in k + 1..D {
                a += e[k] * e[l];
            }
        }
        a
    }
}

/// The bounds and counts of one range's bins along the cut's axis.
#[derive(Clone, Copy)]
struct Bins<const D: usize> {
    lo: [[f32; D]; BINS],
    hi: [[f32; D]; BINS],
    count: [usize; BINS],
}

impl<const D: usize> Bins<D> {
    fn empty() -> Self {
        Bins { lo: [[f32::INFINITY; D]; BINS], hi: [[f32::NEG_INFINITY; D]; BINS], count: [0; BINS] }
    }

    /// Adds the boxes of `leaves`, binned by centre along `axis` from `from`, `scale` bins
    /// a unit.
    fn add(&mut self, leaves: &[Aabb<D>], axis: usize, from: f32, scale: f32) {
        for b in leaves {
            let i = bin(b.centre_on(axis), from, scale);
            self.count[i] += 1;
            for k in 0..D {
                self.lo[i][k] = self.lo[i][k].min(b.min[k]);
                self.hi[i][k] = self.hi[i][k].max(b.max[k]);
            }
        }
    }

    fn merge(mut self, o: Self) -> Self {
        for i in 0..BINS {
            self.count[i] += o.count[i];
            for k in 0..D {
                self.lo[i][k] = self.lo[i][k].min(o.lo[i][k]);
                self.hi[i][k] = self.hi[i][k].max(o.hi[i][k]);
            }
        }
        self
    }

    /// The cheapest cut: the last bin on the left, or none where every cut leaves one
    /// side empty.
    fn best(&self) -> Option<usize> {
        // Right to left: the cost of bins `i..` on the right.
        let mut right = [0.0f64; BINS];
        let (mut lo, mut hi, mut n) = ([f32::INFINITY; D], [f32::NEG_INFINITY; D], 0);
        for i in (1..BINS).rev() {
            grow(&mut lo, &mut hi, &self.lo[i], &self.hi[i]);
            n += self.count[i];
            right[i] = if n > 0 { area(&lo, &hi) * n as f64 } else { f64::NAN };
        }
        let (mut lo, mut hi, mut n) = ([f32::INFINITY; D], [f32::NEG_INFINITY; D], 0);
        let (mut best, mut best_cost) = (None, f64::INFINITY);
        for i in 0..BINS - 1 {
            grow(&mut lo, &mut hi, &self.lo[i], &self.hi[i]);
            n += self.count[i];
            // NaN (an empty side) never compares less.
            let cost = if n > 0 { area(&lo, &hi) * n as f64 + right[i + 1] } else { f64::NAN };
            if cost < best_cost {
                best_cost = cost;
                best = Some(i);
            }
        }
        best
    }
}

/// The bin of centre `c` along an axis starting at `from`, `scale` bins a unit.
#[inline(always)]
fn bin(c: f32, from: f32, scale: f32) -> usize {
    (((c - from) * scale) as usize).min(BINS - 1)
}

fn grow<const D: usize>(lo: &mut [f32; D], hi: &mut [f32; D], blo: &[f32; D], bhi: &[f32; D]) {
    for k in 0..D {
        lo[k] = lo[k].min(blo[k]);
        hi[k] = hi[k].max(bhi[k]);
    }
}

impl<const D: usize> Sah<D> {
    /// Builds internal node `idx` over `leaves` (with `ids`, at least two), the leaves at
    /// positions `at..` of the tree, `depth` below the root, and everything below it;
    /// returns the union of its leaves.
    fn node(&self, leaves: &mut [Aabb<D>], ids: &mut [u32], at: usize, idx: usize, depth: usize) -> Aabb<D> {
        let m = leaves.len();
        let mid = self.cut(leaves, ids, depth);
        let (ll, rl) = leaves.split_at_mut(mid);
        let (li, ri) = ids.split_at_mut(mid);
        let side = |ls: &mut [Aabb<D>], is: &mut [u32], first: usize, node: usize| -> (u32, Aabb<D>) {
            // SAFETY: leaf `first < n`, node `node < n - 1`, each written by its parent
            // alone (see `Sah`).
            if ls.len() == 1 {
                unsafe { self.leaf_parents.put(first, idx as u32) };
                (LEAF | first as u32, ls[0])
            } else {
                unsafe { self.parents.put(node, idx as u32) };
                (node as u32, self.node(ls, is, first, node, depth + 1))
            }
        };
        // Preorder numbering, as the Morton-order build: the left child right after its
        // parent, the right one after the left's `mid - 1` internal nodes.
        let (left, right) = (idx + 1, idx + mid);
        let ((cl, bl), (cr, br)) = if m >= PAR_MIN {
            crate::par::join(|| side(ll, li, at, left), || side(rl, ri, at + mid, right))
        } else {
            (side(ll, li, at, left), side(rl, ri, at + mid, right))
        };
        let node = Node {
            min: [bl.min, br.min],
            max: [bl.max, br.max],
            child: [cl, cr],
            last: [(at + mid - 1) as u32, (at + m - 1) as u32],
        };
        // SAFETY: `idx < n - 1`, given to this range alone (see `Sah`).
        unsafe { self.nodes.put(idx, node) };
        Aabb {
            min: std::array::from_fn(|k| bl.min[k].min(br.min[k])),
            max: std::array::from_fn(|k| bl.max[k].max(br.max[k])),
        }
    }

    /// Reorders the range so that its left part comes first and returns the left part's
    /// length, in `1..leaves.len()`.
    fn cut(&self, leaves: &mut [Aabb<D>], ids: &mut [u32], depth: usize) -> usize {
        let m = leaves.len();
        let middle = m / 2;
        // A cut in the middle at every level from here on keeps the tree within a walk's
        // stack: depth + ceil(log2 m) levels at most.
        let levels = usize::BITS - (m - 1).leading_zeros();
        if m == 2 || depth + levels as usize + 2 >= MAX_DEPTH {
            return middle;
        }
        let mut from = [f32::INFINITY; D];
        let mut to = [f32::NEG_INFINITY; D];
        for b in leaves.iter() {
            for k in 0..D {
                let c = b.centre_on(k);
                from[k] = from[k].min(c);
                to[k] = to[k].max(c);
            }
        }
        // Along the axis where the centres spread widest (in f64: the spread of two f32
        // extremes overflows).
        let spread = |k: usize| to[k] as f64 - from[k] as f64;
        let axis = (0..D).fold(0, |a, k| if spread(k) > spread(a) { k } else { a });
        let scale = (BINS as f64 / spread(axis)) as f32;
        if !(scale.is_finite() && scale > 0.0) {
            return middle;
        }
        let from = from[axis];
        let bins = if m >= PAR_BIN {
            leaves
                .par_chunks(chunk_len(m))
                .map(|c| {
                    let mut b = Bins::empty();
                    b.add(c, axis, from, scale);
                    b
                })
                .reduce(Bins::empty, Bins::merge)
        } else {
            let mut b = Bins::empty();
            b.add(leaves, axis, from, scale);
            b
        };
        let Some(last) = bins.best() else { return middle };
        // Partition in place: boxes whose centre bins at or before `last` to the front.
        let left = |b: &Aabb<D>| bin(b.centre_on(axis), from, scale) <= last;
        let (mut i, mut j) = (0, m);
        loop {
            while i < j && left(&leaves[i]) {
                i += 1;
            }
            while i < j && !left(&leaves[j - 1]) {
                j -= 1;
            }
            if i >= j {
                break;
            }
            leaves.swap(i, j - 1);
            ids.swap(i, j - 1);
        }
        if i == 0 || i == m {
            middle
        } else {
            i
        }
    }
}
