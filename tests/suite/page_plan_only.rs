//! The page's EXPLAIN without ANALYZE (issue 23, item 1): a scenario file whose query
//! is `EXPLAIN SELECT …` makes a session (`DemoSession::from_sql`, what the wasm
//! API's `SqlLoader.session()` and `Session.fromSql` build) that PostgreSQL's way plans
//! the query and never runs it: the plan's nodes carry the planner's estimates and no
//! actual figures, the EXPLAIN panel prints `(cost=… rows=… width=…)` and no `actual`,
//! no row is fetched, and the steps are only what planning sent (use_remote_estimate's
//! EXPLAINs and the COMMIT after them; nothing without it). A plain SELECT's session
//! shows the same estimates beside its actual figures.

use pgasync::coordinator_sql::SqlScenario;
use pgasync::demo::session::{DemoSession, NodeView, PLAN_ONLY_NARRATION, PLAN_ONLY_REMOTE_NARRATION};
use pgasync::knobs::Knobs;
use pgasync::remote::Proto;
use pgasync::trace::TraceKind;
use wasm_bindgen_test::wasm_bindgen_test;

/// `pt` range-partitioned on `b` over three foreign partitions on two servers (pt1 and
/// pt3 on s1), `l` a small local table; `OPTIONS` goes into both servers' options.
fn file(options: &str, query: &str) -> String {
    format!(
        "-- @shard s1
create table t1 (a int, b int, c text);
create table t3 (a int, b int, c text);
-- @shard s2
create table t2 (a int, b int, c text);
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (async_capable 'true'{options});
create server s2 foreign data wrapper postgres_fdw options (async_capable 'true'{options});
create table pt (a int, b int, c text) partition by range (b);
create foreign table pt1 partition of pt for values from (0) to (250) server s1 options (table_name 't1');
create foreign table pt2 partition of pt for values from (250) to (500) server s2 options (table_name 't2');
create foreign table pt3 partition of pt for values from (500) to (750) server s1 options (table_name 't3');
insert into pt select b % 100, b, 'r' || b from generate_series(0, 749) b;
create table l (id int, b int, c text);
insert into l values (1, 10, 'x'), (2, 260, 'y'), (3, 510, 'z');
analyze l;
-- @query
{query}
"
    )
}

fn session(options: &str, query: &str) -> DemoSession {
    let sql = SqlScenario::load(&file(options, query)).unwrap_or_else(|e| panic!("{query}: {e}"));
    DemoSession::from_sql(sql, true, Knobs::default()).unwrap_or_else(|e| panic!("{query}: {e}"))
}

fn nodes(v: &NodeView) -> Vec<&NodeView> {
    std::iter::once(v).chain(v.children.iter().flat_map(nodes)).collect()
}

/// Every `(cost=S..T rows=R width=W)` of an EXPLAIN text, sorted.
fn printed_costs(text: &str) -> Vec<String> {
    let mut out: Vec<String> =
        text.match_indices("(cost=").map(|(i, _)| text[i..].split(')').next().unwrap().to_string() + ")").collect();
    out.sort();
    out
}

/// The snapshot's estimates as EXPLAIN prints them, sorted. Only a Result has none
/// (EXPLAIN prints it as part of the node below it, which shows the estimate).
fn snapshot_costs(plan: &NodeView) -> Vec<String> {
    let all = nodes(plan);
    assert!(all.iter().all(|n| n.estimate.is_some() || n.node_type == "Result"), "a node without its estimate");
    let mut out: Vec<String> = all
        .iter()
        .filter_map(|n| n.estimate)
        .map(|e| format!("(cost={:.2}..{:.2} rows={:.0} width={})", e.startup, e.total, e.rows, e.width))
        .collect();
    out.sort();
    out
}

/// The statements sent on the wire so far.
fn sent(s: &DemoSession) -> Vec<String> {
    s.run()
        .es
        .trace
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            TraceKind::Send { sql, proto, .. } if *proto != Proto::Startup => Some(sql.clone()),
            _ => None,
        })
        .collect()
}

#[wasm_bindgen_test(unsupported = test)]
fn explain_without_analyze_is_planned_not_run_in_the_page() {
    let mut s = session("", "explain select * from pt where b < 300;");
    assert!(s.is_plan_only());
    let snap = s.snapshot(0);
    assert!(snap.plan_only);
    assert_eq!(snap.narration, PLAN_ONLY_NARRATION);
    s.run_to_end();
    assert!(s.is_done());
    let snap = s.snapshot(0);
    assert_eq!(snap.phase, "finished");
    // Nothing was sent: no connection, no statement, no row.
    assert!(sent(&s).is_empty(), "{:?}", sent(&s));
    assert!(snap.connections.iter().all(|c| c.bytes_sent == 0 && !c.xact_open && !c.busy));
    assert_eq!(snap.rows_total, 0);
    assert!(s.rows_page(0, 10).1.is_empty());
    // ExecInit, ExecutorEnd, the transaction's end: no step sends anything.
    assert!(s.steps() <= 4, "{} steps for a plan that runs nothing", s.steps());
    assert!(snap.narration.contains("planned, never run"), "{}", snap.narration);
    // The plan: estimates on every node, no actual figures.
    let plan = nodes(&snap.plan);
    assert!(plan.iter().any(|n| n.label == "Append") && plan.iter().filter(|n| n.async_capable).count() == 2);
    assert!(plan.iter().all(|n| n.loops == 0 && n.rows == 0 && n.round_trips == 0), "a node ran");
    let text = s.explain_text();
    assert!(text.starts_with("Append  (cost="), "{text}");
    assert!(text.contains("->  Async Foreign Scan on pt1 pt_1  (cost=100.00.."), "{text}");
    for never in ["actual", "never executed", "Execution Time", "Planning Time"] {
        assert!(!text.contains(never), "{never} in\n{text}");
    }
    // The plan tree's figures are the EXPLAIN text's, node for node.
    assert_eq!(snapshot_costs(&snap.plan), printed_costs(&text), "{text}");
    // Step 0 again says what it said.
    s.seek(0).unwrap();
    assert_eq!(s.snapshot(0).narration, PLAN_ONLY_NARRATION);
}

/// With use_remote_estimate, planning asks each shard for an EXPLAIN (postgres_fdw's
/// `get_remote_estimate`) on connections it opens, and the transaction's end commits
/// them: those are the session's steps, and nothing else is sent (no DECLARE, no FETCH).
#[wasm_bindgen_test(unsupported = test)]
fn planning_traffic_is_what_a_plan_only_session_steps_through() {
    let mut s = session(
        ", use_remote_estimate 'true'",
        "explain (verbose) select * from l join pt on pt.b = l.b where l.id = 1;",
    );
    assert_eq!(s.snapshot(0).narration, PLAN_ONLY_REMOTE_NARRATION);
    let mut narrations = vec![];
    while !s.is_done() {
        s.step_event();
        narrations.push(s.snapshot(0).narration);
        assert!(s.steps() < 500, "a plan-only session that does not end");
    }
    let statements = sent(&s);
    assert!(statements.iter().any(|q| q.starts_with("EXPLAIN SELECT")), "{statements:?}");
    assert!(statements.iter().any(|q| q == "COMMIT TRANSACTION"), "{statements:?}");
    assert!(
        statements.iter().all(|q| !q.contains("DECLARE") && !q.starts_with("FETCH") && !q.starts_with("CLOSE")),
        "{statements:?}"
    );
    assert!(narrations.iter().any(|n| n.starts_with("Sent \"EXPLAIN SELECT")), "{narrations:?}");
    assert!(narrations.last().unwrap().contains("planned, never run"), "{narrations:?}");
    // The parameterized Nested Loop's plan, estimated: the inner scans' Remote SQL has $1.
    let text = s.explain_text();
    assert!(text.starts_with("Nested Loop  (cost="), "{text}");
    assert!(text.contains("WHERE (($1::integer = b))"), "{text}");
    assert!(!text.contains("actual") && !text.contains("never executed"), "{text}");
    let snap = s.snapshot(0);
    assert!(snap.plan_only && snap.rows_total == 0);
    assert_eq!(snapshot_costs(&snap.plan), printed_costs(&text), "{text}");
}

/// `EXPLAIN (FORMAT JSON)` without ANALYZE: the panel prints PostgreSQL's JSON with the
/// costs and no actual figures.
#[wasm_bindgen_test(unsupported = test)]
fn explain_format_json_without_analyze_prints_costs_only() {
    let mut s = session("", "explain (format json) select count(*) from pt;");
    s.run_to_end();
    let text = s.explain_text();
    assert!(text.trim_start().starts_with('['), "{text}");
    assert!(text.contains("\"Startup Cost\": ") && text.contains("\"Plan Rows\": "), "{text}");
    assert!(!text.contains("Actual") && !text.contains("Execution Time"), "{text}");
    let snap = s.snapshot(0);
    assert!(nodes(&snap.plan).iter().all(|n| n.loops == 0));
    assert_eq!(snapshot_costs(&snap.plan).len(), text.matches("\"Startup Cost\"").count(), "{text}");
}

/// A plain SELECT in the page runs, and its plan's nodes show the estimates beside the
/// actual figures (the same estimates the EXPLAIN panel prints).
#[wasm_bindgen_test(unsupported = test)]
fn a_run_shows_the_estimates_beside_the_actual_figures() {
    let mut s = session("", "select * from pt where b < 300;");
    assert!(!s.is_plan_only());
    assert_eq!(s.snapshot(0).narration, pgasync::demo::session::START_NARRATION);
    s.run_to_end();
    let snap = s.snapshot(0);
    assert!(!snap.plan_only);
    assert_eq!(snap.rows_total, 300);
    let text = s.explain_text();
    assert!(text.contains("(actual time="), "{text}");
    assert_eq!(snapshot_costs(&snap.plan), printed_costs(&text), "{text}");
    let root = &snap.plan;
    assert_eq!((root.rows, root.estimate.map(|e| e.rows > 0.0)), (300, Some(true)));
    // A built-in scenario has no planner estimates: its nodes carry none.
    let mut e = DemoSession::new("E", true, Knobs { rows_per_shard: Some(20), ..Knobs::default() }).unwrap();
    e.run_to_end();
    assert!(nodes(&e.snapshot(0).plan).iter().all(|n| n.estimate.is_none()));
    assert!(!serde_json::to_string(&e.snapshot(0)).unwrap().contains("\"estimate\""));
}

#[cfg(target_arch = "wasm32")]
mod wasm_api {
    use pgasync::demo::wasm_api::Session;
    use wasm_bindgen::JsValue;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn prop(v: &JsValue, key: &str) -> JsValue {
        js_sys::Reflect::get(v, &JsValue::from_str(key)).unwrap()
    }

    /// `Session.fromSql` of an EXPLAIN without ANALYZE: a session whose snapshot says
    /// `plan_only`, whose rows say so, and which has no run to compare or export.
    #[wasm_bindgen_test]
    fn the_wasm_session_of_an_explain_is_plan_only() {
        let text = super::file("", "explain select * from pt;");
        let mut s = Session::from_sql(&text, "async", "{}").expect("an EXPLAIN makes a session");
        s.run_to_end();
        let snap = s.snapshot(0).unwrap();
        assert_eq!(prop(&snap, "plan_only").as_bool(), Some(true));
        let root = prop(&snap, "plan");
        assert!(prop(&prop(&root, "estimate"), "total").as_f64().unwrap() > 0.0);
        let rows = s.rows(0, 10).unwrap();
        assert_eq!(prop(&rows, "plan_only").as_bool(), Some(true));
        assert!(s.explain_text().contains("(cost="));
        assert!(s.compare_job().is_err());
        assert!(s.export_job("json").is_err());
        assert!(pgasync::demo::wasm_api::check_sql(&text, "{}").unwrap().is_null());
    }
}
