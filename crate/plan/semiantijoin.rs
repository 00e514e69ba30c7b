//! The estimates of semi and anti joins (`JOIN_SEMI`, `JOIN_ANTI`), as PostgreSQL 15
//! makes them: the selectivity of the join clause (`eqjoinsel_semi`, selfuncs.c), the
//! factors every semi/anti join path is costed with (`compute_semi_anti_join_factors`,
//! costsize.c), the join relation's rows (`calc_joinrel_size_estimate`), and the parts of
//! `final_cost_nestloop` and `final_cost_hashjoin` that differ because the executor
//! stops at an outer row's first match.
//!
//! The protocol: `costsize::Model` asks [`SemiAntiJoinFactors::new`] for a join's
//! factors from its key columns' statistics (the outer's first, then the inner's) and
//! the inner relation's rows, then [`semi_anti_rows`] for the join's rows and the
//! `*_terms` functions for the costs that depend on them.
//!
//! Invariants: `outer_match_frac` is in [0, 1] (the fraction of outer rows with at
//! least one match, for both join types); `match_count` is at least 1 (the average
//! matches of an outer row that has one); every path of one join has its rows (they
//! are the join relation's, `set_joinrel_size_estimates`).
//!
//! Where it departs from PostgreSQL: no foreign-key selectivity (`fkselec` is 1, the
//! sandbox has no foreign keys); the inner side is never a parameterized index scan
//! (`has_indexed_join_quals` is false), so an unmatched outer row costs a whole inner
//! pass in a Nested Loop.

use super::selectivity::{self, clamp_row_est, get_variable_numdistinct, VarData};
use super::JoinType;

/// `CLAMP_PROBABILITY`.
fn clamp(p: f64) -> f64 {
    if p.is_nan() {
        0.0
    } else {
        p.clamp(0.0, 1.0)
    }
}

/// `eqjoinsel_semi`: the fraction of the outer relation's rows (`a`) that have at
/// least one partner among the inner relation's (`b`, `inner_rows` of them after its
/// restrictions) for `a = b`. The MCVs the two lists share certainly have one; of the
/// other non-null rows, all do when the inner side has at least as many distinct
/// values (else the fraction `nd2 / nd1`), or half when either count is a default.
pub fn eqjoinsel_semi(a: &VarData, b: &VarData, inner_rows: f64) -> f64 {
    let (mut nd1, isdefault1) = get_variable_numdistinct(a);
    let (mut nd2, mut isdefault2) = get_variable_numdistinct(b);
    // The inner side cannot have more distinct values than rows.
    if nd2 >= inner_rows {
        nd2 = inner_rows;
        isdefault2 = false;
    }
    let nullfrac1 = a.stats.map_or(0.0, |s| s.null_frac);
    if let (Some(s1), Some(s2)) = (a.stats, b.stats) {
        if !s1.mcv.is_empty() && !s2.mcv.is_empty() {
            // Only as many inner MCVs as the inner side can hold distinct values.
            let clamped2 = (s2.mcv.len() as f64).min(nd2) as usize;
            let mut hasmatch2 = vec![false; clamped2];
            let (mut matchfreq1, mut nmatches) = (0.0, 0.0);
            for (v1, f1) in &s1.mcv {
                if let Some(j) = (0..clamped2).find(|&j| !hasmatch2[j] && s2.mcv[j].0 == *v1) {
                    hasmatch2[j] = true;
                    matchfreq1 += f1;
                    nmatches += 1.0;
                }
            }
            let matchfreq1 = clamp(matchfreq1);
            let uncertainfrac = if !isdefault1 && !isdefault2 {
                nd1 -= nmatches;
                nd2 -= nmatches;
                if nd1 <= nd2 || nd2 < 0.0 {
                    1.0
                } else {
                    nd2 / nd1
                }
            } else {
                0.5
            };
            let uncertain = clamp(1.0 - matchfreq1 - nullfrac1);
            return clamp(matchfreq1 + uncertainfrac * uncertain);
        }
    }
    let selec = if !isdefault1 && !isdefault2 {
        if nd1 <= nd2 || nd2 < 0.0 {
            1.0 - nullfrac1
        } else {
            (nd2 / nd1) * (1.0 - nullfrac1)
        }
    } else {
        0.5 * (1.0 - nullfrac1)
    };
    clamp(selec)
}

/// `SemiAntiJoinFactors`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SemiAntiJoinFactors {
    /// The fraction of outer rows with at least one match (`jselec`).
    pub outer_match_frac: f64,
    /// The average matches of an outer row that has any.
    pub match_count: f64,
}

impl SemiAntiJoinFactors {
    /// `compute_semi_anti_join_factors` from the join clauses' semi selectivity
    /// (`jselec`, the product of their `eqjoinsel_semi`) and inner-join selectivity
    /// (`nselec`, of their `eqjoinsel`): an outer row with a match has
    /// `nselec · inner_rows / jselec` of them on average.
    pub fn new(jselec: f64, nselec: f64, inner_rows: f64) -> Self {
        let match_count = if jselec > 0.0 { (nselec * inner_rows / jselec).max(1.0) } else { 1.0 };
        SemiAntiJoinFactors { outer_match_frac: jselec, match_count }
    }

    /// `outer_matched_rows`: the outer rows expected to find a match.
    pub fn outer_matched_rows(&self, outer_rows: f64) -> f64 {
        (outer_rows * self.outer_match_frac).round_ties_even()
    }

    /// `inner_scan_frac`: the share of the inner rows a matched outer row reads
    /// before its first match (`1 / (match_count + 1)` with a fuzz factor of 2).
    pub fn inner_scan_frac(&self) -> f64 {
        2.0 / (self.match_count + 1.0)
    }
}

/// `calc_joinrel_size_estimate` for a semi join (the outer rows with a match) or an
/// anti join (those without).
pub fn semi_anti_rows(outer_rows: f64, jselec: f64, jt: JoinType) -> f64 {
    match jt {
        JoinType::Anti => clamp_row_est(outer_rows * (1.0 - jselec)),
        _ => clamp_row_est(outer_rows * jselec),
    }
}

/// The semi selectivity of a join on its key columns (the outer's, the inner's):
/// `eqjoinsel` for JOIN_SEMI/JOIN_ANTI, each key's `eqjoinsel_semi` clamped to what
/// an inner join of the same inputs would return (`Min(selec, inner_rel->rows *
/// selec_inner)`: a semi join never yields more rows than the inner join, N1 * N2 *
/// Sinner). This is how restrictions on the inner side's relation reach the
/// estimate when the inner side keeps as many distinct keys as the outer has.
pub fn jselec(keys: &[(VarData, VarData)], inner_rows: f64) -> f64 {
    keys.iter()
        .map(|(o, i)| clamp(eqjoinsel_semi(o, i, inner_rows).min(inner_rows * selectivity::eqjoinsel(o, i))))
        .product()
}

/// The inner-join selectivity of the same clauses (`nselec`).
pub fn nselec(keys: &[(VarData, VarData)]) -> f64 {
    keys.iter().map(|(o, i)| selectivity::eqjoinsel(o, i)).product()
}

/// `final_cost_nestloop` for `JOIN_SEMI`/`JOIN_ANTI` without indexed join quals: the
/// inner side's first run once, a fraction `inner_scan_frac` of a rescan for each
/// further matched outer row, a whole rescan for each unmatched one; and the pairs
/// compared (`ntuples`). Returns (run cost of the inner side, ntuples).
pub fn nestloop_inner_terms(
    f: &SemiAntiJoinFactors,
    outer_rows: f64,
    inner_rows: f64,
    (inner_run_cost, inner_rescan_run_cost): (f64, f64),
) -> (f64, f64) {
    let matched = f.outer_matched_rows(outer_rows);
    let frac = f.inner_scan_frac();
    let mut run = inner_run_cost;
    if matched > 1.0 {
        run += (matched - 1.0) * inner_rescan_run_cost * frac;
    }
    run += (outer_rows - matched) * inner_rescan_run_cost;
    let ntuples = matched * inner_rows * frac + (outer_rows - matched) * inner_rows;
    (run, ntuples)
}

/// `final_cost_hashjoin` for `JOIN_SEMI`/`JOIN_ANTI`: a matched outer row compares
/// the hash clauses with `inner_scan_frac` of its bucket's rows, half of them; an
/// unmatched one with a twentieth of an average bucket's (most buckets it lands in hold
/// other keys). Returns (the run cost of those comparisons, hashjointuples: the rows
/// that pass, the matched outer rows for a semi join, the others for an anti join).
pub fn hashjoin_terms(
    f: &SemiAntiJoinFactors,
    jt: JoinType,
    (outer_rows, inner_rows): (f64, f64),
    hash_qual_per_tuple: f64,
    (innerbucketsize, virtualbuckets): (f64, f64),
) -> (f64, f64) {
    let matched = f.outer_matched_rows(outer_rows);
    let frac = f.inner_scan_frac();
    let mut run = hash_qual_per_tuple * matched * clamp_row_est(inner_rows * innerbucketsize * frac) * 0.5;
    run += hash_qual_per_tuple * (outer_rows - matched) * clamp_row_est(inner_rows / virtualbuckets) * 0.05;
    let tuples = if jt == JoinType::Anti { outer_rows - matched } else { matched };
    (run, tuples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semi_selectivity_without_stats_is_half_the_non_null_rows() {
        // Both counts default (200 distinct of more than 200 rows each): half.
        let (a, b) = (VarData::none(1000.0), VarData::none(1000.0));
        assert_eq!(eqjoinsel_semi(&a, &b, 1000.0), 0.5);
    }

    #[test]
    fn semi_selectivity_is_nd2_over_nd1_when_the_inner_side_has_fewer_values() {
        // 100 and 40 rows, no stats: as many distinct values as rows, not defaults.
        let (a, b) = (VarData::none(100.0), VarData::none(40.0));
        assert!((eqjoinsel_semi(&a, &b, 40.0) - 0.4).abs() < 1e-12);
        // The inner rows after its restriction clamp its distinct values.
        assert!((eqjoinsel_semi(&a, &b, 10.0) - 0.1).abs() < 1e-12);
        assert_eq!(eqjoinsel_semi(&b, &a, 100.0), 1.0);
    }

    #[test]
    fn semi_selectivity_is_at_most_the_inner_joins() {
        // The outer column: 4 MCVs over 97% of the rows, 3% NULL; the inner one
        // unique over 6 rows, no MCVs, a restriction leaving 4 of them. The inner
        // side's 4 distinct values cover the outer's 4 (eqjoinsel_semi: every
        // non-null row), but the inner join would return only 4 × (0.97 / 6) of
        // each outer row: the semi selectivity is clamped to that.
        use crate::plan::stats::ColumnStats;
        use crate::types::Datum;
        let f = 0.25 * (1.0 - 0.03);
        let mcv = (0..4).map(|i| (Datum::Int(i), f)).collect();
        let outer =
            ColumnStats { null_frac: 0.03, avg_width: 4, n_distinct: 4.0, mcv, histogram: vec![], correlation: None };
        let inner = ColumnStats {
            null_frac: 0.0,
            avg_width: 4,
            n_distinct: -1.0,
            mcv: vec![],
            histogram: vec![],
            correlation: None,
        };
        let a = VarData { stats: Some(&outer), tuples: 310.0, is_bool: false };
        let b = VarData { stats: Some(&inner), tuples: 6.0, is_bool: false };
        assert!((eqjoinsel_semi(&a, &b, 4.0) - 0.97).abs() < 1e-12);
        assert!((jselec(&[(a, b)], 4.0) - 0.97 * 4.0 / 6.0).abs() < 1e-12);
        assert!((jselec(&[(a, b)], 6.0) - 0.97).abs() < 1e-12);
    }

    #[test]
    fn factors_rows_and_anti_rows_complement() {
        let f = SemiAntiJoinFactors::new(0.25, 0.01, 100.0);
        assert_eq!(f.match_count, 4.0);
        assert_eq!(f.outer_matched_rows(10.0), 2.0);
        assert_eq!(semi_anti_rows(1000.0, 0.25, JoinType::Semi), 250.0);
        assert_eq!(semi_anti_rows(1000.0, 0.25, JoinType::Anti), 750.0);
        // No match expected at all: one row (clamp_row_est), match_count 1.
        assert_eq!(semi_anti_rows(1000.0, 0.0, JoinType::Semi), 1.0);
        assert_eq!(SemiAntiJoinFactors::new(0.0, 0.0, 5.0).match_count, 1.0);
    }

    #[test]
    fn an_unmatched_outer_row_costs_a_whole_inner_rescan() {
        let none = SemiAntiJoinFactors::new(0.0, 0.0, 10.0);
        let (run, ntuples) = nestloop_inner_terms(&none, 5.0, 10.0, (3.0, 2.0));
        assert_eq!(run, 3.0 + 5.0 * 2.0);
        assert_eq!(ntuples, 50.0);
        let all = SemiAntiJoinFactors::new(1.0, 0.1, 10.0);
        let (run, ntuples) = nestloop_inner_terms(&all, 5.0, 10.0, (3.0, 2.0));
        assert_eq!(run, 3.0 + 4.0 * 2.0 * 1.0);
        assert_eq!(ntuples, 5.0 * 10.0 * 1.0);
    }
}
