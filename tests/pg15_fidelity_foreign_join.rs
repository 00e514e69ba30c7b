// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! postgres_fdw's join pushdown against PostgreSQL 15 (issue 23, item 5): a join of
//! two foreign tables on one server is one Foreign Scan whose Remote SQL joins them
//! (`Relations: (public.f) INNER JOIN (public.dim d)`), chosen by cost against the
//! local join paths, and async-capable under an Append like any foreign scan.
//!
//! For each query, the sandbox and a real PostgreSQL 15 coordinator (one shard per
//! `-- @shard` section, set up by the same text) must give:
//! - EXPLAIN (VERBOSE, COSTS OFF) equal line for line (planned, not run);
//! - EXPLAIN (VERBOSE) with costs equal line for line for the plans whose nodes are
//!   all foreign scans (both sides analyzed: the estimates are postgres_fdw's);
//! - EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) equal with times masked, with
//!   `enable_async_append` off and on (the union of two pushed joins on two servers
//!   runs them as Async Foreign Scans);
//! - the same rows, as multisets.
//!
//! Each `CREATE SERVER` is followed, on PostgreSQL only, by its port and host
//! (tests/support/sqlfile.rs).

mod support;

use pgasync::clock::Clock;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::{explain_doc_text, ExplainOptions};
use pgasync::knobs::{Knobs, Source};
use support::pg::*;
use support::sqlfile::{mask, parse_rows, run_on_postgres};

const SETUP: &str = "\
-- @shard s1
create table f_remote (id int, cat text, val bigint, score numeric);
create table dim (cat text, title text, weight int);

-- @shard s2
create table f_remote (id int, cat text, val bigint, score numeric);
create table dim (cat text, title text, weight int);

-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create server s2 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create user mapping for public server s1;
create user mapping for public server s2;
create foreign table f (id int, cat text, val bigint, score numeric) server s2 options (table_name 'f_remote');
create foreign table dim (cat text, title text, weight int) server s2;
create foreign table f1 (id int, cat text, val bigint, score numeric) server s1 options (table_name 'f_remote');
create foreign table dim1 (cat text, title text, weight int) server s1 options (table_name 'dim');
insert into f select i, 'c' || (i % 6), i * 3 - 700, (i % 80) * 0.5 from generate_series(1, 500) i;
insert into f (id, val) select i, i from generate_series(501, 520) i;
insert into dim values ('c0', 'zero', 10), ('c1', 'one', 20), ('c2', 'two', 30), ('c3', 'three', 40),
  ('c4', 'four', 50), ('c7', 'seven', null);
insert into f1 select i, 'c' || (i % 4), i, i * 0.5 from generate_series(1, 200) i;
insert into dim1 values ('c0', 'zero', 1), ('c1', 'one', 2), ('c5', 'five', 5);
create table loc (id int, cat text, qty int);
insert into loc select i, 'c' || (i % 4), i % 9 from generate_series(1, 300) i;
analyze f, dim, f1, dim1, loc;
";

/// Joins PostgreSQL 15 pushes to the server (inner, left, right, full; conditions on
/// either side; an inequality between the sides), aggregates over them (with
/// HAVING), a pushed join inside a join of three relations, and a union of two
/// pushed joins on two servers (async).
const QUERIES: &[&str] = &[
    "select f.id, f.cat, d.title from f join dim d on f.cat = d.cat where f.id < 20",
    "select f.id, d.title from f left join dim d on f.cat = d.cat and d.weight > 20 where f.id < 10",
    "select f.id, d.title from f right join dim d on f.cat = d.cat where d.weight > 10",
    "select f.id, d.title from dim d right join f on f.cat = d.cat where f.id < 10",
    "select f.id, d.title from f full join dim d on f.cat = d.cat",
    "select * from f join dim d on f.cat = d.cat and f.val > d.weight",
    "select d.title, count(*) from f join dim d on f.cat = d.cat group by d.title",
    "select d.cat, d.title, count(f.id) from dim d left join f on f.cat = d.cat group by d.cat, d.title",
    "select count(*) from f join dim d on f.cat = d.cat",
    "select d.title, sum(f.val), max(f.val) from f join dim d on f.cat = d.cat group by d.title having max(f.val) > 0",
    "select f.id, d.title, loc.cat, loc.qty from f join dim d on f.cat = d.cat join loc on loc.id = f.id where f.id < 50",
    "select loc.id, f.id, d.title from loc left join f on loc.id = f.id left join dim d on f.cat = d.cat where loc.id < 20",
    "select f1.id, e.title from f1 join dim1 e on f1.cat = e.cat where f1.id < 30 \
     union all select f.id, d.title from f join dim d on f.cat = d.cat where f.id < 30",
];

fn sandbox_explain(base: &SqlScenario, explain: &str) -> String {
    let s = base.with_query(&format!("{explain};")).unwrap_or_else(|e| panic!("{explain}: {e}"));
    let tree = s.plan_only(&Knobs::default(), Source::Json, true).unwrap_or_else(|e| panic!("{explain}: {e}"));
    let opts = ExplainOptions { verbose: explain.contains("VERBOSE"), counters: false };
    explain_doc_text(&tree, &opts, &s.explain_doc(), 0, 0)
}

/// The sandbox's run of `q`: its rows and its EXPLAIN (ANALYZE, VERBOSE, COSTS OFF).
fn sandbox_run(base: &SqlScenario, q: &str, async_mode: bool) -> (Vec<Vec<String>>, String) {
    let s = base.with_query(&format!("{q};")).unwrap_or_else(|e| panic!("{q}: {e}"));
    let scenario = s.scenario(&Knobs::default(), Source::Json).unwrap_or_else(|e| panic!("{q}: {e}"));
    let mut run = scenario.start(async_mode, Clock::virtual_clock(), false).unwrap();
    run.keep_rows = true;
    run.run_to_end().unwrap_or_else(|e| panic!("{q}: the run failed: {e}"));
    // psql's unaligned output prints NULL as nothing.
    let text = |d: &pgasync::types::Datum| if d.is_null() { String::new() } else { d.to_string() };
    let rows = run.rows.iter().map(|r| r.iter().map(text).collect()).collect();
    (rows, run.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE))
}

fn sorted(mut v: Vec<Vec<String>>) -> Vec<Vec<String>> {
    v.sort();
    v
}

#[test]
fn joins_on_one_server_are_pushed_as_postgres_15_pushes_them() {
    let base = SqlScenario::load(SETUP).expect("the setup loads");
    let dir = TempDir::new("foreignjoin");
    let clusters = run_on_postgres(SETUP, &dir);
    let coord = &clusters["coordinator"];
    let mut failures = vec![];
    for q in QUERIES {
        for explain in ["EXPLAIN (VERBOSE, COSTS OFF)", "EXPLAIN (VERBOSE)"] {
            let ours = sandbox_explain(&base, &format!("{explain} {q}"));
            let theirs = coord.psql(&format!("{explain} {q}"));
            // With costs, only where every node is a foreign scan (the estimates are
            // postgres_fdw's, not the local join paths').
            let all_foreign = theirs.lines().all(|l| !l.contains("(cost=") || l.contains("Foreign Scan"));
            if (explain.contains("COSTS OFF") || all_foreign) && ours.trim_end() != theirs.trim_end() {
                failures.push(format!("{explain} {q}\n--- sandbox\n{ours}\n--- PostgreSQL\n{theirs}"));
            }
        }
        for async_mode in [false, true] {
            let (rows, ours) = sandbox_run(&base, q, async_mode);
            let set = format!("SET enable_async_append = {};", if async_mode { "on" } else { "off" });
            let theirs = coord.psql(&format!("{set} EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) {q}"));
            // A Hash node's memory line is PostgreSQL's alone (the sandbox does not print it).
            let masked = |t: &str| -> Vec<String> {
                mask(t).into_iter().filter(|l| !l.trim_start().starts_with("Buckets:")).collect()
            };
            if masked(&ours) != masked(&theirs) {
                failures.push(format!("{q} (async {async_mode})\n--- sandbox\n{ours}\n--- PostgreSQL\n{theirs}"));
            }
            let pg_rows = parse_rows(&coord.psql(q));
            if sorted(rows) != sorted(pg_rows) {
                failures.push(format!("{q} (async {async_mode}): the rows differ"));
            }
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n\n"));
}
