//! Hysteresis ([`Config::hysteresis`](crate::Config::hysteresis)): the pairs an update
//! keeps though their boxes have parted, and the events that rule leaves.
//!
//! - The rule: a pair begins when its margin-grown boxes overlap (as without hysteresis)
//!   and, once begun, ends only when a member is removed, the kinds or filters refuse it,
//!   or its margin-grown boxes lie more than `h` apart on some axis ([`near`]). So the
//!   stored pairs are those that overlap now plus the pairs of the last update that are
//!   still near: a set that depends on the past, which the candidate search (a function
//!   of the boxes before and after a frame) cannot see alone.
//! - The state: [`Apart::kept`], the stored pairs whose boxes did not overlap at the last
//!   update, sorted. INVARIANT: the stored pairs are the overlapping pairs and `kept`,
//!   disjoint; every pair in `kept` is near (`World::validate`).
//! - Input: the frame's differences from the search, `removed` (stored pairs with a
//!   changed member that no longer overlap, or every stored pair that no longer does
//!   where the frame was found whole) and `added` (overlapping pairs that did not
//!   overlap), both sorted. Output: the events under the rule, in place, and the next
//!   `kept`, taken on success ([`Apart::commit`]).
//! - Each candidate to end (a removed pair, or a kept pair with a changed member) is
//!   classed by the boxes now: overlapping (it leaves `kept`), near (it stays stored, in
//!   `kept`, no event) or apart, dead or refused (it ends). An added pair already in
//!   `kept` was stored all along: no event.
//! - Cost: O(kept + removed + added) a frame with changes, all merges of sorted lists;
//!   nothing at all where `h` is 0 (then `kept` is always empty). Threads: the classing
//!   on the caller's pool where many pairs are candidates; the same bytes for any thread
//!   count (sorted inputs, sorted outputs). Allocation: buffers kept from frame to frame.
//! - Source: the hysteresis of contact caches in physics engines (Box2D's and Bullet's
//!   fat boxes give the same damping by keeping a proxy until it leaves an enlarged box);
//!   here it is exact, a rule on the boxes themselves.

use super::dirty::Dirty;
use super::handle::Slots;
use super::store::{grown_pair, pairable, Store};
use super::Handle;
use crate::par::prelude::*;
use crate::{Aabb, Error};

/// Whether margin-grown boxes `a` and `b` lie within `h` of each other on every axis:
/// `a.min - h <= b.max` and `b.min - h <= a.max` (in `f32`; symmetric in `a` and `b`,
/// implied by their overlap).
#[inline]
pub(crate) fn near<const D: usize>(a: &Aabb<D>, b: &Aabb<D>, h: f32) -> bool {
    (0..D).all(|k| a.min[k] - h <= b.max[k] && b.min[k] - h <= a.max[k])
}

/// What the boxes now make of a stored pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// The margin-grown boxes overlap: stored, not kept.
    Overlapping,
    /// Apart but near: stored and kept.
    Near,
    /// A member gone, the rule refusing it, or the boxes too far: it ends.
    Ended,
}

/// The class of the pair `p` (named as of the last update) as the world is now.
pub(crate) fn class<const D: usize>(
    p: [Handle; 2],
    slots: &Slots,
    store: &Store<D>,
    margin: f32,
    h: f32,
) -> Class {
    let (Ok(a), Ok(b)) = (slots.slot(p[0]), slots.slot(p[1])) else {
        return Class::Ended;
    };
    if !pairable(store.kinds[a], store.filter(a), store.kinds[b], store.filter(b)) {
        return Class::Ended;
    }
    match grown_pair(&store.boxes[a], &store.boxes[b], margin) {
        Some((x, y)) if x.overlaps(&y) => Class::Overlapping,
        Some((x, y)) if near(&x, &y, h) => Class::Near,
        _ => Class::Ended,
    }
}

/// Candidates classed on one thread below this many.
const SERIAL_MAX: usize = 4096;

/// The kept pairs and the buffers of the step that updates them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Apart {
    /// The stored pairs whose margin-grown boxes did not overlap at the last update
    /// (each within the hysteresis), sorted, named as of the last update.
    pub(crate) kept: Vec<[Handle; 2]>,
    /// The next `kept`, taken by [`Apart::commit`].
    next: Vec<[Handle; 2]>,
    /// The frame's candidates to end, sorted, and their classes.
    candidates: Vec<[Handle; 2]>,
    classes: Vec<Class>,
    /// The events as the rule leaves them (swapped with the caller's).
    out: Vec<[Handle; 2]>,
}

impl Apart {
    /// Heap bytes held, from capacities.
    pub(crate) fn bytes(&self) -> usize {
        let pair = std::mem::size_of::<[Handle; 2]>();
        (self.kept.capacity() + self.next.capacity() + self.candidates.capacity() + self.out.capacity())
            * pair
            + self.classes.capacity()
    }

    /// Rewrites the frame's differences `removed` and `added` (sorted) into its events
    /// under hysteresis `h` (module docs), and finds the next `kept`. Changes nothing the
    /// world reads until [`Apart::commit`]; a refused allocation is
    /// [`Error::OutOfMemory`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn events<const D: usize>(
        &mut self,
        h: f32,
        margin: f32,
        slots: &Slots,
        store: &Store<D>,
        changed: &Dirty,
        removed: &mut Vec<[Handle; 2]>,
        added: &mut Vec<[Handle; 2]>,
    ) -> Result<(), Error> {
        let oom = |_| Error::OutOfMemory { pairs: removed.len() + added.len() + self.kept.len() };
        // The candidates: the removed pairs and the kept pairs with a changed member.
        let touched = |p: &[Handle; 2]| changed.contains(p[0].index()) || changed.contains(p[1].index());
        self.candidates.clear();
        self.candidates.try_reserve(removed.len() + self.kept.len()).map_err(oom)?;
        union(removed, self.kept.iter().filter(|p| touched(p)).copied(), &mut self.candidates);
        let classify = |&p: &[Handle; 2]| class(p, slots, store, margin, h);
        self.classes.clear();
        self.classes.try_reserve(self.candidates.len()).map_err(oom)?;
        if self.candidates.len() < SERIAL_MAX {
            self.classes.extend(self.candidates.iter().map(classify));
        } else {
            self.classes.par_extend(self.candidates.par_iter().map(classify));
        }
        // The next kept pairs: the kept ones not candidates, and the candidates near.
        self.next.clear();
        self.next.try_reserve(self.kept.len() + self.candidates.len()).map_err(oom)?;
        let near =
            self.candidates.iter().zip(&self.classes).filter(|&(_, &c)| c == Class::Near).map(|(p, _)| *p);
        let mut kept =
            self.kept.iter().copied().filter(|p| self.candidates.binary_search(p).is_err()).peekable();
        union_iters(&mut kept, near, &mut self.next);
        // The events: the candidates that end; the added pairs not kept (those were
        // stored all along).
        self.out.clear();
        self.out.try_reserve(self.candidates.len()).map_err(oom)?;
        let ended = self.candidates.iter().zip(&self.classes).filter(|&(_, &c)| c == Class::Ended);
        self.out.extend(ended.map(|(p, _)| *p));
        std::mem::swap(removed, &mut self.out);
        if !self.kept.is_empty() {
            let kept = &self.kept;
            added.retain(|p| kept.binary_search(p).is_err());
        }
        Ok(())
    }

    /// Takes the next `kept` found by [`Apart::events`]: called once the update cannot
    /// fail any more.
    pub(crate) fn commit(&mut self) {
        std::mem::swap(&mut self.kept, &mut self.next);
    }
}

/// The sorted union of sorted, unique `a` and sorted, unique `b` into `out`.
fn union(a: &[[Handle; 2]], b: impl Iterator<Item = [Handle; 2]>, out: &mut Vec<[Handle; 2]>) {
    union_iters(&mut a.iter().copied().peekable(), b, out);
}

/// The sorted union of two sorted, unique sequences into `out`.
fn union_iters(
    a: &mut std::iter::Peekable<impl Iterator<Item = [Handle; 2]>>,
    b: impl Iterator<Item = [Handle; 2]>,
    out: &mut Vec<[Handle; 2]>,
) {
    for y in b {
        while let Some(&x) = a.peek() {
            if x < y {
                out.push(x);
                a.next();
            } else {
                if x == y {
                    a.next();
                }
                break;
            }
        }
        out.push(y);
    }
    out.extend(a);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(i: u32) -> [Handle; 2] {
        [Handle::new(0, 0), Handle::new(i, 0)]
    }

    #[test]
    fn union_merges_and_drops_repeats() {
        let mut out = Vec::new();
        union(&[h(1), h(3), h(5)], [h(2), h(3), h(6)].into_iter(), &mut out);
        assert_eq!(out, [h(1), h(2), h(3), h(5), h(6)]);
        out.clear();
        union(&[], [h(2)].into_iter(), &mut out);
        assert_eq!(out, [h(2)]);
        out.clear();
        union(&[h(4)], std::iter::empty(), &mut out);
        assert_eq!(out, [h(4)]);
    }

    #[test]
    fn near_is_within_h_on_every_axis_and_symmetric() {
        let a = Aabb::new([0.0, 0.0], [1.0, 1.0]);
        let b = Aabb::new([1.5, 0.0], [2.0, 1.0]);
        assert!(near(&a, &b, 0.5) && near(&b, &a, 0.5));
        assert!(!near(&a, &b, 0.49) && !near(&b, &a, 0.49));
        let c = Aabb::new([1.2, 1.2], [2.0, 2.0]);
        assert!(near(&a, &c, 0.2) && !near(&a, &c, 0.1));
        assert!(near(&a, &a, 0.0));
    }
}
