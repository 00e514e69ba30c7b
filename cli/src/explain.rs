//! `pgasync explain`: runs one scenario and prints EXPLAIN ANALYZE and the result.

use crate::args::Args;
use crate::CliError;
use pgasync::clock::Clock;
use pgasync::scenario::Scenario;

pub fn run(argv: &[String]) -> Result<(), CliError> {
    let a = Args::parse(
        argv,
        &["scenario", "mode", "fetch-size", "shards", "rows", "rtt-ms", "bandwidth-mbps", "sharing", "format"],
    )?;
    let id = a.get("scenario").ok_or_else(|| "explain needs --scenario".to_string())?;
    let mode = a.choice("mode", &["sync", "async"], "async")?;
    let format = a.choice("format", &["text", "json"], "text")?;
    let knobs = crate::knobs_from(&a)?;
    let scenario = Scenario::build(id, &knobs)?;
    let mut run = scenario.start(mode == "async", Clock::virtual_clock(), false)?;
    run.keep_rows = true;
    let outcome = run.run_to_end();
    if format == "json" {
        println!("{}", serde_json::to_string_pretty(&run.explain_json()).unwrap());
    } else {
        print!("{}", run.explain_text());
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
    }
    Ok(())
}
