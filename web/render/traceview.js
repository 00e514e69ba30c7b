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
  // One event each (`traceViewsWalk` calls these from its single pass).
  const send = (e, i) => {
    if (!e.queued) lane(e.conn).pending.push({ start: e.time_ns, sql: e.sql, proto: e.proto, i });
  };
  const response = (e, i) => {
    const l = lane(e.conn);
    const s = l.pending.shift();
    const start = s ? s.start : e.time_ns;
    const iv = { start, end: e.time_ns, sql: e.sql, rows: e.rows, error: e.error, i: s ? s.i : i, j: i };
    if (e.proto === 'startup') {
      l.startups.push(iv);
      return;
    }
    l.busy.push(iv);
    l.arrivals.push({ t: e.time_ns, rows: e.rows, error: e.error, i });
  };
  const add = (trace, from, to) => {
    for (let i = from; i < to; i++) {
      const e = trace[i];
      if (e.kind === 'Send') send(e, i);
      else if (e.kind === 'Response') response(e, i);
    }
  };
  const finish = (endNs) => {
    for (const l of lanes) {
      for (const s of l.pending) (s.proto === 'startup' ? l.startups : l.busy).push({ start: s.start, end: endNs, sql: s.sql, rows: null, open: true, i: s.i, j: Infinity });
      delete l.pending;
    }
    return lanes;
  };
  return { add, finish, send, response };
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
  const request = (e, i) => {
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
  };
  const add = (trace, from, to) => {
    for (let i = from; i < to; i++) {
      const e = trace[i];
      if (e.kind === 'Request') request(e, i);
    }
  };
  const finish = (endNs) => {
    for (const r of reqs.values()) {
      if (r.open) r.waiting.push({ start: r.open.start, end: endNs, i: r.open.i, j: Infinity });
      delete r.open;
    }
    return [...reqs.values()].sort((a, b) => a.id - b.id);
  };
  return { add, finish, request };
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
  for (let i = 0; i < trace.length; i++) wireLine(trace[i], i, out);
  return out;
}

/** Appends event `e`'s wire line (if it has one) to `out`. */
function wireLine(e, i, out) {
  const node = e.node ?? null;
  switch (e.kind) {
    case 'Send':
      if (e.proto === 'startup') out.push({ i, t: e.time_ns, conn: e.conn, dir: 'fe', text: 'StartupMessage (user, database, application_name=postgres_fdw)', bytes: e.bytes, node });
      else if (e.queued) out.push({ i, t: e.time_ns, conn: e.conn, dir: 'queued', text: `(queued behind the query in flight) ${e.sql}`, node });
      else if (e.proto === 'extended') out.push({ i, t: e.time_ns, conn: e.conn, dir: 'fe', text: `Parse, Bind, Describe, Execute, Sync: ${e.sql}`, bytes: e.bytes, node });
      else out.push({ i, t: e.time_ns, conn: e.conn, dir: 'fe', text: `Query: ${e.sql}`, bytes: e.bytes, node });
      break;
    case 'Response':
      out.push({ i, t: e.time_ns, conn: e.conn, dir: e.error ? 'err' : 'be', text: backendMessages(e), bytes: e.bytes, node });
      break;
    case 'Cancel':
      out.push({ i, t: e.time_ns, conn: e.conn, dir: 'fe', text: 'CancelRequest', node });
      break;
    case 'Error':
      out.push({ i, t: e.time_ns, conn: null, dir: 'err', text: `query failed: ${e.message}`, node });
      break;
    default:
  }
}

/**
 * The views of a recording the page draws from its trace (the timeline's connection
 * lanes, request lanes and row ticks, the wire inspector's lines) in one pass over it,
 * a part at a time (`add(trace, from, to)`, in order): at the load, four walks over a
 * trace of tens of thousands of events, each in code not yet optimised, were tens of
 * ms of the time to ready; one walk that hands each event to the views it concerns is
 * a fraction of that. `finish(endNs)` gives {conns, reqs, rows, wire}.
 */
export function traceViewsWalk(nConns) {
  const conns = connectionWalk(nConns);
  const reqs = requestWalk();
  const rows = [];
  const wire = [];
  const add = (trace, from, to) => {
    for (let i = from; i < to; i++) {
      const e = trace[i];
      switch (e.kind) {
        case 'Request':
          reqs.request(e, i);
          break;
        case 'Send':
          conns.send(e, i);
          wireLine(e, i, wire);
          break;
        case 'Response':
          conns.response(e, i);
          wireLine(e, i, wire);
          break;
        case 'Row':
          rows.push({ t: e.time_ns, n: e.n, i });
          break;
        case 'Cancel':
        case 'Error':
          wireLine(e, i, wire);
          break;
        default:
      }
    }
  };
  // The packed trace (web/state.js PackedTrace): each event the views want is read
  // into one reused object of its kind (the handlers above copy what they keep), so
  // the walk makes no object per event.
  const ev = {
    request: { time_ns: 0, kind: 'Request', request: 0, requestor: 0, requestee: 0, from: '', to: '' },
    send: { time_ns: 0, kind: 'Send', conn: 0, proto: '', sql: '', bytes: 0, queued: false, node: null },
    response: { time_ns: 0, kind: 'Response', conn: 0, proto: '', sql: '', rows: 0, bytes: 0, error: null, node: null },
    error: { time_ns: 0, kind: 'Error', message: '' },
    cancel: { time_ns: 0, kind: 'Cancel', conn: 0 },
  };
  const opt = (x) => (x < 0 ? null : x);
  const addPacked = (packed, from, to) => {
    const { states, protos } = packed.codes;
    // The codes are KINDS' indices in crate/demo/trace_pack.rs (web/state.js unpackTrace).
    packed.each(from, to, (code, nums, at, strs, i) => {
      switch (code) {
        case 0: {
          const e = ev.request;
          e.time_ns = nums[at + 1];
          e.request = nums[at + 2];
          e.requestor = nums[at + 3];
          e.requestee = nums[at + 4];
          e.from = states[nums[at + 5]];
          e.to = states[nums[at + 6]];
          reqs.request(e, i);
          break;
        }
        case 1: {
          const e = ev.send;
          e.time_ns = nums[at + 1];
          e.conn = nums[at + 2];
          e.proto = protos[nums[at + 3]];
          e.sql = strs[nums[at + 4]];
          e.bytes = nums[at + 5];
          e.queued = nums[at + 6] === 1;
          e.node = opt(nums[at + 7]);
          conns.send(e, i);
          wireLine(e, i, wire);
          break;
        }
        case 2: {
          const e = ev.response;
          e.time_ns = nums[at + 1];
          e.conn = nums[at + 2];
          e.proto = protos[nums[at + 3]];
          e.sql = strs[nums[at + 4]];
          e.rows = nums[at + 5];
          e.bytes = nums[at + 6];
          e.error = nums[at + 7] < 0 ? null : strs[nums[at + 7]];
          e.node = opt(nums[at + 8]);
          conns.response(e, i);
          wireLine(e, i, wire);
          break;
        }
        case 6: // Row
          rows.push({ t: nums[at + 1], n: nums[at + 2], i });
          break;
        case 7: {
          const e = ev.error;
          e.time_ns = nums[at + 1];
          e.message = strs[nums[at + 2]];
          wireLine(e, i, wire);
          break;
        }
        case 8: {
          const e = ev.cancel;
          e.time_ns = nums[at + 1];
          e.conn = nums[at + 2];
          wireLine(e, i, wire);
          break;
        }
        default:
      }
    }, VIEW_KINDS);
  };
  const finish = (endNs) => ({ conns: conns.finish(endNs), reqs: reqs.finish(endNs), rows, wire });
  return { add, addPacked, finish };
}

/**
 * The packed codes (crate/demo/trace_pack.rs KINDS) the views read, as `PackedTrace.each`'s
 * bits: Request 0, Send 1, Response 2, Row 6, Error 7, Cancel 8.
 */
const VIEW_KINDS = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 6) | (1 << 7) | (1 << 8);

/** Trace events a task of `prepareTraceViews` walks at most (a few ms of work each). */
const PREPARE_EVENTS = 40000;
/** Each recording's views (`traceViews`), computed once. */
const views = new WeakMap();

/** The end of a recording's lanes: its end, or where its kept trace ends. */
function viewsEnd(rec) {
  return rec.complete ? Math.max(1, rec.totalNs ?? rec.recordedNs ?? 0) : rec.recordedNs;
}

/**
 * Computes recording `rec`'s views (`traceViewsWalk`) in tasks of their own: `pause()`
 * yields before each part of at most PREPARE_EVENTS events (250,000 events at 64
 * shards).
 */
export async function prepareTraceViews(rec, pause = async () => {}) {
  if (views.has(rec)) return;
  const walk = traceViewsWalk(rec.connections.length);
  const n = rec.packed ? rec.packed.length : rec.trace.length;
  for (let from = 0; from < n; from += PREPARE_EVENTS) {
    await pause();
    if (rec.packed) walk.addPacked(rec.packed, from, Math.min(n, from + PREPARE_EVENTS));
    else walk.add(rec.trace, from, Math.min(n, from + PREPARE_EVENTS));
  }
  if (!views.has(rec)) views.set(rec, walk.finish(viewsEnd(rec)));
}

/** Recording `rec`'s views: {conns, reqs, rows, wire} (computed now if not prepared). */
export function traceViews(rec) {
  let v = views.get(rec);
  if (!v) {
    const walk = traceViewsWalk(rec.connections.length);
    if (rec.packed) walk.addPacked(rec.packed, 0, rec.packed.length);
    else walk.add(rec.trace, 0, rec.trace.length);
    v = walk.finish(viewsEnd(rec));
    views.set(rec, v);
  }
  return v;
}

/**
 * `transitionsIn` of a recording (web/state.js Recording): read from its packed trace
 * where it has one, so a step's render makes no trace objects.
 */
export function recordedTransitions(rec, from, to) {
  if (!rec.packed) return transitionsIn(rec.trace, from, to);
  const per = new Map();
  const { states } = rec.packed.codes;
  rec.packed.each(
    Math.max(0, from),
    to,
    (code, nums, at) => {
      const request = nums[at + 2];
      const state = states[nums[at + 6]];
      let m = per.get(request);
      if (!m) per.set(request, (m = new Map()));
      m.set(state, (m.get(state) ?? 0) + 1);
    },
    1 << 0, // Request
  );
  return per;
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
