//! The command line's glue to clap. It owns:
//!
//! * the knob flags (`KnobFlags`), added to a derived command at run time from
//!   `pgasync::knobs::SPECS`, each flag's help showing the knob's range and default as
//!   the table gives them (written there once). clap only collects the text: the
//!   values are checked by `pgasync::knobs`, as the page's URL and the wasm API are;
//! * clap's errors as the CLI's one-line messages (`usage_error`): exit 2, the flag or
//!   command named, and clap's suggestion for a misspelt one;
//! * the checks of other flags' values, which clap also takes as text: plain decimal
//!   integers (`num`, `int`) and choices (`choice`), with messages naming the flag.
//!
//! The behaviour knobs are switches: `--fetch-ahead` alone means on, and
//! `--fetch-ahead=off` is explicit (a value only after `=`). Every other flag takes
//! its value as the next word or after `=`; a flag given twice is an error.
//!
//! Invariants:
//! - A knob's range, default and help text are read from `pgasync::knobs::SPECS` and
//!   written nowhere here, and its value is checked only by `pgasync::knobs`: the CLI,
//!   the page's URL and the wasm API cannot disagree about a knob.
//! - Every argument error is one line naming the flag or command (exit 2, `main`); a
//!   misspelt one gets clap's suggestion.
//! - Numbers are plain decimal (no `0x`, `+`, `NaN`, `inf`), the knobs' own rule
//!   (`knobs::parse_int`), for every flag.
//!
//! PostgreSQL has no counterpart: its programs parse options with `getopt_long`.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgMatches, Command};
use pgasync::knobs::{self, Kind, KnobSpec, Source, SPECS};

/// The knob flags of a command: every knob of `SPECS` (`OFFSET_LIMIT` false: all but
/// scenario M's `--offset` and `--limit`, which bench's series picks itself), as
/// given, in the table's order.
#[derive(Clone, Default)]
pub struct KnobFlags<const OFFSET_LIMIT: bool> {
    values: Vec<(&'static KnobSpec, String)>,
}

/// The knob flags of explain, sql and trace.
pub type AllKnobs = KnobFlags<true>;
/// The knob flags of bench.
pub type BenchKnobs = KnobFlags<false>;

impl<const OFFSET_LIMIT: bool> KnobFlags<OFFSET_LIMIT> {
    fn specs() -> impl Iterator<Item = &'static KnobSpec> {
        SPECS.iter().filter(|s| OFFSET_LIMIT || !matches!(s.cli, "offset" | "limit"))
    }

    /// The text given for the knob whose flag is `--cli`.
    pub fn get(&self, cli: &str) -> Option<&str> {
        self.values.iter().find(|(s, _)| s.cli == cli).map(|(_, v)| v.as_str())
    }

    /// Every knob given: its spec and text.
    pub fn given(&self) -> impl Iterator<Item = (&'static KnobSpec, &str)> {
        self.values.iter().map(|(s, v)| (*s, v.as_str()))
    }
}

impl<const OFFSET_LIMIT: bool> clap::FromArgMatches for KnobFlags<OFFSET_LIMIT> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let values =
            Self::specs().filter_map(|s| m.get_one::<String>(s.cli).map(|v| (s, v.clone()))).collect::<Vec<_>>();
        Ok(KnobFlags { values })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl<const OFFSET_LIMIT: bool> clap::Args for KnobFlags<OFFSET_LIMIT> {
    fn augment_args(cmd: Command) -> Command {
        let cmd = cmd.next_help_heading("Knobs (numbers are plain decimal: no 0x, +, NaN or inf)");
        let cmd = cmd.args(Self::specs().filter(|s| s.kind != Kind::Switch).map(knob_arg));
        let cmd = cmd.next_help_heading(
            "Behaviour knobs (each on top of the --behaviour preset; --NAME alone means on, --NAME=off off)",
        );
        cmd.args(Self::specs().filter(|s| s.kind == Kind::Switch).map(knob_arg)).next_help_heading(None)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

/// A knob's flag: text collected as given (negative numbers too: `--rtt-ms -1` is out
/// of range, said by `pgasync::knobs`), a switch's value only after `=`.
fn knob_arg(s: &'static KnobSpec) -> Arg {
    let arg = Arg::new(s.cli).long(s.cli).help(knob_help(s));
    match s.kind {
        Kind::Switch => arg.num_args(0..=1).require_equals(true).default_missing_value("on").value_name("on|off"),
        _ => arg.num_args(1).allow_hyphen_values(true).value_name(knob_value_name(s.kind)),
    }
}

/// What a knob's value looks like: `N`, `X`, `X,X,...`, `dedicated|shared`.
pub fn knob_value_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Int { .. } => "N",
        Kind::Float { .. } => "X",
        Kind::FloatList { .. } => "X,X,...",
        Kind::Sharing => "dedicated|shared",
        Kind::Preset => "pg15|improved",
        Kind::Switch => "on|off",
    }
}

/// A knob's range from the table: ` (1 to 64)`, ` (each 0 to 10000)`, or nothing.
pub fn knob_range(kind: Kind) -> String {
    match kind {
        Kind::Int { lo, hi } => format!(" ({lo} to {hi})"),
        Kind::Float { lo, hi } => format!(" ({lo} to {hi})"),
        Kind::FloatList { lo, hi } => format!(" (each {lo} to {hi})"),
        _ => String::new(),
    }
}

/// A knob's default when its flag is not given: the behaviour knobs' from the default
/// preset (PostgreSQL 15's), the others the scenario's (`pgasync::scenario`).
pub fn knob_default(s: &KnobSpec) -> String {
    let pg15 = pgasync::knobs::Knobs::default().resolve_behaviour();
    match s.kind {
        Kind::Switch => {
            let on = pg15.differences().iter().any(|k| k.name == s.name);
            format!("{} ({})", if on { "on" } else { "off" }, pg15.label())
        }
        Kind::Preset => pg15.label().to_string(),
        Kind::FloatList { .. } => "--rtt-ms for every shard".into(),
        _ if s.name == "shards" => scenario_default(|i| i.default_shards),
        _ if s.name == "rows_per_shard" => scenario_default(|i| i.default_rows),
        _ => pgasync::knobs::default_text(s.name).unwrap_or_else(|| "the scenario's".into()),
    }
}

/// A default of `pgasync::scenario::SCENARIOS`: `4`, or `4; C 1, X 1` when some differ.
fn scenario_default(of: impl Fn(&pgasync::scenario::ScenarioInfo) -> usize) -> String {
    let all = pgasync::scenario::SCENARIOS;
    let most = all.iter().map(&of).max_by_key(|v| all.iter().filter(|i| of(i) == *v).count()).unwrap_or(0);
    let others: Vec<String> = all.iter().filter(|i| of(i) != most).map(|i| format!("{} {}", i.id, of(i))).collect();
    if others.is_empty() {
        most.to_string()
    } else {
        format!("{most}; {}", others.join(", "))
    }
}

/// What a behaviour knob changes: the first clause of `pgasync::behaviour::KNOBS`'s reason.
pub fn switch_what(s: &KnobSpec) -> &'static str {
    let reason = pgasync::behaviour::KNOBS.iter().find(|k| k.name == s.name).map_or("", |k| k.reason);
    reason.split(';').next().unwrap_or(reason)
}

/// A knob flag's help: what it is, its range and its default, from the table.
pub fn knob_help(s: &KnobSpec) -> String {
    let what = if s.kind == Kind::Switch { switch_what(s) } else { s.help };
    format!("{what}{} [default: {}]", knob_range(s.kind), knob_default(s))
}

fn text(v: Option<&ContextValue>) -> Option<String> {
    match v? {
        ContextValue::String(s) => Some(s.clone()),
        ContextValue::Strings(v) => v.first().cloned(),
        _ => None,
    }
}

/// `--shards <N>`, `--fetch-ahead[=<on|off>]` → `--shards`, `--fetch-ahead`.
fn flag_of(rendered: &str) -> &str {
    rendered.split([' ', '=', '[', '<']).next().unwrap_or(rendered)
}

/// The one-line message for a clap error (`unknown option --fetch-szie (a similar
/// argument exists: '--fetch-size')`, `--shards is given twice`); `argv` is the
/// command line after the program's name.
pub fn usage_error(e: &clap::Error, argv: &[String]) -> String {
    let command = argv.first().filter(|c| !c.starts_with('-')).map_or("", String::as_str);
    let arg = text(e.get(ContextKind::InvalidArg)).unwrap_or_default();
    match e.kind() {
        ErrorKind::InvalidSubcommand => {
            let name = text(e.get(ContextKind::InvalidSubcommand)).unwrap_or_default();
            match text(e.get(ContextKind::SuggestedSubcommand)) {
                Some(s) => format!("unknown command \"{name}\" (a similar command exists: '{s}')"),
                None => format!("unknown command \"{name}\" (see pgasync --help)"),
            }
        }
        ErrorKind::UnknownArgument if arg.starts_with('-') => {
            let name = flag_of(&arg);
            match text(e.get(ContextKind::SuggestedArg)) {
                Some(s) => format!("unknown option {name} (a similar argument exists: '{s}')"),
                None => format!("unknown option {name} (see pgasync {command} --help)"),
            }
        }
        ErrorKind::UnknownArgument => {
            // A word where no value is taken: after a switch, its value goes after `=`.
            let before = argv.iter().position(|a| *a == arg).and_then(|i| i.checked_sub(1)).map(|i| &argv[i]);
            let switch = before
                .and_then(|b| b.strip_prefix("--"))
                .filter(|b| knobs::spec(Source::Cli, b).is_some_and(|s| s.kind == Kind::Switch));
            match switch {
                Some(sw) => format!("unexpected argument \"{arg}\" (a switch takes its value after =: --{sw}={arg})"),
                None => format!("unexpected argument \"{arg}\""),
            }
        }
        ErrorKind::ArgumentConflict if text(e.get(ContextKind::PriorArg)).is_some_and(|p| p == arg) => {
            format!("{} is given twice", flag_of(&arg))
        }
        ErrorKind::InvalidValue if text(e.get(ContextKind::InvalidValue)).is_some_and(|v| v.is_empty()) => {
            format!("{} needs a value", flag_of(&arg))
        }
        ErrorKind::InvalidValue => {
            let value = text(e.get(ContextKind::InvalidValue)).unwrap_or_default();
            let valid = match e.get(ContextKind::ValidValue) {
                Some(ContextValue::Strings(v)) => format!(": not one of {}", v.join(", ")),
                _ => String::new(),
            };
            // A flag's value, or a command's argument (`completions tcsh`).
            let name = if arg.starts_with('-') { flag_of(&arg) } else { command };
            format!("{name} {value}{valid}")
        }
        ErrorKind::MissingRequiredArgument => {
            let missing = match e.get(ContextKind::InvalidArg) {
                Some(ContextValue::Strings(v)) => v.join(", "),
                _ => arg,
            };
            format!("{} needs {missing}", if command.is_empty() { "pgasync" } else { command })
        }
        _ => {
            // clap's own message, up to its usage lines, on one line.
            let full = e.to_string();
            let body = full.split("\n\nUsage:").next().unwrap_or(&full).split("\n\nFor more").next().unwrap_or("");
            let line: Vec<&str> = body.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            line.join(" ").trim_start_matches("error: ").to_string()
        }
    }
}

/// A plain decimal integer (no sign, `0x`, exponent or spaces) that fits in `T`.
pub fn num<T: std::str::FromStr>(name: &str, v: Option<&str>) -> Result<Option<T>, String> {
    match v {
        None => Ok(None),
        Some(v) => knobs::parse_int(v)
            .ok()
            .and_then(|_| v.parse().ok())
            .map(Some)
            .ok_or_else(|| format!("--{name} {v}: not a decimal integer in range")),
    }
}

/// A plain decimal integer from `lo` to `hi`.
pub fn int(name: &str, v: Option<&str>, lo: u64, hi: u64) -> Result<Option<u64>, String> {
    match v {
        None => Ok(None),
        Some(v) => match knobs::parse_int(v) {
            Err(why) => Err(format!("--{name} {v}: {why}")),
            Ok(n) if n < lo || n > hi => Err(format!("--{name} {v}: out of range ({lo} to {hi})")),
            Ok(n) => Ok(Some(n)),
        },
    }
}

/// One of `options`, `default` when not given.
pub fn choice<'a>(name: &str, v: Option<&'a str>, options: &[&'a str], default: &'a str) -> Result<&'a str, String> {
    let v = v.unwrap_or(default);
    if options.contains(&v) {
        Ok(v)
    } else {
        Err(format!("--{name} {v}: not one of {}", options.join(", ")))
    }
}
