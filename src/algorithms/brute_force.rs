//! The reference: test every pair. Exact by construction; every other algorithm in the
//! crate is tested against it. Public as [`brute_force_pairs`], and a method of its own
//! ([`Method::BruteForce`](crate::Method::BruteForce)), the same code.
//!
//! - Input: boxes and a margin ([`brute_force_pairs`] validates them and its [`Config`];
//!   the pipeline hands [`BruteForce`] boxes it has validated). Output: every overlapping
//!   pair `[i, j]`, `i < j`, sorted and unique: rows in order, each row's `j` ascending,
//!   so no pair sort runs.
//! - Method: one kernel ([`row`]): box `i` against every box after it, in two drivers.
//!   [`brute_force_pairs`] collects the rows in order. [`BruteForce`] (the method) counts
//!   each row's pairs first, against the [`PairBudget`], then runs the kernel again and
//!   writes each row's pairs at the offset the counts give.
//! - Cost: O(n^2) box tests (the method: twice); for tests and tiny scenes.
//! - Parallel: by rows (rayon balances the triangle's unequal rows). Rayon's collect keeps
//!   the rows' order, and the method's rows write their own slices of the output, so the
//!   bytes are those of one thread for any thread count.
//! - Allocation: the grown boxes; [`brute_force_pairs`] rayon's pieces of the output
//!   before they are joined; the method a count a row (both kept in [`BruteForce`]) and
//!   the output, nothing per pair beyond it.
//! - Source: this crate (the oracle; no idea to cite).

use crate::kernels::pair_sort::PairBudget;
use crate::kernels::par::SendPtr;
use crate::par::prelude::*;
use crate::{Aabb, Config, Error};

/// Rows a parallel work item holds at the least.
const ROWS_MIN: usize = 64;

/// Every pair `[i, j]`, `i < j`, whose boxes (grown by `config.margin`) overlap, sorted.
/// Only the margin of `config` is used.
pub fn brute_force_pairs<const D: usize>(
    boxes: &[Aabb<D>],
    config: &Config<D>,
) -> Result<Vec<[u32; 2]>, Error> {
    config.validate()?;
    crate::validate::check_boxes(boxes)?;
    let mut grown = Vec::new();
    grow(boxes, config.margin, &mut grown);
    let g = &grown[..];
    // Rows in order, each row's `j` ascending: rayon's collect keeps the sequential order.
    Ok((0..g.len()).into_par_iter().flat_map_iter(|i| row(g, i).map(move |j| [i as u32, j as u32])).collect())
}

/// The brute force's buffers, kept between calls (`Broadphase`'s, for
/// `Method::BruteForce`).
#[derive(Debug)]
pub(crate) struct BruteForce<const D: usize> {
    /// The boxes grown by the margin (inside-out ones as NaN: see [`grow`]).
    grown: Vec<Aabb<D>>,
    /// Per row: its pairs and tests (count pass), then where its pairs start and end in the
    /// output.
    rows: Vec<[usize; 2]>,
}

impl<const D: usize> Default for BruteForce<D> {
    fn default() -> Self {
        Self { grown: Vec::new(), rows: Vec::new() }
    }
}

impl<const D: usize> BruteForce<D> {
    /// Every pair of `boxes` (valid) that overlap grown by `margin`, into `out` (cleared
    /// first); returns the box tests (of the count pass). Stops early once `budget` stops:
    /// then `out` is empty, and the caller reports the verdict.
    pub(crate) fn pairs_into(
        &mut self,
        boxes: &[Aabb<D>],
        margin: f32,
        budget: &PairBudget,
        out: &mut Vec<[u32; 2]>,
    ) -> usize {
        out.clear();
        grow(boxes, margin, &mut self.grown);
        let grown = &self.grown[..];
        (0..grown.len())
            .into_par_iter()
            .with_min_len(ROWS_MIN)
            .map(|i| {
                if budget.stopped() {
                    return [0, 0];
                }
                let k = row(grown, i).count();
                if k > 0 {
                    budget.take(k);
                }
                [k, grown.len() - i - 1]
            })
            .collect_into_vec(&mut self.rows);
        let tests = self.rows.iter().map(|r| r[1]).sum();
        if budget.stopped() {
            return tests;
        }
        let total: usize = self.rows.iter().map(|r| r[0]).sum();
        if out.try_reserve_exact(total).is_err() {
            budget.out_of_memory();
            return tests;
        }
        let mut at = 0;
        for r in self.rows.iter_mut() {
            *r = [at, at + r[0]];
            at = r[1];
        }
        let dst = SendPtr(out.as_mut_ptr());
        self.rows.par_iter().enumerate().with_min_len(ROWS_MIN).for_each(|(i, &[start, end])| {
            let mut w = start;
            for j in row(grown, i) {
                // The kernel finds the pairs it counted (same boxes, same tests); the
                // bound keeps the writes in the row's slice whatever happens.
                if w < end {
                    // SAFETY: `start <= w < end <= total <= capacity`, and the rows' slices
                    // `start..end` are disjoint (a prefix sum), so no slot is written twice.
                    unsafe { dst.put(w, [i as u32, j as u32]) };
                }
                w += 1;
            }
            debug_assert_eq!(w, end, "row {i}: the write pass found another count");
        });
        // SAFETY: every slot below `total` was written above (each row fills its slice).
        unsafe { out.set_len(total) };
        debug_assert!(crate::kernels::pair_sort::validate(out));
        tests
    }
}

/// `boxes` grown by `margin` into `grown`. INVARIANT: a box the margin turns inside out is
/// stored as NaN, which overlaps nothing (every comparison with NaN is false), so the
/// kernel needs no test of its own for them.
fn grow<const D: usize>(boxes: &[Aabb<D>], margin: f32, grown: &mut Vec<Aabb<D>>) {
    let dead = Aabb { min: [f32::NAN; D], max: [f32::NAN; D] };
    let grow = |b: &Aabb<D>| {
        let g = b.grown(margin);
        if g.is_inverted() {
            dead
        } else {
            g
        }
    };
    boxes.par_iter().with_min_len(4096).map(grow).collect_into_vec(grown);
}

/// The kernel: the boxes after box `i` that it overlaps, in ascending order (it tests
/// `grown.len() - i - 1` boxes).
#[inline]
fn row<const D: usize>(grown: &[Aabb<D>], i: usize) -> impl Iterator<Item = usize> + '_ {
    let a = grown[i];
    (i + 1..grown.len()).filter(move |&j| a.overlaps(&grown[j]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two passes agree with the plainest loop (inverted boxes tested by name), over
    /// touching, identical, inside-out and huge boxes, on pools of 1 and 3 threads.
    #[test]
    fn agrees_with_a_plain_double_loop() {
        let mut r = crate::internals::scene::Rng::new(11);
        let mut boxes: Vec<Aabb<2>> = (0..700)
            .map(|_| {
                let p = [r.below(40) as f32 * 0.5, r.below(40) as f32 * 0.5];
                let s = [r.below(4) as f32 * 0.5, r.below(4) as f32 * 0.25];
                Aabb::new(p, [p[0] + s[0], p[1] + s[1]])
            })
            .collect();
        boxes.push(Aabb::new([-3e38; 2], [3e38; 2]));
        boxes.push(Aabb::new([f32::MAX; 2], [f32::MAX; 2]));
        for margin in [0.0, 0.3, -0.1, -0.3] {
            let g: Vec<Aabb<2>> = boxes.iter().map(|b| b.grown(margin)).collect();
            let mut want = Vec::new();
            for i in 0..g.len() {
                for j in i + 1..g.len() {
                    if !g[i].is_inverted() && !g[j].is_inverted() && g[i].overlaps(&g[j]) {
                        want.push([i as u32, j as u32]);
                    }
                }
            }
            assert!(!want.is_empty());
            for t in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap();
                let (mut bf, mut out) = (BruteForce::default(), vec![[9, 9]]);
                let budget = PairBudget::new(None);
                let tests = pool.install(|| bf.pairs_into(&boxes, margin, &budget, &mut out));
                assert_eq!(budget.verdict(), Ok(()));
                assert_eq!(out, want, "margin {margin}, {t} threads");
                assert_eq!(tests, g.len() * (g.len() - 1) / 2);
            }
        }
    }

    /// A bound below the pairs stops the call with an empty output; at the pairs it passes.
    #[test]
    fn the_bound_stops_it() {
        let boxes = vec![Aabb::new([0.0; 3], [1.0; 3]); 200];
        let pairs = 200 * 199 / 2;
        let mut bf = BruteForce::default();
        let mut out = Vec::new();
        let budget = PairBudget::new(Some(pairs - 1));
        bf.pairs_into(&boxes, 0.0, &budget, &mut out);
        assert!(budget.verdict().is_err() && out.is_empty());
        let budget = PairBudget::new(Some(pairs));
        bf.pairs_into(&boxes, 0.0, &budget, &mut out);
        assert_eq!((budget.verdict(), out.len()), (Ok(()), pairs));
    }
}
