//! `pgasync trace`: runs a built-in scenario (`--scenario`) or a scenario file
//! (`--file`) on the simulator and writes what the page exports: the trace as JSON or
//! CSV, EXPLAIN ANALYZE as text or JSON, or the timeline as SVG (`pgasync::export`),
//! to stdout or `--out FILE`.

use crate::args::Args;
use crate::CliError;
use pgasync::export::{ExportJob, Format};
use pgasync::frontend::SqlScenario;
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
            let text = crate::input::read_text(file, "a scenario file", crate::input::SCRIPT_BYTES)
                .map_err(|e| CliError::Usage(format!("{file}: {e}")))?;
            let at = |e: pgasync::frontend::FrontError| {
                CliError::Failed(format!("{file}:{}:{}: {}", e.line, e.column, e.message))
            };
            let sql = SqlScenario::load(&text).map_err(at)?;
            (sql.scenario(&knobs, Source::Cli).map_err(at)?, file.to_string(), sql.async_append())
        }
        _ => return Err(CliError::Usage("trace needs --scenario ID or --file F (one of them)".into())),
    };
    let mode = a.choice("mode", &["sync", "async"], if default_async { "async" } else { "sync" })?;
    // The page's Export menu runs the same job (`pgasync::export`): the same bytes.
    let job = ExportJob::new(&scenario, &name, mode == "async", Format::parse(format).map_err(CliError::Usage)?)?;
    let text = job.finish().map_err(CliError::Failed)?;
    match a.get("out") {
        Some(path) => std::fs::write(path, text).map_err(|e| CliError::Failed(format!("--out {path}: {e}")))?,
        None => print!("{text}"),
    }
    Ok(())
}
