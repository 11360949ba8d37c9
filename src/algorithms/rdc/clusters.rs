//! The final groups of a clustering as one canonical list ([`Clusters`]), and its
//! assembly from the kernel's permuted records.
//!
//! - Input: the permuted records, the tasks' group ranges, the dead (inverted) boxes.
//!   Output: [`Clusters`]: members ascending, groups by smallest member, `group_of`.
//! - Cost: O(n log g) for the sorts of members and groups.
//! - Parallel: the member sorts and the group order (rayon); the result does not depend
//!   on the thread count.
//! - Allocation: the three vectors of [`Clusters`], the ids and the group order.
//! - Source: this crate.

use super::Rec;
use crate::par::prelude::*;
use crate::Error;

/// The final groups of a clustering, compressed: group `g` is
/// `members[offsets[g]..offsets[g + 1]]`.
///
/// INVARIANT (checked by [`Clusters::validate`]): every box is in exactly one group;
/// members ascend inside a group; groups are ordered by their smallest member; every
/// overlapping pair lies inside one group. A group need not be connected: RDC separates
/// boxes only where an axis has a gap, so with `min_group_size = 1` a group is a union of
/// overlap-connected components that no axis separates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Clusters {
    /// `len() + 1` ascending offsets into `members`, starting at 0.
    pub offsets: Vec<u32>,
    /// Box indices, group after group.
    pub members: Vec<u32>,
    /// `group_of[i]`: the group holding box `i`.
    pub group_of: Vec<u32>,
}

impl Clusters {
    /// Number of groups.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// True when there are no groups (no boxes).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The members of group `g`, ascending.
    pub fn group(&self, g: usize) -> &[u32] {
        &self.members[self.offsets[g] as usize..self.offsets[g + 1] as usize]
    }

    /// The groups in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        (0..self.len()).map(move |g| self.group(g))
    }

    /// Checks the structural invariants (not the geometric ones, which need the boxes):
    /// every box in exactly one group, groups non-empty, members ascending, groups ordered
    /// by their smallest member. A failure is [`Error::Invariant`].
    pub fn validate(&self) -> Result<(), Error> {
        self.check().map_err(|detail| Error::Invariant { detail })
    }

    fn check(&self) -> Result<(), String> {
        let n = self.group_of.len();
        if self.members.len() != n {
            return Err(format!("{} members for {n} boxes", self.members.len()));
        }
        if self.offsets.first() != Some(&0) || *self.offsets.last().unwrap() as usize != n {
            return Err("offsets must run from 0 to the number of boxes".into());
        }
        if self.offsets.windows(2).any(|w| w[0] >= w[1]) {
            return Err("offsets must strictly ascend (no empty group)".into());
        }
        let mut seen = vec![false; n];
        let mut prev_first = None;
        for (g, m) in self.iter().enumerate() {
            if m.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!("group {g}: members not ascending"));
            }
            if prev_first.is_some_and(|p| p >= m[0]) {
                return Err(format!("group {g}: not ordered by smallest member"));
            }
            prev_first = Some(m[0]);
            for &i in m {
                let i = i as usize;
                if i >= n || seen[i] {
                    return Err(format!("box {i} out of range or in two groups"));
                }
                seen[i] = true;
                if self.group_of[i] as usize != g {
                    return Err(format!("group_of[{i}] = {}, but it is in group {g}", self.group_of[i]));
                }
            }
        }
        Ok(())
    }
}

/// Builds the canonical [`Clusters`] from the permuted records, the tasks' group ranges,
/// and the dead (inverted) boxes, each a group of its own.
pub(super) fn assemble<const D: usize>(
    n: usize,
    recs: &[Rec<D>],
    mut ranges: Vec<(usize, usize)>,
    dead: &[u32],
) -> Clusters {
    ranges.sort_unstable();
    // INVARIANT: the final groups tile the record buffer.
    debug_assert!(ranges.iter().try_fold(0, |at, &(a, l)| (a == at).then_some(a + l)) == Some(recs.len()));
    let mut ids: Vec<u32> = Vec::new();
    recs.par_iter().with_min_len(4096).map(|r| r.id).collect_into_vec(&mut ids);
    let mut slices = Vec::with_capacity(ranges.len());
    let mut rest = &mut ids[..];
    for &(_, len) in &ranges {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
        slices.push(head);
        rest = tail;
    }
    slices.par_iter_mut().with_min_len(256).for_each(|g| g.sort_unstable());
    // Groups by smallest member; a dead box is a group of its own.
    let mut order: Vec<(u32, &[u32])> = slices.iter().map(|g| (g[0], &**g)).collect();
    order.extend(dead.iter().map(|d| (*d, std::slice::from_ref(d))));
    order.par_sort_unstable_by_key(|&(first, _)| first);
    let mut c = Clusters {
        offsets: Vec::with_capacity(order.len() + 1),
        members: Vec::with_capacity(n),
        group_of: vec![0; n],
    };
    c.offsets.push(0);
    for (g, (_, m)) in order.iter().enumerate() {
        c.members.extend_from_slice(m);
        for &i in *m {
            c.group_of[i as usize] = g as u32;
        }
        c.offsets.push(c.members.len() as u32);
    }
    debug_assert_eq!(c.validate(), Ok(()));
    c
}
