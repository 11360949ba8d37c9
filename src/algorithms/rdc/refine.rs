//! RDC as the refinement of crowded column runs ([`Refine::Rdc`](crate::Refine::Rdc)).
//!
//! - Input: a run's boxes and its range's (margin applied). Output: the wanted pairs, to a
//!   callback, and the splits and tests.
//! - Cost: that of the kernel on the run and range.
//! - Parallel: none; the column sweep is parallel over its chunks already.
//! - Allocation: the records and the scratch, a call.
//! - Source: S. Rabin's RDC (see `rdc`), inside this crate's column sweep.

use super::groups::{group_pairs, GroupSweep};
use super::kernel::{Item, Scratch};
use super::{Rdc, Rec};
use crate::Aabb;

/// RDC as the refinement of one crowded run of the column sweep
/// ([`Refine::Rdc`](crate::Refine::Rdc)): clusters
/// `boxes` (valid, margin already applied) with the default settings and offers every
/// overlapping pair `(x, y)`, `x < y`, with `x < run` (at least one run entry; positions in
/// `boxes`) once to `offer`. Returns `(clusters split, box tests)`. Sequential: the column
/// sweep is parallel over its chunks already.
pub(crate) fn refine_run<const D: usize>(
    boxes: impl Iterator<Item = Aabb<D>>,
    run: usize,
    mut offer: impl FnMut(usize, usize),
) -> (usize, usize) {
    let mut recs: Vec<Rec<D>> = boxes.enumerate().map(|(i, b)| Rec { b, id: i as u32 }).collect();
    if recs.is_empty() {
        return (0, 0);
    }
    let kernel = Rdc::<D>::default().kernel();
    let (mut s, mut sets, mut splits, mut tests) = (Scratch::default(), GroupSweep::default(), 0, 0);
    let first = Item { recs: &mut recs, at: 0, next: 0, tried: 0, sorted_on: None };
    kernel.drive(first, &mut s, &mut splits, Some, |g, _, sorted_on| {
        tests += group_pairs(g, sorted_on, run as u32, &mut sets, |x, y| {
            offer(x.min(y) as usize, x.max(y) as usize);
        });
        true
    });
    (splits, tests)
}
