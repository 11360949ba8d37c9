//! The persistent [`World`] against rapier's broad phase (`BroadPhaseBvh`, rapier3d in 3D,
//! rapier2d in 2D) on the same frames in the same run: a level of static boxes plus
//! dynamic boxes, frames where a share of the dynamic boxes move a little and 0.1% are
//! removed and re-inserted.
//!
//! Run: `cargo bench --bench world` (1M static + 100k dynamic, 2D and 3D, 2 threads).
//! Environment variables:
//!
//! | variable           | default         | meaning                                              |
//! |--------------------|-----------------|------------------------------------------------------|
//! | `BP_WORLD_STATIC`  | `1000000`       | static boxes: the level                              |
//! | `BP_WORLD_DYNAMIC` | `100000`        | dynamic boxes, on the level                          |
//! | `BP_WORLD_SCENE`   | `terrain`       | the level: `terrain` (a height field) or `tiles`     |
//! | `BP_IDLE_SIZES`    | `10000,100000`  | smaller worlds (all objects) for `world/idle`, below the full one |
//! | `BP_DIMS`          | `2,3`           | dimensions                                           |
//! | `BP_THREADS`       | `2`             | threads of the rayon pool both sides run in          |
//! | `BP_RAPIER_EXACT`  | `0`             | `1`: rapier's change-detection skin 1e-30 (exact pairs, as in the check) instead of its default 0.04 |
//! | `BP_CHECK`         | `0`             | `1`: only run the correctness check                  |
//! | `BP_CHECK_N`       | `3000`          | static boxes of the check's scene (dynamic: a tenth) |
//! | `BP_MEASURE`       | `3` (`0.5` when `BP_WORLD_STATIC` < 1M) | criterion measurement time, seconds |
//! | `BP_WARMUP`        | `1` (`0.2` likewise) | criterion warm-up time, seconds                 |
//!
//! The scene (seed 1): the static boxes are `internals::scene::terrain` (the bounding boxes
//! of a triangulated height field, about 1 x 1 x slope; in 2D a polyline's segments) or
//! `tiles`; each dynamic box has sides 0.5-1 and sits on a random static box, its bottom
//! 0-0.3 below that box's top, jittered by up to 0.5 along the ground. Every box is kept as
//! a centre and half sides in `f32`, and both sides get the same bits: ours
//! `[c - h, c + h]`, rapier a cuboid of half sides `h` at `c` (identity rotation, whose
//! AABB is exactly that).
//!
//! A frame at fraction `f`: the next `f * n` dynamic boxes of a rotating window each move
//! 0.02-0.05 in a random direction (a walk kept within 0.5 of its start, axis by axis),
//! then the next 0.1% of another rotating window are removed and re-inserted where they
//! are. The frames are drawn untimed, each side from its own walk of the same seed: the
//! same frames in `move_1`, the same kind of frames after it (criterion runs each side a
//! different number of frames). The timer covers the calls and the update:
//! - ours: `World::set_aabbs` (the moves), `remove` + `insert` (the re-inserts), `update()`
//!   (events included), in a rayon pool of `BP_THREADS` threads;
//! - rapier: `Collider::set_translation` through `ColliderSet::get_mut` (the moves),
//!   `ColliderSet::remove` + `RigidBody::set_translation` + `insert_with_parent` (the
//!   re-inserts), `take_removed`, and `BroadPhaseBvh::update` with the moved and new
//!   colliders as modified (events included), with rapier's `parallel` feature, in the same
//!   pool. Prediction distance 0, contact skin 0; static boxes are parentless colliders
//!   (fixed), dynamic boxes each have a dynamic body. See `world/peer.rs` for how its
//!   change flags are cleared between frames (untimed), as a physics step would.
//!
//! Groups (`world/{group}/{2d|3d}`):
//! - `build`: `ours/extend` (`World::new` + `extend`, static then dynamic),
//!   `ours/extend+update` (and the first update: every pair), `find_pairs` (our one-shot
//!   over the same boxes, buffers reused), `rapier` (the sets filled and the first
//!   `BroadPhaseBvh::update`; colliders and bodies are made untimed);
//! - `idle`: an update with no change, `ours/{n}` and `rapier/{n}` for `BP_IDLE_SIZES` and
//!   the full world;
//! - `move_1`, `move_10`, `move_100`: frames at 1%, 10%, 100% moving, `ours`, `rapier`, and
//!   (10% and 100%) `find_pairs` over all boxes as the reference. Throughput: movers.
//!
//! After `build` it prints the pair counts and memory: our `WorldStats::object_bytes`
//! per object and `pair_bytes` per pair, and what a counting allocator saw held by each
//! world; after each moving group, `object_bytes` again (with the neighbour lists and
//! buffers the frames filled). Every run first checks, on a small scene (`BP_CHECK_N`), that our `pairs()`, the
//! brute force (static-static pairs left out) and rapier's pair set (followed through its
//! events, rapier with skin 1e-30) agree after the build and after frames at every fraction,
//! and that rapier with its default skin finds a superset of ours; it panics if not.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use broadphase::internals::scene::{self, Rng};
use broadphase::{brute_force_pairs, Aabb, Broadphase, Config, Handle, Kind, World};
use criterion::{Criterion, SamplingMode, Throughput};

#[path = "common/env.rs"]
mod env;
use env::{env_num, env_nums, env_secs, env_str};
#[path = "world/peer.rs"]
mod peer;
use peer::{peer_frame, Peer};

/// Seed of every scene.
const SEED: u64 = 1;
/// How far a dynamic box walks from where it started, axis by axis.
const WALK: f32 = 0.5;

// ---------------------------------------------------------------------------------------
// A counting allocator: the bytes each world holds, for the memory report.

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is passed on to `System` unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed);
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Heap bytes live now.
pub fn live_bytes() -> isize {
    LIVE.load(Ordering::Relaxed)
}

// ---------------------------------------------------------------------------------------
// Options.

struct Opts {
    statics: usize,
    dynamics: usize,
    scene: String,
    idle_sizes: Vec<usize>,
    dims: Vec<usize>,
    threads: usize,
    rapier_exact: bool,
    check_only: bool,
    check_n: usize,
    measure: Duration,
    warm_up: Duration,
}

impl Opts {
    fn from_env() -> Self {
        let statics = env_num("BP_WORLD_STATIC", 1_000_000);
        let small = statics < 1_000_000;
        let scene = env_str("BP_WORLD_SCENE", "terrain");
        assert!(scene == "terrain" || scene == "tiles", "BP_WORLD_SCENE: terrain or tiles, not {scene:?}");
        let dims = env_nums("BP_DIMS", "2,3");
        assert!(dims.iter().all(|d| (2..=3).contains(d)), "BP_DIMS: only 2 and 3");
        let threads = env_num("BP_THREADS", 2);
        assert!(threads >= 1, "BP_THREADS: at least 1");
        Opts {
            statics,
            dynamics: env_num("BP_WORLD_DYNAMIC", 100_000),
            scene,
            idle_sizes: env_nums("BP_IDLE_SIZES", "10000,100000"),
            dims,
            threads,
            rapier_exact: env_num("BP_RAPIER_EXACT", 0) != 0,
            check_only: env_num("BP_CHECK", 0) != 0,
            check_n: env_num("BP_CHECK_N", 3000),
            measure: env_secs("BP_MEASURE", if small { 0.5 } else { 3.0 }),
            warm_up: env_secs("BP_WARMUP", if small { 0.2 } else { 1.0 }),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The scene and the frames, shared by both sides.

/// A box as both sides see it: `[c - h, c + h]`.
pub fn boxed<const D: usize>(c: [f32; D], h: [f32; D]) -> Aabb<D> {
    Aabb::new(std::array::from_fn(|k| c[k] - h[k]), std::array::from_fn(|k| c[k] + h[k]))
}

/// Static boxes then dynamic boxes, each a centre and half sides; an object's id is its
/// position here (statics `0..s`, dynamic box `i` is `s + i`).
pub struct Scene<const D: usize> {
    pub statics: Vec<([f32; D], [f32; D])>,
    pub centres: Vec<[f32; D]>,
    pub halves: Vec<[f32; D]>,
}

impl<const D: usize> Scene<D> {
    fn new(kind: &str, n_static: usize, n_dynamic: usize) -> Self {
        let raw = if kind == "tiles" {
            scene::tiles::<D>(n_static, SEED)
        } else {
            scene::terrain::<D>(n_static, SEED)
        };
        let statics: Vec<_> = raw
            .iter()
            .map(|b| {
                (
                    std::array::from_fn(|k| (b.min[k] + b.max[k]) * 0.5),
                    std::array::from_fn(|k| (b.max[k] - b.min[k]) * 0.5),
                )
            })
            .collect();
        let mut rng = Rng::new(SEED ^ 0xD1CE);
        let (mut centres, mut halves) = (Vec::with_capacity(n_dynamic), Vec::with_capacity(n_dynamic));
        for _ in 0..n_dynamic {
            let (sc, sh) = statics[rng.below(statics.len())];
            let s = boxed(sc, sh);
            let h: [f32; D] = std::array::from_fn(|_| rng.range(0.25, 0.5));
            let mut c: [f32; D] = std::array::from_fn(|k| (s.min[k] + s.max[k]) * 0.5 + rng.range(-0.5, 0.5));
            c[D - 1] = s.max[D - 1] + h[D - 1] - rng.range(0.0, 0.3);
            centres.push(c);
            halves.push(h);
        }
        Scene { statics, centres, halves }
    }

    fn len(&self) -> usize {
        self.statics.len() + self.centres.len()
    }

    /// Every box, by object id, the dynamic ones at `centres`.
    fn boxes(&self, centres: &[[f32; D]]) -> Vec<Aabb<D>> {
        let st = self.statics.iter().map(|&(c, h)| boxed(c, h));
        st.chain(centres.iter().zip(&self.halves).map(|(&c, &h)| boxed(c, h))).collect()
    }
}

/// One frame's changes: dynamic boxes moved to new centres, then dynamic boxes removed and
/// re-inserted at their (new) centres.
#[derive(Default)]
pub struct Frame<const D: usize> {
    pub moves: Vec<(u32, [f32; D])>,
    pub reinserts: Vec<(u32, [f32; D])>,
}

/// The dynamic boxes' walk: rotating windows of movers and of re-inserts.
struct Mover<const D: usize> {
    centres: Vec<[f32; D]>,
    home: Vec<[f32; D]>,
    rng: Rng,
    cursor: usize,
    re_cursor: usize,
}

impl<const D: usize> Mover<D> {
    fn new(scene: &Scene<D>) -> Self {
        let n = scene.centres.len();
        Mover {
            centres: scene.centres.clone(),
            home: scene.centres.clone(),
            rng: Rng::new(SEED ^ 0xF4A3),
            cursor: 0,
            re_cursor: n / 2,
        }
    }

    /// The next frame with `moving` movers and `reinserted` re-inserts, into `out`.
    fn next(&mut self, moving: usize, reinserted: usize, out: &mut Frame<D>) {
        let n = self.centres.len();
        out.moves.clear();
        out.reinserts.clear();
        for j in 0..moving.min(n) {
            let i = (self.cursor + j) % n;
            let len = self.rng.range(0.02, 0.05);
            let d: [f32; D] = std::array::from_fn(|_| self.rng.range(-1.0, 1.0));
            let norm = d.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-3);
            let c = &mut self.centres[i];
            for k in 0..D {
                let mut step = d[k] / norm * len;
                if (c[k] + step - self.home[i][k]).abs() > WALK {
                    step = -step;
                }
                c[k] += step;
            }
            out.moves.push((i as u32, *c));
        }
        for j in 0..reinserted.min(n) {
            let i = (self.re_cursor + j) % n;
            out.reinserts.push((i as u32, self.centres[i]));
        }
        if n > 0 {
            self.cursor = (self.cursor + moving) % n;
            self.re_cursor = (self.re_cursor + reinserted) % n;
        }
    }
}

/// Movers and re-inserts of a frame at `percent`% moving.
fn frame_sizes(n_dynamic: usize, percent: usize) -> (usize, usize) {
    ((n_dynamic * percent).div_ceil(100).max(1), n_dynamic.div_ceil(1000).max(1))
}

// ---------------------------------------------------------------------------------------
// Ours.

struct Ours<const D: usize> {
    world: World<D>,
    statics: Vec<Handle>,
    dynamics: Vec<Handle>,
    /// The prepared frame.
    moves: Vec<(Handle, Aabb<D>)>,
    reinserts: Vec<(u32, Aabb<D>)>,
    /// Heap bytes the world held after its build.
    bytes: isize,
}

impl<const D: usize> Ours<D> {
    /// `World::new`, `extend` (statics, then dynamics), and the first update unless `lazy`.
    fn build(scene: &Scene<D>, boxes: &[Aabb<D>], lazy: bool) -> Self {
        let before = live_bytes();
        let mut world = World::new(Config::default()).expect("world");
        let s = scene.statics.len();
        let statics = world.extend(&boxes[..s], Kind::Static).expect("extend");
        let dynamics = world.extend(&boxes[s..], Kind::Dynamic).expect("extend");
        if !lazy {
            world.update().expect("update");
        }
        let handles = (statics.capacity() + dynamics.capacity()) * std::mem::size_of::<Handle>();
        let bytes = live_bytes() - before - handles as isize;
        Ours { world, statics, dynamics, moves: Vec::new(), reinserts: Vec::new(), bytes }
    }

    /// Untimed: the frame as our calls take it.
    fn prepare(&mut self, frame: &Frame<D>, scene: &Scene<D>) {
        self.moves.clear();
        self.moves.extend(
            frame.moves.iter().map(|&(i, c)| (self.dynamics[i as usize], boxed(c, scene.halves[i as usize]))),
        );
        self.reinserts.clear();
        self.reinserts.extend(frame.reinserts.iter().map(|&(i, c)| (i, boxed(c, scene.halves[i as usize]))));
    }

    /// Timed: the calls and the update; the number of events.
    fn apply(&mut self) -> usize {
        self.world.set_aabbs(&self.moves).expect("set_aabbs");
        for &(i, b) in &self.reinserts {
            self.world.remove(self.dynamics[i as usize]).expect("remove");
            self.dynamics[i as usize] = self.world.insert(b, Kind::Dynamic).expect("insert");
        }
        self.world.update().expect("update");
        let events = self.world.events();
        events.added.len() + events.removed.len()
    }

    /// `pairs()` as sorted object-id pairs.
    fn pairs(&self) -> Vec<[u32; 2]> {
        let ids: HashMap<Handle, u32> =
            self.statics.iter().chain(&self.dynamics).enumerate().map(|(i, &h)| (h, i as u32)).collect();
        let mut v: Vec<[u32; 2]> = self.world.pairs().iter().map(|p| [ids[&p[0]], ids[&p[1]]]).collect();
        v.iter_mut().for_each(|p| p.sort_unstable());
        v.sort_unstable();
        v
    }
}

// ---------------------------------------------------------------------------------------
// The check.

fn check<const D: usize, P: Peer<D>>(opts: &Opts) -> bool {
    let scene = Scene::<D>::new(&opts.scene, opts.check_n, (opts.check_n / 10).max(10));
    let s = scene.statics.len() as u32;
    let mut mover = Mover::new(&scene);
    let mut ours = Ours::build(&scene, &scene.boxes(&scene.centres), false);
    let mut exact = P::build(P::parts(&scene, true, true));
    let mut loose = P::build(P::parts(&scene, false, true));
    exact.settle();
    loose.settle();
    let mut ok = true;
    let mut frame = Frame::default();
    let n_dyn = scene.centres.len();
    for (step, percent) in [0, 1, 1, 1, 10, 10, 10, 100, 100, 100].into_iter().enumerate() {
        if step > 0 {
            let (m, r) = frame_sizes(n_dyn, percent);
            mover.next(m, r, &mut frame);
            ours.prepare(&frame, &scene);
            ours.apply();
            peer_frame(&mut exact, &frame, &scene);
            peer_frame(&mut loose, &frame, &scene);
        }
        let brute = brute_force_pairs(&scene.boxes(&mover.centres), &Config::default()).expect("brute force");
        let brute: Vec<[u32; 2]> = brute.into_iter().filter(|p| p[1] >= s).collect();
        let (o, e, l) = (ours.pairs(), exact.pairs(), loose.pairs());
        let superset = o.iter().all(|p| l.binary_search(p).is_ok());
        let good = o == brute && e == brute && superset;
        if !good || step == 0 || step == 9 {
            let verdict = if good { "ok" } else { "MISMATCH" };
            let (name, n, b) = (&opts.scene, scene.len(), brute.len());
            println!(
                "check {D}d {name} n={n} frame {step} ({percent}%): brute force {b}, ours {}, rapier exact {}, \
                 rapier default skin {} (superset: {superset}): {verdict}",
                o.len(),
                e.len(),
                l.len()
            );
        }
        if !good {
            for (name, got) in [("ours", &o), ("rapier exact", &e)] {
                let missing: Vec<_> =
                    brute.iter().filter(|p| got.binary_search(p).is_err()).take(3).collect();
                let extra: Vec<_> = got.iter().filter(|p| brute.binary_search(p).is_err()).take(3).collect();
                println!("    {name}: missing {missing:?}, extra {extra:?}");
            }
        }
        ok &= good;
    }
    ok
}

// ---------------------------------------------------------------------------------------
// Benchmarks.

fn bench_dim<const D: usize, P: Peer<D>>(c: &mut Criterion, opts: &Opts) {
    let t = opts.threads;
    let dim = format!("{D}d");
    let scene = Scene::<D>::new(&opts.scene, opts.statics, opts.dynamics);
    let boxes = scene.boxes(&scene.centres);
    let n = boxes.len();
    println!(
        "world {dim} {}: {} static + {} dynamic = {n} objects, {t} threads, rapier skin {}",
        opts.scene,
        scene.statics.len(),
        scene.centres.len(),
        if opts.rapier_exact { "1e-30 (exact)" } else { "default (0.04)" }
    );
    let configure = |g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>| {
        g.sample_size(10).warm_up_time(opts.warm_up).measurement_time(opts.measure);
    };
    let mut finder = Broadphase::<D>::new(Config::default()).unwrap();
    let mut found = Vec::new();

    // Build.
    {
        let mut g = c.benchmark_group(format!("world/build/{dim}"));
        configure(&mut g);
        g.sampling_mode(SamplingMode::Flat).throughput(Throughput::Elements(n as u64));
        for (name, lazy) in [("ours/extend", true), ("ours/extend+update", false)] {
            g.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let start = Instant::now();
                        let w = Ours::build(&scene, black_box(&boxes), lazy);
                        total += start.elapsed();
                        drop(black_box(w));
                    }
                    total
                })
            });
        }
        g.bench_function(format!("find_pairs/t{t}"), |b| {
            b.iter(|| finder.find_pairs(black_box(&boxes), &mut found).unwrap())
        });
        g.bench_function("rapier", |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let parts = P::parts(&scene, opts.rapier_exact, false);
                    let start = Instant::now();
                    let p = P::build(parts);
                    total += start.elapsed();
                    drop(black_box(p));
                }
                total
            })
        });
        g.finish();
    }

    // The worlds the other groups use, and the report.
    let mut ours = Ours::build(&scene, &boxes, false);
    let mut rapier = P::build(P::parts(&scene, opts.rapier_exact, false));
    rapier.settle();
    finder.find_pairs(&boxes, &mut found).unwrap();
    let st = ours.world.stats().clone();
    let (r_pairs, r_bytes, r_bp_bytes) = rapier.report();
    let (pairs, one_shot) = (st.pairs, found.len());
    let per = |bytes: isize, n: usize| bytes as f64 / n.max(1) as f64;
    eprintln!(
        "world {dim}: pairs: ours {pairs} (one-shot find_pairs, static-static included: {one_shot}), rapier \
         {r_pairs}\nworld {dim}: ours: object_bytes {:.1} per object, pair_bytes {:.1} per pair; the world \
         holds {:.1} bytes per object in all (pairs and pair finder included)\nworld {dim}: rapier: the sets \
         and the broad phase hold {:.1} bytes per object, the broad phase alone {:.1} ({:.1} MB)",
        per(st.object_bytes as isize, n),
        per(st.pair_bytes as isize, pairs),
        per(ours.bytes, n),
        per(r_bytes, n),
        per(r_bp_bytes, n),
        r_bp_bytes as f64 / 1e6
    );

    // Idle: smaller worlds first, then the full one.
    {
        let mut g = c.benchmark_group(format!("world/idle/{dim}"));
        configure(&mut g);
        for &size in opts.idle_sizes.iter().filter(|&&m| m < n) {
            let ns = (size * scene.statics.len()).div_ceil(n.max(1));
            let small = Scene::<D>::new(&opts.scene, ns, size.saturating_sub(ns));
            let mut o = Ours::build(&small, &small.boxes(&small.centres), false);
            let mut r = P::build(P::parts(&small, opts.rapier_exact, false));
            r.settle();
            let m = small.len();
            g.bench_function(format!("ours/{m}"), |b| {
                b.iter(|| black_box(o.world.update().expect("update").is_empty()))
            });
            g.bench_function(format!("rapier/{m}"), |b| b.iter(|| black_box(r.idle())));
        }
        g.bench_function(format!("ours/{n}"), |b| {
            b.iter(|| black_box(ours.world.update().expect("update").is_empty()))
        });
        g.bench_function(format!("rapier/{n}"), |b| b.iter(|| black_box(rapier.idle())));
        g.finish();
    }

    // Moving.
    let (mut m_ours, mut m_rapier) = (Mover::new(&scene), Mover::new(&scene));
    let mut frame = Frame::default();
    for percent in [1, 10, 100] {
        let (moving, reinserted) = frame_sizes(scene.centres.len(), percent);
        let mut g = c.benchmark_group(format!("world/move_{percent}/{dim}"));
        configure(&mut g);
        g.throughput(Throughput::Elements(moving as u64));
        let mut ran = false;
        g.bench_function(format!("ours/t{t}"), |b| {
            ran = true;
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    m_ours.next(moving, reinserted, &mut frame);
                    ours.prepare(&frame, &scene);
                    let start = Instant::now();
                    black_box(ours.apply());
                    total += start.elapsed();
                }
                total
            })
        });
        g.bench_function("rapier", |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    m_rapier.next(moving, reinserted, &mut frame);
                    total += peer_frame(&mut rapier, &frame, &scene);
                }
                total
            })
        });
        if percent >= 10 {
            g.bench_function(format!("find_pairs/t{t}"), |b| {
                b.iter(|| finder.find_pairs(black_box(&boxes), &mut found).unwrap())
            });
        }
        g.finish();
        if !ran {
            continue;
        }
        let st = ours.world.stats();
        eprintln!(
            "world {dim}: after the move_{percent} frames: object_bytes {:.1} per object, pair_bytes {:.1} per pair",
            st.object_bytes as f64 / ours.world.len().max(1) as f64,
            st.pair_bytes as f64 / st.pairs.max(1) as f64
        );
    }
}

fn main() {
    let opts = Opts::from_env();
    println!(
        "world bench: {} static + {} dynamic ({}), dims {:?}, {} threads, idle sizes {:?}, check n = {}",
        opts.statics, opts.dynamics, opts.scene, opts.dims, opts.threads, opts.idle_sizes, opts.check_n
    );
    // Everything runs on a worker of the pool, so that both sides' calls run in it without
    // the cost of entering it (about 10 us a call on the 2-core machine).
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .stack_size(64 << 20)
        .build()
        .expect("thread pool");
    pool.install(|| run(&opts));
}

fn run(opts: &Opts) {
    let mut ok = true;
    for &d in &opts.dims {
        ok &= if d == 2 { check::<2, peer::Rapier2>(opts) } else { check::<3, peer::Rapier3>(opts) };
    }
    assert!(ok, "correctness check failed: see MISMATCH lines above");
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
