//! Runtime choice of the instruction set for the hot loops.
//!
//! The crate is built for the target's baseline (x86-64: SSE2, no `popcnt`, `lzcnt`, BMI
//! or AVX), as a library from crates.io is. [`fast`] runs a closure inside a function
//! compiled for AVX2, BMI1/2, LZCNT and POPCNT when the CPU has them (`std` checks once and
//! caches the answer), so the loop inlined into it uses them: `wide::f32x8` as one 256-bit
//! operation, not two 128-bit halves, and shifts and bit counts as single instructions.
//! Elsewhere it calls the closure as it is.
//!
//! Results do not change: no fused multiply-add is formed (Rust never contracts
//! `a * b + c`), and every operation is the same IEEE or integer one. The tests check the
//! two paths against each other (`tests::both_paths_agree`).
//!
//! PERF: each parallel stage's per-chunk closure goes through [`fast`]. Demo, 2 threads, 5
//! alternating runs: 1M uniform 3D 94.7-100.9 -> 88.8-95.1 ms a frame, 2D 44.0-55.6 ->
//! 40.5-53.7 ms (docs/BENCHMARKS.md).

/// Runs `f`, compiled for the best instruction set this CPU has (see the module docs).
/// The closure should be `#[inline(always)]`, or it is compiled on its own, for the
/// baseline.
#[inline(always)]
pub(crate) fn fast<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2() {
            // SAFETY: the CPU has every feature `avx2` is compiled with (checked above).
            return unsafe { avx2(f) };
        }
    }
    f()
}

/// Tests set this to take the baseline path (see `tests::both_paths_agree`).
#[cfg(test)]
static BASELINE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn has_avx2() -> bool {
    #[cfg(test)]
    if BASELINE.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("lzcnt")
        && std::is_x86_feature_detected!("popcnt")
}

/// `f()`, with `f` inlined here and compiled for AVX2, BMI1/2, LZCNT and POPCNT.
///
/// SAFETY: the CPU must have those features.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{find_pairs_with, scene, Config, Method};
    use std::sync::atomic::Ordering;

    /// Every stage that goes through [`fast`] gives the same pairs on the baseline path as
    /// on the AVX2 one, in 2D and 3D, on both algorithms. (On a CPU without AVX2 both runs
    /// take the baseline path.) Other tests may run meanwhile on either path: results must
    /// not depend on it, so that is harmless.
    #[test]
    fn both_paths_agree() {
        fn check<const D: usize>(boxes: &[crate::Aabb<D>]) {
            for method in [Method::Cells, Method::Sweep] {
                let config = Config { method, ..Config::default() };
                BASELINE.store(true, Ordering::Relaxed);
                let base = find_pairs_with(boxes, &config).unwrap();
                BASELINE.store(false, Ordering::Relaxed);
                let fast = find_pairs_with(boxes, &config).unwrap();
                assert!(!base.is_empty());
                assert_eq!(base, fast, "{D}D {method:?}");
            }
        }
        check(&scene::uniform::<3>(40_000, 1));
        check(&scene::varied::<3>(20_000, 2));
        check(&scene::tiles::<3>(20_000, 3));
        check(&scene::uniform::<2>(40_000, 4));
        check(&scene::terrain::<2>(20_000, 5));
    }
}
