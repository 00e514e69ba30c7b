//! The workshop features at the wasm boundary (issue 10): lessons (`parseLesson`,
//! `LessonRun`, `Session.lessonAnswers`), breakpoints (`breakpointKinds`,
//! `Session.runTo`) and the narration history (`Session.narrationLog`). Errors become
//! JavaScript exceptions with a message, as everywhere in `wasm_api`.
//!
//! Invariants:
//! - A lesson's answers come from a finished run only: `lessonAnswers` throws while the
//!   session's run is unfinished, and a `LessonRun` runs its own, leaving the page's
//!   session untouched.
//! - A `LessonRun` takes its scenario, mode and knobs all from the lesson or all from
//!   the caller, never a mix.
//! - `runTo` takes at least one step (so it never stops on the step it starts from)
//!   and at most `budget`; the page calls again while it answers "more".
//! - `narrationLog` is 1-based and clamped to the steps taken; it never runs the run.
//!
//! PostgreSQL has no counterpart: these are the demo's. Each breakpoint kind names
//! the PostgreSQL function a debugger would stop in (`breakpoint::KINDS`, `postgres`).

use super::{parse_knobs, parse_mode, to_js, Session};
use crate::demo::breakpoint;
use crate::demo::lesson;
use crate::demo::session::RunTo;
use wasm_bindgen::prelude::*;

fn parse(text: &str) -> Result<lesson::Lesson, JsError> {
    lesson::parse(text).map_err(|e| JsError::new(&format!("bad lesson: {e}")))
}

/// A lesson file parsed: `{title, scenario, async_mode, knobs: [[k, v]], intro, notes:
/// [{on, text, …}], questions: [{ask, choices, answer, explain}], knob_walks: [[knob,
/// text]]}`. Throws naming the line of a mistake.
#[wasm_bindgen(js_name = parseLesson)]
pub fn parse_lesson(text: &str) -> Result<JsValue, JsError> {
    to_js(&parse(text)?)
}

/// A lesson's run to the end in slices: `advance(budget)` returns undefined until the
/// run is done, then `{answers, note_steps, total_steps}` (`lesson::LessonOutcome`).
/// `new LessonRun(text)` runs the lesson's own scenario, mode and knobs; with
/// `scenario`, `mode` and `knobs_json` given (all three), that run instead.
#[wasm_bindgen]
pub struct LessonRun {
    inner: lesson::LessonRun,
}

#[wasm_bindgen]
impl LessonRun {
    #[wasm_bindgen(constructor)]
    pub fn new(
        text: &str,
        scenario: Option<String>,
        mode: Option<String>,
        knobs_json: Option<String>,
    ) -> Result<LessonRun, JsError> {
        let l = parse(text)?;
        let inner = match (scenario, mode, knobs_json) {
            (Some(s), Some(m), Some(k)) => lesson::LessonRun::new(l, &s, parse_mode(&m)?, &parse_knobs(&k)?),
            (None, None, None) => lesson::LessonRun::for_lesson(l),
            _ => return Err(JsError::new("LessonRun: give scenario, mode and knobs together, or none")),
        }
        .map_err(|e| JsError::new(&e))?;
        Ok(LessonRun { inner })
    }

    pub fn advance(&mut self, budget: u32) -> Result<JsValue, JsError> {
        match self.inner.advance(budget as usize).map_err(|e| JsError::new(&e))? {
            Some(o) => to_js(&o),
            None => Ok(JsValue::UNDEFINED),
        }
    }
}

/// The breakpoint kinds: `[{id, label, postgres}]` (`breakpoint::KINDS`); `wire:K`
/// stops on connection K only.
#[wasm_bindgen(js_name = breakpointKinds)]
pub fn breakpoint_kinds() -> Result<JsValue, JsError> {
    to_js(&breakpoint::KINDS)
}

#[wasm_bindgen]
impl Session {
    /// Runs to the next step with an event of `kind` (see `breakpointKinds`), at least
    /// one step and at most `budget`: "found" (stopped there), "end" (the run ended
    /// first) or "more" (call again).
    #[wasm_bindgen(js_name = runTo)]
    pub fn run_to(&mut self, kind: &str, budget: u32) -> Result<String, JsError> {
        let on = breakpoint::parse(kind).map_err(|e| JsError::new(&e))?;
        Ok(match self.inner.run_to(on, budget as usize) {
            RunTo::Found => "found",
            RunTo::End => "end",
            RunTo::More => "more",
        }
        .to_string())
    }

    /// The full narration of steps `from..=to` (1-based; at most the steps taken so
    /// far): per step, every one of its actions in words (the narration line joins
    /// them with "; " and cuts after a few; none is cut here).
    #[wasm_bindgen(js_name = narrationLog)]
    pub fn narration_log(&self, from: u32, to: u32) -> Result<JsValue, JsError> {
        to_js(&self.inner.narration_log(from as usize, to as usize))
    }

    /// Every question's answer (in order) from this session's run, once it has
    /// finished; throws before (a `LessonRun` answers without touching this session).
    #[wasm_bindgen(js_name = lessonAnswers)]
    pub fn lesson_answers(&self, text: &str) -> Result<JsValue, JsError> {
        let answers = crate::demo::lesson::session_answers(&parse(text)?, &self.inner).map_err(|e| JsError::new(&e))?;
        to_js(&answers)
    }
}
