//! The SQL editor's scenario files at the wasm boundary (feature `sql`, on by default;
//! `make pkg` builds the page's first module without it and the second with it).
//!
//! Invariants: a scenario file in the page is held to `session::DEMO_LIMITS` and
//! `MAX_SCRIPT_BYTES`, checked as it loads; a run too big to record is refused by
//! `session()` before it starts; every error becomes a JavaScript `Error` carrying its
//! line and column (0 when unknown) and is kept: `advance` and `session` then fail with
//! it; a loader makes one session at most.

use super::{out_of_time, parse_knobs, parse_mode, to_js, Session};
use crate::coordinator_sql::planner::KeptSearches;
use crate::coordinator_sql::script::SqlLoad;
use crate::coordinator_sql::{FrontError, SqlScenario};
use crate::demo::session::{self, DemoSession};
use crate::knobs::Knobs;
use wasm_bindgen::prelude::*;

// ---- scenario files (the page's SQL editor) ----

#[wasm_bindgen]
extern "C" {
    /// JavaScript's `Error`, made here so that a scenario file's error carries where it is.
    #[wasm_bindgen(js_name = Error)]
    type ErrorObject;
    #[wasm_bindgen(constructor, js_class = "Error")]
    fn new(message: &str) -> ErrorObject;
    #[wasm_bindgen(method, setter = line, js_class = "Error")]
    fn set_line(this: &ErrorObject, line: u32);
    #[wasm_bindgen(method, setter = column, js_class = "Error")]
    fn set_column(this: &ErrorObject, column: u32);
    #[wasm_bindgen(method, setter = reason, js_class = "Error")]
    fn set_reason(this: &ErrorObject, reason: &str);
}

/// A scenario file's error as a JavaScript `Error`: its message says where ("line 3,
/// column 8: column \"scor\" does not exist"); `line` and `column` (1-based, 0 when
/// unknown) and `reason` (the message alone) are properties of it.
fn front_error(e: &FrontError) -> JsValue {
    let err = ErrorObject::new(&e.to_string());
    err.set_line(e.line.min(u32::MAX as usize) as u32);
    err.set_column(e.column.min(u32::MAX as usize) as u32);
    err.set_reason(&e.message);
    err.into()
}

/// Names the page's row limit in the loader's messages.
const PAGE_LIMIT_NAME: &str = "the step-by-step page (`pgasync sql --file` takes more)";

/// A scenario file loaded in slices and made a [`Session`]: `new SqlLoader(text, mode,
/// knobsJson)`, then `advance(budget)` until it returns true (each call inserts about
/// `budget` rows, so the page stays responsive), then `plan(ms)` until it returns
/// true (the query planned in slices: a join search of thousands of paths stops and
/// goes on at the next call, `coordinator_sql`'s join_search_slices), then
/// `session()`, which takes the searches planned. The page's limits
/// apply: at most `MAX_DEMO_ROWS` rows and `MAX_DEMO_BYTES` of rows in all
/// (`session::DEMO_LIMITS`), refused at the INSERT that passes them (a generate_series
/// too wide for the bytes before its first row), statements nested at most as the
/// front end allows (`sql::nesting`),
/// and a plan too big to record step by step is refused by `session()` before it
/// runs. Every error is thrown as an `Error` with `line`, `column` and `reason`
/// (see `front_error`), and kept: `error()` returns it as `{message, line, column}`.
#[wasm_bindgen]
pub struct SqlLoader {
    load: Option<SqlLoad>,
    /// The file loaded (`plan` takes it from `load`).
    sql: Option<SqlScenario>,
    /// The query's join searches, kept between `plan`'s calls and for `session`.
    kept: KeptSearches,
    async_mode: bool,
    knobs: Knobs,
    error: Option<FrontError>,
    log: Vec<String>,
    query: Option<String>,
}

#[wasm_bindgen]
impl SqlLoader {
    /// Checks the size, the section markers, the mode and the knobs; runs nothing yet.
    #[wasm_bindgen(constructor)]
    pub fn new(text: &str, mode: &str, knobs_json: &str) -> Result<SqlLoader, JsValue> {
        let async_mode = parse_mode(mode).map_err(JsValue::from)?;
        let knobs = parse_knobs(knobs_json).map_err(JsValue::from)?;
        let mut load = SqlLoad::new(text, session::DEMO_LIMITS).map_err(|e| front_error(&e))?;
        load.set_limit_name(PAGE_LIMIT_NAME);
        Ok(SqlLoader {
            load: Some(load),
            sql: None,
            kept: KeptSearches::default(),
            async_mode,
            knobs,
            error: None,
            log: vec![],
            query: None,
        })
    }

    fn fail(&mut self, e: FrontError) -> JsValue {
        let js = front_error(&e);
        self.error = Some(e);
        self.load = None;
        self.sql = None;
        self.kept = KeptSearches::default();
        js
    }

    /// Runs about `budget` units of the setup (a row inserted, a statement run), and
    /// given `ms`, stops once that many milliseconds have passed; true when the whole
    /// file is loaded.
    pub fn advance(&mut self, budget: u32, ms: Option<f64>) -> Result<bool, JsValue> {
        let Some(load) = self.load.as_mut() else {
            return Err(self.gone());
        };
        match load.advance_timed(budget.max(1) as usize, &mut out_of_time(ms)) {
            Ok(done) => Ok(done),
            Err(e) => Err(self.fail(e)),
        }
    }

    fn gone(&self) -> JsValue {
        match &self.error {
            Some(e) => front_error(e),
            None => front_error(&FrontError::new("this loader has already made its session", 0, 0)),
        }
    }

    /// Rows inserted so far (for a progress line).
    pub fn rows(&self) -> f64 {
        self.load.as_ref().map_or(0, |l| l.rows()) as f64
    }

    /// The loaded file (taken from the loader once `advance` returned true).
    fn loaded(&mut self) -> Result<&SqlScenario, JsValue> {
        if self.sql.is_none() {
            let Some(load) = self.load.take() else {
                return Err(self.gone());
            };
            match load.finish() {
                Ok(sql) => self.sql = Some(sql),
                Err(e) => return Err(self.fail(e)),
            }
        }
        Ok(self.sql.as_ref().expect("loaded"))
    }

    /// Plans the query for about `ms` milliseconds (after `advance` returned true):
    /// true once it is planned, false when a join search stopped for the time and
    /// goes on at the next call. A query the sandbox does not plan fails here with its
    /// error, as `session()` would.
    pub fn plan(&mut self, ms: Option<f64>) -> Result<bool, JsValue> {
        self.loaded()?;
        let (sql, kept) = (self.sql.as_ref().expect("loaded"), &mut self.kept);
        let (planned, stopped) = kept.run(Some(Box::new(out_of_time(ms))), || sql.plan());
        match (stopped, planned) {
            (true, _) => Ok(false),
            (false, Ok(_)) => Ok(true),
            (false, Err(e)) => Err(self.fail(e)),
        }
    }

    /// The join paths the query's planning has costed so far (for a progress line).
    #[wasm_bindgen(js_name = pathsCosted)]
    pub fn paths_costed(&self) -> f64 {
        self.kept.paths_costed() as f64
    }

    /// Plans the query (with the searches `plan` made, if it was called), checks the
    /// run fits the page, and builds the session (once, after `advance` returned true).
    pub fn session(&mut self) -> Result<Session, JsValue> {
        self.loaded()?;
        let Some(mut sql) = self.sql.take() else {
            return Err(self.gone());
        };
        self.log = std::mem::take(&mut sql.log);
        self.query = sql.query.as_ref().map(|q| one_line(&q.sql));
        let mut kept = std::mem::take(&mut self.kept);
        let (async_mode, knobs) = (self.async_mode, &self.knobs);
        let (built, _) = kept.run(None, || sql_session(sql, async_mode, knobs));
        built.map_err(|e| self.fail(e))
    }

    /// The last error as `{message, line, column}`, or null.
    pub fn error(&self) -> Result<JsValue, JsError> {
        match &self.error {
            Some(e) => to_js(e),
            None => Ok(JsValue::NULL),
        }
    }

    /// After `session()`: one line per setup statement run (`s2: CREATE TABLE`, `coordinator: INSERT 0 100000`).
    pub fn log(&self) -> Vec<String> {
        self.log.clone()
    }

    /// After `session()`: the query as it runs (`\set` variables substituted).
    pub fn query(&self) -> Option<String> {
        self.query.clone()
    }
}

/// A query on one line, for a heading: comment lines left out, spaces collapsed.
fn one_line(sql: &str) -> String {
    let lines = sql.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("--"));
    lines.flat_map(|l| l.split_whitespace()).collect::<Vec<_>>().join(" ")
}

/// The session of a loaded scenario file ([`DemoSession::from_sql`]: refused before it
/// runs when too big to record; an EXPLAIN without ANALYZE planned, never run).
fn sql_session(sql: SqlScenario, async_mode: bool, knobs: &Knobs) -> Result<Session, FrontError> {
    Ok(Session { inner: DemoSession::from_sql(sql, async_mode, knobs.clone())? })
}

#[wasm_bindgen]
impl Session {
    /// `Session.fromSql(text, "async", knobsJson)`: a scenario file's session, loaded
    /// at once (for tests and the console; the page loads with `SqlLoader`, in slices).
    /// Errors as `SqlLoader`'s.
    #[wasm_bindgen(js_name = fromSql)]
    pub fn from_sql(text: &str, mode: &str, knobs_json: &str) -> Result<Session, JsValue> {
        let mut loader = SqlLoader::new(text, mode, knobs_json)?;
        while !loader.advance(u32::MAX, None)? {}
        loader.session()
    }
}

/// Checks a scenario file as `Session.fromSql` would run it (loaded at once: for tests
/// and the console): null when it would run (or, an EXPLAIN without ANALYZE, plan),
/// else `{message, line, column}`.
#[wasm_bindgen(js_name = checkSql)]
pub fn check_sql(text: &str, knobs_json: &str) -> Result<JsValue, JsError> {
    let knobs = parse_knobs(knobs_json)?;
    let result = SqlLoad::new(text, session::DEMO_LIMITS).and_then(|mut load| {
        load.set_limit_name(PAGE_LIMIT_NAME);
        while !load.advance(usize::MAX)? {}
        session::page_scenario(load.finish()?, &knobs).map(drop)
    });
    match result {
        Ok(()) => Ok(JsValue::NULL),
        Err(e) => to_js(&e),
    }
}
