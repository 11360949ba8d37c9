//! `find_pairs` / `find_pairs_with` / `Broadphase` against the O(n^2) reference
//! `brute_force_pairs`: random scenes under random configs (proptest), and named adversarial
//! scenes, each under many configs and bounds.

mod common;

use broadphase::{brute_force_pairs, find_pairs, find_pairs_with, Aabb, Broadphase, Config, Method, Refine};
use common::Rng;
use common::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

// =============================================================================================
// Proptest strategies
// =============================================================================================

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

fn aabb<const D: usize>(wild: bool) -> impl Strategy<Value = Aabb<D>> {
    (prop::collection::vec(coord(wild), D), prop::collection::vec(extent(wild), D)).prop_map(|(c, e)| {
        let mut min = [0.0; D];
        let mut size = [0.0; D];
        min.copy_from_slice(&c);
        size.copy_from_slice(&e);
        boxed(min, size) // max clamped to f32::MAX, so always valid
    })
}

fn scene<const D: usize>(max_n: usize) -> impl Strategy<Value = Vec<Aabb<D>>> {
    prop_oneof![
        4 => prop::collection::vec(aabb::<D>(false), 0..max_n),
        1 => prop::collection::vec(aabb::<D>(true), 0..max_n),
    ]
}

fn margin() -> impl Strategy<Value = f32> {
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

fn bounds<const D: usize>() -> impl Strategy<Value = Option<Aabb<D>>> {
    let arr = |lo: f32, hi: f32| prop::collection::vec(lo..hi, D);
    let mk = |c: Vec<f32>, e: Vec<f32>| {
        let mut min = [0.0; D];
        let mut size = [0.0; D];
        min.copy_from_slice(&c);
        size.copy_from_slice(&e);
        Some(boxed(min, size))
    };
    prop_oneof![
        3 => Just(None),
        // Much smaller than the scene.
        1 => (arr(-20.0, 20.0), arr(0.0, 5.0)).prop_map(move |(c, e)| mk(c, e)),
        // Far away (outside_world).
        1 => (arr(-1.0e6, 1.0e6), arr(0.0, 1.0)).prop_map(move |(c, e)| mk(c, e)),
        // A zero-extent point.
        1 => arr(-10.0, 10.0).prop_map(move |c| mk(c, vec![0.0; D])),
        // Much larger than the scene.
        1 => (arr(-1.0e4, -100.0), arr(200.0, 2.0e4)).prop_map(move |(c, e)| mk(c, e)),
    ]
}

fn config<const D: usize>() -> impl Strategy<Value = Config<D>> {
    let min_cells = 1u32 << D;
    let max_cells =
        prop_oneof![Just(min_cells), Just(min_cells + 1), Just(64u32), Just(4096u32), min_cells..=4096u32,];
    let crowded = prop_oneof![Just(1u32), Just(2u32), Just(64u32), 1u32..200];
    let refine = prop_oneof![Just(Refine::Sweep), Just(Refine::Rdc)];
    // Auto most often; each forced method too, the tree among them.
    let method = prop_oneof![
        4 => Just(Method::Auto),
        1 => Just(Method::Columns),
        1 => Just(Method::Sweep),
        1 => Just(Method::Tree),
    ];
    (margin(), bounds::<D>(), max_cells, crowded, refine, method).prop_map(
        |(margin, bounds, mc, ct, refine, method)| {
            Config::default()
                .with_margin(margin)
                .with_bounds(bounds)
                .with_max_columns_per_box(mc)
                .with_crowded_threshold(ct)
                .with_refine(refine)
                .with_method(method)
        },
    )
}

/// Seeded structured scenes (clumps, planks, grids, six orders of sizes, duplicates).
fn structured<const D: usize>(seed: u64, kind: u8, n: usize) -> Vec<Aabb<D>> {
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

fn run_oracle<const D: usize>(boxes: &[Aabb<D>], config: &Config<D>, ctx: &str) -> Result<(), TestCaseError> {
    let want = reference(ctx, boxes, config).map_err(TestCaseError::fail)?;
    check_against(ctx, boxes, config, &want).map_err(TestCaseError::fail)?;
    // The reusable API under this (random) tuning, with a dirty `out`.
    let mut bp = Broadphase::new(*config).map_err(|e| TestCaseError::fail(format!("{ctx}: {e:?}")))?;
    let mut out = vec![[5u32, 1u32]; 3];
    bp.find_pairs(boxes, &mut out).map_err(|e| TestCaseError::fail(format!("{ctx}: {e:?}")))?;
    let ctx = format!("{ctx} Broadphase [n = {}, D = {D}, config = {config:?}]", boxes.len());
    compare(&ctx, boxes, config.margin, &out, &want).map_err(TestCaseError::fail)?;
    prop_assert_eq!(bp.stats().pairs, out.len(), "{}: stats().pairs", ctx);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn prop_oracle_1d(boxes in scene::<1>(400), config in config::<1>()) {
        run_oracle(&boxes, &config, "prop_oracle_1d")?;
    }

    #[test]
    fn prop_oracle_2d(boxes in scene::<2>(400), config in config::<2>()) {
        run_oracle(&boxes, &config, "prop_oracle_2d")?;
    }

    #[test]
    fn prop_oracle_3d(boxes in scene::<3>(400), config in config::<3>()) {
        run_oracle(&boxes, &config, "prop_oracle_3d")?;
    }

    #[test]
    fn prop_oracle_default_config(b2 in scene::<2>(300), b3 in scene::<3>(300)) {
        run_oracle(&b2, &Config::default(), "prop_oracle_default_config 2D")?;
        run_oracle(&b3, &Config::default(), "prop_oracle_default_config 3D")?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn prop_oracle_structured(
        seed in any::<u64>(),
        kind in 0u8..7,
        n in 0usize..400,
        c2 in config::<2>(),
        c3 in config::<3>(),
    ) {
        let b2 = structured::<2>(seed, kind, n);
        run_oracle(&b2, &c2, &format!("prop_oracle_structured 2D seed = {seed:#x} kind = {kind}"))?;
        let b3 = structured::<3>(seed, kind, n);
        run_oracle(&b3, &c3, &format!("prop_oracle_structured 3D seed = {seed:#x} kind = {kind}"))?;
    }
}

// =============================================================================================
// Named adversarial scenes
// =============================================================================================

fn brute<const D: usize>(boxes: &[Aabb<D>], margin: f32) -> Vec<[u32; 2]> {
    brute_force_pairs(boxes, &Config::default().with_margin(margin)).expect("scene must be valid")
}

fn got<const D: usize>(boxes: &[Aabb<D>], config: &Config<D>) -> Vec<[u32; 2]> {
    find_pairs_with(boxes, config)
        .unwrap_or_else(|e| panic!("find_pairs_with failed (n = {}): {e:?}", boxes.len()))
}

fn empty_for<const D: usize>() {
    let none: [Aabb<D>; 0] = [];
    assert_eq!(find_pairs(&none), Ok(vec![]), "find_pairs on empty input, D = {D}");
    for t in tuning_configs::<D>() {
        for bounds in [None, Some(Aabb::new([0.0; D], [1.0; D])), Some(Aabb::new([5.0; D], [5.0; D]))] {
            for margin in [0.0, 1.0, -1.0] {
                let c = t.with_margin(margin).with_bounds(bounds);
                assert_eq!(find_pairs_with(&none, &c), Ok(vec![]), "empty input, D = {D}, {c:?}");
                let mut bp = Broadphase::new(c).unwrap();
                let mut out = vec![[0, 1]];
                bp.find_pairs(&none, &mut out).unwrap();
                assert!(out.is_empty(), "Broadphase on empty input must clear out, D = {D}, {c:?}");
            }
        }
    }
}

#[test]
fn empty() {
    empty_for::<1>();
    empty_for::<2>();
    empty_for::<3>();
}

fn one_box_for<const D: usize>() {
    for b in [
        Aabb::new([0.0; D], [1.0; D]),
        Aabb::new([3.0; D], [3.0; D]),
        Aabb::new([-1.0e30; D], [1.0e30; D]),
        Aabb::new([-f32::MAX; D], [f32::MAX; D]),
    ] {
        assert_eq!(find_pairs(&[b]), Ok(vec![]), "one box {b:?}");
        // Margins that grow, shrink to a point, and turn it inside out.
        for margin in [0.0, 10.0, -0.5, -2.0] {
            let c = Config::default().with_margin(margin);
            assert_eq!(find_pairs_with(&[b], &c), Ok(vec![]), "one box {b:?} margin {margin}");
        }
        check_scene("one_box", &[b], &[5.0, -5.0]);
    }
}

#[test]
fn one_box() {
    one_box_for::<1>();
    one_box_for::<2>();
    one_box_for::<3>();
}

fn all_identical_for<const D: usize>() {
    let n = 300;
    for b in [Aabb::new([1.0; D], [2.0; D]), Aabb::new([0.3; D], [0.3; D])] {
        let boxes = vec![b; n];
        let want = brute(&boxes, 0.0);
        assert_eq!(want.len(), choose2(n), "all identical: every pair overlaps");
        check_scene(&format!("all_identical {b:?}"), &boxes, &[0.1, -1.0e-3]);
    }
    // Unit boxes shrunk by exactly half their extent become points: still all overlap.
    let boxes = vec![Aabb::new([1.0; D], [2.0; D]); n];
    let c = Config::default().with_margin(-0.5);
    assert_eq!(got(&boxes, &c).len(), choose2(n), "unit boxes shrunk to identical points must all overlap");
    // ...and a little more turns them inside out: no pairs at all.
    for margin in [-0.5 - 1.0 / 1024.0, -0.75, -0.501] {
        assert_eq!(brute(&boxes, margin).len(), 0, "margin {margin} inverts unit boxes");
        for t in tuning_configs::<D>() {
            let c = t.with_margin(margin);
            assert_eq!(
                got(&boxes, &c),
                Vec::<[u32; 2]>::new(),
                "inverted identical boxes must yield no pairs, {c:?}"
            );
        }
    }
}

#[test]
fn all_identical() {
    all_identical_for::<1>();
    all_identical_for::<2>();
    all_identical_for::<3>();
}

fn zero_extent_for<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    let mut boxes: Vec<Aabb<D>> = Vec::new();
    // Points on an integer lattice, some repeated.
    for _ in 0..400 {
        let mut p = [0.0; D];
        for v in p.iter_mut() {
            *v = rng.below(12) as f32;
        }
        boxes.push(Aabb::new(p, p));
    }
    // Flat boxes: zero extent on one or more axes, lying on lattice planes/lines so they
    // touch points and each other exactly.
    for _ in 0..300 {
        let mut min = [0.0; D];
        let mut max = [0.0; D];
        for k in 0..D {
            min[k] = rng.below(12) as f32;
            max[k] = if rng.chance(0.5) { min[k] } else { min[k] + rng.below(5) as f32 };
        }
        boxes.push(Aabb::new(min, max));
    }
    // Points at non-lattice floats, and boxes whose faces are exactly those floats.
    for _ in 0..100 {
        let mut p = [0.0; D];
        for v in p.iter_mut() {
            *v = rng.range(0.0, 12.0);
        }
        boxes.push(Aabb::new(p, p));
        let mut q = p;
        q[0] += 1.0;
        boxes.push(Aabb::new(p, q)); // shares the point as its min corner
    }
    rng.shuffle(&mut boxes);
    let want = brute(&boxes, 0.0);
    assert!(!want.is_empty());
    check_scene(&format!("zero_extent D = {D} seed = {seed:#x}"), &boxes, &[0.5, -1.0e-4]);
}

#[test]
fn zero_extent() {
    zero_extent_for::<1>(1);
    zero_extent_for::<2>(2);
    zero_extent_for::<3>(3);
}

/// Number of closed-overlap pairs among a full a^D lattice of unit cells that share faces,
/// edges and corners: every cell touches its 3^D - 1 neighbours.
fn lattice_pairs(a: usize, d: usize) -> usize {
    // Sum over half of the neighbour offsets (lexicographically positive) of the number of
    // cells that have that neighbour.
    let mut total = 0;
    let offsets = 3usize.pow(d as u32);
    for code in 0..offsets {
        let mut off = Vec::new();
        let mut c = code;
        for _ in 0..d {
            off.push(c as i64 % 3 - 1);
            c /= 3;
        }
        let first_nonzero = off.iter().rev().find(|&&o| o != 0);
        if first_nonzero != Some(&1) {
            continue; // zero offset or the mirrored half
        }
        total += off.iter().map(|&o| a - o.unsigned_abs() as usize).product::<usize>();
    }
    total
}

fn lattice<const D: usize>(a: usize, coords: &[f32]) -> Vec<Aabb<D>> {
    assert_eq!(coords.len(), a + 1);
    let cells = a.pow(D as u32);
    (0..cells)
        .map(|mut c| {
            let mut min = [0.0; D];
            let mut max = [0.0; D];
            for k in 0..D {
                let i = c % a;
                c /= a;
                min[k] = coords[i];
                max[k] = coords[i + 1]; // the neighbour's min: the very same float
            }
            Aabb::new(min, max)
        })
        .collect()
}

fn touching_for<const D: usize>(a: usize) {
    let expected = lattice_pairs(a, D);
    let integer: Vec<f32> = (0..=a).map(|i| i as f32).collect();
    let tenths: Vec<f32> = (0..=a).map(|i| i as f32 * 0.1).collect();
    let shifted: Vec<f32> = (0..=a).map(|i| -1.7 + i as f32 * 0.3).collect();
    for (label, coords) in [("integer", &integer), ("0.1 steps", &tenths), ("-1.7 + 0.3 steps", &shifted)] {
        let mut boxes = lattice::<D>(a, coords);
        let name = format!("touching {label} D = {D} a = {a}");
        let want = brute(&boxes, 0.0);
        assert_eq!(want.len(), expected, "{name}: brute force disagrees with the lattice count");
        check_scene(&name, &boxes, &[-1.0e-4]);
        // A tiny negative margin separates every touching pair.
        for t in tuning_configs::<D>() {
            let c = t.with_margin(-1.0e-4);
            assert_eq!(
                got(&boxes, &c),
                Vec::<[u32; 2]>::new(),
                "{name}: margin -1e-4 must separate all, {c:?}"
            );
        }
        // Shuffled input order.
        let mut rng = Rng::new(a as u64 * 31 + D as u64);
        rng.shuffle(&mut boxes);
        check(&format!("{name} shuffled"), &boxes, &Config::default()).unwrap_or_else(|e| panic!("{e}"));
    }
    // Gaps of exactly 0.5 closed by a margin of exactly 0.25.
    let gapped: Vec<f32> = (0..=a).map(|i| i as f32 * 1.5).collect();
    let boxes: Vec<Aabb<D>> = lattice::<D>(a, &gapped)
        .into_iter()
        .map(|mut b| {
            for k in 0..D {
                b.max[k] -= 0.5;
            }
            b
        })
        .collect();
    assert_eq!(brute(&boxes, 0.0).len(), 0);
    assert_eq!(brute(&boxes, 0.25).len(), expected);
    check_scene(&format!("touching gapped D = {D}"), &boxes, &[0.25, next_down(0.25)]);
    for t in tuning_configs::<D>() {
        let c = t.with_margin(0.25);
        assert_eq!(got(&boxes, &c).len(), expected, "margin 0.25 must close 0.5 gaps exactly, {c:?}");
    }
}

#[test]
fn touching() {
    touching_for::<1>(1000);
    touching_for::<2>(20);
    touching_for::<3>(7);
}

fn on_cell_boundary_for<const D: usize>(seed: u64, lo: f32, hi: f32) {
    let mut rng = Rng::new(seed);
    let span = hi - lo;
    let mut boxes: Vec<Aabb<D>> = Vec::new();
    // Pin the implicit bounds to exactly [lo, hi]^D, and put points on the extreme corners
    // and faces (the top face is a classic off-by-one in quantisation).
    boxes.push(Aabb::new([lo; D], [lo; D]));
    boxes.push(Aabb::new([hi; D], [hi; D]));
    boxes.push(Aabb::new([lo; D], [hi; D]));
    let mut top = [lo + span * 0.5; D];
    top[0] = hi;
    boxes.push(Aabb::new(top, top));
    for level in 1..=12u32 {
        let cells = 1u64 << level;
        let step = span / cells as f32;
        for _ in 0..12 {
            let k = rng.below(cells as usize + 1) as f32;
            let face = lo + k * step; // exact: power-of-two fraction of a power-of-two span
            let w = match rng.below(3) {
                0 => step,
                1 => step * 0.5,
                _ => rng.range(0.0, step * 2.0),
            };
            let axis = rng.below(D);
            let mut base_min = [0.0; D];
            let mut base_max = [0.0; D];
            for j in 0..D {
                // Other axes also on the boundary lattice of this level.
                let kk = rng.below(cells as usize) as f32;
                base_min[j] = lo + kk * step;
                base_max[j] = (base_min[j] + step).min(hi);
            }
            let variants = [
                ((face - w).max(lo), face),                    // ends exactly on the boundary
                (face, (face + w).min(hi)),                    // starts exactly on the boundary
                (next_up(face).min(hi), (face + w).min(hi)),   // one ulp past it
                ((face - w).max(lo), next_down(face).max(lo)), // one ulp short of it
                (face, face),                                  // flat on the boundary
            ];
            for (a, b) in variants {
                if a > b {
                    continue;
                }
                let mut min = base_min;
                let mut max = base_max;
                min[axis] = a;
                max[axis] = b;
                boxes.push(Aabb::new(min, max));
            }
        }
    }
    let name = format!("on_cell_boundary D = {D} [{lo}, {hi}] seed = {seed:#x}");
    check_scene(&name, &boxes, &[span / 1024.0, -span / 4096.0]);
    // Explicit bounds equal to the power-of-two span, and half of it.
    for t in tuning_configs::<D>() {
        for bounds in [Aabb::new([lo; D], [hi; D]), Aabb::new([lo; D], [lo + span * 0.5; D])] {
            let c = t.with_bounds(Some(bounds));
            check(&name, &boxes, &c).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn on_cell_boundary() {
    on_cell_boundary_for::<1>(11, 0.0, 1024.0);
    on_cell_boundary_for::<2>(12, 0.0, 1024.0);
    on_cell_boundary_for::<3>(13, 0.0, 1024.0);
    on_cell_boundary_for::<2>(14, -512.0, 512.0);
    on_cell_boundary_for::<3>(15, -1.0, 1.0);
}

fn outside_world_for<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    let mut boxes: Vec<Aabb<D>> = uniform(&mut rng, 1500, 2000.0, 40.0);
    for b in boxes.iter_mut() {
        for k in 0..D {
            b.min[k] -= 1000.0;
            b.max[k] -= 1000.0;
        }
    }
    let name = format!("outside_world D = {D} seed = {seed:#x}");
    let want = brute(&boxes, 0.0);
    let want_m = brute(&boxes, 3.0);
    let bounds_list = [
        Aabb::new([0.0; D], [1.0; D]),           // excludes almost everything
        Aabb::new([1.0e6; D], [1.0e6 + 1.0; D]), // far away, excludes everything
        Aabb::new([-1.0e6; D], [-1.0e6; D]),     // a far point
        Aabb::new([-1000.0; D], [-999.0; D]),    // the scene's low corner only
        Aabb::new([0.0; D], [1.0e4; D]),         // half the scene outside
        Aabb::new([-1.0e-6; D], [1.0e-6; D]),    // tiny, in the middle
    ];
    for bounds in bounds_list {
        for t in tuning_configs::<D>() {
            let c = t.with_bounds(Some(bounds));
            check_against(&name, &boxes, &c, &want).unwrap_or_else(|e| panic!("{e}"));
            let c = c.with_margin(3.0);
            check_against(&name, &boxes, &c, &want_m).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn outside_world() {
    outside_world_for::<1>(21);
    outside_world_for::<2>(22);
    outside_world_for::<3>(23);
}

/// A dense scene and a few strays far away (the grid's trimmed bounds leave them out, so
/// they are clamped to its border): strays that overlap each other, strays on both sides,
/// one stray over part of the scene, and strays at the edge of the f32 range.
fn far_strays_for<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    let mut boxes: Vec<Aabb<D>> = uniform(&mut rng, 1200, 40.0, 3.0);
    for (at, side) in [(1.0e9f32, 1.0f32), (1.0e9, 2.0), (-1.0e9, 1.0), (1.0e30, 1.0e29), (-3.0e38, 1.0e38)] {
        let i = rng.below(boxes.len());
        boxes.insert(i, Aabb::new([at; D], [at + side; D]));
    }
    // A long stray from the scene out to far away, on the first axis.
    let mut long = Aabb::new([30.0; D], [31.0; D]);
    long.max[0] = 5.0e8;
    boxes.insert(rng.below(boxes.len()), long);
    let name = format!("far_strays D = {D} seed = {seed:#x}");
    check_scene(&name, &boxes, &[0.5]);
    // The column pipeline itself, whatever `Auto` picks for this small scene.
    let want = brute(&boxes, 0.0);
    for t in tuning_configs::<D>() {
        let c = t.with_method(Method::Columns);
        check_against(&name, &boxes, &c, &want).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn far_strays() {
    far_strays_for::<1>(0xF1);
    far_strays_for::<2>(0xF2);
    far_strays_for::<3>(0xF3);
}

/// The statistics of one run of a fresh finder.
fn stats_of<const D: usize>(boxes: &[Aabb<D>], config: Config<D>) -> broadphase::Stats {
    let mut bp = Broadphase::new(config).unwrap();
    bp.find_pairs(boxes, &mut Vec::new()).unwrap();
    bp.stats().clone()
}

/// A scene under one box twice its size (a ground plane, a level's bounding volume): the
/// pairs are exact, and in 3D the box does not make the rest of the scene costlier than its
/// own pairs are. It stretches the grid to twice the scene on every axis; the level model
/// must take the density of the part the scene occupies (with the whole grid's
/// cross-section, at 20k boxes, 95k candidates became 162k, of which the big box's own are
/// one an entry, 33k; now 113k). In 2D the stretch is under the model's factor two (the
/// bulk fills 0.55 of the grid): 91k candidates against 65k under a box of the scene's own
/// size, at about the same frame time (docs/BENCHMARKS.md).
fn big_box_over_the_scene_for<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    let big = |w: f32| Aabb::new([-0.5 * w; D], [1.5 * w; D]);
    let mut boxes: Vec<Aabb<D>> = uniform(&mut rng, 1500, 30.0, 2.0);
    boxes.insert(700, big(30.0));
    check_scene(&format!("big_box_over_the_scene D = {D} seed = {seed:#x}"), &boxes, &[0.5]);
    if D < 3 {
        return;
    }
    let n = 20_000;
    let w = (n as f32).powf(1.0 / D as f32);
    let scene: Vec<Aabb<D>> = uniform(&mut rng, n, w, 1.0);
    let mut with = scene.clone();
    with.push(big(w));
    let cells_only = Config::default().with_method(Method::Columns);
    let alone = stats_of(&scene, cells_only).candidates as f64;
    let under = stats_of(&with, cells_only);
    let (under, cells) = (under.candidates as f64, under.entries as f64);
    // The big box adds about one candidate an entry; the scene's own may change a little.
    assert!(under <= 1.2 * alone + cells, "D = {D}: {alone} candidates alone, {under} under the big box");
}

#[test]
fn big_box_over_the_scene() {
    big_box_over_the_scene_for::<1>(0xB1);
    big_box_over_the_scene_for::<2>(0xB2);
    big_box_over_the_scene_for::<3>(0xB3);
}

/// Boxes gathered in four places far apart (islands, levels, cities in one world): the
/// pairs are exact, and each island costs about what it costs alone. The spread of the
/// whole scene made a whole-scene sweep look cheap (200k 3D boxes in four islands were
/// swept at 1,643 tests a box) and the columns sparse; the estimates now come from the
/// sample's own sweep and cover.
fn far_islands_for<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    let islands = |rng: &mut Rng, per: usize, w: f32, size: f32| {
        let mut boxes: Vec<Aabb<D>> = Vec::new();
        for q in 0..4usize {
            let off = 100.0 * w * q as f32;
            boxes.extend(uniform::<D>(rng, per, w, size).into_iter().map(|mut b| {
                b.min[0] += off;
                b.max[0] += off;
                b.min[D - 1] += off;
                b.max[D - 1] += off;
                b
            }));
        }
        boxes
    };
    let boxes = islands(&mut rng, 400, 20.0, 2.0);
    check_scene(&format!("far_islands D = {D} seed = {seed:#x}"), &boxes, &[0.5]);
    if D < 2 {
        return;
    }
    // Four islands against one alone (scaled to four): 10k boxes an island in 3D, 100k in
    // 2D (where 10k would be swept whole either way). Before: 3D 9.2M candidates against
    // 79k for one island, 2D 63.5M against 229k.
    let per = if D == 2 { 100_000 } else { 10_000 };
    let w = (per as f32).powf(1.0 / D as f32);
    let tests = |b: &[Aabb<D>]| stats_of(b, Config::default()).candidates as f64;
    let all = islands(&mut rng, per, w, 1.0);
    let one = tests(&all[..per]);
    let four = tests(&all);
    assert!(four <= 4.0 * 2.0 * one, "D = {D}: {four} candidates for four islands, {one} for one");
}

#[test]
fn far_islands() {
    far_islands_for::<1>(0xE1);
    far_islands_for::<2>(0xE2);
    far_islands_for::<3>(0xE3);
}

/// Ids that cycle through clumps (box `i` in clump `i % k`: objects emitted round-robin,
/// instances stored part by part): the pairs are exact, and the columns cost about what
/// they cost with the same boxes in clump order. With `k` equal to the stride of a plain
/// strided sample, the sample saw one clump, the grid covered it alone and the other
/// clumps clamped onto its border columns: 10k 3D boxes in 20 clumps tested 838
/// candidates a box instead of 60.
fn interleaved_clumps_for<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    let clumps = |rng: &mut Rng, n: usize, k: usize| {
        let centres: Vec<[f32; D]> = (0..k).map(|_| std::array::from_fn(|_| rng.range(0.0, 120.0))).collect();
        let mut boxes: Vec<Aabb<D>> = uniform(rng, n, 6.0, 1.5);
        for (i, b) in boxes.iter_mut().enumerate() {
            for (d, &c) in centres[i % k].iter().enumerate() {
                b.min[d] += c;
                b.max[d] += c;
            }
        }
        boxes
    };
    let small = clumps(&mut rng, 1200, 3);
    check_scene(&format!("interleaved_clumps D = {D} seed = {seed:#x}"), &small, &[0.5]);
    if D < 2 {
        return;
    }
    // 512 sampled boxes: a stride of 20 over 10,240 boxes.
    let (n, k) = (10_240, 20);
    let cycling = clumps(&mut rng, n, k);
    let mut by_clump: Vec<usize> = (0..n).collect();
    by_clump.sort_by_key(|&i| (i % k, i));
    let ordered: Vec<Aabb<D>> = by_clump.iter().map(|&i| cycling[i]).collect();
    let cells = Config::<D>::default().with_method(Method::Columns);
    let a = stats_of(&cycling, cells).candidates as f64;
    let b = stats_of(&ordered, cells).candidates as f64;
    assert!(a <= 2.0 * b, "D = {D}: {a} candidates with cycling ids, {b} in clump order");
}

#[test]
fn interleaved_clumps() {
    interleaved_clumps_for::<1>(0xC1);
    interleaved_clumps_for::<2>(0xC2);
    interleaved_clumps_for::<3>(0xC3);
}

/// A dense scene stays within the working memory a box may take: with ten copies of every
/// box (14 pairs a box) the level model's own choice was 3.8 columns a box at 10k 3D boxes,
/// 186 bytes a box of rows, keys and scratch (49 bytes a column); the plan is made again,
/// coarser, under 120 bytes a box (2.45 columns). The pairs stay exact.
#[test]
fn dense_scenes_plan_within_the_memory_cap() {
    let boxes = broadphase::internals::scene::copies::<3>(10_000, 0xD3);
    let config = Config::default().with_method(Method::Columns);
    let mut bp = Broadphase::new(config).unwrap();
    let mut got = Vec::new();
    bp.find_pairs(&boxes, &mut got).unwrap();
    let per_box = bp.stats().entries as f64 / boxes.len() as f64;
    assert!(per_box <= 120.0 / 49.0, "{per_box} columns a box");
    assert!(got.len() > 10 * boxes.len(), "{} pairs", got.len());
    assert!(got == brute(&boxes, 0.0), "pairs differ from brute force");
}

/// `Method::Auto` sweeps a sparse scene whole only while that is the faster way: the
/// bound on a sweep's tests a box falls with the number of boxes (a large sparse scene is
/// faster in the columns) and is lower in 3D, unless the boxes' sizes spread widely (many
/// levels of columns cost more a box).
#[test]
fn auto_sweeps_only_small_sparse_scenes() {
    fn chose_cells<const D: usize>(n: usize, tests_per_box: f32, sizes_spread: bool) -> bool {
        let mut rng = Rng::new(0xA5 + n as u64);
        // Sides uniform in [0, 2): a mean extent of 1, so a sweep tests about n / world
        // boxes a box.
        let mut boxes: Vec<Aabb<D>> = uniform(&mut rng, n, n as f32 / tests_per_box, 2.0);
        if sizes_spread {
            // Cubes of side 0.1-0.3 and 0.9-2.7, alternately: the same mean extent of 1,
            // sizes spread well over 8x (10th to 90th percentile).
            for (i, b) in boxes.iter_mut().enumerate() {
                let side = if i % 2 == 0 { 0.2 } else { 1.8 } * rng.range(0.5, 1.5);
                for k in 0..D {
                    b.max[k] = b.min[k] + side;
                }
            }
        }
        stats_of(&boxes, Config::default()).entries > 0
    }
    assert!(!chose_cells::<2>(8_000, 64.0, false), "2D, 8k boxes at 64 tests a box: swept");
    assert!(chose_cells::<2>(60_000, 64.0, false), "2D, 60k boxes at 64 tests a box: columns");
    assert!(!chose_cells::<2>(60_000, 64.0, true), "2D, 60k boxes of spread sizes at 64: swept");
    assert!(!chose_cells::<2>(60_000, 8.0, false), "2D, 60k boxes at 8 tests a box: swept");
    assert!(!chose_cells::<3>(8_000, 32.0, false), "3D, 8k boxes at 32 tests a box: swept");
    assert!(chose_cells::<3>(8_000, 96.0, false), "3D, 8k boxes at 96 tests a box: columns");
    assert!(chose_cells::<3>(60_000, 64.0, false), "3D, 60k boxes at 64 tests a box: columns");
    assert!(!chose_cells::<3>(60_000, 64.0, true), "3D, 60k boxes of spread sizes at 64: swept");
    assert!(!chose_cells::<3>(60_000, 24.0, false), "3D, 60k boxes at 24 tests a box: swept");
}

fn huge_scene<const D: usize>(seed: u64) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(seed);
    let mut boxes: Vec<Aabb<D>> = Vec::new();
    // Boxes around +-1e30 with sizes 1e28..1e29.
    for _ in 0..300 {
        let mut min = [0.0; D];
        let mut size = [0.0; D];
        for k in 0..D {
            let sign = if rng.chance(0.5) { -1.0 } else { 1.0 };
            min[k] = sign * rng.range(0.5e30, 1.5e30);
            size[k] = rng.range(1.0e28, 1.0e29);
        }
        boxes.push(boxed(min, size));
    }
    // Boxes spanning -1e30..1e30 on one axis, narrow on the others.
    for _ in 0..40 {
        let axis = rng.below(D);
        let mut min = [0.0; D];
        let mut max = [0.0; D];
        for k in 0..D {
            if k == axis {
                min[k] = -1.0e30;
                max[k] = 1.0e30;
            } else {
                min[k] = rng.range(-1.0e30, 1.0e30);
                max[k] = min[k] + 1.0e28;
            }
        }
        boxes.push(Aabb::new(min, max));
    }
    // f32::MAX-ish finite values.
    boxes.push(Aabb::new([3.0e38; D], [f32::MAX; D]));
    boxes.push(Aabb::new([-f32::MAX; D], [-3.0e38; D]));
    boxes.push(Aabb::new([-f32::MAX; D], [f32::MAX; D]));
    boxes.push(Aabb::new([f32::MAX; D], [f32::MAX; D]));
    boxes.push(Aabb::new([-f32::MAX; D], [-f32::MAX; D]));
    boxes.push(Aabb::new([-3.0e38; D], [-3.0e38; D]));
    boxes.push(Aabb::new([3.0e38; D], [3.0e38; D]));
    // Tiny boxes near the origin, separated by tiny gaps: exactness must survive the
    // enormous scene extent.
    for i in 0..200 {
        let x = i as f32 * 1.0e-3;
        let mut min = [0.0; D];
        let mut max = [0.0; D];
        min[0] = x;
        max[0] = x + if i % 2 == 0 { 1.0e-3 } else { 0.9e-3 }; // touch, or miss by 1e-4
        for k in 1..D {
            min[k] = 0.0;
            max[k] = 1.0e-3;
        }
        boxes.push(Aabb::new(min, max));
    }
    // A few near-misses at 1e30: gaps of one ulp.
    for i in 0..20 {
        let mut min = [1.0e30; D];
        min[0] = 1.0e30 + i as f32 * 1.0e24;
        let mut max = min;
        max[0] = next_down(1.0e30 + (i + 1) as f32 * 1.0e24);
        boxes.push(Aabb::new(min, max));
    }
    rng.shuffle(&mut boxes);
    boxes
}

fn huge_coordinates_for<const D: usize>(seed: u64) {
    let boxes = huge_scene::<D>(seed);
    check_scene(
        &format!("huge_coordinates D = {D} seed = {seed:#x}"),
        &boxes,
        &[1.0e-3, -1.0e-4, 1.0e28, -1.0e29],
    );
}

#[test]
fn huge_coordinates() {
    huge_coordinates_for::<1>(31);
    huge_coordinates_for::<2>(32);
    huge_coordinates_for::<3>(33);
}

/// A finite margin that makes grown coordinates overflow to +-infinity (e.g. f32::MAX + 1e38)
/// is legal input; the result must still equal the reference.
#[test]
fn huge_coordinates_margin_overflows_to_infinity() {
    fn go<const D: usize>(seed: u64) {
        let boxes = huge_scene::<D>(seed);
        let name = format!("huge_coordinates_margin_overflows D = {D} seed = {seed:#x}");
        for margin in [1.0e38f32, f32::MAX, -f32::MAX] {
            let want = brute(&boxes, margin);
            for t in tuning_configs::<D>() {
                let c = t.with_margin(margin);
                check_against(&name, &boxes, &c, &want).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }
    go::<1>(41);
    go::<2>(42);
    go::<3>(43);
}

fn negative_coordinates_for<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    // All strictly negative.
    let mut boxes: Vec<Aabb<D>> = uniform(&mut rng, 800, 999.0, 30.0);
    for b in boxes.iter_mut() {
        for k in 0..D {
            b.min[k] -= 1030.0;
            b.max[k] -= 1030.0;
        }
    }
    check_scene(&format!("negative_coordinates (all < 0) D = {D}"), &boxes, &[1.0, -0.5]);
    // Straddling zero, with touching at 0 via -0.0 / 0.0 and negative lattice values.
    let mut boxes: Vec<Aabb<D>> = Vec::new();
    for _ in 0..600 {
        let mut min = [0.0; D];
        let mut max = [0.0; D];
        for k in 0..D {
            let a = rng.below(21) as f32 - 10.0;
            let b = a + rng.below(4) as f32;
            min[k] = if a == 0.0 && rng.chance(0.5) { -0.0 } else { a };
            max[k] = if b == 0.0 && rng.chance(0.5) { -0.0 } else { b };
        }
        boxes.push(Aabb::new(min, max));
    }
    check_scene(&format!("negative_coordinates (straddling 0) D = {D}"), &boxes, &[0.5, -0.25]);
}

#[test]
fn negative_coordinates() {
    negative_coordinates_for::<1>(51);
    negative_coordinates_for::<2>(52);
    negative_coordinates_for::<3>(53);
}

/// -0.0 and 0.0 compare equal: a box ending at -0.0 touches one starting at 0.0 (a
/// bit-pattern sort key that treats -0.0 as "below" or as a huge value would miss this).
fn signed_zeros_for<const D: usize>() {
    let mut boxes: Vec<Aabb<D>> = Vec::new();
    for i in 0..50 {
        let s = 1.0 + i as f32;
        boxes.push(Aabb::new([-s; D], [-0.0; D]));
        boxes.push(Aabb::new([0.0; D], [s; D]));
        boxes.push(Aabb::new([-0.0; D], [-0.0; D]));
        boxes.push(Aabb::new([0.0; D], [-0.0; D])); // min 0.0, max -0.0: valid, a point
        boxes.push(Aabb::new([-0.0; D], [0.0; D]));
    }
    let want = brute(&boxes, 0.0);
    assert_eq!(want.len(), choose2(boxes.len()), "every box contains the origin");
    check_scene(&format!("signed_zeros D = {D}"), &boxes, &[1.0e-30, -1.0e-30]);
}

#[test]
fn signed_zeros() {
    signed_zeros_for::<1>();
    signed_zeros_for::<2>();
    signed_zeros_for::<3>();
}

fn mixed_sizes_six_orders_for<const D: usize>(seed: u64, n: usize) {
    let mut rng = Rng::new(seed);
    let boxes: Vec<Aabb<D>> = (0..n)
        .map(|_| {
            let mut min = [0.0; D];
            let mut size = [0.0; D];
            let s = rng.log_uniform(-3.0, 3.0);
            for k in 0..D {
                min[k] = rng.range(0.0, 2000.0);
                // Mostly cube-ish, sometimes independent per axis.
                size[k] = if rng.chance(0.7) { s } else { rng.log_uniform(-3.0, 3.0) };
            }
            boxed(min, size)
        })
        .collect();
    check_scene(
        &format!("mixed_sizes_six_orders D = {D} n = {n} seed = {seed:#x}"),
        &boxes,
        &[1.0e-3, -1.0e-3],
    );
}

#[test]
fn mixed_sizes_six_orders() {
    mixed_sizes_six_orders_for::<1>(61, 1500);
    mixed_sizes_six_orders_for::<2>(62, 2500);
    mixed_sizes_six_orders_for::<3>(63, 2500);
}

fn long_thin_for<const D: usize>(seed: u64, n: usize) {
    let mut rng = Rng::new(seed);
    let boxes: Vec<Aabb<D>> = (0..n)
        .map(|_| {
            // Planks: long on one axis. Walls (3D): long on two.
            let long_axes = if D == 3 && rng.chance(0.4) { 2 } else { 1 };
            let first = rng.below(D);
            let mut min = [0.0; D];
            let mut size = [0.0; D];
            for k in 0..D {
                let long = (k + D - first) % D < long_axes;
                min[k] = rng.range(0.0, 500.0);
                size[k] = if long { rng.range(100.0, 500.0) } else { rng.range(0.0, 0.5) };
            }
            boxed(min, size)
        })
        .collect();
    check_scene(&format!("long_thin D = {D} n = {n} seed = {seed:#x}"), &boxes, &[0.05, -0.005]);
}

#[test]
fn long_thin() {
    long_thin_for::<2>(71, 1200);
    long_thin_for::<3>(72, 1000);
}

fn big_box_over_many_small_for<const D: usize>(grid: usize) {
    // Small boxes of size 0.5 on a lattice of spacing 2: no two small boxes overlap.
    let mut boxes: Vec<Aabb<D>> = lattice::<D>(grid, &(0..=grid).map(|i| 2.0 * i as f32).collect::<Vec<_>>())
        .into_iter()
        .map(|mut b| {
            for k in 0..D {
                b.max[k] = b.min[k] + 0.5;
            }
            b
        })
        .collect();
    let small = boxes.len();
    assert_eq!(brute(&boxes, 0.0).len(), 0);
    let giant_at = small / 2;
    let giant = Aabb::new([-1.0e4; D], [1.0e4; D]);
    boxes.insert(giant_at, giant);
    // A big box over the middle of the lattice, and one that only touches small boxes'
    // faces (its min is exactly a small box's max).
    boxes.push(Aabb::new([0.5 * grid as f32; D], [1.5 * grid as f32; D]));
    boxes.push(Aabb::new([0.5; D], [2.0 * grid as f32 - 1.5; D]));
    let want = brute(&boxes, 0.0);
    let n = boxes.len();
    let giant_pairs: Vec<[u32; 2]> =
        want.iter().copied().filter(|p| p[0] as usize == giant_at || p[1] as usize == giant_at).collect();
    assert_eq!(giant_pairs.len(), n - 1, "the giant box overlaps all others");
    check_scene(&format!("big_box_over_many_small D = {D} n = {n}"), &boxes, &[0.75, -0.1]);
}

#[test]
fn big_box_over_many_small() {
    big_box_over_many_small_for::<1>(2000);
    big_box_over_many_small_for::<2>(45);
    big_box_over_many_small_for::<3>(13);
}

/// Boxes of sides 1 to 32 (powers of two, so they take different column levels) at
/// integer coordinates: many touch exactly, along the sweep axis too, across levels. A
/// coarse run's window for a finer range box must start at the first run box whose upper
/// bound reaches the range box's lower bound, ties included.
fn touching_across_levels_for<const D: usize>(seed: u64, n: usize) {
    let mut rng = Rng::new(seed);
    let side = 4 * (n as f64).powf(1.0 / D as f64) as u64 + 8;
    let boxes: Vec<Aabb<D>> = (0..n)
        .map(|_| {
            let s = (1u64 << rng.below(6)) as f32;
            let mut min = [0.0; D];
            let mut max = [0.0; D];
            for k in 0..D {
                min[k] = rng.below(side as usize) as f32;
                // Long along one axis now and then, so runs hold boxes of many lengths.
                max[k] = min[k] + if rng.chance(0.1) { 4.0 * s } else { s };
            }
            Aabb::new(min, max)
        })
        .collect();
    let want = brute(&boxes, 0.0);
    assert!(want.len() > n, "a dense scene: {} pairs", want.len());
    for method in [Method::Columns, Method::Auto] {
        let c = Config::default().with_method(method);
        assert_eq!(got(&boxes, &c), want, "{D}D seed {seed} {method:?}");
    }
    check_scene(&format!("touching_across_levels D = {D} seed {seed}"), &boxes, &[1.0, -0.5]);
}

#[test]
fn touching_across_levels() {
    for seed in 0..3 {
        touching_across_levels_for::<2>(seed, 3000);
        touching_across_levels_for::<3>(seed, 3000);
    }
}

fn dense_clump_for<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    // 1000 boxes within [0, 1.2e-3]^D, sizes up to 2e-4: some overlap, most do not.
    let mut clump: Vec<Aabb<D>> = uniform(&mut rng, 1000, 1.0e-3, 2.0e-4);
    let name = format!("dense_clump D = {D} seed = {seed:#x}");
    let want = brute(&clump, 0.0);
    assert!(
        !want.is_empty() && want.len() < choose2(clump.len()) / 2,
        "{name}: clump should be partially overlapping"
    );
    check_scene(&format!("{name} (alone)"), &clump, &[1.0e-5, -1.0e-5]);
    // The same clump inside a big, sparse world, so it falls in one cell of the grid.
    let far: Vec<Aabb<D>> = uniform(&mut rng, 200, 1.0e4, 10.0);
    let mut mixed = far.clone();
    mixed.splice(100..100, clump.drain(..));
    check_scene(&format!("{name} (in a big world)"), &mixed, &[1.0e-5]);
}

#[test]
fn dense_clump() {
    dense_clump_for::<1>(81);
    dense_clump_for::<2>(82);
    dense_clump_for::<3>(83);
}

fn power_of_two_scene<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(seed);
    let side = (n as f32).powf(1.0 / D as f32) * 2.0;
    uniform(&mut rng, n, side, 2.5)
}

fn check_power_of_two<const D: usize>(plus: bool) {
    for k in 6..=10u32 {
        let n = if plus { (1usize << k) + 1 } else { (1usize << k) - 1 };
        let seed = 0x9000 + k as u64 * 2 + plus as u64;
        let boxes = power_of_two_scene::<D>(n, seed);
        let name = format!("n = 2^{k} {} 1 = {n}, D = {D}, seed = {seed:#x}", if plus { "+" } else { "-" });
        let want = brute(&boxes, 0.0);
        assert!(!want.is_empty(), "{name}: scene should have pairs");
        for t in tuning_configs::<D>() {
            check_against(&name, &boxes, &t, &want).unwrap_or_else(|e| panic!("{e}"));
            let c = t.with_margin(0.3);
            check(&name, &boxes, &c).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn n_is_power_of_two_plus_one() {
    check_power_of_two::<1>(true);
    check_power_of_two::<2>(true);
    check_power_of_two::<3>(true);
}

#[test]
fn n_is_power_of_two_minus_one() {
    check_power_of_two::<1>(false);
    check_power_of_two::<2>(false);
    check_power_of_two::<3>(false);
}

fn duplicates_for<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    let base: Vec<Aabb<D>> = uniform(&mut rng, 300, 40.0, 2.0);
    for shuffled in [false, true] {
        let mut boxes: Vec<(usize, Aabb<D>)> = Vec::new();
        for (i, b) in base.iter().enumerate() {
            for _ in 0..2 + rng.below(4) {
                boxes.push((i, *b));
            }
        }
        if shuffled {
            rng.shuffle(&mut boxes);
        }
        let origin: Vec<usize> = boxes.iter().map(|p| p.0).collect();
        let boxes: Vec<Aabb<D>> = boxes.into_iter().map(|p| p.1).collect();
        let name = format!("duplicates D = {D} n = {} shuffled = {shuffled} seed = {seed:#x}", boxes.len());
        let want = brute(&boxes, 0.0);
        // Every two copies of the same box overlap.
        let copies_pairs = (0..boxes.len())
            .flat_map(|i| (i + 1..boxes.len()).map(move |j| (i, j)))
            .filter(|&(i, j)| origin[i] == origin[j])
            .count();
        let got_copies = want.iter().filter(|p| origin[p[0] as usize] == origin[p[1] as usize]).count();
        assert_eq!(got_copies, copies_pairs, "{name}: every two copies of a box overlap");
        check_scene(&name, &boxes, &[0.5, -0.1]);
    }
}

#[test]
fn duplicates() {
    duplicates_for::<1>(91);
    duplicates_for::<2>(92);
    duplicates_for::<3>(93);
}

/// Fixed larger scenes (up to n = 5000) under every tuning config.
#[test]
fn larger_seeded_scenes() {
    fn go<const D: usize>(seed: u64) {
        let mut rng = Rng::new(seed);
        let scenes: Vec<(&str, Vec<Aabb<D>>)> = vec![
            ("uniform 5000", uniform(&mut rng, 5000, 100.0, 2.0)),
            ("clumped 4000", clumped(&mut rng, 4000, 6, 200.0, 5.0, 1.0)),
            ("mixed big/small 3000", mixed_big_small(&mut rng, 3000, 200.0)),
        ];
        for (label, boxes) in scenes {
            let name = format!("larger_seeded_scenes {label} D = {D} seed = {seed:#x}");
            let want = brute(&boxes, 0.0);
            for t in tuning_configs::<D>() {
                check_against(&name, &boxes, &t, &want).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }
    go::<2>(0xA2);
    go::<3>(0xA3);
}

/// One `Broadphase` reused over scenes of very different sizes and shapes: scratch buffers
/// from an earlier run must never leak into a later one.
#[test]
fn broadphase_reuse_across_scenes() {
    fn go<const D: usize>(seed: u64) {
        let mut rng = Rng::new(seed);
        let scenes: Vec<Vec<Aabb<D>>> = vec![
            uniform(&mut rng, 3000, 60.0, 2.0),
            vec![],
            uniform(&mut rng, 10, 5.0, 2.0),
            vec![Aabb::new([1.0; D], [2.0; D]); 200],
            vec![Aabb::new([0.0; D], [1.0; D])],
            clumped(&mut rng, 2000, 3, 1.0e5, 1.0, 0.5),
            uniform(&mut rng, 3000, 60.0, 2.0),
            uniform(&mut rng, 7, 5.0, 2.0),
        ];
        for t in tuning_configs::<D>() {
            for margin in [0.0, 0.2] {
                let c = t.with_margin(margin);
                let mut bp = Broadphase::new(c).unwrap();
                let mut out = Vec::new();
                for (s, boxes) in scenes.iter().enumerate() {
                    let ctx = format!("broadphase_reuse D = {D} scene #{s} (n = {}) {c:?}", boxes.len());
                    bp.find_pairs(boxes, &mut out).unwrap_or_else(|e| panic!("{ctx}: {e:?}"));
                    let want = brute(boxes, margin);
                    compare(&ctx, boxes, margin, &out, &want).unwrap_or_else(|e| panic!("{e}"));
                    assert_eq!(bp.stats().pairs, out.len(), "{ctx}: stats().pairs");
                }
            }
        }
    }
    go::<1>(0xB1);
    go::<2>(0xB2);
    go::<3>(0xB3);
}

/// Results never depend on bounds: the same scene under many bounds gives identical output
/// (compared with each other, not only with brute force).
#[test]
fn bounds_never_change_results() {
    fn go<const D: usize>(seed: u64) {
        let mut rng = Rng::new(seed);
        // Kept small: bounds far smaller than the scene with max_columns_per_box = 4096 pile the
        // clamped boxes onto the grid's edge cells, which is slow (but must stay exact).
        let boxes: Vec<Aabb<D>> = clumped(&mut rng, 600, 4, 100.0, 10.0, 3.0);
        let reference = got(&boxes, &Config::default());
        let mut bounds = bounds_variants(&boxes);
        for _ in 0..8 {
            let mut min = [0.0; D];
            let mut max = [0.0; D];
            for k in 0..D {
                let a = rng.range(-300.0, 300.0);
                let b = rng.range(-300.0, 300.0);
                min[k] = a.min(b);
                max[k] = a.max(b);
            }
            bounds.push(Aabb::new(min, max));
        }
        for b in bounds {
            for t in tuning_configs::<D>() {
                let c = t.with_bounds(Some(b));
                let ctx = format!("bounds_never_change_results D = {D} seed = {seed:#x} {c:?}");
                compare(&ctx, &boxes, 0.0, &got(&boxes, &c), &reference).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }
    go::<2>(0xC2);
    go::<3>(0xC3);
}

/// The shapes of real scenes: a triangulated height field (a flat world, triangles sharing
/// vertices exactly) and a tiled level (exactly touching tiles, exact duplicates, rooms),
/// with ids in grid order, as a mesh or a map gives them; a scene of one dimension less
/// laid out on a plane (no thickness); four worlds far apart; ten copies of every box.
fn real_shapes_for<const D: usize>(seed: u64) {
    for n in [700usize, 2500] {
        for name in ["terrain", "tiles", "flat", "levels", "copies"] {
            let boxes = broadphase::internals::scene::by_name::<D>(name, n, seed).unwrap();
            let label = format!("{name} D = {D} n = {n} seed = {seed:#x}");
            assert!(!brute(&boxes, 0.0).is_empty(), "{label}: scene should have pairs");
            check_scene(&label, &boxes, &[1.0e-3, -1.0e-3, 0.5]);
        }
    }
}

#[test]
fn real_shapes() {
    real_shapes_for::<1>(0xA1);
    real_shapes_for::<2>(0xA2);
    real_shapes_for::<3>(0xA3);
}

/// Large scenes take paths that small ones do not: 8-bit radix digits (from 2^19 entries),
/// the parallel fill of the whole-scene sweep (from 2^15 boxes), many sweep chunks. Brute
/// force is too slow there, so the two algorithms check each other.
#[test]
fn large_scenes_agree_across_methods() {
    fn go<const D: usize>(name: &str, n: usize) {
        let boxes = broadphase::internals::scene::by_name::<D>(name, n, 7).unwrap();
        let ctx = format!("{name} D = {D} n = {n}");
        let (mut cells, mut sweep) = (Vec::new(), Vec::new());
        let mut bp = Broadphase::new(Config::default().with_method(Method::Columns)).unwrap();
        bp.find_pairs(&boxes, &mut cells).unwrap();
        let entries = bp.stats().entries;
        assert!(entries >= 1 << 19, "{ctx}: the 8-bit digit path needs 2^19 entries, got {entries}");
        let mut bp = Broadphase::new(Config::default().with_method(Method::Sweep)).unwrap();
        bp.find_pairs(&boxes, &mut sweep).unwrap();
        assert!(cells.len() > n / 2, "{ctx}: scene should have pairs");
        assert!(cells == sweep, "{ctx}: the column pipeline and the whole-scene sweep differ");
    }
    go::<2>("uniform", 420_000);
    go::<3>("uniform", 400_000);
    go::<3>("terrain", 400_000);
}
