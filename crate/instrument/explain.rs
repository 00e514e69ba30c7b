//! EXPLAIN ANALYZE output in PostgreSQL's TEXT and JSON formats.
//!
//! Costs are not modelled, so the output looks like `EXPLAIN (ANALYZE, COSTS OFF)`.
//! Async counters (our addition) print as one extra line per async-capable node in
//! TEXT and as extra keys in JSON, so the JSON still pastes into EXPLAIN visualizers.

use super::Instrumentation;
use serde_json::{json, Map, Value};

/// A node as EXPLAIN shows it; built by the executor from its state tree.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ExplainNode {
    pub id: usize,
    /// PostgreSQL's node type name: "Append", "Foreign Scan", "Seq Scan", ...
    pub node_type: String,
    /// Async Foreign Scan (PostgreSQL prints the "Async" prefix in TEXT, "Async Capable" in JSON).
    pub async_capable: bool,
    /// "Plain", "Hashed" for Aggregate.
    pub strategy: Option<String>,
    pub relation: Option<String>,
    /// "Outer", "Inner" or "Member", as in PostgreSQL's JSON.
    pub parent_relationship: Option<String>,
    /// Extra properties in order, e.g. ("Remote SQL", "SELECT a FROM t1").
    pub details: Vec<(String, String)>,
    pub instr: Instrumentation,
    pub children: Vec<ExplainNode>,
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn per_loop(ns: u64, loops: u64) -> f64 {
    ms(ns) / loops.max(1) as f64
}

fn title(n: &ExplainNode) -> String {
    let mut t = String::new();
    if n.async_capable {
        t.push_str("Async ");
    }
    match (n.node_type.as_str(), n.strategy.as_deref()) {
        ("Aggregate", Some("Hashed")) => t.push_str("HashAggregate"),
        (ty, _) => t.push_str(ty),
    }
    if let Some(r) = &n.relation {
        t.push_str(" on ");
        t.push_str(r);
    }
    t
}

fn actual(i: &Instrumentation) -> String {
    if i.nloops == 0 {
        return "(never executed)".to_string();
    }
    format!(
        "(actual time={:.3}..{:.3} rows={} loops={})",
        per_loop(i.startup_ns, i.nloops),
        per_loop(i.total_ns, i.nloops),
        (i.ntuples as f64 / i.nloops as f64).round() as u64,
        i.nloops
    )
}

/// Our remote counters (every foreign scan) and async counters (async-capable ones).
fn remote_lines(n: &ExplainNode, i: &Instrumentation) -> Vec<String> {
    let r = &i.remote;
    let mut lines = vec![format!(
        "Remote: batches={} round trips={} bytes sent={} received={}",
        r.batches, r.round_trips, r.bytes_sent, r.bytes_received
    )];
    if n.async_capable {
        lines.push(format!("Async: requests={} waits={} wait time={:.3} ms", r.requests, r.waits, ms(r.wait_ns)));
    }
    lines
}

fn is_remote(n: &ExplainNode) -> bool {
    n.node_type == "Foreign Scan"
}

fn write_text(n: &ExplainNode, depth: usize, out: &mut String) {
    let indent = if depth == 0 { String::new() } else { " ".repeat(6 * (depth - 1) + 2) };
    let detail_indent = if depth == 0 { "  ".to_string() } else { " ".repeat(6 * depth + 2) };
    let arrow = if depth == 0 { "" } else { "->  " };
    let inst = n.instr.finished();
    out.push_str(&format!("{indent}{arrow}{}  {}\n", title(n), actual(&inst)));
    for (k, v) in &n.details {
        out.push_str(&format!("{detail_indent}{k}: {v}\n"));
    }
    if is_remote(n) && inst.nloops > 0 {
        for line in remote_lines(n, &inst) {
            out.push_str(&format!("{detail_indent}{line}\n"));
        }
    }
    for c in &n.children {
        write_text(c, depth + 1, out);
    }
}

/// PostgreSQL's TEXT format, followed by the execution time line.
pub fn explain_text(root: &ExplainNode, execution_ns: u64) -> String {
    let mut out = String::new();
    write_text(root, 0, &mut out);
    out.push_str(&format!("Execution Time: {:.3} ms\n", ms(execution_ns)));
    out
}

fn json_node(n: &ExplainNode) -> Value {
    let inst = n.instr.finished();
    let mut m = Map::new();
    m.insert("Node Type".into(), json!(n.node_type));
    if let Some(s) = &n.strategy {
        m.insert("Strategy".into(), json!(s));
    }
    if let Some(p) = &n.parent_relationship {
        m.insert("Parent Relationship".into(), json!(p));
    }
    m.insert("Async Capable".into(), json!(n.async_capable));
    if let Some(r) = &n.relation {
        m.insert("Relation Name".into(), json!(r));
        m.insert("Alias".into(), json!(r));
    }
    m.insert("Actual Startup Time".into(), json!(round3(per_loop(inst.startup_ns, inst.nloops))));
    m.insert("Actual Total Time".into(), json!(round3(per_loop(inst.total_ns, inst.nloops))));
    m.insert("Actual Rows".into(), json!((inst.ntuples as f64 / inst.nloops.max(1) as f64).round() as u64));
    m.insert("Actual Loops".into(), json!(inst.nloops));
    for (k, v) in &n.details {
        m.insert(k.clone(), json!(v));
    }
    if is_remote(n) {
        let r = &inst.remote;
        m.insert("Async Requests".into(), json!(r.requests));
        m.insert("Async Waits".into(), json!(r.waits));
        m.insert("Async Wait Time".into(), json!(round3(ms(r.wait_ns))));
        m.insert("Remote Batches".into(), json!(r.batches));
        m.insert("Remote Round Trips".into(), json!(r.round_trips));
        m.insert("Remote Bytes Sent".into(), json!(r.bytes_sent));
        m.insert("Remote Bytes Received".into(), json!(r.bytes_received));
    }
    if !n.children.is_empty() {
        m.insert("Plans".into(), Value::Array(n.children.iter().map(json_node).collect()));
    }
    Value::Object(m)
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// PostgreSQL's JSON format: `[{"Plan": {...}, "Execution Time": ...}]`.
pub fn explain_json(root: &ExplainNode, execution_ns: u64) -> Value {
    json!([{ "Plan": json_node(root), "Planning Time": 0.0, "Execution Time": round3(ms(execution_ns)) }])
}
