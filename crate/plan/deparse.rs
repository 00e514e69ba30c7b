//! Remote SQL generation for foreign scans (postgres_fdw's `deparse.c`, in small).
//!
//! Only what the plan marks as shippable reaches here: quals, aggregates, GROUP BY,
//! ORDER BY and LIMIT were already judged safe to push down by the planner.

use super::{RemoteQuery, RemoteTarget};

pub fn deparse_remote_query(q: &RemoteQuery) -> String {
    let names: Vec<String> = q.table_columns.iter().map(|c| c.name.clone()).collect();
    let targets: Vec<String> = q
        .targets
        .iter()
        .map(|t| match t {
            RemoteTarget::Col(c) => names[*c].clone(),
            RemoteTarget::Agg(f, None) => format!("{}(*)", f.name()),
            RemoteTarget::Agg(f, Some(c)) => format!("{}({})", f.name(), names[*c]),
        })
        .collect();
    let mut sql = format!("SELECT {} FROM {}", targets.join(", "), q.table);
    if !q.quals.is_empty() {
        let quals: Vec<String> = q.quals.iter().map(|e| e.to_sql(&names)).collect();
        sql.push_str(&format!(" WHERE {}", quals.join(" AND ")));
    }
    if !q.group_by.is_empty() {
        let g: Vec<&str> = q.group_by.iter().map(|c| names[*c].as_str()).collect();
        sql.push_str(&format!(" GROUP BY {}", g.join(", ")));
    }
    if !q.order_by.is_empty() {
        let keys: Vec<String> = q
            .order_by
            .iter()
            .map(|k| format!("{} {}", k.expr.to_sql(&names), if k.desc { "DESC" } else { "ASC" }))
            .collect();
        sql.push_str(&format!(" ORDER BY {}", keys.join(", ")));
    }
    if let Some(n) = q.limit {
        sql.push_str(&format!(" LIMIT {n}"));
    }
    sql
}
