//! The `pgasync` command: the command line (clap, derived: `Cli`, a `Flags` struct per
//! command in its module, the knob flags from the knob table in `args`), `pgasync --help`'s
//! overview, shell completions, and the exit codes (2 for bad arguments, 1 for a failed
//! query); the work is in the modules.
//!
//! Invariants:
//! - Exit 0 for success and for help, 2 for bad arguments (and for no arguments: the
//!   overview goes to stderr), 1 for a failed run. A `String` error converts to
//!   `CliError::Usage`, so a module must say `CliError::Failed` for a run that failed.
//! - A knob flag given explicitly overrides the `--profile` file's value; knobs not
//!   given keep the profile's (`knobs_with_profile`).
//! - A closed stdout (`pgasync bench | head`) ends the process quietly (SIGPIPE's
//!   default action), not with a panic.
//!
//! PostgreSQL has no counterpart: `pgasync` is the sandbox's own tool.

mod args;
mod bench;
mod bench_designs;
mod calibrate;
mod config;
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

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

/// The command line: a subcommand each, its flags derived in its module (`Flags`), the
/// knob flags added from `pgasync::knobs::SPECS` (`args::KnobFlags`). Each command's
/// synopsis (`USAGE`) and description (`ABOUT`) live in its module, shown by its own
/// `--help` and, together, by `pgasync --help`.
#[derive(Parser)]
#[command(
    name = "pgasync",
    about = "A sandbox for PostgreSQL-style asynchronous query execution (Append/MergeAppend over remote shards)",
    after_help = "`pgasync help CMD` or `pgasync CMD --help` lists a command's flags with their ranges and \
                  defaults; `pgasync --help` adds every command's synopsis and the knobs.\n\
                  Bad arguments exit with 2, a failed query with 1.",
    disable_version_flag = true
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    #[command(about = explain::ABOUT_LINE, long_about = explain::ABOUT)]
    Explain(explain::Flags),
    #[command(about = bench::ABOUT_LINE, long_about = bench::ABOUT)]
    Bench(bench::Flags),
    #[command(about = sql::ABOUT_LINE, long_about = sql::ABOUT)]
    Sql(sql::Flags),
    #[command(about = trace::ABOUT_LINE, long_about = trace::ABOUT)]
    Trace(trace::Flags),
    #[command(about = calibrate::ABOUT_LINE, long_about = calibrate::ABOUT)]
    Calibrate(calibrate::Flags),
    #[command(about = serve::ABOUT_LINE, long_about = serve::ABOUT)]
    Serve(serve::Flags),
    #[command(about = demo::ABOUT_LINE, long_about = demo::ABOUT)]
    Demo(demo::Flags),
    #[command(about = relay::ABOUT_LINE, long_about = relay::ABOUT)]
    Relay(relay::Flags),
    /// Prints a shell completion script for pgasync on stdout
    #[command(
        override_usage = "pgasync completions bash|zsh|fish|elvish|powershell",
        long_about = "Prints a shell completion script for pgasync on stdout, e.g.\n  \
                      pgasync completions bash > /etc/bash_completion.d/pgasync\n  \
                      pgasync completions zsh > \"${fpath[1]}/_pgasync\"\n  \
                      pgasync completions fish > ~/.config/fish/completions/pgasync.fish"
    )]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// Every command's synopsis and description, in the order of `Cmd`: `pgasync --help`.
const COMMANDS: [(&str, &str, &str); 8] = [
    ("explain", explain::USAGE, explain::ABOUT),
    ("bench", bench::USAGE, bench::ABOUT),
    ("sql", sql::USAGE, sql::ABOUT),
    ("trace", trace::USAGE, trace::ABOUT),
    ("calibrate", calibrate::USAGE, calibrate::ABOUT),
    ("serve", serve::USAGE, serve::ABOUT),
    ("demo", demo::USAGE, demo::ABOUT),
    ("relay", relay::USAGE, relay::ABOUT),
];

/// A synopsis as clap prints it after "Usage: ": each further `pgasync` line under the
/// first, continuation lines as far right again.
fn clap_usage(usage: &str) -> String {
    let mut lines = usage.lines();
    let mut out = lines.next().unwrap_or("").to_string();
    for line in lines {
        let pad = if line.starts_with("pgasync") { 7 } else { 5 };
        out += &format!("\n{}{line}", " ".repeat(pad));
    }
    out
}

/// The whole command, with `pgasync --help`'s synopses and knobs.
fn command() -> clap::Command {
    let mut synopses = String::from("Synopses:\n");
    for (_, usage, about) in COMMANDS {
        for line in usage.lines() {
            synopses += &format!("  {line}\n");
        }
        for line in about.lines() {
            synopses += &format!("      {line}\n");
        }
    }
    synopses += "  pgasync completions bash|zsh|fish\n      prints a shell completion script\n";
    synopses += "scenarios: A B C D E F G pf1 M t0 pl pf0 R H K X (see SCENARIOS.md)\n\n";
    // Every value may start with `-` (`--rtt-ms -1` is out of range, said by the knobs'
    // checks), as a flag's value is always the next word.
    let hyphens = |a: clap::Arg| if a.get_action().takes_values() { a.allow_hyphen_values(true) } else { a };
    let mut cmd = Cli::command().after_long_help(synopses + &knob_usage()).mut_subcommands(|c| c.mut_args(hyphens));
    for (name, usage, _) in COMMANDS {
        cmd = cmd.mut_subcommand(name, |c| c.override_usage(clap_usage(usage)));
    }
    cmd
}

/// `pgasync --help`: the commands, every synopsis and the knobs, as laid out (not
/// wrapped to the terminal: a knob's line stays one line, for grep).
fn overview() -> String {
    command().term_width(0).render_long_help().to_string()
}

fn main() -> ExitCode {
    // Exit quietly when the reader of our output goes away (`pgasync bench | head`),
    // as Unix tools do, instead of panicking on the failed write.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match argv.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => {
            eprint!("{}", overview());
            return ExitCode::from(2);
        }
        ["--help"] | ["help"] => {
            print!("{}", overview());
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    let parsed = command()
        .try_get_matches_from(std::iter::once("pgasync".to_string()).chain(argv.iter().cloned()))
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("pgasync: {}", args::usage_error(&e, &argv));
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Cmd::Explain(f) => explain::run(f),
        Cmd::Bench(f) => bench::run(f),
        Cmd::Serve(f) => serve::run(f),
        Cmd::Demo(f) => demo::run(f),
        Cmd::Relay(f) => relay::run(f),
        Cmd::Calibrate(f) => calibrate::run(f),
        Cmd::Sql(f) => sql::run(f),
        Cmd::Trace(f) => trace::run(f),
        Cmd::Completions { shell } => {
            clap_complete::generate(shell, &mut command(), "pgasync", &mut std::io::stdout());
            Ok(())
        }
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

/// The knob flags given, each checked by `pgasync::knobs` (the page and the wasm API
/// use the same checks).
pub fn knobs_from<const OL: bool>(flags: &args::KnobFlags<OL>) -> Result<pgasync::knobs::Knobs, String> {
    use pgasync::knobs::{set_text, Source};
    let mut k = pgasync::knobs::Knobs::default();
    for (spec, v) in flags.given() {
        set_text(&mut k, Source::Cli, spec.cli, v)?;
    }
    Ok(k)
}

/// A knobs profile (JSON, as `pgasync calibrate` writes it), checked as the wasm API's
/// knobs object is.
pub fn read_profile(path: &str) -> Result<pgasync::knobs::Knobs, CliError> {
    let text = input::read_text(path, "a knobs profile", input::CONFIG_BYTES)
        .map_err(|e| CliError::Usage(format!("--profile {path}: {e}")))?;
    pgasync::knobs::from_json(&text).map_err(|e| CliError::Usage(format!("--profile {path}: {e}")))
}

/// The knobs of `knobs_from`, on top of `--profile FILE` when given: a flag given
/// explicitly overrides the profile's value.
pub fn knobs_with_profile<const OL: bool>(
    flags: &args::KnobFlags<OL>,
    profile: Option<&str>,
) -> Result<pgasync::knobs::Knobs, CliError> {
    let explicit = knobs_from(flags)?;
    let Some(path) = profile else { return Ok(explicit) };
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

/// The knob flags for `pgasync --help`, from `pgasync::knobs::SPECS` as each command's
/// help shows them (`args::knob_help`'s parts).
fn knob_usage() -> String {
    use pgasync::knobs::{Kind, SPECS};
    let mut out = String::from(
        "KNOBS (explain, sql, trace; bench all but --offset/--limit): the scenario's default when not given;\n\
         \x20 numbers are plain decimal: no 0x, +, NaN or inf; integers take no exponent:\n",
    );
    let pg15 = pgasync::knobs::Knobs::default().resolve_behaviour().label();
    let mut behaviour = format!(
        "behaviour knobs (default {pg15}: exactly what PostgreSQL 15 does; each flag applies on top of\n\
         \x20 the --behaviour preset; --NAME alone means on, --NAME=off off):\n"
    );
    for s in SPECS {
        if s.kind == Kind::Switch {
            behaviour += &format!("  --{}[=on|off]\n      {}\n", s.cli, args::switch_what(s));
            continue;
        }
        let flag = format!("--{} {}", s.cli, args::knob_value_name(s.kind));
        out += &format!("  {flag:<34} {}{}\n", s.help, args::knob_range(s.kind));
    }
    out + &behaviour + "bad arguments exit with 2, a failed query with 1"
}
