//! Building the tree: Morton codes of the box centres, a radix sort, then Karras' binary
//! radix tree over the sorted keys with each node's children's bounds.
//!
//! - Input: boxes and the margin. Output: the [`Bvh`]'s leaves, ids and nodes.
//! - Key layout (u64): in the high 32 bits, the box's size class (2 bits, [`size_class`])
//!   and shape class (`D` bits: the axes it is long along, [`shape`]) above the Morton
//!   code of its centre (`(30 - D) / D` bits an axis over the centres' bounds); the box's
//!   index in the low 32. Boxes a sample shows parked far from the rest ([`strays`]) take
//!   the last class (for walks: class 1), the rest are coded over their own bounds. Keys are thus
//!   distinct, and boxes with one code are split by their index bits, so every node has
//!   two children and no path is deeper than 64 splits.
//! - Cost: O(n) for the codes and the gather; a radix sort of the 32 code bits; O(n) nodes,
//!   each found by a binary search of its range (O(log n)).
//! - Parallel: fixed chunks for the codes and the gather; the nodes by recursion, halves
//!   over [`PAR_MIN`] leaves joined with `rayon::join`.
//! - Allocation: the first pass's sums and offsets (a few values a chunk); the keys,
//!   leaves and nodes go to the tree's kept buffers.
//! - Source: T. Karras, "Maximizing parallelism in the construction of BVHs, octrees, and
//!   k-d trees" (2012): the split of a range is where the highest bit that differs
//!   between its first and last keys changes. The `n - 1` internal nodes are numbered in
//!   depth-first order, known from the ranges alone (a node's right child follows its
//!   left subtree of `split - lo` nodes), so the parallel halves need no counter.

use super::{Bvh, Node, LEAF};
use crate::kernels::par::{chunk_len, SendPtr};
use crate::kernels::sample::sample_index;
use crate::par::prelude::*;
use crate::Aabb;

/// Ranges of at least this many leaves build their halves as two tasks.
const PAR_MIN: usize = 4096;

impl<const D: usize> Bvh<D> {
    /// Rebuilds the tree over the live boxes of `boxes`, each grown by `margin`, for the
    /// all-pairs search: boxes are grouped by size class and by shape class.
    pub(crate) fn build(&mut self, boxes: &[Aabb<D>], margin: f32) {
        self.build_with(boxes, margin, true);
    }

    /// Rebuilds the tree as [`Bvh::build`], for region and ray walks: grouped by size class
    /// only. A shape class spares the all-pairs search long boxes of other directions, but
    /// a region walk must enter every class whose subtree meets it, and boxes of every
    /// shape lie side by side in ordinary scenes (a terrain's flat and steep triangles):
    /// there it made region queries several times slower. PERF: benches/queries.rs.
    pub(crate) fn build_for_queries(&mut self, boxes: &[Aabb<D>], margin: f32) {
        self.build_with(boxes, margin, false);
    }

    fn build_with(&mut self, boxes: &[Aabb<D>], margin: f32, shapes: bool) {
        self.wide = Vec::new();
        // The centres' bounds, in f64 (a centre of two f32 extremes overflows f32).
        let centre = |b: &Aabb<D>, k: usize| {
            let c = (b.min[k] as f64 + b.max[k] as f64) * 0.5;
            if c.is_nan() {
                0.0
            } else {
                c.clamp(f32::MIN as f64, f32::MAX as f64)
            }
        };
        let chunk = chunk_len(boxes.len());
        // Per chunk, in order: the centres' bounds, and the sum and count of the boxes'
        // longest sides (for the size classes).
        let parts: Vec<([f64; D], [f64; D], f64, usize)> = boxes
            .par_chunks(chunk)
            .map(|c| {
                let mut lo = [f64::INFINITY; D];
                let mut hi = [f64::NEG_INFINITY; D];
                let (mut sides, mut live) = (0.0, 0);
                for b in c.iter().map(|b| b.grown(margin)).filter(|g| !g.is_inverted()) {
                    for k in 0..D {
                        lo[k] = lo[k].min(centre(&b, k));
                        hi[k] = hi[k].max(centre(&b, k));
                    }
                    sides += longest(&b);
                    live += 1;
                }
                (lo, hi, sides, live)
            })
            .collect();
        let (mut lo, mut hi, mut sides, mut live) = ([f64::INFINITY; D], [f64::NEG_INFINITY; D], 0.0, 0);
        for p in &parts {
            for k in 0..D {
                lo[k] = lo[k].min(p.0[k]);
                hi[k] = hi[k].max(p.1[k]);
            }
            sides += p.2;
            live += p.3;
        }
        let mean = if live > 0 && sides.is_finite() { sides / live as f64 } else { 0.0 };
        // The top `D + 2` code bits are the box's class, the rest the centre's Morton code.
        let bits = (32 - CLASS_BITS - D as u32) / D as u32;
        let cells = ((1u64 << bits) - 1) as f64;
        let scale: [f64; D] =
            std::array::from_fn(|k| if hi[k] > lo[k] { cells / (hi[k] - lo[k]) } else { 0.0 });
        // Boxes parked far from the rest (see `strays`) are a class of their own (for
        // the all-pairs search, the last one, which only the longest boxes of every
        // shape share), coded over all the centres' bounds, and the rest over their own
        // bounds, so that the far ones do not squeeze the others into a few cells: there
        // the tree would hold them in input order, every node as wide as the scene, and
        // the all-pairs search would test nearly every pair. PERF: benches/pairs.rs
        // (`parked:10:1e9` with `BP_METHODS=tree`).
        let kept = strays(boxes, margin, mean);
        let [(cut_lo, cut_hi), (klo, khi)] = kept.unwrap_or([(lo, hi); 2]);
        let klo: [f64; D] =
            std::array::from_fn(|k| if klo[k].is_finite() { klo[k].max(lo[k]) } else { lo[k] });
        let khi: [f64; D] =
            std::array::from_fn(|k| if khi[k].is_finite() { khi[k].min(hi[k]) } else { hi[k] });
        let kscale: [f64; D] =
            std::array::from_fn(|k| if khi[k] > klo[k] { cells / (khi[k] - klo[k]) } else { 0.0 });
        // One key a live box, in input order: each chunk writes its keys from the count of
        // live boxes before it (the first pass counted them), into the kept buffer.
        let mut at = Vec::with_capacity(parts.len());
        let mut total = 0;
        for p in &parts {
            at.push(total);
            total += p.3;
        }
        crate::kernels::par::grow_to(&mut self.keys, total);
        let out = SendPtr(self.keys.as_mut_ptr());
        boxes.par_chunks(chunk).zip(at).enumerate().for_each(|(ci, (c, mut at))| {
            for (j, b) in c.iter().enumerate() {
                let g = b.grown(margin);
                if g.is_inverted() {
                    continue;
                }
                let stray =
                    kept.is_some() && (0..D).any(|k| !(cut_lo[k]..=cut_hi[k]).contains(&centre(&g, k)));
                let q: [u32; D] = if stray || kept.is_none() {
                    std::array::from_fn(|k| ((centre(&g, k) - lo[k]) * scale[k]).clamp(0.0, cells) as u32)
                } else {
                    std::array::from_fn(|k| ((centre(&g, k) - klo[k]) * kscale[k]).clamp(0.0, cells) as u32)
                };
                let class = match (shapes, stray) {
                    (true, false) => size_class(&g, mean) << D | shape(&g),
                    (true, true) => (1 << (CLASS_BITS + D as u32)) - 1,
                    (false, _) => stray as u64,
                };
                let code = crate::kernels::morton::encode_lut(q) | class << (bits * D as u32);
                // SAFETY: chunk `ci` writes `at..at + its live boxes`, ranges that partition
                // `0..total` (the prefix sums of the first pass's counts, which the same
                // test made), and `keys` has length `total`.
                unsafe { out.put(at, code << 32 | (ci * chunk + j) as u64) };
                at += 1;
            }
        });
        // Stable on the code bits: boxes of one code stay in index order, so the keys end
        // fully sorted as u64.
        let code_bits = bits * D as u32 + D as u32 + CLASS_BITS;
        crate::kernels::radix_sort::sort(&mut self.keys, &mut self.scratch, 32..32 + code_bits);
        let n = self.keys.len();
        self.ids.clear();
        self.ids.extend(self.keys.iter().map(|&k| k as u32));
        self.leaves.clear();
        self.leaves.par_extend(self.ids.par_iter().map(|&i| boxes[i as usize].grown(margin)));
        self.size_links(n);
        if n >= 2 {
            let t = Tree {
                keys: &self.keys,
                leaves: &self.leaves,
                nodes: SendPtr(self.nodes.as_mut_ptr()),
                parents: SendPtr(self.parents.as_mut_ptr()),
                leaf_parents: SendPtr(self.leaf_parents.as_mut_ptr()),
            };
            t.node(0, n - 1, 0);
        }
    }
}

/// Boxes sampled by [`strays`].
const STRAY_SAMPLE: usize = 256;

/// A gap between the sampled centres on one axis this many times wider than the span of
/// the centres on its fuller side (plus the boxes' mean side) sets the centres beyond it
/// apart as strays, up to half the sample: objects parked far away.
const STRAY_GAP: f64 = 64.0;

/// Where a sample of the boxes (grown by `margin`, `mean` their mean longest side) shows
/// strays on some axis: the cut (a centre outside it is a stray: the middles of the
/// gaps) and the bounds of the sampled centres that are not strays (infinite on an axis
/// without strays); `None` where it shows none. O(s log s) an axis for a sample of s
/// boxes.
fn strays<const D: usize>(boxes: &[Aabb<D>], margin: f32, mean: f64) -> Option<[([f64; D], [f64; D]); 2]> {
    if boxes.len() < 64 {
        return None;
    }
    let step = boxes.len().div_ceil(STRAY_SAMPLE);
    let sample: Vec<Aabb<D>> = (0..boxes.len().div_ceil(step))
        .map(|block| boxes[sample_index(block, step, boxes.len())].grown(margin))
        .filter(|g| !g.is_inverted())
        .collect();
    let (mut cut_lo, mut cut_hi) = ([f64::NEG_INFINITY; D], [f64::INFINITY; D]);
    let (mut lo, mut hi) = ([f64::NEG_INFINITY; D], [f64::INFINITY; D]);
    let mut any = false;
    let mut c = Vec::with_capacity(sample.len());
    for k in 0..D {
        c.clear();
        c.extend(sample.iter().map(|b| (b.min[k] as f64 + b.max[k] as f64) * 0.5).filter(|x| x.is_finite()));
        c.sort_unstable_by(f64::total_cmp);
        let n = c.len();
        if n < 8 {
            continue;
        }
        // The widest gap between neighbours.
        let (i, gap) =
            (1..n).map(|i| (i, c[i] - c[i - 1])).fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        // The fuller side: `c[..i]` or `c[i..]`.
        let (a, b) = if i >= n - i { (0, i) } else { (i, n) };
        if gap > STRAY_GAP * (c[b - 1] - c[a] + mean) {
            any = true;
            (lo[k], hi[k]) = (c[a], c[b - 1]);
            if a == 0 {
                cut_hi[k] = c[i - 1] + gap * 0.5;
            } else {
                cut_lo[k] = c[i] - gap * 0.5;
            }
        }
    }
    any.then_some([(cut_lo, cut_hi), (lo, hi)])
}

/// A box's shape class: bit `k` set where it is over [`LONG`] times longer along axis `k`
/// than along its shortest axis. Why: long boxes of different directions sorted together
/// by their centres make every node's bounds a cube as long as they are, which each walk
/// must enter; grouped by direction first, a node of long boxes is long and thin too.
/// PERF: benches/pairs.rs (`sticks`).
fn shape<const D: usize>(b: &Aabb<D>) -> u64 {
    let ext: [f64; D] = std::array::from_fn(|k| b.max[k] as f64 - b.min[k] as f64);
    let short = ext.iter().fold(f64::INFINITY, |m, &e| m.min(e));
    (0..D).filter(|&k| ext[k] > LONG * short).fold(0, |c, k| c | 1 << k)
}

/// Bits of the size class ([`size_class`]).
const CLASS_BITS: u32 = 2;

/// A box's longest side.
fn longest<const D: usize>(b: &Aabb<D>) -> f64 {
    (0..D).map(|k| b.max[k] as f64 - b.min[k] as f64).fold(0.0, f64::max)
}

/// A box's size class against the mean longest side `mean`: 0 up to twice it, then 1 up to
/// 8 times, 2 up to 32 times, 3 beyond. Why: a few large boxes (rooms over a floor of
/// tiles, a sky box) sorted among the small ones by their centres inflate every node above
/// them, and each walk enters those; in a class of their own they inflate only their own
/// subtree (`scene::tiles`, whose rooms are 2 to 8 tiles a side).
fn size_class<const D: usize>(b: &Aabb<D>, mean: f64) -> u64 {
    let r = longest(b) / mean;
    if r.is_nan() || r <= 2.0 {
        0
    } else if r <= 8.0 {
        1
    } else if r <= 32.0 {
        2
    } else {
        3
    }
}

/// How many times its shortest extent a box's extent along an axis must be for the box to
/// count as long along it ([`shape`]).
const LONG: f64 = 4.0;

impl<const D: usize> Bvh<D> {
    /// Sizes the nodes and the parent maps for `n` leaves (contents to be overwritten).
    pub(super) fn size_links(&mut self, n: usize) {
        let inner = n.saturating_sub(1);
        self.nodes.truncate(inner);
        self.nodes.resize(inner, Node::default());
        self.parents.clear();
        self.parents.resize(inner, 0);
        self.leaf_parents.clear();
        self.leaf_parents.resize(n, 0);
    }
}

/// The sorted keys, the leaves, and where the nodes go, shared by the build's tasks.
struct Tree<'a, const D: usize> {
    keys: &'a [u64],
    leaves: &'a [Aabb<D>],
    nodes: SendPtr<Node<D>>,
    /// Each internal node's parent, and each leaf's (written by the parent).
    parents: SendPtr<u32>,
    leaf_parents: SendPtr<u32>,
}

// SAFETY (for the `Sync` the recursion's tasks need): `nodes` is written only through
// `put` at indices that the preorder numbering gives to exactly one range (a range of m
// leaves owns its node's index and the next m - 2), and `parents` and
// `leaf_parents` at the indices of that range's two children, each the child of one
// node; so no two tasks write one index. The buffers (sized `n - 1`, `n - 1` and `n`)
// outlive `build`.
unsafe impl<const D: usize> Sync for Tree<'_, D> {}

impl<const D: usize> Tree<'_, D> {
    /// Builds internal node `idx` over leaves `lo..=hi` (`lo < hi`) and everything below
    /// it; returns the union of its leaves.
    fn node(&self, lo: usize, hi: usize, idx: usize) -> Aabb<D> {
        let split = self.split(lo, hi);
        let side = |a: usize, b: usize, at: usize| -> (u32, Aabb<D>) {
            // SAFETY: leaf `a < n`, node `at < n - 1`, each written by its parent alone
            // (see `Tree`).
            if a == b {
                unsafe { self.leaf_parents.put(a, idx as u32) };
                (LEAF | a as u32, self.leaves[a])
            } else {
                unsafe { self.parents.put(at, idx as u32) };
                (at as u32, self.node(a, b, at))
            }
        };
        // Depth-first (preorder) numbering: the left child (over lo..=split) comes right
        // after its parent, the right one (over split + 1..=hi) after the left's `split -
        // lo` internal nodes. A walk that goes left reads the next cache line, which the
        // hardware has often fetched already. PERF: benches/queries.rs (`regions_small`).
        let (left, right) = (idx + 1, idx + 1 + (split - lo));
        let ((cl, bl), (cr, br)) = if hi - lo >= PAR_MIN {
            crate::par::join(|| side(lo, split, left), || side(split + 1, hi, right))
        } else {
            (side(lo, split, left), side(split + 1, hi, right))
        };
        let node = Node {
            min: [bl.min, br.min],
            max: [bl.max, br.max],
            child: [cl, cr],
            last: [split as u32, hi as u32],
        };
        // SAFETY: `idx < n - 1`, and the preorder numbering gives it to this range alone
        // (see `Tree`).
        unsafe { self.nodes.put(idx, node) };
        Aabb {
            min: std::array::from_fn(|k| bl.min[k].min(br.min[k])),
            max: std::array::from_fn(|k| bl.max[k].max(br.max[k])),
        }
    }

    /// The last position of the range's left half: the keys `lo..=split` share one more
    /// leading bit with `keys[lo]` than `keys[hi]` does.
    fn split(&self, lo: usize, hi: usize) -> usize {
        let k = self.keys;
        let common = (k[lo] ^ k[hi]).leading_zeros();
        // Keys are sorted and distinct: those sharing more than `common` leading bits with
        // `keys[lo]` form a prefix of the range.
        lo + k[lo + 1..=hi].partition_point(|&x| (k[lo] ^ x).leading_zeros() > common)
    }
}
