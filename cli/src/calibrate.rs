//! `pgasync calibrate --live`: measures on a live PostgreSQL shard what the simulator
//! assumes, and writes the figures as a knobs profile (JSON) that `pgasync explain
//! --profile`, `pgasync bench --profile` and the wasm API's knobs object load:
//!
//! - `rtt_ms`: the round trip of an empty Query (EmptyQueryResponse, ReadyForQuery): the
//!   network and the backend's loop, no parse or plan;
//! - `server_query_us` and `server_row_us`: `FETCH n` from a started cursor over
//!   `SELECT a FROM t1` (the statement postgres_fdw and pgasync send) for n from 1 to
//!   1000, a least-squares line `rtt + server_query + n × (server_row + bytes_per_row /
//!   bandwidth)`. A FETCH costs the backend only a few µs more than an empty Query (its
//!   parse, portal and CommandComplete); the two-size fit this replaces put the fixed
//!   part below the empty round trip on one noisy point and clamped it to 0;
//! - `bandwidth_mbps`: one large value (`SELECT repeat('x', 8000000)`) in bytes per time,
//!   less one round trip;
//! - `connect_ms`: a connection's set-up as libpq makes it (TCP connect, startup packet,
//!   the backend's start and authentication, until ReadyForQuery) less one round trip;
//! - `coordinator_row_us`, `coordinator_answer_us`, `coordinator_async_us`: pgasync's own
//!   CPU as the coordinator, from runs of its executor on the shard (`measure_coordinator`):
//!   on a real clock the simulator's cost model is not what the coordinator costs, and at
//!   small round trips the coordinator's CPU is most of a run.
//!
//! The bytes per row are printed only (the simulator computes its own from the DataRows
//! it sends).
//!
//! Without `--target` it starts its own one-shard cluster under `--dir` (as `bench
//! --live` does) with scenario E's first shard table (`t1` in database `e`, `--rows`
//! rows) and removes it at the end.
//!
//! Invariants:
//! - Every figure written is one the simulator takes as a knob, in the knob's unit,
//!   and within its range (negative fits clamp to 0, bandwidth and connect time to
//!   their bounds), so the profile always loads.
//! - The server's figures come from the protocol's own round trips (raw frontend
//!   messages, no libpq), the coordinator's from the least CPU time of several runs:
//!   interference only ever adds time.
//! - A cluster it started is removed whether the measurement succeeded or failed.
//! - Without `--live` it refuses to run (exit 2): it never measures the simulator.
//!
//! PostgreSQL has no counterpart: its planner's cost parameters (`seq_page_cost`,
//! `cpu_tuple_cost`, postgres_fdw's `fdw_startup_cost`, `fdw_tuple_cost`) are set by
//! hand, in abstract units; these are times, measured.

use crate::args;
use crate::demo::{cleanup, pg_bindir, Pg, READER};
use crate::CliError;
use pgasync::knobs::Knobs;
use pgasync::scenario::Scenario;
use pgasync::sql_text::load::load_sql;
use postgres_protocol::message::frontend;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub const DEFAULT_ROWS: usize = 30_000;

/// What `measure` found: the knobs of `knobs_json`, and what is reported only.
#[derive(Clone, Debug)]
pub(crate) struct Profile {
    pub(crate) rtt_ms: f64,
    pub(crate) server_query_us: f64,
    pub(crate) server_row_us: f64,
    pub(crate) bandwidth_mbps: f64,
    /// Connection set-up less the round trip of the startup exchange, ms.
    pub(crate) connect_ms: f64,
    /// Connection set-up as a client sees it (TCP connect to ReadyForQuery), ms.
    pub(crate) connect_total_ms: f64,
    pub(crate) bytes_per_row: f64,
    /// `SELECT 1` round trip, µs.
    pub(crate) select1_us: f64,
    /// `SET extra_float_digits = 3` round trip, µs (a set-up statement).
    pub(crate) set_us: f64,
    /// (n, median ms) of each FETCH size.
    pub(crate) fetches: Vec<(usize, f64)>,
    /// The fit's fixed part of a FETCH less the round trip, µs, before clamping at 0.
    pub(crate) fetch_fixed_us: f64,
    /// pgasync's own CPU as the coordinator (knobs `coordinator_*`).
    pub(crate) coordinator: Coordinator,
}

impl Profile {
    /// The profile as a knobs object (what `--profile` loads).
    pub(crate) fn knobs_json(&self) -> serde_json::Value {
        let r = |x: f64| (x * 10_000.0).round() / 10_000.0;
        serde_json::json!({
            "rtt_ms": r(self.rtt_ms),
            "server_query_us": r(self.server_query_us),
            "server_row_us": r(self.server_row_us),
            "bandwidth_mbps": r(self.bandwidth_mbps.clamp(0.001, 1_000_000.0)),
            "connect_ms": r(self.connect_ms.clamp(0.0, 10_000.0)),
            "coordinator_row_us": r(self.coordinator.row_us.max(0.0)),
            "coordinator_answer_us": r(self.coordinator.answer_us.max(0.0)),
            "coordinator_async_us": r(self.coordinator.async_us.max(0.0)),
        })
    }

    /// The profile's knobs, with `extra_rtt_ms` (an injected delay) on top of its round trip.
    pub(crate) fn knobs(&self, extra_rtt_ms: f64) -> Knobs {
        let mut k = pgasync::knobs::from_json(&self.knobs_json().to_string()).expect("the profile's own knobs");
        k.rtt_ms = Some(k.rtt_ms.unwrap_or(0.0) + extra_rtt_ms);
        k
    }

    pub(crate) fn report(&self) -> Vec<String> {
        let points: Vec<String> = self.fetches.iter().map(|(n, ms)| format!("FETCH {n}: {:.1} µs", ms * 1e3)).collect();
        let co = &self.coordinator;
        let runs = |a: bool| -> String {
            let v: Vec<String> = co
                .runs
                .iter()
                .filter(|r| r.0 == a)
                .map(|r| format!("fetch {} ({} answers) {:.2} ms", r.1, r.2, r.3))
                .collect();
            v.join(", ")
        };
        vec![
            format!("round trip (empty Query): {:.1} µs  -> rtt_ms {:.4}", self.rtt_ms * 1000.0, self.rtt_ms),
            format!("SELECT 1 round trip: {:.1} µs; SET extra_float_digits round trip: {:.1} µs", self.select1_us, self.set_us),
            format!("warm cursor, medians: {}", points.join(", ")),
            format!(
                "server time per FETCH (the fit's fixed part less the round trip): {:.1} µs -> server_query_us {:.1}",
                self.fetch_fixed_us, self.server_query_us
            ),
            format!("server time per row (the fit's slope less transfer): {:.3} µs -> server_row_us", self.server_row_us),
            format!("bandwidth (one 8 MB value): {:.0} Mbit/s -> bandwidth_mbps", self.bandwidth_mbps),
            format!("bytes per row (DataRow of SELECT a): {:.1} (not a knob: the simulator counts its own)", self.bytes_per_row),
            format!(
                "connection set-up (TCP connect, startup, backend start, ReadyForQuery): {:.3} ms; less the round trip -> connect_ms {:.3}",
                self.connect_total_ms, self.connect_ms
            ),
            format!("pgasync as the coordinator, least CPU of 9 runs, sync: {}; async: {}", runs(false), runs(true)),
            format!(
                "coordinator CPU per row (less the cost model's Append and Aggregate): {:.3} µs -> coordinator_row_us",
                co.row_us
            ),
            format!("coordinator CPU per answer read: {:.2} µs -> coordinator_answer_us", co.answer_us),
            format!("coordinator CPU per async request beyond sync: {:.3} µs -> coordinator_async_us", co.async_us),
        ]
    }
}

// ---------------------------------------------------------------------------------
// A minimal blocking PostgreSQL client (simple Query only), for timing.

pub(crate) struct RawPg {
    s: TcpStream,
    buf: Vec<u8>,
    pos: usize,
    /// Bytes received so far.
    pub(crate) received: u64,
}

/// The protocol messages these clients send, written by `postgres-protocol`.
pub(crate) fn startup_message(user: &str, db: &str) -> Result<Vec<u8>, String> {
    let mut buf = bytes::BytesMut::new();
    let params = [("user", user), ("database", db), ("application_name", "pgasync_calibrate")];
    frontend::startup_message(params, &mut buf).map_err(|e| format!("startup message: {e}"))?;
    Ok(buf.to_vec())
}

pub(crate) fn query_message(sql: &str) -> Result<Vec<u8>, String> {
    let mut buf = bytes::BytesMut::new();
    frontend::query(sql, &mut buf).map_err(|e| format!("{sql}: {e}"))?;
    Ok(buf.to_vec())
}

pub(crate) fn terminate_message() -> Vec<u8> {
    let mut buf = bytes::BytesMut::new();
    frontend::terminate(&mut buf);
    buf.to_vec()
}

/// A query's answer so far: its DataRows and its first error.
#[derive(Default)]
pub(crate) struct Replies {
    pub(crate) rows: u64,
    pub(crate) error: Option<String>,
}

impl Replies {
    /// Takes the complete messages in `buf` from `pos` on (dropping what was read when
    /// more is needed); true once ReadyForQuery came.
    pub(crate) fn consume(&mut self, buf: &mut Vec<u8>, pos: &mut usize) -> bool {
        let (rows, error) = (&mut self.rows, &mut self.error);
        let (p, ready) = scan(buf, *pos, |ty, body| match ty {
            b'D' => *rows += 1,
            b'E' => *error = Some(error_text(body)),
            _ => {}
        });
        *pos = p;
        if !ready && *pos > 0 {
            buf.drain(..*pos);
            *pos = 0;
        }
        ready
    }

    pub(crate) fn result(self) -> Result<u64, String> {
        self.error.map_or(Ok(self.rows), Err)
    }
}

/// Splits complete protocol messages off `buf[pos..]`: calls `f(type, body)` for each
/// and returns the new position and whether a ReadyForQuery was seen (the scan stops
/// right after it).
pub(crate) fn scan(buf: &[u8], mut pos: usize, mut f: impl FnMut(u8, &[u8])) -> (usize, bool) {
    while buf.len() - pos >= 5 {
        let len = u32::from_be_bytes(buf[pos + 1..pos + 5].try_into().unwrap()) as usize;
        if buf.len() - pos < 1 + len {
            break;
        }
        let ty = buf[pos];
        f(ty, &buf[pos + 5..pos + 1 + len]);
        pos += 1 + len;
        if ty == b'Z' {
            return (pos, true);
        }
    }
    (pos, false)
}

/// The message of an ErrorResponse body (its `M` field).
pub(crate) fn error_text(body: &[u8]) -> String {
    body.split(|b| *b == 0)
        .find(|f| f.first() == Some(&b'M'))
        .map(|f| String::from_utf8_lossy(&f[1..]).into_owned())
        .unwrap_or_else(|| "error".into())
}

impl RawPg {
    pub(crate) fn connect(addr: SocketAddr, user: &str, db: &str) -> Result<RawPg, String> {
        let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(|e| format!("{addr}: {e}"))?;
        s.set_nodelay(true).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(Duration::from_secs(60))).map_err(|e| e.to_string())?;
        let mut c = RawPg { s, buf: Vec::with_capacity(1 << 16), pos: 0, received: 0 };
        c.s.write_all(&startup_message(user, db)?).map_err(|e| format!("{addr}: {e}"))?;
        c.until_ready()?;
        Ok(c)
    }

    /// Reads until ReadyForQuery; returns the DataRows seen. An ErrorResponse fails it
    /// (after its ReadyForQuery).
    pub(crate) fn until_ready(&mut self) -> Result<u64, String> {
        let mut replies = Replies::default();
        loop {
            if replies.consume(&mut self.buf, &mut self.pos) {
                break;
            }
            let at = self.buf.len();
            self.buf.resize(at + (1 << 16), 0);
            let n = self.s.read(&mut self.buf[at..]).map_err(|e| format!("read: {e}"))?;
            self.buf.truncate(at + n);
            if n == 0 {
                return Err(replies.error.unwrap_or_else(|| "the server closed the connection".into()));
            }
            self.received += n as u64;
        }
        replies.result()
    }

    /// A simple Query to its ReadyForQuery: the DataRows received.
    pub(crate) fn query(&mut self, sql: &str) -> Result<u64, String> {
        self.s.write_all(&query_message(sql)?).map_err(|e| format!("write: {e}"))?;
        self.until_ready().map_err(|e| format!("{sql}: {e}"))
    }

    /// A query's time in nanoseconds.
    pub(crate) fn timed(&mut self, sql: &str) -> Result<u64, String> {
        let t = Instant::now();
        self.query(sql)?;
        Ok(t.elapsed().as_nanos() as u64)
    }

    pub(crate) fn close(mut self) {
        let _ = self.s.write_all(&terminate_message());
    }
}

pub(crate) fn median_f(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if v.is_empty() {
        return 0.0;
    }
    v[v.len() / 2]
}

/// The FETCH sizes the per-statement and per-row costs are fitted on.
const FETCH_SIZES: [usize; 6] = [1, 10, 100, 300, 600, 1000];

/// Least squares line through `points`: (intercept, slope).
pub(crate) fn fit_line(points: &[(f64, f64)]) -> (f64, f64) {
    let n = points.len() as f64;
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (my - slope * mx, slope)
}

/// Measures the server at `addr` (database `db`, table `table` with at least `rows`
/// rows and an integer column `a`), as user `user`.
pub(crate) fn measure(addr: SocketAddr, user: &str, db: &str, table: &str, rows: usize) -> Result<Profile, String> {
    if rows < 2 {
        return Err(format!("calibration needs a table of at least 2 rows ({table} has {rows})"));
    }
    // Connection set-up, as libpq's PQconnectdb does it: TCP connect, startup packet,
    // until ReadyForQuery. The first one or two are slower (the postmaster's caches).
    let mut connects = vec![];
    for i in 0..17 {
        let t = Instant::now();
        let c = RawPg::connect(addr, user, db)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        c.close();
        if i >= 2 {
            connects.push(ms);
        }
    }
    let mut c = RawPg::connect(addr, user, db)?;
    for _ in 0..20 {
        c.query("SELECT 1")?;
    }
    let (mut empty, mut select1, mut set) = (vec![], vec![], vec![]);
    for _ in 0..300 {
        empty.push(c.timed("")? as f64);
        select1.push(c.timed("SELECT 1")? as f64);
        set.push(c.timed("SET extra_float_digits = 3")? as f64);
    }
    let rtt_ns = median_f(empty);
    // FETCH n from a started cursor (the steady state of a postgres_fdw scan: DECLARE,
    // FETCH, FETCH, ...), for several n, sizes interleaved so that drift on a busy
    // machine hits all alike. Two sizes alone made the fit's fixed part swing below the
    // empty round trip (a server cost of 0) on the noise of one point.
    let sizes: Vec<usize> = FETCH_SIZES.iter().map(|&n| n.min(rows - 1)).fold(vec![], |mut v, n| {
        if !v.contains(&n) {
            v.push(n);
        }
        v
    });
    let mut times: Vec<Vec<f64>> = vec![vec![]; sizes.len()];
    let mut bytes: Vec<Vec<f64>> = vec![vec![]; sizes.len()];
    c.query("BEGIN")?;
    let mut left = 0usize;
    for round in 0..42 {
        for j in 0..sizes.len() {
            let i = (j + round) % sizes.len();
            let n = sizes[i];
            if left < n {
                if round > 0 || j > 0 {
                    c.query("CLOSE c")?;
                }
                c.query(&format!("DECLARE c NO SCROLL CURSOR FOR SELECT a FROM {table}"))?;
                c.query("FETCH 1 FROM c")?;
                left = rows - 1;
            }
            let before = c.received;
            let ns = c.timed(&format!("FETCH {n} FROM c"))? as f64;
            left -= n;
            if round < 2 {
                continue; // warm-up
            }
            times[i].push(ns);
            bytes[i].push((c.received - before) as f64);
        }
    }
    c.query("CLOSE c")?;
    c.query("COMMIT")?;
    let medians: Vec<(f64, f64)> = sizes.iter().zip(&times).map(|(&n, t)| (n as f64, median_f(t.clone()))).collect();
    let byte_points: Vec<(f64, f64)> =
        sizes.iter().zip(&bytes).map(|(&n, b)| (n as f64, median_f(b.clone()))).collect();
    let (fixed_ns, slope_ns) = if sizes.len() > 1 { fit_line(&medians) } else { (medians[0].1, 0.0) };
    let bytes_per_row = if sizes.len() > 1 { fit_line(&byte_points).1 } else { 0.0 };
    // Bandwidth: one large value.
    const BIG: usize = 8_000_000;
    let mut bw = vec![];
    for _ in 0..5 {
        let before = c.received;
        let ns = c.timed(&format!("SELECT repeat('x', {BIG})"))? as f64;
        let bits = (c.received - before) as f64 * 8.0;
        bw.push(bits / ((ns - rtt_ns).max(1.0) / 1e3)); // bits per µs = Mbit/s
    }
    c.close();
    let coordinator = measure_coordinator(addr, db, table, rows)?;
    let bandwidth_mbps = median_f(bw);
    let transfer_ns_per_row = bytes_per_row * 8.0 / bandwidth_mbps * 1e3;
    let connect_total_ms = median_f(connects);
    Ok(Profile {
        rtt_ms: rtt_ns / 1e6,
        server_query_us: ((fixed_ns - rtt_ns) / 1e3).max(0.0),
        server_row_us: ((slope_ns.max(0.0) - transfer_ns_per_row) / 1e3).max(0.0),
        bandwidth_mbps,
        connect_ms: (connect_total_ms - rtt_ns / 1e6).max(0.0),
        connect_total_ms,
        bytes_per_row,
        select1_us: median_f(select1) / 1e3,
        set_us: median_f(set) / 1e3,
        fetches: medians.iter().map(|&(n, ns)| (n as usize, ns / 1e6)).collect(),
        fetch_fixed_us: (fixed_ns - rtt_ns) / 1e3,
        coordinator,
    })
}

/// One shard cluster under `dir` with scenario E's first table (`t1`, `rows` rows) in
/// database `e`. The caller removes `dir` (`demo::cleanup`).
pub(crate) fn start_shard(pg: &Pg, dir: &std::path::Path, rows: usize) -> Result<crate::demo::Cluster, CliError> {
    let c = pg.start(dir, "s1")?;
    quiet(&c)?;
    let sc = Scenario::build("E", &Knobs { shards: Some(1), rows_per_shard: Some(rows), ..Default::default() })
        .map_err(|e| CliError::Failed(format!("scenario E: {e}")))?;
    c.psql("postgres", "CREATE DATABASE e")?;
    c.script("e", &load_sql(&sc.servers[0].catalog, READER))?;
    c.psql("e", "VACUUM ANALYZE")?;
    Ok(c)
}

/// The demo's clusters log every statement; a benchmark does not.
pub(crate) fn quiet(c: &crate::demo::Cluster) -> Result<(), CliError> {
    c.script("postgres", "ALTER SYSTEM SET log_statement = 'none';\nSELECT pg_reload_conf();\n")
}

pub const ABOUT_LINE: &str = "Measures a live PostgreSQL shard and writes the simulator's knobs as a profile (JSON)";
pub const USAGE: &str = "pgasync calibrate --live [--out profile.json] [--rows 30000] [--dir DIR]
                  [--target HOST:PORT | --config relay.toml --target NAME]
                  [--database e] [--table t1]";
pub const ABOUT: &str = "measures on a live shard (its own cluster under DIR, or --target) the round trip,
server time per FETCH and per row (fitted over FETCH sizes 1 to 1000), bandwidth, connection
set-up, and pgasync's own CPU as the coordinator of a scan (per row, per answer, per async
request), and writes the knobs rtt_ms, server_query_us, server_row_us, bandwidth_mbps,
connect_ms, coordinator_row_us, coordinator_answer_us, coordinator_async_us as JSON";

/// `pgasync calibrate`'s flags.
#[derive(clap::Args, Default)]
pub struct Flags {
    /// Measures real PostgreSQL (required: there is nothing else to measure)
    #[arg(long)]
    pub live: bool,
    /// The profile's file [default: profile.json]
    #[arg(long, value_name = "FILE")]
    pub out: Option<String>,
    #[arg(long, value_name = "N", help = format!(
        "Rows of the measured table in its own cluster (2 to 10000000) [default: {DEFAULT_ROWS}]"
    ))]
    pub rows: Option<String>,
    /// Its own cluster's folder, removed at the end [default: a fresh temporary folder]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
    /// A shard to measure instead of its own cluster: HOST:PORT, or a target NAME with --config
    #[arg(long, value_name = "HOST:PORT|NAME")]
    pub target: Option<String>,
    /// A relay configuration whose target --target names (TLS and passwords as the relay's)
    #[arg(long, value_name = "relay.toml")]
    pub config: Option<String>,
    /// The database of --target's table [default: e]
    #[arg(long, value_name = "NAME")]
    pub database: Option<String>,
    /// The table measured on --target [default: t1]
    #[arg(long, value_name = "NAME")]
    pub table: Option<String>,
}

pub fn run(a: Flags) -> Result<(), CliError> {
    if !a.live {
        return Err(CliError::Usage(
            "calibrate needs --live: it measures real PostgreSQL (its own cluster, or --target HOST:PORT)".into(),
        ));
    }
    let out = PathBuf::from(a.out.as_deref().unwrap_or("profile.json"));
    let rows = args::int("rows", a.rows.as_deref(), 2, 10_000_000)?.map_or(DEFAULT_ROWS, |n| n as usize);
    let profile = match a.target.as_deref() {
        Some(t) => {
            // `--config relay.toml --target NAME`: a target as the relay defines it (TLS
            // and passwords through the loopback gateway); else `--target HOST:PORT`.
            let mut _gateway = None;
            let addr = match a.config.as_deref() {
                Some(config) => {
                    let targets = crate::config::targets_from(Some(config), &[], &[])?;
                    let target = targets
                        .get(t)
                        .ok_or_else(|| CliError::Usage(format!("--target {t}: no such target in {config}")))?;
                    if target.needs_gateway() {
                        let g = crate::gateway::LocalGateway::start(vec![(t.to_string(), target.local())])
                            .map_err(CliError::Failed)?;
                        let addr = g.addrs[t];
                        _gateway = Some(g);
                        Some(addr)
                    } else {
                        target.addr.to_socket_addrs().ok().and_then(|mut i| i.next())
                    }
                }
                None => t.to_socket_addrs().ok().and_then(|mut i| i.next()),
            }
            .ok_or_else(|| {
                CliError::Usage(format!("--target {t}: expected HOST:PORT, or a target NAME with --config"))
            })?;
            let db = a.database.as_deref().unwrap_or("e");
            let table = a.table.as_deref().unwrap_or("t1");
            eprintln!("pgasync calibrate: measuring {addr} (database {db}, table {table})");
            measure(addr, READER, db, table, rows).map_err(CliError::Failed)?
        }
        None => {
            let bin = pg_bindir().ok_or_else(|| {
                CliError::Failed("PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin)".into())
            })?;
            let pg = Pg::new(bin)?;
            let dir = a
                .dir
                .as_deref()
                .map(PathBuf::from)
                .unwrap_or_else(|| std::env::temp_dir().join(format!("pgasync-calibrate-{}", std::process::id())));
            crate::demo::prepare_dir(&pg, &dir)?;
            crate::demo::on_interrupt_stop();
            eprintln!("pgasync calibrate: starting a shard cluster under {} with {rows} rows", dir.display());
            let result = start_shard(&pg, &dir, rows).and_then(|c| {
                let addr = SocketAddr::from(([127, 0, 0, 1], c.port));
                eprintln!("pgasync calibrate: measuring {addr}");
                measure(addr, READER, "e", "t1", rows).map_err(CliError::Failed)
            });
            cleanup(&pg, &dir);
            result?
        }
    };
    for line in profile.report() {
        println!("{line}");
    }
    let text = serde_json::to_string_pretty(&profile.knobs_json()).unwrap() + "\n";
    std::fs::write(&out, &text).map_err(|e| CliError::Failed(format!("{}: {e}", out.display())))?;
    println!("profile written to {}: {}", out.display(), profile.knobs_json());
    Ok(())
}

/// What pgasync's own executor costs on this machine, as the coordinator of a scan.
#[derive(Clone, Debug)]
pub(crate) struct Coordinator {
    /// CPU per row less the cost model's Append and Aggregate charges, µs.
    pub(crate) row_us: f64,
    /// CPU per answer (FETCH batch) read, µs.
    pub(crate) answer_us: f64,
    /// CPU per row of the async path beyond the sync one, µs (may be negative on noise).
    pub(crate) async_us: f64,
    /// (async, fetch size, answers, least CPU ms) per run kind: sync then async.
    pub(crate) runs: Vec<(bool, usize, u64, f64)>,
}

/// Runs pgasync's executor on the shard (`SELECT sum(a)` over one foreign scan, as E's
/// plan per shard: Aggregate, Append, ForeignScan) sync and async at several fetch
/// sizes, and fits its CPU time (the thread's user and system time: the reads,
/// writes and polls of a round trip count) as `rows × per row + answers × per answer`.
/// The statements outside the FETCHes (set-up, DECLARE, CLOSE, COMMIT: 9 answers) are
/// counted at the per-answer cost.
fn measure_coordinator(addr: SocketAddr, db: &str, table: &str, rows: usize) -> Result<Coordinator, String> {
    const OTHER_ANSWERS: f64 = 9.0;
    let sizes: Vec<usize> = [10usize, 100, 1000].iter().map(|&f| f.min(rows)).collect();
    let mut runs = vec![];
    let mut per_mode = vec![];
    for async_mode in [false, true] {
        let mut cpu: Vec<Vec<f64>> = vec![vec![]; sizes.len()];
        let mut answers = vec![0u64; sizes.len()];
        for round in 0..11 {
            for (i, &f) in sizes.iter().enumerate() {
                let (_, ns, n) = coordinator_run(addr, db, table, f, async_mode)?;
                answers[i] = n;
                if round >= 2 {
                    cpu[i].push(ns); // two rounds of warm-up
                }
            }
        }
        // The least CPU time of the runs: CPU time only grows with interference (a
        // virtual machine's stolen time is charged to the thread, caches are shared),
        // which medians on two shared cores still showed as a doubling.
        let least = |c: &Vec<f64>| c.iter().cloned().fold(f64::INFINITY, f64::min);
        let points: Vec<(f64, f64)> = answers.iter().zip(&cpu).map(|(&n, c)| (n as f64, least(c))).collect();
        for (i, &(n, c)) in points.iter().enumerate() {
            runs.push((async_mode, sizes[i], n as u64, c / 1e6));
        }
        let (intercept, per_answer) = fit_line(&points);
        let per_row = (intercept - OTHER_ANSWERS * per_answer) / rows as f64;
        per_mode.push((per_row, per_answer));
    }
    let model = pgasync::clock::CostModel::default();
    let others = (model.agg_row_ns + model.passthrough_row_ns) as f64;
    Ok(Coordinator {
        row_us: (per_mode[0].0 - others) / 1e3,
        answer_us: per_mode[0].1 / 1e3,
        async_us: (per_mode[1].0 - per_mode[0].0) / 1e3,
        runs,
    })
}

/// pgasync's own executor on the shard: `SELECT sum(a)` over one foreign scan of
/// `table`, fetch size `fetch`. Returns (wall ns, thread CPU ns, FETCH answers).
pub(crate) fn coordinator_run(
    addr: SocketAddr,
    db: &str,
    table: &str,
    fetch: usize,
    async_mode: bool,
) -> Result<(f64, f64, u64), String> {
    use pgasync::clock::Clock;
    use pgasync::executor::estate::EState;
    use pgasync::executor::{init_plan, InitContext};
    use pgasync::host::tcp::TcpHost;
    use pgasync::plan::{AggCall, AggFunc, AggStrategy, Expr, ForeignScanPlan, Plan, RemoteQuery};
    use pgasync::remote::{ForeignServer, ServerOptions};
    use pgasync::run::QueryRun;
    use pgasync::types::{Catalog, ColType, Column};
    let cols = vec![Column::new("a", ColType::Int)];
    let scan = Plan::ForeignScan(ForeignScanPlan {
        relation: "ft1".into(),
        server: "s1".into(),
        remote: RemoteQuery::scan(table, cols, &[0]),
        alias: None,
    });
    let plan = Plan::Agg {
        child: Box::new(Plan::Append { children: vec![scan], prune: None, ordered: false }),
        strategy: AggStrategy::Plain,
        group_by: vec![],
        aggs: vec![AggCall { func: AggFunc::Sum, arg: Some(Expr::Col(0)), distinct: false }],
        split: pgasync::plan::AggSplit::Simple,
    };
    let server =
        ForeignServer { name: "s1".into(), options: ServerOptions { async_capable: async_mode, fetch_size: fetch } };
    let t0 = Instant::now();
    let clock = Clock::from_host(Box::new(move || t0.elapsed().as_nanos() as u64));
    let mut es = EState::new(clock, vec![server], async_mode, false);
    let root = init_plan(&plan, &InitContext { catalog: &Catalog::default() }, &mut es)?;
    let host = TcpHost::new(&[addr]);
    es.writer = Some(host.writer());
    es.set_database(db);
    // As bench --live runs it (PostgreSQL's TIMING OFF): no clock read per node call.
    es.timing = false;
    let mut run = QueryRun::new(es, root, host, plan.output_columns());
    run.keep_rows = false;
    let cpu0 = thread_cpu_ns();
    let w0 = Instant::now();
    run.run_to_end().map_err(|e| e.to_string())?;
    let wall = w0.elapsed().as_nanos() as f64;
    let cpu = (thread_cpu_ns() - cpu0) as f64;
    let fetches = run.es.instr.iter().map(|i| i.remote.batches).sum::<u64>();
    Ok((wall, cpu, fetches))
}

/// CPU time of the calling thread, ns (user and system: the syscalls of a round trip count).
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
