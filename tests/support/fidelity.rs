//! What the wire-sequence tests (tests/pg15_fidelity*.rs) share: the order of a log
//! that does not depend on timing, rows as text, and a side-by-side diff of two
//! statement lists.
#![allow(dead_code)]

use super::pg::ShardSet;
use pgasync::clock::Clock;
use pgasync::executor::estate::EState;
use pgasync::executor::{init_plan, InitContext};
use pgasync::host::tcp::TcpHost;
use pgasync::run::QueryRun;
use pgasync::scenario::Scenario;
use pgasync::types::Datum;
use std::net::SocketAddr;
use std::time::Instant;

/// The order across shards that is fixed: everything but disconnections and, in async
/// mode, the FETCHes (sent without waiting, their order across shards depends on
/// timing; tests/pg15_fidelity.rs's `waited_order`).
pub fn fixed_order(timeline: Vec<String>, async_capable: bool) -> Vec<String> {
    timeline
        .into_iter()
        .filter(|l| !l.contains(" disconnection") && !(async_capable && l.contains(" statement: FETCH ")))
        .collect()
}

/// A row as psql's unaligned output writes it (`|` between values, NULL empty).
pub fn row_text(r: &[Datum]) -> String {
    r.iter()
        .map(|d| match d {
            Datum::Null => String::new(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join("|")
}

/// PostgreSQL's lines beside ours, numbered, `!!` where they differ.
pub fn diff_lines(expected: &[String], got: &[String]) -> String {
    let mut out = String::new();
    for i in 0..expected.len().max(got.len()) {
        let (e, g) = (expected.get(i).map(String::as_str), got.get(i).map(String::as_str));
        let mark = if e == g { "  " } else { "!!" };
        out.push_str(&format!(
            "{mark} {i:3} pg15: {:<70} pgasync: {}\n",
            e.unwrap_or("-").replace('\n', "\\n"),
            g.unwrap_or("-").replace('\n', "\\n")
        ));
    }
    out
}

/// `Scenario::start` over pgasync's native TCP host on the shards, the servers in the
/// scenario's order mapped to their shards by name (`s1` is `addrs[0]`).
pub fn start_over_tcp(sc: &Scenario, async_capable: bool, addrs: &[SocketAddr]) -> QueryRun<TcpHost> {
    let servers: Vec<_> = sc
        .servers
        .iter()
        .map(|s| {
            let mut srv = s.server.clone();
            srv.options.async_capable = async_capable;
            srv
        })
        .collect();
    let ordered: Vec<SocketAddr> = servers
        .iter()
        .map(|s| {
            let k: usize = s.name.trim_start_matches('s').parse().expect("servers s1, s2");
            addrs[k - 1]
        })
        .collect();
    let t0 = Instant::now();
    let clock = Clock::from_host(Box::new(move || t0.elapsed().as_nanos() as u64));
    let mut es = EState::new(clock, servers, async_capable, true);
    es.set_behaviour(sc.behaviour);
    let root = init_plan(&sc.plan, &InitContext { catalog: &sc.local }, &mut es).expect("init");
    let host = TcpHost::new(&ordered);
    es.writer = Some(host.writer());
    QueryRun::new(es, root, host, sc.plan.output_columns())
}

/// The values the shards were given for `$1` (the `DETAIL:  parameters: $1 = '…'`
/// line PostgreSQL logs after an `execute` with parameters), in log order.
pub fn bound_parameters(shards: &ShardSet, mark: usize) -> Vec<String> {
    shards
        .lines_since(mark)
        .into_iter()
        .filter(|l| l.level == "DETAIL")
        .filter_map(|l| l.text.strip_prefix("parameters: $1 = ").map(|v| v.trim_matches('\'').to_string()))
        .collect()
}

/// `create server sN` and its user mapping for each of `shards` servers, async_capable
/// and at `fetch`: with the shards' ports for PostgreSQL's coordinator (`ports`), by
/// the TCP host for the sandbox's (which logs in as its own role and takes no user
/// mapping option).
pub fn servers_sql(shards: usize, fetch: usize, ports: Option<&[u16]>) -> String {
    servers_sql_with(shards, &format!("async_capable 'true', fetch_size '{fetch}'"), ports)
}

/// `create server sN` and its user mapping for each of `shards` servers, with the
/// server `options` after `dbname` (`async_capable 'true', …`): with the shards' ports
/// for PostgreSQL's coordinator (`ports`), by the TCP host for the sandbox's.
pub fn servers_sql_with(shards: usize, options: &str, ports: Option<&[u16]>) -> String {
    let mut s = String::new();
    for n in 1..=shards {
        let addr = ports.map(|p| format!("host '127.0.0.1', port '{}', ", p[n - 1])).unwrap_or_default();
        let user = if ports.is_some() { " options (user 'postgres')" } else { "" };
        s.push_str(&format!(
            "create server s{n} foreign data wrapper postgres_fdw options ({addr}dbname 'postgres', \
             {options});\ncreate user mapping for public server s{n}{user};\n"
        ));
    }
    s
}

/// `pt (a, b, c)` partitioned by range of b over `parts` foreign partitions, `ptN`
/// on server `sN` reading `tN`, `rows` values of b each (`load_t`'s ranges).
pub fn partitioned_pt_sql(parts: usize, rows: usize) -> String {
    let mut s = String::from("create table pt (a int, b int, c text) partition by range (b);\n");
    for n in 1..=parts {
        let (lo, hi) = ((n - 1) * rows, n * rows);
        s.push_str(&format!(
            "create foreign table pt{n} partition of pt for values from ({lo}) to ({hi}) server s{n} \
             options (table_name 't{n}');\n"
        ));
    }
    s
}

/// `n` shard clusters, the k-th holding `load_t`'s table `t{k+1}` of `rows` rows.
pub fn loaded_shards(n: usize, rows: usize) -> ShardSet {
    let shards = ShardSet::start(n);
    for k in 0..n {
        super::pg::load_t(&shards.clusters[k], &format!("t{}", k + 1), k, rows);
    }
    shards
}

/// PostgreSQL's coordinator: a cluster with postgres_fdw and the objects `objects`
/// writes for the shards' ports (its servers, user mappings and tables).
pub fn start_coordinator(shards: &ShardSet, objects: impl FnOnce(&[u16]) -> String) -> super::pg::Cluster {
    let coordinator = super::pg::Cluster::start("coordinator");
    let ports: Vec<u16> = shards.addrs().iter().map(|a| a.port()).collect();
    coordinator.psql(&format!("CREATE EXTENSION postgres_fdw;\n{}", objects(&ports)));
    coordinator
}

/// The coordinator's connections: not the tail of the test's own psql session on a
/// shard (its `disconnection` may be logged after the mark).
pub fn coordinator_sessions(sessions: Vec<super::pg::LogSession>) -> Vec<super::pg::LogSession> {
    sessions.into_iter().filter(|s| s.statements.iter().any(|l| l.starts_with("connection authorized: "))).collect()
}

/// `ALTER SERVER` of each of `shards` servers to one mode and fetch size.
pub fn set_servers_sql(shards: usize, async_capable: bool, fetch: usize) -> String {
    (1..=shards)
        .map(|n| {
            format!("ALTER SERVER s{n} OPTIONS (SET async_capable '{async_capable}', SET fetch_size '{fetch}');\n")
        })
        .collect()
}

/// The sandbox's sessions as PostgreSQL's coordinator logs them: it connects as its
/// own role (`pgasync`), PostgreSQL's user mappings as `postgres`.
pub fn as_postgres_user(sessions: &mut [super::pg::LogSession]) {
    for s in sessions.iter_mut() {
        for st in s.statements.iter_mut() {
            if st.starts_with("connection authorized: ") || st.starts_with("disconnection: ") {
                *st = st.replace("user=pgasync", "user=postgres");
            }
        }
    }
}

/// One side's run of a query: its rows as text, sorted; the shards' sessions it opened,
/// as PostgreSQL logs them; the log's mark before it (for what else the log says, e.g.
/// `bound_parameters`); the sandbox's EXPLAIN (ANALYZE, VERBOSE) text (empty for
/// PostgreSQL's side, which a test asks for on its own).
pub struct SideRun {
    pub rows: Vec<String>,
    pub sessions: Vec<super::pg::LogSession>,
    pub mark: usize,
    pub explain: String,
}

/// PostgreSQL's coordinator runs `query` (psql).
pub fn postgres_side(coordinator: &super::pg::Cluster, shards: &ShardSet, query: &str) -> SideRun {
    let mark = shards.mark();
    let out = coordinator.psql(query);
    let sessions = shards.sessions_since(mark);
    let mut rows: Vec<String> = out.lines().filter(|l| !l.is_empty()).map(str::to_string).collect();
    rows.sort();
    SideRun { rows, sessions, mark, explain: String::new() }
}

/// The sandbox, pg15, plans `query` over the scenario file `script` and runs it over TCP
/// on the same shards. Err: it does not plan it. A run that fails is one of `failures`
/// (named by `what`), with what it did up to there.
pub fn sandbox_side(
    script: &str,
    query: &str,
    async_capable: bool,
    shards: &ShardSet,
    what: &str,
    failures: &mut Vec<String>,
) -> Result<SideRun, String> {
    use pgasync::behaviour::Preset;
    use pgasync::instrument::{explain_text_with, ExplainOptions};
    use pgasync::knobs::{Knobs, Source};
    let script = pgasync::coordinator_sql::SqlScenario::load(script).expect("the script loads");
    let knobs = Knobs { behaviour: Some(Preset::Pg15), ..Default::default() };
    let sc = script
        .with_query(&format!("{query};"))
        .and_then(|s| s.scenario(&knobs, Source::Cli))
        .map_err(|e| e.to_string())?;
    let mark = shards.mark();
    let mut run = start_over_tcp(&sc, async_capable, &shards.addrs());
    if let Err(e) = run.run_to_end() {
        failures.push(format!("{what}: the sandbox's run failed: {e}"));
    }
    let explain = explain_text_with(&run.explain(), &ExplainOptions::POSTGRES_VERBOSE, 0, run.elapsed_ns());
    let mut rows: Vec<String> = run.rows.iter().map(|r| row_text(r)).collect();
    rows.sort();
    drop(run);
    let mut sessions = shards.sessions_since(mark);
    as_postgres_user(&mut sessions);
    Ok(SideRun { rows, sessions, mark, explain })
}

/// PostgreSQL's plan of `query` (`EXPLAIN (VERBOSE, COSTS OFF)`) must be the one a
/// case is about: every text of `plan_has` in it and `async_scans` Async Foreign
/// Scans; else one of `failures`.
pub fn check_postgres_plan(
    coordinator: &super::pg::Cluster,
    query: &str,
    plan_has: &[&str],
    async_scans: usize,
    what: &str,
    failures: &mut Vec<String>,
) {
    let explain = coordinator.psql(&format!("EXPLAIN (VERBOSE, COSTS OFF) {query}"));
    if !(plan_has.iter().all(|t| explain.contains(t)) && explain.matches("Async Foreign Scan").count() == async_scans) {
        failures.push(format!("{what}: PostgreSQL's plan is not the one this case is about:\n{explain}"));
    }
}

/// Each connection's statements (`per_shard` over `nshards`), PostgreSQL's against
/// the sandbox's: one of `failures` where they differ.
pub fn compare_connections(
    pg: &[super::pg::LogSession],
    ours: &[super::pg::LogSession],
    nshards: usize,
    what: &str,
    failures: &mut Vec<String>,
) {
    let (pg, sb) = (super::pg::per_shard(pg, nshards), super::pg::per_shard(ours, nshards));
    if pg != sb {
        failures.push(format!("{what}: statements per connection differ\nPostgreSQL: {pg:#?}\npgasync: {sb:#?}"));
    }
}

/// The order across shards (the lines of it a test compares), PostgreSQL's against
/// the sandbox's: one of `failures` where they differ, side by side.
pub fn compare_order(pg: &[String], ours: &[String], what: &str, failures: &mut Vec<String>) {
    if pg != ours {
        failures.push(format!("{what}: order across shards differs\n{}", diff_lines(pg, ours)));
    }
}

/// PostgreSQL's `EXPLAIN (ANALYZE, VERBOSE, COSTS OFF)` text against the sandbox's,
/// times masked: the failure where they differ, side by side.
pub fn explain_analyze_difference(pg: &str, ours: &str, what: &str) -> Option<String> {
    let (pe, oe) = (super::sqlfile::mask(pg), super::sqlfile::mask(ours));
    (pe != oe).then(|| format!("{what}: EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) differs\n{}", diff_lines(&pe, &oe)))
}

/// The two sides' rows (sorted) must be the same, `expected` of them: else one of
/// `failures`.
pub fn compare_rows(pg: &[String], ours: &[String], expected: usize, what: &str, failures: &mut Vec<String>) {
    if ours != pg || ours.len() != expected {
        failures.push(format!(
            "{what}: rows differ ({} from PostgreSQL, {} from pgasync, {expected} expected)",
            pg.len(),
            ours.len()
        ));
    }
}

/// The sandbox's scenario file: on each of `shards` servers `sN` the table
/// `tN (a, b, c)` (`load_t`'s; `on_s1` after it on s1), then the coordinator's
/// `objects` after `create extension postgres_fdw`.
pub fn sandbox_script_of(shards: usize, on_s1: &str, objects: &str) -> String {
    let mut s = String::new();
    for n in 1..=shards {
        s.push_str(&format!("-- @shard s{n}\ncreate table t{n} (a int, b int, c text);\n"));
        if n == 1 {
            s.push_str(on_s1);
        }
    }
    s.push_str("-- @coordinator\ncreate extension postgres_fdw;\n");
    s.push_str(objects);
    s
}
