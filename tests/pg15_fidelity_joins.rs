// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! PostgreSQL 15 fidelity of the plans beyond Append (issue 18): on a real PostgreSQL 15
//! coordinator with postgres_fdw, Robert Haas's plan R — an Append over one Hash Join
//! per shard, each a foreign table on its own server joined to a local table — runs
//! synchronously (no `Async` under a join, `async_capable` on or off). The sandbox in
//! `pg15`, over TCP on the same shards, must send what that coordinator sends: per
//! connection the same statements in the same order, across shards the same order of
//! what is waited for (for R everything: nothing is asynchronous), and the same rows.
//!
//! Kyotaro Horiguchi's K — a Nested Loop over two Appends of foreign tables, planned
//! with `enable_hashjoin` and `enable_mergejoin` off — likewise: PostgreSQL 15 puts a
//! Materialize over the inner Append, and both Appends run their foreign scans
//! asynchronously when `async_capable` is on (they are Appends' direct children).
//! With `enable_material` off too (K-rescan), the inner Append is rescanned for each
//! outer row (ExecReScanAppend), and each Foreign Scan under it restarts as
//! postgresReScanForeignScan does against a PostgreSQL 15 server: after more than one
//! batch `CLOSE cN`, waited for, shard after shard, and a new DECLARE on the next pass;
//! after a single batch nothing is sent (the batch in memory is read again).
//!
//! The shards and their statement logs are tests/pg15_fidelity.rs's (tests/support/pg.rs).
//! Missing PostgreSQL binaries fail the test (`make test` installs them).

mod support;

use pgasync::behaviour::Preset;
use pgasync::knobs::Knobs;
use pgasync::scenario::Scenario;
use support::fidelity::{
    as_postgres_user, compare_connections, compare_order, fixed_order, loaded_shards, row_text, start_over_tcp,
};
use support::pg::*;

const SHARDS: usize = 4;

/// The coordinator's servers `sN` on the shards (sync, fetch_size 100) and their
/// user mappings.
fn servers(shards: &ShardSet) -> String {
    let mut sql = String::new();
    for k in 0..SHARDS {
        let s = format!("s{}", k + 1);
        sql.push_str(&format!(
            "CREATE SERVER {s} FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '{}', \
             dbname 'postgres', async_capable 'false', fetch_size '100');\n\
             CREATE USER MAPPING FOR postgres SERVER {s} OPTIONS (user 'postgres');\n",
            shards.clusters[k].port
        ));
    }
    sql
}

/// R's coordinator: servers s1…s4 (one per shard), foreign tables ft1…ft4 over t1…t4,
/// local tables l1…l4 (a in 0..49, c = 'lK_a'), as `scenario::build_join` has them.
struct JoinFixture {
    shards: ShardSet,
    coordinator: Cluster,
}

impl JoinFixture {
    fn start(rows: usize) -> JoinFixture {
        let shards = loaded_shards(SHARDS, rows);
        let coordinator = Cluster::start("coordinator");
        // Servers and user mappings first, then the tables, as tests/support/pg.rs's
        // Fixture creates them: the user mappings' OIDs decide the order in which
        // pgfdw_xact_callback walks the connection hash table (the COMMITs' order).
        let mut sql = String::from("CREATE EXTENSION postgres_fdw;\n");
        sql.push_str(&servers(&shards));
        for n in 1..=SHARDS {
            sql.push_str(&format!(
                "CREATE FOREIGN TABLE ft{n} (a int, b int, c text) SERVER s{n} OPTIONS (table_name 't{n}');\n"
            ));
        }
        for n in 1..=SHARDS {
            sql.push_str(&format!(
                "CREATE TABLE l{n} (a int, c text);\n\
                 INSERT INTO l{n} SELECT a, 'l{n}_' || a FROM generate_series(0, 49) a;\n\
                 ANALYZE l{n};\n"
            ));
        }
        coordinator.psql(&sql);
        JoinFixture { shards, coordinator }
    }

    fn configure(&self, async_capable: bool, fetch_size: usize) {
        let sql: String = (1..=SHARDS)
            .map(|n| {
                format!(
                    "ALTER SERVER s{n} OPTIONS (SET async_capable '{async_capable}', SET fetch_size '{fetch_size}');\n"
                )
            })
            .collect();
        self.coordinator.psql(&sql);
    }
}

/// R as SQL: the union of the four joins.
fn r_sql() -> String {
    let parts: Vec<String> = (1..=SHARDS)
        .map(|n| format!("SELECT ft{n}.a, ft{n}.b, l{n}.a, l{n}.c FROM ft{n} JOIN l{n} ON ft{n}.a = l{n}.a"))
        .collect();
    parts.join(" UNION ALL ")
}

/// K's coordinator: o1, o2 (keys 0..9 and 10..19, b = a * 1000) on s1, s2 as fo1,
/// fo2; t3, t4 on s3, s4 as ft3, ft4 (`scenario::build_nestloop`).
fn start_k(rows: usize) -> JoinFixture {
    let shards = ShardSet::start(SHARDS);
    for k in 0..SHARDS {
        let c = &shards.clusters[k];
        if k < SHARDS / 2 {
            let n = k + 1;
            c.psql(&format!(
                "DO $$ BEGIN CREATE ROLE pgasync LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$; \
                 CREATE TABLE o{n} (a int, b int); \
                 INSERT INTO o{n} SELECT a, a * 1000 FROM generate_series({first}, {last}) a; \
                 GRANT SELECT ON o{n} TO pgasync; ANALYZE o{n};",
                first = k * 10,
                last = k * 10 + 9
            ));
        } else {
            load_t(c, &format!("t{}", k + 1), k, rows);
        }
    }
    let coordinator = Cluster::start("coordinator");
    let mut sql = String::from("CREATE EXTENSION postgres_fdw;\n");
    sql.push_str(&servers(&shards));
    for n in 1..=SHARDS {
        if n <= SHARDS / 2 {
            sql.push_str(&format!(
                "CREATE FOREIGN TABLE fo{n} (a int, b int) SERVER s{n} OPTIONS (table_name 'o{n}');\n"
            ));
        } else {
            sql.push_str(&format!(
                "CREATE FOREIGN TABLE ft{n} (a int, b int, c text) SERVER s{n} OPTIONS (table_name 't{n}');\n"
            ));
        }
    }
    coordinator.psql(&sql);
    JoinFixture { shards, coordinator }
}

/// K as SQL, with the settings that make PostgreSQL plan a Nested Loop.
fn k_sql() -> String {
    "SET enable_hashjoin TO off; SET enable_mergejoin TO off; \
     SELECT o.a, o.b, t.a, t.b FROM (SELECT a, b FROM fo1 UNION ALL SELECT a, b FROM fo2) o \
     JOIN (SELECT a, b FROM ft3 UNION ALL SELECT a, b FROM ft4) t ON o.a = t.a"
        .to_string()
}

/// K with `enable_material` off too: PostgreSQL 15 rescans the inner Append for each
/// outer row (ExecReScanAppend, its requests reset), and each Foreign Scan under it
/// restarts its cursor as postgresReScanForeignScan does: `MOVE BACKWARD ALL IN cN`
/// after more than one batch (fetch_size 100), nothing at all after one (1000: the
/// batch in memory is read again).
fn k_rescan_sql() -> String {
    format!("SET enable_material TO off; {}", k_sql())
}

#[test]
fn r_in_pg15_sends_what_postgres_15_sends() {
    compare("R", &JoinFixture::start(250), &r_sql(), 250);
}

#[test]
fn k_in_pg15_sends_what_postgres_15_sends() {
    compare("K", &start_k(250), &k_sql(), 250);
}

#[test]
fn k_rescanning_its_inner_append_sends_what_postgres_15_sends() {
    compare("K-rescan", &start_k(250), &k_rescan_sql(), 250);
}

/// The built-in scenario a comparison runs: K-rescan is K without the Materialize
/// over the inner Append (what `enable_material = off` makes PostgreSQL plan).
fn scenario_for(id: &str, knobs: &Knobs) -> Scenario {
    let mut sc = Scenario::build(id.trim_end_matches("-rescan"), knobs).expect("the scenario builds");
    if id == "K-rescan" {
        if let pgasync::plan::Plan::NestLoop { inner, .. } = &mut sc.plan {
            if let pgasync::plan::Plan::Material { child } = inner.as_mut() {
                let append = std::mem::replace(
                    child.as_mut(),
                    pgasync::plan::Plan::Append { children: vec![], prune: None, ordered: false },
                );
                **inner = append;
            }
        }
        assert!(!format!("{:?}", sc.plan).contains("Material"), "{:?}", sc.plan);
    }
    sc
}

fn compare(id: &str, f: &JoinFixture, sql: &str, rows: usize) {
    let mut failures = vec![];
    for fetch in [100, 1000] {
        for async_capable in [false, true] {
            let what = format!("{id} {} fetch_size={fetch}", if async_capable { "async" } else { "sync" });
            f.configure(async_capable, fetch);
            // PostgreSQL 15.
            let (settings, query) = sql.rsplit_once("; ").map_or(("", sql), |(a, b)| (a, b));
            let settings = if settings.is_empty() { String::new() } else { format!("{settings}; ") };
            let explain = f.coordinator.psql(&format!("{settings}EXPLAIN (VERBOSE, COSTS OFF) {query}"));
            let plan_ok = match id {
                "R" => explain.matches("Hash Join").count() == SHARDS && !explain.contains("Async"),
                "K-rescan" => {
                    explain.contains("Nested Loop")
                        && !explain.contains("Materialize")
                        && explain.matches("Async Foreign Scan").count() == if async_capable { SHARDS } else { 0 }
                }
                _ => {
                    explain.contains("Nested Loop")
                        && explain.contains("Materialize")
                        && explain.matches("Async Foreign Scan").count() == if async_capable { SHARDS } else { 0 }
                }
            };
            if !plan_ok {
                failures.push(format!("{what}: PostgreSQL's plan is not {id}'s:\n{explain}"));
            }
            let mark = f.shards.mark();
            let out = f.coordinator.psql(sql);
            let pg_sessions = f.shards.sessions_since(mark);
            let mut pg_rows: Vec<String> = out.lines().filter(|l| !l.is_empty()).map(str::to_string).collect();
            pg_rows.sort();
            // The sandbox, pg15.
            let knobs = Knobs {
                shards: Some(SHARDS),
                rows_per_shard: Some(rows),
                fetch_size: Some(fetch),
                behaviour: Some(Preset::Pg15),
                ..Default::default()
            };
            let sc = scenario_for(id, &knobs);
            let mark = f.shards.mark();
            let mut ours: Vec<String> = {
                let mut run = start_over_tcp(&sc, async_capable, &f.shards.addrs());
                if let Err(e) = run.run_to_end() {
                    failures.push(format!("{what}: the sandbox's run failed: {e}"));
                }
                run.rows.iter().map(|r| row_text(r)).collect()
            };
            ours.sort();
            let mut sessions = f.shards.sessions_since(mark);
            as_postgres_user(&mut sessions);
            if ours != pg_rows {
                failures.push(format!(
                    "{what}: rows differ ({} from PostgreSQL, {} from pgasync)",
                    pg_rows.len(),
                    ours.len()
                ));
            }
            compare_connections(&pg_sessions, &sessions, SHARDS, &what, &mut failures);
            let (pg, sb) =
                (fixed_order(timeline(&pg_sessions), async_capable), fixed_order(timeline(&sessions), async_capable));
            compare_order(&pg, &sb, &what, &mut failures);
        }
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}
