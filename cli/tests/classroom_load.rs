//! The bounded classroom load test (issue 16): one `pgasync demo` (real PostgreSQL 15
//! clusters, one relay) and 30 simulated students, each from a loopback address of its
//! own (127.0.0.10 .. 127.0.0.39, so the relay counts 30 clients as in a classroom),
//! all starting together. Each student runs scenarios E and D live, sync and async, as
//! the page does: the executor (`TcpHost`, as `explain --live` runs it) speaks
//! PostgreSQL's protocol to loopback bridges, each relaying its one connection to a
//! WebSocket session at `/shard/NAME` (binary frames), as the browser's WebSocket host
//! does. Interleaved with the runs, each student times `SELECT 1` round trips through
//! the relay and straight to the same shard.
//!
//! Checked: every run's result is the reference; no session is refused (each student
//! stays far below the per-client limits); the relay counted every session the students
//! opened; one address may then open as many sessions at once as the per-client limit
//! allows (the next is refused, another address is not); no backend of the read-only
//! role is left on any cluster afterwards. Printed:
//! the relay's peak memory (VmHWM), the p50/p99 latency the relay adds per round trip,
//! the wall time. Everything is bounded: a hung student fails the test, with its name.

use futures_util::{SinkExt, StreamExt};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

use pgasync::clock::Clock;
use pgasync::host::tcp::TcpHost;
use pgasync::knobs::Knobs;
use pgasync::scenario::Scenario;

mod support;
use support::demo::DemoProcess;
use support::pgws::{self, PgWs};
use support::{postgres_installed, postgres_left};

const STUDENTS: usize = 30;
/// The demo's rows per shard (the page's default).
const ROWS: usize = 300;
/// `SELECT 1` pairs (through the relay, straight to the shard) before each run.
const PAIRS_PER_RUN: usize = 5;
/// The whole load (every student's logins, runs and round trips) ends within this.
const LOAD_DEADLINE: Duration = Duration::from_secs(180);
/// How long a bridge waits for the executor to connect.
const ACCEPT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one bridged session may last.
const BRIDGE_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the clusters get to let every backend of the read-only role go.
const BACKENDS_GONE: Duration = Duration::from_secs(15);
/// A generous bound on the relay's peak resident memory under this load.
const RELAY_PEAK_MAX_KB: u64 = 256 * 1024;

/// Each student's runs: scenario, async.
const RUNS: [(&str, bool); 4] = [("E", false), ("E", true), ("D", false), ("D", true)];

// ---------------------------------------------------------------------------------
// The demo

/// The relay's counters now.
fn metrics(demo: &DemoProcess) -> Metrics {
    let text = demo.get("/metrics").unwrap_or_else(|e| panic!("GET /metrics: {e}"));
    let value = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' ')))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /metrics:\n{text}"))
    };
    let refusals = ["sessions", "connections", "startup", "login", "connect_failed", "host", "origin"]
        .iter()
        .map(|r| (r.to_string(), value(&format!("pgasync_relay_refusals_total{{reason=\"{r}\"}}"))))
        .collect();
    Metrics {
        sessions: value("pgasync_relay_sessions_total"),
        active: value("pgasync_relay_sessions_active"),
        errors: value("pgasync_relay_errors_total"),
        refusals,
    }
}

struct Metrics {
    sessions: u64,
    active: u64,
    errors: u64,
    refusals: Vec<(String, u64)>,
}

/// The relay's default `--max-sessions-per-client` (the demo sets none).
const PER_CLIENT: usize = 64;

/// A login through the relay from `source`: the session, or why not.
async fn login_from(url: &str, source: IpAddr, app: &str) -> Result<PgWs, String> {
    let mut c = PgWs::connect_from(url, source).await?;
    c.send(pgws::startup(&[("user", "pgasync"), ("database", "e"), ("application_name", app)])).await;
    let msgs = c.until_ready().await;
    match msgs.iter().find(|(t, _)| *t == b'E') {
        Some((_, e)) => Err(format!("login through the relay refused: {}", pgws::field(e, b'M'))),
        None if msgs.last().is_some_and(|(t, _)| *t == b'Z') => Ok(c),
        None => Err("the relay closed the login without an answer".to_string()),
    }
}

/// One address (127.0.0.50) opens [`PER_CLIENT`] sessions at once: every one is let in
/// and answers a query; one more is refused with 503 (counted as a "sessions"
/// refusal), while another address (127.0.0.51) is still let in. Then all are closed.
async fn per_client_limit(demo: &DemoProcess) -> Result<(), String> {
    let url = format!("ws://127.0.0.1:{}/shard/s1", demo.port);
    let (one, other) = (IpAddr::V4(Ipv4Addr::new(127, 0, 0, 50)), IpAddr::V4(Ipv4Addr::new(127, 0, 0, 51)));
    let before = metrics(demo);
    let logins = (0..PER_CLIENT).map(|i| {
        let url = url.clone();
        async move { login_from(&url, one, &format!("tab-{i}")).await }
    });
    let opened: Vec<Result<PgWs, String>> = futures_util::future::join_all(logins).await;
    let refused_below: Vec<String> =
        opened.iter().enumerate().filter_map(|(i, r)| r.as_ref().err().map(|e| format!("#{i}: {e}"))).collect();
    let mut sessions: Vec<PgWs> = opened.into_iter().filter_map(Result::ok).collect();
    if !refused_below.is_empty() {
        let now = metrics(demo);
        let why: Vec<String> = now
            .refusals
            .iter()
            .zip(&before.refusals)
            .filter(|((_, n), (_, m))| n > m)
            .map(|((r, n), (_, m))| format!("{r}: {}", n - m))
            .collect();
        return Err(format!(
            "below the limit, {} sessions were refused (relay refusals {why:?}): {:?}",
            refused_below.len(),
            refused_below.iter().take(3).collect::<Vec<_>>()
        ));
    }
    for (i, c) in sessions.iter_mut().enumerate() {
        let rows = c.simple("SELECT 1").await.map_err(|e| format!("session #{i}: {e:?}"))?;
        if rows != vec![vec!["1".to_string()]] {
            return Err(format!("session #{i}: SELECT 1 gave {rows:?}"));
        }
    }
    let over = match PgWs::connect_from(&url, one).await {
        Ok(_) => Err(format!("session {} from one address was let in", PER_CLIENT + 1)),
        Err(e) if e.contains("503") => Ok(()),
        Err(e) => Err(format!("session {} from one address: {e} (not 503)", PER_CLIENT + 1)),
    };
    let neighbour = login_from(&url, other, "neighbour").await;
    let mid = metrics(demo);
    for mut c in sessions {
        c.send(vec![b'X', 0, 0, 0, 4]).await;
        let _ = tokio::time::timeout(Duration::from_secs(5), c.ws.close(None)).await;
    }
    if let Ok(mut c) = neighbour {
        c.send(vec![b'X', 0, 0, 0, 4]).await;
        let _ = tokio::time::timeout(Duration::from_secs(5), c.ws.close(None)).await;
    } else if let Err(e) = neighbour {
        return Err(format!("another address, while one is at its limit: {e}"));
    }
    over?;
    let refusal = |m: &Metrics| m.refusals.iter().find(|(r, _)| r == "sessions").map_or(0, |(_, n)| *n);
    if refusal(&mid) - refusal(&before) != 1 {
        return Err(format!("{} \"sessions\" refusals counted, 1 expected", refusal(&mid) - refusal(&before)));
    }
    if mid.sessions - before.sessions != PER_CLIENT as u64 + 1 {
        return Err(format!("{} sessions counted, {} expected", mid.sessions - before.sessions, PER_CLIENT + 1));
    }
    Ok(())
}

/// `VmHWM` (peak resident memory) and `VmRSS` of a process, in kB.
fn memory_kb(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()
    };
    Some((field("VmHWM:")?, field("VmRSS:")?))
}

// ---------------------------------------------------------------------------------
// A student

/// What the students share.
struct Class {
    rt: tokio::runtime::Handle,
    /// `ws://127.0.0.1:PORT`
    relay: String,
    /// Shard s1, straight (for the round trips without the relay).
    s1: SocketAddr,
    start: Barrier,
    /// WebSocket sessions the students opened (upgrades answered 101).
    opened: AtomicUsize,
}

struct Report {
    runs: usize,
    /// (through the relay, straight) per `SELECT 1` pair.
    round_trips: Vec<(Duration, Duration)>,
}

fn source_of(k: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, 10 + k as u8))
}

/// Student `k`: logs in through the relay and straight to s1, then runs E and D sync
/// and async, each after a few timed `SELECT 1` pairs.
fn student(k: usize, class: &Class) -> Result<Report, String> {
    let source = source_of(k);
    let knobs = Knobs { shards: Some(4), rows_per_shard: Some(ROWS), ..Default::default() };
    let scenarios: Vec<Scenario> = ["E", "D"]
        .iter()
        .map(|id| Scenario::build(id, &knobs))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("scenario: {e}"))?;
    class.start.wait();
    let rt = &class.rt;
    let url = format!("{}/shard/s1", class.relay);
    let app = format!("classroom-{k}");
    let params = [("user", "pgasync"), ("database", "e"), ("application_name", app.as_str())];
    let mut ws = rt.block_on(async {
        let mut c = PgWs::connect_from(&url, source).await?;
        class.opened.fetch_add(1, Ordering::SeqCst);
        c.send(pgws::startup(&params)).await;
        let msgs = c.until_ready().await;
        match msgs.iter().find(|(t, _)| *t == b'E') {
            Some((_, e)) => Err(format!("login through the relay refused: {}", pgws::field(e, b'M'))),
            None if msgs.last().is_some_and(|(t, _)| *t == b'Z') => Ok(c),
            None => Err("the relay closed the login without an answer".to_string()),
        }
    })?;
    let mut direct = rt.block_on(PgTcp::login(class.s1, &params))?;
    let mut report = Report { runs: 0, round_trips: Vec::new() };
    for (i, (id, async_mode)) in RUNS.iter().enumerate() {
        for p in 0..PAIRS_PER_RUN {
            let pair = rt.block_on(async {
                // Alternate which goes first, so neither always follows the other.
                let (relayed, straight) = if (i + p) % 2 == 0 {
                    (relay_select1(&mut ws).await?, direct.select1().await?)
                } else {
                    let d = direct.select1().await?;
                    (relay_select1(&mut ws).await?, d)
                };
                Ok::<_, String>((relayed, straight))
            })?;
            report.round_trips.push(pair);
        }
        let sc = scenarios.iter().find(|s| s.id == *id).expect("built above");
        run_live(class, sc, *async_mode, source)
            .map_err(|e| format!("{id} {}: {e}", if *async_mode { "async" } else { "sync" }))?;
        report.runs += 1;
    }
    rt.block_on(async {
        // Terminate, then close, as a page leaving does.
        ws.send(vec![b'X', 0, 0, 0, 4]).await;
        let _ = tokio::time::timeout(Duration::from_secs(5), ws.ws.close(None)).await;
        let _ = direct.s.write_all(&[b'X', 0, 0, 0, 4]).await;
    });
    Ok(report)
}

/// One `SELECT 1` through the relay, timed.
async fn relay_select1(ws: &mut PgWs) -> Result<Duration, String> {
    let t = Instant::now();
    let rows = ws.simple("SELECT 1").await.map_err(|e| format!("SELECT 1 through the relay: {e:?}"))?;
    let rtt = t.elapsed();
    if rows != vec![vec!["1".to_string()]] {
        return Err(format!("SELECT 1 through the relay: {rows:?}"));
    }
    Ok(rtt)
}

/// Scenario `sc` live, as `explain --live` runs it, with each connection bridged to a
/// WebSocket session of the student's own; its result checked against the reference.
fn run_live(class: &Class, sc: &Scenario, async_mode: bool, source: IpAddr) -> Result<(), String> {
    let (done_tx, done_rx) = tokio::sync::watch::channel(false);
    let mut addrs = Vec::new();
    let mut bridges = Vec::new();
    for s in &sc.servers {
        let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        l.set_nonblocking(true).map_err(|e| e.to_string())?;
        addrs.push(l.local_addr().map_err(|e| e.to_string())?);
        let url = format!("{}/shard/{}", class.relay, s.server.name);
        bridges.push(class.rt.spawn(bridge(l, url, source, done_rx.clone())));
    }
    let host = TcpHost::new(&addrs);
    let writer = host.writer();
    let t0 = Instant::now();
    let clock = Clock::from_host(Box::new(move || t0.elapsed().as_nanos() as u64));
    let mut run = sc.start_on(host, async_mode, clock, false)?;
    run.es.set_database(&sc.id.to_lowercase());
    run.es.writer = Some(writer);
    run.keep_rows = true;
    let outcome = run.run_to_end();
    let matches = sc.matches_reference(&run.rows);
    let rows = run.rows.len();
    drop(run); // closes the executor's connections: each bridge closes its session
    let _ = done_tx.send(true);
    let ended = class.rt.block_on(async {
        let mut out = Vec::new();
        for b in bridges {
            out.push(match tokio::time::timeout(BRIDGE_TIMEOUT, b).await {
                Ok(Ok(r)) => r,
                Ok(Err(e)) => Err(format!("bridge task: {e}")),
                Err(_) => Err("a bridge did not end".to_string()),
            });
        }
        out
    });
    let mut errors = Vec::new();
    for r in ended {
        match r {
            Ok(true) => {
                class.opened.fetch_add(1, Ordering::SeqCst);
            }
            Ok(false) => {}
            Err(e) => errors.push(e),
        }
    }
    outcome.map_err(|e| {
        format!("the query failed: {e}{}", if errors.is_empty() { "" } else { "; " }) + &errors.join("; ")
    })?;
    if !errors.is_empty() {
        return Err(errors.join("; "));
    }
    if !matches {
        return Err(format!("{rows} rows, not the reference's"));
    }
    Ok(())
}

/// One executor connection relayed to a WebSocket session opened from `source`, both
/// ways, binary frames, until either side ends. `Ok(true)`: a session was opened;
/// `Ok(false)`: the executor never connected.
async fn bridge(
    listener: std::net::TcpListener,
    url: String,
    source: IpAddr,
    mut done: tokio::sync::watch::Receiver<bool>,
) -> Result<bool, String> {
    let listener = tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
    let tcp = tokio::select! {
        a = tokio::time::timeout(ACCEPT_TIMEOUT, listener.accept()) => match a {
            Ok(Ok((tcp, _))) => tcp,
            Ok(Err(e)) => return Err(format!("accept: {e}")),
            Err(_) => return Ok(false),
        },
        _ = done.wait_for(|d| *d) => return Ok(false),
    };
    drop(listener);
    let _ = tcp.set_nodelay(true);
    let ws = PgWs::connect_from(&url, source).await?.ws;
    let session = async {
        let (mut tcp_rx, mut tcp_tx) = tcp.into_split();
        let (mut ws_tx, mut ws_rx) = ws.split();
        let up = async {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match tcp_rx.read(&mut buf).await {
                    Ok(0) | Err(_) => break, // the executor is done with the connection
                    Ok(n) => {
                        if ws_tx.send(Message::Binary(buf[..n].to_vec().into())).await.is_err() {
                            break;
                        }
                    }
                }
            }
            let _ = ws_tx.close().await;
        };
        let down = async {
            while let Some(m) = ws_rx.next().await {
                match m {
                    Ok(Message::Binary(b)) => {
                        if tcp_tx.write_all(&b).await.is_err() {
                            break;
                        }
                    }
                    Ok(Message::Close(_)) | Err(_) => break,
                    Ok(_) => {}
                }
            }
            let _ = tcp_tx.shutdown().await;
        };
        tokio::join!(up, down);
    };
    tokio::time::timeout(BRIDGE_TIMEOUT, session)
        .await
        .map_err(|_| format!("{url}: the session outlasted {BRIDGE_TIMEOUT:?}"))?;
    Ok(true)
}

/// A PostgreSQL client over plain TCP (trust authentication), for the round trips that
/// do not go through the relay.
struct PgTcp {
    s: tokio::net::TcpStream,
    buf: Vec<u8>,
}

impl PgTcp {
    async fn login(addr: SocketAddr, params: &[(&str, &str)]) -> Result<PgTcp, String> {
        let s = tokio::time::timeout(Duration::from_secs(10), tokio::net::TcpStream::connect(addr))
            .await
            .map_err(|_| format!("connect {addr}: timed out"))?
            .map_err(|e| format!("connect {addr}: {e}"))?;
        let _ = s.set_nodelay(true);
        let mut c = PgTcp { s, buf: Vec::new() };
        c.s.write_all(&pgws::startup(params)).await.map_err(|e| e.to_string())?;
        c.until_ready().await.map_err(|e| format!("login to {addr}: {e}"))?;
        Ok(c)
    }

    async fn until_ready(&mut self) -> Result<(), String> {
        let mut error = None;
        loop {
            while self.buf.len() >= 5 {
                let len = u32::from_be_bytes(self.buf[1..5].try_into().unwrap()) as usize;
                if self.buf.len() <= len {
                    break;
                }
                let ty = self.buf[0];
                if ty == b'E' {
                    error = Some(pgws::field(&self.buf[5..1 + len], b'M'));
                }
                self.buf.drain(..1 + len);
                if ty == b'Z' {
                    return error.map_or(Ok(()), Err);
                }
            }
            let mut chunk = [0u8; 8192];
            let n = tokio::time::timeout(Duration::from_secs(20), self.s.read(&mut chunk))
                .await
                .map_err(|_| "no answer in 20 s".to_string())?
                .map_err(|e| e.to_string())?;
            if n == 0 {
                return Err(error.unwrap_or_else(|| "the server closed the connection".into()));
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// One `SELECT 1`, timed.
    async fn select1(&mut self) -> Result<Duration, String> {
        let t = Instant::now();
        self.s.write_all(&pgws::query("SELECT 1")).await.map_err(|e| e.to_string())?;
        self.until_ready().await.map_err(|e| format!("SELECT 1 straight to s1: {e}"))?;
        Ok(t.elapsed())
    }
}

// ---------------------------------------------------------------------------------

/// The `q`-quantile (nearest rank) of sorted values.
fn quantile(sorted: &[i64], q: f64) -> i64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn ms(ns: i64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

#[test]
fn thirty_students_run_live_e_and_d_through_one_relay() {
    if !postgres_installed() {
        eprintln!("skipped: PostgreSQL is not installed");
        return;
    }
    let t_all = Instant::now();
    let dir = std::env::temp_dir().join(format!("pgasync-classroom-{}", std::process::id()));
    let demo = DemoProcess::start(&dir, ROWS);
    let demo_start = t_all.elapsed();
    let relay_pid = demo.relay_pid().unwrap_or_else(|| panic!("no relay process for {}", dir.display()));
    let (hwm_before, _) = memory_kb(relay_pid).expect("the relay's /proc status");
    let before = metrics(&demo);

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let class = Arc::new(Class {
        rt: rt.handle().clone(),
        relay: format!("ws://127.0.0.1:{}", demo.port),
        s1: SocketAddr::from(([127, 0, 0, 1], demo.target_port("s1"))),
        start: Barrier::new(STUDENTS + 1),
        opened: AtomicUsize::new(0),
    });
    let (tx, rx) = mpsc::channel();
    for k in 0..STUDENTS {
        let (class, tx) = (class.clone(), tx.clone());
        std::thread::Builder::new()
            .name(format!("student-{k}"))
            .spawn(move || {
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| student(k, &class)));
                let r = r.unwrap_or_else(|p| {
                    let msg = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    Err(format!("panicked: {msg}"))
                });
                let _ = tx.send((k, r));
            })
            .unwrap();
    }
    drop(tx);
    class.start.wait();
    let t_load = Instant::now();
    let mut reports: Vec<Option<Result<Report, String>>> = (0..STUDENTS).map(|_| None).collect();
    // Sessions open at once, as /metrics says while the students run (sampled).
    let mut peak_active = 0;
    let mut next_sample = Instant::now();
    while reports.iter().any(Option::is_none) {
        if Instant::now() >= next_sample {
            peak_active = peak_active.max(metrics(&demo).active);
            next_sample = Instant::now() + Duration::from_millis(50);
        }
        let left = LOAD_DEADLINE.saturating_sub(t_load.elapsed());
        match rx.recv_timeout(left.min(Duration::from_millis(50))) {
            Ok((k, r)) => reports[k] = Some(r),
            Err(mpsc::RecvTimeoutError::Timeout) if !left.is_zero() => {}
            Err(_) => {
                let missing: Vec<usize> = (0..STUDENTS).filter(|k| reports[*k].is_none()).collect();
                panic!(
                    "students {missing:?} did not finish within {LOAD_DEADLINE:?}; the relay's log ends:\n{}",
                    tail(&demo.log(), 40)
                );
            }
        }
    }
    let load_time = t_load.elapsed();
    let (hwm_after, rss_after) = memory_kb(relay_pid).expect("the relay is still running");

    let failures: Vec<String> = reports
        .iter()
        .enumerate()
        .filter_map(|(k, r)| r.as_ref().unwrap().as_ref().err().map(|e| format!("student {k} ({}): {e}", source_of(k))))
        .collect();
    let reports: Vec<&Report> = reports.iter().filter_map(|r| r.as_ref().unwrap().as_ref().ok()).collect();
    let runs: usize = reports.iter().map(|r| r.runs).sum();

    // The sessions the students opened have all closed; the relay's counters.
    let t = Instant::now();
    let mut after = metrics(&demo);
    while after.active > 0 && t.elapsed() < BACKENDS_GONE {
        std::thread::sleep(Duration::from_millis(100));
        after = metrics(&demo);
    }
    // The relay saw each student as a client of its own (its log: "session N open: IP:PORT -> …").
    let load_log = demo.log();
    let peers: std::collections::BTreeSet<&str> =
        load_log.lines().filter_map(|l| l.split(" open: ").nth(1)?.split(':').next()).collect();
    // Then one address up to the per-client limit, while the students' are all gone.
    let limit = rt.block_on(per_client_limit(&demo));
    // No backend of the read-only role on any cluster.
    let clusters = ["s1", "s2", "s3", "s4", "coordinator"];
    let t = Instant::now();
    let left = loop {
        let counts: Vec<(&str, Result<usize, String>)> = clusters.iter().map(|c| (*c, demo.backends(c))).collect();
        if counts.iter().all(|(_, n)| n == &Ok(0)) || t.elapsed() > BACKENDS_GONE {
            break counts;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let backends_left: usize = left.iter().map(|(_, n)| n.clone().unwrap_or(0)).sum();

    let mut added: Vec<i64> = Vec::new();
    let (mut relayed, mut straight): (Vec<i64>, Vec<i64>) = (Vec::new(), Vec::new());
    for r in &reports {
        for (a, b) in &r.round_trips {
            added.push(a.as_nanos() as i64 - b.as_nanos() as i64);
            relayed.push(a.as_nanos() as i64);
            straight.push(b.as_nanos() as i64);
        }
    }
    for v in [&mut added, &mut relayed, &mut straight] {
        v.sort_unstable();
    }
    let opened = class.opened.load(Ordering::SeqCst) as u64;
    let counted = after.sessions - before.sessions;
    let refused: Vec<(String, u64)> = after
        .refusals
        .iter()
        .zip(&before.refusals)
        .map(|((r, n), (_, m))| (r.clone(), n - m))
        .filter(|(_, n)| *n > 0)
        .collect();
    let pct = |v: &[i64], q| if v.is_empty() { "n/a".to_string() } else { ms(quantile(v, q)) };
    eprintln!(
        "\nclassroom load: {STUDENTS} students (127.0.0.10..127.0.0.{}), each E and D live, sync and async, \
         through one relay ({ROWS} rows per shard)",
        9 + STUDENTS
    );
    eprintln!("  students finished      {}/{STUDENTS}", reports.len());
    eprintln!("  runs correct           {runs}/{}", STUDENTS * RUNS.len());
    eprintln!(
        "  sessions               {opened} opened by the students, {counted} counted by the relay, refused: {}, \
         relay errors: {}",
        if refused.is_empty() { "none".to_string() } else { format!("{refused:?}") },
        after.errors - before.errors
    );
    eprintln!(
        "  clients (IPs)          {} seen by the relay; peak sessions open at once {peak_active} (sampled)",
        peers.len()
    );
    eprintln!(
        "  relay peak memory      VmHWM {:.1} MB (before the load {:.1} MB; RSS after {:.1} MB)",
        hwm_after as f64 / 1024.0,
        hwm_before as f64 / 1024.0,
        rss_after as f64 / 1024.0
    );
    eprintln!(
        "  added latency per RTT  p50 {}, p99 {} over {} SELECT 1 pairs (through the relay p50 {} p99 {}; \
         straight p50 {} p99 {})",
        pct(&added, 0.5),
        pct(&added, 0.99),
        added.len(),
        pct(&relayed, 0.5),
        pct(&relayed, 0.99),
        pct(&straight, 0.5),
        pct(&straight, 0.99)
    );
    eprintln!(
        "  wall time              load {:.1} s (demo start-up {:.1} s)",
        load_time.as_secs_f64(),
        demo_start.as_secs_f64()
    );
    eprintln!(
        "  one client's limit     {}",
        match &limit {
            Ok(()) => format!(
                "{PER_CLIENT} sessions at once from one address all opened; the next refused (503); \
                 another address let in meanwhile"
            ),
            Err(e) => format!("FAILED: {e}"),
        }
    );
    eprintln!("  backends left          {backends_left} ({left:?})\n");

    assert!(failures.is_empty(), "{} students failed:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(runs, STUDENTS * RUNS.len());
    assert!(refused.is_empty(), "sessions were refused: {refused:?}\n{}", tail(&demo.log(), 40));
    assert_eq!(counted, opened, "the relay counted {counted} sessions, the students opened {opened}");
    assert_eq!(after.active, 0, "sessions still open on the relay");
    assert_eq!(peers.len(), STUDENTS, "the relay's clients: {peers:?}");
    if let Err(e) = &limit {
        panic!("the per-client limit: {e}\n{}", tail(&demo.log(), 40));
    }
    for (c, n) in &left {
        assert_eq!(n.as_ref().ok(), Some(&0), "backends of pgasync left on {c}: {n:?}");
    }
    assert!(hwm_after < RELAY_PEAK_MAX_KB, "the relay's peak memory {hwm_after} kB is above {RELAY_PEAK_MAX_KB} kB");

    // The demo stops everything on Ctrl-C.
    drop(demo);
    let t = Instant::now();
    while !postgres_left(&dir).is_empty() && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(postgres_left(&dir).is_empty(), "clusters left: {:?}", postgres_left(&dir));
    eprintln!("classroom load: {:.1} s in all", t_all.elapsed().as_secs_f64());
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
