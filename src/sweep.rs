//! The parallel sweep of the sorted cell entries.
//!
//! - Input: the [`Store`] and its cell entries sorted in pre-order (see `store::Layout`).
//!   Output: one vector of pair keys per chunk, unique across all chunks.
//! - Walk: the entries of one cell form a *run*; the entries right after the run, up to the
//!   first one past the cell's end, are exactly the cells nested in it (its *range*, found
//!   by a galloping search). Aligned cells either nest or are disjoint, and every pair of
//!   overlapping boxes owns a point lying in a cell of each, so testing every run entry
//!   against the rest of its run and its range finds every overlapping pair (Lavrov's
//!   Morton-order method; the seed scans `start < end` the same way).
//! - Crowded runs: testing each of `m` run entries against the run and a range of `r`
//!   entries costs `m(m-1)/2 + m r` tests. When that exceeds `crowded_threshold` tests per
//!   entry involved (a dense clump, many boxes in one cell) the run is swept with
//!   sweep-and-prune instead ([`crate::sap`]): the run against itself, and the run against
//!   its range (bipartite), so a crowded cell never degrades to brute force. A single big
//!   box over many small ones stays a linear scan, which is optimal for one box.
//! - Unique pairs without a dedup: a pair of boxes `A`, `B` may share several cells. It is
//!   reported only from the entry pair whose finer cell holds the *reference point*
//!   `p = max(qlo(A), qlo(B))` (the quantised lower corner of their intersection). `p` lies
//!   in both quantised boxes, so in exactly one cell of each, and those two cells nest:
//!   exactly one entry pair qualifies. The check runs only after the exact test passes.
//!   (The seed instead emits every shared cell and sorts + uniques the pairs.)
//! - Parallel: the entries are cut into chunks at run boundaries; each chunk walks the runs
//!   that start in it and may read past its end. Chunks are cut by position, not by thread,
//!   and every run is handled the same way whoever handles it, so the pairs and the counts
//!   are the same for any thread count.

use crate::config::Refine;
use crate::sap::{self, Sorted};
use crate::store::{Entry, Layout, Store};
use rayon::prelude::*;

/// Ranges longer than this are cut to each box's Morton window before the scan.
const WINDOW_MIN: usize = 8;

/// The low `bits` bits set (all from 64 on).
#[inline(always)]
fn low_bits(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// Counts from one sweep.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SweepCounts {
    pub candidates: usize,
    pub exact_tests: usize,
    pub crowded: usize,
    pub rdc_splits: usize,
}

impl SweepCounts {
    fn add(self, o: Self) -> Self {
        Self {
            candidates: self.candidates + o.candidates,
            exact_tests: self.exact_tests + o.exact_tests,
            crowded: self.crowded + o.crowded,
            rdc_splits: self.rdc_splits + o.rdc_splits,
        }
    }
}

/// Sweeps `entries` (sorted) and returns each chunk's pair keys, in chunk order.
pub(crate) fn sweep<const D: usize, T: Entry>(
    store: &Store<D>,
    entries: &[T],
    crowded_threshold: u32,
    refine: Refine,
) -> (Vec<Vec<u64>>, SweepCounts) {
    let n = entries.len();
    let lay = store.layout;
    // Chunk boundaries by position, each moved forward to the start of a run.
    let chunks = if n < 8192 { 1 } else { (n / 8192).min(rayon::current_num_threads() * 16).max(1) };
    let mut bounds: Vec<usize> = (0..=chunks).map(|c| n * c / chunks).collect();
    for b in bounds.iter_mut().take(chunks).skip(1) {
        while *b < n && *b > 0 && lay.cell(entries[*b].to_u128()) == lay.cell(entries[*b - 1].to_u128()) {
            *b += 1;
        }
    }
    let results: Vec<(Vec<u64>, SweepCounts)> = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let mut w = Walker::new(store, entries, crowded_threshold as u64, refine);
            let (from, to) = (bounds[c], bounds[c + 1].max(bounds[c]));
            w.walk(from, to);
            (w.out, w.counts)
        })
        .collect();
    let counts = results.iter().fold(SweepCounts::default(), |a, r| a.add(r.1));
    (results.into_iter().map(|r| r.0).collect(), counts)
}

/// One chunk's walk state and scratch.
struct Walker<'a, const D: usize, T> {
    store: &'a Store<D>,
    entries: &'a [T],
    lay: Layout,
    threshold: u64,
    refine: Refine,
    out: Vec<u64>,
    /// Scratch of the direct path: survivors of the ownership check, then of the test.
    owners: Vec<u32>,
    /// Scratch of the crowded paths: SAP hits, and the distinct boxes of a range (RDC).
    hits: Vec<(u32, u32)>,
    uniq: Vec<u32>,
    counts: SweepCounts,
    run_set: Sorted<D>,
    range_set: Sorted<D>,
}

impl<'a, const D: usize, T: Entry> Walker<'a, D, T> {
    fn new(store: &'a Store<D>, entries: &'a [T], threshold: u64, refine: Refine) -> Self {
        Self {
            store,
            entries,
            lay: store.layout,
            threshold,
            refine,
            out: Vec::new(),
            owners: Vec::new(),
            hits: Vec::new(),
            uniq: Vec::new(),
            counts: SweepCounts::default(),
            run_set: Sorted::default(),
            range_set: Sorted::default(),
        }
    }

    /// Handles every run starting in `from..to`.
    fn walk(&mut self, from: usize, to: usize) {
        let e = self.entries;
        let mut a = from;
        while a < to {
            let head = e[a].to_u128();
            // Entries of the same cell differ only below the sort bits.
            let run_last = T::from_u128(head | ((1u128 << self.lay.sort_from()) - 1));
            let mut b = a + 1;
            while b < e.len() && e[b] <= run_last {
                b += 1;
            }
            let r = gallop(e, b, T::from_u128(self.lay.last_nested(head)));
            let (m, rr) = ((b - a) as u64, (r - b) as u64);
            let direct = m * (m - 1) / 2 + m * rr;
            if m > 1 && direct > self.threshold * (m + rr) {
                self.crowded(a, b, r);
            } else {
                self.direct(a, b, r);
            }
            a = b;
        }
    }

    /// Each run entry against the rest of the run and the range: the ownership check on
    /// the entry bits first (it drops the other cells of a box that has several in range),
    /// then the exact test.
    fn direct(&mut self, a: usize, b: usize, r: usize) {
        let (st, lay) = (self.store, self.lay);
        let level = lay.level(self.entries[a]);
        // Two entries can own a pair only if on every axis one of them is its box's first
        // cell (`Layout::owns` with both cells equal, or the range cell finer): an entry
        // whose missing first-flags no run entry has cannot pair inside the run. Interior
        // cells of long or big boxes sharing a cell skip their m^2 / 2 candidates this way.
        let all = (1u32 << D) - 1;
        let run_flags = self.entries[a..b].iter().fold(0, |f, &e| f | lay.first(e));
        for x in a..b {
            let sx = lay.id(self.entries[x]) as usize;
            let bx = st.get(sx);
            let ma = self.corner_code(sx);
            // The rest of the run (same cell), then the part of the range that can hold an
            // owner cell for this box.
            let (from, to) = if r - b > WINDOW_MIN { self.window(sx, level, b, r) } else { (b, r) };
            let fx = lay.first(self.entries[x]);
            let rest = if fx | run_flags == all { &self.entries[x + 1..b] } else { &[][..] };
            let range = &self.entries[from..to];
            self.counts.candidates += rest.len() + range.len();
            // PERF: branch-free compaction. About one candidate in six passes the ownership
            // check and about half of those the exact test, so branching on either would
            // mispredict often; survivors are collected by index arithmetic instead. The gain
            // is not yet shown above the machine's noise (docs/BENCHMARKS.md).
            let owners = &mut self.owners;
            let need = rest.len() + range.len();
            if owners.len() < need {
                owners.resize(need, 0); // grows, never shrinks: no clearing per entry
            }
            let mut n = 0;
            for &ey in rest.iter().chain(range) {
                owners[n] = lay.id(ey);
                n += lay.owns::<D, T>(ey, ma) as usize;
            }
            self.counts.exact_tests += n;
            let ox = st.orig[sx];
            self.out.reserve(n);
            let mut k = 0;
            for i in 0..n {
                let sy = owners[i] as usize;
                owners[k] = st.orig[sy];
                k += bx.overlaps(&st.get(sy)) as usize;
            }
            self.out.extend(owners[..k].iter().map(|&oy| crate::pairs::key(ox, oy)));
        }
    }

    /// The sub-range of `b..r` (entries nested in a level-`level` cell of box `s`) whose
    /// cells may own a pair with box `s`. An owner cell holds `p = max(qlo(A), qlo(B))`, so
    /// its start lies between `qlo(A)` aligned down to its level (at most `level - 1`, as
    /// range cells are strictly finer) and `qhi(A)` on every axis. Morton order is monotone
    /// in each coordinate, so the starts lie between the codes of those two corners: two
    /// binary searches cut the range, typically to a half or a quarter for big boxes.
    fn window(&self, s: usize, level: u32, b: usize, r: usize) -> (usize, usize) {
        let lay = self.lay;
        let shift = D as u32 * lay.l_min;
        let lo_abs = self.store.corner[s] & !low_bits(D as u32 * level.saturating_sub(1));
        let qhi: [u32; D] = std::array::from_fn(|k| self.store.quant.coord(k, self.store.hi[k][s]));
        let hi_abs = crate::morton::encode(qhi);
        let (lo, hi) = (lo_abs.checked_shr(shift).unwrap_or(0), hi_abs.checked_shr(shift).unwrap_or(0));
        // Smallest entry value with start >= lo; smallest with start > hi.
        let first = T::from_u128(lay.pack(lo, lay.l_max, 0, 0));
        let e = &self.entries[b..r];
        let from = b + e.partition_point(|&v| v < first);
        let to = match hi.checked_add(1).map(|h| lay.pack(h, lay.l_max, 0, 0)) {
            Some(v) if lay.bits() <= T::BITS || v < (1u128 << lay.bits()) => {
                let past = T::from_u128(v);
                b + e.partition_point(|&v| v < past)
            }
            _ => r,
        };
        (from, to.max(from))
    }

    /// Shifted Morton code of store box `s`'s quantised lower corner (see `Layout::owns`).
    #[inline(always)]
    fn corner_code(&self, s: usize) -> u64 {
        // checked: in 2D, l_min may be 32 (a scene of identical or point boxes).
        self.store.corner[s].checked_shr(D as u32 * self.lay.l_min).unwrap_or(0)
    }

    /// Sweep-and-prune: the run against itself, then the run against its range.
    fn crowded(&mut self, a: usize, b: usize, r: usize) {
        self.counts.crowded += 1;
        // A cell no bigger than RDC's `min_group_size` would be one final group: sweep it.
        if self.refine == Refine::Rdc && r - a > crate::rdc::Rdc::<D>::default().min_group_size {
            // RDC over the run and the distinct boxes of its range together; inside each
            // final group only pairs with a run entry are offered, each once (range x range
            // pairs belong to the ranges' own runs). Run x run hits go through `report`; a
            // run x range hit is this run's iff `owns(run entry, corner of the range box)`,
            // as in the sweep-and-prune path below.
            let (st, lay, e, m) = (self.store, self.lay, self.entries, b - a);
            let mut uniq = std::mem::take(&mut self.uniq);
            uniq.clear();
            uniq.extend(e[b..r].iter().map(|&ey| lay.id(ey)));
            uniq.sort_unstable();
            uniq.dedup();
            let boxes = e[a..b].iter().map(|&ex| lay.id(ex)).chain(uniq.iter().copied());
            let (splits, tests) = crate::rdc::refine_cell(boxes.map(|s| st.get(s as usize)), m, |x, y| {
                if y < m {
                    self.report(a + x, a + y);
                } else {
                    self.report_range(a + x, uniq[y - m] as usize);
                }
            });
            self.uniq = uniq;
            self.counts.rdc_splits += splits;
            self.counts.candidates += tests;
            self.counts.exact_tests += tests;
            return;
        }
        // The run against itself, then against the *distinct boxes* of its range: a box
        // with several cells in the range is swept once. A hit (A in the run, B in range) is
        // this run's iff the reference point lies in the run's cell, which is exactly
        // `owns(run entry of A, corner of B)` (the same check with the roles swapped: A's
        // cell here is the coarser one, and it holds p iff B's owner cell is nested in it).
        let (st, lay) = (self.store, self.lay);
        let mut run = std::mem::take(&mut self.run_set);
        let mut range = std::mem::take(&mut self.range_set);
        let axis = sap::best_axis(self.entries[a..r].iter().map(|&e| st.get(lay.id(e) as usize)));
        run.set_axis(axis);
        range.set_axis(axis);
        for x in a..b {
            run.push(st.get(lay.id(self.entries[x]) as usize), x as u32);
        }
        for &ey in &self.entries[b..r] {
            let sy = lay.id(ey);
            range.push(st.get(sy as usize), sy);
        }
        run.sort();
        range.sort_unique();
        let mut hits = std::mem::take(&mut self.hits);
        hits.clear();
        let mut tested =
            sap::complete(&run, 0..run.len(), |i, j| hits.push((run.payload[i], run.payload[j])));
        for (x, y) in hits.drain(..) {
            self.report(x as usize, y as usize);
        }
        tested += sap::bipartite(&run, &range, |i, j| hits.push((run.payload[i], range.payload[j])));
        for &(x, sy) in &hits {
            self.report_range(x as usize, sy as usize);
        }
        self.hits = hits;
        self.counts.candidates += tested;
        self.counts.exact_tests += tested;
        self.run_set = run;
        self.range_set = range;
    }

    /// Run entry `x` and store box `sy` (a distinct box of the run's range) overlap: the
    /// pair is this run's iff the reference point lies in the run's cell, which is
    /// `owns(run entry, corner of sy)` with the roles swapped (see `crowded`).
    #[inline]
    fn report_range(&mut self, x: usize, sy: usize) {
        let ex = self.entries[x];
        if self.lay.owns::<D, T>(ex, self.corner_code(sy)) {
            let st = self.store;
            self.out.push(crate::pairs::key(st.orig[self.lay.id(ex) as usize], st.orig[sy]));
        }
    }

    /// Entries `x` (run) and `y` (run or range, so the finer or equal cell) hold
    /// overlapping boxes: keep the pair if this entry pair owns it, see the module header.
    #[inline]
    fn report(&mut self, x: usize, y: usize) {
        let (ex, ey) = (self.entries[x], self.entries[y]);
        let lay = self.lay;
        let (sx, sy) = (lay.id(ex) as usize, lay.id(ey) as usize);
        debug_assert!(lay.level(ey) <= lay.level(ex));
        if lay.owns::<D, T>(ey, self.corner_code(sx)) {
            self.out.push(crate::pairs::key(self.store.orig[sx], self.store.orig[sy]));
        }
    }
}

/// The first index `>= from` whose entry is greater than `last` (entries sorted):
/// exponential then binary search, so a short range costs a compare or two.
fn gallop<T: Entry>(e: &[T], from: usize, last: T) -> usize {
    let mut lo = from;
    let mut step = 1;
    while lo + step <= e.len() && e[lo + step - 1] <= last {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(e.len());
    lo + e[lo..hi].partition_point(|&v| v <= last)
}
