//! The world mode of the demo: a static level and a crowd of dynamic boxes moving over it
//! through a persistent [`World`], frame by frame.
//!
//! `demo world [LEVEL] [N_STATIC] [N_DYNAMIC] [D] [FRAMES]` (defaults: `terrain`, 200,000,
//! 20,000, 3, 300). The level is a built-in scene (any name the one-shot mode takes),
//! inserted once as static boxes; the crowd is dynamic boxes of 0.5 to 1 a side spread over
//! the level's bounds, each with its own velocity, bouncing off the bounds. Every frame most
//! of the crowd moves a little (one batch of `set_aabbs`), some of it stands still for a
//! while (how many rests rises and falls over the run), and every tenth frame a few boxes
//! are removed, to come back elsewhere a few frames later. Prints every k-th frame's update
//! time, objects changed, pairs added and removed and live pairs, then a summary, and at
//! the end checks the world's pairs against `find_pairs` over every live box.

use broadphase::internals::scene::{self, Rng};
use broadphase::{find_pairs_with, Aabb, Handle, Kind, World};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The defaults: a level of 200k terrain triangles, a crowd of 20k, 300 frames in 3D.
const LEVEL: &str = "terrain";
const STATICS: usize = 200_000;
const DYNAMICS: usize = 20_000;
const FRAMES: usize = 300;

/// Runs the world mode; `args` are those after `world` (all optional, in order).
pub fn main(args: &[String]) {
    let level = args.first().map(String::as_str).unwrap_or(LEVEL);
    let num = |i: usize, default: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let (statics, dynamics, d, frames) =
        (num(1, STATICS), num(2, DYNAMICS), num(3, 3), num(4, FRAMES).max(1));
    match d {
        1 => run::<1>(level, statics, dynamics, frames),
        2 => run::<2>(level, statics, dynamics, frames),
        3 => run::<3>(level, statics, dynamics, frames),
        _ => {
            eprintln!("D must be 1, 2 or 3");
            std::process::exit(2);
        }
    }
}

/// Exits with a message on a world error (none is expected here).
fn check<T>(r: Result<T, broadphase::Error>) -> T {
    r.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1);
    })
}

/// One box of the crowd.
struct Member<const D: usize> {
    /// Its handle, `None` while it is out of the world.
    handle: Option<Handle>,
    centre: [f32; D],
    half: [f32; D],
    /// Distance per frame along each axis.
    velocity: [f32; D],
    /// Frames left standing still.
    rest: u32,
    /// While out of the world: the frame it comes back.
    back_at: usize,
}

impl<const D: usize> Member<D> {
    fn aabb(&self) -> Aabb<D> {
        Aabb::new(
            std::array::from_fn(|k| self.centre[k] - self.half[k]),
            std::array::from_fn(|k| self.centre[k] + self.half[k]),
        )
    }
}

/// The crowd, its bounds and its random numbers.
struct Crowd<const D: usize> {
    members: Vec<Member<D>>,
    lo: [f32; D],
    hi: [f32; D],
    rng: Rng,
}

impl<const D: usize> Crowd<D> {
    /// `n` boxes at random places in `[lo, hi]`, each moving 0.02 to 0.15 a frame.
    fn new(n: usize, lo: [f32; D], hi: [f32; D], seed: u64) -> Self {
        let mut crowd = Self { members: Vec::with_capacity(n), lo, hi, rng: Rng::new(seed) };
        for _ in 0..n {
            let half = std::array::from_fn(|_| crowd.rng.range(0.25, 0.5));
            let velocity = std::array::from_fn(|_| {
                let sign = if crowd.rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 };
                sign * crowd.rng.range(0.02, 0.15)
            });
            let centre = crowd.place();
            crowd.members.push(Member { handle: None, centre, half, velocity, rest: 0, back_at: 0 });
        }
        crowd
    }

    /// A random centre inside the bounds.
    fn place(&mut self) -> [f32; D] {
        std::array::from_fn(|k| self.rng.range(self.lo[k], self.hi[k]))
    }

    /// Frame `frame`'s changes: the removals and returns, then one batch of moves.
    fn step(&mut self, world: &mut World<D>, frame: usize, moves: &mut Vec<(Handle, Aabb<D>)>) {
        // Every tenth frame one box in 200 leaves, to come back 5 to 14 frames later.
        if frame.is_multiple_of(10) {
            for _ in 0..self.members.len().div_ceil(200) {
                let i = self.rng.below(self.members.len());
                if let Some(h) = self.members[i].handle.take() {
                    check(world.remove(h));
                    self.members[i].back_at = frame + 5 + self.rng.below(10);
                }
            }
        }
        for i in 0..self.members.len() {
            if self.members[i].handle.is_none() && self.members[i].back_at == frame {
                self.members[i].centre = self.place();
                let m = &mut self.members[i];
                m.handle = Some(check(world.insert(m.aabb(), Kind::Dynamic)));
            }
        }
        // The chance that a moving box stops, for 5 to 49 frames, rises and falls.
        let phase = (frame as f64 * std::f64::consts::TAU / 150.0).sin();
        let stop = 0.02 * (1.0 + phase);
        moves.clear();
        for m in &mut self.members {
            let Some(h) = m.handle else { continue };
            if m.rest > 0 {
                m.rest -= 1;
                continue;
            }
            if self.rng.next_f64() < stop {
                m.rest = 5 + self.rng.below(45) as u32;
                continue;
            }
            for k in 0..D {
                let c = m.centre[k] + m.velocity[k];
                if c < self.lo[k] || c > self.hi[k] {
                    m.velocity[k] = -m.velocity[k];
                }
                m.centre[k] = c.clamp(self.lo[k], self.hi[k]);
            }
            moves.push((h, m.aabb()));
        }
        check(world.set_aabbs(moves));
    }
}

/// The level's bounds, or a cube of one unit of volume per crowd box where there is none.
fn bounds<const D: usize>(level: &[Aabb<D>], dynamics: usize) -> ([f32; D], [f32; D]) {
    if level.is_empty() {
        return ([0.0; D], [scene::world_side::<D>(dynamics) as f32; D]);
    }
    level.iter().fold(([f32::INFINITY; D], [f32::NEG_INFINITY; D]), |(lo, hi), b| {
        (std::array::from_fn(|k| lo[k].min(b.min[k])), std::array::from_fn(|k| hi[k].max(b.max[k])))
    })
}

/// A bar on standard error for a run of `frames` frames, `done` of them done.
fn progress_bar(frames: usize, done: usize) -> ProgressBar {
    let style = ProgressStyle::with_template("{bar:30} {pos}/{len} frames, eta {eta}, {msg}")
        .expect("a valid template");
    let bar = ProgressBar::new(frames as u64).with_style(style);
    bar.set_position(done as u64);
    bar
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn run<const D: usize>(name: &str, statics: usize, dynamics: usize, frames: usize) {
    let t = Instant::now();
    let Some(level): Option<Vec<Aabb<D>>> = broadphase::internals::by_name(name, statics, 42) else {
        eprintln!("unknown scene {name}: try one of {:?}", scene::SCENES);
        std::process::exit(2);
    };
    let (lo, hi) = bounds(&level, dynamics);
    let mut crowd = Crowd::new(dynamics, lo, hi, 7);
    println!(
        "world: level {name}, {D}D, {} static boxes (generated in {:.0} ms), crowd of {dynamics} dynamic boxes, {frames} frames, {} threads",
        level.len(),
        ms(t.elapsed()),
        rayon::current_num_threads()
    );

    // Frame 0: the level and the crowd go in, and the first update finds every pair.
    let t = Instant::now();
    let mut world = check(World::<D>::new(Default::default()));
    let level_handles = check(world.extend(&level, Kind::Static));
    let boxes: Vec<Aabb<D>> = crowd.members.iter().map(Member::aabb).collect();
    for (m, h) in crowd.members.iter_mut().zip(check(world.extend(&boxes, Kind::Dynamic))) {
        m.handle = Some(h);
    }
    let first = check(world.update()).added;
    println!(
        "frame   0: {} objects in, first update {:.1} ms, {first} pairs ({:.0} ms in all)",
        world.len(),
        ms(world.stats().t_update),
        ms(t.elapsed())
    );

    // Frames 1..=frames, every k-th printed; a progress bar on a terminal once the run
    // looks like lasting more than a second.
    let every = (frames / 12).max(1);
    let probe = frames.min(5);
    let mut bar = ProgressBar::hidden();
    let mut times = Vec::with_capacity(frames);
    let (mut movers, mut live) = (0usize, first);
    let mut moves = Vec::new();
    let t = Instant::now();
    for frame in 1..=frames {
        crowd.step(&mut world, frame, &mut moves);
        let (added, removed) = {
            let events = check(world.update());
            (events.added, events.removed)
        };
        let s = world.stats();
        live = live + added - removed;
        times.push(s.t_update);
        movers += s.moved;
        let projected = t.elapsed().as_secs_f64() * frames as f64 / probe as f64;
        if frame == probe && projected > 1.0 && std::io::stderr().is_terminal() {
            bar = progress_bar(frames, probe);
        } else {
            bar.inc(1);
        }
        bar.set_message(format!("{:.1} ms a frame", ms(s.t_update)));
        if frame % every == 0 || frame == 1 || frame == frames {
            bar.suspend(|| {
                println!(
                    "frame {frame:3}: update {:7.2} ms (search {:7.2}) | movers {:6} | pairs +{:<5} -{:<5} = {}",
                    ms(s.t_update),
                    ms(s.t_search),
                    s.moved,
                    added,
                    removed,
                    s.pairs
                );
            });
        }
    }
    bar.finish_and_clear();
    let wall = t.elapsed();

    let s = world.stats();
    let total: Duration = times.iter().sum();
    times.sort_unstable();
    println!(
        "{frames} frames in {:.2} s: update min {:.2} ms, median {:.2} ms, max {:.2} ms; {:.2} us per mover ({:.0} movers a frame)",
        wall.as_secs_f64(),
        ms(times[0]),
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1]),
        total.as_secs_f64() * 1e6 / movers.max(1) as f64,
        movers as f64 / frames as f64
    );
    println!(
        "memory: {:.1} bytes per object ({} static, {} dynamic), {:.1} bytes per pair ({} pairs)",
        s.object_bytes as f64 / (s.statics + s.dynamics).max(1) as f64,
        s.statics,
        s.dynamics,
        s.pair_bytes as f64 / s.pairs.max(1) as f64,
        s.pairs
    );

    // The check: every pair of live boxes from the one-shot finder, less static-static.
    let n_level = level_handles.len();
    let mut handles = level_handles;
    let mut boxes = level;
    for m in &crowd.members {
        if let Some(h) = m.handle {
            handles.push(h);
            boxes.push(m.aabb());
        }
    }
    let found = check(find_pairs_with(&boxes, world.config()));
    let mut expected: Vec<[Handle; 2]> = found
        .iter()
        .filter(|&&[_, j]| j as usize >= n_level)
        .map(|&[i, j]| {
            let (a, b) = (handles[i as usize], handles[j as usize]);
            if a.index() < b.index() {
                [a, b]
            } else {
                [b, a]
            }
        })
        .collect();
    expected.sort_unstable();
    if world.len() != boxes.len() || live != s.pairs || world.pairs() != expected.as_slice() {
        eprintln!(
            "pairs checked: MISMATCH: world {} objects, {} pairs ({} by its events); find_pairs {} boxes, {} pairs",
            world.len(),
            world.pairs().len(),
            live,
            boxes.len(),
            expected.len()
        );
        std::process::exit(1);
    }
    println!(
        "pairs checked: ok ({} pairs, the same as find_pairs over all {} live boxes)",
        expected.len(),
        boxes.len()
    );
}
