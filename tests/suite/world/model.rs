//! The reference model of a world and the random calls that drive it: live objects by
//! slot, the generations and the LIFO free list the contract promises, the pairs by brute
//! force with the rules; the checks after each call and at each update; boxes of every
//! shape the world must handle, valid and not, and handles it must refuse.

use super::common::{Draws, Rng};
use broadphase::{brute_force_pairs, Aabb, BoxProblem, Config, Error, Filter, Handle, Kind, World};
use std::collections::BTreeSet;

pub type Pair = [Handle; 2];

// ---------------------------------------------------------------------------------------------
// The reference model
// ---------------------------------------------------------------------------------------------

/// A live object as the model keeps it.
#[derive(Clone, Copy, Debug)]
pub struct Obj<const D: usize> {
    pub h: Handle,
    pub aabb: Aabb<D>,
    pub kind: Kind,
    pub filter: Filter,
    pub data: u64,
}

/// The world as the contract describes it: live objects by slot, the generation each slot
/// gives next, the LIFO free list, and the pairs of the last update.
pub struct Model<const D: usize> {
    pub margin: f32,
    /// `Config::hysteresis`: a pair of the last update stays while its margin-grown boxes
    /// are within this of each other on every axis.
    pub hysteresis: f32,
    pub slots: Vec<Option<Obj<D>>>,
    pub next_gen: Vec<u32>,
    pub free: Vec<u32>,
    pub last: Vec<Pair>,
    /// The objects removed since the last update: handle, kind, user data.
    pub departing: Vec<(Handle, Kind, u64)>,
}

impl<const D: usize> Model<D> {
    pub fn new(margin: f32) -> Self {
        Self {
            margin,
            hysteresis: 0.0,
            slots: Vec::new(),
            next_gen: Vec::new(),
            free: Vec::new(),
            last: Vec::new(),
            departing: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.slots.iter().flatten().count()
    }

    pub fn live(&self) -> Vec<Obj<D>> {
        self.slots.iter().flatten().copied().collect()
    }

    /// The slot the next insert takes and its generation: the last freed, else a new one.
    pub fn next_handle(&self) -> (u32, u32) {
        match self.free.last() {
            Some(&s) => (s, self.next_gen[s as usize]),
            None => (self.slots.len() as u32, 0),
        }
    }

    pub fn insert(&mut self, h: Handle, aabb: Aabb<D>, kind: Kind, filter: Filter, data: u64) {
        let (s, g) = self.next_handle();
        assert_eq!((h.index(), h.generation()), (s, g), "insert took the wrong slot or generation");
        if self.free.pop().is_none() {
            self.slots.push(None);
            self.next_gen.push(0);
        }
        self.slots[s as usize] = Some(Obj { h, aabb, kind, filter, data });
    }

    pub fn get_mut(&mut self, h: Handle) -> &mut Obj<D> {
        self.slots[h.index() as usize].as_mut().filter(|o| o.h == h).expect("model: live handle")
    }

    pub fn is_live(&self, h: Handle) -> bool {
        self.slots.get(h.index() as usize).is_some_and(|o| o.is_some_and(|o| o.h == h))
    }

    pub fn remove(&mut self, h: Handle) {
        let s = h.index() as usize;
        assert!(self.is_live(h));
        let o = self.slots[s].expect("live");
        self.departing.push((h, o.kind, o.data));
        self.slots[s] = None;
        self.next_gen[s] = h.generation() + 1;
        self.free.push(s as u32);
    }

    /// Every pair by the rule, by brute force over the live objects.
    pub fn pairs(&self) -> Vec<Pair> {
        let live = self.live();
        let boxes: Vec<Aabb<D>> = live.iter().map(|o| o.aabb).collect();
        let config = Config::default().with_margin(self.margin);
        let mut out: Vec<Pair> = brute_force_pairs(&boxes, &config)
            .expect("model boxes are valid")
            .into_iter()
            .map(|[i, j]| (live[i as usize], live[j as usize]))
            .filter(|(a, b)| {
                (a.kind == Kind::Dynamic || b.kind == Kind::Dynamic)
                    && a.filter.membership & b.filter.mask != 0
                    && b.filter.membership & a.filter.mask != 0
            })
            .map(|(a, b)| [a.h, b.h])
            .collect();
        // Under hysteresis, the last update's pairs whose objects live, still pair by the
        // rule and whose grown boxes lie within the hysteresis of each other on every axis.
        let h = self.hysteresis;
        for &[x, y] in &self.last {
            let (Some(a), Some(b)) = (self.get(x), self.get(y)) else { continue };
            let (ga, gb) = (a.aabb.grown(self.margin), b.aabb.grown(self.margin));
            let rule = (a.kind == Kind::Dynamic || b.kind == Kind::Dynamic)
                && a.filter.membership & b.filter.mask != 0
                && b.filter.membership & a.filter.mask != 0;
            let valid = (0..D).all(|k| ga.min[k] <= ga.max[k] && gb.min[k] <= gb.max[k]);
            let near = (0..D).all(|k| ga.min[k] - h <= gb.max[k] && gb.min[k] - h <= ga.max[k]);
            if h > 0.0 && rule && valid && near {
                out.push([x, y]);
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The live object `h` names.
    pub fn get(&self, h: Handle) -> Option<&Obj<D>> {
        self.slots.get(h.index() as usize).and_then(|o| o.as_ref()).filter(|o| o.h == h)
    }

    /// The pairs that do not overlap (kept by the hysteresis) among `pairs`.
    pub fn apart(&self, pairs: &[Pair]) -> usize {
        pairs
            .iter()
            .filter(|[x, y]| {
                let (a, b) = (self.get(*x).expect("live").aabb, self.get(*y).expect("live").aabb);
                !a.grown(self.margin).overlaps(&b.grown(self.margin))
            })
            .count()
    }
}

/// `a \ b` of sorted lists, sorted.
pub fn minus(a: &[Pair], b: &[Pair]) -> Vec<Pair> {
    let b: BTreeSet<Pair> = b.iter().copied().collect();
    a.iter().copied().filter(|p| !b.contains(p)).collect()
}

/// The checks after every call: `validate`, the live count, every live box, and some stale
/// handles refused.
pub fn check_calm<const D: usize>(ctx: &str, w: &World<D>, m: &Model<D>, dead: &[Handle]) {
    if let Err(e) = w.validate() {
        panic!("{ctx}: validate: {e}");
    }
    assert_eq!(w.len(), m.len(), "{ctx}: len");
    assert_eq!(w.is_empty(), m.len() == 0, "{ctx}: is_empty");
    for o in m.slots.iter().flatten() {
        assert!(w.contains(o.h), "{ctx}: {:?} not contained", o.h);
        let got = w.aabb(o.h).unwrap_or_else(|e| panic!("{ctx}: aabb({:?}): {e}", o.h));
        assert_eq!(bytemuck::bytes_of(&got), bytemuck::bytes_of(&o.aabb), "{ctx}: box of {:?}", o.h);
        assert_eq!(w.kind(o.h), Ok(o.kind), "{ctx}: kind of {:?}", o.h);
        assert_eq!(w.filter(o.h), Ok(o.filter), "{ctx}: filter of {:?}", o.h);
        assert_eq!(w.user_data(o.h), Ok(o.data), "{ctx}: user data of {:?}", o.h);
    }
    let listed: Vec<(Handle, Kind, Filter, u64)> =
        w.iter().map(|o| (o.handle, o.kind, o.filter, o.user_data)).collect();
    let want: Vec<(Handle, Kind, Filter, u64)> =
        m.live().iter().map(|o| (o.h, o.kind, o.filter, o.data)).collect();
    assert_eq!(listed, want, "{ctx}: iter");
    for &h in dead.iter().rev().take(4) {
        assert!(!w.contains(h), "{ctx}: removed {h:?} still contained");
        assert_eq!(w.aabb(h), Err(Error::StaleHandle { handle: h.raw() }), "{ctx}: aabb of removed {h:?}");
        assert_eq!(
            w.user_data(h),
            Err(Error::StaleHandle { handle: h.raw() }),
            "{ctx}: data of removed {h:?}"
        );
    }
}

/// The checks at an update: the events against the difference, the counts, and (where
/// `look`) the pairs against the model. Left unread, the pairs are first sorted by a call
/// between updates, with changes pending.
pub fn check_update<const D: usize>(ctx: &str, w: &mut World<D>, m: &mut Model<D>, look: bool) {
    let want = m.pairs();
    w.update().unwrap_or_else(|e| panic!("{ctx}: update: {e}"));
    let ev = w.events();
    let (added, removed) = (ev.added.to_vec(), ev.removed.to_vec());
    assert_eq!(removed, minus(&m.last, &want), "{ctx}: removed events");
    assert_eq!(added, minus(&want, &m.last), "{ctx}: added events");
    // The objects removed, sorted by handle, and every handle an event names has its data.
    let mut departing = std::mem::take(&mut m.departing);
    departing.sort();
    let departed: Vec<(Handle, Kind, u64)> =
        ev.departed.iter().map(|d| (d.handle, d.kind, d.user_data)).collect();
    assert_eq!(departed, departing, "{ctx}: departed");
    for &h in added.iter().chain(&removed).flatten() {
        let data = m.slots[h.index() as usize]
            .filter(|o| o.h == h)
            .map(|o| o.data)
            .or_else(|| departing.iter().find(|d| d.0 == h).map(|d| d.2));
        assert_eq!(ev.user_data(h), data, "{ctx}: events' user data of {h:?}");
    }
    let s = w.stats();
    assert_eq!((s.pairs, s.added, s.removed), (want.len(), added.len(), removed.len()), "{ctx}: stats");
    let count = |k: Kind| m.live().iter().filter(|o| o.kind == k).count();
    assert_eq!(
        (s.statics, s.kinematics, s.dynamics),
        (count(Kind::Static), count(Kind::Kinematic), count(Kind::Dynamic)),
        "{ctx}: kind counts"
    );
    if look && w.pairs() != want.as_slice() {
        let got = w.pairs();
        let (miss, extra) = (minus(&want, got), minus(got, &want));
        panic!(
            "{ctx}: pairs differ: {} missing {:?}, {} extra {:?}",
            miss.len(),
            &miss[..miss.len().min(3)],
            extra.len(),
            &extra[..extra.len().min(3)]
        );
    }
    m.last = want;
}

// ---------------------------------------------------------------------------------------------
// Random calls
// ---------------------------------------------------------------------------------------------

/// A valid box of one of the shapes the world must handle: small, on a lattice (touching
/// and identical boxes), zero-size, huge, far outside, a copy of or touching a live box.
pub fn valid_box<const D: usize>(r: &mut Rng, live: &[Obj<D>]) -> Aabb<D> {
    let mut min = [0.0; D];
    let mut max = [0.0; D];
    let pick = r.below(100);
    if pick < 10 && !live.is_empty() {
        let o = live[r.below(live.len())].aabb;
        if r.chance(0.5) {
            return o;
        }
        // Touches `o` exactly on one axis, from above.
        let k = r.below(D);
        min = o.min;
        max = o.max;
        let ext = max[k] - min[k];
        min[k] = o.max[k];
        max[k] = (o.max[k] + ext).min(f32::MAX);
        return Aabb::new(min, max);
    }
    for k in 0..D {
        let (lo, hi) = match pick {
            // On a lattice: exact touches and copies.
            10..=39 => {
                let lo = r.below(8) as f32;
                (lo, lo + r.below(3) as f32)
            }
            // Zero size.
            40..=44 => {
                let x = r.range(0.0, 10.0);
                (x, x)
            }
            // Huge, or the whole float range.
            45..=47 => (-1e30, 1e30),
            48 => (-f32::MAX, f32::MAX),
            // Far outside.
            49..=52 => {
                let x = 1e6 + r.range(0.0, 2.0);
                (x, x + 1.0)
            }
            _ => {
                let x = r.range(-1.0, 10.0);
                (x, x + r.range(0.0, 3.0))
            }
        };
        min[k] = lo;
        max[k] = hi;
    }
    Aabb::new(min, max)
}

/// A box with one defect, and the problem the world must name.
pub fn invalid_box<const D: usize>(r: &mut Rng) -> (Aabb<D>, BoxProblem) {
    let mut b: Aabb<D> = Aabb::new([1.0; D], [2.0; D]);
    let k = r.below(D);
    let corner = if r.chance(0.5) { &mut b.min } else { &mut b.max };
    match r.below(4) {
        0 => {
            corner[k] = f32::NAN;
            (b, BoxProblem::NaN)
        }
        1 => {
            corner[k] = f32::INFINITY;
            (b, BoxProblem::Infinite)
        }
        2 => {
            corner[k] = f32::NEG_INFINITY;
            (b, BoxProblem::Infinite)
        }
        _ => {
            b.min[k] = 3.0;
            (b, BoxProblem::MinGreaterThanMax { axis: k })
        }
    }
}

pub fn kind(r: &mut Rng) -> Kind {
    match r.below(10) {
        0..=5 => Kind::Dynamic,
        6 => Kind::Kinematic,
        _ => Kind::Static,
    }
}

/// User data: 0 (the default) or any value.
pub fn data(r: &mut Rng) -> u64 {
    if r.chance(0.5) {
        0
    } else {
        r.next_u64()
    }
}

pub fn filter(r: &mut Rng) -> Filter {
    const GROUPS: [u32; 4] = [1, 2, 3, u32::MAX];
    Filter { membership: GROUPS[r.below(4)], mask: GROUPS[r.below(4)] }
}

/// How often each interesting case came up, over a whole test.
#[derive(Default, Debug)]
pub struct Seen {
    pub errors: usize,
    pub stale: usize,
    pub batch_errors: usize,
    pub reused_in_frame: usize,
    pub added: usize,
    pub removed: usize,
    /// Updates after which the pairs were the same.
    pub unchanged: usize,
    /// Updates failed on a pair bound one short of the pairs, then retried.
    pub bound_failures: usize,
    /// Pairs held after updates though their boxes parted (hysteresis), summed.
    pub kept: usize,
}

/// A handle the world must refuse: a removed one, or one from another world past every
/// slot of this one.
pub fn bad_handle(r: &mut Rng, dead: &[Handle], foreign: Handle) -> Handle {
    if !dead.is_empty() && r.chance(0.8) {
        dead[r.below(dead.len())]
    } else {
        foreign
    }
}

/// A live handle, or a bad one with probability `p_bad` (always bad when none is live).
pub fn some_handle<const D: usize>(
    r: &mut Rng,
    m: &Model<D>,
    dead: &[Handle],
    foreign: Handle,
    p_bad: f32,
) -> (Handle, bool) {
    let live = m.live();
    if live.is_empty() || r.chance(p_bad) {
        (bad_handle(r, dead, foreign), false)
    } else {
        (live[r.below(live.len())].h, true)
    }
}
