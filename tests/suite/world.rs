//! The persistent world against a reference model: random sequences of every call, valid
//! and invalid, in 2D and 3D, checked after each call (`validate`, boxes, counts) and at
//! each update (the pairs against the brute force with the rules, the events against the
//! difference of the pair lists); the named behaviours one test each; the same bytes for
//! 1 to 16 threads; no panic on arbitrary bit patterns.

use crate::common;
use crate::model;

use broadphase::{Aabb, BoxProblem, Config, Error, Filter, Handle, Kind, Method, World, World2, World3};
use common::{Draws, Rng};
use model::*;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// Random sequences against the model
// ---------------------------------------------------------------------------------------------

/// Runs `ops` random calls against a world and the model, checking as it goes.
fn run_model<const D: usize>(seed: u64, margin: f32, h: f32, ops: usize, foreign: Handle, seen: &mut Seen) {
    let mut r = Rng::new(seed);
    let mut w = World::<D>::new(Config::default().with_margin(margin).with_hysteresis(h)).expect("config");
    let mut m = Model::<D>::new(margin);
    m.hysteresis = h;
    let mut dead: Vec<Handle> = Vec::new();
    // Slots freed since the last update (to count reuse within a frame).
    let mut freed_in_frame: Vec<u32> = Vec::new();
    // Before the first update, the pairs are empty.
    assert!(w.pairs().is_empty());
    for step in 0..ops {
        let ctx = format!("seed {seed:#x} D {D} margin {margin} hysteresis {h} step {step}");
        let live = m.live();
        let op = r.below(100);
        let result: Result<(), Error>;
        let expected: Result<(), Error>;
        match op {
            // insert / insert_with
            0..=24 => {
                let bad = r.chance(0.1);
                let (b, problem) =
                    if bad { invalid_box(&mut r) } else { (valid_box(&mut r, &live), BoxProblem::NaN) };
                let (k, f) = (kind(&mut r), if op < 12 { Filter::default() } else { filter(&mut r) });
                let d = if op < 12 { 0 } else { data(&mut r) };
                let got = if op < 12 { w.insert(b, k) } else { w.insert_with(b, k, f, d) };
                expected = if bad { Err(Error::InvalidBox { index: 0, problem }) } else { Ok(()) };
                result = got.map(|h| {
                    if freed_in_frame.contains(&h.index()) {
                        seen.reused_in_frame += 1;
                    }
                    m.insert(h, b, k, f, d);
                });
            }
            // extend / extend_with, with at most one bad box (or data of the wrong length)
            25..=31 => {
                let n = r.below(6);
                let mut boxes: Vec<Aabb<D>> = (0..n).map(|_| valid_box(&mut r, &live)).collect();
                let mut want = if n > 0 && r.chance(0.2) {
                    let at = r.below(n);
                    let (b, problem) = invalid_box(&mut r);
                    boxes[at] = b;
                    seen.batch_errors += 1;
                    Err(Error::InvalidBox { index: at, problem })
                } else {
                    Ok(())
                };
                let k = kind(&mut r);
                let with = r.chance(0.5);
                let f = if with { filter(&mut r) } else { Filter::default() };
                let mut ds: Vec<u64> =
                    if with && r.chance(0.7) { (0..n).map(|_| data(&mut r)).collect() } else { Vec::new() };
                if with && r.chance(0.05) {
                    ds.push(7);
                    if ds.len() != n {
                        let index = ds.len().min(n);
                        want = Err(Error::InvalidQuery {
                            index,
                            reason: "user data neither empty nor one a box",
                        });
                    }
                }
                expected = want;
                let got = if with { w.extend_with(&boxes, k, f, &ds) } else { w.extend(&boxes, k) };
                result = got.map(|hs| {
                    assert_eq!(hs.len(), boxes.len(), "{ctx}: extend handles");
                    for (i, (h, b)) in hs.into_iter().zip(boxes).enumerate() {
                        m.insert(h, b, k, f, ds.get(i).copied().unwrap_or(0));
                    }
                });
            }
            // set_aabb
            32..=51 => {
                let (h, ok_h) = some_handle(&mut r, &m, &dead, foreign, 0.1);
                let bad_box = r.chance(0.1);
                let (b, problem) =
                    if bad_box { invalid_box(&mut r) } else { (valid_box(&mut r, &live), BoxProblem::NaN) };
                expected = if !ok_h {
                    Err(Error::StaleHandle { handle: h.raw() })
                } else if bad_box {
                    Err(Error::InvalidBox { index: 0, problem })
                } else {
                    Ok(())
                };
                result = w.set_aabb(h, b);
                if result.is_ok() {
                    m.get_mut(h).aabb = b;
                }
            }
            // set_aabbs, the first bad move named
            52..=61 => {
                let n = r.below(6);
                let mut moves = Vec::new();
                let mut first_bad: Option<Error> = None;
                for i in 0..n {
                    let (h, ok_h) = some_handle(&mut r, &m, &dead, foreign, 0.04);
                    let bad_box = r.chance(0.04);
                    let (b, problem) = if bad_box {
                        invalid_box(&mut r)
                    } else {
                        (valid_box(&mut r, &live), BoxProblem::NaN)
                    };
                    if first_bad.is_none() {
                        if !ok_h {
                            first_bad = Some(Error::StaleHandle { handle: h.raw() });
                        } else if bad_box {
                            first_bad = Some(Error::InvalidBox { index: i, problem });
                        }
                    }
                    moves.push((h, b));
                }
                if first_bad.is_some() {
                    seen.batch_errors += 1;
                }
                expected = first_bad.map_or(Ok(()), Err);
                result = w.set_aabbs(&moves);
                if result.is_ok() {
                    for (h, b) in moves {
                        m.get_mut(h).aabb = b;
                    }
                }
            }
            // set_kind
            62..=69 => {
                let (h, ok_h) = some_handle(&mut r, &m, &dead, foreign, 0.1);
                let k = kind(&mut r);
                expected = if ok_h { Ok(()) } else { Err(Error::StaleHandle { handle: h.raw() }) };
                result = w.set_kind(h, k);
                if result.is_ok() {
                    m.get_mut(h).kind = k;
                }
            }
            // set_user_data, and now and then clear
            70..=71 => {
                if r.chance(0.03) {
                    w.clear();
                    for o in m.live() {
                        m.remove(o.h);
                        dead.push(o.h);
                        freed_in_frame.push(o.h.index());
                    }
                    expected = Ok(());
                    result = Ok(());
                } else {
                    let (h, ok_h) = some_handle(&mut r, &m, &dead, foreign, 0.1);
                    let d = data(&mut r);
                    expected = if ok_h { Ok(()) } else { Err(Error::StaleHandle { handle: h.raw() }) };
                    result = w.set_user_data(h, d);
                    if result.is_ok() {
                        m.get_mut(h).data = d;
                    }
                }
            }
            // set_filter
            72..=75 => {
                let (h, ok_h) = some_handle(&mut r, &m, &dead, foreign, 0.1);
                let f = filter(&mut r);
                expected = if ok_h { Ok(()) } else { Err(Error::StaleHandle { handle: h.raw() }) };
                result = w.set_filter(h, f);
                if result.is_ok() {
                    m.get_mut(h).filter = f;
                }
            }
            // remove
            76..=87 => {
                let (h, ok_h) = some_handle(&mut r, &m, &dead, foreign, 0.15);
                expected = if ok_h { Ok(()) } else { Err(Error::StaleHandle { handle: h.raw() }) };
                result = w.remove(h);
                if result.is_ok() {
                    m.remove(h);
                    dead.push(h);
                    freed_in_frame.push(h.index());
                }
            }
            // update
            _ => {
                // Now and then a bound one short of the pairs: the update fails, changes
                // nothing (its events included), and goes through once the bound is
                // lifted.
                let want = m.pairs();
                if !want.is_empty() && want != m.last && r.chance(0.2) {
                    let limit = want.len() - 1;
                    let last_events = (w.events().added.to_vec(), w.events().removed.to_vec());
                    w.set_max_pairs(Some(limit));
                    assert_eq!(w.update().err(), Some(Error::TooManyPairs { limit }), "{ctx}: bound");
                    w.validate().unwrap_or_else(|e| panic!("{ctx}: validate after a failed update: {e}"));
                    assert_eq!(
                        (w.events().added.to_vec(), w.events().removed.to_vec()),
                        last_events,
                        "{ctx}"
                    );
                    w.set_max_pairs(None);
                    seen.bound_failures += 1;
                }
                let before = m.last.clone();
                let look = r.chance(0.5);
                check_update(&ctx, &mut w, &mut m, look);
                seen.added += minus(&m.last, &before).len();
                seen.removed += minus(&before, &m.last).len();
                seen.kept += m.apart(&m.last);
                if m.last == before {
                    seen.unchanged += 1;
                }
                freed_in_frame.clear();
                // At once again: nothing changed, nothing reported.
                if r.chance(0.2) {
                    w.update().expect("quiet update");
                    let ev = w.events();
                    assert!(ev.is_empty(), "{ctx}: a quiet update reported {ev:?}");
                    assert_eq!(w.stats().moved, 0, "{ctx}: a quiet update moved objects");
                    assert_eq!(w.pairs(), m.last.as_slice(), "{ctx}: pairs after a quiet update");
                }
                result = Ok(());
                expected = Ok(());
            }
        }
        assert_eq!(result, expected, "{ctx}: op {op}");
        if let Err(e) = &result {
            seen.errors += 1;
            if matches!(e, Error::StaleHandle { .. }) {
                seen.stale += 1;
            }
        }
        check_calm(&ctx, &w, &m, &dead);
        // Between updates, the pairs are those of the last one, old handles included.
        if r.chance(0.15) {
            assert_eq!(w.pairs(), m.last.as_slice(), "{ctx}: pairs() between updates");
        }
    }
    check_update(&format!("seed {seed:#x} D {D} margin {margin} hysteresis {h} end"), &mut w, &mut m, true);
}

/// A handle of another world, past every slot the model runs reach.
fn foreign_handle() -> Handle {
    let mut other = World2::new(Config::default()).unwrap();
    let hs = other.extend(&vec![Aabb::new([0.0; 2], [1.0; 2]); 5000], Kind::Static).unwrap();
    hs[4999]
}

#[test]
fn random_calls_match_the_model() {
    let foreign = foreign_handle();
    let mut seen = Seen::default();
    for seed in 0..48u64 {
        // Every other seed with hysteresis, which keeps pairs whose boxes parted.
        let h = if seed % 2 == 1 { 0.3 } else { 0.0 };
        for margin in [0.0, 0.25, -0.2] {
            run_model::<2>(seed, margin, h, 250, foreign, &mut seen);
            run_model::<3>(seed ^ 0x5eed, margin, h, 250, foreign, &mut seen);
        }
    }
    // The generator reaches the cases it is meant to.
    assert!(seen.errors > 3000 && seen.stale > 1500 && seen.batch_errors > 700, "{seen:?}");
    assert!(seen.reused_in_frame > 1000 && seen.added > 30_000 && seen.removed > 15_000, "{seen:?}");
    assert!(seen.unchanged > 500 && seen.bound_failures > 200 && seen.kept > 1000, "{seen:?}");
}

// ---------------------------------------------------------------------------------------------
// The named behaviours
// ---------------------------------------------------------------------------------------------

fn sq(x: f32, y: f32, s: f32) -> Aabb<2> {
    Aabb::new([x, y], [x + s, y + s])
}

#[test]
fn first_update_reports_every_pair_as_added() {
    let mut w = World2::new(Config::default()).unwrap();
    let hs = w
        .extend(&[sq(0.0, 0.0, 1.0), sq(0.5, 0.5, 1.0), sq(1.5, 1.5, 1.0), sq(9.0, 9.0, 1.0)], Kind::Dynamic)
        .unwrap();
    assert!(w.pairs().is_empty(), "no pairs before the first update");
    w.update().unwrap();
    let ev = w.events();
    let want = vec![[hs[0], hs[1]], [hs[1], hs[2]]];
    assert_eq!(ev.added, want.as_slice());
    assert!(ev.removed.is_empty());
    assert_eq!(w.pairs(), want.as_slice());
    w.validate().unwrap();
}

#[test]
fn remove_reports_the_old_handle_and_reuse_gives_a_new_generation() {
    let mut w = World2::new(Config::default()).unwrap();
    let a = w.insert(sq(0.0, 0.0, 1.0), Kind::Dynamic).unwrap();
    let b = w.insert(sq(0.5, 0.0, 1.0), Kind::Dynamic).unwrap();
    let c = w.insert(sq(5.0, 0.0, 1.0), Kind::Dynamic).unwrap();
    assert_eq!([a.index(), b.index(), c.index()], [0, 1, 2], "slots in order");
    w.update().unwrap();
    w.remove(a).unwrap();
    // Same frame: slot 0 is reused, by a box touching b.
    let d = w.insert(sq(1.5, 0.0, 1.0), Kind::Dynamic).unwrap();
    assert_eq!(d.index(), a.index(), "LIFO reuse");
    assert!(d.generation() > a.generation());
    assert_eq!(w.pairs(), &[[a, b]], "pairs() names the last update's objects");
    w.update().unwrap();
    let ev = w.events();
    assert_eq!(ev.removed, &[[a, b]]);
    assert_eq!(ev.added, &[[d, b]]);
    assert_eq!(w.pairs(), &[[d, b]]);
    for call in [w.remove(a), w.set_aabb(a, sq(0.0, 0.0, 1.0)), w.set_kind(a, Kind::Static)] {
        assert_eq!(call, Err(Error::StaleHandle { handle: a.raw() }));
    }
    assert!(!w.contains(a) && w.contains(d));
    w.validate().unwrap();
}

#[test]
fn static_static_is_never_paired() {
    let mut w = World3::new(Config::default().with_margin(0.5)).unwrap();
    let b = Aabb::new([0.0; 3], [1.0; 3]);
    let s = w.extend(&[b, b, b], Kind::Static).unwrap();
    let d = w.insert(b, Kind::Dynamic).unwrap();
    w.update().unwrap();
    assert_eq!(w.pairs(), &[[s[0], d], [s[1], d], [s[2], d]]);
    // Dynamic to static: its pairs with the statics end.
    w.set_kind(d, Kind::Static).unwrap();
    w.update().unwrap();
    assert_eq!(w.events().removed.len(), 3);
    assert!(w.pairs().is_empty());
    // A static made dynamic pairs with every other.
    w.set_kind(s[1], Kind::Dynamic).unwrap();
    w.update().unwrap();
    assert_eq!(w.events().added, &[[s[0], s[1]], [s[1], s[2]], [s[1], d]]);
    assert_eq!((w.stats().statics, w.stats().dynamics), (3, 1));
    w.validate().unwrap();
}

#[test]
fn filters_need_both_directions() {
    let mut w = World2::new(Config::default()).unwrap();
    let b = sq(0.0, 0.0, 1.0);
    let a = w.insert_with(b, Kind::Dynamic, Filter { membership: 1, mask: 2 }, 0).unwrap();
    let x = w.insert_with(b, Kind::Dynamic, Filter { membership: 2, mask: 1 }, 0).unwrap();
    let y = w.insert_with(b, Kind::Dynamic, Filter { membership: 2, mask: 2 }, 0).unwrap();
    let z = w.insert(b, Kind::Dynamic).unwrap();
    w.update().unwrap();
    // a-x: each mask holds the other's group; a-y: y's mask misses a; x-y: x's mask misses
    // y; z (every bit) pairs with all.
    assert_eq!(w.pairs(), &[[a, x], [a, z], [x, z], [y, z]]);
    w.set_filter(y, Filter { membership: 3, mask: 3 }).unwrap();
    w.update().unwrap();
    let ev = w.events();
    assert_eq!((ev.added, ev.removed), (&[[a, y], [x, y]][..], &[][..]));
    w.set_filter(z, Filter { membership: 0, mask: u32::MAX }).unwrap();
    w.update().unwrap();
    assert_eq!(w.events().removed, &[[a, z], [x, z], [y, z]]);
    w.validate().unwrap();
}

#[test]
fn an_update_with_no_change_reports_nothing() {
    let mut w = World2::new(Config::default()).unwrap();
    let boxes: Vec<Aabb<2>> = (0..50).map(|i| sq(i as f32 * 0.5, 0.0, 1.0)).collect();
    let hs = w.extend(&boxes, Kind::Dynamic).unwrap();
    w.update().unwrap();
    assert_eq!(w.events().added.len(), 49 + 48);
    let pairs = w.pairs().to_vec();
    for _ in 0..3 {
        assert!(w.update().unwrap().is_empty());
        assert_eq!(w.stats().moved, 0);
        assert_eq!(w.stats().t_search, std::time::Duration::ZERO);
    }
    // Setting what is already there is no change either.
    w.set_aabb(hs[3], boxes[3]).unwrap();
    w.set_kind(hs[4], Kind::Dynamic).unwrap();
    w.set_filter(hs[5], Filter::default()).unwrap();
    assert!(w.update().unwrap().is_empty());
    assert_eq!(w.stats().moved, 0);
    assert_eq!(w.pairs(), pairs.as_slice());
}

#[test]
fn failed_calls_change_nothing() {
    let mut w = World3::new(Config::default()).unwrap();
    let b = Aabb::new([0.0; 3], [1.0; 3]);
    let hs = w.extend(&[b, b], Kind::Dynamic).unwrap();
    w.update().unwrap();
    let nan = Aabb::new([0.0, f32::NAN, 0.0], [1.0; 3]);
    assert_eq!(
        w.extend(&[b, b, nan], Kind::Dynamic),
        Err(Error::InvalidBox { index: 2, problem: BoxProblem::NaN })
    );
    let far = Aabb::new([9.0; 3], [10.0; 3]);
    let inv = Aabb::new([0.0, 0.0, 2.0], [1.0; 3]);
    assert_eq!(
        w.set_aabbs(&[(hs[0], far), (hs[1], inv)]),
        Err(Error::InvalidBox { index: 1, problem: BoxProblem::MinGreaterThanMax { axis: 2 } })
    );
    assert_eq!(w.len(), 2);
    assert_eq!(w.aabb(hs[0]), Ok(b), "the batch's good move was not applied");
    assert!(w.update().unwrap().is_empty());
    assert_eq!(w.pairs(), &[[hs[0], hs[1]]]);
    // The next insert still takes slot 2: the failed extend took none.
    assert_eq!(w.insert(b, Kind::Static).unwrap().index(), 2);
    w.validate().unwrap();
}

#[test]
fn too_many_pairs_fails_the_update_and_keeps_the_changes() {
    let b = Aabb::new([0.0; 2], [1.0; 2]);
    let mut w = World2::new(Config::default().with_max_pairs(Some(2))).unwrap();
    let hs = w.extend(&[b, b, b, b], Kind::Dynamic).unwrap();
    assert_eq!(w.update().err(), Some(Error::TooManyPairs { limit: 2 }));
    w.validate().unwrap();
    assert!(w.pairs().is_empty());
    w.remove(hs[3]).unwrap();
    w.remove(hs[2]).unwrap();
    w.update().unwrap();
    assert_eq!(w.events().added, &[[hs[0], hs[1]]]);
    w.validate().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Threads
// ---------------------------------------------------------------------------------------------

/// A long random sequence on a world big enough for the finder's parallel stages; every
/// update's events and pairs, as bytes.
fn scripted_bytes(seed: u64, config: Config<3>) -> Vec<u8> {
    let mut r = Rng::new(seed);
    let mut w = World3::new(config).unwrap();
    let mut live: Vec<Handle> = Vec::new();
    let mut out = Vec::new();
    fn put(pairs: &[Pair], out: &mut Vec<u8>) {
        out.extend((pairs.len() as u64).to_le_bytes());
        for p in pairs {
            for h in p {
                out.extend(h.raw().to_le_bytes());
            }
        }
    }
    let rand_box = |r: &mut Rng| {
        let min: [f32; 3] = std::array::from_fn(|_| r.range(0.0, 30.0));
        let s = r.range(0.0, 1.5);
        Aabb::new(min, min.map(|x| x + s))
    };
    for frame in 0..24 {
        let n = if frame == 0 { 3000 } else { r.below(60) };
        let boxes: Vec<Aabb<3>> = (0..n).map(|_| rand_box(&mut r)).collect();
        let k = if frame % 5 == 0 { Kind::Static } else { Kind::Dynamic };
        live.extend(w.extend(&boxes, k).unwrap());
        let moves: Vec<(Handle, Aabb<3>)> =
            (0..300).map(|_| (live[r.below(live.len())], rand_box(&mut r))).collect();
        w.set_aabbs(&moves).unwrap();
        for _ in 0..40 {
            let h = live.swap_remove(r.below(live.len()));
            w.remove(h).unwrap();
        }
        for _ in 0..10 {
            w.set_kind(live[r.below(live.len())], kind(&mut r)).unwrap();
        }
        w.update().unwrap();
        let ev = w.events();
        put(ev.added, &mut out);
        put(ev.removed, &mut out);
        put(w.pairs(), &mut out);
    }
    w.validate().unwrap();
    out
}

#[test]
fn same_bytes_for_any_thread_count() {
    let columns = Config::default().with_method(Method::Columns).with_margin(0.1);
    for config in [Config::default(), columns, columns.with_hysteresis(0.3)] {
        let mut first: Option<Vec<u8>> = None;
        for threads in [1, 2, 3, 4, 7, 16] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let bytes = pool.install(|| scripted_bytes(0xd1ce, config));
            match &first {
                None => first = Some(bytes),
                Some(f) => {
                    assert!(*f == bytes, "{threads} threads, {config:?}: other bytes than on 1 thread")
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// No panic
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any bit patterns, through every call that takes a box: errors or success, never a
    /// panic, and the world stays valid.
    #[test]
    fn arbitrary_bits_never_panic(bits in proptest::collection::vec(any::<[u32; 4]>(), 1..40), margin in prop_oneof![Just(0.0f32), Just(1.0), Just(-0.5)]) {
        let mut w = World2::new(Config::default().with_margin(margin)).unwrap();
        let boxes: Vec<Aabb<2>> = bits.iter().map(|b| Aabb::new([f32::from_bits(b[0]), f32::from_bits(b[1])], [f32::from_bits(b[2]), f32::from_bits(b[3])])).collect();
        let mut hs = Vec::new();
        for (i, b) in boxes.iter().enumerate() {
            let k = if i % 3 == 0 { Kind::Static } else { Kind::Dynamic };
            if let Ok(h) = w.insert(*b, k) {
                hs.push(h);
            }
        }
        let _ = w.extend(&boxes, Kind::Dynamic);
        for (i, b) in boxes.iter().enumerate() {
            if let Some(&h) = hs.get(i % hs.len().max(1)) {
                let _ = w.set_aabb(h, *b);
            }
        }
        let moves: Vec<(Handle, Aabb<2>)> = hs.iter().copied().zip(boxes.iter().rev().copied()).collect();
        let _ = w.set_aabbs(&moves);
        prop_assert!(w.validate().is_ok());
        prop_assert!(w.update().is_ok());
        prop_assert!(w.validate().is_ok());
    }
}
