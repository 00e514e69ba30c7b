//! A simulated PostgreSQL server: parses frontend messages, runs the statements with
//! the sandbox's own executor over in-memory tables, and writes backend messages.
//! It answers what postgres_fdw sends: the startup packet, and simple Query messages
//! holding START TRANSACTION / DECLARE … CURSOR / FETCH / CLOSE / COMMIT / ROLLBACK /
//! SET / SELECT, several per message.

use crate::clock::Clock;
use crate::estate::EState;
use crate::executor::{exec_proc_node, init_plan, ExecStatus, InitContext, PlanState};
use crate::plan::use_indexes;
use crate::sql::{parse_shard_sql, ShardStatement, SqlError};
use crate::types::{Catalog, Column, Datum};

/// Server-side costs of the model, in nanoseconds.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ServerCosts {
    /// Producing and sending one row (on top of the executor's cost model).
    pub server_row_ns: u64,
    /// Parsing and running one statement.
    pub server_query_ns: u64,
}

impl Default for ServerCosts {
    fn default() -> Self {
        ServerCosts { server_row_ns: 300, server_query_ns: 20_000 }
    }
}

struct Cursor {
    name: String,
    es: EState,
    root: PlanState,
    columns: Vec<Column>,
    done: bool,
}

pub struct ShardServer {
    pub name: String,
    pub catalog: Catalog,
    pub costs: ServerCosts,
    /// Fault injection: fail a FETCH once this many rows have been sent in all.
    pub fail_after_rows: Option<u64>,
    rows_sent: u64,
    inbuf: Vec<u8>,
    started: bool,
    in_xact: bool,
    aborted: bool,
    cursors: Vec<Cursor>,
    pid: i32,
    /// ReadyForQuery messages written so far (one per answered Query or startup).
    pub answers_sent: usize,
}

/// An error to send as ErrorResponse.
struct PgError {
    code: &'static str,
    message: String,
    position: Option<usize>,
}

impl From<SqlError> for PgError {
    fn from(e: SqlError) -> PgError {
        let code = if e.message.contains("does not exist") { "42P01" } else { "42601" };
        PgError { code, message: e.message, position: e.position }
    }
}

fn put_msg(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(body);
}

fn cstr(body: &mut Vec<u8>, s: &str) {
    body.extend_from_slice(s.as_bytes());
    body.push(0);
}

impl ShardServer {
    pub fn new(name: &str, catalog: Catalog, pid: i32) -> ShardServer {
        ShardServer {
            name: name.to_string(),
            catalog,
            costs: ServerCosts::default(),
            fail_after_rows: None,
            rows_sent: 0,
            inbuf: Vec::new(),
            started: false,
            in_xact: false,
            aborted: false,
            cursors: Vec::new(),
            pid,
            answers_sent: 0,
        }
    }

    /// Handles the bytes of one or more complete frontend messages; returns the
    /// response bytes and the server time it took.
    pub fn handle(&mut self, bytes: &[u8]) -> (Vec<u8>, u64) {
        self.inbuf.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut cost = 0;
        loop {
            if !self.started {
                if self.inbuf.len() < 4 {
                    break;
                }
                let len = i32::from_be_bytes(self.inbuf[0..4].try_into().unwrap()) as usize;
                if self.inbuf.len() < len {
                    break;
                }
                self.inbuf.drain(..len);
                self.started = true;
                self.startup_response(&mut out);
                continue;
            }
            if self.inbuf.len() < 5 {
                break;
            }
            let tag = self.inbuf[0];
            let len = i32::from_be_bytes(self.inbuf[1..5].try_into().unwrap()) as usize;
            if self.inbuf.len() < len + 1 {
                break;
            }
            let body: Vec<u8> = self.inbuf.drain(..len + 1).skip(5).collect();
            match tag {
                b'Q' => {
                    let sql = String::from_utf8_lossy(body.strip_suffix(&[0]).unwrap_or(&body)).into_owned();
                    cost += self.simple_query(&sql, &mut out);
                }
                b'X' => {
                    self.cursors.clear();
                    self.in_xact = false;
                    self.started = false;
                }
                _ => {
                    let e = PgError {
                        code: "08P01",
                        message: format!("unsupported frontend message type {}", tag as char),
                        position: None,
                    };
                    self.error_response(&e, &mut out);
                    self.ready(&mut out);
                }
            }
        }
        (out, cost)
    }

    /// Cancels what is running: the client will get a 57014 error; the transaction is aborted.
    pub fn cancel_response(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.in_xact {
            self.aborted = true;
        }
        let e = PgError { code: "57014", message: "canceling statement due to user request".into(), position: None };
        self.error_response(&e, &mut out);
        self.ready(&mut out);
        out
    }

    fn startup_response(&mut self, out: &mut Vec<u8>) {
        put_msg(out, b'R', &0i32.to_be_bytes());
        for (k, v) in [
            ("server_version", "15.0 (pgasync simulated shard)"),
            ("client_encoding", "UTF8"),
            ("DateStyle", "ISO, MDY"),
        ] {
            let mut b = Vec::new();
            cstr(&mut b, k);
            cstr(&mut b, v);
            put_msg(out, b'S', &b);
        }
        let mut k = self.pid.to_be_bytes().to_vec();
        k.extend_from_slice(&(self.pid.wrapping_mul(7919)).to_be_bytes());
        put_msg(out, b'K', &k);
        self.ready(out);
    }

    fn ready(&mut self, out: &mut Vec<u8>) {
        self.answers_sent += 1;
        let status = if self.aborted {
            b'E'
        } else if self.in_xact {
            b'T'
        } else {
            b'I'
        };
        put_msg(out, b'Z', &[status]);
    }

    fn error_response(&self, e: &PgError, out: &mut Vec<u8>) {
        let mut b = Vec::new();
        for (t, v) in [(b'S', "ERROR"), (b'V', "ERROR"), (b'C', e.code)] {
            b.push(t);
            cstr(&mut b, v);
        }
        b.push(b'M');
        cstr(&mut b, &e.message);
        if let Some(p) = e.position {
            b.push(b'P');
            cstr(&mut b, &p.to_string());
        }
        b.push(0);
        put_msg(out, b'E', &b);
    }

    fn command_complete(out: &mut Vec<u8>, tag: &str) {
        let mut b = Vec::new();
        cstr(&mut b, tag);
        put_msg(out, b'C', &b);
    }

    /// Runs every statement of a Query message; the first error skips the rest.
    fn simple_query(&mut self, sql: &str, out: &mut Vec<u8>) -> u64 {
        let mut cost = 0;
        let result = parse_shard_sql(sql, &self.catalog).map_err(PgError::from).and_then(|stmts| {
            if stmts.is_empty() {
                put_msg(out, b'I', &[]);
            }
            for s in stmts {
                cost += self.costs.server_query_ns;
                cost += self.execute(s, out)?;
            }
            Ok(())
        });
        if let Err(e) = result {
            if self.in_xact {
                self.aborted = true;
            }
            self.error_response(&e, out);
        }
        self.ready(out);
        cost
    }

    fn execute(&mut self, stmt: ShardStatement, out: &mut Vec<u8>) -> Result<u64, PgError> {
        let ends_xact = matches!(stmt, ShardStatement::Commit | ShardStatement::Rollback);
        if self.aborted && !ends_xact {
            return Err(PgError {
                code: "25P02",
                message: "current transaction is aborted, commands ignored until end of transaction block".into(),
                position: None,
            });
        }
        match stmt {
            ShardStatement::Begin => {
                self.in_xact = true;
                Self::command_complete(out, "BEGIN");
            }
            ShardStatement::Commit | ShardStatement::Rollback => {
                let tag = if self.aborted || matches!(stmt, ShardStatement::Rollback) { "ROLLBACK" } else { "COMMIT" };
                self.cursors.clear(); // cursors without HOLD end with their transaction
                self.in_xact = false;
                self.aborted = false;
                Self::command_complete(out, tag);
            }
            ShardStatement::Set => Self::command_complete(out, "SET"),
            ShardStatement::DeclareCursor { name, plan, columns } => {
                if !self.in_xact {
                    return Err(PgError {
                        code: "25P01",
                        message: "DECLARE CURSOR can only be used in transaction blocks".into(),
                        position: None,
                    });
                }
                if self.cursors.iter().any(|c| c.name == name) {
                    return Err(PgError {
                        code: "42P03",
                        message: format!("cursor \"{name}\" already exists"),
                        position: None,
                    });
                }
                let plan = use_indexes(plan, &self.catalog);
                let mut es = EState::new(Clock::virtual_clock(), vec![], false, false);
                let root = init_plan(&plan, &InitContext { catalog: &self.catalog }, &mut es).map_err(|m| PgError {
                    code: "42P01",
                    message: m,
                    position: None,
                })?;
                self.cursors.push(Cursor { name, es, root, columns, done: false });
                Self::command_complete(out, "DECLARE CURSOR");
            }
            ShardStatement::Fetch { cursor, count } => {
                let i = self.cursor_index(&cursor)?;
                return self.fetch(i, count, out, "FETCH");
            }
            ShardStatement::Close { cursor } => {
                let i = self.cursor_index(&cursor)?;
                self.cursors.remove(i);
                Self::command_complete(out, "CLOSE CURSOR");
            }
            ShardStatement::Select { plan, columns } => {
                let plan = use_indexes(plan, &self.catalog);
                let mut es = EState::new(Clock::virtual_clock(), vec![], false, false);
                let root = init_plan(&plan, &InitContext { catalog: &self.catalog }, &mut es).map_err(|m| PgError {
                    code: "42P01",
                    message: m,
                    position: None,
                })?;
                self.cursors.push(Cursor { name: String::new(), es, root, columns, done: false });
                let i = self.cursors.len() - 1;
                let r = self.fetch(i, None, out, "SELECT");
                self.cursors.remove(i);
                return r;
            }
        }
        Ok(0)
    }

    fn cursor_index(&self, name: &str) -> Result<usize, PgError> {
        self.cursors.iter().position(|c| c.name == name).ok_or_else(|| PgError {
            code: "34000",
            message: format!("cursor \"{name}\" does not exist"),
            position: None,
        })
    }

    /// Sends up to `count` rows of cursor `i`: RowDescription, DataRows, CommandComplete.
    fn fetch(&mut self, i: usize, count: Option<u64>, out: &mut Vec<u8>, verb: &str) -> Result<u64, PgError> {
        let row_desc = row_description(&self.cursors[i].columns);
        put_msg(out, b'T', &row_desc);
        let start = self.cursors[i].es.now();
        let mut n = 0u64;
        let mut body = Vec::new();
        while count.is_none_or(|c| n < c) && !self.cursors[i].done {
            let c = &mut self.cursors[i];
            let status = exec_proc_node(&mut c.root, &mut c.es).map_err(|e| PgError {
                code: "XX000",
                message: e.to_string(),
                position: None,
            })?;
            match status {
                ExecStatus::Row => {}
                _ => {
                    c.done = true;
                    break;
                }
            }
            if let Some(limit) = self.fail_after_rows {
                if self.rows_sent >= limit {
                    return Err(PgError {
                        code: "XX000",
                        message: format!("injected failure on shard \"{}\" after {} rows", self.name, self.rows_sent),
                        position: None,
                    });
                }
            }
            body.clear();
            data_row(c.root.node.slot(), &mut body);
            put_msg(out, b'D', &body);
            n += 1;
            self.rows_sent += 1;
        }
        Self::command_complete(out, &format!("{verb} {n}"));
        let c = &self.cursors[i];
        Ok(c.es.now() - start + n * self.costs.server_row_ns)
    }
}

fn row_description(columns: &[Column]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&(columns.len() as i16).to_be_bytes());
    for c in columns {
        cstr(&mut b, &c.name);
        b.extend_from_slice(&0i32.to_be_bytes()); // table oid
        b.extend_from_slice(&0i16.to_be_bytes()); // column number
        b.extend_from_slice(&c.ty.oid().to_be_bytes());
        b.extend_from_slice(&(-1i16).to_be_bytes()); // type size
        b.extend_from_slice(&(-1i32).to_be_bytes()); // type modifier
        b.extend_from_slice(&0i16.to_be_bytes()); // text format
    }
    b
}

fn data_row(row: &[Datum], b: &mut Vec<u8>) {
    b.extend_from_slice(&(row.len() as i16).to_be_bytes());
    for d in row {
        if d.is_null() {
            b.extend_from_slice(&(-1i32).to_be_bytes());
            continue;
        }
        let at = b.len();
        b.extend_from_slice(&[0; 4]);
        d.write_text(b);
        let len = (b.len() - at - 4) as i32;
        b[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }
}
