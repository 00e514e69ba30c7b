//! The start of every session the relay carries: what a client may open, and the
//! server's authentication performed on the client's behalf.
//!
//! # Protocol
//! ```text
//!  client ──SSLRequest/GSSENCRequest──▶ relay      answered 'N' (the relay, not the
//!                                                  client, speaks TLS to the server)
//!  client ──StartupMessage────────────▶ relay      checked against the target's Access:
//!         ◀──ErrorResponse (FATAL) ───             refused before a byte reaches the server
//!                                  relay ──[SSLRequest, TLS]──▶ server   (tls = require|verify-full)
//!                                  relay ──StartupMessage─────▶ server   (rebuilt from the checked fields)
//!                                  relay ◀─AuthenticationSASL/MD5/Cleartext── server
//!                                  relay ──the target's password (SCRAM-SHA-256, MD5)──▶
//!  client ◀─AuthenticationOk, ParameterStatus…, BackendKeyData, ReadyForQuery── (as the server sent them)
//!  then every byte both ways, unchanged
//! ```
//! The browser's client speaks trust authentication only; it sees exactly what a trust
//! server would send, and the credentials never leave the relay.
//!
//! # Invariants
//! * Only the target's `user` logs in, only to its `databases`, and a startup carries no
//!   parameter but `user`, `database`, `application_name`, `fallback_application_name`
//!   and `client_encoding`: `options` (`-c name=value`), `replication` and every other
//!   parameter set server settings or open other protocols, so they are refused by name
//!   (SQLSTATE 28000; an unlisted database 3D000). The refusal is logged.
//! * What the server receives is rebuilt from the checked fields, never the client's
//!   packet: nothing unchecked rides along.
//! * The startup phase is bounded: a startup packet is at most 10,000 bytes (as
//!   PostgreSQL's own limit), at most 4 SSL/GSS requests precede it, and the whole
//!   exchange with the server (TLS and authentication) takes at most the connect
//!   timeout.
//! * A CancelRequest is never relayed from a browser: the relay sends cancels itself,
//!   for the backend of the session whose client left. The CLI's loopback gateway
//!   ([`LocalGateway`]) passes its own client's cancels on, as a server would take them.
//!
//! Where it departs from PostgreSQL: the checks stand where the postmaster's
//! `ProcessStartupPacket` (postmaster.c) and `pg_hba.conf` would, and refuse with the
//! same SQLSTATEs, before the server sees the packet; toward the server the relay
//! answers as libpq does (SCRAM-SHA-256, MD5, cleartext), as PgBouncer does it.

use crate::tls::{self, ServerStream, TlsMode};
use bytes::{Buf, BytesMut};
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};
use postgres_protocol::message::frontend;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// PostgreSQL's own bound on a startup packet (`MAX_STARTUP_PACKET_LENGTH`).
const MAX_STARTUP_BYTES: usize = 10_000;
/// SSL/GSS requests a client may send before its startup packet (libpq sends one of each).
const MAX_NEGOTIATIONS: usize = 4;
/// A message during authentication larger than this is not one.
const MAX_AUTH_MESSAGE: usize = 64 * 1024;
/// Request codes in place of a protocol version.
pub(crate) const CANCEL_REQUEST: u32 = 80877102;
pub(crate) const SSL_REQUEST: u32 = 80877103;
pub(crate) const GSSENC_REQUEST: u32 = 80877104;
/// Startup parameters a client may send; everything else sets a server setting.
const ALLOWED_PARAMS: [&str; 5] =
    ["user", "database", "application_name", "fallback_application_name", "client_encoding"];

/// Who may log in through a target, and where.
#[derive(Clone, Debug)]
pub(crate) struct Access {
    /// The one role a client may use.
    pub(crate) user: String,
    /// The databases it may open (`live_*`: any whose name starts so); `None`: any
    /// the role may connect to.
    pub(crate) databases: Option<Vec<String>>,
}

/// A password the relay holds for a target; never printed.
#[derive(Clone)]
pub(crate) struct Secret(pub(crate) String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// How the relay reaches a target and proves itself to it.
#[derive(Clone, Debug)]
pub(crate) struct Upstream {
    pub(crate) tls: TlsMode,
    /// Built when the configuration is read (`None` for `disable`).
    pub(crate) tls_config: Option<Arc<rustls::ClientConfig>>,
    pub(crate) password: Option<Secret>,
}

impl Upstream {
    pub(crate) fn plain() -> Upstream {
        Upstream { tls: TlsMode::Disable, tls_config: None, password: None }
    }
}

/// A refusal: the FATAL ErrorResponse the client gets, and the line logged.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub(crate) sqlstate: &'static str,
    pub(crate) message: String,
}

impl Refusal {
    fn new(sqlstate: &'static str, message: impl Into<String>) -> Refusal {
        Refusal { sqlstate, message: message.into() }
    }

    /// PostgreSQL's ErrorResponse: severity, code and message.
    pub(crate) fn error_response(&self) -> Vec<u8> {
        let mut body = Vec::new();
        for (field, value) in [(b'S', "FATAL"), (b'V', "FATAL"), (b'C', self.sqlstate), (b'M', self.message.as_str())] {
            body.push(field);
            body.extend_from_slice(value.as_bytes());
            body.push(0);
        }
        body.push(0);
        let mut msg = vec![b'E'];
        msg.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        msg.extend(body);
        msg
    }
}

/// A client's startup parameters, as sent.
#[derive(Debug, PartialEq)]
pub(crate) struct Startup {
    pub(crate) params: Vec<(String, String)>,
}

impl Startup {
    fn get(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub(crate) fn user(&self) -> &str {
        self.get("user").unwrap_or("")
    }

    /// The database: as PostgreSQL, the user's name when none is given.
    pub(crate) fn database(&self) -> &str {
        self.get("database").filter(|d| !d.is_empty()).unwrap_or_else(|| self.user())
    }

    /// Checked against `access`; the first thing wrong is refused.
    pub(crate) fn check(&self, access: &Access) -> Result<(), Refusal> {
        if let Some((name, _)) = self.params.iter().find(|(k, _)| !ALLOWED_PARAMS.contains(&k.as_str())) {
            let why = match name.as_str() {
                "replication" => "replication connections are not permitted through this relay".to_string(),
                "options" => "startup option \"options\" is not permitted through this relay (it sets server settings)"
                    .to_string(),
                _ => format!(
                    "startup parameter \"{name}\" is not permitted through this relay (it sets a server setting)"
                ),
            };
            return Err(Refusal::new("28000", why));
        }
        if self.user() != access.user {
            return Err(Refusal::new(
                "28000",
                format!(
                    "role \"{}\" is not permitted through this relay (it logs in as \"{}\" only)",
                    self.user(),
                    access.user
                ),
            ));
        }
        if let Some(dbs) = &access.databases {
            let db = self.database();
            let listed = |d: &String| d == db || d.strip_suffix('*').is_some_and(|prefix| db.starts_with(prefix));
            if !dbs.iter().any(listed) {
                return Err(Refusal::new(
                    "3D000",
                    format!("database \"{}\" is not open through this relay", self.database()),
                ));
            }
        }
        Ok(())
    }

    /// The packet the server receives: the checked parameters, protocol 3.0.
    fn packet(&self) -> Vec<u8> {
        let mut buf = BytesMut::new();
        let params = self.params.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        frontend::startup_message(params, &mut buf).expect("checked parameters hold no NUL");
        buf.to_vec()
    }
}

/// What a client's first packets ask for.
#[derive(Debug, PartialEq)]
pub(crate) enum Opening {
    /// SSLRequest or GSSENCRequest: answer `b"N"` and read on.
    Negotiate,
    Startup(Startup),
    /// A CancelRequest, whole (only the CLI's loopback gateway passes it on).
    Cancel(Vec<u8>),
}

/// Reads a client's untyped start-up packets from the bytes it sends, in chunks of any
/// size. Sans-IO: the relay (WebSocket) and the local gateway (TCP) feed it.
#[derive(Default)]
pub(crate) struct StartupReader {
    buf: Vec<u8>,
    negotiations: usize,
}

impl StartupReader {
    pub(crate) fn feed(&mut self, data: &[u8]) -> Result<(), Refusal> {
        self.buf.extend_from_slice(data);
        // A startup packet and what pipelined statements follow it in one write; more
        // than that before the startup is answered is not a client we serve.
        if self.buf.len() > MAX_STARTUP_BYTES + (1 << 20) {
            return Err(Refusal::new("08P01", "too many bytes before the startup packet was answered"));
        }
        Ok(())
    }

    /// The next complete packet, if one is in.
    pub(crate) fn next(&mut self) -> Result<Option<Opening>, Refusal> {
        if self.buf.len() < 8 {
            return Ok(None);
        }
        let len = u32::from_be_bytes(self.buf[..4].try_into().expect("4 bytes")) as usize;
        if !(8..=MAX_STARTUP_BYTES).contains(&len) {
            return Err(Refusal::new("08P01", format!("invalid startup packet length {len}")));
        }
        if self.buf.len() < len {
            return Ok(None);
        }
        let code = u32::from_be_bytes(self.buf[4..8].try_into().expect("4 bytes"));
        if code == CANCEL_REQUEST && self.negotiations == 0 {
            return Ok(Some(Opening::Cancel(self.buf.drain(..len).collect())));
        }
        let body: Vec<u8> = self.buf.drain(..len).skip(8).collect();
        match code {
            SSL_REQUEST | GSSENC_REQUEST => {
                self.negotiations += 1;
                if self.negotiations > MAX_NEGOTIATIONS {
                    return Err(Refusal::new("08P01", "too many SSL/GSS requests"));
                }
                Ok(Some(Opening::Negotiate))
            }
            CANCEL_REQUEST => Err(Refusal::new("08P01", "a cancel request after an SSL/GSS request")),
            v if v >> 16 == 3 => parse_params(&body).map(|params| Some(Opening::Startup(Startup { params }))),
            v => Err(Refusal::new("08P01", format!("unsupported frontend protocol {}.{}", v >> 16, v & 0xffff))),
        }
    }

    /// The bytes that followed the startup packet (statements sent behind it).
    pub(crate) fn rest(self) -> Vec<u8> {
        self.buf
    }
}

/// `name\0value\0 … \0`.
fn parse_params(body: &[u8]) -> Result<Vec<(String, String)>, Refusal> {
    let bad = || Refusal::new("08P01", "invalid startup packet layout");
    let text = std::str::from_utf8(body).map_err(|_| bad())?;
    // Pairs `name\0value\0`, then the list's own terminating `\0`.
    let text = text.strip_suffix("\0\0").ok_or_else(bad)?;
    let mut fields = text.split('\0');
    let mut params: Vec<(String, String)> = Vec::new();
    while let Some(name) = fields.next() {
        if name.is_empty() {
            return Err(bad());
        }
        let value = fields.next().ok_or_else(bad)?;
        if params.iter().any(|(k, _)| k == name) {
            return Err(Refusal::new("08P01", format!("startup parameter \"{name}\" given twice")));
        }
        params.push((name.to_string(), value.to_string()));
    }
    if params.is_empty() || !params.iter().any(|(k, _)| k == "user") {
        return Err(Refusal::new("28000", "no PostgreSQL user name specified in startup packet"));
    }
    Ok(params)
}

/// Why opening the server side failed: what the client gets and what is logged.
#[derive(Debug)]
pub(crate) struct Failure {
    /// An ErrorResponse (the server's own, or ours).
    pub(crate) to_client: Vec<u8>,
    pub(crate) log: String,
}

impl Failure {
    fn ours(sqlstate: &'static str, message: String) -> Failure {
        let refusal = Refusal::new(sqlstate, message.clone());
        Failure { to_client: refusal.error_response(), log: message }
    }
}

/// Opens the session on the server: TLS if the target asks for it, the checked
/// startup, and the authentication the server asks for. Returns the stream and the
/// server's bytes from its AuthenticationOk on (for the client, unchanged).
pub(crate) async fn open_server(
    tcp: TcpStream,
    name: &str,
    addr: &str,
    up: &Upstream,
    startup: &Startup,
    timeout: Duration,
) -> Result<(ServerStream, BytesMut), Failure> {
    let opening = async {
        let mut server = negotiate_tls(tcp, name, addr, up).await?;
        server.write_all(&startup.packet()).await.map_err(|e| io_failure(name, e))?;
        let pending = authenticate(&mut server, name, startup.user(), up).await?;
        Ok((server, pending))
    };
    match tokio::time::timeout(timeout, opening).await {
        Ok(r) => r,
        Err(_) => {
            Err(Failure::ours("08006", format!("server \"{name}\" did not finish the connection start in {timeout:?}")))
        }
    }
}

fn io_failure(name: &str, e: std::io::Error) -> Failure {
    Failure::ours("08006", format!("connection to server \"{name}\" failed: {e}"))
}

async fn negotiate_tls(mut tcp: TcpStream, name: &str, addr: &str, up: &Upstream) -> Result<ServerStream, Failure> {
    let Some(config) = up.tls_config.clone() else { return Ok(ServerStream::Plain(tcp)) };
    let mut req = BytesMut::new();
    frontend::ssl_request(&mut req);
    tcp.write_all(&req).await.map_err(|e| io_failure(name, e))?;
    let mut answer = [0u8; 1];
    tcp.read_exact(&mut answer).await.map_err(|e| io_failure(name, e))?;
    if answer[0] != b'S' {
        return Err(Failure::ours("08006", format!("server \"{name}\" does not support TLS (tls = {:?})", up.tls)));
    }
    let server_name = tls::server_name(addr).map_err(|e| Failure::ours("08006", format!("server \"{name}\": {e}")))?;
    let stream = tokio_rustls::TlsConnector::from(config)
        .connect(server_name, tcp)
        .await
        .map_err(|e| Failure::ours("08006", format!("TLS with server \"{name}\" ({addr}) failed: {e}")))?;
    Ok(ServerStream::Tls(Box::new(stream)))
}

/// Answers the server's authentication requests until AuthenticationOk.
async fn authenticate(server: &mut ServerStream, name: &str, user: &str, up: &Upstream) -> Result<BytesMut, Failure> {
    let mut buf = BytesMut::new();
    let mut scram: Option<ScramSha256> = None;
    loop {
        let (ty, body) = read_message(server, &mut buf, name).await?;
        if ty == b'E' {
            let mut raw = vec![b'E'];
            raw.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
            raw.extend_from_slice(&body);
            return Err(Failure {
                to_client: raw,
                log: format!("server \"{name}\" refused the login: {}", error_text(&body)),
            });
        }
        if ty != b'R' || body.len() < 4 {
            return Err(Failure::ours(
                "08P01",
                format!("server \"{name}\" sent '{}' during authentication", ty as char),
            ));
        }
        let code = u32::from_be_bytes(body[..4].try_into().expect("4 bytes"));
        let data = &body[4..];
        let mut out = BytesMut::new();
        match code {
            0 => {
                // AuthenticationOk: it, and all that follows, is the client's.
                let mut pending = BytesMut::new();
                pending.extend_from_slice(&[b'R', 0, 0, 0, 8, 0, 0, 0, 0]);
                pending.extend_from_slice(&buf);
                return Ok(pending);
            }
            3 => frontend::password_message(password(up, name)?.as_bytes(), &mut out).map_err(|e| io_failure(name, e))?,
            5 => {
                let salt: [u8; 4] = data.try_into().map_err(|_| bad_auth(name))?;
                let hash = md5_hash(user.as_bytes(), password(up, name)?.as_bytes(), salt);
                frontend::password_message(hash.as_bytes(), &mut out).map_err(|e| io_failure(name, e))?;
            }
            10 => {
                let offers_scram = data.split(|b| *b == 0).any(|m| m == SCRAM_SHA_256.as_bytes());
                if !offers_scram {
                    return Err(Failure::ours("28000", format!("server \"{name}\" offers no SASL mechanism the relay speaks")));
                }
                let s = ScramSha256::new(password(up, name)?.as_bytes(), ChannelBinding::unsupported());
                frontend::sasl_initial_response(SCRAM_SHA_256, s.message(), &mut out).map_err(|e| io_failure(name, e))?;
                scram = Some(s);
            }
            11 => {
                let s = scram.as_mut().ok_or_else(|| bad_auth(name))?;
                s.update(data).map_err(|e| Failure::ours("28000", format!("SCRAM with server \"{name}\": {e}")))?;
                frontend::sasl_response(s.message(), &mut out).map_err(|e| io_failure(name, e))?;
            }
            12 => {
                let s = scram.as_mut().ok_or_else(|| bad_auth(name))?;
                s.finish(data).map_err(|e| {
                    Failure::ours("28000", format!("server \"{name}\" failed SCRAM's proof of the server: {e}"))
                })?;
            }
            other => {
                return Err(Failure::ours(
                    "28000",
                    format!("server \"{name}\" asks for authentication method {other}, which the relay does not speak (it speaks SCRAM-SHA-256, MD5 and password)"),
                ))
            }
        }
        if !out.is_empty() {
            server.write_all(&out).await.map_err(|e| io_failure(name, e))?;
        }
    }
}

fn bad_auth(name: &str) -> Failure {
    Failure::ours("08P01", format!("server \"{name}\" broke the authentication exchange"))
}

fn password<'a>(up: &'a Upstream, name: &str) -> Result<&'a str, Failure> {
    up.password.as_ref().map(|s| s.0.as_str()).ok_or_else(|| {
        Failure::ours(
            "28P01",
            format!("server \"{name}\" asks for a password: give target \"{name}\" a password_env or password_file in the relay's configuration"),
        )
    })
}

/// One typed message (bounded), taken off the front of `buf`, reading as needed.
async fn read_message(server: &mut ServerStream, buf: &mut BytesMut, name: &str) -> Result<(u8, Vec<u8>), Failure> {
    loop {
        if buf.len() >= 5 {
            let len = u32::from_be_bytes(buf[1..5].try_into().expect("4 bytes")) as usize;
            if !(4..=MAX_AUTH_MESSAGE).contains(&len) {
                return Err(bad_auth(name));
            }
            if buf.len() > len {
                let ty = buf[0];
                buf.advance(5);
                let body = buf.split_to(len - 4).to_vec();
                return Ok((ty, body));
            }
        }
        let n = server.read_buf(buf).await.map_err(|e| io_failure(name, e))?;
        if n == 0 {
            return Err(Failure::ours("08006", format!("server \"{name}\" closed the connection during its start")));
        }
    }
}

/// An ErrorResponse's message and code, for the log.
fn error_text(body: &[u8]) -> String {
    let field = |t: u8| {
        body.split(|b| *b == 0)
            .find(|f| f.first() == Some(&t))
            .map(|f| String::from_utf8_lossy(&f[1..]).into_owned())
            .unwrap_or_default()
    };
    format!("{} ({})", field(b'M'), field(b'C'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(version: u32, params: &[(&str, &str)]) -> Vec<u8> {
        let mut body = version.to_be_bytes().to_vec();
        for (k, v) in params {
            body.extend_from_slice(k.as_bytes());
            body.push(0);
            body.extend_from_slice(v.as_bytes());
            body.push(0);
        }
        body.push(0);
        let mut m = (body.len() as u32 + 4).to_be_bytes().to_vec();
        m.extend(body);
        m
    }

    fn access() -> Access {
        Access { user: "pgasync".into(), databases: Some(vec!["e".into(), "d".into(), "live_*".into()]) }
    }

    fn startup_of(bytes: &[u8]) -> Result<Startup, Refusal> {
        let mut r = StartupReader::default();
        r.feed(bytes)?;
        match r.next()? {
            Some(Opening::Startup(s)) => Ok(s),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_sandbox_startup_passes_in_any_chunking() {
        let mut bytes = {
            let mut ssl = 8u32.to_be_bytes().to_vec();
            ssl.extend_from_slice(&SSL_REQUEST.to_be_bytes());
            ssl
        };
        bytes.extend(packet(196608, &[("user", "pgasync"), ("database", "e"), ("application_name", "pgasync")]));
        bytes.extend_from_slice(b"Q\0\0\0\x0dSELECT 1\0");
        for step in [1, 3, 1000] {
            let mut r = StartupReader::default();
            let mut seen = Vec::new();
            for chunk in bytes.chunks(step) {
                r.feed(chunk).unwrap();
                while let Some(o) = r.next().unwrap() {
                    let done = matches!(o, Opening::Startup(_));
                    seen.push(o);
                    if done {
                        break;
                    }
                }
                if matches!(seen.last(), Some(Opening::Startup(_))) {
                    break;
                }
            }
            assert_eq!(seen[0], Opening::Negotiate);
            let Opening::Startup(s) = &seen[1] else { panic!() };
            s.check(&access()).unwrap();
            let live = startup_of(&packet(196608, &[("user", "pgasync"), ("database", "live_0123")])).unwrap();
            live.check(&access()).unwrap();
            assert_eq!(
                s.packet(),
                packet(196608, &[("user", "pgasync"), ("database", "e"), ("application_name", "pgasync")])
            );
        }
    }

    #[test]
    fn refusals_name_what_was_refused() {
        let cases: [(&[(&str, &str)], &str, &str); 7] = [
            (&[("user", "postgres"), ("database", "e")], "28000", "role \"postgres\""),
            (&[("user", "pgasync"), ("database", "postgres")], "3D000", "database \"postgres\""),
            (&[("user", "pgasync"), ("database", "livex")], "3D000", "database \"livex\""),
            (&[("user", "pgasync")], "3D000", "database \"pgasync\""),
            (&[("user", "pgasync"), ("database", "e"), ("replication", "database")], "28000", "replication"),
            (&[("user", "pgasync"), ("database", "e"), ("options", "-c log_statement=none")], "28000", "\"options\""),
            (&[("user", "pgasync"), ("database", "e"), ("search_path", "x")], "28000", "\"search_path\""),
        ];
        for (params, code, words) in cases {
            let err = startup_of(&packet(196608, params)).and_then(|s| s.check(&access())).unwrap_err();
            assert_eq!(err.sqlstate, code, "{params:?}");
            assert!(err.message.contains(words), "{params:?}: {}", err.message);
            let resp = err.error_response();
            assert_eq!(resp[0], b'E');
            assert!(String::from_utf8_lossy(&resp).contains(code));
        }
    }

    /// Hostile input: random and mutated byte streams, in random chunks, never panic,
    /// never hold more than the stated bound, and end in a refusal or an opening.
    #[test]
    fn random_and_mutated_openings_never_panic() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let good = packet(196608, &[("user", "pgasync"), ("database", "e"), ("application_name", "x")]);
        for case in 0..20_000 {
            let mut bytes: Vec<u8> = if case % 2 == 0 {
                (0..(next() % 64)).map(|_| next() as u8).collect()
            } else {
                let mut b = good.clone();
                for _ in 0..1 + next() % 4 {
                    let i = (next() as usize) % b.len();
                    b[i] = next() as u8;
                }
                b
            };
            if case % 7 == 0 {
                bytes.truncate((next() as usize) % (bytes.len() + 1));
            }
            let mut r = StartupReader::default();
            let mut rest = &bytes[..];
            'feed: while !rest.is_empty() {
                let n = 1 + (next() as usize) % rest.len();
                if r.feed(&rest[..n]).is_err() {
                    break;
                }
                rest = &rest[n..];
                loop {
                    match r.next() {
                        Ok(Some(Opening::Negotiate)) => continue,
                        Ok(Some(Opening::Startup(s))) => {
                            let _ = s.check(&access());
                            break 'feed;
                        }
                        Ok(Some(Opening::Cancel(_))) | Err(_) => break 'feed,
                        Ok(None) => break,
                    }
                }
            }
            assert!(r.buf.len() <= MAX_STARTUP_BYTES + (1 << 20));
        }
    }

    #[test]
    fn malformed_openings_are_refused() {
        let mut cancel = 16u32.to_be_bytes().to_vec();
        cancel.extend_from_slice(&CANCEL_REQUEST.to_be_bytes());
        cancel.extend_from_slice(&[0; 8]);
        let long = (MAX_STARTUP_BYTES as u32 + 1).to_be_bytes().to_vec();
        let dup = packet(196608, &[("user", "pgasync"), ("user", "postgres")]);
        let v2 = packet(2 << 16, &[("user", "pgasync")]);
        let mut r = StartupReader::default();
        r.feed(&cancel).unwrap();
        assert_eq!(r.next().unwrap(), Some(Opening::Cancel(cancel.clone())));
        for bad in [long.iter().chain(&[0, 3, 0, 0]).copied().collect(), dup, v2] {
            let mut r = StartupReader::default();
            r.feed(&bad).unwrap();
            assert!(r.next().is_err(), "{bad:?}");
        }
        let mut r = StartupReader::default();
        let mut ssl = 8u32.to_be_bytes().to_vec();
        ssl.extend_from_slice(&SSL_REQUEST.to_be_bytes());
        for _ in 0..MAX_NEGOTIATIONS {
            r.feed(&ssl).unwrap();
            assert_eq!(r.next().unwrap(), Some(Opening::Negotiate));
        }
        r.feed(&ssl).unwrap();
        assert!(r.next().is_err());
    }
}

// ---------------------------------------------------------------------------------
// The CLI's loopback gateway

/// For the CLI's `--live` runs on targets that need TLS or a password: the native host
/// speaks plain TCP with trust authentication, so each such target gets a listener on
/// 127.0.0.1 here that opens the real server exactly as the relay does (the same
/// [`open_server`]), then copies bytes both ways. It lives as long as this value.
pub(crate) struct LocalGateway {
    /// The listener standing in for each target.
    pub(crate) addrs: std::collections::BTreeMap<String, std::net::SocketAddr>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the loopback gateway needs of a target.
#[derive(Clone)]
pub(crate) struct LocalTarget {
    pub(crate) addr: String,
    pub(crate) access: Access,
    pub(crate) upstream: Upstream,
}

impl LocalGateway {
    pub(crate) fn start(targets: Vec<(String, LocalTarget)>) -> Result<LocalGateway, String> {
        let mut listeners = Vec::new();
        let mut addrs = std::collections::BTreeMap::new();
        for (name, t) in targets {
            let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("loopback gateway: {e}"))?;
            l.set_nonblocking(true).map_err(|e| format!("loopback gateway: {e}"))?;
            addrs.insert(name.clone(), l.local_addr().map_err(|e| format!("loopback gateway: {e}"))?);
            listeners.push((name, t, l));
        }
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
            rt.block_on(async move {
                let mut tasks = tokio::task::JoinSet::new();
                for (name, t, l) in listeners {
                    let l = tokio::net::TcpListener::from_std(l).expect("a tokio listener");
                    tasks.spawn(accept(name, Arc::new(t), l));
                }
                let _ = stopped.await;
                tasks.abort_all();
            });
        });
        Ok(LocalGateway { addrs, stop: Some(stop), thread: Some(thread) })
    }
}

impl Drop for LocalGateway {
    fn drop(&mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
        let _ = self.thread.take().map(|t| t.join());
    }
}

async fn accept(name: String, t: Arc<LocalTarget>, l: tokio::net::TcpListener) {
    let mut sessions = tokio::task::JoinSet::new();
    while let Ok((client, _)) = l.accept().await {
        let (name, t) = (name.clone(), t.clone());
        sessions.spawn(async move {
            if let Err(e) = local_session(&name, &t, client).await {
                eprintln!("pgasync: gateway to {name}: {e}");
            }
        });
    }
}

/// One connection of the CLI's host, opened on the real server as the relay opens one.
async fn local_session(name: &str, t: &LocalTarget, mut client: TcpStream) -> Result<(), String> {
    let timeout = Duration::from_secs(10);
    let mut reader = StartupReader::default();
    let startup = loop {
        match reader.next().map_err(|r| r.message)? {
            Some(Opening::Negotiate) => client.write_all(b"N").await.map_err(|e| e.to_string())?,
            Some(Opening::Cancel(raw)) => {
                let mut server = TcpStream::connect(&t.addr).await.map_err(|e| e.to_string())?;
                server.write_all(&raw).await.map_err(|e| e.to_string())?;
                let _ = tokio::time::timeout(timeout, server.read(&mut [0u8; 1])).await;
                return Ok(());
            }
            Some(Opening::Startup(s)) => break s,
            None => {
                let mut buf = [0u8; 4096];
                let n = client.read(&mut buf).await.map_err(|e| e.to_string())?;
                if n == 0 {
                    return Ok(());
                }
                reader.feed(&buf[..n]).map_err(|r| r.message)?;
            }
        }
    };
    if let Err(r) = startup.check(&t.access) {
        let _ = client.write_all(&r.error_response()).await;
        return Err(r.message);
    }
    let tcp = tokio::time::timeout(timeout, TcpStream::connect(&t.addr))
        .await
        .map_err(|_| format!("connecting to {} timed out", t.addr))?
        .map_err(|e| format!("cannot connect to {}: {e}", t.addr))?;
    let _ = tcp.set_nodelay(true);
    let _ = client.set_nodelay(true);
    let (mut server, to_client) = match open_server(tcp, name, &t.addr, &t.upstream, &startup, timeout).await {
        Ok(opened) => opened,
        Err(f) => {
            let _ = client.write_all(&f.to_client).await;
            return Err(f.log);
        }
    };
    client.write_all(&to_client).await.map_err(|e| e.to_string())?;
    server.write_all(&reader.rest()).await.map_err(|e| e.to_string())?;
    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
    Ok(())
}
