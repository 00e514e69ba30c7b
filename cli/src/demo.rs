//! `pgasync demo`: the whole demo in one command. If PostgreSQL is installed it
//! creates, under a work folder (as the `postgres` user when run as root):
//! - shard clusters s1..sN, each holding, in a database per scenario (its id in lower
//!   case), the tables the simulator's shards of that scenario hold (`sql_text::load::load_sql`),
//!   readable by the role `pgasync` only;
//! - a coordinator cluster with postgres_fdw: per scenario database, the servers (with
//!   `async_capable` and the scenario's `fetch_size`), user mappings and foreign tables
//!   of the scenario's plan, so PostgreSQL itself can run the same query;
//! then runs the relay (`pgasync relay`) with those targets, which also serves the page
//! and loads the page's scenario files into the same clusters (`POST /sql/load`).
//! Ctrl-C stops the relay and every cluster; a second `pgasync demo` after a crash
//! stops and removes what the first left. Without PostgreSQL it serves the simulated
//! page only and says why.
//!
//! Invariants:
//! - the work folder (`--dir`) is the demo's alone: it is removed, whatever it holds,
//!   before the clusters start and after they stop;
//! - every cluster listens on 127.0.0.1 only, on a port free when it starts; the
//!   superuser `postgres` needs its password (random, for this run, in a pgpass file only
//!   its owner reads); the read-only role (`READER`) logs in without one and is the role
//!   the page, the relay's targets and the coordinator's user mappings use;
//! - a scenario's servers are placed on the clusters by `scenario::live_targets`, the rule
//!   every live run connects by, so the demo and a live run agree where a server's tables
//!   are;
//! - while the relay runs, SIGINT and SIGTERM are passed on to it and the demo lives on to
//!   stop the clusters.
//!
//! PostgreSQL has no counterpart: this only starts PostgreSQL servers and the relay.

use crate::CliError;
use pgasync::knobs::Knobs;
use pgasync::scenario::{Scenario, SCENARIOS};
use pgasync::sql_text::coordinator::coordinator_ddl;
use pgasync::sql_text::load::load_sql;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The read-only role the page logs in as, on the shards and on the coordinator (the
/// executor's start-up user, `pgasync::remote::USER`).
pub(crate) const READER: &str = pgasync::remote::USER;

/// The page's own defaults, so the live data is what the page simulates.
use pgasync::knobs::DEFAULT_ROWS;

pub(crate) struct Opts {
    pub(crate) dir: PathBuf,
    pub(crate) shards: usize,
    pub(crate) rows: usize,
    pub(crate) port: u16,
    /// Classroom mode's flags, for the relay (see [`classroom`]).
    pub(crate) relay_args: Vec<String>,
}

pub const ABOUT_LINE: &str =
    "The whole demo: PostgreSQL shard clusters and a coordinator, and the relay serving the page";
pub const USAGE: &str = "pgasync demo [--port 8080] [--shards 4] [--rows 300] [--dir $TMPDIR/pgasync-demo]
             [--bind 0.0.0.0 --allow-host NAME[,NAME]] [--allow-origin URL[,URL]]
             [--tls-cert FILE --tls-key FILE] [--max-sessions-per-client 64]";
pub const ABOUT: &str = "with PostgreSQL installed: shard clusters s1..sN with every scenario's data, one database
per scenario, a coordinator with postgres_fdw, and the relay serving the page; Ctrl-C stops
them all, and a new demo first removes what a crashed one left; without PostgreSQL it
serves the simulated page and says why. The clusters trust only the read-only role pgasync;
their superuser has a password made per demo, in DIR/superuser.pgpass. --bind beyond loopback
is classroom mode: students on the LAN open http(s)://NAME:PORT/; it needs --allow-host";

/// `pgasync demo`'s flags. The classroom's (`--bind` to `--max-sessions-per-client`)
/// go to the relay as they are, lists split at commas.
#[derive(clap::Args, Default)]
pub struct Flags {
    /// The page's port; 0 picks a free one, printed on stdout (0 to 65535) [default: 8080]
    #[arg(long, value_name = "PORT")]
    pub port: Option<String>,
    /// Shard clusters s1..sN (1 to 16) [default: 4]
    #[arg(long, value_name = "N")]
    pub shards: Option<String>,
    #[arg(long, value_name = "N", help = format!(
        "Rows in each shard's tables, the page's default (1 to 100000) [default: {DEFAULT_ROWS}]"
    ))]
    pub rows: Option<String>,
    /// The clusters' folder; a crashed demo's there is removed first [default: $TMPDIR/pgasync-demo]
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
    /// Classroom mode beyond loopback (e.g. 0.0.0.0); needs --allow-host [default: 127.0.0.1]
    #[arg(long, value_name = "ADDRESS", help_heading = "Classroom")]
    pub bind: Option<String>,
    /// The host names or addresses students open, comma separated
    #[arg(long, value_name = "NAME[,NAME]", help_heading = "Classroom")]
    pub allow_host: Option<String>,
    /// Page origins allowed besides the relay's own, comma separated
    #[arg(long, value_name = "URL[,URL]", help_heading = "Classroom")]
    pub allow_origin: Option<String>,
    /// Serves https:// and wss:// with this certificate chain (PEM; with --tls-key)
    #[arg(long, value_name = "FILE", help_heading = "Classroom")]
    pub tls_cert: Option<String>,
    /// The certificate's private key (PEM; with --tls-cert)
    #[arg(long, value_name = "FILE", help_heading = "Classroom")]
    pub tls_key: Option<String>,
    /// Sessions at once from one address (the relay's flag) [default: 64]
    #[arg(long, value_name = "N", help_heading = "Classroom")]
    pub max_sessions_per_client: Option<String>,
}

fn parse(a: &Flags) -> Result<Opts, CliError> {
    let num = |name: &str, v: &Option<String>, default: usize, min: usize, max: usize| -> Result<usize, CliError> {
        match v {
            None => Ok(default),
            Some(v) => match v.parse::<usize>() {
                Ok(n) if (min..=max).contains(&n) => Ok(n),
                _ => Err(CliError::Usage(format!("--{name} {v}: expected an integer from {min} to {max}"))),
            },
        }
    };
    let dir = a.dir.as_deref().map(PathBuf::from).unwrap_or_else(|| std::env::temp_dir().join("pgasync-demo"));
    Ok(Opts {
        dir,
        shards: num("shards", &a.shards, 4, 1, 16)?,
        rows: num("rows", &a.rows, DEFAULT_ROWS, 1, 100_000)?,
        // 0: the relay picks a free port and prints its URL.
        port: num("port", &a.port, 8080, 0, 65535)? as u16,
        relay_args: classroom(a)?,
    })
}

/// Classroom mode: `--bind ADDRESS` beyond loopback serves students on a LAN. The
/// browsers there send Host and Origin headers naming this machine, which the relay
/// only accepts when told (`--allow-host NAME`, the name or address students type, or
/// `--allow-origin URL`), so one of them is required with such a bind. Everything else
/// (TLS, per-client sessions) is the relay's own flag. Returns the relay's flags.
fn classroom(a: &Flags) -> Result<Vec<String>, CliError> {
    let flags = [
        ("bind", &a.bind),
        ("allow-host", &a.allow_host),
        ("allow-origin", &a.allow_origin),
        ("tls-cert", &a.tls_cert),
        ("tls-key", &a.tls_key),
        ("max-sessions-per-client", &a.max_sessions_per_client),
    ];
    let mut out = Vec::new();
    for (flag, v) in flags {
        if let Some(v) = v {
            // Lists are comma-separated here; the relay takes the flag once per value.
            let values: Vec<&str> = if flag.starts_with("allow-") { v.split(',').collect() } else { vec![v] };
            for v in values {
                out.push(format!("--{flag}"));
                out.push(v.trim().to_string());
            }
        }
    }
    let bind = a.bind.as_deref().unwrap_or("127.0.0.1");
    let loopback = bind.parse::<std::net::IpAddr>().map(|ip| ip.is_loopback()).unwrap_or(bind == "localhost");
    if !loopback && a.allow_host.is_none() && a.allow_origin.is_none() {
        return Err(CliError::Usage(format!(
            "--bind {bind}: students' browsers name this machine in their Host and Origin headers; \
             give --allow-host NAME (the host name or address they open, e.g. 192.168.1.20)"
        )));
    }
    if !loopback {
        eprintln!(
            "pgasync demo: classroom mode: anyone who can reach {bind} gets the page, live mode through the relay as the \
             read-only role {READER} (it reads the scenarios' tables, and cannot write, create, or reach server files or \
             programs), the relay's /targets and /metrics, and POST /sql/load (loads scenario files into the demo's \
             clusters, a bounded number of databases, the oldest dropped). The superuser's password stays in this \
             folder. {}",
            if a.tls_cert.is_some() {
                "Served over TLS (https://, wss://)."
            } else {
                "Not encrypted: on an untrusted network use --tls-cert/--tls-key (or a TLS reverse proxy)."
            }
        );
    }
    Ok(out)
}

pub fn run(flags: Flags) -> Result<(), CliError> {
    let o = parse(&flags)?;
    let Some(bin) = pg_bindir() else {
        eprintln!("pgasync demo: PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin): live mode is off, serving the simulated page only");
        let page = crate::serve::PageFlags { port: Some(o.port.to_string()), ..Default::default() };
        return crate::serve::run(crate::serve::Flags { page, ..Default::default() });
    };
    let pg = Pg::new(bin)?;
    prepare_dir(&pg, &o.dir)?;
    let result = start_and_serve(&pg, &o);
    cleanup(&pg, &o.dir);
    result
}

fn failed(m: String) -> CliError {
    CliError::Failed(m)
}

fn start_and_serve(pg: &Pg, o: &Opts) -> Result<(), CliError> {
    let mut clusters = Vec::new();
    for k in 1..=o.shards {
        eprintln!("pgasync demo: starting shard s{k}");
        clusters.push(pg.start(&o.dir, &format!("s{k}"))?);
    }
    eprintln!("pgasync demo: starting the coordinator");
    let coordinator = pg.start(&o.dir, "coordinator")?;
    // The page's "PostgreSQL says" panel logs in as the same read-only role.
    coordinator.psql("postgres", &format!("CREATE ROLE {READER} LOGIN"))?;
    for c in clusters.iter().chain(std::iter::once(&coordinator)) {
        harden(c)?;
    }
    for info in SCENARIOS {
        load_scenario(info.id, o, &clusters, &coordinator)?;
    }
    for c in clusters.iter().chain(std::iter::once(&coordinator)) {
        c.psql("postgres", NO_TEMP_TABLES)?;
    }
    let config = relay_config(&clusters, &coordinator, &o.dir.join(PASSFILE));
    let config_path = o.dir.join("relay.toml");
    std::fs::write(&config_path, config).map_err(|e| failed(format!("{}: {e}", config_path.display())))?;
    eprintln!("pgasync demo: {} shard clusters and the coordinator are up; starting the relay", clusters.len());
    run_relay(&config_path, o.port, &o.relay_args)
}

/// The scenario's data on the shards and its foreign tables on the coordinator.
pub(crate) fn load_scenario(id: &str, o: &Opts, shards: &[Cluster], coordinator: &Cluster) -> Result<(), CliError> {
    let knobs = Knobs { shards: Some(o.shards.min(4)), rows_per_shard: Some(o.rows), ..Default::default() };
    let sc = Scenario::build(id, &knobs).map_err(|e| failed(format!("scenario {id}: {e}")))?;
    if sc.servers.is_empty() {
        return Ok(()); // local only
    }
    let db = id.to_lowercase();
    // Where each server's data goes: the rule every live run connects by.
    let names: Vec<String> = sc.servers.iter().map(|s| s.server.name.clone()).collect();
    let clusters: Vec<String> = shards.iter().map(|c| c.name.clone()).collect();
    let placed = pgasync::scenario::live_targets(&names, &clusters).map_err(failed)?;
    let mut ports = std::collections::HashMap::new();
    let mut made = std::collections::HashSet::new();
    for (spec, cluster) in sc.servers.iter().zip(&placed) {
        let shard = shards.iter().find(|c| &c.name == cluster).expect("live_targets names a cluster");
        if made.insert(cluster.clone()) {
            shard.psql("postgres", &format!("CREATE DATABASE {db}"))?;
        }
        shard.script(&db, &load_sql(&spec.catalog, READER))?;
        ports.insert(spec.server.name.clone(), shard.port);
    }
    let coord = coordinator_ddl(&sc, |s| ("127.0.0.1".to_string(), ports[s]), &db, READER);
    coordinator.psql("postgres", &format!("CREATE DATABASE {db}"))?;
    coordinator.script(&db, &coord)?;
    coordinator.psql(&db, &format!("GRANT SELECT ON ALL TABLES IN SCHEMA public TO {READER}"))
}

/// What the read-only role may not do on a demo cluster beyond PostgreSQL 15's
/// defaults (which already keep it from creating in `public`, creating databases or
/// roles, and from server files and programs): end or cancel another session of the
/// same role (every student logs in as it), and run long. Run in `template1` too, so
/// every database made later (the scenarios', `/sql/load`'s) starts so.
fn harden(c: &Cluster) -> Result<(), CliError> {
    let sql =
        "REVOKE EXECUTE ON FUNCTION pg_cancel_backend(integer), pg_terminate_backend(integer, bigint) FROM PUBLIC";
    c.psql("template1", sql)?;
    c.psql("postgres", sql)?;
    let role = format!("DO $$ BEGIN CREATE ROLE {READER} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$");
    c.psql("postgres", &role)?;
    c.psql("postgres", &format!("ALTER ROLE {READER} SET statement_timeout = '5min'"))
}

/// No temporary tables for PUBLIC in any database there is (a database's privileges
/// are not copied from its template, so `/sql/load` revokes it in its own too).
pub(crate) const NO_TEMP_TABLES: &str = "DO $$ DECLARE d name; BEGIN FOR d IN SELECT datname FROM pg_database \
     WHERE datallowconn LOOP EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', d); END LOOP; END $$";

/// Database names the page opens beyond the scenarios': `/sql/load`'s and `sql --live`'s.
const LOADED_DATABASES: [&str; 2] = ["live_*", "sql_*"];

/// The relay's targets, each open to the read-only role and the demo's databases
/// only, and `[sql_load]`: the page may load its scenario files into these clusters as
/// the superuser, whose password the relay reads from `passfile`.
fn relay_config(shards: &[Cluster], coordinator: &Cluster, passfile: &Path) -> String {
    let mut dbs: Vec<String> = SCENARIOS.iter().map(|s| format!("\"{}\"", s.id.to_lowercase())).collect();
    dbs.extend(LOADED_DATABASES.iter().map(|d| format!("\"{d}\"")));
    let mut t = String::from("# Written by pgasync demo: the relay's targets.\n");
    for c in shards.iter().chain(std::iter::once(coordinator)) {
        t.push_str(&format!(
            "[targets.{}]\naddr = \"127.0.0.1:{}\"\nuser = \"{READER}\"\ndatabases = [{}]\n",
            c.name,
            c.port,
            dbs.join(", ")
        ));
    }
    t.push_str(&format!("[sql_load]\nsuperuser = \"postgres\"\npassfile = {:?}\n", passfile.display().to_string()));
    t
}

/// The relay's pid, for the signal handler.
static RELAY_PID: AtomicI32 = AtomicI32::new(0);

/// SIGINT/SIGTERM while the relay runs: pass it on (Ctrl-C reaches the relay by
/// itself; a SIGTERM sent to us alone must too) and live on to stop the clusters.
extern "C" fn forward_signal(sig: libc::c_int) {
    let pid = RELAY_PID.load(Ordering::SeqCst);
    if pid > 0 {
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// Runs `pgasync relay` in the foreground until it exits (Ctrl-C, SIGTERM).
fn run_relay(config: &Path, port: u16, extra: &[String]) -> Result<(), CliError> {
    let exe = std::env::current_exe().map_err(|e| failed(format!("cannot find our own binary: {e}")))?;
    let mut child = Command::new(exe)
        .args(["relay", "--config", &config.display().to_string(), "--port", &port.to_string()])
        .args(extra)
        .spawn()
        .map_err(|e| failed(format!("cannot start the relay: {e}")))?;
    RELAY_PID.store(child.id() as i32, Ordering::SeqCst);
    let handler = forward_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
    let status = child.wait().map_err(|e| failed(format!("waiting for the relay: {e}")))?;
    RELAY_PID.store(0, Ordering::SeqCst);
    eprintln!("pgasync demo: the relay stopped; stopping the clusters");
    if status.success() || status.code().is_none() {
        Ok(())
    } else {
        Err(failed(format!("the relay exited with {status}")))
    }
}

// ---------------------------------------------------------------------------------
// Interruption, for the commands that start clusters and run long (bench --live,
// calibrate): SIGINT/SIGTERM set a flag their loops check, so the clusters are stopped.

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// SIGINT and SIGTERM only set a flag (`interrupted()`), so what we started is stopped.
pub(crate) fn on_interrupt_stop() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

pub(crate) fn check_interrupted() -> Result<(), CliError> {
    if INTERRUPTED.load(Ordering::SeqCst) {
        Err(CliError::Failed("interrupted; stopping the clusters".into()))
    } else {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------
// PostgreSQL clusters.

/// Starts clusters whose superuser `postgres` has a password made for this run (see
/// [`Pg::start`]); everything that logs in as it reads the password from the run's
/// pgpass file, which only its owner may read.
pub(crate) struct Pg {
    pub(crate) bin: PathBuf,
    password: String,
}

pub(crate) struct Cluster {
    pub(crate) name: String,
    pub(crate) port: u16,
    /// The superuser's pgpass file (`PGPASSFILE` for psql), if it needs one.
    pub(crate) passfile: Option<PathBuf>,
    /// The psql program: the server's own (see [`psql_program`]).
    pub(crate) psql_bin: PathBuf,
}

/// The pgpass file of the superuser's password, in the work folder.
pub(crate) const PASSFILE: &str = "superuser.pgpass";

/// 32 random hex digits from the kernel.
fn random_password() -> Result<String, CliError> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| failed(format!("/dev/urandom: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes `text` to a new file only its owner may read or write.
fn write_private(path: &Path, text: &str) -> Result<(), CliError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| failed(format!("{}: {e}", path.display())))?;
    f.write_all(text.as_bytes()).map_err(|e| failed(format!("{}: {e}", path.display())))
}

/// Who may log in, and how: the read-only role without a password (it is what the page
/// and the coordinator's user mappings use), every other role with its SCRAM password,
/// no replication connection at all. Written over initdb's file.
const PG_HBA: &str = "# pgasync: the read-only role needs no password; every other role does; no replication.\n\
local all pgasync trust\n\
host  all pgasync 127.0.0.1/32 trust\n\
host  all pgasync ::1/128 trust\n\
local all all scram-sha-256\n\
host  all all 127.0.0.1/32 scram-sha-256\n\
host  all all ::1/128 scram-sha-256\n";

/// The newest PostgreSQL under /usr/lib/postgresql (Debian's layout), or
/// `PGASYNC_PG_BIN`.
pub(crate) fn pg_bindir() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("PGASYNC_PG_BIN") {
        return Some(PathBuf::from(dir)).filter(|d| d.join("initdb").exists());
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

/// psql for the clusters `pgasync demo` starts: PostgreSQL's own, from [`pg_bindir`]
/// (the servers' bin directory). Not /usr/bin/psql: that is Debian's pg_wrapper, a
/// Perl script costing ~25 ms of CPU per call before psql runs (100 `psql --version`:
/// 3.08 s of CPU through it, 0.62 s direct; a demo's start runs psql 254 times), and
/// it picks the newest psql installed, not the server's. `psql` from PATH when there
/// is no such directory (clusters of the user's own, PostgreSQL installed elsewhere).
pub(crate) fn psql_program() -> PathBuf {
    pg_bindir().map(|bin| bin.join("psql")).filter(|p| p.exists()).unwrap_or_else(|| PathBuf::from("psql"))
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

impl Pg {
    /// Clusters from the binaries in `bin`, with a superuser password made now.
    pub(crate) fn new(bin: PathBuf) -> Result<Pg, CliError> {
        Ok(Pg { bin, password: random_password()? })
    }

    /// Runs a PostgreSQL program (as `postgres` when we are root: the server refuses
    /// to run as root).
    pub(crate) fn run(&self, prog: &str, args: &[&str]) -> Result<String, CliError> {
        let path = self.bin.join(prog);
        let mut cmd = if is_root() {
            let mut line = shell_quote(&path.display().to_string());
            for a in args {
                line.push(' ');
                line.push_str(&shell_quote(a));
            }
            let mut c = Command::new("su");
            c.args(["postgres", "-s", "/bin/sh", "-c", &line]);
            c
        } else {
            let mut c = Command::new(&path);
            c.args(args);
            c
        };
        let out = cmd.stdin(Stdio::null()).output().map_err(|e| failed(format!("{prog} did not run: {e}")))?;
        if !out.status.success() {
            return Err(failed(format!("{prog} failed: {}", String::from_utf8_lossy(&out.stderr).trim())));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The work folder belongs to the server's user.
    pub(crate) fn own(&self, dir: &Path) -> Result<(), CliError> {
        if is_root() {
            let ok = Command::new("chown").args(["-R", "postgres", &dir.display().to_string()]).status();
            if !ok.is_ok_and(|s| s.success()) {
                return Err(failed(format!("chown postgres {} failed (is there a postgres user?)", dir.display())));
            }
        }
        Ok(())
    }

    /// A cluster `dir/NAME` on a free port: the superuser `postgres` with this run's
    /// password (SCRAM-SHA-256), [`PG_HBA`]'s rules, and `dir/superuser.pgpass` for
    /// those who use it.
    pub(crate) fn start(&self, dir: &Path, name: &str) -> Result<Cluster, CliError> {
        let psql = self.bin.join("psql");
        if !psql.exists() {
            return Err(failed(format!(
                "no psql in {}: the clusters are loaded with the server's own psql (Debian's postgresql-client)",
                self.bin.display()
            )));
        }
        let data = dir.join(name);
        let data_s = data.display().to_string();
        let passfile = dir.join(PASSFILE);
        if !passfile.exists() {
            write_private(&passfile, &format!("*:*:*:postgres:{}\n", self.password))?;
        }
        // initdb reads the password from a file (as the server's user when we are root).
        let pwfile = dir.join(format!("{name}.pw"));
        write_private(&pwfile, &format!("{}\n", self.password))?;
        self.own(&pwfile)?;
        let pwfile_arg = format!("--pwfile={}", pwfile.display());
        let made = self.run(
            "initdb",
            &[
                "-D",
                &data_s,
                "-U",
                "postgres",
                "-A",
                "scram-sha-256",
                &pwfile_arg,
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
            ],
        );
        let _ = std::fs::remove_file(&pwfile);
        made?;
        let hba = data.join("pg_hba.conf");
        std::fs::write(&hba, PG_HBA).map_err(|e| failed(format!("{}: {e}", hba.display())))?;
        let conf_path = data.join("postgresql.conf");
        let initdb_conf =
            std::fs::read_to_string(&conf_path).map_err(|e| failed(format!("{}: {e}", conf_path.display())))?;
        let log = dir.join(format!("{name}.log"));
        // The port free_port names is free when asked for, not necessarily when the server
        // binds it (a client's ephemeral port, another program's listener may take it in
        // between): a start whose server could not bind it is tried on a new port.
        let mut attempt = 1;
        let port = loop {
            let port = free_port()?;
            let conf = format!(
                "\n# pgasync demo\nport = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n\
                 fsync = off\nshared_buffers = 32MB\nmax_connections = 300\nlog_statement = 'all'\n",
                dir.display()
            );
            std::fs::write(&conf_path, format!("{initdb_conf}{conf}"))
                .map_err(|e| failed(format!("{}: {e}", conf_path.display())))?;
            let log_before = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
            let log_s = log.display().to_string();
            match self.run("pg_ctl", &["-D", &data_s, "-l", &log_s, "-w", "-t", "60", "start"]) {
                Ok(_) => break port,
                Err(_) if attempt < START_ATTEMPTS && port_was_taken(&log, log_before) => {
                    eprintln!("pgasync demo: {name}: port {port} was taken before the server bound it; trying another");
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        };
        Ok(Cluster { name: name.to_string(), port, passfile: Some(passfile), psql_bin: psql })
    }
}

impl Cluster {
    pub(crate) fn psql(&self, db: &str, sql: &str) -> Result<(), CliError> {
        self.script(db, &format!("{sql};\n"))
    }

    pub(crate) fn script(&self, db: &str, script: &str) -> Result<(), CliError> {
        use std::io::Write;
        let mut child = Command::new(&self.psql_bin)
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", "-", "-h", "127.0.0.1", "-U", "postgres"])
            .args(["-p", &self.port.to_string(), "-d", db])
            .envs(self.passfile.iter().map(|p| ("PGPASSFILE", p)))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| failed(format!("{} does not run ({e})", self.psql_bin.display())))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(script.as_bytes()).map_err(|e| failed(format!("psql on {}: {e}", self.name)))?;
        }
        let out = child.wait_with_output().map_err(|e| failed(format!("psql on {}: {e}", self.name)))?;
        if !out.status.success() {
            return Err(failed(format!(
                "psql on {} ({db}): {}",
                self.name,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(())
    }
}

/// Stops every cluster a previous demo left running in `dir` and removes the folder.
/// The file that marks a folder as one pgasync made for its clusters (`demo`, `bench
/// --live`, `calibrate`). Only such a folder is ever emptied or deleted, so a `--dir`
/// naming a user's own folder by mistake is refused instead of wiped.
const DIR_MARKER: &str = ".pgasync-clusters";

/// Whether `dir` may hold new clusters: it does not exist, is empty, or pgasync made it.
fn check_dir_is_ours(dir: &Path) -> Result<(), String> {
    let Ok(mut entries) = std::fs::read_dir(dir) else { return Ok(()) };
    if entries.next().is_none() || dir.join(DIR_MARKER).exists() {
        return Ok(());
    }
    Err(format!(
        "--dir {}: the folder holds files pgasync did not make (it has no {DIR_MARKER}); \
         name a new or empty folder: pgasync deletes its clusters' folder when it stops",
        dir.display()
    ))
}

/// Makes `dir` ready for new clusters: a folder pgasync made before (a crashed run's)
/// has its servers stopped and is emptied; a new or empty one is created and marked;
/// any other is refused.
pub(crate) fn prepare_dir(pg: &Pg, dir: &Path) -> Result<(), CliError> {
    check_dir_is_ours(dir).map_err(CliError::Failed)?;
    cleanup(pg, dir);
    std::fs::create_dir_all(dir).map_err(|e| failed(format!("{}: {e}", dir.display())))?;
    std::fs::write(dir.join(DIR_MARKER), "clusters made by pgasync; deleted when it stops\n")
        .map_err(|e| failed(format!("{}: {e}", dir.display())))?;
    pg.own(dir)
}

/// Stops the servers under `dir` and deletes it, if pgasync made it (see [`DIR_MARKER`]).
pub(crate) fn cleanup(pg: &Pg, dir: &Path) {
    if !dir.join(DIR_MARKER).exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        if e.path().join("postmaster.pid").exists() {
            let data = e.path().display().to_string();
            let _ = pg.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// How many ports [`Pg::start`] tries for one cluster.
const START_ATTEMPTS: usize = 3;

/// Whether the server's log, after its first `from` bytes, says it could not bind its port.
fn port_was_taken(log: &Path, from: u64) -> bool {
    std::fs::read(log).is_ok_and(|b| {
        String::from_utf8_lossy(b.get(from as usize..).unwrap_or_default()).contains("Address already in use")
    })
}

fn free_port() -> Result<u16, CliError> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| failed(format!("no free port: {e}")))?;
    l.local_addr().map(|a| a.port()).map_err(|e| failed(format!("no free port: {e}")))
}

fn shell_quote(a: &str) -> String {
    format!("'{}'", a.replace('\'', r"'\''"))
}

#[cfg(test)]
mod dir_tests {
    use super::*;

    #[test]
    fn a_bind_failure_is_read_from_this_start_s_part_of_the_log_only() {
        let log = std::env::temp_dir().join(format!("pgasync-bind-log-{}", std::process::id()));
        let earlier = "LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use\n";
        std::fs::write(&log, earlier).unwrap();
        let from = earlier.len() as u64;
        assert!(port_was_taken(&log, 0), "an earlier start's failure, read from the start");
        assert!(!port_was_taken(&log, from), "nothing since this start began");
        std::fs::write(&log, format!("{earlier}FATAL:  data directory has wrong ownership\n")).unwrap();
        assert!(!port_was_taken(&log, from), "another failure is not retried");
        let _ = std::fs::remove_file(&log);
        assert!(!port_was_taken(&log, 0), "no log");
    }

    #[test]
    fn only_a_new_empty_or_marked_folder_is_used_for_clusters() {
        let base = std::env::temp_dir().join(format!("pgasync-dir-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        assert!(check_dir_is_ours(&base).is_ok(), "a folder that does not exist");
        std::fs::create_dir_all(&base).unwrap();
        assert!(check_dir_is_ours(&base).is_ok(), "an empty folder");
        std::fs::write(base.join("notes.txt"), "a user's file").unwrap();
        let e = check_dir_is_ours(&base).unwrap_err();
        assert!(e.contains("did not make") && e.contains(DIR_MARKER), "{e}");
        std::fs::write(base.join(DIR_MARKER), "").unwrap();
        assert!(check_dir_is_ours(&base).is_ok(), "a folder pgasync made");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
