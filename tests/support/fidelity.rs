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
