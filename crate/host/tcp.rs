//! A native host for real PostgreSQL servers: one TCP connection per foreign server.
//!
//! Sockets are non-blocking; waiting is poll(2) on the waited connections (as libpq's
//! callers wait on PQsocket), bounded by a timeout so a server that never answers fails
//! the query instead of hanging it. Run it with a real clock (`Clock::from_host`).
//!
//! Invariants:
//! - A connection is opened by its first write, the startup packet, so backends start
//!   when postgres_fdw's `GetConnection` would start them (server after server at
//!   ExecInit), not all before the run.
//! - A statement is on the wire when the executor sends it: `TcpHost::writer` writes at
//!   send time (as `PQsendQuery` does), so an Append that goes on with other children
//!   does not hold a FETCH back until it next waits.
//! - Every wait and every write is bounded by `timeout`: a silent server fails the query
//!   with a message naming the connections, never a hang.
//! - A closed socket, a failed read or write is an error naming the connection and its
//!   address; it is never read as end of data.
//! - Dropping the host sends Terminate on every open connection, as `PQfinish` does.
//!
//! Where it departs from PostgreSQL: a cancel goes out on a fresh connection with the
//! backend key, as libpq's `PQcancel` does (`pgfdw_cancel_query`, postgres_fdw's
//! connection.c), but nothing waits for the canceled statement's answer here: the run
//! drains it. No TLS and no authentication but trust: live runs that need them go
//! through the relay (`cli/src/relay.rs`).

use crate::executor::estate::{EState, ExecError, ExecResult};
use crate::host::{deliver, Host, WaitingHost};
use crate::trace::TraceKind;
use bytes::BytesMut;
use postgres_protocol::message::frontend;
use std::cell::RefCell;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::rc::Rc;
use std::time::{Duration, Instant};

pub struct TcpHost {
    /// Shared with the writer (`writer`): both write on the same sockets, and either
    /// may be the one that opens a connection.
    sockets: Rc<RefCell<Sockets>>,
    /// How long `wait` may wait for an answer.
    pub timeout: Duration,
}

/// The servers' addresses and the sockets opened so far (`streams[i]` serves
/// connection i).
struct Sockets {
    addrs: Vec<SocketAddr>,
    streams: Vec<Option<TcpStream>>,
    timeout: Duration,
}

impl Sockets {
    /// Writes on connection `k`, opening it first if this is its first write (the
    /// startup packet): postgres_fdw connects in GetConnection, server after server at
    /// ExecInit, so a connection opened before the run would start every backend (the
    /// postmaster forks at accept) ahead of PostgreSQL's own timing.
    fn write(&mut self, k: usize, bytes: &[u8]) -> std::io::Result<()> {
        if self.streams[k].is_none() {
            let s = TcpStream::connect_timeout(&self.addrs[k], Duration::from_secs(5))?;
            s.set_nodelay(true)?;
            s.set_nonblocking(true)?;
            self.streams[k] = Some(s);
        }
        let stream = self.streams[k].as_mut().expect("opened above");
        write_fully(stream, bytes, Instant::now() + self.timeout)
    }
}

impl TcpHost {
    /// A host for the servers at `addrs` (`addrs[i]` serves connection i). Nothing is
    /// opened yet: a connection is opened when the executor writes its startup packet.
    pub fn new(addrs: &[SocketAddr]) -> TcpHost {
        let timeout = Duration::from_secs(30);
        let sockets = Sockets { addrs: addrs.to_vec(), streams: addrs.iter().map(|_| None).collect(), timeout };
        TcpHost { sockets: Rc::new(RefCell::new(sockets)), timeout }
    }

    /// A writer for `EState::writer`: the executor's statements go on the wire when
    /// they are sent.
    pub fn writer(&self) -> crate::executor::estate::Writer {
        let sockets = self.sockets.clone();
        Rc::new(RefCell::new(move |k: usize, bytes: &[u8]| sockets.borrow_mut().write(k, bytes)))
    }

    fn addr(&self, k: usize) -> SocketAddr {
        self.sockets.borrow().addrs[k]
    }

    fn write_all(&mut self, k: usize, bytes: &[u8]) -> ExecResult<()> {
        let r = self.sockets.borrow_mut().write(k, bytes);
        r.map_err(|e| ExecError::Protocol(format!("connection {k} ({}): write failed: {e}", self.addr(k))))
    }

    fn send_cancel(&self, k: usize, es: &EState) {
        let Some((pid, key)) = es.conns[k].backend_key else {
            return;
        };
        let mut buf = BytesMut::new();
        frontend::cancel_request(pid, key, &mut buf);
        if let Ok(mut s) = TcpStream::connect_timeout(&self.addr(k), Duration::from_secs(5)) {
            let _ = s.write_all(&buf);
        }
    }

    /// Reads whatever is available on connection `k`; returns the answers completed.
    /// A connection not opened yet has nothing to read.
    fn read_available(&mut self, k: usize, es: &mut EState) -> ExecResult<usize> {
        let mut buf = [0u8; 64 * 1024];
        let mut answers = 0;
        loop {
            let read = match self.sockets.borrow_mut().streams[k].as_mut() {
                None => return Ok(answers),
                Some(s) => s.read(&mut buf),
            };
            match read {
                Ok(0) => {
                    return Err(ExecError::Protocol(format!(
                        "connection {k} ({}): server closed the connection",
                        self.addr(k)
                    )))
                }
                Ok(n) => answers += deliver(es, k, &buf[..n])?,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(answers),
                Err(e) => {
                    return Err(ExecError::Protocol(format!("connection {k} ({}): read failed: {e}", self.addr(k))))
                }
            }
        }
    }

    fn connections(&self) -> usize {
        self.sockets.borrow().streams.len()
    }

    fn flush(&mut self, es: &mut EState) -> ExecResult<()> {
        if let Some(e) = es.write_error.take() {
            return Err(ExecError::Protocol(e));
        }
        for k in 0..self.connections() {
            while let Some(out) = es.conns[k].outbox.pop_front() {
                self.write_all(k, &out.bytes)?;
            }
            es.record_written(k);
            if es.conns[k].cancel_requested {
                es.conns[k].cancel_requested = false;
                self.send_cancel(k, es);
                es.record(|| TraceKind::Cancel { conn: k });
            }
        }
        Ok(())
    }
}

impl Host for TcpHost {
    fn pump(&mut self, es: &mut EState) -> ExecResult<usize> {
        self.flush(es)?;
        let mut answers = 0;
        for k in 0..self.connections() {
            answers += self.read_available(k, es)?;
        }
        // Queries released by those answers go out now.
        self.flush(es)?;
        Ok(answers)
    }

    fn in_transit(&self, _conn: usize) -> usize {
        0 // what is on the wire is the connection's in-flight queue, checked there
    }

    fn flush_writes(&mut self, es: &mut EState) -> ExecResult<()> {
        self.flush(es)
    }
}

impl WaitingHost for TcpHost {
    fn wait(&mut self, es: &mut EState, conns: &[usize]) -> ExecResult<()> {
        if conns.is_empty() {
            return Err(ExecError::Internal("the executor waits on an empty set of connections".into()));
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            self.flush(es)?;
            let mut answers = 0;
            for &k in conns {
                answers += self.read_available(k, es)?;
            }
            if answers > 0 {
                return self.flush(es);
            }
            if Instant::now() >= deadline {
                return Err(ExecError::Protocol(format!(
                    "no answer on connections {conns:?} within {:?}",
                    self.timeout
                )));
            }
            let sockets = self.sockets.borrow();
            let waited: Vec<&TcpStream> = conns.iter().filter_map(|&k| sockets.streams[k].as_ref()).collect();
            if waited.is_empty() {
                return Err(ExecError::Internal(format!(
                    "the executor waits on connections {conns:?}, none of them open"
                )));
            }
            poll_ready(&waited, libc::POLLIN, deadline);
        }
    }
}

/// Writes all of `bytes` on a non-blocking socket, waiting for room until `deadline`.
fn write_fully(stream: &mut TcpStream, mut bytes: &[u8], deadline: Instant) -> std::io::Result<()> {
    while !bytes.is_empty() {
        match stream.write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                poll_ready(&[&*stream], libc::POLLOUT, deadline)
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Sleeps until one of `streams` is ready for `events` (or has failed), or until
/// `deadline`. The caller then tries the sockets again: a spurious wake-up costs a loop.
fn poll_ready(streams: &[&TcpStream], events: libc::c_short, deadline: Instant) {
    use std::os::fd::AsRawFd;
    let mut fds: Vec<libc::pollfd> =
        streams.iter().map(|s| libc::pollfd { fd: s.as_raw_fd(), events, revents: 0 }).collect();
    let ms = deadline.saturating_duration_since(Instant::now()).as_millis().clamp(1, i32::MAX as u128) as i32;
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs for the whole call,
    // and the descriptors stay open (the streams are borrowed).
    unsafe {
        libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms);
    }
}

impl Drop for TcpHost {
    /// Releases every backend: Terminate, then close.
    fn drop(&mut self) {
        for s in self.sockets.borrow_mut().streams.iter_mut().flatten() {
            let mut buf = BytesMut::new();
            frontend::terminate(&mut buf);
            let _ = s.set_nonblocking(false);
            let _ = s.write_all(&buf);
        }
    }
}
