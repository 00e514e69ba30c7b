//! What the wire-sequence tests (tests/pg15_fidelity*.rs) share: the order of a log
//! that does not depend on timing, rows as text, and a side-by-side diff of two
//! statement lists.
#![allow(dead_code)]

use pgasync::types::Datum;

/// The order across shards that is fixed: everything but disconnections and, in async
/// mode, the FETCHes (sent without waiting, their order across shards depends on
/// timing; tests/pg15_fidelity.rs's `waited_order`).
pub fn fixed_order(timeline: Vec<String>, async_capable: bool) -> Vec<String> {
    timeline
        .into_iter()
        .filter(|l| !l.contains(" disconnection") && !(async_capable && l.contains(" statement: FETCH ")))
        .collect()
}

/// A row as psql's unaligned output writes it (`|` between values, NULL empty).
pub fn row_text(r: &[Datum]) -> String {
    r.iter()
        .map(|d| match d {
            Datum::Null => String::new(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join("|")
}

/// PostgreSQL's lines beside ours, numbered, `!!` where they differ.
pub fn diff_lines(expected: &[String], got: &[String]) -> String {
    let mut out = String::new();
    for i in 0..expected.len().max(got.len()) {
        let (e, g) = (expected.get(i).map(String::as_str), got.get(i).map(String::as_str));
        let mark = if e == g { "  " } else { "!!" };
        out.push_str(&format!(
            "{mark} {i:3} pg15: {:<70} pgasync: {}\n",
            e.unwrap_or("-").replace('\n', "\\n"),
            g.unwrap_or("-").replace('\n', "\\n")
        ));
    }
    out
}
