//! Entry key layout: how an entry packs its box, level, column and sort position into one
//! radix-sortable integer, and the ownership rules read from it.
//!
//! - Input: the bit widths the plan chose ([`Layout`]).
//! - Output: packing ([`Layout::pack`], [`Entry::with_column`]), field reads, and the rules
//!   that report every pair once ([`Layout::owns`], [`Layout::represents`]).
//! - Cost: `O(1)` a call, shifts and masks; [`Layout::owns`] loops over at most two axes.
//! - Parallel: pure functions, no shared state.
//! - Allocation: none.
//! - Source: Morton codes over the column axes, Dmytry Lavrov's Morton-order collision
//!   detection article; the key layout and the ownership rules, this crate.

use crate::kernels::morton;
use crate::kernels::radix_sort::RadixKey;
use crate::kernels::simd::low_mask;

/// Bits of the quantised lower bound along the sweep axis (exact in an `f32`).
pub(super) const X_BITS_MAX: u32 = 24;
/// Fewer x bits than this (or than wanted) in a u64 entry: use u128 entries instead.
pub(super) const X_BITS_MIN: u32 = 12;
/// The least `qx` precision (a 256th of the grid's extent along the sweep axis).
pub(super) const X_BITS_LEAST: u32 = 8;

/// An entry record: a radix-sortable integer (fields in [`Layout`]).
pub(crate) trait Entry: RadixKey + Ord + bytemuck::Pod {
    fn from_u128(v: u128) -> Self;
    fn to_u128(self) -> u128;
    /// The low 64 bits of `self >> s` (every field but the column fits 64 bits).
    fn field(self, s: u32) -> u64;
    /// `base | start << s_pos | first << f_pos`, in the entry's own width: `u64` entries
    /// shift in `u64`, as `u128` shifts cost more in the entry write's inner loop.
    /// PERF: examples/demo.rs (3D uniform 1M, entries stage).
    fn with_column(base: Self, start: u64, s_pos: u32, first: u32, f_pos: u32) -> Self;
}
impl Entry for u64 {
    #[inline(always)]
    fn from_u128(v: u128) -> Self {
        v as u64
    }
    #[inline(always)]
    fn to_u128(self) -> u128 {
        self as u128
    }
    #[inline(always)]
    fn field(self, s: u32) -> u64 {
        debug_assert!(s < 64);
        self >> s
    }
    #[inline(always)]
    fn with_column(base: Self, start: u64, s_pos: u32, first: u32, f_pos: u32) -> Self {
        debug_assert!(s_pos < 64 && f_pos < 64);
        base | start << s_pos | (first as u64) << f_pos
    }
}
impl Entry for u128 {
    #[inline(always)]
    fn from_u128(v: u128) -> Self {
        v
    }
    #[inline(always)]
    fn to_u128(self) -> u128 {
        self
    }
    #[inline(always)]
    fn field(self, s: u32) -> u64 {
        debug_assert!(s < 128);
        (self >> s) as u64
    }
    #[inline(always)]
    fn with_column(base: Self, start: u64, s_pos: u32, first: u32, f_pos: u32) -> Self {
        base | (start as u128) << s_pos | (first as u128) << f_pos
    }
}

/// Bit layout of an entry, low to high:
///
/// ```text
/// [ id: id_bits ][ first: c ][ qx: x_bits ][ l_max - level: lvl_bits ][ start >> (c l_min): key_bits ]
/// ```
///
/// `c = D - 1` column axes. `start` is the Morton code (over the column axes) of the
/// column's lowest grid point; its low `c * level` bits are zero. `first` bit `k` is set
/// when the column is the box's first on column axis `k`. `qx` is the box's quantised lower
/// bound on the sweep axis. INVARIANT: `bits() <= 64` for `u64` entries, `<= 128` for `u128`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Layout {
    pub id_bits: u32,
    /// Column axes `c = D - 1`, also the number of flag bits.
    pub c: u32,
    pub x_bits: u32,
    pub lvl_bits: u32,
    pub key_bits: u32,
    pub l_min: u32,
    pub l_max: u32,
}

impl Layout {
    /// Total bits used.
    pub fn bits(&self) -> u32 {
        self.run_from() + self.lvl_bits + self.key_bits
    }
    /// The lowest bit the sort looks at (`qx`).
    pub fn sort_from(&self) -> u32 {
        self.id_bits + self.c
    }
    /// The lowest bit of the column part (level and start): equal within a run.
    pub fn run_from(&self) -> u32 {
        self.sort_from() + self.x_bits
    }
    #[inline(always)]
    pub fn pack(&self, start_shifted: u64, level: u32, qx: u32, first: u32, id: u32) -> u128 {
        let cell = (start_shifted as u128) << self.lvl_bits | (self.l_max - level) as u128;
        ((cell << self.x_bits | qx as u128) << self.c | first as u128) << self.id_bits | id as u128
    }
    #[inline(always)]
    pub fn first<T: Entry>(&self, e: T) -> u32 {
        (e.field(self.id_bits) & low_mask(self.c)) as u32
    }
    #[inline(always)]
    pub fn id<T: Entry>(&self, e: T) -> u32 {
        (e.field(0) & low_mask(self.id_bits)) as u32
    }
    #[inline(always)]
    pub fn qx<T: Entry>(&self, e: T) -> u32 {
        (e.field(self.sort_from()) & low_mask(self.x_bits)) as u32
    }
    /// The column part (level and start): equal for the entries of one run.
    #[inline(always)]
    pub fn run_key(&self, e: u128) -> u128 {
        e >> self.run_from()
    }
    #[inline(always)]
    pub fn level<T: Entry>(&self, e: T) -> u32 {
        self.l_max - (e.field(self.run_from()) & low_mask(self.lvl_bits)) as u32
    }
    /// Shifted start (`start >> c * l_min`; at most 64 bits).
    #[inline(always)]
    pub fn start<T: Entry>(&self, e: T) -> u64 {
        e.field(self.run_from() + self.lvl_bits)
    }
    /// The largest entry value whose column starts inside the column of `e`: entries after
    /// `e`'s run up to this value are exactly those nested in it (pre-order).
    #[inline(always)]
    pub fn last_nested(&self, e: u128) -> u128 {
        let end = self.start(e) as u128 + (1u128 << (self.c * (self.level(e) - self.l_min)));
        (end << (self.lvl_bits + self.run_from())) - 1
    }

    /// Does entry `e` own the pair of its box `B` with a box `A` whose quantised lower
    /// corner on the column axes has the shifted Morton code `ma`? `e` must be the finer
    /// (or equal) column of the two entries; called with the coarser one, it answers
    /// whether that column holds the reference point.
    ///
    /// The owner is `B`'s column holding `p = max(qlo(A), qlo(B))`. On axis `k` that
    /// column's coordinate is `max(a_k, b0_k)` with `a_k = qlo(A)_k >> level` and `b0_k`
    /// `B`'s first column. If `e` is `B`'s first column on `k` (`e_k == b0_k`) it holds
    /// `p_k` iff `e_k >= a_k`; otherwise (`e_k > b0_k`) iff `e_k == a_k`. Interleaving
    /// keeps each axis' bit order, so masked codes compare like the coordinates themselves.
    #[inline(always)]
    pub fn owns<T: Entry>(&self, e: T, ma: u64) -> bool {
        let c = self.c as usize;
        let start = self.start(e);
        let a = ma & !low_mask(self.c * (self.level(e) - self.l_min));
        let first = self.first(e);
        let same = (start ^ a) & !FIRST_AXES[c][first as usize & 3] == 0;
        let mut ge = true;
        for (k, &m) in AXIS_MASK[c].iter().enumerate().take(c) {
            ge &= (first >> k & 1 == 0) | (start & m >= a & m);
        }
        same & ge
    }
}

impl Layout {
    /// Is range entry `e` its box's one entry in the column of a run whose start is
    /// `run_start` (a column at a coarser level, nesting `e`'s)? On every column axis `e`
    /// is its box's first column, or its column starts where the run's does. A box nested
    /// in a coarse column has one such entry there, whatever its columns inside it.
    #[inline(always)]
    pub fn represents<T: Entry>(&self, e: T, run_start: u64) -> bool {
        (self.start(e) ^ run_start) & !FIRST_AXES[self.c as usize][self.first(e) as usize & 3] == 0
    }
}

/// Bits of column axis `k` in a `c`-dimensional Morton code (`c` is 1 or 2).
pub(super) const AXIS_MASK: [[u64; 2]; 3] =
    [[0, 0], [u64::MAX, 0], [0x5555_5555_5555_5555, 0xaaaa_aaaa_aaaa_aaaa]];

/// `FIRST_AXES[c][flags]`: the Morton bits of the column axes whose flag is set.
pub(super) const FIRST_AXES: [[u64; 4]; 3] = {
    let mut t = [[0u64; 4]; 3];
    let mut c = 1;
    while c <= 2 {
        let mut f = 0;
        while f < 4 {
            let mut k = 0;
            while k < c {
                if f >> k & 1 == 1 {
                    t[c][f] |= AXIS_MASK[c][k];
                }
                k += 1;
            }
            f += 1;
        }
        c += 1;
    }
    t
};

#[inline(always)]
pub(super) fn shl64(v: u64, s: u32) -> u64 {
    if s >= 64 {
        0
    } else {
        v << s
    }
}

#[inline(always)]
pub(super) fn shr32(v: u32, s: u32) -> u32 {
    if s >= 32 {
        0
    } else {
        v >> s
    }
}

/// The column axes of a `D`-dimensional scene swept along `ax` (up to two of them).
#[inline(always)]
pub(super) fn col_axes<const D: usize>(ax: usize) -> [usize; 2] {
    let mut out = [0; 2];
    let mut i = 0;
    for k in 0..D {
        if k != ax && i < 2 {
            out[i] = k;
            i += 1;
        }
    }
    out
}

/// Morton code of column coordinates (`c` of them used).
#[inline(always)]
pub(super) fn col_code(c: u32, q: [u32; 2]) -> u64 {
    match c {
        1 => q[0] as u64,
        2 => morton::encode::<2>(q),
        _ => 0,
    }
}
