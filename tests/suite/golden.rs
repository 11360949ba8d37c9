//! The same bytes with and without the `parallel` feature: the pairs of `find_pairs` on
//! fixed scenes, and a world's events over fixed frames, hashed and compared with hashes
//! checked in here. The hashes are those of the brute force (`brute_force_pairs`, the
//! same code with and without the feature), and each test checks the brute force against
//! them as well: a changed scene generator fails both ways at once rather than passing
//! with a new expectation. `.ci/run` runs these with the default features and with
//! `--no-default-features`.

use super::common::{Draws, Rng};
use broadphase::internals::scene;
use broadphase::{brute_force_pairs, find_pairs_with, Aabb, Config, Handle, Kind, Method, World};

/// FNV-1a, 64 bits, over little-endian `u32`s.
fn fnv(words: impl IntoIterator<Item = u32>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for w in words {
        for b in w.to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn hash_pairs(pairs: &[[u32; 2]]) -> u64 {
    fnv(pairs.iter().flat_map(|p| *p))
}

/// Every method's pairs on `boxes`, and the brute force's, hash to `want`.
fn check<const D: usize>(name: &str, boxes: &[Aabb<D>], margin: f32, want: u64) {
    let config = Config::<D>::default().with_margin(margin);
    let brute = brute_force_pairs(boxes, &config).unwrap();
    assert_eq!(hash_pairs(&brute), want, "{name}: brute force {:#x}", hash_pairs(&brute));
    // `Method::BruteForce` runs `brute_force_pairs`'s code, hashed just above.
    for method in Method::ALL.into_iter().filter(|&m| m != Method::BruteForce) {
        let got = find_pairs_with(boxes, &config.with_method(method)).unwrap();
        assert_eq!(hash_pairs(&got), want, "{name}, {method:?}: {} pairs", got.len());
    }
}

#[test]
fn find_pairs_hashes_as_checked_in() {
    check("3D varied 12000", &scene::varied::<3>(12_000, 1), 0.0, 0xf4ef_f757_4f20_32b4);
    check("3D clustered 6000", &scene::clustered::<3>(6000, 2), 0.05, 0x2526_1b0f_b595_62c7);
    check("3D mixed 6000", &scene::mixed::<3>(6000, 3), 0.0, 0xaad5_4e83_2707_ef4f);
    check("2D uniform 12000", &scene::uniform::<2>(12_000, 4), 0.0, 0x5aa3_c413_1b66_08ab);
    check("2D all overlapping 600", &scene::all_overlapping::<2>(600, 5), 0.0, 0x9a4b_033b_00ca_e5f5);
    check("2D terrain 6000", &scene::terrain::<2>(6000, 6), 0.1, 0x51a0_1e8f_e5dc_add7);
}

/// A draw below `n` from the tests' generator.
fn below(r: &mut Rng, n: usize) -> usize {
    (r.next_u64() % n as u64) as usize
}

/// The pairs of the live objects by brute force, as a world names them: static pairs
/// left out, each `[a, b]` with `a.index() < b.index()`, sorted.
fn brute<const D: usize>(live: &[(Handle, Aabb<D>, Kind)], config: &Config<D>) -> Vec<[Handle; 2]> {
    let boxes: Vec<Aabb<D>> = live.iter().map(|o| o.1).collect();
    let mut out: Vec<[Handle; 2]> = brute_force_pairs(&boxes, config)
        .unwrap()
        .into_iter()
        .map(|[i, j]| (live[i as usize], live[j as usize]))
        .filter(|(a, b)| a.2 == Kind::Dynamic || b.2 == Kind::Dynamic)
        .map(|(a, b)| if a.0.index() < b.0.index() { [a.0, b.0] } else { [b.0, a.0] })
        .collect();
    out.sort_unstable();
    out
}

fn minus(a: &[[Handle; 2]], b: &[[Handle; 2]]) -> Vec<[Handle; 2]> {
    a.iter().filter(|p| b.binary_search(p).is_err()).copied().collect()
}

fn words(pairs: &[[Handle; 2]]) -> impl Iterator<Item = u32> + '_ {
    pairs.iter().flat_map(|p| p.iter().flat_map(|h| [h.index(), h.generation()]))
}

/// A level of statics and a crowd of dynamic boxes over `frames` frames (moves, a few
/// teleports, removals and insertions): every frame's events equal the brute force's
/// difference, and all of them hash to `want`.
fn world_events<const D: usize>(seed: u64, frames: usize, want: u64) {
    let config = Config::<D>::default().with_margin(0.05);
    let mut w = World::<D>::new(config).unwrap();
    let mut r = Rng::new(seed);
    let mut live: Vec<(Handle, Aabb<D>, Kind)> = Vec::new();
    for (i, b) in scene::varied::<D>(3000, seed).into_iter().enumerate() {
        let kind = if i % 4 == 0 { Kind::Static } else { Kind::Dynamic };
        live.push((w.insert(b, kind).unwrap(), b, kind));
    }
    let side = scene::world_side::<D>(3000) as f32;
    let (mut last, mut all) = (Vec::new(), Vec::new());
    for f in 0..frames {
        for _ in 0..live.len() / 10 {
            let i = below(&mut r, live.len());
            if live[i].2 == Kind::Static {
                continue;
            }
            let far = below(&mut r, 50) == 0;
            let d: [f32; D] =
                std::array::from_fn(|_| if far { r.unit() * side } else { (r.unit() - 0.5) * 0.5 });
            let b = &live[i].1;
            let moved = if far {
                Aabb::new(d, std::array::from_fn(|k| d[k] + b.max[k] - b.min[k]))
            } else {
                Aabb::new(std::array::from_fn(|k| b.min[k] + d[k]), std::array::from_fn(|k| b.max[k] + d[k]))
            };
            w.set_aabb(live[i].0, moved).unwrap();
            live[i].1 = moved;
        }
        for _ in 0..5 {
            let i = below(&mut r, live.len());
            w.remove(live.swap_remove(i).0).unwrap();
            let c: [f32; D] = std::array::from_fn(|_| r.unit() * side);
            let b = Aabb::new(c, std::array::from_fn(|k| c[k] + 0.5 + r.unit()));
            live.push((w.insert(b, Kind::Dynamic).unwrap(), b, Kind::Dynamic));
        }
        w.update().unwrap();
        let now = brute(&live, &config);
        let (added, removed) = (minus(&now, &last), minus(&last, &now));
        let e = w.events();
        assert_eq!(e.added, &added[..], "{D}D frame {f}: added");
        assert_eq!(e.removed, &removed[..], "{D}D frame {f}: removed");
        all.extend(words(&added).chain([u32::MAX]).chain(words(&removed)).chain([u32::MAX]));
        last = now;
    }
    assert_eq!(fnv(all), want, "{D}D events");
}

#[test]
fn world_events_hash_as_checked_in() {
    world_events::<3>(7, 12, 0x6e40_6dfb_abf9_2337);
    world_events::<2>(8, 12, 0x9e3e_bb28_0196_31f3);
}
