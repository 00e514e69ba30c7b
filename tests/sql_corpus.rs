// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! A corpus of queries against one schema (tests/data/corpus.sql, issue 9), run by the
//! sandbox and by real PostgreSQL 15 clusters this test starts (a coordinator with
//! postgres_fdw and one cluster per `-- @shard` section, set up by the file's own
//! setup sections; tests/support/sqlfile.rs).
//!
//! The file is a scenario file whose setup sections build the schema and whose
//! `-- @corpus` section lists the queries (its head says how to write one). The setup
//! runs once on each side: the sandbox plans every query against the loaded scenario
//! (`SqlScenario::with_query`).
//!
//! Each query runs four ways: the sandbox in sync and in async mode
//! (`Scenario::start(async_mode, …)`), PostgreSQL with `enable_async_append` off and
//! on. Sync is compared with off, async with on:
//!
//! - **rows**: as multisets; with ORDER BY, the ORDER BY keys (those that are output
//!   columns) must come in the same order, and the rows of each run of equal keys are
//!   compared as multisets, except a run cut by LIMIT (the last) or OFFSET (the
//!   first), of which SQL leaves open which tied rows are returned: there only the keys
//!   are compared. Values as text (psql's, NULL as `NULL`; the sandbox's Display).
//! - **plan shape**: the node lines of EXPLAIN (ANALYZE, VERBOSE, COSTS OFF), each as
//!   its depth, its node type and the relation it scans (`Async Foreign Scan on
//!   public.h0`; index names and aliases left out), in order.
//!
//! A query may be `execute name(args)` after `prepare` lines (and warm-up `execute`
//! lines, which the plan cache counts), as `set` lines precede a query; on PostgreSQL
//! the statement is DEALLOCATEd after each mode.
//!
//! **DML** (INSERT, UPDATE, DELETE): a query that modifies a table runs, on each side and in each
//! mode, from the same state, and the target table's contents afterwards are
//! compared too (as a multiset of rows, `SELECT * FROM target`, which reads a foreign
//! table's or a partitioned table's rows on every shard). The sandbox starts each run
//! from the loaded scenario (its shards and tables are copies; analyzed, see below) and reads the table
//! from the shards' and the coordinator's tables as the run left them; PostgreSQL runs
//! the EXPLAIN ANALYZE and the statement each in a transaction of its own that is
//! rolled back (postgres_fdw rolls back the remote transactions with it), the
//! statement followed by the SELECT of the target inside its transaction. So the
//! scratch tables a DML query writes are never changed for the next query. (Their
//! pages are, so on PostgreSQL the DML queries run after everything else, the
//! estimates' ANALYZE included: PostgreSQL plans them with the statistics, and the
//! sandbox runs them from the loaded scenario after the same ANALYZE.)
//!
//! Whether the whole EXPLAIN is also equal line for line (times masked, as
//! tests/sql_seeds.rs compares) is reported, not required.
//!
//! **Estimates** (issue 23): every query's EXPLAIN (VERBOSE) with costs, by the sandbox
//! and by PostgreSQL, as loaded and after `ANALYZE` of every coordinator relation (on
//! PostgreSQL at the end of its session, as ANALYZE may change its plans): over the
//! queries whose node lines agree, the nodes whose cost and width agree to the cent
//! and those whose rows are within a factor 2 of PostgreSQL's are counted, printed in
//! the summary, and held to what was measured (`COSTS_AS_LOADED`, `COSTS_ANALYZED`);
//! the report lists every query that differs, both plans.
//!
//! **Speed** (issue 20): the sandbox's side is CPU in a debug build (each query
//! planned three times, run twice: one plan for both modes' runs, whose plans cannot
//! differ, see `sandbox`; the shards' tables cloned with the scenario; each
//! planning made once: a mode's run uses the plan it made, an EXPLAIN with costs takes
//! its estimates from its plan-only run's plan: before, `scenario()` and
//! `explain_doc()` planned each a second time, and the test process's CPU, its
//! PostgreSQL clusters included, was 177.5 s, now 129.2 s, measured 2026-12-05 on the
//! shared machine with a cgroup's cpuacct), so it
//! runs on `PGASYNC_CORPUS_THREADS` threads (default: the cores, at most 4), each
//! taking the next query against its own copy of the loaded scenario; PostgreSQL's
//! read-only queries run in `PGASYNC_CORPUS_SESSIONS` psql sessions (default 4) side
//! by side (see `postgres` for why that changes nothing they see). The test prints
//! where the time went (`corpus timing:` lines). Measured 2026-12-05 on the shared
//! 2-core machine at load ~13-17: one thread and one session 652 s (136 s of the test
//! process's CPU; PostgreSQL done before the sandbox), two threads and four sessions
//! 573 s (138 s of CPU; PostgreSQL: clusters 24 s, queries 45 s, ANALYZE and the
//! estimates 12 s, DML 9 s). The library at opt-level 1 would halve the sandbox's CPU
//! (65 s) but quadruple the library's compile (28 → 114 s of CPU, twice in `make
//! test`: as a library and with its unit tests), which a clean clone pays first.
//!
//! The test prints a line per query, writes the full report (every query's plans and
//! differences) to `$CARGO_TARGET_TMPDIR/sql_corpus_report.txt`, and fails listing
//! every query that differs, with both plans.

mod support;

use pgasync::clock::Clock;
use pgasync::coordinator_sql::planner::Planned;
use pgasync::coordinator_sql::statement::parse_statements;
use pgasync::coordinator_sql::SqlScenario;
use pgasync::instrument::{explain_doc_text, ExplainOptions};
use pgasync::knobs::Knobs;
use pgasync::knobs::Source;
use sqlparser::ast::Statement;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;
use support::pg::TempDir;
use support::sqlfile::{coordinator_sets, cost_agreement, mask, parse_rows, psql_session, run_on_postgres};

const FILE: &str = "tests/data/corpus.sql";
const MODES: [(&str, bool); 2] = [("sync", false), ("async", true)];
/// Plan nodes whose estimates agree with PostgreSQL's to the cent, and whose rows are
/// within a factor 2 (over the queries whose node lines agree), as measured: as loaded,
/// and after ANALYZE of every relation. (6426 and 6436 to the cent before a SubPlan
/// was priced by its own query level's `cost_subplan` only: q780-q797's correlated IN
/// and q720-q725's `<> ALL` now agree, 25 nodes more each.)
const COSTS_AS_LOADED: (usize, usize) = (6451, 7092);
const COSTS_ANALYZED: (usize, usize) = (6461, 7115);
/// The queries of issue 17's capabilities (subqueries, gating Results, DML, operators
/// and shippability, set operations, values: those whose first tag is one of these)
/// whose EXPLAIN ANALYZE text is PostgreSQL's line for line, times masked: at least
/// this share of them (issue 17 asks for 80 %).
const ISSUE17_TAGS: [&str; 12] =
    ["subquery", "dml", "setop", "numeric", "routine", "text", "gating", "cte", "series", "error", "union", "const"];
const ISSUE17_IDENTICAL_SHARE: f64 = 0.80;

/// One query of the corpus.
#[derive(Clone, Debug)]
struct Entry {
    /// `q001`, … in file order.
    id: String,
    /// The file line its SQL starts on.
    line: usize,
    /// The words in `[…]` at the start of its comment.
    tags: Vec<String>,
    comment: String,
    /// `SET …` statements made for this query only.
    sets: Vec<String>,
    /// Known differences from PostgreSQL (`-- known: plan|rows|unsupported — why`):
    /// the ledger the test holds the sandbox to. A difference not in it fails the test,
    /// and so does a listed one that no longer happens (the ledger must stay true).
    known: Vec<(String, String)>,
    /// The query, without its `;`.
    sql: String,
}

/// The `-- @corpus` section's queries (see the head of tests/data/corpus.sql).
fn corpus_entries(text: &str) -> Vec<Entry> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| l.trim() == "-- @corpus").expect("a -- @corpus section");
    let mut out = Vec::new();
    let mut comment: Vec<String> = Vec::new();
    let mut sets: Vec<String> = Vec::new();
    let mut known: Vec<(String, String)> = Vec::new();
    let mut buf = String::new();
    let mut buf_line = 0;
    for (i, line) in lines.iter().enumerate().skip(start + 1) {
        let t = line.trim();
        if buf.is_empty() {
            if t.is_empty() {
                // A comment block followed by a blank line is a heading, not the query's.
                comment.clear();
                continue;
            }
            if let Some(k) = t.strip_prefix("-- known:") {
                let (kind, why) = k.trim().split_once(' ').unwrap_or((k.trim(), ""));
                assert!(
                    ["plan", "rows", "unsupported"].contains(&kind),
                    "{FILE}:{}: known: plan|rows|unsupported",
                    i + 1
                );
                known.push((kind.to_string(), why.trim_start_matches(['—', '-', ' ']).to_string()));
                continue;
            }
            if let Some(c) = t.strip_prefix("--") {
                comment.push(c.trim().to_string());
                continue;
            }
            buf_line = i + 1;
        }
        buf.push_str(line);
        buf.push('\n');
        if t.ends_with(';') {
            let stmt = buf.trim().trim_end_matches(';').trim().to_string();
            buf.clear();
            let lower = stmt.to_lowercase();
            // An EXECUTE with another statement on the next line runs before the query
            // (the plan cache counts it); the last statement of a block is the query.
            let next_is_statement =
                lines.get(i + 1).is_some_and(|l| !l.trim().is_empty() && !l.trim().starts_with("--"));
            if lower.starts_with("set ")
                || lower.starts_with("alter server ")
                || lower.starts_with("alter foreign table ")
                || lower.starts_with("prepare ")
                || (lower.starts_with("execute ") && next_is_statement)
            {
                sets.push(stmt);
                continue;
            }
            let first = comment.first().cloned().unwrap_or_default();
            let (tags, rest) = match first.strip_prefix('[').and_then(|r| r.split_once(']')) {
                Some((tags, rest)) => (tags.split_whitespace().map(str::to_string).collect(), rest.trim().to_string()),
                None => (vec![], first.clone()),
            };
            let mut text = vec![rest];
            text.extend(comment.iter().skip(1).cloned());
            out.push(Entry {
                id: format!("q{:03}", out.len() + 1),
                line: buf_line,
                tags,
                comment: text.join(" ").trim().to_string(),
                sets: std::mem::take(&mut sets),
                known: std::mem::take(&mut known),
                sql: stmt,
            });
            comment.clear();
        }
    }
    assert!(buf.trim().is_empty(), "{FILE}: the last query has no `;`");
    out
}

/// Does the sandbox's parser read `sql` as an INSERT, UPDATE or DELETE?
fn is_dml(sql: &str) -> bool {
    use pgasync::coordinator_sql::statement::Stmt;
    let stmts = parse_statements(&format!("{sql};"), 1).unwrap_or_default();
    matches!(stmts.first().map(|s| &s.stmt), Some(Stmt::Insert { .. } | Stmt::Update { .. } | Stmt::Delete { .. }))
}

/// What the query's text says about its order: the number of ORDER BY keys, and
/// whether LIMIT / OFFSET cut the result.
struct Shape {
    order_by: usize,
    limit: bool,
    offset: bool,
}

fn query_shape(sql: &str, sets: &[String]) -> Shape {
    let parsed = match harness_parse(sql) {
        Ok(p) => p,
        // A data-modifying CTE sqlparser cannot read: the shape of its statement's
        // query (the sandbox's parser reads it), else no order.
        Err(_) if sql.trim_start().to_lowercase().starts_with("with") => {
            use pgasync::coordinator_sql::statement::Stmt;
            let stmts = parse_statements(&format!("{sql};"), 1).unwrap_or_default();
            return match stmts.first().map(|s| &s.stmt) {
                Some(Stmt::With { body, .. }) => match body.as_ref() {
                    Stmt::Select(q) => Shape {
                        order_by: q.order_by.as_ref().map_or(0, |o| o.exprs.len()),
                        limit: q.limit.is_some() || q.fetch.is_some(),
                        offset: q.offset.is_some(),
                    },
                    _ => Shape { order_by: 0, limit: false, offset: false },
                },
                _ => Shape { order_by: 0, limit: false, offset: false },
            };
        }
        // A DML statement sqlparser cannot read (`UPDATE … FROM a, b`): no rows
        // in order.
        Err(_) if is_dml(sql) => return Shape { order_by: 0, limit: false, offset: false },
        Err(e) => panic!("{sql}: {e}"),
    };
    let prepared;
    let q = match parsed.first() {
        Some(Statement::Query(q)) => q,
        // DML without RETURNING: no rows, no order.
        Some(Statement::Insert(_) | Statement::Update { .. } | Statement::Delete(_)) => {
            return Shape { order_by: 0, limit: false, offset: false }
        }
        // `execute name(…)`: the shape of the query its `prepare` line prepared.
        Some(Statement::Execute { name, .. }) => {
            let prepare =
                sets.iter().filter_map(|s| Parser::parse_sql(&PostgreSqlDialect {}, s).ok()).flatten().find_map(|st| {
                    match st {
                        Statement::Prepare { name: n, statement, .. }
                            if n.value.eq_ignore_ascii_case(&name.to_string()) =>
                        {
                            match *statement {
                                Statement::Query(q) => Some(q),
                                _ => None,
                            }
                        }
                        _ => None,
                    }
                });
            prepared = prepare.unwrap_or_else(|| panic!("{sql}: no prepare line for it"));
            &prepared
        }
        _ => panic!("{sql}: not a query"),
    };
    Shape {
        order_by: q.order_by.as_ref().map_or(0, |o| o.exprs.len()),
        limit: q.limit.is_some() || q.fetch.is_some(),
        offset: q.offset.is_some(),
    }
}

/// One side's run of a query in one mode.
#[derive(Clone, Debug, Default)]
struct Outcome {
    /// The side could not run the query (a harness failure, or the sandbox refusing it).
    error: Option<String>,
    /// The query itself raised an ERROR while it ran (division by zero, …): its
    /// primary message (psql's `ERROR:  …` line without the prefix). Both sides
    /// failing with the same message is the same result.
    query_error: Option<String>,
    rows: Vec<Vec<String>>,
    explain: String,
    /// A DML query's target table afterwards (`SELECT * FROM target`).
    after: Option<Vec<Vec<String>>>,
}

/// sqlparser's statements of a corpus query. `DELETE FROM t RETURNING …` without
/// WHERE is read as `DELETE FROM t` (sqlparser takes RETURNING for an alias; the
/// target and the shape are the same).
fn harness_parse(sql: &str) -> Result<Vec<Statement>, sqlparser::parser::ParserError> {
    parse_with_operators(sql).or_else(|e| {
        let lower = sql.to_lowercase();
        match lower.find(" returning ") {
            Some(i) if lower.trim_start().starts_with("delete from ") => parse_with_operators(&sql[..i]),
            _ => Err(e),
        }
    })
}

/// sqlparser's statements, PostgreSQL's operators (`===`) read as one token each, as
/// the sandbox reads them.
fn parse_with_operators(sql: &str) -> Result<Vec<Statement>, sqlparser::parser::ParserError> {
    let tokens = sqlparser::tokenizer::Tokenizer::new(&PostgreSqlDialect {}, sql)
        .tokenize_with_location()
        .map_err(|e| sqlparser::parser::ParserError::TokenizerError(e.to_string()))?;
    let tokens = pgasync::shard_sql::operator_tokens::merge_operators(sql, tokens);
    Parser::new(&PostgreSqlDialect {}).with_tokens_with_locations(tokens).parse_statements()
}

/// The tables a DML query modifies (None for a query that reads only): a WITH's
/// data-modifying CTEs' and its statement's, each once, in order (read by the
/// sandbox's own parser: sqlparser cannot read a data-modifying WITH).
fn dml_target(sql: &str) -> Option<Vec<String>> {
    use pgasync::coordinator_sql::statement::Stmt;
    if sql.trim_start().to_lowercase().starts_with("with") {
        let stmts = parse_statements(&format!("{sql};"), 1).ok()?;
        let Some(Stmt::With { ctes, body }) = stmts.first().map(|s| &s.stmt) else { return None };
        let mut targets: Vec<String> = vec![];
        for st in ctes.iter().map(|c| &c.stmt).chain(std::iter::once(body.as_ref())) {
            let t = match st {
                Stmt::Insert { table, .. } | Stmt::Update { table, .. } | Stmt::Delete { table, .. } => {
                    table.to_string()
                }
                _ => continue,
            };
            if !targets.contains(&t) {
                targets.push(t);
            }
        }
        return (!targets.is_empty()).then_some(targets);
    }
    // The sandbox's own reading first: it takes what sqlparser does not (`UPDATE …
    // FROM a, b`), and names the table without its alias.
    if let Ok(stmts) = parse_statements(&format!("{sql};"), 1) {
        match stmts.first().map(|s| &s.stmt) {
            Some(Stmt::Insert { table, .. } | Stmt::Update { table, .. } | Stmt::Delete { table, .. }) => {
                return Some(vec![table.to_string()])
            }
            Some(_) => return None,
            None => {}
        }
    }
    let one = match harness_parse(sql).ok()?.first()? {
        Statement::Insert(ins) => ins.table_name.to_string(),
        Statement::Update { table, .. } => table.relation.to_string(),
        Statement::Delete(d) => match &d.from {
            sqlparser::ast::FromTable::WithFromKeyword(t) | sqlparser::ast::FromTable::WithoutKeyword(t) => {
                t.first().map(|t| t.relation.to_string())?
            }
        },
        _ => return None,
    };
    Some(vec![one])
}

/// Rows of several targets as one list: each row led by its table's name.
fn tagged(table: &str, rows: Vec<Vec<String>>) -> impl Iterator<Item = Vec<String>> + '_ {
    rows.into_iter().map(move |r| std::iter::once(table.to_string()).chain(r).collect())
}

/// The target's rows after the sandbox's run: the shards' tables as the run left
/// them and the coordinator's with the run's local changes, read by the sandbox.
fn sandbox_after(
    s: &SqlScenario,
    changes: &pgasync::executor::node_modifytable::LocalChanges,
    shards: &[pgasync::sim::ShardServer],
    target: &str,
) -> Result<Vec<Vec<String>>, String> {
    use pgasync::coordinator_sql::catalog::RelKind;
    let mut after = s.clone();
    for server in shards {
        let Some(n) = after.cluster.node_index(&server.name) else { continue };
        for t in &server.catalog.tables {
            for r in after.cluster.nodes[n].relations.iter_mut() {
                if let RelKind::Table(table) = &mut r.kind {
                    if table.name == t.name {
                        *table = std::rc::Rc::clone(t);
                    }
                }
            }
        }
    }
    let mut local = pgasync::types::Catalog::default();
    for r in &after.cluster.nodes[0].relations {
        if let RelKind::Table(t) = &r.kind {
            local.add_shared(t.clone());
        }
    }
    changes.apply(&mut local);
    for r in after.cluster.nodes[0].relations.iter_mut() {
        if let RelKind::Table(table) = &mut r.kind {
            if let Some(t) = local.get(&table.name) {
                *table = std::rc::Rc::clone(t);
            }
        }
    }
    let q = after.with_query(&format!("select * from {target};")).map_err(|e| e.to_string())?;
    let sc = q.scenario(&Knobs::default(), Source::Json).map_err(|e| e.to_string())?;
    let mut r = sc.start(false, Clock::virtual_clock(), false)?;
    r.keep_rows = true;
    r.run_to_end().map_err(|e| format!("reading {target} afterwards failed: {e}"))?;
    Ok(r.rows.iter().map(|row| row.iter().map(|d| d.to_string()).collect()).collect())
}

/// Where the sandbox's side spent its time (summed over its threads).
#[derive(Default)]
struct SandboxTimes {
    load: std::time::Duration,
    plan: std::time::Duration,
    execute: std::time::Duration,
    costs: std::time::Duration,
}

impl SandboxTimes {
    fn add(&mut self, o: &SandboxTimes) {
        self.load += o.load;
        self.plan += o.plan;
        self.execute += o.execute;
        self.costs += o.costs;
    }
}

/// The query's scenario on `state`: `query` (the entry's SQL, or an EXPLAIN of it) as
/// its query section, after the entry's `set` lines.
fn with_entry(state: &SqlScenario, e: &Entry, query: &str) -> Result<SqlScenario, String> {
    let mut s = state.with_query(query).map_err(|e| e.to_string())?;
    for set in &e.sets {
        for st in parse_statements(set, 1).map_err(|e| e.to_string())? {
            s.cluster.execute(0, &st).map_err(|e| e.to_string())?;
        }
    }
    Ok(s)
}

/// The sandbox: the query planned against the loaded scenario, then run to the end in
/// each mode of `MODES` (its outcome and order keys per mode).
///
/// Planned once for both modes (PostgreSQL plans per mode, its `enable_async_append`
/// marking the async-capable subplans; the sandbox's plan has no mode, which is the
/// run's: `Scenario::start(async_mode, …)`), so each mode's run starts from the same
/// plan as it would from a planning of its own.
fn sandbox(base: &SqlScenario, e: &Entry, times: &mut SandboxTimes) -> Vec<(Outcome, Vec<usize>)> {
    let failed = |m: String| (Outcome { error: Some(m), ..Outcome::default() }, vec![]);
    let t = Instant::now();
    let s = match with_entry(base, e, &format!("{};", e.sql)) {
        Ok(s) => s,
        Err(m) => return MODES.iter().map(|_| failed(m.clone())).collect(),
    };
    let planned = match s.plan() {
        Ok(p) => p,
        // An ERROR raised while planning (a constant that eval_const_expressions
        // folds, `1 / 0`): the query's result, and its EXPLAIN's, as on PostgreSQL.
        Err(e) if planning_error(&e.to_string()) => {
            let message = primary_message(&e.to_string());
            let explain = planning_error_explain(&message);
            let outcome = Outcome { query_error: Some(message), explain, ..Outcome::default() };
            return MODES.iter().map(|_| (outcome.clone(), vec![])).collect();
        }
        Err(e) => return MODES.iter().map(|_| failed(e.to_string())).collect(),
    };
    times.plan += t.elapsed();
    let t = Instant::now();
    let outcomes = MODES
        .iter()
        .map(|&(_, async_mode)| run_planned(base, &s, e, planned.clone(), async_mode).unwrap_or_else(failed))
        .collect();
    times.execute += t.elapsed();
    outcomes
}

/// One mode's run of the query `s` (the entry on `base`) from its plan.
fn run_planned(
    base: &SqlScenario,
    s: &SqlScenario,
    e: &Entry,
    planned: Planned,
    async_mode: bool,
) -> Result<(Outcome, Vec<usize>), String> {
    let order_keys = planned.order_keys.clone();
    let scenario = s.scenario_planned(planned, &Knobs::default(), Source::Json).map_err(|e| e.to_string())?;
    let mut run = scenario.start(async_mode, Clock::virtual_clock(), false)?;
    run.keep_rows = true;
    // An ERROR of the query ends the run: no rows (PostgreSQL sends none to psql),
    // the local changes rolled back with the transaction (the shards' by their
    // ABORT TRANSACTION).
    let query_error = run.run_to_end().err().map(|e| e.message().lines().next().unwrap_or("").to_string());
    let rows = match query_error {
        None => run.rows.iter().map(|r| r.iter().map(|d| d.to_string()).collect()).collect(),
        Some(_) => vec![],
    };
    // A query that raised is compared by its EXPLAIN without ANALYZE, as on PostgreSQL.
    let explain = match query_error {
        None => run.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE),
        Some(_) => sandbox_explain(base, e, "VERBOSE, COSTS OFF", async_mode)?,
    };
    let kept = match query_error {
        None => run.es.local_changes.clone(),
        Some(_) => Default::default(),
    };
    let after = match dml_target(&e.sql) {
        Some(ts) => {
            let mut all = vec![];
            for t in &ts {
                all.extend(tagged(t, sandbox_after(s, &kept, &run.host.servers, t)?));
            }
            Some(all)
        }
        None => None,
    };
    Ok((Outcome { error: None, query_error, rows, explain, after }, order_keys))
}

/// Whether a sandbox's planning failure is an ERROR of the query (a constant the
/// planner folds raised, as PostgreSQL raises it while planning) rather than
/// something the sandbox refuses.
fn planning_error(message: &str) -> bool {
    !message.contains("not supported by the sandbox") && !message.contains('\n')
}

/// An error's message without the sandbox's `line L, column C: ` (psql's
/// `LAST_ERROR_MESSAGE` has no position either).
fn primary_message(message: &str) -> String {
    let rest = message.strip_prefix("line ").and_then(|r| r.split_once(": ").map(|(_, m)| m));
    rest.unwrap_or(message).to_string()
}

/// What stands for the EXPLAIN of a query whose planning raised: the ERROR, on both
/// sides (PostgreSQL's EXPLAIN without ANALYZE raises it too).
fn planning_error_explain(message: &str) -> String {
    format!("ERROR:  {message}\n")
}

/// The sandbox's EXPLAIN (VERBOSE) with costs of a query (async mode), planned only;
/// `base` as loaded, or analyzed.
fn sandbox_costs(base: &SqlScenario, e: &Entry) -> Result<String, String> {
    sandbox_explain(base, e, "VERBOSE", true)
}

/// The sandbox's `EXPLAIN (options)` of a query in one mode, planned only.
fn sandbox_explain(base: &SqlScenario, e: &Entry, options: &str, async_mode: bool) -> Result<String, String> {
    let s = with_entry(base, e, &format!("EXPLAIN ({options}) {};", e.sql))?;
    // Planned once: the plan-only run and the estimates both from it (`plan_only` and
    // `explain_doc` would each plan the query).
    let planned = s.plan().map_err(|e| e.to_string())?;
    let doc = s.explain_doc_planned(&planned);
    let tree = s.plan_only_planned(planned, &Knobs::default(), Source::Json, async_mode).map_err(|e| e.to_string())?;
    Ok(explain_doc_text(&tree, &ExplainOptions::POSTGRES_VERBOSE, &doc, 0, 0))
}

/// `ANALYZE` of every relation of the coordinator, by name (foreign tables are
/// analyzed only when named).
fn analyze_all(base: &SqlScenario) -> String {
    let names: Vec<String> = base.cluster.coordinator().relations.iter().map(|r| r.name.clone()).collect();
    format!("ANALYZE {}", names.join(", "))
}

/// How many psql sessions run the corpus's read-only queries side by side on
/// PostgreSQL (`PGASYNC_CORPUS_SESSIONS`, default 4), and how many threads run the
/// sandbox's side (`PGASYNC_CORPUS_THREADS`, default the machine's cores, at most 4).
fn jobs(var: &str, default: usize) -> usize {
    std::env::var(var).ok().and_then(|v| v.parse().ok()).unwrap_or(default).max(1)
}

/// Whether a query's lines change the catalog for every session (`alter server|foreign
/// table … options`, undone after it): such a query runs alone, never beside another.
fn alters_catalog(e: &Entry) -> bool {
    e.sets.iter().any(|s| s.trim_start().to_lowercase().starts_with("alter "))
}

/// Runs each script in a psql session of its own on `coord`, side by side; their
/// outputs one after the other in the scripts' order.
fn psql_sessions(coord: &support::pg::Cluster, scripts: Vec<String>) -> String {
    std::thread::scope(|sc| {
        let running: Vec<_> = scripts.into_iter().map(|s| sc.spawn(move || psql_session(coord, &s))).collect();
        running.into_iter().map(|h| h.join().expect("a psql session")).collect()
    })
}

/// PostgreSQL: the setup, then the queries in psql sessions on the coordinator, in
/// phases (each phase's read-only work split over `PGASYNC_CORPUS_SESSIONS` sessions
/// side by side; what one session does cannot change what another sees, see below):
///
/// 1. every query's EXPLAIN ANALYZE and the query itself with `enable_async_append`
///    off and on, and (async) its EXPLAIN (VERBOSE) with costs; for a DML query only
///    the EXPLAIN with costs;
/// 2. `analyze` (one session), then every query's EXPLAIN (VERBOSE) again;
/// 3. the DML queries' runs, in one session in file order (each rolled back, but the
///    pages it wrote stay: the estimates of the next one may see them, as before).
///
/// A query's `set` and `prepare` lines are its session's only; its `alter server|
/// foreign table` lines are the catalog's, seen by every session: such a query runs in
/// a session of its own after the phase's others. Read-only queries write no pages
/// (the estimates "as loaded" read the tables' sizes), so running them side by side
/// leaves each one's result, plan and estimates as in one session.
/// Returns (id, mode) → outcome, and (id, "as is" | "analyzed") → the EXPLAIN with
/// costs.
fn postgres(
    text: &str,
    entries: &[Entry],
    analyze: &str,
) -> (BTreeMap<(String, String), Outcome>, BTreeMap<(String, String), String>) {
    let t0 = Instant::now();
    let dir = TempDir::new("sqlcorpus");
    let clusters = run_on_postgres(text, &dir);
    let setup = t0.elapsed();
    let coord = &clusters["coordinator"];
    let head = format!("\\pset null NULL\n{}\n", coordinator_sets(text));
    let error_check = "\\if :ERROR\n\\echo '@@error' :LAST_ERROR_MESSAGE\n\\endif\n";
    // Each mode's runs of a query; a DML query's each in a transaction of its own,
    // rolled back, its target read before the rollback.
    let runs = |e: &Entry, script: &mut String, costs: bool| {
        for (mode, async_mode) in MODES {
            // What the sets and warm-up EXECUTEs print goes to a block of its own.
            script.push_str(&format!("\\echo '@@ {} {mode} setup'\n", e.id));
            for s in &e.sets {
                script.push_str(&format!("{s};\n"));
            }
            script.push_str(&format!("SET enable_async_append = {};\n", if async_mode { "on" } else { "off" }));
            let target = dml_target(&e.sql);
            let (begin, end) = if target.is_some() { ("BEGIN;\n", "ROLLBACK;\n") } else { ("", "") };
            // A query that raises: its plan from EXPLAIN without ANALYZE (in a fresh
            // transaction for DML, the failed one rolled back), its rows' block the
            // error, and the target read after the rollback.
            let restart = if target.is_some() { "ROLLBACK;\nBEGIN;\n" } else { "" };
            script.push_str(&format!("\\echo '@@ {} {mode} explain'\n{begin}", e.id));
            script.push_str(&format!(
                "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) {sql};\n\\if :ERROR\n\\echo '@@error' :LAST_ERROR_MESSAGE\n\
                 {restart}\\echo '@@ {id} {mode} plan'\nEXPLAIN (VERBOSE, COSTS OFF) {sql};\n{error_check}\\endif\n{end}",
                sql = e.sql,
                id = e.id
            ));
            script.push_str(&format!("\\echo '@@ {} {mode} rows'\n{begin}", e.id));
            script.push_str(&format!(
                "{};\n\\if :ERROR\n\\echo '@@error' :LAST_ERROR_MESSAGE\n{restart}\\endif\n",
                e.sql
            ));
            if let Some(ts) = &target {
                for (i, t) in ts.iter().enumerate() {
                    script
                        .push_str(&format!("\\echo '@@ {} {mode} after{i}'\nSELECT * FROM {t};\n{error_check}", e.id));
                }
                script.push_str(end);
            }
            if async_mode && costs {
                script.push_str(&format!("\\echo '@@ {} costs as_is'\n", e.id));
                script.push_str(&format!("EXPLAIN (VERBOSE) {};\n{error_check}", e.sql));
            }
            script.push_str(&undo_sets(&e.sets));
        }
    };
    // A DML query's EXPLAIN with costs as loaded (its runs are phase 3's).
    let dml_costs = |e: &Entry, script: &mut String| {
        script.push_str(&format!("\\echo '@@ {} costs_setup as_is'\n", e.id));
        for s in &e.sets {
            script.push_str(&format!("{s};\n"));
        }
        script.push_str("SET enable_async_append = on;\n");
        script.push_str(&format!("\\echo '@@ {} costs as_is'\n", e.id));
        script.push_str(&format!("EXPLAIN (VERBOSE) {};\n{error_check}", e.sql));
        script.push_str(&undo_sets(&e.sets));
    };
    let analyzed = |e: &Entry, script: &mut String| {
        script.push_str(&format!("\\echo '@@ {} analyzed setup'\n", e.id));
        for s in &e.sets {
            script.push_str(&format!("{s};\n"));
        }
        script.push_str("SET enable_async_append = on;\n");
        script.push_str(&format!("\\echo '@@ {} costs analyzed'\n", e.id));
        script.push_str(&format!("EXPLAIN (VERBOSE) {};\n{error_check}", e.sql));
        script.push_str(&undo_sets(&e.sets));
    };
    let sessions = jobs("PGASYNC_CORPUS_SESSIONS", 4);
    // A phase: the queries that alter no catalog dealt round-robin to the sessions, run
    // side by side; then each that does, one after the other in a session of its own.
    let phase = |each: &dyn Fn(&Entry, &mut String), those: Vec<&Entry>| -> String {
        let mut scripts = vec![head.clone(); sessions];
        for (i, e) in those.iter().filter(|e| !alters_catalog(e)).enumerate() {
            each(e, &mut scripts[i % sessions]);
        }
        let mut out = psql_sessions(coord, scripts);
        for e in those.iter().filter(|e| alters_catalog(e)) {
            let mut script = head.clone();
            each(e, &mut script);
            out.push_str(&psql_session(coord, &script));
        }
        out
    };
    // A DML query runs last, after the estimates: its rolled-back runs leave the pages
    // they wrote (a rolled-back UPDATE's row versions, an INSERT's rows), which would
    // change what ANALYZE measures and the estimates of the queries after it.
    let t1 = Instant::now();
    let mut output = phase(
        &|e, script| if dml_target(&e.sql).is_none() { runs(e, script, true) } else { dml_costs(e, script) },
        entries.iter().collect(),
    );
    let queries = t1.elapsed();
    // After every other query (ANALYZE may change PostgreSQL's plans).
    let t2 = Instant::now();
    output.push_str(&psql_session(coord, &format!("{analyze};\n")));
    output.push_str(&phase(&analyzed, entries.iter().collect()));
    let analyzed_time = t2.elapsed();
    let t3 = Instant::now();
    let mut dml = head.clone();
    for e in entries.iter().filter(|e| dml_target(&e.sql).is_some()) {
        runs(e, &mut dml, false);
    }
    dml.push_str("RESET enable_async_append;\n");
    output.push_str(&psql_session(coord, &dml));
    println!(
        "corpus timing: PostgreSQL: clusters started and set up in {:.1} s; the queries ({} sessions) {:.1} s, \
         ANALYZE and the estimates again {:.1} s, the DML queries (one session) {:.1} s",
        setup.as_secs_f64(),
        sessions,
        queries.as_secs_f64(),
        analyzed_time.as_secs_f64(),
        t3.elapsed().as_secs_f64()
    );
    let mut blocks: BTreeMap<(String, String, String), (String, Option<String>)> = BTreeMap::new();
    let mut current: Option<(String, String, String)> = None;
    for line in output.lines() {
        if let Some(rest) = line.strip_prefix("@@ ") {
            let w: Vec<&str> = rest.split_whitespace().collect();
            let key = (w[0].to_string(), w[1].to_string(), w[2].to_string());
            blocks.insert(key.clone(), (String::new(), None));
            current = Some(key);
        } else if let Some(msg) = line.strip_prefix("@@error") {
            if let Some(k) = &current {
                blocks.get_mut(k).unwrap().1 = Some(msg.trim().to_string());
            }
        } else if let Some(k) = &current {
            let b = blocks.get_mut(k).unwrap();
            b.0.push_str(line);
            b.0.push('\n');
        }
    }
    let mut out = BTreeMap::new();
    let mut costs = BTreeMap::new();
    for e in entries {
        for state in ["as_is", "analyzed"] {
            if let Some((text, None)) = blocks.get(&(e.id.clone(), "costs".to_string(), state.to_string())) {
                costs.insert((e.id.clone(), state.to_string()), text.clone());
            }
        }
        for (mode, _) in MODES {
            let get = |kind: &str| blocks.get(&(e.id.clone(), mode.to_string(), kind.to_string())).cloned();
            let (explain, ee) = get("explain").unwrap_or_else(|| (String::new(), Some("no output".into())));
            let (rows, re) = get("rows").unwrap_or_else(|| (String::new(), Some("no output".into())));
            // The query raised (EXPLAIN ANALYZE ran it too): the plan is EXPLAIN's, or,
            // when EXPLAIN raises the same ERROR, it was raised while planning (a
            // folded constant: `1 / 0`), which stands for the plan.
            let (explain, ee) = match (&ee, &re) {
                (Some(_), Some(r)) => match get("plan") {
                    Some((_, Some(pe))) if pe == *r => (planning_error_explain(r), None),
                    Some(plan) => plan,
                    None => (String::new(), Some("no plan".into())),
                },
                _ => (explain, ee),
            };
            let (after, ae) = match dml_target(&e.sql) {
                Some(ts) => {
                    let (mut all, mut first_err) = (vec![], None);
                    for (i, t) in ts.iter().enumerate() {
                        let (text, err) =
                            get(&format!("after{i}")).unwrap_or_else(|| (String::new(), Some("no output".into())));
                        all.extend(tagged(t, parse_rows(&text)));
                        first_err = first_err.or(err);
                    }
                    (Some(all), first_err)
                }
                None => (None, None),
            };
            out.insert(
                (e.id.clone(), mode.to_string()),
                Outcome { error: ee.or(ae), query_error: re, rows: parse_rows(&rows), explain, after },
            );
        }
    }
    (out, costs)
}

/// Undoes a query's `set` and `prepare` lines after it: RESET, DEALLOCATE.
fn undo_sets(sets: &[String]) -> String {
    let mut out = String::new();
    for s in sets {
        let mut words = s.split_whitespace();
        let verb = words.next().unwrap_or("").to_lowercase();
        let name = words.next().unwrap_or("").split('(').next().unwrap_or("");
        match verb.as_str() {
            "set" => out.push_str(&format!("RESET {name};\n")),
            // `alter server|foreign table NAME options (add KEY 'value')`: the option dropped.
            "alter" => {
                let words: Vec<&str> =
                    s.split(|c: char| c.is_whitespace() || c == '(').filter(|w| !w.is_empty()).collect();
                let at = |i: usize| words.get(i).copied().unwrap_or("");
                let (kind, rest) =
                    if name.eq_ignore_ascii_case("server") { ("SERVER", 2) } else { ("FOREIGN TABLE", 3) };
                assert!(at(rest + 2).eq_ignore_ascii_case("add"), "{FILE}: only `alter … options (add …)` lines: {s}");
                out.push_str(&format!("ALTER {kind} {} OPTIONS (DROP {});\n", at(rest), at(rest + 3)));
            }
            "prepare" => out.push_str(&format!("DEALLOCATE {name};\n")),
            _ => {}
        }
    }
    out
}

/// The plan's node lines: depth, node type and scanned relation.
fn plan_shape(explain: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, line) in explain.lines().enumerate() {
        let (depth, body) = if i == 0 {
            (0, line.trim())
        } else {
            match line.find("->  ") {
                Some(p) if line[..p].trim().is_empty() => ((p.saturating_sub(2)) / 6 + 1, &line[p + 4..]),
                _ => continue,
            }
        };
        let body = body.split(" (actual").next().unwrap_or(body);
        let body = body.split(" (never executed)").next().unwrap_or(body).trim();
        let label = match body.find(" on ") {
            Some(j) => {
                let ty = body[..j].split(" using ").next().unwrap_or("");
                let rel = body[j + 4..].split_whitespace().next().unwrap_or("");
                format!("{ty} on {rel}")
            }
            None => body.to_string(),
        };
        out.push(format!("{}{label}", "  ".repeat(depth)));
    }
    out
}

/// Compares the rows; `keys` are the output columns of the ORDER BY keys (None: no
/// ORDER BY). Returns what differs.
fn compare_rows(
    ours: &[Vec<String>],
    theirs: &[Vec<String>],
    keys: Option<&[usize]>,
    shape: &Shape,
) -> Result<(), String> {
    let show = |v: &[Vec<String>]| v.iter().take(6).map(|r| r.join("|")).collect::<Vec<_>>().join("; ");
    if ours.len() != theirs.len() {
        return Err(format!(
            "{} rows, PostgreSQL {} (sandbox: {} …; PostgreSQL: {} …)",
            ours.len(),
            theirs.len(),
            show(ours),
            show(theirs)
        ));
    }
    let multiset_diff = |a: &[Vec<String>], b: &[Vec<String>]| -> Option<String> {
        let (mut a, mut b) = (a.to_vec(), b.to_vec());
        a.sort();
        b.sort();
        if a == b {
            return None;
        }
        let only_a: Vec<Vec<String>> = a.iter().filter(|r| !b.contains(r)).cloned().collect();
        let only_b: Vec<Vec<String>> = b.iter().filter(|r| !a.contains(r)).cloned().collect();
        Some(format!(
            "only in the sandbox: {} row(s): {}; only in PostgreSQL: {} row(s): {}",
            only_a.len(),
            show(&only_a),
            only_b.len(),
            show(&only_b)
        ))
    };
    let Some(keys) = keys else {
        return multiset_diff(ours, theirs).map_or(Ok(()), Err);
    };
    let key_of = |r: &Vec<String>| keys.iter().map(|&k| r.get(k).cloned().unwrap_or_default()).collect::<Vec<_>>();
    let (ko, kt): (Vec<_>, Vec<_>) = (ours.iter().map(key_of).collect(), theirs.iter().map(key_of).collect());
    if let Some(i) = (0..ko.len()).find(|&i| ko[i] != kt[i]) {
        return Err(format!(
            "ORDER BY keys differ at row {}: sandbox {:?}, PostgreSQL {:?}",
            i + 1,
            ko[i].join("|"),
            kt[i].join("|")
        ));
    }
    // Runs of equal keys.
    let mut start = 0;
    while start < ko.len() {
        let mut end = start + 1;
        while end < ko.len() && ko[end] == ko[start] {
            end += 1;
        }
        let cut = (start == 0 && shape.offset) || (end == ko.len() && shape.limit);
        if !cut {
            if let Some(d) = multiset_diff(&ours[start..end], &theirs[start..end]) {
                return Err(format!("rows {}..{} (keys {:?}): {d}", start + 1, end, ko[start].join("|")));
            }
        }
        start = end;
    }
    Ok(())
}

/// One mode's verdict.
struct Verdict {
    rows: Result<(), String>,
    plan: bool,
    text_same: bool,
    unsupported: bool,
}

#[test]
fn corpus_matches_postgres() {
    let t0 = Instant::now();
    let text = std::fs::read_to_string(FILE).unwrap();
    let entries = corpus_entries(&text);
    assert!(entries.len() >= 100, "{FILE}: {} queries, at least 100 expected", entries.len());

    // PostgreSQL in a thread of its own while the sandbox loads and runs.
    let base = SqlScenario::load(&text).unwrap_or_else(|e| panic!("{FILE}: {e}"));
    let analyze = analyze_all(&base);
    let pg = {
        let (text, entries, analyze) = (text.clone(), entries.clone(), analyze.clone());
        std::thread::spawn(move || postgres(&text, &entries, &analyze))
    };
    let loaded = t0.elapsed();
    let threads = jobs("PGASYNC_CORPUS_THREADS", std::thread::available_parallelism().map_or(1, |n| n.get()).min(4));
    let next = std::sync::atomic::AtomicUsize::new(0);
    // Each thread takes the next query and runs all of its sandbox side (both modes,
    // both EXPLAINs with costs), against its own copy of the loaded scenario.
    let worker = || {
        let t = Instant::now();
        let base = SqlScenario::load(&text).unwrap_or_else(|e| panic!("{FILE}: {e}"));
        // The setup after ANALYZE of every relation.
        let mut analyzed = base.clone();
        for st in parse_statements(&format!("{analyze};"), 1).unwrap() {
            analyzed.cluster.execute(0, &st).unwrap_or_else(|e| panic!("{analyze}: {e}"));
        }
        let mut times = SandboxTimes { load: t.elapsed(), ..SandboxTimes::default() };
        let mut ours: Vec<((String, String), (Outcome, Vec<usize>))> = vec![];
        let mut costs: Vec<((String, String), String)> = vec![];
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(e) = entries.get(i) else { break };
            // PostgreSQL runs a DML query after the ANALYZE (see `postgres`), so it plans
            // it with the statistics: so does the sandbox.
            let dml = dml_target(&e.sql).is_some();
            let outcomes = sandbox(if dml { &analyzed } else { &base }, e, &mut times);
            for ((mode, _), outcome) in MODES.iter().zip(outcomes) {
                ours.push(((e.id.clone(), mode.to_string()), outcome));
            }
            // EXPLAIN with costs, as loaded and after ANALYZE of every relation.
            let t = Instant::now();
            for (state, s) in [("as_is", &base), ("analyzed", &analyzed)] {
                if let Ok(t) = sandbox_costs(s, e) {
                    costs.push(((e.id.clone(), state.to_string()), t));
                }
            }
            times.costs += t.elapsed();
        }
        (ours, costs, times)
    };
    let mut ours: BTreeMap<(String, String), (Outcome, Vec<usize>)> = BTreeMap::new();
    let mut our_costs: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut times = SandboxTimes::default();
    std::thread::scope(|sc| {
        let running: Vec<_> = (0..threads).map(|_| sc.spawn(worker)).collect();
        for h in running {
            let (o, c, t) = h.join().expect("a sandbox thread");
            ours.extend(o);
            our_costs.extend(c);
            times.add(&t);
        }
    });
    let sandbox_done = t0.elapsed();
    let (theirs, their_costs) = pg.join().expect("the PostgreSQL side");
    let pg_done = t0.elapsed();
    println!(
        "corpus timing: the sandbox ({threads} threads, debug build: their time summed): loading {:.1} s, planning {:.1} s, \
         executing (EXPLAIN ANALYZE, the DML's targets read) {:.1} s, EXPLAIN with costs {:.1} s; done at {:.1} s, \
         PostgreSQL at {:.1} s",
        times.load.as_secs_f64(),
        times.plan.as_secs_f64(),
        times.execute.as_secs_f64(),
        times.costs.as_secs_f64(),
        sandbox_done.as_secs_f64(),
        pg_done.as_secs_f64()
    );

    let mut report = String::new();
    // Both EXPLAIN texts in full of each query whose text differs (same plan shape),
    // for whoever makes the text PostgreSQL's (`sql_corpus_texts.txt`).
    let mut texts = String::new();
    let mut failures = String::new();
    let mut table = String::new();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut tags: BTreeMap<String, usize> = BTreeMap::new();
    for e in &entries {
        for t in &e.tags {
            *tags.entry(t.clone()).or_default() += 1;
        }
        let shape = query_shape(&e.sql, &e.sets);
        let mut verdicts = Vec::new();
        let mut detail = String::new();
        for (mode, _) in MODES {
            let key = (e.id.clone(), mode.to_string());
            let (o, order_keys) = &ours[&key];
            let p = &theirs[&key];
            let (ps, os) = (plan_shape(&p.explain), plan_shape(&o.explain));
            let v = if let Some(err) = &p.error {
                Verdict {
                    rows: Err(format!("PostgreSQL failed: {err}")),
                    plan: false,
                    text_same: false,
                    unsupported: false,
                }
            } else if let Some(err) = &o.error {
                Verdict {
                    rows: Err(format!("the sandbox failed: {err}")),
                    plan: false,
                    text_same: false,
                    unsupported: err.contains("not supported by the sandbox"),
                }
            } else {
                let keys = (shape.order_by > 0).then_some(order_keys.as_slice());
                // A DML query's target afterwards is part of its rows' verdict.
                let after = match (&o.after, &p.after) {
                    (Some(a), Some(b)) => {
                        compare_rows(a, b, None, &shape).map_err(|m| format!("the target afterwards: {m}"))
                    }
                    _ => Ok(()),
                };
                // An ERROR is the query's result: the same message on both sides is
                // the same result; one side failing alone is a difference.
                let rows = match (&o.query_error, &p.query_error) {
                    (None, None) => compare_rows(&o.rows, &p.rows, keys, &shape),
                    (Some(a), Some(b)) if a == b => Ok(()),
                    (Some(a), Some(b)) => Err(format!("both raised, differently: sandbox \"{a}\", PostgreSQL \"{b}\"")),
                    (Some(a), None) => Err(format!("the sandbox raised \"{a}\", PostgreSQL did not")),
                    (None, Some(b)) => Err(format!("PostgreSQL raised \"{b}\", the sandbox did not")),
                };
                Verdict {
                    rows: rows.and(after),
                    plan: os == ps,
                    text_same: mask(&o.explain) == mask(&p.explain),
                    unsupported: false,
                }
            };
            let _ = writeln!(
                detail,
                "  {mode}: rows {}, plan {}{}",
                match &v.rows {
                    Ok(()) => "same".to_string(),
                    Err(m) => format!("DIFFER: {m}"),
                },
                if v.plan { "same" } else { "DIFFERS" },
                if v.text_same { ", EXPLAIN identical" } else { "" }
            );
            if o.error.is_none() && shape.order_by > order_keys.len() {
                let _ = writeln!(
                    detail,
                    "  {mode}: note: {} of {} ORDER BY keys are output columns",
                    order_keys.len(),
                    shape.order_by
                );
            }
            if v.plan && !v.text_same {
                // Same shape: the lines that differ, for whoever improves the text.
                let (a, b) = (mask(&o.explain), mask(&p.explain));
                let _ = writeln!(
                    texts,
                    "{} {mode} --- sandbox\n{}\n{} {mode} --- PostgreSQL\n{}\n",
                    e.id,
                    a.join("\n"),
                    e.id,
                    b.join("\n")
                );
                for i in 0..a.len().max(b.len()) {
                    let (x, y) = (a.get(i).map_or("", |s| s.as_str()), b.get(i).map_or("", |s| s.as_str()));
                    if x != y {
                        let _ = writeln!(detail, "  {mode} text, sandbox:    {}", x.trim());
                        let _ = writeln!(detail, "  {mode} text, PostgreSQL: {}", y.trim());
                    }
                }
            }
            if !v.plan {
                let _ = writeln!(detail, "  --- {mode}, sandbox:");
                match &o.error {
                    Some(err) => {
                        let _ = writeln!(detail, "    ERROR: {err}");
                    }
                    None => {
                        for l in mask(&o.explain) {
                            let _ = writeln!(detail, "    {l}");
                        }
                    }
                }
                let _ = writeln!(detail, "  --- {mode}, PostgreSQL:");
                for l in mask(&p.explain) {
                    let _ = writeln!(detail, "    {l}");
                }
            }
            verdicts.push(v);
        }
        let ok = verdicts.iter().all(|v| v.rows.is_ok() && v.plan);
        // Held to the ledger: each kind of difference must be listed exactly when it
        // happens.
        let is_known = |k: &str| e.known.iter().any(|(kind, _)| kind == k);
        let unsupported = verdicts.iter().any(|v| v.unsupported);
        let rows_differ = !unsupported && verdicts.iter().any(|v| v.rows.is_err());
        let plan_differs = !unsupported && verdicts.iter().any(|v| !v.plan);
        let mut ledger = Vec::new();
        for (kind, happens) in [("unsupported", unsupported), ("rows", rows_differ), ("plan", plan_differs)] {
            match (happens, is_known(kind)) {
                (true, false) => ledger.push(format!("a {kind} difference not in the ledger")),
                (false, true) => {
                    ledger.push(format!("listed as known {kind} but no longer differs: remove the known line"))
                }
                _ => {}
            }
        }
        if !ok {
            *counts.entry("known differences").or_default() += 1;
        }
        let mark = |b: bool| if b { "ok" } else { "--" };
        let _ = writeln!(
            table,
            "{} l.{:<4} sync rows {} plan {} | async rows {} plan {} | text {} {}[{}] {}",
            e.id,
            e.line,
            mark(verdicts[0].rows.is_ok()),
            mark(verdicts[0].plan),
            mark(verdicts[1].rows.is_ok()),
            mark(verdicts[1].plan),
            mark(verdicts.iter().all(|v| v.text_same)),
            if verdicts.iter().any(|v| v.unsupported) { "UNSUPPORTED " } else { "" },
            e.tags.join(" "),
            e.sql.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        for (mode, v) in ["sync", "async"].iter().zip(&verdicts) {
            if v.rows.is_ok() {
                *counts.entry(if *mode == "sync" { "sync rows" } else { "async rows" }).or_default() += 1;
            }
            if v.plan {
                *counts.entry(if *mode == "sync" { "sync plan" } else { "async plan" }).or_default() += 1;
            }
            if v.rows.is_ok() && v.plan {
                *counts.entry(if *mode == "sync" { "sync both" } else { "async both" }).or_default() += 1;
            }
        }
        if ok {
            *counts.entry("all").or_default() += 1;
        }
        let issue17 = e.tags.first().is_some_and(|t| ISSUE17_TAGS.contains(&t.as_str()));
        if issue17 {
            *counts.entry("issue 17 queries").or_default() += 1;
        }
        if verdicts.iter().all(|v| v.text_same) {
            *counts.entry("EXPLAIN identical").or_default() += 1;
            if issue17 {
                *counts.entry("issue 17 identical").or_default() += 1;
            }
        }
        if verdicts.iter().any(|v| v.unsupported) {
            *counts.entry("unsupported").or_default() += 1;
        }
        let head = format!("{} (line {}) [{}] {}\n  {}\n", e.id, e.line, e.tags.join(" "), e.comment, e.sql);
        let sets = if e.sets.is_empty() { String::new() } else { format!("  with: {}\n", e.sets.join("; ")) };
        let known: String = e.known.iter().map(|(k, why)| format!("  known {k}: {why}\n")).collect();
        let _ = writeln!(report, "{head}{sets}{known}{detail}");
        if !ledger.is_empty() {
            let _ = writeln!(failures, "{head}{sets}{known}  LEDGER: {}\n{detail}", ledger.join("; "));
        }
    }
    // Estimates: over the queries whose node lines agree, how many nodes agree to the
    // cent and how many have rows within a factor 2 of PostgreSQL's.
    let mut cost_lines = String::new();
    let mut cost_counts: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    for state in ["as_is", "analyzed"] {
        let c = cost_counts.entry(state).or_default();
        for e in &entries {
            let key = (e.id.clone(), state.to_string());
            let (Some(o), Some(p)) = (our_costs.get(&key), their_costs.get(&key)) else { continue };
            match cost_agreement(o, p) {
                Some((cents, rows, nodes)) => {
                    c[0] += 1;
                    c[1] += nodes;
                    c[2] += cents;
                    c[3] += rows;
                    if cents < nodes {
                        let _ = writeln!(cost_lines, "{} {state}: {cents} of {nodes} nodes to the cent, rows within 2x {rows}\n--- sandbox\n{o}--- PostgreSQL\n{p}", e.id);
                    }
                }
                None => {
                    let _ = writeln!(cost_lines, "{} {state}: plan nodes differ", e.id);
                }
            }
        }
    }
    let n = entries.len();
    let mut summary = format!(
        "{n} queries ({FILE}); setup loaded in the sandbox in {:.1} s, sandbox runs done at {:.1} s, PostgreSQL at {:.1} s\n",
        loaded.as_secs_f64(),
        sandbox_done.as_secs_f64(),
        pg_done.as_secs_f64()
    );
    for k in [
        "sync rows",
        "sync plan",
        "sync both",
        "async rows",
        "async plan",
        "async both",
        "all",
        "EXPLAIN identical",
        "issue 17 queries",
        "issue 17 identical",
        "unsupported",
        "known differences",
    ] {
        // Issue 17's identical texts are counted over issue 17's queries.
        let of = if k == "issue 17 identical" { counts.get("issue 17 queries").copied().unwrap_or(0) } else { n };
        let _ = writeln!(summary, "  {k:<18} {:>3} of {of}", counts.get(k).copied().unwrap_or(0));
    }
    let _ =
        writeln!(summary, "  tags: {}", tags.iter().map(|(t, c)| format!("{t} {c}")).collect::<Vec<_>>().join(", "));
    for (state, c) in &cost_counts {
        let _ = writeln!(
            summary,
            "  estimates ({}): {} queries with PostgreSQL's plan nodes; of their {} nodes {} agree to the cent (cost and width), {} have rows within a factor 2",
            if *state == "as_is" { "as loaded" } else { "after ANALYZE" },
            c[0],
            c[1],
            c[2],
            c[3]
        );
    }
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("sql_corpus_report.txt");
    let _ = std::fs::write(&path, format!("{summary}\n{table}\n{report}\nESTIMATES\n{cost_lines}"));
    let _ = std::fs::write(path.with_file_name("sql_corpus_texts.txt"), texts);
    println!("{table}\n{summary}full report: {}", path.display());
    // What was measured (tests/data/corpus.sql): not fewer, so that a regression fails.
    for (state, least) in [("as_is", COSTS_AS_LOADED), ("analyzed", COSTS_ANALYZED)] {
        let c = cost_counts[state];
        assert!(
            c[2] >= least.0 && c[3] >= least.1,
            "estimates ({state}): {} nodes to the cent, {} rows within 2x; at least {least:?} expected",
            c[2],
            c[3]
        );
    }
    let (i17, i17_same) =
        (counts.get("issue 17 queries").copied().unwrap_or(0), counts.get("issue 17 identical").copied().unwrap_or(0));
    assert!(
        i17 > 0 && i17_same as f64 >= ISSUE17_IDENTICAL_SHARE * i17 as f64,
        "issue 17's queries: {i17_same} of {i17} EXPLAIN ANALYZE texts identical to PostgreSQL's, at least {:.0} % expected",
        ISSUE17_IDENTICAL_SHARE * 100.0
    );
    assert!(
        failures.is_empty(),
        "queries whose differences from PostgreSQL's rows or plan are not the ledger's (-- known: lines):\n\n{failures}\n{summary}full report: {}",
        path.display()
    );
}
