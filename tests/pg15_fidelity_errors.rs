// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! PostgreSQL 15 fidelity of a statement that fails (issue 17, h17e): an expression's
//! ERROR ends the statement, postgres_fdw reports a remote one (`pgfdw_report_error`:
//! the shard's message, `CONTEXT:  remote SQL command: <the scan's query>`), and the
//! transaction callback at abort cleans every connection up, one after another
//! (`pgfdw_xact_callback` → `pgfdw_abort_cleanup`): a query in progress is cancelled
//! and its answer drained, then `ABORT TRANSACTION`, then `DEALLOCATE ALL` if the
//! transaction prepared a statement (a foreign INSERT's). No ExecEndNode runs after
//! an ERROR: no CLOSE, no DEALLOCATE of the prepared INSERT.
//!
//! The schema is tests/pg15_fidelity_dml.rs's: `pt` range-partitioned on b over pt1
//! (t1 on s1, b in 0..250) and pt2 (t2 on s2, b in 250..500), `ft` a foreign table on
//! s1. The statements, sync and async:
//! - `SELECT a, b FROM pt WHERE 1000 / (b - 120) <> 0`: the qual is pushed to both
//!   shards; s1's second FETCH meets b = 120 and its shard raises;
//! - `SELECT a, b, 1000 / (b - 120) FROM pt`: the coordinator's projection raises at
//!   b = 120, after s1's first rows came (an async FETCH may be in flight on s2);
//! - `INSERT INTO ft SELECT a, 1000 / (b - 201), c FROM pt WHERE a < 3`: rows went to
//!   s1 by the prepared INSERT before the local ERROR at b = 201: s1 gets `DEALLOCATE
//!   ALL` after its ABORT, and ft_remote keeps no row.
//!
//! What is compared: the error as psql prints it (its ERROR and CONTEXT lines); the
//! statements per connection (in async mode without the FETCHes and the foreign
//! INSERTs' executions, whose number depends on which shard answers first, on
//! PostgreSQL too; a cancel's "canceling statement" ERROR line, which depends on
//! whether the query was still running, is left out); in sync mode also the order
//! across shards. Missing PostgreSQL binaries fail the test.

mod support;

use pgasync::behaviour::Preset;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::knobs::{Knobs, Source};
use support::fidelity::{
    as_postgres_user, compare_order, coordinator_sessions, diff_lines, fixed_order, loaded_shards, partitioned_pt_sql,
    sandbox_script_of, servers_sql_with, start_coordinator, start_over_tcp,
};
use support::pg::*;

const SHARDS: usize = 2;
const ROWS: usize = 250;

const QUERIES: [&str; 3] = [
    "SELECT a, b FROM pt WHERE 1000 / (b - 120) <> 0",
    "SELECT a, b, 1000 / (b - 120) FROM pt",
    "INSERT INTO ft SELECT a, 1000 / (b - 201), c FROM pt WHERE a < 3",
];

fn coordinator_objects(ports: Option<&[u16]>, async_capable: bool) -> String {
    let mut s = servers_sql_with(SHARDS, &format!("async_capable '{async_capable}'"), ports);
    s.push_str(&partitioned_pt_sql(SHARDS, ROWS));
    s.push_str("create foreign table ft (a int, b int, c text) server s1 options (table_name 'ft_remote');\n");
    s
}

fn sandbox_script(async_capable: bool) -> String {
    sandbox_script_of(
        SHARDS,
        "create table ft_remote (a int, b int, c text);\n",
        &coordinator_objects(None, async_capable),
    )
}

/// What does not depend on timing: no cancel's ERROR line; in async mode no FETCH
/// and no execution of the prepared INSERT either.
fn timing_free(line: &str, async_capable: bool) -> bool {
    !line.contains("canceling statement due to user request")
        && !(async_capable && (line.contains(" FETCH ") || line.contains("execute pgsql_fdw_prep_")))
}

/// The report as psql prints it, without psql's own prefix: the ERROR, DETAIL and
/// CONTEXT lines.
fn report_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split_once("ERROR:  ").map_or(l.to_string(), |(_, m)| format!("ERROR:  {m}")))
        .filter(|l| l.starts_with("ERROR:  ") || l.starts_with("DETAIL:  ") || l.starts_with("CONTEXT:  "))
        .collect()
}

#[test]
fn a_failing_statement_aborts_the_remote_transactions_as_postgres_15_does() {
    let shards = loaded_shards(SHARDS, ROWS);
    shards.clusters[0]
        .psql("CREATE TABLE ft_remote (a int, b int, c text); GRANT SELECT, INSERT ON ft_remote TO pgasync;");
    let mut failures = vec![];
    for async_capable in [false, true] {
        let coordinator = start_coordinator(&shards, |ports| coordinator_objects(Some(ports), async_capable));
        for query in QUERIES {
            let what = format!("{} {query}", if async_capable { "async" } else { "sync" });
            let explain = coordinator.psql(&format!("EXPLAIN (VERBOSE, COSTS OFF) {query}"));
            let want_async = if async_capable { SHARDS } else { 0 };
            if explain.matches("Async Foreign Scan").count() != want_async {
                failures.push(format!("{what}: PostgreSQL's plan is not the one this case is about:\n{explain}"));
            }
            // PostgreSQL 15.
            let mark = shards.mark();
            let pg_error = match coordinator.try_psql(query) {
                Ok(_) => {
                    failures.push(format!("{what}: PostgreSQL did not fail"));
                    continue;
                }
                Err(e) => report_lines(&e),
            };
            let pg_sessions = coordinator_sessions(shards.sessions_since(mark));
            let pg_table = shards.clusters[0].psql("SELECT count(*) FROM ft_remote");
            // The sandbox, pg15, over TCP on the same shards.
            let script = SqlScenario::load(&sandbox_script(async_capable)).expect("the script loads");
            let knobs = Knobs { behaviour: Some(Preset::Pg15), ..Default::default() };
            let sc = script
                .with_query(&format!("{query};"))
                .and_then(|s| s.scenario(&knobs, Source::Cli))
                .expect("the sandbox plans the query");
            let mark = shards.mark();
            let our_error = {
                let mut run = start_over_tcp(&sc, async_capable, &shards.addrs());
                match run.run_to_end() {
                    Ok(()) => {
                        failures.push(format!("{what}: the sandbox's run did not fail"));
                        vec![]
                    }
                    Err(e) => {
                        if !run.leftovers().is_empty() {
                            failures.push(format!("{what}: the failed run left {:?}", run.leftovers()));
                        }
                        report_lines(&e.report())
                    }
                }
            };
            let mut sessions = coordinator_sessions(shards.sessions_since(mark));
            as_postgres_user(&mut sessions);
            let our_table = shards.clusters[0].psql("SELECT count(*) FROM ft_remote");
            if pg_error != our_error {
                failures.push(format!("{what}: the error differs\n{}", diff_lines(&pg_error, &our_error)));
            }
            if pg_table != our_table || pg_table.trim() != "0" {
                failures.push(format!("{what}: ft_remote afterwards: {pg_table:?} on PostgreSQL, {our_table:?} here"));
            }
            let keep = |shard: Vec<Vec<String>>| -> Vec<String> {
                shard.concat().into_iter().filter(|l| timing_free(l, async_capable)).collect()
            };
            let (pg, sb) = (per_shard(&pg_sessions, SHARDS), per_shard(&sessions, SHARDS));
            for (k, (p, s)) in pg.into_iter().zip(sb).enumerate() {
                let (p, s) = (keep(p), keep(s));
                if p != s {
                    failures.push(format!("{what}: shard {k}'s statements differ\n{}", diff_lines(&p, &s)));
                }
            }
            if !async_capable {
                let order = |s: &[LogSession]| -> Vec<String> {
                    fixed_order(timeline(s), false).into_iter().filter(|l| timing_free(l, false)).collect()
                };
                compare_order(&order(&pg_sessions), &order(&sessions), &what, &mut failures);
            }
        }
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}
