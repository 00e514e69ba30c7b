//! The `pgasync` command: argument parsing only; the work is in the modules.

mod args;
mod bench;
mod explain;
mod serve;

use std::process::ExitCode;

const USAGE: &str = "usage:
  pgasync explain --scenario ID [--mode sync|async] [--fetch-size N] [--shards N] [--rows N]
                  [--rtt-ms X] [--bandwidth-mbps X] [--sharing dedicated|shared|pipelined] [--format text|json]
  pgasync bench [--clock virtual|real] [--scenarios A,B,...] [--shards N] [--fetch-size N] [--rows N]
                [--rtt-ms X] [--format table|tsv]
  pgasync serve [--port 8080] [--bind 127.0.0.1] [--web web] [--pkg pkg]
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
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest = &argv[1..];
    let result = match cmd.as_str() {
        "explain" => explain::run(rest),
        "bench" => bench::run(rest),
        "serve" => serve::run(rest),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
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

/// The knobs shared by explain and bench.
pub fn knobs_from(a: &args::Args) -> Result<pgasync::scenario::Knobs, String> {
    Ok(pgasync::scenario::Knobs {
        shards: a.num("shards")?,
        rows_per_shard: a.num("rows")?,
        fetch_size: a.num("fetch-size")?,
        rtt_ms: a.num("rtt-ms")?,
        bandwidth_mbps: a.num("bandwidth-mbps")?,
        sharing: a.get("sharing").map(pgasync::scenario::Sharing::parse).transpose()?,
        ..Default::default()
    })
}
