//! The scaling bench's plots, drawn with plotters from a machine's CSV rows: one SVG per
//! dimension and scene, `docs/bench/<machine>/<dims>d-<scene>.svg`, two panels, both
//! log-log, one line per method or peer: the time of a call against threads at the largest
//! `n`, and against `n` at the most threads each ran at; the key on the right. Ours are
//! solid lines with dots, the peers dashed with crosses; a single-threaded peer is a flat
//! dashed line across the threads. Each method and peer keeps its colour across plots. SVG text is set by the viewer, so no font is read.
//! Output: the plots' paths; the machine's older SVGs are removed first (they are all
//! generated).

use std::error::Error;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::csv::{who_rank, Row};

/// One drawn plot.
pub struct Plot {
    pub dims: usize,
    pub scene: String,
    /// The file, relative to `docs/bench/`.
    pub file: String,
}

/// A method's or peer's line in a panel.
struct Line {
    who: String,
    points: Vec<(f64, f64)>,
}

/// Draws every dimension and scene of `machine`'s `rows` (sorted as the CSV is) under
/// `dir/machine/`.
pub fn draw_machine(dir: &Path, machine: &str, rows: &[Row]) -> Vec<Plot> {
    let out = dir.join(machine);
    if let Ok(entries) = std::fs::read_dir(&out) {
        for e in entries.flatten() {
            if e.path().extension().is_some_and(|x| x == "svg") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    std::fs::create_dir_all(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    let mut plots = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        let (dims, scene) = (rows[i].dims, rows[i].scene.clone());
        let end = i + rows[i..].iter().take_while(|r| r.dims == dims && r.scene == scene).count();
        let file = svg_name(dims, &scene);
        let title = format!("{machine}: {dims}D {scene}");
        if let Err(e) = draw(&out.join(&file), &title, &rows[i..end]) {
            panic!("{}: {e}", out.join(&file).display());
        }
        plots.push(Plot { dims, scene, file: format!("{machine}/{file}") });
        i = end;
    }
    plots
}

/// The plot's file name: `3d-uniform.svg`; in a scene's name, what some file systems
/// refuse (`:`) becomes `_`.
pub fn svg_name(dims: usize, scene: &str) -> String {
    let scene: String =
        scene.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    format!("{dims}d-{scene}.svg")
}

/// The methods and peers of `rows`, in the CSV's order.
fn whos(rows: &[Row]) -> Vec<String> {
    let mut w: Vec<String> = rows.iter().map(|r| r.who.clone()).collect();
    w.sort_by_key(|x| who_rank(x));
    w.dedup();
    w
}

fn draw(path: &Path, title: &str, rows: &[Row]) -> Result<(), Box<dyn Error>> {
    let root = SVGBackend::new(path, (1100, 460)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let (panels, key) = root.split_horizontally(920);
    let (left, right) = panels.split_horizontally(460);

    let largest = rows.iter().map(|r| r.n).max().unwrap();
    let threads: Vec<usize> = {
        let mut t: Vec<usize> = rows.iter().map(|r| r.threads).collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    let sizes: Vec<usize> = {
        let mut n: Vec<usize> = rows.iter().map(|r| r.n).collect();
        n.sort_unstable();
        n.dedup();
        n
    };
    let (t_lo, t_hi) = (threads[0] as f64, *threads.last().unwrap() as f64);
    let mut by_threads = Vec::new();
    let mut by_n = Vec::new();
    let whos = whos(rows);
    for who in &whos {
        let mine: Vec<&Row> = rows.iter().filter(|r| &r.who == who).collect();
        let mut points: Vec<(f64, f64)> =
            mine.iter().filter(|r| r.n == largest).map(|r| (r.threads as f64, r.median_s * 1e3)).collect();
        // A peer measured at 1 thread only: its time across the threads.
        if points.len() == 1 && points[0].0 == 1.0 && t_hi > 1.0 {
            points = vec![(t_lo, points[0].1), (t_hi, points[0].1)];
        }
        by_threads.push(Line { who: who.clone(), points });
        let points: Vec<(f64, f64)> = sizes
            .iter()
            .filter_map(|&n| mine.iter().filter(|r| r.n == n).max_by_key(|r| r.threads))
            .map(|r| (r.n as f64, r.median_s * 1e3))
            .collect();
        by_n.push(Line { who: who.clone(), points });
    }
    panel(&left, &format!("n = {largest}"), "threads", &threads, 2.0, &by_threads)?;
    panel(&right, "at the most threads each ran", "boxes (n)", &sizes, 10.0, &by_n)?;
    for (i, who) in whos.iter().enumerate() {
        let y = 60 + 22 * i as i32;
        let (style, peer) = style(who);
        if peer {
            key.draw(&PathElement::new(vec![(10, y), (18, y)], style))?;
            key.draw(&PathElement::new(vec![(24, y), (32, y)], style))?;
        } else {
            key.draw(&PathElement::new(vec![(10, y), (32, y)], style))?;
        }
        key.draw(&Text::new(who.as_str(), (40, y - 7), ("sans-serif", 14)))?;
    }
    root.present()?;
    Ok(())
}

/// Colours that stay apart on white (Tableau's ten, then two more); ours first, in
/// their table's order, then the peers.
const COLOURS: [(u8, u8, u8); 12] = [
    (31, 119, 180),
    (214, 39, 40),
    (44, 160, 44),
    (255, 127, 14),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (23, 190, 207),
    (188, 189, 34),
    (127, 127, 127),
    (0, 0, 128),
    (128, 0, 0),
];

/// A method's or peer's line style, and whether it is a peer (dashed, thinner).
fn style(who: &str) -> (ShapeStyle, bool) {
    let rank = who_rank(who).0;
    let peer = rank >= crate::methods::METHODS.len();
    let (r, g, b) = COLOURS.get(rank).copied().unwrap_or((0, 0, 0));
    (RGBColor(r, g, b).stroke_width(if peer { 1 } else { 2 }), peer)
}

/// `1, 2, 5` times the powers of ten within `lo..hi`.
fn ticks_125(lo: f64, hi: f64) -> Vec<f64> {
    let mut v = Vec::new();
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi {
        for m in [1.0, 2.0, 5.0] {
            let t = m * decade;
            if t >= lo && t <= hi {
                v.push(t);
            }
        }
        decade *= 10.0;
    }
    v
}

/// One log-log panel: x ticks at `ticks`, y in milliseconds.
fn panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    caption: &str,
    x_desc: &str,
    ticks: &[usize],
    base: f64,
    lines: &[Line],
) -> Result<(), Box<dyn Error>> {
    let xs = || lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
    let ys = || lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let (x_lo, x_hi) = (xs().fold(f64::INFINITY, f64::min), xs().fold(0.0, f64::max));
    let (y_lo, y_hi) = (ys().fold(f64::INFINITY, f64::min), ys().fold(0.0, f64::max));
    if !(x_lo.is_finite() && y_lo > 0.0) {
        return Ok(());
    }
    // A margin of a fifth of a tick's step on x, a factor of 2 on y.
    let x_range = (x_lo / base.powf(0.2))..(x_hi * base.powf(0.2));
    let (y_lo, y_hi) = (y_lo / 2.0, y_hi * 2.0);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            x_range.log_scale().with_key_points(ticks.iter().map(|&t| t as f64).collect()),
            (y_lo..y_hi).log_scale().with_key_points(ticks_125(y_lo, y_hi)),
        )?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("ms a call")
        .x_label_formatter(&|x| short(*x))
        .y_label_formatter(&|y| crate::report::sig(*y, 3))
        .draw()?;
    for line in lines {
        let (style, peer) = style(&line.who);
        if peer {
            chart.draw_series(DashedLineSeries::new(line.points.clone(), 6, 4, style))?;
            chart.draw_series(line.points.iter().map(|&p| Cross::new(p, 3, style)))?;
        } else {
            chart.draw_series(LineSeries::new(line.points.clone(), style))?;
            chart.draw_series(line.points.iter().map(|&p| Circle::new(p, 3, style)))?;
        }
    }
    Ok(())
}

/// An x tick label: `16`, `100k`, `1M`.
fn short(x: f64) -> String {
    if x >= 1e6 && (x / 1e6).fract() == 0.0 {
        format!("{}M", x / 1e6)
    } else if x >= 1e3 && (x / 1e3).fract() == 0.0 {
        format!("{}k", x / 1e3)
    } else {
        crate::report::sig(x, 3)
    }
}
