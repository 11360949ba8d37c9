//! Unit tests of the world's insides: slot order and reuse, retirement, the slot limit,
//! pending changes seen through `pairs()`, the hasher, the byte counts, and `validate`
//! catching each broken invariant. The model-based and thread tests are in `tests/suite/world.rs`.

use super::handle::RETIRED;
use super::pairs::{key, PairHasher};
use super::*;
use std::hash::Hasher;

fn sq(x: f32, y: f32, s: f32) -> Aabb<2> {
    Aabb::new([x, y], [x + s, y + s])
}

fn world() -> World<2> {
    World::new(Config::default()).unwrap()
}

#[test]
fn slots_in_order_then_last_freed_first() {
    let mut w = world();
    let hs: Vec<Handle> = (0..5).map(|i| w.insert(sq(i as f32, 0.0, 1.0), Kind::Dynamic).unwrap()).collect();
    assert_eq!(
        hs.iter().map(|h| (h.index(), h.generation())).collect::<Vec<_>>(),
        [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)]
    );
    w.remove(hs[1]).unwrap();
    w.remove(hs[3]).unwrap();
    let more = w.extend(&[sq(0.0, 0.0, 1.0); 3], Kind::Static).unwrap();
    assert_eq!(
        more.iter().map(|h| (h.index(), h.generation())).collect::<Vec<_>>(),
        [(3, 1), (1, 1), (5, 0)]
    );
    assert_eq!(w.remove(hs[1]), Err(Error::StaleHandle { handle: hs[1].raw() }));
    assert_eq!(hs[1].raw(), 1);
    assert_eq!(more[0].raw(), (1 << 32) | 3);
    w.validate().unwrap();
}

#[test]
fn a_slot_at_the_last_generation_is_retired() {
    let mut w = world();
    let a = w.insert(sq(0.0, 0.0, 1.0), Kind::Dynamic).unwrap();
    w.update().unwrap();
    // The slot has been reused almost 2^32 times.
    w.slots.generations[0] = RETIRED - 1;
    let a = Handle::new(a.index(), RETIRED - 1);
    w.validate().unwrap();
    w.remove(a).unwrap();
    assert!(w.slots.free.is_empty(), "a retired slot is not free");
    w.validate().unwrap();
    let b = w.insert(sq(0.0, 0.0, 1.0), Kind::Dynamic).unwrap();
    assert_eq!((b.index(), b.generation()), (1, 0));
    assert_eq!(w.remove(a), Err(Error::StaleHandle { handle: a.raw() }));
    w.update().unwrap();
    w.validate().unwrap();
}

#[test]
fn the_slot_limit_is_too_many_boxes() {
    let mut w = world();
    w.slots.limit = 3;
    let hs = w.extend(&[sq(0.0, 0.0, 1.0); 3], Kind::Dynamic).unwrap();
    assert_eq!(w.insert(sq(0.0, 0.0, 1.0), Kind::Dynamic), Err(Error::TooManyBoxes { len: 4 }));
    w.remove(hs[0]).unwrap();
    assert_eq!(w.extend(&[sq(0.0, 0.0, 1.0); 2], Kind::Dynamic), Err(Error::TooManyBoxes { len: 4 }));
    assert_eq!(w.len(), 2);
    w.validate().unwrap();
    assert_eq!(w.extend(&[sq(0.0, 0.0, 1.0)], Kind::Dynamic).unwrap()[0].index(), 0);
    w.update().unwrap();
    assert_eq!(w.events().added.len(), 3);
    w.validate().unwrap();
}

#[test]
fn pending_changes_leave_pairs_as_of_the_last_update() {
    let mut w = world();
    let a = w.insert(sq(0.0, 0.0, 1.0), Kind::Dynamic).unwrap();
    let b = w.insert(sq(0.5, 0.0, 1.0), Kind::Dynamic).unwrap();
    w.update().unwrap();
    w.remove(b).unwrap();
    let c = w.insert(sq(0.2, 0.0, 1.0), Kind::Static).unwrap();
    assert_eq!(c.index(), b.index());
    assert_eq!(w.pairs(), &[[a, b]]);
    assert_eq!(w.dirty.list(), &[b.index()], "one snapshot a slot, however often it changed");
    w.validate().unwrap();
    w.update().unwrap();
    let ev = w.events();
    assert_eq!((ev.removed, ev.added), (&[[a, b]][..], &[[a, c]][..]));
    assert_eq!(w.stats().moved, 1);
    assert!(w.dirty.is_empty() && w.store.before.is_empty());
    w.validate().unwrap();
}

#[test]
fn inserted_and_removed_in_one_frame_leaves_no_trace() {
    let mut w = world();
    let a = w.insert(sq(0.0, 0.0, 1.0), Kind::Dynamic).unwrap();
    w.update().unwrap();
    let b = w.insert(sq(0.0, 0.0, 1.0), Kind::Dynamic).unwrap();
    w.remove(b).unwrap();
    assert!(w.update().unwrap().is_empty());
    assert!(w.pairs().is_empty() && w.contains(a) && !w.contains(b));
    w.validate().unwrap();
}

#[test]
fn negative_zero_is_kept_as_set() {
    let mut w = world();
    let a = w.insert(sq(0.0, 0.0, 1.0), Kind::Dynamic).unwrap();
    w.update().unwrap();
    let z = Aabb::new([-0.0, 0.0], [1.0, 1.0]);
    w.set_aabb(a, z).unwrap();
    assert_eq!(w.aabb(a).unwrap().min[0].to_bits(), (-0.0f32).to_bits());
}

#[test]
fn the_hasher_is_fixed_and_spreads_keys_sharing_a_slot() {
    let hash = |k: u64| {
        let mut h = PairHasher::default();
        h.write_u64(k);
        h.finish()
    };
    assert_eq!(hash(key(3, 7)), hash(key(3, 7)));
    // The pairs of one slot (same `hi`, or same `lo`) reach most of 1024 buckets.
    for keys in
        [(0..1024).map(|lo| key(lo, 5000)).collect::<Vec<_>>(), (0..1024).map(|hi| key(5, 6 + hi)).collect()]
    {
        let buckets: std::collections::HashSet<u64> = keys.iter().map(|&k| hash(k) & 1023).collect();
        assert!(buckets.len() > 550, "{} buckets of 1024", buckets.len());
        let tags: std::collections::HashSet<u64> = keys.iter().map(|&k| hash(k) >> 57).collect();
        assert!(tags.len() > 100, "{} tags of 128", tags.len());
    }
}

#[test]
fn bytes_follow_the_capacities() {
    let mut w = world();
    w.update().unwrap();
    assert_eq!((w.stats().object_bytes, w.stats().pair_bytes), (0, 0));
    let boxes: Vec<Aabb<2>> = (0..100).map(|i| sq(i as f32 * 0.5, 0.0, 1.0)).collect();
    w.extend(&boxes, Kind::Dynamic).unwrap();
    w.update().unwrap();
    let s = w.stats().clone();
    // Boxes, generations, live flags, kinds; no filters (every object has the default).
    assert!(s.object_bytes >= 100 * (16 + 4 + 1 + 1), "{s:?}");
    assert!(s.pair_bytes >= s.pairs * 9, "{s:?}");
    assert_eq!(s.pairs, 99 + 98);
}

/// A valid world with pending changes: pairs stored, a slot removed and refilled, a move.
fn busy() -> World<2> {
    let mut w = world();
    let hs = w
        .extend(&[sq(0.0, 0.0, 1.0), sq(0.5, 0.0, 1.0), sq(0.9, 0.0, 1.0), sq(5.0, 5.0, 1.0)], Kind::Dynamic)
        .unwrap();
    w.insert(sq(0.0, 0.0, 3.0), Kind::Static).unwrap();
    w.insert(sq(0.0, 0.0, 3.0), Kind::Static).unwrap();
    w.update().unwrap();
    w.pairs();
    w.remove(hs[1]).unwrap();
    w.remove(hs[3]).unwrap();
    w.insert(sq(5.0, 5.0, 1.0), Kind::Dynamic).unwrap();
    w.set_aabb(hs[2], sq(0.8, 0.0, 1.0)).unwrap();
    w.validate().unwrap();
    w
}

#[test]
fn validate_catches_each_broken_invariant() {
    type Break = fn(&mut World<2>);
    let cases: &[(&str, Break)] = &[
        ("length", |w| {
            w.store.kinds.pop();
        }),
        ("live count", |w| w.slots.live += 1),
        ("retired generation", |w| w.slots.generations[0] = RETIRED),
        ("free slot listed twice", |w| {
            let s = w.slots.free[0];
            w.slots.free.push(s)
        }),
        ("live slot freed", |w| w.slots.free.push(0)),
        ("free slot lost", |w| {
            w.slots.free.pop();
        }),
        ("kind count", |w| w.store.statics += 1),
        ("kind not counted", |w| w.store.kinds[0] = Kind::Static),
        ("invalid box", |w| w.store.boxes[0].min[0] = f32::NAN),
        ("dirty bit without entry", |w| w.dirty.bits[0] |= 1 << 0),
        ("dirty entry without bit", |w| w.dirty.bits[0] = 0),
        ("dirty entry twice", |w| {
            let s = w.dirty.list[0];
            w.dirty.list.push(s);
            w.store.before.push(w.store.before[0]);
        }),
        ("snapshot missing", |w| {
            w.store.before.pop();
        }),
        ("snapshot generation", |w| w.store.before[0].generation += 5),
        ("pair missing", |w| {
            let k = w.pairs.keys().min().unwrap();
            w.pairs.remove_key(k);
        }),
        ("pair not overlapping", |w| {
            w.pairs.insert_key(key(0, 3));
        }),
        ("pair lo > hi", |w| {
            w.pairs.insert_key(key(2, 0));
        }),
        ("static-static pair", |w| {
            w.pairs.insert_key(key(4, 5));
        }),
        ("pair with a slot past the end", |w| {
            w.pairs.insert_key(key(0, 99));
        }),
        ("pair refused by the filter", |w| {
            // Counted, so that only the pair check finds it.
            w.store.filters = vec![Filter { membership: 0, mask: u32::MAX }];
            w.store.filtered = 1;
        }),
        ("filtered slots miscounted", |w| w.store.filtered = 1),
        ("filters past the last slot", |w| w.store.filters = vec![Filter::default(); 99]),
        ("dead slot with a filter", |w| {
            // Slot 1 was removed; counted, so that only the dead slot check finds it.
            w.store.filters = vec![Filter::default(), Filter { membership: 1, mask: 1 }];
            w.store.filtered = 1;
        }),
        ("pair no longer overlapping", |w| w.store.boxes[0] = sq(50.0, 50.0, 1.0)),
        ("cache stale", |w| {
            let mut v = w.pairs.cache.take().unwrap();
            v.pop();
            w.pairs.cache = std::sync::OnceLock::from(v);
        }),
    ];
    for (name, break_it) in cases {
        let mut w = busy();
        break_it(&mut w);
        match w.validate() {
            Err(Error::Invariant { detail }) => assert!(detail.starts_with("world: "), "{name}: {detail}"),
            other => panic!("{name}: validate returned {other:?}"),
        }
    }
}

/// Many frames of a crowd over a level: small steps (inside the fat boxes), jumps (out of
/// them: leaves grow, then the dynamic tree is rebuilt), removals and re-inserts (freed
/// leaves taken over, the list of objects without a leaf), kind changes (the static tree
/// rebuilt): after every update the pairs equal the brute force and `validate` holds.
#[test]
fn the_tree_search_follows_a_moving_crowd() {
    fn go<const D: usize>(margin: f32) {
        let mut r = crate::internals::scene::Rng::new(11 + D as u64);
        let mut w = World::<D>::new(Config::default().with_margin(margin)).unwrap();
        let level = crate::internals::scene::tiles::<D>(1500, 3);
        let side = crate::internals::scene::world_side::<D>(1500) as f32;
        let mut boxes: Vec<(Handle, Aabb<D>, Kind)> = Vec::new();
        for (h, b) in w.extend(&level, Kind::Static).unwrap().into_iter().zip(level) {
            boxes.push((h, b, Kind::Static));
        }
        let crowd = |r: &mut crate::internals::scene::Rng| {
            let min: [f32; D] = std::array::from_fn(|_| r.range(0.0, side));
            let s = r.range(0.0, 1.0);
            Aabb { min, max: min.map(|x| x + s) }
        };
        for _ in 0..800 {
            let b = crowd(&mut r);
            boxes.push((w.insert(b, Kind::Dynamic).unwrap(), b, Kind::Dynamic));
        }
        for frame in 0..40 {
            let mut moves = Vec::new();
            for (h, b, k) in boxes.iter_mut() {
                if *k == Kind::Dynamic && r.below(3) == 0 {
                    let step = if r.below(20) == 0 { 5.0 } else { 0.05 };
                    let d: [f32; D] = std::array::from_fn(|_| r.range(-step, step));
                    *b = Aabb {
                        min: std::array::from_fn(|i| b.min[i] + d[i]),
                        max: std::array::from_fn(|i| b.max[i] + d[i]),
                    };
                    moves.push((*h, *b));
                }
            }
            w.set_aabbs(&moves).unwrap();
            for _ in 0..r.below(12) {
                let i = r.below(boxes.len());
                w.remove(boxes[i].0).unwrap();
                let b = crowd(&mut r);
                let k = if r.below(10) == 0 { Kind::Static } else { Kind::Dynamic };
                boxes[i] = (w.insert(b, k).unwrap(), b, k);
            }
            if frame % 7 == 3 {
                let i = r.below(boxes.len());
                let k = if boxes[i].2 == Kind::Static { Kind::Dynamic } else { Kind::Static };
                w.set_kind(boxes[i].0, k).unwrap();
                boxes[i].2 = k;
            }
            w.update().unwrap();
            w.validate().unwrap();
            let all: Vec<Aabb<D>> = boxes.iter().map(|b| b.1).collect();
            let mut want: Vec<[Handle; 2]> = crate::brute_force_pairs(&all, w.config())
                .unwrap()
                .into_iter()
                .filter(|&[i, j]| {
                    boxes[i as usize].2 == Kind::Dynamic || boxes[j as usize].2 == Kind::Dynamic
                })
                .map(|[i, j]| {
                    let (a, b) = (boxes[i as usize].0, boxes[j as usize].0);
                    if a.index() < b.index() {
                        [a, b]
                    } else {
                        [b, a]
                    }
                })
                .collect();
            want.sort_unstable();
            assert_eq!(w.pairs(), &want[..], "{D}D margin {margin} frame {frame}");
        }
    }
    for margin in [0.0, 0.1, -0.05] {
        go::<2>(margin);
        go::<3>(margin);
    }
}

/// The pairs the rule makes among `objs` (live objects with their boxes, kinds and
/// filters), by brute force, sorted.
pub(crate) fn expected(objs: &[(Handle, Aabb<2>, Kind, Filter)], config: &Config<2>) -> Vec<[Handle; 2]> {
    let boxes: Vec<Aabb<2>> = objs.iter().map(|o| o.1).collect();
    let mut want: Vec<[Handle; 2]> = crate::brute_force_pairs(&boxes, config)
        .unwrap()
        .into_iter()
        .map(|[i, j]| (&objs[i as usize], &objs[j as usize]))
        .filter(|(a, b)| store::pairable(a.2, a.3, b.2, b.3))
        .map(|(a, b)| if a.0.index() < b.0.index() { [a.0, b.0] } else { [b.0, a.0] })
        .collect();
    want.sort_unstable();
    want
}

/// Updates, validates, and checks the pairs against the brute force.
pub(crate) fn settle(w: &mut World<2>, objs: &[(Handle, Aabb<2>, Kind, Filter)], step: &str) {
    w.update().unwrap();
    w.validate().unwrap();
    assert_eq!(w.pairs(), &expected(objs, w.config())[..], "{step}");
}

/// A world in which every object has the default filter stores none; setting one stores
/// a prefix of the slots up to it, and taking the last one back gives them back (once
/// enough filter changes pay for growing them again).
#[test]
fn filters_are_stored_only_while_some_object_has_one() {
    let mut w = world();
    let boxes: Vec<Aabb<2>> =
        (0..300).map(|i| sq((i % 30) as f32 * 0.5, (i / 30) as f32 * 3.0, 1.0)).collect();
    let hs = w.extend(&boxes, Kind::Dynamic).unwrap();
    let mut objs: Vec<_> =
        hs.iter().zip(&boxes).map(|(&h, &b)| (h, b, Kind::Dynamic, Filter::default())).collect();
    settle(&mut w, &objs, "extend");
    assert_eq!((w.store.filters.capacity(), w.store.filtered), (0, 0));

    // Slots 200 and 201 refuse each other, 202 everything; all three overlap.
    let fs = [
        (200, Filter { membership: 2, mask: 2 }),
        (201, Filter { membership: 1, mask: 1 }),
        (202, Filter { membership: 0, mask: u32::MAX }),
    ];
    for (i, f) in fs {
        w.set_filter(hs[i], f).unwrap();
        objs[i].3 = f;
    }
    assert_eq!((w.store.filters.len(), w.store.filtered), (203, 3));
    assert!(w.store.filters.capacity() < 300, "{}", w.store.filters.capacity());
    settle(&mut w, &objs, "three filters");
    assert!(w.pairs().iter().all(|p| !p.contains(&hs[202])));

    // A removed object's slot has the default filter; its reuse starts with the one its
    // insert gives.
    w.remove(hs[202]).unwrap();
    assert_eq!(w.store.filtered, 2);
    let h = w.insert(boxes[202], Kind::Dynamic).unwrap();
    assert_eq!((h.index(), w.store.filter(202)), (202, Filter::default()));
    objs[202] = (h, boxes[202], Kind::Dynamic, Filter::default());
    settle(&mut w, &objs, "reinserted");
    w.remove(h).unwrap();
    let f = Filter { membership: 4, mask: 4 };
    let h = w.insert_with(boxes[202], Kind::Dynamic, f, 0).unwrap();
    assert_eq!((h.index(), w.store.filter(202), w.store.filtered), (202, f, 3));
    objs[202] = (h, boxes[202], Kind::Dynamic, f);
    settle(&mut w, &objs, "reinserted with a filter");

    // Back to the default: the filters are given back.
    for i in [200, 201, 202] {
        w.set_filter(objs[i].0, Filter::default()).unwrap();
        objs[i].3 = Filter::default();
        w.validate().unwrap();
    }
    assert_eq!((w.store.filters.capacity(), w.store.filtered), (0, 0));
    settle(&mut w, &objs, "defaults again");

    // One filter set on the last slot and taken back: too few changes to pay for growing
    // the filters again, so they are kept, until a few more changes.
    let (last, f) = (299, Filter { membership: 1, mask: 1 });
    w.set_filter(hs[last], f).unwrap();
    w.set_filter(hs[last], Filter::default()).unwrap();
    assert_eq!((w.store.filters.len(), w.store.filtered), (300, 0));
    settle(&mut w, &objs, "kept");
    let mut changes = 2;
    while w.store.filters.capacity() > 0 {
        let f = if changes % 2 == 0 { f } else { Filter::default() };
        w.set_filter(hs[10], f).unwrap();
        objs[10].3 = f;
        changes += 1;
        w.validate().unwrap();
        assert!(changes * store::GIVE_BACK_STEP <= 300 + 2 * store::GIVE_BACK_STEP, "{changes}");
    }
    assert_eq!(objs[10].3, Filter::default());
    settle(&mut w, &objs, "given back");
}
