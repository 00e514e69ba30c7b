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
//! - EXPLAIN with costs (PostgreSQL's default), as the file is and after `ANALYZE` of
//!   every coordinator relation on both sides: the test prints how many plan nodes
//!   agree with PostgreSQL's to the cent (startup and total cost, and width) and how
//!   many have estimated rows within a factor 2, and asserts what was measured (all
//!   of them: 6 nodes for seed 003, 4 for seed 004, in both states); when all agree,
//!   FORMAT JSON must equal PostgreSQL's text and EXPLAIN (ANALYZE, VERBOSE) its lines
//!   with times masked;
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
use pgasync::coordinator_sql::statement::parse_statements;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::{explain_doc_json_text, explain_doc_text, ExplainOptions};
use pgasync::knobs::Knobs;
use pgasync::knobs::Source;
use support::pg::*;
use support::sqlfile::{coordinator_sets, mask, node_costs, parse_rows, run_on_postgres, NodeCost};

/// EXPLAIN with costs (TEXT, VERBOSE) of the seed's query, by the sandbox and by
/// PostgreSQL: how many plan nodes agree to the cent on cost (startup and total), how
/// many have estimated rows within a factor 2 of PostgreSQL's, of how many. Printed,
/// and the plan shapes (node titles) must agree.
fn compare_costs(
    file: &str,
    sql: &SqlScenario,
    coord: &Cluster,
    sets: &str,
    query: &str,
    label: &str,
) -> (usize, usize, usize) {
    // The sandbox has no JIT: PostgreSQL built with LLVM adds a "JIT:" section to a
    // plan costing over jit_above_cost (100000, K's Nested Loop), so it runs without.
    let sets = &format!("SET jit = off; {sets}");
    let explain = format!("EXPLAIN (VERBOSE) {query}");
    let s = sql.with_query(&format!("{explain};")).unwrap_or_else(|e| panic!("{file}: {explain}: {e}"));
    let tree = s.plan_only(&Knobs::default(), Source::Json, sql.async_append()).unwrap();
    let doc = s.explain_doc();
    assert!(doc.costs.is_some(), "{file}: COSTS is on by default");
    let ours = explain_doc_text(&tree, &ExplainOptions::POSTGRES_VERBOSE, &doc, 0, 0);
    let theirs = coord.psql(&format!("{sets}{explain}"));
    let (a, b) = (node_costs(&ours), node_costs(&theirs));
    let titles = |v: &[NodeCost]| v.iter().map(|n| n.title.clone()).collect::<Vec<_>>();
    assert_eq!(
        titles(&a),
        titles(&b),
        "{file} ({label}): plan shapes differ\n--- sandbox\n{ours}\n--- PostgreSQL\n{theirs}"
    );
    let cents = a.iter().zip(&b).filter(|(x, y)| x.cost == y.cost && x.width == y.width).count();
    let rows = a
        .iter()
        .zip(&b)
        .filter(|(x, y)| x.rows.max(1.0) / y.rows.max(1.0) <= 2.0 && y.rows.max(1.0) / x.rows.max(1.0) <= 2.0)
        .count();
    println!(
        "{file} ({label}): {cents} of {} plan nodes agree with PostgreSQL 15 to the cent (cost and width), {rows} of {} have rows within a factor 2",
        b.len(),
        b.len()
    );
    if cents < b.len() {
        println!("--- sandbox\n{ours}--- PostgreSQL\n{theirs}");
    }
    // FORMAT JSON: PostgreSQL's text exactly, its four cost keys included.
    let explain = format!("EXPLAIN (VERBOSE, FORMAT JSON) {query}");
    let s = sql.with_query(&format!("{explain};")).unwrap();
    let tree = s.plan_only(&Knobs::default(), Source::Json, sql.async_append()).unwrap();
    let ours = explain_doc_json_text(&tree, &ExplainOptions::POSTGRES_VERBOSE, &s.explain_doc(), 0, 0);
    let theirs = coord.psql(&format!("{sets}{explain}"));
    if cents == b.len() {
        assert_eq!(ours.trim_end(), theirs.trim_end(), "{file} ({label}): {explain} differs");
    }
    // With ANALYZE: estimates beside the actual figures, times masked.
    let explain = format!("EXPLAIN (ANALYZE, VERBOSE) {query}");
    let s = sql.with_query(&format!("{explain};")).unwrap();
    let scenario = s.scenario(&Knobs::default(), Source::Json).unwrap();
    let mut run = scenario.start(sql.async_append(), Clock::virtual_clock(), false).unwrap();
    run.run_to_end().unwrap_or_else(|e| panic!("{file}: {explain}: {e}"));
    let ours = explain_doc_text(&run.explain(), &ExplainOptions::POSTGRES_VERBOSE, &s.explain_doc(), 0, 0);
    let theirs = coord.psql(&format!("{sets}{explain}"));
    assert!(ours.contains("  (cost=") && ours.contains(") (actual time="), "{file}: {ours}");
    if cents == b.len() {
        assert_eq!(
            mask(&ours),
            mask(&theirs),
            "{file} ({label}): {explain} differs\n--- sandbox\n{ours}\n--- PostgreSQL\n{theirs}"
        );
    }
    (cents, rows, b.len())
}

/// ANALYZE of every relation of the coordinator (foreign tables named, as ANALYZE
/// alone skips them), on both sides.
fn analyze_both(sql: &SqlScenario, coord: &Cluster) -> SqlScenario {
    let names: Vec<String> = sql.cluster.coordinator().relations.iter().map(|r| r.name.clone()).collect();
    let text = format!("ANALYZE {};", names.join(", "));
    let mut s = sql.clone();
    for st in parse_statements(&text, 1).unwrap() {
        s.cluster.execute(0, &st).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    coord.psql(&text);
    s
}

/// The seed's checks; `costs`: the least numbers of plan nodes whose costs agree to the
/// cent and whose rows are within a factor 2, as the file is and (if given) after
/// ANALYZE of every relation on both sides ([`compare_costs`]).
fn check_seed_with(file: &str, costs: Option<((usize, usize), Option<(usize, usize)>)>) {
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
        // Initialized, never run, no remote estimate asked: no shard received a statement.
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

    if let Some((as_is, analyzed)) = costs {
        let q = &query[sets.len()..];
        let (cents, rows, n) = compare_costs(file, &sql, coord, &sets, q, "as the file is");
        assert!(cents >= as_is.0 && rows >= as_is.1, "{file}: costs regressed: {cents}, {rows} of {n}");
        if let Some(analyzed) = analyzed {
            let analyzed_sql = analyze_both(&sql, coord);
            let (cents, rows, n) = compare_costs(file, &analyzed_sql, coord, &sets, q, "after ANALYZE");
            assert!(
                cents >= analyzed.0 && rows >= analyzed.1,
                "{file}: costs after ANALYZE regressed: {cents}, {rows} of {n}"
            );
        }
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
    check_seed_with("crate/coordinator_sql/scenarios/m.sql", Some(((6, 6), Some((6, 6)))));
}

#[test]
fn seed_004_partitionwise_aggregate_script_runs_as_in_postgres() {
    check_seed_with("crate/coordinator_sql/scenarios/x.sql", Some(((4, 4), Some((4, 4)))));
}

/// Scenario K's file (issue 18): a Nested Loop over a Materialize of an Append, with
/// hash and merge joins off: EXPLAIN ANALYZE (Rows Removed by Join Filter), the plan
/// without ANALYZE, JSON (Join Type, Inner Unique) and the costs (`cost_material`,
/// `cost_rescan`, `final_cost_nestloop`: all 8 nodes to the cent) as PostgreSQL 15's.
#[test]
fn k_nested_loop_over_materialize_runs_as_in_postgres() {
    // The file names the demo's database k; the test's clusters keep it in postgres.
    let text = std::fs::read_to_string("crate/coordinator_sql/scenarios/k.sql").unwrap();
    let dir = TempDir::new("kseed");
    let file = dir.path.join("k.sql");
    std::fs::write(&file, text.replace("dbname 'k'", "dbname 'postgres'")).unwrap();
    // After ANALYZE PostgreSQL joins the other way round: the smaller side, po, inside
    // the Materialize (2446.75 against the FROM order's 2461.70). The sandbox costs
    // both orders as add_paths_to_joinrel does and keeps the cheaper: the same plan,
    // every node's cost to the cent, its select list putting po's columns back first.
    // Its Join Filter keeps FROM's first relation on the left, (po.a = pt.a), as
    // PostgreSQL's does, though po is now the inner side.
    check_seed_with(file.to_str().unwrap(), Some(((8, 8), Some((8, 8)))));
}
