//! The pair store: the live pairs as keys over slots, in a hash set, so that a frame adds
//! and removes each changed pair in O(1); and the sorted handle list `pairs()` returns,
//! built on demand.
//!
//! - The key of the pair of slots `lo < hi` is `(lo << 32) | hi` (a `u64`; the pairs'
//!   handles take their generations from the slot table, so a key names a pair of slots,
//!   and the objects in them as of the last update).
//! - INVARIANT: every key is a pair of objects live at the last update, `lo < hi`, that
//!   the rule pairs (see `World::validate`).
//! - The hasher is a fixed multiply-and-fold ([`PairHasher`]): no random state, so the
//!   set's layout, like everything else, depends only on the sequence of calls (the output
//!   is sorted anyway).
//! - `pairs()`: the first call after a frame sorts the keys into handles, O(pairs log
//!   pairs), and caches them in a `OnceLock`; later calls are free until the next frame
//!   that changes a pair. Engines are expected to follow the events instead.
//! - Cost: O(1) expected a pair added or removed. Threads: none. Allocation: the set grows
//!   with the pairs (hashbrown's doubling) and keeps its capacity; the cached list is
//!   allocated once a frame, when asked for.
//! - Source: the pair set of Box2D v3's broad phase (`pairSet`, a hash set of pair keys).

use super::Handle;
use crate::Error;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

/// The key of the pair of slots `lo < hi`: `lo` in the high 32 bits, `hi` in the low.
#[inline]
pub(crate) fn key(lo: u32, hi: u32) -> u64 {
    (u64::from(lo) << 32) | u64::from(hi)
}

/// The slots `(lo, hi)` of a key.
#[inline]
pub(crate) fn slots_of(key: u64) -> (u32, u32) {
    ((key >> 32) as u32, key as u32)
}

/// A deterministic hasher for pair keys: the key times an odd constant as a 128-bit
/// product, its two halves xor-ed (a "folded multiply"), so every key bit reaches both the
/// low bits (the bucket) and the high bits (hashbrown's 7-bit tag). A plain
/// multiply-shift's low bits would depend only on `hi`'s low bits.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PairHasher(u64);

/// An odd constant with well-spread bits (2^64 over the golden ratio).
const MUL: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for PairHasher {
    #[inline]
    fn write_u64(&mut self, k: u64) {
        let p = u128::from(self.0 ^ k) * u128::from(MUL);
        self.0 = (p as u64) ^ ((p >> 64) as u64);
    }

    /// Bytes in 8-byte little-endian words (the keys are hashed by `write_u64`; this is
    /// here for completeness).
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The set of pair keys, with its deterministic hasher.
pub(crate) type PairSet = HashSet<u64, BuildHasherDefault<PairHasher>>;

/// The live pairs and the sorted handle list built from them on demand.
#[derive(Debug, Default)]
pub(crate) struct PairStore {
    /// One key a pair.
    pub(crate) set: PairSet,
    /// The pairs as sorted handles, once asked for since the last frame that changed them.
    /// INVARIANT: when set, equal to the keys with their generations as of the last update.
    pub(crate) cache: OnceLock<Vec<[Handle; 2]>>,
}

impl PairStore {
    /// Live pairs.
    pub(crate) fn len(&self) -> usize {
        self.set.len()
    }

    /// The pairs as sorted handles, each slot named with `generation(slot)`; built on the
    /// first call after a change, then cached.
    pub(crate) fn sorted(&self, generation: impl Fn(u32) -> u32) -> &[[Handle; 2]] {
        self.cache.get_or_init(|| {
            let mut v: Vec<[Handle; 2]> = self
                .set
                .iter()
                .map(|&k| {
                    let (lo, hi) = slots_of(k);
                    [Handle::new(lo, generation(lo)), Handle::new(hi, generation(hi))]
                })
                .collect();
            // Keys are unique, so the unstable sort has one result.
            v.sort_unstable();
            v
        })
    }

    /// Takes out the `removed` pairs, then puts in the `added` ones (in that order: a slot
    /// reused within a frame may lose and gain the same key), and drops the cached list if
    /// anything changed. The room for the added keys is reserved first, so a refused
    /// allocation is [`Error::OutOfMemory`] with the store as it was.
    pub(crate) fn apply(&mut self, removed: &[[Handle; 2]], added: &[[Handle; 2]]) -> Result<(), Error> {
        self.set
            .try_reserve(added.len().saturating_sub(removed.len()))
            .map_err(|_| Error::OutOfMemory { pairs: added.len() })?;
        for [a, b] in removed {
            self.set.remove(&key(a.index(), b.index()));
        }
        for [a, b] in added {
            self.set.insert(key(a.index(), b.index()));
        }
        if !(removed.is_empty() && added.is_empty()) {
            self.cache = OnceLock::new();
        }
        Ok(())
    }

    /// Heap bytes held, from capacities: the set's table as hashbrown lays it out (a
    /// power-of-two bucket count at most 7/8 full, a key and a tag byte a bucket) and the
    /// cached list.
    pub(crate) fn bytes(&self) -> usize {
        let cap = self.set.capacity();
        let buckets = if cap == 0 {
            0
        } else if cap < 8 {
            (cap + 1).next_power_of_two()
        } else {
            (cap.saturating_mul(8) / 7).next_power_of_two()
        };
        buckets * (std::mem::size_of::<u64>() + 1)
            + self.cache.get().map_or(0, |v| v.capacity() * std::mem::size_of::<[Handle; 2]>())
    }
}
