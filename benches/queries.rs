//! The world's queries (regions, points, rays, spheres, nearest, swept boxes: one at a time
//! and batched) against parry's `Bvh` in 2D and 3D and, in 2D, geo-index's packed Hilbert
//! R-tree and rstar's R*-tree, on the same boxes and the same queries in the same run; and
//! `find_pairs_between` of a dynamic crowd against the static scene, against one
//! `find_pairs` over both.
//!
//! Run: `cargo bench --bench queries` (1M static boxes: a level, `terrain`, and `uniform`
//! in 3D, a tiled map, `tiles`, in 2D; 10k small regions, 1k large regions, 10k points,
//! 10k rays; 1 and 2 threads). One scene:
//! `BP_DIMS=3 BP_SCENES=terrain cargo bench --bench queries`. A smoke run (seconds a group;
//! the times mean nothing at that size):
//! `BP_QUERY_STATIC=20000 BP_QUERY_N=500 BP_MEASURE=0.3 BP_WARMUP=0.1 BP_CHECK=1
//! cargo bench --bench queries`. Environment variables:
//!
//! | variable          | default          | meaning                                               |
//! |-------------------|------------------|-------------------------------------------------------|
//! | `BP_QUERY_STATIC` | `1000000`        | static boxes of each scene                            |
//! | `BP_QUERY_N`      | `10000`          | small regions, points and rays; large regions: a tenth |
//! | `BP_DIMS`         | `2,3`            | dimensions                                            |
//! | `BP_SCENES`       | 3D `terrain,uniform`, 2D `tiles` | scenes of `internals::scene` for every dimension (`level` = `terrain`, `map` = `tiles`) |
//! | `BP_THREADS`      | `1,2`            | rayon thread counts                                   |
//! | `BP_GROUPS`       | all              | `regions_small,regions_large,points,rays_closest,rays_all,spheres,nearest_k1,nearest_k10,sweeps,between,build` |
//! | `BP_PEERS`        | `parry,geo_index,rstar` | peers to run (`none`: ours only)              |
//! | `BP_PARRY_BUILD`  | `ploc`           | parry's tree build: `ploc` (its choice for queries) or `binned` |
//! | `BP_SMALL_HITS`   | `10`             | mean hits a small region is sized for                 |
//! | `BP_LARGE_HITS`   | `1000`           | mean hits a large region is sized for                 |
//! | `BP_RAY_LEN`      | `0.02`           | a ray's `max_t`, as a share of the scene's diagonal   |
//! | `BP_CHECK`        | `0`              | `1`: first assert that every side gives the same answers |
//! | `BP_MEASURE`      | `3` (`0.5` when `BP_QUERY_STATIC` < 1M) | criterion measurement time, seconds |
//! | `BP_WARMUP`       | `1` (`0.2` likewise) | criterion warm-up time, seconds                   |
//!
//! The data (seed 1): the scene's boxes, inserted into a `World` as static objects (then one
//! `update`) and given to each peer in the same order, as the same `f32` bits. Region
//! centres are uniform points in random scene boxes (so regions sit where the boxes are: on
//! a level's surface, off a tiled map's grid lines); each region is a cube (a square in 2D)
//! whose side is found by bisection on a sample so that the mean hits are `BP_SMALL_HITS`
//! or `BP_LARGE_HITS`. Points are uniform in the scene's bounds. Rays start uniform in the
//! bounds, go in a uniformly random direction (unit length) and reach `BP_RAY_LEN` times
//! the bounds' diagonal. Spheres are centred where the small regions are, of radius the
//! small regions' half side. Nearest queries (k = 1 and 10, no distance bound) start at
//! the points. Swept boxes are cubes of half the small regions' half side, from uniform
//! points, along uniform directions as far as a ray goes. Before the timings it prints,
//! per scene, each query kind's mean hits (closest: the share of rays that hit), and each
//! peer's build time.
//!
//! Groups `queries/{scene}/{2d|3d}/{kind}`, kind one of `regions_small`, `regions_large`,
//! `points`, `rays_closest`, `rays_all`, `spheres`, `nearest_k1`, `nearest_k10`, `sweeps`
//! (throughput: queries), functions `{side}/t{threads}`:
//! - `ours_single`: a loop of `query_aabb` / `query_point` / `cast_ray` / `cast_ray_all` /
//!   `query_sphere` / `nearest` / `cast_aabb` into one reused `Vec`;
//! - `ours_batch`: one `query_aabbs` / `query_points` / `cast_rays` / `cast_rays_all` /
//!   `query_spheres` / `nearest_to_points` / `cast_aabbs` into a reused `Batch` (a `Vec`
//!   for the closest hits);
//! - `parry` (parry3d 0.31 in 3D, parry2d 0.31 in 2D): `Bvh::from_leaves` (PLOC by
//!   default), a loop of `intersect_aabb` (points: a zero-size box) collected into a reused
//!   `Vec`, `cast_ray` with the leaf test `Aabb::cast_local_ray` (solid), and for all hits
//!   a `traverse` pruning by that same test on each node's box (parry has no all-hits cast);
//!   spheres: `leaves` pruned by each node box's `distance_to_local_point`; nearest (k = 1
//!   only: parry has no k-nearest): `project_point` with each leaf box's
//!   `project_local_point` (solid); swept boxes: `find_best` on node and leaf boxes grown by
//!   the swept box's half extents, cast as a ray from its centre (how parry's own shape
//!   casts against composite shapes walk a tree);
//! - `geo_index` (2D; regions, points, nearest): `RTreeBuilder` + `HilbertSort`, a loop of
//!   `search` / `neighbors` (which return a new `Vec` a query);
//! - `rstar` (2D; regions, points, spheres, nearest): `RTree::bulk_load` of
//!   `GeomWithData<Rectangle>`, a loop of `locate_in_envelope_intersecting` /
//!   `locate_all_at_point` / `locate_within_distance` / `nearest_neighbor` (k = 1) /
//!   `nearest_neighbor_iter` (k = 10) collected into a reused `Vec`.
//!
//! Fairness: every side runs in a rayon pool of `t` threads. On one thread every loop is a
//! plain loop on that thread. On more, every loop of single queries, ours and the peers'
//! alike, is split into chunks of 64 queries over the pool (`par_chunks` + `map_init`, one
//! output `Vec` a work item), as our batches split theirs; the batches use the pool
//! themselves. All trees and queries are built before and outside the timings; outputs are
//! reused; every result goes through `black_box`. All sides find closed-box overlaps; rays
//! use the same slab test, so the answers are the same sets (`BP_CHECK=1` asserts it: the
//! sorted box indices of every region, point, sphere and all-hits ray, the closest hit's
//! `t` (ray or swept box) within 1e-5 relative, a hit at `max_t` missed by one side
//! allowed: parry stops short of `max_t`; ties may go to different boxes; and the
//! distances of the nearest boxes, in order, within 1e-5 relative).
//!
//! Groups `between/{scene}/{2d|3d}`, functions `ours_between/t{t}` (`find_pairs_between`
//! of the static boxes and `BP_QUERY_STATIC / 10` dynamic boxes, sides 0.5-1, each on top of
//! a random static box, as in `benches/world.rs`) and `ours_find_pairs_all/t{t}` (one
//! `find_pairs` over all of them, static-static pairs included), with a reused
//! `Broadphase` and output. `BP_CHECK=1` asserts that the first is the second's
//! static-dynamic pairs.
//!
//! Groups `build/{scene}/{2d|3d}`: `world_first_update/t{t}`, a static-only world's first
//! `update` (made and filled untimed; it asserts that no pair search ran), against
//! `static_tree/t{t}`, the surface area build of the tree that update makes, alone.
//!
//! Reading it (ratios of the medians, on 2 threads): `ours_batch/t2` (and `ours_single/t2`)
//! against `parry/t2` and, in 2D, `geo_index/t2` and `rstar/t2` in each group;
//! `ours_batch/t1` against `ours_batch/t2` for the batches' scaling; `ours_find_pairs_all/t2`
//! against `ours_between/t2`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use broadphase::{Aabb, Broadphase, Config};
use criterion::{Bencher, Criterion, Throughput};

#[path = "queries/data.rs"]
mod data;
#[path = "common/env.rs"]
mod env;
#[path = "queries/peer.rs"]
mod peer;
use data::{check, crowd, make_queries, BatchOut};
use env::{env_f64, env_num, env_nums, env_str, env_words};
use peer::{GeoIndex, Loops, Ours, Parry2, Parry3, QKind, Rstar};

/// Seed of every scene and query set.
const SEED: u64 = 1;

// ---------------------------------------------------------------------------------------
// Options.

struct Opts {
    statics: usize,
    n: usize,
    dims: Vec<usize>,
    scenes: Option<Vec<String>>,
    threads: Vec<usize>,
    groups: Vec<String>,
    peers: Vec<String>,
    ploc: bool,
    small_hits: f64,
    large_hits: f64,
    ray_len: f32,
    check: bool,
    measure: Duration,
    warm_up: Duration,
}

impl Opts {
    fn from_env() -> Self {
        let statics = env_num("BP_QUERY_STATIC", 1_000_000);
        let small = statics < 1_000_000;
        let dims = env_nums("BP_DIMS", "2,3");
        assert!(dims.iter().all(|d| (2..=3).contains(d)), "BP_DIMS: only 2 and 3");
        let threads = env_nums("BP_THREADS", "1,2");
        assert!(!threads.is_empty() && threads.iter().all(|&t| t >= 1), "BP_THREADS: at least 1");
        let scenes = std::env::var("BP_SCENES").ok().filter(|s| !s.trim().is_empty()).map(|_| {
            let names: Vec<String> = env_words("BP_SCENES", "")
                .into_iter()
                .map(|s| match s.as_str() {
                    "level" => "terrain".to_string(),
                    "map" => "tiles".to_string(),
                    _ => s,
                })
                .collect();
            for s in &names {
                assert!(
                    broadphase::internals::by_name::<2>(s, 4, SEED).is_some(),
                    "BP_SCENES: unknown scene {s:?}"
                );
            }
            names
        });
        let all_groups =
            QKind::ALL.iter().map(|k| k.name()).chain(["between", "build"]).collect::<Vec<_>>().join(",");
        let groups = env_words("BP_GROUPS", &all_groups);
        for g in &groups {
            assert!(all_groups.split(',').any(|a| a == g), "BP_GROUPS: unknown group {g:?}");
        }
        let peers = env_words("BP_PEERS", "parry,geo_index,rstar");
        for p in &peers {
            assert!(["parry", "geo_index", "rstar", "none"].contains(&p.as_str()), "BP_PEERS: unknown {p:?}");
        }
        let build = env_str("BP_PARRY_BUILD", "ploc");
        assert!(build == "ploc" || build == "binned", "BP_PARRY_BUILD: ploc or binned, not {build:?}");
        let n = env_num("BP_QUERY_N", 10_000);
        assert!(n >= 10, "BP_QUERY_N: at least 10");
        Opts {
            statics,
            n,
            dims,
            scenes,
            threads,
            groups,
            peers,
            ploc: build == "ploc",
            small_hits: env_f64("BP_SMALL_HITS", 10.0),
            large_hits: env_f64("BP_LARGE_HITS", 1000.0),
            ray_len: env_f64("BP_RAY_LEN", 0.02) as f32,
            check: env_num("BP_CHECK", 0) != 0,
            measure: Duration::from_secs_f64(env_f64("BP_MEASURE", if small { 0.5 } else { 3.0 })),
            warm_up: Duration::from_secs_f64(env_f64("BP_WARMUP", if small { 0.2 } else { 1.0 })),
        }
    }

    fn scenes(&self, dim: usize) -> Vec<String> {
        let default: &[&str] = if dim == 3 { &["terrain", "uniform"] } else { &["tiles"] };
        self.scenes.clone().unwrap_or_else(|| default.iter().map(|s| s.to_string()).collect())
    }

    fn group(&self, name: &str) -> bool {
        self.groups.iter().any(|g| g == name)
    }

    fn peer(&self, name: &str) -> bool {
        self.peers.iter().any(|p| p == name)
    }
}

// ---------------------------------------------------------------------------------------
// Benchmarks.

/// Times `f` on a worker of `pool` (entering the pool once a sample, untimed).
fn timed(b: &mut Bencher<'_>, pool: &rayon::ThreadPool, mut f: impl FnMut() -> usize + Send) {
    b.iter_custom(|iters| {
        pool.install(|| {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(f());
            }
            start.elapsed()
        })
    });
}

type Pools = [(usize, rayon::ThreadPool)];

fn bench_scene<const D: usize>(c: &mut Criterion, opts: &Opts, pools: &Pools, name: &str) {
    let dim = format!("{D}d");
    let label = format!("{name}/{dim}");
    let boxes = broadphase::internals::by_name::<D>(name, opts.statics, SEED).expect("scene");
    let big = &pools.iter().max_by_key(|(t, _)| *t).expect("a pool").1;
    let configure = |g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>| {
        g.sample_size(10).warm_up_time(opts.warm_up).measurement_time(opts.measure);
    };

    if QKind::ALL.iter().any(|k| opts.group(k.name())) {
        let t0 = Instant::now();
        let ours = big.install(|| Ours::build(&boxes));
        eprintln!("{label}: world built in {:.2?}", t0.elapsed());
        let qs = make_queries(&ours, &boxes, opts, &label);
        let mut peers: Vec<Box<dyn Loops<D>>> = Vec::new();
        let mut add = |what: &str, make: &dyn Fn() -> Box<dyn Loops<D>>| {
            let t0 = Instant::now();
            peers.push(make());
            eprintln!("{label}: {what} built in {:.2?}", t0.elapsed());
        };
        if opts.peer("parry") {
            if D == 3 {
                add("parry3d Bvh", &|| Box::new(Parry3::build(&boxes, opts.ploc)));
            } else {
                add("parry2d Bvh", &|| Box::new(Parry2::build(&boxes, opts.ploc)));
            }
        }
        if D == 2 && opts.peer("geo_index") {
            add("geo-index RTree", &|| Box::new(GeoIndex::build(&boxes)));
        }
        if D == 2 && opts.peer("rstar") {
            add("rstar RTree", &|| Box::new(Rstar::build(&boxes)));
        }
        if opts.check {
            let ok = big.install(|| check(&label, &ours, &peers, &qs, &boxes));
            assert!(ok, "check failed on {label}: see MISMATCH lines above");
            println!("check {label}: passed");
        }
        let mut batch = BatchOut::default();
        for kind in QKind::ALL.into_iter().filter(|k| opts.group(k.name())) {
            let mut g = c.benchmark_group(format!("queries/{name}/{dim}/{}", kind.name()));
            configure(&mut g);
            g.throughput(Throughput::Elements(qs.count(kind) as u64));
            for (t, pool) in pools {
                let par = *t > 1;
                g.bench_function(format!("ours_single/t{t}"), |b| {
                    timed(b, pool, || Loops::run(&ours, &qs, kind, par))
                });
                g.bench_function(format!("ours_batch/t{t}"), |b| {
                    timed(b, pool, || batch.run(&ours, &qs, kind))
                });
                for p in peers.iter().filter(|p| p.runs(kind)) {
                    g.bench_function(format!("{}/t{t}", p.name()), |b| {
                        timed(b, pool, || p.run(&qs, kind, par))
                    });
                }
            }
            g.finish();
        }
    }

    if opts.group("build") {
        bench_build(c, opts, pools, name, &boxes);
    }

    if opts.group("between") {
        let dynamics = crowd(&boxes, (opts.statics / 10).max(1));
        let all: Vec<Aabb<D>> = boxes.iter().chain(&dynamics).copied().collect();
        let mut bp = Broadphase::<D>::new(Config::default()).expect("finder");
        let mut bp_all = Broadphase::<D>::new(Config::default()).expect("finder");
        let (mut between, mut every) = (Vec::new(), Vec::new());
        big.install(|| {
            bp.find_pairs_between(&boxes, &dynamics, &mut between).expect("find_pairs_between");
            bp_all.find_pairs(&all, &mut every).expect("find_pairs");
        });
        let s = boxes.len() as u32;
        let cross = every.iter().filter(|p| p[1] >= s).count();
        eprintln!(
            "between {label}: {} static x {} dynamic: {} pairs between; find_pairs over all {}: {} pairs \
             ({cross} static-dynamic)",
            boxes.len(),
            dynamics.len(),
            between.len(),
            all.len(),
            every.len()
        );
        if opts.check {
            let mut want: Vec<[u32; 2]> =
                every.iter().filter(|p| p[0] < s && p[1] >= s).map(|p| [p[0], p[1] - s]).collect();
            want.sort_unstable();
            let ok = want == between;
            println!("check between {label}: {}", if ok { "ok" } else { "MISMATCH" });
            assert!(ok, "check failed: find_pairs_between differs from find_pairs' static-dynamic pairs");
        }
        let mut g = c.benchmark_group(format!("between/{name}/{dim}"));
        configure(&mut g);
        for (t, pool) in pools {
            g.bench_function(format!("ours_between/t{t}"), |b| {
                timed(b, pool, || {
                    bp.find_pairs_between(black_box(&boxes), black_box(&dynamics), &mut between).unwrap();
                    between.len()
                })
            });
            g.bench_function(format!("ours_find_pairs_all/t{t}"), |b| {
                timed(b, pool, || {
                    bp_all.find_pairs(black_box(&all), &mut every).unwrap();
                    every.len()
                })
            });
        }
        g.finish();
    }
}

/// Group `build/{scene}/{dim}`: a static-only world's first `update` (the world made and
/// its boxes inserted untimed) against the tree it builds, alone.
fn bench_build<const D: usize>(c: &mut Criterion, opts: &Opts, pools: &Pools, name: &str, boxes: &[Aabb<D>]) {
    use broadphase::{Kind, World};
    let mut g = c.benchmark_group(format!("build/{name}/{D}d"));
    g.sample_size(10).warm_up_time(opts.warm_up).measurement_time(opts.measure);
    for (t, pool) in pools {
        g.bench_function(format!("world_first_update/t{t}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let mut world = World::<D>::new(Config::default()).expect("world");
                    world.extend(boxes, Kind::Static).expect("extend");
                    total += pool.install(|| {
                        let start = Instant::now();
                        world.update().expect("update");
                        start.elapsed()
                    });
                    assert!(!world.stats().pair_search, "a static-only world searched for pairs");
                    drop(black_box(world));
                }
                total
            })
        });
        g.bench_function(format!("static_tree/t{t}"), |b| {
            timed(b, pool, || broadphase::internals::static_tree_build(black_box(boxes)))
        });
    }
    g.finish();
}

fn main() {
    let opts = Opts::from_env();
    println!(
        "queries bench: {} static boxes, {} queries ({} large regions), dims {:?}, threads {:?}, groups {:?}, \
         peers {:?}, check {}",
        opts.statics,
        opts.n,
        opts.n / 10,
        opts.dims,
        opts.threads,
        opts.groups,
        opts.peers,
        opts.check
    );
    let pools: Vec<(usize, rayon::ThreadPool)> = opts
        .threads
        .iter()
        .map(|&t| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(t).stack_size(64 << 20).build();
            (t, pool.expect("thread pool"))
        })
        .collect();
    let mut c = Criterion::default().configure_from_args();
    for &d in &opts.dims {
        for name in opts.scenes(d) {
            if d == 2 {
                bench_scene::<2>(&mut c, &opts, &pools, &name);
            } else {
                bench_scene::<3>(&mut c, &opts, &pools, &name);
            }
        }
    }
    c.final_summary();
}
