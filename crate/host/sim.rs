//! The simulated host: moves the executor's outgoing bytes through the simulated
//! network (`sim`'s model: uplink, backend, downlink, per connection) to the shard
//! servers and their answers back, and moves time: on the virtual clock it jumps to the
//! next arrival, on a real clock it sleeps until then (`Sleeper`).
//!
//! A message's answer is computed by its `ShardServer` as soon as the message is put on
//! the network; the model only decides when those bytes arrive (`Delivery::at`).
//!
//! Invariants:
//! - A message leaves at the time the executor wrote it (`Outgoing::at`), not when the
//!   host next pumps: so `flush_writes` has nothing to do here, and a step boundary does
//!   not change a run's times.
//! - Per connection, answers are delivered in the order their queries were sent, and
//!   never before their arrival time: `up_free`, `backend_free` and `down_free` only
//!   grow, so arrival times never decrease along the queue.
//! - A cancel turns every answer to a query still on its way into one 57014 error each,
//!   so the client's FIFO of statements in flight stays aligned; the answer to the
//!   startup packet is not a query and is left alone.
//! - Waiting on nothing, or on connections with nothing on the way, is an error (seed
//!   000's `Assert(added)` crash and infinite loop would be a hang here).
//! - `LinkStats` counts only what the lower bound of `bench` needs: busy times of each
//!   link and backend, and the most queries in flight at once.
//!
//! PostgreSQL has no counterpart: this stands for the network and the remote backends.
//! Departures a reader may notice: a cancel here also errors answers the backend had
//! already produced but not yet delivered, where a real cancel (`PQcancel`) only
//! interrupts the statement the backend is running when it arrives; bandwidth and
//! round-trip time are fixed per connection, with no TCP windows or packet loss.

use crate::executor::estate::{EState, ExecError, ExecResult};
use crate::host::{deliver, Host, WaitingHost};
use crate::remote::Outgoing;
use crate::sim::ShardServer;
use crate::trace::TraceKind;
use std::collections::VecDeque;

/// Network figures of one connection.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct LinkParams {
    pub rtt_ns: u64,
    /// Bytes per second in each direction.
    pub bandwidth_bps: u64,
}

impl Default for LinkParams {
    fn default() -> Self {
        LinkParams { rtt_ns: 1_000_000, bandwidth_bps: 125_000_000 }
    }
}

impl LinkParams {
    fn transfer_ns(&self, bytes: usize) -> u64 {
        (bytes as u128 * 1_000_000_000 / self.bandwidth_bps.max(1) as u128) as u64
    }
}

/// Busy-time accounting of one connection, for the lower bound of the benchmark.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LinkStats {
    pub queries: u64,
    pub fetches: u64,
    pub server_ns: u64,
    /// Server time of the queries that were FETCHes (sync runs send one statement each).
    pub fetch_server_ns: u64,
    pub up_transfer_ns: u64,
    pub down_transfer_ns: u64,
    /// Transfer time of the answers to FETCHes (rows the async plan must move too).
    pub fetch_down_transfer_ns: u64,
    /// The most queries on the way at once (sent, answer not yet delivered).
    pub max_in_flight: usize,
}

#[derive(Clone)]
struct Link {
    params: LinkParams,
    up_free: u64,
    down_free: u64,
    backend_free: u64,
    /// Responses on their way to the client: (arrival time, bytes), in order.
    deliveries: VecDeque<Delivery>,
    /// Queries sent whose answers are not delivered yet.
    queries_in_flight: usize,
    stats: LinkStats,
}

/// An answer on its way to the client.
#[derive(Clone)]
struct Delivery {
    at: u64,
    bytes: Vec<u8>,
    /// ReadyForQuery messages in it (answers to queries or to the startup packet).
    answers: usize,
    /// It answers a Query (not the startup packet): a cancel can hit it.
    query: bool,
}

/// How the host waits on a real clock (the core never sleeps by itself).
pub type Sleeper = std::rc::Rc<dyn Fn(u64)>;

#[derive(Clone)]
pub struct SimHost {
    /// `servers[i]` is the backend of connection i.
    pub servers: Vec<ShardServer>,
    links: Vec<Link>,
    /// None on the virtual clock; on the real clock, sleeps for the given nanoseconds.
    sleeper: Option<Sleeper>,
}

impl SimHost {
    pub fn new(servers: Vec<ShardServer>, params: Vec<LinkParams>) -> SimHost {
        let links = params
            .into_iter()
            .map(|params| Link {
                params,
                up_free: 0,
                down_free: 0,
                backend_free: 0,
                deliveries: VecDeque::new(),
                queries_in_flight: 0,
                stats: LinkStats::default(),
            })
            .collect();
        SimHost { servers, links, sleeper: None }
    }

    /// Makes the host wait for real (with a real clock in the EState).
    pub fn set_sleeper(&mut self, sleeper: Sleeper) {
        self.sleeper = Some(sleeper);
    }

    pub fn link_stats(&self) -> Vec<LinkStats> {
        self.links.iter().map(|l| l.stats.clone()).collect()
    }

    pub fn link_params(&self) -> Vec<LinkParams> {
        self.links.iter().map(|l| l.params).collect()
    }

    /// Sends what the executor wrote, handles cancel requests, and delivers what has
    /// arrived by now. Returns how many responses were delivered.
    fn pump_impl(&mut self, es: &mut EState) -> ExecResult<usize> {
        self.flush_outboxes(es);
        for k in 0..es.conns.len() {
            if es.conns[k].cancel_requested {
                es.conns[k].cancel_requested = false;
                self.cancel(k);
                es.record(|| TraceKind::Cancel { conn: k });
            }
        }
        self.deliver_due(es)
    }

    fn transmit(&mut self, k: usize, out: &Outgoing) {
        let (t, bytes) = (out.at, &out.bytes[..]);
        let link = &mut self.links[k];
        let p = link.params;
        let up = p.transfer_ns(bytes.len());
        link.up_free = t.max(link.up_free) + up;
        link.stats.up_transfer_ns += up;
        let arrive = link.up_free + p.rtt_ns / 2;
        let start = arrive.max(link.backend_free);
        let before = self.servers[k].answers_sent;
        let (response, cost) = self.servers[k].handle(bytes);
        let answers = self.servers[k].answers_sent - before;
        link.stats.server_ns += cost;
        let is_fetch = out.fetch;
        if out.statement {
            link.stats.queries += 1;
            if is_fetch {
                link.stats.fetches += 1;
                link.stats.fetch_server_ns += cost;
            }
            link.queries_in_flight += 1;
            link.stats.max_in_flight = link.stats.max_in_flight.max(link.queries_in_flight);
        }
        let done = start + cost;
        link.backend_free = done;
        if response.is_empty() {
            return;
        }
        let down = p.transfer_ns(response.len());
        link.down_free = done.max(link.down_free) + down;
        link.stats.down_transfer_ns += down;
        if is_fetch {
            link.stats.fetch_down_transfer_ns += down;
        }
        link.deliveries.push_back(Delivery {
            at: link.down_free + p.rtt_ns / 2,
            bytes: response,
            answers,
            query: out.statement,
        });
    }

    /// A cancel request reaches the backend: every query answer not yet delivered
    /// becomes a "canceling statement" error (one per query, so the client's FIFO stays
    /// aligned); the answer to the startup packet is not a query and is left alone.
    fn cancel(&mut self, k: usize) {
        let server = &mut self.servers[k];
        for d in self.links[k].deliveries.iter_mut().filter(|d| d.query) {
            d.bytes = server.cancel_response();
        }
    }

    fn deliver_due(&mut self, es: &mut EState) -> ExecResult<usize> {
        let now = es.now();
        let mut delivered = 0;
        for k in 0..self.links.len() {
            while self.links[k].deliveries.front().is_some_and(|d| d.at <= now) {
                let Delivery { bytes, answers, .. } = self.links[k].deliveries.pop_front().unwrap();
                let link = &mut self.links[k];
                link.queries_in_flight = link.queries_in_flight.saturating_sub(answers);
                delivered += 1;
                deliver(es, k, &bytes)?;
            }
        }
        // Queries released from a connection's queue by those responses go out now.
        self.flush_outboxes(es);
        Ok(delivered)
    }

    /// Puts every byte the connections wrote on the network, at the time it was written.
    fn flush_outboxes(&mut self, es: &mut EState) {
        for k in 0..es.conns.len() {
            while let Some(out) = es.conns[k].outbox.pop_front() {
                self.transmit(k, &out);
            }
        }
    }

    /// Waits until one of `conns` has input. Waiting on nothing, or on connections with
    /// nothing on the way, would hang a real event loop: it is reported as an error.
    fn wait_impl(&mut self, es: &mut EState, conns: &[usize]) -> ExecResult<()> {
        if conns.is_empty() {
            return Err(ExecError::Internal("the executor waits on an empty set of connections".into()));
        }
        let next = conns.iter().filter_map(|&k| self.links.get(k)?.deliveries.front().map(|d| d.at)).min();
        let Some(t) = next else {
            return Err(ExecError::Internal(format!(
                "the executor waits on connections {conns:?} but nothing is in flight on them"
            )));
        };
        match &self.sleeper {
            None => es.clock.advance_to(t),
            Some(sleep) => {
                let now = es.now();
                if t > now {
                    sleep(t - now);
                }
            }
        }
        self.deliver_due(es).map(|_| ())
    }
}

impl WaitingHost for SimHost {
    fn wait(&mut self, es: &mut EState, conns: &[usize]) -> ExecResult<()> {
        self.wait_impl(es, conns)
    }
}

impl Host for SimHost {
    fn pump(&mut self, es: &mut EState) -> ExecResult<usize> {
        self.pump_impl(es)
    }
    fn in_transit(&self, conn: usize) -> usize {
        self.links.get(conn).map_or(0, |l| l.deliveries.len())
    }
}
