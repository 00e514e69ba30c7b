// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).

//! PostgreSQL 15 fidelity of an InitPlan's value in the select list over a
//! partitioned table (issue 17). `SELECT a, b, (SELECT count(*) FROM f3) FROM pt`,
//! pt partitioned over foreign partitions on two servers: PostgreSQL pushes the
//! target list, `$0` with it, into each partition's scan
//! (`apply_scanjoin_target_to_paths`), and attaches the InitPlan to the top node, the
//! Append (`Output: pt_1.a, pt_1.b, $0` in each scan). The InitPlan runs lazily: the
//! first time a projection evaluates `$0` (ExecEvalParamExec → ExecSetParamPlan),
//! that is inside the first row a member scan returns — with async_capable, after the
//! Append has sent every member its request (DECLARE and FETCH on both connections).
//! The InitPlan's own scans then meet those connections: a connection whose FETCH is
//! still in flight is drained first (postgres_fdw's `process_pending_request`, from
//! `create_cursor`, or from `postgresForeignAsyncConfigureWait` for an async Append
//! inside the InitPlan) before its DECLARE goes out.
//!
//! The variants: the InitPlan's relation on a third server (s3), on the first
//! partition's server, on the second's (in an expression with the row's column), and
//! the InitPlan itself over the partitioned table (an async Append of its own over
//! the same two connections), with and without a WHERE (250 rows a shard, several
//! FETCHes at fetch_size 100).
//!
//! The sandbox in `pg15`, over TCP on the same shards, must send what a PostgreSQL 15
//! coordinator with postgres_fdw sends: per connection the same statements in the
//! same order, across shards the same order of what is waited for (all but the
//! FETCHes in async mode; not compared where it depends on which shard answers first),
//! the same rows, and EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) line for line (times
//! masked); sync and async, fetch_size 100 and 1000. Missing PostgreSQL binaries fail
//! the test (`make test` installs them).

mod support;

use support::fidelity::{
    check_postgres_plan, compare_connections, compare_order, compare_rows, explain_analyze_difference, fixed_order,
    loaded_shards, partitioned_pt_sql, postgres_side, sandbox_script_of, sandbox_side, servers_sql, set_servers_sql,
    start_coordinator,
};
use support::pg::*;

/// s1 and s2 hold pt's partitions (t1, t2), s3 the plain foreign table f3 (t3).
const SHARDS: usize = 3;
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
    /// Is the order across shards (DECLAREs, CLOSEs, COMMITs) independent of which
    /// shard answers first in async mode? Not when the InitPlan has an async Append
    /// of its own: its request to the connection whose FETCH is still in flight waits
    /// (`produce_tuple_asynchronously` with a `pendingAreq`), the other one's DECLARE
    /// goes out first.
    fixed_across: bool,
}

const CASES: &[Case] = &[
    // On a third server: its connection is opened at ExecInit (the InitPlan is
    // initialized first), its DECLARE goes out after both partitions' requests.
    Case {
        sql: "SELECT a, b, (SELECT count(*) FROM f3 WHERE a < 5) AS n FROM pt",
        rows: 2 * ROWS,
        plan_has: &["InitPlan 1 (returns $0)", "Output: pt_1.a, pt_1.b, $0", "Foreign Scan on public.pt2 pt_2"],
        async_scans: 2,
        fixed_across: true,
    },
    // On the first partition's server (pt1 read directly): the connection of the
    // main scan c2; if the second shard answers first, c2's FETCH is drained before
    // the InitPlan's DECLARE (create_cursor → process_pending_request).
    Case {
        sql: "SELECT a, b, (SELECT count(*) FROM pt1 WHERE a < 5) AS n FROM pt WHERE a < 3",
        rows: 3 * 2 * ROWS / 100,
        plan_has: &["InitPlan 1 (returns $0)", "Output: pt_1.a, pt_1.b, $0", "SELECT count(*) FROM public.t1"],
        async_scans: 2,
        fixed_across: true,
    },
    // On the second partition's server, the value in an expression with the row's
    // (sum, not max: PostgreSQL plans max as an ordered LIMIT 1, planagg.c).
    Case {
        sql: "SELECT a, (SELECT sum(a) FROM pt2) - b AS n FROM pt WHERE a < 3",
        rows: 3 * 2 * ROWS / 100,
        plan_has: &["InitPlan 1 (returns $0)", "Output: pt_1.a, ($0 - pt_1.b)", "SELECT sum(a) FROM public.t2"],
        async_scans: 2,
        fixed_across: true,
    },
    // Over the partitioned table itself: an async Append inside the InitPlan, on the
    // main Append's two connections, one of them (at least) with a FETCH in flight.
    Case {
        sql: "SELECT a, b, (SELECT count(*) FROM pt WHERE a < 5) AS n FROM pt WHERE a < 3",
        rows: 3 * 2 * ROWS / 100,
        plan_has: &[
            "InitPlan 1 (returns $0)",
            "Output: pt_1.a, pt_1.b, $0",
            "SELECT NULL FROM public.t2 WHERE ((a < 5))",
        ],
        async_scans: 4,
        fixed_across: false,
    },
    // The same without a WHERE: 250 rows a shard, the main scans FETCH again after
    // the InitPlan has run.
    Case {
        sql: "SELECT b, (SELECT count(*) FROM pt WHERE a < 5) AS n FROM pt",
        rows: 2 * ROWS,
        plan_has: &["InitPlan 1 (returns $0)", "Output: pt_2.b, $0"],
        async_scans: 4,
        fixed_across: false,
    },
    // A Merge Append of the remotely sorted partitions (ordered by a, not the key):
    // ExecMergeAppend reads the first member's first row, whose projection runs the
    // InitPlan on s2, before it starts the second member (DECLARE c3 on s2 after the
    // InitPlan's c1). Synchronous in both modes.
    Case {
        sql: "SELECT a, (SELECT count(*) FROM pt2 WHERE a < 5) AS n FROM pt ORDER BY a",
        rows: 2 * ROWS,
        plan_has: &["Merge Append", "InitPlan 1 (returns $0)", "Output: pt_1.a, $0"],
        async_scans: 0,
        fixed_across: true,
    },
    // Fewer rows: a Sort over the Append (async), the InitPlan attached to the Sort;
    // the first row the Sort reads runs it (sync: before the second partition starts).
    Case {
        sql: "SELECT a, (SELECT count(*) FROM pt2 WHERE a < 5) AS n FROM pt WHERE b % 7 = 0 ORDER BY a",
        rows: 2 * ROWS / 7 + 1,
        plan_has: &["Sort Key: pt.a", "InitPlan 1 (returns $0)", "Output: pt_1.a, $0"],
        async_scans: 2,
        fixed_across: true,
    },
];

/// The sandbox's side of the schema (the shards' tables are `load_t`'s: b is
/// 0..249 on the first shard, 250..499 on the second, 500..749 on the third).
fn sandbox_script(fetch: usize) -> String {
    sandbox_script_of(SHARDS, "", &coordinator_objects(fetch, None))
}

/// The servers, user mappings and tables of the coordinator (with the shards' ports
/// for PostgreSQL's; the sandbox's servers are addressed by the TCP host).
fn coordinator_objects(fetch: usize, ports: Option<&[u16]>) -> String {
    let mut s = servers_sql(SHARDS, fetch, ports);
    s.push_str(&partitioned_pt_sql(2, ROWS));
    s.push_str("create foreign table f3 (a int, b int, c text) server s3 options (table_name 't3');\n");
    s
}

#[test]
fn an_initplan_in_the_select_list_over_partitions_sends_what_postgres_15_sends() {
    let shards = loaded_shards(SHARDS, ROWS);
    let coordinator = start_coordinator(&shards, |ports| coordinator_objects(100, Some(ports)));
    let mut failures = vec![];
    for (case, fetch, async_capable) in
        CASES.iter().flat_map(|c| [100, 1000].into_iter().flat_map(move |f| [(c, f, false), (c, f, true)]))
    {
        let query = case.sql;
        let what = format!("{query} {} fetch_size={fetch}", if async_capable { "async" } else { "sync" });
        coordinator.psql(&set_servers_sql(SHARDS, async_capable, fetch));
        // PostgreSQL 15: its plan must be the one this test is about.
        let async_scans = if async_capable { case.async_scans } else { 0 };
        check_postgres_plan(&coordinator, query, case.plan_has, async_scans, &what, &mut failures);
        let pg_side = postgres_side(&coordinator, &shards, query);
        let our_side = match sandbox_side(&sandbox_script(fetch), query, async_capable, &shards, &what, &mut failures) {
            Ok(side) => side,
            Err(e) => {
                failures.push(format!("{what}: the sandbox does not plan it: {e}"));
                continue;
            }
        };
        let (pg_rows, pg_sessions) = (&pg_side.rows, &pg_side.sessions);
        let (ours, sessions, our_explain) = (&our_side.rows, &our_side.sessions, &our_side.explain);
        compare_rows(pg_rows, ours, case.rows, &what, &mut failures);
        compare_connections(pg_sessions, sessions, SHARDS, &what, &mut failures);
        // Lazily: the InitPlan's cursor (c1, numbered first at ExecInit) is declared
        // only after a main scan's, by the projection of that scan's first row.
        for (who, sessions) in [("PostgreSQL", pg_sessions), ("pgasync", sessions)] {
            let first = timeline(sessions).into_iter().find(|l| l.contains(": DECLARE c"));
            if first.as_deref().is_none_or(|l| l.contains(": DECLARE c1 ")) {
                failures.push(format!("{what}: {who} declares the InitPlan's cursor first: {first:?}"));
            }
        }
        if case.fixed_across || !async_capable {
            let (pg, sb) =
                (fixed_order(timeline(pg_sessions), async_capable), fixed_order(timeline(sessions), async_capable));
            compare_order(&pg, &sb, &what, &mut failures);
        }
        // EXPLAIN ANALYZE as PostgreSQL prints it: the InitPlan under the Append, `$0`
        // in each member scan's Output, the loops.
        let pg_explain = coordinator.psql(&format!("EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) {query}"));
        failures.extend(explain_analyze_difference(&pg_explain, our_explain, &what));
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}
