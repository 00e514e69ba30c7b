//! Exercise 4 (exercises/4-hashjoin-probe): Hash Join's probe (outer) side under
//! `async_through_nodes`. Robert Haas's plan R (seed 000: an Append over four Hash Joins,
//! each a Foreign Scan on its own server probing a hash of a local table) overlaps its
//! four remote waits only if each Hash Join asks its Foreign Scan for the next outer row
//! by request (ExecAsyncRequest / ExecAsyncResponse, `AsyncInputs::next`) instead of
//! ExecProcNode; and Amit Khandekar's hazard (scenario H) exists only where a Hash Join
//! waits for its probe side's request. These tests fail while the Hash Join asks its
//! probe side with ExecProcNode.

use pgasync::clock::Clock;
use pgasync::executor::estate::ExecError;
use pgasync::executor::exec_async::AsyncState;
use pgasync::knobs::Knobs;
use pgasync::run::QueryRun;
use pgasync::scenario::Scenario;
use pgasync::trace::TraceKind;
use wasm_bindgen_test::wasm_bindgen_test;

fn knobs(through: bool, unguarded: bool) -> Knobs {
    Knobs {
        rows_per_shard: Some(300),
        fetch_size: Some(100),
        async_through_nodes: Some(through),
        no_descendant_check: Some(unguarded),
        ..Default::default()
    }
}

/// The run to its end (in the demo's step mode or not), or its error.
fn run(id: &str, k: &Knobs, step_mode: bool) -> (Scenario, QueryRun, Result<(), ExecError>) {
    let s = Scenario::build(id, k).unwrap_or_else(|e| panic!("{id}: {e}"));
    let mut r = s.start(true, Clock::virtual_clock(), true).unwrap_or_else(|e| panic!("{id}: {e}"));
    r.es.step_mode = step_mode;
    let out = r.run_to_end();
    (s, r, out)
}

/// The most connections with a FETCH in flight at one moment.
fn fetches_in_flight(r: &QueryRun) -> usize {
    let (mut now, mut most) = (std::collections::HashSet::new(), 0);
    for e in &r.es.trace.events {
        match &e.kind {
            TraceKind::Send { conn, sql, queued: false, .. } if sql.starts_with("FETCH") => {
                now.insert(*conn);
            }
            TraceKind::Response { conn, sql, .. } if sql.starts_with("FETCH") => {
                now.remove(conn);
            }
            _ => {}
        }
        most = most.max(now.len());
    }
    most
}

#[wasm_bindgen_test(unsupported = test)]
fn r_hash_joins_ask_their_probe_sides_by_request() {
    for step_mode in [false, true] {
        let (_, r, out) = run("R", &knobs(true, false), step_mode);
        out.unwrap_or_else(|e| panic!("R, async_through_nodes: {e}"));
        // Each Hash Join (the Append's children, ids after the Append's) sends its
        // Foreign Scan requests that go Waiting: the FETCH left without waiting.
        let shape = &r.es.shape;
        let mut joins_asking = std::collections::BTreeSet::new();
        for e in &r.es.trace.events {
            if let TraceKind::Request { requestor, requestee, to: AsyncState::Waiting, .. } = &e.kind {
                if shape.name[*requestor] == "Hash Join" && shape.name[*requestee] == "Foreign Scan" {
                    joins_asking.insert(*requestor);
                }
            }
        }
        assert_eq!(
            joins_asking.len(),
            4,
            "step_mode={step_mode}: every Hash Join must ask its Foreign Scan (its probe side) by ExecAsyncRequest \
             and see the request Waiting; these did: {joins_asking:?}"
        );
        // Every request taken with ExecAsyncResponse: none left Waiting or Callback pending.
        for q in &r.es.requests {
            assert!(
                !matches!(q.state, AsyncState::Waiting | AsyncState::CallbackPending),
                "step_mode={step_mode}: request {} ({} → {}) left {:?}",
                q.id,
                shape.name[q.requestor],
                shape.name[q.requestee],
                q.state
            );
        }
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn r_joins_fetch_concurrently_and_return_the_reference() {
    let (_, pg, out) = run("R", &knobs(false, false), false);
    out.unwrap();
    assert_eq!(fetches_in_flight(&pg), 1, "PostgreSQL 15: one FETCH at a time on R");
    for step_mode in [false, true] {
        let (s, r, out) = run("R", &knobs(true, false), step_mode);
        out.unwrap_or_else(|e| panic!("R, async_through_nodes, step_mode={step_mode}: {e}"));
        assert!(s.matches_reference(&r.rows), "step_mode={step_mode}: R's rows differ from the reference");
        assert_eq!(
            fetches_in_flight(&r),
            4,
            "step_mode={step_mode}: the four joins' FETCHes must be in flight together"
        );
        assert!(r.elapsed_ns() < pg.elapsed_ns(), "virtual clock: {} vs pg15 {}", r.elapsed_ns(), pg.elapsed_ns());
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn h_without_the_descendant_check_re_enters_at_the_probe() {
    // Guarded: every row.
    let (s, r, out) = run("H", &knobs(true, false), false);
    out.unwrap_or_else(|e| panic!("H, async_through_nodes: {e}"));
    assert!(s.matches_reference(&r.rows), "H's rows differ from the reference");
    // Unguarded: the Hash Join waits in place for its probe side's request while ft1,
    // the Append's own child, has input: Amit Khandekar's hazard.
    let (s, r, out) = run("H", &knobs(true, true), false);
    assert_eq!(
        out,
        Err(ExecError::Reentry("Append re-entered while executing its child Hash Join".into())),
        "without the descendant check the Hash Join's wait for its probe side must re-enter the Append"
    );
    assert!(r.rows.iter().all(|row| s.reference.contains(row)), "no wrong row before the hazard");
}
