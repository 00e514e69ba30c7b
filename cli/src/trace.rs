//! `pgasync trace`: runs a built-in scenario (`--scenario`) or a scenario file
//! (`--file`) on the simulator and writes what the page exports: the trace as JSON or
//! CSV, EXPLAIN ANALYZE as text or JSON, or the timeline as SVG (`pgasync::demo::export`),
//! to stdout or `--out FILE`.
//!
//! Invariants:
//! - The bytes are the page's: both run `demo::export::ExportJob`, with the same
//!   scenario and knobs, on the virtual clock, so a file from the page's Export… menu
//!   and this command's output are equal.
//! - Exactly one of `--scenario` and `--file`; a bad flag value is a usage error (exit
//!   2), a query that fails is exit 1, and nothing is written then.
//! - A scenario file's default mode is its own `enable_async_append`, a built-in
//!   scenario's is async.
//!
//! PostgreSQL has no counterpart: the trace is the sandbox's (`trace`).

use crate::args::{self, AllKnobs};
use crate::CliError;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::demo::export::{ExportJob, Format};
use pgasync::knobs::Source;
use pgasync::scenario::Scenario;

pub const ABOUT_LINE: &str = "Writes a run's trace (JSON, CSV), timeline (SVG) or EXPLAIN, as the page exports them";
pub const USAGE: &str = "pgasync trace (--scenario ID | --file F) [--mode sync|async] [--out FILE] [KNOBS]
              [--format json|csv|svg|explain-text|explain-json]";
pub const ABOUT: &str = "runs on the simulator and writes the trace (JSON, CSV), the timeline (SVG) or EXPLAIN";

/// `pgasync trace`'s flags.
#[derive(clap::Args, Default)]
pub struct Flags {
    /// A built-in scenario: A B C D E F G pf1 M t0 pl pf0 R H K X (this or --file)
    #[arg(long, value_name = "ID")]
    pub scenario: Option<String>,
    /// A scenario file (this or --scenario)
    #[arg(long, value_name = "F")]
    pub file: Option<String>,
    /// Append's mode [default: async; a file's: its enable_async_append]
    #[arg(long, value_name = "sync|async")]
    pub mode: Option<String>,
    /// What to write [default: json]
    #[arg(long, value_name = "json|csv|svg|explain-text|explain-json")]
    pub format: Option<String>,
    /// Writes to FILE [default: stdout]
    #[arg(long, value_name = "FILE")]
    pub out: Option<String>,
    /// Knobs from a JSON file (`pgasync calibrate` writes one); flags override it
    #[arg(long, value_name = "FILE")]
    pub profile: Option<String>,
    #[command(flatten)]
    pub knobs: AllKnobs,
}

pub fn run(a: Flags) -> Result<(), CliError> {
    let format =
        args::choice("format", a.format.as_deref(), &["json", "csv", "svg", "explain-text", "explain-json"], "json")?;
    let knobs = crate::knobs_with_profile(&a.knobs, a.profile.as_deref())?;
    let (scenario, name, default_async) = match (a.scenario.as_deref(), a.file.as_deref()) {
        (Some(id), None) => (Scenario::build_from(id, &knobs, Source::Cli)?, id.to_string(), true),
        (None, Some(file)) => {
            let text = crate::input::read_text(file, "a scenario file", crate::input::SCRIPT_BYTES)
                .map_err(|e| CliError::Usage(format!("{file}: {e}")))?;
            let at = |e: pgasync::coordinator_sql::FrontError| {
                CliError::Failed(format!("{file}:{}:{}: {}", e.line, e.column, e.message))
            };
            let sql = SqlScenario::load(&text).map_err(at)?;
            (sql.scenario(&knobs, Source::Cli).map_err(at)?, file.to_string(), sql.async_append())
        }
        _ => return Err(CliError::Usage("trace needs --scenario ID or --file F (one of them)".into())),
    };
    let mode =
        args::choice("mode", a.mode.as_deref(), &["sync", "async"], if default_async { "async" } else { "sync" })?;
    // The page's Export menu runs the same job (`pgasync::demo::export`): the same bytes.
    let job = ExportJob::new(&scenario, &name, mode == "async", Format::parse(format).map_err(CliError::Usage)?)?;
    let text = job.finish().map_err(CliError::Failed)?;
    match a.out.as_deref() {
        Some(path) => std::fs::write(path, text).map_err(|e| CliError::Failed(format!("--out {path}: {e}")))?,
        None => print!("{text}"),
    }
    Ok(())
}
