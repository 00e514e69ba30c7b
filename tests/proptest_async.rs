//! Property tests: for random knobs, sync and async runs of a scenario both succeed,
//! return the reference result, and leave the executor, the connections and the event
//! loop clean.

use pgasync::clock::Clock;
use pgasync::exec_async::AsyncState;
use pgasync::run::QueryRun;
use pgasync::scenario::{Knobs, Scenario, Sharing};
use pgasync::trace::TraceKind;
use pgasync::types::Datum;
use proptest::prelude::*;

const IDS: [&str; 7] = ["C", "D", "E", "F", "G", "M", "X"];

fn sharing_strategy() -> impl Strategy<Value = Sharing> {
    prop_oneof![
        Just(Sharing::Dedicated),
        Just(Sharing::Shared),
        Just(Sharing::Pipelined),
    ]
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
        .prop_map(|(id, shards, rows, fetch, rtt, per_shard, sharing, bw)| {
            let knobs = Knobs {
                shards: Some(shards),
                rows_per_shard: Some(rows),
                fetch_size: Some(fetch),
                rtt_ms: Some(rtt),
                rtt_ms_per_shard: Some(per_shard[..shards].to_vec()),
                bandwidth_mbps: Some(bw),
                sharing: Some(sharing),
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
    prop_assert!(
        run.leftovers().is_empty(),
        "{}: leftovers {:?}",
        mode,
        run.leftovers()
    );
    for r in &run.es.requests {
        prop_assert!(
            matches!(
                r.state,
                AsyncState::Complete | AsyncState::Idle | AsyncState::Cancelled
            ),
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
    prop_assert!(
        run.es.event_loop.is_empty(),
        "{}: event loop not empty",
        mode
    );
    for e in &run.es.trace.events {
        if let TraceKind::Wait { conns } = &e.kind {
            prop_assert!(
                !conns.is_empty(),
                "{}: Wait with no connections at {} ns",
                mode,
                e.time_ns
            );
        }
    }
    // Trace times never go backwards on the virtual clock.
    prop_assert!(
        run.es
            .trace
            .events
            .windows(2)
            .all(|w| w[0].time_ns <= w[1].time_ns),
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
    run.run_to_end()
        .map_err(|e| TestCaseError::fail(format!("{mode}: run failed: {e}")))?;
    check_clean(&run, mode)?;
    Ok(run)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
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
        // The async run never beats the model's lower bound.
        let bound = s.lower_bound_ns(&sync);
        prop_assert!(
            asy.elapsed_ns() >= bound,
            "async {} ns below the lower bound {} ns", asy.elapsed_ns(), bound
        );
    }
}
