//! The world's queries and batches, and `find_pairs_between`, against brute force.
//!
//! - Random sequences of every world call (insert, insert_with with user data, extend,
//!   extend_with, set_aabb, set_aabbs, set_kind, set_filter, set_user_data, remove,
//!   update) in 2D and 3D, at margins 0, 0.25 and -0.2, on boxes of every shape the world
//!   must hold (touching, identical, zero-size, huge, far outside the bounds, sizes over
//!   six orders of magnitude); `validate` after each call, and a random mix of every
//!   query form and batch (regions, points, spheres, nearest, rays and swept boxes:
//!   closest, all, the first `max_hits`, and a callback that clips, ignores and stops;
//!   `queries/draw.rs`), each with a random query filter (kinds including kinematic, a
//!   one-way mask, live and stale handles left out, predicates on handle and user data),
//!   compared with the oracle (`queries/oracle.rs`, the rules applied to the model's live
//!   objects), both with changes pending and right after an update
//!   (`queries/check.rs`).
//! - Hand-built worlds where the answer is known exactly (`queries/adversarial.rs`):
//!   touching and one-ulp-missing regions, rays along an axis, grazing a face, an edge or
//!   a corner, starting inside or on a face (never a `t` of `-0.0`), with `max_t` at an
//!   entry, zero or infinite; and (`queries/shapes.rs`) spheres touching a box, nearest
//!   ties, swept boxes, a callback's clip and normals, the filter's parts.
//! - The same bytes from every batch for 1, 2, 3, 4, 7 and 16 threads, equal to the single
//!   queries and to the oracle.
//! - The errors (first bad index, `out` unchanged) and no panic on arbitrary floats
//!   (`queries/errors.rs`).
//! - `find_pairs_between` against a double loop (`queries/between.rs`).

#[path = "queries/adversarial.rs"]
mod adversarial;
#[path = "queries/between.rs"]
mod between;
#[path = "queries/check.rs"]
mod check;
use crate::common;
#[path = "queries/draw.rs"]
mod draw;
#[path = "queries/errors.rs"]
mod errors;
use crate::model;
#[path = "queries/oracle.rs"]
mod oracle;
#[path = "queries/shapes.rs"]
mod shapes;

use broadphase::{Aabb, Batch, Config, Filter, Handle, Kind, Ray, Sphere, Sweep, World};
use check::{Outs, Tally};
use common::{Draws, Rng};
use model::{Model, Obj};
use oracle::Qf;

// ---------------------------------------------------------------------------------------------
// Random sequences of calls
// ---------------------------------------------------------------------------------------------

/// A valid box: the world tests' shapes (lattice, zero-size, huge, far, copies of and
/// touches on live boxes), or one 1e9 out, or one whose place and size span six orders of
/// magnitude. Without `huge`, none wider than 1e6 (so that rays and regions are not all
/// answered by a box holding everything).
pub(crate) fn any_box<const D: usize>(r: &mut Rng, live: &[Obj<D>], huge: bool) -> Aabb<D> {
    loop {
        let b = match r.below(10) {
            0 => {
                let min: [f32; D] = std::array::from_fn(|_| 1e9 + r.range(0.0, 1e4));
                Aabb::new(min, min.map(|x| x + r.range(0.0, 1e3)))
            }
            1 => {
                let min: [f32; D] = std::array::from_fn(|_| r.range(-1.0, 1.0) * r.log_uniform(-3.0, 3.0));
                Aabb::new(min, min.map(|x| x + r.log_uniform(-3.0, 3.0)))
            }
            _ => model::valid_box(r, live),
        };
        if huge || (0..D).all(|k| b.max[k] - b.min[k] < 1e6) {
            return b;
        }
    }
}

/// Runs `ops` random calls on a world and the model; after each, `validate`, and now and
/// then (always after an update) a mix of queries against the oracle.
fn run<const D: usize>(seed: u64, config: Config<D>, huge: bool, ops: usize, t: &mut Tally) {
    let mut r = Rng::new(seed);
    let mut w = World::<D>::new(config).expect("config");
    let mut m = Model::<D>::new(config.margin);
    m.hysteresis = config.hysteresis;
    let mut outs = Outs::default();
    let mut pending = false;
    for step in 0..ops {
        let ctx = format!("seed {seed:#x} D {D} margin {} step {step}", config.margin);
        let live = m.live();
        let some = |r: &mut Rng| live[r.below(live.len())].h;
        let op = r.below(100);
        match op {
            0..=14 => {
                let (b, k) = (any_box(&mut r, &live, huge), model::kind(&mut r));
                let (f, d) = if op < 5 {
                    (Filter::default(), 0)
                } else {
                    (model::filter(&mut r), model::data(&mut r))
                };
                let h = if op < 5 { w.insert(b, k) } else { w.insert_with(b, k, f, d) };
                m.insert(h.unwrap_or_else(|e| panic!("{ctx}: insert: {e}")), b, k, f, d);
            }
            15..=21 => {
                let n = if r.chance(0.1) { 100 } else { r.below(30) };
                let boxes: Vec<Aabb<D>> = (0..n).map(|_| any_box(&mut r, &live, huge)).collect();
                let (k, f) = (model::kind(&mut r), model::filter(&mut r));
                let data: Vec<u64> =
                    if op < 18 { Vec::new() } else { (0..n).map(|_| model::data(&mut r)).collect() };
                let hs = w.extend_with(&boxes, k, f, &data).unwrap_or_else(|e| panic!("{ctx}: extend: {e}"));
                for (i, (h, b)) in hs.into_iter().zip(boxes).enumerate() {
                    m.insert(h, b, k, f, data.get(i).copied().unwrap_or(0));
                }
            }
            22..=41 if !live.is_empty() => {
                let (h, b) = (some(&mut r), any_box(&mut r, &live, huge));
                w.set_aabb(h, b).unwrap_or_else(|e| panic!("{ctx}: set_aabb: {e}"));
                m.get_mut(h).aabb = b;
            }
            42..=51 if !live.is_empty() => {
                let moves: Vec<(Handle, Aabb<D>)> =
                    (0..r.below(20)).map(|_| (some(&mut r), any_box(&mut r, &live, huge))).collect();
                w.set_aabbs(&moves).unwrap_or_else(|e| panic!("{ctx}: set_aabbs: {e}"));
                for (h, b) in moves {
                    m.get_mut(h).aabb = b;
                }
            }
            52..=59 if !live.is_empty() => {
                let (h, k) = (some(&mut r), model::kind(&mut r));
                w.set_kind(h, k).unwrap_or_else(|e| panic!("{ctx}: set_kind: {e}"));
                m.get_mut(h).kind = k;
            }
            60..=63 if !live.is_empty() => {
                let (h, f) = (some(&mut r), model::filter(&mut r));
                w.set_filter(h, f).unwrap_or_else(|e| panic!("{ctx}: set_filter: {e}"));
                m.get_mut(h).filter = f;
            }
            64..=66 if !live.is_empty() => {
                let (h, d) = (some(&mut r), model::data(&mut r));
                w.set_user_data(h, d).unwrap_or_else(|e| panic!("{ctx}: set_user_data: {e}"));
                m.get_mut(h).data = d;
            }
            67..=79 if !live.is_empty() => {
                let h = some(&mut r);
                w.remove(h).unwrap_or_else(|e| panic!("{ctx}: remove: {e}"));
                m.remove(h);
            }
            _ => {
                w.update().unwrap_or_else(|e| panic!("{ctx}: update: {e}"));
                pending = false;
            }
        }
        pending |= op < 80;
        if let Err(e) = w.validate() {
            panic!("{ctx}: validate: {e}");
        }
        if op >= 80 || r.chance(0.3) {
            t.pending += pending as usize;
            check::check_queries(&ctx, &w, &m.live(), 8, 0.15, &mut r, &mut outs, t);
        }
    }
}

#[test]
fn random_calls_then_queries_match_brute_force() {
    let mut t = Tally::default();
    for seed in 0..12u64 {
        for margin in [0.0, 0.25, -0.2] {
            let huge = seed % 2 == 0;
            // Queries see boxes, not pairs: hysteresis on some runs changes nothing they find.
            let h = if seed % 3 == 1 { 0.5 } else { 0.0 };
            run::<2>(seed, Config::default().with_margin(margin).with_hysteresis(h), huge, 250, &mut t);
            run::<3>(
                seed ^ 0xabcd,
                Config::default().with_margin(margin).with_hysteresis(h),
                huge,
                250,
                &mut t,
            );
        }
    }
    // Bounds far smaller than the objects' spread: a hint only, the queries ignore it.
    let small = Aabb::new([0.0; 3], [1.0; 3]);
    run::<3>(77, Config::default().with_bounds(Some(small)), true, 250, &mut t);
    // The generators reach the cases they are meant to.
    assert!(t.queries > 30_000 && t.empty > 3000 && t.found > 100_000, "{t:?}");
    assert!(t.touching > 5000 && t.ray_hits > 70_000 && t.ray_misses > 2500, "{t:?}");
    assert!(t.zero_t > 35_000 && t.grazes > 20_000 && t.at_max_t > 2000, "{t:?}");
    assert!(t.early_stops > 4000 && t.batch_queries > 150_000 && t.pending > 2000, "{t:?}");
    assert!(
        t.by_kind > 100_000 && t.by_mask > 40_000 && t.by_handle > 1500 && t.by_predicate > 60_000,
        "{t:?}"
    );
    assert!(t.kinematic_found > 5000 && t.sphere_found > 250_000 && t.sphere_touch > 30_000, "{t:?}");
    assert!(t.nearest_found > 60_000 && t.nearest_cut_by_k > 2500 && t.nearest_at_max > 300, "{t:?}");
    assert!(t.sweep_hits > 100_000 && t.sweep_zero_t > 70_000 && t.clipped > 7000, "{t:?}");
    assert!(t.normals > 70_000 && t.max_hits_cut > 7000, "{t:?}");
}

// ---------------------------------------------------------------------------------------------
// Threads
// ---------------------------------------------------------------------------------------------

const THREADS: [usize; 6] = [1, 2, 3, 4, 7, 16];

/// The queries of each kind a batch takes.
struct Queries<const D: usize> {
    regions: Vec<Aabb<D>>,
    points: Vec<[f32; D]>,
    spheres: Vec<Sphere<D>>,
    rays: Vec<Ray<D>>,
    sweeps: Vec<Sweep<D>>,
}

/// A world of a few thousand objects (static, kinematic and dynamic, with filters and
/// user data) with changes pending since its last update, its live objects, and queries
/// of each kind.
fn big_world<const D: usize>(seed: u64) -> (World<D>, Vec<Obj<D>>, Queries<D>) {
    let mut r = Rng::new(seed);
    let mut w = World::<D>::new(Config::default().with_margin(0.1)).unwrap();
    let mut m = Model::<D>::new(0.1);
    let side = 40.0;
    let make_box = |r: &mut Rng| {
        let min: [f32; D] = std::array::from_fn(|_| (r.range(0.0, side) * 4.0).round() / 4.0);
        Aabb::new(min, min.map(|x| x + (r.range(0.0, 2.0) * 4.0).round() / 4.0))
    };
    for k in [Kind::Static, Kind::Dynamic, Kind::Kinematic] {
        let boxes: Vec<Aabb<D>> = (0..1000).map(|_| make_box(&mut r)).collect();
        let data: Vec<u64> = (0..boxes.len()).map(|_| r.next_u64() % 5).collect();
        let f = Filter { membership: if k == Kind::Kinematic { 2 } else { 3 }, mask: u32::MAX };
        for ((h, b), d) in w.extend_with(&boxes, k, f, &data).unwrap().into_iter().zip(boxes).zip(data) {
            m.insert(h, b, k, f, d);
        }
    }
    w.update().unwrap();
    let live = m.live();
    for _ in 0..200 {
        let h = live[r.below(live.len())].h;
        let b = make_box(&mut r);
        w.set_aabb(h, b).unwrap();
        m.get_mut(h).aabb = b;
    }
    for o in live.iter().step_by(37) {
        if m.is_live(o.h) {
            w.remove(o.h).unwrap();
            m.remove(o.h);
        }
    }
    for o in live.iter().skip(5).step_by(41) {
        if !m.is_live(o.h) {
            continue;
        }
        w.set_kind(o.h, Kind::Dynamic).unwrap();
        m.get_mut(o.h).kind = Kind::Dynamic;
    }
    for _ in 0..100 {
        let (b, f, d) = (make_box(&mut r), model::filter(&mut r), model::data(&mut r));
        m.insert(w.insert_with(b, Kind::Dynamic, f, d).unwrap(), b, Kind::Dynamic, f, d);
    }
    w.validate().unwrap();
    let objs = m.live();
    let q = Queries {
        regions: (0..700).map(|_| draw::region_query(&mut r, &objs)).collect(),
        points: (0..700).map(|_| draw::point_query(&mut r, &objs)).collect(),
        spheres: (0..700)
            .map(|_| draw::sphere_query(&mut r, &objs))
            .map(|(c, s)| Sphere::new(c, s))
            .collect(),
        rays: (0..700).map(|_| draw::ray_query(&mut r, &objs)).collect(),
        sweeps: (0..700).map(|_| draw::sweep_query(&mut r, &objs)).collect(),
    };
    (w, objs, q)
}

/// Every batch's output, as bytes.
fn batch_bytes<const D: usize>(w: &World<D>, q: &Queries<D>, f: &Qf) -> Vec<u8> {
    let qf = f.build();
    let mut out = Vec::new();
    let (mut hb, mut pb, mut sb) = (Batch::new(), Batch::new(), Batch::new());
    let (mut nb, mut ab, mut wb) = (Batch::new(), Batch::new(), Batch::new());
    let (mut closest, mut first) = (Vec::new(), Vec::new());
    w.query_aabbs(&q.regions, qf, &mut hb).unwrap();
    w.query_points(&q.points, qf, &mut pb).unwrap();
    w.query_spheres(&q.spheres, qf, &mut sb).unwrap();
    w.nearest_to_points(&q.points, 7, f32::INFINITY, qf, &mut nb).unwrap();
    w.cast_rays(&q.rays, qf, &mut closest).unwrap();
    w.cast_rays_all(&q.rays, usize::MAX, qf, &mut ab).unwrap();
    w.cast_aabbs(&q.sweeps, qf, &mut first).unwrap();
    w.cast_aabbs_all(&q.sweeps, 5, qf, &mut wb).unwrap();
    for b in [&hb, &pb, &sb] {
        for hs in b.iter() {
            out.extend((hs.len() as u64).to_le_bytes());
            hs.iter().for_each(|h| out.extend(h.raw().to_le_bytes()));
        }
    }
    let mut put = |h: Handle, t: f32| {
        out.extend(h.raw().to_le_bytes());
        out.extend(t.to_bits().to_le_bytes());
    };
    for b in [&nb, &ab, &wb] {
        for hits in b.iter() {
            put(Handle::NULL, hits.len() as f32);
            hits.iter().for_each(|&(h, t)| put(h, t));
        }
    }
    for c in closest.iter().chain(&first) {
        put(Handle::NULL, -1.0);
        c.iter().for_each(|&(h, t)| put(h, t));
    }
    out
}

/// Every batch, in the trees' order and sorted, is the same bytes for any thread count,
/// each on a world made by the same calls in a pool of that many threads (the order
/// contract: the trees, built in parallel, are the same); and the batches equal the
/// single queries, and both the oracle.
fn same_bytes_for_any_thread_count<const D: usize>(seed: u64) {
    let (w, objs, q) = big_world::<D>(seed);
    let filters = [
        Qf::default(),
        Qf { sorted: true, ..Qf::default() },
        Qf { kinds: [false, true, true], ..Qf::default() },
        Qf { kinds: [false, true, false], mask: Some(2), ..Qf::default() },
        Qf { pred: Some(oracle::Pred::EvenData), list: vec![objs[3].h, objs[9].h], ..Qf::default() },
    ];
    let mut first: Option<Vec<Vec<u8>>> = None;
    for threads in THREADS {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let bytes: Vec<Vec<u8>> = pool.install(|| {
            let (w, _, q) = big_world::<D>(seed);
            filters.iter().map(|f| batch_bytes(&w, &q, f)).collect()
        });
        match &first {
            None => first = Some(bytes),
            Some(b) => {
                for (f, (one, this)) in filters.iter().zip(b.iter().zip(&bytes)) {
                    assert!(one == this, "D {D} {f:?}: {threads} threads gave other bytes than 1");
                }
            }
        }
    }
    // The batches equal the single queries, and both the oracle.
    let f = &filters[4];
    let qf = f.build();
    let (mut hb, mut sb, mut nb) = (Batch::new(), Batch::new(), Batch::new());
    let (mut ab, mut wb, mut closest, mut first) = (Batch::new(), Batch::new(), Vec::new(), Vec::new());
    let (mut one, mut all) = (Vec::new(), Vec::new());
    w.query_aabbs(&q.regions, qf, &mut hb).unwrap();
    for (i, region) in q.regions.iter().enumerate() {
        w.query_aabb(*region, qf, &mut one).unwrap();
        assert_eq!(hb.get(i), one.as_slice(), "D {D}: region {i}");
        oracle::same_hits(&format!("D {D}: region {i}"), &one, &oracle::region(&objs, region, f), false);
    }
    w.query_spheres(&q.spheres, qf, &mut sb).unwrap();
    for (i, s) in q.spheres.iter().enumerate() {
        w.query_sphere(s.center, s.radius, qf, &mut one).unwrap();
        assert_eq!(sb.get(i), one.as_slice(), "D {D}: sphere {i}");
        oracle::same_hits(
            &format!("D {D}: sphere {i}"),
            &one,
            &oracle::sphere(&objs, &s.center, s.radius, f),
            false,
        );
    }
    w.nearest_to_points(&q.points, 4, 3.0, qf, &mut nb).unwrap();
    for (i, p) in q.points.iter().enumerate() {
        w.nearest(*p, 4, 3.0, qf, &mut all).unwrap();
        assert_eq!(oracle::bits(nb.get(i)), oracle::bits(&all), "D {D}: nearest {i}");
        assert_eq!(
            oracle::bits(&all),
            oracle::bits(&oracle::nearest(&objs, p, 4, 3.0, f)),
            "D {D}: nearest {i}"
        );
    }
    w.cast_rays(&q.rays, qf, &mut closest).unwrap();
    w.cast_rays_all(&q.rays, usize::MAX, qf, &mut ab).unwrap();
    for (i, ray) in q.rays.iter().enumerate() {
        let single = w.cast_ray(ray.origin, ray.dir, ray.max_t, qf).unwrap();
        assert_eq!(oracle::bits(closest[i].as_slice()), oracle::bits(single.as_slice()), "D {D}: ray {i}");
        w.cast_ray_all(ray.origin, ray.dir, ray.max_t, usize::MAX, qf, &mut all).unwrap();
        assert_eq!(oracle::bits(ab.get(i)), oracle::bits(&all), "D {D}: ray {i}");
        assert_eq!(oracle::bits(&all), oracle::bits(&oracle::hits(&objs, ray, f)), "D {D}: ray {i}");
    }
    w.cast_aabbs(&q.sweeps, qf, &mut first).unwrap();
    w.cast_aabbs_all(&q.sweeps, 3, qf, &mut wb).unwrap();
    for (i, s) in q.sweeps.iter().enumerate() {
        let single = w.cast_aabb(s.aabb, s.dir, s.max_t, qf).unwrap();
        assert_eq!(oracle::bits(first[i].as_slice()), oracle::bits(single.as_slice()), "D {D}: sweep {i}");
        w.cast_aabb_all(s.aabb, s.dir, s.max_t, 3, qf, &mut all).unwrap();
        assert_eq!(oracle::bits(wb.get(i)), oracle::bits(&all), "D {D}: sweep {i}");
    }
}

#[test]
fn batches_are_the_same_bytes_for_any_thread_count() {
    same_bytes_for_any_thread_count::<2>(0x7e57);
    same_bytes_for_any_thread_count::<3>(0x7e58);
}

/// A sequence whose frame moves an object from a box the negative margin turns inside out
/// (zero thickness on one axis) to one it does not, which once split its walk in two
/// halves that both named its pair with a huge static box (the inside-out box served as
/// the second half's "skip nothing"). Each pair is named once now (the update asserts it
/// in debug builds) and every answer matches the oracle.
#[test]
fn a_move_from_an_inside_out_box_names_each_pair_once() {
    let mut t = Tally::default();
    run::<3>(4 ^ 0xabcd, Config::default().with_margin(-0.2).with_hysteresis(0.5), true, 250, &mut t);
}
