//! Breakpoints of the demo: "run to the next event of this kind". A kind is matched
//! against the trace events of each step (as a lesson's note is, `lesson::note_matches`),
//! so a run stops at the first step whose events contain one: `DemoSession::run_to`.
//!
//! | kind             | trace event                               | PostgreSQL                      |
//! |------------------|-------------------------------------------|---------------------------------|
//! | `notify`         | `Notify`                                  | ExecAsyncNotify (execAsync.c)   |
//! | `configure_wait` | `ConfigureWait`                           | ExecAsyncConfigureWait          |
//! | `drain`          | `Drain`                                   | process_pending_request (postgres_fdw.c) |
//! | `append_row`     | `NodeRow` of an Append                    | ExecAppend returns a tuple      |
//! | `append_call`    | `NodeCall` of an Append                   | ExecProcNode → ExecAppend       |
//! | `reentry`        | `Reentry` (teaching knob `no_descendant_check`) | none: seed 000's hazard, ExecAsyncWaitForNode dispatching another subtree |
//! | `wire`, `wire:K` | `Send` (written, not queued) or `Response`, on connection K or any | a protocol message |
//!
//! `NodeCall` and `NodeRow` exist only in runs with `EState::trace_calls` (the demo's
//! sessions); the others are always recorded.
//!
//! Invariants:
//! - A breakpoint only reads the trace: stopping at one never changes the run, so a
//!   run with breakpoints gives the trace of a run without.
//! - `KINDS` and `parse` list the same ids (a test parses every id of `KINDS`), and an
//!   unknown id is refused with the list of known ones.
//! - A `wire` breakpoint stops at a message that reached the wire (`Send` with `queued:
//!   false`) or at an answer; a statement queued behind a busy connection is not on
//!   the wire yet.
//!
//! PostgreSQL has no counterpart (a debugger's breakpoint on the function in the table
//! is the nearest); the kinds stand for the PostgreSQL functions named above.

use crate::trace::{TraceEvent, TraceKind};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakOn {
    Notify,
    ConfigureWait,
    Drain,
    AppendRow,
    AppendCall,
    /// The reentrancy hazard (`async_through::reentry`).
    Reentry,
    /// A message on the wire: connection `Some(k)`, or any.
    Wire(Option<usize>),
}

/// A kind as the page lists it: `id` (what `parse` takes), a short label, and what it
/// is in PostgreSQL's terms (the tooltip).
#[derive(Clone, Debug, Serialize)]
pub struct BreakKind {
    pub id: &'static str,
    pub label: &'static str,
    pub postgres: &'static str,
}

pub const KINDS: &[BreakKind] = &[
    BreakKind {
        id: "notify",
        label: "Notify",
        postgres: "ExecAsyncNotify (execAsync.c) → postgresForeignAsyncNotify: a waiting request's socket had input",
    },
    BreakKind {
        id: "configure_wait",
        label: "ConfigureWait",
        postgres: "ExecAsyncConfigureWait (execAsync.c) → postgresForeignAsyncConfigureWait, from ExecAppendAsyncEventWait: a waiting request adds its socket to the wait event set (or not)",
    },
    BreakKind {
        id: "drain",
        label: "pending-request drain",
        postgres: "process_pending_request (postgres_fdw.c): a scan needs the shared connection and first reads the FETCH in flight for another scan (the connection's pendingAreq)",
    },
    BreakKind {
        id: "append_row",
        label: "row out of Append",
        postgres: "ExecAppend (nodeAppend.c) returns a tuple to its parent",
    },
    BreakKind {
        id: "append_call",
        label: "next ExecAppend call",
        postgres: "the parent's ExecProcNode calls ExecAppend (nodeAppend.c) for its next tuple",
    },
    BreakKind {
        id: "reentry",
        label: "re-entry hazard",
        postgres: "none in PostgreSQL 15: the 2016 framework's ExecAsyncWaitForNode, waiting on every event, dispatches another subtree's ready scan and re-enters its executing Append (seed 000); only with no_descendant_check",
    },
    BreakKind {
        id: "wire",
        label: "wire message",
        postgres: "a protocol message written to or read from a connection (libpq's PQsendQuery / PQgetResult)",
    },
];

/// Parses a kind: an `id` of `KINDS`, or `wire:K` (connection K).
pub fn parse(spec: &str) -> Result<BreakOn, String> {
    let spec = spec.trim();
    Ok(match spec {
        "notify" => BreakOn::Notify,
        "configure_wait" => BreakOn::ConfigureWait,
        "drain" => BreakOn::Drain,
        "append_row" => BreakOn::AppendRow,
        "append_call" => BreakOn::AppendCall,
        "reentry" => BreakOn::Reentry,
        "wire" => BreakOn::Wire(None),
        _ => match spec.strip_prefix("wire:") {
            Some(k) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => {
                BreakOn::Wire(Some(k.parse().map_err(|_| format!("bad connection in \"{spec}\""))?))
            }
            _ => {
                let ids: Vec<&str> = KINDS.iter().map(|k| k.id).collect();
                return Err(format!("unknown breakpoint \"{spec}\" (expected {}, or wire:K)", ids.join(", ")));
            }
        },
    })
}

/// Does trace event `e` match `on`? `is_append(node)` says whether a node is an Append.
pub fn matches(on: BreakOn, e: &TraceEvent, is_append: impl Fn(usize) -> bool) -> bool {
    match (on, &e.kind) {
        (BreakOn::Notify, TraceKind::Notify { .. }) => true,
        (BreakOn::ConfigureWait, TraceKind::ConfigureWait { .. }) => true,
        (BreakOn::Drain, TraceKind::Drain { .. }) => true,
        (BreakOn::AppendRow, TraceKind::NodeRow { node }) => is_append(*node),
        (BreakOn::AppendCall, TraceKind::NodeCall { node }) => is_append(*node),
        (BreakOn::Reentry, TraceKind::Reentry { .. }) => true,
        (BreakOn::Wire(want), TraceKind::Send { conn, queued: false, .. } | TraceKind::Response { conn, .. }) => {
            want.is_none_or(|k| k == *conn)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn kinds_parse_and_bad_ones_say_what_is_expected() {
        for k in KINDS {
            assert!(parse(k.id).is_ok(), "{}", k.id);
        }
        assert_eq!(parse("wire:3"), Ok(BreakOn::Wire(Some(3))));
        let e = parse("wire:x").unwrap_err();
        assert!(e.contains("unknown breakpoint") && e.contains("notify"), "{e}");
        assert!(parse("bogus").is_err());
    }
}
