//! `pgasync sql --file F`: runs a scenario file (SQL for the coordinator and the
//! shards, then the query; see `pgasync::coordinator_sql::script`) in the simulator and
//! prints the setup's statements, EXPLAIN ANALYZE and the rows.
//!
//! `--mode` defaults to what the file's settings say (`enable_async_append`, on by
//! default in PostgreSQL); `--behaviour` and the other knobs override the file's
//! `-- @knobs`. Errors print as `FILE:LINE:COLUMN: message`.
//!
//! A query written as `EXPLAIN (…)` prints as PostgreSQL prints it: without ANALYZE the
//! plan only (nothing runs, nothing is sent to a shard, no rows); with ANALYZE the
//! statement's VERBOSE, TIMING, COSTS, SUMMARY, SETTINGS and FORMAT, then (text) the
//! rows; the options the sandbox lacks are refused where the file is read
//! (`pgasync::coordinator_sql::statement::explain_flags`). A plain SELECT prints as
//! EXPLAIN (ANALYZE, VERBOSE) with the estimates beside the actual figures (COSTS,
//! PostgreSQL's default), or without them with `--costs off`; `--costs` with an
//! EXPLAIN query is refused (its own COSTS says).
//!
//! Invariants:
//! - the file is read up to its size limit before anything is parsed; an error prints as
//!   `FILE:LINE:COLUMN:` only when its line is known;
//! - EXPLAIN without ANALYZE plans and returns: no run starts, no shard is reached;
//! - EXPLAIN (SETTINGS)'s `enable_async_append` is the mode used (`--mode` included),
//!   not only the file's SET;
//! - `--live` loads tables only into local shards (127.0.0.1 or localhost), into a
//!   database named by a hash of the file's text, so no name from the file reaches the
//!   CREATE DATABASE.
//!
//! PostgreSQL has no counterpart: a scenario file holds SQL for several servers.

use crate::args::{self, AllKnobs};
use crate::CliError;
use pgasync::clock::Clock;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::ExplainOptions;
use pgasync::knobs::Source;

pub const ABOUT_LINE: &str = "Runs a scenario file (SQL for the coordinator and each shard, then the query)";
pub const USAGE: &str = "pgasync sql --file F [--live DIR/relay.toml] [--mode sync|async] [--format text|json]
            [--costs on|off] [--counters on|off] [--rows N] [--log on|off] [--profile FILE] [KNOBS]";
pub const ABOUT: &str = "runs a scenario file — SQL for the coordinator and each shard (-- @shard NAME), then
the query (-- @query) — in the simulator: EXPLAIN ANALYZE and the rows; errors as FILE:LINE:COL";

/// The rows `sql` prints when `--rows` does not say.
const MAX_ROWS: usize = 20;

/// `pgasync sql`'s flags. `--rows N` is the knob (rows per shard) and also the most
/// rows printed.
#[derive(clap::Args, Default)]
#[command(mut_arg("rows", |a| a.help(format!(
    "{}; sql: also the most rows printed, {MAX_ROWS} unless given",
    args::knob_help(pgasync::knobs::spec(Source::Cli, "rows").expect("the rows knob"))
))))]
pub struct Flags {
    /// The scenario file; required
    #[arg(long, value_name = "F")]
    pub file: Option<String>,
    /// Append's mode [default: the file's enable_async_append, async unless off]
    #[arg(long, value_name = "sync|async")]
    pub mode: Option<String>,
    /// The plan as text or JSON [default: text, or JSON for an EXPLAIN (FORMAT JSON) query]
    #[arg(long, value_name = "text|json")]
    pub format: Option<String>,
    /// A plain SELECT's estimates `(cost=… rows=… width=…)` beside the actual figures, as
    /// EXPLAIN's COSTS [default: on; an EXPLAIN query's own COSTS decides for it]
    #[arg(long, value_name = "on|off")]
    pub costs: Option<String>,
    /// Our own Remote:/Async: lines and the JSON key "pgasync" [default: off]
    #[arg(long, value_name = "on|off")]
    pub counters: Option<String>,
    /// Prints the setup's statements on stderr [default: on]
    #[arg(long, value_name = "on|off")]
    pub log: Option<String>,
    /// Loads the file's shard tables into a running `pgasync demo`'s shards and runs there
    #[arg(long, value_name = "DIR/relay.toml")]
    pub live: Option<String>,
    /// Knobs from a JSON file (`pgasync calibrate` writes one); flags override it
    #[arg(long, value_name = "FILE")]
    pub profile: Option<String>,
    #[command(flatten)]
    pub knobs: AllKnobs,
}

pub fn run(a: Flags) -> Result<(), CliError> {
    let file = a.file.as_deref().ok_or_else(|| "sql needs --file F (a scenario file)".to_string())?;
    // An EXPLAIN query says how to print it (FORMAT JSON) unless --format says.
    let format_flag = a.format.is_some();
    let format = args::choice("format", a.format.as_deref(), &["text", "json"], "text")?;
    let counters = args::choice("counters", a.counters.as_deref(), &["on", "off"], "off")? == "on";
    let costs = args::choice("costs", a.costs.as_deref(), &["on", "off"], "on")? == "on";
    let max_rows: usize = match a.knobs.get("rows") {
        Some(v) => v.parse().map_err(|_| format!("--rows {v}: not a number"))?,
        None => MAX_ROWS,
    };
    let text = crate::input::read_text(file, "a scenario file", crate::input::SCRIPT_BYTES)
        .map_err(|e| CliError::Usage(format!("{file}: {e}")))?;
    let at = |e: pgasync::coordinator_sql::FrontError| {
        CliError::Failed(if e.line > 0 {
            format!("{file}:{}:{}: {}", e.line, e.column, e.message)
        } else {
            format!("{file}: {}", e.message)
        })
    };
    let sql = SqlScenario::load(&text).map_err(at)?;
    if let (Some(v), Some(q)) = (&a.costs, sql.query.as_ref().filter(|q| q.explain.is_some())) {
        return Err(CliError::Usage(format!(
            "--costs {v}: {file}:{}:{}: the query is an EXPLAIN, whose own COSTS option says whether the estimates \
             are printed",
            q.at.0, q.at.1
        )));
    }
    let format = if !format_flag && sql.query.as_ref().and_then(|q| q.explain).is_some_and(|e| e.json) {
        "json"
    } else {
        format
    };
    if args::choice("log", a.log.as_deref(), &["on", "off"], "on")? == "on" {
        for line in &sql.log {
            eprintln!("{line}");
        }
    }
    let knobs = crate::knobs_with_profile(&a.knobs, a.profile.as_deref())?;
    let default_mode = if sql.async_append() { "async" } else { "sync" };
    let mode = args::choice("mode", a.mode.as_deref(), &["sync", "async"], default_mode)?;
    if sql.is_plan_only() {
        // EXPLAIN without ANALYZE: planned, not run; nothing is sent to a shard.
        let tree = sql.plan_only(&knobs, Source::Cli, mode == "async").map_err(at)?;
        let opts = ExplainOptions { verbose: sql.explain_flags().is_some_and(|f| f.verbose), counters };
        let doc = sql.explain_doc_run(costs, mode == "async");
        if format == "json" {
            println!("{}", pgasync::instrument::explain_doc_json_text(&tree, &opts, &doc, 0, 0));
        } else {
            print!("{}", pgasync::instrument::explain_doc_text(&tree, &opts, &doc, 0, 0));
        }
        return Ok(());
    }
    let scenario = sql.scenario(&knobs, Source::Cli).map_err(at)?;
    // EXPLAIN (ANALYZE, TIMING OFF): no clock read per node call, rows and loops only.
    let timing = sql.explain_flags().map_or(true, |f| f.timing);
    if let Some(config) = a.live.as_deref() {
        let database = load_live(&text, &scenario, config)?;
        let (mut run, _gateway) = crate::explain::start_live(&scenario, mode == "async", config, &database)?;
        run.es.timing = timing;
        let outcome = run.run_to_end();
        return report(
            &sql,
            &run,
            outcome,
            (format, mode == "async"),
            (counters, costs),
            max_rows,
            &format!("{mode}, live shards, real clock"),
        );
    }
    let mut run = scenario.start(mode == "async", Clock::virtual_clock(), false)?;
    run.es.timing = timing;
    run.keep_rows = true;
    let outcome = run.run_to_end();
    report(
        &sql,
        &run,
        outcome,
        (format, mode == "async"),
        (counters, costs),
        max_rows,
        &format!("{mode}, virtual clock"),
    )
}

/// Loads the file's shard tables into the live shards a targets file names (a
/// running `pgasync demo`'s relay.toml), as their superuser through psql, in a
/// database named after the file's text; returns that name. The servers are found by
/// name among the targets (`s1`…`s4` in the demo).
fn load_live(text: &str, scenario: &pgasync::scenario::Scenario, config: &str) -> Result<String, CliError> {
    let targets = crate::explain::live_targets(config)?;
    // The superuser's password file, as the relay's `[sql_load]` names it.
    let passfile = crate::config::sql_load_from(Some(config))?.and_then(|c| c.passfile);
    // FNV-1a: the same file always loads into the same database.
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    let database = format!("sql_{hash:016x}");
    let psql_bin = crate::demo::psql_program();
    for spec in &scenario.servers {
        let name = &spec.server.name;
        let t = targets.get(name).ok_or_else(|| {
            let known: Vec<&str> = targets.keys().map(|k| k.as_str()).collect();
            CliError::Usage(format!(
                "--live {config}: no target \"{name}\" (targets: {}); name the file's servers after them",
                known.join(", ")
            ))
        })?;
        let port: u16 = t
            .addr
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| CliError::Usage(format!("--live {config}: target {name}: no port in {}", t.addr)))?;
        if !t.addr.starts_with("127.0.0.1:") && !t.addr.starts_with("localhost:") {
            return Err(CliError::Usage(format!("--live loads tables only into local shards; {name} is {}", t.addr)));
        }
        let shard =
            crate::demo::Cluster { name: name.clone(), port, passfile: passfile.clone(), psql_bin: psql_bin.clone() };
        // A second run of the same file finds its database there already.
        if shard.psql("postgres", &format!("CREATE DATABASE {database}")).is_ok() {
            shard.psql("postgres", &format!("REVOKE TEMPORARY ON DATABASE {database} FROM PUBLIC"))?;
        }
        shard.script(&database, &pgasync::sql_text::load::load_sql(&spec.catalog, crate::demo::READER))?;
    }
    Ok(database)
}

/// Prints EXPLAIN ANALYZE, then (text) the rows.
fn report<H: pgasync::host::Host>(
    sql: &SqlScenario,
    run: &pgasync::run::QueryRun<H>,
    outcome: Result<(), pgasync::executor::estate::ExecError>,
    (format, async_mode): (&str, bool),
    (counters, costs): (bool, bool),
    max_rows: usize,
    how: &str,
) -> Result<(), CliError> {
    // An EXPLAIN (ANALYZE …) query says whether VERBOSE, COSTS, SUMMARY, SETTINGS (TIMING
    // is the run's); a plain SELECT prints as EXPLAIN (ANALYZE, VERBOSE) with COSTS as
    // `--costs` says, then the rows.
    let verbose = sql.explain_flags().map_or(true, |e| e.verbose);
    let opts = ExplainOptions { verbose, counters };
    let doc = sql.explain_doc_run(costs, async_mode);
    if format == "json" {
        // PostgreSQL's key order and layout.
        println!("{}", pgasync::instrument::explain_doc_json_text(&run.explain(), &opts, &doc, 0, run.execution_ns()));
    } else {
        print!("{}", pgasync::instrument::explain_doc_text(&run.explain(), &opts, &doc, 0, run.execution_ns()));
    }
    if let Err(e) = outcome {
        return Err(CliError::Failed(format!("query failed: {e}")));
    }
    if format == "text" {
        let names: Vec<String> = run.columns.iter().map(|c| c.name.clone()).collect();
        println!("{}", names.join(" | "));
        for r in run.rows.iter().take(max_rows) {
            println!("{}", r.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(" | "));
        }
        println!(
            "({} rows{}; {how}, {:.3} ms)",
            run.rows.len(),
            if run.rows.len() > max_rows { ", first shown" } else { "" },
            run.elapsed_ns() as f64 / 1e6
        );
    }
    Ok(())
}
