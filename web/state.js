// History and URL state, kept apart from the model (wasm) and from rendering
// (the raftscope split: model, history, render).
//
// * `Config` is what the user chose: scenario, mode and knobs. It round-trips through
//   the URL query string together with the current step, so a reloaded or shared URL
//   reproduces the exact view.
// * `Recording` is the history of one run: the trace length and virtual time at the end
//   of every step, and the whole trace. A run on the virtual clock is deterministic, so
//   the recording made once is valid for every replay; the timeline draws it (the future
//   faded) and the page uses it to know what happened during the current step.

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
];

export const SHARING = ['dedicated', 'shared', 'pipelined'];

/** What the page starts with when the URL says nothing: small data, so stepping is interactive. */
export const DEFAULT_CONFIG = Object.freeze({
  scenario: 'E',
  mode: 'async',
  // Raw strings as typed into the inputs ('' = the scenario's own default).
  fields: { shards: '', rows: '300', fetch: '100', rtt: '', rtts: '', bw: '', offset: '', limit: '' },
  sharing: '',
  step: 0,
});

export function cloneConfig(c) {
  return { scenario: c.scenario, mode: c.mode, fields: { ...c.fields }, sharing: c.sharing, step: c.step };
}

/** Reads a config from a query string (missing values take the defaults). */
export function configFromUrl(search) {
  const q = new URLSearchParams(search);
  const c = cloneConfig(DEFAULT_CONFIG);
  if (q.has('scenario')) c.scenario = q.get('scenario');
  if (q.has('mode')) c.mode = q.get('mode');
  for (const f of KNOB_FIELDS) if (q.has(f.url)) c.fields[f.url] = q.get(f.url);
  if (q.has('sharing')) c.sharing = q.get('sharing');
  const step = Number(q.get('step'));
  c.step = Number.isInteger(step) && step >= 0 ? step : 0;
  return c;
}

/** The query string for a config (every knob written, so the URL is self-contained). */
export function configToQuery(c) {
  const q = new URLSearchParams();
  q.set('scenario', c.scenario);
  q.set('mode', c.mode);
  for (const f of KNOB_FIELDS) if (c.fields[f.url] !== '' && c.fields[f.url] != null) q.set(f.url, c.fields[f.url]);
  if (c.sharing) q.set('sharing', c.sharing);
  q.set('step', String(c.step));
  return '?' + q.toString().replace(/%2C/g, ',');
}

/**
 * Turns the raw strings of a config into the knobs JSON for wasm. Throws an Error with
 * a message for the user when a field is not a number; range checks are left to wasm,
 * which knows each scenario's limits and says so.
 */
export function knobsJson(c) {
  const k = {};
  for (const f of KNOB_FIELDS) {
    const raw = (c.fields[f.url] ?? '').trim();
    if (raw === '') continue;
    if (f.kind === 'floatlist') {
      const parts = raw.split(/[\s,;]+/).filter((s) => s !== '');
      const nums = parts.map(Number);
      const bad = parts.find((s, i) => !Number.isFinite(nums[i]));
      if (bad !== undefined) throw new Error(`${f.label}: "${bad}" is not a number`);
      k[f.knob] = nums;
    } else {
      const n = Number(raw);
      if (!Number.isFinite(n)) throw new Error(`${f.label}: "${raw}" is not a number`);
      k[f.knob] = n;
    }
  }
  if (c.sharing) {
    if (!SHARING.includes(c.sharing)) throw new Error(`sharing: "${c.sharing}" is not one of ${SHARING.join(', ')}`);
    k.sharing = c.sharing;
  }
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
 * Trace events the page keeps at most: every event crosses the wasm boundary as a JS
 * object (a few µs each), so a run of 100,000 rows per shard (800,000 events) would
 * take seconds. Past the budget the recording keeps the step marks (trace length and
 * time of every step, two numbers per step) and the trace up to the budget only.
 */
const TRACE_BUDGET = 250000;
const NO_TRACE = 0xffffffff; // `snapshot(since)` with since past the end: no trace events.

/**
 * The history of one run, recorded by running the (deterministic) session to its end
 * once: `stepMarks()` gives the trace length and time at the end of every step, and one
 * `snapshot(0)` the whole trace, so recording costs one run and one copy of the trace,
 * not a snapshot per step (a run has thousands of steps). Leaves the session at its
 * end: the caller seeks where it wants to be.
 */
export class Recording {
  constructor(session) {
    session.runToEnd();
    const marks = session.stepMarks();
    const last = session.snapshot(NO_TRACE);
    const n = marks.trace_ends.length;
    this.totalSteps = Math.max(n, last.step);
    this.totalNs = Math.max(last.time_ns, last.total_time_ns ?? 0);
    // stepEnds[k] / stepTimesNs[k]: trace length and time after k steps (k = 0 … totalSteps).
    this.stepEnds = new Uint32Array(n + 1);
    this.stepTimesNs = new Float64Array(n + 1);
    for (let k = 0; k < n; k++) {
      this.stepEnds[k + 1] = marks.trace_ends[k];
      this.stepTimesNs[k + 1] = Math.round(marks.times_ms[k] * 1e6);
    }
    if (last.trace_len <= TRACE_BUDGET) {
      this.trace = session.snapshot(0).trace;
    } else {
      // Keep the trace of the steps that fit in the budget: seek to the last of them
      // (the run replays from the start) and take the trace there.
      let k = 0;
      while (k < n && this.stepEnds[k + 1] <= TRACE_BUDGET) k++;
      session.seek(k);
      this.trace = session.snapshot(0).trace;
    }
    this.complete = this.trace.length === last.trace_len;
    // The trace is complete up to this time.
    this.recordedNs = this.complete ? this.totalNs : this.trace.length ? this.trace[this.trace.length - 1].time_ns : 0;
    this.connections = last.connections.map((c) => c.server);
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
    return this.stepEnd(step) <= this.trace.length;
  }
}
