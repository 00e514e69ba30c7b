//! `pgasync calibrate --live`: measures on a live PostgreSQL shard what the simulator
//! assumes, and writes the figures as a knobs profile (JSON) that `pgasync explain
//! --profile`, `pgasync bench --profile` and the wasm API's knobs object load:
//!
//! - `rtt_ms`: the round trip of an empty Query (EmptyQueryResponse, ReadyForQuery): the
//!   network and the backend's loop, no parse or plan;
//! - `server_query_us` and `server_row_us`: `FETCH n` from an open cursor over
//!   `SELECT a FROM t1` (the statement postgres_fdw and pgasync send) for two `n`,
//!   fitted as `rtt + server_query + n × (server_row + bytes_per_row / bandwidth)`;
//! - `bandwidth_mbps`: one large value (`SELECT repeat('x', 8000000)`) in bytes per time,
//!   less one round trip.
//!
//! Measured and printed but not modelled by the simulator (so not in the profile):
//! connection set-up (TCP connect, startup, authentication, the backend's fork, until
//! ReadyForQuery: the simulated startup costs no server time) and the bytes per row
//! (the simulator computes its own from the DataRows it sends).
//!
//! Without `--target` it starts its own one-shard cluster under `--dir` (as `bench
//! --live` does) with scenario E's first shard table (`t1` in database `e`, `--rows`
//! rows) and removes it at the end.

use crate::args::Args;
use crate::demo::{cleanup, pg_bindir, Pg, READER};
use crate::CliError;
use pgasync::scenario::{Knobs, Scenario};
use pgasync::sim::load_sql;
use postgres_protocol::message::frontend;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub const DEFAULT_ROWS: usize = 30_000;

/// What `measure` found. The first four fields are knobs; the rest is reported only.
#[derive(Clone, Debug)]
pub(crate) struct Profile {
    pub(crate) rtt_ms: f64,
    pub(crate) server_query_us: f64,
    pub(crate) server_row_us: f64,
    pub(crate) bandwidth_mbps: f64,
    pub(crate) connect_ms: f64,
    pub(crate) bytes_per_row: f64,
    /// `SELECT 1` round trip, µs.
    pub(crate) select1_us: f64,
    /// (n, median ms) of the two FETCH sizes.
    pub(crate) fetches: [(usize, f64); 2],
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
        })
    }

    /// The profile's knobs, with `extra_rtt_ms` (an injected delay) on top of its round trip.
    pub(crate) fn knobs(&self, extra_rtt_ms: f64) -> Knobs {
        let mut k = pgasync::knobs::from_json(&self.knobs_json().to_string()).expect("the profile's own knobs");
        k.rtt_ms = Some(k.rtt_ms.unwrap_or(0.0) + extra_rtt_ms);
        k
    }

    pub(crate) fn report(&self) -> Vec<String> {
        vec![
            format!("round trip (empty Query): {:.1} µs  -> rtt_ms {:.4}", self.rtt_ms * 1000.0, self.rtt_ms),
            format!("SELECT 1 round trip: {:.1} µs", self.select1_us),
            format!(
                "FETCH {} from an open cursor: {:.3} ms; FETCH {}: {:.3} ms",
                self.fetches[0].0, self.fetches[0].1, self.fetches[1].0, self.fetches[1].1
            ),
            format!("server time per FETCH (fixed part less the round trip): {:.1} µs -> server_query_us", self.server_query_us),
            format!("server time per row (slope less transfer): {:.3} µs -> server_row_us", self.server_row_us),
            format!("bandwidth (one 8 MB value): {:.0} Mbit/s -> bandwidth_mbps", self.bandwidth_mbps),
            format!("bytes per row (DataRow of SELECT a): {:.1} (not a knob: the simulator counts its own)", self.bytes_per_row),
            format!(
                "connection set-up (connect, startup, fork, ReadyForQuery): {:.3} ms (not modelled: the simulated startup costs no server time)",
                self.connect_ms
            ),
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

/// Measures the server at `addr` (database `db`, table `table` with at least `rows`
/// rows and an integer column `a`), as user `user`.
pub(crate) fn measure(addr: SocketAddr, user: &str, db: &str, table: &str, rows: usize) -> Result<Profile, String> {
    if rows < 2 {
        return Err(format!("calibration needs a table of at least 2 rows ({table} has {rows})"));
    }
    // Connection set-up.
    let mut connects = vec![];
    for _ in 0..10 {
        let t = Instant::now();
        let c = RawPg::connect(addr, user, db)?;
        connects.push(t.elapsed().as_secs_f64() * 1e3);
        c.close();
    }
    let mut c = RawPg::connect(addr, user, db)?;
    for _ in 0..20 {
        c.query("SELECT 1")?;
    }
    let mut empty = vec![];
    let mut select1 = vec![];
    for _ in 0..300 {
        empty.push(c.timed("")? as f64);
        select1.push(c.timed("SELECT 1")? as f64);
    }
    let rtt_ns = median_f(empty);
    // FETCH n from an open, started cursor: the steady state of a postgres_fdw scan.
    let n2 = 1000.min(rows - 1);
    let n1 = (n2 / 10).max(1);
    let (mut t1, mut t2, mut b1, mut b2) = (vec![], vec![], vec![], vec![]);
    c.query("BEGIN")?;
    for i in 0..30 {
        let n = if i % 2 == 0 { n1 } else { n2 };
        c.query(&format!("DECLARE c NO SCROLL CURSOR FOR SELECT a FROM {table}"))?;
        c.query("FETCH 1 FROM c")?;
        let before = c.received;
        let ns = c.timed(&format!("FETCH {n} FROM c"))? as f64;
        let bytes = (c.received - before) as f64;
        c.query("CLOSE c")?;
        if i < 2 {
            continue; // warm-up
        }
        if n == n1 {
            t1.push(ns);
            b1.push(bytes);
        } else {
            t2.push(ns);
            b2.push(bytes);
        }
    }
    c.query("COMMIT")?;
    let (m1, m2) = (median_f(t1), median_f(t2));
    let bytes_per_row = if n2 > n1 { (median_f(b2) - median_f(b1)) / (n2 - n1) as f64 } else { 0.0 };
    let slope_ns = if n2 > n1 { ((m2 - m1) / (n2 - n1) as f64).max(0.0) } else { 0.0 };
    let fixed_ns = m1 - slope_ns * n1 as f64;
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
    let bandwidth_mbps = median_f(bw);
    let transfer_ns_per_row = bytes_per_row * 8.0 / bandwidth_mbps * 1e3;
    Ok(Profile {
        rtt_ms: rtt_ns / 1e6,
        server_query_us: ((fixed_ns - rtt_ns) / 1e3).max(0.0),
        server_row_us: ((slope_ns - transfer_ns_per_row) / 1e3).max(0.0),
        bandwidth_mbps,
        connect_ms: median_f(connects),
        bytes_per_row,
        select1_us: median_f(select1) / 1e3,
        fetches: [(n1, m1 / 1e6), (n2, m2 / 1e6)],
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

pub fn run(argv: &[String]) -> Result<(), CliError> {
    let live = argv.iter().any(|a| a == "--live");
    let rest: Vec<String> = argv.iter().filter(|a| *a != "--live").cloned().collect();
    let a = Args::parse(&rest, &["out", "rows", "dir", "target", "database", "table"])?;
    if !live {
        return Err(CliError::Usage(
            "calibrate needs --live: it measures real PostgreSQL (its own cluster, or --target HOST:PORT)".into(),
        ));
    }
    let out = PathBuf::from(a.get("out").unwrap_or("profile.json"));
    let rows = a.int("rows", 2, 10_000_000)?.map_or(DEFAULT_ROWS, |n| n as usize);
    let profile = match a.get("target") {
        Some(t) => {
            let addr = t
                .to_socket_addrs()
                .ok()
                .and_then(|mut i| i.next())
                .ok_or_else(|| CliError::Usage(format!("--target {t}: expected HOST:PORT")))?;
            let db = a.get("database").unwrap_or("e");
            let table = a.get("table").unwrap_or("t1");
            eprintln!("pgasync calibrate: measuring {addr} (database {db}, table {table})");
            measure(addr, READER, db, table, rows).map_err(CliError::Failed)?
        }
        None => {
            let bin = pg_bindir().ok_or_else(|| {
                CliError::Failed("PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin)".into())
            })?;
            let pg = Pg { bin };
            let dir = a
                .get("dir")
                .map(PathBuf::from)
                .unwrap_or_else(|| std::env::temp_dir().join(format!("pgasync-calibrate-{}", std::process::id())));
            cleanup(&pg, &dir);
            std::fs::create_dir_all(&dir).map_err(|e| CliError::Failed(format!("{}: {e}", dir.display())))?;
            pg.own(&dir)?;
            crate::live_bench::on_interrupt_stop();
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
