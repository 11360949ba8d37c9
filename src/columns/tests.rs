//! Unit tests of the column stages: the sink, the key layout, the level model and its
//! table, the row strides, the window search and the ownership masks.

use super::layout::col_code;
use super::layout::shr32;
use super::levels::class_max;
use super::levels::cost_ratio;
use super::levels::count_at;
use super::levels::pow2;
use super::levels::size_class;
use super::levels::size_classes;
use super::levels::LevelModel;
use super::ranges::advance_to;
use super::rows::row_stride;
use super::sink::grow;
use super::sink::Sink;
use super::sink::SPILL_BLOCK;
use crate::kernels::pair_sort::PairBudget;
use crate::kernels::simd::low_mask;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Mutex;

use super::*;

/// Every key comes back: the slice's in push order, the spilled ones once each, over
/// slices and spills of several sizes (a spill holding keys of other chunks before).
#[test]
fn sink_keeps_every_key() {
    for (case, &(slots, n, before)) in [
        (10usize, 3 * SPILL_BLOCK + 5, 0usize),
        (0, SPILL_BLOCK, 3),
        (4, 7, 0),
        (1, 2 * SPILL_BLOCK + 1, 1),
        (0, 0, 0),
    ]
    .iter()
    .enumerate()
    {
        let mut buf = vec![0u64; slots];
        let spill = Mutex::new(vec![[5u32, 5]; before]);
        let budget = PairBudget::new(None);
        let mut sink = Sink::new(&mut buf, &spill, Some((2, 62)), SPILL_BLOCK, &budget);
        let want: Vec<u64> = (0..n as u64).map(|k| k * 7 + case as u64).collect();
        for &k in &want {
            sink.push(k);
        }
        let keys = sink.finish(0);
        let len = keys.len;
        assert_eq!(len, slots.min(n), "case {case}");
        // Counted by the top two bits (all zero here), and placed where the blocks say.
        assert_eq!(keys.hist, vec![n as u32, 0, 0, 0], "case {case}");
        let placed: usize = keys.blocks.iter().map(|b| b.1).sum();
        assert_eq!(placed, n - len, "case {case}");
        assert_eq!(buf[..len], want[..len], "case {case}");
        let spill = spill.into_inner().unwrap();
        assert_eq!(spill[..before], vec![[5u32, 5]; before][..], "case {case}");
        let mut got: Vec<u64> = spill[before..].iter().map(|&s| bytemuck::cast(s)).collect();
        got.sort_unstable();
        assert_eq!(got, want[len..], "case {case}");
    }
}

/// The spill grows by an eighth (or a block), so its unused capacity stays small.
#[test]
fn spill_grows_by_an_eighth() {
    let mut spill: Vec<[u32; 2]> = Vec::new();
    for step in 0..4000usize {
        let more = [1, SPILL_BLOCK, 3 * SPILL_BLOCK + 7, 100][step % 4];
        grow(&mut spill, more).expect("a small spill fits");
        assert!(spill.capacity() - spill.len() >= more, "step {step}: no room");
        spill.extend(std::iter::repeat_n([step as u32, 0], more));
        let slack = spill.capacity() - spill.len();
        assert!(
            slack <= (spill.len() / 8).max(3 * SPILL_BLOCK + 7),
            "step {step}: slack {slack} at {}",
            spill.len()
        );
    }
}

#[test]
fn layout_round_trips() {
    let lay = Layout { id_bits: 20, c: 2, x_bits: 21, lvl_bits: 3, key_bits: 18, l_min: 5, l_max: 9 };
    let e = lay.pack(12345, 7, 777_777, 3, 999);
    assert_eq!(lay.id(e), 999);
    assert_eq!(lay.first(e), 3);
    assert_eq!(lay.qx(e), 777_777);
    assert_eq!(lay.level(e), 7);
    assert_eq!(lay.start(e), 12345);
    // A level-7 column spans 2^(2*(7-5)) = 16 shifted starts.
    assert!(lay.pack(12345 + 15, 5, (1 << 21) - 1, 3, (1 << 20) - 1) <= lay.last_nested(e));
    assert!(lay.pack(12345 + 16, 5, 0, 0, 0) > lay.last_nested(e));
}

/// A world as wide as the grid on both column axes.
fn full(bits: u32) -> [f64; 2] {
    [pow2(bits); 2]
}

/// Boxes on one plane (a 2D scene laid out in 3D: `z = 0` for all, swept along `x`, so
/// the columns are over `y` and `z`): a column's cross-section inside the world is a
/// strip `2^l` by one unit, not a square, and a unit square keeps one or two columns.
/// Taken as squares, the candidates would seem to grow as `4^l` and the same box would go
/// to many fine columns.
#[test]
fn flat_world_keeps_columns_coarse() {
    // 200k unit squares over 894 x 894 world units, 21 bits: a square is 2,345 grid
    // units wide; a whole-scene sweep along x tests about 224 boxes a box.
    let lambda = 224.0 / pow2(21) * cost_ratio();
    let (qlo, qhi) = ([1000, 0], [3345, 0]);
    let flat = LevelModel::new(2, 21, 64, lambda, [pow2(21), 1.0]).choose(qlo, qhi);
    let square = LevelModel::new(2, 21, 64, lambda, full(21)).choose(qlo, qhi);
    assert!(flat.1 <= 2, "flat world: {flat:?}");
    assert!(square.0 < flat.0 && square.1 > 4, "square columns: {square:?} against {flat:?}");
}

#[test]
fn levels_seed_coarser_finer() {
    let choose = |c, qlo, qhi, budget, bits, lambda| {
        LevelModel::new(c, bits, budget, lambda, full(bits)).choose(qlo, qhi)
    };
    // Sparse: a box 10 units wide keeps the seed level 4 or goes coarser.
    let (l, n) = choose(2, [6, 6], [16, 16], 64, 21, 1e-12);
    assert!(l >= 4 && n <= 4, "l={l} n={n}");
    // Dense: the same box goes finer, within the budget.
    let (l, n) = choose(2, [6, 6], [16, 16], 64, 21, 1.0);
    assert!(l < 4 && n <= 64, "l={l} n={n}");
    // A plank across the columns goes finer than its seed level.
    let (l, n) = choose(2, [0, 0], [1000, 1], 64, 21, 1.0 / 64.0);
    assert!(l < 10 && n <= 64, "l={l} n={n}");
    // A point, and the whole grid.
    assert_eq!(choose(1, [5, 0], [5, 0], 16, 32, 1.0), (0, 1));
    assert_eq!(choose(2, [0; 2], [(1 << 21) - 1; 2], 8, 21, 0.0), (21, 1));
    assert_eq!(choose(1, [0, 0], [u32::MAX, 0], 4, 32, 0.0), (32, 1));
}

/// `advance_to` finds what a binary search finds, from every start at or before it, on
/// ascending values with long ties.
#[test]
fn advance_to_matches_a_binary_search() {
    let mut r = crate::internals::scene::Rng::new(7);
    for len in [0usize, 1, 2, 7, 8, 9, 100, 1000] {
        let mut v: Vec<f32> = (0..len).map(|_| r.below(len / 4 + 2) as f32).collect();
        v.sort_by(f32::total_cmp);
        for q in [-1.0, 0.0, 0.5, 1.0, (len / 8) as f32, (len / 4 + 1) as f32, 1e9] {
            let want = v.partition_point(|&h| h < q);
            for from in (0..=want).step_by(want / 64 + 1).chain([want]) {
                assert_eq!(advance_to(&v, from, q), want, "len {len} q {q} from {from}");
            }
        }
    }
}

#[test]
fn size_classes_bound_their_extents() {
    let mut r = crate::internals::scene::Rng::new(5);
    let sample = (0..70_000u32).chain((0..100_000).map(|_| r.next_u64() as u32 >> (r.next_u64() % 32)));
    for e in sample.chain([u32::MAX, u32::MAX - 1, 1 << 31]) {
        let k = size_class(e);
        assert!(k < 240, "{e}");
        let top = class_max(k);
        assert!(top >= e && size_class(top) == k, "e={e} k={k} top={top}");
        // Within 12.5% of the class's largest extent.
        assert!(top as u64 - e as u64 <= (top as u64 >> 3), "e={e} top={top}");
        if e > 0 {
            assert!(size_class(e - 1) <= k);
        }
    }
}

#[test]
fn cached_levels_match_the_model_and_keep_the_budget() {
    let mut r = crate::internals::scene::Rng::new(11);
    for &(c, bits, budget, lambda) in
        &[(2, 21, 8, 1e-9), (2, 21, 64, 1e-3), (1, 32, 4, 1e-6), (1, 32, 4096, 1.0)]
    {
        let model = LevelModel::new(c, bits, budget, lambda, full(bits));
        let mut memo = LevelTable::default();
        memo.begin(c, 20_000);
        for _ in 0..20_000 {
            let top = (1u64 << bits) - 1;
            let mut qlo = [0u32; 2];
            let mut qhi = [0u32; 2];
            for k in 0..c as usize {
                let a = (r.next_u64() % (top + 1)) as u32;
                let w = (r.next_u64() >> (r.next_u64() % 64)) as u32;
                qlo[k] = a;
                qhi[k] = (a as u64 + w as u64).min(top) as u32;
            }
            let (l, n) = model.choose(qlo, qhi);
            assert_eq!(memo.choose(&model, qlo, qhi), (l, n));
            assert!(n <= budget.max(1 << c), "{qlo:?} {qhi:?} l={l} n={n}");
            assert_eq!(n, count_at(c, &qlo, &qhi, l));
        }
    }
}

/// The row arrays' stride: room for the rows, at most seven lines of padding (and the
/// rounding to a line), and every array's start four lines or more from every other's
/// modulo a page, for every `n` modulo a page.
#[test]
fn row_strides_stagger_the_arrays() {
    for arrays in [4, 6, 8] {
        for n in (0..3000).chain((1 << 20)..(1 << 20) + 1024) {
            let st = row_stride(n, arrays);
            assert!(st >= n && st - n.next_multiple_of(16) <= 7 * 16, "n {n}: stride {st}");
            let at: Vec<usize> = (0..arrays).map(|m| m * st % 1024).collect();
            for (a, &x) in at.iter().enumerate() {
                for &y in &at[a + 1..] {
                    let d = x.abs_diff(y);
                    assert!(d.min(1024 - d) >= 64, "n {n}, {arrays} arrays: starts {at:?}");
                }
            }
        }
    }
}

/// Each pass of the level table answers for its own model: passes alternate between
/// models that choose different levels, more passes than the slots' pass numbers hold
/// (so the slots are cleared and counted afresh on the way).
#[test]
fn level_table_forgets_between_passes() {
    let mut r = crate::internals::scene::Rng::new(12);
    for c in 1..=2u32 {
        let models = [1e-9, 1e-3].map(|lambda| LevelModel::new(c, 21, 64, lambda, full(21)));
        let mut table = LevelTable::default();
        let mut differ = 0;
        for pass in 0..600 {
            table.begin(c, 0);
            let model = &models[pass % 2];
            for _ in 0..20 {
                let mut qlo = [0u32; 2];
                let mut qhi = [0u32; 2];
                for k in 0..c as usize {
                    qlo[k] = (r.next_u64() % (1 << 20)) as u32;
                    qhi[k] = qlo[k] + (r.next_u64() % (1 << (r.next_u64() % 20))) as u32;
                }
                let want = model.choose(qlo, qhi);
                differ += (models[(pass + 1) % 2].choose(qlo, qhi) != want) as usize;
                assert_eq!(table.choose(model, qlo, qhi), want, "c={c} pass {pass}");
                assert_eq!(table.choose(model, qlo, qhi), want, "c={c} pass {pass}, again");
            }
        }
        assert!(differ > 100, "the two models should choose differently: {differ}");
    }
}

/// A scene's class pairs are close (sizes within a few octaves; 256 to 576 pairs
/// here): each is evaluated once a pass, in the tables sized for 10k and 100k boxes
/// (1,024 and 8,192 slots). A hash on the low bits, or this hash in one way, evaluates
/// some pairs more than once and fails here.
#[test]
fn level_table_evaluates_each_class_pair_once() {
    let model = LevelModel::new(2, 21, 64, 1e-9, full(21));
    let mut r = crate::internals::scene::Rng::new(5);
    for (n, octaves) in [(10_000, 2u32), (10_000, 3), (100_000, 2), (100_000, 4)] {
        let mut table = LevelTable::default();
        table.begin(2, n);
        let mut pairs = std::collections::BTreeSet::new();
        for _ in 0..20_000 {
            let mut qlo = [0u32; 2];
            let mut qhi = [0u32; 2];
            for k in 0..2 {
                qlo[k] = (r.next_u64() % (1 << 19)) as u32;
                let ext = (1u64 << 12) << (r.next_u64() % octaves as u64);
                qhi[k] = qlo[k] + (ext + r.next_u64() % ext) as u32;
            }
            pairs.insert(size_classes(2, &qlo, &qhi));
            assert_eq!(table.choose(&model, qlo, qhi), model.choose(qlo, qhi));
        }
        let evals = table.evals.load(Relaxed);
        assert_eq!(evals, pairs.len(), "n {n}, {octaves} octaves: {} slots", table.slots.len());
    }
}

/// [`Layout::represents`] against its definition on coordinates: a column at a fine
/// level nested in a coarser one, first flags at random; the entry represents its box
/// iff on every column axis it is the box's first column or starts at the coarse
/// column's edge.
#[test]
fn represents_is_first_or_at_the_edge() {
    let mut r = crate::internals::scene::Rng::new(3);
    for &(c, bits, l_min, l_max) in
        &[(2u32, 21u32, 3u32, 9u32), (2, 21, 0, 21), (1, 32, 5, 32), (1, 32, 0, 2), (0, 32, 0, 4)]
    {
        let lvl_bits = u32::BITS - (l_max - l_min).leading_zeros();
        let lay = Layout {
            id_bits: 10,
            c,
            x_bits: 8,
            lvl_bits,
            key_bits: (c * (bits - l_min)).max(1),
            l_min,
            l_max,
        };
        let top = (1u64 << bits) - 1;
        let start_of = |col: [u32; 2], level: u32| {
            col_code(c, col.map(|v| (v as u64).checked_shl(level).unwrap_or(0) as u32)) >> (c * l_min)
        };
        let mut seen = [0usize; 2];
        for _ in 0..20_000 {
            let coarse = l_min + 1 + (r.next_u64() % (l_max - l_min) as u64) as u32;
            let fine = l_min + (r.next_u64() % (coarse - l_min) as u64) as u32;
            let q: [u32; 2] =
                std::array::from_fn(|k| if k < c as usize { (r.next_u64() & top) as u32 } else { 0 });
            // The fine column at the coarse one's edge on some axes, at random elsewhere.
            let edge = r.next_u64();
            let fcol: [u32; 2] = std::array::from_fn(|k| {
                let v = if edge >> k & 1 == 1 {
                    shr32(q[k], coarse) << (coarse - fine).min(31)
                } else {
                    shr32(q[k], fine)
                };
                if k < c as usize {
                    v
                } else {
                    0
                }
            });
            let ccol = q.map(|v| shr32(v, coarse));
            let first = (r.next_u64() & 3) as u32 & low_mask(c) as u32;
            // As a u128 entry: the layouts of 21-bit levels take more than 64 bits.
            let e = lay.pack(start_of(fcol, fine), fine, 0, first, 1);
            let want = (0..c as usize)
                .all(|k| first >> k & 1 == 1 || (fcol[k] as u64) << fine == (ccol[k] as u64) << coarse);
            seen[want as usize] += 1;
            assert_eq!(
                lay.represents(e, start_of(ccol, coarse)),
                want,
                "c={c} coarse={coarse} fine={fine} first={first} fcol={fcol:?} ccol={ccol:?}"
            );
        }
        assert!(c == 0 || seen[0] > 1000 && seen[1] > 1000, "both answers: {seen:?}");
    }
}

#[test]
fn first_mask_is_the_run_rule() {
    let mut r = crate::internals::scene::Rng::new(5);
    let mut cols = Columns::<3>::default();
    for c in 1..=2u32 {
        cols.layout.c = c;
        let all = low_mask(c) as u32;
        for _ in 0..5_000 {
            cols.fst = (0..8).map(|_| (r.next_u64() as u32 & all) as u8).collect();
            let fi = r.next_u64() as u32 & all;
            let want = (0..8).filter(|&k| fi | cols.fst[k] as u32 == all).fold(0, |m, k| m | 1 << k);
            assert_eq!(cols.rows().first_mask(0, fi), want, "c={c} fi={fi} fst={:?}", cols.fst);
        }
    }
}
