//! A small, bounded static-file HTTP/1.1 service: the demo page (`web/`) and the wasm
//! package (`pkg/`), and nothing else.
//!
//! Invariants:
//!
//! * Only regular files under the two roots are served: `/` is `web/index.html`,
//!   `/pkg/...` is under `pkg/`, every other path is under `web/`. Path segments are
//!   percent-decoded one by one and refused when empty, `.`-prefixed (`.`, `..`, dot
//!   files) or holding `/`, `\` or NUL; the resolved path is canonicalized (symlinks
//!   followed) and must stay inside the canonicalized root; it must be a regular file
//!   (checked before opening, and again on the opened descriptor, which is opened
//!   non-blocking so a FIFO swapped in can never hang us). Every refusal is a bare 404.
//! * Files are streamed in bounded chunks with the Content-Length of their metadata.
//! * GET and HEAD only (others: 405 with `Allow`).
//! * The `Host` header is checked against loopback names and configured extra names
//!   (DNS rebinding); a missing Host on HTTP/1.1 is a 400, a foreign one a 403.
//! * Bounded: request head size (431 above it), head-read timeout, inactivity timeout
//!   for slow readers and writers, a cap on connections in total and per client IP
//!   (over the cap: a 503 and close, while the others keep being served).
//!
//! Entry points: [`serve`] runs a whole server on a listener until a shutdown future
//! resolves. A server of its own (a WebSocket relay, say) can reuse the pieces:
//! [`ConnLimits`] for the caps, [`IdleIo`] and [`http1_builder`] for the bounded
//! connection, and [`respond`] to answer a request it does not handle itself.
//!
//! PostgreSQL has no counterpart.

use hyper::body::{Body as HttpBody, Bytes, Frame, SizeHint};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

/// Which `Host` values a request may carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostCheck {
    /// Any Host (a server bound beyond loopback with no `--allow-host`).
    Off,
    /// `localhost`, `127.0.0.1` and `[::1]` (any port), plus these names (any port).
    Allow(Vec<String>),
}

/// What the service serves and how it bounds its clients.
#[derive(Clone, Debug)]
pub struct Config {
    /// Root of every path but `/pkg/...`; `/` is `index.html` in it.
    pub web_root: PathBuf,
    /// Root of `/pkg/...`.
    pub pkg_root: PathBuf,
    pub host_check: HostCheck,
    /// Largest request head (request line and headers); above it: 431.
    pub max_header_bytes: usize,
    /// Time a client has to send a complete request head, counted from when the
    /// server starts waiting for it (also bounds idle keep-alive connections).
    pub header_timeout: Duration,
    /// A connection on which nothing could be read or written for this long is closed
    /// (slow readers of a response, stalled writers).
    pub idle_timeout: Duration,
    /// Open connections in total; above it new ones get a 503 and are closed.
    pub max_connections: usize,
    /// Open connections per client IP address; above it the same.
    pub max_per_client: usize,
    /// On shutdown, how long open connections get to finish their response.
    pub shutdown_grace: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            web_root: PathBuf::from("web"),
            pkg_root: PathBuf::from("pkg"),
            host_check: HostCheck::Allow(Vec::new()),
            max_header_bytes: 8 * 1024,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            max_connections: 256,
            max_per_client: 32,
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

/// Bytes read from a file per chunk of a response body.
const CHUNK: usize = 64 * 1024;

/// The answer to a connection over the caps; written without waiting, then closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\
Content-Length: 17\r\nRetry-After: 1\r\nConnection: close\r\n\r\ntoo many clients\n";

// ---------------------------------------------------------------------------------
// The server

/// Serves `config` on `listener` until `shutdown` resolves, then stops accepting, lets
/// open connections finish their current response (up to `shutdown_grace`) and returns.
pub async fn serve(listener: TcpListener, config: Config, shutdown: impl Future<Output = ()>) -> io::Result<()> {
    let config = Arc::new(config);
    let limits = Arc::new(ConnLimits::new(config.max_connections, config.max_per_client));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut tasks = accept_loop(
        listener,
        limits,
        shutdown,
        |stream, _peer| serve_connection(stream, config.clone(), stop_rx.clone()),
        refuse_busy,
    )
    .await;
    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(config.shutdown_grace, async { while tasks.join_next().await.is_some() {} }).await;
    tasks.abort_all();
    Ok(())
}

/// Accepts connections until `shutdown` resolves (then stops listening): each within
/// `limits` runs `handle` as a task holding its permit; one over the caps goes to
/// `refused`. Returns the tasks still running, for the caller's shutdown.
pub async fn accept_loop<Fut: Future<Output = ()> + Send + 'static>(
    listener: TcpListener,
    limits: Arc<ConnLimits>,
    shutdown: impl Future<Output = ()>,
    mut handle: impl FnMut(TcpStream, std::net::SocketAddr) -> Fut,
    mut refused: impl FnMut(TcpStream),
) -> tokio::task::JoinSet<()> {
    let mut tasks = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => match limits.try_acquire(peer.ip()) {
                    Some(permit) => {
                        let conn = handle(stream, peer);
                        tasks.spawn(async move {
                            conn.await;
                            drop(permit);
                        });
                    }
                    None => refused(stream),
                },
                // Out of descriptors or an aborted handshake: back off a little rather
                // than spin; the connections we hold will free descriptors.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
        }
    }
    tasks
}

/// Answers 503 to a connection over the caps, without waiting on it, and closes it.
pub fn refuse_busy(stream: TcpStream) {
    let _ = stream.try_write(BUSY);
    drop(stream);
}

/// The HTTP/1.1 connection settings of `config`: head size limit, head-read timeout.
pub fn http1_builder(config: &Config) -> hyper::server::conn::http1::Builder {
    let mut b = hyper::server::conn::http1::Builder::new();
    b.timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout)
        .max_header_size(config.max_header_bytes)
        // The read buffer bounds an incomplete head too (hyper's minimum is 8 KiB).
        .max_buf_size((config.max_header_bytes + 1024).max(8192))
        .max_headers(64);
    b
}

/// Serves one accepted connection until it closes, times out or `stop` turns true
/// (then the response under way is finished and the connection closed).
pub async fn serve_connection(stream: TcpStream, config: Arc<Config>, mut stop: tokio::sync::watch::Receiver<bool>) {
    let _ = stream.set_nodelay(true);
    let io = TokioIo::new(IdleIo::new(stream, config.idle_timeout));
    let svc_config = config.clone();
    let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let config = svc_config.clone();
        async move { Ok::<_, std::convert::Infallible>(respond(&req, &config).await) }
    });
    let conn = http1_builder(&config).serve_connection(io, service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = stop.wait_for(|s| *s) => conn.as_mut().graceful_shutdown(),
    }
    let _ = conn.await;
}

// ---------------------------------------------------------------------------------
// Connection caps

/// Counts open connections in total and per client address.
pub struct ConnLimits {
    max_total: usize,
    max_per_client: usize,
    open: Mutex<(usize, HashMap<IpAddr, usize>)>,
}

/// One counted connection; dropping it releases the slot.
pub struct ConnPermit {
    limits: Arc<ConnLimits>,
    ip: IpAddr,
}

impl ConnLimits {
    pub fn new(max_total: usize, max_per_client: usize) -> ConnLimits {
        ConnLimits { max_total, max_per_client, open: Mutex::new((0, HashMap::new())) }
    }

    /// A slot for a connection from `ip`, or `None` when a cap is reached.
    pub fn try_acquire(self: &Arc<Self>, ip: IpAddr) -> Option<ConnPermit> {
        let ip = ip.to_canonical();
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let (total, per) = &mut *open;
        let mine = per.get(&ip).copied().unwrap_or(0);
        if *total >= self.max_total || mine >= self.max_per_client {
            return None;
        }
        *total += 1;
        per.insert(ip, mine + 1);
        Some(ConnPermit { limits: self.clone(), ip })
    }
}

impl Drop for ConnPermit {
    fn drop(&mut self) {
        let mut open = self.limits.open.lock().unwrap_or_else(|e| e.into_inner());
        let (total, per) = &mut *open;
        *total -= 1;
        if let Some(n) = per.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                per.remove(&self.ip);
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Inactivity timeout

/// A stream that fails with `TimedOut` once neither a read nor a write has made
/// progress for `idle`: a client that stops reading a response (or stops sending)
/// cannot hold the connection forever.
pub struct IdleIo<T> {
    inner: T,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
}

impl<T> IdleIo<T> {
    pub fn new(inner: T, idle: Duration) -> IdleIo<T> {
        IdleIo { inner, idle, deadline: Box::pin(tokio::time::sleep(idle)) }
    }

    fn progressed(&mut self) {
        let next = Instant::now() + self.idle;
        self.deadline.as_mut().reset(next);
    }

    /// Called when the inner stream is not ready: fails once the deadline has passed
    /// (and registers the task to be woken then).
    fn stalled<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, "connection idle"))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for IdleIo<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                if buf.filled().len() > before {
                    this.progressed();
                }
                Poll::Ready(r)
            }
            Poll::Pending => this.stalled(cx),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for IdleIo<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write(cx, data) {
            Poll::Ready(r) => {
                if matches!(r, Ok(n) if n > 0) {
                    this.progressed();
                }
                Poll::Ready(r)
            }
            Poll::Pending => this.stalled(cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write_vectored(cx, bufs) {
            Poll::Ready(r) => {
                if matches!(r, Ok(n) if n > 0) {
                    this.progressed();
                }
                Poll::Ready(r)
            }
            Poll::Pending => this.stalled(cx),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_flush(cx) {
            Poll::Ready(r) => Poll::Ready(r),
            Poll::Pending => this.stalled(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_shutdown(cx) {
            Poll::Ready(r) => Poll::Ready(r),
            Poll::Pending => this.stalled(cx),
        }
    }
}

// ---------------------------------------------------------------------------------
// Requests

/// The answer to one request: a file, or a refusal with a one-line text body.
/// Usable from any hyper server (the relay answers its own paths and hands the rest here).
pub async fn respond<B>(req: &Request<B>, config: &Config) -> Response<Body> {
    if let Err(status) = check_host(req, &config.host_check) {
        return text(status, status.canonical_reason().unwrap_or("refused"));
    }
    let head = match *req.method() {
        Method::GET => false,
        Method::HEAD => true,
        _ => {
            let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
            r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return r;
        }
    };
    let Some((root, rel)) = route(req.uri().path(), config) else {
        return not_found();
    };
    let opened = tokio::task::spawn_blocking(move || open_under(&root, &rel)).await;
    let Ok(Some((file, len, ty))) = opened else {
        return not_found();
    };
    let body = if head { Body::empty() } else { Body::file(tokio::fs::File::from_std(file), len) };
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ty));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    r
}

fn not_found() -> Response<Body> {
    text(StatusCode::NOT_FOUND, "not found")
}

fn text(status: StatusCode, msg: &str) -> Response<Body> {
    let body = format!("{msg}\n");
    let len = body.len();
    let mut r = Response::new(Body::bytes(Bytes::from(body)));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    r
}

/// 400 when the Host is missing (HTTP/1.1, or whenever Host checking is on) or
/// repeated or unreadable; 403 when it (or an absolute-form target's authority) is
/// not an allowed name.
fn check_host<B>(req: &Request<B>, check: &HostCheck) -> Result<(), StatusCode> {
    let mut hosts = req.headers().get_all(header::HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() {
        return Err(StatusCode::BAD_REQUEST);
    }
    let host = match host {
        Some(h) => Some(h.to_str().map_err(|_| StatusCode::BAD_REQUEST)?),
        None if req.version() == Version::HTTP_11 || *check != HostCheck::Off => return Err(StatusCode::BAD_REQUEST),
        None => None,
    };
    let HostCheck::Allow(extra) = check else {
        return Ok(());
    };
    let authority = req.uri().authority().map(|a| a.as_str());
    for h in host.into_iter().chain(authority) {
        if !host_allowed(h, extra) {
            return Err(StatusCode::FORBIDDEN);
        }
    }
    Ok(())
}

/// Whether `host` (a Host header value, with or without port) is a loopback name or
/// one of `extra` (compared without port, case-insensitively).
pub fn host_allowed(host: &str, extra: &[String]) -> bool {
    let Some(name) = host_name(host) else {
        return false;
    };
    let name = name.to_ascii_lowercase();
    matches!(name.as_str(), "localhost" | "127.0.0.1" | "[::1]")
        || extra.iter().any(|e| host_name(e).is_some_and(|n| n.eq_ignore_ascii_case(&name)))
}

/// The name part of `name[:port]` or `[v6][:port]`; `None` if malformed.
fn host_name(host: &str) -> Option<&str> {
    let (name, rest) = if host.starts_with('[') {
        let end = host.find(']')?;
        (&host[..=end], &host[end + 1..])
    } else {
        host.split_at(host.find(':').unwrap_or(host.len()))
    };
    let port_ok = match rest.strip_prefix(':') {
        None => rest.is_empty(),
        // A port is a number a port can be (`localhost:99999` is not a host).
        Some(p) => p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok_and(|n| n > 0),
    };
    (!name.is_empty() && port_ok).then_some(name)
}

/// The root and the decoded segments under it that `path` names, or `None` if the path
/// is refused: `/` is `web/index.html`, `/pkg/...` is under `pkg/`, the rest under `web/`.
fn route(path: &str, config: &Config) -> Option<(PathBuf, Vec<String>)> {
    let rest = path.strip_prefix('/')?;
    if rest.is_empty() {
        return Some((config.web_root.clone(), vec!["index.html".to_string()]));
    }
    let mut segments = rest.split('/').map(decode_segment).collect::<Option<Vec<String>>>()?;
    if segments.len() > 1 && segments[0] == "pkg" && rest.starts_with("pkg/") {
        segments.remove(0);
        return Some((config.pkg_root.clone(), segments));
    }
    Some((config.web_root.clone(), segments))
}

/// One percent-decoded path segment, or `None` if it is empty, starts with `.`, holds
/// `/` (an encoded slash), `\` or NUL, is badly encoded or is not UTF-8.
fn decode_segment(raw: &str) -> Option<String> {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3)?;
            let digit = |c: u8| (c as char).to_digit(16);
            out.push((digit(hex[0])? * 16 + digit(hex[1])?) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    let s = String::from_utf8(out).ok()?;
    if s.is_empty() || s.starts_with('.') || s.contains(['/', '\\', '\0']) {
        return None;
    }
    Some(s)
}

/// Opens `root/segments...` if, symlinks resolved, it is a regular file inside `root`:
/// the file, its length and its MIME type. Blocking.
fn open_under(root: &Path, segments: &[String]) -> Option<(std::fs::File, u64, &'static str)> {
    let root = std::fs::canonicalize(root).ok()?;
    let mut path = root.clone();
    path.extend(segments);
    let real = std::fs::canonicalize(&path).ok()?;
    if !real.starts_with(&root) || !std::fs::metadata(&real).ok()?.is_file() {
        return None;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking: should the file be swapped for a FIFO after the check above,
        // opening it still returns at once (and the check below refuses it).
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY);
    }
    let file = options.open(&real).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    Some((file, meta.len(), mime_type(&real)))
}

/// The Content-Type of a file by its extension.
pub fn mime_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json" | "map") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("txt" | "md") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

// ---------------------------------------------------------------------------------
// Response bodies

/// A response body: nothing, a few bytes, or a file streamed in `CHUNK`-sized reads.
pub struct Body {
    kind: BodyKind,
}

enum BodyKind {
    Bytes(Option<Bytes>),
    File { file: tokio::fs::File, remaining: u64, buf: Box<[u8]> },
}

impl Body {
    pub fn empty() -> Body {
        Body { kind: BodyKind::Bytes(None) }
    }

    pub fn bytes(b: Bytes) -> Body {
        Body { kind: BodyKind::Bytes(Some(b)) }
    }

    /// The first `len` bytes of `file`; a file that turns out shorter fails the body
    /// (the connection is closed rather than sending fewer bytes than announced).
    pub fn file(file: tokio::fs::File, len: u64) -> Body {
        let buf = vec![0; CHUNK.min(len as usize)].into_boxed_slice();
        Body { kind: BodyKind::File { file, remaining: len, buf } }
    }
}

impl HttpBody for Body {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match &mut self.get_mut().kind {
            BodyKind::Bytes(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            BodyKind::File { file, remaining, buf } => {
                if *remaining == 0 {
                    return Poll::Ready(None);
                }
                let want = (*remaining).min(buf.len() as u64) as usize;
                let mut rb = ReadBuf::new(&mut buf[..want]);
                ready!(Pin::new(file).poll_read(cx, &mut rb))?;
                let n = rb.filled().len();
                if n == 0 {
                    return Poll::Ready(Some(Err(io::Error::new(io::ErrorKind::UnexpectedEof, "file shrank"))));
                }
                *remaining -= n as u64;
                Poll::Ready(Some(Ok(Frame::data(Bytes::copy_from_slice(rb.filled())))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            BodyKind::Bytes(b) => b.is_none(),
            BodyKind::File { remaining, .. } => *remaining == 0,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            BodyKind::Bytes(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            BodyKind::File { remaining, .. } => SizeHint::with_exact(*remaining),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_decoded_and_refused() {
        assert_eq!(decode_segment("a%20b.js").as_deref(), Some("a b.js"));
        for bad in ["", ".", "..", "%2e%2e", ".git", "a%2Fb", "a%5cb", "a%00", "%zz", "%2", "%ff"] {
            assert_eq!(decode_segment(bad), None, "{bad}");
        }
    }

    #[test]
    fn routes() {
        let c = Config::default();
        assert_eq!(route("/", &c), Some((PathBuf::from("web"), vec!["index.html".into()])));
        assert_eq!(route("/pkg/a.wasm", &c), Some((PathBuf::from("pkg"), vec!["a.wasm".into()])));
        assert_eq!(route("/pkg", &c), Some((PathBuf::from("web"), vec!["pkg".into()])));
        assert_eq!(route("/%70kg/a", &c), Some((PathBuf::from("web"), vec!["pkg".into(), "a".into()])));
        for bad in ["//etc/passwd", "/pkg//etc/passwd", "/%2Fetc", "/a/", "/../x", "x"] {
            assert_eq!(route(bad, &c), None, "{bad}");
        }
    }

    #[test]
    fn hosts() {
        let extra = vec!["demo.test".to_string()];
        for ok in ["localhost", "localhost:8080", "127.0.0.1:1", "[::1]", "[::1]:80", "LOCALHOST", "demo.test:9"] {
            assert!(host_allowed(ok, &extra), "{ok}");
        }
        for bad in ["evil.example", "localhost:", "localhost:x", "[::1", "[::1]x", "user@localhost", "", "127.0.0.2"] {
            assert!(!host_allowed(bad, &extra), "{bad}");
        }
    }
}
