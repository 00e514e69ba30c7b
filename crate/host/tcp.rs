//! A native host for real PostgreSQL servers: one TCP connection per foreign server.
//!
//! Sockets are non-blocking; waiting is poll(2) on the waited connections (as libpq's
//! callers wait on PQsocket), bounded by a timeout so a server that never answers fails
//! the query instead of hanging it. A cancel request goes out on a fresh connection with the backend key,
//! as libpq's PQcancel does. Run it with a real clock (`Clock::from_host`).

use crate::estate::{EState, ExecError, ExecResult};
use crate::host::{deliver, Host, WaitingHost};
use crate::trace::TraceKind;
use bytes::BytesMut;
use postgres_protocol::message::frontend;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

pub struct TcpHost {
    addrs: Vec<SocketAddr>,
    streams: Vec<TcpStream>,
    /// How long `wait` may wait for an answer.
    pub timeout: Duration,
}

impl TcpHost {
    /// Connects to each server (`addrs[i]` serves connection i).
    pub fn connect(addrs: &[SocketAddr]) -> std::io::Result<TcpHost> {
        let mut streams = Vec::new();
        for a in addrs {
            let s = TcpStream::connect_timeout(a, Duration::from_secs(5))?;
            s.set_nodelay(true)?;
            s.set_nonblocking(true)?;
            streams.push(s);
        }
        Ok(TcpHost { addrs: addrs.to_vec(), streams, timeout: Duration::from_secs(30) })
    }

    /// A writer for `EState::writer`: the executor's statements go on the wire when
    /// they are sent (through clones of the same sockets).
    pub fn writer(&self) -> std::io::Result<crate::estate::Writer> {
        let mut streams = self.streams.iter().map(TcpStream::try_clone).collect::<std::io::Result<Vec<_>>>()?;
        let timeout = self.timeout;
        Ok(std::rc::Rc::new(std::cell::RefCell::new(move |k: usize, bytes: &[u8]| {
            write_fully(&mut streams[k], bytes, Instant::now() + timeout)
        })))
    }

    fn write_all(&mut self, k: usize, bytes: &[u8]) -> ExecResult<()> {
        write_fully(&mut self.streams[k], bytes, Instant::now() + self.timeout)
            .map_err(|e| ExecError::Protocol(format!("connection {k} ({}): write failed: {e}", self.addrs[k])))
    }

    fn send_cancel(&self, k: usize, es: &EState) {
        let Some((pid, key)) = es.conns[k].backend_key else {
            return;
        };
        let mut buf = BytesMut::new();
        frontend::cancel_request(pid, key, &mut buf);
        if let Ok(mut s) = TcpStream::connect_timeout(&self.addrs[k], Duration::from_secs(5)) {
            let _ = s.write_all(&buf);
        }
    }

    /// Reads whatever is available on connection `k`; returns the answers completed.
    fn read_available(&mut self, k: usize, es: &mut EState) -> ExecResult<usize> {
        let mut buf = [0u8; 64 * 1024];
        let mut answers = 0;
        loop {
            match self.streams[k].read(&mut buf) {
                Ok(0) => {
                    return Err(ExecError::Protocol(format!(
                        "connection {k} ({}): server closed the connection",
                        self.addrs[k]
                    )))
                }
                Ok(n) => answers += deliver(es, k, &buf[..n])?,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(answers),
                Err(e) => {
                    return Err(ExecError::Protocol(format!("connection {k} ({}): read failed: {e}", self.addrs[k])))
                }
            }
        }
    }

    fn flush(&mut self, es: &mut EState) -> ExecResult<()> {
        if let Some(e) = es.write_error.take() {
            return Err(ExecError::Protocol(e));
        }
        for k in 0..self.streams.len() {
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
        for k in 0..self.streams.len() {
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
            let waited: Vec<&TcpStream> = conns.iter().map(|&k| &self.streams[k]).collect();
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
        for s in &mut self.streams {
            let mut buf = BytesMut::new();
            frontend::terminate(&mut buf);
            let _ = s.set_nonblocking(false);
            let _ = s.write_all(&buf);
        }
    }
}
