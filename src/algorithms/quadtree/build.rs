//! Building the tree: a node key a box, a radix sort, the nodes' boxes sorted and cut into
//! records, the gather of the boxes into structure-of-arrays order, and each record's
//! bounds.
//!
//! - Input: boxes, the margin, grid bounds. Output: the [`Quadtree`]'s keys, boxes and
//!   records (see its invariants).
//! - Cost: O(n) for the keys, the records, the gather and the bounds; a stable radix sort of
//!   [`key_bits`] bits; two comparison sorts of each node of at least
//!   [`SORT_MIN`] boxes.
//! - Parallel: every pass over fixed chunks (`kernels::par::chunk_len`); the records in
//!   two passes (count a chunk, then write from the prefix); the big nodes' sorts as
//!   tasks.
//! - Allocation: none beyond the tree's kept buffers (grown, never shrunk).
//! - Source: this crate (module docs of `quadtree`).

use super::pairs::first_at_least;
use super::{
    code_shift, coord, depth, grid, key_bits, node_key, split, Quadtree, LONG, PAD, PART, SORT_MIN, UNSORTED,
};
use crate::algorithms::sap::flip;
use crate::kernels::morton::Quantizer;
use crate::kernels::par::{chunk_len, grow_to, SendPtr};
use crate::par::prelude::*;
use crate::Aabb;

impl<const D: usize> Quadtree<D> {
    /// Rebuilds the tree over the live boxes of `boxes`, each grown by `margin`, on a grid
    /// over `bounds` (clamped to finite values; anything not a box, such as the
    /// `+inf..-inf` of a scan that saw no live box, makes a grid of one cell).
    pub(crate) fn build(&mut self, boxes: &[Aabb<D>], margin: f32, bounds: Aabb<D>) {
        let ok = (0..D).all(|k| bounds.min[k] <= bounds.max[k]);
        let (lo, hi) = if ok {
            (bounds.min.map(|x| x.max(f32::MIN)), bounds.max.map(|x| x.min(f32::MAX)))
        } else {
            ([0.0; D], [0.0; D])
        };
        self.quant = Quantizer::new(lo, hi);
        self.write_keys(boxes, margin);
        self.find_groups();
        self.sort_groups(boxes, margin);
        self.write_records();
        self.gather(boxes, margin);
        self.bound_records();
    }

    /// One key a box (dead ones all ones), sorted on the node bits, dead ones cut off.
    fn write_keys(&mut self, boxes: &[Aabb<D>], margin: f32) {
        let n = boxes.len();
        grow_to(&mut self.keys, n);
        let chunk = chunk_len(n);
        let quant = self.quant;
        let keys = SendPtr(self.keys.as_mut_ptr());
        let dead: usize = boxes
            .par_chunks(chunk)
            .enumerate()
            .map(|(c, part)| {
                crate::kernels::simd::fast(
                    #[inline(always)]
                    || {
                        let mut dead = 0;
                        for (j, b) in part.iter().enumerate() {
                            let g = b.grown(margin);
                            let i = c * chunk + j;
                            let key = if g.is_inverted() {
                                dead += 1;
                                u64::MAX
                            } else {
                                (node_key::<D>(grid(&quant, &g.min), grid(&quant, &g.max)) as u64) << 32
                                    | i as u64
                            };
                            // SAFETY: chunk `c` writes positions `c * chunk..` of its own
                            // boxes only, and `keys` has length `n` (grow_to).
                            unsafe { keys.put(i, key) };
                        }
                        dead
                    },
                )
            })
            .sum();
        crate::kernels::radix_sort::sort(&mut self.keys, &mut self.scratch, 32..32 + key_bits(D));
        self.keys.truncate(n - dead);
    }

    /// The groups: a group of positions wherever the key's node bits change (`group`, one
    /// more entry than groups, ending at the live count).
    fn find_groups(&mut self) {
        let n = self.keys.len();
        let chunk = chunk_len(n);
        let keys = &self.keys;
        let first = |p: usize| p == 0 || keys[p] >> 32 != keys[p - 1] >> 32;
        grow_to(&mut self.chunk_sums, n.div_ceil(chunk));
        self.chunk_sums.par_iter_mut().enumerate().for_each(|(c, count)| {
            *count = (c * chunk..((c + 1) * chunk).min(n)).filter(|&p| first(p)).count();
        });
        let total = prefix(&mut self.chunk_sums);
        grow_to(&mut self.group, total + 1);
        let group = SendPtr(self.group.as_mut_ptr());
        self.chunk_sums.par_iter().enumerate().for_each(|(c, &at)| {
            for (i, p) in (c * chunk..((c + 1) * chunk).min(n)).filter(|&p| first(p)).enumerate() {
                // SAFETY: chunk `c` writes the slots from its prefix `at` on, one a group
                // starting in it: the prefix sums of the counts the same test made, so the
                // chunks' slots partition `0..total`, and `group` has `total + 1`.
                unsafe { group.put(at + i, p as u32) };
            }
        });
        self.group[total] = n as u32;
    }

    /// Sorts every group of at least [`SORT_MIN`] boxes and cuts it into records: its boxes
    /// at most [`LONG`] times the group's mean extent along its sort axis first, as
    /// [`plan_group`] cuts them, then the longer ones (a plank among crates) in one record
    /// with an axis of its own, so that they widen no other record's window. Per group:
    /// `parts_of` (records of the first kind), `long_of` (boxes of the second), `gaxis`
    /// (both sort axes). The radix scratch holds the sort keys.
    fn sort_groups(&mut self, boxes: &[Aabb<D>], margin: f32) {
        let n = self.keys.len();
        let groups = self.group.len() - 1;
        grow_to(&mut self.scratch, n);
        grow_to(&mut self.parts_of, groups);
        grow_to(&mut self.long_of, groups);
        grow_to(&mut self.gaxis, groups);
        let keys = SendPtr(self.keys.as_mut_ptr());
        let scratch = SendPtr(self.scratch.as_mut_ptr());
        let group = &self.group;
        self.parts_of
            .par_iter_mut()
            .zip(self.long_of.par_iter_mut())
            .zip(self.gaxis.par_iter_mut())
            .enumerate()
            .with_min_len(256)
            .for_each(|(g, ((parts, long), axis))| {
                let (s, e) = (group[g] as usize, group[g + 1] as usize);
                let m = e - s;
                if m < SORT_MIN {
                    (*parts, *long, *axis) = (1, 0, [UNSORTED; 2]);
                    return;
                }
                // (Whole, so that the closure captures the `Sync` wrappers, not their
                // pointers.)
                let (keys, scratch) = (keys, scratch);
                // SAFETY: groups' position ranges are disjoint, and each task touches only its
                // group's range of `keys` and `scratch` (both of length `n >= e`).
                let (keys, tmp) = unsafe {
                    (
                        std::slice::from_raw_parts_mut(keys.0.add(s), m),
                        std::slice::from_raw_parts_mut(scratch.0.add(s), m),
                    )
                };
                let grown = |k: u64| boxes[k as u32 as usize].grown(margin);
                let node = keys[0] >> 32 << 32;
                let sort_on = |keys: &mut [u64], tmp: &mut [u64], axis: usize| {
                    for (t, &k) in tmp.iter_mut().zip(keys.iter()) {
                        *t = (flip(grown(k).min[axis]) as u64) << 32 | k as u32 as u64;
                    }
                    tmp.sort_unstable();
                    for (k, &t) in keys.iter_mut().zip(tmp.iter()) {
                        *k = node | t as u32 as u64;
                    }
                };
                // The long boxes to the end (in order, the others before them in order).
                let (a, _, _, mean) = plan_group(keys.iter().map(|&k| grown(k)), m);
                let is_long = |k: u64| {
                    let b = grown(k);
                    b.max[a] as f64 - b.min[a] as f64 > LONG * mean
                };
                let short = keys.iter().filter(|&&k| !is_long(k)).count();
                if short < m {
                    let (mut x, mut y) = (0, short);
                    for &k in keys.iter() {
                        if is_long(k) {
                            tmp[y] = k;
                            y += 1;
                        } else {
                            tmp[x] = k;
                            x += 1;
                        }
                    }
                    keys.copy_from_slice(tmp);
                }
                let (rest, tail) = keys.split_at_mut(short);
                let (tmp, tmp_tail) = tmp.split_at_mut(short);
                let (a, cut, count, _) = plan_group(rest.iter().map(|&k| grown(k)), short);
                if count > 1 {
                    sort_on(rest, tmp, cut);
                }
                let len = short.div_ceil(count);
                let count = short.div_ceil(len);
                for (k, t) in rest.chunks_mut(len).zip(tmp.chunks_mut(len)) {
                    sort_on(k, t, a);
                }
                let mut la = UNSORTED;
                if !tail.is_empty() {
                    la = plan_group(tail.iter().map(|&k| grown(k)), tail.len()).0 as u8;
                    sort_on(tail, tmp_tail, la as usize);
                }
                (*parts, *long, *axis) = (count as u32, (m - short) as u32, [a as u8, la]);
            });
    }

    /// The records: each group's `parts_of` records of equal length (the last shorter) with
    /// its first sort axis, then, if it has long boxes, one record of them with the second.
    fn write_records(&mut self) {
        let groups = self.group.len() - 1;
        let chunk = chunk_len(groups);
        let (parts, long) = (&self.parts_of, &self.long_of);
        let records = |g: usize| parts[g] as usize + (long[g] > 0) as usize;
        grow_to(&mut self.chunk_sums, groups.div_ceil(chunk));
        self.chunk_sums.par_iter_mut().enumerate().for_each(|(c, sum)| {
            *sum = (c * chunk..((c + 1) * chunk).min(groups)).map(records).sum();
        });
        let total = prefix(&mut self.chunk_sums);
        grow_to(&mut self.nodes, total);
        grow_to(&mut self.starts, total + 1);
        grow_to(&mut self.axes, total);
        let nodes = SendPtr(self.nodes.as_mut_ptr());
        let starts = SendPtr(self.starts.as_mut_ptr());
        let axes = SendPtr(self.axes.as_mut_ptr());
        let (group, gaxis, keys) = (&self.group, &self.gaxis, &self.keys);
        self.chunk_sums.par_iter().enumerate().for_each(|(c, &at)| {
            let mut at = at;
            for g in c * chunk..((c + 1) * chunk).min(groups) {
                let (s, e) = (group[g] as usize, group[g + 1] as usize);
                let short = e - s - long[g] as usize;
                let len = short.div_ceil(parts[g] as usize);
                let cuts = (s..s + short).step_by(len).map(|r| (r, gaxis[g][0]));
                for (r, axis) in cuts.chain((short < e - s).then_some((s + short, gaxis[g][1]))) {
                    // SAFETY: chunk `c` writes the record slots from its prefix `at` on, one a
                    // record of its groups: the prefix sums of the same counts, so the chunks'
                    // slots partition `0..total`, the arrays' length.
                    unsafe {
                        nodes.put(at, (keys[s] >> 32) as u32);
                        starts.put(at, r as u32);
                        axes.put(at, axis);
                    }
                    at += 1;
                }
            }
        });
        self.starts[total] = self.keys.len() as u32;
    }

    /// The boxes, grown, into structure-of-arrays order, with [`PAD`] NaN boxes after.
    fn gather(&mut self, boxes: &[Aabb<D>], margin: f32) {
        let n = self.keys.len();
        for k in 0..D {
            grow_to(&mut self.lo[k], n + PAD);
            grow_to(&mut self.hi[k], n + PAD);
            self.lo[k][n..].fill(f32::NAN);
            self.hi[k][n..].fill(f32::NAN);
        }
        grow_to(&mut self.ids, n);
        let lo: [SendPtr<f32>; D] = std::array::from_fn(|k| SendPtr(self.lo[k].as_mut_ptr()));
        let hi: [SendPtr<f32>; D] = std::array::from_fn(|k| SendPtr(self.hi[k].as_mut_ptr()));
        let ids = SendPtr(self.ids.as_mut_ptr());
        let chunk = chunk_len(n);
        self.keys.par_chunks(chunk).enumerate().for_each(|(c, part)| {
            for (j, &key) in part.iter().enumerate() {
                if let Some(&f) = part.get(j + crate::kernels::par::PREFETCH) {
                    crate::kernels::par::prefetch(&boxes[f as u32 as usize]);
                }
                let i = key as u32;
                let g = boxes[i as usize].grown(margin);
                let p = c * chunk + j;
                // SAFETY: `p` ranges over `0..n`, each value in exactly one task; the arrays
                // have at least `n` slots (grow_to).
                unsafe {
                    for k in 0..D {
                        lo[k].put(p, g.min[k]);
                        hi[k].put(p, g.max[k]);
                    }
                    ids.put(p, i);
                }
            }
        });
    }

    /// Per record its bounds, reach and subtree end; per block of eight positions the
    /// greatest upper bound on its sorted records' axes.
    fn bound_records(&mut self) {
        let records = self.nodes.len();
        grow_to(&mut self.bounds, records);
        grow_to(&mut self.reach, records);
        grow_to(&mut self.next, records);
        grow_to(&mut self.qlo, self.ids.len());
        let qlo = SendPtr(self.qlo.as_mut_ptr());
        let (lo, hi, starts, axes, nodes, quant) =
            (&self.lo, &self.hi, &self.starts, &self.axes, &self.nodes, &self.quant);
        self.bounds
            .par_iter_mut()
            .zip(self.reach.par_iter_mut())
            .zip(self.next.par_iter_mut())
            .enumerate()
            .with_min_len(256)
            .for_each(|(g, ((bound, reach), next))| {
                let (s, e) = (starts[g] as usize, starts[g + 1] as usize);
                for k in 0..D {
                    bound.min[k] = lo[k][s..e].iter().fold(f32::INFINITY, |a, &x| a.min(x));
                    bound.max[k] = hi[k][s..e].iter().fold(f32::NEG_INFINITY, |a, &x| a.max(x));
                }
                *reach = 0;
                if axes[g] != UNSORTED {
                    let a = axes[g] as usize;
                    for j in s..e {
                        let q = coord(quant, a, lo[a][j]);
                        *reach = (*reach).max(coord(quant, a, hi[a][j]) - q);
                        // SAFETY: records' position ranges are disjoint, each written by its
                        // own task; `qlo` has a slot a live box.
                        unsafe { qlo.put(j, q) };
                    }
                }
                // The first record whose code is past the cell's.
                let (code, level) = split(nodes[g], D);
                let shift = (depth(D) - level) * D as u32;
                let past = ((code as u64 >> shift) + 1) << shift;
                *next = first_at_least(nodes, g + 1, records, past << code_shift(D)) as u32;
            });
        // Per record the end of its group, and at a group's first record the group's bounds.
        grow_to(&mut self.gend, records);
        grow_to(&mut self.gbounds, records);
        let bounds = &self.bounds;
        self.gend.par_iter_mut().zip(self.gbounds.par_iter_mut()).enumerate().with_min_len(256).for_each(
            |(h, (end, gb))| {
                let first = (0..=h).rev().take_while(|&x| nodes[x] == nodes[h]).last().unwrap_or(h);
                *end = (h..records).find(|&x| nodes[x] != nodes[h]).unwrap_or(records) as u32;
                if first == h {
                    *gb = bounds[h];
                    for r in &bounds[h + 1..*end as usize] {
                        for k in 0..D {
                            gb.min[k] = gb.min[k].min(r.min[k]);
                            gb.max[k] = gb.max[k].max(r.max[k]);
                        }
                    }
                }
            },
        );
        let n = self.ids.len();
        grow_to(&mut self.block_hi, n.div_ceil(8));
        let per = chunk_len(n) / 8;
        self.block_hi.par_chunks_mut(per).enumerate().for_each(|(c, part)| {
            let first = c * per * 8;
            let mut g = starts.partition_point(|&s| s as usize <= first) - 1;
            let mut j = first;
            for slot in part.iter_mut() {
                let mut most = f32::NEG_INFINITY;
                let end = (j + 8).min(n);
                while j < end {
                    while starts[g + 1] as usize <= j {
                        g += 1;
                    }
                    if axes[g] != UNSORTED {
                        let x = hi[axes[g] as usize][j];
                        most = if x > most { x } else { most };
                    }
                    j += 1;
                }
                *slot = most;
            }
        });
    }
}

/// Turns per-chunk counts into where each chunk's items begin; returns the total.
fn prefix(counts: &mut [usize]) -> usize {
    let mut total = 0;
    for c in counts.iter_mut() {
        let k = *c;
        *c = total;
        total += k;
    }
    total
}

/// How a group of `m >= SORT_MIN` boxes is sorted: along `a`, the axis where its boxes
/// expect the fewest tests a box in a sweep (`sum of extents / spread of lower bounds`);
/// and, where a second axis `cut` also spreads them well (a plane of boxes in 3D: a window
/// along one axis leaves a strip across the other), first cut along `cut` into `count`
/// records of about [`PART`] boxes, each with bounds of its own. Returns `(a, cut, count,
/// mean extent along a)`.
fn plan_group<const D: usize>(boxes: impl Iterator<Item = Aabb<D>>, m: usize) -> (usize, usize, usize, f64) {
    let (mut lo, mut hi, mut ext) = ([f64::INFINITY; D], [f64::NEG_INFINITY; D], [0.0f64; D]);
    for b in boxes {
        for k in 0..D {
            lo[k] = lo[k].min(b.min[k] as f64);
            hi[k] = hi[k].max(b.min[k] as f64);
            ext[k] += b.max[k] as f64 - b.min[k] as f64;
        }
    }
    let cost: [f64; D] = std::array::from_fn(|k| {
        let spread = hi[k] - lo[k];
        let c = if spread > 0.0 { ext[k] / spread } else { f64::INFINITY };
        if c.is_nan() {
            f64::INFINITY
        } else {
            c
        }
    });
    let least = |skip: usize| {
        (0..D).filter(|&k| k != skip).fold((D, f64::INFINITY), |best, k| {
            if cost[k] < best.1 {
                (k, cost[k])
            } else {
                best
            }
        })
    };
    let a = least(D).0.min(D - 1);
    let (cut, c) = least(a);
    // Cut where a box expects to meet under a quarter of the group along `cut`.
    let count = if cut < D && m >= 2 * PART && c * 4.0 < m as f64 { m.div_ceil(PART) } else { 1 };
    (a, cut.min(D - 1), count, ext[a] / m as f64)
}
