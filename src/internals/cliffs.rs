//! Scenes that push a broadphase off a cliff: boxes parked far away, long thin boxes in a
//! staircase, long sticks crossing each other. Each is an ordinary input that a game or a
//! map produces; `benches/pairs.rs` runs them by name (`BP_SCENES=cliffs` for all).
//!
//! - `parked:P:X`: `uniform` with `P` percent of the boxes (every `round(100 / P)`-th)
//!   moved to `X` and beyond on every axis, unit boxes spaced `max(1e6, X / 1000)` apart
//!   along the first axis so that they touch nothing (the object-pool trick); closer near
//!   `f32::MAX`, so that every box stays finite.
//!   `parked:P:none` is the same scene with those boxes left out: the baseline a parked
//!   scene is measured against.
//! - `staircase`: box `k` a thin step `[k, k + 0.5]` on axis `k % D` and a plank
//!   `[k - 0.4, 1e6]` on the others: no two overlap, yet every pair overlaps on all axes
//!   but one, so sweeps and columns test almost every pair.
//! - `sticks`: unit-density sticks, an eighth of the world long and 0.05 thick, each along
//!   a random axis: few pairs, long boxes across every column.

use super::scene::{uniform, world_side, Rng};
use crate::Aabb;

/// The cliff scenes `BP_SCENES=cliffs` runs: parked shares and distances, the staircase,
/// the sticks.
pub fn names() -> Vec<String> {
    let mut v = Vec::new();
    for p in ["0.1", "1", "1.67", "3.3", "5", "10", "50"] {
        for x in ["1e5", "1e7", "1e9", "1e30"] {
            v.push(format!("parked:{p}:{x}"));
        }
    }
    v.push("staircase".into());
    v.push("sticks".into());
    v
}

/// The cliff scene called `name` (see the module docs), or `None`.
pub fn by_name<const D: usize>(name: &str, n: usize, seed: u64) -> Option<Vec<Aabb<D>>> {
    match name {
        "staircase" => Some(staircase(n)),
        "sticks" => Some(sticks(n, seed)),
        _ => {
            let mut it = name.strip_prefix("parked:")?.split(':');
            let share: f64 = it.next()?.parse().ok()?;
            let at = it.next()?;
            if !(share > 0.0 && share <= 100.0) || it.next().is_some() {
                return None;
            }
            if at == "none" {
                return Some(unparked(n, share, seed));
            }
            let at: f32 = at.parse().ok()?;
            at.is_finite().then(|| parked(n, share, at, seed))
        }
    }
}

/// `parked(n, share, ..)` without its parked boxes: the boxes it leaves in the bulk.
pub fn unparked<const D: usize>(n: usize, share: f64, seed: u64) -> Vec<Aabb<D>> {
    let every = ((100.0 / share).round() as usize).max(1);
    uniform::<D>(n, seed).into_iter().enumerate().filter(|(i, _)| i % every != 0).map(|(_, b)| b).collect()
}

/// `uniform(n)` with `share` percent of the boxes parked at `at` and beyond (module docs).
pub fn parked<const D: usize>(n: usize, share: f64, at: f32, seed: u64) -> Vec<Aabb<D>> {
    let every = ((100.0 / share).round() as usize).max(1);
    // Closer than `max(1e6, at / 1000)` where the last box would pass `f32::MAX`.
    let room = (f64::from(f32::MAX) - f64::from(at)) / (n.div_ceil(every) + 1) as f64;
    let gap = (at * 1e-3).max(1e6).min(room as f32);
    let mut boxes = uniform::<D>(n, seed);
    for (k, b) in boxes.iter_mut().step_by(every).enumerate() {
        let mut min = [at; D];
        min[0] = at + k as f32 * gap;
        *b = Aabb::new(min, min.map(|x| x + 1.0));
    }
    boxes
}

/// Long thin boxes in a staircase (module docs).
pub fn staircase<const D: usize>(n: usize) -> Vec<Aabb<D>> {
    (0..n)
        .map(|k| {
            let kf = k as f32;
            let mut min = [kf - 0.4; D];
            let mut max = [1.0e6; D];
            min[k % D] = kf;
            max[k % D] = kf + 0.5;
            Aabb::new(min, max)
        })
        .collect()
}

/// Sticks along random axes (module docs).
pub fn sticks<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(seed);
    let w = world_side::<D>(n) as f32;
    (0..n)
        .map(|_| {
            let axis = rng.below(D);
            let mut side = [0.05f32; D];
            side[axis] = w / 8.0;
            let min: [f32; D] = std::array::from_fn(|k| rng.next_f32() * (w - side[k]).max(0.0));
            Aabb::new(min, std::array::from_fn(|k| min[k] + side[k]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parked near `f32::MAX`, every box stays finite and valid, however many are parked.
    #[test]
    fn parked_near_the_largest_float_stays_finite() {
        for n in [1, 200, 2861, 20_000] {
            for at in [1e9, 1e30, 3e38, 3.4e38] {
                let boxes = parked::<3>(n, 5.0, at, 7);
                assert!(boxes.iter().all(Aabb::is_valid), "n {n}, at {at}");
            }
        }
    }
}
