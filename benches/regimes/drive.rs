//! The scene and the regimes' frames: what every side of `benches/regimes.rs` is fed.
//!
//! A [`Driver`] holds the truth (every object's centre, half sides and kind, by object id:
//! statics `0..s`, dynamic box `i` is `s + i`) and draws the next frame from it, seeded,
//! so two drivers cloned from the same start give the same frames. The world, the one-shot
//! and rapier each follow a frame's changes; none of them sees the driver's state.

use broadphase::internals::scene::{self, Rng};
use broadphase::{Aabb, Kind};
use std::collections::VecDeque;

/// Seed of every scene and every regime.
pub const SEED: u64 = 1;
/// Time step of `fall` (60 frames a second) and its gravity, length units per second².
const DT: f32 = 1.0 / 60.0;
const GRAVITY: f32 = 9.81;
/// How far `fall` drops: boxes start this far above their place on the level.
const DROP: f32 = 2.0;
/// `pool`: parked boxes sit in a cube this wide at the park (1e9 by default) on every
/// axis. At 1e9 an `f32` is a multiple of 64, so a parked box is a point on a grid of 64
/// steps a side (64³ spots in 3D, 64² in 2D): spread out, as a spent projectile pool is,
/// but not so far that every parked box touches every other.
const PARK_SPREAD: f32 = 64.0 * 64.0;
/// `pool`: the share of dynamic boxes parked throughout.
const PARKED_SHARE: f64 = 0.3;
/// `doors`: static boxes moved each frame.
const DOORS: usize = 10;

/// A box as every side sees it: `[c - h, c + h]`.
pub fn boxed<const D: usize>(c: [f32; D], h: [f32; D]) -> Aabb<D> {
    Aabb::new(std::array::from_fn(|k| c[k] - h[k]), std::array::from_fn(|k| c[k] + h[k]))
}

/// Static boxes then dynamic boxes, each a centre and half sides, as the world starts
/// (the layout `world/peer.rs` builds rapier from).
#[derive(Clone)]
pub struct Scene<const D: usize> {
    pub statics: Vec<([f32; D], [f32; D])>,
    pub centres: Vec<[f32; D]>,
    pub halves: Vec<[f32; D]>,
}

impl<const D: usize> Scene<D> {
    /// The level (`terrain` or `tiles`, seed 1) and dynamic boxes of sides 0.5-1 on it,
    /// as `benches/world.rs` places them: each on a random static box, its bottom 0-0.3
    /// below that box's top, jittered by up to 0.5 along the ground.
    pub fn new(kind: &str, n_static: usize, n_dynamic: usize) -> Self {
        let raw = if kind == "tiles" {
            scene::tiles::<D>(n_static, SEED)
        } else {
            scene::terrain::<D>(n_static, SEED)
        };
        let statics: Vec<_> = raw
            .iter()
            .map(|b| {
                (
                    std::array::from_fn(|k| (b.min[k] + b.max[k]) * 0.5),
                    std::array::from_fn(|k| (b.max[k] - b.min[k]) * 0.5),
                )
            })
            .collect();
        let mut rng = Rng::new(SEED ^ 0xD1CE);
        let mut scene = Scene { statics, centres: Vec::new(), halves: Vec::new() };
        for _ in 0..n_dynamic {
            let h: [f32; D] = std::array::from_fn(|_| rng.range(0.25, 0.5));
            let c = scene.spot(&mut rng, h);
            scene.centres.push(c);
            scene.halves.push(h);
        }
        scene
    }

    /// A centre on the level for a box of half sides `h`.
    fn spot(&self, rng: &mut Rng, h: [f32; D]) -> [f32; D] {
        let (sc, sh) = self.statics[rng.below(self.statics.len())];
        let mut c: [f32; D] = std::array::from_fn(|k| sc[k] + rng.range(-0.5, 0.5));
        c[D - 1] = sc[D - 1] + sh[D - 1] + h[D - 1] - rng.range(0.0, 0.3);
        c
    }

    /// Static and dynamic boxes.
    pub fn objects(&self) -> usize {
        self.statics.len() + self.centres.len()
    }
}

/// One frame's changes. `moves` and `reinserts` name dynamic boxes by their index among
/// the dynamic boxes (as `world/peer.rs` reads them); `static_moves` and `kinds` name
/// objects by id. Applied in that order: moves, static moves, re-inserts (remove, then
/// insert at the box's current centre), kinds.
///
/// No regime re-inserts (the sides still play them): rapier 0.36's `BroadPhaseBvh` keeps
/// the pairs of a collider removed in the update that inserts a new one at the same
/// index, and later reports one as `DeletePair` naming the dead handle, on which
/// `world/peer.rs`'s event tracking (the check) panics.
#[derive(Default)]
pub struct Frame<const D: usize> {
    pub moves: Vec<(u32, [f32; D])>,
    pub reinserts: Vec<(u32, [f32; D])>,
    pub static_moves: Vec<(u32, [f32; D])>,
    pub kinds: Vec<(u32, Kind)>,
    /// False for a frame that sets a regime up again (`fall`'s lift): every side applies
    /// it, none times it.
    pub timed: bool,
}

impl<const D: usize> Frame<D> {
    fn clear(&mut self) {
        self.moves.clear();
        self.reinserts.clear();
        self.static_moves.clear();
        self.kinds.clear();
        self.timed = true;
    }
}

/// What users do to a world, frame after frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
    /// 10% of dynamic boxes step 0.02-0.05, within 0.5 of their start (`benches/world.rs`'s
    /// `move_10`, without its 0.1% re-inserts).
    Slow10,
    /// 10% / 100% of dynamic boxes step 0.2-0.5 (half a box), within 1 of their start.
    Fast10,
    Fast100,
    /// 10% step 0.5-1 (a box) along the ground (not up or down), within 2 of their start.
    Walk10,
    /// Every dynamic box falls from 2 above its place, clamped at its place.
    Fall,
    /// 1% of dynamic boxes parked far away and as many fired back onto the level; 30%
    /// parked.
    Pool,
    /// 10 static boxes moved by their size (and back the next frame), 1% of dynamic slow.
    Doors,
    /// 1% of the static boxes turned dynamic, as many dynamic turned static.
    Kinds,
}

impl Regime {
    pub const ALL: [Regime; 8] = [
        Regime::Slow10,
        Regime::Fast10,
        Regime::Fast100,
        Regime::Walk10,
        Regime::Fall,
        Regime::Pool,
        Regime::Doors,
        Regime::Kinds,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Regime::Slow10 => "slow_10",
            Regime::Fast10 => "fast_10",
            Regime::Fast100 => "fast_100",
            Regime::Walk10 => "walk_10",
            Regime::Fall => "fall",
            Regime::Pool => "pool",
            Regime::Doors => "doors",
            Regime::Kinds => "kinds",
        }
    }

    /// Whether `world/peer.rs` can play its frames: dynamic boxes moved and re-inserted
    /// only (it keeps no handle to a static collider, and no kind changes).
    pub fn rapier(self) -> bool {
        !matches!(self, Regime::Doors | Regime::Kinds)
    }
}

/// The truth, and the regime's generator.
#[derive(Clone)]
pub struct Driver<const D: usize> {
    regime: Regime,
    /// Static boxes: objects `0..s`.
    s: usize,
    /// By object id: the centre now, the half sides, the kind now, the centre it started at.
    pub centres: Vec<[f32; D]>,
    pub halves: Vec<[f32; D]>,
    pub kinds: Vec<Kind>,
    home: Vec<[f32; D]>,
    rng: Rng,
    /// The rotating window of movers over the dynamic boxes.
    cursor: usize,
    /// `fall`: frames since the lift.
    fall_t: u32,
    /// `pool`: where parked boxes go (see `PARK_SPREAD`), dynamic boxes on the level, and
    /// those parked, oldest first.
    park: f32,
    active: Vec<u32>,
    parked: VecDeque<u32>,
    /// `doors`: the static boxes open now.
    open: Vec<u32>,
    /// `kinds`: the object ids of each kind now.
    of_kind: [Vec<u32>; 2],
    /// The level, for `pool`'s shots.
    level: Scene<D>,
}

impl<const D: usize> Driver<D> {
    /// The regime's start from `scene` (for `pool`, 30% of the dynamic boxes parked at
    /// `park` on every axis; for `fall`, every dynamic box lifted).
    pub fn new(regime: Regime, scene: &Scene<D>, park: f32) -> Self {
        let s = scene.statics.len();
        let n = scene.centres.len();
        let mut centres: Vec<[f32; D]> = scene.statics.iter().map(|&(c, _)| c).collect();
        centres.extend_from_slice(&scene.centres);
        let mut halves: Vec<[f32; D]> = scene.statics.iter().map(|&(_, h)| h).collect();
        halves.extend_from_slice(&scene.halves);
        let mut kinds = vec![Kind::Static; s];
        kinds.resize(s + n, Kind::Dynamic);
        let level = Scene { statics: scene.statics.clone(), centres: Vec::new(), halves: Vec::new() };
        let mut d = Driver {
            regime,
            s,
            home: centres.clone(),
            centres,
            halves,
            kinds,
            rng: Rng::new(SEED ^ 0xF4A3),
            cursor: 0,
            fall_t: 0,
            park,
            active: Vec::new(),
            parked: VecDeque::new(),
            open: Vec::new(),
            of_kind: [(0..s as u32).collect(), (s as u32..(s + n) as u32).collect()],
            level,
        };
        match regime {
            Regime::Fall => {
                for i in s..s + n {
                    d.centres[i][D - 1] += DROP;
                }
            }
            Regime::Pool => {
                let mut order: Vec<u32> = (0..n as u32).collect();
                for j in (1..n).rev() {
                    order.swap(j, d.rng.below(j + 1));
                }
                let parked = (n as f64 * PARKED_SHARE).round() as usize;
                for &i in &order[..parked] {
                    d.centres[s + i as usize] = park_spot(&mut d.rng, park);
                }
                d.parked.extend(&order[..parked]);
                d.active = order[parked..].to_vec();
            }
            _ => {}
        }
        d
    }

    /// The scene as the regime starts (what the world and rapier are built from).
    pub fn scene(&self) -> Scene<D> {
        let s = self.s;
        Scene {
            statics: (0..s).map(|i| (self.centres[i], self.halves[i])).collect(),
            centres: self.centres[s..].to_vec(),
            halves: self.halves[s..].to_vec(),
        }
    }

    pub fn statics(&self) -> usize {
        self.s
    }

    fn dynamics(&self) -> usize {
        self.centres.len() - self.s
    }

    /// Every box now, by object id.
    pub fn boxes(&self) -> Vec<Aabb<D>> {
        self.centres.iter().zip(&self.halves).map(|(&c, &h)| boxed(c, h)).collect()
    }

    /// The next frame into `out`, and the truth brought up to it.
    pub fn next(&mut self, out: &mut Frame<D>) {
        out.clear();
        let n = self.dynamics();
        let share = |percent: usize| (n * percent).div_ceil(100).max(1);
        match self.regime {
            Regime::Slow10 => self.walk(share(10), (0.02, 0.05), 0.5, false, out),
            Regime::Fast10 => self.walk(share(10), (0.2, 0.5), 1.0, false, out),
            Regime::Fast100 => self.walk(n, (0.2, 0.5), 1.0, false, out),
            Regime::Walk10 => self.walk(share(10), (0.5, 1.0), 2.0, true, out),
            Regime::Fall => self.fall(out),
            Regime::Pool => self.pool(share(1), out),
            Regime::Doors => {
                self.doors(out);
                self.walk(share(1), (0.02, 0.05), 0.5, false, out);
            }
            Regime::Kinds => self.swap_kinds(self.s.div_ceil(100).max(1), out),
        }
    }

    /// The next `count` dynamic boxes of the rotating window each step `len` in a random
    /// direction (along the ground only where `flat`), turned back on an axis where it would
    /// go further than `bound` from its start.
    fn walk(&mut self, count: usize, len: (f32, f32), bound: f32, flat: bool, out: &mut Frame<D>) {
        let n = self.dynamics();
        for j in 0..count.min(n) {
            let i = (self.cursor + j) % n;
            let o = self.s + i;
            let l = self.rng.range(len.0, len.1);
            let mut d: [f32; D] = std::array::from_fn(|_| self.rng.range(-1.0, 1.0));
            if flat {
                d[D - 1] = 0.0;
            }
            let norm = d.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-3);
            let c = &mut self.centres[o];
            for k in 0..D {
                let mut step = d[k] / norm * l;
                if (c[k] + step - self.home[o][k]).abs() > bound {
                    step = -step;
                }
                c[k] += step;
            }
            out.moves.push((i as u32, *c));
        }
        if n > 0 {
            self.cursor = (self.cursor + count) % n;
        }
    }

    /// Every dynamic box falls `g t² / 2` below its lift, clamped at its place on the
    /// level; once all have landed, the next frame (untimed) lifts them again.
    fn fall(&mut self, out: &mut Frame<D>) {
        let (s, n) = (self.s, self.dynamics());
        let lift = self.fall_t > 0 && 0.5 * GRAVITY * (self.fall_t as f32 * DT).powi(2) >= DROP;
        self.fall_t = if lift { 0 } else { self.fall_t + 1 };
        out.timed = !lift;
        let drop = (0.5 * GRAVITY * (self.fall_t as f32 * DT).powi(2)).min(DROP);
        for i in 0..n {
            let c = &mut self.centres[s + i];
            c[D - 1] = self.home[s + i][D - 1] + DROP - drop;
            out.moves.push((i as u32, *c));
        }
    }

    /// `count` random boxes on the level parked, then the `count` parked longest fired
    /// back to a random spot on the level.
    fn pool(&mut self, count: usize, out: &mut Frame<D>) {
        let s = self.s;
        for _ in 0..count.min(self.active.len()) {
            let i = self.active.swap_remove(self.rng.below(self.active.len()));
            self.centres[s + i as usize] = park_spot(&mut self.rng, self.park);
            self.parked.push_back(i);
            out.moves.push((i, self.centres[s + i as usize]));
        }
        for _ in 0..count.min(self.parked.len()) {
            let i = self.parked.pop_front().expect("parked");
            let c = self.level.spot(&mut self.rng, self.halves[s + i as usize]);
            self.centres[s + i as usize] = c;
            self.active.push(i);
            out.moves.push((i, c));
        }
    }

    /// Closes the doors opened last frame, or opens `DOORS` new ones (a static box moved
    /// by its own size along the first axis).
    fn doors(&mut self, out: &mut Frame<D>) {
        if !self.open.is_empty() {
            for i in self.open.drain(..) {
                self.centres[i as usize] = self.home[i as usize];
                out.static_moves.push((i, self.centres[i as usize]));
            }
            return;
        }
        while self.open.len() < DOORS.min(self.s) {
            let i = self.rng.below(self.s) as u32;
            if !self.open.contains(&i) {
                self.open.push(i);
                let c = &mut self.centres[i as usize];
                c[0] += 2.0 * self.halves[i as usize][0];
                out.static_moves.push((i, *c));
            }
        }
    }

    /// `count` random static objects turned dynamic and as many random dynamic ones
    /// turned static.
    fn swap_kinds(&mut self, count: usize, out: &mut Frame<D>) {
        let count = count.min(self.of_kind[0].len()).min(self.of_kind[1].len());
        let mut picked = [Vec::new(), Vec::new()];
        for (k, p) in picked.iter_mut().enumerate() {
            for _ in 0..count {
                let list = &mut self.of_kind[k];
                p.push(list.swap_remove(self.rng.below(list.len())));
            }
        }
        for (k, to) in [(0, Kind::Dynamic), (1, Kind::Static)] {
            for &o in &picked[k] {
                self.kinds[o as usize] = to;
                self.of_kind[1 - k].push(o);
                out.kinds.push((o, to));
            }
        }
    }
}

/// A parked box's centre.
fn park_spot<const D: usize>(rng: &mut Rng, park: f32) -> [f32; D] {
    std::array::from_fn(|_| park + rng.range(0.0, PARK_SPREAD))
}
