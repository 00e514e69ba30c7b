// Views derived from a trace (arrays of {time_ns, kind, ...}): what the timeline, the
// compare view and the wire inspector draw. Pure functions, computed once per recording.

/**
 * Per connection: the intervals when a query was in flight (from its Send with
 * queued:false to the matching Response; responses come in send order on a connection),
 * and the arrivals (Responses) as ticks. The start-up packet (proto "startup": sent when
 * the connection opens, answered by AuthenticationOk … ReadyForQuery) is matched the
 * same way but kept apart, in `startups`, so it is drawn as "connecting" and not as a query.
 */
export function connectionIntervals(trace, nConns, endNs) {
  const walk = connectionWalk(nConns);
  walk.add(trace, 0, trace.length);
  return walk.finish(endNs);
}

/**
 * The walks below, over a part of the trace at a time (`add(trace, from, to)`, in
 * order), so that a long trace can be walked in several tasks; `finish()` gives what
 * the one-call form gives.
 */
export function connectionWalk(nConns) {
  const lanes = Array.from({ length: nConns }, () => ({ busy: [], arrivals: [], startups: [], pending: [] }));
  const lane = (k) => {
    while (lanes.length <= k) lanes.push({ busy: [], arrivals: [], startups: [], pending: [] });
    return lanes[k];
  };
  const add = (trace, from, to) => {
    for (let i = from; i < to; i++) {
      const e = trace[i];
      if (e.kind === 'Send' && !e.queued) {
        lane(e.conn).pending.push({ start: e.time_ns, sql: e.sql, proto: e.proto, i });
      } else if (e.kind === 'Response') {
        const l = lane(e.conn);
        const s = l.pending.shift();
        const start = s ? s.start : e.time_ns;
        const iv = { start, end: e.time_ns, sql: e.sql, rows: e.rows, error: e.error, i: s ? s.i : i, j: i };
        if (e.proto === 'startup') {
          l.startups.push(iv);
          continue;
        }
        l.busy.push(iv);
        l.arrivals.push({ t: e.time_ns, rows: e.rows, error: e.error, i });
      }
    }
  };
  const finish = (endNs) => {
    for (const l of lanes) {
      for (const s of l.pending) (s.proto === 'startup' ? l.startups : l.busy).push({ start: s.start, end: endNs, sql: s.sql, rows: null, open: true, i: s.i, j: Infinity });
      delete l.pending;
    }
    return lanes;
  };
  return { add, finish };
}

/**
 * Per async request: the intervals it spent Waiting (from the transition to Waiting to
 * its next transition), and the times it became Callback pending.
 */
export function requestIntervals(trace, endNs) {
  const walk = requestWalk();
  walk.add(trace, 0, trace.length);
  return walk.finish(endNs);
}

/** `requestIntervals` a part of the trace at a time (as `connectionWalk`). */
export function requestWalk() {
  const reqs = new Map();
  const add = (trace, from, to) => {
    for (let i = from; i < to; i++) {
      const e = trace[i];
      if (e.kind !== 'Request') continue;
      let r = reqs.get(e.request);
      if (!r) {
        r = { id: e.request, requestor: e.requestor, requestee: e.requestee, waiting: [], pending: [], open: null };
        reqs.set(e.request, r);
      }
      if (r.open) {
        r.waiting.push({ start: r.open.start, end: e.time_ns, i: r.open.i, j: i });
        r.open = null;
      }
      if (e.to === 'Waiting') r.open = { start: e.time_ns, i };
      if (e.to === 'CallbackPending') r.pending.push({ t: e.time_ns, i });
    }
  };
  const finish = (endNs) => {
    for (const r of reqs.values()) {
      if (r.open) r.waiting.push({ start: r.open.start, end: endNs, i: r.open.i, j: Infinity });
      delete r.open;
    }
    return [...reqs.values()].sort((a, b) => a.id - b.id);
  };
  return { add, finish };
}

/** Rows reaching the top of the plan. */
export function rowTicks(trace) {
  const walk = rowWalk();
  walk.add(trace, 0, trace.length);
  return walk.finish();
}

/** `rowTicks` a part of the trace at a time (as `connectionWalk`). */
export function rowWalk() {
  const out = [];
  const add = (trace, from, to) => {
    for (let i = from; i < to; i++) {
      const e = trace[i];
      if (e.kind === 'Row') out.push({ t: e.time_ns, n: e.n, i });
    }
  };
  return { add, finish: () => out };
}

function backendMessages(e) {
  if (e.proto === 'startup') return 'AuthenticationOk, ParameterStatus …, BackendKeyData, ReadyForQuery';
  if (e.error) return `ErrorResponse: ${e.error}, ReadyForQuery`;
  const returnsRows = /\b(FETCH|SELECT)\b/i.test(e.sql);
  const parts = [];
  if (e.proto === 'extended') parts.push('ParseComplete', 'BindComplete', returnsRows ? 'RowDescription' : 'NoData');
  else if (returnsRows) parts.push('RowDescription');
  if (e.rows > 0) parts.push(`DataRow ×${e.rows}`);
  parts.push('CommandComplete', 'ReadyForQuery');
  return parts.join(', ');
}

/**
 * The wire inspector's lines, one per protocol exchange: frontend Query messages and
 * the backend's answer, with times; `i` is the trace index (shown once the run is past it),
 * `node` the plan node the statement or answer is charged to (null: the connection's own).
 */
export function wireLines(trace) {
  const out = [];
  trace.forEach((e, i) => {
    const n = out.length;
    switch (e.kind) {
      case 'Send':
        if (e.proto === 'startup') out.push({ i, t: e.time_ns, conn: e.conn, dir: 'fe', text: 'StartupMessage (user, database, application_name=postgres_fdw)', bytes: e.bytes });
        else if (e.queued) out.push({ i, t: e.time_ns, conn: e.conn, dir: 'queued', text: `(queued behind the query in flight) ${e.sql}` });
        else if (e.proto === 'extended') out.push({ i, t: e.time_ns, conn: e.conn, dir: 'fe', text: `Parse, Bind, Describe, Execute, Sync: ${e.sql}`, bytes: e.bytes });
        else out.push({ i, t: e.time_ns, conn: e.conn, dir: 'fe', text: `Query: ${e.sql}`, bytes: e.bytes });
        break;
      case 'Response':
        out.push({ i, t: e.time_ns, conn: e.conn, dir: e.error ? 'err' : 'be', text: backendMessages(e), bytes: e.bytes });
        break;
      case 'Cancel':
        out.push({ i, t: e.time_ns, conn: e.conn, dir: 'fe', text: 'CancelRequest' });
        break;
      case 'Error':
        out.push({ i, t: e.time_ns, conn: null, dir: 'err', text: `query failed: ${e.message}` });
        break;
      default:
    }
    if (out.length > n) out[n].node = e.node ?? null;
  });
  return out;
}

/**
 * What each request went through during one step (trace[from..to]): the states it
 * entered, in lifecycle order, with counts.
 */
export function transitionsIn(trace, from, to) {
  const per = new Map();
  for (let i = Math.max(0, from); i < Math.min(to, trace.length); i++) {
    const e = trace[i];
    if (e.kind !== 'Request') continue;
    let m = per.get(e.request);
    if (!m) per.set(e.request, (m = new Map()));
    m.set(e.to, (m.get(e.to) ?? 0) + 1);
  }
  return per;
}
