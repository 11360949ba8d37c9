//! The reference: test every pair. Exact by construction; every other algorithm in the
//! crate is tested against it.
//!
//! - Input: boxes (validated here) and a [`Config`] (only its margin is used). Output:
//!   every overlapping pair `[i, j]`, `i < j`, sorted and unique.
//! - Cost: O(n^2) box tests.
//! - Parallel: over the first index (rayon); the collected order is the sequential one, so
//!   the output is the same for any thread count.
//! - Allocation: the grown boxes and the output.
//! - Source: this crate (the oracle; no idea to cite).

use crate::par::prelude::*;
use crate::{Aabb, Config, Error};

/// Every pair `[i, j]`, `i < j`, whose boxes (grown by `config.margin`) overlap, sorted.
pub fn brute_force_pairs<const D: usize>(
    boxes: &[Aabb<D>],
    config: &Config<D>,
) -> Result<Vec<[u32; 2]>, Error> {
    config.validate()?;
    crate::validate::check_boxes(boxes)?;
    let m = config.margin;
    let grown: Vec<Aabb<D>> = boxes.iter().map(|b| b.grown(m)).collect();
    let pairs = (0..grown.len())
        .into_par_iter()
        .flat_map_iter(|i| {
            let a = grown[i];
            let g = &grown;
            // A box that a negative margin turned inside out overlaps nothing.
            let live = !a.is_inverted();
            (i + 1..g.len())
                .filter(move |&j| live && !g[j].is_inverted() && a.overlaps(&g[j]))
                .map(move |j| [i as u32, j as u32])
        })
        .collect();
    Ok(pairs)
}
