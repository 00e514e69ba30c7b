//! The behaviours DESIGN.md §2 says must hold, one named test each (seeds 000–004).
//! The code exercises (exercises/*/exercise.conf) name their tests here: each must
//! fail without its exercise's piece (scripts/check_exercises.sh checks it).

use pgasync::behaviour::Preset;
use pgasync::clock::Clock;
use pgasync::executor::estate::{EState, ExecResult};
use pgasync::executor::exec_async::{
    exec_async_configure_wait, exec_async_request_pending, new_request, AsyncState, WaitContext,
};
use pgasync::executor::{ExecNode, ExecStatus, PlanState};
use pgasync::host::WaitingHost;
use pgasync::instrument::ExplainNode;
use pgasync::knobs::{Knobs, Sharing};
use pgasync::remote::{ForeignServer, ServerOptions};
use pgasync::run::QueryRun;
use pgasync::scenario::Scenario;
use pgasync::trace::TraceKind;
use pgasync::types::Datum;
use wasm_bindgen_test::wasm_bindgen_test;

fn knobs(shards: usize, rows: usize) -> Knobs {
    Knobs { shards: Some(shards), rows_per_shard: Some(rows), ..Default::default() }
}

fn run(id: &str, k: &Knobs, async_mode: bool) -> (Scenario, QueryRun) {
    let s = Scenario::build(id, k).unwrap();
    let mut r = s.start(async_mode, Clock::virtual_clock(), true).unwrap();
    r.run_to_end().unwrap();
    assert!(s.matches_reference(&r.rows), "{id}: result differs from the reference");
    assert!(r.leftovers().is_empty(), "{id}: {:?}", r.leftovers());
    (s, r)
}

/// Index of the first trace event matching `f`.
fn first(r: &QueryRun, f: impl Fn(&TraceKind) -> bool) -> Option<(usize, u64)> {
    r.es.trace.events.iter().enumerate().find(|(_, e)| f(&e.kind)).map(|(i, e)| (i, e.time_ns))
}

#[wasm_bindgen_test(unsupported = test)]
fn append_starts_async_requests_before_sync_children() {
    // Seed 004: Append over one foreign and one local partition.
    let (_, r) = run("X", &knobs(1, 5000), true);
    let seqscan = r.explain().children[1].children[0].id;
    let (request_at, _) = first(&r, |k| matches!(k, TraceKind::Request { to: AsyncState::Waiting, .. })).unwrap();
    let (local_at, _) = first(&r, |k| matches!(k, TraceKind::NodeStart { node } if *node == seqscan)).unwrap();
    assert!(request_at < local_at, "the async request must be sent before the local child starts");
}

#[wasm_bindgen_test(unsupported = test)]
fn append_runs_sync_children_while_remote_is_in_flight() {
    let (_, r) = run("X", &knobs(1, 5000), true);
    let seqscan = r.explain().children[1].children[0].id;
    let (_, local_start) = first(&r, |k| matches!(k, TraceKind::NodeStart { node } if *node == seqscan)).unwrap();
    // The DECLARE was waited for (PostgreSQL 15); the FETCH is in flight meanwhile.
    let (_, remote_answer) =
        first(&r, |k| matches!(k, TraceKind::Response { sql, .. } if sql.starts_with("FETCH"))).unwrap();
    assert!(local_start < remote_answer, "local work must start before the remote answer arrives");
    let (_, sync) = run("X", &knobs(1, 5000), false);
    assert!(r.elapsed_ns() < sync.elapsed_ns(), "overlap must make the async run faster");
}

#[wasm_bindgen_test(unsupported = test)]
fn merge_append_is_synchronous_in_postgres_15() {
    let (_, r) = run("M", &knobs(4, 2000), true);
    assert!(r.es.requests.is_empty(), "PostgreSQL 15's MergeAppend sends no async requests");
    let tree = r.explain();
    assert!(tree.children[0].children.iter().all(|c| !c.async_capable));
}

#[wasm_bindgen_test(unsupported = test)]
fn merge_append_asks_every_child_for_its_first_row_concurrently() {
    // Seed 003's async MergeAppend, with the first statement not waited for and
    // several FETCHes in flight on a shared connection (the improved preset).
    let k = Knobs { behaviour: Some(Preset::Improved), ..knobs(4, 2000) };
    let (_, r) = run("M", &k, true);
    let (first_answer, _) =
        first(&r, |k| matches!(k, TraceKind::Response { sql, .. } if sql.contains("FETCH"))).unwrap();
    let first_fetches = r.es.trace.events[..first_answer]
        .iter()
        .filter(|e| matches!(&e.kind, TraceKind::Send { sql, .. } if sql.contains("FETCH")))
        .count();
    assert_eq!(first_fetches, 4, "all four first FETCHes go out before any answer arrives");
}

#[wasm_bindgen_test(unsupported = test)]
fn merge_append_requests_next_row_only_from_the_consumed_child() {
    // Seed 003's async MergeAppend (the knob; PostgreSQL 15's sends no requests).
    let k = Knobs { async_merge_append: Some(true), ..knobs(4, 2000) };
    let (_, r) = run("M", &k, true);
    let tree = r.explain();
    let merge = &tree.children[0];
    let mut total_requests = 0;
    for child in &merge.children {
        let requests = child.instr.remote.requests;
        total_requests += requests;
        assert!(requests > 0, "{}: the async MergeAppend sent it no request", child.id);
        assert!(
            requests <= child.instr.ntuples + 1,
            "{}: {requests} requests for {} rows",
            child.id,
            child.instr.ntuples
        );
    }
    assert!(total_requests <= merge.instr.ntuples + merge.children.len() as u64);
}

/// The most FETCHes in flight at once, over all connections.
fn max_fetches_in_flight(r: &QueryRun) -> usize {
    let (mut now, mut max) = (0usize, 0);
    for e in &r.es.trace.events {
        match &e.kind {
            TraceKind::Send { sql, .. } if sql.contains("FETCH ") => {
                now += 1;
                max = max.max(now);
            }
            TraceKind::Response { sql, .. } if sql.contains("FETCH ") => now -= 1,
            _ => {}
        }
    }
    max
}

#[wasm_bindgen_test(unsupported = test)]
fn async_merge_append_overlaps_the_first_fetches_in_pg15() {
    // PostgreSQL 15 with only the async_merge_append knob, a server per partition:
    // each child's DECLARE is still waited for, but its FETCH is not, so the next
    // child's DECLARE and FETCH go out while it is in flight. The synchronous
    // MergeAppend waits for every FETCH: never two in flight.
    let k = |on| Knobs { async_merge_append: Some(on), sharing: Some(Sharing::Dedicated), ..knobs(4, 2000) };
    let (_, sync_merge) = run("M", &k(false), true);
    let (_, async_merge) = run("M", &k(true), true);
    assert_eq!(max_fetches_in_flight(&sync_merge), 1);
    let tree = async_merge.explain();
    let children = &tree.children[0].children;
    assert!(children.iter().all(|c| c.async_capable), "the partitions are Async Foreign Scans");
    let overlap = max_fetches_in_flight(&async_merge);
    assert!(overlap >= 2, "with the knob at most {overlap} FETCH in flight at once");
    assert!(async_merge.execution_ns() < sync_merge.execution_ns(), "the overlap must save time");
}

#[wasm_bindgen_test(unsupported = test)]
fn shared_connection_has_one_query_in_flight() {
    let k = Knobs { sharing: Some(Sharing::Shared), ..knobs(4, 1000) };
    let (_, r) = run("D", &k, true);
    let stats = r.host.link_stats();
    assert_eq!(stats.len(), 1, "one server, one connection");
    assert_eq!(stats[0].max_in_flight, 1);
    // With the pipeline knob the same plan keeps several FETCHes on the wire.
    let k = Knobs { pipeline: Some(true), ..knobs(4, 1000) };
    let (_, r) = run("D", &k, true);
    assert!(r.host.link_stats()[0].max_in_flight > 1);
}

#[wasm_bindgen_test(unsupported = test)]
fn scans_sharing_a_busy_connection_wait_for_the_pending_request_and_none_waits_forever() {
    // Seed 000: four scans on one connection, fetch-ahead on: a scan that needs the
    // busy connection queues behind the pending request; every wait has an event.
    for fetch in [1, 7, 100] {
        let k = Knobs { sharing: Some(Sharing::Shared), fetch_size: Some(fetch), ..knobs(4, 300) };
        let (_, r) = run("F", &k, true);
        for e in &r.es.trace.events {
            if let TraceKind::Wait { conns } = &e.kind {
                assert!(!conns.is_empty());
            }
        }
        // pendingAreq: nobody queues a statement behind another scan's FETCH; the
        // scan that needs the connection drains it first (process_pending_request).
        assert!(!r.es.trace.events.iter().any(|e| matches!(e.kind, TraceKind::Send { queued: true, .. })));
        assert_eq!(r.host.link_stats()[0].max_in_flight, 1);
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn waiting_on_nothing_is_an_error_not_a_hang() {
    let s = Scenario::build("E", &knobs(2, 10)).unwrap();
    let mut r = s.start(true, Clock::virtual_clock(), false).unwrap();
    let err = r.host.wait(&mut r.es, &[]).unwrap_err();
    assert!(err.to_string().contains("empty set"), "{err}");
    let err = r.host.wait(&mut r.es, &[0]).unwrap_err();
    assert!(err.to_string().contains("nothing is in flight"), "{err}");
}

fn estate_with_one_request() -> (EState, usize) {
    let servers = vec![ForeignServer {
        name: "s1".into(),
        options: ServerOptions { async_capable: false, fetch_size: pgasync::knobs::DEFAULT_FETCH_SIZE },
    }];
    let mut es = EState::new(Clock::virtual_clock(), servers, true, true);
    es.instr.resize(2, Default::default());
    let r = new_request(&mut es, 0, 1, 0);
    (es, r)
}

/// A requestee whose FETCH is always the one in flight on connection 0.
#[derive(Clone)]
struct WaitsOnConnectionZero;

impl ExecNode for WaitsOnConnectionZero {
    fn exec_next(&mut self, _es: &mut EState) -> ExecResult<ExecStatus> {
        Ok(ExecStatus::Done)
    }
    fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
        Ok(())
    }
    fn exec_end(&mut self, _es: &mut EState) {}
    fn slot(&self) -> &[Datum] {
        &[]
    }
    fn explain(&self, _e: &mut ExplainNode) {}
    fn async_configure_wait(&mut self, es: &mut EState, _r: usize, _ctx: &WaitContext) -> ExecResult<bool> {
        es.event_loop.add_wait_conn(0);
        Ok(true)
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn a_request_is_never_queued_twice() {
    // Seed 001: "the same node can be inserted in the queue more than once".
    let (mut es, r) = estate_with_one_request();
    exec_async_request_pending(&mut es, r, 0);
    assert_eq!(es.requests[r].state, AsyncState::Waiting);
    let mut requestee = PlanState { id: 1, node: Box::new(WaitsOnConnectionZero) };
    let ctx = WaitContext::default();
    assert!(exec_async_configure_wait(&mut es, r, &mut requestee, &ctx).unwrap());
    assert!(exec_async_configure_wait(&mut es, r, &mut requestee, &ctx).unwrap());
    assert_eq!(es.event_loop.waiting().count(), 1);
    assert_eq!(es.event_loop.wait_set(), &[0]);
}

#[wasm_bindgen_test(unsupported = test)]
fn a_request_that_waits_over_several_turns_is_queued_and_notified_once() {
    // Seed 001 in a whole run: a request stays Waiting over several event-loop turns
    // (its shard answers later than the others) and is configured again on each; it
    // must still be in the waiting queue once, so it is notified once.
    let k = Knobs { fetch_size: Some(10), rtt_ms_per_shard: Some(vec![1.0, 3.0, 7.0, 0.5]), ..knobs(4, 200) };
    let s = Scenario::build("E", &k).unwrap();
    // The whole run: no request notified twice, the right rows.
    let mut r = s.start(true, Clock::virtual_clock(), true).unwrap();
    if let Err(e) = r.run_to_end() {
        panic!("the run failed: {e}");
    }
    assert!(s.matches_reference(&r.rows));
    assert!(r.leftovers().is_empty(), "{:?}", r.leftovers());
    // Step by step: the queue never holds a request twice, and the case arises (a
    // request still queued when the host waits is configured again on the next turn).
    let mut r = s.start(true, Clock::virtual_clock(), true).unwrap();
    let mut carried_over = 0;
    while !r.is_done() {
        let step = r.step();
        let queue: Vec<usize> = r.es.event_loop.waiting().collect();
        for (i, q) in queue.iter().enumerate() {
            assert!(!queue[..i].contains(q), "request {q} is in the waiting queue twice: {queue:?}");
        }
        if step == pgasync::run::Step::Waited && !queue.is_empty() {
            carried_over += 1;
        }
    }
    assert!(carried_over > 0, "no request stayed queued over a wait: the case is not exercised");
}

#[wasm_bindgen_test(unsupported = test)]
fn waiting_queue_is_first_come_first_served() {
    let (mut es, _) = estate_with_one_request();
    for r in [5, 3, 9] {
        assert!(es.event_loop.enqueue(r));
    }
    assert!(!es.event_loop.enqueue(3));
    assert_eq!(es.event_loop.waiting().collect::<Vec<_>>(), vec![5, 3, 9]);
}

#[wasm_bindgen_test(unsupported = test)]
fn events_handled_per_turn_are_bounded() {
    let s = Scenario::build("E", &Knobs { fetch_size: Some(10), ..knobs(8, 200) }).unwrap();
    let mut r = s.start(true, Clock::virtual_clock(), false).unwrap();
    r.es.event_loop.max_events = 2;
    r.run_to_end().unwrap();
    assert!(s.matches_reference(&r.rows));
    assert_eq!(r.es.event_loop.max_fired, 2, "never more than the bound, and the bound was reached");
    // The default bound is PostgreSQL's EVENT_BUFFER_SIZE.
    let s = Scenario::build("E", &Knobs { fetch_size: Some(10), ..knobs(32, 50) }).unwrap();
    let mut r = s.start(true, Clock::virtual_clock(), false).unwrap();
    r.run_to_end().unwrap();
    assert!(r.es.event_loop.max_fired <= pgasync::executor::event_loop::EVENT_BUFFER_SIZE);
    assert!(s.matches_reference(&r.rows));
}

#[wasm_bindgen_test(unsupported = test)]
fn rescan_cancels_outstanding_requests_and_leaks_nothing() {
    let s = Scenario::build("E", &knobs(4, 500)).unwrap();
    let mut r = s.start(true, Clock::virtual_clock(), true).unwrap();
    // Step until requests are in flight.
    while !r.es.requests.iter().any(|q| q.state == AsyncState::Waiting) {
        r.step();
    }
    r.rescan().unwrap();
    assert!(r.es.requests.iter().all(|q| q.state != AsyncState::Waiting && q.state != AsyncState::CallbackPending));
    assert_eq!(r.es.event_loop.waiting().count(), 0);
    assert!(r.es.trace.events.iter().any(|e| matches!(e.kind, TraceKind::Request { to: AsyncState::Cancelled, .. })));
    r.run_to_end().unwrap();
    assert!(s.matches_reference(&r.rows), "the rescanned query returns the whole result once");
    assert!(r.leftovers().is_empty(), "{:?}", r.leftovers());
}

#[wasm_bindgen_test(unsupported = test)]
fn remote_error_cancels_every_outstanding_request() {
    let s = Scenario::build("E", &knobs(4, 1000)).unwrap();
    let mut r = s.start(true, Clock::virtual_clock(), true).unwrap();
    r.host.servers[1].fail_after_rows = Some(300);
    let err = r.run_to_end().unwrap_err();
    assert!(err.to_string().contains("injected failure"), "{err}");
    assert!(err.to_string().contains("s2"), "the error names the shard: {err}");
    assert!(r.leftovers().is_empty(), "{:?}", r.leftovers());
    assert!(r.es.conns.iter().all(|c| !c.is_busy() && !c.xact_open));
    assert!(r.es.trace.events.iter().any(|e| matches!(e.kind, TraceKind::Cancel { .. })));
}

#[wasm_bindgen_test(unsupported = test)]
fn without_async_capable_or_async_children_the_plain_sync_path_runs() {
    // async mode off: no request is ever made.
    let (_, r) = run("E", &knobs(4, 200), false);
    assert!(r.es.requests.is_empty());
    assert!(!r.es.trace.events.iter().any(|e| matches!(e.kind, TraceKind::Request { .. })));
    // async mode on, but only local children.
    for id in ["A", "B"] {
        let (_, r) = run(id, &knobs(4, 200), true);
        assert!(r.es.requests.is_empty());
        let (_, s) = run(id, &knobs(4, 200), false);
        assert_eq!(r.elapsed_ns(), s.elapsed_ns(), "{id}: same path, same cost");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn async_run_is_bounded_below_by_the_model_limit() {
    let s = Scenario::build("E", &knobs(4, 2000)).unwrap();
    let mut sync = s.start(false, Clock::virtual_clock(), false).unwrap();
    sync.run_to_end().unwrap();
    let mut asy = s.start(true, Clock::virtual_clock(), false).unwrap();
    asy.run_to_end().unwrap();
    let bound = s.lower_bound_ns(&sync);
    assert!(asy.elapsed_ns() >= bound, "async {} below the bound {bound}", asy.elapsed_ns());
    assert!(asy.elapsed_ns() < sync.elapsed_ns());
}

#[wasm_bindgen_test(unsupported = test)]
fn foreign_scan_pushes_where_order_by_and_limit_to_the_shard() {
    use pgasync::executor::{init_plan, InitContext};
    use pgasync::host::sim::{LinkParams, SimHost};
    use pgasync::plan::{BinOp, Expr, ForeignScanPlan, Plan, RemoteQuery, SortKey};
    use pgasync::sim::ShardServer;
    use pgasync::types::{Catalog, ColType, Column, Datum, Table};
    let cols = vec![Column::new("a", ColType::Int), Column::new("b", ColType::Int)];
    let mut t = Table::new("t1", cols.clone());
    for i in 0..1000 {
        t.push_row(&[Datum::Int(i % 7), Datum::Int(i)]);
    }
    let mut remote = RemoteQuery::scan("t1", cols, &[1, 0]);
    remote.quals = vec![Expr::bin(BinOp::Eq, Expr::Col(0), Expr::int(3))];
    remote.order_by = vec![SortKey::desc(1)];
    remote.limit = Some(5);
    let plan = Plan::ForeignScan(ForeignScanPlan { relation: "ft1".into(), server: "s1".into(), remote, alias: None });
    for async_mode in [false, true] {
        let servers =
            vec![ForeignServer { name: "s1".into(), options: ServerOptions { async_capable: true, fetch_size: 2 } }];
        let mut es = EState::new(Clock::virtual_clock(), servers, async_mode, true);
        let root = init_plan(&plan, &InitContext { catalog: &Catalog::default() }, &mut es).unwrap();
        let mut shard = Catalog::default();
        shard.add(t.clone());
        let host = SimHost::new(vec![ShardServer::new("s1", shard, 1)], vec![LinkParams::default()]);
        let mut r = QueryRun::new(es, root, host, plan.output_columns());
        r.run_to_end().unwrap();
        let got: Vec<i64> = r.rows.iter().map(|row| row[0].as_int().unwrap()).collect();
        assert_eq!(got, vec![997, 990, 983, 976, 969], "b DESC where a = 3, first 5");
        let sent = r.es.trace.events.iter().find_map(|e| match &e.kind {
            TraceKind::Send { sql, .. } if sql.contains("DECLARE") => Some(sql.clone()),
            _ => None,
        });
        let sent = sent.unwrap();
        assert!(
            sent.contains("SELECT b, a FROM public.t1 WHERE ((a = 3)) ORDER BY b DESC NULLS FIRST LIMIT 5"),
            "{sent}"
        );
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn step_mode_changes_the_granularity_not_the_run() {
    // The demo steps through every request transition; the run itself (trace, times,
    // rows) must be exactly the one without steps.
    for (id, k) in [
        ("E", knobs(4, 300)),
        ("M", Knobs { async_merge_append: Some(true), ..knobs(4, 500) }),
        ("M", Knobs { behaviour: Some(Preset::Improved), ..knobs(4, 500) }),
        ("X", knobs(1, 2000)),
        ("D", Knobs { sharing: Some(Sharing::Shared), ..knobs(4, 300) }),
        ("F", Knobs { pipeline: Some(true), ..knobs(4, 300) }),
        ("E", Knobs { behaviour: Some(Preset::Improved), ..knobs(4, 300) }),
        ("E", Knobs { fifo_results: Some(true), ..knobs(4, 300) }),
        ("E", Knobs { fetch_size: Some(10), ..knobs(20, 40) }),
    ] {
        let s = Scenario::build(id, &k).unwrap();
        let mut plain = s.start(true, Clock::virtual_clock(), true).unwrap();
        let mut plain_steps = 0;
        while !plain.is_done() {
            plain.step();
            plain_steps += 1;
        }
        let mut stepped = s.start(true, Clock::virtual_clock(), true).unwrap();
        stepped.es.step_mode = true;
        let mut steps = 0;
        while !stepped.is_done() {
            stepped.step();
            steps += 1;
        }
        if let Some(i) = (0..plain.es.trace.events.len())
            .find(|&i| stepped.es.trace.events.get(i) != Some(&plain.es.trace.events[i]))
        {
            panic!(
                "{id}: traces differ at event {i}: {:?} vs {:?}",
                stepped.es.trace.events.get(i),
                plain.es.trace.events[i]
            );
        }
        assert_eq!(stepped.es.trace.events.len(), plain.es.trace.events.len(), "{id}");
        assert_eq!(stepped.rows, plain.rows, "{id}");
        assert_eq!(stepped.elapsed_ns(), plain.elapsed_ns(), "{id}");
        assert!(steps > plain_steps, "{id}: step mode has finer steps ({steps} vs {plain_steps})");
        assert!(stepped.leftovers().is_empty(), "{id}: {:?}", stepped.leftovers());
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn the_first_remote_error_is_reported_not_the_aborted_transaction_after_it() {
    // A fetch-ahead FETCH fails on a shared connection while another scan's FETCH is
    // queued behind it: the query must fail with the original error (postgres_fdw
    // reads the pending request's answer first), not with 25P02.
    for fail_after in [10, 40, 79, 150] {
        let k = Knobs { sharing: Some(Sharing::Shared), fetch_size: Some(29), ..knobs(4, 79) };
        let s = Scenario::build("M", &k).unwrap();
        let mut r = s.start(true, Clock::virtual_clock(), true).unwrap();
        r.host.servers[0].fail_after_rows = Some(fail_after);
        match r.run_to_end() {
            Ok(()) => assert!(s.matches_reference(&r.rows)),
            Err(e) => assert!(e.to_string().contains("injected failure"), "fail_after {fail_after}: {e}"),
        }
        assert!(r.leftovers().is_empty(), "{:?}", r.leftovers());
    }
}

/// Every scenario under every knob alone, the improved preset, and the preset with
/// each knob off: the reference rows, nothing left behind. (The improved preset
/// without `pipeline` once left async MergeAppend waiting with no event: a
/// fetch-ahead FETCH held the connection for a request nobody waited on.)
#[wasm_bindgen_test(unsupported = test)]
fn every_knob_combination_runs_every_scenario() {
    use pgasync::behaviour::KNOBS;
    let mut configs: Vec<(String, Knobs)> = vec![("pg15".into(), Knobs::default())];
    for k in KNOBS {
        let mut on = Knobs::default();
        set_knob(&mut on, k.name, true);
        if k.name == "no_descendant_check" {
            set_knob(&mut on, "async_through_nodes", true); // it only applies with it
        }
        configs.push((format!("{} on", k.name), on));
        let mut off = Knobs { behaviour: Some(Preset::Improved), ..Default::default() };
        set_knob(&mut off, k.name, false);
        configs.push((format!("improved without {}", k.name), off));
    }
    configs.push(("improved".into(), Knobs { behaviour: Some(Preset::Improved), ..Default::default() }));
    for id in ["A", "B", "C", "D", "E", "F", "G", "pf1", "M", "X"] {
        for (label, k) in &configs {
            let k = Knobs { shards: Some(3), rows_per_shard: Some(237), fetch_size: Some(20), ..k.clone() };
            let s = Scenario::build(id, &k).unwrap();
            for async_mode in [false, true] {
                let mut r = s.start(async_mode, Clock::virtual_clock(), false).unwrap();
                let res = r.run_to_end();
                let ctx = format!("{id} {label} async={async_mode}");
                assert!(res.is_ok(), "{ctx}: {res:?}");
                assert!(s.matches_reference(&r.rows), "{ctx}: wrong rows");
                assert!(r.leftovers().is_empty(), "{ctx}: {:?}", r.leftovers());
            }
        }
    }
}

fn set_knob(k: &mut Knobs, name: &str, on: bool) {
    let slot = pgasync::knobs::switch_mut(k, name).unwrap_or_else(|| panic!("{name} is no behaviour knob"));
    *slot = Some(on);
}

/// Scenario D (four foreign tables on one server: one shared connection) with the
/// fourth table read synchronously: behind a pass-through Result, which is not
/// async-capable, as behind a join in PostgreSQL. Append sends its requests first,
/// so the first scan's FETCH is in flight when the synchronous scan needs the
/// connection for its DECLARE.
fn shared_connection_with_a_sync_scan(k: &Knobs) -> Scenario {
    use pgasync::plan::Plan;
    let mut s = Scenario::build("D", &Knobs { sharing: Some(Sharing::Shared), ..k.clone() }).unwrap();
    let Plan::Agg { child, .. } = &mut s.plan else { panic!("D is sum(a) over an Append") };
    let Plan::Append { children, .. } = child.as_mut() else { panic!("D is sum(a) over an Append") };
    let last = children.pop().unwrap();
    children.push(Plan::Result { child: Box::new(last), filter: None, targets: None });
    s
}

#[wasm_bindgen_test(unsupported = test)]
fn a_sync_scan_drains_the_pending_fetch_before_it_uses_the_shared_connection() {
    // postgres_fdw's process_pending_request: libpq runs one command at a time, so
    // before the synchronous scan sends its DECLARE, the FETCH in flight for another
    // scan (the connection's pendingAreq) is waited for; its rows stay for its owner.
    for fetch in [10, 100] {
        let s = shared_connection_with_a_sync_scan(&Knobs { fetch_size: Some(fetch), ..knobs(4, 300) });
        let mut r = s.start(true, Clock::virtual_clock(), true).unwrap();
        r.run_to_end().unwrap();
        assert!(s.matches_reference(&r.rows), "fetch_size {fetch}: wrong result");
        assert!(r.leftovers().is_empty(), "{:?}", r.leftovers());
        let tree = r.explain();
        let scans = &tree.children[0].children;
        assert!(scans[..3].iter().all(|c| c.async_capable) && !scans[3].children[0].async_capable);
        let (declare_c4, _) =
            first(&r, |k| matches!(k, TraceKind::Send { sql, .. } if sql.starts_with("DECLARE c4 "))).unwrap();
        let (c1_answer, _) =
            first(&r, |k| matches!(k, TraceKind::Response { sql, .. } if sql.ends_with("FROM c1"))).unwrap();
        assert!(
            c1_answer < declare_c4,
            "fetch_size {fetch}: DECLARE c4 was written before FETCH … FROM c1 was answered"
        );
        let queued: Vec<&str> =
            r.es.trace
                .events
                .iter()
                .filter_map(|e| match &e.kind {
                    TraceKind::Send { sql, queued: true, .. } => Some(sql.as_str()),
                    _ => None,
                })
                .collect();
        assert!(queued.is_empty(), "fetch_size {fetch}: written behind another statement: {queued:?}");
    }
}

/// On real servers a statement goes on the wire when it is sent, as libpq's PQsendQuery
/// writes it: an Append that goes on with other children's stored rows must not hold a
/// FETCH back until it next waits (live E lost its overlap that way). A statement
/// queued behind another on a busy connection goes out only when that one is answered.
#[wasm_bindgen_test(unsupported = test)]
fn a_statement_is_written_when_it_is_sent() {
    use pgasync::remote::{Proto, QueryRole};
    use std::cell::RefCell;
    use std::rc::Rc;
    let servers =
        vec![ForeignServer { name: "s1".into(), options: ServerOptions { async_capable: true, fetch_size: 100 } }];
    let mut es = EState::new(Clock::virtual_clock(), servers, true, false);
    let written: Rc<RefCell<Vec<(usize, usize)>>> = Rc::default();
    let log = written.clone();
    es.writer = Some(Rc::new(RefCell::new(move |k: usize, bytes: &[u8]| {
        log.borrow_mut().push((k, bytes.len()));
        Ok(())
    })));
    es.connect(0);
    assert_eq!(written.borrow().len(), 1, "the startup packet");
    es.send(0, Proto::Simple, "FETCH 100 FROM c1", None, QueryRole::InTransaction);
    assert_eq!(written.borrow().len(), 2, "behind the startup packet a statement may go at once");
    assert!(es.conns[0].outbox.is_empty(), "nothing left for the host's next flush");
    es.send(0, Proto::Simple, "FETCH 100 FROM c2", None, QueryRole::InTransaction);
    assert_eq!(written.borrow().len(), 2, "queued behind the FETCH in flight");
    assert_eq!(es.conns[0].queued_count(), 1);
}
