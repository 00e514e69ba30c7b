// History and URL state, kept apart from the model (wasm) and from rendering
// (the raftscope split: model, history, render).
//
// * `Config` is what the user chose: scenario, mode, knobs and behaviour. It round-trips
//   through the URL query string together with the current step, so a reloaded or
//   shared URL reproduces the exact view. A scenario file typed in the SQL editor takes
//   the place of the built-in scenario: its text travels in `sql=`, deflated
//   (CompressionStream 'deflate-raw') and in base64url (`encodeSql` / `decodeSql`). Values stay the strings the user typed: the
//   model checks them (crate/knobs.rs, the same checks as the CLI's), and the page
//   checks a URL with `wasm.checkUrl` before running anything.
// * `Recording` is the history of one run: the trace length and virtual time at the end
//   of every step, and the whole trace. A run on the virtual clock is deterministic, so
//   the recording made once is valid for every replay; the timeline draws it (the future
//   faded) and the page uses it to know what happened during the current step.

import { fmtInt } from './render/util.js';

/** Knob inputs of the page: URL name, knob name in the wasm JSON, kind. */
export const KNOB_FIELDS = [
  { url: 'shards', knob: 'shards', kind: 'int', label: 'shards' },
  { url: 'rows', knob: 'rows_per_shard', kind: 'int', label: 'rows per shard' },
  { url: 'fetch', knob: 'fetch_size', kind: 'int', label: 'fetch size' },
  { url: 'rtt', knob: 'rtt_ms', kind: 'float', label: 'round-trip time (ms)' },
  { url: 'rtts', knob: 'rtt_ms_per_shard', kind: 'floatlist', label: 'per-shard round-trip times' },
  { url: 'bw', knob: 'bandwidth_mbps', kind: 'float', label: 'bandwidth (Mbit/s)' },
  { url: 'offset', knob: 'offset', kind: 'int', label: 'offset' },
  { url: 'limit', knob: 'limit', kind: 'int', label: 'limit' },
  // Set by a calibration profile (`pgasync calibrate --live`), shown in its chip.
  { url: 'row_us', knob: 'server_row_us', kind: 'float', label: 'server µs per row' },
  { url: 'query_us', knob: 'server_query_us', kind: 'float', label: 'server µs per statement' },
  { url: 'connect_ms', knob: 'connect_ms', kind: 'float', label: 'server ms per connection' },
  { url: 'coord_row_us', knob: 'coordinator_row_us', kind: 'float', label: 'coordinator µs per row' },
  { url: 'coord_answer_us', knob: 'coordinator_answer_us', kind: 'float', label: 'coordinator µs per answer' },
  { url: 'coord_async_us', knob: 'coordinator_async_us', kind: 'float', label: 'coordinator µs per async request' },
];

/** Which page field each key of a calibration profile sets. */
export const PROFILE_FIELDS = {
  rtt_ms: 'rtt',
  bandwidth_mbps: 'bw',
  server_row_us: 'row_us',
  server_query_us: 'query_us',
  connect_ms: 'connect_ms',
  coordinator_row_us: 'coord_row_us',
  coordinator_answer_us: 'coord_answer_us',
  coordinator_async_us: 'coord_async_us',
};

/**
 * The fields a calibration profile (JSON text) sets, as {url name: string value}.
 * Throws an Error naming what is wrong: not JSON, not an object, an unknown key.
 * The values are checked by the model like any typed value.
 */
export function profileFields(text) {
  let json;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`not a profile: ${e.message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error('not a profile: expected a JSON object');
  const out = {};
  for (const [k, v] of Object.entries(json)) {
    const field = PROFILE_FIELDS[k];
    if (!field) throw new Error(`profile: unknown key "${k}" (expected ${Object.keys(PROFILE_FIELDS).join(', ')})`);
    out[field] = String(v);
  }
  return out;
}

export const SHARING = ['dedicated', 'shared'];

/** Behaviour knob names (set once from `wasm.behaviourKnobs()`). */
let switchNames = [];
export function setSwitchNames(names) {
  switchNames = [...names];
}

/**
 * Knob fields a scenario file does not use (its own tables and servers say how many
 * shards and rows; offset and limit are written in its query): left out of its knobs
 * and of its URL, and greyed in the page.
 */
export const SQL_IGNORED_FIELDS = ['shards', 'rows', 'offset', 'limit'];

/** The scenario select's value while a scenario file (the SQL editor's) is on screen. */
export const SQL_SCENARIO = 'sql';

/** What the page starts with when the URL says nothing: small data, so stepping is interactive. */
export const DEFAULT_CONFIG = Object.freeze({
  scenario: 'E',
  mode: 'async',
  // Raw strings as typed into the inputs ('' = the default, which only the model
  // knows: the inputs show it as their placeholder, from `wasm.knobFields()`).
  fields: { shards: '', rows: '', fetch: '', rtt: '', rtts: '', bw: '', offset: '', limit: '', row_us: '', query_us: '', connect_ms: '', coord_row_us: '', coord_answer_us: '', coord_async_us: '' },
  sharing: '',
  // '' = pg15 (PostgreSQL 15, the default) or 'improved'; then the knobs set explicitly.
  behaviour: '',
  switches: {},
  step: 0,
  // A scenario file (the SQL editor's text) in place of the built-in scenario, and the
  // same text deflated in base64url, as the URL carries it ('' when none).
  sql: '',
  sqlParam: '',
});

export function cloneConfig(c) {
  return {
    scenario: c.scenario,
    mode: c.mode,
    fields: { ...c.fields },
    sharing: c.sharing,
    behaviour: c.behaviour ?? '',
    switches: { ...(c.switches ?? {}) },
    step: c.step,
    sql: c.sql ?? '',
    sqlParam: c.sqlParam ?? '',
  };
}

/** Whether a config runs a scenario file (the SQL editor's) rather than a built-in scenario. */
export function isSql(c) {
  return !!(c.sql || c.sqlParam);
}

/** Reads a config from a query string (missing values take the defaults). */
export function configFromUrl(search) {
  const q = new URLSearchParams(search);
  const c = cloneConfig(DEFAULT_CONFIG);
  if (q.has('scenario')) c.scenario = q.get('scenario');
  // The text itself is inflated by the caller (`decodeSql` is asynchronous).
  if (q.has('sql')) {
    c.sqlParam = q.get('sql');
    c.scenario = SQL_SCENARIO;
  }
  if (q.has('mode')) c.mode = q.get('mode');
  for (const f of KNOB_FIELDS) if (q.has(f.url)) c.fields[f.url] = q.get(f.url);
  if (q.has('sharing')) c.sharing = q.get('sharing');
  if (q.has('behaviour')) c.behaviour = q.get('behaviour');
  for (const name of switchNames) if (q.has(name)) c.switches[name] = q.get(name);
  const step = Number(q.get('step'));
  c.step = Number.isInteger(step) && step >= 0 ? step : 0;
  return c;
}

/** The query string for a config (every knob written, so the URL is self-contained). */
export function configToQuery(c) {
  const q = new URLSearchParams();
  const sql = isSql(c);
  if (sql) q.set('sql', c.sqlParam);
  else q.set('scenario', c.scenario);
  q.set('mode', c.mode);
  for (const f of KNOB_FIELDS) {
    if (sql && SQL_IGNORED_FIELDS.includes(f.url)) continue;
    if (c.fields[f.url] !== '' && c.fields[f.url] != null) q.set(f.url, c.fields[f.url]);
  }
  if (c.sharing && !sql) q.set('sharing', c.sharing);
  if (c.behaviour) q.set('behaviour', c.behaviour);
  for (const [name, v] of Object.entries(c.switches ?? {})) if (v !== '' && v != null) q.set(name, v);
  q.set('step', String(c.step));
  return '?' + q.toString().replace(/%2C/g, ',');
}

/**
 * The knobs JSON for wasm: the raw strings of a config under the model's knob names
 * (empty = the scenario's default). Nothing is checked here: the model refuses bad
 * values (`0x10`, `NaN`, out of range) with a message naming the knob.
 */
export function knobsJson(c) {
  const k = {};
  const sql = isSql(c);
  for (const f of KNOB_FIELDS) {
    if (sql && SQL_IGNORED_FIELDS.includes(f.url)) continue;
    const raw = (c.fields[f.url] ?? '').trim();
    if (raw !== '') k[f.knob] = raw;
  }
  if (c.sharing && !sql) k.sharing = c.sharing;
  if (c.behaviour) k.behaviour = c.behaviour;
  for (const [name, v] of Object.entries(c.switches ?? {})) if (v !== '' && v != null) k[name] = String(v);
  return JSON.stringify(k);
}

/** Writes the config into the address bar without adding a history entry. */
export class UrlSync {
  constructor(minIntervalMs = 250) {
    this.minIntervalMs = minIntervalMs;
    this.last = 0;
    this.pending = null;
    this.timer = 0;
    this.timerDue = 0;
  }
  /**
   * `now` = right after this task (a user action); otherwise at most every minIntervalMs
   * (Chrome throttles frequent replaceState calls). Never inside the caller's task:
   * replaceState costs a few ms that a step click need not wait for.
   */
  write(config, now = false) {
    this.pending = configToQuery(config);
    const due = now ? 0 : Math.max(0, this.last + this.minIntervalMs - performance.now());
    if (this.timer && (due > 0 || this.timerDue === 0)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => this.flush(), due);
  }
  flush() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = 0;
    if (this.pending == null) return;
    const url = location.pathname + this.pending + location.hash;
    if (url !== location.pathname + location.search + location.hash) history.replaceState(null, '', url);
    this.pending = null;
    this.last = performance.now();
  }
}

/**
 * Trace events the page keeps at most: every event becomes a JS object (its memory and
 * the walks over it grow with it), so a run of 100,000 rows per shard (800,000 events)
 * would take seconds. Past the budget the recording keeps the step marks (trace length
 * and time of every step, two numbers per step) and the trace up to the budget only.
 */
const TRACE_BUDGET = 250000;
const NO_TRACE = 0xffffffff; // `snapshot(since)` with since past the end: no trace events.

/** Model work per slice before the page gets the main thread back (ms). */
export const SLICE_MS = 25;
/** Steps per call into the model at most (the page reads its clock between calls). */
export const STEP_SLICE = 256;
/**
 * Time a call into the model may take before it stops after its current step (ms): a
 * step costs microseconds in a built-in scenario, but tens of milliseconds when a
 * scenario file's shard runs a large query at once, so a step count alone would let a
 * call (and the slice) run far over.
 */
export const CALL_MS = 4;
const TRACE_SLICE = 16384; // trace events copied per call (a few ms: numbers, then JS objects)

/** The names behind the packed trace's codes (`wasm.traceCodes()`, set once by the page). */
let traceCodes = null;
export function setTraceCodes(codes) {
  traceCodes = codes;
}

/**
 * Appends to `out` the events of a packed slice of the trace (`session.tracePart`,
 * crate/demo/trace_pack.rs: per event its kind's code, its time, then its fields in
 * order; strings by index in `strs`; None as -1): the same objects, with the same
 * fields in the same order, as the trace's JSON form (`session.trace`). Numbers read
 * from one Float64Array, where JSON text took as long as the run itself to write and
 * to parse.
 */
export function unpackTrace(nums, strs, out) {
  const { kinds, states, protos } = traceCodes;
  // Small integers as JSON.parse gives them (V8's small ints, not boxed doubles): ids
  // used as Map keys and array indices by the views, and compared, are faster so.
  const int = (x) => (x <= 0x3fffffff ? x | 0 : x);
  const opt = (x) => (x < 0 ? null : int(x));
  const n = nums.length;
  let i = 0;
  while (i < n) {
    // The codes are KINDS' indices in crate/demo/trace_pack.rs: a switch on numbers.
    const code = nums[i];
    const kind = kinds[code];
    const time_ns = int(nums[i + 1]);
    i += 2;
    switch (code) {
      case 0: // Request
        out.push({ time_ns, kind, request: int(nums[i]), requestor: int(nums[i + 1]), requestee: int(nums[i + 2]), from: states[nums[i + 3]], to: states[nums[i + 4]] });
        i += 5;
        break;
      case 12: // NodeCall
      case 13: // NodeRow
      case 5: // NodeStart
        out.push({ time_ns, kind, node: int(nums[i]) });
        i += 1;
        break;
      case 1: // Send
        out.push({ time_ns, kind, conn: int(nums[i]), proto: protos[nums[i + 1]], sql: strs[nums[i + 2]], bytes: int(nums[i + 3]), queued: nums[i + 4] === 1, node: opt(nums[i + 5]) });
        i += 6;
        break;
      case 2: // Response
        out.push({ time_ns, kind, conn: int(nums[i]), proto: protos[nums[i + 1]], sql: strs[nums[i + 2]], rows: int(nums[i + 3]), bytes: int(nums[i + 4]), error: nums[i + 5] < 0 ? null : strs[nums[i + 5]], node: opt(nums[i + 6]) });
        i += 7;
        break;
      case 3: {
        // Wait: its connections' count, then each
        const c = nums[i];
        out.push({ time_ns, kind, conns: Array.from(nums.subarray(i + 1, i + 1 + c), int) });
        i += 1 + c;
        break;
      }
      case 4: // Arrive
        out.push({ time_ns, kind, conn: int(nums[i]), bytes: int(nums[i + 1]) });
        i += 2;
        break;
      case 6: // Row
        out.push({ time_ns, kind, n: int(nums[i]) });
        i += 1;
        break;
      case 7: // Error
        out.push({ time_ns, kind, message: strs[nums[i]] });
        i += 1;
        break;
      case 8: // Cancel
        out.push({ time_ns, kind, conn: int(nums[i]) });
        i += 1;
        break;
      case 9: // ConfigureWait
        out.push({ time_ns, kind, request: int(nums[i]), added: nums[i + 1] === 1 });
        i += 2;
        break;
      case 10: // Notify
        out.push({ time_ns, kind, request: int(nums[i]) });
        i += 1;
        break;
      case 11: // Drain
        out.push({ time_ns, kind, conn: int(nums[i]), request: int(nums[i + 1]), node: int(nums[i + 2]) });
        i += 3;
        break;
      case 14: // Reentry
        out.push({ time_ns, kind, node: int(nums[i]), child: int(nums[i + 1]), waiting: int(nums[i + 2]), request: int(nums[i + 3]), message: strs[nums[i + 4]] });
        i += 5;
        break;
      default:
        throw new Error(`the model's packed trace has an unknown kind (code ${code})`);
    }
  }
  return out;
}

/** Numbers after an event's code and time in the packed trace, by code (Wait, 3: its count, then as many). */
const PACKED_FIELDS = [5, 6, 7, -1, 2, 1, 1, 1, 1, 2, 1, 3, 1, 1, 5];
const WAIT_CODE = 3;

/**
 * A recording's trace as the model packed it (`session.tracePart`, see `unpackTrace`),
 * kept so: at the load, making every event an object (66,000 at 16 shards, 250,000 at
 * 64) and collecting them was a third of the recording's main-thread time, and the
 * page's own walks read the numbers as well (render/traceview.js). Parts as copied,
 * each with the offset of every event's code in its numbers. `objects()` makes the
 * objects (`Recording.trace`, for what wants them) once asked.
 */
export class PackedTrace {
  constructor(codes) {
    this.codes = codes; // {kinds, states, protos}: the names behind the codes
    this.parts = []; // {from, nums, strs, offs}: events from `from` on
    this.length = 0;
  }

  /** Appends a packed slice of the trace (the next events). */
  append(nums, strs) {
    const offs = new Uint32Array(Math.floor(nums.length / 3) + 1); // an event is 3 numbers at least
    let n = 0;
    for (let i = 0; i < nums.length; n++) {
      offs[n] = i;
      const code = nums[i];
      const k = code === WAIT_CODE ? 1 + nums[i + 2] : PACKED_FIELDS[code];
      if (k === undefined) throw new Error(`the model's packed trace has an unknown kind (code ${code})`);
      i += 2 + k;
    }
    this.parts.push({ from: this.length, nums, strs, offs: offs.subarray(0, n) });
    this.length += n;
  }

  /** The part holding event `i` (0 ≤ i < length). */
  part(i) {
    let lo = 0;
    let hi = this.parts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.parts[mid].from <= i) lo = mid;
      else hi = mid - 1;
    }
    return this.parts[lo];
  }

  /** Event `i`'s time (ns). */
  timeAt(i) {
    const p = this.part(i);
    return p.nums[p.offs[i - p.from] + 1];
  }

  /**
   * Calls `visit(code, nums, at, strs, i)` for events `from..to` in order: `at` is the
   * offset of event `i`'s code in `nums` (its time at `at + 1`, its fields after).
   * `kinds`: the codes wanted, as bits (`1 << code`); the others are passed over
   * without a call (at 16 shards half the trace is NodeCall and NodeRow, which no view
   * of the page reads).
   */
  each(from, to, visit, kinds = -1) {
    to = Math.min(to, this.length);
    if (from >= to) return;
    for (let k = this.parts.indexOf(this.part(from)); k < this.parts.length; k++) {
      const { from: start, nums, strs, offs } = this.parts[k];
      if (start >= to) break;
      const end = Math.min(offs.length, to - start);
      for (let j = Math.max(0, from - start); j < end; j++) {
        const at = offs[j];
        const code = nums[at];
        if (kinds & (1 << code)) visit(code, nums, at, strs, start + j);
      }
    }
  }

  /** Every event as an object, as `unpackTrace` makes them (the trace's JSON form). */
  objects() {
    const out = [];
    for (const p of this.parts) unpackTrace(p.nums, p.strs, out);
    return out;
  }
}

/**
 * Trace events `from..to` of `session` (its `tracePart`), appended to `out`: the
 * packed path where the module has it (the page's own), else the JSON one.
 */
export function copyTrace(session, from, to, out) {
  if (traceCodes && typeof session.tracePart === 'function') {
    const part = session.tracePart(from, to);
    try {
      return unpackTrace(part.nums(), part.strs(), out);
    } finally {
      part.free();
    }
  }
  for (const e of session.trace(from, to)) out.push(e);
  return out;
}

/**
 * Yields to the browser (input, rendering) between slices of model work: a message to
 * itself, not `setTimeout(0)`, which the browser delays by 4 ms once timeouts nest 5
 * deep (a recording of 20 slices lost 60 ms of the load to it).
 */
const sliceChannel = typeof MessageChannel === 'function' ? new MessageChannel() : null;
const sliceWaiting = [];
if (sliceChannel) sliceChannel.port1.onmessage = () => sliceWaiting.shift()?.();
export function nextSlice() {
  if (!sliceChannel) return new Promise((resolve) => setTimeout(resolve, 0));
  return new Promise((resolve) => {
    sliceWaiting.push(resolve);
    sliceChannel.port2.postMessage(null);
  });
}

/**
 * Yields until the browser has rendered a frame (layout and paint of what changed so
 * far), then to a task after it: work that changes much of the page in two halves
 * gets a frame each, not one frame with both. A hidden page renders no frames, so
 * after FRAME_WAIT_MS it goes on without one.
 */
const FRAME_WAIT_MS = 100;
export function nextFrame() {
  if (typeof requestAnimationFrame !== 'function') return nextSlice();
  return new Promise((resolve) => {
    let done = false;
    const go = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      nextSlice().then(resolve);
    };
    const timer = setTimeout(go, FRAME_WAIT_MS);
    requestAnimationFrame(go);
  });
}

/**
 * Calls `work()` (true when finished) in slices of about SLICE_MS, yielding between
 * them, and `progress()` after each slice. Resolves true when finished, false when
 * `cancelled()` said so first.
 */
export async function inSlices(work, { progress = () => {}, cancelled = () => false } = {}) {
  for (;;) {
    const t0 = performance.now();
    let done = false;
    while (!done && performance.now() - t0 < SLICE_MS) done = work();
    if (done) return true;
    progress();
    await nextSlice();
    if (cancelled()) return false;
  }
}

/**
 * The history of one run, recorded by running the (deterministic) session to its end
 * once: `stepEnds()` and `stepTimesNs()` give the trace length and time at the end of every step, and
 * `trace(from, to)` the trace, so recording costs one run and one copy of the trace,
 * not a snapshot per step (a run has thousands of steps). Built by `Recording.record`
 * in slices, so a long run never freezes the page; leaves the session at its end: the
 * caller seeks where it wants to be.
 */
export class Recording {
  /** Records `session`; null if `cancelled()` said so before the end. */
  static async record(session, { progress = () => {}, cancelled = () => false } = {}) {
    const ran = await inSlices(() => session.runSome(STEP_SLICE, CALL_MS), {
      progress: () => progress(`Recording the run: ${fmtInt(session.step())} steps so far…`),
      cancelled,
    });
    if (!ran) return null;
    await nextSlice();
    const rec = new Recording();
    const ends = session.stepEnds();
    const times = session.stepTimesNs();
    const last = session.snapshot(NO_TRACE);
    const n = ends.length;
    rec.totalSteps = Math.max(n, last.step);
    rec.totalNs = Math.max(last.time_ns, last.total_time_ns ?? 0);
    // stepEnds[k] / stepTimesNs[k]: trace length and time after k steps (k = 0 … totalSteps).
    rec.stepEnds = new Uint32Array(n + 1);
    rec.stepTimesNs = new Float64Array(n + 1);
    rec.stepEnds.set(ends, 1);
    rec.stepTimesNs.set(times, 1);
    // Keep whole steps only, up to the budget.
    let keep = last.trace_len;
    if (keep > TRACE_BUDGET) {
      let k = 0;
      while (k < n && rec.stepEnds[k + 1] <= TRACE_BUDGET) k++;
      keep = rec.stepEnds[k];
    }
    // Packed where the module can (the page's own), else the events as objects.
    rec.packed = traceCodes && typeof session.tracePart === 'function' ? new PackedTrace(traceCodes) : null;
    rec.objectTrace = rec.packed ? null : [];
    await nextSlice();
    const copied = await inSlices(
      () => {
        const before = rec.traceLength;
        const to = Math.min(keep, before + TRACE_SLICE);
        if (rec.packed) {
          const part = session.tracePart(before, to);
          try {
            rec.packed.append(part.nums(), part.strs());
          } finally {
            part.free();
          }
        } else copyTrace(session, before, to, rec.objectTrace);
        return rec.traceLength >= keep || rec.traceLength === before;
      },
      { progress: () => progress(`Copying the trace: ${Math.round((100 * rec.traceLength) / Math.max(1, keep))}%…`), cancelled },
    );
    if (!copied) return null;
    rec.complete = rec.traceLength === last.trace_len;
    // The trace is complete up to this time.
    rec.recordedNs = rec.complete ? rec.totalNs : rec.traceLength ? rec.timeAt(rec.traceLength - 1) : 0;
    rec.connections = last.connections.map((c) => c.server);
    return rec;
  }

  /** Events of the trace kept. */
  get traceLength() {
    return this.packed ? this.packed.length : this.objectTrace.length;
  }

  /**
   * The trace kept, as objects (the trace's JSON form, event for event): made from the
   * packed trace the first time it is asked for; the page's own views read the packed
   * one (render/traceview.js).
   */
  get trace() {
    if (!this.objectTrace) this.objectTrace = this.packed.objects();
    return this.objectTrace;
  }

  /** Event `i`'s time (ns). */
  timeAt(i) {
    return this.packed ? this.packed.timeAt(i) : this.objectTrace[i].time_ns;
  }

  /** The last step that ends at or before virtual time `ns` (0 if none). */
  stepAtNs(ns) {
    let lo = 0;
    let hi = this.totalSteps;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.stepTimesNs[mid] <= ns) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Trace index where step `step` began (its events are trace[stepStart(step) .. stepEnd(step)]). */
  stepStart(step) {
    if (step <= 0) return 0;
    return this.stepEnds[Math.min(step - 1, this.totalSteps)];
  }

  stepEnd(step) {
    return this.stepEnds[Math.max(0, Math.min(step, this.totalSteps))];
  }

  /** Whether the recorded trace holds every event of step `step`. */
  hasStep(step) {
    return this.stepEnd(step) <= this.traceLength;
  }
}

// ---- a scenario file in the URL: deflate-raw, then base64url ----

function toBase64Url(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** A scenario file's text as the URL carries it: UTF-8, deflated (raw), base64url. */
export async function encodeSql(text) {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return toBase64Url(new Uint8Array(await new Response(stream).arrayBuffer()));
}

/**
 * The text of an `sql=` value. Throws an Error saying what is wrong: not base64url,
 * not deflated data, more than `maxBytes` once inflated (it stops reading there, so a
 * small URL cannot inflate into a huge text), not UTF-8.
 */
export async function decodeSql(param, maxBytes) {
  let bytes;
  try {
    bytes = fromBase64Url(param);
  } catch {
    throw new Error('sql=…: not base64url');
  }
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader();
  const parts = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > maxBytes) {
        reader.cancel().catch(() => {});
        throw new Error(`sql=…: the scenario file is more than ${fmtInt(maxBytes)} bytes, the most the page takes`);
      }
      parts.push(value);
    }
  } catch (e) {
    if (/^sql=/.test(e.message)) throw e;
    throw new Error(`sql=…: not a deflated scenario file (${String(e.message || e).replace(/\.$/, '')})`);
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(all);
  } catch {
    throw new Error('sql=…: the scenario file is not UTF-8 text');
  }
}
