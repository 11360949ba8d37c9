//! Larger and structured scenes: a big box over many small, touching across levels,
//! dense clumps, sizes at powers of two, duplicates, seeded and real shapes, a finder
//! reused across scenes, bounds that never change results, and the methods agreeing on
//! large scenes.

use super::edges::lattice;
use super::*;

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
            let boxes = broadphase::internals::by_name::<D>(name, n, seed).unwrap();
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
        let boxes = broadphase::internals::by_name::<D>(name, n, 7).unwrap();
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
