// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! Partitionwise join (issue 23, item 5) against PostgreSQL 15: with
//! `enable_partitionwise_join` on, a join of two tables partitioned alike on their
//! keys is an Append of one join per pair of partitions (crate/coordinator_sql/
//! partitionwise.rs). The tables are tests/data/partitionwise.sql's: local partitions,
//! foreign partitions on three servers (each pair's two on different servers, so no
//! join is pushed down) beside a local pair, hash and list (with a default) schemes.
//!
//! For each query, in sync mode (`enable_async_append` off on PostgreSQL) and async
//! mode (on), the sandbox's EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) must equal
//! PostgreSQL's line for line, times masked, and the rows must be PostgreSQL's (as
//! multisets, ORDER BY's too). PostgreSQL's plan must have the expected number of joins (one per pair),
//! so the comparison is of partitionwise plans.
//!
//! Masked besides the times, as what the sandbox prints of every plan, not of this
//! one: the lines the sandbox does not print (a Hash's `Buckets:`, a Sort's `Sort
//! Method:`, a HashAggregate's `Batches:`), and the order of the columns in an
//! `Output:` line, compared as a set: a scan returns its columns in table order in the
//! sandbox, in the order the query first names them in PostgreSQL (`b_1.u, b_1.id`).

mod support;

use pgasync::clock::Clock;
use pgasync::coordinator_sql::statement::parse_statements;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::ExplainOptions;
use pgasync::knobs::{Knobs, Source};
use support::pg::TempDir;
use support::sqlfile::{mask, parse_rows, run_on_postgres};

const FILE: &str = "tests/data/partitionwise.sql";

/// (what, settings, query, the joins PostgreSQL's plan has: one per pair).
const QUERIES: [(&str, &str, &str, usize); 11] = [
    ("local pairs", "", "select a.id, a.t, b.u from pw_la a join pw_lb b on a.id = b.id", 3),
    (
        "foreign pairs on two servers and a local pair, a condition pushed down",
        "",
        "select a.id, b.u from pw_fa a join pw_fb b on a.id = b.id where a.x = 4",
        3,
    ),
    (
        "merge joins of foreign pairs",
        "set enable_hashjoin = off;",
        "select a.id, b.u from pw_fa a join pw_fb b on a.id = b.id where b.y < 3",
        3,
    ),
    (
        "nested loops over a Materialize of each pair's inner side",
        "set enable_hashjoin = off; set enable_mergejoin = off;",
        "select a.id, b.u from pw_fa a join pw_fb b on a.id = b.id where b.y < 3",
        3,
    ),
    (
        "hash partitions, one foreign, an aggregate above the Append",
        "",
        "select a.x, count(b.y), sum(b.y) from pw_ha a join pw_hb b on a.id = b.id group by a.x",
        3,
    ),
    (
        "list partitions with a default, LEFT JOIN",
        "",
        "select a.k, a.v, b.w from pw_da a left join pw_db b on a.k = b.k and b.w < 1000",
        3,
    ),
    (
        "one pair left after pruning: no Append, the parents' aliases",
        "",
        "select a.id, b.u from pw_la a join pw_lb b on a.id = b.id where a.id < 200",
        1,
    ),
    ("LIMIT above the Append", "", "select * from pw_la a join pw_lb b on a.id = b.id where b.y = 2 limit 5", 3),
    (
        "local pairs, ORDER BY other columns than the key: a Sort above the Append",
        "",
        "select * from pw_la a join pw_lb b on a.id = b.id where b.y = 1 order by a.x, b.u",
        3,
    ),
    (
        "IN pulled up: a semi join per pair of foreign partitions",
        "",
        "select a.id, a.x from pw_fa a where a.id in (select b.id from pw_fb b where b.y = 2)",
        3,
    ),
    (
        "NOT EXISTS pulled up: an anti join per pair, the outer side pruned",
        "",
        "select a.id from pw_fa a where not exists (select 1 from pw_fb b where b.id = a.id) and a.id < 400",
        2,
    ),
];

/// [`mask`], and what the sandbox prints of no plan (see the head of the file).
fn normalized(text: &str) -> Vec<String> {
    mask(text)
        .into_iter()
        .filter(|l| !l.trim_start().starts_with("Buckets:") && !l.trim_start().starts_with("Sort Method:"))
        .map(|l| match l.find("Output: ") {
            Some(i) => {
                let mut cols: Vec<&str> = l[i + "Output: ".len()..].split(", ").collect();
                cols.sort_unstable();
                format!("{}Output: {}", &l[..i], cols.join(", "))
            }
            None => l,
        })
        .collect()
}

/// The joins of a plan's text (one per pair under a partitionwise Append).
fn joins(text: &str) -> usize {
    text.lines()
        .map(|l| l.trim_start().trim_start_matches("->  "))
        .filter(|l| l.starts_with("Nested Loop") || l.split(" (").next().is_some_and(|n| n.ends_with(" Join")))
        .count()
}

#[test]
fn partitionwise_joins_explain_as_postgres_15_does() {
    let text = std::fs::read_to_string(FILE).unwrap();
    let base = SqlScenario::load(&text).unwrap_or_else(|e| panic!("{FILE}: {e}"));
    let dir = TempDir::new("partitionwise");
    let clusters = run_on_postgres(&text, &dir);
    let coord = &clusters["coordinator"];
    let mut failures = vec![];
    for (what, settings, query, pairs) in QUERIES {
        for (mode, async_mode) in [("sync", false), ("async", true)] {
            let sets = format!(
                "set enable_partitionwise_join = on; set enable_async_append = {}; {settings}",
                if async_mode { "on" } else { "off" }
            );
            let theirs = coord.psql(&format!("{sets} EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) {query}"));
            assert_eq!(joins(&theirs), pairs, "{what}: PostgreSQL's plan is not the partitionwise one:\n{theirs}");
            let mut pg_rows: Vec<Vec<String>> = parse_rows(&coord.psql(&format!("{sets} {query}")));
            pg_rows.sort();

            let mut s = base.with_query(&format!("{query};")).unwrap_or_else(|e| panic!("{query}: {e}"));
            for st in parse_statements(&sets, 1).unwrap() {
                s.cluster.execute(0, &st).unwrap_or_else(|e| panic!("{sets}: {e}"));
            }
            let scenario = s.scenario(&Knobs::default(), Source::Json).unwrap_or_else(|e| panic!("{query}: {e}"));
            let mut run = scenario.start(async_mode, Clock::virtual_clock(), false).unwrap();
            run.keep_rows = true;
            run.run_to_end().unwrap_or_else(|e| panic!("{what} ({mode}): the sandbox's run failed: {e}"));
            let ours = run.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE);
            let mut our_rows: Vec<Vec<String>> =
                // psql prints NULL as nothing.
                run.rows.iter().map(|r| r.iter().map(|d| if d.is_null() { String::new() } else { d.to_string() }).collect()).collect();
            our_rows.sort();

            if normalized(&ours) != normalized(&theirs) {
                failures.push(format!(
                    "{what} ({mode}): EXPLAIN differs\n{query}\n--- sandbox\n{ours}\n--- PostgreSQL\n{theirs}"
                ));
            }
            if our_rows != pg_rows {
                failures.push(format!(
                    "{what} ({mode}): rows differ ({} from PostgreSQL, {} from the sandbox)",
                    pg_rows.len(),
                    our_rows.len()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}
