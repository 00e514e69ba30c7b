//! Workshop lessons: text files (`web/lessons/*.txt`) the page loads, parsed and
//! checked here so that a lesson can never promise what its run does not do.
//!
//! A lesson file is a header, then blocks that each start with a line `--- kind …`:
//!
//! ```text
//! title: E — a connection per shard
//! scenario: E
//! mode: async
//! knobs: rows_per_shard=300
//! --- intro
//! Text shown first.
//! --- note on=request:waiting
//! `ExecAsyncRequest` (src/backend/executor/execAsync.c) …   shown at the first step
//!                                                           with such an event
//! --- question
//! ask: Which request reaches Complete first?
//! choices: ft1, ft2, ft3, ft4
//! answer: first_complete                                    computed from the run
//! explain: …                                                shown after answering
//! --- knob fetch_ahead
//! What this knob changes against pg15, run side by side.
//! ```
//!
//! Notes attach to kinds of event or to a step (`step=3`), and are current exactly at
//! the steps where their event happens:
//!
//! | trigger | the step … |
//! |---|---|
//! | `request:waiting` (`request:callbackpending`, `request:complete`) | moves a request into that state; `from=idle` (the first request of a child: ExecAppendAsyncBegin's) or `from=complete` (a later one) narrows it |
//! | `wait` | has the Append's event wait sleep: ExecAsyncConfigureWait built the wait set and the executor waits on it (not a connection set-up's or a COMMIT's wait) |
//! | `notify` | calls ExecAsyncNotify (a socket fired; not a row handed over from a batch already read) |
//! | `append_row` | has the Append return a row to its parent |
//! | `startup`, `send:FETCH` (any statement prefix), `queued` | writes that |
//! | `row` | has a row reach the top of the plan |
//!
//! A question's answer is never written in the file: it is computed from the run
//! ([`answer`]), so the page checks what the student predicted against what happened.
//! The page runs a lesson with [`LessonRun`] (in slices, stepped exactly as its
//! session steps), which gives every answer and the steps at which each note shows.
//!
//! Invariants:
//! - A lesson cannot promise what its run does not do: answers come from the trace,
//!   and `tests/suite/lessons.rs` runs every lesson file and checks each answer is one
//!   of its question's choices and each note shows at some step.
//! - Step numbers are the page's: `LessonRun` starts its run with
//!   `DemoSession::start` (step mode, call events on) and steps it one `step` at a
//!   time, as the session does.
//! - A file that does not parse is refused with its line and what was expected; a
//!   `knob` block must name a behaviour knob.
//! - Work is bounded: `advance` takes at most `budget` steps, a run stops at
//!   `MAX_STEPS`, and a note lists at most 2,000 steps, so a lesson never freezes the
//!   page.
//!
//! PostgreSQL has no counterpart: this is the workshop's. The notes name the
//! PostgreSQL functions a step stands for (`ExecAppendAsyncBegin`, `ExecAsyncNotify`),
//! and the triggers match the trace events named after them (`trace::TraceKind`).

use crate::executor::exec_async::AsyncState;
use crate::knobs::Knobs;
use crate::remote::Proto;
use crate::run::QueryRun;
use crate::trace::{TraceEvent, TraceKind};
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Lesson {
    pub title: String,
    pub scenario: String,
    pub async_mode: bool,
    /// `key=value` pairs, the wasm API's knob names.
    pub knobs: Vec<(String, String)>,
    pub intro: String,
    pub notes: Vec<Note>,
    pub questions: Vec<Question>,
    /// Improvement knobs walked through against pg15: (knob, text).
    pub knob_walks: Vec<(String, String)>,
}

/// When a note shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "on", rename_all = "snake_case")]
pub enum NoteOn {
    Step { step: usize },
    Request { state: String, from: Option<String> },
    Wait,
    Notify,
    Startup,
    Send { prefix: String },
    Queued,
    Row,
    AppendRow,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Note {
    pub on: NoteOn,
    pub text: String,
}

/// What a question's answer is computed from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AnswerOf {
    /// The relation of the first request to reach Complete.
    FirstComplete,
    /// How many FETCHes a connection (by server name) carried.
    Fetches { server: String },
    /// How many statements a connection carried (each a round trip).
    RoundTrips { server: String },
    /// The most requests Waiting at the same time.
    MaxWaiting,
    /// Statements queued behind a busy connection (postgres_fdw's pendingAreq).
    Queued,
    /// Rows the query returned.
    Rows,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Question {
    pub ask: String,
    pub choices: Vec<String>,
    pub answer: AnswerOf,
    pub explain: String,
}

fn attr<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    header.split_whitespace().find_map(|w| w.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
}

fn note_on(header: &str, line: usize) -> Result<NoteOn, String> {
    if let Some(s) = attr(header, "step") {
        return s.parse().map(|step| NoteOn::Step { step }).map_err(|_| format!("line {line}: step=N needs a number"));
    }
    let on = attr(header, "on").ok_or_else(|| format!("line {line}: a note needs on=EVENT or step=N"))?;
    let from = attr(header, "from");
    if let Some(f) = from {
        if !["idle", "complete"].contains(&f) || !on.starts_with("request:") {
            return Err(format!("line {line}: from= is idle or complete, on a request:STATE note"));
        }
    }
    Ok(match on.split_once(':') {
        Some(("request", s)) if ["waiting", "callbackpending", "complete"].contains(&s) => {
            NoteOn::Request { state: s.into(), from: from.map(str::to_string) }
        }
        Some(("send", prefix)) if !prefix.is_empty() => NoteOn::Send { prefix: prefix.to_uppercase() },
        None if on == "wait" => NoteOn::Wait,
        None if on == "notify" => NoteOn::Notify,
        None if on == "append_row" => NoteOn::AppendRow,
        None if on == "startup" => NoteOn::Startup,
        None if on == "queued" => NoteOn::Queued,
        None if on == "row" => NoteOn::Row,
        _ => return Err(format!("line {line}: unknown event \"{on}\" (request:waiting|callbackpending|complete, wait, notify, append_row, startup, send:PREFIX, queued, row)")),
    })
}

fn answer_of(spec: &str, line: usize) -> Result<AnswerOf, String> {
    let mut words = spec.split_whitespace();
    let kind = words.next().unwrap_or("");
    let server = |w: Option<&str>| w.and_then(|w| w.strip_prefix("server=")).map(str::to_string);
    Ok(match kind {
        "first_complete" => AnswerOf::FirstComplete,
        "fetches" => AnswerOf::Fetches {
            server: server(words.next()).ok_or_else(|| format!("line {line}: fetches needs server=NAME"))?,
        },
        "round_trips" => AnswerOf::RoundTrips {
            server: server(words.next()).ok_or_else(|| format!("line {line}: round_trips needs server=NAME"))?,
        },
        "max_waiting" => AnswerOf::MaxWaiting,
        "queued" => AnswerOf::Queued,
        "rows" => AnswerOf::Rows,
        other => return Err(format!("line {line}: unknown answer \"{other}\"")),
    })
}

/// Parses a lesson file; errors name the line.
pub fn parse(text: &str) -> Result<Lesson, String> {
    let mut lesson = Lesson {
        title: String::new(),
        scenario: String::new(),
        async_mode: true,
        knobs: vec![],
        intro: String::new(),
        notes: vec![],
        questions: vec![],
        knob_walks: vec![],
    };
    // (header line number, header, body lines)
    let mut blocks: Vec<(usize, String, Vec<String>)> = vec![(0, "header".into(), vec![])];
    for (i, line) in text.lines().enumerate() {
        if let Some(h) = line.strip_prefix("--- ") {
            blocks.push((i + 1, h.trim().to_string(), vec![]));
        } else {
            blocks.last_mut().expect("a block").2.push(line.to_string());
        }
    }
    for (line, header, body) in blocks {
        let text_of = |b: &[String]| b.join("\n").trim().to_string();
        let fields = |b: &[String]| -> Vec<(String, String)> {
            b.iter()
                .filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_string(), v.trim().to_string())))
                .collect()
        };
        let kind = header.split_whitespace().next().unwrap_or("");
        match kind {
            "header" => {
                for (k, v) in fields(&body) {
                    match k.as_str() {
                        "title" => lesson.title = v,
                        "scenario" => lesson.scenario = v,
                        "mode" => lesson.async_mode = v != "sync",
                        "knobs" => {
                            lesson.knobs = v
                                .split_whitespace()
                                .filter_map(|kv| kv.split_once('=').map(|(a, b)| (a.to_string(), b.to_string())))
                                .collect()
                        }
                        other => return Err(format!("header: unknown field \"{other}\"")),
                    }
                }
            }
            "intro" => lesson.intro = text_of(&body),
            "note" => lesson.notes.push(Note { on: note_on(&header, line)?, text: text_of(&body) }),
            "question" => {
                let f = fields(&body);
                let get = |k: &str| f.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone());
                let ask = get("ask").ok_or_else(|| format!("line {line}: a question needs ask:"))?;
                let choices: Vec<String> = get("choices")
                    .ok_or_else(|| format!("line {line}: a question needs choices:"))?
                    .split(',')
                    .map(|c| c.trim().to_string())
                    .filter(|c| !c.is_empty())
                    .collect();
                if choices.len() < 2 {
                    return Err(format!("line {line}: a question needs at least two choices"));
                }
                let answer =
                    answer_of(&get("answer").ok_or_else(|| format!("line {line}: a question needs answer:"))?, line)?;
                lesson.questions.push(Question { ask, choices, answer, explain: get("explain").unwrap_or_default() });
            }
            "knob" => {
                let name = header.split_whitespace().nth(1).ok_or_else(|| format!("line {line}: --- knob NAME"))?;
                if !crate::behaviour::KNOBS.iter().any(|k| k.name == name) {
                    return Err(format!("line {line}: \"{name}\" is not a behaviour knob"));
                }
                lesson.knob_walks.push((name.to_string(), text_of(&body)));
            }
            other => return Err(format!("line {line}: unknown block \"{other}\" (intro, note, question, knob)")),
        }
    }
    if lesson.title.is_empty() || lesson.scenario.is_empty() {
        return Err("header: title: and scenario: are required".into());
    }
    Ok(lesson)
}

impl Lesson {
    /// The lesson's knobs as the scenario takes them.
    pub fn scenario_knobs(&self) -> Result<Knobs, String> {
        let mut k = Knobs::default();
        for (key, value) in &self.knobs {
            crate::knobs::set_text(&mut k, crate::knobs::Source::Json, key, value)?;
        }
        Ok(k)
    }
}

fn state_name(s: AsyncState) -> &'static str {
    match s {
        AsyncState::Waiting => "waiting",
        AsyncState::CallbackPending => "callbackpending",
        AsyncState::Complete => "complete",
        AsyncState::Idle => "idle",
        AsyncState::Cancelled => "cancelled",
    }
}

/// Does trace event `e` trigger note-trigger `on`? (`wait` needs the whole step: see
/// [`note_hits`]; here it is the event wait's ConfigureWait.) `is_append` tells an
/// Append's node id.
pub fn note_matches(on: &NoteOn, e: &TraceEvent, is_append: &dyn Fn(usize) -> bool) -> bool {
    match (on, &e.kind) {
        (NoteOn::Request { state, from }, TraceKind::Request { to, from: was, .. }) => {
            state_name(*to) == state && from.as_deref().is_none_or(|f| state_name(*was) == f)
        }
        (NoteOn::Wait, TraceKind::ConfigureWait { .. }) => true,
        (NoteOn::Notify, TraceKind::Notify { .. }) => true,
        (NoteOn::Startup, TraceKind::Send { proto: Proto::Startup, .. }) => true,
        (NoteOn::Send { prefix }, TraceKind::Send { sql, queued: false, .. }) => {
            sql.to_uppercase().starts_with(prefix.as_str())
        }
        (NoteOn::Queued, TraceKind::Send { queued: true, .. }) => true,
        (NoteOn::Row, TraceKind::Row { .. }) => true,
        (NoteOn::AppendRow, TraceKind::NodeRow { node }) => is_append(*node),
        _ => false,
    }
}

/// Is note-trigger `on` current at a step whose trace events are `events`? `wait`: the
/// Append configured its wait set (ExecAsyncConfigureWait) and the executor then
/// waits (the sleep in WaitEventSetWait), both in the step.
pub fn note_hits(on: &NoteOn, events: &[TraceEvent], is_append: &dyn Fn(usize) -> bool) -> bool {
    match on {
        NoteOn::Step { .. } => false,
        NoteOn::Wait => {
            events.iter().any(|e| note_matches(on, e, is_append))
                && events.iter().any(|e| matches!(e.kind, TraceKind::Wait { .. }))
        }
        _ => events.iter().any(|e| note_matches(on, e, is_append)),
    }
}

/// The answer to `q` from a finished run (traced), as one of the question's words.
pub fn answer<H: crate::host::Host>(q: &AnswerOf, run: &QueryRun<H>, labels: &[String]) -> String {
    let events = &run.es.trace.events;
    let conn = |server: &str| run.es.conns.iter().position(|c| c.server == server);
    match q {
        AnswerOf::FirstComplete => events
            .iter()
            .find_map(|e| match &e.kind {
                TraceKind::Request { requestee, to: AsyncState::Complete, .. } => {
                    let label = labels.get(*requestee).cloned().unwrap_or_default();
                    Some(label.rsplit(" on ").next().unwrap_or(&label).to_string())
                }
                _ => None,
            })
            .unwrap_or_else(|| "none".into()),
        AnswerOf::Fetches { server } => {
            let k = conn(server);
            events
                .iter()
                .filter(|e| matches!(&e.kind, TraceKind::Send { conn, sql, queued: false, .. } if Some(*conn) == k && sql.starts_with("FETCH")))
                .count()
                .to_string()
        }
        AnswerOf::RoundTrips { server } => {
            let k = conn(server);
            events
                .iter()
                .filter(|e| matches!(&e.kind, TraceKind::Response { conn, .. } if Some(*conn) == k))
                .count()
                .to_string()
        }
        AnswerOf::MaxWaiting => {
            let mut waiting = std::collections::BTreeSet::new();
            let mut most = 0;
            for e in events {
                if let TraceKind::Request { request, to, .. } = &e.kind {
                    if *to == AsyncState::Waiting {
                        waiting.insert(*request);
                    } else {
                        waiting.remove(request);
                    }
                    most = most.max(waiting.len());
                }
            }
            most.to_string()
        }
        AnswerOf::Queued => {
            events.iter().filter(|e| matches!(&e.kind, TraceKind::Send { queued: true, .. })).count().to_string()
        }
        AnswerOf::Rows => run.row_count.to_string(),
    }
}

/// What a lesson's run shows the page: every question's answer (in question order),
/// and for every note the steps whose events trigger it (in note order; a `step=N`
/// note at step N), so the page shows a note at its steps.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LessonOutcome {
    pub answers: Vec<String>,
    pub note_steps: Vec<Vec<usize>>,
    pub total_steps: usize,
}

/// At most this many steps are listed per note (a `row` note in a long run).
const MAX_NOTE_STEPS: usize = 2_000;

/// A lesson's run to the end, traced and stepped exactly as the page's session steps it
/// (`DemoSession::start`), so its step numbers are the page's; in slices (`advance`), so the
/// page never blocks on it.
pub struct LessonRun {
    lesson: Lesson,
    run: QueryRun,
    labels: Vec<String>,
    steps: usize,
    note_steps: Vec<Vec<usize>>,
}

impl LessonRun {
    /// The lesson's own run: its scenario, mode and knobs.
    pub fn for_lesson(lesson: Lesson) -> Result<LessonRun, String> {
        let knobs = lesson.scenario_knobs()?;
        let (id, async_mode) = (lesson.scenario.clone(), lesson.async_mode);
        LessonRun::new(lesson, &id, async_mode, &knobs)
    }

    /// The lesson against another run (the page's, after the student changed a knob).
    pub fn new(lesson: Lesson, scenario_id: &str, async_mode: bool, knobs: &Knobs) -> Result<LessonRun, String> {
        crate::demo::session::check_demo_size(scenario_id, knobs)?;
        let scenario = crate::scenario::Scenario::build(scenario_id, knobs)?;
        let run = crate::demo::session::DemoSession::start(&scenario, async_mode, true)?;
        let labels = crate::demo::session::node_labels(&run.explain());
        let note_steps = vec![Vec::new(); lesson.notes.len()];
        Ok(LessonRun { lesson, run, labels, steps: 0, note_steps })
    }

    /// At most `budget` steps; the outcome once the run is done, the error of a run
    /// that failed.
    pub fn advance(&mut self, budget: usize) -> Result<Option<LessonOutcome>, String> {
        for _ in 0..budget {
            if self.run.is_done() || self.steps >= crate::demo::session::MAX_STEPS {
                break;
            }
            let from = self.run.es.trace.events.len();
            self.run.step();
            self.steps += 1;
            let events = &self.run.es.trace.events[from..];
            for (i, n) in self.lesson.notes.iter().enumerate() {
                let labels = &self.labels;
                let is_append = |node: usize| labels.get(node).is_some_and(|l| l == "Append");
                let hit = match n.on {
                    NoteOn::Step { step } => step == self.steps,
                    ref on => note_hits(on, events, &is_append),
                };
                if hit && self.note_steps[i].len() < MAX_NOTE_STEPS {
                    self.note_steps[i].push(self.steps);
                }
            }
        }
        if let crate::run::Phase::Failed(e) = &self.run.phase {
            return Err(e.to_string());
        }
        if !self.run.is_done() && self.steps < crate::demo::session::MAX_STEPS {
            return Ok(None);
        }
        Ok(Some(LessonOutcome {
            answers: answers(&self.lesson, &self.run, &self.labels),
            note_steps: self.note_steps.clone(),
            total_steps: self.steps,
        }))
    }
}

/// Every question's answer from `session`'s run, once it has finished.
pub fn session_answers(lesson: &Lesson, session: &crate::demo::session::DemoSession) -> Result<Vec<String>, String> {
    if !session.run().is_done() {
        return Err("the run is not finished: run it to the end first, or use a LessonRun".into());
    }
    Ok(answers(lesson, session.run(), session.labels()))
}

/// Every question's answer from a finished run, in question order.
pub fn answers<H: crate::host::Host>(lesson: &Lesson, run: &QueryRun<H>, labels: &[String]) -> Vec<String> {
    lesson.questions.iter().map(|q| answer(&q.answer, run, labels)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_lesson_parses_and_bad_ones_name_their_line() {
        let l = parse("title: T\nscenario: E\n--- intro\nHello.\n--- note on=request:waiting\nN.\n--- question\nask: Q?\nchoices: a, b\nanswer: max_waiting\n").unwrap();
        assert_eq!(l.notes[0].on, NoteOn::Request { state: "waiting".into(), from: None });
        assert_eq!(l.questions[0].answer, AnswerOf::MaxWaiting);
        let e = parse("title: T\nscenario: E\n--- note on=nonsense\n").unwrap_err();
        assert!(e.starts_with("line 3:"), "{e}");
        let e = parse("title: T\nscenario: E\n--- knob warp_drive\n").unwrap_err();
        assert!(e.contains("not a behaviour knob"), "{e}");
    }
}
