//! Input validation at the API boundary: the first NaN, infinite or inverted box is an error.
//!
//! The pipeline's scan (`choose::scan_scene`) checks every box branch-free on its way and
//! calls [`check_boxes`] only when it saw a bad one, to name the first; the brute force and
//! RDC entry points call it directly, and [`Config::validate`](crate::Config::validate)
//! checks its bounds with [`check_box`].

use crate::error::BoxProblem;
use crate::par::prelude::*;
use crate::{Aabb, Error};

/// Checks one box.
#[inline]
pub(crate) fn check_box<const D: usize>(b: &Aabb<D>) -> Result<(), BoxProblem> {
    for k in 0..D {
        let (lo, hi) = (b.min[k], b.max[k]);
        if lo.is_nan() || hi.is_nan() {
            return Err(BoxProblem::NaN);
        }
        if lo.is_infinite() || hi.is_infinite() {
            return Err(BoxProblem::Infinite);
        }
        if lo > hi {
            return Err(BoxProblem::MinGreaterThanMax { axis: k });
        }
    }
    Ok(())
}

/// Checks the length and every box, in parallel; reports the *first* offending index so the
/// error does not depend on the thread count.
pub(crate) fn check_boxes<const D: usize>(boxes: &[Aabb<D>]) -> Result<(), Error> {
    if boxes.len() > u32::MAX as usize {
        return Err(Error::TooManyBoxes { len: boxes.len() });
    }
    let bad = boxes.par_iter().with_min_len(4096).position_first(|b| check_box(b).is_err());
    match bad {
        None => Ok(()),
        Some(index) => Err(Error::InvalidBox { index, problem: check_box(&boxes[index]).unwrap_err() }),
    }
}
