//! The trace crossing to JavaScript as numbers (issue 20): a recording copies the whole
//! run's trace into the page (66,000 events at 16 shards, 250,000 at 64), and as JSON
//! text (serde_json writing it, `JSON.parse` reading it) that copy was about as long as
//! the run itself. Here each event is a few `f64`s in one flat array (one copy of wasm
//! memory) and its strings an array of their own; the page's `unpackTrace`
//! (web/state.js) makes of them the same objects the JSON gave (`TraceEvent`'s serde
//! form: `time_ns`, `kind`, then the variant's fields).
//!
//! Layout, event after event: the kind's code (`KINDS`), `time_ns`, then the variant's
//! fields in declaration order: a number as itself, a bool as 0/1, an `AsyncState` or
//! `Proto` as its code (`STATES`, `PROTOS`), a string as its index in the strings, an
//! `Option` as -1 for None, `Wait`'s connections as their count then each of them.
//!
//! Invariants:
//! - every number is exact in an f64 (times, counts and ids below 2^53, as the JSON
//!   path assumed too);
//! - the tables below are the serde names (a unit test checks each against
//!   serde_json), and a new variant does not compile until it has a code.
//!
//! PostgreSQL has no counterpart.

use crate::executor::exec_async::AsyncState;
use crate::remote::Proto;
use crate::trace::{TraceEvent, TraceKind};

/// `TraceKind`'s variants by code (their serde tag, `kind`).
pub const KINDS: [&str; 15] = [
    "Request",
    "Send",
    "Response",
    "Wait",
    "Arrive",
    "NodeStart",
    "Row",
    "Error",
    "Cancel",
    "ConfigureWait",
    "Notify",
    "Drain",
    "NodeCall",
    "NodeRow",
    "Reentry",
];

/// `AsyncState`'s serde names by code.
pub const STATES: [&str; 5] = ["Idle", "Waiting", "CallbackPending", "Complete", "Cancelled"];

/// `Proto`'s serde names by code.
pub const PROTOS: [&str; 5] = ["startup", "simple", "extended", "prepare", "exec_prepared"];

fn state_code(s: AsyncState) -> f64 {
    match s {
        AsyncState::Idle => 0.0,
        AsyncState::Waiting => 1.0,
        AsyncState::CallbackPending => 2.0,
        AsyncState::Complete => 3.0,
        AsyncState::Cancelled => 4.0,
    }
}

fn proto_code(p: Proto) -> f64 {
    match p {
        Proto::Startup => 0.0,
        Proto::Simple => 1.0,
        Proto::Extended => 2.0,
        Proto::Prepare => 3.0,
        Proto::ExecPrepared => 4.0,
    }
}

/// Appends `events` to `nums` and their strings to `strs` (indices count from the
/// start of `strs`, so one call's output is read alone).
pub fn pack(events: &[TraceEvent], nums: &mut Vec<f64>, strs: &mut Vec<String>) {
    let text = |s: &str, strs: &mut Vec<String>| {
        strs.push(s.to_string());
        (strs.len() - 1) as f64
    };
    let opt = |n: Option<usize>| n.map_or(-1.0, |n| n as f64);
    for e in events {
        let t = e.time_ns as f64;
        match &e.kind {
            TraceKind::Request { request, requestor, requestee, from, to } => nums.extend_from_slice(&[
                0.0,
                t,
                *request as f64,
                *requestor as f64,
                *requestee as f64,
                state_code(*from),
                state_code(*to),
            ]),
            TraceKind::Send { conn, proto, sql, bytes, queued, node } => {
                let s = text(sql, strs);
                nums.extend_from_slice(&[
                    1.0,
                    t,
                    *conn as f64,
                    proto_code(*proto),
                    s,
                    *bytes as f64,
                    *queued as u8 as f64,
                    opt(*node),
                ])
            }
            TraceKind::Response { conn, proto, sql, rows, bytes, error, node } => {
                let s = text(sql, strs);
                let err = match error {
                    Some(m) => text(m, strs),
                    None => -1.0,
                };
                nums.extend_from_slice(&[
                    2.0,
                    t,
                    *conn as f64,
                    proto_code(*proto),
                    s,
                    *rows as f64,
                    *bytes as f64,
                    err,
                    opt(*node),
                ])
            }
            TraceKind::Wait { conns } => {
                nums.extend_from_slice(&[3.0, t, conns.len() as f64]);
                nums.extend(conns.iter().map(|&c| c as f64));
            }
            TraceKind::Arrive { conn, bytes } => nums.extend_from_slice(&[4.0, t, *conn as f64, *bytes as f64]),
            TraceKind::NodeStart { node } => nums.extend_from_slice(&[5.0, t, *node as f64]),
            TraceKind::Row { n } => nums.extend_from_slice(&[6.0, t, *n as f64]),
            TraceKind::Error { message } => {
                let m = text(message, strs);
                nums.extend_from_slice(&[7.0, t, m])
            }
            TraceKind::Cancel { conn } => nums.extend_from_slice(&[8.0, t, *conn as f64]),
            TraceKind::ConfigureWait { request, added } => {
                nums.extend_from_slice(&[9.0, t, *request as f64, *added as u8 as f64])
            }
            TraceKind::Notify { request } => nums.extend_from_slice(&[10.0, t, *request as f64]),
            TraceKind::Drain { conn, request, node } => {
                nums.extend_from_slice(&[11.0, t, *conn as f64, *request as f64, *node as f64])
            }
            TraceKind::NodeCall { node } => nums.extend_from_slice(&[12.0, t, *node as f64]),
            TraceKind::NodeRow { node } => nums.extend_from_slice(&[13.0, t, *node as f64]),
            TraceKind::Reentry { node, child, waiting, request, message } => {
                let m = text(message, strs);
                nums.extend_from_slice(&[14.0, t, *node as f64, *child as f64, *waiting as f64, *request as f64, m])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One event of every kind.
    fn every_kind() -> Vec<TraceEvent> {
        let kinds = vec![
            TraceKind::Request {
                request: 3,
                requestor: 1,
                requestee: 2,
                from: AsyncState::Waiting,
                to: AsyncState::CallbackPending,
            },
            TraceKind::Send {
                conn: 1,
                proto: Proto::ExecPrepared,
                sql: "FETCH 100 FROM c1".into(),
                bytes: 40,
                queued: true,
                node: None,
            },
            TraceKind::Response {
                conn: 1,
                proto: Proto::Extended,
                sql: "SELECT 1".into(),
                rows: 1,
                bytes: 30,
                error: Some("boom".into()),
                node: Some(4),
            },
            TraceKind::Wait { conns: vec![0, 2, 5] },
            TraceKind::Arrive { conn: 2, bytes: 8192 },
            TraceKind::NodeStart { node: 1 },
            TraceKind::Row { n: 12 },
            TraceKind::Error { message: "division by zero".into() },
            TraceKind::Cancel { conn: 0 },
            TraceKind::ConfigureWait { request: 2, added: false },
            TraceKind::Notify { request: 1 },
            TraceKind::Drain { conn: 0, request: 1, node: 3 },
            TraceKind::NodeCall { node: 2 },
            TraceKind::NodeRow { node: 2 },
            TraceKind::Reentry { node: 1, child: 2, waiting: 0, request: 1, message: "re-entered".into() },
        ];
        kinds.into_iter().enumerate().map(|(i, kind)| TraceEvent { time_ns: 1_000 * i as u64 + 7, kind }).collect()
    }

    /// What the page's `unpackTrace` does, here: the serde form back from the numbers.
    fn unpack(nums: &[f64], strs: &[String]) -> Vec<serde_json::Value> {
        use serde_json::{json, Value};
        let mut out = Vec::new();
        let mut it = nums.iter().copied();
        let s = |x: f64| Value::String(strs[x as usize].clone());
        let opt = |x: f64| if x < 0.0 { Value::Null } else { json!(x as u64) };
        while let Some(code) = it.next() {
            let mut next = || it.next().expect("a field");
            let kind = KINDS[code as usize];
            let t = next() as u64;
            let mut v = json!({ "time_ns": t, "kind": kind });
            let o = v.as_object_mut().unwrap();
            let mut put = |k: &str, x: Value| {
                o.insert(k.into(), x);
            };
            match kind {
                "Request" => {
                    for k in ["request", "requestor", "requestee"] {
                        put(k, json!(next() as u64));
                    }
                    put("from", json!(STATES[next() as usize]));
                    put("to", json!(STATES[next() as usize]));
                }
                "Send" | "Response" => {
                    put("conn", json!(next() as u64));
                    put("proto", json!(PROTOS[next() as usize]));
                    put("sql", s(next()));
                    if kind == "Response" {
                        put("rows", json!(next() as u64));
                    }
                    put("bytes", json!(next() as u64));
                    if kind == "Send" {
                        put("queued", json!(next() == 1.0));
                    } else {
                        let e = next();
                        put("error", if e < 0.0 { Value::Null } else { s(e) });
                    }
                    put("node", opt(next()));
                }
                "Wait" => {
                    let n = next() as usize;
                    put("conns", Value::Array((0..n).map(|_| json!(next() as u64)).collect()));
                }
                "Arrive" => {
                    put("conn", json!(next() as u64));
                    put("bytes", json!(next() as u64));
                }
                "NodeStart" | "NodeCall" | "NodeRow" => put("node", json!(next() as u64)),
                "Row" => put("n", json!(next() as u64)),
                "Error" => put("message", s(next())),
                "Cancel" => put("conn", json!(next() as u64)),
                "ConfigureWait" => {
                    put("request", json!(next() as u64));
                    put("added", json!(next() == 1.0));
                }
                "Notify" => put("request", json!(next() as u64)),
                "Drain" => {
                    for k in ["conn", "request", "node"] {
                        put(k, json!(next() as u64));
                    }
                }
                "Reentry" => {
                    for k in ["node", "child", "waiting", "request"] {
                        put(k, json!(next() as u64));
                    }
                    put("message", s(next()));
                }
                k => panic!("unknown kind {k}"),
            }
            out.push(v);
        }
        out
    }

    #[test]
    fn packed_events_read_back_as_their_serde_form() {
        let events = every_kind();
        let (mut nums, mut strs) = (Vec::new(), Vec::new());
        pack(&events, &mut nums, &mut strs);
        let back = unpack(&nums, &strs);
        assert_eq!(back.len(), events.len());
        for (e, b) in events.iter().zip(&back) {
            assert_eq!(&serde_json::to_value(e).unwrap(), b, "{e:?}");
        }
    }

    #[test]
    fn the_name_tables_are_the_serde_names() {
        for e in every_kind() {
            let v = serde_json::to_value(&e).unwrap();
            let (mut nums, mut strs) = (Vec::new(), Vec::new());
            pack(std::slice::from_ref(&e), &mut nums, &mut strs);
            assert_eq!(v["kind"], KINDS[nums[0] as usize]);
        }
        for s in [
            AsyncState::Idle,
            AsyncState::Waiting,
            AsyncState::CallbackPending,
            AsyncState::Complete,
            AsyncState::Cancelled,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), STATES[state_code(s) as usize]);
        }
        for p in [Proto::Startup, Proto::Simple, Proto::Extended, Proto::Prepare, Proto::ExecPrepared] {
            assert_eq!(serde_json::to_value(p).unwrap(), PROTOS[proto_code(p) as usize]);
        }
    }
}
