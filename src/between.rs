//! The one-shot spatial join: every pair of a box of one set and a box of another that
//! overlap (static against dynamic, layer against layer), without a world.
//!
//! - Input: two slices of boxes and the finder's [`Config`](crate::Config) (its margin
//!   and pair bound). Output: every `[i, j]` with `a[i]` overlapping `b[j]`, sorted.
//! - Stages: both sets validated; a tree ([`crate::bvh`]) over the smaller set; blocks of
//!   consecutive boxes of the larger set walk it (`bvh::between`); the pair sort, in one id space (`a`'s ids,
//!   then `b`'s after them), then the ids of `b` put back.
//! - Cost: O(m) for a tree over the m smaller boxes; for the n larger ones, one walk a
//!   block of 32 where their order is spatially coherent (a mesh, a map, a level), else
//!   O(n (log m + k)); O(pairs) for the sort. Pairs within a set are never looked at.
//! - Threads: the caller's rayon pool; the output is the same bytes for any thread count.
//! - Allocation: the finder's tree and key lists, kept between calls; the output.
//! - Errors: as [`Broadphase::find_pairs`]: an invalid box is [`Error::InvalidBox`] with
//!   its index in `a`, or `a.len()` plus its index in `b` (its index in `a` then `b`).
//! - Source: this crate (the tree: Karras 2012).

use crate::kernels::pair_sort::PairBudget;
use crate::{Aabb, Broadphase, Config, Error};
use std::time::Instant;

impl<const D: usize> Broadphase<D> {
    /// Every `[i, j]` with `a[i]` and `b[j]` overlapping (each grown by the margin; closed
    /// boxes), sorted ascending, into `out` (cleared first). On error `out` is left empty
    /// and the finder stays usable.
    pub fn find_pairs_between(
        &mut self,
        a: &[Aabb<D>],
        b: &[Aabb<D>],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), Error> {
        if rayon::current_thread_index().is_none() {
            return rayon::scope(|_| self.between(a, b, out));
        }
        self.between(a, b, out)
    }

    fn between(&mut self, a: &[Aabb<D>], b: &[Aabb<D>], out: &mut Vec<[u32; 2]>) -> Result<(), Error> {
        out.clear();
        let t0 = Instant::now();
        let n = a.len().saturating_add(b.len());
        self.stats = crate::Stats { boxes: n, ..Default::default() };
        if n > u32::MAX as usize {
            return Err(Error::TooManyBoxes { len: n });
        }
        crate::validate::check_boxes(a)?;
        crate::validate::check_boxes(b).map_err(|e| match e {
            Error::InvalidBox { index, problem } => Error::InvalidBox { index: a.len() + index, problem },
            e => e,
        })?;
        self.stats.t_scan = t0.elapsed();
        let t = Instant::now();
        let m = self.config.margin;
        let na = a.len() as u32;
        // The tree over the smaller set; the larger one walks it.
        let (small, large, offsets) = if a.len() <= b.len() { (a, b, [0, na]) } else { (b, a, [na, 0]) };
        self.tree.build_for_queries(small, m);
        self.stats.entries = self.tree.len();
        self.stats.t_sort = t.elapsed();
        let t = Instant::now();
        let budget = PairBudget::new(self.config.max_pairs);
        let tested = self.tree.pairs_against(large, m, offsets, n, &budget, out);
        if let Err(e) = budget.verdict() {
            out.clear();
            return Err(e);
        }
        for p in out.iter_mut() {
            p[1] -= na;
        }
        self.stats.t_sweep = t.elapsed();
        self.stats.candidates = tested;
        self.stats.exact_tests = tested;
        self.stats.pairs = out.len();
        self.stats.t_total = t0.elapsed();
        Ok(())
    }
}

/// Every `[i, j]` with `a[i]` overlapping `b[j]` (closed boxes), sorted ascending: the
/// pairs between two sets (static against dynamic, layer against layer), never within
/// one. Runs on the current rayon pool; the same bytes for any thread count.
///
/// ```
/// use broadphase::{find_pairs_between, Aabb2};
/// let walls = [Aabb2::new([0.0, 0.0], [1.0, 9.0]), Aabb2::new([8.0, 0.0], [9.0, 9.0])];
/// let crowd = [Aabb2::new([0.5, 1.0], [1.5, 2.0]), Aabb2::new([4.0, 4.0], [5.0, 5.0]), Aabb2::new([0.0, 0.0], [9.0, 0.5])];
/// assert_eq!(find_pairs_between(&walls, &crowd)?, vec![[0, 0], [0, 2], [1, 2]]);
/// # Ok::<(), broadphase::Error>(())
/// ```
pub fn find_pairs_between<const D: usize>(a: &[Aabb<D>], b: &[Aabb<D>]) -> Result<Vec<[u32; 2]>, Error> {
    find_pairs_between_with(a, b, &Config::default())
}

/// [`find_pairs_between`] with a [`Config`] (margin, pair bound).
pub fn find_pairs_between_with<const D: usize>(
    a: &[Aabb<D>],
    b: &[Aabb<D>],
    config: &Config<D>,
) -> Result<Vec<[u32; 2]>, Error> {
    let mut bp = Broadphase::new(*config)?;
    let mut out = Vec::new();
    bp.find_pairs_between(a, b, &mut out)?;
    Ok(out)
}
