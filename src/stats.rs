//! Per-run statistics: time per stage and counts. Cheap to keep (a few integer adds per
//! chunk), always on.

use std::time::Duration;

/// What one run did, stage by stage.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Boxes in the input.
    pub boxes: usize,
    /// Validation, bounds reduction and quantisation into the structure-of-arrays store.
    pub t_store: Duration,
    /// Morton cell generation (levels, counts, keys).
    pub t_cells: Duration,
    /// Radix sort of the cell keys.
    pub t_sort: Duration,
    /// The sweep of the sorted cells, exact tests included.
    pub t_sweep: Duration,
    /// Sorting the pair keys and writing the output.
    pub t_pairs: Duration,
    /// Whole run.
    pub t_total: Duration,
    /// Cell entries (box, cell) generated.
    pub cells: usize,
    /// Cells found crowded and swept with sweep-and-prune (or RDC).
    pub crowded_cells: usize,
    /// Candidate entry pairs looked at: each run entry against the rest of its run and its
    /// range (direct path), or the pairs overlapping on axis 0 (sweep-and-prune path).
    pub candidates: usize,
    /// Candidates put to the exact box test (after the cheap ownership check).
    pub exact_tests: usize,
    /// Pairs reported (unique).
    pub pairs: usize,
    /// RDC splits made inside crowded cells (0 unless `Refine::Rdc`).
    pub rdc_splits: usize,
}
