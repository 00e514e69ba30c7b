//! Set operations over differing column types (parse_coerce.c's `select_common_type`,
//! prepunion.c's `generate_setop_tlist`), `numeric(p, s)` casts (numeric.c's
//! `apply_typmod`), correlated subqueries in HAVING and correlated EXISTS under OR
//! and NOT (subselect.c's hashed alternative): the rows and errors PostgreSQL 15
//! gives (each checked by hand against a PostgreSQL 15 server; tests/sql_corpus.rs
//! compares the plans with a real one).

use pgasync::clock::Clock;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::knobs::{Knobs, Source};
use wasm_bindgen_test::wasm_bindgen_test;

/// `t` is a foreign table on s1 (an int, a bigint, a numeric and a text column), `loc`
/// a local table; `w` a small foreign table whose `k` holds a NULL.
const SETUP: &str = "-- @shard s1
create table t_remote (a int, b bigint, n numeric, s text);
insert into t_remote values (1, 10, 1.5, 'x'), (2, 20, 2.25, 'y'), (3, 3000000000, 99.95, null);
create table w (k int);
insert into w values (10), (20), (null);
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create foreign table t (a int, b bigint, n numeric, s text) server s1 options (table_name 't_remote');
create foreign table w (k int) server s1;
create table loc (a int, q int, s text);
insert into loc values (1, 1, 'x'), (2, 2, 'x'), (3, 3, 'z'), (4, 1, null);
";

/// The query's rows (sorted, as text) and EXPLAIN ANALYZE, or its first error.
fn run(query: &str, async_mode: bool) -> Result<(Vec<String>, String), String> {
    let text = format!("{SETUP}-- @query\n{query}\n");
    let s = SqlScenario::load(&text).map_err(|e| e.to_string())?;
    let scenario = s.scenario(&Knobs::default(), Source::Json).map_err(|e| e.to_string())?;
    let mut r = scenario.start(async_mode, Clock::virtual_clock(), false).map_err(|e| e.to_string())?;
    r.keep_rows = true;
    r.run_to_end().map_err(|e| e.to_string())?;
    let mut rows: Vec<String> =
        r.rows.iter().map(|row| row.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("|")).collect();
    rows.sort();
    Ok((rows, r.explain_text()))
}

fn rows_both_modes(query: &str) -> (Vec<String>, String) {
    let sync = run(query, false).unwrap_or_else(|e| panic!("{query}: {e}"));
    let asyn = run(query, true).unwrap_or_else(|e| panic!("{query}: {e}"));
    assert_eq!(sync.0, asyn.0, "{query}: sync and async rows differ");
    asyn
}

fn sorted(rows: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[wasm_bindgen_test(unsupported = test)]
fn set_operation_branches_are_cast_to_the_common_type() {
    // int and numeric: 1 and 1.5 stay apart, 2 and 2.25 too; int and bigint: the
    // values are equal as bigints (1 = 1, 2 = 2 removed by UNION).
    let (rows, explain) = rows_both_modes("select a from t union select n from t");
    assert_eq!(rows, sorted(&["1", "1.5", "2", "2.25", "3", "99.95"]));
    assert!(explain.contains("Subquery Scan on \"*SELECT* 1\""), "{explain}");
    // The cast is implicit: the Subquery Scan's Output shows its argument.
    assert!(explain.contains("Output: \"*SELECT* 1\".a"), "{explain}");
    let (rows, _) = rows_both_modes("select a from t union select a::bigint from loc");
    assert_eq!(rows, sorted(&["1", "2", "3", "4"]));
    let (rows, explain) = rows_both_modes("select b from t intersect select a from loc");
    assert!(rows.is_empty(), "{rows:?}");
    assert!(explain.contains("HashSetOp Intersect"), "{explain}");
    // An int equal to a numeric is one row after the cast (1 = 1.0).
    let (rows, _) = rows_both_modes("select a from loc except select n - 0.5 from t");
    assert_eq!(rows, sorted(&["2", "3", "4"]));
}

#[wasm_bindgen_test(unsupported = test)]
fn untyped_literals_take_the_other_branch_type_in_place() {
    // '7' becomes an integer in its branch: no Subquery Scan is needed.
    let (rows, explain) = rows_both_modes("select a from loc union select '7' from t");
    assert_eq!(rows, sorted(&["1", "2", "3", "4", "7"]));
    assert!(!explain.contains("Subquery Scan"), "{explain}");
    let (rows, _) = rows_both_modes("select s, null from loc union select s, b from t");
    assert_eq!(rows, sorted(&["NULL|NULL", "NULL|3000000000", "x|NULL", "z|NULL", "x|10", "y|20"]));
    // PostgreSQL's input error for the literal, and its mismatch error.
    let e = run("select a from loc union select 'x' from t", false).unwrap_err();
    assert!(e.contains("invalid input syntax for type integer: \"x\""), "{e}");
    let e = run("select a from loc union select s from t", false).unwrap_err();
    assert!(e.contains("UNION types integer and text cannot be matched"), "{e}");
    let e = run("select s from loc except select n from t", false).unwrap_err();
    assert!(e.contains("EXCEPT types text and numeric cannot be matched"), "{e}");
}

#[wasm_bindgen_test(unsupported = test)]
fn a_nested_set_operation_of_other_types_is_refused_by_name() {
    // PostgreSQL runs it (a Result projects the inner UNION's integers to numeric).
    let e = run("(select a from loc union select a from t) union all select n from t", false).unwrap_err();
    assert!(e.contains("nested set operation whose column types"), "{e}");
}

#[wasm_bindgen_test(unsupported = test)]
fn numeric_typmod_rounds_and_overflows_as_postgres() {
    let (rows, explain) = rows_both_modes("select n::numeric(4,1) from t");
    assert_eq!(rows, sorted(&["1.5", "2.3", "100.0"]));
    assert!(explain.contains("(n)::numeric(4,1)"), "{explain}");
    // In WHERE it ships, written as deparse.c writes a length coercion.
    let (rows, explain) = rows_both_modes("select a from t where n::numeric(3,0) = 2");
    assert_eq!(rows, sorted(&["1", "2"]));
    assert!(explain.contains("n::numeric(3,0)"), "{explain}");
    let (rows, _) = rows_both_modes("select b::numeric(12,2) / 3 from t where a = 1");
    assert_eq!(rows, sorted(&["3.3333333333333333"]));
    // A constant is cast while planning (PostgreSQL folds it), so its overflow is
    // the query's error; over a column the executor raises it (tests/suite/sql_errors.rs).
    let e = run("select a, 99.95::numeric(3,1) from t", false).unwrap_err();
    assert!(e.contains("numeric field overflow"), "{e}");
    assert!(e.contains("A field with precision 3, scale 1 must round to an absolute value less than 10^2."), "{e}");
    let e = run("select a::numeric(0,0) from t", false).unwrap_err();
    assert!(e.contains("NUMERIC precision 0 must be between 1 and 1000"), "{e}");
}

#[wasm_bindgen_test(unsupported = test)]
fn a_correlated_subquery_in_having_runs_per_group() {
    // Groups of loc by s: x has 2 rows, z 1, NULL 1; t has one row per s.
    let q = "select s, count(*) from loc group by s having count(*) > (select count(*) from t where t.s = loc.s)";
    let (rows, explain) = rows_both_modes(q);
    assert_eq!(rows, sorted(&["x|2", "z|1", "NULL|1"]));
    assert!(explain.contains("Filter: (count(*) > (SubPlan 1))"), "{explain}");
    // Over an aggregate pushed to the server: the foreign scan's local Filter.
    let q = "select s, count(*) from t group by s having count(*) >= (select count(*) from loc where loc.s = t.s)";
    let (rows, explain) = rows_both_modes(q);
    assert_eq!(rows, sorted(&["y|1", "NULL|1"]));
    assert!(explain.contains("Remote SQL: SELECT s, count(*) FROM public.t_remote GROUP BY 1\n"), "{explain}");
}

#[wasm_bindgen_test(unsupported = test)]
fn a_correlated_exists_under_or_is_the_hashed_alternative() {
    let q = "select a from loc where q = 3 or exists (select 1 from t where t.a = loc.a and t.n > 2)";
    let (rows, explain) = rows_both_modes(q);
    assert_eq!(rows, sorted(&["2", "3"]));
    assert!(explain.contains("Filter: ((loc.q = 3) OR (hashed SubPlan 2))"), "{explain}");
    // NOT EXISTS over a column with a NULL: a row without a match passes (EXISTS is
    // never NULL), where NOT IN would let none pass.
    let q = "select a from loc where a = 1 or not exists (select 1 from w where w.k = loc.a * 10)";
    let (rows, _) = rows_both_modes(q);
    assert_eq!(rows, sorted(&["1", "3", "4"]));
    let e = run("select a from loc where q = 1 or exists (select 1 from t where t.a > loc.a)", false).unwrap_err();
    assert!(e.contains("correlated condition other than inner = outer"), "{e}");
    // As a value in the select list: the same hashed alternative, a boolean per row.
    let (rows, explain) = rows_both_modes("select a, exists (select 1 from t where t.a = loc.a) from loc");
    assert_eq!(rows, sorted(&["1|t", "2|t", "3|t", "4|f"]));
    assert!(explain.contains("Output: loc.a, (hashed SubPlan 2)"), "{explain}");
    // Uncorrelated: an InitPlan's value, `$0`.
    let (rows, explain) = rows_both_modes("select a, exists (select 1 from t where t.n > 50) from loc where a < 3");
    assert_eq!(rows, sorted(&["1|t", "2|t"]));
    assert!(explain.contains("Output: loc.a, $0"), "{explain}");
}

#[wasm_bindgen_test(unsupported = test)]
fn all_and_any_with_an_operator_are_subplans_over_a_materialize() {
    // w.k holds 10, 20 and NULL: `a < ALL` meets the NULL for every row (NULL, no row).
    let (rows, explain) = rows_both_modes("select a from loc where a < all (select k from w)");
    assert!(rows.is_empty(), "{rows:?}");
    assert!(explain.contains("Filter: (SubPlan 1)"), "{explain}");
    assert!(explain.contains("->  Materialize"), "{explain}");
    let (rows, _) = rows_both_modes("select a from loc where a < all (select k from w where k is not null)");
    assert_eq!(rows, sorted(&["1", "2", "3", "4"]));
    // ANY under OR: a comparison that is NULL does not make a row pass.
    let (rows, _) = rows_both_modes("select a from loc where a = 4 or a > any (select k / 10 from w)");
    assert_eq!(rows, sorted(&["2", "3", "4"]));
    let (rows, _) = rows_both_modes("select a from loc where not (a <> all (select k / 10 from w))");
    assert_eq!(rows, sorted(&["1", "2"]));
    // At the top of WHERE PostgreSQL makes `op ANY` a semi join: refused by name.
    let e = run("select a from loc where a > any (select k from w)", false).unwrap_err();
    assert!(e.contains("semi join with a join filter"), "{e}");
}

/// `sum(bigint)` is numeric (its final function `numeric_poly_sum`), `sum(int)` bigint
/// (`int4_sum`): a division of the sum is numeric division (`numeric_div`'s scale) or
/// an integer one, and a constant compared with the sum is a numeric, which the remote
/// HAVING labels (deparse.c's `deparseConst`).
#[wasm_bindgen_test(unsupported = test)]
fn the_sum_of_a_bigint_is_numeric() {
    let (rows, _) = rows_both_modes("select sum(b) / 7, sum(a) / 7 from t");
    assert_eq!(rows, sorted(&["428571432.85714286|0"]));
    // A local aggregate: q is int, its bigint cast's sum numeric.
    let (rows, _) = rows_both_modes("select sum(q::bigint) / 7, sum(q) / 7 from loc");
    assert_eq!(rows, sorted(&["1.00000000000000000000|1"]));
    let (rows, explain) = rows_both_modes("select s, sum(b) from t group by s having sum(b) > 15");
    assert_eq!(rows, sorted(&["y|20", "NULL|3000000000"]));
    assert!(explain.contains("HAVING ((sum(b) > 15::numeric))"), "{explain}");
}

/// A GROUP BY without aggregates over a foreign table is pushed down, an upper
/// relation as any other (postgres_fdw's `Relations: Aggregate on (…)`).
#[wasm_bindgen_test(unsupported = test)]
fn a_grouping_without_aggregates_is_an_upper_relation() {
    let (rows, explain) = rows_both_modes("select s from t group by s");
    assert_eq!(rows, sorted(&["x", "y", "NULL"]));
    assert!(explain.contains("Relations: Aggregate on (public.t)"), "{explain}");
    assert!(explain.contains("Remote SQL: SELECT s FROM public.t_remote GROUP BY 1"), "{explain}");
}
