//! Seeded, deterministic scene generators, and the crate's one random number generator
//! ([`Rng`]), for the tests, the benches and the examples.
//!
//! Compiled for the crate's own unit tests and behind the non-default `internals` feature,
//! whose `broadphase::internals` module is hidden from the docs; the crate's
//! dev-dependency on itself turns the feature on for its integration tests, benches and
//! examples. No part of the public API, and no stability promise.
//!
//! Every generator is generic over the dimension `D` (1, 2 and 3 all work), takes the number
//! of boxes `n` and a `seed`, and returns the same boxes for the same `(D, n, seed)` on every
//! platform (the random numbers come from the small [`Rng`] below, and all layout math is done
//! in `f64` before rounding to `f32`).
//!
//! Density is constant as `n` grows: the world is the cube `[0, W]^D` with
//! `W = n^(1/D)` (see [`world_side`]), so there is about one box per unit volume and the number
//! of overlapping pairs grows linearly with `n`. Pairs per box, measured with
//! [`brute_force_pairs`](crate::brute_force_pairs), seed 1, at `n = 3000` and `n = 30000`:
//!
//! | scene                | 1D          | 2D          | 3D           |
//! |----------------------|-------------|-------------|--------------|
//! | [`uniform`]          | 0.58 / 0.60 | 0.70 / 0.73 | 0.94 / 0.90  |
//! | [`varied`]           | 0.93 / 0.92 | 2.95 / 2.84 | 13.5 / 12.0  |
//! | [`clustered`]        | 2.81 / 2.98 | 3.83 / 3.69 | 4.85 / 4.41  |
//! | [`mixed`] (n + 1000) | 260 / 253   | 7.09 / 2.20 | 3.96 / 1.92  |
//! | [`all_overlapping`]  | (n - 1) / 2 | (n - 1) / 2 | (n - 1) / 2  |
//! | [`terrain`]          | 1.00 / 1.00 | 1.00 / 1.00 | 6.54 / 6.70  |
//! | [`tiles`]            | 1.27 / 1.29 | 4.80 / 5.02 | 13.91 / 16.05 |
//! | [`flat`]             | 0.58 / 0.60 | 0.59 / 0.60 | 0.72 / 0.72  |
//! | [`levels`]           | 0.61 / 0.66 | 0.72 / 0.72 | 0.97 / 0.91  |
//!
//! [`terrain`], [`tiles`], [`flat`] and [`levels`] are the exceptions to the cube: a
//! triangulated height field (a flat world, a mesh's shared vertices), a tiled level (a
//! grid of exactly touching unit tiles, with exact duplicates), a 2D scene laid out in 3D
//! (every box on one plane, no thickness) and four worlds far apart in one coordinate
//! space, the shapes of real scenes.
//!
//! The 1000 thin boxes of [`mixed`] weigh less as `n` grows (about 0.9 pairs per box in 2D
//! and 1.1 in 3D at `n = 1e6`); in 1D a plank of length `W/4` covers a quarter of the whole
//! world, so [`mixed`] is very crowded there: it is meant for 2D and 3D.
//!
//! ```
//! use broadphase::internals::scene;
//! let a = scene::uniform::<3>(1000, 7);
//! let b = scene::uniform::<3>(1000, 7);
//! assert_eq!(a, b);
//! assert_eq!(a.len(), 1000);
//! ```

use crate::Aabb;

/// A tiny, fast, seedable random number generator: xoshiro256++ seeded through SplitMix64.
/// The crate's only one: the generators here and every randomised unit test draw from it.
///
/// Not cryptographic; deterministic across platforms.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose whole stream is determined by `seed` (any value, zero included).
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let mut next = || {
            // SplitMix64.
            sm = sm.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = sm;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Self { s: [next(), next(), next(), next()] }
    }

    /// The next 64 random bits (xoshiro256++).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)`, 24 random bits.
    #[inline]
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
    }

    /// Uniform in `[0, 1)`, 53 random bits.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[lo, hi)` (up to rounding).
    #[inline]
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_f32()
    }

    /// Uniform in `[lo, hi)` (up to rounding), in `f64`.
    #[inline]
    pub fn range_f64(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }

    /// Uniform in `0..n` (`n > 0`; Lemire's multiply-shift, negligible bias for small `n`).
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// The names of the scenes [`by_name`] knows, in a sensible benchmarking order.
pub const SCENES: &[&str] = &[
    "uniform",
    "varied",
    "clustered",
    "mixed",
    "all_overlapping",
    "terrain",
    "tiles",
    "flat",
    "levels",
    "copies",
];

/// The scene called `name` (one of [`SCENES`]), or `None` for another name
/// ([`crate::internals::by_name`] knows the cliff scenes too).
pub fn by_name<const D: usize>(name: &str, n: usize, seed: u64) -> Option<Vec<Aabb<D>>> {
    Some(match name {
        "uniform" => uniform(n, seed),
        "varied" => varied(n, seed),
        "clustered" => clustered(n, seed),
        "mixed" => mixed(n, seed),
        "all_overlapping" => all_overlapping(n, seed),
        "terrain" => terrain(n, seed),
        "tiles" => tiles(n, seed),
        "flat" => flat(n, seed),
        "levels" => levels(n, seed),
        "copies" => copies(n, seed),
        _ => return None,
    })
}

/// The side `W = n^(1/D)` of the world cube `[0, W]^D` for `n` boxes (`n = 0` counts as 1, so
/// the world is never empty).
pub fn world_side<const D: usize>(n: usize) -> f64 {
    (n.max(1) as f64).powf(1.0 / D as f64)
}

/// A box from its lower corner and sides, computed in `f64` and rounded to `f32`. Rounding is
/// monotone, so `min <= max` holds whenever every side is `>= 0`.
#[inline]
fn make_box<const D: usize>(min: [f64; D], side: [f64; D]) -> Aabb<D> {
    let mut b = Aabb::new([0.0; D], [0.0; D]);
    for k in 0..D {
        b.min[k] = min[k] as f32;
        b.max[k] = (min[k] + side[k]) as f32;
    }
    b
}

/// A box with the given sides at a uniformly random place wholly inside `[0, w]^D` (where a
/// side exceeds `w` the box starts at 0 on that axis).
#[inline]
fn place_inside<const D: usize>(rng: &mut Rng, w: f64, side: [f64; D]) -> Aabb<D> {
    let mut min = [0.0f64; D];
    for k in 0..D {
        min[k] = rng.next_f64() * (w - side[k]).max(0.0);
    }
    make_box(min, side)
}

/// `n` boxes with sides each uniform in `[0.3, 0.9]`, placed uniformly inside the world
/// `[0, W]^D`, `W = n^(1/D)`: one box per unit volume.
///
/// Expected overlapping pairs per box: `1.2^D / 2` (mean side 0.6, so two boxes overlap on
/// one axis when their positions differ by less than about 1.2): 0.6 in 1D, 0.72 in 2D,
/// 0.86 in 3D for large `n` (a little more at small `n`, since each box is placed wholly
/// inside the world, which packs the centres slightly). Every box lies inside the world.
pub fn uniform<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(seed);
    let w = world_side::<D>(n);
    (0..n)
        .map(|_| {
            let mut side = [0.0f64; D];
            for s in side.iter_mut() {
                *s = rng.range_f64(0.3, 0.9);
            }
            place_inside(&mut rng, w, side)
        })
        .collect()
}

/// `n` roughly cubic boxes whose size spans two orders of magnitude, placed uniformly inside
/// the world `[0, W]^D`, `W = n^(1/D)`.
///
/// Each box draws one size `s` log-uniform in `[0.05, 5.0]`, then each side is
/// `s * uniform(0.7, 1.0)`. The few large boxes dominate the overlaps: expected pairs per box
/// for large `n` are about 0.9 in 1D, 2.8 in 2D and 11 in 3D (13.5 at `n = 3000` and 12 at
/// `n = 30000` in 3D, where the large boxes, kept inside the world, crowd its middle).
pub fn varied<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(seed);
    let w = world_side::<D>(n);
    let (lo, hi) = (0.05f64.ln(), 5.0f64.ln());
    (0..n)
        .map(|_| {
            let s = rng.range_f64(lo, hi).exp();
            let mut side = [0.0f64; D];
            for x in side.iter_mut() {
                *x = s * rng.range_f64(0.7, 1.0);
            }
            place_inside(&mut rng, w, side)
        })
        .collect()
}

/// Boxes per unit volume inside a cluster of [`clustered`].
pub const CLUSTER_DENSITY: f64 = 4.0;

/// `n` boxes in `max(n / 1000, 1)` dense clusters (about 1000 boxes each).
///
/// Cluster centres are uniform in the world `[0, W]^D`, `W = n^(1/D)` (kept at least `r`
/// from its faces where the world is wide enough). Each box picks a random cluster and sits
/// at an offset uniform in `[-r, r]` per axis from its centre, with sides uniform in
/// `[0.3, 0.9]`. The half-width `r = (m / 4)^(1/D) / 2`, where `m = n / clusters` is the
/// mean cluster size, makes the density inside a cluster [`CLUSTER_DENSITY`] = 4 boxes per
/// unit volume (four times [`uniform`]'s), so a box in an isolated cluster has about
/// `4 * 1.2^D / 2` pairs (2.4 in 1D, 2.9 in 2D, 3.5 in 3D). The clusters together fill about
/// a quarter of the world and often overlap, which raises that to about 3.0, 3.7 and 4.4
/// (measured at `n = 30000`).
pub fn clustered<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(seed);
    let w = world_side::<D>(n);
    let k = (n / 1000).max(1);
    let m = n.max(1) as f64 / k as f64;
    let r = 0.5 * (m / CLUSTER_DENSITY).powf(1.0 / D as f64);
    let (clo, chi) = if w > 2.0 * r { (r, w - r) } else { (w * 0.5, w * 0.5) };
    let centres: Vec<[f64; D]> = (0..k)
        .map(|_| {
            let mut c = [0.0f64; D];
            for x in c.iter_mut() {
                *x = rng.range_f64(clo, chi);
            }
            c
        })
        .collect();
    (0..n)
        .map(|_| {
            let c = &centres[rng.below(k)];
            let mut min = [0.0f64; D];
            let mut side = [0.0f64; D];
            for a in 0..D {
                side[a] = rng.range_f64(0.3, 0.9);
                min[a] = c[a] + rng.range_f64(-r, r) - 0.5 * side[a];
            }
            make_box(min, side)
        })
        .collect()
}

/// Number of long thin boxes [`mixed`] appends.
pub const MIXED_THIN: usize = 1000;

/// [`uniform`]`(n, seed)` followed by [`MIXED_THIN`] = 1000 long thin boxes (so `n + 1000`
/// boxes in all), stressing methods that assume boxes of similar size.
///
/// The first 500 are planks: length `W/4` along one random axis, thickness 0.1 on the others.
/// The other 500 are walls: in 3D length `W/4` on two random axes and thickness 0.1 on the
/// third; in 1D and 2D a wall is the same as a plank. All lie inside the world
/// `[0, W]^D`, `W = n^(1/D)`. In 3D a plank meets about `0.5 * W/4` uniform boxes and a wall
/// about `0.7 * (W/4)^2`, so at `n = 1e6` the walls alone add about 230 000 pairs (a quarter
/// more than the uniform boxes' 860 000). In 1D a plank covers a quarter of the world, so the
/// 1D scene is very crowded.
pub fn mixed<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let mut boxes = uniform::<D>(n, seed);
    // A different stream from the uniform part's.
    let mut rng = Rng::new(seed ^ 0x6D69_7865_645F_7468);
    let w = world_side::<D>(n);
    let long = w / 4.0;
    boxes.reserve(MIXED_THIN);
    for i in 0..MIXED_THIN {
        let mut side = [0.1f64; D];
        if i < MIXED_THIN / 2 || D < 3 {
            side[rng.below(D)] = long;
        } else {
            // A wall: long on every axis but one.
            let thin = rng.below(D);
            for (a, s) in side.iter_mut().enumerate() {
                if a != thin {
                    *s = long;
                }
            }
        }
        boxes.push(place_inside(&mut rng, w, side));
    }
    boxes
}

/// `n` boxes that all contain the world's centre point `(W/2, ..., W/2)`, `W = n^(1/D)`,
/// so every one of the `n(n-1)/2` pairs overlaps: the worst case for output size.
///
/// Each box reaches from the centre a distance uniform in `[0.1, 1.0) * W/2` on each side of
/// each axis, so it lies inside the world.
pub fn all_overlapping<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(seed);
    let w = world_side::<D>(n);
    let c = 0.5 * w;
    (0..n)
        .map(|_| {
            let mut b = Aabb::new([0.0f32; D], [0.0f32; D]);
            for k in 0..D {
                b.min[k] = (c - rng.range_f64(0.1, 1.0) * c) as f32;
                b.max[k] = (c + rng.range_f64(0.1, 1.0) * c) as f32;
            }
            b
        })
        .collect()
}

/// The boxes of a triangulated height field, as a mesh's triangles are: a flat world, exact
/// touches (neighbouring simplices share vertices, rounded to `f32` once), and vertex fans.
///
/// The surface spans the first `D - 1` axes, `g` unit cells each (`g` just large enough for
/// `n` simplices), and the height is on the last axis: a few seeded hills about `g / 25`
/// high, slopes of about one, and a roughness of 0.2. In 3D each cell is two triangles; in
/// 2D one segment of a height curve; in 1D the boxes are the unit segments `[i, i + 1]`,
/// each touching the next. The first `n` simplices, in grid order (ids are spatially
/// coherent, as a mesh's are). Pairs per box: about 6.5 in 3D (the triangles sharing a
/// vertex, plus a few more on steep slopes; 8.3 at `n = 1e6`), 1 in 2D and 1D.
pub fn terrain<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    if D == 1 {
        return (0..n).map(|i| make_box([i as f64; D], [1.0; D])).collect();
    }
    let mut rng = Rng::new(seed);
    let per_cell = if D == 3 { 2 } else { 1 };
    let g = ((n.div_ceil(per_cell)) as f64).powf(1.0 / (D - 1) as f64).ceil().max(1.0) as usize;
    // Hills: a few long waves over the field, one short wave for the slopes.
    let amp = g as f64 / 25.0;
    let waves: Vec<([f64; 2], f64, f64)> = (0..4)
        .map(|w| {
            let (a, len) = if w < 3 { (amp / 3.0, g as f64 / rng.range_f64(1.0, 3.0)) } else { (1.0, 6.0) };
            let t = rng.range_f64(0.0, std::f64::consts::TAU);
            ([t.cos() / len, t.sin() / len], rng.range_f64(0.0, std::f64::consts::TAU), a)
        })
        .collect();
    // Vertices along the second grid axis, and cells along it (2D: one row).
    let (side, rows) = if D == 3 { (g + 1, g) } else { (1, 1) };
    let height: Vec<f32> = (0..(g + 1) * side)
        .map(|v| {
            let (x, y) = ((v / side) as f64, (v % side) as f64);
            let t = std::f64::consts::TAU;
            let h: f64 = waves.iter().map(|&(f, p, a)| a * (t * (f[0] * x + f[1] * y) + p).sin()).sum();
            (h + rng.range_f64(-0.2, 0.2)) as f32
        })
        .collect();
    let vertex = |x: usize, y: usize| -> [f32; 3] { [x as f32, y as f32, height[x * side + y]] };
    let simplex = |vs: &[[f32; 3]]| {
        let mut b = Aabb::new([f32::INFINITY; D], [f32::NEG_INFINITY; D]);
        for v in vs {
            // Grid axes first, the height last: (x, h) in 2D, (x, y, h) in 3D.
            let p: [f32; D] = std::array::from_fn(|k| if k + 1 == D { v[2] } else { v[k] });
            for (k, &c) in p.iter().enumerate() {
                b.min[k] = b.min[k].min(c);
                b.max[k] = b.max[k].max(c);
            }
        }
        b
    };
    let mut boxes = Vec::with_capacity(n);
    'cells: for x in 0..g {
        for y in 0..rows {
            if D == 3 {
                let [a, b, c, d] = [vertex(x, y), vertex(x + 1, y), vertex(x, y + 1), vertex(x + 1, y + 1)];
                for t in [[a, b, c], [b, d, c]] {
                    if boxes.len() == n {
                        break 'cells;
                    }
                    boxes.push(simplex(&t));
                }
            } else {
                if boxes.len() == n {
                    break 'cells;
                }
                boxes.push(simplex(&[vertex(x, 0), vertex(x + 1, 0)]));
            }
        }
    }
    boxes
}

/// A tiled level or map: unit tiles on the integer grid of `[0, g]^D` (`g` just large
/// enough), each touching its neighbours exactly, in grid order; about one box in ten
/// repeats the tile before it (an exact duplicate, as overlapping map layers give), and
/// one in a hundred is a room: integer bounds, 2 to 8 tiles a side, somewhere in the grid.
/// Pairs per box: about `(3^D - 1) / 2` from the touching tiles (1, 4 and 13), plus the
/// duplicates and the rooms.
pub fn tiles<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(seed);
    let g = ((n as f64).powf(1.0 / D as f64).ceil() as usize).max(1);
    let mut boxes: Vec<Aabb<D>> = Vec::with_capacity(n);
    let mut next = 0usize;
    while boxes.len() < n {
        let r = rng.next_f64();
        if r < 0.01 {
            let mut min = [0.0; D];
            let mut side = [0.0; D];
            for k in 0..D {
                side[k] = (2 + rng.below(7)) as f64;
                min[k] = rng.below(g) as f64;
            }
            boxes.push(make_box(min, side));
        } else if r < 0.11 && !boxes.is_empty() {
            let last = boxes[boxes.len() - 1];
            boxes.push(last);
        } else {
            let mut min = [0.0; D];
            let mut t = next;
            for m in min.iter_mut().rev() {
                *m = (t % g) as f64;
                t /= g;
            }
            next += 1;
            boxes.push(make_box(min, [1.0; D]));
        }
    }
    boxes
}

/// A scene of one dimension less laid out on a plane, as a 2D game, a floor plan or map
/// data is in a 3D engine: the boxes of [`uniform`]`::<D - 1>`, with the last axis `[0, 0]`
/// for every box (no thickness, all on the same plane). In 1D, where there is no plane,
/// it is [`uniform`].
///
/// Pairs per box: those of [`uniform`] one dimension down (0.6 in 2D, 0.72 in 3D).
pub fn flat<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    if D == 1 {
        return uniform(n, seed);
    }
    let mut rng = Rng::new(seed);
    let w = (n.max(1) as f64).powf(1.0 / (D - 1) as f64);
    (0..n)
        .map(|_| {
            let mut side = [0.0f64; D];
            for s in side.iter_mut().take(D - 1) {
                *s = rng.range_f64(0.3, 0.9);
            }
            let mut b = place_inside(&mut rng, w, side);
            b.min[D - 1] = 0.0;
            b.max[D - 1] = 0.0;
            b
        })
        .collect()
}

/// Four [`uniform`] worlds of `n / 4` boxes each, far apart in one coordinate space, as
/// separate game levels, instanced dungeons or the map data of distant cities are: world
/// `q` is moved by `100 q` world sides along every axis. Pairs per box: those of
/// [`uniform`] at `n / 4`.
pub fn levels<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let per = n.div_ceil(4);
    let side = world_side::<D>(per);
    let mut boxes = Vec::with_capacity(n);
    for q in 0..4u64 {
        let m = per.min(n - boxes.len());
        let off = 100.0 * side * q as f64;
        boxes.extend(uniform::<D>(m, seed.wrapping_add(q)).into_iter().map(|b| {
            let min = std::array::from_fn(|k| b.min[k] as f64 + off);
            let size = std::array::from_fn(|k| b.max[k] as f64 - b.min[k] as f64);
            make_box(min, size)
        }));
    }
    boxes
}

/// Copies of each box in [`copies`].
pub const COPIES: usize = 10;

/// [`uniform`]`(m, seed)`, `m = ceil(n / 10)`, laid [`COPIES`] = 10 times over itself (the
/// last layer cut short at `n` boxes): box `i` is box `i - m` again, as overlapping map
/// layers, objects instanced at one place, or a scene loaded twice give. Pairs per box
/// (each pair counted once): 4.5 among a box's copies, plus ten times [`uniform`]'s
/// (about 10.5 in 1D, 11.7 in 2D, 13.1 in 3D). A scene where the output is most of the
/// work.
pub fn copies<const D: usize>(n: usize, seed: u64) -> Vec<Aabb<D>> {
    let base = uniform::<D>(n.div_ceil(COPIES), seed);
    base.iter().cycle().take(n).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_scenes<const D: usize>(n: usize, seed: u64) -> Vec<(&'static str, Vec<Aabb<D>>)> {
        SCENES.iter().map(|&s| (s, by_name::<D>(s, n, seed).unwrap())).collect()
    }

    fn check_dim<const D: usize>() {
        for &n in &[0usize, 1, 2, 17, 1000, 2500] {
            let a = all_scenes::<D>(n, 42);
            let b = all_scenes::<D>(n, 42);
            let c = all_scenes::<D>(n, 43);
            for ((name, x), (_, y)) in a.iter().zip(&b) {
                assert_eq!(x, y, "{name} D={D} n={n}: same seed, different boxes");
                let want = if *name == "mixed" { n + MIXED_THIN } else { n };
                assert_eq!(x.len(), want, "{name} D={D} n={n}: count");
                for (i, bx) in x.iter().enumerate() {
                    for k in 0..D {
                        assert!(
                            bx.min[k].is_finite() && bx.max[k].is_finite() && bx.min[k] <= bx.max[k],
                            "{name} D={D} n={n}: box {i} invalid: {bx:?}"
                        );
                    }
                    assert!(bx.is_valid());
                }
            }
            for ((name, x), (_, z)) in a.iter().zip(&c) {
                // A grid's first tiles are fixed (its rooms and repeats are seeded), and the
                // 1D terrain is the unit segments only.
                let seeded = match *name {
                    "terrain" => D > 1 && n >= 2,
                    "tiles" => n >= 1000,
                    _ => n >= 2,
                };
                if seeded {
                    assert_ne!(x, z, "{name} D={D} n={n}: different seeds, same boxes");
                }
            }
            let w = world_side::<D>(n) as f32;
            for (name, x) in &a {
                if matches!(*name, "uniform" | "varied" | "mixed" | "all_overlapping" | "copies") {
                    for bx in x {
                        for k in 0..D {
                            // A varied box wider than a tiny world starts at 0 and sticks out.
                            let fits = bx.max[k] - bx.min[k] <= w;
                            assert!(
                                bx.min[k] >= 0.0 && (bx.max[k] <= w || !fits),
                                "{name} D={D} n={n}: {bx:?} outside [0, {w}]"
                            );
                        }
                    }
                }
            }
            // Every all_overlapping box contains the centre.
            let centre = (0.5 * world_side::<D>(n)) as f32;
            for bx in &by_name::<D>("all_overlapping", n, 42).unwrap() {
                for k in 0..D {
                    assert!(bx.min[k] <= centre && centre <= bx.max[k]);
                }
            }
        }
    }

    #[test]
    fn generators_1d() {
        check_dim::<1>();
    }

    #[test]
    fn generators_2d() {
        check_dim::<2>();
    }

    #[test]
    fn generators_3d() {
        check_dim::<3>();
    }

    #[test]
    fn copies_repeat_the_first_layer() {
        for n in [0usize, 1, 9, 10, 11, 1234] {
            let b = copies::<3>(n, 5);
            let m = n.div_ceil(COPIES);
            assert_eq!(b.len(), n);
            assert_eq!(b[..m], uniform::<3>(m, 5)[..], "n={n}: first layer");
            for i in m..n {
                assert_eq!(b[i], b[i - m], "n={n}: box {i}");
            }
        }
    }

    #[test]
    fn uniform_sides_and_world() {
        let boxes = uniform::<3>(5000, 3);
        let w = world_side::<3>(5000) as f32;
        for b in &boxes {
            for k in 0..3 {
                let s = b.max[k] - b.min[k];
                assert!((0.299..=0.901).contains(&s), "side {s}");
                assert!(b.min[k] >= 0.0 && b.max[k] <= w);
            }
        }
    }

    #[test]
    fn rng_basics() {
        let mut a = Rng::new(0);
        let mut b = Rng::new(0);
        let mut sum = 0.0f64;
        for _ in 0..10_000 {
            let x = a.next_f32();
            assert_eq!(x.to_bits(), b.next_f32().to_bits());
            assert!((0.0..1.0).contains(&x));
            sum += x as f64;
            let y = a.range(2.0, 3.0);
            b.range(2.0, 3.0);
            assert!((2.0..=3.0).contains(&y));
            let z = a.below(7);
            b.below(7);
            assert!(z < 7);
        }
        let mean = sum / 10_000.0;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }

    #[test]
    fn all_overlapping_pairs_are_all() {
        let boxes = all_overlapping::<2>(60, 5);
        let pairs = crate::brute_force_pairs(&boxes, &crate::Config::default()).unwrap();
        assert_eq!(pairs.len(), 60 * 59 / 2);
    }
}
