//! The pair store: the live pairs as keys over slots, in hash sets sharded by the lower
//! slot's range, so that a frame adds and removes each changed pair in O(1), shards in
//! parallel; and the sorted handle list `pairs()` returns, built on demand.
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
//! - Shards: the pairs whose lower slot lies in `[i << SHARD_BITS, (i + 1) << SHARD_BITS)`
//!   are in shard `i`. The events come sorted by lower slot, so each shard's share of them
//!   is one run, found by binary search, and the shards apply theirs in parallel.
//! - Cost: O(1) expected a pair added or removed. Threads: the shards on the caller's
//!   pool. Allocation: the sets grow with the pairs (hashbrown's doubling) and keep their
//!   capacity; the cached list is allocated once a frame, when asked for.
//! - Source: the pair set of Box2D v3's broad phase (`pairSet`, a hash set of pair keys).

use super::Handle;
use crate::par::prelude::*;
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

/// Slots a shard of the pair store covers, as a power of two: 4,096 (a shard of a crowd
/// holds some tens of thousands of pairs, one of a million objects a few hundred shards).
const SHARD_BITS: u32 = 12;

/// The shard of the pair whose lower slot is `lo`.
#[inline]
fn shard_of(lo: u32) -> usize {
    (lo >> SHARD_BITS) as usize
}

/// The run of `list` (sorted by lower slot) in shard `i`.
fn run(list: &[[Handle; 2]], i: usize) -> &[[Handle; 2]] {
    let lo = list.partition_point(|p| shard_of(p[0].index()) < i);
    let hi = list.partition_point(|p| shard_of(p[0].index()) <= i);
    &list[lo..hi]
}

/// The live pairs and the sorted handle list built from them on demand.
#[derive(Clone, Debug, Default)]
pub(crate) struct PairStore {
    /// One key a pair, in the shard of its lower slot.
    shards: Vec<PairSet>,
    /// The pairs as sorted handles, once asked for since the last frame that changed them.
    /// INVARIANT: when set, equal to the keys with their generations as of the last update.
    pub(crate) cache: OnceLock<Vec<[Handle; 2]>>,
}

impl PairStore {
    /// Live pairs. O(shards).
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(PairSet::len).sum()
    }

    /// Every key, shard by shard.
    pub(crate) fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.shards.iter().flat_map(|s| s.iter().copied())
    }

    /// Every key, in parallel, shard by shard (the order of `keys`).
    pub(crate) fn par_keys(&self) -> impl IndexedParallelIterator<Item = &PairSet> + '_ {
        self.shards.par_iter()
    }

    /// Whether pair key `k` is stored.
    pub(crate) fn contains(&self, k: u64) -> bool {
        self.shards.get(shard_of(slots_of(k).0)).is_some_and(|s| s.contains(&k))
    }

    /// Stores key `k` as it is (tests break the store's invariants with it).
    #[cfg(test)]
    pub(crate) fn insert_key(&mut self, k: u64) {
        let i = shard_of(slots_of(k).0);
        if self.shards.len() <= i {
            self.shards.resize_with(i + 1, PairSet::default);
        }
        self.shards[i].insert(k);
        self.cache = OnceLock::new();
    }

    /// Drops key `k` (tests break the store's invariants with it).
    #[cfg(test)]
    pub(crate) fn remove_key(&mut self, k: u64) {
        if let Some(s) = self.shards.get_mut(shard_of(slots_of(k).0)) {
            s.remove(&k);
        }
        self.cache = OnceLock::new();
    }

    /// The first key out of its shard (its lower slot belongs to another), if any.
    pub(crate) fn misplaced(&self) -> Option<u64> {
        self.shards
            .iter()
            .enumerate()
            .find_map(|(i, s)| s.iter().copied().find(|&k| shard_of(slots_of(k).0) != i))
    }

    /// The pairs as sorted handles, each slot named with `generation(slot)`; built on the
    /// first call after a change, then cached.
    pub(crate) fn sorted(&self, generation: impl Fn(u32) -> u32) -> &[[Handle; 2]] {
        self.cache.get_or_init(|| {
            let mut v: Vec<[Handle; 2]> = self
                .keys()
                .map(|k| {
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
    /// anything changed. Both lists sorted (by lower slot first), as the events are: each
    /// shard takes its run of each, the shards in parallel. The room for the added keys
    /// is reserved first, in every shard, so a refused allocation is
    /// [`Error::OutOfMemory`] with the store as it was.
    pub(crate) fn apply(&mut self, removed: &[[Handle; 2]], added: &[[Handle; 2]]) -> Result<(), Error> {
        debug_assert!(removed.windows(2).all(|w| w[0] < w[1]) && added.windows(2).all(|w| w[0] < w[1]));
        let Some(last) = added.last() else {
            return self.apply_shards(removed, added);
        };
        let need = shard_of(last[0].index()) + 1;
        if self.shards.len() < need {
            self.shards
                .try_reserve(need - self.shards.len())
                .map_err(|_| Error::OutOfMemory { pairs: added.len() })?;
            self.shards.resize_with(need, PairSet::default);
        }
        let refused = self.shards.par_iter_mut().enumerate().with_min_len(4).any(|(i, s)| {
            let (r, a) = (run(removed, i).len(), run(added, i).len());
            s.try_reserve(a.saturating_sub(r)).is_err()
        });
        if refused {
            return Err(Error::OutOfMemory { pairs: added.len() });
        }
        self.apply_shards(removed, added)
    }

    /// [`PairStore::apply`] once every shard has room.
    fn apply_shards(&mut self, removed: &[[Handle; 2]], added: &[[Handle; 2]]) -> Result<(), Error> {
        if removed.is_empty() && added.is_empty() {
            return Ok(());
        }
        self.shards.par_iter_mut().enumerate().with_min_len(4).for_each(|(i, s)| {
            for [a, b] in run(removed, i) {
                s.remove(&key(a.index(), b.index()));
            }
            for [a, b] in run(added, i) {
                s.insert(key(a.index(), b.index()));
            }
        });
        self.cache = OnceLock::new();
        Ok(())
    }

    /// Heap bytes held, from capacities: the set's table as hashbrown lays it out (a
    /// power-of-two bucket count at most 7/8 full, a key and a tag byte a bucket) and the
    /// cached list.
    pub(crate) fn bytes(&self) -> usize {
        let table = |s: &PairSet| {
            let cap = s.capacity();
            let buckets = if cap == 0 {
                0
            } else if cap < 8 {
                (cap + 1).next_power_of_two()
            } else {
                (cap.saturating_mul(8) / 7).next_power_of_two()
            };
            buckets * (std::mem::size_of::<u64>() + 1)
        };
        self.shards.iter().map(table).sum::<usize>()
            + self.shards.capacity() * std::mem::size_of::<PairSet>()
            + self.cache.get().map_or(0, |v| v.capacity() * std::mem::size_of::<[Handle; 2]>())
    }
}
