//! Extreme values: huge and negative coordinates, signed zeros, sizes over six orders
//! of magnitude, long thin boxes.

use super::*;

fn huge_scene<const D: usize>(seed: u64) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(seed);
    let mut boxes: Vec<Aabb<D>> = Vec::new();
    // Boxes around +-1e30 with sizes 1e28..1e29.
    for _ in 0..300 {
        let mut min = [0.0; D];
        let mut size = [0.0; D];
        for k in 0..D {
            let sign = if rng.chance(0.5) { -1.0 } else { 1.0 };
            min[k] = sign * rng.range(0.5e30, 1.5e30);
            size[k] = rng.range(1.0e28, 1.0e29);
        }
        boxes.push(boxed(min, size));
    }
    // Boxes spanning -1e30..1e30 on one axis, narrow on the others.
    for _ in 0..40 {
        let axis = rng.below(D);
        let mut min = [0.0; D];
        let mut max = [0.0; D];
        for k in 0..D {
            if k == axis {
                min[k] = -1.0e30;
                max[k] = 1.0e30;
            } else {
                min[k] = rng.range(-1.0e30, 1.0e30);
                max[k] = min[k] + 1.0e28;
            }
        }
        boxes.push(Aabb::new(min, max));
    }
    // f32::MAX-ish finite values.
    boxes.push(Aabb::new([3.0e38; D], [f32::MAX; D]));
    boxes.push(Aabb::new([-f32::MAX; D], [-3.0e38; D]));
    boxes.push(Aabb::new([-f32::MAX; D], [f32::MAX; D]));
    boxes.push(Aabb::new([f32::MAX; D], [f32::MAX; D]));
    boxes.push(Aabb::new([-f32::MAX; D], [-f32::MAX; D]));
    boxes.push(Aabb::new([-3.0e38; D], [-3.0e38; D]));
    boxes.push(Aabb::new([3.0e38; D], [3.0e38; D]));
    // Tiny boxes near the origin, separated by tiny gaps: exactness must survive the
    // enormous scene extent.
    for i in 0..200 {
        let x = i as f32 * 1.0e-3;
        let mut min = [0.0; D];
        let mut max = [0.0; D];
        min[0] = x;
        max[0] = x + if i % 2 == 0 { 1.0e-3 } else { 0.9e-3 }; // touch, or miss by 1e-4
        for k in 1..D {
            min[k] = 0.0;
            max[k] = 1.0e-3;
        }
        boxes.push(Aabb::new(min, max));
    }
    // A few near-misses at 1e30: gaps of one ulp.
    for i in 0..20 {
        let mut min = [1.0e30; D];
        min[0] = 1.0e30 + i as f32 * 1.0e24;
        let mut max = min;
        max[0] = next_down(1.0e30 + (i + 1) as f32 * 1.0e24);
        boxes.push(Aabb::new(min, max));
    }
    rng.shuffle(&mut boxes);
    boxes
}

fn huge_coordinates_for<const D: usize>(seed: u64) {
    let boxes = huge_scene::<D>(seed);
    check_scene(
        &format!("huge_coordinates D = {D} seed = {seed:#x}"),
        &boxes,
        &[1.0e-3, -1.0e-4, 1.0e28, -1.0e29],
    );
}

#[test]
fn huge_coordinates() {
    huge_coordinates_for::<1>(31);
    huge_coordinates_for::<2>(32);
    huge_coordinates_for::<3>(33);
}

/// A finite margin that makes grown coordinates overflow to +-infinity (e.g. f32::MAX + 1e38)
/// is legal input; the result must still equal the reference.
#[test]
fn huge_coordinates_margin_overflows_to_infinity() {
    fn go<const D: usize>(seed: u64) {
        let boxes = huge_scene::<D>(seed);
        let name = format!("huge_coordinates_margin_overflows D = {D} seed = {seed:#x}");
        for margin in [1.0e38f32, f32::MAX, -f32::MAX] {
            let want = brute(&boxes, margin);
            for t in tuning_configs::<D>() {
                let c = t.with_margin(margin);
                check_against(&name, &boxes, &c, &want).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }
    go::<1>(41);
    go::<2>(42);
    go::<3>(43);
}

fn negative_coordinates_for<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    // All strictly negative.
    let mut boxes: Vec<Aabb<D>> = uniform(&mut rng, 800, 999.0, 30.0);
    for b in boxes.iter_mut() {
        for k in 0..D {
            b.min[k] -= 1030.0;
            b.max[k] -= 1030.0;
        }
    }
    check_scene(&format!("negative_coordinates (all < 0) D = {D}"), &boxes, &[1.0, -0.5]);
    // Straddling zero, with touching at 0 via -0.0 / 0.0 and negative lattice values.
    let mut boxes: Vec<Aabb<D>> = Vec::new();
    for _ in 0..600 {
        let mut min = [0.0; D];
        let mut max = [0.0; D];
        for k in 0..D {
            let a = rng.below(21) as f32 - 10.0;
            let b = a + rng.below(4) as f32;
            min[k] = if a == 0.0 && rng.chance(0.5) { -0.0 } else { a };
            max[k] = if b == 0.0 && rng.chance(0.5) { -0.0 } else { b };
        }
        boxes.push(Aabb::new(min, max));
    }
    check_scene(&format!("negative_coordinates (straddling 0) D = {D}"), &boxes, &[0.5, -0.25]);
}

#[test]
fn negative_coordinates() {
    negative_coordinates_for::<1>(51);
    negative_coordinates_for::<2>(52);
    negative_coordinates_for::<3>(53);
}

/// -0.0 and 0.0 compare equal: a box ending at -0.0 touches one starting at 0.0 (a
/// bit-pattern sort key that treats -0.0 as "below" or as a huge value would miss this).
fn signed_zeros_for<const D: usize>() {
    let mut boxes: Vec<Aabb<D>> = Vec::new();
    for i in 0..50 {
        let s = 1.0 + i as f32;
        boxes.push(Aabb::new([-s; D], [-0.0; D]));
        boxes.push(Aabb::new([0.0; D], [s; D]));
        boxes.push(Aabb::new([-0.0; D], [-0.0; D]));
        boxes.push(Aabb::new([0.0; D], [-0.0; D])); // min 0.0, max -0.0: valid, a point
        boxes.push(Aabb::new([-0.0; D], [0.0; D]));
    }
    let want = brute(&boxes, 0.0);
    assert_eq!(want.len(), choose2(boxes.len()), "every box contains the origin");
    check_scene(&format!("signed_zeros D = {D}"), &boxes, &[1.0e-30, -1.0e-30]);
}

#[test]
fn signed_zeros() {
    signed_zeros_for::<1>();
    signed_zeros_for::<2>();
    signed_zeros_for::<3>();
}

fn mixed_sizes_six_orders_for<const D: usize>(seed: u64, n: usize) {
    let mut rng = Rng::new(seed);
    let boxes: Vec<Aabb<D>> = (0..n)
        .map(|_| {
            let mut min = [0.0; D];
            let mut size = [0.0; D];
            let s = rng.log_uniform(-3.0, 3.0);
            for k in 0..D {
                min[k] = rng.range(0.0, 2000.0);
                // Mostly cube-ish, sometimes independent per axis.
                size[k] = if rng.chance(0.7) { s } else { rng.log_uniform(-3.0, 3.0) };
            }
            boxed(min, size)
        })
        .collect();
    check_scene(
        &format!("mixed_sizes_six_orders D = {D} n = {n} seed = {seed:#x}"),
        &boxes,
        &[1.0e-3, -1.0e-3],
    );
}

#[test]
fn mixed_sizes_six_orders() {
    mixed_sizes_six_orders_for::<1>(61, 1500);
    mixed_sizes_six_orders_for::<2>(62, 2500);
    mixed_sizes_six_orders_for::<3>(63, 2500);
}

fn long_thin_for<const D: usize>(seed: u64, n: usize) {
    let mut rng = Rng::new(seed);
    let boxes: Vec<Aabb<D>> = (0..n)
        .map(|_| {
            // Planks: long on one axis. Walls (3D): long on two.
            let long_axes = if D == 3 && rng.chance(0.4) { 2 } else { 1 };
            let first = rng.below(D);
            let mut min = [0.0; D];
            let mut size = [0.0; D];
            for k in 0..D {
                let long = (k + D - first) % D < long_axes;
                min[k] = rng.range(0.0, 500.0);
                size[k] = if long { rng.range(100.0, 500.0) } else { rng.range(0.0, 0.5) };
            }
            boxed(min, size)
        })
        .collect();
    check_scene(&format!("long_thin D = {D} n = {n} seed = {seed:#x}"), &boxes, &[0.05, -0.005]);
}

#[test]
fn long_thin() {
    long_thin_for::<2>(71, 1200);
    long_thin_for::<3>(72, 1000);
}
