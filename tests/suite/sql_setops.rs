//! Set operations, text functions, pseudoconstant quals and generate_series in the SQL
//! front end (issue 17): the rows are SQL's (set semantics with NULLs equal, as
//! PostgreSQL's set operations compare), in sync and async runs, whichever strategy
//! the planner chose (hashed, or sorted with `enable_hashagg` off), and the plan's
//! nodes are those PostgreSQL 15 builds (tests/sql_corpus.rs compares them with a real
//! server; these tests pin the rules without one).

use pgasync::clock::Clock;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::knobs::{Knobs, Source};
use wasm_bindgen_test::wasm_bindgen_test;

/// `t` is a foreign table on s1 and `loc` a local table, both with a column `a`
/// holding duplicates and NULLs, and a text column `s`.
const SETUP: &str = "-- @shard s1
create table t_remote (a int, s text);
insert into t_remote values (1, 'abc'), (1, 'abd'), (2, 'xbc'), (3, 'ABC'), (null, null), (null, 'a_c');
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create foreign table t (a int, s text) server s1 options (table_name 't_remote');
create table loc (a int, s text);
insert into loc values (1, 'abc'), (2, 'q'), (2, 'r'), (4, 's'), (null, 't');
";

/// Runs `query` (after `extra` on the coordinator) to the end: its rows as sorted text,
/// and its EXPLAIN ANALYZE.
fn run(extra: &str, query: &str, async_mode: bool) -> (Vec<String>, String) {
    let text = format!("{SETUP}{extra}\n-- @query\n{query}\n");
    let s = SqlScenario::load(&text).unwrap_or_else(|e| panic!("{query}: {e}"));
    let scenario = s.scenario(&Knobs::default(), Source::Json).unwrap_or_else(|e| panic!("{query}: {e}"));
    let mut r = scenario.start(async_mode, Clock::virtual_clock(), false).unwrap();
    r.keep_rows = true;
    r.run_to_end().unwrap_or_else(|e| panic!("{query}: {e}"));
    let mut rows: Vec<String> =
        r.rows.iter().map(|row| row.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("|")).collect();
    rows.sort();
    (rows, r.explain_text())
}

fn sorted(rows: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[wasm_bindgen_test(unsupported = test)]
fn set_operations_return_sql_rows_with_either_strategy() {
    let null = "NULL";
    let cases: [(&str, Vec<&str>); 6] = [
        ("select a from t union select a from loc", vec!["1", "2", "3", "4", null]),
        ("select a from t intersect select a from loc", vec!["1", "2", null]),
        ("select a from t intersect all select a from loc", vec!["1", "2", null]),
        ("select a from t except select a from loc", vec!["3"]),
        ("select a from t except all select a from loc", vec!["1", "3", null]),
        ("select a from loc except all select a from t", vec!["2", "4"]),
    ];
    for (query, want) in cases {
        for extra in ["", "set enable_hashagg = off;"] {
            for async_mode in [false, true] {
                let (rows, explain) = run(extra, query, async_mode);
                assert_eq!(rows, sorted(&want), "{query} [{extra}] async={async_mode}\n{explain}");
                let sorted_strategy = !extra.is_empty();
                let node = if query.contains("union") {
                    if sorted_strategy {
                        "Unique"
                    } else {
                        "HashAggregate"
                    }
                } else if sorted_strategy {
                    "SetOp "
                } else {
                    "HashSetOp "
                };
                assert!(explain.contains(node), "{query} [{extra}]: no {node}\n{explain}");
            }
        }
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn intersect_and_except_read_their_inputs_through_subquery_scans_not_async() {
    let (_, explain) = run("", "select a from t except select a from loc", true);
    assert!(explain.contains("Subquery Scan on \"*SELECT* 1\""), "{explain}");
    assert!(explain.contains("Subquery Scan on \"*SELECT* 2\""), "{explain}");
    // The Foreign Scan is under a Subquery Scan, not a member of the Append: sync.
    assert!(explain.contains("->  Foreign Scan on public.t") && !explain.contains("Async"), "{explain}");
    // A UNION's members are the scans themselves: the Append runs t asynchronously.
    let (_, explain) = run("", "select a from t union select a from loc", true);
    assert!(explain.contains("Async Foreign Scan on public.t"), "{explain}");
}

#[wasm_bindgen_test(unsupported = test)]
fn branches_keep_their_own_order_and_limit() {
    let q = "(select a from t order by a limit 2) union all (select a from loc order by a desc limit 1)";
    assert_eq!(run("", q, true).0, sorted(&["1", "1", "NULL"]));
    // ORDER BY a column the branch does not return: a Subquery Scan projects it away.
    let q = "(select a from loc order by s desc limit 2) union (select a from t where a = 3)";
    let (rows, explain) = run("", q, false);
    assert_eq!(rows, sorted(&["3", "4", "NULL"]));
    assert!(explain.contains("Subquery Scan on \"*SELECT* 1\""), "{explain}");
}

#[wasm_bindgen_test(unsupported = test)]
fn text_functions_ship_when_immutable_and_filter_locally_when_not() {
    // `_` is any one character; 'ABC' differs in case, which ILIKE would ignore.
    let (rows, explain) = run("", "select a from t where s like 'a_c' and upper(s) <> 'XBC'", true);
    assert_eq!(rows, sorted(&["1", "NULL"]));
    assert!(explain.contains("(s ~~ 'a_c')") && explain.contains("upper(s)"), "shipped:\n{explain}");
    assert!(!explain.contains("Filter:"), "nothing local:\n{explain}");
    // text || int casts the int through its output function: not shipped.
    let (rows, explain) = run("", "select s from t where s || a = 'abc1'", false);
    assert_eq!(rows, sorted(&["abc"]));
    assert!(explain.contains("Filter:"), "a local filter:\n{explain}");
    let (rows, _) = run("", "select substr(s, 2, 1), length(s) from loc where s not ilike 'A%' and a < 3", false);
    assert_eq!(rows, sorted(&["|1", "|1"]));
}

#[wasm_bindgen_test(unsupported = test)]
fn a_pseudoconstant_qual_gates_the_scan_once() {
    let (rows, explain) = run("", "select a from t where current_user = session_user and a = 2", true);
    assert_eq!(rows, sorted(&["2"]));
    assert!(explain.contains("One-Time Filter: (CURRENT_USER = SESSION_USER)"), "{explain}");
    assert!(!explain.contains("SESSION_USER)) AND") && !explain.contains("WHERE ((CURRENT_USER"), "{explain}");
    let (rows, explain) = run("", "select a from loc where current_user <> session_user", false);
    assert!(rows.is_empty());
    assert!(explain.contains("Seq Scan on public.loc (never executed)"), "{explain}");
}

#[wasm_bindgen_test(unsupported = test)]
fn generate_series_is_a_function_scan() {
    let (rows, explain) = run("", "select g * 2 from generate_series(7, 1, -3) g", false);
    assert_eq!(rows, sorted(&["14", "8", "2"]));
    assert!(explain.contains("Function Scan on pg_catalog.generate_series g"), "{explain}");
    let text = format!("{SETUP}\n-- @query\nselect * from generate_series(1, 5, 0);\n");
    let err = SqlScenario::load(&text).and_then(|s| s.plan()).err().expect("a zero step is an error");
    assert!(err.to_string().contains("step size cannot equal zero"), "{err}");
}

/// A list-partitioned `p` over two foreign partitions on s1 (h17q).
const PARTITIONED: &str = "-- @shard s1
create table p1_remote (a int, s text);
create table p2_remote (a int, s text);
insert into p1_remote values (1, 'p1');
insert into p2_remote values (2, 'p2'), (3, 'p3');
-- @coordinator
create table p (a int, s text) partition by list (a);
create foreign table p1 partition of p for values in (1) server s1 options (table_name 'p1_remote');
create foreign table p2 partition of p for values in (2, 3) server s1 options (table_name 'p2_remote');
";

/// Which members of a UNION ALL's Append run asynchronously, as PostgreSQL 15's
/// `create_append_plan` and `mark_async_capable_plan` decide (tests/sql_corpus.rs
/// compares the same rule with a real server): a Foreign Scan projects and filters
/// itself, so a local Filter and a select list keep it async; the one partition
/// pruning leaves of a partitioned table was an Append of one, never async.
#[wasm_bindgen_test(unsupported = test)]
fn union_members_are_async_where_postgres_15_makes_them_async() {
    // `s || a` does not ship: a local Filter over s and a, the scan returning a only.
    let (rows, explain) =
        run("", "select a from t where s || a = 'abc1' union all select a from loc where a > 3", true);
    assert_eq!(rows, sorted(&["1", "4"]));
    assert!(explain.contains("Async Foreign Scan on public.t"), "{explain}");
    assert!(explain.contains("Filter: ((t.s || (t.a)::text) = 'abc1'::text)"), "{explain}");
    // A computed select list: the scan's own projection.
    let (rows, explain) = run("", "select a + 1 from t where a = 3 union all select a from loc where a = 4", true);
    assert_eq!(rows, sorted(&["4", "4"]));
    assert!(explain.contains("Async Foreign Scan on public.t"), "{explain}");
    // The partition pruning left alone: a plain Foreign Scan; t beside it stays async.
    let q = "select a, s from p where a = 1 union all select a, s from t where a = 2";
    let (rows, explain) = run(PARTITIONED, q, true);
    assert_eq!(rows, sorted(&["1|p1", "2|xbc"]));
    assert!(explain.contains("->  Foreign Scan on public.p1 p"), "{explain}");
    assert!(explain.contains("Async Foreign Scan on public.t"), "{explain}");
    // Two partitions left: their own Append's members, async.
    let (rows, explain) = run(PARTITIONED, "select a from p where a < 3 union all select a from t where a = 2", true);
    assert_eq!(rows, sorted(&["1", "2", "2"]));
    assert!(explain.contains("Async Foreign Scan on public.p1 p_1"), "{explain}");
}

/// `count(*)` over a UNION ALL in FROM reads no column (`pull_up_simple_union_all`,
/// the members' empty reltargets): the foreign member sends `SELECT NULL`, the local
/// Seq Scan has no Output. (A member with a WHERE clause is no simple member:
/// PostgreSQL keeps its Subquery Scan, which the sandbox does not build; the rows are
/// the same.)
#[wasm_bindgen_test(unsupported = test)]
fn count_over_a_union_all_reads_no_column() {
    for async_mode in [false, true] {
        let (rows, explain) =
            run("", "select count(*) from (select a from t union all select a from loc) s", async_mode);
        assert_eq!(rows, ["11"]);
        assert!(explain.contains("Remote SQL: SELECT NULL FROM public.t_remote"), "{explain}");
        assert!(!explain.contains("Output: loc.a"), "{explain}");
        let (rows, explain) =
            run("", "select count(*) from (select a from t union all select a from loc where a > 1) s", async_mode);
        assert_eq!(rows, ["9"], "{explain}");
    }
}
