//! The plan's cost model: the level of a box of given extents, and a table that
//! remembers it by size classes.
//!
//! - Input: a box's quantised corners on the column axes; the model's parameters (the
//!   candidates' weight `lambda`, the world's cross-section, the column budget).
//! - Output: the box's level and its column count there.
//! - Cost: a model evaluation walks the levels from the seed's, `O(bits)`; the table
//!   answers in `O(1)`, one evaluation a size-class pair a plan pass.
//! - Parallel: the table is shared by the plan's jobs without locks (one relaxed atomic
//!   word a slot); the answer does not depend on which job evaluated it.
//! - Allocation: the table's slots (four bytes each, 256 to 65,536), reallocated only when
//!   the wanted count changes.
//! - Source: this crate.

use super::layout::shr32;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;

/// Columns a box spans at level `l` on `c` column axes.
#[inline(always)]
pub(super) fn count_at(c: u32, qlo: &[u32; 2], qhi: &[u32; 2], l: u32) -> u64 {
    let mut n = 1u64;
    for k in 0..c as usize {
        n *= (shr32(qhi[k], l) - shr32(qlo[k], l)) as u64 + 1;
    }
    n
}

/// The level choice: a cost model over the levels, tabulated once a plan pass.
///
/// Start from the seed's level: the smallest whose side `2^l` exceeds the box's largest
/// extent on the column axes (at most 2 columns per axis). Then move while the model says
/// it pays, within `budget` columns:
///
/// `cost(l) = cols(l) * (1 + lambda * 2^(c l))`
///
/// The first term is the per-entry work (write, sort, gather, walk). The second is the
/// sweep's candidates: the boxes of a column that overlap a box along the sweep axis grow
/// with the column's cross-section. `lambda` is the whole-scene sweep's tests per box
/// spread over the world's cross-section, times the candidate-to-entry cost ratio. The
/// cross-section counts only what lies inside the world: `2^l` on each column axis, but no
/// more than the world's extent there. A flat world (every box on one plane, as in a 2D
/// game or map laid out in 3D) thus weighs a column as the strip it is. Small
/// boxes in a sparse scene go coarser (one column), dense ones may go finer; long thin
/// boxes across the columns go finer, so a plank does not drag a wide column along.
///
/// `cols(l)` is the number of columns a box of this size spans *on average* over its
/// positions, `prod(1 + ext_k / 2^l)`, not the count at its actual position: boxes of one
/// size then share a level wherever they lie, so runs rarely have ranges to visit. The
/// actual count is not used: it spreads a uniform scene over several levels, and its
/// ranges make the sweep slower. PERF: benches/pairs.rs (3D uniform).
pub(crate) struct LevelModel {
    pub(super) c: u32,
    pub(super) bits: u32,
    pub(super) budget: u64,
    /// `1 / 2^l` and `1 + lambda * (cross-section of a level-l column inside the world)`
    /// for `l` in `0..=bits`.
    pub(super) inv: [f64; 33],
    pub(super) dens: [f64; 33],
}

impl LevelModel {
    /// `world`: the world's extent on each of the `c` column axes, in grid units. The
    /// cross-section is clipped to it: with `2^(c l)`, boxes on one plane (`scene::flat`)
    /// would seem to meet candidates growing as `4^l` and go to many fine columns a box
    /// (test `flat_world_keeps_columns_coarse`). PERF: benches/pairs.rs (3D flat).
    pub fn new(c: u32, bits: u32, budget: u64, lambda: f64, world: [f64; 2]) -> Self {
        let lambda = if lambda.is_nan() { 0.0 } else { lambda };
        let mut m = Self { c, bits, budget, inv: [0.0; 33], dens: [0.0; 33] };
        for l in 0..=bits.min(32) {
            m.inv[l as usize] = 1.0 / pow2(l);
            let section: f64 = world[..c as usize].iter().map(|&w| pow2(l).min(w)).product();
            m.dens[l as usize] = 1.0 + lambda * section;
        }
        m
    }

    #[inline(always)]
    pub(super) fn cost(&self, ext: &[f64; 2], l: u32) -> f64 {
        let mut n = self.dens[l as usize];
        for e in ext.iter().take(self.c as usize) {
            n *= 1.0 + e * self.inv[l as usize];
        }
        n
    }

    /// The level of a box with quantised column-axis corners `qlo..=qhi`, and its count
    /// (at most `max(budget, 2^c)`).
    #[cfg(test)]
    pub fn choose(&self, qlo: [u32; 2], qhi: [u32; 2]) -> (u32, u64) {
        let class = size_classes(self.c, &qlo, &qhi);
        let l = self.level(class);
        (l, count_at(self.c, &qlo, &qhi, l))
    }

    /// The level of every box whose extents fall in the size classes `class` (see
    /// [`size_class`]): a function of the classes alone, so that [`LevelTable`] can keep it.
    /// The model is evaluated at the classes' largest extents, and the budget holds for
    /// any box of the classes wherever it lies.
    pub(super) fn level(&self, class: [u32; 2]) -> u32 {
        let (c, bits) = (self.c, self.bits);
        let mut ext = [0.0; 2];
        let mut widest = 0u32;
        let mut top = [0u32; 2];
        for k in 0..c as usize {
            top[k] = class_max(class[k]);
            widest = widest.max(top[k]);
            ext[k] = top[k] as f64;
        }
        let mut l = (u32::BITS - widest.leading_zeros()).min(bits);
        let mut here = self.cost(&ext, l);
        // Coarser while it pays (fewer entries, more candidates).
        while l < bits {
            let up = self.cost(&ext, l + 1);
            if up >= here {
                break;
            }
            l += 1;
            here = up;
        }
        // Finer while it pays, within the budget. The seed's level may exceed the budget
        // only for budgets below 2^c (rejected by Config::validate).
        while l > 0 {
            let down = self.cost(&ext, l - 1);
            if down >= here || most_at(c, &top, l - 1) > self.budget {
                break;
            }
            l -= 1;
            here = down;
        }
        l
    }
}

/// The size class of an extent of `e` grid units: `e` itself below 8, else its leading
/// four bits with their position (classes 8..=239, each within 12.5% of its extents).
#[inline(always)]
pub(super) fn size_class(e: u32) -> u32 {
    if e < 8 {
        e
    } else {
        let p = 31 - e.leading_zeros();
        (p - 2) * 8 + (e >> (p - 3) & 7)
    }
}

/// The largest extent of size class `k`.
#[inline(always)]
pub(super) fn class_max(k: u32) -> u32 {
    if k < 8 {
        k
    } else {
        let (p, mant) = (k / 8 + 2, (k % 8) as u64);
        (((9 + mant) << (p - 3)) - 1).min(u32::MAX as u64) as u32
    }
}

/// The size classes of a box's extents on the column axes.
#[inline(always)]
pub(super) fn size_classes(c: u32, qlo: &[u32; 2], qhi: &[u32; 2]) -> [u32; 2] {
    let mut k = [0; 2];
    for a in 0..c as usize {
        k[a] = size_class(qhi[a] - qlo[a]);
    }
    k
}

/// The most columns a box of extents up to `top` can span at level `l`, wherever it lies.
#[inline(always)]
pub(super) fn most_at(c: u32, top: &[u32; 2], l: u32) -> u64 {
    let mut n = 1u64;
    for &e in top.iter().take(c as usize) {
        n *= (e as u64 >> l) + 2;
    }
    n
}

/// [`LevelModel::level`] by size classes, remembered for one plan pass and shared by its
/// jobs: a two-way table of about `n / 16` slots (256 to 65,536; in 2D one a class), the
/// set of a pair of classes picked by Fibonacci hashing, each slot holding a class pair,
/// the pass's number and the level, so that a new pass starts afresh without clearing the
/// slots (they are cleared once every 255 passes). Jobs that meet a class pair at the same
/// time may both evaluate the model; they store the same level, and a slot is one atomic
/// word, so a reader sees one store or the other.
///
/// The model is a chain of dependent multiplies and branches: evaluated per box, it would
/// dominate the plan. A direct-mapped memo a job is not used: sizes spread over two orders
/// of magnitude make thousands of class pairs, learnt again by every job. Nor is a slot for
/// every class pair: 256 KiB, a large share of a small scene's working memory.
/// PERF: examples/demo.rs (3D uniform 1M and 3D varied, plan in the scan stage).
#[derive(Debug, Default)]
pub(crate) struct LevelTable {
    /// `tag << 16 | pass << 8 | level`, `tag` the class pair.
    pub(super) slots: Vec<AtomicU32>,
    pub(super) pass: u32,
    /// Model evaluations (for the tests).
    #[cfg(test)]
    pub(super) evals: std::sync::atomic::AtomicUsize,
}

impl LevelTable {
    /// Starts a pass over `n` boxes with `c` column axes.
    pub fn begin(&mut self, c: u32, n: usize) {
        let want = if c < 2 { 256 } else { (n / 16).clamp(256, 1 << 16).next_power_of_two() };
        if self.slots.len() != want {
            self.slots = (0..want).map(|_| AtomicU32::new(0)).collect();
            self.pass = 0;
        }
        if self.pass == 255 {
            for s in &self.slots {
                s.store(0, Relaxed);
            }
            self.pass = 0;
        }
        self.pass += 1;
    }

    /// The level and the column count of a box, as [`LevelModel::level`] gives them, with the
    /// level remembered by size classes.
    #[inline(always)]
    pub fn choose(&self, model: &LevelModel, qlo: [u32; 2], qhi: [u32; 2]) -> (u32, u64) {
        let class = size_classes(model.c, &qlo, &qhi);
        // Classes are below 240: a tag fits 8 bits an axis.
        let tag = class[0] | class[1] << 8;
        let want = tag << 8 | self.pass;
        // Two ways, slots `s` and `s + 1` (one cache line), the newer pair first; `s` by
        // Fibonacci hashing (the tag times 2^32 / phi, its top bits). One way, or a hash on
        // the low bits (`class[0] ^ 37 class[1]`), is not used: a scene's close classes then
        // share few slots and are evaluated again and again. Here each class pair is
        // evaluated once a pass (test `level_table_evaluates_each_class_pair_once`).
        let s = (tag.wrapping_mul(0x9E37_79B1) >> (32 - self.slots.len().trailing_zeros())) as usize & !1;
        let (first, second) = (&self.slots[s], &self.slots[s + 1]);
        let v = first.load(Relaxed);
        let l = if v >> 8 == want {
            v & 0xff
        } else {
            let w = second.load(Relaxed);
            if w >> 8 == want {
                w & 0xff
            } else {
                let l = model.level(class);
                #[cfg(test)]
                self.evals.fetch_add(1, Relaxed);
                second.store(v, Relaxed);
                first.store(tag << 16 | self.pass << 8 | l, Relaxed);
                l
            }
        };
        (l, count_at(model.c, &qlo, &qhi, l))
    }
}

/// `2^e` for `e < 1024`, exactly, without a libm call (PERF: `f64::exp2` is one).
#[inline(always)]
pub(super) fn pow2(e: u32) -> f64 {
    f64::from_bits((1023 + e as u64) << 52)
}

/// Bytes an entry takes, by dimension (0 to 3): its rows (`lo`, `hi` per axis, `qx`,
/// `qxh`, first flags: `8 D + 9`) and its `u64` key and radix scratch slot (16).
pub(super) const ENTRY_BYTES: [f64; 4] = [25.0, 33.0, 41.0, 49.0];

/// The working memory a box's entries may take: under the 128 bytes a box the crate
/// promises, with room for the plan (3 bytes a box) and the small buffers.
pub(super) const MEMORY_PER_BOX: f64 = 120.0;

/// Candidate cost over entry cost, for the level model.
/// PERF: benches/pairs.rs (2D and 3D scenes at 1M boxes), where it is tuned.
pub(super) fn cost_ratio() -> f64 {
    0.25
}
