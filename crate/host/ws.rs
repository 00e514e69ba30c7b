//! The browser host: one WebSocket per remote connection, to the relay's
//! `/shard/<server>`; binary frames carry PostgreSQL protocol bytes both ways.
//!
//! A browser cannot block, so this host has no `wait`. `run_live` drives the query:
//! it polls the run, and when the run is Blocked it awaits the next message on any
//! socket (a channel fed by the sockets' `onmessage`/`onclose`), then polls again.
//! Times come from `performance.now()`.
//!
//! Invariants: bytes of one connection are delivered in the order they arrived; a
//! socket that closes fails the query with a message naming the server (never a hung
//! loop); dropping the host closes every socket, and the relay then cancels the
//! backend's query and closes its connection.

use super::{deliver, Host};
use crate::clock::Clock;
use crate::executor::estate::{EState, ExecError, ExecResult};
use crate::run::{QueryRun, Step};
use crate::trace::TraceKind;
use futures::channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use futures::StreamExt;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{BinaryType, CloseEvent, MessageEvent, WebSocket};

/// What the sockets' callbacks leave for the host.
#[derive(Default)]
struct Inbox {
    /// Per connection: chunks in arrival order.
    chunks: Vec<VecDeque<Vec<u8>>>,
    /// Per connection: why its socket closed, if it did.
    closed: Vec<Option<String>>,
    opened: Vec<bool>,
}

pub struct WsHost {
    servers: Vec<String>,
    sockets: Vec<WebSocket>,
    inbox: Rc<RefCell<Inbox>>,
    wake: UnboundedReceiver<()>,
    /// The callbacks must live as long as the sockets.
    _callbacks: Vec<Closure<dyn FnMut(JsValue)>>,
}

impl WsHost {
    /// Opens one socket per server (`relay` is e.g. `ws://127.0.0.1:8080`) and waits
    /// until all are open.
    pub async fn connect(relay: &str, servers: &[String]) -> Result<WsHost, String> {
        let inbox = Rc::new(RefCell::new(Inbox {
            chunks: vec![VecDeque::new(); servers.len()],
            closed: vec![None; servers.len()],
            opened: vec![false; servers.len()],
        }));
        let (tx, wake) = unbounded();
        let mut host = WsHost { servers: servers.to_vec(), sockets: vec![], inbox, wake, _callbacks: vec![] };
        for (k, name) in servers.iter().enumerate() {
            let url = format!("{}/shard/{}", relay.trim_end_matches('/'), name);
            let ws = WebSocket::new(&url).map_err(|e| format!("server \"{name}\": cannot open {url}: {e:?}"))?;
            ws.set_binary_type(BinaryType::Arraybuffer);
            host.listen(&ws, k, tx.clone());
            host.sockets.push(ws);
        }
        while !host.inbox.borrow().opened.iter().all(|&o| o) {
            if let Some(e) = host.first_closed() {
                return Err(e);
            }
            if host.wake.next().await.is_none() {
                return Err("the relay's sockets went away".into());
            }
        }
        Ok(host)
    }

    fn listen(&mut self, ws: &WebSocket, k: usize, tx: UnboundedSender<()>) {
        let (inbox, wake) = (self.inbox.clone(), tx.clone());
        let on_message = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
            let Ok(ev) = ev.dyn_into::<MessageEvent>() else { return };
            if let Ok(buf) = ev.data().dyn_into::<js_sys::ArrayBuffer>() {
                inbox.borrow_mut().chunks[k].push_back(js_sys::Uint8Array::new(&buf).to_vec());
                let _ = wake.unbounded_send(());
            }
        });
        let (inbox, wake) = (self.inbox.clone(), tx.clone());
        let on_open = Closure::<dyn FnMut(JsValue)>::new(move |_ev: JsValue| {
            inbox.borrow_mut().opened[k] = true;
            let _ = wake.unbounded_send(());
        });
        let (inbox, wake, name) = (self.inbox.clone(), tx, self.servers[k].clone());
        let on_close = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
            let why = match ev.dyn_into::<CloseEvent>() {
                Ok(c) if !c.reason().is_empty() => format!("code {}: {}", c.code(), c.reason()),
                Ok(c) => format!("code {}", c.code()),
                Err(_) => "socket error".into(),
            };
            inbox.borrow_mut().closed[k]
                .get_or_insert(format!("server \"{name}\": the relay closed the connection ({why})"));
            let _ = wake.unbounded_send(());
        });
        ws.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        self._callbacks.extend([on_message, on_open, on_close]);
    }

    fn first_closed(&self) -> Option<String> {
        self.inbox.borrow().closed.iter().flatten().next().cloned()
    }

    /// Resolves when one of `conns` has input (or a socket closed: an error).
    pub async fn wait_any(&mut self, conns: &[usize]) -> Result<(), String> {
        loop {
            {
                let inbox = self.inbox.borrow();
                if conns.iter().any(|&k| !inbox.chunks[k].is_empty()) {
                    return Ok(());
                }
                if let Some(e) = conns.iter().find_map(|&k| inbox.closed[k].clone()) {
                    return Err(e);
                }
            }
            if self.wake.next().await.is_none() {
                return Err("the relay's sockets went away".into());
            }
        }
    }
}

impl WsHost {
    /// Sends every connection's written bytes on its socket.
    fn send_outboxes(&mut self, es: &mut EState) -> ExecResult<()> {
        for k in 0..self.sockets.len() {
            while let Some(out) = es.conns[k].outbox.pop_front() {
                self.sockets[k]
                    .send_with_u8_array(&out.bytes)
                    .map_err(|e| ExecError::Protocol(format!("server \"{}\": send failed: {e:?}", self.servers[k])))?;
            }
            es.record_written(k);
            if es.conns[k].cancel_requested {
                // The relay sends the CancelRequest when the socket closes; on an
                // open socket the query runs to its end and its answer is drained.
                es.conns[k].cancel_requested = false;
                es.record(|| TraceKind::Cancel { conn: k });
            }
        }
        Ok(())
    }
}

impl Host for WsHost {
    fn flush_writes(&mut self, es: &mut EState) -> ExecResult<()> {
        self.send_outboxes(es)
    }

    fn pump(&mut self, es: &mut EState) -> ExecResult<usize> {
        self.send_outboxes(es)?;
        let mut answers = 0;
        for k in 0..self.sockets.len() {
            loop {
                let chunk = self.inbox.borrow_mut().chunks[k].pop_front();
                let Some(bytes) = chunk else { break };
                answers += deliver(es, k, &bytes)?;
            }
        }
        Ok(answers)
    }

    fn in_transit(&self, conn: usize) -> usize {
        self.inbox.borrow().chunks.get(conn).map_or(0, |c| c.len())
    }
}

impl Drop for WsHost {
    fn drop(&mut self) {
        for ws in &self.sockets {
            ws.set_onmessage(None);
            ws.set_onopen(None);
            ws.set_onclose(None);
            let _ = ws.close();
        }
    }
}

/// `performance.now()` in nanoseconds.
pub fn performance_clock() -> Clock {
    let perf = web_sys::window().and_then(|w| w.performance());
    Clock::from_host(Box::new(move || perf.as_ref().map_or(0.0, |p| p.now() * 1e6) as u64))
}

/// One step of a live run (in step mode, one async request transition or one wait):
/// when the run is Blocked, the step is the wait for input on its sockets.
pub async fn step_live(run: &mut QueryRun<WsHost>) -> Step {
    if run.is_done() {
        return if matches!(run.phase, crate::run::Phase::Failed(_)) { Step::Failed } else { Step::Finished };
    }
    let step = run.poll();
    if step != Step::Blocked {
        return step;
    }
    let conns = run.waiting_on().to_vec();
    if let Err(e) = run.host.wait_any(&conns).await {
        run.wait_failed(ExecError::Protocol(e));
    }
    Step::Waited
}

/// Drives a live run to its end: poll; when Blocked, await input on the sockets.
pub async fn run_live(run: &mut QueryRun<WsHost>) -> ExecResult<()> {
    while !run.is_done() {
        if run.poll() == Step::Blocked {
            let conns = run.waiting_on().to_vec();
            if let Err(e) = run.host.wait_any(&conns).await {
                run.wait_failed(ExecError::Protocol(e));
            }
        }
    }
    match &run.phase {
        crate::run::Phase::Failed(e) => Err(e.clone()),
        _ => Ok(()),
    }
}
