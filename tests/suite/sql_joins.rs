//! Join paths (issue 23): every join type the front end plans (inner, LEFT, RIGHT,
//! FULL) by every method PostgreSQL could use for it (the `enable_*` settings force
//! one: a Hash Join, a Merge Join, a Nested Loop over a Materialize or over the inner
//! side itself), returns the rows a reference computed here returns: the pairs with
//! equal, non-NULL keys, and each unmatched row of a preserved side null-extended.
//! The tables have duplicated keys (a merge join's groups), NULL keys, keys on one
//! side only, and a partitioned side whose partitions are foreign tables on two
//! servers (rows in batches; in async mode an async Append under the join, rescanned
//! under a Nested Loop). Each query runs in sync and in async mode.

use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::{explain_doc_json_text, explain_doc_text, ExplainOptions};
use pgasync::knobs::{Knobs, Source};
use pgasync::plan::Plan;
use wasm_bindgen_test::wasm_bindgen_test;

pub(crate) const SETUP: &str = "-- @shard s1
create table fr_a (k int, w text);
-- @shard s2
create table fr_b (k int, w text);
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', fetch_size '7', async_capable 'true');
create server s2 foreign data wrapper postgres_fdw options (dbname 'postgres', fetch_size '5', async_capable 'true');
create user mapping for public server s1;
create user mapping for public server s2;
create table fr (k int, w text) partition by list (k);
create foreign table fr_a partition of fr for values in (0, 1, 2, 3) server s1;
create foreign table fr_b partition of fr default server s2;
insert into fr select i % 9, 'f' || i from generate_series(1, 40) i;
insert into fr values (null, 'fnull'), (null, 'fnull2'), (20, 'f20');
create table lo (k int, v int);
insert into lo select i % 13, i from generate_series(1, 30) i;
insert into lo values (null, 100), (null, 101), (30, 102);
";

/// The settings that leave PostgreSQL one method (for a Nested Loop: with or
/// without a Materialize).
const METHODS: [(&str, &str); 4] = [
    ("Hash Join", "set enable_mergejoin = off;\nset enable_nestloop = off;"),
    ("Merge Join", "set enable_hashjoin = off;\nset enable_nestloop = off;"),
    ("Materialize", "set enable_hashjoin = off;\nset enable_mergejoin = off;"),
    ("Nested Loop", "set enable_hashjoin = off;\nset enable_mergejoin = off;\nset enable_material = off;"),
];

fn has(plan: &Plan, node: &str) -> bool {
    pgasync::executor::async_through::plan_node_name(plan) == node || plan.children().iter().any(|c| has(c, node))
}

/// The query's rows (as text, sorted) and its plan, with `settings` made first; the
/// rows of the sync and the async run, which must be the same.
fn run(settings: &str, query: &str) -> Result<(Vec<String>, Plan), String> {
    super::rows_in_both_modes(&format!("{SETUP}{settings}\n-- @query\n{query}\n"))
}

/// SETUP's rows of `lo` (k, v), computed here as its INSERTs make them.
pub(crate) fn lo_rows() -> Vec<(Option<i64>, i64)> {
    (1..=30).map(|i| (Some(i % 13), i)).chain([(None, 100), (None, 101), (Some(30), 102)]).collect()
}

/// SETUP's rows of `fr` (k, w), computed here as its INSERTs make them.
pub(crate) fn fr_rows() -> Vec<(Option<i64>, String)> {
    (1..=40)
        .map(|i| (Some(i % 9), format!("f{i}")))
        .chain([(None, "fnull".to_string()), (None, "fnull2".to_string()), (Some(20), "f20".to_string())])
        .collect()
}

/// A key as the rows' text shows it.
fn key_text(k: Option<i64>) -> String {
    k.map_or("NULL".to_string(), |k| k.to_string())
}

/// EXPLAIN of `query` (an `explain …` statement) over SETUP with `settings` made
/// first, as text and as JSON with `options`.
fn explain_with(settings: &str, query: &str, options: &ExplainOptions) -> (String, String) {
    let s = SqlScenario::load(&format!("{SETUP}{settings}\n-- @query\nselect 1;\n")).unwrap();
    let q = s.with_query(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    let tree = q.plan_only(&Knobs::default(), Source::Json, false).unwrap();
    let doc = q.explain_doc();
    (explain_doc_text(&tree, options, &doc, 0, 0), explain_doc_json_text(&tree, options, &doc, 0, 0))
}

/// EXPLAIN VERBOSE's text of `query` over SETUP.
fn explain_verbose(query: &str) -> String {
    explain_with("", query, &ExplainOptions::POSTGRES_VERBOSE).0
}

/// The rows of `lo <jt> fr on lo.k = fr.k` (lo.k, lo.v, fr.k, fr.w), as the
/// reference: every pair with equal non-NULL keys, and for LEFT (FULL) each lo row
/// without one, for RIGHT (FULL) each fr row without one, NULLs for the other side.
fn reference(jt: &str) -> Vec<String> {
    let (lo, fr) = (lo_rows(), fr_rows());
    let mut out = vec![];
    for (lk, v) in &lo {
        let matches: Vec<_> = fr.iter().filter(|(fk, _)| lk.is_some() && fk == lk).collect();
        for (fk, w) in &matches {
            out.push(format!("{}|{v}|{}|{w}", key_text(*lk), key_text(*fk)));
        }
        if matches.is_empty() && matches!(jt, "left" | "full") {
            out.push(format!("{}|{v}|NULL|NULL", key_text(*lk)));
        }
    }
    if matches!(jt, "right" | "full") {
        for (fk, w) in &fr {
            if !lo.iter().any(|(lk, _)| fk.is_some() && lk == fk) {
                out.push(format!("NULL|NULL|{}|{w}", key_text(*fk)));
            }
        }
    }
    out.sort();
    out
}

#[wasm_bindgen_test(unsupported = test)]
fn every_join_type_by_every_method_returns_the_reference_rows() {
    for jt in ["inner", "left", "right", "full"] {
        let query = format!("select lo.k, lo.v, fr.k, fr.w from lo {jt} join fr on lo.k = fr.k;");
        let want = reference(jt);
        for (node, settings) in METHODS {
            let nested = matches!(node, "Materialize" | "Nested Loop");
            // PostgreSQL has no Nested Loop for a join that returns the inner side's
            // unmatched rows: a LEFT JOIN's lo is outer; a RIGHT JOIN is the same
            // join with fr outer; FULL has none (it is merged or hashed, disabled or not).
            if nested && jt == "full" {
                continue;
            }
            let (rows, plan) = run(settings, &query).unwrap_or_else(|e| panic!("{jt} by {node}: {e}"));
            let method = if node == "Nested Loop" { "Nested Loop" } else { node };
            assert!(has(&plan, method), "{jt} by {node}: {plan:?}");
            if node == "Nested Loop" {
                assert!(!has(&plan, "Materialize"), "{jt}, enable_material off: {plan:?}");
            }
            assert_eq!(rows, want, "{jt} join by {node}");
        }
    }
}

/// A FULL join with merge and hash joins off is still merged or hashed (they are its
/// only ways; PostgreSQL adds `disable_cost` to each), and what is not planned is
/// refused by name.
#[wasm_bindgen_test(unsupported = test)]
fn a_full_join_has_no_nested_loop_and_unplanned_joins_are_refused() {
    let all_off = "set enable_hashjoin = off;\nset enable_mergejoin = off;\nset enable_nestloop = off;";
    let (rows, plan) = run(all_off, "select lo.k, lo.v, fr.k, fr.w from lo full join fr on lo.k = fr.k;").unwrap();
    assert!(has(&plan, "Merge Join") || has(&plan, "Hash Join"), "{plan:?}");
    assert_eq!(rows, reference("full"));
    // enable_sort off: a Merge Join's Sorts cost disable_cost more, so the join is
    // hashed (or a Nested Loop), not refused for its Sort.
    let no_sort = "set enable_sort = off;\nset enable_hashjoin = off;";
    let (rows, plan) = run(no_sort, "select lo.k, lo.v, fr.k, fr.w from lo join fr on lo.k = fr.k;").unwrap();
    assert!(!has(&plan, "Sort") && has(&plan, "Nested Loop"), "{plan:?}");
    assert_eq!(rows, reference("inner"));
    for (query, named) in [
        ("select * from lo left join fr on lo.k = fr.k and lo.v > 3;", "an outer join's ON condition"),
        ("select * from lo left join fr on lo.k + 1 = fr.k;", "a join key that is an expression"),
        ("select * from lo join fr on fr.k = lo.k * 2;", "a join key that is an expression"),
        ("select * from lo full join fr using (k);", "FULL JOIN … USING"),
        ("select * from lo natural full join fr;", "FULL JOIN … USING"),
    ] {
        let e = run("", query).expect_err(query);
        assert!(e.contains("not supported by the sandbox") && e.contains(named), "{query}: {e}");
    }
}

/// (h23n) An inner join without an equality between its sides (`lo.k < fr.k`, a
/// CROSS JOIN, `FROM lo, fr`) is a Nested Loop, its condition the Join Filter (no
/// merge or hash clause: `match_unsorted_outer` only), over the partitioned side's
/// async Append rescanned or materialized; its rows are every pair the condition
/// holds for, computed here.
#[wasm_bindgen_test(unsupported = test)]
fn joins_without_an_equality_are_nested_loops_over_every_pair() {
    let (lo, fr) = (lo_rows(), fr_rows());
    let pairs = |holds: &dyn Fn(Option<i64>, Option<i64>) -> bool| {
        let mut out = vec![];
        for (lk, v) in &lo {
            for (fk, w) in fr.iter().filter(|(fk, _)| holds(*lk, *fk)) {
                out.push(format!("{}|{v}|{}|{w}", key_text(*lk), key_text(*fk)));
            }
        }
        out.sort();
        out
    };
    let less = pairs(&|l, f| matches!((l, f), (Some(l), Some(f)) if l < f));
    let every = pairs(&|_, _| true);
    let cols = "lo.k, lo.v, fr.k, fr.w";
    for (settings, material) in [("", true), ("set enable_material = off;", false)] {
        for (query, want) in [
            (format!("select {cols} from lo join fr on lo.k < fr.k;"), &less),
            (format!("select {cols} from lo, fr where fr.k > lo.k;"), &less),
            (format!("select {cols} from lo cross join fr;"), &every),
            (format!("select {cols} from lo, fr;"), &every),
        ] {
            let (rows, plan) = run(settings, &query).unwrap_or_else(|e| panic!("{query}: {e}"));
            assert!(has(&plan, "Nested Loop") && !has(&plan, "Hash Join") && !has(&plan, "Merge Join"), "{plan:?}");
            assert_eq!(has(&plan, "Materialize"), material, "{settings} {query}: {plan:?}");
            assert_eq!(&rows, want, "{settings} {query}");
        }
    }
    // Parenthesized, on the left or (an inner join of inner joins) on the right.
    let want = reference("inner");
    for query in [
        "select lo.k, lo.v, fr.k, fr.w from (lo join fr on lo.k = fr.k);",
        "select lo.k, lo.v, fr.k, fr.w from (lo join fr on lo.k = fr.k) join lo l2 on l2.v = lo.v;",
        "select lo.k, lo.v, fr.k, fr.w from lo l2 join (lo join fr on lo.k = fr.k) on l2.v = lo.v;",
    ] {
        let (rows, _) = run("", query).unwrap_or_else(|e| panic!("{query}: {e}"));
        assert_eq!(rows, want, "{query}");
    }
}

/// EXPLAIN names an outer join by its method and type, in TEXT (`Merge Left Join`,
/// its `Merge Cond` outer side first) and in JSON (`"Join Type": "Left"`), and prints
/// a condition above an outer join as its Filter, an inner join's other condition as
/// its Join Filter.
#[wasm_bindgen_test(unsupported = test)]
fn explain_names_the_join_type_and_its_conditions() {
    let explain = |settings: &str, query: &str| explain_with(settings, query, &ExplainOptions::POSTGRES);
    let merge = "set enable_hashjoin = off;\nset enable_nestloop = off;";
    let (text, json) =
        explain(merge, "explain select lo.v, fr.w from lo left join fr on fr.k = lo.k where fr.w is null;");
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("Merge Left Join") || first.starts_with("Merge Right Join"), "{text}");
    assert!(text.contains("Merge Cond: (") && text.contains("Filter: (fr.w IS NULL)"), "{text}");
    assert!(!text.contains("Join Filter"), "{text}");
    assert!(json.contains("\"Node Type\": \"Merge Join\"") && json.contains("\"Join Type\": \""), "{json}");
    assert!(!json.contains("\"Join Type\": \"Inner\""), "{json}");
    let (text, _) = explain("", "explain select lo.v, fr.w from lo full join fr on lo.k = fr.k;");
    assert!(text.starts_with("Hash Full Join") || text.starts_with("Merge Full Join"), "{text}");
    let (text, json) = explain(merge, "explain select lo.v, fr.w from lo join fr on lo.k = fr.k and lo.v > fr.k * 2;");
    assert!(text.starts_with("Merge Join") && text.contains("Join Filter: (lo.v > (fr.k * 2))"), "{text}");
    assert!(json.contains("\"Join Type\": \"Inner\""), "{json}");
    // Every equality between the sides is in a Hash Cond, outer side first; the
    // rows are those with both keys equal.
    let hash = "set enable_mergejoin = off;\nset enable_nestloop = off;";
    let keys = "select lo.k, lo.v, fr.k, fr.w from lo join fr on lo.k = fr.k and lo.v = fr.k;";
    let (text, _) = explain(hash, &format!("explain {keys}"));
    assert!(text.starts_with("Hash Join") && text.contains("Hash Cond: ((") && text.contains(" AND "), "{text}");
    assert!(!text.contains("Join Filter"), "{text}");
    let (rows, _) = run(hash, keys).unwrap();
    let want: Vec<String> =
        reference("inner").into_iter().filter(|r| r.split('|').nth(1) == r.split('|').nth(2)).collect();
    assert!(!want.is_empty());
    assert_eq!(rows, want);
}

/// `JOIN … USING (k)` and `NATURAL JOIN` are the join `ON l.k = r.k`
/// (transformJoinUsingClause): the same rows as the reference's, `*` listing the
/// merged column once and first, then each side's other columns (expandRTE); the
/// merged column is the left side's for an inner or LEFT join, the right side's for a
/// RIGHT join (buildMergedJoinVar), and EXPLAIN prints it so qualified.
#[wasm_bindgen_test(unsupported = test)]
fn using_and_natural_joins_are_the_equi_join_on_their_columns() {
    // The reference's rows "lo.k|lo.v|fr.k|fr.w" as "k|v|w", k the merged column.
    let merged = |jt: &str, right: bool| -> Vec<String> {
        let mut rows: Vec<String> = reference(jt)
            .iter()
            .map(|r| {
                let f: Vec<&str> = r.split('|').collect();
                format!("{}|{}|{}", if right { f[2] } else { f[0] }, f[1], f[3])
            })
            .collect();
        rows.sort();
        rows
    };
    for (jt, right) in [("inner", false), ("left", false), ("right", true)] {
        let want = merged(jt, right);
        assert!(want.iter().any(|r| r.contains("NULL")) == (jt != "inner"), "{jt}: {want:?}");
        for query in
            [format!("select * from lo {jt} join fr using (k);"), format!("select * from lo natural {jt} join fr;")]
        {
            for (node, settings) in METHODS {
                let (rows, plan) = run(settings, &query).unwrap_or_else(|e| panic!("{query} by {node}: {e}"));
                assert_eq!(rows, want, "{query} by {node}: {plan:?}");
            }
        }
    }
    // An unqualified merged column anywhere in the query is the merged side's.
    let (rows, _) = run("", "select k, count(*) from lo join fr using (k) where k < 3 group by k order by k;").unwrap();
    let mut counts = std::collections::BTreeMap::new();
    for r in merged("inner", false) {
        let k = r.split('|').next().unwrap().to_string();
        if k.parse::<i64>().is_ok_and(|k| k < 3) {
            *counts.entry(k).or_insert(0) += 1;
        }
    }
    let mut want: Vec<String> = counts.iter().map(|(k, n)| format!("{k}|{n}")).collect();
    want.sort();
    assert_eq!(rows, want);
    // EXPLAIN: the merged column qualified by its side, the join's condition left = right.
    let explain = explain_verbose;
    let text = explain("explain verbose select k, w from lo join fr using (k);");
    assert!(
        text.contains("Output: lo.k, fr.w") && (text.contains("(lo.k = fr.k)") || text.contains("(fr.k = lo.k)")),
        "{text}"
    );
    let text = explain("explain verbose select k, w from lo right join fr using (k);");
    assert!(text.contains("Output: fr.k, fr.w"), "{text}");
    let text = explain("explain verbose select * from lo left join fr using (k);");
    assert!(text.contains("Output: lo.k, lo.v, fr.w"), "{text}");
    // PostgreSQL's errors for a USING column missing on a side.
    for (query, error) in [
        ("select * from lo join fr using (v);", "column \"v\" specified in USING clause does not exist in right table"),
        ("select * from lo join fr using (w);", "column \"w\" specified in USING clause does not exist in left table"),
    ] {
        let e = run("", query).expect_err(query);
        assert!(e.contains(error), "{query}: {e}");
    }
}

/// `SELECT` without FROM: a Result without input returning its one row, the
/// expressions folded as eval_const_expressions folds them; what PostgreSQL builds
/// around such a Result (WHERE, aggregates, ORDER BY) and the aggregates the sandbox
/// lacks are refused by name.
#[wasm_bindgen_test(unsupported = test)]
fn select_without_from_is_a_result_of_one_row() {
    let (rows, plan) = run("", "select 1 + 2 as x, 'a' || 'b', 7;").unwrap();
    assert_eq!(rows, vec!["3|ab|7".to_string()]);
    assert!(matches!(&plan, Plan::ConstResult { rows, .. } if rows.len() == 1), "{plan:?}");
    let explain = explain_verbose;
    let text = explain("explain verbose select 1 + 2 as x, 'a' || 'b';");
    assert!(text.starts_with("Result  (cost=0.00..0.01 rows=1 "), "{text}");
    assert!(text.contains("Output: 3, 'ab'::text"), "{text}");
    // In a top-level UNION ALL (flattened) a leaf without FROM is pulled up: the
    // Append costs its members and half a cpu_tuple_cost a row; under a UNION each
    // leaf is a subquery whose scan costs cpu_tuple_cost a row more.
    let text = explain("explain select 1 union all select 2;");
    assert!(text.starts_with("Append  (cost=0.00..0.03 rows=2 width=4)"), "{text}");
    let text = explain("explain select 1 union select 2;");
    assert!(text.contains("->  Append  (cost=0.00..0.05 rows=2 width=4)"), "{text}");
    for (query, named) in [
        ("select 1 where 1 = 2;", "SELECT without FROM with WHERE"),
        ("select 1 order by 1;", "SELECT without FROM with WHERE"),
        ("select k, string_agg(w, ',') from fr group by k;", "the aggregate string_agg()"),
        ("select array_agg(v) from lo;", "the aggregate array_agg()"),
    ] {
        let e = run("", query).expect_err(query);
        assert!(e.contains("not supported by the sandbox") && e.contains(named), "{query}: {e}");
    }
    let e = run("", "select *;").expect_err("select *");
    assert!(e.contains("SELECT * with no tables specified is not valid"), "{e}");
}
