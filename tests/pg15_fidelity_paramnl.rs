// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! PostgreSQL 15 fidelity of the parameterized Nested Loop over an async Append
//! (issue 23 item 5, issue 17's "a Nested Loop that rescans an async Append"): on a
//! real PostgreSQL 15 coordinator with postgres_fdw, `pt` range-partitioned on `b`
//! over three foreign partitions on two servers (pt1 and pt3 on s1, pt2 on s2) with
//! `use_remote_estimate` on, and a small local table `l`:
//!
//! - `SELECT * FROM l JOIN pt ON pt.b = l.b WHERE l.id = 1` is a Nested Loop whose
//!   inner side is an Append of (async) Foreign Scans with `WHERE (($1::integer =
//!   b))`: the one outer row's value prunes the Append at run time, so two
//!   partitions are `(never executed)` and one returns rows=1; only its cursor is
//!   declared, with `$1` bound to the row's `b`;
//! - with `enable_hashjoin`, `enable_mergejoin` and `enable_material` off, the same
//!   join over the three rows of `l` rescans the Append for each (ExecReScanAppend
//!   with the parameter changed): each loop runs the one partition its row's `b`
//!   falls in (loops=1 each), each declares its cursor with its value, and none is
//!   closed before ExecEnd (a child pruned away is not rescanned).
//!
//! Without `use_remote_estimate` PostgreSQL builds no parameterized foreign path at
//! all (postgresGetForeignPaths), whatever the `enable_*` settings: the test checks
//! that too, and the sandbox agrees. With it PostgreSQL sends `EXPLAIN …` statements
//! to the shards while planning (its remote estimates); the sandbox's shards here
//! hold no rows (the run goes to the real ones), so its answers are not theirs and
//! those statements are left out of the comparison (tests/pg15_fidelity_remote_estimate.rs
//! compares them). Everything the executor sends is compared:
//! per connection the same statements in the same order, across shards the same
//! order of what is waited for, the same rows, the same bound parameter values, and
//! EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) line for line (times masked); sync and
//! async, fetch_size 100 and 1000. Missing PostgreSQL binaries fail the test (`make
//! test` installs them).

mod support;

use pgasync::behaviour::Preset;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::{explain_text_with, ExplainOptions};
use pgasync::knobs::{Knobs, Source};
use support::fidelity::{
    bound_parameters, compare_connections, compare_order, explain_analyze_difference, fixed_order, row_text,
    servers_sql_with, start_coordinator, start_over_tcp,
};
use support::pg::*;

const SHARDS: usize = 2;
const ROWS: usize = 250;
/// The partitions: (name, remote table, server number, shard holding it, first b).
const PARTS: [(&str, &str, usize, usize, usize); 3] =
    [("pt1", "t1", 1, 0, 0), ("pt2", "t2", 2, 1, 250), ("pt3", "t3", 1, 0, 500)];
/// The local table's rows: (id, b, c), one `b` in each partition.
const LOCAL: &str = "(1, 10, 'x'), (2, 260, 'y'), (3, 510, 'z')";

struct Case {
    /// `SET …;` statements before the query (in the sandbox's script and psql's session).
    settings: &'static str,
    sql: &'static str,
    rows: usize,
    /// Text PostgreSQL's EXPLAIN (VERBOSE, COSTS OFF) must contain.
    plan_has: &'static [&'static str],
    /// How many times PostgreSQL's EXPLAIN ANALYZE says `(never executed)`.
    never_executed: usize,
    /// DECLAREs with a bound `$1`.
    params: usize,
    /// `use_remote_estimate` on the servers.
    remote_estimate: bool,
    /// Async mode is compared statement for statement and line for line too (not
    /// when which scan answers first decides what is sent: only the rows then).
    async_exact: bool,
}

const CASES: &[Case] = &[
    Case {
        settings: "",
        sql: "SELECT * FROM l JOIN pt ON pt.b = l.b WHERE l.id = 1",
        rows: 1,
        plan_has: &["Nested Loop", "SELECT a, b, c FROM public.t3 WHERE (($1::integer = b))"],
        never_executed: 2,
        params: 1,
        remote_estimate: true,
        async_exact: true,
    },
    Case {
        settings: "SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off;",
        sql: "SELECT * FROM l JOIN pt ON pt.b = l.b",
        rows: 3,
        plan_has: &["Nested Loop", "SELECT a, b, c FROM public.t2 WHERE (($1::integer = b))"],
        never_executed: 0,
        params: 3,
        remote_estimate: true,
        async_exact: true,
    },
    // The parameter on a column that is not the partition key: no pruning, each loop
    // requests every partition at once (async: three scans in flight, two sharing s1's
    // connection), and each rescan closes every cursor and declares it again with the
    // new $1 (postgresReScanForeignScan with the parameter changed).
    Case {
        settings: "SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off;",
        sql: "SELECT l.id, l.b, l.c, pt.a, pt.b FROM l JOIN pt ON pt.a = l.id",
        rows: 24,
        plan_has: &["SELECT a, b FROM public.t3 WHERE (($1::integer = a))"],
        never_executed: 0,
        params: 9,
        remote_estimate: true,
        async_exact: true,
    },
    // A condition of the inner relation's own goes first in its Remote SQL, the
    // join clause after it (deparse.c's order).
    Case {
        settings: "",
        // (Every column of l: PostgreSQL's Seq Scan under a Nested Loop returns them
        // all, its physical tlist, which the sandbox does not model.)
        sql: "SELECT l.id, l.b, l.c, pt.a FROM l JOIN pt ON pt.b = l.b WHERE l.id = 2 AND pt.a < 90",
        rows: 1,
        plan_has: &["WHERE ((a < 90)) AND (($1::integer = b))"],
        never_executed: 2,
        params: 1,
        remote_estimate: true,
        async_exact: true,
    },
    // The same pruning by a changed parameter under a correlated SubPlan: its Append
    // is rescanned for each row of l with a new $1 on the partition key, and runs the
    // one partition that holds it (exec pruning chosen again at each rescan).
    Case {
        settings: "",
        sql: "SELECT l.id, (SELECT count(*) FROM pt WHERE pt.b = l.b) AS n FROM l",
        rows: 3,
        plan_has: &["SubPlan 1", "SELECT NULL FROM public.t2 WHERE ((b = $1::integer))"],
        never_executed: 0,
        params: 3,
        remote_estimate: true,
        async_exact: true,
    },
    // A semi join (EXISTS pulled up) over the parameterized Append: the first match
    // ends the outer row's pass, so the Append is rescanned with requests still in
    // flight (ExecReScanAppend cancels them); synchronously the first partition
    // always matches and the others are never executed. In async mode which scan
    // answers first decides the rest: only the rows are compared there.
    Case {
        settings: "SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off; \
                   SET enable_hashagg = off; SET enable_sort = off;",
        sql: "SELECT l.id, l.b, l.c FROM l WHERE EXISTS (SELECT 1 FROM pt WHERE pt.a = l.id)",
        rows: 3,
        plan_has: &["Nested Loop Semi Join", "SELECT a FROM public.t2 WHERE (($1::integer = a))"],
        never_executed: 2,
        params: 3,
        remote_estimate: true,
        async_exact: false,
    },
    // Without use_remote_estimate: no parameterized path, whatever the settings (a
    // Join Filter over the whole Append, rescanned per outer row).
    Case {
        settings: "SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off;",
        sql: "SELECT * FROM l JOIN pt ON pt.b = l.b WHERE l.id = 1",
        rows: 1,
        plan_has: &["Join Filter: (l.b = pt.b)", "SELECT a, b, c FROM public.t1\n"],
        never_executed: 0,
        params: 0,
        remote_estimate: false,
        async_exact: true,
    },
];

/// A shard's table with the sandbox's rows (`load_t`'s: a = b % 100).
fn load_part(c: &Cluster, table: &str, first: usize) {
    c.psql(&format!(
        "DO $$ BEGIN CREATE ROLE pgasync LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$; \
         CREATE TABLE {table} (a int, b int, c text); \
         INSERT INTO {table} SELECT b % 100, b, 'r' || b FROM generate_series({first}, {first} + {ROWS} - 1) b; \
         GRANT SELECT ON {table} TO pgasync; ANALYZE {table};"
    ));
}

/// The sandbox's side of the schema (its shards' tables are empty: the run goes to
/// the real shards over TCP).
fn sandbox_script(fetch: usize, remote_estimate: bool, settings: &str) -> String {
    let mut s = String::new();
    for n in 1..=SHARDS {
        s.push_str(&format!("-- @shard s{n}\n"));
        for (_, t, server, _, _) in PARTS.iter().filter(|p| p.2 == n) {
            let _ = server;
            s.push_str(&format!("create table {t} (a int, b int, c text);\n"));
        }
        s.push('\n');
    }
    s.push_str("-- @coordinator\ncreate extension postgres_fdw;\n");
    s.push_str(&coordinator_objects(fetch, remote_estimate, None));
    s.push_str(settings);
    s.push('\n');
    s
}

/// Servers, user mappings, `pt` and its partitions, and `l` (analyzed).
fn coordinator_objects(fetch: usize, remote_estimate: bool, ports: Option<&[u16]>) -> String {
    let options = format!("async_capable 'true', fetch_size '{fetch}', use_remote_estimate '{remote_estimate}'");
    let mut s = servers_sql_with(SHARDS, &options, ports);
    s.push_str("create table pt (a int, b int, c text) partition by range (b);\n");
    for (name, t, server, _, lo) in PARTS {
        s.push_str(&format!(
            "create foreign table {name} partition of pt for values from ({lo}) to ({}) server s{server} \
             options (table_name '{t}');\n",
            lo + ROWS
        ));
    }
    s.push_str(&format!("create table l (id int, b int, c text);\ninsert into l values {LOCAL};\nanalyze l;\n"));
    s
}

/// What the shards saw, without the planner's remote estimates (`EXPLAIN …`, sent
/// while planning with use_remote_estimate: PostgreSQL's, not the sandbox's).
fn executor_sessions(shards: &ShardSet, mark: usize) -> Vec<LogSession> {
    let mut sessions = shards.sessions_since(mark);
    for s in sessions.iter_mut() {
        // A disconnection may come from the session before the mark (psql's last one).
        let keep: Vec<bool> = s
            .statements
            .iter()
            .map(|st| !st.starts_with("statement: EXPLAIN ") && !st.starts_with("disconnection: "))
            .collect();
        let mut k = keep.iter();
        s.statements.retain(|_| *k.next().unwrap_or(&true));
        let mut k = keep.iter();
        s.seqs.retain(|_| *k.next().unwrap_or(&true));
        for st in s.statements.iter_mut() {
            if st.starts_with("connection authorized: ") {
                *st = st.replace("user=pgasync", "user=postgres");
            }
        }
    }
    sessions.retain(|s| !s.statements.is_empty());
    sessions
}

#[test]
fn parameterized_nested_loop_over_an_async_append_runs_as_postgres_15_runs_it() {
    let shards = ShardSet::start(SHARDS);
    for (_, t, _, shard, first) in PARTS {
        load_part(&shards.clusters[shard], t, first);
    }
    let coordinator = start_coordinator(&shards, |ports| coordinator_objects(100, true, Some(ports)));
    let mut failures = vec![];
    for (case, fetch, async_capable) in
        CASES.iter().flat_map(|c| [100, 1000].into_iter().flat_map(move |f| [(c, f, false), (c, f, true)]))
    {
        let query = case.sql;
        let what = format!(
            "{} {query} {} fetch_size={fetch}{}",
            case.settings,
            if async_capable { "async" } else { "sync" },
            if case.remote_estimate { "" } else { " (no use_remote_estimate)" }
        );
        let options: String = (1..=SHARDS)
            .map(|n| {
                format!(
                    "ALTER SERVER s{n} OPTIONS (SET async_capable '{async_capable}', SET fetch_size '{fetch}', \
                     SET use_remote_estimate '{}');\n",
                    case.remote_estimate
                )
            })
            .collect();
        coordinator.psql(&options);
        let session = |sql: &str| format!("{} {sql}", case.settings);
        // PostgreSQL 15: its plan must be the one this case is about.
        let explain = coordinator.psql(&session(&format!("EXPLAIN (VERBOSE, COSTS OFF) {query}")));
        let async_scans = explain.matches("Async Foreign Scan").count();
        if !(case.plan_has.iter().all(|t| explain.contains(t)) && (async_scans > 0) == async_capable) {
            failures.push(format!("{what}: PostgreSQL's plan is not the one this case is about:\n{explain}"));
        }
        let mark = shards.mark();
        let out = coordinator.psql(&session(query));
        let pg_sessions = executor_sessions(&shards, mark);
        let pg_params = bound_parameters(&shards, mark);
        let mut pg_rows: Vec<String> = out.lines().filter(|l| !l.is_empty()).map(str::to_string).collect();
        pg_rows.sort();
        // The sandbox, pg15, planned from the same SQL.
        let script = SqlScenario::load(&sandbox_script(fetch, case.remote_estimate, case.settings));
        let sc = script
            .and_then(|s| s.with_query(&format!("{query};")))
            .and_then(|s| s.scenario(&Knobs { behaviour: Some(Preset::Pg15), ..Default::default() }, Source::Cli));
        let sc = match sc {
            Ok(sc) => sc,
            Err(e) => {
                failures.push(format!("{what}: the sandbox does not plan it: {e}"));
                continue;
            }
        };
        let mark = shards.mark();
        let (mut ours, our_explain): (Vec<String>, String) = {
            let mut run = start_over_tcp(&sc, async_capable, &shards.addrs());
            if let Err(e) = run.run_to_end() {
                failures.push(format!("{what}: the sandbox's run failed: {e}"));
            }
            let text = explain_text_with(&run.explain(), &ExplainOptions::POSTGRES_VERBOSE, 0, run.elapsed_ns());
            (run.rows.iter().map(|r| row_text(r)).collect(), text)
        };
        ours.sort();
        let sessions = executor_sessions(&shards, mark);
        let our_params = bound_parameters(&shards, mark);
        let exact = case.async_exact || !async_capable;
        if exact && (pg_params.len() != case.params || pg_params != our_params) {
            failures.push(format!(
                "{what}: the DECLAREs' parameters differ\nPostgreSQL: {pg_params:?}\npgasync: {our_params:?}"
            ));
        }
        if ours != pg_rows || ours.len() != case.rows {
            failures.push(format!(
                "{what}: rows differ ({} from PostgreSQL, {} from pgasync, {} expected)\n{pg_rows:?}\n{ours:?}",
                pg_rows.len(),
                ours.len(),
                case.rows
            ));
        }
        if exact {
            compare_connections(&pg_sessions, &sessions, SHARDS, &what, &mut failures);
            let (pg, sb) =
                (fixed_order(timeline(&pg_sessions), async_capable), fixed_order(timeline(&sessions), async_capable));
            compare_order(&pg, &sb, &what, &mut failures);
        }
        let pg_explain = coordinator.psql(&session(&format!("EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) {query}")));
        if exact && pg_explain.matches("(never executed)").count() != case.never_executed {
            failures.push(format!("{what}: PostgreSQL's never-executed children are not this case's:\n{pg_explain}"));
        }
        if exact {
            failures.extend(explain_analyze_difference(&pg_explain, &our_explain, &what));
        }
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}
