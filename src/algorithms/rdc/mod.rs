//! Recursive Dimensional Clustering (RDC): split boxes into groups that no axis separates,
//! then find the overlapping pairs inside each group.
//!
//! - Input: boxes (validated at the boundary), [`Rdc`] settings. Output: [`Clusters`]
//!   (groups in a canonical order: members ascending, groups by smallest member) or the
//!   overlapping pairs, sorted and unique (the contract of [`find_pairs`](crate::find_pairs)).
//! - Method: a cluster is sorted by lower bound on one axis; a sweep keeping the running
//!   maximum of the upper bounds cuts it wherever the next box starts strictly after every
//!   box so far has ended (so touching boxes stay together: closed semantics). No box of one
//!   piece overlaps a box of another on that axis, so no overlapping pair is ever separated.
//!   Each piece is analysed again on the *other* axes, per cluster (the chapter's code
//!   instead keeps one global `divided` flag and alternates axes globally). A cluster is
//!   final when it has at most `min_group_size` members or when the last `D` axes tried in
//!   a row left it whole; a piece counts its split axis as tried (it is one connected run
//!   on that axis), so every step either shrinks a cluster or advances a counter bounded
//!   by `D`: termination is guaranteed.
//! - Keys: `flip(min + 0.0) << 32 | position` in a `u64` (layout beside `Kernel::split`),
//!   sorted on bits 32..64 with the crate's stable radix sort (`sort_unstable` below
//!   `SORT_SMALL` keys: the position makes keys unique, so the order is the same). Only
//!   lower bounds are sorted: the running maximum stands in for the chapter's close
//!   boundaries (see `docs/rdc.md`).
//! - Final groups: up to `DIRECT_MAX` members tested pair by pair; below `SWEEP_SIMD`
//!   a scalar sweep along the axis the group is already sorted on; above, the crate's SIMD
//!   [`crate::algorithms::sap`] (row chunks in parallel from `PAR_GROUP` members). So one
//!   huge group that no axis splits (everything overlapping) costs `D` sorts plus one
//!   sweep, never a quadratic recursion or a brute-force pass.
//! - Cost: linear radix sorts per level, a few levels on scenes with gaps. The known
//!   worst case is a staircase that peels one box per split: O(n^2) sorting work with tiny
//!   output (tested: terminates, no deep recursion, since the driver keeps an explicit
//!   stack). Dense scenes whose projections have no gap do not split at all and cost `D`
//!   sorts plus a sweep-and-prune.
//! - Parallel: clusters of at least `PAR_CLUSTER` members become rayon tasks of one
//!   `rayon::scope`; a split of at least `PAR_KEYS` members builds its keys, gathers its
//!   records and radix sorts in parallel. The split of a cluster depends only on its
//!   members, so the clusters and pairs are the same for any thread count. The sequential
//!   driver (crowded column runs, [`refine_run`]) and the parallel one (the public calls
//!   and `Method::Rdc`) are thin twins around one kernel ([`Kernel::drive`]); a unit test
//!   shows they agree.
//! - Pairs ([`Rdc::pairs`], and `Method::Rdc` through [`RdcPairs`], the same code): the
//!   margin grows every box, `Config::max_pairs` bounds the keys kept (`PairBudget`), and
//!   an allocation the allocator refuses is an error, never an abort of the process.
//! - Allocation: one record `(box + margin, index)` per live box, permuted in place (every
//!   cluster is a contiguous slice of it), per task a key buffer, radix scratch and a gather
//!   buffer as big as its largest cluster, the pair keys and the output. [`RdcPairs`] keeps
//!   all but the output between calls.
//! - Source: S. Rabin, "Recursive Dimensional Clustering: A Fast Algorithm for Collision
//!   Detection", Game Programming Gems 2 (2001); the per-cluster axis counter, the
//!   running-maximum cut and the final-group sweeps are this crate's.
//!
//! Here: the settings ([`Rdc`]) and the public calls; `kernel` splits and drives the
//! clusters, `groups` finds the pairs inside final groups, `pairs` collects them over a
//! whole scene ([`RdcPairs`]), `clusters` lists the groups canonically ([`Clusters`]),
//! `refine` serves crowded column runs.

mod clusters;
mod groups;
mod kernel;
mod pairs;
mod refine;
#[cfg(test)]
mod tests;

pub use clusters::Clusters;
pub(crate) use pairs::RdcPairs;
pub(crate) use refine::refine_run;

use crate::kernels::pair_sort::PairBudget;
use crate::par::prelude::*;
use crate::{Aabb, Error};
use clusters::assemble;
use kernel::{Kernel, Pool};

/// Recursive Dimensional Clustering settings; [`Rdc::clusters`] and [`Rdc::pairs`] run it.
///
/// ```
/// use broadphase::{Aabb2, Rdc};
/// let boxes = [
///     Aabb2::new([0.0, 0.0], [1.0, 1.0]),
///     Aabb2::new([1.0, 0.5], [2.0, 2.0]), // touches box 0
///     Aabb2::new([5.0, 5.0], [6.0, 6.0]),
/// ];
/// let rdc = Rdc { min_group_size: 1, ..Rdc::default() };
/// let c = rdc.clusters(&boxes).unwrap();
/// assert_eq!(c.iter().collect::<Vec<_>>(), vec![&[0, 1][..], &[2][..]]);
/// assert_eq!(rdc.pairs(&boxes).unwrap(), vec![[0, 1]]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rdc<const D: usize> {
    /// A cluster with at most this many members is not subdivided further (the chapter's
    /// "blend between brute force and RDC"). `1` gives the finest clusters. At least 1.
    pub min_group_size: usize,
    /// Grows every box by this much on every side (shrinks when negative, so touching boxes
    /// separate): the chapter's threshold with the sign flipped, the meaning of
    /// [`Config::margin`](crate::Config::margin). A box that a negative margin turns inside
    /// out is a group of its own and in no pair. Finite.
    pub margin: f32,
    /// The axes in the order they are tried; after a split each piece goes on with the axis
    /// after the one that split it. A permutation of `0..D`.
    pub axis_order: [usize; D],
}

impl<const D: usize> Default for Rdc<D> {
    /// `min_group_size` 64 (PERF: `benches/rdc.rs`, the `BP_TUNE=1` sweep), margin 0, axes
    /// `0, 1, ..`.
    fn default() -> Self {
        Self { min_group_size: 64, margin: 0.0, axis_order: std::array::from_fn(|k| k) }
    }
}

impl<const D: usize> Rdc<D> {
    /// Checks every field (and `D` in 1..=3); called by every entry point.
    pub fn validate(&self) -> Result<(), Error> {
        if D == 0 || D > 3 {
            return Err(Error::InvalidConfig {
                field: "D",
                reason: "only 1, 2 and 3 dimensions are supported",
            });
        }
        if self.min_group_size == 0 {
            return Err(Error::InvalidConfig { field: "min_group_size", reason: "must be at least 1" });
        }
        if !self.margin.is_finite() {
            return Err(Error::InvalidConfig { field: "margin", reason: "must be finite" });
        }
        let mut seen = [false; D];
        for &a in &self.axis_order {
            if a >= D || std::mem::replace(&mut seen[a], true) {
                return Err(Error::InvalidConfig {
                    field: "axis_order",
                    reason: "must be a permutation of 0..D",
                });
            }
        }
        Ok(())
    }

    /// The final groups of every box (see [`Clusters`]); deterministic for any thread count.
    pub fn clusters(&self, boxes: &[Aabb<D>]) -> Result<Clusters, Error> {
        self.validate()?;
        crate::validate::check_boxes(boxes)?;
        let mut recs = Vec::new();
        if !records(boxes, self.margin, &mut recs) {
            return Err(Error::OutOfMemory { pairs: 0 });
        }
        // A box a negative margin turned inside out is a group of its own.
        let mut dead = Vec::new();
        if self.margin < 0.0 {
            dead.extend(recs.iter().filter(|r| r.b.is_inverted()).map(|r| r.id));
            recs.retain(|r| !r.b.is_inverted());
        }
        let pool: Pool<D, Vec<(usize, usize)>> = Pool::default();
        let on_final = |groups: &mut Vec<(usize, usize)>, g: &[Rec<D>], at: usize, _: Option<usize>| {
            groups.push((at, g.len()));
            true
        };
        self.kernel().run_parallel(&mut recs, &pool, &on_final);
        let ranges =
            pool.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().flat_map(|t| t.c).collect();
        Ok(assemble(boxes.len(), &recs, ranges, &dead))
    }

    /// Every pair `[i, j]`, `i < j`, of overlapping boxes (grown by `margin`), sorted and
    /// unique: the same contract and output as [`find_pairs`](crate::find_pairs), and the
    /// same code as [`Method::Rdc`](crate::Method::Rdc) (whose buffers a
    /// [`Broadphase`](crate::Broadphase) keeps from call to call).
    pub fn pairs(&self, boxes: &[Aabb<D>]) -> Result<Vec<[u32; 2]>, Error> {
        self.validate()?;
        crate::validate::check_boxes(boxes)?;
        let budget = PairBudget::new(None);
        let mut out = Vec::new();
        RdcPairs::default().pairs_into(self, boxes, &budget, &mut out);
        budget.verdict()?;
        Ok(out)
    }

    fn kernel(&self) -> Kernel<D> {
        Kernel { min_group: self.min_group_size, axes: self.axis_order }
    }
}

/// Fills `recs` with every box of `boxes` grown by `margin`, with its index, in input order
/// (in parallel). False where the allocation failed (`recs` is then empty).
fn records<const D: usize>(boxes: &[Aabb<D>], margin: f32, recs: &mut Vec<Rec<D>>) -> bool {
    recs.clear();
    if recs.try_reserve_exact(boxes.len()).is_err() {
        return false;
    }
    let rec = |(i, b): (usize, &Aabb<D>)| Rec { b: b.grown(margin), id: i as u32 };
    boxes.par_iter().with_min_len(4096).enumerate().map(rec).collect_into_vec(recs);
    true
}

/// A box (margin applied, valid) with its index: what RDC sorts and splits. Records move
/// with their cluster, so every level reads its cluster contiguously. Indices into the
/// input are not used: the split scan and the group tests would miss the cache on their
/// box loads. PERF: `benches/rdc.rs` (islands 100k).
#[derive(Clone, Copy, Debug)]
struct Rec<const D: usize> {
    b: Aabb<D>,
    id: u32,
}
