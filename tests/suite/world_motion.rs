//! The world under the motions that defeat fat boxes, against brute force with
//! `validate()` after every frame, in 2D and 3D: teleports, an object pool parking spent
//! objects far away and firing them again, fast movers leaving their fat boxes every
//! frame, mass changes of kind, and frames mixing them. These take the paths a creeping
//! crowd never does: leaves given up, objects without a leaf and their tree, split walks,
//! the dynamic tree rebuilt with strays, whole frames.

use broadphase::{Aabb, Config, Handle, Kind, QueryFilter, World};

/// A small xorshift generator: the scenes are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct Obj<const D: usize> {
    h: Handle,
    b: Aabb<D>,
    kind: Kind,
}

/// Every pair the rule makes (margin `m`), by brute force.
fn brute<const D: usize>(objs: &[Obj<D>], m: f32) -> Vec<[Handle; 2]> {
    let mut out = Vec::new();
    for (i, a) in objs.iter().enumerate() {
        for b in &objs[i + 1..] {
            if a.kind == Kind::Static && b.kind == Kind::Static {
                continue;
            }
            let (ga, gb) = (a.b.grown(m), b.b.grown(m));
            if !ga.is_inverted() && !gb.is_inverted() && ga.overlaps(&gb) {
                out.push(if a.h.index() < b.h.index() { [a.h, b.h] } else { [b.h, a.h] });
            }
        }
    }
    out.sort_unstable();
    out
}

fn cube<const D: usize>(c: [f32; D], side: f32) -> Aabb<D> {
    Aabb::new(c, std::array::from_fn(|k| c[k] + side))
}

/// Runs `frames` frames of `step` over a level of static tiles and dynamic boxes,
/// checking every frame's pairs, events and invariants, and queries now and then.
fn run<const D: usize>(
    seed: u64,
    margin: f32,
    frames: usize,
    step: impl Fn(&mut Rng, &mut World<D>, &mut Vec<Obj<D>>, usize),
) {
    let mut r = Rng(seed);
    let mut w = World::<D>::new(Config::default().with_margin(margin)).unwrap();
    let mut objs: Vec<Obj<D>> = Vec::new();
    for i in 0..300 {
        let c: [f32; D] =
            std::array::from_fn(|k| if k == 0 { (i % 30) as f32 } else { (i / 30) as f32 * 1.5 });
        let b = cube(c, 1.0);
        objs.push(Obj { h: w.insert(b, Kind::Static).unwrap(), b, kind: Kind::Static });
    }
    for _ in 0..300 {
        let c: [f32; D] = std::array::from_fn(|_| r.unit() * 30.0);
        let b = cube(c, 0.3 + r.unit());
        objs.push(Obj { h: w.insert(b, Kind::Dynamic).unwrap(), b, kind: Kind::Dynamic });
    }
    let mut last: Vec<[Handle; 2]> = Vec::new();
    for f in 0..frames {
        step(&mut r, &mut w, &mut objs, f);
        let want = brute(&objs, margin);
        w.update().unwrap_or_else(|e| panic!("seed {seed} frame {f}: {e}"));
        let ev = w.events();
        let added: Vec<_> = want.iter().filter(|p| last.binary_search(p).is_err()).copied().collect();
        let removed: Vec<_> = last.iter().filter(|p| want.binary_search(p).is_err()).copied().collect();
        assert_eq!(ev.added, added.as_slice(), "seed {seed} {D}D frame {f}: added");
        assert_eq!(ev.removed, removed.as_slice(), "seed {seed} {D}D frame {f}: removed");
        w.validate().unwrap_or_else(|e| panic!("seed {seed} {D}D frame {f}: {e}"));
        assert_eq!(w.pairs(), want.as_slice(), "seed {seed} {D}D frame {f}");
        last = want;
        if f % 5 == 0 {
            let q = cube([r.unit() * 30.0; D], 4.0);
            let mut got = Vec::new();
            w.query_aabb(q, QueryFilter::new(), &mut got).unwrap();
            let mut exp: Vec<Handle> = objs.iter().filter(|o| o.b.overlaps(&q)).map(|o| o.h).collect();
            exp.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, exp, "seed {seed} {D}D frame {f}: query");
        }
    }
}

fn moved<const D: usize>(w: &mut World<D>, o: &mut Obj<D>, b: Aabb<D>) {
    w.set_aabb(o.h, b).unwrap();
    o.b = b;
}

/// Dynamic objects of `objs`, by position.
fn dynamics<const D: usize>(objs: &[Obj<D>]) -> Vec<usize> {
    (0..objs.len()).filter(|&i| objs[i].kind == Kind::Dynamic).collect()
}

fn pool<const D: usize>(seed: u64, margin: f32) {
    // Each frame a tenth of the active boxes are parked at 1e9 (spread a little there),
    // and a tenth of the parked ones fired back onto the level.
    run::<D>(seed, margin, 40, |r, w, objs, _| {
        for i in dynamics(objs) {
            let parked = objs[i].b.min[0] > 1e8;
            if r.below(10) == 0 {
                let b = if parked {
                    cube(std::array::from_fn(|_| r.unit() * 30.0), 0.5)
                } else {
                    cube(std::array::from_fn(|_| 1e9 + r.unit() * 100.0), 0.5)
                };
                moved(w, &mut objs[i], b);
            } else if !parked {
                let b = objs[i].b;
                let d = r.unit() * 0.1;
                moved(w, &mut objs[i], Aabb::new(b.min.map(|x| x + d), b.max.map(|x| x + d)));
            }
        }
    });
}

fn fast<const D: usize>(seed: u64, margin: f32) {
    // Every dynamic box steps half its size or more, every frame; a few teleport.
    run::<D>(seed, margin, 30, |r, w, objs, _| {
        for i in dynamics(objs) {
            let b = objs[i].b;
            let d: [f32; D] = std::array::from_fn(|_| (r.unit() - 0.5) * 1.5);
            let mut nb =
                Aabb::new(std::array::from_fn(|k| b.min[k] + d[k]), std::array::from_fn(|k| b.max[k] + d[k]));
            if r.below(50) == 0 {
                nb = cube(
                    std::array::from_fn(|_| r.unit() * 30.0 - if r.below(2) == 0 { 1e4 } else { 0.0 }),
                    0.7,
                );
            }
            moved(w, &mut objs[i], nb);
        }
    });
}

fn kinds<const D: usize>(seed: u64, margin: f32) {
    // A fifth of all objects change kind on some frames; removes and respawns elsewhere.
    run::<D>(seed, margin, 30, |r, w, objs, f| {
        if f % 3 == 1 {
            for o in objs.iter_mut() {
                if r.below(5) == 0 {
                    o.kind = if o.kind == Kind::Static { Kind::Dynamic } else { Kind::Static };
                    w.set_kind(o.h, o.kind).unwrap();
                }
            }
        }
        for _ in 0..20 {
            let i = r.below(objs.len());
            w.remove(objs[i].h).unwrap();
            let b = cube(std::array::from_fn(|_| r.unit() * 30.0), 0.3 + r.unit());
            objs[i] = Obj { h: w.insert(b, objs[i].kind).unwrap(), b, kind: objs[i].kind };
        }
        for i in dynamics(objs) {
            if r.below(4) == 0 {
                let b = objs[i].b;
                let d = (r.unit() - 0.5) * 0.2;
                moved(w, &mut objs[i], Aabb::new(b.min.map(|x| x + d), b.max.map(|x| x + d)));
            }
        }
    });
}

fn doors<const D: usize>(seed: u64, margin: f32) {
    // A few static boxes move by their size and back each frame (doors), now and then
    // one is removed and a new one put in; the dynamic boxes creep.
    // After frame 40 the statics stay: the static tree is rebuilt by area 64 frames on.
    run::<D>(seed, margin, 110, |r, w, objs, f| {
        let statics: Vec<usize> = (0..objs.len()).filter(|&i| objs[i].kind == Kind::Static).collect();
        for _ in 0..if f < 40 { 3 } else { 0 } {
            let i = statics[r.below(statics.len())];
            let b = objs[i].b;
            let d = if f % 2 == 0 { 1.0 } else { -1.0 };
            moved(w, &mut objs[i], Aabb::new(b.min.map(|x| x + d), b.max.map(|x| x + d)));
        }
        if f % 7 == 3 && f < 40 {
            let i = statics[r.below(statics.len())];
            w.remove(objs[i].h).unwrap();
            let b = cube(std::array::from_fn(|_| r.unit() * 30.0), 1.0);
            objs[i] = Obj { h: w.insert(b, Kind::Static).unwrap(), b, kind: Kind::Static };
        }
        for i in dynamics(objs) {
            if r.below(3) == 0 {
                let b = objs[i].b;
                let d = (r.unit() - 0.5) * 0.3;
                moved(w, &mut objs[i], Aabb::new(b.min.map(|x| x + d), b.max.map(|x| x + d)));
            }
        }
    });
}

#[test]
fn a_few_statics_changed_a_frame_match_brute_force() {
    for seed in 1..4 {
        for margin in [0.0, 0.1] {
            doors::<2>(seed, margin);
            doors::<3>(seed, margin);
        }
    }
}

#[test]
fn an_object_pool_parking_far_away_matches_brute_force() {
    for seed in 1..4 {
        for margin in [0.0, 0.1] {
            pool::<2>(seed, margin);
            pool::<3>(seed, margin);
        }
    }
}

#[test]
fn fast_movers_and_teleports_match_brute_force() {
    for seed in 1..4 {
        for margin in [0.0, 0.1, -0.05] {
            fast::<2>(seed, margin);
            fast::<3>(seed, margin);
        }
    }
}

#[test]
fn mass_changes_of_kind_and_respawns_match_brute_force() {
    for seed in 1..4 {
        for margin in [0.0, 0.1] {
            kinds::<2>(seed, margin);
            kinds::<3>(seed, margin);
        }
    }
}
