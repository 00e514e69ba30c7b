//! Scenario files (`-- @coordinator`, `-- @shard NAME`, …; crate/coordinator_sql/script.rs)
//! on real PostgreSQL clusters, for the tests that compare the sandbox with them
//! (tests/sql_seeds.rs, tests/sql_corpus.rs).
//!
//! [`run_on_postgres`] starts a coordinator and one cluster per `-- @shard` section and
//! runs the setup sections in file order. Each `CREATE SERVER` is followed, on real
//! PostgreSQL only, by `ALTER SERVER … OPTIONS (… port '<the cluster's>', … host
//! '127.0.0.1')`: the only departure from the file's text.

#![allow(dead_code)]

use super::pg::{psql_bin, Cluster, TempDir};
use pgasync::coordinator_sql::script::setup_statements;
use pgasync::coordinator_sql::statement::Stmt;
use std::collections::BTreeMap;

/// PostgreSQL's side: the clusters (by node name: `coordinator` or the shard's), the
/// setup run section by section.
pub fn run_on_postgres(text: &str, dir: &TempDir) -> BTreeMap<String, Cluster> {
    let log = dir.path.join("log");
    let mut clusters: BTreeMap<String, Cluster> = BTreeMap::new();
    let sections = setup_statements(text).expect("the scenario parses");
    for (node, _) in &sections {
        if !clusters.contains_key(node) {
            clusters.insert(node.clone(), Cluster::start_in(&dir.path, node, &[], &log));
        }
    }
    for (node, stmts) in &sections {
        let mut script = String::new();
        for st in stmts {
            script.push_str(&st.text);
            script.push_str(";\n");
            if let Stmt::CreateServer { name, options, .. } = &st.stmt {
                let shard = &clusters[&name.value.to_lowercase()];
                let verb = |k: &str| if options.iter().any(|(o, _)| o == k) { "SET" } else { "ADD" };
                script.push_str(&format!(
                    "ALTER SERVER {} OPTIONS ({} port '{}', {} host '127.0.0.1');\n",
                    name.value,
                    verb("port"),
                    shard.port,
                    verb("host")
                ));
            }
        }
        clusters[node].psql_script(&script);
    }
    clusters
}

/// The setup's `SET`s on the coordinator, as `SET …; SET …; `: they last for the
/// setup's session only, so the query's session makes them again.
pub fn coordinator_sets(text: &str) -> String {
    setup_statements(text)
        .unwrap()
        .iter()
        .filter(|(node, _)| node == "coordinator")
        .flat_map(|(_, stmts)| {
            stmts.iter().filter(|st| matches!(st.stmt, Stmt::Set { .. })).map(|st| format!("{}; ", st.text))
        })
        .collect()
}

/// EXPLAIN ANALYZE text with times and the figures that depend on the machine
/// masked (and the HashAggregate's `Batches: … Memory Usage: …` line, which the
/// sandbox does not print).
pub fn mask(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("Planning Time:") || t.starts_with("Execution Time:") || t.starts_with("Batches:") {
            continue;
        }
        let mut s = String::new();
        let mut rest = line;
        while let Some(i) = rest.find("actual time=") {
            s.push_str(&rest[..i]);
            s.push_str("actual time=T");
            let after = &rest[i + "actual time=".len()..];
            rest = &after[after.find(' ').unwrap_or(after.len())..];
        }
        s.push_str(rest);
        out.push(s);
    }
    out
}

/// psql's unaligned, tuples-only output as rows of fields.
pub fn parse_rows(text: &str) -> Vec<Vec<String>> {
    text.lines().filter(|l| !l.is_empty()).map(|l| l.split('|').map(str::to_string).collect()).collect()
}

/// Runs a psql script in one session on `c` (unaligned, tuples only, quiet, errors
/// do not stop it) and returns its standard output. The script is written from a
/// thread of its own, so a long script with a long output cannot block on the pipes.
pub fn psql_session(c: &Cluster, script: &str) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(psql_bin())
        .args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=0", "-f", "-"])
        .args(["-h", "127.0.0.1", "-p", &c.port.to_string(), "-U", "postgres", "-d", "postgres"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("psql runs");
    let mut stdin = child.stdin.take().unwrap();
    let script = script.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(script.as_bytes()));
    let out = child.wait_with_output().expect("psql ends");
    writer.join().unwrap().expect("script to psql");
    assert!(out.status.success(), "psql session on {} failed: {}", c.name, String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One plan node's estimate as TEXT prints it: the line before `  (cost=`, and the
/// figures (startup, total as printed, rows, width).
#[derive(Debug)]
pub struct NodeCost {
    pub title: String,
    pub cost: String,
    pub rows: f64,
    pub width: String,
}

pub fn node_costs(text: &str) -> Vec<NodeCost> {
    text.lines()
        .filter_map(|l| {
            let i = l.find("  (cost=")?;
            let rest = &l[i + "  (cost=".len()..];
            let (cost, rest) = rest.split_once(" rows=")?;
            let (rows, rest) = rest.split_once(" width=")?;
            let width = rest.split(')').next()?.to_string();
            Some(NodeCost { title: l[..i].trim().to_string(), cost: cost.into(), rows: rows.parse().ok()?, width })
        })
        .collect()
}

/// Compares two EXPLAINs with costs node by node: None when the node lines (titles)
/// differ, else (nodes that agree to the cent on cost and width, nodes whose rows are
/// within a factor 2, nodes).
pub fn cost_agreement(ours: &str, theirs: &str) -> Option<(usize, usize, usize)> {
    let (a, b) = (node_costs(ours), node_costs(theirs));
    if a.len() != b.len() || a.iter().zip(&b).any(|(x, y)| x.title != y.title) {
        return None;
    }
    let cents = a.iter().zip(&b).filter(|(x, y)| x.cost == y.cost && x.width == y.width).count();
    let within = |x: f64, y: f64| x.max(1.0) / y.max(1.0) <= 2.0 && y.max(1.0) / x.max(1.0) <= 2.0;
    let rows = a.iter().zip(&b).filter(|(x, y)| within(x.rows, y.rows)).count();
    Some((cents, rows, b.len()))
}
