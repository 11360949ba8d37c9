//! A hierarchical uniform grid (a spatial hash) that keeps big boxes out of the fine
//! cells: every box is one entry, in the cell that holds its lower corner, on the level
//! whose cells fit its size, and looks through the cells where an overlapping box's lower
//! corner can lie.
//!
//! - Input: the boxes, the margin (each box grown by it; inside-out boxes take no part),
//!   the live grown boxes' bounds (the cells' origin) and the bulk's bounds (its density).
//! - Output: every overlapping pair `[i, j]`, `i < j`, sorted ascending and unique.
//! - Method ([`plan`]): a sample of the boxes' largest extents picks a base size; level
//!   `l` takes the boxes whose largest extent lies in `(base * 2^(l-1), base * 2^l]`
//!   (level 0 everything up to the base), and its cells are cubes one to two times as
//!   wide as its longest box, as the cost model finds cheaper (wider cells: fewer rows a
//!   look, more boxes in each). A level's slots are its cells in row-major order, axis 0
//!   fastest, where they are few enough (at most four a box); elsewhere a row's cells
//!   start at a hash of the row's coordinates modulo a power of two, so boxes far away
//!   (parked at 1e9) take their own cells without stretching any table. One key a box
//!   (global slot, id) is radix sorted; the boxes are gathered into structure-of-arrays
//!   rows in that order, and a table gives each slot's first row.
//! - Looks ([`query`]): a box `a` looks through level `t` in the window of cells from
//!   `cell(a.min - reach)` to `cell(a.max)` on every axis, `reach` being level `t`'s
//!   longest extent on that axis: any box of level `t` that overlaps `a` has its lower
//!   corner there. A window's rows are runs of consecutive slots, so of rows of the table.
//! - Each pair once: a level's boxes look through its own table forward only (rows after
//!   their own; two boxes of one level lie in each other's windows); of every other pair
//!   of levels exactly one side looks through the other's table, the one the cost model
//!   expects to cost less (many small boxes through a few big boxes' cells, or a few long
//!   planks through the small boxes' rows along them).
//! - Joins ([`join`], `find_pairs_between`): built over the smaller of two sets, each
//!   level's cells fitted to the other set's looks, and every box of the other set looks
//!   through every level, so each pair across the sets is found once, by that box.
//! - Cost: O(n) for the plan, the entries and the gather; the radix sort of n keys over
//!   the slot bits; per box its windows' rows and candidates: a few rows and a few boxes
//!   where the boxes are of one size and spread evenly, more where sizes within a level
//!   vary (its cells fit its longest box) or boxes crowd. The pair keys' sort is linear.
//! - Parallel: the plan's pass and the entries over fixed chunks of boxes, the radix sort,
//!   the gather, and the looks over chunks of rows; the pair sort makes the output the
//!   same bytes for any thread count, and every count in `Stats` is a sum.
//! - Allocation: [`Grid`] keeps every buffer (levels, per-chunk sums, keys, rows, slot
//!   table) between calls; a frame allocates a list of slices a chunk of boxes, each
//!   chunk's pair keys (and list of runs, where it looks through a hashed level), and the
//!   output's growth; a join keeps its chunks' keys and runs too.
//! - Source: the grid, and its trouble with boxes of varying sizes (cells too big test
//!   too much, too small register a box in many): Michael Baczynski, "Quadtree
//!   demonstration" (Polygonal Labs). Levels of cells doubling in size, a box on the first
//!   that fits it: Dmytry Lavrov, "Collision detection" (Morton order). One entry a box at
//!   its lower corner, looking through its neighbours' cells, and the cost model: this
//!   crate.

mod join;
mod plan;
mod query;
#[cfg(test)]
mod tests;

use crate::kernels::par::{chunk_len, grow_to, prefetch, SendPtr, PREFETCH};
use crate::par::prelude::*;
use crate::Aabb;
use plan::{Level, Part, DEAD, LEVELS};

/// Rows past the last that the eight-lane tests read (their lanes masked off).
const PAD: usize = 8;

/// The grid's buffers, kept between frames (`Broadphase` owns one).
#[derive(Debug)]
pub(crate) struct Grid<const D: usize> {
    /// The levels of the last build (empty ones have no boxes).
    levels: [Level<D>; LEVELS],
    /// Each box's level, or [`DEAD`].
    level: Vec<u8>,
    /// Each chunk's live boxes and sizes a level (the plan's pass).
    parts: Vec<Part<D>>,
    /// The sampled boxes' extents and largest extent.
    sample: Vec<([f64; D], f64)>,
    /// One key a live box, `global slot << 32 | id`, sorted; and the radix scratch.
    entries: Vec<u64>,
    scratch: Vec<u64>,
    /// The grown boxes in sorted order, one array an axis and bound, [`PAD`] rows more.
    lo: [Vec<f32>; D],
    hi: [Vec<f32>; D],
    /// The box index of each row, [`PAD`] rows more.
    id: Vec<u32>,
    /// INVARIANT: `starts[s]` is the first row whose slot is `s` or later, for every
    /// global slot `s` and one past the last (so a slot's rows are
    /// `starts[s]..starts[s + 1]`).
    starts: Vec<u32>,
    /// Live boxes (rows).
    rows: usize,
    /// A join's per-chunk keys and runs (`join`), kept between calls.
    join: Vec<join::JoinPart>,
}

impl<const D: usize> Default for Grid<D> {
    fn default() -> Self {
        Self {
            levels: [Level::EMPTY; LEVELS],
            level: Vec::new(),
            parts: Vec::new(),
            sample: Vec::new(),
            entries: Vec::new(),
            scratch: Vec::new(),
            lo: std::array::from_fn(|_| Vec::new()),
            hi: std::array::from_fn(|_| Vec::new()),
            id: Vec::new(),
            starts: Vec::new(),
            rows: 0,
            join: Vec::new(),
        }
    }
}

impl<const D: usize> Grid<D> {
    /// Live boxes in the last build: one entry each.
    pub(crate) fn len(&self) -> usize {
        self.rows
    }

    /// Plans the levels for `boxes` grown by `margin` and files every live box: `bounds`
    /// are the live grown boxes' bounds, `bulk` those of their bulk (strays trimmed).
    pub(crate) fn build(&mut self, boxes: &[Aabb<D>], margin: f32, bounds: Aabb<D>, bulk: Aabb<D>) {
        self.build_with(boxes, margin, bounds, bulk, None);
    }

    /// [`Grid::build`], its cells fitted to the pairs among the boxes, or where `join`
    /// gives another set, to that set's looks through them (`join`).
    fn build_with(
        &mut self,
        boxes: &[Aabb<D>],
        margin: f32,
        bounds: Aabb<D>,
        bulk: Aabb<D>,
        join: Option<&[Aabb<D>]>,
    ) {
        let span: [f64; D] = std::array::from_fn(|k| {
            let s = bulk.max[k] as f64 - bulk.min[k] as f64;
            if s.is_finite() && s > 0.0 {
                s
            } else {
                0.0
            }
        });
        let join = join.map(|large| plan::sample_sizes(large, margin, &span));
        let join = join.as_ref();
        let tau = plan::base_size(boxes, margin, &span, join, &mut self.sample);
        let chunk = chunk_len(boxes.len());
        plan::assign(boxes, margin, tau, chunk, &mut self.level, &mut self.parts);
        self.rows = self.parts.iter().map(|p| p.live).sum();
        let slots = plan::levels(&self.parts, &bounds, &span, join, &mut self.levels);
        self.write_entries(boxes, margin, chunk);
        // Global slots stay below 2^31 (`plan::MAX_SLOTS` a level).
        let bits = 64 - slots.max(1).leading_zeros();
        crate::kernels::radix_sort::sort(&mut self.entries, &mut self.scratch, 32..32 + bits);
        self.gather(boxes, margin, slots as usize);
    }

    /// One key a live box, in box order, chunk by chunk (each chunk's share cut by the
    /// pass's live counts).
    fn write_entries(&mut self, boxes: &[Aabb<D>], margin: f32, chunk: usize) {
        grow_to(&mut self.entries, self.rows);
        let mut dst: Vec<&mut [u64]> = Vec::with_capacity(self.parts.len());
        let mut rest = &mut self.entries[..];
        for p in &self.parts {
            let (head, tail) = rest.split_at_mut(p.live);
            dst.push(head);
            rest = tail;
        }
        let levels = &self.levels;
        dst.into_par_iter()
            .zip(boxes.par_chunks(chunk))
            .zip(self.level.par_chunks(chunk))
            .enumerate()
            .for_each(|(c, ((dst, bs), ls))| {
                let mut at = 0;
                for (j, (b, &l)) in bs.iter().zip(ls).enumerate() {
                    if l == DEAD {
                        continue;
                    }
                    let lv = &levels[l as usize];
                    let s = lv.offset + lv.slot_of(&b.grown(margin).min);
                    dst[at] = s << 32 | (c * chunk + j) as u64;
                    at += 1;
                }
            });
    }

    /// Gathers the sorted entries' grown boxes into the rows and fills the slot table.
    fn gather(&mut self, boxes: &[Aabb<D>], margin: f32, slots: usize) {
        let n = self.rows;
        for k in 0..D {
            grow_to(&mut self.lo[k], n + PAD);
            grow_to(&mut self.hi[k], n + PAD);
        }
        grow_to(&mut self.id, n + PAD);
        grow_to(&mut self.starts, slots + 1);
        let lo: [SendPtr<f32>; D] = std::array::from_fn(|k| SendPtr(self.lo[k].as_mut_ptr()));
        let hi: [SendPtr<f32>; D] = std::array::from_fn(|k| SendPtr(self.hi[k].as_mut_ptr()));
        let id = SendPtr(self.id.as_mut_ptr());
        let starts = SendPtr(self.starts.as_mut_ptr());
        let entries = &self.entries[..];
        let chunk = chunk_len(n);
        entries.par_chunks(chunk).enumerate().for_each(|(c, part)| {
            let r0 = c * chunk;
            // The slots after the previous row's, up to this row's, start here.
            let mut next = if r0 == 0 { 0 } else { (entries[r0 - 1] >> 32) as usize + 1 };
            for (j, &e) in part.iter().enumerate() {
                if let Some(&f) = part.get(j + PREFETCH) {
                    prefetch(&boxes[f as u32 as usize]);
                }
                let (r, s, i) = (r0 + j, (e >> 32) as usize, e as u32);
                let g = boxes[i as usize].grown(margin);
                // SAFETY: rows `r` and slots `next..=s` are this task's alone (the slots
                // after the previous row's up to its own, disjoint across rows); every
                // array is long enough (grown above: rows and ids to `n + PAD`, the
                // table to `slots + 1`, and `s < slots`).
                unsafe {
                    for t in next..=s {
                        starts.put(t, r as u32);
                    }
                    for k in 0..D {
                        lo[k].put(r, g.min[k]);
                        hi[k].put(r, g.max[k]);
                    }
                    id.put(r, i);
                }
                next = s + 1;
            }
        });
        let tail = if n == 0 { 0 } else { (entries[n - 1] >> 32) as usize + 1 };
        self.starts[tail..].fill(n as u32);
    }

    /// The grown box in row `r`.
    #[inline(always)]
    fn get(&self, r: usize) -> Aabb<D> {
        Aabb { min: std::array::from_fn(|k| self.lo[k][r]), max: std::array::from_fn(|k| self.hi[k][r]) }
    }

    /// INVARIANT check of the last build: each level's rows are one run, in slot order,
    /// every row in the slot of its box's lower corner on its level, the slot table as
    /// its invariant says, and of every pair of levels exactly one looks through the
    /// other.
    #[cfg(test)]
    pub(crate) fn validate(&self) -> Result<(), String> {
        let slots = self.levels.iter().map(|l| l.slots).sum::<u64>() as usize;
        if self.starts.len() != slots + 1 || self.starts[slots] as usize != self.rows {
            return Err(format!("table of {} for {slots} slots and {} rows", self.starts.len(), self.rows));
        }
        for (l, lv) in self.levels.iter().enumerate() {
            for r in lv.first..lv.first + lv.count {
                let s = (self.entries[r] >> 32) as usize;
                let want = lv.offset + lv.slot_of(&self.get(r).min);
                if s as u64 != want || self.entries[r] as u32 != self.id[r] {
                    return Err(format!("row {r} of level {l}: slot {s}, its corner's {want}"));
                }
                if !(self.starts[s] as usize <= r && r < self.starts[s + 1] as usize) {
                    return Err(format!("row {r} outside its slot {s}'s rows"));
                }
            }
            for (m, other) in self.levels.iter().enumerate() {
                let (lm, ml) = (lv.looks >> m & 1, other.looks >> l & 1);
                let ok = if lv.count == 0 || other.count == 0 {
                    true
                } else if l == m {
                    lm == 1
                } else {
                    lm + ml == 1
                };
                if !ok {
                    return Err(format!("levels {l} and {m}: looks {:#x}, {:#x}", lv.looks, other.looks));
                }
            }
        }
        if !self.starts.windows(2).all(|w| w[0] <= w[1]) {
            return Err("slot table not ascending".into());
        }
        Ok(())
    }
}
