//! RDC benchmark: `Rdc::pairs` against the core pipeline (`find_pairs`, with SAP and with
//! RDC as the crowded-cell refinement), sweep-and-prune alone (`Method::Sweep`) and brute
//! force, on `broadphase::internals::scene`'s uniform, clustered and all-overlapping scenes and two
//! scenes generated here, `islands` and `planks`.
//!
//! Run: `cargo bench --bench rdc`. Narrow the sweep with environment variables:
//!
//! | variable     | default                | meaning                                        |
//! |--------------|------------------------|------------------------------------------------|
//! | `BP_SIZES`   | `10000,100000,1000000` | `n`                                            |
//! | `BP_DIMS`    | `2,3`                  | dimensions                                     |
//! | `BP_SCENES`  | all five               | `uniform,clustered,all_overlapping,islands,planks` |
//! | `BP_THREADS` | `1,all`                | rayon thread counts; `all` = every core        |
//! | `BP_MEASURE` | `3`                    | criterion measurement time, seconds            |
//! | `BP_AO_MAX`  | `10000`                | largest all-overlapping `n` (n^2/2 pairs!)     |
//! | `BP_TUNE`    | `0`                    | `1`: only the `min_group_size` sweep           |
//! | `BP_TUNE_M`  | `1,4,8,16,32,64,256`   | the `min_group_size` values it tries           |
//!
//! Brute force runs only at `n <= 10000`. Groups are `rdc/{2d|3d}/{scene}/{n}` with
//! functions `rdc/t{threads}` (`Rdc::pairs`, default settings), `pipeline/t{threads}`
//! (`find_pairs`), `pipeline_rdc/t{threads}` (`find_pairs_with`, `Refine::Rdc`),
//! `sap/t{threads}` (`Method::Sweep`) and `brute_force/t{threads}`. The group
//! `all_overlapping` (3D, all threads) holds `{n}/sweep_only` (`Method::Sweep`: the cost
//! of writing the n(n-1)/2 pairs with the sweep alone) and `{n}/rdc`: the acceptance target
//! is `rdc < 5 x sweep_only`. Before the timings every scene is checked against brute
//! force at n = 2000, and the 5x ratio is measured once and printed. `islands` (generated
//! here) is RDC's home ground: sparse clumps, gaps in every projection. `planks` (here too)
//! is one-axis sweep-and-prune's worst case and the one scene with crowded cells that RDC
//! splits (`pipeline_rdc` against `pipeline`). `BP_TUNE=1` runs only
//! `tune/{2d|3d}/{scene}/{n}` (scenes default `islands,clustered`) with functions
//! `min_group_size/{m}` (all threads), the measurement behind `Rdc::default()`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use broadphase::{brute_force_pairs, find_pairs, find_pairs_with, Aabb, Config, Method, Rdc, Refine};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const SEED: u64 = 1;

fn env_list(name: &str, default: &str) -> Vec<String> {
    let v = std::env::var(name).unwrap_or_default();
    let v = if v.trim().is_empty() { default.to_string() } else { v };
    v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

fn env_nums(name: &str, default: &str) -> Vec<usize> {
    env_list(name, default)
        .iter()
        .map(|s| s.replace('_', "").parse().unwrap_or_else(|_| panic!("{name}: {s:?}")))
        .collect()
}

fn all_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

fn pools() -> Vec<(usize, rayon::ThreadPool)> {
    let mut t: Vec<usize> = env_list("BP_THREADS", "1,all")
        .iter()
        .map(|s| if s == "all" { all_threads() } else { s.parse().expect("BP_THREADS") })
        .collect();
    t.sort_unstable();
    t.dedup();
    t.into_iter().map(|t| (t, rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap())).collect()
}

fn scene_of<const D: usize>(name: &str, n: usize) -> Vec<Aabb<D>> {
    if name == "islands" {
        return islands(n, SEED);
    }
    if name == "planks" {
        return planks(n);
    }
    broadphase::internals::by_name::<D>(name, n, SEED).unwrap_or_else(|| panic!("unknown scene {name}"))
}

/// Long planks along x (length 100 to 106) stacked along the other axes (shelves, floors):
/// every pair overlaps on x, none on all axes (thickness `20 / n`, spacing `100 / n`).
/// One-axis sweep-and-prune's worst case, and crowded Morton cells that RDC splits. 2D/3D.
fn planks<const D: usize>(n: usize) -> Vec<Aabb<D>> {
    assert!(D >= 2, "planks: 2D and 3D only");
    let t = 20.0 / n.max(1) as f64;
    (0..n)
        .map(|i| {
            let mut b = Aabb::new([0.0f32; D], [0.0f32; D]);
            b.max[0] = 100.0 + (i % 7) as f32;
            for k in 1..D {
                let p = [7919usize, 104_729][k - 1];
                let y = ((i * p) % n) as f64 * 100.0 / n as f64;
                b.min[k] = y as f32;
                b.max[k] = (y + t) as f32;
            }
            b
        })
        .collect()
}

/// RDC's home ground (the seeds' demos): clumps of about 12 boxes (sides 0.3..0.9 within
/// 1.5 of a centre) whose centres are uniform in `[0, W]^D` with `W = 6 n / 12`, so each
/// axis's projection is about half covered and has gaps at every scale.
fn islands<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let mut state = seed ^ 0x1515;
    // SplitMix64, uniform in [lo, hi).
    let mut range = move |lo: f64, hi: f64| {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        lo + (hi - lo) * ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let k = n.div_ceil(12).max(1);
    let w = 6.0 * k as f64;
    let centres: Vec<[f64; D]> = (0..k).map(|_| std::array::from_fn(|_| range(0.0, w))).collect();
    (0..n)
        .map(|i| {
            let c = centres[i % k];
            let mut b = Aabb::new([0.0f32; D], [0.0f32; D]);
            for (a, &ca) in c.iter().enumerate() {
                let lo = ca + range(-1.5, 1.5);
                b.min[a] = lo as f32;
                b.max[a] = (lo + range(0.3, 0.9)) as f32;
            }
            b
        })
        .collect()
}

/// Every method agrees with brute force on every selected scene at n = 2000.
fn check<const D: usize>(scenes: &[String]) {
    let rdc_cfg = Config::default().with_refine(Refine::Rdc);
    for name in scenes {
        let boxes = scene_of::<D>(name, 2000);
        let want = brute_force_pairs(&boxes, &Config::default()).unwrap();
        assert_eq!(Rdc::<D>::default().pairs(&boxes).unwrap(), want, "rdc {D}d {name}");
        assert_eq!(find_pairs(&boxes).unwrap(), want, "pipeline {D}d {name}");
        assert_eq!(find_pairs_with(&boxes, &rdc_cfg).unwrap(), want, "pipeline_rdc {D}d {name}");
        println!("check {D}d {name} n=2000: {} pairs, all methods agree", want.len());
    }
}

fn bench_dim<const D: usize>(c: &mut Criterion, pools: &[(usize, rayon::ThreadPool)]) {
    let sizes = env_nums("BP_SIZES", "10000,100000,1000000");
    let scenes = env_list("BP_SCENES", "uniform,clustered,all_overlapping,islands,planks");
    let ao_max = env_nums("BP_AO_MAX", "10000")[0];
    let measure = Duration::from_secs(env_nums("BP_MEASURE", "3")[0] as u64);
    check::<D>(&scenes);
    let rdc = Rdc::<D>::default();
    let rdc_cfg = Config::default().with_refine(Refine::Rdc);
    for name in &scenes {
        for &n in &sizes {
            if name == "all_overlapping" && n > ao_max {
                println!("skip {D}d all_overlapping n={n}: {} pairs (raise BP_AO_MAX)", n * (n - 1) / 2);
                continue;
            }
            let boxes = scene_of::<D>(name, n);
            let clusters = rdc.clusters(&boxes).unwrap();
            let pairs = rdc.pairs(&boxes).unwrap().len();
            println!("{D}d {name} n={n}: {pairs} pairs, {} RDC groups (default settings)", clusters.len());
            let mut g = c.benchmark_group(format!("rdc/{D}d/{name}/{n}"));
            g.sample_size(10).measurement_time(measure).warm_up_time(Duration::from_secs(1));
            g.throughput(Throughput::Elements(n as u64));
            for (t, pool) in pools {
                g.bench_function(BenchmarkId::new("rdc", format!("t{t}")), |b| {
                    b.iter(|| pool.install(|| black_box(rdc.pairs(&boxes).unwrap())))
                });
                g.bench_function(BenchmarkId::new("pipeline", format!("t{t}")), |b| {
                    b.iter(|| pool.install(|| black_box(find_pairs(&boxes).unwrap())))
                });
                g.bench_function(BenchmarkId::new("pipeline_rdc", format!("t{t}")), |b| {
                    b.iter(|| pool.install(|| black_box(find_pairs_with(&boxes, &rdc_cfg).unwrap())))
                });
                g.bench_function(BenchmarkId::new("sap", format!("t{t}")), |b| {
                    b.iter(|| {
                        pool.install(|| {
                            black_box(
                                find_pairs_with(&boxes, &Config::default().with_method(Method::Sweep))
                                    .unwrap(),
                            )
                        })
                    })
                });
                if n <= 10_000 {
                    g.bench_function(BenchmarkId::new("brute_force", format!("t{t}")), |b| {
                        b.iter(|| {
                            pool.install(|| black_box(brute_force_pairs(&boxes, &Config::default()).unwrap()))
                        })
                    });
                }
            }
            g.finish();
        }
    }
}

/// The acceptance target: RDC on 10k all-overlapping boxes (3D, all threads) within 5x of
/// writing its pairs with the sweep alone.
fn bench_all_overlapping(c: &mut Criterion) {
    let n = 10_000;
    let boxes = scene_of::<3>("all_overlapping", n);
    let rdc = Rdc::<3>::default();
    let sweep = || find_pairs_with(&boxes, &Config::default().with_method(Method::Sweep)).unwrap();
    let best = |f: &dyn Fn() -> usize| {
        (0..3)
            .map(|_| {
                let t = Instant::now();
                black_box(f());
                t.elapsed()
            })
            .min()
            .unwrap()
    };
    let (ts, tr) = (best(&|| sweep().len()), best(&|| rdc.pairs(&boxes).unwrap().len()));
    let ratio = tr.as_secs_f64() / ts.as_secs_f64();
    println!(
        "all_overlapping 3d n={n}: sweep_only {ts:?}, rdc {tr:?}, ratio {ratio:.2} (target < 5): {}",
        if ratio < 5.0 { "PASS" } else { "FAIL" }
    );
    let mut g = c.benchmark_group("all_overlapping");
    g.sample_size(10).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function(format!("{n}/sweep_only"), |b| b.iter(|| black_box(sweep())));
    g.bench_function(format!("{n}/rdc"), |b| b.iter(|| black_box(rdc.pairs(&boxes).unwrap())));
    g.finish();
}

/// `min_group_size` sweep (`BP_TUNE=1`), all threads.
fn tune<const D: usize>(c: &mut Criterion) {
    let sizes = env_nums("BP_SIZES", "10000,100000,1000000");
    let scenes = env_list("BP_SCENES", "islands,clustered");
    for name in &scenes {
        for &n in &sizes {
            let boxes = scene_of::<D>(name, n);
            let mut g = c.benchmark_group(format!("tune/{D}d/{name}/{n}"));
            g.sample_size(10).warm_up_time(Duration::from_secs(1));
            g.throughput(Throughput::Elements(n as u64));
            for m in env_nums("BP_TUNE_M", "1,4,8,16,32,64,256") {
                let rdc = Rdc::<D> { min_group_size: m, ..Rdc::default() };
                g.bench_function(BenchmarkId::new("min_group_size", m), |b| {
                    b.iter(|| black_box(rdc.pairs(&boxes).unwrap()))
                });
            }
            g.finish();
        }
    }
}

fn benches(c: &mut Criterion) {
    let tuning = env_nums("BP_TUNE", "0")[0] != 0;
    let pools = pools();
    for d in env_nums("BP_DIMS", "2,3") {
        match (d, tuning) {
            (1, false) => bench_dim::<1>(c, &pools),
            (2, false) => bench_dim::<2>(c, &pools),
            (3, false) => bench_dim::<3>(c, &pools),
            (1, true) => tune::<1>(c),
            (2, true) => tune::<2>(c),
            (3, true) => tune::<3>(c),
            _ => panic!("BP_DIMS: only 1, 2 and 3"),
        }
    }
    if !tuning {
        bench_all_overlapping(c);
    }
}

criterion_group!(rdc_benches, benches);
criterion_main!(rdc_benches);
