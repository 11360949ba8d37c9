//! `find_pairs_between` against a double loop over both sets, in 2D and 3D: random,
//! clumped, touching, identical, zero-size, huge, far and mixed-magnitude sets, either
//! set empty or the larger, margins of both signs (a box a negative margin turns inside
//! out meets nothing), the `max_pairs` bound, the error indices, and the same bytes for 1
//! to 16 threads.

use super::common::{clumped, next_up, uniform, Draws, Rng};
use broadphase::{
    find_pairs_between, find_pairs_between_with, Aabb, BoxProblem, Broadphase, Config, Error, Method,
};
use proptest::prelude::*;

/// The double loop: every `[i, j]` with `a[i]` and `b[j]`, each grown by `margin` on every
/// side, overlapping as closed boxes; a grown box with `min > max` meets nothing. Built in
/// `(i, j)` order, so sorted.
fn brute<const D: usize>(a: &[Aabb<D>], b: &[Aabb<D>], margin: f32) -> Vec<[u32; 2]> {
    let grow = |x: &Aabb<D>| {
        let mut g = *x;
        for k in 0..D {
            g.min[k] -= margin;
            g.max[k] += margin;
        }
        (0..D).all(|k| g.min[k] <= g.max[k]).then_some(g)
    };
    let gb: Vec<Option<Aabb<D>>> = b.iter().map(grow).collect();
    let mut out = Vec::new();
    for (i, x) in a.iter().enumerate() {
        let Some(gx) = grow(x) else { continue };
        for (j, y) in gb.iter().enumerate() {
            if let Some(y) = y
                && (0..D).all(|k| gx.min[k] <= y.max[k] && y.min[k] <= gx.max[k])
            {
                out.push([i as u32, j as u32]);
            }
        }
    }
    out
}

const SHAPES: [&str; 8] =
    ["uniform", "clumped", "lattice", "identical", "points", "huge", "far", "magnitudes"];

/// `n` boxes of the named shape.
fn set<const D: usize>(r: &mut Rng, shape: &str, n: usize) -> Vec<Aabb<D>> {
    let one = |r: &mut Rng| -> Aabb<D> {
        let min: [f32; D];
        let size: [f32; D];
        match shape {
            // Small integers: exact touches and copies.
            "lattice" => {
                min = std::array::from_fn(|_| r.below(7) as f32);
                size = std::array::from_fn(|_| r.below(3) as f32);
            }
            "identical" => return Aabb::new([1.0; D], [2.0; D]),
            "points" => {
                min = std::array::from_fn(|_| r.below(5) as f32 * 0.5);
                size = [0.0; D];
            }
            // Mostly small, some spanning ±1e30 or the whole float range.
            "huge" => {
                return match r.below(6) {
                    0 => Aabb::new([-1e30; D], [1e30; D]),
                    1 => Aabb::new([-f32::MAX; D], [f32::MAX; D]),
                    _ => {
                        let m: [f32; D] = std::array::from_fn(|_| r.range(0.0, 10.0));
                        Aabb::new(m, m.map(|x| x + 1.0))
                    }
                }
            }
            "far" => {
                min = std::array::from_fn(|_| 1e9 + r.below(4) as f32 * 128.0);
                size = std::array::from_fn(|_| r.below(3) as f32 * 128.0);
            }
            _ => {
                min = std::array::from_fn(|_| r.range(-1.0, 1.0) * r.log_uniform(-3.0, 3.0));
                size = std::array::from_fn(|_| r.log_uniform(-3.0, 3.0));
            }
        }
        Aabb::new(min, std::array::from_fn(|k| min[k] + size[k]))
    };
    match shape {
        "uniform" => uniform(r, n, 10.0, 1.5),
        "clumped" => clumped(r, n, 3, 20.0, 2.0, 1.0),
        _ => (0..n).map(|_| one(r)).collect(),
    }
}

/// Both free functions and the reusable finder (with a dirty `out`) against the double
/// loop; the swapped call gives the transposed pairs.
fn check<const D: usize>(
    ctx: &str,
    a: &[Aabb<D>],
    b: &[Aabb<D>],
    margin: f32,
    bp: &mut Broadphase<D>,
) -> usize {
    let want = brute(a, b, margin);
    let config = Config::default().with_margin(margin);
    if margin == 0.0 {
        assert_eq!(find_pairs_between(a, b).as_ref(), Ok(&want), "{ctx}: find_pairs_between");
    }
    assert_eq!(find_pairs_between_with(a, b, &config).as_ref(), Ok(&want), "{ctx}: find_pairs_between_with");
    let mut out = vec![[9, 9]; 3];
    bp.find_pairs_between(a, b, &mut out).unwrap();
    assert_eq!(out, want, "{ctx}: Broadphase::find_pairs_between");
    let stats = bp.stats();
    assert_eq!(
        (stats.method, stats.boxes, stats.pairs),
        (Method::Grid, a.len() + b.len(), want.len()),
        "{ctx}"
    );
    let mut swapped: Vec<[u32; 2]> = want.iter().map(|&[i, j]| [j, i]).collect();
    swapped.sort();
    assert_eq!(find_pairs_between_with(b, a, &config), Ok(swapped), "{ctx}: swapped");
    want.len()
}

fn random_sets<const D: usize>() {
    let mut r = Rng::new(0xbe7 + D as u64);
    let mut pairs = 0;
    let sizes = [(0, 0), (0, 40), (40, 0), (1, 300), (300, 1), (200, 60), (60, 350), (250, 250)];
    for margin in [0.0, 0.1, -0.1, -0.6] {
        let mut bp = Broadphase::<D>::new(Config::default().with_margin(margin)).unwrap();
        for (i, sa) in SHAPES.iter().enumerate() {
            // Each shape against itself and against the next shape.
            for sb in [sa, &SHAPES[(i + 1) % SHAPES.len()]] {
                for &(na, nb) in &sizes {
                    let (a, b) = (set::<D>(&mut r, sa, na), set::<D>(&mut r, sb, nb));
                    let ctx = format!("D {D} margin {margin} {sa} x {sb} {na} x {nb}");
                    pairs += check(&ctx, &a, &b, margin, &mut bp);
                }
            }
        }
    }
    assert!(pairs > 500_000, "the sets meet too little: {pairs} pairs");
}

#[test]
fn between_matches_the_double_loop() {
    random_sets::<2>();
    random_sets::<3>();
}

#[test]
fn between_exact_touches_and_inside_out_boxes() {
    let a = [Aabb::new([0.0, 0.0], [1.0, 1.0]), Aabb::new([5.0, 5.0], [5.0, 5.0])];
    let b = [
        Aabb::new([1.0, 0.5], [2.0, 0.5]),          // touches a[0] on its right face
        Aabb::new([next_up(1.0), 0.0], [2.0, 1.0]), // one ulp to the right: apart
        Aabb::new([5.0, 5.0], [5.0, 5.0]),          // the same point as a[1]
        Aabb::new([-1.0, -1.0], [0.0, 0.0]),        // a[0]'s corner
    ];
    assert_eq!(find_pairs_between(&a, &b), Ok(vec![[0, 0], [0, 3], [1, 2]]));
    // A margin of a quarter: b[1] now meets a[0]; a negative one turns the points and
    // the flat b[0] inside out, and parts the touching boxes.
    let grown = find_pairs_between_with(&a, &b, &Config::default().with_margin(0.25));
    assert_eq!(grown, Ok(vec![[0, 0], [0, 1], [0, 3], [1, 2]]));
    let shrunk = find_pairs_between_with(&a, &b, &Config::default().with_margin(-0.25));
    assert_eq!(shrunk, Ok(vec![]));
    // A margin of -1e-7 parts the boxes touching near 0 and 1, but is under half an ulp
    // at 5: there the two points keep their size and still meet.
    let shrunk = find_pairs_between_with(&a, &b, &Config::default().with_margin(-1e-7));
    assert_eq!(shrunk, Ok(vec![[1, 2]]));
}

#[test]
fn between_max_pairs_bounds_the_output() {
    let mut r = Rng::new(5);
    let (a, b) = (set::<3>(&mut r, "lattice", 300), set::<3>(&mut r, "lattice", 200));
    let want = brute(&a, &b, 0.0);
    let p = want.len();
    assert!(p > 100, "{p}");
    for (limit, ok) in [(p, true), (p + 1, true), (p - 1, false), (0, false), (1, false)] {
        let got = find_pairs_between_with(&a, &b, &Config::default().with_max_pairs(Some(limit)));
        let expect = if ok { Ok(want.clone()) } else { Err(Error::TooManyPairs { limit }) };
        assert_eq!(got, expect, "limit {limit} of {p}");
    }
    // No pairs at all: any bound holds, 0 included.
    let far = set::<3>(&mut r, "far", 50);
    assert_eq!(find_pairs_between_with(&a, &far, &Config::default().with_max_pairs(Some(0))), Ok(vec![]));
}

#[test]
fn between_names_the_first_invalid_box() {
    let ok = Aabb::new([0.0; 2], [1.0; 2]);
    let nan = Aabb::new([0.0, f32::NAN], [1.0; 2]);
    let inf = Aabb::new([0.0; 2], [f32::INFINITY, 1.0]);
    let inv = Aabb::new([0.0, 2.0], [1.0; 2]);
    let nan_e = BoxProblem::NaN;
    let inv_e = BoxProblem::MinGreaterThanMax { axis: 1 };
    let cases: [(Vec<Aabb<2>>, Vec<Aabb<2>>, usize, BoxProblem); 6] = [
        (vec![ok, nan, ok], vec![ok], 1, nan_e),
        (vec![ok, ok], vec![ok, ok, inv, nan], 4, inv_e),
        (vec![], vec![ok, nan], 1, nan_e),
        (vec![ok, ok, ok], vec![inf], 3, BoxProblem::Infinite),
        (vec![inv, ok], vec![nan], 0, inv_e),
        (vec![ok; 5], vec![ok, inv], 6, inv_e),
    ];
    for (a, b, index, problem) in cases {
        let want = Err(Error::InvalidBox { index, problem });
        assert_eq!(find_pairs_between(&a, &b), want, "{a:?} {b:?}");
        assert_eq!(find_pairs_between_with(&a, &b, &Config::default().with_margin(0.5)), want, "{a:?} {b:?}");
        // A finder that ran before names no method after the error.
        let mut bp = Broadphase::new(Config::default()).unwrap();
        bp.find_pairs_between(&[ok], &[ok], &mut Vec::new()).unwrap();
        assert_eq!(bp.find_pairs_between(&a, &b, &mut Vec::new()), Err(Error::InvalidBox { index, problem }));
        assert_eq!(bp.stats().method, Method::Auto, "{a:?} {b:?}");
    }
}

#[test]
fn between_is_the_same_bytes_for_any_thread_count() {
    let mut r = Rng::new(0x7d);
    let a = set::<3>(&mut r, "clumped", 3000);
    let b = set::<3>(&mut r, "uniform", 2000);
    both_ways_on_every_pool(&a, &b, 0.05);
}

/// `find_pairs_between_with(a, b)` and `(b, a)` with `margin`, on pools of 1 to 16
/// threads, each equal to the double loop's pairs (swapped and sorted the other way).
fn both_ways_on_every_pool(a: &[Aabb<3>], b: &[Aabb<3>], margin: f32) {
    let want = brute(a, b, margin);
    let mut swapped: Vec<[u32; 2]> = want.iter().map(|&[i, j]| [j, i]).collect();
    swapped.sort();
    let config = Config::default().with_margin(margin);
    for threads in [1, 2, 3, 4, 7, 16] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let (ab, ba) = pool.install(|| {
            (find_pairs_between_with(a, b, &config).unwrap(), find_pairs_between_with(b, a, &config).unwrap())
        });
        assert!(ab == want, "margin {margin}, {threads} threads: a x b differs from the double loop");
        assert!(ba == swapped, "margin {margin}, {threads} threads: b x a differs from the double loop");
    }
}

/// A crowd ten times smaller than the field it stands on, the field reaching far past
/// it: far-apart boxes (1e9), boxes spanning everything, zero-size and touching boxes,
/// sizes over six orders of magnitude in the crowd, margins of both signs; both ways
/// round, the same bytes on pools of 1 to 16 threads.
#[test]
fn between_a_crowd_and_a_field_is_the_same_bytes_for_any_thread_count() {
    let mut r = Rng::new(0x10b);
    let mut crowd = set::<3>(&mut r, "magnitudes", 500);
    crowd.extend(set::<3>(&mut r, "uniform", 300));
    crowd.extend(set::<3>(&mut r, "far", 40));
    crowd.extend(set::<3>(&mut r, "points", 20));
    let mut field = set::<3>(&mut r, "uniform", 5000);
    for b in field.iter_mut().step_by(5) {
        // Spread four times wider than the crowd.
        *b = Aabb::new(b.min.map(|x| x * 4.0 - 20.0), b.max.map(|x| x * 4.0 - 20.0));
    }
    field.extend(set::<3>(&mut r, "huge", 300));
    field.extend(set::<3>(&mut r, "far", 300));
    field.extend(set::<3>(&mut r, "lattice", 400));
    for margin in [0.0, 0.05, -0.02] {
        both_ways_on_every_pool(&crowd, &field, margin);
    }
}

/// A lattice box in 2D (touches and copies are common).
fn lattice_box() -> impl Strategy<Value = Aabb<2>> {
    ([0u8..6, 0u8..6], [0u8..3, 0u8..3]).prop_map(|(m, s)| {
        let min = m.map(|x| x as f32 * 0.5);
        Aabb::new(min, [min[0] + s[0] as f32 * 0.5, min[1] + s[1] as f32 * 0.5])
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn between_equals_the_double_loop_on_lattices(
        a in proptest::collection::vec(lattice_box(), 0..40),
        b in proptest::collection::vec(lattice_box(), 0..40),
        margin in prop_oneof![Just(0.0f32), Just(0.25), Just(-0.25), Just(1e-3), Just(-1e-3)],
    ) {
        let got = find_pairs_between_with(&a, &b, &Config::default().with_margin(margin));
        prop_assert_eq!(got, Ok(brute(&a, &b, margin)));
    }
}
