//! `POST /sql/load` on the relay: a page's scenario file made into tables on the live
//! shards, so the page can run the file live (through `/shard/NAME` as for the
//! built-in scenarios).
//!
//! # Protocol
//! The body is the scenario file (UTF-8 text, at most the editor's `maxSqlBytes`). The
//! answer is JSON: `200 {"database", "servers", "rows", "coordinator_query", "cached"}`,
//! or an error `{"error", "line", "column"}` (line and column 1-based, 0 when the error
//! has no place in the text) with 400 (the file), 403 (a foreign Origin), 404 (loading
//! is off), 405 (not POST), 408 (the body came too slowly), 413 (too big), 503 (another
//! load is under way), 504 (over the time limit) or 500 (PostgreSQL refused the load).
//!
//! # Invariants (the endpoint is hostile-input territory)
//! * The user's text never reaches PostgreSQL: the crate's front end parses it (with
//!   the page's limits, `DEMO_LIMITS`: 400,000 rows and 128 MiB of rows, each refused
//!   before the rows are made, statements nested at most as the front end allows —
//!   and the time limit), and what is loaded is
//!   written from the parsed catalogs (`sql_text::load::load_sql`,
//!   `sql_text::coordinator::coordinator_ddl`):
//!   identifiers quoted, values as escaped COPY data. Names holding control characters
//!   or backslashes are refused outright (psql reads the script).
//! * Only the relay's targets named by the file's servers (`-- @shard s1` …) are written
//!   to, and only local ones (loopback addresses: the demo's own clusters), each into the
//!   database `live_<hash of the text>`; the `coordinator` target, if any, gets the
//!   servers, user mappings and foreign tables there. The read-only role the page logs
//!   in as may read them; it owns nothing.
//! * At most `BODIES_PER_CLIENT` bodies are being received at once from one client
//!   address and `BODIES_AT_ONCE` in all (503 beyond), each within `BODY_TIMEOUT`; the
//!   load slot is taken only once a body has arrived. So a slow sender (or several
//!   from one address) holds its own slots, never the load slot nor another client's.
//! * A request's work runs in a task of its own: a panic there is a 500 for that
//!   request, never the relay's end (and the front end's bounds mean none is
//!   expected: see `pgasync::coordinator_sql`).
//! * One load at a time (a second is answered 503 at once), run to its end (or its
//!   clean-up) even when the client leaves, so every database made is listed; a load
//!   takes at most `timeout` in all (psql is killed and the statements time out
//!   server-side); at most `max_databases` such databases exist: loading one more drops
//!   the least recently loaded one on every cluster that holds it.
//! * An Origin header, when present, must be one the relay serves pages for (as for
//!   WebSocket upgrades): a foreign page cannot make a visitor's browser load files.
//!
//! PostgreSQL has no counterpart: the load is psql running SQL the sandbox wrote.

use crate::config::{SqlLoadConfig, Target};
use crate::static_files::{Body, ConnLimits};
use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use pgasync::coordinator_sql::script::SqlLoad;
use pgasync::coordinator_sql::FrontError;
use pgasync::demo::session::{check_scenario_size, DEMO_LIMITS};
use pgasync::knobs::Knobs;
use pgasync::knobs::Source;
use pgasync::knobs::MAX_SCRIPT_BYTES;
use pgasync::scenario::Scenario;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

/// How long the body may take to arrive.
const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// Bodies received at once from one client address, and in all (each at most
/// `MAX_SCRIPT_BYTES`: 16 MiB at most): memory stays bounded, and a slow sender holds
/// its own address's slots, never the load slot nor another client's.
const BODIES_PER_CLIENT: usize = 2;
const BODIES_AT_ONCE: usize = 16;
/// The coordinator's target name (as `pgasync demo` writes it).
const COORDINATOR: &str = "coordinator";
/// psql's stderr kept in an error message.
const MAX_ERROR_CHARS: usize = 600;

/// The endpoint's state: the configuration, and the databases loaded so far (oldest
/// first), behind a lock that is also the one-load-at-a-time rule. Cloning shares the
/// list.
#[derive(Clone)]
pub(crate) struct Loader {
    config: SqlLoadConfig,
    targets: BTreeMap<String, Target>,
    /// The psql program (`demo::psql_program`: the demo's servers' own).
    psql: std::path::PathBuf,
    loaded: Arc<tokio::sync::Mutex<VecDeque<Loaded>>>,
    /// Bodies being received, per client address and in all.
    bodies: Arc<ConnLimits>,
}

type Registry = tokio::sync::OwnedMutexGuard<VecDeque<Loaded>>;

/// A database this relay loaded: where, and the answer it gave.
struct Loaded {
    database: String,
    ports: Vec<u16>,
    answer: Answer,
}

#[derive(Clone, Serialize)]
struct Answer {
    database: String,
    servers: Vec<String>,
    rows: usize,
    coordinator_query: Option<String>,
    cached: bool,
}

/// An error answer: the status and `{error, line, column}`.
#[derive(Debug)]
pub(crate) struct Refusal {
    status: StatusCode,
    error: String,
    line: usize,
    column: usize,
}

impl Refusal {
    fn new(status: StatusCode, error: impl Into<String>) -> Refusal {
        Refusal { status, error: error.into(), line: 0, column: 0 }
    }

    fn bad(error: impl Into<String>) -> Refusal {
        Refusal::new(StatusCode::BAD_REQUEST, error)
    }

    fn at(mut self, (line, column): (usize, usize)) -> Refusal {
        (self.line, self.column) = (line, column);
        self
    }

    fn from_front(e: FrontError) -> Refusal {
        Refusal::bad(e.message).at((e.line, e.column))
    }
}

/// What a file becomes before anything is written: a script per server and one for
/// the coordinator, all written by us from the parsed catalogs.
struct Prepared {
    /// (server name, port of its target, script)
    shards: Vec<(String, u16, String)>,
    coordinator: Option<(u16, String)>,
    coordinator_query: Option<String>,
    rows: usize,
}

impl Loader {
    pub(crate) fn new(config: SqlLoadConfig, targets: &BTreeMap<String, Target>) -> Loader {
        Loader {
            config,
            targets: targets.clone(),
            psql: crate::demo::psql_program(),
            loaded: Arc::new(tokio::sync::Mutex::new(VecDeque::new())),
            bodies: Arc::new(ConnLimits::new(BODIES_AT_ONCE, BODIES_PER_CLIENT)),
        }
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.config.timeout_ms)
    }
}

/// `/sql/load` from `client`: the checks in order of cost (method, Origin, declared
/// size, the body, the load slot), then the load; every answer is JSON. It runs as a
/// task of its own, so that a panic is this request's 500 and nothing more.
pub(crate) async fn handle(
    req: Request<Incoming>,
    client: IpAddr,
    loader: Option<&Loader>,
    origins: &[String],
) -> Response<Body> {
    let (loader, origins) = (loader.cloned(), origins.to_vec());
    let job = tokio::spawn(async move { respond(req, client, loader.as_ref(), &origins).await });
    let answer = job.await.unwrap_or_else(|e| {
        eprintln!("pgasync relay: error: sql/load: the request failed: {e}");
        Err(Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error: the request failed (logged)"))
    });
    match answer {
        Ok(answer) => json(StatusCode::OK, &answer),
        Err(r) => {
            #[derive(Serialize)]
            struct E<'a> {
                error: &'a str,
                line: usize,
                column: usize,
            }
            let mut resp = json(r.status, &E { error: &r.error, line: r.line, column: r.column });
            if r.status == StatusCode::METHOD_NOT_ALLOWED {
                resp.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
            }
            if r.status == StatusCode::SERVICE_UNAVAILABLE {
                resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            resp
        }
    }
}

async fn respond(
    req: Request<Incoming>,
    client: IpAddr,
    loader: Option<&Loader>,
    origins: &[String],
) -> Result<Answer, Refusal> {
    let Some(loader) = loader else {
        return Err(Refusal::new(
            StatusCode::NOT_FOUND,
            "loading scenario files is off on this relay (pgasync demo turns it on)",
        ));
    };
    if req.method() != Method::POST {
        return Err(Refusal::new(StatusCode::METHOD_NOT_ALLOWED, "POST the scenario file"));
    }
    check_origin(&req, origins)?;
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_SCRIPT_BYTES as u64) {
        return Err(too_big());
    }
    let body = {
        let Some(_receiving) = loader.bodies.try_acquire(client) else {
            return Err(Refusal::new(StatusCode::SERVICE_UNAVAILABLE, "too many scenario files arriving; try again"));
        };
        read_body(req.into_body()).await?
    };
    // One load at a time: a second is refused at once rather than queued behind it.
    let Ok(registry) = loader.loaded.clone().try_lock_owned() else {
        return Err(Refusal::new(StatusCode::SERVICE_UNAVAILABLE, "another scenario file is loading; try again"));
    };
    let text = String::from_utf8(body).map_err(|_| Refusal::bad("the scenario file is not UTF-8 text"))?;
    // The load runs in a task of its own: a client that leaves mid-load must not leave
    // a database behind that the list does not hold (so would never drop).
    let loader = loader.clone();
    let job = tokio::spawn(async move { load(&loader, registry, text).await });
    job.await.map_err(|e| Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the load failed: {e}")))?
}

/// The file's database: the one loaded before for the same text, or a new one (the
/// least recently loaded dropped first when the list is full).
async fn load(loader: &Loader, mut loaded: Registry, text: String) -> Result<Answer, Refusal> {
    let database = database_name(&text);
    if let Some(k) = loaded.iter().position(|l| l.database == database) {
        // Loaded before: the newest again.
        let l = loaded.remove(k).expect("found");
        let answer = Answer { cached: true, ..l.answer.clone() };
        loaded.push_back(l);
        return Ok(answer);
    }
    let deadline = Instant::now() + loader.timeout();
    let prepared = prepare(loader, text, &database, deadline).await?;
    while loaded.len() >= loader.config.max_databases.max(1) {
        let old = loaded.pop_front().expect("not empty");
        drop_database(loader, &old.database, &old.ports).await;
    }
    let ports = write(loader, &database, &prepared, deadline).await?;
    let answer = Answer {
        database: database.clone(),
        servers: prepared.shards.iter().map(|(name, _, _)| name.clone()).collect(),
        rows: prepared.rows,
        coordinator_query: prepared.coordinator_query.clone(),
        cached: false,
    };
    eprintln!("pgasync relay: sql/load: {database} loaded ({} rows on {})", answer.rows, answer.servers.join(", "));
    loaded.push_back(Loaded { database, ports, answer: answer.clone() });
    Ok(answer)
}

fn too_big() -> Refusal {
    Refusal::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the scenario file is over {MAX_SCRIPT_BYTES} bytes, the most the page takes"),
    )
}

/// An Origin, when sent, must be the relay's own (or an `--allow-origin`).
/// Every Origin header counts: two are refused, whatever the first says.
fn check_origin<B>(req: &Request<B>, origins: &[String]) -> Result<(), Refusal> {
    let mut all = req.headers().get_all(header::ORIGIN).iter();
    match (all.next(), all.next()) {
        (None, _) => Ok(()),
        (Some(o), None) if origins.contains(&o.to_str().unwrap_or("").to_ascii_lowercase()) => Ok(()),
        _ => Err(Refusal::new(StatusCode::FORBIDDEN, "origin not allowed")),
    }
}

/// The body, at most `MAX_SCRIPT_BYTES`, within `BODY_TIMEOUT`.
async fn read_body(mut body: Incoming) -> Result<Vec<u8>, Refusal> {
    use hyper::body::Body as _;
    let read = async {
        let mut out = Vec::new();
        while let Some(frame) = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await {
            let frame = frame.map_err(|e| Refusal::bad(format!("reading the body: {e}")))?;
            if let Ok(data) = frame.into_data() {
                if out.len() + data.len() > MAX_SCRIPT_BYTES {
                    return Err(too_big());
                }
                out.extend_from_slice(&data);
            }
        }
        Ok(out)
    };
    tokio::time::timeout(BODY_TIMEOUT, read)
        .await
        .unwrap_or_else(|_| Err(Refusal::new(StatusCode::REQUEST_TIMEOUT, "the body took too long to arrive")))
}

/// `live_` and the FNV-1a hash of the text: the same file always gets the same
/// database, and the name is ours, never the user's.
pub(crate) fn database_name(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    format!("live_{hash:016x}")
}

/// Parses and checks the file off the event loop (a large file takes a while), within
/// the deadline.
async fn prepare(loader: &Loader, text: String, database: &str, deadline: Instant) -> Result<Prepared, Refusal> {
    let targets = loader.targets.clone();
    let database = database.to_string();
    let job = tokio::task::spawn_blocking(move || prepare_blocking(&text, &targets, &database, deadline));
    job.await.map_err(|e| Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the parser failed: {e}")))?
}

fn prepare_blocking(
    text: &str,
    targets: &BTreeMap<String, Target>,
    database: &str,
    deadline: Instant,
) -> Result<Prepared, Refusal> {
    let scenario = parse(text, deadline)?;
    if scenario.servers.is_empty() {
        return Err(Refusal::bad("the file has no shards (-- @shard NAME): nothing to run live"));
    }
    let mut shards = Vec::new();
    for spec in &scenario.servers {
        let name = &spec.server.name;
        let port = local_port(targets, name).map_err(|e| e.at(shard_marker(text, name)))?;
        if let Some((other, _, _)) = shards.iter().find(|(_, p, _)| *p == port) {
            return Err(Refusal::bad(format!(
                "servers {other} and {name} are the same PostgreSQL server on this relay: their tables would collide"
            )));
        }
        check_names(&spec.catalog)?;
        let script = pgasync::sql_text::load::load_sql(&spec.catalog, crate::demo::READER);
        if script.contains('\0') {
            return Err(Refusal::bad(format!("a value on {name} holds a NUL byte, which PostgreSQL's text cannot")));
        }
        shards.push((name.clone(), port, script));
    }
    let rows: usize = scenario.servers.iter().flat_map(|s| s.catalog.tables.iter()).map(|t| t.nrows()).sum();
    let coordinator = coordinator_script(&scenario, targets, &shards, database);
    let coordinator_query = pgasync::sql_text::coordinator::coordinator_query(&scenario);
    Ok(Prepared { shards, coordinator, coordinator_query, rows })
}

/// The front end with the page's limits: rows (refused at the INSERT that passes
/// them, with its place), the plan's size, the deadline.
fn parse(text: &str, deadline: Instant) -> Result<Scenario, Refusal> {
    let mut load = SqlLoad::new(text, DEMO_LIMITS).map_err(Refusal::from_front)?;
    load.set_limit_name("a live run from the page");
    let mut out_of_time = || Instant::now() >= deadline;
    while !load.advance_timed(4096, &mut out_of_time).map_err(Refusal::from_front)? {
        if out_of_time() {
            return Err(Refusal::new(StatusCode::GATEWAY_TIMEOUT, "parsing the scenario file took too long"));
        }
    }
    let sql = load.finish().map_err(Refusal::from_front)?;
    let scenario = sql.into_scenario(&Knobs::default(), Source::Json).map_err(Refusal::from_front)?;
    check_scenario_size(&scenario).map_err(Refusal::bad)?;
    Ok(scenario)
}

/// The port of target `name`, which must be on this machine.
fn local_port(targets: &BTreeMap<String, Target>, name: &str) -> Result<u16, Refusal> {
    let Some(t) = targets.get(name) else {
        let known: Vec<&str> = targets.keys().map(String::as_str).filter(|k| *k != COORDINATOR).collect();
        return Err(Refusal::bad(format!(
            "server \"{name}\" is not one of the relay's shards ({}): name the file's servers after them",
            known.join(", ")
        )));
    };
    let (host, port) = t.addr.rsplit_once(':').unwrap_or(("", ""));
    let local = matches!(host, "127.0.0.1" | "localhost" | "[::1]");
    match port.parse::<u16>() {
        Ok(p) if local => Ok(p),
        _ => Err(Refusal::bad(format!("server \"{name}\" is not a local cluster here: files load only into those"))),
    }
}

/// Where the file names shard `name` (`-- @shard name`), for the error's place.
fn shard_marker(text: &str, name: &str) -> (usize, usize) {
    for (i, line) in text.lines().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let ["--", at, n, ..] = words.as_slice() {
            if at.eq_ignore_ascii_case("@shard") && n.eq_ignore_ascii_case(name) {
                return (i + 1, line.find(n).map_or(1, |c| c + 1));
            }
        }
    }
    (0, 0)
}

/// Names go into psql's script quoted; those psql or a terminal could read otherwise
/// (control characters, backslashes) are refused, as are names PostgreSQL would cut.
fn check_names(catalog: &pgasync::types::Catalog) -> Result<(), Refusal> {
    let names = catalog.tables.iter().flat_map(|t| std::iter::once(&t.name).chain(t.columns.iter().map(|c| &c.name)));
    for n in names {
        if n.is_empty() || n.len() > 63 || n.chars().any(|c| c.is_control() || c == '\\') {
            return Err(Refusal::bad(format!(
                "the name {n:?} cannot be loaded live: names must have 1 to 63 bytes, no control characters \
                 and no backslashes"
            )));
        }
    }
    Ok(())
}

/// The coordinator's servers, user mappings and foreign tables for the file, when
/// the relay has a local `coordinator` target.
fn coordinator_script(
    scenario: &Scenario,
    targets: &BTreeMap<String, Target>,
    shards: &[(String, u16, String)],
    database: &str,
) -> Option<(u16, String)> {
    let port = local_port(targets, COORDINATOR).ok()?;
    let port_of = |s: &str| shards.iter().find(|(n, _, _)| n == s).map_or(0, |(_, p, _)| *p);
    let ddl = pgasync::sql_text::coordinator::coordinator_ddl(
        scenario,
        |s| ("127.0.0.1".to_string(), port_of(s)),
        database,
        crate::demo::READER,
    );
    let reader = crate::demo::READER;
    let role = format!("DO $$ BEGIN CREATE ROLE {reader} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;\n");
    Some((port, format!("{role}{ddl}GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader};\n")))
}

/// Creates the database on every cluster and runs the scripts, within the deadline;
/// on failure drops what it made. Returns the ports written to.
async fn write(loader: &Loader, database: &str, p: &Prepared, deadline: Instant) -> Result<Vec<u16>, Refusal> {
    let mut jobs: Vec<(u16, &str)> = p.shards.iter().map(|(_, port, s)| (*port, s.as_str())).collect();
    if let Some((port, s)) = &p.coordinator {
        jobs.push((*port, s.as_str()));
    }
    let ports: Vec<u16> = jobs.iter().map(|(port, _)| *port).collect();
    let work = async {
        for (port, script) in &jobs {
            let fresh = format!(
                "DROP DATABASE IF EXISTS {database} WITH (FORCE);\nCREATE DATABASE {database};\n\
                 REVOKE TEMPORARY ON DATABASE {database} FROM PUBLIC;\n"
            );
            psql(loader, *port, "postgres", &fresh).await?;
            psql(loader, *port, database, script).await?;
        }
        Ok::<(), String>(())
    };
    let left = deadline.saturating_duration_since(Instant::now());
    let failed = match tokio::time::timeout(left, work).await {
        Ok(Ok(())) => return Ok(ports),
        Ok(Err(e)) => Refusal::new(StatusCode::INTERNAL_SERVER_ERROR, format!("PostgreSQL refused the load: {e}")),
        Err(_) => Refusal::new(StatusCode::GATEWAY_TIMEOUT, "loading the tables took too long"),
    };
    drop_database(loader, database, &ports).await;
    Err(failed)
}

/// Drops a database this endpoint made, on each cluster (best effort: logged).
async fn drop_database(loader: &Loader, database: &str, ports: &[u16]) {
    for port in ports {
        let sql = format!("DROP DATABASE IF EXISTS {database} WITH (FORCE);\n");
        let dropped = tokio::time::timeout(loader.timeout(), psql(loader, *port, "postgres", &sql)).await;
        match dropped {
            Ok(Ok(())) => eprintln!("pgasync relay: sql/load: dropped {database} on port {port}"),
            Ok(Err(e)) => eprintln!("pgasync relay: error: sql/load: dropping {database} on port {port}: {e}"),
            Err(_) => eprintln!("pgasync relay: error: sql/load: dropping {database} on port {port}: timed out"),
        }
    }
}

/// Runs `script` with psql as the superuser on the local cluster at `port`. The
/// child dies with the future (a timeout), and each statement has the same time
/// limit server-side.
async fn psql(loader: &Loader, port: u16, db: &str, script: &str) -> Result<(), String> {
    let mut child = tokio::process::Command::new(&loader.psql)
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", "-", "-h", "127.0.0.1"])
        .args(["-U", &loader.config.superuser, "-p", &port.to_string(), "-d", db])
        .env("PGCONNECT_TIMEOUT", "5")
        .envs(loader.config.passfile.iter().map(|p| ("PGPASSFILE", p)))
        .env("PGOPTIONS", format!("-c statement_timeout={}", loader.config.timeout_ms))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{} does not run ({e})", loader.psql.display()))?;
    let mut stdin = child.stdin.take().expect("piped");
    let script = Bytes::copy_from_slice(script.as_bytes());
    // Written while psql's stderr is read: neither pipe can fill and stall the other.
    let feed = async move {
        let _ = stdin.write_all(&script).await;
        drop(stdin);
    };
    let (_, out) = tokio::join!(feed, child.wait_with_output());
    let out = out.map_err(|e| format!("psql: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(err.trim().chars().take(MAX_ERROR_CHARS).collect())
}

fn json<T: Serialize>(status: StatusCode, value: &T) -> Response<Body> {
    let body = serde_json::to_string(value).unwrap_or_else(|_| "{}".into());
    let len = body.len();
    let mut r = Response::new(Body::bytes(Bytes::from(body)));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_names_are_ours() {
        let a = database_name("-- @shard s1\ncreate table t (a int);");
        assert!(a.starts_with("live_") && a.len() == 21 && a[5..].bytes().all(|b| b.is_ascii_hexdigit()), "{a}");
        assert_eq!(a, database_name("-- @shard s1\ncreate table t (a int);"));
        assert_ne!(a, database_name("-- @shard s1\ncreate table t (b int);"));
    }

    #[test]
    fn shard_markers_are_found() {
        let text = "-- @shard s1\ncreate table t (a int);\n--   @SHARD   s9\n";
        assert_eq!(shard_marker(text, "s1"), (1, 11));
        assert_eq!(shard_marker(text, "s9"), (3, 15));
        assert_eq!(shard_marker(text, "s2"), (0, 0));
    }
}
