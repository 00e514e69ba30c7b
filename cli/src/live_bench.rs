//! `pgasync bench --live`: the same queries on real PostgreSQL 15 shards, by a real
//! PostgreSQL coordinator (postgres_fdw) and by pgasync's native TCP host, side by side.
//!
//! It starts, under `--dir` (a fresh temporary folder by default), 4 shard clusters and
//! a coordinator as `pgasync demo` does, loads scenarios E and D (`--rows` per shard),
//! and puts a delay proxy in front of each shard (127.0.0.1:0, forwarding to the shard,
//! each direction delayed by half of the `--delay-ms` round trip), so the coordinator's
//! postgres_fdw (its servers point at the proxies) and pgasync's TcpHost see the same
//! round trip. The proxy uses a thread per direction and `std::thread::sleep` (about
//! 0.06 ms late on Linux) rather than tokio's timer, whose millisecond ticks would add up
//! to 1 ms each way.
//!
//! For each scenario × delay × fetch size it prints one row: the real coordinator's
//! `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)` Execution Time with `async_capable` false
//! and true, and pgasync's Execution Time (`QueryRun::execution_ns`, its node timing
//! off too: `EState::timing`) in `pg15` and `improved` behaviour, sync and async; each the median of `--runs` runs, every run on
//! fresh connections (the coordinator calls `postgres_fdw_disconnect_all()` first, as
//! pgasync connects anew, inside the run), after one warm-up run per scenario that is
//! not counted. The six kinds of run take turns, and with more than one run a line
//! under the row gives each column's min–max, so noise shows as noise.
//!
//! Then: for E (async, pg15), the simulator's execution time with the calibration
//! profile (measured through the proxy at delay 0, `calibrate::measure`, or `--profile`)
//! and the delay added to its round trip (as measured through the proxy at that delay),
//! against the live one; and the relay's
//! figures: throughput of `SELECT * FROM t1` through `pgasync relay` (a child process)
//! against direct TCP, and the time the relay adds to a `SELECT 1` round trip.
//!
//! Figures only, nothing asserted. Progress on stderr; the table on stdout
//! (`--format tsv`: only the table on stdout, the rest on stderr). Every cluster and
//! child is stopped at the end, on error, and on SIGINT/SIGTERM (checked between runs).
//!
//! Invariants:
//! - every pgasync run's rows are checked against the scenario's reference: a run that
//!   returns other rows fails the bench instead of giving a time (the coordinator's
//!   EXPLAIN runs return no rows to check);
//! - the proxy forwards each direction's bytes in order, half the round trip late; the
//!   delay is read when a connection is accepted, and every run opens fresh
//!   connections, so each run sees its row's delay;
//! - the work folder (`--dir`, by default a new one per process) is removed, whatever it
//!   holds, before the clusters start and when they are stopped (`Clusters`'s drop).
//!
//! PostgreSQL has no counterpart: this starts PostgreSQL servers and times queries on
//! them.

use crate::args;
use crate::calibrate::{median_f, query_message, startup_message, Profile, RawPg, Replies};
use crate::demo::{cleanup, load_scenario, pg_bindir, Cluster, Opts, Pg, READER};
use crate::CliError;
use pgasync::behaviour::Preset;
use pgasync::clock::Clock;
use pgasync::host::tcp::TcpHost;
use pgasync::knobs::Knobs;
use pgasync::knobs::{parse_float, Source};
use pgasync::scenario::Scenario;
use pgasync::sql_text::coordinator::coordinator_query;
use std::io::{BufRead, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const SCENARIOS: [&str; 2] = ["E", "D"];
const SHARDS: usize = 4;

const HEADER: [&str; 12] = [
    "scenario",
    "delay_ms",
    "fetch_size",
    "postgres_sync_ms",
    "postgres_async_ms",
    "postgres_gain_pct",
    "pg15_sync_ms",
    "pg15_async_ms",
    "pg15_gain_pct",
    "improved_sync_ms",
    "improved_async_ms",
    "improved_gain_pct",
];

// ---------------------------------------------------------------------------------
// Options.

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Table,
    Tsv,
}

struct Options {
    rows: usize,
    delays: Vec<f64>,
    fetch_sizes: Vec<usize>,
    runs: usize,
    format: Format,
    dir: PathBuf,
    profile: Option<Knobs>,
}

/// `bench --live`'s flags as given (`bench::Flags` collects them), checked by `options`.
#[derive(Default)]
pub struct Flags {
    pub rows: Option<String>,
    pub delay_ms: Option<String>,
    pub fetch_size: Option<String>,
    pub runs: Option<String>,
    pub format: Option<String>,
    pub dir: Option<String>,
    pub profile: Option<String>,
}

fn options(a: &Flags) -> Result<Options, CliError> {
    let format = if args::choice("format", a.format.as_deref(), &["table", "tsv"], "table")? == "tsv" {
        Format::Tsv
    } else {
        Format::Table
    };
    let rows = args::int("rows", a.rows.as_deref(), 1000, 1_000_000)?.map_or(30_000, |n| n as usize);
    let delays = match a.delay_ms.as_deref() {
        None => vec![0.0, 2.0, 10.0],
        Some(list) => list
            .split(',')
            .map(|d| match parse_float(d) {
                Ok(x) if (0.0..=10_000.0).contains(&x) => Ok(x),
                Ok(_) => Err(format!("--delay-ms {d}: out of range (0 to 10000)")),
                Err(why) => Err(format!("--delay-ms {d}: {why}")),
            })
            .collect::<Result<_, _>>()?,
    };
    let fetch_sizes = match a.fetch_size.as_deref() {
        None => vec![100, 1000],
        Some(list) => list
            .split(',')
            .map(|f| match pgasync::knobs::parse_int(f) {
                Ok(n) if (1..=1_000_000).contains(&n) => Ok(n as usize),
                Ok(_) => Err(format!("--fetch-size {f}: out of range (1 to 1000000)")),
                Err(why) => Err(format!("--fetch-size {f}: {why}")),
            })
            .collect::<Result<_, _>>()?,
    };
    let runs = args::int("runs", a.runs.as_deref(), 1, 100)?.map_or(3, |n| n as usize);
    let dir = a
        .dir
        .as_deref()
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join(format!("pgasync-live-bench-{}", std::process::id())));
    let profile = a.profile.as_deref().map(crate::read_profile).transpose()?;
    Ok(Options { rows, delays, fetch_sizes, runs, format, dir, profile })
}

/// A line that is not part of the table: stdout under the table, stderr with tsv.
fn note(format: Format, line: &str) {
    match format {
        Format::Table => println!("{line}"),
        Format::Tsv => eprintln!("{line}"),
    }
}

fn print_line(format: Format, c: &[String]) {
    match format {
        Format::Tsv => println!("{}", c.join("\t")),
        Format::Table => {
            let mut line = format!("{:<8} {:>8} {:>10}", c[0], c[1], c[2]);
            for x in &c[3..] {
                line += &format!(" {:>17}", x);
            }
            println!("{line}");
        }
    }
}

fn progress(m: &str) {
    eprintln!("pgasync bench --live: {m}");
}

// ---------------------------------------------------------------------------------
// The clusters, stopped whatever happens.

struct Clusters {
    pg: Pg,
    dir: PathBuf,
}

impl Drop for Clusters {
    fn drop(&mut self) {
        progress("stopping the clusters");
        cleanup(&self.pg, &self.dir);
    }
}

/// A child process killed (by its pid) and reaped when dropped.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

// ---------------------------------------------------------------------------------
// The delay proxy.

struct DelayProxy {
    addr: SocketAddr,
}

/// Listens on 127.0.0.1:0 and forwards each connection to `target`, each direction
/// delayed by half the round trip in `delay_us` (read when the connection is accepted).
fn start_proxy(target: SocketAddr, delay_us: Arc<AtomicU64>) -> std::io::Result<DelayProxy> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    let addr = l.local_addr()?;
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(client) = conn else { continue };
            let half = Duration::from_micros(delay_us.load(Ordering::SeqCst) / 2);
            let Ok(server) = TcpStream::connect(target) else { continue };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else { continue };
            std::thread::spawn(move || pipe(client, server, half));
            std::thread::spawn(move || pipe(s2, c2, half));
        }
    });
    Ok(DelayProxy { addr })
}

fn pipe(mut from: TcpStream, mut to: TcpStream, half: Duration) {
    if half.is_zero() {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Write);
        return;
    }
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let writer = std::thread::spawn(move || {
        while let Ok((due, bytes)) = rx.recv() {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if tx.send((Instant::now() + half, buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        }
    }
    drop(tx);
    let _ = writer.join();
}

// ---------------------------------------------------------------------------------
// Running the queries.

/// psql's output for a script on cluster `c`, database `db`.
fn psql_out(c: &Cluster, db: &str, script: &str) -> Result<String, CliError> {
    let mut child = Command::new(&c.psql_bin)
        .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-f", "-", "-h", "127.0.0.1", "-U", "postgres"])
        .args(["-p", &c.port.to_string(), "-d", db])
        .envs(c.passfile.iter().map(|p| ("PGPASSFILE", p)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| CliError::Failed(format!("{} does not run: {e}", c.psql_bin.display())))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(script.as_bytes()).map_err(|e| CliError::Failed(format!("psql: {e}")))?;
    }
    let out = child.wait_with_output().map_err(|e| CliError::Failed(format!("psql: {e}")))?;
    if !out.status.success() {
        return Err(CliError::Failed(format!("psql ({db}): {}", String::from_utf8_lossy(&out.stderr).trim())));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The real coordinator's Execution Times (ms) of `runs` runs of `query` after `warm`
/// uncounted ones, each on fresh connections.
#[allow(clippy::too_many_arguments)]
fn postgres_runs(
    coordinator: &Cluster,
    db: &str,
    sc: &Scenario,
    fetch: usize,
    async_on: bool,
    query: &str,
    warm: usize,
    runs: usize,
) -> Result<Vec<f64>, CliError> {
    let mut script = String::new();
    for s in &sc.servers {
        script += &format!(
            "ALTER SERVER {} OPTIONS (SET fetch_size '{fetch}', SET async_capable '{async_on}');\n",
            s.server.name
        );
    }
    for _ in 0..warm + runs {
        script +=
            &format!("SELECT postgres_fdw_disconnect_all();\nEXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {query};\n");
    }
    let out = psql_out(coordinator, db, &script)?;
    let times: Vec<f64> = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Execution Time:"))
        .filter_map(|t| t.trim().trim_end_matches("ms").trim().parse().ok())
        .collect();
    if times.len() != warm + runs {
        return Err(CliError::Failed(format!(
            "EXPLAIN on the coordinator: expected {} Execution Times in:\n{out}",
            warm + runs
        )));
    }
    Ok(times[warm..].to_vec())
}

/// One pgasync run on real shards: its Execution Time, ms.
fn pgasync_once(sc: &Scenario, addrs: &[SocketAddr], db: &str, async_mode: bool) -> Result<f64, CliError> {
    let ctx = format!("pgasync {} {} async={async_mode}", sc.id, sc.behaviour.label());
    let t0 = Instant::now();
    let clock = Clock::from_host(Box::new(move || t0.elapsed().as_nanos() as u64));
    // Connections open inside the run, as postgres_fdw's do (GetConnection at ExecInit).
    let host = TcpHost::new(addrs);
    let writer = host.writer();
    let mut run = sc.start_on(host, async_mode, clock, false).map_err(CliError::Failed)?;
    run.es.set_database(db);
    // Statements go on the wire when sent, as libpq writes them (EState::writer).
    run.es.writer = Some(writer);
    run.keep_rows = true;
    // The coordinator runs EXPLAIN (ANALYZE, TIMING OFF): no clock read per node call.
    run.es.timing = false;
    run.run_to_end().map_err(|e| CliError::Failed(format!("{ctx}: {e}")))?;
    if !sc.matches_reference(&run.rows) {
        return Err(CliError::Failed(format!("{ctx}: rows differ from the reference")));
    }
    Ok(run.execution_ns() as f64 / 1e6)
}

/// The six figures of a table row, each over `runs` runs: PostgreSQL sync and async,
/// pgasync pg15 sync and async, improved sync and async. The runs are interleaved (one
/// of each kind, then the next), so that load that comes and goes on a shared machine
/// falls on every kind alike instead of on whichever ran during it.
#[allow(clippy::too_many_arguments)]
fn interleaved_runs(
    coordinator: &Cluster,
    db: &str,
    query: &str,
    id: &str,
    rows: usize,
    fetch: usize,
    addrs: &[SocketAddr],
    runs: usize,
) -> Result<[Vec<f64>; 6], CliError> {
    let base = build(id, rows, fetch, Preset::Pg15)?;
    let improved = build(id, rows, fetch, Preset::Improved)?;
    let mut out: [Vec<f64>; 6] = Default::default();
    for _ in 0..runs {
        crate::demo::check_interrupted()?;
        out[0].extend(postgres_runs(coordinator, db, &base, fetch, false, query, 0, 1)?);
        out[1].extend(postgres_runs(coordinator, db, &base, fetch, true, query, 0, 1)?);
        out[2].push(pgasync_once(&base, addrs, db, false)?);
        out[3].push(pgasync_once(&base, addrs, db, true)?);
        out[4].push(pgasync_once(&improved, addrs, db, false)?);
        out[5].push(pgasync_once(&improved, addrs, db, true)?);
    }
    Ok(out)
}

/// The spread of a column's runs: `min–max`.
fn spread(v: &[f64]) -> String {
    let min = v.iter().cloned().fold(f64::INFINITY, f64::min);
    let max = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    format!("{min:.1}–{max:.1}")
}

/// The median round trip (ms) of an empty Query through `addr` (a delay proxy), on a
/// fresh connection (the proxy reads its delay when it accepts one).
fn round_trip_ms(addr: SocketAddr, samples: usize) -> Result<f64, CliError> {
    let mut c = RawPg::connect(addr, READER, "e").map_err(CliError::Failed)?;
    c.query("").map_err(CliError::Failed)?;
    let mut v = vec![];
    for _ in 0..samples {
        v.push(c.timed("").map_err(CliError::Failed)? as f64 / 1e6);
    }
    c.close();
    Ok(median_f(v))
}

fn gain(sync: f64, asy: f64) -> String {
    if sync > 0.0 {
        format!("{:.1}", 100.0 * (1.0 - asy / sync))
    } else {
        "-".into()
    }
}

/// Which shard serves the scenario's server `name` (`sK` → shard K).
fn shard_of(name: &str) -> usize {
    name.trim_start_matches('s').parse::<usize>().map_or(0, |k| (k.max(1) - 1) % SHARDS)
}

fn build(id: &str, rows: usize, fetch: usize, preset: Preset) -> Result<Scenario, CliError> {
    let k = Knobs {
        shards: Some(SHARDS),
        rows_per_shard: Some(rows),
        fetch_size: Some(fetch),
        behaviour: Some(preset),
        ..Default::default()
    };
    Scenario::build_from(id, &k, Source::Cli).map_err(|e| CliError::Failed(format!("scenario {id}: {e}")))
}

/// The simulator's execution time (ms, virtual clock) of `sc`'s query with `knobs`.
fn simulated_ms(id: &str, knobs: &Knobs, async_mode: bool) -> Result<f64, CliError> {
    let s =
        Scenario::build_from(id, knobs, Source::Cli).map_err(|e| CliError::Failed(format!("scenario {id}: {e}")))?;
    let mut run = s.start(async_mode, Clock::virtual_clock(), false).map_err(CliError::Failed)?;
    run.run_to_end().map_err(|e| CliError::Failed(format!("simulated {id}: {e}")))?;
    Ok(run.execution_ns() as f64 / 1e6)
}

// ---------------------------------------------------------------------------------

pub fn run(flags: Flags) -> Result<(), CliError> {
    let o = options(&flags)?;
    let bin = pg_bindir().ok_or_else(|| {
        CliError::Failed(
            "PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin): no live bench".into(),
        )
    })?;
    crate::demo::on_interrupt_stop();
    let pg = Pg::new(bin)?;
    crate::demo::prepare_dir(&pg, &o.dir)?;
    let guard = Clusters { pg, dir: o.dir.clone() };
    let result = bench(&guard.pg, &o);
    drop(guard);
    result
}

fn bench(pg: &Pg, o: &Options) -> Result<(), CliError> {
    let mut shards = vec![];
    for k in 1..=SHARDS {
        progress(&format!("starting shard s{k}"));
        let c = pg.start(&o.dir, &format!("s{k}"))?;
        crate::calibrate::quiet(&c)?;
        shards.push(c);
        crate::demo::check_interrupted()?;
    }
    progress("starting the coordinator");
    let coordinator = pg.start(&o.dir, "coordinator")?;
    crate::calibrate::quiet(&coordinator)?;
    coordinator.psql("postgres", &format!("CREATE ROLE {READER} LOGIN"))?;
    let opts = Opts { dir: o.dir.clone(), shards: SHARDS, rows: o.rows, port: 0, relay_args: Vec::new() };
    for id in SCENARIOS {
        progress(&format!("loading scenario {id} ({} rows per shard)", o.rows));
        load_scenario(id, &opts, &shards, &coordinator)?;
        crate::demo::check_interrupted()?;
    }
    // A delay proxy per shard; the coordinator's servers point at them.
    let delay_us = Arc::new(AtomicU64::new(0));
    let mut proxies = vec![];
    for c in &shards {
        let target = SocketAddr::from(([127, 0, 0, 1], c.port));
        proxies.push(start_proxy(target, delay_us.clone()).map_err(|e| CliError::Failed(format!("proxy: {e}")))?);
    }
    for id in SCENARIOS {
        let sc = build(id, o.rows, 100, Preset::Pg15)?;
        let db = id.to_lowercase();
        let mut script = String::new();
        for s in &sc.servers {
            let port = proxies[shard_of(&s.server.name)].addr.port();
            script += &format!("ALTER SERVER {} OPTIONS (SET port '{port}');\n", s.server.name);
        }
        coordinator.script(&db, &script)?;
    }
    // The calibration, through the proxy at delay 0 (what the live runs see).
    let calibration: Knobs = match &o.profile {
        Some(k) => k.clone(),
        None => {
            progress("calibrating (through the proxy of s1, delay 0)");
            let p: Profile =
                crate::calibrate::measure(proxies[0].addr, READER, "e", "t1", o.rows).map_err(CliError::Failed)?;
            for line in p.report() {
                note(o.format, &format!("calibration: {line}"));
            }
            p.knobs(0.0)
        }
    };
    crate::demo::check_interrupted()?;

    print_line(o.format, &HEADER.map(String::from));
    let mut live_e_async_pg15 = vec![];
    for id in SCENARIOS {
        let db = id.to_lowercase();
        let base = build(id, o.rows, 100, Preset::Pg15)?;
        let query = coordinator_query(&base).ok_or_else(|| CliError::Failed(format!("no coordinator SQL for {id}")))?;
        let addrs: Vec<SocketAddr> = base.servers.iter().map(|s| proxies[shard_of(&s.server.name)].addr).collect();
        // One warm-up of each side (caches, hint bits), not counted.
        delay_us.store(0, Ordering::SeqCst);
        progress(&format!("{id}: warm-up"));
        postgres_runs(&coordinator, &db, &base, 100, true, &query, 1, 0)?;
        pgasync_once(&base, &addrs, &db, true)?;
        for &delay in &o.delays {
            delay_us.store((delay * 1000.0).round() as u64, Ordering::SeqCst);
            for &fetch in &o.fetch_sizes {
                crate::demo::check_interrupted()?;
                progress(&format!("{id}: delay {delay} ms, fetch_size {fetch}"));
                let runs = interleaved_runs(&coordinator, &db, &query, id, o.rows, fetch, &addrs, o.runs)?;
                let m: Vec<f64> = runs.iter().map(|v| median_f(v.clone())).collect();
                if id == "E" {
                    live_e_async_pg15.push((delay, fetch, m[3]));
                }
                let ms = |x: f64| format!("{x:.3}");
                print_line(
                    o.format,
                    &[
                        id.to_string(),
                        format!("{delay}"),
                        fetch.to_string(),
                        ms(m[0]),
                        ms(m[1]),
                        gain(m[0], m[1]),
                        ms(m[2]),
                        ms(m[3]),
                        gain(m[2], m[3]),
                        ms(m[4]),
                        ms(m[5]),
                        gain(m[4], m[5]),
                    ],
                );
                if o.runs > 1 {
                    let sp: Vec<String> = runs.iter().map(|v| spread(v)).collect();
                    note(
                        o.format,
                        &format!(
                            "  {id} {delay} ms fetch {fetch}, min–max of {} runs: postgres {} / {}, pg15 {} / {}, improved {} / {}",
                            o.runs, sp[0], sp[1], sp[2], sp[3], sp[4], sp[5]
                        ),
                    );
                }
            }
        }
    }

    // Simulated with the calibration against live, E async pg15. The round trip at
    // each delay is measured through the proxy too: its sleeps overshoot (tens of µs a
    // direction), which is part of every live round trip.
    delay_us.store(0, Ordering::SeqCst);
    let rtt0 = round_trip_ms(proxies[0].addr, 200)?;
    note(o.format, &format!("simulated with calibration ({}) vs live, E async pg15:", profile_text(&calibration)));
    for (delay, fetch, live) in live_e_async_pg15 {
        delay_us.store((delay * 1000.0).round() as u64, Ordering::SeqCst);
        let extra = if delay > 0.0 { round_trip_ms(proxies[0].addr, 50)? - rtt0 } else { 0.0 };
        let rtt = calibration.rtt_ms.unwrap_or(0.0) + extra.max(0.0);
        let k = Knobs {
            shards: Some(SHARDS),
            rows_per_shard: Some(o.rows),
            fetch_size: Some(fetch),
            behaviour: Some(Preset::Pg15),
            rtt_ms: Some(rtt),
            ..calibration.clone()
        };
        let sim = simulated_ms("E", &k, true)?;
        note(
            o.format,
            &format!(
                "  E delay {delay} ms fetch_size {fetch}: live {live:.3} ms, simulated {sim:.3} ms (round trip {rtt:.3} ms measured through the proxy), difference {:+.1}%",
                100.0 * (sim - live) / live
            ),
        );
    }
    // Said where the figures are read: the model's shards are machines of their own,
    // and this bench's are not, which matters where a round trip is mostly CPU.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < SHARDS + 1 {
        note(
            o.format,
            &format!(
                "  (the simulator gives each shard a machine of its own; here the coordinator, {SHARDS} shard backends and \
                 their {SHARDS} delay proxies share {cpus} CPUs, so where the round trip is mostly CPU (delay 0) the live \
                 run cannot overlap the shards as the simulation does)"
            ),
        );
    }
    delay_us.store(0, Ordering::SeqCst);
    crate::demo::check_interrupted()?;
    progress("relay figures");
    for line in relay_figures(&shards[0])? {
        note(o.format, &line);
    }
    Ok(())
}

fn profile_text(k: &Knobs) -> String {
    let f = |x: Option<f64>| x.map_or("default".to_string(), |v| format!("{v:.4}"));
    format!(
        "rtt_ms {}, server_query_us {}, server_row_us {}, bandwidth_mbps {}, connect_ms {}, coordinator_row_us {}, coordinator_answer_us {}, coordinator_async_us {}",
        f(k.rtt_ms),
        f(k.server_query_us),
        f(k.server_row_us),
        f(k.bandwidth_mbps),
        f(k.connect_ms),
        f(k.coordinator_row_us),
        f(k.coordinator_answer_us),
        f(k.coordinator_async_us)
    )
}

// ---------------------------------------------------------------------------------
// The relay against direct TCP.

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A PostgreSQL session through the relay's WebSocket.
struct WsPg {
    ws: Ws,
    buf: Vec<u8>,
    pos: usize,
    received: u64,
}

impl WsPg {
    async fn connect(url: &str, user: &str, db: &str) -> Result<WsPg, String> {
        let (ws, _) = tokio_tungstenite::connect_async(url).await.map_err(|e| format!("{url}: {e}"))?;
        let mut c = WsPg { ws, buf: Vec::new(), pos: 0, received: 0 };
        c.send(&startup_message(user, db)?).await?;
        c.until_ready().await?;
        Ok(c)
    }

    async fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        use futures_util::SinkExt;
        let m = tokio_tungstenite::tungstenite::Message::Binary(bytes.to_vec().into());
        self.ws.send(m).await.map_err(|e| format!("relay: {e}"))
    }

    async fn until_ready(&mut self) -> Result<u64, String> {
        use futures_util::StreamExt;
        use tokio_tungstenite::tungstenite::Message;
        let mut replies = Replies::default();
        loop {
            if replies.consume(&mut self.buf, &mut self.pos) {
                break;
            }
            match self.ws.next().await {
                Some(Ok(Message::Binary(b))) => {
                    self.received += b.len() as u64;
                    self.buf.extend_from_slice(&b);
                }
                Some(Ok(Message::Close(_))) | None => return Err("the relay closed the session".into()),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(format!("relay: {e}")),
            }
        }
        replies.result()
    }

    async fn query(&mut self, sql: &str) -> Result<u64, String> {
        self.send(&query_message(sql)?).await?;
        self.until_ready().await
    }

    async fn close(mut self) {
        let _ = self.send(&crate::calibrate::terminate_message()).await;
        let _ = self.ws.close(None).await;
    }
}

/// Starts `pgasync relay` for shard s1; returns the child and its address.
fn start_relay(shard: &Cluster) -> Result<(ChildGuard, String), CliError> {
    let exe = std::env::current_exe().map_err(|e| CliError::Failed(format!("cannot find our own binary: {e}")))?;
    let child = Command::new(exe)
        .args(["relay", "--target", &format!("s1=127.0.0.1:{}", shard.port), "--port", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| CliError::Failed(format!("cannot start the relay: {e}")))?;
    let mut guard = ChildGuard(child);
    let stdout = guard.0.stdout.take().expect("piped stdout");
    let mut lines = std::io::BufReader::new(stdout).lines();
    while let Some(Ok(line)) = lines.next() {
        // "pgasync relay: http://127.0.0.1:PORT/  (Ctrl-C to stop)"
        if let Some(rest) = line.split("http://").nth(1) {
            let addr = rest.split(['/', ' ']).next().unwrap_or("").to_string();
            return Ok((guard, addr));
        }
    }
    Err(CliError::Failed("the relay did not print its address".into()))
}

fn relay_figures(shard: &Cluster) -> Result<Vec<String>, CliError> {
    let (relay, addr) = start_relay(shard)?;
    let url = format!("ws://{addr}/shard/s1");
    let direct_addr = SocketAddr::from(([127, 0, 0, 1], shard.port));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(format!("tokio: {e}")))?;
    let fail = CliError::Failed;
    let mut direct = RawPg::connect(direct_addr, READER, "e").map_err(fail)?;
    let mut ws = rt.block_on(WsPg::connect(&url, READER, "e")).map_err(fail)?;
    const BIG: &str = "SELECT * FROM t1";
    const ONE: &str = "SELECT 1";
    direct.query(BIG).map_err(fail)?;
    rt.block_on(ws.query(BIG)).map_err(fail)?;
    // Throughput: each side for at least 0.4 s (3 queries at least), three rounds,
    // interleaved; the best round of each.
    let (mut d_mbs, mut r_mbs, mut bytes_per_query) = (0f64, 0f64, 0u64);
    for _ in 0..3 {
        crate::demo::check_interrupted()?;
        let (b0, t, mut n) = (direct.received, Instant::now(), 0);
        while n < 3 || t.elapsed() < Duration::from_millis(400) {
            direct.query(BIG).map_err(fail)?;
            n += 1;
        }
        bytes_per_query = (direct.received - b0) / n;
        d_mbs = d_mbs.max((direct.received - b0) as f64 / 1e6 / t.elapsed().as_secs_f64());
        let (b0, t, mut n) = (ws.received, Instant::now(), 0);
        while n < 3 || t.elapsed() < Duration::from_millis(400) {
            rt.block_on(ws.query(BIG)).map_err(fail)?;
            n += 1;
        }
        r_mbs = r_mbs.max((ws.received - b0) as f64 / 1e6 / t.elapsed().as_secs_f64());
    }
    // Latency: 500 SELECT 1 round trips each, twice, interleaved; the better of each.
    const N: usize = 500;
    let (mut d_us, mut r_us) = (f64::MAX, f64::MAX);
    for _ in 0..2 {
        crate::demo::check_interrupted()?;
        let t = Instant::now();
        for _ in 0..N {
            direct.query(ONE).map_err(fail)?;
        }
        d_us = d_us.min(t.elapsed().as_secs_f64() * 1e6 / N as f64);
        let t = Instant::now();
        rt.block_on(async {
            for _ in 0..N {
                ws.query(ONE).await?;
            }
            Ok::<(), String>(())
        })
        .map_err(fail)?;
        r_us = r_us.min(t.elapsed().as_secs_f64() * 1e6 / N as f64);
    }
    direct.close();
    rt.block_on(ws.close());
    drop(relay);
    Ok(vec![
        format!(
            "relay throughput ({BIG} on s1, {:.2} MB of protocol bytes a query): direct TCP {d_mbs:.1} MB/s, relay {r_mbs:.1} MB/s, ratio {:.1}%",
            bytes_per_query as f64 / 1e6,
            100.0 * r_mbs / d_mbs
        ),
        format!(
            "relay latency ({N} x {ONE}): direct TCP {d_us:.1} µs per round trip, relay {r_us:.1} µs, added {:.1} µs",
            r_us - d_us
        ),
    ])
}
