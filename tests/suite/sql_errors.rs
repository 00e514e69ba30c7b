//! An expression's ERROR ends the run (issue 17, h17e), on the simulated host,
//! deterministically: the executor raises it (division by zero in a local Filter or
//! projection, an overflow, a bad cast), a simulated shard raises it as an
//! ErrorResponse with PostgreSQL's SQLSTATE (postgres_fdw reports the remote message
//! with `CONTEXT:  remote SQL command: <the scan's query>`), and the remote
//! transactions are cleaned up as `pgfdw_abort_cleanup` does: ABORT TRANSACTION on
//! every connection with one open, DEALLOCATE ALL after it where a statement was
//! prepared, no CLOSE. The page's step-through ends on the error.
//! (tests/pg15_fidelity_errors.rs checks the statements against PostgreSQL 15.)

use pgasync::clock::Clock;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::demo::session::DemoSession;
use pgasync::executor::estate::ExecError;
use pgasync::knobs::{Knobs, Source};
use pgasync::run::{Phase, QueryRun};
use pgasync::scenario::Scenario;
use wasm_bindgen_test::wasm_bindgen_test;

/// `t` is partitioned over t1 (on s1: a = 0 on its tenth row) and t2 (on s2: no zero);
/// `ft` a foreign table on s1; `loc` a local table with a zero in q.
const SETUP: &str = "-- @shard s1
create table t1 (a int, b int);
insert into t1 select i - 10, i from generate_series(1, 30) i;
create table ft_remote (a int, b int);
-- @shard s2
create table t2 (a int, b int);
insert into t2 select i, i from generate_series(31, 60) i;
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true', fetch_size '5');
create server s2 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true', fetch_size '5');
create table t (a int, b int) partition by range (b);
create foreign table t1 partition of t for values from (1) to (31) server s1;
create foreign table t2 partition of t for values from (31) to (61) server s2;
create foreign table ft (a int, b int) server s1 options (table_name 'ft_remote');
create table loc (id int, q int);
insert into loc values (1, 1), (2, 2), (3, 0), (4, 4);
";

fn scenario(query: &str) -> Scenario {
    let s = SqlScenario::load(&format!("{SETUP}-- @query\n{query}\n")).unwrap_or_else(|e| panic!("{e}"));
    s.scenario(&Knobs::default(), Source::Json).unwrap_or_else(|e| panic!("{query}: {e}"))
}

/// Runs `query` to its end; its error, and the run (for its shards' logs).
fn fail(query: &str, async_mode: bool) -> (ExecError, QueryRun) {
    let mut run = scenario(query).start(async_mode, Clock::virtual_clock(), false).unwrap();
    let e = run.run_to_end().expect_err(query);
    assert!(matches!(run.phase, Phase::Failed(_)), "{query}: {:?}", run.phase);
    assert_eq!(run.leftovers(), Vec::<String>::new(), "{query}: the failed run left something");
    (e, run)
}

/// What shard `k` ran, in order (its statement log without the `statement: ` and
/// `execute …: ` prefixes).
fn shard_log(run: &QueryRun, k: usize) -> Vec<String> {
    run.host.servers[k]
        .statement_log()
        .into_iter()
        .map(|(_, s)| match s.split_once(": ") {
            Some((_, sql)) => sql.to_string(),
            None => s,
        })
        .collect()
}

#[wasm_bindgen_test(unsupported = test)]
fn a_local_error_ends_the_run_with_postgres_message() {
    for async_mode in [false, true] {
        for (q, msg) in [
            ("select id from loc where 10 / q > 1", "division by zero"),
            ("select id, 10 % q from loc", "division by zero"),
            ("select sum(10 / q) from loc", "division by zero"),
            ("select id from loc order by 10 / q", "division by zero"),
            ("select (q * 1.0e10)::int from loc", "integer out of range"),
            ("select id * 4611686018427387904 * 2 from loc", "bigint out of range"),
            ("select (q * 100.5)::numeric(3,1) from loc", "numeric field overflow"),
        ] {
            let (e, _) = fail(q, async_mode);
            assert!(matches!(e, ExecError::Eval(_)), "{q}: {e:?}");
            assert_eq!(e.message().lines().next(), Some(msg), "{q}");
            assert!(e.report().starts_with(&format!("ERROR:  {msg}")), "{q}: {}", e.report());
        }
    }
    // Evaluation that stops before the error is no error: AND's left side decides.
    let mut run =
        scenario("select id from loc where q <> 0 and 10 / q > 1").start(false, Clock::virtual_clock(), false).unwrap();
    run.keep_rows = true;
    run.run_to_end().unwrap();
    assert_eq!(run.rows.len(), 3);
    // Written the other way round too: the scan's quals run cheapest first
    // (order_qual_clauses), `q <> 0` before the division.
    let mut run =
        scenario("select id from loc where 10 / q > 1 and q <> 0").start(false, Clock::virtual_clock(), false).unwrap();
    run.run_to_end().unwrap();
}

#[wasm_bindgen_test(unsupported = test)]
fn a_shards_error_is_reported_with_the_remote_query_and_every_transaction_aborted() {
    for async_mode in [false, true] {
        let (e, run) = fail("select a, b from t where 100 / a > 0", async_mode);
        let ExecError::Remote(r) = &e else { panic!("not the shard's error: {e:?}") };
        assert_eq!((r.server.as_str(), r.sqlstate.as_str(), r.message.as_str()), ("s1", "22012", "division by zero"));
        assert_eq!(
            e.report(),
            "ERROR:  division by zero\nCONTEXT:  remote SQL command: SELECT a, b FROM public.t1 WHERE (((100 / a) > 0))"
        );
        for k in 0..2 {
            let log = shard_log(&run, k);
            assert_eq!(
                log.last().map(String::as_str),
                Some("ABORT TRANSACTION"),
                "async={async_mode} shard {k}: {log:?}"
            );
            assert!(!log.iter().any(|s| s.starts_with("CLOSE ")), "no ExecEnd after an ERROR: {log:?}");
        }
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn a_failed_foreign_insert_deallocates_all_after_its_abort() {
    for async_mode in [false, true] {
        let (e, run) = fail("insert into ft select a, 100 / (b - 20) from t", async_mode);
        assert_eq!(e.message(), "division by zero");
        let s1 = shard_log(&run, 0);
        assert_eq!(s1[s1.len() - 2..], ["ABORT TRANSACTION".to_string(), "DEALLOCATE ALL".to_string()], "{s1:?}");
        assert!(!s1.iter().any(|s| s.starts_with("DEALLOCATE pgsql_fdw_prep")), "{s1:?}");
        let s2 = shard_log(&run, 1);
        assert_eq!(s2.last().map(String::as_str), Some("ABORT TRANSACTION"), "{s2:?}");
        // The shard's table is as it was: the rows inserted before the error were
        // rolled back with the remote transaction.
        let ft = run.host.servers[0].catalog.get("ft_remote").unwrap();
        assert_eq!(ft.nrows(), 0);
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn the_step_through_ends_on_the_error() {
    for async_mode in [false, true] {
        let mut s = DemoSession::with_scenario(
            scenario("select a, b from t where 100 / a > 0"),
            "errors",
            async_mode,
            Knobs::default(),
        )
        .unwrap();
        let mut steps = 0;
        while !s.is_done() {
            s.step_event();
            steps += 1;
            assert!(steps < 10_000, "the step-through does not end");
        }
        let snap = s.snapshot(0);
        assert_eq!(snap.phase, "failed");
        assert!(snap.error.as_deref().is_some_and(|e| e.contains("division by zero")), "{:?}", snap.error);
        // Stepping a finished run is harmless.
        s.step_event();
        assert!(s.is_done());
    }
}
