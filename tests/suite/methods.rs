//! Every method against `brute_force_pairs`, in one property test: random and adversarial
//! scenes in 1D, 2D and 3D, margins positive, zero and negative, the same bytes on pools
//! of 1, 2, 3, 4, 7 and 16 threads, and `Config::max_pairs` met exactly (one pair under
//! it is an error that leaves the finder usable); `find_pairs_unsorted` likewise, its
//! bytes the same on every pool and, once sorted, the brute force's, and the bound an
//! error there too. A new method joins
//! through `Method::ALL`.

use crate::common;

use broadphase::internals::{cliffs, scene as scenes};
use broadphase::{brute_force_pairs, find_pairs_with, Aabb, Broadphase, Config, Error, Method};
use common::Rng;
use common::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::sync::OnceLock;

/// The methods checked, each against the brute force: all of them.
const METHODS: [Method; Method::ALL.len()] = Method::ALL;

/// Pools of 1, 2, 3, 4, 7 and 16 threads, built once for every case.
fn pools() -> &'static [(usize, rayon::ThreadPool)] {
    static POOLS: OnceLock<Vec<(usize, rayon::ThreadPool)>> = OnceLock::new();
    POOLS.get_or_init(|| {
        [1, 2, 3, 4, 7, 16]
            .into_iter()
            .map(|t| (t, rayon::ThreadPoolBuilder::new().num_threads(t).build().expect("thread pool")))
            .collect()
    })
}

/// Adversarial scenes beyond `structured`'s, by kind: far-parked at 1e9 and near
/// `f32::MAX`, identical, zero size at one spot, sizes over seven orders of magnitude,
/// boxes spanning many cells and tree levels, levels far apart, a staircase of planks,
/// sticks across every column.
const ADVERSARIAL: u8 = 9;

fn adversarial<const D: usize>(seed: u64, kind: u8, n: usize) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(seed);
    match kind {
        0 => cliffs::parked(n, 10.0, 1e9, seed),
        1 => cliffs::parked(n, 5.0, 3e38, seed),
        2 => vec![Aabb::new([-1.5; D], [2.5; D]); n],
        3 => vec![Aabb::new([7.0; D], [7.0; D]); n],
        4 => (0..n)
            .map(|_| {
                let size = rng.log_uniform(-4.0, 3.0);
                let min: [f32; D] = std::array::from_fn(|_| rng.range(0.0, 2000.0));
                boxed(min, [size; D])
            })
            .collect(),
        5 => {
            // A few boxes as big as the world over many small ones: every level of columns.
            let mut v = mixed_big_small::<D>(&mut rng, n, 100.0);
            v.extend((0..n / 50 + 1).map(|_| boxed([rng.range(-10.0, 0.0); D], [rng.range(50.0, 200.0); D])));
            v
        }
        6 => scenes::levels(n, seed),
        7 => cliffs::staircase(n),
        _ => cliffs::sticks(n, seed),
    }
}

/// Every method's pairs on `boxes` equal the brute force's on every pool, as the same
/// bytes; and under a bound of one pair fewer, every method fails with `TooManyPairs`,
/// then its finder answers the scene less the box that closes the last pair.
fn check<const D: usize>(name: &str, boxes: &[Aabb<D>], margin: f32) -> Result<(), TestCaseError> {
    let base = Config::<D>::default().with_margin(margin);
    let want = brute_force_pairs(boxes, &base).map_err(|e| TestCaseError::fail(format!("{name}: {e:?}")))?;
    for method in METHODS {
        let config = base.with_method(method);
        let ctx = format!("{name}, D = {D}, n = {}, margin {margin}, {method:?}", boxes.len());
        let mut found: Option<Vec<[u32; 2]>> = None;
        for (t, pool) in pools() {
            let got = pool
                .install(|| find_pairs_with(boxes, &config))
                .map_err(|e| TestCaseError::fail(format!("{ctx}, {t} threads: {e:?}")))?;
            compare(&format!("{ctx}, {t} threads"), boxes, margin, &got, &want)
                .map_err(TestCaseError::fail)?;
            // Unsorted: the same bytes on every pool, and once sorted the brute force's.
            let mut bp = Broadphase::new(config).unwrap();
            let mut unsorted = vec![[3, 4]];
            pool.install(|| bp.find_pairs_unsorted(boxes, &mut unsorted))
                .map_err(|e| TestCaseError::fail(format!("{ctx}, unsorted, {t} threads: {e:?}")))?;
            match &found {
                None => found = Some(unsorted.clone()),
                Some(f) => prop_assert!(&unsorted == f, "{}, unsorted, {} threads vs 1", ctx, t),
            }
            unsorted.sort_unstable();
            compare(&format!("{ctx}, unsorted, {t} threads"), boxes, margin, &unsorted, &want)
                .map_err(TestCaseError::fail)?;
        }
        let Some(&[_, last]) = want.last() else { continue };
        let limit = want.len() - 1;
        let mut bp = Broadphase::new(config.with_max_pairs(Some(limit))).unwrap();
        let mut out = vec![[3, 4]];
        prop_assert_eq!(bp.find_pairs(boxes, &mut out), Err(Error::TooManyPairs { limit }), "{}", ctx);
        prop_assert!(out.is_empty(), "{}: output left after the error", ctx);
        out.push([3, 4]);
        prop_assert_eq!(
            bp.find_pairs_unsorted(boxes, &mut out),
            Err(Error::TooManyPairs { limit }),
            "{}",
            ctx
        );
        prop_assert!(out.is_empty(), "{}: output left after the unsorted call's error", ctx);
        let mut fewer = boxes.to_vec();
        fewer.remove(last as usize);
        let want_fewer = brute_force_pairs(&fewer, &base).unwrap();
        bp.find_pairs(&fewer, &mut out).map_err(|e| TestCaseError::fail(format!("{ctx}, after: {e:?}")))?;
        compare(&format!("{ctx}, the call after the error"), &fewer, margin, &out, &want_fewer)
            .map_err(TestCaseError::fail)?;
        // The method that ran: the one asked for, or the one `Auto` chose.
        let ran = bp.stats().method;
        prop_assert!(
            if method == Method::Auto { ran != Method::Auto } else { ran == method },
            "{}: {:?} ran",
            ctx,
            ran
        );
    }
    Ok(())
}

/// One dimension of a case: the random scene, and the seeded one (`structured`'s kinds,
/// then the adversarial ones).
fn check_dim<const D: usize>(
    random: &[Aabb<D>],
    seed: u64,
    kind: u8,
    n: usize,
    margin: f32,
) -> Result<(), TestCaseError> {
    check("random", random, margin)?;
    let (name, boxes) = if kind < STRUCTURED {
        (format!("structured kind {kind}"), structured::<D>(seed, kind, n))
    } else {
        (format!("adversarial kind {}", kind - STRUCTURED), adversarial::<D>(seed, kind - STRUCTURED, n))
    };
    check(&format!("{name}, seed {seed:#x}"), &boxes, margin)
}

/// `structured`'s kinds.
const STRUCTURED: u8 = 7;

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_method_is_exact_and_the_same_on_any_pool(
        b1 in scene::<1>(200),
        b2 in scene::<2>(200),
        b3 in scene::<3>(200),
        seed in any::<u64>(),
        kind in 0..STRUCTURED + ADVERSARIAL,
        // Mostly small; now and then enough boxes for the parallel paths' work items.
        n in prop_oneof![7 => 0usize..300, 1 => 300usize..3000],
        margin in margin(),
    ) {
        check_dim::<1>(&b1, seed, kind, n, margin)?;
        check_dim::<2>(&b2, seed, kind, n, margin)?;
        check_dim::<3>(&b3, seed, kind, n, margin)?;
    }
}
