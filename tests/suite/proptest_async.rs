//! Property tests: for random knobs, sync and async runs of a scenario both succeed,
//! return the reference result, and leave the executor, the connections and the event
//! loop clean.

use pgasync::clock::Clock;
use pgasync::executor::estate::ExecError;
use pgasync::executor::exec_async::AsyncState;
use pgasync::knobs::{Knobs, Sharing};
use pgasync::run::{Phase, QueryRun};
use pgasync::scenario::Scenario;
use pgasync::trace::TraceKind;
use pgasync::types::Datum;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use wasm_bindgen_test::wasm_bindgen_test;

const IDS: [&str; 7] = ["C", "D", "E", "F", "G", "M", "X"];

/// Dedicated, shared, or shared with the `pipeline` knob: (sharing, pipeline).
fn sharing_strategy() -> impl Strategy<Value = (Sharing, Option<bool>)> {
    prop_oneof![Just((Sharing::Dedicated, None)), Just((Sharing::Shared, None)), Just((Sharing::Shared, Some(true))),]
}

fn case_strategy() -> impl Strategy<Value = (&'static str, Knobs)> {
    (
        prop::sample::select(IDS.to_vec()),
        1usize..=6,
        0usize..=400,
        1usize..=150,
        0.0f64..5.0,
        prop::collection::vec(0.0f64..5.0, 6),
        sharing_strategy(),
        1.0f64..1000.0,
    )
        .prop_map(|(id, shards, rows, fetch, rtt, per_shard, (sharing, pipeline), bw)| {
            let knobs = Knobs {
                shards: Some(shards),
                rows_per_shard: Some(rows),
                fetch_size: Some(fetch),
                rtt_ms: Some(rtt),
                rtt_ms_per_shard: Some(per_shard[..shards].to_vec()),
                bandwidth_mbps: Some(bw),
                sharing: Some(sharing),
                pipeline,
                ..Default::default()
            };
            (id, knobs)
        })
}

fn sorted(rows: &[Vec<Datum>]) -> Vec<Vec<Datum>> {
    let mut v = rows.to_vec();
    v.sort();
    v
}

/// Everything a finished run must have cleaned up; Err describes the first problem.
fn check_clean(run: &QueryRun, mode: &str) -> Result<(), TestCaseError> {
    prop_assert!(run.leftovers().is_empty(), "{}: leftovers {:?}", mode, run.leftovers());
    for r in &run.es.requests {
        prop_assert!(
            matches!(r.state, AsyncState::Complete | AsyncState::Idle | AsyncState::Cancelled),
            "{}: request {} left in state {:?}",
            mode,
            r.id,
            r.state
        );
    }
    for c in &run.es.conns {
        prop_assert!(!c.is_busy(), "{}: connection {} busy", mode, c.id);
        prop_assert!(!c.xact_open, "{}: connection {} xact open", mode, c.id);
    }
    prop_assert!(run.es.event_loop.is_empty(), "{}: event loop not empty", mode);
    for e in &run.es.trace.events {
        if let TraceKind::Wait { conns } = &e.kind {
            prop_assert!(!conns.is_empty(), "{}: Wait with no connections at {} ns", mode, e.time_ns);
        }
    }
    // Trace times never go backwards on the virtual clock.
    prop_assert!(
        run.es.trace.events.windows(2).all(|w| w[0].time_ns <= w[1].time_ns),
        "{}: trace times go backwards",
        mode
    );
    Ok(())
}

fn run(s: &Scenario, async_mode: bool) -> Result<QueryRun, TestCaseError> {
    let mode = if async_mode { "async" } else { "sync" };
    let mut run = s
        .start(async_mode, Clock::virtual_clock(), true)
        .map_err(|e| TestCaseError::fail(format!("{mode}: start failed: {e}")))?;
    run.run_to_end().map_err(|e| TestCaseError::fail(format!("{mode}: run failed: {e}")))?;
    check_clean(&run, mode)?;
    Ok(run)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        // No regression files next to the tests: failures print their minimal input.
        failure_persistence: None,
        // Same cases on every run (and machine): the suite is deterministic.
        rng_seed: RngSeed::Fixed(0x5eed_a5c0),
        ..ProptestConfig::with_cases(48)
    }
}

proptest! {
    #![proptest_config(config())]

    #[wasm_bindgen_test(unsupported = test)]
    fn sync_and_async_agree_and_clean_up((id, knobs) in case_strategy()) {
        let s = Scenario::build(id, &knobs)
            .map_err(|e| TestCaseError::fail(format!("build {id}: {e}")))?;
        let sync = run(&s, false)?;
        let asy = run(&s, true)?;
        prop_assert!(s.matches_reference(&sync.rows), "sync rows do not match the reference");
        prop_assert!(s.matches_reference(&asy.rows), "async rows do not match the reference");
        prop_assert_eq!(sync.rows.len(), s.reference.len());
        prop_assert_eq!(asy.rows.len(), s.reference.len());
        if s.ordered {
            // Ties may come in any order, but the sort keys must come in the same order.
            let k = s.order_key.unwrap();
            let keys = |rows: &[Vec<Datum>]| rows.iter().map(|r| r[k].clone()).collect::<Vec<_>>();
            prop_assert_eq!(keys(&sync.rows), keys(&asy.rows));
        } else {
            prop_assert_eq!(sorted(&sync.rows), sorted(&asy.rows));
        }
    }

    /// The same runs, twice: identical traces and times (virtual clock).
    #[wasm_bindgen_test(unsupported = test)]
    fn async_runs_are_deterministic((id, knobs) in case_strategy()) {
        let s = Scenario::build(id, &knobs)
            .map_err(|e| TestCaseError::fail(format!("build {id}: {e}")))?;
        let a = run(&s, true)?;
        let b = run(&s, true)?;
        prop_assert!(a.es.trace.events == b.es.trace.events, "traces differ");
        prop_assert_eq!(a.elapsed_ns(), b.elapsed_ns());
        prop_assert_eq!(a.rows, b.rows);
    }
}

proptest! {
    #![proptest_config(config())]

    /// A shard that fails after some rows: the run either finishes (the failure point
    /// was never reached) with the reference result, or fails with the injected remote
    /// error; either way nothing is left outstanding.
    #[wasm_bindgen_test(unsupported = test)]
    fn injected_failure_leaves_nothing_outstanding(
        (id, knobs) in case_strategy(),
        server_pick in 0usize..64,
        fail_after in 0u64..600,
        async_mode in any::<bool>(),
    ) {
        let s = Scenario::build(id, &knobs)
            .map_err(|e| TestCaseError::fail(format!("build {id}: {e}")))?;
        let mut run = s
            .start(async_mode, Clock::virtual_clock(), true)
            .map_err(|e| TestCaseError::fail(format!("start: {e}")))?;
        let n = run.host.servers.len();
        prop_assert!(n > 0);
        run.host.servers[server_pick % n].fail_after_rows = Some(fail_after);
        let mode = if async_mode { "async" } else { "sync" };
        match run.run_to_end() {
            Ok(()) => prop_assert!(s.matches_reference(&run.rows), "{}: wrong rows", mode),
            Err(ExecError::Remote(e)) => {
                prop_assert!(e.message.contains("injected failure"), "{}: {}", mode, e);
                prop_assert!(
                    run.es.trace.events.iter().any(|e| matches!(e.kind, TraceKind::Error { .. })),
                    "{}: no Error event", mode
                );
            }
            Err(e) => prop_assert!(false, "{}: unexpected error {}", mode, e),
        }
        check_clean(&run, mode)?;
    }

    /// A rescan in the middle of an async run whose queries are never queued behind
    /// another scan's (dedicated or pipelined connections) drops what was in flight;
    /// the run then returns the whole result again and cleans up.
    #[wasm_bindgen_test(unsupported = test)]
    fn rescan_mid_run_async_unqueued(
        (id, knobs) in case_strategy(),
        steps in 0usize..60,
        pipelined in any::<bool>(),
    ) {
        let (sharing, pipeline) = if pipelined { (Sharing::Shared, Some(true)) } else { (Sharing::Dedicated, None) };
        let knobs = Knobs { sharing: Some(sharing), pipeline, ..knobs };
        rescan_case(id, &knobs, steps, true)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..config() })]

    /// The same in every mode and sharing. About one case in 20 hits one of the two
    /// ForeignScan rescan bugs reproduced by tests/suite/scenarios.rs `rescan_while_*`.
    #[wasm_bindgen_test(unsupported = test)]

    fn rescan_mid_run_gives_the_reference(
        (id, knobs) in case_strategy(),
        steps in 0usize..60,
        async_mode in any::<bool>(),
    ) {
        rescan_case(id, &knobs, steps, async_mode)?;
    }
}

/// Steps a run, rescans it if it is still executing, runs it to the end and checks it.
fn rescan_case(id: &str, knobs: &Knobs, steps: usize, async_mode: bool) -> Result<(), TestCaseError> {
    let s = Scenario::build(id, knobs).map_err(|e| TestCaseError::fail(format!("build {id}: {e}")))?;
    let mut run =
        s.start(async_mode, Clock::virtual_clock(), true).map_err(|e| TestCaseError::fail(format!("start: {e}")))?;
    for _ in 0..steps {
        if run.phase != Phase::Executing {
            break;
        }
        run.step();
    }
    let mode = if async_mode { "async" } else { "sync" };
    if run.phase == Phase::Executing {
        run.rescan().map_err(|e| TestCaseError::fail(format!("{mode}: rescan failed: {e}")))?;
        prop_assert!(run.rows.is_empty());
    }
    run.run_to_end().map_err(|e| TestCaseError::fail(format!("{mode}: run failed after rescan: {e}")))?;
    prop_assert!(s.matches_reference(&run.rows), "{}: wrong rows after rescan", mode);
    check_clean(&run, mode)
}

/// `Scenario::lower_bound_ns` is documented as the lower bound of an async run, but it
/// charges the sync run's `down_transfer_ns`, which counts every response (startup,
/// BEGIN, DECLARE, CLOSE, COMMIT) and not only the FETCHes' rows. An async run sends
/// fewer statements (BEGIN + DECLARE + first FETCH in one Query, no CLOSE), so on a
/// bandwidth-bound pipelined link it finishes before the "bound".
#[wasm_bindgen_test(unsupported = test)]

fn async_never_beats_lower_bound_bandwidth_bound_pipelined() {
    let knobs = Knobs {
        shards: Some(6),
        rows_per_shard: Some(73),
        fetch_size: Some(25),
        rtt_ms: Some(0.0),
        bandwidth_mbps: Some(1.0),
        sharing: Some(Sharing::Shared),
        pipeline: Some(true),
        ..Default::default()
    };
    let s = Scenario::build("D", &knobs).unwrap();
    let mut sync = s.start(false, Clock::virtual_clock(), false).unwrap();
    sync.run_to_end().unwrap();
    let mut asy = s.start(true, Clock::virtual_clock(), false).unwrap();
    asy.run_to_end().unwrap();
    let bound = s.lower_bound_ns(&sync);
    // Fails today: async 54_785_450 ns < bound 55_632_000 ns.
    assert!(asy.elapsed_ns() >= bound, "async {} ns below the lower bound {} ns", asy.elapsed_ns(), bound);
}
