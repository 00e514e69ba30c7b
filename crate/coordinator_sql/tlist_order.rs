//! The order of the columns in a join's target lists, as PostgreSQL 15 builds them,
//! for EXPLAIN's `Output:` lines (`plan::RelTlist`).
//!
//! PostgreSQL gives each base relation a target list (`reltarget`) before it plans
//! any join (initsplan.c): `build_base_rel_tlists` adds the columns of the final
//! target list in its order (the select list with its aggregates' arguments, then the
//! ORDER BY and GROUP BY columns that are not in it, then HAVING's), and
//! `deconstruct_jointree` then adds, clause by clause in the join tree's order (each
//! JOIN's ON, then WHERE), the columns of every clause that reads more than one
//! relation (`distribute_qual_to_rels` → `add_vars_to_targetlist`). A scan returns its
//! relation's target list in that order (unless it returns the whole row, a physical
//! target list: `instrument::explain`), and a join relation's target list is its
//! first input's columns, then its second's (`build_joinrel_tlist`) — FROM order
//! when every relation joins every other, which the printed order follows here.
//!
//! The sandbox's executor keeps its own column order (each scan returns its columns in
//! table order); only what EXPLAIN prints follows this module's order.
//!
//! Invariants:
//! - a relation's order lists each of its columns at most once, and only columns the
//!   final target list or a clause between relations reads;
//! - it is a function of the bound query (columns numbered in FROM order), not of the
//!   plan chosen.

use super::Layers;
use crate::plan::{Expr, Plan, RelTlist, ScanName};

/// The query's columns (numbered over its relations in FROM order) in the order they
/// enter their relations' target lists: the final target list's, then those of each
/// clause in `clauses` (the join tree's order) that reads more than one relation.
/// `rel_of` gives a column's relation.
pub(super) fn reltarget_columns(l: &Layers, clauses: &[Expr], n: usize, rel_of: &dyn Fn(usize) -> usize) -> Vec<usize> {
    let mut order: Vec<usize> = vec![];
    let add = |e: &Expr, order: &mut Vec<usize>| {
        e.for_each_col(&mut |c| {
            if c < n && !order.contains(&c) {
                order.push(c);
            }
        })
    };
    for e in final_tlist_exprs(l, n) {
        add(&e, &mut order);
    }
    for c in clauses {
        let mut rels: Vec<usize> = vec![];
        c.for_each_col(&mut |col| {
            if col < n && !rels.contains(&rel_of(col)) {
                rels.push(rel_of(col));
            }
        });
        if rels.len() > 1 {
            add(c, &mut order);
        }
    }
    order
}

/// The expressions of the final target list over the relations' columns, in
/// `build_base_rel_tlists`'s order: the select list (an aggregate query's over its
/// grouping keys and aggregates' arguments), the ORDER BY keys, the grouping keys and
/// aggregates not selected (resjunk), then HAVING.
fn final_tlist_exprs(l: &Layers, n: usize) -> Vec<Expr> {
    let mut out: Vec<Expr> = vec![];
    match &l.agg {
        Some((_, keys, aggs)) => {
            // The select list, ORDER BY and HAVING are over the Agg's output: its keys,
            // then its aggregates.
            let expand = |e: &Expr, out: &mut Vec<Expr>| {
                e.for_each_col(&mut |j| match j.checked_sub(keys.len()) {
                    None => out.push(keys[j].clone()),
                    Some(a) => out.extend(aggs.get(a).and_then(|a| a.arg.clone())),
                })
            };
            match &l.targets {
                Some(t) => t.iter().for_each(|(e, _)| expand(e, &mut out)),
                None => (0..keys.len() + aggs.len()).for_each(|j| expand(&Expr::Col(j), &mut out)),
            }
            l.sort.iter().flatten().for_each(|k| expand(&k.expr, &mut out));
            out.extend(keys.iter().cloned());
            out.extend(aggs.iter().filter_map(|a| a.arg.clone()));
            if let Some(h) = &l.having {
                expand(h, &mut out);
            }
        }
        None => {
            match &l.targets {
                Some(t) => out.extend(t.iter().map(|(e, _)| e.clone())),
                None => out.extend((0..n).map(Expr::Col)),
            }
            out.extend(l.sort.iter().flatten().map(|k| k.expr.clone()));
        }
    }
    out
}

/// One base relation of a join, for [`mark_scans`]: the name it goes by in the query,
/// its place in FROM, and its columns' names (its first column is `first` in the
/// query's numbering).
pub(super) struct BaseRelName<'a> {
    pub name: &'a str,
    pub first: usize,
    pub columns: Vec<String>,
}

/// Gives every scan of `plan` that reads one of `rels` (the relation itself, or a
/// partition of it) its relation's [`RelTlist`]: its place in FROM and its columns in
/// `order`'s order. Subplans (InitPlans, CTEs) are other query levels: left alone.
pub(super) fn mark_scans(plan: &mut Plan, rels: &[BaseRelName], order: &[usize]) {
    let tlists: Vec<RelTlist> = rels
        .iter()
        .enumerate()
        .map(|(rank, r)| RelTlist {
            rank,
            columns: order
                .iter()
                .filter_map(|&c| c.checked_sub(r.first).and_then(|i| r.columns.get(i)).cloned())
                .collect(),
        })
        .collect();
    mark(plan, rels, &tlists);
}

fn mark(plan: &mut Plan, rels: &[BaseRelName], tlists: &[RelTlist]) {
    // The relation a scan reads: by its alias (a partition's `h_2` is named after its
    // parent's alias `h`), or its table's name when the query gives it none.
    let find = |table: &str, name: &Option<ScanName>| -> Option<usize> {
        let alias = name.as_ref().map_or(table, |n| n.alias.as_str());
        let parent = name.as_ref().and_then(|n| n.parent.as_deref());
        let member = name.as_ref().is_some_and(|n| n.member);
        rels.iter().position(|r| {
            alias == r.name
                || parent == Some(r.name)
                || (member
                    && alias
                        .strip_prefix(r.name)
                        .and_then(|s| s.strip_prefix('_'))
                        .is_some_and(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_digit())))
        })
    };
    let set = |table: &str, name: &mut Option<ScanName>| {
        if let Some(k) = find(table, name) {
            let tlist = Some(tlists[k].clone());
            match name {
                Some(n) => n.tlist = tlist,
                None => {
                    *name =
                        Some(ScanName { alias: table.to_string(), parent: None, member: false, tlist, direct: false });
                }
            }
        }
    };
    match plan {
        Plan::SeqScan { table, alias, .. }
        | Plan::IndexScan { table, alias, .. }
        | Plan::BitmapHeapScan { table, alias, .. } => set(&table.clone(), alias),
        Plan::ForeignScan(f) if f.remote.join.is_none() && !f.remote.aggregated() => {
            set(&f.relation.clone(), &mut f.alias)
        }
        Plan::WithInitPlans { child, .. } | Plan::WithCtes { child, .. } => mark(child, rels, tlists),
        Plan::Append { children, .. } | Plan::MergeAppend { children, .. } => {
            children.iter_mut().for_each(|c| mark(c, rels, tlists))
        }
        Plan::Sort { child, .. }
        | Plan::IncrementalSort { child, .. }
        | Plan::Limit { child, .. }
        | Plan::Agg { child, .. }
        | Plan::Result { child, .. }
        | Plan::Material { child }
        | Plan::Unique { child, .. }
        | Plan::Gating { child, .. } => mark(child, rels, tlists),
        Plan::HashJoin { outer, inner, .. }
        | Plan::NestLoop { outer, inner, .. }
        | Plan::MergeJoin { outer, inner, .. } => {
            mark(outer, rels, tlists);
            mark(inner, rels, tlists);
        }
        // Another query level (a set operation's branch, a CTE), or no scan of ours.
        _ => {}
    }
}
