//! The core's own suite, one test binary that runs natively (`cargo test --test suite`)
//! and on wasm32 under Node and headless Chrome (`make test-wasm`, scripts/wasm_tests.sh:
//! there it is compiled into the library's unit-test binary, crate/lib.rs), with the same
//! assertions in every target: the protocol, the scenarios and their reference results, EXPLAIN,
//! the simulated server, the scenario files, the panels, the SQL front end, the
//! workshop and its lessons, the property tests and the fuzzers.
//!
//! Every test is `#[wasm_bindgen_test(unsupported = test)]`: a `#[test]` natively, a
//! wasm-bindgen test on wasm32. What differs on wasm32 is said where it is: the files a
//! test reads are embedded (`include_str!`), nothing reads `Instant` or starts a thread
//! there ([`Stopwatch`], `sql_bounds::on_small_stack`), and a panic aborts the test
//! instead of unwinding (the fuzzers' `catch_unwind` only names the case natively).
//!
//! The tests that need PostgreSQL, sockets or processes stay in tests/*.rs, native only
//! (each says why in its first line).

mod async_protocol;
mod async_through;
mod explain;
mod explain_names;
mod hashjoin_probe;
// Natively hot_path is a binary of its own (tests/hot_path.rs): its counting allocator
// counts every thread's allocations, and this binary runs its tests on parallel threads.
// wasm32 runs one test at a time on one thread, so there it is part of the suite.
#[cfg(target_arch = "wasm32")]
mod hot_path;
mod lessons;
mod page_plan_only;
mod panels;
mod proptest_async;
mod protocol_fuzz;
mod scenarios;
mod sim_server;
mod sql_bounds;
mod sql_coercion;
mod sql_costs;
mod sql_errors;
mod sql_files;
mod sql_fuzz;
mod sql_join_search;
mod sql_joins;
mod sql_parse;
mod sql_routines;
mod sql_setops;
mod sql_settings;
mod wasm_session;
mod workshop;

/// A scenario file's query run in sync and in async mode: its rows (each as text,
/// its values joined by `|`, sorted) and its plan; the two modes' rows must be the
/// same (an error says how they differ).
pub fn rows_in_both_modes(text: &str) -> Result<(Vec<String>, pgasync::plan::Plan), String> {
    use pgasync::knobs::{Knobs, Source};
    let s = pgasync::coordinator_sql::SqlScenario::load(text).map_err(|e| e.to_string())?;
    let plan = s.plan().map_err(|e| e.to_string())?.plan;
    let mut modes = vec![];
    for async_mode in [false, true] {
        let mut run = s
            .scenario(&Knobs::default(), Source::Json)
            .map_err(|e| e.to_string())?
            .start(async_mode, pgasync::clock::Clock::virtual_clock(), false)
            .map_err(|e| e.to_string())?;
        run.keep_rows = true;
        run.run_to_end().map_err(|e| e.to_string())?;
        let mut rows: Vec<String> =
            run.rows.iter().map(|r| r.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("|")).collect();
        rows.sort();
        modes.push(rows);
    }
    let (sync, async_rows) = (modes.remove(0), modes.remove(0));
    if sync != async_rows {
        return Err(format!("sync and async rows differ: {sync:?} / {async_rows:?}"));
    }
    Ok((sync, plan))
}

/// Wall-clock time, for the tests that print it or bound it: `Instant` natively;
/// wasm32-unknown-unknown has no clock (`Instant::now` panics), so there the host's
/// `Date.now()` (Node and the browser both have it).
pub struct Stopwatch {
    #[cfg(not(target_arch = "wasm32"))]
    start: std::time::Instant,
    #[cfg(target_arch = "wasm32")]
    start_ms: f64,
}

impl Stopwatch {
    pub fn start() -> Stopwatch {
        #[cfg(not(target_arch = "wasm32"))]
        return Stopwatch { start: std::time::Instant::now() };
        #[cfg(target_arch = "wasm32")]
        return Stopwatch { start_ms: js_sys::Date::now() };
    }

    pub fn elapsed(&self) -> std::time::Duration {
        #[cfg(not(target_arch = "wasm32"))]
        return self.start.elapsed();
        #[cfg(target_arch = "wasm32")]
        return std::time::Duration::from_secs_f64(((js_sys::Date::now() - self.start_ms) / 1000.0).max(0.0));
    }
}
