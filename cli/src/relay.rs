//! `pgasync relay`: WebSocket to PostgreSQL, for the page's live mode, and the page
//! itself, so one process is the whole demo.
//!
//! # Protocol
//! * `GET /shard/<name>` with a WebSocket upgrade opens a TCP connection to the target
//!   configured under that name (`--config FILE`, `[targets.NAME] addr = "host:port"`,
//!   and/or `--target NAME=HOST:PORT`); the browser never sends an address. Binary
//!   frames carry raw PostgreSQL protocol bytes both ways; a text frame ends the
//!   session (close 1003). Refusals are plain HTTP answers before the upgrade: a foreign
//!   Host 403 (as `serve`), an Origin that is present and neither the relay's own
//!   (`http://127.0.0.1:PORT`, `http://localhost:PORT`, `http://[::1]:PORT`, the bound
//!   address, `http://NAME:PORT` for each `--allow-host`) nor an `--allow-origin` 403,
//!   an unknown name 404, not a WebSocket upgrade 426, over a session cap 503, the
//!   target unreachable 502 (504 after the connect timeout); an absolute-form request
//!   or a repeated Origin 403.
//! * Once upgraded, the session's start is [`gateway`]'s: the client's startup packet is
//!   checked against the target's `user` and `databases` (anything else is a FATAL
//!   ErrorResponse, logged), and the relay opens the server's connection itself (TLS
//!   with `tls = "require" | "verify-full"`, the server's password exchange with the
//!   target's `password_env`/`password_file`), so the browser sees a trust server's
//!   answer and never a credential.
//! * `POST /sql/load` (only with `[sql_load]` in the configuration file, as `pgasync
//!   demo` writes it) loads a page's scenario file into the local targets it names; see
//!   [`sql_load`] for its protocol and bounds.
//! * `GET /health` is `ok`, `GET /targets` the JSON list of names (no addresses),
//!   `GET /metrics` Prometheus text (sessions, bytes each way, refusals by reason,
//!   cancels, errors). Every other GET/HEAD is the static-file service of
//!   [`static_files`] (web/ and pkg/, with its Host check and bounds).
//!
//! # Bounds (each with a flag; see `run`)
//! * A WebSocket message (and frame) from the browser is at most `--max-frame-bytes`
//!   (1 MiB); a larger one ends the session with close code 1009. Bytes read from the
//!   server go to the browser in messages of at most 32 KiB.
//! * Each direction buffers at most `--max-buffer-bytes` (256 KiB) plus the message
//!   being read: while the buffer is full, the relay does not read that direction's
//!   source (backpressure reaches the sender through TCP).
//! * Sessions in total (`--max-sessions`, 256) and per client IP
//!   (`--max-sessions-per-client`, 64); HTTP connections as in `serve`, except that
//!   the per-client connection cap (`--max-per-client`) is by default at least the
//!   per-client session cap: each session holds an HTTP connection until its upgrade.
//! * A session with no bytes either way for `--idle-timeout-ms` (60 s) is closed (close
//!   code 1000, "idle timeout", and the backend's query cancelled if one runs).
//! * Connecting to a target (and sending a cancel) takes at most `--connect-timeout-ms`
//!   (5 s), and so does the server side of the session's start (TLS, authentication);
//!   the client's startup packet must come within the idle timeout.
//! * `--tls-cert`/`--tls-key` (classroom mode): every connection is TLS first, its
//!   handshake bounded by the header timeout; the own origins are then `https://…`.
//!
//! # Latency knob
//! `--delay NAME=20ms` adds 20 ms to every round trip through target NAME: each chunk
//! is held for half of it in each direction, counted from when it was read, so the
//! stream keeps its throughput (a latency line, not a per-message pause). Tokio's
//! timer rounds each wait up to its next millisecond tick, so a delayed round trip
//! may take up to ~2 ms more than asked; an undelayed chunk never waits on the timer.
//!
//! # Cancel
//! The relay follows the framing of both streams (type byte + big-endian length; the
//! untyped startup packets and the single-byte answers to SSLRequest/GSSENCRequest)
//! to learn the backend's BackendKeyData and whether a query is under way (a
//! Query/Sync/FunctionCall/startup not yet answered by ReadyForQuery, or an
//! extended-query message since the last Sync). When the browser side ends first
//! (close, dropped TCP, oversized frame, idle, shutdown) while a query is under way,
//! the relay sends a CancelRequest on a new connection to the same target, then closes
//! the session's connection, so the backend is gone.
//!
//! # Logs
//! One line per session open and close, and one per error, on stderr; never payload
//! bytes (nor the backend's secret key).
//!
//! # Invariants
//! * The browser names a target, never an address, and reaches only what the target's
//!   `user` and `databases` allow ([`gateway`]); credentials stay in the relay.
//! * Every session ends with its server connection closed, and with a CancelRequest
//!   first when the browser side ended while a query was under way: no backend works
//!   on for a client that left (the leak `host::ws` relies on the relay to prevent).
//! * Memory per session is bounded (a message, plus `--max-buffer-bytes` each way)
//!   and so are sessions, per client and in all: a slow or hostile browser costs the
//!   others nothing but its share.
//! * Bytes are relayed unchanged, in order, after the start; the relay only follows
//!   the framing to know the backend key and whether a query is under way.
//!
//! PostgreSQL has no counterpart: the relay is a proxy in front of it (as PgBouncer
//! is); the cancel it sends is libpq's `PQcancel`'s CancelRequest.

use crate::config::{sql_load_from, targets_from, Target};
use crate::gateway::{self, Opening, StartupReader, CANCEL_REQUEST, GSSENC_REQUEST, SSL_REQUEST};
use crate::serve::positive;
use crate::sql_load;
use crate::static_files::{self, Body, ConnLimits, HostCheck, IdleIo};
use crate::tls::{self, ServerStream};
use crate::CliError;
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::WebSocketStream;

/// Bytes read from the server per message to the browser.
const SERVER_CHUNK: usize = 32 * 1024;
/// How long what was read from a side that ended may take to reach the other side
/// (beyond `--delay`).
const DRAIN: Duration = Duration::from_secs(2);
/// On shutdown, how long sessions get to cancel and close.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------------
// Options

/// The session bounds.
#[derive(Clone, Debug)]
struct Limits {
    max_frame: usize,
    max_buffer: usize,
    max_sessions: usize,
    max_sessions_per_client: usize,
    idle: Duration,
    connect: Duration,
}

pub const ABOUT_LINE: &str = "WebSocket to PostgreSQL for the page's live mode, and the page itself";
pub const USAGE: &str =
    "pgasync relay [--config FILE] [--target NAME=HOST:PORT]... [--delay NAME=20ms]... [--port 8080]
              [--bind 127.0.0.1] [--allow-origin http://HOST:PORT]... [--max-frame-bytes 1048576]
              [--max-buffer-bytes 262144] [--max-sessions 256] [--max-sessions-per-client 64]
              [--idle-timeout-ms 60000] [--connect-timeout-ms 5000] [--tls-cert FILE --tls-key FILE]
              [serve's flags]";
pub const ABOUT: &str = "WebSocket /shard/NAME <-> TCP to target NAME ([targets.NAME] addr = \"HOST:PORT\" in the
TOML file); --delay adds to each round trip (half each way); the browser leaving mid-query
cancels the backend's query; /health, /targets, /metrics; POST /sql/load loads a page's
scenario file into the local targets when the TOML file has [sql_load] superuser = \"postgres\"
(pgasync demo writes it); every other path as serve. A target may restrict clients to one
role and some databases (user = \"pgasync\", databases = [\"e\", \"live_*\"]; every other startup is
refused with a FATAL ErrorResponse), and reach a real server with tls = \"require\"|\"verify-full\"
(ca_file) and password_env or password_file: the relay authenticates (SCRAM-SHA-256, MD5) for the
browser. --tls-cert/--tls-key serve https:// and wss://";

/// The relay's bounds when their flags do not say.
const DEFAULT_LIMITS: Limits = Limits {
    max_frame: 1 << 20,
    max_buffer: 256 << 10,
    max_sessions: 256,
    max_sessions_per_client: 64,
    idle: Duration::from_secs(60),
    connect: Duration::from_secs(5),
};

/// `pgasync relay`'s flags: its own and serve's (but serve's `--idle-timeout-ms`,
/// which is the sessions' here).
#[derive(clap::Args, Default)]
#[command(mut_arg("max_per_client", |a| a.help(format!(
    "Connections at once from one address [default: {}, and at least --max-sessions-per-client: \
     a session holds its connection until the upgrade]",
    static_files::Config::default().max_per_client
))))]
pub struct Flags {
    /// The targets' TOML file ([targets.NAME] addr = "HOST:PORT", user, databases, tls, password_env|password_file; [sql_load])
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
    /// A target besides the file's (repeatable; replaces the file's of the same name)
    #[arg(long, value_name = "NAME=HOST:PORT")]
    pub target: Vec<String>,
    /// Adds to each round trip through target NAME, half each way: 20ms, 1.5ms, 500us, 2s (repeatable)
    #[arg(long, value_name = "NAME=20ms")]
    pub delay: Vec<String>,
    /// A page origin allowed besides the relay's own (repeatable)
    #[arg(long, value_name = "http(s)://HOST[:PORT]")]
    pub allow_origin: Vec<String>,
    #[arg(long, value_name = "BYTES", help = format!(
        "The largest WebSocket message from the browser; a larger one ends the session (1009) [default: {}]",
        DEFAULT_LIMITS.max_frame
    ))]
    pub max_frame_bytes: Option<String>,
    #[arg(long, value_name = "BYTES", help = format!(
        "Bytes buffered each way before the relay stops reading that side [default: {}]", DEFAULT_LIMITS.max_buffer
    ))]
    pub max_buffer_bytes: Option<String>,
    #[arg(long, value_name = "N", help = format!("Sessions at once [default: {}]", DEFAULT_LIMITS.max_sessions))]
    pub max_sessions: Option<String>,
    #[arg(long, value_name = "N", help = format!(
        "Sessions at once from one address [default: {}]", DEFAULT_LIMITS.max_sessions_per_client
    ))]
    pub max_sessions_per_client: Option<String>,
    #[arg(long, value_name = "MS", help = format!(
        "A session with no bytes either way is closed after this, ms [default: {}]", DEFAULT_LIMITS.idle.as_millis()
    ))]
    pub idle_timeout_ms: Option<String>,
    #[arg(long, value_name = "MS", help = format!(
        "Connecting to a target, and the server side of a session's start, ms [default: {}]",
        DEFAULT_LIMITS.connect.as_millis()
    ))]
    pub connect_timeout_ms: Option<String>,
    /// Serves https:// and wss:// with this certificate chain (PEM; with --tls-key)
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<String>,
    /// The certificate's private key (PEM; with --tls-cert)
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<String>,
    #[command(flatten)]
    pub page: crate::serve::PageFlags,
}

pub fn run(a: Flags) -> Result<(), CliError> {
    let targets = targets_from(a.config.as_deref(), &a.target, &a.delay)?;
    let sql_loader = sql_load_from(a.config.as_deref())?.map(|c| sql_load::Loader::new(c, &targets));
    let origins = a.allow_origin.iter().map(|o| parse_origin(o)).collect::<Result<Vec<_>, _>>()?;
    let allow_hosts = a.page.allow_hosts()?;
    let port = a.page.port()?;
    let bind = a.page.bind();
    let (web_root, pkg_root) = a.page.roots();
    let d = DEFAULT_LIMITS;
    let ms = |name: &str, v: &Option<String>, default: Duration| -> Result<Duration, CliError> {
        Ok(Duration::from_millis(positive(name, v.as_deref(), default.as_millis() as usize)? as u64))
    };
    let limits = Limits {
        max_frame: positive("max-frame-bytes", a.max_frame_bytes.as_deref(), d.max_frame)?,
        max_buffer: positive("max-buffer-bytes", a.max_buffer_bytes.as_deref(), d.max_buffer)?,
        max_sessions: positive("max-sessions", a.max_sessions.as_deref(), d.max_sessions)?,
        max_sessions_per_client: positive(
            "max-sessions-per-client",
            a.max_sessions_per_client.as_deref(),
            d.max_sessions_per_client,
        )?,
        idle: ms("idle-timeout-ms", &a.idle_timeout_ms, d.idle)?,
        connect: ms("connect-timeout-ms", &a.connect_timeout_ms, d.connect)?,
    };
    let defaults = static_files::Config::default();
    let static_cfg = static_files::Config {
        web_root,
        pkg_root,
        header_timeout: ms("header-timeout-ms", &a.page.header_timeout_ms, defaults.header_timeout)?,
        // The connection's own inactivity bound outlasts the session's idle timeout
        // (which closes the WebSocket properly): it is only the backstop after an upgrade.
        idle_timeout: defaults.idle_timeout.max(limits.idle + Duration::from_secs(5)),
        max_connections: positive("max-connections", a.page.max_connections.as_deref(), defaults.max_connections)?,
        // A session holds its HTTP connection until the upgrade (the target connected),
        // so a client's sessions opening at once each hold one: with serve's 32 per
        // client, a burst of 33 to 64 sessions the session cap allows was refused as
        // "connections" (tests/classroom_load.rs). Unless given, it is at least the
        // per-client session cap.
        max_per_client: positive(
            "max-per-client",
            a.page.max_per_client.as_deref(),
            defaults.max_per_client.max(limits.max_sessions_per_client),
        )?,
        ..defaults
    };
    if !static_cfg.web_root.join("index.html").is_file() {
        eprintln!(
            "pgasync relay: note: {}/index.html not found: the page is not served here (pass --root or --web)",
            static_cfg.web_root.display()
        );
    }
    // Classroom mode: the page and its WebSockets over TLS (https://, wss://).
    let tls = match (a.tls_cert.as_deref(), a.tls_key.as_deref()) {
        (Some(cert), Some(key)) => Some(tokio_rustls::TlsAcceptor::from(
            tls::server_config(Path::new(cert), Path::new(key)).map_err(CliError::Usage)?,
        )),
        (None, None) => None,
        _ => return Err(CliError::Usage("--tls-cert and --tls-key go together".into())),
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(e.to_string()))?;
    rt.block_on(async move {
        let listener = TcpListener::bind((bind.as_str(), port))
            .await
            .map_err(|e| CliError::Failed(format!("cannot listen on {bind}:{port}: {e}")))?;
        let addr = listener.local_addr().map_err(|e| CliError::Failed(e.to_string()))?;
        let loopback = addr.ip().is_loopback();
        let host_check =
            if loopback || !allow_hosts.is_empty() { HostCheck::Allow(allow_hosts.clone()) } else { HostCheck::Off };
        if !loopback {
            eprintln!(
                "pgasync relay: warning: listening on {addr}, beyond loopback: anyone who can reach this machine \
                 can read the page and files under {} and {}, and reach the configured PostgreSQL servers \
                 through the relay from a page of an allowed origin. {}.",
                static_cfg.web_root.display(),
                static_cfg.pkg_root.display(),
                if allow_hosts.is_empty() { "Host checking is off" } else { "Host checking is on" }
            );
        }
        let (stop_tx, stop_rx) = watch::channel(false);
        let relay = Arc::new(Relay {
            origins: own_origins(scheme, addr, &allow_hosts).into_iter().chain(origins).collect(),
            tls,
            host_check: host_check.clone(),
            sessions: Arc::new(ConnLimits::new(limits.max_sessions, limits.max_sessions_per_client)),
            static_cfg: static_files::Config { host_check, ..static_cfg },
            targets,
            sql_loader,
            limits,
            metrics: Metrics::default(),
            next_id: AtomicU64::new(1),
            stop: stop_rx,
        });
        let names: Vec<&str> = relay.targets.keys().map(String::as_str).collect();
        eprintln!("pgasync relay: targets: {}", if names.is_empty() { "(none)".into() } else { names.join(", ") });
        let shutdown = shutdown_signal()?;
        println!("pgasync relay: {scheme}://{addr}/  (Ctrl-C to stop)");
        serve(listener, relay, stop_tx, shutdown).await;
        Ok(())
    })
}

/// Resolves on SIGINT or SIGTERM. The handlers are installed when this is called (not
/// when first polled), so call it before telling anyone the relay is up.
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>, CliError> {
    use tokio::signal::unix::{signal, SignalKind};
    let failed = |e: std::io::Error| CliError::Failed(format!("cannot handle signals: {e}"));
    let mut int = signal(SignalKind::interrupt()).map_err(failed)?;
    let mut term = signal(SignalKind::terminate()).map_err(failed)?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        eprintln!("pgasync relay: shutting down");
    })
}

/// `scheme://host[:port]`, lower-cased, as browsers send it in Origin.
fn parse_origin(o: &str) -> Result<String, CliError> {
    let lower = o.trim_end_matches('/').to_ascii_lowercase();
    let rest = lower.strip_prefix("http://").or_else(|| lower.strip_prefix("https://"));
    match rest {
        Some(host) if static_files::host_allowed(host, &[host.to_string()]) => Ok(lower),
        _ => Err(CliError::Usage(format!("--allow-origin {o}: expected http(s)://HOST[:PORT]"))),
    }
}

/// The origins of pages this relay serves itself (`scheme` is `https` with TLS).
fn own_origins(scheme: &str, addr: SocketAddr, allow_hosts: &[String]) -> Vec<String> {
    let port = addr.port();
    let mut hosts: Vec<String> = vec!["127.0.0.1".into(), "localhost".into(), "[::1]".into()];
    if !addr.ip().is_unspecified() {
        hosts.push(match addr.ip() {
            IpAddr::V4(ip) => ip.to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
        });
    }
    hosts.extend(allow_hosts.iter().map(|h| h.to_ascii_lowercase()));
    let default_port = if scheme == "https" { 443 } else { 80 };
    let mut out = Vec::new();
    for h in hosts {
        out.push(format!("{scheme}://{h}:{port}"));
        if port == default_port {
            out.push(format!("{scheme}://{h}"));
        }
    }
    out
}

// ---------------------------------------------------------------------------------
// The server

struct Relay {
    targets: BTreeMap<String, Target>,
    /// `--tls-cert`/`--tls-key`: every connection is TLS first.
    tls: Option<tokio_rustls::TlsAcceptor>,
    /// `POST /sql/load`, when the configuration has `[sql_load]`.
    sql_loader: Option<sql_load::Loader>,
    /// Origins an upgrade may carry.
    origins: Vec<String>,
    /// For the relay's own paths (the static service checks its own).
    host_check: HostCheck,
    static_cfg: static_files::Config,
    limits: Limits,
    sessions: Arc<ConnLimits>,
    metrics: Metrics,
    next_id: AtomicU64,
    /// Turns true on shutdown.
    stop: watch::Receiver<bool>,
}

/// Accepts connections until `shutdown`, then stops accepting, tells every session to
/// cancel and close, and waits (a bounded time) for them.
async fn serve(
    listener: TcpListener,
    relay: Arc<Relay>,
    stop: watch::Sender<bool>,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let limits = Arc::new(ConnLimits::new(relay.static_cfg.max_connections, relay.static_cfg.max_per_client));
    let mut tasks = static_files::accept_loop(
        listener,
        limits,
        shutdown,
        |stream, peer| connection(stream, peer, relay.clone()),
        |stream| {
            relay.metrics.refuse(Refusal::Connections);
            static_files::refuse_busy(stream);
        },
    )
    .await;
    let _ = stop.send(true);
    let deadline = Instant::now() + SHUTDOWN_GRACE;
    while (relay.metrics.active.load(Ordering::SeqCst) > 0 || !tasks.is_empty()) && Instant::now() < deadline {
        tokio::select! {
            _ = tasks.join_next(), if !tasks.is_empty() => {}
            _ = tokio::time::sleep(Duration::from_millis(10)) => {}
        }
    }
    tasks.abort_all();
}

/// One connection: its TLS handshake first when the relay has a certificate (bounded
/// by the header timeout, as a slow HTTP client is), then HTTP.
async fn connection(stream: TcpStream, peer: SocketAddr, relay: Arc<Relay>) {
    let _ = stream.set_nodelay(true);
    let Some(acceptor) = relay.tls.clone() else {
        return http_connection(stream, peer, relay).await;
    };
    match tokio::time::timeout(relay.static_cfg.header_timeout, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => http_connection(tls, peer, relay).await,
        Ok(Err(e)) => eprintln!("pgasync relay: TLS handshake with {peer} failed: {e}"),
        Err(_) => eprintln!("pgasync relay: TLS handshake with {peer} timed out"),
    }
}

/// One HTTP connection: requests until it closes or upgrades (the session then runs in
/// a task of its own).
async fn http_connection<T>(stream: T, peer: SocketAddr, relay: Arc<Relay>)
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let io = TokioIo::new(IdleIo::new(stream, relay.static_cfg.idle_timeout));
    let svc_relay = relay.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let relay = svc_relay.clone();
        async move { Ok::<_, std::convert::Infallible>(handle(req, peer, relay).await) }
    });
    let conn = static_files::http1_builder(&relay.static_cfg).serve_connection(io, service).with_upgrades();
    tokio::pin!(conn);
    let mut stop = relay.stop.clone();
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = stop.wait_for(|s| *s) => conn.as_mut().graceful_shutdown(),
    }
    let _ = conn.await;
}

async fn handle(req: Request<Incoming>, peer: SocketAddr, relay: Arc<Relay>) -> Response<Body> {
    let path = req.uri().path();
    let own = matches!(path, "/health" | "/targets" | "/metrics" | "/sql/load") || path.starts_with("/shard/");
    if !own {
        return static_files::respond(&req, &relay.static_cfg).await;
    }
    // An absolute-form target (`GET http://elsewhere/shard/s1`) is a proxy request,
    // which the relay is not: refused as `serve` refuses it.
    if req.uri().authority().is_some() {
        relay.metrics.refuse(Refusal::Host);
        return text(StatusCode::FORBIDDEN, "text/plain; charset=utf-8", "absolute-form requests are refused");
    }
    if let Err(status) = check_host(&req, &relay.host_check) {
        relay.metrics.refuse(Refusal::Host);
        return text(status, "text/plain; charset=utf-8", status.canonical_reason().unwrap_or("refused"));
    }
    if let Some(name) = path.strip_prefix("/shard/") {
        let name = name.to_string();
        return upgrade(req, &name, peer, relay).await;
    }
    if path == "/sql/load" {
        return sql_load::handle(req, peer.ip(), relay.sql_loader.as_ref(), &relay.origins).await;
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", "method not allowed");
        r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    match path {
        "/health" => text(StatusCode::OK, "text/plain; charset=utf-8", "ok"),
        "/targets" => {
            let names: Vec<&String> = relay.targets.keys().collect();
            let json = serde_json::to_string(&names).unwrap_or_else(|_| "[]".into());
            text(StatusCode::OK, "application/json", &json)
        }
        _ => text(StatusCode::OK, "text/plain; version=0.0.4; charset=utf-8", &relay.metrics.render()),
    }
}

/// 400 for a missing or repeated Host, 403 for one not allowed.
fn check_host<B>(req: &Request<B>, check: &HostCheck) -> Result<(), StatusCode> {
    let mut hosts = req.headers().get_all(header::HOST).iter();
    let (Some(host), None) = (hosts.next(), hosts.next()) else {
        return Err(StatusCode::BAD_REQUEST);
    };
    let host = host.to_str().map_err(|_| StatusCode::BAD_REQUEST)?;
    match check {
        HostCheck::Allow(extra) if !static_files::host_allowed(host, extra) => Err(StatusCode::FORBIDDEN),
        _ => Ok(()),
    }
}

fn text(status: StatusCode, content_type: &'static str, body: &str) -> Response<Body> {
    let body = format!("{body}\n");
    let len = body.len();
    let mut r = Response::new(Body::bytes(Bytes::from(body)));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    r
}

/// Whether header `name` holds `token` in its comma-separated list (case-insensitive).
fn has_token<B>(req: &Request<B>, name: header::HeaderName, token: &str) -> bool {
    req.headers()
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

/// `/shard/<name>`: checks the upgrade, connects to the target and answers 101, or
/// refuses with a plain HTTP status.
async fn upgrade(mut req: Request<Incoming>, name: &str, peer: SocketAddr, relay: Arc<Relay>) -> Response<Body> {
    let refuse = |why: Refusal, status: StatusCode, msg: &str| {
        relay.metrics.refuse(why);
        text(status, "text/plain; charset=utf-8", msg)
    };
    // Every Origin header counts: a second one must not slip past the first.
    for origin in req.headers().get_all(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("").to_ascii_lowercase();
        if !relay.origins.contains(&origin) || req.headers().get_all(header::ORIGIN).iter().count() > 1 {
            return refuse(Refusal::Origin, StatusCode::FORBIDDEN, "origin not allowed");
        }
    }
    let Some(target) = relay.targets.get(name).cloned() else {
        return refuse(Refusal::UnknownTarget, StatusCode::NOT_FOUND, "no such target");
    };
    let key = req.headers().get(header::SEC_WEBSOCKET_KEY).cloned();
    let websocket = req.method() == Method::GET
        && has_token(&req, header::CONNECTION, "upgrade")
        && has_token(&req, header::UPGRADE, "websocket")
        && req.headers().get(header::SEC_WEBSOCKET_VERSION).is_some_and(|v| v == "13");
    let (true, Some(key)) = (websocket, key) else {
        let mut r =
            refuse(Refusal::NotWebSocket, StatusCode::UPGRADE_REQUIRED, "a WebSocket upgrade (version 13) is expected");
        r.headers_mut().insert(header::SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
        return r;
    };
    let Some(permit) = relay.sessions.try_acquire(peer.ip()) else {
        let mut r = refuse(Refusal::Sessions, StatusCode::SERVICE_UNAVAILABLE, "too many sessions");
        r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return r;
    };
    let tcp = match tokio::time::timeout(relay.limits.connect, TcpStream::connect(&target.addr)).await {
        Ok(Ok(tcp)) => tcp,
        failed => {
            let timed_out = failed.is_err();
            let why = match failed {
                Ok(Err(e)) => e.to_string(),
                _ => "connect timeout".to_string(),
            };
            eprintln!("pgasync relay: error: {peer} -> {name}: cannot connect to {}: {why}", target.addr);
            relay.metrics.errors.fetch_add(1, Ordering::Relaxed);
            let status = if timed_out { StatusCode::GATEWAY_TIMEOUT } else { StatusCode::BAD_GATEWAY };
            return refuse(Refusal::ConnectFailed, status, "cannot reach the target");
        }
    };
    let _ = tcp.set_nodelay(true);
    let on_upgrade = hyper::upgrade::on(&mut req);
    let id = relay.next_id.fetch_add(1, Ordering::Relaxed);
    let name = name.to_string();
    tokio::spawn(async move {
        match on_upgrade.await {
            Ok(upgraded) => {
                let config = WebSocketConfig::default()
                    .max_message_size(Some(relay.limits.max_frame))
                    .max_frame_size(Some(relay.limits.max_frame))
                    .read_buffer_size(16 * 1024)
                    .write_buffer_size(0);
                let ws = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config)).await;
                let s = RelaySession { id, name, target, peer, relay: relay.clone() };
                s.run(ws, tcp).await;
            }
            Err(e) => {
                relay.metrics.errors.fetch_add(1, Ordering::Relaxed);
                eprintln!("pgasync relay: error: session {id} ({peer} -> {name}): upgrade failed: {e}");
            }
        }
        drop(permit);
    });
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = r.headers_mut();
    h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
    h.insert(header::SEC_WEBSOCKET_ACCEPT, HeaderValue::from_str(&accept).expect("base64 is a header value"));
    r
}

// ---------------------------------------------------------------------------------
// Sessions

type Ws = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

struct RelaySession {
    id: u64,
    name: String,
    target: Target,
    peer: SocketAddr,
    relay: Arc<Relay>,
}

/// Why a session ended.
#[derive(Debug)]
enum End {
    BrowserClosed,
    BrowserError(String),
    TooBig,
    TextFrame,
    Idle,
    Shutdown,
    ServerClosed,
    ServerError(String),
    /// The client's startup was refused; the ErrorResponse is not sent yet.
    RefusedStartup(gateway::Refusal),
    /// The session was refused at its start; the client has the ErrorResponse.
    Refused(String),
}

impl End {
    /// Whether the browser's side ended first (then the backend may be mid-query).
    fn browser_side(&self) -> bool {
        !matches!(self, End::ServerClosed | End::ServerError(_))
    }

    fn is_error(&self) -> bool {
        matches!(self, End::BrowserError(_) | End::ServerError(_) | End::TooBig | End::TextFrame)
    }

    /// The close frame the browser gets, if it is still there to get one.
    fn close_frame(&self) -> Option<CloseFrame> {
        let (code, reason) = match self {
            End::BrowserClosed | End::BrowserError(_) => return None,
            End::TooBig => (CloseCode::Size, "message too big"),
            End::TextFrame => (CloseCode::Unsupported, "binary frames only"),
            End::Idle => (CloseCode::Normal, "idle timeout"),
            End::Shutdown => (CloseCode::Away, "relay shutting down"),
            End::ServerClosed => (CloseCode::Normal, "server closed the connection"),
            End::ServerError(_) => (CloseCode::Error, "server connection failed"),
            End::RefusedStartup(_) | End::Refused(_) => (CloseCode::Policy, "refused"),
        };
        Some(CloseFrame { code, reason: reason.into() })
    }

    fn describe(&self) -> String {
        match self {
            End::BrowserClosed => "browser closed".into(),
            End::BrowserError(e) => format!("browser connection failed: {e}"),
            End::TooBig => "browser sent a message over the size limit".into(),
            End::TextFrame => "browser sent a text frame".into(),
            End::Idle => "idle timeout".into(),
            End::Shutdown => "relay shutting down".into(),
            End::ServerClosed => "server closed".into(),
            End::ServerError(e) => format!("server connection failed: {e}"),
            End::RefusedStartup(r) => format!("refused: {}", r.message),
            End::Refused(why) => format!("refused: {why}"),
        }
    }
}

/// A chunk on its way, holding its share of the direction's buffer.
struct Chunk {
    due: Instant,
    data: Bytes,
    _permit: OwnedSemaphorePermit,
}

/// What both directions of a session share.
struct Shared<'a> {
    metrics: &'a Metrics,
    started: Instant,
    /// Milliseconds since `started` of the last byte read from either side.
    last_ms: AtomicU64,
    to_server: AtomicU64,
    to_browser: AtomicU64,
    conv: Conversation,
}

impl Shared<'_> {
    fn touch(&self) {
        self.last_ms.store(self.started.elapsed().as_millis() as u64, Ordering::Relaxed);
    }
}

/// A session past its start: the server's connection, authenticated, and what is due
/// each way before the pumps take over.
struct Opened {
    server: ServerStream,
    /// Statements the client sent behind its startup packet (`pipelined_setup`).
    to_server: Vec<u8>,
    /// The server's AuthenticationOk and what followed it.
    to_browser: bytes::BytesMut,
}

impl RelaySession {
    async fn run(self, ws: Ws, tcp: TcpStream) {
        let m = &self.relay.metrics;
        m.sessions.fetch_add(1, Ordering::Relaxed);
        m.active.fetch_add(1, Ordering::SeqCst);
        eprintln!("pgasync relay: session {} open: {} -> {} ({})", self.id, self.peer, self.name, self.target.addr);
        let shared = Shared {
            metrics: m,
            started: Instant::now(),
            last_ms: AtomicU64::new(0),
            to_server: AtomicU64::new(0),
            to_browser: AtomicU64::new(0),
            conv: Conversation::default(),
        };
        let (mut ws_tx, mut ws_rx) = ws.split();
        let opened = match self.open(&mut ws_tx, &mut ws_rx, tcp).await {
            Ok(o) => o,
            Err(end) => {
                if let Some(frame) = end.close_frame() {
                    close_browser(&mut ws_tx, &mut ws_rx, frame).await;
                }
                m.active.fetch_sub(1, Ordering::SeqCst);
                eprintln!("pgasync relay: session {} closed: {}", self.id, end.describe());
                return;
            }
        };
        let (mut tcp_rx, mut tcp_tx) = tokio::io::split(opened.server);
        let half = self.target.delay / 2;
        let limits = &self.relay.limits;
        // The conversation as the trackers would have followed it: the startup is
        // awaiting its ReadyForQuery, which the server's bytes may already hold.
        let client = ClientTracker::after_startup(&shared.conv);
        let mut server = ServerTracker::default();
        server.feed(&opened.to_browser, &shared.conv);
        let started = async {
            // The start-up exchange is one round trip of `--delay`, as a trust server's.
            hold(Instant::now() + self.target.delay).await;
            let n = opened.to_browser.len() as u64;
            ws_tx
                .send(Message::Binary(opened.to_browser.freeze()))
                .await
                .map_err(|e| End::BrowserError(e.to_string()))?;
            shared.to_browser.fetch_add(n, Ordering::Relaxed);
            m.to_browser.fetch_add(n, Ordering::Relaxed);
            if !opened.to_server.is_empty() {
                tcp_tx.write_all(&opened.to_server).await.map_err(|e| End::ServerError(e.to_string()))?;
                shared.to_server.fetch_add(opened.to_server.len() as u64, Ordering::Relaxed);
                m.to_server.fetch_add(opened.to_server.len() as u64, Ordering::Relaxed);
            }
            Ok::<(), End>(())
        }
        .await;
        if let Err(end) = started {
            if let Some(frame) = end.close_frame() {
                close_browser(&mut ws_tx, &mut ws_rx, frame).await;
            }
            m.active.fetch_sub(1, Ordering::SeqCst);
            eprintln!("pgasync relay: session {} closed: {}", self.id, end.describe());
            return;
        }
        let (up_tx, up_rx) = mpsc::unbounded_channel();
        let (down_tx, down_rx) = mpsc::unbounded_channel();
        let up = pump(
            browser_reader(
                &mut ws_rx,
                up_tx,
                Arc::new(Semaphore::new(limits.max_buffer)),
                limits.max_buffer,
                half,
                &shared,
                client,
            ),
            server_writer(&mut tcp_tx, up_rx, &shared),
            half + DRAIN,
        );
        let down = pump(
            server_reader(
                &mut tcp_rx,
                down_tx,
                Arc::new(Semaphore::new(limits.max_buffer)),
                limits.max_buffer,
                half,
                &shared,
                server,
            ),
            browser_writer(&mut ws_tx, down_rx, &shared),
            half + DRAIN,
        );
        let mut stop = self.relay.stop.clone();
        let end = tokio::select! {
            e = up => e,
            e = down => e,
            e = idle_watch(&shared, limits.idle) => e,
            _ = stop.wait_for(|s| *s) => End::Shutdown,
        };
        // The browser is gone (or going) while the backend may still be working for it:
        // cancel that work, or the backend runs on after its client left.
        let mut cancelled = false;
        if end.browser_side() && shared.conv.busy() {
            if let Some((pid, key)) = shared.conv.key() {
                match send_cancel(&self.target.addr, pid, &key, limits.connect).await {
                    Ok(()) => {
                        cancelled = true;
                        m.cancels.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        m.errors.fetch_add(1, Ordering::Relaxed);
                        eprintln!("pgasync relay: error: session {}: cancel request failed: {e}", self.id);
                    }
                }
            }
        }
        let _ = tcp_tx.shutdown().await;
        drop((tcp_tx, tcp_rx));
        match end.close_frame() {
            Some(frame) => close_browser(&mut ws_tx, &mut ws_rx, frame).await,
            // The browser's close frame gets its answer (a dropped browser: nothing to do).
            None => {
                let _ = tokio::time::timeout(Duration::from_secs(1), ws_tx.close()).await;
            }
        }
        if end.is_error() {
            m.errors.fetch_add(1, Ordering::Relaxed);
        }
        m.active.fetch_sub(1, Ordering::SeqCst);
        eprintln!(
            "pgasync relay: session {} closed: {}{}; {} B to server, {} B to browser, {:.3} s",
            self.id,
            end.describe(),
            if cancelled { "; query cancelled" } else { "" },
            shared.to_server.load(Ordering::Relaxed),
            shared.to_browser.load(Ordering::Relaxed),
            shared.started.elapsed().as_secs_f64()
        );
    }
}

impl RelaySession {
    /// The session's start (see [`gateway`]): the client's startup packet read and
    /// checked against the target's access, then the server's connection opened and
    /// authenticated. A refusal reaches the client as PostgreSQL's ErrorResponse before
    /// the session closes, and is logged.
    async fn open(
        &self,
        ws_tx: &mut futures_util::stream::SplitSink<Ws, Message>,
        ws_rx: &mut futures_util::stream::SplitStream<Ws>,
        tcp: TcpStream,
    ) -> Result<Opened, End> {
        let limits = &self.relay.limits;
        let read = tokio::time::timeout(limits.idle, read_startup(ws_tx, ws_rx)).await.unwrap_or(Err(End::Idle));
        let (startup, rest) = match read {
            Ok(opening) => opening,
            Err(End::RefusedStartup(r)) => return Err(self.refuse(ws_tx, r).await),
            Err(end) => return Err(end),
        };
        if let Err(r) = startup.check(&self.target.access) {
            return Err(self.refuse(ws_tx, r).await);
        }
        let up = &self.target.upstream;
        match gateway::open_server(tcp, &self.name, &self.target.addr, up, &startup, limits.connect).await {
            Ok((server, to_browser)) => Ok(Opened { server, to_server: rest, to_browser }),
            Err(failure) => {
                self.relay.metrics.refuse(Refusal::Login);
                eprintln!("pgasync relay: session {} refused: {}", self.id, failure.log);
                let _ = ws_tx.send(Message::Binary(failure.to_client.into())).await;
                Err(End::Refused(failure.log))
            }
        }
    }

    /// Sends the refusal's ErrorResponse and says why in the log.
    async fn refuse(&self, ws_tx: &mut futures_util::stream::SplitSink<Ws, Message>, r: gateway::Refusal) -> End {
        self.relay.metrics.refuse(Refusal::Startup);
        eprintln!("pgasync relay: session {} refused: {} (SQLSTATE {})", self.id, r.message, r.sqlstate);
        let _ = ws_tx.send(Message::Binary(r.error_response().into())).await;
        End::Refused(r.message)
    }
}

/// The client's SSL/GSS requests answered 'N', up to its startup packet: that packet's
/// parameters and the bytes after it.
async fn read_startup(
    ws_tx: &mut futures_util::stream::SplitSink<Ws, Message>,
    ws_rx: &mut futures_util::stream::SplitStream<Ws>,
) -> Result<(gateway::Startup, Vec<u8>), End> {
    let mut reader = StartupReader::default();
    loop {
        while let Some(opening) = reader.next().map_err(End::from)? {
            match opening {
                Opening::Negotiate => ws_tx
                    .send(Message::Binary(Bytes::from_static(b"N")))
                    .await
                    .map_err(|e| End::BrowserError(e.to_string()))?,
                Opening::Startup(s) => return Ok((s, reader.rest())),
                Opening::Cancel(_) => {
                    let why = "cancel requests are not relayed (the relay cancels when a client leaves mid-query)";
                    return Err(End::RefusedStartup(gateway::Refusal { sqlstate: "08P01", message: why.into() }));
                }
            }
        }
        match ws_rx.next().await {
            Some(Ok(Message::Binary(data))) => reader.feed(&data).map_err(End::from)?,
            Some(Ok(Message::Text(_))) => return Err(End::TextFrame),
            Some(Ok(Message::Close(_))) | None => return Err(End::BrowserClosed),
            Some(Ok(_)) => {}
            Some(Err(tungstenite::Error::Capacity(_))) => return Err(End::TooBig),
            Some(Err(e)) => return Err(End::BrowserError(e.to_string())),
        }
    }
}

impl From<gateway::Refusal> for End {
    fn from(r: gateway::Refusal) -> End {
        End::RefusedStartup(r)
    }
}

/// One direction: `reader` fills the queue and returns why its side ended (dropping the
/// queue's sender); `writer` empties it and returns `None` once it is drained, or why
/// it failed. The direction ends when both are done (what was read is delivered, if
/// the other side takes it within `drain`), or at the writer's failure.
async fn pump(
    reader: impl std::future::Future<Output = End>,
    writer: impl std::future::Future<Output = Option<End>>,
    drain: Duration,
) -> End {
    tokio::pin!(reader, writer);
    let ended = tokio::select! {
        e = &mut reader => e,
        w = &mut writer => return w.unwrap_or(End::ServerClosed),
    };
    // A side that stopped reading must not hold the session (and the cancel) back.
    match tokio::time::timeout(drain, writer).await {
        Ok(Some(failed)) => failed,
        _ => ended,
    }
}

/// Browser → queue: binary messages, each holding its share of the buffer (so a full
/// buffer stops the reading).
async fn browser_reader(
    ws: &mut futures_util::stream::SplitStream<Ws>,
    queue: mpsc::UnboundedSender<Chunk>,
    budget: Arc<Semaphore>,
    max_buffer: usize,
    delay: Duration,
    shared: &Shared<'_>,
    mut client: ClientTracker,
) -> End {
    loop {
        let data = match ws.next().await {
            Some(Ok(Message::Binary(data))) => data,
            Some(Ok(Message::Text(_))) => return End::TextFrame,
            Some(Ok(Message::Close(_))) | None => return End::BrowserClosed,
            Some(Ok(_)) => continue, // ping, pong: tungstenite answers pings itself
            Some(Err(tungstenite::Error::Capacity(_))) => return End::TooBig,
            Some(Err(e)) => return End::BrowserError(e.to_string()),
        };
        if data.is_empty() {
            continue;
        }
        shared.touch();
        client.feed(&data, &shared.conv);
        let Ok(permit) = budget.clone().acquire_many_owned(data.len().min(max_buffer) as u32).await else {
            return End::BrowserClosed;
        };
        if queue.send(Chunk { due: Instant::now() + delay, data, _permit: permit }).is_err() {
            return End::BrowserClosed;
        }
    }
}

/// Queue → server.
async fn server_writer(
    tcp: &mut (impl tokio::io::AsyncWrite + Unpin),
    mut queue: mpsc::UnboundedReceiver<Chunk>,
    shared: &Shared<'_>,
) -> Option<End> {
    while let Some(chunk) = queue.recv().await {
        hold(chunk.due).await;
        if let Err(e) = tcp.write_all(&chunk.data).await {
            return Some(End::ServerError(e.to_string()));
        }
        shared.to_server.fetch_add(chunk.data.len() as u64, Ordering::Relaxed);
        shared.metrics.to_server.fetch_add(chunk.data.len() as u64, Ordering::Relaxed);
    }
    None
}

/// Server → queue, in chunks of at most [`SERVER_CHUNK`].
async fn server_reader(
    tcp: &mut (impl tokio::io::AsyncRead + Unpin),
    queue: mpsc::UnboundedSender<Chunk>,
    budget: Arc<Semaphore>,
    max_buffer: usize,
    delay: Duration,
    shared: &Shared<'_>,
    mut server: ServerTracker,
) -> End {
    let mut buf = vec![0u8; SERVER_CHUNK];
    loop {
        let n = match tcp.read(&mut buf).await {
            Ok(0) => return End::ServerClosed,
            Ok(n) => n,
            Err(e) => return End::ServerError(e.to_string()),
        };
        shared.touch();
        server.feed(&buf[..n], &shared.conv);
        let Ok(permit) = budget.clone().acquire_many_owned(n.min(max_buffer) as u32).await else {
            return End::ServerClosed;
        };
        let data = Bytes::copy_from_slice(&buf[..n]);
        if queue.send(Chunk { due: Instant::now() + delay, data, _permit: permit }).is_err() {
            return End::ServerClosed;
        }
    }
}

/// Queue → browser, one binary message per chunk.
async fn browser_writer(
    ws: &mut futures_util::stream::SplitSink<Ws, Message>,
    mut queue: mpsc::UnboundedReceiver<Chunk>,
    shared: &Shared<'_>,
) -> Option<End> {
    while let Some(chunk) = queue.recv().await {
        hold(chunk.due).await;
        let len = chunk.data.len() as u64;
        if let Err(e) = ws.send(Message::Binary(chunk.data.clone())).await {
            return Some(End::BrowserError(e.to_string()));
        }
        shared.to_browser.fetch_add(len, Ordering::Relaxed);
        shared.metrics.to_browser.fetch_add(len, Ordering::Relaxed);
    }
    None
}

/// Waits until `due` (the `--delay`). Not at all when it has passed: the timer's
/// millisecond ticks would otherwise add up to a millisecond to every chunk.
async fn hold(due: Instant) {
    if due > Instant::now() {
        tokio::time::sleep_until(due).await;
    }
}

/// Resolves once no byte has been read from either side for `idle`.
async fn idle_watch(shared: &Shared<'_>, idle: Duration) -> End {
    loop {
        let deadline = shared.started + Duration::from_millis(shared.last_ms.load(Ordering::Relaxed)) + idle;
        if Instant::now() >= deadline {
            return End::Idle;
        }
        tokio::time::sleep_until(deadline).await;
    }
}

/// Sends the close frame and waits a moment for the browser's answer, so the frame is
/// not lost to a reset of a connection with unread bytes.
async fn close_browser(
    tx: &mut futures_util::stream::SplitSink<Ws, Message>,
    rx: &mut futures_util::stream::SplitStream<Ws>,
    frame: CloseFrame,
) {
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        if tx.send(Message::Close(Some(frame))).await.is_ok() {
            while let Some(Ok(_)) = rx.next().await {}
        }
    })
    .await;
}

/// PostgreSQL's CancelRequest for backend `pid` with its secret `key`, on a new
/// connection to `addr`; waits (bounded) for the server to close that connection,
/// which it does once it has signalled the backend.
async fn send_cancel(addr: &str, pid: u32, key: &[u8], timeout: Duration) -> std::io::Result<()> {
    let timed_out = |_| std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out");
    let mut s = tokio::time::timeout(timeout, TcpStream::connect(addr)).await.map_err(timed_out)??;
    let mut msg = Vec::with_capacity(12 + key.len());
    msg.extend_from_slice(&(12 + key.len() as u32).to_be_bytes());
    msg.extend_from_slice(&CANCEL_REQUEST.to_be_bytes());
    msg.extend_from_slice(&pid.to_be_bytes());
    msg.extend_from_slice(key);
    s.write_all(&msg).await?;
    let _ = tokio::time::timeout(timeout, s.read(&mut [0u8; 1])).await;
    Ok(())
}

// ---------------------------------------------------------------------------------
// Following the PostgreSQL conversation (framing only; payload is never kept)

/// What the relay knows of the conversation: enough to cancel the backend's query.
#[derive(Default)]
struct Conversation {
    /// ReadyForQuery answers still due: one per StartupMessage, Query, Sync and
    /// FunctionCall sent, less one per ReadyForQuery received.
    awaiting: AtomicI64,
    /// An extended-query message (Parse, Bind, Execute, Describe, Close, Flush) was sent
    /// since the last Sync: results may come with no ReadyForQuery.
    unsynced: AtomicBool,
    /// Single-byte answers due (to SSLRequest and GSSENCRequest).
    single_bytes: AtomicU32,
    /// A stream could not be followed (TLS, bad framing): assume a query is under way.
    lost: AtomicBool,
    /// BackendKeyData: pid and secret key.
    key: Mutex<Option<(u32, Vec<u8>)>>,
}

impl Conversation {
    fn busy(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
            || self.awaiting.load(Ordering::SeqCst) > 0
            || self.unsynced.load(Ordering::SeqCst)
    }

    fn key(&self) -> Option<(u32, Vec<u8>)> {
        self.key.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// One message's start, as [`Framing`] yields it.
struct MsgStart {
    /// `None` for the untyped startup-phase packets.
    ty: Option<u8>,
    /// The first body bytes the caller asked for.
    prefix: Vec<u8>,
}

/// Splits a byte stream (in chunks of any size) into PostgreSQL messages: a type byte
/// (once `typed`) and a big-endian length that counts itself. Only the first bytes of
/// a body asked for are copied; the rest is skipped.
#[derive(Default)]
struct Framing {
    typed: bool,
    head: Vec<u8>,
    /// The current message once its header is in: type and body length.
    msg: Option<(Option<u8>, usize)>,
    want: usize,
    prefix: Vec<u8>,
    /// Body bytes left to skip.
    skip: usize,
}

/// Messages above this are not PostgreSQL's (its limit is 1 GB).
const MAX_MESSAGE: usize = 1 << 30;

impl Framing {
    fn at_boundary(&self) -> bool {
        self.head.is_empty() && self.msg.is_none() && self.skip == 0
    }

    /// Consumes `data` up to the next message start (returned) or its end (`Ok(None)`);
    /// `want(type, body length)` says how many body bytes to return with it.
    fn next(&mut self, data: &mut &[u8], want: impl Fn(Option<u8>, usize) -> usize) -> Result<Option<MsgStart>, ()> {
        loop {
            if self.skip > 0 {
                let n = self.skip.min(data.len());
                *data = &data[n..];
                self.skip -= n;
                if self.skip > 0 {
                    return Ok(None);
                }
            }
            if let Some((ty, body)) = self.msg {
                let n = (self.want - self.prefix.len()).min(data.len());
                self.prefix.extend_from_slice(&data[..n]);
                *data = &data[n..];
                if self.prefix.len() < self.want {
                    return Ok(None);
                }
                self.msg = None;
                self.skip = body - self.want;
                return Ok(Some(MsgStart { ty, prefix: std::mem::take(&mut self.prefix) }));
            }
            let head_len = if self.typed { 5 } else { 4 };
            if data.is_empty() {
                return Ok(None);
            }
            let n = (head_len - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..n]);
            *data = &data[n..];
            if self.head.len() < head_len {
                return Ok(None);
            }
            let len = u32::from_be_bytes(self.head[head_len - 4..].try_into().expect("4 bytes")) as usize;
            if !(4..=MAX_MESSAGE).contains(&len) {
                return Err(());
            }
            let ty = self.typed.then(|| self.head[0]);
            self.head.clear();
            let body = len - 4;
            self.want = want(ty, body).min(body);
            self.msg = Some((ty, body));
        }
    }
}

/// The browser's stream: startup packets, then typed messages.
#[derive(Default)]
struct ClientTracker {
    framing: Framing,
    lost: bool,
}

impl ClientTracker {
    /// Following a conversation whose startup packet the gateway has read: typed
    /// messages now, and the startup's ReadyForQuery due.
    fn after_startup(conv: &Conversation) -> ClientTracker {
        conv.awaiting.fetch_add(1, Ordering::SeqCst);
        ClientTracker { framing: Framing { typed: true, ..Framing::default() }, lost: false }
    }

    fn feed(&mut self, mut data: &[u8], conv: &Conversation) {
        while !self.lost && !data.is_empty() {
            let msg = match self.framing.next(&mut data, |ty, _| if ty.is_none() { 4 } else { 0 }) {
                Ok(Some(m)) => m,
                Ok(None) => return,
                Err(()) => return self.lose(conv),
            };
            match msg.ty {
                None if msg.prefix.len() < 4 => return self.lose(conv),
                None => match u32::from_be_bytes(msg.prefix[..4].try_into().expect("4 bytes")) {
                    SSL_REQUEST | GSSENC_REQUEST => {
                        conv.single_bytes.fetch_add(1, Ordering::SeqCst);
                    }
                    // A StartupMessage (protocol 3.x): typed messages follow.
                    v if v >> 16 == 3 => {
                        self.framing.typed = true;
                        conv.awaiting.fetch_add(1, Ordering::SeqCst);
                    }
                    _ => return self.lose(conv),
                },
                Some(b'Q' | b'F') => {
                    conv.awaiting.fetch_add(1, Ordering::SeqCst);
                }
                Some(b'S') => {
                    conv.awaiting.fetch_add(1, Ordering::SeqCst);
                    conv.unsynced.store(false, Ordering::SeqCst);
                }
                Some(b'P' | b'B' | b'E' | b'D' | b'C' | b'H') => conv.unsynced.store(true, Ordering::SeqCst),
                Some(_) => {}
            }
        }
    }

    fn lose(&mut self, conv: &Conversation) {
        self.lost = true;
        conv.lost.store(true, Ordering::SeqCst);
    }
}

/// The server's stream: typed messages, after any single-byte SSL/GSS answers.
struct ServerTracker {
    framing: Framing,
    lost: bool,
}

impl Default for ServerTracker {
    fn default() -> ServerTracker {
        ServerTracker { framing: Framing { typed: true, ..Framing::default() }, lost: false }
    }
}

impl ServerTracker {
    fn feed(&mut self, mut data: &[u8], conv: &Conversation) {
        while !self.lost && !data.is_empty() {
            // The answer to an SSLRequest/GSSENCRequest is one byte; 'S' or 'G' means the
            // stream turns to TLS/GSS, which we cannot follow. (The browser's client never
            // asks, but nothing must break if one does.) The request was read before it
            // could be answered, so the count is already up.
            if self.framing.at_boundary() && conv.single_bytes.load(Ordering::SeqCst) > 0 {
                conv.single_bytes.fetch_sub(1, Ordering::SeqCst);
                let answer = data[0];
                data = &data[1..];
                if answer == b'S' || answer == b'G' {
                    return self.lose(conv);
                }
                continue;
            }
            let want = |ty: Option<u8>, _| if ty == Some(b'K') { 4 + 256 } else { 0 };
            match self.framing.next(&mut data, want) {
                Ok(Some(m)) => match m.ty {
                    Some(b'K') if m.prefix.len() >= 8 => {
                        let pid = u32::from_be_bytes(m.prefix[..4].try_into().expect("4 bytes"));
                        *conv.key.lock().unwrap_or_else(|e| e.into_inner()) = Some((pid, m.prefix[4..].to_vec()));
                    }
                    Some(b'Z') => {
                        let _ =
                            conv.awaiting.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| Some((n - 1).max(0)));
                    }
                    _ => {}
                },
                Ok(None) => return,
                Err(()) => return self.lose(conv),
            }
        }
    }

    fn lose(&mut self, conv: &Conversation) {
        self.lost = true;
        conv.lost.store(true, Ordering::SeqCst);
    }
}

// ---------------------------------------------------------------------------------
// Metrics

#[derive(Clone, Copy)]
enum Refusal {
    Host,
    Origin,
    UnknownTarget,
    NotWebSocket,
    Sessions,
    Connections,
    ConnectFailed,
    /// A startup packet the target's access does not allow.
    Startup,
    /// The server's side failed to open (TLS, authentication).
    Login,
}

const REFUSALS: [&str; 9] = [
    "host",
    "origin",
    "unknown_target",
    "not_websocket",
    "sessions",
    "connections",
    "connect_failed",
    "startup",
    "login",
];

#[derive(Default)]
struct Metrics {
    sessions: AtomicU64,
    active: AtomicUsize,
    cancels: AtomicU64,
    errors: AtomicU64,
    refusals: [AtomicU64; 9],
    /// Bytes of closed and open sessions are added as they move.
    to_server: AtomicU64,
    to_browser: AtomicU64,
}

impl Metrics {
    fn refuse(&self, why: Refusal) {
        self.refusals[why as usize].fetch_add(1, Ordering::Relaxed);
    }

    fn render(&self) -> String {
        let mut out = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, rows: &[(String, u64)]| {
            out += &format!("# HELP pgasync_relay_{name} {help}\n# TYPE pgasync_relay_{name} {kind}\n");
            for (labels, v) in rows {
                out += &format!("pgasync_relay_{name}{labels} {v}\n");
            }
        };
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        metric("sessions_total", "counter", "WebSocket sessions opened.", &[(String::new(), load(&self.sessions))]);
        metric(
            "sessions_active",
            "gauge",
            "WebSocket sessions open now.",
            &[(String::new(), self.active.load(Ordering::SeqCst) as u64)],
        );
        metric(
            "bytes_total",
            "counter",
            "Bytes relayed, by direction.",
            &[
                ("{direction=\"to_server\"}".into(), load(&self.to_server)),
                ("{direction=\"to_browser\"}".into(), load(&self.to_browser)),
            ],
        );
        let refusals: Vec<(String, u64)> =
            REFUSALS.iter().zip(&self.refusals).map(|(r, n)| (format!("{{reason=\"{r}\"}}"), load(n))).collect();
        metric("refusals_total", "counter", "Requests and connections refused, by reason.", &refusals);
        metric(
            "cancels_total",
            "counter",
            "CancelRequests sent for sessions the browser left mid-query.",
            &[(String::new(), load(&self.cancels))],
        );
        metric("errors_total", "counter", "Session and connection errors.", &[(String::new(), load(&self.errors))]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(ty: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![ty];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    fn startup() -> Vec<u8> {
        let body = b"\0\x03\0\0user\0postgres\0\0";
        let mut m = (body.len() as u32 + 4).to_be_bytes().to_vec();
        m.extend_from_slice(body);
        m
    }

    #[test]
    fn follows_a_conversation_in_any_chunking() {
        let mut server = Vec::new();
        server.extend(msg(b'R', &[0, 0, 0, 0]));
        server.extend(msg(b'K', &[0, 0, 0, 42, 1, 2, 3, 4]));
        server.extend(msg(b'Z', b"I"));
        let mut client = startup();
        client.extend(msg(b'Q', b"SELECT 1\0"));
        for step in [1, 2, 3, 7, 1000] {
            let conv = Conversation::default();
            let (mut c, mut s) = (ClientTracker::default(), ServerTracker::default());
            client.chunks(step).for_each(|ch| c.feed(ch, &conv));
            assert!(conv.busy());
            server.chunks(step).for_each(|ch| s.feed(ch, &conv));
            assert_eq!(conv.key(), Some((42, vec![1, 2, 3, 4])), "step {step}");
            // The startup is answered, the query is not.
            assert!(conv.busy());
            s.feed(&msg(b'Z', b"I"), &conv);
            assert!(!conv.busy());
            c.feed(&msg(b'P', b"\0x\0\0\0"), &conv);
            assert!(conv.busy());
        }
    }

    #[test]
    fn ssl_refused_then_plain() {
        let conv = Conversation::default();
        let (mut c, mut s) = (ClientTracker::default(), ServerTracker::default());
        let mut ssl = 8u32.to_be_bytes().to_vec();
        ssl.extend_from_slice(&SSL_REQUEST.to_be_bytes());
        c.feed(&ssl, &conv);
        s.feed(b"N", &conv);
        c.feed(&startup(), &conv);
        s.feed(&msg(b'K', &[0, 0, 0, 7, 9, 9, 9, 9]), &conv);
        s.feed(&msg(b'Z', b"I"), &conv);
        assert_eq!(conv.key(), Some((7, vec![9; 4])));
        assert!(!conv.busy());
        // 'S' (TLS) cannot be followed: assume busy.
        let conv = Conversation::default();
        let (mut c, mut s) = (ClientTracker::default(), ServerTracker::default());
        c.feed(&ssl, &conv);
        s.feed(b"S\x16\x03", &conv);
        assert!(conv.busy());
    }
}
