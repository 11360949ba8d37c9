//! The kernel's unit tests: its two drivers agree.

use super::kernel::{Item, Kernel, Pool, Scratch};
use super::Rec;
use crate::Aabb;

/// The sequential twin (one stack, no hand-off) finds the same groups as the parallel one.
#[test]
fn sequential_and_parallel_drivers_agree() {
    let mut s = 0x1234_5678u64;
    let mut r = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32
    };
    // Eight clumps apart on x (tasks of their own), each sparse on y (many groups).
    let boxes: Vec<Aabb<2>> = (0..24_000)
        .map(|i| {
            let (x, y) = ((i % 8) as f32 * 1000.0 + r() * 500.0, r() * 100_000.0);
            Aabb::new([x, y], [x + 4.0 * r(), y + 4.0 * r()])
        })
        .collect();
    let k = Kernel { min_group: 4, axes: [0, 1] };
    let mut a: Vec<Rec<2>> = boxes.iter().enumerate().map(|(i, &b)| Rec { b, id: i as u32 }).collect();
    let mut b = a.clone();
    let pool: Pool<2, Vec<(usize, usize)>> = Pool::default();
    let on_final = |c: &mut Vec<(usize, usize)>, g: &[Rec<2>], at: usize, _: Option<usize>| {
        c.push((at, g.len()));
        true
    };
    k.run_parallel(&mut a, &pool, &on_final);
    let mut par: Vec<(usize, usize)> = pool.into_inner().unwrap().into_iter().flat_map(|t| t.c).collect();
    par.sort_unstable();
    let mut seq = Vec::new();
    let first = Item { recs: &mut b, at: 0, next: 0, tried: 0, sorted_on: None };
    k.drive(first, &mut Scratch::default(), &mut 0, Some, |g, at, _| {
        seq.push((at, g.len()));
        true
    });
    seq.sort_unstable();
    assert_eq!(par, seq);
    assert!(a.iter().zip(&b).all(|(x, y)| x.id == y.id), "same permutation");
    assert!(par.len() > 1000, "the scene should split: {} groups", par.len());
}
