//! Per-run statistics: the time of each pipeline stage (`t_scan`, `t_entries`, `t_sort`,
//! `t_sweep`, `t_pairs`, in the order `pipeline` runs them) and the counts. Cheap to keep
//! (a few integer adds a chunk), always on; every count is the same for any thread count.

use crate::Method;
use std::time::Duration;

/// What one run did, stage by stage.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Boxes in the input.
    pub boxes: usize,
    /// The method that found the pairs: under [`Method::Auto`], the one it chose; after
    /// `find_pairs_between`, [`Method::Grid`], whose join it runs (`Method::Auto` before
    /// the first run, and after a run whose input was invalid).
    pub method: Method,
    /// The scan (validation, bounds, sweep-axis estimate, the choice of algorithm) and the
    /// column plan (levels; none where the scene is swept whole).
    pub t_scan: Duration,
    /// The entry write (one key per box and column).
    pub t_entries: Duration,
    /// Radix sort of the entry keys.
    pub t_sort: Duration,
    /// The gather of the boxes into the structure-of-arrays rows, and the sweep of the
    /// sorted columns, exact tests included. Where the scene is swept whole: that sweep,
    /// its pair sort included.
    pub t_sweep: Duration,
    /// Sorting the pair keys and writing the output.
    pub t_pairs: Duration,
    /// Whole run.
    pub t_total: Duration,
    /// Entries (box, column) written.
    pub entries: usize,
    /// Column runs found crowded (see `Config::crowded_threshold`).
    pub crowded_runs: usize,
    /// Candidate entry pairs looked at: the rows in a box's window along the sweep axis
    /// (column runs and their nested ranges; a group of range rows shares one window, the
    /// union of theirs), or the boxes a whole-scene sweep tests.
    pub candidates: usize,
    /// Candidates put to the exact box test (every candidate: no filter stands between).
    pub exact_tests: usize,
    /// Pairs reported (unique).
    pub pairs: usize,
    /// RDC splits made: inside crowded runs under `Refine::Rdc`, over the whole scene
    /// under `Method::Rdc` (0 otherwise).
    pub rdc_splits: usize,
    /// Ranges swept row by row and in groups (for the tests).
    #[cfg(test)]
    pub(crate) ranges: [usize; 2],
}
