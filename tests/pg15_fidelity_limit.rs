// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! PostgreSQL 15 fidelity of a LIMIT that stops an async Append early (issue 17): on a
//! real PostgreSQL 15 coordinator with postgres_fdw, `SELECT a, b FROM (ft1 UNION ALL
//! … ft4) LIMIT n` is a Limit over an Append of four Foreign Scans (async when
//! `async_capable` is on). The Limit stops asking once it has its rows; ExecEndNode
//! then ends every scan (postgresEndForeignScan: `CLOSE` of each cursor that was
//! declared, after the answer of a FETCH still in flight) and the remote transactions
//! commit. The sandbox in `pg15`, over TCP on the same shards, must send the same
//! statements on every connection.
//!
//! What is compared, and why:
//! - **sync** (async_capable off): everything, exactly: the statements per connection
//!   (only the first scan ever declares a cursor; the others are connected and their
//!   transactions started at ExecInit, then committed) and their order across shards;
//! - **async**: every scan is asked for its first rows at once (ExecAppendAsyncBegin),
//!   so each shard gets its DECLARE and first FETCH whatever the timing. When the
//!   limit is below `fetch_size`, that is all: the statements per connection are
//!   compared exactly. When it is not, how many more FETCHes a shard gets before the
//!   limit is reached depends on which shard answers first (on PostgreSQL too): the
//!   FETCHes are then left out of the comparison and each connection is checked to
//!   have had at least one, and the rest (DECLARE, CLOSE, COMMIT, …) is compared
//!   exactly. Which shard's rows come back also depends on timing: the number of rows
//!   is compared (and, in sync mode, the rows).
//!
//! The shards and their statement logs are tests/pg15_fidelity.rs's (tests/support/pg.rs).

mod support;

use pgasync::behaviour::Preset;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::knobs::{Knobs, Source};
use pgasync::scenario::Scenario;
use support::fidelity::{as_postgres_user, compare_order, diff_lines, fixed_order, row_text, start_over_tcp};
use support::pg::*;

const SHARDS: usize = 4;
const ROWS: usize = 250;

/// The coordinator's setup (servers s1…s4 over the shards, foreign tables ft1…ft4),
/// as SQL for PostgreSQL (`port`: the shards' ports) and for the sandbox (no ports).
fn coordinator_sql(ports: Option<&[u16]>, async_capable: bool, fetch: usize) -> String {
    let mut sql = String::from("CREATE EXTENSION postgres_fdw;\n");
    for k in 0..SHARDS {
        let s = format!("s{}", k + 1);
        let addr = ports.map_or(String::new(), |p| format!("host '127.0.0.1', port '{}', ", p[k]));
        sql.push_str(&format!(
            "CREATE SERVER {s} FOREIGN DATA WRAPPER postgres_fdw OPTIONS ({addr}dbname 'postgres', \
             async_capable '{async_capable}', fetch_size '{fetch}');\n\
             CREATE USER MAPPING FOR {} SERVER {s}{};\n",
            if ports.is_some() { "postgres" } else { "public" },
            if ports.is_some() { " OPTIONS (user 'postgres')" } else { "" },
        ));
    }
    for n in 1..=SHARDS {
        sql.push_str(&format!(
            "CREATE FOREIGN TABLE ft{n} (a int, b int, c text) SERVER s{n} OPTIONS (table_name 't{n}');\n"
        ));
    }
    sql
}

fn query(limit: usize) -> String {
    let parts: Vec<String> = (1..=SHARDS).map(|n| format!("SELECT a, b FROM ft{n}")).collect();
    format!("SELECT a, b FROM ({}) s LIMIT {limit}", parts.join(" UNION ALL "))
}

/// The sandbox's plan of the same SQL (its shards' tables are empty: the run reads
/// the real shards).
fn sandbox_scenario(async_capable: bool, fetch: usize, limit: usize) -> Scenario {
    let mut text = String::new();
    for n in 1..=SHARDS {
        text.push_str(&format!("-- @shard s{n}\ncreate table t{n} (a int, b int, c text);\n"));
    }
    text.push_str("-- @coordinator\n");
    text.push_str(&coordinator_sql(None, async_capable, fetch));
    text.push_str(&format!("-- @query\n{};\n", query(limit)));
    let sql = SqlScenario::load(&text).unwrap_or_else(|e| panic!("{e}"));
    let knobs = Knobs { behaviour: Some(Preset::Pg15), ..Default::default() };
    sql.scenario(&knobs, Source::Json).unwrap_or_else(|e| panic!("{e}"))
}

/// A shard's statements without its FETCHes, and how many FETCHes it had.
fn without_fetches(shard: &[Vec<String>]) -> (Vec<Vec<String>>, usize) {
    let fetches = shard.iter().flatten().filter(|s| s.contains("FETCH ")).count();
    let rest = shard.iter().map(|c| c.iter().filter(|s| !s.contains("FETCH ")).cloned().collect()).collect();
    (rest, fetches)
}

#[test]
fn a_limit_that_stops_an_async_append_early_sends_what_postgres_15_sends() {
    let shards = ShardSet::start(SHARDS);
    for k in 0..SHARDS {
        load_t(&shards.clusters[k], &format!("t{}", k + 1), k, ROWS);
    }
    let ports: Vec<u16> = shards.clusters.iter().map(|c| c.port).collect();
    let mut failures = vec![];
    // (fetch_size, limit): the limit within the first batch, and past it.
    for (fetch, limit) in [(100, 30), (10, 35)] {
        for async_capable in [false, true] {
            let what = format!("{} fetch_size={fetch} LIMIT {limit}", if async_capable { "async" } else { "sync" });
            let coordinator = Cluster::start("coordinator");
            coordinator.psql(&coordinator_sql(Some(&ports), async_capable, fetch));
            let explain = coordinator.psql(&format!("EXPLAIN (VERBOSE, COSTS OFF) {}", query(limit)));
            let want_async = if async_capable { SHARDS } else { 0 };
            if !explain.starts_with("Limit") || explain.matches("Async Foreign Scan").count() != want_async {
                failures.push(format!("{what}: PostgreSQL's plan is not a Limit over the Append:\n{explain}"));
            }
            // PostgreSQL 15.
            let mark = shards.mark();
            let out = coordinator.psql(&query(limit));
            let pg_sessions = shards.sessions_since(mark);
            let mut pg_rows: Vec<String> = out.lines().filter(|l| !l.is_empty()).map(str::to_string).collect();
            pg_rows.sort();
            // The sandbox, pg15.
            let sc = sandbox_scenario(async_capable, fetch, limit);
            let mark = shards.mark();
            let mut ours: Vec<String> = {
                let mut run = start_over_tcp(&sc, async_capable, &shards.addrs());
                if let Err(e) = run.run_to_end() {
                    failures.push(format!("{what}: the sandbox's run failed: {e}"));
                }
                run.rows.iter().map(|r| row_text(r)).collect()
            };
            ours.sort();
            let mut sessions = shards.sessions_since(mark);
            as_postgres_user(&mut sessions);
            // Rows: all of them in sync mode; in async mode which shard answers first
            // decides which rows the limit keeps.
            if ours.len() != limit || pg_rows.len() != limit || (!async_capable && ours != pg_rows) {
                failures.push(format!("{what}: rows differ\nPostgreSQL: {pg_rows:?}\npgasync: {ours:?}"));
            }
            let (pg, sb) = (per_shard(&pg_sessions, SHARDS), per_shard(&sessions, SHARDS));
            let timing_fetches = async_capable && limit > fetch;
            if timing_fetches {
                for (k, (p, s)) in pg.iter().zip(&sb).enumerate() {
                    let ((p, pf), (s, sf)) = (without_fetches(p), without_fetches(s));
                    if p != s || pf == 0 || sf == 0 {
                        failures.push(format!(
                            "{what}: shard {k}'s statements but FETCHes ({pf} FETCHes on PostgreSQL, {sf} here)\n{}",
                            diff_lines(&p.concat(), &s.concat())
                        ));
                    }
                }
            } else if pg != sb {
                failures
                    .push(format!("{what}: statements per connection differ\nPostgreSQL: {pg:#?}\npgasync: {sb:#?}"));
            }
            if !async_capable {
                let (p, s) = (fixed_order(timeline(&pg_sessions), false), fixed_order(timeline(&sessions), false));
                compare_order(&p, &s, &what, &mut failures);
            }
        }
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}
