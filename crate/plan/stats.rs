//! Statistics: what `ANALYZE` (and `VACUUM`) leave in PostgreSQL 15's `pg_class` and
//! `pg_statistic`, computed from a relation's rows as `analyze.c` computes them, and
//! the sizes the planner assumes for a relation never analyzed (`plancat.c`).
//!
//! - [`heap_pages`]: how many 8 kB heap pages the rows take, laid out as
//!   `heap_form_tuple` and `RelationGetBufferForTuple` lay them out (a 23-byte header
//!   MAXALIGNed, with a null bitmap when a value is NULL; each column at its type's
//!   alignment; short varlenas with a 1-byte header and no alignment; a 4-byte line
//!   pointer per tuple; a tuple goes on the last page while `pd_upper - pd_lower - 4`
//!   holds its MAXALIGNed length). `RelationGetNumberOfBlocks` of a table is this;
//!   `pg_relation_size / 8192` of a remote one too (postgres_fdw's
//!   `postgresAnalyzeForeignTable`).
//! - [`compute_scalar_stats`]: `analyze.c`'s `compute_scalar_stats` (every type the
//!   sandbox stores has a `<` operator, so `compute_distinct_stats` is never the one
//!   PostgreSQL picks for them): null fraction, average width, the number of distinct
//!   values (the Haas–Stokes estimator when the sample is not the whole table), the
//!   most common values kept by `analyze_mcv_list`, and an equi-depth histogram of the
//!   rest, and the correlation of the values' order with the heap's (which
//!   `btcostestimate` reads for an index on the column).
//! - [`heap_blocks`]: the page each row is on (a Bitmap Heap Scan's `Heap Blocks`).
//! - [`sample_positions`]: which rows make the sample of `300 × default_statistics_target`
//!   rows.
//!
//! Invariants:
//! - a relation with at most `300 × default_statistics_target` rows is read whole, so
//!   its figures are PostgreSQL's exactly (given the same rows);
//! - `reltuples` is −1 until the relation is analyzed or vacuumed (PostgreSQL 14 and
//!   later), `relpages` 0 (−1 for a partitioned table);
//! - widths are the stored sizes (`VARSIZE_ANY` of the packed value for text and
//!   numeric), as `avg_width` is.
//!
//! Where it departs from PostgreSQL: a larger relation's sample is not Vitter's random
//! reservoir (`acquire_sample_rows`, `postgresAcquireSampleRowsFunc`) but a selection
//! sample with a fixed seed, so its MCV frequencies and histogram differ from any one
//! PostgreSQL run's (as two runs of PostgreSQL's differ); its `reltuples` is the row count (PostgreSQL's is the same
//! whenever it reads every block, i.e. below 30,000 pages at the default target).
//! Values wider than 1 kB (`WIDTH_THRESHOLD`, left out of PostgreSQL's statistics),
//! TOAST compression (a tuple counts at most 2032 bytes in its page) and dead tuples
//! are not modelled.

use super::SqlType;
use crate::types::Datum;

/// `BLCKSZ`.
pub const BLCKSZ: f64 = 8192.0;
/// `SizeOfPageHeaderData`.
const PAGE_HEADER: usize = 24;
/// `sizeof(ItemIdData)`.
const ITEM_ID: usize = 4;
/// `SizeofHeapTupleHeader` (before MAXALIGN).
const TUPLE_HEADER: usize = 23;
/// `TOAST_TUPLE_THRESHOLD` for 8 kB pages.
const TOAST_TUPLE_THRESHOLD: usize = 2032;
/// `MaxHeapTuplesPerPage` for 8 kB pages.
const MAX_TUPLES_PER_PAGE: usize = 291;
/// `DEFAULT_STATISTICS_TARGET`.
pub const DEFAULT_STATISTICS_TARGET: usize = 100;

fn maxalign(n: usize) -> usize {
    (n + 7) & !7
}

fn align(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// What `pg_statistic` holds for one column (`stanullfrac`, `stawidth`, `stadistinct`,
/// the MCV slot and the histogram slot).
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnStats {
    pub null_frac: f64,
    pub avg_width: i32,
    /// > 0: that many distinct values; < 0: minus the fraction of rows (−1: unique).
    pub n_distinct: f64,
    /// Most common values with their frequencies, most common first.
    pub mcv: Vec<(Datum, f64)>,
    /// Histogram bounds of the values not in `mcv`, ascending (empty: none).
    pub histogram: Vec<Datum>,
    /// The correlation slot (`STATISTIC_KIND_CORRELATION`): how closely the values'
    /// sorted order follows their physical order, −1 to 1, stored as a float4 as
    /// `stanumbers` are; None with fewer than two non-null values. `btcostestimate`
    /// reads it for an index on the column (`plan::indexcost`).
    pub correlation: Option<f64>,
}

/// `pg_class.relpages`, `pg_class.reltuples` and the columns' statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct RelStats {
    pub relpages: f64,
    /// −1: never analyzed or vacuumed.
    pub reltuples: f64,
    /// Per column of the relation, when ANALYZE computed it (VACUUM computes none).
    pub columns: Vec<Option<ColumnStats>>,
}

/// `typlen`/`typalign` of a fixed-width type; None for a varlena (text, numeric).
pub(crate) fn fixed(ty: SqlType) -> Option<(usize, usize)> {
    match ty {
        SqlType::Bool => Some((1, 1)),
        SqlType::Int2 => Some((2, 2)),
        SqlType::Int4 => Some((4, 4)),
        SqlType::Int8 | SqlType::Float8 => Some((8, 8)),
        SqlType::Numeric | SqlType::Text => None,
    }
}

/// Bytes of a numeric's payload (`NumericData` after its varlena header): the short
/// format's 2-byte header and 2 bytes per base-10000 digit, leading and trailing zero
/// digits stripped (`make_result`).
fn numeric_payload(n: &crate::numeric::Numeric) -> usize {
    if !matches!(n, crate::numeric::Numeric::Finite { .. }) {
        return 2;
    }
    let text = n.abs().to_string();
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    // Digits grouped by 4 from the decimal point in both directions.
    let mut groups: Vec<u32> = Vec::new();
    let pad_int = format!("{}{}", "0".repeat((4 - int.len() % 4) % 4), int);
    let pad_frac = format!("{}{}", frac, "0".repeat((4 - frac.len() % 4) % 4));
    for chunk in pad_int.as_bytes().chunks(4).chain(pad_frac.as_bytes().chunks(4)) {
        groups.push(std::str::from_utf8(chunk).ok().and_then(|s| s.parse().ok()).unwrap_or(0));
    }
    let first = groups.iter().position(|&g| g != 0).unwrap_or(groups.len());
    let last = groups.iter().rposition(|&g| g != 0).map_or(first, |l| l + 1);
    2 + 2 * last.saturating_sub(first)
}

/// The stored size of a varlena value: its payload with a 1-byte header when it fits
/// in 126 bytes (packed, unaligned), else a 4-byte header aligned to 4. Returns
/// (size, packed).
fn varlena_size(ty: SqlType, d: &Datum) -> (usize, bool) {
    let payload = match (ty, d) {
        (SqlType::Numeric, Datum::Int(_) | Datum::Numeric(_)) => numeric_payload(&d.as_numeric().expect("a number")),
        (_, Datum::Text(s)) => s.len(),
        (_, other) => other.to_string().len(),
    };
    if payload < 127 {
        (payload + 1, true)
    } else {
        (payload + 4, false)
    }
}

/// The stored width of one non-null value (`VARSIZE_ANY` or `typlen`): what
/// `avg_width` averages.
pub fn value_width(ty: SqlType, d: &Datum) -> usize {
    match fixed(ty) {
        Some((len, _)) => len,
        None => varlena_size(ty, d).0,
    }
}

/// `heap_compute_data_size` plus the header: a tuple's `t_len`.
pub(crate) fn tuple_len(types: &[SqlType], row: &[Datum]) -> usize {
    let has_nulls = row.iter().any(Datum::is_null);
    let header = TUPLE_HEADER + if has_nulls { types.len().div_ceil(8) } else { 0 };
    let mut off = 0usize;
    for (ty, d) in types.iter().zip(row) {
        if d.is_null() {
            continue;
        }
        match fixed(*ty) {
            Some((len, al)) => off = align(off, al) + len,
            None => {
                let (size, packed) = varlena_size(*ty, d);
                off = if packed { off + size } else { align(off, 4) + size };
            }
        }
    }
    maxalign(header) + off
}

/// The heap pages the rows take, inserted in this order into an empty table
/// (`RelationGetBufferForTuple` with fillfactor 100: the last page while the tuple fits).
pub fn heap_pages<'a>(types: &[SqlType], rows: impl Iterator<Item = &'a [Datum]>) -> u64 {
    heap_layout(types, rows, &mut |_| {})
}

/// The heap page (block number, from 0) each row is on, laid out as [`heap_pages`]
/// lays them out: what a Bitmap Heap Scan counts as `Heap Blocks`.
pub fn heap_blocks<'a>(types: &[SqlType], rows: impl Iterator<Item = &'a [Datum]>) -> Vec<u32> {
    let mut blocks = Vec::new();
    heap_layout(types, rows, &mut |b| blocks.push(b as u32));
    blocks
}

/// Lays the rows out on pages, calling `at` with each row's block; returns the pages.
fn heap_layout<'a>(types: &[SqlType], rows: impl Iterator<Item = &'a [Datum]>, at: &mut dyn FnMut(u64)) -> u64 {
    let (mut pages, mut free, mut ntup) = (0u64, 0usize, 0usize);
    for row in rows {
        // A tuple past TOAST_TUPLE_THRESHOLD (2032 bytes) has its long values
        // compressed or moved to the TOAST table; not modelled, so it counts as that
        // (and never as more than a page).
        let len = maxalign(tuple_len(types, row)).min(TOAST_TUPLE_THRESHOLD);
        // PageGetHeapFreeSpace: the hole minus one line pointer, 0 on a full page.
        let fits = pages > 0 && ntup < MAX_TUPLES_PER_PAGE && free >= ITEM_ID && free - ITEM_ID >= len;
        if !fits {
            pages += 1;
            free = 8192 - PAGE_HEADER;
            ntup = 0;
        }
        free = free.saturating_sub(len + ITEM_ID);
        ntup += 1;
        at(pages - 1);
    }
    pages
}

/// `get_typavgwidth` for a column without statistics: `typlen`, or 32 for a varlena
/// without a length limit (text, numeric without typmod).
pub fn type_avg_width(ty: SqlType) -> f64 {
    match fixed(ty) {
        Some((len, _)) => len as f64,
        None => 32.0,
    }
}

/// The rows ANALYZE reads: all of them when there are at most `targrows`, else
/// `targrows` rows chosen by Knuth's selection sampling (Algorithm S, as
/// `BlockSampler` chooses blocks) with a fixed seed, so a load always samples the
/// same rows (see the module's departures). Evenly spaced rows would alias with
/// periodic data (`i % 10` sampled every 10/3 rows shows 3 values of 10).
pub fn sample_positions(nrows: usize, targrows: usize) -> Vec<usize> {
    if nrows <= targrows {
        return (0..nrows).collect();
    }
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut out = Vec::with_capacity(targrows);
    for t in 0..nrows {
        let (left, need) = ((nrows - t) as f64, (targrows - out.len()) as f64);
        if need > 0.0 && left * next() < need {
            out.push(t);
        }
    }
    out
}

/// `analyze.c`'s `compute_scalar_stats` over one column's sampled values.
/// `totalrows`: the relation's row count (the sample may be smaller); `target`: the
/// column's statistics target (`default_statistics_target`).
pub fn compute_scalar_stats(ty: SqlType, sample: &[Datum], totalrows: f64, target: usize) -> ColumnStats {
    let samplerows = sample.len();
    let mut values: Vec<&Datum> = Vec::with_capacity(samplerows);
    let mut total_width = 0usize;
    for d in sample {
        if d.is_null() {
            continue;
        }
        total_width += value_width(ty, d);
        values.push(d);
    }
    let nonnull = values.len();
    let null_cnt = samplerows - nonnull;
    if nonnull == 0 {
        // Every value NULL: stanullfrac 1, stawidth 0, stadistinct 0.
        return ColumnStats {
            null_frac: if samplerows > 0 { 1.0 } else { 0.0 },
            avg_width: 0,
            n_distinct: 0.0,
            mcv: vec![],
            histogram: vec![],
            correlation: None,
        };
    }
    let correlation = correlation(&values);
    // A stable sort: PostgreSQL breaks ties by sample position (compare_scalars).
    values.sort();
    let num_mcv_target = target;
    // Runs of equal values: the most common ones (seen more than once) are tracked,
    // most common first; of equal counts the smaller value first.
    let (mut ndistinct, mut nmultiple) = (0usize, 0usize);
    let mut track: Vec<(usize, usize)> = Vec::new(); // (count, first index)
    let mut dups = 0usize;
    for i in 0..nonnull {
        dups += 1;
        if i + 1 == nonnull || values[i] != values[i + 1] {
            ndistinct += 1;
            if dups > 1 {
                nmultiple += 1;
                if track.len() < num_mcv_target || dups > track[track.len() - 1].0 {
                    let at = track.iter().position(|&(c, _)| dups > c).unwrap_or(track.len());
                    track.insert(at, (dups, i + 1 - dups));
                    track.truncate(num_mcv_target);
                }
            }
            dups = 0;
        }
    }
    let null_frac = null_cnt as f64 / samplerows as f64;
    let avg_width = match fixed(ty) {
        Some((len, _)) => len as i32,
        None => (total_width as f64 / nonnull as f64) as i32,
    };
    let n = samplerows as f64;
    let mut stadistinct = if nmultiple == 0 {
        // Every value unique in the sample: assume unique in the table.
        -(1.0 - null_frac)
    } else if nmultiple == ndistinct {
        // Every value seen more than once: assume all of them were seen.
        ndistinct as f64
    } else {
        // Haas and Stokes' Duj1 estimator.
        let f1 = (ndistinct - nmultiple) as f64;
        let d = f1 + nmultiple as f64;
        let big_n = totalrows;
        let est = (n * d) / ((n - f1) + f1 * n / big_n);
        est.max(d).min(big_n).add_half_floor()
    };
    if stadistinct > 0.1 * totalrows {
        stadistinct = -(stadistinct / totalrows);
    }
    // Most common values.
    let mut num_mcv = num_mcv_target.min(track.len());
    if !(track.len() == ndistinct && stadistinct > 0.0 && track.len() <= num_mcv_target) && num_mcv > 0 {
        let counts: Vec<usize> = track.iter().map(|t| t.0).collect();
        num_mcv = analyze_mcv_list(&counts[..num_mcv], stadistinct, null_frac, samplerows, totalrows);
    }
    let mcv: Vec<(Datum, f64)> =
        track[..num_mcv].iter().map(|&(c, first)| (values[first].clone(), c as f64 / n)).collect();
    // Histogram of the values left when the MCVs' runs are removed.
    let mut histogram = vec![];
    let num_hist = (ndistinct - num_mcv).min(target + 1);
    if num_hist >= 2 {
        let rest: Vec<&Datum> = values.iter().copied().filter(|v| !mcv.iter().any(|(m, _)| m == *v)).collect();
        let nvals = rest.len();
        let (delta, deltafrac) = ((nvals - 1) / (num_hist - 1), (nvals - 1) % (num_hist - 1));
        let (mut pos, mut posfrac) = (0usize, 0usize);
        for _ in 0..num_hist {
            histogram.push(rest[pos].clone());
            pos += delta;
            posfrac += deltafrac;
            if posfrac >= num_hist - 1 {
                pos += 1;
                posfrac -= num_hist - 1;
            }
        }
    }
    ColumnStats { null_frac, avg_width, n_distinct: stadistinct, mcv, histogram, correlation }
}

/// `compute_scalar_stats`' correlation: the non-null values in sample order (their
/// `tupno`), sorted by value (ties by `tupno`, as `compare_scalars` breaks them); the
/// Pearson correlation of sorted position against `tupno`, rounded to a float4 as
/// `pg_statistic.stanumbers` keeps it. The sample is in physical order (a table read
/// whole, or `sample_positions`' ascending rows), so 1 means the heap is in the
/// column's order.
fn correlation(values: &[&Datum]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| values[a].cmp(values[b]));
    let xysum: f64 = order.iter().enumerate().map(|(i, &tupno)| i as f64 * tupno as f64).sum();
    let nf = n as f64;
    let xsum = (nf - 1.0) * nf / 2.0;
    let x2sum = (nf - 1.0) * nf * (2.0 * nf - 1.0) / 6.0;
    let corr = (nf * xysum - xsum * xsum) / (nf * x2sum - xsum * xsum);
    Some(corr as f32 as f64)
}

trait HalfFloor {
    fn add_half_floor(self) -> f64;
}
impl HalfFloor for f64 {
    /// `floor(x + 0.5)`, as analyze.c rounds the estimate.
    fn add_half_floor(self) -> f64 {
        (self + 0.5).floor()
    }
}

/// `analyze_mcv_list`: how many of the tracked values (counts, most common first) to
/// keep: all when the whole table was sampled; else drop the least common while it is
/// not significantly more common than a value outside the list would be.
fn analyze_mcv_list(counts: &[usize], stadistinct: f64, null_frac: f64, samplerows: usize, totalrows: f64) -> usize {
    let mut num_mcv = counts.len();
    if samplerows as f64 == totalrows || totalrows <= 1.0 {
        return num_mcv;
    }
    let ndistinct_table = if stadistinct < 0.0 { -stadistinct * totalrows } else { stadistinct };
    let n = samplerows as f64;
    let mut sumcount: f64 = counts[..num_mcv - 1].iter().map(|&c| c as f64).sum();
    while num_mcv > 0 {
        let mut selec = (1.0 - sumcount / n - null_frac).clamp(0.0, 1.0);
        let otherdistinct = ndistinct_table - (num_mcv as f64 - 1.0);
        if otherdistinct > 1.0 {
            selec /= otherdistinct;
        }
        let big_n = totalrows;
        let k = big_n * counts[num_mcv - 1] as f64 / n;
        let variance = n * k * (big_n - k) * (big_n - n) / (big_n * big_n * (big_n - 1.0));
        if counts[num_mcv - 1] as f64 > selec * n + 2.0 * variance.sqrt() + 0.5 {
            break;
        }
        num_mcv -= 1;
        if num_mcv == 0 {
            break;
        }
        sumcount -= counts[num_mcv - 1] as f64;
    }
    num_mcv
}

/// ANALYZE of one relation from its sample (the rows [`sample_positions`] chose, all of
/// them for a small relation): `reltuples` (`totalrows`), the pages given, and every
/// column's statistics.
pub fn analyze_sample(
    types: &[SqlType],
    sample: &[Vec<Datum>],
    totalrows: f64,
    relpages: f64,
    target: usize,
) -> RelStats {
    let columns = types
        .iter()
        .enumerate()
        .map(|(c, ty)| {
            let values: Vec<Datum> = sample.iter().map(|r| r.get(c).cloned().unwrap_or_default()).collect();
            if values.is_empty() {
                None
            } else {
                Some(compute_scalar_stats(*ty, &values, totalrows, target))
            }
        })
        .collect();
    RelStats { relpages, reltuples: totalrows, columns }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_of_seed_004s_tables_are_postgresqls() {
        // (int, int, 'FM00000' text): 40-byte tuples + 4, 185 a page: 541 pages for
        // 100,000 rows, as pg_class.relpages says after VACUUM.
        let rows: Vec<Vec<Datum>> =
            (0..100_000).map(|i| vec![Datum::Int(i % 10), Datum::Int(i), Datum::text(&format!("{i:05}"))]).collect();
        let types = [SqlType::Int4, SqlType::Int4, SqlType::Text];
        assert_eq!(heap_pages(&types, rows.iter().map(|r| r.as_slice())), 541);
    }

    #[test]
    fn small_tables_give_exact_figures() {
        let sample: Vec<Datum> = [1, 1, 2, 3, 3, 3].iter().map(|&v| Datum::Int(v)).chain([Datum::Null]).collect();
        let s = compute_scalar_stats(SqlType::Int4, &sample, 7.0, 100);
        assert!((s.null_frac - 1.0 / 7.0).abs() < 1e-12);
        // 3 distinct, 2 of them repeated: Haas-Stokes over the whole table gives 3.
        assert_eq!(s.n_distinct, -(3.0 / 7.0));
        assert_eq!(s.mcv.iter().map(|m| m.0.clone()).collect::<Vec<_>>(), vec![Datum::Int(3), Datum::Int(1)]);
        assert!(s.histogram.is_empty());
    }

    #[test]
    fn samples_are_the_target_size_and_see_periodic_values() {
        let p = sample_positions(100_000, 30_000);
        assert_eq!(p.len(), 30_000);
        assert!(p.windows(2).all(|w| w[0] < w[1]));
        let seen: std::collections::BTreeSet<usize> = p.iter().map(|i| i % 10).collect();
        assert_eq!(seen.len(), 10);
    }

    #[test]
    fn wide_rows_count_a_toasted_size_and_never_overflow() {
        let rows: Vec<Vec<Datum>> = (0..10).map(|_| vec![Datum::text(&"x".repeat(100_000))]).collect();
        assert_eq!(heap_pages(&[SqlType::Text], rows.iter().map(|r| r.as_slice())), 3);
    }

    /// `compute_scalar_stats`' correlation: 1 for values in heap order, −1 reversed,
    /// as `pg_stats.correlation` shows (`loc.id` is 1 in the corpus).
    #[test]
    fn correlation_follows_the_heap_order() {
        let up: Vec<Datum> = (0..50).map(Datum::Int).collect();
        let down: Vec<Datum> = (0..50).rev().map(Datum::Int).collect();
        let s = |v: &[Datum]| compute_scalar_stats(SqlType::Int4, v, v.len() as f64, 100).correlation;
        assert_eq!(s(&up), Some(1.0));
        assert_eq!(s(&down), Some(-1.0));
        assert_eq!(s(&[Datum::Int(1)]), None);
    }

    #[test]
    fn numeric_sizes_follow_base_10000_digits() {
        let payload = |s: &str| numeric_payload(&crate::numeric::Numeric::parse(s).unwrap());
        assert_eq!(payload("0"), 2);
        assert_eq!(payload("12.5"), 6);
        assert_eq!(payload("10000"), 4);
        assert_eq!(payload("123456"), 6);
        assert_eq!(payload("12.50"), 6);
    }
}
