//! The run description, [`Scenario`]: the shards, servers, tables, plan, settings and
//! behaviour of one query run, and its one start, [`Scenario::start_on`]. The built-in
//! scenarios of SCENARIOS.md (the seeds' benchmarks) are functions that build one
//! (`Scenario::build(id, &knobs)`), with their data (generated tables they take from a
//! `TableStock`: made whole, or ahead in slices by the page, scenario/data.rs), a reference result computed
//! straight from the data, and the lower bound of the scenario's own model; a scenario
//! file builds one too (`coordinator_sql::SqlScenario`). The session, lessons, export,
//! the wasm API, the CLI, the live runs and the relay's `/sql/load` all consume it.
//!
//! Invariants:
//! - knobs are validated and resolved once, by [`Settings::resolve`]; nothing built from
//!   a `Settings` reads a `Knobs` again, and every default comes from `knobs.rs`;
//! - the behaviour knobs are applied to a run in one place, `start_on` (through
//!   `EState::set_behaviour`): no server option or connection carries a copy, so a
//!   run's behaviour is exactly `Scenario::behaviour` (once `pipeline` lived in
//!   `ServerOptions` too, and two copies could disagree);
//! - every run, simulated or live, starts in `start_on`, so what the page shows, what
//!   the CLI prints and what the tests check are the same run;
//! - [`live_targets`] is the one rule for where a run's servers are among the relay's
//!   targets (the CLI's `--live`, the page's Live…, "PostgreSQL says").
//!
//! PostgreSQL has no counterpart: this is the sandbox's own setup (in PostgreSQL, the
//! catalog and the planner make the plan and the servers' options come from
//! `CREATE SERVER`; a scenario file goes that way, the built-ins are written as plans).

use crate::behaviour::Behaviour;
use crate::clock::{Clock, CostModel};
use crate::executor::estate::{EState, RemoteCommand};
use crate::executor::{init_plan, InitContext};
use crate::host::sim::{LinkParams, SimHost};
use crate::host::Host;
use crate::knobs::{self, Knobs, Sharing, Source, MAX_TOTAL_ROWS};
use crate::plan::{
    AggCall, AggFunc, AggStrategy, Expr, ForeignScanPlan, Plan, RemoteQuery, RemoteTarget, ScanName, SortKey,
};
use crate::remote::{ForeignServer, Proto, QueryRole, ServerOptions};
use crate::run::QueryRun;
use crate::sim::{ServerCosts, ShardServer};
use crate::types::{Catalog, ColType, Column, Datum, Table};
use std::collections::BTreeMap;

mod data;
use data::{players_columns, t_columns};
pub use data::{Generated, TableStock};

/// The simulated shards' costs and the coordinator's cost model the knobs set (the
/// calibrated ones, `pgasync calibrate --live`); the defaults where they do not say.
fn costs_of(k: &Knobs) -> (ServerCosts, CostModel) {
    let ns = |us: f64| (us * 1000.0) as u64;
    let mut costs = ServerCosts::default();
    if let Some(us) = k.server_row_us {
        costs.server_row_ns = ns(us);
    }
    if let Some(us) = k.server_query_us {
        costs.server_query_ns = ns(us);
    }
    if let Some(ms) = k.connect_ms {
        costs.connect_ns = (ms * 1e6) as u64;
    }
    let mut cost = CostModel::default();
    if let Some(us) = k.coordinator_row_us {
        cost.foreign_row_ns = ns(us);
    }
    if let Some(us) = k.coordinator_answer_us {
        cost.message_ns = ns(us);
    }
    if let Some(us) = k.coordinator_async_us {
        cost.async_request_ns = ns(us);
    }
    (costs, cost)
}

/// `k` with the bench's rows per shard for scenario `id` when `k` does not say.
pub fn bench_size(id: &str, k: &Knobs) -> Knobs {
    let mut k = k.clone();
    if k.rows_per_shard.is_none() {
        k.rows_per_shard = scenario_info(id).ok().map(|s| s.bench_rows);
    }
    k
}

/// One built-in scenario: what the page lists, its defaults, and how it is built. The
/// one table of scenarios: `Scenario::build`, `total_rows`, the page (through the wasm
/// API) and `pgasync bench` all read it.
pub struct ScenarioInfo {
    pub id: &'static str,
    pub title: &'static str,
    pub explanation: &'static str,
    /// Shards and rows per shard when the knobs do not say: the page's and the CLI's
    /// (`explain`, `trace`, `sql`) default, [`knobs::DEFAULT_ROWS`] for every scenario, so the
    /// same command shows the same run everywhere.
    pub default_shards: usize,
    pub default_rows: usize,
    /// Rows per shard `pgasync bench` measures at when not told: large enough that the
    /// figures are the steady state the seeds measured, too many to step through.
    pub bench_rows: usize,
    /// Sharing when the knobs do not say (None: no foreign tables, sharing is moot).
    pub default_sharing: Option<Sharing>,
    /// The data is always on one shard, whatever `shards` says (C: one foreign table
    /// of four shards' rows; X: one foreign partition).
    pub one_shard: bool,
    /// Tables of `rows per shard` rows on each shard.
    pub tables_per_shard: usize,
    build: fn(&ScenarioInfo, &Knobs, &Settings, &mut TableStock) -> Result<Scenario, String>,
}

const fn info(
    id: &'static str,
    title: &'static str,
    explanation: &'static str,
    (default_shards, bench_rows, default_sharing): (usize, usize, Option<Sharing>),
    (one_shard, tables_per_shard): (bool, usize),
    build: fn(&ScenarioInfo, &Knobs, &Settings, &mut TableStock) -> Result<Scenario, String>,
) -> ScenarioInfo {
    ScenarioInfo {
        id,
        title,
        explanation,
        default_shards,
        default_rows: knobs::DEFAULT_ROWS,
        bench_rows,
        default_sharing,
        one_shard,
        tables_per_shard,
        build,
    }
}

const DEDICATED: Option<Sharing> = Some(Sharing::Dedicated);
const SHARED: Option<Sharing> = Some(Sharing::Shared);

pub const SCENARIOS: &[ScenarioInfo] = &[
    info("A", "SELECT sum(a) FROM t_local", "One local table: no async child, so the plain synchronous path runs (no regression).", (4, 100_000, None), (false, 1), build_local),
    info("B", "SELECT sum(a) FROM t_part", "A local partition per shard: Append with only synchronous children (must cost nothing extra).", (4, 100_000, None), (false, 1), build_local),
    info("C", "SELECT sum(a) FROM ft1", "One foreign table: only fetch-ahead can help (next FETCH in flight while a batch is consumed).", (1, 100_000, DEDICATED), (true, 4), build_foreign),
    info("D", "SELECT sum(a) FROM (ft1 UNION ALL … ftN)", "A foreign table per shard, all on one shared connection: one query in flight at a time, so little to overlap unless the pipeline knob is on.", (4, 100_000, SHARED), (false, 1), build_foreign),
    info("E", "SELECT sum(a) FROM (ft1 UNION ALL … ftN)", "A foreign table per shard, a dedicated connection each: the remote waits overlap, gain approaches 1 − 1/N.", (4, 100_000, DEDICATED), (false, 1), build_foreign),
    info("F", "SELECT sum(a) FROM t_part (foreign partitions)", "A foreign partition per shard, all on one shared connection (partitioned-table form of D).", (4, 100_000, SHARED), (false, 1), build_foreign),
    info("G", "SELECT sum(a) FROM t_part (foreign partitions)", "A foreign partition per shard, a dedicated connection each (partitioned-table form of E).", (4, 100_000, DEDICATED), (false, 1), build_foreign),
    info("pf1", "Append(4 × ForeignScan), dedicated connections", "The 2016 patch's pf1 benchmark: foreign children (four there) with their own connections.", (4, 100_000, DEDICATED), (false, 1), build_foreign),
    info("M", "SELECT * FROM players ORDER BY score DESC OFFSET o LIMIT l", "MergeAppend over foreign partitions (one per shard, two per server): PostgreSQL 15 reads them one after another; with async_merge_append, every partition is asked for its first row before MergeAppend waits (one FETCH in flight per connection, pendingAreq), then only the child whose row was consumed.", (4, 25_000, SHARED), (false, 1), build_merge),
    info("t0", "SELECT sum(a) FROM t_local (Kyotaro's t0)", "The 2016 patch's t0 benchmark: one local Seq Scan (two parallel workers there; no parallel query here): the synchronous path the async design must not slow down.", (4, 100_000, None), (false, 1), build_local),
    info("pl", "Append(4 × SeqScan) (Kyotaro's pl)", "The 2016 patch's pl benchmark: an Append of local Seq Scans, no async child: what the async machinery costs when there is nothing to overlap.", (4, 100_000, None), (false, 1), build_local),
    info("pf0", "Append(4 × ForeignScan), one connection (Kyotaro's pf0)", "The 2016 patch's pf0 benchmark: foreign children all on one connection: one query in flight at a time (pendingAreq).", (4, 100_000, SHARED), (false, 1), build_foreign),
    info("R", "Append over 4 × Hash Join(Foreign Scan, Hash(Seq Scan))", "Robert Haas's plan (seed 000): each foreign table on its own server joined to a local table. PostgreSQL 15 runs the joins one after another (no Async under a join); with async_through_nodes, Append asks each Hash Join, which asks its Foreign Scan, so the four remote waits overlap. Benchmarked at 50,000 rows per shard (its file fits the page).", (4, 50_000, DEDICATED), (false, 2), build_join),
    info("H", "Append over a Foreign Scan and a Hash Join (Amit's hazard)", "Amit Khandekar's case (seed 000): while the Hash Join waits for its Foreign Scan b, the Foreign Scan a of the other subtree is ready. Safe in every design but one: with no_descendant_check (teaching only) the wait covers a too, and Append is re-entered while it executes its child Hash Join — the run stops with that error.", (2, 100_000, DEDICATED), (false, 2), build_join),
    info("K", "Nested Loop over two Appends of Foreign Scans", "Kyotaro Horiguchi's example (seed 000): a Nested Loop whose outer side is an Append of foreign key tables (10 keys each, the first half of the servers) and whose inner side a Materialize over an Append of foreign tables (the other half; with one shard both on it), replayed for each outer row. PostgreSQL 15 starts the inner side only after the first outer row; with async_through_nodes, Nested Loop starts it while the outer side waits, so every foreign scan of both Appends is in flight at once. Benchmarked at 3,000 rows per inner shard: every outer key joins each inner row of its value.", (4, 3_000, DEDICATED), (false, 1), build_nestloop),
    info("X", "SELECT a, count(*) FROM pt GROUP BY a", "One foreign and one local partition, partitionwise aggregate: the local aggregate runs while the remote one is in flight.", (1, 100_000, DEDICATED), (true, 2), build_partitionwise),
];

/// The built-in scenario `id`, or an error that lists them.
/// The relay target each of a run's servers is reached through, in `pgasync demo`'s
/// layout — the one rule the demo places data by and every live run (the CLI's
/// `--live`, the page's Live…, `/sql/load`'s files) connects by:
/// * a server named after a target is on it (E's `s1`…`s4`, seed 003's `s2` and `s3`, a
///   scenario file's servers);
/// * any other server is on the shard target at its position, round the shard targets
///   in order `s1`, `s2`, … (X's `server1` is on `s1`).
///
/// `targets` are the relay's names; `coordinator` is not a shard.
pub fn live_targets(servers: &[String], targets: &[String]) -> Result<Vec<String>, String> {
    let mut shards: Vec<&String> = targets.iter().filter(|t| *t != "coordinator").collect();
    // Natural order: s2 before s10.
    crate::types::sort_short_by_key(&mut shards, |t| {
        let digits = t.trim_start_matches(|c: char| !c.is_ascii_digit());
        (t.len() - digits.len(), t[..t.len() - digits.len()].to_string(), digits.parse::<u64>().unwrap_or(0))
    });
    if shards.is_empty() && !servers.is_empty() {
        return Err("the relay has no shard targets".into());
    }
    Ok(servers
        .iter()
        .enumerate()
        .map(|(k, name)| if targets.contains(name) { name.clone() } else { shards[k % shards.len()].clone() })
        .collect())
}

pub fn scenario_info(id: &str) -> Result<&'static ScenarioInfo, String> {
    SCENARIOS.iter().find(|s| s.id == id).ok_or_else(|| {
        let ids: Vec<&str> = SCENARIOS.iter().map(|s| s.id).collect();
        format!("unknown scenario \"{id}\" (built-in: {})", ids.join(", "))
    })
}

/// One foreign server of a scenario, with the simulated shard behind it.
#[derive(Clone)]
pub struct ServerSpec {
    pub server: ForeignServer,
    pub catalog: Catalog,
    pub link: LinkParams,
    pub costs: ServerCosts,
    /// The shard's own functions and operators (`CREATE OPERATOR` in its `-- @shard`
    /// section): what it runs when the coordinator sends them (`extensions`).
    pub routines: crate::shard_sql::inline::Routines,
    /// use_remote_estimate: the EXPLAINs the planner sent this server, which the run
    /// sends before ExecInit (`planning_explains`), and the simulated shard's answers.
    pub planning: Vec<PlanningExplain>,
}

/// One EXPLAIN sent at planning (postgres_fdw's `get_remote_estimate`).
#[derive(Clone, Debug, PartialEq)]
pub struct PlanningExplain {
    /// Its place among all the planning's EXPLAINs, on every server.
    pub order: usize,
    /// The statement (`EXPLAIN SELECT …`).
    pub statement: String,
    /// The top line the simulated shard answers (what the planner priced with).
    pub answer: String,
}

/// The planning's EXPLAINs, in the order PostgreSQL sends them, queued on the run's
/// connections before ExecInit: a connection is set up (and its transaction begun)
/// at its first EXPLAIN, as `GetConnection` does when the planner first needs it;
/// ExecInit then finds it open. With `pipelined_setup` the set-up rides in front of
/// the first EXPLAIN.
fn queue_planning_explains(servers: &[ServerSpec], es: &mut EState) {
    let mut all: Vec<(usize, usize, &str)> = servers
        .iter()
        .enumerate()
        .flat_map(|(k, s)| s.planning.iter().map(move |p| (p.order, k, p.statement.as_str())))
        .collect();
    crate::types::sort_short_by_key(&mut all, |e| e.0);
    let mut prefixed = vec![];
    for (_, conn, statement) in all {
        es.get_connection(conn);
        // The queued EXPLAINs are not written yet (xact_open is still false): the
        // set-up goes in front of the first one only.
        let prefix = if prefixed.contains(&conn) { String::new() } else { es.session_prefix(conn) };
        prefixed.push(conn);
        let sql = format!("{prefix}{statement}");
        let statement = Some((Proto::Simple, sql, QueryRole::InTransaction));
        es.remote_commands.push_back(RemoteCommand { conn, statement, owner: None });
    }
}

/// Cloning is cheap: the tables are shared (`Rc`).
#[derive(Clone)]
pub struct Scenario {
    pub id: String,
    pub local: Catalog,
    pub servers: Vec<ServerSpec>,
    pub plan: Plan,
    pub sharing: Option<Sharing>,
    pub shards: usize,
    /// The rows the query must return, computed straight from the generated data.
    pub reference: Vec<Vec<Datum>>,
    /// Whether the order of rows is part of the result (M).
    pub ordered: bool,
    /// The column the result is ordered by, if any.
    pub order_key: Option<usize>,
    /// PostgreSQL 15's behaviour or the knobs that depart from it.
    pub behaviour: Behaviour,
    /// The coordinator's cost model (the `coordinator_*` knobs change it).
    pub cost: CostModel,
    /// The planner's figures for each node (estimate, output types) and its settings
    /// (a SQL scenario's; empty for the built-in ones): a Sort and a Hash size their
    /// tuples and tables with them, as PostgreSQL's executor does.
    pub planner: crate::plan::costsize::PlannerFigures,
}

/// The scan's target list when the query needs only `a` (as PostgreSQL's planner
/// gives the scan only the columns its parent uses).
fn a_column() -> Vec<Column> {
    vec![Column::new("a", ColType::Int)]
}

fn sum_a_plan(input: Plan) -> Plan {
    Plan::Agg {
        child: Box::new(input),
        strategy: AggStrategy::Plain,
        group_by: vec![],
        aggs: vec![AggCall { func: AggFunc::Sum, arg: Some(Expr::Col(0)), distinct: false }],
        split: crate::plan::AggSplit::Simple,
    }
}

/// The EXPLAIN name of partition `k` (0-based) of `parent` under an Append over its
/// partitions, as PostgreSQL names it (`t_part_1`, …).
fn member_of(parent: &str, k: usize) -> Option<ScanName> {
    Some(ScanName {
        alias: format!("{parent}_{}", k + 1),
        parent: Some(parent.to_string()),
        member: true,
        tlist: None,
        direct: false,
        alone: false,
        unqualified: false,
    })
}

fn foreign_scan_a(relation: &str, server: &str, remote_table: &str) -> Plan {
    Plan::ForeignScan(ForeignScanPlan {
        relation: relation.to_string(),
        server: server.to_string(),
        remote: RemoteQuery::scan(remote_table, t_columns(), &[0]),
        alias: None,
    })
}

/// The knobs of one run, validated once (`knobs::validate`) and resolved with every
/// default filled in: what a run description is built from, for the built-in
/// scenarios ([`Scenario::build_from`]) and for scenario files
/// (`coordinator_sql::script`) alike. Nothing downstream reads a `Knobs` again.
#[derive(Clone, Debug)]
pub struct Settings {
    pub shards: usize,
    pub rows: usize,
    /// postgres_fdw's `fetch_size` where a server's own options do not say.
    pub fetch_size: usize,
    /// Each shard's round trip; shards past the list take `rtt`.
    rtts: Vec<u64>,
    rtt: u64,
    bandwidth_bps: u64,
    pub costs: ServerCosts,
    pub cost: CostModel,
    pub sharing: Option<Sharing>,
    /// The behaviour knobs: applied to a run in one place, [`Scenario::start_on`].
    pub behaviour: Behaviour,
}

impl Settings {
    /// `k`, validated (messages name knobs as `source` spells them), with the defaults
    /// of a run of `default_shards` shards of `default_rows` rows.
    pub fn resolve(
        k: &Knobs,
        (default_shards, default_rows, default_sharing): (usize, usize, Option<Sharing>),
        source: Source,
    ) -> Result<Settings, String> {
        knobs::validate(k, default_shards, source)?;
        let shards = k.shards.unwrap_or(default_shards);
        let rtt = (k.rtt_ms.unwrap_or(knobs::DEFAULT_RTT_MS) * 1e6) as u64;
        let rtts = match &k.rtt_ms_per_shard {
            Some(per) => per.iter().map(|r| (r * 1e6) as u64).collect(),
            None => vec![rtt; shards],
        };
        let (costs, cost) = costs_of(k);
        Ok(Settings {
            shards,
            rows: k.rows_per_shard.unwrap_or(default_rows),
            fetch_size: k.fetch_size.unwrap_or(knobs::DEFAULT_FETCH_SIZE),
            rtts,
            rtt,
            bandwidth_bps: (k.bandwidth_mbps.unwrap_or(knobs::DEFAULT_BANDWIDTH_MBPS) * 125_000.0) as u64,
            costs,
            cost,
            sharing: default_sharing.map(|default| k.sharing.unwrap_or(default)),
            behaviour: k.resolve_behaviour(),
        })
    }

    /// The simulated network between the coordinator and shard `k` (0-based).
    pub fn link(&self, k: usize) -> LinkParams {
        LinkParams { rtt_ns: self.rtts.get(k).copied().unwrap_or(self.rtt), bandwidth_bps: self.bandwidth_bps }
    }

    /// Server `name` on shard `k`, holding `catalog`, with postgres_fdw's `options`.
    pub fn server(&self, name: &str, catalog: Catalog, options: ServerOptions, k: usize) -> ServerSpec {
        ServerSpec {
            server: ForeignServer { name: name.into(), options },
            catalog,
            link: self.link(k),
            costs: self.costs.clone(),
            routines: Default::default(),
            planning: vec![],
        }
    }
}

impl ScenarioInfo {
    /// Validates `k` (messages name knobs as `source` spells them) and fills in this
    /// scenario's defaults.
    pub fn settings(&self, k: &Knobs, source: Source) -> Result<Settings, String> {
        Settings::resolve(k, (self.default_shards, self.default_rows, self.default_sharing), source)
    }

    /// How many rows the tables will hold.
    fn rows_in_all(&self, s: &Settings) -> usize {
        let shards = if self.one_shard { 1 } else { s.shards };
        shards.saturating_mul(s.rows).saturating_mul(self.tables_per_shard)
    }
}

impl Scenario {
    /// Builds a built-in scenario. Unknown ids and out-of-range knobs are errors, whose
    /// messages name knobs as the wasm API does (`fetch_size=0: out of range …`).
    pub fn build(id: &str, knobs: &Knobs) -> Result<Scenario, String> {
        Self::build_from(id, knobs, Source::Json)
    }

    /// `build`, with messages that name knobs as `source` spells them (`--fetch-size 0`).
    pub fn build_from(id: &str, knobs: &Knobs, source: Source) -> Result<Scenario, String> {
        Self::build_with(id, knobs, source, &mut TableStock::on_demand())
    }

    /// `build_from`, its generated tables taken from `stock` (made there ahead, in
    /// slices: [`Scenario::stock_for`]).
    pub fn build_with(id: &str, knobs: &Knobs, source: Source, stock: &mut TableStock) -> Result<Scenario, String> {
        let info = scenario_info(id)?;
        let s = Self::check_info(info, knobs, source)?;
        (info.build)(info, knobs, &s, stock)
    }

    /// The stock of the tables a build of `id` at `knobs` generates, none made yet:
    /// fill it with [`TableStock::make`], a slice at a time, then [`Scenario::build_with`]
    /// it (the page's way, scenario/data.rs). The build runs once on empty tables to
    /// list them.
    pub fn stock_for(id: &str, knobs: &Knobs, source: Source) -> Result<TableStock, String> {
        let mut listing = TableStock::listing();
        Self::build_with(id, knobs, source, &mut listing)?;
        Ok(listing.into_planned())
    }

    /// Everything `build_from` checks, without generating the data.
    pub fn check(id: &str, knobs: &Knobs, source: Source) -> Result<(), String> {
        Self::check_info(scenario_info(id)?, knobs, source).map(|_| ())
    }

    fn check_info(info: &ScenarioInfo, knobs: &Knobs, source: Source) -> Result<Settings, String> {
        let s = info.settings(knobs, source)?;
        let rows = info.rows_in_all(&s);
        if rows > MAX_TOTAL_ROWS {
            let name = |k: &str| knobs::spec(Source::Json, k).expect("a knob").named(source);
            return Err(format!(
                "{rows} rows in all is too many (at most {MAX_TOTAL_ROWS}): lower {} or {}",
                name("rows_per_shard"),
                name("shards")
            ));
        }
        Ok(s)
    }

    /// How many rows the scenario's tables will hold, without building them.
    pub fn total_rows(id: &str, knobs: &Knobs) -> Result<usize, String> {
        let info = scenario_info(id)?;
        Ok(info.rows_in_all(&info.settings(knobs, Source::Json)?))
    }

    /// Does a result equal the reference? Without ORDER BY, as multisets. With it (M),
    /// the sort key must come in the same order; rows with equal keys may come in any
    /// order (SQL leaves ties unordered), so each row must be one of the reference's
    /// rows with that key, compared as multisets.
    pub fn matches_reference(&self, rows: &[Vec<Datum>]) -> bool {
        let mut a = rows.to_vec();
        let mut b = self.reference.clone();
        if let Some(k) = self.order_key {
            let keys = |v: &[Vec<Datum>]| v.iter().map(|r| r[k].clone()).collect::<Vec<_>>();
            if keys(&a) != keys(&b) {
                return false;
            }
            // Only groups of ties entirely inside the window are comparable row by row.
            let first = b.first().map(|r| r[k].clone());
            let last = b.last().map(|r| r[k].clone());
            a.retain(|r| Some(&r[k]) != first.as_ref() && Some(&r[k]) != last.as_ref());
            b.retain(|r| Some(&r[k]) != first.as_ref() && Some(&r[k]) != last.as_ref());
        }
        crate::types::sorted_rows(a) == crate::types::sorted_rows(b)
    }

    /// Starts a run: async mode honours `async_capable`, sync mode ignores it.
    pub fn start(&self, async_mode: bool, clock: Clock, trace: bool) -> Result<QueryRun, String> {
        self.start_as(async_mode, clock, trace, false)
    }

    /// EXPLAIN without ANALYZE on the simulated shards: ExecInit with
    /// `EXEC_FLAG_EXPLAIN_ONLY` (no connection opened by the plan's nodes), the
    /// planning's EXPLAINs sent on their connections as a run sends them, then the
    /// COMMIT at the transaction's end; the plan is never run.
    pub fn start_explain_only(&self, async_mode: bool, clock: Clock, trace: bool) -> Result<QueryRun, String> {
        self.start_as(async_mode, clock, trace, true)
    }

    fn start_as(&self, async_mode: bool, clock: Clock, trace: bool, explain_only: bool) -> Result<QueryRun, String> {
        let shards = self
            .servers
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut srv = ShardServer::new(&s.server.name, s.catalog.clone(), 1000 + i as i32);
                srv.costs = s.costs.clone();
                srv.routines = s.routines.clone();
                srv.explain_answers = s.planning.iter().map(|p| (p.statement.clone(), p.answer.clone())).collect();
                srv
            })
            .collect();
        let host = SimHost::new(shards, self.servers.iter().map(|s| s.link).collect());
        self.start_on_as(host, (async_mode, explain_only), clock, trace)
    }

    /// The one start of a run of this scenario, on any host (the simulated shards of
    /// [`Scenario::start`], real ones over TCP or WebSockets, which hold the scenario's
    /// data): ExecInit with the scenario's servers, behaviour and cost model.
    pub fn start_on<H: Host>(
        &self,
        host: H,
        async_mode: bool,
        clock: Clock,
        trace: bool,
    ) -> Result<QueryRun<H>, String> {
        self.start_on_as(host, (async_mode, false), clock, trace)
    }

    /// [`Scenario::start_on`]; `explain_only`: ExecInit for an EXPLAIN without ANALYZE.
    fn start_on_as<H: Host>(
        &self,
        host: H,
        (async_mode, explain_only): (bool, bool),
        clock: Clock,
        trace: bool,
    ) -> Result<QueryRun<H>, String> {
        let servers: Vec<ForeignServer> = self.servers.iter().map(|s| s.server.clone()).collect();
        let mut es = EState::new(clock, servers, async_mode, trace);
        es.explain_only = explain_only;
        es.set_behaviour(self.behaviour);
        es.cost = self.cost.clone();
        es.planner = self.planner.clone();
        queue_planning_explains(&self.servers, &mut es);
        let root = init_plan(&self.plan, &InitContext { catalog: &self.local }, &mut es)?;
        Ok(QueryRun::new(es, root, host, self.plan.output_columns()))
    }

    /// Lower bound of the scenario's own model for an async run, from a finished sync
    /// run's resource use: the local CPU, and per connection its irreducible time —
    /// one round trip per FETCH plus the COMMIT (the scans' chains side by side when
    /// pipelined), the
    /// server's time to run the FETCHes and the time to transfer their rows.
    pub fn lower_bound_ns(&self, sync_run: &QueryRun) -> u64 {
        let local = sync_run.es.clock.cpu_ns();
        let params = sync_run.host.link_params();
        let conn_bound = sync_run
            .host
            .link_stats()
            .iter()
            .zip(params)
            .zip(&self.servers)
            .map(|((st, p), spec)| {
                // Each scan's FETCHes follow one another (the next is sent when a
                // batch arrives, at best); with `pipeline` the scans sharing the
                // connection run their chains side by side.
                let scans = spec.catalog.tables.len().max(1) as u64;
                // A pipelined set-up still waits for its backend to start, on each
                // connection at once (the serial set-up below counts it otherwise).
                let connect = if self.behaviour.pipelined_setup { spec.costs.connect_ns } else { 0 };
                if st.queries == 0 {
                    0
                } else if self.behaviour.pipeline && scans > 1 {
                    let chain = (st.fetches.div_ceil(scans) + 1) * p.rtt_ns;
                    connect + chain.max(st.fetch_server_ns).max(st.fetch_down_transfer_ns)
                } else {
                    connect + (st.fetches + 1) * p.rtt_ns + st.fetch_server_ns + st.fetch_down_transfer_ns
                }
            })
            .max()
            .unwrap_or(0);
        // What PostgreSQL 15 does server after server (GetConnection's set-up at
        // ExecInit; CLOSE at ExecEnd and COMMIT at transaction end) no async plan can
        // overlap: it counts whole, as the sync run spent it, unless a knob does it on
        // every connection at once (pipelined_setup, parallel_close, parallel_commit).
        let (setup, close, commit) = sync_run.setup_close_commit_ns();
        let serial = if self.behaviour.pipelined_setup { 0 } else { setup }
            + if self.behaviour.parallel_close { 0 } else { close }
            + if self.behaviour.parallel_commit { 0 } else { commit };
        local.max(conn_bound) + serial
    }
}

/// A server with the scenario's fetch size, async-capable (as the seeds' scripts set it).
fn server_spec(name: &str, catalog: Catalog, s: &Settings, k: usize) -> ServerSpec {
    s.server(name, catalog, ServerOptions { async_capable: true, fetch_size: s.fetch_size }, k)
}

fn sum_reference(tables: &[&Table]) -> Vec<Vec<Datum>> {
    let rows: usize = tables.iter().map(|t| t.nrows()).sum();
    if rows == 0 {
        return vec![vec![Datum::Null]];
    }
    let sum: i64 = tables.iter().flat_map(|t| (0..t.nrows()).map(move |i| t.row(i)[0].as_int().unwrap())).sum();
    vec![vec![Datum::Int(sum)]]
}

fn build_local(info: &ScenarioInfo, _knobs: &Knobs, s: &Settings, stock: &mut TableStock) -> Result<Scenario, String> {
    let id = info.id;
    let mut local = Catalog::default();
    let plan = if id == "A" || id == "t0" {
        let t = stock.table(Generated::T { name: "t_local".into(), shard: 0, rows: s.rows * s.shards });
        local.add(t);
        sum_a_plan(Plan::SeqScan { table: "t_local".into(), columns: a_column(), alias: None })
    } else {
        let mut children = vec![];
        for k in 0..s.shards {
            let name = format!("t_p{}", k + 1);
            local.add(stock.table(Generated::T { name: name.clone(), shard: k, rows: s.rows }));
            children.push(Plan::SeqScan { table: name, columns: a_column(), alias: member_of("t_part", k) });
        }
        sum_a_plan(Plan::Append { children, prune: None, ordered: false })
    };
    let tables: Vec<&Table> = local.tables.iter().map(|t| t.as_ref()).collect();
    let reference = sum_reference(&tables);
    Ok(Scenario {
        id: id.into(),
        local,
        servers: vec![],
        plan,
        sharing: None,
        shards: s.shards,
        reference,
        ordered: false,
        order_key: None,
        behaviour: s.behaviour,
        cost: s.cost.clone(),
        planner: Default::default(),
    })
}

fn build_foreign(
    info: &ScenarioInfo,
    _knobs: &Knobs,
    s: &Settings,
    stock: &mut TableStock,
) -> Result<Scenario, String> {
    let id = info.id;
    let (shards, rows) = if info.one_shard { (1, s.rows * info.tables_per_shard) } else { (s.shards, s.rows) };
    let sharing = s.sharing.unwrap_or(Sharing::Dedicated);
    let (remote_prefix, local_prefix) = match id {
        "C" => ("t", "ft"),
        "D" | "E" => ("t", "ft"),
        "F" | "G" => ("t_p", "t_p"),
        _ => ("t", "pf"),
    };
    let mut servers: Vec<ServerSpec> = vec![];
    let mut children = vec![];
    for k in 0..shards {
        let remote = format!("{remote_prefix}{}", k + 1);
        let table = stock.table(Generated::T { name: remote.clone(), shard: k, rows });
        let server = match sharing {
            Sharing::Dedicated => format!("s{}", k + 1),
            _ => "s1".to_string(),
        };
        match servers.iter_mut().find(|x| x.server.name == server) {
            Some(spec) => spec.catalog.add(table),
            None => {
                let mut cat = Catalog::default();
                cat.add(table);
                servers.push(server_spec(&server, cat, s, k));
            }
        }
        let mut scan = foreign_scan_a(&format!("{local_prefix}{}", k + 1), &server, &remote);
        if let (Plan::ForeignScan(f), "F" | "G") = (&mut scan, id) {
            f.alias = member_of("t_part", k);
        }
        children.push(scan);
    }
    let plan = if id == "C" {
        sum_a_plan(children.pop().unwrap())
    } else {
        sum_a_plan(Plan::Append { children, prune: None, ordered: false })
    };
    // The reference from the servers' own tables (shared): a copy of every row cost a
    // third of the build at 64 shards.
    let refs: Vec<&Table> = servers.iter().flat_map(|s| s.catalog.tables.iter().map(|t| t.as_ref())).collect();
    let reference = sum_reference(&refs);
    Ok(Scenario {
        id: id.into(),
        local: Catalog::default(),
        servers,
        plan,
        sharing: Some(sharing),
        shards,
        reference,
        ordered: false,
        order_key: None,
        behaviour: s.behaviour,
        cost: s.cost.clone(),
        planner: Default::default(),
    })
}

fn build_merge(_info: &ScenarioInfo, knobs: &Knobs, s: &Settings, stock: &mut TableStock) -> Result<Scenario, String> {
    let offset = knobs.offset.unwrap_or(crate::knobs::DEFAULT_OFFSET);
    let limit = knobs.limit.unwrap_or(crate::knobs::DEFAULT_LIMIT);
    // Seed 003: players hash-partitioned (modulus shards) over servers s2, s3, … two
    // partitions each (dedicated: one each).
    let sharing = s.sharing.unwrap_or(Sharing::Shared);
    let mut servers: Vec<ServerSpec> = vec![];
    let mut children = vec![];
    let total = s.rows * s.shards;
    for k in 0..s.shards {
        let name = format!("players_p{}", k + 1);
        // Indexed on score (seed 003: create index on players_pN(score)).
        let t = stock.table(Generated::Players { name: name.clone(), k, shards: s.shards, total });
        let server = match sharing {
            Sharing::Dedicated => format!("s{}", k + 2),
            _ => format!("s{}", k / 2 + 2),
        };
        match servers.iter_mut().find(|x| x.server.name == server) {
            Some(spec) => spec.catalog.add(t),
            None => {
                let mut cat = Catalog::default();
                cat.add(t);
                servers.push(server_spec(&server, cat, s, k));
            }
        }
        let mut remote = RemoteQuery::scan(&name, players_columns(), &[0, 1, 2]);
        remote.order_by = vec![SortKey::desc(2)];
        // No LIMIT in the remote query: PostgreSQL 15 pushes LIMIT only into a foreign
        // scan that is the whole query, never into a partition under a Merge Append
        // (checked against a real coordinator by tests/sql_seeds.rs, seed 003).
        children.push(Plan::ForeignScan(ForeignScanPlan {
            relation: name.clone(),
            server,
            remote,
            alias: member_of("players", k),
        }));
    }
    let plan = Plan::Limit {
        child: Box::new(Plan::MergeAppend { children, keys: vec![SortKey::desc(2)], prune: None }),
        offset,
        count: Some(limit),
    };
    let reference = top_scores(&servers, offset as usize, limit as usize);
    Ok(Scenario {
        id: "M".into(),
        local: Catalog::default(),
        servers,
        plan,
        sharing: Some(sharing),
        shards: s.shards,
        reference,
        ordered: true,
        order_key: Some(2),
        behaviour: s.behaviour,
        cost: s.cost.clone(),
        planner: Default::default(),
    })
}

/// Rows `offset .. offset + limit` of all the players by score, highest first (ties in
/// partition order, then id order), straight from the servers' tables: a bucket per
/// score, not a sort of every row (64 shards: 281,600 rows, 30 ms of the page's build).
fn top_scores(servers: &[ServerSpec], offset: usize, limit: usize) -> Vec<Vec<Datum>> {
    // The servers were made in partition order, and each holds its partitions in order.
    let tables: Vec<&Table> = servers.iter().flat_map(|s| s.catalog.tables.iter().map(|t| t.as_ref())).collect();
    let mut by_score: Vec<Vec<(usize, usize)>> = vec![vec![]; 101];
    for (n, t) in tables.iter().enumerate() {
        for i in 0..t.nrows() {
            // `score_of` gives 0 to 100.
            let score = t.row(i)[2].as_int().expect("score").clamp(0, 100) as usize;
            by_score[100 - score].push((n, i));
        }
    }
    let mut out = vec![];
    let mut skip = offset;
    for rows in &by_score {
        let take = rows.len().saturating_sub(skip).min(limit - out.len());
        let from = skip.min(rows.len());
        out.extend(rows[from..from + take].iter().map(|&(n, i)| tables[n].row(i).to_vec()));
        skip -= from;
    }
    out
}

fn build_partitionwise(
    _info: &ScenarioInfo,
    _knobs: &Knobs,
    s: &Settings,
    stock: &mut TableStock,
) -> Result<Scenario, String> {
    // Seed 004: p1 is foreign (a = 10 + i % 10), p2 local (a = 20 + i % 10).
    let t1 = stock.table(Generated::Tens { name: "t1".into(), base: 10, rows: s.rows });
    let p2 = stock.table(Generated::Tens { name: "p2".into(), base: 20, rows: s.rows });
    let mut counts: BTreeMap<i64, i64> = BTreeMap::new();
    for t in [&t1, &p2] {
        for i in 0..t.nrows() {
            *counts.entry(t.row(i)[0].as_int().unwrap()).or_default() += 1;
        }
    }
    let reference = counts.into_iter().map(|(a, n)| vec![Datum::Int(a), Datum::Int(n)]).collect();
    let mut cat = Catalog::default();
    cat.add(t1);
    let servers = vec![server_spec("server1", cat, s, 0)];
    let mut local = Catalog::default();
    local.add(p2);
    let mut remote = RemoteQuery::scan("t1", t_columns(), &[0]);
    remote.targets = vec![RemoteTarget::Col(0), RemoteTarget::Agg(AggFunc::CountStar, None, false)];
    remote.group_by = vec![0];
    let foreign = Plan::ForeignScan(ForeignScanPlan {
        relation: "p1".into(),
        server: "server1".into(),
        remote,
        // Partitionwise: the plan refers to the partitions, not to pt (PostgreSQL's names).
        alias: Some(ScanName {
            alias: "pt".into(),
            parent: None,
            member: true,
            tlist: None,
            direct: false,
            alone: false,
            unqualified: false,
        }),
    });
    let local_agg = Plan::Agg {
        child: Box::new(Plan::SeqScan {
            table: "p2".into(),
            columns: a_column(),
            alias: Some(ScanName {
                alias: "pt_1".into(),
                parent: None,
                member: true,
                tlist: None,
                direct: false,
                alone: false,
                unqualified: false,
            }),
        }),
        strategy: AggStrategy::Hashed,
        group_by: vec![Expr::Col(0)],
        aggs: vec![AggCall { func: AggFunc::CountStar, arg: None, distinct: false }],
        split: crate::plan::AggSplit::Simple,
    };
    let plan = Plan::Append { children: vec![foreign, local_agg], prune: None, ordered: false };
    Ok(Scenario {
        id: "X".into(),
        local,
        servers,
        plan,
        sharing: Some(Sharing::Dedicated),
        shards: 1,
        reference,
        ordered: false,
        order_key: None,
        behaviour: s.behaviour,
        cost: s.cost.clone(),
        planner: Default::default(),
    })
}

/// `l{k}(a, c)`: the local table joined to shard `k`'s foreign table, keys 0..49
/// (half of `t`'s values of `a`, so the join drops rows).
fn join_local_table(k: usize) -> Table {
    let mut t =
        Table::new(&format!("l{}", k + 1), vec![Column::new("a", ColType::Int), Column::new("c", ColType::Text)]);
    for a in 0..JOIN_KEYS {
        t.push_row(&[Datum::Int(a), Datum::text(&format!("l{}_{a}", k + 1))]);
    }
    t
}

const JOIN_KEYS: i64 = 50;

/// `Hash Join (ftN.a = lN.a)`: the Foreign Scan (columns `cols` of `t`) probes a hash
/// of the local table, as PostgreSQL 15 plans it (the smaller local side is hashed).
fn join_plan(k: usize, server: &str, cols: &[usize]) -> Plan {
    let scan = Plan::ForeignScan(ForeignScanPlan {
        relation: format!("ft{}", k + 1),
        server: server.to_string(),
        remote: RemoteQuery::scan(&format!("t{}", k + 1), t_columns(), cols),
        alias: None,
    });
    let local = join_local_table(k);
    Plan::HashJoin {
        outer: Box::new(scan),
        inner: Box::new(Plan::SeqScan { table: local.name.clone(), columns: local.columns.clone(), alias: None }),
        outer_key: Expr::Col(0),
        inner_key: Expr::Col(0),
        more_keys: vec![],
        join_type: crate::plan::JoinType::Inner,
        joinrel_rows: None,
    }
}

/// The joined rows of shard `k`'s `t` (columns `cols`) and `l{k}`, straight from the data.
fn join_reference(t: &Table, l: &Table, cols: &[usize]) -> Vec<Vec<Datum>> {
    let by_key = rows_by(l, 0);
    let mut out = Vec::with_capacity(t.nrows());
    for i in 0..t.nrows() {
        let row = t.row(i);
        for &j in rows_with(l, &by_key, 0, &row[0]) {
            // One allocation a row (a collect then an extend was two and a copy).
            let mut r = Vec::with_capacity(cols.len() + l.ncols());
            r.extend(cols.iter().map(|&c| row[c].clone()));
            r.extend_from_slice(l.row(j));
            out.push(r);
        }
    }
    out
}

/// `t`'s row numbers in the order of column `col`, ties in row order: with
/// [`rows_with`], a reference join finds each key's rows without a pass over one side
/// for each row of the other (that was most of R's, H's and K's build at 64 shards).
fn rows_by(t: &Table, col: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..t.nrows()).collect();
    crate::types::sort_indexes_by(&mut order, &|a, b| t.row(a)[col].cmp(&t.row(b)[col]));
    order
}

/// The rows of `t` whose column `col` is `v`, in row order (`order` from [`rows_by`]).
fn rows_with<'a>(t: &Table, order: &'a [usize], col: usize, v: &Datum) -> &'a [usize] {
    let from = order.partition_point(|&i| t.row(i)[col] < *v);
    let n = order[from..].iter().take_while(|&&i| t.row(i)[col] == *v).count();
    &order[from..from + n]
}

/// R (seed 000, Robert Haas): `Append` over one `Hash Join` per shard, each a Foreign
/// Scan on its own server (`s1`…) joined to a local table. H (Amit Khandekar): an
/// Append over a plain Foreign Scan (`ft1`, columns a, b, c) and one such join on the
/// second server (`ft2.a`, `l2.a`, `l2.c`: the same column types).
fn build_join(info: &ScenarioInfo, _knobs: &Knobs, s: &Settings, stock: &mut TableStock) -> Result<Scenario, String> {
    let id = info.id;
    let shards = s.shards;
    let mut servers = vec![];
    let mut local = Catalog::default();
    let mut children = vec![];
    let mut reference = vec![];
    for k in 0..shards {
        let remote = format!("t{}", k + 1);
        let table = stock.table(Generated::T { name: remote.clone(), shard: k, rows: s.rows });
        let server = format!("s{}", k + 1);
        if id == "H" && k == 0 {
            children.push(foreign_scan_a(&format!("ft{}", k + 1), &server, &remote));
            if let Some(Plan::ForeignScan(f)) = children.last_mut() {
                f.remote = RemoteQuery::scan(&remote, t_columns(), &[0, 1, 2]);
            }
            reference.extend((0..table.nrows()).map(|i| table.row(i).to_vec()));
        } else {
            let cols: &[usize] = if id == "H" { &[0] } else { &[0, 1] };
            let l = join_local_table(k);
            reference.extend(join_reference(&table, &l, cols));
            children.push(join_plan(k, &server, cols));
            local.add(l);
        }
        let mut cat = Catalog::default();
        cat.add(table);
        servers.push(server_spec(&server, cat, s, k));
    }
    Ok(Scenario {
        id: id.into(),
        local,
        servers,
        plan: Plan::Append { children, prune: None, ordered: false },
        sharing: Some(Sharing::Dedicated),
        shards,
        reference,
        ordered: false,
        order_key: None,
        behaviour: s.behaviour,
        cost: s.cost.clone(),
        planner: Default::default(),
    })
}

/// K's outer key tables: `o{k}(a, b)` with keys `10k .. 10k + 9`.
const K_KEYS: i64 = 10;

/// K (seed 000, Kyotaro Horiguchi): `Nested Loop (o.a = t.a)` over an Append of the key
/// tables `o1…` (the first half of the servers) and an Append of `t` on the others.
fn build_nestloop(
    _info: &ScenarioInfo,
    _knobs: &Knobs,
    s: &Settings,
    stock: &mut TableStock,
) -> Result<Scenario, String> {
    // One shard: both sides on the one server (it holds o1 and t1).
    let outer_servers = (s.shards / 2).max(1);
    let (mut servers, mut outer, mut inner, mut keys, mut inner_tables) = (vec![], vec![], vec![], vec![], vec![]);
    for k in 0..s.shards {
        let server = format!("s{}", k + 1);
        let mut cat = Catalog::default();
        if k < outer_servers {
            let name = format!("o{}", k + 1);
            let mut t = Table::new(&name, vec![Column::new("a", ColType::Int), Column::new("b", ColType::Int)]);
            for a in (k as i64 * K_KEYS)..((k as i64 + 1) * K_KEYS) {
                t.push_row(&[Datum::Int(a), Datum::Int(a * 1000)]);
                keys.push(vec![Datum::Int(a), Datum::Int(a * 1000)]);
            }
            let cols = t.columns.clone();
            cat.add(t);
            outer.push(Plan::ForeignScan(ForeignScanPlan {
                relation: format!("fo{}", k + 1),
                server: server.clone(),
                remote: RemoteQuery::scan(&name, cols, &[0, 1]),
                alias: None,
            }));
        }
        if k >= outer_servers || s.shards == 1 {
            let name = format!("t{}", k + 1);
            let t = stock.table(Generated::T { name: name.clone(), shard: k, rows: s.rows });
            inner_tables.push((k, name.clone()));
            cat.add(t);
            let mut scan = foreign_scan_a(&format!("ft{}", k + 1), &server, &name);
            if let Plan::ForeignScan(f) = &mut scan {
                f.remote = RemoteQuery::scan(&name, t_columns(), &[0, 1]);
            }
            inner.push(scan);
        }
        servers.push(server_spec(&server, cat, s, k));
    }
    // Every key with the inner rows of its value, table by table, in row order.
    let tables: Vec<&Table> =
        inner_tables.iter().filter_map(|(k, name)| servers[*k].catalog.get(name).map(|t| t.as_ref())).collect();
    let by_a: Vec<Vec<usize>> = tables.iter().map(|t| rows_by(t, 0)).collect();
    let mut reference = vec![];
    for o in &keys {
        for (t, by_a) in tables.iter().zip(&by_a) {
            for &i in rows_with(t, by_a, 0, &o[0]) {
                reference.push(vec![o[0].clone(), o[1].clone(), t.row(i)[0].clone(), t.row(i)[1].clone()]);
            }
        }
    }
    let plan = Plan::NestLoop {
        outer: Box::new(Plan::Append { children: outer, prune: None, ordered: false }),
        // PostgreSQL 15 materializes a rescanned inner side (cost_material).
        inner: Box::new(Plan::Material {
            child: Box::new(Plan::Append { children: inner, prune: None, ordered: false }),
        }),
        outer_key: Expr::Col(0),
        inner_key: Expr::Col(0),
        filter_inner_first: false,
        join_type: crate::plan::JoinType::Inner,
        joinrel_rows: None,
    };
    Ok(Scenario {
        id: "K".into(),
        local: Catalog::default(),
        servers,
        plan,
        sharing: Some(Sharing::Dedicated),
        shards: s.shards,
        reference,
        ordered: false,
        order_key: None,
        behaviour: s.behaviour,
        cost: s.cost.clone(),
        planner: Default::default(),
    })
}

/// Scenario A (`SELECT sum(a) FROM t_local`: Aggregate over a SeqScan of one local
/// table) as a throughput probe: `pgasync bench` times it natively and the page's
/// `LocalScan` in wasm, the same function on both sides, so their ratio compares like
/// with like. `new` builds the table once (outside any timing); `run` is one whole
/// query: ExecInitNode on the virtual clock, every row, the result checked.
///
/// The timing method both sides follow (`SCAN_WARMUP`, `SCAN_RUNS`): a run or two are
/// not enough; wasm in V8 got faster over its first runs (9 ms, then 2 ms from about the
/// eighth in Chromium), so runs after the warm-up are timed, and their median is the
/// figure (the best beside it).
pub struct LocalScan {
    scenario: Scenario,
}

/// Rows of the throughput probe's table (`pgasync bench`, the page's bench).
pub const SCAN_ROWS: usize = 1_000_000;
/// Untimed runs before the timed ones, on each side.
pub const SCAN_WARMUP: usize = 10;
/// Timed runs: the median and the best are reported.
pub const SCAN_RUNS: usize = 30;

impl LocalScan {
    pub fn new(rows: usize) -> Result<LocalScan, String> {
        let knobs = Knobs { shards: Some(1), rows_per_shard: Some(rows), ..Default::default() };
        Ok(LocalScan { scenario: Scenario::build("A", &knobs)? })
    }

    /// One query to its end; its result, sum(a), is checked against the reference (a
    /// wrong answer is an error, never a time). NULL (no row) is 0.
    pub fn run(&self) -> Result<f64, String> {
        let mut run = self.scenario.start(false, Clock::virtual_clock(), false)?;
        run.run_to_end().map_err(|e| e.to_string())?;
        if !self.scenario.matches_reference(&run.rows) {
            return Err(format!("LocalScan: wrong result {:?}", run.rows));
        }
        Ok(run.rows.first().and_then(|r| r[0].as_f64()).unwrap_or(0.0))
    }
}

#[cfg(test)]
mod live_layout_tests {
    use super::live_targets;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn servers_go_to_their_namesake_or_round_the_shards() {
        let targets = names(&["coordinator", "s10", "s2", "s1", "s3", "s4"]);
        // E: by name.
        assert_eq!(
            live_targets(&names(&["s1", "s2", "s3", "s4"]), &targets).unwrap(),
            names(&["s1", "s2", "s3", "s4"])
        );
        // Seed 003's M: its servers are s2 and s3, and that is where the demo puts them.
        assert_eq!(live_targets(&names(&["s2", "s3"]), &targets).unwrap(), names(&["s2", "s3"]));
        // X: server1 is no target: the first shard, in natural order (s1, s2, …, s10).
        assert_eq!(live_targets(&names(&["server1"]), &targets).unwrap(), names(&["s1"]));
        let many: Vec<String> = (0..6).map(|k| format!("x{k}")).collect();
        assert_eq!(live_targets(&many, &targets).unwrap(), names(&["s1", "s2", "s3", "s4", "s10", "s1"]));
        assert!(live_targets(&[], &names(&["coordinator"])).unwrap().is_empty());
        assert!(live_targets(&names(&["a"]), &names(&["coordinator"])).is_err());
    }
}

#[cfg(test)]
mod build_tests {
    use super::*;

    fn knobs(shards: usize, rows: usize) -> Knobs {
        knobs::from_json(&format!(
            r#"{{"shards":{shards},"rows_per_shard":{rows},"fetch_size":7,"offset":5,"limit":20}}"#
        ))
        .unwrap()
    }

    /// Every built-in scenario, built in slices as the page builds it, has the tables
    /// and the reference of the build in one go, and both runs return its reference
    /// (the references are computed with binary searches and buckets, not by the runs'
    /// own nodes).
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn built_in_slices_as_in_one_go_and_the_runs_return_the_reference() {
        for info in SCENARIOS {
            let k = knobs(5, 37);
            let whole = Scenario::build(info.id, &k).unwrap();
            let mut stock = Scenario::stock_for(info.id, &k, Source::Json).unwrap();
            while !stock.make(10) {}
            let sliced = Scenario::build_with(info.id, &k, Source::Json, &mut stock).unwrap();
            assert_eq!(sliced.reference, whole.reference, "{}", info.id);
            assert!(!whole.reference.is_empty(), "{}", info.id);
            let tables = |s: &Scenario| -> Vec<(String, Vec<Datum>)> {
                let all = s.local.tables.iter().chain(s.servers.iter().flat_map(|x| x.catalog.tables.iter()));
                all.map(|t| (t.name.clone(), t.data.clone())).collect()
            };
            assert_eq!(tables(&sliced), tables(&whole), "{}", info.id);
            for async_mode in [false, true] {
                let mut run = whole.start(async_mode, Clock::virtual_clock(), false).unwrap();
                run.run_to_end().unwrap();
                assert!(whole.matches_reference(&run.rows), "{} async={async_mode}: {:?}", info.id, run.rows.len());
            }
        }
    }
}
