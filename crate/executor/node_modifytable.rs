//! ModifyTable for INSERT (nodeModifyTable.c's `ExecModifyTable` / `ExecInsert`),
//! with postgres_fdw's foreign modify for a foreign target (postgres_fdw.c's
//! `postgresBeginForeignModify` / `postgresBeginForeignInsert`,
//! `postgresExecForeignInsert` / `postgresExecForeignBatchInsert`,
//! `execute_foreign_modify`, `prepare_foreign_modify`, `deallocate_query`).
//!
//! The protocol, per call:
//! - ExecInit: the child first, then, for a foreign target, GetConnection (its set-up
//!   and START TRANSACTION, run by the run loop before the plan, as for a scan). A
//!   partition's result relation is opened only when the first row is routed to it
//!   (ExecFindPartition → ExecInitPartitionInfo → `postgresBeginForeignInsert`): its
//!   connection is set up then, mid-run, and the node waits for it.
//! - Each row of the child is made a row of the target (its columns in the target's
//!   order, cast to their types, NULL where the INSERT names no column), routed to
//!   its partition if the target is partitioned (execPartition.c), and stored: a local
//!   table's row into `es.local_changes`, a foreign table's into its batch
//!   (`ri_Slots`); a full batch (`batch_size` rows, 1 by default) is sent at once.
//! - Sending a batch (`execute_foreign_modify`): first another scan's FETCH in flight
//!   on the connection is drained (`process_pending_request`); if the prepared INSERT
//!   was made for another number of rows it is dropped (`DEALLOCATE pgsql_fdw_prep_N`,
//!   waited for) and rebuilt (`rebuildInsertSql`); if none is prepared, the INSERT is
//!   prepared (`PQprepare` of `pgsql_fdw_prep_N`, N from GetPrepStmtNumber, waited
//!   for); then executed with the batch's values in text (`PQsendQueryPrepared`),
//!   waited for.
//! - After the child's last row, each result relation with rows left in its batch
//!   sends them (in the order the relations were opened), then the node is done: it
//!   returns no row but RETURNING's (a local row at once, a foreign one as the remote
//!   INSERT returned it; `batch_size` is then 1).
//! - ExecEnd (`ExecEndModifyTable`): each foreign result relation's prepared statement
//!   is dropped (`DEALLOCATE`, run by the run loop, waited for), then the child ends
//!   (its scans' CLOSEs follow). The remote transactions commit at the end of the
//!   statement, as for any query (`run.rs`).
//!
//! UPDATE and DELETE: of a foreign table, the child is postgres_fdw's direct modify
//! (`DirectModifyState`, below: one remote UPDATE/DELETE, its RETURNING rows handed
//! up), ModifyTable projects RETURNING; of a local table, the child returns each row
//! to change, whole, and ModifyTable records its new value (ExecUpdate) or its removal
//! (ExecDelete) in `es.local_changes`, by value (equal rows all pass or all fail the
//! same WHERE, so which copy changes is the same), and returns RETURNING's row.
//!
//! Invariants: at most one statement of this node is in flight, and only on a
//! connection whose `pending_areq` is none (drained first); a batch's rows leave the
//! batch only once the remote INSERT of them completed; the coordinator's own tables
//! change only through `es.local_changes`, applied by the caller when the statement
//! ends (the scans of this statement read the tables as they were: PostgreSQL's
//! snapshot gives the same).
//!
//! ON CONFLICT and unique keys (`super::on_conflict`): of a plain local target in
//! `conflict`; of a partitioned one in each local partition's `Target::Local`, made
//! when its result relation is opened, its arbiters the partition's copies of the
//! parent's; a DO UPDATE that would move the row to another partition is refused as
//! PostgreSQL refuses it.
//!
//! Where it departs from PostgreSQL: no triggers, CHECK constraints
//! or WITH CHECK OPTIONS; a local table's rows are kept aside until the statement ends
//! rather than written into the heap at once (nothing in the statement reads them).

use super::{exec_proc_node, ExecNode, ExecStatus, InitContext, PlanState};
use crate::coordinator_sql::catalog::{bound_holds, Bound};
use crate::coordinator_sql::statement::Strategy;
use crate::executor::estate::{EState, ExecError, ExecResult, RemoteCommand};
use crate::instrument::ExplainNode;
use crate::plan::modifytable::{CmdType, ForeignModify, ModifyTablePlan, PartitionModify, ResultRel};
use crate::plan::SqlType;
use crate::remote::{Proto, QueryRole, Ticket};
use crate::types::{Catalog, ColType, Datum, Table};

/// Rows ModifyTable inserted into the coordinator's own tables, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocalChanges {
    pub inserted: Vec<(String, Vec<Datum>)>,
    /// UPDATE: (table, old row, new row); DELETE: (table, old row, None).
    pub modified: Vec<(String, Vec<Datum>, Option<Vec<Datum>>)>,
}

impl LocalChanges {
    /// The statement's changes made to `catalog` (at its end, as a commit would).
    pub fn apply(&self, catalog: &mut Catalog) {
        for (name, row) in &self.inserted {
            if let Some(t) = catalog.tables.iter_mut().find(|t| &t.name == name) {
                std::rc::Rc::make_mut(t).push_row(row);
            }
        }
        // An UPDATE or DELETE names its rows by value: one row equal to each old row
        // (equal rows all pass or all fail the same WHERE, so which copy is the same).
        for t in catalog.tables.iter_mut() {
            // Old row → its new values (None: deleted), a copy per changed row: found in
            // O(log n) a row, so a large table's UPDATE stays linear-logarithmic.
            let mut pending: std::collections::BTreeMap<&[Datum], Vec<&Option<Vec<Datum>>>> =
                std::collections::BTreeMap::new();
            for (_, o, n) in self.modified.iter().filter(|(n, _, _)| *n == t.name) {
                pending.entry(o.as_slice()).or_default().push(n);
            }
            if pending.is_empty() {
                continue;
            }
            let old = std::rc::Rc::clone(t);
            let mut new = Table::new(&old.name, old.columns.clone());
            new.indexes = old.indexes.clone();
            for i in 0..old.nrows() {
                let row = old.row(i);
                match pending.get_mut(row).and_then(|v| v.pop()) {
                    Some(Some(updated)) => new.push_row(updated),
                    Some(None) => {}
                    None => new.push_row(row),
                }
            }
            *t = std::rc::Rc::new(new);
        }
        for t in catalog.tables.iter_mut() {
            let touched =
                self.inserted.iter().any(|(n, _)| *n == t.name) || self.modified.iter().any(|(n, _, _)| *n == t.name);
            if touched {
                let t: &mut Table = std::rc::Rc::make_mut(t);
                let cols: Vec<usize> = t.indexes.iter().map(|i| i.column).collect();
                for c in cols {
                    t.create_index(c);
                }
            }
        }
    }
}

/// Where a row goes, as opened at ExecInit (a partition's foreign state: on first use).
#[derive(Clone)]
enum Target {
    /// A local table; a partition's unique checks and ON CONFLICT with it.
    Local(String, Option<Box<super::on_conflict::ConflictState>>),
    /// Index into `ModifyTableState::foreign`.
    Foreign(usize),
    /// A foreign partition not opened yet.
    Unopened(ForeignModify),
    Partitioned {
        relation: String,
        strategy: Strategy,
        key: Vec<(usize, SqlType)>,
        partitions: Vec<(Bound, Target)>,
    },
    /// Direct modify: the child stores nothing here (it returns no row).
    Direct,
    /// UPDATE / DELETE of a local table: the rows changed, kept in `es.local_changes`.
    LocalModify {
        table: String,
        sets: Vec<(usize, crate::plan::Expr)>,
        /// UPDATE … FROM / DELETE … USING: the copies of each row value the table
        /// holds not changed yet (a row the join returns again is skipped).
        joined: Option<std::collections::BTreeMap<Vec<Datum>, usize>>,
    },
    /// UPDATE / DELETE of a foreign table by postgres_fdw's foreign modify.
    ForeignRow(Box<super::fdw_modify::ForeignRowState>),
    /// UPDATE / DELETE of a partitioned table: a result relation per member of the
    /// child; `busy`, the foreign modify whose row is under way.
    Partitions {
        parts: Vec<PartState>,
        busy: Option<usize>,
    },
}

/// A partition's result relation of a partitioned UPDATE or DELETE, opened.
#[derive(Clone)]
enum PartState {
    /// A direct modify: its member returns the remote RETURNING's columns `returned`.
    Direct { returned: Vec<usize> },
    /// A local partition: its member returns the old rows, whole.
    Local { table: String, sets: Vec<(usize, crate::plan::Expr)> },
    /// A foreign modify: its member returns the rows with their ctid; the remote
    /// statement returns the columns `returned`.
    ForeignRow { st: Box<super::fdw_modify::ForeignRowState>, returned: Vec<usize> },
}

/// Where a batch's statements stand (`execute_foreign_modify`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Idle,
    Deallocating(Ticket),
    Preparing(Ticket),
    Executing(Ticket, usize),
}

/// postgres_fdw's `PgFdwModifyState`.
#[derive(Clone)]
struct ForeignModifyState {
    plan: ForeignModify,
    conn: usize,
    /// The prepared statement's name (`p_name`), once prepared.
    p_name: Option<String>,
    /// Rows the prepared INSERT takes (`num_slots`).
    num_slots: usize,
    /// The batch being filled (`ri_Slots`).
    batch: Vec<Vec<Datum>>,
    step: Step,
    /// RETURNING: the rows the last remote INSERT returned, as rows of the table
    /// (NULL in the columns it does not return).
    returned: Vec<Vec<Datum>>,
}

impl ForeignModifyState {
    /// postgresBeginForeignModify / postgresBeginForeignInsert: GetConnection.
    fn begin(plan: &ForeignModify, es: &mut EState) -> Result<ForeignModifyState, String> {
        let conn = es.server_index(&plan.server).ok_or_else(|| format!("server \"{}\" does not exist", plan.server))?;
        // EXEC_FLAG_EXPLAIN_ONLY: postgres_fdw returns before GetConnection.
        if !es.explain_only {
            es.get_connection(conn);
        }
        Ok(ForeignModifyState {
            plan: plan.clone(),
            conn,
            p_name: None,
            num_slots: 0,
            batch: Vec::new(),
            step: Step::Idle,
            returned: Vec::new(),
        })
    }

    /// The answer to our statement: Ok(None) after blocking on it.
    fn result(&self, es: &mut EState, ticket: Ticket) -> ExecResult<Option<crate::remote::QueryResult>> {
        statement_result(es, self.conn, ticket)
    }

    fn drain_pending_request(&self, es: &mut EState, node: usize) -> ExecResult<bool> {
        drain_pending_request(es, self.conn, node)
    }

    /// execute_foreign_modify of the first `min(batch, batch_size)` rows of the batch:
    /// true once their INSERT completed, false after blocking (called again, it goes on).
    fn send_batch(&mut self, es: &mut EState, node: usize) -> ExecResult<bool> {
        loop {
            match self.step {
                Step::Idle => {
                    if !self.drain_pending_request(es, node)? {
                        return Ok(false);
                    }
                    let n = self.batch.len().min(self.plan.batch_size);
                    if self.num_slots != n {
                        if let Some(name) = self.p_name.take() {
                            let sql = format!("DEALLOCATE {name}");
                            let t = es.send(self.conn, Proto::Simple, &sql, Some(node), QueryRole::InTransaction);
                            self.step = Step::Deallocating(t);
                            continue;
                        }
                        self.num_slots = n;
                    }
                    let sql = self.plan.insert_sql(n);
                    if self.p_name.is_none() {
                        es.prep_stmt_number += 1;
                        let name = format!("pgsql_fdw_prep_{}", es.prep_stmt_number);
                        let t = es.send_named(
                            self.conn,
                            Proto::Prepare,
                            &name,
                            &sql,
                            vec![],
                            Some(node),
                            QueryRole::InTransaction,
                        );
                        self.p_name = Some(name);
                        self.step = Step::Preparing(t);
                        continue;
                    }
                    let params: Vec<Option<String>> = self.batch[..n]
                        .iter()
                        .flatten()
                        .map(|d| if d.is_null() { None } else { Some(d.to_string()) })
                        .collect();
                    let name = self.p_name.clone().unwrap_or_default();
                    let t = es.send_named(
                        self.conn,
                        Proto::ExecPrepared,
                        &name,
                        &sql,
                        params,
                        Some(node),
                        QueryRole::InTransaction,
                    );
                    self.step = Step::Executing(t, n);
                }
                Step::Deallocating(t) | Step::Preparing(t) => {
                    if self.result(es, t)?.is_none() {
                        return Ok(false);
                    }
                    self.step = Step::Idle;
                }
                Step::Executing(t, n) => {
                    let Some(result) = self.result(es, t)? else { return Ok(false) };
                    let width = self.plan.columns.len();
                    for i in 0..result.nrows {
                        let mut row = vec![Datum::Null; width];
                        for (&c, d) in self.plan.returning.iter().zip(result.row(i)) {
                            row[c] = d.clone();
                        }
                        self.returned.push(row);
                    }
                    self.batch.drain(..n);
                    self.step = Step::Idle;
                    return Ok(true);
                }
            }
        }
    }
}

/// The answer to a statement sent on `conn`: Ok(None) after blocking on it.
pub(super) fn statement_result(
    es: &mut EState,
    conn: usize,
    ticket: Ticket,
) -> ExecResult<Option<crate::remote::QueryResult>> {
    match es.conns[conn].take_result(ticket) {
        Some(r) => match r.error {
            Some(e) => Err(ExecError::Remote(e)),
            None => Ok(Some(r)),
        },
        None => {
            if let Some(e) = &es.conns[conn].first_error {
                return Err(ExecError::Remote(e.clone()));
            }
            es.block_on(conn);
            Ok(None)
        }
    }
}

/// process_pending_request: another request's FETCH in flight on `conn` is waited
/// for (its rows stay for their scan, `node_foreignscan`). False after blocking.
pub(super) fn drain_pending_request(es: &mut EState, conn: usize, node: usize) -> ExecResult<bool> {
    let c = &es.conns[conn];
    let Some(p) = c.pending_areq else { return Ok(true) };
    if c.is_ready(p.ticket) {
        let request = p.request;
        es.record(|| crate::trace::TraceKind::Drain { conn, request, node });
        es.conns[conn].pending_areq = None;
        return Ok(true);
    }
    if let Some(e) = &c.first_error {
        return Err(ExecError::Remote(e.clone()));
    }
    es.block_on(conn);
    Ok(false)
}

/// The most rows one statement may insert or change: what a scenario file may load in
/// all (`knobs::MAX_TOTAL_ROWS`); past it the statement fails, by name, rather than
/// hold rows without bound.
pub const MAX_MODIFIED_ROWS: usize = crate::knobs::MAX_TOTAL_ROWS;

#[derive(Clone)]
pub struct ModifyTableState {
    id: usize,
    operation: CmdType,
    relation: String,
    alias: Option<String>,
    child: Vec<PlanState>,
    columns: Vec<(String, SqlType)>,
    /// The child's output types (None: a type the casts take as it comes).
    child_types: Vec<Option<SqlType>>,
    source: Vec<Option<usize>>,
    target: Target,
    /// The foreign result relations, in the order they were opened.
    foreign: Vec<ForeignModifyState>,
    /// The foreign result relation whose batch is being sent.
    sending: Option<usize>,
    /// A row for a full batch, stored once the batch is sent (ExecInsert sends a full
    /// batch when the next row comes, not when it fills).
    waiting_row: Option<(usize, Vec<Datum>)>,
    /// Rows stored or changed so far (bounded by [`MAX_MODIFIED_ROWS`]).
    modified: usize,
    child_done: bool,
    /// What EXPLAIN shows of a foreign target (Remote SQL, Batch Size).
    explain_foreign: Option<ForeignModify>,
    /// RETURNING over the child's rows (a direct modify's), or over the inserted row,
    /// and how EXPLAIN shows it.
    returning: Vec<(crate::plan::Expr, String)>,
    returning_sql: Vec<String>,
    /// Inserted rows RETURNING still has to return (a local one at once, a foreign
    /// one as its remote INSERT returned it).
    to_return: std::collections::VecDeque<Vec<Datum>>,
    /// A partitioned UPDATE's or DELETE's result relations, as EXPLAIN names them.
    partitions: Vec<crate::plan::modifytable::PartitionTarget>,
    slot: Vec<Datum>,
    /// A local target's unique keys and ON CONFLICT (`super::on_conflict`).
    conflict: Option<super::on_conflict::ConflictState>,
    /// ON CONFLICT as planned (EXPLAIN's `Conflict …` lines), and the rows the
    /// child proposed (`Tuples Inserted` is them less the conflicting ones).
    on_conflict: Option<crate::plan::on_conflict::OnConflict>,
    proposed: usize,
}

impl ModifyTableState {
    /// ExecInitModifyTable: the child, then the result relation (a foreign one's
    /// GetConnection); partitions are opened when a row is first routed to them.
    pub fn init(id: usize, plan: &ModifyTablePlan, ctx: &InitContext, es: &mut EState) -> Result<Self, String> {
        let child = super::init_plan(&plan.child, ctx, es)?;
        let mut foreign = Vec::new();
        let target =
            open_target(&plan.target, (ctx, plan.on_conflict.as_ref(), &plan.columns), es, &mut foreign, true)?;
        let child_types = plan
            .child
            .output_columns()
            .iter()
            .map(|c| match c.ty {
                ColType::Int => Some(SqlType::Int8),
                ColType::Numeric => Some(SqlType::Numeric),
                ColType::Float => Some(SqlType::Float8),
                ColType::Bool => Some(SqlType::Bool),
                ColType::Text => None,
            })
            .collect();
        Ok(ModifyTableState {
            id,
            operation: plan.operation,
            relation: plan.relation.clone(),
            alias: plan.alias.clone(),
            child: vec![child],
            columns: plan.columns.clone(),
            child_types,
            source: plan.source.clone(),
            target,
            foreign,
            sending: None,
            waiting_row: None,
            modified: 0,
            child_done: false,
            returning: plan.returning.clone(),
            returning_sql: plan.returning_sql.clone(),
            to_return: Default::default(),
            explain_foreign: match &plan.target {
                ResultRel::Foreign(f) => Some(f.clone()),
                _ => None,
            },
            partitions: match &plan.target {
                ResultRel::Partitions(p) => p.clone(),
                _ => vec![],
            },
            slot: Vec::new(),
            conflict: conflict_state(plan, ctx),
            on_conflict: plan.on_conflict.clone(),
            proposed: 0,
        })
    }

    /// The child's row as a row of the target: its columns in order, cast to their
    /// types (`ExecInsert`'s projection of the subplan's targetlist).
    fn target_row(&self, row: &[Datum]) -> ExecResult<Vec<Datum>> {
        let mut out = Vec::with_capacity(self.columns.len());
        for ((_, ty), src) in self.columns.iter().zip(&self.source) {
            let d = match src {
                Some(i) => {
                    let v = row.get(*i).cloned().unwrap_or(Datum::Null);
                    let from = self.child_types.get(*i).copied().flatten();
                    crate::plan::eval::cast(v, from, *ty).map_err(|k| ExecError::Eval(k.into()))?
                }
                None => Datum::Null,
            };
            out.push(d);
        }
        Ok(out)
    }

    /// Stores a row (routing it first). A foreign relation's row goes into its batch
    /// (ExecInsert): with `batch_size` 1 it is sent at once (ExecForeignInsert); with
    /// more, a batch already full is sent first (ExecBatchInsert), then the row waits
    /// in the next one.
    fn store(&mut self, row: Vec<Datum>, es: &mut EState) -> ExecResult<()> {
        let kept = (!self.returning.is_empty()).then(|| row.clone());
        let mut target = std::mem::replace(&mut self.target, Target::Local(String::new(), None));
        let r = route(&mut target, row, es, &mut self.foreign);
        self.target = target;
        let r = r?;
        if let (Routed::Done, Some(row)) = (&r, kept) {
            self.to_return.push_back(row);
        }
        if let Routed::Updated { table, old, new } = r {
            // ON CONFLICT DO UPDATE in a partition: the existing row changed.
            if !self.returning.is_empty() {
                self.to_return.push_back(new.clone());
            }
            es.local_changes.modified.push((table, old, Some(new)));
            return Ok(());
        }
        if let Routed::Foreign(k, row) = r {
            let f = &mut self.foreign[k];
            if f.plan.batch_size == 1 {
                f.batch.push(row);
                self.sending = Some(k);
            } else if f.batch.len() >= f.plan.batch_size {
                self.waiting_row = Some((k, row));
                self.sending = Some(k);
            } else {
                f.batch.push(row);
            }
        }
        Ok(())
    }
}

/// The unique checks of a local INSERT target with unique keys or ON CONFLICT, over
/// its rows at the statement's start.
fn conflict_state(plan: &ModifyTablePlan, ctx: &InitContext) -> Option<super::on_conflict::ConflictState> {
    let table = match &plan.target {
        ResultRel::Local { table, .. } => table,
        ResultRel::LocalModify { table, .. } if plan.operation == CmdType::Update => table,
        _ => return None,
    };
    if plan.unique.is_empty() && plan.on_conflict.is_none() {
        return None;
    }
    let t = ctx.catalog.get(table)?;
    Some(super::on_conflict::ConflictState::new(table, &plan.columns, &plan.unique, plan.on_conflict.as_ref(), t))
}

impl ModifyTableState {
    /// A row of a partitioned UPDATE's or DELETE's child, from the member that
    /// returned it: a direct modify's returned row, a local partition's row to change
    /// (changed in `es.local_changes`), or a foreign modify's row to send. True when
    /// RETURNING's row is in the slot.
    fn partition_row(&mut self, es: &mut EState) -> ExecResult<bool> {
        let k = self.child[0].node.current_child().unwrap_or(0);
        let row = self.child[0].node.slot().to_vec();
        let width = self.columns.len();
        let Target::Partitions { parts, busy } = &mut self.target else { return Ok(false) };
        let Some(part) = parts.get_mut(k) else {
            return Err(ExecError::Internal(format!("a row from member {k}, which has no result relation")));
        };
        let full = match part {
            PartState::Direct { returned } => spread(&row, returned, width),
            PartState::Local { table, sets } => {
                // ExecUpdate / ExecDelete of the partition's row.
                es.clock.charge(es.cost.result_row_ns);
                let new = match self.operation {
                    CmdType::Update => Some(new_row(&self.columns, sets, &row, &row)?),
                    _ => None,
                };
                let shown = new.clone().unwrap_or_else(|| row.clone());
                es.local_changes.modified.push((table.clone(), row, new));
                shown
            }
            PartState::ForeignRow { st, .. } => {
                // ExecForeignUpdate / ExecForeignDelete: sent by the next call.
                es.clock.charge(es.cost.result_row_ns);
                st.take_row(&row)?;
                *busy = Some(k);
                return Ok(false);
            }
        };
        if self.returning.is_empty() {
            return Ok(false);
        }
        self.slot = self.returning.iter().map(|(e, _)| e.eval(&full)).collect::<Result<_, _>>()?;
        Ok(true)
    }
}

/// A row of some of the table's columns (`cols`, in order) as a row of all `width`
/// of them, NULL in the others (RETURNING reads only those it returned).
fn spread(row: &[Datum], cols: &[usize], width: usize) -> Vec<Datum> {
    let mut out = vec![Datum::Null; width];
    for (&c, d) in cols.iter().zip(row) {
        if let Some(slot) = out.get_mut(c) {
            *slot = d.clone();
        }
    }
    out
}

/// ExecUpdate's new row: the old one with each SET column's value (computed over the
/// old row), cast to the column's type.
fn new_row(
    columns: &[(String, SqlType)],
    sets: &[(usize, crate::plan::Expr)],
    old: &[Datum],
    input: &[Datum],
) -> ExecResult<Vec<Datum>> {
    let mut new = old.to_vec();
    for (c, e) in sets {
        let v = e.eval(input)?;
        let from = match v {
            Datum::Int(_) => Some(SqlType::Int8),
            Datum::Numeric(_) => Some(SqlType::Numeric),
            Datum::Float(_) => Some(SqlType::Float8),
            _ => None,
        };
        let ty = columns.get(*c).map(|x| x.1).ok_or_else(|| ExecError::Internal(format!("no column {c}")))?;
        new[*c] = crate::plan::eval::cast(v, from, ty).map_err(|k| ExecError::Eval(k.into()))?;
    }
    Ok(new)
}

enum Routed {
    Done,
    /// For the foreign result relation `k`'s batch.
    Foreign(usize, Vec<Datum>),
    /// Not stored: ON CONFLICT DO NOTHING, or DO UPDATE whose WHERE did not hold.
    Skipped,
    /// ON CONFLICT DO UPDATE of a partition's row (`old` as the statement found it).
    Updated {
        table: String,
        old: Vec<Datum>,
        new: Vec<Datum>,
    },
}

/// ExecFindPartition and the insert into the relation found.
fn route(
    target: &mut Target,
    row: Vec<Datum>,
    es: &mut EState,
    foreign: &mut Vec<ForeignModifyState>,
) -> ExecResult<Routed> {
    match target {
        Target::Local(table, None) => {
            es.local_changes.inserted.push((table.clone(), row));
            Ok(Routed::Done)
        }
        Target::Local(table, Some(c)) => match c.propose(row).map_err(ExecError::Query)? {
            super::on_conflict::Outcome::Insert(row) => {
                es.local_changes.inserted.push((table.clone(), row));
                Ok(Routed::Done)
            }
            super::on_conflict::Outcome::Skip => Ok(Routed::Skipped),
            super::on_conflict::Outcome::Update { old, new } => Ok(Routed::Updated { table: table.clone(), old, new }),
        },
        Target::Foreign(k) => Ok(Routed::Foreign(*k, row)),
        Target::Direct | Target::LocalModify { .. } | Target::ForeignRow(_) | Target::Partitions { .. } => {
            Err(ExecError::Internal("a row to insert reached an UPDATE or DELETE".into()))
        }
        Target::Unopened(plan) => {
            let state = ForeignModifyState::begin(plan, es).map_err(ExecError::Query)?;
            foreign.push(state);
            *target = Target::Foreign(foreign.len() - 1);
            route(target, row, es, foreign)
        }
        Target::Partitioned { relation, strategy, key, partitions } => {
            let key_vals: Vec<(SqlType, Datum)> = key.iter().map(|&(i, t)| (t, row[i].clone())).collect();
            let found = partitions
                .iter()
                .position(|(b, _)| *b != Bound::Default && bound_holds(*strategy, b, &key_vals))
                .or_else(|| partitions.iter().position(|(b, _)| *b == Bound::Default));
            let Some(i) = found else {
                let vals: Vec<String> = key_vals.iter().map(|(_, d)| d.to_string()).collect();
                return Err(ExecError::Query(format!(
                    "no partition of relation \"{relation}\" found for row (partition key of the failing row contains ({}))",
                    vals.join(", ")
                )));
            };
            let routed = route(&mut partitions[i].1, row, es, foreign)?;
            // ExecCrossPartitionUpdate: DO UPDATE may not move the row out of its
            // partition.
            if let Routed::Updated { new, .. } = &routed {
                let key_vals: Vec<(SqlType, Datum)> = key.iter().map(|&(i, t)| (t, new[i].clone())).collect();
                let stays = match &partitions[i].0 {
                    Bound::Default => {
                        !partitions.iter().any(|(b, _)| *b != Bound::Default && bound_holds(*strategy, b, &key_vals))
                    }
                    b => bound_holds(*strategy, b, &key_vals),
                };
                if !stays {
                    return Err(ExecError::Query(
                        "invalid ON UPDATE specification (the result tuple would appear in a different partition than \
                         the original tuple)"
                            .into(),
                    ));
                }
            }
            Ok(routed)
        }
    }
}

/// The unique checks of a routed row's partition: its ON CONFLICT counts
/// (conflicting, removed by the filter), summed over the partitions opened.
fn partition_conflicts(t: &Target) -> (usize, usize) {
    match t {
        Target::Local(_, Some(c)) => (c.conflicting, c.filtered),
        Target::Partitioned { partitions, .. } => {
            partitions.iter().map(|(_, p)| partition_conflicts(p)).fold((0, 0), |(a, b), (c, d)| (a + c, b + d))
        }
        _ => (0, 0),
    }
}

/// The result relation as ExecInit opens it: a foreign one now (`at_init`), a
/// partition's foreign table when a row first reaches it.
fn open_target(
    r: &ResultRel,
    (ctx, on_conflict, columns): (&InitContext, Option<&crate::plan::on_conflict::OnConflict>, &[(String, SqlType)]),
    es: &mut EState,
    foreign: &mut Vec<ForeignModifyState>,
    at_init: bool,
) -> Result<Target, String> {
    Ok(match r {
        ResultRel::Local { table, unique } => {
            let Some(t) = ctx.catalog.get(table) else {
                return Err(format!("relation \"{table}\" does not exist"));
            };
            // A partition (not opened at init): its own unique indexes and the
            // ON CONFLICT mapped to them (ExecInitPartitionInfo); the plain target's
            // are ModifyTable's `conflict`.
            let checked = !at_init && (!unique.is_empty() || on_conflict.is_some());
            let conflict = checked.then(|| {
                let oc = on_conflict.map(|o| o.for_partition(unique));
                // A partition's columns are its parent's (the planner checked).
                Box::new(super::on_conflict::ConflictState::new(table, columns, unique, oc.as_ref(), t))
            });
            Target::Local(table.clone(), conflict)
        }
        ResultRel::Foreign(f) if at_init => {
            foreign.push(ForeignModifyState::begin(f, es)?);
            Target::Foreign(foreign.len() - 1)
        }
        ResultRel::Foreign(f) => Target::Unopened(f.clone()),
        ResultRel::Direct => Target::Direct,
        ResultRel::ForeignRow(f) => Target::ForeignRow(Box::new(super::fdw_modify::ForeignRowState::begin(f, es)?)),
        ResultRel::LocalModify { table, sets, joined } => {
            // The table's rows at the statement's start, counted by value: a row the
            // join returns once more than the table holds it was changed already.
            let joined = match (joined, ctx.catalog.get(table)) {
                (false, _) => None,
                (true, None) => return Err(format!("relation \"{table}\" does not exist")),
                (true, Some(t)) => {
                    let mut copies: std::collections::BTreeMap<Vec<Datum>, usize> = Default::default();
                    for i in 0..t.nrows() {
                        *copies.entry(t.row(i).to_vec()).or_default() += 1;
                    }
                    Some(copies)
                }
            };
            Target::LocalModify { table: table.clone(), sets: sets.clone(), joined }
        }
        ResultRel::Partitions(targets) => {
            // ExecInitModifyTable: BeginForeignModify of each foreign modify, in order.
            let mut parts = Vec::with_capacity(targets.len());
            for t in targets {
                parts.push(match &t.how {
                    PartitionModify::Direct { returned } => PartState::Direct { returned: returned.clone() },
                    PartitionModify::Local { sets } => {
                        PartState::Local { table: t.relation.clone(), sets: sets.clone() }
                    }
                    PartitionModify::ForeignRow { modify, returned } => PartState::ForeignRow {
                        st: Box::new(super::fdw_modify::ForeignRowState::begin(modify, es)?),
                        returned: returned.clone(),
                    },
                });
            }
            Target::Partitions { parts, busy: None }
        }
        ResultRel::Partitioned(p) => {
            let mut partitions = Vec::new();
            for (b, part) in &p.partitions {
                partitions.push((b.clone(), open_target(part, (ctx, on_conflict, columns), es, foreign, false)?));
            }
            Target::Partitioned { relation: p.relation.clone(), strategy: p.strategy, key: p.key.clone(), partitions }
        }
    })
}

impl ExecNode for ModifyTableState {
    /// ExecModifyTable: every row of the child stored, the batches left sent; no row.
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        loop {
            // RETURNING's rows of the rows inserted so far.
            if let Some(row) = self.to_return.pop_front() {
                self.slot = self.returning.iter().map(|(e, _)| e.eval(&row)).collect::<Result<_, _>>()?;
                return Ok(ExecStatus::Row);
            }
            // A partition opened by the last row: its connection is set up first (the
            // run loop runs GetConnection's statements, then calls again).
            if !es.remote_commands.is_empty() {
                return Ok(ExecStatus::Wait);
            }
            // A foreign modify's row under way: its UPDATE or DELETE first.
            if let Target::ForeignRow(st) = &mut self.target {
                if st.busy() {
                    match st.send_row(es, self.id)? {
                        None => return Ok(ExecStatus::Wait),
                        Some(returned) => {
                            if !self.returning.is_empty() {
                                self.to_return.extend(returned);
                            }
                            continue;
                        }
                    }
                }
            }
            if let Target::Partitions { parts, busy: Some(k) } = &mut self.target {
                let k = *k;
                let PartState::ForeignRow { st, returned } = &mut parts[k] else {
                    return Err(ExecError::Internal("a row under way for a partition without a foreign modify".into()));
                };
                match st.send_row(es, self.id)? {
                    None => return Ok(ExecStatus::Wait),
                    Some(rows) => {
                        if !self.returning.is_empty() {
                            let width = self.columns.len();
                            self.to_return.extend(rows.iter().map(|r| spread(r, returned, width)));
                        }
                        self.target = match std::mem::replace(&mut self.target, Target::Direct) {
                            Target::Partitions { parts, .. } => Target::Partitions { parts, busy: None },
                            t => t,
                        };
                        continue;
                    }
                }
            }
            if let Some(k) = self.sending {
                if !self.foreign[k].send_batch(es, self.id)? {
                    return Ok(ExecStatus::Wait);
                }
                self.sending = None;
                let returned = std::mem::take(&mut self.foreign[k].returned);
                self.to_return.extend(returned);
                if let Some((k, row)) = self.waiting_row.take() {
                    self.foreign[k].batch.push(row);
                }
            }
            if self.child_done {
                // The batches not full yet, in the order their relations were opened.
                match self.foreign.iter().position(|f| !f.batch.is_empty()) {
                    Some(k) => {
                        self.sending = Some(k);
                        continue;
                    }
                    None => return Ok(ExecStatus::Done),
                }
            }
            match exec_proc_node(&mut self.child[0], es)? {
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
                ExecStatus::Done => self.child_done = true,
                ExecStatus::Row if self.modified >= MAX_MODIFIED_ROWS => {
                    return Err(ExecError::Query(format!(
                        "{} of more than {MAX_MODIFIED_ROWS} rows in one statement: more than the sandbox holds",
                        self.operation.word().to_uppercase()
                    )));
                }
                ExecStatus::Row if matches!(self.target, Target::LocalModify { .. }) => {
                    self.modified += 1;
                    // ExecUpdate / ExecDelete: the new row (cast to the columns' types)
                    // or none; RETURNING over the new row, or the deleted one.
                    let input = self.child[0].node.slot();
                    let Target::LocalModify { table, sets, joined } = &mut self.target else { unreachable!("matched") };
                    // The target's row: the child's first columns (a join's row has
                    // the SET values after them).
                    let old = input.get(..self.columns.len()).unwrap_or(input).to_vec();
                    if let Some(copies) = joined {
                        match copies.get_mut(&old) {
                            Some(n) if *n > 0 => *n -= 1,
                            // Changed already by this command: ExecUpdate / ExecDelete
                            // skip it (TM_SelfModified), no RETURNING row.
                            _ => {
                                self.modified -= 1;
                                continue;
                            }
                        }
                    }
                    let new = match self.operation {
                        CmdType::Update => Some(new_row(&self.columns, sets, &old, input)?),
                        _ => None,
                    };
                    es.clock.charge(es.cost.result_row_ns);
                    if let (Some(c), Some(new)) = (&mut self.conflict, &new) {
                        c.replace(&old, new).map_err(ExecError::Query)?;
                    }
                    if !self.returning.is_empty() {
                        let row = new.as_ref().unwrap_or(&old);
                        self.slot = self.returning.iter().map(|(e, _)| e.eval(row)).collect::<Result<_, _>>()?;
                    }
                    es.local_changes.modified.push((table.clone(), old, new));
                    if !self.returning.is_empty() {
                        return Ok(ExecStatus::Row);
                    }
                }
                ExecStatus::Row if matches!(self.target, Target::ForeignRow(_)) => {
                    // ExecUpdate / ExecDelete → ExecForeignUpdate / ExecForeignDelete.
                    self.modified += 1;
                    es.clock.charge(es.cost.result_row_ns);
                    let row = self.child[0].node.slot();
                    if let Target::ForeignRow(st) = &mut self.target {
                        st.take_row(row)?;
                    }
                }
                ExecStatus::Row if matches!(self.target, Target::Partitions { .. }) => {
                    self.modified += 1;
                    if self.partition_row(es)? {
                        return Ok(ExecStatus::Row);
                    }
                }
                ExecStatus::Row if matches!(self.target, Target::Direct) => {
                    // A direct modify's returned row: RETURNING's projection of it.
                    if self.returning.is_empty() {
                        continue;
                    }
                    let input = self.child[0].node.slot();
                    self.slot = self.returning.iter().map(|(e, _)| e.eval(input)).collect::<Result<_, _>>()?;
                    return Ok(ExecStatus::Row);
                }
                ExecStatus::Row => {
                    self.modified += 1;
                    self.proposed += 1;
                    let row = self.target_row(self.child[0].node.slot())?;
                    es.clock.charge(es.cost.result_row_ns);
                    let Some(c) = &mut self.conflict else {
                        self.store(row, es)?;
                        continue;
                    };
                    match c.propose(row).map_err(ExecError::Query)? {
                        super::on_conflict::Outcome::Insert(row) => self.store(row, es)?,
                        super::on_conflict::Outcome::Skip => {}
                        super::on_conflict::Outcome::Update { old, new } => {
                            if !self.returning.is_empty() {
                                self.to_return.push_back(new.clone());
                            }
                            es.local_changes.modified.push((self.relation.clone(), old, Some(new)));
                        }
                    }
                }
            }
        }
    }

    fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
        Err(ExecError::Internal("ModifyTable is never rescanned".into()))
    }

    /// ExecEndModifyTable: EndForeignModify / EndForeignInsert (`DEALLOCATE`), then
    /// the child.
    fn exec_end(&mut self, es: &mut EState) {
        for f in &mut self.foreign {
            if let Some(name) = f.p_name.take() {
                let statement = Some((Proto::Simple, format!("DEALLOCATE {name}"), QueryRole::InTransaction));
                es.remote_commands.push_back(RemoteCommand { conn: f.conn, statement, owner: Some(self.id) });
            }
        }
        if let Target::ForeignRow(st) = &mut self.target {
            if let Some(name) = st.p_name.take() {
                let statement = Some((Proto::Simple, format!("DEALLOCATE {name}"), QueryRole::InTransaction));
                es.remote_commands.push_back(RemoteCommand { conn: st.conn, statement, owner: Some(self.id) });
            }
        }
        // A partitioned target's foreign modifies, in the result relations' order.
        if let Target::Partitions { parts, .. } = &mut self.target {
            for p in parts.iter_mut() {
                let PartState::ForeignRow { st, .. } = p else { continue };
                if let Some(name) = st.p_name.take() {
                    let statement = Some((Proto::Simple, format!("DEALLOCATE {name}"), QueryRole::InTransaction));
                    es.remote_commands.push_back(RemoteCommand { conn: st.conn, statement, owner: Some(self.id) });
                }
            }
        }
        super::exec_end_node(&mut self.child[0], es);
    }

    fn slot(&self) -> &[Datum] {
        &self.slot
    }

    fn children(&self) -> &[PlanState] {
        &self.child
    }

    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = self.operation.word().into();
        e.relation = Some(self.relation.clone());
        if let Some(a) = &self.alias {
            e.set_alias(a.clone());
        }
        for r in &self.returning_sql {
            e.push_output(r.clone());
        }
        if let Some(f) = &self.explain_foreign {
            e.details.push(("Remote SQL".into(), f.insert_sql(1)));
            e.details.push(("Batch Size".into(), f.batch_size.to_string()));
        }
        if let Target::ForeignRow(st) = &self.target {
            e.details.push(("Remote SQL".into(), st.plan.sql.clone()));
        }
        if let Some(oc) = &self.on_conflict {
            // show_modifytable_info: the resolution, the arbiters, the filter; the
            // counts are ANALYZE's (`instrument::explain` prints them only then).
            e.details.push(("Conflict Resolution".into(), oc.resolution().into()));
            if !oc.arbiters.is_empty() {
                let names: Vec<String> = oc.arbiters.iter().map(|a| a.name.clone()).collect();
                e.details.push(("Conflict Arbiter Indexes".into(), names.join(", ")));
            }
            if let Some(f) = &oc.filter_sql {
                e.details.push(("Conflict Filter".into(), f.clone()));
            }
            let (conflicting, filtered) = self
                .conflict
                .as_ref()
                .map_or_else(|| partition_conflicts(&self.target), |c| (c.conflicting, c.filtered));
            if filtered > 0 {
                e.details.push(("Rows Removed by Conflict Filter".into(), filtered.to_string()));
            }
            e.details.push(("Tuples Inserted".into(), (self.proposed - conflicting).to_string()));
            e.details.push(("Conflicting Tuples".into(), conflicting.to_string()));
        }
        // show_modifytable_info: each result relation of a partitioned target, a
        // foreign modify's Remote SQL under it.
        for t in &self.partitions {
            let foreign = if matches!(t.how, PartitionModify::Local { .. }) { "" } else { "Foreign " };
            let label = format!("{foreign}{}\t{}\t{}", self.operation.word(), t.relation, t.alias);
            e.details.push((crate::instrument::TARGET_TABLE.into(), label));
            if let PartitionModify::ForeignRow { modify, .. } = &t.how {
                e.details.push((crate::instrument::TARGET_REMOTE_SQL.into(), modify.sql.clone()));
            }
        }
    }

    /// A local partition's scan prints the row ModifyTable reads of it (the new
    /// values, `tableoid`, `ctid`, …), as PostgreSQL's Output shows its targetlist.
    fn explain_children(&self, children: &mut [ExplainNode]) {
        let Some(child) = children.first_mut() else { return };
        if let Target::LocalModify { sets, joined: None, .. } = &self.target {
            // A plain table's scan: the new values in the columns' order, then `ctid`.
            let names: Vec<String> = self.columns.iter().map(|(n, _)| crate::sql_text::quote_identifier(n)).collect();
            let mut sets: Vec<&(usize, crate::plan::Expr)> = sets.iter().collect();
            crate::types::sort_short_by_key(&mut sets, |(c, _)| *c);
            let mut shown: Vec<String> = sets.iter().map(|(_, e)| e.to_sql(&names)).collect();
            shown.push("ctid".into());
            let mut n = &mut *child;
            while !n.is_scan() && !n.children.is_empty() {
                n = &mut n.children[0];
            }
            if n.is_scan() {
                n.details.extend(shown.into_iter().map(|o| (crate::instrument::ROW_MARK_OUTPUT.to_string(), o)));
            }
            return;
        }
        let single = self.partitions.len() == 1;
        for (k, t) in self.partitions.iter().enumerate().filter(|(_, t)| !t.shown.is_empty()) {
            let member = if single { Some(&mut *child) } else { child.children.get_mut(k) };
            let Some(mut n) = member else { continue };
            while !n.is_scan() && !n.children.is_empty() {
                n = &mut n.children[0];
            }
            for o in &t.shown {
                n.details.push((crate::instrument::ROW_MARK_OUTPUT.into(), o.clone()));
            }
        }
    }
}

/// `INSERT … VALUES`'s rows: one is a Result without an input (nodeResult.c when
/// there is no outer plan), more a Values Scan on `"*VALUES*"` (nodeValuesscan.c).
#[derive(Clone)]
pub struct ConstResultState {
    rows: Vec<Vec<crate::plan::Expr>>,
    next: usize,
    slot: Vec<Datum>,
}

impl ConstResultState {
    pub fn init(rows: &[Vec<crate::plan::Expr>]) -> Self {
        ConstResultState { rows: rows.to_vec(), next: 0, slot: Vec::new() }
    }
}

impl ExecNode for ConstResultState {
    fn exec_next(&mut self, _es: &mut EState) -> ExecResult<ExecStatus> {
        let Some(row) = self.rows.get(self.next) else { return Ok(ExecStatus::Done) };
        self.next += 1;
        self.slot = row.iter().map(|e| e.eval(&[])).collect::<Result<_, _>>()?;
        Ok(ExecStatus::Row)
    }

    fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
        self.next = 0;
        Ok(())
    }

    fn exec_end(&mut self, _es: &mut EState) {}

    fn slot(&self) -> &[Datum] {
        &self.slot
    }

    fn explain(&self, e: &mut ExplainNode) {
        match self.rows.as_slice() {
            [row] => {
                e.node_type = "Result".into();
                for x in row {
                    e.push_output(x.to_sql(&[]));
                }
            }
            rows => {
                e.node_type = "Values Scan".into();
                e.relation = Some("*VALUES*".into());
                e.details.push(("Schema".into(), String::new()));
                // The INSERT's range table holds its target and "*VALUES*": PostgreSQL
                // qualifies the columns (`"*VALUES*".column1`).
                e.details.push(("Qualify".into(), String::new()));
                for i in 0..rows.first().map_or(0, |r| r.len()) {
                    e.push_output(format!("column{}", i + 1));
                }
            }
        }
    }
}

/// postgres_fdw's direct modify (`postgresBeginDirectModify`,
/// `postgresIterateDirectModify`, `execute_dml_stmt`): GetConnection at ExecInit; at
/// the first call the UPDATE or DELETE goes out by the extended protocol
/// (PQsendQueryParams, after draining another scan's FETCH in flight on the
/// connection) and is waited for; its command tag's count is the node's rows for
/// EXPLAIN ANALYZE (`instr->tuplecount`), though it returns none (no RETURNING).
#[derive(Clone)]
pub struct DirectModifyState {
    id: usize,
    plan: crate::plan::modifytable::DirectModifyPlan,
    conn: usize,
    pending: Option<Ticket>,
    done: bool,
    /// RETURNING's rows from the remote statement, and the next to return.
    result: crate::remote::QueryResult,
    next: usize,
    slot: Vec<Datum>,
}

impl DirectModifyState {
    pub fn init(id: usize, plan: &crate::plan::modifytable::DirectModifyPlan, es: &mut EState) -> Result<Self, String> {
        let conn = es
            .server_index(&plan.scan.server)
            .ok_or_else(|| format!("server \"{}\" does not exist", plan.scan.server))?;
        // EXEC_FLAG_EXPLAIN_ONLY: postgres_fdw returns before GetConnection.
        if !es.explain_only {
            es.get_connection(conn);
        }
        Ok(DirectModifyState {
            id,
            plan: plan.clone(),
            conn,
            pending: None,
            done: false,
            result: Default::default(),
            next: 0,
            slot: Vec::new(),
        })
    }
}

impl ExecNode for DirectModifyState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if self.done {
            // RETURNING: the remote statement's rows, one a call.
            if self.next < self.result.nrows {
                self.slot = self.result.row(self.next).to_vec();
                self.next += 1;
                return Ok(ExecStatus::Row);
            }
            return Ok(ExecStatus::Done);
        }
        let helper = ForeignModifyState {
            plan: ForeignModify {
                relation: String::new(),
                server: String::new(),
                remote_table: String::new(),
                columns: vec![],
                batch_size: 1,
                returning: vec![],
                do_nothing: false,
            },
            conn: self.conn,
            p_name: None,
            num_slots: 0,
            batch: vec![],
            step: Step::Idle,
            returned: vec![],
        };
        let ticket = match self.pending {
            Some(t) => t,
            None => {
                if !helper.drain_pending_request(es, self.id)? {
                    return Ok(ExecStatus::Wait);
                }
                let t = es.send_params(
                    self.conn,
                    Proto::Extended,
                    &self.plan.sql,
                    vec![],
                    Some(self.id),
                    QueryRole::InTransaction,
                );
                self.pending = Some(t);
                t
            }
        };
        let Some(result) = helper.result(es, ticket)? else { return Ok(ExecStatus::Wait) };
        self.pending = None;
        self.done = true;
        if !self.plan.returning.is_empty() {
            // With RETURNING the rows are returned (and counted as they go).
            self.result = result;
            return self.exec_next(es);
        }
        let n: u64 = result.tags.last().and_then(|t| t.rsplit(' ').next()).and_then(|n| n.parse().ok()).unwrap_or(0);
        es.instr[self.id].ntuples += n;
        Ok(ExecStatus::Done)
    }

    fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
        Err(ExecError::Internal("a direct modify is never rescanned".into()))
    }

    fn exec_end(&mut self, _es: &mut EState) {}

    fn slot(&self) -> &[Datum] {
        &self.slot
    }

    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = format!("Foreign {}", self.plan.operation.word());
        e.relation = Some(self.plan.scan.relation.clone());
        super::explain_scan_name(e, self.plan.scan.alias.as_ref());
        e.details.push(("Server".into(), self.plan.scan.server.clone()));
        e.details.push(("Remote SQL".into(), self.plan.sql.clone()));
    }
}
