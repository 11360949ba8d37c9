//! The world as an engine embeds it, one behaviour a test: events read beside queries,
//! user data through removal, kinematic objects, the accessors, handles round-tripped,
//! clones that go their own way, a short `Debug`.

use broadphase::{Aabb, Aabb2, Config, Error, Filter, Handle, Kind, QueryFilter, World2, World3};

fn sq(x: f32, y: f32, s: f32) -> Aabb2 {
    Aabb::new([x, y], [x + s, y + s])
}

#[test]
fn events_borrow_the_world_immutably_so_handlers_can_query() {
    let mut w = World2::new(Config::default()).unwrap();
    let floor = w.insert_with(sq(0.0, 0.0, 10.0), Kind::Static, Filter::default(), 100).unwrap();
    let ball = w.insert_with(sq(2.0, 2.0, 1.0), Kind::Dynamic, Filter::default(), 200).unwrap();
    let summary = w.update().unwrap();
    assert_eq!((summary.added, summary.removed, summary.changed), (1, 0, 2));
    let mut near = Vec::new();
    let mut seen = Vec::new();
    for &[a, b] in w.events().added {
        // Reading and querying the world while the events are borrowed.
        w.query_aabb(w.aabb(b).unwrap(), QueryFilter::new(), &mut near).unwrap();
        seen.push((w.user_data(a).unwrap(), w.user_data(b).unwrap(), near.clone()));
    }
    assert_eq!(seen, [(100, 200, vec![floor, ball])]);
    // The events stand until the next successful update, whatever is called between.
    w.set_aabb(ball, sq(20.0, 20.0, 1.0)).unwrap();
    assert_eq!(w.events().added, &[[floor, ball]]);
    w.update().unwrap();
    assert_eq!((w.events().added, w.events().removed), (&[][..], &[[floor, ball]][..]));
}

#[test]
fn a_failed_update_leaves_the_last_events() {
    let mut w = World2::new(Config::default().with_max_pairs(Some(1))).unwrap();
    let a = w.insert(sq(0.0, 0.0, 1.0), Kind::Dynamic).unwrap();
    let b = w.insert(sq(0.5, 0.5, 1.0), Kind::Dynamic).unwrap();
    w.update().unwrap();
    w.insert(sq(0.2, 0.2, 1.0), Kind::Dynamic).unwrap();
    w.remove(a).unwrap();
    w.insert(sq(0.3, 0.3, 1.0), Kind::Dynamic).unwrap();
    assert_eq!(w.update().err(), Some(Error::TooManyPairs { limit: 1 }));
    let ev = w.events();
    assert_eq!((ev.added, ev.removed, ev.departed), (&[[a, b]][..], &[][..], &[][..]));
    w.validate().unwrap();
}

#[test]
fn removed_objects_keep_their_data_in_the_events() {
    let mut w = World2::new(Config::default()).unwrap();
    let hs = w
        .extend_with(
            &[sq(0.0, 0.0, 1.0), sq(0.5, 0.0, 1.0), sq(5.0, 0.0, 1.0)],
            Kind::Dynamic,
            Filter::default(),
            &[7, 8, 9],
        )
        .unwrap();
    w.update().unwrap();
    w.remove(hs[1]).unwrap();
    w.remove(hs[2]).unwrap();
    // A new object takes the freed slot at once; the removed one stays reachable by its
    // old handle in the events.
    let fresh = w.insert_with(sq(50.0, 0.0, 1.0), Kind::Dynamic, Filter::default(), 11).unwrap();
    assert_eq!(fresh.index(), hs[2].index());
    w.update().unwrap();
    let ev = w.events();
    assert_eq!(ev.removed, &[[hs[0], hs[1]]]);
    let departed: Vec<(Handle, Kind, u64)> =
        ev.departed.iter().map(|d| (d.handle, d.kind, d.user_data)).collect();
    assert_eq!(departed, [(hs[1], Kind::Dynamic, 8), (hs[2], Kind::Dynamic, 9)]);
    let names: Vec<Option<u64>> = [hs[0], hs[1], hs[2], fresh].iter().map(|&h| ev.user_data(h)).collect();
    assert_eq!(names, [Some(7), Some(8), Some(9), Some(11)]);
    assert_eq!(ev.user_data(Handle::NULL), None);
}

#[test]
fn kinematic_objects_pair_with_dynamic_objects_only() {
    let mut w = World2::new(Config::default()).unwrap();
    let level = w.insert(sq(0.0, 0.0, 10.0), Kind::Static).unwrap();
    let lift = w.insert(sq(1.0, 1.0, 2.0), Kind::Kinematic).unwrap();
    let door = w.insert(sq(1.5, 1.5, 2.0), Kind::Kinematic).unwrap();
    let crate_ = w.insert(sq(2.0, 2.0, 1.0), Kind::Dynamic).unwrap();
    w.update().unwrap();
    assert_eq!(w.pairs(), &[[level, crate_], [lift, crate_], [door, crate_]]);
    // Moving a kinematic body through the level starts nothing with it.
    for step in 0..20 {
        let x = 1.0 + step as f32 * 0.4;
        w.set_aabb(lift, sq(x, 1.0, 2.0)).unwrap();
        w.update().unwrap();
        assert!(w.events().added.iter().chain(w.events().removed).all(|p| p.contains(&crate_)));
        w.validate().unwrap();
    }
    // A kinematic body turned dynamic pairs with the level and the other kinematic one.
    w.set_aabb(lift, sq(1.0, 1.0, 2.0)).unwrap();
    w.set_kind(lift, Kind::Dynamic).unwrap();
    w.update().unwrap();
    assert_eq!(w.pairs(), &[[level, lift], [level, crate_], [lift, door], [lift, crate_], [door, crate_]]);
    assert_eq!((w.stats().statics, w.stats().kinematics, w.stats().dynamics), (1, 1, 2));
    w.set_kind(lift, Kind::Kinematic).unwrap();
    w.update().unwrap();
    assert_eq!(w.events().removed, &[[level, lift], [lift, door]]);
    assert_eq!(w.kind(lift), Ok(Kind::Kinematic));
}

#[test]
fn accessors_iter_and_clear() {
    let mut w = World3::new(Config::default()).unwrap();
    let f = Filter { membership: 2, mask: 3 };
    let a = w.insert_with(Aabb::new([0.0; 3], [1.0; 3]), Kind::Static, f, 5).unwrap();
    let b = w.insert(Aabb::new([0.5; 3], [2.0; 3]), Kind::Dynamic).unwrap();
    w.set_user_data(b, u64::MAX).unwrap();
    assert_eq!((w.kind(a), w.filter(a), w.user_data(a)), (Ok(Kind::Static), Ok(f), Ok(5)));
    assert_eq!(w.user_data(b), Ok(u64::MAX));
    let listed: Vec<(Handle, u64)> = w.iter().map(|o| (o.handle, o.user_data)).collect();
    assert_eq!(listed, [(a, 5), (b, u64::MAX)]);
    w.update().unwrap();
    w.reserve(1000);
    w.clear();
    assert!(w.is_empty() && w.iter().next().is_none());
    w.update().unwrap();
    let ev = w.events();
    assert_eq!((ev.removed, ev.departed.len()), (&[[a, b]][..], 2));
    assert!(w.pairs().is_empty());
    w.validate().unwrap();
    assert_eq!(w.kind(a), Err(Error::StaleHandle { handle: a.raw() }));
}

#[test]
fn handles_round_trip_and_null_names_nothing() {
    let mut w = World2::new(Config::default()).unwrap();
    let h = w.insert(sq(0.0, 0.0, 1.0), Kind::Dynamic).unwrap();
    assert_eq!(Handle::from_raw(h.raw()), h);
    assert_eq!(Handle::default(), Handle::NULL);
    assert!(Handle::NULL.is_null() && !h.is_null());
    assert!(!w.contains(Handle::NULL));
    assert_eq!(w.remove(Handle::NULL), Err(Error::StaleHandle { handle: Handle::NULL.raw() }));
    assert_eq!(w.set_user_data(Handle::NULL, 1), Err(Error::StaleHandle { handle: u64::MAX }));
}

#[test]
fn a_clone_goes_its_own_way() {
    let mut w = World2::new(Config::default()).unwrap();
    let hs =
        w.extend(&(0..200).map(|i| sq(i as f32 * 0.5, 0.0, 1.0)).collect::<Vec<_>>(), Kind::Dynamic).unwrap();
    w.update().unwrap();
    w.set_aabb(hs[3], sq(100.0, 50.0, 1.0)).unwrap();
    let mut c = w.clone();
    c.validate().unwrap();
    c.set_aabb(hs[4], sq(-50.0, 50.0, 1.0)).unwrap();
    w.update().unwrap();
    c.update().unwrap();
    assert_ne!(w.pairs(), c.pairs());
    // hs[3] left its four neighbours in both; hs[4] left three more in the clone.
    assert_eq!((w.events().removed.len(), c.events().removed.len()), (4, 7));
    w.validate().unwrap();
    c.validate().unwrap();
}

#[test]
fn debug_prints_a_summary() {
    let mut w = World2::new(Config::default()).unwrap();
    w.extend(&vec![sq(0.0, 0.0, 1.0); 1000], Kind::Dynamic).unwrap();
    w.update().unwrap();
    let text = format!("{w:?}");
    assert!(text.len() < 1000, "{} bytes: {text}", text.len());
    assert!(text.contains("objects: 1000"), "{text}");
}

#[test]
fn a_self_overlapping_level_updates_under_a_pair_bound() {
    // 400 static tiles, each overlapping its eight neighbours: 1,500 static pairs that
    // never count against the bound of 8.
    let tiles: Vec<Aabb2> = (0..400).map(|i| sq((i % 20) as f32, (i / 20) as f32, 1.5)).collect();
    let mut w = World2::new(Config::default().with_max_pairs(Some(8))).unwrap();
    let level = w.extend(&tiles, Kind::Static).unwrap();
    let ball = w.insert(sq(5.2, 5.2, 0.5), Kind::Dynamic).unwrap();
    let s = w.update().unwrap();
    assert_eq!(s.added, 4, "{:?}", w.events().added);
    assert!(w.pairs().iter().all(|p| p[1] == ball && level.contains(&p[0])));
    for step in 0..30 {
        w.set_aabb(ball, sq(5.2 + step as f32 * 0.3, 5.2, 0.5)).unwrap();
        w.update().unwrap();
        w.validate().unwrap();
    }
}

#[test]
fn a_world_that_failed_on_its_bound_raises_it_and_updates() {
    let mut w = World2::new(Config::default().with_max_pairs(Some(2))).unwrap();
    let hs = w.extend(&[sq(0.0, 0.0, 1.0); 4], Kind::Dynamic).unwrap();
    assert_eq!(w.update().err(), Some(Error::TooManyPairs { limit: 2 }));
    assert_eq!(w.update().err(), Some(Error::TooManyPairs { limit: 2 }));
    w.set_max_pairs(Some(6));
    assert_eq!(w.config().max_pairs, Some(6));
    assert_eq!(w.update().unwrap().added, 6);
    assert_eq!(w.events().added[0], [hs[0], hs[1]]);
    w.set_max_pairs(None);
    w.insert(sq(0.5, 0.5, 1.0), Kind::Dynamic).unwrap();
    assert_eq!(w.update().unwrap().added, 4);
    w.validate().unwrap();
}

#[test]
fn a_static_only_world_builds_its_trees_and_searches_no_pairs() {
    let tiles: Vec<Aabb2> =
        (0..2000).map(|i| sq((i % 50) as f32 * 0.8, (i / 50) as f32 * 0.8, 1.0)).collect();
    let mut w = World2::new(Config::default()).unwrap();
    let hs = w.extend(&tiles, Kind::Static).unwrap();
    let s = w.update().unwrap();
    assert!(s.is_empty() && !w.stats().pair_search && w.pairs().is_empty());
    // The trees are built: a query reads them (nothing is pending).
    let mut out = Vec::new();
    w.query_aabb(sq(0.1, 0.1, 0.1), QueryFilter::default(), &mut out).unwrap();
    assert_eq!(out, [hs[0]]);
    // A dynamic object makes the next update search; its removal ends its pairs without
    // a search.
    let ball = w.insert(sq(0.1, 0.1, 0.1), Kind::Dynamic).unwrap();
    w.update().unwrap();
    assert!(w.stats().pair_search);
    assert_eq!(w.events().added, &[[hs[0], ball]]);
    w.remove(ball).unwrap();
    w.update().unwrap();
    assert!(!w.stats().pair_search);
    assert_eq!(w.events().removed, &[[hs[0], ball]]);
    // A static object turned kinematic pairs with nothing, and nothing is searched
    // beyond the trees' walks.
    w.set_kind(hs[5], Kind::Kinematic).unwrap();
    w.update().unwrap();
    assert!(w.events().is_empty());
    w.validate().unwrap();
}

/// Frames of a crate resting on a floor at the margin: its gap to the floor jitters
/// around the margin's reach, `margin * 2`, by 1% either way. Returns the events of each
/// frame after the first, and the pairs at the end.
fn resting_contact(config: Config<3>, frames: usize) -> (usize, usize, Vec<[Handle; 2]>) {
    let mut w = World3::new(config).unwrap();
    let floor = w.insert(Aabb::new([-10.0, -10.0, -1.0], [10.0, 10.0, 0.0]), Kind::Static).unwrap();
    let at = |gap: f32| Aabb::new([0.0, 0.0, gap], [1.0, 1.0, 1.0 + gap]);
    let body = w.insert(at(config.margin * 2.0 * 0.99), Kind::Dynamic).unwrap();
    w.update().unwrap();
    assert_eq!(w.events().added, &[[floor, body]]);
    let (mut begins, mut ends) = (0, 0);
    for f in 0..frames {
        let gap = config.margin * 2.0 * if f % 2 == 0 { 1.01 } else { 0.99 };
        w.set_aabb(body, at(gap)).unwrap();
        w.update().unwrap();
        w.validate().unwrap();
        begins += w.events().added.len();
        ends += w.events().removed.len();
    }
    (begins, ends, w.pairs().to_vec())
}

#[test]
fn a_contact_resting_at_the_margin_holds_under_hysteresis() {
    let config = Config::default().with_margin(0.05);
    // Without hysteresis the contact chatters: it ends and begins every other frame.
    let (begins, ends, _) = resting_contact(config, 100);
    assert_eq!((begins, ends), (50, 50));
    // With it, the one begin of the first update, and no end in 100 frames.
    let (begins, ends, pairs) = resting_contact(config.with_hysteresis(0.01), 100);
    assert_eq!((begins, ends, pairs.len()), (0, 0, 1));
    // Lifted past the hysteresis, the pair ends once, and begins again only on touching.
    let mut w = World3::new(config.with_hysteresis(0.01)).unwrap();
    let floor = w.insert(Aabb::new([-10.0; 3], [10.0, 10.0, 0.0]), Kind::Static).unwrap();
    let body = w.insert(Aabb::new([0.0; 3], [1.0; 3]), Kind::Dynamic).unwrap();
    w.update().unwrap();
    let lift = |w: &mut World3, z: f32| {
        w.set_aabb(body, Aabb::new([0.0, 0.0, z], [1.0, 1.0, 1.0 + z])).unwrap();
        w.update().unwrap();
        w.validate().unwrap();
        (w.events().added.to_vec(), w.events().removed.to_vec())
    };
    assert_eq!(lift(&mut w, 0.105), (vec![], vec![]), "within 0.1 + 0.01");
    assert_eq!(lift(&mut w, 0.115), (vec![], vec![[floor, body]]), "past it");
    assert_eq!(lift(&mut w, 0.105), (vec![], vec![]), "near but never touching: no begin");
    assert_eq!(lift(&mut w, 0.1), (vec![[floor, body]], vec![]), "touching at the margin");
    // Removing a member or a refusing filter ends a kept pair at once.
    assert_eq!(lift(&mut w, 0.105), (vec![], vec![]));
    w.set_filter(body, Filter { membership: 1, mask: 0 }).unwrap();
    w.update().unwrap();
    assert_eq!(w.events().removed, &[[floor, body]]);
    assert!(matches!(
        World2::new(Config::default().with_hysteresis(-1.0)),
        Err(Error::InvalidConfig { field: "hysteresis", .. })
    ));
    assert!(World2::new(Config::default().with_hysteresis(f32::NAN)).is_err());
}
