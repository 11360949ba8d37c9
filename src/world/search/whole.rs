//! The whole-frame search: where most objects changed (a first update, a level loaded),
//! or where the frames before show the walks costing more (`cost`), every pair the rule
//! makes now, from the one-shot finder, against every stored pair.
//!
//! - Input: the store, the slots, the changed list and its snapshots, the pair store.
//!   Output: `old` (every stored pair, named as of the last update) and `new` (every
//!   pair now), neither sorted; their difference is the events, as from the walks.
//! - Stages: the stored pairs named, shard by shard in parallel; the live boxes gathered,
//!   dynamic ones first (`gather_live`: counted a chunk of slots at a time, then written
//!   in parallel where the counts put them); the pairs among the dynamic boxes
//!   (`find_pairs`) and a join of the static ones against them: walks of the static
//!   tree by blocks of dynamic boxes where no static object changed since its build
//!   (then the static boxes are not gathered), else `find_pairs_between`. Static pairs
//!   are never searched. The pairs found named, in parallel where no object has a filter.
//! - Cost: one one-shot search of the dynamic boxes and one join, O(n) for the gather.
//! - Threads: every stage on the caller's pool but the naming where filters are set.
//! - Allocation: the gather buffers, kept where the cost model chose the frame (it may,
//!   frame after frame), given back after a frame where most objects changed. The join
//!   against the static tree allocates its per-chunk pair keys each frame and gives them
//!   back (kept, they would add a pair list's bytes to the tree for good).
//! - Source: this crate (the finder's own stages: Morton cells, sweeps, the join).

use super::{is_whole, pair, Search, NONE};
use crate::kernels::pair_sort::PairBudget;
use crate::par::prelude::*;
use crate::time::Instant;
use crate::world::pairs::PairStore;
use crate::world::store::{pairable, Store};
use crate::world::{dirty::Dirty, handle::Slots, Handle};
use crate::{Aabb, Broadphase, Error};

/// Slots a task of `gather_live` reads.
const GATHER_CHUNK: usize = 1 << 14;

impl<const D: usize> Search<D> {
    /// The search where most objects changed (a first update, a level loaded): every
    /// stored pair into `old`, and every pair the rule makes now, from one `Broadphase`
    /// run over every live box, into `new`. Their difference is the events, as from the
    /// walks, at the cost of one frame from scratch. The trees are kept up to date all the
    /// same ([`Search::upkeep`], already run), for the frames after.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn whole(
        &mut self,
        slots: &Slots,
        store: &Store<D>,
        changed: &Dirty,
        pairs: &PairStore,
        finder: &mut Broadphase<D>,
        old: &mut Vec<[Handle; 2]>,
        new: &mut Vec<[Handle; 2]>,
    ) -> Result<(), Error> {
        let t = Instant::now();
        let sc = &mut self.scratch;
        // No object moves (a level, a map for lookups): no pair can be, and every stored
        // one ended (its last moving member was removed or made static).
        if store.moving == 0 {
            self.times.searched = false;
            if pairs.len() == 0 {
                return Ok(());
            }
        }
        // Each changed slot's position in the changed list, for its old generation.
        sc.gather_slots.clear();
        sc.gather_slots.resize(store.len(), NONE);
        for (i, &s) in changed.list().iter().enumerate() {
            sc.gather_slots[s as usize] = i as u32;
        }
        let generation_then = |s: u32| match sc.gather_slots[s as usize] {
            NONE => slots.generations[s as usize],
            i => store.before[i as usize].generation,
        };
        old.try_reserve(pairs.len()).map_err(|_| Error::OutOfMemory { pairs: pairs.len() })?;
        old.par_extend(pairs.par_keys().flat_map_iter(|shard| {
            shard.iter().map(|&k| {
                let (a, b) = crate::world::pairs::slots_of(k);
                [Handle::new(a, generation_then(a)), Handle::new(b, generation_then(b))]
            })
        }));
        if store.moving == 0 {
            self.times.serial += t.elapsed();
            return Ok(());
        }
        // Pairs among the dynamic objects, then a join of the static ones against them.
        // Static pairs are never searched (a level's overlapping tiles would count against
        // the pair bound, and cost). PERF: benches/regimes.rs (`build`, `fall`,
        // `fast_100`).
        let mut serial = t.elapsed();
        // Where no static object changed since the static tree was built (and the margin
        // is not negative: the tree's leaves are grown by zero then), the join walks that
        // tree, and only the dynamic boxes are gathered: a level's boxes are not copied
        // (24 bytes an object kept, or allocated each frame, where the cost model takes
        // whole frames one after another).
        let margin = finder.config().margin;
        let by_tree = self.statics.settled() && margin >= 0.0;
        gather_live(slots, store, !by_tree, &mut sc.gather_counts, &mut sc.gather, &mut sc.gather_ids);
        let (dynamics, statics) = sc.gather.split_at(store.moving);
        let ids = &sc.gather_ids;
        let mut emit = |found: &[[u32; 2]],
                        slots_of: &(dyn Fn([u32; 2]) -> (u32, u32) + Sync)|
         -> Result<(), Error> {
            new.try_reserve(found.len()).map_err(|_| Error::OutOfMemory { pairs: found.len() })?;
            let name =
                |(a, b): (u32, u32)| pair(a, slots.generations[a as usize], b, slots.generations[b as usize]);
            if store.filtered == 0 && store.kinematics == 0 {
                // Every pair found has a dynamic member, and every filter is the default:
                // each is kept, so they are named in parallel, in order.
                new.par_extend(found.par_iter().map(|&p| name(slots_of(p))));
                return Ok(());
            }
            let t = Instant::now();
            for &p in found {
                let (a, b) = slots_of(p);
                let (ai, bi) = (a as usize, b as usize);
                if pairable(store.kinds[ai], store.filter(ai), store.kinds[bi], store.filter(bi)) {
                    new.push(name((a, b)));
                }
            }
            serial += t.elapsed();
            Ok(())
        };
        finder.find_pairs(dynamics, &mut sc.gather_found)?;
        emit(&sc.gather_found, &|[i, j]| (ids[i as usize], ids[j as usize]))?;
        if by_tree {
            // The tree's ids are slots; the dynamic boxes' ids follow every slot's.
            let n = store.len() as u32;
            let budget = PairBudget::new(finder.config().max_pairs);
            let tree = self.statics.tree_mut();
            let (ids_n, found) = (store.len() + dynamics.len(), &mut sc.gather_found);
            tree.pairs_against(dynamics, margin, [0, n], ids_n, &budget, found);
            tree.release_join_buffers();
            budget.verdict()?;
            emit(&sc.gather_found, &|[s, j]| (s, ids[(j - n) as usize]))?;
        } else {
            finder.find_pairs_between(dynamics, statics, &mut sc.gather_found)?;
            let d = dynamics.len();
            emit(&sc.gather_found, &|[i, j]| (ids[i as usize], ids[d + j as usize]))?;
        }
        // Sized by every live object and every pair: given back after a frame where most
        // objects changed (a first update, a level loaded), as the frames after need them
        // at the size of what changes; kept where the cost model chose the whole frame,
        // which it may do frame after frame.
        if is_whole(changed.list().len(), slots.live) {
            sc.give_back_whole();
        }
        self.times.serial += serial;
        Ok(())
    }
}

/// The boxes and slots of every live object into `boxes` and `ids`: the dynamic ones,
/// then the static ones, each in slot order. A count per chunk of [`GATHER_CHUNK`] slots
/// (in `counts`, kept), then each chunk writes its own objects where the counts before it
/// put them, the chunks split in halves by `rayon::join`. The same output for any thread
/// count; nothing allocated where the buffers hold as many as last time.
fn gather_live<const D: usize>(
    slots: &Slots,
    store: &Store<D>,
    with_statics: bool,
    counts: &mut Vec<[usize; 2]>,
    boxes: &mut Vec<Aabb<D>>,
    ids: &mut Vec<u32>,
) {
    let n = store.len();
    // Group 0: the moving objects (dynamic and kinematic); group 1: the static ones.
    let is = |s: usize, k: usize| slots.alive[s] && store.kinds[s].moves() == (k == 0);
    counts.clear();
    counts.resize(n.div_ceil(GATHER_CHUNK), [0; 2]);
    counts.par_iter_mut().enumerate().for_each(|(c, count)| {
        for s in c * GATHER_CHUNK..((c + 1) * GATHER_CHUNK).min(n) {
            count[0] += is(s, 0) as usize;
            count[1] += (with_statics && is(s, 1)) as usize;
        }
    });
    let (dynamics, statics) = counts.iter().fold((0, 0), |(d, s), c| (d + c[0], s + c[1]));
    let zero = Aabb { min: [0.0; D], max: [0.0; D] };
    boxes.resize(dynamics + statics, zero);
    ids.resize(dynamics + statics, 0);
    let (dyn_boxes, st_boxes) = boxes.split_at_mut(dynamics);
    let (dyn_ids, st_ids) = ids.split_at_mut(dynamics);
    let out = Out { boxes: [dyn_boxes, st_boxes], ids: [dyn_ids, st_ids] };
    fill(0..counts.len(), counts, out, &|c, out: Out<'_, D>| {
        let mut at = [0usize; 2];
        for s in c * GATHER_CHUNK..((c + 1) * GATHER_CHUNK).min(n) {
            if !slots.alive[s] {
                continue;
            }
            let k = !store.kinds[s].moves() as usize;
            if k == 0 || with_statics {
                out.boxes[k][at[k]] = store.boxes[s];
                out.ids[k][at[k]] = s as u32;
                at[k] += 1;
            }
        }
    });
}

/// A range of chunks' share of the gather's output: their dynamic and static boxes and
/// slots.
struct Out<'a, const D: usize> {
    boxes: [&'a mut [Aabb<D>]; 2],
    ids: [&'a mut [u32]; 2],
}

/// Chunks `range` write their objects into `out` (exactly their share), halves in
/// parallel.
fn fill<const D: usize>(
    range: std::ops::Range<usize>,
    counts: &[[usize; 2]],
    out: Out<'_, D>,
    write: &(impl Fn(usize, Out<'_, D>) + Sync),
) {
    if range.len() <= 1 {
        if let Some(c) = range.clone().next() {
            write(c, out);
        }
        return;
    }
    let mid = range.start + range.len() / 2;
    let left = counts[range.start..mid].iter().fold([0, 0], |a, c| [a[0] + c[0], a[1] + c[1]]);
    let Out { boxes: [db, sb], ids: [di, si] } = out;
    let (db0, db1) = db.split_at_mut(left[0]);
    let (sb0, sb1) = sb.split_at_mut(left[1]);
    let (di0, di1) = di.split_at_mut(left[0]);
    let (si0, si1) = si.split_at_mut(left[1]);
    crate::par::join(
        || fill(range.start..mid, counts, Out { boxes: [db0, sb0], ids: [di0, si0] }, write),
        || fill(mid..range.end, counts, Out { boxes: [db1, sb1], ids: [di1, si1] }, write),
    );
}
