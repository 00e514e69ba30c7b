#![cfg(not(target_arch = "wasm32"))]
//! The front end's bounds on hostile scenario files (issue 16): nesting and bytes.
//!
//! * Depth: chains of 3,000 and 10,000 terms (`+`, `||`, `AND`, `::int`, `UNION ALL`)
//!   and 100,000 nested parentheses are refused at their line and column, and the
//!   deepest texts the bound lets through load, plan and run — all on a thread with
//!   1 MiB of stack (the wasm page's whole stack; this is a debug build, whose frames
//!   are larger than the page's), so neither can overflow it. The scenario files and
//!   the corpus weigh a small fraction of the bound.
//! * Bytes: rows are counted in bytes as well as in number, before they are made.

use pgasync::clock::Clock;
use pgasync::frontend::script::SCENARIO_FILES;
use pgasync::frontend::{FrontError, SqlScenario};
use pgasync::knobs::Source;
use pgasync::scenario::Knobs;
use pgasync::sql::nesting::{self, MAX_WEIGHT};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::Tokenizer;

/// The page's stack (Rust's wasm32 default).
const WASM_STACK: usize = 1 << 20;

/// Runs `f` on a thread with the page's stack; an overflow aborts the test binary,
/// which fails the test as loudly as anything can.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(WASM_STACK).spawn(f).unwrap().join().unwrap()
}

/// A shard with t1, a foreign table over it, `insert` on the shard and `query` as the
/// query (line 3 is the INSERT, line 10 the query).
fn file(insert: &str, query: &str) -> String {
    format!(
        "-- @shard s1\ncreate table t1 (a int, b text);\n{insert}\n-- @coordinator\n\
         create extension postgres_fdw;\ncreate server s1 foreign data wrapper postgres_fdw;\n\
         create user mapping for public server s1;\n\
         create foreign table ft1 (a int, b text) server s1 options (table_name 't1');\n-- @query\n{query}\n"
    )
}

/// The shapes of hostile files: a name and the file of `n` terms.
fn shapes() -> Vec<(&'static str, fn(usize) -> String)> {
    fn terms(n: usize, term: &str, op: &str) -> String {
        vec![term; n].join(op)
    }
    vec![
        ("+ in an INSERT", |n| file(&format!("insert into t1 values ({});", terms(n, "1", "+")), "select a from ft1;")),
        ("|| in an INSERT", |n| {
            file(&format!("insert into t1 values (1, {});", terms(n, "'a'", "||")), "select a from ft1;")
        }),
        ("AND in the query", |n| {
            file("insert into t1 values (1);", &format!("select a from ft1 where {};", terms(n, "a = 1", " and ")))
        }),
        ("::int in an INSERT", |n| {
            file(&format!("insert into t1 values (1{});", "::int".repeat(n)), "select a from ft1;")
        }),
        ("+ in the query", |n| {
            file("insert into t1 values (1);", &format!("select a + {} from ft1;", terms(n, "1", "+")))
        }),
        ("UNION ALL in the query", |n| {
            file("insert into t1 values (1);", &format!("{};", terms(n, "select a from ft1", " union all ")))
        }),
        ("+ in a WHERE pushed to the shard", |n| {
            file("insert into t1 values (1);", &format!("select a from ft1 where a < {};", terms(n, "1", "+")))
        }),
        ("parentheses in an INSERT", |n| {
            file(&format!("insert into t1 values ({}1{});", "(".repeat(n), ")".repeat(n)), "select a from ft1;")
        }),
        ("parentheses in the query", |n| {
            file(
                "insert into t1 values (1);",
                &format!("select a from ft1 where a < {}2{};", "(".repeat(n), ")".repeat(n)),
            )
        }),
    ]
}

/// Loads, plans and runs `text` to its end in the simulator.
fn run(text: &str) -> Result<usize, FrontError> {
    let sql = SqlScenario::load(text)?;
    let scenario = sql.scenario(&Knobs::default(), Source::Json)?;
    let mut run = scenario.start(true, Clock::virtual_clock(), false).map_err(|e| FrontError::new(e, 0, 0))?;
    run.keep_rows = true;
    run.run_to_end().map_err(|e| FrontError::new(e.to_string(), 0, 0))?;
    Ok(run.rows.len())
}

fn is_ours(e: &FrontError) -> bool {
    e.message == nesting::message(MAX_WEIGHT)
}

#[test]
fn long_chains_are_refused_where_they_pass_the_bound() {
    for (name, make) in shapes() {
        for n in [3_000, 10_000] {
            let text = make(n);
            let e = on_small_stack(move || run(&text)).expect_err(name);
            assert!(is_ours(&e), "{name} × {n}: {e}");
            let line = if name.ends_with("INSERT") { 3 } else { 10 };
            assert_eq!(e.line, line, "{name} × {n}: {e}");
            assert!(e.column > 20 && e.column < 2 * MAX_WEIGHT * 6, "{name} × {n}: {e}");
        }
    }
    // 100,000 nested parentheses (200 KB), and a million open ones.
    let parens = shapes().into_iter().find(|(name, _)| *name == "parentheses in an INSERT").unwrap().1;
    for text in [parens(100_000), file(&"(".repeat(1_000_000), "select 1;")] {
        let e = on_small_stack(move || run(&text)).unwrap_err();
        assert!(is_ours(&e) && e.line == 3, "{e}");
    }
}

#[test]
fn the_deepest_texts_let_through_load_plan_and_run() {
    for (name, make) in shapes() {
        // The most terms the bound lets through.
        let refused = |n: usize| SqlScenario::load(&make(n)).err().is_some_and(|e| is_ours(&e));
        let (mut lo, mut hi) = (1, 4 * MAX_WEIGHT);
        assert!(!refused(lo) && refused(hi), "{name}");
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            *(if refused(mid) { &mut hi } else { &mut lo }) = mid;
        }
        let text = make(lo);
        let outcome = on_small_stack(move || run(&text));
        let said = match (name, outcome) {
            // sqlparser bounds the parentheses' recursion itself, before ours.
            (_, Err(e)) if name.starts_with("parentheses") && e.message == "statement nested too deeply" => {
                assert!(e.line == 3 || e.line == 10, "{e}");
                e.to_string()
            }
            // The shard's parser, the same: the remote query (parenthesized as
            // postgres_fdw deparses it) fails as PostgreSQL's does at its stack limit.
            (_, Err(e)) if name.ends_with("shard") && e.message.contains("stack depth limit exceeded") => e.to_string(),
            (_, Ok(rows)) => {
                assert_eq!(rows, 1 + (name == "UNION ALL in the query") as usize * (lo - 1), "{name}");
                format!("{rows} rows")
            }
            (_, Err(e)) => panic!("{name} at {lo} terms: {e}"),
        };
        println!("{name}: {lo} terms let through, ran on 1 MiB of stack: {said}");
    }
}

#[test]
fn shard_queries_are_bounded_too() {
    let deep = format!("SELECT a FROM t WHERE a < {}", vec!["1"; 10_000].join(" + "));
    let e = on_small_stack(move || {
        let mut cat = pgasync::types::Catalog::default();
        cat.add(pgasync::types::Table::new("t", vec![pgasync::types::Column::new("a", pgasync::types::ColType::Int)]));
        pgasync::sql::parse_shard_sql(&deep, &cat).unwrap_err()
    });
    // PostgreSQL's words, as for sqlparser's own recursion limit.
    assert_eq!(e.message, "stack depth limit exceeded");
    assert!(e.position.is_some_and(|p| p > 20 && p < 600), "{e}");
}

/// The weight of a scenario file's SQL (its `\set` lines left out: not SQL).
fn weight_of(text: &str) -> usize {
    let sql: String = text.lines().filter(|l| !l.trim_start().starts_with('\\')).map(|l| format!("{l}\n")).collect();
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, &sql).tokenize_with_location().unwrap();
    nesting::weight(&tokens)
}

#[test]
fn real_files_weigh_a_fraction_of_the_bound() {
    let corpus = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus.sql")).unwrap();
    let mut files: Vec<(&str, &str)> = SCENARIO_FILES.to_vec();
    files.push(("corpus", &corpus));
    for (name, text) in files {
        let w = weight_of(text);
        println!("{name}: weighs {w} (bound {MAX_WEIGHT})");
        assert!(w > 5 && w * 4 <= MAX_WEIGHT, "{name}: weighs {w}");
    }
}
