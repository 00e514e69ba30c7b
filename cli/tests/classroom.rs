//! Classroom mode: the relay serving the page and its WebSockets over TLS
//! (`--tls-cert`/`--tls-key`, the documented way to give students `https://` and
//! `wss://`), the origins it then accepts, and `pgasync demo --bind` refusing to serve
//! a LAN it would refuse anyway (no `--allow-host`). Also the relay's answers to the
//! proxy-style and header tricks a hostile client tries.

use std::io::{Read, Write};
use std::net::TcpStream as StdTcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

mod support;
use support::certs::{make_ca, make_server_cert};
use support::pg::Cluster;
use support::pgws::startup;
use support::postgres_installed;
use support::relay::RelayProcess;

const BIN: &str = env!("CARGO_BIN_EXE_pgasync");

fn certs(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pgasync-classroom-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    make_ca(&dir, "ca");
    make_server_cert(&dir, "ca");
    dir
}

fn connector(ca: &Path) -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    let pem = std::fs::read(ca).unwrap();
    for cert in rustls_pki_types::pem::PemObject::pem_slice_iter(&pem) {
        roots.add(cert.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

async fn tls_stream(port: u16, ca: &Path) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    connector(ca).connect(name, tcp).await.expect("the relay's certificate verifies for localhost")
}

#[test]
fn the_page_and_live_sessions_over_tls() {
    if !postgres_installed() {
        eprintln!("skipped: PostgreSQL is not installed");
        return;
    }
    let dir = certs("tls");
    let pg = Cluster::start("classroom");
    pg.query("postgres", "postgres", "CREATE ROLE pgasync LOGIN").unwrap();
    let (cert, key) = (dir.join("server.crt"), dir.join("server.key"));
    let relay = RelayProcess::spawn(&[
        "--target",
        &format!("s1={}", pg.addr()),
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
        "--root",
        env!("CARGO_MANIFEST_DIR").trim_end_matches("/cli"),
    ]);
    let port = relay.port;
    let ca = dir.join("ca.crt");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // The page over https.
        let mut s = tls_stream(port, &ca).await;
        s.write_all(format!("GET / HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut page = String::new();
        let _ = s.read_to_string(&mut page).await;
        assert!(page.starts_with("HTTP/1.1 200"), "{page:.200}");
        assert!(page.contains("<html") || page.contains("<!DOCTYPE"), "the page: {page:.300}");
        // A live session over wss, with the page's own https Origin.
        let ws_url = format!("wss://localhost:{port}/shard/s1");
        let mut req = ws_url.as_str().into_client_request().unwrap();
        req.headers_mut().insert("Origin", format!("https://localhost:{port}").parse().unwrap());
        let (mut ws, _) = tokio_tungstenite::client_async(req, tls_stream(port, &ca).await).await.expect("wss opens");
        use futures_util::{SinkExt, StreamExt};
        ws.send(Message::Binary(startup(&[("user", "pgasync"), ("database", "postgres")]).into())).await.unwrap();
        let mut got = Vec::new();
        while !got.windows(1).any(|w| w == b"Z") {
            match tokio::time::timeout(Duration::from_secs(10), ws.next()).await.unwrap() {
                Some(Ok(Message::Binary(b))) => got.extend_from_slice(&b),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(got[0], b'R', "AuthenticationOk first");
        // The plain-http Origin of the same host is another origin: refused.
        let mut req = ws_url.as_str().into_client_request().unwrap();
        req.headers_mut().insert("Origin", format!("http://localhost:{port}").parse().unwrap());
        let refused = tokio_tungstenite::client_async(req, tls_stream(port, &ca).await).await;
        assert!(refused.is_err(), "an http Origin on the https relay was accepted");
    });
    // Plain HTTP to the TLS port gets no page.
    let mut plain = StdTcpStream::connect(("127.0.0.1", port)).unwrap();
    plain.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = plain.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    let mut out = Vec::new();
    let _ = plain.read_to_end(&mut out);
    assert!(!String::from_utf8_lossy(&out).contains("200 OK"), "plain HTTP served on the TLS port");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn demo_beyond_loopback_needs_the_names_students_use() {
    let out = Command::new(BIN)
        .args(["demo", "--bind", "0.0.0.0", "--port", "0", "--dir"])
        .arg(std::env::temp_dir().join(format!("pgasync-classroom-refused-{}", std::process::id())))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-host"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}

/// A raw HTTP/1.1 request's status line.
fn status_of(port: u16, request: &str) -> String {
    let mut s = StdTcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).lines().next().unwrap_or("").to_string()
}

#[test]
fn proxy_requests_and_doubled_headers_are_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let relay = RelayProcess::spawn(&["--target", &format!("s1={addr}")]);
    let port = relay.port;
    let upgrade = "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
                   Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    let absolute = format!("GET http://evil.example/shard/s1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{upgrade}\r\n");
    assert!(status_of(port, &absolute).contains("403"), "absolute form");
    let two_origins = format!(
        "GET /shard/s1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n\
         Origin: http://evil.example\r\n{upgrade}Connection: close\r\n\r\n"
    );
    assert!(status_of(port, &two_origins).contains("403"), "a second Origin");
    let bad_port = format!("GET /health HTTP/1.1\r\nHost: localhost:99999\r\nConnection: close\r\n\r\n");
    let status = status_of(port, &bad_port);
    assert!(status.contains("403") || status.contains("400"), "Host localhost:99999: {status}");
    let good = format!("GET /health HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n");
    assert!(status_of(port, &good).contains("200"));
}
