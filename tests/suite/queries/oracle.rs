//! The brute-force oracle for the world's queries, and the check that runs every query
//! and batch against it (on random queries from `draw.rs`).
//!
//! The oracle reads only the live objects of the model (handle, box, kind, filter) and
//! applies the documented rules itself, one object at a time: closed overlap for regions
//! and points, the slab rule written out for rays (with explicit comparisons, so an entry
//! `t` is never `-0.0`), the filter rule, and the orders the docs promise (by handle; by
//! `(t, handle)`). Nothing here calls the crate's own tests of boxes or rays.

use super::common::{Draws, Rng};
use super::draw::{point_query, query_filter, ray_query, region_query, select};
use super::model::Obj;
use broadphase::{Aabb, Batch, Filter, Handle, Kind, Ray, Select, World};
use std::ops::ControlFlow;

// ---------------------------------------------------------------------------------------------
// The rules
// ---------------------------------------------------------------------------------------------

/// Whether `select` takes objects of kind `k`.
pub fn selects(select: Select, k: Kind) -> bool {
    match select {
        Select::All => true,
        Select::Static => k == Kind::Static,
        Select::Dynamic => k != Kind::Static,
    }
}

/// Whether the query filter `f` takes an object with filter `o` (`None` takes all).
pub fn passes(f: Option<Filter>, o: Filter) -> bool {
    f.map_or(true, |f| f.membership & o.mask != 0 && o.membership & f.mask != 0)
}

/// Closed overlap on every axis.
pub fn overlaps<const D: usize>(a: &Aabb<D>, b: &Aabb<D>) -> bool {
    (0..D).all(|k| a.min[k] <= b.max[k] && b.min[k] <= a.max[k])
}

/// The documented slab rule, in `f32`: where the ray enters `b` at some
/// `0 <= t <= max_t`, that `t`.
pub fn slab<const D: usize>(ray: &Ray<D>, b: &Aabb<D>) -> Option<f32> {
    let (mut lo, mut hi) = (0.0f32, ray.max_t);
    for k in 0..D {
        let r = 1.0f32 / ray.dir[k];
        let inv = if r.is_finite() { r } else { 0.0 };
        if inv == 0.0 {
            if ray.origin[k] < b.min[k] || ray.origin[k] > b.max[k] {
                return None;
            }
        } else {
            let a = (b.min[k] - ray.origin[k]) * inv;
            let c = (b.max[k] - ray.origin[k]) * inv;
            let (near, far) = if a <= c { (a, c) } else { (c, a) };
            if near > lo {
                lo = near;
            }
            if far < hi {
                hi = far;
            }
        }
    }
    (lo <= hi).then_some(lo)
}

fn takes<const D: usize>(o: &Obj<D>, select: Select, filter: Option<Filter>) -> bool {
    selects(select, o.kind) && passes(filter, o.filter)
}

/// Every object of `objs` the region query returns, sorted by handle.
pub fn region<const D: usize>(
    objs: &[Obj<D>],
    q: &Aabb<D>,
    select: Select,
    filter: Option<Filter>,
) -> Vec<Handle> {
    let mut v: Vec<Handle> =
        objs.iter().filter(|o| takes(o, select, filter) && overlaps(&o.aabb, q)).map(|o| o.h).collect();
    v.sort();
    v
}

/// Every hit of the ray, sorted by `(t, handle)`.
pub fn hits<const D: usize>(
    objs: &[Obj<D>],
    ray: &Ray<D>,
    select: Select,
    filter: Option<Filter>,
) -> Vec<(Handle, f32)> {
    let mut v: Vec<(Handle, f32)> = objs
        .iter()
        .filter(|o| takes(o, select, filter))
        .filter_map(|o| slab(ray, &o.aabb).map(|t| (o.h, t)))
        .collect();
    v.sort_by(|a, b| a.1.partial_cmp(&b.1).expect("t is never NaN").then(a.0.cmp(&b.0)));
    v
}

/// Hits as comparable bits: `(handle, t bits)`.
pub fn bits(v: &[(Handle, f32)]) -> Vec<(Handle, u32)> {
    v.iter().map(|&(h, t)| (h, t.to_bits())).collect()
}

// ---------------------------------------------------------------------------------------------
// The check
// ---------------------------------------------------------------------------------------------

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
}

/// Reused output buffers (so each call also proves that `out` is cleared or rewritten).
pub struct Outs<const D: usize> {
    handles: Vec<Handle>,
    hits: Vec<(Handle, f32)>,
    regions: Batch<Handle>,
    points: Batch<Handle>,
    rays_all: Batch<(Handle, f32)>,
    closest: Vec<Option<(Handle, f32)>>,
}

impl<const D: usize> Default for Outs<D> {
    fn default() -> Self {
        Self {
            handles: Vec::new(),
            hits: Vec::new(),
            regions: Batch::new(),
            points: Batch::new(),
            rays_all: Batch::new(),
            closest: Vec::new(),
        }
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

fn count_region<const D: usize>(t: &mut Tally, objs: &[Obj<D>], q: &Aabb<D>, want: &[Handle]) {
    t.queries += 1;
    if want.is_empty() {
        t.empty += 1;
    }
    t.found += want.len();
    for o in objs.iter().filter(|o| want.contains(&o.h)) {
        if (0..D).any(|k| o.aabb.min[k] == q.max[k] || o.aabb.max[k] == q.min[k]) {
            t.touching += 1;
        }
    }
}

fn count_ray<const D: usize>(t: &mut Tally, objs: &[Obj<D>], ray: &Ray<D>, want: &[(Handle, f32)]) {
    t.queries += 1;
    if want.is_empty() {
        t.ray_misses += 1;
    }
    t.ray_hits += want.len();
    for &(h, at) in want {
        t.zero_t += (at == 0.0) as usize;
        t.at_max_t += (at == ray.max_t && at > 0.0) as usize;
        if let Some(o) = objs.iter().find(|o| o.h == h) {
            t.grazes += (exit(ray, &o.aabb) == at) as usize;
        }
    }
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
    (sel, f): (Select, Option<Filter>),
    r: &mut Rng,
    outs: &mut Outs<D>,
    t: &mut Tally,
) {
    let ctx = format!("{ctx}: region {q:?} point {point} {sel:?} {f:?}");
    let want = region(objs, &q, sel, f);
    count_region(t, objs, &q, &want);
    if point {
        w.query_point(q.min, sel, f, &mut outs.handles).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    } else {
        w.query_aabb(q, sel, f, &mut outs.handles).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    }
    assert_eq!(outs.handles, want, "{ctx}: query result");
    let mut all = Vec::new();
    let flow = w.query_aabb_each(q, sel, f, |h| {
        all.push(h);
        ControlFlow::Continue(())
    });
    assert_eq!(flow, Ok(ControlFlow::Continue(())), "{ctx}: each, whole");
    all.sort();
    assert_eq!(all, want, "{ctx}: each, whole");
    let stop = 1 + r.below(want.len() + 2);
    t.early_stops += (stop <= want.len()) as usize;
    check_stop(&ctx, &want, stop, |v| w.query_aabb_each(q, sel, f, v).expect("valid region"));
}

/// One ray through `cast_ray`, `cast_ray_all`, `cast_ray_each` whole and stopped early.
#[allow(clippy::too_many_arguments)]
fn check_ray<const D: usize>(
    ctx: &str,
    w: &World<D>,
    objs: &[Obj<D>],
    ray: Ray<D>,
    (sel, f): (Select, Option<Filter>),
    r: &mut Rng,
    outs: &mut Outs<D>,
    t: &mut Tally,
) {
    let ctx = format!("{ctx}: {ray:?} {sel:?} {f:?}");
    let want = hits(objs, &ray, sel, f);
    count_ray(t, objs, &ray, &want);
    let (o, d, m) = (ray.origin, ray.dir, ray.max_t);
    let closest = w.cast_ray(o, d, m, sel, f).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    assert_eq!(bits(closest.as_slice()), bits(&want[..want.len().min(1)]), "{ctx}: closest; all {want:?}");
    w.cast_ray_all(o, d, m, sel, f, &mut outs.hits).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    assert_eq!(bits(&outs.hits), bits(&want), "{ctx}: all hits");
    let mut all = Vec::new();
    let flow = w.cast_ray_each(o, d, m, sel, f, |h, at| {
        all.push((h, at));
        ControlFlow::Continue(())
    });
    assert_eq!(flow, Ok(ControlFlow::Continue(())), "{ctx}: each, whole");
    all.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    assert_eq!(bits(&all), bits(&want), "{ctx}: each, whole");
    let want_bits = bits(&want);
    let stop = 1 + r.below(want.len() + 2);
    t.early_stops += (stop <= want.len()) as usize;
    check_stop(&ctx, &want_bits, stop, |v| {
        w.cast_ray_each(o, d, m, sel, f, |h, at| v((h, at.to_bits()))).expect("valid ray")
    });
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
    let (sel, f) = (select(r), query_filter(r));
    let ctx = format!("{ctx}: batch of {n}, {sel:?} {f:?}");
    t.batch_queries += 4 * n;
    let regions: Vec<Aabb<D>> = (0..n).map(|_| region_query(r, objs)).collect();
    w.query_aabbs(&regions, sel, f, &mut outs.regions).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    assert_eq!(outs.regions.len(), n, "{ctx}: regions answered");
    let mut items = Vec::new();
    for (i, q) in regions.iter().enumerate() {
        let want = region(objs, q, sel, f);
        assert_eq!(outs.regions.get(i), want.as_slice(), "{ctx}: region {i} {q:?}");
        items.extend(want);
    }
    assert_eq!(outs.regions.items(), items.as_slice(), "{ctx}: region items");
    assert!(outs.regions.get(n).is_empty() && outs.regions.is_empty() == (n == 0), "{ctx}: past the end");
    assert_eq!(outs.regions.iter().count(), n, "{ctx}: iter");

    let points: Vec<[f32; D]> = (0..n).map(|_| point_query(r, objs)).collect();
    w.query_points(&points, sel, f, &mut outs.points).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    assert_eq!(outs.points.len(), n, "{ctx}: points answered");
    for (i, (p, got)) in points.iter().zip(outs.points.iter()).enumerate() {
        assert_eq!(got, region(objs, &Aabb::new(*p, *p), sel, f).as_slice(), "{ctx}: point {i} {p:?}");
    }

    let rays: Vec<Ray<D>> = (0..n).map(|_| ray_query(r, objs)).collect();
    w.cast_rays(&rays, sel, f, &mut outs.closest).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    w.cast_rays_all(&rays, sel, f, &mut outs.rays_all).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    assert_eq!((outs.closest.len(), outs.rays_all.len()), (n, n), "{ctx}: rays answered");
    for (i, ray) in rays.iter().enumerate() {
        let want = hits(objs, ray, sel, f);
        assert_eq!(bits(outs.rays_all.get(i)), bits(&want), "{ctx}: ray {i} {ray:?}");
        let first = outs.closest[i];
        assert_eq!(bits(first.as_slice()), bits(&want[..want.len().min(1)]), "{ctx}: closest {i} {ray:?}");
    }
}

/// A random mix of `n` single queries of every kind, and with probability `p_batch` a
/// batch of each kind, each against the oracle over `objs` (the live objects).
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
        let sf = (select(r), query_filter(r));
        match r.below(3) {
            0 => {
                let q = region_query(r, objs);
                check_region(&ctx, w, objs, q, false, sf, r, outs, t);
            }
            1 => {
                let p = point_query(r, objs);
                check_region(&ctx, w, objs, Aabb::new(p, p), true, sf, r, outs, t);
            }
            _ => {
                let ray = ray_query(r, objs);
                check_ray(&ctx, w, objs, ray, sf, r, outs, t);
            }
        }
    }
    if r.chance(p_batch) {
        // Across the batches' chunk size (64) now and then.
        let n = if r.chance(0.3) { 60 + r.below(100) } else { r.below(12) };
        check_batches(ctx, w, objs, n, r, outs, t);
    }
}
