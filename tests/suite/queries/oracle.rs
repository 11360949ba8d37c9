//! The brute-force oracle for the world's queries: the documented rules, applied one
//! live object of the model at a time.
//!
//! The oracle reads only the live objects of the model (handle, box, kind, filter, user
//! data) and writes the rules out itself: closed overlap for regions and points; the slab
//! rule for rays and swept boxes (with explicit comparisons, so an entry `t` is never
//! `-0.0`); the Euclidean distance to a box in `f64`, rounded to `f32` once, for nearest
//! and sphere queries; the query filter's parts (kinds, one-way mask, excluded handles,
//! a predicate on handle and user data); the entry face's normal; what a cast callback's
//! actions do; and the orders the docs promise (by handle; by `(t, handle)`; by
//! `(distance, handle)`). Nothing here calls the crate's own tests of boxes or rays.

use super::model::Obj;
use broadphase::{Aabb, CastAction, Handle, Kind, QueryFilter, Ray, Sweep};

// ---------------------------------------------------------------------------------------------
// The filter
// ---------------------------------------------------------------------------------------------

/// A predicate on `(handle, user data)` the tests pass to queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pred {
    /// User data even (0, the default, passes).
    EvenData,
    /// Slot index not a multiple of 3.
    NotThirds,
    /// Nothing passes.
    Never,
}

fn even_data(_: Handle, d: u64) -> bool {
    d.is_multiple_of(2)
}

fn not_thirds(h: Handle, _: u64) -> bool {
    !h.index().is_multiple_of(3)
}

fn never(_: Handle, _: u64) -> bool {
    false
}

impl Pred {
    pub fn eval(self, h: Handle, d: u64) -> bool {
        match self {
            Pred::EvenData => d.is_multiple_of(2),
            Pred::NotThirds => !h.index().is_multiple_of(3),
            Pred::Never => false,
        }
    }
}

/// A query filter as the tests describe it: [`Qf::takes`] applies it, [`Qf::build`] makes
/// the crate's.
#[derive(Clone, Debug, PartialEq)]
pub struct Qf {
    /// Static, kinematic, dynamic.
    pub kinds: [bool; 3],
    pub mask: Option<u32>,
    pub one: Option<Handle>,
    pub list: Vec<Handle>,
    pub pred: Option<Pred>,
    /// Region, point and sphere hits sorted by handle (`QueryFilter::sorted`), else in
    /// the trees' order.
    pub sorted: bool,
}

impl Default for Qf {
    fn default() -> Self {
        Qf { kinds: [true; 3], mask: None, one: None, list: Vec::new(), pred: None, sorted: false }
    }
}

fn kind_index(k: Kind) -> usize {
    match k {
        Kind::Static => 0,
        Kind::Kinematic => 1,
        Kind::Dynamic => 2,
    }
}

impl Qf {
    /// The crate's filter: a single kind through `only_*`, else `exclude_*` for each kind
    /// left out.
    pub fn build(&self) -> QueryFilter<'_> {
        let mut f = if self.sorted { QueryFilter::new().sorted() } else { QueryFilter::new() };
        if self.kinds.iter().filter(|&&k| k).count() == 1 {
            f = match self.kinds.iter().position(|&k| k) {
                Some(0) => f.only_static(),
                Some(1) => f.only_kinematic(),
                _ => f.only_dynamic(),
            };
        } else {
            f = if self.kinds[0] { f } else { f.exclude_static() };
            f = if self.kinds[1] { f } else { f.exclude_kinematic() };
            f = if self.kinds[2] { f } else { f.exclude_dynamic() };
        }
        if let Some(m) = self.mask {
            f = f.mask(m);
        }
        if let Some(h) = self.one {
            f = f.exclude_handle(h);
        }
        if !self.list.is_empty() {
            f = f.exclude(&self.list);
        }
        if let Some(p) = self.pred {
            let keep: &'static (dyn Fn(Handle, u64) -> bool + Sync) = match p {
                Pred::EvenData => &even_data,
                Pred::NotThirds => &not_thirds,
                Pred::Never => &never,
            };
            f = f.predicate(keep);
        }
        f
    }

    /// Whether the filter takes `o`: its kind, its membership against the mask (one-way:
    /// the object's own mask is not read), the handles left out, the predicate.
    pub fn takes<const D: usize>(&self, o: &Obj<D>) -> bool {
        self.kinds[kind_index(o.kind)]
            && self.mask.is_none_or(|m| m & o.filter.membership != 0)
            && self.one != Some(o.h)
            && !self.list.contains(&o.h)
            && self.pred.is_none_or(|p| p.eval(o.h, o.data))
    }
}

// ---------------------------------------------------------------------------------------------
// The shapes
// ---------------------------------------------------------------------------------------------

/// Closed overlap on every axis.
pub fn overlaps<const D: usize>(a: &Aabb<D>, b: &Aabb<D>) -> bool {
    (0..D).all(|k| a.min[k] <= b.max[k] && b.min[k] <= a.max[k])
}

/// `1 / d`, or 0 where that overflows (the motion is parallel to the axis).
fn inv(d: f32) -> f32 {
    let r = 1.0f32 / d;
    if r.is_finite() {
        r
    } else {
        0.0
    }
}

/// The slab rule for a motion whose offsets to a box's bounds on axis `k` are
/// `lo_off(k)` (to `b.min`) and `hi_off(k)` (to `b.max`), parallel where `inv` is 0 (then
/// `parallel_ok(k)` must hold): where it enters at some `0 <= t <= max_t`, that `t`, and
/// each axis' entry.
fn slab_rule<const D: usize>(
    dir: &[f32; D],
    max_t: f32,
    lo_off: impl Fn(usize) -> f32,
    hi_off: impl Fn(usize) -> f32,
    parallel_ok: impl Fn(usize) -> bool,
) -> Option<(f32, [Option<f32>; D])> {
    let (mut lo, mut hi) = (0.0f32, max_t);
    let mut nears = [None; D];
    for k in 0..D {
        let i = inv(dir[k]);
        if i == 0.0 {
            if !parallel_ok(k) {
                return None;
            }
        } else {
            let a = lo_off(k) * i;
            let c = hi_off(k) * i;
            let (near, far) = if a <= c { (a, c) } else { (c, a) };
            nears[k] = Some(near);
            if near > lo {
                lo = near;
            }
            if far < hi {
                hi = far;
            }
        }
    }
    (lo <= hi).then_some((lo, nears))
}

/// The normal of the face entered at `t`: on the first axis whose entry is `t`, against
/// the motion; zero where no axis is entered at `t` (a start inside).
fn face<const D: usize>(dir: &[f32; D], t: f32, nears: &[Option<f32>; D]) -> [f32; D] {
    let mut n = [0.0; D];
    if let Some(k) = (0..D).find(|&k| nears[k] == Some(t)) {
        n[k] = if dir[k] > 0.0 { -1.0 } else { 1.0 };
    }
    n
}

/// Where the ray enters `b` at some `0 <= t <= max_t`, that `t`.
pub fn slab<const D: usize>(ray: &Ray<D>, b: &Aabb<D>) -> Option<f32> {
    ray_entry(ray, b).map(|e| e.0)
}

/// The ray's entry into `b` and the normal of the face it enters.
pub fn ray_entry<const D: usize>(ray: &Ray<D>, b: &Aabb<D>) -> Option<(f32, [f32; D])> {
    let o = &ray.origin;
    let (t, nears) = slab_rule(
        &ray.dir,
        ray.max_t,
        |k| b.min[k] - o[k],
        |k| b.max[k] - o[k],
        |k| b.min[k] <= o[k] && o[k] <= b.max[k],
    )?;
    Some((t, face(&ray.dir, t, &nears)))
}

/// Where the swept box first touches `b` (the slab rule on `b` grown by its extents: the
/// offsets `b.min - a.max` and `b.max - a.min`), and the normal of the face touched.
pub fn sweep_entry<const D: usize>(s: &Sweep<D>, b: &Aabb<D>) -> Option<(f32, [f32; D])> {
    let a = &s.aabb;
    let (t, nears) = slab_rule(
        &s.dir,
        s.max_t,
        |k| b.min[k] - a.max[k],
        |k| b.max[k] - a.min[k],
        |k| b.min[k] <= a.max[k] && a.min[k] <= b.max[k],
    )?;
    Some((t, face(&s.dir, t, &nears)))
}

/// The Euclidean distance from `p` to `b`: the per-axis gaps squared and summed in `f64`,
/// the root rounded to `f32`.
pub fn distance<const D: usize>(p: &[f32; D], b: &Aabb<D>) -> f32 {
    let mut sum = 0.0f64;
    for ((&x, &lo), &hi) in p.iter().zip(&b.min).zip(&b.max) {
        let (x, lo, hi) = (x as f64, lo as f64, hi as f64);
        let gap = if x < lo {
            lo - x
        } else if x > hi {
            x - hi
        } else {
            0.0
        };
        sum += gap * gap;
    }
    sum.sqrt() as f32
}

// ---------------------------------------------------------------------------------------------
// The queries
// ---------------------------------------------------------------------------------------------

/// Checks a region, point or sphere query's hits `got` against the oracle's `want`
/// (sorted by handle): equal where the filter sorts, else the same handles, each once,
/// in the trees' order.
pub fn same_hits(ctx: &str, got: &[Handle], want: &[Handle], sorted: bool) {
    if sorted {
        assert_eq!(got, want, "{ctx}: hits sorted by handle");
    } else {
        let mut g = got.to_vec();
        g.sort();
        assert_eq!(g, want, "{ctx}: hits in the trees' order");
    }
}

/// Every object the region query returns, sorted by handle.
pub fn region<const D: usize>(objs: &[Obj<D>], q: &Aabb<D>, f: &Qf) -> Vec<Handle> {
    let mut v: Vec<Handle> =
        objs.iter().filter(|o| overlaps(&o.aabb, q) && f.takes(o)).map(|o| o.h).collect();
    v.sort();
    v
}

/// Every object within `radius` of `center`, sorted by handle.
pub fn sphere<const D: usize>(objs: &[Obj<D>], center: &[f32; D], radius: f32, f: &Qf) -> Vec<Handle> {
    let mut v: Vec<Handle> =
        objs.iter().filter(|o| distance(center, &o.aabb) <= radius && f.takes(o)).map(|o| o.h).collect();
    v.sort();
    v
}

/// The first `k` objects by `(distance, handle)` within `max_distance`.
pub fn nearest<const D: usize>(
    objs: &[Obj<D>],
    p: &[f32; D],
    k: usize,
    max_distance: f32,
    f: &Qf,
) -> Vec<(Handle, f32)> {
    let mut v: Vec<(Handle, f32)> = objs
        .iter()
        .filter(|o| f.takes(o))
        .map(|o| (o.h, distance(p, &o.aabb)))
        .filter(|&(_, d)| d <= max_distance)
        .collect();
    v.sort_by(|a, b| a.1.partial_cmp(&b.1).expect("no NaN distance").then(a.0.cmp(&b.0)));
    v.truncate(k);
    v
}

/// A hit with its face normal, padded to 3 axes (so that one type serves 2D and 3D).
pub type Hit = (Handle, f32, [f32; 3]);

fn pad<const D: usize>(n: [f32; D]) -> [f32; 3] {
    std::array::from_fn(|k| if k < D { n[k] } else { 0.0 })
}

/// Every hit of a cast whose entry into a box `entry` gives, sorted by `(t, handle)`.
pub fn cast_hits<const D: usize>(
    objs: &[Obj<D>],
    f: &Qf,
    entry: impl Fn(&Aabb<D>) -> Option<(f32, [f32; D])>,
) -> Vec<Hit> {
    let mut v: Vec<Hit> = objs
        .iter()
        .filter_map(|o| entry(&o.aabb).filter(|_| f.takes(o)).map(|(t, n)| (o.h, t, pad(n))))
        .collect();
    v.sort_by(|a, b| a.1.partial_cmp(&b.1).expect("t is never NaN").then(a.0.cmp(&b.0)));
    v
}

/// Every hit of the ray, sorted by `(t, handle)`, without normals.
pub fn hits<const D: usize>(objs: &[Obj<D>], ray: &Ray<D>, f: &Qf) -> Vec<(Handle, f32)> {
    cast_hits(objs, f, |b| ray_entry(ray, b)).into_iter().map(|(h, t, _)| (h, t)).collect()
}

/// The action a test callback takes on a hit: a function of the handle and `salt`, from
/// stopping to clipping at, before or after the hit, ignoring, and a NaN clip.
pub fn action(h: Handle, t: f32, salt: u64) -> CastAction {
    match (h.index() as u64).wrapping_mul(0x9e37_79b9).wrapping_add(salt) % 10 {
        0 => CastAction::Stop,
        1..=3 => CastAction::Ignore,
        4 | 5 => CastAction::Clip(t),
        6 => CastAction::Clip(t * 1.5 + 0.5),
        7 => CastAction::Clip(t * 0.5),
        8 => CastAction::Clip(f32::NAN),
        _ => CastAction::Clip(-1.0),
    }
}

/// What a cast with the callback of [`action`] visits, given every hit in order and the
/// cast's length: each hit while its `t` is at most the length clipped so far, until a
/// stop; and whether it stopped.
pub fn simulate(all: &[Hit], max_t: f32, salt: u64) -> (Vec<Hit>, bool) {
    let mut cut = max_t;
    let mut seen = Vec::new();
    for &(h, t, n) in all {
        if t > cut {
            break;
        }
        seen.push((h, t, n));
        match action(h, t, salt) {
            CastAction::Stop => return (seen, true),
            CastAction::Ignore => {}
            CastAction::Clip(to) => {
                if to < cut {
                    cut = to;
                }
            }
        }
    }
    (seen, false)
}

/// Hits as comparable bits: `(handle, t bits)`.
pub fn bits(v: &[(Handle, f32)]) -> Vec<(Handle, u32)> {
    v.iter().map(|&(h, t)| (h, t.to_bits())).collect()
}

/// Hits with normals as comparable bits.
pub fn hit_bits(v: &[Hit]) -> Vec<(Handle, u32, [u32; 3])> {
    v.iter().map(|&(h, t, n)| (h, t.to_bits(), n.map(f32::to_bits))).collect()
}
