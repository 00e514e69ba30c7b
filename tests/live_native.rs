// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! The native TCP host against real PostgreSQL 15 shards: every built-in scenario
//! with remote shards, its simulated shards' data loaded into real clusters (one per
//! foreign server), run in `pg15` and `improved` behaviour, sync and async. The rows
//! must equal the scenario's reference (computed from the same data) and, where
//! `postgres_sql` writes the query (C, D, E, F, G, pf1), what a real PostgreSQL
//! coordinator with postgres_fdw returns over the same shards; and nothing may be left
//! behind: no open transaction, no busy connection, no backend still in a query.

mod support;

use pgasync::behaviour::Preset;
use pgasync::clock::Clock;
use pgasync::host::tcp::TcpHost;
use pgasync::knobs::Knobs;
use pgasync::sql_text::coordinator::{coordinator_ddl, coordinator_query};
use pgasync::run::QueryRun;
use pgasync::scenario::Scenario;
use pgasync::sql_text::load::load_sql;
use std::net::SocketAddr;
use std::time::Instant;
use support::pg::Cluster;

/// Scenarios that read remote shards (A and B are local only).
const REMOTE: &[&str] = &["C", "D", "E", "F", "G", "pf1", "M", "X"];

fn knobs(preset: Preset) -> Knobs {
    Knobs {
        shards: Some(3),
        rows_per_shard: Some(700),
        fetch_size: Some(50),
        behaviour: Some(preset),
        ..Default::default()
    }
}

/// One cluster per foreign server of the scenario, loaded with that server's tables.
fn start_shards(sc: &Scenario) -> Vec<Cluster> {
    sc.servers
        .iter()
        .map(|spec| {
            let c = Cluster::start(&format!("live-{}-{}", sc.id, spec.server.name));
            c.psql_script(&load_sql(&spec.catalog, "pgasync"));
            c
        })
        .collect()
}

fn run_live(sc: &Scenario, async_mode: bool, addrs: &[SocketAddr]) -> QueryRun<TcpHost> {
    let t0 = Instant::now();
    let clock = Clock::from_host(Box::new(move || t0.elapsed().as_nanos() as u64));
    let host = TcpHost::new(addrs);
    let writer = host.writer();
    let mut run = sc.start_on(host, async_mode, clock, false).expect("ExecInit");
    // Statements go on the wire when sent, as libpq writes them.
    run.es.writer = Some(writer);
    run.run_to_end().unwrap_or_else(|e| panic!("{} async={async_mode}: {e}", sc.id));
    run
}

/// A coordinator with postgres_fdw over the shards, as `pgasync demo` makes it.
fn start_coordinator(sc: &Scenario, shards: &[Cluster]) -> Cluster {
    let c = Cluster::start(&format!("live-{}-coordinator", sc.id));
    let port = |name: &str| {
        let k = sc.servers.iter().position(|s| s.server.name == name).unwrap();
        ("127.0.0.1".to_string(), shards[k].port)
    };
    c.psql_script(&coordinator_ddl(sc, port, "postgres", "pgasync"));
    c
}

#[test]
fn every_remote_scenario_returns_the_reference_rows_from_real_shards() {
    let mut compared_with_postgres = vec![];
    for id in REMOTE {
        let data = Scenario::build(id, &knobs(Preset::Pg15)).unwrap();
        let shards = start_shards(&data);
        let addrs: Vec<SocketAddr> = shards.iter().map(Cluster::addr).collect();
        // What PostgreSQL itself returns, where its SQL plans alike (postgres_sql.rs).
        let postgres_says = coordinator_query(&data).map(|q| {
            let coord = start_coordinator(&data, &shards);
            let out = coord.psql(&q);
            compared_with_postgres.push(*id);
            (q, out.trim().to_string())
        });
        for preset in [Preset::Pg15, Preset::Improved] {
            let sc = Scenario::build(id, &knobs(preset)).unwrap();
            for async_mode in [false, true] {
                let ctx = format!("{id} {} async={async_mode}", preset.name());
                let run = run_live(&sc, async_mode, &addrs);
                assert!(sc.matches_reference(&run.rows), "{ctx}: rows differ from the reference");
                if let Some((q, pg)) = &postgres_says {
                    let ours: Vec<String> = run.rows.iter().map(|r| r[0].to_string()).collect();
                    assert_eq!(&ours.join("\n"), pg, "{ctx}: PostgreSQL's own answer to {q}");
                }
                assert!(run.leftovers().is_empty(), "{ctx}: {:?}", run.leftovers());
                drop(run); // Terminate on every connection
                for c in &shards {
                    let busy =
                        c.psql("SELECT count(*) FROM pg_stat_activity WHERE usename = 'pgasync' AND state <> 'idle'");
                    assert!(busy.trim() == "0" || busy.trim().is_empty(), "{ctx}: backends still busy: {busy}");
                }
            }
        }
    }
    assert_eq!(
        compared_with_postgres,
        ["C", "D", "E", "F", "G", "pf1"],
        "scenarios checked against PostgreSQL's answer"
    );
}
