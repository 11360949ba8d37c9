//! The pipeline driver: [`Broadphase::find_pairs`] reads as the list of stages it calls,
//! each timed into its own [`Stats`] field.
//!
//! 1. **scan** (`t_scan`): validate the boxes and measure them in one pass beside the trim
//!    sample (`choose::scan_scene`, `choose::TrimSample`), name the first bad box if any
//!    (`validate::check_boxes`), fix the grid bounds and the sweep axis, make the choice
//!    (`choose::choose`), then plan the column levels (`Columns::plan`).
//! 2. **entries** (`t_entries`): one entry key per box and column it touches
//!    (`Columns::write_entries`).
//! 3. **sort** (`t_sort`): LSD radix sort of the entry keys on their bits from `qx` up: by
//!    column, then coarse levels first, then position along the sweep axis
//!    (`kernels::radix_sort`).
//! 4. **sweep** (`t_sweep`): gather the sorted entries' boxes into structure-of-arrays rows
//!    (`Columns::gather`), then sweep-and-prune every column (`Columns::sweep`), pair keys
//!    left in the idle radix scratch and the output.
//! 5. **pairs** (`t_pairs`): sort the pair keys in the idle rows and entries
//!    (`kernels::pair_sort`) and write them out as `[i, j]`; for
//!    [`Broadphase::find_pairs_unsorted`], write them out in the order found instead
//!    (`columns::found_order`). Stages 2 to 5 are `pipeline::columns::run`.
//!
//! Where the choice is a whole-scene sweep (`Method::Sweep`, or `Auto` on a sparse scene),
//! `algorithms::sap::sweep_into` replaces stages 2 to 5 and is timed in `t_sweep`, its pair
//! sort included, after the scan in `t_scan`; where the trim narrowed the bounds, the
//! boxes wholly outside them are left out of it and found apart, as the columns do
//! (`Broadphase::pairs_apart`). Where it is the tree (`Method::Tree`, or
//! `Auto` where long boxes cross across the columns), `bvh::Bvh::build` (timed in
//! `t_sort`) and `bvh::Bvh::pairs_into` (in `t_sweep`, its pair sort included) replace
//! them; where it is the grid (`Method::Grid`), `algorithms::grid::Grid::build` and
//! `pairs_into`, timed the same way. `Method::Rdc` (`algorithms::rdc::RdcPairs`) and
//! `Method::BruteForce` (`algorithms::brute_force::BruteForce`) replace them in `t_sweep`.
//!
//! - Input: the boxes and the [`Config`] (checked once, in [`Broadphase::new`]).
//! - Output: every overlapping pair `[i, j]`, `i < j`, unique; sorted ascending, or
//!   (unsorted) in an order fixed by the boxes and the configuration.
//! - Cost: O(n + entries + candidates + pairs): the sorts over n, entries or pairs are
//!   radix sorts (comparison sorts only on the trim sample and on small pair buckets).
//! - Parallel: every stage on the caller's rayon pool; called from outside any pool, the
//!   whole frame runs inside one `rayon::scope`. The output is the same bytes for any
//!   thread count.
//! - Allocation: [`Broadphase`] owns the stages' buffers and reuses them across calls, so
//!   a steady stream of frames of similar size allocates only the output's growth and
//!   small per-chunk lists (and, on a whole-scene sweep, each chunk's pair keys). The
//!   one-shot [`find_pairs`] borrows a finder from a small process-wide pool (`cache`).
//! - Source: this crate; each stage cites its own.
//!
//! The entry keys are `u64` where the layout fits 64 bits and `u128` where it does not;
//! one generic `run` serves both.

use crate::algorithms::brute_force::BruteForce;
use crate::algorithms::grid::Grid;
use crate::algorithms::quadtree::Quadtree;
use crate::algorithms::rdc::RdcPairs;
use crate::algorithms::sap::Sorted;
use crate::bvh::Bvh;
use crate::columns::Columns;
use crate::kernels::pair_sort::PairBudget;
use crate::time::Instant;
use crate::{Aabb, Config, Error, Method, Stats};

mod cache;
mod columns;
pub use cache::release_cached_buffers;
use columns::run;

/// A reusable pair finder: owns the scan's, the columns' and the pair stage's buffers.
#[derive(Debug)]
pub struct Broadphase<const D: usize> {
    pub(crate) config: Config<D>,
    cols: Columns<D>,
    /// Entries when the layout fits 64 bits (the common case), and their radix scratch.
    e64: Vec<u64>,
    e64_scratch: Vec<u64>,
    /// Entries when it does not (fine columns over a huge grid), and their radix scratch.
    e128: Vec<u128>,
    e128_scratch: Vec<u128>,
    /// Room for the pair keys' sort where the idle rows and entries lack it (kept: steady
    /// frames do not fault fresh pages in).
    extra: Vec<[u32; 2]>,
    /// The whole-scene sweep's sorted boxes (`Method::Sweep`, or `Auto` on sparse scenes).
    sweep: Sorted<D>,
    /// The tree (`Method::Tree`, or `Auto` where long boxes cross across the columns).
    pub(crate) tree: Bvh<D>,
    /// RDC's records and tasks' buffers (`Method::Rdc`).
    rdc: RdcPairs<D>,
    /// The brute force's grown boxes and row counts (`Method::BruteForce`).
    brute: BruteForce<D>,
    /// The hierarchical grid (`Method::Grid`; and a join's smaller set,
    /// `find_pairs_between`).
    pub(crate) grid: Grid<D>,
    /// The quadtree or octree (`Method::Quadtree`), its grid over the scan's bounds.
    quadtree: Quadtree<D>,
    /// Where the plan set boxes apart (far outside the grid; [`crate::columns::Strays`]):
    /// a finder of their own for them and the boxes crossing the grid's border (made on the
    /// first such frame, never setting boxes apart itself), those boxes, their pairs, and
    /// the keys of the pairs with a far box.
    nested: bool,
    apart: Option<Box<Broadphase<D>>>,
    apart_boxes: Vec<Aabb<D>>,
    apart_pairs: Vec<[u32; 2]>,
    apart_keys: Vec<u64>,
    pub(crate) stats: Stats,
}

impl<const D: usize> Broadphase<D> {
    /// A finder with this configuration (checked here, once).
    pub fn new(config: Config<D>) -> Result<Self, Error> {
        config.validate()?;
        Ok(Self::checked(config, false))
    }

    /// A finder with no buffers yet, for a configuration already checked.
    pub(crate) fn checked(config: Config<D>, nested: bool) -> Self {
        Self {
            config,
            cols: Columns::default(),
            e64: Vec::new(),
            e64_scratch: Vec::new(),
            e128: Vec::new(),
            e128_scratch: Vec::new(),
            extra: Vec::new(),
            sweep: Sorted::default(),
            tree: Bvh::default(),
            rdc: RdcPairs::default(),
            brute: BruteForce::default(),
            grid: Grid::default(),
            quadtree: Quadtree::default(),
            nested,
            apart: None,
            apart_boxes: Vec::new(),
            apart_pairs: Vec::new(),
            apart_keys: Vec::new(),
            stats: Stats::default(),
        }
    }

    /// Every pair `[i, j]`, `i < j`, of overlapping boxes, sorted ascending and unique, into
    /// `out` (cleared first). On error `out` is left empty and the finder stays usable.
    pub fn find_pairs(&mut self, boxes: &[Aabb<D>], out: &mut Vec<[u32; 2]>) -> Result<(), Error> {
        self.in_pool(boxes, out, true)
    }

    /// Every pair `[i, j]`, `i < j`, of overlapping boxes, unique, into `out` (cleared
    /// first), in an order fixed by the boxes and the configuration: the same bytes for any
    /// thread count and on every call with the same input, but not sorted. The column
    /// sweep's pairs come in the order it found them (run by run along the Morton order),
    /// which spares the pair sort: where pairs are many (tens a box), that sort is most of
    /// a call's time. Other methods' pairs come sorted, as from
    /// [`find_pairs`](Broadphase::find_pairs). For callers that put the pairs in their own
    /// order or use each on its own, as peers that report pairs unsorted expect (broccoli,
    /// a BVH's tree-order traversal). PERF: benches/scaling.rs (`auto_unsorted`, 2D
    /// sticks). Errors: as [`find_pairs`](Broadphase::find_pairs).
    ///
    /// ```
    /// use broadphase::{Aabb2, Broadphase, Config};
    /// let boxes = [
    ///     Aabb2::new([0.0, 0.0], [2.0, 2.0]),
    ///     Aabb2::new([1.0, 1.0], [3.0, 3.0]),
    ///     Aabb2::new([5.0, 5.0], [6.0, 6.0]),
    /// ];
    /// let mut finder = Broadphase::new(Config::default())?;
    /// let mut pairs = Vec::new();
    /// finder.find_pairs_unsorted(&boxes, &mut pairs)?;
    /// assert_eq!(pairs, [[0, 1]]);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    pub fn find_pairs_unsorted(&mut self, boxes: &[Aabb<D>], out: &mut Vec<[u32; 2]>) -> Result<(), Error> {
        self.in_pool(boxes, out, false)
    }

    /// [`Broadphase::frame_ordered`] inside a rayon pool. Called from outside any pool (an
    /// engine's main thread), every parallel stage would be sent to the global pool and
    /// waited for on its own; the whole frame goes there at once instead.
    fn in_pool(&mut self, boxes: &[Aabb<D>], out: &mut Vec<[u32; 2]>, sorted: bool) -> Result<(), Error> {
        if crate::par::current_thread_index().is_none() {
            return crate::par::scope(|_| self.frame_ordered(boxes, out, sorted));
        }
        self.frame_ordered(boxes, out, sorted)
    }

    /// [`Broadphase::find_pairs`], on the current thread.
    pub(crate) fn frame(&mut self, boxes: &[Aabb<D>], out: &mut Vec<[u32; 2]>) -> Result<(), Error> {
        self.frame_ordered(boxes, out, true)
    }

    /// [`Broadphase::find_pairs`] (`sorted`) or [`Broadphase::find_pairs_unsorted`], on the
    /// current thread.
    fn frame_ordered(
        &mut self,
        boxes: &[Aabb<D>],
        out: &mut Vec<[u32; 2]>,
        sorted: bool,
    ) -> Result<(), Error> {
        out.clear();
        let t0 = Instant::now();
        self.stats = Stats { boxes: boxes.len(), ..Stats::default() };
        if boxes.len() > u32::MAX as usize {
            return Err(Error::TooManyBoxes { len: boxes.len() });
        }
        let m = self.config.margin;
        // One pass validates and measures the scene; only a bad scene is scanned again, for
        // the first offending index.
        // The trim's sample is sorted beside the scan: it reads only its own boxes.
        let (mut scan, sample) = crate::par::join(
            || crate::choose::scan_scene(boxes, m),
            || crate::choose::TrimSample::take(boxes, m),
        );
        if scan.invalid {
            crate::validate::check_boxes(boxes)?;
        }
        let full = (scan.min, scan.max);
        if let Some(sample) = &sample {
            scan.trim(sample);
        }
        // Boxes can lie outside the grid only where the trim narrowed it.
        let narrowed = full != (scan.min, scan.max);
        let axis = scan.best().0;
        let (sweep_axis, per_box) = scan.sweep_best();
        // Boxes wholly outside the trimmed bounds are set apart (`pairs_apart`), by the
        // columns and the whole-scene sweep alike.
        let strays_apart = narrowed && !self.nested;
        let choice = crate::choose::choose::<D>(
            self.config.method,
            &scan,
            sample.as_ref(),
            axis,
            per_box,
            strays_apart,
        );
        self.stats.method = choice;
        if choice != Method::Columns {
            self.stats.t_scan = t0.elapsed();
            let t = Instant::now();
            let budget = PairBudget::new(self.config.max_pairs);
            let tested = match choice {
                Method::Tree => {
                    self.tree.build(boxes, m);
                    self.stats.entries = self.tree.len();
                    self.stats.t_sort = t.elapsed();
                    self.tree.pairs_into(boxes.len(), &budget, out)
                }
                Method::Rdc => {
                    let (tested, splits) = self.rdc.frame(boxes, m, axis, &budget, out);
                    self.stats.rdc_splits = splits;
                    tested
                }
                Method::Grid => {
                    let bulk = Aabb { min: scan.min, max: scan.max };
                    self.grid.build(boxes, m, Aabb { min: full.0, max: full.1 }, bulk);
                    self.stats.entries = self.grid.len();
                    self.stats.t_sort = t.elapsed();
                    self.grid.pairs_into(boxes.len(), &budget, out)
                }
                Method::Quadtree => {
                    self.quadtree.build(boxes, m, Aabb { min: scan.min, max: scan.max });
                    self.stats.entries = self.quadtree.len();
                    self.stats.t_sort = t.elapsed();
                    self.quadtree.pairs_into(boxes.len(), &budget, out)
                }
                Method::BruteForce => self.brute.pairs_into(boxes, m, &budget, out),
                _ => {
                    let within = Aabb { min: scan.min, max: scan.max };
                    if strays_apart {
                        self.cols.strays.find(boxes, m, &within);
                    } else {
                        self.cols.strays.far.clear();
                    }
                    self.pairs_apart(boxes)?;
                    let within = (!self.cols.strays.far.is_empty()).then_some(&within);
                    let s = &mut self.sweep;
                    let tested = crate::algorithms::sap::sweep_into(
                        s,
                        boxes,
                        m,
                        sweep_axis,
                        within,
                        &self.apart_keys,
                        &budget,
                        out,
                    );
                    // The tests made apart count too, as on the columns' path.
                    let apart = self.apart.as_ref().filter(|_| within.is_some());
                    tested + apart.map_or(0, |f| f.stats.candidates)
                }
            };
            self.stats.t_sweep = t.elapsed() - self.stats.t_sort;
            self.stats.candidates = tested;
            self.stats.exact_tests = tested;
            if let Err(e) = budget.verdict() {
                out.clear();
                return Err(e);
            }
            self.stats.pairs = out.len();
            self.stats.t_total = t0.elapsed();
            return Ok(());
        }
        // Grid bounds: those of the live grown boxes, strays trimmed (no live box: any grid
        // will do), whatever `Config::bounds` says: bounds far larger than the scene, of
        // zero size or off to one side would put every box in a few columns. Grown
        // coordinates of finite boxes may overflow to +-inf with a huge margin; the
        // quantiser works in f64 and clamps, so only the grid bounds are clamped.
        let bounds = if scan.count() > 0 {
            Aabb { min: scan.min, max: scan.max }
        } else {
            Aabb { min: [0.0; D], max: [0.0; D] }
        };
        let bounds =
            Aabb { min: bounds.min.map(|x| x.max(f32::MIN)), max: bounds.max.map(|x| x.min(f32::MAX)) };
        let bulk = std::array::from_fn(|k| (scan.bulk(k), scan.covered(k)));
        // The level model's density (`plan_density`) leaves ties out: counting them sends
        // exactly touching tiles on a grid to finer levels, which cost more than they
        // save. PERF: benches/pairs.rs (3D tiles).
        self.cols.plan(
            boxes,
            &self.config,
            bounds,
            axis,
            scan.plan_density(axis),
            scan.mean_extent(axis),
            bulk,
            scan.size_spread(),
            narrowed && !self.nested,
        );
        self.stats.t_scan = t0.elapsed();
        let t = Instant::now();
        self.pairs_apart(boxes)?;
        let t_apart = t.elapsed();
        if self.cols.layout.bits() <= 64 {
            run(
                &mut self.cols,
                boxes,
                &self.config,
                &mut self.e64,
                &mut self.e64_scratch,
                &mut self.extra,
                &self.apart_keys,
                &mut self.stats,
                sorted,
                out,
            )?;
        } else {
            run(
                &mut self.cols,
                boxes,
                &self.config,
                &mut self.e128,
                &mut self.e128_scratch,
                &mut self.extra,
                &self.apart_keys,
                &mut self.stats,
                sorted,
                out,
            )?;
        }
        self.stats.t_sweep += t_apart;
        if let (false, Some(f)) = (self.cols.strays.far.is_empty(), &self.apart) {
            self.stats.entries += f.stats.entries;
            self.stats.candidates += f.stats.candidates;
            self.stats.exact_tests += f.stats.exact_tests;
        }
        self.stats.pairs = out.len();
        self.stats.t_total = t0.elapsed();
        Ok(())
    }

    /// The pairs with a box set apart (`cols.strays`: far outside the grid, or outside the
    /// trimmed bounds of a whole-scene sweep), as keys in `apart_keys`: the far boxes and
    /// those crossing the border go to a finder of their own, whose own scan fits its grid
    /// to them, and of its pairs those with a far box are kept (two crossing boxes meet in
    /// the columns or the sweep). Their cost is that of their own layout, never the
    /// bulk's.
    fn pairs_apart(&mut self, boxes: &[Aabb<D>]) -> Result<(), Error> {
        self.apart_keys.clear();
        let st = &self.cols.strays;
        if st.far.is_empty() {
            return Ok(());
        }
        self.apart_boxes.clear();
        self.apart_boxes.extend(st.far.iter().chain(&st.crossing).map(|&i| boxes[i as usize]));
        let config = self.config;
        let finder = self.apart.get_or_insert_with(|| Box::new(Broadphase::checked(config, true)));
        // The owner's configuration may have changed since the finder was made (a pooled
        // one-shot finder: `cache`).
        finder.config = config;
        finder.frame(&self.apart_boxes, &mut self.apart_pairs)?;
        let ids = |a: u32| {
            st.far.get(a as usize).copied().unwrap_or_else(|| st.crossing[a as usize - st.far.len()])
        };
        let nf = st.far.len() as u32;
        self.apart_keys.extend(
            self.apart_pairs
                .iter()
                .filter(|p| p[0] < nf)
                .map(|p| crate::kernels::pair_sort::key(ids(p[0]), ids(p[1]))),
        );
        Ok(())
    }

    /// Releases every buffer the finder keeps between calls (entries, rows, pair scratch),
    /// for after an outsized frame: the next call allocates what it needs again. The
    /// configuration and the last statistics stay.
    pub fn shrink_to_fit(&mut self) {
        let stats = std::mem::take(&mut self.stats);
        *self = Self::checked(self.config, self.nested);
        self.stats = stats;
    }

    /// Statistics of the last run.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The configuration.
    pub fn config(&self) -> &Config<D> {
        &self.config
    }
}

/// Every pair `[i, j]`, `i < j`, of overlapping boxes, sorted ascending, unique.
/// Boxes are closed (touching boxes overlap). Runs on the current rayon pool.
///
/// The call borrows a [`Broadphase`]'s buffers from a process-wide cache and puts them
/// back afterwards, so repeated calls do not fault fresh memory in. The cache keeps at
/// most four finders a dimension (one each for callers on several threads at once), each
/// about the size of the largest call it served; [`release_cached_buffers`] gives them
/// back. The output and the errors are those of a fresh [`Broadphase`].
pub fn find_pairs<const D: usize>(boxes: &[Aabb<D>]) -> Result<Vec<[u32; 2]>, Error> {
    find_pairs_with(boxes, &Config::default())
}

/// [`find_pairs`] with a [`Config`] (margin, grid bounds, tuning), on the same cached
/// buffers.
pub fn find_pairs_with<const D: usize>(
    boxes: &[Aabb<D>],
    config: &Config<D>,
) -> Result<Vec<[u32; 2]>, Error> {
    cache::find_pairs_cached(boxes, config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{brute_force_pairs, Method};

    fn rng(seed: u64) -> impl FnMut() -> f32 {
        let mut r = crate::internals::scene::Rng::new(seed);
        move || r.next_f32()
    }

    fn scene<const D: usize>(n: usize, seed: u64, world: f32, size: f32) -> Vec<Aabb<D>> {
        let mut r = rng(seed);
        (0..n)
            .map(|_| {
                let min: [f32; D] = std::array::from_fn(|_| r() * world);
                let s = size * r() * r();
                Aabb { min, max: std::array::from_fn(|k| min[k] + s * (0.2 + r())) }
            })
            .collect()
    }

    fn agree<const D: usize>(boxes: &[Aabb<D>], config: &Config<D>) {
        let want = brute_force_pairs(boxes, config).unwrap();
        let mut bp = Broadphase::new(*config).unwrap();
        let mut got = Vec::new();
        bp.find_pairs(boxes, &mut got).unwrap();
        assert_eq!(got.len(), want.len(), "n={} {:?}", boxes.len(), bp.stats());
        assert_eq!(got, want);
    }

    #[test]
    fn smoke_agrees_with_brute_force() {
        for seed in 0..20 {
            for &(world, size) in &[(100.0, 5.0), (10.0, 5.0), (1000.0, 300.0), (1.0, 0.001)] {
                agree::<3>(&scene(500, seed, world, size), &Config::default());
                agree::<2>(&scene(500, seed, world, size), &Config::default());
                agree::<1>(&scene(300, seed, world, size), &Config::default());
                let c = Config {
                    crowded_threshold: 1,
                    max_columns_per_box: 4096,
                    margin: 0.5,
                    ..Config::default()
                };
                agree::<3>(&scene(500, seed, world, size), &c);
                agree::<2>(
                    &scene(500, seed, world, size),
                    &Config { crowded_threshold: 1, ..Config::default() },
                );
            }
        }
    }

    /// Both range paths meet the brute force, each where it is taken: 3D varied sizes make
    /// ranges as long as their runs, swept in groups (`Walker::range_grouped`); 3D planks
    /// over small cubes make long ranges under short runs, and 2D varied sizes any ranges,
    /// swept row by row (`Walker::range`). With a margin too, which widens the windows
    /// (and, here, leaves the 3D varied ranges short, so row by row).
    #[test]
    fn both_range_paths_agree_with_brute_force() {
        for seed in 0..3 {
            for margin in [0.0, 0.3] {
                let c3 = Config::<3> { margin, ..Config::default() };
                // 6,000 2D boxes would be swept whole.
                let c2 = Config::<2> { margin, method: Method::Columns, ..Config::default() };
                let varied = crate::internals::scene::varied::<3>(6000, seed);
                agree(&varied, &c3);
                let mut bp = Broadphase::new(c3).unwrap();
                bp.find_pairs(&varied, &mut Vec::new()).unwrap();
                // A margin of 0.3 makes the small boxes alike, and their ranges short.
                assert!(margin > 0.0 || bp.stats().ranges[1] > 0, "3D varied: no group {:?}", bp.stats());
                let mixed = crate::internals::scene::mixed::<3>(6000, seed);
                agree(&mixed, &c3);
                bp.find_pairs(&mixed, &mut Vec::new()).unwrap();
                assert!(bp.stats().ranges[0] > 0, "3D mixed: no range row by row {:?}", bp.stats());
                let flat = crate::internals::scene::varied::<2>(6000, seed);
                agree(&flat, &c2);
                let mut bp = Broadphase::new(c2).unwrap();
                bp.find_pairs(&flat, &mut Vec::new()).unwrap();
                let r = bp.stats().ranges;
                assert!(r[0] > 0 && r[1] == 0, "2D varied: {r:?} ranges row by row and in groups");
            }
        }
    }
}
