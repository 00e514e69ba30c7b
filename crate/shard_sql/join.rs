//! A shard runs a pushed-down join: the FROM clause postgres_fdw's
//! `deparseFromExprForRel` writes for a join of foreign tables on one server
//! (`FROM (public.t1 r1 INNER JOIN public.t2 r2 ON (((r1.a = r2.a))))`, nested for
//! more relations), planned as the shard's own join nodes, as the remote PostgreSQL
//! plans the statement it receives.
//!
//! The joined row is the relations' columns in the order the text names them (an
//! in-order walk of the join tree, which is also each join's outer row then inner
//! row), so the ON conditions, planned once over that whole row, need only be shifted
//! to a subtree's start to be read by it.
//!
//! Each join is a Hash Join on its equalities between the sides (a Nested Loop
//! without a join clause when an inner join has none); the other ON conditions:
//! over the inner side alone, a filter on that side (for an inner or left join the
//! same rows match); over the outer side alone of an inner join, a filter on it; over
//! both sides of an inner join, a filter above it. What else an outer join's ON holds
//! (postgres_fdw would send it; the coordinator's planner does not push it) is refused
//! by name, as are RIGHT joins (postgres_fdw writes them as LEFT), USING and NATURAL.
//!
//! Where it departs from PostgreSQL: the remote's planner would choose its join
//! method by cost; the shard always hashes (the rows are the same, their order is
//! not promised without ORDER BY).

use sqlparser::ast::{self, JoinConstraint, JoinOperator, TableFactor, TableWithJoins};

use super::expr::{ExprPlanner, Member, Relation, Scope, NO_AGG_IN_WHERE};
use super::node_span::NodeSpan;
use super::source::Source;
use super::SqlError;
use crate::plan::{BinOp, Expr, JoinType, Plan};
use crate::types::Catalog;

/// A join subtree: its plan, and where its columns lie in the whole joined row.
struct Sub {
    plan: Plan,
    start: usize,
    len: usize,
}

/// A join in FROM: the relation its columns form (with each member's name) and the
/// plan that produces its rows.
pub(super) fn resolve_join(
    from: &TableWithJoins,
    src: &Source,
    catalog: &Catalog,
) -> Result<(Relation, Plan), SqlError> {
    let mut rel = Relation { table: "join".into(), alias: None, columns: vec![], members: vec![] };
    collect_members(&from.relation, &from.joins, src, catalog, &mut rel)?;
    let sub = plan_joins(&from.relation, &from.joins, src, catalog, &rel, &mut 0)?;
    Ok((rel, sub.plan))
}

/// Adds every base relation of the tree to `rel`, in text order.
fn collect_members(
    first: &TableFactor,
    joins: &[ast::Join],
    src: &Source,
    catalog: &Catalog,
    rel: &mut Relation,
) -> Result<(), SqlError> {
    for factor in std::iter::once(first).chain(joins.iter().map(|j| &j.relation)) {
        match factor {
            TableFactor::NestedJoin { table_with_joins: t, alias: None } => {
                collect_members(&t.relation, &t.joins, src, catalog, rel)?
            }
            _ => {
                let base = super::select::table_relation(factor, src, catalog)?;
                let name = base.alias.clone().unwrap_or_else(|| base.table.clone());
                if rel.members.iter().any(|m| m.name == name) {
                    return Err(SqlError::new(
                        format!("table name \"{name}\" specified more than once"),
                        src.span_position(factor.node_span()),
                    ));
                }
                let start = rel.columns.len();
                rel.members.push(Member { name, table: base.table.clone(), start, len: base.columns.len() });
                rel.columns.extend(base.columns);
            }
        }
    }
    Ok(())
}

/// The plan of `first` joined with each of `joins` in turn; `next_member` counts the
/// base relations met so far (their order in `rel.members`).
fn plan_joins(
    first: &TableFactor,
    joins: &[ast::Join],
    src: &Source,
    catalog: &Catalog,
    rel: &Relation,
    next_member: &mut usize,
) -> Result<Sub, SqlError> {
    let mut outer = plan_factor(first, src, catalog, rel, next_member)?;
    for j in joins {
        let (jt, on) = match &j.join_operator {
            JoinOperator::Inner(c) => (JoinType::Inner, c),
            JoinOperator::LeftOuter(c) => (JoinType::Left, c),
            JoinOperator::FullOuter(c) => (JoinType::Full, c),
            _ => return Err(SqlError::unsupported("this kind of join", src.span_position(j.relation.node_span()))),
        };
        let JoinConstraint::On(on) = on else {
            return Err(SqlError::unsupported("JOIN without ON", src.span_position(j.relation.node_span())));
        };
        let inner = plan_factor(&j.relation, src, catalog, rel, next_member)?;
        let planner = ExprPlanner { src, rel };
        let cond = planner.plan_condition(on, &mut Scope::Rows { no_agg: NO_AGG_IN_WHERE }, "JOIN/ON")?;
        outer = join(outer, inner, jt, cond)
            .map_err(|what| SqlError::unsupported(what, src.span_position(on.node_span())))?;
    }
    Ok(outer)
}

fn plan_factor(
    factor: &TableFactor,
    src: &Source,
    catalog: &Catalog,
    rel: &Relation,
    next_member: &mut usize,
) -> Result<Sub, SqlError> {
    if let TableFactor::NestedJoin { table_with_joins: t, alias: None } = factor {
        return plan_joins(&t.relation, &t.joins, src, catalog, rel, next_member);
    }
    let m = rel.members.get(*next_member).ok_or_else(|| SqlError::new("join member out of order", None))?;
    *next_member += 1;
    let columns = rel.columns[m.start..m.start + m.len].to_vec();
    Ok(Sub { plan: Plan::SeqScan { table: m.table.clone(), columns, alias: None }, start: m.start, len: m.len })
}

/// One join node over `outer` and `inner` (adjacent in the joined row) with the ON
/// condition `cond`, over the whole joined row.
fn join(outer: Sub, inner: Sub, jt: JoinType, cond: Expr) -> Result<Sub, &'static str> {
    let (start, split, end) = (outer.start, inner.start, inner.start + inner.len);
    let mut conds = vec![];
    split_and(cond, &mut conds);
    let (mut keys, mut on_outer, mut on_inner, mut on_both) = (vec![], vec![], vec![], vec![]);
    for c in conds {
        let mut cols = vec![];
        c.for_each_col(&mut |x| cols.push(x));
        if cols.iter().any(|&x| x < start || x >= end) {
            return Err("an ON condition over relations outside its join");
        }
        let (in_outer, in_inner) = (cols.iter().all(|&x| x < split), cols.iter().all(|&x| x >= split));
        match &c {
            Expr::Bin(BinOp::Eq, l, r) if !in_outer && !in_inner => match (l.as_ref(), r.as_ref()) {
                (Expr::Col(a), Expr::Col(b)) if *a < split && *b >= split => keys.push((*a - start, *b - split)),
                (Expr::Col(a), Expr::Col(b)) if *b < split && *a >= split => keys.push((*b - start, *a - split)),
                _ => on_both.push(c.map_cols(&|x| x - start)),
            },
            _ if in_inner => on_inner.push(c.map_cols(&|x| x - split)),
            _ if in_outer => on_outer.push(c.map_cols(&|x| x - start)),
            _ => on_both.push(c.map_cols(&|x| x - start)),
        }
    }
    let outer_join = jt != JoinType::Inner;
    if outer_join && (!on_outer.is_empty() || !on_both.is_empty() || keys.is_empty()) {
        return Err(
            "an outer join's ON condition other than equalities between its sides and conditions on its inner side",
        );
    }
    if jt == JoinType::Full && !on_inner.is_empty() {
        return Err("a FULL join's ON condition over one side");
    }
    let filtered = |plan: Plan, f: Vec<Expr>| match and_all(f) {
        Some(f) => Plan::Result { child: Box::new(plan), filter: Some(f), targets: None },
        None => plan,
    };
    let (o, i) = (Box::new(filtered(outer.plan, on_outer)), Box::new(filtered(inner.plan, on_inner)));
    let plan = match keys.split_first() {
        Some((&(ok, ik), more)) => Plan::HashJoin {
            outer: o,
            inner: i,
            outer_key: Expr::Col(ok),
            inner_key: Expr::Col(ik),
            more_keys: more.iter().map(|&(a, b)| (Expr::Col(a), Expr::Col(b))).collect(),
            join_type: jt,
            joinrel_rows: None,
        },
        None => {
            let (outer_key, inner_key) = crate::plan::clauseless_join_keys();
            Plan::NestLoop {
                outer: o,
                inner: i,
                outer_key,
                inner_key,
                filter_inner_first: false,
                join_type: jt,
                joinrel_rows: None,
            }
        }
    };
    Ok(Sub { plan: filtered(plan, on_both), start, len: end - start })
}

fn split_and(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Bin(BinOp::And, l, r) => {
            split_and(*l, out);
            split_and(*r, out);
        }
        other => out.push(other),
    }
}

fn and_all(v: Vec<Expr>) -> Option<Expr> {
    v.into_iter().reduce(|a, b| Expr::bin(BinOp::And, a, b))
}
