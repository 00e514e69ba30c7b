//! postgres_fdw's `use_remote_estimate`: a Foreign Scan priced from the remote
//! server's own `EXPLAIN` of its query, as `estimate_path_cost_size` does when the
//! option is on (postgres_fdw.c: the `fpinfo->use_remote_estimate` branch, with
//! `get_remote_estimate` reading the remote plan's top line).
//!
//! The planner is sans-IO: it cannot wait for a shard while it prices a path. So the
//! cost model asks [`RemoteEstimates`] for the answer to each `EXPLAIN` it needs and,
//! when an answer is not known yet, records the question and prices the path with
//! the local estimate for now. Whoever planned (`coordinator_sql::remote_estimate`)
//! then has the questions answered and plans again, until every question had its
//! answer: the plan is then priced by the remote figures only, as PostgreSQL's.
//!
//! What a remote estimate becomes (`estimate_path_cost_size`, PostgreSQL 15):
//! startup and total cost, rows and width are the remote plan's top line; the rows
//! fetched are those rows; then, in this order, `fdw_startup_cost` is added to both
//! costs and `fdw_tuple_cost + cpu_tuple_cost` per fetched row to the total
//! ([`path_estimate`]). Unlike the local estimate there is no LIMIT discount (the
//! remote EXPLAIN of the LIMIT query already has it).
//!
//! Invariants:
//! - a question is recorded once per planning round, in the order the cost model
//!   first asked it; [`RemoteEstimates::wire_order`] is the order PostgreSQL 15 sends
//!   them (every relation's base query first, as `set_base_rel_sizes` runs
//!   `postgresGetForeignRelSize` for each; then, relation after relation, the ordered
//!   variants `postgresGetForeignPaths` prices; upper relations last);
//! - an answer is keyed by server and statement text; a question by relation too,
//!   so two relations that send the same statement are two questions on the wire,
//!   as in PostgreSQL.

use super::costsize::{CostCatalog, CostParams, Estimate};
use super::{ForeignScanPlan, Plan, RemoteQuery};
use std::cell::RefCell;

/// Which path a remote EXPLAIN prices (what PostgreSQL asks it for).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Variant {
    /// The scan with its pushed-down quals (`postgresGetForeignRelSize`).
    Base,
    /// The same with an ORDER BY (`add_paths_with_pathkeys_for_rel`).
    Ordered,
    /// An aggregate, a LIMIT or both pushed down (`postgresGetForeignUpperPaths`).
    Upper,
    /// A parameterized path: a join clause with the outer side's value as a
    /// parameter, which the EXPLAIN carries as `((SELECT null::integer)::integer)`
    /// (`postgresGetForeignPaths`' `ppi_list`, a Nested Loop's inner side,
    /// `paramfdw`); PostgreSQL sends these after the relation's ordered variants.
    Param,
    /// A join of foreign tables pushed to their server as one query
    /// (`postgresGetForeignJoinPaths`' bare join path): asked after every base
    /// relation's questions, as the join search reaches the join relation.
    Join,
    /// The same join with the query's ORDER BY (`add_paths_with_pathkeys_for_rel` on
    /// the join relation), right after the join's own question.
    JoinOrdered,
    /// A scan reading a correlated SubPlan's or a prepared statement's parameter:
    /// the sandbox sends no EXPLAIN of it, and whoever planned plans the statement
    /// with local estimates instead (the departure coordinator_sql/settings.rs states).
    OtherParam,
}

/// One EXPLAIN the planner needs: which relation asked, the server that answers, the
/// remote statement (without the `EXPLAIN ` in front).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RemoteExplain {
    pub relation: String,
    pub server: String,
    pub sql: String,
    pub variant: Variant,
}

impl RemoteExplain {
    /// The statement postgres_fdw sends.
    pub fn statement(&self) -> String {
        format!("EXPLAIN {}", self.sql)
    }
}

/// What the cost model gets for a Foreign Scan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RemoteAnswer {
    /// The relation does not use remote estimates: price it locally.
    Local,
    /// The remote plan's top line.
    Known(Estimate),
    /// Asked, not answered yet: price it locally for this round.
    Pending,
}

/// The questions of the planning under way and the answers known so far.
#[derive(Clone, Debug, Default)]
pub struct RemoteEstimates {
    inner: RefCell<Inner>,
}

#[derive(Clone, Debug, Default)]
struct Inner {
    asked: Vec<RemoteExplain>,
    answers: Vec<(String, String, Estimate)>,
    /// A planning that has its questions answered is under way; questions asked
    /// outside one are refused by whoever planned (`asked_unarmed`).
    armed: bool,
    /// The questions of the last armed planning's last round.
    last: Vec<RemoteExplain>,
    /// Price every scan locally and ask nothing: a join's planning (the departure
    /// coordinator_sql/settings.rs states).
    local_only: bool,
    /// Questions asked so far, ever (a join search that asks is not kept between
    /// slices of planning: `coordinator_sql`'s join_search_slices).
    asks: u64,
}

impl RemoteEstimates {
    /// Records the question (once) and returns its answer, if known.
    pub fn ask(&self, q: RemoteExplain) -> RemoteAnswer {
        let mut inner = self.inner.borrow_mut();
        if inner.local_only {
            return RemoteAnswer::Local;
        }
        inner.asks += 1;
        let answer = inner.answers.iter().find(|(s, sql, _)| *s == q.server && *sql == q.sql).map(|a| a.2);
        if !inner.asked.contains(&q) {
            inner.asked.push(q);
        }
        answer.map_or(RemoteAnswer::Pending, RemoteAnswer::Known)
    }

    /// How many questions were asked so far (each time, answered or not).
    pub fn asks(&self) -> u64 {
        self.inner.borrow().asks
    }

    /// A planning that answers its questions begins (true) or ends (false).
    /// Ending one keeps its last round's questions for [`Self::wire_order`].
    pub fn arm(&self, on: bool) {
        let mut inner = self.inner.borrow_mut();
        inner.armed = on;
        let asked = std::mem::take(&mut inner.asked);
        inner.last = if on { vec![] } else { asked };
    }

    /// The questions asked outside an armed planning (then forgotten).
    pub fn asked_unarmed(&self) -> Vec<RemoteExplain> {
        let mut inner = self.inner.borrow_mut();
        if inner.armed {
            return vec![];
        }
        std::mem::take(&mut inner.asked)
    }

    /// Forgets the questions (a new planning round asks them again).
    pub fn begin_round(&self) {
        self.inner.borrow_mut().asked.clear();
    }

    /// Every scan priced locally, nothing asked (true), or remote estimates again.
    pub fn set_local_only(&self, on: bool) {
        self.inner.borrow_mut().local_only = on;
    }

    /// Forgets questions and answers (the shards' data may have changed).
    pub fn reset(&self) {
        let mut inner = self.inner.borrow_mut();
        inner.asked.clear();
        inner.answers.clear();
    }

    /// The questions of this round without an answer yet.
    pub fn missing(&self) -> Vec<RemoteExplain> {
        let inner = self.inner.borrow();
        inner
            .asked
            .iter()
            .filter(|q| !inner.answers.iter().any(|(s, sql, _)| *s == q.server && *sql == q.sql))
            .cloned()
            .collect()
    }

    pub fn answer(&self, server: &str, sql: &str, est: Estimate) {
        self.inner.borrow_mut().answers.push((server.to_string(), sql.to_string(), est));
    }

    /// The answer to a question, if known.
    pub fn known(&self, server: &str, sql: &str) -> Option<Estimate> {
        self.inner.borrow().answers.iter().find(|(s, q, _)| s == server && q == sql).map(|a| a.2)
    }

    /// The questions of this round as asked.
    pub fn asked(&self) -> Vec<RemoteExplain> {
        self.inner.borrow().asked.clone()
    }

    /// The last armed planning's questions in the order PostgreSQL 15 sends them: every
    /// relation's base query (`set_base_rel_sizes`), then each relation's ordered
    /// and then parameterized variants (`set_base_rel_pathlists`, relation after
    /// relation, in the order of their base queries), then the upper relations'.
    pub fn wire_order(&self) -> Vec<RemoteExplain> {
        let asked = self.inner.borrow().last.clone();
        let mut out: Vec<RemoteExplain> = asked.iter().filter(|q| q.variant == Variant::Base).cloned().collect();
        let mut relations: Vec<String> = vec![];
        for q in &out {
            if !relations.contains(&q.relation) {
                relations.push(q.relation.clone());
            }
        }
        let per_relation = |q: &RemoteExplain| matches!(q.variant, Variant::Ordered | Variant::Param);
        for r in &relations {
            out.extend(asked.iter().filter(|q| q.variant == Variant::Ordered && &q.relation == r).cloned());
            out.extend(asked.iter().filter(|q| q.variant == Variant::Param && &q.relation == r).cloned());
        }
        out.extend(asked.iter().filter(|q| per_relation(q) && !relations.contains(&q.relation)).cloned());
        // Each join relation's bare question, then its ordered ones.
        for j in asked.iter().filter(|q| q.variant == Variant::Join) {
            out.push(j.clone());
            let ordered = |q: &&RemoteExplain| q.variant == Variant::JoinOrdered && q.relation == j.relation;
            out.extend(asked.iter().filter(ordered).cloned());
        }
        let joined: Vec<&String> = asked.iter().filter(|q| q.variant == Variant::Join).map(|q| &q.relation).collect();
        let orphan = |q: &&RemoteExplain| q.variant == Variant::JoinOrdered && !joined.contains(&&q.relation);
        out.extend(asked.iter().filter(orphan).cloned());
        out.extend(asked.iter().filter(|q| q.variant == Variant::Upper).cloned());
        out
    }
}

/// The remote statement a scan's EXPLAIN carries: its Remote SQL
/// (`deparseSelectStmtForRel`, as the DECLARE will send it); for a parameterized
/// scan, the join clauses first and the Nested Loop's parameter written as a
/// placeholder ([`parameterized_sql`]).
pub fn sql_of(q: &RemoteQuery) -> String {
    match q.quals.iter().any(reads_nest_param) {
        true => parameterized_sql(q),
        false => crate::sql_text::deparse::deparse_remote_query(q),
    }
}

/// The EXPLAIN `estimate_path_cost_size` sends for a parameterized path: its
/// `remote_conds` are the join clauses (`remote_param_join_conds`) followed by the
/// relation's own, and deparse.c's `printRemotePlaceholder` writes the parameter,
/// whose value planning does not know, as `((SELECT null::T)::T)` (measured on
/// PostgreSQL 15: `… WHERE ((((SELECT null::integer)::integer) = b)) AND ((a < 90))`).
pub fn parameterized_sql(q: &RemoteQuery) -> String {
    let (param, own): (Vec<_>, Vec<_>) = q.quals.iter().cloned().partition(reads_nest_param);
    let q = RemoteQuery { quals: param.into_iter().chain(own).collect(), ..q.clone() };
    let mut sql = crate::sql_text::deparse::deparse_remote_query(&q);
    let mut types = vec![];
    q.quals.iter().for_each(|e| e.for_each_param(&mut |n, t| types.push((n, t))));
    for (n, t) in types {
        let name = t.name();
        sql = sql.replace(&format!("${n}::{name}"), &format!("((SELECT null::{name})::{name})"));
    }
    sql
}

/// Does the expression read the Nested Loop's parameter of a parameterized Foreign
/// Scan (`paramfdw`)?
fn reads_nest_param(e: &super::Expr) -> bool {
    let mut found = false;
    e.for_each_param(&mut |n, _| found |= n == crate::coordinator_sql::paramfdw::NEST_FDW_PARAM);
    found
}

/// Does the remote query read a parameter other than a Nested Loop's (a correlated
/// SubPlan's or a prepared statement's), whose EXPLAIN the sandbox does not send?
pub fn reads_other_param(q: &RemoteQuery) -> bool {
    let mut other = false;
    for e in q.quals.iter().chain(&q.having) {
        e.for_each_param(&mut |n, _| other |= n != crate::coordinator_sql::paramfdw::NEST_FDW_PARAM);
        other |= has_subplan_param(e);
    }
    other
}

/// Does the expression read a `Param` (an InitPlan's or correlated SubPlan's value,
/// a prepared statement's parameter)?
fn has_subplan_param(e: &super::Expr) -> bool {
    use super::Expr;
    match e {
        Expr::Param(..) => true,
        Expr::Col(_) | Expr::Const(_) | Expr::ExecParam(..) => false,
        Expr::Bin(_, l, r) => has_subplan_param(l) || has_subplan_param(r),
        Expr::Not(x) | Expr::IsNull(x, _) => has_subplan_param(x),
        Expr::Func(_, args) => args.iter().any(has_subplan_param),
    }
}

/// Which path a remote query prices: an aggregate or a LIMIT makes it an upper
/// relation's, an ORDER BY alone an ordered path of the base relation.
pub fn variant_of(q: &RemoteQuery) -> Variant {
    // A parameter first: a parameterized aggregate (a correlated SubPlan's) is
    // planned locally (coordinator_sql::remote_estimate).
    if reads_other_param(q) {
        Variant::OtherParam
    } else if q.quals.iter().chain(&q.having).any(has_param) {
        Variant::Param
    } else if q.aggregated() || q.limit.is_some() || q.offset.is_some() {
        Variant::Upper
    } else if !q.order_by.is_empty() {
        Variant::Ordered
    } else {
        Variant::Base
    }
}

/// The remote EXPLAIN's answer for a Foreign Scan, when its relation uses remote
/// estimates and the answer is known.
pub(super) fn known(cat: &dyn CostCatalog, f: &ForeignScanPlan) -> Option<Estimate> {
    if let Some(j) = f.remote.join.as_deref() {
        return known_join(cat, f, j);
    }
    match cat.remote_estimate(&f.relation, &sql_of(&f.remote), variant_of(&f.remote)) {
        RemoteAnswer::Known(e) => Some(e),
        RemoteAnswer::Local | RemoteAnswer::Pending => None,
    }
}

/// The name a pushed-down join's questions go by: its base relations' local names,
/// one space apart (`JOIN_RELATION_SEPARATOR`), in the order of their columns.
pub fn join_relation(j: &super::RemoteJoin) -> String {
    let names: Vec<&str> = j.rels.iter().map(|r| r.relation.as_str()).collect();
    names.join(JOIN_RELATION_SEPARATOR)
}

/// Between the relation names of [`join_relation`].
pub const JOIN_RELATION_SEPARATOR: &str = " ";

/// Which question a pushed-down join's remote query is: an aggregate or LIMIT over
/// the join an upper relation's, an ORDER BY the join's ordered path.
pub fn join_variant_of(q: &RemoteQuery) -> Variant {
    if reads_other_param(q) {
        Variant::OtherParam
    } else if q.aggregated() || q.limit.is_some() || q.offset.is_some() {
        Variant::Upper
    } else if !q.order_by.is_empty() {
        Variant::JoinOrdered
    } else {
        Variant::Join
    }
}

/// The remote EXPLAIN's answer for a pushed-down join's Foreign Scan, when the join
/// uses remote estimates (any of its relations does: postgres_fdw's
/// `merge_fdw_options`) and the answer is known. The statement is the join's remote
/// query over the join relation's target list as planning has it
/// ([`join_relation_targets`]), which `estimate_path_cost_size` deparses.
pub(super) fn known_join(cat: &dyn CostCatalog, f: &ForeignScanPlan, j: &super::RemoteJoin) -> Option<Estimate> {
    let q = RemoteQuery { targets: join_relation_targets(&f.remote, j), ..f.remote.clone() };
    let sql = crate::sql_text::deparse::deparse_remote_query(&q);
    match cat.remote_estimate(&join_relation(j), &sql, join_variant_of(&f.remote)) {
        RemoteAnswer::Known(e) => Some(e),
        RemoteAnswer::Local | RemoteAnswer::Pending => None,
    }
}

/// The join relation's target list while it is planned (`build_joinrel_tlist`): the
/// first relation's columns, then the second's, each in the order the query's final
/// target reads them. The Foreign Scan's own target is the final target's order
/// (`apply_scanjoin_target_to_paths` makes it the relation's before the plan is
/// made), so the EXPLAIN asked and the DECLARE sent can list the same columns in two
/// orders. Measured on PostgreSQL 15: `SELECT f2.c, f1.c … ORDER BY f2.b` asks
/// `EXPLAIN SELECT r1.c, r1.b, r2.c …` and declares `SELECT r1.c, r2.c, r1.b …`.
pub fn join_relation_targets(q: &RemoteQuery, j: &super::RemoteJoin) -> Vec<super::RemoteTarget> {
    // The relations in the join tree's order, outer first (a right join's preserved
    // side first: `make_join_rel` swaps its sides to match the join's info).
    fn leaves(t: &super::RemoteJoinTree, out: &mut Vec<usize>) {
        match t {
            super::RemoteJoinTree::Rel(r) => out.push(*r),
            super::RemoteJoinTree::Join { outer, inner, .. } => {
                leaves(outer, out);
                leaves(inner, out);
            }
        }
    }
    let mut order = vec![];
    leaves(&j.tree, &mut order);
    let rel_of = |t: &super::RemoteTarget| match t {
        super::RemoteTarget::Col(c) => {
            let r = j.rels.iter().position(|r| *c >= r.first && *c < r.first + r.ncols)?;
            order.iter().position(|&x| x == r)
        }
        super::RemoteTarget::Agg(..) | super::RemoteTarget::Const(_) => None,
    };
    let mut targets = q.targets.clone();
    targets.sort_by_key(|t| rel_of(t).unwrap_or(usize::MAX));
    targets
}

/// [`known`] for the scan without its join clauses: the relation's own estimate
/// (its base EXPLAIN), which sizes a join over a parameterized path
/// (`set_joinrel_size_estimates` reads the relations' rows, not the path's).
pub(super) fn known_unparameterized(cat: &dyn CostCatalog, f: &ForeignScanPlan) -> Option<Estimate> {
    let own = crate::coordinator_sql::paramfdw::without_param(&f.remote.quals);
    let plain = ForeignScanPlan { remote: RemoteQuery { quals: own, ..f.remote.clone() }, ..f.clone() };
    known(cat, &plain)
}

/// A Foreign Scan's estimate from its remote answer ([`path_estimate`]), with the
/// width PostgreSQL 15 prints: the remote width, except for a plain foreign table's
/// scan under ORDER BY, which `create_ordered_paths` gives the query's final target
/// (`apply_projection_to_path`), whose width is its columns' local ones (`widths`:
/// `set_rel_width`'s statistics, or the types' defaults). Measured on PostgreSQL 15:
/// `SELECT id, cat, val … ORDER BY val DESC` prints width 15 where the remote EXPLAIN
/// said 44, the same scan without ORDER BY 44.
pub(super) fn scan_estimate(
    remote: &Estimate,
    p: &CostParams,
    (fdw_startup_cost, fdw_tuple_cost): (f64, f64),
    q: &RemoteQuery,
    partition: bool,
    widths: &[f64],
) -> Estimate {
    let mut est = path_estimate(remote, p, fdw_startup_cost, fdw_tuple_cost);
    if !partition && !q.order_by.is_empty() {
        est.width = widths.iter().sum::<f64>() as i64;
    }
    est
}

/// An Append's (or Merge Append's) width over remote-estimated children: its columns'
/// (`set_append_rel_size`'s per-column widths, the children's `attr_widths` from
/// local statistics), not the mean of the children's remote widths; `width` otherwise.
pub(super) fn parent_width(cat: &dyn CostCatalog, children: &[Plan], widths: &[f64], width: i64) -> i64 {
    let remote = children.iter().any(|c| matches!(c, Plan::ForeignScan(f) if known(cat, f).is_some()));
    if remote {
        widths.iter().sum::<f64>() as i64
    } else {
        width
    }
}

/// A select list of the remote-estimated scan's own columns, in any order, is its
/// relation's target (`build_base_rel_tlists` adds the columns in the order the query
/// names them): no projection, so the scan's width stands (the remote one).
pub(super) fn same_target(cat: &dyn CostCatalog, child: &Plan, targets: &[(super::Expr, String)]) -> bool {
    let scan = matches!(child, Plan::ForeignScan(f) if known(cat, f).is_some());
    scan && targets.iter().all(|(e, _)| matches!(e, super::Expr::Col(_)))
}

/// Does the expression read a Nested Loop's parameter (a parameterized scan's)?
/// A parameter of any kind: a Nested Loop's, a correlated SubPlan's (`$0`), a
/// prepared statement's.
fn has_param(e: &super::Expr) -> bool {
    use super::Expr;
    match e {
        Expr::ExecParam(..) | Expr::Param(..) => true,
        Expr::Col(_) | Expr::Const(_) => false,
        Expr::Bin(_, l, r) => has_param(l) || has_param(r),
        Expr::Not(x) | Expr::IsNull(x, _) => has_param(x),
        Expr::Func(_, args) => args.iter().any(has_param),
    }
}

/// `get_remote_estimate`: the figures of the first line of a remote EXPLAIN, as its
/// `sscanf("%*[^(](cost=%lf..%lf rows=%lf width=%d)")` reads them; None when the
/// line has no such part (PostgreSQL: "could not interpret EXPLAIN output").
pub fn parse_top_line(line: &str) -> Option<Estimate> {
    let open = line.find('(')?;
    let rest = line[open + 1..].strip_prefix("cost=")?;
    let (startup, rest) = rest.split_once("..")?;
    let (total, rest) = rest.split_once(" rows=")?;
    let (rows, rest) = rest.split_once(" width=")?;
    let width = rest.strip_suffix(')').unwrap_or(rest);
    let width: String = width.chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
    Some(Estimate {
        startup: startup.parse().ok()?,
        total: total.parse().ok()?,
        rows: rows.parse().ok()?,
        width: width.parse().ok()?,
    })
}

/// The top line a PostgreSQL 15 EXPLAIN prints for a plan node's estimate (costs with
/// two decimals, rows rounded), after the node's label.
pub fn top_line(label: &str, e: &Estimate) -> String {
    format!("{label}  (cost={:.2}..{:.2} rows={:.0} width={})", e.startup, e.total, e.rows, e.width)
}

/// `estimate_path_cost_size` with a remote estimate: the remote figures, then the
/// connection's start-up and the transfer and local handling of each fetched row,
/// one addition at a time as PostgreSQL adds them (the cents depend on the order).
pub fn path_estimate(remote: &Estimate, p: &CostParams, fdw_startup_cost: f64, fdw_tuple_cost: f64) -> Estimate {
    let retrieved = remote.rows;
    let mut startup = remote.startup;
    let mut total = remote.total;
    startup += fdw_startup_cost;
    total += fdw_startup_cost;
    total += fdw_tuple_cost * retrieved;
    total += p.cpu_tuple_cost * retrieved;
    Estimate { startup, total, rows: remote.rows, width: remote.width }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(startup: f64, total: f64, rows: f64, width: i64) -> Estimate {
        Estimate { startup, total, rows, width }
    }

    #[test]
    fn the_top_line_is_read_as_get_remote_estimate_reads_it() {
        let e = parse_top_line("Seq Scan on t1  (cost=0.00..18.50 rows=100 width=14)").unwrap();
        assert_eq!(e, est(0.0, 18.5, 100.0, 14));
        let e = parse_top_line("Sort  (cost=65.83..68.33 rows=1000 width=14)").unwrap();
        assert_eq!(e, est(65.83, 68.33, 1000.0, 14));
        assert_eq!(parse_top_line("Result"), None);
        assert_eq!(parse_top_line(&top_line("Seq Scan on t1", &e)), Some(e));
    }

    /// PostgreSQL 15, `EXPLAIN SELECT * FROM f1 WHERE a < 10` with use_remote_estimate
    /// on a server whose EXPLAIN says `(cost=0.00..18.50 rows=100 width=14)`: the
    /// Foreign Scan is `(cost=100.00..120.50 rows=100 width=14)`.
    #[test]
    fn the_remote_figures_get_postgres_fdws_additions() {
        let e = path_estimate(&est(0.0, 18.5, 100.0, 14), &CostParams::default(), 100.0, 0.01);
        assert_eq!(format!("{:.2}..{:.2}", e.startup, e.total), "100.00..120.50");
        assert_eq!((e.rows, e.width), (100.0, 14));
    }

    /// PostgreSQL 15's EXPLAIN of a parameterized path: the join clause first, its
    /// parameter a placeholder; the DECLARE keeps `$1` after the relation's own.
    #[test]
    fn a_parameterized_scan_is_explained_with_a_placeholder() {
        use crate::coordinator_sql::paramfdw::{param_clause, NEST_FDW_PARAM};
        use crate::plan::{BinOp, Expr, SqlType};
        let q = RemoteQuery::scan("t1", vec![], &[]);
        let own = Expr::bin(BinOp::Lt, Expr::Col(0), Expr::Const(crate::types::Datum::Int(90)));
        let q = RemoteQuery { quals: vec![own, param_clause(1, SqlType::Int4, false)], ..q };
        let sql = sql_of(&q);
        // (No column names given: the deparser writes column i as `$i`.)
        assert!(sql.ends_with(" WHERE ((((SELECT null::integer)::integer) = $1)) AND (($0 < 90))"), "{sql}");
        assert_eq!(variant_of(&q), Variant::Param);
        assert!(!sql.contains(&NEST_FDW_PARAM.to_string()));
    }

    /// The join relation's target (first relation's columns, then the second's, each
    /// in the final target's order) is what the join's EXPLAIN lists.
    #[test]
    fn a_join_is_asked_over_the_join_relations_target() {
        use crate::plan::{JoinType, RemoteJoin, RemoteJoinTree, RemoteRel, RemoteTarget};
        let rel = |relation: &str, rt_index, first| RemoteRel {
            table: format!("t{rt_index}"),
            relation: relation.into(),
            alias: relation.into(),
            rt_index,
            first,
            ncols: 3,
            quals: vec![],
            parent: None,
        };
        let tree = RemoteJoinTree::Join {
            join_type: JoinType::Inner,
            outer: Box::new(RemoteJoinTree::Rel(0)),
            inner: Box::new(RemoteJoinTree::Rel(1)),
            on: vec![],
            join_clauses: 0,
        };
        let j = RemoteJoin { rels: vec![rel("f2", 1, 0), rel("f1", 2, 3)], tree };
        // The final target f2.c, f1.c, f2.b (columns 2, 5, 1).
        let targets = vec![RemoteTarget::Col(2), RemoteTarget::Col(5), RemoteTarget::Col(1)];
        let q = RemoteQuery { targets, ..RemoteQuery::scan("t1", vec![], &[]) };
        let grouped = join_relation_targets(&q, &j);
        assert_eq!(grouped, [RemoteTarget::Col(2), RemoteTarget::Col(1), RemoteTarget::Col(5)]);
        assert_eq!(join_relation(&j), "f2 f1");
        assert_eq!(join_variant_of(&q), Variant::Join);
        let ordered = RemoteQuery {
            order_by: vec![super::super::SortKey { expr: super::super::Expr::Col(1), desc: false }],
            ..q
        };
        assert_eq!(join_variant_of(&ordered), Variant::JoinOrdered);
    }

    #[test]
    fn questions_come_out_in_postgres_order() {
        let r = RemoteEstimates::default();
        r.arm(true);
        let q = |rel: &str, sql: &str, variant| RemoteExplain {
            relation: rel.into(),
            server: "s1".into(),
            sql: sql.into(),
            variant,
        };
        assert_eq!(r.ask(q("ft1", "A", Variant::Base)), RemoteAnswer::Pending);
        r.ask(q("ft1", "A o", Variant::Ordered));
        r.ask(q("ft2", "B p", Variant::Param));
        r.ask(q("ft2", "B o", Variant::Ordered));
        r.ask(q("ft2", "B", Variant::Base));
        r.ask(q("ft1 ft2", "J o", Variant::JoinOrdered));
        r.ask(q("ft1 ft2", "J", Variant::Join));
        r.ask(q("ft1", "A", Variant::Base));
        assert_eq!(r.missing().len(), 7);
        r.answer("s1", "A", est(0.0, 1.0, 1.0, 4));
        assert_eq!(r.ask(q("ft1", "A", Variant::Base)), RemoteAnswer::Known(est(0.0, 1.0, 1.0, 4)));
        assert_eq!(r.missing().len(), 6);
        assert!(r.asked_unarmed().is_empty(), "an armed planning's questions are its own");
        r.arm(false);
        let order: Vec<String> = r.wire_order().into_iter().map(|q| q.sql).collect();
        assert_eq!(order, ["A", "B", "A o", "B o", "B p", "J", "J o"]);
        r.ask(q("ft1", "A", Variant::Base));
        assert_eq!(r.asked_unarmed().len(), 1, "asked outside a planning that answers");
    }
}
