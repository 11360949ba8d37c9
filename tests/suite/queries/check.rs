//! The check that runs every query form and batch against the oracle (`oracle.rs`), on
//! random queries and filters (`draw.rs`), and the tally of the cases they reached.

use super::common::{Draws, Rng};
use super::draw::{
    nearest_query, point_query, query_filter, ray_query, region_query, sphere_query, sweep_query,
};
use super::model::Obj;
use super::oracle::{self, bits, hit_bits, Hit, Qf};
use broadphase::{Aabb, Batch, CastHit, Handle, Ray, Sphere, Sweep, World};
use std::ops::ControlFlow;

/// How often the interesting cases came up, over a test.
#[derive(Default, Debug)]
pub struct Tally {
    pub queries: usize,
    pub found: usize,
    pub empty: usize,
    /// Region results where a box only touches the region on some axis.
    pub touching: usize,
    pub ray_hits: usize,
    pub ray_misses: usize,
    /// Hits at `t = 0` (origin inside or on the box).
    pub zero_t: usize,
    /// Hits whose entry equals where the ray leaves the box: a graze.
    pub grazes: usize,
    /// Hits at exactly `max_t > 0`.
    pub at_max_t: usize,
    pub early_stops: usize,
    pub batch_queries: usize,
    /// Rounds of queries made with changes pending since the last update.
    pub pending: usize,
    /// Objects the filter left out that the shape met, by part.
    pub by_kind: usize,
    pub by_mask: usize,
    pub by_handle: usize,
    pub by_predicate: usize,
    /// Kinematic objects found by a filter that leaves out another kind.
    pub kinematic_found: usize,
    pub sphere_found: usize,
    /// Sphere results exactly at the radius.
    pub sphere_touch: usize,
    pub nearest_found: usize,
    /// Nearest queries cut short by `k` or by `max_distance` at an exact distance.
    pub nearest_cut_by_k: usize,
    pub nearest_at_max: usize,
    pub sweep_hits: usize,
    pub sweep_zero_t: usize,
    /// Callback casts whose visits a clip or a stop cut short, and non-zero normals seen.
    pub clipped: usize,
    pub normals: usize,
    /// All-hits casts cut short by `max_hits`.
    pub max_hits_cut: usize,
}

/// Reused output buffers (so each call also proves that `out` is cleared or rewritten).
pub struct Outs<const D: usize> {
    handles: Vec<Handle>,
    hits: Vec<(Handle, f32)>,
    regions: Batch<Handle>,
    points: Batch<Handle>,
    spheres: Batch<Handle>,
    nearest: Batch<(Handle, f32)>,
    rays_all: Batch<(Handle, f32)>,
    sweeps_all: Batch<(Handle, f32)>,
    closest: Vec<Option<(Handle, f32)>>,
}

impl<const D: usize> Default for Outs<D> {
    fn default() -> Self {
        Self {
            handles: Vec::new(),
            hits: Vec::new(),
            regions: Batch::new(),
            points: Batch::new(),
            spheres: Batch::new(),
            nearest: Batch::new(),
            rays_all: Batch::new(),
            sweeps_all: Batch::new(),
            closest: Vec::new(),
        }
    }
}

/// Counts what the filter left out of `met` (the objects the shape met), by part.
fn count_filter<const D: usize>(t: &mut Tally, f: &Qf, met: &[&Obj<D>]) {
    for o in met {
        let only = |g: &dyn Fn(&mut Qf)| {
            let mut x = f.clone();
            g(&mut x);
            !x.takes(o)
        };
        t.by_kind += only(&|x| *x = Qf { kinds: x.kinds, ..Qf::default() }) as usize;
        t.by_mask += only(&|x| *x = Qf { mask: x.mask, ..Qf::default() }) as usize;
        t.by_handle += only(&|x| *x = Qf { one: x.one, list: x.list.clone(), ..Qf::default() }) as usize;
        t.by_predicate += only(&|x| *x = Qf { pred: x.pred, ..Qf::default() }) as usize;
        t.kinematic_found +=
            (o.kind == broadphase::Kind::Kinematic && f.kinds != [true; 3] && f.takes(o)) as usize;
    }
}

/// Where the ray leaves `b`, as the slab rule computes it (for counting grazes).
fn exit<const D: usize>(ray: &Ray<D>, b: &Aabb<D>) -> f32 {
    let mut hi = ray.max_t;
    for k in 0..D {
        let r = 1.0f32 / ray.dir[k];
        if r.is_finite() {
            let (a, c) = ((b.min[k] - ray.origin[k]) * r, (b.max[k] - ray.origin[k]) * r);
            hi = hi.min(a.max(c));
        }
    }
    hi
}

/// Calls `each` with a visitor that stops after `stop` calls; checks that it was called
/// `min(stop, n)` times with distinct members of `want`, and returned `Break` exactly when
/// it stopped.
fn check_stop<T: PartialEq + Copy + std::fmt::Debug>(
    ctx: &str,
    want: &[T],
    stop: usize,
    each: impl FnOnce(&mut dyn FnMut(T) -> ControlFlow<()>) -> ControlFlow<()>,
) {
    let mut seen: Vec<T> = Vec::new();
    let flow = each(&mut |x| {
        seen.push(x);
        if seen.len() >= stop {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    assert_eq!(seen.len(), stop.min(want.len()), "{ctx}: visits before the stop at {stop}");
    let broke = stop <= want.len();
    assert_eq!(flow, if broke { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }, "{ctx}: flow");
    for (i, x) in seen.iter().enumerate() {
        assert!(want.contains(x), "{ctx}: visited {x:?}, not a result");
        assert!(!seen[..i].contains(x), "{ctx}: visited {x:?} twice");
    }
}

/// One region query through `query_aabb` (or `query_point` for a zero-size region),
/// `query_aabb_each` whole, and `query_aabb_each` stopped early.
#[allow(clippy::too_many_arguments)]
fn check_region<const D: usize>(
    ctx: &str,
    w: &World<D>,
    objs: &[Obj<D>],
    q: Aabb<D>,
    point: bool,
    f: &Qf,
    r: &mut Rng,
    outs: &mut Outs<D>,
    t: &mut Tally,
) {
    let ctx = format!("{ctx}: region {q:?} point {point} {f:?}");
    let want = oracle::region(objs, &q, f);
    t.queries += 1;
    t.empty += want.is_empty() as usize;
    t.found += want.len();
    let met: Vec<&Obj<D>> = objs.iter().filter(|o| oracle::overlaps(&o.aabb, &q)).collect();
    count_filter(t, f, &met);
    for o in met.iter().filter(|o| want.contains(&o.h)) {
        t.touching += (0..D).any(|k| o.aabb.min[k] == q.max[k] || o.aabb.max[k] == q.min[k]) as usize;
    }
    let qf = f.build();
    if point {
        w.query_point(q.min, qf, &mut outs.handles).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    } else {
        w.query_aabb(q, qf, &mut outs.handles).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    }
    oracle::same_hits(&ctx, &outs.handles, &want, f.sorted);
    let mut all = Vec::new();
    let flow = w.query_aabb_each(q, qf, |h| {
        all.push(h);
        ControlFlow::Continue(())
    });
    assert_eq!(flow, Ok(ControlFlow::Continue(())), "{ctx}: each, whole");
    all.sort();
    assert_eq!(all, want, "{ctx}: each, whole");
    let stop = 1 + r.below(want.len() + 2);
    t.early_stops += (stop <= want.len()) as usize;
    check_stop(&ctx, &want, stop, |v| w.query_aabb_each(q, qf, v).expect("valid region"));
}

/// One ball through `query_sphere`.
#[allow(clippy::too_many_arguments)]
fn check_sphere<const D: usize>(
    ctx: &str,
    w: &World<D>,
    objs: &[Obj<D>],
    (c, radius): ([f32; D], f32),
    f: &Qf,
    outs: &mut Outs<D>,
    t: &mut Tally,
) {
    let ctx = format!("{ctx}: sphere {c:?} r {radius} {f:?}");
    let want = oracle::sphere(objs, &c, radius, f);
    t.queries += 1;
    t.sphere_found += want.len();
    let met: Vec<&Obj<D>> = objs.iter().filter(|o| oracle::distance(&c, &o.aabb) <= radius).collect();
    count_filter(t, f, &met);
    t.sphere_touch += met.iter().filter(|o| oracle::distance(&c, &o.aabb) == radius && radius > 0.0).count();
    w.query_sphere(c, radius, f.build(), &mut outs.handles).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    oracle::same_hits(&ctx, &outs.handles, &want, f.sorted);
}

/// One nearest query through `nearest`.
fn check_nearest<const D: usize>(
    ctx: &str,
    w: &World<D>,
    objs: &[Obj<D>],
    (p, k, m): ([f32; D], usize, f32),
    f: &Qf,
    outs: &mut Outs<D>,
    t: &mut Tally,
) {
    let ctx = format!("{ctx}: nearest {p:?} k {k} max {m} {f:?}");
    let want = oracle::nearest(objs, &p, k, m, f);
    t.queries += 1;
    t.nearest_found += want.len();
    let reachable = oracle::nearest(objs, &p, usize::MAX, m, f).len();
    t.nearest_cut_by_k += (reachable > k && k > 0) as usize;
    t.nearest_at_max += want.iter().any(|&(_, d)| d == m) as usize;
    w.nearest(p, k, m, f.build(), &mut outs.hits).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    assert_eq!(bits(&outs.hits), bits(&want), "{ctx}");
}

/// A cast (a ray or a swept box) through its closest, all-hits (whole and cut by
/// `max_hits`) and callback forms: `closest`, `all(max_hits, out)`, `with(visit)`.
#[allow(clippy::too_many_arguments)]
fn check_cast<const D: usize>(
    ctx: &str,
    want: &[Hit],
    max_t: f32,
    r: &mut Rng,
    t: &mut Tally,
    closest: Option<(Handle, f32)>,
    mut all: impl FnMut(usize, &mut Vec<(Handle, f32)>),
    mut with: impl FnMut(&mut dyn FnMut(CastHit<D>) -> broadphase::CastAction) -> ControlFlow<()>,
) {
    let plain: Vec<(Handle, f32)> = want.iter().map(|&(h, t, _)| (h, t)).collect();
    assert_eq!(bits(closest.as_slice()), bits(&plain[..plain.len().min(1)]), "{ctx}: closest; all {want:?}");
    let mut out = Vec::new();
    all(usize::MAX, &mut out);
    assert_eq!(bits(&out), bits(&plain), "{ctx}: all hits");
    let cap = r.below(plain.len() + 2);
    t.max_hits_cut += (cap < plain.len()) as usize;
    all(cap, &mut out);
    assert_eq!(bits(&out), bits(&plain[..cap.min(plain.len())]), "{ctx}: the first {cap} hits");
    // Every hit in order, with its normal, when the callback ignores them all.
    let mut seen: Vec<Hit> = Vec::new();
    let pad = |h: &CastHit<D>| std::array::from_fn(|k| if k < D { h.normal[k] } else { 0.0 });
    let flow = with(&mut |h| {
        seen.push((h.handle, h.t, pad(&h)));
        broadphase::CastAction::Ignore
    });
    assert_eq!(flow, ControlFlow::Continue(()), "{ctx}: callback, ignoring all");
    assert_eq!(hit_bits(&seen), hit_bits(want), "{ctx}: callback, ignoring all");
    t.normals += want.iter().filter(|h| h.2 != [0.0; 3]).count();
    // A callback that clips, ignores and stops.
    let salt = r.next_u64();
    let (visits, stopped) = oracle::simulate(want, max_t, salt);
    t.clipped += (visits.len() < want.len()) as usize;
    let mut seen: Vec<Hit> = Vec::new();
    let flow = with(&mut |h| {
        seen.push((h.handle, h.t, pad(&h)));
        oracle::action(h.handle, h.t, salt)
    });
    assert_eq!(hit_bits(&seen), hit_bits(&visits), "{ctx}: callback, salt {salt}; all {want:?}");
    assert_eq!(flow.is_break(), stopped, "{ctx}: callback's flow, salt {salt}");
}

/// One ray through `cast_ray`, `cast_ray_all` and `cast_ray_with`.
fn check_ray<const D: usize>(
    ctx: &str,
    w: &World<D>,
    objs: &[Obj<D>],
    ray: Ray<D>,
    f: &Qf,
    r: &mut Rng,
    t: &mut Tally,
) {
    let ctx = format!("{ctx}: {ray:?} {f:?}");
    let want = oracle::cast_hits(objs, f, |b| oracle::ray_entry(&ray, b));
    t.queries += 1;
    t.ray_misses += want.is_empty() as usize;
    t.ray_hits += want.len();
    let met: Vec<&Obj<D>> = objs.iter().filter(|o| oracle::slab(&ray, &o.aabb).is_some()).collect();
    count_filter(t, f, &met);
    for &(h, at, _) in &want {
        t.zero_t += (at == 0.0) as usize;
        t.at_max_t += (at == ray.max_t && at > 0.0) as usize;
        if let Some(o) = objs.iter().find(|o| o.h == h) {
            t.grazes += (exit(&ray, &o.aabb) == at) as usize;
        }
    }
    let (o, d, m, qf) = (ray.origin, ray.dir, ray.max_t, f.build());
    let closest = w.cast_ray(o, d, m, qf).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    check_cast(
        &ctx,
        &want,
        m,
        r,
        t,
        closest,
        |cap, out| w.cast_ray_all(o, d, m, cap, qf, out).unwrap_or_else(|e| panic!("{ctx}: {e}")),
        |v| w.cast_ray_with(o, d, m, qf, v).unwrap_or_else(|e| panic!("{ctx}: {e}")),
    );
}

/// One swept box through `cast_aabb`, `cast_aabb_all` and `cast_aabb_with`.
fn check_sweep<const D: usize>(
    ctx: &str,
    w: &World<D>,
    objs: &[Obj<D>],
    s: Sweep<D>,
    f: &Qf,
    r: &mut Rng,
    t: &mut Tally,
) {
    let ctx = format!("{ctx}: {s:?} {f:?}");
    let want = oracle::cast_hits(objs, f, |b| oracle::sweep_entry(&s, b));
    t.queries += 1;
    t.sweep_hits += want.len();
    t.sweep_zero_t += want.iter().filter(|h| h.1 == 0.0).count();
    let met: Vec<&Obj<D>> = objs.iter().filter(|o| oracle::sweep_entry(&s, &o.aabb).is_some()).collect();
    count_filter(t, f, &met);
    let (a, d, m, qf) = (s.aabb, s.dir, s.max_t, f.build());
    let closest = w.cast_aabb(a, d, m, qf).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    check_cast(
        &ctx,
        &want,
        m,
        r,
        t,
        closest,
        |cap, out| w.cast_aabb_all(a, d, m, cap, qf, out).unwrap_or_else(|e| panic!("{ctx}: {e}")),
        |v| w.cast_aabb_with(a, d, m, qf, v).unwrap_or_else(|e| panic!("{ctx}: {e}")),
    );
}

/// A batch of each kind, of `n` random queries, against the oracle query by query.
fn check_batches<const D: usize>(
    ctx: &str,
    w: &World<D>,
    objs: &[Obj<D>],
    n: usize,
    r: &mut Rng,
    outs: &mut Outs<D>,
    t: &mut Tally,
) {
    let f = query_filter(r, objs);
    let qf = f.build();
    let ctx = format!("{ctx}: batch of {n}, {f:?}");
    let ok = |e: broadphase::Error| -> () { panic!("{ctx}: {e}") };
    t.batch_queries += 8 * n;
    let regions: Vec<Aabb<D>> = (0..n).map(|_| region_query(r, objs)).collect();
    w.query_aabbs(&regions, qf, &mut outs.regions).unwrap_or_else(ok);
    assert_eq!(outs.regions.len(), n, "{ctx}: regions answered");
    let mut items = Vec::new();
    for (i, q) in regions.iter().enumerate() {
        let want = oracle::region(objs, q, &f);
        oracle::same_hits(&format!("{ctx}: region {i} {q:?}"), outs.regions.get(i), &want, f.sorted);
        items.extend_from_slice(outs.regions.get(i));
    }
    assert_eq!(outs.regions.items(), items.as_slice(), "{ctx}: region items");
    assert!(outs.regions.get(n).is_empty() && outs.regions.is_empty() == (n == 0), "{ctx}: past the end");
    assert_eq!(outs.regions.iter().count(), n, "{ctx}: iter");

    let points: Vec<[f32; D]> = (0..n).map(|_| point_query(r, objs)).collect();
    w.query_points(&points, qf, &mut outs.points).unwrap_or_else(ok);
    assert_eq!(outs.points.len(), n, "{ctx}: points answered");
    for (i, (p, got)) in points.iter().zip(outs.points.iter()).enumerate() {
        let want = oracle::region(objs, &Aabb::new(*p, *p), &f);
        oracle::same_hits(&format!("{ctx}: point {i} {p:?}"), got, &want, f.sorted);
    }

    let balls: Vec<Sphere<D>> =
        (0..n).map(|_| sphere_query(r, objs)).map(|(c, s)| Sphere::new(c, s)).collect();
    w.query_spheres(&balls, qf, &mut outs.spheres).unwrap_or_else(ok);
    assert_eq!(outs.spheres.len(), n, "{ctx}: spheres answered");
    for (i, b) in balls.iter().enumerate() {
        let want = oracle::sphere(objs, &b.center, b.radius, &f);
        oracle::same_hits(&format!("{ctx}: sphere {i} {b:?}"), outs.spheres.get(i), &want, f.sorted);
    }

    let (_, k, m) = nearest_query(r, objs);
    w.nearest_to_points(&points, k, m, qf, &mut outs.nearest).unwrap_or_else(ok);
    assert_eq!(outs.nearest.len(), n, "{ctx}: nearest answered");
    for (i, p) in points.iter().enumerate() {
        let want = oracle::nearest(objs, p, k, m, &f);
        assert_eq!(bits(outs.nearest.get(i)), bits(&want), "{ctx}: nearest {i} {p:?} k {k} max {m}");
    }

    let cap = [usize::MAX, 0, 1, 3][r.below(4)];
    let rays: Vec<Ray<D>> = (0..n).map(|_| ray_query(r, objs)).collect();
    w.cast_rays(&rays, qf, &mut outs.closest).unwrap_or_else(ok);
    w.cast_rays_all(&rays, cap, qf, &mut outs.rays_all).unwrap_or_else(ok);
    assert_eq!((outs.closest.len(), outs.rays_all.len()), (n, n), "{ctx}: rays answered");
    for (i, ray) in rays.iter().enumerate() {
        let want = oracle::hits(objs, ray, &f);
        assert_eq!(bits(outs.rays_all.get(i)), bits(&want[..want.len().min(cap)]), "{ctx}: ray {i} {ray:?}");
        let first = outs.closest[i];
        assert_eq!(bits(first.as_slice()), bits(&want[..want.len().min(1)]), "{ctx}: closest {i} {ray:?}");
    }

    let sweeps: Vec<Sweep<D>> = (0..n).map(|_| sweep_query(r, objs)).collect();
    w.cast_aabbs(&sweeps, qf, &mut outs.closest).unwrap_or_else(ok);
    w.cast_aabbs_all(&sweeps, cap, qf, &mut outs.sweeps_all).unwrap_or_else(ok);
    assert_eq!((outs.closest.len(), outs.sweeps_all.len()), (n, n), "{ctx}: sweeps answered");
    for (i, s) in sweeps.iter().enumerate() {
        let want: Vec<(Handle, f32)> = oracle::cast_hits(objs, &f, |b| oracle::sweep_entry(s, b))
            .into_iter()
            .map(|h| (h.0, h.1))
            .collect();
        assert_eq!(
            bits(outs.sweeps_all.get(i)),
            bits(&want[..want.len().min(cap)]),
            "{ctx}: sweep {i} {s:?}"
        );
        let first = outs.closest[i];
        assert_eq!(bits(first.as_slice()), bits(&want[..want.len().min(1)]), "{ctx}: first {i} {s:?}");
    }
}

/// A random mix of `n` single queries of every kind, each with a random filter, and with
/// probability `p_batch` a batch of each kind, each against the oracle over `objs` (the
/// live objects).
#[allow(clippy::too_many_arguments)]
pub fn check_queries<const D: usize>(
    ctx: &str,
    w: &World<D>,
    objs: &[Obj<D>],
    n: usize,
    p_batch: f32,
    r: &mut Rng,
    outs: &mut Outs<D>,
    t: &mut Tally,
) {
    for i in 0..n {
        let ctx = format!("{ctx} query {i}");
        let f = query_filter(r, objs);
        match r.below(7) {
            0 => {
                let q = region_query(r, objs);
                check_region(&ctx, w, objs, q, false, &f, r, outs, t);
            }
            1 => {
                let p = point_query(r, objs);
                check_region(&ctx, w, objs, Aabb::new(p, p), true, &f, r, outs, t);
            }
            2 => check_sphere(&ctx, w, objs, sphere_query(r, objs), &f, outs, t),
            3 => check_nearest(&ctx, w, objs, nearest_query(r, objs), &f, outs, t),
            4 => check_sweep(&ctx, w, objs, sweep_query(r, objs), &f, r, t),
            _ => check_ray(&ctx, w, objs, ray_query(r, objs), &f, r, t),
        }
    }
    if r.chance(p_batch) {
        // Across the batches' chunk size (64) now and then.
        let n = if r.chance(0.3) { 60 + r.below(100) } else { r.below(12) };
        check_batches(ctx, w, objs, n, r, outs, t);
    }
}
