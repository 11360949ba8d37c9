//! The random queries that probe a world, drawn to hit the edges the query rules care
//! about: regions that are a live box, touch one on a face or miss it by one ulp,
//! zero-size regions at corners, huge and far regions; points at corners (exact or one
//! ulp off); rays along an axis (other components `0.0`, `-0.0` or `1e-40`), aimed at a
//! corner of a live box from a lattice point, starting inside or on a face of a box, with
//! `max_t` infinite, zero, or exactly at (or one ulp before) a box's entry; balls and
//! nearest queries whose radius or `max_distance` is exactly a live box's distance (or
//! one ulp short); swept boxes that are, touch or overlap live boxes, with the same
//! directions and lengths as rays; and query filters of every part (kinds, one-way mask,
//! live and stale handles left out, predicates on handle and user data).

use super::common::{next_down, next_up, Draws, Rng};
use super::model::Obj;
use super::oracle::{distance, slab, sweep_entry, Pred, Qf};
use broadphase::{Aabb, Handle, Ray, Sweep};

/// `x` one ulp up or down, where that stays finite.
fn ulp(x: f32, up: bool) -> f32 {
    let y = if up { next_up(x) } else { next_down(x) };
    if y.is_finite() {
        y
    } else {
        x
    }
}

/// A point between `a` and `b` (`u` in [0, 1]), computed in `f64` so that it is finite and
/// within `[a, b]` even for the widest boxes.
fn lerp(a: f32, b: f32, u: f32) -> f32 {
    (a as f64 * (1.0 - u as f64) + b as f64 * u as f64) as f32
}

fn pick<const D: usize>(r: &mut Rng, objs: &[Obj<D>]) -> Option<Aabb<D>> {
    (!objs.is_empty()).then(|| objs[r.below(objs.len())].aabb)
}

/// A corner of `b`.
fn corner<const D: usize>(r: &mut Rng, b: &Aabb<D>) -> [f32; D] {
    std::array::from_fn(|k| if r.chance(0.5) { b.min[k] } else { b.max[k] })
}

/// A coordinate on axis `k`: a lattice value, a bound of a live box (exact or one ulp
/// off), or a random value.
fn coord<const D: usize>(r: &mut Rng, objs: &[Obj<D>], k: usize) -> f32 {
    match (r.below(10), pick(r, objs)) {
        (0..=3, _) => r.below(11) as f32 - 1.0,
        (4..=6, Some(o)) => {
            let x = if r.chance(0.5) { o.min[k] } else { o.max[k] };
            match r.below(4) {
                0 => ulp(x, true),
                1 => ulp(x, false),
                _ => x,
            }
        }
        _ => r.range(-2.0, 12.0),
    }
}

/// A query region: a live box, one touching a live box on a face or missing it by one
/// ulp, a zero-size region at a corner, a part of a live box, a lattice box, a huge or a
/// far region, or a random one.
pub fn region_query<const D: usize>(r: &mut Rng, objs: &[Obj<D>]) -> Aabb<D> {
    let p = r.below(100);
    if let (0..=44, Some(o)) = (p, pick(r, objs)) {
        let mut q = o;
        match p {
            0..=9 => {}
            10..=24 => {
                let k = r.below(D);
                let ext = if r.chance(0.3) { 0.0 } else { r.range(0.0, 2.0) };
                let miss = r.chance(0.4);
                if r.chance(0.5) {
                    let lo = if miss { ulp(o.max[k], true) } else { o.max[k] };
                    q.min[k] = lo;
                    q.max[k] = (lo + ext).min(f32::MAX);
                } else {
                    let hi = if miss { ulp(o.min[k], false) } else { o.min[k] };
                    q.max[k] = hi;
                    q.min[k] = (hi - ext).max(-f32::MAX);
                }
            }
            25..=34 => {
                let c = corner(r, &o);
                q = Aabb::new(c, c);
            }
            _ => {
                for k in 0..D {
                    let (a, b) = (lerp(o.min[k], o.max[k], r.unit()), lerp(o.min[k], o.max[k], r.unit()));
                    (q.min[k], q.max[k]) = (a.min(b), a.max(b));
                }
            }
        }
        return q;
    }
    let mut q = Aabb::new([0.0; D], [0.0; D]);
    for k in 0..D {
        (q.min[k], q.max[k]) = match p {
            45..=69 => {
                let lo = r.below(11) as f32 - 1.0;
                (lo, lo + r.below(4) as f32)
            }
            70..=74 => (-1e30, 1e30),
            75..=76 => (-f32::MAX, f32::MAX),
            77..=81 => {
                let x = 1e9 + r.range(0.0, 1e3);
                (x, x + 1e2)
            }
            _ => {
                let x = r.range(-2.0, 12.0);
                (x, x + r.range(0.0, 4.0))
            }
        };
    }
    q
}

/// A query point: a corner of a live box (exact or one ulp off on each axis), a point
/// inside one, a lattice point, a far or a random one.
pub fn point_query<const D: usize>(r: &mut Rng, objs: &[Obj<D>]) -> [f32; D] {
    match (r.below(10), pick(r, objs)) {
        (0..=3, Some(o)) => {
            let c = corner(r, &o);
            c.map(|x| match r.below(4) {
                0 => ulp(x, true),
                1 => ulp(x, false),
                _ => x,
            })
        }
        (4..=5, Some(o)) => std::array::from_fn(|k| lerp(o.min[k], o.max[k], r.unit())),
        (6..=7, _) => std::array::from_fn(|k| coord(r, objs, k)),
        (8, _) => std::array::from_fn(|_| 1e9 + r.range(0.0, 1e3)),
        _ => std::array::from_fn(|_| r.range(-2.0, 12.0)),
    }
}

/// A query ray. Origins: lattice points and bounds of live boxes, points inside a box or
/// on its faces, far points. Directions: along one axis (the rest `0.0`, `-0.0` or
/// `±1e-40`), small integers, aimed at a corner or a point of a live box, random at three
/// scales. Lengths: infinite, zero, random, exactly at or one ulp before a box's entry.
pub fn ray_query<const D: usize>(r: &mut Rng, objs: &[Obj<D>]) -> Ray<D> {
    let o = pick(r, objs);
    let origin: [f32; D] = match (r.below(10), o) {
        (0..=3, _) => std::array::from_fn(|k| coord(r, objs, k)),
        (4..=5, Some(o)) => std::array::from_fn(|k| lerp(o.min[k], o.max[k], r.unit())),
        (6..=7, Some(o)) => {
            // On a face, an edge or a corner of `o`.
            std::array::from_fn(|k| match r.below(3) {
                0 => o.min[k],
                1 => o.max[k],
                _ => lerp(o.min[k], o.max[k], r.unit()),
            })
        }
        (8, _) => std::array::from_fn(|_| 1e9 + r.range(0.0, 1e3)),
        _ => std::array::from_fn(|_| r.range(-2.0, 12.0)),
    };
    let dir = direction(r, objs, &origin);
    let mut ray = Ray::new(origin, dir, f32::INFINITY);
    ray.max_t = match (r.below(10), o) {
        (0..=3, _) => f32::INFINITY,
        (4, _) => 0.0,
        (5..=6, _) => r.range(0.0, 15.0),
        (7..=8, Some(o)) => match slab(&ray, &o) {
            Some(t) if r.chance(0.5) => t,
            Some(t) if t > 0.0 && t.is_finite() => next_down(t),
            _ => f32::INFINITY,
        },
        _ => [f32::MAX, 1.0][r.below(2)],
    };
    ray
}

/// A direction: along one axis (the rest `0.0`, `-0.0` or `±1e-40`), small integers,
/// from `origin` to a corner or a point of a live box, random at three scales.
fn direction<const D: usize>(r: &mut Rng, objs: &[Obj<D>], origin: &[f32; D]) -> [f32; D] {
    let target = pick(r, objs);
    let mut dir: [f32; D] = match (r.below(10), target) {
        (0..=3, _) => {
            let k = r.below(D);
            const MAG: [f32; 5] = [1.0, 2.0, 0.5, 3.7, 1e-3];
            std::array::from_fn(|j| {
                if j == k {
                    MAG[r.below(5)] * if r.chance(0.5) { 1.0 } else { -1.0 }
                } else {
                    [0.0, -0.0, 1e-40, -1e-40][r.below(4)]
                }
            })
        }
        (4..=5, _) => std::array::from_fn(|_| r.below(5) as f32 - 2.0),
        (6..=7, Some(t)) => {
            let c = if r.chance(0.6) {
                corner(r, &t)
            } else {
                std::array::from_fn(|k| lerp(t.min[k], t.max[k], r.below(3) as f32 * 0.5))
            };
            std::array::from_fn(|k| c[k] - origin[k])
        }
        _ => {
            let s = [1.0, 1e-3, 1e3][r.below(3)];
            std::array::from_fn(|_| r.range(-1.0, 1.0) * s)
        }
    };
    if dir.iter().any(|x| !x.is_finite()) || dir.iter().all(|&x| x == 0.0) {
        dir = std::array::from_fn(|k| if k == 0 { 1.0 } else { 0.0 });
    }
    dir
}

/// A swept box: a region of [`region_query`] (a live box, one touching or overlapping
/// one, zero-size, huge, far) moved along a [`direction`], for a length like a ray's or
/// exactly at (or one ulp before) where it first touches a live box.
pub fn sweep_query<const D: usize>(r: &mut Rng, objs: &[Obj<D>]) -> Sweep<D> {
    let aabb = region_query(r, objs);
    let centre: [f32; D] = std::array::from_fn(|k| lerp(aabb.min[k], aabb.max[k], 0.5));
    let dir = direction(r, objs, &centre);
    let mut s = Sweep::new(aabb, dir, f32::INFINITY);
    s.max_t = match (r.below(10), pick(r, objs)) {
        (0..=3, _) => f32::INFINITY,
        (4, _) => 0.0,
        (5..=6, _) => r.range(0.0, 15.0),
        (7..=8, Some(o)) => match sweep_entry(&s, &o) {
            Some((t, _)) if r.chance(0.5) => t,
            Some((t, _)) if t > 0.0 && t.is_finite() => next_down(t),
            _ => f32::INFINITY,
        },
        _ => [f32::MAX, 1.0][r.below(2)],
    };
    s
}

/// A distance bound from a point: a live box's exact distance (a touch) or one ulp short
/// of it, 0, a random one, or a huge one.
fn reach<const D: usize>(r: &mut Rng, objs: &[Obj<D>], p: &[f32; D]) -> f32 {
    match (r.below(10), pick(r, objs)) {
        (0..=3, Some(o)) => {
            let d = distance(p, &o);
            if r.chance(0.7) || d == 0.0 || !d.is_finite() {
                d.min(f32::MAX)
            } else {
                next_down(d)
            }
        }
        (4, _) => 0.0,
        (5..=7, _) => r.range(0.0, 6.0),
        _ => [1e30, f32::MAX][r.below(2)],
    }
}

/// A ball: a centre of [`point_query`], a radius of [`reach`].
pub fn sphere_query<const D: usize>(r: &mut Rng, objs: &[Obj<D>]) -> ([f32; D], f32) {
    let c = point_query(r, objs);
    (c, reach(r, objs, &c))
}

/// A nearest query: a point of [`point_query`], `k` from 0 to past every object, and a
/// `max_distance` of [`reach`] or infinite.
pub fn nearest_query<const D: usize>(r: &mut Rng, objs: &[Obj<D>]) -> ([f32; D], usize, f32) {
    let p = point_query(r, objs);
    let k = [0, 1, 1, 2, 3, 5, 10, usize::MAX][r.below(8)];
    let m = if r.chance(0.4) { f32::INFINITY } else { reach(r, objs, &p) };
    (p, k, m)
}

/// A query filter, sorting its hits by handle half the time: every object 40% of the
/// time; else kinds (one, two, or none), a mask
/// (membership 0 passes none; `u32::MAX` all but membership 0), live handles left out
/// (one, or a short list), a stale handle, a predicate.
pub fn query_filter<const D: usize>(r: &mut Rng, objs: &[Obj<D>]) -> Qf {
    let mut f = Qf { sorted: r.chance(0.5), ..Qf::default() };
    if r.chance(0.4) {
        return f;
    }
    if r.chance(0.5) {
        f.kinds = match r.below(8) {
            0 => [true, false, false],
            1 => [false, true, false],
            2 => [false, false, true],
            3 => [false, true, true],
            4 => [true, false, true],
            5 => [true, true, false],
            6 => [false, false, false],
            _ => [true; 3],
        };
    }
    if r.chance(0.3) {
        f.mask = Some([1, 2, 3, u32::MAX, 0][r.below(5)]);
    }
    let live = |r: &mut Rng| objs[r.below(objs.len())].h;
    if !objs.is_empty() && r.chance(0.3) {
        f.one = Some(live(r));
    } else if r.chance(0.05) {
        f.one = Some(Handle::from_raw(r.next_u64()));
    }
    if !objs.is_empty() && r.chance(0.2) {
        f.list = (0..1 + r.below(3)).map(|_| live(r)).collect();
    }
    if r.chance(0.25) {
        f.pred = Some([Pred::EvenData, Pred::NotThirds, Pred::Never][r.below(3)]);
    }
    f
}
