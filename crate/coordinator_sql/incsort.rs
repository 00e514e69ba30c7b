//! Incremental Sort paths, where PostgreSQL 15's `create_ordered_paths` (planner.c)
//! adds them: for ORDER BY over a path already ordered by a prefix of its keys (an
//! Index Scan on the first key's column, an ordered Append of range partitions on
//! it), beside the Sort over the cheapest path, an Incremental Sort over that path
//! (`create_incremental_sort_path`, costed by `plan::incsort`); the cheaper under
//! the query's LIMIT wins, as the final relation's cheapest path does.
//!
//! Why it matters here: an Incremental Sort returns its first rows after reading one
//! group of its input, so under a LIMIT the scans below it stop early — an ordered
//! Append of partitions, async-capable or not, is read partition after partition.
//!
//! Invariants:
//! - with `enable_incremental_sort` off no Incremental Sort path exists (PostgreSQL
//!   `continue`s past it), so the plan is what it was without this module;
//! - a candidate returns the rows the Sort would, in the same order: only the
//!   ordered input and the node above it change;
//! - ties in cost keep the Sort (added first: the cheapest path comes first in the
//!   input relation's path list).
//!
//! Where it departs from PostgreSQL: indexes have one key column, so the presorted
//! prefix is one key; no Incremental Sort under a GroupAggregate
//! (`add_paths_to_grouping_rel`), over a Merge Join's output, or below a Merge Append
//! (PostgreSQL 15 does not put one there either); a redundant key (equated to a
//! constant) is not dropped from the prefix.

use super::super::catalog::Node;
use super::super::indxpath::{self, index_paths, limited_cost, ScanRequest};
use crate::plan::costsize::CostParams;
use crate::plan::{Expr, Plan, SortKey};

/// `enable_incremental_sort` (on by default).
pub(super) fn enabled(coord: &Node) -> bool {
    coord.setting_on("enable_incremental_sort", true)
}

/// The Incremental Sort of `input`, ordered by the first `presorted` of `keys`.
pub(super) fn incremental_sort(input: Plan, keys: &[SortKey], presorted: usize) -> Plan {
    Plan::IncrementalSort { child: Box::new(input), keys: keys.to_vec(), presorted }
}

/// ORDER BY over one local table (`keys` over the used columns): `indxpath`'s choice
/// between a Sort over the cheapest scan and an index path in ORDER BY's order, and,
/// for two keys or more, an Incremental Sort over the index path on the first key's
/// column (forward, or Backward for DESC), by cost under `limit`. Returns the plan
/// and whether it is in ORDER BY's order (the caller adds no Sort then).
pub(super) fn ordered_local_scan(
    coord: &Node,
    req: &ScanRequest,
    seq: Plan,
    keys: &[SortKey],
    limit: Option<(u64, Option<u64>)>,
    tlist_cost: f64,
) -> (Plan, bool) {
    let (plan, presorted) = indxpath::ordered_scan(coord, req, seq, keys, limit, false, Some(tlist_cost));
    if presorted || keys.len() < 2 || !enabled(coord) {
        return (plan, presorted);
    }
    let p = CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
    let Some(column) = first_key_index(req, &keys[0]) else { return (plan, false) };
    let sorted = Plan::Sort { child: Box::new(plan.clone()), keys: keys.to_vec() };
    let mut best = (limited_cost(coord, &sorted, limit, &p).total, None);
    for path in index_paths(req, column, Some(keys[0].desc), &p) {
        let candidate = incremental_sort(path, keys, 1);
        let total = limited_cost(coord, &candidate, limit, &p).total;
        if total < best.0 {
            best = (total, Some(candidate));
        }
    }
    match best.1 {
        Some(candidate) => (candidate, true),
        None => (plan, false),
    }
}

/// The table column of ORDER BY's first key when it is a plain column with an index
/// on it (the index path then delivers that key's order).
fn first_key_index(req: &ScanRequest, key: &SortKey) -> Option<usize> {
    let Expr::Col(k) = key.expr else { return None };
    let column = *req.used.get(k)?;
    let super::super::catalog::RelKind::Table(t) = &req.rel.kind else { return None };
    t.index_on(column)?;
    Some(column)
}

impl super::Planner<'_> {
    /// The ordered Append by ORDER BY's first key alone (`generate_orderedappend_paths`
    /// over the pathkeys an index on that key gives a local partition) under an
    /// Incremental Sort by all of them: range partitions in bound order (reversed for
    /// DESC), a local one read through its index on the key (Backward for DESC) or else
    /// sorted by that key, a foreign one sorted remotely by every key (postgres_fdw
    /// offers the query's whole ORDER BY, which contains the prefix). None with fewer
    /// than two keys, with `enable_incremental_sort` or `enable_indexscan` off, or when
    /// no partition has such an index (then no path is ordered by the prefix alone).
    pub(super) fn prefix_ordered_partitions(
        &mut self,
        leaves: &[super::Leaf],
        s: &super::ScanInput,
        keys: &Vec<SortKey>,
        desc: bool,
        at: sqlparser::tokenizer::Location,
    ) -> Result<Option<Plan>, super::super::FrontError> {
        if keys.len() < 2 || !enabled(self.coord) || !self.coord.setting_on("enable_indexscan", true) {
            return Ok(None);
        }
        let prefix = vec![keys[0].clone()];
        let mut indexed = false;
        let mut children = Vec::with_capacity(leaves.len());
        for leaf in leaves {
            let child = match self.index_ordered_scan(leaf, s, &keys[0]) {
                Some(plan) => {
                    indexed = true;
                    plan
                }
                None if matches!(leaf.rel.kind, super::super::catalog::RelKind::Foreign { .. }) => {
                    self.scan(leaf, s.conjuncts, s.used, s.where_cols, Some(keys), at)?
                }
                None => self.scan(leaf, s.conjuncts, s.used, s.where_cols, Some(&prefix), at)?,
            };
            children.push(child);
        }
        if !indexed {
            return Ok(None);
        }
        if desc {
            children.reverse();
        }
        let append = Plan::Append { children, prune: None, ordered: true };
        Ok(Some(incremental_sort(append, keys, 1)))
    }
}

impl super::Planner<'_> {
    /// ORDER BY two keys or more over range partitions that are all local, the first
    /// key the partition key and indexed in some partition: the Sort over the Append
    /// of their cheapest scans, or the Incremental Sort over the ordered Append by
    /// that key ([`Planner::prefix_ordered_partitions`]), by cost (no path is
    /// ordered by every key: no partition offers one, so no ordered Append by them is
    /// built, as `generate_orderedappend_paths` builds none). None where this does not
    /// apply (the caller plans as before).
    pub(super) fn local_partitions_incremental(
        &mut self,
        rel: &super::super::catalog::Relation,
        leaves: &[super::Leaf],
        s: &super::ScanInput,
        sort: Option<&Vec<SortKey>>,
        upper: &super::Upper,
        at: sqlparser::tokenizer::Location,
    ) -> Result<Option<Plan>, super::super::FrontError> {
        let Some(keys) = sort else { return Ok(None) };
        let local = leaves.iter().all(|l| matches!(l.rel.kind, super::super::catalog::RelKind::Table(_)));
        let plain = keys.iter().all(|k| matches!(k.expr, Expr::Col(_)));
        if leaves.len() < 2 || !local || !plain || keys.len() < 2 || !enabled(self.coord) {
            return Ok(None);
        }
        let Some(desc) = super::grouping_planner::partitions_are_ordered(rel, leaves, keys, s.used) else {
            return Ok(None);
        };
        let Some(incremental) = self.prefix_ordered_partitions(leaves, s, keys, desc, at)? else { return Ok(None) };
        let unordered = self.leaf_scans(rel, leaves, s, None, at)?;
        let candidates = vec![
            super::grouping_planner::Cand { plan: unordered, ordered: false, presorted: false },
            super::grouping_planner::Cand { plan: incremental, ordered: true, presorted: true },
        ];
        Ok(super::grouping_planner::cheapest(self.coord, candidates, upper, vec![]))
    }
}
