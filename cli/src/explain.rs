//! `pgasync explain`: runs one scenario and prints EXPLAIN ANALYZE and the result.
//!
//! The plan prints as PostgreSQL prints `EXPLAIN (ANALYZE, VERBOSE, COSTS OFF)`;
//! `--verbose off` drops what only VERBOSE shows (Output, schema-qualified Remote SQL),
//! and `--counters` adds our own counters (the `Remote:` / `Async:` lines, the JSON key
//! "pgasync"), which PostgreSQL does not print.

use crate::args::Args;
use crate::CliError;
use pgasync::clock::Clock;
use pgasync::instrument::ExplainOptions;
use pgasync::knobs::{Source, SPECS};
use pgasync::scenario::Scenario;

pub fn run(argv: &[String]) -> Result<(), CliError> {
    let flags: Vec<&str> = ["scenario", "mode", "format", "counters", "verbose", "profile"]
        .into_iter()
        .chain(SPECS.iter().map(|s| s.cli))
        .collect();
    let a = Args::parse(argv, &flags)?;
    let id = a.get("scenario").ok_or_else(|| "explain needs --scenario".to_string())?;
    let mode = a.choice("mode", &["sync", "async"], "async")?;
    let format = a.choice("format", &["text", "json"], "text")?;
    let opts = ExplainOptions { verbose: on_off(&a, "verbose", true)?, counters: on_off(&a, "counters", false)? };
    let knobs = crate::knobs_with_profile(&a)?;
    let scenario = Scenario::build_from(id, &knobs, Source::Cli)?;
    let mut run = scenario.start(mode == "async", Clock::virtual_clock(), false)?;
    run.keep_rows = true;
    let outcome = run.run_to_end();
    if format == "json" {
        println!("{}", serde_json::to_string_pretty(&run.explain_json_with(&opts)).unwrap());
    } else {
        print!("{}", run.explain_text_with(&opts));
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
        println!("Mode: {mode} (virtual clock), {:.3} ms", run.elapsed_ns() as f64 / 1e6);
        let diffs: Vec<&str> = scenario.behaviour.differences().iter().map(|k| k.name).collect();
        println!(
            "Behaviour: {}; differences from PostgreSQL 15: {}",
            scenario.behaviour.label(),
            if diffs.is_empty() { "none".to_string() } else { diffs.join(", ") }
        );
    }
    Ok(())
}

/// `--NAME` alone or `--NAME on|off`.
fn on_off(a: &Args, name: &str, default: bool) -> Result<bool, String> {
    Ok(match a.get(name) {
        None => default,
        Some(_) => a.choice(name, &["on", "off"], "on")? == "on",
    })
}
