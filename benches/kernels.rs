//! Kernel benchmark: the two hot kernels of the pipeline measured on their own, to decide
//! which implementation the crate keeps.
//!
//! Run: `cargo bench --bench kernels`. `BP_SIZES` (comma separated, default
//! `100000,1000000`) overrides the radix sizes.
//!
//! 1. `morton/{2d,3d}`: encode 1M random grid points (3D: 21-bit coordinates, 2D: 32-bit)
//!    and sum the codes. Functions: `lut` ([`broadphase::morton::encode`], the lookup
//!    tables the crate uses), `magic` (`encode_magic`, shift-and-mask), `bmi2`
//!    (`encode_bmi2`, `pdep` behind a runtime feature check on every call) and, on x86_64
//!    with BMI2, `bmi2_hoisted` (the check done once, then a `#[target_feature(enable =
//!    "bmi2")]` loop calling `_pdep_u64` directly: the best `pdep` can do). The issue asks
//!    to keep the table unless another variant wins clearly.
//! 2. `radix/{n}`: sort `n` u64 keys. Functions `{method}/{pattern}`: `ours/t{t}`
//!    (`radix_sort::sort`, on a rayon pool of `t` threads), `ours_seq`
//!    (`radix_sort::sort_sequential`), `sort_unstable` (`slice::sort_unstable`) and
//!    `rdst/t{t}` (`rdst` 0.20 `radix_sort_unstable`, which uses the current rayon pool),
//!    for `t` in {1, all cores}. Patterns: `random` (full 64-bit), `cell_keys`, `sorted`,
//!    `reversed`, `all_equal`. The issue asks to keep our radix sort only if it is at least
//!    as fast as `sort_unstable` and `rdst`.
//!
//! `cell_keys` is what the crate really sorts: a random 26-bit cell key shifted left by 23
//! with a 20-bit box id in the low bits. Ours sorts by bits `23..64` only (stable, as the
//! pipeline does); `sort_unstable` and `rdst` sort the full value (they cannot skip the
//! payload bits). With ids increasing in input order both give the same order.
//!
//! Before any timing, every method's output is checked once (untimed) for every pattern at
//! the smallest size: equal to `sort_unstable`'s, and for ours on `cell_keys`, equal to a
//! stable `sort_by_key(|k| k >> 23)`.
//!
//! Inputs are copied per iteration by `iter_batched(.., BatchSize::LargeInput)`, so the
//! copy is not timed; our scratch buffer lives outside the timed closure and is reused.

use std::hint::black_box;
use std::time::Duration;

use broadphase::scene::Rng;
use broadphase::{morton, radix_sort};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use rdst::RadixSort;

/// Points encoded per Morton run.
const MORTON_N: usize = 1_000_000;
/// Default radix sizes.
const SIZES: [usize; 2] = [100_000, 1_000_000];
const SEED: u64 = 0x5eed_b0a7_c0de_0001;

fn threads_all() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn sizes() -> Vec<usize> {
    match std::env::var("BP_SIZES") {
        Ok(s) => {
            s.split(',').map(|x| x.trim().parse().expect("BP_SIZES: comma-separated integers")).collect()
        }
        Err(_) => SIZES.to_vec(),
    }
}

// ---------------------------------------------------------------- Morton

fn points<const D: usize>(n: usize) -> Vec<[u32; D]> {
    let mask = if morton::grid_bits(D) >= 32 { u32::MAX } else { (1u32 << morton::grid_bits(D)) - 1 };
    let mut rng = Rng::new(SEED ^ D as u64);
    (0..n).map(|_| std::array::from_fn(|_| rng.next_u64() as u32 & mask)).collect()
}

#[inline(always)]
fn sum_codes<const D: usize>(pts: &[[u32; D]], f: impl Fn([u32; D]) -> u64) -> u64 {
    pts.iter().fold(0u64, |acc, &q| acc.wrapping_add(f(q)))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
unsafe fn sum_pdep<const D: usize>(pts: &[[u32; D]]) -> u64 {
    use core::arch::x86_64::_pdep_u64;
    let mut acc = 0u64;
    for q in pts {
        let code = match D {
            2 => {
                _pdep_u64(q[0] as u64, 0x5555_5555_5555_5555) | _pdep_u64(q[1] as u64, 0xaaaa_aaaa_aaaa_aaaa)
            }
            3 => {
                _pdep_u64(q[0] as u64, 0x1249_2492_4924_9249)
                    | _pdep_u64(q[1] as u64, 0x2492_4924_9249_2492)
                    | _pdep_u64(q[2] as u64, 0x4924_9249_2492_4924)
            }
            _ => unreachable!("bench covers 2D and 3D"),
        };
        acc = acc.wrapping_add(code);
    }
    acc
}

/// `Some(sum)` of the codes by the hoisted `pdep` loop, `None` without BMI2.
fn bmi2_hoisted<const D: usize>(pts: &[[u32; D]]) -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("bmi2") {
            // SAFETY: the CPU supports BMI2 (checked just above).
            return Some(unsafe { sum_pdep(pts) });
        }
    }
    let _ = pts;
    None
}

fn morton_dim<const D: usize>(c: &mut Criterion) {
    let pts = points::<D>(MORTON_N);
    // Every variant must agree with the table (checked once, untimed).
    let want = sum_codes(&pts, morton::encode::<D>);
    assert_eq!(sum_codes(&pts, morton::encode_magic::<D>), want, "magic differs from lut ({D}D)");
    assert_eq!(sum_codes(&pts, morton::encode_bmi2::<D>), want, "bmi2 differs from lut ({D}D)");
    let hoisted = bmi2_hoisted(&pts);
    if let Some(h) = hoisted {
        assert_eq!(h, want, "bmi2_hoisted differs from lut ({D}D)");
    } else {
        println!("morton/{D}d: no BMI2 on this CPU, bmi2_hoisted skipped (bmi2 falls back to lut)");
    }

    let mut g = c.benchmark_group(format!("morton/{D}d"));
    g.throughput(Throughput::Elements(MORTON_N as u64));
    g.bench_function("lut", |b| b.iter(|| black_box(sum_codes(black_box(&pts), morton::encode::<D>))));
    g.bench_function("magic", |b| {
        b.iter(|| black_box(sum_codes(black_box(&pts), morton::encode_magic::<D>)))
    });
    g.bench_function("bmi2", |b| b.iter(|| black_box(sum_codes(black_box(&pts), morton::encode_bmi2::<D>))));
    if hoisted.is_some() {
        g.bench_function("bmi2_hoisted", |b| b.iter(|| black_box(bmi2_hoisted(black_box(&pts)))));
    }
    g.finish();
}

fn bench_morton(c: &mut Criterion) {
    morton_dim::<2>(c);
    morton_dim::<3>(c);
}

// ---------------------------------------------------------------- radix sort

const PATTERNS: [&str; 5] = ["random", "cell_keys", "sorted", "reversed", "all_equal"];
/// Bits of a `cell_keys` key below the cell: the box id's field.
const CELL_SHIFT: u32 = 23;

fn keys(pattern: &str, n: usize) -> Vec<u64> {
    let mut rng = Rng::new(SEED ^ n as u64);
    match pattern {
        "random" => (0..n).map(|_| rng.next_u64()).collect(),
        "cell_keys" => (0..n as u64)
            .map(|i| (rng.next_u64() & ((1 << 26) - 1)) << CELL_SHIFT | (i & ((1 << 20) - 1)))
            .collect(),
        "sorted" => {
            let mut v: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
            v.sort_unstable();
            v
        }
        "reversed" => {
            let mut v: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
            v.sort_unstable_by(|a, b| b.cmp(a));
            v
        }
        "all_equal" => vec![0x0123_4567_89ab_cdef; n],
        _ => panic!("unknown pattern {pattern}"),
    }
}

/// Bits ours sorts on for `pattern` (the others always sort the full value).
fn our_bits(pattern: &str) -> std::ops::Range<u32> {
    if pattern == "cell_keys" {
        CELL_SHIFT..64
    } else {
        0..64
    }
}

fn pool(t: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(t).build().expect("rayon pool")
}

/// Checks every method against `sort_unstable` (and ours on `cell_keys` against a stable
/// sort by the key bits), untimed.
fn check_radix(n: usize, pools: &[(usize, rayon::ThreadPool)]) {
    for p in PATTERNS {
        let input = keys(p, n);
        let mut want = input.clone();
        want.sort_unstable();
        let mut want_ours = input.clone();
        if p == "cell_keys" {
            want_ours.sort_by_key(|k| k >> CELL_SHIFT);
        } else {
            want_ours.clone_from(&want);
        }
        let mut scratch = Vec::new();
        let mut v = input.clone();
        radix_sort::sort_sequential(&mut v, &mut scratch, our_bits(p));
        assert!(v == want_ours, "ours_seq wrong on {p} (n = {n})");
        for (t, pool) in pools {
            let mut v = input.clone();
            pool.install(|| radix_sort::sort(&mut v, &mut scratch, our_bits(p)));
            assert!(v == want_ours, "ours/t{t} wrong on {p} (n = {n})");
            let mut v = input.clone();
            pool.install(|| v.radix_sort_unstable());
            assert!(v == want, "rdst/t{t} wrong on {p} (n = {n})");
        }
    }
    println!("radix: every method checked against sort_unstable on every pattern at n = {n}");
}

fn bench_radix(c: &mut Criterion) {
    let sizes = sizes();
    let mut threads = vec![1, threads_all()];
    threads.dedup();
    let pools: Vec<(usize, rayon::ThreadPool)> = threads.iter().map(|&t| (t, pool(t))).collect();
    if let Some(&n) = sizes.iter().min() {
        check_radix(n, &pools);
    }

    for &n in &sizes {
        let mut g = c.benchmark_group(format!("radix/{n}"));
        g.throughput(Throughput::Elements(n as u64));
        let mut scratch: Vec<u64> = Vec::with_capacity(n);
        for p in PATTERNS {
            let input = keys(p, n);
            let bits = our_bits(p);
            for (t, pool) in &pools {
                g.bench_with_input(BenchmarkId::new(format!("ours/t{t}"), p), &input, |b, input| {
                    pool.install(|| {
                        b.iter_batched(
                            || input.clone(),
                            |mut v| {
                                radix_sort::sort(&mut v, &mut scratch, bits.clone());
                                v
                            },
                            BatchSize::LargeInput,
                        )
                    })
                });
            }
            g.bench_with_input(BenchmarkId::new("ours_seq", p), &input, |b, input| {
                b.iter_batched(
                    || input.clone(),
                    |mut v| {
                        radix_sort::sort_sequential(&mut v, &mut scratch, bits.clone());
                        v
                    },
                    BatchSize::LargeInput,
                )
            });
            g.bench_with_input(BenchmarkId::new("sort_unstable", p), &input, |b, input| {
                b.iter_batched(
                    || input.clone(),
                    |mut v| {
                        v.sort_unstable();
                        v
                    },
                    BatchSize::LargeInput,
                )
            });
            for (t, pool) in &pools {
                g.bench_with_input(BenchmarkId::new(format!("rdst/t{t}"), p), &input, |b, input| {
                    pool.install(|| {
                        b.iter_batched(
                            || input.clone(),
                            |mut v| {
                                v.radix_sort_unstable();
                                v
                            },
                            BatchSize::LargeInput,
                        )
                    })
                });
            }
        }
        g.finish();
    }
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1))
}

criterion_group! {
    name = kernels;
    config = config();
    targets = bench_morton, bench_radix
}
criterion_main!(kernels);
