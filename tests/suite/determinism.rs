//! The output (and the work counters in `Stats`) must be the same for every thread count:
//! 1, 2, 3, 4, 7 and 16 threads, pools built by the caller.

use crate::common;

use broadphase::{
    brute_force_pairs, find_pairs, find_pairs_with, Aabb, Broadphase, Config, Method, Refine, Stats,
};
use common::Rng;
use common::*;

const THREADS: [usize; 6] = [1, 2, 3, 4, 7, 16];

fn pools() -> Vec<(usize, rayon::ThreadPool)> {
    THREADS
        .iter()
        .map(|&t| (t, rayon::ThreadPoolBuilder::new().num_threads(t).build().expect("thread pool")))
        .collect()
}

fn scenes<const D: usize>(seed: u64) -> Vec<(String, Vec<Aabb<D>>)> {
    let mut rng = Rng::new(seed);
    let side = (3000f32).powf(1.0 / D as f32);
    // All ~300 boxes contain the region [1, 2]^D: every pair overlaps.
    let all_overlap: Vec<Aabb<D>> = (0..300)
        .map(|_| {
            let mut min = [0.0; D];
            let mut max = [0.0; D];
            for k in 0..D {
                min[k] = rng.range(0.0, 1.0);
                max[k] = rng.range(2.0, 3.0);
            }
            Aabb::new(min, max)
        })
        .collect();
    vec![
        (format!("uniform 3000 seed {seed:#x}"), uniform(&mut rng, 3000, side * 2.0, 2.0)),
        (format!("clumped 3000 seed {seed:#x}"), clumped(&mut rng, 3000, 5, 500.0, 4.0, 1.0)),
        (format!("all-overlapping 300 seed {seed:#x}"), all_overlap),
        (format!("mixed big/small 3000 seed {seed:#x}"), mixed_big_small(&mut rng, 3000, 300.0)),
        (
            format!("touching lattice seed {seed:#x}"),
            (0..2000)
                .map(|_| {
                    let mut min = [0.0; D];
                    let mut size = [0.0; D];
                    for k in 0..D {
                        min[k] = rng.below(24) as f32;
                        size[k] = rng.below(2) as f32;
                    }
                    boxed(min, size)
                })
                .collect(),
        ),
    ]
}

fn det_configs<const D: usize>() -> Vec<Config<D>> {
    vec![
        Config::default(),
        Config::default().with_refine(Refine::Rdc),
        cfg(64, 4, Refine::Sweep),
        cfg(4096, 1, Refine::Rdc).with_margin(0.1),
    ]
}

/// The work counters that must not depend on the thread count.
fn counts(s: &Stats) -> [(&'static str, usize); 6] {
    [
        ("boxes", s.boxes),
        ("entries", s.entries),
        ("exact_tests", s.exact_tests),
        ("pairs", s.pairs),
        ("crowded_runs", s.crowded_runs),
        ("rdc_splits", s.rdc_splits),
    ]
}

fn first_diff(a: &[[u32; 2]], b: &[[u32; 2]]) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(p) => format!("first difference at position {p}: {:?} vs {:?}", a[p], b[p]),
        None => format!("one is a prefix of the other (lengths {} vs {})", a.len(), b.len()),
    }
}

fn determinism_for<const D: usize>(seed: u64) {
    let pools = pools();
    for (label, boxes) in scenes::<D>(seed) {
        for c in det_configs::<D>() {
            let ctx = format!("D = {D}, scene {label} (n = {}), {c:?}", boxes.len());
            let want = brute_force_pairs(&boxes, &c).unwrap();
            let mut baseline: Option<(Vec<[u32; 2]>, Stats)> = None;
            // One instance reused across every pool, too.
            let mut shared = Broadphase::new(c).unwrap();
            for (t, pool) in &pools {
                let (out, stats, free, shared_out) = pool.install(|| {
                    let mut bp = Broadphase::new(c).unwrap();
                    let mut out = Vec::new();
                    bp.find_pairs(&boxes, &mut out).unwrap_or_else(|e| panic!("{ctx}, {t} threads: {e:?}"));
                    let free = find_pairs_with(&boxes, &c).unwrap();
                    let mut shared_out = vec![[0, 0]];
                    shared.find_pairs(&boxes, &mut shared_out).unwrap();
                    (out, bp.stats().clone(), free, shared_out)
                });
                compare(&format!("{ctx}, {t} threads, Broadphase"), &boxes, c.margin, &out, &want)
                    .unwrap_or_else(|e| panic!("{e}"));
                assert!(
                    free == out,
                    "{ctx}, {t} threads: find_pairs_with differs from Broadphase: {}",
                    first_diff(&free, &out)
                );
                assert!(
                    shared_out == out,
                    "{ctx}, {t} threads: reused Broadphase differs: {}",
                    first_diff(&shared_out, &out)
                );
                match &baseline {
                    None => baseline = Some((out, stats)),
                    Some((b_out, b_stats)) => {
                        assert!(
                            out == *b_out,
                            "{ctx}: output with {t} threads differs from 1 thread ({} vs {} pairs): {}",
                            out.len(),
                            b_out.len(),
                            first_diff(&out, b_out)
                        );
                        for ((name, v), (_, b)) in counts(&stats).into_iter().zip(counts(b_stats)) {
                            assert_eq!(v, b, "{ctx}: Stats.{name} with {t} threads differs from 1 thread");
                        }
                    }
                }
            }
            // Repeatability on the widest pool.
            let (t, pool) = pools.last().unwrap();
            let again = pool.install(|| find_pairs_with(&boxes, &c).unwrap());
            let b_out = &baseline.as_ref().unwrap().0;
            assert!(
                again == *b_out,
                "{ctx}: second run on {t} threads differs: {}",
                first_diff(&again, b_out)
            );
        }
    }
}

#[test]
fn same_output_and_counts_for_any_thread_count_2d() {
    determinism_for::<2>(0xD2);
}

#[test]
fn same_output_and_counts_for_any_thread_count_3d() {
    determinism_for::<3>(0xD3);
}

/// `find_pairs` (default config) and errors are thread-count independent too.
#[test]
fn default_entry_point_and_errors_for_any_thread_count() {
    let pools = pools();
    let mut rng = Rng::new(0xD4);
    let boxes: Vec<Aabb<3>> = clumped(&mut rng, 5000, 3, 100.0, 6.0, 1.0);
    let mut bad = boxes.clone();
    bad[4999].min[0] = f32::NAN;
    bad[2500].max[1] = f32::NEG_INFINITY;
    let mut baseline = None;
    for (t, pool) in &pools {
        let (out, err) = pool.install(|| (find_pairs(&boxes).unwrap(), find_pairs(&bad)));
        assert_eq!(
            err,
            Err(broadphase::Error::InvalidBox { index: 2500, problem: broadphase::BoxProblem::Infinite }),
            "{t} threads"
        );
        match &baseline {
            None => baseline = Some(out),
            Some(b) => assert!(out == *b, "find_pairs, n = 5000, {t} threads vs 1: {}", first_diff(&out, b)),
        }
    }
}

/// Scenes large enough for the parallel paths that small ones skip: the chunked radix sort
/// of the entries (from 32k entries), pair sorts of many buckets and sort jobs, a sweep of
/// many chunks. The same bytes for any pool, and the same pairs as the whole-scene sweep
/// (an independent algorithm).
#[test]
fn large_scenes_same_for_any_thread_count() {
    fn go<const D: usize>(name: &str, boxes: Vec<Aabb<D>>, pools: &[(usize, rayon::ThreadPool)]) {
        let cells = Config::<D>::default().with_method(Method::Columns);
        let mut baseline: Option<(Vec<[u32; 2]>, Stats)> = None;
        let mut found: Option<Vec<[u32; 2]>> = None;
        for (t, pool) in pools {
            let mut bp = Broadphase::new(cells).unwrap();
            // Unsorted, in the order found: the same bytes on every pool (the sweep's chunks
            // are cut by the thread count), and as a set the sorted pairs.
            let mut unsorted = Vec::new();
            pool.install(|| bp.find_pairs_unsorted(&boxes, &mut unsorted)).unwrap();
            assert!(!unsorted.is_sorted(), "{name}: the columns' pairs came sorted");
            match &found {
                None => found = Some(unsorted.clone()),
                Some(f) => assert!(
                    unsorted == *f,
                    "{name}: unsorted, {t} threads vs 1: {}",
                    first_diff(&unsorted, f)
                ),
            }
            let mut out = Vec::new();
            pool.install(|| bp.find_pairs(&boxes, &mut out)).unwrap();
            unsorted.sort_unstable();
            assert!(
                unsorted == out,
                "{name}: unsorted vs sorted, {t} threads: {}",
                first_diff(&unsorted, &out)
            );
            let stats = bp.stats().clone();
            assert!(
                stats.entries >= 1 << 15,
                "{name}: {} entries, too few for the parallel sort",
                stats.entries
            );
            match &baseline {
                None => {
                    let want =
                        broadphase::find_pairs_with(&boxes, &Config::default().with_method(Method::Sweep))
                            .unwrap();
                    assert!(out == want, "{name}: cells vs sweep: {}", first_diff(&out, &want));
                    assert!(out.len() > 4096, "{name}: {} pairs, too few for the bucket sorts", out.len());
                    baseline = Some((out, stats));
                }
                Some((b, s)) => {
                    assert!(out == *b, "{name}: {t} threads vs 1: {}", first_diff(&out, b));
                    assert_eq!(counts(&stats), counts(s), "{name}: {t} threads vs 1");
                }
            }
        }
    }
    let pools = pools();
    go::<3>("3D varied 40k", broadphase::internals::scene::varied(40_000, 7), &pools);
    go::<3>("3D clustered 40k", broadphase::internals::scene::clustered(40_000, 8), &pools);
    go::<2>("2D uniform 50k", broadphase::internals::scene::uniform(50_000, 9), &pools);
}

/// Internal consistency of `Stats` after a run (margin 0, all boxes valid).
#[test]
fn stats_are_consistent() {
    fn go<const D: usize>(seed: u64) {
        for (label, boxes) in scenes::<D>(seed) {
            // The cell invariants need the cell pipeline (`Method::Auto` may sweep instead).
            for c in [Config::default(), cfg(4096, 1, Refine::Rdc), cfg(1 << D, 2, Refine::Sweep)] {
                let c = c.with_method(Method::Columns);
                let ctx = format!("D = {D}, scene {label} (n = {}), {c:?}", boxes.len());
                let mut bp = Broadphase::new(c).unwrap();
                let mut out = Vec::new();
                bp.find_pairs(&boxes, &mut out).unwrap();
                let s = bp.stats();
                let n = boxes.len();
                assert_eq!(s.boxes, n, "{ctx}: Stats.boxes must be the input length; {s:?}");
                assert_eq!(s.pairs, out.len(), "{ctx}: Stats.pairs must be the output length; {s:?}");
                assert!(s.entries >= n, "{ctx}: every box lies in at least one cell; {s:?}");
                assert!(
                    s.entries <= n * c.max_columns_per_box as usize,
                    "{ctx}: no box may take more than max_columns_per_box cells; {s:?}"
                );
                assert!(s.exact_tests >= s.pairs, "{ctx}: every reported pair was exact-tested; {s:?}");
                assert!(s.crowded_runs <= s.entries, "{ctx}: crowded cells are a subset of cells; {s:?}");
                if c.refine == Refine::Sweep {
                    assert_eq!(s.rdc_splits, 0, "{ctx}: rdc_splits must be 0 under Refine::Sweep; {s:?}");
                }
            }
            // The whole-scene sweep makes no cells and exact-tests every reported pair.
            let mut bp = Broadphase::new(Config::default().with_method(Method::Sweep)).unwrap();
            let mut out = Vec::new();
            bp.find_pairs(&boxes, &mut out).unwrap();
            let s = bp.stats();
            assert_eq!((s.entries, s.pairs), (0, out.len()), "D = {D}, scene {label}: sweep stats {s:?}");
            assert!(s.exact_tests >= s.pairs, "D = {D}, scene {label}: sweep stats {s:?}");
        }
    }
    go::<2>(0xE2);
    go::<3>(0xE3);
}
