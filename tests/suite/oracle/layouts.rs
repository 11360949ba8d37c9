//! Layouts that test the plan as well as the pairs: a box over the whole scene, far
//! islands, ids cycling through clumps, dense scenes under the memory cap, and which
//! scenes `Method::Auto` sweeps whole.

use super::*;

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
/// faster in the columns), and is higher where the boxes' sizes spread widely (many
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
    assert!(!chose_cells::<2>(8_000, 48.0, false), "2D, 8k boxes at 48 tests a box: swept");
    assert!(chose_cells::<2>(8_000, 96.0, false), "2D, 8k boxes at 96 tests a box: columns");
    assert!(!chose_cells::<2>(8_000, 96.0, true), "2D, 8k boxes of spread sizes at 96: swept");
    assert!(chose_cells::<2>(60_000, 64.0, false), "2D, 60k boxes at 64 tests a box: columns");
    assert!(!chose_cells::<2>(60_000, 64.0, true), "2D, 60k boxes of spread sizes at 64: swept");
    assert!(!chose_cells::<2>(60_000, 8.0, false), "2D, 60k boxes at 8 tests a box: swept");
    assert!(!chose_cells::<3>(8_000, 32.0, false), "3D, 8k boxes at 32 tests a box: swept");
    assert!(chose_cells::<3>(8_000, 96.0, false), "3D, 8k boxes at 96 tests a box: columns");
    assert!(chose_cells::<3>(60_000, 64.0, false), "3D, 60k boxes at 64 tests a box: columns");
    assert!(!chose_cells::<3>(60_000, 64.0, true), "3D, 60k boxes of spread sizes at 64: swept");
    assert!(!chose_cells::<3>(60_000, 24.0, false), "3D, 60k boxes at 24 tests a box: swept");
}
