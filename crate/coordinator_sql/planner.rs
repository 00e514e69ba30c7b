//! Planning a SELECT on the coordinator, as PostgreSQL 15 plans the cases the
//! sandbox supports.
//!
//! The query is first planned as if its one relation were a plain table, by the shard
//! planner (`sql::plan_select`), which gives the logical shape:
//!
//! ```text
//! Limit → Result (select list) → Sort → Result (HAVING) → Agg → Result (WHERE) → Scan
//! ```
//!
//! Then the scan is expanded the way PostgreSQL's planner does for partitioned and
//! foreign tables:
//!
//! - **partition pruning** (`partprune.c`): partitions whose bound cannot hold a row
//!   satisfying the WHERE clause's `column op constant` conjuncts are left out;
//!   conditions on the key that compare with a prepared statement's parameter (`key
//!   op $n`, a generic plan's) keep every partition and give the Append (or Merge
//!   Append) its run-time pruning info (`run_time_pruning`, make_partition_pruneinfo's
//!   initial steps), which the executor applies at startup (`find_matching_subplans`);
//! - **Append** over the remaining partitions (none: no Append, as PostgreSQL removes
//!   a single-child Append);
//! - **pushdown** (postgres_fdw's `deparse.c`/`postgres_fdw.c`): a foreign partition's
//!   scan carries the WHERE conjuncts and fetches only the columns used above it
//!   (`SELECT NULL` when none); `col = constant` conjuncts come last, as PostgreSQL
//!   regenerates them from their equivalence class;
//! - **a foreign scan's cheapest path**: postgres_fdw adds a path sorted by the
//!   query's pathkeys (GROUP BY's order, else ORDER BY's) beside the unsorted one,
//!   costing ×1.2 (`DEFAULT_FDW_SORT_MULTIPLIER`); where that is within `add_path`'s
//!   1% fuzz (a small table) the sorted path replaces the unsorted one, so its remote
//!   query carries the ORDER BY even under a Hash Join or a HashAggregate
//!   (`Planner::scan`, `query_pathkeys`);
//! - **ORDER BY** over several partitions: a Sort above the Append, or a **MergeAppend**
//!   whose foreign children get the ORDER BY in their remote query and whose local
//!   children are sorted, or over range partitions an ordered Append; GroupAggregate or
//!   HashAggregate; a remote ORDER BY and LIMIT or local ones: chosen by cost
//!   (`grouping_planner`, a child module);
//! - **aggregates**: above the Append; with `enable_partitionwise_aggregate` and the
//!   partition key among the GROUP BY keys, one aggregate per partition, pushed into
//!   the remote query of a foreign one (postgres_fdw's aggregate pushdown), a HashAggregate
//!   for a local one, under an Append.
//!
//! Whether a foreign scan runs asynchronously is the executor's business, as in
//! PostgreSQL (`async_capable` on the server or table, `enable_async_append`, and the
//! conditions `nodeAppend.c` checks).
//!
//! Invariants:
//! - pruning only leaves out a partition whose bound cannot hold a matching row: a
//!   condition the planner cannot read keeps every partition, so pruning never loses rows;
//! - partitions are listed in bound order, the default last (`bound_order`), whatever
//!   order the file created them in;
//! - it reads the coordinator's catalog only (as PostgreSQL's planner, without
//!   `use_remote_estimate`, asks no remote server; with it, the shards' EXPLAIN
//!   answers come through the catalog, `super::remote_estimate`, a join's
//!   parameterized scans' too, `paramfdw.rs`);
//! - subqueries nest at most 32 deep (`MAX_NESTING`), an error beyond that, not a stack
//!   overflow; what it does not plan (WITH, a join search of GEQO's size, …) is
//!   refused by name.
//!
//! Set operations are `super::prepunion`'s (UNION [ALL], INTERSECT [ALL], EXCEPT [ALL]),
//! `generate_series` in FROM `super::funcscan`'s. Which WHERE conjuncts a foreign scan
//! ships, and which are pseudoconstants that gate the scans instead (a Result with a
//! One-Time Filter), is `super::shippable`'s rule (postgres_fdw's `is_foreign_expr`).
//!
//! Subqueries in expressions (uncorrelated scalar subqueries and EXISTS as InitPlans,
//! One-Time Filters, NOT IN as a hashed SubPlan) are `subselect.rs`'s; the query
//! around them is planned here as usual (`plan_with_init_plans`).
//!
//! A join of two relations: its sides planned as above, joined by the method and in
//! the order PostgreSQL 15's costs choose (`plan::costsize`): `add_paths_to_joinrel`'s
//! paths each way round (a Merge Join over Sorts, a Nested Loop over the inner side or
//! a Materialize of it, a Hash Join; `Method::tried`, with the `enable_*` settings as
//! PostgreSQL applies them), `add_path`'s pruning by cost and ordering, and the upper
//! levels (ORDER BY, LIMIT) over the paths kept (`Join::choose`). An inner join of two
//! relations without an equality between them (`a.x < b.y`, a CROSS JOIN, `FROM a,
//! b` without a join clause) and a parenthesized join are planned by the join search
//! instead (`joinrels::plan_join_search`: a Nested Loop, its Join Filter the
//! conditions, or the join pushed to its server).
//!
//! With `enable_partitionwise_join`, a join of two tables partitioned alike on their
//! keys is `partitionwise.rs`'s: an Append of one such join per pair of partitions.
//! A join of two foreign tables on one server also gets postgres_fdw's path: the
//! join pushed to that server as one Foreign Scan (`Method::Foreign`,
//! `super::postgres_fdw_join`), with the query's aggregate pushed over it.
//!
//! A simple subquery among a join's members (a WITH query read once, inlined as one,
//! too) is first pulled up into the join (`pullup_subquery.rs`, `pull_up_subqueries`),
//! so the join is planned over its relation; SELECT DISTINCT over a join is made
//! distinct by a Unique or a HashAggregate chosen by cost (`distinct_join.rs`).
//!
//! A join of three or more relations is `joinrels.rs`'s: `standard_join_search`
//! (join order by dynamic programming, `join_is_legal` for the outer joins) over the
//! same join nodes (`join_node`, `Method::tried`) and `add_path`'s verdicts.
//!
//! Where it departs from PostgreSQL: apart from a join's order and method and the upper
//! levels of a query over one relation (`grouping_planner`), the shape above is chosen
//! by rule, not by cost, and settings that would change it by cost are refused
//! (`settings.rs`); a join's sides have their unordered path and one ordered
//! for the query's ORDER BY (a remote ORDER BY, a Merge Append of ordered partitions:
//! `Join::side_order`), used as a Nested Loop's outer side, and as a Merge Join's
//! sides where that order is the merge key's; a local table's index paths
//! (`indxpath.rs`) are its sides' scans, its presorted Index Scan a Merge Join's side
//! and its parameterized Index Scan a Nested Loop's inner side; a foreign or
//! partitioned side whose leaves are foreign tables with `use_remote_estimate` has a
//! parameterized path too (its scans read the outer row's key as `$1`, the Append
//! prunes by it at each rescan: `paramfdw.rs`); a partitioned side of several leaves
//! has a path in its key's order when some leaf reads in it on its own (a local
//! partition's index, a foreign one's remote ORDER BY with `use_remote_estimate`:
//! `Join::partitions_key_ordered`): `generate_orderedappend_paths`' ordered Append of
//! range partitions in bound order, the other leaves sorted (a foreign one locally,
//! as postgres_fdw offers a merge key's order only with remote estimates), else a
//! Merge Append; an ordered Append's members run synchronously
//! (`create_append_plan` considers async members only without pathkeys); but a
//! plain foreign table without `use_remote_estimate` has no path ordered for a
//! merge alone, so the plans PostgreSQL builds on those differ (the corpus's ledger
//! lists them); no semi or anti join (`reduce_outer_joins` does not
//! turn a LEFT JOIN with `IS NULL` on its nullable side into one); a Merge Join
//! merges on one equality (the others are its Join Filter: of an inner join's
//! several, the one whose plan costs least, e.g. a local side's indexed key); range
//! pruning reads the first key column only, so with a multi-column range key it may
//! keep partitions PostgreSQL prunes.

use sqlparser::ast::{self, SetExpr, TableFactor};
use sqlparser::tokenizer::Location;

use super::catalog::{ident, relation_name, Bound, Node, RelKind, Relation};
use super::shippable::{contains_volatile, is_foreign_expr_on, is_pseudoconstant};
use super::statement::Strategy;
use super::FrontError;
use crate::plan::costsize::{cost_plan, CostParams, Estimate};
use crate::plan::{
    AggCall, AggFunc, AggStrategy, BinOp, Expr, ForeignScanPlan, JoinType, PartPruneInfo, Plan, RemoteQuery,
    RemoteTarget, ScanName, SortKey,
};
use crate::types::{Catalog, Column, Datum, Table};

/// SELECT DISTINCT over a join (`create_distinct_paths`).
#[path = "distinct_join.rs"]
mod distinct_join;
#[path = "equivclass.rs"]
mod equivclass;
/// Joins of three or more relations: `standard_join_search` (joinrels.rs).
#[path = "joinrels.rs"]
mod joinrels;
pub use joinrels::{last_search_paths_costed, KeptPlanning, KeptSearches};
// The upper levels chosen by cost (GroupAggregate or HashAggregate, Sort or Merge
// Append, remote ORDER BY and LIMIT): a child module, so it extends `Planner`.
#[path = "grouping_planner.rs"]
mod grouping_planner;
/// Incremental Sort paths (`create_ordered_paths`' second kind of sorted path).
#[path = "incsort.rs"]
mod incsort;
/// Partitionwise join of two relations (`try_partitionwise_join`): a child module, so
/// it extends `Join`.
#[path = "partitionwise.rs"]
mod partitionwise;

#[path = "partbounds.rs"]
mod partbounds;
/// The order of a join's columns in EXPLAIN's target lists (PostgreSQL's reltargets).
#[path = "tlist_order.rs"]
mod tlist_order;
use grouping_planner::{ScanInput, Upper};

/// A planned query: the plan, its output columns, and the foreign servers it reads.
#[derive(Clone, Debug)]
pub struct Planned {
    pub plan: Plan,
    pub columns: Vec<Column>,
    pub servers: Vec<String>,
    /// ORDER BY's first key, as an output column (for comparing results with ties).
    pub order_key: Option<usize>,
    /// ORDER BY's keys as output columns, as far as they are output columns (the
    /// leading keys that are; `order_key` is the first): tests/sql_corpus.rs compares
    /// rows in order of these keys, ties as multisets.
    pub order_keys: Vec<usize>,
}

/// The logical plan's layers above the scan, peeled off.
struct Layers {
    limit: Option<(u64, Option<u64>)>,
    targets: Option<Vec<(Expr, String)>>,
    sort: Option<Vec<SortKey>>,
    having: Option<Expr>,
    agg: Option<(AggStrategy, Vec<Expr>, Vec<AggCall>)>,
    filter: Option<Expr>,
}

impl Layers {
    fn clone_layers(&self) -> Layers {
        Layers {
            limit: self.limit,
            targets: self.targets.clone(),
            sort: self.sort.clone(),
            having: self.having.clone(),
            agg: self.agg.clone(),
            filter: self.filter.clone(),
        }
    }
}

fn peel(mut plan: Plan) -> Result<Layers, String> {
    let mut l = Layers { limit: None, targets: None, sort: None, having: None, agg: None, filter: None };
    if let Plan::Limit { child, offset, count } = plan {
        l.limit = Some((offset, count));
        plan = *child;
    }
    if let Plan::Result { child, filter: None, targets: Some(t) } = plan {
        l.targets = Some(t);
        plan = *child;
    }
    if let Plan::Sort { child, keys } = plan {
        l.sort = Some(keys);
        plan = *child;
    }
    let grouped = matches!(&plan, Plan::Agg { .. })
        || matches!(&plan, Plan::Result { child, filter: Some(_), targets: None } if matches!(child.as_ref(), Plan::Agg { .. }));
    if grouped {
        if let Plan::Result { child, filter: Some(f), targets: None } = plan {
            l.having = Some(f);
            plan = *child;
        }
        if let Plan::Agg { child, strategy, group_by, aggs, .. } = plan {
            // A DISTINCT's logical Agg sorts its input itself (`plan_distinct`); the
            // planner chooses how to make the rows distinct.
            plan = match (*child, strategy.clone()) {
                (Plan::Sort { child, .. }, crate::plan::AggStrategy::Unique) => *child,
                (child, _) => child,
            };
            l.agg = Some((strategy, group_by, aggs));
        }
    }
    if let Plan::Result { child, filter: Some(f), targets: None } = plan {
        l.filter = fold_true_quals(&f);
        plan = *child;
    }
    match plan {
        Plan::SeqScan { .. } => Ok(l),
        other => Err(format!("unexpected logical plan node {other:?}")),
    }
}

/// Plans `q` (written in `text`, the padded section text its spans refer to).
pub fn plan_query(coord: &Node, q: &ast::Query, text: &str) -> Result<Planned, FrontError> {
    // The coordinator's own functions and operators are what its expressions call.
    crate::shard_sql::inline::with_routines(&coord.routines, || plan_query_in_scope(coord, q, text))
}

fn plan_query_in_scope(coord: &Node, q: &ast::Query, text: &str) -> Result<Planned, FrontError> {
    let mut servers = Vec::new();
    let planned = plan_query_into(coord, q, text, &mut servers, 0)?;
    // The enable_* settings the sandbox can honour only where its plan lacks their node.
    super::settings::check_plan(&|n| coord.setting(n).map(str::to_string), &planned.plan)
        .map_err(|m| FrontError::at(m, query_location(q)))?;
    // use_remote_estimate outside a planning that asks the shards: refused by name.
    super::remote_estimate::refuse_outside(coord, query_location(q))?;
    Ok(Planned { servers, ..planned })
}

/// How deeply subqueries and UNION branches may nest (PostgreSQL's limit is the
/// stack; ours keeps hostile input from exhausting it).
pub(super) const MAX_NESTING: usize = 32;

pub(super) fn plan_query_into(
    coord: &Node,
    q: &ast::Query,
    text: &str,
    servers: &mut Vec<String>,
    depth: usize,
) -> Result<Planned, FrontError> {
    let at = query_location(q);
    if depth > MAX_NESTING {
        return Err(FrontError::at("subqueries nested too deeply", at));
    }
    if q.with.is_some() {
        return Err(FrontError::unsupported("WITH (common table expressions)", at));
    }
    // JOIN … USING and NATURAL JOIN: the ON form, as the parser resolves them.
    if let Some(rewritten) = super::parse_clause::expand_join_using(coord, q, at)? {
        return plan_query_into(coord, &rewritten, text, servers, depth);
    }
    // Simple subqueries (and WITH queries inlined as such) among a join's members:
    // pulled up into the join (`pull_up_subqueries`, pullup_subquery.rs).
    if let Some((pulled, rt)) = super::pullup_subquery::pull_up_subqueries(coord, q, at)? {
        return super::pullup_subquery::with_range_table(rt, || plan_query_into(coord, &pulled, text, servers, depth));
    }
    if let SetExpr::Select(s) = q.body.as_ref() {
        // SELECT DISTINCT is planned over one table (`build_scans`) and over a join of
        // tables (`distinct_join.rs`); anywhere else refused by name rather than
        // planned without its Unique.
        let one_table = matches!(s.from.as_slice(), [f] if f.joins.is_empty()
            && matches!(f.relation, TableFactor::Table { args: None, .. }));
        if s.distinct.is_some()
            && (!one_table || super::subselect::has_sublinks(q))
            && !distinct_join::distinct_join_ok(q, s)
        {
            return Err(FrontError::unsupported("SELECT DISTINCT over a join, a subquery or a function", at));
        }
    }
    // Window functions: planned over the query without them (`windowagg.rs`).
    if super::windowagg::has_window_items(q) {
        return super::windowagg::plan_windows(coord, q, text, servers, depth);
    }
    super::prepjointree::refuse_written_semi_joins(q, at)?;
    // IN / EXISTS / NOT EXISTS in WHERE's top-level AND: a semi or anti join.
    if let Some(joined) = super::prepjointree::pull_up_sublinks(coord, q, at)? {
        if let SetExpr::Select(s) = joined.body.as_ref() {
            return plan_pulled_up(coord, &joined, s, text, servers, at);
        }
    }
    if super::subselect::has_sublinks(q) {
        return plan_with_init_plans(coord, q, text, servers, depth);
    }
    match q.body.as_ref() {
        SetExpr::SetOperation { .. } => return plan_union(coord, q, text, servers, depth),
        SetExpr::Select(s) => {
            if let [from] = s.from.as_slice() {
                if let (TableFactor::Table { args: Some(_), .. }, true) = (&from.relation, from.joins.is_empty()) {
                    let (name, sub) = super::funcscan::plan_function_scan(&from.relation, at)?;
                    return plan_over(q, text, &name, sub);
                }
                if let TableFactor::Derived { subquery, alias, lateral: false } = &from.relation {
                    if from.joins.is_empty() {
                        // WHERE's conditions on the subquery's columns go into it, as
                        // PostgreSQL pulls a simple subquery up or pushes them down
                        // (`qual_pushdown.rs`); the rest stay above it.
                        if let Some((mut outer, sub)) = super::qual_pushdown::push_quals(coord, q, subquery) {
                            if let SetExpr::Select(os) = outer.body.as_mut() {
                                if let TableFactor::Derived { subquery, .. } = &mut os.from[0].relation {
                                    **subquery = sub;
                                }
                            }
                            return plan_query_into(coord, &outer, text, servers, depth);
                        }
                        let name = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_else(|| "unnamed_subquery".into());
                        let mut sub = plan_query_into(coord, subquery, text, servers, depth + 1)?;
                        super::subselect::name_subquery_scans(&mut sub.plan);
                        if is_simple_union_all(subquery) {
                            return plan_over_appendrel(q, text, &name, sub);
                        }
                        return plan_over(q, text, &name, sub);
                    }
                }
            }
        }
        _ => {}
    }
    if let SetExpr::Select(s) = q.body.as_ref() {
        if joinrels::count_relations(s) > 2 {
            return joinrels::plan_join_search(coord, q, s, text, servers, at);
        }
        if s.from.len() == 2 || s.from.first().is_some_and(|f| !f.joins.is_empty()) || joinrels::count_relations(s) == 2
        {
            return plan_join(coord, q, s, text, servers, at);
        }
    }
    if let SetExpr::Select(s) = q.body.as_ref() {
        if s.from.is_empty() {
            return plan_without_from(q, s, text, at);
        }
    }
    let (rel_name, alias) = single_relation(q, at)?;
    let Some(rel) = coord.relation(&rel_name) else {
        return Err(FrontError::at(format!("relation \"{rel_name}\" does not exist"), at));
    };
    let mut catalog = Catalog::default();
    catalog.add(Table::new(&rel.name, rel.columns()));
    let (logical, columns) = crate::shard_sql::plan_select(q, text, &catalog).map_err(|e| sql_error(e, text))?;
    let mut layers = peel(logical).map_err(|m| FrontError::at(format!("internal error: {m}"), at))?;
    if let Some(f) = layers.filter.as_mut() {
        let types: Vec<crate::plan::SqlType> = rel.columns.iter().map(|c| c.ty).collect();
        f.widen_saop_to_columns(&types);
    }
    let mut qual = None;
    if layers.filter.as_ref().is_some_and(Expr::has_exec_param) {
        (qual, layers.filter) = super::subselect::split_one_time_filter(layers.filter.take());
    }
    let alias = alias.unwrap_or_else(|| rel.name.clone());
    let order_keys = order_keys_of(&layers);
    let tlist_layers = layers.clone_layers();
    let mut p = Planner::new(coord, std::mem::take(servers));
    let plan = p.build(rel, &alias, layers, at);
    *servers = p.servers;
    let mut plan = match qual {
        Some(f) => super::subselect::insert_gating(plan?, f),
        None => plan?,
    };
    // EXPLAIN's column order: the relation's reltarget (the final target list's
    // columns in its order, `build_base_rel_tlists`).
    let n = rel.columns.len();
    let targets = tlist_order::reltarget_columns(&tlist_layers, &[], &[], n, &|_| 0);
    let names: Vec<String> = rel.columns.iter().map(|c| c.name.clone()).collect();
    let rels = [tlist_order::BaseRelName { name: &alias, first: 0, columns: names }];
    tlist_order::mark_named_scans(&mut plan, &rels, &targets);
    Ok(Planned { plan, columns, servers: vec![], order_key: order_keys.first().copied(), order_keys })
}

/// `SELECT expr, …` without FROM: PostgreSQL's Result without an outer plan
/// (`create_group_result_plan` over the query's RTE_RESULT; nodeResult.c returns its
/// one row), its target list the expressions as eval_const_expressions folds them.
/// WHERE, grouping, aggregates, DISTINCT, ORDER BY and LIMIT over it are refused by
/// name (PostgreSQL gates or wraps the Result for them).
fn plan_without_from(q: &ast::Query, s: &ast::Select, text: &str, at: Location) -> Result<Planned, FrontError> {
    if s.projection.iter().any(|i| matches!(i, ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..))) {
        return Err(FrontError::at("SELECT * with no tables specified is not valid", at));
    }
    let (logical, columns) = crate::shard_sql::plan_select_join(q, text, &[]).map_err(|e| sql_error(e, text))?;
    let l = peel(logical).map_err(|m| FrontError::at(format!("internal error: {m}"), at))?;
    let (Some(targets), None, None, None, None, None) = (l.targets, &l.filter, &l.agg, &l.having, &l.sort, &l.limit)
    else {
        return Err(FrontError::unsupported(
            "SELECT without FROM with WHERE, GROUP BY, an aggregate, HAVING, DISTINCT, ORDER BY, LIMIT or OFFSET",
            at,
        ));
    };
    if s.distinct.is_some() {
        return Err(FrontError::unsupported(
            "SELECT without FROM with WHERE, GROUP BY, an aggregate, HAVING, DISTINCT, ORDER BY, LIMIT or OFFSET",
            at,
        ));
    }
    let row: Vec<Expr> = targets.into_iter().map(|(e, _)| e).collect();
    let mut any_column = false;
    row.iter().for_each(|e| e.for_each_col(&mut |_| any_column = true));
    if any_column {
        return Err(FrontError::at("internal error: a column reference without FROM", at));
    }
    let plan = Plan::ConstResult { rows: vec![row], columns: columns.clone() };
    Ok(Planned { plan, columns, servers: vec![], order_key: None, order_keys: vec![] })
}

/// A query whose sublinks `pull_up_sublinks` made semi and anti joins: a join of two
/// relations, or of more (several sublinks) by the join search. (A function of its
/// own, so that `plan_query_into`'s frame, on the stack under every query's deepest
/// expression, does not grow.)
#[inline(never)]
fn plan_pulled_up(
    coord: &Node,
    joined: &ast::Query,
    s: &ast::Select,
    text: &str,
    servers: &mut Vec<String>,
    at: Location,
) -> Result<Planned, FrontError> {
    if joinrels::count_relations(s) > 2 {
        return joinrels::plan_join_search(coord, joined, s, text, servers, at);
    }
    plan_join(coord, joined, s, text, servers, at)
}

/// A query over one relation whose select list, WHERE or HAVING holds subqueries:
/// each uncorrelated scalar one becomes an InitPlan (`subselect.rs`), the rest of the
/// query is planned as usual with the InitPlans' values as parameters, and the
/// InitPlans are attached to its top.
fn plan_with_init_plans(
    coord: &Node,
    q: &ast::Query,
    text: &str,
    servers: &mut Vec<String>,
    depth: usize,
) -> Result<Planned, FrontError> {
    let at = query_location(q);
    if depth > 0 {
        return Err(FrontError::unsupported(
            "a subquery expression inside a subquery (in FROM, a UNION branch or another subquery): not planned yet",
            at,
        ));
    }
    let Some((rel_name, alias)) = super::subselect::single_from(q) else {
        return Err(FrontError::unsupported(
            "a subquery expression in a query over a join, a subquery in FROM or a set operation: not planned yet",
            at,
        ));
    };
    let outer = super::subselect::Outer {
        coord,
        text,
        depth,
        names: super::subselect::outer_names(coord, &rel_name, alias.as_deref()),
        at,
    };
    let (rewritten, mut init_plans) = super::subselect::pull_init_plans(q, &outer, servers)?;
    // Nothing pulled (a sublink where pull_init_plans does not look, as in
    // `x = ANY (SELECT …) - 1`): planning the same query again would recurse forever.
    if rewritten == *q {
        return Err(FrontError::unsupported(
            "a subquery expression inside another expression (an operator's operand): not planned yet",
            at,
        ));
    }
    super::subselect::check_hashed_subplans(coord, &rel_name, &init_plans, at)?;
    // The SubPlans called per row priced per call while the paths that evaluate them
    // are compared (`cost_qual_eval` of the target list and quals), as `cost_subplan`
    // priced each when it was made.
    let params = crate::plan::costsize::CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
    let mut planned = crate::plan::costsize::with_subplan_costs(&init_plans, coord, &params, || {
        plan_query_into(coord, &rewritten, text, servers, depth)
    })?;
    super::subselect::check_params(&planned.plan, at)?;
    if init_plans
        .iter()
        .any(|p| matches!(p.kind, crate::plan::SubLinkKind::Correlated | crate::plan::SubLinkKind::AnyAll { .. }))
    {
        super::subselect::check_subplan_uses(&planned.plan, at)?;
        planned.plan = super::subselect::project_below_sort(planned.plan);
    }
    super::subselect::name_init_plan_relations(&planned.plan, &mut init_plans);
    // The connections' order (which the COMMITs at transaction end follow) is the
    // order of the servers' user mappings in PostgreSQL (pgfdw_xact_callback walks its
    // connection table), not the order the InitPlans made the planner meet them in.
    servers.sort_by_key(|s| coord.servers.iter().position(|d| d.name == *s).unwrap_or(usize::MAX));
    Ok(Planned { plan: Plan::WithInitPlans { child: Box::new(planned.plan), init_plans }, ..planned })
}

/// A relation of a join as written: the catalog relation and the name it goes by.
fn join_member<'a>(coord: &'a Node, f: &TableFactor, at: Location) -> Result<(&'a Relation, String), FrontError> {
    let TableFactor::Table { name, alias, args: None, .. } = f else {
        return Err(FrontError::unsupported("a subquery or function as a joined relation", at));
    };
    let rel_name = relation_name(name).map_err(|m| FrontError::at(m, at))?;
    let rel = coord
        .relation(&rel_name)
        .ok_or_else(|| FrontError::at(format!("relation \"{rel_name}\" does not exist"), at))?;
    Ok((rel, alias.as_ref().map(|a| ident(&a.name)).unwrap_or(rel_name)))
}

/// A join method, as `add_paths_to_joinrel` makes its paths from the two sides'
/// cheapest paths (the sandbox's sides have one path each: unordered scans).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Method {
    /// `sort_inner_and_outer`: a Merge Join over a Sort of each side (and a
    /// Materialize over the inner Sort when `final_cost_mergejoin` wants one).
    Merge,
    /// `match_unsorted_outer`: a Nested Loop over the inner side as it is, or over a
    /// Materialize of it (`material`).
    NestLoop { material: bool },
    /// `hash_inner_and_outer`: a Hash Join hashing the inner side.
    Hash,
    /// postgres_fdw's `postgresGetForeignJoinPaths`: the join pushed to the server of
    /// its two foreign tables, one Foreign Scan (`super::postgres_fdw_join`); never
    /// among `tried`'s, offered by `Join::choose` when the pair qualifies.
    Foreign,
}

impl Method {
    /// The paths `add_paths_to_joinrel` tries for one order of the sides, in its
    /// order: merge joins are made only with `enable_mergejoin` (there are no merge
    /// clauses without it, `select_mergejoin_clauses`), hash joins only with
    /// `enable_hashjoin`, the materialized inner side only with `enable_material`;
    /// a Nested Loop is always made, `enable_nestloop` off only costs it
    /// `disable_cost` (as `enable_mergejoin`/`enable_hashjoin` off would a path made
    /// for a FULL join).
    ///
    /// `jt` is the join's type with this order's outer side: a Right or Full join
    /// has no Nested Loop (`match_unsorted_outer`'s `nestjoinOK`), and a Full join
    /// is merged or hashed even with those methods off (they are its only ways; the
    /// disabled method costs `disable_cost` more).
    fn tried(coord: &Node, jt: JoinType) -> Vec<Method> {
        let full = jt == JoinType::Full;
        let nestjoin_ok = matches!(jt, JoinType::Inner | JoinType::Left | JoinType::Semi | JoinType::Anti);
        let mut v = Vec::new();
        if coord.setting_on("enable_mergejoin", true) || full {
            v.push(Method::Merge);
        }
        if nestjoin_ok {
            v.push(Method::NestLoop { material: false });
            // ExecMaterializesOutput: the sandbox's sides are scans and Appends,
            // which do not, so a Materialize is worth trying over them.
            if coord.setting_on("enable_material", true) {
                v.push(Method::NestLoop { material: true });
            }
        }
        if coord.setting_on("enable_hashjoin", true) || full {
            v.push(Method::Hash);
        }
        v
    }

    /// Is the join's output ordered by its outer key (a Merge Join's is, but for a
    /// Right or Full join, whose null-extended rows break the order:
    /// `build_join_pathkeys`)?
    fn sorted(self, jt: JoinType) -> bool {
        self == Method::Merge && matches!(jt, JoinType::Inner | JoinType::Left | JoinType::Semi | JoinType::Anti)
    }
}

/// The join node of `method` over the two sides (`create_*join_plan`); `swapped`: the
/// query's second relation is the outer side.
/// `more_keys`: a Hash Join's other equalities (outer, inner), in its Hash Cond.
/// `presorted`: a side already in the merge order (a Merge Join sorts the others).
fn join_node(
    coord: &Node,
    (method, join_type, presorted): (Method, JoinType, Presorted),
    (outer, inner): (Plan, Plan),
    (keys, more_keys): ((Expr, Expr), Vec<(Expr, Expr)>),
    filter_inner_first: bool,
    known: Option<(&crate::plan::costsize::CostedPath, &crate::plan::costsize::CostedPath)>,
) -> Plan {
    let (outer_key, inner_key) = keys;
    let (outer, inner) = (Box::new(outer), Box::new(inner));
    match method {
        // A foreign join is built by `Join::foreign_join` and never reaches here; as a
        // local node it would be the hash join of the same sides.
        Method::Hash | Method::Foreign => {
            Plan::HashJoin { outer, inner, outer_key, inner_key, more_keys, join_type, joinrel_rows: None }
        }
        Method::NestLoop { material } => Plan::NestLoop {
            outer,
            inner: if material { Box::new(Plan::Material { child: inner }) } else { inner },
            outer_key,
            inner_key,
            filter_inner_first,
            join_type,
            joinrel_rows: None,
        },
        Method::Merge => {
            let sort = |child: Box<Plan>, key: &Expr, already: bool| match already {
                true => child,
                false => Box::new(Plan::Sort { child, keys: vec![SortKey { expr: key.clone(), desc: false }] }),
            };
            let mut join = Plan::MergeJoin {
                outer: sort(outer, &outer_key, presorted.outer),
                inner: sort(inner, &inner_key, presorted.inner),
                outer_key,
                inner_key,
                join_type,
                joinrel_rows: None,
            };
            let params = CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
            // The join search's inputs are costed already: their nodes below the Sorts
            // put here are taken at their figures.
            let materializes = match (&join, known) {
                (Plan::MergeJoin { outer, inner, .. }, Some((o, i))) => {
                    fn below(p: &Plan, sorted_here: bool) -> &Plan {
                        match p {
                            Plan::Sort { child, .. } if sorted_here => child,
                            p => p,
                        }
                    }
                    let inputs = [(below(outer, !presorted.outer), o), (below(inner, !presorted.inner), i)];
                    crate::plan::costsize::mergejoin_materializes_over(&join, &inputs, coord, &params)
                }
                _ => crate::plan::costsize::mergejoin_materializes(&join, coord, &params),
            };
            if materializes {
                if let Plan::MergeJoin { inner, .. } = &mut join {
                    let sorted = std::mem::replace(
                        inner.as_mut(),
                        Plan::EmptyResult { columns: vec![], rels: vec![], joined: false },
                    );
                    **inner = Plan::Material { child: Box::new(sorted) };
                }
            }
            join
        }
    }
}

/// An inner equi-join of two relations (`a JOIN b ON a.x = b.y`, or `FROM a, b WHERE
/// a.x = b.y`), each side scanned as a query of its own would be (partitions, pruning,
/// conditions on one side pushed into that side's scans). The method and which
/// relation is the outer side are chosen by cost, both ways round, as PostgreSQL's
/// `add_paths_to_joinrel` tries them (`Join::choose`).
fn plan_join(
    coord: &Node,
    q: &ast::Query,
    s: &ast::Select,
    text: &str,
    servers: &mut Vec<String>,
    at: Location,
) -> Result<Planned, FrontError> {
    let (a, b, on, written_jt) = match (s.from.as_slice(), s.from.first().map(|f| f.joins.as_slice())) {
        ([one], Some([join])) => {
            // A cross join has no equality: a Nested Loop without a join clause, as the
            // join search plans it (`add_paths_to_joinrel`).
            if matches!(join.join_operator, ast::JoinOperator::CrossJoin) {
                return joinrels::plan_join_search(coord, q, s, text, servers, at);
            }
            let (jt, on) = joinrels::join_of(join, at)?;
            (&one.relation, &join.relation, on, jt)
        }
        ([x, y], Some([])) if y.joins.is_empty() => (&x.relation, &y.relation, None, JoinType::Inner),
        // A parenthesized join (`(a JOIN b ON …)`): its relations in place, as the
        // join search takes them (`joinrels::from_members`).
        _ if s.from.iter().any(|f| matches!(f.relation, TableFactor::NestedJoin { .. })) => {
            return joinrels::plan_join_search(coord, q, s, text, servers, at)
        }
        _ => return Err(FrontError::unsupported("a join of more than two relations", at)),
    };
    let on_count = on.as_ref().map_or(0, ast_conjuncts);
    let written_join = on.is_some();
    let where_count = s.selection.as_ref().map_or(0, ast_conjuncts);
    let (ra, na) = join_member(coord, a, at)?;
    let (rb, nb) = join_member(coord, b, at)?;
    if na == nb {
        return Err(FrontError::at(format!("table name \"{na}\" specified more than once"), at));
    }
    // The join condition joins the WHERE clause: the shard planner binds both.
    let mut q2 = q.clone();
    if let SetExpr::Select(s2) = q2.body.as_mut() {
        s2.from.truncate(1);
        s2.from[0].joins.clear();
        s2.selection = match (on, s2.selection.take()) {
            (Some(c), Some(w)) => Some(ast::Expr::BinaryOp {
                left: Box::new(ast::Expr::Nested(Box::new(c))),
                op: ast::BinaryOperator::And,
                right: Box::new(ast::Expr::Nested(Box::new(w))),
            }),
            (c, w) => c.or(w),
        };
    }
    let members = [(na.clone(), ra.name.clone(), ra.columns()), (nb.clone(), rb.name.clone(), rb.columns())];
    let (logical, columns) = crate::shard_sql::plan_select_join(&q2, text, &members).map_err(|e| sql_error(e, text))?;
    let mut l = peel(logical).map_err(|m| FrontError::at(format!("internal error: {m}"), at))?;
    if let Some(f) = l.filter.as_mut() {
        let types: Vec<crate::plan::SqlType> = ra.columns.iter().chain(&rb.columns).map(|c| c.ty).collect();
        f.widen_saop_to_columns(&types);
    }
    let (wa, n) = (ra.columns.len(), ra.columns.len() + rb.columns.len());
    let mut conjuncts = l.filter.as_ref().map(split_and).unwrap_or_default();
    let mut still_needed: Vec<(usize, usize)> = vec![];
    // A join whose every equality between the sides a constant made redundant: a
    // Nested Loop without a join clause, its sides' key the first such equality's
    // columns (needed still, `Reconsidered::still_needed`).
    let mut clauseless: Option<(usize, usize, bool)> = None;
    if written_jt == JoinType::Inner {
        // Equivalence classes with a constant (equivclass.rs).
        let ty = |c: usize| if c < wa { &ra.columns[c].ty } else { &rb.columns[c - wa].ty };
        if let Some(d) = equivclass::reconsider_constants(&conjuncts, &|x, y| ty(x) == ty(y)) {
            let keyed = d.conjuncts.iter().any(|c| join_key(c, wa).is_some());
            let pinned_key = d
                .still_needed
                .iter()
                .find_map(|&(x, y)| join_key(&Expr::bin(BinOp::Eq, Expr::Col(x), Expr::Col(y)), wa));
            if keyed || pinned_key.is_some() {
                clauseless = if keyed { None } else { pinned_key };
                conjuncts = d.conjuncts;
                still_needed = d.still_needed;
            }
        }
    }
    let side_of = |e: &Expr| {
        let cols = columns_of(e, n);
        (cols.iter().all(|&c| c < wa), cols.iter().all(|&c| c >= wa))
    };
    // An outer join's ON conditions and WHERE's are told apart by their count (ON's
    // come first in the filter the shard planner bound).
    if written_jt != JoinType::Inner && conjuncts.len() != on_count + where_count {
        return Err(FrontError::unsupported(
            "constant conditions in an outer join's ON or WHERE (PostgreSQL folds them; write the join without them)",
            at,
        ));
    }
    let (on_conj, where_conj) = conjuncts.split_at(if written_jt == JoinType::Inner { 0 } else { on_count });
    let jt = reduce_outer_join(written_jt, where_conj, wa, n);
    let (jt, redundant) = super::prepjointree::reduce_left_join_to_anti(jt, on_conj, where_conj, wa);
    let key_source = if written_jt == JoinType::Inner { &conjuncts[..] } else { on_conj };
    let keys: Vec<usize> = (0..key_source.len()).filter(|&i| join_key(&key_source[i], wa).is_some()).collect();
    // An equality between the sides with an expression for a side (`f.id = loc.id +
    // 500`): PostgreSQL hashes or merges on the expression (its statistics those of
    // `examine_variable` without an index: none); the sandbox's keys are columns.
    if keys.is_empty() && clauseless.is_none() && key_source.iter().any(|c| expression_join_key(c, wa, n)) {
        return Err(FrontError::unsupported(
            "a join key that is an expression (an equality between the two relations with an expression for a side, \
             as f.id = loc.id + 500): the sandbox joins on column = column only",
            at,
        ));
    }
    // An inner join without an equality between its sides (`a.id < b.id`, or no
    // condition at all): no merge or hash clause, so a Nested Loop with the
    // conditions as its Join Filter, or the join pushed to the server of both
    // relations; the join search plans it (its two relations one level).
    if written_jt == JoinType::Inner && keys.is_empty() && clauseless.is_none() {
        return joinrels::plan_join_search(coord, q, s, text, servers, at);
    }
    // The join planned with the equality at `key_at` as its key (the others are its
    // Join Filter, or a Hash Join's further Hash Cond).
    let plan_keyed = |key_at: Option<usize>, servers: &mut Vec<String>| -> Result<Planned, FrontError> {
        let mut a_conj = Vec::new();
        let mut b_conj = Vec::new();
        let mut rest = Vec::new();
        let mut above = Vec::new();
        let mut key: Option<(usize, usize, bool)> = None;
        // An inner join's conditions are all alike (its key from WHERE or ON); an outer
        // join's key is an ON condition, and WHERE's apply above the join.
        let key_source = if written_jt == JoinType::Inner { &conjuncts[..] } else { on_conj };
        if let Some(k) = key_at.and_then(|i| join_key(&key_source[i], wa)) {
            key = Some(k);
        }
        key = key.or(clauseless);
        let Some((ka, kb, key_b_first)) = key else {
            return Err(FrontError::unsupported("a join without an equality between its two relations", at));
        };
        let on_len = on_conj.len();
        for (i, c) in conjuncts.iter().enumerate() {
            let from_on = written_jt != JoinType::Inner && i < on_len;
            let from_key_source = if written_jt == JoinType::Inner { true } else { from_on };
            if from_key_source && Some(i) == key_at || (i >= on_len && redundant.contains(&(i - on_len))) {
                continue;
            }
            let c = c.clone();
            let (only_a, only_b) = side_of(&c);
            // May a condition on one side go into that side's scans? For an inner join,
            // always; for an outer join, an ON condition on the nullable side only
            // (it decides matches), a WHERE condition on a preserved side only.
            let (a_nullable, b_nullable) = (jt.fills_inner(), jt.fills_outer());
            if from_on {
                match (only_a, only_b) {
                    (true, _) if written_jt == JoinType::Right => a_conj.push(c),
                    (_, true) if matches!(written_jt, JoinType::Left | JoinType::Semi | JoinType::Anti) => {
                        b_conj.push(shift(&c, wa))
                    }
                    // A semi join's condition on the outer side alone filters it.
                    (true, _) if written_jt == JoinType::Semi => a_conj.push(c),
                    _ if matches!(written_jt, JoinType::Semi | JoinType::Anti) => {
                        return Err(FrontError::unsupported(
                            "an IN/EXISTS subquery's condition over both relations other than its one equality (or, \
                             under NOT EXISTS, over the outer relation alone): a semi or anti join's Join Filter, not \
                             planned yet",
                            at,
                        ))
                    }
                    _ => {
                        return Err(FrontError::unsupported(
                            "an outer join's ON condition other than its key over the preserved side or both sides (a \
                             Join Filter deciding matches); put it in WHERE or in a subquery",
                            at,
                        ))
                    }
                }
                continue;
            }
            match (only_a, only_b) {
                (true, _) if !a_nullable => a_conj.push(c),
                (_, true) if !b_nullable => b_conj.push(shift(&c, wa)),
                _ if jt == JoinType::Inner => rest.push(c),
                _ => above.push(c),
            }
        }
        // The columns each side must return: those used above the join, and the keys.
        let mut used = used_columns(&Layers { filter: None, ..l.clone_layers() }, n);
        for c in rest
            .iter()
            .chain(&above)
            .flat_map(|e| columns_of(e, n))
            .chain([ka, kb])
            .chain(still_needed.iter().flat_map(|&(x, y)| [x, y]))
        {
            used.push(c);
        }
        used.sort_unstable();
        used.dedup();
        let used_a: Vec<usize> = used.iter().copied().filter(|&c| c < wa).collect();
        let used_b: Vec<usize> = used.iter().copied().filter(|&c| c >= wa).map(|c| c - wa).collect();
        let rt = super::pullup_subquery::rt_index;
        let join = Join {
            coord,
            sides: [
                JoinSide {
                    rel: ra,
                    name: &na,
                    conjuncts: &a_conj,
                    used: used_a,
                    key: ka,
                    first: 0,
                    rt_index: rt(&na, 1),
                },
                JoinSide {
                    rel: rb,
                    name: &nb,
                    conjuncts: &b_conj,
                    used: used_b,
                    key: kb - wa,
                    first: wa,
                    rt_index: rt(&nb, 2),
                },
            ],
            // The two relations, and a written JOIN's own entry after them (a
            // pulled-up subquery's: PostgreSQL's range table, pullup_subquery.rs).
            range_table: super::pullup_subquery::range_table_len(2 + written_join as usize),
            rest: &rest,
            above: &above,
            join_type: jt,
            key_b_first: key_b_first && written_jt != JoinType::Inner,
            clauseless: clauseless.is_some(),
            columns: &columns,
            at,
        };
        join.choose(&l, servers)
    };
    // An inner join of several equalities between its sides: each may be a Merge
    // Join's one merge clause (`find_mergeclauses_for_outer_pathkeys` takes those an
    // outer path's order gives, e.g. a local side's index on another key). The first
    // written is planned, and another is kept when its plan costs less beyond
    // `add_path`'s fuzz (a Hash Join holds every equality either way).
    let mut best_servers = servers.clone();
    let mut best = plan_keyed(keys.first().copied(), &mut best_servers)?;
    if written_jt == JoinType::Inner && clauseless.is_none() && keys.len() > 1 {
        let params = CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
        let total = |p: &Planned| cost_plan(&p.plan, coord, &params).first().map_or(f64::INFINITY, |e| e.total);
        for &k in &keys[1..] {
            let mut alt_servers = servers.clone();
            let alt = plan_keyed(Some(k), &mut alt_servers)?;
            if total(&alt) * STD_FUZZ_FACTOR < total(&best) {
                (best, best_servers) = (alt, alt_servers);
            }
        }
    }
    *servers = best_servers;
    let mut planned = best;
    // EXPLAIN's column order: the relations' reltargets over the join clauses as
    // written (ON, then WHERE).
    let clauses = l.filter.as_ref().map(split_and).unwrap_or_default();
    // (Two relations: an equivalence class joins them both at once.)
    let targets = tlist_order::reltarget_columns(&l, &clauses, &[], n, &|c| (c >= wa) as usize);
    let names = |r: &Relation| r.columns.iter().map(|c| c.name.clone()).collect();
    let rels = [
        tlist_order::BaseRelName { name: &na, first: 0, columns: names(ra) },
        tlist_order::BaseRelName { name: &nb, first: wa, columns: names(rb) },
    ];
    tlist_order::mark_scans(&mut planned.plan, &rels, &targets);
    Ok(planned)
}

/// One relation of a two-relation join, ready to be either side of it.
struct JoinSide<'r> {
    rel: &'r Relation,
    /// The name it goes by in the query.
    name: &'r str,
    /// The WHERE conjuncts on it alone, in its own numbering (pushed into its scans).
    conjuncts: &'r [Expr],
    /// Its columns the join returns (used above the join, and the key), its numbering.
    used: Vec<usize>,
    /// Its join key column, in its own numbering.
    key: usize,
    /// Its first column in the join's numbering (FROM order: 0, or the first's width).
    first: usize,
    /// Its range-table index (a pushed-down join's remote query names it `r<index>`):
    /// 1 or 2, or a partition's (partitionwise.rs).
    rt_index: usize,
}

impl JoinSide<'_> {
    /// The key's position among the columns this side returns.
    fn key_output(&self) -> Expr {
        Expr::Col(self.used.iter().position(|&c| c == self.key).unwrap_or(0))
    }
}

/// An inner equi-join of two relations, which can be planned either way round.
struct Join<'r> {
    coord: &'r Node,
    /// In FROM order.
    sides: [JoinSide<'r>; 2],
    /// Conditions over both sides other than the key, in the join's numbering (an
    /// inner join's Join Filter).
    rest: &'r [Expr],
    /// An outer join's WHERE conditions that stay above it (over its nullable side).
    above: &'r [Expr],
    /// The join's type, with FROM's first relation as the outer side.
    join_type: JoinType,
    /// An outer join's key condition names FROM's second relation first (a Nested
    /// Loop's Join Filter prints it as written).
    key_b_first: bool,
    /// No equality joins the sides (an equivalence class's constant made them
    /// redundant, equivclass.rs): only a Nested Loop, without a join clause.
    clauseless: bool,
    /// The query's output columns.
    columns: &'r [Column],
    /// How many range-table entries the query has before its partitions' (which
    /// `expand_inherited_rtentry` appends): partitions' `rt_index` count from there.
    range_table: usize,
    at: Location,
}

impl Join<'_> {
    /// The plan PostgreSQL 15 makes: its join method and which relation is outer.
    ///
    /// `populate_joinrel_with_paths` calls `add_paths_to_joinrel` for (first, second)
    /// and then for (second, first); each tries its methods (`Method::tried`) and
    /// `add_path` keeps what no other path beats on cost and ordering
    /// (`add_path_keeps`): a Merge Join's output is ordered by its key, a Nested
    /// Loop's as its outer side, which is unordered or ordered for the query's ORDER
    /// BY (`side_order`), a Hash Join's not at all. All
    /// paths have the join relation's rows (`set_joinrel_size_estimates` sets them
    /// once). The upper levels then plan over the paths kept, as `grouping_planner`
    /// does: an aggregate over the cheapest-total path (the sandbox aggregates by
    /// hashing); an ORDER BY over the cheapest-total path sorted and over each path
    /// already in that order (`create_ordered_paths`); the LIMIT over each; and the
    /// final relation's `add_path` and cheapest total (`get_cheapest_fractional_path`
    /// with a LIMIT's count) choose among the whole plans.
    fn choose(&self, l: &Layers, servers: &mut Vec<String>) -> Result<Planned, FrontError> {
        // enable_partitionwise_join: the Append of the pairs' joins is the only path
        // kept at the top (partitionwise.rs).
        if let Some(pairs) = self.partition_pairs()? {
            return self.choose_partitionwise(&pairs, l, servers);
        }
        // use_remote_estimate: the EXPLAINs PostgreSQL sends for the relations first.
        self.ask_remote_estimates(l, servers)?;
        // joinrel->consider_startup: root->tuple_fraction > 0, which a LIMIT makes.
        let consider_startup = matches!(l.limit, Some((_, Some(_))));
        let mut pathlist: Vec<JoinPath> = Vec::new();
        // The pushed-down join, if postgres_fdw makes one: its aggregate is pushed too
        // (an upper relation's path of its own, whichever join path is cheapest).
        let mut foreign: Option<JoinPath> = None;
        // A semi or anti join keeps the outer relation outer (PostgreSQL 15 has no
        // right semi or anti join).
        for swapped in [false, true].into_iter().filter(|s| !*s || !self.join_type.single_match()) {
            let jt = self.node_join_type(swapped);
            // The outer side's paths: its unordered scans, and (match_unsorted_outer
            // goes through every outer path) one ordered for the query's ORDER BY, if
            // the keys are its columns, whose order a Nested Loop keeps.
            let ordered_outer = self.side_order(l, !swapped).is_some();
            // Without a join clause only a Nested Loop joins (no merge or hash clauses).
            let methods = Method::tried(self.coord, jt);
            for method in methods.into_iter().filter(|m| !self.clauseless || matches!(m, Method::NestLoop { .. })) {
                let order = if method.sorted(jt) { Order::JoinKey } else { Order::None };
                // Built on copies: the servers' order is the chosen plan's.
                let (est, _) = self.build(swapped, (method, Presorted::NONE), false, l, &mut servers.to_vec())?;
                let path = JoinPath { swapped, unique: false, method, presorted: Presorted::NONE, est, order };
                add_path(&mut pathlist, path, consider_startup, self.order_by_join_key(l, swapped));
                // The ordered outer path: a Nested Loop keeps its order; a Merge Join
                // needs no Sort of it where the ORDER BY is the merge key, over the
                // inner side sorted, or over its own ordered path
                // (`generate_mergejoin_paths`' presorted inner paths).
                let mut variants = vec![];
                if ordered_outer && matches!(method, Method::NestLoop { .. }) {
                    variants.push((Presorted { outer: true, inner: false, ..Presorted::NONE }, Order::Query));
                }
                // A local inner side looked up by its index for each outer row.
                if method == (Method::NestLoop { material: false }) && self.inner_param_path(swapped) {
                    variants.push((Presorted { inner_param: true, ..Presorted::NONE }, Order::None));
                    // get_memoize_path: a local inner side's probes under a Memoize
                    // (not for a semi or anti join: see joinrels.rs's `memoize_ok`).
                    let local = matches!(self.sides[!swapped as usize].rel.kind, RelKind::Table(_));
                    if local && !jt.single_match() && self.coord.setting_on("enable_memoize", true) {
                        let memoized = Presorted { inner_param: true, memoize: true, ..Presorted::NONE };
                        variants.push((memoized, Order::None));
                    }
                }
                // A local outer side presorted by its index on the merge key.
                if method == Method::Merge && self.outer_index_path(swapped, l) {
                    variants.push((Presorted { outer_index: true, ..Presorted::NONE }, Order::JoinKey));
                    // Over the inner side's path in the query's ORDER BY when that is
                    // the merge key (`generate_mergejoin_paths` takes the cheapest
                    // inner path already in the merge order: a remote ORDER BY).
                    if self.order_by_join_key(l, swapped) && self.side_order(l, swapped).is_some() {
                        let both = Presorted { outer_index: true, inner: true, ..Presorted::NONE };
                        variants.push((both, Order::JoinKey));
                    }
                }
                if ordered_outer && method == Method::Merge && self.order_by_join_key(l, swapped) {
                    variants.push((Presorted { outer: true, inner: false, ..Presorted::NONE }, Order::JoinKey));
                    if self.side_order(l, swapped).is_some() {
                        variants.push((Presorted { outer: true, inner: true, ..Presorted::NONE }, Order::JoinKey));
                    }
                }
                for (presorted, order) in variants {
                    let (est, _) = self.build(swapped, (method, presorted), false, l, &mut servers.to_vec())?;
                    let path = JoinPath { swapped, unique: false, method, presorted, est, order };
                    add_path(&mut pathlist, path, consider_startup, self.order_by_join_key(l, swapped));
                }
            }
            // GetForeignJoinPaths runs at the end of the first add_paths_to_joinrel.
            if !swapped && self.foreign_join_ok(servers)? {
                self.refuse_remote_limit(l)?;
                let (est, _) =
                    self.build(false, (Method::Foreign, Presorted::NONE), false, l, &mut servers.to_vec())?;
                let path = JoinPath {
                    swapped: false,
                    unique: false,
                    method: Method::Foreign,
                    presorted: Presorted::NONE,
                    est,
                    order: Order::None,
                };
                foreign = Some(path);
                add_path(&mut pathlist, path, consider_startup, self.order_by_join_key(l, false));
                // Its path with the query's ORDER BY sent to the server.
                // (None when a key is no column the join returns.)
                let presorted = Presorted { remote_order: true, ..Presorted::NONE };
                let ordered = match self.remote_ordered_join(l) {
                    true => self.build(false, (Method::Foreign, presorted), true, l, &mut servers.to_vec()).ok(),
                    false => None,
                };
                if let Some((est, _)) = ordered {
                    let path = JoinPath { presorted, est, order: Order::Query, ..path };
                    add_path(&mut pathlist, path, consider_startup, self.order_by_join_key(l, false));
                }
            }
        }
        self.add_unique_paths(l, &mut pathlist, consider_startup, servers)?;
        let cheapest = set_cheapest(&pathlist);
        // add_foreign_grouping_paths: the aggregate over the pushed-down join.
        let grouped_foreign = foreign
            .filter(|_| l.agg.is_some())
            .filter(|f| !pathlist.get(cheapest).is_some_and(|c| c.method == f.method));
        let mut finals: Vec<JoinPath> = Vec::new();
        let upper_paths: Vec<JoinPath> = pathlist.iter().copied().chain(grouped_foreign).collect();
        for (i, path) in upper_paths.iter().enumerate() {
            let presorted = match path.order {
                Order::Query => true,
                Order::JoinKey => self.order_by_join_key(l, path.swapped),
                Order::None => false,
            };
            let upper_uses = if l.agg.is_some() {
                i == cheapest || i == pathlist.len()
            } else if l.sort.is_some() {
                i == cheapest || presorted
            } else {
                true
            };
            if !upper_uses {
                continue;
            }
            let spec = (path.method, path.presorted);
            let (_, planned) = self.build_as(path.swapped, path.unique, spec, presorted, l, &mut servers.to_vec())?;
            let est = self.estimate(&planned.plan);
            let order = if presorted { Order::Query } else { Order::None };
            add_path(&mut finals, JoinPath { est, order, ..*path }, consider_startup, false);
        }
        // Never empty (the cheapest path always reaches the final level), but a panic
        // must not cross the wasm boundary.
        let best = *finals
            .get(set_cheapest(&finals))
            .ok_or_else(|| FrontError::at("internal error: no path for the join", self.at))?;
        let presorted = best.order == Order::Query;
        Ok(self.build_as(best.swapped, best.unique, (best.method, best.presorted), presorted, l, servers)?.1)
    }

    /// A semi join's other paths (`JOIN_UNIQUE_INNER`, `JOIN_UNIQUE_OUTER`): an inner
    /// join with the subquery's relation made unique on the key (`create_unique_path`)
    /// as the inner side, or as the outer side, by each method (no Materialize over a
    /// unique inner side: `match_unsorted_outer`). Only when that relation returns
    /// its key alone (its other columns feed nothing above).
    fn add_unique_paths(
        &self,
        l: &Layers,
        pathlist: &mut Vec<JoinPath>,
        consider_startup: bool,
        servers: &[String],
    ) -> Result<(), FrontError> {
        let sub = &self.sides[1];
        if self.join_type != JoinType::Semi || sub.used != [sub.key] {
            return Ok(());
        }
        for swapped in [false, true] {
            for method in Method::tried(self.coord, JoinType::Inner) {
                if !swapped && method == (Method::NestLoop { material: true }) {
                    continue;
                }
                let order = if method.sorted(JoinType::Inner) { Order::JoinKey } else { Order::None };
                let mut variants = vec![(Presorted::NONE, order)];
                // The outer relation's path ordered for the query (as in `choose`).
                if !swapped && self.side_order(l, true).is_some() {
                    match method {
                        Method::NestLoop { .. } => {
                            variants.push((Presorted { outer: true, inner: false, ..Presorted::NONE }, Order::Query))
                        }
                        Method::Merge if self.order_by_join_key(l, false) => {
                            variants.push((Presorted { outer: true, inner: false, ..Presorted::NONE }, Order::JoinKey))
                        }
                        _ => {}
                    }
                }
                for (presorted, order) in variants {
                    let spec = (method, presorted);
                    let (est, _) = self.build_as(swapped, true, spec, false, l, &mut servers.to_vec())?;
                    let path = JoinPath { swapped, unique: true, method, presorted, est, order };
                    add_path(pathlist, path, consider_startup, self.order_by_join_key(l, swapped));
                }
            }
        }
        Ok(())
    }

    /// The query's ORDER BY over one side's output (`first`: FROM's first relation),
    /// when every key is a column of that side (the side's path ordered for the
    /// query's pathkeys, as postgres_fdw's remote ORDER BY or a Merge Append of
    /// ordered partitions gives it); None otherwise, or for a side without a
    /// partition or table that can be ordered so (a plain local table: its index
    /// order is offered for a Merge Join's key only, `Join::build`).
    fn side_order(&self, l: &Layers, first: bool) -> Option<Vec<SortKey>> {
        let (side, other) = if first { (&self.sides[0], &self.sides[1]) } else { (&self.sides[1], &self.sides[0]) };
        if l.agg.is_some() || !matches!(side.rel.kind, RelKind::Foreign { .. } | RelKind::Partitioned { .. }) {
            return None;
        }
        let width = side.rel.columns.len();
        l.sort
            .as_ref()?
            .iter()
            .map(|k| {
                let Expr::Col(c) = k.expr else { return None };
                // An inner join's keys are one equivalence class: the other side's
                // key orders as this side's (a semi join's too: its clause is no
                // outer join's).
                let own = if c >= side.first && c < side.first + width {
                    c - side.first
                } else if matches!(self.join_type, JoinType::Inner | JoinType::Semi) && c == other.first + other.key {
                    side.key
                } else {
                    return None;
                };
                let pos = side.used.iter().position(|&u| u == own)?;
                Some(SortKey { expr: Expr::Col(pos), desc: k.desc })
            })
            .collect()
    }

    /// The query's pathkeys ([`query_pathkeys`], over the join's numbering) as each
    /// side has them, by its name, for `Planner::side` (`get_useful_pathkeys_for_relation`
    /// for each base relation: every key must have a member of the side's, its own
    /// column or, for an inner or semi join, its join key when the key is the other
    /// side's, one equivalence class). A side lacking one is not listed (no sorted
    /// path); a key equated to a constant on its side is redundant.
    fn side_pathkeys(&self, l: &Layers) -> Vec<(String, Vec<SortKey>)> {
        let [a, b] = &self.sides;
        // Each side's conjuncts in the join's numbering.
        let joined = |s: &JoinSide| s.conjuncts.iter().map(|e| e.map_cols(&|i| i + s.first)).collect::<Vec<_>>();
        let conjuncts: Vec<Expr> = joined(a).into_iter().chain(joined(b)).collect();
        let Some(keys) = query_pathkeys(l, &conjuncts) else { return vec![] };
        let ec = matches!(self.join_type, JoinType::Inner | JoinType::Semi) && !self.clauseless;
        let mut out = vec![];
        for (s, o) in [(a, b), (b, a)] {
            let width = s.rel.columns.len();
            let own: Option<Vec<SortKey>> = keys
                .iter()
                .map(|k| {
                    let Expr::Col(c) = k.expr else { return None };
                    let col = if c >= s.first && c < s.first + width {
                        c - s.first
                    } else if ec && c == o.first + o.key {
                        s.key
                    } else {
                        return None;
                    };
                    Some(SortKey { expr: Expr::Col(col), desc: k.desc })
                })
                .collect();
            if let Some(own) = own {
                out.push((s.name.to_string(), own));
            }
        }
        out
    }

    /// Is the query's ORDER BY one of the join keys, ascending (NULLs last), so that
    /// a Merge Join's output needs no Sort (`pathkeys_contained_in` of the query's
    /// pathkeys in the join's: both keys are members of the clause's equivalence
    /// class)?
    ///
    /// An outer join's keys are no equivalence class: only the outer side's key
    /// orders its output.
    fn order_by_join_key(&self, l: &Layers, swapped: bool) -> bool {
        let [a, b] = &self.sides;
        let (o, i) = if swapped { (b, a) } else { (a, b) };
        match l.sort.as_deref() {
            Some([SortKey { expr: Expr::Col(c), desc: false }]) if l.agg.is_none() => {
                *c == o.first + o.key || (self.join_type == JoinType::Inner && *c == i.first + i.key)
            }
            _ => false,
        }
    }

    /// use_remote_estimate: costs the relations' paths postgres_fdw prices by a remote
    /// EXPLAIN before any join is built, in PostgreSQL 15's order (`set_base_rel_sizes`
    /// then `set_base_rel_pathlists`, FROM order): each side's scan, then per side its
    /// scan ordered by the query's ORDER BY when that is the side's to sort by, its
    /// scan ordered by the join key (`get_useful_pathkeys_for_relation`: the query's
    /// pathkeys, then the join's equivalence class unless it is the query's) and its
    /// scan parameterized by the join clause, for a side the clause can move into (not
    /// an outer join's outer side: `join_clause_is_movable_to`). Costing asks the
    /// questions (`super::remote_estimate`); the join search then finds them answered.
    /// A join postgres_fdw pushes down asks its own when the join search costs it
    /// (`Join::choose`: `postgresGetForeignJoinPaths` runs after the relations').
    fn ask_remote_estimates(&self, l: &Layers, servers: &[String]) -> Result<(), FrontError> {
        let p0 = Planner::new(self.coord, vec![]);
        let remote = |s: &JoinSide| {
            let leaves = p0.leaves(s.rel, s.conjuncts);
            leaves.iter().any(|r| super::remote_estimate::uses_remote_estimate(self.coord, &r.name).is_some())
        };
        if !self.sides.iter().any(remote) {
            return Ok(());
        }
        let mut p = Planner::new(self.coord, servers.to_vec());
        for s in &self.sides {
            self.estimate(&p.side(s.rel, s.name, s.conjuncts, &s.used, None, self.at)?);
        }
        if self.clauseless {
            return Ok(());
        }
        let movable = match self.join_type {
            JoinType::Left | JoinType::Anti => [false, true],
            JoinType::Right => [true, false],
            JoinType::Full => [false, false],
            _ => [true, true],
        };
        for (k, s) in self.sides.iter().enumerate() {
            // The query's ORDER BY first, when it is the relation's to sort by
            // (`get_useful_pathkeys_for_relation`'s query_pathkeys); then the join
            // key's, unless the ORDER BY is that key alone (its equivalence class was
            // the query's).
            let query_order = self.side_order(l, k == 0);
            let key = s.key_output();
            let same_class = match l.sort.as_deref() {
                Some([only]) => {
                    query_order.as_deref().is_some_and(|o| matches!(o, [q] if q.expr == key))
                        || self.sort_key_is_join_key(only)
                }
                _ => false,
            };
            if let Some(order) = &query_order {
                self.estimate(&p.side(s.rel, s.name, s.conjuncts, &s.used, Some(order), self.at)?);
            }
            if same_class {
                // (The parameterized path below is still asked.)
            } else {
                let order = vec![SortKey { expr: key, desc: false }];
                self.estimate(&p.side(s.rel, s.name, s.conjuncts, &s.used, Some(&order), self.at)?);
            }
            let o = &self.sides[1 - k];
            if !movable[k] || matches!(s.rel.kind, RelKind::Table(_)) {
                continue;
            }
            // As `build_as` parameterizes it, `swapped` when the first side is inner.
            let inner_first = self.param_clause_inner_first(k);
            let mut conjuncts = s.conjuncts.to_vec();
            conjuncts.push(super::paramfdw::param_clause(s.key, o.rel.columns[o.key].ty, inner_first));
            let mut plan = p.side(s.rel, s.name, &conjuncts, &s.used, None, self.at)?;
            super::paramfdw::param_quals_last(&mut plan);
            self.estimate(&plan);
        }
        Ok(())
    }

    /// Has the outer side (FROM's second relation when `swapped`) a presorted index
    /// path for a Merge Join: a local table with an index on its key? Or a path
    /// ordered by its key remotely ([`Self::remote_ordered`])?
    fn outer_index_path(&self, swapped: bool, l: &Layers) -> bool {
        let o = &self.sides[swapped as usize];
        self.local_leaf(o) == Some(true)
            || (self.remote_ordered(o) && !self.key_class_ordered_desc(l, o))
            || self.partitions_key_ordered(o, l)
    }

    /// A Merge Join's inner side `i` in its key's order (`partitions_key_ordered`):
    /// its path in that order (the presorted leaves by their own paths, the others
    /// sorted) or a Sort over its cheapest path, whichever costs less (as
    /// `generate_mergejoin_paths` keeps the cheaper of the two joins).
    fn inner_key_ordered<'p>(
        &self,
        p: &mut Planner<'p>,
        i: &JoinSide<'p>,
        l: &Layers,
        swapped: bool,
    ) -> Result<Plan, FrontError> {
        let keys = vec![SortKey { expr: i.key_output(), desc: false }];
        let sorted = Plan::Sort {
            child: Box::new(p.side(i.rel, i.name, i.conjuncts, &i.used, None, self.at)?),
            keys: keys.clone(),
        };
        (p.force_index, p.merge_order) = (true, !self.order_by_join_key(l, swapped));
        let ordered = p.side(i.rel, i.name, i.conjuncts, &i.used, Some(&keys), self.at);
        (p.force_index, p.merge_order) = (false, false);
        let ordered = ordered?;
        Ok(match self.estimate(&ordered).total < self.estimate(&sorted).total {
            true => ordered,
            false => sorted,
        })
    }

    /// Has the side, a partitioned table of several leaves, a path ordered by its join
    /// key from `generate_orderedappend_paths`? It has when some leaf has a path in
    /// that order of its own (the key's pathkeys are then among `all_child_pathkeys`):
    /// a local partition with an index on the key (`build_index_paths` keeps its
    /// order, useful for merging), a foreign one with `use_remote_estimate` (its
    /// remotely sorted path). The leaves without one are sorted: an ordered Append of
    /// them when the partitions are in the key's bound order, else a Merge Append
    /// (`Planner::side`).
    fn partitions_key_ordered(&self, s: &JoinSide, l: &Layers) -> bool {
        if !matches!(s.rel.kind, RelKind::Partitioned { .. }) {
            return false;
        }
        let p = Planner::new(self.coord, vec![]);
        let leaves = p.leaves(s.rel, s.conjuncts);
        let presorted = |r: &&Relation| match &r.kind {
            RelKind::Table(t) => t.index_on(s.key).is_some(),
            RelKind::Foreign { .. } => {
                super::remote_estimate::uses_remote_estimate(self.coord, &r.name).is_some()
                    && !self.key_class_ordered_desc(l, s)
            }
            _ => false,
        };
        leaves.len() > 1 && leaves.iter().any(presorted)
    }

    /// Has the side a path ordered by its join key on its servers: every leaf a
    /// foreign table with `use_remote_estimate`, whose ordered scans postgres_fdw
    /// builds for the join's equivalence class (`get_useful_pathkeys_for_relation`),
    /// under a Merge Append when there are several?
    fn remote_ordered(&self, s: &JoinSide) -> bool {
        let p = Planner::new(self.coord, vec![]);
        let leaves = p.leaves(s.rel, s.conjuncts);
        let remote = |r: &&Relation| super::remote_estimate::uses_remote_estimate(self.coord, &r.name).is_some();
        !matches!(s.rel.kind, RelKind::Table(_)) && !leaves.is_empty() && leaves.iter().all(remote)
    }

    /// Does the side scan one local table (the relation itself, or the one partition
    /// pruning leaves: an appendrel of one child has that child's paths), and has it
    /// an index on the side's key? None: not one local table.
    fn local_leaf(&self, s: &JoinSide) -> Option<bool> {
        let p = Planner::new(self.coord, vec![]);
        match p.leaves(s.rel, s.conjuncts).as_slice() {
            [leaf] => match &leaf.kind {
                RelKind::Table(t) => Some(t.index_on(s.key).is_some()),
                _ => None,
            },
            _ => None,
        }
    }

    /// Has the inner side (FROM's first relation when `swapped`) a parameterized index
    /// path for a Nested Loop: a local table with an index on its key?
    /// Or a foreign table, or a partitioned table of them, with `use_remote_estimate`
    /// (postgres_fdw's parameterized paths, paramfdw.rs)?
    fn inner_param_path(&self, swapped: bool) -> bool {
        let (o, i) = (&self.sides[swapped as usize], &self.sides[!swapped as usize]);
        if self.clauseless {
            return false;
        }
        if let RelKind::Table(t) = &i.rel.kind {
            return t.index_on(i.key).is_some();
        }
        let p = Planner::new(self.coord, vec![]);
        let (it, ot) = (i.rel.columns[i.key].ty, o.rel.columns[o.key].ty);
        super::paramfdw::has_param_path(self.coord, &p.leaves(i.rel, i.conjuncts), it, ot)
    }

    /// May the join be pushed to its relations' server (`foreign_join_ok`)? Both
    /// relations are foreign tables on one server and their scans, built as for a
    /// local join, combine (`super::postgres_fdw_join`).
    fn foreign_join_ok(&self, servers: &[String]) -> Result<bool, FrontError> {
        let [a, b] = &self.sides;
        let server = |r: &Relation| match &r.kind {
            RelKind::Foreign { server, .. } => Some(server.clone()),
            _ => None,
        };
        if server(a.rel).is_none() || server(a.rel) != server(b.rel) || self.clauseless {
            return Ok(false);
        }
        let mut p = Planner::new(self.coord, servers.to_vec());
        let (Ok(outer), Ok(inner)) = (
            p.side(a.rel, a.name, a.conjuncts, &a.used, None, self.at),
            p.side(b.rel, b.name, b.conjuncts, &b.used, None, self.at),
        ) else {
            return Ok(false);
        };
        let n = a.rel.columns.len() + b.rel.columns.len();
        let mut map = vec![None; n];
        for (pos, (side, c)) in a.used.iter().map(|&c| (a, c)).chain(b.used.iter().map(|&c| (b, c))).enumerate() {
            map[side.first + c] = Some(pos);
        }
        Ok(self.foreign_join(outer, inner, &map).is_ok())
    }

    /// The join as one Foreign Scan of `first` and `second` (FROM order, as their
    /// sides' scans were built); `map`: the join's numbering → their output.
    fn foreign_join(&self, first: Plan, second: Plan, map: &[Option<usize>]) -> Result<Plan, FrontError> {
        let not_pushed = || FrontError::at("internal error: the join cannot be pushed to its server", self.at);
        let (Plan::ForeignScan(fa), Plan::ForeignScan(fb)) = (&first, &second) else { return Err(not_pushed()) };
        let [a, b] = &self.sides;
        let width_a = a.used.len();
        let key_a = a.key_output();
        let key_b = match b.key_output() {
            Expr::Col(k) => Expr::Col(k + width_a),
            e => e,
        };
        let key = match self.key_b_first && self.join_type != JoinType::Inner {
            true => Expr::bin(BinOp::Eq, key_b, key_a),
            false => Expr::bin(BinOp::Eq, key_a, key_b),
        };
        // The restrictlist's order: clauses of no equivalence class, then the
        // equalities (generate_join_implied_equalities).
        let wa = a.rel.columns.len();
        let (eqs, others): (Vec<&Expr>, Vec<&Expr>) = self.rest.iter().partition(|c| join_key(c, wa).is_some());
        let mut clauses: Vec<Expr> = others.iter().map(|e| rewrite(e, map)).collect();
        clauses.push(key);
        clauses.extend(eqs.iter().map(|e| rewrite(e, map)));
        let above: Vec<Expr> = self.above.iter().map(|e| rewrite(e, map)).collect();
        let side = |scan, name| super::postgres_fdw_join::ForeignSide { scan, alias: name, rt_index: 0 };
        let (sa, sb) = (
            super::postgres_fdw_join::ForeignSide { rt_index: a.rt_index, ..side(fa, a.name) },
            super::postgres_fdw_join::ForeignSide { rt_index: b.rt_index, ..side(fb, b.name) },
        );
        super::postgres_fdw_join::foreign_join_path(sa, sb, self.join_type, &clauses, &above)
            .map(Plan::ForeignScan)
            .ok_or_else(not_pushed)
    }

    /// Does the join clause moved into side `k`'s parameterized scan name that side's
    /// column first? An inner join's clause is its equivalence class's (FROM's first
    /// relation first, unless written the other way round and `k` is the second); an
    /// outer join's is as written (`f2.a = f1.b` stays `a = $1` on f2 in a right
    /// join); a semi join's has the outer side first.
    fn param_clause_inner_first(&self, k: usize) -> bool {
        match self.join_type {
            JoinType::Semi => false,
            JoinType::Inner => self.key_b_first && k == 1,
            _ => (k == 0) != self.key_b_first,
        }
    }

    /// The query's ORDER BY is side `s`'s join key (of the class of the join key)
    /// descending: its equivalence class is the query's pathkeys', so postgres_fdw
    /// builds no scan ordered by the key ascending for a merge
    /// (`get_useful_pathkeys_for_relation` skips `query_ec`).
    fn key_class_ordered_desc(&self, l: &Layers, s: &JoinSide) -> bool {
        match l.sort.as_deref() {
            Some([k]) if k.desc => {
                matches!(k.expr, Expr::Col(c) if c == s.first + s.key) || self.sort_key_is_join_key(k)
            }
            _ => false,
        }
    }

    /// Is the query's one ORDER BY key a member of the join clause's equivalence
    /// class (an inner join's key, of either side)?
    fn sort_key_is_join_key(&self, k: &SortKey) -> bool {
        let [a, b] = &self.sides;
        let Expr::Col(c) = k.expr else { return false };
        let inner = matches!(self.join_type, JoinType::Inner | JoinType::Semi);
        inner && !self.clauseless && (c == a.first + a.key || c == b.first + b.key)
    }

    /// A LIMIT over a join pushed down under use_remote_estimate: postgres_fdw would
    /// ask the remote for the LIMIT pushed over the join (`add_foreign_final_paths`'
    /// EXPLAIN), which the sandbox does not push: refused by name.
    fn refuse_remote_limit(&self, l: &Layers) -> Result<(), FrontError> {
        let remote =
            self.sides.iter().any(|s| super::remote_estimate::uses_remote_estimate(self.coord, &s.rel.name).is_some());
        if remote && l.limit.is_some() {
            return Err(FrontError::unsupported(
                "use_remote_estimate of a join pushed down to its server under a LIMIT (postgres_fdw's EXPLAIN of the \
                 LIMIT over the join)",
                self.at,
            ));
        }
        Ok(())
    }

    /// Has the pushed-down join a path ordered by the query's ORDER BY on its server
    /// (`add_paths_with_pathkeys_for_rel`: the query's pathkeys are the join
    /// relation's columns)? With local estimates it costs the join's ×1.2
    /// (`DEFAULT_FDW_SORT_MULTIPLIER`), with use_remote_estimate the server's EXPLAIN
    /// of the ordered query; `add_path` weighs it against the others.
    fn remote_ordered_join(&self, l: &Layers) -> bool {
        let Some(keys) = l.sort.as_ref() else { return false };
        let n = self.sides[0].rel.columns.len() + self.sides[1].rel.columns.len();
        l.agg.is_none() && keys.iter().all(|k| matches!(k.expr, Expr::Col(c) if c < n))
    }

    /// The pushed-down join's scan with the query's ORDER BY (over the join's
    /// numbering; `map` → the scan's output) in its remote query, over the remote
    /// tables' columns.
    fn with_remote_order(&self, scan: Plan, l: &Layers, map: &[Option<usize>]) -> Result<Plan, FrontError> {
        let not_ordered = || FrontError::at("internal error: the pushed-down join cannot be ordered remotely", self.at);
        let Plan::ForeignScan(mut f) = scan else { return Err(not_ordered()) };
        let mut order_by = vec![];
        for k in l.sort.as_deref().unwrap_or_default() {
            let Expr::Col(c) = k.expr else { return Err(not_ordered()) };
            let pos = map.get(c).copied().flatten().ok_or_else(not_ordered)?;
            let Some(crate::plan::RemoteTarget::Col(t)) = f.remote.targets.get(pos) else { return Err(not_ordered()) };
            order_by.push(SortKey { expr: Expr::Col(*t), desc: k.desc });
        }
        f.remote.order_by = order_by;
        Ok(Plan::ForeignScan(f))
    }

    /// The join's type with the outer side this order gives it.
    fn node_join_type(&self, swapped: bool) -> JoinType {
        if swapped {
            self.join_type.commuted()
        } else {
            self.join_type
        }
    }

    /// `cost_plan`'s estimate of a plan's top node, with the coordinator's settings.
    fn estimate(&self, plan: &Plan) -> Estimate {
        let params = CostParams::from_settings(&|n| self.coord.setting(n).map(str::to_string));
        cost_plan(plan, self.coord, &params)[0]
    }

    /// The query planned with the first relation of FROM outer (or, `swapped`, the
    /// second), each side scanned as a query of its own would be (partitions, pruning,
    /// its conditions pushed into its scans); and the join node's estimate. The output
    /// columns are the query's either way: a swapped join returns the outer side's
    /// columns first, and the select list above it puts them back in the query's order.
    /// `method` is the join's; `presorted`: the join's output is in ORDER BY's order
    /// already, so no Sort goes above it.
    /// `presorted`: which sides are their paths ordered for the query's ORDER BY
    /// (`side_order`).
    fn build(
        &self,
        swapped: bool,
        spec: (Method, Presorted),
        presorted: bool,
        l: &Layers,
        servers: &mut Vec<String>,
    ) -> Result<(Estimate, Planned), FrontError> {
        self.build_as(swapped, false, spec, presorted, l, servers)
    }

    /// [`Self::build`]; `unique`: a semi join planned as an inner join over the
    /// subquery's relation made unique (`JOIN_UNIQUE_INNER`, or `JOIN_UNIQUE_OUTER`
    /// when `swapped`).
    fn build_as(
        &self,
        swapped: bool,
        unique: bool,
        (method, presorted_sides): (Method, Presorted),
        presorted: bool,
        l: &Layers,
        servers: &mut Vec<String>,
    ) -> Result<(Estimate, Planned), FrontError> {
        let [first, second] = &self.sides;
        let (o, i) = if swapped { (second, first) } else { (first, second) };
        let order = |sorted: bool, first: bool| if sorted { self.side_order(l, first) } else { None };
        let (mut outer_order, mut inner_order) =
            (order(presorted_sides.outer, !swapped), order(presorted_sides.inner, swapped));
        // A Merge Join over a presorted outer side (match_unsorted_outer's
        // generate_mergejoin_paths): a local inner side ordered by its key, a presorted
        // index path or a Sort, whichever costs less; its outer side by its index when
        // the path says so (indxpath.rs). Over an unsorted outer side both are sorted
        // (sort_inner_and_outer: the cheapest paths, then a Sort).
        let mut presorted_sides = presorted_sides;
        let by_key =
            |s: &JoinSide| self.local_leaf(s).is_some().then(|| vec![SortKey { expr: s.key_output(), desc: false }]);
        // The outer side's order is the merge key's, not the query's: its foreign
        // leaves are sorted locally unless remotely estimated (`Planner::merge_order`).
        let mut outer_merge_order = false;
        if method == Method::Merge && presorted_sides.outer_index && outer_order.is_none() {
            let remote = (self.remote_ordered(o) && !self.key_class_ordered_desc(l, o)
                || self.partitions_key_ordered(o, l))
            .then(|| vec![SortKey { expr: o.key_output(), desc: false }]);
            (outer_order, presorted_sides.outer) = (by_key(o).or(remote), true);
            outer_merge_order = !self.order_by_join_key(l, swapped);
        }
        // (Not a side to be made unique: its Sort goes above the unique-ifying step.)
        if method == Method::Merge && presorted_sides.outer && !unique && inner_order.is_none() && by_key(i).is_some() {
            (inner_order, presorted_sides.inner) = (by_key(i), true);
        }
        // A partitioned inner side with a path in the merge key's order (an ordered
        // Append or a Merge Append, `partitions_key_ordered`): `generate_mergejoin_paths`
        // tries it beside a Sort of the cheapest path, and the cheaper join is kept.
        let inner_key_path = method == Method::Merge
            && presorted_sides.outer
            && !unique
            && inner_order.is_none()
            && !presorted_sides.inner_param
            && self.partitions_key_ordered(i, l);
        let mut p = Planner::new(self.coord, std::mem::take(servers));
        // A pushed-down join is deparsed from its relations, not their paths.
        if method != Method::Foreign {
            p.side_pathkeys = self.side_pathkeys(l);
        }
        p.force_index = presorted_sides.outer_index;
        p.merge_order = outer_merge_order;
        let outer = p.side(o.rel, o.name, o.conjuncts, &o.used, outer_order.as_ref(), self.at);
        (p.force_index, p.merge_order) = (false, false);
        let inner_key_path = match inner_key_path {
            true => Some(self.inner_key_ordered(&mut p, i, l, swapped)?),
            false => None,
        };
        if inner_key_path.is_some() {
            presorted_sides.inner = true;
        }
        let inner = match presorted_sides.inner_param {
            // Its key compared with the outer row's, `o.name.key` (indxpath.rs).
            true => {
                let outer_key = format!(
                    "{}.{}",
                    crate::sql_text::quote_identifier(o.name),
                    crate::sql_text::quote_identifier(&o.rel.columns[o.key].name)
                );
                match i.rel.kind {
                    RelKind::Table(_) if presorted_sides.memoize => {
                        Ok(Plan::Memoize { child: Box::new(p.param_side(i, outer_key.clone())), cache_key: outer_key })
                    }
                    RelKind::Table(_) => Ok(p.param_side(i, outer_key)),
                    // The join clause moved into its foreign scans (paramfdw.rs).
                    _ => {
                        let mut conjuncts = i.conjuncts.to_vec();
                        // A semi join's clause is an equivalence class's too (outer first).
                        let inner_first = self.param_clause_inner_first(!swapped as usize);
                        conjuncts.push(super::paramfdw::param_clause(i.key, o.rel.columns[o.key].ty, inner_first));
                        p.side(i.rel, i.name, &conjuncts, &i.used, None, self.at).map(|mut plan| {
                            super::paramfdw::param_quals_last(&mut plan);
                            plan
                        })
                    }
                }
            }
            false => match inner_key_path {
                Some(plan) => Ok(plan),
                None => p.side(i.rel, i.name, i.conjuncts, &i.used, inner_order.as_ref(), self.at),
            },
        };
        *servers = p.servers;
        let (mut outer, mut inner) = (outer?, inner?);
        let node_jt = match (unique, swapped) {
            (false, _) => self.node_join_type(swapped),
            (true, false) => JoinType::UniqueInner,
            (true, true) => JoinType::UniqueOuter,
        };
        if unique {
            let sub = if swapped { &mut outer } else { &mut inner };
            let input = std::mem::replace(sub, Plan::EmptyResult { columns: vec![], rels: vec![], joined: false });
            *sub = super::prepjointree::create_unique_path(self.coord, input);
        }
        // Join numbering → the join's output (the outer's used columns, then the inner's).
        let n = first.rel.columns.len() + second.rel.columns.len();
        let mut map = vec![None; n];
        for (pos, (side, c)) in o.used.iter().map(|&c| (o, c)).chain(i.used.iter().map(|&c| (i, c))).enumerate() {
            map[side.first + c] = Some(pos);
        }
        // A Nested Loop's Join Filter: an inner join's as its equivalence class
        // builds it (FROM's first relation first), an outer join's as written.
        let inner_first = swapped != self.key_b_first;
        let jt = (method, node_jt, presorted_sides);
        // A Hash Join's Hash Cond holds every equality between the two sides
        // (`hash_inner_and_outer`'s hashclauses), each outer side first; a Merge Join
        // here merges on one (the others are its Join Filter).
        let wa = first.rel.columns.len();
        let (more, rest): (Vec<&Expr>, Vec<&Expr>) =
            self.rest.iter().partition(|c| method == Method::Hash && join_key(c, wa).is_some());
        let outer_width = o.used.len();
        let more_keys = more
            .iter()
            .filter_map(|c| join_key(c, wa))
            .filter_map(|(ca, cb, _)| {
                let (co, ci) = if swapped { (cb, ca) } else { (ca, cb) };
                Some((Expr::Col(map[co]?), Expr::Col(map[ci]?.checked_sub(outer_width)?)))
            })
            .collect();
        let keys = match self.clauseless {
            true => (crate::plan::clauseless_join_keys(), more_keys),
            false => ((o.key_output(), i.key_output()), more_keys),
        };
        let mut plan = match method {
            Method::Foreign => {
                // The join relation returns only what is read above it (its reltarget).
                let scan = self.foreign_join(outer, inner, &map)?;
                let above_join = columns_in_order(l, n);
                let (scan, kept) = super::postgres_fdw_join::keep_outputs(scan, &map, &above_join);
                map = kept;
                match presorted_sides.remote_order {
                    true => self.with_remote_order(scan, l, &map)?,
                    false => scan,
                }
            }
            _ => join_node(self.coord, jt, (outer, inner), keys, inner_first, None),
        };
        // The join's other conditions are evaluated in it (a Join Filter): its path's
        // estimate includes them (a foreign join's are in its remote ON).
        let rest = rest.into_iter().filter(|_| method != Method::Foreign);
        if let Some(f) = rest.map(|e| rewrite(e, &map)).reduce(|x, y| Expr::bin(BinOp::And, x, y)) {
            plan = Plan::Result { child: Box::new(plan), filter: Some(f), targets: None };
        }
        let join_estimate = self.estimate(&plan);
        // An outer join's WHERE conditions on its nullable side: a Filter above it (a
        // foreign join's remote WHERE).
        let above = self.above.iter().filter(|_| method != Method::Foreign);
        if let Some(f) = above.map(|e| rewrite(e, &map)).reduce(|x, y| Expr::bin(BinOp::And, x, y)) {
            plan = Plan::Result { child: Box::new(plan), filter: Some(f), targets: None };
        }
        // A semi or anti join (however planned) returns what is read above it, no more
        // (its target list: the subquery's key is read by nothing above).
        let (plan, map, projected) = super::prepjointree::semi_join_target(
            (plan, map),
            node_jt,
            l.agg.is_some() || l.targets.is_some(),
            &used_columns(&Layers { filter: None, ..l.clone_layers() }, n),
            &|c| if c < wa { first.rel.columns[c].name.clone() } else { second.rel.columns[c - wa].name.clone() },
        );
        let order_keys = order_keys_of(l);
        let planned = |plan| Planned {
            plan,
            columns: self.columns.to_vec(),
            servers: vec![],
            order_key: order_keys.first().copied(),
            order_keys: order_keys.clone(),
        };
        if l.agg.is_some() {
            let plan = match method {
                // postgres_fdw 15 pushes no DISTINCT: made distinct above the join.
                _ if distinct_join::is_distinct(l) => distinct_join::distinct_over(self.coord, plan, l, &map),
                Method::Foreign => {
                    let agg = l.agg.as_ref().map(|(_, keys, aggs)| {
                        let keys: Vec<Expr> = keys.iter().map(|e| rewrite(e, &map)).collect();
                        let aggs: Vec<AggCall> = aggs
                            .iter()
                            .map(|a| AggCall {
                                func: a.func,
                                arg: a.arg.as_ref().map(|e| rewrite(e, &map)),
                                distinct: a.distinct,
                            })
                            .collect();
                        (keys, aggs)
                    });
                    let (keys, aggs) = agg.unwrap_or_default();
                    super::postgres_fdw_join::push_aggregate(plan, &keys, &aggs, l.having.as_ref())
                        .unwrap_or_else(|plan| agg_over_join(plan, l, &map))
                }
                _ => agg_over_join(plan, l, &map),
            };
            return Ok((join_estimate, planned(finish(plan, l.sort.clone(), l.targets.clone(), l.limit))));
        }
        let sort = l
            .sort
            .as_ref()
            .filter(|_| !presorted)
            .map(|keys| keys.iter().map(|k| SortKey { expr: rewrite(&k.expr, &map), desc: k.desc }).collect());
        let scan_cols =
            (method == Method::Foreign).then(|| plan.output_columns().into_iter().map(|c| c.name).collect());
        let join_cols: Vec<String> = projected.or(scan_cols).unwrap_or_else(|| {
            o.used
                .iter()
                .map(|&c| o.rel.columns[c].name.clone())
                .chain(i.used.iter().map(|&c| i.rel.columns[c].name.clone()))
                .collect()
        });
        // No select list: every column, in FROM order; swapped, the join's order is not
        // that one, so the select list is written out.
        let every_column = || {
            (0..n).map(|c| (Expr::Col(c), self.columns.get(c).map_or_else(String::new, |k| k.name.clone()))).collect()
        };
        let targets = l.targets.clone().or_else(|| swapped.then(every_column));
        let targets: Option<Vec<(Expr, String)>> = targets
            .map(|t| t.iter().map(|(e, name)| (rewrite(e, &map), name.clone())).collect())
            .filter(|t: &Vec<(Expr, String)>| {
                !(t.len() == join_cols.len()
                    && t.iter().enumerate().all(|(i, (e, name))| *e == Expr::Col(i) && *name == join_cols[i]))
            });
        Ok((join_estimate, planned(finish(plan, sort, targets, l.limit))))
    }
}

/// One path of the join relation: which side is outer, the method, the estimate
/// (of the join, or of the whole plan above it at the final level), and whether its
/// output is ordered by the join key.
#[derive(Clone, Copy, Debug)]
struct JoinPath {
    swapped: bool,
    /// A semi join planned as an inner join over the subquery's relation made
    /// unique (`Join::add_unique_paths`).
    unique: bool,
    method: Method,
    /// Which sides are ordered for the query's ORDER BY.
    presorted: Presorted,
    est: Estimate,
    order: Order,
}

/// Which sides of a join are their paths ordered for the query's ORDER BY.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Presorted {
    outer: bool,
    inner: bool,
    /// A Merge Join's outer side is a local table read through its index in the
    /// merge key's order (`match_unsorted_outer` over that presorted index path).
    outer_index: bool,
    /// A Nested Loop's inner side is a local table's Index Scan parameterized by the
    /// join key (`match_unsorted_outer` over the inner's parameterized path).
    inner_param: bool,
    /// That parameterized inner side under a Memoize (`get_memoize_path`).
    memoize: bool,
    /// A pushed-down join's Foreign Scan with the query's ORDER BY in its remote
    /// query (`add_paths_with_pathkeys_for_rel` on the join relation).
    remote_order: bool,
}

impl Presorted {
    const NONE: Presorted = Presorted {
        outer: false,
        inner: false,
        outer_index: false,
        inner_param: false,
        memoize: false,
        remote_order: false,
    };
}

/// A path's ordering (its pathkeys), as far as the sandbox tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    None,
    /// By the join key, ascending (a Merge Join's).
    JoinKey,
    /// The query's ORDER BY (a Nested Loop over an outer side ordered so; at the
    /// final level, any plan that needs no Sort).
    Query,
}

/// `add_path`: `new` joins the pathlist unless a path there is as good on cost
/// (fuzzily) and ordering; the paths it beats so leave it. The list is kept in order
/// of total cost, a new path after those that cost the same.
/// `same_orders`: the query's ORDER BY is the join key (the two orderings are one).
fn add_path(pathlist: &mut Vec<JoinPath>, new: JoinPath, consider_startup: bool, same_orders: bool) {
    let mut accept_new = true;
    let mut i = 0;
    while i < pathlist.len() {
        let old = pathlist[i];
        let remove_old = match add_path_keeps_ordered(&new, &old, consider_startup, same_orders) {
            Kept::Both => false,
            Kept::New => true,
            Kept::Old => {
                accept_new = false;
                false
            }
        };
        if remove_old {
            pathlist.remove(i);
        } else {
            i += 1;
        }
        if !accept_new {
            return;
        }
    }
    let at = pathlist.iter().position(|p| new.est.total < p.est.total).unwrap_or(pathlist.len());
    pathlist.insert(at, new);
}

/// `add_path`'s verdict between two paths that may differ in ordering: the one that
/// wins on cost is kept alone unless the other is better ordered (then both are);
/// fuzzily equal on cost, the better ordered wins, and equally ordered,
/// `add_path_keeps` decides.
fn add_path_keeps_ordered(new: &JoinPath, old: &JoinPath, consider_startup: bool, same_orders: bool) -> Kept {
    // compare_pathkeys: an ordering is better than none; two different ones are
    // not comparable (both paths stay).
    let keys = match (new.order, old.order) {
        (a, b) if a == b => Costs::Equal,
        (_, Order::None) => Costs::Better1,
        (Order::None, _) => Costs::Better2,
        _ if same_orders => Costs::Equal,
        _ => return Kept::Both,
    };
    match compare_path_costs_fuzzily(&new.est, &old.est, STD_FUZZ_FACTOR, consider_startup) {
        Costs::Different => Kept::Both,
        Costs::Equal => match keys {
            Costs::Better1 => Kept::New,
            Costs::Better2 => Kept::Old,
            _ => add_path_keeps(&new.est, &old.est, consider_startup),
        },
        Costs::Better1 if keys != Costs::Better2 => Kept::New,
        Costs::Better2 if keys != Costs::Better1 => Kept::Old,
        _ => Kept::Both,
    }
}

/// `set_cheapest`: the path of least total cost, of least startup cost among equal
/// totals, the first among equals (`compare_path_costs`).
fn set_cheapest(pathlist: &[JoinPath]) -> usize {
    let mut best = 0;
    for (i, p) in pathlist.iter().enumerate().skip(1) {
        let b = &pathlist[best].est;
        if p.est.total < b.total || (p.est.total == b.total && p.est.startup < b.startup) {
            best = i;
        }
    }
    best
}

/// Which of two paths of one relation `add_path` (pathnode.c) keeps, for paths with
/// the same rows, pathkeys, parameterization and parallel safety: `old` was added first.
#[derive(Debug, PartialEq)]
enum Kept {
    Old,
    New,
    Both,
}

/// `add_path`'s decision between a new path and an old one that differ in cost only:
/// `compare_path_costs_fuzzily` with `STD_FUZZ_FACTOR` (1.01); a path fuzzily cheaper
/// in total wins unless the other is fuzzily cheaper to start and startup cost counts
/// (then both are kept); fuzzily equal in total, the fuzzily cheaper startup wins; equal
/// on both (same rows too), a comparison with a fuzz of 1.0000000001 keeps the new path
/// only if it wins that, else the old one (the first generated): within 1%, the
/// strictly cheaper still wins, and an exact tie keeps the first.
fn add_path_keeps(new: &Estimate, old: &Estimate, consider_startup: bool) -> Kept {
    match compare_path_costs_fuzzily(new, old, STD_FUZZ_FACTOR, consider_startup) {
        Costs::Better1 => Kept::New,
        Costs::Better2 => Kept::Old,
        Costs::Different => Kept::Both,
        Costs::Equal => match compare_path_costs_fuzzily(new, old, 1.0000000001, consider_startup) {
            Costs::Better1 => Kept::New,
            _ => Kept::Old,
        },
    }
}

/// pathnode.c's `STD_FUZZ_FACTOR`: costs within 1% are "the same".
const STD_FUZZ_FACTOR: f64 = 1.01;

/// `PathCostComparison`.
#[derive(Debug, PartialEq)]
enum Costs {
    /// The first path is better.
    Better1,
    Better2,
    Equal,
    /// Each is better on one of startup and total cost.
    Different,
}

/// `compare_path_costs_fuzzily`: total cost first (more likely to differ), then
/// startup cost, each "worse" only past `fuzz` times the other's. Startup cost can make
/// the worse total `Different` only when the relation considers it (a LIMIT above).
fn compare_path_costs_fuzzily(p1: &Estimate, p2: &Estimate, fuzz: f64, consider_startup: bool) -> Costs {
    if p1.total > p2.total * fuzz {
        if consider_startup && p2.startup > p1.startup * fuzz {
            return Costs::Different;
        }
        return Costs::Better2;
    }
    if p2.total > p1.total * fuzz {
        if consider_startup && p1.startup > p2.startup * fuzz {
            return Costs::Different;
        }
        return Costs::Better1;
    }
    if p1.startup > p2.startup * fuzz {
        return Costs::Better2;
    }
    if p2.startup > p1.startup * fuzz {
        return Costs::Better1;
    }
    Costs::Equal
}

/// The number of top-level AND-ed conditions of a condition as written.
/// The query's aggregate (and HAVING) over a join's plan, the group keys and
/// arguments renumbered into the join's output by `map` (as `finish` then sorts,
/// projects and limits it); the plan unchanged without one.
fn agg_over_join(plan: Plan, l: &Layers, map: &[Option<usize>]) -> Plan {
    let Some((strategy, keys, aggs)) = &l.agg else { return plan };
    if distinct_join::is_distinct(l) {
        // (Where the join's upper level does not choose by cost: a partitionwise
        // join's Append.)
        let keys: Vec<Expr> = keys.iter().map(|e| rewrite(e, map)).collect();
        return distinct_join::sorted_unique(plan, &keys);
    }
    let keys = keys.iter().map(|e| rewrite(e, map)).collect();
    let aggs = aggs
        .iter()
        .map(|a| AggCall { func: a.func, arg: a.arg.as_ref().map(|e| rewrite(e, map)), distinct: a.distinct })
        .collect();
    let plan = Plan::Agg {
        child: Box::new(plan),
        strategy: strategy.clone(),
        group_by: keys,
        aggs,
        split: crate::plan::AggSplit::Simple,
    };
    match &l.having {
        Some(h) => Plan::Result { child: Box::new(plan), filter: Some(h.clone()), targets: None },
        None => plan,
    }
}

fn ast_conjuncts(e: &ast::Expr) -> usize {
    match e {
        ast::Expr::Nested(x) => ast_conjuncts(x),
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::And, right } => ast_conjuncts(left) + ast_conjuncts(right),
        // `x BETWEEN lo AND hi` binds as `x >= lo AND x <= hi` (transformAExprBetween).
        ast::Expr::Between { negated: false, .. } => 2,
        _ => 1,
    }
}

/// A join key: `a.x = b.y` between the two relations (`wa`: the first's width), as
/// (the first's column, the second's, whether the second's was written first).
fn join_key(c: &Expr, wa: usize) -> Option<(usize, usize, bool)> {
    let Expr::Bin(BinOp::Eq, x, y) = c else { return None };
    let (Expr::Col(i), Expr::Col(j)) = (x.as_ref(), y.as_ref()) else { return None };
    match (*i < wa, *j < wa) {
        (true, false) => Some((*i, *j, false)),
        (false, true) => Some((*j, *i, true)),
        _ => None,
    }
}

/// Is `c` an equality whose two sides each read one relation of the two, one side
/// not a plain column (a join key PostgreSQL takes as an expression)? `wa`: the
/// first relation's width, `n`: both relations'.
fn expression_join_key(c: &Expr, wa: usize, n: usize) -> bool {
    let Expr::Bin(BinOp::Eq, x, y) = c else { return false };
    let reads = |e: &Expr| {
        let cols = columns_of(e, n);
        match (cols.is_empty(), cols.iter().all(|&c| c < wa), cols.iter().all(|&c| c >= wa)) {
            (true, ..) => None,
            (false, true, _) => Some(0),
            (false, _, true) => Some(1),
            _ => None,
        }
    };
    let plain = matches!((x.as_ref(), y.as_ref()), (Expr::Col(_), Expr::Col(_)));
    matches!((reads(x), reads(y)), (Some(a), Some(b)) if a != b) && !plain
}

/// `reduce_outer_joins`: a WHERE condition that cannot be true when a nullable
/// side's columns are NULL (strict: here, one that reads that side's columns and has
/// no IS [NOT] NULL, OR or function, which could accept NULLs) removes the rows that
/// side's null-extension makes, so that side is not nullable: a Left join becomes
/// an Inner one, a Full join a Left or Right one. `wa`: the first relation's width.
fn reduce_outer_join(jt: JoinType, where_conj: &[Expr], wa: usize, n: usize) -> JoinType {
    fn may_accept_null(e: &Expr) -> bool {
        match e {
            // A ScalarArrayOpExpr over a non-empty array is strict in its scalar
            // (`is_strict_saop`): NULL there makes it NULL.
            Expr::Func(crate::plan::Func::ScalarArrayOp { .. }, args) if args.len() > 1 => may_accept_null(&args[0]),
            Expr::IsNull(..) | Expr::Func(..) | Expr::Bin(BinOp::Or, ..) => true,
            Expr::Bin(_, l, r) => may_accept_null(l) || may_accept_null(r),
            Expr::Not(x) => may_accept_null(x),
            Expr::Col(_) | Expr::Const(_) | Expr::Param(..) | Expr::ExecParam(..) => false,
        }
    }
    let strict_on = |first: bool| {
        where_conj.iter().any(|c| !may_accept_null(c) && columns_of(c, n).iter().any(|&col| (col < wa) == first))
    };
    let (a_kept, b_kept) = (strict_on(true), strict_on(false));
    match jt {
        JoinType::Left if b_kept => JoinType::Inner,
        JoinType::Right if a_kept => JoinType::Inner,
        JoinType::Full => match (a_kept, b_kept) {
            (true, true) => JoinType::Inner,
            // a's rows all kept: no null-extended a, so a is preserved: a LEFT JOIN b.
            (true, false) => JoinType::Left,
            (false, true) => JoinType::Right,
            (false, false) => JoinType::Full,
        },
        jt => jt,
    }
}

/// An expression over the join's columns, moved to the inner side's numbering.
fn shift(e: &Expr, by: usize) -> Expr {
    e.map_cols(&|i| i - by)
}

/// The ORDER BY keys that are output columns (the leading ones), for comparing
/// results with ties.
fn order_keys_of(layers: &Layers) -> Vec<usize> {
    layers
        .sort
        .iter()
        .flatten()
        .map_while(|k| match (&layers.targets, &k.expr) {
            (None, Expr::Col(c)) => Some(*c),
            (Some(t), e) => t.iter().position(|(x, _)| x == e),
            _ => None,
        })
        .collect()
}

/// A set operation (`UNION [ALL]`, `INTERSECT [ALL]`, `EXCEPT [ALL]`), with its
/// ORDER BY / LIMIT over the whole: planned as PostgreSQL's `prepunion.c` does
/// (`super::prepunion`).
fn plan_union(
    coord: &Node,
    q: &ast::Query,
    text: &str,
    servers: &mut Vec<String>,
    depth: usize,
) -> Result<Planned, FrontError> {
    super::prepunion::plan_set_operations(coord, q, text, servers, depth)
}

/// The append relation of UNION ALL's branches: a branch that is a dummy relation (a
/// constant-false WHERE) is left out, as `set_append_rel_size` skips dummy children,
/// and a lone member is the plan itself (setrefs.c removes a one-child Append, so that
/// member is not async). With every branch dummy, one dummy Result stands for them.
pub(super) fn live_members(children: Vec<Plan>) -> Plan {
    let (dummy, mut live): (Vec<Plan>, Vec<Plan>) =
        children.into_iter().partition(|c| matches!(c, Plan::EmptyResult { .. }));
    match (live.len(), dummy.into_iter().next()) {
        (0, Some(d)) => d,
        (1, _) => live.pop().expect("one member"),
        _ => Plan::Append { children: live, prune: None, ordered: false },
    }
}

/// `SELECT * FROM name` with `q`'s ORDER BY / LIMIT / OFFSET: how the ordering of a
/// whole UNION is planned over it.
pub(super) fn wrapper_query(
    q: &ast::Query,
    name: &str,
    _columns: &[Column],
    at: Location,
) -> Result<ast::Query, FrontError> {
    let sql = format!("SELECT * FROM {}", crate::sql_text::quote_identifier(name));
    let parsed = sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, &sql)
        .map_err(|e| FrontError::at(format!("internal error: {e}"), at))?;
    let Some(ast::Statement::Query(mut wrapper)) = parsed.into_iter().next() else {
        return Err(FrontError::at("internal error: wrapper query", at));
    };
    wrapper.order_by = q.order_by.clone();
    wrapper.limit = q.limit.clone();
    wrapper.offset = q.offset.clone();
    wrapper.fetch = q.fetch.clone();
    Ok(*wrapper)
}

/// A query whose FROM is a planned subquery (`FROM (SELECT …) name`, or a UNION's
/// ordering): the outer query is planned over a relation `name` with the subquery's
/// columns, whose scan is then the subquery's plan. Nothing is pushed into the
/// subquery (PostgreSQL pushes WHERE conditions into it; the rows are the same).
pub(super) fn plan_over(q: &ast::Query, text: &str, name: &str, sub: Planned) -> Result<Planned, FrontError> {
    plan_over_rel(q, text, name, sub, false)
}

/// `plan_over`; `appendrel`: the subquery is a UNION ALL append relation
/// (`plan_over_appendrel`).
fn plan_over_rel(q: &ast::Query, text: &str, name: &str, sub: Planned, appendrel: bool) -> Result<Planned, FrontError> {
    let at = query_location(q);
    let mut outer = q.clone();
    if let SetExpr::Select(s) = outer.body.as_mut() {
        if let Some(from) = s.from.first_mut() {
            if matches!(from.relation, TableFactor::Derived { .. } | TableFactor::Table { args: Some(_), .. }) {
                let w = wrapper_query(q, name, &sub.columns, at)?;
                if let SetExpr::Select(ws) = w.body.as_ref() {
                    from.relation = ws.from[0].relation.clone();
                }
            }
        }
    }
    let mut catalog = Catalog::default();
    catalog.add(Table::new(name, sub.columns.clone()));
    let (logical, columns) = crate::shard_sql::plan_select(&outer, text, &catalog).map_err(|e| sql_error(e, text))?;
    let l = peel(logical).map_err(|m| FrontError::at(format!("internal error: {m}"), at))?;
    let order_keys = order_keys_of(&l);
    let mut plan = sub.plan;
    if appendrel && reads_no_column(&l, sub.columns.len()) {
        if let Some(stripped) = without_outputs(&plan) {
            plan = stripped;
        }
    }
    if let Some(f) = l.filter {
        plan = Plan::Result { child: Box::new(plan), filter: Some(f), targets: None };
    }
    if let Some((strategy, group_by, aggs)) = l.agg {
        plan = Plan::Agg { child: Box::new(plan), strategy, group_by, aggs, split: crate::plan::AggSplit::Simple };
    }
    if let Some(h) = l.having {
        plan = Plan::Result { child: Box::new(plan), filter: Some(h), targets: None };
    }
    let plan = finish(plan, l.sort, l.targets, l.limit);
    Ok(Planned { plan, columns, servers: vec![], order_key: order_keys.first().copied(), order_keys })
}

/// Is `q` a UNION ALL of plain SELECTs, without ORDER BY, LIMIT or OFFSET over the
/// whole: a subquery `pull_up_simple_union_all` makes an append relation of
/// (`is_simple_union_all`, whose members' column types must also agree, which the
/// sandbox's set operations require anyway).
fn is_simple_union_all(q: &ast::Query) -> bool {
    fn all_union_all(body: &SetExpr) -> bool {
        match body {
            SetExpr::Select(_) => true,
            SetExpr::SetOperation { op: ast::SetOperator::Union, set_quantifier, left, right } => {
                matches!(set_quantifier, ast::SetQuantifier::All) && all_union_all(left) && all_union_all(right)
            }
            _ => false,
        }
    }
    matches!(q.body.as_ref(), SetExpr::SetOperation { .. })
        && all_union_all(&q.body)
        && q.order_by.is_none()
        && q.limit.is_none()
        && q.offset.is_none()
        && q.fetch.is_none()
}

/// `plan_over` for a subquery that is a UNION ALL append relation: when the outer
/// query reads none of its columns (`count(*)` over it), each member's scan returns
/// no column, as in PostgreSQL the members' reltargets hold only the attributes the
/// parent needs (`set_append_rel_size` copies the parent's, here none) and an
/// Append's members get exact target lists (`create_append_plan`'s CP_EXACT_TLIST):
/// postgres_fdw's `SELECT NULL FROM …`, a Seq Scan without an Output list.
fn plan_over_appendrel(q: &ast::Query, text: &str, name: &str, sub: Planned) -> Result<Planned, FrontError> {
    plan_over_rel(q, text, name, sub, true)
}

/// Does the query over a relation of `n` columns read none of them? Only an
/// aggregation is considered (what is above it reads the aggregates' values): no
/// WHERE, and grouping keys and aggregate arguments without a column.
fn reads_no_column(l: &Layers, n: usize) -> bool {
    let Some((_, keys, aggs)) = &l.agg else { return false };
    l.filter.is_none()
        && keys.iter().all(|k| columns_of(k, n).is_empty())
        && aggs.iter().all(|a| a.arg.as_ref().is_none_or(|e| columns_of(e, n).is_empty()))
}

/// The member plans of an append relation with no output column: a plain foreign
/// scan's remote target list emptied (deparse's `SELECT NULL`), a Seq Scan's
/// columns, a projection dropped. None when a member is anything else, a scan with
/// a WHERE clause included: such a branch is no simple append member
/// (`is_safe_append_member`), PostgreSQL keeps its Subquery Scan (`*SELECT* n`,
/// over a scan returning `NULL::integer`), which the sandbox does not build; all
/// is then left as planned.
fn without_outputs(plan: &Plan) -> Option<Plan> {
    match plan {
        Plan::Append { children, prune, ordered } => Some(Plan::Append {
            children: children.iter().map(without_outputs).collect::<Option<_>>()?,
            prune: prune.clone(),
            ordered: *ordered,
        }),
        Plan::ForeignScan(f)
            if f.remote.join.is_none()
                && f.remote.row_mark.is_none()
                && f.remote.order_by.is_empty()
                && f.remote.limit.is_none()
                && f.remote.offset.is_none()
                && f.remote.group_by.is_empty()
                && f.remote.quals.is_empty()
                && f.remote.targets.iter().all(|t| matches!(t, RemoteTarget::Col(_))) =>
        {
            let mut f = f.clone();
            f.remote.targets.clear();
            Some(Plan::ForeignScan(f))
        }
        Plan::SeqScan { table, alias, .. } => {
            Some(Plan::SeqScan { table: table.clone(), columns: vec![], alias: alias.clone() })
        }
        Plan::Result { child, filter: None, targets: Some(_) } => without_outputs(child),
        _ => None,
    }
}

pub(super) fn query_location(q: &ast::Query) -> Location {
    use sqlparser::ast::Spanned;
    q.span().start
}

/// The query's one relation and its alias. Joins, subqueries and UNION are not yet
/// planned here.
fn single_relation(q: &ast::Query, at: Location) -> Result<(String, Option<String>), FrontError> {
    let SetExpr::Select(s) = q.body.as_ref() else {
        return Err(FrontError::unsupported("UNION and other set operations on the coordinator (yet)", at));
    };
    let [from] = s.from.as_slice() else {
        return Err(FrontError::unsupported(
            if s.from.is_empty() { "SELECT without FROM as the query" } else { "several relations in FROM (joins)" },
            at,
        ));
    };
    if !from.joins.is_empty() {
        return Err(FrontError::unsupported("JOIN on the coordinator (yet)", at));
    }
    let TableFactor::Table { name, alias, args: None, .. } = &from.relation else {
        return Err(FrontError::unsupported("subqueries and functions in FROM on the coordinator (yet)", at));
    };
    let rel = relation_name(name).map_err(|m| FrontError::at(m, at))?;
    Ok((rel, alias.as_ref().map(|a| ident(&a.name))))
}

/// A shard-planner error (a character offset into `text`) at its line and column.
fn sql_error(e: crate::shard_sql::SqlError, text: &str) -> FrontError {
    let message = e.message.replace("unsupported in a shard query: ", "not supported by the sandbox: ");
    let Some(pos) = e.position else {
        return FrontError::new(message, 0, 0);
    };
    let (mut line, mut col) = (1, 1);
    for c in text.chars().take(pos.saturating_sub(1)) {
        if c == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    FrontError::new(message, line, col)
}

struct Planner<'a> {
    coord: &'a Node,
    servers: Vec<String>,
    /// The query's pseudoconstant quals (`shippable::is_pseudoconstant`): each scan
    /// is gated by them (`gate`).
    gating: Vec<Expr>,
    /// An ordered local scan takes its presorted index path, whatever a Sort costs (a
    /// Merge Join's outer side: `Join::outer_index_path`).
    force_index: bool,
    /// The order asked of a scan is a merge key's, not the query's ORDER BY: a
    /// foreign leaf has a remotely sorted path for it only with `use_remote_estimate`
    /// (postgres_fdw's `get_useful_pathkeys_for_relation` offers the join's
    /// equivalence classes only then), so without it the leaf's scan is sorted
    /// locally (`create_append_plan` / `create_merge_append_plan` put a Sort above a
    /// member whose path is not in the order).
    merge_order: bool,
    /// The query's pathkeys (`root->query_pathkeys`: the GROUP BY keys' order, else
    /// ORDER BY's) as the relation being scanned has them, over its table columns
    /// (its own column, or its member of the key's equivalence class); None when
    /// some key is none of its own. A foreign leaf's unordered scan is then its
    /// cheapest of the unsorted path and the one sorted so ([`Self::scan`]).
    scan_pathkeys: Option<Vec<SortKey>>,
    /// [`Self::scan_pathkeys`] of each relation of a join, by the name it goes by,
    /// for [`Self::side`] to take.
    side_pathkeys: Vec<(String, Vec<SortKey>)>,
    /// The query is a SELECT DISTINCT: its grouping's sorted path is a Unique.
    distinct: bool,
}

impl<'a> Planner<'a> {
    /// A planner for one query level over `servers` (the foreign servers its scans have
    /// met so far): no gating quals, scans free to take their cheapest paths.
    fn new(coord: &'a Node, servers: Vec<String>) -> Planner<'a> {
        Planner {
            coord,
            servers,
            gating: vec![],
            force_index: false,
            merge_order: false,
            scan_pathkeys: None,
            side_pathkeys: vec![],
            distinct: false,
        }
    }
}

/// A leaf partition (or the relation itself) to scan, with its EXPLAIN names.
struct Leaf<'a> {
    rel: &'a Relation,
    /// None for a plain (not partitioned) relation.
    name: Option<ScanName>,
}

impl<'a> Planner<'a> {
    fn build(&mut self, rel: &'a Relation, alias: &str, l: Layers, at: Location) -> Result<Plan, FrontError> {
        let conjuncts = l.filter.as_ref().map(split_and).unwrap_or_default();
        let mut plan = self.build_scans(rel, alias, l, at)?;
        self.run_time_pruning(rel, &conjuncts, &mut plan, at)?;
        Ok(plan)
    }

    /// make_partition_pruneinfo, for the sandbox's one case: a generic plan's
    /// conditions on a partitioned table's key that compare with parameters
    /// (`key op $n`) cannot prune at plan time; the Append over every partition gets
    /// them, and the executor prunes with their values at startup
    /// (ExecInitPartitionPruning's initial pruning steps).
    fn run_time_pruning(
        &self,
        rel: &Relation,
        conjuncts: &[Expr],
        plan: &mut Plan,
        at: Location,
    ) -> Result<(), FrontError> {
        let RelKind::Partitioned { strategy, key, .. } = &rel.kind else { return Ok(()) };
        // A generic plan's parameters (initial pruning), or an InitPlan's value (exec
        // pruning, at the Append's first call: `node_append`).
        let steps: Vec<Expr> = conjuncts.iter().filter(|c| c.has_param() || c.has_exec_param()).cloned().collect();
        if steps.is_empty() || !self.coord.setting_on("enable_partition_pruning", true) {
            return Ok(());
        }
        let pruning = PartitionKey { strategy: *strategy, key, key_types: &[], siblings: &[] };
        if !steps.iter().any(|c| pruning.reads_key(c)) {
            return Ok(());
        }
        let leaves = self.leaves(rel, &[]);
        if leaves.iter().any(|l| l.partition_of.as_ref().is_some_and(|(p, _)| *p != rel.name)) {
            return Err(FrontError::unsupported(
                "run-time partition pruning of a multi-level partitioned table (a generic plan with parameters on its key)",
                at,
            ));
        }
        let bound = |r: &Relation| r.partition_of.as_ref().map(|(_, b)| b.clone());
        let mut target = &mut *plan;
        loop {
            match target {
                // A partitionwise aggregate's Append is over the partitions' aggregates
                // (an upper relation): PostgreSQL gives it no run-time pruning.
                Plan::Append { children, .. } if children.iter().any(aggregates) => return Ok(()),
                Plan::Append { children, prune, .. } | Plan::MergeAppend { children, prune, .. }
                    if children.len() == leaves.len() =>
                {
                    // Each child's bound, in the children's order (an ordered Append
                    // for DESC lists the partitions backwards).
                    let child_bounds: Option<Vec<Bound>> = children
                        .iter()
                        .map(|c| {
                            let name = scanned_relation(c)?;
                            leaves.iter().find(|r| r.name == name).and_then(|r| bound(r))
                        })
                        .collect();
                    *prune = Some(Box::new(PartPruneInfo {
                        strategy: *strategy,
                        key: key.clone(),
                        key_types: key.iter().map(|&k| rel.columns[k].ty).collect(),
                        bounds: child_bounds.unwrap_or_else(|| leaves.iter().filter_map(|r| bound(r)).collect()),
                        all_bounds: leaves.iter().filter_map(|r| bound(r)).collect(),
                        conjuncts: conjuncts.to_vec(),
                    }));
                    return Ok(());
                }
                Plan::Sort { child, .. }
                | Plan::IncrementalSort { child, .. }
                | Plan::Limit { child, .. }
                | Plan::Agg { child, .. }
                | Plan::Result { child, .. } => target = child,
                _ => {
                    return Err(FrontError::unsupported(
                        "run-time partition pruning here (only an Append or a Merge Append right over the partitions prunes at executor startup)",
                        at,
                    ))
                }
            }
        }
    }

    fn build_scans(&mut self, rel: &'a Relation, alias: &str, l: Layers, at: Location) -> Result<Plan, FrontError> {
        let conjuncts = l.filter.as_ref().map(split_and).unwrap_or_default();
        let (gating, conjuncts): (Vec<Expr>, Vec<Expr>) = conjuncts.into_iter().partition(is_pseudoconstant);
        self.gating = gating;
        let partitioned = matches!(rel.kind, RelKind::Partitioned { .. });
        // A constant-false qual (`WHERE 1 = 2`) makes the relation a dummy one, as if
        // every partition were pruned: a Result with One-Time Filter: false, no scan.
        let dummy = conjuncts.iter().any(|c| constant_qual(c) == Some(false));
        let leaves = if dummy { Vec::new() } else { self.leaves(rel, &conjuncts) };
        // EXPLAIN names: the parent keeps its alias when the plan refers to it (an
        // Append over its partitions); partitions get alias_1, alias_2, … in bound
        // order, the first one the bare alias when the parent is not referred to.
        // A DISTINCT (its Agg marked Unique) is never pushed to a remote server
        // (postgres_fdw 15's GetForeignUpperPaths takes no UPPERREL_DISTINCT) nor made
        // partitionwise: Unique over sorted input or HashAggregate, above the scans.
        self.distinct = matches!(&l.agg, Some((crate::plan::AggStrategy::Unique, ..)));
        let pushed_agg = l.agg.is_some() && !self.distinct && self.partitionwise(rel, &l) && leaves.len() > 1;
        // enable_partitionwise_aggregate with the partition key not among the grouping
        // keys: each partition aggregates partially and a Finalize Aggregate combines
        // above the Append (PARTITIONWISE_AGGREGATE_PARTIAL, `grouping_planner`), but
        // for avg, whose partial state (a sum and a count) the sandbox does not plan.
        // A DISTINCT aggregate cannot be split into partial ones (PostgreSQL then
        // aggregates above the Append).
        let distinct_aggs = l.agg.as_ref().is_some_and(|(_, _, aggs)| aggs.iter().any(|a| a.distinct));
        let partial_agg = l.agg.is_some()
            && !self.distinct
            && !distinct_aggs
            && partitioned
            && leaves.len() > 1
            && !self.partitionwise(rel, &l)
            && self.coord.setting_on("enable_partitionwise_aggregate", false);
        if partial_agg && l.agg.as_ref().is_some_and(|(_, _, aggs)| aggs.iter().any(|a| a.func == AggFunc::Avg)) {
            return Err(FrontError::unsupported(
                "enable_partitionwise_aggregate = on with avg() and the partition key not among the GROUP BY keys: \
                 PostgreSQL aggregates each partition partially, and avg's partial state is not planned by the sandbox",
                at,
            ));
        }
        let parent_named = partitioned && leaves.len() > 1 && !pushed_agg;
        let alone = partitioned && leaves.len() == 1;
        let leaves: Vec<Leaf> = leaves
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                let k = i + parent_named as usize;
                let name = match partitioned {
                    true => Some(ScanName {
                        alias: if k == 0 { alias.to_string() } else { format!("{alias}_{k}") },
                        parent: parent_named.then(|| alias.to_string()),
                        member: true,
                        tlist: None,
                        direct: false,
                        alone,
                        unqualified: false,
                    }),
                    // A plain relation under an alias: EXPLAIN's title names it (the
                    // range-table entry's `eref`), its columns unqualified.
                    false => (alias != rel.name).then(|| ScanName {
                        alias: alias.to_string(),
                        parent: None,
                        member: false,
                        tlist: None,
                        direct: true,
                        alone: false,
                        unqualified: true,
                    }),
                };
                Leaf { rel: r, name }
            })
            .collect();
        let used = used_columns(&l, rel.columns.len());
        let where_cols = l.filter.as_ref().map(|f| columns_of(f, rel.columns.len())).unwrap_or_default();
        let map = remap(&used, rel.columns.len());
        // The relation's own pathkeys are the query's (its scans' sorted paths).
        self.scan_pathkeys = query_pathkeys(&l, &conjuncts);

        if let Some((strategy, keys, aggs)) = &l.agg {
            let keys: Vec<Expr> = keys.iter().map(|e| rewrite(e, &map)).collect();
            let aggs: Vec<AggCall> = aggs
                .iter()
                .map(|a| AggCall { func: a.func, arg: a.arg.as_ref().map(|e| rewrite(e, &map)), distinct: a.distinct })
                .collect();
            // postgres_fdw pushes an aggregate down when the grouped relation is a
            // foreign table (GetForeignUpperPaths is called for an input rel with an
            // FDW): a plain foreign table, not a partitioned table pruned to one foreign
            // partition (an appendrel), which only partitionwise aggregation pushes.
            let single_foreign = !partitioned && matches!(rel.kind, RelKind::Foreign { .. });
            // postgres_fdw pushes a grouping only when every condition below it ships
            // (foreign_grouping_ok: no local_conds) and no gating qual sits on the scan.
            let ships = conjuncts.iter().all(|c| is_foreign_expr_on(c, self.coord, rel)) && self.gating.is_empty();
            let pushed =
                (pushed_agg || single_foreign) && pushable_agg(&keys, &aggs) && !dummy && ships && !self.distinct;
            let (mut having, sort, limit) = (l.having, l.sort, l.limit);
            if partial_agg {
                // Partial aggregates per partition, finalized above, or the ordinary
                // paths: by cost.
                let s = ScanInput { conjuncts: &conjuncts, used: &used, where_cols: &where_cols };
                let upper =
                    Upper { having: having.as_ref(), sort: sort.as_deref(), targets: l.targets.as_deref(), limit };
                return self.partial_partitionwise(rel, (&leaves, alias), &s, (&keys, &aggs), &upper, at);
            }
            if !pushed && !keys.is_empty() && !leaves.is_empty() {
                // Aggregated here: GroupAggregate or HashAggregate by cost.
                let s = ScanInput { conjuncts: &conjuncts, used: &used, where_cols: &where_cols };
                let upper =
                    Upper { having: having.as_ref(), sort: sort.as_deref(), targets: l.targets.as_deref(), limit };
                return self.grouped(rel, &leaves, &s, &keys, &aggs, &upper, at);
            }
            // A full partitionwise aggregation (the partition key among the grouping
            // keys: every group in one partition) applies HAVING in each partition's
            // aggregate (create_partitionwise_grouping_paths, PARTITIONWISE_AGGREGATE_FULL).
            let per_partition = if pushed && pushed_agg { having.take() } else { None };
            let mut plan = if pushed {
                let children: Vec<Plan> = leaves
                    .iter()
                    .map(|leaf| {
                        let agg = PartitionAgg { keys: &keys, aggs: &aggs, having: per_partition.as_ref() };
                        self.partial_agg(leaf, &conjuncts, &used, &where_cols, &agg, at)
                    })
                    .collect::<Result<_, _>>()?;
                append(children)
            } else {
                let children: Vec<Plan> = leaves
                    .iter()
                    .map(|leaf| self.scan(leaf, &conjuncts, &used, &where_cols, None, at))
                    .collect::<Result<_, _>>()?;
                Plan::Agg {
                    child: Box::new(append_leaves(children, rel, &used, Some(alias))),
                    strategy: strategy.clone(),
                    group_by: keys.clone(),
                    aggs: aggs.clone(),
                    split: crate::plan::AggSplit::Simple,
                }
            };
            if pushed_agg && pushed {
                // The partitionwise paths or the ordinary ones over the whole Append,
                // GroupAggregate or HashAggregate, Sort or Merge Append: by cost.
                let s = ScanInput { conjuncts: &conjuncts, used: &used, where_cols: &where_cols };
                let query_having = per_partition.as_ref();
                let upper = Upper { having: query_having, sort: sort.as_deref(), targets: l.targets.as_deref(), limit };
                let agg = PartitionAgg { keys: &keys, aggs: &aggs, having: per_partition.as_ref() };
                return self.partitionwise_grouping(plan, rel, (&leaves, alias), &s, &agg, &upper, at);
            }
            if let (true, Plan::ForeignScan(f)) = (pushed && single_foreign, &mut plan) {
                // The aggregate runs remotely, and so do HAVING (postgres_fdw's
                // foreign_grouping_ok ships it), ORDER BY (add_foreign_ordered_paths) and
                // then LIMIT/OFFSET (add_foreign_final_paths). HAVING and the sort keys
                // are over the Agg's output: keys then aggregates, the remote targets.
                let query_having = having.clone();
                let conds = having.take().map(|h| split_and(&h)).unwrap_or_default();
                let (remote, local): (Vec<Expr>, Vec<Expr>) =
                    conds.into_iter().partition(|c| is_foreign_expr_on(c, self.coord, rel));
                f.remote.having = remote;
                if let Some(local) = local.into_iter().reduce(|a, b| Expr::bin(crate::plan::BinOp::And, a, b)) {
                    // A HAVING condition that does not ship (a SubPlan): the foreign
                    // scan's local Filter (foreign_grouping_ok's local_conds), sorted here.
                    plan = Plan::Result { child: Box::new(plan), filter: Some(local), targets: None };
                    return Ok(finish(plan, sort, l.targets, limit));
                }
                // ORDER BY remotely or by a local Sort, LIMIT pushed or not: by cost.
                let mut ordered = plan.clone();
                if let (Plan::ForeignScan(f), Some(keys)) = (&mut ordered, &sort) {
                    f.remote.order_by = keys.clone();
                }
                // The grouped relation's local paths come first (GroupAggregate over
                // the scan sorted remotely or by a Sort, HashAggregate), then the
                // pushed one: by cost (`add_paths_to_grouping_rel`, then
                // `add_foreign_grouping_paths`).
                let local = match keys.is_empty() || leaves.len() != 1 {
                    true => vec![],
                    false => {
                        let s = ScanInput { conjuncts: &conjuncts, used: &used, where_cols: &where_cols };
                        let upper = Upper {
                            having: query_having.as_ref(),
                            sort: sort.as_deref(),
                            targets: l.targets.as_deref(),
                            limit,
                        };
                        self.grouping_paths(rel, &leaves, &s, &keys, &aggs, &upper, at)?
                    }
                };
                let upper = Upper { having: None, sort: sort.as_deref(), targets: l.targets.as_deref(), limit };
                let chosen = self.foreign_upper_after(local, plan, sort.is_some().then_some(ordered), &upper, true);
                return Ok(remote_select_list(chosen));
            }
            if let Some(h) = having {
                plan = Plan::Result { child: Box::new(plan), filter: Some(h), targets: None };
            }
            return Ok(finish(plan, sort, l.targets, limit));
        }

        let sort: Option<Vec<SortKey>> =
            l.sort.map(|keys| keys.iter().map(|k| SortKey { expr: rewrite(&k.expr, &map), desc: k.desc }).collect());
        // A select list that is just the used columns, in order, is the scan's own
        // output: PostgreSQL projects in the scan, so no Result node.
        let targets: Option<Vec<(Expr, String)>> = l
            .targets
            .map(|t| t.iter().map(|(e, n)| (rewrite(e, &map), n.clone())).collect())
            .filter(|t: &Vec<(Expr, String)>| {
                !(t.len() == used.len()
                    && t.iter().enumerate().all(|(i, (e, n))| *e == Expr::Col(i) && *n == rel.columns[used[i]].name))
            });
        let plain_keys = sort.as_ref().is_some_and(|k| k.iter().all(|k| matches!(k.expr, Expr::Col(_))));
        let s = ScanInput { conjuncts: &conjuncts, used: &used, where_cols: &where_cols };
        let upper = Upper { having: None, sort: sort.as_deref(), targets: targets.as_deref(), limit: l.limit };
        if let Some(plan) = self.local_partitions_incremental(rel, &leaves, &s, sort.as_ref(), &upper, at)? {
            return Ok(plan);
        }
        let plan = match &sort {
            // Several partitions, ordered, some foreign (a path sorted remotely): a Sort
            // over the Append or a Merge Append of ordered children, by cost.
            Some(keys)
                if leaves.len() > 1
                    && plain_keys
                    && leaves.iter().any(|leaf| matches!(leaf.rel.kind, RelKind::Foreign { .. })) =>
            {
                return self.ordered_append(rel, &leaves, &s, keys, &upper, at);
            }
            // One local table with an index on the key: a presorted index path or a
            // Sort, by cost under the LIMIT (indxpath.rs).
            Some(keys) if leaves.len() == 1 && plain_keys && matches!(leaves[0].rel.kind, RelKind::Table(_)) => {
                let leaf = &leaves[0];
                let seq = self.local_scan(leaf, &conjuncts, &used, &where_cols);
                let req = super::indxpath::ScanRequest {
                    rel: leaf.rel,
                    name: leaf.name.clone(),
                    conjuncts: &conjuncts,
                    used: &used,
                    where_cols: &where_cols,
                };
                // The select list's cost a row (`cost_qual_eval` of the target).
                let p =
                    crate::plan::costsize::CostParams::from_settings(&|n| self.coord.setting(n).map(str::to_string));
                let tlist_cost = targets.iter().flatten().map(|(e, _)| crate::plan::costsize::qual_cost(e, &p)).sum();
                let (plan, presorted) = incsort::ordered_local_scan(self.coord, &req, seq, keys, l.limit, tlist_cost);
                let plan = self.gate(plan);
                let sort = if presorted { None } else { sort.clone() };
                return Ok(finish(plan, sort, targets, l.limit));
            }
            // One foreign relation: a local Sort or the remote ORDER BY (and, for a
            // plain foreign table, LIMIT in the remote query), by cost.
            Some(keys) if leaves.len() == 1 && plain_keys && matches!(leaves[0].rel.kind, RelKind::Foreign { .. }) => {
                let unordered = self.scan(&leaves[0], &conjuncts, &used, &where_cols, None, at)?;
                let ordered = self.scan(&leaves[0], &conjuncts, &used, &where_cols, Some(keys), at)?;
                return Ok(self.foreign_upper(unordered, Some(ordered), &upper, !partitioned));
            }
            _ => {
                let children: Vec<Plan> = leaves
                    .iter()
                    .map(|leaf| self.scan(leaf, &conjuncts, &used, &where_cols, None, at))
                    .collect::<Result<_, _>>()?;
                append_leaves(children, rel, &used, Some(alias))
            }
        };
        if let (false, None, Plan::ForeignScan(_)) = (partitioned, &sort, &plan) {
            // A plain foreign table's LIMIT: in the remote query or not, by cost.
            return Ok(self.foreign_upper(plan, None, &upper, true));
        }
        Ok(finish(plan, sort, targets, l.limit))
    }

    /// The leaf partitions of `rel` (itself if not partitioned) that pruning keeps,
    /// in PostgreSQL's order (by bound).
    fn leaves(&self, rel: &'a Relation, conjuncts: &[Expr]) -> Vec<&'a Relation> {
        let RelKind::Partitioned { strategy, key, partitions } = &rel.kind else {
            return vec![rel];
        };
        let mut parts: Vec<(&Bound, &'a Relation)> = partitions
            .iter()
            .filter_map(|p| self.coord.relation(p))
            .filter_map(|r| r.partition_of.as_ref().map(|(_, b)| (b, r)))
            .collect();
        parts.sort_by(|a, b| bound_order(a.0, b.0));
        let bounds: Vec<&Bound> = parts.iter().map(|(b, _)| *b).collect();
        let mut out = Vec::new();
        for (b, r) in parts {
            let key_types: Vec<crate::plan::SqlType> = key.iter().map(|&k| rel.columns[k].ty).collect();
            let part = PartitionKey { strategy: *strategy, key, key_types: &key_types, siblings: &bounds };
            // enable_partition_pruning off: every partition is kept (for a SELECT,
            // PostgreSQL then uses no partition constraint either).
            if !self.coord.setting_on("enable_partition_pruning", true) || part.may_hold(b, conjuncts) {
                // A partitioned partition's conjuncts are in the same column numbering
                // (partitions have the parent's columns), so pruning recurses.
                out.extend(self.leaves(r, conjuncts));
            }
        }
        out
    }

    /// One side of a join: the relation's scans (its partitions under an Append),
    /// returning the `used` columns, with the conditions on that side pushed in.
    /// With `order` (over the used columns): each scan ordered so (a foreign one by
    /// its remote ORDER BY, a local one by a Sort), several under a Merge Append
    /// (`generate_orderedappend_paths`).
    ///
    /// Its scans take the query's pathkeys [`Self::side_pathkeys`] has for it (by
    /// `alias`), when that list is given.
    fn side(
        &mut self,
        rel: &'a Relation,
        alias: &str,
        conjuncts: &[Expr],
        used: &[usize],
        order: Option<&Vec<SortKey>>,
        at: Location,
    ) -> Result<Plan, FrontError> {
        let saved = self.scan_pathkeys.clone();
        if !self.side_pathkeys.is_empty() {
            self.scan_pathkeys = self.side_pathkeys.iter().find(|(a, _)| a == alias).map(|(_, k)| k.clone());
        }
        let plan = self.side_scans(rel, alias, conjuncts, used, order, at);
        self.scan_pathkeys = saved;
        plan
    }

    /// [`Self::side`]'s scans.
    fn side_scans(
        &mut self,
        rel: &'a Relation,
        alias: &str,
        conjuncts: &[Expr],
        used: &[usize],
        order: Option<&Vec<SortKey>>,
        at: Location,
    ) -> Result<Plan, FrontError> {
        let partitioned = matches!(rel.kind, RelKind::Partitioned { .. });
        let leaves = self.leaves(rel, conjuncts);
        let parent_named = partitioned && leaves.len() > 1;
        let where_cols: Vec<usize> = {
            let mut v: Vec<usize> = conjuncts.iter().flat_map(|c| columns_of(c, rel.columns.len())).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        // `partitions_are_ordered` reads them as leaves (their names do not matter).
        let ordered_leaves: Vec<Leaf> = leaves.iter().map(|r| Leaf { rel: r, name: None }).collect();
        let mut children = Vec::new();
        // Several leaves in an order: each one's cheapest path in it, its index path
        // where it has one, else its cheapest path sorted (`generate_orderedappend_paths`'
        // `get_cheapest_path_for_pathkeys`: a Sort is no path of the leaf's own, so the
        // two are not weighed per leaf, only the whole against a Sort above the Append).
        let force_index = self.force_index;
        self.force_index |= order.is_some() && leaves.len() > 1;
        for (i, r) in leaves.iter().copied().enumerate() {
            let k = i + parent_named as usize;
            let name = if partitioned {
                Some(ScanName {
                    alias: if k == 0 { alias.to_string() } else { format!("{alias}_{k}") },
                    parent: parent_named.then(|| alias.to_string()),
                    member: true,
                    tlist: None,
                    direct: false,
                    alone: leaves.len() == 1,
                    unqualified: false,
                })
            } else {
                (alias != rel.name).then(|| ScanName {
                    alias: alias.to_string(),
                    parent: None,
                    member: false,
                    tlist: None,
                    direct: true,
                    alone: false,
                    unqualified: false,
                })
            };
            let child = self.scan(&Leaf { rel: r, name }, conjuncts, used, &where_cols, order, at);
            children.push(child.inspect_err(|_| self.force_index = force_index)?);
        }
        self.force_index = force_index;
        let mut plan = match order {
            // Range partitions in the order's bound order: an ordered Append of them
            // (reversed for DESC), which `generate_orderedappend_paths` builds instead
            // of a Merge Append (`match_partition_order`); its members run
            // synchronously (`create_append_plan`: no async members with pathkeys).
            Some(keys) if children.len() > 1 => {
                match grouping_planner::partitions_are_ordered(rel, &ordered_leaves, keys, used) {
                    Some(desc) => {
                        if desc {
                            children.reverse();
                        }
                        Plan::Append { children, prune: None, ordered: true }
                    }
                    None => Plan::MergeAppend { children, keys: keys.clone(), prune: None },
                }
            }
            // Every partition pruned: the dummy relation with the used columns (an
            // Append without children returns no columns; a join over it broke).
            _ if children.is_empty() => append_leaves(children, rel, used, Some(alias)),
            _ => append(children),
        };
        self.run_time_pruning(rel, conjuncts, &mut plan, at)?;
        Ok(plan)
    }

    /// A Nested Loop's inner side `s` (a local table) as an Index Scan parameterized
    /// by its join key, equal to `outer_key` (indxpath.rs).
    fn param_side(&self, s: &JoinSide, outer_key: String) -> Plan {
        let mut where_cols: Vec<usize> = s.conjuncts.iter().flat_map(|c| columns_of(c, s.rel.columns.len())).collect();
        where_cols.sort_unstable();
        where_cols.dedup();
        let name = (s.name != s.rel.name).then(|| ScanName {
            alias: s.name.to_string(),
            parent: None,
            member: false,
            tlist: None,
            direct: true,
            alone: false,
            unqualified: false,
        });
        let req = super::indxpath::ScanRequest {
            rel: s.rel,
            name,
            conjuncts: s.conjuncts,
            used: &s.used,
            where_cols: &where_cols,
        };
        self.gate(super::indxpath::param_scan(self.coord, &req, s.key, outer_key, 0))
    }

    fn partitionwise(&self, rel: &Relation, l: &Layers) -> bool {
        let RelKind::Partitioned { key, .. } = &rel.kind else { return false };
        let Some((_, keys, _)) = &l.agg else { return false };
        self.coord.setting_on("enable_partitionwise_aggregate", false)
            && key.iter().all(|k| keys.iter().any(|e| *e == Expr::Col(*k)))
    }

    fn foreign_scan(
        &mut self,
        leaf: &Leaf,
        conjuncts: &[Expr],
        targets: Vec<RemoteTarget>,
        at: Location,
    ) -> Result<ForeignScanPlan, FrontError> {
        let RelKind::Foreign { server, remote_table, .. } = &leaf.rel.kind else {
            return Err(FrontError::at("internal error: not a foreign table", at));
        };
        if !self.servers.contains(server) {
            self.servers.push(server.clone());
        }
        // create_foreignscan_plan's order_qual_clauses, before postgres_fdw splits the
        // clauses into remote and local ones: the remote WHERE in that order.
        let mut quals = equivalences_last(conjuncts);
        crate::plan::costsize::order_qual_clauses(&mut quals);
        let remote = RemoteQuery {
            table: remote_table.clone(),
            table_columns: leaf.rel.columns(),
            targets,
            quals,
            group_by: vec![],
            having: vec![],
            having_aggs: vec![],
            order_by: vec![],
            limit: None,
            offset: None,
            join: None,
            row_mark: None,
            whole_row: None,
        };
        Ok(ForeignScanPlan {
            relation: leaf.rel.name.clone(),
            server: server.clone(),
            remote,
            alias: leaf.name.clone(),
        })
    }

    /// The scan of one leaf, returning the `used` columns (in column order), filtered
    /// by the WHERE conjuncts, ordered by `order` (over the used columns) if given.
    ///
    /// Without an order asked, a foreign leaf's cheapest path (`set_cheapest` over
    /// its pathlist): postgres_fdw adds its unsorted path, then one sorted by the
    /// query's pathkeys (`add_paths_with_pathkeys_for_rel`, [`Self::scan_pathkeys`]),
    /// and `add_path` keeps the sorted one alone when it costs the same within
    /// `STD_FUZZ_FACTOR` (its ordering is better): so a small table's scan sends
    /// its ORDER BY even where nothing above uses the order.
    fn scan(
        &mut self,
        leaf: &Leaf,
        conjuncts: &[Expr],
        used: &[usize],
        where_cols: &[usize],
        order: Option<&Vec<SortKey>>,
        at: Location,
    ) -> Result<Plan, FrontError> {
        let unsorted = self.scan_path(leaf, conjuncts, used, where_cols, order, at)?;
        let sorted_keys = match order {
            None => self.useful_query_pathkeys(leaf, used),
            Some(_) => None,
        };
        let Some(keys) = sorted_keys else { return Ok(unsorted) };
        let sorted = self.scan_path(leaf, conjuncts, used, where_cols, Some(&keys), at)?;
        let (new, old) = (self.leaf_estimate(&sorted), self.leaf_estimate(&unsorted));
        // add_path(sorted) after add_path(unsorted): the same rows, better pathkeys,
        // so the unsorted path leaves when the costs are fuzzily equal.
        Ok(match compare_path_costs_fuzzily(&new, &old, STD_FUZZ_FACTOR, false) {
            Costs::Equal | Costs::Better1 => sorted,
            _ => unsorted,
        })
    }

    /// The query's pathkeys as a foreign leaf's own sort keys over its `used`
    /// columns (`get_useful_pathkeys_for_relation`'s query_pathkeys, kept only when
    /// every one is the relation's to ship: `is_foreign_pathkey`); None for a local
    /// leaf, a leaf postgres_fdw estimates remotely (its sorted path's cost is the
    /// shard's answer, `super::remote_estimate`), or a key not among `used`.
    fn useful_query_pathkeys(&self, leaf: &Leaf, used: &[usize]) -> Option<Vec<SortKey>> {
        let keys = self.scan_pathkeys.as_ref().filter(|k| !k.is_empty())?;
        if !matches!(leaf.rel.kind, RelKind::Foreign { .. }) || self.merge_order {
            return None;
        }
        if super::remote_estimate::uses_remote_estimate(self.coord, &leaf.rel.name).is_some() {
            return None;
        }
        keys.iter()
            .map(|k| match k.expr {
                Expr::Col(c) => Some(SortKey { expr: Expr::Col(used.iter().position(|&u| u == c)?), desc: k.desc }),
                _ => None,
            })
            .collect()
    }

    /// A leaf's path estimate (its top node's).
    fn leaf_estimate(&self, plan: &Plan) -> Estimate {
        let params = CostParams::from_settings(&|n| self.coord.setting(n).map(str::to_string));
        cost_plan(plan, self.coord, &params).first().copied().unwrap_or(Estimate {
            startup: f64::INFINITY,
            total: f64::INFINITY,
            rows: 0.0,
            width: 0,
        })
    }

    /// [`Self::scan`]'s path in the order asked (or none).
    fn scan_path(
        &mut self,
        leaf: &Leaf,
        conjuncts: &[Expr],
        used: &[usize],
        where_cols: &[usize],
        order: Option<&Vec<SortKey>>,
        at: Location,
    ) -> Result<Plan, FrontError> {
        let order_asked = order;
        let conjuncts = &equivalences_last(conjuncts)[..];
        if let RelKind::Foreign { .. } = leaf.rel.kind {
            // postgres_fdw's classifyConditions: what ships goes into the remote
            // query; the rest is the scan's local Filter, over the columns it reads.
            let (remote, local): (Vec<Expr>, Vec<Expr>) =
                conjuncts.iter().cloned().partition(|c| is_foreign_expr_on(c, self.coord, leaf.rel));
            let mut read: Vec<usize> = used.to_vec();
            read.extend(local.iter().flat_map(|c| columns_of(c, leaf.rel.columns.len())));
            read.sort_unstable();
            read.dedup();
            let fetched = if local.is_empty() { used } else { read.as_slice() };
            let targets = fetched.iter().map(|&c| RemoteTarget::Col(c)).collect();
            let mut f = self.foreign_scan(leaf, &remote, targets, at)?;
            let sorted_locally =
                self.merge_order && super::remote_estimate::uses_remote_estimate(self.coord, &leaf.rel.name).is_none();
            let order = order.filter(|_| !sorted_locally);
            if let Some(keys) = order {
                // Keys are over the used columns; the remote query's over the table's.
                f.remote.order_by =
                    keys.iter().map(|k| SortKey { expr: rewrite(&k.expr, &inverse(used)), desc: k.desc }).collect();
            }
            let mut plan = Plan::ForeignScan(f);
            if !local.is_empty() {
                let map = remap(fetched, leaf.rel.columns.len());
                let mut quals: Vec<Expr> = local.iter().map(|c| rewrite(c, &map)).collect();
                crate::plan::costsize::order_qual_clauses(&mut quals);
                let filter = quals.into_iter().reduce(|a, b| Expr::bin(BinOp::And, a, b));
                plan = Plan::Result { child: Box::new(plan), filter, targets: None };
                if fetched.len() != used.len() {
                    let all = leaf.rel.columns();
                    let targets = used
                        .iter()
                        .map(|c| (Expr::Col(fetched.iter().position(|r| r == c).unwrap_or(0)), all[*c].name.clone()))
                        .collect();
                    plan = Plan::Result { child: Box::new(plan), filter: None, targets: Some(targets) };
                }
            }
            return Ok(match (sorted_locally, order_asked) {
                (true, Some(keys)) => Plan::Sort { child: Box::new(self.gate(plan)), keys: keys.clone() },
                _ => self.gate(plan),
            });
        }
        // The cheapest of the Seq Scan and the index paths (indxpath.rs).
        let seq = self.local_scan(leaf, conjuncts, used, where_cols);
        let req = super::indxpath::ScanRequest { rel: leaf.rel, name: leaf.name.clone(), conjuncts, used, where_cols };
        let plan = match order {
            Some(keys) => {
                match super::indxpath::ordered_scan(self.coord, &req, seq, keys, None, self.force_index, None) {
                    (plan, true) => plan,
                    (plan, false) => Plan::Sort { child: Box::new(plan), keys: keys.clone() },
                }
            }
            None => super::indxpath::cheapest_scan(self.coord, &req, seq),
        };
        Ok(self.gate(plan))
    }

    /// `create_gating_plan`: a scan under a Result whose One-Time Filter is the
    /// query's pseudoconstant quals, evaluated once before the scan starts.
    fn gate(&self, plan: Plan) -> Plan {
        match self.gating.iter().cloned().reduce(|a, b| Expr::bin(BinOp::And, a, b)) {
            Some(qual) => Plan::Gating { child: Box::new(plan), qual },
            None => plan,
        }
    }

    /// A local leaf: Seq Scan of the needed columns, the WHERE filter, then only the
    /// used columns (so every child of an Append returns the same columns).
    fn local_scan(&self, leaf: &Leaf, conjuncts: &[Expr], used: &[usize], where_cols: &[usize]) -> Plan {
        let mut read: Vec<usize> = used.iter().chain(where_cols).copied().collect();
        read.sort_unstable();
        read.dedup();
        let all = leaf.rel.columns();
        let columns: Vec<Column> = read.iter().map(|&c| all[c].clone()).collect();
        let mut plan = Plan::SeqScan { table: leaf.rel.name.clone(), columns, alias: leaf.name.clone() };
        if !conjuncts.is_empty() {
            let map = remap(&read, all.len());
            let mut quals: Vec<Expr> = conjuncts.iter().map(|c| rewrite(c, &map)).collect();
            crate::plan::costsize::order_qual_clauses(&mut quals);
            let filter = quals.into_iter().reduce(|a, b| Expr::bin(BinOp::And, a, b));
            plan = Plan::Result { child: Box::new(plan), filter, targets: None };
        }
        if read.len() != used.len() {
            let targets = used
                .iter()
                .map(|c| (Expr::Col(read.iter().position(|r| r == c).unwrap_or(0)), all[*c].name.clone()))
                .collect();
            plan = Plan::Result { child: Box::new(plan), filter: None, targets: Some(targets) };
        }
        plan
    }

    /// One partition's aggregate: pushed into a foreign partition's remote query, a
    /// HashAggregate (or plain Aggregate) over a local one; HAVING in either.
    fn partial_agg(
        &mut self,
        leaf: &Leaf,
        conjuncts: &[Expr],
        used: &[usize],
        where_cols: &[usize],
        agg: &PartitionAgg,
        at: Location,
    ) -> Result<Plan, FrontError> {
        let (keys, aggs) = (agg.keys, agg.aggs);
        if let RelKind::Foreign { .. } = leaf.rel.kind {
            let table_col = |e: &Expr| match e {
                Expr::Col(i) => used[*i],
                _ => 0,
            };
            let mut targets: Vec<RemoteTarget> = keys.iter().map(|k| RemoteTarget::Col(table_col(k))).collect();
            targets.extend(aggs.iter().map(|a| RemoteTarget::Agg(a.func, a.arg.as_ref().map(table_col), a.distinct)));
            let mut f = self.foreign_scan(leaf, conjuncts, targets, at)?;
            // An upper relation's remote WHERE is its input's remote_conds as
            // classifyConditions listed them (baserestrictinfo's order), not sorted by
            // cost: order_qual_clauses sorts a scan's clauses, not the grouped relation's.
            let listed = equivalences_last(conjuncts);
            let at_listed = |q: &Expr| listed.iter().position(|c| c == q).unwrap_or(usize::MAX);
            f.remote.quals.sort_by_key(at_listed);
            f.remote.group_by = keys.iter().map(table_col).collect();
            // HAVING is over the Agg's output: the remote targets.
            f.remote.having = agg.having.map(split_and).unwrap_or_default();
            return Ok(Plan::ForeignScan(f));
        }
        let input = self.local_scan(leaf, conjuncts, used, where_cols);
        let plan = self.local_partition_agg(input, keys, aggs);
        Ok(match agg.having {
            Some(h) => Plan::Result { child: Box::new(plan), filter: Some(h.clone()), targets: None },
            None => plan,
        })
    }
}

/// The aggregation each partition does in a partitionwise aggregate.
struct PartitionAgg<'e> {
    keys: &'e [Expr],
    aggs: &'e [AggCall],
    having: Option<&'e Expr>,
}

/// LIMIT/OFFSET into the remote query of a plain foreign table's scan that does all the
/// query's work below the LIMIT (no local quals or sort: the planner pushes every
/// WHERE conjunct), as postgres_fdw's `add_foreign_final_paths` does since
/// PostgreSQL 12: then no Limit node is left above the Foreign Scan. Not for a
/// partitioned table pruned to one foreign partition: there the input of LIMIT is the
/// appendrel, whose paths the FDW does not add. Simplified: PostgreSQL prefers the
/// pushed-down path only when it costs less, which without use_remote_estimate is when
/// LIMIT + OFFSET is below its row estimate (estimate_path_cost_size's 5% tweak) or
/// there is an OFFSET; the sandbox has no row estimates and always pushes.
fn push_limit(f: &mut ForeignScanPlan, limit: &mut Option<(u64, Option<u64>)>) {
    if let Some((offset, count)) = limit.take() {
        f.remote.limit = count;
        f.remote.offset = (offset > 0).then_some(offset);
    }
}

/// The remote target list of a pushed-down grouping in PostgreSQL's order: postgres_fdw
/// builds it from the grouped relation's target (`foreign_grouping_ok` over
/// `grouping_target`, the query's select list, then the GROUP BY keys and ORDER BY
/// aggregates it lacks), each expression once (`add_to_flat_tlist`): a key or an
/// aggregate where the select list first reads it, a constant shipped as it is
/// (`SELECT 'f'::text, count(*)`), then the rest in the sandbox's order (keys, then
/// aggregates). The pushed scan was planned with the keys then the aggregates; its
/// targets are reordered here, and what reads them (its HAVING and ORDER BY, the
/// projection above) renumbered. Where it departs: PostgreSQL ships a shippable
/// expression of the select list whole (`(count(*) + 1)`); here its columns stand in
/// its place, and the expression is computed above.
fn remote_select_list(plan: Plan) -> Plan {
    match plan {
        Plan::Limit { child, offset, count } => {
            Plan::Limit { child: Box::new(remote_select_list(*child)), offset, count }
        }
        Plan::Result { child, filter: None, targets: Some(targets) } => match *child {
            Plan::ForeignScan(f) if f.remote.aggregated() && f.remote.join.is_none() && f.remote.row_mark.is_none() => {
                let (f, targets) = select_list_order(f, targets);
                Plan::Result { child: Box::new(Plan::ForeignScan(f)), filter: None, targets: Some(targets) }
            }
            child => Plan::Result { child: Box::new(child), filter: None, targets: Some(targets) },
        },
        plan => plan,
    }
}

/// [`remote_select_list`]'s reordering of one pushed-down grouping under the select
/// list `targets` (over the scan's outputs).
fn select_list_order(mut f: ForeignScanPlan, targets: Vec<(Expr, String)>) -> (ForeignScanPlan, Vec<(Expr, String)>) {
    let old = std::mem::take(&mut f.remote.targets);
    let mut new: Vec<RemoteTarget> = Vec::with_capacity(old.len() + targets.len());
    // Old target i's new place.
    let mut at: Vec<Option<usize>> = vec![None; old.len()];
    let shipped = |e: &Expr| matches!(e, Expr::Const(d) if !d.is_null());
    for (e, _) in &targets {
        match e {
            Expr::Const(d) if shipped(e) => {
                if !new.contains(&RemoteTarget::Const(d.clone())) {
                    new.push(RemoteTarget::Const(d.clone()));
                }
            }
            e => e.for_each_col(&mut |i| {
                if let Some(slot @ None) = at.get_mut(i) {
                    *slot = Some(new.len());
                    new.push(old[i].clone());
                }
            }),
        }
    }
    // An aggregate only a shipped HAVING reads is no target (foreign_grouping_ok adds
    // only a local condition's aggregates to the target list); the HAVING writes it.
    let mut read = vec![false; old.len()];
    for k in &f.remote.order_by {
        k.expr.for_each_col(&mut |i| {
            if let Some(r) = read.get_mut(i) {
                *r = true;
            }
        });
    }
    let mut in_having = vec![false; old.len()];
    for h in &f.remote.having {
        h.for_each_col(&mut |i| {
            if let Some(r) = in_having.get_mut(i) {
                *r = true;
            }
        });
    }
    let mut having_aggs: Vec<usize> = vec![];
    for (i, t) in old.iter().enumerate() {
        if matches!(t, RemoteTarget::Agg(..)) && at[i].is_none() && !read[i] && in_having[i] {
            having_aggs.push(i);
        } else if at[i].is_none() {
            at[i] = Some(new.len());
            new.push(t.clone());
        }
    }
    for (j, &i) in having_aggs.iter().enumerate() {
        at[i] = Some(new.len() + j);
    }
    f.remote.having_aggs = having_aggs.iter().map(|&i| old[i].clone()).collect();
    let renumber = |e: &Expr| e.map_cols(&|i| at.get(i).copied().flatten().unwrap_or(i));
    let targets = targets
        .into_iter()
        .map(|(e, name)| match &e {
            Expr::Const(d) if shipped(&e) => {
                let k = new.iter().position(|t| *t == RemoteTarget::Const(d.clone())).unwrap_or(0);
                (Expr::Col(k), name)
            }
            _ => (renumber(&e), name),
        })
        .collect();
    f.remote.having = f.remote.having.iter().map(renumber).collect();
    f.remote.order_by = f.remote.order_by.iter().map(|k| SortKey { expr: renumber(&k.expr), desc: k.desc }).collect();
    f.remote.targets = new;
    (f, targets)
}

/// Can the aggregate go into a remote query? Grouping keys and arguments must be
/// columns (the remote query's targets are). Every aggregate the sandbox has is a
/// built-in one, which postgres_fdw ships (avg too: a full aggregation, per table or
/// per partition, not a partial one).
fn pushable_agg(keys: &[Expr], aggs: &[AggCall]) -> bool {
    keys.iter().all(|k| matches!(k, Expr::Col(_)))
        && aggs.iter().all(|a| a.arg.as_ref().is_none_or(|e| matches!(e, Expr::Col(_))))
}

/// Sort, projection and Limit on top, as the logical plan had them.
pub(super) fn finish(
    mut plan: Plan,
    sort: Option<Vec<SortKey>>,
    targets: Option<Vec<(Expr, String)>>,
    limit: Option<(u64, Option<u64>)>,
) -> Plan {
    if let Some(keys) = sort {
        plan = Plan::Sort { child: Box::new(plan), keys };
    }
    if let Some(t) = targets {
        plan = Plan::Result { child: Box::new(plan), filter: None, targets: Some(t) };
    }
    if let Some((offset, count)) = limit {
        plan = Plan::Limit { child: Box::new(plan), offset, count };
    }
    plan
}

/// The scans of a relation's leaves under one Append; with every partition pruned,
/// PostgreSQL's dummy relation: a Result that returns nothing, with the used columns
/// (Vars of the relation named `alias`, when known).
fn append_leaves(children: Vec<Plan>, rel: &Relation, used: &[usize], alias: Option<&str>) -> Plan {
    if children.is_empty() {
        let all = rel.columns();
        let columns = used.iter().map(|&c| all[c].clone()).collect();
        let rels = used.iter().map(|_| alias.map(str::to_string)).collect();
        return Plan::EmptyResult { columns, rels, joined: false };
    }
    append(children)
}

fn append(mut children: Vec<Plan>) -> Plan {
    if children.len() == 1 {
        return children.pop().expect("one child");
    }
    Plan::Append { children, prune: None, ordered: false }
}

/// The value of a qual that reads no column and calls no function (`1 = 1`, `2 < 1`,
/// `NULL = 1`), folded at plan time as PostgreSQL's `eval_const_expressions` folds it;
/// None for any other qual. Functions are left alone: only immutable ones fold in
/// PostgreSQL, and a stable one (`CURRENT_USER = SESSION_USER`) makes a gating Result
/// with a One-Time Filter instead, which the sandbox does not plan.
fn constant_qual(e: &Expr) -> Option<bool> {
    fn is_constant(e: &Expr) -> bool {
        match e {
            Expr::Const(_) => true,
            // A Const of a type (`'0'::bigint`, `NULL::integer`: shard_sql's typed_const).
            Expr::Func(crate::plan::Func::Cast { from: None, implicit: false, .. }, a)
                if matches!(a.as_ref(), [Expr::Const(_)]) =>
            {
                true
            }
            // A generic plan's parameter, an InitPlan's value: known only at execution.
            Expr::Col(_) | Expr::Func(..) | Expr::Param(..) | Expr::ExecParam(..) => false,
            Expr::Bin(_, l, r) => is_constant(l) && is_constant(r),
            Expr::Not(x) | Expr::IsNull(x, _) => is_constant(x),
        }
    }
    // A qual is true only if it is true: false and NULL both reject every row.
    // One that raises (`1/0 = 1`) was raised by the analysis already (its constant
    // arithmetic is folded there, as eval_const_expressions folds it), except under
    // an AND or OR a constant decided: it is not a value, and left as it is.
    if !is_constant(e) {
        return None;
    }
    e.eval(&[]).ok().map(|d| d.is_true())
}

/// The WHERE clause without its constant-true conjuncts (PostgreSQL drops `1 = 1`
/// before planning: it is neither sent to the remote nor applied as a Filter).
fn fold_true_quals(f: &Expr) -> Option<Expr> {
    split_and(f).into_iter().filter(|c| constant_qual(c) != Some(true)).reduce(|a, b| Expr::bin(BinOp::And, a, b))
}

fn split_and(e: &Expr) -> Vec<Expr> {
    match e {
        Expr::Bin(BinOp::And, l, r) => {
            let mut v = split_and(l);
            v.extend(split_and(r));
            v
        }
        other => vec![other.clone()],
    }
}

/// A relation's restrictions in the order PostgreSQL keeps them: the written ones,
/// then those it makes an equivalence class of and regenerates from it
/// (`generate_base_implied_equalities`, after `deconstruct_jointree` distributed
/// the others): `(l.qty > 3) AND (l.region = 'east'::text)` for `region = 'east' and
/// qty > 3`. The planner sorts them by cost afterwards (`order_qual_clauses`), a
/// stable sort.
fn equivalences_last(conjuncts: &[Expr]) -> Vec<Expr> {
    let (mut out, ec): (Vec<Expr>, Vec<Expr>) = conjuncts.iter().cloned().partition(|c| !is_equivalence_restriction(c));
    out.extend(ec);
    out
}

/// A mergejoinable equality between an expression over the relation's columns and a
/// pseudoconstant (a constant, a parameter, an InitPlan's value): what
/// `process_equivalence` takes into an equivalence class with a constant.
fn is_equivalence_restriction(e: &Expr) -> bool {
    let reads = |x: &Expr| {
        let mut any = false;
        x.for_each_col(&mut |_| any = true);
        any
    };
    let pseudoconstant = |x: &Expr| !reads(x) && !contains_volatile(x);
    matches!(e, Expr::Bin(BinOp::Eq, l, r)
        if (reads(l) && !contains_volatile(l) && pseudoconstant(r)) || (reads(r) && !contains_volatile(r) && pseudoconstant(l)))
}

/// `root->query_pathkeys` as `standard_qp_callback` sets it: the GROUP BY keys in
/// their sort order (`group_pathkeys`, ORDER BY's keys first where it allows) when
/// the query groups, else ORDER BY's keys; as sort keys over the query's columns
/// (the relation's, or a join's numbering). A key equated to a constant by one of
/// `conjuncts` (in the same numbering) is left out (`pathkey_is_redundant`). None
/// without such keys (no GROUP BY and no ORDER BY, a plain aggregate), or when a
/// key is no plain column (an expression's pathkey is not followed here).
fn query_pathkeys(l: &Layers, conjuncts: &[Expr]) -> Option<Vec<SortKey>> {
    let keys: Vec<SortKey> = match &l.agg {
        Some((_, keys, _)) => grouping_planner::group_pathkeys(keys.len(), l.sort.as_deref())
            .into_iter()
            .map(|(k, desc)| SortKey { expr: keys[k].clone(), desc })
            .collect(),
        None => l.sort.clone()?,
    };
    let constant = |c: usize| {
        conjuncts.iter().any(|q| {
            is_col_eq_const(q) && matches!(q, Expr::Bin(_, a, b) if **a == Expr::Col(c) || **b == Expr::Col(c))
        })
    };
    let mut out = Vec::with_capacity(keys.len());
    for k in keys {
        match k.expr {
            Expr::Col(c) if constant(c) => {}
            Expr::Col(_) => out.push(k),
            _ => return None,
        }
    }
    (!out.is_empty()).then_some(out)
}

fn is_col_eq_const(e: &Expr) -> bool {
    // A parameter is a pseudo-constant: `col = $1` makes an equivalence class too.
    matches!(e, Expr::Bin(BinOp::Eq, l, r)
        if matches!((l.as_ref(), r.as_ref()),
            (Expr::Col(_), Expr::Const(_) | Expr::Param(..)) | (Expr::Const(_) | Expr::Param(..), Expr::Col(_))))
}

fn columns_of(e: &Expr, n: usize) -> Vec<usize> {
    let mut seen = vec![false; n];
    e.for_each_col(&mut |i| {
        if let Some(x) = seen.get_mut(i) {
            *x = true;
        }
    });
    (0..n).filter(|&i| seen[i]).collect()
}

/// The relation's columns the plan above the scan reads (the WHERE clause's only when
/// a local scan evaluates it: that is `local_scan`'s business).
/// The columns the upper levels read, in order of first appearance (the select
/// list, then ORDER BY; an aggregate's keys, then its arguments): the order of the
/// final scan/join target (`apply_scanjoin_target_to_paths`), which a pushed-down
/// join's remote target list follows.
fn columns_in_order(l: &Layers, n: usize) -> Vec<usize> {
    let mut exprs: Vec<&Expr> = Vec::new();
    match &l.agg {
        Some((_, keys, aggs)) => {
            exprs.extend(keys);
            exprs.extend(aggs.iter().filter_map(|a| a.arg.as_ref()));
        }
        None => {
            exprs.extend(l.targets.iter().flatten().map(|(e, _)| e));
            exprs.extend(l.sort.iter().flatten().map(|k| &k.expr));
        }
    }
    let mut cols: Vec<usize> = vec![];
    for e in exprs {
        e.for_each_col(&mut |c| {
            if c < n && !cols.contains(&c) {
                cols.push(c)
            }
        });
    }
    if l.agg.is_none() && l.targets.is_none() {
        cols = (0..n).collect();
    }
    cols
}

fn used_columns(l: &Layers, n: usize) -> Vec<usize> {
    let mut exprs: Vec<&Expr> = Vec::new();
    match &l.agg {
        Some((_, keys, aggs)) => {
            exprs.extend(keys);
            exprs.extend(aggs.iter().filter_map(|a| a.arg.as_ref()));
        }
        None => {
            if let Some(t) = &l.targets {
                exprs.extend(t.iter().map(|(e, _)| e));
            } else {
                return (0..n).collect();
            }
            if let Some(s) = &l.sort {
                exprs.extend(s.iter().map(|k| &k.expr));
            }
        }
    }
    let mut cols: Vec<usize> = exprs.iter().flat_map(|e| columns_of(e, n)).collect();
    cols.sort_unstable();
    cols.dedup();
    cols
}

/// Column i of the relation → its position among `kept`.
pub(super) fn remap(kept: &[usize], n: usize) -> Vec<Option<usize>> {
    let mut m = vec![None; n];
    for (pos, &c) in kept.iter().enumerate() {
        m[c] = Some(pos);
    }
    m
}

/// Position among `kept` → the relation's column.
fn inverse(kept: &[usize]) -> Vec<Option<usize>> {
    kept.iter().map(|&c| Some(c)).collect()
}

pub(super) fn rewrite(e: &Expr, map: &[Option<usize>]) -> Expr {
    e.map_cols(&|i| map.get(i).copied().flatten().unwrap_or(i))
}

/// PostgreSQL's partition order: hash by (modulus, remainder), list by the smallest
/// value, range by lower bound; the default partition last.
fn bound_order(a: &Bound, b: &Bound) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Bound::Default, Bound::Default) => Ordering::Equal,
        (Bound::Default, _) => Ordering::Greater,
        (_, Bound::Default) => Ordering::Less,
        (Bound::Hash { modulus: m1, remainder: r1 }, Bound::Hash { modulus: m2, remainder: r2 }) => {
            (m1, r1).cmp(&(m2, r2))
        }
        (Bound::List(x), Bound::List(y)) => x.iter().min().cmp(&y.iter().min()),
        (Bound::Range { from: f1, .. }, Bound::Range { from: f2, .. }) => {
            for (p, q) in f1.iter().zip(f2) {
                use super::catalog::RangeValue::*;
                let o = match (p, q) {
                    (Min, Min) | (Max, Max) => Ordering::Equal,
                    (Min, _) | (_, Max) => Ordering::Less,
                    (Max, _) | (_, Min) => Ordering::Greater,
                    (Value(x), Value(y)) => x.cmp(y),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        }
        _ => Ordering::Equal,
    }
}

/// `column op constant` (either way round) on column `col`: the operator as if the
/// column were on the left, and the constant.
fn column_condition(c: &Expr, col: usize) -> Option<(BinOp, &Datum)> {
    let Expr::Bin(op, l, r) = c else { return None };
    let flip = |op: BinOp| match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::LtEq => BinOp::GtEq,
        BinOp::Gt => BinOp::Lt,
        BinOp::GtEq => BinOp::LtEq,
        other => other,
    };
    match (l.as_ref(), r.as_ref()) {
        (Expr::Col(i), Expr::Const(d)) if *i == col && !d.is_null() => Some((*op, d)),
        (Expr::Const(d), Expr::Col(i)) if *i == col && !d.is_null() => Some((flip(*op), d)),
        _ => None,
    }
}

/// A partitioned table's key, for pruning its partitions.
struct PartitionKey<'a> {
    strategy: Strategy,
    key: &'a [usize],
    /// The key columns' types (a hash partition's key is hashed by type).
    key_types: &'a [crate::plan::SqlType],
    /// Every partition's bound (a default partition holds what the others do not).
    siblings: &'a [&'a Bound],
}

impl PartitionKey<'_> {
    /// May a partition with bound `b` hold rows satisfying every conjunct? PostgreSQL's
    /// plan-time pruning (`partprune.c`, `gen_partprune_steps` and
    /// `get_matching_{hash,list,range}_bounds`) for the clauses the sandbox has:
    ///
    /// - `key op constant` (either way round);
    /// - `key IS NULL`: hash partitions by the hash of a NULL key (the partition a NULL
    ///   key is routed to), list partitions by whether their list holds NULL (else the
    ///   default), range partitions never (only the default);
    /// - an OR (IN lists arrive as ORs of equalities): each arm is pruned on its own
    ///   and the partitions of any arm kept (`PARTPRUNE_COMBINE_UNION`);
    /// - a list default partition is pruned when an equality's value (or NULL) is in
    ///   another partition's list; with an inequality on the key it is always kept
    ///   (`get_matching_list_bounds`: "list partitions divide the key space in a
    ///   discontinuous manner"). A range default partition is always kept.
    fn may_hold(&self, b: &Bound, conjuncts: &[Expr]) -> bool {
        // An IN list (`key = ANY (…)`) prunes as the OR of its equalities.
        let expanded: Vec<Expr>;
        let conjuncts = if conjuncts.iter().any(|c| matches!(c, Expr::Func(crate::plan::Func::ScalarArrayOp { .. }, _)))
        {
            expanded = conjuncts.iter().map(Expr::saop_as_comparisons).flat_map(|c| split_and(&c)).collect();
            // An ANY of NULLs only holds for no row (PARTCLAUSE_MATCH_CONTRADICT).
            if expanded.iter().any(|c| matches!(c, Expr::Const(Datum::Bool(false)))) {
                return false;
            }
            &expanded[..]
        } else {
            conjuncts
        };
        for c in conjuncts {
            if let Expr::Bin(BinOp::Or, ..) = c {
                if !split_or(c).iter().any(|arm| self.may_hold(b, &split_and(arm))) {
                    return false;
                }
            }
        }
        let (strategy, key) = (self.strategy, self.key);
        let eq_of = |col: usize| {
            conjuncts.iter().find_map(|c| match column_condition(c, col) {
                Some((BinOp::Eq, d)) => Some(d.clone()),
                _ => None,
            })
        };
        let is_null =
            |col: usize| conjuncts.iter().any(|c| matches!(c, Expr::IsNull(x, false) if **x == Expr::Col(col)));
        match (strategy, b) {
            (Strategy::Hash, Bound::Hash { modulus, remainder }) => {
                // Every key column needs an equality or IS NULL.
                let keys: Option<Vec<_>> = key
                    .iter()
                    .zip(self.key_types)
                    .map(|(&k, &ty)| match (eq_of(k), is_null(k)) {
                        (Some(d), _) => Some((ty, d)),
                        (None, true) => Some((ty, Datum::Null)),
                        (None, false) => None,
                    })
                    .collect();
                match keys {
                    Some(k) => super::catalog::partition_hash(&k) % modulus == *remainder,
                    None => true,
                }
            }
            (Strategy::List, Bound::List(values)) => {
                if is_null(key[0]) {
                    return values.iter().any(Datum::is_null);
                }
                // Some value of the list satisfies every condition on the key.
                values.iter().filter(|v| !v.is_null()).any(|v| self.value_holds(v, conjuncts))
            }
            (Strategy::List, Bound::Default) => {
                let listed = |pred: &dyn Fn(&Datum) -> bool| {
                    self.siblings.iter().any(|s| matches!(s, Bound::List(vs) if vs.iter().any(pred)))
                };
                if is_null(key[0]) {
                    return !listed(&|v: &Datum| v.is_null());
                }
                let ranged = conjuncts.iter().any(|c| {
                    matches!(column_condition(c, key[0]), Some((BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq, _)))
                });
                match eq_of(key[0]) {
                    Some(d) if !ranged => !listed(&|v: &Datum| !v.is_null() && *v == d),
                    _ => true,
                }
            }
            (_, Bound::Default) => true,
            (Strategy::Range, Bound::Range { from, to }) => {
                if is_null(key[0]) {
                    return false;
                }
                // The first key column only: its lower and upper bounds against the conjuncts.
                let col = key[0];
                use super::catalog::RangeValue;
                let lo = match &from[0] {
                    RangeValue::Value(d) => Some(d),
                    _ => None,
                };
                let hi = match &to[0] {
                    RangeValue::Value(d) => Some(d),
                    _ => None,
                };
                conjuncts.iter().all(|c| match column_condition(c, col) {
                    Some((BinOp::Eq, d)) => lo.is_none_or(|lo| d >= lo) && hi.is_none_or(|hi| key.len() > 1 || d < hi),
                    Some((BinOp::Lt, d)) => lo.is_none_or(|lo| lo < d),
                    Some((BinOp::LtEq, d)) => lo.is_none_or(|lo| lo <= d),
                    Some((BinOp::Gt, d)) | Some((BinOp::GtEq, d)) => hi.is_none_or(|hi| d < hi),
                    _ => true,
                })
            }
            _ => true,
        }
    }

    /// Is `c` a condition on the key that pruning reads, once its parameters are
    /// values (`key op $n`, either way round, or an OR of such)?
    fn reads_key(&self, c: &Expr) -> bool {
        let pseudo_constant = |e: &Expr| {
            let mut has_col = false;
            e.for_each_col(&mut |_| has_col = true);
            !has_col
        };
        match c {
            Expr::Func(crate::plan::Func::ScalarArrayOp { .. }, _) => self.reads_key(&c.saop_as_comparisons()),
            Expr::Bin(BinOp::Or, ..) => split_or(c).iter().all(|arm| split_and(arm).iter().any(|a| self.reads_key(a))),
            Expr::Bin(op, l, r) if op.is_comparison() => self.key.iter().any(|&k| match (l.as_ref(), r.as_ref()) {
                (Expr::Col(i), e) | (e, Expr::Col(i)) => *i == k && pseudo_constant(e),
                _ => false,
            }),
            _ => false,
        }
    }

    /// Does the key value `v` satisfy every `key op constant` conjunct?
    fn value_holds(&self, v: &Datum, conjuncts: &[Expr]) -> bool {
        conjuncts.iter().all(|c| match column_condition(c, self.key[0]) {
            Some((BinOp::Eq, d)) => v == d,
            Some((BinOp::Lt, d)) => v < d,
            Some((BinOp::LtEq, d)) => v <= d,
            Some((BinOp::Gt, d)) => v > d,
            Some((BinOp::GtEq, d)) => v >= d,
            _ => true,
        })
    }
}

/// Does `p` aggregate (an Agg, or a foreign scan whose remote query does)?
/// The relation a partition's scan reads (through the Sort, Result or gating Result
/// above it), None for anything else.
fn scanned_relation(p: &Plan) -> Option<&str> {
    match p {
        Plan::SeqScan { table, .. } | Plan::IndexScan { table, .. } | Plan::BitmapHeapScan { table, .. } => Some(table),
        Plan::ForeignScan(f) => Some(&f.relation),
        Plan::Sort { child, .. } | Plan::Result { child, .. } | Plan::Gating { child, .. } => scanned_relation(child),
        _ => None,
    }
}

fn aggregates(p: &Plan) -> bool {
    match p {
        Plan::Agg { .. } => true,
        Plan::ForeignScan(f) => f.remote.aggregated(),
        Plan::Result { child, .. } => aggregates(child),
        _ => false,
    }
}

/// ExecFindMatchingSubPlans with the initial pruning steps: which of the Append's
/// children may hold rows, its parameters' values bound (`prepared::bind_plan_params`).
/// The same tests as plan-time pruning (`PartitionKey::may_hold`), over the values.
pub fn find_matching_subplans(info: &PartPruneInfo) -> Vec<bool> {
    let conjuncts: Vec<Expr> = info.conjuncts.iter().map(Expr::params_as_consts).collect();
    // A condition that compares the key with NULL holds for no row (the operators are
    // strict): nothing matches, as PostgreSQL's pruning finds no partition for it.
    let null_compared = conjuncts.iter().any(|c| {
        matches!(c, Expr::Bin(op, l, r) if op.is_comparison()
            && (matches!(**l, Expr::Const(Datum::Null)) || matches!(**r, Expr::Const(Datum::Null))))
    });
    let siblings: Vec<&Bound> = info.all_bounds.iter().collect();
    let part =
        PartitionKey { strategy: info.strategy, key: &info.key, key_types: &info.key_types, siblings: &siblings };
    info.bounds.iter().map(|b| !null_compared && part.may_hold(b, &conjuncts)).collect()
}

fn split_or(e: &Expr) -> Vec<Expr> {
    match e {
        Expr::Bin(BinOp::Or, l, r) => {
            let mut v = split_or(l);
            v.extend(split_or(r));
            v
        }
        other => vec![other.clone()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pushed-down grouping's remote targets follow the select list
    /// (`foreign_grouping_ok`): `SELECT 'f'::text, count(*)`, `SELECT count(*), cat
    /// … GROUP BY 2`; HAVING, ORDER BY and the projection above are renumbered.
    #[test]
    fn a_pushed_grouping_ships_its_select_list_in_order() {
        use crate::sql_text::deparse::deparse_remote_query;
        let cols = vec![Column::new("id", crate::types::ColType::Int), Column::new("cat", crate::types::ColType::Text)];
        let mut remote = crate::plan::RemoteQuery::scan("f_remote", cols, &[]);
        remote.targets = vec![RemoteTarget::Col(1), RemoteTarget::Agg(AggFunc::CountStar, None, false)];
        remote.group_by = vec![1];
        remote.having = vec![Expr::bin(BinOp::Gt, Expr::col(1), Expr::int(2))];
        remote.order_by = vec![SortKey { expr: Expr::col(1), desc: true }];
        let f = ForeignScanPlan { relation: "f".into(), server: "s2".into(), remote, alias: None };
        // select count(*), cat … : the aggregate first, GROUP BY its new place.
        let (g, t) = select_list_order(f.clone(), vec![(Expr::col(1), "n".into()), (Expr::col(0), "cat".into())]);
        assert_eq!(
            deparse_remote_query(&g.remote),
            "SELECT count(*), cat FROM public.f_remote GROUP BY 2 HAVING ((count(*) > 2)) ORDER BY count(*) DESC NULLS FIRST"
        );
        assert_eq!(t, vec![(Expr::col(0), "n".to_string()), (Expr::col(1), "cat".to_string())]);
        // select 'f', count(*) … : the constant shipped, the key the select list lacks last.
        let text = Expr::Const(Datum::text("f"));
        let (g, t) = select_list_order(f, vec![(text, "src".into()), (Expr::col(1), "count".into())]);
        assert!(deparse_remote_query(&g.remote).starts_with("SELECT 'f'::text, count(*), cat FROM"));
        assert_eq!(t, vec![(Expr::col(0), "src".to_string()), (Expr::col(1), "count".to_string())]);
    }

    /// `count(*)` over a UNION ALL in FROM (`pull_up_simple_union_all`): the members
    /// are scans without output columns, a foreign one's remote query `SELECT NULL`;
    /// a member with a WHERE clause is no simple append member, and then all is left.
    #[test]
    fn an_unread_union_all_members_scans_return_no_column() {
        let parse =
            |sql: &str| match sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, sql)
                .unwrap()
                .remove(0)
            {
                ast::Statement::Query(q) => q,
                _ => unreachable!(),
            };
        assert!(is_simple_union_all(&parse("select a from t union all select a from u union all select 1")));
        assert!(!is_simple_union_all(&parse("select a from t union select a from u")));
        assert!(!is_simple_union_all(&parse("select a from t union all select a from u order by 1")));
        assert!(!is_simple_union_all(&parse("select a from t")));
        let cols = vec![Column::new("a", crate::types::ColType::Int), Column::new("b", crate::types::ColType::Int)];
        let mut remote = crate::plan::RemoteQuery::scan("t_remote", cols.clone(), &[0]);
        let foreign = |remote: &crate::plan::RemoteQuery| {
            Plan::ForeignScan(crate::plan::ForeignScanPlan {
                relation: "t".into(),
                server: "s1".into(),
                remote: remote.clone(),
                alias: None,
            })
        };
        let seq = Plan::SeqScan { table: "u".into(), columns: cols.clone(), alias: None };
        let projected = Plan::Result {
            child: Box::new(seq.clone()),
            filter: None,
            targets: Some(vec![(Expr::bin(BinOp::Plus, Expr::col(0), Expr::int(1)), "a".into())]),
        };
        let append = Plan::Append { children: vec![foreign(&remote), projected], prune: None, ordered: false };
        let Some(Plan::Append { children, .. }) = without_outputs(&append) else { panic!("stripped") };
        let Plan::ForeignScan(f) = &children[0] else { panic!("{:?}", children[0]) };
        assert!(f.remote.targets.is_empty());
        assert_eq!(crate::sql_text::deparse::deparse_remote_query(&f.remote), "SELECT NULL FROM public.t_remote");
        assert!(matches!(&children[1], Plan::SeqScan { columns, .. } if columns.is_empty()));
        // A member with a WHERE clause keeps its columns, and so do the others.
        remote.quals = vec![Expr::bin(BinOp::Gt, Expr::col(1), Expr::int(0))];
        let append = Plan::Append { children: vec![foreign(&remote), seq], prune: None, ordered: false };
        assert_eq!(without_outputs(&append), None);
        // Only a query that reads no column of the subquery.
        let agg = |keys: Vec<Expr>, arg: Option<Expr>| Layers {
            limit: None,
            targets: None,
            sort: None,
            having: None,
            agg: Some((AggStrategy::Plain, keys, vec![AggCall { func: AggFunc::CountStar, arg, distinct: false }])),
            filter: None,
        };
        assert!(reads_no_column(&agg(vec![], None), 2));
        assert!(!reads_no_column(&agg(vec![Expr::col(1)], None), 2));
        assert!(!reads_no_column(&agg(vec![], Some(Expr::col(0))), 2));
    }

    /// generate_base_implied_equalities: `x = constant` restrictions come after the
    /// relation's others, in their order; a volatile side makes no class.
    #[test]
    fn equivalence_restrictions_come_last() {
        let eq = |i, v| Expr::bin(BinOp::Eq, Expr::col(i), Expr::int(v));
        let gt = Expr::bin(BinOp::Gt, Expr::col(1), Expr::int(3));
        let expr_eq = Expr::bin(BinOp::Eq, Expr::bin(BinOp::Modulo, Expr::col(0), Expr::int(2)), Expr::int(0));
        let random = Expr::bin(BinOp::Eq, Expr::func(crate::plan::Func::Random, vec![]), Expr::col(2));
        let written = vec![eq(0, 5), expr_eq.clone(), gt.clone(), random.clone(), eq(2, 1)];
        assert_eq!(equivalences_last(&written), vec![gt, random, eq(0, 5), expr_eq, eq(2, 1)]);
    }

    fn est(startup: f64, total: f64) -> Estimate {
        Estimate { startup, total, rows: 100.0, width: 8 }
    }

    /// `add_path`'s rules for two paths differing in cost only (pathnode.c).
    #[test]
    fn add_path_keeps_the_fuzzily_cheaper_else_the_first() {
        // More than 1% cheaper or dearer in total: the cheaper.
        assert_eq!(add_path_keeps(&est(0.0, 98.0), &est(0.0, 100.0), false), Kept::New);
        assert_eq!(add_path_keeps(&est(0.0, 102.0), &est(0.0, 100.0), false), Kept::Old);
        // Fuzzily equal in total: the fuzzily cheaper startup wins, even if dearer in total.
        assert_eq!(add_path_keeps(&est(1.0, 100.5), &est(5.0, 100.0), false), Kept::New);
        assert_eq!(add_path_keeps(&est(5.0, 99.5), &est(1.0, 100.0), false), Kept::Old);
        // Fuzzily equal on both: the new path only if cheaper past a fuzz of 1e-10 (a
        // lower total, or the same total and a lower startup), else the first.
        assert_eq!(add_path_keeps(&est(0.0, 99.5), &est(0.0, 100.0), false), Kept::New);
        assert_eq!(add_path_keeps(&est(0.0, 100.5), &est(0.0, 100.0), false), Kept::Old);
        assert_eq!(add_path_keeps(&est(5.0, 100.0), &est(5.0, 100.0), false), Kept::Old);
        assert_eq!(add_path_keeps(&est(5.0, 100.0 + 1e-12), &est(5.0, 100.0), false), Kept::Old);
        // Dearer in total but cheaper to start: both, if startup cost counts (a LIMIT).
        assert_eq!(add_path_keeps(&est(1.0, 120.0), &est(50.0, 100.0), true), Kept::Both);
        assert_eq!(add_path_keeps(&est(1.0, 120.0), &est(50.0, 100.0), false), Kept::Old);
        assert_eq!(add_path_keeps(&est(50.0, 80.0), &est(1.0, 100.0), true), Kept::Both);
    }

    fn path(total: f64, order: Order) -> JoinPath {
        let method = Method::Hash;
        JoinPath { swapped: false, unique: false, method, presorted: Presorted::NONE, est: est(0.0, total), order }
    }

    /// `add_path` with pathkeys: a dearer path stays if it is better ordered, and
    /// one fuzzily as cheap and better ordered pushes the other out; two different
    /// orderings are not compared; the list stays in order of total cost.
    #[test]
    fn add_path_keeps_a_dearer_path_for_its_ordering() {
        let mut list = vec![];
        add_path(&mut list, path(100.0, Order::None), false, false);
        add_path(&mut list, path(150.0, Order::JoinKey), false, false);
        assert_eq!(list.len(), 2, "dearer but ordered: kept");
        add_path(&mut list, path(160.0, Order::None), false, false);
        assert_eq!(list.len(), 2, "dearer and unordered: rejected");
        add_path(&mut list, path(140.0, Order::Query), false, false);
        assert_eq!(list.iter().map(|p| p.order).collect::<Vec<_>>(), [Order::None, Order::Query, Order::JoinKey]);
        // The ORDER BY is the join key: the two orderings are one, the cheaper wins
        // over both ordered paths.
        add_path(&mut list, path(130.0, Order::JoinKey), false, true);
        assert_eq!(
            list.iter().map(|p| (p.order, p.est.total)).collect::<Vec<_>>(),
            [(Order::None, 100.0), (Order::JoinKey, 130.0)]
        );
        // Fuzzily as cheap as the unordered one, and ordered: it goes.
        add_path(&mut list, path(100.5, Order::JoinKey), false, true);
        assert!(list.iter().all(|p| p.order == Order::JoinKey), "{list:?}");
    }

    /// `reduce_outer_joins`: a strict WHERE condition on a nullable side makes the
    /// join keep only matched rows of that side; IS NULL or an OR does not.
    #[test]
    fn strict_where_conditions_reduce_outer_joins() {
        let (wa, n) = (2, 4);
        let gt = |c: usize| Expr::bin(BinOp::Gt, Expr::Col(c), Expr::int(1));
        let is_null = |c: usize| Expr::IsNull(Box::new(Expr::Col(c)), false);
        assert_eq!(reduce_outer_join(JoinType::Left, &[gt(3)], wa, n), JoinType::Inner);
        assert_eq!(reduce_outer_join(JoinType::Left, &[gt(0)], wa, n), JoinType::Left);
        assert_eq!(reduce_outer_join(JoinType::Left, &[is_null(3)], wa, n), JoinType::Left);
        let either = Expr::bin(BinOp::Or, gt(3), gt(0));
        assert_eq!(reduce_outer_join(JoinType::Left, &[either], wa, n), JoinType::Left);
        assert_eq!(reduce_outer_join(JoinType::Right, &[gt(1)], wa, n), JoinType::Inner);
        assert_eq!(reduce_outer_join(JoinType::Full, &[gt(1)], wa, n), JoinType::Left);
        assert_eq!(reduce_outer_join(JoinType::Full, &[gt(2)], wa, n), JoinType::Right);
        assert_eq!(reduce_outer_join(JoinType::Full, &[gt(0), gt(2)], wa, n), JoinType::Inner);
    }
}
