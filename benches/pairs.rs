//! All-pairs benchmark: `broadphase` against parry3d's BVH (3D) and broccoli (2D), on the same
//! seeded scenes in the same run.
//!
//! Run: `cargo bench --bench pairs` (everything: 2D and 3D; uniform, varied, clustered,
//! mixed; 10k, 100k and 1M boxes; 1 and all threads; competitors on). Narrow the sweep with
//! environment variables (comma separated lists):
//!
//! | variable         | default                              | meaning                                  |
//! |------------------|--------------------------------------|------------------------------------------|
//! | `BP_SIZES`       | `10000,100000,1000000`               | `n` (mixed adds 1000 thin boxes)         |
//! | `BP_DIMS`        | `2,3` (`1,2,3` with `BP_CHECK=1`)    | dimensions (competitors only in 2D / 3D) |
//! | `BP_SCENES`      | `uniform,varied,clustered,mixed` (plus `all_overlapping` with `BP_CHECK=1`) | scene generators in `broadphase::internals::scene` (`terrain`, `tiles`, `flat`, `levels`: real shapes; `copies`: ten copies of every box) and `internals::cliffs` (`parked:P:X`, `parked:P:none` its baseline, `staircase`, `sticks`; `cliffs`: all of them) |
//! | `BP_THREADS`     | `1,all`                              | rayon thread counts; `all` = every core  |
//! | `BP_COMPETITORS` | `1`                                  | `0`: only `broadphase`                   |
//! | `BP_CHECK`       | `0`                                  | `1`: only run the correctness check      |
//! | `BP_CHECK_N`     | `3000`                               | size of the correctness check's scenes   |
//! | `BP_MEASURE`     | `3`                                  | criterion measurement time, seconds      |
//! | `BP_BOUNDS`      | `none`                               | our `Config::bounds`: `huge` (+-1e9), `max` (+-`f32::MAX`), `zero`, `offset` (a unit box at 1e6); groups get `+bounds:{kind}` |
//! | `BP_ONESHOT`     | `0`                                  | `1`: also the `oneshot/...` groups (below) |
//! | `BP_METHODS`     | `auto`                               | our `Config::method`s (`auto`, `columns`, `sweep`, `tree`, `quadtree`); each but `auto` gets functions `broadphase-{method}/t{threads}` |
//!
//! The cliffs (inputs that once made the cost quadratic): `BP_SCENES=cliffs BP_SIZES=200000`
//! for the parked shares and distances, `BP_SCENES=staircase BP_DIMS=2
//! BP_SIZES=10000,40000,160000`, and `BP_SCENES=uniform BP_SIZES=200000 BP_BOUNDS=huge`
//! (and `max`, `zero`, `offset`) against `BP_BOUNDS=none`.
//!
//! Every run first checks, for each selected dimension and scene at `n = BP_CHECK_N`, that
//! `broadphase` and every competitor adapter find exactly the pairs of `brute_force_pairs`
//! (competitor pairs normalised to `i < j`, sorted, deduplicated), and panics if not. Then,
//! per scene and size, it prints the number of pairs (and each competitor's count) before
//! the timings.
//!
//! Criterion groups are `pairs/{1d|2d|3d}/{scene}/{n}`; functions `broadphase/t{threads}`
//! (a reused `Broadphase`, output sorted), `parry3d/t1` (single threaded: `Bvh::from_leaves`
//! binned build + `traverse_bvtt_single_tree`, pairs pushed into a reused `Vec`, unsorted),
//! `broccoli/t1` (single threaded: `Tree::new` + `find_colliding_pairs`) and
//! `broccoli_par/t{threads}` (broccoli-rayon `par_new` + `par_find_colliding_pairs_acc_closure`,
//! per-task `Vec`s appended). Competitor times include their build and pair collection,
//! not the conversion of the boxes into their types nor the (untimed) copy that restores
//! broccoli's input order before each iteration. Single-threaded competitors run once per
//! scene, not once per thread count.
//!
//! With `BP_ONESHOT=1`, groups `oneshot/{1d|2d|3d}/{scene}/{n}` time the one-shot
//! `find_pairs_with` (`find_pairs/t{threads}`: its finder from the process-wide cache, a
//! fresh output each call) against a reused `Broadphase` and output (`reused/t{threads}`)
//! and a fresh `Broadphase` each call (`fresh/t{threads}`: what `find_pairs_with` did
//! before the cache). For them alone: `BP_ONESHOT=1 BP_SCENES=uniform BP_DIMS=3
//! BP_SIZES=100000,1000000 BP_COMPETITORS=0 cargo bench --bench pairs -- oneshot`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use broadphase::internals::{cliffs, scene};
use broadphase::{brute_force_pairs, Aabb, Broadphase, Config, Method};
use broccoli::axgeom::Rect;
use broccoli::Tree;
use broccoli_rayon::prelude::*;
use criterion::{Criterion, Throughput};
use parry3d::bounding_volume::Aabb as ParryAabb;
use parry3d::math::Vector as ParryVec;
use parry3d::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

/// Seed of every scene.
const SEED: u64 = 1;

type Pairs = Vec<[u32; 2]>;
/// A broccoli element: the rectangle and the box's index.
type BrocBox = (Rect<f32>, u32);

struct Opts {
    sizes: Vec<usize>,
    dims: Vec<usize>,
    scenes: Vec<String>,
    threads: Vec<usize>,
    competitors: bool,
    check_only: bool,
    check_n: usize,
    measure: Duration,
    /// `BP_BOUNDS`: the `Config::bounds` our runs get (`none`, `huge`, `max`, `zero`,
    /// `offset`).
    bounds: String,
    /// `BP_ONESHOT`: also time the one-shot calls (`oneshot/...` groups).
    oneshot: bool,
    /// `BP_METHODS`: our methods, by name.
    methods: Vec<(String, Method)>,
}

/// The method of a `BP_METHODS` name.
fn method_by_name(name: &str) -> Method {
    match name {
        "auto" => Method::Auto,
        "columns" => Method::Columns,
        "sweep" => Method::Sweep,
        "tree" => Method::Tree,
        "quadtree" => Method::Quadtree,
        _ => panic!("BP_METHODS: auto, columns, sweep, tree or quadtree, not {name:?}"),
    }
}

/// The bench function of our method `name` at `t` threads (`auto` keeps the plain name).
fn our_function(name: &str, t: usize) -> String {
    if name == "auto" {
        format!("broadphase/t{t}")
    } else {
        format!("broadphase-{name}/t{t}")
    }
}

/// Our configuration under `BP_BOUNDS`: no bounds, +-1e9, +-`f32::MAX`, a zero-size box at
/// the origin, or a unit box at 1e6 (off to one side of every scene).
fn our_config<const D: usize>(bounds: &str) -> Config<D> {
    let b = match bounds {
        "none" => None,
        "huge" => Some(Aabb::new([-1e9; D], [1e9; D])),
        "max" => Some(Aabb::new([f32::MIN; D], [f32::MAX; D])),
        "zero" => Some(Aabb::new([0.0; D], [0.0; D])),
        "offset" => Some(Aabb::new([1e6; D], [1e6 + 1.0; D])),
        _ => panic!("BP_BOUNDS: none, huge, max, zero or offset, not {bounds:?}"),
    };
    Config::default().with_bounds(b)
}

fn env_list(name: &str, default: &str) -> Vec<String> {
    let v = std::env::var(name).unwrap_or_default();
    let v = if v.trim().is_empty() { default.to_string() } else { v };
    v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

fn env_num(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => {
            v.trim().replace('_', "").parse().unwrap_or_else(|_| panic!("{name}={v}: not a number"))
        }
        _ => default,
    }
}

impl Opts {
    fn from_env() -> Self {
        let all = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let check_only = env_num("BP_CHECK", 0) != 0;
        let parse = |name: &str, s: &str| -> usize {
            s.replace('_', "").parse().unwrap_or_else(|_| panic!("{name}: {s:?} is not a number"))
        };
        let sizes =
            env_list("BP_SIZES", "10000,100000,1000000").iter().map(|s| parse("BP_SIZES", s)).collect();
        let dims: Vec<usize> = env_list("BP_DIMS", if check_only { "1,2,3" } else { "2,3" })
            .iter()
            .map(|s| parse("BP_DIMS", s))
            .collect();
        assert!(dims.iter().all(|d| (1..=3).contains(d)), "BP_DIMS: only 1, 2 and 3");
        let default_scenes = if check_only {
            "uniform,varied,clustered,mixed,all_overlapping"
        } else {
            "uniform,varied,clustered,mixed"
        };
        let scenes: Vec<String> = env_list("BP_SCENES", default_scenes)
            .into_iter()
            .flat_map(|s| if s == "cliffs" { cliffs::names() } else { vec![s] })
            .collect();
        for s in &scenes {
            assert!(
                broadphase::internals::by_name::<2>(s, 4, 1).is_some(),
                "BP_SCENES: unknown scene {s:?}; known: {:?}, `cliffs` or {:?}",
                scene::SCENES,
                cliffs::names()
            );
        }
        let mut threads: Vec<usize> = env_list("BP_THREADS", "1,all")
            .iter()
            .map(|s| if s == "all" { all } else { parse("BP_THREADS", s) })
            .collect();
        threads.sort_unstable();
        threads.dedup();
        assert!(threads.iter().all(|&t| t >= 1), "BP_THREADS: at least 1");
        Opts {
            sizes,
            dims,
            scenes,
            threads,
            competitors: env_num("BP_COMPETITORS", 1) != 0,
            check_only,
            check_n: env_num("BP_CHECK_N", 3000),
            measure: Duration::from_secs_f64(env_num("BP_MEASURE", 3) as f64),
            bounds: env_list("BP_BOUNDS", "none").concat(),
            oneshot: env_num("BP_ONESHOT", 0) != 0,
            methods: env_list("BP_METHODS", "auto")
                .into_iter()
                .map(|m| (m.clone(), method_by_name(&m)))
                .collect(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Competitor adapters. Each returns the pairs the way the library hands them out.

fn to_parry<const D: usize>(boxes: &[Aabb<D>]) -> Vec<ParryAabb> {
    assert_eq!(D, 3, "parry3d is 3D only");
    boxes
        .iter()
        .map(|b| {
            ParryAabb::new(
                ParryVec::new(b.min[0], b.min[1], b.min[2]),
                ParryVec::new(b.max[0], b.max[1], b.max[2]),
            )
        })
        .collect()
}

/// parry3d: binned BVH build, then the BVH traversed against itself.
fn parry_pairs(leaves: &[ParryAabb], ws: &mut BvhWorkspace, out: &mut Pairs) {
    out.clear();
    let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, leaves);
    bvh.traverse_bvtt_single_tree::<false>(ws, &mut |a, b| out.push([a, b]));
}

fn to_broccoli<const D: usize>(boxes: &[Aabb<D>]) -> Vec<BrocBox> {
    assert_eq!(D, 2, "broccoli is 2D only");
    boxes
        .iter()
        .enumerate()
        .map(|(i, b)| (Rect::new(b.min[0], b.max[0], b.min[1], b.max[1]), i as u32))
        .collect()
}

/// broccoli, single threaded. Reorders `bots`.
fn broccoli_pairs(bots: &mut [BrocBox], out: &mut Pairs) {
    out.clear();
    let mut tree = Tree::new(bots);
    tree.find_colliding_pairs(|a, b| out.push([a.1, b.1]));
}

/// broccoli-rayon, on the current rayon pool. Reorders `bots`.
fn broccoli_par_pairs(bots: &mut [BrocBox]) -> Pairs {
    let mut tree = Tree::par_new(bots);
    tree.par_find_colliding_pairs_acc_closure(
        Vec::new(),
        |_| Vec::new(),
        |a: &mut Pairs, mut b: Pairs| a.append(&mut b),
        |acc: &mut Pairs, a, b| acc.push([a.1, b.1]),
    )
}

/// `i < j`, sorted, unique; also returns how many duplicates there were.
fn normalise(mut p: Pairs) -> (Pairs, usize) {
    for q in p.iter_mut() {
        if q[0] > q[1] {
            q.swap(0, 1);
        }
    }
    p.sort_unstable();
    let before = p.len();
    p.dedup();
    let dups = before - p.len();
    (p, dups)
}

/// Compares `got` against the reference; prints a verdict and a few differing pairs.
fn compare<const D: usize>(what: &str, got: Pairs, reference: &Pairs, boxes: &[Aabb<D>]) -> bool {
    let raw = got.len();
    let self_pairs = got.iter().filter(|q| q[0] == q[1]).count();
    let (got, dups) = normalise(got);
    let ok = &got == reference && self_pairs == 0;
    let mut line = format!("    {what}: {} pairs", got.len());
    if dups > 0 || self_pairs > 0 {
        line += &format!(" ({raw} reported, {dups} duplicates, {self_pairs} self pairs)");
    }
    if ok {
        println!("{line}: ok");
        return true;
    }
    println!("{line}: MISMATCH with brute force ({} pairs)", reference.len());
    let missing: Vec<_> = reference.iter().filter(|q| got.binary_search(q).is_err()).collect();
    let extra: Vec<_> = got.iter().filter(|q| reference.binary_search(q).is_err()).collect();
    println!(
        "      missing {} (first: {:?}), extra {} (first: {:?})",
        missing.len(),
        missing.first(),
        extra.len(),
        extra.first()
    );
    for q in missing.iter().chain(extra.iter()).take(4) {
        let (a, b) = (boxes[q[0] as usize], boxes[q[1] as usize]);
        println!("      {q:?}: {a:?} {b:?} overlaps={}", a.overlaps(&b));
    }
    false
}

fn pool(t: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(t).build().expect("thread pool")
}

fn dim_label<const D: usize>() -> String {
    format!("{D}d")
}

// ---------------------------------------------------------------------------------------
// Correctness check of every adapter against brute force.

fn check<const D: usize>(opts: &Opts) -> bool {
    let n = opts.check_n;
    let mut all_ok = true;
    let max_t = *opts.threads.iter().max().unwrap();
    for name in &opts.scenes {
        let boxes = broadphase::internals::by_name::<D>(name, n, SEED).unwrap();
        let reference = brute_force_pairs(&boxes, &Config::default()).expect("brute force");
        println!(
            "check {} {name} n={n} ({} boxes): brute force {} pairs, {:.3} pairs per box",
            dim_label::<D>(),
            boxes.len(),
            reference.len(),
            reference.len() as f64 / boxes.len().max(1) as f64
        );
        for (name, method) in &opts.methods {
            for &t in &opts.threads {
                let mut bp = Broadphase::<D>::new(Config::default().with_method(*method)).unwrap();
                let mut out = Vec::new();
                pool(t).install(|| bp.find_pairs(&boxes, &mut out)).expect("broadphase");
                let ok = out == reference; // must already be sorted and unique
                println!(
                    "    {}: {} pairs: {}",
                    our_function(name, t),
                    out.len(),
                    if ok { "ok" } else { "MISMATCH (exact sorted output expected)" }
                );
                all_ok &= ok;
            }
        }
        if !opts.competitors {
            continue;
        }
        if D == 3 {
            let leaves = to_parry(&boxes);
            let mut out = Vec::new();
            parry_pairs(&leaves, &mut BvhWorkspace::default(), &mut out);
            all_ok &= compare("parry3d", out, &reference, &boxes);
        }
        if D == 2 {
            let bots = to_broccoli(&boxes);
            let mut b = bots.clone();
            let mut out = Vec::new();
            broccoli_pairs(&mut b, &mut out);
            all_ok &= compare("broccoli", out, &reference, &boxes);
            let mut b = bots.clone();
            let out = pool(max_t).install(|| broccoli_par_pairs(&mut b));
            all_ok &= compare(&format!("broccoli_par/t{max_t}"), out, &reference, &boxes);
        }
    }
    all_ok
}

// ---------------------------------------------------------------------------------------
// Benchmarks.

fn bench_dim<const D: usize>(c: &mut Criterion, opts: &Opts, pools: &[(usize, rayon::ThreadPool)]) {
    let all_pool = &pools.iter().max_by_key(|(t, _)| *t).unwrap().1;
    for name in &opts.scenes {
        for &n in &opts.sizes {
            let boxes = broadphase::internals::by_name::<D>(name, n, SEED).unwrap();
            let config = our_config::<D>(&opts.bounds);
            let with = if opts.bounds == "none" { String::new() } else { format!("+bounds:{}", opts.bounds) };
            let group_name = format!("pairs/{}/{name}{with}/{n}", dim_label::<D>());

            // Untimed: the pair count, and each competitor's count as a check at this size.
            let mut bp = Broadphase::<D>::new(config).unwrap();
            let mut ours = Vec::new();
            all_pool.install(|| bp.find_pairs(&boxes, &mut ours)).expect("broadphase");
            let mut line = format!(
                "{group_name}: {} boxes, {} pairs ({:.3} per box)",
                boxes.len(),
                ours.len(),
                ours.len() as f64 / boxes.len().max(1) as f64
            );
            let parry_leaves = (opts.competitors && D == 3).then(|| to_parry(&boxes));
            let broc_bots = (opts.competitors && D == 2).then(|| to_broccoli(&boxes));
            let verdict = |p: Pairs| {
                let (p, _) = normalise(p);
                if p == ours {
                    format!("{} ok", p.len())
                } else {
                    format!("{} MISMATCH", p.len())
                }
            };
            if let Some(leaves) = &parry_leaves {
                let mut out = Vec::new();
                parry_pairs(leaves, &mut BvhWorkspace::default(), &mut out);
                line += &format!("; parry3d {}", verdict(out));
            }
            if let Some(bots) = &broc_bots {
                let mut b = bots.clone();
                let mut out = Vec::new();
                broccoli_pairs(&mut b, &mut out);
                line += &format!("; broccoli {}", verdict(out));
                let mut b = bots.clone();
                let out = all_pool.install(|| broccoli_par_pairs(&mut b));
                line += &format!("; broccoli_par {}", verdict(out));
            }
            println!("{line}");
            drop(ours);

            let mut g = c.benchmark_group(group_name);
            g.throughput(Throughput::Elements(boxes.len() as u64))
                .sample_size(10)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(opts.measure);

            for (name, method) in &opts.methods {
                for (t, pool) in pools {
                    let mut bp = Broadphase::<D>::new(config.with_method(*method)).unwrap();
                    let mut out: Pairs = Vec::new();
                    g.bench_function(our_function(name, *t), |b| {
                        b.iter(|| {
                            pool.install(|| bp.find_pairs(black_box(&boxes), &mut out)).unwrap();
                            black_box(out.len())
                        })
                    });
                }
            }

            if let Some(leaves) = &parry_leaves {
                let mut ws = BvhWorkspace::default();
                let mut out: Pairs = Vec::new();
                g.bench_function("parry3d/t1", |b| {
                    b.iter(|| {
                        parry_pairs(black_box(leaves), &mut ws, &mut out);
                        black_box(out.len())
                    })
                });
            }

            if let Some(bots) = &broc_bots {
                let mut buf = bots.clone();
                let mut out: Pairs = Vec::new();
                g.bench_function("broccoli/t1", |b| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            buf.copy_from_slice(bots); // untimed: restore the input order
                            let start = Instant::now();
                            broccoli_pairs(black_box(&mut buf), &mut out);
                            black_box(out.len());
                            total += start.elapsed();
                        }
                        total
                    })
                });
                for (t, pool) in pools {
                    g.bench_function(format!("broccoli_par/t{t}"), |b| {
                        b.iter_custom(|iters| {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                buf.copy_from_slice(bots);
                                let start = Instant::now();
                                let out = pool.install(|| broccoli_par_pairs(black_box(&mut buf)));
                                black_box(out.len());
                                drop(out);
                                total += start.elapsed();
                            }
                            total
                        })
                    });
                }
            }
            g.finish();
            if opts.oneshot {
                bench_oneshot(
                    c,
                    &format!("oneshot/{}/{name}{with}/{n}", dim_label::<D>()),
                    &boxes,
                    &config,
                    pools,
                    opts.measure,
                );
            }
        }
    }
}

/// The one-shot call (its finder cached) against a reused finder and a fresh one.
fn bench_oneshot<const D: usize>(
    c: &mut Criterion,
    group_name: &str,
    boxes: &[Aabb<D>],
    config: &Config<D>,
    pools: &[(usize, rayon::ThreadPool)],
    measure: Duration,
) {
    let mut g = c.benchmark_group(group_name);
    g.throughput(Throughput::Elements(boxes.len() as u64))
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(measure);
    for (t, pool) in pools {
        let mut bp = Broadphase::<D>::new(*config).unwrap();
        let mut out: Pairs = Vec::new();
        g.bench_function(format!("reused/t{t}"), |b| {
            b.iter(|| {
                pool.install(|| bp.find_pairs(black_box(boxes), &mut out)).unwrap();
                black_box(out.len())
            })
        });
        g.bench_function(format!("find_pairs/t{t}"), |b| {
            b.iter(|| pool.install(|| broadphase::find_pairs_with(black_box(boxes), config)).unwrap().len())
        });
        g.bench_function(format!("fresh/t{t}"), |b| {
            b.iter(|| {
                let mut bp = Broadphase::<D>::new(*config).unwrap();
                let mut out: Pairs = Vec::new();
                pool.install(|| bp.find_pairs(black_box(boxes), &mut out)).unwrap();
                out.len()
            })
        });
    }
    g.finish();
}

fn main() {
    let opts = Opts::from_env();
    println!(
        "pairs bench: sizes {:?}, dims {:?}, scenes {:?}, threads {:?}, competitors {}, check n = {}",
        opts.sizes, opts.dims, opts.scenes, opts.threads, opts.competitors, opts.check_n
    );

    let mut ok = true;
    for &d in &opts.dims {
        ok &= match d {
            1 => check::<1>(&opts),
            2 => check::<2>(&opts),
            _ => check::<3>(&opts),
        };
    }
    assert!(ok, "correctness check failed: see MISMATCH lines above");
    println!("correctness check passed");
    if opts.check_only {
        return;
    }

    let pools: Vec<(usize, rayon::ThreadPool)> = opts.threads.iter().map(|&t| (t, pool(t))).collect();
    let mut c = Criterion::default().configure_from_args();
    for &d in &opts.dims {
        match d {
            1 => bench_dim::<1>(&mut c, &opts, &pools),
            2 => bench_dim::<2>(&mut c, &opts, &pools),
            _ => bench_dim::<3>(&mut c, &opts, &pools),
        }
    }
    c.final_summary();
}
