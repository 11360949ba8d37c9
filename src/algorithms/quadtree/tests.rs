use super::*;
use crate::kernels::pair_sort::PairBudget;
use crate::{brute_force_pairs, Aabb, Config};

fn bounds_of<const D: usize>(boxes: &[Aabb<D>], margin: f32) -> Aabb<D> {
    let mut b = Aabb { min: [f32::INFINITY; D], max: [f32::NEG_INFINITY; D] };
    for g in boxes.iter().map(|x| x.grown(margin)).filter(|g| !g.is_inverted()) {
        for k in 0..D {
            b.min[k] = b.min[k].min(g.min[k]);
            b.max[k] = b.max[k].max(g.max[k]);
        }
    }
    b
}

/// The tree's pairs over `bounds`, checked against the brute force, the tree validated.
fn agree_over<const D: usize>(boxes: &[Aabb<D>], margin: f32, bounds: Aabb<D>) -> Quadtree<D> {
    let mut t = Quadtree::<D>::default();
    t.build(boxes, margin, bounds);
    t.validate().unwrap();
    let mut got = Vec::new();
    let budget = PairBudget::new(None);
    t.pairs_into(boxes.len(), &budget, &mut got);
    budget.verdict().unwrap();
    let want = brute_force_pairs(boxes, &Config::default().with_margin(margin)).unwrap();
    assert_eq!(got.len(), want.len(), "D = {D}, n = {}, margin {margin}", boxes.len());
    assert_eq!(got, want);
    t
}

fn agree<const D: usize>(boxes: &[Aabb<D>], margin: f32) -> Quadtree<D> {
    agree_over(boxes, margin, bounds_of(boxes, margin))
}

#[test]
fn node_is_the_finest_cell_holding_both_corners() {
    let b = depth(2);
    let top = (1u32 << b) - 1;
    // A point: the finest level.
    assert_eq!(
        split(node_key::<2>([5, 9], [5, 9]), 2),
        (crate::kernels::morton::encode([5u32, 9]) as u32, b)
    );
    // Across the midline of x: the root.
    let half = 1 << (b - 1);
    assert_eq!(split(node_key::<2>([half - 1, 0], [half, 0]), 2), (0, 0));
    // The whole grid: the root.
    assert_eq!(split(node_key::<2>([0, 0], [top, top]), 2), (0, 0));
    // Inside the upper right quadrant, across its own midline on y: level 1.
    let (code, level) = split(node_key::<2>([half + 1, half + half / 2 - 1], [half + 2, half + half / 2]), 2);
    assert_eq!(level, 1);
    assert_eq!(code, crate::kernels::morton::encode([half, half]) as u32);
    // Every level in 1D: an interval across the boundary of two cells of level `l + 1`.
    let d1 = depth(1);
    for l in 0..d1 {
        let step = 1u32 << (d1 - 1 - l);
        let (code, level) = split(node_key::<1>([step - 1], [step]), 1);
        assert_eq!((code, level), (0, l), "level {l}");
    }
}

#[test]
fn random_scenes_agree_with_brute_force() {
    for seed in 0..6 {
        for margin in [0.0, 0.3, -0.2] {
            agree::<1>(&crate::internals::scene::varied::<1>(600, seed), margin);
            agree::<2>(&crate::internals::scene::varied::<2>(1500, seed), margin);
            agree::<3>(&crate::internals::scene::varied::<3>(1500, seed), margin);
            agree::<2>(&crate::internals::scene::mixed::<2>(1500, seed), margin);
            agree::<3>(&crate::internals::scene::clustered::<3>(1500, seed), margin);
        }
    }
}

#[test]
fn big_nodes_are_sorted_and_swept() {
    // Identical boxes all land in one node: sorted, every pair found.
    let same = vec![Aabb::new([1.0, 2.0], [3.0, 4.0]); 100];
    let t = agree(&same, 0.0);
    assert_eq!(t.node_count(), 1);
    // A row of touching unit boxes on a midline, many to a node.
    let row: Vec<Aabb<2>> = (0..500).map(|i| Aabb::new([i as f32, 49.5], [i as f32 + 1.0, 50.5])).collect();
    let mut with_far = row.clone();
    with_far.push(Aabb::new([0.0, 0.0], [500.0, 100.0]));
    agree(&with_far, 0.0);
    // Boxes clamped into the border cell (parked beyond the bounds), spread along y only:
    // that node is swept along y.
    let mut parked = crate::internals::scene::uniform::<2>(2000, 4);
    for (k, b) in parked.iter_mut().step_by(20).enumerate() {
        *b = Aabb::new([1e9, 1e9 + k as f32 * 1e6], [1e9 + 1.0, 1e9 + k as f32 * 1e6 + 1.0]);
    }
    let bulk = bounds_of(&crate::internals::scene::uniform::<2>(2000, 4), 0.0);
    let t = agree_over(&parked, 0.0, bulk);
    let corner = t.nodes.len() - 1;
    assert_eq!(t.starts[corner + 1] - t.starts[corner], 100, "the parked boxes share the corner node");
    assert_eq!(t.axes[corner], 1);
}

#[test]
fn bounds_only_change_the_speed() {
    let boxes = crate::internals::scene::varied::<3>(2000, 8);
    for bounds in [
        Aabb::new([0.0; 3], [0.0; 3]),
        Aabb::new([-1e30; 3], [1e30; 3]),
        Aabb::new([5.0; 3], [6.0; 3]),
        Aabb { min: [f32::INFINITY; 3], max: [f32::NEG_INFINITY; 3] },
        Aabb::new([f32::MIN; 3], [f32::MAX; 3]),
    ] {
        agree_over(&boxes, 0.1, bounds);
    }
}

#[test]
fn extremes_agree_with_brute_force() {
    let m = f32::MAX;
    let boxes = vec![
        Aabb::new([-m, -m], [m, m]),
        Aabb::new([m, m], [m, m]),
        Aabb::new([-m, 0.0], [-m, 0.0]),
        Aabb::new([0.0, 0.0], [0.0, 0.0]),
        Aabb::new([0.0, 0.0], [1.0, 1.0]),
        Aabb::new([1.0, 1.0], [2.0, 2.0]),
        Aabb::new([1e9, 1e9], [1e9 + 64.0, 1e9 + 64.0]),
        Aabb::new([-1e-30, -1e-30], [1e-30, 1e-30]),
    ];
    for margin in [0.0, 1.0, -0.5, 1e38] {
        agree(&boxes, margin);
        agree_over(&boxes, margin, Aabb::new([0.0, 0.0], [2.0, 2.0]));
    }
}

#[test]
fn the_budget_stops_the_walk() {
    let boxes = vec![Aabb::new([0.0; 2], [1.0; 2]); 300];
    let mut t = Quadtree::<2>::default();
    t.build(&boxes, 0.0, bounds_of(&boxes, 0.0));
    let budget = PairBudget::new(Some(1000));
    let mut out = Vec::new();
    t.pairs_into(boxes.len(), &budget, &mut out);
    assert!(budget.verdict().is_err());
    // The same tree, with room: every pair.
    let budget = PairBudget::new(Some(300 * 299 / 2));
    t.pairs_into(boxes.len(), &budget, &mut out);
    budget.verdict().unwrap();
    assert_eq!(out.len(), 300 * 299 / 2);
}

#[test]
fn empty_and_dead_scenes() {
    agree::<2>(&[], 0.0);
    agree::<2>(&[Aabb::new([0.0; 2], [1.0; 2])], 0.0);
    // All turned inside out by the margin.
    let t = agree::<3>(&vec![Aabb::new([0.0; 3], [1.0; 3]); 50], -0.6);
    assert_eq!(t.len(), 0);
}

#[test]
fn planes_are_cut_and_long_boxes_set_apart() {
    // Boxes across the midplane x = 50 of the grid over [0, 100]^3, spread over y and z,
    // narrower along y: one group, sorted along y and cut along z.
    let mut r = crate::internals::scene::Rng::new(11);
    let mut boxes: Vec<Aabb<3>> = (0..3000)
        .map(|_| {
            let (y, z) = (r.next_f32() * 99.0, r.next_f32() * 99.0);
            Aabb::new([49.5 + r.next_f32() * 0.4, y, z], [50.1 + r.next_f32() * 0.4, y + 0.8, z + 3.0])
        })
        .collect();
    // Planks along y, crossing no midline but x's (so in the same group), far longer than
    // the rest along the sort axis: a record of their own, sorted along z.
    for i in 0..40 {
        let at = i as f32 * 1.2;
        boxes.push(Aabb::new([49.8, 1.0, at], [50.2, 21.0, at + 0.5]));
        boxes.push(Aabb::new([49.8, 60.0, at + 50.0], [50.2, 80.0, at + 50.5]));
    }
    boxes.push(Aabb::new([0.0; 3], [100.0; 3]));
    for margin in [0.0, 0.2] {
        let t = agree_over(&boxes, margin, Aabb::new([0.0; 3], [100.0; 3]));
        let big = (1..t.nodes.len()).filter(|&h| t.nodes[h] == t.nodes[h - 1]).count();
        assert!(big >= 20, "{big} records share a node with the one before");
        let long = (0..t.nodes.len())
            .filter(|&h| h + 1 < t.nodes.len() && t.nodes[h] == t.nodes[h + 1] && t.axes[h] != t.axes[h + 1])
            .count();
        assert!(long >= 1, "no record of long boxes with an axis of its own");
    }
}

#[test]
fn the_walk_finds_each_pair_once_on_every_chunk_boundary() {
    // Enough boxes for many chunks (whose walks start from a searched ancestor stack),
    // with boxes on midlines at every level.
    let mut r = crate::internals::scene::Rng::new(12);
    let boxes: Vec<Aabb<2>> = (0..12_000)
        .map(|i| {
            let (x, y) = (r.next_f32() * 2048.0, r.next_f32() * 2048.0);
            let s = if i % 50 == 0 { 64.0 } else { 1.0 + r.next_f32() };
            Aabb::new([x, y], [x + s, y + s])
        })
        .collect();
    agree(&boxes, 0.0);
}
