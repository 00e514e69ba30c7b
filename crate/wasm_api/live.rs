//! Live mode at the wasm boundary: a built-in scenario run on real PostgreSQL shards
//! through the relay (`host::ws`). The shards must hold the scenario's data (`pgasync
//! demo` loads it); the page's knobs are checked as for simulated runs.

use super::parse_knobs;
use crate::host::ws::{performance_clock, run_live, WsHost};
use crate::run::QueryRun;
use crate::scenario::Scenario;
use serde::Serialize;
use wasm_bindgen::prelude::*;

#[derive(Serialize)]
struct LiveResult {
    rows: Vec<Vec<String>>,
    explain_text: String,
    execution_ms: f64,
    total_ms: f64,
    trace: Vec<crate::trace::TraceEvent>,
    /// Server name of each connection (the trace's `conn` indexes it).
    connections: Vec<String>,
}

/// Runs `scenario` live: one WebSocket per foreign server to `relay` (e.g.
/// `ws://127.0.0.1:8080`), opening `database` on each shard (`pgasync demo` keeps
/// each scenario's data in the database named after it, lower case). Resolves to `{rows, explain_text, execution_ms, total_ms,
/// trace}`; rejects with a message naming the server on a remote or relay error.
#[wasm_bindgen(js_name = runLive)]
pub async fn run_live_js(
    relay: String,
    database: String,
    scenario: String,
    mode: String,
    knobs_json: String,
) -> Result<JsValue, JsError> {
    let knobs = parse_knobs(&knobs_json)?;
    let async_mode = match mode.as_str() {
        "async" => true,
        "sync" => false,
        m => return Err(JsError::new(&format!("unknown mode \"{m}\" (expected sync or async)"))),
    };
    let sc = Scenario::build(&scenario, &knobs).map_err(|e| JsError::new(&e))?;
    let names: Vec<String> = sc.servers.iter().map(|s| s.server.name.clone()).collect();
    let host = WsHost::connect(&relay, &names).await.map_err(|e| JsError::new(&e))?;
    let mut run =
        QueryRun::for_scenario(&sc, async_mode, performance_clock(), true, host).map_err(|e| JsError::new(&e))?;
    // Before the first poll: the start-up packets go out then.
    run.es.set_database(&database);
    run_live(&mut run).await.map_err(|e| JsError::new(&e.to_string()))?;
    let result = LiveResult {
        rows: run.rows.iter().map(|r| r.iter().map(|d| d.to_string()).collect()).collect(),
        explain_text: run.explain_text(),
        execution_ms: run.execution_ns() as f64 / 1e6,
        total_ms: run.elapsed_ns() as f64 / 1e6,
        trace: run.es.trace.events.clone(),
        connections: run.es.conns.iter().map(|c| c.server.clone()).collect(),
    };
    // The page's serializer: maps (a trace event's flattened kind) as plain objects.
    super::to_js(&result)
}

/// The query a real PostgreSQL coordinator runs for `scenario` (the "PostgreSQL says"
/// panel), or null when the sandbox cannot yet write one PostgreSQL plans alike.
#[wasm_bindgen(js_name = coordinatorQuery)]
pub fn coordinator_query_js(scenario: &str, knobs_json: &str) -> Result<Option<String>, JsError> {
    let knobs = parse_knobs(knobs_json)?;
    let sc = Scenario::build(scenario, &knobs).map_err(|e| JsError::new(&e))?;
    Ok(crate::postgres_sql::coordinator_query(&sc))
}

/// Runs `EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) <sql>` on the relay's `coordinator`
/// target (a real PostgreSQL with postgres_fdw), in `database`; resolves to the plan
/// text PostgreSQL prints.
#[wasm_bindgen(js_name = postgresExplain)]
pub async fn postgres_explain_js(relay: String, database: String, sql: String) -> Result<String, JsError> {
    use crate::executor::estate::EState;
    use crate::remote::{ForeignServer, Proto, QueryRole, ServerOptions};
    let server = ForeignServer { name: "coordinator".into(), options: ServerOptions::default() };
    let mut es = EState::new(performance_clock(), vec![server], false, false);
    es.set_database(&database);
    let mut host = WsHost::connect(&relay, &["coordinator".to_string()]).await.map_err(|e| JsError::new(&e))?;
    let startup = es.connect(0);
    wait_for(&mut host, &mut es, startup).await?;
    let explain = format!("EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) {sql}");
    let ticket = es.send(0, Proto::Simple, &explain, None, QueryRole::Setup);
    let result = wait_for(&mut host, &mut es, ticket).await?;
    if let Some(e) = result.error {
        return Err(JsError::new(&e.to_string()));
    }
    Ok((0..result.nrows).map(|i| result.row(i)[0].to_string()).collect::<Vec<_>>().join("\n"))
}

/// Pumps and waits until the answer to `ticket` is complete.
async fn wait_for(
    host: &mut WsHost,
    es: &mut crate::executor::estate::EState,
    ticket: crate::remote::Ticket,
) -> Result<crate::remote::QueryResult, JsError> {
    use crate::host::Host;
    loop {
        host.pump(es).map_err(|e| JsError::new(&e.to_string()))?;
        if let Some(r) = es.conns[0].take_result(ticket) {
            return Ok(r);
        }
        host.wait_any(&[0]).await.map_err(|e| JsError::new(&e))?;
    }
}
