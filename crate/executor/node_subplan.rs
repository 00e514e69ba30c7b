//! InitPlans and hashed SubPlans: uncorrelated subqueries run at most once, when their
//! value is first needed (PostgreSQL's nodeSubplan.c: `ExecInitSubPlan`,
//! `ExecSetParamPlan` for an initPlan, `buildSubPlanHash`/`ExecHashSubPlan` for a
//! hashed SubPlan, and execExprInterp.c's `ExecEvalParamExec`). A hashed SubPlan
//! (`x IN (SELECT …)`) keeps its rows' distinct values (`table`) and the test is
//! bound as a lookup in them; it is attached to the node whose expression reads it
//! (`attach_subplans`), and EXPLAIN prints it after that node's children.
//!
//! Protocol:
//! - ExecInit (`init_with_init_plans`): every InitPlan's state tree is built *before*
//!   the main plan's, as PostgreSQL's `InitPlan()` initializes `es_subplanstates`
//!   before the plan tree: so its foreign scans get their connections and cursor
//!   numbers first. The InitPlans are attached to the main plan's top node (EXPLAIN
//!   prints them under it, `explain_init_plans`).
//! - A node about to evaluate an expression that reads `$n` first calls
//!   `bind_params`: each InitPlan not yet run is run to completion there
//!   (`exec_set_param_plan`) and the expression is rewritten with the values as
//!   constants. A Result does so at its first input row, a foreign scan before its
//!   DECLARE (postgres_fdw's `create_cursor` evaluates the query's parameters there,
//!   `process_query_params`). An InitPlan whose value is never needed never runs:
//!   EXPLAIN ANALYZE says `(never executed)`. A select list over a partitioned
//!   table's Append is PostgreSQL's projection inside each member scan
//!   (ExecScan → ExecProject → ExecEvalParamExec → ExecSetParamPlan): the Result
//!   above the Append gets the first row a member returns as that scan returns it, so
//!   the InitPlan runs at the same point — in async mode after the Append's requests
//!   went out, its own scans draining a connection's pending FETCH first
//!   (`process_pending_request`). A Sort or Merge Append between them would read
//!   further rows first: the Result hands it the values (`set_projection_params`)
//!   and it runs them at its first input row (`run_projection_params`), as the
//!   member scan's projection does in PostgreSQL; deeper than that, the planner
//!   refuses it (`coordinator_sql::subselect::check_params`).
//! - ExecEnd (`end_init_plans`): after the main plan's nodes, as `ExecEndPlan` ends
//!   `es_subplanstates` after the plan tree (their CLOSEs come last).
//!
//! Invariants: an InitPlan (and a hashed SubPlan) runs at most once per query (its value is then kept: no
//! parameter of an uncorrelated subquery ever changes); while it runs it is taken out
//! of the EState, so it cannot be re-entered; a value is bound only once the InitPlan
//! has finished.
//!
//! Waiting: PostgreSQL blocks inside the InitPlan's own Append (WaitEventSetWait) with
//! the outer scan's `create_cursor` on the stack. Here the InitPlan's nodes return
//! Wait, its state stays where it was, and the caller returns Wait as a blocking libpq
//! call would: the connections the InitPlan waits on become `es.blocked_on` (and
//! `wake_also`), so an async requestor above sees its request as not yet made and
//! makes it again (`requestor::request`), and resumes the InitPlan there.
//!
//! Correlated SubPlans (`SubLinkKind::Correlated`, `Func::SubPlan`): the node whose
//! select list calls one (a Result, folded into its scan by EXPLAIN) binds its targets
//! again for every row (`bind_row`): the SubPlan's parameters are set from the row
//! (`es.param_values`), and from its second run on it is rescanned with them marked
//! changed (`es.chg_param`), so a foreign scan under it sends `CLOSE` (waited for
//! before the plan goes on, as pgfdw_exec_query waits) and declares its cursor again
//! with the new `$1` (`ExecScanSubPlan`, postgresReScanForeignScan); it then runs to
//! its value (NULL without a row, an error with two). A Wait keeps the row, and the
//! next call resumes the same run (`evaluated_for`).
//!
//! Departs from PostgreSQL: an expression's InitPlans are run before it is evaluated,
//! all of them, in order of appearance; PostgreSQL runs each when the evaluation
//! reaches it, so `x > $0 AND y > $1` runs the second only for a row the first
//! conjunct passes (never, if none does).

use super::{exec_end_node, exec_proc_node, explain_tree, ExecStatus, InitContext, PlanState};
use crate::executor::estate::{EState, ExecError, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::eval::text_out;
use crate::plan::{BinOp, Expr, Func, InitPlan, Plan, SqlType, SubLinkKind};
use crate::types::Datum;

/// One InitPlan at run time (PostgreSQL's SubPlanState of an initPlan, with its
/// output parameter's `ParamExecData`).
#[derive(Clone)]
pub struct InitPlanState {
    pub plan_id: usize,
    pub param: usize,
    pub kind: SubLinkKind,
    /// The node the InitPlan is attached to (EXPLAIN prints it there).
    pub attached_to: usize,
    /// None while it runs (taken out of the EState).
    plan: Option<PlanState>,
    /// The value, once the InitPlan has finished (`ParamExecData.value`; PostgreSQL's
    /// `execPlan` is cleared at the same moment).
    value: Option<Datum>,
    /// The first row's value, while the InitPlan is still running (a scalar subquery
    /// must return no second row).
    first: Option<Datum>,
    /// A hashed SubPlan's table: the distinct first-column values of its rows
    /// (`buildSubPlanHash`), complete once `value` is set.
    table: Vec<Datum>,
    /// A correlated SubPlan's parameters (PARAM_EXEC numbers), set per outer row.
    args: Vec<usize>,
    /// The outer columns `args` stand for, as EXPLAIN names them inside the SubPlan.
    arg_names: Vec<String>,
    /// An ALL/ANY SubPlan's left operand for the current outer row.
    lhs: Datum,
    /// The outer row (the evaluating node's id and row number) its value is for.
    evaluated_for: Option<(usize, u64)>,
}

/// ExecInit of a plan with InitPlans: the InitPlans first, then the main plan, whose
/// top node they are attached to.
pub fn init_with_init_plans(
    child: &Plan,
    init_plans: &[InitPlan],
    ctx: &InitContext,
    es: &mut EState,
) -> Result<PlanState, String> {
    let first = es.init_plans.len();
    for ip in init_plans {
        let ps = super::init_plan(&ip.plan, ctx, es)?;
        es.init_plans.push(InitPlanState {
            plan_id: ip.plan_id,
            param: ip.param,
            kind: ip.kind,
            attached_to: usize::MAX,
            plan: Some(ps),
            value: None,
            first: None,
            table: vec![],
            args: ip.args.clone(),
            arg_names: ip.arg_names.clone(),
            lhs: Datum::Null,
            evaluated_for: None,
        });
    }
    let root = super::init_plan(child, ctx, es)?;
    // A hashed SubPlan belongs to the node whose expression reads it (`attach_subplans`).
    for ip in &mut es.init_plans[first..] {
        if ip.attached_to == usize::MAX {
            ip.attached_to = root.id;
        }
    }
    Ok(root)
}

/// ExecSetParamPlan: runs the InitPlan of `$param` to completion unless it already
/// ran. True when the value is there; false when the InitPlan waits (the caller
/// returns Wait and calls again).
pub fn exec_set_param_plan(es: &mut EState, param: usize) -> ExecResult<bool> {
    let Some(k) = es.init_plans.iter().position(|p| p.param == param && !p.kind.is_hashed()) else {
        return Err(ExecError::Internal(format!("no InitPlan computes ${param}")));
    };
    run_to_completion(es, k)
}

/// The InitPlans of `params` run, each unless it already ran (a correlated SubPlan's
/// parameters, set by its caller, are skipped); false while one waits (call again).
/// A node that reads rows for a projection computed below it in PostgreSQL calls this
/// at its first input row (`ExecNode::set_projection_params`).
pub fn run_projection_params(es: &mut EState, params: &[usize]) -> ExecResult<bool> {
    for &n in params {
        if es.param_values.iter().any(|(p, _)| *p == n) {
            continue;
        }
        if !exec_set_param_plan(es, n)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// buildSubPlanHash: reads hashed SubPlan `plan_id`'s rows into its table unless it
/// did already. True when the table is complete; false when the SubPlan waits.
pub fn build_subplan_hash(es: &mut EState, plan_id: usize) -> ExecResult<bool> {
    let Some(k) = es.init_plans.iter().position(|p| p.plan_id == plan_id && p.kind.is_hashed()) else {
        return Err(ExecError::Internal(format!("no hashed SubPlan {plan_id}")));
    };
    run_to_completion(es, k)
}

/// Runs subplan `k` (an index of `es.init_plans`) until its value or table is
/// complete, unless it is already.
fn run_to_completion(es: &mut EState, k: usize) -> ExecResult<bool> {
    if es.init_plans[k].value.is_some() {
        return Ok(true);
    }
    let Some(mut ps) = es.init_plans[k].plan.take() else {
        return Err(ExecError::Internal(format!("InitPlan {} re-entered", es.init_plans[k].plan_id)));
    };
    let result = run_init_plan(&mut ps, es, k);
    es.init_plans[k].plan = Some(ps);
    match result? {
        true => Ok(true),
        false => {
            blocked_as_libpq_would(es);
            Ok(false)
        }
    }
}

/// The InitPlan's rows until its value is known. False on Wait.
fn run_init_plan(ps: &mut PlanState, es: &mut EState, k: usize) -> ExecResult<bool> {
    loop {
        match exec_proc_node(ps, es)? {
            ExecStatus::Wait => return Ok(false),
            ExecStatus::Row => {
                let v = ps.node.slot().first().cloned().unwrap_or(Datum::Null);
                let ip = &mut es.init_plans[k];
                match ip.kind {
                    SubLinkKind::Hashed | SubLinkKind::HashedExists => {
                        if !ip.table.contains(&v) {
                            ip.table.push(v);
                        }
                    }
                    SubLinkKind::Exists => {
                        ip.value = Some(Datum::Bool(true));
                        return Ok(true);
                    }
                    SubLinkKind::Expr | SubLinkKind::Correlated if ip.first.is_some() => {
                        return Err(ExecError::Query(
                            "more than one row returned by a subquery used as an expression".into(),
                        ));
                    }
                    SubLinkKind::Expr | SubLinkKind::Correlated => ip.first = Some(v),
                    // ExecScanSubPlan's ALL/ANY: stop at the first row that decides.
                    SubLinkKind::AnyAll { op, all } => {
                        let lhs = ip.lhs.clone();
                        match Expr::bin(op, Expr::Const(lhs), Expr::Const(v)).eval(&[])? {
                            Datum::Null => ip.first = Some(Datum::Null),
                            d if d.is_true() != all => {
                                ip.value = Some(Datum::Bool(!all));
                                return Ok(true);
                            }
                            _ => {}
                        }
                    }
                }
            }
            ExecStatus::Done => {
                let ip = &mut es.init_plans[k];
                ip.value = Some(match ip.kind {
                    SubLinkKind::Exists => Datum::Bool(false),
                    SubLinkKind::Hashed | SubLinkKind::HashedExists => Datum::Null,
                    SubLinkKind::Expr | SubLinkKind::Correlated => ip.first.take().unwrap_or(Datum::Null),
                    // No row decided: ALL is true, ANY false, unless a comparison was NULL.
                    SubLinkKind::AnyAll { all, .. } => match ip.first.take() {
                        Some(_) => Datum::Null,
                        None => Datum::Bool(all),
                    },
                });
                return Ok(true);
            }
        }
    }
}

/// The InitPlan returned Wait from its own event wait (its requests' connections in
/// this turn's wait set): to its caller that is one blocking call on those
/// connections. A step boundary (`yielded`) or a blocking call already recorded stays
/// as it is.
pub(crate) fn blocked_as_libpq_would(es: &mut EState) {
    if es.interrupted() {
        return;
    }
    let set = es.event_loop.wait_set().to_vec();
    if let Some((&first, rest)) = set.split_first() {
        es.blocked_on = Some(first);
        es.wake_also = rest.to_vec();
    }
}

/// Runs the InitPlans and hashed SubPlans `e` reads and returns `e` with their
/// values as constants and each `x IN (hashed SubPlan)` as a test of its table; None
/// if one of them waits (call again).
pub fn bind_params(es: &mut EState, e: &Expr) -> ExecResult<Option<Expr>> {
    let mut params = vec![];
    e.for_each_param(&mut |n, _| params.push(n));
    // A correlated SubPlan's parameters are set by its caller, not by an InitPlan.
    params.retain(|n| !es.param_values.iter().any(|(p, _)| p == n));
    for n in params {
        if !exec_set_param_plan(es, n)? {
            return Ok(None);
        }
    }
    let mut hashed = vec![];
    e.hashed_subplans(&mut hashed);
    for k in hashed {
        if !build_subplan_hash(es, k)? {
            return Ok(None);
        }
    }
    Ok(Some(bind(es, e)))
}

/// `e` with the values and tables of its (finished) subplans.
fn bind(es: &EState, e: &Expr) -> Expr {
    match e {
        Expr::ExecParam(n, _) if es.param_values.iter().any(|(p, _)| p == n) => {
            Expr::Const(es.param_values.iter().find(|(p, _)| p == n).map_or(Datum::Null, |(_, v)| v.clone()))
        }
        Expr::ExecParam(n, _) => Expr::Const(
            es.init_plans
                .iter()
                .find(|p| p.param == *n && !p.kind.is_hashed())
                .and_then(|p| p.value.clone())
                .unwrap_or(Datum::Null),
        ),
        Expr::Func(Func::HashedSubPlan(k), args) => {
            let lhs = args.first().map(|a| bind(es, a)).unwrap_or(Expr::Const(Datum::Null));
            let Some(ip) = es.init_plans.iter().find(|p| p.plan_id == *k) else { return membership(&lhs, &[]) };
            if ip.kind == SubLinkKind::HashedExists {
                // unknownEqFalse: a NULL on either side is no match, never NULL.
                let values: Vec<Datum> = ip.table.iter().filter(|v| !v.is_null()).cloned().collect();
                let not_null = Expr::IsNull(Box::new(lhs.clone()), true);
                return Expr::bin(BinOp::And, not_null, membership(&lhs, &values));
            }
            membership(&lhs, &ip.table)
        }
        Expr::Col(_) | Expr::Const(_) | Expr::Param(..) => e.clone(),
        Expr::Bin(op, l, r) => Expr::bin(*op, bind(es, l), bind(es, r)),
        Expr::Not(x) => Expr::Not(Box::new(bind(es, x))),
        Expr::IsNull(x, neg) => Expr::IsNull(Box::new(bind(es, x)), *neg),
        Expr::Func(f, args) => Expr::Func(*f, args.iter().map(|a| bind(es, a)).collect()),
    }
}

/// `x IN table` with SQL's NULL rules, as ExecHashSubPlan answers it: true if x
/// equals a value; else NULL if x is NULL or the table holds a NULL (and is not
/// empty); else false. An OR of equalities has exactly these rules; it is built as a
/// balanced tree, so its depth grows with the logarithm of the table.
fn membership(lhs: &Expr, table: &[Datum]) -> Expr {
    match table {
        [] => Expr::Const(Datum::Bool(false)),
        [v] => Expr::bin(BinOp::Eq, lhs.clone(), Expr::Const(v.clone())),
        _ => {
            let (a, b) = table.split_at(table.len() / 2);
            Expr::bin(BinOp::Or, membership(lhs, a), membership(lhs, b))
        }
    }
}

/// postgres_fdw's `process_query_params`: the values of a remote query's parameters
/// as text (None: SQL NULL), in `$1, $2, …` order; None if an InitPlan waits.
pub fn process_query_params(es: &mut EState, params: &[(usize, SqlType)]) -> ExecResult<Option<Vec<Option<String>>>> {
    let mut out = vec![];
    for &(n, ty) in params {
        if let Some((_, v)) = es.param_values.iter().find(|(p, _)| *p == n) {
            out.push((!v.is_null()).then(|| text_out(v, Some(ty))));
            continue;
        }
        if !exec_set_param_plan(es, n)? {
            return Ok(None);
        }
        let v = es.init_plans.iter().find(|p| p.param == n).and_then(|p| p.value.clone()).unwrap_or(Datum::Null);
        out.push((!v.is_null()).then(|| text_out(&v, Some(ty))));
    }
    Ok(Some(out))
}

/// ExecEndPlan's second half: the InitPlans end after the main plan.
pub fn end_init_plans(es: &mut EState) {
    for k in 0..es.init_plans.len() {
        if let Some(mut ps) = es.init_plans[k].plan.take() {
            exec_end_node(&mut ps, es);
            es.init_plans[k].plan = Some(ps);
        }
    }
}

/// The InitPlans attached to node `id`, as EXPLAIN shows them (ExplainSubPlans with
/// relationship "InitPlan"): `InitPlan 1 (returns $0)`.
pub fn explain_init_plans(es: &EState, id: usize) -> Vec<ExplainNode> {
    es.init_plans
        .iter()
        .filter(|p| p.attached_to == id)
        .filter_map(|p| {
            let ps = p.plan.as_ref()?;
            let (relationship, name) = match p.kind {
                SubLinkKind::Hashed
                | SubLinkKind::HashedExists
                | SubLinkKind::Correlated
                | SubLinkKind::AnyAll { .. } => ("SubPlan", format!("SubPlan {}", p.plan_id)),
                _ => (
                    "InitPlan",
                    format!("InitPlan {} (returns {})", p.plan_id, Expr::ExecParam(p.param, SqlType::Int4).to_sql(&[])),
                ),
            };
            let mut e = explain_tree(ps, es, Some(relationship));
            for (n, outer) in p.args.iter().zip(&p.arg_names) {
                name_param(&mut e, *n, outer);
            }
            e.details.insert(0, ("Subplan Name".into(), name));
            Some(e)
        })
        .collect()
}

/// A correlated SubPlan's parameter `$n` written as the outer column it stands for,
/// in every line of the SubPlan's tree (ruleutils.c prints the outer Var, `h.grp`;
/// a remote query keeps its own `$1::integer`).
fn name_param(e: &mut ExplainNode, n: usize, outer: &str) {
    let mark = format!("{}{n}", crate::plan::PARAM_MARK);
    for (_, v) in e.details.iter_mut() {
        let mut out = String::with_capacity(v.len());
        let mut rest = v.as_str();
        while let Some(i) = rest.find(&mark) {
            let after = &rest[i + mark.len()..];
            out.push_str(&rest[..i]);
            // `$1` is not `$10`'s start.
            if after.starts_with(|c: char| c.is_ascii_digit()) {
                out.push_str(&mark);
            } else {
                out.push_str(outer);
            }
            rest = after;
        }
        out.push_str(rest);
        *v = out;
    }
    e.children.iter_mut().for_each(|c| name_param(c, n, outer));
}

/// Attaches the hashed SubPlans `exprs` read to node `id` (ExecInitExpr's
/// `ExecInitSubPlan`: a SubPlan belongs to the node evaluating it, EXPLAIN prints it
/// there, after the node's children).
pub fn attach_subplans<'e>(es: &mut EState, id: usize, exprs: impl IntoIterator<Item = &'e Expr>) {
    let mut hashed = vec![];
    for e in exprs {
        e.hashed_subplans(&mut hashed);
        correlated_subplans(e, &mut hashed);
    }
    for k in hashed {
        let subplan = |p: &InitPlanState| {
            p.kind.is_hashed() || matches!(p.kind, SubLinkKind::Correlated | SubLinkKind::AnyAll { .. })
        };
        if let Some(p) = es.init_plans.iter_mut().find(|p| p.plan_id == k && subplan(p)) {
            p.attached_to = id;
        }
    }
}

/// The correlated SubPlans `e` calls (`Func::SubPlan`), in order of appearance.
pub fn correlated_subplans(e: &Expr, out: &mut Vec<usize>) {
    match e {
        Expr::Func(Func::SubPlan { plan_id, .. }, args) => {
            out.push(*plan_id);
            args.iter().for_each(|a| correlated_subplans(a, out));
        }
        Expr::Col(_) | Expr::Const(_) | Expr::Param(..) | Expr::ExecParam(..) => {}
        Expr::Bin(_, l, r) => {
            correlated_subplans(l, out);
            correlated_subplans(r, out);
        }
        Expr::Not(x) | Expr::IsNull(x, _) => correlated_subplans(x, out),
        Expr::Func(_, args) => args.iter().for_each(|a| correlated_subplans(a, out)),
    }
}

/// `e` for one input row (row number `row_no` of node `node`): its InitPlan values
/// and hashed SubPlans bound as [`bind_params`] binds them, and each correlated
/// SubPlan's value for this row (`ExecScanSubPlan`); None if a subplan waits (call
/// again with the same row).
pub fn bind_row(es: &mut EState, e: &Expr, row: &[Datum], (node, row_no): (usize, u64)) -> ExecResult<Option<Expr>> {
    let Some(bound) = bind_params(es, e)? else { return Ok(None) };
    subst_subplans(es, &bound, row, (node, row_no))
}

fn subst_subplans(es: &mut EState, e: &Expr, row: &[Datum], at: (usize, u64)) -> ExecResult<Option<Expr>> {
    Ok(Some(match e {
        Expr::Func(Func::SubPlan { plan_id, .. }, args) => {
            let values = args.iter().map(|a| a.eval(row)).collect::<Result<Vec<Datum>, _>>()?;
            match exec_scan_subplan(es, *plan_id, values, at)? {
                Some(v) => Expr::Const(v),
                None => return Ok(None),
            }
        }
        Expr::Col(_) | Expr::Const(_) | Expr::Param(..) | Expr::ExecParam(..) => e.clone(),
        Expr::Bin(op, l, r) => {
            let Some(l) = subst_subplans(es, l, row, at)? else { return Ok(None) };
            // ExecEvalAnd / ExecEvalOr stop at the first false / true argument: a
            // SubPlan in the rest is not run for this row (EXPLAIN ANALYZE counts its
            // loops only where it ran).
            if let Some(decided) = short_circuit(*op, &l, row) {
                return Ok(Some(decided));
            }
            let Some(r) = subst_subplans(es, r, row, at)? else { return Ok(None) };
            Expr::bin(*op, l, r)
        }
        Expr::Not(x) => match subst_subplans(es, x, row, at)? {
            Some(x) => Expr::Not(Box::new(x)),
            None => return Ok(None),
        },
        Expr::IsNull(x, neg) => match subst_subplans(es, x, row, at)? {
            Some(x) => Expr::IsNull(Box::new(x), *neg),
            None => return Ok(None),
        },
        Expr::Func(f, args) => {
            let mut out = Vec::with_capacity(args.len());
            for a in args.iter() {
                let Some(b) = subst_subplans(es, a, row, at)? else { return Ok(None) };
                out.push(b);
            }
            Expr::Func(*f, out.into_boxed_slice())
        }
    }))
}

/// An AND whose first argument is false, or an OR whose first argument is true, for
/// this row: its value, without its second argument. None otherwise (an error in the
/// first argument is left to the caller's evaluation of the whole).
fn short_circuit(op: BinOp, first: &Expr, row: &[Datum]) -> Option<Expr> {
    let value = match op {
        BinOp::And | BinOp::Or => first.eval(row).ok()?,
        _ => return None,
    };
    match op {
        BinOp::And if value.is_false() => Some(Expr::Const(Datum::Bool(false))),
        BinOp::Or if value.is_true() => Some(Expr::Const(Datum::Bool(true))),
        _ => None,
    }
}

/// `ExecScanSubPlan` for a correlated scalar SubPlan: for a new outer row, its
/// parameters are set from `values` and (after its first run) it is rescanned with
/// them marked changed (`chgParam`: a foreign scan under it closes its cursor and
/// declares it again with the new values); then it runs until its value is known.
/// None when it waits: the caller keeps the row and calls again, which resumes it.
fn exec_scan_subplan(
    es: &mut EState,
    plan_id: usize,
    values: Vec<Datum>,
    at: (usize, u64),
) -> ExecResult<Option<Datum>> {
    let per_row = |p: &InitPlanState| matches!(p.kind, SubLinkKind::Correlated | SubLinkKind::AnyAll { .. });
    let Some(k) = es.init_plans.iter().position(|p| p.plan_id == plan_id && per_row(p)) else {
        return Err(ExecError::Internal(format!("no SubPlan {plan_id}")));
    };
    if es.init_plans[k].evaluated_for != Some(at) {
        let ran = es.init_plans[k].evaluated_for.is_some();
        // An ALL/ANY SubPlan's argument is its left operand, not a parameter.
        let mut values = values;
        if let SubLinkKind::AnyAll { .. } = es.init_plans[k].kind {
            es.init_plans[k].lhs = if values.is_empty() { Datum::Null } else { values.remove(0) };
        }
        let changed = !es.init_plans[k].args.is_empty();
        for (&p, v) in es.init_plans[k].args.clone().iter().zip(values) {
            es.param_values.retain(|(q, _)| *q != p);
            es.param_values.push((p, v));
        }
        let ip = &mut es.init_plans[k];
        ip.evaluated_for = Some(at);
        ip.value = None;
        ip.first = None;
        if ran {
            let Some(mut ps) = es.init_plans[k].plan.take() else {
                return Err(ExecError::Internal(format!("SubPlan {plan_id} re-entered")));
            };
            // Without a parameter of its own it only rewinds (a Materialize replays).
            es.chg_param = changed;
            let r = super::exec_rescan(&mut ps, es);
            es.chg_param = false;
            es.init_plans[k].plan = Some(ps);
            r?;
            // The rescan's statements (a CLOSE) go out and are waited for first, as
            // pgfdw_exec_query waits inside ExecReScan.
            if !es.remote_commands.is_empty() {
                return Ok(None);
            }
        }
    }
    if !run_to_completion(es, k)? {
        return Ok(None);
    }
    Ok(es.init_plans[k].value.clone())
}
