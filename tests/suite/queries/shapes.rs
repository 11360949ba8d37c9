//! Hand-built worlds for the queries beyond regions and rays, whose answers are known
//! exactly: balls touching a box (the 3-4-5 triangle) and one ulp short; nearest ties by
//! handle and `max_distance` at an exact distance; swept boxes resting on, sliding along
//! and moving into faces, with their normals; a cast callback's clip, stop and normals;
//! each part of the query filter. Each world (but the last two) is checked in the four
//! states of `adversarial::each_state`, then with random queries against the oracle.

use super::adversarial::each_state;
use super::common::{next_down, next_up};
use super::oracle;
use broadphase::{Aabb, Batch, CastAction, Config, Filter, Handle, Kind, QueryFilter, Sweep, World};

/// Balls and nearest queries at exact distances: a box at distance 5 (the 3-4-5
/// triangle) and a copy of its shape at the same distance (a tie, by handle), one holding
/// the point (distance 0), a point box at 10; radius and `max_distance` exactly at a
/// distance or one ulp short.
fn spheres_and_nearest<const D: usize>() {
    let e = |x: f32, y: f32, z: f32| -> [f32; D] { std::array::from_fn(|k| [x, y, z][k]) };
    let objs = [
        (Aabb::new(e(3.0, 4.0, 0.0), e(4.0, 5.0, 1.0)), Kind::Dynamic), // 0: 5 away
        (Aabb::new(e(4.0, 3.0, 0.0), e(5.0, 4.0, 1.0)), Kind::Static),  // 1: 5 away
        (Aabb::new([-1.0; D], [1.0; D]), Kind::Kinematic),              // 2: holds the point
        (Aabb::new(e(6.0, 8.0, 0.0), e(6.0, 8.0, 0.0)), Kind::Dynamic), // 3: 10 away
        (Aabb::new([1e30; D], [1e30; D]), Kind::Static),                // 4: far
    ];
    each_state(&objs, true, |ctx, w, hs| {
        let (f, p) = (QueryFilter::new().sorted(), [0.0; D]);
        let (mut out, mut near) = (Vec::new(), Vec::new());
        let sorted = |v: &[usize]| {
            let mut h: Vec<Handle> = v.iter().map(|&i| hs[i]).collect();
            h.sort();
            h
        };
        for (radius, want) in
            [(5.0, vec![0, 1, 2]), (next_down(5.0), vec![2]), (0.0, vec![2]), (10.0, vec![0, 1, 2, 3])]
        {
            w.query_sphere(p, radius, f, &mut out).unwrap();
            assert_eq!(out, sorted(&want), "{ctx}: sphere of radius {radius}");
        }
        let at = |v: &[(usize, f32)]| v.iter().map(|&(i, d)| (hs[i], d)).collect::<Vec<_>>();
        for (k, m, want) in [
            (1, f32::INFINITY, at(&[(2, 0.0)])),
            (2, f32::INFINITY, at(&[(2, 0.0), (0, 5.0)])),
            (3, 5.0, at(&[(2, 0.0), (0, 5.0), (1, 5.0)])),
            (9, next_down(5.0), at(&[(2, 0.0)])),
            (9, 10.0, at(&[(2, 0.0), (0, 5.0), (1, 5.0), (3, 10.0)])),
            (0, f32::INFINITY, Vec::new()),
        ] {
            w.nearest(p, k, m, f, &mut near).unwrap();
            assert_eq!(oracle::bits(&near), oracle::bits(&want), "{ctx}: nearest k {k} max {m}");
        }
        // From far out, the far point box comes first.
        w.nearest([1e30; D], 1, f32::INFINITY, f, &mut near).unwrap();
        assert_eq!(near, [(hs[4], 0.0)], "{ctx}: nearest from far out");
    });
}

#[test]
fn spheres_and_nearest_at_exact_distances() {
    spheres_and_nearest::<2>();
    spheres_and_nearest::<3>();
}

/// Swept boxes: a box resting on a floor (touching: met at t = 0, its normal zero) slides
/// into a wall and then a crate; lifted one ulp, it misses the floor; `max_t` at the
/// wall and one ulp short; diagonal into a corner (normal on the first axis).
fn sweeps<const D: usize>() {
    let e = |x: f32, y: f32, z: f32| -> [f32; D] { std::array::from_fn(|k| [x, y, z][k]) };
    let objs = [
        (Aabb::new(e(0.0, -1.0, 0.0), e(10.0, 0.0, 10.0)), Kind::Static), // 0: floor
        (Aabb::new(e(5.0, 0.0, 0.0), e(6.0, 3.0, 10.0)), Kind::Static),   // 1: wall
        (Aabb::new(e(8.0, 0.0, 0.0), e(9.0, 1.0, 10.0)), Kind::Dynamic),  // 2: crate
        (Aabb::new(e(2.0, 5.0, 0.0), e(3.0, 6.0, 10.0)), Kind::Dynamic),  // 3: above
    ];
    each_state(&objs, true, |ctx, w, hs| {
        let f = QueryFilter::new();
        let a = Aabb::new(e(0.0, 0.0, 1.0), e(1.0, 1.0, 2.0));
        let x = e(1.0, 0.0, 0.0);
        let mut out = Vec::new();
        let hits = |v: &[(usize, f32)]| v.iter().map(|&(i, t)| (hs[i], t)).collect::<Vec<_>>();
        assert_eq!(w.cast_aabb(a, x, f32::INFINITY, f).unwrap(), Some((hs[0], 0.0)), "{ctx}");
        assert_eq!(w.cast_aabb(a, x, 100.0, f.exclude_handle(hs[0])).unwrap(), Some((hs[1], 4.0)), "{ctx}");
        w.cast_aabb_all(a, x, f32::INFINITY, usize::MAX, f, &mut out).unwrap();
        assert_eq!(out, hits(&[(0, 0.0), (1, 4.0), (2, 7.0)]), "{ctx}: all");
        w.cast_aabb_all(a, x, 4.0, usize::MAX, f, &mut out).unwrap();
        assert_eq!(out, hits(&[(0, 0.0), (1, 4.0)]), "{ctx}: to the wall");
        w.cast_aabb_all(a, x, next_down(4.0), usize::MAX, f, &mut out).unwrap();
        assert_eq!(out, hits(&[(0, 0.0)]), "{ctx}: short of the wall");
        let lifted = Aabb::new(e(0.0, next_up(0.0), 1.0), e(1.0, 1.0, 2.0));
        w.cast_aabb_all(lifted, x, f32::INFINITY, 2, f, &mut out).unwrap();
        assert_eq!(out, hits(&[(1, 4.0), (2, 7.0)]), "{ctx}: lifted");
        let mut seen = Vec::new();
        let _ = w.cast_aabb_with(a, x, f32::INFINITY, f, |h| {
            seen.push((h.handle, h.t, h.normal));
            CastAction::Ignore
        });
        let (zero, west) = ([0.0; D], e(-1.0, 0.0, 0.0));
        assert_eq!(seen, [(hs[0], 0.0, zero), (hs[1], 4.0, west), (hs[2], 7.0, west)], "{ctx}: normals");
        // Diagonally up into the box above: x and y slabs both entered at t = 4.
        seen.clear();
        let _ = w.cast_aabb_with(a, e(0.25, 1.0, 0.0), f32::INFINITY, f, |h| {
            seen.push((h.handle, h.t, h.normal));
            CastAction::Ignore
        });
        assert_eq!(seen.last(), Some(&(hs[3], 4.0, west)), "{ctx}: into a corner: {seen:?}");
    });
}

#[test]
fn swept_boxes_slide_touch_and_stop() {
    sweeps::<2>();
    sweeps::<3>();
}

/// A cast's callback: a clip to a narrow-phase hit inside the first box leaves out a box
/// entered after it but not one entered before it; a stop ends the cast at once; a NaN
/// clip changes nothing; a ray starting inside a box gets a zero normal, one starting on
/// a face it moves into that face's normal; a callback may run queries of its own.
#[test]
fn a_callback_clips_stops_and_sees_normals() {
    let mut w = World::<2>::new(Config::default()).unwrap();
    let b0 = w.insert(Aabb::new([2.0, 0.0], [3.0, 1.0]), Kind::Static).unwrap();
    let b1 = w.insert(Aabb::new([2.5, 0.0], [4.0, 1.0]), Kind::Dynamic).unwrap();
    let b2 = w.insert(Aabb::new([5.0, 0.0], [6.0, 1.0]), Kind::Kinematic).unwrap();
    for update in [false, true] {
        if update {
            w.update().unwrap();
        }
        let run = |o: [f32; 2], act: &dyn Fn(f32) -> CastAction| {
            let mut seen = Vec::new();
            let flow = w
                .cast_ray_with(o, [1.0, 0.0], 100.0, QueryFilter::new(), |h| {
                    seen.push((h.handle, h.t, h.normal));
                    act(h.t)
                })
                .unwrap();
            (seen, flow.is_break())
        };
        let west = [-1.0, 0.0];
        let every = vec![(b0, 2.0, west), (b1, 2.5, west), (b2, 5.0, west)];
        assert_eq!(run([0.0, 0.5], &|t| CastAction::Clip(t + 0.75)), (every[..2].to_vec(), false));
        assert_eq!(run([0.0, 0.5], &|_| CastAction::Stop), (every[..1].to_vec(), true));
        assert_eq!(run([0.0, 0.5], &|_| CastAction::Clip(f32::NAN)), (every.clone(), false));
        assert_eq!(run([0.0, 0.5], &|_| CastAction::Ignore), (every.clone(), false));
        let inside = run([2.5, 0.5], &|_| CastAction::Ignore).0;
        assert_eq!(inside, [(b0, 0.0, [0.0, 0.0]), (b1, 0.0, west), (b2, 2.5, west)], "update {update}");
        // A callback that queries the world (its ordered walks share a queue a thread).
        let (mut near, mut inner) = (Vec::new(), Vec::new());
        let _ = w.cast_ray_with([0.0, 0.5], [1.0, 0.0], 100.0, QueryFilter::new(), |h| {
            w.nearest([5.5, 0.5], 1, f32::INFINITY, QueryFilter::new(), &mut near).unwrap();
            assert_eq!(near, [(b2, 0.0)]);
            let _ = w.cast_ray_with([9.0, 0.5], [-1.0, 0.0], 100.0, QueryFilter::new(), |g| {
                inner.push((h.handle, g.handle));
                CastAction::Ignore
            });
            CastAction::Ignore
        });
        let want: Vec<_> = [b0, b1, b2].iter().flat_map(|&o| [b2, b1, b0].map(|i| (o, i))).collect();
        assert_eq!(inner, want, "update {update}: casts within a cast's callback");
    }
}

/// Each part of the query filter on a hand-built world, pending and updated: kinds
/// (kinematic among them), the one-way mask (an object whose own mask is 0 is found; one
/// of membership 0 only without a mask), handles left out, a predicate on user data;
/// through points, rays, spheres and nearest queries alike.
#[test]
fn query_filter_parts_pick_the_right_objects() {
    let b = Aabb::new([0.0; 2], [1.0; 2]);
    let mut w = World::<2>::new(Config::default()).unwrap();
    let s = w.insert_with(b, Kind::Static, Filter { membership: 1, mask: 1 }, 10).unwrap();
    let d = w.insert_with(b, Kind::Dynamic, Filter { membership: 2, mask: 0 }, 11).unwrap();
    let k = w.insert_with(b, Kind::Kinematic, Filter { membership: 4, mask: 4 }, 12).unwrap();
    let z = w.insert_with(b, Kind::Dynamic, Filter { membership: 0, mask: u32::MAX }, 13).unwrap();
    let odd = |_, data: u64| data % 2 == 1;
    let (sk, s_) = ([s, k], [s]);
    for update in [false, true] {
        if update {
            w.update().unwrap();
        }
        // Sorted, so that the region hits compare as they come (rays and nearest are
        // ordered by t and distance either way).
        let q = QueryFilter::new().sorted();
        let cases: Vec<(QueryFilter<'_>, Vec<Handle>)> = vec![
            (q, vec![s, d, k, z]),
            (q.only_static(), vec![s]),
            (q.only_kinematic(), vec![k]),
            (q.only_dynamic(), vec![d, z]),
            (q.exclude_kinematic(), vec![s, d, z]),
            (q.exclude_static().exclude_dynamic(), vec![k]),
            (q.exclude_static().exclude_dynamic().exclude_kinematic(), vec![]),
            (q.mask(1), vec![s]),
            (q.mask(2), vec![d]),
            (q.mask(u32::MAX), vec![s, d, k]),
            (q.mask(0), vec![]),
            (q.exclude_handle(d), vec![s, k, z]),
            (q.exclude(&sk), vec![d, z]),
            (q.exclude_handle(z).exclude(&s_), vec![d, k]),
            (q.predicate(&odd), vec![d, z]),
            (q.only_dynamic().predicate(&odd).exclude_handle(z), vec![d]),
        ];
        for (f, want) in cases {
            let ctx = format!("{f:?} update {update}");
            let mut out = Vec::new();
            w.query_point([0.5; 2], f, &mut out).unwrap();
            assert_eq!(out, want, "{ctx}: point");
            w.query_sphere([0.5; 2], 0.0, f, &mut out).unwrap();
            assert_eq!(out, want, "{ctx}: sphere");
            let mut got = Vec::new();
            w.cast_ray_all([-1.0, 0.5], [1.0, 0.0], 9.0, usize::MAX, f, &mut got).unwrap();
            assert_eq!(got, want.iter().map(|&h| (h, 1.0)).collect::<Vec<_>>(), "{ctx}: ray");
            w.nearest([0.5; 2], 10, 0.0, f, &mut got).unwrap();
            assert_eq!(got, want.iter().map(|&h| (h, 0.0)).collect::<Vec<_>>(), "{ctx}: nearest");
            let sweep = Sweep::new(Aabb::new([-2.0, 0.0], [-1.0, 1.0]), [1.0, 0.0], 9.0);
            let mut batch = Batch::new();
            w.cast_aabbs_all(&[sweep], usize::MAX, f, &mut batch).unwrap();
            assert_eq!(batch.get(0), want.iter().map(|&h| (h, 1.0)).collect::<Vec<_>>(), "{ctx}: sweep");
        }
    }
}
