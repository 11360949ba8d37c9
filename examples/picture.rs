//! Draws the README's picture, `docs/picture.png`: a 2D world at work. A level of static
//! tiles (grey) with a gap-toothed floor and ledges, a crowd of dynamic boxes (blue)
//! dropped on it, and every pair the world reports after one update: both boxes of a
//! pair outlined in red, a red line joining their centres.
//!
//! Run: `cargo run --example picture` (writes `docs/picture.png`, 960 x 540).

use broadphase::{Aabb2, Config, Kind, World2};
use plotters::prelude::*;

/// A small deterministic generator (xorshift), so the picture is the same every run.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

const W: f32 = 96.0;
const H: f32 = 54.0;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut world = World2::new(Config::default().with_margin(0.1))?;
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    // The level: floor tiles with gaps, and a few ledges.
    let mut tiles = Vec::new();
    let mut x = 0.0;
    while x < W {
        let w = 3.0 + 5.0 * rng.unit();
        tiles.push(Aabb2::new([x, 0.0], [x + w, 2.0]));
        x += w + if rng.unit() < 0.3 { 2.0 } else { 0.0 };
    }
    for _ in 0..9 {
        let (x, y, w) = (4.0 + 80.0 * rng.unit(), 8.0 + 34.0 * rng.unit(), 6.0 + 8.0 * rng.unit());
        tiles.push(Aabb2::new([x, y], [x + w, y + 1.0]));
    }
    world.extend(&tiles, Kind::Static)?;
    // The crowd: boxes of many sizes, some resting on the level, some in the air.
    for _ in 0..260 {
        let s = 0.6 + 2.2 * rng.unit() * rng.unit();
        let (x, y) = (1.0 + (W - 4.0) * rng.unit(), 2.0 + (H - 6.0) * rng.unit());
        world.insert(Aabb2::new([x, y], [x + s, y + s]), Kind::Dynamic)?;
    }
    world.update()?;

    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/picture.png");
    let root = BitMapBackend::new(path, (960, 540)).into_drawing_area();
    root.fill(&WHITE)?;
    let px = |p: [f32; 2]| ((p[0] / W * 960.0) as i32, (540.0 - p[1] / H * 540.0) as i32);
    let rect = |b: &Aabb2| [px([b.min[0], b.max[1]]), px([b.max[0], b.min[1]])];
    let grey = RGBColor(150, 150, 150);
    let blue = RGBColor(40, 90, 200);
    for o in world.iter() {
        let r = rect(&o.aabb);
        if o.kind == Kind::Static {
            root.draw(&Rectangle::new(r, grey.mix(0.6).filled()))?;
        } else {
            root.draw(&Rectangle::new(r, blue.stroke_width(1)))?;
        }
    }
    let centre = |b: Aabb2| [(b.min[0] + b.max[0]) * 0.5, (b.min[1] + b.max[1]) * 0.5];
    for &[a, b] in world.pairs() {
        let (ba, bb) = (world.aabb(a)?, world.aabb(b)?);
        for r in [rect(&ba), rect(&bb)] {
            root.draw(&Rectangle::new(r, RED.stroke_width(2)))?;
        }
        root.draw(&PathElement::new(vec![px(centre(ba)), px(centre(bb))], RED.stroke_width(1)))?;
    }
    root.present()?;
    let s = world.stats();
    println!("{} static and {} dynamic boxes, {} pairs: {path}", s.statics, s.dynamics, world.pairs().len());
    Ok(())
}
