//! EXPLAIN ANALYZE of finished (and unfinished) runs: the node tree and its counters,
//! the TEXT format and the JSON format.

use pgasync::clock::Clock;
use pgasync::instrument::{
    explain_json, explain_json_text, explain_json_with, explain_text, explain_text_with, ExplainNode, ExplainOptions,
    Instrumentation,
};
use pgasync::knobs::Knobs;
use pgasync::run::QueryRun;
use pgasync::scenario::Scenario;
use serde_json::Value;
use wasm_bindgen_test::wasm_bindgen_test;

fn e_knobs() -> Knobs {
    Knobs { shards: Some(4), rows_per_shard: Some(500), fetch_size: Some(100), ..Default::default() }
}

fn finished_run(id: &str, k: &Knobs, async_mode: bool) -> (Scenario, QueryRun) {
    let s = Scenario::build(id, k).unwrap();
    let mut run = s.start(async_mode, Clock::virtual_clock(), false).unwrap();
    run.run_to_end().unwrap();
    assert!(run.leftovers().is_empty(), "{:?}", run.leftovers());
    assert!(s.matches_reference(&run.rows));
    (s, run)
}

/// Every node of a tree, depth first.
fn walk<'a>(n: &'a ExplainNode, out: &mut Vec<&'a ExplainNode>) {
    out.push(n);
    for c in &n.children {
        walk(c, out);
    }
}

fn detail<'a>(n: &'a ExplainNode, key: &str) -> Option<&'a str> {
    n.details.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

// ---------------------------------------------------------------------------------
// The tree.

#[wasm_bindgen_test(unsupported = test)]
fn e_async_tree() {
    let (_, run) = finished_run("E", &e_knobs(), true);
    let root = run.explain();
    assert_eq!(root.node_type, "Aggregate");
    assert_eq!(root.strategy.as_deref(), Some("Plain"));
    assert_eq!(root.instr.ntuples, 1);
    assert_eq!(root.instr.nloops, 1);
    assert!(!root.async_capable);
    assert_eq!(root.children.len(), 1);

    let append = &root.children[0];
    assert_eq!(append.node_type, "Append");
    assert_eq!(append.instr.ntuples, 2000);
    assert_eq!(append.instr.nloops, 1);
    assert!(!append.async_capable);
    assert_eq!(append.children.len(), 4);

    let mut sum = 0;
    for (i, c) in append.children.iter().enumerate() {
        assert_eq!(c.node_type, "Foreign Scan", "child {i}");
        assert!(c.async_capable, "child {i} not async capable");
        assert_eq!(c.relation.as_deref(), Some(format!("ft{}", i + 1).as_str()));
        assert_eq!(c.parent_relationship.as_deref(), Some("Member"));
        assert_eq!(c.instr.ntuples, 500, "child {i}");
        assert_eq!(c.instr.nloops, 1, "child {i}");
        assert!(c.instr.total_ns >= c.instr.startup_ns, "child {i}");
        assert!(c.children.is_empty());
        // One request per row plus the one answered with end of data.
        assert_eq!(c.instr.remote.requests, 501, "child {i}");
        // 5 full batches, then an empty one. DECLARE (waited for), 6 FETCHes each
        // sent when the batch is used up, CLOSE at ExecEnd (PostgreSQL 15); the session
        // set-up and START TRANSACTION belong to the connection, not to the scan.
        assert_eq!(c.instr.remote.batches, 6, "child {i}");
        assert_eq!(c.instr.remote.round_trips, 8, "child {i}");
        assert!(c.instr.remote.waits >= 1, "child {i}");
        assert!(c.instr.remote.wait_ns > 0, "child {i}");
        assert!(c.instr.remote.bytes_received > 0, "child {i}");
        assert_eq!(detail(c, "Remote SQL"), Some(format!("SELECT a FROM public.t{}", i + 1).as_str()));
        sum += c.instr.ntuples;
    }
    assert_eq!(sum, append.instr.ntuples);

    // Node ids are allocated depth first.
    let mut all = vec![];
    walk(&root, &mut all);
    let ids: Vec<usize> = all.iter().map(|n| n.id).collect();
    assert_eq!(ids, (0..all.len()).collect::<Vec<_>>());
}

#[wasm_bindgen_test(unsupported = test)]
fn e_sync_tree_counts_round_trips() {
    let (_, run) = finished_run("E", &e_knobs(), false);
    let root = run.explain();
    let append = &root.children[0];
    assert_eq!(append.instr.ntuples, 2000);
    for (i, c) in append.children.iter().enumerate() {
        assert!(!c.async_capable, "child {i} async in sync mode");
        assert_eq!(c.instr.ntuples, 500, "child {i}");
        assert_eq!(c.instr.remote.requests, 0, "child {i}");
        assert_eq!(c.instr.remote.waits, 0, "child {i}");
        assert_eq!(c.instr.remote.batches, 6, "child {i}");
        // DECLARE, 6 FETCHes, CLOSE: each its own round trip.
        assert_eq!(c.instr.remote.round_trips, 8, "child {i}");
    }
}

// ---------------------------------------------------------------------------------
// TEXT format.

#[wasm_bindgen_test(unsupported = test)]
fn e_async_text() {
    let (_, run) = finished_run("E", &e_knobs(), true);
    let text = run.explain_text();
    let async_lines: Vec<&str> = text.lines().filter(|l| l.contains("Async Foreign Scan on")).collect();
    assert_eq!(async_lines.len(), 4, "{text}");
    for (i, l) in async_lines.iter().enumerate() {
        assert!(l.contains(&format!("on public.ft{} (actual", i + 1)), "{l}");
        assert!(l.contains("rows=500 loops=1"), "{l}");
        assert!(l.trim_start().starts_with("->  Async Foreign Scan"), "{l}");
    }
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("Aggregate (actual time="), "{first}");
    assert!(first.contains("rows=1 loops=1"), "{first}");
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("->  Append") && l.contains("rows=2000 loops=1")),
        "{text}"
    );
    let last = text.lines().last().unwrap();
    assert!(last.starts_with("Execution Time: "), "{last}");
    assert!(last.ends_with(" ms"), "{last}");
    assert_eq!(text.matches("Execution Time:").count(), 1);
    assert_eq!(text.matches("Remote SQL: SELECT a FROM public.t").count(), 4);
    assert_eq!(text.lines().filter(|l| l.starts_with("Planning Time: ")).count(), 1, "{text}");
    assert!(!text.contains("never executed"), "{text}");
    // The execution time printed ends with ExecutorEnd (the CLOSEs): the COMMITs at
    // transaction end are not part of it, as in PostgreSQL.
    let ms: f64 = last["Execution Time: ".len()..last.len() - 3].parse().unwrap();
    assert!((ms - run.execution_ns() as f64 / 1e6).abs() < 0.001, "{last}");
    assert!(run.execution_ns() < run.elapsed_ns(), "the COMMITs come after");
}

#[wasm_bindgen_test(unsupported = test)]
fn e_sync_text_has_no_async_prefix() {
    let (_, run) = finished_run("E", &e_knobs(), false);
    let text = run.explain_text();
    let scans: Vec<&str> = text.lines().filter(|l| l.contains("Foreign Scan on")).collect();
    assert_eq!(scans.len(), 4, "{text}");
    for l in &scans {
        assert!(l.contains("rows=500 loops=1"), "{l}");
        assert!(!l.contains("Async"), "{l}");
    }
    assert!(!text.contains("Async Foreign Scan"), "{text}");
    assert!(text.contains("Execution Time:"), "{text}");
}

/// The module documentation of `instrument::explain` says the async counters print
/// "as one extra line per async-capable node in TEXT", but the line is printed for
/// every executed Foreign Scan, so a sync plan shows `Async: requests=0 waits=0 …`.
#[wasm_bindgen_test(unsupported = test)]

fn e_sync_text_has_no_async_at_all() {
    let (_, run) = finished_run("E", &e_knobs(), false);
    let text = run.explain_text();
    assert!(text.contains("Foreign Scan on"), "{text}");
    assert!(!text.contains("Async"), "{text}");
}

// ---------------------------------------------------------------------------------
// JSON format.

const NODE_KEYS: [&str; 6] =
    ["Node Type", "Actual Startup Time", "Actual Total Time", "Actual Rows", "Actual Loops", "Async Capable"];

/// Our counters, under the one key "pgasync" of a foreign scan.
const OUR_KEYS: [&str; 8] = [
    "Server",
    "Async Requests",
    "Async Waits",
    "Async Wait Time",
    "Remote Batches",
    "Remote Round Trips",
    "Remote Bytes Sent",
    "Remote Bytes Received",
];

/// Checks one JSON plan node against its ExplainNode, recursively; returns the count.
fn check_json_node(v: &Value, n: &ExplainNode) -> usize {
    let m = v.as_object().expect("plan node is an object");
    for k in NODE_KEYS {
        assert!(m.contains_key(k), "node {} lacks {k}: {v}", n.node_type);
    }
    assert_eq!(m["Node Type"], n.node_type.as_str());
    assert_eq!(m["Async Capable"], n.async_capable);
    let i = n.instr.finished();
    assert_eq!(m["Actual Loops"], i.nloops);
    assert_eq!(m["Actual Rows"].as_u64().unwrap(), (i.ntuples as f64 / i.nloops.max(1) as f64).round() as u64);
    let startup = m["Actual Startup Time"].as_f64().unwrap();
    let total = m["Actual Total Time"].as_f64().unwrap();
    assert!(startup >= 0.0 && total >= startup, "{v}");
    if n.node_type == "Foreign Scan" {
        let ours = m["pgasync"].as_object().expect("our counters under \"pgasync\"");
        for k in OUR_KEYS {
            assert!(ours.contains_key(k), "foreign scan lacks pgasync.{k}: {v}");
        }
        match n.relation.as_deref() {
            Some(rel) => {
                assert_eq!(m["Relation Name"], rel);
                assert_eq!(m["Schema"], "public");
            }
            // A pushed-down aggregate scans an upper relation: PostgreSQL names it
            // only in "Relations".
            None => assert!(m.get("Relation Name").is_none() && m["Relations"].is_string(), "{v}"),
        }
        assert_eq!(m["Operation"], "Select");
        assert_eq!(ours["Async Requests"], i.remote.requests);
        assert_eq!(ours["Remote Round Trips"], i.remote.round_trips);
        assert_eq!(ours["Remote Batches"], i.remote.batches);
        assert!(m["Remote SQL"].as_str().unwrap().starts_with("SELECT "));
        // Nothing of ours outside "pgasync".
        assert!(!m.contains_key("Async Requests") && !m.contains_key("Server"), "{v}");
    } else {
        assert!(!m.contains_key("pgasync"), "{v}");
    }
    match m.get("Plans") {
        None => {
            assert!(n.children.is_empty());
            1
        }
        Some(Value::Array(plans)) => {
            assert_eq!(plans.len(), n.children.len());
            1 + plans.iter().zip(&n.children).map(|(p, c)| check_json_node(p, c)).sum::<usize>()
        }
        Some(other) => panic!("Plans is not an array: {other}"),
    }
}

fn check_json(run: &QueryRun) -> Value {
    let json = run.explain_json();
    let arr = json.as_array().expect("top level is an array");
    assert_eq!(arr.len(), 1);
    let top = arr[0].as_object().expect("one object");
    assert!(top.contains_key("Plan"), "{json}");
    assert!(top.contains_key("Execution Time"), "{json}");
    assert!(top.contains_key("Planning Time"), "{json}");
    assert_eq!(top["Triggers"], serde_json::json!([]), "{json}");
    let t = top["Execution Time"].as_f64().unwrap();
    assert!((t - run.execution_ns() as f64 / 1e6).abs() < 0.001);
    let tree = run.explain();
    let mut all = vec![];
    walk(&tree, &mut all);
    assert_eq!(check_json_node(&top["Plan"], &tree), all.len());
    // Re-parses to the same value.
    let s = serde_json::to_string(&json).unwrap();
    let back: Value = serde_json::from_str(&s).unwrap();
    assert_eq!(back, json);
    json
}

#[wasm_bindgen_test(unsupported = test)]
fn e_json_async_and_sync() {
    for async_mode in [true, false] {
        let (_, run) = finished_run("E", &e_knobs(), async_mode);
        let json = check_json(&run);
        let plan = &json[0]["Plan"];
        assert_eq!(plan["Node Type"], "Aggregate");
        assert_eq!(plan["Actual Rows"], 1);
        let append = &plan["Plans"][0];
        assert_eq!(append["Node Type"], "Append");
        assert_eq!(append["Actual Rows"], 2000);
        let scans = append["Plans"].as_array().unwrap();
        assert_eq!(scans.len(), 4);
        for s in scans {
            assert_eq!(s["Node Type"], "Foreign Scan");
            assert_eq!(s["Async Capable"], async_mode);
            assert_eq!(s["Actual Rows"], 500);
            assert_eq!(s["Parent Relationship"], "Member");
        }
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn json_of_every_scenario_is_well_formed() {
    let k = Knobs { rows_per_shard: Some(200), fetch_size: Some(50), ..Default::default() };
    for id in ["A", "B", "C", "D", "E", "F", "G", "pf1", "M", "X"] {
        for async_mode in [false, true] {
            let (_, run) = finished_run(id, &k, async_mode);
            check_json(&run);
        }
    }
}

// ---------------------------------------------------------------------------------
// (never executed)

#[wasm_bindgen_test(unsupported = test)]
fn never_executed_in_an_unfinished_sync_run() {
    // Sync E after the connection set-up and one turn: the Append runs its first
    // child, which waits for its connection; the three other Foreign Scans have not
    // been called yet.
    let s = Scenario::build("E", &e_knobs()).unwrap();
    let mut run = s.start(false, Clock::virtual_clock(), false).unwrap();
    while run.phase == pgasync::run::Phase::Starting {
        run.step();
    }
    run.step();
    assert!(!run.is_done());
    let tree = run.explain();
    let scans = &tree.children[0].children;
    assert!(scans[0].instr.running);
    for c in &scans[1..] {
        assert!(!c.instr.running);
        assert_eq!(c.instr.nloops, 0);
    }
    let text = run.explain_text();
    let never: Vec<&str> = text.lines().filter(|l| l.contains("(never executed)")).collect();
    assert_eq!(never.len(), 3, "{text}");
    for (i, l) in never.iter().enumerate() {
        assert!(l.contains(&format!("Foreign Scan on public.ft{} (never executed)", i + 2)), "{l}");
    }
    // The counters line is only printed for executed scans.
    assert_eq!(text.matches("round trips=").count(), 1, "{text}");
    // JSON shows them with zero loops.
    let json = run.explain_json();
    let plans = json[0]["Plan"]["Plans"][0]["Plans"].as_array().unwrap();
    for p in &plans[1..] {
        assert_eq!(p["Actual Loops"], 0);
        assert_eq!(p["Actual Rows"], 0);
    }
    // The run still finishes correctly afterwards.
    run.run_to_end().unwrap();
    assert!(s.matches_reference(&run.rows));
    assert!(!run.explain_text().contains("never executed"));
}

#[wasm_bindgen_test(unsupported = test)]
fn never_executed_for_a_constructed_node() {
    let leaf = ExplainNode {
        id: 1,
        node_type: "Seq Scan".into(),
        async_capable: false,
        strategy: None,
        relation: Some("t".into()),
        parent_relationship: Some("Outer".into()),
        details: vec![],
        instr: Instrumentation::default(),
        timed: true,
        children: vec![],
    };
    let root = ExplainNode {
        id: 0,
        node_type: "Limit".into(),
        async_capable: false,
        strategy: None,
        relation: None,
        parent_relationship: None,
        details: vec![],
        instr: Instrumentation::default(),
        timed: true,
        children: vec![leaf],
    };
    let text = explain_text(&root, 1_500_000);
    assert_eq!(
        text,
        "Limit (never executed)\n  ->  Seq Scan on public.t (never executed)\nPlanning Time: 0.000 ms\n\
         Execution Time: 1.500 ms\n"
    );
    let json = explain_json(&root, 1_500_000);
    assert_eq!(json[0]["Plan"]["Actual Loops"], 0);
    assert_eq!(json[0]["Plan"]["Plans"][0]["Relation Name"], "t");
    assert_eq!(json[0]["Execution Time"], 1.5);
}

#[wasm_bindgen_test(unsupported = test)]
fn m_limit_one_offset_zero_executes_every_node() {
    // MergeAppend must see a first row from every child, so even LIMIT 1 runs them all.
    let k = Knobs { rows_per_shard: Some(500), offset: Some(0), limit: Some(1), ..Default::default() };
    for async_mode in [false, true] {
        let (_, run) = finished_run("M", &k, async_mode);
        assert_eq!(run.rows.len(), 1);
        let text = run.explain_text();
        assert!(!text.contains("never executed"), "{text}");
        let tree = run.explain();
        let mut all = vec![];
        walk(&tree, &mut all);
        for n in all {
            assert_eq!(n.instr.finished().nloops, 1, "{} not run once", n.node_type);
        }
        for c in &tree.children[0].children {
            assert!(c.instr.ntuples <= 1, "{}", c.instr.ntuples);
            // PostgreSQL 15 does not push the LIMIT into a partition's scan.
            assert!(!detail(c, "Remote SQL").unwrap().contains("LIMIT"), "{:?}", c.details);
        }
    }
}

// ---------------------------------------------------------------------------------
// Rows flow through M (MergeAppend under Limit).

#[wasm_bindgen_test(unsupported = test)]
fn m_rows_flow() {
    for (offset, limit) in [(100u64, 15u64), (0, 40), (250, 7)] {
        for async_mode in [false, true] {
            let k = Knobs {
                rows_per_shard: Some(500),
                fetch_size: Some(50),
                offset: Some(offset),
                limit: Some(limit),
                ..Default::default()
            };
            let (_, run) = finished_run("M", &k, async_mode);
            let ctx = format!("offset {offset} limit {limit} async {async_mode}");
            assert_eq!(run.rows.len() as u64, limit, "{ctx}");
            let lim = run.explain();
            assert_eq!(lim.node_type, "Limit", "{ctx}");
            assert_eq!(lim.instr.finished().ntuples, limit, "{ctx}");
            let ma = &lim.children[0];
            assert_eq!(ma.node_type, "Merge Append", "{ctx}");
            // Keys name the node's input columns ($N), resolved when printed.
            assert_eq!(detail(ma, "Sort Key"), Some("$2 DESC"), "{ctx}");
            assert!(run.explain_text().contains("Sort Key: players.score DESC"), "{ctx}");
            assert_eq!(ma.instr.ntuples, offset + limit, "{ctx}");
            assert_eq!(ma.children.len(), 4, "{ctx}");
            let mut sum = 0;
            for c in &ma.children {
                assert_eq!(c.node_type, "Foreign Scan", "{ctx}");
                // PostgreSQL 15's MergeAppend is synchronous: no Async Foreign Scan.
                assert!(!c.async_capable, "{ctx}");
                assert!(c.instr.ntuples <= offset + limit, "{ctx}: {}", c.instr.ntuples);
                let sql = detail(c, "Remote SQL").unwrap();
                assert!(sql.ends_with("ORDER BY score DESC NULLS FIRST"), "{ctx}: {sql}");
                sum += c.instr.ntuples;
            }
            // Every row the MergeAppend returned came from a child; at most one row per
            // child is left unconsumed in the merge.
            assert!(sum >= ma.instr.ntuples, "{ctx}");
            assert!(sum <= ma.instr.ntuples + 4, "{ctx}");
            // TEXT agrees.
            let text = run.explain_text();
            let first = text.lines().next().unwrap();
            assert!(first.starts_with("Limit"), "{first}");
            assert!(first.contains(&format!("rows={limit} loops=1")), "{first}");
        }
    }
}

// ---------------------------------------------------------------------------------
// X: partitionwise aggregate.

#[wasm_bindgen_test(unsupported = test)]
fn x_async_plan() {
    let k = Knobs { rows_per_shard: Some(500), ..Default::default() };
    let (s, run) = finished_run("X", &k, true);
    assert_eq!(run.rows.len(), 20);
    assert!(s.matches_reference(&run.rows));
    let root = run.explain();
    assert_eq!(root.node_type, "Append");
    assert_eq!(root.instr.ntuples, 20);
    assert_eq!(root.children.len(), 2);

    let fs = &root.children[0];
    assert_eq!(fs.node_type, "Foreign Scan");
    assert!(fs.async_capable);
    // The aggregate is pushed down: an upper-relation scan, as PostgreSQL prints it.
    assert_eq!(fs.relation, None);
    assert_eq!(detail(fs, "Relations"), Some("Aggregate on (public.p1 pt)"));
    let sql = detail(fs, "Remote SQL").unwrap();
    assert!(sql.contains("GROUP BY"), "{sql}");
    assert!(sql.contains("count(*)"), "{sql}");
    assert_eq!(fs.instr.ntuples, 10);

    let agg = &root.children[1];
    assert_eq!(agg.node_type, "Aggregate");
    assert_eq!(agg.strategy.as_deref(), Some("Hashed"));
    assert!(!agg.async_capable);
    assert_eq!(agg.instr.ntuples, 10);
    assert_eq!(agg.children.len(), 1);
    assert_eq!(agg.children[0].node_type, "Seq Scan");
    assert_eq!(agg.children[0].instr.ntuples, 500);

    let text = run.explain_text();
    assert!(text.contains("->  Async Foreign Scan (actual"), "{text}");
    assert!(text.contains("Relations: Aggregate on (public.p1 pt)"), "{text}");
    assert!(text.contains("->  HashAggregate"), "{text}");
    let json = check_json(&run);
    let plans = json[0]["Plan"]["Plans"].as_array().unwrap();
    assert_eq!(plans[1]["Node Type"], "Aggregate");
    assert_eq!(plans[1]["Strategy"], "Hashed");
}

// ---------------------------------------------------------------------------------
// PostgreSQL 15's layout, exactly: the expected texts are a real coordinator's
// `EXPLAIN (ANALYZE, VERBOSE, COSTS OFF[, FORMAT JSON])` of scenario E (async), with
// the same numbers put into a constructed tree.

fn timed(rows: u64, startup_us: u64, total_us: u64) -> Instrumentation {
    Instrumentation {
        nloops: 1,
        ntuples: rows,
        startup_ns: startup_us * 1000,
        total_ns: total_us * 1000,
        running: true,
        ..Default::default()
    }
}

fn node(id: usize, ty: &str, instr: Instrumentation, children: Vec<ExplainNode>) -> ExplainNode {
    ExplainNode {
        id,
        node_type: ty.into(),
        async_capable: false,
        strategy: None,
        relation: None,
        parent_relationship: None,
        details: vec![],
        instr,
        timed: true,
        children,
    }
}

/// Aggregate over Append over four async foreign scans, as the executor describes it.
fn e_tree() -> ExplainNode {
    let scans = (1..=4)
        .map(|k| {
            let mut s = node(1 + k, "Foreign Scan", timed(250, 737, 880), vec![]);
            s.async_capable = true;
            s.relation = Some(format!("ft{k}"));
            s.parent_relationship = Some("Member".into());
            s.details.push(("Server".into(), format!("s{k}")));
            s.push_output("a");
            s.details.push(("Remote SQL".into(), format!("SELECT a FROM public.t{k}")));
            s.instr.remote.batches = 3;
            s
        })
        .collect();
    let mut append = node(1, "Append", timed(1000, 2917, 3790), scans);
    append.parent_relationship = Some("Outer".into());
    let mut agg = node(0, "Aggregate", timed(1, 3874, 3876), vec![append]);
    agg.strategy = Some("Plain".into());
    agg.push_output("sum($0)");
    agg
}

const PG15_E_TEXT: &str = "\
Aggregate (actual time=3.874..3.876 rows=1 loops=1)
  Output: sum(ft1.a)
  ->  Append (actual time=2.917..3.790 rows=1000 loops=1)
        ->  Async Foreign Scan on public.ft1 (actual time=0.737..0.880 rows=250 loops=1)
              Output: ft1.a
              Remote SQL: SELECT a FROM public.t1
        ->  Async Foreign Scan on public.ft2 (actual time=0.737..0.880 rows=250 loops=1)
              Output: ft2.a
              Remote SQL: SELECT a FROM public.t2
        ->  Async Foreign Scan on public.ft3 (actual time=0.737..0.880 rows=250 loops=1)
              Output: ft3.a
              Remote SQL: SELECT a FROM public.t3
        ->  Async Foreign Scan on public.ft4 (actual time=0.737..0.880 rows=250 loops=1)
              Output: ft4.a
              Remote SQL: SELECT a FROM public.t4
Planning Time: 1.743 ms
Execution Time: 23.241 ms
";

fn pg15_e_json() -> String {
    let scan = |k: usize| {
        format!(
            r#"            {{
              "Node Type": "Foreign Scan",
              "Operation": "Select",
              "Parent Relationship": "Member",
              "Parallel Aware": false,
              "Async Capable": true,
              "Relation Name": "ft{k}",
              "Schema": "public",
              "Alias": "ft{k}",
              "Actual Startup Time": 0.737,
              "Actual Total Time": 0.880,
              "Actual Rows": 250,
              "Actual Loops": 1,
              "Output": ["ft{k}.a"],
              "Remote SQL": "SELECT a FROM public.t{k}"
            }}"#
        )
    };
    let scans: Vec<String> = (1..=4).map(scan).collect();
    format!(
        r#"[
  {{
    "Plan": {{
      "Node Type": "Aggregate",
      "Strategy": "Plain",
      "Partial Mode": "Simple",
      "Parallel Aware": false,
      "Async Capable": false,
      "Actual Startup Time": 3.874,
      "Actual Total Time": 3.876,
      "Actual Rows": 1,
      "Actual Loops": 1,
      "Output": ["sum(ft1.a)"],
      "Plans": [
        {{
          "Node Type": "Append",
          "Parent Relationship": "Outer",
          "Parallel Aware": false,
          "Async Capable": false,
          "Actual Startup Time": 2.917,
          "Actual Total Time": 3.790,
          "Actual Rows": 1000,
          "Actual Loops": 1,
          "Subplans Removed": 0,
          "Plans": [
{}
          ]
        }}
      ]
    }},
    "Planning Time": 1.743,
    "Triggers": [
    ],
    "Execution Time": 23.241
  }}
]"#,
        scans.join(",\n")
    )
}

#[wasm_bindgen_test(unsupported = test)]
fn text_is_postgres_15_verbose_costs_off() {
    let text = explain_text_with(&e_tree(), &ExplainOptions::POSTGRES_VERBOSE, 1_743_000, 23_241_000);
    assert_eq!(text, PG15_E_TEXT);
}

#[wasm_bindgen_test(unsupported = test)]
fn json_is_postgres_15_keys_order_and_layout() {
    let opts = ExplainOptions::POSTGRES_VERBOSE;
    let text = explain_json_text(&e_tree(), &opts, 1_743_000, 23_241_000);
    assert_eq!(text, pg15_e_json());
    // The value form holds the same.
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(explain_json_with(&e_tree(), &opts, 1_743_000, 23_241_000), v);
}

#[wasm_bindgen_test(unsupported = test)]
fn without_verbose_no_output_no_remote_sql_no_schema() {
    let text = explain_text_with(&e_tree(), &ExplainOptions::POSTGRES, 0, 0);
    assert!(text.contains("->  Async Foreign Scan on ft1 (actual time=0.737..0.880 rows=250 loops=1)\n"), "{text}");
    assert!(!text.contains("Output:") && !text.contains("Remote SQL") && !text.contains("public."), "{text}");
    let json = explain_json_with(&e_tree(), &ExplainOptions::POSTGRES, 0, 0);
    let scan = &json[0]["Plan"]["Plans"][0]["Plans"][0];
    assert!(scan.get("Output").is_none() && scan.get("Schema").is_none() && scan.get("Remote SQL").is_none());
    assert_eq!(scan["Alias"], "ft1");
}

#[wasm_bindgen_test(unsupported = test)]
fn our_counters_only_with_the_option_and_clearly_ours() {
    let text = explain_text_with(&e_tree(), &ExplainOptions { verbose: true, counters: true }, 0, 0);
    let ours: Vec<&str> =
        text.lines().map(str::trim_start).filter(|l| l.starts_with("Remote: ") || l.starts_with("Async: ")).collect();
    assert_eq!(ours.len(), 8, "{text}");
    assert!(ours[0].starts_with("Remote: server=s1 batches=3 "), "{text}");
    // Without them the text is PostgreSQL's (the counters are the only difference).
    let without: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("Remote: ") && !l.trim_start().starts_with("Async: "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(without, explain_text_with(&e_tree(), &ExplainOptions::POSTGRES_VERBOSE, 0, 0));
    let json = explain_json_with(&e_tree(), &ExplainOptions { verbose: true, counters: true }, 0, 0);
    assert_eq!(json[0]["Plan"]["Plans"][0]["Plans"][2]["pgasync"]["Server"], "s3");
    assert_eq!(json[0]["Plan"]["Plans"][0]["Plans"][2]["pgasync"]["Remote Batches"], 3);
    let plain = explain_json_with(&e_tree(), &ExplainOptions::POSTGRES_VERBOSE, 0, 0);
    assert!(plain[0]["Plan"]["Plans"][0]["Plans"][2].get("pgasync").is_none());
}

#[wasm_bindgen_test(unsupported = test)]
fn output_of_one_relation_is_unqualified_and_quoted_as_postgres_does() {
    // EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) SELECT * FROM "Odd" t: `Output: "A", "select", user_`.
    let mut scan = node(0, "Foreign Scan", timed(0, 864, 865), vec![]);
    scan.relation = Some("Odd".into());
    scan.set_alias("t");
    for c in ["A", "select", "user_"] {
        scan.push_output(c);
    }
    scan.details.push(("Remote SQL".into(), r#"SELECT "A", "select", user_ FROM public."Odd Tab""#.into()));
    let text = explain_text_with(&scan, &ExplainOptions::POSTGRES_VERBOSE, 0, 0);
    assert_eq!(
        text.lines().take(3).collect::<Vec<_>>(),
        [
            r#"Foreign Scan on public."Odd" t (actual time=0.864..0.865 rows=0 loops=1)"#,
            r#"  Output: "A", "select", user_"#,
            r#"  Remote SQL: SELECT "A", "select", user_ FROM public."Odd Tab""#,
        ]
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn partitions_print_their_alias() {
    // SELECT sum(a) FROM pt (foreign partitions t_p1.. scanned as pt_1..):
    // `->  Async Foreign Scan on public.t_p1 pt_1 (…)`, `Output: pt_1.a`.
    let mut tree = e_tree();
    for (k, s) in tree.children[0].children.iter_mut().enumerate() {
        s.relation = Some(format!("t_p{}", k + 1));
        s.set_alias(format!("pt_{}", k + 1));
    }
    let text = explain_text_with(&tree, &ExplainOptions::POSTGRES_VERBOSE, 0, 0);
    assert!(text.contains("->  Async Foreign Scan on public.t_p2 pt_2 (actual"), "{text}");
    assert!(text.contains("      Output: pt_2.a\n"), "{text}");
    let json = explain_json_with(&tree, &ExplainOptions::POSTGRES_VERBOSE, 0, 0);
    let s = &json[0]["Plan"]["Plans"][0]["Plans"][1];
    assert_eq!((&s["Relation Name"], &s["Alias"]), (&Value::from("t_p2"), &Value::from("pt_2")));
}

/// EXPLAIN's TIMING OFF (`EState::timing`): no node reads the clock, and the output
/// shows rows and loops only, as PostgreSQL's does. On a real clock a read costs tens
/// of ns, several per row: `bench --live` compares with PostgreSQL's TIMING OFF.
#[wasm_bindgen_test(unsupported = test)]
fn timing_off_reads_no_clock_per_row_and_shows_rows_and_loops_only() {
    use std::cell::Cell;
    use std::rc::Rc;
    let s = Scenario::build("B", &Knobs { shards: Some(4), rows_per_shard: Some(1000), ..Default::default() }).unwrap();
    let reads = |timing: bool| {
        let count = Rc::new(Cell::new(0u64));
        let c = count.clone();
        let clock = Clock::from_host(Box::new(move || {
            c.set(c.get() + 1);
            c.get() * 1000
        }));
        let mut run = s.start(false, clock, false).unwrap();
        run.es.timing = timing;
        run.run_to_end().unwrap();
        (count.get(), run)
    };
    let (on, _) = reads(true);
    let (off, run) = reads(false);
    assert!(on > 4 * 4000, "timing on: {on} reads for 4000 rows");
    assert!(off < 20, "timing off: {off} reads");
    let text = run.explain_text();
    assert!(text.starts_with("Aggregate (actual rows=1 loops=1)\n"), "{text}");
    assert!(!text.contains("time="), "{text}");
    let json = explain_json(&run.explain(), run.execution_ns()).to_string();
    assert!(!json.contains("Actual Total Time") && json.contains("\"Actual Rows\":1"), "{json}");
}
