//! The estimate of a pushed-down join's Foreign Scan: postgres_fdw's
//! `estimate_path_cost_size` for a join relation without `use_remote_estimate`
//! (PostgreSQL 15), over the join's base relations' own estimates.
//!
//! The protocol, as postgres_fdw computes it:
//!
//! 1. Each base relation is estimated as its own scan would be (`Model::foreignscan`),
//!    and the figures *before* the transfer costs are kept (`rel_startup_cost`,
//!    `rel_total_cost`: a seq scan's cost of the remote table), with its rows.
//! 2. A join's rows are the core's (`calc_joinrel_size_estimate`: `eqjoinsel` for
//!    each equality between the sides, `DEFAULT_INEQ_SEL` for another condition
//!    between them; an outer join keeps at least its preserved side's rows).
//! 3. Its cost: both sides' costs, plus the ON conditions (`joinclauses`) evaluated
//!    on every pair of the cross product, plus the WHERE conditions (`remote_conds`)
//!    on the pairs the ON conditions pass (`joinclause_sel`); startup is the sides'
//!    startup. Nothing for the join method: the remote chooses it.
//! 4. Above that, as for any foreign scan: ×1.2 with a remote ORDER BY
//!    (`DEFAULT_FDW_SORT_MULTIPLIER`), the LIMIT adjustment, then `fdw_startup_cost`
//!    and `fdw_tuple_cost + cpu_tuple_cost` per row retrieved.
//!
//! Invariants: reads statistics only; a join node's figures are computed from its two
//! children's, so a three-way join nests the same step (`fpinfo_o->rel_*_cost` of a
//! join relation is that join's figures before the transfer costs).
//!
//! Where it departs from PostgreSQL: `joinclause_sel` is the join clauses'
//! selectivity times the pulled-up conditions' as each base relation's statistics give
//! it (PostgreSQL's `clauselist_selectivity` over the list may combine range pairs).
//! A left join below the top is costed with its outer side's conditions as its
//! `remote_conds` (not the WHERE conditions over both its sides, which the tree no
//! longer tells apart): a nested left join under a WHERE can differ by a cent
//! (tests/pg15_fidelity_foreign_join3.rs leaves that case out of its cost check).
//!
//! This is the costing entry point of every pushed join relation (`foreign_join`):
//! `use_remote_estimate` for joins belongs here.
//!
//! An aggregate pushed over the join is costed as postgres_fdw's upper relation over
//! it (`grouped_join`): the join's figures before the transfer costs are its input.
//!
//! With `use_remote_estimate` (any of the join's relations has it: postgres_fdw's
//! `merge_fdw_options`), the join's figures are the server's EXPLAIN of the join's
//! remote query (`plan::remote_estimate::known_join`) plus the connection and transfer
//! costs, as for a scan; until the answer is known the local estimate stands in.

use std::collections::HashMap;

use super::{clamp_row_est, qual_cost, selectivity, Costed, Estimate, Model, RelSize, Var};
use crate::plan::selectivity::VarData;
use crate::plan::{AggCall, BinOp, Expr, ForeignScanPlan, RemoteJoin, RemoteJoinTree, RemoteQuery, RemoteTarget};

/// One relation of the join tree, as `PgFdwRelationInfo` caches it.
struct RelEstimate {
    rows: f64,
    startup: f64,
    total: f64,
    /// The statistics of its columns (by their place in the join's `table_columns`).
    vars: HashMap<usize, Var>,
    widths: HashMap<usize, f64>,
}

impl Model<'_> {
    /// A pushed-down join's Foreign Scan.
    pub(super) fn foreign_join(&self, f: &ForeignScanPlan, j: &RemoteJoin) -> Costed {
        let p = self.p;
        let q = &f.remote;
        let Some(first) = j.rels.first() else { return self.unknown(q.targets.len()) };
        let (fdw_startup_cost, fdw_tuple_cost) = match self.rel(&first.relation).map(|r| r.size.clone()) {
            Some(RelSize::Foreign { fdw_startup_cost, fdw_tuple_cost, .. }) => (fdw_startup_cost, fdw_tuple_cost),
            _ => return self.unknown(q.targets.len()),
        };
        let Some(r) = self.tree_estimate(f, j, &j.tree, true) else { return self.unknown(q.targets.len()) };
        // use_remote_estimate: asked for every variant (an aggregate's is refused by
        // whoever planned: postgres_fdw's upper-relation EXPLAIN).
        let remote = crate::plan::remote_estimate::known_join(self.cat, f, j);
        if q.aggregated() {
            return self.grouped_join(q, &r, (fdw_startup_cost, fdw_tuple_cost));
        }
        let cols: Vec<usize> = q.targets.iter().map(|t| if let RemoteTarget::Col(c) = t { *c } else { 0 }).collect();
        let widths: Vec<f64> = cols.iter().map(|c| r.widths.get(c).copied().unwrap_or(32.0)).collect();
        if let Some(remote) = remote {
            // use_remote_estimate: the remote EXPLAIN's figures, rows and width (the
            // join relation's, `postgresGetForeignJoinPaths` sets them from the bare
            // join's answer), plus the connection and transfer costs.
            let mut est = crate::plan::remote_estimate::path_estimate(&remote, p, fdw_startup_cost, fdw_tuple_cost);
            // The ordered path is the query's final one: `create_ordered_paths` gives
            // it the final target, whose width is its columns' local ones (as a plain
            // foreign table's ordered scan, `remote_estimate::scan_estimate`).
            // Measured on PostgreSQL 15: `… ORDER BY r2.c DESC NULLS FIRST` prints
            // width 11 (f1.a 4, f2.c 7 from f2's statistics) where the remote said 36.
            // So is a join whose final target lists its columns in another order than
            // the join relation (a projection path, `create_projection_path`, whose
            // width is the final target's).
            let reordered = crate::plan::remote_estimate::join_relation_targets(q, j) != q.targets;
            if !q.order_by.is_empty() || reordered {
                est.width = widths.iter().sum::<f64>() as i64;
            }
            let vars = cols.iter().map(|c| r.vars.get(c).cloned()).collect();
            return Costed { est, vars, widths, kids: vec![], parent: None, input_rows: est.rows, seq: None };
        }
        let (mut startup, mut run) = (r.startup, r.total - r.startup);
        if !q.order_by.is_empty() {
            startup *= 1.2;
            run *= 1.2;
        }
        let mut retrieved = r.rows;
        let mut est = Estimate { startup, total: startup + run, rows: r.rows, width: 0 };
        let limited = q.limit.is_some() || q.offset.is_some();
        if limited {
            let (offset, count) = (q.offset.unwrap_or(0) as f64, q.limit.map_or(0.0, |n| n.max(1) as f64));
            super::adjust_limit(&mut est, offset, count);
            retrieved = est.rows;
        }
        est.startup += fdw_startup_cost;
        est.total += fdw_startup_cost;
        est.total += fdw_tuple_cost * retrieved;
        est.total += p.cpu_tuple_cost * retrieved;
        if let (true, Some(count)) = (limited, q.limit) {
            let limit_tuples = (count + q.offset.unwrap_or(0)) as f64;
            if limit_tuples > 0.0 && limit_tuples < r.rows {
                est.total -= (est.total - est.startup) * 0.05 * (r.rows - limit_tuples) / r.rows;
            }
        }
        est.width = widths.iter().sum::<f64>() as i64;
        let vars = cols.iter().map(|c| r.vars.get(c).cloned()).collect();
        Costed { est, vars, widths, kids: vec![], parent: None, input_rows: est.rows, seq: None }
    }

    /// The aggregate pushed over the join (`estimate_path_cost_size`'s upper
    /// relation): the join's figures, the transition functions on every joined row and
    /// a comparison per grouping column at startup, the final functions and a tuple
    /// per group; rows the groups (`estimate_num_groups`), fewer by HAVING's
    /// selectivity.
    fn grouped_join(&self, q: &RemoteQuery, r: &RelEstimate, (fdw_startup, fdw_tuple): (f64, f64)) -> Costed {
        let p = self.p;
        let input_rows = r.rows;
        let type_of = |c: usize| match r.vars.get(&c) {
            Some(v) => Some(v.ty()),
            None => q.table_columns.get(c).map(|col| super::guess_type(col.ty)),
        };
        let group_vars: Vec<VarData> =
            q.group_by.iter().map(|c| r.vars.get(c).map_or(VarData::none(input_rows), Var::data)).collect();
        let num_groups = selectivity::estimate_num_groups(&group_vars, input_rows, input_rows);
        let (mut trans, mut fin) = (0.0, 0.0);
        let mut widths = vec![];
        for t in &q.targets {
            match t {
                RemoteTarget::Col(c) => widths.push(r.widths.get(c).copied().unwrap_or(32.0)),
                RemoteTarget::Agg(func, arg, distinct) => {
                    let call = AggCall { func: *func, arg: arg.map(Expr::Col), distinct: *distinct };
                    let ty = arg.and_then(type_of);
                    super::add_agg_costs(&call, ty, p, &mut trans, &mut fin);
                    widths.push(super::agg_width(&call, ty));
                }
                RemoteTarget::Const(d) => {
                    let ty = super::expr_type(&Expr::Const(d.clone()), &[]).unwrap_or(crate::plan::SqlType::Text);
                    widths.push(super::type_avg_width(ty));
                }
            }
        }
        let rows = match q.having.is_empty() {
            true => num_groups,
            false => {
                let none = |_| VarData::none(num_groups);
                clamp_row_est(num_groups * selectivity::clauselist_selectivity(&q.having, &none, num_groups))
            }
        };
        let mut startup = r.startup;
        startup += trans * input_rows;
        startup += p.cpu_operator_cost * q.group_by.len() as f64 * input_rows;
        let mut run = r.total - r.startup;
        run += fin * num_groups;
        run += p.cpu_tuple_cost * num_groups;
        run += q.having.iter().map(|e| qual_cost(e, p)).sum::<f64>() * num_groups;
        let mut est = Estimate { startup, total: startup + run, rows, width: widths.iter().sum::<f64>() as i64 };
        est.startup += fdw_startup;
        est.total += fdw_startup;
        est.total += fdw_tuple * rows;
        est.total += p.cpu_tuple_cost * rows;
        let vars = q.targets.iter().map(|_| None).collect();
        Costed { est, vars, widths, kids: vec![], parent: None, input_rows: rows, seq: None }
    }

    /// A node of the join tree: a base relation's scan figures, or a join's from its
    /// sides' (`top`: the scan's own node, whose WHERE is `remote_conds`).
    fn tree_estimate(&self, f: &ForeignScanPlan, j: &RemoteJoin, t: &RemoteJoinTree, top: bool) -> Option<RelEstimate> {
        let p = self.p;
        let RemoteJoinTree::Join { join_type, outer, inner, on, join_clauses } = t else {
            let RemoteJoinTree::Rel(r) = t else { return None };
            return self.base_estimate(f, j, *r);
        };
        let o = self.tree_estimate(f, j, outer, false)?;
        let i = self.tree_estimate(f, j, inner, false)?;
        let var = |c: usize, rows: f64| -> VarData<'_> {
            match o.vars.get(&c).or_else(|| i.vars.get(&c)) {
                Some(v) => v.data(),
                None => VarData::none(rows),
            }
        };
        // The join clauses' selectivity (calc_joinrel_size_estimate's `jselec`).
        let jsel: f64 = on
            .iter()
            .take(*join_clauses)
            .map(|c| match c {
                Expr::Bin(BinOp::Eq, a, b) => match (a.as_ref(), b.as_ref()) {
                    (Expr::Col(x), Expr::Col(y)) => selectivity::eqjoinsel(&var(*x, o.rows), &var(*y, i.rows)),
                    _ => selectivity::DEFAULT_INEQ_SEL,
                },
                _ => selectivity::DEFAULT_INEQ_SEL,
            })
            .product();
        let rows = super::join_rows(o.rows, i.rows, jsel, *join_type);
        let pulled = &on[(*join_clauses).min(on.len())..];
        let pulled_sel = match pulled.is_empty() {
            true => 1.0,
            false => selectivity::clauselist_selectivity(pulled, &|c| var(c, o.rows * i.rows), o.rows * i.rows),
        };
        let joinclause_sel = jsel * pulled_sel;
        // A join's `remote_conds` (its WHERE): the scan's own at the top; below, a
        // left join's are its outer side's, pulled up into the join above it.
        let nested;
        let remote_conds: &[Expr] = match top {
            true => &f.remote.quals,
            false => {
                nested = nested_remote_conds(j, t);
                &nested
            }
        };
        let join_cost: f64 = on.iter().map(|e| qual_cost(e, p)).sum();
        let remote_cost: f64 = remote_conds.iter().map(|e| qual_cost(e, p)).sum();
        let mut nrows = o.rows * i.rows;
        let startup = i.startup + o.startup;
        let mut run = i.total - i.startup;
        run += o.total - o.startup;
        run += nrows * join_cost;
        nrows = clamp_row_est(nrows * joinclause_sel);
        run += nrows * remote_cost;
        let mut vars = o.vars;
        vars.extend(i.vars);
        let mut widths = o.widths;
        widths.extend(i.widths);
        Some(RelEstimate { rows, startup, total: startup + run, vars, widths })
    }

    /// A base relation's figures: its own scan's estimate, without the transfer costs.
    fn base_estimate(&self, f: &ForeignScanPlan, j: &RemoteJoin, r: usize) -> Option<RelEstimate> {
        let rel = j.rels.get(r)?;
        let q = &f.remote;
        let range = rel.first..rel.first + rel.ncols;
        let mut used: Vec<usize> = vec![];
        let mut note = |c: usize| {
            if range.contains(&c) && !used.contains(&(c - rel.first)) {
                used.push(c - rel.first);
            }
        };
        for t in &q.targets {
            match t {
                RemoteTarget::Col(c) | RemoteTarget::Agg(_, Some(c), _) => note(*c),
                RemoteTarget::Agg(_, None, _) | RemoteTarget::Const(_) => {}
            }
        }
        every_on(&j.tree, &mut |e| e.for_each_col(&mut note));
        q.quals.iter().for_each(|e| e.for_each_col(&mut note));
        used.sort_unstable();
        let columns = q.table_columns.get(range.clone())?.to_vec();
        let mut scan = RemoteQuery::scan(&rel.table, columns, &used);
        scan.quals = rel.quals.iter().map(|e| e.map_cols(&|c| c.saturating_sub(rel.first))).collect();
        let plan =
            ForeignScanPlan { relation: rel.relation.clone(), server: f.server.clone(), remote: scan, alias: None };
        let outer = self.local_base.replace(true);
        let c = self.foreignscan(&plan);
        self.local_base.set(outer);
        let Some(RelSize::Foreign { fdw_startup_cost, fdw_tuple_cost, .. }) =
            self.rel(&rel.relation).map(|r| r.size.clone())
        else {
            return None;
        };
        // estimate_path_cost_size caches the figures before adding these.
        let startup = c.est.startup - fdw_startup_cost;
        let total = c.est.total - fdw_startup_cost - (fdw_tuple_cost + self.p.cpu_tuple_cost) * c.est.rows;
        let mut vars = HashMap::new();
        let mut widths = HashMap::new();
        for (k, &u) in used.iter().enumerate() {
            if let Some(v) = c.vars.get(k).cloned().flatten() {
                vars.insert(rel.first + u, v);
            }
            if let Some(w) = c.widths.get(k) {
                widths.insert(rel.first + u, *w);
            }
        }
        Some(RelEstimate { rows: c.est.rows, startup, total, vars, widths })
    }
}

/// The `remote_conds` a join node below the top had before the join above pulled them
/// up (`foreign_join_ok`): a base relation's own conditions, a left join's outer
/// side's; none for an inner join (all in its ON) or a full one.
fn nested_remote_conds(j: &RemoteJoin, t: &RemoteJoinTree) -> Vec<Expr> {
    match t {
        RemoteJoinTree::Rel(r) => j.rels.get(*r).map(|rel| rel.quals.clone()).unwrap_or_default(),
        RemoteJoinTree::Join { join_type: crate::plan::JoinType::Left, outer, .. } => nested_remote_conds(j, outer),
        RemoteJoinTree::Join { .. } => vec![],
    }
}

/// Calls `f` on every ON condition of the tree.
fn every_on(t: &RemoteJoinTree, f: &mut impl FnMut(&Expr)) {
    if let RemoteJoinTree::Join { outer, inner, on, .. } = t {
        on.iter().for_each(|e| f(e));
        every_on(outer, f);
        every_on(inner, f);
    }
}
