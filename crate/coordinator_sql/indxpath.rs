//! Index paths for a local table's scan, as PostgreSQL 15's `indxpath.c` builds them
//! and `add_path` keeps the cheapest: beside the Seq Scan, for each index of the
//! table,
//!
//! - an **Index Scan** (`build_index_paths`) when the index has an Index Cond (WHERE
//!   conjuncts `key op constant` or `key op $n`, op one of `= < <= > >=`:
//!   `match_clause_to_index`, the key put on the left as `match_opclause_to_indexcol`
//!   commutes it) or its order is the query's (`ORDER BY key [DESC]`: the index's
//!   pathkeys, forwards or `Backward`); an **Index Only Scan** instead when every
//!   column the scan returns or filters on is the key (`check_index_only`, with
//!   `enable_indexonlyscan`), which is built even with neither (a full scan of the
//!   index, chosen when the Seq Scan is disabled);
//! - a **Bitmap Heap Scan** over a Bitmap Index Scan (`create_bitmap_heap_path` over
//!   `choose_bitmap_and`'s one index path) for every unordered index path (one with
//!   an Index Cond, or the index-only full scan: `create_index_paths` hands every
//!   path without pathkeys to the bitmap paths).
//!
//! For a join (`planner::Join`), the same paths serve its sides: a Merge Join's local
//! side read in its key's order through its index ([`ordered_scan`], forced for the
//! outer side of `match_unsorted_outer`'s presorted path), and a Nested Loop's inner
//! side as an Index Scan **parameterized** by the join key ([`param_scan`]: Index
//! Cond `(loc.id = h.id)`, the outer row's value set before each rescan). The join
//! search (`joinrels.rs`, three relations or more) takes the ordered paths (a base
//! relation's presorted path for each index whose order is of use above it) and the
//! parameterized ones (a local base relation probed by the outer side of any join
//! relation, under a Memoize or not).
//!
//! Each is costed by `plan::costsize` (`cost_index`, `cost_bitmap_heap_scan`:
//! `plan::indexcost`) with the quals that are not the index's as its Filter, and the
//! cheapest total wins (`set_cheapest`); for an ordered scan the presorted index path
//! competes with a Sort over the cheapest, both under the query's LIMIT, as
//! `grouping_planner` compares them by the fraction of rows the LIMIT reads.
//!
//! Invariants:
//! - every candidate returns the same rows, columns in the same order, as the Seq
//!   Scan the planner built (`Planner::local_scan`): only how they are read changes;
//! - an Index Cond is a conjunct the scan no longer filters on, never one dropped;
//! - the `enable_*` scan settings act through the costs (`DISABLE_COST`), as in
//!   PostgreSQL, so a disabled path is still taken when it is the only one.
//!
//! A `key = ANY (array)` conjunct (an IN list) is an Index Cond too
//! ([`match_saopclause_to_index`]), costed as so many descents of the B-tree.
//!
//! Where it departs from PostgreSQL: indexes have one key column; no `IS NULL` or
//! `LIKE` Index Cond, no BitmapAnd / BitmapOr of several indexes; a
//! parameterized path only for a plain local table as a Nested Loop's inner side (no
//! parameterized bitmap path, none through an Append of partitions, no
//! equivalence class deriving `loc.id = 7` from `f.id = 7 AND f.id = loc.id`); ties in
//! cost keep the first path built (Seq Scan, then index, then bitmap) where
//! `add_path`'s fuzzy comparison may keep another.

use super::catalog::{Node, RelKind, Relation};
use crate::plan::costsize::{cost_plan, CostParams, Estimate};
use crate::plan::{BinOp, Expr, Func, NestParam, Plan, ScanName, SortKey};
use crate::types::Column;

/// One local leaf's scan as the planner asks for it: its columns (`used`, the ones
/// returned; `where_cols`, the WHERE conjuncts'), over the table's numbering.
pub(super) struct ScanRequest<'a> {
    pub rel: &'a Relation,
    pub name: Option<ScanName>,
    pub conjuncts: &'a [Expr],
    pub used: &'a [usize],
    pub where_cols: &'a [usize],
}

/// A WHERE conjunct as an index qual on table column `key`: `key op value` with
/// the key on the left (commuted when written the other way round), or None.
fn match_clause_to_index(c: &Expr, key: usize) -> Option<Expr> {
    if let Expr::Func(Func::ScalarArrayOp { .. }, _) = c {
        return match_saopclause_to_index(c, key);
    }
    let Expr::Bin(op, l, r) = c else { return None };
    if !matches!(op, BinOp::Eq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq) {
        return None;
    }
    let operand = |e: &Expr| matches!(e, Expr::Const(d) if !d.is_null()) || matches!(e, Expr::Param(..));
    match (l.as_ref(), r.as_ref()) {
        (Expr::Col(k), v) if *k == key && operand(v) => Some(c.clone()),
        (v, Expr::Col(k)) if *k == key && operand(v) => {
            let commuted = match op {
                BinOp::Lt => BinOp::Gt,
                BinOp::LtEq => BinOp::GtEq,
                BinOp::Gt => BinOp::Lt,
                BinOp::GtEq => BinOp::LtEq,
                other => *other,
            };
            Some(Expr::Bin(commuted, Box::new(Expr::Col(*k)), Box::new(v.clone())))
        }
        _ => None,
    }
}

/// `match_saopclause_to_indexcol`: `key op ANY (array)` is an Index Cond when `op` is
/// one of the B-tree's (`= < <= > >=`) and the array's elements are constants or
/// parameters: the B-tree takes the array whole (`amsearcharray`) and scans once per
/// distinct element, in the index's order. The `ALL` form never is (PostgreSQL
/// supports only `ANY`), nor is the key on the right (a ScalarArrayOpExpr is never
/// commuted).
fn match_saopclause_to_index(c: &Expr, key: usize) -> Option<Expr> {
    let Expr::Func(Func::ScalarArrayOp { op, use_or: true, .. }, args) = c else { return None };
    if !matches!(op, BinOp::Eq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq) {
        return None;
    }
    let (Some(Expr::Col(k)), Some(elems)) = (args.first(), args.get(1..)) else { return None };
    let element = |e: &Expr| matches!(e, Expr::Const(_) | Expr::Param(..));
    (*k == key && !elems.is_empty() && elems.iter().all(element)).then(|| c.clone())
}

/// The scan's read columns, sorted: the used ones and the WHERE conjuncts'.
fn read_columns(req: &ScanRequest) -> Vec<usize> {
    let mut read: Vec<usize> = req.used.iter().chain(req.where_cols).copied().collect();
    read.sort_unstable();
    read.dedup();
    read
}

/// A base scan wrapped as `Planner::local_scan` wraps its Seq Scan: the remaining
/// conjuncts as a filter, then only the used columns.
fn wrap(base: Plan, req: &ScanRequest, read: &[usize], rest: &[Expr]) -> Plan {
    let all = req.rel.columns();
    let map = super::planner::remap(read, all.len());
    let mut plan = base;
    if !rest.is_empty() {
        let mut quals: Vec<Expr> = rest.iter().map(|c| super::planner::rewrite(c, &map)).collect();
        crate::plan::costsize::order_qual_clauses(&mut quals);
        let filter = quals.into_iter().reduce(|a, b| Expr::bin(BinOp::And, a, b));
        plan = Plan::Result { child: Box::new(plan), filter, targets: None };
    }
    if read.len() != req.used.len() {
        let targets = req
            .used
            .iter()
            .map(|c| (Expr::Col(read.iter().position(|r| r == c).unwrap_or(0)), all[*c].name.clone()))
            .collect();
        plan = Plan::Result { child: Box::new(plan), filter: None, targets: Some(targets) };
    }
    plan
}

/// The index paths of one index (`build_index_paths`, `create_bitmap_heap_path`):
/// `desc` Some for the ordered one (its direction), None for an unordered scan,
/// which exists only with an Index Cond.
pub(super) fn index_paths(req: &ScanRequest, key: usize, desc: Option<bool>, p: &CostParams) -> Vec<Plan> {
    let RelKind::Table(t) = &req.rel.kind else { return vec![] };
    let read = read_columns(req);
    let map = super::planner::remap(&read, req.rel.columns.len());
    let (mut quals, mut rest) = (vec![], vec![]);
    for c in req.conjuncts {
        match match_clause_to_index(c, key) {
            Some(q) => quals.push(q),
            None => rest.push(c.clone()),
        }
    }
    let index_only = p.enable_indexonlyscan && read.iter().all(|&c| c == key);
    // build_index_paths: an index path needs an Index Cond, a useful order, or to
    // be index-only (a full scan of the index then reads less than the heap).
    if quals.is_empty() && desc.is_none() && !index_only {
        return vec![];
    }
    let all = req.rel.columns();
    let columns: Vec<Column> = read.iter().map(|&c| all[c].clone()).collect();
    let index_quals: Vec<Expr> = quals.iter().map(|q| super::planner::rewrite(q, &map)).collect();
    let mut out = vec![wrap(
        Plan::IndexScan {
            table: t.name.clone(),
            columns: columns.clone(),
            column: key,
            desc: desc.unwrap_or(false),
            alias: req.name.clone(),
            index_only,
            quals: index_quals.clone(),
            nest_param: None,
        },
        req,
        &read,
        &rest,
    )];
    // create_index_paths: an index path without pathkeys feeds a bitmap path too
    // (a full one, without an Index Cond, when it is the index-only full scan).
    if desc.is_none() {
        // The Bitmap Index Scan's quals are over the key alone.
        let key_only: Vec<Option<usize>> = (0..all.len()).map(|c| (c == key).then_some(0)).collect();
        let on_key: Vec<Expr> = quals.iter().map(|q| super::planner::rewrite(q, &key_only)).collect();
        let types = req.rel.columns.iter().map(|c| c.ty).collect();
        let bitmap = Plan::BitmapHeapScan {
            table: t.name.clone(),
            columns,
            alias: req.name.clone(),
            recheck: index_quals.clone(),
            types,
            child: Box::new(Plan::BitmapIndexScan {
                table: t.name.clone(),
                column: key,
                quals: on_key,
                cond: index_quals,
            }),
        };
        out.push(wrap(bitmap, req, &read, &rest));
    }
    out
}

/// The top estimate of `plan` under a LIMIT (the fraction of its run the LIMIT
/// reads, as `adjust_limit_rows_costs` takes it).
pub(super) fn limited_cost(coord: &Node, plan: &Plan, limit: Option<(u64, Option<u64>)>, p: &CostParams) -> Estimate {
    let costed = match limit {
        Some((offset, count)) => Plan::Limit { child: Box::new(plan.clone()), offset, count },
        None => plan.clone(),
    };
    cost_plan(&costed, coord, p).first().copied().unwrap_or(Estimate { startup: 0.0, total: 0.0, rows: 0.0, width: 0 })
}

/// The cheapest scan of a local leaf, given its Seq Scan (`seq`, as the planner
/// wraps it): the Seq Scan or an index path with an Index Cond, by total cost.
pub(super) fn cheapest_scan(coord: &Node, req: &ScanRequest, seq: Plan) -> Plan {
    let p = CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
    let RelKind::Table(t) = &req.rel.kind else { return seq };
    let mut best = (limited_cost(coord, &seq, None, &p).total, seq);
    for index in &t.indexes {
        for path in index_paths(req, index.column, None, &p) {
            let total = limited_cost(coord, &path, None, &p).total;
            if total < best.0 {
                best = (total, path);
            }
        }
    }
    best.1
}

/// An ordered scan of a local leaf: a Sort (`order`, over the used columns) over the
/// cheapest scan, or an index path in that order (one key, a plain column with an
/// index), whichever costs less under the query's LIMIT (`force`: the index path
/// whenever there is one). For the query's own ORDER BY without a LIMIT
/// (`tlist_cost`: the select list's cost a row, a correlated SubPlan's calls) the two
/// are compared as `add_path` puts them in the ordered relation
/// ([`index_path_wins`]). Returns the plan and whether it is presorted (the caller
/// then adds no Sort).
pub(super) fn ordered_scan(
    coord: &Node,
    req: &ScanRequest,
    seq: Plan,
    order: &[SortKey],
    limit: Option<(u64, Option<u64>)>,
    force: bool,
    tlist_cost: Option<f64>,
) -> (Plan, bool) {
    let p = CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
    let cheapest = cheapest_scan(coord, req, seq);
    let sorted = Plan::Sort { child: Box::new(cheapest.clone()), keys: order.to_vec() };
    let [key] = order else { return (cheapest, false) };
    let (Expr::Col(k), RelKind::Table(t)) = (&key.expr, &req.rel.kind) else { return (cheapest, false) };
    let Some(&column) = req.used.get(*k) else { return (cheapest, false) };
    if t.index_on(column).is_none() {
        return (cheapest, false);
    }
    let sort_est = limited_cost(coord, &sorted, limit, &p);
    for path in index_paths(req, column, Some(key.desc), &p) {
        let est = limited_cost(coord, &path, limit, &p);
        let wins = match (limit, tlist_cost) {
            (None, Some(tlist_cost)) => index_path_wins(est, sort_est, tlist_cost),
            _ => est.total < sort_est.total,
        };
        if force || wins {
            return (path, true);
        }
    }
    (cheapest, false)
}

/// `add_path` of the index path (`index`) after the Sort over the cheapest scan
/// (`sort`, which `create_ordered_paths` meets first: the input's cheapest-total
/// path) into the ordered relation, both in the ORDER BY's order: the select list is
/// evaluated below the Sort (its cost, `tlist_cost` a row, is in the Sort's startup)
/// and in the index scan (`apply_scanjoin_target_to_paths`). Totals within 1% are a
/// tie that the smaller startup cost breaks (`compare_path_costs_fuzzily`); a dead
/// heat keeps the Sort unless the index path is cheaper at all.
fn index_path_wins(index: Estimate, sort: Estimate, tlist_cost: f64) -> bool {
    const STD_FUZZ_FACTOR: f64 = 1.01;
    let added = tlist_cost * index.rows;
    let (i_startup, i_total) = (index.startup, index.total + added);
    let (s_startup, s_total) = (sort.startup + added, sort.total + added);
    if i_total > s_total * STD_FUZZ_FACTOR {
        return false;
    }
    if s_total > i_total * STD_FUZZ_FACTOR {
        return true;
    }
    if i_startup > s_startup * STD_FUZZ_FACTOR {
        return false;
    }
    if s_startup > i_startup * STD_FUZZ_FACTOR {
        return true;
    }
    s_total > i_total * 1.0000000001
}

/// A Nested Loop's inner side as an Index Scan of `req`'s table parameterized by its
/// index on `key` (`build_index_paths` with the join clause as an index clause,
/// `get_baserel_parampathinfo`): its Index Cond is `key = ` the outer row's key
/// (`outer_key`, as EXPLAIN names it) and the index quals among the side's own
/// conjuncts; the rest are its Filter. `no`: the parameter's number in
/// `EState::nest_params` (one per Nested Loop that sets one, so that nested loops
/// never share a slot).
pub(super) fn param_scan(coord: &Node, req: &ScanRequest, key: usize, outer_key: String, no: usize) -> Plan {
    let p = CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
    let mut read = read_columns(req);
    if !read.contains(&key) {
        read.push(key);
        read.sort_unstable();
    }
    let map = super::planner::remap(&read, req.rel.columns.len());
    let (mut quals, mut rest) = (vec![], vec![]);
    for c in req.conjuncts {
        match match_clause_to_index(c, key) {
            Some(q) => quals.push(super::planner::rewrite(&q, &map)),
            None => rest.push(c.clone()),
        }
    }
    let all = req.rel.columns();
    let scan = Plan::IndexScan {
        table: req.rel.name.clone(),
        columns: read.iter().map(|&c| all[c].clone()).collect(),
        column: key,
        desc: false,
        alias: req.name.clone(),
        index_only: p.enable_indexonlyscan && read.iter().all(|&c| c == key),
        quals,
        nest_param: Some(NestParam { no, outer: outer_key }),
    };
    wrap(scan, req, &read, &rest)
}
