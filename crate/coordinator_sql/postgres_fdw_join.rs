//! A join of two foreign tables on one server, pushed to that server as one Foreign
//! Scan: postgres_fdw's `postgresGetForeignJoinPaths` and `foreign_join_ok`
//! (PostgreSQL 15), over the two relations' own scans.
//!
//! The protocol, as postgres_fdw runs it for a join relation (the first pair of its
//! sides the planner meets, FROM's first relation outer):
//!
//! 1. `foreign_join_ok`: both sides are pushdown-safe on the same server: plain scans
//!    of foreign tables or joins already pushed (no aggregate, ORDER BY or LIMIT of
//!    their own, no condition they evaluate locally); the join is inner, left, right or full (PostgreSQL 15 pushes no semi or
//!    anti join); every join clause is shippable (`is_foreign_expr`); a full join's
//!    sides have no conditions (postgres_fdw would deparse them as subqueries, which
//!    the sandbox does not: `full_join_needs_subquery` tells the join search, which
//!    refuses the query by name).
//! 2. Where the conditions go (`fpinfo->joinclauses` is the ON list, `remote_conds`
//!    the WHERE; a side's conditions are a base relation's own, or a pushed join's
//!    WHERE, pulled up): an inner join's join clauses, then the inner side's
//!    conditions, then the outer side's, all in ON; a left join's join clauses and its inner
//!    (nullable) side's conditions in ON, its other conditions (WHERE's over the
//!    nullable side, then the outer side's own) in WHERE. A right join is a left join
//!    with its sides swapped (`r2 LEFT JOIN r1`).
//! 3. The scan returns the first side's columns, then the second's (the join
//!    relation's target list, built from the pair in FROM order), whichever side is
//!    outer in the remote join; a pushed side's relations and join tree nest under
//!    the new join (deparse.c's nested `(… INNER JOIN …)`, EXPLAIN's
//!    `((r1) INNER JOIN (r2)) INNER JOIN (r4)`).
//!
//! Its estimate is `plan::costsize::foreign_join`'s; whether it wins is the join
//! planner's `add_path` against the local join paths.
//!
//! Invariants: the result's output is exactly the two scans' outputs, first then
//! second, so a caller's column numbering over the local join's output (outer's
//! columns then inner's, in FROM order) reads the Foreign Scan unchanged; every
//! condition is placed once; None whenever a rule above fails (then only local join
//! paths exist, as in PostgreSQL).
//!
//! Where it departs from PostgreSQL: a condition that cannot be shipped makes the
//! join not pushed (postgres_fdw keeps an inner join's unshippable clauses as local
//! conditions over the pushed join); for two relations (planner.rs) the ordered
//! foreign join path (the query's ORDER BY in the remote query,
//! `add_paths_with_pathkeys_for_rel`, `Join::remote_ordered_join`) is weighed by
//! cost, but no LIMIT is pushed over the join (`add_foreign_final_paths`); the join search of
//! three to five relations (joinrels.rs) weighs the pushed aggregate, ORDER BY and
//! LIMIT at its top by cost (`add_foreign_grouping_paths`, `add_foreign_final_paths`
//! for join relations). A full join whose side has conditions (a subquery in
//! PostgreSQL's remote query) is not pushed here, and the join search refuses it by
//! name. PostgreSQL 15 builds no parameterized foreign join paths either ("XXX
//! Consider parameterized paths").

use super::shippable::is_foreign_expr;
use crate::plan::{
    AggCall, Expr, ForeignScanPlan, JoinType, Plan, RemoteJoin, RemoteJoinTree, RemoteQuery, RemoteRel, RemoteTarget,
};

/// One side of a join to push: its scan (a plain foreign scan, as its relation alone
/// is planned), the name the query gives it, and its range-table index (`r<n>`).
#[derive(Clone, Copy)]
pub struct ForeignSide<'a> {
    pub scan: &'a ForeignScanPlan,
    pub alias: &'a str,
    pub rt_index: usize,
}

/// `postgresGetForeignJoinPaths` for one pair: the Foreign Scan of `first` joined with
/// `second` (FROM order), or None when postgres_fdw would not push the join.
///
/// Either side may itself be a pushed-down join (`foreign_join_ok` over join
/// relations whose `fpinfo` is pushdown-safe): its relations and join tree nest
/// under the new join, its WHERE (`remote_conds`) is pulled up as a base relation's
/// conditions are.
///
/// `join_type` has `first` as its outer side (`Right`: `second` is the preserved
/// one). `join_clauses` (the join's restrictlist, in PostgreSQL's order: the clauses
/// that are no equivalence class's first, then the equalities) and `other_conds`
/// (WHERE conditions applied above an outer join) are over the pair's output:
/// `first`'s targets, then `second`'s.
pub fn foreign_join_path(
    first: ForeignSide,
    second: ForeignSide,
    join_type: JoinType,
    join_clauses: &[Expr],
    other_conds: &[Expr],
) -> Option<ForeignScanPlan> {
    let (a, b) = (&first.scan.remote, &second.scan.remote);
    if first.scan.server != second.scan.server || !pushdown_safe(a) || !pushdown_safe(b) {
        return None;
    }
    if !matches!(join_type, JoinType::Inner | JoinType::Left | JoinType::Right | JoinType::Full) {
        return None;
    }
    if !join_clauses.iter().chain(other_conds).all(|e| is_foreign_expr(e) && !has_params(e)) {
        return None;
    }
    if join_type == JoinType::Inner && !other_conds.is_empty() {
        return None;
    }
    // A full join's side with conditions of its own: postgres_fdw deparses it as a
    // subquery (`make_outerrel_subquery`), which the sandbox does not.
    if join_type == JoinType::Full && (!a.quals.is_empty() || !b.quals.is_empty()) {
        return None;
    }
    let width_a = a.table_columns.len();
    let mut table_columns = a.table_columns.clone();
    table_columns.extend(b.table_columns.iter().cloned());
    let mut targets = a.targets.clone();
    targets.extend(b.targets.iter().map(|t| match t {
        RemoteTarget::Col(c) => RemoteTarget::Col(c + width_a),
        other => other.clone(),
    }));
    // The pair's output column k is target k: a column of `table_columns`.
    let to_table = |e: &Expr| {
        e.map_cols(&|k| match targets.get(k) {
            Some(RemoteTarget::Col(c)) => *c,
            _ => k,
        })
    };
    // Each side's `remote_conds`: a base relation's conditions, a join's WHERE.
    let quals_a: Vec<Expr> = a.quals.clone();
    let quals_b: Vec<Expr> = b.quals.iter().map(|e| e.map_cols(&|c| c + width_a)).collect();
    let clauses: Vec<Expr> = join_clauses.iter().map(to_table).collect();
    let others: Vec<Expr> = other_conds.iter().map(to_table).collect();
    let (rels_a, tree_a) = side_tree(&first, 0, 0);
    let (rels_b, tree_b) = side_tree(&second, width_a, rels_a.len());
    // The remote join's outer and inner sides (a right join swapped into a left one).
    let (jt, outer, inner, outer_quals, inner_quals) = match join_type {
        JoinType::Right => (JoinType::Left, tree_b, tree_a, quals_b, quals_a),
        jt => (jt, tree_a, tree_b, quals_a, quals_b),
    };
    // foreign_join_ok's placement: an inner join's restrictions all in ON (the
    // clauses, then the inner side's, then the outer side's); a left join's ON clause
    // and its nullable side's in ON, the rest in WHERE.
    let mut on = clauses.clone();
    let mut where_ = vec![];
    match jt {
        JoinType::Inner => {
            on.extend(inner_quals);
            on.extend(outer_quals);
        }
        JoinType::Left => {
            on.extend(inner_quals);
            where_.extend(others);
            where_.extend(outer_quals);
        }
        // A full join's sides have no conditions here; WHERE's over both sides.
        _ => where_.extend(others),
    }
    let mut rels = rels_a;
    rels.extend(rels_b);
    let join = RemoteJoin {
        rels,
        tree: RemoteJoinTree::Join {
            join_type: jt,
            outer: Box::new(outer),
            inner: Box::new(inner),
            on,
            join_clauses: clauses.len(),
        },
    };
    let remote =
        RemoteQuery { quals: where_, join: Some(Box::new(join)), ..RemoteQuery::scan(&a.table, table_columns, &[]) };
    let remote = RemoteQuery { targets, ..remote };
    Some(ForeignScanPlan {
        relation: first.scan.relation.clone(),
        server: first.scan.server.clone(),
        remote,
        alias: None,
    })
}

/// Would postgres_fdw push this full join with a side deparsed as a subquery
/// (`foreign_join_ok`'s `make_outerrel_subquery`/`make_innerrel_subquery`: that side
/// has conditions of its own, `(SELECT … WHERE …) s4(c1, c2)` in the remote query)?
/// The sandbox does not deparse those: its caller refuses the query by name.
pub fn full_join_needs_subquery(
    first: ForeignSide,
    second: ForeignSide,
    join_type: JoinType,
    join_clauses: &[Expr],
    other_conds: &[Expr],
) -> bool {
    let (a, b) = (&first.scan.remote, &second.scan.remote);
    join_type == JoinType::Full
        && first.scan.server == second.scan.server
        && pushdown_safe(a)
        && pushdown_safe(b)
        && join_clauses.iter().chain(other_conds).all(|e| is_foreign_expr(e) && !has_params(e))
        && (!a.quals.is_empty() || !b.quals.is_empty())
}

/// A side's relations and join tree, moved to start at column `shift` of the new
/// join's `table_columns` and at relation `rel_shift` of its list: a base relation
/// is one `RemoteRel` (its conditions its own), a pushed-down join brings its own.
fn side_tree(side: &ForeignSide, shift: usize, rel_shift: usize) -> (Vec<RemoteRel>, RemoteJoinTree) {
    let q = &side.scan.remote;
    let moved = |e: &Expr| e.map_cols(&|c| c + shift);
    match q.join.as_deref() {
        Some(j) => {
            let rels = j
                .rels
                .iter()
                .map(|r| RemoteRel { first: r.first + shift, quals: r.quals.iter().map(moved).collect(), ..r.clone() })
                .collect();
            (rels, shift_tree(&j.tree, shift, rel_shift))
        }
        None => {
            let rel = RemoteRel {
                table: q.table.clone(),
                relation: side.scan.relation.clone(),
                alias: side.alias.to_string(),
                rt_index: side.rt_index,
                first: shift,
                ncols: q.table_columns.len(),
                quals: q.quals.iter().map(moved).collect(),
                parent: None,
            };
            (vec![rel], RemoteJoinTree::Rel(rel_shift))
        }
    }
}

/// A join tree with its columns moved by `shift` and its relations by `rel_shift`.
fn shift_tree(t: &RemoteJoinTree, shift: usize, rel_shift: usize) -> RemoteJoinTree {
    match t {
        RemoteJoinTree::Rel(r) => RemoteJoinTree::Rel(r + rel_shift),
        RemoteJoinTree::Join { join_type, outer, inner, on, join_clauses } => RemoteJoinTree::Join {
            join_type: *join_type,
            outer: Box::new(shift_tree(outer, shift, rel_shift)),
            inner: Box::new(shift_tree(inner, shift, rel_shift)),
            on: on.iter().map(|e| e.map_cols(&|c| c + shift)).collect(),
            join_clauses: *join_clauses,
        },
    }
}

/// `fpinfo->pushdown_safe` with no `local_conds`: a plain scan of one foreign table,
/// or a pushed-down join returning its rows as they are (no aggregate, ORDER BY or
/// LIMIT over it).
fn pushdown_safe(q: &RemoteQuery) -> bool {
    plain_scan(q)
        || (q.join.is_some() && !q.aggregated() && q.order_by.is_empty() && q.limit.is_none() && q.offset.is_none())
}

/// A scan of one foreign table that returns its rows as they are (what a join
/// relation can be built over).
fn plain_scan(q: &RemoteQuery) -> bool {
    q.join.is_none()
        && !q.aggregated()
        && q.order_by.is_empty()
        && q.limit.is_none()
        && q.offset.is_none()
        && !q.quals.iter().any(has_params)
}

/// A prepared statement's or an InitPlan's parameter: the sandbox numbers a joined
/// query's parameters in no order yet, so such a join is not pushed.
fn has_params(e: &Expr) -> bool {
    e.has_param() || e.has_exec_param()
}

/// The join's scan returning only the columns read above the join (`above`, in the
/// caller's numbering, in the order the remote target list takes: the join
/// relation's target), and `map` (the caller's numbering → the scan's output)
/// renumbered for it. A plan that is no foreign scan comes back unchanged.
pub fn keep_outputs(plan: Plan, map: &[Option<usize>], above: &[usize]) -> (Plan, Vec<Option<usize>>) {
    let Plan::ForeignScan(mut f) = plan else { return (plan, map.to_vec()) };
    let mut kept: Vec<usize> = vec![];
    for k in above.iter().filter_map(|&c| map.get(c).copied().flatten()) {
        if k < f.remote.targets.len() && !kept.contains(&k) {
            kept.push(k);
        }
    }
    f.remote.targets = kept.iter().filter_map(|&k| f.remote.targets.get(k).cloned()).collect();
    let renumbered = map.iter().map(|m| m.and_then(|k| kept.iter().position(|&x| x == k))).collect();
    (Plan::ForeignScan(f), renumbered)
}

/// `add_foreign_grouping_paths` over a pushed-down join: the aggregate (grouping keys
/// and aggregate arguments that are columns of the scan's output, `keys` then `aggs`)
/// and its HAVING (over that output) in the remote query, which then returns the
/// Aggregate's output; `Err(plan)` unchanged when it cannot be pushed
/// (`foreign_grouping_ok`: an expression key or argument, an unshippable HAVING).
pub fn push_aggregate(plan: Plan, keys: &[Expr], aggs: &[AggCall], having: Option<&Expr>) -> Result<Plan, Plan> {
    let Plan::ForeignScan(mut f) = plan else { return Err(plan) };
    let col = |e: &Expr| match e {
        Expr::Col(k) => match f.remote.targets.get(*k) {
            Some(RemoteTarget::Col(c)) => Some(*c),
            _ => None,
        },
        _ => None,
    };
    let key_cols: Option<Vec<usize>> = keys.iter().map(col).collect();
    let args: Option<Vec<Option<usize>>> =
        aggs.iter().map(|a| a.arg.as_ref().map_or(Some(None), |e| col(e).map(Some))).collect();
    let pushable = f.remote.join.is_some() && !f.remote.aggregated() && having.is_none_or(is_foreign_expr);
    let (Some(key_cols), Some(args), true) = (key_cols, args, pushable) else {
        return Err(Plan::ForeignScan(f));
    };
    let mut targets: Vec<RemoteTarget> = key_cols.iter().map(|&c| RemoteTarget::Col(c)).collect();
    targets.extend(aggs.iter().zip(&args).map(|(a, arg)| RemoteTarget::Agg(a.func, *arg, a.distinct)));
    f.remote.targets = targets;
    f.remote.group_by = key_cols;
    f.remote.having = having.map(|h| split_and(h)).unwrap_or_default();
    Ok(Plan::ForeignScan(f))
}

/// The AND-ed conditions of `e`, in order.
fn split_and(e: &Expr) -> Vec<Expr> {
    match e {
        Expr::Bin(crate::plan::BinOp::And, l, r) => {
            let mut v = split_and(l);
            v.extend(split_and(r));
            v
        }
        other => vec![other.clone()],
    }
}
