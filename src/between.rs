//! The one-shot spatial join: every pair of a box of one set and a box of another that
//! overlap (static against dynamic, layer against layer), without a world.
//!
//! - Input: two slices of boxes and the finder's [`Config`] (its margin
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
use crate::time::Instant;
use crate::{Aabb, Broadphase, Config, Error};

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
        if crate::par::current_thread_index().is_none() {
            return crate::par::scope(|_| self.between(a, b, out));
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
        // With a pair bound the join must run itself: the one-shot search would count the
        // pairs within each set against the bound too.
        let alone = self.config.max_pairs.is_none();
        let Some(tested) = self.tree.pairs_against(large, m, offsets, n, alone, &budget, out) else {
            return self.as_one(a, b, out);
        };
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

impl<const D: usize> Broadphase<D> {
    /// The join as one search over `a` then `b`, its pairs across the two sets kept:
    /// where the sets are dense and in no spatial order, cheaper than the join's walks.
    fn as_one(&mut self, a: &[Aabb<D>], b: &[Aabb<D>], out: &mut Vec<[u32; 2]>) -> Result<(), Error> {
        let mut joined = std::mem::take(&mut self.joined);
        joined.clear();
        joined.extend_from_slice(a);
        joined.extend_from_slice(b);
        let found = self.frame(&joined, out);
        self.joined = joined;
        found?;
        let na = a.len() as u32;
        // Sorted pairs `[i, j]`, `i < j`: those across are `i < na <= j`, still sorted.
        out.retain(|p| p[0] < na && p[1] >= na);
        for p in out.iter_mut() {
            p[1] -= na;
        }
        self.stats.pairs = out.len();
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

#[cfg(test)]
mod tests {
    use crate::internals::scene::Rng;
    use crate::{Aabb, Broadphase, Config};

    /// Every `[i, j]` with `a[i]` and `b[j]` overlapping, by a double loop.
    fn brute<const D: usize>(a: &[Aabb<D>], b: &[Aabb<D>]) -> Vec<[u32; 2]> {
        let mut out = Vec::new();
        for (i, x) in a.iter().enumerate() {
            for (j, y) in b.iter().enumerate() {
                if x.overlaps(y) {
                    out.push([i as u32, j as u32]);
                }
            }
        }
        out
    }

    /// `n` boxes of a scene in a seeded random order, and a crowd of `n / 10` on them.
    fn sets<const D: usize>(name: &str, n: usize, shuffle: bool) -> (Vec<Aabb<D>>, Vec<Aabb<D>>) {
        let mut st = crate::internals::by_name::<D>(name, n, 3).unwrap();
        let mut rng = Rng::new(9);
        if shuffle {
            for i in (1..st.len()).rev() {
                st.swap(i, rng.below(i + 1));
            }
        }
        let crowd = (0..n / 10)
            .map(|_| {
                let s = st[rng.below(st.len())];
                let h = rng.range(0.25, 0.5);
                let c: [f32; D] = std::array::from_fn(|k| (s.min[k] + s.max[k]) * 0.5 + rng.range(-0.5, 0.5));
                Aabb { min: c.map(|x| x - h), max: c.map(|x| x + h) }
            })
            .collect();
        (st, crowd)
    }

    /// The larger set in its own coherent order, shuffled (the join reorders it), and
    /// shuffled and dense (the join gives way to one search over both), with and
    /// without a pair bound (which keeps the join), both ways round.
    #[test]
    fn every_path_of_the_join_matches_a_double_loop() {
        for (name, shuffle) in [("terrain", false), ("terrain", true), ("uniform", true), ("copies", true)] {
            let (st, crowd) = sets::<3>(name, 20_000, shuffle);
            let want = brute(&crowd, &st);
            for bound in [None, Some(want.len() + 1)] {
                let mut bp = Broadphase::new(Config::default().with_max_pairs(bound)).unwrap();
                let mut out = Vec::new();
                bp.find_pairs_between(&crowd, &st, &mut out).unwrap();
                assert_eq!(out, want, "{name}, shuffled {shuffle}, bound {bound:?}");
                bp.find_pairs_between(&st, &crowd, &mut out).unwrap();
                let mut back: Vec<[u32; 2]> = want.iter().map(|&[i, j]| [j, i]).collect();
                back.sort_unstable();
                assert_eq!(out, back, "{name} swapped, shuffled {shuffle}, bound {bound:?}");
            }
        }
    }
}
