//! What a Hash's EXPLAIN ANALYZE says of its table (`Buckets: 1024  Batches: 1
//! Memory Usage: 9kB`): nodeHash.c's sizing and space accounting, worked out from the
//! rows the join hashed.
//!
//! - **Buckets**: `ExecChooseHashTableSize` from the Hash's estimate (its input's
//!   rows and width, [`hash_table_size`]): at least 1024, a power of two. While the
//!   table fills, a tuple count above the buckets doubles them (`nbuckets_optimal`,
//!   `NTUP_PER_BUCKET` 1), and the table is resized at the end of the build: EXPLAIN
//!   then prints `Buckets: 2048 (originally 1024)`.
//! - **Memory Usage**: `spacePeak`, rounded up to kB: each hashed tuple counts
//!   `HJTUPLE_OVERHEAD` (16) plus its MinimalTuple's `t_len` (no allocator overhead:
//!   nodeHash.c's dense chunks), and the bucket array 8 bytes a bucket, added once the
//!   build is done.
//! - Which rows are hashed: those whose keys are all non-null, every row for a Right or
//!   Full join (`keepNulls`: their unmatched rows come out).
//! - Over several builds (a rescanned join) each figure is the largest of any build
//!   (`ExecHashAccumInstrumentation`).
//!
//! Where it departs from PostgreSQL: one batch always (the sandbox does not split a
//! table past `hash_mem`: PostgreSQL would, and print its batches); no skew buckets
//! (PostgreSQL makes them for the outer side's most common values when the outer key is
//! a column with statistics, and counts their space too).

use super::tuplesort_space::stored_order;
use crate::plan::costsize::{hash_table_size, CostParams};
use crate::plan::stats::tuple_len;
use crate::plan::SqlType;
use crate::types::Datum;

/// `HJTUPLE_OVERHEAD`: MAXALIGN(sizeof(HashJoinTupleData)).
const HJTUPLE_OVERHEAD: usize = 16;
/// A MinimalTuple is a heap tuple without its first 8 bytes (`MINIMAL_TUPLE_OFFSET`).
const MINIMAL_TUPLE_OFFSET: usize = 8;
/// `sizeof(HashJoinTuple)`: a bucket's pointer.
const BUCKET_POINTER: usize = 8;

/// A build's figures, as `HashInstrumentation` keeps them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HashSpace {
    pub nbuckets: u64,
    pub nbuckets_original: u64,
    pub space_peak: usize,
}

impl HashSpace {
    /// `ExecHashAccumInstrumentation`: the largest of each figure.
    pub fn max(self, other: HashSpace) -> HashSpace {
        HashSpace {
            nbuckets: self.nbuckets.max(other.nbuckets),
            nbuckets_original: self.nbuckets_original.max(other.nbuckets_original),
            space_peak: self.space_peak.max(other.space_peak),
        }
    }

    /// The TEXT line after `Buckets: ` (show_hash_info).
    pub fn text(&self) -> String {
        let kb = self.space_peak.div_ceil(1024);
        if self.nbuckets != self.nbuckets_original {
            format!(
                "{} (originally {})  Batches: 1 (originally 1)  Memory Usage: {kb}kB",
                self.nbuckets, self.nbuckets_original
            )
        } else {
            format!("{}  Batches: 1  Memory Usage: {kb}kB", self.nbuckets)
        }
    }
}

/// The planner's figures a Hash is sized with: its estimate (rows, width), the
/// settings, and its input's column types where known.
#[derive(Clone, Debug, Default)]
pub struct HashSizing {
    pub estimate: Option<(f64, f64)>,
    pub params: CostParams,
    pub types: Vec<Option<SqlType>>,
    /// The columns in the order PostgreSQL's tuples hold them (`tlist_order`; empty:
    /// the rows' own): alignment padding depends on it.
    pub order: Vec<usize>,
}

/// The figures of one build that hashed `rows` (each a whole input row).
pub fn hash_space<'a>(sizing: &HashSizing, rows: impl Iterator<Item = &'a [Datum]>) -> HashSpace {
    let (mut count, mut bytes) = (0u64, 0usize);
    let mut types: Option<(Vec<usize>, Vec<SqlType>)> = None;
    for row in rows {
        let (order, types) = types.get_or_insert_with(|| {
            let order = stored_order(&sizing.order, row.len());
            let types = resolve(&sizing.types, row);
            let stored = order.iter().map(|&c| types[c]).collect();
            (order, stored)
        });
        let stored: Vec<Datum> = order.iter().map(|&c| row[c].clone()).collect();
        count += 1;
        bytes += HJTUPLE_OVERHEAD + tuple_len(types, &stored) - MINIMAL_TUPLE_OFFSET;
    }
    // Without the planner's estimate (a built-in scenario), the rows hashed stand in.
    let (rows, width) = sizing.estimate.unwrap_or((count as f64, 0.0));
    let original = hash_table_size(rows, width, &sizing.params).0 as u64;
    let mut nbuckets = original;
    while count > nbuckets {
        nbuckets *= 2;
    }
    HashSpace { nbuckets, nbuckets_original: original, space_peak: bytes + nbuckets as usize * BUCKET_POINTER }
}

/// Each column's type: the planner's, else one guessed from the value.
fn resolve(types: &[Option<SqlType>], row: &[Datum]) -> Vec<SqlType> {
    row.iter()
        .enumerate()
        .map(|(c, d)| {
            types.get(c).copied().flatten().unwrap_or(match d {
                Datum::Float(_) => SqlType::Float8,
                Datum::Numeric(_) => SqlType::Numeric,
                Datum::Text(_) => SqlType::Text,
                _ => SqlType::Int8,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PostgreSQL 15: a Hash of 6 rows (int4, text of 2 bytes), estimated at 6 rows.
    #[test]
    fn small_table_in_1024_buckets() {
        let rows: Vec<Vec<Datum>> = (1..=6).map(|i| vec![Datum::Int(i), Datum::text("ab")]).collect();
        let sizing = HashSizing {
            estimate: Some((6.0, 7.0)),
            params: CostParams::default(),
            types: vec![Some(SqlType::Int4), Some(SqlType::Text)],
            order: vec![],
        };
        let s = hash_space(&sizing, rows.iter().map(Vec::as_slice));
        // 6 × (16 + 16 + 4 + 3) + 1024 × 8 = 8426 bytes.
        assert_eq!(s.text(), "1024  Batches: 1  Memory Usage: 9kB");
    }

    /// select l.id, f.val from l join f on l.id = f.id where f.val > 0: the Hash holds
    /// 287 rows of f as `f.val, f.id` (bigint, then int4: 28-byte tuples), 21kB in
    /// PostgreSQL 15; in the sandbox's row order (`id, val`, padded to 32) it would
    /// be 22kB.
    #[test]
    fn tuples_are_laid_out_in_postgresqls_order() {
        let rows: Vec<Vec<Datum>> = (1..=287).map(|i| vec![Datum::Int(i), Datum::Int(10 * i)]).collect();
        let sizing = |order: Vec<usize>| HashSizing {
            estimate: Some((287.0, 12.0)),
            params: CostParams::default(),
            types: vec![Some(SqlType::Int4), Some(SqlType::Int8)],
            order,
        };
        let kb = |order| hash_space(&sizing(order), rows.iter().map(Vec::as_slice)).space_peak.div_ceil(1024);
        assert_eq!(kb(vec![1, 0]), 21);
        assert_eq!(kb(vec![]), 22);
    }

    #[test]
    fn buckets_double_past_the_estimate() {
        let rows: Vec<Vec<Datum>> = (0..1500).map(|i| vec![Datum::Int(i)]).collect();
        let sizing = HashSizing {
            estimate: Some((10.0, 4.0)),
            params: CostParams::default(),
            types: vec![Some(SqlType::Int4)],
            order: vec![],
        };
        let s = hash_space(&sizing, rows.iter().map(Vec::as_slice));
        assert_eq!((s.nbuckets, s.nbuckets_original), (2048, 1024));
        assert!(s.text().starts_with("2048 (originally 1024)  Batches: 1 (originally 1)"));
    }
}
