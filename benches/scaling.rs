//! Thread scaling: every method of ours and the peers (parry3d in 3D, broccoli and
//! broccoli-rayon in 2D, rstar's bulk load and self join in 2D and 3D) at 1, 2, 4, ... up to
//! all cores, each thread count in its own rayon pool, over sizes, scenes and dimensions.
//! Input: the seeded scenes of `broadphase::internals`. Output: criterion's groups, then
//! one CSV per machine, `docs/bench/<machine>.csv` (a row per dimension, scene, `n`,
//! method or peer and thread count: the median time of a call, boxes a second, the speedup
//! over 1 thread, the pairs, the commit, the method that ran), the SVG plots drawn from every CSV there
//! (`docs/bench/<machine>/<dims>d-<scene>.svg`: time against threads at the largest `n`,
//! and time against `n` at the most threads, both log-log), and the tables of
//! `docs/BENCHMARKS.md` and the plot of the README, generated between the marker comments
//! `<!-- scaling:begin -->` and `<!-- scaling:end -->`.
//!
//! Run: `cargo bench --bench scaling` runs the default sweep below: every scene, method
//! (but the quadratic reference) and peer at 10k and 100k boxes, 0.3 s of samples a
//! function (10 samples at least: the dense 2D sticks at 100k take a third of the time;
//! 11.5 to 12.5 minutes of timing on the 2-core machine, after a build of a minute and a
//! half). `BP_SWEEP=full` adds 1M boxes and measures 2 seconds a function (over an hour
//! on 16 cores: some 1,200 functions). Narrow either with environment variables (comma
//! separated lists):
//!
//! | variable            | default                                  | meaning                                      |
//! |---------------------|------------------------------------------|----------------------------------------------|
//! | `BP_SWEEP`          | `default`                                | `full`: the sizes and times of the full sweep |
//! | `BP_SIZES`          | `10000,100000` (full: and `1000000`)     | `n`, timed in ascending order (`mixed` adds 1000 thin boxes) |
//! | `BP_DIMS`           | `2,3`                                    | dimensions, 1 to 3 (the peers run in 2D and 3D) |
//! | `BP_SCENES`         | `uniform,varied,clustered,mixed,tiles,terrain,sticks,parked:10:1e9` | scenes of `broadphase::internals::by_name` (`parked:10:1e9`: a tenth of the boxes parked far away) |
//! | `BP_THREADS`        | `1,2,4,...,all`                          | rayon thread counts: the powers of two below the core count, then `all` (every core) |
//! | `BP_METHODS`        | every method in `benches/common/methods.rs` (default sweep: but `brute_force`) | our `Config::method`s by name (`auto_unsorted`, ...: by `find_pairs_unsorted`), or `none` |
//! | `BP_PEERS`          | `parry3d,broccoli,broccoli_par,rstar`    | peers by name, or `none`                     |
//! | `BP_MEASURE`        | `0.3` (full: `2`)                        | criterion measurement time, seconds          |
//! | `BP_WARMUP`         | `0.1` (full: `0.5`)                      | criterion warm-up time, seconds              |
//! | `BP_PASSES`         | `10`                                     | passes over a scene and size's functions, each with a share of the two times above |
//! | `BP_BUDGET`         | `0.25`                                   | seconds a call: a method or peer over it at its fewest threads is skipped at the larger sizes |
//! | `BP_CHECK_N`        | `3000`                                   | size of the correctness check's scenes (`0`: no check) |
//! | `BP_MACHINE`        | the host name, else `unnamed`            | the machine: names the CSV and the plots     |
//! | `BP_COMMIT`         | `git rev-parse --short HEAD`, else empty | the commit column (set it where the binary runs outside the repository) |
//! | `BP_SCALING_REDRAW` | `0`                                      | `1`: measure nothing; redraw the plots and rewrite the tables from the CSVs |
//!
//! Every run first checks, for each selected dimension and scene at `BP_CHECK_N` boxes, that
//! every selected method at every thread count finds exactly the pairs of
//! `brute_force_pairs`, and every selected peer the same pairs once normalised (`i < j`,
//! sorted, deduplicated); it panics if not. At each timed size, every method and peer runs
//! once untimed and must give the same number of pairs as `Method::Auto`.
//!
//! Criterion groups are `scaling/{d}d/{scene}/{n}` (the first pass) and
//! `scaling/{d}d/{scene}/{n}/pass{k}`, functions `{method}/t{threads}` (a reused
//! `Broadphase` and output, called inside the pool) and `{peer}/t{threads}`: the
//! single-threaded peers (parry3d, broccoli, rstar) once, at `t1`; broccoli_par in every
//! pool. The peers' adapters and what their times include: `benches/common/peers.rs`. A
//! method whose table line in `benches/common/methods.rs` caps `n` is skipped above it, and
//! a method or peer whose time at its fewest threads was over `BP_BUDGET` is skipped at
//! the larger sizes of that dimension and scene; each skip is printed.
//!
//! The times are criterion's own samples (flat sampling: the same number of calls in
//! each), recorded in the timed closure. At each scene and size every function is timed in
//! up to `BP_PASSES` passes, each with that share of `BP_WARMUP` and `BP_MEASURE`, every
//! pass in the reverse order of the one before; a function's time is the median over all
//! its passes' samples of the mean time a call. The machine is shared: the same calls of
//! one process, timed back to back, ran at 2.1 and at 2.9 ms in spells of a tenth of a
//! second to seconds, so a third of a second of one function reads one spell, and two
//! methods timed seconds apart read different ones. In short passes every function is
//! sampled all through the scene's timing, beside the methods it is compared with (two
//! instances of the sweep and two of `Auto` running it, called in turn, at 2 threads, had
//! medians of 0.91 to 0.92 ms a call). A pass takes ten calls at least; a function takes
//! another pass while ten calls a pass, over all its passes, fit in three times
//! `BP_MEASURE`. The times are written only under `cargo bench` (its `--bench` argument),
//! not in criterion's test or list modes, and only for the functions criterion's filter
//! let run; the CSV keeps its other rows, so a run of a subset replaces only its own rows.
//! Cost: a function takes about `BP_WARMUP + BP_MEASURE` seconds where ten calls fit in a
//! pass's share, up to three times `BP_MEASURE` where they do not, and one pass of ten
//! calls where two passes' would outlast that.
//! Threads: each thread count in a pool of its own, built once.

use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use broadphase::{brute_force_pairs, Broadphase, Config, Method};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};

#[path = "common/env.rs"]
mod env;
use env::{env_num, env_nums, env_secs, env_str, env_words};
#[path = "common/methods.rs"]
mod methods;
#[path = "common/peers.rs"]
mod peers;
use peers::{compare, normalise, pool, Pairs, Peer, PeerRun};
#[path = "scaling/csv.rs"]
mod csv;
use csv::Row;
#[path = "scaling/plot.rs"]
mod plot;
#[path = "scaling/report.rs"]
mod report;

/// Seed of every scene.
const SEED: u64 = 1;
/// Criterion's samples a function.
const SAMPLES: usize = 10;
/// How many times `BP_MEASURE` the passes of a function whose ten calls a pass outlast
/// its share may take: up to three passes at 30 ms a call, at the default.
const SLOW_SHARE: f64 = 3.0;
const SCENES: &str = "uniform,varied,clustered,mixed,tiles,terrain,sticks,parked:10:1e9";

struct Opts {
    sizes: Vec<usize>,
    dims: Vec<usize>,
    scenes: Vec<String>,
    threads: Vec<usize>,
    methods: Vec<String>,
    peers: Vec<Peer>,
    measure: Duration,
    passes: usize,
    warm_up: Duration,
    budget: f64,
    check_n: usize,
    machine: String,
    commit: String,
    cores: usize,
    redraw: bool,
}

/// `1,2,4,...` below `all`, then `all`.
fn default_threads(all: usize) -> String {
    let mut t: Vec<String> = std::iter::successors(Some(1usize), |t| Some(t * 2))
        .take_while(|&t| t < all)
        .map(|t| t.to_string())
        .collect();
    t.push(all.to_string());
    t.join(",")
}

impl Opts {
    fn from_env() -> Self {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let full = env_str("BP_SWEEP", "default") == "full";
        let mut sizes = env_nums("BP_SIZES", if full { "10000,100000,1000000" } else { "10000,100000" });
        sizes.sort_unstable();
        sizes.dedup();
        let dims = env_nums("BP_DIMS", "2,3");
        assert!(dims.iter().all(|d| (1..=3).contains(d)), "BP_DIMS: only 1, 2 and 3");
        let scenes = env_words("BP_SCENES", SCENES);
        for s in &scenes {
            assert!(
                broadphase::internals::by_name::<2>(s, 4, 1).is_some(),
                "BP_SCENES: unknown scene {s:?}; known: {:?} and the cliffs {:?}",
                broadphase::internals::scene::SCENES,
                broadphase::internals::cliffs::names()
            );
        }
        let mut threads: Vec<usize> = env_words("BP_THREADS", &default_threads(cores))
            .iter()
            .map(|s| {
                if s == "all" {
                    cores
                } else {
                    s.parse().unwrap_or_else(|_| panic!("BP_THREADS: {s:?} is not a number"))
                }
            })
            .collect();
        threads.sort_unstable();
        threads.dedup();
        assert!(threads.first().is_some_and(|&t| t >= 1), "BP_THREADS: at least 1");
        // The quadratic reference takes about a second a call at 10k boxes: the full sweep
        // times it, the default one does not.
        let default_methods: Vec<&str> =
            methods::method_names().into_iter().filter(|&m| full || m != "brute_force").collect();
        let methods: Vec<String> = env_words("BP_METHODS", &default_methods.join(","))
            .into_iter()
            .filter(|m| m != "none")
            .inspect(|m| {
                methods::method_by_name(m.strip_suffix("_unsorted").unwrap_or(m));
            })
            .collect();
        let peers = env_words("BP_PEERS", &Peer::ALL.map(Peer::name).join(","))
            .into_iter()
            .filter(|p| p != "none")
            .map(|p| Peer::by_name(&p))
            .collect();
        Opts {
            sizes,
            dims,
            scenes,
            threads,
            methods,
            peers,
            measure: env_secs("BP_MEASURE", if full { 2.0 } else { 0.3 }),
            passes: env_num("BP_PASSES", 10).max(1),
            warm_up: env_secs("BP_WARMUP", if full { 0.5 } else { 0.1 }),
            budget: env::env_f64("BP_BUDGET", 0.25),
            check_n: env_num("BP_CHECK_N", 3000),
            machine: csv::machine_name(&env_str("BP_MACHINE", "")),
            commit: csv::commit(&env_str("BP_COMMIT", "")),
            cores,
            redraw: env_num("BP_SCALING_REDRAW", 0) != 0,
        }
    }
}

/// What one bench function runs: one of our methods or a peer.
#[derive(Clone, Copy)]
enum Who {
    /// A method, its name, and whether its pairs are sorted (`find_pairs`) or not
    /// (`find_pairs_unsorted`: the name ends in `_unsorted`).
    Ours(&'static str, Method, bool),
    Peer(Peer),
}

impl Who {
    fn name(self) -> &'static str {
        match self {
            Who::Ours(name, _, _) => name,
            Who::Peer(p) => p.name(),
        }
    }
}

/// The methods and peers selected that run in `D` dimensions.
fn whos<const D: usize>(opts: &Opts) -> Vec<Who> {
    let ours = opts.methods.iter().map(|m| match m.strip_suffix("_unsorted") {
        Some(base) => Who::Ours(Box::leak(m.clone().into_boxed_str()), methods::method_by_name(base), false),
        None => {
            let (name, method, _) = methods::method_entry(m);
            Who::Ours(name, method, true)
        }
    });
    ours.chain(opts.peers.iter().filter(|p| p.runs_in(D)).map(|&p| Who::Peer(p))).collect()
}

/// `find_pairs`, or `find_pairs_unsorted` where `sorted` is false.
fn find<const D: usize>(
    bp: &mut Broadphase<D>,
    sorted: bool,
    boxes: &[broadphase::Aabb<D>],
    out: &mut Pairs,
) -> Result<(), broadphase::Error> {
    if sorted {
        bp.find_pairs(boxes, out)
    } else {
        bp.find_pairs_unsorted(boxes, out)
    }
}

// ---------------------------------------------------------------------------------------
// Correctness check of every method and peer against brute force.

fn check<const D: usize>(opts: &Opts, pools: &[(usize, rayon::ThreadPool)]) -> bool {
    let n = opts.check_n;
    let mut all_ok = true;
    for scene in &opts.scenes {
        let boxes = broadphase::internals::by_name::<D>(scene, n, SEED).unwrap();
        let reference = brute_force_pairs(&boxes, &Config::default()).expect("brute force");
        println!("check {D}d {scene} n={n} ({} boxes): brute force {} pairs", boxes.len(), reference.len());
        for who in whos::<D>(opts) {
            match who {
                Who::Ours(name, method, sorted) => {
                    for (t, pool) in pools {
                        let mut bp = Broadphase::<D>::new(Config::default().with_method(method)).unwrap();
                        let mut out = Vec::new();
                        pool.install(|| find(&mut bp, sorted, &boxes, &mut out)).expect("broadphase");
                        out.sort_unstable();
                        let ok = out == reference; // sorted here, unique
                        println!(
                            "    {name}/t{t}: {} pairs: {}",
                            out.len(),
                            if ok { "ok" } else { "MISMATCH" }
                        );
                        all_ok &= ok;
                    }
                }
                Who::Peer(peer) => {
                    let (t, pool) = pools.last().unwrap();
                    let out = PeerRun::new(peer, &boxes).pairs(pool);
                    let what =
                        if peer.parallel() { format!("{}/t{t}", peer.name()) } else { peer.name().into() };
                    all_ok &= compare(&what, out, &reference, &boxes);
                }
            }
        }
    }
    all_ok
}

// ---------------------------------------------------------------------------------------
// Measurement.

/// Runs `routine(iters)` (returning the time of `iters` calls) as criterion function `name`
/// and returns criterion's samples, each the mean time of a call over the sample's calls,
/// in seconds (empty where criterion's filter left the function out). Criterion calls the
/// routine for its warm-up first and then once a sample, so the samples are the last calls.
fn measure(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    mut routine: impl FnMut(u64) -> Duration,
) -> Vec<f64> {
    let mut calls: Vec<f64> = Vec::new();
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let t = routine(iters);
            calls.push(t.as_secs_f64() / iters.max(1) as f64);
            t
        })
    });
    calls.split_off(calls.len().saturating_sub(SAMPLES))
}

/// The median of `v` (`NaN` where empty).
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    }
}

/// What a method or peer keeps from call to call at one scene and size: a reused
/// `Broadphase` and output (and whether it sorts), or the peer's converted input.
enum State<const D: usize> {
    Ours(Box<Broadphase<D>>, Pairs, bool),
    Peer(Box<PeerRun<D>>),
}

/// One method or peer set up at one scene and size.
struct Slot<const D: usize> {
    name: &'static str,
    state: State<D>,
    pairs: usize,
    /// The method that ran (`Auto`'s choice), empty for a peer.
    ran: &'static str,
    /// The pools it runs in, by index into the pools: all of them, or the first for a
    /// single-threaded peer.
    pools: usize,
}

impl<const D: usize> Slot<D> {
    /// Sets `who` up on `boxes` and runs it once on `pool`; its pairs must number `want`.
    fn new(
        who: Who,
        boxes: &[broadphase::Aabb<D>],
        pool: &rayon::ThreadPool,
        want: usize,
        group: &str,
        all: usize,
    ) -> Self {
        let name = who.name();
        let (state, pairs, ran, pools) = match who {
            Who::Ours(_, method, sorted) => {
                let mut bp = Broadphase::<D>::new(Config::default().with_method(method)).unwrap();
                let mut out: Pairs = Vec::new();
                pool.install(|| find(&mut bp, sorted, boxes, &mut out)).expect("broadphase");
                let (pairs, ran) = (out.len(), bp.stats().method.name());
                (State::Ours(Box::new(bp), out, sorted), pairs, ran, all)
            }
            Who::Peer(peer) => {
                let mut run = PeerRun::new(peer, boxes);
                let (got, _) = normalise(run.pairs(pool));
                (State::Peer(Box::new(run)), got.len(), "", if peer.parallel() { all } else { 1 })
            }
        };
        assert_eq!(pairs, want, "{group}: {name} found another number of pairs than auto");
        Slot { name, state, pairs, ran, pools }
    }

    /// The time of `iters` calls on `pool`.
    fn time(&mut self, iters: u64, boxes: &[broadphase::Aabb<D>], pool: &rayon::ThreadPool) -> Duration {
        match &mut self.state {
            State::Ours(bp, out, sorted) => {
                let start = std::time::Instant::now();
                for _ in 0..iters {
                    pool.install(|| find(bp, *sorted, black_box(boxes), out)).unwrap();
                    black_box(out.len());
                }
                start.elapsed()
            }
            State::Peer(run) => run.time(iters, pool),
        }
    }
}

/// Times every selected method and peer in `D` dimensions, appending a row per function.
///
/// At each scene and size every function (a method or peer at a thread count) is timed in
/// up to `opts.passes` passes, a pass timing each in turn for its share of the warm-up
/// and measurement time, in the reverse order of the pass before; a function's time is the
/// median of all its samples (the module's header says why). A function takes another
/// pass while ten calls a pass, over all its passes, fit in [`SLOW_SHARE`] times
/// `opts.measure`.
fn bench_dim<const D: usize>(
    c: &mut Criterion,
    opts: &Opts,
    pools: &[(usize, rayon::ThreadPool)],
    rows: &mut Vec<Row>,
) {
    let (_, all_pool) = pools.last().unwrap();
    let passes = opts.passes.max(1);
    let per_pass = opts.measure.div_f64(passes as f64);
    for scene in &opts.scenes {
        // A method or peer over the budget at a smaller size: its name, that size and time.
        let mut slow: HashMap<&'static str, (usize, f64)> = HashMap::new();
        for &n in &opts.sizes {
            let boxes = broadphase::internals::by_name::<D>(scene, n, SEED).unwrap();
            let group = format!("scaling/{D}d/{scene}/{n}");
            let mut ours = Vec::new();
            let mut bp = Broadphase::<D>::new(Config::default()).unwrap();
            all_pool.install(|| bp.find_pairs(&boxes, &mut ours)).expect("broadphase");
            println!("{group}: {} boxes, {} pairs", boxes.len(), ours.len());
            let want = ours.len();
            drop(ours);

            let mut slots: Vec<Slot<D>> = Vec::new();
            for who in whos::<D>(opts) {
                let name = who.name();
                if let Who::Ours(_, method, _) = who {
                    let max_n = methods::method_max_n(method.name());
                    if n > max_n {
                        println!("skip {group} {name}: timed up to n = {max_n} only");
                        continue;
                    }
                }
                if let Some((at, secs)) = slow.get(name) {
                    let ms = report::sig(secs * 1e3, 3);
                    println!("skip {group} {name}: took {ms} ms a call at n = {at}, over BP_BUDGET");
                    continue;
                }
                slots.push(Slot::new(who, &boxes, all_pool, want, &group, pools.len()));
            }
            // Every function, (slot, pool), the slots of one thread count side by side.
            let mut funcs: Vec<(usize, usize)> = Vec::new();
            for p in 0..pools.len() {
                funcs.extend((0..slots.len()).filter(|&s| p < slots[s].pools).map(|s| (s, p)));
            }
            let mut samples: Vec<Vec<f64>> = vec![Vec::new(); funcs.len()];
            let mut more = vec![true; funcs.len()];
            for pass in 0..passes {
                let name = if pass == 0 { group.clone() } else { format!("{group}/pass{}", pass + 1) };
                let mut g = c.benchmark_group(name);
                g.throughput(Throughput::Elements(boxes.len() as u64))
                    .sample_size(SAMPLES)
                    .sampling_mode(SamplingMode::Flat)
                    .warm_up_time(opts.warm_up.div_f64(passes as f64))
                    .measurement_time(per_pass);
                let order: Vec<usize> =
                    if pass % 2 == 0 { (0..funcs.len()).collect() } else { (0..funcs.len()).rev().collect() };
                for f in order {
                    if !more[f] {
                        continue;
                    }
                    let (s, p) = funcs[f];
                    let (t, pool) = &pools[p];
                    let slot = &mut slots[s];
                    let t = if slot.pools == 1 { 1 } else { *t };
                    let got = measure(&mut g, &format!("{}/t{t}", slot.name), |iters| {
                        slot.time(iters, &boxes, pool)
                    });
                    samples[f].extend(got);
                    // Another pass while ten calls a pass, over all its passes, fit in
                    // `SLOW_SHARE` times the measurement time.
                    let call = median(&mut samples[f]);
                    more[f] = call.is_finite()
                        && ((pass + 2) * SAMPLES) as f64 * call <= SLOW_SHARE * opts.measure.as_secs_f64();
                }
                g.finish();
            }
            for (f, &(s, p)) in funcs.iter().enumerate() {
                let median_s = median(&mut samples[f]);
                if !median_s.is_finite() {
                    continue;
                }
                let slot = &slots[s];
                rows.push(Row {
                    machine: opts.machine.clone(),
                    cores: opts.cores,
                    dims: D,
                    scene: scene.clone(),
                    n,
                    who: slot.name.to_string(),
                    threads: if slot.pools == 1 { 1 } else { pools[p].0 },
                    median_s,
                    boxes_per_s: boxes.len() as f64 / median_s,
                    speedup: None,
                    pairs: slot.pairs as u64,
                    commit: opts.commit.clone(),
                    ran: slot.ran.to_string(),
                });
                // The time at the fewest threads stands for the method at this size.
                if p == 0 && median_s > opts.budget {
                    slow.insert(slot.name, (n, median_s));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------

/// The repository root: cargo's `CARGO_MANIFEST_DIR` where cargo runs the bench, else the
/// current directory.
fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."))
}

/// Whether this process measures for real: `cargo bench` passes `--bench`; criterion's test
/// (`--test`), list and profiling modes time nothing worth keeping.
fn keeps_results() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench")
        && !args.iter().any(|a| a == "--test" || a == "--list" || a.starts_with("--profile-time"))
}

/// Redraws every machine's plots and rewrites the generated parts of the documents.
fn redraw(root: &Path) {
    let dir = root.join("docs/bench");
    let machines = csv::read_all(&dir);
    let mut sections = Vec::new();
    for (machine, rows) in &machines {
        let plots = plot::draw_machine(&dir, machine, rows);
        println!("drew {} plots of {machine} under {}", plots.len(), dir.display());
        sections.push(report::machine_section(machine, rows, &plots));
    }
    if sections.is_empty() {
        sections.push(
            "No scaling run is recorded yet: `cargo bench --bench scaling` fills `docs/bench/`.".into(),
        );
    }
    report::rewrite(&root.join("docs/BENCHMARKS.md"), &sections.join("\n"));
    report::rewrite(&root.join("README.md"), &report::readme_plot(&machines));
}

fn main() {
    let opts = Opts::from_env();
    let root = root();
    if opts.redraw {
        redraw(&root);
        return;
    }
    println!(
        "scaling bench on {} ({} cores): sizes {:?}, dims {:?}, scenes {:?}, threads {:?}, methods {:?}, peers {:?}",
        opts.machine,
        opts.cores,
        opts.sizes,
        opts.dims,
        opts.scenes,
        opts.threads,
        opts.methods,
        opts.peers.iter().map(|p| p.name()).collect::<Vec<_>>()
    );
    let pools: Vec<(usize, rayon::ThreadPool)> = opts.threads.iter().map(|&t| (t, pool(t))).collect();
    if opts.check_n > 0 {
        let mut ok = true;
        for &d in &opts.dims {
            ok &= match d {
                1 => check::<1>(&opts, &pools),
                2 => check::<2>(&opts, &pools),
                _ => check::<3>(&opts, &pools),
            };
        }
        assert!(ok, "correctness check failed: see MISMATCH lines above");
        println!("correctness check passed");
    }

    // The table and the CSV take the median of the samples (`measure`); criterion's own
    // bootstrap of each function only needs to be cheap.
    let mut c = Criterion::default().nresamples(1000).configure_from_args();
    let mut rows = Vec::new();
    for &d in &opts.dims {
        match d {
            1 => bench_dim::<1>(&mut c, &opts, &pools, &mut rows),
            2 => bench_dim::<2>(&mut c, &opts, &pools, &mut rows),
            _ => bench_dim::<3>(&mut c, &opts, &pools, &mut rows),
        }
    }
    c.final_summary();
    if !keeps_results() || rows.is_empty() {
        println!("no results written (criterion's test or list mode, or nothing ran)");
        return;
    }
    let path = root.join("docs/bench").join(format!("{}.csv", opts.machine));
    let total = csv::merge_into(&path, rows);
    println!("wrote {} ({total} rows)", path.display());
    redraw(&root);
}
