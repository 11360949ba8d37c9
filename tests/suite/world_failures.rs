//! The world after failed updates and under the pair bound: a failed update is retried as
//! the same frame whatever calls come between (removes, kind flips), `Config::max_pairs`
//! bounds the pairs a world holds, and an explosion of pairs is an error, not an abort.
//! Each case found by driving the public API against a naive model; checked here against
//! brute force, with `validate()` after every call.

use broadphase::{Aabb, Aabb2, Config, Error, Handle, Kind, QueryFilter, World, World2};

/// Every live pair the rule makes, by brute force over the live objects.
fn brute<const D: usize>(objs: &[(Handle, Aabb<D>, Kind)], margin: f32) -> Vec<[Handle; 2]> {
    let mut out = Vec::new();
    for (i, a) in objs.iter().enumerate() {
        for b in &objs[i + 1..] {
            let (ga, gb) = (a.1.grown(margin), b.1.grown(margin));
            let both_static = a.2 == Kind::Static && b.2 == Kind::Static;
            if !both_static && !ga.is_inverted() && !gb.is_inverted() && ga.overlaps(&gb) {
                let (x, y) = if a.0.index() < b.0.index() { (a.0, b.0) } else { (b.0, a.0) };
                out.push([x, y]);
            }
        }
    }
    out.sort_unstable();
    out
}

fn region_hits(w: &World2, r: Aabb2) -> Vec<Handle> {
    let mut out = Vec::new();
    w.query_aabb(r, QueryFilter::new(), &mut out).unwrap();
    out
}

#[test]
fn a_static_removed_after_a_failed_update_leaves_no_ghost() {
    let mut w = World2::new(Config::default().with_max_pairs(Some(0))).unwrap();
    let wall = w.insert(Aabb2::new([0.0, 0.0], [1.0, 1.0]), Kind::Static).unwrap();
    let ball = w.insert(Aabb2::new([0.5, 0.5], [1.5, 1.5]), Kind::Dynamic).unwrap();
    for i in 1..=4 {
        let c = 100.0 * i as f32;
        w.insert(Aabb2::new([c; 2], [c + 1.0; 2]), Kind::Dynamic).unwrap();
    }
    assert_eq!(w.update().err(), Some(Error::TooManyPairs { limit: 0 }));
    w.validate().unwrap();
    w.remove(wall).unwrap();
    w.validate().unwrap();
    w.update().unwrap();
    w.validate().unwrap();
    assert_eq!(region_hits(&w, Aabb2::new([-10.0; 2], [10.0; 2])), [ball]);
    // Away and back onto where the wall was: no pair with the removed object.
    w.set_aabb(ball, Aabb2::new([50.0; 2], [51.0; 2])).unwrap();
    w.update().unwrap();
    w.set_aabb(ball, Aabb2::new([0.5, 0.5], [1.5, 1.5])).unwrap();
    w.update().unwrap();
    let ev = w.events();
    assert!(ev.is_empty(), "{ev:?}");
    w.validate().unwrap();
    assert!(w.pairs().is_empty());
}

#[test]
fn a_kind_flipped_and_back_after_a_failed_update_leaves_no_ghost() {
    let mut w = World2::new(Config::default().with_max_pairs(Some(1))).unwrap();
    let a = w.insert(Aabb2::new([0.0, 0.0], [1.0, 1.0]), Kind::Dynamic).unwrap();
    let far = w.insert(Aabb2::new([90.0; 2], [91.0; 2]), Kind::Dynamic).unwrap();
    w.update().unwrap();
    // A frame that fails: `a` turned static, and three dynamic boxes on one spot.
    w.set_kind(a, Kind::Static).unwrap();
    let crowd: Vec<Handle> =
        (0..3).map(|_| w.insert(Aabb2::new([50.0; 2], [51.0; 2]), Kind::Dynamic).unwrap()).collect();
    assert_eq!(w.update().err(), Some(Error::TooManyPairs { limit: 1 }));
    w.validate().unwrap();
    // Before the retry: `a` back to dynamic, the crowd gone.
    w.set_kind(a, Kind::Dynamic).unwrap();
    for h in crowd {
        w.remove(h).unwrap();
    }
    w.update().unwrap();
    w.validate().unwrap();
    let mut out = Vec::new();
    w.query_aabb(Aabb2::new([-10.0; 2], [10.0; 2]), QueryFilter::new().only_static(), &mut out).unwrap();
    assert!(out.is_empty(), "a dynamic object is in the static tree: {out:?}");
    // A dynamic box moved onto `a` pairs with it once, as a dynamic pair.
    w.set_aabb(far, Aabb2::new([0.5; 2], [1.5; 2])).unwrap();
    w.update().unwrap();
    assert_eq!(w.events().added, &[[a, far]]);
    w.validate().unwrap();
}

/// Random frames under a small bound: every failed update is followed by removes and kind
/// flips, and every update that succeeds gives the brute force's pairs.
#[test]
fn failed_updates_then_removes_and_flips_match_brute_force() {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut failures = 0;
    for round in 0..40 {
        let bound = 3 + (next() % 12) as usize;
        let mut w = World2::new(Config::default().with_max_pairs(Some(bound))).unwrap();
        let mut objs: Vec<(Handle, Aabb2, Kind)> = Vec::new();
        for step in 0..120 {
            let ctx = format!("round {round} step {step} bound {bound}");
            match next() % 10 {
                0..=3 => {
                    let x = (next() % 40) as f32 * 0.5;
                    let y = (next() % 40) as f32 * 0.5;
                    let b = Aabb2::new([x, y], [x + 1.0 + (next() % 4) as f32, y + 1.0]);
                    let k = if next() % 3 == 0 { Kind::Static } else { Kind::Dynamic };
                    objs.push((w.insert(b, k).unwrap(), b, k));
                }
                4 if !objs.is_empty() => {
                    let i = (next() as usize) % objs.len();
                    w.remove(objs.swap_remove(i).0).unwrap();
                }
                5 | 6 if !objs.is_empty() => {
                    let i = (next() as usize) % objs.len();
                    let k = if objs[i].2 == Kind::Static { Kind::Dynamic } else { Kind::Static };
                    w.set_kind(objs[i].0, k).unwrap();
                    objs[i].2 = k;
                }
                7 if !objs.is_empty() => {
                    let i = (next() as usize) % objs.len();
                    let x = (next() % 40) as f32 * 0.5;
                    let b = Aabb2::new([x, x], [x + 1.0, x + 2.0]);
                    w.set_aabb(objs[i].0, b).unwrap();
                    objs[i].1 = b;
                }
                _ => {
                    let want = brute(&objs, 0.0);
                    match w.update() {
                        Ok(_) => assert_eq!(w.pairs(), want.as_slice(), "{ctx}"),
                        Err(Error::TooManyPairs { limit }) => {
                            assert_eq!(limit, bound);
                            assert!(want.len() > bound, "{ctx}: failed with {} pairs", want.len());
                            failures += 1;
                        }
                        Err(e) => panic!("{ctx}: {e}"),
                    }
                }
            }
            w.validate().unwrap_or_else(|e| panic!("{ctx}: {e}"));
        }
        // Thin the world out until it fits the bound, then check it whole.
        while brute(&objs, 0.0).len() > bound {
            w.remove(objs.pop().unwrap().0).unwrap();
        }
        w.update().unwrap();
        w.validate().unwrap();
        assert_eq!(w.pairs(), brute(&objs, 0.0).as_slice(), "round {round} end");
    }
    assert!(failures > 50, "only {failures} failed updates");
}

#[test]
fn max_pairs_bounds_the_pairs_a_world_holds() {
    // Boxes moved onto one spot: a frame of n(n-1)/2 pairs among the changed objects,
    // and of n pairs with a clean one.
    for (n, changed_only) in [(60, true), (60, false), (3000, true)] {
        let bound = 1000;
        let mut w = World::<3>::new(Config::default().with_max_pairs(Some(bound))).unwrap();
        let hs: Vec<Handle> = (0..n)
            .map(|i| {
                let c = i as f32 * 3.0;
                w.insert(Aabb::new([c, 0.0, 0.0], [c + 1.0, 1.0, 1.0]), Kind::Dynamic).unwrap()
            })
            .collect();
        w.update().unwrap();
        w.validate().unwrap();
        let spot = Aabb::new([0.0; 3], [1.0; 3]);
        let moved = if changed_only { &hs[..] } else { &hs[1..] };
        for &h in moved {
            w.set_aabb(h, spot).unwrap();
        }
        assert_eq!(w.update().err(), Some(Error::TooManyPairs { limit: bound }), "n {n}");
        w.validate().unwrap();
        assert!(w.pairs().is_empty());
        // Spread out again, the frame goes through with no pair.
        for (i, &h) in moved.iter().enumerate() {
            let c = 10_000.0 + i as f32 * 3.0;
            w.set_aabb(h, Aabb::new([c, 0.0, 0.0], [c + 1.0, 1.0, 1.0])).unwrap();
        }
        assert!(w.update().unwrap().is_empty());
        w.validate().unwrap();
    }
}

#[test]
fn a_bound_between_frames_holds_for_clean_objects_met() {
    // 40 dynamic boxes rest on one spot already (780 pairs); ten more land there.
    let bound = 800;
    let mut w = World2::new(Config::default().with_max_pairs(Some(bound))).unwrap();
    let spot = Aabb2::new([0.0; 2], [1.0; 2]);
    for _ in 0..40 {
        w.insert(spot, Kind::Dynamic).unwrap();
    }
    w.update().unwrap();
    assert_eq!(w.pairs().len(), 780);
    let late: Vec<Handle> = (0..10)
        .map(|i| {
            w.insert(Aabb2::new([5.0 + 3.0 * i as f32; 2], [6.0 + 3.0 * i as f32; 2]), Kind::Dynamic).unwrap()
        })
        .collect();
    w.update().unwrap();
    for &h in &late[..1] {
        w.set_aabb(h, spot).unwrap();
    }
    // 780 + 40 = 820 pairs: over the bound.
    assert_eq!(w.update().err(), Some(Error::TooManyPairs { limit: bound }));
    w.validate().unwrap();
    assert_eq!(w.pairs().len(), 780);
    w.set_aabb(late[0], Aabb2::new([100.0; 2], [101.0; 2])).unwrap();
    assert!(w.update().unwrap().is_empty());
    w.validate().unwrap();
}
