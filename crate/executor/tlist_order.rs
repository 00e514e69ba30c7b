//! The column order of the tuples a Hash or a Sort stores, where PostgreSQL's differs
//! from the sandbox's: what their memory figures (`hash_space`, `tuplesort_space`)
//! must lay a MinimalTuple out in, since alignment padding depends on the order
//! (`int4, int8` takes 16 bytes of data, `int8, int4` 12).
//!
//! The sandbox's scans return a join's base relation's columns in table order;
//! PostgreSQL's return them in the relation's `reltarget` order
//! (`build_base_rel_tlists`, `plan::RelTlist`), and a join below another join returns
//! its relations' columns in their order among the query's relations
//! (`build_joinrel_tlist`). EXPLAIN prints that order (`instrument::explain`'s
//! `order_tlists`); this is the same rule over the plan, for the stored tuples:
//!
//! - a scan with a [`RelTlist`]: its columns by their place in it;
//! - a node that passes its input's rows on (Sort, Limit, Material, Memoize, Unique,
//!   a gating or filtering Result): its input's order; an Append: its first member's
//!   (every member returns the parent's row);
//! - a Result that projects a scan's columns as they are: those columns' places (it
//!   is folded into the scan, whose target list it is); one over a join below a
//!   join likewise (the join's target list is `build_joinrel_tlist`'s, by relation);
//! - a join below a join: its outer side's columns then its inner side's, ordered by
//!   relation, then by place;
//! - anything else (a projection computing an expression, an aggregate, the topmost
//!   join, whose target list is the final one and which the sandbox returns as it is):
//!   the sandbox's order.
//!
//! [`RelTlist`]: crate::plan::RelTlist

use crate::plan::{Expr, Plan, ScanName, SqlType};

/// Where each output column of `plan` sits in PostgreSQL's target lists: (the
/// relation's rank among the query's relations, the column's place in its
/// `reltarget`); None when some column is not a relation's column in a known order.
/// `under_join`: the node is below a join (a join's own order counts only there).
fn tlist_keys(plan: &Plan, under_join: bool) -> Option<Vec<(usize, usize)>> {
    let scan = |alias: &Option<ScanName>, names: Vec<String>| -> Option<Vec<(usize, usize)>> {
        let tlist = alias.as_ref()?.tlist.as_ref()?;
        names.iter().map(|n| Some((tlist.rank, tlist.columns.iter().position(|c| c == n)?))).collect()
    };
    if let Some(child) = plan.passes_rows_on() {
        return tlist_keys(child, under_join);
    }
    match plan {
        Plan::SeqScan { columns, alias, .. }
        | Plan::IndexScan { columns, alias, .. }
        | Plan::BitmapHeapScan { columns, alias, .. } => scan(alias, columns.iter().map(|c| c.name.clone()).collect()),
        Plan::ForeignScan(f) if f.remote.join.is_none() => {
            scan(&f.alias, f.remote.output_columns().into_iter().map(|c| c.name).collect())
        }
        Plan::Append { children, .. } | Plan::MergeAppend { children, .. } => tlist_keys(children.first()?, under_join),
        Plan::Result { child, targets: Some(targets), .. } if is_scan(child) || under_join => {
            let input = tlist_keys(child, under_join)?;
            targets
                .iter()
                .map(|(e, _)| match e {
                    Expr::Col(i) => input.get(*i).copied(),
                    _ => None,
                })
                .collect()
        }
        Plan::HashJoin { outer, inner, .. }
        | Plan::NestLoop { outer, inner, .. }
        | Plan::MergeJoin { outer, inner, .. }
            if under_join =>
        {
            let mut keys = tlist_keys(outer, true)?;
            keys.extend(tlist_keys(inner, true)?);
            Some(keys)
        }
        _ => None,
    }
}

fn is_scan(plan: &Plan) -> bool {
    matches!(plan, Plan::SeqScan { .. } | Plan::IndexScan { .. } | Plan::BitmapHeapScan { .. } | Plan::ForeignScan(_))
}

/// The columns PostgreSQL's tuples of `plan`'s rows hold that the sandbox's rows do
/// not: a SetOp's flag (nodeSetOp.c returns its input's tuple, the flag column
/// included, which the sandbox drops), through the nodes that pass rows on. They
/// come after the others.
pub fn junk_columns(plan: &Plan) -> Vec<SqlType> {
    if let Some(child) = plan.passes_rows_on() {
        return junk_columns(child);
    }
    match plan {
        // generate_nonunion_paths' flag: an int4 constant, never null.
        Plan::SetOp { .. } => vec![SqlType::Int4],
        // The select list over the top WindowAgg keeps the windows' PARTITION BY /
        // ORDER BY expressions it lacks as resjunk entries, which PostgreSQL's tuples
        // hold (a Sort above sorts them), after the select list's.
        Plan::Result { child, targets: Some(t), .. } => match child.as_ref() {
            Plan::WindowAgg { resjunk, .. } => {
                let cols = child.output_columns();
                let mut out: Vec<usize> = Vec::new();
                for &k in resjunk {
                    if !out.contains(&k) && !t.iter().any(|(e, _)| *e == crate::plan::Expr::Col(k)) {
                        out.push(k);
                    }
                }
                out.iter()
                    .map(|&k| {
                        cols.get(k).and_then(|c| c.sql_type).unwrap_or(match cols.get(k).map(|c| c.ty) {
                            Some(crate::types::ColType::Numeric) => SqlType::Numeric,
                            Some(crate::types::ColType::Text) => SqlType::Text,
                            Some(crate::types::ColType::Float) => SqlType::Float8,
                            _ => SqlType::Int4,
                        })
                    })
                    .collect()
            }
            _ => vec![],
        },
        _ => vec![],
    }
}

/// The order PostgreSQL's tuples of `plan`'s rows have: the sandbox's column indexes,
/// in PostgreSQL's order (the identity where the orders agree or the rule above does
/// not know). `under_join`: whether `plan` is below a join (a Hash's input always is).
pub fn stored_order(plan: &Plan, under_join: bool) -> Vec<usize> {
    let n = plan.output_columns().len();
    match tlist_keys(plan, under_join) {
        Some(keys) if keys.len() == n => {
            let mut order: Vec<usize> = (0..n).collect();
            crate::types::sort_short_by_key(&mut order, |&i| keys[i]);
            order
        }
        _ => (0..n).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::RelTlist;
    use crate::types::{ColType, Column};

    fn scan(cols: &[&str], tlist: Option<(usize, &[&str])>) -> Plan {
        Plan::SeqScan {
            table: "t".into(),
            columns: cols.iter().map(|c| Column::new(c, ColType::Int)).collect(),
            alias: Some(ScanName {
                alias: "t".into(),
                parent: None,
                member: false,
                tlist: tlist.map(|(rank, c)| RelTlist {
                    rank,
                    columns: c.iter().map(|s| s.to_string()).collect(),
                    needed: vec![],
                }),
                direct: false,
                alone: false,
                unqualified: false,
            }),
        }
    }

    /// `Output: f.val, f.id` over a scan the sandbox runs as `id, val`.
    #[test]
    fn a_scan_follows_its_relations_target_list() {
        let s = scan(&["id", "val"], Some((0, &["val", "id"])));
        assert_eq!(stored_order(&s, true), vec![1, 0]);
        let sorted = Plan::Sort { child: Box::new(s), keys: vec![] };
        assert_eq!(stored_order(&sorted, false), vec![1, 0]);
    }

    #[test]
    fn unknown_orders_and_top_joins_keep_the_sandboxs() {
        assert_eq!(stored_order(&scan(&["id", "val"], None), true), vec![0, 1]);
        let join = |under| {
            let j = Plan::NestLoop {
                outer: Box::new(scan(&["a", "b"], Some((1, &["b", "a"])))),
                inner: Box::new(scan(&["c"], Some((0, &["c"])))),
                outer_key: Expr::Col(0),
                inner_key: Expr::Col(0),
                filter_inner_first: false,
                join_type: crate::plan::JoinType::Inner,
                joinrel_rows: None,
            };
            stored_order(&j, under)
        };
        assert_eq!(join(false), vec![0, 1, 2]);
        assert_eq!(join(true), vec![2, 1, 0]);
    }

    /// A join projected to some of its columns, below another join (a Hash's input):
    /// by relation, then by place; at the top it is the final target list, as is.
    #[test]
    fn a_projected_join_below_a_join_is_ordered_by_relation() {
        let projected = Plan::Result {
            child: Box::new(Plan::NestLoop {
                outer: Box::new(scan(&["a", "b"], Some((1, &["b", "a"])))),
                inner: Box::new(scan(&["c"], Some((0, &["c"])))),
                outer_key: Expr::Col(0),
                inner_key: Expr::Col(0),
                filter_inner_first: false,
                join_type: crate::plan::JoinType::Inner,
                joinrel_rows: None,
            }),
            filter: None,
            targets: Some(vec![(Expr::Col(0), "a".into()), (Expr::Col(2), "c".into())]),
        };
        assert_eq!(stored_order(&projected, true), vec![1, 0]);
        assert_eq!(stored_order(&projected, false), vec![0, 1]);
    }
}
