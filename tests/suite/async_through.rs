//! Async beyond Append (issue 18): the `async_through_nodes` design and the teaching
//! knob `no_descendant_check` on the seeds' plans — R (Robert Haas's Append over Hash
//! Joins), H (Amit Khandekar's hazard), pf0, pf1 — in every design, sync and async:
//! the reference result, request transitions that follow the protocol at every step,
//! the overlap the design promises, and the hazard exactly where it is expected.

use pgasync::clock::Clock;
use pgasync::executor::estate::ExecError;
use pgasync::executor::exec_async::AsyncState;
use pgasync::knobs::Knobs;
use pgasync::run::QueryRun;
use pgasync::scenario::Scenario;
use pgasync::trace::{TraceEvent, TraceKind};
use std::collections::HashMap;
use wasm_bindgen_test::wasm_bindgen_test;

/// The designs every plan must run correctly in: PostgreSQL 15, async through
/// intermediate nodes, and everything on.
fn designs(rows: usize, fetch: usize) -> Vec<(&'static str, Knobs)> {
    let base = Knobs { rows_per_shard: Some(rows), fetch_size: Some(fetch), ..Default::default() };
    vec![
        ("pg15", base.clone()),
        ("async_through_nodes", Knobs { async_through_nodes: Some(true), ..base.clone() }),
        ("improved", Knobs { behaviour: Some(pgasync::behaviour::Preset::Improved), ..base.clone() }),
    ]
}

fn start(s: &Scenario, async_mode: bool) -> QueryRun {
    s.start(async_mode, Clock::virtual_clock(), true).unwrap_or_else(|e| panic!("{}: start: {e}", s.id))
}

/// Every request transition starts from the state the request is in, and is one the
/// protocol allows (exec_async.rs's diagram); at the end nothing is Waiting.
fn check_transitions(ctx: &str, events: &[TraceEvent]) {
    let mut state: HashMap<usize, AsyncState> = HashMap::new();
    for e in events {
        if let TraceKind::Request { request, from, to, .. } = &e.kind {
            let now = state.get(request).copied().unwrap_or(AsyncState::Idle);
            assert_eq!(now, *from, "{ctx}: request {request} left {from:?} but was {now:?}");
            let allowed = matches!(
                (from, to),
                (AsyncState::Idle | AsyncState::Complete | AsyncState::Cancelled, AsyncState::Waiting)
                    | (AsyncState::Idle | AsyncState::Complete | AsyncState::Cancelled, AsyncState::CallbackPending)
                    | (AsyncState::Waiting, AsyncState::CallbackPending)
                    | (AsyncState::CallbackPending, AsyncState::Complete)
                    | (AsyncState::Waiting | AsyncState::CallbackPending, AsyncState::Cancelled)
            );
            assert!(allowed, "{ctx}: request {request}: {from:?} -> {to:?} is not a protocol transition");
            state.insert(*request, *to);
        }
    }
    let waiting: Vec<_> = state.iter().filter(|(_, s)| **s == AsyncState::Waiting).collect();
    assert!(waiting.is_empty(), "{ctx}: requests still Waiting at the end: {waiting:?}");
}

/// Runs step by step (the demo's step mode, so every transition is a step of its own)
/// and checks the result and the transitions.
fn run_checked(id: &str, design: &str, k: &Knobs, async_mode: bool) -> QueryRun {
    let stepped = run_checked_in(id, design, k, async_mode, true);
    let run = run_checked_in(id, design, k, async_mode, false);
    // Steps change nothing but, under async_through_nodes, K's order: Nested Loop
    // starts its inner side early only when the outer side sleeps, never at a step.
    let sorted = |r: &QueryRun| {
        let mut v = r.rows.clone();
        v.sort();
        v
    };
    if id == "K" && design != "pg15" {
        assert_eq!(sorted(&stepped), sorted(&run), "{id} {design}: steps change no row");
    } else {
        assert_eq!(stepped.rows, run.rows, "{id} {design}: steps change nothing");
    }
    run
}

fn run_checked_in(id: &str, design: &str, k: &Knobs, async_mode: bool, step_mode: bool) -> QueryRun {
    let s = Scenario::build(id, k).unwrap_or_else(|e| panic!("{id}: {e}"));
    let ctx = format!("{id} {design} {} step_mode={step_mode}", if async_mode { "async" } else { "sync" });
    let mut run = start(&s, async_mode);
    run.es.step_mode = step_mode;
    if let Err(e) = run.run_to_end() {
        panic!("{ctx}: {e}");
    }
    assert!(s.matches_reference(&run.rows), "{ctx}: rows differ from the reference");
    assert_eq!(run.rows.len(), s.reference.len(), "{ctx}");
    check_transitions(&ctx, &run.es.trace.events);
    assert!(!run.es.trace.events.iter().any(|e| matches!(e.kind, TraceKind::Reentry { .. })), "{ctx}");
    run
}

#[wasm_bindgen_test(unsupported = test)]
fn r_h_pf0_pf1_give_the_reference_in_every_design_sync_and_async() {
    for id in ["R", "H", "K", "pf0", "pf1"] {
        for fetch in [50, 1000] {
            for (design, k) in designs(120, fetch) {
                for async_mode in [false, true] {
                    run_checked(id, design, &k, async_mode);
                }
            }
        }
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn the_teaching_knob_is_harmless_where_no_other_subtree_waits() {
    // R, pf0 and pf1 have no request of another subtree outstanding while a node waits
    // in place: without the descendant check they are slower (R's joins wait one after
    // another) but correct.
    for id in ["R", "K", "pf0", "pf1"] {
        let k = Knobs {
            rows_per_shard: Some(120),
            fetch_size: Some(50),
            async_through_nodes: Some(true),
            no_descendant_check: Some(true),
            ..Default::default()
        };
        run_checked(id, "no_descendant_check", &k, true);
    }
}

fn requests_to_foreign_scans_under_joins(run: &QueryRun) -> usize {
    let explain = run.explain_text();
    explain.matches("Async Foreign Scan").count()
}

/// The most connections with a FETCH in flight at one moment.
fn max_fetches_in_flight(run: &QueryRun) -> usize {
    let mut in_flight = std::collections::HashSet::new();
    let mut most = 0;
    for e in &run.es.trace.events {
        match &e.kind {
            TraceKind::Send { conn, sql, queued: false, .. } if sql.starts_with("FETCH") => {
                in_flight.insert(*conn);
            }
            TraceKind::Response { conn, sql, .. } if sql.starts_with("FETCH") => {
                in_flight.remove(conn);
            }
            _ => {}
        }
        most = most.max(in_flight.len());
    }
    most
}

#[wasm_bindgen_test(unsupported = test)]
fn r_in_pg15_has_no_async_under_a_join_and_the_new_design_overlaps_the_joins() {
    let [(_, pg15), (_, through), _] = <[_; 3]>::try_from(designs(300, 100)).ok().unwrap();
    let sync = run_checked("R", "pg15", &pg15, false);
    let pg = run_checked("R", "pg15", &pg15, true);
    // PostgreSQL 15: the joins are Append's synchronous children; nothing is async.
    assert_eq!(requests_to_foreign_scans_under_joins(&pg), 0, "{}", pg.explain_text());
    assert!(!pg.es.trace.events.iter().any(|e| matches!(e.kind, TraceKind::Request { .. })));
    let sends = |r: &QueryRun| -> Vec<(usize, String)> {
        r.es.trace
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                TraceKind::Send { conn, sql, queued: false, .. } => Some((*conn, sql.clone())),
                _ => None,
            })
            .collect()
    };
    assert_eq!(sends(&pg), sends(&sync), "pg15 async sends what pg15 sync sends on R");
    let new = run_checked("R", "async_through_nodes", &through, true);
    assert_eq!(requests_to_foreign_scans_under_joins(&new), 4, "{}", new.explain_text());
    // PostgreSQL 15 has one FETCH in flight at a time on R; the new design several
    // (the DECLAREs stay waited for, server after server, as postgres_fdw's are).
    assert_eq!(max_fetches_in_flight(&pg), 1);
    assert!(max_fetches_in_flight(&new) >= 3, "the joins' remote waits overlap: {}", max_fetches_in_flight(&new));
    assert!(new.elapsed_ns() < pg.elapsed_ns(), "virtual clock: {} vs {}", new.elapsed_ns(), pg.elapsed_ns());
}

#[wasm_bindgen_test(unsupported = test)]
fn without_the_descendant_check_h_re_enters_append_and_says_so() {
    let k = |unguarded| Knobs {
        rows_per_shard: Some(120),
        fetch_size: Some(50),
        async_through_nodes: Some(true),
        no_descendant_check: Some(unguarded),
        ..Default::default()
    };
    // Guarded: correct.
    run_checked("H", "async_through_nodes", &k(false), true);
    // Unguarded: the named error event and the message, no panic, no wrong row.
    let s = Scenario::build("H", &k(true)).unwrap();
    let mut run = start(&s, true);
    let err = run.run_to_end().expect_err("the hazard stops the run");
    assert_eq!(err, ExecError::Reentry("Append re-entered while executing its child Hash Join".into()));
    assert_eq!(err.to_string(), "Append re-entered while executing its child Hash Join");
    let hazard: Vec<_> = run.es.trace.events.iter().filter(|e| matches!(e.kind, TraceKind::Reentry { .. })).collect();
    assert_eq!(hazard.len(), 1, "one hazard event");
    let TraceKind::Reentry { node, child, waiting, request, .. } = &hazard[0].kind else { unreachable!() };
    assert_eq!(*node, 0, "the Append");
    assert_eq!(*child, *waiting, "the Hash Join is the Append's child and the node that waited");
    assert_eq!(run.es.requests[*request].requestor, 0, "the ready request is the Append's own, to ft1");
    assert!(s.reference.len() > run.rows.len(), "the run stopped before its end");
    for r in &run.rows {
        assert!(s.reference.contains(r), "no wrong row before the hazard");
    }
    // In sync mode there are no requests, so no hazard.
    run_checked("H", "no_descendant_check", &k(true), false);
}

#[wasm_bindgen_test(unsupported = test)]
fn the_teaching_knob_needs_the_design() {
    let k = Knobs { no_descendant_check: Some(true), ..Default::default() };
    let e = Scenario::build("R", &k).err().expect("refused");
    assert!(e.contains("no_descendant_check") && e.contains("async_through_nodes"), "{e}");
}

// ---------------------------------------------------------------------------------
// Random plans mixing joins and Appends (depth ≤ 4), over R's servers and tables.

use pgasync::plan::{Expr, ForeignScanPlan, Plan, RemoteQuery};
use pgasync::types::{ColType, Column};
use proptest::prelude::*;

/// A plan shape: every subtree outputs two integer columns (a, b).
#[derive(Clone, Debug)]
enum Shape {
    Foreign(usize),
    Local(usize),
    Append(Vec<Shape>),
    HashJoin(Box<Shape>, Box<Shape>),
    NestLoop(Box<Shape>, Box<Shape>),
    Sort(Box<Shape>),
    Material(Box<Shape>),
}

fn shape_strategy() -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![(0usize..3).prop_map(Shape::Foreign), (0usize..3).prop_map(Shape::Local)];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..=3).prop_map(Shape::Append),
            (inner.clone(), inner.clone()).prop_map(|(o, i)| Shape::HashJoin(Box::new(o), Box::new(i))),
            (inner.clone(), inner.clone()).prop_map(|(o, i)| Shape::NestLoop(Box::new(o), Box::new(i))),
            inner.clone().prop_map(|c| Shape::Sort(Box::new(c))),
            inner.prop_map(|c| Shape::Material(Box::new(c))),
        ]
    })
}

/// The first two columns, as (a, b).
fn two_columns(child: Plan) -> Plan {
    Plan::Result {
        child: Box::new(child),
        filter: None,
        targets: Some(vec![(Expr::Col(0), "a".into()), (Expr::Col(1), "b".into())]),
    }
}

fn to_plan(s: &Shape) -> Plan {
    let t_cols =
        || vec![Column::new("a", ColType::Int), Column::new("b", ColType::Int), Column::new("c", ColType::Text)];
    match s {
        Shape::Foreign(k) => Plan::ForeignScan(ForeignScanPlan {
            relation: format!("ft{}", k + 1),
            server: format!("s{}", k + 1),
            remote: RemoteQuery::scan(&format!("t{}", k + 1), t_cols(), &[0, 1]),
            alias: None,
        }),
        Shape::Local(k) => Plan::Result {
            child: Box::new(Plan::SeqScan {
                table: format!("l{}", k + 1),
                columns: vec![Column::new("a", ColType::Int), Column::new("c", ColType::Text)],
                alias: None,
            }),
            filter: None,
            targets: Some(vec![(Expr::Col(0), "a".into()), (Expr::Col(0), "b".into())]),
        },
        Shape::Append(children) => {
            Plan::Append { children: children.iter().map(to_plan).collect(), prune: None, ordered: false }
        }
        Shape::HashJoin(o, i) => two_columns(Plan::HashJoin {
            outer: Box::new(to_plan(o)),
            inner: Box::new(to_plan(i)),
            outer_key: Expr::Col(0),
            inner_key: Expr::Col(0),
            more_keys: vec![],
            join_type: pgasync::plan::JoinType::Inner,
            joinrel_rows: None,
        }),
        Shape::NestLoop(o, i) => two_columns(Plan::NestLoop {
            outer: Box::new(to_plan(o)),
            inner: Box::new(to_plan(i)),
            outer_key: Expr::Col(0),
            inner_key: Expr::Col(0),
            filter_inner_first: false,
            join_type: pgasync::plan::JoinType::Inner,
            joinrel_rows: None,
        }),
        Shape::Sort(c) => Plan::Sort { child: Box::new(to_plan(c)), keys: vec![pgasync::plan::SortKey::asc(1)] },
        Shape::Material(c) => Plan::Material { child: Box::new(to_plan(c)) },
    }
}

/// Where the hazard can happen: a Foreign Scan whose request may stay Waiting while
/// other subtrees run — an Append's direct child, or one a Nested Loop's outer side
/// reaches through nodes (the inner side starts while the outer waits) — and
/// a node that waits in place for a Foreign Scan reached through intermediate nodes
/// (its own request), the first not below the second (a wait excludes descendants).
fn hazard_possible(s: &Shape) -> bool {
    fn reaches_foreign_through_nodes(s: &Shape) -> bool {
        match s {
            Shape::Foreign(_) => true,
            Shape::Local(_) | Shape::Append(_) => false,
            Shape::HashJoin(o, i) | Shape::NestLoop(o, i) => {
                reaches_foreign_through_nodes(o) || reaches_foreign_through_nodes(i)
            }
            Shape::Sort(c) | Shape::Material(c) => reaches_foreign_through_nodes(c),
        }
    }
    /// Paths of the Foreign Scans `s` reaches through intermediate nodes.
    fn foreign_through_nodes(s: &Shape, path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        match s {
            Shape::Foreign(_) => out.push(path.clone()),
            Shape::Local(_) | Shape::Append(_) => {}
            Shape::HashJoin(o, i) | Shape::NestLoop(o, i) => {
                for (k, c) in [o, i].into_iter().enumerate() {
                    path.push(k);
                    foreign_through_nodes(c, path, out);
                    path.pop();
                }
            }
            Shape::Sort(c) | Shape::Material(c) => {
                path.push(0);
                foreign_through_nodes(c, path, out);
                path.pop();
            }
        }
    }
    /// Paths of the pending Foreign Scans and of in-place waiters.
    fn walk(s: &Shape, path: &mut Vec<usize>, direct: &mut Vec<Vec<usize>>, waiters: &mut Vec<Vec<usize>>) {
        let kids: Vec<&Shape> = match s {
            Shape::Foreign(_) | Shape::Local(_) => vec![],
            Shape::Append(c) => c.iter().collect(),
            Shape::HashJoin(o, i) | Shape::NestLoop(o, i) => vec![o, i],
            Shape::Sort(c) | Shape::Material(c) => vec![c],
        };
        if !matches!(s, Shape::Append(_) | Shape::Foreign(_) | Shape::Local(_)) && reaches_foreign_through_nodes(s) {
            waiters.push(path.clone());
        }
        if let Shape::NestLoop(o, _) = s {
            path.push(0);
            foreign_through_nodes(o, path, direct);
            path.pop();
        }
        for (k, c) in kids.into_iter().enumerate() {
            path.push(k);
            if matches!(s, Shape::Append(_)) && matches!(c, Shape::Foreign(_)) {
                direct.push(path.clone());
            }
            walk(c, path, direct, waiters);
            path.pop();
        }
    }
    let (mut direct, mut waiters) = (vec![], vec![]);
    walk(s, &mut vec![], &mut direct, &mut waiters);
    direct.iter().any(|f| waiters.iter().any(|w| !f.starts_with(w)))
}

fn sorted_rows(r: &QueryRun) -> Vec<Vec<pgasync::types::Datum>> {
    let mut v = r.rows.clone();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[wasm_bindgen_test(unsupported = test)]
    fn random_plans_guarded_never_reenter_and_equal_sync(shape in shape_strategy(), fetch in 3usize..40) {
        let k = |through: bool, unguarded: bool| Knobs {
            shards: Some(3),
            rows_per_shard: Some(30),
            fetch_size: Some(fetch),
            async_through_nodes: Some(through),
            no_descendant_check: Some(unguarded),
            ..Default::default()
        };
        let mut s = Scenario::build("R", &k(false, false)).unwrap();
        s.plan = to_plan(&shape);
        let mut sync = start(&s, false);
        sync.run_to_end().unwrap();
        for (through, unguarded) in [(false, false), (true, false), (true, true)] {
            let mut s = Scenario::build("R", &k(through, unguarded)).unwrap();
            s.plan = to_plan(&shape);
            let ctx = format!("{shape:?} through={through} unguarded={unguarded}");
            let mut run = start(&s, true);
            let res = run.run_to_end();
            let hazards = run.es.trace.events.iter().filter(|e| matches!(e.kind, TraceKind::Reentry { .. })).count();
            match res {
                Ok(()) => {
                    prop_assert_eq!(hazards, 0, "{}", ctx);
                    prop_assert_eq!(sorted_rows(&run), sorted_rows(&sync), "{}", ctx);
                    check_transitions(&ctx, &run.es.trace.events);
                }
                Err(ExecError::Reentry(m)) => {
                    prop_assert!(unguarded, "{}: the guarded design re-entered: {}", ctx, m);
                    prop_assert!(hazard_possible(&shape), "{}: a hazard where none is possible: {}", ctx, m);
                    prop_assert_eq!(hazards, 1, "{}", ctx);
                    prop_assert!(m.contains(" re-entered while executing its child "), "{}: {}", ctx, m);
                }
                Err(e) => prop_assert!(false, "{}: {}", ctx, e),
            }
        }
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn a_breakpoint_stops_at_the_hazard_and_the_page_says_it() {
    use pgasync::demo::breakpoint::{parse, BreakOn};
    use pgasync::demo::session::{DemoSession, RunTo};
    assert_eq!(parse("reentry"), Ok(BreakOn::Reentry));
    let k = |unguarded| Knobs {
        rows_per_shard: Some(60),
        fetch_size: Some(20),
        async_through_nodes: Some(true),
        no_descendant_check: Some(unguarded),
        ..Default::default()
    };
    // Unguarded: the run stops at the step with the hazard, and the error says it.
    let mut s = DemoSession::new("H", true, k(true)).unwrap();
    let r = loop {
        match s.run_to(BreakOn::Reentry, 50) {
            RunTo::More => continue,
            r => break r,
        }
    };
    assert_eq!(r, RunTo::Found);
    assert!(s.last_step_has(BreakOn::Reentry));
    let snap = s.snapshot(0);
    assert!(snap.narration.contains("re-entered while executing its child Hash Join"), "{}", snap.narration);
    s.run_to_end();
    let snap = s.snapshot(0);
    assert_eq!(snap.error.as_deref(), Some("Append re-entered while executing its child Hash Join"));
    // Guarded: the same breakpoint runs to the end without stopping.
    let mut s = DemoSession::new("H", true, k(false)).unwrap();
    let r = loop {
        match s.run_to(BreakOn::Reentry, 50) {
            RunTo::More => continue,
            r => break r,
        }
    };
    assert_eq!(r, RunTo::End);
    assert!(s.snapshot(0).error.is_none());
}
