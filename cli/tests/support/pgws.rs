//! A PostgreSQL client over the relay's WebSocket, by hand: a startup packet with any
//! parameters, simple queries, and the server's answers as (type, body) messages. What
//! a hostile page (or a third-party PostgreSQL-over-WebSocket driver) would speak.
#![allow(dead_code)] // each test file uses its own part of the support module

use futures_util::{SinkExt, StreamExt};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

pub type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub fn startup(params: &[(&str, &str)]) -> Vec<u8> {
    let mut body = 196608u32.to_be_bytes().to_vec();
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

pub fn query(sql: &str) -> Vec<u8> {
    let mut body = sql.as_bytes().to_vec();
    body.push(0);
    let mut m = vec![b'Q'];
    m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
    m.extend(body);
    m
}

/// An ErrorResponse's field `t` ('C' the SQLSTATE, 'M' the message).
pub fn field(body: &[u8], t: u8) -> String {
    body.split(|b| *b == 0)
        .find(|f| f.first() == Some(&t))
        .map(|f| String::from_utf8_lossy(&f[1..]).into_owned())
        .unwrap_or_default()
}

/// A DataRow's columns as text (NULL as "").
pub fn data_row(b: &[u8]) -> Vec<String> {
    let n = u16::from_be_bytes([b[0], b[1]]) as usize;
    let (mut pos, mut out) = (2, Vec::new());
    for _ in 0..n {
        let len = i32::from_be_bytes(b[pos..pos + 4].try_into().unwrap());
        pos += 4;
        if len < 0 {
            out.push(String::new());
        } else {
            out.push(String::from_utf8_lossy(&b[pos..pos + len as usize]).into_owned());
            pos += len as usize;
        }
    }
    out
}

pub struct PgWs {
    pub ws: Ws,
    buf: Vec<u8>,
}

impl PgWs {
    pub async fn connect(url: &str) -> PgWs {
        let (ws, _) = tokio_tungstenite::connect_async(url).await.expect("the WebSocket opens");
        PgWs { ws, buf: Vec::new() }
    }

    /// A WebSocket opened from the loopback address `source` (a client of its own, as
    /// the relay counts them: Linux routes all of 127.0.0.0/8 to `lo`).
    pub async fn connect_from(url: &str, source: std::net::IpAddr) -> Result<PgWs, String> {
        let host = url.split("://").nth(1).and_then(|r| r.split('/').next()).ok_or("no host in the URL")?;
        let relay: std::net::SocketAddr = host.parse().map_err(|e| format!("{host}: {e}"))?;
        let socket = tokio::net::TcpSocket::new_v4().map_err(|e| e.to_string())?;
        socket.bind((source, 0).into()).map_err(|e| format!("bind {source}: {e}"))?;
        let stream = socket.connect(relay).await.map_err(|e| format!("connect {relay} from {source}: {e}"))?;
        let _ = stream.set_nodelay(true);
        let plain = tokio_tungstenite::MaybeTlsStream::Plain(stream);
        let (ws, _) = tokio_tungstenite::client_async(url, plain).await.map_err(|e| format!("upgrade {url}: {e}"))?;
        Ok(PgWs { ws, buf: Vec::new() })
    }

    pub async fn send(&mut self, bytes: Vec<u8>) {
        self.ws.send(Message::Binary(bytes.into())).await.expect("send");
    }

    /// The next message, or `None` once the relay closed the session.
    pub async fn next(&mut self) -> Option<(u8, Vec<u8>)> {
        loop {
            if self.buf.len() >= 5 {
                let len = u32::from_be_bytes(self.buf[1..5].try_into().unwrap()) as usize;
                if self.buf.len() > len {
                    let ty = self.buf[0];
                    let body = self.buf[5..1 + len].to_vec();
                    self.buf.drain(..1 + len);
                    return Some((ty, body));
                }
            }
            match tokio::time::timeout(Duration::from_secs(20), self.ws.next()).await.expect("an answer in 20 s") {
                Some(Ok(Message::Binary(b))) => self.buf.extend_from_slice(&b),
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
                Some(Ok(_)) => {}
            }
        }
    }

    /// Messages up to and including the first ReadyForQuery or ErrorResponse-then-close.
    pub async fn until_ready(&mut self) -> Vec<(u8, Vec<u8>)> {
        let mut out = Vec::new();
        while let Some(m) = self.next().await {
            let ready = m.0 == b'Z';
            out.push(m);
            if ready {
                break;
            }
        }
        out
    }

    /// Opens a session: `Ok` after ReadyForQuery, or the ErrorResponse's (SQLSTATE, message).
    pub async fn login(url: &str, params: &[(&str, &str)]) -> Result<PgWs, (String, String)> {
        let mut c = PgWs::connect(url).await;
        c.send(startup(params)).await;
        let msgs = c.until_ready().await;
        match msgs.iter().find(|(t, _)| *t == b'E') {
            Some((_, e)) => Err((field(e, b'C'), field(e, b'M'))),
            None if msgs.last().is_some_and(|(t, _)| *t == b'Z') => Ok(c),
            None => Err((String::new(), format!("closed without an answer: {msgs:?}"))),
        }
    }

    /// A simple query's rows, or its error's (SQLSTATE, message).
    pub async fn simple(&mut self, sql: &str) -> Result<Vec<Vec<String>>, (String, String)> {
        self.send(query(sql)).await;
        let (mut rows, mut err) = (Vec::new(), None);
        for (t, body) in self.until_ready().await {
            match t {
                b'D' => rows.push(data_row(&body)),
                b'E' => err = Some((field(&body, b'C'), field(&body, b'M'))),
                _ => {}
            }
        }
        err.map_or(Ok(rows), Err)
    }
}
