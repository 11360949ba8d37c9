//! The queries' errors and a no-panic property: invalid regions, points and rays are
//! refused with the documented error (a batch names its first bad query, and leaves
//! `out` as it was); arbitrary floats (NaN, infinities, subnormals, extremes) through
//! every query and batch give the documented error exactly when the input is invalid,
//! else the oracle's answer.

use super::common::{next_down, Rng};
use super::model::{self, Model, Obj};
use super::{any_box, oracle};
use broadphase::{Aabb, Batch, BoxProblem, Config, Error, Kind, Ray, Select, World2, World3};
use proptest::prelude::*;
use std::ops::ControlFlow;

fn small_world() -> World2 {
    let mut w = World2::new(Config::default()).unwrap();
    w.extend(&[Aabb::new([0.0; 2], [1.0; 2]), Aabb::new([2.0; 2], [3.0; 2])], Kind::Dynamic).unwrap();
    w.update().unwrap();
    w.insert(Aabb::new([0.5; 2], [2.5; 2]), Kind::Static).unwrap();
    w
}

#[test]
fn invalid_regions_and_points_are_refused() {
    let w = small_world();
    let mut out = Vec::new();
    let ok = Aabb::new([0.0; 2], [5.0; 2]);
    let cases = [
        (Aabb::new([f32::NAN, 0.0], [1.0; 2]), BoxProblem::NaN),
        (Aabb::new([0.0; 2], [1.0, f32::NAN]), BoxProblem::NaN),
        (Aabb::new([0.0; 2], [f32::INFINITY, 1.0]), BoxProblem::Infinite),
        (Aabb::new([0.0, f32::NEG_INFINITY], [1.0; 2]), BoxProblem::Infinite),
        (Aabb::new([0.0, 2.0], [1.0; 2]), BoxProblem::MinGreaterThanMax { axis: 1 }),
        (Aabb::new([1.0, 0.0], [next_down(1.0), 1.0]), BoxProblem::MinGreaterThanMax { axis: 0 }),
    ];
    for (q, problem) in cases {
        let want = Err(Error::InvalidBox { index: 0, problem });
        assert_eq!(w.query_aabb(q, Select::All, None, &mut out), want, "{q:?}");
        assert_eq!(
            w.query_aabb_each(q, Select::All, None, |_| panic!("visited")),
            want.map(|()| ControlFlow::Continue(()))
        );
        // A batch names the first bad region, and leaves `out` as it was.
        let mut batch = Batch::new();
        w.query_aabbs(&[ok, ok], Select::All, None, &mut batch).unwrap();
        let before = batch.clone();
        let got = w.query_aabbs(&[ok, ok, q, ok, q], Select::All, None, &mut batch);
        assert_eq!(got, Err(Error::InvalidBox { index: 2, problem }), "{q:?}");
        assert_eq!(batch, before, "{q:?}: out changed by a failed batch");
    }
    for p in [[f32::NAN, 0.0], [0.0, f32::INFINITY], [f32::NEG_INFINITY, 1.0]] {
        assert!(matches!(
            w.query_point(p, Select::All, None, &mut out),
            Err(Error::InvalidQuery { index: 0, .. })
        ));
        let mut batch = Batch::new();
        w.query_points(&[[0.5; 2]], Select::All, None, &mut batch).unwrap();
        let before = batch.clone();
        let got = w.query_points(&[[0.5; 2], [9.0; 2], [1.0; 2], p, p], Select::All, None, &mut batch);
        assert!(matches!(got, Err(Error::InvalidQuery { index: 3, .. })), "{p:?}: {got:?}");
        assert_eq!(batch, before, "{p:?}: out changed by a failed batch");
    }
}

#[test]
fn invalid_rays_are_refused() {
    let w = small_world();
    let good = Ray::new([-1.0, 0.5], [1.0, 0.0], f32::INFINITY);
    let bad = [
        Ray::new([f32::NAN, 0.0], [1.0, 0.0], 1.0),
        Ray::new([0.0, f32::INFINITY], [1.0, 0.0], 1.0),
        Ray::new([0.0, 0.0], [f32::NAN, 1.0], 1.0),
        Ray::new([0.0, 0.0], [1.0, f32::NEG_INFINITY], 1.0),
        Ray::new([0.0, 0.0], [0.0, 0.0], 1.0),
        Ray::new([0.0, 0.0], [-0.0, 0.0], 1.0),
        Ray::new([0.0, 0.0], [1.0, 0.0], f32::NAN),
        Ray::new([0.0, 0.0], [1.0, 0.0], -1.0),
        Ray::new([0.0, 0.0], [1.0, 0.0], -f32::from_bits(1)),
        Ray::new([0.0, 0.0], [1.0, 0.0], f32::NEG_INFINITY),
    ];
    let (mut all, mut batch) = (Vec::new(), Batch::new());
    let mut closest = Vec::new();
    for ray in bad {
        let (o, d, m) = (ray.origin, ray.dir, ray.max_t);
        let is_bad = |e: Result<(), Error>| matches!(e, Err(Error::InvalidQuery { index: 0, .. }));
        assert!(is_bad(w.cast_ray(o, d, m, Select::All, None).map(|_| ())), "{ray:?}");
        assert!(is_bad(w.cast_ray_all(o, d, m, Select::All, None, &mut all)), "{ray:?}");
        assert!(
            is_bad(w.cast_ray_each(o, d, m, Select::All, None, |_, _| panic!("visited")).map(|_| ())),
            "{ray:?}"
        );
        // Batches: the first bad ray's index; `out` as it was.
        w.cast_rays(&[good], Select::All, None, &mut closest).unwrap();
        w.cast_rays_all(&[good, good], Select::All, None, &mut batch).unwrap();
        let (c0, b0) = (closest.clone(), batch.clone());
        let rays = [good, good, good, ray, good, ray];
        let got = w.cast_rays(&rays, Select::All, None, &mut closest);
        assert!(matches!(got, Err(Error::InvalidQuery { index: 3, .. })), "{ray:?}: {got:?}");
        let got = w.cast_rays_all(&rays, Select::All, None, &mut batch);
        assert!(matches!(got, Err(Error::InvalidQuery { index: 3, .. })), "{ray:?}: {got:?}");
        assert_eq!(closest, c0, "{ray:?}: out changed by a failed batch");
        assert_eq!(batch, b0, "{ray:?}: out changed by a failed batch");
    }
    // Valid edge cases: `max_t` of -0.0 and 0.0, a subnormal direction, an infinite length.
    for (d, m) in [
        ([1.0, 0.0], -0.0),
        ([1.0, 0.0], 0.0),
        ([f32::from_bits(1), 0.0], 1.0),
        ([0.0, 1e-40], f32::INFINITY),
    ] {
        assert!(w.cast_ray([0.5, 0.5], d, m, Select::All, None).is_ok(), "{d:?} {m}");
    }
}

// ---------------------------------------------------------------------------------------------
// No panic on arbitrary floats
// ---------------------------------------------------------------------------------------------

/// Any float, special values often.
fn float() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => any::<u32>().prop_map(f32::from_bits),
        4 => -4.0f32..4.0,
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(0.0f32),
        1 => Just(-0.0f32),
        1 => Just(1e-40f32),
        1 => Just(-f32::from_bits(1)),
        1 => Just(f32::MAX),
        1 => Just(-f32::MAX),
        1 => Just(f32::MIN_POSITIVE),
    ]
}

/// A 3D world with clean and pending objects, including huge and zero-size ones (built
/// once).
fn fuzz_world() -> &'static (World3, Vec<Obj<3>>) {
    static WORLD: std::sync::OnceLock<(World3, Vec<Obj<3>>)> = std::sync::OnceLock::new();
    WORLD.get_or_init(build_fuzz_world)
}

fn build_fuzz_world() -> (World3, Vec<Obj<3>>) {
    let mut r = Rng::new(0xf022);
    let mut w = World3::new(Config::default().with_margin(0.1)).unwrap();
    let mut m = Model::<3>::new(0.1);
    for i in 0..300 {
        let (b, k, f) = (any_box(&mut r, &m.live(), true), model::kind(&mut r), model::filter(&mut r));
        m.insert(w.insert_with(b, k, f, 0).unwrap(), b, k, f, 0);
        if i == 200 {
            w.update().unwrap();
        }
    }
    (w, m.live())
}

fn finite(v: &[f32]) -> bool {
    v.iter().all(|x| x.is_finite())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any floats through every query and batch (the query second in its batch, after a
    /// valid one): the documented error, with its index, exactly when the input is
    /// invalid, else the oracle's answer; never a panic.
    #[test]
    fn arbitrary_floats_never_panic(v in proptest::collection::vec(float(), 7), sel in 0..3usize) {
        let (w, objs) = fuzz_world();
        let sel = [Select::All, Select::Static, Select::Dynamic][sel];
        let (a, b) = ([v[0], v[1], v[2]], [v[3], v[4], v[5]]);
        let (mut out, mut batch, mut each) = (Vec::new(), Batch::new(), Vec::new());
        let good = Aabb::new([0.0; 3], [1.0; 3]);
        // The region with corners a and b.
        let q = Aabb::new(a, b);
        let got = w.query_aabb(q, sel, None, &mut out);
        let got_each = w.query_aabb_each(q, sel, None, |h| {
            each.push(h);
            ControlFlow::Continue(())
        });
        let got_batch = w.query_aabbs(&[good, q], sel, None, &mut batch);
        if finite(&v[..6]) && (0..3).all(|k| a[k] <= b[k]) {
            let want = oracle::region(objs, &q, sel, None);
            prop_assert!(got.is_ok() && got_each.is_ok() && got_batch.is_ok());
            each.sort();
            prop_assert_eq!(&out, &want);
            prop_assert_eq!(&each, &want);
            prop_assert_eq!(batch.get(1), want.as_slice());
        } else {
            prop_assert!(matches!(got, Err(Error::InvalidBox { index: 0, .. })), "{:?}", got);
            prop_assert!(matches!(got_each, Err(Error::InvalidBox { index: 0, .. })), "{:?}", got_each);
            prop_assert!(each.is_empty());
            prop_assert!(matches!(got_batch, Err(Error::InvalidBox { index: 1, .. })), "{:?}", got_batch);
        }
        // The point a.
        let got = w.query_point(a, sel, None, &mut out);
        let got_batch = w.query_points(&[[0.5; 3], a], sel, None, &mut batch);
        if finite(&a) {
            let want = oracle::region(objs, &Aabb::new(a, a), sel, None);
            prop_assert!(got.is_ok() && got_batch.is_ok());
            prop_assert_eq!(&out, &want);
            prop_assert_eq!(batch.get(1), want.as_slice());
        } else {
            prop_assert!(matches!(got, Err(Error::InvalidQuery { index: 0, .. })), "{:?}", got);
            prop_assert!(matches!(got_batch, Err(Error::InvalidQuery { index: 1, .. })), "{:?}", got_batch);
        }
        // The ray from a along b up to v[6].
        let (mut all, mut hits, mut closest, mut rays_all) = (Vec::new(), Vec::new(), Vec::new(), Batch::new());
        let got = w.cast_ray_all(a, b, v[6], sel, None, &mut all);
        let got_closest = w.cast_ray(a, b, v[6], sel, None);
        let got_each = w.cast_ray_each(a, b, v[6], sel, None, |h, t| {
            hits.push((h, t));
            ControlFlow::Continue(())
        });
        let rays = [Ray::new([0.5; 3], [1.0, 0.0, 0.0], 1.0), Ray::new(a, b, v[6])];
        let got_rays = w.cast_rays(&rays, sel, None, &mut closest);
        let got_rays_all = w.cast_rays_all(&rays, sel, None, &mut rays_all);
        if finite(&v[..6]) && b.iter().any(|&x| x != 0.0) && v[6] >= 0.0 {
            let want = oracle::bits(&oracle::hits(objs, &rays[1], sel, None));
            let first = &want[..want.len().min(1)];
            prop_assert!(got.is_ok() && got_each.is_ok() && got_rays.is_ok() && got_rays_all.is_ok());
            hits.sort_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(&y.0)));
            prop_assert_eq!(&oracle::bits(&all), &want);
            prop_assert_eq!(&oracle::bits(&hits), &want);
            prop_assert_eq!(&oracle::bits(rays_all.get(1)), &want);
            prop_assert_eq!(oracle::bits(got_closest.unwrap().as_slice()), first);
            prop_assert_eq!(oracle::bits(closest[1].as_slice()), first);
        } else {
            let bad = |i: usize, e: &Error| matches!(e, Error::InvalidQuery { index, .. } if *index == i);
            prop_assert!(got.as_ref().is_err_and(|e| bad(0, e)), "{:?}", got);
            prop_assert!(got_closest.as_ref().is_err_and(|e| bad(0, e)), "{:?}", got_closest);
            prop_assert!(got_each.as_ref().is_err_and(|e| bad(0, e)), "{:?}", got_each);
            prop_assert!(hits.is_empty());
            prop_assert!(got_rays.as_ref().is_err_and(|e| bad(1, e)), "{:?}", got_rays);
            prop_assert!(got_rays_all.as_ref().is_err_and(|e| bad(1, e)), "{:?}", got_rays_all);
        }
        prop_assert!(w.validate().is_ok());
    }
}
