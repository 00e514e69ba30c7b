//! The `pgasync` command: argument parsing only; the work is in the modules.

mod args;
mod bench;
mod calibrate;
mod demo;
mod explain;
mod gateway;
mod input;
mod live_bench;
mod relay;
mod serve;
mod sql;
mod sql_load;
mod static_files;
mod tls;
mod trace;

use std::process::ExitCode;

const USAGE: &str = "usage:
  pgasync explain --scenario ID [--mode sync|async] [--format text|json] [--verbose on|off]
                  [--counters on|off] [--profile FILE] [--live DIR/relay.toml] [KNOBS]
      (explain: PostgreSQL's EXPLAIN (ANALYZE, VERBOSE, COSTS OFF); --counters on adds our
       Remote:/Async: lines and the JSON key \"pgasync\", which PostgreSQL does not print;
       --live runs on the real shards a running `pgasync demo` lists in its relay.toml)
  pgasync bench [--clock virtual|real] [--scenarios A,B,...] [--queries N] [--format table|tsv]
                [--profile FILE] [KNOBS]
      (bench: one row per scenario, behaviour and fetch size (100, 200, 1000 unless --fetch-size);
       without --behaviour or a behaviour knob, each scenario runs as pg15 and as improved;
       --queries N (1 to 1000, default 20): queries in scenario M's series of random OFFSET/LIMIT;
       --format tsv prints only the table on stdout, the other lines on stderr; KNOBS but --offset/--limit;
       --profile FILE: knobs from a JSON file (pgasync calibrate writes one); flags override it)
  pgasync bench --live [--rows 30000] [--delay-ms 0,2,10] [--fetch-size 100,1000] [--runs 3]
                [--format table|tsv] [--dir DIR] [--profile FILE]
      (bench --live: 4 shard clusters and a coordinator under DIR (a fresh temporary folder), E and D
       loaded, a delay proxy per shard (half of --delay-ms each way); per scenario, delay and fetch
       size the median Execution Time of the real coordinator (postgres_fdw, async_capable off/on)
       and of pgasync pg15 and improved (sync/async) on the same shards, runs interleaved, with
       their min-max spread; then the calibrated simulation of E against live, and the relay's
       throughput and added latency against direct TCP; every cluster is stopped at the end, on
       error and on Ctrl-C)
  pgasync sql --file F [--live DIR/relay.toml] [--mode sync|async] [--format text|json] [--counters on|off] [--rows N] [--log on|off]
                 [--profile FILE] [KNOBS]
      (sql: runs a scenario file — SQL for the coordinator and each shard (-- @shard NAME), then
       the query (-- @query) — in the simulator: EXPLAIN ANALYZE and the rows; errors as FILE:LINE:COL)
  pgasync trace (--scenario ID | --file F) [--mode sync|async] [--out FILE] [KNOBS]
                [--format json|csv|svg|explain-text|explain-json]
      (trace: runs on the simulator and writes the trace (JSON, CSV), the timeline (SVG) or EXPLAIN)
  pgasync calibrate --live [--out profile.json] [--rows 30000] [--dir DIR]
                    [--target HOST:PORT | --config relay.toml --target NAME] [--database e] [--table t1]
      (calibrate: measures on a live shard (its own cluster under DIR, or --target) the round trip,
       server time per FETCH and per row (fitted over FETCH sizes 1 to 1000), bandwidth, connection
       set-up, and pgasync's own CPU as the coordinator of a scan (per row, per answer, per async
       request), and writes the knobs rtt_ms, server_query_us, server_row_us, bandwidth_mbps,
       connect_ms, coordinator_row_us, coordinator_answer_us, coordinator_async_us as JSON)
  pgasync serve [--port 8080] [--bind 127.0.0.1] [--root .] [--web ROOT/web] [--pkg ROOT/pkg]
                [--allow-host NAME]... [--header-timeout-ms 10000] [--idle-timeout-ms 30000]
                [--max-connections 256] [--max-per-client 32]
      (serves only regular files under web/ and pkg/; loopback Host names only unless --allow-host;
       --port 0 picks a free port, printed on stdout; binding beyond loopback warns on stderr)
  pgasync demo [--port 8080] [--shards 4] [--rows 300] [--dir $TMPDIR/pgasync-demo]
               [--bind 0.0.0.0 --allow-host NAME[,NAME]] [--allow-origin URL[,URL]]
               [--tls-cert FILE --tls-key FILE] [--max-sessions-per-client 64]
      (with PostgreSQL installed: shard clusters s1..sN with every scenario's data, one database
       per scenario, a coordinator with postgres_fdw, and the relay serving the page; Ctrl-C stops
       them all, and a new demo first removes what a crashed one left; without PostgreSQL it
       serves the simulated page and says why. The clusters trust only the read-only role pgasync;
       their superuser has a password made per demo, in DIR/superuser.pgpass. --bind beyond loopback
       is classroom mode: students on the LAN open http(s)://NAME:PORT/; it needs --allow-host)
  pgasync relay [--config FILE] [--target NAME=HOST:PORT]... [--delay NAME=20ms]... [--port 8080]
                [--bind 127.0.0.1] [--allow-origin http://HOST:PORT]... [--max-frame-bytes 1048576]
                [--max-buffer-bytes 262144] [--max-sessions 256] [--max-sessions-per-client 64]
                [--idle-timeout-ms 60000] [--connect-timeout-ms 5000] [--tls-cert FILE --tls-key FILE]
                [serve's flags]
      (relay: WebSocket /shard/NAME <-> TCP to target NAME ([targets.NAME] addr = \"HOST:PORT\" in the
       TOML file); --delay adds to each round trip (half each way); the browser leaving mid-query
       cancels the backend's query; /health, /targets, /metrics; POST /sql/load loads a page's
       scenario file into the local targets when the TOML file has [sql_load] superuser = \"postgres\"
       (pgasync demo writes it); every other path as serve. A target may restrict clients to one
       role and some databases (user = \"pgasync\", databases = [\"e\", \"live_*\"]; every other startup is
       refused with a FATAL ErrorResponse), and reach a real server with tls = \"require\"|\"verify-full\"
       (ca_file) and password_env or password_file: the relay authenticates (SCRAM-SHA-256, MD5) for the
       browser. --tls-cert/--tls-key serve https:// and wss://)
scenarios: A B C D E F G pf1 M X (see SCENARIOS.md)";

fn main() -> ExitCode {
    // Exit quietly when the reader of our output goes away (`pgasync bench | head`),
    // as Unix tools do, instead of panicking on the failed write.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = argv.first() else {
        eprintln!("{USAGE}\n{}", knob_usage());
        return ExitCode::from(2);
    };
    let rest = &argv[1..];
    let result = match cmd.as_str() {
        "explain" => explain::run(rest),
        "bench" => bench::run(rest),
        "serve" => serve::run(rest),
        "demo" => demo::run(rest),
        "relay" => relay::run(rest),
        "calibrate" => calibrate::run(rest),
        "sql" => sql::run(rest),
        "trace" => trace::run(rest),
        "-h" | "--help" | "help" => {
            println!("{USAGE}\n{}", knob_usage());
            return ExitCode::SUCCESS;
        }
        other => Err(CliError::Usage(format!("unknown command \"{other}\""))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Usage(m)) => {
            eprintln!("pgasync: {m}");
            ExitCode::from(2)
        }
        Err(CliError::Failed(m)) => {
            eprintln!("pgasync: {m}");
            ExitCode::from(1)
        }
    }
}

/// Bad arguments exit with 2, a failed query with 1.
pub enum CliError {
    Usage(String),
    Failed(String),
}

impl From<String> for CliError {
    fn from(m: String) -> CliError {
        CliError::Usage(m)
    }
}

/// The knobs shared by explain and bench, each checked by `pgasync::knobs` (the page
/// and the wasm API use the same checks).
pub fn knobs_from(a: &args::Args) -> Result<pgasync::scenario::Knobs, String> {
    use pgasync::knobs::{set_text, Source, SPECS};
    let mut k = pgasync::scenario::Knobs::default();
    for spec in SPECS {
        if let Some(v) = a.get(spec.cli) {
            set_text(&mut k, Source::Cli, spec.cli, v)?;
        }
    }
    Ok(k)
}

/// A knobs profile (JSON, as `pgasync calibrate` writes it), checked as the wasm API's
/// knobs object is.
pub fn read_profile(path: &str) -> Result<pgasync::scenario::Knobs, CliError> {
    let text = input::read_text(path, "a knobs profile", input::CONFIG_BYTES)
        .map_err(|e| CliError::Usage(format!("--profile {path}: {e}")))?;
    pgasync::knobs::from_json(&text).map_err(|e| CliError::Usage(format!("--profile {path}: {e}")))
}

/// The knobs of `knobs_from`, on top of `--profile FILE` when given: a flag given
/// explicitly overrides the profile's value.
pub fn knobs_with_profile(a: &args::Args) -> Result<pgasync::scenario::Knobs, CliError> {
    let explicit = knobs_from(a)?;
    let Some(path) = a.get("profile") else { return Ok(explicit) };
    let profile = read_profile(path)?;
    let mut merged = serde_json::to_value(&profile).expect("knobs serialize");
    let given = serde_json::to_value(&explicit).expect("knobs serialize");
    if let (Some(m), Some(g)) = (merged.as_object_mut(), given.as_object()) {
        for (key, v) in g {
            if !v.is_null() {
                m.insert(key.clone(), v.clone());
            }
        }
    }
    Ok(serde_json::from_value(merged).expect("knobs deserialize"))
}

/// The knob flags, from `pgasync::knobs::SPECS` and the behaviour knobs' reasons.
fn knob_usage() -> String {
    use pgasync::behaviour::KNOBS;
    use pgasync::knobs::{Kind, SPECS};
    let mut out = String::from(
        "KNOBS (the scenario's default when not given; numbers are plain decimal: no 0x, +, NaN or inf;\n\
         \x20      integers take no exponent):\n",
    );
    let mut behaviour = String::from(
        "behaviour knobs (default pg15: exactly what PostgreSQL 15 does; each flag applies on top of\n\
         \x20 the --behaviour preset; --NAME alone means on, --NAME=off off):\n",
    );
    for s in SPECS {
        let (arg, range) = match s.kind {
            Kind::Int { lo, hi } => (" N".to_string(), format!(" ({lo} to {hi})")),
            Kind::Float { lo, hi } => (" X".to_string(), format!(" ({lo} to {hi})")),
            Kind::FloatList { lo, hi } => (" X,X,...".to_string(), format!(" (each {lo} to {hi})")),
            Kind::Sharing => (" dedicated|shared".to_string(), String::new()),
            Kind::Preset => (" pg15|improved".to_string(), String::new()),
            Kind::Switch => {
                let reason = KNOBS.iter().find(|k| k.name == s.name).map_or("", |k| k.reason);
                let what = reason.split(';').next().unwrap_or(reason);
                behaviour += &format!("  --{}[=on|off]\n      {what}\n", s.cli);
                continue;
            }
        };
        out += &format!("  {:<34} {}{range}\n", format!("--{}{arg}", s.cli), s.help);
    }
    out + &behaviour + "bad arguments exit with 2, a failed query with 1"
}
