//! The reference: test every pair. O(n^2), exact by construction; every other algorithm in
//! the crate is tested against it. Parallel over the first index; output sorted, unique.

use crate::{Aabb, Config, Error};
use rayon::prelude::*;

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
