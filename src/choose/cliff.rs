//! The cliff estimate: from the trim sample, how many candidates a box would meet in the
//! columns, against how many pairs it has. Where boxes are long across the column axes and
//! cross each other (a staircase, planks on planks), the columns hold them at coarse levels
//! and test almost every pair along the sweep axis, while they find few: `Method::Auto`
//! takes the tree there ([`choose`](super::choose)).
//!
//! - Input: the sample's lower and upper bounds per axis (grown boxes, strays cut).
//! - Output: along the sweep axis, the sampled pairs the columns would test, and the
//!   sampled pairs that overlap.
//! - Cost: a sort of the sample, then its own sweep: O(s log s + t) for t pairs
//!   overlapping along the axis (at most s^2 / 2, where the sample is one crowd); run only
//!   where `Auto` would otherwise take the columns.
//! - Parallel: no; s is at most [`CLIFF_SAMPLE`].
//! - Allocation: a few vectors of s values.
//! - Source: this crate. The model is the column plan's: a box sits at the level whose
//!   cell side is the power of two at or above its longest extent across the column axes,
//!   and two boxes meet in a column where their cells at the coarser of their two levels
//!   meet; the sweep along the axis then tests them where their extents along it meet.

/// Sampled boxes the estimate uses at most (every other one of a full trim sample): a
/// crowded sample costs its pairs squared, and a quarter of them resolve the estimate
/// well enough for a threshold of hundreds of candidates a box.
pub(super) const CLIFF_SAMPLE: usize = 256;

/// Of the sample `(lo, hi)` (per axis, one entry a box), the pairs the columns would test
/// when swept along `k`, and the pairs that overlap.
pub(super) fn column_tests<const D: usize>(
    lo: &[Vec<f32>; D],
    hi: &[Vec<f32>; D],
    k: usize,
) -> (usize, usize) {
    let s = lo[0].len();
    if s < 2 || D < 2 {
        return (0, 0);
    }
    // Grid coordinates: the sample's range in 2^20 steps an axis (of the widest axis), so
    // that a box's column at a level is its coordinate shifted right by the level.
    let origin: [f64; D] = std::array::from_fn(|a| lo[a].iter().fold(f64::INFINITY, |m, &x| m.min(x as f64)));
    let top: [f64; D] =
        std::array::from_fn(|a| hi[a].iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x as f64)));
    let span = (0..D).map(|a| top[a] - origin[a]).fold(0.0, f64::max);
    let scale = if span > 0.0 && span.is_finite() { (1u64 << 20) as f64 / span } else { 0.0 };
    let q = |v: f32, a: usize| ((v as f64 - origin[a]) * scale).clamp(0.0, (1u64 << 21) as f64) as u32;
    let qlo: Vec<[u32; D]> = (0..s).map(|i| std::array::from_fn(|a| q(lo[a][i], a))).collect();
    let qhi: Vec<[u32; D]> = (0..s).map(|i| std::array::from_fn(|a| q(hi[a][i], a))).collect();
    // A box's level on the column axes: the least whose cell side covers its longest
    // extent there.
    let level: Vec<u32> = (0..s)
        .map(|i| {
            let ext = (0..D).filter(|&a| a != k).map(|a| qhi[i][a] - qlo[i][a]).max().unwrap_or(0);
            u32::BITS - ext.leading_zeros()
        })
        .collect();
    let mut order: Vec<u32> = (0..s as u32).collect();
    order.sort_unstable_by(|&a, &b| lo[k][a as usize].total_cmp(&lo[k][b as usize]));
    let (mut tests, mut pairs) = (0usize, 0usize);
    for (x, &i) in order.iter().enumerate() {
        let i = i as usize;
        for &j in &order[x + 1..] {
            let j = j as usize;
            if lo[k][j] > hi[k][i] {
                break;
            }
            let l = level[i].max(level[j]);
            let mut shared = true;
            for a in (0..D).filter(|&a| a != k) {
                shared &= (qlo[i][a] >> l <= qhi[j][a] >> l) & (qlo[j][a] >> l <= qhi[i][a] >> l);
            }
            tests += shared as usize;
            pairs += (0..D).all(|a| lo[a][i] <= hi[a][j] && lo[a][j] <= hi[a][i]) as usize;
        }
    }
    (tests, pairs)
}
