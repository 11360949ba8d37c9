//! Stages 2 to 5 of the column pipeline (entries, sort, sweep, pairs) for one entry width,
//! as `pipeline` lists them.
//!
//! - Input: the planned [`Columns`], the boxes, the configuration, the entry buffers (`u64`
//!   or `u128` keys) and the keys of the pairs found apart. Output: the pairs into `out`,
//!   sorted, or in the order the sweep found them (`sorted == false`).
//! - Cost: O(entries + candidates + pairs). Threads: the caller's pool, every stage.
//! - Allocation: none in steady state beyond the output's growth (the pair keys wait in the
//!   idle radix scratch and the output; the sort works in the idle rows and entries, or in
//!   `extra`; the unsorted output is written to `extra`, which then swaps with `out`).
//! - Source: this crate; each stage cites its own.

use crate::columns::{Columns, Entry};
use crate::kernels::pair_sort::PairBudget;
use crate::time::Instant;
use crate::{Aabb, Config, Error, Stats};

/// Stages 2 to 5 (entries, sort, sweep, pairs) for one entry width.
#[allow(clippy::too_many_arguments)]
pub(super) fn run<const D: usize, T: Entry>(
    cols: &mut Columns<D>,
    boxes: &[Aabb<D>],
    config: &Config<D>,
    entries: &mut Vec<T>,
    scratch: &mut Vec<T>,
    extra: &mut Vec<[u32; 2]>,
    apart: &[u64],
    stats: &mut Stats,
    sorted: bool,
    out: &mut Vec<[u32; 2]>,
) -> Result<(), Error> {
    let t = Instant::now();
    cols.write_entries(boxes, config.margin, entries);
    entries.truncate(cols.entries);
    stats.entries = entries.len();
    stats.t_entries = t.elapsed();

    let t = Instant::now();
    let lay = cols.layout;
    crate::kernels::radix_sort::sort(entries, scratch, lay.sort_from()..lay.bits());
    stats.t_sort = t.elapsed();

    let t = Instant::now();
    cols.gather(boxes, config.margin, entries);
    // The radix scratch is idle from here on: the sweep keeps pair keys in it first, then
    // appends them to the output itself (cleared by the caller).
    let pool: &mut [u64] = bytemuck::cast_slice_mut(&mut scratch[..]);
    let spill = std::sync::Mutex::new(std::mem::take(out));
    let budget = PairBudget::new(config.max_pairs);
    // The unsorted output reads the keys in the order found: no counts for the pair sort.
    let fine = sorted.then(|| crate::kernels::pair_sort::fine_buckets(boxes.len()));
    let (counts, mut chunks) =
        cols.sweep(entries, config.crowded_threshold, config.refine, pool, &spill, &budget, fine);
    *out = spill.into_inner().unwrap_or_else(|e| e.into_inner());
    stats.candidates = counts.candidates;
    stats.exact_tests = counts.exact_tests;
    stats.crowded_runs = counts.crowded;
    stats.rdc_splits = counts.rdc_splits;
    #[cfg(test)]
    {
        stats.ranges = counts.ranges;
    }
    stats.t_sweep = t.elapsed();
    // The keys left in the pool count too; past the bound (or short of memory) the call
    // reports the error with an empty output, its buffers kept for the next call.
    let in_pool: usize = chunks.iter().map(|c| c.len).sum();
    budget.take(in_pool + apart.len());
    if let Err(e) = budget.verdict() {
        out.clear();
        return Err(e);
    }
    if !sorted {
        let t = Instant::now();
        let pool: &[u64] = bytemuck::cast_slice(&scratch[..]);
        if let Err(pairs) = crate::columns::found_order(&chunks, pool, apart, out, extra) {
            out.clear();
            return Err(Error::OutOfMemory { pairs });
        }
        stats.t_pairs = t.elapsed();
        return Ok(());
    }

    // The keys wait in the scratch and the output; they are sorted in the rows and the
    // entries, idle by then. If those lack room, the scratch's keys join the others in the
    // output and the scratch is lent too; what all these lack is allocated (and kept).
    let t = Instant::now();
    let mut spare = cols.spare_rows();
    spare.push(bytemuck::cast_slice_mut(&mut entries[..]));
    // Keys packed in 32 bits (up to 2^21 boxes, `kernels::pair_sort::packed_bits`) take
    // half a slot.
    let packed = 1 + crate::kernels::pair_sort::packed_bits(boxes.len()).is_some() as usize;
    let room: usize = packed * spare.iter().map(|s| s.len()).sum::<usize>();
    let pool: &mut [[u32; 2]] = bytemuck::cast_slice_mut(&mut scratch[..]);
    let pool = if out.len() + in_pool + apart.len() > room {
        if crate::columns::grow(out, in_pool).is_err() {
            out.clear();
            return Err(Error::OutOfMemory { pairs: in_pool + out.len() });
        }
        for c in chunks.iter_mut() {
            // The chunk's keys in the pool move to the output's end, and become one of its
            // blocks.
            let at = out.len();
            out.extend_from_slice(&pool[c.start..c.start + c.len]);
            c.blocks.push((at, c.len));
            c.len = 0;
        }
        spare.push(pool);
        &[][..]
    } else {
        &*pool
    };
    // One part a sweep chunk: its slice of the pool and its blocks in the output, with the
    // counts the chunk made while its keys were in cache. A count pass over the keys here
    // is not used: it reads them again, from other cores' caches.
    // PERF: benches/pairs.rs (2D and 3D, all threads).
    let keys: Vec<Vec<&[[u32; 2]]>> = chunks
        .iter()
        .map(|c| {
            // (No slice where the pool was lent: its keys are blocks of the output.)
            std::iter::once(pool.get(c.start..c.start + c.len).unwrap_or(&[]))
                .chain(c.blocks.iter().map(|&(at, len)| &out[at..at + len]))
                .collect()
        })
        .collect();
    let mut fine: Vec<Vec<u32>> = chunks.into_iter().map(|c| c.hist).collect();
    // The keys of the pairs found apart (strays) are one part more, counted here.
    let mut keys = keys;
    if !apart.is_empty() {
        let (bits, shift) = crate::kernels::pair_sort::fine_buckets(boxes.len());
        let mut hist = vec![0u32; 1 << bits];
        for &k in apart {
            hist[(k >> shift) as usize] += 1;
        }
        keys.push(vec![bytemuck::cast_slice(apart)]);
        fine.push(hist);
    }
    let sorted = crate::kernels::pair_sort::Spilled::scatter(&keys, Some(&fine), boxes.len(), spare, extra);
    drop(keys);
    sorted.write(out);
    stats.t_pairs = t.elapsed();
    Ok(())
}
