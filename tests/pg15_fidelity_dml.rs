// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! PostgreSQL 15 fidelity of an INSERT fed by an async scan (issue 17): on a real
//! PostgreSQL 15 coordinator with postgres_fdw, `INSERT INTO ft SELECT * FROM pt
//! WHERE a < 3`, where `pt` is partitioned over foreign partitions on s1 and s2 and
//! `ft` is a foreign table on s1, runs ModifyTable over an Append whose Foreign Scans
//! are async (PostgreSQL does use async here: ModifyTable is no obstacle), and the
//! foreign insert shares s1's connection with the scan of `pt1`:
//!
//! - ExecInit opens the scans' connections (s1, then s2), then the foreign modify's,
//!   which is s1's, already open (GetConnection at BeginForeignModify);
//! - the INSERT is prepared on the first row (`pgsql_fdw_prep_1`, PQprepare: not in
//!   the statement log) and executed once per batch (`execute pgsql_fdw_prep_1: INSERT
//!   INTO public.ft_remote(a, b, c) VALUES ($1, $2, $3)` with `batch_size` 1; with 4,
//!   three rows to a statement, the last batch re-prepared as `pgsql_fdw_prep_2`
//!   after `DEALLOCATE pgsql_fdw_prep_1`); a FETCH of the scan in flight on s1 is
//!   drained before (process_pending_request);
//! - ExecEnd: `DEALLOCATE` of the prepared INSERT, then the scans' CLOSEs; then the
//!   COMMIT TRANSACTIONs.
//!
//! `insert_routed_to_foreign_partitions_sends_what_postgres_15_sends`: INSERT INTO pt
//! SELECT … FROM pt, each row routed to its foreign partition, whose foreign insert
//! shares the connection its scan opened (BeginForeignInsert, GetConnection).
//! `direct_modify_sends_what_postgres_15_sends` checks UPDATE and DELETE … RETURNING of
//! `pt` the same way: each shard gets one remote `UPDATE`/`DELETE` by the extended
//! protocol (postgres_fdw's direct modify, never async), the rows and the tables after;
//! `mixed_partitions_modify_sends_what_postgres_15_sends` the same with a local
//! partition beside the foreign ones (direct modify, and foreign modify under a local
//! Filter).
//!
//! The sandbox in `pg15`, over TCP on the same shards, must send what that coordinator
//! sends: per connection the same statements in the same order, across shards the
//! same order of what is waited for (all but the FETCHes and, in async mode, the
//! INSERTs, whose place among the other shard's statements depends on which shard
//! answers first), the same rows inserted (the `DETAIL: parameters:` lines, as a
//! multiset; in async mode the rows they carry, as which shard's rows fill a batch
//! depends on which answers first, on PostgreSQL too), the same rows in `ft_remote` afterwards, and EXPLAIN (VERBOSE, COSTS
//! OFF) line for line; sync and async, batch_size 1 and 3. The sandbox must also step
//! the same INSERT on its simulated shards in async mode to its end. The shards and
//! their statement logs are tests/pg15_fidelity.rs's (tests/support/pg.rs). Missing
//! PostgreSQL binaries fail the test (`make test` installs them).

mod support;

use pgasync::behaviour::Preset;
use pgasync::clock::Clock;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::{explain_text_with, ExplainOptions};
use pgasync::knobs::{Knobs, Source};
use pgasync::run::Step;
use support::fidelity::{
    as_postgres_user, compare_connections, compare_order, coordinator_sessions, fixed_order, loaded_shards,
    partitioned_pt_sql, sandbox_script_of, servers_sql_with, start_coordinator, start_over_tcp,
};
use support::pg::*;
use support::sqlfile::mask;

const SHARDS: usize = 2;
const ROWS: usize = 250;
const QUERY: &str = "INSERT INTO ft SELECT * FROM pt WHERE a < 3";
/// Rows the query inserts: a = b % 100 < 3 for b in 0..500.
const INSERTED: usize = 15;

/// The sandbox's side of the schema: t1 on s1 (with ft_remote), t2 on s2.
fn sandbox_script(batch: usize) -> String {
    sandbox_script_of(SHARDS, "create table ft_remote (a int, b int, c text);\n", &coordinator_objects(batch, None))
}

/// The coordinator's servers, user mappings and tables (with the shards' ports for
/// PostgreSQL's; the sandbox's servers are addressed by the TCP host).
fn coordinator_objects(batch: usize, ports: Option<&[u16]>) -> String {
    let mut s = servers_sql_with(SHARDS, "async_capable 'true'", ports);
    s.push_str(&partitioned_pt_sql(SHARDS, ROWS));
    s.push_str(&format!(
        "create foreign table ft (a int, b int, c text) server s1 options (table_name 'ft_remote', batch_size '{batch}');\n"
    ));
    s
}

/// The rows the shards were given (`DETAIL:  parameters: $1 = '…', …`), sorted.
fn inserted_parameters(shards: &ShardSet, mark: usize) -> Vec<String> {
    let mut v: Vec<String> = shards
        .lines_since(mark)
        .into_iter()
        .filter(|l| l.level == "DETAIL")
        .filter_map(|l| l.text.strip_prefix("parameters: ").map(str::to_string))
        .collect();
    v.sort();
    v
}

/// The rows a set of batched INSERTs' parameters carry (three columns a row), sorted:
/// `$1 = '0', $2 = '200', $3 = '00200', $4 = …` gives `'0', '200', '00200'`, ….
fn batch_rows(params: &[String]) -> Vec<String> {
    let mut rows: Vec<String> = params
        .iter()
        .flat_map(|line| {
            let values: Vec<&str> = line.split(", $").map(|p| p.split_once(" = ").map_or(p, |(_, v)| v)).collect();
            values.chunks(3).map(|r| r.join(", ")).collect::<Vec<_>>()
        })
        .collect();
    rows.sort();
    rows
}

/// The cross-shard order that does not depend on timing: `fixed_order`, and in async
/// mode without the foreign INSERTs either (which shard's rows come first decides
/// where they fall among the other shard's statements).
fn waited_order(timeline: Vec<String>, async_capable: bool) -> Vec<String> {
    fixed_order(timeline, async_capable)
        .into_iter()
        .filter(|l| !(async_capable && l.contains(" execute pgsql_fdw_prep_")))
        .collect()
}

#[test]
fn insert_fed_by_an_async_scan_sends_what_postgres_15_sends() {
    insert_sends_what_postgres_15_sends(QUERY);
}

/// The same INSERT with `ON CONFLICT DO NOTHING` (issue 17 item 3): postgres_fdw ships
/// it in the remote INSERT (`… VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, kept by
/// rebuildInsertSql for a batch), over the same async Append sharing s1's connection.
#[test]
fn insert_on_conflict_do_nothing_sends_what_postgres_15_sends() {
    insert_sends_what_postgres_15_sends(&format!("{QUERY} ON CONFLICT DO NOTHING"));
}

/// `query` (an INSERT INTO ft fed by pt) on PostgreSQL 15 and in the sandbox over TCP
/// on the same shards, batch_size 1 and 3, sync and async (see the module's doc).
fn insert_sends_what_postgres_15_sends(query: &str) {
    let shards = loaded_shards(SHARDS, ROWS);
    shards.clusters[0]
        .psql("CREATE TABLE ft_remote (a int, b int, c text); GRANT SELECT, INSERT ON ft_remote TO pgasync;");
    let coordinator = start_coordinator(&shards, |ports| coordinator_objects(1, Some(ports)));
    let mut failures = vec![];
    for (batch, async_capable) in [1, 3].into_iter().flat_map(|b| [(b, false), (b, true)]) {
        let what = format!("{query} {} batch_size={batch}", if async_capable { "async" } else { "sync" });
        let options: String = (1..=SHARDS)
            .map(|n| format!("ALTER SERVER s{n} OPTIONS (SET async_capable '{async_capable}');\n"))
            .collect();
        coordinator.psql(&format!("{options}ALTER FOREIGN TABLE ft OPTIONS (SET batch_size '{batch}');"));
        // PostgreSQL 15: its plan must be the one this test is about.
        let explain = coordinator.psql(&format!("EXPLAIN (VERBOSE, COSTS OFF) {query}"));
        let async_scans = if async_capable { SHARDS } else { 0 };
        if !(explain.contains("Insert on public.ft")
            && explain.contains(&format!("Batch Size: {batch}"))
            && explain.matches("Async Foreign Scan").count() == async_scans
            && explain.contains("ON CONFLICT DO NOTHING") == query.contains("ON CONFLICT DO NOTHING"))
        {
            failures.push(format!("{what}: PostgreSQL's plan is not the one this case is about:\n{explain}"));
        }
        shards.clusters[0].psql("TRUNCATE ft_remote");
        let mark = shards.mark();
        coordinator.psql(query);
        let pg_sessions = coordinator_sessions(shards.sessions_since(mark));
        let pg_params = inserted_parameters(&shards, mark);
        let pg_table = shards.clusters[0].psql("SELECT * FROM ft_remote ORDER BY b");
        // The sandbox, pg15, planned from the same SQL.
        shards.clusters[0].psql("TRUNCATE ft_remote");
        let script = SqlScenario::load(&sandbox_script(batch)).expect("the script loads");
        let knobs = Knobs { behaviour: Some(Preset::Pg15), ..Default::default() };
        let sc = script
            .with_query(&format!("{query};"))
            .and_then(|s| s.scenario(&knobs, Source::Cli))
            .expect("the sandbox plans the query");
        let mark = shards.mark();
        let our_explain = {
            let mut run = start_over_tcp(&sc, async_capable, &shards.addrs());
            if let Err(e) = run.run_to_end() {
                failures.push(format!("{what}: the sandbox's run failed: {e}"));
            }
            explain_text_with(&run.explain(), &ExplainOptions::POSTGRES_VERBOSE, 0, run.elapsed_ns())
        };
        let mut sessions = coordinator_sessions(shards.sessions_since(mark));
        let our_params = inserted_parameters(&shards, mark);
        let our_table = shards.clusters[0].psql("SELECT * FROM ft_remote ORDER BY b");
        as_postgres_user(&mut sessions);
        // In async mode which shard's rows fill a batch depends on which answers first
        // (on PostgreSQL too): there the batches are compared as the rows they carry.
        let (pg_cmp, our_cmp) = match async_capable {
            true => (batch_rows(&pg_params), batch_rows(&our_params)),
            false => (pg_params.clone(), our_params.clone()),
        };
        if pg_cmp != our_cmp || pg_params.len() != INSERTED.div_ceil(batch) || our_params.len() != pg_params.len() {
            failures.push(format!(
                "{what}: the INSERTs' parameters differ\nPostgreSQL: {pg_params:#?}\npgasync: {our_params:#?}"
            ));
        }
        if pg_table != our_table || pg_table.lines().count() != INSERTED {
            failures.push(format!("{what}: ft_remote differs\nPostgreSQL:\n{pg_table}\npgasync:\n{our_table}"));
        }
        compare_connections(&pg_sessions, &sessions, SHARDS, &what, &mut failures);
        let (pg, sb) =
            (waited_order(timeline(&pg_sessions), async_capable), waited_order(timeline(&sessions), async_capable));
        compare_order(&pg, &sb, &what, &mut failures);
        // EXPLAIN (VERBOSE, COSTS OFF) of the plan: Insert on public.ft, Remote SQL,
        // Batch Size, the (async) scans.
        let (pe, oe) = (mask(&explain), mask(&our_explain));
        // The sandbox's run is EXPLAIN ANALYZE's: its figures, and ON CONFLICT's
        // counts (`Tuples Inserted`, `Conflicting Tuples`), are not compared.
        let strip = |v: Vec<String>| -> Vec<String> {
            v.into_iter()
                .filter(|l| {
                    !l.trim_start().starts_with("Tuples Inserted:")
                        && !l.trim_start().starts_with("Conflicting Tuples:")
                })
                .map(|l| l.split(" (actual").next().unwrap_or("").to_string())
                .collect()
        };
        if strip(pe.clone()) != strip(oe.clone()) {
            failures.push(format!(
                "{what}: EXPLAIN (VERBOSE, COSTS OFF) differs\nPostgreSQL:\n{}\npgasync:\n{}",
                pe.join("\n"),
                oe.join("\n")
            ));
        }
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}

/// `query` over the sandbox's script (batch_size `batch`) on its simulated shards,
/// t1 and t2 filled as `load_t` fills them, stepped event by event in async mode (the
/// page's step mode) to its end; its rows kept when `keep_rows`.
fn stepped_to_its_end(batch: usize, query: &str, keep_rows: bool) -> pgasync::run::QueryRun {
    let mut script = sandbox_script(batch);
    script = script.replace(
        "create table t1 (a int, b int, c text);\n",
        "create table t1 (a int, b int, c text);\ninsert into t1 select i % 100, i, 'x' from generate_series(0, 249) i;\n",
    );
    script = script.replace(
        "create table t2 (a int, b int, c text);\n",
        "create table t2 (a int, b int, c text);\ninsert into t2 select i % 100, i, 'y' from generate_series(250, 499) i;\n",
    );
    let sql = SqlScenario::load(&script).expect("the script loads").with_query(&format!("{query};")).expect("query");
    let sc = sql.scenario(&Knobs::default(), Source::Json).expect("plans");
    let mut run = sc.start(true, Clock::virtual_clock(), true).expect("starts");
    run.es.step_mode = true;
    run.keep_rows = keep_rows;
    let mut steps = 0;
    loop {
        steps += 1;
        assert!(steps < 10_000, "the stepped run does not end");
        match run.step() {
            Step::Finished => break,
            Step::Failed => panic!("the stepped run failed: {:?}", run.phase),
            _ => {}
        }
    }
    run
}

/// The same INSERT on the simulated shards in async mode, stepped event by event (the
/// page's step mode): it ends, every row is in ft_remote, nothing is left in flight.
#[test]
fn the_sandbox_steps_the_insert_in_async_mode_to_its_end() {
    let run = stepped_to_its_end(3, QUERY, false);
    let s1 = run.host.servers.iter().find(|s| s.name == "s1").expect("s1");
    let ft = s1.catalog.get("ft_remote").expect("ft_remote");
    assert_eq!(ft.nrows(), INSERTED);
    assert!(run.leftovers().is_empty(), "{:?}", run.leftovers());
    let explain = run.explain_text();
    assert_eq!(explain.matches("Async Foreign Scan").count(), SHARDS, "{explain}");
}

/// UPDATE and DELETE of the partitioned table as postgres_fdw's direct modify, on the
/// same shards: per connection the set-up, the remote `UPDATE … WHERE …` (`DELETE`,
/// with RETURNING) by the extended protocol, the COMMIT — statement for statement
/// PostgreSQL 15's, sync and async (direct modify is never async), the rows returned
/// and the tables afterwards the same.
#[test]
fn direct_modify_sends_what_postgres_15_sends() {
    let queries = ["UPDATE pt SET c = 'z' WHERE a < 3", "DELETE FROM pt WHERE a = 7 RETURNING b, c"];
    // The case is the one this test is about: each shard got its remote statement.
    let expect = |query: &str, pg: &[Vec<Vec<String>>]| {
        let verb = query.split_whitespace().next().unwrap_or("");
        let remote =
            pg.iter().flatten().flatten().filter(|l| l.starts_with(&format!("execute <unnamed>: {verb} "))).count();
        (remote != SHARDS).then(|| format!("PostgreSQL did not send one remote {verb} per shard: {pg:#?}"))
    };
    modify_sends_what_postgres_15_sends(&queries, None, expect);
}

/// A local partition pt3 [500, 600) beside the foreign ones: created, then filled (again
/// after each committed run).
const LOCAL_PARTITION: (&str, &str) = (
    "create table pt3 partition of pt for values from (500) to (600);",
    "insert into pt3 select b % 100, b, 'l' || b from generate_series(500, 599) b;",
);

/// UPDATE and DELETE … RETURNING of `pt` with a local partition beside its foreign ones
/// (PostgreSQL 15: a result relation per partition): a direct modify per shard (the
/// remote `UPDATE … RETURNING` when the Append reaches its member), or with a local
/// Filter a foreign modify per shard (`SELECT … FOR UPDATE`, `DELETE … WHERE ctid =
/// $1`), the local partition's rows changed by the coordinator — statement for
/// statement PostgreSQL 15's per connection, the parameters, RETURNING's rows (the
/// local partition's among them) and the shards' tables after.
#[test]
fn mixed_partitions_modify_sends_what_postgres_15_sends() {
    let queries = [
        "UPDATE pt SET c = 'z' WHERE a < 3 RETURNING a, b, c",
        "DELETE FROM pt WHERE a = 7 AND c || b <> 'zz' RETURNING b, c",
    ];
    // The case is the one this test is about: a remote statement on each shard.
    let expect = |query: &str, pg: &[Vec<Vec<String>>]| {
        let verb = query.split_whitespace().next().unwrap_or("");
        let each = pg.iter().all(|shard| shard.iter().flatten().any(|l| l.contains(&format!(": {verb} "))));
        (!each).then(|| format!("PostgreSQL did not send a remote {verb} to each shard: {pg:#?}"))
    };
    modify_sends_what_postgres_15_sends(&queries, Some(LOCAL_PARTITION), expect);
}

/// UPDATE and DELETE of a foreign table that cannot be a direct modify (a SET or a
/// WHERE that is not shippable): postgres_fdw's foreign modify, on the same shards —
/// the scan `DECLARE … SELECT …, ctid … FOR UPDATE`, then per row the prepared `UPDATE
/// … WHERE ctid = $1` (PQprepare, not logged; `execute pgsql_fdw_prep_N`) with the
/// row's ctid and new values, `DEALLOCATE` before the scan's `CLOSE` — statement for
/// statement PostgreSQL 15's, the parameters, the rows returned and the tables after.
#[test]
fn foreign_modify_sends_what_postgres_15_sends() {
    let queries = [
        "UPDATE pt1 SET c = c || b WHERE a < 3",
        "DELETE FROM pt1 WHERE a = 7 AND c || b <> 'zz' RETURNING b, c",
        "UPDATE pt2 SET b = b + 1, c = 'w' || a WHERE a = 4 RETURNING a, b + 1",
    ];
    // The case is the one this test is about: prepared statements, no direct modify.
    let expect = |query: &str, pg: &[Vec<Vec<String>>]| {
        let verb = query.split_whitespace().next().unwrap_or("");
        let executed = pg.iter().flatten().flatten().filter(|l| l.contains(&format!(": {verb} "))).count();
        let prepared = pg.iter().flatten().flatten().all(|l| !l.starts_with(&format!("execute <unnamed>: {verb} ")));
        (executed == 0 || !prepared).then(|| format!("PostgreSQL did not run its foreign modify: {pg:#?}"))
    };
    modify_sends_what_postgres_15_sends(&queries, None, expect);
}

/// UPDATE … FROM and DELETE … USING of a foreign table joined to a local one (pt3,
/// named alone: a plain table): postgres_fdw's foreign modify over the join — the
/// target's scan `DECLARE … SELECT …, ctid … FOR UPDATE` (an UPDATE's whole row, a
/// DELETE's join column), then per joined row the prepared `UPDATE … WHERE ctid = $1`
/// / `DELETE …` — statement for statement PostgreSQL 15's, the parameters,
/// RETURNING's rows and the tables after. Each target row joins to one row (a second
/// would send a second statement for a ctid PostgreSQL's first moved).
#[test]
fn foreign_modify_over_a_join_sends_what_postgres_15_sends() {
    let queries = [
        "UPDATE pt1 SET c = pt3.c FROM pt3 WHERE pt3.a = pt1.b AND pt1.a < 3",
        "DELETE FROM pt2 USING pt3 WHERE pt3.a = pt2.a AND pt3.b = 507 RETURNING pt2.b, pt2.c",
    ];
    let expect = |query: &str, pg: &[Vec<Vec<String>>]| {
        let verb = query.split_whitespace().next().unwrap_or("");
        let executed = pg.iter().flatten().flatten().filter(|l| l.contains(&format!(": {verb} "))).count();
        let locked = pg.iter().flatten().flatten().any(|l| l.contains("FOR UPDATE"));
        (executed == 0 || !locked).then(|| format!("PostgreSQL did not run its foreign modify over the join: {pg:#?}"))
    };
    modify_sends_what_postgres_15_sends(&queries, Some(LOCAL_PARTITION), expect);
}

/// Runs each query on PostgreSQL 15 (rolled back, then again committed) and in the
/// sandbox over TCP on the same shards, sync and async: `expect` checks PostgreSQL's
/// statements are the case the test is about; the statements per connection (up to
/// the transaction's end), the parameters sent, RETURNING's rows and the shards'
/// tables afterwards must be the same. `local`: a local partition of `pt` to create
/// and fill, on both coordinators.
fn modify_sends_what_postgres_15_sends(
    queries: &[&str],
    local: Option<(&str, &str)>,
    expect: impl Fn(&str, &[Vec<Vec<String>>]) -> Option<String>,
) {
    let shards = loaded_shards(SHARDS, ROWS);
    for k in 0..SHARDS {
        shards.clusters[k].psql(&format!("GRANT UPDATE, DELETE ON t{} TO pgasync;", k + 1));
    }
    shards.clusters[0].psql("CREATE TABLE ft_remote (a int, b int, c text); GRANT ALL ON ft_remote TO pgasync;");
    let coordinator = start_coordinator(&shards, |ports| coordinator_objects(1, Some(ports)));
    let local_sql = local.map(|(create, fill)| format!("{create}\n{fill}\n")).unwrap_or_default();
    coordinator.psql(&local_sql);
    let snapshot = |shards: &ShardSet| -> Vec<String> {
        (0..SHARDS).map(|k| shards.clusters[k].psql(&format!("SELECT * FROM t{} ORDER BY b", k + 1))).collect()
    };
    let mut failures = vec![];
    for (query, async_capable) in queries.iter().flat_map(|q| [(*q, false), (*q, true)]) {
        let what = format!("{query} {}", if async_capable { "async" } else { "sync" });
        let options: String = (1..=SHARDS)
            .map(|n| format!("ALTER SERVER s{n} OPTIONS (SET async_capable '{async_capable}');\n"))
            .collect();
        coordinator.psql(&options);
        let before = snapshot(&shards);
        // PostgreSQL, in a transaction rolled back after the shards' tables are read
        // through the coordinator (the same remote transactions).
        let mark = shards.mark();
        let out = coordinator.psql(&format!("BEGIN;\n{query};\nROLLBACK;"));
        let pg_sessions = coordinator_sessions(shards.sessions_since(mark));
        let pg_params = inserted_parameters(&shards, mark);
        let mut pg_rows: Vec<String> = out.lines().filter(|l| !l.is_empty()).map(str::to_string).collect();
        pg_rows.sort();
        // The sandbox commits: the tables afterwards are compared with what
        // PostgreSQL's statement leaves when it commits (run again, then restored).
        let script = SqlScenario::load(&format!("{}{local_sql}", sandbox_script(1))).expect("the script loads");
        let knobs = Knobs { behaviour: Some(Preset::Pg15), ..Default::default() };
        let sc = script
            .with_query(&format!("{query};"))
            .and_then(|s| s.scenario(&knobs, Source::Cli))
            .expect("the sandbox plans the query");
        let mark = shards.mark();
        let mut ours = {
            let mut run = start_over_tcp(&sc, async_capable, &shards.addrs());
            run.keep_rows = true;
            if let Err(e) = run.run_to_end() {
                failures.push(format!("{what}: the sandbox's run failed: {e}"));
            }
            run.rows.iter().map(|r| support::fidelity::row_text(r)).collect::<Vec<_>>()
        };
        ours.sort();
        let mut sessions = coordinator_sessions(shards.sessions_since(mark));
        let our_params = inserted_parameters(&shards, mark);
        let ours_after = snapshot(&shards);
        for k in 0..SHARDS {
            shards.clusters[k].psql(&format!("TRUNCATE t{};", k + 1));
            load_rows(&shards.clusters[k], k);
        }
        coordinator.psql(&format!("{query};"));
        let pg_after = snapshot(&shards);
        if let Some((_, fill)) = local {
            coordinator.psql(&format!("TRUNCATE pt3;\n{fill}"));
        }
        for k in 0..SHARDS {
            shards.clusters[k].psql(&format!("TRUNCATE t{};", k + 1));
            load_rows(&shards.clusters[k], k);
        }
        if snapshot(&shards) != before {
            failures.push(format!("{what}: the shards' tables were not restored"));
        }
        as_postgres_user(&mut sessions);
        // PostgreSQL's ROLLBACK is an ABORT TRANSACTION on each connection; the
        // sandbox's statement commits: compared up to the transaction's end.
        let upto_end = |v: Vec<Vec<Vec<String>>>| -> Vec<Vec<Vec<String>>> {
            v.into_iter()
                .map(|shard| {
                    shard
                        .into_iter()
                        .map(|s| {
                            // After an abort, a connection that prepared statements
                            // also gets `DEALLOCATE ALL` (pgfdw_xact_callback): what
                            // follows the transaction's end is left out, but the
                            // disconnection.
                            let mut ended = false;
                            s.into_iter()
                                .filter(|l| {
                                    ended |= l.contains("COMMIT TRANSACTION") || l.contains("ABORT TRANSACTION");
                                    !ended || l.starts_with("disconnection: ")
                                })
                                .collect()
                        })
                        .collect()
                })
                .collect()
        };
        // Async: the prepared statements' numbers are timing (`prep_unnumbered`).
        let unnumbered = |v| if async_capable { prep_unnumbered(v) } else { v };
        let (pg, sb) =
            (unnumbered(upto_end(per_shard(&pg_sessions, SHARDS))), unnumbered(upto_end(per_shard(&sessions, SHARDS))));
        if let Some(m) = expect(query, &pg) {
            failures.push(format!("{what}: {m}"));
        }
        if pg_params != our_params {
            failures.push(format!("{what}: parameters differ\nPostgreSQL: {pg_params:#?}\npgasync: {our_params:#?}"));
        }
        if pg != sb {
            failures.push(format!("{what}: statements per connection differ\nPostgreSQL: {pg:#?}\npgasync: {sb:#?}"));
        }
        if pg_rows != ours {
            failures.push(format!("{what}: RETURNING rows differ\nPostgreSQL: {pg_rows:?}\npgasync: {ours:?}"));
        }
        if pg_after != ours_after {
            failures.push(format!("{what}: the tables afterwards differ"));
        }
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}

/// The statements with `pgsql_fdw_prep_N` for each prepared statement's number: in
/// async mode which shard's first row comes first is timing, and with it which
/// connection prepares first (GetPrepStmtNumber counts across connections).
fn prep_unnumbered(v: Vec<Vec<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    let line = |l: String| match l.find("pgsql_fdw_prep_") {
        Some(i) => {
            let rest = &l[i + "pgsql_fdw_prep_".len()..];
            let digits = rest.chars().take_while(char::is_ascii_digit).count();
            format!("{}pgsql_fdw_prep_N{}", &l[..i], &rest[digits..])
        }
        None => l,
    };
    v.into_iter().map(|shard| shard.into_iter().map(|s| s.into_iter().map(line).collect()).collect()).collect()
}

/// The rows `load_t` gives shard `k`'s table.
fn load_rows(c: &Cluster, k: usize) {
    let first = k * ROWS;
    c.psql(&format!(
        "INSERT INTO t{n} SELECT b % 100, b, CASE WHEN b < 100000 THEN lpad(b::text, 5, '0') ELSE b::text END \
         FROM generate_series({first}::int, {first}::int + {ROWS}::int - 1) b;",
        n = k + 1
    ));
}

/// INSERT into the partitioned table from itself: each row routed to its foreign
/// partition, whose foreign insert (BeginForeignInsert: GetConnection, the connection
/// its scan opened) shares the connection with that scan, async or not — per
/// connection PostgreSQL 15's statements, the same rows given, the same tables after;
/// and the same INSERT with ON CONFLICT DO NOTHING, shipped in each remote INSERT.
#[test]
fn insert_routed_to_foreign_partitions_sends_what_postgres_15_sends() {
    let shards = loaded_shards(SHARDS, ROWS);
    for k in 0..SHARDS {
        shards.clusters[k].psql(&format!("GRANT INSERT ON t{} TO pgasync;", k + 1));
    }
    shards.clusters[0].psql("CREATE TABLE ft_remote (a int, b int, c text); GRANT ALL ON ft_remote TO pgasync;");
    let coordinator = start_coordinator(&shards, |ports| coordinator_objects(1, Some(ports)));
    let snapshot = |shards: &ShardSet| -> Vec<String> {
        (0..SHARDS).map(|k| shards.clusters[k].psql(&format!("SELECT * FROM t{} ORDER BY b, c", k + 1))).collect()
    };
    let restore = |shards: &ShardSet| {
        for k in 0..SHARDS {
            shards.clusters[k].psql(&format!("TRUNCATE t{};", k + 1));
            load_rows(&shards.clusters[k], k);
        }
    };
    let plain = "INSERT INTO pt SELECT a, b + 1, c FROM pt WHERE a = 5";
    // ON CONFLICT DO NOTHING routed to foreign partitions: each one's remote INSERT
    // carries it (postgresBeginForeignInsert).
    let on_conflict = format!("{plain} ON CONFLICT DO NOTHING");
    let mut failures = vec![];
    let cases = [(plain, false), (plain, true), (on_conflict.as_str(), false), (on_conflict.as_str(), true)];
    for (query, async_capable) in cases {
        let what = format!("{query} {}", if async_capable { "async" } else { "sync" });
        let options: String = (1..=SHARDS)
            .map(|n| format!("ALTER SERVER s{n} OPTIONS (SET async_capable '{async_capable}');\n"))
            .collect();
        coordinator.psql(&options);
        let mark = shards.mark();
        coordinator.psql(query);
        let pg_sessions = coordinator_sessions(shards.sessions_since(mark));
        let pg_params = inserted_parameters(&shards, mark);
        let pg_after = snapshot(&shards);
        restore(&shards);
        let script = SqlScenario::load(&sandbox_script(1)).expect("the script loads");
        let knobs = Knobs { behaviour: Some(Preset::Pg15), ..Default::default() };
        let sc = script
            .with_query(&format!("{query};"))
            .and_then(|s| s.scenario(&knobs, Source::Cli))
            .expect("the sandbox plans the query");
        let mark = shards.mark();
        {
            let mut run = start_over_tcp(&sc, async_capable, &shards.addrs());
            if let Err(e) = run.run_to_end() {
                failures.push(format!("{what}: the sandbox's run failed: {e}"));
            }
        }
        let mut sessions = coordinator_sessions(shards.sessions_since(mark));
        let our_params = inserted_parameters(&shards, mark);
        let our_after = snapshot(&shards);
        restore(&shards);
        as_postgres_user(&mut sessions);
        // b + 1 for b = 5, 105, 205 (t1) and 305, 405 (t2): five rows routed.
        let shipped = pg_sessions.iter().flat_map(|s| &s.statements).any(|l| l.ends_with(" ON CONFLICT DO NOTHING"));
        if shipped != query.ends_with("ON CONFLICT DO NOTHING") {
            failures.push(format!("{what}: PostgreSQL's remote INSERTs are not the case tested: {pg_sessions:#?}"));
        }
        if pg_params != our_params || pg_params.len() != 5 {
            failures.push(format!(
                "{what}: the INSERTs' parameters differ\nPostgreSQL: {pg_params:#?}\npgasync: {our_params:#?}"
            ));
        }
        if pg_after != our_after {
            failures.push(format!("{what}: the tables afterwards differ"));
        }
        // In async mode which shard's rows come first is timing, and with it which
        // partition's INSERT is prepared first (GetPrepStmtNumber counts across
        // connections): the number is left out there.
        let unnumbered = |v| if async_capable { prep_unnumbered(v) } else { v };
        let (pg, sb) = (unnumbered(per_shard(&pg_sessions, SHARDS)), unnumbered(per_shard(&sessions, SHARDS)));
        if pg != sb {
            failures.push(format!("{what}: statements per connection differ\nPostgreSQL: {pg:#?}\npgasync: {sb:#?}"));
        }
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}

/// Data-modifying CTEs (issue 17, h17c) on the same shards, sync and async: an UPDATE
/// of `pt` in WITH read by a CTE Scan (postgres_fdw's direct modify, one remote UPDATE
/// per shard); a DELETE of `pt1` that is a foreign modify (a local Filter), its
/// RETURNING joined with `pt`'s (async) Append, whose scan of `pt1` shares s1's
/// connection with the foreign modify; an INSERT into `ft` (s1) fed by `pt`'s Append,
/// counted; and a DELETE that the query does not read, which runs after the query's
/// own scans (ExecPostprocessPlan). Per connection PostgreSQL 15's statements, the
/// parameters, the rows and the shards' tables afterwards.
#[test]
fn data_modifying_ctes_send_what_postgres_15_sends() {
    let queries = [
        "WITH t AS (UPDATE pt SET c = 'z' WHERE a < 3 RETURNING a, b, c) SELECT * FROM t",
        "WITH d AS (DELETE FROM pt1 WHERE a = 7 AND c || b <> 'zz' RETURNING b, c) \
         SELECT d.b, pt.c FROM d JOIN pt ON pt.a = d.b",
        "WITH i AS (INSERT INTO ft SELECT * FROM pt WHERE a < 3 RETURNING *) SELECT count(*) FROM i",
        "WITH d AS (DELETE FROM pt WHERE a = 9 RETURNING b) SELECT count(*) FROM pt WHERE a < 2",
    ];
    // The case is the one this test is about: PostgreSQL modified rows on a shard.
    let expect = |_: &str, pg: &[Vec<Vec<String>>]| {
        let modified = pg.iter().flatten().flatten().any(|l| {
            l.contains(": UPDATE ")
                || l.contains(": DELETE ")
                || l.contains(": INSERT ")
                || l.contains("pgsql_fdw_prep_")
        });
        (!modified).then(|| format!("PostgreSQL modified nothing remotely: {pg:#?}"))
    };
    modify_sends_what_postgres_15_sends(&queries, None, expect);
}

/// A data-modifying CTE on the simulated shards, stepped event by event in async mode
/// (the page's step mode): it ends, the DELETE the query does not read has removed
/// its rows, nothing is left in flight, and EXPLAIN shows the CTE and its CTE Scan.
#[test]
fn the_sandbox_steps_a_data_modifying_cte_to_its_end() {
    let query = "WITH d AS (DELETE FROM pt WHERE a = 9 RETURNING b), \
                 u AS (UPDATE pt SET c = 'u' WHERE a = 8 RETURNING b) SELECT count(*) FROM u";
    let run = stepped_to_its_end(1, query, true);
    // a = 8 on 5 rows of each shard (b = 8, 108, …); a = 9 deleted there too.
    assert_eq!(run.rows.len(), 1);
    assert_eq!(run.rows[0][0].to_string(), "5");
    // a = 8: b = 8, 108, 208 on s1; 308, 408 on s2.
    for (shard, table, updated) in [("s1", "t1", 3), ("s2", "t2", 2)] {
        let s = run.host.servers.iter().find(|s| s.name == shard).expect("shard");
        let t = s.catalog.get(table).expect("table");
        let rows: Vec<Vec<String>> = (0..t.nrows()).map(|i| t.row(i).iter().map(|d| d.to_string()).collect()).collect();
        assert!(rows.iter().all(|r| r[0] != "9"), "{shard}: the unread DELETE did not run to its end");
        assert_eq!(rows.iter().filter(|r| r[0] == "8" && r[2] == "u").count(), updated, "{shard}: {rows:?}");
    }
    assert!(run.leftovers().is_empty(), "{:?}", run.leftovers());
    let explain = run.explain_text();
    assert!(explain.contains("CTE d") && explain.contains("CTE u") && explain.contains("CTE Scan on u"), "{explain}");
}

/// EXPLAIN (VERBOSE, COSTS OFF, FORMAT JSON) and (COSTS OFF, FORMAT JSON) of UPDATE
/// and DELETE … RETURNING of `pt` with a local partition beside the foreign ones: a
/// ModifyTable with a result relation per partition, whose "Target Tables" group
/// (show_modifytable_info) names each (with a foreign modify's Remote SQL), the
/// direct modify a "Foreign Scan" with its "Operation" — PostgreSQL 15's text exactly
/// (planned only, nothing sent).
#[test]
fn partitioned_modify_explain_json_is_postgres_15s() {
    let shards = loaded_shards(SHARDS, ROWS);
    shards.clusters[0].psql("CREATE TABLE ft_remote (a int, b int, c text); GRANT ALL ON ft_remote TO pgasync;");
    let local_sql = format!("{}\n{}\n", LOCAL_PARTITION.0, LOCAL_PARTITION.1);
    let coordinator = start_coordinator(&shards, |ports| format!("{}{local_sql}", coordinator_objects(1, Some(ports))));
    let script = SqlScenario::load(&format!("{}{local_sql}", sandbox_script(1))).expect("the script loads");
    let mut failures = vec![];
    for (options, verbose) in [("VERBOSE, COSTS OFF, FORMAT JSON", true), ("COSTS OFF, FORMAT JSON", false)] {
        for query in
            // The DELETE's local Filter makes a foreign modify per foreign partition,
            // its Remote SQL in Target Tables.
            ["UPDATE pt SET c = 'z' WHERE a < 3", "DELETE FROM pt WHERE a = 7 AND c || b <> c RETURNING b, c"]
        {
            let explain = format!("EXPLAIN ({options}) {query}");
            let theirs = coordinator.psql(&explain);
            let s = script.with_query(&format!("{explain};")).expect("the sandbox plans it");
            let run = s.plan_only_run(&Knobs::default(), Source::Json, true).expect("planned");
            let opts = ExplainOptions { verbose, counters: false };
            let ours = pgasync::instrument::explain_doc_json_text(&run.explain(), &opts, &s.explain_doc(), 0, 0);
            if !theirs.contains("\"Target Tables\"") {
                failures.push(format!("{explain}: PostgreSQL printed no Target Tables: {theirs}"));
            }
            if ours.trim_end() != theirs.trim_end() {
                failures.push(format!("{explain} differs\n--- sandbox\n{ours}\n--- PostgreSQL\n{theirs}"));
            }
        }
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}
