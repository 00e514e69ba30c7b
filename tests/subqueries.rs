//! Subqueries in expressions (issue 17), on the simulated shards: uncorrelated scalar
//! subqueries run as InitPlans, and what the sandbox does not plan is refused by name.
//!
//! - EXPLAIN (ANALYZE) prints an InitPlan as PostgreSQL 15 does: `InitPlan 1 (returns
//!   $0)` under the node it is attached to, before its children, `$0` where its value
//!   is read, `$1::numeric` in a foreign scan's remote query, the subquery's relations
//!   named after the outer query's (`f_1`), `(never executed)` when no row needed the
//!   value; in JSON with `"Parent Relationship": "InitPlan"` and `"Subplan Name"`;
//! - the rows are those of the query with the subquery's value written in;
//! - a scalar subquery with two rows is PostgreSQL's error;
//! - an uncorrelated EXISTS, and a WHERE condition reading only InitPlan values, is a
//!   gating Result's `One-Time Filter`;
//! - NOT IN (and IN not pulled up) over a local table is a hashed SubPlan, read once,
//!   with SQL's NULL rules;
//! - IN, = ANY and a correlated EXISTS in WHERE's top-level AND are semi joins, a
//!   correlated NOT EXISTS an anti join (pull_up_sublinks), by each join method, each
//!   outer row returned once; a LEFT JOIN whose WHERE asks for NULL where its own
//!   condition cannot pass one is an anti join too (reduce_outer_joins);
//! - NOT IN over a foreign table is a hashed SubPlan in the foreign scan's local
//!   Filter (not shippable);
//! - correlated subqueries that are not pulled up, and hashed SubPlans over
//!   partitioned tables, are refused, naming what PostgreSQL would plan.
//!
//! The plans and rows against a real PostgreSQL 15 are tests/data/corpus.sql's
//! (section "Subqueries: InitPlans") and the wire tests/pg15_fidelity_subqueries.rs's.

use pgasync::clock::Clock;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::{explain_json_text, explain_text_with, ExplainOptions};
use pgasync::knobs::{Knobs, Source};
use pgasync::types::Datum;

const SCRIPT: &str = "\
-- @shard s1
create table f_remote (id int, val bigint);
insert into f_remote select i, i * 10 from generate_series(1, 20) i;
create table dim (cat text, weight int);
insert into dim values ('a', 1), ('b', 2), ('c', 3);

-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create user mapping for public server s1;
create foreign table f (id int, val bigint) server s1 options (table_name 'f_remote');
create foreign table dim (cat text, weight int) server s1;
create table loc (id int, qty int);
create table pf (id int, val bigint) partition by range (id);
create foreign table pf1 partition of pf for values from (0) to (10) server s1 options (table_name 'f_remote');
create foreign table pf2 partition of pf for values from (10) to (100) server s1 options (table_name 'f_remote');
insert into loc select i, i % 7 from generate_series(1, 30) i;
";

/// Runs `sql` to the end (async mode); its rows and EXPLAIN ANALYZE (VERBOSE, COSTS
/// OFF) in TEXT and JSON, times masked.
fn run(sql: &str) -> Result<(Vec<Vec<Datum>>, String, String), String> {
    let base = SqlScenario::load(SCRIPT).map_err(|e| e.to_string())?;
    let s = base.with_query(&format!("{sql};")).map_err(|e| e.to_string())?;
    let sc = s.scenario(&Knobs::default(), Source::Json).map_err(|e| e.to_string())?;
    let mut q = sc.start(true, Clock::virtual_clock(), true)?;
    q.run_to_end().map_err(|e| e.to_string())?;
    let tree = q.explain();
    let text = explain_text_with(&tree, &ExplainOptions::POSTGRES_VERBOSE, 0, 0);
    let json = explain_json_text(&tree, &ExplainOptions::POSTGRES_VERBOSE, 0, 0);
    Ok((q.rows.clone(), mask_times(&text), json))
}

fn mask_times(text: &str) -> String {
    text.lines()
        .map(|l| match (l.find("(actual time="), l.find(" rows=")) {
            (Some(a), Some(b)) if b > a => format!("{}(actual time=T{}", &l[..a], &l[b..]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn ints(rows: &[Vec<Datum>]) -> Vec<Vec<i64>> {
    rows.iter()
        .map(|r| r.iter().map(|d| if let Datum::Int(i) = d { *i } else { panic!("not an int: {d:?}") }).collect())
        .collect()
}

#[test]
fn a_scalar_subquery_on_the_same_foreign_table_is_an_initplan_sent_as_a_parameter() {
    let (rows, text, json) = run("select id from f where val > (select avg(val) from f) order by id").unwrap();
    // avg(val) = 105: ids 11..20.
    assert_eq!(ints(&rows), (11..=20).map(|i| vec![i]).collect::<Vec<_>>());
    let expected = "\
Foreign Scan on public.f (actual time=T rows=10 loops=1)
  Output: f.id
  Remote SQL: SELECT id FROM public.f_remote WHERE ((val > $1::numeric)) ORDER BY id ASC NULLS LAST
  InitPlan 1 (returns $0)
    ->  Foreign Scan (actual time=T rows=1 loops=1)
          Output: (avg(f_1.val))
          Relations: Aggregate on (public.f f_1)
          Remote SQL: SELECT avg(val) FROM public.f_remote";
    assert!(text.starts_with(expected), "EXPLAIN:\n{text}");
    assert!(json.contains("\"Parent Relationship\": \"InitPlan\",\n"), "{json}");
    assert!(json.contains("\"Subplan Name\": \"InitPlan 1 (returns $0)\",\n"), "{json}");
}

#[test]
fn an_initplan_whose_value_no_row_needs_is_never_executed() {
    let (rows, text, _) = run("select id, (select count(*) from dim) from loc where qty < 0").unwrap();
    assert!(rows.is_empty());
    let expected = "\
Seq Scan on public.loc (actual time=T rows=0 loops=1)
  Output: loc.id, $0
  Filter: (loc.qty < 0)
  Rows Removed by Filter: 30
  InitPlan 1 (returns $0)
    ->  Foreign Scan (never executed)";
    assert!(text.starts_with(expected), "EXPLAIN:\n{text}");
}

#[test]
fn select_list_and_where_initplans_are_numbered_in_postgres_order() {
    let (rows, text, _) =
        run("select id, (select count(*) from dim) from loc where qty > (select avg(qty) from loc) order by id")
            .unwrap();
    // qty = i % 7 over 1..30: avg 2.9, so qty 3..6.
    let want: Vec<Vec<i64>> = (1..=30).filter(|i| i % 7 >= 3).map(|i| vec![i, 3]).collect();
    assert_eq!(ints(&rows), want);
    // The select list's sublink is processed first ($0), WHERE's second ($1).
    assert!(text.contains("InitPlan 1 (returns $0)"), "{text}");
    assert!(text.contains("InitPlan 2 (returns $1)"), "{text}");
    assert!(text.contains("Filter: ((loc.qty)") || text.contains("Filter: (loc.qty > $1)"), "{text}");
    assert!(text.contains("Seq Scan on public.loc loc_1"), "the subquery's loc is loc_1:\n{text}");
}

#[test]
fn a_scalar_subquery_with_two_rows_is_an_error() {
    let e = run("select id from loc where qty = (select weight from dim where weight > 1)").unwrap_err();
    assert!(e.contains("more than one row returned by a subquery used as an expression"), "{e}");
}

#[test]
fn a_subquery_without_a_row_is_null() {
    let (rows, _, _) = run("select count(*) from f where val > (select val from f where id = -1)").unwrap();
    assert_eq!(ints(&rows), vec![vec![0]]);
}

#[test]
fn what_postgres_plans_otherwise_is_refused_by_name() {
    let mut failures = vec![];
    for (sql, named) in [
        ("select count(*) from pf where id not in (select id from loc)", "hashed SubPlan over \"pf\""),
        ("select id from pf where val in (select id from loc where loc.qty = pf.id)", "each partition's scan"),
        // An EXISTS inside an EXISTS reading both the middle subquery's relation and
        // the outer query's: PostgreSQL leaves it a SubPlan in the semi join's quals.
        (
            "select id from loc where exists (select 1 from f where f.id = loc.id and exists (select 1 from dim \
             where dim.weight = f.val and dim.weight = loc.qty))",
            "not planned yet",
        ),
        ("select id from loc where id in (select id from loc where qty = 1)", "named \"loc\" like the outer one"),
        ("select id from loc left semi join f on loc.id = f.id", "SEMI and ANTI joins are not SQL"),
        ("select id from pf where val > (select count(*) from loc where loc.id = pf.id)", "each partition's scan"),
        ("select (select id, val from f limit 1) from loc", "only one column"),
    ] {
        match run(sql) {
            Ok(_) => failures.push(format!("{sql}: planned")),
            Err(e) if !e.contains(named) => failures.push(format!("{sql}: {e}")),
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_uncorrelated_exists_gates_the_scan_with_a_one_time_filter() {
    // dim has rows: NOT EXISTS is false, the scan under the gating Result never runs.
    let (rows, text, _) =
        run("select count(*) from loc where not exists (select 1 from dim where weight > 1)").unwrap();
    assert_eq!(ints(&rows), vec![vec![0]]);
    let expected = "\
Aggregate (actual time=T rows=1 loops=1)
  Output: count(*)
  InitPlan 1 (returns $0)
    ->  Foreign Scan on public.dim (actual time=T rows=1 loops=1)
          Remote SQL: SELECT NULL FROM public.dim WHERE ((weight > 1))
  ->  Result (actual time=T rows=0 loops=1)
        One-Time Filter: (NOT $0)
        ->  Seq Scan on public.loc (never executed)";
    assert!(text.starts_with(expected), "EXPLAIN:\n{text}");
    // EXISTS true: every row passes; a scalar subquery compared with a constant too.
    let (rows, _, _) = run("select count(*) from loc where exists (select 1 from dim where weight > 1)").unwrap();
    assert_eq!(ints(&rows), vec![vec![30]]);
    let (rows, text, _) = run("select count(*) from loc where (select count(*) from dim) > 2 and qty = 1").unwrap();
    assert_eq!(ints(&rows), vec![vec![5]]);
    assert!(text.contains("One-Time Filter: ($0 > 2)"), "{text}");
}

#[test]
fn not_in_over_a_local_table_is_a_hashed_subplan_with_sql_null_rules() {
    // dim's weights 1, 2, 3; loc's qty = id % 7.
    let (rows, text, _) = run("select count(*) from loc where qty not in (select weight from dim)").unwrap();
    assert_eq!(ints(&rows), vec![vec![30 - (1..=30).filter(|i| (1..=3).contains(&(i % 7))).count() as i64]]);
    // Under the Aggregate the scan returns its whole row (use_physical_tlist), as
    // PostgreSQL prints it (the corpus's same query).
    let expected = "\
Aggregate (actual time=T rows=1 loops=1)
  Output: count(*)
  ->  Seq Scan on public.loc (actual time=T rows=16 loops=1)
        Output: loc.id, loc.qty
        Filter: (NOT (hashed SubPlan 1))
        Rows Removed by Filter: 14
        SubPlan 1
          ->  Foreign Scan on public.dim (actual time=T rows=3 loops=1)
                Output: dim.weight
                Remote SQL: SELECT weight FROM public.dim";
    assert!(text.starts_with(expected), "EXPLAIN:\n{text}");
    // A NULL in the subquery: NOT IN is never true.
    let (rows, _, _) =
        run("select count(*) from loc where qty not in (select weight from dim union all select null from dim)")
            .unwrap();
    assert_eq!(ints(&rows), vec![vec![0]]);
    // IN under OR: not pulled up, hashed; the subplan runs once.
    let (rows, text, _) =
        run("select count(*) from loc where id in (select id from f where val > 150) or qty = 0").unwrap();
    let want = (1..=30).filter(|i| (16..=20).contains(i) || i % 7 == 0).count() as i64;
    assert_eq!(ints(&rows), vec![vec![want]]);
    assert!(text.contains("Filter: ((hashed SubPlan 1) OR (loc.qty = 0))"), "{text}");
    assert!(text.contains("Foreign Scan on public.f (actual time=T rows=5 loops=1)"), "{text}");
}

#[test]
fn a_correlated_in_any_or_all_is_a_subplan_with_parameters_and_sql_null_rules() {
    // f: ids 1..20, val = id * 10; loc: ids 1..30, qty = id % 7.
    let (rows, text, _) =
        run("select id from loc where id in (select id from f where f.val = loc.qty * 10 and f.id > 2)").unwrap();
    // qty * 10 = val exactly when id % 7 = f.id, an f.id > 2: loc ids with qty 3..6.
    let want: Vec<Vec<i64>> = (1..=30).filter(|i| (3..=6).contains(&(i % 7)) && i % 7 == *i).map(|i| vec![i]).collect();
    assert_eq!(ints(&rows), want);
    let expected = "\
Seq Scan on public.loc (actual time=T rows=4 loops=1)
  Output: loc.id
  Filter: (SubPlan 1)
  Rows Removed by Filter: 26
  SubPlan 1
    ->  Foreign Scan on public.f (actual time=T rows=1 loops=30)
          Output: f.id
          Remote SQL: SELECT id FROM public.f_remote WHERE ((id > 2)) AND ((val = ($1::integer * 10)))";
    assert!(text.starts_with(expected), "EXPLAIN:\n{text}");
    // op ANY and op ALL: no row is ANY false and ALL true.
    let (rows, _, _) = run("select count(*) from loc where qty < any (select id from f where f.id = loc.id)").unwrap();
    assert_eq!(ints(&rows), vec![vec![14]], "ids 7..20 (qty < id), none past 20");
    let (rows, _, _) = run("select count(*) from loc where qty >= all (select id from f where f.id = loc.id)").unwrap();
    assert_eq!(ints(&rows), vec![vec![16]], "ids 1..6 (qty = id) and 21..30 (no row)");
    // NOT IN with a NULL comparison: never true.
    let (rows, _, _) =
        run("select count(*) from loc where qty not in (select cast(null as int) from f where f.id = loc.id)").unwrap();
    assert_eq!(ints(&rows), vec![vec![10]], "only ids 21..30, whose subquery has no row");
}

#[test]
fn a_subquery_inside_a_subquery_is_an_initplan_numbered_before_its_holder() {
    // avg(val) over f = 105; loc's ids 11..20 hold f's rows with val > 105.
    let (rows, text, _) =
        run("select id, (select count(*) from f where f.id = loc.id and f.val > (select avg(val) from f)) from loc \
             where qty = 4")
        .unwrap();
    let want: Vec<Vec<i64>> =
        (1..=30).filter(|i| i % 7 == 4).map(|i| vec![i, i64::from((11..=20).contains(&i))]).collect();
    assert_eq!(ints(&rows), want);
    // The middle f is f_1: PostgreSQL names the relations of the subplans in their order (1 before 2).
    let expected = "\
Seq Scan on public.loc (actual time=T rows=4 loops=1)
  Output: loc.id, (SubPlan 2)
  Filter: (loc.qty = 4)
  Rows Removed by Filter: 26
  SubPlan 2
    ->  Foreign Scan (actual time=T rows=1 loops=4)
          Output: (count(*))
          Relations: Aggregate on (public.f f_1)
          Remote SQL: SELECT count(*) FROM public.f_remote WHERE ((val > $1::numeric)) AND ((id = $2::integer))
          InitPlan 1 (returns $0)
            ->  Foreign Scan (actual time=T rows=1 loops=1)";
    assert!(text.starts_with(expected), "EXPLAIN:\n{text}");
    // Nested InitPlans: the inner is 1 ($0), the outer 2 ($1).
    let (rows, text, _) =
        run("select count(*) from loc where qty > (select avg(weight) from dim where weight > (select count(*) from f) - 19)")
            .unwrap();
    assert_eq!(ints(&rows), vec![vec![(1..=30).filter(|i| i % 7 > 2).count() as i64]], "avg(weight) of 2 and 3");
    assert!(text.contains("InitPlan 2 (returns $1)") && text.contains("InitPlan 1 (returns $0)"), "{text}");
    let mut failures = vec![];
    for (sql, named) in [
        (
            "select id, (select count(*) from f where f.id = loc.id and f.val > (select avg(val) from f f2 where f2.id < loc.qty)) from loc",
            "two levels up",
        ),
        ("select id, (select count(*) from f where f.id = loc.id and exists (select 1 from dim)) from loc", "EXISTS inside a subquery"),
        (
            "select id, (select count(*) from f where f.val > (select count(*) from dim where dim.weight = f.id)) from loc",
            "a SubPlan inside a subquery",
        ),
    ] {
        match run(sql) {
            Ok(_) => failures.push(format!("{sql}: planned")),
            Err(e) if !e.contains(named) => failures.push(format!("{sql}: {e}")),
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `run` with `settings` (SET statements) in the coordinator's section.
fn run_with(settings: &str, sql: &str) -> Result<(Vec<Vec<Datum>>, String), String> {
    let base = SqlScenario::load(&format!("{SCRIPT}{settings}\n")).map_err(|e| e.to_string())?;
    let s = base.with_query(&format!("{sql};")).map_err(|e| e.to_string())?;
    let sc = s.scenario(&Knobs::default(), Source::Json).map_err(|e| e.to_string())?;
    let mut q = sc.start(true, Clock::virtual_clock(), true)?;
    q.run_to_end().map_err(|e| e.to_string())?;
    let text = explain_text_with(&q.explain(), &ExplainOptions::POSTGRES_VERBOSE, 0, 0);
    Ok((q.rows.clone(), mask_times(&text)))
}

#[test]
fn in_exists_and_not_exists_are_semi_and_anti_joins_by_every_method() {
    let exists_ids: Vec<i64> = (1..=30).filter(|i| (1..=3).contains(&(i % 7))).collect();
    let cases: [(&str, &str, Vec<i64>); 5] = [
        ("select id from loc where id in (select id from f where val > 150) order by id", "Semi", (16..=20).collect()),
        (
            "select id from loc where exists (select 1 from dim where dim.weight = loc.qty) order by id",
            "Semi",
            exists_ids,
        ),
        // loc holds each qty many times: each dim row still comes once.
        ("select weight from dim where weight in (select qty from loc) order by weight", "Semi", vec![1, 2, 3]),
        (
            "select weight from dim where weight = any (select qty from loc where id < 3) order by weight",
            "Semi",
            vec![1, 2],
        ),
        (
            "select id from loc where not exists (select 1 from f where f.id = loc.id) order by id",
            "Anti",
            (21..=30).collect(),
        ),
    ];
    for settings in ["", "set enable_hashjoin = off;", "set enable_hashjoin = off;\nset enable_mergejoin = off;"] {
        for (sql, kind, want) in &cases {
            let (rows, text) = run_with(settings, sql).unwrap_or_else(|e| panic!("{settings} {sql}: {e}"));
            let got: Vec<i64> = ints(&rows).into_iter().map(|r| r[0]).collect();
            assert_eq!(&got, want, "{settings} {sql}\n{text}");
            // A semi join, or (chosen by cost) an inner join over the subquery's rows
            // made unique (JOIN_UNIQUE_INNER/OUTER: a HashAggregate or a Unique).
            let semi_join = text.contains(&format!(" {kind} Join"));
            let unique = *kind == "Semi" && (text.contains("Group Key: ") || text.contains("->  Unique"));
            assert!(semi_join || unique, "{settings} {sql}: a {kind} join:\n{text}");
            if !settings.is_empty() {
                assert!(!text.contains("Hash Join") && !text.contains("Hash Semi"), "{settings} {sql}:\n{text}");
            }
            if settings.contains("mergejoin") {
                assert!(text.contains("Nested Loop"), "{settings} {sql}:\n{text}");
            }
        }
    }
}

/// (h17s) Several IN / EXISTS / NOT EXISTS sublinks in WHERE's top-level AND, and a
/// sublink inside an EXISTS that reads the outer query (two levels up): each is a
/// semi or anti join of one join search (`pull_up_sublinks` pulls them all up), by
/// every join method, each outer row returned once.
#[test]
fn several_sublinks_and_a_nested_exists_are_semi_and_anti_joins_of_one_join() {
    // loc: id 1..30, qty = id % 7; f: id 1..20, val = id * 10; dim: weight 1..3.
    let matches_dim = |i: &i64| (1..=3).contains(&(i % 7));
    let cases: Vec<(&str, [&str; 2], Vec<i64>)> = vec![
        (
            "select id from loc where id in (select id from f where val > 50) and exists (select 1 from dim where \
             dim.weight = loc.qty) order by id",
            ["Semi", "Semi"],
            (6..=20).filter(matches_dim).collect(),
        ),
        (
            "select id from loc where not exists (select 1 from f where f.id = loc.id) and not exists (select 1 \
             from dim where dim.weight = loc.qty) order by id",
            ["Anti", "Anti"],
            (21..=30).filter(|i| !matches_dim(i)).collect(),
        ),
        (
            "select id from loc where id = any (select id from f) and not exists (select 1 from dim where \
             dim.weight = loc.qty) order by id",
            ["Semi", "Anti"],
            (1..=20).filter(|i| !matches_dim(i)).collect(),
        ),
        // Two levels up: dim's condition reads loc, not f.
        (
            "select id from loc where exists (select 1 from f where f.id = loc.id and exists (select 1 from dim \
             where dim.weight = loc.qty)) order by id",
            ["Semi", "Semi"],
            (1..=20).filter(matches_dim).collect(),
        ),
        (
            "select id from loc where exists (select 1 from f where f.id = loc.id and f.val > 40 and not exists \
             (select 1 from dim where dim.weight = loc.qty)) order by id",
            ["Semi", "Anti"],
            (5..=20).filter(|i| !matches_dim(i)).collect(),
        ),
        // Reading the middle subquery's relation: a semi join inside the right side of
        // the other (`loc ⋉ (f ⋉ dim)`), under EXISTS and under NOT EXISTS.
        (
            "select id from loc where exists (select 1 from f where f.id = loc.id and exists (select 1 from dim \
             where dim.weight = f.id)) order by id",
            ["Semi", "Semi"],
            vec![1, 2, 3],
        ),
        (
            "select id from loc where not exists (select 1 from f where f.id = loc.id and exists (select 1 from dim \
             where dim.weight = f.id)) order by id",
            ["Anti", "Semi"],
            (4..=30).collect(),
        ),
    ];
    for settings in ["", "set enable_hashjoin = off;", "set enable_hashjoin = off;\nset enable_mergejoin = off;"] {
        for (sql, kinds, want) in &cases {
            let (rows, text) = run_with(settings, sql).unwrap_or_else(|e| panic!("{settings} {sql}: {e}"));
            let got: Vec<i64> = ints(&rows).into_iter().map(|r| r[0]).collect();
            assert_eq!(&got, want, "{settings} {sql}\n{text}");
            // Two joins, each a semi or anti join or (chosen by cost) an inner join over
            // the subquery's rows made unique.
            let unique = text.matches("Group Key: ").count() + text.matches("->  Unique").count();
            for kind in ["Semi", "Anti"] {
                let n = kinds.iter().filter(|k| **k == kind).count();
                let planned = text.matches(&format!(" {kind} Join")).count();
                let ok = if kind == "Anti" { planned == n } else { planned <= n && planned + unique >= n };
                assert!(ok, "{settings} {sql}: {n} {kind} joins:\n{text}");
            }
            let joins_by =
                |m: &str| ["Join", "Semi Join", "Anti Join"].iter().any(|j| text.contains(&format!("{m} {j}")));
            if !settings.is_empty() {
                assert!(!joins_by("Hash"), "{settings} {sql}:\n{text}");
            }
            if settings.contains("mergejoin") {
                assert!(!joins_by("Merge"), "{settings} {sql}:\n{text}");
            }
        }
    }
}

#[test]
fn a_left_join_asking_for_null_where_its_condition_cannot_pass_one_is_an_anti_join() {
    let sql = "select loc.id, f.val from loc left join f on loc.id = f.id and f.val > 0 where f.val is null";
    let (rows, text) = run_with("", sql).unwrap();
    assert_eq!(rows.len(), 10, "{text}");
    assert!(rows.iter().all(|r| r[1] == Datum::Null), "{rows:?}");
    assert!(text.contains("Anti Join"), "{text}");
    // The IS NULL condition is redundant with the anti join: no Filter keeps it.
    assert!(!text.contains("IS NULL"), "{text}");
}

#[test]
fn not_in_over_a_foreign_table_is_a_hashed_subplan_in_its_local_filter() {
    // loc's ids are 1..30; f's 1..20: none of f's rows is not in loc.
    let (rows, text, _) = run("select count(*) from f where id not in (select id from loc where qty <> 2)").unwrap();
    // qty = id % 7 = 2 for ids 2, 9, 16, 23, 30: f's 2, 9 and 16 are not in the subquery.
    assert_eq!(ints(&rows), vec![vec![3]]);
    // The foreign table's whole row (use_physical_tlist; the columns not fetched are NULL).
    let expected = "\
Aggregate (actual time=T rows=1 loops=1)
  Output: count(*)
  ->  Foreign Scan on public.f (actual time=T rows=3 loops=1)
        Output: f.id, f.val
        Filter: (NOT (hashed SubPlan 1))
        Rows Removed by Filter: 17
        Remote SQL: SELECT id FROM public.f_remote
        SubPlan 1
          ->  Seq Scan on public.loc (actual time=T rows=25 loops=1)
                Output: loc.id
                Filter: (loc.qty <> 2)
                Rows Removed by Filter: 5";
    assert!(text.starts_with(expected), "EXPLAIN:\n{text}");
}

#[test]
fn a_correlated_scalar_subquery_in_the_select_list_is_a_subplan_run_per_row() {
    let sql = "select id, (select count(*) from f where f.id = loc.id) as n from loc where qty < 3 order by id";
    let (rows, text, _) = run(sql).unwrap();
    let ids: Vec<i64> = (1..=30).filter(|i| i % 7 < 3).collect();
    let want: Vec<Vec<i64>> = ids.iter().map(|&i| vec![i, i64::from(i <= 20)]).collect();
    assert_eq!(ints(&rows), want, "{text}");
    assert!(text.contains("SubPlan 1"), "{text}");
    assert!(text.contains("WHERE ((id = $1::integer))"), "{text}");
    assert!(text.contains(&format!("loops={}", ids.len())), "{text}");
}

#[test]
fn a_correlated_scalar_subquery_in_where_is_a_subplan_in_the_scans_filter() {
    let sql = "select id from loc where qty > (select count(*) from f where f.id = loc.id) order by id";
    let (rows, text, _) = run(sql).unwrap();
    // f holds ids 1..20: those rows need qty > 1, the others qty > 0.
    let want: Vec<Vec<i64>> = (1..=30).filter(|i| i % 7 > i64::from(*i <= 20)).map(|i| vec![i]).collect();
    assert_eq!(ints(&rows), want, "{text}");
    assert!(text.contains("Filter: (loc.qty > (SubPlan 1))"), "{text}");
    assert!(text.contains("loops=30"), "the SubPlan runs for each of loc's rows:\n{text}");
}

#[test]
fn the_partition_key_against_an_initplans_value_prunes_at_the_appends_first_call() {
    // dim has 3 rows: only pf1 (ids 0..10) can hold id = 3.
    let (rows, text, _) = run("select id, val from pf where id = (select count(*) from dim)").unwrap();
    assert_eq!(ints(&rows), vec![vec![3, 30]]);
    let expected = "\
Append (actual time=T rows=1 loops=1)
  InitPlan 1 (returns $0)
    ->  Foreign Scan (actual time=T rows=1 loops=1)
          Output: (count(*))
          Relations: Aggregate on (public.dim)
          Remote SQL: SELECT count(*) FROM public.dim
  ->  Async Foreign Scan on public.pf1 pf_1 (actual time=T rows=1 loops=1)
        Output: pf_1.id, pf_1.val
        Remote SQL: SELECT id, val FROM public.f_remote WHERE ((id = $1::bigint))
  ->  Async Foreign Scan on public.pf2 pf_2 (never executed)
        Output: pf_2.id, pf_2.val
        Remote SQL: SELECT id, val FROM public.f_remote WHERE ((id = $1::bigint))";
    assert!(text.starts_with(expected), "EXPLAIN:\n{text}");
    assert!(!text.contains("Subplans Removed"), "{text}");
}

#[test]
fn an_initplan_in_the_select_list_over_partitions_is_in_each_scans_output_and_runs_at_the_first_row() {
    // Both partitions are the same remote table (f_remote): each scan returns ids
    // 1..12, as PostgreSQL's would (a foreign partition's bounds are not checked).
    let (rows, text, _) = run("select id, (select count(*) from dim) as n from pf where id < 13").unwrap();
    let mut got = ints(&rows);
    got.sort();
    assert_eq!(got, (1..13).flat_map(|i| [vec![i, 3], vec![i, 3]]).collect::<Vec<_>>(), "{text}");
    // PostgreSQL 15: the InitPlan attached to the Append (the top node), `$0` in each
    // member scan's target list (apply_scanjoin_target_to_paths).
    let expected = "\
Append (actual time=T rows=24 loops=1)
  InitPlan 1 (returns $0)
    ->  Foreign Scan (actual time=T rows=1 loops=1)
          Output: (count(*))
          Relations: Aggregate on (public.dim)
          Remote SQL: SELECT count(*) FROM public.dim
  ->  Async Foreign Scan on public.pf1 pf_1 (actual time=T rows=12 loops=1)
        Output: pf_1.id, $0
        Remote SQL: SELECT id FROM public.f_remote WHERE ((id < 13))
  ->  Async Foreign Scan on public.pf2 pf_2 (actual time=T rows=12 loops=1)
        Output: pf_2.id, $0
        Remote SQL: SELECT id FROM public.f_remote WHERE ((id < 13))";
    assert!(text.starts_with(expected), "EXPLAIN:\n{text}");
    // Without a row, no projection evaluates $0: the InitPlan never runs.
    let (rows, text, _) = run("select id, (select count(*) from dim) as n from pf where id < 0").unwrap();
    assert!(rows.is_empty());
    assert!(text.contains("InitPlan 1 (returns $0)\n    ->  Foreign Scan (never executed)"), "{text}");
}

#[test]
fn an_initplan_in_the_select_list_over_a_merge_append_is_projected_in_each_member() {
    // Ordered by val (not the partition key): a Merge Append of remotely sorted scans.
    let (rows, text, _) =
        run("select val, (select count(*) from dim) as n from pf where val < 40 order by val desc").unwrap();
    assert_eq!(ints(&rows), vec![vec![30, 3], vec![30, 3], vec![20, 3], vec![20, 3], vec![10, 3], vec![10, 3]]);
    // PostgreSQL 15: the InitPlan attached to the Merge Append, `$0` in each member's
    // Output (ExecMergeAppend reads the first member's first row, whose projection
    // runs the InitPlan, before it starts the second member).
    let expected = "\
Merge Append (actual time=T rows=6 loops=1)
  Sort Key: pf.val DESC
  InitPlan 1 (returns $0)
    ->  Foreign Scan (actual time=T rows=1 loops=1)
          Output: (count(*))
          Relations: Aggregate on (public.dim)
          Remote SQL: SELECT count(*) FROM public.dim
  ->  Foreign Scan on public.pf1 pf_1 (actual time=T rows=3 loops=1)
        Output: pf_1.val, $0
        Remote SQL: SELECT val FROM public.f_remote WHERE ((val < 40)) ORDER BY val DESC NULLS FIRST
  ->  Foreign Scan on public.pf2 pf_2 (actual time=T rows=3 loops=1)
        Output: pf_2.val, $0
        Remote SQL: SELECT val FROM public.f_remote WHERE ((val < 40)) ORDER BY val DESC NULLS FIRST";
    assert!(text.starts_with(expected), "EXPLAIN:\n{text}");
    // Ordered by a column the select list does not return: refused by name.
    let e = run("select id, (select count(*) from dim) as n from pf where val < 40 order by val").unwrap_err();
    assert!(e.contains("resjunk sort column"), "{e}");
}
