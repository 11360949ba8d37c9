//! The query filter: which objects a query may return, one value for every query.
//!
//! - Input: the caller's choice of kinds, a one-way group mask, handles to leave out and
//!   a predicate on `(handle, user data)`. Output: whether an object passes.
//! - The trees hold the static objects apart from the moving ones, so the kinds pick the
//!   trees a query walks; everything else is a test of each object a walk finds, skipped
//!   where the filter takes every object of the trees walked ([`QueryFilter::plain`]).
//! - Cost: O(1) an object, plus a pass over the excluded handles (a short list: the
//!   caster and its parts) and the predicate's own cost. Allocation: none.
//! - Source: the shape of rapier's `QueryFilter` (kinds, groups, an excluded collider, a
//!   predicate) and avian's `SpatialQueryFilter` (a mask, excluded entities); the mask
//!   is one-way, as theirs are for queries.

use crate::world::{Handle, Kind};

/// The bit of each kind in [`QueryFilter`]'s set of kinds.
const fn bit(k: Kind) -> u8 {
    match k {
        Kind::Static => 1,
        Kind::Kinematic => 2,
        Kind::Dynamic => 4,
    }
}

/// Every kind.
const ALL: u8 = 7;

/// Which objects a query may return: the same value for every query, single or batched.
/// [`QueryFilter::default`] (or [`QueryFilter::new`]) takes every object; each builder
/// method narrows it:
///
/// - kinds: [`QueryFilter::exclude_static`], [`QueryFilter::only_dynamic`] and the like
///   (every kind by default);
/// - groups: [`QueryFilter::mask`] takes only objects whose [`Filter::membership`] shares a
///   bit with the mask. The test is one-way: the object's own [`Filter::mask`] is not read
///   (that is the pair rule between objects, which queries do not apply), so an object
///   with mask 0 is still found. Without a mask every object passes, membership 0
///   included;
/// - handles: [`QueryFilter::exclude_handle`] (the caster itself, say) and
///   [`QueryFilter::exclude`] (a short list, scanned for each object found);
/// - a predicate on the handle and user data ([`World::insert_with`]),
///   [`QueryFilter::predicate`], called last, once for each object that passes the rest
///   and meets the query's shape; `Sync`, so that batches can share it.
///
/// ```
/// use broadphase::{Aabb2, Config, Filter, Kind, QueryFilter, World2};
/// let mut world = World2::new(Config::default())?;
/// let wall = world.insert(Aabb2::new([0.0, 0.0], [1.0, 10.0]), Kind::Static)?;
/// let me = world.insert(Aabb2::new([4.0, 4.0], [6.0, 6.0]), Kind::Dynamic)?;
/// let ghost = Filter { membership: 2, mask: 0 };
/// let spirit = world.insert_with(Aabb2::new([2.0, 4.0], [3.0, 6.0]), Kind::Dynamic, ghost, 7)?;
/// // From inside `me`, leftwards: `me` itself is left out.
/// let filter = QueryFilter::new().exclude_handle(me);
/// assert_eq!(world.cast_ray([5.0, 5.0], [-1.0, 0.0], 10.0, filter)?, Some((spirit, 2.0)));
/// // Only group 1 (the default membership has every bit): the spirit is not in it.
/// let filter = filter.mask(1);
/// assert_eq!(world.cast_ray([5.0, 5.0], [-1.0, 0.0], 10.0, filter)?, Some((wall, 4.0)));
/// // A predicate on user data.
/// let odd = |_, data: u64| data % 2 == 1;
/// let filter = QueryFilter::new().exclude_handle(me).predicate(&odd);
/// assert_eq!(world.cast_ray([5.0, 5.0], [-1.0, 0.0], 10.0, filter)?, Some((spirit, 2.0)));
/// # Ok::<(), broadphase::Error>(())
/// ```
///
/// [`Filter::membership`]: crate::Filter::membership
/// [`Filter::mask`]: crate::Filter::mask
/// [`World::insert_with`]: crate::World::insert_with
#[derive(Clone, Copy)]
pub struct QueryFilter<'a> {
    /// The kinds taken: a bit each ([`bit`]).
    kinds: u8,
    /// Groups: an object passes where its membership shares a bit with this.
    mask: Option<u32>,
    /// One handle left out ([`Handle::NULL`]: none).
    excluded: Handle,
    /// More handles left out.
    excluded_list: &'a [Handle],
    /// The caller's test of `(handle, user data)`.
    predicate: Option<&'a (dyn Fn(Handle, u64) -> bool + Sync)>,
    /// Region, point and sphere hits sorted by handle, not in the trees' order.
    sorted: bool,
}

impl Default for QueryFilter<'_> {
    fn default() -> Self {
        Self {
            kinds: ALL,
            mask: None,
            excluded: Handle::NULL,
            excluded_list: &[],
            predicate: None,
            sorted: false,
        }
    }
}

impl std::fmt::Debug for QueryFilter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds: Vec<Kind> = [Kind::Static, Kind::Kinematic, Kind::Dynamic]
            .into_iter()
            .filter(|&k| self.takes_kind(k))
            .collect();
        f.debug_struct("QueryFilter")
            .field("kinds", &kinds)
            .field("mask", &self.mask)
            .field("excluded", &self.excluded)
            .field("excluded_list", &self.excluded_list)
            .field("predicate", &self.predicate.map(|_| "Fn(Handle, u64) -> bool"))
            .field("sorted", &self.sorted)
            .finish()
    }
}

impl<'a> QueryFilter<'a> {
    /// Takes every object (as [`QueryFilter::default`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// Leaves out [`Kind::Static`] objects.
    pub fn exclude_static(mut self) -> Self {
        self.kinds &= !bit(Kind::Static);
        self
    }

    /// Leaves out [`Kind::Kinematic`] objects.
    pub fn exclude_kinematic(mut self) -> Self {
        self.kinds &= !bit(Kind::Kinematic);
        self
    }

    /// Leaves out [`Kind::Dynamic`] objects.
    pub fn exclude_dynamic(mut self) -> Self {
        self.kinds &= !bit(Kind::Dynamic);
        self
    }

    /// Takes [`Kind::Static`] objects only.
    pub fn only_static(mut self) -> Self {
        self.kinds = bit(Kind::Static);
        self
    }

    /// Takes [`Kind::Kinematic`] objects only.
    pub fn only_kinematic(mut self) -> Self {
        self.kinds = bit(Kind::Kinematic);
        self
    }

    /// Takes [`Kind::Dynamic`] objects only.
    pub fn only_dynamic(mut self) -> Self {
        self.kinds = bit(Kind::Dynamic);
        self
    }

    /// Takes only objects whose [`Filter::membership`](crate::Filter::membership) shares a
    /// bit with `mask` (one-way: the object's own mask is not read).
    pub fn mask(mut self, mask: u32) -> Self {
        self.mask = Some(mask);
        self
    }

    /// Leaves out the object `h` names (the caster itself); replaces an earlier one.
    pub fn exclude_handle(mut self, h: Handle) -> Self {
        self.excluded = h;
        self
    }

    /// Leaves out the objects these handles name, as well as the one of
    /// [`QueryFilter::exclude_handle`]; replaces an earlier list. The list is scanned for
    /// each object a query finds: meant for a few handles.
    pub fn exclude(mut self, handles: &'a [Handle]) -> Self {
        self.excluded_list = handles;
        self
    }

    /// Takes only objects for which `keep(handle, user data)` is true; called last, for
    /// objects that pass the rest of the filter and meet the query.
    pub fn predicate(mut self, keep: &'a (dyn Fn(Handle, u64) -> bool + Sync)) -> Self {
        self.predicate = Some(keep);
        self
    }

    /// Not a test, an order: region, point and sphere queries (single and batched) return
    /// their hits sorted by handle (by slot index) rather than in the order the trees
    /// hold them, at the cost of a sort of each query's hits (a radix sort where they are
    /// many). Rays, swept boxes and nearest queries are ordered by `t` or distance either
    /// way.
    pub fn sorted(mut self) -> Self {
        self.sorted = true;
        self
    }

    /// Whether hits are sorted by handle ([`QueryFilter::sorted`]).
    #[inline]
    pub(crate) fn is_sorted(&self) -> bool {
        self.sorted
    }

    /// Whether objects of kind `k` may pass.
    pub fn takes_kind(&self, k: Kind) -> bool {
        self.kinds & bit(k) != 0
    }

    /// Whether static objects may pass (the static tree is walked).
    #[inline]
    pub(crate) fn statics(&self) -> bool {
        self.takes_kind(Kind::Static)
    }

    /// Whether kinematic or dynamic objects may pass (the dynamic tree is walked).
    #[inline]
    pub(crate) fn moving(&self) -> bool {
        self.kinds & (bit(Kind::Kinematic) | bit(Kind::Dynamic)) != 0
    }

    /// Whether every object of the trees walked passes: no mask, no handle left out, no
    /// predicate, and the kinematic and dynamic kinds both taken or both not (they share
    /// a tree).
    #[inline]
    pub(crate) fn plain(&self) -> bool {
        self.mask.is_none()
            && self.excluded.is_null()
            && self.excluded_list.is_empty()
            && self.predicate.is_none()
            && self.takes_kind(Kind::Kinematic) == self.takes_kind(Kind::Dynamic)
    }

    /// Whether the object `h`, of kind `kind` and membership `membership`, with user data
    /// `data()`, passes.
    #[inline]
    pub(crate) fn takes(&self, h: Handle, kind: Kind, membership: u32, data: impl FnOnce() -> u64) -> bool {
        self.takes_kind(kind)
            && self.mask.is_none_or(|m| m & membership != 0)
            && h != self.excluded
            && !self.excluded_list.contains(&h)
            && self.predicate.is_none_or(|keep| keep(h, data()))
    }
}
