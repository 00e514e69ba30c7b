// The page: wires the controls to the model (the wasm Session), keeps the history
// (state.js) and calls the renderers (render/*.js). The model decides everything; the
// page only renders snapshots.

import initWasm, * as wasm from './pkg/pgasync.js';
import { KNOB_FIELDS, configFromUrl, cloneConfig, knobsJson, UrlSync, Recording } from './state.js';
import { renderPlan, renderLegend } from './render/plan.js';
import { renderEventLoop } from './render/eventloop.js';
import { Timeline } from './render/timeline.js';
import { renderCompare, renderCompareError } from './render/compare.js';
import { WireInspector } from './render/wire.js';
import { renderRows, renderExplain } from './render/results.js';
import { transitionsIn } from './render/traceview.js';
import { fmtMs } from './render/util.js';

const NO_TRACE = 0xffffffff;
const SPEEDS = [0.5, 1, 2, 4, 8, 15, 30, 60, 240]; // steps per second
const $ = (id) => document.getElementById(id);

const ui = {
  scenario: $('scenario'),
  explanation: $('explanation'),
  mode: $('mode'),
  sharing: $('sharing'),
  pipeline: $('pipeline'),
  knobs: $('knobs'),
  fields: Object.fromEntries(KNOB_FIELDS.map((f) => [f.url, $('k-' + f.url)])),
  back: $('b-back'),
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
let lastRenderedStep = null; // for runs too long to record per step
let lastTraceLen = 0;
let profile = null; // {part: total ms} while window.pgasync.profile() is on
const urlSync = new UrlSync(250);
const timeline = new Timeline($('timeline'), (ms) => act(() => session.seekTime(ms)));
const wire = new WireInspector($('wire-tabs'), $('wire'));

// ---- errors shown in the page ----
function showError(msg) {
  ui.error.textContent = msg;
  ui.error.hidden = false;
}
function clearError() {
  ui.error.hidden = true;
  ui.error.textContent = '';
}
function message(e) {
  return e instanceof Error ? e.message : String(e);
}

// ---- config <-> inputs ----
function configToInputs(c) {
  ui.scenario.value = c.scenario;
  ui.mode.value = c.mode;
  for (const f of KNOB_FIELDS) ui.fields[f.url].value = c.fields[f.url] ?? '';
  ui.sharing.value = c.sharing;
  ui.pipeline.checked = c.sharing === 'pipelined';
  showExplanation(c.scenario);
}
function inputsToConfig() {
  const c = cloneConfig(config);
  c.scenario = ui.scenario.value;
  c.mode = ui.mode.value;
  for (const f of KNOB_FIELDS) c.fields[f.url] = ui.fields[f.url].value.trim();
  c.sharing = ui.sharing.value;
  return c;
}
function showExplanation(id) {
  const s = scenarios.find((x) => x.id === id);
  ui.explanation.textContent = s ? s.explanation : '';
}

/**
 * Builds a session for `c` and moves it to `c.step`. On an invalid config the error
 * is shown in the page and the previous session stays on screen.
 */
function rebuild(c) {
  let knobs;
  let next;
  try {
    if (!scenarios.some((s) => s.id === c.scenario)) throw new Error(`unknown scenario "${c.scenario}"`);
    knobs = knobsJson(c);
    next = new wasm.Session(c.scenario, c.mode, knobs);
  } catch (e) {
    showError(`Cannot build this run: ${message(e)}${session ? ' — still showing the previous run.' : ''}`);
    markInvalid(message(e));
    return false;
  }
  let rec;
  try {
    rec = new Recording(next);
    next.seek(Math.min(c.step, rec.totalSteps));
  } catch (e) {
    next.free();
    showError(`Cannot run this scenario: ${message(e)}`);
    return false;
  }
  clearError();
  markInvalid(null);
  stop();
  if (session) session.free();
  session = next;
  recording = rec;
  config = cloneConfig(c);
  config.step = session.step();
  try {
    comparison = wasm.compare(c.scenario, knobs);
  } catch (e) {
    comparison = { error: message(e) };
  }
  const snap = session.snapshot(NO_TRACE);
  ui.scrub.max = String(rec.totalSteps);
  ui.stTotal.textContent = String(rec.totalSteps);
  ui.stTotalTime.textContent = fmtMs(rec.totalNs);
  layoutStatic(snap);
  wire.setRecording(rec);
  serial++;
  document.body.dataset.session = String(serial);
  render(true);
  return true;
}

/** Highlights the knob input an error message names (best effort). */
function markInvalid(msg) {
  for (const f of KNOB_FIELDS) {
    const named = msg && (msg.includes(f.knob) || msg.startsWith(f.label) || msg.includes(`${f.label}:`));
    ui.fields[f.url].classList.toggle('invalid', !!named);
  }
}

/** The parts drawn once per session (and on resize): timeline and compare view. */
function layoutStatic(snap) {
  timeline.build(recording, (snap ?? session.snapshot(NO_TRACE)).plan);
  if (comparison && !comparison.error) renderCompare(ui.compare, comparison, config.scenario);
  else renderCompareError(ui.compare, comparison?.error ?? 'no data');
}

// ---- rendering ----
function render(urlNow = !running) {
  const prof = profile ? [performance.now()] : null;
  const mark = prof ? (name) => prof.push(name, performance.now()) : () => {};
  const snap = session.snapshot(NO_TRACE);
  lastSnap = snap;
  ui.stStep.textContent = String(snap.step);
  ui.stStep.dataset.step = String(snap.step);
  ui.stTime.textContent = fmtMs(snap.time_ns);
  ui.stTime.dataset.ns = String(snap.time_ns);
  ui.stPhase.textContent = snap.phase;
  ui.stPhase.className = `phase ${snap.phase}`;
  ui.scrub.value = String(snap.step);

  let narration = snap.narration;
  // Step 0 reads the same however it was reached (load, reset, seek), so a URL reproduces it.
  if (snap.step === 0) narration = 'At the start: nothing has run yet. Step to send the first requests.';
  if (snap.phase === 'failed' && snap.error) narration = `The query failed: ${snap.error}. ${narration}`;
  ui.narration.textContent = narration;
  ui.narration.title = narration;
  ui.narration.classList.toggle('failed', snap.phase === 'failed');

  // What each request went through during this step (a step is a whole event-loop turn).
  let from = recording.stepStart(snap.step);
  if (from == null) from = snap.step === (lastRenderedStep ?? -1) + 1 ? lastTraceLen : snap.trace_len;
  let passed = new Map();
  if (snap.step > 0 && snap.trace_len <= recording.trace.length) passed = transitionsIn(recording.trace, from, snap.trace_len);
  else if (snap.step > 0) passed = transitionsIn(session.snapshot(from).trace, 0, Infinity); // past the recorded trace
  lastRenderedStep = snap.step;
  lastTraceLen = snap.trace_len;

  mark('snapshot+status');
  renderPlan(ui.plan, snap, passed);
  mark('plan');
  renderEventLoop(ui.eventloop, snap);
  mark('eventloop');
  timeline.update(snap.time_ns);
  mark('timeline');
  wire.update(snap.trace_len);
  mark('wire');
  renderRows(ui.rows, ui.rowcount, session.rows(0, 50));
  mark('rows');
  renderExplain(ui.explain, session.explainText());
  mark('explain');

  ui.back.disabled = snap.step === 0;
  const done = session.isDone();
  ui.step.disabled = done;
  ui.row.disabled = done;
  ui.end.disabled = done;

  config.step = snap.step;
  urlSync.write(config, urlNow);
  mark('url');
  if (prof) {
    // prof = [t0, name1, t1, name2, t2, …]: part i took t(i) − t(i−1)
    for (let i = 1; i < prof.length; i += 2) profile[prof[i]] = (profile[prof[i]] ?? 0) + prof[i + 1] - prof[i - 1];
    profile.renders = (profile.renders ?? 0) + 1;
  }
}
/** Runs a model action, then renders; errors go to the page. */
function act(f) {
  if (!session) return;
  try {
    f();
  } catch (e) {
    showError(message(e));
  }
  render();
}

function stepEvent() {
  act(() => session.stepEvent());
}
function stepBack() {
  stop();
  act(() => session.seek(Math.max(0, session.step() - 1)));
}
function reset() {
  stop();
  act(() => session.reset());
}

// ---- run / pause ----
function speed() {
  return SPEEDS[Number(ui.speed.value)] ?? 4;
}
function showSpeed() {
  const s = speed();
  ui.speedLabel.textContent = `${s} step${s === 1 ? '' : 's'}/s`;
}
function start() {
  if (!session) return;
  if (session.isDone()) session.reset();
  running = true;
  ui.run.textContent = '❚❚ Pause';
  ui.run.classList.add('on');
  acc = 1000 / speed(); // first step at once
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
  if (session) render(true);
}
function tick(ts) {
  if (!running) return;
  acc += Math.max(0, ts - lastTs);
  lastTs = ts;
  const per = 1000 / speed();
  let n = Math.floor(acc / per);
  if (n > 0) {
    acc -= n * per;
    n = Math.min(n, 64);
    try {
      for (let i = 0; i < n && !session.isDone(); i++) session.stepEvent();
    } catch (e) {
      showError(message(e));
    }
    render(false);
  }
  if (session.isDone()) {
    stop();
    return;
  }
  raf = requestAnimationFrame(tick);
}

// ---- wiring ----
function onKnobChange() {
  const c = inputsToConfig();
  c.step = 0;
  showExplanation(c.scenario);
  rebuild(c);
}

function wire_() {
  ui.knobs.addEventListener('submit', (e) => e.preventDefault());
  ui.scenario.addEventListener('change', onKnobChange);
  ui.mode.addEventListener('change', onKnobChange);
  for (const f of KNOB_FIELDS) ui.fields[f.url].addEventListener('change', onKnobChange);
  ui.sharing.addEventListener('change', () => {
    ui.pipeline.checked = ui.sharing.value === 'pipelined';
    onKnobChange();
  });
  ui.pipeline.addEventListener('change', () => {
    ui.sharing.value = ui.pipeline.checked ? 'pipelined' : 'shared';
    onKnobChange();
  });

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
    act(() => session.stepRow());
  });
  button(ui.run, () => (running ? stop() : start()));
  button(ui.end, () => {
    stop();
    act(() => session.runToEnd());
  });
  button(ui.reset, reset);
  button(ui.back, stepBack);
  ui.speed.addEventListener('input', showSpeed);
  ui.scrub.addEventListener('input', () => {
    stop();
    act(() => session.seek(Number(ui.scrub.value)));
  });
  button(ui.copy, copyExplain);

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

  let resizeTimer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      if (!session) return;
      layoutStatic();
      render();
    }, 120);
  });
}

async function copyExplain() {
  const text = ui.explain.dataset.raw ?? ui.explain.innerText;
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

// ---- boot ----
async function boot() {
  renderLegend($('legend'));
  showSpeed();
  try {
    await initWasm();
    wasm.init();
    scenarios = wasm.scenarios();
  } catch (e) {
    showError(`Could not load the WebAssembly model (pkg/pgasync.js): ${message(e)}`);
    return;
  }
  ui.scenario.replaceChildren(
    ...scenarios.map((s) => {
      const o = document.createElement('option');
      o.value = s.id;
      o.textContent = `${s.id} — ${s.title}`;
      return o;
    }),
  );
  wire_();
  const c = configFromUrl(location.search);
  config = cloneConfig(c);
  configToInputs(c);
  if (!rebuild(c)) {
    // An invalid URL: fall back to the defaults but keep the message visible.
    const msg = ui.error.textContent;
    const d = configFromUrl('');
    configToInputs(d);
    if (rebuild(d)) showError(`${msg} (the URL's settings were replaced by the defaults)`);
  }
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
    /** Starts (true) or stops and returns the per-renderer totals in ms. */
    profile: (on) => {
      const p = profile;
      profile = on ? {} : null;
      return p;
    },
    wasm,
  };
  document.body.dataset.ready = '1';
}

boot();
