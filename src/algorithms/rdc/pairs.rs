//! RDC's pairs of a whole scene: [`Rdc::pairs`], and `Method::Rdc` in `Broadphase`, which
//! keeps the buffers ([`RdcPairs`]) from call to call.
//!
//! - Input: valid boxes, the settings ([`Rdc`]: margin, `min_group_size`, axis order), a
//!   [`PairBudget`]. Output: every overlapping pair `[i, j]`, `i < j`, sorted and unique.
//! - Method: the kernel's parallel driver clusters the records; each final group's pairs
//!   go, as keys, to the list of the task that found it (big groups: a list a row chunk);
//!   the crate's pair sort turns the lists into the output.
//! - Cost: the clustering (see `rdc`), the groups' sweeps, then O(k) for k pairs.
//! - Parallel: as the kernel's driver; the keys are unique and sorted at the end, so the
//!   output is the same bytes for any thread count, whichever task found which group.
//! - Budget: every list counts its keys against the budget a block at a time (as the
//!   whole-scene sweep does), and every task stops once it has stopped; an allocation the
//!   allocator refuses (records, keys, output) stops it too. The caller reports the
//!   verdict.
//! - Allocation: kept in [`RdcPairs`] and reused: the records, the tasks' scratch, sweep
//!   sets and key lists; per call only the tasks' explicit stacks, one slice list a task
//!   for the pair sort, and the output's growth.
//! - Source: S. Rabin's RDC (see `rdc`); the pair sort is the crate's (`pair_sort`).

use super::groups::{group_pairs, par_group_pairs, GroupSweep, PAR_GROUP};
use super::kernel::Pool;
use super::{records, Rdc, Rec};
use crate::kernels::pair_sort::BUDGET_STEP;
use crate::kernels::pair_sort::{key, PairBudget};
use crate::Aabb;

/// What one task collects: its sweep sets and its pair keys, kept across the tasks that
/// take it in turn (so a call's keys are spread over the pool's tasks, in no fixed way).
#[derive(Default)]
struct Found<const D: usize> {
    sweep: GroupSweep<D>,
    /// Keys of the groups below `PAR_GROUP`. `counted` of them are taken from the budget.
    keys: Vec<u64>,
    counted: usize,
    /// Key lists of the big groups' row chunks; the first `used` hold this call's keys.
    big: Vec<Vec<u64>>,
    used: usize,
    /// Box tests made.
    tests: usize,
}

/// RDC's buffers for the pairs of a whole scene, kept between calls (`Broadphase`'s, for
/// `Method::Rdc`): the records and the pool of the tasks' state. They grow to the most a
/// call needed and stay, until the owner drops them (`Broadphase::shrink_to_fit`).
pub(crate) struct RdcPairs<const D: usize> {
    recs: Vec<Rec<D>>,
    pool: Pool<D, Found<D>>,
}

impl<const D: usize> Default for RdcPairs<D> {
    fn default() -> Self {
        Self { recs: Vec::new(), pool: Pool::default() }
    }
}

impl<const D: usize> std::fmt::Debug for RdcPairs<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RdcPairs").field("records", &self.recs.capacity()).finish_non_exhaustive()
    }
}

impl<const D: usize> RdcPairs<D> {
    /// `Method::Rdc`: [`RdcPairs::pairs_into`] with the default settings and `margin`,
    /// trying the axes from `axis` on (the sweep axis the scan picked: the one whose
    /// projections overlap least, so the likeliest to have gaps).
    pub(crate) fn frame(
        &mut self,
        boxes: &[Aabb<D>],
        margin: f32,
        axis: usize,
        budget: &PairBudget,
        out: &mut Vec<[u32; 2]>,
    ) -> (usize, usize) {
        let rdc = Rdc { margin, axis_order: std::array::from_fn(|k| (axis + k) % D), ..Rdc::default() };
        self.pairs_into(&rdc, boxes, budget, out)
    }

    /// Every pair of `boxes` (valid) that overlap grown by `rdc.margin`, into `out` (cleared
    /// first); returns the box tests and the clusters split. Stops early once `budget`
    /// stops: then `out` holds nothing of this call, and the caller reports the verdict.
    pub(crate) fn pairs_into(
        &mut self,
        rdc: &Rdc<D>,
        boxes: &[Aabb<D>],
        budget: &PairBudget,
        out: &mut Vec<[u32; 2]>,
    ) -> (usize, usize) {
        out.clear();
        let pool = self.pool.get_mut().unwrap_or_else(|e| e.into_inner());
        for t in pool.iter_mut() {
            let f = &mut t.c;
            f.keys.clear();
            f.big.iter_mut().for_each(Vec::clear);
            (f.counted, f.used, f.tests, t.splits) = (0, 0, 0, 0);
        }
        if !records(boxes, rdc.margin, &mut self.recs) {
            budget.out_of_memory();
            return (0, 0);
        }
        if rdc.margin < 0.0 {
            // A box a negative margin turned inside out takes part in no pair.
            self.recs.retain(|r| !r.b.is_inverted());
        }
        let on_final = |f: &mut Found<D>, g: &[Rec<D>], _at: usize, sorted_on: Option<usize>| {
            if g.len() >= PAR_GROUP {
                f.tests += par_group_pairs(g, &mut f.sweep.run, &mut f.big, &mut f.used, budget);
                return !budget.stopped();
            }
            let (keys, counted) = (&mut f.keys, &mut f.counted);
            let mut stop = false;
            f.tests += group_pairs(g, sorted_on, u32::MAX, &mut f.sweep, |a, b| {
                if stop {
                    return;
                }
                if keys.len() == keys.capacity() && keys.try_reserve(keys.len().max(64)).is_err() {
                    budget.out_of_memory();
                    stop = true;
                    return;
                }
                keys.push(key(a, b));
                // A group may hold millions of pairs: the budget hears of them as they
                // come, and no key is kept once it has stopped.
                if keys.len() - *counted >= BUDGET_STEP {
                    budget.take(keys.len() - *counted);
                    *counted = keys.len();
                    stop = budget.stopped();
                }
            });
            !budget.stopped()
        };
        rdc.kernel().run_parallel(&mut self.recs, &self.pool, &on_final);
        let pool = self.pool.get_mut().unwrap_or_else(|e| e.into_inner());
        let (mut tests, mut splits) = (0, 0);
        for t in pool.iter() {
            budget.take(t.c.keys.len() - t.c.counted);
            tests += t.c.tests;
            splits += t.splits;
        }
        if budget.stopped() {
            return (tests, splits);
        }
        let parts: Vec<Vec<&[[u32; 2]]>> = pool
            .iter()
            .map(|t| {
                let big = t.c.big[..t.c.used].iter().map(|p| bytemuck::cast_slice(p));
                std::iter::once(bytemuck::cast_slice(&t.c.keys)).chain(big).collect()
            })
            .collect();
        let total: usize = parts.iter().flatten().map(|p| p.len()).sum();
        if out.try_reserve_exact(total).is_err() {
            budget.out_of_memory();
            return (tests, splits);
        }
        crate::kernels::pair_sort::finish_into(&parts, boxes.len(), out);
        (tests, splits)
    }
}
