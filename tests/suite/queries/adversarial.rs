//! Hand-built worlds whose query answers are known exactly, in 2D and 3D: regions that
//! touch a box or miss it by one ulp, zero-size, identical, huge and far boxes; rays along
//! each axis (other components `0.0`, `-0.0` or a subnormal `1e-40`, all parallel), rays
//! grazing a face, an edge or a corner, origins inside and on boxes, non-unit directions,
//! and `max_t` at an entry, one ulp short, zero and infinite; rays from every face of a
//! lattice of touching boxes along every axis, both ways (no `t` of `-0.0`, the
//! `(t, handle)` order kept). Every coordinate and every expected `t` is exact in `f32` (small
//! integers, powers of two), so the answers follow from the geometry, not from the slab
//! formula. Each world is checked in four states (inserted and pending; updated; moved
//! into place with the move pending; moved and updated), each through every entry point,
//! then with random queries against the oracle.

use super::check::{self, Outs, Tally};
use super::common::{next_down, next_up, Rng};
use super::model::Obj;
use super::oracle::{self, Qf};
use broadphase::{Aabb, Batch, CastAction, Config, Filter, Handle, Kind, QueryFilter, Ray, World};
use std::ops::ControlFlow;

/// One of the four states of a world holding `objs` (each with the default filter), with
/// `filler` far-off objects too (at x >= 1e4 and every other axis <= -1e4, out of the way
/// of the hand-built rays); the handles of `objs` in order, and every live object.
fn build<const D: usize>(
    state: usize,
    objs: &[(Aabb<D>, Kind)],
    filler: bool,
) -> (World<D>, Vec<Handle>, Vec<Obj<D>>) {
    let mut w = World::<D>::new(Config::default().with_margin(0.5)).unwrap();
    let mut all = Vec::new();
    if filler {
        let boxes: Vec<Aabb<D>> = (0..200)
            .map(|i| {
                let x = 1e4 + 2.0 * i as f32;
                let min = std::array::from_fn(|k| if k == 0 { x } else { -x });
                Aabb::new(min, min.map(|v| v + 1.0))
            })
            .collect();
        for (i, (h, b)) in w.extend(&boxes, Kind::Dynamic).unwrap().into_iter().zip(boxes).enumerate() {
            let kind = if i % 2 == 0 { Kind::Static } else { Kind::Dynamic };
            w.set_kind(h, kind).unwrap();
            all.push(Obj { h, aabb: b, kind, filter: Filter::default(), data: 0 });
        }
        w.update().unwrap();
    }
    let away = Aabb::new([-5e5; D], [-5e5 + 1.0; D]);
    let hs: Vec<Handle> =
        objs.iter().map(|&(b, k)| w.insert(if state >= 2 { away } else { b }, k).unwrap()).collect();
    if state >= 1 {
        w.update().unwrap();
    }
    if state >= 2 {
        for (&h, &(b, _)) in hs.iter().zip(objs) {
            w.set_aabb(h, b).unwrap();
        }
    }
    if state == 3 {
        w.update().unwrap();
    }
    w.validate().unwrap();
    all.extend(hs.iter().zip(objs).map(|(&h, &(aabb, kind))| Obj {
        h,
        aabb,
        kind,
        filter: Filter::default(),
        data: 0,
    }));
    (w, hs, all)
}

/// Runs `check` on each state of the world, then 300 random queries against the oracle.
pub(super) fn each_state<const D: usize>(
    objs: &[(Aabb<D>, Kind)],
    filler: bool,
    check: impl Fn(&str, &World<D>, &[Handle]),
) {
    let mut t = Tally::default();
    for state in 0..4 {
        let (w, hs, all) = build(state, objs, filler);
        let ctx = format!("D {D} state {state}");
        check(&ctx, &w, &hs);
        let mut r = Rng::new(state as u64);
        check::check_queries(&ctx, &w, &all, 300, 1.0, &mut r, &mut Outs::default(), &mut t);
    }
}

/// The region query through every entry point equals the objects `want` (indices into
/// the world's handles, any order; `usize::MAX` stands for every filler).
fn region<const D: usize>(ctx: &str, w: &World<D>, hs: &[Handle], q: Aabb<D>, want: &[usize]) {
    let mut want: Vec<Handle> = want.iter().map(|&i| hs[i]).collect();
    want.sort();
    let (mut out, all) = (Vec::new(), QueryFilter::new().sorted());
    w.query_aabb(q, all, &mut out).unwrap();
    assert_eq!(out, want, "{ctx}: query_aabb {q:?}");
    w.query_aabb(q, QueryFilter::new(), &mut out).unwrap();
    oracle::same_hits(&format!("{ctx}: query_aabb in the trees' order {q:?}"), &out, &want, false);
    let mut each = Vec::new();
    let flow = w.query_aabb_each(q, all, |h| {
        each.push(h);
        ControlFlow::Continue(())
    });
    assert_eq!(flow, Ok(ControlFlow::Continue(())), "{ctx}: query_aabb_each {q:?}");
    each.sort();
    assert_eq!(each, want, "{ctx}: query_aabb_each {q:?}");
    let mut batch = Batch::new();
    w.query_aabbs(&[q, q], all, &mut batch).unwrap();
    assert_eq!((batch.get(0), batch.get(1)), (want.as_slice(), want.as_slice()), "{ctx}: query_aabbs {q:?}");
    if q.min == q.max {
        w.query_point(q.min, all, &mut out).unwrap();
        assert_eq!(out, want, "{ctx}: query_point {q:?}");
        w.query_points(&[q.min], all, &mut batch).unwrap();
        assert_eq!(batch.get(0), want.as_slice(), "{ctx}: query_points {q:?}");
    }
}

/// The ray through every entry point hits exactly `want` (object index, `t`), which the
/// caller lists in `(t, handle)` order.
fn ray<const D: usize>(ctx: &str, w: &World<D>, hs: &[Handle], ray: Ray<D>, want: &[(usize, f32)]) {
    let want: Vec<(Handle, u32)> = want.iter().map(|&(i, t)| (hs[i], t.to_bits())).collect();
    let (o, d, m, all) = (ray.origin, ray.dir, ray.max_t, QueryFilter::new());
    let ctx = format!("{ctx}: {ray:?}");
    let mut out = Vec::new();
    w.cast_ray_all(o, d, m, usize::MAX, all, &mut out).unwrap();
    assert_eq!(oracle::bits(&out), want, "{ctx}: cast_ray_all");
    w.cast_ray_all(o, d, m, 2, all, &mut out).unwrap();
    assert_eq!(oracle::bits(&out), want[..want.len().min(2)], "{ctx}: cast_ray_all, 2 hits");
    let closest = w.cast_ray(o, d, m, all).unwrap();
    assert_eq!(oracle::bits(closest.as_slice()), want[..want.len().min(1)], "{ctx}: cast_ray");
    let mut each = Vec::new();
    let flow = w.cast_ray_with(o, d, m, all, |h| {
        each.push((h.handle, h.t));
        CastAction::Ignore
    });
    assert_eq!(flow, Ok(ControlFlow::Continue(())), "{ctx}: cast_ray_with");
    assert_eq!(oracle::bits(&each), want, "{ctx}: cast_ray_with");
    let (mut batch, mut first) = (Batch::new(), Vec::new());
    w.cast_rays_all(&[ray], usize::MAX, all, &mut batch).unwrap();
    w.cast_rays(&[ray], all, &mut first).unwrap();
    assert_eq!(oracle::bits(batch.get(0)), want, "{ctx}: cast_rays_all");
    assert_eq!(oracle::bits(first[0].as_slice()), want[..want.len().min(1)], "{ctx}: cast_rays");
}

/// `v` with axis `k` set to `x`.
fn with<const D: usize>(mut v: [f32; D], k: usize, x: f32) -> [f32; D] {
    v[k] = x;
    v
}

/// Regions touching `[1, 2]^D` on each face and corner count; one ulp off they do not.
/// Zero-size, identical and touching boxes are all found, sorted by handle.
fn touching_regions<const D: usize>() {
    let unit = Aabb::new([1.0; D], [2.0; D]);
    let objs = [
        (unit, Kind::Dynamic),                          // 0
        (Aabb::new([5.0; D], [5.0; D]), Kind::Static),  // 1: a point
        (Aabb::new([3.0; D], [4.0; D]), Kind::Dynamic), // 2
        (Aabb::new([3.0; D], [4.0; D]), Kind::Static),  // 3: the same box
        (Aabb::new([4.0; D], [4.0; D]), Kind::Dynamic), // 4: a point at 2's corner
    ];
    each_state(&objs, true, |ctx, w, hs| {
        region(ctx, w, hs, unit, &[0]);
        let mid = Aabb::new([1.5; D], [1.5; D]);
        for k in 0..D {
            // A zero-thickness slab through the box's middle, moved to each face.
            region(ctx, w, hs, Aabb::new(with(mid.min, k, 2.0), with(mid.max, k, 3.0)), &[0]);
            region(ctx, w, hs, Aabb::new(with(mid.min, k, next_up(2.0)), with(mid.max, k, 3.0)), &[]);
            region(ctx, w, hs, Aabb::new(with(mid.min, k, 0.0), with(mid.max, k, 1.0)), &[0]);
            region(ctx, w, hs, Aabb::new(with(mid.min, k, 0.0), with(mid.max, k, next_down(1.0))), &[]);
            // A point on the face; one ulp outside it.
            region(ctx, w, hs, Aabb::new(with(mid.min, k, 2.0), with(mid.max, k, 2.0)), &[0]);
            region(
                ctx,
                w,
                hs,
                Aabb::new(with(mid.min, k, next_up(2.0)), with(mid.max, k, next_up(2.0))),
                &[],
            );
            // The point box, and one ulp beside it.
            let p = [5.0; D];
            region(ctx, w, hs, Aabb::new(p, p), &[1]);
            region(ctx, w, hs, Aabb::new(with(p, k, next_down(5.0)), with(p, k, next_down(5.0))), &[]);
        }
        // Corners: the region [2, 3]^D meets the unit box at its corner only; [4, 5]^D
        // meets the copies at a corner, and both points.
        region(ctx, w, hs, Aabb::new([2.0; D], [3.0; D]), &[0, 2, 3]);
        region(ctx, w, hs, Aabb::new([next_up(2.0); D], [next_down(3.0); D]), &[]);
        region(ctx, w, hs, Aabb::new([4.0; D], [5.0; D]), &[2, 3, 4, 1]);
        region(ctx, w, hs, Aabb::new([4.0; D], [4.0; D]), &[2, 3, 4]);
        region(ctx, w, hs, Aabb::new([0.0; D], [9.0; D]), &[0, 1, 2, 3, 4]);
    });
}

#[test]
fn touching_regions_are_found_and_one_ulp_off_are_not() {
    touching_regions::<2>();
    touching_regions::<3>();
}

/// Huge boxes (±2^100, the whole float range on one axis) and far ones (2^30 out).
fn huge_and_far<const D: usize>() {
    let p100 = 2f32.powi(100);
    let p30 = 2f32.powi(30);
    let plank = Aabb::new(with([0.0; D], 0, -f32::MAX), with([1.0; D], 0, f32::MAX));
    let objs = [
        (Aabb::new([-p100; D], [p100; D]), Kind::Static),        // 0
        (Aabb::new([p30; D], [p30 + 1024.0; D]), Kind::Dynamic), // 1
        (plank, Kind::Dynamic),                                  // 2
        (Aabb::new([0.0; D], [1.0; D]), Kind::Dynamic),          // 3
    ];
    each_state(&objs, false, |ctx, w, hs| {
        region(ctx, w, hs, Aabb::new([0.5; D], [0.5; D]), &[0, 2, 3]);
        region(ctx, w, hs, Aabb::new([p30; D], [p30; D]), &[0, 1]);
        region(ctx, w, hs, Aabb::new(with([0.5; D], 0, -2.0 * p100), with([0.5; D], 0, -2.0 * p100)), &[2]);
        region(ctx, w, hs, Aabb::new(with([1.0; D], 0, f32::MAX), [f32::MAX; D]), &[2]);
        region(ctx, w, hs, Aabb::new([-f32::MAX; D], [f32::MAX; D]), &[0, 1, 2, 3]);
        region(ctx, w, hs, Aabb::new([next_up(p100); D], [2.0 * p100; D]), &[]);
        // From far out along x: inside the plank at 0, then the huge box, then the unit one.
        let o = with([0.5; D], 0, -2.0 * p100);
        ray(
            ctx,
            w,
            hs,
            Ray::new(o, with([0.0; D], 0, 1.0), f32::INFINITY),
            &[(2, 0.0), (0, p100), (3, 2.0 * p100)],
        );
        ray(ctx, w, hs, Ray::new(o, with([0.0; D], 0, 1.0), next_down(p100)), &[(2, 0.0)]);
        // Along the diagonal from the origin: three boxes hold it, the far one is met at
        // its corner.
        ray(
            ctx,
            w,
            hs,
            Ray::new([0.0; D], [1.0; D], f32::INFINITY),
            &[(0, 0.0), (2, 0.0), (3, 0.0), (1, p30)],
        );
        ray(ctx, w, hs, Ray::new([0.0; D], [-1.0; D], f32::INFINITY), &[(0, 0.0), (2, 0.0), (3, 0.0)]);
        // Back from beyond the far box, with a direction of length 2^10 per axis (the
        // plank and the unit box lie beyond max_t).
        let back = Ray::new([p30 + 2048.0; D], [-1024.0; D], 2.0);
        ray(ctx, w, hs, back, &[(0, 0.0), (1, 1.0)]);
    });
}

#[test]
fn huge_and_far_boxes() {
    huge_and_far::<2>();
    huge_and_far::<3>();
}

/// Rays along each axis at the unit box `[1, 2]^D`: through the middle, grazing a face,
/// along an edge and through a corner line; other components `0.0`, `-0.0` or `1e-40`.
fn axis_rays<const D: usize>() {
    let objs =
        [(Aabb::new([1.0; D], [2.0; D]), Kind::Dynamic), (Aabb::new([1.0; D], [2.0; D]), Kind::Static)];
    each_state(&objs, true, |ctx, w, hs| {
        for k in 0..D {
            for zero in [0.0, -0.0, 1e-40, -1e-40] {
                for (start, s) in [(0.0, 1.0), (3.0, -1.0)] {
                    let dir = std::array::from_fn(|j| if j == k { s } else { zero });
                    // Identical boxes: both at t = 1, the lower handle first.
                    let hit = [(0, 1.0), (1, 1.0)];
                    ray(ctx, w, hs, Ray::new(with([1.5; D], k, start), dir, f32::INFINITY), &hit);
                    // On each other axis at a bound (a face, with more axes an edge, a
                    // corner line), and one ulp outside it.
                    for j in (0..D).filter(|&j| j != k) {
                        for (at, off) in [(1.0, next_down(1.0)), (2.0, next_up(2.0))] {
                            let o = with(with([1.5; D], k, start), j, at);
                            ray(ctx, w, hs, Ray::new(o, dir, f32::INFINITY), &hit);
                            ray(ctx, w, hs, Ray::new(with([at; D], k, start), dir, 1.0), &hit);
                            ray(ctx, w, hs, Ray::new(with(o, j, off), dir, f32::INFINITY), &[]);
                        }
                    }
                    // max_t exactly at the entry, one ulp short, and zero; lengths in
                    // units of a direction of length 2 and 1/2.
                    let o = with([1.5; D], k, start);
                    ray(ctx, w, hs, Ray::new(o, dir, 1.0), &hit);
                    ray(ctx, w, hs, Ray::new(o, dir, next_down(1.0)), &[]);
                    ray(ctx, w, hs, Ray::new(o, dir, 0.0), &[]);
                    ray(ctx, w, hs, Ray::new(o, dir.map(|x| x * 2.0), f32::INFINITY), &[(0, 0.5), (1, 0.5)]);
                    ray(ctx, w, hs, Ray::new(o, dir.map(|x| x * 0.5), 2.0), &[(0, 2.0), (1, 2.0)]);
                    // Pointing away: nothing.
                    ray(ctx, w, hs, Ray::new(o, dir.map(|x| -x), f32::INFINITY), &[]);
                    // Starting on the near face, towards or away from the box, and inside:
                    // t = 0, even with max_t = 0.
                    let face = with([1.5; D], k, if s > 0.0 { 1.0 } else { 2.0 });
                    for m in [0.0, 1.0, f32::INFINITY] {
                        ray(ctx, w, hs, Ray::new(face, dir, m), &[(0, 0.0), (1, 0.0)]);
                        ray(ctx, w, hs, Ray::new(face, dir.map(|x| -x), m), &[(0, 0.0), (1, 0.0)]);
                        ray(ctx, w, hs, Ray::new([1.25; D], dir, m), &[(0, 0.0), (1, 0.0)]);
                    }
                    // One ulp before the near face, pointing away.
                    let before = with([1.5; D], k, if s > 0.0 { next_down(1.0) } else { next_up(2.0) });
                    ray(ctx, w, hs, Ray::new(before, dir.map(|x| -x), f32::INFINITY), &[]);
                }
            }
        }
        // A direction of subnormal components only: parallel to every axis, so only a box
        // holding the origin is hit.
        let tiny = [f32::from_bits(1); D];
        ray(ctx, w, hs, Ray::new([1.5; D], tiny, f32::INFINITY), &[(0, 0.0), (1, 0.0)]);
        ray(ctx, w, hs, Ray::new([0.5; D], tiny, f32::INFINITY), &[]);
    });
}

#[test]
fn rays_along_each_axis_grazing_faces_edges_and_corners() {
    axis_rays::<2>();
    axis_rays::<3>();
}

/// Slanted rays that touch the unit box at a corner or along an edge only, and one that
/// misses by 2^-20; ties at equal `t` between different boxes go by handle.
fn slanted<const D: usize>() {
    let e = 2f32.powi(-20);
    let objs = [
        (Aabb::new([1.0; D], [2.0; D]), Kind::Dynamic), // 0
        (Aabb::new(with([1.0; D], 0, 3.0), with([2.0; D], 0, 4.0)), Kind::Dynamic), // 1
    ];
    each_state(&objs, true, |ctx, w, hs| {
        // Origin (0, 1, ..): on the diagonal it meets box 0 at its corner (1, 2, ..) at t = 1.
        let o = with([1.0; D], 0, 0.0);
        ray(ctx, w, hs, Ray::new(o, [1.0; D], f32::INFINITY), &[(0, 1.0)]);
        ray(
            ctx,
            w,
            hs,
            Ray::new(o.map(|x| if x == 1.0 { 1.0 + e } else { x }), [1.0; D], f32::INFINITY),
            &[],
        );
        ray(
            ctx,
            w,
            hs,
            Ray::new(o.map(|x| if x == 1.0 { 1.0 - e } else { x }), [1.0; D], f32::INFINITY),
            &[(0, 1.0)],
        );
        // Along the edge y = 2 of both boxes (2D: a face), from x = 0: box 0 at t = 1, box
        // 1 at t = 3; capped at t = 3, both.
        let edge = with(with([1.5; D], 0, 0.0), 1, 2.0);
        let dir = with([0.0; D], 0, 1.0);
        ray(ctx, w, hs, Ray::new(edge, dir, 3.0), &[(0, 1.0), (1, 3.0)]);
        ray(ctx, w, hs, Ray::new(edge, dir, next_down(3.0)), &[(0, 1.0)]);
        // From x = 6 backwards, reaching box 1 at t = 2, box 0 at t = 4.
        ray(
            ctx,
            w,
            hs,
            Ray::new(with(edge, 0, 6.0), with(dir, 0, -1.0), f32::INFINITY),
            &[(1, 2.0), (0, 4.0)],
        );
        if D == 3 {
            // In 3D, slanted in x and y, parallel in z at the box's top face: touches the
            // edge x = 1, y = 2 at t = 1.
            let o = [0.0, 1.0, 2.0].map(|x| x as f32);
            let d = [1.0, 1.0, 0.0];
            let (o, d): ([f32; D], [f32; D]) = (std::array::from_fn(|k| o[k]), std::array::from_fn(|k| d[k]));
            ray(ctx, w, hs, Ray::new(o, d, f32::INFINITY), &[(0, 1.0)]);
            ray(ctx, w, hs, Ray::new(with(o, 2, next_up(2.0)), d, f32::INFINITY), &[]);
        }
    });
}

#[test]
fn slanted_rays_touching_a_corner_or_an_edge() {
    slanted::<2>();
    slanted::<3>();
}

/// Many identical boxes, static and dynamic: every query returns them all in handle
/// order, and the closest hit is the lowest handle, whichever tree or change list holds it.
fn identical<const D: usize>() {
    let b = Aabb::new([1.0; D], [2.0; D]);
    let objs: Vec<(Aabb<D>, Kind)> =
        (0..300).map(|i| (b, if i % 3 == 0 { Kind::Static } else { Kind::Dynamic })).collect();
    let every: Vec<usize> = (0..objs.len()).collect();
    each_state(&objs, true, |ctx, w, hs| {
        region(ctx, w, hs, b, &every);
        region(ctx, w, hs, Aabb::new([2.0; D], [2.0; D]), &every);
        region(ctx, w, hs, Aabb::new([next_up(2.0); D], [next_up(2.0); D]), &[]);
        let at = |t: f32| every.iter().map(|&i| (i, t)).collect::<Vec<_>>();
        ray(ctx, w, hs, Ray::new(with([1.5; D], 0, 0.0), with([0.0; D], 0, 1.0), f32::INFINITY), &at(1.0));
        ray(ctx, w, hs, Ray::new([1.5; D], [1.0; D], 0.0), &at(0.0));
        ray(ctx, w, hs, Ray::new([0.0; D], [0.5; D], f32::INFINITY), &at(2.0));
    });
}

#[test]
fn identical_boxes_tie_by_handle() {
    identical::<2>();
    identical::<3>();
}

/// The objects of a world built by [`build`] from `objs`, for the oracle.
fn as_objs<const D: usize>(objs: &[(Aabb<D>, Kind)], hs: &[Handle]) -> Vec<Obj<D>> {
    hs.iter()
        .zip(objs)
        .map(|(&h, &(aabb, kind))| Obj { h, aabb, kind, filter: Filter::default(), data: 0 })
        .collect()
}

/// Rays from the middle, the edges and the corners of every face of a lattice of
/// touching unit boxes (with copies and zero-size boxes at lattice points), along every
/// axis both ways, at lengths 0, 1 and infinite: every hit as the oracle finds it, in
/// `(t, handle)` order, and no `t` is `-0.0` (a ray on a face moving into the box along
/// a negative axis computes the entry as `0.0 * -1`).
fn rays_from_faces<const D: usize>() {
    let mut objs = Vec::new();
    for cell in 0..3usize.pow(D as u32) {
        let min: [f32; D] = std::array::from_fn(|k| (cell / 3usize.pow(k as u32) % 3) as f32);
        let kind = [Kind::Static, Kind::Dynamic, Kind::Kinematic][cell % 3];
        objs.push((Aabb::new(min, min.map(|x| x + 1.0)), kind));
    }
    objs.push((Aabb::new([1.0; D], [2.0; D]), Kind::Dynamic));
    objs.push((Aabb::new([1.0; D], [1.0; D]), Kind::Static));
    objs.push((Aabb::new([2.0; D], [2.0; D]), Kind::Dynamic));
    let boxes: Vec<Aabb<D>> = objs.iter().map(|o| o.0).collect();
    each_state(&objs, false, |ctx, w, hs| {
        let all = as_objs(&objs, hs);
        let mut out = Vec::new();
        for b in &boxes {
            for k in 0..D {
                for at in [b.min[k], b.max[k]] {
                    for off in [0.5f32, 0.0, 1.0] {
                        // The face's middle (off 0.5), or a corner of it.
                        let o: [f32; D] = std::array::from_fn(|j| if j == k { at } else { b.min[j] + off });
                        for j in 0..D {
                            for s in [1.0f32, -1.0] {
                                let dir = std::array::from_fn(|i| if i == j { s } else { 0.0 });
                                for m in [0.0, 1.0, f32::INFINITY] {
                                    let ray = Ray::new(o, dir, m);
                                    let want = oracle::bits(&oracle::hits(&all, &ray, &Qf::default()));
                                    let f = QueryFilter::new();
                                    w.cast_ray_all(o, dir, m, usize::MAX, f, &mut out).unwrap();
                                    let got = oracle::bits(&out);
                                    assert!(
                                        got.iter().all(|h| h.1 != (-0.0f32).to_bits()),
                                        "{ctx}: {ray:?}: -0.0"
                                    );
                                    assert_eq!(got, want, "{ctx}: {ray:?}: cast_ray_all");
                                    let first = w.cast_ray(o, dir, m, f).unwrap();
                                    assert_eq!(
                                        oracle::bits(first.as_slice()),
                                        want[..want.len().min(1)],
                                        "{ctx}"
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    });
}

#[test]
fn rays_from_box_faces_keep_the_t_then_handle_order() {
    rays_from_faces::<2>();
    rays_from_faces::<3>();
}
