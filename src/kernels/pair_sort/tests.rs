//! Tests of the pair sort: every path (whole, spilled, packed, each bucket sort) against `sort_unstable`.

use super::bucket_sort::sort_bucket;
use super::bucket_sort::sort_sparse;
use super::buckets::fine_buckets;
use super::buckets::Buckets;
use super::finish;
use super::finish_into;
use super::key;
use super::packed::packed_bits;
use super::packed::packed_min_buckets;
use super::packed::{Bucket, Packed};
use super::spilled::Spilled;
use super::unslot;
use crate::kernels::simd::low_mask;

/// Unique random pairs, some first indices with thousands of partners (a mesh's fan),
/// some with near partners only (a spatially ordered input), split into uneven parts:
/// `finish` must return them sorted, as a plain sort does. The larger cases have
/// buckets big enough for the radix sort (`sort_bucket`), the smaller ones not.
#[test]
fn finish_sorts_like_sort_unstable() {
    let mut r = crate::internals::scene::Rng::new(11);
    // (ids, fans, pairs, partners within `near` ids of each other, or anywhere: 0).
    for &(n, fans, len, near) in &[
        (5_000u32, 0usize, 40_000, 0usize),
        (50_000, 3, 40_000, 0),
        (300_000, 20, 40_000, 0),
        (20_000, 2, 400_000, 0),
        (200_000, 0, 400_000, 500),
    ] {
        let mut keys: Vec<u64> = (0..len)
            .map(|_| {
                let a = r.below(n as usize) as u32;
                let b = if near == 0 {
                    r.below(n as usize) as u32
                } else {
                    (a as usize + r.below(near)).min(n as usize - 1) as u32
                };
                if a == b {
                    key(a, (b + 1) % n)
                } else {
                    key(a, b)
                }
            })
            .collect();
        for f in 0..fans {
            let i = r.below(n as usize / 2) as u32;
            let len = 300 + 500 * f;
            keys.extend((0..len).map(|_| key(i, i + 1 + r.below((n - i - 1) as usize) as u32)));
        }
        keys.sort_unstable();
        keys.dedup();
        let want: Vec<[u32; 2]> = keys.iter().map(|&k| [(k >> 32) as u32, k as u32]).collect();
        // Shuffle, then cut into uneven parts.
        for i in (1..keys.len()).rev() {
            keys.swap(i, r.below(i + 1));
        }
        let mut parts = Vec::new();
        let mut rest = &keys[..];
        while !rest.is_empty() {
            let (head, tail) = rest.split_at(r.below(rest.len() + 1).max(1).min(rest.len()));
            parts.push(head.to_vec());
            rest = tail;
        }
        // The same parts in groups of up to three slices (a sweep chunk's scratch share
        // and its spill blocks), some empty.
        let mut groups: Vec<Vec<&[u64]>> = Vec::new();
        for (k, p) in parts.iter().enumerate() {
            if k % 3 == 0 {
                groups.push(vec![&[]]);
            }
            groups.last_mut().unwrap().push(p);
        }
        let groups: Vec<Vec<&[[u32; 2]]>> =
            groups.iter().map(|g| g.iter().map(|s| bytemuck::cast_slice(s)).collect()).collect();
        let mut grouped = vec![[7, 7]; 3];
        finish_into(&groups, n as usize, &mut grouped);
        assert_eq!(grouped, want, "grouped: n={n} fans={fans} len={len}");
        // The same keys sorted through lent memory: none, too little (the rest in
        // `extra`), and plenty in uneven pieces (some smaller than any bucket), the
        // output holding stale pairs before.
        let total = keys.len();
        for &(pieces, share) in &[(0usize, 0usize), (1, total / 2), (40, 3 * total / 2)] {
            let mut lent: Vec<Vec<[u32; 2]>> =
                (0..pieces).map(|k| vec![[u32::MAX; 2]; (share / pieces.max(1)) >> (k % 5)]).collect();
            let spare: Vec<&mut [[u32; 2]]> = lent.iter_mut().map(|v| v.as_mut_slice()).collect();
            let lent_len: usize = spare.iter().map(|s| s.len()).sum();
            let mut extra = vec![[1, 1]; 5];
            let mut got = vec![[9, 9]; 11];
            Spilled::scatter(&groups, None, n as usize, spare, &mut extra).write(&mut got);
            assert_eq!(got, want, "spilled: n={n} fans={fans} len={len} pieces={pieces}");
            // Keys packed in 32 bits take half a slot.
            let f = if packed_bits(n as usize).is_some() { 2 } else { 1 };
            assert!(f * (extra.len() + lent_len) >= total && (pieces > 0 || f * extra.len() >= total));
            // The same with each group's counts by fine bucket given, as the sweep
            // takes them.
            let (_, shift) = fine_buckets(n as usize);
            let fine: Vec<Vec<u32>> = groups
                .iter()
                .map(|g| {
                    let mut h = vec![0u32; 1 << fine_buckets(n as usize).0];
                    for &s in g.iter().flat_map(|s| s.iter()) {
                        h[(unslot(s) >> shift) as usize] += 1;
                    }
                    h
                })
                .collect();
            let mut lent: Vec<Vec<[u32; 2]>> =
                (0..pieces).map(|k| vec![[u32::MAX; 2]; (share / pieces.max(1)) >> (k % 5)]).collect();
            let spare: Vec<&mut [[u32; 2]]> = lent.iter_mut().map(|v| v.as_mut_slice()).collect();
            let mut got = vec![[9, 9]; 11];
            Spilled::scatter(&groups, Some(&fine), n as usize, spare, &mut extra).write(&mut got);
            assert_eq!(got, want, "counted: n={n} fans={fans} len={len} pieces={pieces}");
        }
        assert_eq!(finish(parts, n as usize), want, "n={n} fans={fans} len={len}");
    }
}

/// Keys pack in 32 bits up to 2^21 boxes: with the fewest buckets packing asks for, a
/// bucket's first indices and a partner index fit side by side, to the last bit,
/// whatever the pair count (and whatever `IDS_PER_BUCKET` asks for besides).
#[test]
fn packed_keys_fit_in_32_bits() {
    for n in [2usize, 3, 1000, 1 << 16, (1 << 16) + 1, 300_000, 1 << 20, (1 << 21) - 1, 1 << 21] {
        let jbits = packed_bits(n).expect("packable");
        assert!(n - 1 <= (low_mask(jbits) as u32) as usize, "n={n}");
        for total in [0, 5000, 1 << 24] {
            let bk = Buckets::count(&[], total, n, packed_min_buckets(jbits));
            assert!(bk.shift - 32 + jbits <= 32, "n={n} total={total}: {} + {jbits} bits", bk.shift - 32);
        }
    }
    assert_eq!(packed_bits((1 << 21) + 1), None);
    assert_eq!(packed_bits(5_000_000), None);
}

/// A bucket whose widest partner offset is a power of two (the key width's edge), one
/// whose partners are all near (one digit), and one whose first index is constant.
/// Sorts `bk` (first indices `i0..i0 + w`) as pairs and, where the indices fit, packed in
/// 32 bits, and checks both against `want`.
fn sort_both(bk: &[[u32; 2]], i0: u32, w: u32, want: &[[u32; 2]], what: &str) {
    let (mut tmp, mut hist, mut tmp32) = (Vec::new(), Vec::new(), Vec::new());
    let mut wide = bk.to_vec();
    sort_bucket(&mut wide, i0, w, 0, &mut tmp, &mut hist);
    assert_eq!(wide, want, "{what}: pairs");
    let jbits = 32 - bk.iter().map(|p| p[1]).max().unwrap_or(0).leading_zeros();
    if 32 - (w - 1).leading_zeros() + jbits > 32 {
        return;
    }
    let mut packed: Vec<u32> = bk.iter().map(|p| (p[0] - i0) << jbits | p[1]).collect();
    let n = packed.len();
    // Through the output's place, as the pair stage sorts (the keys widen in place
    // where the radix sort ends there).
    let mut back: Vec<[u32; 2]> = Vec::with_capacity(n);
    let bucket = Packed { keys: &mut packed, jbits };
    bucket.sort_into(i0, w, (&mut tmp, &mut hist, &mut tmp32), Some(&mut back.spare_capacity_mut()[..n]));
    // SAFETY: `sort_into` wrote all `n` pairs.
    unsafe { back.set_len(n) };
    assert_eq!(back, want, "{what}: packed");
}

/// Fisher-Yates.
fn shuffle(v: &mut [[u32; 2]], r: &mut crate::internals::scene::Rng) {
    for k in (1..v.len()).rev() {
        v.swap(k, r.below(k + 1));
    }
}

/// Sorts and dedups `bk`, returns that order, and leaves `bk` shuffled.
fn sorted_then_shuffled(bk: &mut Vec<[u32; 2]>, r: &mut crate::internals::scene::Rng) -> Vec<[u32; 2]> {
    bk.sort_unstable();
    bk.dedup();
    let want = bk.clone();
    shuffle(bk, r);
    want
}

/// The counting sort for few partners an index ([`sort_sparse`]), wide and packed: runs
/// of zero to six partners an index (two and three take the exchanges), every order of
/// each short run, partners equal to their neighbours' but for one bit.
#[test]
fn sparse_sort_orders_short_runs() {
    let mut r = crate::internals::scene::Rng::new(17);
    let (i0, w) = (64u32, 64u32);
    for round in 0..200 {
        let mut bk: Vec<[u32; 2]> = Vec::new();
        for i in i0..i0 + w {
            let len = (i as usize + round) % 7;
            let base = i + 1 + r.below(1000) as u32 * 2;
            let mut run: Vec<[u32; 2]> = (0..len as u32).map(|k| [i, base + k * (1 + k % 2)]).collect();
            shuffle(&mut run, &mut r);
            bk.extend(run);
        }
        let want = sorted_then_shuffled(&mut bk, &mut r);
        let jbits = 32 - want.iter().map(|p| p[1]).max().unwrap_or(0).leading_zeros();
        let (mut tmp, mut hist) = (Vec::new(), Vec::new());
        let mut wide = bk.clone();
        sort_sparse(&mut wide, i0, w, 0, &mut tmp, &mut hist);
        assert_eq!(wide, want, "round {round}: pairs");
        let mut packed: Vec<u32> = bk.iter().map(|p| (p[0] - i0) << jbits | p[1]).collect();
        sort_sparse(&mut packed, i0, w, jbits, &mut Vec::new(), &mut hist);
        let back: Vec<[u32; 2]> =
            packed.iter().map(|&k| [i0 + (k >> jbits), k & (low_mask(jbits) as u32)]).collect();
        assert_eq!(back, want, "round {round}: packed");
    }
}

#[test]
fn sort_bucket_edges() {
    let mut r = crate::internals::scene::Rng::new(5);
    let (i0, w) = (1000u32, 16u32);
    for &(reach, firsts) in &[(4096u32, 16u32), (100, 16), (5000, 1)] {
        let mut bk: Vec<[u32; 2]> = (0..6000)
            .map(|_| {
                let i = i0 + r.below(firsts as usize) as u32;
                [i, (i + 1 + r.below(reach as usize) as u32).min(i0 + reach)]
            })
            .collect();
        bk.push([i0, i0 + reach]);
        // Grouped by first index, partners in random order: the radix path (many
        // descents), not the counting sort for ordered partners.
        bk.sort_by_key(|p| p[0]);
        let mut want = bk.clone();
        want.sort_unstable();
        sort_both(&bk, i0, w, &want, &format!("reach {reach}"));
    }
    // Buckets of fewer pairs than the fewest radix digits' counters, with partners at
    // random: at least a quarter of a pair an index (the counting sort), and fewer
    // (more, narrower digits; `sort_unstable` for 17 pairs); some indices with several
    // partners, the tmp and hist buffers reused from above.
    let (i0, w) = (70_000u32, 4096u32);
    for &len in &[w as usize / 4, 3000, w as usize / 4 - 1, 17] {
        let mut bk: Vec<[u32; 2]> = (0..len)
            .map(|_| {
                let i = i0 + r.below(w as usize / 8) as u32 * 8;
                [i, i + 1 + r.below(1 << 20) as u32]
            })
            .collect();
        let want = sorted_then_shuffled(&mut bk, &mut r);
        sort_both(&bk, i0, w, &want, &format!("len {len}"));
    }
    // Six partners an index in random order and a 22-bit key: two 11-bit digits would
    // be 4,096 counters for 3,000 pairs, so three narrower ones (a bucket of 10k
    // clustered boxes at 2 threads).
    let (i0, w) = (2048u32, 512u32);
    let mut bk: Vec<[u32; 2]> = (0..3000)
        .map(|_| {
            let i = i0 + r.below(w as usize) as u32;
            [i, i + 1 + r.below(7000) as u32]
        })
        .collect();
    let want = sorted_then_shuffled(&mut bk, &mut r);
    sort_both(&bk, i0, w, &want, "22-bit key");
    // Packed keys of all 32 bits (three digits): 2,048 first indices, partners up to
    // 2^21 - 1, at random and then nearly in order (a few neighbours swapped: the
    // counting sort below `ORDERED_PACKED` pairs an index, the radix sort above).
    let (i0, w) = (1u32 << 20, 2048u32);
    for per in [5usize, 20] {
        let mut bk: Vec<[u32; 2]> = (0..per * w as usize)
            .map(|_| {
                let i = i0 + r.below(w as usize) as u32;
                [i, i + 1 + r.below((1 << 21) - 1 - i as usize) as u32]
            })
            .collect();
        bk.push([i0, (1 << 21) - 1]);
        bk.sort_unstable();
        bk.dedup();
        let want = bk.clone();
        for k in (1..bk.len()).step_by(97) {
            bk.swap(k - 1, k);
        }
        sort_both(&bk, i0, w, &want, &format!("32-bit key, {per} an index, nearly in order"));
        shuffle(&mut bk, &mut r);
        sort_both(&bk, i0, w, &want, &format!("32-bit key, {per} an index, at random"));
    }
}
