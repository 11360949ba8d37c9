//! The sides a regime's frame is played on (the world, the one-shot rebuild; rapier is
//! `world/peer.rs`), and the check that the world's pairs are right after every frame.

use crate::drive::{boxed, Driver, Frame, Regime, Scene};
use crate::peer::{peer_frame, Peer};
use broadphase::{brute_force_pairs, Aabb, Broadphase, Config, Handle, Kind, World};
use std::collections::HashMap;

/// The persistent world, with a handle by object id.
pub struct WorldSide<const D: usize> {
    pub world: World<D>,
    handles: Vec<Handle>,
    halves: Vec<[f32; D]>,
    /// The prepared frame.
    moves: Vec<(Handle, Aabb<D>)>,
    reinserts: Vec<(usize, Aabb<D>)>,
    kinds: Vec<(Handle, Kind)>,
}

impl<const D: usize> WorldSide<D> {
    /// Timed in `build`: `World::new`, `extend` (statics, then dynamics) and the first
    /// update.
    pub fn build(scene: &Scene<D>, boxes: &[Aabb<D>]) -> Self {
        let mut world = World::new(Config::default()).expect("world");
        let s = scene.statics.len();
        let mut handles = world.extend(&boxes[..s], Kind::Static).expect("extend");
        handles.extend(world.extend(&boxes[s..], Kind::Dynamic).expect("extend"));
        world.update().expect("update");
        let mut halves: Vec<[f32; D]> = scene.statics.iter().map(|&(_, h)| h).collect();
        halves.extend_from_slice(&scene.halves);
        WorldSide { world, handles, halves, moves: Vec::new(), reinserts: Vec::new(), kinds: Vec::new() }
    }

    /// Untimed: the frame as the world's calls take it.
    pub fn prepare(&mut self, frame: &Frame<D>, s: usize) {
        let (h, hv) = (&self.handles, &self.halves);
        self.moves.clear();
        self.moves.extend(frame.moves.iter().map(|&(i, c)| {
            let o = s + i as usize;
            (h[o], boxed(c, hv[o]))
        }));
        self.moves.extend(frame.static_moves.iter().map(|&(o, c)| (h[o as usize], boxed(c, hv[o as usize]))));
        self.reinserts.clear();
        self.reinserts.extend(frame.reinserts.iter().map(|&(i, c)| {
            let o = s + i as usize;
            (o, boxed(c, hv[o]))
        }));
        self.kinds.clear();
        self.kinds.extend(frame.kinds.iter().map(|&(o, k)| (h[o as usize], k)));
    }

    /// Timed: the calls and the update; the number of events.
    pub fn apply(&mut self) -> usize {
        self.world.set_aabbs(&self.moves).expect("set_aabbs");
        for &(o, b) in &self.reinserts {
            self.world.remove(self.handles[o]).expect("remove");
            self.handles[o] = self.world.insert(b, Kind::Dynamic).expect("insert");
        }
        for &(h, k) in &self.kinds {
            self.world.set_kind(h, k).expect("set_kind");
        }
        self.world.update().expect("update");
        let events = self.world.events();
        events.added.len() + events.removed.len()
    }

    /// `pairs()` as sorted object-id pairs.
    pub fn pairs(&self) -> Vec<[u32; 2]> {
        let ids: HashMap<Handle, u32> =
            self.handles.iter().enumerate().map(|(i, &h)| (h, i as u32)).collect();
        let mut v: Vec<[u32; 2]> = self.world.pairs().iter().map(|p| [ids[&p[0]], ids[&p[1]]]).collect();
        v.iter_mut().for_each(|p| p.sort_unstable());
        v.sort_unstable();
        v
    }
}

/// The one-shot rebuild: a reused `Broadphase` over every live box, kept outside the timer.
pub struct OneShot<const D: usize> {
    finder: Broadphase<D>,
    pub boxes: Vec<Aabb<D>>,
    halves: Vec<[f32; D]>,
    pub found: Vec<[u32; 2]>,
}

impl<const D: usize> OneShot<D> {
    pub fn new(driver: &Driver<D>) -> Self {
        OneShot {
            finder: Broadphase::new(Config::default()).expect("finder"),
            boxes: driver.boxes(),
            halves: driver.halves.clone(),
            found: Vec::new(),
        }
    }

    /// Untimed: the boxes brought up to the frame (kinds do not matter to it: it finds
    /// every pair, static-static included).
    pub fn follow(&mut self, frame: &Frame<D>, s: usize) {
        for &(i, c) in frame.moves.iter().chain(&frame.reinserts) {
            let o = s + i as usize;
            self.boxes[o] = boxed(c, self.halves[o]);
        }
        for &(o, c) in &frame.static_moves {
            self.boxes[o as usize] = boxed(c, self.halves[o as usize]);
        }
    }

    /// Timed: one `find_pairs` over every box; the number of pairs.
    pub fn run(&mut self) -> usize {
        self.finder.find_pairs(&self.boxes, &mut self.found).expect("find_pairs");
        self.found.len()
    }
}

/// The pairs with a dynamic member among `pairs` (object ids).
fn with_dynamic(pairs: &[[u32; 2]], kinds: &[Kind]) -> Vec<[u32; 2]> {
    pairs
        .iter()
        .copied()
        .filter(|p| kinds[p[0] as usize] == Kind::Dynamic || kinds[p[1] as usize] == Kind::Dynamic)
        .collect()
}

/// Plays `frames` frames of `regime` on a small scene and compares, after the build and
/// after every frame, the world's pairs, the one-shot's (static-static left out) and, where
/// it plays the regime, rapier's with skin 1e-30 (followed through its events) with the
/// brute force over the live boxes with a dynamic member. Prints one line; false on a
/// mismatch.
pub fn check<const D: usize, P: Peer<D>>(regime: Regime, scene: &Scene<D>, frames: usize, park: f32) -> bool {
    let mut driver = Driver::new(regime, scene, park);
    let start = driver.scene();
    let s = driver.statics();
    let mut world = WorldSide::build(&start, &driver.boxes());
    let mut one = OneShot::new(&driver);
    let mut rapier = regime.rapier().then(|| {
        let mut p = P::build(P::parts(&start, true, true));
        p.settle();
        p
    });
    let mut frame = Frame::default();
    let (mut untimed, mut last) = (0, 0);
    for step in 0..=frames {
        if step > 0 {
            driver.next(&mut frame);
            untimed += usize::from(!frame.timed);
            world.prepare(&frame, s);
            world.apply();
            one.follow(&frame, s);
            if let Some(p) = rapier.as_mut() {
                peer_frame(p, &frame, &start);
            }
        }
        one.run();
        let brute = brute_force_pairs(&driver.boxes(), &Config::default()).expect("brute force");
        let brute = with_dynamic(&brute, &driver.kinds);
        let ours = world.pairs();
        let oneshot = with_dynamic(&one.found, &driver.kinds);
        let theirs = rapier.as_ref().map(|p| p.pairs());
        let good = ours == brute && oneshot == brute && theirs.as_ref().is_none_or(|t| *t == brute);
        last = brute.len();
        if !good {
            println!(
                "check {D}d {} n={} frame {step}: brute force {}, world {}, one-shot {}, rapier exact {:?}: MISMATCH",
                regime.name(),
                driver.centres.len(),
                brute.len(),
                ours.len(),
                oneshot.len(),
                theirs.as_ref().map(Vec::len)
            );
            for (name, got) in [("world", &ours), ("one-shot", &oneshot)]
                .into_iter()
                .chain(theirs.iter().map(|t| ("rapier", t)))
            {
                let missing: Vec<_> =
                    brute.iter().filter(|p| got.binary_search(p).is_err()).take(3).collect();
                let extra: Vec<_> = got.iter().filter(|p| brute.binary_search(p).is_err()).take(3).collect();
                println!("    {name}: missing {missing:?}, extra {extra:?}");
            }
            return false;
        }
    }
    let with = if rapier.is_some() { ", rapier exact" } else { "" };
    println!(
        "check {D}d {}: n={}, {frames} frames ({untimed} untimed), {last} pairs at the end: world, one-shot{with} ok",
        regime.name(),
        driver.centres.len()
    );
    true
}
