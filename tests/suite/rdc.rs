//! Recursive Dimensional Clustering: the seeds' worked example, the clustering invariants,
//! pairs against `brute_force_pairs` on random and adversarial scenes in 1D, 2D and 3D,
//! RDC inside the core pipeline's crowded cells, and the same bytes for any thread count.

use crate::common::touching;
use broadphase::internals::scene::Rng;
use broadphase::{
    brute_force_pairs, find_pairs_with, Aabb, BoxProblem, Broadphase, Clusters, Config, Error, Method, Rdc,
    Refine,
};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Scenes
// ---------------------------------------------------------------------------------------------

/// `n` boxes with lower corners uniform in `[0, world]^D` and sides up to `size`.
fn random<const D: usize>(rng: &mut Rng, n: usize, world: f32, size: f32) -> Vec<Aabb<D>> {
    (0..n)
        .map(|_| {
            let min: [f32; D] = std::array::from_fn(|_| rng.next_f32() * world);
            let s = size * rng.next_f32() * rng.next_f32();
            Aabb::new(min, std::array::from_fn(|k| min[k] + s * (0.2 + rng.next_f32())))
        })
        .collect()
}

/// Unit cubes tiling a grid face to face: every neighbour touches, nothing else overlaps.
fn tiled<const D: usize>(side: usize) -> Vec<Aabb<D>> {
    let n = side.pow(D as u32);
    (0..n)
        .map(|i| {
            let min: [f32; D] = std::array::from_fn(|k| ((i / side.pow(k as u32)) % side) as f32);
            Aabb::new(min, std::array::from_fn(|k| min[k] + 1.0))
        })
        .collect()
}

/// Points (zero extent) on a small grid, with repeats.
fn zero_extent<const D: usize>(rng: &mut Rng, n: usize) -> Vec<Aabb<D>> {
    (0..n)
        .map(|_| {
            let p: [f32; D] = std::array::from_fn(|_| rng.below(6) as f32);
            Aabb::new(p, p)
        })
        .collect()
}

/// Every box contains the origin.
fn all_overlapping<const D: usize>(rng: &mut Rng, n: usize) -> Vec<Aabb<D>> {
    (0..n)
        .map(|_| {
            Aabb::new(
                std::array::from_fn(|_| -0.1 - rng.next_f32()),
                std::array::from_fn(|_| 0.1 + rng.next_f32()),
            )
        })
        .collect()
}

/// Boxes touching at signed zeros: `max = -0.0` against `min = +0.0` (they overlap).
fn signed_zeros<const D: usize>() -> Vec<Aabb<D>> {
    let mut v = Vec::new();
    for k in 0..D {
        let mut a = Aabb::new([-1.0; D], [1.0; D]);
        a.max[k] = -0.0;
        let mut b = Aabb::new([-1.0; D], [1.0; D]);
        b.min[k] = 0.0;
        v.extend([a, b]);
    }
    v.push(Aabb::new([0.0; D], [0.0; D]));
    v.push(Aabb::new([-0.0; D], [-0.0; D]));
    v
}

/// Long planks along x stacked along the other axes (shelves, floors): every pair overlaps
/// on x, few overlap on all axes. One-axis sweep-and-prune's worst case; RDC splits them.
fn planks<const D: usize>(n: usize) -> Vec<Aabb<D>> {
    (0..n)
        .map(|i| {
            let mut b = Aabb::new([0.0; D], [100.0 + (i % 7) as f32; D]);
            let y = ((i * 7919) % n) as f32 * 100.0 / n as f32;
            let t = if i % 10 == 0 { 0.07 } else { 0.001 };
            for k in 1..D {
                b.min[k] = y;
                b.max[k] = y + t;
            }
            b
        })
        .collect()
}

/// The peeling staircase: every split separates one box from the rest, alternating axes
/// (2D). No pair overlaps. RDC's known worst case for work; it must terminate, stay exact
/// and not overflow a stack.
fn staircase(n: usize) -> Vec<Aabb<2>> {
    const FAR: f32 = 1.0e6;
    (0..n)
        .map(|k| {
            let k_f = k as f32;
            let (short, long) = ([k_f, k_f + 0.5], [k_f - 0.4, FAR]);
            if k % 2 == 0 {
                Aabb::new([short[0], long[0]], [short[1], long[1]])
            } else {
                Aabb::new([long[0], short[0]], [long[1], short[1]])
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

/// True when `axis` separates the boxes of group `g` (a gap in the union of projections).
fn splits_on<const D: usize>(grown: &[Aabb<D>], g: &[u32], axis: usize) -> bool {
    let mut iv: Vec<(f32, f32)> =
        g.iter().map(|&i| (grown[i as usize].min[axis], grown[i as usize].max[axis])).collect();
    iv.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut reach = iv[0].1;
    for &(lo, hi) in &iv[1..] {
        if lo > reach {
            return true;
        }
        reach = reach.max(hi);
    }
    false
}

/// Pairs equal brute force; clusters are well formed, hold every pair inside one group,
/// leave no splittable group above `min_group_size`, and isolate inverted boxes.
fn check<const D: usize>(name: &str, boxes: &[Aabb<D>], rdc: &Rdc<D>) -> Clusters {
    let cfg = Config::default().with_margin(rdc.margin);
    let want = brute_force_pairs(boxes, &cfg).unwrap();
    let got = rdc.pairs(boxes).unwrap();
    assert_eq!(got.len(), want.len(), "{name} D={D} {rdc:?}: pair count");
    assert_eq!(got, want, "{name} D={D} {rdc:?}");
    let c = rdc.clusters(boxes).unwrap();
    c.validate().unwrap_or_else(|e| panic!("{name} D={D}: {e}"));
    assert_eq!(c.group_of.len(), boxes.len());
    for &[i, j] in &want {
        assert_eq!(c.group_of[i as usize], c.group_of[j as usize], "{name} D={D}: pair {i},{j} split");
    }
    let grown: Vec<Aabb<D>> = boxes.iter().map(|b| b.grown(rdc.margin)).collect();
    for (g, m) in c.iter().enumerate() {
        if m.len() > 1 {
            assert!(m.iter().all(|&i| !grown[i as usize].is_inverted()), "{name}: inverted box grouped");
        }
        if m.len() > rdc.min_group_size {
            for axis in 0..D {
                assert!(
                    !splits_on(&grown, m, axis),
                    "{name} D={D}: group {g} ({} boxes) splits on {axis}",
                    m.len()
                );
            }
        }
    }
    c
}

fn rdcs<const D: usize>() -> Vec<Rdc<D>> {
    let rev: [usize; D] = std::array::from_fn(|k| D - 1 - k);
    vec![
        Rdc::default(),
        Rdc { min_group_size: 1, ..Rdc::default() },
        Rdc { min_group_size: 3, axis_order: rev, ..Rdc::default() },
        Rdc { min_group_size: 1, margin: 0.25, ..Rdc::default() },
        Rdc { min_group_size: 2, margin: -0.1, axis_order: rev },
        Rdc { min_group_size: 1000, ..Rdc::default() },
    ]
}

fn random_scenes<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    for &(n, world, size) in &[
        (0, 1.0, 1.0),
        (1, 1.0, 1.0),
        (2, 1.0, 1.0),
        (257, 100.0, 5.0),
        (1500, 100.0, 3.0),
        (800, 10.0, 4.0),
        (600, 1.0, 0.01),
    ] {
        let boxes = random::<D>(&mut rng, n, world, size);
        for rdc in rdcs::<D>() {
            check(&format!("random n={n} world={world}"), &boxes, &rdc);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The seeds' worked example
// ---------------------------------------------------------------------------------------------

/// "Subdividing along the x-axis results in one group [A, B, C]. Second pass along y-axis
/// splits the group into [B], [A, C]. Subdividing along the x-axis again splits [A, C], so
/// finally we get the correct result: [A], [B], [C]."
#[test]
fn seed_worked_example() {
    let a = Aabb::new([0.0, 0.0], [2.0, 1.0]);
    let b = Aabb::new([1.0, 3.0], [4.0, 4.0]); // overlaps A and C on x, neither on y
    let c = Aabb::new([3.0, 0.0], [5.0, 1.0]); // overlaps A on y only
    let abc = [a, b, c];

    // Pass 1, x only: one group.
    let x_only: Vec<Aabb<1>> = abc.iter().map(|r| Aabb::new([r.min[0]], [r.max[0]])).collect();
    let c1 = Rdc::<1> { min_group_size: 1, ..Rdc::default() }.clusters(&x_only).unwrap();
    assert_eq!(c1.iter().collect::<Vec<_>>(), vec![&[0, 1, 2][..]]);

    // Pass 2, y: [B], [A, C]; a group of 2 is final with `min_group_size = 2`.
    let c2 = Rdc::<2> { min_group_size: 2, ..Rdc::default() }.clusters(&abc).unwrap();
    assert_eq!(c2.iter().collect::<Vec<_>>(), vec![&[0, 2][..], &[1][..]]);
    assert_eq!(c2.group_of, vec![0, 1, 0]);

    // Pass 3, x again: [A], [B], [C].
    let rdc = Rdc::<2> { min_group_size: 1, ..Rdc::default() };
    let c3 = check("seed example", &abc, &rdc);
    assert_eq!(c3.iter().collect::<Vec<_>>(), vec![&[0][..], &[1][..], &[2][..]]);
    assert!(rdc.pairs(&abc).unwrap().is_empty());

    // Starting on y gives the same final groups.
    let c4 = Rdc::<2> { min_group_size: 1, axis_order: [1, 0], ..Rdc::default() }.clusters(&abc).unwrap();
    assert_eq!(c4, c3);
}

#[test]
fn touching_boxes_stay_together_and_negative_margin_separates_them() {
    let boxes = [Aabb::new([0.0, 0.0], [1.0, 1.0]), Aabb::new([1.0, 0.0], [2.0, 1.0])];
    let rdc = Rdc::<2> { min_group_size: 1, ..Rdc::default() };
    assert_eq!(rdc.clusters(&boxes).unwrap().len(), 1);
    assert_eq!(rdc.pairs(&boxes).unwrap(), vec![[0, 1]]);
    let apart = Rdc { margin: -0.01, ..rdc };
    assert_eq!(apart.clusters(&boxes).unwrap().len(), 2);
    assert!(apart.pairs(&boxes).unwrap().is_empty());
}

#[test]
fn inverted_by_negative_margin_is_a_singleton_in_no_pair() {
    // Box 1 is thinner than twice the margin: inverted. Box 0 and 2 overlap box 1's core.
    let boxes = [
        Aabb::new([0.0, 0.0], [2.0, 2.0]),
        Aabb::new([0.5, 0.5], [0.6, 1.5]),
        Aabb::new([0.4, 0.4], [1.0, 1.0]),
    ];
    let rdc = Rdc::<2> { min_group_size: 1, margin: -0.1, ..Rdc::default() };
    let c = check("inverted", &boxes, &rdc);
    assert_eq!(c.iter().collect::<Vec<_>>(), vec![&[0, 2][..], &[1][..]]);
    assert_eq!(rdc.pairs(&boxes).unwrap(), vec![[0, 2]]);
}

// ---------------------------------------------------------------------------------------------
// Against brute force
// ---------------------------------------------------------------------------------------------

#[test]
fn random_1d() {
    for seed in 0..3 {
        random_scenes::<1>(seed);
    }
}

#[test]
fn random_2d() {
    for seed in 0..3 {
        random_scenes::<2>(seed);
    }
}

#[test]
fn random_3d() {
    for seed in 0..3 {
        random_scenes::<3>(seed);
    }
}

/// The entry of `n` for dimension `D` (scene sizes that keep each dimension's box count
/// comparable).
fn per_dim<const D: usize>(n: [usize; 3]) -> usize {
    n[D - 1]
}

fn adversarial<const D: usize>() {
    let mut rng = Rng::new(99 + D as u64);
    let scenes: Vec<(&str, Vec<Aabb<D>>)> = vec![
        ("empty", vec![]),
        ("one_box", vec![Aabb::new([1.0; D], [2.0; D])]),
        ("all_identical", vec![Aabb::new([1.0; D], [2.0; D]); 300]),
        ("zero_extent", zero_extent(&mut rng, 400)),
        ("touching", touching(&mut rng, 600, 20)),
        ("tiled", tiled(per_dim::<D>([200, 15, 7]))),
        ("all_overlapping", all_overlapping(&mut rng, 700)),
        ("signed_zeros", signed_zeros()),
        ("planks", planks(1500)),
        ("n_is_power_of_two_plus_one", random(&mut rng, 1025, 30.0, 2.0)),
        ("huge_coordinates", {
            let mut v = random(&mut rng, 200, 1.0, 0.5);
            v.push(Aabb::new([-3.0e38; D], [3.0e38; D]));
            v.push(Aabb::new([f32::MAX; D], [f32::MAX; D]));
            v.push(Aabb::new([-f32::MAX; D], [-1.0e30; D]));
            v
        }),
    ];
    for (name, boxes) in &scenes {
        for rdc in rdcs::<D>() {
            check(name, boxes, &rdc);
        }
    }
}

#[test]
fn adversarial_1d() {
    adversarial::<1>();
}

#[test]
fn adversarial_2d() {
    adversarial::<2>();
}

#[test]
fn adversarial_3d() {
    adversarial::<3>();
}

#[test]
fn staircase_peels_one_box_per_split_and_terminates() {
    let boxes = staircase(3000);
    let rdc = Rdc::<2> { min_group_size: 1, ..Rdc::default() };
    let c = check("staircase", &boxes, &rdc);
    assert_eq!(c.len(), boxes.len(), "every box is its own group");
    assert!(rdc.pairs(&boxes).unwrap().is_empty());
}

#[test]
fn all_identical_is_one_group_of_all_pairs() {
    let n = 2000;
    let boxes = vec![Aabb::new([0.0; 3], [1.0; 3]); n];
    let rdc = Rdc::<3>::default();
    let c = rdc.clusters(&boxes).unwrap();
    assert_eq!(c.len(), 1);
    let p = rdc.pairs(&boxes).unwrap();
    assert_eq!(p.len(), n * (n - 1) / 2);
    assert!(p.windows(2).all(|w| w[0] < w[1]));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Small scenes on a coarse grid (touching and identical boxes are common).
    #[test]
    fn prop_pairs_and_clusters(
        raw in prop::collection::vec(((0i32..24, 0i32..24), (0i32..6, 0i32..6)), 0..120),
        min_group_size in 1usize..6,
        margin in prop::sample::select(vec![0.0f32, 0.5, -0.25]),
    ) {
        let boxes: Vec<Aabb<2>> = raw
            .iter()
            .map(|&((x, y), (w, h))| {
                let half = |v: i32| v as f32 * 0.5;
                Aabb::new([half(x), half(y)], [half(x + w), half(y + h)])
            })
            .collect();
        check("proptest", &boxes, &Rdc { min_group_size, margin, ..Rdc::default() });
    }
}

// ---------------------------------------------------------------------------------------------
// RDC inside the core pipeline's crowded cells
// ---------------------------------------------------------------------------------------------

fn pipeline_rdc<const D: usize>(name: &str, boxes: &[Aabb<D>], margin: f32, crowded_threshold: u32) -> usize {
    let cfg = Config::default()
        .with_refine(Refine::Rdc)
        .with_crowded_threshold(crowded_threshold)
        .with_margin(margin)
        .with_method(Method::Columns);
    let want = brute_force_pairs(boxes, &cfg).unwrap();
    assert_eq!(find_pairs_with(boxes, &cfg).unwrap(), want, "{name} D={D} margin={margin}");
    let mut bp = Broadphase::new(cfg).unwrap();
    let mut out = Vec::new();
    bp.find_pairs(boxes, &mut out).unwrap();
    assert_eq!(out, want);
    bp.stats().rdc_splits
}

fn pipeline_scenes<const D: usize>() -> usize {
    let mut rng = Rng::new(7 * D as u64);
    let mut splits = 0;
    let scenes: Vec<(&str, Vec<Aabb<D>>)> = vec![
        ("random", random(&mut rng, 1500, 100.0, 5.0)),
        ("dense", random(&mut rng, 1200, 10.0, 3.0)),
        ("tiny", random(&mut rng, 800, 1.0, 0.001)),
        ("touching", touching(&mut rng, 800, 16)),
        ("tiled", tiled(per_dim::<D>([300, 20, 8]))),
        ("zero_extent", zero_extent(&mut rng, 500)),
        ("all_overlapping", all_overlapping(&mut rng, 600)),
        ("all_identical", vec![Aabb::new([3.0; D], [4.0; D]); 200]),
        // Big enough that crowded cells hold more than `min_group_size` boxes.
        ("planks", planks(if D == 2 { 8000 } else { 2000 })),
        ("big_and_small", {
            let mut v = random(&mut rng, 1000, 50.0, 1.0);
            v.extend(random(&mut rng, 20, 50.0, 60.0));
            v
        }),
    ];
    for (name, boxes) in &scenes {
        for &margin in &[0.0, 0.3, -0.05] {
            splits += pipeline_rdc(name, boxes, margin, 1);
        }
        splits += pipeline_rdc(name, boxes, 0.0, 64);
    }
    splits
}

#[test]
fn pipeline_with_rdc_refinement_1d() {
    assert!(pipeline_scenes::<1>() > 0, "RDC should split some crowded cell");
}

#[test]
fn pipeline_with_rdc_refinement_2d() {
    assert!(pipeline_scenes::<2>() > 0, "RDC should split some crowded cell");
}

#[test]
fn pipeline_with_rdc_refinement_3d() {
    assert!(pipeline_scenes::<3>() > 0, "RDC should split some crowded cell");
}

// ---------------------------------------------------------------------------------------------
// Determinism and scale
// ---------------------------------------------------------------------------------------------

fn on_threads<R: Send>(t: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap().install(f)
}

/// FNV-1a over the output words, to name a mismatch compactly.
fn hash(words: impl Iterator<Item = u32>) -> u64 {
    words.fold(0xcbf2_9ce4_8422_2325, |h, w| (h ^ w as u64).wrapping_mul(0x100_0000_01b3))
}

fn same_for_all_thread_counts<const D: usize>(name: &str, boxes: &[Aabb<D>], rdc: &Rdc<D>) -> Clusters {
    let reference = on_threads(1, || (rdc.pairs(boxes).unwrap(), rdc.clusters(boxes).unwrap()));
    let sweep = find_pairs_with(boxes, &Config::default().with_margin(rdc.margin).with_method(Method::Sweep))
        .unwrap();
    assert_eq!(reference.0, sweep, "{name}: RDC pairs differ from the sweep's");
    reference.1.validate().unwrap();
    for t in [2, 3, 4, 7, 16] {
        let got = on_threads(t, || (rdc.pairs(boxes).unwrap(), rdc.clusters(boxes).unwrap()));
        assert_eq!(
            hash(got.0.iter().flatten().copied()),
            hash(reference.0.iter().flatten().copied()),
            "{name}: pairs differ on {t} threads"
        );
        assert!(got.0 == reference.0 && got.1 == reference.1, "{name}: output differs on {t} threads");
    }
    reference.1
}

#[test]
fn same_bytes_for_1_2_3_4_7_16_threads() {
    let mut rng = Rng::new(2024);
    // Eight clumps apart on x, each sparse on y: parallel keys on the first split (more
    // than 32768 members), a task per clump, many groups.
    let sparse: Vec<Aabb<2>> = (0..60_000)
        .map(|i| {
            let (x, y) = ((i % 8) as f32 * 1000.0 + rng.next_f32() * 500.0, rng.next_f32() * 100_000.0);
            Aabb::new([x, y], [x + 6.0 * rng.next_f32(), y + 6.0 * rng.next_f32()])
        })
        .collect();
    let c = same_for_all_thread_counts("sparse_2d", &sparse, &Rdc { min_group_size: 1, ..Rdc::default() });
    assert!(c.len() > 10_000, "the sparse scene should split into many groups: {}", c.len());
    same_for_all_thread_counts("sparse_2d_default", &sparse, &Rdc::default());
    // One group that no axis splits: the parallel group sweep.
    let dense = all_overlapping::<3>(&mut rng, 5000);
    same_for_all_thread_counts("all_overlapping_3d", &dense, &Rdc::default());
    let clumps = random::<3>(&mut rng, 20_000, 60.0, 3.0);
    same_for_all_thread_counts("clumps_3d", &clumps, &Rdc { margin: 0.2, ..Rdc::default() });
    let line = random::<1>(&mut rng, 40_000, 50_000.0, 3.0);
    same_for_all_thread_counts("line_1d", &line, &Rdc::default());
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

#[test]
fn invalid_settings_are_refused() {
    let boxes = [Aabb::new([0.0; 3], [1.0; 3])];
    let bad = |r: Rdc<3>, field: &str| match r.pairs(&boxes) {
        Err(Error::InvalidConfig { field: f, .. }) => assert_eq!(f, field),
        other => panic!("{r:?}: expected InvalidConfig {field}, got {other:?}"),
    };
    bad(Rdc { min_group_size: 0, ..Rdc::default() }, "min_group_size");
    bad(Rdc { margin: f32::NAN, ..Rdc::default() }, "margin");
    bad(Rdc { margin: f32::INFINITY, ..Rdc::default() }, "margin");
    bad(Rdc { axis_order: [0, 0, 1], ..Rdc::default() }, "axis_order");
    bad(Rdc { axis_order: [0, 1, 3], ..Rdc::default() }, "axis_order");
    assert!(Rdc::<3> { axis_order: [2, 0, 1], ..Rdc::default() }.validate().is_ok());
    assert!(Rdc::<3>::default().clusters(&boxes).is_ok());
}

#[test]
fn first_bad_box_is_reported() {
    let mut boxes = vec![Aabb::new([0.0; 2], [1.0; 2]); 10];
    boxes[7].min[1] = f32::NAN;
    boxes[4].max[0] = -1.0;
    let want = Err(Error::InvalidBox { index: 4, problem: BoxProblem::MinGreaterThanMax { axis: 0 } });
    assert_eq!(Rdc::<2>::default().pairs(&boxes), want);
    assert_eq!(Rdc::<2>::default().clusters(&boxes).map(|_| ()), want.map(|_: Vec<[u32; 2]>| ()));
}
