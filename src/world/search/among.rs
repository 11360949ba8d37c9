//! The pairs among the changed objects themselves, as they were and as they are: the
//! walks skip every changed object they meet, so these come from a pair search over the
//! changed objects' boxes alone, once in each state.
//!
//! - Input: the changed list and each changed slot's state then and now. Output: the pairs
//!   the kinds and filters allow, named by slot and generation, appended to `old` and
//!   `new`.
//! - Cost: up to [`AMONG_SWEEP_MAX`] changed objects, a sort and a sweep, O(c log c + k')
//!   for c changed objects and k' pairs overlapping on the sweep axis; above, the one-shot
//!   finder.
//! - Threads: the two states at once (gather, sweep, naming), each on one thread
//!   (`rayon::join`); above the limit, the finder's own stages. The caller sorts, so the
//!   same bytes for any thread count.
//! - Allocation: each state's boxes, positions, pairs and sweep buffers, kept from frame
//!   to frame; above [`AMONG_SWEEP_MAX`], the two states share one buffer of boxes.
//! - Source: P. Terdiman, "Box pruning" (the sweep, [`crate::algorithms::sap`]).

use super::{pair, Search};
use crate::algorithms::sap::Sorted;
use crate::time::Instant;
use crate::world::store::{pairable, Snapshot, Store};
use crate::world::{dirty::Dirty, handle::Slots, Handle};
use crate::{Aabb, Broadphase, Error};

/// Up to this many changed objects, the pairs among them come from one sweep a state,
/// each on one thread; above, from the one-shot finder, which also
/// handles the layouts that make a sweep quadratic (long crossing boxes).
const AMONG_SWEEP_MAX: usize = 1 << 14;

/// Whether the objects at positions `i` and `j` of the changed list pair in the state
/// `state` gives, kinds and filters alone.
fn pairs_in<const D: usize>(state: &impl Fn(usize) -> Snapshot<D>) -> impl Fn(u32, u32) -> bool + '_ {
    move |i, j| {
        let (x, y) = (state(i as usize), state(j as usize));
        pairable(x.kind, x.filter, y.kind, y.filter)
    }
}

/// One pair search among the changed objects in one state (as they were, or as they
/// are): their live boxes, each one's position in the changed list, and their pairs.
#[derive(Clone, Debug, Default)]
pub(super) struct Among<const D: usize> {
    boxes: Vec<Aabb<D>>,
    at: Vec<u32>,
    pub(super) found: Vec<[u32; 2]>,
    sorted: Sorted<D>,
}

impl<const D: usize> Among<D> {
    /// The live boxes of the `n` changed slots in the state `state` gives.
    fn gather(&mut self, n: usize, state: impl Fn(usize) -> Snapshot<D>) {
        self.boxes.clear();
        self.at.clear();
        for i in 0..n {
            let st = state(i);
            if st.alive {
                self.boxes.push(st.aabb);
                self.at.push(i as u32);
            }
        }
        self.found.clear();
    }

    /// Every overlapping pair of the boxes, by one run of `finder`.
    fn find(&mut self, finder: &mut Broadphase<D>) -> Result<(), Error> {
        if self.boxes.len() >= 2 {
            finder.find_pairs(&self.boxes, &mut self.found)?;
        }
        Ok(())
    }

    /// Every overlapping pair of the boxes grown by `margin` (inverted ones left out), as
    /// `[i, j]` with `i < j`, by one sweep on the calling thread: for the few changed
    /// objects of a frame, the one-shot finder's parallel stages cost more in hand-offs
    /// between threads than the sweep itself. PERF: benches/world.rs (`move_1`,
    /// `move_10`).
    ///
    /// Only pairs `keep` accepts are kept (the kinds and filters: static pairs among
    /// changed static objects are never held, so never count); once more than `bound` are
    /// kept the sweep stops and returns false.
    fn sweep(&mut self, margin: f32, bound: usize, keep: impl Fn(u32, u32) -> bool) -> bool {
        if self.boxes.len() < 2 {
            return true;
        }
        // Along the axis where the boxes spread widest.
        let mut lo = [f32::INFINITY; D];
        let mut hi = [f32::NEG_INFINITY; D];
        for b in &self.boxes {
            for k in 0..D {
                lo[k] = lo[k].min(b.min[k]);
                hi[k] = hi[k].max(b.max[k]);
            }
        }
        let axis = (0..D).fold(0, |a, k| if hi[k] - lo[k] > hi[a] - lo[a] { k } else { a });
        let sorted = &mut self.sorted;
        sorted.set_axis(axis);
        for (i, b) in self.boxes.iter().enumerate() {
            let g = b.grown(margin);
            if !g.is_inverted() {
                sorted.push(g, i as u32);
            }
        }
        sorted.sort();
        let found = &mut self.found;
        let at = &self.at;
        let mut within = true;
        crate::algorithms::sap::complete(sorted, 0..sorted.len(), |a, b| {
            let (i, j) = (sorted.payload[a], sorted.payload[b]);
            if within && keep(at[i as usize], at[j as usize]) {
                found.push([i.min(j), i.max(j)]);
                within = found.len() <= bound;
            }
        });
        within
    }

    /// The pairs found that the kinds and filters allow, named by slot and generation in
    /// the state `state` gives, appended to `out`.
    fn emit(&self, list: &[u32], state: impl Fn(usize) -> Snapshot<D>, out: &mut Vec<[Handle; 2]>) {
        for &[i, j] in &self.found {
            let (pa, pb) = (self.at[i as usize] as usize, self.at[j as usize] as usize);
            let (sa, sb) = (state(pa), state(pb));
            if pairable(sa.kind, sa.filter, sb.kind, sb.filter) {
                out.push(pair(list[pa], sa.generation, list[pb], sb.generation));
            }
        }
    }

    /// Heap bytes held for boxes, from capacities (the pairs: [`Among::found`]).
    pub(super) fn bytes(&self) -> usize {
        self.boxes.capacity() * std::mem::size_of::<Aabb<D>>() + self.at.capacity() * 4
    }
}

impl<const D: usize> Search<D> {
    /// The pairs among the changed slots (`changed`) as they were, into `old`, and as they
    /// are, into `new`: the frame's last stage. Timed as serial where each state is one
    /// sweep.
    pub(super) fn among(
        &mut self,
        slots: &Slots,
        store: &Store<D>,
        changed: &Dirty,
        finder: &mut Broadphase<D>,
        old: &mut Vec<[Handle; 2]>,
        new: &mut Vec<[Handle; 2]>,
    ) -> Result<(), Error> {
        let list = changed.list();
        let now = |i: usize| store.snapshot(slots, list[i] as usize);
        let t = Instant::now();
        let among = self.among_both(list, |i| store.before[i], now, finder, old, new);
        if list.len() <= AMONG_SWEEP_MAX {
            self.times.serial += t.elapsed();
        }
        among
    }

    /// The pairs among the changed slots as they were (into `old`) and as they are (into
    /// `new`). Up to [`AMONG_SWEEP_MAX`] changed slots, both states are gathered, swept and
    /// named at once, each on one thread; above, each is one run of `finder`.
    fn among_both(
        &mut self,
        list: &[u32],
        then: impl Fn(usize) -> Snapshot<D> + Sync,
        now: impl Fn(usize) -> Snapshot<D> + Sync,
        finder: &mut Broadphase<D>,
        old: &mut Vec<[Handle; 2]>,
        new: &mut Vec<[Handle; 2]>,
    ) -> Result<(), Error> {
        let margin = finder.config().margin;
        let bound = finder.config().max_pairs.unwrap_or(usize::MAX);
        let [a, b] = &mut self.among;
        if list.len() <= AMONG_SWEEP_MAX {
            // Each state whole (its gather reads the store by slot) on its own thread. A
            // state's pairs that the rule keeps were held then (`old`: at most the bound)
            // or are held after the frame (`new`).
            let (then_ok, now_ok) = crate::par::join(
                || {
                    a.gather(list.len(), &then);
                    a.sweep(margin, bound, pairs_in(&then)) && {
                        a.emit(list, &then, old);
                        true
                    }
                },
                || {
                    b.gather(list.len(), &now);
                    b.sweep(margin, bound, pairs_in(&now)) && {
                        b.emit(list, &now, new);
                        true
                    }
                },
            );
            return if then_ok && now_ok { Ok(()) } else { Err(Error::TooManyPairs { limit: bound }) };
        }
        // One state after the other, through one buffer of boxes: at this size the
        // boxes are the largest part of the search's scratch.
        a.gather(list.len(), &then);
        a.find(finder)?;
        b.boxes = std::mem::take(&mut a.boxes);
        b.gather(list.len(), &now);
        let found = b.find(finder);
        a.boxes = std::mem::take(&mut b.boxes);
        found?;
        a.emit(list, &then, old);
        b.emit(list, &now, new);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Among;
    use crate::internals::scene::{self, Rng};
    use crate::{brute_force_pairs, Aabb, Broadphase, Config};

    /// The sweep and the finder give the same pairs (as sets), and those of brute force,
    /// on random and adversarial boxes, under margins that grow, keep and shrink.
    fn agree<const D: usize>(boxes: Vec<Aabb<D>>) {
        for margin in [0.0, 0.25, -0.2] {
            let config = Config { margin, ..Config::default() };
            let mut want = brute_force_pairs(&boxes, &config).unwrap();
            want.sort_unstable();
            let mut a = Among::<D> {
                boxes: boxes.clone(),
                at: (0..boxes.len() as u32).collect(),
                ..Default::default()
            };
            assert!(a.sweep(margin, usize::MAX, |_, _| true));
            let mut swept = a.found.clone();
            swept.sort_unstable();
            assert_eq!(swept, want, "sweep, {D}D, margin {margin}");
            let mut finder = Broadphase::new(config).unwrap();
            a.found.clear();
            a.find(&mut finder).unwrap();
            let mut found = a.found.clone();
            found.sort_unstable();
            assert_eq!(found, want, "finder, {D}D, margin {margin}");
        }
    }

    fn adversarial<const D: usize>(seed: u64) -> Vec<Aabb<D>> {
        let mut r = Rng::new(seed);
        let mut v = scene::uniform::<D>(300, seed);
        let unit = Aabb::new([0.0; D], [1.0; D]);
        // Touching faces, identical, zero size, huge, far and tiny boxes.
        v.push(unit);
        v.push(unit);
        v.push(Aabb::new([1.0; D], [2.0; D]));
        v.push(Aabb::new([0.5; D], [0.5; D]));
        v.push(Aabb::new([-1e30; D], [1e30; D]));
        v.push(Aabb::new([f32::MAX / 2.0; D], [f32::MAX; D]));
        for _ in 0..50 {
            let c: [f32; D] = std::array::from_fn(|_| r.range(0.0, 20.0));
            let s = 10f32.powi(r.below(7) as i32 - 4);
            v.push(Aabb::new(c, std::array::from_fn(|k| c[k] + s)));
        }
        v
    }

    #[test]
    fn sweep_and_finder_agree() {
        for seed in 1..4 {
            agree::<2>(adversarial(seed));
            agree::<3>(adversarial(seed));
        }
        agree::<2>(Vec::new());
        agree::<3>(vec![Aabb::new([0.0; 3], [1.0; 3])]);
    }
}
