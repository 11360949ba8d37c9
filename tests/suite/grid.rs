//! `Method::Grid` against `brute_force_pairs`: random scenes (proptest) in 1D, 2D and 3D
//! with tame and wild coordinates, sizes over six orders of magnitude and every margin
//! sign; named adversarial scenes (touching, identical, zero size, huge, parked far off
//! and near `f32::MAX`, long sticks, many levels); `max_pairs` errors that leave the
//! finder usable; and the same bytes on pools of 1, 2, 3, 4, 7 and 16 threads.

use crate::common;

use broadphase::internals::{cliffs, scene};
use broadphase::{brute_force_pairs, find_pairs_with, Aabb, Broadphase, Config, Error, Method};
use common::{boxed, compare, Draws, Rng};
use proptest::prelude::*;

fn grid<const D: usize>(margin: f32) -> Config<D> {
    Config::default().with_method(Method::Grid).with_margin(margin)
}

/// The grid's pairs equal the brute force's, through the one-shot call and a reused
/// finder (with a dirty output); the finder's stats count every pair.
fn check<const D: usize>(name: &str, boxes: &[Aabb<D>], margin: f32) -> Result<(), String> {
    let config = grid::<D>(margin);
    let want = brute_force_pairs(boxes, &config).map_err(|e| format!("{name}: brute force {e:?}"))?;
    let ctx = format!("{name} [n = {}, D = {D}, margin {margin:e}]", boxes.len());
    let got = find_pairs_with(boxes, &config).map_err(|e| format!("{ctx}: {e:?}"))?;
    compare(&ctx, boxes, margin, &got, &want)?;
    let mut bp = Broadphase::new(config).unwrap();
    let mut out = vec![[3, 1]; 4];
    bp.find_pairs(boxes, &mut out).map_err(|e| format!("{ctx}: {e:?}"))?;
    compare(&format!("{ctx}, Broadphase"), boxes, margin, &out, &want)?;
    if bp.stats().pairs != want.len() || bp.stats().exact_tests < want.len() {
        return Err(format!("{ctx}: stats {:?} for {} pairs", bp.stats(), want.len()));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Random scenes
// ---------------------------------------------------------------------------------------------

/// A coordinate: half-unit steps (exact touching on cell borders), uniform floats, and
/// in wild scenes huge values, signed zeros and `f32::MAX`.
fn coord(wild: bool) -> BoxedStrategy<f32> {
    let tame = prop_oneof![3 => (-16i32..16).prop_map(|k| k as f32 * 0.5), 3 => -60.0f32..60.0];
    if wild {
        prop_oneof![
            4 => tame,
            1 => prop::sample::select(vec![1.0e9f32, -1.0e9, 1.0e30, 0.0, -0.0, 3.0e38, f32::MAX, -f32::MAX]),
        ]
        .boxed()
    } else {
        tame.boxed()
    }
}

/// An extent: zero, half units, up to a few hundred units, and sizes over six orders of
/// magnitude (1e-4 to 1e2); wild scenes add huge ones.
fn extent(wild: bool) -> BoxedStrategy<f32> {
    let tame = prop_oneof![
        2 => Just(0.0f32),
        3 => (0i32..8).prop_map(|k| k as f32 * 0.5),
        2 => (-4.0f32..2.0).prop_map(|e| 10f32.powf(e)),
        1 => 0.0f32..300.0,
    ];
    if wild {
        prop_oneof![4 => tame, 1 => prop::sample::select(vec![1.0e30f32, 1.0e38, f32::MAX])].boxed()
    } else {
        tame.boxed()
    }
}

fn aabb<const D: usize>(wild: bool) -> impl Strategy<Value = Aabb<D>> {
    (prop::collection::vec(coord(wild), D), prop::collection::vec(extent(wild), D))
        .prop_map(|(c, e)| boxed(std::array::from_fn(|k| c[k]), std::array::from_fn(|k| e[k])))
}

/// Boxes, with some of them repeated (identical boxes).
fn scene_of<const D: usize>(max_n: usize) -> impl Strategy<Value = Vec<Aabb<D>>> {
    let boxes = prop_oneof![
        4 => prop::collection::vec(aabb::<D>(false), 0..max_n),
        1 => prop::collection::vec(aabb::<D>(true), 0..max_n),
    ];
    (boxes, prop::collection::vec(any::<prop::sample::Index>(), 0..8)).prop_map(|(mut b, copies)| {
        if !b.is_empty() {
            for c in copies {
                let x = b[c.index(b.len())];
                b.push(x);
            }
        }
        b
    })
}

fn margin() -> impl Strategy<Value = f32> {
    prop_oneof![4 => Just(0.0f32), 1 => Just(0.5f32), 1 => Just(-0.5f32), 1 => Just(1.0e-5f32), 2 => -3.0f32..3.0]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn grid_matches_brute_force_1d(boxes in scene_of::<1>(150), m in margin()) {
        check("random 1D", &boxes, m).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn grid_matches_brute_force_2d(boxes in scene_of::<2>(200), m in margin()) {
        check("random 2D", &boxes, m).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn grid_matches_brute_force_3d(boxes in scene_of::<3>(200), m in margin()) {
        check("random 3D", &boxes, m).map_err(TestCaseError::fail)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Named scenes
// ---------------------------------------------------------------------------------------------

/// Unit cubes filling a lattice face to face, with every tenth repeated: each box
/// touches its neighbours on cell borders, and identical boxes pair.
fn touching<const D: usize>(side: usize) -> Vec<Aabb<D>> {
    let n = side.pow(D as u32);
    let mut v: Vec<Aabb<D>> = (0..n)
        .map(|i| {
            let min: [f32; D] = std::array::from_fn(|k| ((i / side.pow(k as u32)) % side) as f32);
            Aabb::new(min, min.map(|x| x + 1.0))
        })
        .collect();
    v.extend(v.clone().into_iter().step_by(10));
    v
}

/// Boxes whose sizes spread over six orders of magnitude (1e-4 to 1e2) in a world of 60,
/// with points among them.
fn six_orders<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|i| {
            let s = if i % 50 == 0 { 0.0 } else { r.log_uniform(-4.0, 2.0) };
            let min: [f32; D] = std::array::from_fn(|_| r.range(0.0, 60.0));
            boxed(min, std::array::from_fn(|_| s * r.range(0.2, 1.0)))
        })
        .collect()
}

fn named_in<const D: usize>() {
    let mut scenes: Vec<(String, Vec<Aabb<D>>)> = vec![
        ("touching".into(), touching::<D>(if D == 3 { 12 } else { 40 })),
        ("six orders".into(), six_orders::<D>(2500, 1)),
        ("sticks".into(), cliffs::sticks::<D>(2000, 2)),
        ("staircase".into(), cliffs::staircase::<D>(600)),
    ];
    for name in ["uniform", "varied", "mixed", "clustered", "tiles", "flat", "levels", "copies", "terrain"] {
        scenes.push((name.into(), scene::by_name::<D>(name, 2500, 3).unwrap()));
    }
    for at in ["1e9", "1e30"] {
        for share in ["1", "50"] {
            let name = format!("parked:{share}:{at}");
            scenes.push((name.clone(), cliffs::by_name::<D>(&name, 2500, 4).unwrap()));
        }
    }
    // Near f32::MAX, and a huge box over everything.
    let mut edge = scene::uniform::<D>(1500, 5);
    for (k, b) in edge.iter_mut().step_by(9).enumerate() {
        let min: [f32; D] = std::array::from_fn(|a| if a == 0 { 3.0e38 + k as f32 * 1.0e33 } else { 3.0e38 });
        *b = boxed(min, [1.0e32; D]);
    }
    edge.push(Aabb::new([-1.0e20; D], [1.0e20; D]));
    scenes.push(("near f32::MAX, a huge box".into(), edge));
    for (name, boxes) in &scenes {
        for m in [0.0, 0.2, -0.3] {
            check(name, boxes, m).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn grid_matches_brute_force_on_named_scenes() {
    named_in::<1>();
    named_in::<2>();
    named_in::<3>();
}

// ---------------------------------------------------------------------------------------------
// The pair bound, and threads
// ---------------------------------------------------------------------------------------------

/// Past `max_pairs` the call fails with `TooManyPairs` and an empty output; the bound
/// itself passes; the same finder then answers the next scene exactly.
fn bound_in<const D: usize>() {
    let boxes: Vec<Aabb<D>> = (0..300).map(|i| Aabb::new([i as f32 * 1e-3; D], [1.0; D])).collect();
    let pairs = 300 * 299 / 2;
    let mut bp = Broadphase::new(grid::<D>(0.0).with_max_pairs(Some(pairs - 1))).unwrap();
    let mut out = vec![[0, 1]];
    assert_eq!(bp.find_pairs(&boxes, &mut out), Err(Error::TooManyPairs { limit: pairs - 1 }), "D = {D}");
    assert!(out.is_empty());
    let small = scene::varied::<D>(1500, 6);
    bp.find_pairs(&small, &mut out).unwrap();
    assert_eq!(out, brute_force_pairs(&small, &Config::default()).unwrap(), "D = {D}: the call after");
    let at = grid::<D>(0.0).with_max_pairs(Some(pairs));
    assert_eq!(find_pairs_with(&boxes, &at).map(|p| p.len()), Ok(pairs), "D = {D}: at the bound");
}

#[test]
fn max_pairs_errors_leave_the_finder_usable() {
    bound_in::<1>();
    bound_in::<2>();
    bound_in::<3>();
}

fn threads_in<const D: usize>() {
    let mut mixed = scene::mixed::<D>(6000, 7);
    mixed.extend(six_orders::<D>(2000, 8));
    let scenes = [
        ("mixed and six orders", mixed),
        ("parked:10:1e9", cliffs::by_name::<D>("parked:10:1e9", 6000, 9).unwrap()),
        ("clustered", scene::clustered::<D>(8000, 10)),
    ];
    for (name, boxes) in &scenes {
        let config = grid::<D>(0.1);
        let mut first: Option<(Vec<[u32; 2]>, usize)> = None;
        for t in [1, 2, 3, 4, 7, 16] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap();
            let (got, tests) = pool.install(|| {
                let mut bp = Broadphase::new(config).unwrap();
                let mut out = Vec::new();
                bp.find_pairs(boxes, &mut out).unwrap();
                (out, bp.stats().candidates)
            });
            match &first {
                None => first = Some((got, tests)),
                Some(f) => assert!(f.0 == got && f.1 == tests, "{name}, D = {D}: {t} threads differ"),
            }
        }
        let want = brute_force_pairs(boxes, &config).unwrap();
        assert!(first.unwrap().0 == want, "{name}, D = {D}: not the brute force's pairs");
    }
}

#[test]
fn same_bytes_on_every_pool() {
    threads_in::<1>();
    threads_in::<2>();
    threads_in::<3>();
}
