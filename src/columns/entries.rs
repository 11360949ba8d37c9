//! Entry write: one key a (box, column), in box order.
//!
//! - Input: the boxes, the margin and the plan (levels, column counts, entries a chunk,
//!   [`Layout`](super::Layout)).
//! - Output: `entries` keys, unsorted: each box's columns at its level, with its first-column
//!   flags, `qx` and id.
//! - Cost: `O(n + e)` for `e` entries; a box of one or two columns an axis writes without a
//!   loop.
//! - Parallel: a rayon map over the plan's chunks; each writes its own slice, cut by the
//!   plan's entry counts, so the output does not depend on the thread count.
//! - Allocation: `out` grows to the entry count and is reused; one slice reference a chunk.
//! - Source: Morton codes of the columns, Dmytry Lavrov's Morton-order collision detection
//!   article; first-column flags, this crate.

use super::layout::col_axes;
use super::layout::col_code;
use super::layout::shl64;
use super::layout::shr32;
use super::layout::Entry;
use super::Columns;
#[cfg(target_arch = "x86_64")]
use crate::kernels::morton;
use crate::kernels::par::chunk_len;
use crate::par::prelude::*;
use crate::Aabb;

impl<const D: usize> Columns<D> {
    /// Writes every box's entries into `out` (resized to `self.entries`), in parallel.
    pub fn write_entries<T: Entry>(&self, boxes: &[Aabb<D>], margin: f32, out: &mut Vec<T>) {
        crate::kernels::par::grow_to(out, self.entries);
        let mut parts = Vec::with_capacity(self.chunk_entries.len());
        let mut rest = &mut out[..self.entries];
        for &len in &self.chunk_entries {
            let (head, tail) = rest.split_at_mut(len);
            parts.push(head);
            rest = tail;
        }
        let lay = self.layout;
        let cols = col_axes::<D>(self.ax);
        let c = lay.c;
        let (s_pos, f_pos) = (lay.run_from() + lay.lvl_bits, lay.id_bits);
        let pdep = crate::kernels::simd::pdep();
        #[cfg(not(target_arch = "x86_64"))]
        let _ = pdep;
        // The plan's chunks, whose entry counts cut `out`.
        let chunk = chunk_len(boxes.len());
        parts.into_par_iter().zip(boxes.par_chunks(chunk)).enumerate().for_each(|(ci, (dst, src))| {
            crate::kernels::simd::fast(
                #[inline(always)]
                || {
                    // The column code of two column coordinates: `pdep` where it is fast
                    // (this closure then runs compiled for BMI2), else the tables.
                    let code2 = |q: [u32; 2]| -> u64 {
                        #[cfg(target_arch = "x86_64")]
                        if pdep {
                            // SAFETY: `crate::kernels::simd::pdep()` is true only on a CPU with BMI2.
                            return unsafe { morton::pdep_encode::<2>(q) };
                        }
                        col_code(2, q)
                    };
                    let mut at = 0;
                    for (j, b) in src.iter().enumerate() {
                        let i = ci * chunk + j;
                        if self.count[i] == 0 {
                            continue;
                        }
                        let g = b.grown(margin);
                        let l = self.level[i] as u32;
                        let qx = self.qx_of(g.min[self.ax]);
                        let c0 = cols.map(|k| shr32(self.quant.coord(k, g.min[k]), l));
                        let c1 = cols.map(|k| shr32(self.quant.coord(k, g.max[k]), l));
                        // Every field but the column start and the first flags is the box's.
                        let base = T::from_u128(lay.pack(0, l, qx, 0, i as u32));
                        let shift = c * (l - lay.l_min);
                        let entry = |code: u64, first: u32| {
                            T::with_column(base, shl64(code, shift), s_pos, first, f_pos)
                        };
                        let (nx, ny) = (c1[0] - c0[0], c1[1] - c0[1]);
                        // A box spans one or two columns per axis at its seed level, in no
                        // predictable pattern, so loops over them end unpredictably. The
                        // common case writes every candidate entry and advances by the real
                        // ones: a slot written beyond the box's entries is rewritten by the
                        // next box (boxes write in order), so only a box within 2^c slots of
                        // the end of the chunk's slice takes the loops.
                        // PERF: examples/demo.rs (3D uniform 1M, entries stage).
                        if c == 2 && nx <= 1 && ny <= 1 && at + 4 <= dst.len() {
                            let (x0, x1) = (code2([c0[0], 0]), code2([c1[0], 0]));
                            let (y0, y1) = (code2([0, c0[1]]), code2([0, c1[1]]));
                            dst[at] = entry(x0 | y0, 3);
                            at += 1;
                            dst[at] = entry(x1 | y0, 2);
                            at += nx as usize;
                            dst[at] = entry(x0 | y1, 1);
                            at += ny as usize;
                            dst[at] = entry(x1 | y1, 0);
                            at += (nx & ny) as usize;
                            continue;
                        }
                        if c == 1 && nx <= 1 && at + 2 <= dst.len() {
                            dst[at] = entry(c0[0] as u64, 1);
                            at += 1;
                            dst[at] = entry(c1[0] as u64, 0);
                            at += nx as usize;
                            continue;
                        }
                        let mut put = |code: u64, first: u32| {
                            dst[at] = entry(code, first);
                            at += 1;
                        };
                        match c {
                            2 => {
                                for y in c0[1]..=c1[1] {
                                    let my = code2([0, y]);
                                    let fy = ((y == c0[1]) as u32) << 1;
                                    for x in c0[0]..=c1[0] {
                                        put(code2([x, 0]) | my, (x == c0[0]) as u32 | fy);
                                    }
                                }
                            }
                            1 => {
                                for x in c0[0]..=c1[0] {
                                    put(x as u64, (x == c0[0]) as u32);
                                }
                            }
                            _ => put(0, 0),
                        }
                    }
                    debug_assert_eq!(at, dst.len());
                },
            )
        });
    }
}
