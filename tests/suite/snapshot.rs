//! The world's snapshot (feature `serde`): a world written with serde_json and read back
//! runs on exactly as the original, and a snapshot that is not a world is an error.
//!
//! - `restored_worlds_run_on_alike`: random calls on a world and on copies restored at
//!   random points (after an update, or with changes pending), in 2D and 3D, with and
//!   without margin and hysteresis: every call's result, every update's events, the
//!   pairs, the objects, query answers and the written bytes compared after each call,
//!   `validate` on both.
//! - `damaged_snapshots_are_errors_or_worlds`: truncated snapshots, random byte edits
//!   and edits of the JSON tree (numbers changed, fields and elements dropped,
//!   duplicated, swapped): each is an error or a world that passes `validate` and runs.
//! - `a_large_world_restores_alike_and_a_missing_pair_is_refused`: thousands of objects
//!   (past `validate`'s test of every pair), restored with moves pending, then frames of
//!   a few moves each; a snapshot missing one pair is refused.
//! - Named refusals: another version or dimension, a free list naming a live slot, a
//!   live generation at the retired mark, a pair naming a dead slot or out of order, a
//!   box with `min > max`, arrays that disagree in length, a missing pair.

use crate::common::{Draws, Rng};
use crate::model::{data, filter, kind, valid_box};
use broadphase::{Aabb, Aabb2, Aabb3, Config, Filter, Handle, Kind, QueryFilter, World, World2, World3};
use serde_json::Value;

/// The world's snapshot as JSON.
fn json<const D: usize>(w: &World<D>) -> String {
    serde_json::to_string(w).expect("a world serializes")
}

/// The world written and read back; the copy writes the same bytes.
fn restore<const D: usize>(ctx: &str, w: &World<D>) -> World<D> {
    let s = json(w);
    let copy: World<D> = serde_json::from_str(&s).unwrap_or_else(|e| panic!("{ctx}: restore: {e}"));
    assert_eq!(json(&copy), s, "{ctx}: the restored world writes other bytes");
    copy
}

#[test]
fn a_box_round_trips_and_a_wrong_length_is_refused() {
    let b = Aabb3::new([0.0, -0.0, 1.5], [2.0, 3.0, f32::MAX]);
    let s = serde_json::to_string(&b).unwrap();
    assert_eq!(s, r#"{"min":[0.0,-0.0,1.5],"max":[2.0,3.0,3.4028235e+38]}"#);
    let back: Aabb3 = serde_json::from_str(&s).unwrap();
    assert_eq!(bytemuck::bytes_of(&back), bytemuck::bytes_of(&b));
    assert!(serde_json::from_str::<Aabb2>(&s).is_err(), "three coordinates read as two");
    assert!(serde_json::from_str::<Aabb<4>>(&s).is_err(), "three coordinates read as four");
    assert!(serde_json::from_str::<Aabb2>(r#"{"min":[0,0]}"#).is_err(), "no max");
    assert!(serde_json::from_str::<Aabb2>(r#"{"min":[0,0],"max":[1,1],"mid":1}"#).is_err());
    // The other value types derive theirs.
    let c = Config::<2>::default().with_margin(0.5).with_bounds(Some(Aabb2::new([0.0; 2], [1.0; 2])));
    assert_eq!(serde_json::from_str::<Config<2>>(&serde_json::to_string(&c).unwrap()).unwrap(), c);
    let f = Filter { membership: 3, mask: 5 };
    assert_eq!(serde_json::from_str::<Filter>(&serde_json::to_string(&f).unwrap()).unwrap(), f);
}

/// One call, applied alike to every world.
#[derive(Clone, Debug)]
enum Call<const D: usize> {
    Insert(Aabb<D>, Kind, Filter, u64),
    Extend(Vec<Aabb<D>>, Kind, Filter, Vec<u64>),
    Move(Handle, Aabb<D>),
    Moves(Vec<(Handle, Aabb<D>)>),
    SetKind(Handle, Kind),
    SetFilter(Handle, Filter),
    SetData(Handle, u64),
    Remove(Handle),
    Clear,
    Update,
}

/// A box near `b`: shifted by a little, so that most moves stay inside a fat leaf.
fn nudged<const D: usize>(r: &mut Rng, b: &Aabb<D>) -> Aabb<D> {
    let mut out = *b;
    for k in 0..D {
        let d = r.range(-0.2, 0.2);
        out.min[k] += d;
        out.max[k] += d;
    }
    if out.is_valid() {
        out
    } else {
        *b
    }
}

/// A random call on world `w`: handles live or stale, boxes of every shape, updates often
/// enough that most frames change a few objects of many.
fn random_call<const D: usize>(r: &mut Rng, w: &World<D>, dead: &[Handle]) -> Call<D> {
    let live: Vec<_> = w.iter().collect();
    let model_live: Vec<crate::model::Obj<D>> = live
        .iter()
        .map(|o| crate::model::Obj {
            h: o.handle,
            aabb: o.aabb,
            kind: o.kind,
            filter: o.filter,
            data: o.user_data,
        })
        .collect();
    let handle = |r: &mut Rng| -> (Handle, Option<Aabb<D>>) {
        if !live.is_empty() && (dead.is_empty() || r.chance(0.9)) {
            let o = live[r.below(live.len())];
            (o.handle, Some(o.aabb))
        } else if !dead.is_empty() {
            (dead[r.below(dead.len())], None)
        } else {
            (Handle::NULL, None)
        }
    };
    match r.below(100) {
        0..=9 => Call::Insert(valid_box(r, &model_live), kind(r), filter(r), data(r)),
        10..=12 => {
            let n = r.below(6);
            let boxes = (0..n).map(|_| valid_box(r, &model_live)).collect();
            let ds = if r.chance(0.5) { (0..n).map(|_| data(r)).collect() } else { Vec::new() };
            Call::Extend(boxes, kind(r), if r.chance(0.5) { filter(r) } else { Filter::default() }, ds)
        }
        13..=44 => {
            let (h, b) = handle(r);
            let to = match b {
                Some(b) if r.chance(0.8) => nudged(r, &b),
                _ => valid_box(r, &model_live),
            };
            Call::Move(h, to)
        }
        45..=49 => {
            let n = r.below(5);
            Call::Moves(
                (0..n)
                    .map(|_| {
                        let (h, b) = handle(r);
                        let to = match b {
                            Some(b) => nudged(r, &b),
                            None => valid_box(r, &model_live),
                        };
                        (h, to)
                    })
                    .collect(),
            )
        }
        50..=53 => Call::SetKind(handle(r).0, kind(r)),
        54..=57 => Call::SetFilter(handle(r).0, filter(r)),
        58..=59 => Call::SetData(handle(r).0, data(r)),
        60..=69 => Call::Remove(handle(r).0),
        70 if r.chance(0.2) => Call::Clear,
        _ => Call::Update,
    }
}

/// Applies `c` to `w`; what it returned, as text (floats and handles exactly).
fn apply<const D: usize>(w: &mut World<D>, c: &Call<D>) -> String {
    match c {
        Call::Insert(b, k, f, d) => format!("{:?}", w.insert_with(*b, *k, *f, *d)),
        Call::Extend(bs, k, f, ds) => format!("{:?}", w.extend_with(bs, *k, *f, ds)),
        Call::Move(h, b) => format!("{:?}", w.set_aabb(*h, *b)),
        Call::Moves(ms) => format!("{:?}", w.set_aabbs(ms)),
        Call::SetKind(h, k) => format!("{:?}", w.set_kind(*h, *k)),
        Call::SetFilter(h, f) => format!("{:?}", w.set_filter(*h, *f)),
        Call::SetData(h, d) => format!("{:?}", w.set_user_data(*h, *d)),
        Call::Remove(h) => format!("{:?}", w.remove(*h)),
        Call::Clear => {
            w.clear();
            String::new()
        }
        Call::Update => format!("{:?}", w.update()),
    }
}

/// What a world answers now: its objects, pairs, last events and query answers, as
/// text. The queries are drawn from `seed`, so two worlds get the same ones.
fn answers<const D: usize>(w: &World<D>, seed: u64) -> String {
    let mut r = Rng::new(seed);
    let ev = w.events();
    let mut out = format!(
        "objects {:?}\npairs {:?}\nadded {:?}\nremoved {:?}\ndeparted {:?}\n",
        w.iter().collect::<Vec<_>>(),
        w.pairs(),
        ev.added,
        ev.removed,
        ev.departed
    );
    let live: Vec<crate::model::Obj<D>> = w
        .iter()
        .map(|o| crate::model::Obj {
            h: o.handle,
            aabb: o.aabb,
            kind: o.kind,
            filter: o.filter,
            data: o.user_data,
        })
        .collect();
    let (mut hits, mut ranked) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let region = valid_box(&mut r, &live);
        let pick = r.below(3);
        // Sorted: a restored world's new trees hold the same objects in another order.
        let filters = [
            QueryFilter::new().sorted(),
            QueryFilter::new().only_dynamic().sorted(),
            QueryFilter::new().only_static().sorted(),
        ];
        let f = filters[pick];
        let point: [f32; D] = std::array::from_fn(|_| r.range(-1.0, 10.0));
        let dir: [f32; D] = std::array::from_fn(|_| r.range(-1.0, 1.0));
        let dir = if dir.iter().all(|&x| x == 0.0) { [1.0; D] } else { dir };
        let _ = w.query_aabb(region, f, &mut hits);
        out += &format!("region {hits:?}\n");
        let _ = w.query_point(point, f, &mut hits);
        out += &format!("point {hits:?}\n");
        let _ = w.query_sphere(point, r.range(0.0, 3.0), f, &mut hits);
        out += &format!("sphere {hits:?}\n");
        out += &format!("ray {:?}\n", w.cast_ray(point, dir, 20.0, f));
        let _ = w.cast_ray_all(point, dir, 20.0, 4, f, &mut ranked);
        out += &format!("rays {ranked:?}\n");
        let _ = w.nearest(point, 3, f32::INFINITY, f, &mut ranked);
        out += &format!("nearest {ranked:?}\n");
        out += &format!("sweep {:?}\n", w.cast_aabb(region, dir, 5.0, f));
    }
    out
}

/// Random calls on a world and on its copies restored at random points (a copy of a
/// copy too), each call's result, the answers and the written bytes compared after each
/// call. Returns how many copies were taken with changes pending and without.
fn run_alike<const D: usize>(seed: u64, margin: f32, h: f32, ops: usize) -> [usize; 2] {
    let mut r = Rng::new(seed);
    let config = Config::default().with_margin(margin).with_hysteresis(h);
    let mut a = World::<D>::new(config).expect("config");
    // A crowd to start from, so that later frames change a few objects of many.
    let n = r.below(120);
    let start: Vec<Aabb<D>> = (0..n).map(|_| valid_box(&mut r, &[])).collect();
    a.extend(&start, Kind::Dynamic).expect("valid boxes");
    let statics: Vec<Aabb<D>> = (0..n / 3).map(|_| valid_box(&mut r, &[])).collect();
    a.extend(&statics, Kind::Static).expect("valid boxes");
    if r.chance(0.5) {
        a.update().expect("first update");
    }
    let mut b = restore("start", &a);
    let mut dead: Vec<Handle> = Vec::new();
    let mut taken = [0, 0];
    for step in 0..ops {
        let ctx = format!("seed {seed:#x} D {D} margin {margin} hysteresis {h} step {step}");
        if r.chance(0.05) {
            // From the original, or a copy of the copy.
            let from = if r.chance(0.5) { &a } else { &b };
            b = restore(&ctx, from);
            taken[json(&a).contains("\"changed\":[]") as usize] += 1;
            // Queries right after the restore, before any call.
            let q = r.next_u64();
            assert_eq!(answers(&a, q), answers(&b, q), "{ctx}: answers right after the restore");
        }
        let c = random_call(&mut r, &a, &dead);
        if let Call::Remove(h) = c
            && a.contains(h)
        {
            dead.push(h);
        }
        let (got_a, got_b) = (apply(&mut a, &c), apply(&mut b, &c));
        assert_eq!(got_a, got_b, "{ctx}: {c:?} returned differently");
        for (name, w) in [("original", &a), ("copy", &b)] {
            if let Err(e) = w.validate() {
                panic!("{ctx}: {name}: validate after {c:?}: {e}");
            }
        }
        let q = r.next_u64();
        let (ans_a, ans_b) = (answers(&a, q), answers(&b, q));
        if ans_a != ans_b {
            let line = ans_a.lines().zip(ans_b.lines()).find(|(x, y)| x != y);
            panic!("{ctx}: answers differ after {c:?}: {line:?}");
        }
        if matches!(c, Call::Update) {
            let (sa, sb) = (a.stats(), b.stats());
            let counts =
                |s: &broadphase::WorldStats| (s.moved, s.added, s.removed, s.pairs, s.statics, s.dynamics);
            assert_eq!(counts(sa), counts(sb), "{ctx}: statistics");
        }
        assert_eq!(json(&a), json(&b), "{ctx}: the worlds write other bytes after {c:?}");
    }
    taken
}

#[test]
fn restored_worlds_run_on_alike() {
    let mut taken = [0, 0];
    for seed in 0..8u64 {
        let h = if seed % 2 == 1 { 0.3 } else { 0.0 };
        for margin in [0.0, 0.25, -0.2] {
            let t2 = run_alike::<2>(seed, margin, h, 250);
            let t3 = run_alike::<3>(seed ^ 0x5eed, margin, h, 250);
            for i in 0..2 {
                taken[i] += t2[i] + t3[i];
            }
        }
    }
    // Copies were taken both with changes pending and without.
    assert!(taken[0] > 50 && taken[1] > 20, "{taken:?}");
}

/// A world worth damaging: objects of every kind, filters, user data, removed slots,
/// pairs, hysteresis's kept pairs, and changes pending.
fn sample<const D: usize>(seed: u64) -> World<D> {
    let mut r = Rng::new(seed);
    let config = Config::default().with_margin(0.1).with_hysteresis(0.3);
    let mut w = World::<D>::new(config).expect("config");
    let mut dead = Vec::new();
    for _ in 0..160 {
        let c = random_call(&mut r, &w, &dead);
        if let Call::Remove(h) = c
            && w.contains(h)
        {
            dead.push(h);
        }
        apply(&mut w, &c);
    }
    w.update().expect("update");
    for _ in 0..8 {
        let c = random_call(&mut r, &w, &dead);
        if !matches!(c, Call::Update | Call::Clear) {
            apply(&mut w, &c);
        }
    }
    w
}

/// Every JSON pointer in `v`, containers included.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out);
            }
        }
        Value::Object(fields) => {
            for (k, x) in fields {
                pointers(x, format!("{at}/{k}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// One random edit of the JSON tree at a random place.
fn damage(r: &mut Rng, v: &mut Value) {
    let mut all = Vec::new();
    pointers(v, String::new(), &mut all);
    let at = &all[r.below(all.len())];
    let Some(x) = v.pointer_mut(at) else { return };
    match x {
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            let u = n.as_u64().unwrap_or(0);
            *x = match r.below(9) {
                0 => Value::from(u.wrapping_add(1)),
                1 => Value::from(u.saturating_sub(1)),
                2 => Value::from(0),
                3 => Value::from(u32::MAX),
                4 => Value::from(u64::from(u32::MAX) + 1),
                5 => Value::from(-f),
                6 => Value::from(f + 0.5),
                7 => Value::from(1e39),
                _ => Value::from(r.below(300) as u64),
            };
        }
        Value::Bool(b) => *b = !*b,
        Value::String(s) => *s = ["Static", "Kinematic", "Dynamic", "Bogus"][r.below(4)].to_string(),
        Value::Array(items) if !items.is_empty() => {
            let i = r.below(items.len());
            match r.below(4) {
                0 => {
                    items.remove(i);
                }
                1 => {
                    let e = items[i].clone();
                    items.insert(i, e);
                }
                2 => {
                    let j = r.below(items.len());
                    items.swap(i, j);
                }
                _ => items.truncate(i),
            }
        }
        Value::Object(fields) if !fields.is_empty() => {
            let k = fields.keys().nth(r.below(fields.len())).cloned().unwrap_or_default();
            if r.chance(0.8) {
                fields.remove(&k);
            } else {
                fields.insert("extra".into(), Value::from(1));
            }
        }
        _ => *x = Value::Null,
    }
}

/// A snapshot read back, which must be an error or a world that passes `validate` and
/// runs (an update, a query, an insert) without panicking. True for a world.
fn read_back<const D: usize>(ctx: &str, text: &str) -> bool {
    match serde_json::from_str::<World<D>>(text) {
        Err(_) => false,
        Ok(mut w) => {
            if let Err(e) = w.validate() {
                panic!("{ctx}: a damaged snapshot read back as a broken world: {e}\n{text}");
            }
            let mut out = Vec::new();
            let _ = w.query_aabb(Aabb::new([0.0; D], [5.0; D]), QueryFilter::new(), &mut out);
            let _ = w.update();
            let _ = w.insert(Aabb::new([1.0; D], [2.0; D]), Kind::Dynamic);
            let _ = w.update();
            if let Err(e) = w.validate() {
                panic!("{ctx}: a damaged snapshot's world broke on running: {e}\n{text}");
            }
            true
        }
    }
}

fn damaged<const D: usize>(seed: u64, tries: usize) -> [usize; 2] {
    let mut r = Rng::new(seed);
    let w = sample::<D>(seed);
    let text = json(&w);
    let tree: Value = serde_json::from_str(&text).expect("JSON");
    let mut counts = [0, 0];
    for i in 0..tries {
        let ctx = format!("seed {seed:#x} D {D} try {i}");
        let damaged = match i % 3 {
            // Truncated.
            0 => text[..r.below(text.len())].to_string(),
            // A few bytes replaced.
            1 => {
                let mut bytes = text.clone().into_bytes();
                for _ in 0..1 + r.below(3) {
                    let at = r.below(bytes.len());
                    bytes[at] = b"0123456789-.,:[]{}\"e"[r.below(20)];
                }
                String::from_utf8(bytes).expect("ASCII")
            }
            // The tree edited.
            _ => {
                let mut v = tree.clone();
                for _ in 0..1 + r.below(2) {
                    damage(&mut r, &mut v);
                }
                v.to_string()
            }
        };
        counts[read_back::<D>(&ctx, &damaged) as usize] += 1;
    }
    counts
}

#[test]
fn damaged_snapshots_are_errors_or_worlds() {
    let mut counts = [0, 0];
    for seed in 0..4u64 {
        let c2 = damaged::<2>(seed, 600);
        let c3 = damaged::<3>(seed ^ 0xd1, 600);
        counts[0] += c2[0] + c3[0];
        counts[1] += c2[1] + c3[1];
    }
    // Most damage is caught; some leaves a world (a user datum changed, a free box moved).
    assert!(counts[0] > 3000 && counts[1] > 200, "{counts:?} (errors, worlds)");
}

/// `w`'s snapshot with `edit` applied to its JSON tree; the error it reads back as.
fn refused<const D: usize>(w: &World<D>, edit: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(&json(w)).expect("JSON");
    edit(&mut v);
    match serde_json::from_value::<World<D>>(v) {
        Ok(_) => panic!("an edited snapshot read back as a world"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn snapshot_refusals_are_named() {
    let mut w = World2::new(Config::default()).unwrap();
    let a = w.insert(Aabb::new([0.0; 2], [2.0; 2]), Kind::Dynamic).unwrap();
    let b = w.insert(Aabb::new([1.0; 2], [3.0; 2]), Kind::Dynamic).unwrap();
    let c = w.insert(Aabb::new([1.5; 2], [2.5; 2]), Kind::Static).unwrap();
    let gone = w.insert(Aabb::new([9.0; 2], [9.5; 2]), Kind::Dynamic).unwrap();
    w.update().unwrap();
    w.remove(gone).unwrap();
    w.update().unwrap();
    assert_eq!(w.pairs(), &[[a, b], [a, c], [b, c]]);
    let has = |e: String, what: &str| assert!(e.contains(what), "{e:?} does not say {what:?}");
    has(refused(&w, |v| v["version"] = Value::from(2)), "version 2");
    has(refused(&w, |v| v["dimensions"] = Value::from(3)), "3 dimensions");
    assert!(serde_json::from_str::<World3>(&json(&w)).is_err());
    // The free list names a live slot.
    has(refused(&w, |v| v["free"] = serde_json::json!([0])), "free list");
    // A live slot at the retired generation.
    has(refused(&w, |v| v["generations"][1] = Value::from(u32::MAX)), "retired");
    // A pair naming the dead slot, or out of order.
    has(refused(&w, |v| v["pairs"] = serde_json::json!([[0, 1], [0, 2], [1, 2], [1, 3]])), "not live");
    has(refused(&w, |v| v["pairs"] = serde_json::json!([[0, 2], [0, 1], [1, 2]])), "order");
    has(refused(&w, |v| v["pairs"] = serde_json::json!([[1, 0], [0, 2], [1, 2]])), "order");
    // A missing pair, and one too many.
    has(refused(&w, |v| v["pairs"] = serde_json::json!([[0, 1], [1, 2]])), "pair");
    has(refused(&w, |v| v["pairs"][2] = serde_json::json!([2, 3])), "pair");
    // A box with min > max, of a live slot or of the dead one.
    has(refused(&w, |v| v["boxes"][0]["min"][0] = Value::from(5.0)), "invalid box");
    has(refused(&w, |v| v["boxes"][3]["max"][1] = Value::from(-5.0)), "invalid box");
    // A corner of another length.
    has(refused(&w, |v| v["boxes"][0]["min"] = serde_json::json!([0.0, 0.0, 0.0])), "length");
    // Lengths that disagree.
    has(refused(&w, |v| v["alive"].as_array_mut().unwrap().pop().map(drop).unwrap_or(())), "live flags");
    has(refused(&w, |v| v["kinds"].as_array_mut().unwrap().push(Value::from("Static"))), "kinds");
    // Events that do not fit the pairs.
    has(
        refused(&w, |v| {
            v["added"] = serde_json::json!([[{"index": 0, "generation": 0}, {"index": 3, "generation": 0}]])
        }),
        "added",
    );
    // A field unknown or missing.
    has(refused(&w, |v| v["color"] = Value::from(1)), "unknown field");
    has(refused(&w, |v| drop(v.as_object_mut().unwrap().remove("kept"))), "missing field");
    // Not damaged: read back whole.
    let back: World2 = serde_json::from_str(&json(&w)).unwrap();
    assert_eq!(back.pairs(), w.pairs());
    assert_eq!(back.events().departed, w.events().departed);
}

/// A world past the size `validate` tests every pair at: restored with changes pending,
/// the copy's frames (walks of a few changed objects among thousands) report what the
/// original's do; a snapshot missing one pair is refused all the same (the pairs are
/// checked against a whole frame's search on reading).
#[test]
fn a_large_world_restores_alike_and_a_missing_pair_is_refused() {
    let mut r = Rng::new(77);
    let mut a = World3::new(Config::default().with_margin(0.05).with_hysteresis(0.1)).unwrap();
    let boxes = |r: &mut Rng, n: usize| -> Vec<Aabb3> {
        (0..n)
            .map(|_| {
                let p: [f32; 3] = std::array::from_fn(|_| r.range(0.0, 30.0));
                Aabb3::new(p, p.map(|x| x + r.range(0.2, 1.5)))
            })
            .collect()
    };
    let movers = a.extend(&boxes(&mut r, 3000), Kind::Dynamic).unwrap();
    a.extend(&boxes(&mut r, 1500), Kind::Static).unwrap();
    a.update().unwrap();
    assert!(a.pairs().len() > 1000, "{} pairs", a.pairs().len());
    let step = |r: &mut Rng, w: &mut [&mut World3]| {
        for _ in 0..40 {
            let h = movers[r.below(movers.len())];
            let b = w[0].aabb(h).unwrap();
            let to = nudged(r, &b);
            for w in w.iter_mut() {
                w.set_aabb(h, to).unwrap();
            }
        }
    };
    step(&mut r, &mut [&mut a]);
    // Restored with 40 moves pending.
    let mut b = restore("large", &a);
    for frame in 0..12 {
        a.update().unwrap();
        b.update().unwrap();
        let (ea, eb) = (a.events(), b.events());
        assert_eq!((ea.added, ea.removed), (eb.added, eb.removed), "frame {frame}: events");
        assert_eq!(a.pairs(), b.pairs(), "frame {frame}: pairs");
        step(&mut r, &mut [&mut a, &mut b]);
    }
    a.validate().unwrap();
    b.validate().unwrap();
    assert_eq!(json(&a), json(&b));
    // One pair dropped.
    let e = refused(&a, |v| drop(v["pairs"].as_array_mut().unwrap().remove(500)));
    assert!(e.contains("pairs stored"), "{e}");
}
