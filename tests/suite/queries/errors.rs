//! The queries' errors and a no-panic property: invalid regions, points, balls, nearest
//! queries, rays and swept boxes are refused with the documented error (a batch names its
//! first bad query, and leaves `out` as it was); arbitrary floats (NaN, infinities,
//! subnormals, extremes) through every query and batch give the documented error exactly
//! when the input is invalid, else the oracle's answer.

use super::any_box;
use super::common::{next_down, Rng};
use super::model::{self, Model, Obj};
use super::oracle::{self, Qf};
use broadphase::{
    Aabb, Batch, BoxProblem, CastAction, Config, Error, Kind, QueryFilter, Ray, Sphere, Sweep, World2, World3,
};
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
        assert_eq!(w.query_aabb(q, QueryFilter::new(), &mut out), want, "{q:?}");
        assert_eq!(
            w.query_aabb_each(q, QueryFilter::new(), |_| panic!("visited")),
            want.map(|()| ControlFlow::Continue(()))
        );
        // A batch names the first bad region, and leaves `out` as it was.
        let mut batch = Batch::new();
        w.query_aabbs(&[ok, ok], QueryFilter::new(), &mut batch).unwrap();
        let before = batch.clone();
        let got = w.query_aabbs(&[ok, ok, q, ok, q], QueryFilter::new(), &mut batch);
        assert_eq!(got, Err(Error::InvalidBox { index: 2, problem }), "{q:?}");
        assert_eq!(batch, before, "{q:?}: out changed by a failed batch");
    }
    for p in [[f32::NAN, 0.0], [0.0, f32::INFINITY], [f32::NEG_INFINITY, 1.0]] {
        assert!(matches!(
            w.query_point(p, QueryFilter::new(), &mut out),
            Err(Error::InvalidQuery { index: 0, .. })
        ));
        let mut batch = Batch::new();
        w.query_points(&[[0.5; 2]], QueryFilter::new(), &mut batch).unwrap();
        let before = batch.clone();
        let got = w.query_points(&[[0.5; 2], [9.0; 2], [1.0; 2], p, p], QueryFilter::new(), &mut batch);
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
        assert!(is_bad(w.cast_ray(o, d, m, QueryFilter::new()).map(|_| ())), "{ray:?}");
        assert!(is_bad(w.cast_ray_all(o, d, m, usize::MAX, QueryFilter::new(), &mut all)), "{ray:?}");
        assert!(
            is_bad(w.cast_ray_with(o, d, m, QueryFilter::new(), |_| panic!("visited")).map(|_| ())),
            "{ray:?}"
        );
        // Batches: the first bad ray's index; `out` as it was.
        w.cast_rays(&[good], QueryFilter::new(), &mut closest).unwrap();
        w.cast_rays_all(&[good, good], usize::MAX, QueryFilter::new(), &mut batch).unwrap();
        let (c0, b0) = (closest.clone(), batch.clone());
        let rays = [good, good, good, ray, good, ray];
        let got = w.cast_rays(&rays, QueryFilter::new(), &mut closest);
        assert!(matches!(got, Err(Error::InvalidQuery { index: 3, .. })), "{ray:?}: {got:?}");
        let got = w.cast_rays_all(&rays, 1, QueryFilter::new(), &mut batch);
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
        assert!(w.cast_ray([0.5, 0.5], d, m, QueryFilter::new()).is_ok(), "{d:?} {m}");
    }
}

/// Invalid balls, nearest queries and swept boxes: the documented error with the first
/// bad index; `out` left as it was by a failed batch.
#[test]
fn invalid_spheres_nearest_queries_and_sweeps_are_refused() {
    let w = small_world();
    let f = QueryFilter::new();
    let (mut out, mut hits, mut batch, mut hbatch) = (Vec::new(), Vec::new(), Batch::new(), Batch::new());
    let is_bad = |e: &Error, i: usize| matches!(e, Error::InvalidQuery { index, .. } if *index == i);
    for (c, r) in [
        ([f32::NAN, 0.0], 1.0),
        ([0.0, 0.0], f32::NAN),
        ([0.0, 0.0], -1.0),
        ([0.0, f32::INFINITY], 1.0),
        ([0.0, 0.0], f32::INFINITY),
        ([0.0, 0.0], -f32::from_bits(1)),
    ] {
        assert!(w.query_sphere(c, r, f, &mut out).is_err_and(|e| is_bad(&e, 0)), "{c:?} {r}");
        let good = Sphere::new([0.5; 2], 1.0);
        w.query_spheres(&[good], f, &mut batch).unwrap();
        let before = batch.clone();
        let got = w.query_spheres(&[good, good, Sphere::new(c, r)], f, &mut batch);
        assert!(got.is_err_and(|e| is_bad(&e, 2)), "{c:?} {r}");
        assert_eq!(batch, before, "{c:?} {r}: out changed by a failed batch");
    }
    for (p, m) in
        [([f32::NAN, 0.0], 1.0), ([0.0, 0.0], f32::NAN), ([0.0, 0.0], -1.0), ([f32::NEG_INFINITY, 0.0], 1.0)]
    {
        assert!(w.nearest(p, 3, m, f, &mut hits).is_err_and(|e| is_bad(&e, 0)), "{p:?} {m}");
        w.nearest_to_points(&[[0.5; 2]], 3, 1.0, f, &mut hbatch).unwrap();
        let before = hbatch.clone();
        let got = w.nearest_to_points(&[[0.5; 2], p], 3, m, f, &mut hbatch);
        let index = if m.is_nan() || m < 0.0 { 0 } else { 1 };
        assert!(got.is_err_and(|e| is_bad(&e, index)), "{p:?} {m}");
        assert_eq!(hbatch, before, "{p:?} {m}: out changed by a failed batch");
    }
    // Valid edge cases: k = 0, an infinite or zero bound, a zero radius.
    assert!(w.nearest([0.5; 2], 0, f32::INFINITY, f, &mut hits).is_ok() && hits.is_empty());
    assert!(w.nearest([0.5; 2], 1, 0.0, f, &mut hits).is_ok() && hits.len() == 1);
    assert!(w.query_sphere([9.0; 2], 0.0, f, &mut out).is_ok() && out.is_empty());
    let good = Sweep::new(Aabb::new([0.0; 2], [1.0; 2]), [1.0, 0.0], 1.0);
    let bad_box = Sweep::new(Aabb::new([0.0, 2.0], [1.0; 2]), [1.0, 0.0], 1.0);
    let mut first = Vec::new();
    w.cast_aabbs(&[good], f, &mut first).unwrap();
    w.cast_aabbs_all(&[good], usize::MAX, f, &mut hbatch).unwrap();
    let (f0, b0) = (first.clone(), hbatch.clone());
    let problem = BoxProblem::MinGreaterThanMax { axis: 1 };
    let a = bad_box.aabb;
    assert_eq!(w.cast_aabb(a, [1.0, 0.0], 1.0, f), Err(Error::InvalidBox { index: 0, problem }));
    assert_eq!(
        w.cast_aabb_all(a, [1.0, 0.0], 1.0, 1, f, &mut hits),
        Err(Error::InvalidBox { index: 0, problem })
    );
    assert_eq!(w.cast_aabbs(&[good, bad_box], f, &mut first), Err(Error::InvalidBox { index: 1, problem }));
    for (d, m) in [
        ([0.0, 0.0], 1.0),
        ([f32::NAN, 1.0], 1.0),
        ([1.0, f32::INFINITY], 1.0),
        ([1.0, 0.0], -1.0),
        ([1.0, 0.0], f32::NAN),
    ] {
        let b = good.aabb;
        assert!(w.cast_aabb(b, d, m, f).is_err_and(|e| is_bad(&e, 0)), "{d:?} {m}");
        assert!(w.cast_aabb_all(b, d, m, 9, f, &mut hits).is_err_and(|e| is_bad(&e, 0)), "{d:?} {m}");
        let flow = w.cast_aabb_with(b, d, m, f, |_| panic!("visited"));
        assert!(flow.is_err_and(|e| is_bad(&e, 0)), "{d:?} {m}");
        let sweeps = [good, good, Sweep::new(b, d, m)];
        assert!(w.cast_aabbs(&sweeps, f, &mut first).is_err_and(|e| is_bad(&e, 2)), "{d:?} {m}");
        assert!(w.cast_aabbs_all(&sweeps, 1, f, &mut hbatch).is_err_and(|e| is_bad(&e, 2)), "{d:?} {m}");
    }
    assert_eq!((first, hbatch), (f0, b0), "out changed by a failed batch");
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
    /// valid one), with one of a few filters: the documented error, with its index,
    /// exactly when the input is invalid, else the oracle's answer; never a panic.
    #[test]
    fn arbitrary_floats_never_panic(v in proptest::collection::vec(float(), 10), sel in 0..3usize) {
        let (w, objs) = fuzz_world();
        // Sorted: the answers are compared as they come.
        let f = [
            Qf { sorted: true, ..Qf::default() },
            Qf { kinds: [true, false, false], sorted: true, ..Qf::default() },
            Qf { kinds: [false, true, true], mask: Some(1), sorted: true, ..Qf::default() },
        ][sel].clone();
        let qf = f.build();
        let (a, b) = ([v[0], v[1], v[2]], [v[3], v[4], v[5]]);
        let (mut out, mut batch, mut each) = (Vec::new(), Batch::new(), Vec::new());
        let good = Aabb::new([0.0; 3], [1.0; 3]);
        // The region with corners a and b.
        let q = Aabb::new(a, b);
        let valid_q = finite(&v[..6]) && (0..3).all(|k| a[k] <= b[k]);
        let got = w.query_aabb(q, qf, &mut out);
        let got_each = w.query_aabb_each(q, qf, |h| {
            each.push(h);
            ControlFlow::Continue(())
        });
        let got_batch = w.query_aabbs(&[good, q], qf, &mut batch);
        if valid_q {
            let want = oracle::region(objs, &q, &f);
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
        let bad = |i: usize, e: &Error| matches!(e, Error::InvalidQuery { index, .. } if *index == i);
        // The point a; the ball around a of radius v[6]; the 3 nearest to a within v[6].
        let got = w.query_point(a, qf, &mut out);
        let got_batch = w.query_points(&[[0.5; 3], a], qf, &mut batch);
        if finite(&a) {
            let want = oracle::region(objs, &Aabb::new(a, a), &f);
            prop_assert!(got.is_ok() && got_batch.is_ok());
            prop_assert_eq!(&out, &want);
            prop_assert_eq!(batch.get(1), want.as_slice());
        } else {
            prop_assert!(got.as_ref().is_err_and(|e| bad(0, e)), "{:?}", got);
            prop_assert!(got_batch.as_ref().is_err_and(|e| bad(1, e)), "{:?}", got_batch);
        }
        let got = w.query_sphere(a, v[6], qf, &mut out);
        let got_batch = w.query_spheres(&[Sphere::new([0.5; 3], 1.0), Sphere::new(a, v[6])], qf, &mut batch);
        if finite(&a) && v[6].is_finite() && v[6] >= 0.0 {
            let want = oracle::sphere(objs, &a, v[6], &f);
            prop_assert!(got.is_ok() && got_batch.is_ok());
            prop_assert_eq!(&out, &want);
            prop_assert_eq!(batch.get(1), want.as_slice());
        } else {
            prop_assert!(got.as_ref().is_err_and(|e| bad(0, e)), "{:?}", got);
            prop_assert!(got_batch.as_ref().is_err_and(|e| bad(1, e)), "{:?}", got_batch);
        }
        let (mut near, mut near_batch) = (Vec::new(), Batch::new());
        let got = w.nearest(a, 3, v[6], qf, &mut near);
        let got_batch = w.nearest_to_points(&[[0.5; 3], a], 3, v[6], qf, &mut near_batch);
        if finite(&a) && v[6] >= 0.0 {
            let want = oracle::bits(&oracle::nearest(objs, &a, 3, v[6], &f));
            prop_assert!(got.is_ok() && got_batch.is_ok());
            prop_assert_eq!(&oracle::bits(&near), &want);
            prop_assert_eq!(&oracle::bits(near_batch.get(1)), &want);
        } else {
            prop_assert!(got.as_ref().is_err_and(|e| bad(0, e)), "{:?}", got);
            let index = if v[6] >= 0.0 { 1 } else { 0 };
            prop_assert!(got_batch.as_ref().is_err_and(|e| bad(index, e)), "{:?}", got_batch);
        }
        // The ray from a along b up to v[6].
        let (mut all, mut hits, mut closest, mut rays_all) = (Vec::new(), Vec::new(), Vec::new(), Batch::new());
        let got = w.cast_ray_all(a, b, v[6], usize::MAX, qf, &mut all);
        let got_closest = w.cast_ray(a, b, v[6], qf);
        let got_each = w.cast_ray_with(a, b, v[6], qf, |h| {
            hits.push((h.handle, h.t));
            CastAction::Ignore
        });
        let rays = [Ray::new([0.5; 3], [1.0, 0.0, 0.0], 1.0), Ray::new(a, b, v[6])];
        let got_rays = w.cast_rays(&rays, qf, &mut closest);
        let got_rays_all = w.cast_rays_all(&rays, usize::MAX, qf, &mut rays_all);
        let motion = finite(&b) && b.iter().any(|&x| x != 0.0) && v[6] >= 0.0;
        if finite(&a) && motion {
            let want = oracle::bits(&oracle::hits(objs, &rays[1], &f));
            let first = &want[..want.len().min(1)];
            prop_assert!(got.is_ok() && got_each.is_ok() && got_rays.is_ok() && got_rays_all.is_ok());
            prop_assert_eq!(&oracle::bits(&all), &want);
            prop_assert_eq!(&oracle::bits(&hits), &want);
            prop_assert_eq!(&oracle::bits(rays_all.get(1)), &want);
            prop_assert_eq!(oracle::bits(got_closest.unwrap().as_slice()), first);
            prop_assert_eq!(oracle::bits(closest[1].as_slice()), first);
        } else {
            prop_assert!(got.as_ref().is_err_and(|e| bad(0, e)), "{:?}", got);
            prop_assert!(got_closest.as_ref().is_err_and(|e| bad(0, e)), "{:?}", got_closest);
            prop_assert!(got_each.as_ref().is_err_and(|e| bad(0, e)), "{:?}", got_each);
            prop_assert!(hits.is_empty());
            prop_assert!(got_rays.as_ref().is_err_and(|e| bad(1, e)), "{:?}", got_rays);
            prop_assert!(got_rays_all.as_ref().is_err_and(|e| bad(1, e)), "{:?}", got_rays_all);
        }
        // The region a..b swept along (v[7], v[8], v[9]) up to v[6].
        let d = [v[7], v[8], v[9]];
        let sweep = Sweep::new(q, d, v[6]);
        let got = w.cast_aabb_all(q, d, v[6], 4, qf, &mut all);
        let got_closest = w.cast_aabb(q, d, v[6], qf);
        let got_batch = w.cast_aabbs_all(&[Sweep::new(good, [1.0, 0.0, 0.0], 1.0), sweep], 4, qf, &mut rays_all);
        let dir_ok = finite(&d) && d.iter().any(|&x| x != 0.0) && v[6] >= 0.0;
        if valid_q && dir_ok {
            let want: Vec<_> = oracle::cast_hits(objs, &f, |x| oracle::sweep_entry(&sweep, x)).into_iter().map(|h| (h.0, h.1)).collect();
            let want = oracle::bits(&want);
            prop_assert!(got.is_ok() && got_closest.is_ok() && got_batch.is_ok());
            prop_assert_eq!(&oracle::bits(&all), &want[..want.len().min(4)]);
            prop_assert_eq!(&oracle::bits(rays_all.get(1)), &want[..want.len().min(4)]);
            prop_assert_eq!(oracle::bits(got_closest.unwrap().as_slice()), &want[..want.len().min(1)]);
        } else if !valid_q {
            prop_assert!(matches!(got, Err(Error::InvalidBox { index: 0, .. })), "{:?}", got);
            prop_assert!(matches!(got_batch, Err(Error::InvalidBox { index: 1, .. })), "{:?}", got_batch);
        } else {
            prop_assert!(got.as_ref().is_err_and(|e| bad(0, e)), "{:?}", got);
            prop_assert!(got_closest.as_ref().is_err_and(|e| bad(0, e)), "{:?}", got_closest);
            prop_assert!(got_batch.as_ref().is_err_and(|e| bad(1, e)), "{:?}", got_batch);
        }
        prop_assert!(w.validate().is_ok());
    }
}
