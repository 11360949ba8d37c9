//! The one-shot spatial join: every pair of a box of one set and a box of another that
//! overlap (static against dynamic, layer against layer), without a world.
//!
//! - Input: two slices of boxes and the finder's [`Config`] (its margin
//!   and pair bound). Output: every `[i, j]` with `a[i]` overlapping `b[j]`, sorted.
//! - Stages: the smaller set scanned (validity, bounds, its bulk: `choose::scan_scene`
//!   and the trim sample, as `find_pairs` scans) and filed in the hierarchical grid
//!   (`algorithms::grid`, its cells fitted to the larger set's boxes); every box of the
//!   larger set, in its own order, looks through every level's window of it, and is
//!   checked for validity on the way (`algorithms::grid::join`); the pair sort, in one
//!   id space (`a`'s ids, then `b`'s after them), then the ids of `b` put back.
//! - Cost: O(m) for the grid over the m smaller boxes (a radix sort); for the n larger
//!   ones a few cell maps and table reads each, plus their candidates; O(pairs) for the
//!   sort. Pairs within a set are never looked at, and the larger set is never sorted.
//! - Threads: the caller's rayon pool; the output is the same bytes for any thread count.
//! - Allocation: the finder's grid and key lists, kept between calls; the output.
//! - Errors: as [`Broadphase::find_pairs`]: an invalid box is [`Error::InvalidBox`] with
//!   its index in `a`, or `a.len()` plus its index in `b` (its index in `a` then `b`).
//! - Source: this crate. A grid over the smaller set, not a tree over it walked by blocks
//!   of larger-set boxes (that tree stays for the world's joins, `bvh::between`): the
//!   larger set is read once in its own order, with no walk and no give-way to a search
//!   over both sets. PERF: benches/queries.rs (`between`; figures in
//!   `docs/BENCHMARKS.md`).

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
        let m = self.config.margin;
        let na = a.len() as u32;
        // The grid over the smaller set; the larger one looks through it.
        let (small, large, offsets) = if a.len() <= b.len() { (a, b, [0, na]) } else { (b, a, [na, 0]) };
        // The smaller set's scan, beside its trim sample, as `find_pairs` scans: its live
        // grown boxes' bounds (the grid's cells, and the larger set's cull) and its bulk's
        // (the cost model's density, strays left out).
        let (mut scan, sample) = crate::par::join(
            || crate::choose::scan_scene(small, m),
            || crate::choose::TrimSample::take(small, m),
        );
        if scan.invalid {
            return first_invalid(a, b);
        }
        let bounds = Aabb { min: scan.min, max: scan.max };
        if let Some(sample) = &sample {
            scan.trim(sample);
        }
        let bulk = Aabb { min: scan.min, max: scan.max };
        self.stats.t_scan = t0.elapsed();
        let t = Instant::now();
        self.grid.build_for_join(small, large, m, bounds, bulk);
        self.stats.entries = self.grid.len();
        self.stats.t_sort = t.elapsed();
        let t = Instant::now();
        let budget = PairBudget::new(self.config.max_pairs);
        let looked = self.grid.pairs_against(large, m, &bounds, offsets, n, &budget, out);
        if looked.invalid {
            out.clear();
            return first_invalid(a, b);
        }
        self.stats.method = crate::Method::Grid;
        if let Err(e) = budget.verdict() {
            out.clear();
            return Err(e);
        }
        for p in out.iter_mut() {
            p[1] -= na;
        }
        self.stats.t_sweep = t.elapsed();
        self.stats.candidates = looked.tested;
        self.stats.exact_tests = looked.tested;
        self.stats.pairs = out.len();
        self.stats.t_total = t0.elapsed();
        Ok(())
    }
}

/// The error of the first invalid box of `a` then `b` (indices of `b` after `a`'s), for
/// a call that saw one.
fn first_invalid<const D: usize>(a: &[Aabb<D>], b: &[Aabb<D>]) -> Result<(), Error> {
    crate::validate::check_boxes(a)?;
    crate::validate::check_boxes(b).map_err(|e| match e {
        Error::InvalidBox { index, problem } => Error::InvalidBox { index: a.len() + index, problem },
        e => e,
    })?;
    // Not reached: the scans test what `check_box` tests.
    Err(Error::InvalidBox { index: 0, problem: crate::error::BoxProblem::NaN })
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

    /// The larger set in its own coherent order, shuffled, and dense, with and without a
    /// pair bound, both ways round (the grid over whichever set is smaller).
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
