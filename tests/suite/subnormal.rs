//! Regression: the world at subnormal and tiny scales. Dynamic slivers (down to a few
//! subnormal steps wide) move beside static boxes a million times wider, near 0 and near
//! 1e-30, so that the neighbour lists' 16-bit steps are subnormal, or coarser than the
//! boxes they encode. `validate` runs after every call, and the pairs and events are
//! checked against the brute-force model at every update.
//!
//! The bug: a fat box whose step (its side over 65,534) was lengthened by at least
//! `f32::MIN_POSITIVE` ran tens of steps past the box, and a static list's inner box then
//! reached past the fat box ("static list N's entry for slot M is off its box").

use crate::common;
use crate::model;

use broadphase::{Aabb, Config, Filter, Handle, Kind, World};
use common::{Draws, Rng};
use model::{check_calm, check_update, Model};
use proptest::prelude::*;

/// A world and its model, checked after every call.
struct Run<const D: usize> {
    w: World<D>,
    m: Model<D>,
    dead: Vec<Handle>,
    ctx: String,
    calls: usize,
}

impl<const D: usize> Run<D> {
    fn new(margin: f32, ctx: &str) -> Self {
        let w = World::<D>::new(Config::default().with_margin(margin)).expect("config");
        Self { w, m: Model::new(margin), dead: Vec::new(), ctx: ctx.into(), calls: 0 }
    }

    fn calm(&mut self) {
        self.calls += 1;
        let ctx = format!("{} call {}", self.ctx, self.calls);
        check_calm(&ctx, &self.w, &self.m, &self.dead);
    }

    fn insert(&mut self, b: Aabb<D>, k: Kind) -> Handle {
        let h = self.w.insert(b, k).unwrap_or_else(|e| panic!("{}: insert {b:?}: {e}", self.ctx));
        self.m.insert(h, b, k, Filter::default(), 0);
        self.calm();
        h
    }

    fn set(&mut self, h: Handle, b: Aabb<D>) {
        self.w.set_aabb(h, b).unwrap_or_else(|e| panic!("{}: set_aabb {b:?}: {e}", self.ctx));
        self.m.get_mut(h).aabb = b;
        self.calm();
    }

    fn remove(&mut self, h: Handle) {
        self.w.remove(h).unwrap_or_else(|e| panic!("{}: remove: {e}", self.ctx));
        self.m.remove(h);
        self.dead.push(h);
        self.calm();
    }

    fn update(&mut self) {
        self.calls += 1;
        let ctx = format!("{} call {} (update)", self.ctx, self.calls);
        check_update(&ctx, &mut self.w, &mut self.m, true);
        check_calm(&ctx, &self.w, &self.m, &self.dead);
    }
}

/// A static slab: `[x, x + w]` on axis 0, `[0, 1e-30]` on the others.
fn slab<const D: usize>(x: f32, w: f32) -> Aabb<D> {
    let mut min = [0.0; D];
    let mut max = [1e-30; D];
    min[0] = x;
    max[0] = x + w;
    Aabb::new(min, max)
}

/// A dynamic sliver: a cube of side `w` at `x` on axis 0, at 5e-31 on the others (inside
/// the slabs' span there), so that its fat box, and so its lists' steps, are as small.
fn sliver<const D: usize>(x: f32, w: f32) -> Aabb<D> {
    let mut min = [5e-31; D];
    min[0] = x;
    Aabb::new(min, std::array::from_fn(|k| min[k] + w))
}

/// The brief's scene: 1.2e-38-wide dynamic slivers beside 1e-30-wide static slabs, near 0
/// and near 1e-30, each sliver moved by a fraction of its width for a few frames, then
/// onto a slab's face, then removed and re-inserted.
fn slivers_beside_statics<const D: usize>(margin: f32) {
    let mut r = Run::<D>::new(margin, &format!("slivers D {D} margin {margin:e}"));
    let w = 1.2e-38f32;
    // Static slabs of width 1e-30 at 0, 2e-30 (and one at -1e-30), a few narrower ones.
    for (x, w) in [(0.0, 1e-30), (2e-30, 1e-30), (-1e-30, 1e-30), (1.5e-30, 1e-34), (1.2e-30, 1e-38)] {
        r.insert(slab(x, w), Kind::Static);
    }
    // Slivers just past each slab's faces, and a few elsewhere.
    let starts = [1e-30f32, 1e-30 + 2.0 * w, 2e-30 - 2.0 * w, -2.0 * w, 3e-30, 1.2e-30 + 1e-38, 0.5e-30];
    let mut movers: Vec<(Handle, f32)> =
        starts.iter().map(|&x| (r.insert(sliver(x, w), Kind::Dynamic), x)).collect();
    // Idle dynamic boxes, so that a frame of a few movers walks (not found whole).
    for i in 0..12 {
        r.insert(sliver(5e-30 + i as f32 * 1e-31, 1e-38), Kind::Dynamic);
    }
    r.update();
    for frame in 0..24 {
        // Two movers a frame, by a fraction of a sliver (subnormal steps included).
        for j in 0..2 {
            let i = (2 * frame + j) % movers.len();
            let (h, x) = movers[i];
            let dx = match frame % 4 {
                0 => w * 0.25,
                1 => -w * 0.5,
                2 => f32::from_bits(3),
                _ => w,
            };
            let x = x + dx;
            movers[i].1 = x;
            r.set(h, sliver(x, w));
        }
        r.update();
    }
    // Onto the slabs' faces, touching exactly.
    for (i, x) in [1e-30f32 - w, 2e-30, 0.0, 1e-30].into_iter().enumerate() {
        let h = movers[i].0;
        movers[i].1 = x;
        r.set(h, sliver(x, w));
        r.update();
    }
    // Removed and put back nearby.
    let (h, x) = movers[0];
    r.remove(h);
    r.update();
    movers[0].0 = r.insert(sliver(x + w, w), Kind::Dynamic);
    r.update();
}

#[test]
fn subnormal_slivers_beside_statics_2d() {
    for margin in [0.0, 1e-39, 1e-42, -1e-45] {
        slivers_beside_statics::<2>(margin);
    }
}

#[test]
fn subnormal_slivers_beside_statics_3d() {
    for margin in [0.0, 1e-39, 1e-42, -1e-45] {
        slivers_beside_statics::<3>(margin);
    }
}

/// One box of a random subnormal-scale scene: a corner near `base` (within `span`) and a
/// side from zero to `span` on every axis, over orders of magnitude.
fn tiny_box<const D: usize>(rng: &mut Rng, base: f32, span: f32) -> Aabb<D> {
    let mut min = [0.0; D];
    let mut max = [0.0; D];
    for k in 0..D {
        let x = base + rng.range(-1.0, 1.0) * span * 10f32.powi(-(rng.below(4) as i32));
        let w = match rng.below(6) {
            0 => 0.0,
            1 => f32::from_bits(1 + rng.below(64) as u32),
            _ => span * rng.log_uniform(-8.0, 0.0),
        };
        min[k] = x;
        max[k] = x + w;
    }
    Aabb::new(min, max)
}

/// A random scene at a subnormal or tiny scale: statics and dynamics inserted, a first
/// update, then frames of a few small moves (by subnormal amounts, or onto another box's
/// face), removals and inserts.
fn random_scene<const D: usize>(seed: u64) {
    let mut rng = Rng::new(seed);
    const BASES: [f32; 5] = [0.0, 1e-30, -1e-30, 1e-38, 3e-36];
    const SPANS: [f32; 5] = [1e-38, 1e-36, 1e-34, 1e-30, 4e-41];
    const MARGINS: [f32; 4] = [0.0, 1e-40, 1e-38, -1e-44];
    let (base, span) = (BASES[rng.below(5)], SPANS[rng.below(5)]);
    let margin = MARGINS[rng.below(4)];
    let mut r = Run::<D>::new(margin, &format!("seed {seed:#x} D {D} base {base:e} span {span:e}"));
    let mut dynamics = Vec::new();
    for _ in 0..4 + rng.below(8) {
        // Wide statics: up to a thousand times the span.
        let mut b = tiny_box::<D>(&mut rng, base, span);
        let grow = span * rng.log_uniform(0.0, 3.0);
        b.max[rng.below(D)] += grow;
        r.insert(b, Kind::Static);
    }
    for _ in 0..10 + rng.below(10) {
        let b = tiny_box::<D>(&mut rng, base, span);
        dynamics.push((r.insert(b, Kind::Dynamic), b));
    }
    r.update();
    for _ in 0..10 {
        for _ in 0..1 + rng.below(3) {
            let i = rng.below(dynamics.len());
            let (h, mut b) = dynamics[i];
            match rng.below(8) {
                // Removed, and a new one put in its place (which may take its slot).
                0 => {
                    r.remove(h);
                    let nb = tiny_box::<D>(&mut rng, base, span);
                    dynamics[i] = (r.insert(nb, Kind::Dynamic), nb);
                    continue;
                }
                // Onto another live box's max face on one axis.
                1 => {
                    let o = r.m.live()[rng.below(r.m.len())].aabb;
                    let k = rng.below(D);
                    let w = b.max[k] - b.min[k];
                    b.min[k] = o.max[k];
                    b.max[k] = o.max[k] + w;
                }
                // A few subnormal steps, or a fraction of its size, along one axis.
                _ => {
                    let k = rng.below(D);
                    let w = b.max[k] - b.min[k];
                    let dx = if rng.chance(0.5) {
                        f32::from_bits(1 + rng.below(8) as u32)
                    } else {
                        w * rng.range(0.0, 0.5)
                    };
                    let dx = if rng.chance(0.5) { dx } else { -dx };
                    b.min[k] += dx;
                    b.max[k] = (b.max[k] + dx).max(b.min[k]);
                }
            }
            dynamics[i].1 = b;
            r.set(h, b);
        }
        r.update();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_subnormal_scenes_2d(seed in any::<u64>()) {
        random_scene::<2>(seed);
    }

    #[test]
    fn random_subnormal_scenes_3d(seed in any::<u64>()) {
        random_scene::<3>(seed);
    }
}
