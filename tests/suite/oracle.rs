//! `find_pairs` / `find_pairs_with` / `Broadphase` against the O(n^2) reference
//! `brute_force_pairs`: random scenes under random configs (proptest, here), and named
//! adversarial scenes, each under many configs and bounds (`oracle/edges.rs`,
//! `oracle/layouts.rs`, `oracle/values.rs`, `oracle/scenes.rs`).

use crate::common;

use broadphase::{brute_force_pairs, find_pairs, find_pairs_with, Aabb, Broadphase, Config, Method, Refine};
use common::Rng;
use common::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

// =============================================================================================
// Proptest strategies
// =============================================================================================

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
    // Auto most often; each forced method too, the tree and the grid among them.
    // Auto most often; each forced method too, the trees among them.
    let method = prop_oneof![
        4 => Just(Method::Auto),
        1 => Just(Method::Columns),
        1 => Just(Method::Sweep),
        1 => Just(Method::Tree),
        1 => Just(Method::Rdc),
        1 => Just(Method::BruteForce),
        1 => Just(Method::Grid),
        1 => Just(Method::Quadtree),
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

/// The statistics of one run of a fresh finder.
fn stats_of<const D: usize>(boxes: &[Aabb<D>], config: Config<D>) -> broadphase::Stats {
    let mut bp = Broadphase::new(config).unwrap();
    bp.find_pairs(boxes, &mut Vec::new()).unwrap();
    bp.stats().clone()
}

#[path = "oracle/edges.rs"]
mod edges;
#[path = "oracle/layouts.rs"]
mod layouts;
#[path = "oracle/scenes.rs"]
mod scenes;
#[path = "oracle/values.rs"]
mod values;
