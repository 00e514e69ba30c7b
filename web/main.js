// The page: wires the controls to the model (the wasm Session), keeps the history
// (state.js) and calls the renderers (render/*.js). The model decides everything; the
// page only renders snapshots.

import { KNOB_FIELDS, PROFILE_FIELDS, profileFields, configFromUrl, cloneConfig, knobsJson, UrlSync, Recording, setSwitchNames, inSlices, nextSlice, nextFrame, SLICE_MS, STEP_SLICE, CALL_MS, SQL_SCENARIO, SQL_IGNORED_FIELDS, isSql, encodeSql, decodeSql, setTraceCodes } from './state.js';
import { BehaviourControls, decorateLegend, renderGlossary, setStateTerms } from './render/behaviour.js';
import { PlanView, renderLegend } from './render/plan.js';
import { EventLoopView } from './render/eventloop.js';
import { Timeline, prepareTimeline } from './render/timeline.js';
import { LivePanel } from './render/live.js';
import { renderCompare, renderCompareError, renderCompareNote } from './render/compare.js';
import { WireInspector } from './render/wire.js';
import { renderRows, renderExplain, explainRaw } from './render/results.js';
import { transitionsIn, recordedTransitions } from './render/traceview.js';
import { SqlEditor } from './render/sqleditor.js';
import { fmtInt, fmtMs, setText, flattenPlan } from './render/util.js';
import { installWorkshop } from './workshop.js'; // lessons, run to, narration history (issue 10)
import { installExportMenu } from './render/export.js'; // trace, EXPLAIN, timeline files (issue 10)
import { installProjector } from './render/projector.js'; // large text, a panel full screen (issue 10)

const NO_TRACE = 0xffffffff;
// Run speeds, steps per second. A step is one async request transition or one wait, so
// a run has thousands of them; above the frame rate several steps go into one frame.
const SPEEDS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];
/** Model time one animation frame may spend stepping while running (ms). */
const FRAME_STEP_BUDGET_MS = 8;
/**
 * Model work a click does in its own task before the render (ms): a step back at 64
 * shards replays up to a checkpoint's spacing (tens of ms) and the render and layout
 * after it take ~20 ms, so the click's task does this much and the rest goes on in
 * slices (SLICE_MS) before the render, which then has a task of its own.
 */
const FIRST_SLICE_MS = 12;
/**
 * Rows of a scenario's tables the model makes per call (`SessionBuild.data`, about
 * 2 ms), called until a slice's SLICE_MS is spent.
 */
const DATA_ROWS = 8192;
/**
 * Past this many connections or plan nodes, a new run is wide: its timeline is drawn in
 * a frame of its own and its first render in stages (`install`). D's 64 shards share
 * one connection, but its plan has 66 nodes and its timeline 64 request lanes.
 */
const WIDE_RUN = 24;
/** Whether the run on screen is wide (`WIDE_RUN`; set by `install`). */
let wideRun = false;
/**
 * Steps past which a move is a jump (`inFrames`): a step back or a held key moves a
 * few steps, and the render after it changes a few lines.
 */
const JUMP_STEPS = 32;
/** While running, the result rows and EXPLAIN text are redrawn at most this often (ms). */
const SLOW_PANEL_MS = 250;
const $ = (id) => document.getElementById(id);
/**
 * The first load's phases as performance marks (`pgasync:model`, …, `pgasync:ready`,
 * `pgasync:compared`), which bench.mjs reads to say where the load's time goes: each
 * name once, so later rebuilds add none.
 */
const marked = new Set();
/** Resolved once the first load is done (`boot`: the page is ready). */
let bootDone;
const booted = new Promise((resolve) => (bootDone = resolve));
function loadMark(name) {
  if (marked.has(name)) return;
  marked.add(name);
  performance.mark(`pgasync:${name}`);
}

const ui = {
  scenario: $('scenario'),
  explanation: $('explanation'),
  mode: $('mode'),
  sharing: $('sharing'),
  knobs: $('knobs'),
  fields: Object.fromEntries(KNOB_FIELDS.map((f) => [f.url, $('k-' + f.url)])),
  back: $('b-back'),
  busy: $('busy'),
  step: $('b-step'),
  row: $('b-row'),
  run: $('b-run'),
  end: $('b-end'),
  reset: $('b-reset'),
  speed: $('speed'),
  speedLabel: $('speed-label'),
  scrub: $('scrub'),
  stStep: $('st-step'),
  stTotal: $('st-total'),
  stTime: $('st-time'),
  stTotalTime: $('st-total-time'),
  stPhase: $('st-phase'),
  error: $('error'),
  narration: $('narration'),
  plan: $('plan'),
  eventloop: $('eventloop'),
  compare: $('p-compare'),
  rows: $('rows'),
  rowcount: $('rowcount'),
  explain: $('explain'),
  copy: $('b-copy'),
  copyMsg: $('copy-msg'),
  sqlToggle: $('b-sql'),
  sqlDrawer: $('p-sql'),
};

// ---- state ----
let scenarios = [];
let config = null; // the config of the session on screen (always valid)
let session = null;
let recording = null;
let comparison = null;
let running = false;
let raf = 0;
let lastTs = 0;
let acc = 0;
let serial = 0;
let lastSnap = null;
let slowAt = -Infinity; // when the rows and EXPLAIN panels were last drawn
let rowsKey = null; // what the rows panel shows: session serial and row count
let pendingSeek = null; // a seek waiting for the next frame (drag, held key): {step} or {ms}
/**
 * The step every panel shows, as `body[data-drawn-step]`: set at the end of a render
 * (of its last stage when it is split: the rows, EXPLAIN and the workshop's panels),
 * removed while a seek or a split render is under way and while running (the rows,
 * EXPLAIN and history are then redrawn only now and then). The one signal a test waits
 * on before it reads a panel: `data-step` is written by a split render's first stage,
 * frames earlier.
 */
let drawnStep = null;
let rebuilds = 0; // rebuilds under way (`settled`)
let comparingGen = null; // the rebuild whose comparison is being computed (`settled`: while it is the newest)
let settledWaiting = []; // `window.pgasync.settled()` promises waiting for the page to settle
let profile = null; // {part: total ms} while window.pgasync.profile() is on
let behaviourUi = null; // the behaviour selector, knob checkboxes and differences panel
let wasm = null; // the model (pkg/pgasync.js), loaded by boot(); pkg/pgasync_sql.js once the SQL front end is
// Every part of the page that keeps the model reaches it through this, so that once
// the SQL front end's module has replaced the first one they all use it.
const model = new Proxy({}, { get: (_, name) => wasm[name] });
let sqlModel = null; // the SQL front end's module, loading or loaded (withSql)
let livePanel = null; // live shards through the relay (render/live.js)
let building = 0; // generation of the newest rebuild: an older one stops at its next slice
let seeking = false; // a seek is running in slices
let sqlEditor = null; // the SQL editor drawer (render/sqleditor.js)
let sqlFiles = []; // the scenario files the page ships: [{id, text}]
let sqlInfo = null; // the session on screen, when a scenario file's: {log, query}
const LOAD_SLICE = 4096; // rows a scenario file's loader inserts per call at most (CALL_MS bounds it too)
// A call of the query's planning in slices: each call plans the query from its start
// again (parsing, the relations' scans) before its join searches go on, so a call
// takes more than the CALL_MS the other slices' calls take.
const PLAN_CALL_MS = 12;
let workshop = null; // lessons, run to, narration history (web/workshop.js)
let compiledModel = null; // the page's module compiled (index.html), shared with the comparison's worker
let compareWorker; // web/compare_worker.js: undefined until first asked for, null when there is none
let compareWaiting = null; // the request to it in flight: {id, resolve}
const urlSync = new UrlSync(250);
const timeline = new Timeline($('timeline'), (ms) => seekLater({ ms }));
const wire = new WireInspector($('wire-tabs'), $('wire'));
const planView = new PlanView(ui.plan);
const loopView = new EventLoopView(ui.eventloop);

// ---- errors shown in the page ----
function showError(msg) {
  ui.error.textContent = msg;
  ui.error.hidden = false;
}
function clearError() {
  ui.error.hidden = true;
  ui.error.textContent = '';
}
/** Long model work in progress (recording, seeking, comparing): a line above the narration. */
function showBusy(msg) {
  busyAt = performance.now();
  if (ui.busy.textContent !== msg) ui.busy.textContent = msg;
  if (ui.busy.hidden) ui.busy.hidden = false;
}
/**
 * A progress line of work in slices: written at most every PROGRESS_MS. Each write is
 * a style and layout of the line and a paint in the frame after the slice; at the
 * load, one per 25 ms slice was a fifth of the recording's main-thread time.
 */
const PROGRESS_MS = 200;
let busyAt = -Infinity;
function progressBusy(msg) {
  if (ui.busy.hidden || performance.now() - busyAt >= PROGRESS_MS) showBusy(msg);
}
function hideBusy() {
  ui.busy.hidden = true;
  ui.busy.textContent = '';
}
function message(e) {
  return e instanceof Error ? e.message : String(e);
}

/**
 * A Rust panic traps the wasm instance (the build aborts on panic; the hook has logged
 * it on the console) and leaves that Session unusable: drop it and build a new one
 * from the same URL state, so the page keeps working. Other errors are just shown.
 */
function failed(e) {
  showError(message(e));
  if (e instanceof WebAssembly.RuntimeError && config) {
    stop();
    session = null; // its borrow flag is stuck after the trap: never touch it again
    const c = cloneConfig(config);
    rebuild(c).then((ok) => ok && showError(`The model failed (${message(e)}) and was restarted at step ${c.step}.`));
  }
}

// ---- config <-> inputs ----
function configToInputs(c) {
  ui.scenario.value = isSql(c) ? SQL_SCENARIO : c.scenario;
  ui.mode.value = c.mode;
  for (const f of KNOB_FIELDS) ui.fields[f.url].value = c.fields[f.url] ?? '';
  ui.sharing.value = c.sharing;
  showProfile(c);
  behaviourUi.toInputs(c);
  showSqlMode(isSql(c));
  showExplanation(ui.scenario.value);
}
function inputsToConfig() {
  const c = cloneConfig(config);
  c.scenario = ui.scenario.value;
  if (c.scenario !== SQL_SCENARIO) {
    c.sql = '';
    c.sqlParam = '';
  }
  c.mode = ui.mode.value;
  for (const f of KNOB_FIELDS) c.fields[f.url] = ui.fields[f.url].value.trim();
  c.sharing = ui.sharing.value;
  behaviourUi.fromInputs(c);
  return c;
}
function showExplanation(id) {
  if (id === SQL_SCENARIO) {
    ui.explanation.textContent = `Your scenario file (SQL…)${sqlInfo?.query ? `: ${sqlInfo.query}` : ''}`;
    ui.explanation.title = ui.explanation.textContent;
    return;
  }
  const s = scenarios.find((x) => x.id === id);
  ui.explanation.textContent = s ? s.explanation : '';
  ui.explanation.removeAttribute('title');
  // An empty shards or rows input means this scenario's own default: say which.
  if (s) {
    ui.fields.shards.placeholder = String(s.defaultShards);
    ui.fields.rows.placeholder = String(s.defaultRows);
  }
}
/** A scenario file says its shards, rows, offset and limit itself: those inputs are greyed. */
function showSqlMode(on) {
  for (const f of SQL_IGNORED_FIELDS) {
    ui.fields[f].disabled = on;
    const label = ui.fields[f].closest('label');
    label.dataset.title ??= label.title;
    label.title = on ? 'not used by a scenario file: its own tables, servers and query say this' : label.dataset.title;
  }
  ui.sharing.disabled = on;
  ui.sqlToggle.classList.toggle('sql-on', on);
}

/**
 * Builds a session for `c` and moves it to `c.step`. On an invalid config the error
 * is shown in the page and the previous session stays on screen.
 */
async function rebuild(c) {
  rebuilds++;
  try {
    return await rebuildNow(c);
  } finally {
    rebuilds--;
    notifySettled();
  }
}
async function rebuildNow(c) {
  const gen = ++building;
  const cancelled = () => gen !== building;
  // The comparison starts at once on the worker, beside this run's recording.
  const compared = requestCompare(gen, c);
  let next;
  let info = null;
  try {
    if (isSql(c)) {
      const built = await loadSql(c, cancelled);
      if (!built) return false; // a newer rebuild took over
      ({ next, info } = built);
    } else {
      if (!scenarios.some((s) => s.id === c.scenario)) throw new Error(`unknown scenario "${c.scenario}"`);
      // The session in tasks (the data in slices, the scenario, the run set up): 64 shards'
      // data is 54-61 ms in one go, and the page answers input between them. The data
      // starts in a task of its own: at the first load, the page's set-up before it
      // (the model instantiated, the controls built) and the data were one of 60-80 ms.
      const build = new wasm.SessionBuild(c.scenario, c.mode, knobsJson(c));
      try {
        await nextSlice();
        if (cancelled()) return false;
        const made = await inSlices(() => build.data(DATA_ROWS), {
          progress: () => progressBusy(`Generating the scenario's data: ${fmtInt(build.rowsMade())} of ${fmtInt(build.rowsToMake())} rows…`),
          cancelled,
        });
        if (!made) return false;
        // The plan, servers and reference from the tables: R at 64 shards is tens of ms.
        await nextSlice();
        if (cancelled()) return false;
        build.scenario();
        loadMark('data');
        await nextSlice();
        if (cancelled()) return false;
        next = build.session();
        loadMark('session');
      } finally {
        build.free();
      }
    }
  } catch (e) {
    if (cancelled()) return false;
    hideBusy();
    showError(`Cannot build this run: ${message(e)}${session ? ' — still showing the previous run.' : ''}`);
    markInvalid(message(e));
    if (isSql(c)) sqlFailed(c, e);
    return false;
  }
  showBusy('Recording the run…');
  if (!session) ui.narration.textContent = 'The run is being recorded (the whole query runs once, so every step can be shown and replayed).';
  await nextSlice(); // generating a large scenario's data was a task of its own
  const rec = await record(next, c.step, cancelled);
  loadMark('recorded');
  if (!rec) {
    next.free();
    return false; // failed (said so), or a newer rebuild took over
  }
  await nextSlice(); // the recording's last slice was a task; putting it on screen is another
  if (cancelled()) {
    next.free();
    return false;
  }
  hideBusy();
  clearError();
  markInvalid(null);
  stop();
  sqlInfo = info;
  await install(next, rec, c);
  loadMark('shown');
  showSqlMode(!!info);
  if (info) {
    sqlEditor.showRan(info);
    showExplanation(SQL_SCENARIO);
  }
  compareLater(gen, compared);
  return true;
}

/**
 * Loads config `c`'s scenario file into the model in slices (its INSERTs can hold
 * hundreds of thousands of rows) and makes its session; null if a newer rebuild took
 * over. Throws the model's Error (with `line` and `column`) on a bad file or a run too
 * big for the page, before anything runs.
 */
async function loadSql(c, cancelled) {
  if (!c.sql) c.sql = await decodeSql(c.sqlParam, wasm.maxSqlBytes());
  if (!c.sqlParam) c.sqlParam = await encodeSql(c.sql);
  if (!(await withSql())) return null;
  if (cancelled()) return null;
  const loader = new wasm.SqlLoader(c.sql, c.mode, knobsJson(c));
  try {
    const say = (msg) => {
      showBusy(msg);
      sqlEditor.setBusy(true, msg);
    };
    say('Loading the scenario file…');
    // Rows inserted (or sorted into an index), a statement counting as one.
    const loaded = await inSlices(() => loader.advance(LOAD_SLICE, CALL_MS), {
      progress: () => say(`Loading the scenario file: ${fmtInt(loader.rows())} rows inserted…`),
      cancelled,
    });
    if (!loaded) return null;
    say('Planning the query…');
    await nextSlice();
    if (cancelled()) return null;
    performance.mark('pgasync:sql-plan-start');
    // A join search of thousands of paths (a star of 8 to 11 relations) stops after
    // PLAN_CALL_MS and goes on at the next call (issue 20: the main thread is never
    // blocked for long); the session then takes the searches planned.
    const planned = await inSlices(() => loader.plan(PLAN_CALL_MS), {
      progress: () => say(`Planning the query: ${fmtInt(loader.pathsCosted())} join paths costed…`),
      cancelled,
    });
    if (!planned) return null;
    await nextSlice();
    if (cancelled()) return null;
    const next = loader.session();
    performance.mark('pgasync:sql-plan-end'); // the e2e's measure of the planning's longest task
    return { next, info: { log: loader.log(), query: loader.query() } };
  } finally {
    loader.free();
    sqlEditor.setBusy(false);
  }
}

/**
 * A scenario file the model refused: the editor shows it with the error where it is
 * (and opens when the error has a place in the text; a knob's error is the banner's).
 */
function sqlFailed(c, e) {
  const line = Number.isInteger(e?.line) ? e.line : 0;
  const column = Number.isInteger(e?.column) ? e.column : 0;
  if (line > 0) openSql();
  if (c.sql && sqlEditor.text() !== c.sql) sqlEditor.setText(c.sql);
  sqlEditor.showError({ message: e?.reason ?? message(e), line, column });
}

/**
 * Records `next` (the whole query, once, in slices: the page stays usable meanwhile)
 * and moves it to `step`. Null if cancelled or failed (the error is shown).
 */
async function record(next, step, cancelled) {
  try {
    const rec = await Recording.record(next, { progress: progressBusy, cancelled });
    if (!rec) return null;
    await nextSlice(); // the trace's last slice was this task's
    if (cancelled()) return null;
    const target = Math.min(step, rec.totalSteps);
    const there = await inSlices(() => next.seekSome(target, STEP_SLICE, CALL_MS), {
      progress: () => progressBusy(`Going to step ${fmtInt(target)}: step ${fmtInt(next.step())}…`),
      cancelled,
    });
    return there ? rec : null;
  } catch (e) {
    if (!cancelled()) {
      hideBusy();
      showError(`Cannot run this scenario: ${message(e)}`);
    }
    return null;
  }
}

/** Puts a recorded session on screen in place of the current one. */
async function install(next, rec, c) {
  if (session) session.free();
  setDrawn(null); // the panels show the old run until the new one's render is done
  session = next;
  recording = rec;
  config = cloneConfig(c);
  config.step = session.step();
  comparison = null;
  behaviourUi.showRun(session.behaviour());
  const snap = session.snapshot(NO_TRACE);
  // An EXPLAIN without ANALYZE was planned, never run: its panel is no EXPLAIN ANALYZE.
  $('explain-title').textContent = snap.plan_only ? 'EXPLAIN (planned, not run)' : 'EXPLAIN (ANALYZE)';
  ui.scrub.max = String(rec.totalSteps);
  ui.stTotal.textContent = String(rec.totalSteps);
  ui.stTotalTime.textContent = fmtMs(rec.totalNs);
  pendingSeek = null;
  planView.invalidate();
  loopView.invalidate();
  // Walks over the whole trace (the timeline's intervals, the wire inspector's lines),
  // drawing the timeline and the first render of a wide plan are each tens of ms at
  // 64 shards: separate tasks, so the page can answer input between them.
  await prepareTimeline(rec, nextSlice);
  await nextSlice();
  layoutStatic(snap);
  // A wide run's timeline (64 shards: thousands of marks) is laid out and painted in a
  // frame of its own, and the plan and the other panels in the next ones (`render`'s
  // stages): in one frame the browser's layout and paint of them all was the load's
  // longest block.
  const wide = Math.max(rec.connections.length, flattenPlan(snap.plan).length) > WIDE_RUN;
  wideRun = wide;
  await (wide ? nextFrame() : nextSlice());
  wire.setRecording(rec);
  await nextSlice();
  serial++;
  rowsKey = null;
  const s = session;
  // The snapshot above is the step's still (no click stepped it since): not made again.
  await drawStages(render({ split: wide, snap: session.step() === snap.step ? snap : null }), () => s === session);
  // The address bar names the run on screen before the page says a new session is up
  // (tests and the workshop read both): one replaceState, once per new run.
  urlSync.flush();
  document.body.dataset.session = String(serial);
}

/**
 * The comparison's worker (web/compare_worker.js, its protocol there), started the first
 * time it is asked for; null where there is none (no module workers, or it failed), and
 * on fewer than 4 cores: measured on a loaded 2-core machine, the worker's runs took
 * their share of the CPU from the page's own recording (2-3 times slower), and the load
 * was quicker with the comparison computed here after the first render.
 */
function comparisonWorker() {
  if (compareWorker !== undefined) return compareWorker;
  if (!(navigator.hardwareConcurrency >= 4)) {
    compareWorker = null;
    return null;
  }
  try {
    const w = new Worker(new URL('./compare_worker.js', import.meta.url), { type: 'module' });
    w.onmessage = (e) => {
      const waiting = compareWaiting;
      if (!waiting || waiting.id !== e.data.id) return; // a request the page no longer waits for
      compareWaiting = null;
      if (e.data.broken) dropComparisonWorker();
      waiting.resolve(e.data.error === undefined ? e.data.comparison : null);
    };
    w.onerror = (e) => {
      e.preventDefault(); // not the page's error: the page computes the comparison itself
      dropComparisonWorker();
    };
    w.postMessage({ module: compiledModel });
    compareWorker = w;
  } catch {
    compareWorker = null;
  }
  return compareWorker;
}
function dropComparisonWorker() {
  compareWorker?.terminate();
  compareWorker = null;
  compareWaiting?.resolve(null);
  compareWaiting = null;
}

/**
 * Asks the worker for config `c`'s comparison (rebuild `gen`): a promise of it, or of
 * null when the page must compute it itself (a scenario file, no worker, the worker's
 * error: the page's own computation then says it as usual). A newer request replaces
 * this one (its promise gives null).
 */
function requestCompare(gen, c) {
  compareWaiting?.resolve(null);
  compareWaiting = null;
  if (isSql(c)) {
    compareWorker?.postMessage({ id: gen }); // the worker drops what it was computing
    return Promise.resolve(null);
  }
  const w = comparisonWorker();
  if (!w) return Promise.resolve(null);
  return new Promise((resolve) => {
    compareWaiting = { id: gen, resolve };
    w.postMessage({ id: gen, scenario: c.scenario, knobs: knobsJson(c) });
  });
}

/**
 * The sync/async comparison of the run on screen: the worker's (`compared`), else
 * computed here in slices after the run is shown.
 */
async function compareLater(gen, compared) {
  let job;
  let result;
  comparingGen = gen;
  try {
    // At the first load, the page's own set-up (workshop, hooks: `ready`) goes first:
    // the comparison's slices are queued after it, not before.
    await booted;
    result = await compared;
    if (gen !== building) return;
    if (result) {
      await nextSlice(); // drawing it is a task of its own
      if (gen !== building) return;
      comparison = result;
      showComparison();
      loadMark('compared');
      return;
    }
    // The first render of the new run was this task's: the comparison starts in the next.
    await nextSlice();
    if (gen !== building) return;
    if (lastSnap?.plan_only ?? session.snapshot(NO_TRACE).plan_only) {
      comparison = { note: 'Nothing to compare: EXPLAIN without ANALYZE plans the query and runs it neither sync nor async.' };
      return showComparison();
    }
    job = session.compareJob();
    const done = await inSlices(() => job.run(STEP_SLICE, CALL_MS), { cancelled: () => gen !== building });
    if (!done) return;
    // The comparison (its two wire traces: ~30 ms at 64 shards) and drawing it are
    // tasks of their own.
    await nextSlice();
    if (gen !== building) return;
    result = job.result();
    await nextSlice();
    if (gen !== building) return;
    comparison = result;
  } catch (e) {
    if (gen !== building) return;
    comparison = { error: message(e) };
  } finally {
    job?.free();
    if (comparingGen === gen) {
      comparingGen = null;
      queueMicrotask(notifySettled); // after the draw below, which is synchronous
    }
  }
  showComparison();
  loadMark('compared');
}

/** The chip naming what a loaded calibration profile set (the knobs that have no input of their own live there). */
function showProfile(c) {
  const chip = $('profile-chip');
  const f = c.fields;
  const hidden = ['row_us', 'query_us', 'connect_ms', 'coord_row_us', 'coord_answer_us', 'coord_async_us'];
  if (!hidden.some((k) => f[k])) {
    chip.hidden = true;
    return;
  }
  const parts = [
    f.rtt && `rtt ${f.rtt} ms`,
    f.bw && `${f.bw} Mbit/s`,
    f.row_us && `${f.row_us} µs/row`,
    f.query_us && `${f.query_us} µs/statement`,
    f.connect_ms && `${f.connect_ms} ms/connection`,
    f.coord_row_us && `coordinator ${f.coord_row_us} µs/row`,
    f.coord_answer_us && `${f.coord_answer_us} µs/answer`,
    f.coord_async_us && `${f.coord_async_us} µs/async request`,
  ].filter(Boolean);
  const clear = document.createElement('button');
  clear.type = 'button';
  clear.textContent = '✕';
  clear.title = 'back to the simulator\'s default costs';
  clear.addEventListener('click', () => {
    for (const field of Object.values(PROFILE_FIELDS)) ui.fields[field].value = '';
    onKnobChange();
  });
  chip.replaceChildren(`calibrated: ${parts.join(' · ')}`, clear);
  chip.hidden = false;
}

/** A profile file chosen: its values go into the knobs, and the run is rebuilt. */
async function loadProfile(file) {
  try {
    const fields = profileFields(await file.text());
    for (const [field, v] of Object.entries(fields)) ui.fields[field].value = v;
  } catch (e) {
    showError(`Cannot load ${file.name}: ${message(e)}`);
    return;
  }
  onKnobChange();
}

/** Highlights the knob input an error message names (best effort). */
function markInvalid(msg) {
  for (const f of KNOB_FIELDS) {
    const input = ui.fields[f.url];
    // Messages name a knob as `fetch_size=0: …` (model) or `fetch=0: …` (URL).
    const named = msg && new RegExp(`(^|[:\\s])(${f.knob}|${f.url})=`).test(msg);
    // An input marked before stays marked while it still holds a value the run on
    // screen does not use (the message names only the first problem found).
    const stale = msg && input.classList.contains('invalid') && config && input.value.trim() !== (config.fields[f.url] ?? '');
    input.classList.toggle('invalid', !!(named || stale));
    if (named || stale) input.title = 'not applied: the run on screen does not use this value';
    else input.removeAttribute('title');
  }
}

/** The parts drawn once per session (and on resize): timeline and compare view. */
function layoutStatic(snap) {
  timeline.build(recording, (snap ?? session.snapshot(NO_TRACE)).plan);
  showComparison();
}

/** The compare view: the comparison, its error, or that it is still being computed. */
function showComparison() {
  if (comparison?.note) renderCompareNote(ui.compare, comparison.note);
  else if (comparison && !comparison.error) renderCompare(ui.compare, comparison, config.scenario);
  else renderCompareError(ui.compare, comparison?.error ?? 'comparing sync and async…');
}

// ---- rendering ----
/**
 * Draws the session's current state. A step changes little, so each panel rewrites
 * only what changed; the rows and EXPLAIN panels (text from the model, the costliest
 * to fetch) are redrawn at most every SLOW_PANEL_MS while running.
 */
function render({ urlNow = !running, full = !running, split = false, snap: made = null } = {}) {
  if (split || !full) setDrawn(null);
  const prof = profile ? [performance.now()] : null;
  const mark = prof ? (name) => prof.push(name, performance.now()) : () => {};
  // The trace events of the current step come from the recording; past the kept trace
  // (very long runs) they come with the snapshot, and only those. `made`: the caller's
  // snapshot of this step without trace events (a new run's first render).
  const k = session.step();
  const fromRecording = k === 0 || recording.hasStep(k);
  const snap = made && fromRecording ? made : session.snapshot(fromRecording ? NO_TRACE : recording.stepStart(k));
  lastSnap = snap;
  renderStatus(snap);
  // What each request went through during this step.
  let passed = null;
  if (snap.step > 0) passed = fromRecording ? recordedTransitions(recording, recording.stepStart(snap.step), snap.trace_len) : transitionsIn(snap.trace, 0, Infinity);
  mark('snapshot+status');
  planView.update(snap, passed, { staged: split });
  mark('plan');
  timeline.update(snap.time_ns);
  mark('timeline');
  const loop = () => {
    loopView.update(snap);
    mark('eventloop');
  };
  const wireNow = () => {
    wire.update(snap.trace_len);
    mark('wire');
  };
  const rest = () => {
    renderSlowPanels(snap, full, mark);
    workshop?.update(snap, { full });
    mark('workshop');
    config.step = snap.step;
    urlSync.write(config, urlNow);
    mark('url');
    if (full) setDrawn(snap.step);
    notifySettled();
    if (prof) {
      // prof = [t0, name1, t1, name2, t2, …]: part i took t(i) − t(i−1)
      for (let i = 1; i < prof.length; i += 2) profile[prof[i]] = (profile[prof[i]] ?? 0) + prof[i + 1] - prof[i - 1];
      profile.renders = (profile.renders ?? 0) + 1;
    }
  };
  // `split`: the caller draws the rest in stages, each after a frame of its own
  // (`drawStages`): the event loop, the wire inspector, then the rows, EXPLAIN and the
  // workshop's panels. At 64 shards, after a jump, each of these is tens of ms of work
  // and of layout: with the status, plan and timeline they made one frame the seek's
  // longest block (and the event loop and the wire inspector together, the next one's).
  // A new wide plan is drawn in stages too (`PlanView.drawMore`), before those.
  if (split) {
    const others = () => {
      loop();
      return () => {
        wireNow();
        return rest;
      };
    };
    const planRows = () => (planView.drawMore() ? planRows : others);
    return planView.undrawn() ? planRows : others;
  }
  loop();
  wireNow();
  rest();
}

/**
 * Draws the stages of a split render (`render({split})` gives the first), each after
 * a frame; stops early once `alive()` is false (another session is on screen).
 */
async function drawStages(next, alive = () => true) {
  while (next) {
    await nextFrame();
    if (!alive()) return;
    next = next();
  }
}

/** `body[data-drawn-step]` (see `drawnStep`): the step every panel shows, or null. */
function setDrawn(step) {
  if (step === drawnStep) return;
  drawnStep = step;
  if (step === null) delete document.body.dataset.drawnStep;
  else document.body.dataset.drawnStep = String(step);
}

/**
 * Whether the page has drawn all it will for now: every panel shows one step, and no
 * seek (pending or in slices), run, rebuild or comparison is under way.
 */
function isSettled() {
  return drawnStep !== null && !seeking && pendingSeek === null && !running && rebuilds === 0 && !(comparingGen !== null && comparingGen === building);
}
function notifySettled() {
  if (!settledWaiting.length || !isSettled()) return;
  const waiting = settledWaiting;
  settledWaiting = [];
  for (const resolve of waiting) resolve(drawnStep);
}

/** Step, time, phase, slider, narration and which buttons apply. */
function renderStatus(snap) {
  setText(ui.stStep, String(snap.step));
  ui.stStep.dataset.step = String(snap.step);
  setText(ui.stTime, fmtMs(snap.time_ns));
  ui.stTime.dataset.ns = String(snap.time_ns);
  setText(ui.stPhase, snap.phase);
  if (ui.stPhase.className !== `phase ${snap.phase}`) ui.stPhase.className = `phase ${snap.phase}`;
  if (ui.scrub.value !== String(snap.step)) ui.scrub.value = String(snap.step);
  let narration = snap.narration;
  if (snap.phase === 'failed' && snap.error) narration = `The query failed: ${snap.error}. ${narration}`;
  if (ui.narration.__text !== narration) {
    setText(ui.narration, narration);
    ui.narration.title = narration;
    ui.narration.classList.toggle('failed', snap.phase === 'failed');
  }
  const done = snap.phase === 'finished' || snap.phase === 'failed';
  if (ui.back.disabled !== (snap.step === 0)) ui.back.disabled = snap.step === 0;
  if (ui.step.disabled !== done) {
    ui.step.disabled = done;
    ui.row.disabled = done;
    ui.end.disabled = done;
  }
}

/** Rows and EXPLAIN (text from the model, the costliest): at most every SLOW_PANEL_MS while running. */
function renderSlowPanels(snap, full, mark) {
  const now = performance.now();
  if (!full && now - slowAt < SLOW_PANEL_MS) return;
  slowAt = now;
  const key = `${serial}:${snap.rows_total}`;
  if (key !== rowsKey) {
    rowsKey = key;
    renderRows(ui.rows, ui.rowcount, session.rows(0, 50));
  }
  mark('rows');
  renderExplain(ui.explain, session.explainText());
  mark('explain');
}

/**
 * Runs a model action (after any seek still waiting for its frame), then renders;
 * errors go to the page. A seek back starts from the nearest checkpoint, so it replays
 * few steps; one that still has far to go (a jump ahead) continues in slices.
 */
function act(f) {
  if (!session || seeking) return;
  const t = pendingSeek;
  pendingSeek = null;
  if (!t) {
    try {
      f();
    } catch (e) {
      failed(e);
    }
    if (session) render();
    return;
  }
  const target = Math.max(0, t.ms != null ? recording.stepAtNs(t.ms * 1e6) : t.step);
  inFrames(
    () => session.seekSome(target, STEP_SLICE, CALL_MS),
    (s) => `Going to step ${fmtInt(target)}: step ${fmtInt(s.step())}…`,
    f,
  );
}

/**
 * Model work that may be long (`work()` true when done): up to one slice now; the rest
 * in slices between frames with a progress line, the page usable meanwhile. Then
 * `then()` and a render.
 */
function inFrames(work, label, then = () => {}) {
  if (!session || seeking) return;
  const s = session;
  const finish = () => {
    try {
      then();
    } catch (e) {
      failed(e);
    }
    if (session) render();
  };
  let done = false;
  const from = s.step();
  try {
    const t0 = performance.now();
    while (!done && performance.now() - t0 < FIRST_SLICE_MS) done = work();
  } catch (e) {
    failed(e);
    return;
  }
  // A jump in a wide run changes every panel: even when the model's work fit in this
  // slice, its render is drawn in stages from the next task on, as after a long one
  // (M at 64 shards: a seek from a checkpoint takes a few ms, and the whole render
  // after it was one task of ~40 ms).
  if (done && !(wideRun && Math.abs(s.step() - from) > JUMP_STEPS)) return finish();
  seeking = true;
  setDrawn(null);
  // The rest from the next task on: inSlices runs its first slice at once, which made
  // this task two slices long (50 ms of model work before the page could answer).
  showBusy(label(s));
  nextSlice()
    .then(() => s === session && (done || inSlices(work, { progress: () => progressBusy(label(s)), cancelled: () => s !== session })))
    .then(async (ok) => {
      await nextSlice(); // the render in a task of its own
      if (ok && s === session) {
        // After a jump every panel changes: at 64 shards the whole render is one
        // block past 50 ms, so it is four tasks (the status, plan and timeline; the
        // event loop; the wire inspector; the rows, EXPLAIN and the workshop's). The
        // busy line stays until all are drawn, and no other action starts between.
        try {
          then();
        } catch (e) {
          failed(e);
        }
        // Each stage after a frame: the browser lays out and paints each one's
        // changes alone (in one frame, their layout and paint were the 64-shard
        // seek's longest block).
        if (session) await drawStages(render({ split: true }), () => s === session);
      }
      seeking = false;
      hideBusy();
      if (pendingSeek && session) act(() => {});
      notifySettled();
    })
    .catch((e) => {
      seeking = false;
      hideBusy();
      failed(e);
      notifySettled();
    });
}

/**
 * Seeks on the next animation frame: a drag of the step slider or a held ← key would
 * queue many seeks; only the last target of a frame is sought. `{step}` or `{ms}`
 * (a time, from the timeline).
 */
function seekLater(target) {
  stop();
  const first = pendingSeek === null;
  pendingSeek = target;
  if (!first) return;
  requestAnimationFrame(() => {
    if (pendingSeek !== null) act(() => {});
  });
}

function stepEvent() {
  act(() => session.stepEvent());
}
function stepBack() {
  if (!session) return;
  const from = pendingSeek?.step ?? session.step();
  if (from > 0) seekLater({ step: from - 1 });
}
function reset() {
  stop();
  act(() => session.reset());
}

// ---- run / pause ----
function speed() {
  return SPEEDS[Number(ui.speed.value)] ?? 100;
}
function showSpeed() {
  const s = speed();
  ui.speedLabel.textContent = `${fmtInt(s)} step${s === 1 ? '' : 's'}/s`;
}
function start() {
  if (!session) return;
  act(() => {}); // a pending seek first
  if (session.isDone()) session.reset();
  running = true;
  ui.run.textContent = '❚❚ Pause';
  ui.run.classList.add('on');
  acc = 1; // the first step at once
  lastTs = performance.now();
  raf = requestAnimationFrame(tick);
  render();
}
function stop() {
  if (!running) return;
  running = false;
  cancelAnimationFrame(raf);
  ui.run.textContent = '▶ Run';
  ui.run.classList.remove('on');
  if (session) render();
}
/** One animation frame of a run: the steps owed at the chosen speed, then one render. */
function tick(ts) {
  if (!running) return;
  acc += (Math.min(250, Math.max(0, ts - lastTs)) * speed()) / 1000; // steps owed
  lastTs = ts;
  const n = Math.floor(acc);
  if (n > 0) {
    acc -= n;
    const t0 = performance.now();
    let i = 0;
    try {
      // Batches of up to 16 steps (only a batch's last step is narrated).
      while (i < n && !session.isDone()) {
        const k = Math.min(16, n - i);
        session.runSome(k);
        i += k;
        // Faster than the model can go: drop the backlog instead of piling it up.
        if (performance.now() - t0 > FRAME_STEP_BUDGET_MS) {
          acc = 0;
          break;
        }
      }
    } catch (e) {
      failed(e);
    }
    if (!session) return;
    render();
  }
  if (session.isDone()) {
    stop();
    return;
  }
  raf = requestAnimationFrame(tick);
}

// ---- the SQL editor ----
/**
 * The text the editor starts with: the scenario file on screen, else the current
 * scenario's file when it is a seed's (M: seed 003, X: seed 004), else seed 003's.
 * (D's and E's files hold 400,000 rows, more than the page records step by step.)
 */
function startingText() {
  if (isSql(config) && config.sql) return config.sql;
  const own = ['M', 'X'].includes(config?.scenario) ? sqlFiles.find((f) => f.id === config.scenario) : null;
  return (own ?? sqlFiles.find((f) => f.id === 'M') ?? sqlFiles[0])?.text ?? '';
}
function openSql() {
  if (!sqlEditor) return;
  // The front end's module, meanwhile (the editor's Run waits for it); the scenario
  // files are in it (issue 20), so the starting text may come when it is in: then only
  // into an editor still empty and not being typed in (focused), which it would garble.
  withSql().then((ok) => ok && !sqlEditor.text() && !sqlEditor.focused() && sqlEditor.setText(startingText()));
  if (!sqlEditor.text()) sqlEditor.setText(startingText());
  const live = $('p-live');
  live.hidden = true;
  $('b-live').classList.remove('on');
  ui.sqlDrawer.hidden = false;
  placeSqlDrawer();
  ui.sqlToggle.classList.add('on');
  sqlEditor.shown();
}
/**
 * A drawer (the SQL editor, the live drawer) below the step buttons (they stay usable:
 * SQL… and Live… close it again), but at least 60% of the window high, and 420 px (or
 * the whole window) on small ones: 150% zoom, a laptop.
 */
function placeDrawer(drawer) {
  const h = window.innerHeight;
  const below = document.querySelector('.bar3').getBoundingClientRect().bottom + 6;
  const top = Math.min(below, h * 0.4, h - 10 - Math.min(420, h - 20));
  drawer.style.top = `${Math.round(Math.max(10, top))}px`;
}
function placeSqlDrawer() {
  placeDrawer(ui.sqlDrawer);
}
function closeSql() {
  ui.sqlDrawer.hidden = true;
  ui.sqlToggle.classList.remove('on');
}
/**
 * Run in the editor: the text becomes the run on screen (and the URL), or its error is
 * shown in place. With "live" on, the relay loads the file into the live shards first
 * (its errors, the relay's too, shown in place the same way), and once the simulated
 * run is up the live drawer runs it on the real shards.
 */
async function runSql(text) {
  const max = wasm.maxSqlBytes();
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > max) {
    sqlEditor.showError({ message: `the scenario file is ${fmtInt(bytes)} bytes; the page takes at most ${fmtInt(max)}`, line: 0, column: 0 });
    return;
  }
  const live = sqlEditor.wantsLive();
  if (live && !(await loadLive(text))) return;
  stop();
  sqlEditor.clearError();
  const c = inputsToConfig();
  c.scenario = SQL_SCENARIO;
  c.sql = text;
  c.sqlParam = '';
  c.step = 0;
  if (await rebuild(c)) {
    configToInputs(config);
    closeSql();
    if (live) runLiveNow();
  }
}

/** The file into the live shards through the relay; false (the error shown in the editor) if refused. */
async function loadLive(text) {
  sqlEditor.clearError();
  sqlEditor.setBusy(true, 'Loading the file into the live shards…');
  try {
    await livePanel.loadFile(text);
    return true;
  } catch (e) {
    sqlEditor.showError({ message: `live: ${e.message || e}`, line: e.line || 0, column: e.column || 0 });
    return false;
  } finally {
    sqlEditor.setBusy(false);
  }
}

/**
 * The Export menu's job for the session on screen, from the SQL front end's module
 * (the ExportJob is there only: issue 20). A session that module made (a scenario
 * file's) exports itself; one of the page's first module is a built-in scenario,
 * which the job runs again from the same scenario, mode and knobs (the same bytes).
 */
async function exportJob(format) {
  if (!session || !(await withSql())) return null;
  if (typeof session.exportJob === 'function') return session.exportJob(format);
  return new wasm.ExportJob(config.scenario, config.mode, knobsJson(config), format);
}

/** Opens the live drawer and runs the run on screen there. */
function runLiveNow() {
  $('p-live').hidden = false;
  placeDrawer($('p-live'));
  $('b-live').classList.add('on');
  livePanel.run();
}

// ---- wiring ----
function onKnobChange() {
  const c = inputsToConfig();
  c.step = 0;
  showExplanation(c.scenario);
  showProfile(c);
  rebuild(c); // in slices; a newer change takes over
}

/** Every control of the page to its action. */
function wire_() {
  ui.knobs.addEventListener('submit', (e) => e.preventDefault());
  ui.scenario.addEventListener('change', () => {
    if (ui.scenario.value !== SQL_SCENARIO) return onKnobChange();
    // "SQL — scenario file": the editor; the run on screen changes when it runs.
    ui.scenario.value = isSql(config) ? SQL_SCENARIO : config.scenario;
    openSql();
  });
  ui.mode.addEventListener('change', onKnobChange);
  for (const f of KNOB_FIELDS) ui.fields[f.url].addEventListener('change', onKnobChange);
  ui.sharing.addEventListener('change', onKnobChange);
  $('profile-file').addEventListener('change', (e) => {
    const file = e.target.files?.[0];
    e.target.value = ''; // the same file can be chosen again
    if (file) loadProfile(file);
  });
  wireButtons();
  wireKeys();
  wireResize();
}

/** The step, run and seek buttons, the speed and step sliders. */
function wireButtons() {
  const button = (b, f) =>
    b.addEventListener('click', () => {
      f();
      b.blur();
    });
  button(ui.step, () => {
    stop();
    stepEvent();
  });
  button(ui.row, () => {
    stop();
    act(() => {}); // a pending seek first
    const rows = lastSnap ? lastSnap.rows_total : 0;
    inFrames(
      () => session.runWhileRows(rows, STEP_SLICE, CALL_MS),
      (s) => `Running to the next row: step ${fmtInt(s.step())}…`,
    );
  });
  button(ui.run, () => (running ? stop() : start()));
  button(ui.end, () => {
    stop();
    act(() => {}); // a pending seek first
    inFrames(
      () => session.runSome(STEP_SLICE, CALL_MS),
      (s) => `Running to the end: step ${fmtInt(s.step())} of ${fmtInt(recording.totalSteps)}…`,
    );
  });
  button(ui.reset, reset);
  button($('b-live'), () => {
    const p = $('p-live');
    p.hidden = !p.hidden;
    $('b-live').classList.toggle('on', !p.hidden);
    if (!p.hidden) {
      placeDrawer(p);
      closeSql();
      livePanel?.refreshTargets();
    }
  });
  // Esc closes the Live drawer (a full-screen panel first: projector.js leaves it).
  window.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape' || $('p-live').hidden || document.querySelector('section.panel.full')) return;
    e.preventDefault();
    $('p-live').hidden = true;
    $('b-live').classList.remove('on');
  });
  button(ui.sqlToggle, () => (ui.sqlDrawer.hidden ? openSql() : closeSql()));
  button(ui.back, stepBack);
  ui.speed.addEventListener('input', showSpeed);
  ui.scrub.addEventListener('input', () => seekLater({ step: Number(ui.scrub.value) }));
  button(ui.copy, copyExplain);
}

/** Keys: space runs and pauses, → steps, ← steps back, r resets (not while typing). */
function wireKeys() {
  window.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    const typing = t instanceof HTMLElement && (t.matches('input:not([type=range]):not([type=checkbox]), select, textarea') || t.isContentEditable);
    if (typing) return;
    if (t instanceof HTMLInputElement && t.type === 'range' && (e.key === 'ArrowLeft' || e.key === 'ArrowRight')) return;
    if (e.key === ' ' || e.code === 'Space') {
      e.preventDefault();
      running ? stop() : start();
    } else if (e.key === 'ArrowRight') {
      e.preventDefault();
      stop();
      stepEvent();
    } else if (e.key === 'ArrowLeft') {
      e.preventDefault();
      stepBack();
    } else if (e.key === 'r' || e.key === 'R') {
      e.preventDefault();
      reset();
    }
  });
  // A space released on a focused button must not click it as well.
  window.addEventListener('keyup', (e) => {
    if ((e.key === ' ' || e.code === 'Space') && e.target instanceof HTMLButtonElement) e.preventDefault();
  });
}

/** The timeline and plan are laid out for the panel's size: again after a resize. */
function wireResize() {
  let resizeTimer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      if (!ui.sqlDrawer.hidden) placeSqlDrawer();
      if (!$('p-live').hidden) placeDrawer($('p-live'));
      if (!session) return;
      planView.invalidate();
      layoutStatic();
      render();
    }, 120);
  });
}

async function copyExplain() {
  const text = explainRaw(ui.explain);
  let ok = false;
  try {
    await navigator.clipboard.writeText(text);
    ok = true;
  } catch {
    try {
      const r = document.createRange();
      r.selectNodeContents(ui.explain);
      const sel = getSelection();
      sel.removeAllRanges();
      sel.addRange(r);
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
  }
  ui.copyMsg.textContent = ok ? 'copied' : 'copy failed: the text is selected, press Ctrl-C';
  setTimeout(() => (ui.copyMsg.textContent = ''), 2500);
}

/** The model's verdict on a page URL (crate/knobs.rs): null, or the message. */
function checkUrl(search) {
  try {
    wasm.checkUrl(search);
    return null;
  } catch (e) {
    return message(e);
  }
}

// ---- boot ----
async function boot() {
  loadMark('main');
  renderLegend($('legend'));
  showSpeed();
  if (!(await loadModel())) {
    document.body.dataset.ready = '1';
    bootDone();
    return;
  }
  loadMark('model');
  setStateTerms(wasm.stateTerms());
  decorateLegend($('legend'));
  renderGlossary($('glossary'), $('b-glossary'));
  fillScenarios();
  sqlFiles = wasm.scenarioFiles?.() ?? []; // the SQL front end's module has them (withSql)
  sqlEditor = new SqlEditor(ui.sqlDrawer, sqlFiles, { onRun: (text) => runSql(text), onClose: closeSql });
  livePanel = new LivePanel($('p-live'), model, () => ({
    sql: isSql(config),
    text: isSql(config) ? config.sql : null,
    scenario: config.scenario,
    mode: config.mode,
    knobs: knobsJson(config),
    behaviour: $('behaviour').value,
    improvedKnobs: knobsJson({ ...config, behaviour: 'improved', switches: {} }),
    plan: session?.snapshot(NO_TRACE).plan,
  }), withSql);
  wire_();
  installExportMenu($('export'), wasm.exportFormats(), { job: exportJob, busy: showBusy, idle: hideBusy, failed: showError });
  await firstRun();
  await nextSlice(); // the first render was this task's
  startWorkshop();
  installProjector(document.querySelector('.bar3 .buttons'));
  exposeHooks();
  document.body.dataset.ready = '1';
  loadMark('ready');
  bootDone();
}

/**
 * The knob inputs' ranges, defaults (as placeholders) and help, from the model's one
 * knob table: the page writes none of them, so they cannot disagree with the CLI's.
 */
function applyKnobFields(fields) {
  const byUrl = new Map(fields.map((f) => [f.url, f]));
  for (const f of KNOB_FIELDS) {
    const m = byUrl.get(f.url);
    if (!m || m.knob !== f.knob) throw new Error(`the page's knob "${f.url}" is not the model's (${m ? m.knob : 'unknown'})`);
    const input = ui.fields[f.url];
    if (input.type !== 'number') continue;
    input.min = String(m.min);
    input.max = String(m.max);
    input.placeholder = m.default ?? 'default';
  }
}

/**
 * Loads the wasm model. Imported here, not at the top of the module: a missing or
 * broken package must leave a message, not a blank page.
 */
async function loadModel() {
  try {
    const mod = await import('./pkg/pgasync.js');
    // The module index.html began compiling, or (when that failed) fetched and compiled here.
    compiledModel = await window.pgasyncModule;
    await mod.default(compiledModel ? { module_or_path: compiledModel } : undefined);
    wasm = mod;
    wasm.init();
    // A recording copies the trace packed (state.js `unpackTrace`) where the module can.
    if (typeof wasm.traceCodes === 'function') setTraceCodes(wasm.traceCodes());
    scenarios = wasm.scenarios();
    applyKnobFields(wasm.knobFields());
    const knobs = wasm.behaviourKnobs();
    setSwitchNames(knobs.map((k) => k.name));
    behaviourUi = new BehaviourControls(knobs, { select: $('behaviour'), box: $('behaviour-knobs'), panel: $('differences') }, onKnobChange);
    return true;
  } catch (e) {
    showError(
      `Could not load the WebAssembly model (pkg/pgasync.js): ${message(e)}. ` +
        'Build it with `make pkg` (or run `make demo`), then reload this page.',
    );
    ui.narration.textContent = 'Nothing can run without the model: see the message above.';
    for (const b of [ui.back, ui.step, ui.row, ui.end]) b.disabled = true;
    return false;
  }
}

/**
 * The SQL front end (scenario files: the editor, a URL's `sql=`) is a second module,
 * pkg/pgasync_sql.js: the first one's superset, loaded the first time it is needed,
 * with a progress line. Once in, it is the model for everything; sessions made by the
 * first module keep working (each object keeps its own module). False, with the
 * error shown, when it cannot load.
 */
function withSql() {
  if (!sqlModel) {
    sqlModel = (async () => {
      const wasBusy = !ui.busy.hidden;
      if (!wasBusy) showBusy('Loading the SQL front end (pkg/pgasync_sql.js)…');
      sqlEditor?.setBusy(true, 'Loading the SQL front end…');
      try {
        const mod = await import('./pkg/pgasync_sql.js');
        await mod.default();
        mod.init();
        wasm = mod;
        sqlFiles = mod.scenarioFiles();
        sqlEditor?.setFiles(sqlFiles);
        return true;
      } catch (e) {
        sqlModel = null; // tried again next time
        showError(`Could not load the SQL front end (pkg/pgasync_sql.js): ${message(e)}. Build it with \`make pkg\`, then reload this page.`);
        return false;
      } finally {
        if (!wasBusy && ui.busy.textContent.startsWith('Loading the SQL front end')) hideBusy();
        sqlEditor?.setBusy(false);
      }
    })();
  }
  return sqlModel;
}

function fillScenarios() {
  const sql = document.createElement('option');
  sql.value = SQL_SCENARIO;
  sql.textContent = 'SQL — your scenario file (editor)';
  ui.scenario.replaceChildren(
    ...scenarios.map((s) => {
      const o = document.createElement('option');
      o.value = s.id;
      o.textContent = `${s.id} — ${s.title}`;
      return o;
    }),
    sql,
  );
}

/** The run the URL asks for; a URL the model refuses runs nothing and says why. */
async function firstRun() {
  const c = configFromUrl(location.search);
  let urlError = checkUrl(location.search);
  if (!urlError && c.sqlParam) {
    try {
      c.sql = await decodeSql(c.sqlParam, wasm.maxSqlBytes());
      sqlEditor.setText(c.sql);
    } catch (e) {
      urlError = message(e);
    }
  }
  config = cloneConfig(c);
  configToInputs(c);
  if (urlError) {
    // `shards=0x10`, `rtt=NaN`, `bogus=1`: say so, run nothing.
    showError(`This URL cannot be run: ${urlError}. Nothing was run: fix the value above, or pick a scenario.`);
    markInvalid(urlError);
    ui.narration.textContent = 'Nothing was run: the URL asks for settings the model refuses (see above).';
    for (const b of [ui.back, ui.step, ui.row, ui.end]) b.disabled = true;
  } else if (!(await rebuild(c))) {
    // Valid knobs the run refuses (too big, say): fall back to the defaults but keep
    // the message visible.
    const msg = ui.error.textContent;
    const d = configFromUrl('');
    configToInputs(d);
    if (await rebuild(d)) showError(`${msg} (the URL's settings were replaced by the defaults)`);
  }
}

/**
 * The workshop features (web/workshop.js: lessons, run to, narration history) get the
 * page's own paths: a lesson's run is applied as if typed into the knobs (URL included),
 * seeks and long runs go through the sliced runner.
 */
function startWorkshop() {
  workshop = installWorkshop({
    wasm: model,
    session: () => session,
    recording: () => recording,
    config: () => cloneConfig(config),
    applyConfig: (c) => {
      configToInputs(c);
      return rebuild(cloneConfig(c));
    },
    seek: (step) => seekLater({ step }),
    runInFrames: (work, label, then) => {
      stop();
      act(() => {}); // a pending seek first
      inFrames(work, label, then);
    },
    showError,
    running: () => running,
  });
}

/** `window.pgasync`: the page's state for tests, benchmarks and the console. */
function exposeHooks() {
  window.pgasync = {
    get session() {
      return session;
    },
    get recording() {
      return recording;
    },
    get comparison() {
      return comparison;
    },
    get config() {
      return cloneConfig(config);
    },
    /** The scenario file on screen's setup log and query as run (null for a built-in scenario). */
    get sqlInfo() {
      return sqlInfo;
    },
    snapshot: (since = NO_TRACE) => session.snapshot(since),
    lastSnapshot: () => lastSnap,
    /** One Step-event click: a model step and the synchronous render. */
    stepEvent: () => {
      stop();
      stepEvent();
      return lastSnap.step;
    },
    seek: (k) => act(() => session.seek(k)),
    isDone: () => session.isDone(),
    render: () => render(),
    /**
     * Resolves (with the step on screen) once the page has drawn all it will for now:
     * every panel shows that step (`body[data-drawn-step]`), and no seek, run, rebuild
     * or comparison is under way. Tests wait on it (or on data-drawn-step) before they
     * read a panel: a long seek draws the status first and the other panels a frame
     * later.
     */
    settled: () => (isSettled() ? Promise.resolve(drawnStep) : new Promise((resolve) => settledWaiting.push(resolve))),
    /** Starts (true) or stops and returns the per-renderer totals in ms. */
    profile: (on) => {
      const p = profile;
      profile = on ? {} : null;
      return p;
    },
    /** The model (the SQL front end's module once it is loaded). */
    get wasm() {
      return wasm;
    },
    /** Loads the SQL front end's module (the editor does when it opens); true once it is in. */
    withSql: () => withSql(),
  };
}

boot();
