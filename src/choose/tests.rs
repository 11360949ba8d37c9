//! Tests of the scan and the trim sample: the float sort, strays left out, ties and the
//! sample's sweep counted; `Auto`'s choice on small scenes.

use super::scan::scan_scene;
use super::trim::sort_total;
use crate::Aabb;

/// The integer sort of floats is `total_cmp`'s order, bit for bit: signed zeros,
/// infinities, NaNs of either sign, subnormals, repeats, and random bit patterns.
#[test]
fn sort_total_is_total_cmp() {
    let mut r = crate::internals::scene::Rng::new(9);
    let special = [
        0.0f32,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::MIN_POSITIVE / 4.0,
        -f32::MIN_POSITIVE / 4.0,
        f32::MAX,
        f32::MIN,
        1.0,
        -1.0,
    ];
    for len in [0usize, 1, 2, 17, 512, 3000] {
        let mut v: Vec<f32> = (0..len)
            .map(|i| match i % 3 {
                0 => special[r.below(special.len())],
                1 => f32::from_bits(r.next_u64() as u32),
                _ => (r.below(41) as f32 - 20.0) * 0.5,
            })
            .collect();
        let mut want = v.clone();
        want.sort_unstable_by(f32::total_cmp);
        sort_total(&mut v);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&v), bits(&want), "len {len}");
    }
}

#[test]
fn trim_leaves_strays_out_and_scenes_alone() {
    let mut boxes = crate::internals::scene::uniform::<3>(5000, 4);
    let w = crate::internals::scene::world_side::<3>(5000) as f32;
    let plain = {
        let mut st = scan_scene(&boxes, 0.0);
        let before = (st.min, st.max, st.best(), st.mean_extent(0));
        st.trim_boxes(&boxes, 0.0);
        assert_eq!(before, (st.min, st.max, st.best(), st.mean_extent(0)), "no strays: unchanged");
        st
    };
    // Strays: far boxes, one of them huge, at spread-out indices.
    for (i, at) in [(100, 1.0e9f32), (2000, -1.0e9), (4000, 1.0e30)] {
        boxes.insert(i, Aabb::new([at; 3], [at * 1.5_f32.copysign(at) + 1.0; 3]));
    }
    let mut st = scan_scene(&boxes, 0.0);
    assert!(st.max[0] > 1.0e29);
    st.trim_boxes(&boxes, 0.0);
    for k in 0..3 {
        assert!(st.min[k] >= -0.1 * w && st.max[k] <= 1.2 * w, "axis {k}: {} {}", st.min[k], st.max[k]);
        assert!(st.mean_extent(k) < 2.0 * plain.mean_extent(k), "axis {k}: {}", st.mean_extent(k));
    }
    let (per_trim, per_plain) = (st.best().1, plain.best().1);
    assert!(per_trim > 0.5 * per_plain && per_trim < 2.0 * per_plain, "{per_trim} vs {per_plain}");
}

/// Zero-size boxes at integer coordinates (20 values an axis) have no extent, but a
/// whole-scene sweep tests every box with the same lower bound: the estimate must see
/// those ties (about n / 20 / 2 a box), and continuous scenes must have none.
#[test]
fn estimate_counts_equal_lower_bounds() {
    let mut r = crate::internals::scene::Rng::new(8);
    let n = 20_000;
    let points: Vec<Aabb<3>> = (0..n)
        .map(|_| {
            let p = [0; 3].map(|_: i32| r.below(20) as f32);
            Aabb::new(p, p)
        })
        .collect();
    let mut st = scan_scene(&points, 0.0);
    assert_eq!(st.best().1, 0.0);
    st.trim_boxes(&points, 0.0);
    let per_box = st.best().1;
    let want = n as f64 / 20.0 / 2.0;
    assert!(per_box > 0.7 * want && per_box < 1.3 * want, "{per_box} vs {want}");
    assert_eq!(st.density(st.best().0), 0.0, "the level model's density leaves ties out");
    let uniform = crate::internals::scene::uniform::<3>(n, 9);
    let mut st = scan_scene(&uniform, 0.0);
    st.trim_boxes(&uniform, 0.0);
    assert!(st.ties.iter().all(|&t| t == 0.0), "{:?}", st.ties);
}

/// The sample's own sweep counted by ranks is the sweep's count: random samples, touching
/// and equal bounds, zero sizes, one box.
#[test]
fn sweep_tests_by_ranks_counts_the_sweep() {
    let mut r = crate::internals::scene::Rng::new(11);
    for (len, grid) in [(1usize, 0usize), (2, 3), (64, 0), (300, 7), (512, 0), (512, 40)] {
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        for _ in 0..len {
            // On a coarse grid of values where `grid` > 0: equal and touching bounds.
            let v = |r: &mut crate::internals::scene::Rng| {
                if grid > 0 {
                    r.below(grid) as f32
                } else {
                    r.range_f64(-50.0, 50.0) as f32
                }
            };
            let (a, b) = (v(&mut r), v(&mut r));
            let b = if r.below(4) == 0 { a } else { b };
            lo.push(a.min(b));
            hi.push(a.max(b));
        }
        let mut want = 0;
        for i in 0..len {
            for j in 0..len {
                // `j` after `i` in the sweep: a greater lower bound, or an equal one later.
                let after = lo[j] > lo[i] || (lo[j] == lo[i] && j > i);
                want += (after && lo[j] <= hi[i]) as usize;
            }
        }
        let (mut l, mut h) = (lo.clone(), hi.clone());
        super::trim::sort_total(&mut l);
        super::trim::sort_total(&mut h);
        assert_eq!(super::trim::sweep_tests(&l, &h), want as f64, "{len} boxes, grid {grid}");
    }
}

/// The choice `Auto` makes for `boxes`, as the pipeline makes it, and the cliff estimate.
fn auto_choice<const D: usize>(boxes: &[Aabb<D>]) -> (crate::Method, f64, f64) {
    let mut st = scan_scene(boxes, 0.0);
    let sample = super::TrimSample::take(boxes, 0.0);
    let full = (st.min, st.max);
    if let Some(t) = &sample {
        st.trim(t);
    }
    let narrowed = full != (st.min, st.max);
    let (axis, per_box) = (st.best().0, st.sweep_best().1);
    let (col, pairs) = sample.as_ref().map_or((0.0, 0.0), |t| t.column_tests(axis, st.count()));
    (super::choose::<D>(crate::Method::Auto, &st, sample.as_ref(), axis, per_box, narrowed), col, pairs)
}

/// `Auto` takes the tree on the staircase, at every size, and never on the scenes the
/// columns or the sweep serve: every generator of `internals::scene` and parked boxes,
/// from 10k to 1M boxes, and the sticks (long, but few crossing) up to 100k, where the
/// columns win.
#[test]
fn auto_takes_the_tree_on_the_staircase_alone() {
    use crate::internals::{cliffs, scene};
    fn check<const D: usize>(n: usize) {
        let (c, col, pairs) = auto_choice(&cliffs::staircase::<D>(n));
        assert_eq!(c, crate::Method::Tree, "{D}D staircase {n}: {col} candidates, {pairs} pairs a box");
        let mut names: Vec<String> = scene::SCENES.iter().map(|s| s.to_string()).collect();
        names.extend(["parked:10:1e9".into(), "parked:50:1e5".into()]);
        if n <= 100_000 {
            names.push("sticks".into());
        }
        for name in names.iter().filter(|s| s.as_str() != "all_overlapping") {
            let boxes = crate::internals::by_name::<D>(name, n, 1).unwrap();
            let (c, col, pairs) = auto_choice(&boxes);
            assert_ne!(c, crate::Method::Tree, "{D}D {name} {n}: {col} candidates, {pairs} pairs a box");
        }
    }
    for n in [10_000, 100_000, 1_000_000] {
        check::<2>(n);
        check::<3>(n);
    }
}

/// `Auto`'s choice on small versions of the scenes where each method runs fastest
/// (benches/scaling.rs, `docs/BENCHMARKS.md`): a few long boxes among many of one size
/// take the grid, the staircase the tree, small sparse scenes the whole-scene sweep, and
/// dense scenes of one size, of widely spread sizes, and sticks the columns; with boxes
/// parked far away, what the rest would take.
#[test]
fn auto_takes_the_fastest_method_on_each_scene() {
    use crate::Method::{Columns, Grid, Sweep, Tree};
    fn check<const D: usize>(name: &str, n: usize, want: crate::Method) {
        let boxes = crate::internals::by_name::<D>(name, n, 1).unwrap();
        let (c, col, pairs) = auto_choice(&boxes);
        assert_eq!(c, want, "{D}D {name} {n}: {col} candidates, {pairs} pairs a box");
    }
    for n in [10_000, 30_000] {
        check::<2>("mixed", n, Grid);
        check::<3>("mixed", n, Grid);
        check::<2>("tiles", n, Grid);
        check::<3>("tiles", n, Grid);
        check::<2>("staircase", n, Tree);
        check::<3>("staircase", n, Tree);
        for name in ["uniform", "clustered", "varied", "sticks"] {
            check::<3>(name, n, Columns);
        }
        // Ten or thirty crowds over the map: clumps the extents do not see.
        check::<2>("clustered", n, Columns);
        check::<2>("sticks", n, Columns);
    }
    for name in ["uniform", "varied", "terrain"] {
        check::<2>(name, 3_000, Sweep);
    }
    check::<2>("clustered", 2_000, Sweep);
    check::<3>("uniform", 1_000, Sweep);
    // Parked boxes are found apart, so the bulk decides: a sparse 2D bulk is swept
    // (whatever share is parked), a dense one and 3D take the columns.
    for name in ["parked:10:1e9", "parked:50:1e9"] {
        check::<2>(name, 10_000, Sweep);
        check::<2>(name, 100_000, Columns);
        check::<3>(name, 10_000, Columns);
    }
}
