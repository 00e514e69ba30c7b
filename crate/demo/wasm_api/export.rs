//! The page's Export menu: a thin `#[wasm_bindgen]` wrapper over `export::ExportJob`
//! (the plain Rust job the CLI's `pgasync trace` runs too, so the page downloads the
//! bytes the CLI prints). The page calls `advance(budget, ms)` between frames until it
//! returns true, collecting `takeBytes()`'s pieces into a Blob: no call blocks for long.
//!
//! Invariants:
//! - An export re-runs the scenario on the simulated host with its virtual clock: the
//!   same scenario, mode and knobs give the same bytes, here and in the CLI.
//! - The knobs are checked as everywhere (`parse_knobs`), and a built-in scenario above
//!   the page's sizes is refused as `new Session` refuses it; `Session.exportJob` needs
//!   no check (its session passed it) and leaves the session as it was.
//! - Each `advance` does at least one piece of work, so an export always progresses,
//!   and starts none after `ms` milliseconds.
//! - Errors become JavaScript exceptions with a message, as everywhere in `wasm_api`.
//!
//! - The jobs are in the SQL front end's module only (feature `sql`), which the page
//!   loads at its first export; `exportFormats`, which draws the menu, is in both
//!   (issue 20: the page's first module is smaller without the writers).
//!
//! PostgreSQL has no counterpart: a run's trace is the sandbox's own record; the
//! nearest PostgreSQL output is `EXPLAIN (ANALYZE, FORMAT JSON)` and the server log.

use super::to_js;
#[cfg(feature = "sql")]
use super::{out_of_time, parse_knobs, parse_mode, Session};
#[cfg(feature = "sql")]
use crate::demo::export;
use crate::demo::export::Format;
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// The export formats: `[{name, label, mime}]` (`name` as `pgasync trace --format`).
#[wasm_bindgen(js_name = exportFormats)]
pub fn export_formats() -> Result<JsValue, JsError> {
    #[derive(Serialize)]
    struct Entry {
        name: &'static str,
        label: &'static str,
        mime: &'static str,
    }
    let list: Vec<Entry> =
        Format::ALL.iter().map(|f| Entry { name: f.name(), label: f.label(), mime: f.mime() }).collect();
    to_js(&list)
}

#[cfg(feature = "sql")]
/// A run exported in slices (see the module doc).
#[wasm_bindgen]
pub struct ExportJob {
    inner: export::ExportJob,
}

#[cfg(feature = "sql")]
fn parse_format(name: &str) -> Result<Format, JsError> {
    Format::parse(name).map_err(|e| JsError::new(&e))
}

#[cfg(feature = "sql")]
#[wasm_bindgen]
impl ExportJob {
    /// `new ExportJob("E", "async", knobsJson, "json")`: a built-in scenario as
    /// `pgasync trace --scenario E --mode async --format json` with the same knobs.
    #[wasm_bindgen(constructor)]
    pub fn new(scenario: &str, mode: &str, knobs_json: &str, format: &str) -> Result<ExportJob, JsError> {
        let knobs = parse_knobs(knobs_json)?;
        let inner = export::ExportJob::for_page(scenario, &knobs, parse_mode(mode)?, parse_format(format)?)
            .map_err(|e| JsError::new(&e))?;
        Ok(ExportJob { inner })
    }

    /// About `budget` pieces of work, and none after `ms` milliseconds; true when done.
    pub fn advance(&mut self, budget: u32, ms: Option<f64>) -> Result<bool, JsError> {
        self.inner.advance(budget as usize, &mut out_of_time(ms)).map_err(|e| JsError::new(&e))
    }

    /// The text written since the last call.
    pub fn take(&mut self) -> String {
        self.inner.take()
    }

    /// The text written since the last call, as UTF-8 bytes (a `Uint8Array`): what the
    /// page puts in its Blob, with no JavaScript string made of megabytes of text.
    #[wasm_bindgen(js_name = takeBytes)]
    pub fn take_bytes(&mut self) -> Vec<u8> {
        self.inner.take().into_bytes()
    }

    /// `E-async-pg15.trace.json`
    #[wasm_bindgen(js_name = fileName)]
    pub fn file_name(&self) -> String {
        self.inner.file_name()
    }

    pub fn mime(&self) -> String {
        self.inner.format().mime().to_string()
    }
}

#[cfg(feature = "sql")]
#[wasm_bindgen]
impl Session {
    /// This session's run exported (its scenario, data shared; its mode and knobs).
    #[wasm_bindgen(js_name = exportJob)]
    pub fn export_job(&self, format: &str) -> Result<ExportJob, JsError> {
        if self.inner.is_plan_only() {
            // An export re-runs the scenario: an EXPLAIN without ANALYZE has no run.
            return Err(JsError::new(
                "EXPLAIN without ANALYZE plans the query and runs nothing: there is no run to export (the EXPLAIN \
                 panel's Copy has the plan)",
            ));
        }
        let m = &self.inner;
        let inner = export::ExportJob::new(&m.scenario, &m.scenario_id, m.async_mode, parse_format(format)?)
            .map_err(|e| JsError::new(&e))?;
        Ok(ExportJob { inner })
    }
}
