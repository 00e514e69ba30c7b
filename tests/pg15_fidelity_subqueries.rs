// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! PostgreSQL 15 fidelity of InitPlans (and a correlated SubPlan) over foreign
//! partitions (issue 17): on a real
//! PostgreSQL 15 coordinator with postgres_fdw, `SELECT a, b FROM pt WHERE a > (SELECT
//! avg(a) FROM pt)` over a table partitioned across two servers runs an InitPlan whose
//! Aggregate reads the same foreign partitions through an Append of its own — async
//! when `async_capable` is on. postgres_fdw shares one connection per server, so the
//! InitPlan's scans and the main query's scans meet on the same two connections:
//!
//! - ExecInit starts the InitPlan's scans first (cursors c1, c2), then the main
//!   query's (c3, c4);
//! - the main Append's first request reaches `create_cursor` of its first partition,
//!   which drains the connection and then computes the query's parameter: the whole
//!   InitPlan runs there (DECLARE c1, c2 and their FETCHes, async), and only then the
//!   DECLARE of c3 with `$1::numeric` goes out, its value bound;
//! - at ExecEnd the main plan's cursors close before the InitPlan's (ExecEndPlan ends
//!   `es_subplanstates` after the plan tree).
//!
//! The sandbox in `pg15`, over TCP on the same shards, must send what that coordinator
//! sends: per connection the same statements in the same order, across shards the same
//! order of what is waited for (all but the FETCHes of async mode), the same rows, the
//! same bound parameter values, and EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) line for
//! line (times masked); sync and async, fetch_size 100 and 1000. The shards and their statement logs are
//! tests/pg15_fidelity.rs's (tests/support/pg.rs). Missing PostgreSQL binaries fail
//! the test (`make test` installs them).

mod support;

use support::fidelity::{
    bound_parameters, check_postgres_plan, compare_connections, compare_order, compare_rows,
    explain_analyze_difference, fixed_order, loaded_shards, partitioned_pt_sql, postgres_side, sandbox_script_of,
    sandbox_side, servers_sql, set_servers_sql, start_coordinator,
};
use support::pg::*;

const SHARDS: usize = 2;
const ROWS: usize = 250;
/// One query of the test and what PostgreSQL's plan of it must be.
struct Case {
    sql: &'static str,
    /// Rows it returns.
    rows: usize,
    /// Text PostgreSQL's EXPLAIN (VERBOSE, COSTS OFF) must contain.
    plan_has: &'static [&'static str],
    /// Async Foreign Scans in PostgreSQL's plan in async mode.
    async_scans: usize,
    /// DECLAREs with a bound `$1`.
    params: usize,
    /// EXPLAIN ANALYZE is compared in async mode too (not when which async scan gives
    /// the first row depends on which shard answers first).
    explain_async: bool,
}

const CASES: &[Case] = &[
    // On `a`, not the partition key (a comparison of the key with the InitPlan's value
    // would prune partitions at run time, which the sandbox refuses): a is b % 100, so
    // half of each shard's rows pass. Every scan of both Appends is async.
    Case {
        sql: "SELECT a, b FROM pt WHERE a > (SELECT avg(a) FROM pt)",
        rows: ROWS,
        plan_has: &["InitPlan 1 (returns $0)", "WHERE ((a > $1::numeric))"],
        async_scans: 2 * SHARDS,
        params: SHARDS,
        explain_async: true,
    },
    // An uncorrelated EXISTS: the InitPlan's async Append stops at its first row, the
    // other shard's FETCH possibly still in flight (its connection's pendingAreq) when
    // the main scans — each under its gating Result, so synchronous — need the
    // connections (process_pending_request).
    Case {
        sql: "SELECT a, b FROM pt WHERE EXISTS (SELECT 1 FROM pt WHERE b > 100) AND a < 10",
        rows: 10 * SHARDS * ROWS / 100,
        plan_has: &["InitPlan 1 (returns $0)", "One-Time Filter: $0", "SELECT NULL FROM public.t2 WHERE ((b > 100))"],
        async_scans: SHARDS,
        params: 0,
        explain_async: false,
    },
    // An InitPlan in the select list, on the other server than the main scan's: its
    // connection is set up first (ExecInit starts the InitPlan first), the COMMITs go
    // in the user mappings' order all the same.
    Case {
        sql: "SELECT a, b, (SELECT count(*) FROM pt2) AS n FROM pt1 WHERE a < 5",
        rows: 15, // b % 100 < 5 for b in 0..250: 0..4, 100..104, 200..204
        plan_has: &["InitPlan 1 (returns $0)", "SELECT count(*) FROM public.t2"],
        async_scans: 0,
        params: 0,
        explain_async: true,
    },
    // A correlated scalar subquery in the select list: SubPlan 1, run for each of the
    // outer scan's rows with `$1` set from it. Its foreign scan (an aggregate pushed
    // down, on the other server) declares its cursor with the row's value; for each
    // further row the changed parameter closes it (postgresReScanForeignScan with
    // chgParam) and the cursor is declared again with the new value.
    Case {
        sql: "SELECT a, b, (SELECT count(*) FROM pt2 WHERE pt2.a = pt1.a) AS n FROM pt1 WHERE b < 5",
        rows: 5,
        plan_has: &["SubPlan 1", "SELECT count(*) FROM public.t2 WHERE ((a = $1::integer))"],
        async_scans: 0,
        params: 5,
        explain_async: true,
    },
    // The partition key against an InitPlan's value: exec pruning. The Append runs the
    // InitPlan at its first call (ExecFindMatchingSubPlans), before any request, and
    // asks only the partition that can hold b = 250; the other is initialized (its
    // connection is set up, its cursor numbered) but never executed.
    Case {
        sql: "SELECT a, b FROM pt WHERE b = (SELECT count(*) FROM pt2)",
        rows: 1,
        plan_has: &["InitPlan 1 (returns $0)", "WHERE ((b = $1::bigint))"],
        async_scans: SHARDS,
        params: 1,
        explain_async: true,
    },
    // A correlated SubPlan over the partitioned table: its Append (async in async
    // mode) is rescanned for each outer row with the changed `$1`, each partition's
    // cursor closed and declared again (ExecReScanAppend, postgresReScanForeignScan).
    Case {
        sql: "SELECT a, b, (SELECT count(*) FROM pt WHERE pt.a = pt1.a) AS n FROM pt1 WHERE b < 3",
        rows: 3,
        plan_has: &["SubPlan 1", "WHERE ((a = $1::integer))"],
        async_scans: SHARDS,
        params: 3 * SHARDS,
        explain_async: true,
    },
];

/// The sandbox's side of the schema: t1 and t2 on s1 and s2 (`load_t`'s tables: b is
/// 0..249 on the first shard, 250..499 on the second), pt range-partitioned on b.
fn sandbox_script(fetch: usize) -> String {
    sandbox_script_of(SHARDS, "", &coordinator_objects(fetch, None))
}

/// The servers, user mappings and tables of the coordinator (with the shards' ports
/// for PostgreSQL's; the sandbox's servers are addressed by the TCP host).
fn coordinator_objects(fetch: usize, ports: Option<&[u16]>) -> String {
    let mut s = servers_sql(SHARDS, fetch, ports);
    s.push_str(&partitioned_pt_sql(SHARDS, ROWS));
    s
}

/// The same numbers: PostgreSQL prints avg()'s numeric with its scale
/// (`49.5000000000000000`), the sandbox's numeric is a float (`49.5`) — the value the
/// shard compares with is the same.
fn same_values(a: &[String], b: &[String]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x.parse::<f64>(), y.parse::<f64>()) {
            (Ok(x), Ok(y)) => x == y,
            _ => x == y,
        })
}

#[test]
fn initplan_over_shared_connections_sends_what_postgres_15_sends() {
    let shards = loaded_shards(SHARDS, ROWS);
    let coordinator = start_coordinator(&shards, |ports| coordinator_objects(100, Some(ports)));
    let mut failures = vec![];
    for (case, fetch, async_capable) in
        CASES.iter().flat_map(|c| [100, 1000].into_iter().flat_map(move |f| [(c, f, false), (c, f, true)]))
    {
        {
            let query = case.sql;
            let what = format!("{query} {} fetch_size={fetch}", if async_capable { "async" } else { "sync" });
            coordinator.psql(&set_servers_sql(SHARDS, async_capable, fetch));
            // PostgreSQL 15: its plan must be the one this test is about.
            let async_scans = if async_capable { case.async_scans } else { 0 };
            check_postgres_plan(&coordinator, query, case.plan_has, async_scans, &what, &mut failures);
            let pg_side = postgres_side(&coordinator, &shards, query);
            let pg_params = bound_parameters(&shards, pg_side.mark);
            let our_side = sandbox_side(&sandbox_script(fetch), query, async_capable, &shards, &what, &mut failures)
                .unwrap_or_else(|e| panic!("{what}: the sandbox does not plan it: {e}"));
            let our_params = bound_parameters(&shards, our_side.mark);
            if pg_params.len() != case.params || !same_values(&pg_params, &our_params) {
                failures.push(format!(
                    "{what}: the DECLAREs' parameters differ\nPostgreSQL: {pg_params:?}\npgasync: {our_params:?}"
                ));
            }
            let (pg_rows, pg_sessions) = (&pg_side.rows, &pg_side.sessions);
            let (ours, sessions, our_explain) = (&our_side.rows, &our_side.sessions, &our_side.explain);
            compare_rows(pg_rows, ours, case.rows, &what, &mut failures);
            compare_connections(pg_sessions, sessions, SHARDS, &what, &mut failures);
            let (pg, sb) =
                (fixed_order(timeline(pg_sessions), async_capable), fixed_order(timeline(sessions), async_capable));
            compare_order(&pg, &sb, &what, &mut failures);
            // EXPLAIN ANALYZE as PostgreSQL prints it: InitPlan headings, `$0`, the
            // remote `$1::numeric`, the subquery's relations named pt_3…, the loops.
            let pg_explain = coordinator.psql(&format!("EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) {query}"));
            if case.explain_async || !async_capable {
                failures.extend(explain_analyze_difference(&pg_explain, our_explain, &what));
            }
        }
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}
