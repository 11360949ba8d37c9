//! `Method::Quadtree` against `brute_force_pairs`: random and adversarial scenes in 1D, 2D
//! and 3D (touching, identical, zero size, huge, parked far away, long sticks, sizes over
//! six orders of magnitude, boxes on every level's midlines), margins positive, zero and
//! negative; `max_pairs` errors that leave the finder usable; the same bytes for any
//! thread count.

use crate::common::{touching, Draws, Rng};
use broadphase::internals::{cliffs, scene};
use broadphase::{brute_force_pairs, find_pairs_with, Aabb, Broadphase, Config, Error, Method};
use proptest::prelude::*;

fn quadtree<const D: usize>(margin: f32) -> Config<D> {
    Config::default().with_method(Method::Quadtree).with_margin(margin)
}

/// The quadtree's pairs equal the brute force's, with a fresh finder and with one that has
/// served another scene before (its kept buffers reused).
fn agree<const D: usize>(name: &str, boxes: &[Aabb<D>], margin: f32) {
    let config = quadtree::<D>(margin);
    let want = brute_force_pairs(boxes, &config).unwrap();
    let got = find_pairs_with(boxes, &config).unwrap();
    assert!(got == want, "{name}, D = {D}, margin {margin}: {} pairs, want {}", got.len(), want.len());
    let mut bp = Broadphase::new(config).unwrap();
    let mut out = Vec::new();
    bp.find_pairs(&scene::uniform::<D>(500, 1), &mut out).unwrap();
    bp.find_pairs(boxes, &mut out).unwrap();
    assert!(out == want, "{name}, D = {D}, margin {margin}: a reused finder differs");
}

// ---------------------------------------------------------------------------------------------
// Scenes
// ---------------------------------------------------------------------------------------------

/// Cubes of sides log-uniform over six orders of magnitude, some of them points.
fn six_orders<const D: usize>(rng: &mut Rng, n: usize) -> Vec<Aabb<D>> {
    (0..n)
        .map(|_| {
            let min: [f32; D] = std::array::from_fn(|_| rng.range(0.0, 1000.0));
            let side = if rng.chance(0.05) { 0.0 } else { rng.log_uniform(-3.0, 3.0) };
            Aabb::new(min, std::array::from_fn(|k| min[k] + side))
        })
        .collect()
}

/// Thin boxes straddling the midlines of a power-of-two grid at every level, beside small
/// boxes: each lands in the coarsest node its midline belongs to.
fn on_midlines<const D: usize>(rng: &mut Rng, n: usize) -> Vec<Aabb<D>> {
    let w = 1024.0f32;
    (0..n)
        .map(|i| {
            let mut min: [f32; D] = std::array::from_fn(|_| rng.range(0.0, w - 1.0));
            let mut max: [f32; D] = std::array::from_fn(|k| min[k] + rng.range(0.0, 1.0));
            if i % 2 == 0 {
                // Across the midline of a cell of level `l` on one axis.
                let l = rng.below(10) as i32;
                let step = w / 2f32.powi(l);
                let k = rng.below(D);
                let mid = step * (rng.below(1 << l) as f32 + 0.5);
                min[k] = mid - rng.range(0.0, 0.5);
                max[k] = mid + rng.range(0.0, 0.5);
            }
            Aabb::new(min, max)
        })
        .collect()
}

/// The scene of kind `kind` (0..10) for the property test.
fn scene_of<const D: usize>(kind: u8, n: usize, seed: u64) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(seed);
    match kind {
        0 => scene::uniform(n, seed),
        1 => scene::varied(n, seed),
        2 => scene::mixed(n, seed),
        3 => touching(&mut rng, n, 12),
        4 => six_orders(&mut rng, n),
        5 => on_midlines(&mut rng, n),
        6 => cliffs::parked(n.max(2), 10.0, 1e9, seed),
        7 => cliffs::sticks(n, seed),
        8 => scene::clustered(n, seed),
        _ => {
            // Points, identical boxes and a few huge ones.
            let mut v: Vec<Aabb<D>> = (0..n)
                .map(|_| {
                    let p: [f32; D] = std::array::from_fn(|_| rng.below(5) as f32);
                    Aabb::new(p, p)
                })
                .collect();
            v.extend(std::iter::repeat_n(Aabb::new([1.0; D], [2.0; D]), n / 4));
            v.push(Aabb::new([-f32::MAX; D], [f32::MAX; D]));
            v.push(Aabb::new([f32::MAX; D], [f32::MAX; D]));
            v
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn prop_quadtree_matches_brute_force(
        kind in 0u8..10,
        n in 0usize..400,
        seed in any::<u64>(),
        margin in prop::sample::select(vec![0.0f32, 0.3, -0.2, 2.0]),
    ) {
        agree::<1>("proptest", &scene_of::<1>(kind, n, seed), margin);
        agree::<2>("proptest", &scene_of::<2>(kind, n, seed), margin);
        agree::<3>("proptest", &scene_of::<3>(kind, n, seed), margin);
    }
}

// ---------------------------------------------------------------------------------------------
// Named scenes, big enough for sorted, cut and long-box records
// ---------------------------------------------------------------------------------------------

fn adversarial_in<const D: usize>() {
    let mut rng = Rng::new(40 + D as u64);
    let named: Vec<(&str, Vec<Aabb<D>>)> = vec![
        ("empty", Vec::new()),
        ("one_box", vec![Aabb::new([0.0; D], [1.0; D])]),
        ("all_identical", vec![Aabb::new([3.0; D], [4.0; D]); 300]),
        ("zero_extent", (0..800).map(|i| Aabb::new([(i % 7) as f32; D], [(i % 7) as f32; D])).collect()),
        ("touching", touching(&mut rng, 3000, 40)),
        ("six_orders", six_orders(&mut rng, 3000)),
        ("on_midlines", on_midlines(&mut rng, 3000)),
        ("mixed", scene::mixed(3000, 2)),
        ("tiles", scene::tiles(3000, 2)),
        ("levels", scene::levels(3000, 2)),
        ("parked_1e9", cliffs::parked(3000, 5.0, 1e9, 3)),
        ("parked_near_max", cliffs::parked(3000, 5.0, 1e38, 3)),
        ("sticks", cliffs::sticks(3000, 4)),
        ("staircase", cliffs::staircase(1000)),
        ("all_overlapping", scene::all_overlapping(400, 5)),
        ("huge", {
            let mut v = scene::uniform::<D>(2000, 6);
            v.push(Aabb::new([-f32::MAX; D], [f32::MAX; D]));
            v.push(Aabb::new([-1e30; D], [1e30; D]));
            v.push(Aabb::new([f32::MAX; D], [f32::MAX; D]));
            v
        }),
    ];
    for (name, boxes) in &named {
        for margin in [0.0, 0.25, -0.1] {
            agree(name, boxes, margin);
        }
    }
}

#[test]
fn adversarial_scenes_match_brute_force() {
    adversarial_in::<1>();
    adversarial_in::<2>();
    adversarial_in::<3>();
}

/// A negative margin that turns every box inside out leaves nothing to pair; one that
/// turns some leaves the rest.
#[test]
fn inverted_boxes_pair_with_nothing() {
    let boxes = scene::varied::<3>(2000, 9);
    agree("varied, half inverted", &boxes, -0.5);
    let unit = vec![Aabb::new([0.0; 2], [1.0; 2]); 100];
    assert_eq!(find_pairs_with(&unit, &quadtree::<2>(-0.6)).unwrap(), Vec::<[u32; 2]>::new());
}

// ---------------------------------------------------------------------------------------------
// Budget and threads
// ---------------------------------------------------------------------------------------------

#[test]
fn max_pairs_errors_leave_the_finder_usable() {
    let crowd = vec![Aabb::new([0.0; 3], [1.0; 3]); 200];
    let sparse = scene::uniform::<3>(3000, 2);
    let want = brute_force_pairs(&sparse, &Config::default()).unwrap();
    let limit = want.len();
    let mut bp = Broadphase::new(quadtree::<3>(0.0).with_max_pairs(Some(limit))).unwrap();
    let mut out = vec![[7, 8]];
    for _ in 0..2 {
        assert_eq!(bp.find_pairs(&crowd, &mut out), Err(Error::TooManyPairs { limit }));
        assert!(out.is_empty());
        bp.find_pairs(&sparse, &mut out).unwrap();
        assert!(out == want);
    }
    // One pair over the bound is an error too.
    let mut tight = Broadphase::new(quadtree::<3>(0.0).with_max_pairs(Some(limit - 1))).unwrap();
    assert_eq!(tight.find_pairs(&sparse, &mut out), Err(Error::TooManyPairs { limit: limit - 1 }));
}

fn same_on_every_pool<const D: usize>(name: &str, boxes: &[Aabb<D>], margin: f32) {
    let config = quadtree::<D>(margin);
    let want = brute_force_pairs(boxes, &config).unwrap();
    for t in [1, 2, 3, 4, 7, 16] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap();
        let got = pool.install(|| find_pairs_with(boxes, &config).unwrap());
        assert!(got == want, "{name}, D = {D}: {t} threads");
    }
}

#[test]
fn the_same_bytes_for_any_thread_count() {
    same_on_every_pool("varied", &scene::varied::<3>(6000, 1), 0.1);
    same_on_every_pool("mixed", &scene::mixed::<2>(8000, 1), 0.0);
    same_on_every_pool("parked", &cliffs::parked::<3>(5000, 3.3, 1e9, 2), 0.0);
    same_on_every_pool("clustered", &scene::clustered::<1>(5000, 3), -0.05);
}
