//! Live mode at the wasm boundary: a built-in scenario, or a scenario file from the
//! page's SQL editor, run on real PostgreSQL shards through the relay (`host::ws`). The
//! shards must hold the data: `pgasync demo` loads every built-in scenario's, and the
//! relay's `POST /sql/load` a file's (into the database it names, which the page passes
//! here). A file is parsed here as for a simulated run (same front end, same row
//! limit), so its plan and its servers are the ones the relay loaded. The page's knobs
//! are checked as for simulated runs.
//!
//! Invariants:
//! - One WebSocket per foreign server, connection `k` to server `k`; a server is named
//!   to the relay by its target name (`scenario::live_targets`), never by an address.
//! - The database is set before the first poll, which sends the startup packets.
//! - A live run is in step mode, whole or stepped: a step boundary sends what was
//!   written, at once, as libpq does.
//! - One live step at a time: the state is taken out while a step runs, so a second
//!   `step()` and `snapshot()` are refused until it is back.
//!
//! Where it departs from PostgreSQL: in live mode the shards are real PostgreSQL
//! servers and the coordinator is the sandbox (its executor and its model of
//! postgres_fdw's connection.c); a real coordinator is asked only for comparison
//! (`coordinatorQuery`, `postgresExplain`). A wait is a future awaited in the
//! browser's event loop (`WsHost::wait_any`), not latch.c's `WaitEventSetWait`.

use super::parse_knobs;
use crate::host::ws::{performance_clock, run_live, step_live, WsHost};
use crate::run::QueryRun;
use crate::scenario::Scenario;
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;
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
    targets_json: Option<String>,
) -> Result<JsValue, JsError> {
    let knobs = parse_knobs(&knobs_json)?;
    let sc = Scenario::build(&scenario, &knobs).map_err(|e| JsError::new(&e))?;
    let run = open_live(&relay, &database, &sc, &mode, targets_json.as_deref()).await?;
    finish_live(run).await
}

#[cfg(feature = "sql")]
/// `runLive` for a scenario file (`text`), on the database the relay's `/sql/load`
/// loaded it into; a file's error rejects with its line and column in the message.
#[wasm_bindgen(js_name = runLiveSql)]
pub async fn run_live_sql_js(
    relay: String,
    database: String,
    text: String,
    mode: String,
    knobs_json: String,
    targets_json: Option<String>,
) -> Result<JsValue, JsError> {
    let sc = sql_scenario(&text, &knobs_json)?;
    let run = open_live(&relay, &database, &sc, &mode, targets_json.as_deref()).await?;
    finish_live(run).await
}

#[cfg(feature = "sql")]
/// A scenario file's scenario, loaded as the page loads it (its row limit).
fn sql_scenario(text: &str, knobs_json: &str) -> Result<Scenario, JsError> {
    use crate::coordinator_sql::script::SqlLoad;
    let knobs = parse_knobs(knobs_json)?;
    let front = |e: crate::coordinator_sql::FrontError| JsError::new(&e.to_string());
    let mut load = SqlLoad::new(text, crate::demo::session::DEMO_LIMITS).map_err(front)?;
    while !load.advance(usize::MAX).map_err(front)? {}
    load.finish().and_then(|sql| sql.into_scenario(&knobs, crate::knobs::Source::Json)).map_err(front)
}

/// Runs an opened live run to its end and gives the page its result.
async fn finish_live(mut run: QueryRun<WsHost>) -> Result<JsValue, JsError> {
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

/// A scenario's run on the relay's servers, at step 0: one socket per foreign server,
/// each opening `database`, in step mode (step boundaries send what was written at
/// once, as libpq writes it; see `Host::flush_writes`). With the relay's target names
/// (`targets_json`, its `/targets`), each server is reached through the target the
/// demo put its data on (`scenario::live_targets`); without, through its namesake.
async fn open_live(
    relay: &str,
    database: &str,
    sc: &Scenario,
    mode: &str,
    targets_json: Option<&str>,
) -> Result<QueryRun<WsHost>, JsError> {
    let async_mode = super::parse_mode(mode)?;
    let mut names: Vec<String> = sc.servers.iter().map(|s| s.server.name.clone()).collect();
    if let Some(json) = targets_json {
        let targets: Vec<String> =
            serde_json::from_str(json).map_err(|e| JsError::new(&format!("the relay's targets: {e}")))?;
        names = crate::scenario::live_targets(&names, &targets).map_err(|e| JsError::new(&e))?;
    }
    let host = WsHost::connect(relay, &names).await.map_err(|e| JsError::new(&e))?;
    let mut run = sc.start_on(host, async_mode, performance_clock(), true).map_err(|e| JsError::new(&e))?;
    // Before the first poll: the start-up packets go out then.
    run.es.set_database(database);
    run.es.step_mode = true;
    Ok(run)
}

/// The query a real PostgreSQL coordinator runs for `scenario` (the "PostgreSQL says"
/// panel), or null when the sandbox cannot yet write one PostgreSQL plans alike.
#[wasm_bindgen(js_name = coordinatorQuery)]
pub fn coordinator_query_js(scenario: &str, knobs_json: &str) -> Result<Option<String>, JsError> {
    let knobs = parse_knobs(knobs_json)?;
    let sc = Scenario::build(scenario, &knobs).map_err(|e| JsError::new(&e))?;
    Ok(crate::sql_text::coordinator::coordinator_query(&sc))
}

/// Runs `EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) <sql>` on the relay's `coordinator`
/// target (a real PostgreSQL with postgres_fdw), in `database`; resolves to the plan
/// text PostgreSQL prints.
#[wasm_bindgen(js_name = postgresExplain)]
pub async fn postgres_explain_js(relay: String, database: String, sql: String) -> Result<String, JsError> {
    use crate::executor::estate::EState;
    use crate::remote::{ForeignServer, Proto, QueryRole, ServerOptions};
    let server = ForeignServer {
        name: "coordinator".into(),
        options: ServerOptions { async_capable: false, fetch_size: crate::knobs::DEFAULT_FETCH_SIZE },
    };
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

/// A live run stepped from the page: the same steps as a simulated one (each async
/// request transition, each wait), except that a wait is real: `step()` resolves when
/// a socket has input. One step at a time: a call while a step is pending is refused.
#[wasm_bindgen]
pub struct LiveRun {
    state: Rc<RefCell<Option<LiveState>>>,
}

impl LiveRun {
    fn opened(run: QueryRun<WsHost>, scenario: String) -> Result<LiveRun, JsError> {
        let async_mode = run.es.async_enabled;
        let labels = crate::demo::session::node_labels(&run.explain());
        let printed_as = crate::instrument::printed_as(&run.explain());
        let state = LiveState {
            run,
            labels,
            printed_as,
            scenario,
            async_mode,
            steps: 0,
            narration: crate::demo::session::START_NARRATION.into(),
        };
        Ok(LiveRun { state: Rc::new(RefCell::new(Some(state))) })
    }
}

struct LiveState {
    run: QueryRun<WsHost>,
    labels: Vec<String>,
    printed_as: Vec<usize>,
    scenario: String,
    async_mode: bool,
    steps: usize,
    narration: String,
}

#[wasm_bindgen]
impl LiveRun {
    /// Opens the sockets (one per server, as `runLive`) and sets the run up, at step 0.
    pub async fn open(
        relay: String,
        database: String,
        scenario: String,
        mode: String,
        knobs_json: String,
        targets_json: Option<String>,
    ) -> Result<LiveRun, JsError> {
        let knobs = parse_knobs(&knobs_json)?;
        let sc = Scenario::build(&scenario, &knobs).map_err(|e| JsError::new(&e))?;
        LiveRun::opened(open_live(&relay, &database, &sc, &mode, targets_json.as_deref()).await?, scenario)
    }

    /// One step; resolves to what it did ("event", "row", "waited", "committed",
    /// "finished", "failed").
    pub fn step(&self) -> js_sys::Promise {
        let cell = self.state.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            let Some(mut st) = cell.borrow_mut().take() else {
                return Err(JsError::new("a live step is already running").into());
            };
            let from = st.run.es.trace.events.len();
            let step = step_live(&mut st.run).await;
            st.steps += 1;
            st.narration =
                crate::demo::session::RunView { run: &st.run, labels: &st.labels, printed_as: &st.printed_as }
                    .narrate(from);
            *cell.borrow_mut() = Some(st);
            Ok(JsValue::from_str(&format!("{step:?}").to_lowercase()))
        })
    }

    /// The state now, as `Session.snapshot` gives it (no totals: a live run's length
    /// is not known in advance), with the trace from index `since` on.
    pub fn snapshot(&self, since: u32) -> Result<JsValue, JsError> {
        let guard = self.state.borrow();
        let st = guard.as_ref().ok_or_else(|| JsError::new("a live step is running"))?;
        let view = crate::demo::session::RunView { run: &st.run, labels: &st.labels, printed_as: &st.printed_as };
        super::to_js(&view.snapshot(&st.scenario, st.async_mode, st.steps, &st.narration, since as usize, &[]))
    }

    /// Whether the run has finished. False while a step is running (the state is out
    /// with the step then, and a run with a step in flight is not done).
    #[wasm_bindgen(js_name = isDone)]
    pub fn is_done(&self) -> bool {
        self.state.borrow().as_ref().is_some_and(|st| st.run.is_done())
    }

    #[wasm_bindgen(js_name = explainText)]
    pub fn explain_text(&self) -> String {
        self.state
            .borrow()
            .as_ref()
            .map(|st| st.run.explain_text_with(&crate::instrument::ExplainOptions::default()))
            .unwrap_or_default()
    }
}

/// `LiveRun.openSql`: with the SQL front end (feature `sql`) only.
#[cfg(feature = "sql")]
#[wasm_bindgen]
impl LiveRun {
    /// `open` for a scenario file (`text`), on the database `/sql/load` named.
    #[wasm_bindgen(js_name = openSql)]
    pub async fn open_sql(
        relay: String,
        database: String,
        text: String,
        mode: String,
        knobs_json: String,
        targets_json: Option<String>,
    ) -> Result<LiveRun, JsError> {
        let sc = sql_scenario(&text, &knobs_json)?;
        LiveRun::opened(open_live(&relay, &database, &sc, &mode, targets_json.as_deref()).await?, "sql".into())
    }
}
