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
//! Which columns a join relation's target list holds is PostgreSQL's too: each base
//! column's `attr_needed` (the relations that read it above its scan: relation 0, the
//! query's upper levels, for the final target list's columns; every relation of a
//! clause between relations for that clause's), and `build_joinrel_tlist` keeps a
//! column only where it is needed beyond the join relation's own relations — so a join
//! under `count(*)` returns nothing (no `Output:` line, width 0).
//!
//! The sandbox's executor keeps its own column order (each scan returns its columns in
//! table order); only what EXPLAIN prints follows this module's order.
//!
//! Invariants:
//! - a relation's order lists each of its columns at most once, and only columns the
//!   final target list or a clause between relations reads;
//! - it is a function of the bound query (columns numbered in FROM order), not of the
//!   plan chosen;
//! - a column in the order has a non-empty `attr_needed` (it is in the order because
//!   the final target list or a clause between relations reads it).

use super::Layers;
use crate::plan::{Expr, Plan, RelTlist, ScanName};

/// `attr_needed`'s bit for the query's upper levels (PostgreSQL's relation 0: the
/// final target list, ORDER BY, GROUP BY, HAVING). Relation `k` (FROM order) is bit `k`.
pub(super) const NEEDED_ABOVE: u64 = 1 << 63;

/// The base relations' target lists: `order`, the query's columns (numbered over its
/// relations in FROM order) in the order they enter their relations' target lists;
/// `needed`, each column's `attr_needed` as a bit set ([`NEEDED_ABOVE`], relation
/// bits), 0 for a column no target list holds.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Reltargets {
    pub order: Vec<usize>,
    pub needed: Vec<u64>,
}

/// The base relations' target lists ([`Reltargets`]): the final target list's columns
/// (`build_base_rel_tlists`, needed above), then those of each clause in `clauses` (the
/// join tree's order) that reads more than one relation (`distribute_qual_to_rels` →
/// `add_vars_to_targetlist`, needed by the clause's relations), then the equivalence
/// classes' of `ec_clauses` (the equalities that may make them: WHERE's, an inner or
/// semi join's ON): a class without a constant needs each of its members at every
/// relation of the class (`generate_base_implied_equalities_no_const`), whichever two
/// of them the join search joins first. `rel_of` gives a column's relation (below 63).
pub(super) fn reltarget_columns(
    l: &Layers,
    clauses: &[Expr],
    ec_clauses: &[Expr],
    n: usize,
    rel_of: &dyn Fn(usize) -> usize,
) -> Reltargets {
    let mut t = Reltargets { order: vec![], needed: vec![0; n] };
    let add = |e: &Expr, needed_by: u64, t: &mut Reltargets| {
        e.for_each_col(&mut |c| {
            if c < n {
                if !t.order.contains(&c) {
                    t.order.push(c);
                }
                t.needed[c] |= needed_by;
            }
        })
    };
    for e in final_tlist_exprs(l, n) {
        add(&e, NEEDED_ABOVE, &mut t);
    }
    for c in clauses {
        let mut rels: u64 = 0;
        c.for_each_col(&mut |col| {
            if col < n {
                rels |= 1u64 << rel_of(col).min(62);
            }
        });
        if rels.count_ones() > 1 {
            add(c, rels, &mut t);
        }
    }
    for class in equivalence_classes(ec_clauses, n) {
        let rels = class.iter().fold(0u64, |acc, &c| acc | 1u64 << rel_of(c).min(62));
        if rels.count_ones() > 1 {
            class.iter().for_each(|&c| add(&Expr::Col(c), rels, &mut t));
        }
    }
    t
}

/// The equivalence classes without a constant that the equalities `a = b` between
/// columns of `clauses` make (each class's columns in ascending order); a class with
/// a member equal to a constant or a parameter is left out
/// (`generate_base_implied_equalities_const` adds no column to any target list).
fn equivalence_classes(clauses: &[Expr], n: usize) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut c: usize) -> usize {
        while parent[c] != c {
            parent[c] = parent[parent[c]];
            c = parent[c];
        }
        c
    }
    let mut pinned: Vec<usize> = vec![];
    let mut members: Vec<usize> = vec![];
    for c in clauses {
        let Expr::Bin(crate::plan::BinOp::Eq, a, b) = c else { continue };
        match (a.as_ref(), b.as_ref()) {
            (Expr::Col(x), Expr::Col(y)) if *x < n && *y < n && x != y => {
                let (rx, ry) = (root(&mut parent, *x), root(&mut parent, *y));
                parent[rx] = ry;
                members.extend([*x, *y]);
            }
            (Expr::Col(x), Expr::Const(_) | Expr::Param(..) | Expr::ExecParam(..))
            | (Expr::Const(_) | Expr::Param(..) | Expr::ExecParam(..), Expr::Col(x))
                if *x < n =>
            {
                pinned.push(*x)
            }
            _ => {}
        }
    }
    let pinned_roots: Vec<usize> = pinned.iter().map(|&c| root(&mut parent, c)).collect();
    let mut classes: Vec<(usize, Vec<usize>)> = vec![];
    members.sort_unstable();
    members.dedup();
    for c in members {
        let r = root(&mut parent, c);
        if pinned_roots.contains(&r) {
            continue;
        }
        match classes.iter_mut().find(|(k, _)| *k == r) {
            Some((_, v)) => v.push(c),
            None => classes.push((r, vec![c])),
        }
    }
    classes.into_iter().map(|(_, v)| v).collect()
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
/// `targets`' order, with their `attr_needed`. Subplans (InitPlans, CTEs) are other query levels: left alone.
pub(super) fn mark_scans(plan: &mut Plan, rels: &[BaseRelName], targets: &Reltargets) {
    mark_scans_as(plan, rels, targets, true)
}

/// [`mark_scans`] for a query over one relation: only scans that have a name of their
/// own (a partition's, an aliased table's) are marked; naming an unnamed scan would
/// qualify its columns in EXPLAIN, which PostgreSQL does not over one relation.
pub(super) fn mark_named_scans(plan: &mut Plan, rels: &[BaseRelName], targets: &Reltargets) {
    mark_scans_as(plan, rels, targets, false)
}

fn mark_scans_as(plan: &mut Plan, rels: &[BaseRelName], targets: &Reltargets, name_them: bool) {
    let tlists: Vec<RelTlist> = rels
        .iter()
        .enumerate()
        .map(|(rank, r)| {
            // The relation's columns in the order, each with its place in the whole
            // order and its attr_needed.
            let own: Vec<(usize, &String, u64)> = targets
                .order
                .iter()
                .enumerate()
                .filter_map(|(at, &c)| {
                    let name = c.checked_sub(r.first).and_then(|i| r.columns.get(i))?;
                    Some((at, name, targets.needed.get(c).copied().unwrap_or(0)))
                })
                .collect();
            RelTlist {
                rank,
                columns: own.iter().map(|(_, name, _)| (*name).clone()).collect(),
                needed: own.iter().map(|&(at, _, needed)| (at, needed)).collect(),
            }
        })
        .collect();
    mark(plan, rels, &tlists, name_them);
}

fn mark(plan: &mut Plan, rels: &[BaseRelName], tlists: &[RelTlist], name_them: bool) {
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
                None if name_them => {
                    *name = Some(ScanName {
                        alias: table.to_string(),
                        parent: None,
                        member: false,
                        tlist,
                        direct: false,
                        alone: false,
                        unqualified: false,
                    });
                }
                None => {}
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
        Plan::WithInitPlans { child, .. } | Plan::WithCtes { child, .. } => mark(child, rels, tlists, name_them),
        Plan::Append { children, .. } | Plan::MergeAppend { children, .. } => {
            children.iter_mut().for_each(|c| mark(c, rels, tlists, name_them))
        }
        Plan::Sort { child, .. }
        | Plan::IncrementalSort { child, .. }
        | Plan::Limit { child, .. }
        | Plan::Agg { child, .. }
        | Plan::Result { child, .. }
        | Plan::Material { child }
        | Plan::Memoize { child, .. }
        | Plan::Unique { child, .. }
        | Plan::WindowAgg { child, .. }
        | Plan::Gating { child, .. } => mark(child, rels, tlists, name_them),
        Plan::HashJoin { outer, inner, .. }
        | Plan::NestLoop { outer, inner, .. }
        | Plan::MergeJoin { outer, inner, .. } => {
            mark(outer, rels, tlists, name_them);
            mark(inner, rels, tlists, name_them);
        }
        // Another query level (a set operation's branch, a CTE), or no scan of ours.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::BinOp;

    /// `select b.w from a join b on a.x = b.x` (a: x, y; b: x, w): b.w enters first,
    /// needed above; the clause's columns after it, needed by both relations; a.y by
    /// nothing (no target list holds it).
    #[test]
    fn attr_needed_is_the_upper_levels_or_the_clauses_relations() {
        let l = Layers {
            limit: None,
            targets: Some(vec![(Expr::Col(3), "w".into())]),
            sort: None,
            having: None,
            agg: None,
            filter: None,
        };
        let clause = Expr::bin(BinOp::Eq, Expr::Col(0), Expr::Col(2));
        let t = reltarget_columns(&l, &[clause], &[], 4, &|c| (c >= 2) as usize);
        assert_eq!(t.order, vec![3, 0, 2]);
        assert_eq!(t.needed, vec![0b11, 0, 0b11, NEEDED_ABOVE]);
        // A clause over one relation is its scan's: it needs nothing above it.
        let own = Expr::bin(BinOp::Eq, Expr::Col(1), Expr::Col(0));
        let t = reltarget_columns(&l, &[own], &[], 4, &|c| (c >= 2) as usize);
        assert_eq!(t.order, vec![3]);
        assert_eq!(t.needed, vec![0, 0, 0, NEEDED_ABOVE]);
    }

    /// `… from a, b, c where a.x = b.x and b.x = c.x` (one column each): the class
    /// {a.x, b.x, c.x} needs every member at all three relations (a join of a and b
    /// keeps b.x for c); with `and c.x = 5` too the class has a constant and each
    /// column is needed by its own clauses only.
    #[test]
    fn an_equivalence_class_needs_its_members_at_all_its_relations() {
        let l = Layers { limit: None, targets: Some(vec![]), sort: None, having: None, agg: None, filter: None };
        let eq = |x: usize, y: usize| Expr::bin(BinOp::Eq, Expr::Col(x), Expr::Col(y));
        let clauses = vec![eq(0, 1), eq(1, 2)];
        let t = reltarget_columns(&l, &clauses, &clauses, 3, &|c| c);
        assert_eq!(t.needed, vec![0b111, 0b111, 0b111]);
        let mut pinned = clauses.clone();
        pinned.push(Expr::bin(BinOp::Eq, Expr::Col(2), Expr::int(5)));
        let t = reltarget_columns(&l, &clauses, &pinned, 3, &|c| c);
        assert_eq!(t.needed, vec![0b011, 0b111, 0b110]);
    }
}
