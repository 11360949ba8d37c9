//! Boxes from other number types and vector crates: `f64` corners rounded outward (no
//! overlap ever lost, each bound the nearest `f32` on its side), `World::shift_origin`
//! against brute force, and the glam and mint conversions (under their features).

use super::common::{Draws, Rng};
use broadphase::{brute_force_pairs, Aabb, Aabb2, Aabb3, Config, Error, Kind, World, World3};
use proptest::prelude::*;

/// Whether two closed `f64` boxes overlap.
fn overlap64<const D: usize>(a: &([f64; D], [f64; D]), b: &([f64; D], [f64; D])) -> bool {
    (0..D).all(|k| a.0[k] <= b.1[k] && b.0[k] <= a.1[k])
}

/// A coordinate of one of the shapes f64 input takes: near a lattice (touching at values
/// no f32 holds), within a few f64 ulps of another, tiny, huge, past f32's range.
fn coord() -> impl Strategy<Value = f64> {
    prop_oneof![
        (0i32..20, prop_oneof![Just(0.0), Just(0.1), Just(1e-9), Just(1e-12)])
            .prop_map(|(i, e)| i as f64 * 0.1 + e),
        (-1e7f64..1e7),
        (-1e-38f64..1e-38),
        (0u32..4).prop_map(|k| 16777216.0 + k as f64 * 0.25),
        prop_oneof![Just(3.4e38), Just(-3.4e38), Just(3.5e38), Just(1e300)],
    ]
}

fn box64<const D: usize>() -> impl Strategy<Value = ([f64; D], [f64; D])> {
    (proptest::array::uniform::<_, D>(coord()), proptest::array::uniform::<_, D>(0.0f64..0.3)).prop_map(
        |(min, ext)| {
            let max = std::array::from_fn(|k| min[k] + ext[k]);
            (min, max)
        },
    )
}

/// Every f64 overlap is an f32 overlap, and each bound is the nearest f32 outward.
fn check_rounding<const D: usize>(boxes: &[([f64; D], [f64; D])]) {
    let mut f32s = Vec::new();
    Aabb::extend_from_f64(boxes, &mut f32s);
    for (b, f) in boxes.iter().zip(&f32s) {
        assert_eq!(*f, Aabb::from_f64(b.0, b.1));
        for k in 0..D {
            let (lo, hi) = (f.min[k], f.max[k]);
            assert!(lo as f64 <= b.0[k] && hi as f64 >= b.1[k], "{b:?} -> {f:?}: not outward");
            if lo.is_finite() {
                assert!((lo.next_up() as f64) > b.0[k], "{b:?} -> {f:?}: min not the nearest");
            }
            if hi.is_finite() {
                assert!((hi.next_down() as f64) < b.1[k], "{b:?} -> {f:?}: max not the nearest");
            }
        }
    }
    for i in 0..boxes.len() {
        for j in i + 1..boxes.len() {
            if overlap64(&boxes[i], &boxes[j]) {
                assert!(
                    f32s[i].overlaps(&f32s[j]),
                    "{:?} and {:?} overlap, {:?} {:?} do not",
                    boxes[i],
                    boxes[j],
                    f32s[i],
                    f32s[j]
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn f64_boxes_round_outward_and_lose_no_overlap_2d(boxes in proptest::collection::vec(box64::<2>(), 1..40)) {
        check_rounding(&boxes);
    }

    #[test]
    fn f64_boxes_round_outward_and_lose_no_overlap_3d(boxes in proptest::collection::vec(box64::<3>(), 1..40)) {
        check_rounding(&boxes);
    }
}

#[test]
fn f64_boxes_that_touch_between_f32_values_still_pair() {
    // 0.1 is no f32: rounded to nearest, one box would end below it and the other start
    // above it, and the touch would be lost.
    let a = Aabb2::from_f64([0.0, 0.0], [0.1, 1.0]);
    let b = Aabb2::from_f64([0.1, 0.0], [0.2, 1.0]);
    assert!(a.overlaps(&b));
    // Two values that round to the same f32 on both sides: still ordered outward.
    let c = Aabb2::from_f64([1.0 + 1e-12, 0.0], [1.0 + 2e-12, 0.0]);
    assert!(c.min[0] <= c.max[0] && (c.min[0] as f64) <= 1.0 + 1e-12 && (c.max[0] as f64) >= 1.0 + 2e-12);
}

/// A world of random boxes far from the origin, shifted back: the pairs of the shifted
/// boxes by brute force, every pair kept, every handle valid, `validate()` after each call.
fn shift<const D: usize>(seed: u64) {
    let mut r = Rng::new(seed);
    let mut next = || r.unit();
    let far = 1.0e5;
    let mut w = World::<D>::new(Config::default().with_margin(0.01)).unwrap();
    let mut hs = Vec::new();
    for i in 0..300 {
        let min: [f32; D] = std::array::from_fn(|_| far + 20.0 * next());
        let s = 0.1 + 1.5 * next();
        let k = if i % 3 == 0 { Kind::Static } else { Kind::Dynamic };
        hs.push(w.insert(Aabb::new(min, min.map(|x| x + s)), k).unwrap());
    }
    w.update().unwrap();
    let before = w.pairs().to_vec();
    let delta: [f32; D] = std::array::from_fn(|k| far + 3.7 * k as f32);
    w.shift_origin(delta).unwrap();
    w.validate().unwrap();
    w.update().unwrap();
    w.validate().unwrap();
    // Every pair kept (rounding outward never separates two boxes).
    assert!(before.iter().all(|p| w.pairs().contains(p)), "a pair was lost");
    assert!(w.events().removed.is_empty());
    // And the pairs are the rule's over the boxes as they are now.
    let boxes: Vec<Aabb<D>> = hs.iter().map(|&h| w.aabb(h).unwrap()).collect();
    let kinds: Vec<Kind> = hs.iter().map(|&h| w.kind(h).unwrap()).collect();
    let mut want: Vec<_> = brute_force_pairs(&boxes, &Config::default().with_margin(0.01))
        .unwrap()
        .into_iter()
        .filter(|[i, j]| kinds[*i as usize] == Kind::Dynamic || kinds[*j as usize] == Kind::Dynamic)
        .map(|[i, j]| [hs[i as usize], hs[j as usize]])
        .collect();
    want.sort();
    assert_eq!(w.pairs(), want.as_slice());
    for (&h, b) in hs.iter().zip(&boxes) {
        assert!(b.min.iter().all(|&x| x < 30.0), "{h:?} at {b:?}: not shifted");
    }
}

#[test]
fn shift_origin_keeps_handles_and_pairs() {
    for seed in 1..6 {
        shift::<2>(seed * 0x9e37_79b9);
        shift::<3>(seed * 0x7f4a_7c15);
    }
}

#[test]
fn a_bad_origin_shift_changes_nothing() {
    let mut w = World3::new(Config::default()).unwrap();
    let a = w.insert(Aabb3::new([0.0; 3], [1.0; 3]), Kind::Dynamic).unwrap();
    let b = w.insert(Aabb3::new([3.0e38; 3], [3.1e38; 3]), Kind::Dynamic).unwrap();
    w.update().unwrap();
    for delta in [[f32::NAN, 0.0, 0.0], [0.0, f32::INFINITY, 0.0], [-1.0e38, 0.0, 0.0]] {
        let err = w.shift_origin(delta).unwrap_err();
        assert!(matches!(err, Error::InvalidQuery { index: 0, .. }), "{err:?}");
        assert_eq!(w.aabb(a).unwrap(), Aabb3::new([0.0; 3], [1.0; 3]));
        assert_eq!(w.aabb(b).unwrap(), Aabb3::new([3.0e38; 3], [3.1e38; 3]));
        w.update().unwrap();
        assert_eq!(w.stats().moved, 0, "a failed shift changed objects");
    }
}

#[cfg(feature = "glam")]
#[test]
fn glam_vectors_convert_both_ways() {
    use glam::{DVec2, DVec3, Vec2, Vec3, Vec3A};
    let b = Aabb2::from((Vec2::new(1.0, 2.0), Vec2::new(3.0, 4.0)));
    assert_eq!(b, Aabb2::new([1.0, 2.0], [3.0, 4.0]));
    assert_eq!(<(Vec2, Vec2)>::from(b), (Vec2::new(1.0, 2.0), Vec2::new(3.0, 4.0)));
    let c = Aabb3::from((Vec3::ONE, Vec3::splat(2.0)));
    assert_eq!(<(Vec3A, Vec3A)>::from(c), (Vec3A::ONE, Vec3A::splat(2.0)));
    assert_eq!(Aabb3::from((Vec3A::ONE, Vec3A::splat(2.0))), c);
    let d = Aabb2::from((DVec2::new(0.1, 0.0), DVec2::new(0.2, 1.0)));
    assert_eq!(d, Aabb2::from_f64([0.1, 0.0], [0.2, 1.0]));
    assert_eq!(Aabb3::from((DVec3::splat(0.1), DVec3::splat(0.3))), Aabb3::from_f64([0.1; 3], [0.3; 3]));
    // Points for queries: glam's own `Into<[f32; D]>`.
    let mut w = World::<3>::new(Config::default()).unwrap();
    let h = w.insert(c, Kind::Static).unwrap();
    w.update().unwrap();
    let mut out = Vec::new();
    w.query_point(Vec3::splat(1.5).into(), Default::default(), &mut out).unwrap();
    assert_eq!(out, [h]);
    // Slices of them for the batches, cast in place.
    let points = [Vec3::splat(1.5), Vec3::splat(5.0), Vec3::new(1.0, 2.0, 1.5)];
    let cast = broadphase::as_points3(&points);
    assert_eq!(cast.as_ptr() as usize, points.as_ptr() as usize, "no copy");
    assert_eq!(cast, points.map(|p| p.to_array()));
    let mut batch = broadphase::Batch::new();
    w.query_points(cast, Default::default(), &mut batch).unwrap();
    assert_eq!((batch.get(0), batch.get(1), batch.get(2)), (&[h][..], &[][..], &[h][..]));
    let flat = [Vec2::new(1.0, 2.0), Vec2::new(-3.0, 0.5)];
    assert_eq!(broadphase::as_points2(&flat), [[1.0, 2.0], [-3.0, 0.5]]);
}

#[cfg(feature = "mint")]
#[test]
fn mint_points_and_vectors_convert_both_ways() {
    use mint::{Point2, Point3, Vector2, Vector3};
    let p = |x: f32, y: f32| Point2 { x, y };
    let b = Aabb2::from((p(1.0, 2.0), p(3.0, 4.0)));
    assert_eq!(b, Aabb2::new([1.0, 2.0], [3.0, 4.0]));
    assert_eq!(<(Point2<f32>, Point2<f32>)>::from(b), (p(1.0, 2.0), p(3.0, 4.0)));
    let v = |x: f32, y: f32, z: f32| Vector3 { x, y, z };
    let c = Aabb3::from((v(0.0, 0.0, 0.0), v(1.0, 1.0, 1.0)));
    assert_eq!(c, Aabb3::new([0.0; 3], [1.0; 3]));
    assert_eq!(<(Vector3<f32>, Vector3<f32>)>::from(c).1, v(1.0, 1.0, 1.0));
    let d = Aabb3::from((Point3 { x: 0.1f64, y: 0.1, z: 0.1 }, Point3 { x: 0.3f64, y: 0.3, z: 0.3 }));
    assert_eq!(d, Aabb3::from_f64([0.1; 3], [0.3; 3]));
    let e = Aabb2::from((Vector2 { x: 0.1f64, y: 0.0 }, Vector2 { x: 0.2f64, y: 1.0 }));
    assert_eq!(e, Aabb2::from_f64([0.1, 0.0], [0.2, 1.0]));
}
