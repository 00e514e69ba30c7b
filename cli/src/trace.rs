//! `pgasync trace`: runs a built-in scenario (`--scenario`) or a scenario file
//! (`--file`) on the simulator and writes what the page exports: the trace as JSON or
//! CSV, EXPLAIN ANALYZE as text or JSON, or the timeline as SVG (`pgasync::export`),
//! to stdout or `--out FILE`.

use crate::args::Args;
use crate::CliError;
use pgasync::clock::Clock;
use pgasync::export::{timeline_svg, trace_csv, trace_json, TraceHeader};
use pgasync::frontend::SqlScenario;
use pgasync::instrument::{explain_json_text, ExplainOptions};
use pgasync::knobs::{Source, SPECS};
use pgasync::scenario::Scenario;

pub fn run(argv: &[String]) -> Result<(), CliError> {
    let flags: Vec<&str> = ["scenario", "file", "mode", "format", "out", "profile"]
        .into_iter()
        .chain(SPECS.iter().map(|s| s.cli))
        .collect();
    let a = Args::parse(argv, &flags)?;
    let format = a.choice("format", &["json", "csv", "svg", "explain-text", "explain-json"], "json")?;
    let knobs = crate::knobs_with_profile(&a)?;
    let (scenario, name, default_async) = match (a.get("scenario"), a.get("file")) {
        (Some(id), None) => (Scenario::build_from(id, &knobs, Source::Cli)?, id.to_string(), true),
        (None, Some(file)) => {
            let text = std::fs::read_to_string(file).map_err(|e| CliError::Usage(format!("{file}: {e}")))?;
            let at = |e: pgasync::frontend::FrontError| {
                CliError::Failed(format!("{file}:{}:{}: {}", e.line, e.column, e.message))
            };
            let sql = SqlScenario::load(&text).map_err(at)?;
            (sql.scenario(&knobs, Source::Cli).map_err(at)?, file.to_string(), sql.async_append())
        }
        _ => return Err(CliError::Usage("trace needs --scenario ID or --file F (one of them)".into())),
    };
    let mode = a.choice("mode", &["sync", "async"], if default_async { "async" } else { "sync" })?;
    let mut run = scenario.start(mode == "async", Clock::virtual_clock(), true)?;
    run.keep_rows = true;
    if let Err(e) = run.run_to_end() {
        return Err(CliError::Failed(format!("query failed: {e}")));
    }
    let header = TraceHeader {
        scenario: name,
        mode: mode.to_string(),
        behaviour: scenario.behaviour.label().to_string(),
        nodes: pgasync::session::node_labels(&run.explain()),
        connections: run.es.conns.iter().map(|c| c.server.clone()).collect(),
        total_ms: run.elapsed_ns() as f64 / 1e6,
    };
    let events = &run.es.trace.events;
    let opts = ExplainOptions { verbose: true, counters: true };
    let text = match format {
        "json" => trace_json(&header, events),
        "csv" => trace_csv(&header, events),
        "svg" => timeline_svg(&header, events),
        "explain-text" => run.explain_text_with(&opts),
        _ => explain_json_text(&run.explain(), &opts, 0, run.execution_ns()),
    };
    match a.get("out") {
        Some(path) => std::fs::write(path, text).map_err(|e| CliError::Failed(format!("--out {path}: {e}")))?,
        None => print!("{text}"),
    }
    Ok(())
}
