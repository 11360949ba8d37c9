//! Inputs that once made the pipeline's cost depend on where a few boxes sit or on the
//! bounds a user gave: bounds far from the scene, boxes parked far away, long thin boxes
//! in a staircase. Every case is checked against brute force at small sizes, for the same
//! bytes at any thread count, and (for bounds) for the same work as without bounds.

use broadphase::internals::scene::Rng;
use broadphase::{brute_force_pairs, find_pairs_with, Aabb, Broadphase, Config, Method};

/// `n` boxes of sides 0.5-1.5 uniform in a cube (or square) holding about one a unit volume.
fn uniform<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let mut r = Rng::new(seed);
    let side = (n as f32).powf(1.0 / D as f32);
    (0..n)
        .map(|_| {
            let p: [f32; D] = std::array::from_fn(|_| r.next_f32() * side);
            let e = 0.5 + r.next_f32();
            Aabb::new(p, p.map(|x| x + e))
        })
        .collect()
}

/// `uniform`, with every `every`-th box moved to `at` and beyond, 1e-3 `at` apart along the
/// first axis (the object-pool trick: pooled objects parked far away, touching nothing).
fn parked<const D: usize>(n: usize, every: usize, at: f32, seed: u64) -> Vec<Aabb<D>> {
    let mut boxes = uniform::<D>(n, seed);
    for (k, b) in boxes.iter_mut().enumerate().filter(|(i, _)| i % every == 0) {
        let mut p = [at; D];
        p[0] = at + k as f32 * (at * 1e-3).max(2.0);
        *b = Aabb::new(p, p.map(|x| x + 1.0));
    }
    boxes
}

/// Long thin boxes in a staircase: box `k` a thin step at `k` on one axis and a long plank
/// on the other(s), alternating; no two overlap.
fn staircase<const D: usize>(n: usize) -> Vec<Aabb<D>> {
    (0..n)
        .map(|k| {
            let kf = k as f32;
            let (s, l) = ([kf, kf + 0.5], [kf - 0.4, 1.0e6]);
            let axis = k % D;
            let mut min = [0.0; D];
            let mut max = [0.0; D];
            for a in 0..D {
                let (lo, hi) = if a == axis { (s[0], s[1]) } else { (l[0], l[1]) };
                min[a] = lo;
                max[a] = hi;
            }
            Aabb::new(min, max)
        })
        .collect()
}

/// Pairs and work (entries, candidates) of one call.
fn run<const D: usize>(boxes: &[Aabb<D>], config: Config<D>) -> (Vec<[u32; 2]>, usize, usize) {
    let mut bp = Broadphase::new(config).unwrap();
    let mut out = Vec::new();
    bp.find_pairs(boxes, &mut out).unwrap();
    (out, bp.stats().entries, bp.stats().candidates)
}

/// Same bytes on pools of 1, 2, 3, 4, 7 and 16 threads.
fn same_on_every_pool<const D: usize>(name: &str, boxes: &[Aabb<D>], config: &Config<D>) {
    let mut first: Option<Vec<[u32; 2]>> = None;
    for t in [1, 2, 3, 4, 7, 16] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap();
        let got = pool.install(|| find_pairs_with(boxes, config).unwrap());
        match &first {
            None => first = Some(got),
            Some(f) => assert!(*f == got, "{name}: {t} threads differ from 1"),
        }
    }
}

fn bounds_are_a_hint_in<const D: usize>() {
    let boxes = uniform::<D>(3_000, 7 + D as u64);
    let want = brute_force_pairs(&boxes, &Config::default()).unwrap();
    let plain = run(&boxes, Config::default());
    assert_eq!(plain.0, want, "D = {D}, no bounds");
    let bounds = [
        Aabb::new([-1e9; D], [1e9; D]),
        Aabb::new([f32::MIN; D], [f32::MAX; D]),
        Aabb::new([0.0; D], [0.0; D]),
        Aabb::new([1e6; D], [1e6 + 10.0; D]),
    ];
    for b in bounds {
        let got = run(&boxes, Config::default().with_bounds(Some(b)).with_method(Method::Columns));
        let columns = run(&boxes, Config::default().with_method(Method::Columns));
        assert_eq!(got, columns, "D = {D}, bounds {b:?}: same pairs and the same work as without");
        let got = run(&boxes, Config::default().with_bounds(Some(b)));
        assert_eq!(got, plain, "D = {D}, bounds {b:?}, Auto");
    }
}

#[test]
fn bounds_are_a_hint() {
    bounds_are_a_hint_in::<2>();
    bounds_are_a_hint_in::<3>();
}

fn parked_boxes_are_exact_in<const D: usize>() {
    for every in [1000, 60, 30, 20, 10, 2] {
        for at in [1e5, 1e7, 1e9, 1e30] {
            let boxes = parked::<D>(3_000, every, at, every as u64);
            let want = brute_force_pairs(&boxes, &Config::default()).unwrap();
            for method in [Method::Auto, Method::Columns, Method::Sweep] {
                let config = Config::default().with_method(method);
                let got = find_pairs_with(&boxes, &config).unwrap();
                assert!(got == want, "D = {D}, every {every} at {at}, {method:?}");
            }
        }
    }
    let boxes = parked::<D>(3_000, 30, 1e9, 3);
    same_on_every_pool("parked", &boxes, &Config::default());
}

#[test]
fn parked_boxes_are_exact() {
    parked_boxes_are_exact_in::<2>();
    parked_boxes_are_exact_in::<3>();
}

fn staircase_is_exact_in<const D: usize>() {
    for n in [10, 1_000, 4_000] {
        let boxes = staircase::<D>(n);
        let want = brute_force_pairs(&boxes, &Config::default()).unwrap();
        for method in [Method::Auto, Method::Columns, Method::Sweep] {
            let got = find_pairs_with(&boxes, &Config::default().with_method(method)).unwrap();
            assert!(got == want, "D = {D}, n = {n}, {method:?}");
        }
    }
    same_on_every_pool("staircase", &staircase::<D>(4_000), &Config::default());
}

#[test]
fn staircase_is_exact() {
    staircase_is_exact_in::<2>();
    staircase_is_exact_in::<3>();
}
