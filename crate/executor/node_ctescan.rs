//! CTE Scan and the query's common table expressions (PostgreSQL's nodeCtescan.c and
//! execMain.c's handling of CTE subplans): `WITH t AS (…) SELECT … FROM t`, where the
//! CTE is kept as a subplan (a data-modifying CTE, a MATERIALIZED one, or one the
//! query reads more than once), not inlined as a subquery.
//!
//! Protocol:
//! - ExecInit (`init_with_ctes`, PostgreSQL's `InitPlan()` initializing
//!   `es_subplanstates` before the plan tree): every CTE's plan is initialized before
//!   the main plan, so its foreign scans and foreign modifies get their connections
//!   and their cursor numbers first. The CTEs are attached to the main plan's top node
//!   (EXPLAIN prints them there as `CTE name`, before its InitPlans and inputs).
//! - ExecInitCteScan (`CteScanState::init`): every CTE Scan of one CTE shares that
//!   CTE's tuplestore (`CteState::rows`, the `leader`'s `cte_table` in PostgreSQL),
//!   each with its own read position.
//! - CteScanNext (`CteScanState::exec_next`): a scan whose read position is at the
//!   end of the tuplestore asks the CTE's plan for one more row, appends it to the
//!   tuplestore and returns it; the other scans find it there later. When the plan is
//!   done the tuplestore is complete (`eof_cte`). The CTE's plan is therefore run
//!   lazily, as far as its readers read, and never twice.
//! - ExecPostprocessPlan (`exec_postprocess_plan`): when the main plan is done, each
//!   data-modifying CTE's plan is run to completion (its remaining rows discarded),
//!   so that an `UPDATE … RETURNING` read only partly, or not at all, still updates
//!   every row; then ExecEndPlan ends the main plan's nodes and the CTEs' (`end_ctes`).
//!
//! Invariants:
//! - a CTE's plan runs at most once per query, and its rows are kept in the order it
//!   returned them: every CTE Scan of it reads the same rows in the same order;
//! - while its plan runs, it is taken out of the EState, so it cannot be re-entered;
//! - a rescan only rewinds the scan's read position (`ExecReScanCteScan`): the CTE's
//!   plan is not run again;
//! - a Wait from the CTE's plan leaves it where it was, and the scan asks again at the
//!   next call (the row is then appended once). It is reported as a blocking call on
//!   the connections the CTE's plan waits on, as PostgreSQL blocks inside the CTE's
//!   own nodes with the CTE Scan on the stack (`node_subplan`'s rule).
//!
//! Departs from PostgreSQL: the tuplestore is a vector of rows held in memory
//! (PostgreSQL's spills to disk past `work_mem`), and the rows a data-modifying CTE's
//! remaining run returns in ExecPostprocessPlan are not kept (PostgreSQL's go nowhere
//! either: it runs the ModifyTable node itself).

use super::{exec_end_node, exec_proc_node, explain_tree, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecError, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::CtePlan;
use crate::types::Datum;

/// One CTE at run time: its plan and its tuplestore.
#[derive(Clone)]
pub struct CteState {
    pub name: String,
    pub plan_id: usize,
    pub modifying: bool,
    /// The node the CTE is attached to (EXPLAIN prints it there).
    pub attached_to: usize,
    /// None while it runs (taken out of the EState).
    plan: Option<PlanState>,
    /// The tuplestore: every row the plan returned so far.
    rows: Vec<Vec<Datum>>,
    /// The plan returned its last row (`eof_cte`).
    done: bool,
}

/// The query's CTEs (PostgreSQL's CTE subplan states in `es_subplanstates`).
#[derive(Clone, Default)]
pub struct CteStates {
    pub list: Vec<CteState>,
    /// Where the CTEs of the plan being initialized start in `list`: a CTE Scan's
    /// `cte` counts from there.
    base: usize,
    /// The main plan returned its end (ExecPostprocessPlan may still be running).
    pub main_done: bool,
}

/// ExecInit of a plan with CTEs: the CTEs' plans first, then the main plan, whose top
/// node they are attached to.
pub fn init_with_ctes(
    child: &crate::plan::Plan,
    ctes: &[CtePlan],
    ctx: &super::InitContext,
    es: &mut EState,
) -> Result<PlanState, String> {
    let first = es.ctes.list.len();
    for c in ctes {
        let ps = super::init_plan(&c.plan, ctx, es)?;
        es.ctes.list.push(CteState {
            name: c.name.clone(),
            plan_id: c.plan_id,
            modifying: c.modifying,
            attached_to: usize::MAX,
            plan: Some(ps),
            rows: vec![],
            done: false,
        });
    }
    let outer_base = std::mem::replace(&mut es.ctes.base, first);
    let root = super::init_plan(child, ctx, es);
    es.ctes.base = outer_base;
    let root = root?;
    for c in &mut es.ctes.list[first..] {
        c.attached_to = root.id;
    }
    Ok(root)
}

/// Asks CTE `k`'s plan for its next row and appends it to the tuplestore. True when
/// a row was added or the plan is done; false when it waits.
fn fetch_next(es: &mut EState, k: usize) -> ExecResult<bool> {
    let Some(mut ps) = es.ctes.list[k].plan.take() else {
        return Err(ExecError::Internal(format!("CTE \"{}\" re-entered", es.ctes.list[k].name)));
    };
    let status = exec_proc_node(&mut ps, es);
    let row = match &status {
        Ok(ExecStatus::Row) => Some(ps.node.slot().to_vec()),
        _ => None,
    };
    es.ctes.list[k].plan = Some(ps);
    match status? {
        ExecStatus::Row => {
            es.ctes.list[k].rows.push(row.unwrap_or_default());
            Ok(true)
        }
        ExecStatus::Done => {
            es.ctes.list[k].done = true;
            Ok(true)
        }
        ExecStatus::Wait => {
            super::node_subplan::blocked_as_libpq_would(es);
            Ok(false)
        }
    }
}

/// ExecPostprocessPlan: runs every data-modifying CTE's plan to its end. Done when
/// all are; Wait when one waits (call again).
pub fn exec_postprocess_plan(es: &mut EState) -> ExecResult<ExecStatus> {
    es.ctes.main_done = true;
    for k in 0..es.ctes.list.len() {
        while es.ctes.list[k].modifying && !es.ctes.list[k].done {
            if !fetch_next(es, k)? {
                return Ok(ExecStatus::Wait);
            }
            // The rows nobody reads are not kept.
            es.ctes.list[k].rows.clear();
        }
    }
    Ok(ExecStatus::Done)
}

/// ExecEndPlan's second half: the CTEs' plans end after the main plan.
pub fn end_ctes(es: &mut EState) {
    for k in 0..es.ctes.list.len() {
        if let Some(mut ps) = es.ctes.list[k].plan.take() {
            exec_end_node(&mut ps, es);
            es.ctes.list[k].plan = Some(ps);
        }
    }
}

/// The CTEs attached to node `id`, as EXPLAIN shows them (ExplainSubPlans with
/// relationship "InitPlan" and the subplan's name `CTE name`).
pub fn explain_ctes(es: &EState, id: usize) -> Vec<ExplainNode> {
    es.ctes
        .list
        .iter()
        .filter(|c| c.attached_to == id)
        .filter_map(|c| {
            let mut e = explain_tree(c.plan.as_ref()?, es, Some("InitPlan"));
            e.details.insert(0, ("Subplan Name".into(), format!("CTE {}", c.name)));
            // The query's range table holds the CTE and what its statement reads:
            // more than one entry, so EXPLAIN qualifies every column (explain.c's
            // `useprefix`), the ModifyTable's own text too.
            e.details.push(("Qualify".into(), String::new()));
            qualify_modify_outputs(&mut e, None);
            Some(e)
        })
        .collect()
}

/// Which CTE a CTE Scan reads (its index among the plan's CTEs), and where each of
/// its columns is in the CTE's row.
pub struct Reader {
    pub cte: usize,
    pub positions: Vec<usize>,
}

/// The identifiers of `text` that are bare column names (not qualified, not a
/// function's or a type's name, not a keyword, not in a literal) qualified with
/// `alias`, as ruleutils.c prints a Var when the range table has several entries.
fn qualify_bare(text: &str, alias: &str) -> String {
    const WORDS: [&str; 12] =
        ["NULL", "TRUE", "FALSE", "AND", "OR", "NOT", "IS", "CASE", "WHEN", "THEN", "ELSE", "END"];
    let alias = crate::sql_text::quote_identifier(alias);
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' || c == '"' {
            // A literal or a quoted name: as it is.
            let mut j = i + 1;
            while j < chars.len() && chars[j] != c {
                j += 1;
            }
            let end = (j + 1).min(chars.len());
            out.extend(&chars[i..end]);
            i = end;
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let mut j = i;
            while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_' || chars[j] == '$') {
                j += 1;
            }
            let word: String = chars[i..j].iter().collect();
            let before = out.trim_end();
            let after = chars[j..].iter().collect::<String>();
            let after = after.trim_start();
            let bare = !before.ends_with('.')
                && !before.ends_with("::")
                && !after.starts_with('(')
                && !after.starts_with('.')
                && !WORDS.contains(&word.to_uppercase().as_str());
            if bare {
                out.push_str(&alias);
                out.push('.');
            }
            out.push_str(&word);
            i = j;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// A ModifyTable's RETURNING (`Output`) and the rows its scans read for it, as the
/// node's own text (unqualified when it is the query's only relation), qualified with
/// the target's and the scans' names.
fn qualify_modify_outputs(e: &mut ExplainNode, modify: Option<&str>) {
    let name = e.detail("Alias").map(str::to_string).or_else(|| e.relation.clone());
    let is_modify = matches!(e.node_type.as_str(), "Insert" | "Update" | "Delete");
    let inside = if is_modify { name.clone() } else { modify.map(str::to_string) };
    for (k, v) in e.details.iter_mut() {
        let own = is_modify && k == "Output";
        let row = inside.is_some() && k == crate::instrument::ROW_MARK_OUTPUT;
        if let (true, Some(n)) = (own || row, name.as_ref()) {
            *v = qualify_bare(v, n);
        }
    }
    for c in &mut e.children {
        qualify_modify_outputs(c, inside.as_deref());
    }
}

/// A CTE Scan: one reader of a CTE's tuplestore.
#[derive(Clone)]
pub struct CteScanState {
    /// The CTE's index in `es.ctes.list`.
    cte: usize,
    positions: Vec<usize>,
    name: String,
    alias: Option<String>,
    columns: Vec<String>,
    /// The next row of the tuplestore this scan reads (its read pointer).
    pos: usize,
    slot: Vec<Datum>,
}

impl CteScanState {
    /// ExecInitCteScan: a reader of CTE `cte` of the plan being initialized.
    pub fn init(es: &EState, reader: Reader, name: String, alias: Option<String>, columns: Vec<String>) -> Self {
        let cte = es.ctes.base + reader.cte;
        CteScanState { cte, positions: reader.positions, name, alias, columns, pos: 0, slot: Vec::new() }
    }
}

impl ExecNode for CteScanState {
    /// CteScanNext: the tuplestore's next row, fetched from the CTE's plan first when
    /// this scan has read all it holds.
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        let Some(c) = es.ctes.list.get(self.cte) else {
            return Err(ExecError::Internal(format!("no CTE \"{}\"", self.name)));
        };
        if self.pos >= c.rows.len() {
            if c.done {
                return Ok(ExecStatus::Done);
            }
            if !fetch_next(es, self.cte)? {
                return Ok(ExecStatus::Wait);
            }
            if self.pos >= es.ctes.list[self.cte].rows.len() {
                return Ok(ExecStatus::Done);
            }
        }
        es.clock.charge(es.cost.result_row_ns);
        let row = &es.ctes.list[self.cte].rows[self.pos];
        self.slot.clear();
        self.slot.extend(self.positions.iter().map(|&i| row.get(i).cloned().unwrap_or(Datum::Null)));
        self.pos += 1;
        Ok(ExecStatus::Row)
    }
    /// ExecReScanCteScan: back to the tuplestore's first row.
    fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
        self.pos = 0;
        Ok(())
    }
    fn exec_end(&mut self, _es: &mut EState) {}
    fn slot(&self) -> &[Datum] {
        &self.slot
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "CTE Scan".into();
        e.relation = Some(self.name.clone());
        // ExplainTargetRel names a CTE without a schema, even under VERBOSE.
        e.details.push(("Schema".into(), String::new()));
        if let Some(a) = &self.alias {
            e.set_alias(a.clone());
        }
        for c in &self.columns {
            e.push_output(c.clone());
        }
    }
}
