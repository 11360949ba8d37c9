//! Scenes shared by the tests that compare pair finders with the brute force: proptest
//! strategies for random boxes (tame, and wild: huge, tiny and signed-zero values) and
//! margins, and seeded structured scenes (clumps, planks, grids, six orders of sizes,
//! duplicates).

use super::{boxed, clumped, mixed_big_small, uniform, Draws, Rng};
use broadphase::Aabb;
use proptest::prelude::*;

/// A coordinate. Tame: small grids (exact touching is common), 0.1 steps, uniform floats.
/// Wild adds huge, tiny and signed-zero values.
fn coord(wild: bool) -> BoxedStrategy<f32> {
    let tame = prop_oneof![
        3 => (-16i32..16).prop_map(|k| k as f32 * 0.5),
        1 => (-30i32..30).prop_map(|k| k as f32 * 0.1),
        3 => -100.0f32..100.0,
    ];
    if wild {
        prop_oneof![
            4 => tame,
            1 => prop::sample::select(vec![
                -1.0e30f32, 1.0e30, 0.0, -0.0, 3.0e38, -3.0e38, f32::MAX, -f32::MAX, 1.0e-30, -1.0e-38,
            ]),
            1 => -1.0e30f32..1.0e30,
        ]
        .boxed()
    } else {
        tame.boxed()
    }
}

/// An extent along one axis.
fn extent(wild: bool) -> BoxedStrategy<f32> {
    let tame = prop_oneof![
        2 => Just(0.0f32),
        3 => (0i32..8).prop_map(|k| k as f32 * 0.5),
        3 => 0.0f32..20.0,
        1 => 0.0f32..200.0,
    ];
    if wild {
        prop_oneof![
            4 => tame,
            1 => prop::sample::select(vec![1.0e-30f32, 1.0e30, 2.0e30, 1.0e38, f32::MAX]),
        ]
        .boxed()
    } else {
        tame.boxed()
    }
}

pub fn aabb<const D: usize>(wild: bool) -> impl Strategy<Value = Aabb<D>> {
    (prop::collection::vec(coord(wild), D), prop::collection::vec(extent(wild), D)).prop_map(|(c, e)| {
        let mut min = [0.0; D];
        let mut size = [0.0; D];
        min.copy_from_slice(&c);
        size.copy_from_slice(&e);
        boxed(min, size) // max clamped to f32::MAX, so always valid
    })
}

pub fn scene<const D: usize>(max_n: usize) -> impl Strategy<Value = Vec<Aabb<D>>> {
    prop_oneof![
        4 => prop::collection::vec(aabb::<D>(false), 0..max_n),
        1 => prop::collection::vec(aabb::<D>(true), 0..max_n),
    ]
}

pub fn margin() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => Just(0.0f32),
        1 => Just(0.25f32),
        1 => Just(-0.25f32),
        1 => Just(0.5f32),
        1 => Just(1.0e-6f32),
        1 => Just(-1.0e-6f32),
        2 => -3.0f32..3.0,
    ]
}

/// Seeded structured scenes (clumps, planks, grids, six orders of sizes, duplicates).
pub fn structured<const D: usize>(seed: u64, kind: u8, n: usize) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(seed);
    let side = (n.max(1) as f32).powf(1.0 / D as f32);
    match kind {
        0 => uniform(&mut rng, n, side * 2.0, 2.0),
        1 => clumped(&mut rng, n, 1 + (seed % 5) as usize, 100.0, 3.0, 1.0),
        2 => mixed_big_small(&mut rng, n, 100.0),
        3 => (0..n)
            .map(|_| {
                let long = rng.below(D);
                let mut min = [0.0; D];
                let mut size = [0.0; D];
                for k in 0..D {
                    min[k] = rng.range(0.0, 100.0);
                    size[k] = if k == long { rng.range(20.0, 100.0) } else { rng.range(0.0, 0.5) };
                }
                boxed(min, size)
            })
            .collect(),
        4 => (0..n)
            .map(|_| {
                let mut min = [0.0; D];
                let mut size = [0.0; D];
                for k in 0..D {
                    min[k] = rng.below(2 * side as usize + 2) as f32;
                    size[k] = rng.below(3) as f32;
                }
                boxed(min, size)
            })
            .collect(),
        5 => (0..n)
            .map(|_| {
                let mut min = [0.0; D];
                let mut size = [0.0; D];
                for k in 0..D {
                    min[k] = rng.range(0.0, 1000.0);
                    size[k] = rng.log_uniform(-3.0, 2.5);
                }
                boxed(min, size)
            })
            .collect(),
        _ => {
            let base = uniform::<D>(&mut rng, (n / 3).max(1), side, 1.5);
            let mut v: Vec<Aabb<D>> = (0..n).map(|i| base[i % base.len()]).collect();
            rng.shuffle(&mut v);
            v
        }
    }
}
