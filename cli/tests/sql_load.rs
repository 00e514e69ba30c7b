//! `POST /sql/load` on the real `pgasync relay`, against real PostgreSQL 15 clusters
//! the test starts on free ports (shards s1 and s2 and a coordinator) and stops at the
//! end: a page's scenario file is loaded into a database of its own, readable by the
//! page's read-only role, with the coordinator's foreign tables, and every attack the
//! endpoint must survive is refused with a JSON error (wrong method, foreign Origin,
//! oversized bodies, bad SQL at its line and column, too many rows, unknown or remote
//! servers, hostile names, a second load at once, the time limit), and many different
//! files drop the oldest databases.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

#[allow(dead_code)] // the support functions other test files use
mod support;
use support::pg::Cluster;
use support::postgres_installed;
use support::relay::RelayProcess;

/// As `cli/src/sql_load.rs`: bodies received at once from one client address.
const BODIES_PER_CLIENT: usize = 2;

/// The page's read-only role (`pgasync::remote::USER`).
const READER: &str = "pgasync";

/// A running `pgasync relay --port 0 --config FILE`, killed on drop.
struct Relay {
    process: RelayProcess,
    _config: tempfile_path::TempPath,
}

impl std::ops::Deref for Relay {
    type Target = RelayProcess;
    fn deref(&self) -> &RelayProcess {
        &self.process
    }
}

mod tempfile_path {
    /// A file removed on drop.
    pub struct TempPath(pub std::path::PathBuf);
    impl Drop for TempPath {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

impl Relay {
    fn start(config: &str) -> Relay {
        let path = std::env::temp_dir().join(format!("pgasync-sql-load-{}-{}.toml", std::process::id(), config.len()));
        std::fs::write(&path, config).unwrap();
        let process = RelayProcess::spawn(&["--config", path.to_str().unwrap()]);
        Relay { process, _config: tempfile_path::TempPath(path) }
    }

    /// One HTTP/1.1 request: status, headers (lower case) and the body as JSON.
    fn request(&self, method: &str, extra: &str, body: &[u8]) -> (u16, String, serde_json::Value) {
        let head = format!(
            "{method} /sql/load HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nContent-Length: {}\r\n{extra}\r\n",
            self.port,
            body.len()
        );
        self.raw(head.as_bytes(), body)
    }

    fn raw(&self, head: &[u8], body: &[u8]) -> (u16, String, serde_json::Value) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        s.write_all(head).unwrap();
        // The relay may answer before reading all of an oversized body.
        let _ = s.write_all(body);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        let out = String::from_utf8_lossy(&out).to_string();
        let status = out.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        let (headers, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
        let json = serde_json::from_str(body.trim()).unwrap_or(serde_json::Value::Null);
        (status, headers.to_ascii_lowercase(), json)
    }

    fn load(&self, text: &str) -> (u16, serde_json::Value) {
        let (status, _, json) = self.request("POST", "", text.as_bytes());
        (status, json)
    }
}

fn config(targets: &[(&str, String)], sql_load: &str) -> String {
    let mut t = String::new();
    for (name, addr) in targets {
        t.push_str(&format!("[targets.{name}]\naddr = \"{addr}\"\n"));
    }
    t.push_str(&format!("[sql_load]\nsuperuser = \"postgres\"\n{sql_load}"));
    t
}

/// Two shards with a table each (`rows` rows, `salt` makes the file differ) and the
/// coordinator's foreign tables; the query sums `a` over both.
fn two_shards(rows: usize, salt: &str) -> String {
    format!(
        "-- {salt}\n-- @shard s1\ncreate table t1 (a int, b text);\n\
         insert into t1 select i % 10, 'x' || i from generate_series(1, {rows}) i;\n\
         -- @shard s2\ncreate table t2 (a int, b text);\n\
         insert into t2 select i % 7, 'y' || i from generate_series(1, {rows}) i;\n\
         -- @coordinator\ncreate extension postgres_fdw;\n\
         create server s1 foreign data wrapper postgres_fdw options (async_capable 'true');\n\
         create user mapping for public server s1;\n\
         create server s2 foreign data wrapper postgres_fdw options (async_capable 'true');\n\
         create user mapping for public server s2;\n\
         create foreign table ft1 (a int, b text) server s1 options (table_name 't1');\n\
         create foreign table ft2 (a int, b text) server s2 options (table_name 't2');\n\
         -- @query\nselect sum(a) from (select a from ft1 union all select a from ft2) s;\n"
    )
}

/// A file that takes a while to parse and load: 380,000 more rows on s1, in a table
/// the query does not read (so the run itself stays small enough for the page).
fn padded(salt: &str) -> String {
    two_shards(100, salt).replace(
        "-- @shard s2",
        "create table pad (a int);\ninsert into pad select i from generate_series(1, 380000) i;\n-- @shard s2",
    )
}

/// The relay's database name for a text (`live_` and its FNV-1a hash).
fn fnv_name(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    format!("live_{hash:016x}")
}

fn error_of(json: &serde_json::Value) -> (String, u64, u64) {
    (
        json["error"].as_str().unwrap_or("").to_string(),
        json["line"].as_u64().unwrap_or(99),
        json["column"].as_u64().unwrap_or(99),
    )
}

#[test]
fn sql_load_loads_files_and_refuses_attacks() {
    assert!(postgres_installed(), "PostgreSQL is not installed (make test's set-up installs it)");
    let (s1, s2, coord) = (Cluster::start("s1"), Cluster::start("s2"), Cluster::start("coordinator"));
    let targets = [("s1", s1.addr()), ("s2", s2.addr()), ("coordinator", coord.addr())];
    let relay = Relay::start(&config(&targets, "max_databases = 2\ntimeout_ms = 120000\n"));

    // Wrong method: 405 with Allow, JSON.
    let (status, headers, json) = relay.request("GET", "", b"");
    assert_eq!(status, 405, "{json}");
    assert!(headers.contains("allow: post") && headers.contains("application/json"), "{headers}");
    assert!(error_of(&json).0.contains("POST"), "{json}");

    // A foreign page's Origin: 403; the relay's own: accepted (to the parser).
    let file = two_shards(100, "first");
    let (status, _, json) = relay.request("POST", "Origin: http://evil.example\r\n", file.as_bytes());
    assert_eq!((status, error_of(&json).0.as_str()), (403, "origin not allowed"), "{json}");

    // A foreign Host (DNS rebinding): 403 before anything is read.
    let head = format!(
        "POST /sql/load HTTP/1.1\r\nHost: evil.example:{}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        relay.port
    );
    let (status, _, _) = relay.raw(head.as_bytes(), b"");
    assert_eq!(status, 403);

    // Oversized: a declared length over 1 MiB is refused before any body is read;
    // a chunked body that grows past it, as it passes.
    let head = format!(
        "POST /sql/load HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nContent-Length: 2000000\r\n\r\n",
        relay.port
    );
    let (status, _, json) = relay.raw(head.as_bytes(), b"");
    assert_eq!(status, 413, "{json}");
    assert!(error_of(&json).0.contains("1048576"), "{json}");
    let head = format!(
        "POST /sql/load HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n",
        relay.port
    );
    let mut chunked = Vec::new();
    for _ in 0..17 {
        chunked.extend_from_slice(format!("{:x}\r\n", 65536).as_bytes());
        chunked.extend(vec![b'-'; 65536]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let (status, _, json) = relay.raw(head.as_bytes(), &chunked);
    assert_eq!(status, 413, "{json}");

    // Bad SQL: the front end's message at its line and column.
    let (status, json) = relay.load("-- @shard s1\ncreate tabel t (a int);\n");
    let (msg, line, column) = error_of(&json);
    assert_eq!((status, line), (400, 2), "{json}");
    assert!(column >= 1 && !msg.is_empty(), "{json}");

    // Too many rows: refused at the INSERT that passes the page's limit.
    let big = "-- @shard s1\ncreate table t1 (a int);\ninsert into t1 select i from generate_series(1, 500000) i;\n";
    let (status, json) = relay.load(big);
    let (msg, line, _) = error_of(&json);
    assert_eq!((status, line), (400, 3), "{json}");
    assert!(msg.contains("rows"), "{json}");

    // A server the relay does not have: named, with the relay's shards, at its marker.
    let (status, json) = relay.load(&two_shards(10, "s9").replace("s2", "s9"));
    let (msg, line, column) = error_of(&json);
    assert_eq!((status, line, column), (400, 5, 11), "{json}");
    assert!(msg.contains("\"s9\"") && msg.contains("s1, s2"), "{json}");

    // A name psql could read as a command is refused; one that only looks like SQL is
    // quoted and loads as a name.
    let backslash = two_shards(10, "backslash").replace("-- @shard s2", "create table \"a\\b\" (x int);\n-- @shard s2");
    let (status, json) = relay.load(&backslash);
    assert_eq!(status, 400, "{json}");
    assert!(error_of(&json).0.contains("backslash"), "{json}");
    let evil = "evil\"\"; DROP TABLE t1; --";
    let hostile = two_shards(100, "hostile").replace(
        "-- @shard s2",
        &format!("create table \"{evil}\" (x int);\ninsert into \"{evil}\" values (7);\n-- @shard s2"),
    );

    // A good file: 200, a database of its own on each cluster, readable by the page's role.
    let (status, json) = relay.load(&hostile);
    assert_eq!(status, 200, "{json}\n{}", relay.log());
    let db = json["database"].as_str().unwrap().to_string();
    assert!(db.starts_with("live_") && json["cached"] == false && json["rows"] == 201, "{json}");
    assert_eq!(json["servers"], serde_json::json!(["s1", "s2"]));
    assert_eq!(s1.query(READER, &db, "SELECT count(*), sum(a) FROM t1").unwrap(), "100|450");
    assert_eq!(s2.query(READER, &db, "SELECT count(*) FROM t2").unwrap(), "100");
    assert_eq!(s1.query(READER, &db, &format!("SELECT x FROM \"{evil}\"")).unwrap(), "7");
    assert!(s1.query(READER, &db, "INSERT INTO t1 VALUES (1, 'w')").unwrap_err().contains("permission denied"));
    // The coordinator: foreign tables over the shards, and the query PostgreSQL runs.
    let q = json["coordinator_query"].as_str().unwrap().to_string();
    let expected: i64 = (1..=100).map(|i| i % 10).sum::<i64>() + (1..=100).map(|i| i % 7).sum::<i64>();
    assert_eq!(coord.query(READER, &db, &q).unwrap(), expected.to_string(), "{q}");

    // The same file again: the same database, not loaded twice.
    let (status, again) = relay.load(&hostile);
    assert_eq!((status, again["database"].as_str(), again["cached"].as_bool()), (200, Some(db.as_str()), Some(true)));

    // A slow sender (headers, a little of its body, then nothing) holds no load slot: a
    // load meanwhile goes through. Bodies arriving at once from one client are
    // bounded: with that many slow senders, one more from it is answered 503 at once
    // (another client's load goes through: cli/tests/bounds.rs).
    let slow = |port: u16| {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let head =
            format!("POST /sql/load HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 5000\r\n\r\n-- @shard s1\n");
        s.write_all(head.as_bytes()).unwrap();
        s
    };
    let first_slow = slow(relay.port);
    std::thread::sleep(Duration::from_millis(200));
    let (status, json) = relay.load(&hostile);
    assert_eq!((status, json["cached"].as_bool()), (200, Some(true)), "a slow sender blocked a load: {json}");
    let more: Vec<TcpStream> = (1..BODIES_PER_CLIENT).map(|_| slow(relay.port)).collect();
    std::thread::sleep(Duration::from_millis(200));
    let (status, json) = relay.load(&hostile);
    assert_eq!(status, 503, "{json}");
    assert!(error_of(&json).0.contains("arriving"), "{json}");
    drop((first_slow, more));
    let t = std::time::Instant::now();
    while relay.load(&hostile).0 != 200 {
        assert!(t.elapsed() < Duration::from_secs(15), "the slow senders' slots were not freed");
        std::thread::sleep(Duration::from_millis(100));
    }

    // Many different files: at most two databases; the least recently loaded dropped
    // on every cluster.
    let mut names = vec![db.clone()];
    for salt in ["second", "third"] {
        let (status, json) = relay.load(&two_shards(20, salt));
        assert_eq!(status, 200, "{json}");
        names.push(json["database"].as_str().unwrap().to_string());
    }
    let mut kept = names[1..].to_vec();
    kept.sort();
    for c in [&s1, &s2, &coord] {
        assert_eq!(c.databases("live_"), kept, "on {}", c.name);
    }

    // One load at a time: while a large file loads, another is answered 503.
    let large = padded("large");
    let port = relay.port;
    let first = std::thread::spawn(move || Relay::raw_at(port, &large));
    std::thread::sleep(Duration::from_millis(150));
    let (status, json) = relay.load(&two_shards(5, "while busy"));
    assert_eq!(status, 503, "{json}");
    let (status, out) = first.join().unwrap();
    assert_eq!(status, 200, "{out}");
    let large: serde_json::Value = serde_json::from_str(out.split_once("\r\n\r\n").unwrap().1.trim()).unwrap();
    assert_eq!(large["rows"], 380_200, "{large}");
    let large = large["database"].as_str().unwrap().to_string();

    // A client that leaves mid-load: the load still ends, and its database is listed
    // (so the next loads drop it in turn, not leave it forever).
    let left = padded("left");
    {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let head = format!(
            "POST /sql/load HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
            left.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(left.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(100));
    } // closed before the answer
    let left_db = fnv_name(&left);
    let mut kept = vec![large.clone(), left_db.clone()];
    kept.sort();
    let t = std::time::Instant::now();
    while s1.databases("live_") != kept {
        assert!(t.elapsed() < Duration::from_secs(120), "{:?} != {kept:?}\n{}", s1.databases("live_"), relay.log());
        std::thread::sleep(Duration::from_millis(200));
    }
    // Listed: loading it again is answered from the list, and two more files drop it.
    let t = std::time::Instant::now();
    let again = loop {
        let (status, json) = relay.load(&left);
        if status != 503 || t.elapsed() > Duration::from_secs(60) {
            break (status, json);
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!((again.0, again.1["cached"].as_bool()), (200, Some(true)), "{}", again.1);
    let mut kept = Vec::new();
    for salt in ["fourth", "fifth"] {
        let (status, json) = relay.load(&two_shards(20, salt));
        assert_eq!(status, 200, "{json}");
        kept.push(json["database"].as_str().unwrap().to_string());
    }
    kept.sort();
    for c in [&s1, &s2, &coord] {
        assert_eq!(c.databases("live_"), kept, "on {}", c.name);
    }
    drop(relay);

    // The time limit, and a target that is not a local cluster.
    let mut remote = targets.to_vec();
    remote[1] = ("s2", "192.0.2.1:5432".to_string());
    let strict = Relay::start(&config(&remote, "timeout_ms = 1\n"));
    let (status, json) = strict.load(&padded("slow"));
    assert_eq!(status, 504, "{json}");
    let lenient = Relay::start(&config(&remote, ""));
    let (status, json) = lenient.load(&two_shards(10, "remote"));
    assert_eq!(status, 400, "{json}");
    assert!(error_of(&json).0.contains("not a local cluster"), "{json}");
    // Nothing was written for the refused files.
    for c in [&s1, &s2, &coord] {
        assert_eq!(c.databases("live_"), kept, "on {}", c.name);
    }
}

impl Relay {
    /// A load on a connection of its own (from another thread).
    fn raw_at(port: u16, text: &str) -> (u16, String) {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        write!(
            s,
            "POST /sql/load HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{text}",
            text.len()
        )
        .unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        (out.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0), out)
    }
}

#[test]
fn loading_is_off_without_its_section() {
    let path = std::env::temp_dir().join(format!("pgasync-sql-load-off-{}.toml", std::process::id()));
    std::fs::write(&path, "[targets.s1]\naddr = \"127.0.0.1:1\"\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pgasync"))
        .args(["relay", "--port", "0", "--config", path.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port: u16 = line.split("http://127.0.0.1:").nth(1).and_then(|r| r.split('/').next()).unwrap().parse().unwrap();
    let (status, out) = Relay::raw_at(port, "-- @shard s1\ncreate table t (a int);\n");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_file(&path);
    assert_eq!(status, 404, "{out}");
    assert!(out.contains("loading scenario files is off"), "{out}");
}
