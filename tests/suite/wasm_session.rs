//! The Session API the page uses, run natively (`cargo test`) and in wasm under Node
//! and headless Chromium (`wasm-pack test`). The same virtual-clock figures in every
//! target show the core behaves identically natively and in wasm.

use pgasync::demo::session::DemoSession;
use pgasync::executor::exec_async::AsyncState;
use pgasync::knobs::Knobs;
use pgasync::trace::TraceKind;
use wasm_bindgen_test::wasm_bindgen_test;

fn knobs() -> Knobs {
    Knobs { shards: Some(4), rows_per_shard: Some(300), fetch_size: Some(100), ..Default::default() }
}

#[wasm_bindgen_test(unsupported = test)]
fn each_request_passes_idle_waiting_callback_pending_complete() {
    let mut s = DemoSession::new("E", true, knobs()).unwrap();
    let mut seen: Vec<Vec<AsyncState>> = vec![vec![]; 4];
    let mut steps = 0;
    while !s.is_done() {
        let snap = s.snapshot(0);
        for r in &snap.requests {
            if seen[r.id].last() != Some(&r.state) {
                seen[r.id].push(r.state);
            }
        }
        s.step_event();
        steps += 1;
    }
    assert!(steps > 10);
    // Step mode makes every transition a step of its own: the snapshots show them all.
    for (id, states) in seen.iter().enumerate() {
        assert_eq!(states[0], AsyncState::Idle, "request {id} starts Idle");
        for s in [AsyncState::Waiting, AsyncState::CallbackPending, AsyncState::Complete] {
            assert!(states.contains(&s), "request {id} never seen {s:?}: {states:?}");
        }
    }
    // Per event, the trace shows the full cycle for every request.
    let trace = &s.run().es.trace.events;
    for id in 0..4 {
        let transitions: Vec<(AsyncState, AsyncState)> = trace
            .iter()
            .filter_map(|e| match e.kind {
                TraceKind::Request { request, from, to, .. } if request == id => Some((from, to)),
                _ => None,
            })
            .collect();
        assert_eq!(transitions[0], (AsyncState::Idle, AsyncState::Waiting));
        assert!(transitions.contains(&(AsyncState::Waiting, AsyncState::CallbackPending)));
        assert!(transitions.contains(&(AsyncState::CallbackPending, AsyncState::Complete)));
    }
}

fn snapshot_json(s: &DemoSession) -> String {
    serde_json::to_string(&s.snapshot(0)).unwrap()
}

#[wasm_bindgen_test(unsupported = test)]
fn seeking_back_and_forth_gives_the_same_snapshot_as_stepping() {
    let knobs = || Knobs { rows_per_shard: Some(60), fetch_size: Some(20), ..knobs() };
    let mut stepped = DemoSession::new("E", true, knobs()).unwrap();
    // The run's length is known once it has been run to the end (the page records it
    // first): then every snapshot says it.
    stepped.run_to_end();
    stepped.reset().unwrap();
    let mut at = Vec::new();
    while !stepped.is_done() {
        stepped.step_event();
        at.push(snapshot_json(&stepped));
    }
    let mut s = DemoSession::new("E", true, knobs()).unwrap();
    s.run_to_end();
    for target in [at.len() / 2, 3, at.len() - 1, 1, at.len() / 3] {
        s.seek(target + 1).unwrap();
        assert!(snapshot_json(&s) == at[target], "seek to step {}", target + 1);
    }
    // Seeking by time lands on a step whose end time is at or before it.
    let t = stepped.snapshot(0).time_ns / 2;
    s.seek_time(t).unwrap();
    let snap = s.snapshot(0);
    assert!(snap.time_ns <= t);
    assert!(snapshot_json(&s) == at[snap.step - 1], "seek by time");
}

/// The state without the trace (compared separately: it is long).
fn state_json(s: &DemoSession) -> String {
    serde_json::to_string(&s.snapshot(usize::MAX)).unwrap()
}

/// A long run keeps checkpoints (their spacing doubles past 128 of them): a seek back
/// starts from one, and lands on exactly the state and trace of stepping from the start.
#[wasm_bindgen_test(unsupported = test)]
fn seeking_back_from_checkpoints_equals_stepping_from_the_start() {
    let knobs = || Knobs { rows_per_shard: Some(10_000), fetch_size: Some(100), ..knobs() };
    let mut s = DemoSession::new("E", true, knobs()).unwrap();
    assert!(s.run_some(1000) == false && s.steps() == 1000, "run_some stops at its budget");
    s.run_to_end();
    let total = s.steps();
    assert!(total > 256 * 128, "long enough to thin the checkpoints: {total} steps");
    for target in [total - 1, 1, 255, 256, 257, 33_000, total / 2, 12] {
        let mut fresh = DemoSession::new("E", true, knobs()).unwrap();
        fresh.run_to_end(); // the same knowledge of the run's length
        fresh.reset().unwrap();
        for _ in 0..target {
            fresh.step_event();
        }
        s.seek(target).unwrap();
        assert_eq!(s.steps(), target);
        assert!(state_json(&s) == state_json(&fresh), "seek back to step {target}");
        assert!(s.trace_slice(0, usize::MAX) == fresh.trace_slice(0, usize::MAX), "trace at step {target}");
    }
    // A budgeted seek gets there in slices.
    let mut slices = 0;
    while !s.seek_some(total, 500) {
        slices += 1;
    }
    assert!(s.is_done() && slices >= 1);
}

#[wasm_bindgen_test(unsupported = test)]
fn results_and_times_equal_the_native_run() {
    let mut s = DemoSession::new("E", true, knobs()).unwrap();
    s.run_to_end();
    let (_, rows) = s.rows_page(0, 10);
    // Sum of a = b % 100 over b in 0..1200: 12 full cycles of 0..99.
    assert_eq!(rows, vec![vec!["59400".to_string()]]);
    assert!(s.scenario.matches_reference(&s.run().rows));
    // The virtual clock makes the figure identical natively and in wasm: the run's
    // whole time (set-up through the COMMITs) of E at 300 rows per shard, pg15.
    let native_elapsed_ns = 45_033_580;
    assert_eq!(s.snapshot(0).time_ns, native_elapsed_ns);
    let mut again = DemoSession::new("E", true, knobs()).unwrap();
    again.run_to_end();
    assert_eq!(again.snapshot(0).time_ns, native_elapsed_ns);
    assert_eq!(s.snapshot(0).total_time_ns, Some(native_elapsed_ns));
    let sync = {
        let mut x = DemoSession::new("E", false, knobs()).unwrap();
        x.run_to_end();
        x.snapshot(0).time_ns
    };
    assert!(native_elapsed_ns < sync);
    // The comparison (run in step mode, in slices) gives the same times.
    let c = pgasync::demo::session::compare("E", &knobs()).unwrap();
    assert_eq!((c.async_ns, c.sync_ns), (native_elapsed_ns, sync));
}

/// A session's comparison reuses its own finished run (only the other mode's is made):
/// the result is the comparison made from scratch, field for field, in both modes,
/// pg15 and improved, through a seek back after the end; before the end (nothing to
/// reuse) too.
#[wasm_bindgen_test(unsupported = test)]
fn a_sessions_comparison_reusing_its_run_is_the_fresh_one() {
    use pgasync::demo::session::CompareJob;
    let json = |c: &pgasync::demo::session::Comparison| serde_json::to_string(c).unwrap();
    for (scenario, behaviour) in [("E", None), ("M", None), ("E", Some("improved")), ("X", None)] {
        let mut k = knobs();
        if let Some(b) = behaviour {
            k = pgasync::knobs::from_json(&format!(
                r#"{{"shards":"4","rows_per_shard":"300","fetch_size":"100","behaviour":"{b}"}}"#
            ))
            .unwrap();
        }
        let fresh = json(&pgasync::demo::session::compare(scenario, &k).unwrap());
        for async_mode in [false, true] {
            let mut s = DemoSession::new(scenario, async_mode, k.clone()).unwrap();
            let from = |s: &DemoSession| {
                let mut job = CompareJob::for_session(s).unwrap();
                assert_eq!(
                    job.runs_to_make(),
                    if s.snapshot(0).total_steps.is_some() { 1 } else { 2 },
                    "{scenario} {async_mode}"
                );
                loop {
                    if let Some(c) = job.advance(1000).unwrap() {
                        return json(&c);
                    }
                }
            };
            assert_eq!(from(&s), fresh, "{scenario} {behaviour:?} async {async_mode}, not run");
            s.run_to_end();
            let total = s.snapshot(0).step;
            s.seek(total / 2).unwrap();
            assert_eq!(from(&s), fresh, "{scenario} {behaviour:?} async {async_mode}, run and sought back");
        }
    }
}

/// A scenario file (seed 003) loaded in slices, as the page does, and stepped: the same
/// rows and virtual times natively and in wasm.
#[wasm_bindgen_test(unsupported = test)]
fn a_scenario_file_runs_as_a_session() {
    use pgasync::coordinator_sql::script::{SqlLoad, SCENARIO_FILES};
    use pgasync::knobs::Source;
    let text = SCENARIO_FILES.iter().find(|(id, _)| *id == "M").expect("seed 003's file").1;
    let mut load = SqlLoad::new(text, pgasync::demo::session::DEMO_LIMITS).unwrap();
    let mut slices = 0;
    while !load.advance(4096).unwrap() {
        slices += 1;
    }
    assert!(slices >= 20, "{slices} slices for 100,000 rows");
    let sql = load.finish().unwrap();
    let scenario = sql.scenario(&Knobs::default(), Source::Json).unwrap();
    pgasync::demo::session::check_scenario_size(&scenario).unwrap();
    let mut s = DemoSession::with_scenario(scenario, "sql", true, Knobs::default()).unwrap();
    for _ in 0..5 {
        s.step_event();
    }
    assert_eq!(s.steps(), 5);
    s.run_to_end();
    let (cols, rows) = s.rows_page(0, 100);
    assert_eq!(cols, ["id", "name", "score"]);
    assert_eq!(rows.len(), 14, "LIMIT :rnd_limit (14 with the seed's random draws)");
    assert!(rows.iter().all(|r| r[2] == "100"), "the top scores");
    let native_elapsed_ns = 29_956_620;
    assert_eq!(s.snapshot(0).time_ns, native_elapsed_ns);
}

#[cfg(target_arch = "wasm32")]
mod sql_errors {
    use pgasync::demo::wasm_api::{check_sql, Session};
    use wasm_bindgen::{JsCast, JsValue};
    use wasm_bindgen_test::wasm_bindgen_test;

    fn prop(v: &JsValue, key: &str) -> JsValue {
        js_sys::Reflect::get(v, &JsValue::from_str(key)).unwrap()
    }

    /// A scenario file's error is a JS Error saying where, with `line`, `column` and
    /// `reason`; `checkSql` gives the same as `{message, line, column}`.
    #[wasm_bindgen_test]
    fn scenario_file_errors_say_where() {
        let text = "-- @shard s1\ncreate table t (a int);\n-- @coordinator\n\
                    create server s1 foreign data wrapper postgres_fdw;\n\
                    create foreign table ft (a int) server s1 options (table_name 't');\n\
                    -- @query\nselect b from ft;\n";
        let e = Session::from_sql(text, "async", "{}").err().expect("an unknown column fails");
        let err = e.dyn_ref::<js_sys::Error>().expect("an Error");
        let msg: String = err.message().into();
        assert!(msg.starts_with("line 7, column 8: column \"b\" does not exist"), "{msg}");
        assert_eq!(prop(&e, "line").as_f64(), Some(7.0));
        assert_eq!(prop(&e, "column").as_f64(), Some(8.0));
        assert_eq!(prop(&e, "reason").as_string().as_deref(), Some("column \"b\" does not exist"));
        let checked = check_sql(text, "{}").unwrap();
        assert_eq!(prop(&checked, "line").as_f64(), Some(7.0));
        assert!(check_sql(&text.replace("select b", "select a"), "{}").unwrap().is_null());
        let mut ok = Session::from_sql(&text.replace("select b", "select a"), "async", "{}").unwrap();
        ok.run_to_end();
        assert!(ok.is_done());
        // Too much text: refused before anything runs.
        let big = "-- x\n".repeat(300_000);
        let e = Session::from_sql(&big, "async", "{}").err().expect("too big");
        assert!(e.dyn_ref::<js_sys::Error>().is_some());
        assert!(prop(&e, "reason").as_string().unwrap().contains("at most 1048576"));
    }
}

#[cfg(target_arch = "wasm32")]
mod js_errors {
    use pgasync::demo::wasm_api::Session;
    use wasm_bindgen::{JsCast, JsValue};
    use wasm_bindgen_test::wasm_bindgen_test;

    fn message(e: wasm_bindgen::JsError) -> String {
        JsValue::from(e).dyn_into::<js_sys::Error>().unwrap().message().into()
    }

    #[wasm_bindgen_test]
    fn bad_scenario_and_bad_knobs_raise_errors_with_messages() {
        let e = Session::new("Z", "async", "{}").err().expect("unknown scenario fails");
        assert!(message(e).contains("unknown scenario \"Z\""));
        let e = Session::new("E", "async", r#"{"shards":0}"#).err().expect("zero shards fails");
        assert!(message(e).contains("shards"));
        let e = Session::new("E", "async", r#"{"fetch_size":"many"}"#).err().expect("bad JSON fails");
        assert!(message(e).contains("bad knobs"));
        let e = Session::new("E", "fast", "{}").err().expect("bad mode fails");
        assert!(message(e).contains("bad mode"));
        let mut ok = Session::new("E", "async", r#"{"rows_per_shard":50}"#).unwrap();
        ok.run_to_end();
        assert!(ok.is_done());
        assert!(ok.explain_text().contains("Async Foreign Scan"));
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn knobs_too_large_for_the_demo_are_refused_with_a_message() {
    let big = Knobs { shards: Some(64), rows_per_shard: Some(1_000_000), ..Default::default() };
    let err = DemoSession::new("E", true, big.clone()).err().expect("refused");
    assert!(err.contains("too many for the step-by-step demo"), "{err}");
    assert!(pgasync::demo::session::compare("E", &big).is_err());
    // Within the row cap but too many steps to record (fetch_size 1): refused before
    // anything runs, with the estimate.
    let slow = Knobs { shards: Some(4), rows_per_shard: Some(100_000), fetch_size: Some(1), ..Default::default() };
    let err = DemoSession::new("E", true, slow.clone()).err().expect("refused");
    assert!(err.contains("too big to record step by step") && err.contains("fetch_size=1"), "{err}");
    assert!(pgasync::demo::session::CompareJob::new("E", &slow).is_err());
}

/// A scenario file too big to record says so with the same figures on wasm32: a join's
/// bound (here every pair: each row of both sides has the same key) passes 2^32, and
/// was a saturated `usize` there (32 bits), so the page said "about 4294967295 steps"
/// (found running this suite on wasm32, issue 21).
#[wasm_bindgen_test(unsupported = test)]
fn a_join_too_big_to_record_gives_the_same_estimate_in_every_target() {
    use pgasync::coordinator_sql::script::SqlLoad;
    use pgasync::knobs::Source;
    let text = "-- @shard s1\ncreate table t1 (a int);\ninsert into t1 select 1 from generate_series(1, 100000) i;\n\
                -- @shard s2\ncreate table t2 (a int);\ninsert into t2 select 1 from generate_series(1, 100000) i;\n\
                -- @coordinator\ncreate extension postgres_fdw;\n\
                create server s1 foreign data wrapper postgres_fdw;\n\
                create server s2 foreign data wrapper postgres_fdw;\n\
                create user mapping for public server s1;\ncreate user mapping for public server s2;\n\
                create foreign table ft1 (a int) server s1 options (table_name 't1');\n\
                create foreign table ft2 (a int) server s2 options (table_name 't2');\n\
                -- @query\nselect ft1.a from ft1 join ft2 on ft1.a = ft2.a;\n";
    let mut load = SqlLoad::new(text, pgasync::demo::session::DEMO_LIMITS).unwrap();
    while !load.advance(100_000).unwrap() {}
    let scenario = load.finish().unwrap().scenario(&Knobs::default(), Source::Json).unwrap();
    let err = pgasync::demo::session::check_scenario_size(&scenario).unwrap_err();
    assert_eq!(
        err,
        "about 10000204052 steps (up to 200000 rows from the foreign scans, 10000000000 at the top of the plan, 2002 \
         FETCHes) is too big to record step by step (at most 300000): insert fewer rows, read fewer (a WHERE the \
         shards apply), or run it with `pgasync sql --file`"
    );
}

/// The EXPLAIN panel of a scenario file's run prints as `pgasync sql` prints it: a
/// plain SELECT with its estimates beside the actual figures (COSTS, PostgreSQL's
/// default), an EXPLAIN (ANALYZE, …) query with its own options, none ignored.
#[wasm_bindgen_test(unsupported = test)]
fn a_scenario_files_explain_panel_honours_its_explain_options() {
    use pgasync::coordinator_sql::SqlScenario;
    use pgasync::knobs::Source;
    let setup = "-- @shard s1\ncreate table t (a int);\ninsert into t select i from generate_series(1, 10) i;\n\
                 -- @coordinator\ncreate server s1 foreign data wrapper postgres_fdw options (async_capable 'true');\n\
                 create foreign table ft (a int) server s1 options (table_name 't');\n-- @query\n";
    let panel = |query: &str| {
        let sql = SqlScenario::load(&format!("{setup}{query}\n")).unwrap();
        let explain_as = sql.explain_statement(true);
        let scenario = sql.scenario(&Knobs::default(), Source::Json).unwrap();
        let mut s = DemoSession::with_explain(scenario, "sql", true, Knobs::default(), explain_as).unwrap();
        s.run_to_end();
        s.explain_text()
    };
    let plain = panel("select a from ft;");
    assert!(
        plain.starts_with("Foreign Scan on public.ft  (cost=100.00..197.75 rows=2925 width=4) (actual time="),
        "{plain}"
    );
    assert!(plain.contains("Remote SQL: SELECT a FROM public.t") && plain.contains("Execution Time:"), "{plain}");
    let off = panel("explain (analyze, costs off, timing off, summary off) select a from ft;");
    assert!(off.starts_with("Foreign Scan on ft (actual rows=10 loops=1)\n"), "{off}");
    assert!(!off.contains("Remote SQL") && !off.contains("cost=") && !off.contains("Execution Time"), "{off}");
    let json = panel("explain (analyze, costs off, format json) select a from ft;");
    assert!(json.trim_start().starts_with('[') && json.contains("\"Actual Rows\": 10"), "{json}");
    assert!(!json.contains("Total Cost"), "{json}");
}
