//! The JavaScript boundary: the only `#[wasm_bindgen]` code. Everything here is a thin
//! wrapper over `session::DemoSession` and `scenario`; large state stays behind the opaque
//! `Session` handle, and only small JSON-like values cross (via serde-wasm-bindgen).
//!
//! Errors become JavaScript exceptions carrying a message. A panic (a bug) is reported
//! on the console by `console_error_panic_hook`; the wasm build aborts on panic, so the
//! `Session` that panicked is unusable afterwards: the page drops it and builds a new
//! one from the same URL state.
//!
//! Invariants:
//! - what JavaScript passes is checked by the checks the CLI uses (`knobs::from_json`,
//!   `knobs::from_query`, `Scenario::check`) before anything is built; a bad value is an
//!   exception with a message;
//! - the page's size limits are checked before any data is generated (`SessionBuild`,
//!   `session::check_demo_size`);
//! - budgeted calls read the host's clock (`performance.now()`) only between steps, so a
//!   slice can overrun its `ms` by one step; no `ms`, or a negative or non-finite one,
//!   means no time limit. The core below reads no clock.
//!
//! PostgreSQL has no counterpart.

use crate::behaviour::{Behaviour, KNOBS};
use crate::demo::session::{self, DemoSession};
use crate::knobs::Knobs;
use crate::knobs::MAX_SCRIPT_BYTES;
use crate::knobs::{self, Source};
use crate::scenario::{Scenario, SCENARIOS};
use serde::Serialize;
use wasm_bindgen::prelude::*;

// Live shards through the relay and "PostgreSQL says": in the SQL front end's module
// only (the page loads it when the live drawer runs something; issue 20).
#[cfg(all(target_arch = "wasm32", feature = "sql"))]
mod live;

// Lessons, breakpoints and the narration history (issue 10).
mod lesson;

// The SQL editor's scenario files (issue 9): left out of the page's first module
// (`--no-default-features`, see Cargo.toml), in its second.
#[cfg(feature = "sql")]
mod sql;
#[cfg(feature = "sql")]
pub use sql::{check_sql, SqlLoader};

// The Export menu: trace, EXPLAIN and timeline files, as `pgasync trace` writes them.
// Its formats are in the page's first module (the menu is on screen from the start),
// its jobs in the SQL front end's (loaded at the first export; issue 20).
mod export;

/// A value for JavaScript. In the wasm build every value crosses as JSON text read by
/// the host's `JSON.parse` (`to_js_json`): one serializer, so each type's `Serialize`
/// is compiled once, not once for serde_json and once for serde-wasm-bindgen (issue
/// 20: the page's module carried both, e.g. a snapshot for `Session` and `LiveRun`, a
/// comparison for `compare` and `CompareJob`). Natively (tests), serde-wasm-bindgen.
#[cfg(target_arch = "wasm32")]
fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    to_js_json(v)
}

#[cfg(not(target_arch = "wasm32"))]
fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).map_err(|e| JsError::new(&e.to_string()))
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = JSON, js_name = parse, catch)]
    fn json_parse(text: &str) -> Result<JsValue, JsValue>;
}

/// `to_js` for the large values of every step and of a recording (a snapshot, a slice
/// of the trace, a comparison): serde_json writes the text, the host's `JSON.parse`
/// reads it, several times faster than setting each field across the boundary. The
/// same value for these types: structs, strings, integers below 2^53, finite floats.
#[cfg(target_arch = "wasm32")]
fn to_js_json<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    let text = serde_json::to_string(v).map_err(|e| JsError::new(&e.to_string()))?;
    json_parse(&text).map_err(|_| JsError::new("JSON.parse failed on the model's own text"))
}

#[cfg(not(target_arch = "wasm32"))]
fn to_js_json<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    to_js(v)
}

/// The knobs object, checked by `knobs::from_json` (the CLI and the URL use the same
/// checks): unknown keys, non-decimal integers and non-finite numbers are refused.
fn parse_knobs(json: &str) -> Result<Knobs, JsError> {
    knobs::from_json(json)
        .map_err(|e| JsError::new(&if e.starts_with("bad knobs") { e } else { format!("bad knobs: {e}") }))
}

fn parse_mode(mode: &str) -> Result<bool, JsError> {
    match mode {
        "async" => Ok(true),
        "sync" => Ok(false),
        m => Err(JsError::new(&format!("bad mode \"{m}\": expected \"sync\" or \"async\""))),
    }
}

/// The host's clock in milliseconds (`performance.now()` in a page or Node), read by
/// the budgeted calls below between steps; the core itself reads no clock.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

#[cfg(target_arch = "wasm32")]
fn now_ms() -> f64 {
    performance_now()
}

#[cfg(not(target_arch = "wasm32"))]
fn now_ms() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64() * 1e3
}

/// For a budgeted call given `ms` (optional): says when that much time has passed since
/// the call began. Without `ms` (or a bad value), never.
///
/// The clock is a call into the host (about a µs), as long as a step of a built-in
/// scenario: it is read after every step only while steps are slow, and after up to
/// `MAX_STRIDE` of them while a stride of steps takes under a sixteenth of the budget
/// (so the call stops at most about that much past it).
fn out_of_time(ms: Option<f64>) -> impl FnMut() -> bool {
    const MAX_STRIDE: u32 = 32;
    let start = now_ms();
    let budget = ms.filter(|m| m.is_finite() && *m >= 0.0);
    let (mut stride, mut left, mut last) = (1u32, 1u32, start);
    move || {
        let Some(b) = budget else { return false };
        left -= 1;
        if left > 0 {
            return false;
        }
        let now = now_ms();
        if now >= start + b {
            return true;
        }
        if now - last < b / 16.0 {
            stride = (stride * 2).min(MAX_STRIDE);
        } else {
            stride = (stride / 2).max(1);
        }
        last = now;
        left = stride;
        false
    }
}

/// Installs the panic hook (called once by the page), and grows the module's memory
/// to HEAP_AT_START at once.
#[wasm_bindgen(js_name = init)]
pub fn init() {
    console_error_panic_hook::set_once();
    // The allocator (dlmalloc, std's on wasm32) grows the memory by 64 KB or by one
    // request at a time and never gives any back: what this allocation takes and frees
    // stays the allocator's for later ones. Without it the page's first load made 73
    // memory.grow calls (each a call out to the engine, which makes a new ArrayBuffer
    // for the memory, and the glue then new views of it): 7-22 ms of the page's thread
    // in Chrome traces; with it, one (issue 20).
    drop(Vec::<u8>::with_capacity(HEAP_AT_START));
}

/// The memory the page's first screen needs (16 shards of 1,000 rows: 15.5 MB), taken
/// in one step at `init`.
const HEAP_AT_START: usize = 16 << 20;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ScenarioEntry {
    id: &'static str,
    title: &'static str,
    explanation: &'static str,
    /// What the shards and rows inputs mean when left empty (the page's placeholders).
    default_shards: usize,
    default_rows: usize,
}

/// The built-in scenarios: `[{id, title, explanation, defaultShards, defaultRows}]`.
#[wasm_bindgen(js_name = scenarios)]
pub fn scenarios() -> Result<JsValue, JsError> {
    let list: Vec<ScenarioEntry> = SCENARIOS
        .iter()
        .map(|s| ScenarioEntry {
            id: s.id,
            title: s.title,
            explanation: s.explanation,
            default_shards: s.default_shards,
            default_rows: s.default_rows,
        })
        .collect();
    to_js(&list)
}

#[derive(Serialize)]
struct KnobEntry {
    name: &'static str,
    reason: &'static str,
}

/// The request states, each defined once against the 2016 design's enum and PostgreSQL
/// 14+'s flags (`exec_async::STATE_TERMS`): the page's glossary and legend tooltips.
#[wasm_bindgen(js_name = stateTerms)]
pub fn state_terms() -> Result<JsValue, JsError> {
    to_js(&crate::executor::exec_async::STATE_TERMS)
}

#[derive(Serialize)]
struct BehaviourKnob {
    name: &'static str,
    reason: &'static str,
    /// On in the preset `improved` (every knob but the teaching-only ones).
    improved: bool,
}

/// The behaviour knobs: `[{name, reason, improved}]`, in order (`behaviour::KNOBS`).
#[wasm_bindgen(js_name = behaviourKnobs)]
pub fn behaviour_knobs() -> Result<JsValue, JsError> {
    let improved = crate::behaviour::Behaviour::improved();
    to_js(
        &KNOBS
            .iter()
            .map(|k| BehaviourKnob { name: k.name, reason: k.reason, improved: improved.get(k.name).unwrap_or(false) })
            .collect::<Vec<_>>(),
    )
}

/// One number knob of the page, from the one knob table (`knobs::SPECS`).
#[derive(Serialize)]
struct KnobField {
    /// The URL parameter and the `Knobs` field (the wasm API's name).
    url: &'static str,
    knob: &'static str,
    min: f64,
    max: f64,
    /// None: the scenario says (shards, rows of a file).
    default: Option<String>,
    help: &'static str,
}

/// The page's number knobs with their ranges and defaults, `[{url, knob, min, max,
/// default, help}]`: the page writes none of them itself, so a default or a range
/// changed in `knobs.rs` changes the page too.
#[wasm_bindgen(js_name = knobFields)]
pub fn knob_fields() -> Result<JsValue, JsError> {
    let fields: Vec<KnobField> = knobs::SPECS
        .iter()
        .filter_map(|s| {
            let (min, max) = match s.kind {
                knobs::Kind::Int { lo, hi } => (lo as f64, hi as f64),
                knobs::Kind::Float { lo, hi } | knobs::Kind::FloatList { lo, hi } => (lo, hi),
                _ => return None,
            };
            let url = s.url?;
            Some(KnobField { url, knob: s.name, min, max, default: knobs::default_text(s.name), help: s.help })
        })
        .collect();
    to_js(&fields)
}

/// A run's behaviour: its label (`pg15`, `improved` or `custom`), every knob's value,
/// and the knobs that are on with what each changes (the "Differences from PostgreSQL
/// 15" panel; empty for pg15).
#[derive(Serialize)]
struct BehaviourView {
    name: &'static str,
    knobs: Vec<(&'static str, bool)>,
    differences: Vec<KnobEntry>,
}

fn behaviour_view(b: &Behaviour) -> BehaviourView {
    BehaviourView {
        name: b.label(),
        knobs: KNOBS.iter().map(|k| (k.name, b.get(k.name).unwrap_or(false))).collect(),
        differences: b.differences().iter().map(|k| KnobEntry { name: k.name, reason: k.reason }).collect(),
    }
}

/// Checks a page URL's query string (`?scenario=E&shards=4…`) with the CLI's checks:
/// unknown parameters, non-decimal integers (`shards=0x10`), non-finite numbers
/// (`rtt=NaN`), ranges, one per-shard value per shard, size. Throws with the message.
/// With `sql=` (a scenario file, compressed; the page decompresses it) the knobs are
/// checked alone: the file's servers, known once it is loaded, say how many shards.
#[wasm_bindgen(js_name = checkUrl)]
pub fn check_url(query: &str) -> Result<(), JsError> {
    let q = knobs::from_query(&knobs::query_pairs(query)).map_err(|e| JsError::new(&e))?;
    if q.sql.is_some() {
        let shards = q.knobs.rtt_ms_per_shard.as_ref().map_or(1, |l| l.len());
        return knobs::validate(&q.knobs, shards, Source::Url).map_err(|e| JsError::new(&e));
    }
    let id = q.scenario.as_deref().unwrap_or("E");
    Scenario::check(id, &q.knobs, Source::Url).map_err(|e| JsError::new(&e))
}

/// The behaviour a knobs object resolves to (see `Session::behaviour`).
#[wasm_bindgen(js_name = resolveBehaviour)]
pub fn resolve_behaviour(knobs_json: &str) -> Result<JsValue, JsError> {
    to_js(&behaviour_view(&parse_knobs(knobs_json)?.resolve_behaviour()))
}

/// Sync and async runs side by side: times, gain, bound and their message timelines.
#[wasm_bindgen(js_name = compare)]
pub fn compare(scenario: &str, knobs_json: &str) -> Result<JsValue, JsError> {
    let knobs = parse_knobs(knobs_json)?;
    let c = session::compare(scenario, &knobs).map_err(|e| JsError::new(&e))?;
    to_js(&c)
}

/// `compare` in slices: `run(budget)` runs at most `budget` steps until both runs are
/// done, then `result()` gives the comparison, so the page never blocks.
#[wasm_bindgen]
pub struct CompareJob {
    inner: session::CompareJob,
}

#[wasm_bindgen]
impl CompareJob {
    #[wasm_bindgen(constructor)]
    pub fn new(scenario: &str, knobs_json: &str) -> Result<CompareJob, JsError> {
        let knobs = parse_knobs(knobs_json)?;
        let inner = session::CompareJob::new(scenario, &knobs).map_err(|e| JsError::new(&e))?;
        Ok(CompareJob { inner })
    }

    /// At most `budget` steps of the two runs (sync first), or fewer once `ms` (optional)
    /// milliseconds have passed (a step of a scenario file's run can take tens of
    /// milliseconds); true once both are done. `result()` then gives the comparison, in
    /// a call (a task) of its own: its two wire traces, made into JSON and parsed, are
    /// ~30 ms at 64 shards, and made in the call that ended the runs, after a slice's
    /// other steps, they made a task of 51-57 ms.
    pub fn run(&mut self, budget: u32, ms: Option<f64>) -> Result<bool, JsError> {
        self.inner.run_timed(budget as usize, &mut out_of_time(ms)).map_err(|e| JsError::new(&e))
    }

    /// The comparison, once `run` said the runs are done.
    pub fn result(&self) -> Result<JsValue, JsError> {
        if !self.inner.is_done() {
            return Err(JsError::new("the comparison's runs are not done: call run() until it answers true"));
        }
        to_js_json(&self.inner.comparison())
    }
}

/// SeqScan + sum over a local table, for the throughput figure (`scenario::LocalScan`,
/// which `pgasync bench` times natively): the table is built once by the constructor,
/// so JavaScript times only `run`.
#[wasm_bindgen]
pub struct LocalScan {
    inner: crate::scenario::LocalScan,
}

#[wasm_bindgen]
impl LocalScan {
    #[wasm_bindgen(constructor)]
    pub fn new(rows: u32) -> Result<LocalScan, JsError> {
        let inner = crate::scenario::LocalScan::new(rows as usize).map_err(|e| JsError::new(&e))?;
        Ok(LocalScan { inner })
    }

    /// Runs the scan once; returns sum(a).
    pub fn run(&self) -> Result<f64, JsError> {
        self.inner.run().map_err(|e| JsError::new(&e))
    }
}

/// `new Session(scenario, mode, knobsJson)` in slices, so that the page can answer
/// input between them at the heaviest settings (64 shards' data is 54-61 ms of
/// Chromium's main thread in one go): `new SessionBuild(…)` checks (the same checks and
/// messages as `new Session`), `data(maxRows)` generates the scenario's tables, at most
/// `maxRows` rows a call (scenario/data.rs), until it answers true, `scenario()` builds
/// the scenario from them, `session()` sets the run up at step 0.
#[wasm_bindgen]
pub struct SessionBuild {
    scenario_id: String,
    async_mode: bool,
    knobs: Knobs,
    /// The tables being made (after the first `data` call), until the scenario is built.
    stock: Option<crate::scenario::TableStock>,
    /// Built by `scenario()`, until `session()` takes it.
    scenario: Option<Scenario>,
    session_made: bool,
}

#[wasm_bindgen]
impl SessionBuild {
    #[wasm_bindgen(constructor)]
    pub fn new(scenario: &str, mode: &str, knobs_json: &str) -> Result<SessionBuild, JsError> {
        let knobs = parse_knobs(knobs_json)?;
        let async_mode = parse_mode(mode)?;
        session::check_demo_size(scenario, &knobs).map_err(|e| JsError::new(&e))?;
        Ok(SessionBuild {
            scenario_id: scenario.to_string(),
            async_mode,
            knobs,
            stock: None,
            scenario: None,
            session_made: false,
        })
    }

    /// Makes at most `max_rows` more rows of the scenario's tables (at least one); true
    /// when they are all made.
    pub fn data(&mut self, max_rows: u32) -> Result<bool, JsError> {
        if self.scenario.is_some() || self.session_made {
            return Ok(true);
        }
        let (id, knobs) = (&self.scenario_id, &self.knobs);
        let stock = match &mut self.stock {
            Some(stock) => stock,
            None => self.stock.insert(Scenario::stock_for(id, knobs, Source::Json).map_err(|e| JsError::new(&e))?),
        };
        Ok(stock.make(max_rows as usize))
    }

    /// Builds the scenario from the tables made (making any left first): its plan,
    /// servers and reference, a task of its own (R at 64 shards: tens of ms); refuses a
    /// Nested Loop that reads too much (`check_nested_loops`).
    #[wasm_bindgen(js_name = scenario)]
    pub fn build_scenario(&mut self) -> Result<(), JsError> {
        if self.scenario.is_some() || self.session_made {
            return Ok(());
        }
        while !self.data(u32::MAX)? {}
        let stock = self.stock.as_mut().expect("made by data");
        let scenario =
            Scenario::build_with(&self.scenario_id, &self.knobs, Source::Json, stock).map_err(|e| JsError::new(&e))?;
        session::check_nested_loops(&scenario).map_err(|e| JsError::new(&e))?;
        self.stock = None;
        self.scenario = Some(scenario);
        Ok(())
    }

    /// The rows of the scenario's tables made so far (the page's progress line; 0
    /// before the first `data` call).
    #[wasm_bindgen(js_name = rowsMade)]
    pub fn rows_made(&self) -> f64 {
        self.stock.as_ref().map_or(0.0, |s| s.made_rows() as f64)
    }

    /// The rows of the scenario's tables in all (0 before the first `data` call).
    #[wasm_bindgen(js_name = rowsToMake)]
    pub fn rows_to_make(&self) -> f64 {
        self.stock.as_ref().map_or(0.0, |s| s.total_rows() as f64)
    }

    /// The session, at step 0 (once; what `data` and `scenario` did not do is done
    /// first, in one go).
    pub fn session(&mut self) -> Result<Session, JsError> {
        if self.session_made {
            return Err(JsError::new("this build has already made its session"));
        }
        self.build_scenario()?;
        let scenario = self.scenario.take().expect("built");
        self.session_made = true;
        let inner = DemoSession::with_scenario(scenario, &self.scenario_id, self.async_mode, self.knobs.clone())
            .map_err(|e| JsError::new(&e))?;
        Ok(Session { inner })
    }
}

/// One scenario run that the page steps, runs and scrubs through.
#[wasm_bindgen]
pub struct Session {
    inner: DemoSession,
}

#[wasm_bindgen]
impl Session {
    /// `new Session("E", "async", '{"shards":4,"fetch_size":100}')`
    #[wasm_bindgen(constructor)]
    pub fn new(scenario: &str, mode: &str, knobs_json: &str) -> Result<Session, JsError> {
        let knobs = parse_knobs(knobs_json)?;
        let inner = DemoSession::new(scenario, parse_mode(mode)?, knobs).map_err(|e| JsError::new(&e))?;
        Ok(Session { inner })
    }

    /// One step; returns what it did: "row", "event" (an async request changed state),
    /// "waited", "committed", "finished" or "failed".
    #[wasm_bindgen(js_name = stepEvent)]
    pub fn step_event(&mut self) -> String {
        format!("{:?}", self.inner.step_event()).to_lowercase()
    }

    #[wasm_bindgen(js_name = stepRow)]
    pub fn step_row(&mut self) {
        self.inner.step_row()
    }

    #[wasm_bindgen(js_name = runToEnd)]
    pub fn run_to_end(&mut self) {
        self.inner.run_to_end()
    }

    #[wasm_bindgen(js_name = runForMs)]
    pub fn run_for_ms(&mut self, ms: f64) -> Result<(), JsError> {
        if !ms.is_finite() || ms < 0.0 {
            return Err(JsError::new(&format!("bad duration {ms} ms")));
        }
        self.inner.run_for_ms(ms);
        Ok(())
    }

    pub fn reset(&mut self) -> Result<(), JsError> {
        self.inner.reset().map_err(|e| JsError::new(&e))
    }

    /// The sync/async comparison of this session's scenario (its data is shared, not
    /// generated again), to run in slices. An EXPLAIN without ANALYZE runs nothing, so
    /// there is nothing to compare: an error says so.
    #[wasm_bindgen(js_name = compareJob)]
    pub fn compare_job(&self) -> Result<CompareJob, JsError> {
        if self.inner.is_plan_only() {
            return Err(JsError::new(
                "EXPLAIN without ANALYZE plans the query and runs nothing: there are no sync and async runs to compare",
            ));
        }
        let inner = session::CompareJob::for_session(&self.inner).map_err(|e| JsError::new(&e))?;
        Ok(CompareJob { inner })
    }

    /// At most `budget` steps towards the end (and, given `ms`, none after the step
    /// during which `ms` milliseconds have passed); true when the run is done.
    #[wasm_bindgen(js_name = runSome)]
    pub fn run_some(&mut self, budget: u32, ms: Option<f64>) -> bool {
        self.inner.run_some_timed(budget as usize, &mut out_of_time(ms))
    }

    /// Steps while the run has returned `rows` rows, at most `budget` steps (and `ms`
    /// as in `runSome`); true when a new row arrived or the run is done.
    #[wasm_bindgen(js_name = runWhileRows)]
    pub fn run_while_rows(&mut self, rows: f64, budget: u32, ms: Option<f64>) -> bool {
        self.inner.run_while_rows_timed(rows as u64, budget as usize, &mut out_of_time(ms))
    }

    /// Towards step `step` (back: from the nearest checkpoint) with at most `budget`
    /// steps replayed (and `ms` as in `runSome`); true when there.
    #[wasm_bindgen(js_name = seekSome)]
    pub fn seek_some(&mut self, step: u32, budget: u32, ms: Option<f64>) -> bool {
        self.inner.seek_some_timed(step as usize, budget as usize, &mut out_of_time(ms))
    }

    /// Goes to step `step` (backwards or forwards).
    pub fn seek(&mut self, step: u32) -> Result<(), JsError> {
        self.inner.seek(step as usize).map_err(|e| JsError::new(&e))
    }

    /// Goes to the last step ending at or before `ms` of virtual time.
    #[wasm_bindgen(js_name = seekTime)]
    pub fn seek_time(&mut self, ms: f64) -> Result<(), JsError> {
        if !ms.is_finite() || ms < 0.0 {
            return Err(JsError::new(&format!("bad time {ms} ms")));
        }
        self.inner.seek_time((ms * 1e6) as u64).map_err(|e| JsError::new(&e))
    }

    pub fn step(&self) -> u32 {
        self.inner.steps() as u32
    }

    #[wasm_bindgen(js_name = isDone)]
    pub fn is_done(&self) -> bool {
        self.inner.is_done()
    }

    /// The state now, with trace events from index `since` on.
    pub fn snapshot(&self, since: u32) -> Result<JsValue, JsError> {
        to_js_json(&self.inner.snapshot(since as usize))
    }

    /// Trace events `from..to` of the run so far (clamped to its length).
    pub fn trace(&self, from: u32, to: u32) -> Result<JsValue, JsError> {
        to_js_json(&self.inner.trace_slice(from as usize, to as usize))
    }

    /// Trace events `from..to` (clamped) as numbers and strings (`demo::trace_pack`):
    /// what a recording copies, one copy of memory where JSON took as long as the run.
    #[wasm_bindgen(js_name = tracePart)]
    pub fn trace_part(&self, from: u32, to: u32) -> TracePart {
        let events = self.inner.trace_slice(from as usize, to as usize);
        let mut part = TracePart { nums: Vec::with_capacity(events.len() * 5), strs: Vec::new() };
        crate::demo::trace_pack::pack(events, &mut part.nums, &mut part.strs);
        part
    }

    /// Per step taken so far, the trace length at its end (a `Uint32Array`: one copy,
    /// where an array of 300,000 numbers set one by one took tens of ms).
    #[wasm_bindgen(js_name = stepEnds)]
    pub fn step_ends(&self) -> Vec<u32> {
        self.inner.step_marks().0.into_iter().map(|e| e as u32).collect()
    }

    /// Per step taken so far, the virtual time at its end in ns (a `Float64Array`).
    #[wasm_bindgen(js_name = stepTimesNs)]
    pub fn step_times_ns(&self) -> Vec<f64> {
        self.inner.step_marks().1.into_iter().map(|t| t as f64).collect()
    }

    /// `{name, knobs: [[name, on]], differences: [{name, reason}]}`: the behaviour of
    /// this run (pg15 unless the knobs say otherwise).
    pub fn behaviour(&self) -> Result<JsValue, JsError> {
        to_js(&behaviour_view(&self.inner.scenario.behaviour))
    }

    #[wasm_bindgen(js_name = explainText)]
    pub fn explain_text(&self) -> String {
        self.inner.explain_text()
    }

    /// Not used by the page (its Export menu writes EXPLAIN's JSON): in the SQL front
    /// end's module only (issue 20).
    #[cfg(feature = "sql")]
    #[wasm_bindgen(js_name = explainJson)]
    pub fn explain_json(&self) -> String {
        serde_json::to_string_pretty(&self.inner.explain_json()).unwrap_or_default()
    }

    /// `{columns, rows}` for rows `offset..offset+limit`, as text.
    pub fn rows(&self, offset: u32, limit: u32) -> Result<JsValue, JsError> {
        #[derive(Serialize)]
        struct Page {
            columns: Vec<String>,
            rows: Vec<Vec<String>>,
            total: u64,
            /// An EXPLAIN without ANALYZE: no row is ever fetched.
            plan_only: bool,
        }
        let (columns, rows) = self.inner.rows_page(offset as usize, limit as usize);
        let plan_only = self.inner.is_plan_only();
        to_js(&Page { columns, rows, total: self.inner.run().row_count, plan_only })
    }
}
/// A slice of the trace packed (`Session::tracePart`): `nums()` then `strs()`, each
/// taken once (the page's `unpackTrace` reads them).
#[wasm_bindgen]
pub struct TracePart {
    nums: Vec<f64>,
    strs: Vec<String>,
}

#[wasm_bindgen]
impl TracePart {
    /// The numbers (a `Float64Array`); empty once taken.
    pub fn nums(&mut self) -> Vec<f64> {
        std::mem::take(&mut self.nums)
    }

    /// The strings the numbers point into (an `Array`); empty once taken.
    pub fn strs(&mut self) -> Vec<String> {
        std::mem::take(&mut self.strs)
    }
}

/// The names behind `TracePart`'s codes: `{kinds, states, protos}` (`demo::trace_pack`).
#[wasm_bindgen(js_name = traceCodes)]
pub fn trace_codes() -> Result<JsValue, JsError> {
    use crate::demo::trace_pack::{KINDS, PROTOS, STATES};
    #[derive(Serialize)]
    struct Codes {
        kinds: &'static [&'static str],
        states: &'static [&'static str],
        protos: &'static [&'static str],
    }
    to_js(&Codes { kinds: &KINDS, states: &STATES, protos: &PROTOS })
}

/// The most bytes of scenario-file text the page takes (`MAX_SCRIPT_BYTES`).
#[wasm_bindgen(js_name = maxSqlBytes)]
pub fn max_sql_bytes() -> u32 {
    MAX_SCRIPT_BYTES as u32
}

/// The built-in scenarios that have a scenario file: `[{id, text}]` (the SQL editor's
/// starting texts; one copy, embedded from `crate/coordinator_sql/scenarios/`). Text
/// only, yet in the SQL front end's module only, which the editor loads before it
/// offers them (the page's first module is ~6 KB gzipped smaller; issue 20).
#[cfg(feature = "sql")]
#[wasm_bindgen(js_name = scenarioFiles)]
pub fn scenario_files() -> Result<JsValue, JsError> {
    #[derive(Serialize)]
    struct File {
        id: &'static str,
        text: &'static str,
    }
    to_js(
        &crate::coordinator_sql::script::SCENARIO_FILES.iter().map(|(id, text)| File { id, text }).collect::<Vec<_>>(),
    )
}
