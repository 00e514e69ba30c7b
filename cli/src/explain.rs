//! `pgasync explain`: runs one scenario and prints EXPLAIN ANALYZE and the result.
//!
//! The plan prints as PostgreSQL prints `EXPLAIN (ANALYZE, VERBOSE, COSTS OFF)`: a
//! built-in scenario's plan is made by its generator, not chosen by the planner, so it
//! has no estimates to print (`pgasync sql --file F` prints a scenario file's estimates
//! beside the actual figures, the built-ins' own files in crate/coordinator_sql/scenarios
//! included);
//! `--verbose off` drops what only VERBOSE shows (Output, schema-qualified Remote SQL),
//! and `--counters` adds our own counters (the `Remote:` / `Async:` lines, the JSON key
//! "pgasync"), which PostgreSQL does not print.
//!
//! `--live DIR/relay.toml` runs the scenario on real shards instead of simulated ones:
//! the targets file `pgasync demo` writes names each server's address, and each
//! scenario's data is in the database named after it (lower case). The native TCP host
//! runs it with a real clock.
//!
//! Invariants: the plan is printed even when the query failed (as far as it ran), then
//! the error; `--counters` is off by default, so the output is PostgreSQL's own; the
//! text output says whether the rows match the scenario's reference; a `--live` run's
//! gateway outlives the run.

use crate::args::{self, AllKnobs};
use crate::gateway::{LocalGateway, LocalTarget};
use crate::CliError;
use pgasync::clock::Clock;
use pgasync::host::tcp::TcpHost;
use pgasync::host::Host;
use pgasync::instrument::ExplainOptions;
use pgasync::knobs::Source;
use pgasync::run::QueryRun;
use pgasync::scenario::Scenario;
use std::net::SocketAddr;

pub const ABOUT_LINE: &str = "Runs one scenario and prints EXPLAIN ANALYZE and the result";
pub const USAGE: &str = "pgasync explain --scenario ID [--mode sync|async] [--format text|json] [--verbose on|off]
                [--counters on|off] [--profile FILE] [--live DIR/relay.toml] [KNOBS]";
pub const ABOUT: &str = "PostgreSQL's EXPLAIN (ANALYZE, VERBOSE, COSTS OFF); --counters on adds our
Remote:/Async: lines and the JSON key \"pgasync\", which PostgreSQL does not print;
--live runs on the real shards a running `pgasync demo` lists in its relay.toml.
COSTS OFF: a built-in scenario's plan is built by its generator, not planned, so it
has no estimates; `pgasync sql --file F` prints a scenario file's estimates beside
the actual figures";

/// `pgasync explain`'s flags.
#[derive(clap::Args, Default)]
pub struct Flags {
    /// The scenario: A B C D E F G pf1 M t0 pl pf0 R H K X (see SCENARIOS.md); required
    #[arg(long, value_name = "ID")]
    pub scenario: Option<String>,
    /// Append's mode [default: async]
    #[arg(long, value_name = "sync|async")]
    pub mode: Option<String>,
    /// The plan as text or as JSON (with no result lines) [default: text]
    #[arg(long, value_name = "text|json")]
    pub format: Option<String>,
    /// What only VERBOSE shows: Output, schema-qualified Remote SQL [default: on]
    #[arg(long, value_name = "on|off")]
    pub verbose: Option<String>,
    /// Our own Remote:/Async: lines and the JSON key "pgasync" [default: off]
    #[arg(long, value_name = "on|off")]
    pub counters: Option<String>,
    /// Knobs from a JSON file (`pgasync calibrate` writes one); flags override it
    #[arg(long, value_name = "FILE")]
    pub profile: Option<String>,
    /// Runs on the real shards a running `pgasync demo` lists in its relay.toml
    #[arg(long, value_name = "DIR/relay.toml")]
    pub live: Option<String>,
    #[command(flatten)]
    pub knobs: AllKnobs,
}

pub fn run(a: Flags) -> Result<(), CliError> {
    let id = a.scenario.as_deref().ok_or_else(|| "explain needs --scenario".to_string())?;
    let mode = args::choice("mode", a.mode.as_deref(), &["sync", "async"], "async")?;
    let format = args::choice("format", a.format.as_deref(), &["text", "json"], "text")?;
    let opts = ExplainOptions {
        verbose: on_off("verbose", a.verbose.as_deref(), true)?,
        counters: on_off("counters", a.counters.as_deref(), false)?,
    };
    let knobs = crate::knobs_with_profile(&a.knobs, a.profile.as_deref())?;
    let scenario = Scenario::build_from(id, &knobs, Source::Cli)?;
    if let Some(config) = a.live.as_deref() {
        let (mut run, _gateway) = start_live(&scenario, mode == "async", config, &scenario.id.to_lowercase())?;
        let outcome = run.run_to_end();
        return report(
            &scenario,
            &run,
            outcome,
            mode,
            format,
            &opts,
            &format!("live shards from {config}, real clock"),
        );
    }
    let mut run = scenario.start(mode == "async", Clock::virtual_clock(), false)?;
    run.keep_rows = true;
    let outcome = run.run_to_end();
    report(&scenario, &run, outcome, mode, format, &opts, "virtual clock")
}

/// Prints the plan with EXPLAIN ANALYZE, then (text) the result and the behaviour.
fn report<H: Host>(
    scenario: &Scenario,
    run: &QueryRun<H>,
    outcome: Result<(), pgasync::executor::estate::ExecError>,
    mode: &str,
    format: &str,
    opts: &ExplainOptions,
    clock: &str,
) -> Result<(), CliError> {
    if format == "json" {
        println!("{}", serde_json::to_string_pretty(&run.explain_json_with(opts)).unwrap());
    } else {
        print!("{}", run.explain_text_with(opts));
    }
    if let Err(e) = outcome {
        return Err(CliError::Failed(format!("query failed: {e}")));
    }
    if format == "text" {
        let shown: Vec<String> =
            run.rows.iter().take(5).map(|r| r.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(" | ")).collect();
        let matches = scenario.matches_reference(&run.rows);
        println!(
            "Result: {} rows{}; first: [{}]; reference {}",
            run.rows.len(),
            if run.rows.len() > 5 { " (first 5 shown)" } else { "" },
            shown.join("], ["),
            if matches { "matches" } else { "DIFFERS" }
        );
        println!("Mode: {mode} ({clock}), {:.3} ms", run.elapsed_ns() as f64 / 1e6);
        let diffs: Vec<&str> = scenario.behaviour.differences().iter().map(|k| k.name).collect();
        println!(
            "Behaviour: {}; differences from PostgreSQL 15: {}",
            scenario.behaviour.label(),
            if diffs.is_empty() { "none".to_string() } else { diffs.join(", ") }
        );
    }
    Ok(())
}

/// `--NAME on|off`; `default` when not given.
fn on_off(name: &str, v: Option<&str>, default: bool) -> Result<bool, String> {
    Ok(match v {
        None => default,
        Some(_) => args::choice(name, v, &["on", "off"], "on")? == "on",
    })
}

/// The targets of `--live FILE`, read as the relay reads its configuration (`pgasync
/// demo` writes it), its errors naming `--live`.
pub(crate) fn live_targets(
    config: &str,
) -> Result<std::collections::BTreeMap<String, crate::config::Target>, CliError> {
    crate::config::targets_from(Some(config), &[], &[]).map_err(|e| match e {
        CliError::Usage(m) => CliError::Usage(m.replacen("--config ", "--live ", 1)),
        other => other,
    })
}

/// The scenario on the servers a targets file names (`[targets.NAME] addr = "H:P"`),
/// each opening `database`. Targets that need TLS or a password are reached through a
/// loopback gateway (returned: it must outlive the run) that opens them as the relay does.
pub(crate) fn start_live(
    scenario: &Scenario,
    async_mode: bool,
    config: &str,
    database: &str,
) -> Result<(QueryRun<TcpHost>, Option<LocalGateway>), CliError> {
    let targets = live_targets(config)?;
    // Each server's target, by the demo's layout (`scenario::live_targets`).
    let names: Vec<String> = scenario.servers.iter().map(|s| s.server.name.clone()).collect();
    let known: Vec<String> = targets.keys().cloned().collect();
    let placed = pgasync::scenario::live_targets(&names, &known)
        .map_err(|e| CliError::Usage(format!("--live {config}: {e}")))?;
    let used: Vec<(String, &crate::config::Target)> = placed.iter().map(|t| (t.clone(), &targets[t])).collect();
    let mut gated: Vec<(String, LocalTarget)> =
        used.iter().filter(|(_, t)| t.needs_gateway()).map(|(n, t)| (n.clone(), t.local())).collect();
    gated.sort_by(|a, b| a.0.cmp(&b.0));
    gated.dedup_by(|a, b| a.0 == b.0);
    let gateway = if gated.is_empty() { None } else { Some(LocalGateway::start(gated).map_err(CliError::Failed)?) };
    let addrs =
        used.iter()
            .map(|(name, t)| {
                if let Some(addr) = gateway.as_ref().and_then(|g| g.addrs.get(name)) {
                    return Ok(*addr);
                }
                std::net::ToSocketAddrs::to_socket_addrs(&t.addr).ok().and_then(|mut a| a.next()).ok_or_else(|| {
                    CliError::Usage(format!("--live {config}: target {name}: cannot resolve {}", t.addr))
                })
            })
            .collect::<Result<Vec<SocketAddr>, _>>()?;
    // Connections open when the executor connects (GetConnection at ExecInit).
    let host = TcpHost::new(&addrs);
    let writer = host.writer();
    let t0 = std::time::Instant::now();
    let clock = Clock::from_host(Box::new(move || t0.elapsed().as_nanos() as u64));
    let mut run = scenario.start_on(host, async_mode, clock, false)?;
    run.es.set_database(database);
    // Statements go on the wire when sent, as libpq writes them (EState::writer).
    run.es.writer = Some(writer);
    run.keep_rows = true;
    Ok((run, gateway))
}
