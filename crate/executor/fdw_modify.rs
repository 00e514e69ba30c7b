//! postgres_fdw's foreign modify of UPDATE and DELETE, run (postgres_fdw.c's
//! `postgresBeginForeignModify`, `postgresExecForeignUpdate` /
//! `postgresExecForeignDelete`, `execute_foreign_modify`, `prepare_foreign_modify`,
//! `deallocate_query`), for ModifyTable (`node_modifytable`).
//!
//! The protocol, per row the child (the scan `SELECT …, ctid … FOR UPDATE`) returns:
//! - another request's FETCH in flight on the connection is drained first
//!   (`process_pending_request`);
//! - on the first row, the statement is prepared (`PQprepare` of
//!   `pgsql_fdw_prep_N`, N from GetPrepStmtNumber; waited for; PostgreSQL logs no
//!   statement for it);
//! - it is executed with the row's ctid as `$1` and an UPDATE's new values as `$2`, …
//!   in text (`PQsendQueryPrepared`), waited for; RETURNING's row, if any, is what it
//!   returns.
//!
//! GetConnection at ExecInit; DEALLOCATE at ExecEnd, before the scan's CLOSE
//! (`node_modifytable`'s `exec_end`).
//!
//! Invariants: one statement of this state in flight at a time, sent only when the
//! connection has no pending FETCH; a row's statement is sent once.

use super::estate::{EState, ExecError, ExecResult};
use super::node_modifytable::{drain_pending_request, statement_result};
use crate::plan::modifytable::ForeignRowModify;
use crate::plan::SqlType;
use crate::remote::{Proto, QueryRole, Ticket};
use crate::types::Datum;

/// Where the current row's statements stand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Idle,
    Preparing(Ticket),
    Executing(Ticket),
}

/// postgres_fdw's `PgFdwModifyState` of an UPDATE or DELETE.
#[derive(Clone)]
pub struct ForeignRowState {
    pub plan: ForeignRowModify,
    pub conn: usize,
    /// The prepared statement's name (`p_name`), once prepared.
    pub p_name: Option<String>,
    step: Step,
    /// The row being changed: its parameters (ctid, then the new values).
    params: Option<Vec<Option<String>>>,
}

impl ForeignRowState {
    /// postgresBeginForeignModify: GetConnection.
    pub fn begin(plan: &ForeignRowModify, es: &mut EState) -> Result<ForeignRowState, String> {
        let conn = es.server_index(&plan.server).ok_or_else(|| format!("server \"{}\" does not exist", plan.server))?;
        // EXEC_FLAG_EXPLAIN_ONLY: postgres_fdw returns before GetConnection.
        if !es.explain_only {
            es.get_connection(conn);
        }
        Ok(ForeignRowState { plan: plan.clone(), conn, p_name: None, step: Step::Idle, params: None })
    }

    /// Is a row's change under way (sent, or waiting to be)?
    pub fn busy(&self) -> bool {
        self.params.is_some()
    }

    /// Takes the child's row `row` as the next to change: its ctid and, for an
    /// UPDATE, each SET column's new value (cast to the column's type), as text.
    pub fn take_row(&mut self, row: &[Datum]) -> ExecResult<()> {
        let ctid = row.get(self.plan.ctid_col).cloned().unwrap_or(Datum::Null);
        let mut params = vec![Some(ctid.to_string())];
        for (e, ty) in &self.plan.sets {
            let v = e.eval(row)?;
            let from = match v {
                Datum::Int(_) => Some(SqlType::Int8),
                Datum::Numeric(_) => Some(SqlType::Numeric),
                Datum::Float(_) => Some(SqlType::Float8),
                _ => None,
            };
            let v = crate::plan::eval::cast(v, from, *ty).map_err(|k| ExecError::Eval(k.into()))?;
            params.push(if v.is_null() { None } else { Some(v.to_string()) });
        }
        self.params = Some(params);
        Ok(())
    }

    /// execute_foreign_modify of the row taken: Some(returned rows) once its statement
    /// completed, None after blocking (called again, it goes on).
    pub fn send_row(&mut self, es: &mut EState, node: usize) -> ExecResult<Option<Vec<Vec<Datum>>>> {
        loop {
            match self.step {
                Step::Idle => {
                    let Some(params) = self.params.clone() else {
                        return Err(ExecError::Internal("a foreign modify sent without a row".into()));
                    };
                    if !drain_pending_request(es, self.conn, node)? {
                        return Ok(None);
                    }
                    let sql = self.plan.sql.clone();
                    match &self.p_name {
                        None => {
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
                        }
                        Some(name) => {
                            let name = name.clone();
                            let t = es.send_named(
                                self.conn,
                                Proto::ExecPrepared,
                                &name,
                                &sql,
                                params,
                                Some(node),
                                QueryRole::InTransaction,
                            );
                            self.step = Step::Executing(t);
                        }
                    }
                }
                Step::Preparing(t) => {
                    if statement_result(es, self.conn, t)?.is_none() {
                        return Ok(None);
                    }
                    self.step = Step::Idle;
                }
                Step::Executing(t) => {
                    let Some(result) = statement_result(es, self.conn, t)? else { return Ok(None) };
                    self.step = Step::Idle;
                    self.params = None;
                    let rows = (0..result.nrows).map(|i| result.row(i).to_vec()).collect();
                    return Ok(Some(rows));
                }
            }
        }
    }
}
