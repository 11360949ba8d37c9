//! Morton (Z-order) codes by lookup-table bit interlacing, and the quantiser that maps
//! float coordinates onto the integer grid the codes are taken over.
//!
//! - Input: per-axis grid coordinates (`u32`, [`grid_bits`] bits per axis). Output: the code
//!   with the axes' bits interlaced as `...zyxzyx` (x in bit 0), 64 bits at most.
//! - Grid: 21 bits per axis in 3D (63-bit codes), 32 in 2D (64-bit codes), 32 in 1D.
//! - Cost: O(1) a code: one table lookup a byte of each coordinate (three in 3D, four in
//!   2D), or one `pdep` an axis.
//! - Parallel: no; pure functions, called from inside the parallel stages.
//! - Allocation: none. The tables are statics, one of 256 entries a dimension, built at
//!   compile time by a `const fn` (no initialiser object, no static-init order).
//! - Method: 8 bits spread per lookup (the article's table spreads 11). Builds for a BMI2
//!   target use `pdep` instead (see [`encode`]), and so does the column pipeline's entry
//!   write on the run-time AVX2 path where `pdep` is fast
//!   (`crate::kernels::simd::pdep`). `encode_magic` (shift-and-mask) and `encode_bmi2`
//!   (`pdep`, checked at run time) are kept for the benchmark that compares them.
//!   PERF: `benches/kernels.rs` (morton).
//! - Clamping: the article masks coordinates with `& 2047` and clamps only the box corners,
//!   which wraps a coordinate past the grid onto the far side; here every float is clamped
//!   onto the grid by [`Quantizer`] (monotone, so closed overlaps survive quantisation) and
//!   a box outside the grid lands on the border grid cells, where the exact test still
//!   decides.
//! - Source: Dmytry Lavrov's article on collision detection in Morton order (the
//!   table-driven interlacing); the quantiser's clamping is this crate's.

/// Grid bits per axis for dimension `D` (3D: 21, 2D: 32, 1D: 32).
pub const fn grid_bits(d: usize) -> u32 {
    match d {
        3 => 21,
        _ => 32,
    }
}

/// `SPREAD[D][b]` = the 8 bits of `b` placed every `D`-th bit.
const fn spread_table(d: usize) -> [u64; 256] {
    let mut t = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut v = 0u64;
        let mut j = 0;
        while j < 8 {
            v |= (((i >> j) & 1) as u64) << (j * d);
            j += 1;
        }
        t[i] = v;
        i += 1;
    }
    t
}

static SPREAD2: [u64; 256] = spread_table(2);
static SPREAD3: [u64; 256] = spread_table(3);

/// Spreads the low `8 * bytes` bits of `v` every `d`-th bit via the table.
#[inline(always)]
fn spread(v: u32, d: usize) -> u64 {
    let t = if d == 3 { &SPREAD3 } else { &SPREAD2 };
    let v = v as usize;
    t[v & 0xff]
        | t[(v >> 8) & 0xff] << (8 * d)
        | t[(v >> 16) & 0xff] << (16 * d)
        | if d == 3 { 0 } else { t[(v >> 24) & 0xff] << (24 * d) }
}

/// The Morton code of grid point `q`. Coordinates must fit the grid ([`grid_bits`]`(D)`
/// bits); higher bits are ignored.
///
/// Lookup tables, or BMI2 `pdep` when the crate is compiled for a target with BMI2
/// (`-C target-cpu=...`). `pdep` is several times faster than the tables only where the
/// feature is known at compile time; a run-time check per call loses most of that.
/// PERF: `benches/kernels.rs` (morton: `lut`, `bmi2`, `bmi2_hoisted`). So this function
/// keeps the portable tables in default builds; the entry write, whose loop runs compiled
/// for BMI2 on the AVX2 path, calls `pdep_encode` there where
/// `crate::kernels::simd::pdep` allows. `pdep` is microcoded and slow on AMD before
/// Zen 3.
#[inline(always)]
pub fn encode<const D: usize>(q: [u32; D]) -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "bmi2"))]
    {
        if D == 2 || D == 3 {
            let q3: [u32; D] = if D == 3 { std::array::from_fn(|k| q[k] & 0x1f_ffff) } else { q };
            // SAFETY: compiled only where the target has BMI2.
            return unsafe { pdep_encode(q3) };
        }
    }
    encode_lut(q)
}

/// [`encode`] by lookup tables, whatever the target.
#[inline(always)]
pub fn encode_lut<const D: usize>(q: [u32; D]) -> u64 {
    match D {
        1 => q[0] as u64,
        2 => spread(q[0], 2) | spread(q[1], 2) << 1,
        3 => {
            spread(q[0] & 0x1f_ffff, 3) | spread(q[1] & 0x1f_ffff, 3) << 1 | spread(q[2] & 0x1f_ffff, 3) << 2
        }
        _ => unreachable_dim(),
    }
}

#[cold]
fn unreachable_dim() -> u64 {
    // Config::validate refuses D outside 1..=3 before any code is computed.
    0
}

#[cfg(any(test, feature = "internals"))]
/// The grid point of a Morton code (inverse of [`encode`]).
pub fn decode<const D: usize>(code: u64) -> [u32; D] {
    let mut q = [0u32; D];
    if D == 1 {
        q[0] = code as u32;
        return q;
    }
    let bits = grid_bits(D);
    for b in 0..bits {
        for (k, qk) in q.iter_mut().enumerate() {
            let src = b as usize * D + k;
            if src < 64 {
                *qk |= (((code >> src) & 1) as u32) << b;
            }
        }
    }
    q
}

#[cfg(any(test, feature = "internals"))]
/// The naive bit loop, the reference the table is tested against.
pub fn encode_naive<const D: usize>(q: [u32; D]) -> u64 {
    let mut code = 0u64;
    for b in 0..grid_bits(D) {
        for (k, &qk) in q.iter().enumerate() {
            let dst = b as usize * D + k;
            if dst < 64 {
                code |= (((qk >> b) & 1) as u64) << dst;
            }
        }
    }
    code
}

#[cfg(any(test, feature = "internals"))]
/// Shift-and-mask ("magic bits") encoding, kept for the benchmark.
pub fn encode_magic<const D: usize>(q: [u32; D]) -> u64 {
    fn part3(v: u32) -> u64 {
        let mut x = (v & 0x1f_ffff) as u64;
        x = (x | x << 32) & 0x1f_0000_0000_ffff;
        x = (x | x << 16) & 0x1f_0000_ff00_00ff;
        x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
        x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
        x = (x | x << 2) & 0x1249_2492_4924_9249;
        x
    }
    fn part2(v: u32) -> u64 {
        let mut x = v as u64;
        x = (x | x << 16) & 0x0000_ffff_0000_ffff;
        x = (x | x << 8) & 0x00ff_00ff_00ff_00ff;
        x = (x | x << 4) & 0x0f0f_0f0f_0f0f_0f0f;
        x = (x | x << 2) & 0x3333_3333_3333_3333;
        x = (x | x << 1) & 0x5555_5555_5555_5555;
        x
    }
    match D {
        1 => q[0] as u64,
        2 => part2(q[0]) | part2(q[1]) << 1,
        3 => part3(q[0]) | part3(q[1]) << 1 | part3(q[2]) << 2,
        _ => unreachable_dim(),
    }
}

#[cfg(any(test, feature = "internals"))]
/// BMI2 `pdep` encoding, kept for the benchmark. Falls back to the table where the CPU
/// lacks BMI2.
pub fn encode_bmi2<const D: usize>(q: [u32; D]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("bmi2") {
            // SAFETY: the CPU supports BMI2 (checked just above).
            return unsafe { pdep_encode(q) };
        }
    }
    encode_lut(q)
}

/// [`encode`] by BMI2 `pdep`. Inlined only into code compiled with BMI2 (the
/// [`crate::kernels::simd::fast`] path); [`crate::kernels::simd::pdep`] says when to use it.
///
/// SAFETY: the CPU must have BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
#[inline]
pub(crate) unsafe fn pdep_encode<const D: usize>(q: [u32; D]) -> u64 {
    use std::arch::x86_64::_pdep_u64;
    match D {
        1 => q[0] as u64,
        2 => _pdep_u64(q[0] as u64, 0x5555_5555_5555_5555) | _pdep_u64(q[1] as u64, 0xaaaa_aaaa_aaaa_aaaa),
        3 => {
            _pdep_u64(q[0] as u64, 0x1249_2492_4924_9249)
                | _pdep_u64(q[1] as u64, 0x2492_4924_9249_2492)
                | _pdep_u64(q[2] as u64, 0x4924_9249_2492_4924)
        }
        _ => 0,
    }
}

/// Maps float coordinates onto the `grid_bits(D)`-bit integer grid over given bounds.
///
/// `q(x) = clamp(floor((x - lo) * scale), 0, 2^bits - 1)`, computed in f64 so that bounds
/// as wide as `-3e38..3e38` neither overflow nor lose the order of distinct coordinates'
/// grid cells. Every step is monotone non-decreasing in `x`, so `a <= b` implies
/// `q(a) <= q(b)`: two boxes that overlap (closed) have quantised boxes that overlap, and
/// the column sweep never misses a pair. Points outside the bounds clamp to the border
/// grid cell.
#[derive(Clone, Copy, Debug)]
pub struct Quantizer<const D: usize> {
    lo: [f64; D],
    scale: [f64; D],
    max: f64,
}

impl<const D: usize> Quantizer<D> {
    /// A quantiser over the box `lo..=hi` (finite, `lo <= hi` per axis).
    pub fn new(lo: [f32; D], hi: [f32; D]) -> Self {
        let bits = grid_bits(D);
        let cells = (1u64 << bits) as f64;
        let mut q = Self { lo: [0.0; D], scale: [0.0; D], max: cells - 1.0 };
        for k in 0..D {
            let (l, h) = (lo[k] as f64, hi[k] as f64);
            q.lo[k] = l;
            let ext = h - l;
            // A zero extent maps everything to grid cell 0; otherwise `hi` maps to the last.
            q.scale[k] = if ext > 0.0 { cells / ext } else { 0.0 };
        }
        q
    }

    /// The grid coordinate of `x` on `axis`.
    #[inline(always)]
    pub fn coord(&self, axis: usize, x: f32) -> u32 {
        let t = (x as f64 - self.lo[axis]) * self.scale[axis];
        // Clamp first (a NaN fails `t > 0` and maps to 0), then truncate: for t >= 0
        // truncation is floor. PERF: written as compares, the clamps are one `maxsd` and
        // one `minsd` (`f64::max` adds NaN fix-ups), and the unchecked conversion is one
        // `cvttsd2si` (`as u32` adds saturation fix-ups); `f64::floor` is a libm call on
        // baseline x86_64 (no SSE4.1). It runs for every coordinate of every box's corners:
        // `benches/pairs.rs` (3D uniform 1M).
        let t = if t > 0.0 { t } else { 0.0 };
        let t = if t < self.max { t } else { self.max };
        // SAFETY: `t` lies in `0..=max` with `max < 2^32`: finite and within i64's range.
        unsafe { t.to_int_unchecked::<i64>() as u32 }
    }

    #[cfg(any(test, feature = "internals"))]
    /// The grid point of `p`.
    #[inline(always)]
    pub fn point(&self, p: &[f32; D]) -> [u32; D] {
        let mut q = [0u32; D];
        for (k, qk) in q.iter_mut().enumerate() {
            *qk = self.coord(k, p[k]);
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut r = crate::internals::scene::Rng::new(seed);
        move || r.next_u64()
    }

    #[test]
    fn every_table_entry_matches_the_bit_loop() {
        for b in 0..256u32 {
            for d in [2usize, 3] {
                let t = if d == 3 { SPREAD3[b as usize] } else { SPREAD2[b as usize] };
                let mut v = 0u64;
                for j in 0..8 {
                    v |= (((b >> j) & 1) as u64) << (j * d as u32);
                }
                assert_eq!(t, v, "table {d}D entry {b}");
            }
            // A byte in every position of every axis.
            for shift in [0, 8, 16, 24] {
                let x = b << shift;
                assert_eq!(encode::<2>([x, 0]), encode_naive::<2>([x, 0]));
                assert_eq!(encode::<2>([0, x]), encode_naive::<2>([0, x]));
                let x3 = x & 0x1f_ffff;
                assert_eq!(encode::<3>([x3, 0, 0]), encode_naive::<3>([x3, 0, 0]));
                assert_eq!(encode::<3>([0, x3, 0]), encode_naive::<3>([0, x3, 0]));
                assert_eq!(encode::<3>([0, 0, x3]), encode_naive::<3>([0, 0, x3]));
            }
        }
    }

    #[test]
    fn random_coordinates_round_trip_and_match_all_variants() {
        let mut r = rng(1);
        for _ in 0..100_000 {
            let q2 = [r() as u32, r() as u32];
            let c2 = encode::<2>(q2);
            assert_eq!(c2, encode_naive::<2>(q2));
            assert_eq!(c2, encode_lut::<2>(q2));
            assert_eq!(c2, encode_magic::<2>(q2));
            assert_eq!(c2, encode_bmi2::<2>(q2));
            assert_eq!(decode::<2>(c2), q2);
            let m = 0x1f_ffff;
            let q3 = [r() as u32 & m, r() as u32 & m, r() as u32 & m];
            let c3 = encode::<3>(q3);
            assert_eq!(c3, encode_naive::<3>(q3));
            assert_eq!(c3, encode_lut::<3>(q3));
            assert_eq!(c3, encode_magic::<3>(q3));
            assert_eq!(c3, encode_bmi2::<3>(q3));
            assert_eq!(decode::<3>(c3), q3);
        }
        assert_eq!(encode::<3>([m3(), m3(), m3()]), (1u64 << 63) - 1);
        assert_eq!(encode::<2>([u32::MAX, u32::MAX]), u64::MAX);
    }

    fn m3() -> u32 {
        (1 << 21) - 1
    }

    #[test]
    fn quantizer_is_monotone_and_clamps() {
        let q = Quantizer::<2>::new([-1e30, 0.0], [1e30, 0.0]);
        let xs = [-3e38f32, -1e30, -1.0, 0.0, 1e-30, 1.0, 1e29, 1e30, 3e38];
        for w in xs.windows(2) {
            assert!(q.coord(0, w[0]) <= q.coord(0, w[1]));
        }
        assert_eq!(q.coord(0, -3e38), 0);
        assert_eq!(q.coord(0, 3e38), u32::MAX);
        assert_eq!(q.coord(1, 5.0), 0); // zero extent axis
        let q3 = Quantizer::<3>::new([0.0; 3], [1.0; 3]);
        assert_eq!(q3.coord(0, 1.0), (1 << 21) - 1);
        assert_eq!(q3.coord(0, 0.5), 1 << 20);
    }
}
