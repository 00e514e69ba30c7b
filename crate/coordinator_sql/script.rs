//! Scenario files: SQL for the coordinator and for each shard, the query, the knobs.
//!
//! ```text
//! -- @shard s2                 statements run on shard s2 (a server named s2)
//! create table players_p1 (id int, name text, score int);
//! -- @coordinator              statements run on the coordinator (also the default
//! create extension postgres_fdw;   before any marker)
//! create server s2 foreign data wrapper postgres_fdw options (port '5433', async_capable 'on');
//! -- @query                    the query the sandbox runs and steps through
//! \set rnd_offset random(0,200)
//! select * from players order by score desc offset :rnd_offset limit 10;
//! -- @knobs                    knob = value lines (the wasm API's names)
//! rtt_ms = 2
//! -- @corpus                   queries for tests/sql_corpus.rs: skipped here
//! ```
//!
//! Sections run in the order written, as the seeds' scripts are run instance after
//! instance. pgbench's `\set name random(a, b)` (or a number) defines `:name` for the
//! query; its random draws are deterministic (PostgreSQL's generator, seed 0), so a
//! scenario always runs the same query.
//!
//! A `-- @corpus` section (tests/data/corpus.sql) holds many queries against one
//! setup; loading skips it, and [`SqlScenario::with_query`] plans each of them
//! against the databases already built.
//!
//! Invariants:
//! - a file is at most `MAX_SCRIPT_BYTES`, checked before anything is parsed;
//! - an unknown `-- @` marker is an error, so a misspelled one cannot turn a section's SQL
//!   into the previous section's; at most one `-- @query`, holding exactly one SELECT,
//!   `EXECUTE name(args)` (of a statement the setup PREPAREd: the plan cache's choice
//!   for it, `prepared.rs`) or an EXPLAIN of either; shard names are folded to lower case, as unquoted names are;
//! - each section keeps its first line, so errors point into the file;
//! - `:name` is replaced outside string literals only and never in `::type`; an undefined
//!   variable is an error; the `\set` generator is seeded anew for each load.
//!
//! PostgreSQL has no counterpart: a scenario file is the sandbox's own format, SQL for
//! several servers in one file; `\set` and `:name` follow pgbench's, for integers and
//! `random(a, b)` only.

use super::catalog::{Begun, Cluster, InsertJob, Limits, RelKind};
use super::planner::{plan_query, Planned};
use super::statement::{parse_statements, ExplainFlags, Stmt};
use super::{pgfuncs, FrontError};
use crate::instrument::{ExplainDoc, ExplainNode};
use crate::knobs::{self, Knobs, Source, MAX_SCRIPT_BYTES};
use crate::remote::ServerOptions;
use crate::scenario::{Scenario, Settings};
use crate::types::{Catalog, Table};
use sqlparser::tokenizer::Location;
use std::rc::Rc;

/// Built-in scenarios as scenario files (`crate/coordinator_sql/scenarios/`), embedded: D and
/// E build the same tables, rows and plan as the built-in generators at the seeds'
/// sizes (`bench_size`) (tests/suite/sql_files.rs checks EXPLAIN ANALYZE is identical, times included); M
/// and X are seeds 003 and 004's own scripts (tests/sql_seeds.rs checks them against
/// real PostgreSQL), X identical to the built-in X, M with the seed's random() scores;
/// R builds the built-in R (issue 18), K the built-in K's rows with partitioned tables
/// (the front end joins two relations, not two UNION ALL subqueries); t0, pl, pf0 and
/// pf1 build Kyotaro Horiguchi's benchmarks as the built-ins do; pp runs a prepared
/// statement's generic plan with run-time partition pruning (no built-in counterpart).
pub const SCENARIO_FILES: &[(&str, &str)] = &[
    ("D", include_str!("scenarios/d.sql")),
    ("E", include_str!("scenarios/e.sql")),
    ("M", include_str!("scenarios/m.sql")),
    ("X", include_str!("scenarios/x.sql")),
    ("R", include_str!("scenarios/r.sql")),
    ("K", include_str!("scenarios/k.sql")),
    ("t0", include_str!("scenarios/t0.sql")),
    ("pl", include_str!("scenarios/pl.sql")),
    ("pf0", include_str!("scenarios/pf0.sql")),
    ("pf1", include_str!("scenarios/pf1.sql")),
    ("pp", include_str!("scenarios/pp.sql")),
];

#[derive(Clone, Debug, PartialEq)]
enum Target {
    Coordinator,
    Shard(String),
    Query,
    Knobs,
    /// Queries for tests/sql_corpus.rs, which reads them itself.
    Corpus,
}

/// One section: where its text runs, and the file line its text starts on.
#[derive(Clone, Debug)]
struct Section {
    target: Target,
    first_line: usize,
    text: String,
}

fn sections(text: &str) -> Result<Vec<Section>, FrontError> {
    let mut out = vec![Section { target: Target::Coordinator, first_line: 1, text: String::new() }];
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        let trimmed = line.trim();
        if let Some(marker) = trimmed.strip_prefix("--").map(str::trim).and_then(|m| m.strip_prefix('@')) {
            let mut words = marker.split_whitespace();
            let target = match (words.next(), words.next(), words.next()) {
                (Some("coordinator"), None, _) => Target::Coordinator,
                (Some("shard"), Some(name), None) => Target::Shard(name.to_lowercase()),
                (Some("query"), None, _) => Target::Query,
                (Some("knobs"), None, _) => Target::Knobs,
                (Some("corpus"), None, _) => Target::Corpus,
                _ => {
                    return Err(FrontError::new(
                        format!("unknown section marker \"{trimmed}\" (expected -- @coordinator, -- @shard NAME, -- @query, -- @knobs or -- @corpus)"),
                        lineno,
                        1,
                    ))
                }
            };
            out.push(Section { target, first_line: lineno + 1, text: String::new() });
            continue;
        }
        let s = out.last_mut().expect("there is always a section");
        s.text.push_str(line);
        s.text.push('\n');
    }
    let queries = out.iter().filter(|s| s.target == Target::Query).count();
    if queries > 1 {
        return Err(FrontError::new("more than one -- @query section", 0, 0));
    }
    Ok(out)
}

/// The setup sections as (node, statements), in file order: what a test runs on real
/// PostgreSQL clusters (`coordinator` or a shard's name) to compare with the sandbox.
pub fn setup_statements(text: &str) -> Result<Vec<(String, Vec<super::statement::Located>)>, FrontError> {
    let mut out = Vec::new();
    for s in sections(text)? {
        let node = match s.target {
            Target::Coordinator => "coordinator".to_string(),
            Target::Shard(name) => name,
            Target::Query | Target::Knobs | Target::Corpus => continue,
        };
        out.push((node, parse_statements(&s.text, s.first_line)?));
    }
    Ok(out)
}

/// The query section: the text as it runs (variables substituted) and its parse.
#[derive(Clone, Debug)]
pub struct QueryText {
    /// The query as written, padded with newlines so that positions are the file's.
    pub padded: String,
    /// The query with `:name` replaced, as it runs (no padding).
    pub sql: String,
    pub explain: Option<ExplainFlags>,
    /// Where the query's statement starts (line, column of the file).
    pub at: (usize, usize),
    pub variables: Vec<(String, i64)>,
    pub first_line: usize,
}

/// A scenario file, run: the databases it built and its query.
#[derive(Clone, Debug)]
pub struct SqlScenario {
    pub cluster: Cluster,
    pub query: Option<QueryText>,
    pub knobs: Knobs,
    /// One line per setup statement run (`CREATE TABLE`, `INSERT 0 100000`, …).
    pub log: Vec<String>,
}

impl SqlScenario {
    /// Runs the setup sections of `text` and parses its query.
    pub fn load(text: &str) -> Result<SqlScenario, FrontError> {
        Self::load_limited(text, super::catalog::MAX_ROWS)
    }

    /// `load`, inserting at most `max_rows` rows in all (the fuzz test's small worlds).
    pub fn load_limited(text: &str, max_rows: usize) -> Result<SqlScenario, FrontError> {
        let mut load = SqlLoad::new(text, Limits { rows: max_rows, ..Limits::SANDBOX })?;
        while !load.advance(usize::MAX)? {}
        load.finish()
    }

    /// The same databases with another query: `text` is what a `-- @query` section
    /// holds (`\set` lines, then one SELECT or EXPLAIN SELECT), its lines counted from 1.
    /// The setup is not run again (its catalog and rows are cloned), so many queries
    /// can be planned and run against one loaded scenario (tests/sql_corpus.rs).
    pub fn with_query(&self, text: &str) -> Result<SqlScenario, FrontError> {
        let mut s = self.clone();
        s.query = Some(query_text(text, 1)?);
        Ok(s)
    }

    /// Plans the query section's query. Under `KeptSearches::run` (the page's
    /// planning in slices), its join searches are taken up where the last planning
    /// left them (`planner::KeptPlanning`).
    pub fn plan(&self) -> Result<Planned, FrontError> {
        let _kept = super::planner::KeptPlanning::open();
        let q = self.query.as_ref().ok_or_else(|| FrontError::new("the scenario has no -- @query section", 0, 0))?;
        let padded = format!("{}{}", "\n".repeat(q.first_line.saturating_sub(1)), q.sql);
        let stmts = parse_statements(&q.sql, q.first_line)?;
        let [st] = stmts.as_slice() else {
            return Err(FrontError::new("the query section must hold exactly one SELECT", q.first_line, 1));
        };
        let query = match &st.stmt {
            Stmt::Select(query) | Stmt::Explain { query, .. } => query,
            Stmt::Execute { name, args, .. } => return self.plan_execute(name, args, st.at),
            Stmt::Insert { .. } | Stmt::Update { .. } | Stmt::Delete { .. } => {
                return super::modifytable::plan_modify(self.cluster.coordinator(), &st.stmt, &padded, st.at)
            }
            Stmt::With { ctes, body } => {
                return super::cte::plan_with(self.cluster.coordinator(), ctes, body, &padded, st.at)
            }
            Stmt::ExplainModify { stmt, .. } => {
                if let Stmt::With { ctes, body } = stmt.as_ref() {
                    return super::cte::plan_with(self.cluster.coordinator(), ctes, body, &padded, st.at);
                }
                return super::modifytable::plan_modify(self.cluster.coordinator(), stmt, &padded, st.at);
            }
            _ => return Err(FrontError::at("the query section must hold a SELECT (or EXPLAIN SELECT)", st.at)),
        };
        // use_remote_estimate: planned again with the shards' EXPLAIN answers.
        super::remote_estimate::plan_with_remote_estimates(&self.cluster, &|| {
            plan_query(self.cluster.coordinator(), query, &padded)
        })
    }

    /// The plan of the query section's `EXECUTE name(args)`: the plan cache's choice
    /// for this execution, made on a copy of the statement (planning it again, for
    /// EXPLAIN or a run, chooses the same).
    fn plan_execute(&self, name: &str, args: &[sqlparser::ast::Expr], at: Location) -> Result<Planned, FrontError> {
        let coord = self.cluster.coordinator();
        let mut ps = super::prepared::lookup(coord, name, at)?.clone();
        let values = super::prepared::evaluate_params(&ps, args, at)?;
        Ok(super::prepared::get_cached_plan(&mut ps, coord, &values, at)?.planned)
    }

    /// Does the coordinator run Append's foreign children asynchronously
    /// (`enable_async_append`, on by default)?
    pub fn async_append(&self) -> bool {
        self.cluster.coordinator().setting_on("enable_async_append", true)
    }

    /// The executor's scenario: the plan, the coordinator's tables, and one simulated
    /// shard per server the plan reads. `overrides` (the CLI's or the page's knobs)
    /// win over the file's `-- @knobs`. An `EXPLAIN` without ANALYZE is refused: it
    /// plans the query without running it ([`SqlScenario::plan_only`] is its plan).
    pub fn scenario(&self, overrides: &Knobs, source: Source) -> Result<Scenario, FrontError> {
        self.check_runs()?;
        self.assemble(self.plan()?, overrides, source, &mut |_, t| Rc::clone(t))
    }

    /// [`SqlScenario::scenario`] from a plan the caller already has (`planned`, this
    /// scenario's [`SqlScenario::plan`]): for a caller that reads the plan itself first
    /// (tests/sql_corpus.rs, its order keys), so the query is not planned twice.
    pub fn scenario_planned(
        &self,
        planned: Planned,
        overrides: &Knobs,
        source: Source,
    ) -> Result<Scenario, FrontError> {
        self.check_runs()?;
        self.assemble(planned, overrides, source, &mut |_, t| Rc::clone(t))
    }

    /// The query's EXPLAIN options, if it is an EXPLAIN.
    pub fn explain_flags(&self) -> Option<ExplainFlags> {
        self.query.as_ref().and_then(|q| q.explain)
    }

    /// Is the query an EXPLAIN without ANALYZE (planned, never run)?
    pub fn is_plan_only(&self) -> bool {
        self.explain_flags().is_some_and(|f| !f.analyze)
    }

    /// What EXPLAIN prints around the plan for the query: its own options for an
    /// EXPLAIN; for a plain SELECT what the sandbox shows of it, EXPLAIN ANALYZE's.
    pub fn explain_doc(&self) -> ExplainDoc {
        self.explain_doc_costed(&|| self.estimates())
    }

    /// [`SqlScenario::explain_doc`] with the estimates of a plan the caller already has
    /// (`planned`, this scenario's [`SqlScenario::plan`]): the query is not planned
    /// again for its costs (tests/sql_corpus.rs plans each EXPLAIN once).
    pub fn explain_doc_planned(&self, planned: &Planned) -> ExplainDoc {
        self.explain_doc_costed(&|| self.estimates_of(planned))
    }

    fn explain_doc_costed(&self, estimates: &dyn Fn() -> Option<Vec<crate::plan::costsize::Estimate>>) -> ExplainDoc {
        match self.explain_flags() {
            Some(f) => ExplainDoc {
                analyze: f.analyze,
                summary: f.summary,
                costs: if f.costs { estimates() } else { None },
                settings: f.settings.then(|| {
                    super::settings::explain_settings(&|n| self.cluster.coordinator().setting(n).map(str::to_string))
                }),
            },
            None => ExplainDoc::ANALYZE,
        }
    }

    /// What EXPLAIN prints around a run of the query in `async_mode` (`pgasync sql`,
    /// the page): [`Self::explain_doc`], where a plain SELECT shows its estimates beside
    /// the actual figures when `costs` (COSTS is on by default in PostgreSQL's EXPLAIN
    /// ANALYZE; an EXPLAIN query's own COSTS decides for it), and SETTINGS lists the
    /// `enable_async_append` of the mode used, not only the file's SET.
    pub fn explain_doc_run(&self, costs: bool, async_mode: bool) -> ExplainDoc {
        let mut doc = match self.explain_flags() {
            Some(_) => self.explain_doc(),
            None => ExplainDoc { costs: if costs { self.estimates() } else { None }, ..ExplainDoc::ANALYZE },
        };
        if let Some(settings) = doc.settings.as_mut() {
            settings.retain(|(k, _)| k != "enable_async_append");
            if !async_mode {
                settings.push(("enable_async_append".into(), "off".into()));
                settings.sort();
            }
        }
        doc
    }

    /// How the page's EXPLAIN panel prints a run of the query, as `pgasync sql` prints
    /// it: the EXPLAIN's own options, or a plain SELECT's EXPLAIN (ANALYZE, VERBOSE)
    /// with its estimates.
    pub fn explain_statement(&self, async_mode: bool) -> crate::demo::session::ExplainStatement {
        let flags = self.explain_flags();
        crate::demo::session::ExplainStatement {
            verbose: flags.map_or(true, |f| f.verbose),
            timing: flags.map_or(true, |f| f.timing),
            json: flags.is_some_and(|f| f.json),
            doc: self.explain_doc_run(true, async_mode),
        }
    }

    /// The estimates of the query's plan (`plan::costsize`), one per node in executor
    /// order, with the coordinator's cost settings; None when it does not plan.
    pub fn estimates(&self) -> Option<Vec<crate::plan::costsize::Estimate>> {
        let planned = self.plan().ok()?;
        self.estimates_of(&planned)
    }

    /// [`SqlScenario::estimates`] of a plan the caller already has (this scenario's
    /// [`SqlScenario::plan`], or the same query's planned on another copy of it: the
    /// shards' EXPLAIN answers it was priced with are asked again where this copy
    /// lacks them, never priced locally instead); None when a shard cannot answer.
    pub fn estimates_of(&self, planned: &Planned) -> Option<Vec<crate::plan::costsize::Estimate>> {
        let coord = self.cluster.coordinator();
        let params = crate::plan::costsize::CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
        let estimates = super::remote_estimate::cost_with_answers(&self.cluster, &|| {
            crate::plan::costsize::cost_plan(&planned.plan, coord, &params)
        })
        .ok()?;
        Some(super::prepared::estimates_after_pruning(&planned.plan, &estimates))
    }

    /// A run is asked of a query that is an EXPLAIN without ANALYZE: PostgreSQL plans
    /// it without running it, so there is no run to show (the page and `pgasync sql`
    /// show its plan: [`SqlScenario::into_page_scenario`], [`SqlScenario::plan_only`]).
    fn check_runs(&self) -> Result<(), FrontError> {
        match &self.query {
            Some(q) if self.is_plan_only() => Err(FrontError::new(
                "EXPLAIN without ANALYZE plans the query without running it, so there is no run here: write \
                 EXPLAIN (ANALYZE) … or the SELECT alone (`pgasync sql` and the page's simulator show the plan of \
                 an EXPLAIN without ANALYZE)",
                q.at.0,
                q.at.1,
            )),
            _ => Ok(()),
        }
    }

    /// The plan of an EXPLAIN without ANALYZE, as EXPLAIN shows it: the executor's
    /// node tree initialized (ExecInit with `EXEC_FLAG_EXPLAIN_ONLY`: the plan's nodes
    /// open no connection) and never run. What planning sent is sent as PostgreSQL 15
    /// sends it: use_remote_estimate's EXPLAINs on connections opened for them (the
    /// session's set-up and START TRANSACTION first), then COMMIT TRANSACTION at the
    /// transaction's end (`pgfdw_xact_callback`); without them nothing is sent.
    /// `async_mode`: `enable_async_append` (or the caller's `--mode`).
    pub fn plan_only(&self, overrides: &Knobs, source: Source, async_mode: bool) -> Result<ExplainNode, FrontError> {
        Ok(self.plan_only_run(overrides, source, async_mode)?.explain())
    }

    /// [`SqlScenario::plan_only`]'s run, finished: the plan initialized and never
    /// called, the planning's statements sent and committed (for tests: the shards'
    /// statement logs and the trace hold that traffic, nothing else).
    pub fn plan_only_run(
        &self,
        overrides: &Knobs,
        source: Source,
        async_mode: bool,
    ) -> Result<crate::run::QueryRun, FrontError> {
        self.plan_only_run_planned(self.plan()?, overrides, source, async_mode)
    }

    /// [`SqlScenario::plan_only`] of a plan the caller already has (`planned`, this
    /// scenario's [`SqlScenario::plan`]), which is not made a second time.
    pub fn plan_only_planned(
        &self,
        planned: Planned,
        overrides: &Knobs,
        source: Source,
        async_mode: bool,
    ) -> Result<ExplainNode, FrontError> {
        Ok(self.plan_only_run_planned(planned, overrides, source, async_mode)?.explain())
    }

    fn plan_only_run_planned(
        &self,
        planned: Planned,
        overrides: &Knobs,
        source: Source,
        async_mode: bool,
    ) -> Result<crate::run::QueryRun, FrontError> {
        let scenario = self.assemble(planned, overrides, source, &mut |_, t| Rc::clone(t))?;
        let clock = crate::clock::Clock::virtual_clock();
        let mut run = scenario.start_explain_only(async_mode, clock, true).map_err(|m| FrontError::new(m, 0, 0))?;
        run.run_to_end().map_err(|e| FrontError::new(e.to_string(), 0, 0))?;
        Ok(run)
    }

    /// [`SqlScenario::scenario`], moving the tables' rows into the scenario instead of
    /// copying them (the page: a large file's rows are neither copied nor freed twice).
    pub fn into_scenario(self, overrides: &Knobs, source: Source) -> Result<Scenario, FrontError> {
        self.check_runs()?;
        self.into_scenario_unchecked(overrides, source)
    }

    /// The page's scenario (the rows moved, as [`SqlScenario::into_scenario`]), an
    /// EXPLAIN without ANALYZE's included: its session initializes the plan and never
    /// runs it (`DemoSession::with_explain` with a plan-only `ExplainStatement`, whose
    /// steps are what planning sent: [`SqlScenario::plan_only_run`]'s).
    pub fn into_page_scenario(self, overrides: &Knobs, source: Source) -> Result<Scenario, FrontError> {
        self.into_scenario_unchecked(overrides, source)
    }

    fn into_scenario_unchecked(mut self, overrides: &Knobs, source: Source) -> Result<Scenario, FrontError> {
        let planned = self.plan()?;
        let mut taken: std::collections::HashMap<(usize, String), Rc<Table>> = std::collections::HashMap::new();
        for (n, node) in self.cluster.nodes.iter_mut().enumerate() {
            for r in node.relations.iter_mut() {
                if let RelKind::Table(t) = &mut r.kind {
                    let empty = Rc::new(Table::new(&t.name, t.columns.clone()));
                    taken.insert((n, t.name.clone()), std::mem::replace(t, empty));
                }
            }
        }
        self.assemble(planned, overrides, source, &mut |n, t| {
            taken.remove(&(n, t.name.clone())).unwrap_or_else(|| Rc::clone(t))
        })
    }

    /// The scenario of `planned`, each table of node `n` given by `table(n, placeholder)`.
    fn assemble(
        &self,
        planned: Planned,
        overrides: &Knobs,
        source: Source,
        table: &mut dyn FnMut(usize, &Rc<Table>) -> Rc<Table>,
    ) -> Result<Scenario, FrontError> {
        let k = merge(&self.knobs, overrides);
        let coord = self.cluster.coordinator();
        let nservers = planned.servers.len().max(1);
        let mut settings = Settings::resolve(&k, (nservers, knobs::DEFAULT_ROWS, None), source)
            .map_err(|m| FrontError::new(m, 0, 0))?;
        // postgres_fdw's parallel_commit server option: the servers the plan reads
        // commit at once when every one of them says so (the knob, unless a knob says
        // otherwise); the sandbox commits all connections one way or the other.
        let commits: Vec<(&str, bool)> = planned
            .servers
            .iter()
            .filter_map(|n| coord.server(n))
            .map(|s| {
                (s.name.as_str(), s.option("parallel_commit").and_then(super::settings::parse_bool).unwrap_or(false))
            })
            .collect();
        if commits.iter().any(|c| c.1) {
            if let Some((name, _)) = commits.iter().find(|c| !c.1) {
                return Err(FrontError::unsupported(
                    format!(
                        "server option parallel_commit on some of the query's servers only (not on \"{name}\"): \
                         the sandbox commits every connection in parallel or none"
                    ),
                    Location { line: 0, column: 0 },
                ));
            }
            if k.parallel_commit.is_none() {
                settings.behaviour.parallel_commit = true;
            }
        }
        let mut local = Catalog::default();
        for r in &coord.relations {
            if let RelKind::Table(t) = &r.kind {
                local.add_shared(table(0, t));
            }
        }
        let mut servers = Vec::new();
        for (i, name) in planned.servers.iter().enumerate() {
            let server =
                coord.server(name).ok_or_else(|| FrontError::new(format!("server \"{name}\" does not exist"), 0, 0))?;
            let shard = self.cluster.node_index(name).ok_or_else(|| {
                FrontError::new(
                    format!("server \"{name}\" is not a shard of this scenario (add a section `-- @shard {name}`)"),
                    0,
                    0,
                )
            })?;
            let mut catalog = Catalog::default();
            for r in &self.cluster.nodes[shard].relations {
                if let RelKind::Table(t) = &r.kind {
                    catalog.add_shared(table(shard, t));
                }
            }
            let fetch_size = server.option("fetch_size").and_then(|v| v.parse().ok()).unwrap_or(settings.fetch_size);
            let async_capable = server.option("async_capable").and_then(super::settings::parse_bool).unwrap_or(false);
            let mut spec = settings.server(name, catalog, ServerOptions { async_capable, fetch_size }, i);
            spec.routines = self.cluster.nodes[shard].routines.clone();
            servers.push(spec);
        }
        super::remote_estimate::planning_explains(coord, &planned.servers, &mut servers)?;
        let params = crate::plan::costsize::CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
        let nodes = crate::plan::costsize::cost_plan_nodes(&planned.plan, coord, &params);
        let planner = crate::plan::costsize::PlannerFigures {
            nodes: super::prepared::estimates_after_pruning(&planned.plan, &nodes),
            params,
        };
        Ok(Scenario {
            id: "sql".into(),
            local,
            shards: servers.len(),
            servers,
            plan: planned.plan,
            sharing: None,
            reference: vec![],
            ordered: planned.order_key.is_some(),
            order_key: planned.order_key,
            behaviour: settings.behaviour,
            cost: settings.cost,
            planner,
        })
    }
}

/// A scenario file being loaded in slices: `advance(budget)` runs statements and
/// inserts rows until about `budget` units of work are done (a row inserted or sorted
/// into an index, a statement run), so the page can load a large file between frames.
/// The same statements run in the same order as [`SqlScenario::load`] (which is this,
/// with no budget), so the result and the first error are the same.
pub struct SqlLoad {
    sections: Vec<Section>,
    /// The section being run, and its statements once parsed (with the next one's index).
    section: usize,
    statements: Option<(usize, Vec<super::statement::Located>, usize)>,
    /// The INSERT in progress (its statement is `statements[next - 1]`) and the rows
    /// in all before it began.
    insert: Option<(InsertJob, usize)>,
    /// After the sections: the (node, relation) whose indexes are built next.
    indexes: Option<(usize, usize)>,
    cluster: Cluster,
    log: Vec<String>,
    query: Option<QueryText>,
    knobs: Knobs,
    done: bool,
}

impl SqlLoad {
    /// Checks the size and the section markers; runs nothing yet. The INSERTs will
    /// insert at most `limits` (rows and bytes) in all.
    pub fn new(text: &str, limits: Limits) -> Result<SqlLoad, FrontError> {
        if text.len() > MAX_SCRIPT_BYTES {
            return Err(FrontError::new(
                format!("the scenario is {} bytes; at most {MAX_SCRIPT_BYTES} are accepted", text.len()),
                0,
                0,
            ));
        }
        let sections = sections(text)?;
        let mut shards: Vec<String> = Vec::new();
        for s in &sections {
            if let Target::Shard(name) = &s.target {
                if !shards.contains(name) {
                    shards.push(name.clone());
                }
            }
        }
        let mut cluster = Cluster::new(&shards);
        cluster.limits = limits;
        Ok(SqlLoad {
            sections,
            section: 0,
            statements: None,
            insert: None,
            indexes: None,
            cluster,
            log: Vec::new(),
            query: None,
            knobs: Knobs::default(),
            done: false,
        })
    }

    /// Names the row limit in its messages ("more than N rows in all: too many for …").
    pub fn set_limit_name(&mut self, name: &'static str) {
        self.cluster.limit_name = name;
    }

    /// Rows inserted so far, in all.
    pub fn rows(&self) -> usize {
        self.cluster.total_rows
    }

    /// Bytes of the rows inserted so far ([`super::catalog::row_bytes`]).
    pub fn bytes(&self) -> usize {
        self.cluster.total_bytes
    }

    /// Whether every section has run and the indexes are built.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Runs about `budget` units of work; true when the whole file is loaded.
    pub fn advance(&mut self, budget: usize) -> Result<bool, FrontError> {
        self.advance_timed(budget, &mut || false)
    }

    /// `advance`, stopping early once `out_of_time()` says so (asked every few hundred
    /// rows: the page's clock; the core reads none).
    pub fn advance_timed(&mut self, budget: usize, out_of_time: &mut dyn FnMut() -> bool) -> Result<bool, FrontError> {
        let mut left = budget;
        while !self.done && left > 0 {
            left = left.saturating_sub(self.unit(left.min(256))?);
            if out_of_time() {
                break;
            }
        }
        Ok(self.done)
    }

    /// One piece of work of at most about `budget` units; returns the units it did.
    fn unit(&mut self, budget: usize) -> Result<usize, FrontError> {
        // An INSERT in progress: more of its rows.
        if let Some((job, before)) = &mut self.insert {
            let from = job.inserted;
            let finished = self.cluster.insert_some(job, budget)?;
            let did = job.inserted - from;
            if finished {
                let before = *before;
                self.insert = None;
                if let Some((node, stmts, next)) = &self.statements {
                    let name = &self.cluster.nodes[*node].name;
                    self.log.push(describe(name, &stmts[*next - 1].stmt, self.cluster.total_rows - before, None));
                }
            }
            return Ok(did.max(1));
        }
        // The indexes, a table at a time, once every section has run.
        if let Some((n, r)) = self.indexes {
            if n >= self.cluster.nodes.len() {
                self.indexes = None;
                self.done = true;
                return Ok(1);
            }
            if r >= self.cluster.nodes[n].relations.len() {
                self.indexes = Some((n + 1, 0));
                return Ok(1);
            }
            self.indexes = Some((n, r + 1));
            return Ok(self.cluster.rebuild_indexes_of(n, r).max(1));
        }
        // The next statement of the section being run.
        if let Some((node, stmts, next)) = &mut self.statements {
            let Some(st) = stmts.get(*next) else {
                self.statements = None;
                self.section += 1;
                return Ok(1);
            };
            *next += 1;
            let node = *node;
            let before = self.cluster.total_rows;
            match self.cluster.begin(node, st)? {
                Begun::Done(result) => {
                    let name = &self.cluster.nodes[node].name;
                    self.log.push(describe(name, &st.stmt, self.cluster.total_rows - before, result));
                }
                Begun::Insert(job) => self.insert = Some((job, before)),
            }
            return Ok(1);
        }
        // The next section.
        let Some(s) = self.sections.get(self.section) else {
            self.indexes = Some((0, 0));
            return Ok(1);
        };
        match &s.target {
            Target::Coordinator | Target::Shard(_) => {
                let node = match &s.target {
                    Target::Shard(name) => self
                        .cluster
                        .node_index(name)
                        .ok_or_else(|| FrontError::new(format!("no shard \"{name}\""), s.first_line, 1))?,
                    _ => 0,
                };
                let stmts = parse_statements(&s.text, s.first_line)?;
                self.statements = Some((node, stmts, 0));
                // Parsing a long section is work too.
                return Ok((s.text.len() / 64).max(1));
            }
            Target::Query => self.query = Some(query_text(&s.text, s.first_line)?),
            Target::Knobs => self.knobs = knob_lines(&s.text, s.first_line)?,
            // The corpus test's queries: not run by loading.
            Target::Corpus => {}
        }
        self.section += 1;
        Ok(1)
    }

    /// The loaded scenario (an error if `advance` has not reached the end).
    pub fn finish(self) -> Result<SqlScenario, FrontError> {
        if !self.done {
            return Err(FrontError::new("the scenario file is not loaded yet", 0, 0));
        }
        Ok(SqlScenario { cluster: self.cluster, query: self.query, knobs: self.knobs, log: self.log })
    }
}

/// The file's knobs with `over`'s given values on top.
fn merge(base: &Knobs, over: &Knobs) -> Knobs {
    let b = serde_json::to_value(base).unwrap_or_default();
    let o = serde_json::to_value(over).unwrap_or_default();
    let mut m = b.as_object().cloned().unwrap_or_default();
    if let Some(o) = o.as_object() {
        for (k, v) in o {
            if !v.is_null() {
                m.insert(k.clone(), v.clone());
            }
        }
    }
    serde_json::from_value(serde_json::Value::Object(m)).unwrap_or_else(|_| over.clone())
}

/// What psql would print for a statement, prefixed with the node it ran on.
fn describe(node: &str, s: &Stmt, rows: usize, result: Option<Vec<super::eval::Val>>) -> String {
    let tag = match s {
        Stmt::CreateTable { .. } | Stmt::CreatePartition { .. } => "CREATE TABLE".to_string(),
        Stmt::AttachPartition { .. } => "ALTER TABLE".into(),
        Stmt::CreateServer { .. } => "CREATE SERVER".into(),
        Stmt::Accepted(what) => what.to_string(),
        Stmt::Analyze { vacuum: true, .. } => "VACUUM".into(),
        Stmt::Analyze { .. } => "ANALYZE".into(),
        Stmt::CreateIndex { .. } => "CREATE INDEX".into(),
        Stmt::Insert { .. } => format!("INSERT 0 {rows}"),
        Stmt::Update { .. } => "UPDATE".into(),
        Stmt::Delete { .. } => {
            let n = result.and_then(|v| v.first().and_then(|x| x.datum.as_int())).unwrap_or(0);
            format!("DELETE {n}")
        }
        Stmt::Truncate(_) => "TRUNCATE TABLE".into(),
        Stmt::With { .. } => "WITH".into(),
        Stmt::Set { .. } => "SET".into(),
        Stmt::ResetAll => "RESET".into(),
        Stmt::AlterServer { .. } => "ALTER SERVER".into(),
        Stmt::AlterForeignTable { .. } => "ALTER FOREIGN TABLE".into(),
        Stmt::Select(_) => {
            let vals: Vec<String> = result.unwrap_or_default().iter().map(super::eval::text_of).collect();
            format!("SELECT 1 ({})", vals.join(", "))
        }
        Stmt::Explain { .. } | Stmt::ExplainModify { .. } | Stmt::Execute { explain: Some(_), .. } => "EXPLAIN".into(),
        Stmt::Prepare { .. } => "PREPARE".into(),
        Stmt::Execute { .. } => {
            "EXECUTE (planned and counted by the plan cache; a setup statement's rows are not computed)".into()
        }
        Stmt::Deallocate(_) => "DEALLOCATE".into(),
        Stmt::Routine(super::functioncmds::RoutineStmt::CreateFunction { .. }) => "CREATE FUNCTION".into(),
        Stmt::Routine(super::functioncmds::RoutineStmt::CreateOperator { .. }) => "CREATE OPERATOR".into(),
        Stmt::Routine(super::functioncmds::RoutineStmt::AddToExtension(_)) => "ALTER EXTENSION".into(),
    };
    format!("{node}: {tag}")
}

/// The query section: `\set` lines, then one statement.
fn query_text(text: &str, first_line: usize) -> Result<QueryText, FrontError> {
    let mut variables: Vec<(String, i64)> = Vec::new();
    let mut random = pgfuncs::PgRandom::new();
    random.setseed(0.0).map_err(|m| FrontError::new(m, first_line, 1))?;
    let mut sql = String::new();
    for (i, line) in text.lines().enumerate() {
        let lineno = first_line + i;
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("\\set") {
            let mut parts = rest.trim().splitn(2, char::is_whitespace);
            let name = parts.next().unwrap_or("").to_string();
            let expr = parts.next().unwrap_or("").trim();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(FrontError::new(format!("\\set needs a variable name, got \"{name}\""), lineno, 1));
            }
            let value = pgbench_value(expr, &mut random).map_err(|m| FrontError::new(m, lineno, 1))?;
            variables.retain(|(n, _)| *n != name);
            variables.push((name, value));
            sql.push('\n');
            continue;
        }
        if t.starts_with('\\') {
            return Err(FrontError::new(format!("unknown meta-command \"{t}\" (only \\set)"), lineno, 1));
        }
        sql.push_str(line);
        sql.push('\n');
    }
    let substituted = substitute(&sql, &variables, first_line)?;
    let stmts = parse_statements(&substituted, first_line)?;
    let (explain, at) = match stmts.as_slice() {
        [one] => match &one.stmt {
            Stmt::Explain { options, .. } => (Some(*options), one.at),
            Stmt::Execute { explain, .. } => (*explain, one.at),
            Stmt::Select(_) | Stmt::Insert { .. } | Stmt::Update { .. } | Stmt::Delete { .. } | Stmt::With { .. } => {
                (None, one.at)
            }
            Stmt::ExplainModify { options, .. } => (Some(*options), one.at),
            _ => return Err(FrontError::at(
                "the query section must hold a SELECT, an INSERT, an UPDATE, a DELETE, an EXECUTE or an EXPLAIN of one",
                one.at,
            )),
        },
        [] => return Err(FrontError::new("the query section is empty", first_line, 1)),
        [_, second, ..] => return Err(FrontError::at("the query section must hold exactly one statement", second.at)),
    };
    let padded = format!("{}{}", "\n".repeat(first_line.saturating_sub(1)), substituted);
    let at = (at.line as usize, at.column as usize);
    Ok(QueryText { padded, sql: substituted, explain, at, variables, first_line })
}

/// pgbench's `random(a, b)` or an integer.
fn pgbench_value(expr: &str, random: &mut pgfuncs::PgRandom) -> Result<i64, String> {
    if let Ok(v) = expr.parse::<i64>() {
        return Ok(v);
    }
    let inner = expr
        .strip_prefix("random(")
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("\\set supports an integer or random(a, b), got \"{expr}\""))?;
    let mut parts = inner.split(',').map(|p| p.trim().parse::<i64>());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Ok(a)), Some(Ok(b)), None) if a <= b => {
            // In i128: `b - a + 1` overflows i64 for random(0, 9223372036854775807).
            let span = (b as i128 - a as i128 + 1) as f64;
            let v = a as i128 + (random.random() * span).floor() as i128;
            Ok(v.min(b as i128) as i64)
        }
        _ => Err(format!("random(a, b) needs two integers with a <= b, got \"{expr}\"")),
    }
}

/// Replaces `:name` (not `::type`) by the variable's value.
fn substitute(sql: &str, vars: &[(String, i64)], first_line: usize) -> Result<String, FrontError> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    let mut line = first_line;
    let mut in_string = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
        }
        if c == '\'' {
            in_string = !in_string;
        }
        let starts_name = i + 1 < chars.len() && (chars[i + 1].is_ascii_alphabetic() || chars[i + 1] == '_');
        let after_colon = i > 0 && chars[i - 1] == ':';
        if c == ':' && !in_string && starts_name && !after_colon {
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            let name: String = chars[i + 1..j].iter().collect();
            let Some((_, v)) = vars.iter().find(|(n, _)| *n == name) else {
                return Err(FrontError::new(
                    format!("undefined variable \":{name}\" (define it with \\set {name} …)"),
                    line,
                    1,
                ));
            };
            out.push_str(&v.to_string());
            i = j;
            continue;
        }
        out.push(c);
        i += 1;
    }
    Ok(out)
}

/// `knob = value` lines (the wasm API's names: `rtt_ms`, `fetch_size`, …).
fn knob_lines(text: &str, first_line: usize) -> Result<Knobs, FrontError> {
    let mut k = Knobs::default();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with("--") || t.starts_with('#') {
            continue;
        }
        let Some((key, value)) = t.split_once('=') else {
            return Err(FrontError::new(format!("expected `knob = value`, got \"{t}\""), first_line + i, 1));
        };
        knobs::set_text(&mut k, Source::Json, key.trim(), value.trim())
            .map_err(|m| FrontError::new(m, first_line + i, 1))?;
    }
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table of every node, by name, with its rows and indexes.
    fn tables(c: &Cluster) -> Vec<(String, String, Vec<crate::types::Datum>, Vec<Vec<u32>>)> {
        let mut out = Vec::new();
        for node in &c.nodes {
            for r in &node.relations {
                if let RelKind::Table(t) = &r.kind {
                    let idx = t.indexes.iter().map(|i| i.order.clone()).collect();
                    out.push((node.name.clone(), r.name.clone(), t.data.clone(), idx));
                }
            }
        }
        out
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_load_in_slices_is_the_load_at_once() {
        for (id, text) in SCENARIO_FILES {
            let whole = SqlScenario::load(text).unwrap();
            let mut load = SqlLoad::new(text, Limits::SANDBOX).unwrap();
            let mut calls = 0;
            while !load.advance(997).unwrap() {
                calls += 1;
            }
            // Many slices: about one per 997 rows (K's file, 6,020 rows, takes six).
            assert!(calls >= whole.cluster.total_rows / 997 && calls >= 5, "{id}: {calls} slices");
            let sliced = load.finish().unwrap();
            assert_eq!(whole.log, sliced.log, "{id}");
            assert_eq!(whole.cluster.total_rows, sliced.cluster.total_rows, "{id}");
            assert!(tables(&whole.cluster) == tables(&sliced.cluster), "{id}: the same rows and indexes");
            assert_eq!(whole.query.map(|q| q.sql), sliced.query.map(|q| q.sql), "{id}");
        }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn into_scenario_moves_what_scenario_copies() {
        let data = |sc: &Scenario| {
            let mut out: Vec<(String, Vec<crate::types::Datum>)> =
                sc.local.tables.iter().map(|t| (format!("local {}", t.name), t.data.clone())).collect();
            for s in &sc.servers {
                out.extend(s.catalog.tables.iter().map(|t| (format!("{} {}", s.server.name, t.name), t.data.clone())));
            }
            out
        };
        for (id, text) in SCENARIO_FILES {
            let sql = SqlScenario::load(text).unwrap();
            let copied = sql.scenario(&Knobs::default(), Source::Json).unwrap();
            let moved = sql.into_scenario(&Knobs::default(), Source::Json).unwrap();
            assert!(data(&copied) == data(&moved), "{id}");
            assert!(data(&moved).iter().map(|(_, d)| d.len()).sum::<usize>() > 0, "{id}");
            assert_eq!(format!("{:?}", copied.plan), format!("{:?}", moved.plan), "{id}");
        }
    }

    fn rows(rows: usize) -> Limits {
        Limits { rows, ..Limits::SANDBOX }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_load_in_slices_stops_at_the_same_error() {
        let text = "-- @shard s1\ncreate table t (a int);\ninsert into t select i from generate_series(1, 5000) i;\n\
                    insert into t select i / (i - 4000) from generate_series(1, 5000) i;\n-- @query\nselect 1;\n";
        let whole = SqlScenario::load(text).unwrap_err();
        let mut load = SqlLoad::new(text, rows(1_000_000)).unwrap();
        let sliced = loop {
            match load.advance(100) {
                Ok(true) => panic!("loaded"),
                Ok(false) => {}
                Err(e) => break e,
            }
        };
        assert_eq!(whole, sliced);
        assert_eq!(sliced.line, 4);
        assert_eq!(load.rows(), 5000 + 3999, "the rows before the failing one were inserted");
        // The row limit, named.
        let mut small = SqlLoad::new(text, rows(6000)).unwrap();
        small.set_limit_name("the page");
        let e = loop {
            if let Err(e) = small.advance(100) {
                break e;
            }
        };
        assert_eq!((e.message.as_str(), e.line), ("more than 6000 rows in all: too many for the page", 4));
        let e = SqlLoad::new(text, rows(4000)).and_then(|mut l| l.advance(usize::MAX)).unwrap_err();
        assert_eq!((e.message.as_str(), e.line), ("generate_series of 5000 rows: more than the sandbox's 4000", 3));
        assert!(SqlLoad::new(text, rows(10)).unwrap().finish().is_err(), "not loaded yet: an error, no panic");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn variables_are_substituted_but_casts_are_not() {
        let vars = vec![("n".to_string(), 7)];
        assert_eq!(substitute("select :n::int, ':n'", &vars, 1).unwrap(), "select 7::int, ':n'");
        assert!(substitute("select :m", &vars, 1).is_err());
    }
}
