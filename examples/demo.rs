//! The main job: a persistent world of a static level and a moving crowd, then a built-in
//! scene of a million boxes in 3D, all pairs found on all cores.
//!
//! `cargo run --release --example demo` runs both: the world mode on its defaults (see
//! `demo/world.rs`: a level of 200,000 terrain triangles and a crowd of 20,000 dynamic
//! boxes moving for 300 frames, with update times, movers and pairs added and removed),
//! then the one-shot mode on the default scene (1M boxes, uniform density, plus 1,000 long
//! thin planks and walls).
//!
//! `-- world [LEVEL] [N_STATIC] [N_DYNAMIC] [D] [FRAMES]` runs the world mode alone.
//! `-- SCENE N D` runs the one-shot mode alone on another scene, e.g. `-- clustered 100000 2`,
//! and `-- SCENE N D FRAMES` runs more frames (default 4).
//! Scenes: uniform, varied, clustered, mixed, all_overlapping, terrain, tiles, flat, levels.
//! The one-shot mode prints per-stage times, counts, pairs and pairs per second, for a cold
//! first frame and for warm frames that reuse the finder's buffers, then each stage's best
//! warm time (on a shared machine the minimum is the steadiest figure; benches give the
//! medians).

#[path = "demo/world.rs"]
mod world;

use broadphase::internals::scene;
use broadphase::{Aabb, Broadphase, Config, Method};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

/// Counts live heap bytes and their peak, to report the finder's working memory per box.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only adds relaxed counters.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new > l.size() {
                let now = LIVE.fetch_add(new - l.size(), Relaxed) + new - l.size();
                PEAK.fetch_max(now, Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => {
            world::main(&[]);
            println!();
            one_shot(&[]);
        }
        Some("world") => world::main(&args[1..]),
        Some(_) => one_shot(&args),
    }
}

/// The one-shot mode: `[SCENE] [N] [D] [FRAMES]`, every pair of one scene found afresh each
/// frame.
fn one_shot(args: &[String]) {
    let name = args.first().map(String::as_str).unwrap_or("mixed");
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let d: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let frames: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(4).max(2);
    match d {
        1 => run::<1>(name, n, frames),
        2 => run::<2>(name, n, frames),
        3 => run::<3>(name, n, frames),
        _ => eprintln!("D must be 1, 2 or 3"),
    }
}

fn run<const D: usize>(name: &str, n: usize, frames: usize) {
    let t = Instant::now();
    let Some(boxes): Option<Vec<Aabb<D>>> = broadphase::internals::by_name(name, n, 42) else {
        eprintln!("unknown scene {name}: try one of {:?}", scene::SCENES);
        std::process::exit(2);
    };
    println!(
        "scene {name}, {D}D, {} boxes (generated in {:.0} ms), {} threads",
        boxes.len(),
        t.elapsed().as_secs_f64() * 1e3,
        rayon::current_num_threads()
    );
    let mut pairs = Vec::new();
    // Working memory of a cold run: peak live bytes above the input, minus the output.
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    // BP_METHOD=columns|sweep|tree|rdc|brute_force|grid|... (`Method::name`) forces a
    // method (default: auto).
    let method = std::env::var("BP_METHOD").ok().and_then(|m| Method::from_name(&m)).unwrap_or_default();
    let mut bp =
        Broadphase::<D>::new(Config::default().with_method(method)).expect("default config is valid");
    let last = frames - 1;
    let mut work = 0;
    let mut best = [f64::INFINITY; 6];
    for frame in 0..frames {
        if let Err(e) = bp.find_pairs(&boxes, &mut pairs) {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
        if frame == 0 {
            // The pairs themselves; capacity beyond them counts as working memory.
            let out = pairs.len() * std::mem::size_of::<[u32; 2]>();
            work = PEAK.load(Relaxed) - base - out;
        }
        let s = bp.stats();
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let stages = [s.t_total, s.t_scan, s.t_entries, s.t_sort, s.t_sweep, s.t_pairs].map(ms);
        if frame > 0 {
            for (b, t) in best.iter_mut().zip(stages) {
                *b = b.min(t);
            }
        }
        println!(
            "frame {frame} ({}): total {:8.2} ms | store {:7.2}  cells {:7.2}  sort {:7.2}  sweep {:7.2}  pairs {:7.2} ms",
            if frame == 0 { "cold" } else { "warm" },
            stages[0],
            stages[1],
            stages[2],
            stages[3],
            stages[4],
            stages[5]
        );
        if frame == last {
            println!(
                "cells {} ({:.2} per box), crowded cells {}, candidates {:.2} per box, exact tests {} ({:.2} per box), pairs {} ({:.2} per box)",
                s.entries,
                s.entries as f64 / s.boxes.max(1) as f64,
                s.crowded_runs,
                s.candidates as f64 / s.boxes.max(1) as f64,
                s.exact_tests,
                s.exact_tests as f64 / s.boxes.max(1) as f64,
                s.pairs,
                s.pairs as f64 / s.boxes.max(1) as f64
            );
            println!(
                "peak working memory {:.1} MB = {:.1} bytes per box (excluding input and output)",
                work as f64 / 1e6,
                work as f64 / s.boxes.max(1) as f64
            );
            println!(
                "{:.1} M boxes/s, {:.1} M pairs/s",
                s.boxes as f64 / s.t_total.as_secs_f64() / 1e6,
                s.pairs as f64 / s.t_total.as_secs_f64() / 1e6
            );
        }
    }
    println!(
        "best warm:       total {:8.2} ms | store {:7.2}  cells {:7.2}  sort {:7.2}  sweep {:7.2}  pairs {:7.2} ms",
        best[0], best[1], best[2], best[3], best[4], best[5]
    );
    if let Some(p) = pairs.first() {
        println!("first pair {:?}: {:?} and {:?}", p, boxes[p[0] as usize], boxes[p[1] as usize]);
    }
}
