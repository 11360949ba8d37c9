//! The grid against the brute force, its plan's invariants, and its buffers' reuse.

use super::plan::{level_of, Quant, LEVELS};
use super::Grid;
use crate::internals::scene;
use crate::kernels::pair_sort::PairBudget;
use crate::{brute_force_pairs, Aabb, Config};

/// The grid's pairs on `boxes` grown by `margin` (bounds and bulk as the scan finds them,
/// the bulk trimmed), checked against the brute force, with the built grid.
fn agree<const D: usize>(name: &str, boxes: &[Aabb<D>], margin: f32) -> Grid<D> {
    let mut grid = Grid::default();
    let got = run(&mut grid, boxes, margin);
    let want = brute_force_pairs(boxes, &Config::default().with_margin(margin)).unwrap();
    assert!(got == want, "{name}, D = {D}, margin {margin}: {} pairs, want {}", got.len(), want.len());
    grid
}

fn run<const D: usize>(grid: &mut Grid<D>, boxes: &[Aabb<D>], margin: f32) -> Vec<[u32; 2]> {
    let full = crate::choose::scan_scene(boxes, margin);
    let mut bulk = full;
    bulk.trim_boxes(boxes, margin);
    grid.build(boxes, margin, Aabb { min: full.min, max: full.max }, Aabb { min: bulk.min, max: bulk.max });
    grid.validate().unwrap_or_else(|e| panic!("D = {D}: {e}"));
    let budget = PairBudget::new(None);
    let mut out = vec![[9, 9]];
    grid.pairs_into(boxes.len(), &budget, &mut out);
    budget.verdict().unwrap();
    out
}

fn levels_used<const D: usize>(grid: &Grid<D>) -> usize {
    grid.levels.iter().filter(|l| l.count > 0).count()
}

fn every_scene_in<const D: usize>() {
    for &name in scene::SCENES {
        for n in [0, 1, 2, 300, 2000] {
            let boxes = scene::by_name::<D>(name, n, 7).unwrap();
            for margin in [0.0, 0.25, -0.2] {
                agree(name, &boxes, margin);
            }
        }
    }
}

#[test]
fn every_scene_agrees_with_brute_force() {
    every_scene_in::<1>();
    every_scene_in::<2>();
    every_scene_in::<3>();
}

/// Sizes over six orders of magnitude take many levels, some looked through from above
/// and some from below; every pair is still found once.
fn six_orders_in<const D: usize>() {
    let mut r = scene::Rng::new(3);
    let w = 50.0;
    let boxes: Vec<Aabb<D>> = (0..1500)
        .map(|_| {
            let s = 10f32.powf(r.range(-4.0, 2.0));
            let min: [f32; D] = std::array::from_fn(|_| r.range(0.0, w));
            Aabb::new(min, std::array::from_fn(|k| min[k] + s * r.range(0.1, 1.0)))
        })
        .collect();
    let grid = agree("six orders", &boxes, 0.0);
    assert!(levels_used(&grid) >= 3, "D = {D}: {} levels", levels_used(&grid));
    agree("six orders", &boxes, 1e-3);
}

#[test]
fn sizes_over_six_orders_agree() {
    six_orders_in::<1>();
    six_orders_in::<2>();
    six_orders_in::<3>();
}

/// Boxes parked far off (1e9, 1e30, near `f32::MAX`) make the cells too many for a dense
/// table: the level's rows are hashed, and the pairs stay exact.
fn parked_in<const D: usize>() {
    for at in [1e9f32, 1e30, 3e38] {
        let mut boxes = scene::uniform::<D>(1500, 5);
        for (k, b) in boxes.iter_mut().step_by(7).enumerate() {
            let mut min = [at; D];
            min[0] = at * (1.0 - 1e-3 * (k % 50) as f32);
            *b = Aabb::new(min, min.map(|x| x + at * 1e-7));
        }
        // Identical and touching pairs among the parked boxes too.
        boxes[3] = boxes[0];
        let grid = agree("parked", &boxes, 0.0);
        assert!(grid.levels.iter().any(|l| l.count > 0 && l.hashed), "D = {D}, at {at}: no hashed level");
        agree("parked", &boxes, 0.5);
    }
}

#[test]
fn parked_boxes_agree_on_hashed_levels() {
    parked_in::<1>();
    parked_in::<2>();
    parked_in::<3>();
}

/// Long sticks, exact touching on cell borders, one huge box, zero-size and identical
/// boxes, and a margin that overflows coordinates to infinity.
fn adversarial_in<const D: usize>() {
    let sticks = crate::internals::cliffs::sticks::<D>(1200, 4);
    agree("sticks", &sticks, 0.0);
    agree("staircase", &crate::internals::cliffs::staircase::<D>(400), 0.0);
    let mut tiles = scene::tiles::<D>(1500, 2);
    tiles.push(Aabb::new([-1e6; D], [1e6; D]));
    tiles.push(Aabb::new([3.0; D], [3.0; D]));
    tiles.push(Aabb::new([3.0; D], [3.0; D]));
    agree("tiles, a huge box, points", &tiles, 0.0);
    agree("tiles", &tiles, -0.5);
    let mut edge = scene::uniform::<D>(500, 8);
    edge.push(Aabb::new([f32::MAX; D], [f32::MAX; D]));
    edge.push(Aabb::new([-f32::MAX; D], [-f32::MAX; D]));
    edge.push(Aabb::new([f32::MAX * 0.5; D], [f32::MAX; D]));
    agree("f32::MAX", &edge, 0.0);
    agree("f32::MAX, grown past it", &edge, 1e38);
}

#[test]
fn adversarial_scenes_agree() {
    adversarial_in::<1>();
    adversarial_in::<2>();
    adversarial_in::<3>();
}

/// Boxes of one size take one level; sizes that spread take several.
#[test]
fn levels_follow_the_spread_of_sizes() {
    let mut grid = Grid::default();
    run(&mut grid, &scene::uniform::<3>(20_000, 1), 0.0);
    assert_eq!(levels_used(&grid), 1, "uniform");
    run(&mut grid, &scene::varied::<3>(20_000, 1), 0.0);
    assert!(levels_used(&grid) >= 3, "varied: {} levels", levels_used(&grid));
    run(&mut grid, &scene::mixed::<3>(20_000, 1), 0.0);
    assert!(levels_used(&grid) >= 2, "mixed: {} levels", levels_used(&grid));
}

/// A steady stream of frames of one scene reuses every buffer.
#[test]
fn frames_reuse_the_buffers() {
    let boxes = scene::clustered::<3>(6000, 2);
    let mut grid = Grid::default();
    let first = run(&mut grid, &boxes, 0.1);
    let caps = |g: &Grid<3>| {
        (
            g.entries.capacity(),
            g.scratch.capacity(),
            g.lo[0].capacity(),
            g.starts.capacity(),
            g.level.capacity(),
        )
    };
    let before = caps(&grid);
    assert_eq!(run(&mut grid, &boxes, 0.1), first);
    assert_eq!(caps(&grid), before);
}

#[test]
fn cells_are_monotone() {
    let q = Quant::<1>::new([-3.0], [1e30], 0.7);
    let mut xs =
        vec![f64::NEG_INFINITY, -1e30, -3.0, -2.9, 0.0, 0.7, 1.0, 1e15, 6.3e15, 1e20, 1e30, f64::INFINITY];
    let mut r = scene::Rng::new(1);
    xs.extend((0..2000).map(|_| (r.range(-1.0, 1.0) as f64) * 10f64.powf(r.range(0.0, 31.0) as f64)));
    xs.sort_by(f64::total_cmp);
    let cells: Vec<i64> = xs.iter().map(|&x| q.cell(0, x)).collect();
    assert!(cells.windows(2).all(|w| w[0] <= w[1]), "not monotone");
    assert!(cells.iter().all(|&c| (0..q.g[0]).contains(&c)));
    assert_eq!(q.cell(0, 0.69), q.cell(0, -3.0 + 3.5), "floor below 2^53");
    assert!(q.cell(0, 1e29) < q.cell(0, 2e29), "far cells stay apart");
}

#[test]
fn levels_double() {
    assert_eq!(level_of(0.0, 1.0), 0);
    assert_eq!(level_of(1.0, 1.0), 0);
    assert_eq!(level_of(1.5, 1.0), 1);
    assert_eq!(level_of(2.0, 1.0), 1);
    assert_eq!(level_of(2.1, 1.0), 2);
    assert_eq!(level_of(f64::INFINITY, 1.0), (LEVELS - 1) as u8);
}

/// The budget stops the looks and reports the error; the grid serves the next call.
#[test]
fn budget_stops_and_grid_recovers() {
    let boxes = scene::all_overlapping::<2>(400, 3);
    let mut grid = Grid::default();
    let full = crate::choose::scan_scene(&boxes, 0.0);
    let b = Aabb { min: full.min, max: full.max };
    grid.build(&boxes, 0.0, b, b);
    let budget = PairBudget::new(Some(1000));
    let mut out = Vec::new();
    grid.pairs_into(boxes.len(), &budget, &mut out);
    assert!(budget.verdict().is_err());
    agree("after the budget", &scene::uniform::<2>(700, 4), 0.0);
}

/// The join of `small` (filed) and `large` (looking), grown by `margin`, checked against
/// a double loop (ids of `large` after `small`'s), with the built grid.
fn join_agree<const D: usize>(name: &str, small: &[Aabb<D>], large: &[Aabb<D>], margin: f32) -> Grid<D> {
    let mut grid = Grid::default();
    let full = crate::choose::scan_scene(small, margin);
    let mut bulk = full;
    bulk.trim_boxes(small, margin);
    let bounds = Aabb { min: full.min, max: full.max };
    grid.build_for_join(small, large, margin, bounds, Aabb { min: bulk.min, max: bulk.max });
    grid.validate().unwrap_or_else(|e| panic!("{name}, D = {D}: {e}"));
    let budget = PairBudget::new(None);
    let mut out = vec![[9, 9]];
    let ns = small.len() as u32;
    let looked =
        grid.pairs_against(large, margin, &bounds, [0, ns], small.len() + large.len(), &budget, &mut out);
    budget.verdict().unwrap();
    assert!(!looked.invalid, "{name}");
    let live = |b: &Aabb<D>| Some(b.grown(margin)).filter(|g| !g.is_inverted());
    let mut want = Vec::new();
    for (i, s) in small.iter().enumerate().filter_map(|(i, s)| Some((i, live(s)?))) {
        for (j, l) in large.iter().enumerate().filter_map(|(j, l)| Some((j, live(l)?))) {
            if s.overlaps(&l) {
                want.push([i as u32, ns + j as u32]);
            }
        }
    }
    assert!(out == want, "{name}, D = {D}, margin {margin}: {} pairs, want {}", out.len(), want.len());
    grid
}

/// A crowd on a larger scene reaching past it; parked, huge, zero-size and identical
/// boxes on both sides; sizes over six orders of magnitude in the filed set; margins of
/// both signs and one that overflows to infinity. Both dense and hashed levels are taken,
/// and several levels where sizes spread.
fn joins_in<const D: usize>() {
    let mut r = scene::Rng::new(11);
    let crowd: Vec<Aabb<D>> = (0..1200)
        .map(|_| {
            let min: [f32; D] = std::array::from_fn(|_| r.range(0.0, 12.0));
            Aabb::new(min, min.map(|x| x + r.range(0.5, 1.0)))
        })
        .collect();
    let mut field: Vec<Aabb<D>> = (0..6000)
        .map(|_| {
            let min: [f32; D] = std::array::from_fn(|_| r.range(-6.0, 18.0));
            Aabb::new(min, min.map(|x| x + r.range(0.3, 0.9)))
        })
        .collect();
    field.push(Aabb::new([-1e30; D], [1e30; D]));
    field.push(Aabb::new([3.0; D], [3.0; D]));
    field.push(Aabb::new([1e9; D], [1e9; D]));
    field.push(Aabb::new([-f32::MAX; D], [-f32::MAX; D]));
    for margin in [0.0, 0.2, -0.3] {
        let grid = join_agree("crowd on a field", &crowd, &field, margin);
        assert!(grid.levels.iter().all(|l| l.count == 0 || !l.hashed), "D = {D}: a hashed level");
    }
    let mut parked = crowd.clone();
    for (k, b) in parked.iter_mut().step_by(9).enumerate() {
        let mut min = [1e9; D];
        min[0] = 1e9 - 128.0 * (k % 20) as f32;
        *b = Aabb::new(min, min.map(|x| x + 64.0));
    }
    parked[1] = parked[0];
    parked.push(Aabb::new([2.0; D], [2.0; D]));
    for margin in [0.0, 0.5] {
        let grid = join_agree("parked crowd", &parked, &field, margin);
        assert!(grid.levels.iter().any(|l| l.count > 0 && l.hashed), "D = {D}: no hashed level");
    }
    let orders: Vec<Aabb<D>> = (0..1200)
        .map(|_| {
            let s = 10f32.powf(r.range(-4.0, 2.0));
            let min: [f32; D] = std::array::from_fn(|_| r.range(0.0, 12.0));
            Aabb::new(min, std::array::from_fn(|k| min[k] + s * r.range(0.1, 1.0)))
        })
        .collect();
    let grid = join_agree("six orders", &orders, &field, 1e-3);
    assert!(levels_used(&grid) >= 3, "D = {D}: {} levels", levels_used(&grid));
    join_agree("grown past f32::MAX", &parked, &field, 1e38);
    join_agree("nothing filed", &[], &field, 0.0);
    join_agree("nothing looks", &crowd, &[], 0.0);
}

#[test]
fn joins_agree_with_a_double_loop() {
    joins_in::<1>();
    joins_in::<2>();
    joins_in::<3>();
}
