//! The all-pairs peers of `benches/pairs.rs` and `benches/scaling.rs`: parry3d's BVH (3D),
//! broccoli and broccoli-rayon (2D), and rstar's R*-tree (2D and 3D), each returning the
//! pairs the way the library hands them out; the rayon pools; and the check of a pair list
//! against the brute-force reference.
//!
//! - `parry3d` (single threaded): `Bvh::from_leaves` binned build, then
//!   `traverse_bvtt_single_tree`, pairs pushed unsorted into a reused `Vec`.
//! - `broccoli` (single threaded): `Tree::new` and `find_colliding_pairs`. It reorders its
//!   input, so each timed call starts from an untimed copy of the boxes in their order.
//! - `broccoli_par` (the caller's pool): broccoli-rayon `par_new` and
//!   `par_find_colliding_pairs_acc_closure`, per-task `Vec`s appended; input as broccoli.
//! - `rstar` (single threaded): `RTree::bulk_load` of `GeomWithData<Rectangle>` tagged
//!   with the box's index (it takes its input by value: an untimed clone before each timed
//!   call), then `intersection_candidates_with_other_tree` of the tree with itself, which
//!   names every overlapping pair in both orders and each box with itself (rstar's
//!   envelopes are closed, as our boxes are); keeping `i < j` leaves each pair once.
//!
//! A peer's time is its build and its pair collection, not the conversion of the boxes into
//! its types.
#![allow(dead_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use broadphase::Aabb;
use broccoli::axgeom::Rect;
use broccoli::Tree;
use broccoli_rayon::prelude::*;
use parry3d::bounding_volume::Aabb as ParryAabb;
use parry3d::math::Vector as ParryVec;
use parry3d::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};
use rstar::primitives::{GeomWithData, Rectangle};
use rstar::RTree;

pub type Pairs = Vec<[u32; 2]>;
/// A broccoli element: the rectangle and the box's index.
pub type BrocBox = (Rect<f32>, u32);
/// An rstar element: the rectangle and the box's index.
pub type RstarBox<const D: usize> = GeomWithData<Rectangle<[f32; D]>, u32>;

/// A rayon pool of `t` threads.
pub fn pool(t: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(t).build().expect("thread pool")
}

// ---------------------------------------------------------------------------------------
// The adapters.

pub fn to_parry<const D: usize>(boxes: &[Aabb<D>]) -> Vec<ParryAabb> {
    assert_eq!(D, 3, "parry3d is 3D only");
    boxes
        .iter()
        .map(|b| {
            ParryAabb::new(
                ParryVec::new(b.min[0], b.min[1], b.min[2]),
                ParryVec::new(b.max[0], b.max[1], b.max[2]),
            )
        })
        .collect()
}

/// parry3d: binned BVH build, then the BVH traversed against itself.
pub fn parry_pairs(leaves: &[ParryAabb], ws: &mut BvhWorkspace, out: &mut Pairs) {
    out.clear();
    let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, leaves);
    bvh.traverse_bvtt_single_tree::<false>(ws, &mut |a, b| out.push([a, b]));
}

pub fn to_broccoli<const D: usize>(boxes: &[Aabb<D>]) -> Vec<BrocBox> {
    assert_eq!(D, 2, "broccoli is 2D only");
    boxes
        .iter()
        .enumerate()
        .map(|(i, b)| (Rect::new(b.min[0], b.max[0], b.min[1], b.max[1]), i as u32))
        .collect()
}

/// broccoli, single threaded. Reorders `bots`.
pub fn broccoli_pairs(bots: &mut [BrocBox], out: &mut Pairs) {
    out.clear();
    let mut tree = Tree::new(bots);
    tree.find_colliding_pairs(|a, b| out.push([a.1, b.1]));
}

/// broccoli-rayon, on the current rayon pool. Reorders `bots`.
pub fn broccoli_par_pairs(bots: &mut [BrocBox]) -> Pairs {
    let mut tree = Tree::par_new(bots);
    tree.par_find_colliding_pairs_acc_closure(
        Vec::new(),
        |_| Vec::new(),
        |a: &mut Pairs, mut b: Pairs| a.append(&mut b),
        |acc: &mut Pairs, a, b| acc.push([a.1, b.1]),
    )
}

pub fn to_rstar<const D: usize>(boxes: &[Aabb<D>]) -> Vec<RstarBox<D>> {
    assert!(D >= 2, "rstar is used in 2D and 3D");
    boxes
        .iter()
        .enumerate()
        .map(|(i, b)| GeomWithData::new(Rectangle::from_corners(b.min, b.max), i as u32))
        .collect()
}

/// rstar: bulk load, then the tree joined with itself, each pair kept once (`i < j`).
pub fn rstar_pairs<const D: usize>(items: Vec<RstarBox<D>>, out: &mut Pairs) {
    out.clear();
    let tree = RTree::bulk_load(items);
    for (a, b) in tree.intersection_candidates_with_other_tree(&tree) {
        if a.data < b.data {
            out.push([a.data, b.data]);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The peers by name, for benches that run them in a loop.

/// A peer of the all-pairs benches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    Parry3d,
    Broccoli,
    BroccoliPar,
    Rstar,
}

impl Peer {
    /// Every peer, in the benches' order.
    pub const ALL: [Peer; 4] = [Peer::Parry3d, Peer::Broccoli, Peer::BroccoliPar, Peer::Rstar];

    pub fn name(self) -> &'static str {
        match self {
            Peer::Parry3d => "parry3d",
            Peer::Broccoli => "broccoli",
            Peer::BroccoliPar => "broccoli_par",
            Peer::Rstar => "rstar",
        }
    }

    /// The peer called `name`; stops the bench on an unknown name.
    pub fn by_name(name: &str) -> Peer {
        *Peer::ALL.iter().find(|p| p.name() == name).unwrap_or_else(|| {
            panic!("BP_PEERS: one of {:?} or none, not {name:?}", Peer::ALL.map(Peer::name))
        })
    }

    /// Whether the peer runs in `d` dimensions.
    pub fn runs_in(self, d: usize) -> bool {
        match self {
            Peer::Parry3d => d == 3,
            Peer::Broccoli | Peer::BroccoliPar => d == 2,
            Peer::Rstar => d == 2 || d == 3,
        }
    }

    /// Whether the peer uses the caller's rayon pool (the others run on one thread).
    pub fn parallel(self) -> bool {
        self == Peer::BroccoliPar
    }
}

/// A peer with the boxes converted into its types (untimed), ready to run again and again.
pub struct PeerRun<const D: usize> {
    pub peer: Peer,
    parry: Vec<ParryAabb>,
    ws: BvhWorkspace,
    bots: Vec<BrocBox>,
    rstar: Vec<RstarBox<D>>,
    /// The input a call consumes or reorders, restored from the above before each call.
    buf_bots: Vec<BrocBox>,
    out: Pairs,
}

impl<const D: usize> PeerRun<D> {
    pub fn new(peer: Peer, boxes: &[Aabb<D>]) -> Self {
        assert!(peer.runs_in(D), "{} does not run in {D}D", peer.name());
        let bots =
            if matches!(peer, Peer::Broccoli | Peer::BroccoliPar) { to_broccoli(boxes) } else { Vec::new() };
        PeerRun {
            peer,
            parry: if peer == Peer::Parry3d { to_parry(boxes) } else { Vec::new() },
            ws: BvhWorkspace::default(),
            buf_bots: bots.clone(),
            bots,
            rstar: if peer == Peer::Rstar { to_rstar(boxes) } else { Vec::new() },
            out: Vec::new(),
        }
    }

    /// One call (a parallel peer on `pool`): the pairs as the peer hands them out.
    pub fn pairs(&mut self, pool: &rayon::ThreadPool) -> Pairs {
        self.time(1, pool);
        std::mem::take(&mut self.out)
    }

    /// `iters` calls, a parallel peer's on `pool`; the time of the calls alone, without the
    /// restores of their input.
    pub fn time(&mut self, iters: u64, pool: &rayon::ThreadPool) -> Duration {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            let start = match self.peer {
                Peer::Parry3d => {
                    let start = Instant::now();
                    parry_pairs(black_box(&self.parry), &mut self.ws, &mut self.out);
                    start
                }
                Peer::Broccoli => {
                    self.buf_bots.copy_from_slice(&self.bots);
                    let start = Instant::now();
                    broccoli_pairs(black_box(&mut self.buf_bots), &mut self.out);
                    start
                }
                Peer::BroccoliPar => {
                    self.buf_bots.copy_from_slice(&self.bots);
                    let start = Instant::now();
                    let bots = &mut self.buf_bots;
                    self.out = pool.install(|| broccoli_par_pairs(black_box(bots)));
                    start
                }
                Peer::Rstar => {
                    let items = self.rstar.clone();
                    let start = Instant::now();
                    rstar_pairs(black_box(items), &mut self.out);
                    start
                }
            };
            black_box(self.out.len());
            total += start.elapsed();
        }
        total
    }
}

// ---------------------------------------------------------------------------------------
// The check against brute force.

/// `i < j`, sorted, unique; also returns how many duplicates there were.
pub fn normalise(mut p: Pairs) -> (Pairs, usize) {
    for q in p.iter_mut() {
        if q[0] > q[1] {
            q.swap(0, 1);
        }
    }
    p.sort_unstable();
    let before = p.len();
    p.dedup();
    let dups = before - p.len();
    (p, dups)
}

/// Compares `got` (normalised first) against the reference; prints a verdict and a few
/// differing pairs.
pub fn compare<const D: usize>(what: &str, got: Pairs, reference: &Pairs, boxes: &[Aabb<D>]) -> bool {
    let raw = got.len();
    let self_pairs = got.iter().filter(|q| q[0] == q[1]).count();
    let (got, dups) = normalise(got);
    let ok = &got == reference && self_pairs == 0;
    let mut line = format!("    {what}: {} pairs", got.len());
    if dups > 0 || self_pairs > 0 {
        line += &format!(" ({raw} reported, {dups} duplicates, {self_pairs} self pairs)");
    }
    if ok {
        println!("{line}: ok");
        return true;
    }
    println!("{line}: MISMATCH with brute force ({} pairs)", reference.len());
    let missing: Vec<_> = reference.iter().filter(|q| got.binary_search(q).is_err()).collect();
    let extra: Vec<_> = got.iter().filter(|q| reference.binary_search(q).is_err()).collect();
    println!(
        "      missing {} (first: {:?}), extra {} (first: {:?})",
        missing.len(),
        missing.first(),
        extra.len(),
        extra.first()
    );
    for q in missing.iter().chain(extra.iter()).take(4) {
        let (a, b) = (boxes[q[0] as usize], boxes[q[1] as usize]);
        println!("      {q:?}: {a:?} {b:?} overlaps={}", a.overlaps(&b));
    }
    false
}
