//! Throwaway PostgreSQL clusters for the tests, and PostgreSQL 15's own behaviour as
//! ground truth.
//!
//! - [`Cluster`]: one cluster on a free port (initdb --no-sync, pg_ctl), run as the
//!   `postgres` user when we are root (the server refuses to run as root); stopped and
//!   its folder removed on drop, also when the test panics.
//! - [`ShardSet`]: shard clusters that log every statement, connection and
//!   disconnection into **one** shared log file (each cluster appends, so the file's
//!   order is the order in which the shards received the statements, finer than the
//!   log's millisecond timestamps). Each line carries the pid, the session id and the
//!   shard's number.
//! - [`Fixture`]: the shards of a scenario loaded with the sandbox's table `t<k>(a, b, c)`
//!   and a coordinator cluster with postgres_fdw, its servers, user mappings and
//!   foreign tables `ft1..ft4` as the scenario defines them (E: one server per shard;
//!   D: every table on shard 1, one server).
//! - [`Fixture::reference`] / [`pg15_reference`]: what a real PostgreSQL coordinator
//!   sends each shard for the scenario's query, per connection, plus its EXPLAIN
//!   (ANALYZE, VERBOSE, COSTS OFF) text and JSON and the query's result.
//!
//! Missing PostgreSQL binaries fail the test with a message (`make test` installs them).

#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------
// Programs.

/// A PostgreSQL server program: version 15's if installed, else the newest.
pub fn pg_bin(name: &str) -> PathBuf {
    let v15 = Path::new("/usr/lib/postgresql/15/bin").join(name);
    if v15.exists() {
        return v15;
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .unwrap_or_else(|e| {
            panic!(
                "PostgreSQL server binaries not found in /usr/lib/postgresql ({e}): install Debian's \
                 postgresql package (make test's setup does)"
            )
        })
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join(name).exists())
        .collect();
    versions.sort();
    versions
        .pop()
        .unwrap_or_else(|| panic!("no {name} in /usr/lib/postgresql/*/bin: install Debian's postgresql package"))
        .join(name)
}

/// PostgreSQL's own psql, from the server's bin directory. Not /usr/bin/psql: that is
/// Debian's pg_wrapper, a Perl script costing ~25 ms of CPU per call before psql runs
/// (100 `psql --version`: 3.08 s of CPU through it, 0.62 s direct; one `make test` ran
/// psql 2,883 times), and it picks the newest psql installed, not the server's.
pub fn psql_bin() -> PathBuf {
    let psql = pg_bin("postgres").with_file_name("psql");
    if !psql.exists() {
        panic!("no psql beside the server in {}: install Debian's postgresql-client of that version", psql.display());
    }
    psql
}

/// The major version of the installed server (15 expected).
pub fn server_version() -> String {
    let out = Command::new(pg_bin("postgres")).arg("--version").output().expect("postgres --version runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0\n")).unwrap_or(false)
}

fn shell_quote(a: &str) -> String {
    format!("'{}'", a.replace('\'', r"'\''"))
}

/// Runs a PostgreSQL program, as the `postgres` user when we are root. Returns its
/// output, or the error text.
fn try_run_pg(args: &[&str]) -> Result<String, String> {
    let mut cmd = if is_root() {
        let line = args.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ");
        let mut c = Command::new("su");
        c.args(["postgres", "-s", "/bin/sh", "-c", &line]);
        c
    } else {
        let mut c = Command::new(args[0]);
        c.args(&args[1..]);
        c
    };
    let out = cmd.output().map_err(|e| format!("{args:?} did not run: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn run_pg(args: &[&str]) -> String {
    try_run_pg(args).unwrap_or_else(|e| panic!("{e}"))
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

// ---------------------------------------------------------------------------------
// Folders.

/// A folder the server's user owns, removed on drop. Every parent must be traversable
/// by that user (the system temp folder is).
pub struct TempDir {
    pub path: PathBuf,
}

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!("pgasync-{tag}-{}-{}", std::process::id(), free_port()));
        std::fs::create_dir_all(&path).unwrap();
        if is_root() {
            let ok = Command::new("chown")
                .args(["postgres:postgres", path.to_str().unwrap()])
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            assert!(ok, "chown postgres {path:?} (is there a `postgres` user? install Debian's postgresql package)");
        }
        TempDir { path }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

// ---------------------------------------------------------------------------------
// One cluster.

/// A running cluster, stopped (immediately) on drop. Its folder belongs to whoever
/// made it: [`Cluster::start`] removes its own, [`Cluster::start_in`] leaves the parent.
pub struct Cluster {
    pub name: String,
    pub port: u16,
    pub data: PathBuf,
    /// The server's log file (shared by the clusters of a [`ShardSet`]).
    pub log: PathBuf,
    own_dir: Option<TempDir>,
}

impl Cluster {
    /// A plain cluster in its own temporary folder.
    pub fn start(tag: &str) -> Cluster {
        let dir = TempDir::new(tag);
        let log = dir.path.join("log");
        let mut c = Cluster::start_in(&dir.path, tag, &[], &log);
        c.own_dir = Some(dir);
        c
    }

    /// A cluster in `parent/name`, with extra `postgresql.conf` lines, logging to `log`.
    ///
    /// The port [`free_port`] names was free when it was asked for, not necessarily when
    /// the server binds it: test binaries run side by side, each starting clusters, and
    /// every client connection takes an ephemeral port from the same range. So a start
    /// that fails is tried again on a new port (up to [`START_ATTEMPTS`] times), saying
    /// why on standard error; the last failure panics with the server's own log lines.
    pub fn start_in(parent: &Path, name: &str, conf: &[String], log: &Path) -> Cluster {
        Cluster::start_in_on(parent, name, conf, log, free_port)
    }

    /// [`Cluster::start_in`] with the ports to try from `next_port` (a test gives it a
    /// taken one first).
    pub fn start_in_on(
        parent: &Path,
        name: &str,
        conf: &[String],
        log: &Path,
        mut next_port: impl FnMut() -> u16,
    ) -> Cluster {
        let data = parent.join(name);
        // A copy of the data directory `initdb` makes (made once: initdb_template.rs).
        super::initdb_template::init_data_dir(&pg_bin("initdb"), &data).unwrap_or_else(|e| panic!("{e}"));
        let conf_path = data.join("postgresql.conf");
        let initdb_conf = std::fs::read_to_string(&conf_path).expect("postgresql.conf");
        let mut failures = Vec::new();
        for attempt in 1..=START_ATTEMPTS {
            let port = next_port();
            std::fs::write(&conf_path, cluster_conf(&initdb_conf, port, parent, conf)).unwrap();
            let log_before = std::fs::metadata(log).map(|m| m.len()).unwrap_or(0);
            match try_run_pg(&[
                pg_bin("pg_ctl").to_str().unwrap(),
                "-D",
                data.to_str().unwrap(),
                "-l",
                log.to_str().unwrap(),
                "-w",
                "-t",
                "60",
                "start",
            ]) {
                Ok(_) => return Cluster { name: name.to_string(), port, data, log: log.to_path_buf(), own_dir: None },
                Err(e) => {
                    let why = format!("{e}\nthe server's log from this start:\n{}", log_since(log, log_before));
                    eprintln!("cluster {name}: start {attempt} of {START_ATTEMPTS} on port {port} failed: {why}");
                    // A server that started after pg_ctl gave up would hold the folder.
                    stop_immediately(&data);
                    failures.push(format!("port {port}: {why}"));
                }
            }
        }
        panic!("cluster {name} did not start in {START_ATTEMPTS} attempts:\n{}", failures.join("\n"))
    }

    pub fn addr(&self) -> SocketAddr {
        format!("127.0.0.1:{}", self.port).parse().unwrap()
    }

    /// Runs SQL through psql (unaligned, tuples only); returns its output.
    pub fn try_psql(&self, sql: &str) -> Result<String, String> {
        let out = Command::new(psql_bin())
            .args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", "-d", "postgres"])
            .args(["-c", sql])
            .output()
            .map_err(|e| format!("psql does not run ({e})"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!("psql on {} failed: {}", self.name, String::from_utf8_lossy(&out.stderr)))
        }
    }

    pub fn psql(&self, sql: &str) -> String {
        self.try_psql(sql).unwrap_or_else(|e| panic!("{e}\n{sql}"))
    }

    /// Runs a script through psql's standard input (for COPY … FROM stdin).
    pub fn psql_script(&self, script: &str) {
        use std::io::Write;
        let mut child = Command::new(psql_bin())
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", "-"])
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", "-d", "postgres"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("psql runs");
        child.stdin.take().unwrap().write_all(script.as_bytes()).expect("script to psql");
        let out = child.wait_with_output().expect("psql ends");
        assert!(out.status.success(), "psql script on {} failed: {}", self.name, String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Never panics (it may run while a test unwinds).
        stop_immediately(&self.data);
    }
}

/// Stops the cluster in `data` at once (`pg_ctl -m immediate`), if one runs there; a
/// failure is ignored (nothing may be running).
fn stop_immediately(data: &Path) {
    let _ = try_run_pg(&[
        pg_bin("pg_ctl").to_str().unwrap(),
        "-D",
        data.to_str().unwrap(),
        "-m",
        "immediate",
        "-w",
        "stop",
    ]);
}

/// How many times [`Cluster::start_in`] tries to start a cluster, each on a new port.
pub const START_ATTEMPTS: usize = 3;

/// `initdb`'s postgresql.conf with the tests' settings after it (settings go into the
/// file: no quoting through su and pg_ctl -o).
fn cluster_conf(initdb_conf: &str, port: u16, socket_dir: &Path, extra: &[String]) -> String {
    let mut text = initdb_conf.to_string();
    text.push_str("\n# pgasync tests\n");
    let lines = [
        format!("port = {port}"),
        "listen_addresses = '127.0.0.1'".to_string(),
        format!("unix_socket_directories = '{}'", socket_dir.display()),
        "fsync = off".to_string(),
        "shared_buffers = 16MB".to_string(),
        "autovacuum = off".to_string(),
        "max_connections = 30".to_string(),
    ];
    for l in lines.iter().chain(extra) {
        text.push_str(l);
        text.push('\n');
    }
    text
}

/// What a log file gained after its first `from` bytes (its last 40 lines), or why it
/// cannot be read.
fn log_since(log: &Path, from: u64) -> String {
    match std::fs::read(log) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(bytes.get(from as usize..).unwrap_or_default()).into_owned();
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(40)..].join("\n")
        }
        Err(e) => format!("({}: {e})", log.display()),
    }
}

// ---------------------------------------------------------------------------------
// The sandbox's table.

/// Creates `table(a int, b int, c text)` with the rows of the sandbox's scenarios
/// (`scenario::t_table`): for i in 0..rows, b = shard * rows + i, a = b % 100,
/// c = b printed with at least 5 digits. `shard` is 0-based.
pub fn load_t(c: &Cluster, table: &str, shard: usize, rows: usize) {
    let first = shard * rows;
    c.psql(&format!(
        "DO $$ BEGIN CREATE ROLE pgasync LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$; \
         CREATE TABLE {table} (a int, b int, c text); \
         INSERT INTO {table} SELECT b % 100, b, CASE WHEN b < 100000 THEN lpad(b::text, 5, '0') ELSE b::text END \
           FROM generate_series({first}::int, {first}::int + {rows}::int - 1) b; \
         GRANT SELECT ON {table} TO pgasync; ANALYZE {table};"
    ));
}

// ---------------------------------------------------------------------------------
// Shards with statement logs.

/// One line of the shards' shared log.
#[derive(Clone, Debug, PartialEq)]
pub struct LogLine {
    /// Position in the log: the order in which the shards wrote the lines.
    pub seq: usize,
    /// Epoch seconds with milliseconds (`%n`).
    pub time: String,
    pub pid: u32,
    /// PostgreSQL's session id (`%c`).
    pub session: String,
    /// 0-based shard number.
    pub shard: usize,
    /// "LOG", "ERROR", "STATEMENT", ...
    pub level: String,
    /// The message, continuation lines joined with "\n".
    pub text: String,
}

/// One connection a shard received, with what it saw, normalized.
#[derive(Clone, Debug, PartialEq)]
pub struct LogSession {
    pub shard: usize,
    pub session: String,
    pub pid: u32,
    /// Normalized entries in order (see [`normalize`]).
    pub statements: Vec<String>,
    /// The seq of each entry in the shared log (for the order across shards).
    pub seqs: Vec<usize>,
}

/// Keeps what a shard saw and drops what varies between runs: `statement: …`,
/// `execute <unnamed>: …` as they are; connection markers without ports and session
/// times. Other LOG/ERROR lines are kept with their level.
pub fn normalize(level: &str, text: &str) -> Option<String> {
    if level != "LOG" {
        return match level {
            "ERROR" | "FATAL" | "WARNING" => Some(format!("{level}:  {text}")),
            _ => None, // DETAIL / STATEMENT / HINT of an error: its context only
        };
    }
    if text.starts_with("statement: ") || text.starts_with("execute ") {
        return Some(text.to_string());
    }
    if let Some(rest) = text.strip_prefix("connection received: ") {
        let host = rest.split_whitespace().find(|w| w.starts_with("host=")).unwrap_or("host=?");
        return Some(format!("connection received: {host}"));
    }
    if text.starts_with("connection authorized: ") {
        return Some(text.to_string());
    }
    if let Some(rest) = text.strip_prefix("disconnection: ") {
        let keep: Vec<&str> =
            rest.split_whitespace().filter(|w| w.starts_with("user=") || w.starts_with("database=")).collect();
        return Some(format!("disconnection: {}", keep.join(" ")));
    }
    Some(text.to_string())
}

/// Parses a log written with `log_line_prefix = '%n [%p] %c shard=K '`.
pub fn parse_log(text: &str) -> Vec<LogLine> {
    let mut out: Vec<LogLine> = vec![];
    for line in text.lines() {
        if let Some(cont) = line.strip_prefix('\t') {
            if let Some(last) = out.last_mut() {
                last.text.push('\n');
                last.text.push_str(cont);
            }
            continue;
        }
        let mut it = line.splitn(5, ' ');
        let (Some(time), Some(pid), Some(session), Some(shard), Some(rest)) =
            (it.next(), it.next(), it.next(), it.next(), it.next())
        else {
            continue; // pg_ctl's own lines
        };
        let (Some(pid), Some(shard)) = (
            pid.strip_prefix('[').and_then(|p| p.strip_suffix(']')).and_then(|p| p.parse().ok()),
            shard.strip_prefix("shard=").and_then(|s| s.parse::<usize>().ok()),
        ) else {
            continue;
        };
        let Some((level, msg)) = rest.split_once(":  ") else { continue };
        out.push(LogLine {
            seq: out.len(),
            time: time.to_string(),
            pid,
            session: session.to_string(),
            shard: shard - 1,
            level: level.to_string(),
            text: msg.to_string(),
        });
    }
    out
}

/// Shard clusters logging into one shared file.
pub struct ShardSet {
    pub clusters: Vec<Cluster>,
    pub log: PathBuf,
    dir: TempDir, // after the clusters: dropped (removed) once they are stopped
}

impl ShardSet {
    pub fn start(n: usize) -> ShardSet {
        let dir = TempDir::new("shards");
        let log = dir.path.join("shards.log");
        let clusters = (0..n)
            .map(|k| {
                let conf = vec![
                    "log_statement = 'all'".to_string(),
                    "log_connections = on".to_string(),
                    "log_disconnections = on".to_string(),
                    format!("log_line_prefix = '%n [%p] %c shard={} '", k + 1),
                    "log_min_messages = warning".to_string(),
                ];
                Cluster::start_in(&dir.path, &format!("s{}", k + 1), &conf, &log)
            })
            .collect();
        ShardSet { clusters, log, dir }
    }

    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.clusters.iter().map(|c| c.addr()).collect()
    }

    fn log_text(&self) -> String {
        String::from_utf8_lossy(&std::fs::read(&self.log).unwrap_or_default()).into_owned()
    }

    /// A position in the log: what comes after it is what happens from now on.
    pub fn mark(&self) -> usize {
        std::fs::metadata(&self.log).map(|m| m.len() as usize).unwrap_or(0)
    }

    /// The log lines written since `mark`.
    pub fn lines_since(&self, mark: usize) -> Vec<LogLine> {
        let text = self.log_text();
        let since = text.get(mark..).unwrap_or("");
        // Only whole lines: a backend may be writing its last one as we read (a
        // disconnection read as `disconnection: session time: …` without its user).
        parse_log(&since[..since.rfind('\n').map_or(0, |i| i + 1)])
    }

    /// Every connection the shards received since `mark`, in the order they appeared,
    /// with their normalized entries. Waits (up to 10 s) until each connection has
    /// logged its disconnection, so the sequences are complete; a connection still open
    /// then is returned as it is (its missing disconnection shows in a comparison).
    pub fn sessions_since(&self, mark: usize) -> Vec<LogSession> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let sessions = group_sessions(&self.lines_since(mark));
            let open = sessions.iter().any(|s| {
                s.statements.iter().any(|x| x.starts_with("connection received"))
                    && !s.statements.iter().any(|x| x.starts_with("disconnection"))
            });
            if !open || Instant::now() >= deadline {
                return sessions;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// shard → connection (in order of appearance) → normalized statements.
    pub fn per_shard_since(&self, mark: usize) -> Vec<Vec<Vec<String>>> {
        per_shard(&self.sessions_since(mark), self.clusters.len())
    }
}

pub fn group_sessions(lines: &[LogLine]) -> Vec<LogSession> {
    let mut sessions: Vec<LogSession> = vec![];
    for l in lines {
        let Some(norm) = normalize(&l.level, &l.text) else { continue };
        let i = match sessions.iter().position(|s| s.shard == l.shard && s.session == l.session) {
            Some(i) => i,
            None => {
                // The postmaster's own lines (start, stop) belong to no connection.
                if l.level == "LOG" && !l.text.starts_with("connection received") && l.text.contains("database system")
                {
                    continue;
                }
                sessions.push(LogSession {
                    shard: l.shard,
                    session: l.session.clone(),
                    pid: l.pid,
                    statements: vec![],
                    seqs: vec![],
                });
                sessions.len() - 1
            }
        };
        sessions[i].statements.push(norm);
        sessions[i].seqs.push(l.seq);
    }
    sessions
}

pub fn per_shard(sessions: &[LogSession], nshards: usize) -> Vec<Vec<Vec<String>>> {
    let mut out = vec![vec![]; nshards];
    for s in sessions {
        out[s.shard].push(s.statements.clone());
    }
    out
}

/// Every entry of every connection in the shared log's order, as
/// `"s<shard>/c<connection> <statement>"` (connection = its index on that shard).
pub fn timeline(sessions: &[LogSession]) -> Vec<String> {
    let mut conn_index = vec![];
    let mut counts = std::collections::HashMap::new();
    for s in sessions {
        let n = counts.entry(s.shard).or_insert(0usize);
        conn_index.push(*n);
        *n += 1;
    }
    let mut all: Vec<(usize, String)> = vec![];
    for (s, ci) in sessions.iter().zip(conn_index) {
        for (seq, st) in s.seqs.iter().zip(&s.statements) {
            all.push((*seq, format!("s{}/c{} {}", s.shard + 1, ci, st.replace('\n', "\\n"))));
        }
    }
    all.sort();
    all.into_iter().map(|(_, s)| s).collect()
}

// ---------------------------------------------------------------------------------
// A scenario's shards and a PostgreSQL coordinator.

/// Where each foreign table of a scenario lives.
#[derive(Clone, Debug)]
pub struct ForeignTableSpec {
    /// Local name on the coordinator (`ft1`).
    pub local: String,
    /// Remote table name (`t1`).
    pub remote: String,
    /// The server it belongs to (`s1`).
    pub server: String,
    /// The 0-based shard cluster holding the table.
    pub shard: usize,
}

/// The sandbox's layout of scenario E (a server per shard) or D (one server, every
/// table on shard 1), with 4 tables.
pub fn layout(scenario: &str) -> Vec<ForeignTableSpec> {
    let shared = match scenario {
        "E" => false,
        "D" => true,
        _ => panic!("layout for scenario {scenario} not written (E and D are)"),
    };
    (0..4)
        .map(|k| ForeignTableSpec {
            local: format!("ft{}", k + 1),
            remote: format!("t{}", k + 1),
            server: if shared { "s1".into() } else { format!("s{}", k + 1) },
            shard: if shared { 0 } else { k },
        })
        .collect()
}

/// The scenario's query as SQL.
pub fn scenario_sql(tables: &[ForeignTableSpec]) -> String {
    let parts: Vec<String> = tables.iter().map(|t| format!("SELECT a FROM {}", t.local)).collect();
    format!("SELECT sum(a) FROM ({}) s", parts.join(" UNION ALL "))
}

/// What PostgreSQL's own coordinator did for one query.
#[derive(Clone, Debug)]
pub struct Reference {
    pub scenario: String,
    pub async_capable: bool,
    pub fetch_size: usize,
    pub rows: usize,
    /// shard → connection → normalized statements, for the plain query.
    pub per_shard: Vec<Vec<Vec<String>>>,
    /// The same for the `EXPLAIN (ANALYZE, VERBOSE, COSTS OFF)` run.
    pub explain_per_shard: Vec<Vec<Vec<String>>>,
    /// The plain query's entries across shards in the order the shards logged them.
    pub timeline: Vec<String>,
    /// The plain query's raw log lines (times and pids kept).
    pub raw_log: Vec<LogLine>,
    pub explain_text: String,
    pub explain_json: String,
    pub result: i64,
}

/// Shards loaded for a scenario, and a coordinator with postgres_fdw pointing at them.
pub struct Fixture {
    pub scenario: String,
    pub rows: usize,
    pub tables: Vec<ForeignTableSpec>,
    /// The servers in order (`s1`, …) and the shard each points at.
    pub servers: Vec<(String, usize)>,
    pub shards: ShardSet,
    pub coordinator: Cluster,
}

impl Fixture {
    pub fn start(scenario: &str, rows: usize) -> Fixture {
        let tables = layout(scenario);
        let nshards = tables.iter().map(|t| t.shard).max().unwrap() + 1;
        let mut servers: Vec<(String, usize)> = vec![];
        for t in &tables {
            if !servers.iter().any(|(s, _)| *s == t.server) {
                servers.push((t.server.clone(), t.shard));
            }
        }
        let shards = ShardSet::start(nshards);
        for (k, t) in tables.iter().enumerate() {
            // Same data as the sandbox: table k holds the rows of "shard" k.
            load_t(&shards.clusters[t.shard], &t.remote, k, rows);
        }
        let coordinator = Cluster::start("coordinator");
        let mut sql = String::from("CREATE EXTENSION postgres_fdw;\n");
        for (s, shard) in &servers {
            sql.push_str(&format!(
                "CREATE SERVER {s} FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '{}', \
                 dbname 'postgres', async_capable 'false', fetch_size '100');\n\
                 CREATE USER MAPPING FOR postgres SERVER {s} OPTIONS (user 'postgres');\n",
                shards.clusters[*shard].port
            ));
        }
        for t in &tables {
            sql.push_str(&format!(
                "CREATE FOREIGN TABLE {} (a int, b int, c text) SERVER {} OPTIONS (table_name '{}');\n",
                t.local, t.server, t.remote
            ));
        }
        coordinator.psql(&sql);
        Fixture { scenario: scenario.to_string(), rows, tables, servers, shards, coordinator }
    }

    /// The shard cluster each server points at, in server order (for the sandbox's
    /// TCP host: connection i serves server i).
    pub fn server_addrs(&self) -> Vec<SocketAddr> {
        self.servers.iter().map(|(_, shard)| self.shards.clusters[*shard].addr()).collect()
    }

    pub fn sql(&self) -> String {
        scenario_sql(&self.tables)
    }

    /// The expected sum, straight from the data.
    pub fn expected_sum(&self) -> i64 {
        (0..self.tables.len() * self.rows).map(|b| (b % 100) as i64).sum()
    }

    /// Sets the servers' async_capable and fetch_size.
    pub fn configure(&self, async_capable: bool, fetch_size: usize) {
        let sql: String = self
            .servers
            .iter()
            .map(|(s, _)| {
                format!(
                    "ALTER SERVER {s} OPTIONS (SET async_capable '{async_capable}', SET fetch_size '{fetch_size}');\n"
                )
            })
            .collect();
        self.coordinator.psql(&sql);
    }

    /// Runs the query, its EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) and the JSON form on
    /// the coordinator and records what the shards saw.
    pub fn reference(&self, async_capable: bool, fetch_size: usize) -> Reference {
        self.configure(async_capable, fetch_size);
        let sql = self.sql();
        let n = self.shards.clusters.len();

        let mark = self.shards.mark();
        let out = self.coordinator.psql(&sql);
        let sessions = self.shards.sessions_since(mark);
        let raw_log = self.shards.lines_since(mark);
        let result: i64 = out.trim().parse().unwrap_or_else(|_| panic!("result of {sql}: {out:?}"));

        let mark = self.shards.mark();
        let explain_text = self.coordinator.psql(&format!("EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) {sql}"));
        let explain_per_shard = self.shards.per_shard_since(mark);
        let explain_json = self.coordinator.psql(&format!("EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, FORMAT JSON) {sql}"));
        // Settle the JSON run's disconnections before anyone takes the next mark.
        let _ = self.shards.sessions_since(mark);

        Reference {
            scenario: self.scenario.clone(),
            async_capable,
            fetch_size,
            rows: self.rows,
            per_shard: per_shard(&sessions, n),
            explain_per_shard,
            timeline: timeline(&sessions),
            raw_log,
            explain_text,
            explain_json,
            result,
        }
    }
}

/// PostgreSQL 15's ground truth for a scenario ("E" or "D") on fresh clusters.
pub fn pg15_reference(scenario: &str, async_capable: bool, fetch_size: usize, rows: usize) -> Reference {
    Fixture::start(scenario, rows).reference(async_capable, fetch_size)
}

// ---------------------------------------------------------------------------------
// EXPLAIN text comparison.

/// Masks what varies between runs in EXPLAIN text: `actual time=X..Y` →
/// `actual time=…`, and the numbers of `Planning Time:` / `Execution Time:`.
pub fn mask_times(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut l = line.to_string();
        while let Some(i) = l.find("actual time=") {
            let start = i + "actual time=".len();
            let end = l[start..].find(' ').map(|j| start + j).unwrap_or(l.len());
            if &l[start..end] == "…" {
                break;
            }
            l.replace_range(start..end, "…");
        }
        for key in ["Planning Time: ", "Execution Time: "] {
            if let Some(i) = l.find(key) {
                l.replace_range(i + key.len().., "… ms");
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    }
    out
}

/// Masks the times in EXPLAIN's JSON (`"Actual Startup Time"`, `"Actual Total Time"`,
/// `"Planning Time"`, `"Execution Time"`); returns its lines.
pub fn mask_json_times(json: &str) -> Vec<String> {
    const KEYS: [&str; 4] =
        ["\"Actual Startup Time\": ", "\"Actual Total Time\": ", "\"Planning Time\": ", "\"Execution Time\": "];
    json.trim_end()
        .lines()
        .map(|l| {
            for k in KEYS {
                if let Some(i) = l.find(k) {
                    let comma = if l.ends_with(',') { "," } else { "" };
                    return format!("{}{k}…{comma}", &l[..i]);
                }
            }
            l.trim_end().to_string()
        })
        .collect()
}
