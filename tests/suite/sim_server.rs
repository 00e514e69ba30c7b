//! The simulated shard answers what postgres_fdw sends as PostgreSQL 15 does: the
//! startup exchange, `configure_remote_session`'s SETs, `begin_remote_xact`'s START
//! TRANSACTION, `create_cursor`'s extended-protocol DECLARE, `fetch_more_data`'s
//! FETCH, `close_cursor`'s CLOSE, `pgfdw_xact_callback`'s COMMIT/ABORT TRANSACTION,
//! and the errors on the way (failed transaction blocks, skipping to Sync), message by
//! message, with the statement log of `log_statement = 'all'`.
//!
//! Answers are decoded into one line per message (`Z T`, `C FETCH 100`,
//! `E ERROR 25P02 current transaction is aborted, …`) so a test reads like the
//! exchange it checks.

use pgasync::sim::ShardServer;
use pgasync::types::{Catalog, ColType, Column, Datum, Table};
use wasm_bindgen_test::wasm_bindgen_test;

// ---- frontend messages -----------------------------------------------------------

fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn cstr(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(s.as_bytes());
    b.push(0);
}

fn startup_packet(version: i32, options: &[(&str, &str)]) -> Vec<u8> {
    let mut b = version.to_be_bytes().to_vec();
    for (k, v) in options {
        cstr(&mut b, k);
        cstr(&mut b, v);
    }
    b.push(0);
    let mut v = ((b.len() + 4) as i32).to_be_bytes().to_vec();
    v.extend_from_slice(&b);
    v
}

/// postgres_fdw's `connect_pg_server` (libpq adds nothing the shard looks at).
const FDW_STARTUP: &[(&str, &str)] =
    &[("user", "alice"), ("database", "postgres"), ("application_name", "postgres_fdw"), ("client_encoding", "UTF8")];

fn query(sql: &str) -> Vec<u8> {
    let mut b = Vec::new();
    cstr(&mut b, sql);
    msg(b'Q', &b)
}

fn parse(name: &str, sql: &str) -> Vec<u8> {
    let mut b = Vec::new();
    cstr(&mut b, name);
    cstr(&mut b, sql);
    b.extend_from_slice(&0i16.to_be_bytes());
    msg(b'P', &b)
}

/// Bind with no parameters and text results.
fn bind(portal: &str, stmt: &str) -> Vec<u8> {
    let mut b = Vec::new();
    cstr(&mut b, portal);
    cstr(&mut b, stmt);
    b.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    msg(b'B', &b)
}

fn describe(kind: u8, name: &str) -> Vec<u8> {
    let mut b = vec![kind];
    cstr(&mut b, name);
    msg(b'D', &b)
}

fn execute(portal: &str, max_rows: i32) -> Vec<u8> {
    let mut b = Vec::new();
    cstr(&mut b, portal);
    b.extend_from_slice(&max_rows.to_be_bytes());
    msg(b'E', &b)
}

fn sync() -> Vec<u8> {
    msg(b'S', &[])
}

/// What libpq's PQsendQueryParams writes for a statement without parameters (as
/// postgres_fdw's `create_cursor` sends DECLARE): Parse, Bind, Describe portal,
/// Execute, Sync, all unnamed.
fn extended(sql: &str) -> Vec<u8> {
    [parse("", sql), bind("", ""), describe(b'P', ""), execute("", 0), sync()].concat()
}

// ---- backend messages, one line each ---------------------------------------------

fn be32(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn cstrs(body: &[u8]) -> Vec<String> {
    body.split(|&b| b == 0).map(|s| String::from_utf8_lossy(s).into_owned()).collect()
}

/// Decodes a server's answer into one line per message; panics on a malformed one.
fn decode(mut bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        assert!(bytes.len() >= 5, "a truncated message: {bytes:?}");
        let (tag, len) = (bytes[0], be32(&bytes[1..5]));
        assert!(len >= 4 && bytes.len() > len as usize, "a bad length word {len}");
        let body = &bytes[5..1 + len as usize];
        bytes = &bytes[1 + len as usize..];
        out.push(match tag {
            b'R' => format!("R {}", be32(body)),
            b'S' => {
                let s = cstrs(body);
                format!("S {}={}", s[0], s[1])
            }
            b'K' => "K".into(),
            b'Z' => format!("Z {}", body[0] as char),
            b'C' => format!("C {}", cstrs(body)[0]),
            b'E' | b'N' => {
                let mut fields = std::collections::BTreeMap::new();
                let mut rest = body;
                while let [t, tail @ ..] = rest {
                    if *t == 0 {
                        break;
                    }
                    let end = tail.iter().position(|&b| b == 0).unwrap();
                    fields.insert(*t, String::from_utf8_lossy(&tail[..end]).into_owned());
                    rest = &tail[end + 1..];
                }
                let f = |k: u8| fields.get(&k).cloned().unwrap_or_default();
                format!("{} {} {} {}", tag as char, f(b'S'), f(b'C'), f(b'M'))
            }
            b'1' => "ParseComplete".into(),
            b'2' => "BindComplete".into(),
            b'3' => "CloseComplete".into(),
            b'n' => "NoData".into(),
            b's' => "PortalSuspended".into(),
            b'I' => "EmptyQueryResponse".into(),
            b't' => format!("t {}", i16::from_be_bytes([body[0], body[1]])),
            b'v' => format!("v {}", be32(body)),
            b'T' => {
                let n = i16::from_be_bytes([body[0], body[1]]);
                let mut names = Vec::new();
                let mut rest = &body[2..];
                for _ in 0..n {
                    let end = rest.iter().position(|&b| b == 0).unwrap();
                    let oid = be32(&rest[end + 7..]);
                    names.push(format!("{}:{oid}", String::from_utf8_lossy(&rest[..end])));
                    rest = &rest[end + 19..];
                }
                assert!(rest.is_empty());
                format!("T {}", names.join(","))
            }
            b'D' => {
                let n = i16::from_be_bytes([body[0], body[1]]);
                let mut values = Vec::new();
                let mut rest = &body[2..];
                for _ in 0..n {
                    let len = be32(rest);
                    rest = &rest[4..];
                    if len < 0 {
                        values.push("NULL".to_string());
                    } else {
                        values.push(String::from_utf8_lossy(&rest[..len as usize]).into_owned());
                        rest = &rest[len as usize..];
                    }
                }
                assert!(rest.is_empty());
                format!("D {}", values.join("|"))
            }
            t => panic!("unexpected backend message type {}", t as char),
        });
    }
    out
}

// ---- a shard and a session -----------------------------------------------------------

/// t1(a int, b text): 150 rows, a = 1..150, b = "v<a>" or NULL when a is a multiple of 10.
fn shard() -> ShardServer {
    let mut t = Table::new("t1", vec![Column::new("a", ColType::Int), Column::new("b", ColType::Text)]);
    for a in 1..=150 {
        let b = if a % 10 == 0 { Datum::Null } else { Datum::text(&format!("v{a}")) };
        t.push_row(&[Datum::Int(a), b]);
    }
    let mut c = Catalog::default();
    c.add(t);
    ShardServer::new("s1", c, 4711)
}

struct Session {
    server: ShardServer,
}

impl Session {
    /// A shard with postgres_fdw connected (its startup answer checked elsewhere).
    fn connect() -> Session {
        let mut server = shard();
        let answer = decode(&server.receive(&startup_packet(3 << 16, FDW_STARTUP)).unwrap().bytes);
        assert_eq!(answer.last().map(String::as_str), Some("Z I"));
        Session { server }
    }

    fn send(&mut self, bytes: &[u8]) -> Vec<String> {
        decode(&self.server.receive(bytes).expect("the session goes on").bytes)
    }

    fn query(&mut self, sql: &str) -> Vec<String> {
        self.send(&query(sql))
    }

    fn extended(&mut self, sql: &str) -> Vec<String> {
        self.send(&extended(sql))
    }

    fn log(&self) -> Vec<String> {
        self.server.statement_log().into_iter().map(|(pid, line)| format!("{pid} {line}")).collect()
    }
}

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

const ABORTED: &str = "E ERROR 25P02 current transaction is aborted, commands ignored until end of transaction block";

// ---- startup -------------------------------------------------------------------------

#[wasm_bindgen_test(unsupported = test)]
fn startup_answers_authentication_ok_parameters_key_and_ready() {
    let mut server = shard();
    let answer = decode(&server.receive(&startup_packet(3 << 16, FDW_STARTUP)).unwrap().bytes);
    assert_eq!(
        answer,
        lines(&[
            "R 0",
            "S application_name=postgres_fdw",
            "S client_encoding=UTF8",
            "S DateStyle=ISO, MDY",
            "S default_transaction_read_only=off",
            "S in_hot_standby=off",
            "S integer_datetimes=on",
            "S IntervalStyle=postgres",
            "S is_superuser=on",
            "S server_encoding=UTF8",
            "S server_version=15.0 (pgasync simulated shard)",
            "S session_authorization=alice",
            "S standard_conforming_strings=on",
            "S TimeZone=UTC",
            "K",
            "Z I",
        ])
    );
    assert_eq!(server.pid(), 4711);
    assert_eq!(server.transaction_status(), b'I');
    assert!(server.statement_log().is_empty(), "the startup packet is not a statement");
}

#[wasm_bindgen_test(unsupported = test)]
fn startup_in_pieces_and_after_a_refused_ssl_request() {
    let mut server = shard();
    let mut ssl = 8i32.to_be_bytes().to_vec();
    ssl.extend_from_slice(&((1234 << 16) | 5679i32).to_be_bytes());
    assert_eq!(server.receive(&ssl).unwrap().bytes, b"N", "SSL is refused with one byte");
    let packet = startup_packet(3 << 16, FDW_STARTUP);
    let mut answer = Vec::new();
    for chunk in packet.chunks(3) {
        answer.extend(server.receive(chunk).unwrap().bytes);
    }
    assert_eq!(decode(&answer).last().map(String::as_str), Some("Z I"));
}

/// Accepting a connection costs `connect_ns` of server time (the backend's start),
/// once, when the session starts: not for an SSLRequest's refusal, not per statement.
#[wasm_bindgen_test(unsupported = test)]
fn a_session_start_costs_connect_ns() {
    let mut server = shard();
    server.costs.connect_ns = 2_500_000;
    server.costs.server_query_ns = 3_000;
    let mut ssl = 8i32.to_be_bytes().to_vec();
    ssl.extend_from_slice(&((1234 << 16) | 5679i32).to_be_bytes());
    assert_eq!(server.receive(&ssl).unwrap().cost_ns, 0);
    assert_eq!(server.receive(&startup_packet(3 << 16, FDW_STARTUP)).unwrap().cost_ns, 2_500_000);
    assert_eq!(server.receive(&query("SET extra_float_digits = 3")).unwrap().cost_ns, 3_000);
}

#[wasm_bindgen_test(unsupported = test)]
fn startup_errors_are_fatal_and_close_the_connection() {
    let cases: [(Vec<u8>, &str, &str); 3] = [
        (
            startup_packet(3 << 16, &[("database", "postgres")]),
            "28000",
            "no PostgreSQL user name specified in startup packet",
        ),
        (
            startup_packet(2 << 16, FDW_STARTUP),
            "0A000",
            "unsupported frontend protocol 2.0: server supports 3.0 to 3.0",
        ),
        (vec![0, 0, 0, 3], "08P01", "invalid length of startup packet"),
    ];
    for (packet, code, message) in cases {
        let mut server = shard();
        let closed = server.receive(&packet).unwrap_err();
        assert_eq!((closed.sqlstate, closed.message.as_str()), (code, message));
        assert_eq!(decode(&closed.answer.bytes), vec![format!("E FATAL {code} {message}")]);
        assert!(server.is_closed());
        assert!(server.receive(&query("SELECT 1")).is_err(), "a closed connection takes nothing");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn a_newer_minor_version_or_pq_option_is_negotiated_down() {
    let mut server = shard();
    let mut options = FDW_STARTUP.to_vec();
    options.push(("_pq_.compression", "on"));
    let answer = decode(&server.receive(&startup_packet((3 << 16) | 2, &options)).unwrap().bytes);
    assert_eq!(answer[0], "v 0", "NegotiateProtocolVersion: minor version 0");
    assert_eq!(answer[1], "R 0");
}

// ---- configure_remote_session ---------------------------------------------------------

#[wasm_bindgen_test(unsupported = test)]
fn postgres_fdw_session_setup_answers_set() {
    let mut s = Session::connect();
    assert_eq!(s.query("SET search_path = pg_catalog"), lines(&["C SET", "Z I"]));
    // TimeZone is reported (GUC_REPORT): its new value goes out before ReadyForQuery.
    assert_eq!(s.query("SET timezone = 'GMT'"), lines(&["C SET", "S TimeZone=GMT", "Z I"]));
    // DateStyle ISO is ISO, MDY already: nothing to report.
    assert_eq!(s.query("SET datestyle = ISO"), lines(&["C SET", "Z I"]));
    assert_eq!(s.query("SET intervalstyle = postgres"), lines(&["C SET", "Z I"]));
    assert_eq!(s.query("SET extra_float_digits = 3"), lines(&["C SET", "Z I"]));
    assert_eq!(s.server.setting("search_path").as_deref(), Some("pg_catalog"));
    assert_eq!(s.server.setting("TIMEZONE").as_deref(), Some("GMT"));
    assert_eq!(s.server.setting("extra_float_digits").as_deref(), Some("3"));
    assert_eq!(
        s.log(),
        lines(&[
            "4711 statement: SET search_path = pg_catalog",
            "4711 statement: SET timezone = 'GMT'",
            "4711 statement: SET datestyle = ISO",
            "4711 statement: SET intervalstyle = postgres",
            "4711 statement: SET extra_float_digits = 3",
        ])
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn set_errors_have_postgres_codes_and_change_nothing() {
    let mut s = Session::connect();
    assert_eq!(
        s.query("SET no_such_setting = 1"),
        lines(&["E ERROR 42704 unrecognized configuration parameter \"no_such_setting\"", "Z I"])
    );
    assert_eq!(
        s.query("SET extra_float_digits = 99"),
        lines(&["E ERROR 22023 99 is outside the valid range for parameter \"extra_float_digits\" (-15 .. 3)", "Z I"])
    );
    assert_eq!(
        s.query("SET server_version = '9.6'"),
        lines(&["E ERROR 55P02 parameter \"server_version\" cannot be changed", "Z I"])
    );
    assert_eq!(s.server.setting("extra_float_digits").as_deref(), Some("1"));
    // A custom (dotted) setting takes any value, as in PostgreSQL.
    assert_eq!(s.query("SET myext.knob = 'x'"), lines(&["C SET", "Z I"]));
    // One Query is one implicit transaction: an error undoes the SET before it.
    assert_eq!(
        s.query("SET search_path = pg_catalog; SET no_such_setting = 1"),
        lines(&["C SET", "E ERROR 42704 unrecognized configuration parameter \"no_such_setting\"", "Z I"])
    );
    assert_eq!(s.server.setting("search_path").as_deref(), Some("\"$user\", public"));
}

// ---- one remote transaction, as postgres_fdw runs it ------------------------------------

#[wasm_bindgen_test(unsupported = test)]
fn postgres_fdw_scan_start_transaction_declare_fetch_close_commit() {
    let mut s = Session::connect();
    assert_eq!(s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ"), lines(&["C START TRANSACTION", "Z T"]));
    let declare = "DECLARE c1 CURSOR FOR\nSELECT a, b FROM public.t1";
    assert_eq!(s.extended(declare), lines(&["ParseComplete", "BindComplete", "NoData", "C DECLARE CURSOR", "Z T"]));
    let first = s.query("FETCH 100 FROM c1");
    assert_eq!(first.len(), 1 + 100 + 2);
    assert_eq!(first[0], "T a:20,b:25");
    assert_eq!(first[1], "D 1|v1");
    assert_eq!(first[10], "D 10|NULL");
    assert_eq!(first[100], "D 100|NULL");
    assert_eq!(first[101..], lines(&["C FETCH 100", "Z T"]));
    let second = s.query("FETCH 100 FROM c1");
    assert_eq!((second[1].as_str(), second[50].as_str()), ("D 101|v101", "D 150|NULL"));
    assert_eq!(second[51..], lines(&["C FETCH 50", "Z T"]));
    assert_eq!(s.query("FETCH 100 FROM c1"), lines(&["T a:20,b:25", "C FETCH 0", "Z T"]));
    assert_eq!(s.query("CLOSE c1"), lines(&["C CLOSE CURSOR", "Z T"]));
    assert_eq!(s.query("COMMIT TRANSACTION"), lines(&["C COMMIT", "Z I"]));
    assert_eq!(s.server.transaction_status(), b'I');
    assert_eq!(
        s.log(),
        lines(&[
            "4711 statement: START TRANSACTION ISOLATION LEVEL REPEATABLE READ",
            "4711 execute <unnamed>: DECLARE c1 CURSOR FOR\nSELECT a, b FROM public.t1",
            "4711 statement: FETCH 100 FROM c1",
            "4711 statement: FETCH 100 FROM c1",
            "4711 statement: FETCH 100 FROM c1",
            "4711 statement: CLOSE c1",
            "4711 statement: COMMIT TRANSACTION",
        ])
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn declare_with_a_where_clause_and_order_by_as_postgres_fdw_deparses_it() {
    let mut s = Session::connect();
    s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    let declare = "DECLARE c2 CURSOR FOR\nSELECT a FROM public.t1 WHERE ((a > 145)) ORDER BY a DESC NULLS FIRST";
    assert_eq!(s.extended(declare).last().map(String::as_str), Some("Z T"));
    assert_eq!(s.query("FETCH 3 FROM c2"), lines(&["T a:20", "D 150", "D 149", "D 148", "C FETCH 3", "Z T"]));
}

#[wasm_bindgen_test(unsupported = test)]
fn a_cursor_ends_with_its_transaction() {
    let mut s = Session::connect();
    s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    s.extended("DECLARE c1 CURSOR FOR\nSELECT a FROM public.t1");
    assert_eq!(s.query("COMMIT TRANSACTION"), lines(&["C COMMIT", "Z I"]));
    assert_eq!(s.query("FETCH 1 FROM c1"), lines(&["E ERROR 34000 cursor \"c1\" does not exist", "Z I"]));
}

#[wasm_bindgen_test(unsupported = test)]
fn declare_outside_a_transaction_block_is_refused() {
    let mut s = Session::connect();
    let answer = s.extended("DECLARE c1 CURSOR FOR\nSELECT a FROM public.t1");
    assert_eq!(
        answer,
        lines(&[
            "ParseComplete",
            "BindComplete",
            "NoData",
            "E ERROR 25P01 DECLARE CURSOR can only be used in transaction blocks",
            "Z I",
        ])
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn transaction_warnings_are_notices() {
    let mut s = Session::connect();
    s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(
        s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ"),
        lines(&["N WARNING 25001 there is already a transaction in progress", "C START TRANSACTION", "Z T"])
    );
    assert_eq!(s.query("COMMIT TRANSACTION"), lines(&["C COMMIT", "Z I"]));
    assert_eq!(
        s.query("COMMIT TRANSACTION"),
        lines(&["N WARNING 25P01 there is no transaction in progress", "C COMMIT", "Z I"])
    );
    assert_eq!(
        s.query("ABORT TRANSACTION"),
        lines(&["N WARNING 25P01 there is no transaction in progress", "C ROLLBACK", "Z I"])
    );
}

// ---- errors ------------------------------------------------------------------------------

#[wasm_bindgen_test(unsupported = test)]
fn an_error_in_a_transaction_block_fails_it_until_rollback() {
    let mut s = Session::connect();
    s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(s.query("FETCH 100 FROM c9"), lines(&["E ERROR 34000 cursor \"c9\" does not exist", "Z E"]));
    assert_eq!(s.server.transaction_status(), b'E');
    assert_eq!(s.query("FETCH 100 FROM c1"), lines(&[ABORTED, "Z E"]));
    assert_eq!(s.query("SET search_path = pg_catalog"), lines(&[ABORTED, "Z E"]));
    assert_eq!(s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ"), lines(&[ABORTED, "Z E"]));
    // Extended protocol too: Parse refuses it (exec_parse_message's check), then Sync.
    assert_eq!(s.extended("DECLARE c1 CURSOR FOR\nSELECT a FROM public.t1"), lines(&[ABORTED, "Z E"]));
    assert_eq!(s.query("ABORT TRANSACTION"), lines(&["C ROLLBACK", "Z I"]));
    assert_eq!(s.query("SET search_path = pg_catalog"), lines(&["C SET", "Z I"]));
}

#[wasm_bindgen_test(unsupported = test)]
fn commit_of_a_failed_block_rolls_back() {
    let mut s = Session::connect();
    s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    // A reported setting goes out with the next ReadyForQuery, inside the block too.
    assert_eq!(s.query("SET timezone = 'GMT'"), lines(&["C SET", "S TimeZone=GMT", "Z T"]));
    s.query("SELECT a FROM public.nope");
    assert_eq!(s.query("COMMIT TRANSACTION"), lines(&["C ROLLBACK", "S TimeZone=UTC", "Z I"]));
    assert_eq!(s.server.setting("TimeZone").as_deref(), Some("UTC"), "the SET was rolled back");
    assert_eq!(
        s.query("ROLLBACK"),
        lines(&["N WARNING 25P01 there is no transaction in progress", "C ROLLBACK", "Z I"])
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn a_committed_block_keeps_its_settings_and_reports_them() {
    let mut s = Session::connect();
    s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(s.query("SET timezone = 'GMT'"), lines(&["C SET", "S TimeZone=GMT", "Z T"]));
    assert_eq!(s.query("COMMIT TRANSACTION"), lines(&["C COMMIT", "Z I"]));
    assert_eq!(s.server.setting("TimeZone").as_deref(), Some("GMT"));
}

#[wasm_bindgen_test(unsupported = test)]
fn errors_carry_postgres_codes() {
    let mut s = Session::connect();
    let cases = [
        ("SELECT a FROM public.nope", "42P01"),
        ("SELECT nope FROM public.t1", "42703"),
        ("SELEC a FROM public.t1", "42601"),
        ("FETCH 1 FROM nowhere", "34000"),
        ("CLOSE nowhere", "34000"),
    ];
    for (sql, code) in cases {
        let answer = s.query(sql);
        assert_eq!(answer.len(), 2, "{sql}: {answer:?}");
        assert!(answer[0].starts_with(&format!("E ERROR {code} ")), "{sql}: {answer:?}");
        assert_eq!(answer[1], "Z I");
    }
    // A syntax error rejects the whole query before anything runs (or is logged).
    let before = s.log().len();
    let answer = s.query("SET search_path = pg_catalog; SELEC 1");
    assert!(answer[0].starts_with("E ERROR 42601 "), "{answer:?}");
    assert_eq!(s.log().len(), before);
    assert_eq!(s.server.setting("search_path").as_deref(), Some("\"$user\", public"));
}

#[wasm_bindgen_test(unsupported = test)]
fn an_extended_protocol_error_skips_to_sync() {
    let mut s = Session::connect();
    s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    // The Parse fails: Bind, Describe and Execute are discarded; Sync answers.
    let answer = s.extended("DECLARE c1 CURSOR FOR\nSELECT a FROM public.nope");
    assert_eq!(answer.len(), 2, "{answer:?}");
    assert!(answer[0].starts_with("E ERROR 42P01 relation "), "{answer:?}");
    assert_eq!(answer[1], "Z E");
    // Without a transaction block: the same, and the session is idle again.
    let mut s = Session::connect();
    let answer = s.send(&[parse("", "SELEC 1"), bind("", ""), execute("", 0), msg(b'H', &[]), sync()].concat());
    assert_eq!(answer.len(), 2, "{answer:?}");
    assert!(answer[0].starts_with("E ERROR 42601 "));
    assert_eq!(answer[1], "Z I");
    // An error at Bind: the messages after it up to Sync are discarded too.
    let answer = s.send(&[bind("", "nope"), parse("", "SELECT a FROM public.t1"), sync(), sync()].concat());
    assert_eq!(
        answer,
        lines(&["E ERROR 26000 prepared statement \"nope\" does not exist", "Z I", "Z I"]),
        "Parse after the error is skipped; each Sync answers"
    );
    assert!(s.log().is_empty(), "nothing was executed: {:?}", s.log());
}

// ---- the extended protocol beyond DECLARE -------------------------------------------------

#[wasm_bindgen_test(unsupported = test)]
fn extended_select_with_a_row_limit_suspends_and_resumes() {
    let mut s = Session::connect();
    s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    let sql = "SELECT a FROM public.t1 WHERE ((a <= 3))";
    let answer = s.send(&[parse("s1", sql), bind("p1", "s1"), describe(b'P', "p1"), execute("p1", 2), sync()].concat());
    assert_eq!(answer, lines(&["ParseComplete", "BindComplete", "T a:20", "D 1", "D 2", "PortalSuspended", "Z T"]));
    assert_eq!(s.send(&[execute("p1", 2), sync()].concat()), lines(&["D 3", "C SELECT 1", "Z T"]));
    assert_eq!(s.send(&[describe(b'S', "s1"), sync()].concat()), lines(&["t 0", "T a:20", "Z T"]));
    assert_eq!(
        s.send(&[msg(b'C', b"Pp1\0"), msg(b'C', b"Ss1\0"), sync()].concat()),
        lines(&["CloseComplete", "CloseComplete", "Z T"])
    );
    assert_eq!(
        s.log(),
        lines(&[
            "4711 statement: START TRANSACTION ISOLATION LEVEL REPEATABLE READ",
            "4711 execute s1/p1: SELECT a FROM public.t1 WHERE ((a <= 3))",
            "4711 execute fetch from s1/p1: SELECT a FROM public.t1 WHERE ((a <= 3))",
        ])
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn empty_queries_answer_empty_query_response() {
    let mut s = Session::connect();
    assert_eq!(s.query(""), lines(&["EmptyQueryResponse", "Z I"]));
    assert_eq!(s.extended(""), lines(&["ParseComplete", "BindComplete", "NoData", "EmptyQueryResponse", "Z I"]));
}

#[wasm_bindgen_test(unsupported = test)]
fn terminate_ends_the_session_and_a_new_startup_begins_another() {
    let mut s = Session::connect();
    s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    s.query("SET search_path = pg_catalog");
    assert!(s.send(&msg(b'X', &[])).is_empty());
    let answer = s.send(&startup_packet(3 << 16, FDW_STARTUP));
    assert_eq!(answer.last().map(String::as_str), Some("Z I"), "a fresh session, not in a transaction");
    assert_eq!(s.server.setting("search_path").as_deref(), Some("\"$user\", public"));
}

#[wasm_bindgen_test(unsupported = test)]
fn a_cancel_fails_the_transaction_with_57014() {
    let mut s = Session::connect();
    s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    let answer = decode(&s.server.cancel_response());
    assert_eq!(answer, lines(&["E ERROR 57014 canceling statement due to user request", "Z E"]));
    assert_eq!(s.query("FETCH 1 FROM c1"), lines(&[ABORTED, "Z E"]));
    assert_eq!(s.query("ABORT TRANSACTION"), lines(&["C ROLLBACK", "Z I"]));
}

#[wasm_bindgen_test(unsupported = test)]
fn framing_errors_are_fatal_08p01() {
    for (bytes, message) in [
        (vec![b'Q', 0, 0, 0, 2], "invalid message length"),
        (vec![b'S', 0, 0, 0x27, 0x15], "invalid message length"), // 10005 > PQ_SMALL_MESSAGE_LIMIT
        (vec![b'?'], "invalid frontend message type 63"),
    ] {
        let mut s = Session::connect();
        let closed = s.server.receive(&bytes).unwrap_err();
        assert_eq!((closed.sqlstate, closed.message.as_str()), ("08P01", message));
        assert_eq!(decode(&closed.answer.bytes), vec![format!("E FATAL 08P01 {message}")]);
    }
    // A body error is an ERROR: the session goes on.
    let mut s = Session::connect();
    assert_eq!(
        s.send(&msg(b'Q', b"SELECT 1")),
        lines(&["E ERROR 08P01 invalid string in message", "Z I"]),
        "a query string without its terminator"
    );
    assert_eq!(s.query("SET search_path = pg_catalog"), lines(&["C SET", "Z I"]));
}

#[wasm_bindgen_test(unsupported = test)]
fn a_fetch_portal_that_fetches_from_itself_fails_instead_of_looping() {
    // Found by tests/suite/protocol_fuzz.rs: Bind may name its portal c1 and bind it to
    // `FETCH … FROM c1`; looking up that portal's columns followed c1 to c1 forever.
    // PostgreSQL describes it as NoData and refuses to run it (the portal is active).
    let mut s = Session::connect();
    s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    let answer = s
        .send(&[parse("", "FETCH 1 FROM c1"), bind("c1", ""), describe(b'P', "c1"), execute("c1", 0), sync()].concat());
    assert_eq!(
        answer,
        lines(&["ParseComplete", "BindComplete", "NoData", "E ERROR 55000 portal \"c1\" cannot be run", "Z E"])
    );
    // Two FETCH portals that fetch from each other: no columns either, and no loop.
    let mut s = Session::connect();
    s.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    let answer = s.send(
        &[
            parse("f1", "FETCH 1 FROM c2"),
            parse("f2", "FETCH 1 FROM c1"),
            bind("c1", "f1"),
            bind("c2", "f2"),
            describe(b'P', "c1"),
            describe(b'S', "f2"),
            sync(),
        ]
        .concat(),
    );
    assert_eq!(
        answer,
        lines(&["ParseComplete", "ParseComplete", "BindComplete", "BindComplete", "NoData", "t 0", "NoData", "Z T"])
    );
}
