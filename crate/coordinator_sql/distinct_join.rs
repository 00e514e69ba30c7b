//! SELECT DISTINCT over a join, as PostgreSQL 15's `create_distinct_paths` makes the
//! rows distinct over the join's cheapest path: a Unique over that path sorted by the
//! DISTINCT keys (ORDER BY's keys first when ORDER BY names only DISTINCT columns,
//! as `transformDistinctClause` orders them), or a HashAggregate without aggregates
//! over it, whichever costs less once the levels above (ORDER BY, the select list,
//! LIMIT) are added (`grouping_planner::cheapest`, the final relation's `add_path`).
//!
//! Protocol: the shard planner gives a DISTINCT query's logical plan an Agg marked
//! `AggStrategy::Unique` over a Sort, which `peel` strips; a join's upper level calls
//! [`distinct_over`] with the join's plan where it would aggregate (`agg_over_join`),
//! and gets the distinct node alone (what `finish` puts above it is added by the
//! caller, as for any aggregate).
//!
//! Which queries: DISTINCT (not DISTINCT ON) over a join of plain relations, without
//! GROUP BY, aggregates, window functions or subquery expressions
//! ([`distinct_join_ok`]); a DISTINCT over
//! a subquery or function alone stays refused by name.
//!
//! Invariants: a Unique always reads its input sorted by every DISTINCT key (so equal
//! rows are adjacent); the HashAggregate has the DISTINCT keys as its group keys and no
//! aggregate.
//!
//! Where it departs from PostgreSQL: only the join's cheapest path is made distinct
//! (PostgreSQL also tries a Unique over each join path already sorted by the keys,
//! e.g. a Merge Join's); under a partitionwise join the Append is made distinct by a
//! Unique over a Sort, not by cost.

use super::grouping_planner::{cheapest, group_pathkeys, grouping_candidates, input_pathkeys, Upper};
use super::{rewrite, Layers};
use crate::coordinator_sql::catalog::Node;
use crate::plan::{AggSplit, AggStrategy, Expr, Plan, SortKey};
use sqlparser::ast::{self, SelectItem};

/// Is `s` a DISTINCT the join planner makes distinct here (see the module doc)?
pub(super) fn distinct_join_ok(q: &ast::Query, s: &ast::Select) -> bool {
    let plain_members = s.from.iter().all(|f| {
        std::iter::once(&f.relation)
            .chain(f.joins.iter().map(|j| &j.relation))
            .all(|r| matches!(r, ast::TableFactor::Table { args: None, .. }))
    });
    let joined = s.from.len() > 1 || s.from.iter().any(|f| !f.joins.is_empty());
    let no_group = matches!(&s.group_by, ast::GroupByExpr::Expressions(v, _) if v.is_empty()) && s.having.is_none();
    let no_aggregate = s.projection.iter().all(|i| match i {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
            !crate::shard_sql::contains_aggregate_call(e)
        }
        _ => true,
    });
    matches!(s.distinct, Some(ast::Distinct::Distinct))
        && joined
        && plain_members
        && no_group
        && no_aggregate
        && !super::super::subselect::has_sublinks(q)
        && !super::super::windowagg::has_window_items(q)
}

/// Is the query's aggregate a DISTINCT's (its logical Agg marked Unique)?
pub(super) fn is_distinct(l: &Layers) -> bool {
    matches!(&l.agg, Some((AggStrategy::Unique, ..)))
}

/// The DISTINCT over the join's plan `input` (`map`: the query's column numbering to
/// the join's output): a Unique over a Sort or a HashAggregate, by cost with the
/// levels above (`create_distinct_paths`, then `create_ordered_paths` and the final
/// relation). `input` unchanged without a DISTINCT.
pub(super) fn distinct_over(coord: &Node, input: Plan, l: &Layers, map: &[Option<usize>]) -> Plan {
    let Some((_, keys, _)) = &l.agg else { return input };
    let keys: Vec<Expr> = keys.iter().map(|e| rewrite(e, map)).collect();
    let agg = |child: Plan, strategy: AggStrategy| distinct_node(child, &keys, strategy);
    let pathkeys = group_pathkeys(keys.len(), l.sort.as_deref());
    let input_keys = input_pathkeys(&keys, &pathkeys);
    let upper = Upper { having: None, sort: l.sort.as_deref(), targets: l.targets.as_deref(), limit: l.limit };
    let candidates = grouping_candidates(&input, None, &input_keys, &pathkeys, &agg, &upper);
    let chosen = cheapest(coord, candidates, &upper, vec![]).and_then(take_distinct_node);
    // (`cheapest` has a path for any candidate; should it not, sorting is always right.)
    chosen.unwrap_or_else(|| sorted_unique(input, &keys))
}

/// A Unique over `input` sorted by every key: a DISTINCT that is always right (the
/// partitionwise join's Append, `agg_over_join`).
pub(super) fn sorted_unique(input: Plan, keys: &[Expr]) -> Plan {
    let sort = keys.iter().map(|k| SortKey { expr: k.clone(), desc: false }).collect();
    distinct_node(Plan::Sort { child: Box::new(input), keys: sort }, keys, AggStrategy::Sorted)
}

/// The distinct node over `child`: a sorted strategy is a Unique (`create_upper_unique_path`),
/// a hashed one a HashAggregate without aggregates.
fn distinct_node(child: Plan, keys: &[Expr], strategy: AggStrategy) -> Plan {
    Plan::Agg {
        child: Box::new(child),
        strategy: match strategy {
            AggStrategy::Sorted => AggStrategy::Unique,
            other => other,
        },
        group_by: keys.to_vec(),
        aggs: vec![],
        split: AggSplit::Simple,
    }
}

/// The distinct node in the whole plan `cheapest` chose (below its Limit, projection
/// and Sort).
fn take_distinct_node(plan: Plan) -> Option<Plan> {
    match plan {
        p @ Plan::Agg { .. } => Some(p),
        Plan::Limit { child, .. } | Plan::Result { child, .. } | Plan::Sort { child, .. } => take_distinct_node(*child),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan() -> Plan {
        Plan::EmptyResult { columns: vec![], rels: vec![], joined: false }
    }

    #[test]
    fn a_sorted_distinct_is_a_unique_over_a_sort_of_every_key() {
        let keys = [Expr::Col(1), Expr::Col(0)];
        let Plan::Agg { child, strategy, group_by, aggs, .. } = sorted_unique(scan(), &keys) else {
            panic!("not an Agg")
        };
        assert_eq!(strategy, AggStrategy::Unique);
        assert_eq!(group_by, keys.to_vec());
        assert!(aggs.is_empty());
        let Plan::Sort { keys: sort, .. } = *child else { panic!("no Sort under the Unique") };
        assert_eq!(sort.iter().map(|k| k.expr.clone()).collect::<Vec<_>>(), keys.to_vec());
    }

    #[test]
    fn the_distinct_node_is_found_under_the_upper_levels() {
        let unique = distinct_node(scan(), &[Expr::Col(0)], AggStrategy::Hashed);
        let whole = Plan::Limit {
            child: Box::new(Plan::Sort { child: Box::new(unique.clone()), keys: vec![] }),
            offset: 0,
            count: Some(3),
        };
        assert_eq!(take_distinct_node(whole).map(|p| format!("{p:?}")), Some(format!("{unique:?}")));
        assert!(take_distinct_node(scan()).is_none());
    }

    #[test]
    fn only_plain_distinct_over_a_join_qualifies() {
        let ok = |sql: &str| {
            let q = match sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, sql)
                .expect("parses")
                .remove(0)
            {
                ast::Statement::Query(q) => q,
                _ => panic!("not a query"),
            };
            let ast::SetExpr::Select(s) = q.body.as_ref() else { panic!("not a select") };
            distinct_join_ok(&q, s)
        };
        assert!(ok("select distinct a.v from pt a join loc b on a.id = b.id"));
        assert!(ok("select distinct a.v, b.v from pt a, loc b where a.id = b.id"));
        assert!(!ok("select distinct v from pt"));
        assert!(!ok("select distinct on (a.v) a.v from pt a join loc b on a.id = b.id"));
        assert!(!ok("select distinct count(*) from pt a join loc b on a.id = b.id"));
        assert!(!ok("select distinct row_number() over () from pt a join loc b on a.id = b.id"));
        assert!(!ok("select distinct a.v from pt a join generate_series(1, 3) g on g = a.id"));
        assert!(!ok("select distinct a.v from pt a join loc b on a.id = b.id where a.v in (select 1)"));
    }
}
