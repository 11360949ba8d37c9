//! The order a batch runs its queries in: cell by cell along a Morton curve through
//! their positions, so that queries run one after another walk the same nodes while
//! they are in cache.
//!
//! - Input: each query's position (a region's or a swept box's centre, a point, a ray's
//!   midpoint). Output: the query indices by the Morton code of the cell of a grid of
//!   2^12 cells over the positions' bounds that holds each (ties by index), after the
//!   first few left in place (the batch runs those first, to see whether its queries
//!   reach the leaves: `ordered`), or none where the batch is too small to pay for it.
//! - Why: a query's time is mostly the first loads of the tree's nodes and leaves; a
//!   batch in the caller's order (often random) reloads the tree's lower levels for each
//!   query, while queries in one cell share most of their path. A full sort by a fine
//!   code cost more than the queries of a cheap batch (points that meet nothing) took;
//!   a counting sort by a coarse cell costs two passes. PERF: benches/queries.rs
//!   (`points`, `regions_small`, `rays_all`: `ours_batch`).
//! - Results do not depend on the order a query runs in, and each lands in its own place,
//!   so the output is the same bytes as in input order.
//! - Cost: O(n + 2^12): a pass for the bounds, one for the cells, a counting sort that
//!   also gives each query's place in the run (to put results back in one pass).
//!   Threads: the bounds and cells in blocks on the caller's pool, the sort on the
//!   caller's thread. Allocation: none in steady state (the buffers are the
//!   thread's, taken out while in use, so a nested batch gets its own).
//! - Source: the Morton-order article's point that sorted cells make neighbours adjacent
//!   in memory, applied to the queries instead of the boxes.

use crate::kernels::morton::encode_lut;
use crate::par::prelude::*;
use std::cell::Cell;

/// Batches of fewer queries run in the caller's order.
pub(super) const MIN_ORDERED: usize = 256;

/// Bits of a cell's Morton code (`CELL_BITS / D` an axis).
const CELL_BITS: u32 = 12;

/// Queries a parallel work item of the bounds and cell passes takes.
const BLOCK: usize = 2048;

/// The order a batch runs in: `run[j]` is the query run `j`-th, `at[i]` where query `i`
/// runs (the inverse permutation).
#[derive(Clone, Copy)]
pub(super) struct Order<'a> {
    pub(super) run: &'a [u32],
    pub(super) at: &'a [u32],
}

/// A thread's buffers: each query's cell, the cells' counts, the run order, its inverse.
type Buffers = (Vec<u16>, Vec<u32>, Vec<u32>, Vec<u32>);

thread_local! {
    static BUFFERS: Cell<Buffers> =
        const { Cell::new((Vec::new(), Vec::new(), Vec::new(), Vec::new())) };
}

/// Runs `f` with the queries `0..skip` in place and `skip..n` after them in Morton order of
/// the cell of `position(i)` (finite coordinates), or with `None` where `n` is below
/// [`MIN_ORDERED`] or nothing is left past `skip`.
pub(super) fn with_order<const D: usize, R>(
    n: usize,
    skip: usize,
    position: impl Fn(usize) -> [f32; D] + Sync,
    f: impl FnOnce(Option<Order<'_>>) -> R,
) -> R {
    if n < MIN_ORDERED || n > u32::MAX as usize || skip >= n {
        return f(None);
    }
    let (mut cells, mut counts, mut run, mut at) = BUFFERS.take();
    let (all, n) = (n, n - skip);
    let position = |i: usize| position(skip + i);
    let block_bounds = |b: usize| {
        let (mut lo, mut hi) = ([f32::INFINITY; D], [f32::NEG_INFINITY; D]);
        for i in b * BLOCK..((b + 1) * BLOCK).min(n) {
            let p = position(i);
            for k in 0..D {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        (lo, hi)
    };
    // min and max are exact, so the bounds are the same for any split.
    let (lo, hi) = (0..n.div_ceil(BLOCK)).into_par_iter().map(block_bounds).reduce(
        || ([f32::INFINITY; D], [f32::NEG_INFINITY; D]),
        |(a, b), (c, d)| (std::array::from_fn(|k| a[k].min(c[k])), std::array::from_fn(|k| b[k].max(d[k]))),
    );
    let side = (1u32 << (CELL_BITS / D as u32)) as f32;
    // Cells an axis over the bounds (in f64: the extent may pass f32::MAX); a zero
    // extent puts every position in cell 0.
    let scale: [f32; D] = std::array::from_fn(|k| {
        let ext = hi[k] as f64 - lo[k] as f64;
        if ext > 0.0 {
            (side as f64 / ext) as f32
        } else {
            0.0
        }
    });
    cells.resize(n, 0);
    cells.par_chunks_mut(BLOCK).enumerate().for_each(|(b, out)| {
        for (j, c) in out.iter_mut().enumerate() {
            let p = position(b * BLOCK + j);
            // `as u32` saturates (a NaN, never given, would go to 0).
            let q: [u32; D] =
                std::array::from_fn(|k| (((p[k] - lo[k]) * scale[k]) as u32).min(side as u32 - 1));
            *c = encode_lut::<D>(q) as u16;
        }
    });
    counts.clear();
    counts.resize(1 << CELL_BITS, 0);
    for &c in &cells[..n] {
        counts[c as usize] += 1;
    }
    let mut sum = 0;
    for c in counts.iter_mut() {
        (*c, sum) = (sum, sum + *c);
    }
    run.resize(all, 0);
    at.resize(all, 0);
    for i in 0..skip {
        (run[i], at[i]) = (i as u32, i as u32);
    }
    for (i, &c) in cells[..n].iter().enumerate() {
        let j = counts[c as usize];
        let (i, j) = (skip + i, skip + j as usize);
        run[j] = i as u32;
        at[i] = j as u32;
        counts[c as usize] += 1;
    }
    let r = f(Some(Order { run: &run[..all], at: &at[..all] }));
    BUFFERS.set((cells, counts, run, at));
    r
}

/// The middle of a motion from `from` along `dir` for `max_t` (or `from` where that is
/// not finite).
pub(super) fn midway<const D: usize>(from: [f32; D], dir: &[f32; D], max_t: f32) -> [f32; D] {
    let mid: [f32; D] = std::array::from_fn(|k| from[k] + dir[k] * (max_t * 0.5));
    if mid.iter().all(|x| x.is_finite()) {
        mid
    } else {
        from
    }
}

#[cfg(test)]
mod tests {
    use super::{with_order, MIN_ORDERED};

    /// The order is a permutation that keeps neighbours together (16 queries in a row
    /// span under half of what a row of the grid does), and small batches keep the
    /// caller's order.
    #[test]
    fn orders_along_the_curve() {
        assert!(with_order::<2, _>(MIN_ORDERED - 1, 0, |_| [0.0; 2], |o| o.is_none()));
        // A 32 x 32 grid, listed row by row (each run of 16 spans 15 + 0).
        let pts: Vec<[f32; 2]> = (0..1024).map(|i| [(i % 32) as f32, (i / 32) as f32]).collect();
        let order = with_order(pts.len(), 0, |i| pts[i], |o| o.unwrap().run.to_vec());
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..1024).collect::<Vec<u32>>());
        let span: f32 = order
            .chunks(16)
            .map(|run| {
                let (mut lo, mut hi) = ([f32::MAX; 2], [f32::MIN; 2]);
                for &i in run {
                    for k in 0..2 {
                        lo[k] = lo[k].min(pts[i as usize][k]);
                        hi[k] = hi[k].max(pts[i as usize][k]);
                    }
                }
                hi[0] - lo[0] + hi[1] - lo[1]
            })
            .sum::<f32>()
            / 64.0;
        assert!(span < 7.5, "mean span {span}");
        // Identical positions keep their input order.
        let same = with_order::<3, _>(300, 0, |_| [1.0; 3], |o| o.unwrap().run.to_vec());
        assert_eq!(same, (0..300).collect::<Vec<u32>>());
        // `at` is the inverse of `run`.
        let (run, at) =
            with_order(pts.len(), 0, |i| pts[i], |o| (o.unwrap().run.to_vec(), o.unwrap().at.to_vec()));
        assert!(run.iter().enumerate().all(|(j, &i)| at[i as usize] as usize == j));
        // Over several blocks, on a line: the bounds are those of all of them, so the
        // run goes along the line (back at most a cell, 4999 / 64, within one).
        let line: Vec<[f32; 2]> = (0..5000).map(|i| [(i * 37 % 5000) as f32, 0.0]).collect();
        let run = with_order(line.len(), 0, |i| line[i], |o| o.unwrap().run.to_vec());
        assert!(run.windows(2).all(|w| line[w[1] as usize][0] > line[w[0] as usize][0] - 79.0));
        // The first `skip` stay in place, the rest follow in their order.
        let rest = with_order(line.len(), 64, |i| line[i], |o| o.unwrap().run.to_vec());
        assert_eq!(rest[..64], (0..64).collect::<Vec<u32>>()[..]);
        assert!(rest[64..].iter().all(|&i| i >= 64));
        assert!(rest[64..].windows(2).all(|w| line[w[1] as usize][0] > line[w[0] as usize][0] - 79.0));
    }
}
