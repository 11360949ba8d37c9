//! RDC's kernel: split one cluster on one axis ([`Kernel::split`]), and the two drivers
//! around it: [`Kernel::drive`] (one explicit stack) and [`Kernel::run_parallel`] (big
//! clusters as tasks of one scope, each task a `drive`).
//!
//! - Input: records (boxes with the margin applied, with their index), permuted in place.
//!   Output: the final groups as buffer ranges, to a callback.
//! - Cost, parallel, allocation: see the module above (`rdc`).
//! - Source: S. Rabin, "Recursive Dimensional Clustering: A Fast Algorithm for Collision
//!   Detection", Game Programming Gems 2 (2001).

use super::Rec;
use crate::algorithms::sap;
use crate::par::prelude::*;
use std::sync::Mutex;

/// Clusters with at least this many members are handed to their own rayon task.
const PAR_CLUSTER: usize = 2048;
/// Splits of at least this many members build and write back their keys in parallel (the
/// radix sort itself goes parallel at the same size).
const PAR_KEYS: usize = 1 << 15;
/// Clusters with fewer members are sorted with `sort_unstable` (the radix sort's own
/// small-input path sorts by a masked wide key, slower at this size).
const SORT_SMALL: usize = 256;

/// One cluster waiting to be analysed.
pub(super) struct Item<'m, const D: usize> {
    /// Its members: a disjoint piece of the record buffer, permuted in place.
    pub(super) recs: &'m mut [Rec<D>],
    /// Where that piece starts in the buffer (so groups can be put back in buffer order).
    pub(super) at: usize,
    /// Position in `axis_order` of the axis to try next.
    pub(super) next: usize,
    /// Axes tried in a row on exactly these members without splitting them.
    /// INVARIANT: `tried == D` means no axis splits the cluster.
    pub(super) tried: usize,
    /// The axis `recs` are sorted on by lower bound, if any (every cluster but the first
    /// is: it is a piece of a sorted slice, or was just sorted and left whole).
    pub(super) sorted_on: Option<usize>,
}

/// Working memory of one task: sort keys, radix scratch, gathered records, cut positions.
pub(super) struct Scratch<const D: usize> {
    keys: Vec<u64>,
    tmp: Vec<u64>,
    gather: Vec<Rec<D>>,
    cuts: Vec<usize>,
}

impl<const D: usize> Default for Scratch<D> {
    fn default() -> Self {
        Self { keys: Vec::new(), tmp: Vec::new(), gather: Vec::new(), cuts: Vec::new() }
    }
}

/// What one task of [`Kernel::run_parallel`] works with: its split scratch, its count of
/// splits, and what it collects (`C`). A task takes one from the driver's pool when it
/// starts and puts it back when it ends, so the pool holds as many as ran at once, and a
/// pool kept by the caller makes later calls allocate nothing here.
pub(super) struct Task<const D: usize, C> {
    pub(super) s: Scratch<D>,
    pub(super) splits: usize,
    pub(super) c: C,
}

impl<const D: usize, C: Default> Default for Task<D, C> {
    fn default() -> Self {
        Self { s: Scratch::default(), splits: 0, c: C::default() }
    }
}

/// The tasks' state of one parallel run (see [`Task`]).
pub(super) type Pool<const D: usize, C> = Mutex<Vec<Task<D, C>>>;

/// The settings as the kernel sees them.
pub(super) struct Kernel<const D: usize> {
    pub(super) min_group: usize,
    pub(super) axes: [usize; D],
}

impl<const D: usize> Kernel<D> {
    /// Sorts `r` by lower bound on `axis` and fills `s.cuts` with the positions where a new
    /// piece starts (empty: the axis does not split `r`). `r` is not empty.
    fn split(&self, r: &mut [Rec<D>], axis: usize, s: &mut Scratch<D>) {
        let big = r.len() >= PAR_KEYS;
        // Key layout (u64): [ flip(min) : 32 ][ position in `r` : 32 ]. `+ 0.0` turns -0.0
        // into +0.0, which `flip` would otherwise order below +0.0 although they are equal.
        let key = |(i, x): (usize, &Rec<D>)| (sap::flip(x.b.min[axis] + 0.0) as u64) << 32 | i as u64;
        if big {
            r.par_iter().enumerate().map(key).collect_into_vec(&mut s.keys);
        } else {
            s.keys.clear();
            s.keys.extend(r.iter().enumerate().map(key));
        }
        if r.len() < SORT_SMALL {
            // PERF: keys are unique (the position is in them), so an unstable sort of whole
            // keys gives exactly the order of the stable radix sort.
            s.keys.sort_unstable();
        } else {
            crate::kernels::radix_sort::sort(&mut s.keys, &mut s.tmp, 32..64);
        }
        let src = &*r;
        if big {
            s.keys.par_iter().map(|&k| src[k as u32 as usize]).collect_into_vec(&mut s.gather);
            r.par_chunks_mut(1 << 14)
                .zip(s.gather.par_chunks(1 << 14))
                .for_each(|(d, g)| d.copy_from_slice(g));
        } else {
            s.gather.clear();
            s.gather.extend(s.keys.iter().map(|&k| src[k as u32 as usize]));
            r.copy_from_slice(&s.gather);
        }
        // Cut where the next box starts strictly after the reach (running maximum of the
        // upper bounds): equal to the chapter's open/close count returning to zero with opens
        // sorted before closes at equal positions.
        s.cuts.clear();
        let mut reach = r[0].b.max[axis];
        for (i, x) in r.iter().enumerate().skip(1) {
            if x.b.min[axis] > reach {
                s.cuts.push(i);
            }
            reach = reach.max(x.b.max[axis]);
        }
    }

    /// The kernel: analyses `first` and every piece it splits into, until each is final.
    /// `hand_off` may take a piece away (to run it elsewhere) by returning `None`;
    /// `on_final(recs, at, sorted_on)` receives each final group and returns whether to go
    /// on (false: the rest is dropped unanalysed). Adds one to `splits` per cluster split.
    /// Iterative (explicit stack): a deep peeling recursion cannot overflow.
    pub(super) fn drive<'m>(
        &self,
        first: Item<'m, D>,
        s: &mut Scratch<D>,
        splits: &mut usize,
        mut hand_off: impl FnMut(Item<'m, D>) -> Option<Item<'m, D>>,
        mut on_final: impl FnMut(&'m [Rec<D>], usize, Option<usize>) -> bool,
    ) {
        let mut stack = vec![first];
        while let Some(mut it) = stack.pop() {
            loop {
                if it.recs.len() <= self.min_group || it.tried >= D {
                    if !on_final(it.recs, it.at, it.sorted_on) {
                        return;
                    }
                    break;
                }
                let axis = self.axes[it.next];
                it.next = (it.next + 1) % D;
                self.split(it.recs, axis, s);
                it.sorted_on = Some(axis);
                if s.cuts.is_empty() {
                    it.tried += 1;
                    continue;
                }
                *splits += 1;
                // Each piece is one connected run on `axis`, so `axis` counts as tried.
                let (mut rest, mut at, mut prev) = (it.recs, it.at, 0);
                let len = rest.len();
                for c in s.cuts.iter().copied().chain([len]) {
                    let (head, tail) = std::mem::take(&mut rest).split_at_mut(c - prev);
                    let piece = Item { recs: head, at, next: it.next, tried: 1, sorted_on: Some(axis) };
                    if let Some(p) = hand_off(piece) {
                        stack.push(p);
                    }
                    (rest, at, prev) = (tail, at + c - prev, c);
                }
                break;
            }
        }
    }

    /// The parallel driver: clusters of at least `PAR_CLUSTER` members become tasks of one
    /// `rayon::scope` (spawned, not joined, so no stack grows with the recursion), each a
    /// [`Kernel::drive`] with a [`Task`] from `pool`; `on_final(c, recs, at, sorted_on)`
    /// receives each final group with the collection of the task that found it, and
    /// returns whether that task goes on. Which task finds a group depends on the
    /// scheduling; the groups themselves do not.
    pub(super) fn run_parallel<C, F>(&self, recs: &mut [Rec<D>], pool: &Pool<D, C>, on_final: &F)
    where
        C: Default + Send,
        F: Fn(&mut C, &[Rec<D>], usize, Option<usize>) -> bool + Sync,
    {
        if !recs.is_empty() {
            let first = Item { recs, at: 0, next: 0, tried: 0, sorted_on: None };
            crate::par::scope(|sc| self.task(sc, first, pool, on_final));
        }
    }

    /// One task of [`Kernel::run_parallel`].
    fn task<'s, C, F>(
        &'s self,
        sc: &crate::par::Scope<'s>,
        first: Item<'s, D>,
        pool: &'s Pool<D, C>,
        on_final: &'s F,
    ) where
        C: Default + Send,
        F: Fn(&mut C, &[Rec<D>], usize, Option<usize>) -> bool + Sync,
    {
        let mut t = pool.lock().unwrap_or_else(|e| e.into_inner()).pop().unwrap_or_default();
        let hand_off = |it: Item<'s, D>| {
            if it.recs.len() >= PAR_CLUSTER {
                sc.spawn(move |sc| self.task(sc, it, pool, on_final));
                None
            } else {
                Some(it)
            }
        };
        let c = &mut t.c;
        self.drive(first, &mut t.s, &mut t.splits, hand_off, |g, at, sorted_on| {
            on_final(c, g, at, sorted_on)
        });
        pool.lock().unwrap_or_else(|e| e.into_inner()).push(t);
    }
}
