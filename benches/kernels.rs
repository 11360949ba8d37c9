//! Kernel benchmark: two hot kernels of the pipeline measured on their own, against the
//! alternatives the crate could use instead.
//!
//! Run: `cargo bench --bench kernels` (`-- radix` or `-- morton` for one part). `BP_SIZES`
//! (comma separated, default `100000,1000000`) overrides the radix sizes.
//!
//! 1. `morton/{2d,3d}`: encode 1M random grid points (3D: 21-bit coordinates, 2D: 32-bit)
//!    and sum the codes. Functions: `lut` ([`broadphase::internals::morton::encode`], the lookup
//!    tables the crate uses), `magic` (`encode_magic`, shift-and-mask), `bmi2`
//!    (`encode_bmi2`, `pdep` behind a runtime feature check on every call) and, on x86_64
//!    with BMI2, `bmi2_hoisted` (the check done once, then a `#[target_feature(enable =
//!    "bmi2")]` loop calling `_pdep_u64` directly: the best `pdep` can do).
//! 2. `radix/{n}`: sort `n` u64 keys, at 1 and 2 threads in one run. Functions
//!    `{method}/{pattern}`:
//!    - `ours/t{t}`: `radix_sort::sort` on a rayon pool of `t` threads; `ours_seq`:
//!      `radix_sort::sort_sequential`. Both sort stably by the pattern's key bits only.
//!    - `sort_unstable`: `slice::sort_unstable`, one thread.
//!    - `rdst/t{t}`: `rdst` 0.20 `radix_sort_unstable`, which uses the current rayon pool
//!      (a pool of `t` threads).
//!    - `voracious/t{t}`: `voracious_radix_sort` 1.2; `t = 1`: `voracious_sort` (its
//!      sequential DLSD radix sort); `t = 2`: `voracious_mt_sort(2)` inside a 2-thread pool
//!      (for u64 below 2M keys that is rayon's `par_sort_unstable` on the current pool; its
//!      own parallel radix sort, `peeka_sort`, starts at 2M).
//!
//!    The libraries sort the whole 64-bit value: they cannot skip the id bits below the key
//!    (payload) nor take a bit range, so on `cell_keys` and `nearly_sorted` they sort more
//!    bits than ours (ours skips constant digits; the libraries skip some too).
//!
//!    Patterns:
//!    - `cell_keys`: the entry keys the pipeline sorts (`src/columns/layout.rs`), of a
//!      synthetic uniform 3D scene, in the order the cell stage writes them: box ids in the
//!      low bits increasing in input order, sorted on the bits above the id and the column
//!      flags (100k: bits 19..52; 1M: bits 22..54). See [`cell_keys`].
//!    - `pair_keys`: pair keys `i << 32 | j` (`i < j`) in the order a sweep of a uniform 2D
//!      scene emits them, sorted on all 64 bits. See [`pair_keys`]. The pipeline sorts its
//!      pair keys with the pair stage (`src/kernels/pair_sort/`), not `radix_sort`: on this
//!      pattern `pair_sort/t{t}` times that stage (`internals::sort_pair_keys`, the keys cut
//!      into 16 parts as sweep chunks leave them, the `[i, j]` output allocated and
//!      written), against the libraries' in-place sort of the same keys.
//!    - `nearly_sorted`: `cell_keys` sorted, then `n / 100` swaps of random positions (a
//!      frame after a small motion); same key bits as `cell_keys`.
//!    - `random` (full 64-bit), `sorted`, `reversed` (random keys in order and in reverse),
//!      `all_equal`: all 64 bits.
//!
//! Before any timing, every method's output is checked once (untimed) on every pattern at
//! the smallest size: the libraries' and `sort_unstable`'s equal to `sort_unstable`'s, and
//! ours equal to a stable `sort_by_key` on the key bits (on `cell_keys` that is the same
//! order as the full sort, as the ids increase in input order; on `nearly_sorted` it may
//! differ among equal keys).
//!
//! Inputs are copied per iteration by `iter_batched(.., BatchSize::LargeInput)`, so the
//! copy is not timed; our scratch buffer lives outside the timed closure and is reused.
//! Radix functions are measured for 2 s each (10 samples).

use std::hint::black_box;
use std::time::Duration;

use broadphase::internals::scene::Rng;
use broadphase::internals::{morton, radix_sort, sort_pair_keys};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use rdst::RadixSort as _;
use voracious_radix_sort::RadixSort as _;

/// Points encoded per Morton run.
const MORTON_N: usize = 1_000_000;
/// Default radix sizes.
const SIZES: [usize; 2] = [100_000, 1_000_000];
const SEED: u64 = 0x5eed_b0a7_c0de_0001;

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

const PATTERNS: [&str; 7] =
    ["random", "cell_keys", "pair_keys", "nearly_sorted", "sorted", "reversed", "all_equal"];
/// The thread counts every parallel method runs at.
const THREADS: [usize; 2] = [1, 2];
/// Measurement time of a `radix` function (the sorts take 0.3 to 30 ms).
const RADIX_TIME: Duration = Duration::from_secs(2);

/// Low bits of a u64 (`bits <= 64`).
fn low(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// Bits needed to tell `0..n` apart (as `Columns` sizes the id field).
fn bits_for(n: usize) -> u32 {
    usize::BITS - n.saturating_sub(1).leading_zeros()
}

/// The entry keys of a uniform 3D scene in the pipeline's layout (`src/columns/layout.rs`), low to
/// high `[id][first: 2][qx: x_bits][l_max - level: 1][column start: key_bits]`, `n` of
/// them in the order the cell stage writes them (by box id), and the bits the pipeline
/// sorts them on (`qx` and up).
///
/// `n / 1.3` boxes: 75% one column, 23% two neighbouring columns, 2% four (1.3 entries a
/// box, as 2D uniform 100k boxes make 127k). One box in eight is a level coarser (its
/// column start's low two bits zero). Column starts are 2D Morton codes of uniformly random
/// columns of a grid of about as many columns as boxes; `qx` is random, one per box. The
/// field widths follow `Columns::plan`: `qx` as wide as fills the sort's last digit (at
/// least 9 bits). 100k: ids 17 bits, sort on bits 19..52 (three 11-bit digits); 1M: ids 20
/// bits, sort on 22..54 (four 8-bit digits).
fn cell_keys(n: usize, rng: &mut Rng) -> (Vec<u64>, std::ops::Range<u32>) {
    let boxes = (n as f64 / 1.3).ceil() as usize;
    let (id_bits, c, lvl_bits) = (bits_for(boxes), 2, 1);
    let side_bits = bits_for(boxes).div_ceil(2);
    let key_bits = c * side_bits;
    let other = lvl_bits + key_bits;
    let digit = radix_sort::digit_bits(n);
    let want = 9;
    let mut x_bits = ((other + want).div_ceil(digit) * digit - other).clamp(want, 24);
    let rest = id_bits + c + other;
    if rest + x_bits > 64 {
        x_bits = 64 - rest;
    }
    let total = rest + x_bits;
    let side = 1u32 << side_bits;
    let mut v = Vec::with_capacity(n + 4);
    let mut id = 0u64;
    while v.len() < n {
        let coarse = rng.below(8) == 0;
        let step = if coarse { 2 } else { 1 };
        let (cx, cy) =
            (rng.below(side as usize) as u32 & !(step - 1), rng.below(side as usize) as u32 & !(step - 1));
        let qx = rng.next_u64() & low(x_bits);
        let (wx, wy) = match rng.below(100) {
            0..=74 => (1, 1),
            75..=86 => (2, 1),
            87..=97 => (1, 2),
            _ => (2, 2),
        };
        for dy in 0..wy {
            for dx in 0..wx {
                let (x, y) = (cx + dx * step, cy + dy * step);
                if x >= side || y >= side {
                    continue;
                }
                let start = morton::encode::<2>([x, y]);
                let lvl = u64::from(!coarse);
                let first = u64::from(dx == 0) | u64::from(dy == 0) << 1;
                v.push(((((start << lvl_bits | lvl) << x_bits | qx) << c | first) << id_bits) | id);
            }
        }
        id += 1;
    }
    v.truncate(n);
    (v, id_bits + c..total)
}

/// `n` pair keys `i << 32 | j` (`i < j`) in the order a sweep emits them: a uniform 2D
/// scene of squares (ids in random spatial order, about two overlaps a box), cut into
/// stripes one box high; each stripe's boxes sorted by lower x and swept, a pair reported
/// from the stripe that holds the higher of the two lower y (the pipeline's reference-point
/// rule), stripe after stripe. Consecutive keys share a box; the first indices are random.
fn pair_keys(n: usize, rng: &mut Rng) -> Vec<u64> {
    let mut boxes = n / 2 + n / 16 + 64;
    loop {
        let s = 1.0 / (boxes as f64).sqrt();
        let lo: Vec<[f64; 2]> = (0..boxes).map(|_| [rng.next_f64(), rng.next_f64()]).collect();
        let stripe = |y: f64| (y / s) as usize;
        let mut entries: Vec<(usize, f64, u32)> = Vec::with_capacity(2 * boxes);
        for (id, p) in lo.iter().enumerate() {
            for k in stripe(p[1])..=stripe(p[1] + s) {
                entries.push((k, p[0], id as u32));
            }
        }
        entries.sort_unstable_by(|a, b| (a.0, a.1).partial_cmp(&(b.0, b.1)).expect("finite"));
        let mut out = Vec::with_capacity(n + 64);
        for (q, &(k, xa, a)) in entries.iter().enumerate() {
            for &(kb, xb, b) in &entries[q + 1..] {
                if kb != k || xb > xa + s {
                    break;
                }
                let (ya, yb) = (lo[a as usize][1], lo[b as usize][1]);
                if (ya - yb).abs() <= s && stripe(ya.max(yb)) == k {
                    let (i, j) = (a.min(b), a.max(b));
                    out.push(u64::from(i) << 32 | u64::from(j));
                }
            }
        }
        if out.len() >= n {
            out.truncate(n);
            return out;
        }
        boxes += boxes / 8;
    }
}

/// The `n` keys of `pattern` and the bits the pipeline (and ours) sorts them on.
fn keys(pattern: &str, n: usize) -> (Vec<u64>, std::ops::Range<u32>) {
    let mut rng = Rng::new(SEED ^ n as u64);
    let random_sorted = |rng: &mut Rng| {
        let mut v: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        v.sort_unstable();
        v
    };
    match pattern {
        "random" => ((0..n).map(|_| rng.next_u64()).collect(), 0..64),
        "cell_keys" => cell_keys(n, &mut rng),
        "pair_keys" => (pair_keys(n, &mut rng), 0..64),
        "nearly_sorted" => {
            let (mut v, bits) = cell_keys(n, &mut rng);
            v.sort_unstable();
            for _ in 0..n / 100 {
                let (a, b) = (rng.below(n), rng.below(n));
                v.swap(a, b);
            }
            (v, bits)
        }
        "sorted" => (random_sorted(&mut rng), 0..64),
        "reversed" => {
            let mut v = random_sorted(&mut rng);
            v.reverse();
            (v, 0..64)
        }
        "all_equal" => (vec![0x0123_4567_89ab_cdef; n], 0..64),
        _ => panic!("unknown pattern {pattern}"),
    }
}

fn pool(t: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(t).build().expect("rayon pool")
}

/// Checks every method against `sort_unstable`, and ours against a stable sort by its key
/// bits, on every pattern (untimed).
fn check_radix(n: usize, pools: &[(usize, rayon::ThreadPool)]) {
    for p in PATTERNS {
        let (input, bits) = keys(p, n);
        let mut want = input.clone();
        want.sort_unstable();
        let mut want_ours = input.clone();
        let mask = low(bits.end);
        want_ours.sort_by_key(|&k| (k & mask) >> bits.start);
        let mut scratch = Vec::new();
        let mut v = input.clone();
        radix_sort::sort_sequential(&mut v, &mut scratch, bits.clone());
        assert!(v == want_ours, "ours_seq wrong on {p} (n = {n})");
        if p == "pair_keys" {
            let n_ids = ids(&input);
            let pairs: Vec<u64> = pools[0]
                .1
                .install(|| sort_pair_keys(parts(&input), n_ids))
                .iter()
                .map(|&[i, j]| u64::from(i) << 32 | u64::from(j))
                .collect();
            assert!(pairs == want, "pair_sort wrong on {p} (n = {n})");
        }
        for (t, pool) in pools {
            let mut v = input.clone();
            pool.install(|| radix_sort::sort(&mut v, &mut scratch, bits.clone()));
            assert!(v == want_ours, "ours/t{t} wrong on {p} (n = {n})");
            let mut v = input.clone();
            pool.install(|| v.radix_sort_unstable());
            assert!(v == want, "rdst/t{t} wrong on {p} (n = {n})");
            let mut v = input.clone();
            pool.install(|| voracious(&mut v, *t));
            assert!(v == want, "voracious/t{t} wrong on {p} (n = {n})");
        }
    }
    println!("radix: every method checked on every pattern at n = {n}");
}

/// The parts a pair stage gets: the keys cut into 16 runs, as sweep chunks leave them.
fn parts(keys: &[u64]) -> Vec<Vec<u64>> {
    keys.chunks(keys.len().div_ceil(16).max(1)).map(|c| c.to_vec()).collect()
}

/// Boxes the pair keys name: one more than the largest index.
fn ids(keys: &[u64]) -> usize {
    keys.iter().map(|&k| k as u32 as usize + 1).max().unwrap_or(0)
}

/// `voracious_sort` on one thread, `voracious_mt_sort(t)` on more (call it inside a pool of
/// `t` threads: below 2M u64 keys it is rayon's `par_sort_unstable` on the current pool).
fn voracious(v: &mut Vec<u64>, t: usize) {
    if t == 1 {
        v.voracious_sort();
    } else {
        v.voracious_mt_sort(t);
    }
}

/// Times `sort` on copies of `input` (the copy untimed) inside `pool` (or none).
fn bench_sort(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: BenchmarkId,
    input: &[u64],
    pool: Option<&rayon::ThreadPool>,
    mut sort: impl FnMut(&mut Vec<u64>) + Send,
) {
    g.bench_function(id, |b| {
        let mut run = || {
            b.iter_batched(
                || input.to_vec(),
                |mut v| {
                    sort(&mut v);
                    v
                },
                BatchSize::LargeInput,
            )
        };
        match pool {
            Some(p) => p.install(run),
            None => run(),
        }
    });
}

fn bench_radix(c: &mut Criterion) {
    let sizes = sizes();
    let pools: Vec<(usize, rayon::ThreadPool)> = THREADS.iter().map(|&t| (t, pool(t))).collect();
    if let Some(&n) = sizes.iter().min() {
        check_radix(n, &pools);
    }

    for &n in &sizes {
        let mut g = c.benchmark_group(format!("radix/{n}"));
        g.throughput(Throughput::Elements(n as u64));
        g.measurement_time(RADIX_TIME);
        let mut scratch: Vec<u64> = Vec::with_capacity(n);
        for p in PATTERNS {
            let (input, bits) = keys(p, n);
            for (t, pool) in &pools {
                bench_sort(&mut g, BenchmarkId::new(format!("ours/t{t}"), p), &input, Some(pool), |v| {
                    radix_sort::sort(v, &mut scratch, bits.clone())
                });
            }
            bench_sort(&mut g, BenchmarkId::new("ours_seq", p), &input, None, |v| {
                radix_sort::sort_sequential(v, &mut scratch, bits.clone())
            });
            bench_sort(&mut g, BenchmarkId::new("sort_unstable", p), &input, None, |v| v.sort_unstable());
            if p == "pair_keys" {
                let n_ids = ids(&input);
                for (t, pool) in &pools {
                    g.bench_function(BenchmarkId::new(format!("pair_sort/t{t}"), p), |b| {
                        pool.install(|| {
                            b.iter_batched(
                                || parts(&input),
                                |parts| sort_pair_keys(parts, n_ids),
                                BatchSize::LargeInput,
                            )
                        })
                    });
                }
            }
            for (t, pool) in &pools {
                bench_sort(&mut g, BenchmarkId::new(format!("rdst/t{t}"), p), &input, Some(pool), |v| {
                    v.radix_sort_unstable()
                });
            }
            for (t, pool) in &pools {
                bench_sort(&mut g, BenchmarkId::new(format!("voracious/t{t}"), p), &input, Some(pool), |v| {
                    voracious(v, *t)
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
