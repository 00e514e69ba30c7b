//! ForeignScan over a postgres_fdw server: postgres_fdw.c's scan functions in small,
//! with PostgreSQL 15's protocol.
//!
//! Per scan:
//! - ExecInit (`postgresBeginForeignScan`): GetConnection — a new connection is set up
//!   and its transaction begun before the plan runs (`EState::get_connection`) — and
//!   GetCursorNumber: cursors c1, c2, … are numbered across all connections;
//! - `create_cursor`: `DECLARE cN CURSOR FOR <remote sql>` by the extended protocol,
//!   waited for, after draining another scan's FETCH in flight on the connection
//!   (`drain_pending_request`);
//! - synchronously (`postgresIterateForeignScan` → `fetch_more_data`): `FETCH n FROM cN`,
//!   waited for, each time the batch is used up, until a batch comes back short;
//! - asynchronously, as the requestee of an Append (`postgresForeignAsyncRequest`,
//!   `…ConfigureWait`, `…Notify`, all through `produce_tuple_asynchronously`): the FETCH
//!   is sent without waiting (`fetch_more_data_begin`) only when the batch is used up,
//!   and the request waits for the socket. One request per connection has its FETCH in
//!   flight, the connection's `pending_areq`; the others stay Waiting without an event;
//! - ExecEnd (`postgresEndForeignScan` → `close_cursor`): `CLOSE cN`, which the run loop
//!   sends and waits for after the plan, scan after scan.
//!
//! Invariants: at most one FETCH per connection is in flight, the connection's
//! `pending_areq` (unless `pipeline`); a scan sends nothing on a connection whose
//! `pending_areq` is another scan's before it has drained it; a request is completed
//! (`exec_async_request_done`) only by its own requestee.
//!
//! A blocking libpq call is `es.block_on(conn)` and a return: the node returns Wait, the
//! run loop waits on that connection only, and the caller calls again. Every function
//! here may be called again after such a return and continues where it stopped (the
//! statement it waits for is in `pending`).
//!
//! Knobs beyond PostgreSQL 15 (behaviour.rs): `fetch_ahead` sends the next FETCH as soon
//! as a batch arrives; `pipelined_setup` puts the session set-up, START TRANSACTION,
//! DECLARE and the first FETCH in one message nobody waits for; `pipeline` lets every
//! scan on a shared connection have its FETCH in flight (no `pending_areq`).
//!
//! Where it departs from postgres_fdw: PostgreSQL's `process_pending_request` reads the
//! pending FETCH's batch into its owner's scan state and, if the batch is empty,
//! completes the owner's request (ExecAsyncRequestDone, ExecAsyncResponse) on the
//! spot. Here a scan cannot reach another scan's state, so `drain_pending_request`
//! only waits for the answer and frees the connection; the answer stays on the
//! connection, and the owner reads it and completes its own request when its requestor
//! next configures its wait (`read_drained_fetch`). The wire is the same.
//!
//! | here | postgres_fdw.c |
//! |---|---|
//! | `drain_pending_request` | `process_pending_request`, first half (wait for the FETCH's answer) |
//! | `read_drained_fetch` | `process_pending_request`, second half (the owner's batch), done by the owner |
//! | `async_request`, `async_configure_wait`, `async_notify` | `postgresForeignAsyncRequest`, `…ConfigureWait`, `…Notify` |
//! | `configure_fetch` | the `pendingAreq` cases of `postgresForeignAsyncConfigureWait` |
//! | `iterate_foreign_scan` | `postgresIterateForeignScan` |
//! | `es.conns[conn].pending_areq` | `PgFdwConnState.pendingAreq` |

use super::{copy_row, ExecNode, ExecStatus};
use crate::executor::estate::{EState, ExecError, ExecResult, RemoteCommand};
use crate::executor::exec_async::{exec_async_request_done, exec_async_request_pending, AsyncState, WaitContext};
use crate::executor::node_subplan::process_query_params;
use crate::instrument::ExplainNode;
use crate::plan::{ForeignScanPlan, RemoteQuery, RemoteTarget, ScanName};
use crate::remote::{PendingAreq, Proto, QueryResult, QueryRole, Ticket};
use crate::sql_text::deparse::{deparse_remote_query, REMOTE_SCHEMA};
use crate::sql_text::quote_identifier;
use crate::types::Datum;
use std::rc::Rc;

/// The remote query with its InitPlan values numbered `$1`, `$2`, … in order of first
/// appearance (deparse.c's `params_list`), and which value each number sends.
fn number_remote_params(q: &RemoteQuery) -> (RemoteQuery, Vec<(usize, crate::plan::SqlType)>) {
    let mut params: Vec<(usize, crate::plan::SqlType)> = vec![];
    for e in q.quals.iter().chain(&q.having) {
        e.for_each_param(&mut |n, t| {
            if !params.iter().any(|(p, _)| *p == n) {
                params.push((n, t));
            }
        });
    }
    if params.is_empty() {
        return (q.clone(), params);
    }
    let number =
        |n: usize, t| crate::plan::Expr::ExecParam(params.iter().position(|(p, _)| *p == n).map_or(0, |k| k + 1), t);
    let mut out = q.clone();
    out.quals = q.quals.iter().map(|e| e.map_params(&number)).collect();
    out.having = q.having.iter().map(|e| e.map_params(&number)).collect();
    (out, params)
}

/// The statement a scan waits for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Awaiting {
    Declare,
    Fetch,
}

#[derive(Clone)]
pub struct ForeignScanState {
    id: usize,
    relation: String,
    server: String,
    conn: usize,
    sql: String,
    /// A generic plan's parameter values in the remote query (the DECLARE's Bind).
    extern_params: Vec<Option<String>>,
    /// `sql` with the parameter values written in (a DECLARE by simple Query).
    sql_inline: String,
    /// EXPLAIN VERBOSE's Output: the remote query's target list.
    output: Vec<String>,
    /// The foreign table's columns (a base relation's physical target list, which
    /// EXPLAIN may print: the columns not fetched come back NULL).
    table_columns: Vec<String>,
    /// A foreign modify's scan: EXPLAIN shows the modify's row as its Output.
    row_mark: Option<crate::plan::RowMark>,
    /// A whole-row fetch (`RemoteQuery::whole_row`): the columns of each fetched row
    /// the scan outputs, its targets' places in the row (every column, in order).
    fetched: Option<Vec<usize>>,
    /// How EXPLAIN names the scan of a partition.
    name: Option<ScanName>,
    /// Aggregates or a grouping are pushed down: EXPLAIN prints an upper-relation scan
    /// ("Foreign Scan", `Relations: Aggregate on (…)`), as postgres_fdw does.
    upper: bool,
    /// Per output: a constant of the remote target list (`RemoteTarget::Const`).
    const_outputs: Vec<bool>,
    /// An upper relation's outputs that are its GROUP BY keys (EXPLAIN keeps those a
    /// select list folded into the scan leaves out: `GROUP_OUTPUTS`).
    group_outputs: Vec<usize>,
    /// A pushed-down join's `Relations:` text (`(public.f) INNER JOIN (public.dim d)`).
    join_label: Option<String>,
    /// A partitionwise pair pushed down: each relation's alias and its parent's.
    join_parents: Vec<(String, String)>,
    /// The remote query aggregates (GROUP BY or aggregates: an upper relation).
    grouped: bool,
    fetch_size: usize,
    /// postgres_fdw's `fsstate->async_capable`: an async-aware parent drives this scan
    /// with requests (EXPLAIN's "Async Foreign Scan").
    async_capable: bool,
    /// The server is `async_capable` and the query runs in async mode (a parent may
    /// make this scan a requestee; `fetch_ahead` applies).
    server_async: bool,
    cursor_number: u32,
    cursor_exists: bool,
    /// The statement this scan sent and has not read the answer of.
    pending: Option<(Ticket, Awaiting)>,
    /// The statement that declares the cursor (`pipelined_setup`: the first FETCH).
    declaring: Option<Ticket>,
    /// The last FETCH's rows, read and never written: shared, so a copy of the run
    /// (the page's checkpoints) does not copy them.
    batch: Rc<QueryResult>,
    next_tuple: usize,
    /// The last FETCH returned fewer rows than asked: no more rows on the server.
    eof_reached: bool,
    /// postgres_fdw's `fetch_ct_2`: FETCHes done since the cursor was (re)started,
    /// counted up to 2 (a rescan replays one batch from memory, rewinds past that).
    fetch_ct_2: u8,
    slot: Vec<Datum>,
    /// The remote query selects nothing (`SELECT NULL FROM …`: no column is read
    /// above the scan): its rows carry no column (the plan's empty target list), not
    /// the NULL the statement returns, so that a join above finds the other side's
    /// columns where it put them.
    no_columns: bool,
    /// Each target's aggregate and its column, if it is an aggregate of a column (EXPLAIN
    /// qualifies the column where PostgreSQL does).
    agg_args: Vec<Option<(String, String)>>,
    /// A scan of one table sorted remotely: the outputs its ORDER BY keys are (each a
    /// column it fetches). A select list that leaves them out still returns them
    /// after its own columns, as PostgreSQL's final target list keeps ORDER BY's
    /// resjunk entries (EXPLAIN's `Output: id, val`).
    sort_outputs: Vec<usize>,
    /// The InitPlan values the remote query sends as `$1`, `$2`, … (postgres_fdw's
    /// `param_exprs`), and their text once computed (`process_query_params`).
    exec_params: Vec<(usize, crate::plan::SqlType)>,
    param_values: Option<Vec<Option<String>>>,
    /// `create_cursor` drained the connection and is computing the parameters (an
    /// InitPlan waits): the drain is not repeated when it is called again.
    drained_for_declare: bool,
}

/// process_query_params: the remote query's parameter values, in its `$n` order
/// (`deparse::remote_params`), as text (each type's output function; None: NULL).
fn remote_param_values(q: &crate::plan::RemoteQuery) -> Vec<Option<String>> {
    crate::sql_text::deparse::remote_params(q)
        .iter()
        .map(|p| match p {
            crate::plan::Expr::Param(_, ty, Some(d)) if !d.is_null() => Some(crate::plan::eval::text_out(d, Some(*ty))),
            _ => None,
        })
        .collect()
}

/// The remote query with its parameters' values written in as constants (for a
/// DECLARE sent as a simple Query, which has no Bind: the `pipelined_setup` knob).
fn inline_params(q: &crate::plan::RemoteQuery) -> String {
    let mut inline = q.clone();
    for e in inline.quals.iter_mut().chain(inline.having.iter_mut()) {
        *e = e.params_as_consts();
    }
    deparse_remote_query(&inline)
}

impl ForeignScanState {
    /// postgresBeginForeignScan.
    pub fn init(id: usize, plan: &ForeignScanPlan, es: &mut EState) -> Result<ForeignScanState, String> {
        let conn = es.server_index(&plan.server).ok_or_else(|| format!("server \"{}\" does not exist", plan.server))?;
        let options = &es.servers[conn].options;
        if options.fetch_size == 0 {
            return Err(format!("server \"{}\": fetch_size must be positive", plan.server));
        }
        let (fetch_size, server_async) = (options.fetch_size, es.async_enabled && options.async_capable);
        // EXEC_FLAG_EXPLAIN_ONLY: postgres_fdw returns before GetConnection.
        if !es.explain_only {
            es.get_connection(conn);
        }
        let (remote, exec_params) = number_remote_params(&plan.remote);
        if !exec_params.is_empty() && plan.remote.quals.iter().chain(&plan.remote.having).any(|e| e.has_param()) {
            // deparse.c numbers both kinds in one list; the sandbox numbers each apart.
            return Err(format!(
                "foreign table \"{}\": a remote query with both a prepared statement's parameters and an \
                 InitPlan's value is not supported",
                plan.relation
            ));
        }
        Ok(ForeignScanState {
            id,
            relation: plan.relation.clone(),
            server: plan.server.clone(),
            conn,
            sql: deparse_remote_query(&remote),
            extern_params: remote_param_values(&plan.remote),
            sql_inline: inline_params(&plan.remote),
            output: plan
                .remote
                .targets
                .iter()
                .map(|t| match plan.remote.join.as_deref() {
                    Some(j) => join_target_name(&plan.remote, j, t),
                    None => target_name(&plan.remote, t),
                })
                .collect(),
            table_columns: plan.remote.table_columns.iter().map(|c| c.name.clone()).collect(),
            grouped: plan.remote.aggregated(),
            join_label: plan
                .remote
                .join
                .as_deref()
                .map(|j| crate::sql_text::deparse_join::relations_label(j, REMOTE_SCHEMA)),
            join_parents: plan
                .remote
                .join
                .iter()
                .flat_map(|j| j.rels.iter())
                .filter_map(|r| Some((r.alias.clone(), r.parent.clone()?)))
                .collect(),
            row_mark: plan.remote.row_mark.clone(),
            fetched: plan.remote.whole_row.filter(|w| w.whole).map(|_| {
                plan.remote
                    .targets
                    .iter()
                    .map(|t| match t {
                        crate::plan::RemoteTarget::Col(c) => *c,
                        _ => 0,
                    })
                    .collect()
            }),
            name: plan.alias.clone(),
            // A GROUP BY without aggregates is an upper relation too (postgres_fdw's
            // postgresGetForeignUpperPaths for UPPERREL_GROUP_AGG; EXPLAIN's
            // `Relations: Aggregate on (…)`, postgresExplainForeignScan).
            upper: plan.remote.aggregated(),
            fetch_size,
            async_capable: false,
            server_async,
            cursor_number: es.get_cursor_number(),
            cursor_exists: false,
            pending: None,
            declaring: None,
            batch: Rc::default(),
            next_tuple: 0,
            eof_reached: false,
            fetch_ct_2: 0,
            slot: Vec::new(),
            no_columns: plan.remote.targets.is_empty(),
            sort_outputs: match plan.remote.join.is_none() && !plan.remote.aggregated() {
                true => plan
                    .remote
                    .order_by
                    .iter()
                    .map_while(|k| match k.expr {
                        crate::plan::Expr::Col(c) => {
                            plan.remote.targets.iter().position(|t| *t == RemoteTarget::Col(c))
                        }
                        _ => None,
                    })
                    .collect(),
                false => vec![],
            },
            agg_args: plan
                .remote
                .targets
                .iter()
                .map(|t| match t {
                    RemoteTarget::Agg(f, Some(c), d) => plan
                        .remote
                        .table_columns
                        .get(*c)
                        .map(|col| (format!("{}({}", f.name(), distinct_word(*d)), col.name.clone())),
                    _ => None,
                })
                .collect(),
            const_outputs: plan.remote.targets.iter().map(|t| matches!(t, RemoteTarget::Const(_))).collect(),
            group_outputs: plan.remote.group_outputs(),
            exec_params,
            param_values: None,
            drained_for_declare: false,
        })
    }

    pub fn connection(&self) -> usize {
        self.conn
    }

    fn has_tuples(&self) -> bool {
        self.next_tuple < self.batch.nrows
    }

    fn pipeline(&self, es: &EState) -> bool {
        es.conns[self.conn].pipeline
    }

    /// Our FETCH's answer is complete on the connection.
    fn fetch_ready(&self, es: &EState) -> bool {
        matches!(self.pending, Some((t, Awaiting::Fetch)) if es.conns[self.conn].is_ready(t))
    }

    /// Is our request the connection's pendingAreq?
    fn is_pending_areq(&self, es: &EState) -> bool {
        es.conns[self.conn].pending_areq.is_some_and(|p| p.requestee == self.id)
    }

    /// pgfdw_get_result: the answer to our statement, or None after blocking on it.
    fn get_result(&mut self, es: &mut EState) -> ExecResult<Option<QueryResult>> {
        let Some((ticket, _)) = self.pending else {
            return Err(ExecError::Internal(format!("scan of {} waits for no statement", self.relation)));
        };
        let Some(result) = es.conns[self.conn].take_result(ticket) else {
            // An earlier answer on our connection failed: ours will never come.
            if let Some(e) = &es.conns[self.conn].first_error {
                return Err(self.remote_error(e.clone()));
            }
            es.block_on(self.conn);
            return Ok(None);
        };
        self.pending = None;
        // Its bytes were charged to us when the answer arrived (`EState::answer_arrived`).
        es.clock.charge(es.cost.message_ns);
        match result.error {
            Some(e) => Err(self.remote_error(e)),
            None => Ok(Some(result)),
        }
    }

    /// `pgfdw_report_error(ERROR, res, conn, …, fsstate->query)`: a scan's error is
    /// reported with its remote query as the context, not the FETCH or DECLARE
    /// ("On error, report the original query, not the FETCH", `fetch_more_data`).
    fn remote_error(&self, mut e: crate::remote::RemoteError) -> ExecError {
        if e.context.is_none() {
            e.context = Some(self.sql.clone());
        }
        ExecError::Remote(e)
    }

    /// Another scan's FETCH is in flight on our connection: waits for its answer, which
    /// stays on the connection for its owner to read (`read_drained_fetch`), and frees
    /// the connection. False after blocking. (postgres_fdw's process_pending_request,
    /// without its second half: see the module doc.)
    fn drain_pending_request(&self, es: &mut EState) -> ExecResult<bool> {
        // exercise:pending-request begin
        let c = &es.conns[self.conn];
        let Some(p) = c.pending_areq else { return Ok(true) };
        if p.requestee == self.id || c.is_ready(p.ticket) {
            if p.requestee != self.id {
                let (conn, request, node) = (self.conn, p.request, self.id);
                es.record(|| crate::trace::TraceKind::Drain { conn, request, node });
            }
            es.conns[self.conn].pending_areq = None;
            return Ok(true);
        }
        if let Some(e) = &c.first_error {
            return Err(ExecError::Remote(e.clone()));
        }
        es.block_on(self.conn);
        Ok(false)
        // exercise:pending-request end
    }

    /// create_cursor: DECLARE by the extended protocol, waited for. True once the
    /// cursor exists, false after blocking.
    fn create_cursor(&mut self, es: &mut EState) -> ExecResult<bool> {
        if self.cursor_exists {
            return Ok(true);
        }
        if self.pending.is_none() {
            if !self.drained_for_declare && !self.drain_pending_request(es)? {
                return Ok(false);
            }
            // The parameters after the drain, as create_cursor computes them: an
            // InitPlan that runs here uses the connections with ours free.
            self.drained_for_declare = true;
            if self.param_values.is_none() {
                match process_query_params(es, &self.exec_params)? {
                    Some(v) => self.param_values = Some(v),
                    None => return Ok(false),
                }
                // An InitPlan that stopped early (a LIMIT) may have left its FETCH in
                // flight on our connection: PostgreSQL drained before computing the
                // parameters, so its PQsendQueryParams fails and postgres_fdw raises
                // the error; so do we, rather than queue the DECLARE behind it.
                if es.conns[self.conn].pending_areq.is_some_and(|p| p.requestee != self.id) {
                    return Err(ExecError::Query(format!(
                        "another command is already in progress (remote SQL command: DECLARE c{} CURSOR FOR {})",
                        self.cursor_number, self.sql
                    )));
                }
            }
            self.drained_for_declare = false;
            let sql = format!("DECLARE c{} CURSOR FOR\n{}", self.cursor_number, self.sql);
            // A generic plan's parameters, or the InitPlan values computed above.
            let params = match &self.param_values {
                Some(v) if !self.exec_params.is_empty() => v.clone(),
                _ => self.extern_params.clone(),
            };
            let ticket =
                es.send_params(self.conn, Proto::Extended, &sql, params, Some(self.id), QueryRole::InTransaction);
            self.pending = Some((ticket, Awaiting::Declare));
        }
        if self.get_result(es)?.is_none() {
            return Ok(false);
        }
        self.cursor_exists = true;
        Ok(true)
    }

    /// Writes the next FETCH without waiting. With `pipelined_setup` the first one also
    /// carries the session set-up, START TRANSACTION and the DECLARE.
    fn send_fetch(&mut self, es: &mut EState) {
        let fetch = format!("FETCH {} FROM c{}", self.fetch_size, self.cursor_number);
        let declares = !self.cursor_exists;
        let sql = if self.cursor_exists {
            fetch
        } else {
            self.cursor_exists = true;
            let prefix = es.session_prefix(self.conn);
            // One simple Query carries no Bind: parameters go in as constants.
            format!("{prefix}DECLARE c{} CURSOR FOR\n{}; {fetch}", self.cursor_number, self.sql_inline)
        };
        let ticket = es.send(self.conn, Proto::Simple, &sql, Some(self.id), QueryRole::InTransaction);
        if declares {
            self.declaring = Some(ticket);
        }
        self.pending = Some((ticket, Awaiting::Fetch));
    }

    /// fetch_more_data_begin: creates the cursor (waited for) and sends a FETCH without
    /// waiting; request `r` becomes the connection's pendingAreq. False after blocking.
    fn fetch_more_data_begin(&mut self, es: &mut EState, r: usize) -> ExecResult<bool> {
        if !es.behaviour.pipelined_setup && !self.create_cursor(es)? {
            return Ok(false);
        }
        if self.pending.is_none() {
            self.send_fetch(es);
        }
        self.set_pending_areq(es, r);
        Ok(true)
    }

    fn set_pending_areq(&self, es: &mut EState, r: usize) {
        if let (false, Some((ticket, Awaiting::Fetch))) = (self.pipeline(es), self.pending) {
            let requestor = es.requests[r].requestor;
            es.conns[self.conn].pending_areq = Some(PendingAreq { request: r, requestor, requestee: self.id, ticket });
        }
    }

    /// fetch_more_data: stores the next batch. If our FETCH is in flight its answer is
    /// read; otherwise (synchronous scans) a FETCH is sent and waited for. False after
    /// blocking.
    fn fetch_more_data(&mut self, es: &mut EState) -> ExecResult<bool> {
        if self.pending.is_none() {
            if !self.drain_pending_request(es)? {
                return Ok(false);
            }
            self.send_fetch(es);
        }
        let Some(result) = self.get_result(es)? else { return Ok(false) };
        if self.is_pending_areq(es) {
            es.conns[self.conn].pending_areq = None;
        }
        es.instr[self.id].remote.batches += 1;
        self.fetch_ct_2 = (self.fetch_ct_2 + 1).min(2);
        self.eof_reached = result.nrows < self.fetch_size;
        self.batch = Rc::new(result);
        self.next_tuple = 0;
        if es.behaviour.fetch_ahead && self.server_async && !self.eof_reached {
            self.fetch_ahead(es);
        }
        Ok(true)
    }

    /// The `fetch_ahead` knob: the next FETCH goes out now, in flight while this batch
    /// is consumed — unless another scan's FETCH holds the connection.
    fn fetch_ahead(&mut self, es: &mut EState) {
        let c = &es.conns[self.conn];
        if !c.pipeline && (c.pending_areq.is_some() || c.is_busy()) {
            return;
        }
        self.send_fetch(es);
        let requests = es.requests.iter().filter(|q| q.requestee == self.id).map(|q| q.id).next();
        if let Some(r) = requests {
            self.set_pending_areq(es, r);
        }
    }

    /// The next row of the batch into the slot.
    fn next_row(&mut self, es: &mut EState) -> ExecStatus {
        es.clock.charge(es.cost.foreign_row_ns);
        let row = self.batch.row(self.next_tuple);
        match &self.fetched {
            // A whole row fetched: the columns the scan outputs.
            Some(cols) => {
                self.slot.clear();
                self.slot.extend(cols.iter().map(|&c| row.get(c).cloned().unwrap_or(Datum::Null)));
            }
            // `SELECT NULL`: the remote sends a placeholder column the scan does not output.
            None if self.no_columns => self.slot.clear(),
            None => copy_row(&mut self.slot, row),
        }
        self.next_tuple += 1;
        ExecStatus::Row
    }

    /// postgresIterateForeignScan: a row, end of data, or Wait after blocking. An async
    /// scan only hands out rows already fetched.
    fn iterate_foreign_scan(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if !es.behaviour.pipelined_setup && !self.create_cursor(es)? {
            return Ok(ExecStatus::Wait);
        }
        if !self.has_tuples() {
            if self.async_capable {
                return Ok(ExecStatus::Done);
            }
            if !self.eof_reached && !self.fetch_more_data(es)? {
                return Ok(ExecStatus::Wait);
            }
            if !self.has_tuples() {
                return Ok(ExecStatus::Done);
            }
        }
        Ok(self.next_row(es))
    }

    /// May this scan send a FETCH now? Only one FETCH per connection is in flight
    /// (pendingAreq) unless `pipeline`.
    fn may_begin_fetch(&self, es: &EState) -> bool {
        if self.pipeline(es) {
            !matches!(self.pending, Some((_, Awaiting::Fetch)))
        } else {
            es.conns[self.conn].pending_areq.is_none()
        }
    }

    /// produce_tuple_asynchronously: completes request `r` with a row or end of data,
    /// or leaves it Waiting — after sending a FETCH if `fetch` and the connection is
    /// free. If creating the cursor blocks, the request is left as it was and the call
    /// is made again.
    fn produce_tuple_asynchronously(&mut self, es: &mut EState, r: usize, fetch: bool) -> ExecResult<()> {
        if self.has_tuples() {
            self.next_row(es);
            exec_async_request_done(es, r, true);
            return Ok(());
        }
        if self.eof_reached {
            exec_async_request_done(es, r, false);
            return Ok(());
        }
        if fetch && self.may_begin_fetch(es) && !self.fetch_more_data_begin(es, r)? {
            return Ok(());
        }
        exec_async_request_pending(es, r, self.conn);
        Ok(())
    }

    /// Our FETCH's answer was drained by another scan (drain_pending_request): read
    /// it now. True if a batch was stored.
    fn read_drained_fetch(&mut self, es: &mut EState) -> ExecResult<bool> {
        if self.has_tuples() || !self.fetch_ready(es) || self.is_pending_areq(es) && !self.pipeline(es) {
            return Ok(false);
        }
        self.fetch_more_data(es)
    }
}

impl ExecNode for ForeignScanState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        self.iterate_foreign_scan(es)
    }

    /// postgresReScanForeignScan: nothing to do before the cursor exists; a FETCH of
    /// ours in flight is finished first; then, with more than one batch fetched, the
    /// cursor is closed (`CLOSE cN`) and declared again on the next row asked for (a
    /// server of version 15 or later refuses `MOVE BACKWARD ALL` on a cursor that is
    /// not scrollable, so postgres_fdw 15 no longer rewinds); with one batch (or none),
    /// the batch in memory is read again and nothing is sent.
    ///
    /// Where it departs from postgres_fdw: a FETCH in flight is not waited for here (a
    /// rescan cannot wait): its answer is left to the connection, unread, so its batch
    /// is not in memory, and the cursor is closed even after that single batch, where
    /// postgres_fdw would read it and replay it. The CLOSE is waited for by the run
    /// loop, before the plan goes on, rather than inside the rescan (with
    /// `async_through_nodes` it is not waited for).
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        let fetch_in_flight = matches!(self.pending, Some((_, Awaiting::Fetch)));
        self.forget_pending(es);
        self.next_tuple = 0;
        // Changed parameters its query reads (a correlated SubPlan's `chgParam`): the
        // cursor is closed and declared again with the new values.
        let chg_param = es.chg_param && !self.exec_params.is_empty();
        if self.cursor_exists && (self.fetch_ct_2 > 1 || fetch_in_flight || chg_param) {
            let sql = format!("CLOSE c{}", self.cursor_number);
            if es.behaviour.async_through_nodes {
                // A node under a request cannot hand the run loop a statement to wait
                // for: the CLOSE goes out now, its answer unread.
                es.send(self.conn, Proto::Simple, &sql, Some(self.id), QueryRole::Unread);
            } else {
                // pgfdw_exec_query: sent and waited for, one after another, before the
                // plan goes on (the run loop sends `remote_commands`; the Nested Loop
                // that rescanned yields to it).
                let statement = Some((Proto::Simple, sql, QueryRole::InTransaction));
                es.remote_commands.push_back(RemoteCommand { conn: self.conn, statement, owner: Some(self.id) });
            }
            self.cursor_exists = false;
        }
        if chg_param {
            // The next DECLARE computes the parameters again (create_cursor's
            // process_query_params).
            self.param_values = None;
        }
        if !self.cursor_exists {
            self.declaring = None;
            self.batch = Rc::default();
            self.eof_reached = false;
            self.fetch_ct_2 = 0;
        }
        Ok(())
    }

    /// postgresEndForeignScan: `CLOSE cN` if the cursor exists, sent and waited for by
    /// the run loop after the plan (close_cursor). A FETCH still in flight is drained
    /// first by the connection, unread.
    fn exec_end(&mut self, es: &mut EState) {
        self.forget_pending(es);
        if self.cursor_exists {
            self.close_cursor(es);
        }
    }

    fn slot(&self) -> &[Datum] {
        &self.slot
    }

    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Foreign Scan".into();
        e.async_capable = self.async_capable;
        if let Some(label) = &self.join_label {
            // A join relation (postgresExplainForeignScan): no "on rel", each output
            // qualified by its relation's alias.
            for o in &self.output {
                e.push_output(o.clone());
            }
            let label = if self.grouped { format!("Aggregate on ({label})") } else { label.clone() };
            e.details.push(("Server".into(), self.server.clone()));
            e.details.push(("Relations".into(), label));
            e.details.push(("Remote SQL".into(), self.sql.clone()));
            for (alias, parent) in &self.join_parents {
                e.details.push((crate::instrument::PAIR_PARENT.into(), format!("{alias}\t{parent}")));
            }
            return;
        }
        if self.upper {
            // An upper relation: no "on rel" in the title; columns named after the
            // base relation's alias, pushed aggregates in parentheses.
            let alias = self.name.as_ref().map_or(self.relation.as_str(), |n| n.alias.as_str());
            for ((o, arg), constant) in self.output.iter().zip(&self.agg_args).zip(&self.const_outputs) {
                e.push_output(if *constant {
                    o.clone() // a shipped constant (`'f'::text`), never qualified
                } else if o.starts_with('(') {
                    match arg {
                        // The aggregate's column, qualified where EXPLAIN qualifies.
                        Some((f, c)) => format!("({f}{}))", crate::instrument::qualifiable(alias, c)),
                        None => o.clone(),
                    }
                } else {
                    // Qualified where EXPLAIN qualifies (more than one range-table
                    // entry): `cat` over one foreign table, `h_1.grp` over a partition.
                    crate::instrument::qualifiable(alias, o)
                });
            }
            let rel = if alias == self.relation {
                format!("{REMOTE_SCHEMA}.{}", quote_identifier(&self.relation))
            } else {
                format!("{REMOTE_SCHEMA}.{} {}", quote_identifier(&self.relation), quote_identifier(alias))
            };
            // Under a subquery in FROM (a scan named by `name_subquery_scans`) the
            // range table holds the subquery's entry too: columns are qualified.
            if self.name.as_ref().is_some_and(|n| n.direct && !n.unqualified) {
                e.details.push(("Qualify".into(), String::new()));
            }
            e.details.push(("Server".into(), self.server.clone()));
            e.details.push(("Relations".into(), format!("Aggregate on ({rel})")));
            if !self.group_outputs.is_empty() {
                let keys: Vec<String> = self.group_outputs.iter().map(|k| k.to_string()).collect();
                e.details.push((crate::instrument::GROUP_OUTPUTS.into(), keys.join(",")));
            }
            e.details.push(("Remote SQL".into(), self.sql.clone()));
            return;
        }
        e.relation = Some(self.relation.clone());
        for o in &self.output {
            e.push_output(o.clone());
        }
        if !self.sort_outputs.is_empty() {
            let keys: Vec<String> = self.sort_outputs.iter().map(|k| k.to_string()).collect();
            e.details.push((crate::instrument::SORT_OUTPUTS.into(), keys.join(",")));
        }
        if let Some(m) = &self.row_mark {
            // Shown as the Output; its quals still name the columns read.
            for o in &m.shown {
                e.details.push((crate::instrument::ROW_MARK_OUTPUT.into(), o.clone()));
            }
        }
        super::explain_scan_name(e, self.name.as_ref());
        if self.row_mark.is_none() {
            super::explain_physical_tlist(e, self.name.as_ref(), self.table_columns.iter().map(|c| c.as_str()));
        }
        e.details.push(("Server".into(), self.server.clone()));
        e.details.push(("Remote SQL".into(), self.sql.clone()));
    }

    /// postgres_fdw's `postgresIsForeignPathAsyncCapable` (the server's or table's
    /// `async_capable`, honoured in async mode), but for the one partition pruning left
    /// of a partitioned table: its Append of one, which setrefs.c removes, was no async
    /// member (`ScanName::alone`).
    fn is_async_capable(&self) -> bool {
        self.server_async && !self.name.as_ref().is_some_and(|n| n.alone)
    }

    fn mark_async_requestee(&mut self) {
        self.async_capable = true;
    }

    /// postgresForeignAsyncRequest.
    fn async_request(&mut self, es: &mut EState, r: usize) -> ExecResult<()> {
        self.produce_tuple_asynchronously(es, r, true)
    }

    /// postgresForeignAsyncConfigureWait: adds our connection to the wait set if our
    /// FETCH is the one in flight (beginning it if the connection is free); completes
    /// the request at once if rows are already here.
    fn async_configure_wait(&mut self, es: &mut EState, r: usize, ctx: &WaitContext) -> ExecResult<bool> {
        self.read_drained_fetch(es)?;
        if self.has_tuples() || self.eof_reached && self.pending.is_none() {
            // complete_pending_request
            self.produce_tuple_asynchronously(es, r, false)?;
            if es.requests[r].state == AsyncState::CallbackPending {
                return Ok(false);
            }
        }
        if es.blocked_on.is_some() {
            return Ok(false);
        }
        if !self.configure_fetch(es, r, ctx)? {
            return Ok(false);
        }
        es.event_loop.add_wait_conn(self.conn);
        Ok(true)
    }

    fn async_ready(&self, es: &EState) -> bool {
        self.has_tuples() || self.fetch_ready(es) || es.conns[self.conn].first_error.is_some()
    }

    /// postgresForeignAsyncNotify: our FETCH's answer is here; store it and produce.
    fn async_notify(&mut self, es: &mut EState, r: usize) -> ExecResult<()> {
        if !self.has_tuples() && !self.fetch_more_data(es)? {
            return Ok(());
        }
        self.produce_tuple_asynchronously(es, r, true)
    }
}

impl ForeignScanState {
    /// The pendingAreq cases of postgresForeignAsyncConfigureWait: true if our FETCH is
    /// (now) the one in flight and we may wait on the socket.
    fn configure_fetch(&mut self, es: &mut EState, r: usize, ctx: &WaitContext) -> ExecResult<bool> {
        if self.pipeline(es) {
            let in_flight = matches!(self.pending, Some((_, Awaiting::Fetch)));
            return Ok(in_flight || self.fetch_more_data_begin(es, r)?);
        }
        match es.conns[self.conn].pending_areq {
            None => self.fetch_more_data_begin(es, r),
            Some(p) if p.requestor != es.requests[r].requestor => {
                // Another node's request holds the connection. Skip if our requestor
                // has other work or other events; else drain it and take over, so the
                // wait has an event (seed 000's hang).
                if ctx.requestor_needs_request || ctx.events_registered > 0 {
                    return Ok(false);
                }
                Ok(self.drain_pending_request(es)? && self.fetch_more_data_begin(es, r)?)
            }
            // Another child of the same requestor has the FETCH in flight: only its
            // event is configured. (With `fetch_ahead` that FETCH may belong to a
            // request that is not waiting — nobody would configure its event — so we
            // drain it and take over, as for another requestor.)
            Some(p) if p.requestee != self.id && es.requests[p.request].state == AsyncState::Waiting => Ok(false),
            Some(p) if p.requestee != self.id => {
                Ok(self.drain_pending_request(es)? && self.fetch_more_data_begin(es, r)?)
            }
            Some(_) => Ok(true),
        }
    }

    /// close_cursor: `CLOSE cN`, queued for the run loop, which sends it and waits for
    /// it after the plan (ExecEnd runs after the last row, outside any node's call).
    fn close_cursor(&mut self, es: &mut EState) {
        let statement = Some((Proto::Simple, format!("CLOSE c{}", self.cursor_number), QueryRole::InTransaction));
        es.remote_commands.push_back(RemoteCommand { conn: self.conn, statement, owner: Some(self.id) });
        self.cursor_exists = false;
    }

    /// Forgets the statement we wait for (rescan, end): the connection drains its
    /// answer unread.
    fn forget_pending(&mut self, es: &mut EState) {
        if self.is_pending_areq(es) {
            es.conns[self.conn].pending_areq = None;
        }
        if let Some((ticket, awaiting)) = self.pending.take() {
            let written = es.conns[self.conn].discard(ticket);
            // A DECLARE on its way creates the cursor anyway (it must be closed); one
            // never written (still queued) does not.
            match (awaiting, written) {
                (Awaiting::Declare, true) => self.cursor_exists = true,
                (_, false) if self.declaring == Some(ticket) => self.cursor_exists = false,
                _ => {}
            }
        }
    }
}

/// `DISTINCT ` before a DISTINCT aggregate's argument.
fn distinct_word(distinct: bool) -> &'static str {
    if distinct {
        "DISTINCT "
    } else {
        ""
    }
}

/// A target as EXPLAIN VERBOSE names it: a column, or a pushed-down aggregate in
/// parentheses (`(count(*))`).
fn target_name(q: &RemoteQuery, t: &RemoteTarget) -> String {
    let col = |i: usize| q.table_columns.get(i).map_or_else(|| format!("${i}"), |c| c.name.clone());
    match t {
        RemoteTarget::Col(i) => col(*i),
        RemoteTarget::Agg(f, None, _) => format!("({}(*))", f.name()),
        RemoteTarget::Agg(f, Some(i), d) => format!("({}({}{}))", f.name(), distinct_word(*d), col(*i)),
        RemoteTarget::Const(d) => crate::plan::Expr::Const(d.clone()).to_sql(&[]),
    }
}

/// A pushed-down join's target as EXPLAIN VERBOSE names it: its relation's alias and
/// column (`d.title`), an aggregate in parentheses (`(count(f.id))`).
fn join_target_name(q: &RemoteQuery, j: &crate::plan::RemoteJoin, t: &RemoteTarget) -> String {
    let col = |i: usize| {
        let name = q.table_columns.get(i).map_or_else(|| format!("${i}"), |c| quote_identifier(&c.name));
        match j.rels.iter().find(|r| i >= r.first && i < r.first + r.ncols) {
            Some(r) => format!("{}.{name}", quote_identifier(&r.alias)),
            None => name,
        }
    };
    match t {
        RemoteTarget::Col(i) => col(*i),
        RemoteTarget::Agg(f, None, _) => format!("({}(*))", f.name()),
        RemoteTarget::Agg(f, Some(i), d) => format!("({}({}{}))", f.name(), distinct_word(*d), col(*i)),
        RemoteTarget::Const(d) => crate::plan::Expr::Const(d.clone()).to_sql(&[]),
    }
}
