//! Joins of three to five relations (issue 23, `coordinator_sql::joinrels`): whatever
//! order and methods the join search picks, under every setting that leaves
//! PostgreSQL one method, the rows are those a reference computed here returns (each
//! join as written, left to right: pairs with equal non-NULL keys, unmatched rows of a
//! preserved side null-extended), in sync and in async mode; what the search does
//! not plan is refused by name.

use pgasync::coordinator_sql::SqlScenario;
use pgasync::knobs::Knobs;
use pgasync::plan::Plan;
use wasm_bindgen_test::wasm_bindgen_test;

/// A third table, md, after sql_joins' SETUP (fr partitioned over two servers, lo).
const MD: &str = "create table md (k int, t int);
insert into md select i % 5, i from generate_series(1, 12) i;
insert into md values (null, 50), (7, 51), (40, 52);
";

/// The settings that leave PostgreSQL one method (and none: its choice by cost).
const METHODS: [(&str, &str); 5] = [
    ("by cost", ""),
    ("Hash Join", "set enable_mergejoin = off;\nset enable_nestloop = off;"),
    ("Merge Join", "set enable_hashjoin = off;\nset enable_nestloop = off;"),
    ("Materialize", "set enable_hashjoin = off;\nset enable_mergejoin = off;"),
    ("Nested Loop", "set enable_hashjoin = off;\nset enable_mergejoin = off;\nset enable_material = off;"),
];

fn count(plan: &Plan, nodes: &[&str]) -> usize {
    let here = nodes.contains(&pgasync::executor::async_through::plan_node_name(plan)) as usize;
    here + plan.children().iter().map(|c| count(c, nodes)).sum::<usize>()
}

/// The query's rows (as text, sorted) and its plan, with `settings` made first; the
/// rows of the sync and the async run, which must be the same.
fn run(settings: &str, query: &str) -> Result<(Vec<String>, Plan), String> {
    super::rows_in_both_modes(&format!("{}{MD}{settings}\n-- @query\n{query}\n", super::sql_joins::SETUP))
}

type Row = Vec<Option<String>>;

fn lo() -> Vec<Row> {
    let v = super::sql_joins::lo_rows();
    v.into_iter().map(|(k, x)| vec![k.map(|k| k.to_string()), Some(x.to_string())]).collect()
}

fn fr() -> Vec<Row> {
    let v = super::sql_joins::fr_rows();
    v.into_iter().map(|(k, w)| vec![k.map(|k| k.to_string()), Some(w)]).collect()
}

fn md() -> Vec<Row> {
    let mut v: Vec<(Option<i64>, i64)> = (1..=12).map(|i| (Some(i % 5), i)).collect();
    v.extend([(None, 50), (Some(7), 51), (Some(40), 52)]);
    v.into_iter().map(|(k, x)| vec![k.map(|k| k.to_string()), Some(x.to_string())]).collect()
}

/// `left <jt> right ON left[lk] = right[rk]`, by the definition: equal non-NULL keys
/// match; a preserved side's unmatched rows are null-extended.
fn join(left: &[Row], right: &[Row], jt: &str, (lk, rk): (usize, usize)) -> Vec<Row> {
    let (lw, rw) = (left.first().map_or(0, Vec::len), right.first().map_or(0, Vec::len));
    let matches = |l: &Row, r: &Row| l[lk].is_some() && l[lk] == r[rk];
    let mut out = vec![];
    let mut right_matched = vec![false; right.len()];
    for l in left {
        let mut any = false;
        for (j, r) in right.iter().enumerate() {
            if matches(l, r) {
                any = true;
                right_matched[j] = true;
                out.push(l.iter().chain(r).cloned().collect());
            }
        }
        if !any && matches!(jt, "left" | "full") {
            out.push(l.iter().cloned().chain(std::iter::repeat_n(None, rw)).collect());
        }
    }
    if matches!(jt, "right" | "full") {
        for (j, r) in right.iter().enumerate() {
            if !right_matched[j] {
                out.push(std::iter::repeat_n(None, lw).chain(r.iter().cloned()).collect());
            }
        }
    }
    out
}

fn text(rows: Vec<Row>) -> Vec<String> {
    let mut v: Vec<String> = rows
        .into_iter()
        .map(|r| r.into_iter().map(|d| d.unwrap_or_else(|| "NULL".into())).collect::<Vec<_>>().join("|"))
        .collect();
    v.sort();
    v
}

/// `lo <j1> fr on lo.k = fr.k <j2> md on md.k = <fr.k or lo.k>`: every pair of join
/// types, by every method, returns the reference's rows.
#[wasm_bindgen_test(unsupported = test)]
fn three_relations_by_every_method_return_the_reference_rows() {
    for (j1, j2) in [
        ("inner", "inner"),
        ("left", "inner"),
        ("inner", "left"),
        ("left", "left"),
        ("full", "left"),
        ("left", "right"),
        ("inner", "full"),
    ] {
        for (second_key, col) in [("fr.k", 2), ("lo.k", 0)] {
            let query = format!(
                "select lo.k, lo.v, fr.k, fr.w, md.k, md.t from lo {j1} join fr on lo.k = fr.k {j2} join md on md.k = {second_key};"
            );
            let want = text(join(&join(&lo(), &fr(), j1, (0, 0)), &md(), j2, (col, 0)));
            for (node, settings) in METHODS {
                if matches!(node, "Materialize" | "Nested Loop") && (j1 == "full" || j2 == "full") {
                    continue;
                }
                let (rows, plan) = run(settings, &query).unwrap_or_else(|e| panic!("{query} by {node}: {e}"));
                let joins = count(&plan, &["Hash Join", "Merge Join", "Nested Loop"]);
                assert_eq!(joins, 2, "{query} by {node}: {plan:?}");
                if node != "by cost" && node != "Materialize" {
                    assert_eq!(count(&plan, &[node]), 2, "{query} by {node}: {plan:?}");
                }
                assert_eq!(rows, want, "{query} by {node}");
            }
        }
    }
}

/// (h23n) Three relations where one joins by no equality (`md.k < lo.k`, a CROSS
/// JOIN, a FROM item with no join clause, or a parenthesized join on the right): a
/// Nested Loop with that condition as its Join Filter (or none), under every
/// setting; the rows are every triple the conditions hold for.
#[wasm_bindgen_test(unsupported = test)]
fn three_relations_with_a_join_without_an_equality_return_every_triple() {
    let triples = |holds: &dyn Fn(&Row, &Row, &Row) -> bool| {
        let mut out = vec![];
        for l in lo() {
            for f in fr() {
                for m in md() {
                    if holds(&l, &f, &m) {
                        out.push(l.iter().chain(&f).chain(&m).cloned().collect());
                    }
                }
            }
        }
        text(out)
    };
    let int = |d: &Option<String>| d.as_ref().map(|s| s.parse::<i64>().unwrap_or(0));
    let eq = |a: &Option<String>, b: &Option<String>| a.is_some() && a == b;
    let less = |a: &Option<String>, b: &Option<String>| matches!((int(a), int(b)), (Some(a), Some(b)) if a < b);
    let cols = "lo.k, lo.v, fr.k, fr.w, md.k, md.t";
    let queries: Vec<(String, Vec<String>)> = vec![
        (
            format!("select {cols} from lo join fr on lo.k = fr.k join md on md.k < lo.k;"),
            triples(&|l, f, m| eq(&l[0], &f[0]) && less(&m[0], &l[0])),
        ),
        (format!("select {cols} from lo join fr on lo.k = fr.k cross join md;"), triples(&|l, f, _| eq(&l[0], &f[0]))),
        (format!("select {cols} from lo, fr, md where lo.k = fr.k;"), triples(&|l, f, _| eq(&l[0], &f[0]))),
        (
            format!("select {cols} from lo join (fr join md on md.k = fr.k) on lo.v < fr.k;"),
            triples(&|l, f, m| eq(&m[0], &f[0]) && less(&l[1], &f[0])),
        ),
    ];
    for (query, want) in &queries {
        for (node, settings) in METHODS {
            let (rows, plan) = run(settings, query).unwrap_or_else(|e| panic!("{query} by {node}: {e}"));
            assert!(count(&plan, &["Nested Loop"]) >= 1, "{query} by {node}: {plan:?}");
            assert_eq!(&rows, want, "{query} by {node}");
        }
    }
}

/// Four and five relations (a table twice, under two names): the rows are the
/// reference's, whatever order the search joins them in.
#[wasm_bindgen_test(unsupported = test)]
fn four_and_five_relations_return_the_reference_rows() {
    let q4 = "select a.k, a.v, fr.k, fr.w, md.k, md.t, b.k, b.v from lo a join fr on fr.k = a.k \
              left join md on md.k = a.k join lo b on b.v = a.v;";
    let want4 = text(join(&join(&join(&lo(), &fr(), "inner", (0, 0)), &md(), "left", (0, 0)), &lo(), "inner", (1, 1)));
    let q5 = "select a.k, a.v, fr.k, fr.w, md.k, md.t, b.k, b.v, c.k, c.t from lo a join fr on fr.k = a.k \
              left join md on md.k = a.k join lo b on b.v = a.v left join md c on c.k = b.k;";
    let want5 = text(join(
        &join(&join(&join(&lo(), &fr(), "inner", (0, 0)), &md(), "left", (0, 0)), &lo(), "inner", (1, 1)),
        &md(),
        "left",
        (6, 0),
    ));
    for (query, want) in [(q4, want4), (q5, want5)] {
        for (node, settings) in METHODS {
            let (rows, _) = run(settings, query).unwrap_or_else(|e| panic!("{query} by {node}: {e}"));
            assert_eq!(rows, want, "{query} by {node}");
        }
    }
}

/// What the join search does not plan is refused, naming it.
#[wasm_bindgen_test(unsupported = test)]
fn unplanned_joins_of_several_relations_are_refused_by_name() {
    let names: Vec<String> = (0..12).map(|i| format!("x{i}")).collect();
    let twelve = format!(
        "select count(*) from {} where {};",
        names.iter().map(|n| format!("lo {n}")).collect::<Vec<_>>().join(", "),
        names.windows(2).map(|w| format!("{}.k = {}.v", w[1], w[0])).collect::<Vec<_>>().join(" and ")
    );
    let geqo_off = format!("set geqo = off;\n{twelve}");
    for (query, named) in [
        // (h23g) Twelve FROM items: PostgreSQL's genetic search (geqo_threshold 12).
        (twelve.as_str(), "geqo (a join of 12 relations"),
        (geqo_off.as_str(), "an exhaustive join search over 12 relations"),
        ("select * from lo left join fr on lo.k < fr.k join md on md.k = lo.k;", "a join without an equality"),
        ("select * from lo join fr on lo.k = fr.k join md on md.k = lo.v + 1;", "a join key that is an expression"),
        (
            "create index on lo (v);\nselect * from lo join fr on lo.v < fr.k;",
            "an inequality on a local table's indexed",
        ),
        ("select * from lo left join (fr join md on md.k = fr.k) on lo.k = fr.k;", "parenthesized join on the right"),
        ("select * from (lo join fr on lo.k = fr.k) j join md on md.k = j.k;", "parenthesized join with an alias"),
        ("select * from lo left join fr on lo.k = fr.k and lo.v > 3 join md on md.k = lo.k;", "an outer join's ON"),
    ] {
        let (settings, query) = query.rsplit_once('\n').unwrap_or(("", query));
        let e = run(settings, query).expect_err(query);
        assert!(e.contains("not supported by the sandbox") && e.contains(named), "{query}: {e}");
    }
    // enable_partitionwise_join on, two of the relations partitioned alike: PostgreSQL
    // may join them partition by partition, which the sandbox does not plan.
    let alike = "create table fr2 (k int, w text) partition by list (k);\n\
                 create table fr2_a partition of fr2 default;";
    let query = "select lo.v from lo join fr on lo.k = fr.k join fr2 on fr2.k = fr.k;";
    assert!(run(alike, query).is_ok());
    let e = run(&format!("{alike}\nset enable_partitionwise_join = on;"), query).expect_err(query);
    assert!(e.contains("not supported by the sandbox") && e.contains("enable_partitionwise_join"), "{e}");
}

/// The tables a plan scans, in order.
fn tables(plan: &Plan, out: &mut Vec<String>) {
    match plan {
        Plan::SeqScan { table, .. } => out.push(table.clone()),
        Plan::ForeignScan(f) => out.push(f.relation.clone()),
        _ => plan.children().iter().for_each(|c| tables(c, out)),
    }
}

/// The first join node from the top, and its two sides' tables (sorted).
fn top_join(plan: &Plan) -> Option<(Vec<String>, Vec<String>)> {
    if let Plan::HashJoin { outer, inner, .. }
    | Plan::MergeJoin { outer, inner, .. }
    | Plan::NestLoop { outer, inner, .. } = plan
    {
        let side = |p: &Plan| {
            let mut t = vec![];
            tables(p, &mut t);
            t.sort();
            t
        };
        return Some((side(outer), side(inner)));
    }
    plan.children().iter().find_map(|c| top_join(c))
}

/// (h23g) Six to eight relations (a table under several names): the rows are the
/// reference's whatever the search does; with `join_collapse_limit = 1` the joins are
/// made in the order written (`deconstruct_jointree` keeps each JOIN a subproblem), so
/// the top join's one side is the relation written last.
#[wasm_bindgen_test(unsupported = test)]
fn six_to_eight_relations_and_join_collapse_limit() {
    let q6 = "select a.k, a.v, b.k, b.t, c.k, c.v, d.k, d.t, e.k, e.v, f.k, f.w from lo a join md b on b.k = a.k \
              join lo c on c.v = b.t left join md d on d.k = c.k join lo e on e.v = c.k join fr f on f.k = e.k;";
    let want6 = {
        let ab = join(&lo(), &md(), "inner", (0, 0));
        let abc = join(&ab, &lo(), "inner", (3, 1));
        let abcd = join(&abc, &md(), "left", (4, 0));
        let abcde = join(&abcd, &lo(), "inner", (4, 1));
        text(join(&abcde, &fr(), "inner", (8, 0)))
    };
    for (node, settings) in METHODS {
        let (rows, _) = run(settings, q6).unwrap_or_else(|e| panic!("{q6} by {node}: {e}"));
        assert_eq!(rows, want6, "{q6} by {node}");
    }
    let (rows, plan) = run("set join_collapse_limit = 1;", q6).unwrap();
    assert_eq!(rows, want6);
    let (x, y) = top_join(&plan).expect("a join");
    let last = vec!["fr_a".to_string(), "fr_b".to_string()];
    assert!(x == last || y == last, "join_collapse_limit = 1: the top join's sides {x:?} / {y:?}");
    // Eight relations in one FROM list, a chain: one search of eight (from_collapse_limit
    // counts FROM items, each one relation here), and its rows.
    let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let q8 = format!(
        "select count(*), sum(h.v) from {} where {};",
        names.iter().map(|n| format!("lo {n}")).collect::<Vec<_>>().join(", "),
        names.windows(2).map(|w| format!("{}.k = {}.v", w[1], w[0])).collect::<Vec<_>>().join(" and ")
    );
    let chain = (1..8).fold(lo(), |acc, i| join(&acc, &lo(), "inner", (2 * i - 1, 0)));
    let count = chain.len();
    let sum: i64 = chain.iter().map(|r| r[15].as_deref().map_or(0, |v| v.parse::<i64>().unwrap())).sum();
    for settings in ["", "set from_collapse_limit = 2;", "set join_collapse_limit = 1;"] {
        let (rows, _) = run(settings, &q8).unwrap_or_else(|e| panic!("{q8} with {settings:?}: {e}"));
        assert_eq!(rows, vec![format!("{count}|{sum}")], "{q8} with {settings:?}");
    }
}

/// Planned in slices (issue 20: the page plans a scenario file's query in calls of a
/// few milliseconds, `SqlLoader::plan`): a search that stops after every few join
/// relations, planned again and again until none stops, gives the plan one planning
/// gives, having stopped several times; the plannings after it (the session's) take
/// the kept searches and start none; the paths costed are the search's own. A star
/// of 8 (one search), the same star written as JOINs with join_collapse_limit 3
/// (subproblems searched first, taken up as done), and a chain of 11 (collapse
/// limits 12).
#[wasm_bindgen_test(unsupported = test)]
fn a_join_search_planned_in_slices_plans_what_one_planning_plans() {
    use pgasync::coordinator_sql::planner::{last_search_paths_costed, KeptSearches};
    let mut setup = String::from("create table sf (id int, d1 int, d2 int, d3 int, d4 int, d5 int, d6 int, d7 int);\n");
    setup += "insert into sf select i, i % 11, i % 13, i % 17, i % 19, i % 23, i % 29, i % 31 from generate_series(1, 300) i;\n";
    for k in 1..=7 {
        setup += &format!("create table sd{k} (k int, t text);\ninsert into sd{k} select i, 't' || i from generate_series(0, {}) i;\n", 8 + 3 * k);
    }
    for k in 1..=11 {
        setup += &format!(
            "create table sc{k} (k int, v int);\ninsert into sc{k} select i % {}, i from generate_series(1, {}) i;\n",
            15 + 5 * k,
            30 + 10 * k
        );
    }
    let tables: Vec<String> = std::iter::once("sf".to_string())
        .chain((1..=7).map(|k| format!("sd{k}")))
        .chain((1..=11).map(|k| format!("sc{k}")))
        .collect();
    setup += &format!("analyze {};\n", tables.join(", "));
    let dims: Vec<String> = (1..=7).map(|k| format!("sd{k}")).collect();
    let star = format!(
        "select count(*), max(sd7.t) from sf, {} where {};",
        dims.join(", "),
        (1..=7).map(|k| format!("sf.d{k} = sd{k}.k")).collect::<Vec<_>>().join(" and ")
    );
    let star_joins = format!(
        "set join_collapse_limit = 3;\n-- @query\nselect count(*), max(sd7.t) from sf {};",
        (1..=7).map(|k| format!("join sd{k} on sf.d{k} = sd{k}.k")).collect::<Vec<_>>().join(" ")
    );
    let chain = format!(
        "set join_collapse_limit = 12;\nset from_collapse_limit = 12;\n-- @query\nselect count(*), sum(sc11.v) from {} where {};",
        (1..=11).map(|k| format!("sc{k}")).collect::<Vec<_>>().join(", "),
        (2..=11).map(|k| format!("sc{k}.k = sc{}.v", k - 1)).collect::<Vec<_>>().join(" and ")
    );
    let cases = [
        ("star of 8", format!("-- @query\n{star}"), 20),
        ("star of 8 as JOINs", star_joins, 2),
        ("chain of 11", chain, 20),
    ];
    for (name, query, stride) in cases {
        let s = SqlScenario::load(&format!("{setup}{query}\n")).unwrap_or_else(|e| panic!("{name}: {e}"));
        // One planning without a clock: under `run`, so that in the page's build (the
        // wasm tests) the bound is the one for a planning in slices, not the at-once one.
        let (whole, stopped) = KeptSearches::default().run(None, || s.plan());
        assert!(!stopped, "{name}: a planning without a clock stopped");
        let whole = whole.unwrap_or_else(|e| panic!("{name}: {e}"));
        let costed = last_search_paths_costed();
        let mut kept = KeptSearches::default();
        let mut slices = 0;
        let sliced = loop {
            slices += 1;
            assert!(slices < 10_000, "{name}: the planning in slices does not end");
            let mut joined = 0;
            // Stops after every `stride` join relations: the clock of the test.
            let clock = Box::new(move || {
                joined += 1;
                joined >= stride
            });
            match kept.run(Some(clock), || s.plan()) {
                (_, true) => continue,
                (planned, false) => break planned.unwrap_or_else(|e| panic!("{name}: {e}")),
            }
        };
        assert_eq!(last_search_paths_costed(), costed, "{name}: the paths costed in slices");
        assert!(slices >= 4, "{name}: planned in {slices} slices");
        println!("{name}: {costed} paths costed, planned in {slices} slices");
        assert_eq!(format!("{:?}", sliced.plan), format!("{:?}", whole.plan), "{name}: the plan in slices");
        // The progress line's count: the searches' own paths (the upper levels' after them).
        assert!(
            kept.paths_costed() > costed * 9 / 10 && kept.paths_costed() <= costed,
            "{name}: {}",
            kept.paths_costed()
        );
        let started = kept.searches_started();
        let (again, stopped) = kept.run(None, || s.plan());
        assert!(!stopped, "{name}");
        assert_eq!(format!("{:?}", again.unwrap().plan), format!("{:?}", whole.plan), "{name}: planned again");
        assert_eq!(kept.searches_started(), started, "{name}: a planning after the slices searched again");
        // The page's session (`SqlLoader.session()`) after the slices: its plannings
        // take the kept searches too (the page would block on any search it starts).
        let (session, _) = kept.run(None, || pgasync::demo::session::DemoSession::from_sql(s, true, Knobs::default()));
        session.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(kept.searches_started(), started, "{name}: the session searched again");
    }
}
