//! Draws RDC's clusters of a 2D scene as an SVG, like the seeds' demos: each box filled
//! with its cluster's colour, boxes that overlap another outlined red, and every cluster of
//! two or more boxes framed by a dashed green rectangle (its bounds).
//!
//! Run: `cargo run --example rdc_clusters [-- out.svg [n] [min_group_size] [seed]]`
//! (defaults: `rdc_clusters.svg`, 300 boxes, 1, seed 1). Prints the path it wrote and
//! the counts.

use broadphase::{Aabb2, Rdc};
use std::fmt::Write as _;

const WIDTH: f32 = 640.0;
const HEIGHT: f32 = 480.0;

/// Islands: `n` boxes of 5 to 17 pixels a side in clumps of about 12 around random
/// centres (a few boxes scattered alone), the kind of scene RDC separates well.
fn scene(n: usize, seed: u64) -> Vec<Aabb2> {
    let mut rng = broadphase::internals::scene::Rng::new(seed);
    let clumps: Vec<[f32; 2]> = (0..n.div_ceil(12))
        .map(|_| [30.0 + rng.next_f32() * (WIDTH - 60.0), 50.0 + rng.next_f32() * (HEIGHT - 80.0)])
        .collect();
    (0..n)
        .map(|i| {
            let (w, h) = (5.0 + 12.0 * rng.next_f32(), 5.0 + 12.0 * rng.next_f32());
            let (x, y) = if i % 10 == 9 {
                (rng.next_f32() * (WIDTH - w), 20.0 + rng.next_f32() * (HEIGHT - 20.0 - h))
            } else {
                let c = clumps[i % clumps.len()];
                (
                    c[0] + 40.0 * (rng.next_f32() - 0.5) - w / 2.0,
                    c[1] + 40.0 * (rng.next_f32() - 0.5) - h / 2.0,
                )
            };
            Aabb2::new([x, y], [x + w, y + h])
        })
        .collect()
}

/// A distinct colour per group: hues spaced by the golden angle.
fn colour(g: usize) -> String {
    let hue = (g as f32 * 137.508) % 360.0;
    format!("hsl({hue:.0},65%,{}%)", 55 + (g % 3) * 8)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().cloned().unwrap_or_else(|| "rdc_clusters.svg".to_string());
    let n: usize = args.get(1).map_or(Ok(300), |s| s.parse())?;
    let min_group_size: usize = args.get(2).map_or(Ok(1), |s| s.parse())?;
    let seed: u64 = args.get(3).map_or(Ok(1), |s| s.parse())?;

    let boxes = scene(n, seed);
    let rdc = Rdc { min_group_size, ..Rdc::default() };
    let clusters = rdc.clusters(&boxes)?;
    let pairs = rdc.pairs(&boxes)?;
    let mut hit = vec![false; boxes.len()];
    for &[i, j] in &pairs {
        hit[i as usize] = true;
        hit[j as usize] = true;
    }

    let mut svg = String::new();
    writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}">"#
    )?;
    writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#)?;
    for (g, members) in clusters.iter().enumerate() {
        let fill = colour(g);
        for &i in members {
            let b = &boxes[i as usize];
            let (stroke, sw) = if hit[i as usize] { ("red", 1.5) } else { ("#333", 0.5) };
            writeln!(
                svg,
                r#"<rect x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{fill}" fill-opacity="0.8" stroke="{stroke}" stroke-width="{sw}"/>"#,
                b.min[0],
                b.min[1],
                b.max[0] - b.min[0],
                b.max[1] - b.min[1]
            )?;
        }
    }
    for members in clusters.iter().filter(|m| m.len() > 1) {
        let mut lo = [f32::MAX; 2];
        let mut hi = [f32::MIN; 2];
        for &i in members {
            let b = &boxes[i as usize];
            for k in 0..2 {
                lo[k] = lo[k].min(b.min[k]);
                hi[k] = hi[k].max(b.max[k]);
            }
        }
        writeln!(
            svg,
            r#"<rect x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="none" stroke="green" stroke-width="1" stroke-dasharray="4 3"/>"#,
            lo[0] - 2.0,
            lo[1] - 2.0,
            hi[0] - lo[0] + 4.0,
            hi[1] - lo[1] + 4.0
        )?;
    }
    writeln!(
        svg,
        r#"<text x="6" y="14" font-family="sans-serif" font-size="12">{n} boxes, {} RDC clusters (min_group_size {min_group_size}), {} overlapping pairs</text>"#,
        clusters.len(),
        pairs.len()
    )?;
    writeln!(svg, "</svg>")?;
    std::fs::write(&path, svg)?;
    println!("{path}: {n} boxes, {} clusters, {} pairs", clusters.len(), pairs.len());
    Ok(())
}
