//! The world's queries and batches, and `find_pairs_between`, against brute force.
//!
//! - Random sequences of every world call (insert, insert_with, extend, set_aabb,
//!   set_aabbs, set_kind, set_filter, remove, update) in 2D and 3D, at margins 0, 0.25 and
//!   -0.2, on boxes of every shape the world must hold (touching, identical, zero-size,
//!   huge, far outside the bounds, sizes over six orders of magnitude); `validate` after
//!   each call, and a random mix of every query and batch (`queries/draw.rs`), compared
//!   with the oracle (`queries/oracle.rs`, a filter of the model's live objects), both
//!   with changes pending and right after an update.
//! - Hand-built worlds where the answer is known exactly (`queries/adversarial.rs`):
//!   touching and one-ulp-missing regions, rays along an axis, grazing a face, an edge or
//!   a corner, starting inside, with `max_t` at an entry, zero or infinite.
//! - The same bytes from every batch for 1, 2, 3, 4, 7 and 16 threads, equal to the single
//!   queries and to the oracle.
//! - The errors (first bad index, `out` unchanged) and no panic on arbitrary floats
//!   (`queries/errors.rs`).
//! - `find_pairs_between` against a double loop (`queries/between.rs`).

#[path = "queries/adversarial.rs"]
mod adversarial;
#[path = "queries/between.rs"]
mod between;
use crate::common;
#[path = "queries/draw.rs"]
mod draw;
#[path = "queries/errors.rs"]
mod errors;
use crate::model;
#[path = "queries/oracle.rs"]
mod oracle;

use broadphase::{Aabb, Batch, Config, Filter, Handle, Kind, Ray, Select, World};
use common::{Draws, Rng};
use model::{Model, Obj};
use oracle::{Outs, Tally};

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
                let f = if op < 7 { Filter::default() } else { model::filter(&mut r) };
                let h = if op < 7 { w.insert(b, k) } else { w.insert_with(b, k, f, 0) };
                m.insert(h.unwrap_or_else(|e| panic!("{ctx}: insert: {e}")), b, k, f, 0);
            }
            15..=21 => {
                let n = if r.chance(0.1) { 100 } else { r.below(30) };
                let boxes: Vec<Aabb<D>> = (0..n).map(|_| any_box(&mut r, &live, huge)).collect();
                let k = model::kind(&mut r);
                let hs = w.extend(&boxes, k).unwrap_or_else(|e| panic!("{ctx}: extend: {e}"));
                for (h, b) in hs.into_iter().zip(boxes) {
                    m.insert(h, b, k, Filter::default(), 0);
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
            60..=66 if !live.is_empty() => {
                let (h, f) = (some(&mut r), model::filter(&mut r));
                w.set_filter(h, f).unwrap_or_else(|e| panic!("{ctx}: set_filter: {e}"));
                m.get_mut(h).filter = f;
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
            oracle::check_queries(&ctx, &w, &m.live(), 6, 0.15, &mut r, &mut outs, t);
        }
    }
}

#[test]
fn random_calls_then_queries_match_brute_force() {
    let mut t = Tally::default();
    for seed in 0..12u64 {
        for margin in [0.0, 0.25, -0.2] {
            let huge = seed % 2 == 0;
            run::<2>(seed, Config::default().with_margin(margin), huge, 250, &mut t);
            run::<3>(seed ^ 0xabcd, Config::default().with_margin(margin), huge, 250, &mut t);
        }
    }
    // Bounds far smaller than the objects' spread: a hint only, the queries ignore it.
    let small = Aabb::new([0.0; 3], [1.0; 3]);
    run::<3>(77, Config::default().with_bounds(Some(small)), true, 250, &mut t);
    // The generators reach the cases they are meant to.
    assert!(t.queries > 20_000 && t.empty > 3000 && t.found > 100_000, "{t:?}");
    assert!(t.touching > 5000 && t.ray_hits > 40_000 && t.ray_misses > 2000, "{t:?}");
    assert!(t.zero_t > 15_000 && t.grazes > 10_000 && t.at_max_t > 500, "{t:?}");
    assert!(t.early_stops > 8000 && t.batch_queries > 80_000 && t.pending > 1500, "{t:?}");
}

// ---------------------------------------------------------------------------------------------
// Threads
// ---------------------------------------------------------------------------------------------

const THREADS: [usize; 6] = [1, 2, 3, 4, 7, 16];

/// A world of a few thousand objects with changes pending since its last update, its
/// live objects, and queries of each kind.
#[allow(clippy::type_complexity)]
fn big_world<const D: usize>(seed: u64) -> (World<D>, Vec<Obj<D>>, Vec<Aabb<D>>, Vec<[f32; D]>, Vec<Ray<D>>) {
    let mut r = Rng::new(seed);
    let mut w = World::<D>::new(Config::default().with_margin(0.1)).unwrap();
    let mut m = Model::<D>::new(0.1);
    let side = 40.0;
    let gen = |r: &mut Rng| {
        let min: [f32; D] = std::array::from_fn(|_| (r.range(0.0, side) * 4.0).round() / 4.0);
        Aabb::new(min, min.map(|x| x + (r.range(0.0, 2.0) * 4.0).round() / 4.0))
    };
    for k in [Kind::Static, Kind::Dynamic] {
        let boxes: Vec<Aabb<D>> = (0..1500).map(|_| gen(&mut r)).collect();
        for (h, b) in w.extend(&boxes, k).unwrap().into_iter().zip(boxes) {
            m.insert(h, b, k, Filter::default(), 0);
        }
    }
    w.update().unwrap();
    let live = m.live();
    for _ in 0..200 {
        let h = live[r.below(live.len())].h;
        let b = gen(&mut r);
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
        let (b, f) = (gen(&mut r), model::filter(&mut r));
        m.insert(w.insert_with(b, Kind::Dynamic, f, 0).unwrap(), b, Kind::Dynamic, f, 0);
    }
    w.validate().unwrap();
    let objs = m.live();
    let regions = (0..700).map(|_| draw::region_query(&mut r, &objs)).collect();
    let points = (0..700).map(|_| draw::point_query(&mut r, &objs)).collect();
    let rays = (0..700).map(|_| draw::ray_query(&mut r, &objs)).collect();
    (w, objs, regions, points, rays)
}

/// Every batch's output, as bytes.
fn batch_bytes<const D: usize>(
    w: &World<D>,
    q: &(Vec<Aabb<D>>, Vec<[f32; D]>, Vec<Ray<D>>),
    sel: Select,
) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut hb, mut pb, mut ab) = (Batch::new(), Batch::new(), Batch::new());
    let mut closest = Vec::new();
    w.query_aabbs(&q.0, sel, None, &mut hb).unwrap();
    w.query_points(&q.1, sel, None, &mut pb).unwrap();
    w.cast_rays(&q.2, sel, None, &mut closest).unwrap();
    w.cast_rays_all(&q.2, sel, None, &mut ab).unwrap();
    for b in [&hb, &pb] {
        for hs in b.iter() {
            out.extend((hs.len() as u64).to_le_bytes());
            hs.iter().for_each(|h| out.extend(h.raw().to_le_bytes()));
        }
    }
    let mut put = |h: Handle, t: f32| {
        out.extend(h.raw().to_le_bytes());
        out.extend(t.to_bits().to_le_bytes());
    };
    for (c, all) in closest.iter().zip(ab.iter()) {
        c.iter().for_each(|&(h, t)| put(h, t));
        all.iter().for_each(|&(h, t)| put(h, t));
    }
    out
}

fn same_bytes_for_any_thread_count<const D: usize>(seed: u64) {
    let (w, objs, regions, points, rays) = big_world::<D>(seed);
    let q = (regions, points, rays);
    for sel in [Select::All, Select::Dynamic] {
        let mut first: Option<Vec<u8>> = None;
        for threads in THREADS {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let bytes = pool.install(|| batch_bytes(&w, &q, sel));
            match &first {
                None => first = Some(bytes),
                Some(f) => assert!(*f == bytes, "D {D} {sel:?}: {threads} threads gave other bytes than 1"),
            }
        }
    }
    // The batches equal the single queries, and both the oracle.
    let (mut hb, mut ab, mut closest) = (Batch::new(), Batch::new(), Vec::new());
    let (mut one, mut all) = (Vec::new(), Vec::new());
    w.query_aabbs(&q.0, Select::All, None, &mut hb).unwrap();
    for (i, region) in q.0.iter().enumerate() {
        w.query_aabb(*region, Select::All, None, &mut one).unwrap();
        assert_eq!(hb.get(i), one.as_slice(), "D {D}: region {i}");
        assert_eq!(one, oracle::region(&objs, region, Select::All, None), "D {D}: region {i}");
    }
    w.cast_rays(&q.2, Select::All, None, &mut closest).unwrap();
    w.cast_rays_all(&q.2, Select::All, None, &mut ab).unwrap();
    for (i, ray) in q.2.iter().enumerate() {
        let single = w.cast_ray(ray.origin, ray.dir, ray.max_t, Select::All, None).unwrap();
        assert_eq!(oracle::bits(closest[i].as_slice()), oracle::bits(single.as_slice()), "D {D}: ray {i}");
        w.cast_ray_all(ray.origin, ray.dir, ray.max_t, Select::All, None, &mut all).unwrap();
        assert_eq!(oracle::bits(ab.get(i)), oracle::bits(&all), "D {D}: ray {i}");
        assert_eq!(
            oracle::bits(&all),
            oracle::bits(&oracle::hits(&objs, ray, Select::All, None)),
            "D {D}: ray {i}"
        );
    }
}

#[test]
fn batches_are_the_same_bytes_for_any_thread_count() {
    same_bytes_for_any_thread_count::<2>(0x7e57);
    same_bytes_for_any_thread_count::<3>(0x7e58);
}
