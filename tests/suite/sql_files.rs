//! The built-in scenarios written as scenario files (`frontend::script::SCENARIO_FILES`)
//! run exactly as the built-in generators: for D, E, X, R, t0, pl, pf0 and pf1, the SQL front end's plan on
//! the file's tables gives the same EXPLAIN ANALYZE as the built-in scenario at the
//! seeds' sizes (the bench's rows per shard) — node for node, counter for counter, virtual times included — in pg15
//! (sync and async) and improved (async), and the same rows.

use pgasync::behaviour::Preset;
use pgasync::clock::Clock;
use pgasync::coordinator_sql::script::SCENARIO_FILES;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::ExplainOptions;
use pgasync::knobs::Knobs;
use pgasync::knobs::Source;
use pgasync::scenario::Scenario;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test(unsupported = test)]
fn d_e_x_r_and_kyotaros_files_run_as_the_built_in_scenarios() {
    for (id, text) in
        SCENARIO_FILES.iter().filter(|(id, _)| ["D", "E", "X", "R", "t0", "pl", "pf0", "pf1"].contains(id))
    {
        let sql = SqlScenario::load(text).unwrap_or_else(|e| panic!("{id}: {e}"));
        for behaviour in [Preset::Pg15, Preset::Improved] {
            let k = Knobs { behaviour: Some(behaviour), ..Default::default() };
            let from_file = sql.scenario(&k, Source::Json).unwrap_or_else(|e| panic!("{id}: {e}"));
            // The files hold the seeds' sizes: the bench's rows per shard.
            let built_in = Scenario::build(id, &pgasync::scenario::bench_size(id, &k)).unwrap();
            // pg15 in both modes; improved (whose knobs act in async mode) async only.
            let modes: &[bool] = if behaviour == Preset::Pg15 { &[false, true] } else { &[true] };
            for &async_mode in modes {
                let ctx = format!("{id} {behaviour:?} async={async_mode}");
                let run = |s: &Scenario| {
                    let mut r = s.start(async_mode, Clock::virtual_clock(), false).unwrap();
                    r.keep_rows = true;
                    r.run_to_end().unwrap_or_else(|e| panic!("{ctx}: {e}"));
                    r
                };
                let (a, b) = (run(&from_file), run(&built_in));
                let opts = ExplainOptions { verbose: true, counters: true };
                assert_eq!(a.explain_text_with(&opts), b.explain_text_with(&opts), "{ctx}: EXPLAIN differs");
                assert_eq!(a.rows, b.rows, "{ctx}: rows differ");
                assert!(built_in.matches_reference(&a.rows), "{ctx}: the file's rows are not the reference");
            }
        }
    }
}

/// K's file names its relations as partitioned tables (po, pt), so its EXPLAIN is not
/// the built-in K's; its rows are, in every design.
#[wasm_bindgen_test(unsupported = test)]
fn the_k_file_gives_the_built_in_k_rows() {
    let text = SCENARIO_FILES.iter().find(|(id, _)| *id == "K").expect("K's file").1;
    let sql = SqlScenario::load(text).unwrap();
    for through in [false, true] {
        let k = Knobs { async_through_nodes: Some(through), ..Default::default() };
        let from_file = sql.scenario(&k, Source::Json).unwrap();
        let built_in = Scenario::build("K", &pgasync::scenario::bench_size("K", &k)).unwrap();
        for async_mode in [false, true] {
            let mut r = from_file.start(async_mode, Clock::virtual_clock(), false).unwrap();
            r.keep_rows = true;
            r.run_to_end().unwrap();
            assert!(built_in.matches_reference(&r.rows), "K file through={through} async={async_mode}");
            let text = r.explain_text();
            assert!(text.contains("Nested Loop") && text.contains("->  Materialize"), "{text}");
        }
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn every_file_loads_and_plans() {
    for (id, text) in SCENARIO_FILES {
        let sql = SqlScenario::load(text).unwrap_or_else(|e| panic!("{id}: {e}"));
        sql.plan().unwrap_or_else(|e| panic!("{id}: {e}"));
    }
}
