// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! The wire-protocol client and the executor against real PostgreSQL servers: each
//! test starts its own clusters on free ports (and stops them), loads the seeds' table
//! `t(a, b, c)`, runs Append over two foreign scans through `TcpHost` in sync and async
//! mode, and checks the simulated shard answers a failing query exactly as PostgreSQL
//! does. The clusters come from tests/support/pg.rs.

mod support;

use pgasync::clock::Clock;
use pgasync::executor::estate::{EState, ExecError};
use pgasync::executor::{init_plan, InitContext};
use pgasync::host::sim::{LinkParams, SimHost};
use pgasync::host::tcp::TcpHost;
use pgasync::plan::{AggCall, AggFunc, AggStrategy, Expr, ForeignScanPlan, Plan, RemoteQuery};
use pgasync::remote::{ForeignServer, ServerOptions};
use pgasync::run::QueryRun;
use pgasync::sim::ShardServer;
use pgasync::types::{Catalog, ColType, Column, Datum, Table};
use std::net::SocketAddr;
use std::time::Instant;
use support::pg::{free_port, Cluster, TempDir};

const ROWS: i64 = 5000;

fn t_columns() -> Vec<Column> {
    vec![Column::new("a", ColType::Int), Column::new("b", ColType::Int), Column::new("c", ColType::Text)]
}

/// The same rows in a real table and in a simulated shard's table.
fn load(cluster: &Cluster, table: &str, first: i64) -> Table {
    cluster.psql(&format!(
        "create role pgasync login; create table {table} (a int, b int, c text); \
         insert into {table} select i % 100, i, to_char(i, 'FM00000') from generate_series({first}, {}) i; \
         grant select on {table} to pgasync; analyze {table};",
        first + ROWS - 1
    ));
    let mut t = Table::new(table, t_columns());
    for i in first..first + ROWS {
        t.push_row(&[Datum::Int(i % 100), Datum::Int(i), Datum::text(&format!("{i:05}"))]);
    }
    t
}

fn plan(tables: &[&str]) -> Plan {
    let children = tables
        .iter()
        .enumerate()
        .map(|(k, t)| {
            Plan::ForeignScan(ForeignScanPlan {
                relation: format!("ft{}", k + 1),
                server: format!("s{}", k + 1),
                remote: RemoteQuery::scan(t, t_columns(), &[0]),
                alias: None,
            })
        })
        .collect();
    Plan::Agg {
        child: Box::new(Plan::Append { children, prune: None, ordered: false }),
        strategy: AggStrategy::Plain,
        group_by: vec![],
        aggs: vec![AggCall { func: AggFunc::Sum, arg: Some(Expr::Col(0)), distinct: false }],
        split: pgasync::plan::AggSplit::Simple,
    }
}

fn estate(n: usize, async_mode: bool, clock: Clock) -> EState {
    let servers = (0..n)
        .map(|k| ForeignServer {
            name: format!("s{}", k + 1),
            options: ServerOptions { async_capable: true, fetch_size: 100 },
        })
        .collect();
    EState::new(clock, servers, async_mode, true)
}

fn real_run(addrs: &[SocketAddr], p: &Plan, async_mode: bool) -> QueryRun<TcpHost> {
    let start = Instant::now();
    let mut es = estate(addrs.len(), async_mode, Clock::from_host(Box::new(move || start.elapsed().as_nanos() as u64)));
    let root = init_plan(p, &InitContext { catalog: &Catalog::default() }, &mut es).unwrap();
    QueryRun::new(es, root, TcpHost::new(addrs), p.output_columns())
}

fn sim_run(tables: Vec<Table>, p: &Plan, async_mode: bool) -> QueryRun {
    let mut es = estate(tables.len(), async_mode, Clock::virtual_clock());
    let root = init_plan(p, &InitContext { catalog: &Catalog::default() }, &mut es).unwrap();
    let shards = tables
        .into_iter()
        .enumerate()
        .map(|(k, t)| {
            let mut c = Catalog::default();
            c.add(t);
            ShardServer::new(&format!("s{}", k + 1), c, k as i32 + 1)
        })
        .collect::<Vec<_>>();
    let links = vec![LinkParams::default(); shards.len()];
    QueryRun::new(es, root, SimHost::new(shards, links), p.output_columns())
}

#[test]
fn append_over_real_postgres_shards_sync_and_async() {
    let (c1, c2) = (Cluster::start("s1"), Cluster::start("s2"));
    let t1 = load(&c1, "t1", 0);
    let t2 = load(&c2, "t2", ROWS);
    let expected: i64 = (0..2 * ROWS).map(|i| i % 100).sum();
    let p = plan(&["t1", "t2"]);
    for async_mode in [false, true] {
        let mut r = real_run(&[c1.addr(), c2.addr()], &p, async_mode);
        r.run_to_end().unwrap_or_else(|e| panic!("async={async_mode}: {e}"));
        assert_eq!(r.rows, vec![vec![Datum::Int(expected)]], "async={async_mode}");
        assert!(r.leftovers().is_empty(), "{:?}", r.leftovers());
        let text = r.explain_text();
        assert_eq!(text.matches("Async Foreign Scan").count(), if async_mode { 2 } else { 0 }, "{text}");
        assert!(text.contains(&format!("rows={ROWS} loops=1")), "{text}");
    }
    // The simulated shards answer the same protocol with the same rows.
    let mut s = sim_run(vec![t1, t2], &p, true);
    s.run_to_end().unwrap();
    assert_eq!(s.rows, vec![vec![Datum::Int(expected)]]);
}

#[test]
fn remote_errors_match_between_postgres_and_the_simulated_shard() {
    let c1 = Cluster::start("err");
    let t1 = load(&c1, "t1", 0);
    let p = plan(&["no_such_table"]);
    for async_mode in [false, true] {
        let mut real = real_run(&[c1.addr()], &p, async_mode);
        let Err(ExecError::Remote(re)) = real.run_to_end() else { panic!("expected a remote error") };
        assert!(real.leftovers().is_empty(), "{:?}", real.leftovers());
        let mut sim = sim_run(vec![t1.clone()], &p, async_mode);
        let Err(ExecError::Remote(se)) = sim.run_to_end() else { panic!("expected a remote error") };
        assert_eq!(re.message, "relation \"public.no_such_table\" does not exist");
        assert_eq!(
            (&se.message, se.position, &se.sqlstate),
            (&re.message, re.position, &re.sqlstate),
            "async={async_mode}"
        );
        assert!(re.position.is_some());
    }
}

/// A port that was free when asked for can be taken before the server binds it (test
/// binaries run side by side, each starting clusters): the start is tried again on a
/// new port, and the first failure is the server's own "Address already in use".
#[test]
fn a_cluster_whose_port_is_taken_starts_on_another() {
    let dir = TempDir::new("taken");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_port = taken.local_addr().unwrap().port();
    let mut first = Some(taken_port);
    let log = dir.path.join("log");
    let c = Cluster::start_in_on(&dir.path, "taken", &[], &log, || first.take().unwrap_or_else(free_port));
    assert_ne!(c.port, taken_port);
    assert_eq!(c.psql("select 1").trim(), "1");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("Address already in use"), "the first start's log: {text}");
}
