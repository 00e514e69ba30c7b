// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! Joins of three and more foreign tables on one server pushed to it as one Foreign
//! Scan, and partitionwise joins of three relations (issue 23, item 5), against
//! PostgreSQL 15: postgres_fdw's `foreign_join_ok` over join relations that are
//! themselves pushed joins (`Relations: ((public.a) INNER JOIN (public.b)) INNER
//! JOIN (public.c)`, the remote SQL's nested joins), inside `standard_join_search`
//! (crate/coordinator_sql/joinrels.rs), and `try_partitionwise_join` for three
//! relations partitioned alike, each child join pushed to its server
//! (crate/coordinator_sql/partitionwise_joinrels.rs).
//!
//! Two tests:
//! - **plans**: for each query, EXPLAIN (VERBOSE, COSTS OFF) equal line for line;
//!   EXPLAIN (VERBOSE) with costs equal line for line where every node with a cost
//!   is a Foreign Scan (the estimates are postgres_fdw's local ones, both sides
//!   analyzed); EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) with times masked, async off
//!   and on; the same rows as multisets.
//! - **wire**: a partitionwise join of three tables whose two pairs of partitions
//!   are on two servers, each child join one Foreign Scan, under an Append (async
//!   when the servers are `async_capable`): the statements each shard receives, per
//!   connection, are PostgreSQL 15's, and in sync mode their order across shards too
//!   (tests/support/fidelity.rs).
//!
//! Each `CREATE SERVER` is followed, on PostgreSQL only, by its port and host
//! (tests/support/sqlfile.rs).

mod support;

use pgasync::behaviour::Preset;
use pgasync::clock::Clock;
use pgasync::coordinator_sql::statement::parse_statements;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::{explain_doc_text, ExplainOptions};
use pgasync::knobs::{Knobs, Source};
use support::fidelity::{as_postgres_user, compare_connections, compare_order, fixed_order, row_text, start_over_tcp};
use support::pg::*;
use support::sqlfile::{mask, parse_rows, run_on_postgres};

const SETUP: &str = "\
-- @shard s1
create table ta (id int, x int, t text);
create table tb (id int, y int, u text);
create table tc (id int, z int, v text);
create table pa1 (id int, x int, t text);
create table pb1 (id int, y int, u text);
create table pc1 (id int, z int, v text);

-- @shard s2
create table pa2 (id int, x int, t text);
create table pb2 (id int, y int, u text);
create table pc2 (id int, z int, v text);

-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create server s2 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create user mapping for public server s1;
create user mapping for public server s2;
create foreign table a (id int, x int, t text) server s1 options (table_name 'ta');
create foreign table b (id int, y int, u text) server s1 options (table_name 'tb');
create foreign table c (id int, z int, v text) server s1 options (table_name 'tc');
create table pa (id int, x int, t text) partition by range (id);
create foreign table pa1 partition of pa for values from (0) to (300) server s1;
create foreign table pa2 partition of pa for values from (300) to (600) server s2;
create table pb (id int, y int, u text) partition by range (id);
create foreign table pb1 partition of pb for values from (0) to (300) server s1;
create foreign table pb2 partition of pb for values from (300) to (600) server s2;
create table pc (id int, z int, v text) partition by range (id);
create foreign table pc1 partition of pc for values from (0) to (300) server s1;
create foreign table pc2 partition of pc for values from (300) to (600) server s2;
create table loc (id int, qty int);
insert into a select i, i % 10, 'a' || i from generate_series(1, 200) i;
insert into b select i * 2, i % 7, 'b' || i from generate_series(1, 120) i;
insert into c select i * 3, i % 5, 'c' || i from generate_series(1, 90) i;
insert into c (id, z) values (null, 1);
insert into pa select i * 2, i % 10, 'a' || i from generate_series(0, 299) i;
insert into pb select i * 3, i % 7, 'b' || i from generate_series(0, 199) i;
insert into pc select i * 5, i % 4, 'c' || i from generate_series(0, 119) i;
insert into loc select i, i % 9 from generate_series(1, 100) i;
analyze a, b, c, pa, pa1, pa2, pb, pb1, pb2, pc, pc1, pc2, loc;
";

/// Three foreign tables on s1 joined every way PostgreSQL 15 pushes down, a fourth
/// relation (local) above a pushed join of three, and partitionwise joins of three
/// (each child join pushed to its server).
const QUERIES: &[&str] = &[
    "select a.id, b.u, c.v from a join b on a.id = b.id join c on c.id = b.id",
    "select a.id, b.u, c.v from a join b on a.id = b.id join c on c.id = a.id where a.x < 5 and c.z > 1",
    "select a.id, b.y, c.z from a left join b on a.id = b.id left join c on c.id = a.id",
    "select a.id, b.u, c.v from a join b on a.id = b.id left join c on c.id = b.id and c.z < 3",
    "select a.t, b.u, c.v from a right join b on a.id = b.id join c on c.id = b.id",
    "select a.id, b.id, c.id from a full join b on a.id = b.id full join c on c.id = a.id",
    "select a.id, b.u, c.v, loc.qty from a join b on a.id = b.id join c on c.id = a.id join loc on loc.id = a.id",
    "select a.id, b.u, c.v from a join b on a.id = b.id join c on c.id = a.id order by a.id desc limit 5",
    "select c.z, count(*), sum(a.x) from a join b on a.id = b.id join c on c.id = a.id group by c.z",
    "set enable_partitionwise_join = on; select pa.id, pb.u, pc.v from pa join pb on pa.id = pb.id join pc on pc.id = pa.id",
    "set enable_partitionwise_join = on; select pa.x, count(*) from pa join pb on pa.id = pb.id join pc on pc.id = pb.id group by pa.x",
    "set enable_partitionwise_join = on; select pa.id, pb.y, pc.z from pa left join pb on pa.id = pb.id left join pc on pc.id = pa.id where pa.x < 3",
];

fn sandbox_explain(base: &SqlScenario, sets: &str, explain: &str) -> String {
    let mut s = base.with_query(&format!("{explain};")).unwrap_or_else(|e| panic!("{explain}: {e}"));
    for st in parse_statements(sets, 1).unwrap() {
        s.cluster.execute(0, &st).unwrap_or_else(|e| panic!("{sets}: {e}"));
    }
    let tree = s.plan_only(&Knobs::default(), Source::Json, true).unwrap_or_else(|e| panic!("{explain}: {e}"));
    let opts = ExplainOptions { verbose: explain.contains("VERBOSE"), counters: false };
    explain_doc_text(&tree, &opts, &s.explain_doc(), 0, 0)
}

/// The sandbox's run of `q`: its rows and its EXPLAIN (ANALYZE, VERBOSE, COSTS OFF).
fn sandbox_run(base: &SqlScenario, sets: &str, q: &str, async_mode: bool) -> (Vec<Vec<String>>, String) {
    let mut s = base.with_query(&format!("{q};")).unwrap_or_else(|e| panic!("{q}: {e}"));
    for st in parse_statements(sets, 1).unwrap() {
        s.cluster.execute(0, &st).unwrap_or_else(|e| panic!("{sets}: {e}"));
    }
    let scenario = s.scenario(&Knobs::default(), Source::Json).unwrap_or_else(|e| panic!("{q}: {e}"));
    let mut run = scenario.start(async_mode, Clock::virtual_clock(), false).unwrap();
    run.keep_rows = true;
    run.run_to_end().unwrap_or_else(|e| panic!("{q}: the run failed: {e}"));
    // psql's unaligned output prints NULL as nothing.
    let text = |d: &pgasync::types::Datum| if d.is_null() { String::new() } else { d.to_string() };
    let rows = run.rows.iter().map(|r| r.iter().map(text).collect()).collect();
    (rows, run.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE))
}

/// [`mask`], without the lines the sandbox prints of no plan (a Hash's `Buckets:`, a
/// Sort's `Sort Method:`), and each `Output:` line's columns as a set: a base
/// relation's scan returns its columns in table order in the sandbox, in its
/// `reltarget`'s order in PostgreSQL (a pushed join's Remote SQL is compared as it is).
fn normalized(text: &str) -> Vec<String> {
    mask(text)
        .into_iter()
        .filter(|l| !l.trim_start().starts_with("Buckets:") && !l.trim_start().starts_with("Sort Method:"))
        .map(|l| match l.find("Output: ") {
            Some(i) => {
                let mut cols: Vec<&str> = l[i + "Output: ".len()..].split(", ").collect();
                cols.sort_unstable();
                format!("{}Output: {}", &l[..i], cols.join(", "))
            }
            None => l,
        })
        .collect()
}

fn sorted(mut v: Vec<Vec<String>>) -> Vec<Vec<String>> {
    v.sort();
    v
}

/// `set …;` statements before the query, and the query.
fn split_sets(q: &str) -> (String, String) {
    match q.rfind("; ") {
        Some(i) => (q[..=i].to_string(), q[i + 2..].to_string()),
        None => (String::new(), q.to_string()),
    }
}

#[test]
fn joins_of_three_foreign_tables_are_pushed_as_postgres_15_pushes_them() {
    let base = SqlScenario::load(SETUP).expect("the setup loads");
    let dir = TempDir::new("foreignjoin3");
    let clusters = run_on_postgres(SETUP, &dir);
    let coord = &clusters["coordinator"];
    let mut failures = vec![];
    for q in QUERIES {
        let (sets, q) = split_sets(q);
        for explain in ["EXPLAIN (VERBOSE, COSTS OFF)", "EXPLAIN (VERBOSE)"] {
            let ours = sandbox_explain(&base, &sets, &format!("{explain} {q}"));
            let theirs = coord.psql(&format!("{sets} {explain} {q}"));
            // With costs, only where every node is a foreign scan (the estimates are
            // postgres_fdw's, not the local join paths').
            let all_foreign = theirs.lines().all(|l| !l.contains("(cost=") || l.contains("Foreign Scan"));
            if (explain.contains("COSTS OFF") || all_foreign) && normalized(&ours) != normalized(&theirs) {
                failures.push(format!("{sets} {explain} {q}\n--- sandbox\n{ours}\n--- PostgreSQL\n{theirs}"));
            }
        }
        for async_mode in [false, true] {
            let (rows, ours) = sandbox_run(&base, &sets, &q, async_mode);
            let set = format!("SET enable_async_append = {};", if async_mode { "on" } else { "off" });
            let theirs = coord.psql(&format!("{sets} {set} EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) {q}"));
            if normalized(&ours) != normalized(&theirs) {
                failures.push(format!("{q} (async {async_mode})\n--- sandbox\n{ours}\n--- PostgreSQL\n{theirs}"));
            }
            let pg_rows = parse_rows(&coord.psql(&format!("{sets} {q}")));
            if sorted(rows) != sorted(pg_rows) {
                failures.push(format!("{q} (async {async_mode}): the rows differ"));
            }
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n\n"));
}

/// The wire test's coordinator: pa, pb, pc range-partitioned alike, the first
/// partitions on s1, the second on s2 (`ports`: PostgreSQL's, None for the sandbox).
fn wire_coordinator(ports: Option<&[u16]>, async_capable: bool) -> String {
    let mut sql = String::from("create extension postgres_fdw;\n");
    for k in 1..=2 {
        let addr = ports.map_or(String::new(), |p| format!("host '127.0.0.1', port '{}', ", p[k - 1]));
        sql.push_str(&format!(
            "create server s{k} foreign data wrapper postgres_fdw options ({addr}dbname 'postgres', \
             async_capable '{async_capable}');\n\
             create user mapping for {} server s{k}{};\n",
            if ports.is_some() { "postgres" } else { "public" },
            if ports.is_some() { " options (user 'postgres')" } else { "" },
        ));
    }
    for (t, col, step) in WIRE_TABLES {
        sql.push_str(&format!(
            "create table {t} (id int, {col} int) partition by range (id);\n\
             create foreign table {t}1 partition of {t} for values from (0) to (100) server s1;\n\
             create foreign table {t}2 partition of {t} for values from (100) to (200) server s2;\n"
        ));
        // The sandbox's shards get the rows the real ones have (its ANALYZE samples them).
        if ports.is_none() {
            sql.push_str(&format!(
                "insert into {t} select i * {step}, i * {step} % 7 from generate_series(0, {}) i;\n",
                199 / step
            ));
        }
    }
    sql.push_str("analyze pa, pa1, pa2, pb, pb1, pb2, pc, pc1, pc2;\n");
    sql
}

/// The wire test's tables: name, second column, and the step between ids.
const WIRE_TABLES: [(&str, &str, usize); 3] = [("pa", "x", 1), ("pb", "y", 2), ("pc", "z", 3)];

const WIRE_QUERY: &str = "select pa.id, pb.y, pc.z from pa join pb on pa.id = pb.id join pc on pc.id = pa.id";

/// The shards' tables: `t<k>` for t in pa, pb, pc on shard k, every id of its range
/// (pb's even ones, pc's multiples of 3).
fn load_wire_shard(c: &Cluster, k: usize) {
    let (lo, hi) = ((k - 1) * 100, k * 100 - 1);
    let mut sql =
        String::from("DO $$ BEGIN CREATE ROLE pgasync LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;\n");
    for (t, col, step) in WIRE_TABLES {
        sql.push_str(&format!(
            "create table {t}{k} (id int, {col} int);\n\
             insert into {t}{k} select i, i % 7 from generate_series({lo}, {hi}) i where i % {step} = 0;\n\
             grant select on {t}{k} to pgasync;\n"
        ));
    }
    c.psql(&sql);
}

#[test]
fn a_partitionwise_join_of_three_tables_pushed_per_server_sends_what_postgres_15_sends() {
    let shards = ShardSet::start(2);
    for k in 1..=2 {
        load_wire_shard(&shards.clusters[k - 1], k);
    }
    let ports: Vec<u16> = shards.clusters.iter().map(|c| c.port).collect();
    let sets = "set enable_partitionwise_join = on;";
    let mut failures = vec![];
    for async_capable in [false, true] {
        let what = if async_capable { "async" } else { "sync" };
        let coordinator = Cluster::start("coordinator");
        coordinator.psql(&wire_coordinator(Some(&ports), async_capable));
        let explain = coordinator.psql(&format!("{sets} EXPLAIN (VERBOSE, COSTS OFF) {WIRE_QUERY}"));
        let pushed = explain.matches("Relations: ((").count();
        let want_async = if async_capable { 2 } else { 0 };
        if !explain.starts_with("Append") || pushed != 2 || explain.matches("Async Foreign Scan").count() != want_async
        {
            failures.push(format!("{what}: PostgreSQL's plan is not an Append of two pushed joins:\n{explain}"));
        }
        // PostgreSQL 15.
        let mark = shards.mark();
        let out = coordinator.psql(&format!("{sets} {WIRE_QUERY}"));
        let pg_sessions = shards.sessions_since(mark);
        let mut pg_rows: Vec<String> = out.lines().filter(|l| !l.is_empty()).map(str::to_string).collect();
        pg_rows.sort();
        // The sandbox, pg15, over TCP on the same shards (its own shard tables empty).
        let mut text = String::new();
        for k in 1..=2 {
            text.push_str(&format!(
                "-- @shard s{k}\ncreate table pa{k} (id int, x int);\ncreate table pb{k} (id int, y int);\n\
                 create table pc{k} (id int, z int);\n"
            ));
        }
        text.push_str(&format!("-- @coordinator\n{}-- @query\n{WIRE_QUERY};\n", wire_coordinator(None, async_capable)));
        let mut sql = SqlScenario::load(&text).unwrap_or_else(|e| panic!("{e}"));
        for st in parse_statements(sets, 1).unwrap() {
            sql.cluster.execute(0, &st).unwrap_or_else(|e| panic!("{sets}: {e}"));
        }
        let knobs = Knobs { behaviour: Some(Preset::Pg15), ..Default::default() };
        let sc = sql.scenario(&knobs, Source::Json).unwrap_or_else(|e| panic!("{e}"));
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
        if ours != pg_rows || ours.is_empty() {
            failures.push(format!("{what}: rows differ\nPostgreSQL: {pg_rows:?}\npgasync: {ours:?}"));
        }
        compare_connections(&pg_sessions, &sessions, 2, &what, &mut failures);
        let (p, s) =
            (fixed_order(timeline(&pg_sessions), async_capable), fixed_order(timeline(&sessions), async_capable));
        if !async_capable {
            compare_order(&p, &s, &what, &mut failures);
        }
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}
