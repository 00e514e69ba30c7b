//! Exporting a finished run: its trace as JSON or CSV, and its timeline as SVG (one
//! lane per connection, busy from each statement sent to its answer, and one lane per
//! async request, coloured by state). The CLI's `pgasync trace` writes them; the page
//! exports its own panels.
//!
//! Times are in milliseconds of the run's clock (virtual for simulated runs).

use crate::exec_async::AsyncState;
use crate::trace::{TraceEvent, TraceKind};
use serde::Serialize;

/// What a trace export carries besides the events: names for the numbers in them.
#[derive(Clone, Debug, Serialize)]
pub struct TraceHeader {
    pub scenario: String,
    pub mode: String,
    pub behaviour: String,
    /// Plan node labels by node id (`Async Foreign Scan on ft1`).
    pub nodes: Vec<String>,
    /// Server name by connection number.
    pub connections: Vec<String>,
    pub total_ms: f64,
}

#[derive(Serialize)]
struct TraceDoc<'a> {
    #[serde(flatten)]
    header: &'a TraceHeader,
    events: &'a [TraceEvent],
}

/// `{scenario, mode, behaviour, nodes, connections, total_ms, events: [...]}`; each
/// event as the trace records it (`time_ns`, `kind` and its fields).
pub fn trace_json(header: &TraceHeader, events: &[TraceEvent]) -> String {
    serde_json::to_string_pretty(&TraceDoc { header, events }).unwrap_or_default()
}

const CSV_HEADER: &str = "time_ms,kind,connection,node,request,requestor,from,to,protocol,sql,rows,bytes,queued,detail";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn state(s: AsyncState) -> &'static str {
    match s {
        AsyncState::Idle => "Idle",
        AsyncState::Waiting => "Waiting",
        AsyncState::CallbackPending => "CallbackPending",
        AsyncState::Complete => "Complete",
        AsyncState::Cancelled => "Cancelled",
    }
}

/// One line per event, in the columns of `CSV_HEADER` (empty where the event has none;
/// connections and nodes by name).
pub fn trace_csv(header: &TraceHeader, events: &[TraceEvent]) -> String {
    let conn = |k: usize| header.connections.get(k).cloned().unwrap_or_else(|| k.to_string());
    let node = |k: usize| header.nodes.get(k).cloned().unwrap_or_else(|| k.to_string());
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for e in events {
        let mut f: [String; 14] = Default::default();
        f[0] = format!("{:.6}", e.time_ns as f64 / 1e6);
        match &e.kind {
            TraceKind::Request { request, requestor, requestee, from, to } => {
                f[1] = "request".into();
                f[3] = node(*requestee);
                f[4] = request.to_string();
                f[5] = node(*requestor);
                f[6] = state(*from).into();
                f[7] = state(*to).into();
            }
            TraceKind::Send { conn: c, proto, sql, bytes, queued, node: n } => {
                f[1] = "send".into();
                f[2] = conn(*c);
                f[3] = n.map(node).unwrap_or_default();
                f[8] = format!("{proto:?}");
                f[9] = sql.clone();
                f[11] = bytes.to_string();
                f[12] = queued.to_string();
            }
            TraceKind::Response { conn: c, proto, sql, rows, bytes, error, node: n } => {
                f[1] = "response".into();
                f[2] = conn(*c);
                f[3] = n.map(node).unwrap_or_default();
                f[8] = format!("{proto:?}");
                f[9] = sql.clone();
                f[10] = rows.to_string();
                f[11] = bytes.to_string();
                f[13] = error.clone().unwrap_or_default();
            }
            TraceKind::Wait { conns } => {
                f[1] = "wait".into();
                f[13] = conns.iter().map(|k| conn(*k)).collect::<Vec<_>>().join(" ");
            }
            TraceKind::Arrive { conn: c, bytes } => {
                f[1] = "arrive".into();
                f[2] = conn(*c);
                f[11] = bytes.to_string();
            }
            TraceKind::NodeStart { node: n } => {
                f[1] = "node_start".into();
                f[3] = node(*n);
            }
            TraceKind::Row { n } => {
                f[1] = "row".into();
                f[10] = n.to_string();
            }
            TraceKind::Error { message } => {
                f[1] = "error".into();
                f[13] = message.clone();
            }
            TraceKind::Cancel { conn: c } => {
                f[1] = "cancel".into();
                f[2] = conn(*c);
            }
            TraceKind::ConfigureWait { request, added } => {
                f[1] = "configure_wait".into();
                f[4] = request.to_string();
                f[13] = if *added { "added its connection" } else { "no event" }.into();
            }
            TraceKind::Notify { request } => {
                f[1] = "notify".into();
                f[4] = request.to_string();
            }
            TraceKind::Drain { conn: c, request, node: n } => {
                f[1] = "drain".into();
                f[2] = conn(*c);
                f[3] = node(*n);
                f[4] = request.to_string();
            }
            TraceKind::NodeCall { node: n } => {
                f[1] = "node_call".into();
                f[3] = node(*n);
            }
            TraceKind::NodeRow { node: n } => {
                f[1] = "node_row".into();
                f[3] = node(*n);
            }
        }
        out.push_str(&f.iter().map(|s| csv_field(s)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

/// A span on a lane: from, to (ns), its colour and its tooltip.
struct Bar {
    from: u64,
    to: u64,
    fill: &'static str,
    title: String,
}

fn escape_xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn state_fill(s: AsyncState) -> &'static str {
    match s {
        AsyncState::Waiting => "#f0b429",
        AsyncState::CallbackPending => "#2f80ed",
        AsyncState::Complete => "#27ae60",
        _ => "#bbb",
    }
}

/// The lanes: per connection, each statement from sent to answered; per request, each
/// state from entered to left.
fn lanes(header: &TraceHeader, events: &[TraceEvent], end: u64) -> Vec<(String, Vec<Bar>)> {
    let mut conns: Vec<(String, Vec<Bar>)> = header.connections.iter().map(|c| (format!("conn {c}"), vec![])).collect();
    let mut in_flight: Vec<Vec<(u64, String)>> = vec![vec![]; header.connections.len()];
    let mut requests: Vec<(String, Vec<Bar>, Option<(u64, AsyncState)>)> = vec![];
    for e in events {
        match &e.kind {
            TraceKind::Send { conn, sql, queued: false, .. } if *conn < in_flight.len() => {
                in_flight[*conn].push((e.time_ns, sql.clone()))
            }
            TraceKind::Response { conn, sql, rows, .. } if *conn < in_flight.len() && !in_flight[*conn].is_empty() => {
                let (from, sent) = in_flight[*conn].remove(0);
                let fill = if sql.starts_with("FETCH") { "#56ccf2" } else { "#9b51e0" };
                conns[*conn].1.push(Bar { from, to: e.time_ns, fill, title: format!("{sent} ({rows} rows)") });
            }
            TraceKind::Request { request, requestee, to, .. } => {
                if requests.len() <= *request {
                    requests.resize_with(*request + 1, || (String::new(), vec![], None));
                }
                let r = &mut requests[*request];
                r.0 = format!("request {request}: {}", header.nodes.get(*requestee).cloned().unwrap_or_default());
                if let Some((from, s)) = r.2.take() {
                    r.1.push(Bar { from, to: e.time_ns, fill: state_fill(s), title: state(s).into() });
                }
                if matches!(to, AsyncState::Waiting | AsyncState::CallbackPending) {
                    r.2 = Some((e.time_ns, *to));
                }
            }
            _ => {}
        }
    }
    for (r, bars, open) in requests.iter_mut() {
        if let Some((from, s)) = open.take() {
            bars.push(Bar { from, to: end, fill: state_fill(s), title: state(s).into() });
        }
        let _ = r;
    }
    conns.extend(requests.into_iter().filter(|r| !r.0.is_empty()).map(|(n, b, _)| (n, b)));
    conns
}

/// The run's timeline as a standalone SVG: lanes labelled on the left, a millisecond
/// axis, one rectangle per busy span with its statement or state as tooltip.
pub fn timeline_svg(header: &TraceHeader, events: &[TraceEvent]) -> String {
    let end = events.last().map(|e| e.time_ns).unwrap_or(0).max((header.total_ms * 1e6) as u64).max(1);
    let lanes = lanes(header, events, end);
    let (label_w, plot_w, lane_h, top) = (260.0, 900.0, 22.0, 30.0);
    let height = top + lane_h * lanes.len() as f64 + 30.0;
    let x = |t: u64| label_w + plot_w * t as f64 / end as f64;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n",
        label_w + plot_w + 60.0
    );
    s.push_str(&format!(
        "<text x=\"4\" y=\"18\" font-weight=\"bold\">{} — {} — {} — {:.3} ms</text>\n",
        escape_xml(&header.scenario),
        escape_xml(&header.mode),
        escape_xml(&header.behaviour),
        end as f64 / 1e6
    ));
    for (i, (name, bars)) in lanes.iter().enumerate() {
        let y = top + lane_h * i as f64;
        s.push_str(&format!("<text x=\"4\" y=\"{}\">{}</text>\n", y + 15.0, escape_xml(name)));
        s.push_str(&format!(
            "<line x1=\"{label_w}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#eee\"/>\n",
            label_w + plot_w,
            y + lane_h,
            y + lane_h
        ));
        for b in bars {
            let w = (x(b.to) - x(b.from)).max(0.5);
            s.push_str(&format!(
                "<rect x=\"{:.2}\" y=\"{}\" width=\"{w:.2}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>\n",
                x(b.from),
                y + 3.0,
                lane_h - 6.0,
                b.fill,
                escape_xml(&b.title)
            ));
        }
    }
    let axis_y = top + lane_h * lanes.len() as f64 + 16.0;
    for k in 0..=4 {
        let t = end * k / 4;
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{axis_y}\" text-anchor=\"middle\">{:.2} ms</text>\n",
            x(t),
            t as f64 / 1e6
        ));
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_what_needs_quoting() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("FETCH 100 FROM c1"), "FETCH 100 FROM c1");
    }
}
