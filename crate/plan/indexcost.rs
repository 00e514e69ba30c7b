//! PostgreSQL 15's costs of index paths: `cost_index` and `cost_bitmap_heap_scan`
//! (costsize.c) with `btcostestimate` / `genericcostestimate` (selfuncs.c), and the
//! size of a B-tree index the planner reads (`RelationGetNumberOfBlocks` of the index,
//! `_bt_getrootheight`).
//!
//! An index path's cost has two parts:
//! - the index: `btcostestimate` — the leaf pages holding the matching entries, each
//!   a random page (`random_page_cost`), `cpu_index_tuple_cost` and one
//!   `cpu_operator_cost` per Index Cond per entry, and the descent from the root
//!   (`⌈log2 N⌉` comparisons and 50 `cpu_operator_cost` per level);
//! - the heap (`cost_index`): the pages fetched, between a random read per row
//!   (`index_pages_fetched`, Mackert and Lohman's formula) for an index uncorrelated
//!   with the heap and a sequential run of `⌈selectivity · pages⌉` pages for a
//!   perfectly correlated one, interpolated by the square of the column's
//!   `correlation`; then `cpu_tuple_cost` and the remaining quals per row.
//!
//! A bitmap scan (`cost_bitmap_heap_scan`, `compute_bitmap_pages`) pays the index's
//! cost up front (its startup), a tenth of an operator per entry for the bitmap, and
//! reads each heap page once at a cost between `random_page_cost` and
//! `seq_page_cost` (the more of the table, the closer to sequential), then rechecks
//! every restriction per row.
//!
//! Invariants: pure functions of the statistics (`RelInfo`, the index's pages and
//! height) and the settings; never reads a row. With the statistics exact (a table
//! under the sample size, analyzed), the figures are PostgreSQL's to the cent.
//!
//! Where it departs from PostgreSQL: an index has one key column (the sandbox's
//! `CREATE INDEX` takes one); no partial or expression index, no ordering operators. The visibility map is all or
//! nothing: every page all-visible after VACUUM (`Table::all_visible`, `allvisfrac`
//! 1), none before it or after a change (0: an Index Only Scan then costs what an
//! Index Scan costs, as on a PostgreSQL table only loaded and ANALYZEd). The B-tree's
//! size is simulated leaf by leaf ([`btree_size`]) without deduplication of equal
//! keys (PostgreSQL 13's posting lists), which a leaf holding many duplicates uses
//! to put off a split.

use super::costsize::CostParams;
use super::stats::BLCKSZ;

/// An index as the planner knows it (`IndexOptInfo`): its key column (of the table),
/// its pages and its tree height.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexInfo {
    pub column: usize,
    pub name: String,
    pub pages: f64,
    pub tree_height: u32,
}

/// `effective_cache_size`'s default (4 GB) in pages.
const EFFECTIVE_CACHE_SIZE: f64 = 524_288.0;
/// `DEFAULT_PAGE_CPU_MULTIPLIER` (selfuncs.c): a B-tree level's CPU cost in operators.
const DEFAULT_PAGE_CPU_MULTIPLIER: f64 = 50.0;

/// `btcostestimate` (with `genericcostestimate`): the index's own costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IndexCost {
    pub startup: f64,
    pub total: f64,
    pub selectivity: f64,
    pub correlation: f64,
    pub pages: f64,
}

/// `btcostestimate` for a scan of `index` with `nquals` Index Cond clauses whose
/// selectivity together is `selectivity` (`clauselist_selectivity`), on a heap of
/// `tuples` rows; `correlation` is the key column's (0 without statistics);
/// `loop_count` > 1 for a parameterized scan repeated per outer row;
/// `num_sa_scans` the descents an `= ANY (array)` Index Cond makes (the product of
/// its arrays' lengths, [`num_sa_scans`]; 1 without one).
pub fn btcostestimate(
    index: &IndexInfo,
    tuples: f64,
    selectivity: f64,
    (nquals, num_sa_scans): (usize, f64),
    correlation: f64,
    loop_count: f64,
    p: &CostParams,
) -> IndexCost {
    // A non-partial index has the heap's tuples (`info->tuples = rel->tuples`).
    let index_tuples = tuples;
    // btcostestimate: the entries visited per descent (the selectivity counts every
    // descent's), rounded; genericcostestimate bounds them and finds their leaf pages.
    let num_index_tuples = (selectivity * index_tuples / num_sa_scans).round().clamp(1.0, index_tuples.max(1.0));
    let num_index_pages = if index.pages > 1.0 && index_tuples > 1.0 {
        (num_index_tuples * index.pages / index_tuples).ceil()
    } else {
        1.0
    };
    // Several descents (outer rows, array elements) share cached pages: Mackert and
    // Lohman over the index alone, as if each page were a tuple, the total shared
    // among the outer rows (not among the elements: they are one scan).
    let num_scans = num_sa_scans * loop_count;
    let mut total = if num_scans > 1.0 {
        let fetched = index_pages_fetched(num_index_pages * num_scans, index.pages, index.pages);
        fetched * p.random_page_cost / loop_count
    } else {
        num_index_pages * p.random_page_cost
    };
    // The comparison operands (constants, parameters, the outer side's columns) cost
    // nothing to evaluate; each Index Cond costs an operator per entry.
    let qual_op_cost = p.cpu_operator_cost * nquals as f64;
    total += num_index_tuples * num_sa_scans * (p.cpu_index_tuple_cost + qual_op_cost);
    let mut startup = 0.0;
    // The descent: a comparison per level of a binary search over every entry, and a
    // page's worth of CPU per level (the leaf included); the first is startup, each
    // further element's is paid again.
    if index_tuples > 1.0 {
        let descent = (index_tuples.ln() / 2f64.ln()).ceil() * p.cpu_operator_cost;
        startup += descent;
        total += num_sa_scans * descent;
    }
    let descent = (index.tree_height as f64 + 1.0) * DEFAULT_PAGE_CPU_MULTIPLIER * p.cpu_operator_cost;
    startup += descent;
    total += num_sa_scans * descent;
    IndexCost { startup, total, selectivity, correlation, pages: num_index_pages }
}

/// genericcostestimate's `num_sa_scans`: the B-tree descends once per element of
/// each `= ANY (array)` Index Cond (`estimate_array_length`: the array's elements),
/// so several of them multiply.
pub fn num_sa_scans(index_quals: &[super::Expr]) -> f64 {
    index_quals
        .iter()
        .map(|q| match q {
            super::Expr::Func(super::Func::ScalarArrayOp { .. }, args) => args.len().saturating_sub(1).max(1) as f64,
            _ => 1.0,
        })
        .product()
}

/// `index_pages_fetched`: Mackert and Lohman's estimate of the pages read to fetch
/// `tuples_fetched` tuples at random from a relation of `pages` pages, with the
/// cache `effective_cache_size` shared by the query's tables and this index.
pub fn index_pages_fetched(tuples_fetched: f64, pages: f64, index_pages: f64) -> f64 {
    let t = if pages > 1.0 { pages } else { 1.0 };
    // The query's other tables are few and small here: the cache holds them all.
    let total_pages = (pages + index_pages).max(1.0);
    let b = (EFFECTIVE_CACHE_SIZE * t / total_pages).ceil().max(1.0);
    let fetched = if t <= b {
        let f = (2.0 * t * tuples_fetched) / (2.0 * t + tuples_fetched);
        if f >= t {
            t
        } else {
            f.ceil()
        }
    } else {
        let lim = (2.0 * t * b) / (2.0 * t - b);
        let f = if tuples_fetched <= lim {
            (2.0 * t * tuples_fetched) / (2.0 * t + tuples_fetched)
        } else {
            b + (tuples_fetched - lim) * (t - b) / t
        };
        f.ceil()
    };
    fetched
}

/// The heap an index scan reads: its pages and tuples, and the fraction of its pages
/// the visibility map marks all-visible (`allvisfrac`; for an Index Only Scan, else 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Heap {
    pub pages: f64,
    pub tuples: f64,
    pub allvisfrac: f64,
}

/// `cost_index`: (startup, total) of an Index Scan or Index Only Scan (whose heap
/// pages are fetched only where not all-visible) returning `selectivity · tuples`
/// rows; the quals not in the Index Cond are costed by the node above (a Result).
pub fn cost_index(ic: &IndexCost, index: &IndexInfo, heap: &Heap, loop_count: f64, p: &CostParams) -> (f64, f64) {
    let Heap { pages, tuples, allvisfrac } = *heap;
    let tuples_fetched = super::selectivity::clamp_row_est(ic.selectivity * tuples);
    let visible = |fetched: f64| if allvisfrac > 0.0 { (fetched * (1.0 - allvisfrac)).ceil() } else { fetched };
    let (max_io, min_io);
    if loop_count > 1.0 {
        let fetched = visible(index_pages_fetched(tuples_fetched * loop_count, pages, index.pages));
        max_io = fetched * p.random_page_cost / loop_count;
        let seq = (ic.selectivity * pages).ceil();
        let fetched = visible(index_pages_fetched(seq * loop_count, pages, index.pages));
        min_io = fetched * p.random_page_cost / loop_count;
    } else {
        let fetched = visible(index_pages_fetched(tuples_fetched, pages, index.pages));
        max_io = fetched * p.random_page_cost;
        let seq = visible((ic.selectivity * pages).ceil());
        min_io = if seq > 0.0 { p.random_page_cost + (seq - 1.0) * p.seq_page_cost } else { 0.0 };
    }
    let csquared = ic.correlation * ic.correlation;
    let mut run = ic.total - ic.startup;
    run += max_io + csquared * (min_io - max_io);
    run += p.cpu_tuple_cost * tuples_fetched;
    (ic.startup, ic.startup + run)
}

/// `cost_bitmap_heap_scan` over one Bitmap Index Scan (`compute_bitmap_pages`):
/// (startup, total, tuples fetched); the Bitmap Index Scan's own total is the index's
/// (`IndexCost::total`). The bitmap stays exact (`work_mem` holds a bit per page of
/// every table here), so no lossy pages are costed. `rows` is the
/// relation's row estimate (all its restrictions), `recheck_per_tuple` the cost of
/// every restriction clause, evaluated on each fetched row.
pub fn cost_bitmap_heap_scan(
    ic: &IndexCost,
    pages: f64,
    tuples: f64,
    rows: f64,
    recheck_per_tuple: f64,
    p: &CostParams,
) -> (f64, f64, f64) {
    // cost_bitmap_tree_node: the index's total and a tenth of an operator per row
    // for the bitmap.
    let index_total = ic.total + 0.1 * p.cpu_operator_cost * rows;
    let tuples_fetched = super::selectivity::clamp_row_est(ic.selectivity * tuples);
    let t = if pages > 1.0 { pages } else { 1.0 };
    let mut pages_fetched = (2.0 * t * tuples_fetched) / (2.0 * t + tuples_fetched);
    pages_fetched = if pages_fetched >= t { t } else { pages_fetched.ceil() };
    let startup = index_total;
    let cost_per_page = if pages_fetched >= 2.0 {
        p.random_page_cost - (p.random_page_cost - p.seq_page_cost) * (pages_fetched / t).sqrt()
    } else {
        p.random_page_cost
    };
    let mut run = pages_fetched * cost_per_page;
    run += (p.cpu_tuple_cost + recheck_per_tuple) * tuples_fetched;
    (startup, startup + run, tuples_fetched)
}

/// The size of a B-tree index on one key column, built by inserting `keys` (each
/// entry's stored key size in bytes, None for NULL) in this order into an empty
/// index: (pages, tree height). Leaves fill to the page; a full leaf splits in half,
/// but the rightmost one when the entry goes at its end, which keeps 90%
/// (`BTREE_DEFAULT_FILLFACTOR`, nbtsplitloc.c's rightmost split); the internal levels
/// hold a downlink per page below. One metapage.
pub fn btree_size(keys: &[(Option<usize>, u64)]) -> (f64, u32) {
    // Page space for items: the page minus its header and BTPageOpaqueData.
    const USABLE: usize = BLCKSZ as usize - 24 - 16;
    let item = |k: Option<usize>| -> usize {
        // IndexTupleData (8 bytes), a null bitmap with a NULL, the key, MAXALIGNed,
        // and its line pointer.
        let header = if k.is_none() { 16 } else { 8 };
        ((header + k.unwrap_or(0) + 7) & !7) + 4
    };
    // Each leaf: its keys (sort position, bytes) in order; a non-rightmost leaf also
    // holds its high key.
    struct Leaf {
        keys: Vec<u64>,
        bytes: usize,
    }
    let mut leaves: Vec<Leaf> = vec![Leaf { keys: vec![], bytes: 0 }];
    for &(k, order) in keys {
        let size = item(k);
        // The leaf whose range holds the key: the last whose first key is below it.
        let at = leaves.iter().rposition(|l| l.keys.first().is_some_and(|&f| f <= order)).unwrap_or(0);
        let rightmost = at + 1 == leaves.len();
        let high_key = if rightmost { 0 } else { size };
        let leaf = &mut leaves[at];
        let pos = leaf.keys.partition_point(|&o| o <= order);
        leaf.keys.insert(pos, order);
        leaf.bytes += size;
        // A leaf of one entry cannot split (PostgreSQL refuses an entry wider than a
        // third of a page; the sandbox's model just lets the page overflow).
        if leaf.bytes + high_key > USABLE && leaf.keys.len() >= 2 {
            let n = leaf.keys.len();
            let at_end = pos + 1 == n;
            let keep = if rightmost && at_end { (n as f64 * 0.9) as usize } else { n / 2 };
            let right: Vec<u64> = leaf.keys.split_off(keep.clamp(1, n - 1));
            leaf.bytes = leaf.keys.len() * size;
            let bytes = right.len() * size;
            leaves.insert(at + 1, Leaf { keys: right, bytes });
        }
    }
    let mut pages = 1.0 + leaves.len() as f64;
    let mut height = 0;
    let mut level = leaves.len();
    // Downlinks: a pivot key and a pointer, about a leaf item each.
    let per_internal = USABLE / 20;
    while level > 1 {
        level = level.div_ceil(per_internal);
        pages += level as f64;
        height += 1;
    }
    (pages, height)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cents(x: f64) -> String {
        format!("{x:.2}")
    }

    /// 310 int keys inserted in order fit one leaf: a metapage and a root leaf,
    /// `loc_id_idx`'s 2 pages in PostgreSQL 15.
    #[test]
    fn a_small_index_is_one_leaf() {
        let keys: Vec<(Option<usize>, u64)> = (0..310).map(|i| (Some(4), i)).collect();
        assert_eq!(btree_size(&keys), (2.0, 0));
    }

    /// `r_lo_k_idx`: 500 keys in order (a rightmost split keeping 90%), then 72 equal
    /// to earlier ones (a split in half): three leaves, a root, a metapage, as
    /// PostgreSQL 15's 5 pages.
    #[test]
    fn splits_give_postgresqls_pages() {
        let mut keys: Vec<i64> = (0..500).collect();
        keys.extend((0..143).map(|i| i * 7).filter(|k| *k < 500));
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by_key(|&i| (keys[i], i));
        let mut rank = vec![0u64; keys.len()];
        for (pos, &i) in order.iter().enumerate() {
            rank[i] = pos as u64;
        }
        let entries: Vec<(Option<usize>, u64)> = rank.iter().map(|&r| (Some(4), r)).collect();
        assert_eq!(btree_size(&entries), (5.0, 1));
    }

    /// PostgreSQL 15 on the corpus's `loc` (310 rows, 2 pages, id's correlation 1):
    /// `Index Only Scan Backward using loc_id_idx on loc (cost=0.15..17.80 rows=310)`.
    #[test]
    fn a_full_index_scan_costs_what_postgresql_says() {
        let p = CostParams::default();
        let index = IndexInfo { column: 0, name: "loc_id_idx".into(), pages: 2.0, tree_height: 0 };
        let ic = btcostestimate(&index, 310.0, 1.0, (0, 1.0), 1.0, 1.0, &p);
        let heap = Heap { pages: 2.0, tuples: 310.0, allvisfrac: 0.0 };
        let (startup, total) = cost_index(&ic, &index, &heap, 1.0, &p);
        assert_eq!((cents(startup), cents(total)), ("0.15".into(), "17.80".into()));
    }

    /// After `VACUUM loc` every page is all-visible: PostgreSQL 15's `Index Only Scan
    /// Backward using loc_id_idx on loc (cost=0.15..12.80 rows=310)`, no heap page read.
    #[test]
    fn an_index_only_scan_of_a_vacuumed_table_reads_no_heap_page() {
        let p = CostParams::default();
        let index = IndexInfo { column: 0, name: "loc_id_idx".into(), pages: 2.0, tree_height: 0 };
        let ic = btcostestimate(&index, 310.0, 1.0, (0, 1.0), 1.0, 1.0, &p);
        let heap = Heap { pages: 2.0, tuples: 310.0, allvisfrac: 1.0 };
        let (startup, total) = cost_index(&ic, &index, &heap, 1.0, &p);
        assert_eq!((cents(startup), cents(total)), ("0.15".into(), "12.80".into()));
    }

    /// PostgreSQL 15 on `r_lo` (572 rows, 4 pages, index 5 pages of height 1), `k > 480
    /// AND k < 520` estimated at 22 rows: `Bitmap Heap Scan (cost=4.50..8.83)` over
    /// `Bitmap Index Scan (cost=0.00..4.50)`.
    #[test]
    fn a_bitmap_scan_costs_what_postgresql_says() {
        let p = CostParams::default();
        let index = IndexInfo { column: 0, name: "r_lo_k_idx".into(), pages: 5.0, tree_height: 1 };
        let sel = 22.0 / 572.0;
        let ic = btcostestimate(&index, 572.0, sel, (2, 1.0), 0.77862394, 1.0, &p);
        assert_eq!(cents(ic.total), "4.50");
        let (startup, total, fetched) = cost_bitmap_heap_scan(&ic, 4.0, 572.0, 22.0, 2.0 * p.cpu_operator_cost, &p);
        assert_eq!((cents(startup), cents(total), fetched), ("4.50".into(), "8.83".into(), 22.0));
    }

    /// PostgreSQL 15 on a primary key of 20,000 rows (heap 109 pages, index 57 pages
    /// of height 1, id's correlation 1), `id IN (1, 5, 9)`: three descents, `Index Scan
    /// using big_pkey on big (cost=0.29..16.92 rows=3)`, and with index scans off
    /// `Bitmap Heap Scan (cost=12.89..23.43)` over `Bitmap Index Scan (cost=0.00..12.89)`.
    #[test]
    fn an_in_list_descends_the_index_once_per_element() {
        let p = CostParams::default();
        let index = IndexInfo { column: 0, name: "big_pkey".into(), pages: 57.0, tree_height: 1 };
        let sel = 3.0 / 20_000.0;
        let ic = btcostestimate(&index, 20_000.0, sel, (1, 3.0), 1.0, 1.0, &p);
        let heap = Heap { pages: 109.0, tuples: 20_000.0, allvisfrac: 0.0 };
        let (startup, total) = cost_index(&ic, &index, &heap, 1.0, &p);
        assert_eq!((cents(startup), cents(total)), ("0.29".into(), "16.92".into()));
        assert_eq!(cents(ic.total), "12.89");
        let recheck = 1.5 * p.cpu_operator_cost;
        let (startup, total, _) = cost_bitmap_heap_scan(&ic, 109.0, 20_000.0, 3.0, recheck, &p);
        assert_eq!((cents(startup), cents(total)), ("12.89".into(), "23.43".into()));
    }

    /// Entries wider than a page (a long text key) never make a split of one entry:
    /// at most a leaf per entry, a root and the metapage.
    #[test]
    fn a_wide_entry_does_not_break_the_model() {
        let keys: Vec<(Option<usize>, u64)> = (0..5).map(|i| (Some(20_000), i)).collect();
        let (pages, height) = btree_size(&keys);
        assert!((2.0..=7.0).contains(&pages) && height <= 1, "{pages} pages, height {height}");
    }

    #[test]
    fn mackert_lohman_never_exceeds_the_table() {
        assert_eq!(index_pages_fetched(310.0, 2.0, 2.0), 2.0);
        assert_eq!(index_pages_fetched(1.0, 100.0, 3.0), 1.0);
    }
}
