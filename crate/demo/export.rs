//! Exporting a finished run: its trace as JSON or CSV, EXPLAIN ANALYZE as text or
//! JSON, and its timeline as SVG (one lane per connection, busy from each statement
//! sent to its answer, and one lane per async request, coloured by state).
//!
//! One producer for both callers: [`ExportJob`] runs a built scenario on the virtual
//! clock exactly as `pgasync trace` does (step mode, trace on, no call events) and
//! writes the chosen format in pieces; the CLI takes the whole text at once, the page
//! takes the pieces between frames (a Blob is made of them). So the page downloads
//! the very bytes the CLI prints, and no call blocks the page for long: a piece is a
//! bounded number of steps, events or bars.
//!
//! Times are in milliseconds of the run's clock (virtual for simulated runs).
//!
//! Invariants:
//! - The text is the same however it is sliced: taken piece by piece it equals the
//!   text written at once (a test checks every format, both modes), so the page's file
//!   is the CLI's output byte for byte.
//! - A piece of work is bounded (`PIECE` steps, events or bars), and `advance` does at
//!   least one, so an export always progresses and never holds the page for long.
//! - The run is on the virtual clock, traced, in step mode, with its rows not kept
//!   (`keep_rows = false`): the same bytes on every run and machine, and no memory
//!   for rows nobody exports.
//! - A failed query is an error, never a partial file.
//! - The JSON trace is exactly `serde_json`'s pretty form of `{header, events}`,
//!   written in pieces (a test compares them); a CSV field holding a comma, a quote or
//!   a line break is quoted, its quotes doubled (RFC 4180).
//!
//! Where it departs from PostgreSQL: the EXPLAIN formats are PostgreSQL's
//! (`instrument::explain`, after explain.c) with VERBOSE and our counters on (the
//! `Remote:` and `Async:` lines, the JSON key `"pgasync"`), which PostgreSQL does not
//! print. The trace and the timeline have no counterpart in PostgreSQL.

use crate::clock::Clock;
use crate::executor::exec_async::AsyncState;
use crate::instrument::{explain_json_text, ExplainOptions};
use crate::run::{Phase, QueryRun};
use crate::scenario::Scenario;
use crate::trace::{TraceEvent, TraceKind};
use serde::Serialize;

/// What a trace export carries besides the events: names for the numbers in them.
#[derive(Clone, Debug, Serialize)]
pub struct TraceHeader {
    pub scenario: String,
    pub mode: String,
    pub behaviour: String,
    /// Plan node labels by node id (`Async Foreign Scan on ft1`).
    pub nodes: Vec<String>,
    /// Each node as EXPLAIN prints it, by node id (`instrument::printed_as`): a
    /// request's lane names the Foreign Scan a folded Result belongs to. Not written.
    pub printed_as: Vec<usize>,
    /// Server name by connection number.
    pub connections: Vec<String>,
    pub total_ms: f64,
}

/// `{scenario, mode, behaviour, nodes, connections, total_ms, events: [...]}`; each
/// event as the trace records it (`time_ns`, `kind` and its fields), pretty-printed as
/// `serde_json::to_string_pretty` prints the whole document (a test checks it).
pub fn trace_json(header: &TraceHeader, events: &[TraceEvent]) -> String {
    let mut s = json_head(header);
    for (i, e) in events.iter().enumerate() {
        s.push_str(&json_event(i, e));
    }
    s.push_str(&json_tail(events.len()));
    s
}

/// The document up to the events: the header's fields, then `"events": [`.
fn json_head(header: &TraceHeader) -> String {
    let mut s = serde_json::to_string_pretty(header).unwrap_or_default();
    // The header's own closing brace goes: the events follow inside the same object.
    s.truncate(s.trim_end().len() - 1);
    s.truncate(s.trim_end().len());
    s.push_str(",\n  \"events\": [");
    s
}

/// Event `i` of the array, indented as at depth two (pretty JSON strings hold no raw
/// newline, so indenting each line is exact).
fn json_event(i: usize, e: &TraceEvent) -> String {
    let body = serde_json::to_string_pretty(e).unwrap_or_default().replace('\n', "\n    ");
    format!("{}\n    {body}", if i == 0 { "" } else { "," })
}

fn json_tail(events: usize) -> &'static str {
    if events == 0 {
        "]\n}"
    } else {
        "\n  ]\n}"
    }
}

const CSV_HEADER: &str = "time_ms,kind,connection,node,request,requestor,from,to,protocol,sql,rows,bytes,queued,detail";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn state(s: AsyncState) -> &'static str {
    match s {
        AsyncState::Idle => "Idle",
        AsyncState::Waiting => "Waiting",
        AsyncState::CallbackPending => "CallbackPending",
        AsyncState::Complete => "Complete",
        AsyncState::Cancelled => "Cancelled",
    }
}

/// One line per event, in the columns of `CSV_HEADER` (empty where the event has none;
/// connections and nodes by name).
pub fn trace_csv(header: &TraceHeader, events: &[TraceEvent]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for e in events {
        out.push_str(&csv_line(header, e));
    }
    out
}

/// One event's CSV line, with its newline.
fn csv_line(header: &TraceHeader, e: &TraceEvent) -> String {
    let conn = |k: usize| header.connections.get(k).cloned().unwrap_or_else(|| k.to_string());
    let node = |k: usize| header.nodes.get(k).cloned().unwrap_or_else(|| k.to_string());
    let mut f: [String; 14] = Default::default();
    f[0] = format!("{:.6}", e.time_ns as f64 / 1e6);
    match &e.kind {
        TraceKind::Request { request, requestor, requestee, from, to } => {
            f[1] = "request".into();
            f[3] = node(*requestee);
            f[4] = request.to_string();
            f[5] = node(*requestor);
            f[6] = state(*from).into();
            f[7] = state(*to).into();
        }
        TraceKind::Send { conn: c, proto, sql, bytes, queued, node: n } => {
            f[1] = "send".into();
            f[2] = conn(*c);
            f[3] = n.map(node).unwrap_or_default();
            f[8] = format!("{proto:?}");
            f[9] = sql.clone();
            f[11] = bytes.to_string();
            f[12] = queued.to_string();
        }
        TraceKind::Response { conn: c, proto, sql, rows, bytes, error, node: n } => {
            f[1] = "response".into();
            f[2] = conn(*c);
            f[3] = n.map(node).unwrap_or_default();
            f[8] = format!("{proto:?}");
            f[9] = sql.clone();
            f[10] = rows.to_string();
            f[11] = bytes.to_string();
            f[13] = error.clone().unwrap_or_default();
        }
        TraceKind::Wait { conns } => {
            f[1] = "wait".into();
            f[13] = conns.iter().map(|k| conn(*k)).collect::<Vec<_>>().join(" ");
        }
        TraceKind::Arrive { conn: c, bytes } => {
            f[1] = "arrive".into();
            f[2] = conn(*c);
            f[11] = bytes.to_string();
        }
        TraceKind::NodeStart { node: n } => {
            f[1] = "node_start".into();
            f[3] = node(*n);
        }
        TraceKind::Row { n } => {
            f[1] = "row".into();
            f[10] = n.to_string();
        }
        TraceKind::Error { message } => {
            f[1] = "error".into();
            f[13] = message.clone();
        }
        TraceKind::Cancel { conn: c } => {
            f[1] = "cancel".into();
            f[2] = conn(*c);
        }
        TraceKind::ConfigureWait { request, added } => {
            f[1] = "configure_wait".into();
            f[4] = request.to_string();
            f[13] = if *added { "added its connection" } else { "no event" }.into();
        }
        TraceKind::Notify { request } => {
            f[1] = "notify".into();
            f[4] = request.to_string();
        }
        TraceKind::Drain { conn: c, request, node: n } => {
            f[1] = "drain".into();
            f[2] = conn(*c);
            f[3] = node(*n);
            f[4] = request.to_string();
        }
        TraceKind::NodeCall { node: n } => {
            f[1] = "node_call".into();
            f[3] = node(*n);
        }
        TraceKind::NodeRow { node: n } => {
            f[1] = "node_row".into();
            f[3] = node(*n);
        }
        TraceKind::Reentry { node: n, request, message, .. } => {
            f[1] = "reentry".into();
            f[3] = node(*n);
            f[4] = request.to_string();
            f[13] = message.clone();
        }
    }
    let mut line = f.iter().map(|s| csv_field(s)).collect::<Vec<_>>().join(",");
    line.push('\n');
    line
}

/// A span on a lane: from, to (ns), its colour and its tooltip.
struct Bar {
    from: u64,
    to: u64,
    fill: &'static str,
    title: String,
}

fn escape_xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn state_fill(s: AsyncState) -> &'static str {
    match s {
        AsyncState::Waiting => "#f0b429",
        AsyncState::CallbackPending => "#2f80ed",
        AsyncState::Complete => "#27ae60",
        _ => "#bbb",
    }
}

/// The lanes, built event by event: per connection, each statement from sent to
/// answered; per request, each state from entered to left.
struct Lanes {
    conns: Vec<(String, Vec<Bar>)>,
    in_flight: Vec<std::collections::VecDeque<(u64, String)>>,
    requests: Vec<(String, Vec<Bar>, Option<(u64, AsyncState)>)>,
}

impl Lanes {
    fn new(header: &TraceHeader) -> Lanes {
        Lanes {
            conns: header.connections.iter().map(|c| (format!("conn {c}"), vec![])).collect(),
            in_flight: vec![Default::default(); header.connections.len()],
            requests: vec![],
        }
    }

    fn feed(&mut self, header: &TraceHeader, e: &TraceEvent) {
        match &e.kind {
            TraceKind::Send { conn, sql, queued: false, .. } if *conn < self.in_flight.len() => {
                self.in_flight[*conn].push_back((e.time_ns, sql.clone()))
            }
            TraceKind::Response { conn, sql, rows, .. } if *conn < self.in_flight.len() => {
                let Some((from, sent)) = self.in_flight[*conn].pop_front() else { return };
                let fill = if sql.starts_with("FETCH") { "#56ccf2" } else { "#9b51e0" };
                self.conns[*conn].1.push(Bar { from, to: e.time_ns, fill, title: format!("{sent} ({rows} rows)") });
            }
            TraceKind::Request { request, requestee, to, .. } => {
                if self.requests.len() <= *request {
                    self.requests.resize_with(*request + 1, || (String::new(), vec![], None));
                }
                let r = &mut self.requests[*request];
                if r.0.is_empty() {
                    // Named as PostgreSQL names its requestee: the Foreign Scan a folded
                    // Result (its qual and projection) belongs to.
                    let node = header.printed_as.get(*requestee).copied().unwrap_or(*requestee);
                    r.0 = format!("request {request}: {}", header.nodes.get(node).cloned().unwrap_or_default());
                }
                if let Some((from, s)) = r.2.take() {
                    r.1.push(Bar { from, to: e.time_ns, fill: state_fill(s), title: state(s).into() });
                }
                if matches!(to, AsyncState::Waiting | AsyncState::CallbackPending) {
                    r.2 = Some((e.time_ns, *to));
                }
            }
            _ => {}
        }
    }

    /// Every lane, states still open closed at `end`.
    fn finish(self, end: u64) -> Vec<(String, Vec<Bar>)> {
        let mut lanes = self.conns;
        for (name, mut bars, open) in self.requests {
            if let Some((from, s)) = open {
                bars.push(Bar { from, to: end, fill: state_fill(s), title: state(s).into() });
            }
            if !name.is_empty() {
                lanes.push((name, bars));
            }
        }
        lanes
    }
}

/// The drawing's geometry: label column, plot width, lane height, top margin.
const SVG_LABEL_W: f64 = 260.0;
const SVG_PLOT_W: f64 = 900.0;
const SVG_LANE_H: f64 = 22.0;
const SVG_TOP: f64 = 30.0;

/// Where the time axis ends (ns): the last event or the run's total, at least 1.
fn svg_end(header: &TraceHeader, events: &[TraceEvent]) -> u64 {
    events.last().map(|e| e.time_ns).unwrap_or(0).max((header.total_ms * 1e6) as u64).max(1)
}

fn svg_x(t: u64, end: u64) -> f64 {
    SVG_LABEL_W + SVG_PLOT_W * t as f64 / end as f64
}

/// The opening tag and the title line, for `lanes` lanes.
fn svg_head(header: &TraceHeader, lanes: usize, end: u64) -> String {
    let height = SVG_TOP + SVG_LANE_H * lanes as f64 + 30.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n",
        SVG_LABEL_W + SVG_PLOT_W + 60.0
    );
    s.push_str(&format!(
        "<text x=\"4\" y=\"18\" font-weight=\"bold\">{} — {} — {} — {:.3} ms</text>\n",
        escape_xml(&header.scenario),
        escape_xml(&header.mode),
        escape_xml(&header.behaviour),
        end as f64 / 1e6
    ));
    s
}

/// Lane `i`'s label and grid line.
fn svg_lane(i: usize, name: &str) -> String {
    let y = SVG_TOP + SVG_LANE_H * i as f64;
    format!(
        "<text x=\"4\" y=\"{}\">{}</text>\n<line x1=\"{SVG_LABEL_W}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#eee\"/>\n",
        y + 15.0,
        escape_xml(name),
        SVG_LABEL_W + SVG_PLOT_W,
        y + SVG_LANE_H,
        y + SVG_LANE_H
    )
}

/// One bar on lane `i`.
fn svg_bar(i: usize, b: &Bar, end: u64) -> String {
    let y = SVG_TOP + SVG_LANE_H * i as f64;
    let w = (svg_x(b.to, end) - svg_x(b.from, end)).max(0.5);
    format!(
        "<rect x=\"{:.2}\" y=\"{}\" width=\"{w:.2}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>\n",
        svg_x(b.from, end),
        y + 3.0,
        SVG_LANE_H - 6.0,
        b.fill,
        escape_xml(&b.title)
    )
}

/// The time axis under `lanes` lanes, and the closing tag.
fn svg_tail(lanes: usize, end: u64) -> String {
    let axis_y = SVG_TOP + SVG_LANE_H * lanes as f64 + 16.0;
    let mut s = String::new();
    for k in 0..=4 {
        let t = end * k / 4;
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{axis_y}\" text-anchor=\"middle\">{:.2} ms</text>\n",
            svg_x(t, end),
            t as f64 / 1e6
        ));
    }
    s.push_str("</svg>\n");
    s
}

/// The run's timeline as a standalone SVG: lanes labelled on the left, a millisecond
/// axis, one rectangle per busy span with its statement or state as tooltip.
pub fn timeline_svg(header: &TraceHeader, events: &[TraceEvent]) -> String {
    let end = svg_end(header, events);
    let mut builder = Lanes::new(header);
    for e in events {
        builder.feed(header, e);
    }
    let lanes = builder.finish(end);
    let mut s = svg_head(header, lanes.len(), end);
    for (i, (name, bars)) in lanes.iter().enumerate() {
        s.push_str(&svg_lane(i, name));
        for b in bars {
            s.push_str(&svg_bar(i, b, end));
        }
    }
    s.push_str(&svg_tail(lanes.len(), end));
    s
}

/// What the page and `pgasync trace --format` export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Csv,
    Svg,
    ExplainText,
    ExplainJson,
}

impl Format {
    /// Every format, by its CLI name, in the page's menu order.
    pub const ALL: [Format; 5] = [Format::Json, Format::Csv, Format::ExplainText, Format::ExplainJson, Format::Svg];

    pub fn parse(name: &str) -> Result<Format, String> {
        Format::ALL.into_iter().find(|f| f.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
            format!("unknown export format \"{name}\": expected one of {}", names.join(", "))
        })
    }

    /// The name `pgasync trace --format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Svg => "svg",
            Format::ExplainText => "explain-text",
            Format::ExplainJson => "explain-json",
        }
    }

    /// What the page's menu calls it.
    pub fn label(self) -> &'static str {
        match self {
            Format::Json => "Trace (JSON)",
            Format::Csv => "Trace (CSV)",
            Format::Svg => "Timeline (SVG)",
            Format::ExplainText => "EXPLAIN (text)",
            Format::ExplainJson => "EXPLAIN (JSON)",
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            Format::Json | Format::ExplainJson => "application/json",
            Format::Csv => "text/csv",
            Format::Svg => "image/svg+xml",
            Format::ExplainText => "text/plain",
        }
    }

    /// The file a run's export is saved as: `E-async-pg15.trace.json`.
    pub fn file_name(self, scenario: &str, mode: &str, behaviour: &str) -> String {
        let what = match self {
            Format::Json => "trace.json",
            Format::Csv => "trace.csv",
            Format::Svg => "timeline.svg",
            Format::ExplainText => "explain.txt",
            Format::ExplainJson => "explain.json",
        };
        let safe: String =
            scenario.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        format!("{safe}-{mode}-{behaviour}.{what}")
    }
}

/// Where an [`ExportJob`] is: running the query, then writing its pieces.
enum Stage {
    Running,
    /// Feeding the timeline's lanes, at event `i`.
    Lanes(usize),
    /// Writing events (JSON, CSV) or bars (SVG: lane, bar) from here.
    Events(usize),
    Bars(usize, usize),
    Done,
}

/// Events, bars or steps one call of `advance` handles per unit of its budget.
const PIECE: usize = 64;

/// A scenario run and exported in slices (see the module doc): `advance` until it
/// returns true, taking the text made so far with `take` whenever convenient.
pub struct ExportJob {
    run: QueryRun,
    format: Format,
    header: TraceHeader,
    stage: Stage,
    lane_builder: Option<Lanes>,
    lanes: Vec<(String, Vec<Bar>)>,
    out: String,
}

impl ExportJob {
    /// The page's export of built-in scenario `id` with `knobs` (the wasm `ExportJob`'s
    /// constructor): refused, as the page's session is, above the page's sizes.
    pub fn for_page(
        id: &str,
        knobs: &crate::knobs::Knobs,
        async_mode: bool,
        format: Format,
    ) -> Result<ExportJob, String> {
        crate::demo::session::check_demo_size(id, knobs)?;
        ExportJob::new(&Scenario::build(id, knobs)?, id, async_mode, format)
    }

    /// The run `pgasync trace` makes of `scenario` (named `name` in the export).
    pub fn new(scenario: &Scenario, name: &str, async_mode: bool, format: Format) -> Result<ExportJob, String> {
        let mut run = scenario.start(async_mode, Clock::virtual_clock(), true)?;
        // A step is then a bounded amount of work; the run is the same (see session).
        run.es.step_mode = true;
        run.keep_rows = false;
        let header = TraceHeader {
            scenario: name.to_string(),
            mode: if async_mode { "async" } else { "sync" }.to_string(),
            behaviour: scenario.behaviour.label().to_string(),
            nodes: vec![],
            printed_as: vec![],
            connections: vec![],
            total_ms: 0.0,
        };
        Ok(ExportJob {
            run,
            format,
            header,
            stage: Stage::Running,
            lane_builder: None,
            lanes: vec![],
            out: String::new(),
        })
    }

    /// The file to save the export as (see `Format::file_name`).
    pub fn file_name(&self) -> String {
        self.format.file_name(&self.header.scenario, &self.header.mode, &self.header.behaviour)
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// About `budget` pieces of work (steps of the run, events or bars written, each
    /// a bounded amount), stopping early once `out_of_time()`; true when the whole
    /// export is written. A failed query is an error.
    pub fn advance(&mut self, budget: usize, out_of_time: &mut dyn FnMut() -> bool) -> Result<bool, String> {
        for _ in 0..budget.max(1) {
            if matches!(self.stage, Stage::Done) {
                break;
            }
            self.piece()?;
            if out_of_time() {
                break;
            }
        }
        Ok(matches!(self.stage, Stage::Done))
    }

    /// The text written since the last call.
    pub fn take(&mut self) -> String {
        std::mem::take(&mut self.out)
    }

    /// The whole export at once (the CLI).
    pub fn finish(mut self) -> Result<String, String> {
        while !self.advance(usize::MAX, &mut || false)? {}
        Ok(self.take())
    }

    /// One piece of work: `PIECE` steps, events or bars.
    fn piece(&mut self) -> Result<(), String> {
        match self.stage {
            Stage::Running => return self.run_piece(),
            Stage::Lanes(i) => self.lanes_piece(i),
            Stage::Events(i) => self.events_piece(i),
            Stage::Bars(lane, bar) => self.bars_piece(lane, bar),
            Stage::Done => {}
        }
        Ok(())
    }

    fn run_piece(&mut self) -> Result<(), String> {
        for _ in 0..PIECE {
            if self.run.is_done() {
                break;
            }
            self.run.step();
        }
        if let Phase::Failed(e) = &self.run.phase {
            return Err(format!("query failed: {e}"));
        }
        if self.run.is_done() {
            self.finished();
        }
        Ok(())
    }

    /// The run is over: the header's names and total, then the first stage of writing.
    fn finished(&mut self) {
        let explain = self.run.explain();
        self.header.nodes = crate::demo::session::node_labels(&explain);
        self.header.printed_as = crate::instrument::printed_as(&explain);
        self.header.connections = self.run.es.conns.iter().map(|c| c.server.clone()).collect();
        self.header.total_ms = self.run.elapsed_ns() as f64 / 1e6;
        let opts = ExplainOptions { verbose: true, counters: true };
        self.stage = match self.format {
            Format::ExplainText => {
                self.out.push_str(&self.run.explain_text_with(&opts));
                Stage::Done
            }
            Format::ExplainJson => {
                self.out.push_str(&explain_json_text(&explain, &opts, 0, self.run.execution_ns()));
                Stage::Done
            }
            Format::Json => {
                self.out.push_str(&json_head(&self.header));
                Stage::Events(0)
            }
            Format::Csv => {
                self.out.push_str(CSV_HEADER);
                self.out.push('\n');
                Stage::Events(0)
            }
            Format::Svg => {
                self.lane_builder = Some(Lanes::new(&self.header));
                Stage::Lanes(0)
            }
        };
    }

    fn events(&self) -> &[TraceEvent] {
        &self.run.es.trace.events
    }

    fn events_piece(&mut self, from: usize) {
        let to = (from + PIECE).min(self.events().len());
        for i in from..to {
            let e = &self.run.es.trace.events[i];
            let text = if self.format == Format::Json { json_event(i, e) } else { csv_line(&self.header, e) };
            self.out.push_str(&text);
        }
        self.stage = if to < self.events().len() { Stage::Events(to) } else { self.events_done() };
    }

    fn events_done(&mut self) -> Stage {
        if self.format == Format::Json {
            self.out.push_str(json_tail(self.events().len()));
        }
        Stage::Done
    }

    fn lanes_piece(&mut self, from: usize) {
        let to = (from + PIECE).min(self.events().len());
        let builder = self.lane_builder.as_mut().expect("lanes being built");
        for e in &self.run.es.trace.events[from..to] {
            builder.feed(&self.header, e);
        }
        if to < self.events().len() {
            self.stage = Stage::Lanes(to);
            return;
        }
        let end = svg_end(&self.header, self.events());
        self.lanes = self.lane_builder.take().expect("lanes being built").finish(end);
        self.out.push_str(&svg_head(&self.header, self.lanes.len(), end));
        self.stage = Stage::Bars(0, 0);
    }

    /// Up to `PIECE` bars from lane `lane`, bar `bar` on (a lane's label before its first).
    fn bars_piece(&mut self, mut lane: usize, mut bar: usize) {
        let end = svg_end(&self.header, self.events());
        let mut n = 0;
        while lane < self.lanes.len() && n < PIECE {
            let (name, bars) = &self.lanes[lane];
            if bar == 0 {
                self.out.push_str(&svg_lane(lane, name));
            }
            while bar < bars.len() && n < PIECE {
                self.out.push_str(&svg_bar(lane, &bars[bar], end));
                bar += 1;
                n += 1;
            }
            if bar < bars.len() {
                // Not done with this lane: the label is written, resume at `bar`.
                self.stage = Stage::Bars(lane, bar);
                return;
            }
            lane += 1;
            bar = 0;
        }
        if lane < self.lanes.len() {
            self.stage = Stage::Bars(lane, bar);
            return;
        }
        self.out.push_str(&svg_tail(self.lanes.len(), end));
        self.stage = Stage::Done;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::knobs::Knobs;

    /// Run E at a small size, and its trace as the job writes it.
    fn small_e(async_mode: bool) -> (Scenario, QueryRun) {
        let knobs = Knobs { rows_per_shard: Some(120), fetch_size: Some(50), ..Default::default() };
        let scenario = Scenario::build("E", &knobs).unwrap();
        let mut run = scenario.start(async_mode, Clock::virtual_clock(), true).unwrap();
        run.es.step_mode = true;
        run.run_to_end().unwrap();
        (scenario, run)
    }

    fn header_of(run: &QueryRun) -> TraceHeader {
        TraceHeader {
            scenario: "E".into(),
            mode: "async".into(),
            behaviour: "pg15".into(),
            nodes: crate::demo::session::node_labels(&run.explain()),
            printed_as: crate::instrument::printed_as(&run.explain()),
            connections: run.es.conns.iter().map(|c| c.server.clone()).collect(),
            total_ms: run.elapsed_ns() as f64 / 1e6,
        }
    }

    /// The JSON written in pieces is serde_json's pretty print of the whole document.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn json_in_pieces_is_the_pretty_document() {
        #[derive(Serialize)]
        struct Doc<'a> {
            #[serde(flatten)]
            header: &'a TraceHeader,
            events: &'a [TraceEvent],
        }
        let (_, run) = small_e(true);
        let header = header_of(&run);
        let events = &run.es.trace.events;
        assert!(events.len() > 100);
        for n in [0, 1, events.len()] {
            let whole = serde_json::to_string_pretty(&Doc { header: &header, events: &events[..n] }).unwrap();
            assert_eq!(trace_json(&header, &events[..n]), whole, "{n} events");
        }
    }

    /// Every format: the job's text, taken in small slices, is the text written at once
    /// from a run made the same way, and the same whatever the slice.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_job_in_slices_writes_what_the_whole_run_gives() {
        for async_mode in [false, true] {
            let (scenario, run) = small_e(async_mode);
            let mut header = header_of(&run);
            header.mode = if async_mode { "async" } else { "sync" }.into();
            let opts = ExplainOptions { verbose: true, counters: true };
            for format in Format::ALL {
                let want = match format {
                    Format::Json => trace_json(&header, &run.es.trace.events),
                    Format::Csv => trace_csv(&header, &run.es.trace.events),
                    Format::Svg => timeline_svg(&header, &run.es.trace.events),
                    Format::ExplainText => run.explain_text_with(&opts),
                    Format::ExplainJson => explain_json_text(&run.explain(), &opts, 0, run.execution_ns()),
                };
                let mut job = ExportJob::new(&scenario, "E", async_mode, format).unwrap();
                let mut got = String::new();
                while !job.advance(3, &mut || false).unwrap() {
                    got.push_str(&job.take());
                }
                got.push_str(&job.take());
                assert_eq!(got, want, "{format:?} async={async_mode}");
                let whole = ExportJob::new(&scenario, "E", async_mode, format).unwrap().finish().unwrap();
                assert_eq!(whole, want, "{format:?} at once");
            }
        }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn file_names_say_scenario_mode_and_behaviour() {
        assert_eq!(Format::Json.file_name("E", "async", "pg15"), "E-async-pg15.trace.json");
        assert_eq!(Format::Svg.file_name("pf1", "sync", "improved"), "pf1-sync-improved.timeline.svg");
        assert_eq!(Format::ExplainText.file_name("a/b.sql", "sync", "custom"), "a_b_sql-sync-custom.explain.txt");
        assert!(Format::parse("xml").unwrap_err().contains("explain-json"));
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn csv_quotes_what_needs_quoting() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("FETCH 100 FROM c1"), "FETCH 100 FROM c1");
    }
}
