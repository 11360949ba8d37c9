//! The world's queries: the objects in a region or at a point, and the objects along a ray
//! (the closest, all of them, or each to a visitor that may stop).
//!
//! - Input: a region, point or ray, a [`Select`] of kinds and an optional [`Filter`].
//!   Output: handles (sorted by handle), or hits `(handle, t)`.
//! - What a query sees: every call made so far, changes since the last update included
//!   (the boxes as [`World::aabb`] returns them, not grown by the margin). Objects clean
//!   since the last update are found through the search's trees (`world::search::query`),
//!   whose leaves hold their boxes; the objects changed since are each tested directly.
//! - Cost: O(log n + k) a query for k candidates, plus one test for each object changed
//!   since the last update: call [`World::update`] before many queries after many changes.
//! - Threads: none for one query; the batches (`world::batch`) run on the caller's pool.
//! - Allocation: none beyond the caller's output.
//! - Errors: a NaN, infinite or inverted region is [`Error::InvalidBox`]; a non-finite
//!   point or origin, a zero or non-finite direction, or a NaN or negative `max_t` is
//!   [`Error::InvalidQuery`]. Nothing panics.
//! - Source: the slab test (Kay and Kajiya, "Ray tracing complex scenes", 1986) for rays;
//!   the stack walks of the tree stage for both.

use super::search::Sight;
use super::{Filter, Handle, Kind, World};
use crate::bvh::RayTest;
use crate::{Aabb, Error};
use std::ops::ControlFlow;

/// Which objects a query searches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Select {
    /// Only [`Kind::Static`] objects.
    Static,
    /// Only [`Kind::Dynamic`] and [`Kind::Kinematic`] objects.
    Dynamic,
    /// Every object.
    #[default]
    All,
}

impl Select {
    fn statics(self) -> bool {
        self != Select::Dynamic
    }

    fn dynamics(self) -> bool {
        self != Select::Static
    }

    fn takes(self, k: Kind) -> bool {
        match k {
            Kind::Static => self.statics(),
            Kind::Kinematic | Kind::Dynamic => self.dynamics(),
        }
    }
}

/// A ray `origin + t * dir` for `0 <= t <= max_t` (so `t` is in units of `dir`'s length),
/// as the batched casts take it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray<const D: usize> {
    /// Where the ray starts: finite.
    pub origin: [f32; D],
    /// Its direction: finite, not zero (need not be of unit length).
    pub dir: [f32; D],
    /// How far it goes, in units of `dir`: at least 0, not NaN (may be infinite).
    pub max_t: f32,
}

impl<const D: usize> Ray<D> {
    /// The ray from `origin` along `dir` up to `max_t` (checked where it is cast).
    pub const fn new(origin: [f32; D], dir: [f32; D], max_t: f32) -> Self {
        Self { origin, dir, max_t }
    }

    /// Checks the ray; `index` names it in the error.
    pub(crate) fn check(&self, index: usize) -> Result<RayTest<D>, Error> {
        let bad = |reason| Err(Error::InvalidQuery { index, reason });
        if !self.origin.iter().all(|x| x.is_finite()) {
            return bad("ray origin is not finite");
        }
        if !self.dir.iter().all(|x| x.is_finite()) {
            return bad("ray direction is not finite");
        }
        if self.dir.iter().all(|&x| x == 0.0) {
            return bad("ray direction is zero");
        }
        if self.max_t.is_nan() || self.max_t < 0.0 {
            return bad("ray max_t is NaN or negative");
        }
        Ok(self.prepared())
    }

    /// The ray prepared for slab tests, for a ray already checked.
    pub(crate) fn prepared(&self) -> RayTest<D> {
        RayTest::new(self.origin, self.dir, self.max_t)
    }
}

/// Checks a point; `index` names it in the error.
pub(crate) fn check_point<const D: usize>(p: &[f32; D], index: usize) -> Result<Aabb<D>, Error> {
    if p.iter().all(|x| x.is_finite()) {
        Ok(Aabb { min: *p, max: *p })
    } else {
        Err(Error::InvalidQuery { index, reason: "point is not finite" })
    }
}

impl<const D: usize> World<D> {
    /// Every live object of the `select`ed kinds whose box overlaps `region` (closed boxes:
    /// touching counts) and whose filter `filter` accepts (as for pairs: each one's
    /// membership meets the other's mask; `None` takes every object), into `out` (cleared
    /// first), sorted by handle. See the module docs for what a query sees and costs.
    ///
    /// ```
    /// use broadphase::{Aabb2, Config, Kind, Select, World2};
    /// let mut world = World2::new(Config::default())?;
    /// let wall = world.insert(Aabb2::new([0.0, 0.0], [1.0, 10.0]), Kind::Static)?;
    /// let ball = world.insert(Aabb2::new([5.0, 5.0], [6.0, 6.0]), Kind::Dynamic)?;
    /// world.update()?;
    /// let mut out = Vec::new();
    /// world.query_aabb(Aabb2::new([0.5, 4.0], [5.0, 5.0]), Select::All, None, &mut out)?;
    /// assert_eq!(out, [wall, ball]);
    /// assert_eq!(world.cast_ray([3.0, 5.5], [1.0, 0.0], 10.0, Select::All, None)?, Some((ball, 2.0)));
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    pub fn query_aabb(
        &self,
        region: Aabb<D>,
        select: Select,
        filter: Option<Filter>,
        out: &mut Vec<Handle>,
    ) -> Result<(), Error> {
        super::check(&region, 0)?;
        out.clear();
        self.region_into(&region, select, filter, out);
        Ok(())
    }

    /// [`World::query_aabb`] for the point `point` (a box of zero size).
    pub fn query_point(
        &self,
        point: [f32; D],
        select: Select,
        filter: Option<Filter>,
        out: &mut Vec<Handle>,
    ) -> Result<(), Error> {
        let region = check_point(&point, 0)?;
        out.clear();
        self.region_into(&region, select, filter, out);
        Ok(())
    }

    /// Each object [`World::query_aabb`] would return, to `visit`, in no set order, until
    /// `visit` breaks; returns what the last call of `visit` did (`Continue` if none).
    pub fn query_aabb_each(
        &self,
        region: Aabb<D>,
        select: Select,
        filter: Option<Filter>,
        visit: impl FnMut(Handle) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, Error> {
        super::check(&region, 0)?;
        Ok(self.each_in(&region, select, filter, visit))
    }

    /// The closest object of the `select`ed kinds, accepted by `filter`, whose box the ray
    /// `origin + t * dir`, `0 <= t <= max_t`, meets, with the `t` where it enters the box
    /// (0 for a box the ray starts in; closed boxes, so a ray grazing a face or an edge
    /// hits). Ties go to the lower handle.
    ///
    /// The slab test: per axis, `t = (bound - origin) * (1 / dir)`, rounded as `f32`; an
    /// axis whose direction component is 0 (or so small that its reciprocal overflows)
    /// needs the origin within the box's bounds there.
    pub fn cast_ray(
        &self,
        origin: [f32; D],
        dir: [f32; D],
        max_t: f32,
        select: Select,
        filter: Option<Filter>,
    ) -> Result<Option<(Handle, f32)>, Error> {
        let ray = Ray::new(origin, dir, max_t).check(0)?;
        Ok(self.closest(&ray, select, filter))
    }

    /// Every hit [`World::cast_ray`] considers, into `out` (cleared first), sorted by
    /// `(t, handle)`.
    #[allow(clippy::too_many_arguments)]
    pub fn cast_ray_all(
        &self,
        origin: [f32; D],
        dir: [f32; D],
        max_t: f32,
        select: Select,
        filter: Option<Filter>,
        out: &mut Vec<(Handle, f32)>,
    ) -> Result<(), Error> {
        let ray = Ray::new(origin, dir, max_t).check(0)?;
        out.clear();
        self.hits_into(&ray, select, filter, out);
        Ok(())
    }

    /// Each hit of [`World::cast_ray_all`] to `visit`, in no set order (nearer parts of the
    /// world first), until `visit` breaks; returns what the last call of `visit` did.
    #[allow(clippy::too_many_arguments)]
    pub fn cast_ray_each(
        &self,
        origin: [f32; D],
        dir: [f32; D],
        max_t: f32,
        select: Select,
        filter: Option<Filter>,
        mut visit: impl FnMut(Handle, f32) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, Error> {
        let ray = Ray::new(origin, dir, max_t).check(0)?;
        let mut cut = ray.max_t();
        Ok(self.ray_each(&ray, &mut cut, select, filter, |h, t, _| visit(h, t)))
    }

    /// Whether live slot `s` is of a selected kind and passes the filter.
    #[inline]
    fn takes(&self, s: usize, select: Select, filter: Option<Filter>) -> bool {
        select.takes(self.store.kinds[s]) && self.passes(s, filter)
    }

    /// The live handle of slot `s`.
    #[inline]
    fn handle_of(&self, s: u32) -> Handle {
        Handle::new(s, self.slots.generations[s as usize])
    }

    /// The region query's hits appended to `out`, that part sorted.
    pub(crate) fn region_into(
        &self,
        region: &Aabb<D>,
        select: Select,
        filter: Option<Filter>,
        out: &mut Vec<Handle>,
    ) {
        let start = out.len();
        let _ = self.each_in(region, select, filter, |h| {
            out.push(h);
            ControlFlow::Continue(())
        });
        sort_by_index(&mut out[start..]);
    }

    /// What the search's side of a query reads.
    fn sight(&self, select: Select) -> Sight<'_, D> {
        Sight {
            statics: select.statics(),
            dynamics: select.dynamics(),
            dirty: &self.dirty,
            store: &self.store,
            generations: &self.slots.generations,
            margin: self.config.margin,
        }
    }

    /// Whether slot `s` passes the filter.
    #[inline]
    fn passes(&self, s: usize, filter: Option<Filter>) -> bool {
        filter.map_or(true, |f| f.accepts(self.store.filter(s)))
    }

    /// Each object in the region: the clean ones through the trees (which hold each kind
    /// apart), then the changed ones.
    fn each_in(
        &self,
        region: &Aabb<D>,
        select: Select,
        filter: Option<Filter>,
        mut visit: impl FnMut(Handle) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.scratch.search.region_hits(region, &self.sight(select), |s, g| {
            if self.passes(s as usize, filter) {
                visit(Handle::new(s, g))
            } else {
                ControlFlow::Continue(())
            }
        })?;
        for &s in self.dirty.list() {
            let si = s as usize;
            if self.slots.alive[si] && self.store.boxes[si].overlaps(region) && self.takes(si, select, filter)
            {
                visit(self.handle_of(s))?;
            }
        }
        ControlFlow::Continue(())
    }

    /// Each hit at `t <= *cut` to `visit(handle, t, cut)`: the clean objects through the
    /// trees, nearer subtrees first, then the changed ones.
    fn ray_each(
        &self,
        ray: &RayTest<D>,
        cut: &mut f32,
        select: Select,
        filter: Option<Filter>,
        mut visit: impl FnMut(Handle, f32, &mut f32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.scratch.search.ray_hits(ray, cut, &self.sight(select), |s, g, t, cut| {
            if self.passes(s as usize, filter) {
                visit(Handle::new(s, g), t, cut)
            } else {
                ControlFlow::Continue(())
            }
        })?;
        for &s in self.dirty.list() {
            let si = s as usize;
            if !self.slots.alive[si] || !self.takes(si, select, filter) {
                continue;
            }
            if let Some(t) = ray.enters_box(&self.store.boxes[si], *cut) {
                visit(self.handle_of(s), t, cut)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// The closest hit, ties to the lower handle.
    pub(crate) fn closest(
        &self,
        ray: &RayTest<D>,
        select: Select,
        filter: Option<Filter>,
    ) -> Option<(Handle, f32)> {
        let mut best: Option<(Handle, f32)> = None;
        let mut cut = ray.max_t();
        let _ = self.ray_each(ray, &mut cut, select, filter, |h, t, cut| {
            if best.map_or(true, |(bh, bt)| t < bt || (t == bt && h < bh)) {
                best = Some((h, t));
                *cut = t;
            }
            ControlFlow::Continue(())
        });
        best
    }

    /// Every hit appended to `out`, that part sorted by `(t, handle)`.
    pub(crate) fn hits_into(
        &self,
        ray: &RayTest<D>,
        select: Select,
        filter: Option<Filter>,
        out: &mut Vec<(Handle, f32)>,
    ) {
        let start = out.len();
        let mut cut = ray.max_t();
        let _ = self.ray_each(ray, &mut cut, select, filter, |h, t, _| {
            out.push((h, t));
            ControlFlow::Continue(())
        });
        out[start..].sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    }
}

/// Sorts the handles of distinct live objects by index (their slots are distinct, so the
/// index alone orders them and there is one result): a comparison sort for a few, else
/// an LSD radix sort by the index's bytes, each pass skipped where every handle shares
/// its byte. A large region's thousand hits sorted by comparison cost about as much as
/// its walk. PERF: benches/queries.rs (`regions_large`).
fn sort_by_index(v: &mut [Handle]) {
    if v.len() < 256 {
        v.sort_unstable_by_key(|h| h.index());
        return;
    }
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<Handle>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|scratch| {
        let mut scratch = scratch.borrow_mut();
        scratch.clear();
        scratch.resize(v.len(), Handle::new(0, 0));
        let mut in_scratch = false;
        for shift in [0u32, 8, 16, 24] {
            let (src, dst): (&[Handle], &mut [Handle]) =
                if in_scratch { (&scratch[..], &mut *v) } else { (&*v, &mut scratch[..]) };
            let mut at = [0usize; 256];
            for h in src {
                at[(h.index() >> shift) as usize & 255] += 1;
            }
            if at.contains(&src.len()) {
                continue;
            }
            let mut sum = 0;
            for c in at.iter_mut() {
                (*c, sum) = (sum, sum + *c);
            }
            for &h in src {
                let d = (h.index() >> shift) as usize & 255;
                dst[at[d]] = h;
                at[d] += 1;
            }
            in_scratch = !in_scratch;
        }
        if in_scratch {
            v.copy_from_slice(&scratch);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::{sort_by_index, Handle};
    use crate::internals::scene::Rng;

    /// The radix path and the comparison path agree with a plain sort, on sizes around
    /// the switch and on indices that share their high bytes (passes skipped).
    #[test]
    fn handles_sort_by_index() {
        let mut rng = Rng::new(4);
        for (n, span) in [
            (10, 1u32 << 31),
            (255, 1 << 31),
            (256, 1 << 31),
            (3000, 1 << 31),
            (3000, 4096),
            (70_000, 1 << 20),
        ] {
            let mut idx: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32 % span).collect();
            idx.sort_unstable();
            idx.dedup();
            let mut want: Vec<Handle> = idx.iter().map(|&i| Handle::new(i, i ^ 7)).collect();
            let mut got = want.clone();
            for i in (1..got.len()).rev() {
                got.swap(i, rng.below(i + 1));
            }
            sort_by_index(&mut got);
            want.sort_unstable();
            assert_eq!(got, want, "n = {n}, span = {span}");
        }
    }
}
