//! Samples of a slice that do not alias with periodic ids.
//!
//! - Input: a block number, the block length (stride) and the slice's length. Output:
//!   one index in that block, at a position a hash of the block's number picks, the same
//!   on every call.
//! - Why not a fixed position in each block: it aliases with ids that cycle (box `i` in
//!   clump `i % c`, or every tenth slot of an object pool parked far away, sampled every
//!   `c`-th or every fortieth box), and the sample then shows one clump, or only the
//!   parked boxes.
//! - Cost: O(1). Threads: none. Allocation: none.
//! - Source: SplitMix64's finaliser (S. Vigna), as a hash of the block number.

/// The index sampled from block `block` of `stride` consecutive items of `n`.
pub(crate) fn sample_index(block: usize, stride: usize, n: usize) -> usize {
    let start = block * stride;
    // Every bit of the block number moves every bit of the hash.
    let mut h = (block as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^= h >> 31;
    start + (h % (stride.min(n - start)) as u64) as usize
}
