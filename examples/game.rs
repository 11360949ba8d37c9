//! A small 2D game loop on a `World`, as an engine would embed it: entities hold their
//! handles and the world holds each entity's index as user data; a static level, moving
//! kinematic platforms, coins as sensors (by filter), enemies that sleep until the player
//! comes near, bullets that kill, explode and respawn what they kill. Begin events drive
//! the logic, which queries the world while it reads them: an explosion is a sphere
//! query, the player aims at the nearest enemy and checks the line of sight with a ray
//! whose callback runs an exact circle test and leaves the shooter out.
//!
//! Run: `cargo run --release --example game`. It prints a short log and checks itself:
//! the world's pairs against brute force at the end, and that every mechanic happened.

use broadphase::{brute_force_pairs, Aabb2, CastAction, Config, Filter, Kind, QueryFilter, World2};

// Collision groups.
const LEVEL: u32 = 1;
const PLAYER: u32 = 2;
const ENEMY: u32 = 4;
const COIN: u32 = 8;
const BULLET: u32 = 16;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    Wall,
    Platform,
    Player,
    Enemy,
    Coin,
    Bullet,
}

/// A game object: where it is, how it moves, and its handle in the world while alive.
#[derive(Clone, Copy, Debug)]
struct Entity {
    role: Role,
    pos: [f32; 2],
    vel: [f32; 2],
    half: f32,
    handle: Option<broadphase::Handle>,
    respawn_at: Option<u32>,
}

impl Entity {
    fn aabb(&self) -> Aabb2 {
        let h = self.half;
        Aabb2::new([self.pos[0] - h, self.pos[1] - h], [self.pos[0] + h, self.pos[1] + h])
    }

    fn filter(&self) -> Filter {
        let (membership, mask) = match self.role {
            Role::Wall | Role::Platform => (LEVEL, PLAYER | ENEMY | BULLET),
            Role::Player => (PLAYER, LEVEL | ENEMY | COIN),
            Role::Enemy => (ENEMY, u32::MAX),
            // Sensors: a coin notices the player only.
            Role::Coin => (COIN, PLAYER),
            Role::Bullet => (BULLET, LEVEL | ENEMY),
        };
        Filter { membership, mask }
    }

    fn kind(&self) -> Kind {
        match self.role {
            Role::Wall => Kind::Static,
            Role::Platform => Kind::Kinematic,
            _ => Kind::Dynamic,
        }
    }
}

/// A small deterministic generator (xorshift), so the run is the same every time.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// What the event handlers decide; applied once the events are read.
enum Action {
    Kill { enemy: usize, bullet: usize },
    Push { enemy: usize, away_from: [f32; 2] },
    Drop(usize),
    Collect(usize),
}

fn main() -> Result<(), broadphase::Error> {
    let mut world = World2::new(Config::default())?;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut es: Vec<Entity> = Vec::new();
    // The level: a border of wall tiles and a few pillars, loaded as one batch.
    for i in 0..50 {
        let x = 1.0 + 2.0 * i as f32;
        for pos in [[x, 1.0], [x, 99.0], [1.0, x], [99.0, x]] {
            spawn(&mut es, Role::Wall, pos, 1.0);
        }
    }
    for _ in 0..12 {
        let pos = [10.0 + 80.0 * rng.next(), 10.0 + 80.0 * rng.next()];
        spawn(&mut es, Role::Wall, pos, 2.5);
    }
    let walls: Vec<usize> = (0..es.len()).collect();
    let boxes: Vec<Aabb2> = walls.iter().map(|&i| es[i].aabb()).collect();
    let data: Vec<u64> = walls.iter().map(|&i| i as u64).collect();
    let handles = world.extend_with(&boxes, Kind::Static, es[0].filter(), &data)?;
    for (&i, h) in walls.iter().zip(handles) {
        es[i].handle = Some(h);
    }
    // Platforms, the player, enemies and coins, one insert each.
    for k in 0..3 {
        let i = spawn(&mut es, Role::Platform, [20.0 + 30.0 * k as f32, 30.0 + 20.0 * k as f32], 3.0);
        es[i].vel = [0.4, 0.0];
    }
    let player = spawn(&mut es, Role::Player, [50.0, 50.0], 1.0);
    for _ in 0..60 {
        spawn(&mut es, Role::Enemy, [5.0 + 90.0 * rng.next(), 5.0 + 90.0 * rng.next()], 0.8);
    }
    for _ in 0..25 {
        spawn(&mut es, Role::Coin, [5.0 + 90.0 * rng.next(), 5.0 + 90.0 * rng.next()], 0.5);
    }
    for (i, e) in es.iter_mut().enumerate().skip(walls.len()) {
        e.handle = Some(world.insert_with(e.aabb(), e.kind(), e.filter(), i as u64)?);
    }

    let (mut kills, mut coins, mut respawns, mut pushed, mut shots, mut blocked) = (0, 0, 0, 0, 0, 0);
    let (mut near, mut found) = (Vec::new(), Vec::new());
    let mut actions = Vec::new();
    for frame in 0..400u32 {
        // Motion. The player runs a loop; a platform slides between two stops; an enemy
        // near the player chases it, one far away sleeps: it is not moved, and costs
        // the world nothing.
        let a = frame as f32 * 0.02;
        es[player].pos = [50.0 + 35.0 * a.cos(), 50.0 + 35.0 * a.sin()];
        let p = es[player].pos;
        for e in es.iter_mut().filter(|e| e.handle.is_some()) {
            match e.role {
                Role::Platform => {
                    if frame % 60 == 0 {
                        e.vel[0] = -e.vel[0];
                    }
                    e.pos[0] += e.vel[0];
                }
                Role::Enemy => {
                    let d = [p[0] - e.pos[0], p[1] - e.pos[1]];
                    let len = (d[0] * d[0] + d[1] * d[1]).sqrt();
                    if len < 25.0 && len > 0.0 {
                        e.pos = [e.pos[0] + 0.15 * d[0] / len, e.pos[1] + 0.15 * d[1] / len];
                    } else {
                        continue;
                    }
                }
                Role::Player | Role::Bullet => {
                    e.pos = [e.pos[0] + e.vel[0], e.pos[1] + e.vel[1]];
                }
                Role::Wall | Role::Coin => continue,
            }
            if let Some(h) = e.handle {
                world.set_aabb(h, e.aabb())?;
            }
        }
        // Every tenth frame the player aims at the nearest enemy within 30 and fires if
        // nothing stands in the way: a ray from inside the player (left out) whose
        // callback tests the circle each box holds, clipping the ray at the exact hit.
        let me = es[player].handle.expect("the player lives");
        if frame % 10 == 0 {
            let enemies = QueryFilter::new().only_dynamic().mask(ENEMY);
            world.nearest(p, 1, 30.0, enemies, &mut near)?;
            if let Some(&(target, _)) = near.first() {
                let t = es[world.user_data(target)? as usize].pos;
                let dir = [t[0] - p[0], t[1] - p[1]];
                let mut first = None;
                let sight = QueryFilter::new().exclude_handle(me).mask(LEVEL | ENEMY);
                let _ = world.cast_ray_with(p, dir, 1.0, sight, |hit| {
                    let e = &es[world.user_data(hit.handle).unwrap_or(0) as usize];
                    // A wall or platform is its box; an enemy is the circle in its box.
                    let exact =
                        if e.role == Role::Enemy { circle_hit(p, dir, e.pos, e.half) } else { Some(hit.t) };
                    match exact {
                        Some(t) => {
                            first = Some(hit.handle);
                            CastAction::Clip(t)
                        }
                        None => CastAction::Ignore,
                    }
                })?;
                if first == Some(target) {
                    let len = (dir[0] * dir[0] + dir[1] * dir[1]).sqrt();
                    let b = spawn(&mut es, Role::Bullet, p, 0.2);
                    es[b].vel = [dir[0] / len, dir[1] / len];
                    es[b].pos = [p[0] + 1.5 * es[b].vel[0], p[1] + 1.5 * es[b].vel[1]];
                    let e = es[b];
                    es[b].handle = Some(world.insert_with(e.aabb(), e.kind(), e.filter(), b as u64)?);
                    shots += 1;
                } else {
                    blocked += 1;
                }
            }
        }
        world.update()?;
        // The events: each begin decides an action, reading and querying the world.
        let events = world.events();
        for &[a, b] in events.added {
            let (ia, ib) = (world.user_data(a)? as usize, world.user_data(b)? as usize);
            let (ra, rb) = (es[ia].role, es[ib].role);
            let pair = |r: Role| {
                if ra == r {
                    Some((ia, ib))
                } else if rb == r {
                    Some((ib, ia))
                } else {
                    None
                }
            };
            if let Some((bullet, other)) = pair(Role::Bullet) {
                if es[other].role == Role::Enemy {
                    actions.push(Action::Kill { enemy: other, bullet });
                    // The blast pushes back every other enemy within 4.
                    let pos = es[bullet].pos;
                    world.query_sphere(
                        pos,
                        4.0,
                        QueryFilter::new().only_dynamic().mask(ENEMY),
                        &mut found,
                    )?;
                    for &h in &found {
                        let e = world.user_data(h)? as usize;
                        if e != other {
                            actions.push(Action::Push { enemy: e, away_from: pos });
                        }
                    }
                } else {
                    actions.push(Action::Drop(bullet));
                }
            } else if let Some((coin, _)) = pair(Role::Coin) {
                actions.push(Action::Collect(coin));
            }
        }
        // A removed object's pairs end with its old handle; its data names it.
        for &[a, b] in events.removed {
            assert!(events.user_data(a).is_some() && events.user_data(b).is_some());
        }
        for act in actions.drain(..) {
            match act {
                Action::Kill { enemy, bullet } => {
                    kills += es[enemy].handle.is_some() as usize;
                    retire(&mut world, &mut es, enemy, Some(frame + 30))?;
                    retire(&mut world, &mut es, bullet, None)?;
                }
                Action::Push { enemy, away_from } => {
                    if let Some(h) = es[enemy].handle {
                        let e = &mut es[enemy];
                        e.pos = [
                            e.pos[0] + (e.pos[0] - away_from[0]) * 0.5,
                            e.pos[1] + (e.pos[1] - away_from[1]) * 0.5,
                        ];
                        world.set_aabb(h, e.aabb())?;
                        pushed += 1;
                    }
                }
                Action::Drop(bullet) => retire(&mut world, &mut es, bullet, None)?,
                Action::Collect(coin) => {
                    coins += es[coin].handle.is_some() as usize;
                    retire(&mut world, &mut es, coin, Some(frame + 50))?;
                }
            }
        }
        // Respawns: a new handle (often the freed slot), the same entity index as data.
        for (i, e) in es.iter_mut().enumerate() {
            if e.respawn_at == Some(frame) {
                e.respawn_at = None;
                e.pos = [5.0 + 90.0 * rng.next(), 5.0 + 90.0 * rng.next()];
                e.handle = Some(world.insert_with(e.aabb(), e.kind(), e.filter(), i as u64)?);
                respawns += 1;
            }
        }
        if frame % 100 == 0 {
            let s = world.stats();
            println!(
                "frame {frame:3}: {} objects, {} pairs, update {:?}, kills {kills}, coins {coins}",
                world.len(),
                s.pairs,
                s.t_update
            );
        }
    }
    world.update()?;
    // The world against brute force over what it holds: same pairs, by the rule.
    let live: Vec<_> = world.iter().collect();
    let boxes: Vec<Aabb2> = live.iter().map(|o| o.aabb).collect();
    let mut want: Vec<_> = brute_force_pairs(&boxes, world.config())?
        .into_iter()
        .map(|[i, j]| (live[i as usize], live[j as usize]))
        .filter(|(a, b)| {
            (a.kind == Kind::Dynamic || b.kind == Kind::Dynamic)
                && a.filter.membership & b.filter.mask != 0
                && b.filter.membership & a.filter.mask != 0
        })
        .map(|(a, b)| [a.handle, b.handle])
        .collect();
    want.sort();
    assert_eq!(world.pairs(), want.as_slice(), "the world's pairs differ from brute force");
    world.validate()?;
    println!(
        "400 frames: {kills} kills, {coins} coins, {respawns} respawns, {pushed} pushed by blasts, \
         {shots} shots, {blocked} shots held for lack of sight; {} pairs checked",
        want.len()
    );
    assert!(kills > 0 && coins > 0 && respawns > 0 && pushed > 0 && shots > 0, "a mechanic never ran");
    Ok(())
}

/// A new entity (not yet in the world); its index.
fn spawn(es: &mut Vec<Entity>, role: Role, pos: [f32; 2], half: f32) -> usize {
    es.push(Entity { role, pos, vel: [0.0; 2], half, handle: None, respawn_at: None });
    es.len() - 1
}

/// Removes entity `i` from the world (if there), to come back at frame `respawn`.
fn retire(
    world: &mut World2,
    es: &mut [Entity],
    i: usize,
    respawn: Option<u32>,
) -> Result<(), broadphase::Error> {
    if let Some(h) = es[i].handle.take() {
        world.remove(h)?;
        es[i].respawn_at = respawn;
    }
    Ok(())
}

/// The exact entry `t` of the ray `o + t * d`, `0 <= t <= 1`, into the circle at `c` of
/// radius `r`, if it enters.
fn circle_hit(o: [f32; 2], d: [f32; 2], c: [f32; 2], r: f32) -> Option<f32> {
    let f = [o[0] - c[0], o[1] - c[1]];
    let (a, b, cc) =
        (d[0] * d[0] + d[1] * d[1], f[0] * d[0] + f[1] * d[1], f[0] * f[0] + f[1] * f[1] - r * r);
    let disc = b * b - a * cc;
    if disc < 0.0 {
        return None;
    }
    let t = (-b - disc.sqrt()) / a;
    (0.0..=1.0).contains(&t).then_some(t).or((cc <= 0.0).then_some(0.0))
}
