//! The grid's plan: the base size from a sample of the boxes' sizes, each box's level,
//! each level's cells, and which side of each pair of levels looks through the other.
//!
//! - Input: the boxes, the margin, the scene's bounds (its grid origin) and the bulk's
//!   spans (its density).
//! - Output: each box's level ([`DEAD`] for a box the margin turns inside out), and per
//!   level its boxes' largest extents, its [`Quant`] and slots, and the levels it looks
//!   through ([`Level`]).
//! - Cost: O(s log s) for the sample (s <= [`SAMPLE`]), O(n) for the pass, O(L^2) for a
//!   fit of the cell sides and directions (L <= [`LEVELS`] levels), one fit a candidate
//!   base size and one for the frame.
//! - Parallel: the pass runs over fixed chunks (`kernels::par::chunk_len`) combined in
//!   order, so every figure, and so the plan, is the same for any thread count.
//! - Allocation: none here; the caller keeps the per-box levels, the per-chunk sums and
//!   the sample.
//! - Source: levels of cells doubling in size, a box on the first whose cells are at
//!   least its size: Dmytry Lavrov's "Collision detection" (Morton order), whose cells are
//!   aligned powers of two picked by the box's largest side. The cost model is this
//!   crate's.

use crate::par::prelude::*;
use crate::Aabb;

/// Levels at the most: cells from the base size to 2^15 times it. Larger boxes share
/// the top level (its cells grow to fit them).
pub(super) const LEVELS: usize = 16;
/// The level of a box that takes part in no pair (inside out).
pub(super) const DEAD: u8 = u8::MAX;
/// Boxes sampled for the base size.
const SAMPLE: usize = 512;
/// A level's cell side over its boxes' largest extent, the choices: at 1 a box's window
/// spans two or three cells an axis; wider cells mean fewer rows a look and more boxes
/// in each. [`fit`] picks one a level. PERF: benches/pairs.rs (uniform and varied 100k:
/// one factor for all levels is either slower on uniform boxes or on varied ones).
const FACTORS: [f64; 3] = [1.0, 1.5, 2.0];
/// The cost of one row looked up (two reads of the slot table, a loop and a vector step
/// however few boxes it holds), in candidate tests. Uniform boxes run fastest with it
/// higher (wider cells), the varied sizes with it lower (more levels, narrower cells).
/// PERF: benches/pairs.rs (uniform and varied 100k, 2D and 3D, 1 thread).
const W_ROW: f64 = 8.0;
/// The most slots a level's table has (`u32` slot keys stay below 2^31 over
/// [`LEVELS`] levels).
const MAX_SLOTS: u64 = 1 << 27;
/// Cells a level may have in a dense table, per box on it (beyond, its rows are hashed).
const DENSE_PER_BOX: u64 = 4;
/// Slots a hashed level has per box on it (a power of two at least this).
const HASHED_PER_BOX: u64 = 2;
/// The candidate base sizes over the sampled extents they are cut at: the sample's
/// largest box is seldom the scene's, and boxes of one size should share level 0.
const SLACK: f64 = 1.0625;
/// Where the sampled boxes' largest extents are cut for the candidate base sizes.
const QUANTILES: [f64; 7] = [1.0, 0.97, 0.9, 0.75, 0.5, 0.25, 0.1];

/// The sizes of a set of boxes: how many, and per axis the largest and summed extents.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sizes<const D: usize> {
    pub n: f64,
    pub max: [f64; D],
    pub sum: [f64; D],
}

impl<const D: usize> Sizes<D> {
    pub const EMPTY: Self = Self { n: 0.0, max: [0.0; D], sum: [0.0; D] };

    #[inline(always)]
    fn add(&mut self, e: &[f64; D]) {
        self.n += 1.0;
        for ((m, s), &x) in self.max.iter_mut().zip(&mut self.sum).zip(e) {
            *m = m.max(x);
            *s += x;
        }
    }

    fn merge(&mut self, o: &Self) {
        self.n += o.n;
        for k in 0..D {
            self.max[k] = self.max[k].max(o.max[k]);
            self.sum[k] += o.sum[k];
        }
    }

    fn mean(&self, k: usize) -> f64 {
        if self.n > 0.0 {
            self.sum[k] / self.n
        } else {
            0.0
        }
    }
}

/// A box's extents (f64, from its f32 corners) and the largest of them.
#[inline(always)]
pub(super) fn extents<const D: usize>(g: &Aabb<D>) -> ([f64; D], f64) {
    let e: [f64; D] = std::array::from_fn(|k| g.max[k] as f64 - g.min[k] as f64);
    (e, e.iter().fold(0.0, |a, &b| a.max(b)))
}

/// The level of a box whose largest extent is `m`, over base size `tau`: the first whose
/// size `tau * 2^level` is at least `m`, the top one for anything larger. Any function
/// would do for exactness (the windows use the extents measured on each level).
#[inline(always)]
pub(super) fn level_of(m: f64, tau: f64) -> u8 {
    let r = m / tau;
    if r > 1.0 {
        r.log2().ceil().min((LEVELS - 1) as f64) as u8
    } else {
        0
    }
}

/// Maps coordinates to a level's integer cells, per axis, monotone (so the order of two
/// coordinates never reverses, which is all that exactness needs).
#[derive(Clone, Copy, Debug)]
pub(super) struct Quant<const D: usize> {
    /// The scene's lower corner.
    o: [f64; D],
    /// One over the cell side.
    inv: f64,
    /// Cells per axis (the scene's upper corner lies in the last).
    pub g: [i64; D],
}

/// 2^53: below it, a cell is `floor(t)`; from it on, each `f64` value is a cell of its
/// own, numbered by its bit pattern (monotone for positive values), so cells of
/// coordinates far from the scene (parked at 1e30) stay apart and within `i64`.
const EXACT: f64 = 9_007_199_254_740_992.0;

impl<const D: usize> Quant<D> {
    const ZERO: Self = Self { o: [0.0; D], inv: 0.0, g: [1; D] };

    /// Cells of side `side` from `lo` up to `hi`.
    pub fn new(lo: [f64; D], hi: [f64; D], side: f64) -> Self {
        let mut q = Self { o: lo, inv: 1.0 / side, g: [i64::MAX; D] };
        q.g = std::array::from_fn(|k| q.cell(k, hi[k]).saturating_add(1));
        q
    }

    /// The cell of coordinate `x` on axis `k`: monotone in `x`, in `0..g[k]`.
    #[inline(always)]
    pub fn cell(&self, k: usize, x: f64) -> i64 {
        let t = (x - self.o[k]) * self.inv;
        let c = if t >= EXACT {
            EXACT as i64 + (t.to_bits() - EXACT.to_bits()) as i64
        } else if t > 0.0 {
            // SAFETY: `0 < t < 2^53`, so `t` truncated is an `i64`. PERF: the checked
            // cast's saturation fix-ups were a tenth of the looks (benches/pairs.rs, 3D
            // uniform 100k).
            unsafe { t.to_int_unchecked::<i64>() }
        } else {
            // Below the origin, and NaN (an infinite coordinate where the side is
            // infinite: every cell is 0 then).
            0
        };
        c.min(self.g[k] - 1)
    }
}

/// One level of the grid.
#[derive(Clone, Copy, Debug)]
pub(super) struct Level<const D: usize> {
    /// Boxes on the level, and the first of them in sorted order (a level's boxes are
    /// one run of rows).
    pub count: usize,
    pub first: usize,
    /// The level's largest extent on each axis, rounded up: no box on it is longer.
    pub reach: [f64; D],
    pub quant: Quant<D>,
    /// Slots of the level's table, and the first in the global slot numbering.
    pub slots: u64,
    pub offset: u64,
    /// INVARIANT: false iff the slots are the cells in row-major order (axis 0 fastest);
    /// true where that many cells would not fit, and a row's cells then start at a hash
    /// of its coordinates, modulo `slots` (a power of two).
    pub hashed: bool,
    /// Strides of the row-major order (dense levels).
    pub stride: [u64; D],
    /// The levels whose tables this level's boxes look through, a bit each: its own
    /// always (forward only), and of every other pair of levels exactly one side.
    pub looks: u32,
    /// The cost model's expected candidate tests a box of the level (its own look and
    /// those through the levels it looks through), at least 1: weighs its rows when the
    /// looks are cut into chunks, so that a few long boxes looking through many rows
    /// get chunks of their own.
    pub work: f64,
}

impl<const D: usize> Level<D> {
    pub const EMPTY: Self = Self {
        count: 0,
        first: 0,
        reach: [0.0; D],
        quant: Quant::ZERO,
        slots: 0,
        offset: 0,
        hashed: false,
        stride: [0; D],
        looks: 0,
        work: 0.0,
    };

    /// The first slot of the row of cell `c` (axes `1..D`): its cell 0's slot, dense, or
    /// a hash of the row, so that the row's cells take consecutive slots (modulo `slots`).
    #[inline(always)]
    pub fn row(&self, c: &[i64; D]) -> u64 {
        if self.hashed {
            let mut h = 0x9E37_79B9_7F4A_7C15u64;
            for &x in &c[1..] {
                h = mix(h ^ x as u64);
            }
            h
        } else {
            (1..D).map(|k| c[k] as u64 * self.stride[k]).sum()
        }
    }

    /// The slot of cell `x` of a row starting at `row`.
    #[inline(always)]
    pub fn slot(&self, row: u64, x: i64) -> u64 {
        if self.hashed {
            row.wrapping_add(x as u64) & (self.slots - 1)
        } else {
            row + x as u64
        }
    }

    /// The slot of the cell holding `p`.
    #[inline(always)]
    pub fn slot_of(&self, p: &[f32; D]) -> u64 {
        let c: [i64; D] = std::array::from_fn(|k| self.quant.cell(k, p[k] as f64));
        self.slot(self.row(&c), c[0])
    }
}

/// SplitMix64's finaliser: every input bit moves every output bit.
#[inline(always)]
fn mix(mut h: u64) -> u64 {
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

/// The cell side of a level of these sizes: `factor` times its largest extent; where
/// every box on it is a point, about one box a cell over the bulk.
fn side<const D: usize>(s: &Sizes<D>, span: &[f64; D], factor: f64) -> f64 {
    let e = s.max.iter().fold(0.0f64, |a, &b| a.max(b));
    let c = if e > 0.0 {
        factor * e
    } else {
        let w = span.iter().fold(0.0f64, |a, &b| a.max(b));
        w / s.n.max(1.0).powf(1.0 / D as f64)
    };
    if c > 0.0 {
        c.max(f64::MIN_POSITIVE)
    } else {
        1.0
    }
}

/// The expected work, in candidate tests, of the boxes of sizes `a` looking through a
/// level of sizes `b` and cell side `cb`, over a bulk of spans `span`: their rows, and the
/// boxes of `b` whose lower corners lie in their windows (`b` spread evenly over the
/// bulk), half of each on a level's own table (forward only); plus the rows of `a`'s
/// largest box, so that one huge box cannot hide behind a mean. Not finite: `f64::MAX`.
fn look<const D: usize>(a: &Sizes<D>, b: &Sizes<D>, cb: f64, span: &[f64; D], own: bool) -> f64 {
    if a.n == 0.0 || b.n == 0.0 {
        return 0.0;
    }
    let (mut rows, mut worst, mut share) = (1.0, 1.0, 1.0);
    for (k, &sp) in span.iter().enumerate() {
        let w = a.mean(k) + b.max[k];
        if k > 0 {
            rows *= w / cb + 1.0;
            worst *= (a.max[k] + b.max[k]) / cb + 1.0;
        }
        // `min` takes 1 where the ratio is NaN (a bulk of no span).
        share *= ((w + cb) / sp).min(1.0);
    }
    let per = W_ROW * rows + b.n * share;
    let cost = a.n * if own { 0.5 * per } else { per } + W_ROW * worst;
    if cost <= f64::MAX {
        cost
    } else {
        f64::MAX
    }
}

/// The terms of the expected work that involve level `l` of a grid of these levels and
/// cell sides: its own look, and of each pair with another level the cheaper side's.
fn terms<const D: usize>(
    l: usize,
    sizes: &[Sizes<D>; LEVELS],
    sides: &[f64; LEVELS],
    span: &[f64; D],
) -> f64 {
    let mut t = look(&sizes[l], &sizes[l], sides[l], span, true);
    for m in (0..LEVELS).filter(|&m| m != l) {
        let lm = look(&sizes[l], &sizes[m], sides[m], span, false);
        let ml = look(&sizes[m], &sizes[l], sides[l], span, false);
        t += lm.min(ml);
    }
    t
}

/// Each level's cell side, a factor of [`FACTORS`] times its largest extent, fitted one
/// level at a time (twice over, as a level's side changes what its neighbours' looks
/// cost) to the least expected work; and that work.
fn fit<const D: usize>(sizes: &[Sizes<D>; LEVELS], span: &[f64; D]) -> ([f64; LEVELS], f64) {
    let mut sides: [f64; LEVELS] = std::array::from_fn(|l| side(&sizes[l], span, FACTORS[0]));
    for _ in 0..2 {
        for l in (0..LEVELS).filter(|&l| sizes[l].n > 0.0) {
            let mut best = (f64::INFINITY, sides[l]);
            for f in FACTORS {
                sides[l] = side(&sizes[l], span, f);
                let t = terms(l, sizes, &sides, span);
                if t < best.0 {
                    best = (t, sides[l]);
                }
            }
            sides[l] = best.1;
        }
    }
    let mut t = 0.0;
    for l in 0..LEVELS {
        t += look(&sizes[l], &sizes[l], sides[l], span, true);
        for m in l + 1..LEVELS {
            let lm = look(&sizes[l], &sizes[m], sides[m], span, false);
            let ml = look(&sizes[m], &sizes[l], sides[l], span, false);
            t += lm.min(ml);
        }
    }
    (sides, t)
}

/// A level's cell side over its boxes' largest extent, the choices where another set's
/// boxes look through the level (a join): no box of the level looks, so wider cells cost
/// only the candidates they add, and a sparse level (a crowd over a scene ten times its
/// number) is cheapest with cells several boxes wide, and fewer cells keep a dense table
/// where a hashed one would be needed (terrain 3D takes 6, where 4 needs a hashed
/// table). PERF: benches/queries.rs (`between`).
const JOIN_FACTORS: [f64; 7] = [1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0];

/// Each level's cell side for a join, where the boxes of sizes `a` look through every
/// level (and no level through another): per level, of [`JOIN_FACTORS`] times its largest
/// extent, the one of least expected work ([`look`]); and that work summed over levels.
pub(super) fn fit_join<const D: usize>(
    a: &Sizes<D>,
    sizes: &[Sizes<D>; LEVELS],
    span: &[f64; D],
) -> ([f64; LEVELS], f64) {
    let mut sides = [1.0; LEVELS];
    let mut total = 0.0;
    for (l, s) in sizes.iter().enumerate().filter(|(_, s)| s.n > 0.0) {
        let mut best = (f64::INFINITY, side(s, span, JOIN_FACTORS[0]));
        for f in JOIN_FACTORS {
            let c = side(s, span, f);
            let t = look(a, s, c, span, false);
            if t < best.0 {
                best = (t, c);
            }
        }
        sides[l] = best.1;
        // A level not finite: counted at its largest, so that the sum stays comparable.
        total += best.0.min(f64::MAX);
    }
    (sides, total)
}

/// The sizes of `boxes` grown by `margin` (inverted ones left out) from a sample of at
/// most [`SAMPLE`] of them, spread as [`base_size`] spreads its own, the counts and sums
/// scaled to the whole set: the looking side of a join, for the cost model. Extents are
/// cut at the filed bulk's `span` where it has one: a window never reaches past the
/// grid's cells, so a box spanning everything (1e30) looks through them all, not through
/// 1e30 of them.
pub(super) fn sample_sizes<const D: usize>(boxes: &[Aabb<D>], margin: f32, span: &[f64; D]) -> Sizes<D> {
    let n = boxes.len();
    let stride = n.div_ceil(SAMPLE).max(1);
    let blocks = n.div_ceil(stride);
    let mut s = Sizes::EMPTY;
    for b in 0..blocks {
        let at = b * stride + (mix(b as u64) % stride.min(n - b * stride) as u64) as usize;
        let g = boxes[at].grown(margin);
        if !g.is_inverted() {
            let e = extents(&g).0;
            s.add(&std::array::from_fn(|k| if span[k] > 0.0 { e[k].min(span[k]) } else { e[k] }));
        }
    }
    let scale = n as f64 / blocks.max(1) as f64;
    s.n *= scale;
    s.sum.iter_mut().for_each(|x| *x *= scale);
    s
}

/// The base size: of the sampled boxes' largest extents cut at [`QUANTILES`], the one
/// whose levels the cost model expects to cost least (ties: the larger, fewer levels):
/// the pairs among the boxes, or where `join` gives the sizes of another set, the pairs
/// of that set's boxes with these ([`fit_join`]). `sample` is the caller's buffer.
pub(super) fn base_size<const D: usize>(
    boxes: &[Aabb<D>],
    margin: f32,
    span: &[f64; D],
    join: Option<&Sizes<D>>,
    sample: &mut Vec<([f64; D], f64)>,
) -> f64 {
    let n = boxes.len();
    let stride = n.div_ceil(SAMPLE).max(1);
    let blocks = n.div_ceil(stride);
    sample.clear();
    for b in 0..blocks {
        // One box a block, at a position a hash of the block picks (a fixed position
        // aliases with ids that cycle through clumps).
        let at = b * stride + (mix(b as u64) % stride.min(n - b * stride) as u64) as usize;
        let g = boxes[at].grown(margin);
        if !g.is_inverted() {
            sample.push(extents(&g));
        }
    }
    sample.sort_unstable_by(|a, b| a.1.total_cmp(&b.1));
    let s = sample.len();
    let scale = n as f64 / blocks.max(1) as f64;
    let mut best = (f64::INFINITY, 1.0);
    for q in QUANTILES {
        let Some(&(_, m)) = sample.get(((s.max(1) - 1) as f64 * q).round() as usize) else { break };
        let tau = m * SLACK;
        if !(tau > 0.0 && tau <= f64::MAX) {
            continue;
        }
        let mut sizes = [Sizes::EMPTY; LEVELS];
        for (e, m) in sample.iter() {
            sizes[level_of(*m, tau) as usize].add(e);
        }
        for z in sizes.iter_mut() {
            z.n *= scale;
            z.sum.iter_mut().for_each(|x| *x *= scale);
        }
        let cost = match join {
            None => fit(&sizes, span).1,
            Some(a) => fit_join(a, &sizes, span).1,
        };
        if cost < best.0 {
            best = (cost, tau);
        }
    }
    best.1
}

/// One chunk's share of the pass: its live boxes, and their sizes a level.
#[derive(Clone, Copy, Debug)]
pub(super) struct Part<const D: usize> {
    pub live: usize,
    pub sizes: [Sizes<D>; LEVELS],
}

/// Each box's level into `level` (grown to `boxes.len()`), and each chunk's sums into
/// `parts`, in parallel over the chunks of `chunk` boxes.
pub(super) fn assign<const D: usize>(
    boxes: &[Aabb<D>],
    margin: f32,
    tau: f64,
    chunk: usize,
    level: &mut Vec<u8>,
    parts: &mut Vec<Part<D>>,
) {
    crate::kernels::par::grow_to(level, boxes.len());
    boxes
        .par_chunks(chunk)
        .zip(level.par_chunks_mut(chunk))
        .map(|(bs, ls)| {
            let mut p = Part { live: 0, sizes: [Sizes::EMPTY; LEVELS] };
            for (b, l) in bs.iter().zip(ls.iter_mut()) {
                let g = b.grown(margin);
                if g.is_inverted() {
                    *l = DEAD;
                    continue;
                }
                let (e, m) = extents(&g);
                *l = level_of(m, tau);
                p.sizes[*l as usize].add(&e);
                p.live += 1;
            }
            p
        })
        .collect_into_vec(parts);
}

/// The levels of a frame from the pass's `parts`: counts and first rows, reaches, cells
/// over `bounds` (the live grown boxes' bounds), slots and offsets, and the directions of
/// the looks by the cost model over the bulk's `span` (cell sides fitted to the pairs
/// among the boxes, or where `join` gives another set's sizes, to that set's looks:
/// [`fit_join`]). Returns the total slots.
pub(super) fn levels<const D: usize>(
    parts: &[Part<D>],
    bounds: &Aabb<D>,
    span: &[f64; D],
    join: Option<&Sizes<D>>,
    out: &mut [Level<D>; LEVELS],
) -> u64 {
    let mut sizes = [Sizes::EMPTY; LEVELS];
    for p in parts {
        for (s, o) in sizes.iter_mut().zip(&p.sizes) {
            s.merge(o);
        }
    }
    // Bounds as the pipeline fixes them: finite, even where a huge margin overflowed.
    let lo: [f64; D] = std::array::from_fn(|k| bounds.min[k].max(f32::MIN) as f64);
    let hi: [f64; D] = std::array::from_fn(|k| bounds.max[k].min(f32::MAX) as f64);
    let (mut first, mut offset) = (0usize, 0u64);
    let sides = match join {
        None => fit(&sizes, span).0,
        Some(a) => fit_join(a, &sizes, span).0,
    };
    for (l, (lv, s)) in out.iter_mut().zip(&sizes).enumerate() {
        *lv = Level::EMPTY;
        if s.n == 0.0 {
            continue;
        }
        let count = s.n as usize;
        // The extents were measured in f64 from f32 corners and may have been rounded
        // down by half an ulp; four ulps up covers them.
        let reach = s.max.map(|e| e * (1.0 + 4.0 * f64::EPSILON));
        let quant = Quant::new(lo, hi, sides[l]);
        let cells = quant.g.iter().fold(1u128, |a, &g| a.saturating_mul(g as u128));
        let dense = (count as u128 * DENSE_PER_BOX as u128).clamp(64, MAX_SLOTS as u128);
        let hashed = cells > dense;
        let slots = if hashed {
            (count as u64 * HASHED_PER_BOX).next_power_of_two().clamp(64, MAX_SLOTS)
        } else {
            cells as u64
        };
        let mut stride = [1u64; D];
        if !hashed {
            for k in 1..D {
                stride[k] = stride[k - 1] * quant.g[k - 1] as u64;
            }
        }
        *lv = Level { count, first, reach, quant, slots, offset, hashed, stride, looks: 1 << l, work: 1.0 };
        first += count;
        offset += slots;
    }
    for a in 0..LEVELS {
        for b in a + 1..LEVELS {
            if sizes[a].n == 0.0 || sizes[b].n == 0.0 {
                continue;
            }
            let ab = look(&sizes[a], &sizes[b], sides[b], span, false);
            let ba = look(&sizes[b], &sizes[a], sides[a], span, false);
            // Ties: the smaller boxes look through the larger's table.
            if ab <= ba {
                out[a].looks |= 1 << b;
            } else {
                out[b].looks |= 1 << a;
            }
        }
    }
    for l in (0..LEVELS).filter(|&l| sizes[l].n > 0.0) {
        let mut w = look(&sizes[l], &sizes[l], sides[l], span, true);
        for m in (0..LEVELS).filter(|&m| m != l && out[l].looks >> m & 1 == 1) {
            w += look(&sizes[l], &sizes[m], sides[m], span, false);
        }
        let w = w / sizes[l].n;
        out[l].work = if w.is_finite() { w.clamp(1.0, 1e12) } else { 1e12 };
    }
    offset
}
