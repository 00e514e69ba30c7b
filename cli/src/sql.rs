//! `pgasync sql --file F`: runs a scenario file (SQL for the coordinator and the
//! shards, then the query; see `pgasync::frontend::script`) in the simulator and
//! prints the setup's statements, EXPLAIN ANALYZE and the rows.
//!
//! `--mode` defaults to what the file's settings say (`enable_async_append`, on by
//! default in PostgreSQL); `--behaviour` and the other knobs override the file's
//! `-- @knobs`. Errors print as `FILE:LINE:COLUMN: message`.

use crate::args::Args;
use crate::CliError;
use pgasync::clock::Clock;
use pgasync::frontend::SqlScenario;
use pgasync::instrument::ExplainOptions;
use pgasync::knobs::{Source, SPECS};

pub fn run(argv: &[String]) -> Result<(), CliError> {
    let flags: Vec<&str> =
        ["file", "mode", "format", "counters", "rows", "log"].into_iter().chain(SPECS.iter().map(|s| s.cli)).collect();
    let a = Args::parse(argv, &flags)?;
    let file = a.get("file").ok_or_else(|| "sql needs --file F (a scenario file)".to_string())?;
    let format = a.choice("format", &["text", "json"], "text")?;
    let counters = a.choice("counters", &["on", "off"], "off")? == "on";
    let max_rows: usize = match a.get("rows") {
        Some(v) => v.parse().map_err(|_| format!("--rows {v}: not a number"))?,
        None => 20,
    };
    let text = std::fs::read_to_string(file).map_err(|e| CliError::Usage(format!("{file}: {e}")))?;
    let at = |e: pgasync::frontend::FrontError| {
        CliError::Failed(if e.line > 0 {
            format!("{file}:{}:{}: {}", e.line, e.column, e.message)
        } else {
            format!("{file}: {}", e.message)
        })
    };
    let sql = SqlScenario::load(&text).map_err(at)?;
    if a.choice("log", &["on", "off"], "on")? == "on" {
        for line in &sql.log {
            eprintln!("{line}");
        }
    }
    let knobs = crate::knobs_with_profile(&a)?;
    let scenario = sql.scenario(&knobs, Source::Cli).map_err(at)?;
    let default_mode = if sql.async_append() { "async" } else { "sync" };
    let mode = a.choice("mode", &["sync", "async"], default_mode)?;
    let mut run = scenario.start(mode == "async", Clock::virtual_clock(), false)?;
    run.keep_rows = true;
    let outcome = run.run_to_end();
    // An EXPLAIN query says how to print it (VERBOSE, FORMAT JSON); a plain SELECT
    // prints as EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) and the rows.
    let written = sql.query.as_ref().and_then(|q| q.explain);
    let verbose = written.map_or(true, |e| e.verbose);
    let format = if written.is_some_and(|e| e.json) && a.get("format").is_none() { "json" } else { format };
    let opts = ExplainOptions { verbose, counters };
    if format == "json" {
        // PostgreSQL's key order and layout.
        println!("{}", pgasync::instrument::explain_json_text(&run.explain(), &opts, 0, run.execution_ns()));
    } else {
        print!("{}", run.explain_text_with(&opts));
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
            "({} rows{}; {mode}, virtual clock, {:.3} ms)",
            run.rows.len(),
            if run.rows.len() > max_rows { ", first shown" } else { "" },
            run.elapsed_ns() as f64 / 1e6
        );
    }
    Ok(())
}
