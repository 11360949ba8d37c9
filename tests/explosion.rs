//! Pair explosions: `Config::max_pairs` stops a call in bounded memory and work, the finder
//! stays usable, and `Broadphase::shrink_to_fit` gives back what an outsized frame left.
//!
//! This binary counts its heap with a global allocator, so its tests run one at a time
//! (a lock), and each measures the peak of live bytes over the call it checks.

use broadphase::{brute_force_pairs, Aabb, Broadphase, Config, Error, Method};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

/// Counts live heap bytes and their peak.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only adds relaxed counters.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            PEAK.fetch_max(LIVE.fetch_add(l.size(), Relaxed) + l.size(), Relaxed);
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
                PEAK.fetch_max(LIVE.fetch_add(new - l.size(), Relaxed) + new - l.size(), Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// One test at a time: the counters are global.
static SERIAL: Mutex<()> = Mutex::new(());

/// The peak of live bytes above those live before `f`, and its result.
fn peak_over<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let r = f();
    (PEAK.load(Relaxed) - before, r)
}

fn identical<const D: usize>(n: usize) -> Vec<Aabb<D>> {
    vec![Aabb::new([0.0; D], [1.0; D]); n]
}

/// A small scene with a few pairs, for the call after an explosion.
fn scattered<const D: usize>(n: usize) -> Vec<Aabb<D>> {
    (0..n)
        .map(|i| {
            let p: [f32; D] = std::array::from_fn(|k| ((i * (7 + 13 * k)) % 97) as f32 * 1.5);
            Aabb::new(p, p.map(|x| x + 2.0))
        })
        .collect()
}

/// 50k identical boxes make 1.25e9 pairs (10 GB of output). With a bound of 1M pairs the
/// call fails with `TooManyPairs` after at most a few times the bound's work (candidates,
/// every one a pair here) and under 64 MiB of heap at its peak (the bound's keys are 8 MB,
/// the boxes' working memory about 128 bytes a box); the same finder then answers a
/// normal scene exactly.
#[test]
fn explosion_stops_at_the_bound_in_bounded_memory_and_work() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let limit = 1_000_000;
    let boxes = identical::<3>(50_000);
    for method in Method::ALL {
        let config = Config::default().with_max_pairs(Some(limit)).with_method(method);
        let mut bp = Broadphase::new(config).unwrap();
        let mut out = vec![[1, 2]];
        let (peak, r) = peak_over(|| bp.find_pairs(&boxes, &mut out));
        assert_eq!(r, Err(Error::TooManyPairs { limit }), "{method:?}");
        assert!(out.is_empty(), "{method:?}: the output is empty after the error");
        assert!(peak < 64 << 20, "{method:?}: peak {peak} bytes");
        let work = bp.stats().candidates;
        eprintln!("{method:?}: TooManyPairs after {work} candidates, peak {peak} bytes over the call");
        assert!(work <= 8 * limit, "{method:?}: {work} candidates for a bound of {limit}");
        let small = scattered::<3>(2_000);
        bp.find_pairs(&small, &mut out).unwrap();
        assert_eq!(out, brute_force_pairs(&small, &config).unwrap(), "{method:?}: the call after");
    }
}

/// The bound is exact: as many pairs as it allows pass, one more fails, in 2D and 3D and
/// on both algorithms.
#[test]
fn the_bound_is_exact() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    fn go<const D: usize>() {
        let boxes = identical::<D>(300);
        let pairs = 300 * 299 / 2;
        for method in Method::ALL.into_iter().filter(|&m| m != Method::Auto) {
            let at = Config::default().with_max_pairs(Some(pairs)).with_method(method);
            let got = broadphase::find_pairs_with(&boxes, &at).unwrap();
            assert_eq!(got.len(), pairs, "D = {D}, {method:?}");
            let under = at.with_max_pairs(Some(pairs - 1));
            let r = broadphase::find_pairs_with(&boxes, &under);
            assert_eq!(r, Err(Error::TooManyPairs { limit: pairs - 1 }), "D = {D}, {method:?}");
            let none = at.with_max_pairs(Some(0));
            assert_eq!(
                broadphase::find_pairs_with(&scattered::<D>(1), &none),
                Ok(vec![]),
                "no pair, no error"
            );
        }
    }
    go::<2>();
    go::<3>();
}

/// `shrink_to_fit` gives back the buffers a large frame left (most of what the finder held)
/// and the next frame is still exact.
#[test]
fn shrink_to_fit_releases_the_buffers() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut bp = Broadphase::<3>::new(Config::default()).unwrap();
    let mut out = Vec::new();
    let before = LIVE.load(Relaxed);
    let big = identical::<3>(3_000);
    bp.find_pairs(&big, &mut out).unwrap();
    assert_eq!(out.len(), 3_000 * 2_999 / 2);
    drop(std::mem::take(&mut out));
    let held = LIVE.load(Relaxed) - before;
    bp.shrink_to_fit();
    let kept = LIVE.load(Relaxed) - before;
    assert!(kept * 10 < held, "held {held} bytes after the frame, {kept} after shrink_to_fit");
    let small = scattered::<3>(1_000);
    bp.find_pairs(&small, &mut out).unwrap();
    assert_eq!(out, brute_force_pairs(&small, &Config::default()).unwrap());
}
