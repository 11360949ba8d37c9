//! The trees' side of the world's queries: the clean objects whose leaves a region meets
//! or a ray enters. The caller adds the objects changed since the last update (which the
//! trees do not know yet) and tests each candidate's own box.
//!
//! - Input: a region or a [`RayTest`], which kinds to search, the dirty set. Output: each
//!   candidate slot once (a clean live object of a selected kind), to a visitor.
//! - Cost: one walk of each selected tree, O(log n + candidates), plus the short list of
//!   dynamic objects without a leaf.
//! - Threads: none (batches run queries in parallel above it). Allocation: none.
//! - Source: the walks of [`crate::bvh`]; the leaves are the boxes grown by the tree
//!   margin (statics) or fat (dynamics), so each holds its object's box as it was set.

use super::{Search, NONE};
use crate::bvh::RayTest;
use crate::world::dirty::Dirty;
use crate::Aabb;
use std::ops::ControlFlow;

impl<const D: usize> Search<D> {
    /// Each clean object of the selected kinds whose leaf meets `region` (a superset of
    /// those whose boxes do), by slot.
    pub(crate) fn region_candidates(
        &self,
        region: &Aabb<D>,
        statics: bool,
        dynamics: bool,
        dirty: &Dirty,
        mut visit: impl FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if statics {
            self.statics.query(region, |p| {
                let s = self.static_slots[self.statics.ids[p] as usize];
                if dirty.contains(s) {
                    return ControlFlow::Continue(());
                }
                visit(s)
            })?;
        }
        if dynamics {
            self.dynamics.query(region, |p| {
                let s = self.pos_slot[p];
                if s == NONE || dirty.contains(s) {
                    return ControlFlow::Continue(());
                }
                visit(s)
            })?;
            for &s in &self.extras {
                if !dirty.contains(s) {
                    visit(s)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Each clean object of the selected kinds whose leaf the ray enters at `t <= *cut`,
    /// nearer subtrees first, by slot; `visit` may lower `*cut` or stop.
    pub(crate) fn ray_candidates(
        &self,
        ray: &RayTest<D>,
        cut: &mut f32,
        statics: bool,
        dynamics: bool,
        dirty: &Dirty,
        mut visit: impl FnMut(u32, &mut f32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if statics {
            self.statics.cast(ray, cut, |p, _, cut| {
                let s = self.static_slots[self.statics.ids[p] as usize];
                if dirty.contains(s) {
                    return ControlFlow::Continue(());
                }
                visit(s, cut)
            })?;
        }
        if dynamics {
            self.dynamics.cast(ray, cut, |p, _, cut| {
                let s = self.pos_slot[p];
                if s == NONE || dirty.contains(s) {
                    return ControlFlow::Continue(());
                }
                visit(s, cut)
            })?;
            for &s in &self.extras {
                if !dirty.contains(s) {
                    visit(s, cut)?;
                }
            }
        }
        ControlFlow::Continue(())
    }
}
