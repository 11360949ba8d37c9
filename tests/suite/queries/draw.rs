//! The random queries that probe a world, drawn to hit the edges the query rules care
//! about: regions that are a live box, touch one on a face or miss it by one ulp,
//! zero-size regions at corners, huge and far regions; points at corners (exact or one
//! ulp off); rays along an axis (other components `0.0`, `-0.0` or `1e-40`), aimed at a
//! corner of a live box from a lattice point, starting inside or on a face of a box, with
//! `max_t` infinite, zero, or exactly at (or one ulp before) a box's entry.

use super::common::{next_down, next_up, Draws, Rng};
use super::model::Obj;
use super::oracle::slab;
use broadphase::{Aabb, Filter, Ray, Select};

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
    let mut ray = Ray::new(origin, dir, f32::INFINITY);
    ray.max_t = match (r.below(10), o) {
        (0..=3, _) => f32::INFINITY,
        (4, _) => 0.0,
        (5..=6, _) => r.range(0.0, 15.0),
        (7..=8, Some(o)) => match slab(&ray, &o) {
            Some(t) if r.chance(0.5) => t,
            Some(t) if t > 0.0 => next_down(t),
            _ => f32::INFINITY,
        },
        _ => [f32::MAX, 1.0][r.below(2)],
    };
    ray
}

/// A random `Select`.
pub fn select(r: &mut Rng) -> Select {
    [Select::All, Select::Static, Select::Dynamic][r.below(3)]
}

/// No filter half the time, else one of a few groups (membership 0 among them: passes
/// nothing).
pub fn query_filter(r: &mut Rng) -> Option<Filter> {
    const GROUPS: [u32; 5] = [1, 2, 3, u32::MAX, 0];
    r.chance(0.5).then(|| Filter { membership: GROUPS[r.below(5)], mask: GROUPS[r.below(4)] })
}
