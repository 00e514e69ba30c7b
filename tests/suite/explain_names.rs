//! How EXPLAIN (VERBOSE) names columns and relations where the plan has no scan to
//! name them by, and constants of a type (issue 17, h17x), each as PostgreSQL 15
//! prints it (checked by hand against a PostgreSQL 15 server with postgres_fdw;
//! tests/sql_corpus.rs compares the same forms with a real one):
//!
//! - a dummy relation's Result returns the relation's Vars: `Output:` unqualified over
//!   one range-table entry, qualified over a join's (explain.c's `useprefix`), and a
//!   Sort Key qualified under VERBOSE either way (`show_sort_group_keys`);
//! - a Merge Append's key that the select list leaves out is a resjunk entry of its
//!   target list (`make_sort_input_target`), printed as its column;
//! - a plain relation under an alias is named by it in the title (`on public.f x`);
//! - an int8 constant is printed quoted and labelled (ruleutils.c's get_const_expr).

use pgasync::clock::Clock;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::knobs::{Knobs, Source};
use wasm_bindgen_test::wasm_bindgen_test;

/// `h`: range-partitioned over two foreign partitions; `f` a plain foreign table;
/// `a` and `b` two local tables partitioned alike (for a partitionwise join).
const SETUP: &str = "-- @shard s1
create table h0r (id int, grp int, name text);
create table h1r (id int, grp int, name text);
create table f_remote (id int, cat text, big bigint);
insert into h0r select i, i % 7, 'n' || i from generate_series(0, 99) i;
insert into h1r select i, i % 7, 'n' || i from generate_series(100, 199) i;
insert into f_remote select i, 'c' || (i % 3), i from generate_series(1, 50) i;
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create table h (id int, grp int, name text) partition by range (id);
create foreign table h0 partition of h for values from (0) to (100) server s1 options (table_name 'h0r');
create foreign table h1 partition of h for values from (100) to (200) server s1 options (table_name 'h1r');
create foreign table f (id int, cat text, big bigint) server s1 options (table_name 'f_remote');
create table a (id int, u int) partition by range (id);
create table a0 partition of a for values from (0) to (100);
create table a1 partition of a for values from (100) to (200);
create table b (id int, u int) partition by range (id);
create table b0 partition of b for values from (0) to (100);
create table b1 partition of b for values from (100) to (200);
insert into a select i, i from generate_series(0, 199) i;
insert into b select i, i from generate_series(0, 199) i;
analyze h, h0, h1, f, a, b;
";

/// The query's EXPLAIN ANALYZE VERBOSE lines, trimmed (async mode).
fn explain(settings: &str, query: &str) -> Vec<String> {
    let text = format!("{SETUP}{settings}-- @query\n{query}\n");
    let s = SqlScenario::load(&text).unwrap_or_else(|e| panic!("{query}: {e}"));
    let scenario = s.scenario(&Knobs::default(), Source::Json).unwrap_or_else(|e| panic!("{query}: {e}"));
    let mut r = scenario.start(true, Clock::virtual_clock(), false).unwrap_or_else(|e| panic!("{query}: {e}"));
    r.run_to_end().unwrap_or_else(|e| panic!("{query}: {e}"));
    r.explain_text().lines().map(|l| l.trim().to_string()).collect()
}

fn has(lines: &[String], want: &str) -> bool {
    lines.iter().any(|l| l == want)
}

/// Every partition pruned (`WHERE 1 = 0`): the Result's Output over h alone is bare,
/// the Sort Key qualified; a partitionwise join with no pair left qualifies both.
#[wasm_bindgen_test(unsupported = test)]
fn a_dummy_relations_columns_are_its_vars() {
    let text = explain("", "select id, name from h where 1 = 0 order by id;");
    assert!(has(&text, "Sort Key: h.id"), "{text:#?}");
    assert!(has(&text, "Output: id, name"), "{text:#?}");
    let join = "select a.id, b.u from a join b on a.id = b.id where a.id < 50 and b.id > 150 order by b.u;";
    let text = explain("set enable_partitionwise_join = on;\n", join);
    assert!(has(&text, "Sort Key: b.u"), "{text:#?}");
    assert!(has(&text, "Output: a.id, b.u"), "{text:#?}");
}

/// `order by grp limit 3` selecting id: the Merge Append sorts on grp, which every
/// node up to the Limit returns after id.
#[wasm_bindgen_test(unsupported = test)]
fn a_merge_appends_resjunk_key_is_its_column() {
    let text = explain("", "select id from h order by grp limit 3;");
    let at = text.iter().position(|l| l.starts_with("->  Merge Append")).unwrap_or_else(|| panic!("{text:#?}"));
    assert_eq!(text[at + 1], "Sort Key: h.grp", "{text:#?}");
    assert!(has(&text, "Output: h.id, h.grp"), "{text:#?}");
    assert!(has(&text, "Output: h_1.id, h_1.grp"), "{text:#?}");
}

/// `from f x`: the title names the alias; one range-table entry, so Output is bare.
#[wasm_bindgen_test(unsupported = test)]
fn a_plain_relations_alias_is_in_the_title() {
    let text = explain("", "select x.id from f x where x.id < 5;");
    assert!(text[0].starts_with("Foreign Scan on public.f x "), "{text:#?}");
    assert_eq!(text[1], "Output: id", "{text:#?}");
}

/// `coalesce(big, 0)` over a bigint: the 0 is coerced to an int8 Const.
#[wasm_bindgen_test(unsupported = test)]
fn an_int8_constant_is_labelled() {
    let text = explain("", "select id, coalesce(big, 0), 7::bigint from f where id < 3;");
    assert_eq!(text[1], "Output: id, COALESCE(big, '0'::bigint), '7'::bigint", "{text:#?}");
}
