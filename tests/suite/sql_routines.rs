//! User-defined functions and operators, and postgres_fdw's shippability of them
//! (issue 17 item 4): `CREATE FUNCTION … LANGUAGE sql` inlined as `inline_function`
//! does, `LANGUAGE internal` and `CREATE OPERATOR` over built-in procedures evaluated
//! in the Foreign Scan's local Filter unless their extension is listed in the server's
//! `extensions`. The expected lines are PostgreSQL 15's for the same statements (run
//! by hand with psql; tests/sql_corpus.rs compares such queries with a live one).

use pgasync::clock::Clock;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::{explain_doc_text, ExplainOptions};
use pgasync::knobs::{Knobs, Source};
use wasm_bindgen_test::wasm_bindgen_test;

const SETUP: &str = "-- @shard s1
create table t1 (id int, name text, amount numeric);
-- @shard s2
create table t2 (id int, name text, amount numeric);
create operator === (leftarg = int, rightarg = int, procedure = int4eq);
create function myabs(int) returns int language internal immutable strict as 'int4abs';
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create server s2 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true', extensions 'postgres_fdw');
create user mapping for public server s1;
create user mapping for public server s2;
create table p (id int, name text, amount numeric) partition by range (id);
create foreign table p1 partition of p for values from (1) to (101) server s1 options (table_name 't1');
create foreign table p2 partition of p for values from (101) to (201) server s2 options (table_name 't2');
insert into p select i, 'n' || i, i * 0.5 from generate_series(1, 200) i;
create operator === (leftarg = int, rightarg = int, procedure = int4eq);
create function plus1(int) returns int language sql immutable as 'select $1 + 1';
create function twice(x int) returns int immutable language sql as $$ select x + x $$;
create function isnull_s(int) returns boolean language sql immutable strict as 'select $1 is null';
create function myabs(int) returns int language internal immutable strict as 'int4abs';
create function numtwice(numeric) returns numeric language sql immutable as 'select $1 * 2';
create function lbl(text) returns text language sql immutable as 'select upper($1) || ''!''';
";

fn load(extra: &str) -> SqlScenario {
    let text = format!("{SETUP}{extra}\n-- @query\nselect 1 from p;\n");
    SqlScenario::load(&text).unwrap_or_else(|e| panic!("{extra}: {e}"))
}

/// EXPLAIN (VERBOSE, COSTS OFF)'s lines of `query`, planned against `s`.
fn explain(s: &SqlScenario, query: &str) -> Vec<String> {
    let q = s.with_query(&format!("{query};")).unwrap_or_else(|e| panic!("{query}: {e}"));
    let tree = q.plan_only(&Knobs::default(), Source::Json, true).unwrap_or_else(|e| panic!("{query}: {e}"));
    let text = explain_doc_text(&tree, &ExplainOptions::POSTGRES_VERBOSE, &q.explain_doc(), 0, 0);
    text.lines().map(|l| l.trim().to_string()).collect()
}

fn has(lines: &[String], want: &str) -> bool {
    lines.iter().any(|l| l == want)
}

fn error(s: &SqlScenario, query: &str) -> String {
    match s.with_query(&format!("{query};")).and_then(|q| q.plan()) {
        Ok(_) => panic!("{query}: planned"),
        Err(e) => e.message,
    }
}

/// The rows of `query`, run in async mode, as text.
fn rows(s: &SqlScenario, query: &str) -> Vec<String> {
    let q = s.with_query(&format!("{query};")).unwrap_or_else(|e| panic!("{query}: {e}"));
    let sc = q.scenario(&Knobs::default(), Source::Json).unwrap();
    let mut r = sc.start(true, Clock::virtual_clock(), false).unwrap();
    r.keep_rows = true;
    r.run_to_end().unwrap_or_else(|e| panic!("{query}: {e}"));
    let mut out: Vec<String> =
        r.rows.iter().map(|row| row.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("|")).collect();
    out.sort();
    out
}

#[wasm_bindgen_test(unsupported = test)]
fn an_inlined_sql_function_ships_as_its_expression() {
    let s = load("");
    let e = explain(&s, "select * from p where plus1(id) = 5");
    assert!(has(&e, "Remote SQL: SELECT id, name, amount FROM public.t1 WHERE (((id + 1) = 5))"), "{e:#?}");
    // A parameter by name; used twice, given a column.
    let e = explain(&s, "select * from p where twice(id) = 10");
    assert!(has(&e, "Remote SQL: SELECT id, name, amount FROM public.t2 WHERE (((id + id) = 10))"), "{e:#?}");
    // Text constants labelled as PostgreSQL labels them (`'!'::text`: not beside a
    // plain column, deparseOpExpr).
    let e = explain(&s, "select * from p where lbl(name) = 'N5!'");
    assert!(
        has(
            &e,
            "Remote SQL: SELECT id, name, amount FROM public.t1 WHERE (((upper(name) || '!'::text) = 'N5!'::text))"
        ),
        "{e:#?}"
    );
    // The argument coerced to numeric (implicitly: not written in the remote query).
    let e = explain(&s, "select * from p where numtwice(id) = 10");
    assert!(
        has(&e, "Remote SQL: SELECT id, name, amount FROM public.t1 WHERE (((id * 2::numeric) = 10::numeric))"),
        "{e:#?}"
    );
    assert_eq!(rows(&s, "select id from p where plus1(id) = 5 or twice(id) = 300"), ["150", "4"]);
}

#[wasm_bindgen_test(unsupported = test)]
fn user_operators_and_internal_functions_are_local_filters() {
    let s = load("");
    let e = explain(&s, "select * from p where id === 5");
    assert!(has(&e, "Filter: (p_1.id === 5)") && has(&e, "Filter: (p_2.id === 5)"), "{e:#?}");
    assert!(has(&e, "Remote SQL: SELECT id, name, amount FROM public.t1"), "{e:#?}");
    assert!(e.iter().any(|l| l.starts_with("->  Async Foreign Scan on public.p1 p_1")), "{e:#?}");
    let e = explain(&s, "select * from p where myabs(id) = 5");
    assert!(has(&e, "Filter: (myabs(p_1.id) = 5)"), "{e:#?}");
    assert_eq!(rows(&s, "select id from p where id === 5 or myabs(id) = 105"), ["105", "5"]);
}

#[wasm_bindgen_test(unsupported = test)]
fn members_of_a_listed_extension_ship_to_that_server_only() {
    let s = load(
        "alter extension postgres_fdw add operator === (int, int);\nalter extension postgres_fdw add function myabs(int);",
    );
    let e = explain(&s, "select * from p where id === 105");
    assert!(has(&e, "Filter: (p_1.id === 105)"), "{e:#?}");
    assert!(
        has(&e, "Remote SQL: SELECT id, name, amount FROM public.t2 WHERE ((id OPERATOR(public.===) 105))"),
        "{e:#?}"
    );
    let e = explain(&s, "select * from p where myabs(id) = 105");
    assert!(has(&e, "Remote SQL: SELECT id, name, amount FROM public.t2 WHERE ((public.myabs(id) = 105))"), "{e:#?}");
    // The shard runs them: its own CREATE OPERATOR and CREATE FUNCTION.
    assert_eq!(rows(&s, "select id from p where id === 105 or myabs(id) = 7"), ["105", "7"]);
    // A pushed-down aggregate over a shipped condition.
    let e = explain(&s, "select count(*) from p2 where id === 150");
    assert!(has(&e, "Remote SQL: SELECT count(*) FROM public.t2 WHERE ((id OPERATOR(public.===) 150))"), "{e:#?}");
    assert_eq!(rows(&s, "select count(*) from p2 where id === 150"), ["1"]);
}

#[wasm_bindgen_test(unsupported = test)]
fn what_the_sandbox_cannot_run_is_refused_by_name() {
    let s = load("");
    // PostgreSQL calls a STRICT function whose body is not strict: the sandbox runs no SQL function.
    let m = error(&s, "select * from p where isnull_s(id)");
    assert!(m.contains("isnull_s") && m.contains("would not inline"), "{m}");
    for (stmt, named) in [
        ("create function f(int) returns int language plpgsql as 'begin return 1; end'", "LANGUAGE plpgsql"),
        ("create function f(int) returns int language sql as 'select id from p'", "not SELECT of one expression"),
        ("create operator ## (leftarg = int, rightarg = int, procedure = int4eq, negator = !##)", "NEGATOR"),
        ("create function f(int) returns int language internal as 'no_such'", "no built-in function named"),
    ] {
        let text = format!("{SETUP}{stmt};\n-- @query\nselect 1 from p;\n");
        let m = SqlScenario::load(&text).err().map(|e| e.message).unwrap_or_default();
        assert!(m.contains(named), "{stmt}: {m}");
    }
    let m = error(&s, "select * from p where id === 'x'");
    assert!(m.contains("operator does not exist"), "{m}");
}
