//! Run-time choice of the instruction set for the hot loops.
//!
//! The crate is built for the target's baseline (x86-64: SSE2, no `popcnt`, `lzcnt`, BMI
//! or AVX), as a library from crates.io is. [`fast`] runs a closure inside a function
//! compiled for AVX2, BMI1/2, LZCNT and POPCNT when the CPU has them (`std` checks once and
//! caches the answer), so the loop inlined into it uses them: VEX encodings, BMI shifts and
//! single-instruction bit counts, and `pdep` for Morton codes where it is fast ([`pdep`]).
//! Elsewhere it calls the closure as it is.
//!
//! - Input: a closure (or a body generic over [`F8`]). Output: its result, the same on
//!   either path.
//! - Cost: a cached feature check a call; [`pdep`] adds one relaxed atomic load.
//! - Parallel: no threads of its own; each parallel stage's per-chunk closure goes through
//!   [`fast`], so the whole frame gains the encodings and bit counts. PERF:
//!   `benches/pairs.rs` (2D and 3D uniform 1M, 2 threads).
//! - Allocation: none.
//! - Source: this crate.
//!
//! `wide` picks its representation at compile time, so `wide::f32x8` stays two 128-bit
//! halves on the AVX2 path too. The sweeps' compares are not written with 256-bit
//! intrinsics throughout: they are no faster there (PERF: `benches/pairs.rs`, 3D uniform 1M
//! and 3D varied 100k, 1 thread). The one exception is a loop that holds six vectors of
//! eight lanes across its steps (twelve halves, besides a step's broadcasts), which runs
//! short of registers in halves: [`F8`] names the lanes, and [`fast_lanes`] runs a body
//! generic over them with [`Avx8`] (256-bit) on the AVX2 path and `wide::f32x8` elsewhere.
//! `columns::ranges::group_window` (the 3D range groups) is that body (PERF:
//! `benches/pairs.rs`, 3D varied 10k and 100k, 1 thread). A run row's window scan gains
//! nothing from it, so it stays on `wide`.
//!
//! Results do not change: no fused multiply-add is formed (Rust never contracts
//! `a * b + c`), and every operation is the same IEEE or integer one. The tests check the
//! two paths against each other (`tests::both_paths_agree`).

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

/// Whether the hot loops may use BMI2 `pdep` (Morton codes, [`crate::kernels::morton::pdep_encode`]):
/// they run on the AVX2 path ([`fast`]) and `pdep` is fast on this CPU. True implies the
/// CPU has BMI2, on either path.
///
/// `pdep` is one cycle's throughput on Intel (Haswell on) and on AMD from Zen 3 (family
/// 19h) on; Zen 1 and 2 (17h) and Hygon (18h) run it in microcode, at tens to hundreds of
/// cycles, where the lookup tables win. Other vendors keep the tables too.
/// PERF: `benches/kernels.rs` (morton: `bmi2_hoisted` against `lut`) and the entry write
/// in `benches/pairs.rs` (3D uniform 1M, 1 thread).
#[inline(always)]
pub(crate) fn pdep() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
        // 0: not known yet, 1: no, 2: yes.
        static FAST_PDEP: AtomicU8 = AtomicU8::new(0);
        if !has_avx2() {
            return false;
        }
        let known = FAST_PDEP.load(Relaxed);
        if known != 0 {
            return known == 2;
        }
        let fast = cpu_pdep_fast();
        FAST_PDEP.store(1 + fast as u8, Relaxed);
        fast
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Intel, or AMD family 19h or later (see [`pdep`]); the caller has checked BMI2.
#[cfg(target_arch = "x86_64")]
#[cold]
fn cpu_pdep_fast() -> bool {
    #[allow(unused_unsafe)]
    // SAFETY: `cpuid` exists on every x86_64 CPU; leaves 0 and 1 always do.
    let (v, f) = unsafe { (std::arch::x86_64::__cpuid(0), std::arch::x86_64::__cpuid(1)) };
    let vendor = [v.ebx.to_le_bytes(), v.edx.to_le_bytes(), v.ecx.to_le_bytes()].concat();
    let base = (f.eax >> 8) & 0xf;
    let family = if base == 0xf { base + ((f.eax >> 20) & 0xff) } else { base };
    match &vendor[..] {
        b"GenuineIntel" => true,
        b"AuthenticAMD" => family >= 0x19,
        _ => false,
    }
}

/// Runs `avx(arg)` on the AVX2 path, else `portable(arg)`: the two are one generic body
/// instantiated for [`Avx8`] and for `wide::f32x8` (see [`F8`]). The state goes through
/// `arg`, so both closures may use it.
#[inline(always)]
pub(crate) fn fast_lanes<A, R>(arg: A, avx: impl FnOnce(A) -> R, portable: impl FnOnce(A) -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx2() {
            // SAFETY: the CPU has every feature `avx2` is compiled with (checked above).
            return unsafe {
                avx2(
                    #[inline(always)]
                    move || avx(arg),
                )
            };
        }
    }
    let _ = avx;
    portable(arg)
}

/// Eight `f32` lanes, as the sweep's compares use them: `wide::f32x8`, which is two
/// 128-bit halves in a build for the baseline (also inside [`fast`]), or [`Avx8`], one
/// 256-bit register, on the AVX2 path ([`fast_lanes`]).
pub(crate) trait F8: Copy {
    /// The first eight of `s`.
    fn load(s: &[f32]) -> Self;
    fn splat(x: f32) -> Self;
    /// Lanes `self <= o`, as a mask.
    fn le(self, o: Self) -> Self;
    fn and(self, o: Self) -> Self;
    /// Bit `l` set for each lane `l` of a mask that is set.
    fn bits(self) -> u32;
}

impl F8 for wide::f32x8 {
    #[inline(always)]
    fn load(s: &[f32]) -> Self {
        wide::f32x8::from(&s[..8])
    }
    #[inline(always)]
    fn splat(x: f32) -> Self {
        wide::f32x8::splat(x)
    }
    #[inline(always)]
    fn le(self, o: Self) -> Self {
        self.simd_le(o)
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn bits(self) -> u32 {
        self.to_bitmask()
    }
}

/// Eight `f32` lanes in one 256-bit register. Made and used only inside the `avx`
/// closure of [`fast_lanes`], which runs where the CPU has AVX2: its methods call AVX
/// intrinsics without checking.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Avx8(std::arch::x86_64::__m256);

/// Where there is no AVX path, the portable lanes.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) type Avx8 = wide::f32x8;

#[cfg(target_arch = "x86_64")]
impl F8 for Avx8 {
    #[inline(always)]
    fn load(s: &[f32]) -> Self {
        let s: &[f32; 8] = s[..8].try_into().expect("eight lanes");
        // SAFETY: AVX is present (see the type); `s` holds eight values.
        Avx8(unsafe { std::arch::x86_64::_mm256_loadu_ps(s.as_ptr()) })
    }
    #[inline(always)]
    fn splat(x: f32) -> Self {
        // SAFETY: AVX is present (see the type).
        Avx8(unsafe { std::arch::x86_64::_mm256_set1_ps(x) })
    }
    #[inline(always)]
    fn le(self, o: Self) -> Self {
        use std::arch::x86_64::*;
        // SAFETY: AVX is present (see the type).
        Avx8(unsafe { _mm256_cmp_ps::<_CMP_LE_OQ>(self.0, o.0) })
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        // SAFETY: AVX is present (see the type).
        Avx8(unsafe { std::arch::x86_64::_mm256_and_ps(self.0, o.0) })
    }
    #[inline(always)]
    fn bits(self) -> u32 {
        // SAFETY: AVX is present (see the type).
        unsafe { std::arch::x86_64::_mm256_movemask_ps(self.0) as u32 }
    }
}

/// The low `bits` bits set (all of them from 64 on).
#[inline(always)]
pub(crate) const fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
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
    use crate::internals::scene;
    use crate::{find_pairs_with, Config, Method};
    use std::sync::atomic::Ordering;

    /// Every stage that goes through [`fast`] gives the same pairs on the baseline path as
    /// on the AVX2 one, in 2D and 3D, on both algorithms. (On a CPU without AVX2 both runs
    /// take the baseline path.) Other tests may run meanwhile on either path: results must
    /// not depend on it, so that is harmless.
    #[test]
    fn both_paths_agree() {
        fn check<const D: usize>(boxes: &[crate::Aabb<D>]) {
            for method in [Method::Columns, Method::Sweep] {
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

    /// `pdep()` is true only where the CPU has BMI2 and `pdep` is fast. (Whether the AVX2
    /// path runs is not asserted here: `both_paths_agree` may toggle `BASELINE` meanwhile.)
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn pdep_needs_bmi2() {
        let bmi2 = std::is_x86_feature_detected!("bmi2");
        for _ in 0..3 {
            assert!(!pdep() || bmi2);
        }
        // Where `pdep` is slow (or the vendor unknown), never.
        if !cpu_pdep_fast() {
            assert!(!pdep());
        }
    }
}
