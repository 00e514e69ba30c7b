//! The FROM clause of a pushed-down join: postgres_fdw's `deparseFromExprForRel`
//! (deparse.c) over a [`RemoteJoin`].
//!
//! What PostgreSQL 15 writes, checked against a real coordinator
//! (tests/pg15_fidelity_joins.rs):
//!
//! - a base relation is its remote table and `r<range-table index>`
//!   (`public.f_remote r1`), the alias every column reference of the query uses;
//! - a join is parenthesized, `(outer INNER JOIN inner ON (…))`, its type one of
//!   `INNER`, `LEFT`, `FULL` (a right join was made a left join by the planner, its
//!   sides swapped), nested joins inside it parenthesized the same way;
//! - the ON list is each condition in its own parentheses joined with ` AND `, inside
//!   one more pair (`ON (((r1.a = r2.a)) AND ((r1.b < 3)))`); an inner join without
//!   conditions is `ON (TRUE)`.
//!
//! Invariants: a pure function of the plan; every name goes through `qualified_table`
//! and the expression writer the caller passes (which quotes identifiers).

use super::deparse::{qualified_table, split_and};
use crate::plan::{Expr, JoinType, RemoteJoin, RemoteJoinTree};

/// `FROM`'s text for the join (without the keyword); `expr` writes one condition.
pub fn deparse_from(j: &RemoteJoin, expr: &dyn Fn(&Expr) -> String) -> String {
    deparse_tree(j, &j.tree, expr)
}

fn deparse_tree(j: &RemoteJoin, t: &RemoteJoinTree, expr: &dyn Fn(&Expr) -> String) -> String {
    match t {
        RemoteJoinTree::Rel(r) => match j.rels.get(*r) {
            Some(rel) => format!("{} r{}", qualified_table(&rel.table), rel.rt_index),
            None => format!("${r}"),
        },
        RemoteJoinTree::Join { join_type, outer, inner, on, .. } => {
            let mut conds: Vec<&Expr> = vec![];
            for e in on {
                split_and(e, &mut conds);
            }
            let on = match conds.is_empty() {
                true => "(TRUE)".to_string(),
                false => {
                    format!("({})", conds.iter().map(|e| format!("({})", expr(e))).collect::<Vec<_>>().join(" AND "))
                }
            };
            format!(
                "({} {} JOIN {} ON {on})",
                deparse_tree(j, outer, expr),
                join_keyword(*join_type),
                deparse_tree(j, inner, expr)
            )
        }
    }
}

/// deparse.c's `get_jointype_name`.
pub fn join_keyword(jt: JoinType) -> &'static str {
    match jt {
        JoinType::Left => "LEFT",
        JoinType::Right => "RIGHT",
        JoinType::Full => "FULL",
        _ => "INNER",
    }
}

/// EXPLAIN's `Relations:` text of the join (`(public.f) INNER JOIN (public.dim d)`),
/// as postgres_fdw builds `fpinfo->relation_name`: each base relation in parentheses,
/// a nested join in parentheses too.
pub fn relations_label(j: &RemoteJoin, schema: &str) -> String {
    label(j, &j.tree, schema, true)
}

fn label(j: &RemoteJoin, t: &RemoteJoinTree, schema: &str, top: bool) -> String {
    match t {
        RemoteJoinTree::Rel(r) => match j.rels.get(*r) {
            Some(rel) => {
                let name = format!("{}.{}", super::quote_identifier(schema), super::quote_identifier(&rel.relation));
                match rel.alias == rel.relation {
                    true => format!("({name})"),
                    false => format!("({name} {})", super::quote_identifier(&rel.alias)),
                }
            }
            None => format!("(${r})"),
        },
        RemoteJoinTree::Join { join_type, outer, inner, .. } => {
            let s = format!(
                "{} {} JOIN {}",
                label(j, outer, schema, false),
                join_keyword(*join_type),
                label(j, inner, schema, false)
            );
            if top {
                s
            } else {
                format!("({s})")
            }
        }
    }
}
