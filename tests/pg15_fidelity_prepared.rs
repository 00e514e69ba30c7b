// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! PostgreSQL 15 fidelity of a prepared statement's generic plan (issue 23): the
//! scenario file `pp` (crate/coordinator_sql/scenarios/pp.sql) — `pt` range-partitioned
//! on b over four foreign partitions, one per shard — with `plan_cache_mode =
//! force_generic_plan`, `PREPARE q(int) AS SELECT a, b FROM pt WHERE b < $1` (and an
//! equality on the key) executed on a real PostgreSQL 15 coordinator with postgres_fdw,
//! and by the sandbox in `pg15` over TCP on the same shards.
//!
//! What must be equal, statement for statement: per shard connection, what the shards
//! log (`log_statement = 'all'`): the connections of the partitions left by initial
//! run-time pruning only (the pruned scans are never initialized, so they open no
//! connection), the session set-up, the DECLARE with `$1::integer` in its remote query
//! sent by the extended protocol with the parameter's value in its Bind (the shards log
//! it as `DETAIL:  parameters: $1 = '3000'`), the FETCHes, CLOSE and COMMIT; across
//! shards the order of what is waited for (all but the async FETCHes); the rows;
//! and EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) EXECUTE line for line, times masked
//! (`Subplans Removed: N` under the Append), in TEXT and in JSON.
//!
//! The shards and their statement logs are tests/pg15_fidelity.rs's (tests/support/pg.rs).
//! Missing PostgreSQL binaries fail the test (`make test` installs them).

mod support;

use pgasync::behaviour::Preset;
use pgasync::coordinator_sql::script::{setup_statements, SCENARIO_FILES};
use pgasync::coordinator_sql::statement::Stmt;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::{explain_json_text, explain_text_with, ExplainOptions};
use pgasync::knobs::{Knobs, Source};
use support::fidelity::{diff_lines as diff, fixed_order, row_text, start_over_tcp};
use support::pg::*;

const SHARDS: usize = 4;
const ROWS: usize = 2500;

fn pp_text() -> &'static str {
    SCENARIO_FILES.iter().find(|(id, _)| *id == "pp").expect("the pp scenario file").1
}

/// The shards (t1…t4 as pp.sql has them) and a PostgreSQL coordinator set up by pp.sql's
/// own coordinator section, its servers pointed at the shards.
struct PreparedFixture {
    shards: ShardSet,
    coordinator: Cluster,
}

impl PreparedFixture {
    fn start() -> PreparedFixture {
        let shards = ShardSet::start(SHARDS);
        for k in 0..SHARDS {
            load_t(&shards.clusters[k], &format!("t{}", k + 1), k, ROWS);
        }
        let coordinator = Cluster::start("coordinator");
        let mut script = String::new();
        for (node, stmts) in setup_statements(pp_text()).expect("pp.sql parses") {
            if node != "coordinator" {
                continue;
            }
            for st in stmts {
                script.push_str(&st.text);
                script.push_str(";\n");
                if let Stmt::CreateServer { name, .. } = &st.stmt {
                    let k: usize = name.value.trim_start_matches('s').parse().expect("servers s1…s4");
                    script.push_str(&format!(
                        "ALTER SERVER {} OPTIONS (ADD host '127.0.0.1', ADD port '{}');\n",
                        name.value,
                        shards.clusters[k - 1].port
                    ));
                }
            }
        }
        coordinator.psql_script(&script);
        PreparedFixture { shards, coordinator }
    }

    fn set_async(&self, async_capable: bool) {
        let sql: String = (1..=SHARDS)
            .map(|n| format!("ALTER SERVER s{n} OPTIONS (SET async_capable '{async_capable}');\n"))
            .collect();
        self.coordinator.psql(&sql);
    }
}

/// Per shard, per connection, what the shard logged: the normalized statements and the
/// parameters of an extended-protocol execution (`DETAIL:  parameters: …`), which
/// `support::pg::normalize` leaves out.
fn logged(f: &PreparedFixture, mark: usize) -> Vec<Vec<Vec<String>>> {
    let _ = f.shards.sessions_since(mark); // waits for the disconnections
    let mut sessions: Vec<(usize, String, Vec<String>)> = vec![];
    for l in f.shards.lines_since(mark) {
        let entry = if l.level == "DETAIL" && l.text.starts_with("parameters: ") {
            Some(format!("DETAIL:  {}", l.text))
        } else {
            normalize(&l.level, &l.text)
        };
        let Some(mut entry) = entry else { continue };
        if l.level == "LOG" && !l.text.starts_with("connection received") && l.text.contains("database system") {
            continue;
        }
        if entry.starts_with("connection authorized: ") || entry.starts_with("disconnection: ") {
            entry = entry.replace("user=pgasync", "user=postgres");
        }
        match sessions.iter_mut().find(|(s, id, _)| *s == l.shard && *id == l.session) {
            Some(s) => s.2.push(entry),
            None => sessions.push((l.shard, l.session.clone(), vec![entry])),
        }
    }
    let mut out = vec![vec![]; SHARDS];
    for (shard, _, entries) in sessions {
        out[shard].push(entries);
    }
    out
}

#[test]
fn generic_plan_sends_what_postgres_15_sends() {
    let f = PreparedFixture::start();
    let base = SqlScenario::load(pp_text()).expect("pp.sql loads");
    let cases = [("SELECT a, b FROM pt WHERE b < $1", "3000", 2usize), ("SELECT a, b FROM pt WHERE b = $1", "6000", 3)];
    let mut failures = vec![];
    for (query, value, removed) in cases {
        for async_capable in [false, true] {
            let what = format!("{query} with $1 = {value}, {}", if async_capable { "async" } else { "sync" });
            f.set_async(async_capable);
            let session = format!("SET plan_cache_mode = force_generic_plan; PREPARE p(int) AS {query}; ");
            // PostgreSQL 15.
            let mark = f.shards.mark();
            let out = f.coordinator.psql(&format!("{session}EXECUTE p({value});"));
            let pg_log = logged(&f, mark);
            let pg_order = fixed_order(timeline(&f.shards.sessions_since(mark)), async_capable);
            let mut pg_rows: Vec<String> = out.lines().filter(|l| !l.is_empty()).map(str::to_string).collect();
            pg_rows.sort();
            let mark = f.shards.mark();
            let pg_explain =
                f.coordinator.psql(&format!("{session}EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) EXECUTE p({value});"));
            let pg_json = f
                .coordinator
                .psql(&format!("{session}EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, FORMAT JSON) EXECUTE p({value});"));
            let _ = f.shards.sessions_since(mark);
            // The sandbox, pg15: the same statement prepared in pp's databases.
            let mut s = base.with_query(&format!("execute p({value});")).expect("the query parses");
            for st in pgasync::coordinator_sql::statement::parse_statements(&format!("{session}"), 1).unwrap() {
                s.cluster.execute(0, &st).unwrap_or_else(|e| panic!("{what}: {e}"));
            }
            let knobs = Knobs { behaviour: Some(Preset::Pg15), ..Default::default() };
            let sc = s.scenario(&knobs, Source::Json).unwrap_or_else(|e| panic!("{what}: {e}"));
            let mark = f.shards.mark();
            let (mut ours, explain) = {
                let mut run = start_over_tcp(&sc, async_capable, &f.shards.addrs());
                if let Err(e) = run.run_to_end() {
                    failures.push(format!("{what}: the sandbox's run failed: {e}"));
                }
                let text = explain_text_with(&run.explain(), &ExplainOptions::POSTGRES_VERBOSE, 0, run.elapsed_ns());
                let json = explain_json_text(&run.explain(), &ExplainOptions::POSTGRES_VERBOSE, 0, run.elapsed_ns());
                (run.rows.iter().map(|r| row_text(r)).collect::<Vec<_>>(), (text, json))
            };
            let (explain, json) = explain;
            let our_log = logged(&f, mark);
            let mut our_sessions = f.shards.sessions_since(mark);
            for s in our_sessions.iter_mut() {
                for st in s.statements.iter_mut() {
                    *st = st.replace("user=pgasync", "user=postgres");
                }
            }
            let our_order = fixed_order(timeline(&our_sessions), async_capable);
            if pg_order != our_order {
                failures.push(format!("{what}: order across shards\n{}", diff(&pg_order, &our_order)));
            }
            ours.sort();
            if ours != pg_rows {
                failures.push(format!(
                    "{what}: rows differ ({} from PostgreSQL, {} from pgasync)",
                    pg_rows.len(),
                    ours.len()
                ));
            }
            let connections: usize = pg_log.iter().map(Vec::len).sum();
            if connections != SHARDS - removed {
                failures.push(format!("{what}: PostgreSQL opened {connections} connections, not {}", SHARDS - removed));
            }
            if !pg_log.iter().flatten().flatten().any(|l| l.starts_with("DETAIL:  parameters: $1 = '")) {
                failures.push(format!("{what}: PostgreSQL sent no parameter: {pg_log:#?}"));
            }
            for k in 0..SHARDS {
                let (p, o) = (pg_log[k].concat(), our_log[k].concat());
                if pg_log[k].len() != our_log[k].len() || p != o {
                    failures.push(format!(
                        "{what}: shard {} (connections: PostgreSQL {}, pgasync {})\n{}",
                        k + 1,
                        pg_log[k].len(),
                        our_log[k].len(),
                        diff(&p, &o)
                    ));
                }
            }
            let pe: Vec<String> = mask_times(&pg_explain).lines().map(str::to_string).collect();
            let oe: Vec<String> = mask_times(&explain).lines().map(str::to_string).collect();
            if !pe.iter().any(|l| l.trim() == format!("Subplans Removed: {removed}")) {
                failures.push(format!("{what}: PostgreSQL's EXPLAIN has no Subplans Removed: {removed}\n{pg_explain}"));
            }
            if pe != oe {
                failures.push(format!("{what}: EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) EXECUTE\n{}", diff(&pe, &oe)));
            }
            let (pj, oj) = (mask_json_times(&pg_json), mask_json_times(&json));
            if !pj.iter().any(|l| l.trim() == format!("\"Subplans Removed\": {removed},")) {
                failures.push(format!("{what}: PostgreSQL's JSON has no Subplans Removed: {removed}\n{pg_json}"));
            }
            if pj != oj {
                failures.push(format!("{what}: EXPLAIN (…, FORMAT JSON) EXECUTE\n{}", diff(&pj, &oj)));
            }
        }
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}
