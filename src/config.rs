//! The one configuration struct, [`Config`], with the choices it names ([`Method`],
//! [`Refine`]); checked once at the API boundary ([`Config::validate`], called by
//! `Broadphase::new`), so no stage checks a field again.

use crate::{Aabb, Error};

/// How crowded runs are refined in the column sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Refine {
    /// Sweep-and-prune (Terdiman's box pruning), as in every other column.
    #[default]
    Sweep,
    /// Recursive Dimensional Clustering (Rabin) inside crowded runs, then sweep-and-prune
    /// inside the final groups.
    Rdc,
}

/// Which algorithm finds the pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Method {
    /// Morton columns, unless a sweep-and-prune along the best axis is expected to test at
    /// most a bound per box (small, sparse or layered scenes: parallel planks, islands),
    /// which one O(n) pass and a sample's own sweep estimate. The bound is 128 tests a
    /// box where sizes vary widely, 64 where they do not, falling with the number of
    /// boxes beyond 16k. Above it, the
    /// hierarchical grid where a few far longer boxes lie among boxes of one size, the tree
    /// where long boxes cross each other, the columns elsewhere (`docs/architecture.md`,
    /// "Which algorithm").
    #[default]
    Auto,
    /// Always the Morton-column pipeline (in 1D: one column, swept on one thread).
    Columns,
    /// Always a whole-scene sweep-and-prune along the best axis.
    Sweep,
    /// Always a linear BVH over the boxes in Morton order (Karras 2012), each box walking
    /// down it to the boxes after it that it meets. `Auto` takes it where long boxes cross
    /// each other across the columns (a staircase of planks), which sweeps and columns
    /// test nearly pair by pair.
    Tree,
    /// Always Recursive Dimensional Clustering (S. Rabin, "Recursive Dimensional
    /// Clustering: A Fast Algorithm for Collision Detection", Game Programming Gems 2): cut
    /// the scene wherever an axis has a gap between the boxes' projections, again inside
    /// each piece on the other axes, then sweep-and-prune each final group. The same code
    /// as [`Rdc::pairs`](crate::Rdc::pairs) with the default settings, the axes tried from
    /// the sweep axis on. It wins where clumps lie apart with empty space between them
    /// (islands, rooms, swarms; half the boxes of an object pool parked far away: 1.2-1.5x
    /// faster than the columns at 10k): each clump is swept alone; where every axis is
    /// covered end to end it costs a whole-scene sweep plus `D` sorts, and a staircase of
    /// planks, which no axis cuts, far more (`docs/BENCHMARKS.md`, "`Method::Rdc` against
    /// the columns"). `Auto` does not take it.
    Rdc,
    /// Always the reference: every box tested against every box after it, O(n^2) tests, in
    /// parallel by rows. The code of
    /// [`brute_force_pairs`](crate::brute_force_pairs), with the pair bound and the
    /// finder's buffers: for tests and scenes of a few hundred boxes.
    BruteForce,
    /// Always a hierarchical uniform grid (a spatial hash): each box filed once, in the
    /// cell that holds its lower corner, on the level of cells that fits its size (cells
    /// doubling from a base size that a sample of the boxes' sizes picks), and looking
    /// through the cells where an overlapping box's lower corner can lie; of every two
    /// levels, the side a cost model finds cheaper looks through the other. It suits many
    /// boxes of about one size, a few long ones among them or not (each look a few rows of
    /// a few boxes); 3D boxes whose sizes spread over orders of magnitude run faster on the
    /// columns (`docs/BENCHMARKS.md`). A grid copes poorly with sizes that vary (Michael
    /// Baczynski, "Quadtree demonstration"), hence the levels (after Dmytry Lavrov's
    /// Morton-order "Collision detection"). `Auto` takes it where the boxes are of one
    /// size but for a few far longer ones (planks and walls among small boxes, rooms among
    /// tiles), and too dense to sweep whole (`docs/architecture.md`, "Which algorithm").
    Grid,
    /// Always a quadtree (2D), octree (3D) or binary tree of intervals (1D) built by a sort
    /// in Morton order: each box in the finest aligned cell that holds it whole, tested
    /// against the boxes of its own cell and of the cells above it (M. Baczynski's
    /// "Quadtree demonstration"). Exact on any scene, but slower than the columns on every
    /// scene the benchmarks run (a box pays for every level above it), so `Auto` never
    /// takes it (`docs/architecture.md`, "The quadtree (`Method::Quadtree`)").
    Quadtree,
}

impl Method {
    /// Every method, [`Auto`](Method::Auto) first: for a test or a bench that runs them all.
    pub const ALL: [Method; 8] = [
        Method::Auto,
        Method::Columns,
        Method::Sweep,
        Method::Tree,
        Method::Rdc,
        Method::BruteForce,
        Method::Grid,
        Method::Quadtree,
    ];

    /// The method's name in snake case (`"auto"`, `"columns"`, `"brute_force"`, ...), as
    /// [`from_name`](Method::from_name) reads it.
    pub const fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::Columns => "columns",
            Method::Sweep => "sweep",
            Method::Tree => "tree",
            Method::Rdc => "rdc",
            Method::BruteForce => "brute_force",
            Method::Grid => "grid",
            Method::Quadtree => "quadtree",
        }
    }

    /// The method called `name` ([`name`](Method::name)'s spelling), or `None`.
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Settings for [`find_pairs_with`](crate::find_pairs_with) and [`Broadphase`](crate::Broadphase).
///
/// Built from [`Default`] and the `with_*` methods (the struct is `#[non_exhaustive]`, so
/// fields may be added without breaking callers):
///
/// ```
/// use broadphase::{Config, Method};
/// let config = Config::<3>::default().with_margin(0.05).with_method(Method::Sweep);
/// assert_eq!(config.margin, 0.05);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
// Read back unchecked, as a value built field by field: `Config::validate` checks it where
// it is used.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Config<const D: usize> {
    /// Grows every box by this much on every side before testing (shrinks when negative, so
    /// that touching boxes separate): a contact threshold with the sign flipped. A box that
    /// a negative margin turns inside out takes part in no pair.
    pub margin: f32,
    /// A hint of the world's extent, checked (finite, `min <= max`) but not needed: the
    /// column grid always covers where the (margin-grown) boxes are, as the scan measures
    /// it, so bounds far larger than the scene, of zero size or off to one side cannot put
    /// every box into a few columns or make a call slower. The pairs never depend on it.
    pub bounds: Option<Aabb<D>>,
    /// The most Morton columns one box may be split into. A column is an aligned Morton cell
    /// of the `D - 1` axes other than the sweep axis, as long as the world along it. Every
    /// box starts at the coarsest level that covers its largest extent (at most 2^(D-1)
    /// columns) and moves while a cost model says it pays (finer for big boxes, planks and
    /// walls lying across the columns), within this budget. At least 2^D, at most 4096.
    pub max_columns_per_box: u32,
    /// A column run is "crowded" when testing each of its `m` entries against the rest of
    /// the run and the `r` entries nested in it (`m(m-1)/2 + m r` tests) would cost more than
    /// this many tests per entry involved (`m + r`). Every run is swept with sweep-and-prune
    /// anyway; crowded runs are counted in [`Stats`](crate::Stats), and refined by RDC
    /// under [`Refine::Rdc`]. At least 1.
    pub crowded_threshold: u32,
    /// How crowded runs are refined.
    pub refine: Refine,
    /// Which algorithm runs.
    pub method: Method,
    /// The most pairs a call may report. A call that would report more returns
    /// [`Error::TooManyPairs`], having stopped once the bound was
    /// passed, without allocating beyond it: a guard against pair explosions (thousands of
    /// boxes at one spot) in a frame loop. `None` (the default): no bound; a pair explosion
    /// that cannot be allocated is then [`Error::OutOfMemory`]
    /// where the allocator reports it.
    pub max_pairs: Option<usize>,
    /// [`World`](crate::World) only (the one-shot calls have no memory of a frame before):
    /// a pair, once begun, ends only when the margin-grown boxes lie more than this far
    /// apart on some axis (`a.min - h > b.max` or `b.min - h > a.max`, in `f32`), so a
    /// contact resting at the margin does not begin and end every frame as its box
    /// jitters. A pair still begins only when the margin-grown boxes overlap. At least 0
    /// and finite; 0 (the default): a pair ends as soon as its boxes part.
    pub hysteresis: f32,
}

impl<const D: usize> Default for Config<D> {
    fn default() -> Self {
        Self {
            margin: 0.0,
            bounds: None,
            max_columns_per_box: 64.max(1 << D),
            crowded_threshold: 64,
            refine: Refine::Sweep,
            method: Method::Auto,
            max_pairs: None,
            hysteresis: 0.0,
        }
    }
}

impl<const D: usize> Config<D> {
    /// This configuration with [`Config::margin`] set.
    pub fn with_margin(mut self, margin: f32) -> Self {
        self.margin = margin;
        self
    }

    /// This configuration with [`Config::bounds`] set.
    pub fn with_bounds(mut self, bounds: Option<Aabb<D>>) -> Self {
        self.bounds = bounds;
        self
    }

    /// This configuration with [`Config::max_columns_per_box`] set.
    pub fn with_max_columns_per_box(mut self, max: u32) -> Self {
        self.max_columns_per_box = max;
        self
    }

    /// This configuration with [`Config::crowded_threshold`] set.
    pub fn with_crowded_threshold(mut self, threshold: u32) -> Self {
        self.crowded_threshold = threshold;
        self
    }

    /// This configuration with [`Config::refine`] set.
    pub fn with_refine(mut self, refine: Refine) -> Self {
        self.refine = refine;
        self
    }

    /// This configuration with [`Config::method`] set.
    pub fn with_method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// This configuration with [`Config::max_pairs`] set.
    pub fn with_max_pairs(mut self, max_pairs: Option<usize>) -> Self {
        self.max_pairs = max_pairs;
        self
    }

    /// This configuration with [`Config::hysteresis`] set.
    ///
    /// ```
    /// use broadphase::{Aabb2, Config, Kind, World2};
    /// let mut world = World2::new(Config::default().with_hysteresis(0.1))?;
    /// let floor = world.insert(Aabb2::new([0.0, 0.0], [10.0, 1.0]), Kind::Static)?;
    /// let crate_ = world.insert(Aabb2::new([4.0, 1.0], [5.0, 2.0]), Kind::Dynamic)?;
    /// world.update()?;
    /// assert_eq!(world.events().added, &[[floor, crate_]]);
    /// // Lifted a little: within the hysteresis, the pair holds.
    /// world.set_aabb(crate_, Aabb2::new([4.0, 1.05], [5.0, 2.05]))?;
    /// world.update()?;
    /// assert!(world.events().is_empty() && world.pairs() == &[[floor, crate_]]);
    /// // Lifted further: the pair ends.
    /// world.set_aabb(crate_, Aabb2::new([4.0, 1.5], [5.0, 2.5]))?;
    /// world.update()?;
    /// assert_eq!(world.events().removed, &[[floor, crate_]]);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    pub fn with_hysteresis(mut self, hysteresis: f32) -> Self {
        self.hysteresis = hysteresis;
        self
    }

    /// Checks every field; called once, by `Broadphase::new` (so once per
    /// [`find_pairs_with`](crate::find_pairs_with) call).
    pub fn validate(&self) -> Result<(), Error> {
        if D == 0 || D > 3 {
            return Err(Error::InvalidConfig {
                field: "D",
                reason: "only 1, 2 and 3 dimensions are supported",
            });
        }
        if !self.margin.is_finite() {
            return Err(Error::InvalidConfig { field: "margin", reason: "must be finite" });
        }
        if !(self.hysteresis.is_finite() && self.hysteresis >= 0.0) {
            return Err(Error::InvalidConfig {
                field: "hysteresis",
                reason: "must be finite and at least 0",
            });
        }
        if let Some(b) = &self.bounds
            && crate::validate::check_box(b).is_err()
        {
            return Err(Error::InvalidConfig {
                field: "bounds",
                reason: "must be finite with min <= max on every axis",
            });
        }
        if self.max_columns_per_box < (1 << D) || self.max_columns_per_box > 4096 {
            return Err(Error::InvalidConfig {
                field: "max_columns_per_box",
                reason: "must lie in 2^D..=4096",
            });
        }
        if self.crowded_threshold == 0 {
            return Err(Error::InvalidConfig { field: "crowded_threshold", reason: "must be at least 1" });
        }
        Ok(())
    }
}
