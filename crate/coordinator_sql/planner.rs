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
//! - **Append** over the remaining partitions (none: no Append, as PostgreSQL removes
//!   a single-child Append);
//! - **pushdown** (postgres_fdw's `deparse.c`/`postgres_fdw.c`): a foreign partition's
//!   scan carries the WHERE conjuncts and fetches only the columns used above it
//!   (`SELECT NULL` when none); `col = constant` conjuncts come last, as PostgreSQL
//!   regenerates them from their equivalence class;
//! - **ORDER BY … LIMIT** over several partitions: a **MergeAppend** whose foreign
//!   children get the ORDER BY in their remote query and whose local children are
//!   sorted (an index on the key serves instead); without LIMIT a Sort above the Append;
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
//!   `use_remote_estimate`, asks no remote server);
//! - subqueries nest at most 32 deep (`MAX_NESTING`), an error beyond that, not a stack
//!   overflow; what it does not plan (WITH, outer joins, joins of more than two
//!   relations, set operations other than UNION ALL, …) is refused by name.
//!
//! A join of two relations: a Hash Join (a Nested Loop over a Materialize with hash and
//! merge joins off) whose sides are planned as above; which side is outer is chosen by
//! PostgreSQL 15's costs (`plan::costsize`), both orders weighed as `add_path` weighs
//! them (`Join::second_outer`).
//!
//! Subqueries in expressions (uncorrelated scalar subqueries and EXISTS as InitPlans,
//! One-Time Filters, NOT IN as a hashed SubPlan) are `subselect.rs`'s; the query
//! around them is planned here as usual (`plan_with_init_plans`).
//!
//! Where it departs from PostgreSQL: apart from a join's order, the shape above is chosen
//! by rule, not by cost, and settings that would change it by cost are refused
//! (`settings.rs`); a join's method is not weighed (no Merge Join; a Hash Join whenever
//! it is enabled), nor a Nested Loop whose inner side is not materialized; range pruning
//! reads the first key column only, so with a multi-column range key it may keep
//! partitions PostgreSQL prunes.

use sqlparser::ast::{self, SetExpr, TableFactor};
use sqlparser::tokenizer::Location;

use super::catalog::{ident, relation_name, Bound, Node, RelKind, Relation};
use super::statement::Strategy;
use super::FrontError;
use crate::plan::costsize::{cost_plan, CostParams, Estimate};
use crate::plan::{
    AggCall, AggStrategy, BinOp, Expr, ForeignScanPlan, Plan, RemoteQuery, RemoteTarget, ScanName, SortKey,
};
use crate::types::{Catalog, Column, Datum, Table};

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
        if let Plan::Agg { child, strategy, group_by, aggs } = plan {
            l.agg = Some((strategy, group_by, aggs));
            plan = *child;
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
    let mut servers = Vec::new();
    let planned = plan_query_into(coord, q, text, &mut servers, 0)?;
    // The enable_* settings the sandbox can honour only where its plan lacks their node.
    super::settings::check_plan(
        &|n| coord.setting(n).map(str::to_string),
        &|t| matches!(coord.relation(t).map(|r| &r.kind), Some(RelKind::Table(t)) if !t.indexes.is_empty()),
        &planned.plan,
    )
    .map_err(|m| FrontError::at(m, query_location(q)))?;
    Ok(Planned { servers, ..planned })
}

/// How deeply subqueries and UNION branches may nest (PostgreSQL's limit is the
/// stack; ours keeps hostile input from exhausting it).
const MAX_NESTING: usize = 32;

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
    if super::subselect::has_sublinks(q) {
        return plan_with_init_plans(coord, q, text, servers, depth);
    }
    match q.body.as_ref() {
        SetExpr::SetOperation { .. } => return plan_union(coord, q, text, servers, depth),
        SetExpr::Select(s) => {
            if let [from] = s.from.as_slice() {
                if let TableFactor::Derived { subquery, alias, lateral: false } = &from.relation {
                    if from.joins.is_empty() {
                        let name = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_else(|| "unnamed_subquery".into());
                        let sub = plan_query_into(coord, subquery, text, servers, depth + 1)?;
                        return plan_over(q, text, &name, sub);
                    }
                }
            }
        }
        _ => {}
    }
    if let SetExpr::Select(s) = q.body.as_ref() {
        if s.from.len() == 2 || s.from.first().is_some_and(|f| !f.joins.is_empty()) {
            return plan_join(coord, q, s, text, servers, at);
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
    let mut qual = None;
    if layers.filter.as_ref().is_some_and(Expr::has_exec_param) {
        (qual, layers.filter) = super::subselect::split_one_time_filter(layers.filter.take());
        super::subselect::check_run_time_pruning(coord, &rel.name, layers.filter.as_ref(), at)?;
    }
    let alias = alias.unwrap_or_else(|| rel.name.clone());
    let order_keys = order_keys_of(&layers);
    let mut p = Planner { coord, servers: std::mem::take(servers) };
    let plan = p.build(rel, &alias, layers, at);
    *servers = p.servers;
    let plan = match qual {
        Some(f) => super::subselect::insert_gating(plan?, f),
        None => plan?,
    };
    Ok(Planned { plan, columns, servers: vec![], order_key: order_keys.first().copied(), order_keys })
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
    super::subselect::check_hashed_subplans(coord, &rel_name, &init_plans, at)?;
    let planned = plan_query_into(coord, &rewritten, text, servers, depth)?;
    super::subselect::check_params(&planned.plan, at)?;
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

/// The join method: a Hash Join; with `enable_hashjoin` and `enable_mergejoin` off, a
/// Nested Loop whose inner side is under a Materialize (PostgreSQL 15 materializes a
/// rescanned inner side unless `enable_material` is off). With only `enable_hashjoin`
/// off PostgreSQL weighs a Merge Join against a Nested Loop by cost, and with every
/// join method off it takes the cheapest disabled one: the sandbox has neither a Merge
/// Join nor a cost model, so both are refused by name.
fn join_method(
    coord: &Node,
    (outer, inner): (Plan, Plan),
    keys: (Expr, Expr),
    swapped: bool,
    at: Location,
) -> Result<Plan, FrontError> {
    let (outer_key, inner_key) = keys;
    if coord.setting_on("enable_hashjoin", true) {
        return Ok(Plan::HashJoin { outer: Box::new(outer), inner: Box::new(inner), outer_key, inner_key });
    }
    if coord.setting_on("enable_mergejoin", true) {
        return Err(FrontError::unsupported(
            "enable_hashjoin = off with enable_mergejoin on: PostgreSQL would weigh a Merge Join against a Nested \
             Loop by cost, and the sandbox has no Merge Join (set enable_mergejoin to off too)",
            at,
        ));
    }
    if !coord.setting_on("enable_nestloop", true) {
        return Err(FrontError::unsupported(
            "enable_hashjoin, enable_mergejoin and enable_nestloop all off: PostgreSQL takes the cheapest of the \
             disabled join methods, and the sandbox has no cost model to choose",
            at,
        ));
    }
    let inner =
        if coord.setting_on("enable_material", true) { Plan::Material { child: Box::new(inner) } } else { inner };
    Ok(Plan::NestLoop {
        outer: Box::new(outer),
        inner: Box::new(inner),
        outer_key,
        inner_key,
        filter_inner_first: swapped,
    })
}

/// An inner equi-join of two relations (`a JOIN b ON a.x = b.y`, or `FROM a, b WHERE
/// a.x = b.y`), each side scanned as a query of its own would be (partitions, pruning,
/// conditions on one side pushed into that side's scans). The method is the settings'
/// (`join_method`: a Hash Join, or a Nested Loop when hash and merge joins are off);
/// which relation is the outer side is chosen by cost, both ways round, as
/// PostgreSQL's `add_paths_to_joinrel` tries them (`Join::second_outer`).
fn plan_join(
    coord: &Node,
    q: &ast::Query,
    s: &ast::Select,
    text: &str,
    servers: &mut Vec<String>,
    at: Location,
) -> Result<Planned, FrontError> {
    let (a, b, on) = match (s.from.as_slice(), s.from.first().map(|f| f.joins.as_slice())) {
        ([one], Some([join])) => match &join.join_operator {
            ast::JoinOperator::Inner(ast::JoinConstraint::On(e)) => (&one.relation, &join.relation, Some(e.clone())),
            ast::JoinOperator::Inner(_) => {
                return Err(FrontError::unsupported("JOIN … USING and NATURAL JOIN (write ON a.x = b.y)", at))
            }
            _ => return Err(FrontError::unsupported("outer, cross and other joins (only inner equi-joins)", at)),
        },
        ([x, y], Some([])) if y.joins.is_empty() => (&x.relation, &y.relation, None),
        _ => return Err(FrontError::unsupported("a join of more than two relations", at)),
    };
    let (ra, na) = join_member(coord, a, at)?;
    let (rb, nb) = join_member(coord, b, at)?;
    if na == nb {
        return Err(FrontError::at(format!("table name \"{na}\" specified more than once"), at));
    }
    // enable_partitionwise_join: PostgreSQL may join two partitioned tables partition
    // by partition (try_partitionwise_join); the sandbox has no such path.
    // Only tables partitioned the same way can be (PostgreSQL matches their bounds).
    let same_scheme = match (&ra.kind, &rb.kind) {
        (RelKind::Partitioned { strategy: x, key: kx, .. }, RelKind::Partitioned { strategy: y, key: ky, .. }) => {
            x == y && kx.len() == ky.len()
        }
        _ => false,
    };
    if same_scheme && coord.setting_on("enable_partitionwise_join", false) {
        return Err(FrontError::unsupported(
            format!(
                "enable_partitionwise_join = on for a join of two tables partitioned alike (\"{}\" and \"{}\"): \
                 PostgreSQL may join them partition by partition, and the sandbox has no partitionwise join",
                ra.name, rb.name
            ),
            at,
        ));
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
    let l = peel(logical).map_err(|m| FrontError::at(format!("internal error: {m}"), at))?;
    let (wa, n) = (ra.columns.len(), ra.columns.len() + rb.columns.len());
    let conjuncts = l.filter.as_ref().map(split_and).unwrap_or_default();
    let side_of = |e: &Expr| {
        let cols = columns_of(e, n);
        (cols.iter().all(|&c| c < wa), cols.iter().all(|&c| c >= wa))
    };
    let mut a_conj = Vec::new();
    let mut b_conj = Vec::new();
    let mut rest = Vec::new();
    let mut key: Option<(usize, usize)> = None;
    for c in conjuncts {
        if key.is_none() {
            if let Expr::Bin(BinOp::Eq, x, y) = &c {
                if let (Expr::Col(i), Expr::Col(j)) = (x.as_ref(), y.as_ref()) {
                    match (*i < wa, *j < wa) {
                        (true, false) => {
                            key = Some((*i, *j));
                            continue;
                        }
                        (false, true) => {
                            key = Some((*j, *i));
                            continue;
                        }
                        _ => {}
                    }
                }
            }
        }
        match side_of(&c) {
            (true, _) => a_conj.push(c),
            (_, true) => b_conj.push(shift(&c, wa)),
            _ => rest.push(c),
        }
    }
    let Some((ka, kb)) = key else {
        return Err(FrontError::unsupported("a join without an equality between its two relations", at));
    };
    // The columns each side must return: those used above the join, and the keys.
    let mut used = used_columns(&Layers { filter: None, ..l.clone_layers() }, n);
    for c in rest.iter().flat_map(|e| columns_of(e, n)).chain([ka, kb]) {
        used.push(c);
    }
    used.sort_unstable();
    used.dedup();
    let used_a: Vec<usize> = used.iter().copied().filter(|&c| c < wa).collect();
    let used_b: Vec<usize> = used.iter().copied().filter(|&c| c >= wa).map(|c| c - wa).collect();
    let join = Join {
        coord,
        sides: [
            JoinSide { rel: ra, name: &na, conjuncts: &a_conj, used: used_a, key: ka, first: 0 },
            JoinSide { rel: rb, name: &nb, conjuncts: &b_conj, used: used_b, key: kb - wa, first: wa },
        ],
        rest: &rest,
        columns: &columns,
        at,
    };
    let swapped = join.second_outer(&l, servers)?;
    Ok(join.build(swapped, &l, servers)?.1)
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
    /// Conditions over both sides other than the key, in the join's numbering.
    rest: &'r [Expr],
    /// The query's output columns.
    columns: &'r [Column],
    at: Location,
}

impl Join<'_> {
    /// Whether PostgreSQL 15 makes the second relation of FROM the outer side.
    ///
    /// `populate_joinrel_with_paths` calls `add_paths_to_joinrel` for (first, second)
    /// and then for (second, first): the join method's path each way round, in that
    /// order, and `add_path` keeps the cheaper (`add_path_keeps`). Both paths have the
    /// join relation's rows (`set_joinrel_size_estimates` sets them once per relation)
    /// and no pathkeys (a Hash Join's output is unordered; a Nested Loop's is its outer
    /// side's, and the sandbox's sides are unordered scans and Appends), so cost alone
    /// decides. When `add_path` keeps both (a LIMIT makes startup cost count, and one
    /// is cheaper to start, the other in total), the upper levels plan over both and
    /// the final choice is the cheaper whole plan (`get_cheapest_fractional_path`
    /// takes the final relation's cheapest total path): the two queries' plans are
    /// costed whole.
    fn second_outer(&self, l: &Layers, servers: &[String]) -> Result<bool, FrontError> {
        // Built on copies: the servers' order is the chosen plan's (outer side's first).
        let (old_join, old) = self.build(false, l, &mut servers.to_vec())?;
        let (new_join, new) = self.build(true, l, &mut servers.to_vec())?;
        // joinrel->consider_startup: root->tuple_fraction > 0, which a LIMIT makes.
        let consider_startup = matches!(l.limit, Some((_, Some(_))));
        Ok(match add_path_keeps(&new_join, &old_join, consider_startup) {
            Kept::Old => false,
            Kept::New => true,
            Kept::Both => {
                let (new, old) = (self.estimate(&new.plan), self.estimate(&old.plan));
                // compare_path_costs(TOTAL_COST): total, then startup; a tie keeps the first.
                new.total < old.total || (new.total == old.total && new.startup < old.startup)
            }
        })
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
    fn build(&self, swapped: bool, l: &Layers, servers: &mut Vec<String>) -> Result<(Estimate, Planned), FrontError> {
        let [first, second] = &self.sides;
        let (o, i) = if swapped { (second, first) } else { (first, second) };
        let mut p = Planner { coord: self.coord, servers: std::mem::take(servers) };
        let outer = p.side(o.rel, o.name, o.conjuncts, &o.used, self.at);
        let inner = p.side(i.rel, i.name, i.conjuncts, &i.used, self.at);
        *servers = p.servers;
        let (outer, inner) = (outer?, inner?);
        // Join numbering → the join's output (the outer's used columns, then the inner's).
        let n = first.rel.columns.len() + second.rel.columns.len();
        let mut map = vec![None; n];
        for (pos, (side, c)) in o.used.iter().map(|&c| (o, c)).chain(i.used.iter().map(|&c| (i, c))).enumerate() {
            map[side.first + c] = Some(pos);
        }
        let mut plan = join_method(self.coord, (outer, inner), (o.key_output(), i.key_output()), swapped, self.at)?;
        let join_estimate = self.estimate(&plan);
        if let Some(f) = self.rest.iter().map(|e| rewrite(e, &map)).reduce(|x, y| Expr::bin(BinOp::And, x, y)) {
            plan = Plan::Result { child: Box::new(plan), filter: Some(f), targets: None };
        }
        let order_keys = order_keys_of(l);
        let planned = |plan| Planned {
            plan,
            columns: self.columns.to_vec(),
            servers: vec![],
            order_key: order_keys.first().copied(),
            order_keys: order_keys.clone(),
        };
        if let Some((strategy, keys, aggs)) = &l.agg {
            let keys = keys.iter().map(|e| rewrite(e, &map)).collect();
            let aggs =
                aggs.iter().map(|a| AggCall { func: a.func, arg: a.arg.as_ref().map(|e| rewrite(e, &map)) }).collect();
            plan = Plan::Agg { child: Box::new(plan), strategy: strategy.clone(), group_by: keys, aggs };
            if let Some(h) = &l.having {
                plan = Plan::Result { child: Box::new(plan), filter: Some(h.clone()), targets: None };
            }
            return Ok((join_estimate, planned(finish(plan, l.sort.clone(), l.targets.clone(), l.limit))));
        }
        let sort = l
            .sort
            .as_ref()
            .map(|keys| keys.iter().map(|k| SortKey { expr: rewrite(&k.expr, &map), desc: k.desc }).collect());
        let join_cols: Vec<String> = o
            .used
            .iter()
            .map(|&c| o.rel.columns[c].name.clone())
            .chain(i.used.iter().map(|&c| i.rel.columns[c].name.clone()))
            .collect();
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

/// `… UNION ALL …`: an Append over the branches, each planned as a query of its own
/// (PostgreSQL flattens UNION ALL into an append relation the same way), then the
/// union's ORDER BY / LIMIT over it. UNION without ALL, INTERSECT and EXCEPT are not
/// planned.
fn plan_union(
    coord: &Node,
    q: &ast::Query,
    text: &str,
    servers: &mut Vec<String>,
    depth: usize,
) -> Result<Planned, FrontError> {
    let at = query_location(q);
    let mut branches = Vec::new();
    union_branches(q.body.as_ref(), &mut branches, at)?;
    let mut children = Vec::new();
    let mut columns: Option<Vec<Column>> = None;
    for b in branches {
        let mut branch = q.clone();
        branch.body = Box::new(b.clone());
        branch.order_by = None;
        branch.limit = None;
        branch.offset = None;
        branch.fetch = None;
        let planned = plan_query_into(coord, &branch, text, servers, depth + 1)?;
        match &columns {
            None => columns = Some(planned.columns.clone()),
            Some(c) if c.len() != planned.columns.len() => {
                return Err(FrontError::at(
                    "each UNION query must have the same number of columns",
                    query_location(&branch),
                ));
            }
            Some(c) => {
                if let Some((x, y)) = c.iter().zip(&planned.columns).find(|(x, y)| x.ty != y.ty) {
                    return Err(FrontError::at(
                        format!(
                            "UNION types {:?} and {:?} cannot be matched (columns {} and {})",
                            x.ty, y.ty, x.name, y.name
                        ),
                        query_location(&branch),
                    ));
                }
            }
        }
        children.push(planned.plan);
    }
    let columns = columns.unwrap_or_default();
    let append =
        Planned { plan: live_members(children), columns, servers: vec![], order_key: None, order_keys: vec![] };
    if q.order_by.is_none() && q.limit.is_none() && q.offset.is_none() && q.fetch.is_none() {
        return Ok(append);
    }
    // ORDER BY / LIMIT of the whole union: a query over it, as over a subquery.
    let outer = wrapper_query(q, "unnamed_subquery", &append.columns, at)?;
    plan_over(&outer, text, "unnamed_subquery", append)
}

/// The append relation of UNION ALL's branches: a branch that is a dummy relation (a
/// constant-false WHERE) is left out, as `set_append_rel_size` skips dummy children,
/// and a lone member is the plan itself (setrefs.c removes a one-child Append, so that
/// member is not async). With every branch dummy, one dummy Result stands for them.
fn live_members(children: Vec<Plan>) -> Plan {
    let (dummy, mut live): (Vec<Plan>, Vec<Plan>) =
        children.into_iter().partition(|c| matches!(c, Plan::EmptyResult { .. }));
    match (live.len(), dummy.into_iter().next()) {
        (0, Some(d)) => d,
        (1, _) => live.pop().expect("one member"),
        _ => Plan::Append { children: live },
    }
}

fn union_branches<'q>(e: &'q SetExpr, out: &mut Vec<&'q SetExpr>, at: Location) -> Result<(), FrontError> {
    match e {
        SetExpr::SetOperation { op: ast::SetOperator::Union, set_quantifier: ast::SetQuantifier::All, left, right } => {
            union_branches(left, out, at)?;
            union_branches(right, out, at)
        }
        SetExpr::SetOperation { op, set_quantifier, .. } => {
            let all = if *set_quantifier == ast::SetQuantifier::None { "" } else { " (as written)" };
            Err(FrontError::unsupported(format!("{op}{all}: only UNION ALL is planned"), at))
        }
        SetExpr::Query(inner) if inner.order_by.is_none() && inner.limit.is_none() && inner.offset.is_none() => {
            union_branches(inner.body.as_ref(), out, at)
        }
        SetExpr::Select(_) => {
            out.push(e);
            Ok(())
        }
        _ => {
            Err(FrontError::unsupported("this UNION branch (VALUES, or a parenthesized query with ORDER BY/LIMIT)", at))
        }
    }
}

/// `SELECT * FROM name` with `q`'s ORDER BY / LIMIT / OFFSET: how the ordering of a
/// whole UNION is planned over it.
fn wrapper_query(q: &ast::Query, name: &str, _columns: &[Column], at: Location) -> Result<ast::Query, FrontError> {
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
fn plan_over(q: &ast::Query, text: &str, name: &str, sub: Planned) -> Result<Planned, FrontError> {
    let at = query_location(q);
    let mut outer = q.clone();
    if let SetExpr::Select(s) = outer.body.as_mut() {
        if let Some(from) = s.from.first_mut() {
            if matches!(from.relation, TableFactor::Derived { .. }) {
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
    if let Some(f) = l.filter {
        plan = Plan::Result { child: Box::new(plan), filter: Some(f), targets: None };
    }
    if let Some((strategy, group_by, aggs)) = l.agg {
        plan = Plan::Agg { child: Box::new(plan), strategy, group_by, aggs };
    }
    if let Some(h) = l.having {
        plan = Plan::Result { child: Box::new(plan), filter: Some(h), targets: None };
    }
    let plan = finish(plan, l.sort, l.targets, l.limit);
    Ok(Planned { plan, columns, servers: vec![], order_key: order_keys.first().copied(), order_keys })
}

fn query_location(q: &ast::Query) -> Location {
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
        let partitioned = matches!(rel.kind, RelKind::Partitioned { .. });
        // A constant-false qual (`WHERE 1 = 2`) makes the relation a dummy one, as if
        // every partition were pruned: a Result with One-Time Filter: false, no scan.
        let dummy = conjuncts.iter().any(|c| constant_qual(c) == Some(false));
        let leaves = if dummy { Vec::new() } else { self.leaves(rel, &conjuncts) };
        // EXPLAIN names: the parent keeps its alias when the plan refers to it (an
        // Append over its partitions); partitions get alias_1, alias_2, … in bound
        // order, the first one the bare alias when the parent is not referred to.
        let pushed_agg = l.agg.is_some() && self.partitionwise(rel, &l) && leaves.len() > 1;
        // enable_partitionwise_aggregate with the partition key not among the grouping
        // keys: PostgreSQL aggregates each partition partially and finalizes above the
        // Append (PARTITIONWISE_AGGREGATE_PARTIAL); the sandbox has no partial aggregate.
        if l.agg.is_some()
            && partitioned
            && leaves.len() > 1
            && !self.partitionwise(rel, &l)
            && self.coord.setting_on("enable_partitionwise_aggregate", false)
        {
            return Err(FrontError::unsupported(
                "enable_partitionwise_aggregate = on with the partition key not among the GROUP BY keys: \
                 PostgreSQL aggregates each partition partially (Partial Aggregate, then Finalize Aggregate), \
                 which the sandbox does not plan",
                at,
            ));
        }
        let parent_named = partitioned && leaves.len() > 1 && !pushed_agg;
        let leaves: Vec<Leaf> = leaves
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                let k = i + parent_named as usize;
                let name = partitioned.then(|| ScanName {
                    alias: if k == 0 { alias.to_string() } else { format!("{alias}_{k}") },
                    parent: parent_named.then(|| alias.to_string()),
                });
                Leaf { rel: r, name }
            })
            .collect();
        let used = used_columns(&l, rel.columns.len());
        let where_cols = l.filter.as_ref().map(|f| columns_of(f, rel.columns.len())).unwrap_or_default();
        let map = remap(&used, rel.columns.len());

        if let Some((strategy, keys, aggs)) = &l.agg {
            let keys: Vec<Expr> = keys.iter().map(|e| rewrite(e, &map)).collect();
            let aggs: Vec<AggCall> =
                aggs.iter().map(|a| AggCall { func: a.func, arg: a.arg.as_ref().map(|e| rewrite(e, &map)) }).collect();
            // postgres_fdw pushes an aggregate down when the grouped relation is a
            // foreign table (GetForeignUpperPaths is called for an input rel with an
            // FDW): a plain foreign table, not a partitioned table pruned to one foreign
            // partition (an appendrel), which only partitionwise aggregation pushes.
            let single_foreign = !partitioned && matches!(rel.kind, RelKind::Foreign { .. });
            let pushed = (pushed_agg || single_foreign) && pushable_agg(&keys, &aggs) && !dummy;
            let (mut having, mut sort, mut limit) = (l.having, l.sort, l.limit);
            let mut plan = if pushed {
                // A full partitionwise aggregation (the partition key among the grouping
                // keys: every group in one partition) applies HAVING in each partition's
                // aggregate (create_partitionwise_grouping_paths, PARTITIONWISE_AGGREGATE_FULL).
                let per_partition = if pushed_agg { having.take() } else { None };
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
                    child: Box::new(append_leaves(children, rel, &used)),
                    strategy: strategy.clone(),
                    group_by: keys.clone(),
                    aggs,
                }
            };
            if let (true, Plan::ForeignScan(f)) = (pushed && single_foreign, &mut plan) {
                // The aggregate runs remotely, and so do HAVING (postgres_fdw's
                // foreign_grouping_ok ships it), ORDER BY (add_foreign_ordered_paths) and
                // then LIMIT/OFFSET (add_foreign_final_paths). HAVING and the sort keys
                // are over the Agg's output: keys then aggregates, the remote targets.
                f.remote.having = having.take().map(|h| split_and(&h)).unwrap_or_default();
                f.remote.order_by = sort.take().unwrap_or_default();
                push_limit(f, &mut limit);
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
        let plan = match &sort {
            // Several partitions, ordered, with LIMIT: each child ordered, merged. Only
            // when a foreign partition sorts remotely (postgres_fdw's presorted path
            // costs 5% more, DEFAULT_FDW_SORT_MULTIPLIER): with local partitions only,
            // each of which would need its own Sort, PostgreSQL's costs favour one
            // bounded Sort over the Append (a cost-based choice, simplified).
            Some(keys)
                if leaves.len() > 1
                    && plain_keys
                    && l.limit.is_some()
                    && leaves.iter().any(|leaf| matches!(leaf.rel.kind, RelKind::Foreign { .. })) =>
            {
                let children: Vec<Plan> = leaves
                    .iter()
                    .map(|leaf| self.scan(leaf, &conjuncts, &used, &where_cols, Some(keys), at))
                    .collect::<Result<_, _>>()?;
                let plan = Plan::MergeAppend { children, keys: keys.clone() };
                return Ok(finish(plan, None, targets, l.limit));
            }
            // One foreign relation: the remote server sorts.
            Some(keys) if leaves.len() == 1 && plain_keys && matches!(leaves[0].rel.kind, RelKind::Foreign { .. }) => {
                let mut plan = self.scan(&leaves[0], &conjuncts, &used, &where_cols, Some(keys), at)?;
                let mut limit = l.limit;
                if let (false, Plan::ForeignScan(f)) = (partitioned, &mut plan) {
                    push_limit(f, &mut limit);
                }
                return Ok(finish(plan, None, targets, limit));
            }
            _ => {
                let children: Vec<Plan> = leaves
                    .iter()
                    .map(|leaf| self.scan(leaf, &conjuncts, &used, &where_cols, None, at))
                    .collect::<Result<_, _>>()?;
                append_leaves(children, rel, &used)
            }
        };
        let mut plan = plan;
        let mut limit = l.limit;
        if let (false, None, Plan::ForeignScan(f)) = (partitioned, &sort, &mut plan) {
            push_limit(f, &mut limit);
        }
        Ok(finish(plan, sort, targets, limit))
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
            let part = PartitionKey { strategy: *strategy, key, rel, siblings: &bounds };
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
    fn side(
        &mut self,
        rel: &'a Relation,
        alias: &str,
        conjuncts: &[Expr],
        used: &[usize],
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
        let mut children = Vec::new();
        for (i, r) in leaves.into_iter().enumerate() {
            let k = i + parent_named as usize;
            let name = if partitioned {
                Some(ScanName {
                    alias: if k == 0 { alias.to_string() } else { format!("{alias}_{k}") },
                    parent: parent_named.then(|| alias.to_string()),
                })
            } else {
                (alias != rel.name).then(|| ScanName { alias: alias.to_string(), parent: None })
            };
            children.push(self.scan(&Leaf { rel: r, name }, conjuncts, used, &where_cols, None, at)?);
        }
        Ok(append(children))
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
        let mut quals: Vec<Expr> = conjuncts.iter().filter(|c| !is_col_eq_const(c)).cloned().collect();
        quals.extend(conjuncts.iter().filter(|c| is_col_eq_const(c)).cloned());
        let remote = RemoteQuery {
            table: remote_table.clone(),
            table_columns: leaf.rel.columns(),
            targets,
            quals,
            group_by: vec![],
            having: vec![],
            order_by: vec![],
            limit: None,
            offset: None,
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
    fn scan(
        &mut self,
        leaf: &Leaf,
        conjuncts: &[Expr],
        used: &[usize],
        where_cols: &[usize],
        order: Option<&Vec<SortKey>>,
        at: Location,
    ) -> Result<Plan, FrontError> {
        if let RelKind::Foreign { .. } = leaf.rel.kind {
            let targets = used.iter().map(|&c| RemoteTarget::Col(c)).collect();
            let mut f = self.foreign_scan(leaf, conjuncts, targets, at)?;
            if let Some(keys) = order {
                // Keys are over the used columns; the remote query's over the table's.
                f.remote.order_by =
                    keys.iter().map(|k| SortKey { expr: rewrite(&k.expr, &inverse(used)), desc: k.desc }).collect();
            }
            return Ok(Plan::ForeignScan(f));
        }
        let plan = self.local_scan(leaf, conjuncts, used, where_cols);
        Ok(match order {
            Some(keys) => Plan::Sort { child: Box::new(plan), keys: keys.clone() },
            None => plan,
        })
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
            let filter = conjuncts.iter().map(|c| rewrite(c, &map)).reduce(|a, b| Expr::bin(BinOp::And, a, b));
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
            targets.extend(aggs.iter().map(|a| RemoteTarget::Agg(a.func, a.arg.as_ref().map(table_col))));
            let mut f = self.foreign_scan(leaf, conjuncts, targets, at)?;
            f.remote.group_by = keys.iter().map(table_col).collect();
            // HAVING is over the Agg's output: the remote targets.
            f.remote.having = agg.having.map(split_and).unwrap_or_default();
            return Ok(Plan::ForeignScan(f));
        }
        let input = self.local_scan(leaf, conjuncts, used, where_cols);
        let strategy = if keys.is_empty() { AggStrategy::Plain } else { AggStrategy::Hashed };
        let plan = Plan::Agg { child: Box::new(input), strategy, group_by: keys.to_vec(), aggs: aggs.to_vec() };
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

/// Can the aggregate go into a remote query? Grouping keys and arguments must be
/// columns (the remote query's targets are). Every aggregate the sandbox has is a
/// built-in one, which postgres_fdw ships (avg too: a full aggregation, per table or
/// per partition, not a partial one).
fn pushable_agg(keys: &[Expr], aggs: &[AggCall]) -> bool {
    keys.iter().all(|k| matches!(k, Expr::Col(_)))
        && aggs.iter().all(|a| a.arg.as_ref().is_none_or(|e| matches!(e, Expr::Col(_))))
}

/// Sort, projection and Limit on top, as the logical plan had them.
fn finish(
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
/// PostgreSQL's dummy relation: a Result that returns nothing, with the used columns.
fn append_leaves(children: Vec<Plan>, rel: &Relation, used: &[usize]) -> Plan {
    if children.is_empty() {
        let all = rel.columns();
        return Plan::EmptyResult { columns: used.iter().map(|&c| all[c].clone()).collect() };
    }
    append(children)
}

fn append(mut children: Vec<Plan>) -> Plan {
    if children.len() == 1 {
        return children.pop().expect("one child");
    }
    Plan::Append { children }
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
            Expr::Col(_) | Expr::Func(..) | Expr::ExecParam(..) => false,
            Expr::Bin(_, l, r) => is_constant(l) && is_constant(r),
            Expr::Not(x) | Expr::IsNull(x, _) => is_constant(x),
        }
    }
    // A qual is true only if it is true: false and NULL both reject every row.
    is_constant(e).then(|| matches!(e.eval(&[]), Datum::Int(v) if v != 0))
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

fn is_col_eq_const(e: &Expr) -> bool {
    matches!(e, Expr::Bin(BinOp::Eq, l, r)
        if matches!((l.as_ref(), r.as_ref()), (Expr::Col(_), Expr::Const(_)) | (Expr::Const(_), Expr::Col(_))))
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
fn remap(kept: &[usize], n: usize) -> Vec<Option<usize>> {
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

fn rewrite(e: &Expr, map: &[Option<usize>]) -> Expr {
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
    rel: &'a Relation,
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
        for c in conjuncts {
            if let Expr::Bin(BinOp::Or, ..) = c {
                if !split_or(c).iter().any(|arm| self.may_hold(b, &split_and(arm))) {
                    return false;
                }
            }
        }
        let (strategy, key, rel) = (self.strategy, self.key, self.rel);
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
                    .map(|&k| match (eq_of(k), is_null(k)) {
                        (Some(d), _) => Some((rel.columns[k].ty, d)),
                        (None, true) => Some((rel.columns[k].ty, Datum::Null)),
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
}
