// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! The SQL front end against real PostgreSQL 15 (issue 9): seed 003's and seed 004's
//! setup and query, as the threads give them (crate/coordinator_sql/scenarios/m.sql, seed004.sql),
//! run by the sandbox and by real clusters this test starts (a coordinator with
//! postgres_fdw and one cluster per `-- @shard` section):
//!
//! - the sandbox's EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) equals PostgreSQL's line for
//!   line, times masked (and the HashAggregate's `Batches: … Memory Usage: …` line,
//!   which the sandbox does not print);
//! - EXPLAIN without ANALYZE (COSTS OFF; plain, VERBOSE, with SETTINGS, and FORMAT
//!   JSON) equals PostgreSQL's exactly: planned, not run, and nothing sent to a shard;
//! - every shard table holds PostgreSQL's rows (hash routing and random() as in
//!   PostgreSQL);
//! - the rows are PostgreSQL's: as multisets, or for ORDER BY the same sort keys in the
//!   same order with ties compared as multisets inside the window (SQL leaves the order
//!   of ties open, and the two shards' sorts break them differently).
//!
//! Each script's `CREATE SERVER` is followed, on real PostgreSQL only, by
//! `ALTER SERVER … OPTIONS (… port '<the cluster's>', … host '127.0.0.1')`: the only
//! departure from the files' text (tests/support/sqlfile.rs).

mod support;

use pgasync::clock::Clock;
use pgasync::coordinator_sql::catalog::RelKind;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::{explain_doc_json_text, explain_doc_text, ExplainOptions};
use pgasync::knobs::Knobs;
use pgasync::knobs::Source;
use support::pg::*;
use support::sqlfile::{coordinator_sets, mask, parse_rows, run_on_postgres};

fn check_seed(file: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    let sql = SqlScenario::load(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    let query = sql.query.clone().expect("a query section").sql;
    let query = query.trim().trim_end_matches(';').to_string();

    // The sandbox, in its default (pg15) behaviour and the file's mode.
    let scenario = sql.scenario(&Knobs::default(), Source::Json).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut run = scenario.start(sql.async_append(), Clock::virtual_clock(), false).unwrap();
    run.keep_rows = true;
    run.run_to_end().unwrap_or_else(|e| panic!("{file}: the sandbox's run failed: {e}"));
    let ours = run.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE);

    let dir = TempDir::new("sqlseed");
    let clusters = run_on_postgres(&text, &dir);
    let coord = &clusters["coordinator"];

    // Every shard table holds exactly PostgreSQL's rows: hash routing put each row in
    // the partition PostgreSQL chose, and random() gave the same values.
    for node in sql.cluster.nodes.iter().skip(1) {
        for rel in &node.relations {
            let RelKind::Table(t) = &rel.kind else { continue };
            let mut ours: Vec<String> =
                (0..t.nrows()).map(|i| t.row(i).iter().map(|d| d.to_string()).collect::<Vec<_>>().join("|")).collect();
            ours.sort();
            let mut theirs: Vec<String> =
                clusters[&node.name].psql(&format!("SELECT * FROM {}", rel.name)).lines().map(str::to_string).collect();
            theirs.sort();
            assert_eq!(ours.len(), theirs.len(), "{file}: {}.{}: row count", node.name, rel.name);
            assert!(ours == theirs, "{file}: {}.{}: rows differ from PostgreSQL's", node.name, rel.name);
        }
    }
    // The script's SETs last for its session: the query's session makes them again.
    let sets = coordinator_sets(&text);
    let query = format!("{sets}{query}");
    let theirs = coord.psql(&format!("{sets}EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) {}", &query[sets.len()..]));
    assert_eq!(mask(&ours), mask(&theirs), "{file}: EXPLAIN differs\n--- sandbox\n{ours}\n--- PostgreSQL\n{theirs}");

    // EXPLAIN without ANALYZE: the plan only, nothing run; PostgreSQL's text exactly.
    for options in [
        "COSTS OFF",
        "VERBOSE, COSTS OFF",
        "COSTS OFF, SETTINGS",
        "VERBOSE, COSTS OFF, FORMAT JSON",
        "COSTS OFF, SETTINGS, FORMAT JSON",
    ] {
        let explain = format!("EXPLAIN ({options}) {}", &query[sets.len()..]);
        let s = sql.with_query(&format!("{explain};")).unwrap_or_else(|e| panic!("{file}: {explain}: {e}"));
        assert!(s.is_plan_only());
        let run = s.plan_only_run(&Knobs::default(), Source::Json, sql.async_append()).unwrap();
        // Initialized, never polled: no shard received a statement.
        assert!(run.host.link_stats().iter().all(|l| l.queries == 0 && l.fetches == 0), "{file}: {explain}: sent");
        let tree = run.explain();
        let opts = ExplainOptions { verbose: options.contains("VERBOSE"), counters: false };
        let ours = if options.contains("JSON") {
            explain_doc_json_text(&tree, &opts, &s.explain_doc(), 0, 0)
        } else {
            explain_doc_text(&tree, &opts, &s.explain_doc(), 0, 0)
        };
        let theirs = coord.psql(&format!("{sets}{explain}"));
        assert_eq!(
            ours.trim_end(),
            theirs.trim_end(),
            "{file}: {explain} differs\n--- sandbox\n{ours}\n--- PostgreSQL\n{theirs}"
        );
    }

    let pg_rows = parse_rows(&coord.psql(&query));
    let our_rows: Vec<Vec<String>> = run.rows.iter().map(|r| r.iter().map(|d| d.to_string()).collect()).collect();
    assert_eq!(our_rows.len(), pg_rows.len(), "{file}: row count");
    match scenario.order_key {
        Some(k) => {
            let keys = |v: &[Vec<String>]| v.iter().map(|r| r[k].clone()).collect::<Vec<_>>();
            assert_eq!(keys(&our_rows), keys(&pg_rows), "{file}: the sort keys differ");
            let (first, last) = (pg_rows.first().map(|r| r[k].clone()), pg_rows.last().map(|r| r[k].clone()));
            let inner = |v: &[Vec<String>]| {
                let mut w: Vec<Vec<String>> = v
                    .iter()
                    .filter(|r| Some(&r[k]) != first.as_ref() && Some(&r[k]) != last.as_ref())
                    .cloned()
                    .collect();
                w.sort();
                w
            };
            assert_eq!(inner(&our_rows), inner(&pg_rows), "{file}: rows inside the window differ");
            // Every row, ties included, must be one of PostgreSQL's table's rows.
            for r in &our_rows {
                let id = &r[0];
                let found = coord.psql(&format!(
                    "SELECT count(*) FROM players WHERE id = {id} AND name = '{}' AND score = {}",
                    r[1], r[2]
                ));
                assert_eq!(found.trim(), "1", "{file}: row {r:?} is not in PostgreSQL's table");
            }
        }
        None => {
            let (mut a, mut b) = (our_rows, pg_rows);
            a.sort();
            b.sort();
            assert_eq!(a, b, "{file}: rows differ");
        }
    }
}

#[test]
fn seed_003_async_merge_append_script_runs_as_in_postgres() {
    check_seed("crate/coordinator_sql/scenarios/m.sql");
}

#[test]
fn seed_004_partitionwise_aggregate_script_runs_as_in_postgres() {
    check_seed("crate/coordinator_sql/scenarios/x.sql");
}
