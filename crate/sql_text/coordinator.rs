//! The SQL a real PostgreSQL coordinator runs for a built-in scenario, over the
//! foreign tables `pgasync demo` creates from the same plan (`CREATE FOREIGN TABLE
//! <relation> … SERVER <server> OPTIONS (table_name '<remote table>')`): the "PostgreSQL
//! says" panel and the live benchmark compare the sandbox with it.
//!
//! Only plan shapes whose SQL makes PostgreSQL choose the same plan are written here:
//! `sum(a)` over one foreign table (C) or over an Append of foreign tables as UNION ALL
//! (D, E, F, G, pf1 — seed 001's query). M (MergeAppend under LIMIT) and X
//! (partitionwise aggregate over a local and a foreign partition) need partitioned
//! tables on the coordinator: that is the SQL front end's work (issue 9).

use super::load::sql_type;
use super::{quote_identifier, quote_literal};
use crate::plan::{AggFunc, Expr, Plan, RemoteTarget};
use crate::scenario::Scenario;

/// The query, or None when this module cannot write one PostgreSQL would plan alike.
pub fn coordinator_query(sc: &Scenario) -> Option<String> {
    let Plan::Agg { child, group_by, aggs, .. } = &sc.plan else { return None };
    if !group_by.is_empty() || aggs.len() != 1 || aggs[0].func != AggFunc::Sum {
        return None;
    }
    let Some(Expr::Col(col)) = &aggs[0].arg else { return None };
    let branches = match child.as_ref() {
        Plan::ForeignScan(fs) => vec![fs],
        Plan::Append { children } => children
            .iter()
            .map(|c| if let Plan::ForeignScan(fs) = c { Some(fs) } else { None })
            .collect::<Option<_>>()?,
        _ => return None,
    };
    let first = branches.first()?;
    let name = match first.remote.targets.get(*col)? {
        RemoteTarget::Col(i) => quote_identifier(&first.remote.table_columns.get(*i)?.name),
        RemoteTarget::Agg(..) => return None,
    };
    if branches.len() == 1 {
        return Some(format!("SELECT sum({name}) FROM {}", quote_identifier(&first.relation)));
    }
    let parts: Vec<String> =
        branches.iter().map(|fs| format!("SELECT {name} FROM {}", quote_identifier(&fs.relation))).collect();
    Some(format!("SELECT sum({name}) FROM ({}) s", parts.join(" UNION ALL ")))
}

/// The coordinator's side of a scenario: postgres_fdw, one server per foreign server
/// of the scenario (`async_capable`, the scenario's `fetch_size`), a user mapping to
/// the read-only role `user` (trust authentication on the shards, so no password even
/// for a coordinator user that is not a superuser), and a foreign table per ForeignScan
/// of the plan. `addr`
/// gives each server's host and port; `dbname` is the shards' database.
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
    for fs in foreign_scans(&sc.plan) {
        let spec = sc.servers.iter().find(|s| s.server.name == fs.server);
        let Some(table) = spec.and_then(|s| s.catalog.get(&fs.remote.table)) else { continue };
        let cols: Vec<String> = table.columns.iter().map(|c| format!("{} {}", q(&c.name), sql_type(c.ty))).collect();
        sql.push_str(&format!(
            "CREATE FOREIGN TABLE IF NOT EXISTS {} ({}) SERVER {} OPTIONS (schema_name 'public', table_name {});\n",
            q(&fs.relation),
            cols.join(", "),
            q(&fs.server),
            lit(&fs.remote.table)
        ));
    }
    sql
}


/// The plan's ForeignScans, in plan order.
fn foreign_scans(plan: &Plan) -> Vec<&crate::plan::ForeignScanPlan> {
    match plan {
        Plan::ForeignScan(fs) => vec![fs],
        p => p.children().into_iter().flat_map(foreign_scans).collect(),
    }
}
