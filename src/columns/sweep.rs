//! Sweep driver: the gathered entries cut into chunks at run boundaries, each chunk
//! walked into pair keys.
//!
//! - Input: the sorted, gathered entries, `Config::crowded_threshold`, the refinement
//!   (`Refine::Sweep` or `Refine::Rdc`), the pool (idle memory for keys) and the spill.
//! - Output: the sweep's counts ([`SweepCounts`]) and, a chunk, where its keys went
//!   ([`ChunkKeys`]).
//! - Cost: `O(e + candidates)` for `e` entries, plus a window search a range row; the
//!   walk itself is in [`walker`](super::walker) and [`ranges`](super::ranges).
//! - Parallel: a rayon map over up to sixteen chunks a thread. The chunk count depends on
//!   the thread count, but every run is walked whole by one chunk (bounds move forward to a
//!   run boundary), so the counts and the keys, once sorted, do not.
//! - Allocation: the chunk bounds and pool shares, and a chunk's walker scratch and sink
//!   block; the keys go to the pool and the spill, not to memory of their own.
//! - Source: sweep-and-prune, P. Terdiman's box pruning; RDC, Rabin, "Recursive
//!   Dimensional Clustering: A Fast Algorithm for Collision Detection" (Game Programming
//!   Gems 2); the chunking, this crate.

use super::walker::SweepCounts;

use super::layout::Entry;
use super::sink::block_keys;
use super::sink::ChunkKeys;
use super::sink::Sink;
use super::walker::Walker;
use super::Columns;
use crate::kernels::pair_sort::PairBudget;
use crate::par::prelude::*;
use crate::Refine;
use std::sync::Mutex;
use wide::f32x8;

impl<const D: usize> Columns<D> {
    /// Sweeps the sorted, gathered `entries` into pair keys. Chunk `c` writes its keys
    /// into its share of `pool` (idle memory, e.g. the radix scratch: as many keys as the
    /// chunk has entries times `pool.len() / entries.len()`) and, past that, appends them
    /// to `spill` (their bit patterns, `bytemuck::cast_slice`) a block at a time. Returns
    /// the counts and, per chunk, the `(start, len)` of the keys it left in `pool`. `fine`:
    /// the buckets (bits, shift) to count the keys in for the pair sort
    /// ([`fine_buckets`](crate::kernels::pair_sort::fine_buckets)); `None` where they will
    /// not be sorted.
    #[allow(clippy::too_many_arguments)]
    pub fn sweep<T: Entry>(
        &self,
        entries: &[T],
        crowded_threshold: u32,
        refine: Refine,
        pool: &mut [u64],
        spill: &Mutex<Vec<[u32; 2]>>,
        budget: &PairBudget,
        fine: Option<(u32, u32)>,
    ) -> (SweepCounts, Vec<ChunkKeys>) {
        let n = entries.len();
        let lay = self.layout;
        // Many chunks, also at small n: a run's range is swept by the chunk holding the
        // run, so with few chunks a few long planks over a small scene make one chunk do
        // most of the work. 2,048 entries a chunk does best of 1,024 to 8,192.
        // PERF: examples/demo.rs (3D mixed 10k, 2 threads, sweep stage).
        let chunks = (n / 2048).clamp(1, crate::par::current_num_threads() * 16);
        let mut bounds: Vec<usize> = (0..=chunks).map(|c| n * c / chunks).collect();
        for b in bounds.iter_mut().take(chunks).skip(1) {
            while *b < n
                && *b > 0
                && lay.run_key(entries[*b].to_u128()) == lay.run_key(entries[*b - 1].to_u128())
            {
                *b += 1;
            }
        }
        // Each chunk's share of the pool, in proportion to its entries.
        let per = pool.len().checked_div(n).unwrap_or(0);
        let mut shares = Vec::with_capacity(chunks);
        let mut rest = &mut pool[..n * per];
        for c in 0..chunks {
            let len = (bounds[c + 1].max(bounds[c]) - bounds[c]) * per;
            let (head, tail) = rest.split_at_mut(len.min(rest.len()));
            shares.push(head);
            rest = tail;
        }
        let mut starts = Vec::with_capacity(chunks);
        let mut start = 0;
        for c in 0..chunks {
            starts.push(start);
            start += (bounds[c + 1].max(bounds[c]) - bounds[c]) * per;
        }
        let res: Vec<(SweepCounts, ChunkKeys)> = shares
            .into_par_iter()
            .enumerate()
            .map(|(c, share)| {
                let mut w = Walker {
                    cols: self.rows(),
                    entries,
                    lay,
                    threshold: crowded_threshold as u64,
                    refine,
                    out: Sink::new(
                        share,
                        spill,
                        fine,
                        block_keys(bounds[c + 1].max(bounds[c]) - bounds[c]),
                        budget,
                    ),
                    uniq: Vec::new(),
                    ends: Vec::new(),
                    order: Vec::new(),
                    hits: Vec::new(),
                    counts: SweepCounts::default(),
                };
                let (from, to) = (bounds[c], bounds[c + 1].max(bounds[c]));
                crate::kernels::simd::fast_lanes(
                    &mut w,
                    #[inline(always)]
                    |w| w.walk::<crate::kernels::simd::Avx8>(from, to),
                    #[inline(always)]
                    |w| w.walk::<f32x8>(from, to),
                );
                (w.counts, w.out.finish(starts[c]))
            })
            .collect();
        let counts = res.iter().fold(SweepCounts::default(), |a, r| a.add(r.0));
        (counts, res.into_iter().map(|r| r.1).collect())
    }

    /// The rows as pair slots, for the pair stage to sort in once the sweep is done (their
    /// contents are rewritten by the next [`Columns::gather`]).
    pub fn spare_rows(&mut self) -> Vec<&mut [[u32; 2]]> {
        // One slice an array, as the pair stage's bucket count depends on the slices.
        let n = self.n_rows;
        let mut spare: Vec<&mut [[u32; 2]]> = self
            .rows
            .chunks_mut(self.stride.max(1))
            .map(|v| {
                let even = v.len().min(n) & !1;
                bytemuck::cast_slice_mut(&mut v[..even])
            })
            .collect();
        spare.push(bytemuck::pod_align_to_mut(&mut self.fst[..]).1);
        spare
    }
}
