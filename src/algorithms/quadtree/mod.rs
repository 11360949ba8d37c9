//! A quadtree (2D), octree (3D) or binary tree of intervals (1D) over the boxes, built from
//! Morton order: each box sits in the finest node (an aligned cell) that holds it whole,
//! and meets only boxes of its own node, of the nodes above it and of the nodes below.
//!
//! - Input: boxes, the margin, and grid bounds (the scan's, strays trimmed). Output: every
//!   overlapping pair `[i, j]`, `i < j`, sorted ascending, unique ([`Quadtree::pairs_into`]).
//! - Grid: [`depth`]`(D)` levels below the root (1D: 27, 2D: 13, 3D: 8), so that a node's
//!   Morton code, its level, its class and a box index fit one `u64` key. Coordinates are
//!   quantised by the crate's clamping [`Quantizer`] over the bounds: a box outside them
//!   (parked far away) lands on the border cells, where the exact test still decides.
//! - Node of a box: the common prefix of the Morton codes of its quantised corners, its
//!   level the prefix's length in whole levels. A box on a cell's midline stays in that
//!   cell, however small it is (the seed's "finest possible resolution"). Its class: the
//!   axes on which it crosses the node's midlines, so that a node's boxes split into
//!   planes (3D) or lines (2D) through its centre, each narrow across its axes.
//! - Key layout (`u64`): `node << 32 | index`, `node = code << (LB + CB) | level << CB |
//!   class` ([`level_bits`], [`class_bits`]), `code` the node's Morton code padded with
//!   zeros to full depth. Sorted on the node bits (stable), every node's subtree is one
//!   contiguous range in preorder, the node's own boxes first (an ancestor's padded code is
//!   its first descendant's, and its level is lower). Dead boxes (inside out under a
//!   negative margin) get an all-ones key, sort last and are cut off.
//! - Groups and records: the boxes of one key are a group. A group of at least
//!   [`SORT_MIN`] boxes is sorted along the axis where a sweep of it expects the fewest
//!   tests a box (extents over the spread of lower bounds); its boxes over [`LONG`] times
//!   the mean extent along that axis (planks among crates) go last, in a record with an
//!   axis of their own; where a second axis spreads the rest well (a plane in 3D), they are
//!   first cut along it into records of about [`PART`] boxes. Each record keeps its bounds,
//!   its reach (the most grid cells a box of it spans on its axis) and, per aligned block
//!   of eight positions, the greatest upper bound on that axis.
//! - Pairs: the seed's search, from a box's node up to the root: each box against the
//!   boxes after it in its record (a sweep where sorted), the later records of its node,
//!   and the groups of every node above it whose bounds meet it (eight groups a test:
//!   a stack of the ancestors' group bounds is kept along the preorder walk). In a sorted
//!   record only the boxes whose lower bound's cell lies within the reach below the box
//!   and whose lower bound is within its upper bound are tested, blocks that end before it
//!   passed over. Every pair is found once, from the box in the finer node (same node: the
//!   earlier position): two overlapping boxes have overlapping quantised boxes (the
//!   quantiser is monotone), and two aligned cells sharing a point are nested.
//! - Cost: O(n) for the keys, the records and the gather, a radix sort of at most 32 bits,
//!   two comparison sorts of each big group. Per box, a test of its ancestors' groups
//!   (under `depth * (2^D - 1)`), a binary search and a window in each group it meets, and
//!   its own record's sweep. In a uniform scene most boxes sit a few levels above the
//!   finest and meet few groups. The cost a box does not shrink with the scene's density as
//!   a sweep's does: a box pays for every level above it, and boxes on a coarse node's
//!   midlines meet many boxes below them (many queries, each short), so the columns find
//!   the same pairs with less work a box on every scene `benches/pairs.rs` runs (see
//!   `docs/BENCHMARKS.md`, "Quadtree"). The cliffs are a sweep's: many boxes of one node
//!   overlapping on its sort axis (a staircase of planks).
//! - Parallel: the keys, the groups, their sorts, the records, the gather, the bounds and
//!   the pair walks over fixed chunks (`kernels::par::chunk_len`); the radix sort is the
//!   crate's parallel one. The tree depends only on the boxes and the bounds, and the pairs
//!   are sorted, so the output is the same bytes for any thread count.
//! - Allocation: [`Quadtree`] keeps its keys, radix scratch, structure-of-arrays boxes,
//!   group and record arrays and per-chunk pair-key lists between frames; a steady stream
//!   of frames of similar size allocates only the output's growth.
//! - Source: M. Baczynski, "Quadtree demonstration" (Polygonal Labs): every object in the
//!   finest node that holds it, a search from the object's node bubbling up to the root.
//!   Built, as D. Lavrov's article on collision detection in Morton order suggests, by
//!   sorting Morton codes instead of inserting into a pointer tree; the classes, records,
//!   windows and the ancestor stack are this crate's.
//!
//! `build` makes the keys, sorts them, cuts the records and gathers the boxes; `pairs`
//! walks them.

mod build;
mod pairs;
#[cfg(test)]
mod tests;

use crate::kernels::morton::Quantizer;
use crate::Aabb;

/// Levels below the root in `d` dimensions: as many as fit the 32 key bits above the box
/// index with the level field.
pub(crate) const fn depth(d: usize) -> u32 {
    match d {
        1 => 27,
        2 => 13,
        _ => 8,
    }
}

/// Bits of the level field of a node key (levels `0..=depth`, never all ones, so that the
/// all-ones key of a dead box sorts after every live one).
pub(crate) const fn level_bits(d: usize) -> u32 {
    if d == 1 {
        5
    } else {
        4
    }
}

/// Bits of the class field of a node key: which of the node's midlines a box crosses, an
/// axis a bit (none in 1D, where every box above the finest level crosses its node's).
pub(crate) const fn class_bits(d: usize) -> u32 {
    if d == 1 {
        0
    } else {
        d as u32
    }
}

/// Where a node key's padded code begins: above its level and class.
pub(crate) const fn code_shift(d: usize) -> u32 {
    level_bits(d) + class_bits(d)
}

/// Bits of a node key: the padded code, the level and the class.
const fn key_bits(d: usize) -> u32 {
    depth(d) * d as u32 + code_shift(d)
}

const _: () = assert!(key_bits(1) <= 32 && key_bits(2) <= 32 && key_bits(3) <= 32);
const _: () = assert!(depth(1) < (1 << level_bits(1)) - 1 && depth(3) < (1 << level_bits(3)) - 1);

/// Groups (a node's boxes of one class) with at least this many boxes are sorted along an
/// axis and swept; smaller ones are tested whole, eight boxes a step.
pub(crate) const SORT_MIN: usize = 32;

/// Boxes a record of a group cut into several holds (about).
pub(crate) const PART: usize = 64;

/// A box of a sorted group longer along its sort axis than this many times the group's
/// mean extent goes to a record of the group's long boxes.
pub(crate) const LONG: f64 = 4.0;

/// `axes` entry of a record whose boxes are in index order (a group of fewer than
/// [`SORT_MIN`]).
const UNSORTED: u8 = u8::MAX;

/// Padding after the structure-of-arrays boxes, so that an eight-lane load at any box
/// stays in bounds (the lanes past a run's end are masked off).
const PAD: usize = 8;

/// The tree (module docs). INVARIANTS, after [`Quadtree::build`] (`Quadtree::validate`
/// checks them): `keys` ascend on their node bits, one a live box; `starts` has one more
/// entry than `nodes`, ascending from 0 to the live count; record `g` holds positions
/// `starts[g]..starts[g + 1]`, whose keys carry `nodes[g]`; the records of a group of at
/// least [`SORT_MIN`] boxes ascend on `lo[axes[g]]`, the others are `UNSORTED`; `bounds`,
/// `reach`, `qlo`, `next`, `gend`, `gbounds` and `block_hi` are what their fields say.
#[derive(Debug)]
pub(crate) struct Quadtree<const D: usize> {
    /// The quantiser of the last build (bounds from the caller).
    quant: Quantizer<D>,
    /// `node << 32 | index`, sorted; then the radix sort's other buffer, which the big
    /// groups' sorts borrow.
    keys: Vec<u64>,
    scratch: Vec<u64>,
    /// The live boxes, margin applied, in key order, axis by axis, and their indices.
    lo: [Vec<f32>; D],
    hi: [Vec<f32>; D],
    ids: Vec<u32>,
    /// Per record: its node key (`code << (LB + CB) | level << CB | class`), first
    /// position (one more entry: the live count), sort axis.
    nodes: Vec<u32>,
    starts: Vec<u32>,
    axes: Vec<u8>,
    /// Per record: the first record after its cell's subtree.
    next: Vec<u32>,
    /// Per position in a sorted record: the grid coordinate of its lower bound on the
    /// record's sort axis (ascending within the record).
    qlo: Vec<u32>,
    /// Per sorted record: the most grid cells any of its boxes spans on its sort axis.
    reach: Vec<u32>,
    /// Per record: the bounds of its boxes.
    bounds: Vec<Aabb<D>>,
    /// Per record the record after its group (the records of one node key); at a group's
    /// first record the bounds of the whole group.
    gend: Vec<u32>,
    gbounds: Vec<Aabb<D>>,
    /// Per aligned block of eight positions: the greatest upper bound, each on its record's
    /// sort axis, of its boxes in sorted records (`-inf` where none).
    block_hi: Vec<f32>,
    /// Per group of boxes with one node key (the build's unit before the records): its
    /// first position (one more entry, the live count), its records of cut boxes, its long
    /// boxes, and the sort axes of both.
    group: Vec<u32>,
    parts_of: Vec<u32>,
    long_of: Vec<u32>,
    gaxis: Vec<[u8; 2]>,
    /// Per chunk of a pass: a count, then where the chunk's items begin.
    chunk_sums: Vec<usize>,
    /// Per chunk of the pair walk, its pair keys (kept).
    parts: Vec<Vec<u64>>,
}

impl<const D: usize> Default for Quadtree<D> {
    fn default() -> Self {
        Self {
            quant: Quantizer::new([0.0; D], [0.0; D]),
            keys: Vec::new(),
            scratch: Vec::new(),
            lo: std::array::from_fn(|_| Vec::new()),
            hi: std::array::from_fn(|_| Vec::new()),
            ids: Vec::new(),
            nodes: Vec::new(),
            starts: Vec::new(),
            axes: Vec::new(),
            reach: Vec::new(),
            qlo: Vec::new(),
            next: Vec::new(),
            bounds: Vec::new(),
            block_hi: Vec::new(),
            gend: Vec::new(),
            gbounds: Vec::new(),
            group: Vec::new(),
            parts_of: Vec::new(),
            long_of: Vec::new(),
            gaxis: Vec::new(),
            chunk_sums: Vec::new(),
            parts: Vec::new(),
        }
    }
}

impl<const D: usize> Quadtree<D> {
    /// Live boxes in the tree.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// Nodes holding boxes.
    #[cfg(test)]
    pub(crate) fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Checks the invariants (tests).
    #[cfg(test)]
    pub(crate) fn validate(&self) -> Result<(), String> {
        let n = self.ids.len();
        let r = self.nodes.len();
        if self.starts.len() != r + 1 || self.starts[0] != 0 || self.starts[r] as usize != n {
            return Err(format!("starts {:?} for {r} records, {n} boxes", self.starts.len()));
        }
        for h in 0..r {
            let (s, e) = (self.starts[h] as usize, self.starts[h + 1] as usize);
            if s >= e {
                return Err(format!("record {h} empty"));
            }
            if h > 0 && self.nodes[h - 1] > self.nodes[h] {
                return Err(format!("node keys not ascending at {h}"));
            }
            // The group: the records with this key.
            let first = (0..=h).rev().take_while(|&x| self.nodes[x] == self.nodes[h]).last().unwrap();
            let last = (h..r).take_while(|&x| self.nodes[x] == self.nodes[h]).last().unwrap();
            let size = (self.starts[last + 1] - self.starts[first]) as usize;
            let a = self.axes[h];
            if (size >= SORT_MIN) != (a != UNSORTED) {
                return Err(format!("record {h} of a group of {size}: axis {a}"));
            }
            let mut bound = Aabb { min: [f32::INFINITY; D], max: [f32::NEG_INFINITY; D] };
            let mut reach = 0;
            for p in s..e {
                if (self.keys[p] >> 32) as u32 != self.nodes[h] || self.keys[p] as u32 != self.ids[p] {
                    return Err(format!("position {p}: key of another node"));
                }
                let b = Aabb {
                    min: std::array::from_fn(|k| self.lo[k][p]),
                    max: std::array::from_fn(|k| self.hi[k][p]),
                };
                if node_key::<D>(grid(&self.quant, &b.min), grid(&self.quant, &b.max)) != self.nodes[h] {
                    return Err(format!("position {p}: box not in its finest node"));
                }
                for k in 0..D {
                    bound.min[k] = bound.min[k].min(b.min[k]);
                    bound.max[k] = bound.max[k].max(b.max[k]);
                }
                if a != UNSORTED {
                    let a = a as usize;
                    if p > s && self.lo[a][p - 1] > self.lo[a][p] {
                        return Err(format!("record {h} not sorted on axis {a}"));
                    }
                    if self.block_hi[p / 8] < b.max[a] {
                        return Err(format!("position {p}: block bound under its box"));
                    }
                    reach = reach.max(coord(&self.quant, a, b.max[a]) - coord(&self.quant, a, b.min[a]));
                }
            }
            if bound != self.bounds[h] || reach != self.reach[h] {
                return Err(format!("record {h}: bounds or reach"));
            }
            let (code, level) = split(self.nodes[h], D);
            let shift = (depth(D) - level) * D as u32;
            let inside = |x: usize| (split(self.nodes[x], D).0 >> shift) as u64 == (code >> shift) as u64;
            let next = self.next[h] as usize;
            if !(h < next && next <= r && (h + 1..next).all(inside) && (next == r || !inside(next))) {
                return Err(format!("record {h}: subtree end {next}"));
            }
        }
        Ok(())
    }
}

/// The grid coordinate of `x` on `axis` under `quant`, [`depth`]`(D)` bits.
#[inline(always)]
pub(crate) fn coord<const D: usize>(quant: &Quantizer<D>, axis: usize, x: f32) -> u32 {
    quant.coord(axis, x) >> (crate::kernels::morton::grid_bits(D) - depth(D))
}

/// The grid coordinates of `p` under `quant`, [`depth`]`(D)` bits an axis.
#[inline(always)]
pub(crate) fn grid<const D: usize>(quant: &Quantizer<D>, p: &[f32; D]) -> [u32; D] {
    let shift = crate::kernels::morton::grid_bits(D) - depth(D);
    std::array::from_fn(|k| quant.coord(k, p[k]) >> shift)
}

/// The node key of a box whose quantised corners are `qlo`, `qhi`: the common prefix of
/// their Morton codes, in whole levels, padded with zeros, above its level.
#[inline(always)]
pub(crate) fn node_key<const D: usize>(qlo: [u32; D], qhi: [u32; D]) -> u32 {
    let b = depth(D);
    let (cl, ch) = (crate::kernels::morton::encode(qlo), crate::kernels::morton::encode(qhi));
    let x = cl ^ ch;
    // The highest differing bit belongs to level `depth - 1 - bit / D` (bit 0 is the
    // finest level's x bit); the node is the level above it.
    let level = if x == 0 { b } else { b - 1 - (63 - x.leading_zeros()) / D as u32 };
    let shift = (b - level) * D as u32;
    // The class: the axes on which the box crosses its node's midline, the bits of the
    // level below (zero at the finest level, where there is none).
    let class = if level == b { 0 } else { (x >> (shift - D as u32)) as u32 & ((1 << class_bits(D)) - 1) };
    ((cl >> shift << shift) as u32) << code_shift(D) | level << class_bits(D) | class
}

/// The padded code and the level of a node key.
#[inline(always)]
pub(crate) fn split(node: u32, d: usize) -> (u32, u32) {
    (node >> code_shift(d), node >> class_bits(d) & ((1 << level_bits(d)) - 1))
}
