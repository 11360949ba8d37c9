//! Inputs that push a broadphase towards quadratic work while it finds few pairs: bounds
//! far from the scene, boxes parked far away, long thin boxes in a staircase, sticks. Every
//! case is checked against brute force at small sizes and for the same bytes at any thread
//! count; bounds also for the same work as without them.

use broadphase::internals::cliffs::{parked, staircase, sticks};
use broadphase::internals::scene::uniform;
use broadphase::{brute_force_pairs, find_pairs_with, Aabb, Broadphase, Config, Method};

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
    for share in [0.1, 1.0, 1.67, 3.3, 5.0, 10.0, 50.0] {
        for at in [1e5, 1e7, 1e9, 1e30] {
            let boxes = parked::<D>(3_000, share, at, 5);
            let want = brute_force_pairs(&boxes, &Config::default()).unwrap();
            for method in Method::ALL {
                let config = Config::default().with_method(method);
                let got = find_pairs_with(&boxes, &config).unwrap();
                assert!(got == want, "D = {D}, {share}% at {at}, {method:?}");
            }
        }
    }
    let boxes = parked::<D>(3_000, 3.3, 1e9, 3);
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
        let sticks = sticks::<D>(n, n as u64);
        for method in Method::ALL {
            let got = find_pairs_with(&sticks, &Config::default().with_method(method)).unwrap();
            assert!(
                got == brute_force_pairs(&sticks, &Config::default()).unwrap(),
                "sticks, D = {D}, n = {n}"
            );
        }
        let want = brute_force_pairs(&boxes, &Config::default()).unwrap();
        for method in Method::ALL {
            let got = find_pairs_with(&boxes, &Config::default().with_method(method)).unwrap();
            assert!(got == want, "D = {D}, n = {n}, {method:?}");
        }
    }
    same_on_every_pool("staircase", &staircase::<D>(4_000), &Config::default());
    same_on_every_pool(
        "staircase, tree",
        &staircase::<D>(4_000),
        &Config::default().with_method(Method::Tree),
    );
    same_on_every_pool("sticks, tree", &sticks::<D>(4_000, 9), &Config::default().with_method(Method::Tree));
}

#[test]
fn staircase_is_exact() {
    staircase_is_exact_in::<2>();
    staircase_is_exact_in::<3>();
}

/// Parked boxes cost what their own pairs cost: the candidates a parked scene's call
/// tests stay within 1.5x those of the same scene before any box was parked (plus one a
/// box), found by the method `Auto` took for the parked scene, at every share and
/// distance. Before strays were set apart, the grid stretched to the parked boxes and
/// nearly every pair was a candidate.
fn parked_boxes_cost_their_own_in<const D: usize>() {
    let n = 20_000;
    for share in [0.1, 1.0, 3.3, 10.0, 50.0] {
        for at in [1e5, 1e9, 1e30] {
            let mut bp = Broadphase::new(Config::default()).unwrap();
            let mut out = Vec::new();
            bp.find_pairs(&parked::<D>(n, share, at, 5), &mut out).unwrap();
            let (got, method) = (bp.stats().candidates, bp.stats().method);
            let plain = run(&uniform::<D>(n, 5), Config::default().with_method(method)).2;
            assert!(
                got as f64 <= 1.5 * plain as f64 + n as f64,
                "D = {D}, {share}% at {at}: {got} candidates, {plain} without parked boxes ({method:?})"
            );
        }
    }
}

#[test]
fn parked_boxes_cost_their_own() {
    parked_boxes_cost_their_own_in::<2>();
    parked_boxes_cost_their_own_in::<3>();
}

/// A tenth of the boxes parked far away, every tenth id (an object pool), and the tree:
/// its stray sample once took every fortieth box, all parked ones, saw no strays, and
/// coded the rest into one Morton cell, so the tree held them in input order and the
/// all-pairs search tested nearly every pair (5e7 tests at 10k boxes). Now a box's tests
/// stay a small multiple of its pairs.
fn tree_sees_boxes_parked_every_tenth_id_in<const D: usize>() {
    let boxes = parked::<D>(10_000, 10.0, 1e9, 3);
    let (pairs, _, tested) = run(&boxes, Config::default().with_method(Method::Tree));
    assert_eq!(pairs, brute_force_pairs(&boxes, &Config::default()).unwrap(), "D = {D}");
    assert!(tested < 64 * boxes.len(), "D = {D}: {tested} boxes tested for {} pairs", pairs.len());
}

#[test]
fn tree_sees_boxes_parked_every_tenth_id() {
    tree_sees_boxes_parked_every_tenth_id_in::<2>();
    tree_sees_boxes_parked_every_tenth_id_in::<3>();
}

/// A crowd parked far away (a thousand copies of one box) beside a field: the crowd's
/// pairs are found apart, by the whole-scene sweep as by the columns, exactly, and
/// `Stats::candidates` counts the tests made there too (at least one a pair found).
fn a_far_crowd_is_found_apart_in<const D: usize>() {
    let mut boxes = uniform::<D>(3_000, 11);
    boxes.extend(std::iter::repeat_n(Aabb::new([1e9; D], [1e9 + 64.0; D]), 1_000));
    let want = brute_force_pairs(&boxes, &Config::default()).unwrap();
    assert!(want.len() > 499_500, "D = {D}: {} pairs", want.len());
    for method in [Method::Auto, Method::Sweep, Method::Columns] {
        let (got, _, candidates) = run(&boxes, Config::default().with_method(method));
        assert!(got == want, "D = {D}, {method:?}: pairs differ");
        assert!(candidates >= got.len(), "D = {D}, {method:?}: {candidates} candidates, {} pairs", got.len());
        same_on_every_pool("a far crowd", &boxes, &Config::default().with_method(method));
    }
}

#[test]
fn a_far_crowd_is_found_apart() {
    a_far_crowd_is_found_apart_in::<2>();
    a_far_crowd_is_found_apart_in::<3>();
}
