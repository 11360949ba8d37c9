//! Edge cases with exact answers: no box, one box, identical boxes, zero extents,
//! lattices that touch on faces, edges and corners, boxes on cell boundaries, outside the
//! world's bounds, and far strays.

use super::*;

fn empty_for<const D: usize>() {
    let none: [Aabb<D>; 0] = [];
    assert_eq!(find_pairs(&none), Ok(vec![]), "find_pairs on empty input, D = {D}");
    for t in tuning_configs::<D>() {
        for bounds in [None, Some(Aabb::new([0.0; D], [1.0; D])), Some(Aabb::new([5.0; D], [5.0; D]))] {
            for margin in [0.0, 1.0, -1.0] {
                let c = t.with_margin(margin).with_bounds(bounds);
                assert_eq!(find_pairs_with(&none, &c), Ok(vec![]), "empty input, D = {D}, {c:?}");
                let mut bp = Broadphase::new(c).unwrap();
                let mut out = vec![[0, 1]];
                bp.find_pairs(&none, &mut out).unwrap();
                assert!(out.is_empty(), "Broadphase on empty input must clear out, D = {D}, {c:?}");
            }
        }
    }
}

#[test]
fn empty() {
    empty_for::<1>();
    empty_for::<2>();
    empty_for::<3>();
}

fn one_box_for<const D: usize>() {
    for b in [
        Aabb::new([0.0; D], [1.0; D]),
        Aabb::new([3.0; D], [3.0; D]),
        Aabb::new([-1.0e30; D], [1.0e30; D]),
        Aabb::new([-f32::MAX; D], [f32::MAX; D]),
    ] {
        assert_eq!(find_pairs(&[b]), Ok(vec![]), "one box {b:?}");
        // Margins that grow, shrink to a point, and turn it inside out.
        for margin in [0.0, 10.0, -0.5, -2.0] {
            let c = Config::default().with_margin(margin);
            assert_eq!(find_pairs_with(&[b], &c), Ok(vec![]), "one box {b:?} margin {margin}");
        }
        check_scene("one_box", &[b], &[5.0, -5.0]);
    }
}

#[test]
fn one_box() {
    one_box_for::<1>();
    one_box_for::<2>();
    one_box_for::<3>();
}

fn all_identical_for<const D: usize>() {
    let n = 300;
    for b in [Aabb::new([1.0; D], [2.0; D]), Aabb::new([0.3; D], [0.3; D])] {
        let boxes = vec![b; n];
        let want = brute(&boxes, 0.0);
        assert_eq!(want.len(), choose2(n), "all identical: every pair overlaps");
        check_scene(&format!("all_identical {b:?}"), &boxes, &[0.1, -1.0e-3]);
    }
    // Unit boxes shrunk by exactly half their extent become points: still all overlap.
    let boxes = vec![Aabb::new([1.0; D], [2.0; D]); n];
    let c = Config::default().with_margin(-0.5);
    assert_eq!(got(&boxes, &c).len(), choose2(n), "unit boxes shrunk to identical points must all overlap");
    // ...and a little more turns them inside out: no pairs at all.
    for margin in [-0.5 - 1.0 / 1024.0, -0.75, -0.501] {
        assert_eq!(brute(&boxes, margin).len(), 0, "margin {margin} inverts unit boxes");
        for t in tuning_configs::<D>() {
            let c = t.with_margin(margin);
            assert_eq!(
                got(&boxes, &c),
                Vec::<[u32; 2]>::new(),
                "inverted identical boxes must yield no pairs, {c:?}"
            );
        }
    }
}

#[test]
fn all_identical() {
    all_identical_for::<1>();
    all_identical_for::<2>();
    all_identical_for::<3>();
}

fn zero_extent_for<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    let mut boxes: Vec<Aabb<D>> = Vec::new();
    // Points on an integer lattice, some repeated.
    for _ in 0..400 {
        let mut p = [0.0; D];
        for v in p.iter_mut() {
            *v = rng.below(12) as f32;
        }
        boxes.push(Aabb::new(p, p));
    }
    // Flat boxes: zero extent on one or more axes, lying on lattice planes/lines so they
    // touch points and each other exactly.
    for _ in 0..300 {
        let mut min = [0.0; D];
        let mut max = [0.0; D];
        for k in 0..D {
            min[k] = rng.below(12) as f32;
            max[k] = if rng.chance(0.5) { min[k] } else { min[k] + rng.below(5) as f32 };
        }
        boxes.push(Aabb::new(min, max));
    }
    // Points at non-lattice floats, and boxes whose faces are exactly those floats.
    for _ in 0..100 {
        let mut p = [0.0; D];
        for v in p.iter_mut() {
            *v = rng.range(0.0, 12.0);
        }
        boxes.push(Aabb::new(p, p));
        let mut q = p;
        q[0] += 1.0;
        boxes.push(Aabb::new(p, q)); // shares the point as its min corner
    }
    rng.shuffle(&mut boxes);
    let want = brute(&boxes, 0.0);
    assert!(!want.is_empty());
    check_scene(&format!("zero_extent D = {D} seed = {seed:#x}"), &boxes, &[0.5, -1.0e-4]);
}

#[test]
fn zero_extent() {
    zero_extent_for::<1>(1);
    zero_extent_for::<2>(2);
    zero_extent_for::<3>(3);
}

/// Number of closed-overlap pairs among a full a^D lattice of unit cells that share faces,
/// edges and corners: every cell touches its 3^D - 1 neighbours.
fn lattice_pairs(a: usize, d: usize) -> usize {
    // Sum over half of the neighbour offsets (lexicographically positive) of the number of
    // cells that have that neighbour.
    let mut total = 0;
    let offsets = 3usize.pow(d as u32);
    for code in 0..offsets {
        let mut off = Vec::new();
        let mut c = code;
        for _ in 0..d {
            off.push(c as i64 % 3 - 1);
            c /= 3;
        }
        let first_nonzero = off.iter().rev().find(|&&o| o != 0);
        if first_nonzero != Some(&1) {
            continue; // zero offset or the mirrored half
        }
        total += off.iter().map(|&o| a - o.unsigned_abs() as usize).product::<usize>();
    }
    total
}

pub(crate) fn lattice<const D: usize>(a: usize, coords: &[f32]) -> Vec<Aabb<D>> {
    assert_eq!(coords.len(), a + 1);
    let cells = a.pow(D as u32);
    (0..cells)
        .map(|mut c| {
            let mut min = [0.0; D];
            let mut max = [0.0; D];
            for k in 0..D {
                let i = c % a;
                c /= a;
                min[k] = coords[i];
                max[k] = coords[i + 1]; // the neighbour's min: the very same float
            }
            Aabb::new(min, max)
        })
        .collect()
}

fn touching_for<const D: usize>(a: usize) {
    let expected = lattice_pairs(a, D);
    let integer: Vec<f32> = (0..=a).map(|i| i as f32).collect();
    let tenths: Vec<f32> = (0..=a).map(|i| i as f32 * 0.1).collect();
    let shifted: Vec<f32> = (0..=a).map(|i| -1.7 + i as f32 * 0.3).collect();
    for (label, coords) in [("integer", &integer), ("0.1 steps", &tenths), ("-1.7 + 0.3 steps", &shifted)] {
        let mut boxes = lattice::<D>(a, coords);
        let name = format!("touching {label} D = {D} a = {a}");
        let want = brute(&boxes, 0.0);
        assert_eq!(want.len(), expected, "{name}: brute force disagrees with the lattice count");
        check_scene(&name, &boxes, &[-1.0e-4]);
        // A tiny negative margin separates every touching pair.
        for t in tuning_configs::<D>() {
            let c = t.with_margin(-1.0e-4);
            assert_eq!(
                got(&boxes, &c),
                Vec::<[u32; 2]>::new(),
                "{name}: margin -1e-4 must separate all, {c:?}"
            );
        }
        // Shuffled input order.
        let mut rng = Rng::new(a as u64 * 31 + D as u64);
        rng.shuffle(&mut boxes);
        check(&format!("{name} shuffled"), &boxes, &Config::default()).unwrap_or_else(|e| panic!("{e}"));
    }
    // Gaps of exactly 0.5 closed by a margin of exactly 0.25.
    let gapped: Vec<f32> = (0..=a).map(|i| i as f32 * 1.5).collect();
    let boxes: Vec<Aabb<D>> = lattice::<D>(a, &gapped)
        .into_iter()
        .map(|mut b| {
            for k in 0..D {
                b.max[k] -= 0.5;
            }
            b
        })
        .collect();
    assert_eq!(brute(&boxes, 0.0).len(), 0);
    assert_eq!(brute(&boxes, 0.25).len(), expected);
    check_scene(&format!("touching gapped D = {D}"), &boxes, &[0.25, next_down(0.25)]);
    for t in tuning_configs::<D>() {
        let c = t.with_margin(0.25);
        assert_eq!(got(&boxes, &c).len(), expected, "margin 0.25 must close 0.5 gaps exactly, {c:?}");
    }
}

#[test]
fn touching() {
    touching_for::<1>(1000);
    touching_for::<2>(20);
    touching_for::<3>(7);
}

fn on_cell_boundary_for<const D: usize>(seed: u64, lo: f32, hi: f32) {
    let mut rng = Rng::new(seed);
    let span = hi - lo;
    let mut boxes: Vec<Aabb<D>> = Vec::new();
    // Pin the implicit bounds to exactly [lo, hi]^D, and put points on the extreme corners
    // and faces (the top face is a classic off-by-one in quantisation).
    boxes.push(Aabb::new([lo; D], [lo; D]));
    boxes.push(Aabb::new([hi; D], [hi; D]));
    boxes.push(Aabb::new([lo; D], [hi; D]));
    let mut top = [lo + span * 0.5; D];
    top[0] = hi;
    boxes.push(Aabb::new(top, top));
    for level in 1..=12u32 {
        let cells = 1u64 << level;
        let step = span / cells as f32;
        for _ in 0..12 {
            let k = rng.below(cells as usize + 1) as f32;
            let face = lo + k * step; // exact: power-of-two fraction of a power-of-two span
            let w = match rng.below(3) {
                0 => step,
                1 => step * 0.5,
                _ => rng.range(0.0, step * 2.0),
            };
            let axis = rng.below(D);
            let mut base_min = [0.0; D];
            let mut base_max = [0.0; D];
            for j in 0..D {
                // Other axes also on the boundary lattice of this level.
                let kk = rng.below(cells as usize) as f32;
                base_min[j] = lo + kk * step;
                base_max[j] = (base_min[j] + step).min(hi);
            }
            let variants = [
                ((face - w).max(lo), face),                    // ends exactly on the boundary
                (face, (face + w).min(hi)),                    // starts exactly on the boundary
                (next_up(face).min(hi), (face + w).min(hi)),   // one ulp past it
                ((face - w).max(lo), next_down(face).max(lo)), // one ulp short of it
                (face, face),                                  // flat on the boundary
            ];
            for (a, b) in variants {
                if a > b {
                    continue;
                }
                let mut min = base_min;
                let mut max = base_max;
                min[axis] = a;
                max[axis] = b;
                boxes.push(Aabb::new(min, max));
            }
        }
    }
    let name = format!("on_cell_boundary D = {D} [{lo}, {hi}] seed = {seed:#x}");
    check_scene(&name, &boxes, &[span / 1024.0, -span / 4096.0]);
    // Explicit bounds equal to the power-of-two span, and half of it.
    for t in tuning_configs::<D>() {
        for bounds in [Aabb::new([lo; D], [hi; D]), Aabb::new([lo; D], [lo + span * 0.5; D])] {
            let c = t.with_bounds(Some(bounds));
            check(&name, &boxes, &c).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn on_cell_boundary() {
    on_cell_boundary_for::<1>(11, 0.0, 1024.0);
    on_cell_boundary_for::<2>(12, 0.0, 1024.0);
    on_cell_boundary_for::<3>(13, 0.0, 1024.0);
    on_cell_boundary_for::<2>(14, -512.0, 512.0);
    on_cell_boundary_for::<3>(15, -1.0, 1.0);
}

fn outside_world_for<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    let mut boxes: Vec<Aabb<D>> = uniform(&mut rng, 1500, 2000.0, 40.0);
    for b in boxes.iter_mut() {
        for k in 0..D {
            b.min[k] -= 1000.0;
            b.max[k] -= 1000.0;
        }
    }
    let name = format!("outside_world D = {D} seed = {seed:#x}");
    let want = brute(&boxes, 0.0);
    let want_m = brute(&boxes, 3.0);
    let bounds_list = [
        Aabb::new([0.0; D], [1.0; D]),           // excludes almost everything
        Aabb::new([1.0e6; D], [1.0e6 + 1.0; D]), // far away, excludes everything
        Aabb::new([-1.0e6; D], [-1.0e6; D]),     // a far point
        Aabb::new([-1000.0; D], [-999.0; D]),    // the scene's low corner only
        Aabb::new([0.0; D], [1.0e4; D]),         // half the scene outside
        Aabb::new([-1.0e-6; D], [1.0e-6; D]),    // tiny, in the middle
    ];
    for bounds in bounds_list {
        for t in tuning_configs::<D>() {
            let c = t.with_bounds(Some(bounds));
            check_against(&name, &boxes, &c, &want).unwrap_or_else(|e| panic!("{e}"));
            let c = c.with_margin(3.0);
            check_against(&name, &boxes, &c, &want_m).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn outside_world() {
    outside_world_for::<1>(21);
    outside_world_for::<2>(22);
    outside_world_for::<3>(23);
}

/// A dense scene and a few strays far away (the grid's trimmed bounds leave them out, so
/// they are clamped to its border): strays that overlap each other, strays on both sides,
/// one stray over part of the scene, and strays at the edge of the f32 range.
fn far_strays_for<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    let mut boxes: Vec<Aabb<D>> = uniform(&mut rng, 1200, 40.0, 3.0);
    for (at, side) in [(1.0e9f32, 1.0f32), (1.0e9, 2.0), (-1.0e9, 1.0), (1.0e30, 1.0e29), (-3.0e38, 1.0e38)] {
        let i = rng.below(boxes.len());
        boxes.insert(i, Aabb::new([at; D], [at + side; D]));
    }
    // A long stray from the scene out to far away, on the first axis.
    let mut long = Aabb::new([30.0; D], [31.0; D]);
    long.max[0] = 5.0e8;
    boxes.insert(rng.below(boxes.len()), long);
    let name = format!("far_strays D = {D} seed = {seed:#x}");
    check_scene(&name, &boxes, &[0.5]);
    // The column pipeline itself, whatever `Auto` picks for this small scene.
    let want = brute(&boxes, 0.0);
    for t in tuning_configs::<D>() {
        let c = t.with_method(Method::Columns);
        check_against(&name, &boxes, &c, &want).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn far_strays() {
    far_strays_for::<1>(0xF1);
    far_strays_for::<2>(0xF2);
    far_strays_for::<3>(0xF3);
}
