// Live mode: the scenario on screen, run by the same wasm executor against real
// PostgreSQL shards through the relay (`make demo` starts shards, a coordinator and
// the relay), and beside it what a real PostgreSQL coordinator with postgres_fdw says
// for the same query (EXPLAIN ANALYZE VERBOSE). Without a relay the panel says why
// live mode is off. The simulated run above stays the place to step: a live run goes
// at the shards' own pace from start to end.

import { wireLines, transitionsIn } from './traceview.js';
import { Timeline } from './timeline.js';
import { PlanView } from './plan.js';

const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('data-')) e.setAttribute(k, v);
    else e[k] = v;
  }
  e.append(...kids);
  return e;
};

/** Names in /targets: a list of names, or of {name, ...}. */
function targetNames(json) {
  const list = Array.isArray(json) ? json : (json && json.targets) || [];
  return list.map((t) => (typeof t === 'string' ? t : t.name)).filter(Boolean);
}

function executionMs(explainText) {
  const m = /Execution Time: ([0-9.]+) ms/.exec(explainText || '');
  return m ? Number(m[1]) : null;
}

export class LivePanel {
  /**
   * @param root the panel's element
   * @param wasm the wasm module (runLive, postgresExplain, coordinatorQuery)
   * @param current () => {scenario, mode, knobs, plan} of the session on screen (the
   *   live run has the same plan, so its timeline names the same nodes)
   */
  constructor(root, wasm, current) {
    this.root = root;
    this.wasm = wasm;
    this.current = current;
    this.targets = [];
    this.status = el('p', { class: 'live-status', 'data-testid': 'live-status' }, 'Looking for the relay…');
    this.button = el('button', { type: 'button', disabled: true, 'data-testid': 'live-run' }, 'Run live');
    this.button.addEventListener('click', () => this.run());
    this.stepButton = el('button', { type: 'button', disabled: true, 'data-testid': 'live-step' }, 'Step live ▶');
    this.stepButton.addEventListener('click', () => this.stepLive());
    this.note = el('p', { class: 'live-note' },
      'Run live goes from start to end at the shards’ pace. Step live takes the same steps as the simulated run, one async request transition or one wait at a time: a wait simply lasts until a socket has input (the page stays responsive meanwhile), so the times you see include your pauses.');
    this.stepStatus = el('p', { class: 'live-step-status', 'data-testid': 'live-step-status' }, '');
    this.planBox = el('div', { class: 'live-plan', 'data-testid': 'live-plan' });
    this.planView = new PlanView(this.planBox);
    this.stepping = null; // {run: LiveRun, key, traceLen} while a live run is being stepped
    this.ours = el('pre', { class: 'live-explain', 'data-testid': 'live-ours' });
    this.theirs = el('pre', { class: 'live-explain', 'data-testid': 'postgres-says' });
    this.oursHead = el('h3', {}, 'pgasync (live)');
    this.theirsHead = el('h3', {}, 'PostgreSQL says');
    this.wire = el('ol', { class: 'live-wire', 'data-testid': 'live-wire' });
    this.timelineHead = el('h3', {}, 'Timeline of the live run');
    this.timelineBox = el('div', { class: 'live-timeline', 'data-testid': 'live-timeline' });
    this.timeline = new Timeline(this.timelineBox, () => {});
    root.replaceChildren(
      el('h2', {}, 'Live shards'),
      this.status,
      el('div', { class: 'live-actions' }, this.button, ' ', this.stepButton),
      this.note,
      this.stepStatus,
      this.planBox,
      el('div', { class: 'live-cols' },
        el('div', {}, this.oursHead, this.ours),
        el('div', {}, this.theirsHead, this.theirs)),
      this.timelineHead,
      this.timelineBox,
      el('details', {}, el('summary', {}, 'Wire messages of the live run'), this.wire),
    );
  }

  relayUrl() {
    return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}`;
  }

  async refreshTargets() {
    try {
      const r = await fetch('/targets', { cache: 'no-store' });
      if (!r.ok) throw new Error(`/targets answered ${r.status}`);
      this.targets = targetNames(await r.json());
    } catch (e) {
      this.targets = [];
      this.off(`no relay answers here (${e.message || e}): the page is served without live shards. Run \`make demo\` with PostgreSQL installed to get them.`);
      return;
    }
    if (this.targets.length === 0) {
      this.off('the relay has no targets configured.');
      return;
    }
    this.status.textContent = `Live mode on: the relay reaches ${this.targets.join(', ')}.`;
    this.button.disabled = false;
    this.stepButton.disabled = false;
  }

  off(why) {
    this.status.textContent = `Live mode is off: ${why}`;
    this.button.disabled = true;
    this.stepButton.disabled = true;
  }

  /**
   * One step of a live run of the scenario on screen (opened on the first click, and
   * again when the scenario, mode or knobs change or the run has ended).
   */
  async stepLive() {
    const { scenario, mode, knobs } = this.current();
    const key = `${scenario}|${mode}|${knobs}`;
    this.stepButton.disabled = true;
    try {
      if (!this.stepping || this.stepping.key !== key || this.stepping.run.isDone()) {
        this.stepping?.run.free();
        this.stepping = null;
        this.stepStatus.textContent = 'Opening a socket per server through the relay…';
        const run = await this.wasm.LiveRun.open(this.relayUrl(), scenario.toLowerCase(), scenario, mode, knobs);
        this.stepping = { run, key, traceLen: 0 };
        this.planView.invalidate();
        this.showStep(null);
        return;
      }
      this.stepStatus.textContent = 'Stepping: waiting for the shards…';
      const did = await this.stepping.run.step();
      this.showStep(did);
    } catch (e) {
      this.stepStatus.textContent = `The live step failed: ${e.message || e}`;
      this.stepping?.run.free();
      this.stepping = null;
    } finally {
      this.stepButton.disabled = false;
    }
  }

  /** The stepped live run's state: the plan with its request states, and a status line. */
  showStep(did) {
    const st = this.stepping;
    const snap = st.run.snapshot(st.traceLen);
    const passed = snap.step > 0 ? transitionsIn(snap.trace, 0, Infinity) : null;
    st.traceLen = snap.trace_len;
    this.planView.update(snap, passed);
    const what = did ? ` (${did})` : '';
    this.stepStatus.textContent = `live step ${snap.step}${what} · ${(snap.time_ns / 1e6).toFixed(3)} ms · ${snap.phase} — ${snap.narration}`;
    if (snap.phase === 'finished' || snap.phase === 'failed') {
      this.ours.textContent = snap.error ? `The live run failed: ${snap.error}` : st.run.explainText();
      this.oursHead.textContent = `pgasync (live, stepped): ${(snap.time_ns / 1e6).toFixed(3)} ms with your pauses`;
    }
  }

  async run() {
    const { scenario, mode, knobs, plan } = this.current();
    const db = scenario.toLowerCase();
    this.button.disabled = true;
    this.ours.textContent = 'running on the live shards…';
    this.theirs.textContent = '';
    this.wire.replaceChildren();
    try {
      const r = await this.wasm.runLive(this.relayUrl(), db, scenario, mode, knobs);
      this.oursHead.textContent = `pgasync (live, ${mode}): ${r.execution_ms.toFixed(3)} ms`;
      this.ours.textContent = `${r.rows.length} row(s): ${r.rows.slice(0, 3).map((x) => x.join(', ')).join(' | ')}\n\n${r.explain_text}`;
      this.showWire(r.trace);
      this.showTimeline(r, plan);
    } catch (e) {
      this.ours.textContent = `The live run failed: ${e.message || e}`;
    }
    await this.postgresSays(scenario, db, knobs);
    this.button.disabled = false;
  }

  async postgresSays(scenario, db, knobs) {
    let sql = null;
    try {
      sql = this.wasm.coordinatorQuery(scenario, knobs);
    } catch (e) {
      this.theirs.textContent = `${e.message || e}`;
      return;
    }
    if (!sql) {
      this.theirsHead.textContent = 'PostgreSQL says';
      this.theirs.textContent = `No coordinator query for ${scenario} yet: its plan needs partitioned tables on the coordinator (the SQL front end).`;
      return;
    }
    if (!this.targets.includes('coordinator')) {
      this.theirs.textContent = 'The relay has no "coordinator" target.';
      return;
    }
    this.theirs.textContent = `running ${sql} on the coordinator…`;
    try {
      const text = await this.wasm.postgresExplain(this.relayUrl(), db, sql);
      const ms = executionMs(text);
      this.theirsHead.textContent = `PostgreSQL says${ms === null ? '' : `: ${ms.toFixed(3)} ms`}`;
      this.theirs.textContent = `${sql}\n\n${text}`;
    } catch (e) {
      this.theirs.textContent = `PostgreSQL's run failed: ${e.message || e}`;
    }
  }

  /**
   * The live run on the same timeline as the simulated one (connections, requests,
   * rows), in real times: the trace is the executor's, only the clock was real.
   */
  showTimeline(r, plan) {
    const totalNs = Math.max(1, Math.round(r.total_ms * 1e6));
    // The live clock is the page's performance.now(): times from the run's start.
    const t0 = r.trace.length ? r.trace[0].time_ns : 0;
    const trace = r.trace.map((e) => ({ ...e, time_ns: e.time_ns - t0 }));
    const rec = { trace, totalNs, complete: true, recordedNs: totalNs, connections: r.connections };
    this.timelineHead.textContent = `Timeline of the live run (real times, ${r.total_ms.toFixed(3)} ms with the COMMITs)`;
    this.timeline.build(rec, plan);
    this.timeline.update(totalNs);
    this.timelineBox.querySelector('svg')?.setAttribute('data-testid', 'live-timeline-svg');
  }

  showWire(trace) {
    const lines = wireLines(trace).slice(0, 400);
    this.wire.replaceChildren(...lines.map((l) => el('li', { class: `wire-${l.dir}` },
      `${(l.t / 1e6).toFixed(3)} ms  c${l.conn ?? '-'}  ${l.text}`)));
  }
}
