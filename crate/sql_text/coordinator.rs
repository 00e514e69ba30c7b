//! The SQL a real PostgreSQL coordinator runs for a built-in scenario, over the
//! tables `pgasync demo` creates from the same plan (`coordinator_ddl`): the "PostgreSQL
//! says" panel, the live benchmark and the tests against real coordinators compare the
//! sandbox with it.
//!
//! Invariants: a query is written only for a plan shape whose SQL makes PostgreSQL 15
//! choose the same plan (checked with EXPLAIN on a real coordinator by
//! `cli/tests/live_scenarios.rs` and `tests/live_native.rs`), else None; the DDL makes
//! exactly the relations that query names. The shapes ([`Shape`]):
//! * `sum(col)` over one foreign table (C) or over an Append of foreign tables, written
//!   as UNION ALL (D, E, F, G, pf1 — seed 001's query);
//! * LIMIT/OFFSET over a MergeAppend of foreign partitions sorted remotely (M, seed
//!   003): a table partitioned by hash of its first column, one foreign partition per
//!   child in child order (remainder k for child k, so PostgreSQL's partition order is
//!   the plan's);
//! * a partitionwise aggregate (X, seed 004): an Append of a foreign partition's
//!   pushed-down aggregate and local partitions' own aggregates, written as the grouped
//!   query over a table partitioned by range of the grouping column, the local
//!   partitions created with their rows, and `enable_partitionwise_aggregate = on` for
//!   the database (`ALTER DATABASE … SET`: seed 004's `set enable_partitionwise_aggregate
//!   to on`, a setting the SQL front end's planner honours too).
//!
//! Departures from PostgreSQL's own setup: the rows of M's partitions are placed by the
//! sandbox (id modulo the partitions), not by PostgreSQL's hash; the query has no WHERE
//! clause, so no partition is pruned and the plan does not depend on it. X's range
//! bounds are the smallest and largest key each partition holds (seed 004's
//! `from (10) to (20)`, `from (20) to (30)` for its data).

use super::load::{load_sql, sql_type};
use super::{quote_identifier, quote_literal};
use crate::plan::{AggCall, AggFunc, Expr, ForeignScanPlan, Plan, RemoteQuery, RemoteTarget, SortKey};
use crate::scenario::Scenario;
use crate::types::{Catalog, Column, Table};
use std::rc::Rc;

/// A plan shape this module writes SQL for.
enum Shape<'a> {
    /// `sum(col)` over the foreign tables `scans` (one: no UNION ALL).
    Sum { col: String, scans: Vec<&'a ForeignScanPlan> },
    /// Limit over a MergeAppend of the foreign partitions `scans` of `parent`.
    MergeLimit { parent: String, scans: Vec<&'a ForeignScanPlan>, keys: &'a [SortKey], offset: u64, count: u64 },
    /// A partitionwise aggregate over `parent`'s partitions, in the plan's (and the
    /// range bounds') order, grouped by the column `key`.
    Partitionwise { parent: String, columns: Vec<Column>, key: String, aggs: Vec<String>, parts: Vec<Part<'a>> },
}

/// One partition of a partitionwise aggregate, with its range bound `[lo, hi)`.
struct Part<'a> {
    kind: PartKind<'a>,
    lo: i64,
    hi: i64,
}

enum PartKind<'a> {
    Foreign(&'a ForeignScanPlan),
    Local(Rc<Table>),
}

/// The query, or None when this module cannot write one PostgreSQL would plan alike.
pub fn coordinator_query(sc: &Scenario) -> Option<String> {
    let q = quote_identifier;
    Some(match shape(sc)? {
        Shape::Sum { col, scans } => {
            if scans.len() == 1 {
                format!("SELECT sum({col}) FROM {}", q(&scans[0].relation))
            } else {
                let parts: Vec<String> =
                    scans.iter().map(|fs| format!("SELECT {col} FROM {}", q(&fs.relation))).collect();
                format!("SELECT sum({col}) FROM ({}) s", parts.join(" UNION ALL "))
            }
        }
        Shape::MergeLimit { parent, scans, keys, offset, count } => {
            let cols = &scans[0].remote.table_columns;
            let order: Vec<String> = keys
                .iter()
                .map(|k| {
                    let Expr::Col(c) = k.expr else { unreachable!("shape checks the keys") };
                    format!("{}{}", q(&cols[c].name), if k.desc { " DESC" } else { "" })
                })
                .collect();
            format!("SELECT * FROM {} ORDER BY {} OFFSET {offset} LIMIT {count}", q(&parent), order.join(", "))
        }
        Shape::Partitionwise { parent, key, aggs, .. } => {
            format!("SELECT {}, {} FROM {} GROUP BY {}", q(&key), aggs.join(", "), q(&parent), q(&key))
        }
    })
}

/// The coordinator's side of a scenario: postgres_fdw, one server per foreign server
/// of the scenario (`async_capable`, the scenario's `fetch_size`), a user mapping to
/// the read-only role `user` (trust authentication on the shards, so no password even
/// for a coordinator user that is not a superuser), and the relations
/// [`coordinator_query`] names: a foreign table per ForeignScan of the plan, or, for M
/// and X, the partitioned table with its foreign partitions (and X's local partitions
/// with their rows, and its setting). `addr` gives each server's host and port;
/// `dbname` is the shards' database. Run by a superuser (X's `ALTER DATABASE`).
pub fn coordinator_ddl(sc: &Scenario, addr: impl Fn(&str) -> (String, u16), dbname: &str, user: &str) -> String {
    // Names and option values may come from a page's scenario file (the relay's
    // `/sql/load`): identifiers quoted as PostgreSQL quotes them, values as literals.
    let (q, lit) = (quote_identifier, quote_literal);
    let mut sql = String::from("CREATE EXTENSION IF NOT EXISTS postgres_fdw;\n");
    for spec in &sc.servers {
        let (host, port) = addr(&spec.server.name);
        sql.push_str(&format!(
            "CREATE SERVER {s} FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host {h}, port '{port}', \
             dbname {d}, async_capable 'true', fetch_size '{f}');\n\
             CREATE USER MAPPING FOR PUBLIC SERVER {s} OPTIONS (user {u}, password_required 'false');\n",
            s = q(&spec.server.name),
            h = lit(&host),
            d = lit(dbname),
            u = lit(user),
            f = spec.server.options.fetch_size
        ));
    }
    // `SERVER s OPTIONS (schema_name 'public', table_name 't')`.
    let on_server = |fs: &ForeignScanPlan| {
        format!("SERVER {} OPTIONS (schema_name 'public', table_name {})", q(&fs.server), lit(&fs.remote.table))
    };
    match shape(sc) {
        Some(Shape::MergeLimit { parent, scans, .. }) => {
            let cols = &scans[0].remote.table_columns;
            sql.push_str(&format!(
                "CREATE TABLE IF NOT EXISTS {} ({}) PARTITION BY HASH ({});\n",
                q(&parent),
                column_list(cols),
                q(&cols[0].name)
            ));
            for (k, fs) in scans.iter().enumerate() {
                sql.push_str(&format!(
                    "CREATE FOREIGN TABLE IF NOT EXISTS {} PARTITION OF {} FOR VALUES WITH (MODULUS {}, REMAINDER {k}) {};\n",
                    q(&fs.relation),
                    q(&parent),
                    scans.len(),
                    on_server(fs)
                ));
            }
        }
        Some(Shape::Partitionwise { parent, columns, key, parts, .. }) => {
            let locals: Vec<Rc<Table>> = parts
                .iter()
                .filter_map(|p| if let PartKind::Local(t) = &p.kind { Some(t.clone()) } else { None })
                .collect();
            sql.push_str(&load_sql(&Catalog { tables: locals }, user));
            sql.push_str(&format!(
                "CREATE TABLE IF NOT EXISTS {} ({}) PARTITION BY RANGE ({});\n",
                q(&parent),
                column_list(&columns),
                q(&key)
            ));
            for p in &parts {
                let bound = format!("FOR VALUES FROM ({}) TO ({})", p.lo, p.hi);
                sql.push_str(&match &p.kind {
                    PartKind::Foreign(fs) => format!(
                        "CREATE FOREIGN TABLE IF NOT EXISTS {} PARTITION OF {} {bound} {};\n",
                        q(&fs.relation),
                        q(&parent),
                        on_server(fs)
                    ),
                    PartKind::Local(t) => {
                        format!("ALTER TABLE {} ATTACH PARTITION {} {bound};\n", q(&parent), q(&t.name))
                    }
                });
            }
            // For every session on this database (the panel runs the query alone).
            sql.push_str(
                "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET enable_partitionwise_aggregate = on', \
                 current_database()); END $$;\n",
            );
        }
        _ => {
            for fs in foreign_scans(&sc.plan) {
                let spec = sc.servers.iter().find(|s| s.server.name == fs.server);
                let Some(table) = spec.and_then(|s| s.catalog.get(&fs.remote.table)) else { continue };
                sql.push_str(&format!(
                    "CREATE FOREIGN TABLE IF NOT EXISTS {} ({}) {};\n",
                    q(&fs.relation),
                    column_list(&table.columns),
                    on_server(fs)
                ));
            }
        }
    }
    sql
}

/// `name type, …` as CREATE TABLE lists them.
fn column_list(cols: &[Column]) -> String {
    cols.iter().map(|c| format!("{} {}", quote_identifier(&c.name), sql_type(c.ty))).collect::<Vec<_>>().join(", ")
}

/// The plan's ForeignScans, in plan order.
fn foreign_scans(plan: &Plan) -> Vec<&ForeignScanPlan> {
    match plan {
        Plan::ForeignScan(fs) => vec![fs],
        p => p.children().into_iter().flat_map(foreign_scans).collect(),
    }
}

fn shape(sc: &Scenario) -> Option<Shape<'_>> {
    match &sc.plan {
        Plan::Agg { child, group_by, aggs, .. } => sum_shape(child, group_by, aggs),
        Plan::Limit { child, offset, count: Some(count) } => merge_shape(child, *offset, *count),
        Plan::Append { children, .. } => partitionwise_shape(sc, children),
        _ => None,
    }
}

/// A remote query that reads its table as it is: no WHERE, grouping, order or limit.
fn plain(r: &RemoteQuery) -> bool {
    r.quals.is_empty()
        && r.group_by.is_empty()
        && r.having.is_empty()
        && r.order_by.is_empty()
        && r.limit.is_none()
        && r.offset.is_none()
}

/// `sum(col)` over a foreign table or an Append of plain scans of the same column.
fn sum_shape<'a>(child: &'a Plan, group_by: &[Expr], aggs: &[AggCall]) -> Option<Shape<'a>> {
    if !group_by.is_empty() || aggs.len() != 1 || aggs[0].func != AggFunc::Sum {
        return None;
    }
    let Some(Expr::Col(col)) = &aggs[0].arg else { return None };
    let scans: Vec<&ForeignScanPlan> = match child {
        Plan::ForeignScan(fs) => vec![fs],
        Plan::Append { children, .. } => children
            .iter()
            .map(|c| if let Plan::ForeignScan(fs) = c { Some(fs) } else { None })
            .collect::<Option<_>>()?,
        _ => return None,
    };
    let name_of = |fs: &ForeignScanPlan| match fs.remote.targets.get(*col)? {
        RemoteTarget::Col(i) => Some(fs.remote.table_columns.get(*i)?.name.clone()),
        RemoteTarget::Agg(..) | RemoteTarget::Const(_) => None,
    };
    let name = name_of(scans.first()?)?;
    for fs in &scans {
        if !plain(&fs.remote) || name_of(fs).as_ref() != Some(&name) {
            return None;
        }
    }
    Some(Shape::Sum { col: quote_identifier(&name), scans })
}

/// M: Limit over a MergeAppend of foreign partitions of one parent, each reading all
/// its columns sorted remotely by the MergeAppend's keys (no LIMIT pushed: PostgreSQL
/// 15 pushes none into a partition under a Merge Append).
fn merge_shape(child: &Plan, offset: u64, count: u64) -> Option<Shape<'_>> {
    let Plan::MergeAppend { children, keys, .. } = child else { return None };
    let scans: Vec<&ForeignScanPlan> =
        children.iter().map(|c| if let Plan::ForeignScan(fs) = c { Some(fs) } else { None }).collect::<Option<_>>()?;
    let first = scans.first()?;
    let parent = first.alias.as_ref()?.parent.clone()?;
    let cols = &first.remote.table_columns;
    let all: Vec<RemoteTarget> = (0..cols.len()).map(RemoteTarget::Col).collect();
    if keys.is_empty() || !keys.iter().all(|k| matches!(k.expr, Expr::Col(c) if c < cols.len())) {
        return None;
    }
    for fs in &scans {
        let r = &fs.remote;
        let sorted_only = RemoteQuery { order_by: vec![], ..r.clone() };
        let same_parent = fs.alias.as_ref().and_then(|a| a.parent.as_ref()) == Some(&parent);
        if !same_parent || r.table_columns != *cols || r.targets != all || r.order_by != *keys || !plain(&sorted_only) {
            return None;
        }
    }
    Some(Shape::MergeLimit { parent, scans, keys, offset, count })
}

/// X: an Append whose children each aggregate one partition, grouped by the same
/// column: a foreign partition's pushed-down aggregate, or a local partition's own
/// Agg over its SeqScan. The parent is named as PostgreSQL's EXPLAIN names the
/// partitions (`pt`, `pt_1`, …: the parent's name, then with `_N`).
fn partitionwise_shape<'a>(sc: &'a Scenario, children: &'a [Plan]) -> Option<Shape<'a>> {
    if children.len() < 2 {
        return None;
    }
    let q = quote_identifier;
    let agg_text = |func: AggFunc, arg: Option<&Column>| match (func, arg) {
        (AggFunc::CountStar, None) => Some("count(*)".to_string()),
        (AggFunc::CountStar, Some(_)) | (_, None) => None,
        (f, Some(c)) => Some(format!("{}({})", f.name(), q(&c.name))),
    };
    // Per child: (alias, columns, key, aggregates, table with the rows, kind).
    let mut found = vec![];
    for c in children {
        match c {
            Plan::ForeignScan(fs) => {
                let r = &fs.remote;
                let [g] = r.group_by[..] else { return None };
                let grouped_only = RemoteQuery { group_by: vec![], targets: vec![], ..r.clone() };
                if !plain(&grouped_only) || r.targets.first() != Some(&RemoteTarget::Col(g)) {
                    return None;
                }
                let aggs = r.targets[1..]
                    .iter()
                    .map(|t| match t {
                        RemoteTarget::Agg(f, arg, false) => {
                            agg_text(*f, arg.map(|i| r.table_columns.get(i)).unwrap_or(None))
                        }
                        RemoteTarget::Agg(_, _, true) => None,
                        RemoteTarget::Col(_) | RemoteTarget::Const(_) => None,
                    })
                    .collect::<Option<Vec<String>>>()?;
                let spec = sc.servers.iter().find(|s| s.server.name == fs.server)?;
                let table = spec.catalog.get(&r.table)?.clone();
                let key = r.table_columns.get(g)?.name.clone();
                let alias = fs.alias.as_ref()?.alias.clone();
                found.push((alias, r.table_columns.clone(), key, aggs, table, PartKind::Foreign(fs)));
            }
            Plan::Agg { child, group_by, aggs, .. } => {
                let Plan::SeqScan { table, columns, alias } = child.as_ref() else { return None };
                let [Expr::Col(g)] = group_by[..] else { return None };
                let aggs = aggs
                    .iter()
                    .map(|a| match &a.arg {
                        None => agg_text(a.func, None),
                        Some(Expr::Col(i)) => agg_text(a.func, Some(columns.get(*i)?)),
                        Some(_) => None,
                    })
                    .collect::<Option<Vec<String>>>()?;
                let t = sc.local.get(table)?.clone();
                let key = columns.get(g)?.name.clone();
                let alias = alias.as_ref()?.alias.clone();
                found.push((alias, t.columns.clone(), key, aggs, t.clone(), PartKind::Local(t)));
            }
            _ => return None,
        }
    }
    let (_, columns, key, aggs, _, _) = &found[0];
    let (columns, key, aggs) = (columns.clone(), key.clone(), aggs.clone());
    let parent = found.iter().map(|f| f.0.clone()).min_by_key(|a| a.len())?;
    let mut parts = vec![];
    for (alias, cols, k, a, table, kind) in found {
        let numbered = alias.strip_prefix(&format!("{parent}_")).is_some_and(|n| n.parse::<u32>().is_ok());
        if (alias != parent && !numbered) || cols != columns || k != key || a != aggs {
            return None;
        }
        // The partition's range: its smallest and largest key, as integers.
        let kc = table.columns.iter().position(|c| c.name == key)?;
        let keys = (0..table.nrows()).map(|i| table.row(i)[kc].as_int()).collect::<Option<Vec<i64>>>()?;
        let (lo, hi) = (*keys.iter().min()?, *keys.iter().max()? + 1);
        if parts.last().is_some_and(|p: &Part| p.hi > lo) {
            return None; // PostgreSQL orders partitions by bound: the plan's order must be it
        }
        parts.push(Part { kind, lo, hi });
    }
    Some(Shape::Partitionwise { parent, columns, key, aggs, parts })
}
