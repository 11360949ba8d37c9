//! Input validation and error reporting: invalid boxes (first offending index, right
//! problem), invalid configs, trivial inputs, robustness of a `Broadphase` after an error, and
//! a no-panic property over arbitrary f32 bit patterns.

use crate::common;

use broadphase::{
    brute_force_pairs, find_pairs, find_pairs_with, Aabb, BoxProblem, Broadphase, Config, Error, Refine,
};
use common::Rng;
use common::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// An entry point's name and what it returned.
type Outcome = (&'static str, Result<Vec<[u32; 2]>, Error>);

/// Every entry point, on the same input; they must all agree.
fn all_entry_points<const D: usize>(boxes: &[Aabb<D>], config: &Config<D>) -> Vec<Outcome> {
    let mut v = vec![
        ("find_pairs_with", find_pairs_with(boxes, config)),
        ("brute_force_pairs", brute_force_pairs(boxes, config)),
    ];
    if *config == Config::default() {
        v.push(("find_pairs", find_pairs(boxes)));
    }
    match Broadphase::new(*config) {
        Ok(mut bp) => {
            let mut out = vec![[1, 2]];
            v.push(("Broadphase::find_pairs", bp.find_pairs(boxes, &mut out).map(|()| out)));
        }
        Err(e) => v.push(("Broadphase::new", Err(e))),
    }
    v
}

fn expect_err<const D: usize>(ctx: &str, boxes: &[Aabb<D>], config: &Config<D>, want: &Error) {
    for (api, r) in all_entry_points(boxes, config) {
        match r {
            Err(e) if e == *want => {}
            Err(e) => panic!("{ctx}: {api} returned {e:?}, expected {want:?} (n = {}, D = {D})", boxes.len()),
            Ok(p) => panic!(
                "{ctx}: {api} returned Ok({} pairs), expected {want:?} (n = {}, D = {D})",
                p.len(),
                boxes.len()
            ),
        }
    }
}

fn expect_ok<const D: usize>(ctx: &str, boxes: &[Aabb<D>], config: &Config<D>) -> Vec<[u32; 2]> {
    let want = brute_force_pairs(boxes, config).unwrap_or_else(|e| panic!("{ctx}: brute_force_pairs: {e:?}"));
    for (api, r) in all_entry_points(boxes, config) {
        match r {
            Ok(p) => compare(&format!("{ctx}: {api}"), boxes, config.margin, &p, &want)
                .unwrap_or_else(|e| panic!("{e}")),
            Err(e) => panic!("{ctx}: {api} returned {e:?}, expected Ok (n = {}, D = {D})", boxes.len()),
        }
    }
    want
}

fn valid_scene<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(seed);
    uniform(&mut rng, n, 10.0, 2.0)
}

fn configs<const D: usize>() -> Vec<Config<D>> {
    vec![
        Config::default(),
        cfg(4096, 1, Refine::Rdc),
        Config::default().with_margin(-0.5).with_bounds(Some(Aabb::new([0.0; D], [1.0; D]))),
    ]
}

// =============================================================================================
// Invalid boxes
// =============================================================================================

/// (label, side is max?, value, expected problem). An infinite coordinate is reported as
/// `Infinite` even where it also makes min > max (+inf in min, -inf in max).
fn bad_values(axis: usize) -> Vec<(&'static str, bool, f32, BoxProblem)> {
    let neg_nan = f32::from_bits(0xFFC0_0000);
    let signalling_nan = f32::from_bits(0x7F80_0001);
    vec![
        ("NaN in min", false, f32::NAN, BoxProblem::NaN),
        ("NaN in max", true, f32::NAN, BoxProblem::NaN),
        ("-NaN in min", false, neg_nan, BoxProblem::NaN),
        ("signalling NaN in max", true, signalling_nan, BoxProblem::NaN),
        ("+inf in max", true, f32::INFINITY, BoxProblem::Infinite),
        ("-inf in min", false, f32::NEG_INFINITY, BoxProblem::Infinite),
        ("+inf in min", false, f32::INFINITY, BoxProblem::Infinite),
        ("-inf in max", true, f32::NEG_INFINITY, BoxProblem::Infinite),
        (
            "min = max + 1",
            false,
            f32::NAN, /* placeholder, see below */
            BoxProblem::MinGreaterThanMax { axis },
        ),
        ("min one ulp above max", false, f32::NAN, BoxProblem::MinGreaterThanMax { axis }),
    ]
}

fn spoil<const D: usize>(b: &mut Aabb<D>, axis: usize, label: &str, on_max: bool, value: f32) {
    match label {
        "min = max + 1" => b.min[axis] = b.max[axis] + 1.0,
        "min one ulp above max" => b.min[axis] = next_up(b.max[axis]),
        _ if on_max => b.max[axis] = value,
        _ => b.min[axis] = value,
    }
}

fn invalid_boxes_for<const D: usize>() {
    let n = 50;
    let base = valid_scene::<D>(n, 0xE0 + D as u64);
    for pos in [0, 1, 25, n - 1] {
        for axis in 0..D {
            for (label, on_max, value, problem) in bad_values(axis) {
                let mut boxes = base.clone();
                spoil(&mut boxes[pos], axis, label, on_max, value);
                let ctx = format!("{label} on axis {axis} of box {pos}: {:?}", boxes[pos]);
                for c in configs::<D>() {
                    expect_err(&ctx, &boxes, &c, &Error::InvalidBox { index: pos, problem });
                }
            }
        }
    }
    // A single box, invalid, is still an error (one box is Ok(empty) only when valid).
    let mut one = [Aabb::new([0.0; D], [1.0; D])];
    one[0].max[D - 1] = f32::NAN;
    expect_err(
        "single NaN box",
        &one,
        &Config::default(),
        &Error::InvalidBox { index: 0, problem: BoxProblem::NaN },
    );
    let one = [Aabb::new([1.0; D], [0.0; D])];
    expect_err(
        "single inverted box",
        &one,
        &Config::default(),
        &Error::InvalidBox { index: 0, problem: BoxProblem::MinGreaterThanMax { axis: 0 } },
    );
}

#[test]
fn invalid_boxes_name_index_and_problem() {
    invalid_boxes_for::<1>();
    invalid_boxes_for::<2>();
    invalid_boxes_for::<3>();
}

/// Inverted on a later axis only: the axis reported is that one.
#[test]
fn inverted_axis_is_reported() {
    fn go<const D: usize>() {
        for axis in 0..D {
            let mut boxes = vec![Aabb::new([0.0; D], [1.0; D]); 5];
            boxes[3].min[axis] = 2.0;
            expect_err(
                &format!("inverted on axis {axis} only"),
                &boxes,
                &Config::default(),
                &Error::InvalidBox { index: 3, problem: BoxProblem::MinGreaterThanMax { axis } },
            );
        }
    }
    go::<1>();
    go::<2>();
    go::<3>();
}

#[test]
fn two_bad_boxes_first_is_named() {
    fn go<const D: usize>() {
        let n = 60;
        let base = valid_scene::<D>(n, 0xF0 + D as u64);
        let nan = |b: &mut Aabb<D>| b.max[0] = f32::NAN;
        let inf = |b: &mut Aabb<D>| b.min[D - 1] = f32::NEG_INFINITY;
        let inv = |b: &mut Aabb<D>| b.min[D - 1] = b.max[D - 1] + 3.0;
        type Spoil<const D: usize> = (&'static str, fn(&mut Aabb<D>), BoxProblem);
        let spoils: [Spoil<D>; 3] = [
            ("NaN", nan, BoxProblem::NaN),
            ("-inf", inf, BoxProblem::Infinite),
            ("inverted", inv, BoxProblem::MinGreaterThanMax { axis: D - 1 }),
        ];
        for (first, second) in [(3, 7), (0, n - 1), (10, 11), (0, 1), (58, 59)] {
            for (la, fa, pa) in spoils {
                for (lb, fb, _) in spoils {
                    let mut boxes = base.clone();
                    fa(&mut boxes[first]);
                    fb(&mut boxes[second]);
                    let ctx = format!("{la} at {first}, {lb} at {second}");
                    for c in configs::<D>() {
                        expect_err(&ctx, &boxes, &c, &Error::InvalidBox { index: first, problem: pa });
                    }
                }
            }
        }
    }
    go::<1>();
    go::<2>();
    go::<3>();
}

/// Validation may run in parallel; the error must still name the first bad box whatever the
/// thread count, including bad boxes on both sides of chunk boundaries.
#[test]
fn first_bad_index_independent_of_thread_count() {
    let n = 40_000;
    let base = valid_scene::<3>(n, 0xABC);
    let layouts: Vec<Vec<usize>> = vec![
        vec![39_999],
        vec![5000, 17_000, 25_000, 39_999],
        vec![4095, 4096],
        vec![4096, 4095 + 4096],
        vec![8191, 0],
        vec![20_000, 20_001, 30_000],
        vec![1, 39_998],
    ];
    let pools: Vec<(usize, rayon::ThreadPool)> = [1, 2, 3, 7, 16]
        .iter()
        .map(|&t| (t, rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap()))
        .collect();
    for layout in layouts {
        let mut boxes = base.clone();
        for (i, &p) in layout.iter().enumerate() {
            if i % 2 == 0 {
                boxes[p].min[1] = f32::NAN;
            } else {
                boxes[p].max[2] = boxes[p].min[2] - 1.0;
            }
        }
        let first = *layout.iter().min().unwrap();
        let problem = if layout.iter().position(|&p| p == first).unwrap() % 2 == 0 {
            BoxProblem::NaN
        } else {
            BoxProblem::MinGreaterThanMax { axis: 2 }
        };
        let want = Error::InvalidBox { index: first, problem };
        for (t, pool) in &pools {
            pool.install(|| {
                let r = find_pairs(&boxes);
                assert_eq!(r, Err(want.clone()), "bad boxes at {layout:?}, {t} threads (n = {n})");
                let mut bp = Broadphase::new(cfg::<3>(8, 2, Refine::Rdc)).unwrap();
                let mut out = Vec::new();
                let r = bp.find_pairs(&boxes, &mut out);
                assert_eq!(r, Err(want.clone()), "Broadphase: bad boxes at {layout:?}, {t} threads");
            });
        }
    }
}

/// After any error, the same `Broadphase` still gives exact results on good input.
#[test]
fn broadphase_usable_after_error() {
    fn go<const D: usize>() {
        let good_big = valid_scene::<D>(3000, 0x51);
        let good_small = valid_scene::<D>(40, 0x52);
        let mut bad_big = good_big.clone();
        bad_big[2999].max[0] = f32::INFINITY;
        let mut bad_mid = good_big.clone();
        bad_mid[1500].min[D - 1] = f32::NAN;
        let mut bad_first = good_small.clone();
        bad_first[0].min[0] = bad_first[0].max[0] + 1.0;
        let seq: Vec<(&str, &[Aabb<D>], Option<usize>)> = vec![
            ("good big", &good_big, None),
            ("bad last of big", &bad_big, Some(2999)),
            ("good small", &good_small, None),
            ("bad middle of big", &bad_mid, Some(1500)),
            ("good big", &good_big, None),
            ("bad first of small", &bad_first, Some(0)),
            ("good big", &good_big, None),
            ("bad middle of big", &bad_mid, Some(1500)),
            ("good small", &good_small, None),
        ];
        for c in configs::<D>() {
            let mut bp = Broadphase::new(c).unwrap();
            let mut out = Vec::new();
            for (step, (label, boxes, bad)) in seq.iter().enumerate() {
                let ctx = format!("D = {D}, step {step} ({label}, n = {}), {c:?}", boxes.len());
                let r = bp.find_pairs(boxes, &mut out);
                match bad {
                    Some(i) => match r {
                        Err(Error::InvalidBox { index, .. }) if index == *i => {}
                        other => panic!("{ctx}: expected InvalidBox at {i}, got {other:?}"),
                    },
                    None => {
                        r.unwrap_or_else(|e| panic!("{ctx}: {e:?}"));
                        let want = brute_force_pairs(boxes, &c).unwrap();
                        compare(&ctx, boxes, c.margin, &out, &want).unwrap_or_else(|e| panic!("{e}"));
                        assert_eq!(bp.stats().pairs, out.len(), "{ctx}: stats().pairs after recovery");
                    }
                }
            }
        }
    }
    go::<1>();
    go::<2>();
    go::<3>();
}

// =============================================================================================
// Invalid configs
// =============================================================================================

fn bad_configs<const D: usize>() -> Vec<(Config<D>, &'static str)> {
    let d = Config::<D>::default();
    let mut v = vec![
        (d.with_margin(f32::NAN), "margin"),
        (d.with_margin(f32::INFINITY), "margin"),
        (d.with_margin(f32::NEG_INFINITY), "margin"),
        (d.with_max_columns_per_box(0), "max_columns_per_box"),
        (d.with_max_columns_per_box((1 << D) - 1), "max_columns_per_box"),
        (d.with_max_columns_per_box(4097), "max_columns_per_box"),
        (d.with_max_columns_per_box(5000), "max_columns_per_box"),
        (d.with_max_columns_per_box(u32::MAX), "max_columns_per_box"),
        (d.with_crowded_threshold(0), "crowded_threshold"),
    ];
    if D >= 2 {
        v.push((d.with_max_columns_per_box(3), "max_columns_per_box"));
    }
    for axis in 0..D {
        for spoil in 0..5 {
            let mut b = Aabb::new([0.0; D], [10.0; D]);
            match spoil {
                0 => b.min[axis] = f32::NAN,
                1 => b.max[axis] = f32::NAN,
                2 => b.max[axis] = f32::INFINITY,
                3 => b.min[axis] = f32::NEG_INFINITY,
                _ => b.min[axis] = b.max[axis] + 1.0,
            }
            v.push((d.with_bounds(Some(b)), "bounds"));
        }
    }
    v
}

fn invalid_config_for<const D: usize>() {
    let boxes = valid_scene::<D>(30, 0x77);
    for (c, field) in bad_configs::<D>() {
        let ctx = format!("D = {D}, {c:?}");
        match c.validate() {
            Err(Error::InvalidConfig { field: f, reason }) => {
                assert_eq!(f, field, "{ctx}: validate() named the wrong field");
                assert!(!reason.is_empty(), "{ctx}: empty reason");
            }
            other => {
                panic!("{ctx}: validate() returned {other:?}, expected InvalidConfig for {field}")
            }
        }
        match Broadphase::new(c) {
            Err(Error::InvalidConfig { field: f, .. }) => {
                assert_eq!(f, field, "{ctx}: Broadphase::new")
            }
            other => panic!("{ctx}: Broadphase::new returned {other:?}, expected InvalidConfig for {field}"),
        }
        for (api, r) in [
            ("find_pairs_with", find_pairs_with(&boxes, &c)),
            ("brute_force_pairs", brute_force_pairs(&boxes, &c)),
        ] {
            match r {
                Err(Error::InvalidConfig { field: f, .. }) => assert_eq!(f, field, "{ctx}: {api}"),
                other => {
                    panic!("{ctx}: {api} returned {other:?}, expected InvalidConfig for {field}")
                }
            }
        }
    }
}

#[test]
fn invalid_config_fields() {
    invalid_config_for::<1>();
    invalid_config_for::<2>();
    invalid_config_for::<3>();
}

/// A bad config is refused even when there is nothing to do (empty or one-box input).
#[test]
fn invalid_config_rejected_even_for_trivial_input() {
    fn go<const D: usize>() {
        let one = [Aabb::new([0.0; D], [1.0; D])];
        for (c, field) in bad_configs::<D>() {
            for boxes in [&one[..0], &one[..]] {
                match find_pairs_with(boxes, &c) {
                    Err(Error::InvalidConfig { field: f, .. }) => assert_eq!(f, field),
                    other => {
                        panic!("D = {D}, n = {}, {c:?}: got {other:?}, expected InvalidConfig", boxes.len())
                    }
                }
            }
        }
    }
    go::<1>();
    go::<2>();
    go::<3>();
}

/// The edges of every valid range are accepted.
#[test]
fn config_edge_values_accepted() {
    fn go<const D: usize>() {
        let boxes = valid_scene::<D>(200, 0x99);
        let d = Config::<D>::default();
        assert_eq!(d.validate(), Ok(()), "default config must be valid");
        // Only what the contract states: Sap is the default refiner, and `find_pairs` is
        // plain closed overlap (no margin). Tuning defaults are free to change.
        assert_eq!(d.refine, Refine::Sweep);
        assert_eq!(d.margin, 0.0);
        let ok = [
            d.with_max_columns_per_box(1 << D),
            d.with_max_columns_per_box(4096),
            d.with_max_columns_per_box((1 << D) + 1),
            d.with_crowded_threshold(1),
            d.with_crowded_threshold(u32::MAX),
            d.with_margin(f32::MAX),
            d.with_margin(-f32::MAX),
            d.with_margin(-0.0),
            d.with_margin(f32::from_bits(1)),                   // subnormal
            d.with_bounds(Some(Aabb::new([2.0; D], [2.0; D]))), // zero extent
            d.with_bounds(Some(Aabb::new([-f32::MAX; D], [f32::MAX; D]))),
            d.with_refine(Refine::Rdc),
        ];
        for c in ok {
            assert_eq!(c.validate(), Ok(()), "D = {D}: {c:?} should be valid");
            expect_ok(&format!("D = {D}, {c:?}"), &boxes, &c);
        }
    }
    go::<1>();
    go::<2>();
    go::<3>();
}

// =============================================================================================
// Trivial and edge-valued input
// =============================================================================================

#[test]
fn empty_and_single_box_ok() {
    fn go<const D: usize>() {
        for c in configs::<D>() {
            assert_eq!(expect_ok("empty", &[] as &[Aabb<D>], &c), Vec::<[u32; 2]>::new());
            for b in [
                Aabb::new([0.0; D], [1.0; D]),
                Aabb::new([7.0; D], [7.0; D]),
                Aabb::new([-f32::MAX; D], [f32::MAX; D]),
            ] {
                assert_eq!(expect_ok(&format!("single {b:?}"), &[b], &c), Vec::<[u32; 2]>::new());
            }
        }
    }
    go::<1>();
    go::<2>();
    go::<3>();
}

/// Values that are unusual but valid: signed zeros (min 0.0, max -0.0 is NOT inverted),
/// subnormals, +-f32::MAX, points.
#[test]
fn edge_values_are_valid_boxes() {
    fn go<const D: usize>() {
        let sub = f32::from_bits(1);
        let boxes = vec![
            Aabb::new([0.0; D], [-0.0; D]),
            Aabb::new([-0.0; D], [0.0; D]),
            Aabb::new([-0.0; D], [-0.0; D]),
            Aabb::new([-sub; D], [sub; D]),
            Aabb::new([sub; D], [sub; D]),
            Aabb::new([f32::MIN_POSITIVE; D], [f32::MIN_POSITIVE; D]),
            Aabb::new([-f32::MAX; D], [f32::MAX; D]),
            Aabb::new([f32::MAX; D], [f32::MAX; D]),
            Aabb::new([-f32::MAX; D], [-f32::MAX; D]),
            Aabb::new([2.0 * sub; D], [1.0; D]),
        ];
        for c in configs::<D>() {
            expect_ok(&format!("edge values D = {D}"), &boxes, &c);
        }
        let want = expect_ok("edge values, default", &boxes, &Config::default());
        // Boxes 0-4 all contain the origin (or touch it within a subnormal): spot-check a few.
        for p in [[0, 1], [0, 2], [1, 2], [0, 3], [3, 4], [0, 6], [6, 7], [6, 8]] {
            assert!(want.contains(&p), "D = {D}: expected pair {p:?} among {want:?}");
        }
        assert!(!want.contains(&[7, 8]), "D = {D}: +MAX and -MAX points must not overlap");
    }
    go::<1>();
    go::<2>();
    go::<3>();
}

// =============================================================================================
// No panics on arbitrary bits
// =============================================================================================

fn any_f32() -> impl Strategy<Value = f32> {
    any::<u32>().prop_map(f32::from_bits)
}

/// Boxes from arbitrary bits; half of them ordered so that valid boxes are common.
fn wild_box<const D: usize>() -> impl Strategy<Value = Aabb<D>> {
    let raw =
        (prop::collection::vec(any_f32(), D), prop::collection::vec(any_f32(), D)).prop_map(|(a, b)| {
            let mut min = [0.0; D];
            let mut max = [0.0; D];
            min.copy_from_slice(&a);
            max.copy_from_slice(&b);
            Aabb::new(min, max)
        });
    let finite = || any_f32().prop_filter("finite", |x| x.is_finite());
    let ordered =
        (prop::collection::vec(finite(), D), prop::collection::vec(finite(), D)).prop_map(|(a, b)| {
            let mut min = [0.0; D];
            let mut max = [0.0; D];
            for k in 0..D {
                min[k] = a[k].min(b[k]);
                max[k] = a[k].max(b[k]);
            }
            Aabb::new(min, max)
        });
    prop_oneof![1 => raw, 3 => ordered]
}

fn wild_scene<const D: usize>() -> impl Strategy<Value = Vec<Aabb<D>>> {
    prop_oneof![
        // Mostly-valid scenes so that the Ok path is exercised.
        3 => prop::collection::vec(wild_box::<D>().prop_filter("valid", |b| b.is_valid()), 0..60),
        1 => prop::collection::vec(wild_box::<D>(), 0..60),
    ]
}

fn wild_config<const D: usize>() -> impl Strategy<Value = Config<D>> {
    let margin = prop_oneof![2 => Just(0.0f32), 3 => any_f32()];
    let bounds = prop_oneof![2 => Just(None), 1 => wild_box::<D>().prop_map(Some)];
    let cells = prop_oneof![4 => (1u32 << D)..=4096, 1 => any::<u32>()];
    let crowded = prop_oneof![4 => 1u32..100, 1 => Just(0u32), 1 => any::<u32>()];
    let refine = prop_oneof![Just(Refine::Sweep), Just(Refine::Rdc)];
    (margin, bounds, cells, crowded, refine).prop_map(|(margin, bounds, mc, ct, refine)| {
        Config::default()
            .with_margin(margin)
            .with_bounds(bounds)
            .with_max_columns_per_box(mc)
            .with_crowded_threshold(ct)
            .with_refine(refine)
    })
}

/// Independent reading of the contract: the problems a box has (any of them may be named).
fn box_problems<const D: usize>(b: &Aabb<D>) -> Vec<BoxProblem> {
    let mut v = Vec::new();
    let c = b.min.iter().chain(b.max.iter());
    if c.clone().any(|x| x.is_nan()) {
        v.push(BoxProblem::NaN);
    }
    if c.clone().any(|x| x.is_infinite()) {
        v.push(BoxProblem::Infinite);
    }
    for axis in 0..D {
        if b.min[axis] > b.max[axis] {
            v.push(BoxProblem::MinGreaterThanMax { axis });
        }
    }
    v
}

fn bad_config_fields<const D: usize>(c: &Config<D>) -> Vec<&'static str> {
    let mut v = Vec::new();
    if !c.margin.is_finite() {
        v.push("margin");
    }
    if let Some(b) = &c.bounds
        && !box_problems(b).is_empty()
    {
        v.push("bounds");
    }
    if c.max_columns_per_box < (1 << D) || c.max_columns_per_box > 4096 {
        v.push("max_columns_per_box");
    }
    if c.crowded_threshold == 0 {
        v.push("crowded_threshold");
    }
    v
}

fn no_panic_case<const D: usize>(boxes: &[Aabb<D>], config: &Config<D>) -> Result<(), TestCaseError> {
    let ctx = format!("n = {}, D = {D}, config = {config:?}", boxes.len());
    let r = find_pairs_with(boxes, config);
    // Broadphase must agree with the free function.
    let r2 = Broadphase::new(*config).and_then(|mut bp| {
        let mut out = Vec::new();
        bp.find_pairs(boxes, &mut out).map(|()| out)
    });
    prop_assert_eq!(&r, &r2, "{}: find_pairs_with and Broadphase disagree", ctx);

    let bad_fields = bad_config_fields(config);
    let first_bad = boxes.iter().position(|b| !box_problems(b).is_empty());
    match r {
        Ok(pairs) => {
            prop_assert!(bad_fields.is_empty(), "{}: Ok despite bad config fields {:?}", ctx, bad_fields);
            prop_assert!(first_bad.is_none(), "{}: Ok despite invalid box {:?}", ctx, first_bad);
            let want = brute_force_pairs(boxes, config)
                .map_err(|e| TestCaseError::fail(format!("{ctx}: brute: {e:?}")))?;
            compare(&ctx, boxes, config.margin, &pairs, &want).map_err(TestCaseError::fail)?;
        }
        Err(Error::InvalidConfig { field, .. }) => {
            prop_assert!(
                bad_fields.contains(&field),
                "{}: InvalidConfig for {} but bad fields are {:?}",
                ctx,
                field,
                bad_fields
            );
        }
        Err(Error::InvalidBox { index, problem }) => {
            // Which of a bad config and a bad box is reported first is not specified; a bad
            // box may only be reported if it is the first one, with one of its problems.
            prop_assert_eq!(
                Some(index),
                first_bad,
                "{}: InvalidBox names box {}, the first bad one is {:?}",
                ctx,
                index,
                first_bad
            );
            let probs = box_problems(&boxes[index]);
            prop_assert!(
                probs.contains(&problem),
                "{}: box {} = {:?} reported {:?}, its problems are {:?}",
                ctx,
                index,
                boxes[index],
                problem,
                probs
            );
        }
        Err(e) => return Err(TestCaseError::fail(format!("{ctx}: unexpected error {e:?}"))),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn no_panic_arbitrary_bits_2d(boxes in wild_scene::<2>(), config in wild_config::<2>()) {
        no_panic_case(&boxes, &config)?;
    }

    #[test]
    fn no_panic_arbitrary_bits_3d(boxes in wild_scene::<3>(), config in wild_config::<3>()) {
        no_panic_case(&boxes, &config)?;
    }

    #[test]
    fn no_panic_arbitrary_bits_1d(boxes in wild_scene::<1>(), config in wild_config::<1>()) {
        no_panic_case(&boxes, &config)?;
    }

    /// All coordinates arbitrary but config valid: exercises quantisation of any finite value.
    #[test]
    fn arbitrary_finite_boxes_match_brute_force(
        boxes in prop::collection::vec(wild_box::<3>().prop_filter("valid", |b| b.is_valid()), 0..120),
        margin in prop_oneof![Just(0.0f32), any_f32().prop_filter("finite", |m| m.is_finite()), -1.0f32..1.0],
        refine in prop_oneof![Just(Refine::Sweep), Just(Refine::Rdc)],
        crowded in prop_oneof![Just(1u32), Just(64u32)],
        cells in prop_oneof![Just(8u32), Just(4096u32)],
    ) {
        let config = Config::default().with_margin(margin).with_refine(refine).with_crowded_threshold(crowded).with_max_columns_per_box(cells);
        no_panic_case(&boxes, &config)?;
        let r = find_pairs_with(&boxes, &config);
        prop_assert!(r.is_ok(), "valid input refused: {:?}", r);
    }
}
