//! A simulated shard's tables as SQL a real PostgreSQL server loads with psql: the
//! same columns, rows and indexes, so a live run (TCP host, relay) reads exactly the
//! data the simulator holds. Used by the tests against real shards, the CLI (`pgasync
//! demo`, `sql`, `calibrate`) and the relay's `/sql/load` (a page's scenario file).
//!
//! Names come from a scenario file a stranger may have written: every table and column
//! name is written as PostgreSQL's `quote_identifier` writes it (as the remote queries
//! name them), and values only as COPY data lines with their escapes, so nothing in a
//! name or value can end a statement or a data line.
//!
//! Invariants:
//! - Column types are the ones whose text the client parses back as the sandbox's
//!   (`sql_type`, `ColType::oid`): bigint, numeric, double precision, text.
//! - Rows are written in the table's storage order, and each table is dropped and
//!   created anew, so a load leaves exactly the simulator's rows (and a fresh heap in
//!   that order); indexes are built and `ANALYZE` run after the rows, as the planner's
//!   statistics need.
//! - A value is written as PostgreSQL's output function prints it (a numeric exactly,
//!   with its display scale; a float8 as `float8out`, which reads back as the same `f64`).
//! - `reader` is written as given: a fixed role name of the caller's (`remote::USER`
//!   in the CLI), never a name from a scenario file.
//!
//! PostgreSQL has no counterpart in the server: the script is shaped like `pg_dump`'s
//! for a table (CREATE TABLE, `COPY … FROM stdin` ended by `\.`, CREATE INDEX), plus
//! ANALYZE and the reader's role and grant.

use super::quote_identifier;
use crate::types::{Catalog, ColType, Datum, Table};

/// The column type PostgreSQL must have so its answers parse as ours (`ColType::oid`).
pub fn sql_type(t: ColType) -> &'static str {
    match t {
        ColType::Int => "bigint",
        ColType::Float => "double precision",
        ColType::Numeric => "numeric",
        ColType::Text => "text",
        ColType::Bool => "boolean",
    }
}

/// `CREATE TABLE`, `COPY … FROM stdin` with every row, the indexes, `ANALYZE`, and
/// SELECT for `reader` (a read-only role, created if missing).
pub fn load_sql(catalog: &Catalog, reader: &str) -> String {
    let mut sql =
        format!("DO $$ BEGIN CREATE ROLE {reader} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;\n");
    for t in &catalog.tables {
        table_sql(t, reader, &mut sql);
    }
    sql
}

fn table_sql(t: &Table, reader: &str, sql: &mut String) {
    let name = quote_identifier(&t.name);
    let cols: Vec<String> =
        t.columns.iter().map(|c| format!("{} {}", quote_identifier(&c.name), sql_type(c.ty))).collect();
    sql.push_str(&format!("DROP TABLE IF EXISTS {name};\nCREATE TABLE {name} ({});\n", cols.join(", ")));
    sql.push_str(&format!("COPY {name} FROM stdin;\n"));
    let mut line = Vec::new();
    for i in 0..t.nrows() {
        line.clear();
        for (j, d) in t.row(i).iter().enumerate() {
            if j > 0 {
                line.push(b'\t');
            }
            copy_value(d, &mut line);
        }
        sql.push_str(&String::from_utf8_lossy(&line));
        sql.push('\n');
    }
    sql.push_str("\\.\n");
    for ix in &t.indexes {
        sql.push_str(&format!("CREATE INDEX ON {name} ({});\n", quote_identifier(&t.columns[ix.column].name)));
    }
    sql.push_str(&format!("ANALYZE {name};\nGRANT SELECT ON {name} TO {reader};\n"));
}

/// A value in COPY's text format: `\N` for NULL; backslash, tab and newlines escaped.
fn copy_value(d: &Datum, out: &mut Vec<u8>) {
    if d.is_null() {
        out.extend_from_slice(b"\\N");
        return;
    }
    let mut text = Vec::new();
    d.write_text(&mut text);
    for b in text {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
}
