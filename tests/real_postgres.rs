#![cfg(not(target_arch = "wasm32"))]
//! The wire-protocol client and the executor against real PostgreSQL servers: each
//! test starts its own clusters on free ports (and stops them), loads the seeds' table
//! `t(a, b, c)`, runs Append over two foreign scans through `TcpHost` in sync and async
//! mode, and checks the simulated shard answers a failing query exactly as PostgreSQL
//! does.

use pgasync::clock::Clock;
use pgasync::estate::{EState, ExecError};
use pgasync::executor::{init_plan, InitContext};
use pgasync::host_tcp::TcpHost;
use pgasync::plan::{AggCall, AggFunc, AggStrategy, Expr, ForeignScanPlan, Plan, RemoteQuery};
use pgasync::remote::{ForeignServer, ServerOptions};
use pgasync::run::QueryRun;
use pgasync::sim::{LinkParams, ShardServer, SimHost};
use pgasync::types::{Catalog, ColType, Column, Datum, Table};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const ROWS: i64 = 5000;

fn pg_bin(name: &str) -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL server binaries not found in /usr/lib/postgresql: install Debian's postgresql package (make test's setup does)")
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join(name).exists())
        .collect();
    versions.sort();
    versions.pop().expect("no PostgreSQL bin directory").join(name)
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0")).unwrap_or(false)
}

/// Runs a PostgreSQL program, as the `postgres` user when we are root (the server
/// refuses to run as root).
fn run_pg(args: &[&str]) {
    let mut cmd = if is_root() {
        let line = args.iter().map(|a| format!("'{a}'")).collect::<Vec<_>>().join(" ");
        let mut c = Command::new("su");
        c.args(["postgres", "-s", "/bin/sh", "-c", &line]);
        c
    } else {
        let mut c = Command::new(args[0]);
        c.args(&args[1..]);
        c
    };
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A throwaway cluster, stopped and removed on drop.
struct Cluster {
    dir: PathBuf,
    port: u16,
}

impl Cluster {
    fn start(tag: &str) -> Cluster {
        let dir = std::env::temp_dir().join(format!("pgasync-{tag}-{}-{}", std::process::id(), free_port()));
        std::fs::create_dir_all(&dir).unwrap();
        if is_root() {
            run_chown(&dir);
        }
        let port = free_port();
        let data = dir.join("data");
        let (initdb, pg_ctl) = (pg_bin("initdb"), pg_bin("pg_ctl"));
        run_pg(&[
            initdb.to_str().unwrap(),
            "-D",
            data.to_str().unwrap(),
            "-U",
            "postgres",
            "-A",
            "trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ]);
        let opts = format!("-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off", dir.display());
        let log = dir.join("log");
        run_pg(&[
            pg_ctl.to_str().unwrap(),
            "-D",
            data.to_str().unwrap(),
            "-l",
            log.to_str().unwrap(),
            "-o",
            &opts,
            "-w",
            "start",
        ]);
        Cluster { dir, port }
    }

    fn psql(&self, sql: &str) {
        let out = Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-q",
                "-c",
                sql,
            ])
            .output()
            .expect("psql runs");
        assert!(out.status.success(), "psql: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn addr(&self) -> SocketAddr {
        format!("127.0.0.1:{}", self.port).parse().unwrap()
    }
}

fn run_chown(dir: &Path) {
    let ok = Command::new("chown").args(["postgres:postgres", dir.to_str().unwrap()]).status().unwrap().success();
    assert!(ok, "chown {dir:?}");
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let pg_ctl = pg_bin("pg_ctl");
        let _ = std::panic::catch_unwind(|| {
            run_pg(&[pg_ctl.to_str().unwrap(), "-D", data.to_str().unwrap(), "-m", "immediate", "stop"])
        });
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

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
            })
        })
        .collect();
    Plan::Agg {
        child: Box::new(Plan::Append { children }),
        strategy: AggStrategy::Plain,
        group_by: vec![],
        aggs: vec![AggCall { func: AggFunc::Sum, arg: Some(Expr::Col(0)) }],
    }
}

fn estate(n: usize, async_mode: bool, clock: Clock) -> EState {
    let servers = (0..n)
        .map(|k| ForeignServer {
            name: format!("s{}", k + 1),
            options: ServerOptions { async_capable: true, fetch_size: 100, pipeline: false },
        })
        .collect();
    EState::new(clock, servers, async_mode, true)
}

fn real_run(addrs: &[SocketAddr], p: &Plan, async_mode: bool) -> QueryRun<TcpHost> {
    let start = Instant::now();
    let mut es = estate(addrs.len(), async_mode, Clock::from_host(Box::new(move || start.elapsed().as_nanos() as u64)));
    let root = init_plan(p, &InitContext { catalog: &Catalog::default() }, &mut es).unwrap();
    QueryRun::new(es, root, TcpHost::connect(addrs).unwrap(), p.output_columns())
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
        assert_eq!(re.message, "relation \"no_such_table\" does not exist");
        assert_eq!(
            (&se.message, se.position, &se.sqlstate),
            (&re.message, re.position, &re.sqlstate),
            "async={async_mode}"
        );
        assert!(re.position.is_some());
    }
}
