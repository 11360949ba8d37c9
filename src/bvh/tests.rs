use super::Bvh;
use crate::internals::{cliffs, scene};
use crate::kernels::pair_sort::PairBudget;
use crate::{brute_force_pairs, Aabb, Config};
use std::ops::ControlFlow;

/// Scenes the tree must get exactly right: random and adversarial, by name.
fn scenes<const D: usize>(n: usize, seed: u64) -> Vec<(String, Vec<Aabb<D>>)> {
    let mut v: Vec<(String, Vec<Aabb<D>>)> = ["uniform", "varied", "clustered", "mixed", "tiles", "copies"]
        .iter()
        .filter_map(|&s| Some((s.to_string(), crate::internals::by_name::<D>(s, n, seed)?)))
        .collect();
    v.push(("staircase".into(), cliffs::staircase(n)));
    v.push(("sticks".into(), cliffs::sticks(n, seed)));
    v.push(("parked".into(), cliffs::parked(n, 10.0, 1e9, seed)));
    v.push(("all_identical".into(), vec![Aabb { min: [1.0; D], max: [2.0; D] }; n]));
    v.push((
        "zero_extent".into(),
        (0..n).map(|i| Aabb { min: [(i % 7) as f32; D], max: [(i % 7) as f32; D] }).collect(),
    ));
    let mut r = scene::Rng::new(seed);
    v.push((
        "six_orders".into(),
        (0..n)
            .map(|_| {
                let s = 10f32.powf(r.range(-3.0, 3.0));
                let min: [f32; D] = std::array::from_fn(|_| r.range(-100.0, 100.0));
                Aabb { min, max: min.map(|x| x + s) }
            })
            .collect(),
    ));
    // Centres spread by powers of two: every binned cut peels off a few boxes.
    v.push((
        "powers_of_two".into(),
        (0..n)
            .map(|i| {
                let x = 2f32.powi((i % 250) as i32 - 125);
                Aabb { min: [x; D], max: [x * 1.5; D] }
            })
            .collect(),
    ));
    v.push(("huge_and_far".into(), {
        let mut b = scene::uniform::<D>(n, seed);
        if n > 2 {
            b[0] = Aabb { min: [-f32::MAX; D], max: [f32::MAX; D] };
            b[1] = Aabb { min: [1e30; D], max: [1e30; D] };
        }
        b
    }));
    v
}

/// The three builds: for the all-pairs search, for walks, and by the surface area
/// heuristic.
const BUILDS: [&str; 3] = ["build", "build_for_queries", "build_sah"];

fn built<const D: usize>(how: &str, boxes: &[Aabb<D>], margin: f32) -> Bvh<D> {
    let mut t = Bvh::<D>::default();
    match how {
        "build" => t.build(boxes, margin),
        "build_for_queries" => t.build_for_queries(boxes, margin),
        _ => t.build_sah(boxes, margin),
    }
    t
}

/// The deepest leaf below the root.
fn depth<const D: usize>(t: &Bvh<D>) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(0usize, 1usize)];
    while let Some((i, d)) = todo.pop() {
        deepest = deepest.max(d);
        for c in t.nodes[i].child {
            if c & super::LEAF == 0 {
                todo.push((c as usize, d + 1));
            }
        }
    }
    deepest
}

fn check<const D: usize>(boxes: &[Aabb<D>], margin: f32, what: &str) {
    for how in BUILDS {
        let mut t = built(how, boxes, margin);
        t.validate().unwrap_or_else(|e| panic!("{what} {how}: {e}"));
        if t.len() >= 2 {
            assert!(depth(&t) < super::MAX_DEPTH, "{what} {how}: depth {}", depth(&t));
        }
        let mut got = Vec::new();
        let budget = PairBudget::new(None);
        t.pairs_into(boxes.len(), &budget, &mut got);
        budget.verdict().unwrap();
        let want = brute_force_pairs(boxes, &Config::default().with_margin(margin)).unwrap();
        assert_eq!(got.len(), want.len(), "{what} {how}: pair count");
        assert_eq!(got, want, "{what} {how}");
    }
}

#[test]
fn pairs_agree_with_brute_force() {
    for seed in 0..3 {
        for n in [0, 1, 2, 3, 17, 600, 2500] {
            for margin in [0.0, 0.25, -0.1] {
                for (name, b) in scenes::<3>(n, seed) {
                    check(&b, margin, &format!("3D {name} n={n} seed={seed} margin={margin}"));
                }
                for (name, b) in scenes::<2>(n, seed) {
                    check(&b, margin, &format!("2D {name} n={n} seed={seed} margin={margin}"));
                }
            }
            for (name, b) in scenes::<1>(n, seed) {
                check(&b, 0.0, &format!("1D {name} n={n} seed={seed}"));
            }
        }
    }
}

#[test]
fn the_same_pairs_and_tests_for_any_thread_count() {
    let boxes = scene::varied::<3>(20_000, 7);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut t = Bvh::<3>::default();
            t.build(&boxes, 0.0);
            let mut out = Vec::new();
            let tests = t.pairs_into(boxes.len(), &PairBudget::new(None), &mut out);
            // The surface area build's tree, node by node.
            let sah = built("build_sah", &boxes, 0.0);
            let nodes: Vec<_> = sah.nodes.iter().map(|n| (n.min, n.max, n.child, n.last)).collect();
            (t.ids.clone(), tests, out, sah.ids.clone(), nodes)
        })
    };
    let one = run(1);
    for threads in [2, 3, 4, 7, 16] {
        assert!(run(threads) == one, "{threads} threads");
    }
}

#[test]
fn queries_agree_with_a_filter() {
    let mut r = scene::Rng::new(3);
    for ((name, boxes), how) in scenes::<3>(1500, 1).into_iter().flat_map(|s| BUILDS.map(|h| (s.clone(), h)))
    {
        let t = built(how, &boxes, 0.0);
        // The same tree kept for walks: buckets of leaves, the leaves as they were.
        let mut kept = built(how, &boxes, 0.0);
        kept.keep_for_walks();
        kept.validate().unwrap();
        assert_eq!((&kept.leaves, &kept.ids), (&t.leaves, &t.ids), "{name} {how}");
        assert!(t.len() < 8 || kept.wide.len() < t.nodes.len() / 4, "{name} {how}: buckets in wide nodes");
        for q in 0..50 {
            let min: [f32; 3] = std::array::from_fn(|_| r.range(-10.0, 60.0));
            let s = if q % 5 == 0 { 1e7 } else { r.range(0.0, 8.0) };
            let region = Aabb { min, max: min.map(|x| x + s) };
            let mut got = Vec::new();
            let _ = t.query(&region, |p| {
                got.push(t.ids[p]);
                ControlFlow::Continue(())
            });
            got.sort_unstable();
            let want: Vec<u32> =
                (0..boxes.len() as u32).filter(|&i| boxes[i as usize].overlaps(&region)).collect();
            assert_eq!(got, want, "{name} {how} query {q}");
            for tree in [&t, &kept] {
                let mut with_boxes = Vec::new();
                let _ = tree.query_boxes(&region, |p, b| {
                    assert_eq!(*b, boxes[tree.ids[p] as usize], "{name} {how}: leaf {p}'s box");
                    with_boxes.push(tree.ids[p]);
                    ControlFlow::Continue(())
                });
                with_boxes.sort_unstable();
                assert_eq!(with_boxes, want, "{name} {how} query {q}, {} nodes", tree.nodes.len());
            }
        }
        // A region reaching to infinity meets every leaf, and no empty child of a wide
        // node.
        let endless = Aabb { min: [f32::NEG_INFINITY; 3], max: [f32::INFINITY; 3] };
        let mut all = Vec::new();
        let _ = kept.query(&endless, |p| {
            all.push(kept.ids[p]);
            ControlFlow::Continue(())
        });
        all.sort_unstable();
        assert!(all.iter().copied().eq(0..boxes.len() as u32), "{name} {how}: endless region");
        // A visitor that breaks stops the walk at once (in a wide tree, also within a
        // child that lies wholly in the region).
        for tree in [&t, &kept] {
            let mut seen = 0;
            let all = Aabb { min: [-f32::MAX; 3], max: [f32::MAX; 3] };
            let flow = tree.query(&all, |_| {
                seen += 1;
                ControlFlow::Break(())
            });
            assert_eq!((flow.is_break(), seen), (true, 1), "{name}");
        }
    }
}

#[test]
fn staircase_tests_grow_as_n_log_n() {
    // No pair, yet a sweep tests nearly all n^2 / 2: the tree must test about n log n.
    for n in [4000, 16_000] {
        let boxes = cliffs::staircase::<2>(n);
        let mut t = Bvh::<2>::default();
        t.build(&boxes, 0.0);
        let mut out = Vec::new();
        let tests = t.pairs_into(n, &PairBudget::new(None), &mut out);
        assert!(out.is_empty());
        let bound = 8 * n * (usize::BITS - n.leading_zeros()) as usize;
        assert!(tests < bound, "n={n}: {tests} tests, bound {bound}");
    }
}

#[test]
fn a_budget_stops_the_search() {
    let boxes = vec![Aabb { min: [0.0; 3], max: [1.0; 3] }; 3000];
    let mut t = Bvh::<3>::default();
    t.build(&boxes, 0.0);
    let budget = PairBudget::new(Some(10_000));
    let mut out = Vec::new();
    t.pairs_into(boxes.len(), &budget, &mut out);
    assert!(matches!(budget.verdict(), Err(crate::Error::TooManyPairs { limit: 10_000 })));
}

/// Casts over a tree kept for walks (buckets, four-wide nodes) find every box a ray
/// enters, with the same `t`, as a test of every box; a closest-hit cast that lowers its
/// cutoff finds the least `t`.
#[test]
fn casts_agree_with_a_filter() {
    use super::{RayTest, Slab};
    let mut r = scene::Rng::new(5);
    for ((name, boxes), how) in scenes::<3>(1500, 2).into_iter().flat_map(|s| BUILDS.map(|h| (s.clone(), h)))
    {
        for tree in [built(how, &boxes, 0.0), {
            let mut kept = built(how, &boxes, 0.0);
            kept.keep_for_walks();
            kept
        }] {
            for q in 0..40 {
                let origin: [f32; 3] = std::array::from_fn(|_| r.range(-10.0, 60.0));
                let mut dir: [f32; 3] = std::array::from_fn(|_| r.range(-1.0, 1.0));
                if q % 4 == 0 {
                    dir = [0.0, 0.0, 0.0];
                    dir[q % 3] = 1.0;
                }
                let ray = RayTest::new(origin, dir, if q % 5 == 0 { 1e6 } else { 30.0 });
                let mut want: Vec<(u32, f32)> = (0..boxes.len())
                    .filter_map(|i| ray.enters_box(&boxes[i], ray.max_t()).map(|t| (i as u32, t)))
                    .collect();
                want.sort_by_key(|w| w.0);
                let mut got = Vec::new();
                let mut cut = ray.max_t();
                let _ = tree.cast(&ray, &mut cut, |p, t, _| {
                    got.push((tree.ids[p], t));
                    ControlFlow::Continue(())
                });
                got.sort_by_key(|g| g.0);
                assert_eq!(got, want, "{name} {how} ray {q}");
                let mut cut = ray.max_t();
                let mut best = None;
                let _ = tree.cast(&ray, &mut cut, |_, t, cut| {
                    if t <= *cut {
                        *cut = t;
                        best = Some(t);
                    }
                    ControlFlow::Continue(())
                });
                let least = want.iter().map(|w| w.1).reduce(f32::min);
                assert_eq!(best, least, "{name} {how} ray {q}: closest");
            }
        }
    }
}

/// The best-first walk over two trees (one kept for walks) and loose leaves hands every
/// leaf over in order of `(key, id)`, for rays, swept boxes and distances (the queries'
/// own keys, four children at once over the wide nodes), and stops or shortens as its
/// visitor says: the same as sorting every box's key.
#[test]
fn best_first_walks_agree_with_a_sort() {
    use super::{Enters, Near, RayTest, SweepTest};
    let mut r = scene::Rng::new(6);
    for ((name, boxes), how) in scenes::<3>(1200, 3).into_iter().flat_map(|s| BUILDS.map(|h| (s.clone(), h)))
    {
        // Leaves 0..half in a tree kept for walks, the rest in a plain tree but the last
        // ten, which are loose.
        let half = boxes.len() / 2;
        let loose = boxes.len().saturating_sub(10).max(half);
        let mut a = built(how, &boxes[..half], 0.0);
        a.keep_for_walks();
        let b = built(how, &boxes[half..loose], 0.0);
        let walk = Walked { boxes: &boxes, trees: [&a, &b], half, loose };
        for q in 0..30 {
            let p: [f32; 3] = std::array::from_fn(|_| r.range(-10.0, 60.0));
            let dir: [f32; 3] = std::array::from_fn(|_| r.range(-1.0, 1.0));
            let max_t = if q % 3 == 0 { f32::INFINITY } else { 40.0 };
            let ray = RayTest::new(p, dir, max_t);
            let sweep = SweepTest::new(Aabb { min: p, max: p.map(|x| x + 2.0) }, dir, max_t);
            let at = format!("{name} {how} query {q}");
            walk.agrees(&Enters(&ray), max_t, &format!("{at} ray"));
            walk.agrees(&Enters(&sweep), max_t, &format!("{at} sweep"));
            walk.agrees(&Near(p), 25.0, &format!("{at} distance"));
        }
    }
}

/// The scene of [`best_first_walks_agree_with_a_sort`]: its boxes, the first `half` in
/// `trees[0]`, those up to `loose` in `trees[1]`, the rest loose.
struct Walked<'a> {
    boxes: &'a [Aabb<3>],
    trees: [&'a Bvh<3>; 2],
    half: usize,
    loose: usize,
}

impl Walked<'_> {
    /// The walk by `key` from cutoff `start` against a sort of every box's key: whole,
    /// stopped after 7 leaves, and clipped at the fifth leaf's key.
    fn agrees(&self, key: &impl super::Key<3>, start: f32, at: &str) {
        use super::with_frontier;
        let boxes = self.boxes;
        let mut want: Vec<(f32, u32)> =
            (0..boxes.len()).filter_map(|i| key.one(&boxes[i], start).map(|k| (k, i as u32))).collect();
        want.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        // Stop after `stop` leaves, or clip at the fifth leaf's key.
        for stop in [usize::MAX, 7] {
            let mut got = Vec::new();
            let mut cut = start;
            let _ = with_frontier(|f| {
                // The visitor stops after `stop` leaves: the walk may leave out what lies
                // past the `stop` nearest queued.
                f.keep(stop);
                for (i, x) in boxes.iter().enumerate().skip(self.loose) {
                    if let Some(k) = key.one(x, cut) {
                        f.push_leaf(k, i as u32);
                    }
                }
                let offset = [0, self.half];
                let leaf = |t: usize, pos: usize, _: f32, cut: f32| {
                    let id = offset[t] + self.trees[t].ids[pos] as usize;
                    key.one(&boxes[id], cut).map(|k| (k, id as u32))
                };
                f.walk(&self.trees, &mut cut, key, leaf, |id, k, cut| {
                    got.push((k, id));
                    if got.len() == 5 && stop != usize::MAX {
                        *cut = k;
                    }
                    if got.len() == stop {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                })
            });
            let mut expect = want.clone();
            if stop != usize::MAX && expect.len() >= 5 {
                let fifth = expect[4].0;
                expect.retain(|w| w.0 <= fifth);
            }
            expect.truncate(stop);
            assert_eq!(got, expect, "{at} stop {stop}");
        }
    }
}

/// A nearest query's key of a wide node's four children at once is, lane by lane, the
/// key of each child alone, bit for bit: points inside, on a face, far and huge.
#[test]
fn four_distances_are_each_distance() {
    use super::{distance, Key, Near};
    let mut r = scene::Rng::new(11);
    for q in 0..2000 {
        let scale = [1.0, 1e-3, 1e6, 3e38][q % 4];
        let p: [f32; 3] = std::array::from_fn(|_| r.range(-1.0, 1.0) * scale);
        let (mut min, mut max) = ([[0.0f32; 4]; 3], [[0.0f32; 4]; 3]);
        for c in 0..4 {
            for k in 0..3 {
                let (a, b) = (r.range(-1.0, 1.0) * scale, r.range(-1.0, 1.0) * scale);
                // Some children start on the point's plane, some are points.
                let a = if r.below(4) == 0 { p[k] } else { a };
                let b = if r.below(5) == 0 { a } else { b };
                (min[k][c], max[k][c]) = (a.min(b), a.max(b));
            }
        }
        let near = Near(p);
        let cut = if q % 3 == 0 { f32::INFINITY } else { r.range(0.0, 1.0) * scale };
        let four = near.four(&min, &max, cut);
        for c in 0..4 {
            let b = Aabb { min: std::array::from_fn(|k| min[k][c]), max: std::array::from_fn(|k| max[k][c]) };
            let one = near.one(&b, cut);
            assert_eq!(four[c].map(f32::to_bits), one.map(f32::to_bits), "query {q} child {c}");
            assert_eq!(one.map(f32::to_bits), Some(distance(&p, &b)).filter(|&d| d <= cut).map(f32::to_bits));
        }
    }
}
