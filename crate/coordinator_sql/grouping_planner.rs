//! The upper levels of a query over one relation chosen by cost, as PostgreSQL 15's
//! `grouping_planner` (planner.c) chooses them: how to aggregate
//! (`create_grouping_paths` → `add_paths_to_grouping_rel`: GroupAggregate over sorted
//! input, or HashAggregate; with `enable_partitionwise_aggregate`,
//! `create_partitionwise_grouping_paths`' per-partition aggregates, whole or Partial
//! with a Finalize above), how to order (`create_ordered_paths`: a Sort over the
//! cheapest path, or a path already in order — a Merge Append of ordered partitions
//! or an ordered Append of range partitions from `generate_orderedappend_paths`, a
//! foreign scan whose remote query sorts from postgres_fdw's
//! `add_paths_with_pathkeys_for_rel`), and whether LIMIT goes into a foreign scan's
//! remote query (postgres_fdw's `add_foreign_final_paths`).
//!
//! The protocol: `planner.rs` (and this module's `Planner` methods) build every
//! candidate path whole, in the order PostgreSQL adds them: the grouped relation's
//! (an aggregate over its input, HAVING included) or, without aggregation, the
//! scans' (an Append, a Merge Append, an ordered Append, a foreign scan), each marked
//! ordered or not and in ORDER BY's order or not ([`Cand`]). [`cheapest`] then goes
//! level by level as `grouping_planner` does, with `plan::costsize::cost_plan`'s
//! estimates (PostgreSQL's formulas): `add_path` at the input level (fuzzy costs,
//! pathkeys, startup cost under a LIMIT), `create_ordered_paths` (a Sort over the
//! cheapest path, the presorted ones as they are) and `add_path` again, then the
//! Limit over each path kept (and postgres_fdw's final paths) and the cheapest total.
//!
//! Invariants:
//! - a candidate is only ever a plan the rule-based planner could build too: the
//!   choice changes the shape, never the rows;
//! - among candidates that cost the same (within `add_path`'s final 1e-10 fuzz) the
//!   first one wins, as PostgreSQL keeps the path it added first;
//! - the group keys' sort order follows `transformGroupClause` and
//!   `preprocess_groupclause` ([`group_pathkeys`]): a group key also in ORDER BY takes
//!   its direction, and the GROUP BY list is reordered to start with ORDER BY's keys
//!   when one list is a prefix of the other, so one sort serves both.
//!
//! Where it departs from PostgreSQL: the Aggregate node keeps the query's GROUP BY
//! order in its output and `Group Key` (PostgreSQL prints the reordered list);
//! Incremental Sort paths only over an ordered Append by ORDER BY's first key
//! (`incsort.rs`), none under a GroupAggregate; a local partition's index serves only the ordered Append
//! (an Index Scan on the range key, [`Planner::index_ordered_scan`]; index paths are
//! otherwise the index work's); a partition's own paths are not weighed by `add_path`
//! (its scan is pushed or sorted as the candidate says; only a partial aggregation
//! chooses per partition between sorted and hashed, and a foreign leaf's unordered
//! scan is its sorted one where that costs the same: `Planner::scan`); list partitions are never read
//! as an ordered Append; avg is not aggregated partially (refused by name).

use super::super::catalog::{Bound, Node, RelKind, Relation};
use super::super::statement::Strategy;
use super::super::FrontError;
use super::{
    add_path_keeps, append_leaves, compare_path_costs_fuzzily, finish, is_col_eq_const, push_limit, Costs, Kept, Leaf,
    Planner, STD_FUZZ_FACTOR,
};
use crate::plan::costsize::{cost_plan, CostParams, Estimate};
use crate::plan::{AggCall, AggSplit, AggStrategy, BinOp, Expr, Plan, ScanName, SortKey};
use sqlparser::tokenizer::Location;

/// The estimate `cost_plan` gives a plan's top node, with the coordinator's settings.
fn estimate(coord: &Node, plan: &Plan) -> Estimate {
    let params = CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
    cost_plan(plan, coord, &params).first().copied().unwrap_or(Estimate {
        startup: f64::INFINITY,
        total: f64::INFINITY,
        rows: 0.0,
        width: 0,
    })
}

/// A path's estimate below the query's Limit: costed as the Limit's input, since a
/// Sort (`create_ordered_paths`' `limit_tuples`) and a Merge Append's sorted children
/// (`create_merge_append_path`) are costed as bounded by LIMIT + OFFSET already.
fn path_estimate(coord: &Node, plan: &Plan, upper: &Upper) -> Estimate {
    if upper.limit.is_none() {
        return estimate(coord, plan);
    }
    let params = CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
    let limited = upper.limit_over(plan.clone());
    cost_plan(&limited, coord, &params).get(1).copied().unwrap_or_else(|| estimate(coord, plan))
}

/// A path of the upper relation below the Limit: its plan, its estimate, and whether
/// it comes out ordered (by ORDER BY, or without one by the group keys).
struct UpperPath {
    plan: Plan,
    est: Estimate,
    ordered: bool,
    presorted: bool,
}

/// `add_path` (pathnode.c) for paths that differ in cost and in being ordered or not:
/// the new path joins the list unless a path there is as good on cost (fuzzily,
/// `compare_path_costs_fuzzily`) and as well ordered; the paths it beats so leave.
fn add_path(list: &mut Vec<UpperPath>, new: UpperPath, consider_startup: bool) {
    let mut i = 0;
    while i < list.len() {
        let old = &list[i];
        // compare_pathkeys: an ordering beats none.
        let keys = match (new.ordered, old.ordered) {
            (a, b) if a == b => Costs::Equal,
            (true, false) => Costs::Better1,
            _ => Costs::Better2,
        };
        let kept = match compare_path_costs_fuzzily(&new.est, &old.est, STD_FUZZ_FACTOR, consider_startup) {
            Costs::Different => Kept::Both,
            Costs::Equal => match keys {
                Costs::Better1 => Kept::New,
                Costs::Better2 => Kept::Old,
                _ => add_path_keeps(&new.est, &old.est, consider_startup),
            },
            Costs::Better1 if keys != Costs::Better2 => Kept::New,
            Costs::Better2 if keys != Costs::Better1 => Kept::Old,
            _ => Kept::Both,
        };
        match kept {
            Kept::Old => return,
            Kept::New => {
                list.remove(i);
            }
            Kept::Both => i += 1,
        }
    }
    list.push(new);
}

/// A path of the relation below the upper levels: the grouped relation's (its
/// aggregate, HAVING included) or, without aggregation, the scans' (an Append, a
/// Merge Append, a foreign scan); whether it has a useful ordering (`pathkeys`: the
/// group keys' or ORDER BY's), and whether that ordering is ORDER BY's (`presorted`).
pub(super) struct Cand {
    pub plan: Plan,
    pub ordered: bool,
    pub presorted: bool,
}

/// The least total cost, then the least startup, then the first (`set_cheapest`,
/// `compare_path_costs`).
fn cheapest_total(paths: &[UpperPath]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, p) in paths.iter().enumerate() {
        match best.map(|b| &paths[b].est) {
            Some(b) if !(p.est.total < b.total || (p.est.total == b.total && p.est.startup < b.startup)) => {}
            _ => best = Some(i),
        }
    }
    best
}

/// The plan PostgreSQL chooses among `candidates` (in the order PostgreSQL adds their
/// paths), level by level as `grouping_planner` builds them: the input level's
/// `add_path` keeps what no other beats on cost and ordering (startup cost counts
/// under a LIMIT: `consider_startup`); `create_ordered_paths` sorts the cheapest of
/// those and takes the ones in ORDER BY's order as they are, and `add_path` again; the
/// Limit goes over each path kept, and the final relation's cheapest total wins.
/// `finals` are paths of the final relation itself (a LIMIT pushed into a foreign
/// scan: `add_foreign_final_paths`), added after the Limit paths. None only for no
/// candidates.
pub(super) fn cheapest(coord: &Node, candidates: Vec<Cand>, upper: &Upper, finals: Vec<Plan>) -> Option<Plan> {
    let consider_startup = matches!(upper.limit, Some((_, Some(_))));
    let mut input: Vec<UpperPath> = Vec::new();
    for c in candidates {
        let est = path_estimate(coord, &c.plan, upper);
        let path = UpperPath { plan: c.plan, est, ordered: c.ordered, presorted: c.presorted };
        add_path(&mut input, path, consider_startup);
    }
    // The ordered level (the select list's projection too, without ORDER BY).
    let sorted_one = cheapest_total(&input);
    let mut ordered: Vec<UpperPath> = Vec::new();
    for (i, p) in input.into_iter().enumerate() {
        let plan = match (upper.sort.is_some(), p.presorted) {
            (false, _) | (true, true) => upper.over(p.plan, true),
            (true, false) if Some(i) == sorted_one => upper.over(p.plan, false),
            _ => continue,
        };
        let est = path_estimate(coord, &plan, upper);
        let keys = p.ordered || upper.sort.is_some();
        add_path(&mut ordered, UpperPath { plan, est, ordered: keys, presorted: true }, consider_startup);
    }
    // The final relation.
    let mut last: Vec<UpperPath> = Vec::new();
    let limited = ordered.into_iter().map(|p| (upper.limit_over(p.plan), p.ordered));
    // A final path is ordered as the path it was made from: by ORDER BY, if any.
    let sorted = upper.sort.is_some();
    for (plan, keys) in limited.chain(finals.into_iter().map(|f| (f, sorted))) {
        let est = estimate(coord, &plan);
        add_path(&mut last, UpperPath { plan, est, ordered: keys, presorted: true }, consider_startup);
    }
    let best = cheapest_total(&last)?;
    Some(last.swap_remove(best).plan)
}

/// The sort order GROUP BY's keys get (`group_pathkeys`), as (key index, descending)
/// pairs in sort order. `order_by` is over the aggregate's output (the keys first, so
/// `Col(i)` for `i < nkeys` is the i-th key).
///
/// `transformGroupClause` gives a key that ORDER BY also names ORDER BY's direction;
/// `preprocess_groupclause` then puts ORDER BY's keys first when every ORDER BY item
/// is a group key (else the GROUP BY order stays, as no one sort could serve both).
pub(super) fn group_pathkeys(nkeys: usize, order_by: Option<&[SortKey]>) -> Vec<(usize, bool)> {
    let order_by = order_by.unwrap_or_default();
    let desc = |k: usize| order_by.iter().find(|s| s.expr == Expr::Col(k)).map(|s| s.desc).unwrap_or(false);
    let mut new_order: Vec<usize> = Vec::new();
    let mut partial_match = false;
    for s in order_by {
        match s.expr {
            Expr::Col(k) if k < nkeys && !new_order.contains(&k) => new_order.push(k),
            // The same key twice in ORDER BY matches the group clause already taken.
            Expr::Col(k) if k < nkeys => {}
            _ => {
                partial_match = true;
                break;
            }
        }
    }
    if new_order.is_empty() || partial_match {
        new_order.clear();
    }
    let rest: Vec<usize> = (0..nkeys).filter(|k| !new_order.contains(k)).collect();
    new_order.extend(rest);
    new_order.into_iter().map(|k| (k, desc(k))).collect()
}

/// `partitions_are_ordered` with `build_partition_pathkeys`: are the leaves the direct
/// partitions of a range-partitioned table on one column, none the default one, and
/// is ORDER BY's first key that column (over the used columns `used`)? Then their
/// bounds order their rows, and Some(ORDER BY's direction): DESC reads them
/// backwards. (List partitions, which PostgreSQL also orders when no list interleaves
/// another's, are left to the Merge Append here.)
pub(super) fn partitions_are_ordered(
    rel: &Relation,
    leaves: &[Leaf],
    keys: &[SortKey],
    used: &[usize],
) -> Option<bool> {
    let RelKind::Partitioned { strategy: Strategy::Range, key, .. } = &rel.kind else { return None };
    let [partition_key] = key.as_slice() else { return None };
    let first = keys.first()?;
    let Expr::Col(j) = first.expr else { return None };
    let direct = leaves.iter().all(
        |l| matches!(&l.rel.partition_of, Some((parent, b)) if *parent == rel.name && !matches!(b, Bound::Default)),
    );
    (direct && used.get(j) == Some(partition_key)).then_some(first.desc)
}

/// Is this group key equated to a constant by a WHERE conjunct (`key = 7`)? Then its
/// equivalence class holds a constant and its pathkey is redundant
/// (`pathkey_is_redundant`): every row has the same value, so it needs no sorting.
fn constant_key(key: &Expr, s: &ScanInput) -> bool {
    let Expr::Col(j) = key else { return false };
    let Some(&col) = s.used.get(*j) else { return false };
    s.conjuncts.iter().any(|c| {
        is_col_eq_const(c) && matches!(c, Expr::Bin(_, l, r) if **l == Expr::Col(col) || **r == Expr::Col(col))
    })
}

/// The group keys' sort order as sort keys over the aggregate's input.
pub(super) fn input_pathkeys(keys: &[Expr], pathkeys: &[(usize, bool)]) -> Vec<SortKey> {
    pathkeys.iter().map(|&(k, desc)| SortKey { expr: keys[k].clone(), desc }).collect()
}

/// `pathkeys_contained_in(sort_pathkeys, group_pathkeys)`: is output ordered by the
/// group keys (`pathkeys`) in ORDER BY's order already?
pub(super) fn sorted_by_group_keys(pathkeys: &[(usize, bool)], order_by: &[SortKey]) -> bool {
    order_by.len() <= pathkeys.len()
        && order_by.iter().zip(pathkeys).all(|(s, &(k, desc))| s.expr == Expr::Col(k) && s.desc == desc)
}

/// What a query puts above its aggregate (or its scans): HAVING, ORDER BY, the select
/// list and LIMIT/OFFSET, as `planner.rs`'s layers have them.
pub(super) struct Upper<'a> {
    pub having: Option<&'a Expr>,
    pub sort: Option<&'a [SortKey]>,
    pub targets: Option<&'a [(Expr, String)]>,
    pub limit: Option<(u64, Option<u64>)>,
}

impl Upper<'_> {
    /// HAVING over an aggregate (part of the grouped relation's path).
    pub(super) fn having_over(&self, plan: Plan) -> Plan {
        match self.having {
            Some(h) => Plan::Result { child: Box::new(plan), filter: Some(h.clone()), targets: None },
            None => plan,
        }
    }

    /// The levels above a path up to the Limit: the Sort unless the path is in ORDER
    /// BY's order already (`presorted`), the select list.
    pub(super) fn over(&self, plan: Plan, presorted: bool) -> Plan {
        let sort = if presorted { None } else { self.sort.map(<[SortKey]>::to_vec) };
        finish(plan, sort, self.targets.map(<[_]>::to_vec), None)
    }

    /// The Limit over a path (none without LIMIT/OFFSET).
    pub(super) fn limit_over(&self, plan: Plan) -> Plan {
        finish(plan, None, None, self.limit)
    }
}

/// The grouped query's candidate plans, in the order PostgreSQL adds their paths
/// (`add_paths_to_grouping_rel`): a GroupAggregate over the cheapest input sorted by
/// the group keys, one over the input already in that order (`ordered`: a Merge
/// Append of ordered partitions, a foreign scan sorted remotely), then a
/// HashAggregate over the cheapest input; each with the levels above it (`upper`),
/// its Sort left out where the group keys' order is ORDER BY's.
///
/// `agg(input, strategy)` builds the Aggregate node over an input; `pathkeys` is
/// [`group_pathkeys`]'s order, `input_keys` the same as sort keys over the input.
pub(super) fn grouping_candidates(
    unordered: &Plan,
    ordered: Option<Plan>,
    input_keys: &[SortKey],
    pathkeys: &[(usize, bool)],
    agg: &dyn Fn(Plan, AggStrategy) -> Plan,
    upper: &Upper,
) -> Vec<Cand> {
    let presorted = upper.sort.is_none_or(|s| sorted_by_group_keys(pathkeys, s));
    // No keys left to sort by (each equated to a constant): any input is in order.
    let sorted_input = match input_keys.is_empty() {
        true => unordered.clone(),
        false => Plan::Sort { child: Box::new(unordered.clone()), keys: input_keys.to_vec() },
    };
    let sorted = |plan: Plan| Cand { plan: upper.having_over(plan), ordered: true, presorted };
    let mut out = vec![sorted(agg(sorted_input, AggStrategy::Sorted))];
    if let Some(input) = ordered {
        out.push(sorted(agg(input, AggStrategy::Sorted)));
    }
    // No HashAggregate for a DISTINCT aggregate (`can_hash` needs numOrderedAggs 0).
    let hashed = agg(unordered.clone(), AggStrategy::Hashed);
    if matches!(&hashed, Plan::Agg { aggs, .. } if aggs.iter().any(|a| a.distinct)) {
        return out;
    }
    let hashed = upper.having_over(hashed);
    out.push(Cand { plan: hashed, ordered: false, presorted: false });
    out
}

/// `make_group_input_target` (planner.c) for a GROUP BY with an expression over one
/// local scan: the scan's target list becomes the grouping expressions (in the select
/// list's order, `apply_scanjoin_target_to_paths` makes the scan compute them), then
/// the columns the aggregates read (`pull_var_clause`: an aggregate's argument stays
/// an expression the Aggregate evaluates). Returns the projected input, the keys as
/// its columns and the aggregates over it; None when every key is a column (the scan
/// keeps its physical target list) or the input is no plain local scan (a partitioned
/// table's Append or a foreign scan are left as they are).
fn group_input_target(
    input: &Plan,
    keys: &[Expr],
    aggs: &[AggCall],
    select: Option<&[(Expr, String)]>,
) -> Option<(Plan, Vec<Expr>, Vec<AggCall>)> {
    if keys.iter().all(|k| matches!(k, Expr::Col(_))) {
        return None;
    }
    // The scan's columns (a projection to the columns the query uses) and its qual.
    let mut scan = input;
    if let Plan::Result { child, filter: None, targets: Some(t) } = scan {
        if t.iter().all(|(e, _)| matches!(e, Expr::Col(_))) {
            scan = child.as_ref();
        }
    }
    if let Plan::Result { child, filter: Some(_), targets: None } = scan {
        scan = child.as_ref();
    }
    if !matches!(scan, Plan::SeqScan { .. } | Plan::IndexScan { nest_param: None, .. } | Plan::BitmapHeapScan { .. }) {
        return None;
    }
    let columns = input.output_columns();
    // The keys in the order the select list reads them (its sort-group entries), then
    // the ones it leaves out (resjunk entries at the end of the final target list).
    let mut order: Vec<usize> = vec![];
    for (e, _) in select.unwrap_or(&[]) {
        if let Expr::Col(k) = e {
            if *k < keys.len() && !order.contains(k) {
                order.push(*k);
            }
        }
    }
    order.extend((0..keys.len()).filter(|k| !order.contains(k)).collect::<Vec<_>>());
    let mut targets: Vec<(Expr, String)> = vec![];
    let place = |e: &Expr, targets: &mut Vec<(Expr, String)>| -> usize {
        if let Some(i) = targets.iter().position(|(t, _)| t == e) {
            return i;
        }
        let name = match e {
            Expr::Col(c) => columns.get(*c).map_or_else(|| "?column?".to_string(), |c| c.name.clone()),
            _ => "?column?".to_string(),
        };
        targets.push((e.clone(), name));
        targets.len() - 1
    };
    let mut key_at = vec![0; keys.len()];
    for &k in &order {
        key_at[k] = place(&keys[k], &mut targets);
    }
    let mut col_at: Vec<Option<usize>> = vec![None; columns.len()];
    for a in aggs {
        if let Some(arg) = &a.arg {
            arg.for_each_col(&mut |c| {
                if let Some(slot @ None) = col_at.get_mut(c) {
                    *slot = Some(place(&Expr::Col(c), &mut targets));
                }
            });
        }
    }
    let keys = key_at.into_iter().map(Expr::Col).collect();
    let aggs = aggs
        .iter()
        .map(|a| AggCall {
            func: a.func,
            arg: a.arg.as_ref().map(|e| e.map_cols(&|c| col_at.get(c).copied().flatten().unwrap_or(c))),
            distinct: a.distinct,
        })
        .collect();
    // The scan's own qual and target list: one Result over it (a filter already there
    // takes the target list too; a projection to plain columns is composed into it).
    let mut input = input;
    let mut targets = targets;
    if let Plan::Result { child, filter: None, targets: Some(t) } = input {
        if t.iter().all(|(e, _)| matches!(e, Expr::Col(_))) {
            let below = |i: usize| match t.get(i) {
                Some((Expr::Col(j), _)) => *j,
                _ => i,
            };
            targets = targets.into_iter().map(|(e, n)| (e.map_cols(&below), n)).collect();
            input = child.as_ref();
        }
    }
    let projected = match input {
        Plan::Result { child, filter: Some(f), targets: None } => {
            Plan::Result { child: child.clone(), filter: Some(f.clone()), targets: Some(targets) }
        }
        other => Plan::Result { child: Box::new(other.clone()), filter: None, targets: Some(targets) },
    };
    Some((projected, keys, aggs))
}

/// What a leaf's scan reads: the WHERE conjuncts, the columns used above the scan
/// and those the WHERE clause reads (as `Planner::scan` takes them).
pub(super) struct ScanInput<'s> {
    pub conjuncts: &'s [Expr],
    pub used: &'s [usize],
    pub where_cols: &'s [usize],
}

impl<'a> Planner<'a> {
    /// The leaves' scans, each ordered by `order` if given, under one Append (or a
    /// Merge Append when ordered and several: `generate_orderedappend_paths`).
    pub(super) fn leaf_scans(
        &mut self,
        rel: &Relation,
        leaves: &[Leaf],
        s: &ScanInput,
        order: Option<&Vec<SortKey>>,
        at: Location,
    ) -> Result<Plan, FrontError> {
        let children: Vec<Plan> = leaves
            .iter()
            .map(|leaf| self.scan(leaf, s.conjuncts, s.used, s.where_cols, order, at))
            .collect::<Result<_, _>>()?;
        Ok(match order {
            Some(keys) if children.len() > 1 => Plan::MergeAppend { children, keys: keys.clone(), prune: None },
            _ => append_leaves(children, rel, s.used, None),
        })
    }

    /// Does some leaf have a path in this order without a Sort? A foreign one does
    /// (postgres_fdw's `add_paths_with_pathkeys_for_rel` offers the query's pathkeys
    /// when every key ships: plain columns here); a local one would only through an
    /// index, which is not offered here.
    fn ordered_path_exists(leaves: &[Leaf], keys: &[SortKey]) -> bool {
        keys.iter().all(|k| matches!(k.expr, Expr::Col(_)))
            && leaves.iter().any(|leaf| matches!(leaf.rel.kind, RelKind::Foreign { .. }))
    }

    /// A grouped query aggregated locally (not pushed to a remote server), with the
    /// levels above: GroupAggregate or HashAggregate, and over which input, by cost
    /// (`add_paths_to_grouping_rel`, [`grouping_candidates`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn grouped(
        &mut self,
        rel: &Relation,
        leaves: &[Leaf],
        s: &ScanInput,
        keys: &[Expr],
        aggs: &[AggCall],
        upper: &Upper,
        at: Location,
    ) -> Result<Plan, FrontError> {
        let candidates = self.grouping_paths(rel, leaves, s, keys, aggs, upper, at)?;
        cheapest(self.coord, candidates, upper, vec![])
            .ok_or_else(|| FrontError::at("internal error: no grouping path", at))
    }

    /// [`Planner::grouped`]'s candidates ([`grouping_candidates`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn grouping_paths(
        &mut self,
        rel: &Relation,
        leaves: &[Leaf],
        s: &ScanInput,
        keys: &[Expr],
        aggs: &[AggCall],
        upper: &Upper,
        at: Location,
    ) -> Result<Vec<Cand>, FrontError> {
        let unordered = self.leaf_scans(rel, leaves, s, None, at)?;
        let pathkeys: Vec<(usize, bool)> =
            group_pathkeys(keys.len(), upper.sort).into_iter().filter(|&(k, _)| !constant_key(&keys[k], s)).collect();
        // A GROUP BY expression over one local scan is computed by the scan.
        let (unordered, keys, aggs) = match group_input_target(&unordered, keys, aggs, upper.targets) {
            Some((input, keys, aggs)) => (input, std::borrow::Cow::Owned(keys), std::borrow::Cow::Owned(aggs)),
            None => (unordered, std::borrow::Cow::Borrowed(keys), std::borrow::Cow::Borrowed(aggs)),
        };
        let (keys, aggs): (&[Expr], &[AggCall]) = (&keys, &aggs);
        let input_keys = input_pathkeys(keys, &pathkeys);
        let distinct = self.distinct;
        // The input in the group keys' order: range partitions in bound order (an
        // ordered Append), or a Merge Append of ordered partitions.
        let ordered = match (Self::ordered_path_exists(leaves, &input_keys), leaves.len() > 1) {
            (true, true) => match partitions_are_ordered(rel, leaves, &input_keys, s.used) {
                Some(desc) => self.ordered_partitions(leaves, s, &input_keys, desc, at)?,
                None => Some(self.leaf_scans(rel, leaves, s, Some(&input_keys), at)?),
            },
            (true, false) => Some(self.leaf_scans(rel, leaves, s, Some(&input_keys), at)?),
            (false, _) => None,
        };
        let agg = |input: Plan, strategy: AggStrategy| Plan::Agg {
            child: Box::new(input),
            // A DISTINCT's sorted path is a Unique (`create_distinct_paths`).
            strategy: match strategy {
                AggStrategy::Sorted if distinct => AggStrategy::Unique,
                other => other,
            },
            group_by: keys.to_vec(),
            aggs: aggs.to_vec(),
            split: crate::plan::AggSplit::Simple,
        };
        Ok(grouping_candidates(&unordered, ordered, &input_keys, &pathkeys, &agg, upper))
    }

    /// One partition's aggregate over a local scan (a partitionwise aggregate's
    /// child): GroupAggregate over a Sort of the scan or HashAggregate, by cost.
    pub(super) fn local_partition_agg(&self, input: Plan, keys: &[Expr], aggs: &[AggCall]) -> Plan {
        let agg = |input: Plan, strategy: AggStrategy| Plan::Agg {
            child: Box::new(input),
            strategy,
            group_by: keys.to_vec(),
            aggs: aggs.to_vec(),
            split: crate::plan::AggSplit::Simple,
        };
        if keys.is_empty() {
            return agg(input, AggStrategy::Plain);
        }
        let pathkeys = group_pathkeys(keys.len(), None);
        let input_keys = input_pathkeys(keys, &pathkeys);
        let upper = Upper { having: None, sort: None, targets: None, limit: None };
        let candidates = grouping_candidates(&input, None, &input_keys, &pathkeys, &agg, &upper);
        cheapest(self.coord, candidates, &upper, vec![]).unwrap_or_else(|| agg(input, AggStrategy::Hashed))
    }

    /// ORDER BY over several leaves, some foreign: a Sort over the Append of the
    /// cheapest scans, or a Merge Append of scans in ORDER BY's order (foreign ones
    /// sorted remotely, local ones by a Sort each), by cost (`create_ordered_paths`
    /// over the appendrel's paths from `generate_orderedappend_paths`).
    pub(super) fn ordered_append(
        &mut self,
        rel: &Relation,
        leaves: &[Leaf],
        s: &ScanInput,
        keys: &Vec<SortKey>,
        upper: &Upper,
        at: Location,
    ) -> Result<Plan, FrontError> {
        let unordered = self.leaf_scans(rel, leaves, s, None, at)?;
        // Partitions whose bounds are in ORDER BY's order: an ordered Append of them
        // (reversed for DESC) instead of a Merge Append.
        let merged = match partitions_are_ordered(rel, leaves, keys, s.used) {
            Some(desc) => self.ordered_partitions(leaves, s, keys, desc, at)?,
            None => Some(self.leaf_scans(rel, leaves, s, Some(keys), at)?),
        };
        let mut candidates = vec![Cand { plan: unordered, ordered: false, presorted: false }];
        if let Some(plan) = merged {
            candidates.push(Cand { plan, ordered: true, presorted: true });
        }
        // An Incremental Sort over the ordered Append by the first key (incsort.rs).
        if let Some(desc) = partitions_are_ordered(rel, leaves, keys, s.used) {
            if let Some(plan) = self.prefix_ordered_partitions(leaves, s, keys, desc, at)? {
                candidates.push(Cand { plan, ordered: true, presorted: true });
            }
        }
        cheapest(self.coord, candidates, upper, vec![])
            .ok_or_else(|| FrontError::at("internal error: no ordered path", at))
    }

    /// The ordered Append (`generate_orderedappend_paths` with `match_partition_order`
    /// or its `_desc` twin): the partitions in bound order, reversed for DESC, each
    /// returning its rows in ORDER BY's order: a foreign one by its remote ORDER BY, a
    /// local one by its index on the key ([`Planner::index_ordered_scan`]) or else a
    /// Sort of its scan. Its members run synchronously (`Plan::Append::ordered`).
    /// None with `enable_indexscan` off where a partition's ordered path is its index:
    /// that path, and so the ordered Append, costs `disable_cost` more (`cost_index`),
    /// and no Merge Append is built instead (`match_partition_order`).
    fn ordered_partitions(
        &mut self,
        leaves: &[Leaf],
        s: &ScanInput,
        keys: &Vec<SortKey>,
        desc: bool,
        at: Location,
    ) -> Result<Option<Plan>, FrontError> {
        let mut children = Vec::with_capacity(leaves.len());
        for leaf in leaves {
            let indexed = match keys.as_slice() {
                [key] => self.index_ordered_scan(leaf, s, key),
                _ => None,
            };
            if indexed.is_some() && !self.coord.setting_on("enable_indexscan", true) {
                return Ok(None);
            }
            children.push(match indexed {
                Some(plan) => plan,
                None => self.scan(leaf, s.conjuncts, s.used, s.where_cols, Some(keys), at)?,
            });
        }
        if desc {
            children.reverse();
        }
        Ok(Some(Plan::Append { children, prune: None, ordered: true }))
    }

    /// A local partition read in the order of its index on the sort key (an Index
    /// Scan, Backward for DESC: the path `build_index_paths` offers for useful
    /// pathkeys), its WHERE conditions a Filter, returning the used columns; None for
    /// a foreign partition or one without such an index. (Index paths are the index
    /// work's; this one only serves the ordered Append.)
    pub(super) fn index_ordered_scan(&self, leaf: &Leaf, s: &ScanInput, key: &SortKey) -> Option<Plan> {
        let RelKind::Table(table) = &leaf.rel.kind else { return None };
        let Expr::Col(j) = key.expr else { return None };
        let column = *s.used.get(j)?;
        table.index_on(column)?;
        let all = leaf.rel.columns();
        let mut plan = Plan::IndexScan {
            table: leaf.rel.name.clone(),
            columns: all.clone(),
            column,
            desc: key.desc,
            alias: leaf.name.clone(),
            index_only: false,
            quals: vec![],
            nest_param: None,
        };
        // The scan returns every column: the conditions are in the table's numbering.
        let filter = s.conjuncts.iter().cloned().reduce(|a, b| Expr::bin(BinOp::And, a, b));
        if filter.is_some() {
            plan = Plan::Result { child: Box::new(plan), filter, targets: None };
        }
        let targets = s.used.iter().map(|&c| (Expr::Col(c), all[c].name.clone())).collect();
        plan = Plan::Result { child: Box::new(plan), filter: None, targets: Some(targets) };
        Some(self.gate(plan))
    }

    /// A full partitionwise aggregation (the partition key grouped), as
    /// `create_ordinary_grouping_paths` plans it with `enable_partitionwise_aggregate`:
    /// first the partitionwise paths (`create_partitionwise_grouping_paths` and
    /// `add_paths_to_append_rel`): `appended`, the Append of the partitions' cheapest
    /// aggregates (pushed to a foreign partition's server), and, when the group keys'
    /// order is ORDER BY's, a Merge Append of each partition's GroupAggregate over its
    /// input sorted by them (a foreign scan sorted remotely, a local one by a Sort);
    /// then the ordinary paths over the whole Append (`add_paths_to_grouping_rel`,
    /// [`Planner::grouped`]'s). All by cost. `upper.having` is the query's HAVING, which
    /// the partitionwise paths apply in each partition (`agg.having`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn partitionwise_grouping(
        &mut self,
        appended: Plan,
        rel: &Relation,
        (leaves, alias): (&[Leaf], &str),
        s: &ScanInput,
        agg: &super::PartitionAgg,
        upper: &Upper,
        at: Location,
    ) -> Result<Plan, FrontError> {
        let pathkeys = group_pathkeys(agg.keys.len(), upper.sort);
        let mut candidates = vec![Cand { plan: appended, ordered: false, presorted: false }];
        let presorted = upper.sort.is_some_and(|o| sorted_by_group_keys(&pathkeys, o));
        let plain_keys = agg.keys.iter().all(|k| matches!(k, Expr::Col(_)));
        if presorted && plain_keys && leaves.len() > 1 {
            let input_keys = input_pathkeys(agg.keys, &pathkeys);
            let mut children = Vec::with_capacity(leaves.len());
            for leaf in leaves {
                let input = self.scan(leaf, s.conjuncts, s.used, s.where_cols, Some(&input_keys), at)?;
                let mut plan = Plan::Agg {
                    child: Box::new(input),
                    strategy: AggStrategy::Sorted,
                    group_by: agg.keys.to_vec(),
                    aggs: agg.aggs.to_vec(),
                    split: crate::plan::AggSplit::Simple,
                };
                if let Some(h) = agg.having {
                    plan = Plan::Result { child: Box::new(plan), filter: Some(h.clone()), targets: None };
                }
                children.push(plan);
            }
            // The Merge Append merges the aggregates' output: the group keys come first.
            let keys = pathkeys.iter().map(|&(k, desc)| SortKey { expr: Expr::Col(k), desc }).collect();
            let merged = Plan::MergeAppend { children, keys, prune: None };
            candidates.push(Cand { plan: merged, ordered: true, presorted: true });
        }
        // The ordinary paths read the partitions under the parent's Append, which
        // names them alias_1, alias_2, ….
        let named: Vec<Leaf> = leaves
            .iter()
            .enumerate()
            .map(|(i, l)| Leaf {
                rel: l.rel,
                name: Some(ScanName {
                    alias: format!("{alias}_{}", i + 1),
                    parent: Some(alias.to_string()),
                    member: true,
                    tlist: None,
                    direct: false,
                    alone: false,
                    unqualified: false,
                }),
            })
            .collect();
        candidates.extend(self.grouping_paths(rel, &named, s, agg.keys, agg.aggs, upper, at)?);
        cheapest(self.coord, candidates, upper, vec![])
            .ok_or_else(|| FrontError::at("internal error: no grouping path", at))
    }

    /// A partial partitionwise aggregation (`enable_partitionwise_aggregate` with the
    /// partition key not grouped, PARTITIONWISE_AGGREGATE_PARTIAL), as
    /// `create_ordinary_grouping_paths` plans it: each partition's partially grouped
    /// relation (`create_partial_grouping_paths`: a Partial GroupAggregate over its
    /// scan sorted by the group keys, remotely or by a Sort, a Partial HashAggregate,
    /// or without GROUP BY a Partial Aggregate; [`Planner::partial_paths`]), their
    /// Append (each partition's cheapest) and Merge Append (each one's sorted path);
    /// then `add_paths_to_grouping_rel` offers, in its order, GroupAggregates over the
    /// whole input and Finalize GroupAggregates over the partial paths, then a
    /// HashAggregate and a Finalize HashAggregate; the cheapest wins. postgres_fdw does
    /// not push a partial aggregate (PostgreSQL 15), so foreign partitions aggregate here.
    pub(super) fn partial_partitionwise(
        &mut self,
        rel: &Relation,
        (leaves, alias): (&[Leaf], &str),
        s: &ScanInput,
        (keys, aggs): (&[Expr], &[AggCall]),
        upper: &Upper,
        at: Location,
    ) -> Result<Plan, FrontError> {
        let nkeys = keys.len();
        let pathkeys = group_pathkeys(nkeys, upper.sort);
        let input_keys = input_pathkeys(keys, &pathkeys);
        // The partitions as a partitionwise path names them: alias, alias_1, ….
        let own: Vec<Leaf> = leaves
            .iter()
            .enumerate()
            .map(|(i, l)| Leaf {
                rel: l.rel,
                name: Some(ScanName {
                    alias: if i == 0 { alias.to_string() } else { format!("{alias}_{i}") },
                    parent: None,
                    member: true,
                    tlist: None,
                    direct: false,
                    alone: false,
                    unqualified: false,
                }),
            })
            .collect();
        let (mut cheapest_partials, mut sorted_partials) = (Vec::new(), Vec::new());
        for leaf in &own {
            let (total, sorted) = self.partial_paths(leaf, s, (keys, aggs), &input_keys, at)?;
            cheapest_partials.push(total);
            sorted_partials.push(sorted);
        }
        let appended = Plan::Append { children: cheapest_partials, prune: None, ordered: false };
        // The Finalize half reads the partial rows: the keys, then each partial value.
        let finalize = |input: Plan, strategy: AggStrategy| Plan::Agg {
            child: Box::new(input),
            strategy,
            group_by: (0..nkeys).map(Expr::Col).collect(),
            aggs: aggs
                .iter()
                .enumerate()
                .map(|(i, a)| AggCall { func: a.func, arg: Some(Expr::Col(nkeys + i)), distinct: a.distinct })
                .collect(),
            split: AggSplit::Finalize,
        };
        let ordinary = self.grouping_paths(rel, leaves, s, keys, aggs, upper, at)?;
        if keys.is_empty() {
            // AGG_PLAIN: the whole input's Aggregate, then the Finalize Aggregate.
            let mut candidates = ordinary;
            let plan = upper.having_over(finalize(appended, AggStrategy::Plain));
            candidates.push(Cand { plan, ordered: false, presorted: false });
            return cheapest(self.coord, candidates, upper, vec![])
                .ok_or_else(|| FrontError::at("internal error: no grouping path", at));
        }
        let presorted = upper.sort.is_none_or(|o| sorted_by_group_keys(&pathkeys, o));
        let output_keys: Vec<SortKey> =
            pathkeys.iter().map(|&(k, desc)| SortKey { expr: Expr::Col(k), desc }).collect();
        let sorted = |plan: Plan| Cand { plan: upper.having_over(plan), ordered: true, presorted };
        let input = Plan::Sort { child: Box::new(appended.clone()), keys: output_keys.clone() };
        let mut finals = vec![sorted(finalize(input, AggStrategy::Sorted))];
        if sorted_partials.iter().all(Option::is_some) {
            let children = sorted_partials.into_iter().flatten().collect();
            let merged = Plan::MergeAppend { children, keys: output_keys, prune: None };
            finals.push(sorted(finalize(merged, AggStrategy::Sorted)));
        }
        // add_paths_to_grouping_rel's order: the sorted paths (the input's, then the
        // partial ones), then the hashed ones (the input's, then the partial one).
        let (mut candidates, hashed): (Vec<_>, Vec<_>) = ordinary.into_iter().partition(|c| c.ordered);
        candidates.extend(finals);
        candidates.extend(hashed);
        let plan = upper.having_over(finalize(appended, AggStrategy::Hashed));
        candidates.push(Cand { plan, ordered: false, presorted: false });
        cheapest(self.coord, candidates, upper, vec![])
            .ok_or_else(|| FrontError::at("internal error: no grouping path", at))
    }

    /// One partition's partial aggregation (`add_paths_to_partial_grouping_rel`): its
    /// cheapest path, and its cheapest one in the group keys' order (`input_keys`;
    /// None without GROUP BY). A Partial GroupAggregate over the scan sorted by a Sort,
    /// or, for a foreign partition, sorted remotely; a Partial HashAggregate; a Partial
    /// Aggregate without GROUP BY.
    fn partial_paths(
        &mut self,
        leaf: &Leaf,
        s: &ScanInput,
        (keys, aggs): (&[Expr], &[AggCall]),
        input_keys: &[SortKey],
        at: Location,
    ) -> Result<(Plan, Option<Plan>), FrontError> {
        let partial = |input: Plan, strategy: AggStrategy| Plan::Agg {
            child: Box::new(input),
            strategy,
            group_by: keys.to_vec(),
            aggs: aggs.to_vec(),
            split: AggSplit::Partial,
        };
        let unordered = self.scan(leaf, s.conjuncts, s.used, s.where_cols, None, at)?;
        if keys.is_empty() {
            return Ok((partial(unordered, AggStrategy::Plain), None));
        }
        let none = Upper { having: None, sort: None, targets: None, limit: None };
        let mut sorted = vec![(
            partial(Plan::Sort { child: Box::new(unordered.clone()), keys: input_keys.to_vec() }, AggStrategy::Sorted),
            true,
        )];
        if Self::ordered_path_exists(std::slice::from_ref(leaf), input_keys) {
            let input = self.scan(leaf, s.conjuncts, s.used, s.where_cols, Some(&input_keys.to_vec()), at)?;
            sorted.push((partial(input, AggStrategy::Sorted), true));
        }
        let cands = |paths: &[(Plan, bool)]| -> Vec<Cand> {
            paths
                .iter()
                .map(|(plan, ordered)| Cand { plan: plan.clone(), ordered: *ordered, presorted: true })
                .collect()
        };
        let best_sorted = cheapest(self.coord, cands(&sorted), &none, vec![]);
        let mut all = sorted;
        all.push((partial(unordered, AggStrategy::Hashed), false));
        let best = cheapest(self.coord, cands(&all), &none, vec![])
            .ok_or_else(|| FrontError::at("internal error: no partial grouping path", at))?;
        Ok((best, best_sorted))
    }

    /// One foreign scan with the levels above it: ORDER BY as a local Sort or in the
    /// remote query (`ordered`: the scan sorted remotely; postgres_fdw's
    /// `add_foreign_ordered_paths` for a pushed aggregate), and with `push_limit`
    /// LIMIT/OFFSET in the remote query too (`add_foreign_final_paths`: a plain
    /// foreign table, not an appendrel's partition), by cost.
    pub(super) fn foreign_upper(&self, unordered: Plan, ordered: Option<Plan>, upper: &Upper, push: bool) -> Plan {
        self.foreign_upper_after(vec![], unordered, ordered, upper, push)
    }

    /// [`Planner::foreign_upper`] after the paths `local` that the grouped relation
    /// has before postgres_fdw's (`add_paths_to_grouping_rel`'s, which
    /// `GetForeignUpperPaths` follows): the pushed aggregate is chosen by cost
    /// against them, as `add_path` weighs it (a GroupAggregate that costs the same
    /// within 1% keeps its order and wins).
    pub(super) fn foreign_upper_after(
        &self,
        local: Vec<Cand>,
        unordered: Plan,
        ordered: Option<Plan>,
        upper: &Upper,
        push: bool,
    ) -> Plan {
        let mut candidates = local;
        candidates.push(Cand { plan: unordered.clone(), ordered: false, presorted: false });
        if let Some(o) = &ordered {
            candidates.push(Cand { plan: o.clone(), ordered: true, presorted: true });
        }
        let mut finals = vec![];
        // The final path: LIMIT pushed into the scan that does every step below it.
        let below_limit = if upper.sort.is_some() { ordered } else { Some(unordered.clone()) };
        if let (true, Some(mut plan), Some(_)) = (push, below_limit, upper.limit) {
            if let Plan::ForeignScan(f) = &mut plan {
                let mut limit = upper.limit;
                push_limit(f, &mut limit);
                let pushed = Upper { limit: None, sort: None, ..*upper };
                finals.push(pushed.over(plan, true));
            }
        }
        cheapest(self.coord, candidates, upper, finals)
            .unwrap_or_else(|| upper.limit_over(upper.over(unordered, false)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: usize, desc: bool) -> SortKey {
        SortKey { expr: Expr::Col(c), desc }
    }

    #[test]
    fn group_keys_follow_order_by_when_one_list_is_a_prefix_of_the_other() {
        // GROUP BY a, b ORDER BY b DESC: b first, descending; then a.
        assert_eq!(group_pathkeys(2, Some(&[key(1, true)])), vec![(1, true), (0, false)]);
        // No ORDER BY: the GROUP BY order, ascending.
        assert_eq!(group_pathkeys(2, None), vec![(0, false), (1, false)]);
        // ORDER BY an aggregate (column 2) after a key: no reordering, but the key
        // keeps ORDER BY's direction (transformGroupClause).
        assert_eq!(group_pathkeys(2, Some(&[key(1, true), key(2, false)])), vec![(0, false), (1, true)]);
    }

    #[test]
    fn output_sorted_by_group_keys_satisfies_a_prefix_of_them() {
        let pk = vec![(1, true), (0, false)];
        assert!(sorted_by_group_keys(&pk, &[key(1, true)]));
        assert!(sorted_by_group_keys(&pk, &[key(1, true), key(0, false)]));
        assert!(!sorted_by_group_keys(&pk, &[key(1, false)]));
        assert!(!sorted_by_group_keys(&pk, &[key(0, false)]));
        assert!(!sorted_by_group_keys(&pk, &[key(1, true), key(0, false), key(2, false)]));
    }
}
