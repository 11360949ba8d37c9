//! The persistent [`World`] against one one-shot rebuild (a reused [`Broadphase`] over
//! every live box) and rapier's broad phase, regime by regime: what users do to a world
//! frame after frame, on the same level, in the same run.
//!
//! Run: `cargo bench --bench regimes` (200k static + 20k dynamic, 3D, 2 threads);
//! `cargo bench --bench regimes -- fast` runs the regimes whose name has `fast`.
//! Environment variables:
//!
//! | variable          | default   | meaning                                                    |
//! |-------------------|-----------|------------------------------------------------------------|
//! | `BP_REG_STATIC`   | `200000`  | static boxes: the level                                    |
//! | `BP_REG_DYNAMIC`  | `20000`   | dynamic boxes, on the level                                |
//! | `BP_REG_SCENE`    | `terrain` | the level: `terrain` (a height field) or `tiles`           |
//! | `BP_REG_FRAMES`   | `40`      | frames of each side in a regime's table (one whole `fall`) |
//! | `BP_REG_BUDGET`   | `20`      | seconds a regime's table may take; past it (after 3 frames) it stops early |
//! | `BP_REG_PARK`     | `1e9`     | where `pool` parks boxes, on every axis                    |
//! | `BP_DIMS`         | `3`       | dimensions (`2,3` for both)                                |
//! | `BP_THREADS`      | `2`       | threads of the rayon pool every side runs in               |
//! | `BP_RAPIER`       | `1`       | `0`: leave rapier out                                      |
//! | `BP_RAPIER_EXACT` | `0`       | `1`: rapier's change-detection skin 1e-30 (exact pairs) instead of its default 0.04 |
//! | `BP_CHECK`        | `0`       | `1`: only run the correctness check                        |
//! | `BP_CHECK_N`      | `3000`    | static boxes of the check's scene (dynamic: a tenth)       |
//! | `BP_CHECK_FRAMES` | `45`      | frames of each regime in the check                         |
//! | `BP_MEASURE`      | `1`       | criterion measurement time, seconds                        |
//! | `BP_WARMUP`       | `0.3`     | criterion warm-up time, seconds                            |
//!
//! The scene is `benches/world.rs`'s (seed 1): the level's static boxes, and dynamic boxes
//! of sides 0.5-1 each sitting on a random static box. The regimes (`regimes/drive.rs`):
//! - `slow_10`: 10% of the dynamic boxes step 0.02-0.05 (within 0.5 of their start):
//!   `world.rs`'s `move_10` without its 0.1% re-inserts (see `Frame` for why), for
//!   reference;
//! - `fast_10`, `fast_100`: 10% / 100% step 0.2-0.5, half a box (within 1 of their start),
//!   so a mover leaves its fat box every frame or two;
//! - `walk_10`: 10% step 0.5-1, a box, along the ground (within 2 of their start);
//! - `fall`: every dynamic box falls from 2 above its place, `g t² / 2` at 60 frames a
//!   second, clamped at its place (39 frames); then an untimed frame lifts them again;
//! - `pool`: 30% of the dynamic boxes are parked at 1e9 (`BP_REG_PARK`; points there,
//!   spread over 64 `f32` steps a side); each frame 1% of the dynamic boxes are parked
//!   and as many, the longest parked, are fired back to a random spot on the level;
//! - `doors`: 10 static boxes moved by their own size (closed again the next frame), and
//!   1% of the dynamic boxes step as in `slow_10`;
//! - `kinds`: 1% of the static boxes turned dynamic, as many dynamic boxes turned static;
//! - `build`: `World::new` + `extend` (static then dynamic) + the first `update()`.
//!
//! The frames are drawn untimed and seeded; each side follows them from the same start.
//! Timed, a frame is:
//! - world (`world/t{n}`): `World::set_aabbs` (dynamic and static moves in one batch),
//!   `set_kind`, and `update()` (events included);
//! - one-shot (`one_shot/t{n}`): one `Broadphase::find_pairs` over every live box after
//!   the frame's changes (the box buffer is brought up to date untimed). It finds the
//!   static-static pairs too, as a one-shot rebuild would;
//! - rapier (`rapier`): as in `world.rs` (see `world/peer.rs`), for the regimes that only
//!   move and re-insert dynamic boxes (not `doors` and `kinds`: its peer keeps no handle
//!   to a static collider and changes no kind).
//!
//! Everything runs on a worker of a rayon pool of `BP_THREADS` threads. Each regime has a
//! criterion group, `regimes/{regime}/{2d|3d}`, each side on its own world and its own
//! copy of the frames; after it, every side plays the same `BP_REG_FRAMES` frames in lock
//! step on fresh worlds, and the bench prints the medians (and means) per frame, the
//! ratios of the medians, and the world's `WorldStats` averaged over those frames; at the
//! end, a table of every regime and one of the world's stage times (upkeep, walks,
//! events, apply, and the serial time with its share of the update). The median leaves
//! out the world's occasional tree rebuilds; the mean counts them.
//!
//! Every run first checks, on a small scene, that after the build and after each of
//! `BP_CHECK_FRAMES` frames of every regime the world's `pairs()`, the one-shot's
//! (static-static left out) and rapier's (skin 1e-30, where it plays the regime) are the
//! brute-force pairs with a dynamic member; it panics if not.

use std::hint::black_box;
use std::time::{Duration, Instant};

use broadphase::{Broadphase, Config};
use criterion::{BenchmarkGroup, Criterion, SamplingMode};

#[path = "common/env.rs"]
mod env;
use env::{env_f64, env_num, env_nums, env_secs, env_str};
#[path = "world/peer.rs"]
#[allow(dead_code)]
mod peer;
use peer::{peer_frame, Peer};
#[path = "regimes/drive.rs"]
mod drive;
use drive::{Driver, Regime};
pub use drive::{Frame, Scene};
#[path = "regimes/sides.rs"]
mod sides;
use sides::{OneShot, WorldSide};
#[path = "regimes/table.rs"]
mod table;
use table::{table, Row};

/// `world/peer.rs` measures rapier's memory with a counting allocator; this bench reports
/// none.
pub fn live_bytes() -> isize {
    0
}

struct Opts {
    statics: usize,
    dynamics: usize,
    scene: String,
    frames: usize,
    budget: Duration,
    park: f32,
    dims: Vec<usize>,
    threads: usize,
    rapier: bool,
    rapier_exact: bool,
    check_only: bool,
    check_n: usize,
    check_frames: usize,
    measure: Duration,
    warm_up: Duration,
}

impl Opts {
    fn from_env() -> Self {
        let scene = env_str("BP_REG_SCENE", "terrain");
        assert!(scene == "terrain" || scene == "tiles", "BP_REG_SCENE: terrain or tiles, not {scene:?}");
        let dims = env_nums("BP_DIMS", "3");
        assert!(dims.iter().all(|d| (2..=3).contains(d)), "BP_DIMS: only 2 and 3");
        let threads = env_num("BP_THREADS", 2);
        assert!(threads >= 1, "BP_THREADS: at least 1");
        Opts {
            statics: env_num("BP_REG_STATIC", 200_000),
            dynamics: env_num("BP_REG_DYNAMIC", 20_000),
            scene,
            frames: env_num("BP_REG_FRAMES", 40).max(1),
            budget: env_secs("BP_REG_BUDGET", 20.0),
            park: env_f64("BP_REG_PARK", 1e9) as f32,
            dims,
            threads,
            rapier: env_num("BP_RAPIER", 1) != 0,
            rapier_exact: env_num("BP_RAPIER_EXACT", 0) != 0,
            check_only: env_num("BP_CHECK", 0) != 0,
            check_n: env_num("BP_CHECK_N", 3000),
            check_frames: env_num("BP_CHECK_FRAMES", 45),
            measure: env_secs("BP_MEASURE", 1.0),
            warm_up: env_secs("BP_WARMUP", 0.3),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Benchmarks.

type Group<'a> = BenchmarkGroup<'a, criterion::measurement::WallTime>;

fn configure(g: &mut Group<'_>, opts: &Opts) {
    g.sample_size(10)
        .warm_up_time(opts.warm_up)
        .measurement_time(opts.measure)
        .sampling_mode(SamplingMode::Flat);
}

/// Rapier built from `scene` and settled, when it plays `regime`.
fn rapier_for<const D: usize, P: Peer<D>>(opts: &Opts, regime: Regime, scene: &Scene<D>) -> Option<P> {
    (opts.rapier && regime.rapier()).then(|| {
        let mut p = P::build(P::parts(scene, opts.rapier_exact, false));
        p.settle();
        p
    })
}

/// The next timed frame into `frame`; untimed ones before it go through `play`.
fn next_timed<const D: usize>(d: &mut Driver<D>, frame: &mut Frame<D>, mut play: impl FnMut(&Frame<D>)) {
    loop {
        d.next(frame);
        if frame.timed {
            return;
        }
        play(frame);
    }
}

fn bench_regime<const D: usize, P: Peer<D>>(
    c: &mut Criterion,
    opts: &Opts,
    scene: &Scene<D>,
    regime: Regime,
) -> Option<Row> {
    let t = opts.threads;
    let base = Driver::new(regime, scene, opts.park);
    let start = base.scene();
    let s = base.statics();
    let mut frame = Frame::default();
    let mut g = c.benchmark_group(format!("regimes/{}/{D}d", regime.name()));
    configure(&mut g, opts);
    let mut ran = false;
    {
        let mut side = None;
        g.bench_function(format!("world/t{t}"), |b| {
            ran = true;
            let (w, d) = side.get_or_insert_with(|| (WorldSide::build(&start, &base.boxes()), base.clone()));
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    next_timed(d, &mut frame, |f| {
                        w.prepare(f, s);
                        w.apply();
                    });
                    w.prepare(&frame, s);
                    let t0 = Instant::now();
                    black_box(w.apply());
                    total += t0.elapsed();
                }
                total
            })
        });
    }
    {
        let mut side = None;
        g.bench_function(format!("one_shot/t{t}"), |b| {
            ran = true;
            let (o, d) = side.get_or_insert_with(|| (OneShot::new(&base), base.clone()));
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    next_timed(d, &mut frame, |f| o.follow(f, s));
                    o.follow(&frame, s);
                    let t0 = Instant::now();
                    black_box(o.run());
                    total += t0.elapsed();
                }
                total
            })
        });
    }
    if opts.rapier && regime.rapier() {
        let mut side = None;
        g.bench_function("rapier", |b| {
            ran = true;
            let (p, d) = side.get_or_insert_with(|| {
                (rapier_for::<D, P>(opts, regime, &start).expect("rapier"), base.clone())
            });
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    next_timed(d, &mut frame, |f| {
                        peer_frame(p, f, &start);
                    });
                    total += peer_frame(p, &frame, &start);
                }
                total
            })
        });
    }
    g.finish();
    if !ran {
        return None;
    }

    // The table: every side on the same frames, in lock step, on fresh worlds.
    let mut d = base.clone();
    let mut w = WorldSide::build(&start, &base.boxes());
    let mut o = OneShot::new(&base);
    let mut r = rapier_for::<D, P>(opts, regime, &start);
    let mut row = Row::new(regime.name());
    let began = Instant::now();
    while row.frames() < opts.frames && (row.frames() < 3 || began.elapsed() < opts.budget) {
        next_timed(&mut d, &mut frame, |f| {
            w.prepare(f, s);
            w.apply();
            o.follow(f, s);
            if let Some(p) = r.as_mut() {
                peer_frame(p, f, &start);
            }
        });
        w.prepare(&frame, s);
        let t0 = Instant::now();
        black_box(w.apply());
        row.world.push(t0.elapsed());
        row.add_stats(&w.world);
        o.follow(&frame, s);
        let t0 = Instant::now();
        black_box(o.run());
        row.one_shot.push(t0.elapsed());
        if let Some(p) = r.as_mut() {
            row.rapier.push(peer_frame(p, &frame, &start));
        }
    }
    println!("{}", row.line(&format!("{D}d"), scene.objects()));
    Some(row)
}

/// `build`: the world's build against one `find_pairs` over the same boxes, and rapier's.
fn bench_build<const D: usize, P: Peer<D>>(c: &mut Criterion, opts: &Opts, scene: &Scene<D>) -> Option<Row> {
    let t = opts.threads;
    let base = Driver::new(Regime::Slow10, scene, opts.park);
    let boxes = base.boxes();
    let mut g = c.benchmark_group(format!("regimes/build/{D}d"));
    configure(&mut g, opts);
    let mut ran = false;
    let timed_world = || {
        let t0 = Instant::now();
        let w = WorldSide::build(scene, black_box(&boxes));
        let dt = t0.elapsed();
        (w, dt)
    };
    g.bench_function(format!("world/t{t}"), |b| {
        ran = true;
        b.iter_custom(|iters| (0..iters).map(|_| timed_world().1).sum())
    });
    let mut finder = Broadphase::<D>::new(Config::default()).expect("finder");
    let mut found = Vec::new();
    g.bench_function(format!("one_shot/t{t}"), |b| {
        ran = true;
        b.iter(|| finder.find_pairs(black_box(&boxes), &mut found).expect("find_pairs"))
    });
    let timed_rapier = || {
        let parts = P::parts(scene, opts.rapier_exact, false);
        let t0 = Instant::now();
        let p = P::build(parts);
        let dt = t0.elapsed();
        drop(black_box(p));
        dt
    };
    if opts.rapier {
        g.bench_function("rapier", |b| {
            ran = true;
            b.iter_custom(|iters| (0..iters).map(|_| timed_rapier()).sum())
        });
    }
    g.finish();
    if !ran {
        return None;
    }
    let mut row = Row::new("build");
    let began = Instant::now();
    let reps = opts.frames.min(5);
    while row.frames() < reps && (row.frames() < 3 || began.elapsed() < opts.budget) {
        let (w, dt) = timed_world();
        row.world.push(dt);
        row.add_stats(&w.world);
        drop(w);
        let t0 = Instant::now();
        finder.find_pairs(&boxes, &mut found).expect("find_pairs");
        row.one_shot.push(t0.elapsed());
        if opts.rapier {
            row.rapier.push(timed_rapier());
        }
    }
    println!("{}", row.line(&format!("{D}d"), scene.objects()));
    Some(row)
}

fn bench_dim<const D: usize, P: Peer<D>>(c: &mut Criterion, opts: &Opts) {
    let scene = Scene::<D>::new(&opts.scene, opts.statics, opts.dynamics);
    let header = format!(
        "regimes {D}d {}: {} static + {} dynamic = {} objects, {} threads, rapier skin {}; medians per frame",
        opts.scene,
        scene.statics.len(),
        scene.centres.len(),
        scene.objects(),
        opts.threads,
        if opts.rapier_exact { "1e-30 (exact)" } else { "default (0.04)" }
    );
    println!("{header}");
    let mut rows = Vec::new();
    rows.extend(bench_build::<D, P>(c, opts, &scene));
    for regime in Regime::ALL {
        rows.extend(bench_regime::<D, P>(c, opts, &scene, regime));
    }
    table(&rows, &header);
}

fn main() {
    let opts = Opts::from_env();
    println!(
        "regimes bench: {} static + {} dynamic ({}), dims {:?}, {} threads, check n = {}",
        opts.statics, opts.dynamics, opts.scene, opts.dims, opts.threads, opts.check_n
    );
    // Everything runs on a worker of the pool, so that every side's calls run in it
    // without the cost of entering it.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .stack_size(64 << 20)
        .build()
        .expect("thread pool");
    pool.install(|| run(&opts));
}

fn check_dim<const D: usize, P: Peer<D>>(opts: &Opts) -> bool {
    let scene = Scene::<D>::new(&opts.scene, opts.check_n, (opts.check_n / 10).max(10));
    Regime::ALL.into_iter().all(|r| sides::check::<D, P>(r, &scene, opts.check_frames, opts.park))
}

fn run(opts: &Opts) {
    let mut ok = true;
    for &d in &opts.dims {
        ok &= if d == 2 { check_dim::<2, peer::Rapier2>(opts) } else { check_dim::<3, peer::Rapier3>(opts) };
    }
    assert!(ok, "correctness check failed: see the MISMATCH line above");
    println!("correctness check passed");
    if opts.check_only {
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    for &d in &opts.dims {
        if d == 2 {
            bench_dim::<2, peer::Rapier2>(&mut c, opts);
        } else {
            bench_dim::<3, peer::Rapier3>(&mut c, opts);
        }
    }
    c.final_summary();
}
