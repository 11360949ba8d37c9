//! Shared helpers for the integration tests: a small deterministic RNG, scene generators,
//! and an oracle check that compares the pipeline against `brute_force_pairs` and explains
//! the first difference.
//!
//! Deliberately independent of the crate's own `scene` module.
#![allow(dead_code)]

use broadphase::{brute_force_pairs, find_pairs, find_pairs_with, Aabb, Broadphase, Config, Method, Refine};
use std::fmt::Write as _;

mod scenes;
pub use scenes::{margin, scene, structured};

// ---------------------------------------------------------------------------------------------
// RNG
// ---------------------------------------------------------------------------------------------

/// The crate's scene RNG (xoshiro256++), with the few draws the tests add.
pub use broadphase::internals::scene::Rng;

/// Test draws on top of [`Rng`].
pub trait Draws {
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32;
    /// True with probability `p`.
    fn chance(&mut self, p: f32) -> bool;
    /// 10^u for u uniform in [lo_exp, hi_exp).
    fn log_uniform(&mut self, lo_exp: f32, hi_exp: f32) -> f32;
    /// Fisher-Yates shuffle.
    fn shuffle<T>(&mut self, v: &mut [T]);
}

impl Draws for Rng {
    fn unit(&mut self) -> f32 {
        self.next_f32()
    }
    fn chance(&mut self, p: f32) -> bool {
        self.next_f32() < p
    }
    fn log_uniform(&mut self, lo_exp: f32, hi_exp: f32) -> f32 {
        10f32.powf(self.range(lo_exp, hi_exp))
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Float helpers
// ---------------------------------------------------------------------------------------------

/// The next representable f32 above `x` (finite `x` only; MSRV-safe replacement for `next_up`).
pub fn next_up(x: f32) -> f32 {
    assert!(x.is_finite());
    if x == 0.0 {
        return f32::from_bits(1);
    }
    let b = x.to_bits();
    if x > 0.0 {
        f32::from_bits(b + 1)
    } else {
        f32::from_bits(b - 1)
    }
}

/// The next representable f32 below `x`.
pub fn next_down(x: f32) -> f32 {
    -next_up(-x)
}

// ---------------------------------------------------------------------------------------------
// Scene generators (generic over D)
// ---------------------------------------------------------------------------------------------

/// A box from its min corner and its extent per axis.
pub fn boxed<const D: usize>(min: [f32; D], size: [f32; D]) -> Aabb<D> {
    let mut max = [0.0; D];
    for k in 0..D {
        max[k] = (min[k] + size[k]).min(f32::MAX);
    }
    Aabb::new(min, max)
}

/// `n` boxes on a half-unit grid of `cells` steps an axis with sides of one or two halves:
/// touching everywhere, and many identical.
pub fn touching<const D: usize>(rng: &mut Rng, n: usize, cells: usize) -> Vec<Aabb<D>> {
    (0..n)
        .map(|_| {
            let min: [f32; D] = std::array::from_fn(|_| rng.below(cells) as f32 * 0.5);
            Aabb::new(min, std::array::from_fn(|k| min[k] + (1 + rng.below(2)) as f32 * 0.5))
        })
        .collect()
}

/// `n` boxes with min corners uniform in [0, world)^D and sizes uniform in [0, max_size).
pub fn uniform<const D: usize>(rng: &mut Rng, n: usize, world: f32, max_size: f32) -> Vec<Aabb<D>> {
    (0..n)
        .map(|_| {
            let mut min = [0.0; D];
            let mut size = [0.0; D];
            for k in 0..D {
                min[k] = rng.range(0.0, world);
                size[k] = rng.range(0.0, max_size);
            }
            boxed(min, size)
        })
        .collect()
}

/// `n` boxes in `clusters` gaussian-ish clumps of radius `spread` inside [0, world)^D.
pub fn clumped<const D: usize>(
    rng: &mut Rng,
    n: usize,
    clusters: usize,
    world: f32,
    spread: f32,
    max_size: f32,
) -> Vec<Aabb<D>> {
    let centres: Vec<[f32; D]> = (0..clusters.max(1))
        .map(|_| {
            let mut c = [0.0; D];
            for v in c.iter_mut() {
                *v = rng.range(0.0, world);
            }
            c
        })
        .collect();
    (0..n)
        .map(|_| {
            let c = centres[rng.below(centres.len())];
            let mut min = [0.0; D];
            let mut size = [0.0; D];
            for k in 0..D {
                // Sum of three uniforms: a cheap bell shape.
                let off = (rng.unit() + rng.unit() + rng.unit() - 1.5) * spread;
                min[k] = c[k] + off;
                size[k] = rng.range(0.0, max_size);
            }
            boxed(min, size)
        })
        .collect()
}

/// Mostly small boxes with a sprinkling of big ones (sizes over several orders).
pub fn mixed_big_small<const D: usize>(rng: &mut Rng, n: usize, world: f32) -> Vec<Aabb<D>> {
    (0..n)
        .map(|_| {
            let big = rng.chance(0.02);
            let mut min = [0.0; D];
            let mut size = [0.0; D];
            for k in 0..D {
                min[k] = rng.range(0.0, world);
                size[k] = if big { rng.range(0.05, 0.4) * world } else { rng.range(0.0, world * 0.004) };
            }
            boxed(min, size)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Configs
// ---------------------------------------------------------------------------------------------

pub fn cfg<const D: usize>(max_cells: u32, crowded: u32, refine: Refine) -> Config<D> {
    Config::default().with_max_columns_per_box(max_cells).with_crowded_threshold(crowded).with_refine(refine)
}

/// A spread of tuning configs (margin 0, bounds None): defaults, both refiners, extreme cell
/// budgets and crowding thresholds.
pub fn tuning_configs<const D: usize>() -> Vec<Config<D>> {
    let min_cells = 1u32 << D;
    vec![
        Config::default(),
        cfg(min_cells, 64, Refine::Rdc),
        cfg(4096, 1, Refine::Sweep),
        cfg(4096, 1, Refine::Rdc),
        cfg(min_cells, 2, Refine::Sweep),
        cfg(min_cells + 1, 2, Refine::Rdc),
        cfg(64, 3, Refine::Sweep),
    ]
}

/// The bounding box of `boxes` (must be non-empty and valid).
pub fn bounds_of<const D: usize>(boxes: &[Aabb<D>]) -> Aabb<D> {
    let mut b = boxes[0];
    for x in boxes {
        for k in 0..D {
            b.min[k] = b.min[k].min(x.min[k]);
            b.max[k] = b.max[k].max(x.max[k]);
        }
    }
    b
}

/// Bounds variants for a scene: tight, a small corner, a degenerate point, far away, huge.
pub fn bounds_variants<const D: usize>(boxes: &[Aabb<D>]) -> Vec<Aabb<D>> {
    let mut v = Vec::new();
    if boxes.is_empty() {
        return v;
    }
    let t = bounds_of(boxes);
    v.push(t);
    // The lowest 1/10 corner of the scene (most boxes outside).
    let mut corner = t;
    for k in 0..D {
        let ext = (t.max[k] as f64 - t.min[k] as f64) * 0.1;
        corner.max[k] = (t.min[k] as f64 + ext) as f32;
        if corner.max[k] < corner.min[k] {
            corner.max[k] = corner.min[k];
        }
    }
    v.push(corner);
    // A zero-extent point in the middle.
    let mut point = t;
    for k in 0..D {
        let mid = ((t.min[k] as f64 + t.max[k] as f64) * 0.5) as f32;
        point.min[k] = mid;
        point.max[k] = mid;
    }
    v.push(point);
    // Far away from everything.
    v.push(Aabb::new([1.0e7; D], [1.0e7 + 1.0; D]));
    // Much larger than the scene.
    v.push(Aabb::new([-1.0e20; D], [1.0e20; D]));
    v
}

// ---------------------------------------------------------------------------------------------
// Checking
// ---------------------------------------------------------------------------------------------

/// Sorted strictly ascending (so no duplicates), i < j, j < n.
pub fn well_formed(pairs: &[[u32; 2]], n: usize) -> Result<(), String> {
    for (p, pr) in pairs.iter().enumerate() {
        let [i, j] = *pr;
        if i >= j {
            return Err(format!("pair #{p} = {pr:?} is not i < j"));
        }
        if j as usize >= n {
            return Err(format!("pair #{p} = {pr:?} indexes past n = {n}"));
        }
        if p > 0 && pairs[p - 1] >= *pr {
            return Err(format!(
                "pairs not strictly ascending at #{p}: {:?} then {pr:?} (unsorted or duplicate)",
                pairs[p - 1]
            ));
        }
    }
    Ok(())
}

fn describe_pair<const D: usize>(boxes: &[Aabb<D>], margin: f32, pr: [u32; 2]) -> String {
    let (i, j) = (pr[0] as usize, pr[1] as usize);
    match (boxes.get(i), boxes.get(j)) {
        (Some(a), Some(b)) => {
            let (ga, gb) = (a.grown(margin), b.grown(margin));
            format!(
                "[{i}, {j}]: box {i} = {a:?}, box {j} = {b:?}; grown by {margin:e}: {ga:?} / {gb:?}; \
                 overlaps(grown) = {}",
                ga.overlaps(&gb)
            )
        }
        _ => format!("[{i}, {j}]: index out of range"),
    }
}

/// Compares `got` with `want` (the brute-force reference) and explains the first differences.
pub fn compare<const D: usize>(
    ctx: &str,
    boxes: &[Aabb<D>],
    margin: f32,
    got: &[[u32; 2]],
    want: &[[u32; 2]],
) -> Result<(), String> {
    if let Err(e) = well_formed(got, boxes.len()) {
        return Err(format!("{ctx}: output malformed: {e}"));
    }
    if got == want {
        return Ok(());
    }
    // Merge the two sorted lists into missing / extra.
    let (mut a, mut b) = (0, 0);
    let (mut missing, mut extra) = (Vec::new(), Vec::new());
    while a < got.len() || b < want.len() {
        match (got.get(a), want.get(b)) {
            (Some(g), Some(w)) if g == w => {
                a += 1;
                b += 1;
            }
            (Some(g), Some(w)) if g < w => {
                extra.push(*g);
                a += 1;
            }
            (Some(_), Some(w)) => {
                missing.push(*w);
                b += 1;
            }
            (Some(g), None) => {
                extra.push(*g);
                a += 1;
            }
            (None, Some(w)) => {
                missing.push(*w);
                b += 1;
            }
            (None, None) => unreachable!(),
        }
    }
    let first = got.iter().zip(want).position(|(g, w)| g != w).unwrap_or(got.len().min(want.len()));
    let mut s = format!(
        "{ctx}: pairs differ from brute force (n = {}, D = {D}): got {} pairs, want {}; \
         {} missing, {} extra; first difference at position {first}: got {:?}, want {:?}",
        boxes.len(),
        got.len(),
        want.len(),
        missing.len(),
        extra.len(),
        got.get(first),
        want.get(first),
    );
    for m in missing.iter().take(4) {
        let _ = write!(s, "\n  MISSING {}", describe_pair(boxes, margin, *m));
    }
    for e in extra.iter().take(4) {
        let _ = write!(s, "\n  EXTRA   {}", describe_pair(boxes, margin, *e));
    }
    Err(s)
}

/// Runs `find_pairs_with`; for the default config also `find_pairs`; for the default tuning
/// (any margin and bounds) also `Broadphase::find_pairs` with a dirty `out`. Compares each
/// with `want`.
pub fn check_against<const D: usize>(
    ctx: &str,
    boxes: &[Aabb<D>],
    config: &Config<D>,
    want: &[[u32; 2]],
) -> Result<(), String> {
    let ctx = format!("{ctx} [n = {}, D = {D}, config = {config:?}]", boxes.len());
    let got = find_pairs_with(boxes, config).map_err(|e| format!("{ctx}: find_pairs_with failed: {e:?}"))?;
    compare(&format!("{ctx} find_pairs_with"), boxes, config.margin, &got, want)?;

    // `Method::Auto` picks one algorithm per scene; small test scenes would mostly get the
    // whole-scene sweep, so force each one too, to keep the Morton-cell path covered.
    if config.method == Method::Auto {
        for method in [Method::Columns, Method::Sweep] {
            let c = config.with_method(method);
            let got = find_pairs_with(boxes, &c).map_err(|e| format!("{ctx}: {method:?} failed: {e:?}"))?;
            compare(&format!("{ctx} find_pairs_with {method:?}"), boxes, config.margin, &got, want)?;
        }
    }

    if *config == Config::default() {
        let got = find_pairs(boxes).map_err(|e| format!("{ctx}: find_pairs failed: {e:?}"))?;
        compare(&format!("{ctx} find_pairs"), boxes, config.margin, &got, want)?;
    }

    // The reusable API, with a dirty `out`, under the default tuning (any margin/bounds).
    // (Not under every tuning: it runs the same pipeline, and the test time adds up.)
    let default_tuning = Config::default().with_margin(config.margin).with_bounds(config.bounds);
    if *config == default_tuning {
        let mut bp = Broadphase::new(*config).map_err(|e| format!("{ctx}: Broadphase::new failed: {e:?}"))?;
        let mut out = vec![[7u32, 3u32]; 5]; // garbage that must be cleared
        bp.find_pairs(boxes, &mut out).map_err(|e| format!("{ctx}: Broadphase::find_pairs failed: {e:?}"))?;
        compare(&format!("{ctx} Broadphase::find_pairs"), boxes, config.margin, &out, want)?;
        if bp.stats().pairs != out.len() {
            return Err(format!(
                "{ctx}: Broadphase stats().pairs = {} but {} pairs were returned",
                bp.stats().pairs,
                out.len()
            ));
        }
    }
    Ok(())
}

/// The brute-force reference, checked for well-formedness.
pub fn reference<const D: usize>(
    ctx: &str,
    boxes: &[Aabb<D>],
    config: &Config<D>,
) -> Result<Vec<[u32; 2]>, String> {
    let want = brute_force_pairs(boxes, config)
        .map_err(|e| format!("{ctx}: brute_force_pairs failed on a scene meant to be valid: {e:?}"))?;
    well_formed(&want, boxes.len()).map_err(|e| format!("{ctx}: brute force output malformed: {e}"))?;
    Ok(want)
}

/// `find_pairs_with` (and friends) == brute force for one config.
pub fn check<const D: usize>(ctx: &str, boxes: &[Aabb<D>], config: &Config<D>) -> Result<(), String> {
    let want = reference(ctx, boxes, config)?;
    check_against(ctx, boxes, config, &want)
}

/// Checks a scene under every tuning config, each with bounds None and with every bounds
/// variant, at margin 0 and at each of `margins`. Brute force is run once per margin.
/// Panics with a full report on the first failure.
pub fn check_scene<const D: usize>(name: &str, boxes: &[Aabb<D>], margins: &[f32]) {
    let mut all_margins = vec![0.0f32];
    all_margins.extend_from_slice(margins);
    let bounds = bounds_variants(boxes);
    for &m in &all_margins {
        let base = Config::<D>::default().with_margin(m);
        let want = reference(name, boxes, &base).unwrap_or_else(|e| panic!("{e}"));
        for t in tuning_configs::<D>() {
            let c = t.with_margin(m);
            check_against(name, boxes, &c, &want).unwrap_or_else(|e| panic!("{e}"));
        }
        // Bounds variants with two contrasting tunings (keeps the run time down).
        for b in &bounds {
            for t in [Config::default(), cfg::<D>(64, 2, Refine::Rdc)] {
                let c = t.with_margin(m).with_bounds(Some(*b));
                check_against(name, boxes, &c, &want).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }
}

/// Number of unordered pairs among `n` items.
pub fn choose2(n: usize) -> usize {
    n * n.saturating_sub(1) / 2
}
