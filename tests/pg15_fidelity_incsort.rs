// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! Incremental Sort as PostgreSQL 15 plans, costs, runs and prints it (issue 23, item
//! 5): the schema of tests/data/incsort.sql (a local table with an index on `a`, one
//! with large groups of equal `a`, a table range-partitioned on `a` over a local
//! partition with that index and a foreign one), loaded by the sandbox and by real
//! PostgreSQL 15 clusters this test starts (tests/support/sqlfile.rs), and for each
//! query below:
//!
//! - EXPLAIN (VERBOSE) with costs equals PostgreSQL's text exactly, and in FORMAT
//!   JSON: the same choice between Sort and Incremental Sort
//!   (`create_ordered_paths`, by `cost_incremental_sort`), the same cost figures;
//! - EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) equals PostgreSQL's line for line, times
//!   masked and the kB of the `Full-sort Groups` / `Pre-sorted Groups` lines masked
//!   (PostgreSQL measures its tuplesort's memory; the sandbox estimates it), and
//!   a plain Sort's `Sort Method:` line left out (the sandbox's Sort prints none):
//!   the same group counts and sort methods, and the same actual rows under each
//!   node — how many rows the scan below was asked for under a LIMIT (the bound);
//! - the rows are PostgreSQL's, in order ((a, b) is unique: the order is fixed).
//!
//! Missing PostgreSQL binaries fail the test (`make test` installs them).

mod support;

use pgasync::clock::Clock;
use pgasync::coordinator_sql::statement::parse_statements;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::{explain_doc_json_text, explain_doc_text, ExplainOptions};
use pgasync::knobs::{Knobs, Source};
use support::pg::TempDir;
use support::sqlfile::{mask, parse_rows, run_on_postgres};

const FILE: &str = "tests/data/incsort.sql";

/// A query, the settings made for it alone, and the node its plan must have (or not).
struct Case {
    sets: &'static str,
    sql: &'static str,
    /// The plan has an Incremental Sort (else it must not).
    incremental: bool,
}

const CASES: &[Case] = &[
    // Under LIMIT the index path on `a` with an Incremental Sort wins: 20 rows read
    // (the first group has 9 rows: a = i / 10 from i = 1), one full-sort group.
    Case { sets: "", sql: "select a, b from incs order by a, b limit 10", incremental: true },
    // Without LIMIT the Sort over the Seq Scan is cheaper.
    Case { sets: "", sql: "select a, b from incs order by a, b", incremental: false },
    // With enable_sort off the Sort costs disable_cost; the Incremental Sort does not.
    Case { sets: "set enable_sort = off", sql: "select a, b from incs order by a, b", incremental: true },
    // DESC on the presorted key: the index read backwards.
    Case { sets: "", sql: "select a, b from incs order by a desc, b limit 15", incremental: true },
    // enable_incremental_sort off: the Sort.
    Case {
        sets: "set enable_incremental_sort = off",
        sql: "select a, b from incs order by a, b limit 10",
        incremental: false,
    },
    // A filter on the scan, a third column, OFFSET (the bound is offset + count).
    Case { sets: "", sql: "select a, b, c from incs where b < 50 order by a, b limit 20 offset 5", incremental: true },
    // Groups of 100: past 64 rows the presorted prefix mode (Pre-sorted Groups), the
    // 100 rows of the first group read (and the next row).
    Case { sets: "", sql: "select a, b from incs2 order by a, b limit 50", incremental: true },
    // Under LIMIT 10 both sorts are bounded: top-N heapsort in both modes.
    Case { sets: "", sql: "select a, b from incs2 order by a, b limit 10", incremental: true },
    // Half the rows: the Sort over the Seq Scan again.
    Case { sets: "", sql: "select a, b from incs2 order by a, b limit 150", incremental: false },
    // Over partitions: the ordered Append by `a` (the local partition's index, the
    // foreign one sorted remotely by a, b) under an Incremental Sort.
    Case { sets: "", sql: "select a, b from incp order by a, b limit 10", incremental: true },
    Case { sets: "", sql: "select a, b from incp order by a desc, b limit 10", incremental: true },
    // Past the first partition: the Sort of the local partition under the ordered
    // Append by (a, b) costs less, and the foreign scan runs.
    Case { sets: "", sql: "select a, b from incp order by a, b limit 5 offset 302", incremental: false },
    // Within the first partition's rows: the Incremental Sort; the foreign scan
    // never runs.
    Case { sets: "", sql: "select a, b from incp order by a, b limit 5 offset 100", incremental: true },
    // Without LIMIT: the ordered Append by (a, b), a Sort on the local partition.
    Case { sets: "", sql: "select a, b from incp order by a, b", incremental: false },
    Case {
        sets: "set enable_incremental_sort = off",
        sql: "select a, b from incp order by a, b limit 10",
        incremental: false,
    },
    // Local partitions only: the ordered Append of their index scans by `a` under an
    // Incremental Sort, or the Sort over their Append.
    Case { sets: "", sql: "select a, b from incl order by a, b limit 10", incremental: true },
    Case { sets: "", sql: "select a, b from incl order by a desc, b limit 10", incremental: true },
    Case { sets: "", sql: "select a, b, c from incl where b > 20 order by a, b limit 40", incremental: true },
    Case { sets: "", sql: "select a, b from incl order by a, b", incremental: false },
];

/// The masked EXPLAIN ANALYZE lines, with an Incremental Sort's memory figures masked
/// too (`Average Memory: 25kB` → `Average Memory: NkB`), and without a plain Sort's
/// `Sort Method: … Memory: …` line, which the sandbox's Sort does not print (a
/// departure of node_sort.rs, not of the Incremental Sort).
fn masked(text: &str) -> Vec<String> {
    mask(text)
        .into_iter()
        .filter(|l| !l.trim_start().starts_with("Sort Method: "))
        .map(|l| {
            let mut out = String::new();
            let mut rest = l.as_str();
            while let Some(i) = rest.find("Memory: ") {
                out.push_str(&rest[..i + "Memory: ".len()]);
                let after = &rest[i + "Memory: ".len()..];
                let digits = after.find(|c: char| !c.is_ascii_digit()).unwrap_or(after.len());
                out.push('N');
                rest = &after[digits..];
            }
            out.push_str(rest);
            out
        })
        .collect()
}

/// The scenario with the case's settings made on its coordinator.
fn with_sets(base: &SqlScenario, query: &str, sets: &str) -> SqlScenario {
    let mut s = base.with_query(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    if !sets.is_empty() {
        for st in parse_statements(&format!("{sets};"), 1).unwrap() {
            s.cluster.execute(0, &st).unwrap_or_else(|e| panic!("{sets}: {e}"));
        }
    }
    s
}

#[test]
fn incremental_sort_plans_costs_and_runs_as_in_postgres_15() {
    let text = std::fs::read_to_string(FILE).unwrap();
    let base = SqlScenario::load(&text).unwrap_or_else(|e| panic!("{FILE}: {e}"));
    let dir = TempDir::new("incsort");
    let clusters = run_on_postgres(&text, &dir);
    let coord = &clusters["coordinator"];
    let mut failures = vec![];
    for case in CASES {
        let sets = if case.sets.is_empty() { String::new() } else { format!("{}; ", case.sets) };
        let what = format!("{sets}{}", case.sql);

        // EXPLAIN (VERBOSE) with costs: planned only, PostgreSQL's text exactly.
        let s = with_sets(&base, &format!("EXPLAIN (VERBOSE) {};", case.sql), case.sets);
        let tree = s.plan_only(&Knobs::default(), Source::Json, s.async_append()).unwrap();
        let ours = explain_doc_text(&tree, &ExplainOptions::POSTGRES_VERBOSE, &s.explain_doc(), 0, 0);
        let theirs = coord.psql(&format!("{sets}EXPLAIN (VERBOSE) {}", case.sql));
        if ours.trim_end() != theirs.trim_end() {
            failures.push(format!("{what}: EXPLAIN (VERBOSE) differs\n--- sandbox\n{ours}--- PostgreSQL\n{theirs}"));
        }
        if ours.contains("Incremental Sort") != case.incremental {
            failures.push(format!("{what}: expected an Incremental Sort: {}\n{ours}", case.incremental));
        }
        // FORMAT JSON: PostgreSQL's text exactly ("Presorted Key" a list).
        let s = with_sets(&base, &format!("EXPLAIN (VERBOSE, FORMAT JSON) {};", case.sql), case.sets);
        let tree = s.plan_only(&Knobs::default(), Source::Json, s.async_append()).unwrap();
        let ours = explain_doc_json_text(&tree, &ExplainOptions::POSTGRES_VERBOSE, &s.explain_doc(), 0, 0);
        let theirs = coord.psql(&format!("{sets}EXPLAIN (VERBOSE, FORMAT JSON) {}", case.sql));
        if ours.trim_end() != theirs.trim_end() {
            failures.push(format!("{what}: FORMAT JSON differs\n--- sandbox\n{ours}\n--- PostgreSQL\n{theirs}"));
        }

        // The query run: EXPLAIN ANALYZE's lines and the rows.
        let s = with_sets(&base, &format!("{};", case.sql), case.sets);
        let scenario = s.scenario(&Knobs::default(), Source::Json).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut run = scenario.start(s.async_append(), Clock::virtual_clock(), false).unwrap();
        run.keep_rows = true;
        run.run_to_end().unwrap_or_else(|e| panic!("{what}: the run failed: {e}"));
        let ours = run.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE);
        let theirs = coord.psql(&format!("{sets}EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) {}", case.sql));
        if masked(&ours) != masked(&theirs) {
            failures.push(format!(
                "{what}: EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) differs\n--- sandbox\n{ours}--- PostgreSQL\n{theirs}"
            ));
        }
        let rows: Vec<Vec<String>> = run.rows.iter().map(|r| r.iter().map(|d| d.to_string()).collect()).collect();
        let pg_rows = parse_rows(&coord.psql(&format!("{sets}{}", case.sql)));
        if rows != pg_rows {
            failures.push(format!("{what}: rows differ ({} against PostgreSQL's {})", rows.len(), pg_rows.len()));
        }
    }
    assert!(failures.is_empty(), "{} difference(s) from PostgreSQL 15:\n\n{}", failures.len(), failures.join("\n\n"));
}
