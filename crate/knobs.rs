//! Knob validation in one place. The CLI's flags (`--fetch-size 100`), the wasm API's
//! knobs object (`{"fetch_size": "100"}`) and the page's URL (`?fetch=100`) all go
//! through this module:
//!
//! * `SPECS` names every knob in each of the three spellings, with its kind and range;
//! * `set_text` / `set_json` parse one value strictly: integers are plain decimal digits
//!   (`0x10`, `1e3`, `+5`, ` 5` are refused), numbers must be finite (`NaN`, `inf` are
//!   refused), every value is range-checked, unknown names are refused;
//! * `validate` checks a whole `Knobs` (also one built in Rust), including that a
//!   per-shard list has exactly one entry per shard. `Scenario::build_from` calls it.
//!
//! Every message names the knob as the caller spelled it (`--bandwidth-mbps NaN: not a
//! finite number`, `shards=0x10: not a decimal integer`), with the range when the value
//! is out of it.

//!
//! Invariants: this module owns `Knobs`, `Sharing`, the size limits and every default
//! (each written once: the CLI's help, the page's placeholders and `scenario::Settings`
//! read them from here); a value is parsed strictly once, where it enters, and a whole
//! `Knobs` is checked by `validate` (called by `scenario::Settings::resolve`, and by the
//! page's URL check before anything runs). It imports only `behaviour`, `sim` and `clock`
//! (for their cost defaults), none of which import it, so any module may read the
//! defaults without an import cycle.
//!
//! PostgreSQL has no counterpart: these are the sandbox's dials. The one knob named
//! after a PostgreSQL option, `fetch_size`, does what postgres_fdw's option does (a
//! server's own `OPTIONS (fetch_size …)` in a scenario file wins over it).

use crate::behaviour::{Behaviour, Preset};

/// Who gave the value: decides how a knob is named in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `pgasync --fetch-size 100`
    Cli,
    /// the page's URL, `?fetch=100`
    Url,
    /// the wasm API's knobs object, `{"fetch_size": 100}`; also Rust callers
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Int {
        lo: u64,
        hi: u64,
    },
    Float {
        lo: f64,
        hi: f64,
    },
    /// One number per shard, comma separated in text.
    FloatList {
        lo: f64,
        hi: f64,
    },
    Sharing,
    Preset,
    /// A behaviour knob: on or off.
    Switch,
}

pub struct KnobSpec {
    /// The `Knobs` field, and the key in the wasm API's knobs object.
    pub name: &'static str,
    /// The CLI flag, without `--`.
    pub cli: &'static str,
    /// The page's URL parameter (None: not a page setting).
    pub url: Option<&'static str>,
    pub kind: Kind,
    pub help: &'static str,
}

const RTT: (f64, f64) = (0.0, 10_000.0);

/// postgres_fdw's own default `fetch_size`, used where neither a knob nor a server's
/// options say otherwise.
pub const DEFAULT_FETCH_SIZE: usize = 100;
/// Rows per shard of every built-in scenario when the knobs do not say: small, so the
/// page steps through a run interactively; the page, `explain`, `trace` and `sql` share it.
pub const DEFAULT_ROWS: usize = 300;
/// The simulated network's round trip and bandwidth when the knobs do not say.
pub const DEFAULT_RTT_MS: f64 = 1.0;
pub const DEFAULT_BANDWIDTH_MBPS: f64 = 1000.0;
/// Scenario M's OFFSET and LIMIT (seed 003's query) when the knobs do not say.
pub const DEFAULT_OFFSET: u64 = 100;
pub const DEFAULT_LIMIT: u64 = 15;

/// The most rows a scenario may generate in all, so a knob typo fails with a message
/// instead of exhausting memory. Measured peak RSS of `pgasync explain` (release, 64-bit
/// Linux) at this cap (`--rows 4000000`): 3.6 GB for M, 2.75 GB for E and C, about 230
/// and 170 bytes a row in all. At the earlier cap of 20M, M peaked at 4.5 GB and E and C
/// at 3.4 GB: too much for "bounded".
pub const MAX_TOTAL_ROWS: usize = 16_000_000;

/// The most text a scenario file may have (the page refuses larger ones before
/// running anything).
pub const MAX_SCRIPT_BYTES: usize = 1 << 20;

/// How foreign tables map to servers (and so to connections). Whether several queries
/// may be in flight on a shared connection is the behaviour knob `pipeline`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sharing {
    /// One server (one connection) per shard.
    Dedicated,
    /// Every foreign table on one server: one shared connection.
    Shared,
}

impl Sharing {
    pub fn parse(s: &str) -> Result<Sharing, String> {
        match s {
            "dedicated" => Ok(Sharing::Dedicated),
            "shared" => Ok(Sharing::Shared),
            _ => Err(format!("unknown sharing \"{s}\" (expected dedicated or shared)")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Sharing::Dedicated => "dedicated",
            Sharing::Shared => "shared",
        }
    }
}

/// The knobs of a scenario. `None` means the scenario's own default.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Knobs {
    pub shards: Option<usize>,
    pub rows_per_shard: Option<usize>,
    pub fetch_size: Option<usize>,
    /// Round-trip time of every connection, in milliseconds.
    pub rtt_ms: Option<f64>,
    /// Per-shard round-trip times (overrides `rtt_ms` for the first shards).
    pub rtt_ms_per_shard: Option<Vec<f64>>,
    pub bandwidth_mbps: Option<f64>,
    pub sharing: Option<Sharing>,
    /// Server-side cost per row sent, in microseconds.
    pub server_row_us: Option<f64>,
    /// Server-side cost per statement (a FETCH, a Query, an extended-protocol cycle),
    /// in microseconds.
    pub server_query_us: Option<f64>,
    /// Server-side cost of accepting a connection (backend start and authentication,
    /// until ReadyForQuery), in milliseconds.
    pub connect_ms: Option<f64>,
    /// The coordinator's CPU per row fetched from a shard (the DataRow decoded and made
    /// a tuple: `CostModel::foreign_row_ns`), in microseconds.
    pub coordinator_row_us: Option<f64>,
    /// The coordinator's CPU per answer a scan reads (a FETCH's batch, a DECLARE's
    /// completion: the socket's wait, reads and parsing; `CostModel::message_ns`), in
    /// microseconds.
    pub coordinator_answer_us: Option<f64>,
    /// The coordinator's CPU per asynchronous request, beyond the synchronous path
    /// (`CostModel::async_request_ns`), in microseconds.
    pub coordinator_async_us: Option<f64>,
    /// Scenario M: OFFSET and LIMIT of the query.
    pub offset: Option<u64>,
    pub limit: Option<u64>,
    /// The behaviour preset (`pg15` when None) and per-knob overrides on top of it
    /// (see `behaviour::KNOBS`).
    pub behaviour: Option<Preset>,
    pub fetch_ahead: Option<bool>,
    pub pipelined_setup: Option<bool>,
    pub parallel_commit: Option<bool>,
    pub parallel_close: Option<bool>,
    pub pipeline: Option<bool>,
    pub fifo_results: Option<bool>,
    pub async_merge_append: Option<bool>,
    pub async_through_nodes: Option<bool>,
    pub no_descendant_check: Option<bool>,
}

impl Knobs {
    /// The behaviour of the run: the preset, then each knob given explicitly.
    pub fn resolve_behaviour(&self) -> Behaviour {
        let mut b = Behaviour::from_preset(self.behaviour.unwrap_or_default());
        let overrides = [
            (&mut b.fetch_ahead, self.fetch_ahead),
            (&mut b.pipelined_setup, self.pipelined_setup),
            (&mut b.parallel_commit, self.parallel_commit),
            (&mut b.parallel_close, self.parallel_close),
            (&mut b.pipeline, self.pipeline),
            (&mut b.fifo_results, self.fifo_results),
            (&mut b.async_merge_append, self.async_merge_append),
            (&mut b.async_through_nodes, self.async_through_nodes),
            (&mut b.no_descendant_check, self.no_descendant_check),
        ];
        for (field, v) in overrides {
            if let Some(v) = v {
                *field = v;
            }
        }
        b
    }
}

/// A number knob's default, as its flag's help shows it, read from where the default
/// is defined (the constants above, the simulator's and the coordinator's cost
/// defaults), so no default is written twice. `None` for knobs whose default depends
/// on the scenario (shards, rows, sharing) or is a preset's (the switches).
pub fn default_text(name: &str) -> Option<String> {
    let costs = crate::sim::ServerCosts::default();
    let model = crate::clock::CostModel::default();
    let us = |ns: u64| format!("{}", ns as f64 / 1000.0);
    Some(match name {
        "rows_per_shard" => DEFAULT_ROWS.to_string(),
        "fetch_size" => DEFAULT_FETCH_SIZE.to_string(),
        "rtt_ms" => DEFAULT_RTT_MS.to_string(),
        "bandwidth_mbps" => DEFAULT_BANDWIDTH_MBPS.to_string(),
        "offset" => DEFAULT_OFFSET.to_string(),
        "limit" => DEFAULT_LIMIT.to_string(),
        "server_row_us" => us(costs.server_row_ns),
        "server_query_us" => us(costs.server_query_ns),
        "connect_ms" => format!("{}", costs.connect_ns as f64 / 1e6),
        "coordinator_row_us" => us(model.foreign_row_ns),
        "coordinator_answer_us" => us(model.message_ns),
        "coordinator_async_us" => us(model.async_request_ns),
        _ => return None,
    })
}

/// Every knob. The behaviour switches follow `behaviour::KNOBS`, in its order.
pub const SPECS: &[KnobSpec] = &[
    KnobSpec {
        name: "shards",
        cli: "shards",
        url: Some("shards"),
        kind: Kind::Int { lo: 1, hi: 64 },
        help: "number of shards",
    },
    KnobSpec {
        name: "rows_per_shard",
        cli: "rows",
        url: Some("rows"),
        kind: Kind::Int { lo: 0, hi: 10_000_000 },
        help: "rows in each shard (bench: the seeds' sizes, 100,000, M 25,000)",
    },
    KnobSpec {
        name: "fetch_size",
        cli: "fetch-size",
        url: Some("fetch"),
        kind: Kind::Int { lo: 1, hi: 1_000_000 },
        help: "postgres_fdw fetch_size",
    },
    KnobSpec {
        name: "rtt_ms",
        cli: "rtt-ms",
        url: Some("rtt"),
        kind: Kind::Float { lo: RTT.0, hi: RTT.1 },
        help: "round-trip time of every connection, ms",
    },
    KnobSpec {
        name: "rtt_ms_per_shard",
        cli: "rtts",
        url: Some("rtts"),
        kind: Kind::FloatList { lo: RTT.0, hi: RTT.1 },
        help: "round-trip time of each shard, ms: exactly one per shard",
    },
    KnobSpec {
        name: "bandwidth_mbps",
        cli: "bandwidth-mbps",
        url: Some("bw"),
        kind: Kind::Float { lo: 0.001, hi: 1_000_000.0 },
        help: "link bandwidth, Mbit/s",
    },
    KnobSpec {
        name: "server_row_us",
        cli: "server-row-us",
        url: Some("row_us"),
        kind: Kind::Float { lo: 0.0, hi: 1_000_000.0 },
        help: "server cost per row sent, µs",
    },
    KnobSpec {
        name: "server_query_us",
        cli: "server-query-us",
        url: Some("query_us"),
        kind: Kind::Float { lo: 0.0, hi: 1_000_000.0 },
        help: "server cost per statement (a FETCH, a Query, a cycle up to Sync), µs",
    },
    KnobSpec {
        name: "connect_ms",
        cli: "connect-ms",
        url: Some("connect_ms"),
        kind: Kind::Float { lo: 0.0, hi: 10_000.0 },
        help: "server cost to accept a connection (backend start, authentication, until ReadyForQuery), ms",
    },
    KnobSpec {
        name: "coordinator_row_us",
        cli: "coordinator-row-us",
        url: Some("coord_row_us"),
        kind: Kind::Float { lo: 0.0, hi: 1_000_000.0 },
        help: "coordinator CPU per row fetched (a DataRow decoded and made a tuple), µs",
    },
    KnobSpec {
        name: "coordinator_answer_us",
        cli: "coordinator-answer-us",
        url: Some("coord_answer_us"),
        kind: Kind::Float { lo: 0.0, hi: 1_000_000.0 },
        help: "coordinator CPU per answer a scan reads (a FETCH's batch: socket wait, reads, parsing), µs",
    },
    KnobSpec {
        name: "coordinator_async_us",
        cli: "coordinator-async-us",
        url: Some("coord_async_us"),
        kind: Kind::Float { lo: 0.0, hi: 1_000_000.0 },
        help: "coordinator CPU per asynchronous request, beyond the synchronous path, µs",
    },
    KnobSpec {
        name: "offset",
        cli: "offset",
        url: Some("offset"),
        kind: Kind::Int { lo: 0, hi: 1_000_000 },
        help: "scenario M: OFFSET",
    },
    KnobSpec {
        name: "limit",
        cli: "limit",
        url: Some("limit"),
        kind: Kind::Int { lo: 1, hi: 1_000_000 },
        help: "scenario M: LIMIT",
    },
    KnobSpec {
        name: "sharing",
        cli: "sharing",
        url: Some("sharing"),
        kind: Kind::Sharing,
        help: "dedicated (a connection per shard) or shared (one connection)",
    },
    KnobSpec {
        name: "behaviour",
        cli: "behaviour",
        url: Some("behaviour"),
        kind: Kind::Preset,
        help: "pg15 (PostgreSQL 15, the default) or improved (every knob on)",
    },
    KnobSpec { name: "fetch_ahead", cli: "fetch-ahead", url: Some("fetch_ahead"), kind: Kind::Switch, help: "" },
    KnobSpec {
        name: "pipelined_setup",
        cli: "pipelined-setup",
        url: Some("pipelined_setup"),
        kind: Kind::Switch,
        help: "",
    },
    KnobSpec {
        name: "parallel_commit",
        cli: "parallel-commit",
        url: Some("parallel_commit"),
        kind: Kind::Switch,
        help: "",
    },
    KnobSpec {
        name: "parallel_close",
        cli: "parallel-close",
        url: Some("parallel_close"),
        kind: Kind::Switch,
        help: "",
    },
    KnobSpec { name: "pipeline", cli: "pipeline", url: Some("pipeline"), kind: Kind::Switch, help: "" },
    KnobSpec { name: "fifo_results", cli: "fifo-results", url: Some("fifo_results"), kind: Kind::Switch, help: "" },
    KnobSpec {
        name: "async_merge_append",
        cli: "async-merge-append",
        url: Some("async_merge_append"),
        kind: Kind::Switch,
        help: "",
    },
    KnobSpec {
        name: "async_through_nodes",
        cli: "async-through-nodes",
        url: Some("async_through_nodes"),
        kind: Kind::Switch,
        help: "",
    },
    KnobSpec {
        name: "no_descendant_check",
        cli: "no-descendant-check",
        url: Some("no_descendant_check"),
        kind: Kind::Switch,
        help: "",
    },
];

/// The page's own URL parameters besides the knobs.
pub const PAGE_PARAMS: &[&str] = &["scenario", "mode", "step", "sql"];

/// The longest `sql=` value a URL may carry: a scenario file of the largest accepted
/// size (`frontend::script::MAX_SCRIPT_BYTES`), deflated, in base64url (4 characters
/// per 3 bytes), even if it did not compress at all.
pub const MAX_SQL_PARAM: usize = MAX_SCRIPT_BYTES / 3 * 4 + 4096;

/// Most steps a URL may ask for (far more than any recordable run has).
pub const MAX_STEP: u64 = 100_000_000;

impl KnobSpec {
    /// The knob as `source` spells it: `--fetch-size`, `fetch`, `fetch_size`.
    pub fn named(&self, source: Source) -> String {
        match source {
            Source::Cli => format!("--{}", self.cli),
            Source::Url => self.url.unwrap_or(self.name).to_string(),
            Source::Json => self.name.to_string(),
        }
    }

    /// The knob and a value, as `source` would write them: `--shards 0`, `shards=0`.
    fn with_value(&self, source: Source, value: &str) -> String {
        match source {
            Source::Cli => format!("--{} {value}", self.cli),
            _ => format!("{}={value}", self.named(source)),
        }
    }

    fn range(&self) -> String {
        match self.kind {
            Kind::Int { lo, hi } => format!("{lo} to {hi}"),
            Kind::Float { lo, hi } | Kind::FloatList { lo, hi } => format!("{lo} to {hi}"),
            _ => String::new(),
        }
    }
}

/// The knob named `key` in `source`'s spelling.
pub fn spec(source: Source, key: &str) -> Option<&'static KnobSpec> {
    SPECS.iter().find(|s| match source {
        Source::Cli => s.cli == key,
        Source::Url => s.url == Some(key),
        Source::Json => s.name == key,
    })
}

fn known(source: Source) -> String {
    let names: Vec<String> =
        SPECS.iter().filter(|s| source != Source::Url || s.url.is_some()).map(|s| s.named(source)).collect();
    names.join(", ")
}

/// A plain decimal integer: digits only (no sign, spaces, `0x`, exponent).
pub fn parse_int(raw: &str) -> Result<u64, String> {
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err("not a decimal integer".into());
    }
    // Digits that do not fit in u64 are out of any range.
    Ok(raw.parse::<u64>().unwrap_or(u64::MAX))
}

/// A finite decimal number (`1`, `0.5`, `-2`, `.5`, `2.5e3`); `NaN`, `inf`, `+1`, ` 1`
/// and `0x10` are refused.
pub fn parse_float(raw: &str) -> Result<f64, String> {
    let body = raw.strip_prefix('-').unwrap_or(raw);
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "nan" | "inf" | "infinity") {
        return Err("not a finite number".into());
    }
    let ok = !body.is_empty()
        && body.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && (body.as_bytes()[0].is_ascii_digit() || body.as_bytes()[0] == b'.');
    match raw.parse::<f64>() {
        Ok(v) if ok && v.is_finite() => Ok(v),
        Ok(_) if ok => Err("not a finite number".into()),
        _ => Err("not a number".into()),
    }
}

fn parse_switch(raw: &str) -> Result<bool, String> {
    match raw {
        "1" | "on" | "true" => Ok(true),
        "0" | "off" | "false" => Ok(false),
        _ => Err("not on or off (1/0, on/off, true/false)".into()),
    }
}

fn check_int(spec: &KnobSpec, source: Source, raw: &str, v: u64) -> Result<u64, String> {
    match spec.kind {
        Kind::Int { lo, hi } if v < lo || v > hi => {
            Err(format!("{}: out of range ({})", spec.with_value(source, raw), spec.range()))
        }
        _ => Ok(v),
    }
}

fn check_float(spec: &KnobSpec, source: Source, raw: &str, v: f64) -> Result<f64, String> {
    if !v.is_finite() {
        return Err(format!("{}: not a finite number", spec.with_value(source, raw)));
    }
    match spec.kind {
        Kind::Float { lo, hi } | Kind::FloatList { lo, hi } if v < lo || v > hi => {
            Err(format!("{}: out of range ({})", spec.with_value(source, raw), spec.range()))
        }
        _ => Ok(v),
    }
}

/// One parsed value.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Int(u64),
    Float(f64),
    List(Vec<f64>),
    Sharing(Sharing),
    Preset(Preset),
    Switch(bool),
}

/// Parses `raw` (text from a flag, the URL or a JSON string) for `spec`.
fn parse_text(spec: &KnobSpec, source: Source, raw: &str) -> Result<Value, String> {
    let fail = |why: String| format!("{}: {why}", spec.with_value(source, raw));
    Ok(match spec.kind {
        Kind::Int { .. } => {
            // A negative integer is a number, only out of range.
            if let Some(d) = raw.strip_prefix('-') {
                if parse_int(d).is_ok() {
                    return Err(fail(format!("out of range ({})", spec.range())));
                }
            }
            Value::Int(check_int(spec, source, raw, parse_int(raw).map_err(fail)?)?)
        }
        Kind::Float { .. } => Value::Float(check_float(spec, source, raw, parse_float(raw).map_err(fail)?)?),
        Kind::FloatList { .. } => {
            let mut out = vec![];
            for part in raw.split(',') {
                let v = parse_float(part).map_err(|why| fail(format!("\"{part}\" is {why}")))?;
                out.push(check_float(spec, source, raw, v)?);
            }
            Value::List(out)
        }
        Kind::Sharing => Value::Sharing(Sharing::parse(raw).map_err(|_| {
            fail(if raw == "pipelined" {
                "not dedicated or shared (pipelining is now the behaviour knob \"pipeline\")".into()
            } else {
                "not dedicated or shared".into()
            })
        })?),
        Kind::Preset => Value::Preset(Preset::parse(raw).map_err(|_| fail("not pg15 or improved".into()))?),
        Kind::Switch => Value::Switch(parse_switch(raw).map_err(fail)?),
    })
}

fn store(k: &mut Knobs, spec: &KnobSpec, v: Value) {
    match (spec.name, v) {
        ("shards", Value::Int(n)) => k.shards = Some(n as usize),
        ("rows_per_shard", Value::Int(n)) => k.rows_per_shard = Some(n as usize),
        ("fetch_size", Value::Int(n)) => k.fetch_size = Some(n as usize),
        ("offset", Value::Int(n)) => k.offset = Some(n),
        ("limit", Value::Int(n)) => k.limit = Some(n),
        ("rtt_ms", Value::Float(x)) => k.rtt_ms = Some(x),
        ("bandwidth_mbps", Value::Float(x)) => k.bandwidth_mbps = Some(x),
        ("server_row_us", Value::Float(x)) => k.server_row_us = Some(x),
        ("server_query_us", Value::Float(x)) => k.server_query_us = Some(x),
        ("connect_ms", Value::Float(x)) => k.connect_ms = Some(x),
        ("coordinator_row_us", Value::Float(x)) => k.coordinator_row_us = Some(x),
        ("coordinator_answer_us", Value::Float(x)) => k.coordinator_answer_us = Some(x),
        ("coordinator_async_us", Value::Float(x)) => k.coordinator_async_us = Some(x),
        ("rtt_ms_per_shard", Value::List(l)) => k.rtt_ms_per_shard = Some(l),
        ("sharing", Value::Sharing(s)) => k.sharing = Some(s),
        ("behaviour", Value::Preset(p)) => k.behaviour = Some(p),
        (name, Value::Switch(on)) => *switch_mut(k, name).expect("a behaviour knob") = Some(on),
        (name, v) => unreachable!("knob {name} cannot hold {v:?}"),
    }
}

/// The field of behaviour switch `name` (`behaviour::KNOBS`' names), if it is one.
pub fn switch_mut<'a>(k: &'a mut Knobs, name: &str) -> Option<&'a mut Option<bool>> {
    Some(match name {
        "fetch_ahead" => &mut k.fetch_ahead,
        "pipelined_setup" => &mut k.pipelined_setup,
        "parallel_commit" => &mut k.parallel_commit,
        "parallel_close" => &mut k.parallel_close,
        "pipeline" => &mut k.pipeline,
        "fifo_results" => &mut k.fifo_results,
        "async_merge_append" => &mut k.async_merge_append,
        "async_through_nodes" => &mut k.async_through_nodes,
        "no_descendant_check" => &mut k.no_descendant_check,
        _ => return None,
    })
}

/// Sets the knob `key` (in `source`'s spelling) from text. Unknown keys are refused.
pub fn set_text(k: &mut Knobs, source: Source, key: &str, raw: &str) -> Result<(), String> {
    let spec = spec(source, key).ok_or_else(|| unknown(source, key))?;
    let v = parse_text(spec, source, raw)?;
    store(k, spec, v);
    Ok(())
}

fn unknown(source: Source, key: &str) -> String {
    match source {
        Source::Cli => format!("unknown option --{key}"),
        Source::Url => {
            format!("unknown URL parameter \"{key}\" (known: {}, {})", PAGE_PARAMS.join(", "), known(source))
        }
        Source::Json => format!("unknown knob \"{key}\" (known: {})", known(source)),
    }
}

/// Sets a knob from a JSON value: a string (parsed as text), a number, a list of
/// numbers, a boolean, or null (the scenario's default).
pub fn set_json(k: &mut Knobs, key: &str, value: &serde_json::Value) -> Result<(), String> {
    use serde_json::Value as J;
    let src = Source::Json;
    let spec = spec(src, key).ok_or_else(|| unknown(src, key))?;
    let shown = value.to_string();
    let wrong = |what: &str| format!("{}: {what}", spec.with_value(src, &shown));
    let v = match (spec.kind, value) {
        (_, J::Null) => return clear(k, spec),
        (_, J::String(s)) => parse_text(spec, src, s)?,
        (Kind::Int { .. }, J::Number(n)) => match n.as_u64() {
            Some(v) => Value::Int(check_int(spec, src, &shown, v)?),
            None if n.as_i64().is_some() => return Err(wrong(&format!("out of range ({})", spec.range()))),
            None => return Err(wrong("not a decimal integer")),
        },
        (Kind::Float { .. }, J::Number(n)) => {
            Value::Float(check_float(spec, src, &shown, n.as_f64().unwrap_or(f64::NAN))?)
        }
        (Kind::FloatList { .. }, J::Array(items)) => {
            let mut out = vec![];
            for item in items {
                let x = item.as_f64().ok_or_else(|| wrong(&format!("{item} is not a number")))?;
                out.push(check_float(spec, src, &shown, x)?);
            }
            Value::List(out)
        }
        (Kind::Switch, J::Bool(b)) => Value::Switch(*b),
        (Kind::Switch, J::Number(n)) if n.as_u64() == Some(0) || n.as_u64() == Some(1) => {
            Value::Switch(n.as_u64() == Some(1))
        }
        _ => return Err(wrong("wrong type of value")),
    };
    store(k, spec, v);
    Ok(())
}

fn clear(k: &mut Knobs, spec: &KnobSpec) -> Result<(), String> {
    match spec.name {
        "shards" => k.shards = None,
        "rows_per_shard" => k.rows_per_shard = None,
        "fetch_size" => k.fetch_size = None,
        "offset" => k.offset = None,
        "limit" => k.limit = None,
        "rtt_ms" => k.rtt_ms = None,
        "bandwidth_mbps" => k.bandwidth_mbps = None,
        "server_row_us" => k.server_row_us = None,
        "server_query_us" => k.server_query_us = None,
        "connect_ms" => k.connect_ms = None,
        "coordinator_row_us" => k.coordinator_row_us = None,
        "coordinator_answer_us" => k.coordinator_answer_us = None,
        "coordinator_async_us" => k.coordinator_async_us = None,
        "rtt_ms_per_shard" => k.rtt_ms_per_shard = None,
        "sharing" => k.sharing = None,
        "behaviour" => k.behaviour = None,
        name => *switch_mut(k, name).expect("a behaviour knob") = None,
    }
    Ok(())
}

/// The wasm API's knobs object, as JSON text: `{"shards": 4, "rtt_ms": "1.5"}`. Empty
/// text is no knobs. Unknown keys are refused by name; the message names every bad key.
pub fn from_json(text: &str) -> Result<Knobs, String> {
    let mut k = Knobs::default();
    if text.trim().is_empty() {
        return Ok(k);
    }
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("bad knobs: {e}"))?;
    let obj = v.as_object().ok_or_else(|| "bad knobs: expected a JSON object".to_string())?;
    // Every bad key is named, so the page can mark each input that holds one.
    let errors: Vec<String> = obj.iter().filter_map(|(key, value)| set_json(&mut k, key, value).err()).collect();
    if errors.is_empty() {
        Ok(k)
    } else {
        Err(errors.join("; "))
    }
}

/// What a page URL asks for: the scenario, mode and step (as given) and the knobs.
#[derive(Debug, Default)]
pub struct PageQuery {
    pub scenario: Option<String>,
    pub mode: Option<String>,
    pub step: Option<u64>,
    /// A scenario file, deflated and in base64url (the page inflates it).
    pub sql: Option<String>,
    pub knobs: Knobs,
}

/// Reads a page URL's query string (`?scenario=E&shards=4…`, already percent-decoded
/// into pairs). Unknown and repeated parameters are refused; an empty value is the
/// default. Scenario-wide checks (per-shard list length, size) are `validate`'s.
pub fn from_query(pairs: &[(String, String)]) -> Result<PageQuery, String> {
    let mut q = PageQuery::default();
    let mut seen: Vec<&str> = vec![];
    for (key, raw) in pairs {
        if seen.contains(&key.as_str()) {
            return Err(format!("URL parameter \"{key}\" is given twice"));
        }
        seen.push(key);
        match key.as_str() {
            "scenario" => q.scenario = Some(raw.clone()),
            "mode" => match raw.as_str() {
                "sync" | "async" => q.mode = Some(raw.clone()),
                _ => return Err(format!("mode={raw}: not sync or async")),
            },
            "sql" => {
                if raw.len() > MAX_SQL_PARAM {
                    return Err(format!(
                        "sql=…: {} characters is longer than a scenario file of at most {} bytes can be",
                        raw.len(),
                        MAX_SCRIPT_BYTES
                    ));
                }
                if let Some(c) = raw.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
                    return Err(format!("sql=…: {c:?} is not base64url (A-Z, a-z, 0-9, - and _)"));
                }
                if raw.is_empty() {
                    return Err("sql=: empty (a scenario file, deflated and in base64url)".into());
                }
                q.sql = Some(raw.clone());
            }
            "step" => {
                let n = parse_int(raw).map_err(|why| format!("step={raw}: {why}"))?;
                if n > MAX_STEP {
                    return Err(format!("step={raw}: out of range (0 to {MAX_STEP})"));
                }
                q.step = Some(n);
            }
            _ if raw.is_empty() && spec(Source::Url, key).is_some() => {}
            _ => set_text(&mut q.knobs, Source::Url, key, raw)?,
        }
    }
    if q.sql.is_some() && q.scenario.is_some() {
        return Err("URL parameters \"scenario\" and \"sql\" are both given: a URL runs a built-in scenario or a scenario file, not both".into());
    }
    Ok(q)
}

/// Splits and percent-decodes a query string (`?a=1&b=x%2Cy`; `+` is a space).
pub fn query_pairs(query: &str) -> Vec<(String, String)> {
    let decode = |s: &str| -> String {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < b.len() => {
                    match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16) {
                        Ok(v) => {
                            out.push(v);
                            i += 2;
                        }
                        Err(_) => out.push(b'%'),
                    }
                }
                c => out.push(c),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    query
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (decode(k), decode(v)),
            None => (decode(p), String::new()),
        })
        .collect()
}

/// Checks every knob of `k` that is set: finite, in range, and a per-shard list with
/// exactly `shards` entries (the `shards` knob, else `default_shards`). Messages name
/// the knob as `source` spells it.
pub fn validate(k: &Knobs, default_shards: usize, source: Source) -> Result<(), String> {
    let s = |name: &str| spec(Source::Json, name).expect("a knob");
    let b = k.resolve_behaviour();
    if b.no_descendant_check && !b.async_through_nodes {
        // It changes only how async_through_nodes waits: alone it would do nothing.
        return Err(format!(
            "{} only applies with {} (it removes that design's descendant check)",
            s("no_descendant_check").named(source),
            s("async_through_nodes").named(source)
        ));
    }
    let int = |name: &str, v: Option<u64>| -> Result<(), String> {
        match v {
            Some(v) => check_int(s(name), source, &v.to_string(), v).map(|_| ()),
            None => Ok(()),
        }
    };
    let float = |name: &str, v: Option<f64>| -> Result<(), String> {
        match v {
            Some(v) => check_float(s(name), source, &v.to_string(), v).map(|_| ()),
            None => Ok(()),
        }
    };
    int("shards", k.shards.map(|v| v as u64))?;
    int("rows_per_shard", k.rows_per_shard.map(|v| v as u64))?;
    int("fetch_size", k.fetch_size.map(|v| v as u64))?;
    int("offset", k.offset)?;
    int("limit", k.limit)?;
    float("rtt_ms", k.rtt_ms)?;
    float("bandwidth_mbps", k.bandwidth_mbps)?;
    float("server_row_us", k.server_row_us)?;
    float("server_query_us", k.server_query_us)?;
    float("connect_ms", k.connect_ms)?;
    float("coordinator_row_us", k.coordinator_row_us)?;
    float("coordinator_answer_us", k.coordinator_answer_us)?;
    float("coordinator_async_us", k.coordinator_async_us)?;
    if let Some(list) = &k.rtt_ms_per_shard {
        let spec = s("rtt_ms_per_shard");
        let text: Vec<String> = list.iter().map(|x| x.to_string()).collect();
        let text = text.join(",");
        for &x in list {
            check_float(spec, source, &text, x)?;
        }
        let shards = k.shards.unwrap_or(default_shards);
        if list.len() != shards {
            let what = if k.shards.is_some() { "shards" } else { "shards (the scenario's default)" };
            return Err(format!(
                "{}: {} value{} for {shards} {what}; give exactly one per shard",
                spec.with_value(source, &text),
                list.len(),
                if list.len() == 1 { "" } else { "s" }
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::KNOBS;

    fn cli(key: &str, raw: &str) -> Result<Knobs, String> {
        let mut k = Knobs::default();
        set_text(&mut k, Source::Cli, key, raw).map(|_| k)
    }
    fn url(key: &str, raw: &str) -> Result<Knobs, String> {
        let mut k = Knobs::default();
        set_text(&mut k, Source::Url, key, raw).map(|_| k)
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn every_behaviour_knob_has_a_spec_and_every_spec_a_field() {
        for info in KNOBS {
            let s = spec(Source::Json, info.name).expect(info.name);
            assert_eq!(s.kind, Kind::Switch);
            assert_eq!(s.url, Some(info.name));
            assert_eq!(s.cli, info.name.replace('_', "-"));
        }
        // Every spec stores into and clears its own field.
        for s in SPECS {
            let raw = match s.kind {
                Kind::Int { lo, .. } => lo.to_string(),
                Kind::Float { lo, .. } => lo.to_string(),
                Kind::FloatList { lo, .. } => lo.to_string(),
                Kind::Sharing => "shared".into(),
                Kind::Preset => "improved".into(),
                Kind::Switch => "on".into(),
            };
            let k = cli(s.cli, &raw).unwrap();
            assert_ne!(k, Knobs::default(), "{}", s.name);
            let mut k2 = k.clone();
            set_json(&mut k2, s.name, &serde_json::Value::Null).unwrap();
            assert_eq!(k2, Knobs::default(), "{}", s.name);
        }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn integers_are_strictly_decimal() {
        assert_eq!(cli("shards", "16").unwrap().shards, Some(16));
        assert_eq!(url("shards", "007").unwrap().shards, Some(7));
        for bad in ["0x10", "1e3", "+5", " 5", "5 ", "", "1.0", "٣", "5_000"] {
            let e = url("shards", bad).unwrap_err();
            assert_eq!(e, format!("shards={bad}: not a decimal integer"));
        }
        assert_eq!(cli("shards", "0x10").unwrap_err(), "--shards 0x10: not a decimal integer");
        assert_eq!(cli("shards", "-1").unwrap_err(), "--shards -1: out of range (1 to 64)");
        assert_eq!(cli("shards", "65").unwrap_err(), "--shards 65: out of range (1 to 64)");
        assert_eq!(
            cli("shards", "99999999999999999999999").unwrap_err(),
            "--shards 99999999999999999999999: out of range (1 to 64)"
        );
        assert_eq!(url("fetch", "0").unwrap_err(), "fetch=0: out of range (1 to 1000000)");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn numbers_are_finite() {
        assert_eq!(cli("bandwidth-mbps", "NaN").unwrap_err(), "--bandwidth-mbps NaN: not a finite number");
        for bad in ["nan", "inf", "-inf", "infinity", "1e999"] {
            assert_eq!(url("rtt", bad).unwrap_err(), format!("rtt={bad}: not a finite number"), "{bad}");
        }
        for bad in ["0x10", "+1", " 1", "1 ", "1ms", "", "e5", "--1"] {
            assert_eq!(url("rtt", bad).unwrap_err(), format!("rtt={bad}: not a number"), "{bad:?}");
        }
        assert_eq!(url("rtt", "1.5").unwrap().rtt_ms, Some(1.5));
        assert_eq!(url("rtt", ".5").unwrap().rtt_ms, Some(0.5));
        assert_eq!(url("bw", "2.5e3").unwrap().bandwidth_mbps, Some(2500.0));
        assert_eq!(url("rtt", "-1").unwrap_err(), "rtt=-1: out of range (0 to 10000)");
        assert_eq!(url("bw", "0").unwrap_err(), "bw=0: out of range (0.001 to 1000000)");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn per_shard_lists_have_one_entry_per_shard_each_in_range() {
        let k = url("rtts", "1,2,3,4").unwrap();
        assert_eq!(k.rtt_ms_per_shard, Some(vec![1.0, 2.0, 3.0, 4.0]));
        validate(&k, 4, Source::Url).unwrap();
        assert_eq!(
            validate(&k, 2, Source::Url).unwrap_err(),
            "rtts=1,2,3,4: 4 values for 2 shards (the scenario's default); give exactly one per shard"
        );
        let k3 = Knobs { shards: Some(3), ..k.clone() };
        assert_eq!(
            validate(&k3, 4, Source::Cli).unwrap_err(),
            "--rtts 1,2,3,4: 4 values for 3 shards; give exactly one per shard"
        );
        assert_eq!(url("rtts", "1,x,3").unwrap_err(), "rtts=1,x,3: \"x\" is not a number");
        assert_eq!(url("rtts", "1,NaN").unwrap_err(), "rtts=1,NaN: \"NaN\" is not a finite number");
        assert_eq!(url("rtts", "1,,2").unwrap_err(), "rtts=1,,2: \"\" is not a number");
        assert_eq!(url("rtts", "1,20000").unwrap_err(), "rtts=1,20000: out of range (0 to 10000)");
        // A list built in Rust is checked too.
        let bad = Knobs { rtt_ms_per_shard: Some(vec![1.0, f64::NAN]), ..Default::default() };
        assert_eq!(validate(&bad, 2, Source::Json).unwrap_err(), "rtt_ms_per_shard=1,NaN: not a finite number");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn validate_checks_knobs_built_in_rust() {
        let k = Knobs { bandwidth_mbps: Some(f64::INFINITY), ..Default::default() };
        assert_eq!(validate(&k, 4, Source::Cli).unwrap_err(), "--bandwidth-mbps inf: not a finite number");
        let k = Knobs { limit: Some(0), ..Default::default() };
        assert_eq!(validate(&k, 4, Source::Json).unwrap_err(), "limit=0: out of range (1 to 1000000)");
        validate(&Knobs::default(), 4, Source::Json).unwrap();
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn unknown_names_are_refused_by_name() {
        assert!(cli("bogus", "1").unwrap_err().starts_with("unknown option --bogus"));
        let e = url("bogus", "1").unwrap_err();
        assert!(
            e.starts_with("unknown URL parameter \"bogus\" (known: scenario, mode, step, sql, shards, rows, fetch"),
            "{e}"
        );
        assert!(!e.contains("server_row_us"), "{e}");
        let e = from_json(r#"{"shards": 4, "bogus": 1}"#).unwrap_err();
        assert!(e.starts_with("unknown knob \"bogus\" (known: shards, rows_per_shard"), "{e}");
        assert!(from_json("[1]").unwrap_err().contains("expected a JSON object"));
        assert_eq!(
            from_json(r#"{"fetch_size": "0", "rtt_ms_per_shard": "1,x", "shards": "4"}"#).unwrap_err(),
            "fetch_size=0: out of range (1 to 1000000); rtt_ms_per_shard=1,x: \"x\" is not a number"
        );
        assert!(from_json("{").unwrap_err().starts_with("bad knobs"));
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn json_values_strings_numbers_lists_switches() {
        let k = from_json(
            r#"{"shards": "4", "fetch_size": 100, "rtt_ms": 1.5, "rtt_ms_per_shard": [1, 2, 3, 4],
                "sharing": "shared", "behaviour": "improved", "fifo_results": false, "pipeline": "1", "limit": null}"#,
        )
        .unwrap();
        assert_eq!(k.shards, Some(4));
        assert_eq!(k.fetch_size, Some(100));
        assert_eq!(k.rtt_ms, Some(1.5));
        assert_eq!(k.rtt_ms_per_shard, Some(vec![1.0, 2.0, 3.0, 4.0]));
        assert_eq!(k.sharing, Some(Sharing::Shared));
        assert_eq!(k.behaviour, Some(Preset::Improved));
        assert_eq!(k.fifo_results, Some(false));
        assert_eq!(k.pipeline, Some(true));
        let b = k.resolve_behaviour();
        assert!(b.fetch_ahead && !b.fifo_results && b.pipeline);
        assert_eq!(from_json(r#"{"shards": "0x10"}"#).unwrap_err(), "shards=0x10: not a decimal integer");
        assert_eq!(from_json(r#"{"shards": 1.5}"#).unwrap_err(), "shards=1.5: not a decimal integer");
        assert_eq!(from_json(r#"{"shards": -2}"#).unwrap_err(), "shards=-2: out of range (1 to 64)");
        assert_eq!(from_json(r#"{"shards": 0}"#).unwrap_err(), "shards=0: out of range (1 to 64)");
        assert_eq!(from_json(r#"{"rtt_ms": "NaN"}"#).unwrap_err(), "rtt_ms=NaN: not a finite number");
        assert_eq!(from_json(r#"{"fetch_size": "many"}"#).unwrap_err(), "fetch_size=many: not a decimal integer");
        assert_eq!(from_json(r#"{"shards": true}"#).unwrap_err(), "shards=true: wrong type of value");
        assert!(from_json(r#"{"sharing": "pipelined"}"#).unwrap_err().contains("behaviour knob \"pipeline\""));
        assert_eq!(from_json(r#"{"behaviour": "pg16"}"#).unwrap_err(), "behaviour=pg16: not pg15 or improved");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn page_queries() {
        let q = from_query(&query_pairs(
            "?scenario=E&mode=async&shards=4&rtts=1%2C2,3,4&behaviour=improved&fetch_ahead=0&step=12&rtt=",
        ))
        .unwrap();
        assert_eq!(q.scenario.as_deref(), Some("E"));
        assert_eq!(q.step, Some(12));
        assert_eq!(q.knobs.rtt_ms_per_shard, Some(vec![1.0, 2.0, 3.0, 4.0]));
        assert_eq!(q.knobs.rtt_ms, None);
        assert_eq!(q.knobs.fetch_ahead, Some(false));
        // A calibration profile's knobs have URL names of their own.
        let q = from_query(&query_pairs("?connect_ms=2.7&coord_row_us=0.16&coord_answer_us=6&coord_async_us=0.07"))
            .unwrap()
            .knobs;
        assert_eq!(
            (q.connect_ms, q.coordinator_row_us, q.coordinator_answer_us, q.coordinator_async_us),
            (Some(2.7), Some(0.16), Some(6.0), Some(0.07))
        );
        let err = |s: &str| from_query(&query_pairs(s)).unwrap_err();
        assert_eq!(err("?shards=0x10"), "shards=0x10: not a decimal integer");
        assert_eq!(err("?rtt=NaN"), "rtt=NaN: not a finite number");
        assert!(err("?bogus=1").starts_with("unknown URL parameter \"bogus\""));
        assert!(err("?server_row_us=1").starts_with("unknown URL parameter \"server_row_us\""));
        assert_eq!(err("?step=-1"), "step=-1: not a decimal integer");
        assert_eq!(err("?mode=fast"), "mode=fast: not sync or async");
        assert_eq!(err("?shards=2&shards=3"), "URL parameter \"shards\" is given twice");
        assert_eq!(err("?shards=%2B5"), "shards=+5: not a decimal integer");
        assert_eq!(err("?shards=+5"), "shards= 5: not a decimal integer");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn page_queries_with_a_scenario_file() {
        let q = from_query(&query_pairs("?sql=q1Yq-_0_AQ&mode=sync&fetch=10&step=3")).unwrap();
        assert_eq!(q.sql.as_deref(), Some("q1Yq-_0_AQ"));
        assert_eq!(q.scenario, None);
        assert_eq!(q.knobs.fetch_size, Some(10));
        let err = |s: &str| from_query(&query_pairs(s)).unwrap_err();
        assert!(err("?sql=ab%2Bc").contains("'+' is not base64url"), "{}", err("?sql=ab%2Bc"));
        assert!(err("?sql=").starts_with("sql=: empty"));
        assert!(err("?scenario=E&sql=abc").contains("\"scenario\" and \"sql\" are both given"));
        let long = format!("?sql={}", "a".repeat(MAX_SQL_PARAM + 1));
        assert!(err(&long).contains("longer than a scenario file"));
        assert!(err("?bogus=1").contains("sql"), "the message lists sql among the page's parameters");
    }
}
