//! Every overlapping pair of the tree's boxes: each box against the boxes after it in its
//! record, the later records of its node, and the groups of the nodes above it, found
//! from its node up to the root.
//!
//! - Input: a built [`Quadtree`], the caller's box count, a [`PairBudget`].
//! - Output: every pair `[i, j]`, `i < j` (the caller's indices), sorted ascending, unique.
//! - Cost: per box, its record's boxes after it (sorted: those that start within its
//!   extent), a bounds test a later record of its node, a test of the ancestors' group
//!   bounds (eight a step, from the [`Ancestors`] stack), and in each group it meets a
//!   binary search and a window (sorted records) or every box (small ones). Boxes are
//!   tested eight at a time. Then the crate's pair sort.
//! - Parallel: fixed chunks of positions (`kernels::par::chunk_len`), each with its own key
//!   list, kept in the tree; the pair sort makes the output independent of the threads.
//! - Allocation: the kept key lists' growth and the output (`try_reserve`: a refused
//!   allocation stops the budget, which reports `Error::OutOfMemory`).
//! - Source: this crate (module docs of `quadtree`).

use super::{class_bits, code_shift, coord, depth, split, Quadtree, UNSORTED};
use crate::algorithms::sap::overlap_mask8;
use crate::kernels::pair_sort::{key, PairBudget};
use crate::kernels::par::chunk_len;
use crate::par::prelude::*;
use crate::Aabb;
use wide::f32x8;

impl<const D: usize> Quadtree<D> {
    /// Every overlapping pair into `out` (cleared first), as the caller's indices, of
    /// `n_ids` boxes in all; returns the boxes tested. Stops early once `budget` stops
    /// (the caller reports its verdict and clears `out`).
    pub(crate) fn pairs_into(&mut self, n_ids: usize, budget: &PairBudget, out: &mut Vec<[u32; 2]>) -> usize {
        out.clear();
        let n = self.ids.len();
        if n < 2 {
            return 0;
        }
        let chunk = chunk_len(n);
        let chunks = n.div_ceil(chunk);
        if self.parts.len() < chunks {
            self.parts.resize_with(chunks, Vec::new);
        }
        let mut parts = std::mem::take(&mut self.parts);
        let this = &*self;
        let tests: usize = parts[..chunks]
            .par_iter_mut()
            .enumerate()
            .map(|(c, part)| {
                crate::kernels::simd::fast(
                    #[inline(always)]
                    || this.chunk_pairs(c * chunk..((c + 1) * chunk).min(n), part, budget),
                )
            })
            .sum();
        crate::kernels::pair_sort::finish_parts(parts[..chunks].iter().map(|p| &p[..]), n_ids, budget, out);
        self.parts = parts;
        tests
    }

    /// The pair keys of the boxes at positions `rows` into `part` (cleared first); returns
    /// the boxes tested. Counts its keys against `budget` every
    /// [`BUDGET_STEP`](crate::kernels::pair_sort::BUDGET_STEP) or so and ends early once it
    /// stops.
    #[inline(always)]
    fn chunk_pairs(&self, rows: std::ops::Range<usize>, part: &mut Vec<u64>, budget: &PairBudget) -> usize {
        part.clear();
        let (mut counted, mut tests, mut failed) = (0, 0, false);
        // The record holding the chunk's first position, and its ancestors.
        let mut g = self.starts.partition_point(|&s| s as usize <= rows.start) - 1;
        let mut up = Ancestors::of(self, g);
        for p in rows {
            while self.starts[g + 1] as usize <= p {
                g += 1;
                up.step(self, g);
            }
            let id = self.ids[p];
            tests += self.box_pairs(p, g, &up, |j| {
                if part.len() == part.capacity() && part.try_reserve(part.len().max(64)).is_err() {
                    failed = true;
                    return;
                }
                part.push(key(id, self.ids[j]));
            });
            if budget.account(part.len(), &mut counted, failed) {
                return tests;
            }
        }
        budget.settle(part.len(), counted);
        tests
    }

    /// Box `p` (of record `g`, whose ancestors are `up`) against the boxes after it in its
    /// record, the later records of its node, and the records of every ancestor node;
    /// `emit(j)` for each position `j` whose box overlaps it. Returns the boxes tested.
    #[inline(always)]
    fn box_pairs(&self, p: usize, g: usize, up: &Ancestors<D>, mut emit: impl FnMut(usize)) -> usize {
        let b =
            Aabb { min: std::array::from_fn(|k| self.lo[k][p]), max: std::array::from_fn(|k| self.hi[k][p]) };
        let mut tests = self.run((p + 1, self.starts[g + 1] as usize), &b, Some(g), false, &mut emit);
        // The later records of its group, then of its node.
        let end = self.gend[g] as usize;
        for r in g + 1..end {
            tests += self.record_pairs(r, &b, &mut emit);
        }
        tests += self.cell_pairs(end, self.nodes[g] >> class_bits(D), &b, &mut emit);
        up.meeting(&b, |h| tests += self.group_pairs(h, &b, &mut emit));
        tests
    }

    /// `b` against the records from `h` on while they belong to `cell` (a node key without
    /// its class), each only where its bounds meet `b`. Returns the boxes tested.
    #[inline(always)]
    fn cell_pairs(&self, mut h: usize, cell: u32, b: &Aabb<D>, emit: &mut impl FnMut(usize)) -> usize {
        let mut tests = 0;
        while h < self.nodes.len() && self.nodes[h] >> class_bits(D) == cell {
            if self.gbounds[h].overlaps(b) {
                tests += self.group_pairs(h, b, emit);
            }
            h = self.gend[h] as usize;
        }
        tests
    }

    /// `b` against the group whose first record is `h` (its bounds meet `b`).
    #[inline(always)]
    fn group_pairs(&self, h: usize, b: &Aabb<D>, emit: &mut impl FnMut(usize)) -> usize {
        let end = self.gend[h] as usize;
        if end == h + 1 {
            self.run((self.starts[h] as usize, self.starts[end] as usize), b, Some(h), true, emit)
        } else {
            (h..end).map(|r| self.record_pairs(r, b, emit)).sum()
        }
    }

    /// `b` against record `r`, where its bounds meet `b`.
    #[inline(always)]
    fn record_pairs(&self, r: usize, b: &Aabb<D>, emit: &mut impl FnMut(usize)) -> usize {
        if self.bounds[r].overlaps(b) {
            self.run((self.starts[r] as usize, self.starts[r + 1] as usize), b, Some(r), true, emit)
        } else {
            0
        }
    }

    /// `b` against positions `from..to`, eight at a time. Where the run is a node sorted
    /// on an axis (`g`: its record, else `None`), only the boxes whose lower bounds on it
    /// lie in `b`'s extent widened below by the node's reach: those before start more
    /// grid cells below `b` than any box of the node spans (`window`; `b`'s own node
    /// needs none: the boxes after `b` start where it does or later). Returns the boxes
    /// tested.
    #[inline(always)]
    fn run(
        &self,
        (from, to): (usize, usize),
        b: &Aabb<D>,
        g: Option<usize>,
        window: bool,
        emit: &mut impl FnMut(usize),
    ) -> usize {
        let Some(g) = g.filter(|&g| self.axes[g] != UNSORTED) else {
            let mut j = from;
            while j < to {
                let lanes = (to - j).min(8);
                let live = if lanes == 8 { 0xff } else { (1u32 << lanes) - 1 };
                emit_mask(overlap_mask8(&self.lo, &self.hi, j, b, 0) & live, j, emit);
                j += lanes;
            }
            return to.max(from) - from;
        };
        let a = self.axes[g] as usize;
        let mut j = from;
        if window {
            let reach = self.reach[g];
            let low = coord(&self.quant, a, b.min[a]);
            if low > reach {
                // INVARIANT: the grid coordinates ascend with the lower bounds (the
                // quantiser is monotone), and a box whose lower bound's coordinate plus the
                // reach is under `low` ends in a cell before `b`'s first, so before `b`.
                j += self.qlo[from..to].partition_point(|&q| q < low - reach);
            }
        }
        if j >= to {
            return 0;
        }
        // Aligned blocks of eight positions, so that each has its upper bound on `a`
        // (`block_hi`): a block of boxes that all end before `b` is passed over.
        let (mut base, mut live) = (j & !7, (0xffu32 << (j & 7)) & 0xff);
        let mut tests = 0;
        while base < to {
            if to - base < 8 {
                live &= (1 << (to - base)) - 1;
            }
            if self.lo[a][base + live.trailing_zeros() as usize] > b.max[a] {
                // The node ascends on `a`: every box from here starts past `b`.
                break;
            }
            if self.block_hi[base / 8] >= b.min[a] {
                let starts = f32x8::from(&self.lo[a][base..base + 8]);
                let within = starts.simd_le(f32x8::splat(b.max[a])).to_bitmask() & live;
                emit_mask(overlap_mask8(&self.lo, &self.hi, base, b, 0) & within, base, emit);
                tests += within.count_ones() as usize;
                if within != live {
                    break;
                }
            }
            base += 8;
            live = 0xff;
        }
        tests
    }
}

/// `emit(j + l)` for every bit `l` set in `m`.
#[inline(always)]
fn emit_mask(mut m: u32, j: usize, emit: &mut impl FnMut(usize)) {
    while m != 0 {
        emit(j + m.trailing_zeros() as usize);
        m &= m - 1;
    }
}

/// The first index in `from..to` whose key is at least `target` (`to` if none); `keys`
/// ascends. Gallops from `from`: the answer is usually a few records on.
#[inline(always)]
pub(super) fn first_at_least(keys: &[u32], from: usize, to: usize, target: u64) -> usize {
    let mut lo = from;
    let mut step = 1;
    loop {
        let probe = lo + step - 1;
        if probe >= to {
            return lo + keys[lo..to].partition_point(|&k| (k as u64) < target);
        }
        if keys[probe] as u64 >= target {
            return lo + keys[lo..probe].partition_point(|&k| (k as u64) < target);
        }
        lo = probe + 1;
        step *= 2;
    }
}

/// The most groups the ancestors of a record hold: `2^D - 1` classes a level above the
/// finest (1D: 27, 2D: 39, 3D: 56).
const MAX_GROUPS: usize = 64;
const _: () = assert!(
    depth(1) as usize <= MAX_GROUPS
        && 3 * depth(2) as usize <= MAX_GROUPS
        && 7 * depth(3) as usize <= MAX_GROUPS
);

/// The nodes above a record's node that hold boxes, coarsest first, as a stack kept along
/// the walk in preorder: their first records, and the bounds of all their groups side by
/// side (eight tested at a time; lanes past the last hold NaN, which meets nothing).
struct Ancestors<const D: usize> {
    cells: [u32; 32],
    /// Groups on the stack before each cell's.
    below: [u8; 32],
    len: usize,
    lo: [[f32; MAX_GROUPS + 8]; D],
    hi: [[f32; MAX_GROUPS + 8]; D],
    /// Each group's first record.
    group: [u32; MAX_GROUPS],
    groups: usize,
    /// The first record of the current record's node.
    first: usize,
}

impl<const D: usize> Ancestors<D> {
    /// The ancestors of record `g`: a search a level for the node of that level's prefix.
    fn of(t: &Quadtree<D>, g: usize) -> Self {
        let mut up = Self {
            cells: [0; 32],
            below: [0; 32],
            len: 0,
            lo: [[f32::NAN; MAX_GROUPS + 8]; D],
            hi: [[f32::NAN; MAX_GROUPS + 8]; D],
            group: [0; MAX_GROUPS],
            groups: 0,
            first: g,
        };
        let (code, level) = split(t.nodes[g], D);
        for m in 0..level {
            let shift = (depth(D) - m) * D as u32;
            let cell = (code >> shift << shift) << code_shift(D) | m << class_bits(D);
            let a = first_at_least(&t.nodes, 0, g, cell as u64);
            if a < g && t.nodes[a] >> class_bits(D) == cell >> class_bits(D) {
                up.push(t, a);
            }
        }
        while up.first > 0 && t.nodes[up.first - 1] >> class_bits(D) == t.nodes[g] >> class_bits(D) {
            up.first -= 1;
        }
        up
    }

    /// Pushes the cell whose first record is `a`, with its groups.
    #[inline(always)]
    fn push(&mut self, t: &Quadtree<D>, a: usize) {
        self.cells[self.len] = a as u32;
        self.below[self.len] = self.groups as u8;
        self.len += 1;
        let cell = t.nodes[a] >> class_bits(D);
        let mut h = a;
        while h < t.nodes.len() && t.nodes[h] >> class_bits(D) == cell {
            // INVARIANT: a cell above the finest level has at most `2^D - 1` groups (one a
            // class), and the stack at most `depth` cells (MAX_GROUPS).
            let x = self.groups;
            for k in 0..D {
                self.lo[k][x] = t.gbounds[h].min[k];
                self.hi[k][x] = t.gbounds[h].max[k];
            }
            self.group[x] = h as u32;
            self.groups += 1;
            h = t.gend[h] as usize;
        }
    }

    /// Pops the top cell.
    #[inline(always)]
    fn pop(&mut self) {
        self.len -= 1;
        let keep = self.below[self.len] as usize;
        for k in 0..D {
            self.lo[k][keep..self.groups].fill(f32::NAN);
            self.hi[k][keep..self.groups].fill(f32::NAN);
        }
        self.groups = keep;
    }

    /// Moves on to record `g`, the one after the current.
    #[inline(always)]
    fn step(&mut self, t: &Quadtree<D>, g: usize) {
        if t.nodes[g] >> class_bits(D) == t.nodes[g - 1] >> class_bits(D) {
            return;
        }
        if g < t.next[self.first] as usize {
            self.push(t, self.first);
        }
        while self.len > 0 && g >= t.next[self.cells[self.len - 1] as usize] as usize {
            self.pop();
        }
        self.first = g;
    }

    /// The first record of each ancestor group whose bounds meet `b`, to `visit`.
    #[inline(always)]
    fn meeting(&self, b: &Aabb<D>, mut visit: impl FnMut(usize)) {
        let lo: [&[f32]; D] = std::array::from_fn(|k| &self.lo[k][..]);
        let hi: [&[f32]; D] = std::array::from_fn(|k| &self.hi[k][..]);
        let mut j = 0;
        while j < self.groups {
            let mut m = overlap_mask8(&lo, &hi, j, b, 0);
            while m != 0 {
                visit(self.group[j + m.trailing_zeros() as usize] as usize);
                m &= m - 1;
            }
            j += 8;
        }
    }
}
