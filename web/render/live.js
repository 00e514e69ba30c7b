// Live mode: the scenario on screen, run by the same wasm executor against real
// PostgreSQL shards through the relay (`make demo` starts shards, a coordinator and
// the relay), and beside it what a real PostgreSQL coordinator with postgres_fdw says
// for the same query (EXPLAIN ANALYZE VERBOSE). Without a relay the panel says why
// live mode is off. The drawer holds the live counterparts of the simulated panels:
// plan states (Step live), EXPLAIN, timeline, wire inspector and compare, each
// heading naming the live run it shows, so the two kinds of run never blur.
//
// A scenario file from the SQL editor runs live too: the relay's `POST /sql/load`
// parses it and loads its shard tables (and the coordinator's foreign tables) into a
// database of its own on the demo's clusters, answering with that database's name;
// the run then goes through the same /shard/NAME sockets (runLiveSql, LiveRun.openSql).

import { transitionsIn } from './traceview.js';
import { Timeline } from './timeline.js';
import { PlanView } from './plan.js';
import { WireInspector } from './wire.js';
import { fromStart, measurePlan, liveComparison, renderLiveCompare } from './livecompare.js';

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

/** How a heading names a live run: the button that made it, what ran, and when. */
function runLabel(how, { text, scenario, mode, behaviour }) {
  return `${how}: ${text ? 'the SQL file' : scenario} ${mode} ${behaviour}, ${new Date().toLocaleTimeString()}`;
}

/** An Error from /sql/load's JSON answer, with the file's `line` and `column` (0: no place). */
function loadError(status, body) {
  const e = new Error(body?.error ?? `the relay answered ${status}`);
  e.line = Number(body?.line) || 0;
  e.column = Number(body?.column) || 0;
  return e;
}

/** A section heading: what the panel is, and (a tag) which live run it shows. */
function heading(title, testid) {
  const src = el('span', { class: 'live-src', 'data-testid': testid });
  return { h: el('h3', {}, `${title} `, src), src };
}

export class LivePanel {
  /**
   * @param root the panel's element
   * @param wasm the wasm module (runLive, LiveRun, postgresExplain, coordinatorQuery)
   * @param current () => {sql, text, scenario, mode, knobs, behaviour, improvedKnobs, plan} of the
   *   session on screen (the live run has the same plan, so its timeline names the same
   *   nodes; `improvedKnobs` are the same knobs in behaviour improved, for the compare;
   *   `text` is the scenario file's when `sql`)
   * @param ready () => Promise<bool>: loads the module with the live runs (the SQL front
   *   end's: the page's first module leaves them out, issue 20), false when it cannot
   */
  constructor(root, wasm, current, ready = async () => true) {
    this.root = root;
    this.wasm = wasm;
    this.current = current;
    this.ready = ready;
    this.targets = [];
    this.busy = false;
    this.stepping = null; // {run: LiveRun, key, label, trace, names} while a live run is being stepped
    this.status = el('p', { class: 'live-status', 'data-testid': 'live-status' }, 'Looking for the relay…');
    this.button = this.action('Run live', 'live-run', () => this.run());
    this.stepButton = this.action('Step live ▶', 'live-step', () => this.stepLive());
    this.compareButton = this.action('Compare live', 'live-compare-run', () => this.compareLive());
    root.replaceChildren(
      el('h2', {}, 'Live shards'),
      this.status,
      el('div', { class: 'live-actions' }, this.button, ' ', this.stepButton, ' ', this.compareButton),
      el('p', { class: 'live-note live-which', 'data-testid': 'live-which' },
        'Everything in this drawer ran on the real shards through the relay, in real times; the panels behind it still show the simulated run. Each heading says which live run it shows.'),
      el('p', { class: 'live-note' },
        'It runs the scenario on screen: a built-in one, or the SQL editor’s file, whose shard tables the relay loads into a database of its own first (tick live beside the editor’s Run to do both at once). Run live goes from start to end at the shards’ pace. Step live takes the same steps as the simulated run, one async request transition or one wait at a time: a wait simply lasts until a socket has input (the page stays responsive meanwhile), so the times you see include your pauses. Compare live runs the query sync and async, in this behaviour and in improved, and shows the measured times.'),
      this.buildStepSection(),
      this.buildExplainSection(),
      this.buildTimelineSection(),
      this.buildWireSection(),
      this.buildCompareSection(),
    );
  }

  action(text, testid, onClick) {
    const b = el('button', { type: 'button', disabled: true, 'data-testid': testid }, text);
    b.addEventListener('click', onClick);
    return b;
  }

  buildStepSection() {
    const { h, src } = heading('Plan and request states', 'live-plan-src');
    this.planSrc = src;
    src.textContent = '— Step live: not started';
    this.stepStatus = el('p', { class: 'live-step-status', 'data-testid': 'live-step-status' }, '');
    this.planBox = el('div', { class: 'live-plan', 'data-testid': 'live-plan' });
    this.planView = new PlanView(this.planBox);
    return el('section', { class: 'live-section' }, h, this.stepStatus, this.planBox);
  }

  buildExplainSection() {
    this.ours = el('pre', { class: 'live-explain', 'data-testid': 'live-ours' });
    this.theirs = el('pre', { class: 'live-explain', 'data-testid': 'postgres-says' });
    this.oursHead = el('h3', {}, 'pgasync (live): no run yet');
    this.theirsHead = el('h3', {}, 'PostgreSQL says');
    return el('div', { class: 'live-cols' },
      el('div', {}, this.oursHead, this.ours),
      el('div', {}, this.theirsHead, this.theirs));
  }

  buildTimelineSection() {
    const { h, src } = heading('Timeline', 'live-timeline-src');
    this.timelineSrc = src;
    src.textContent = '— no live run yet (Run live draws it)';
    this.timelineBox = el('div', { class: 'live-timeline', 'data-testid': 'live-timeline' });
    this.timeline = new Timeline(this.timelineBox, () => {});
    return el('section', { class: 'live-section' }, h, this.timelineBox);
  }

  buildWireSection() {
    const { h, src } = heading('Wire inspector', 'live-wire-src');
    this.wireSrc = src;
    src.textContent = '— no live run yet (Run live or Step live fills it)';
    const tabs = el('div', { class: 'tabs', 'data-testid': 'live-wire-tabs' });
    const list = el('div', { class: 'scroll wire live-wire', 'data-testid': 'live-wire' });
    this.wire = new WireInspector(tabs, list, { testid: 'live-wire' });
    return el('section', { class: 'live-section live-wire-box' }, h, tabs, list);
  }

  buildCompareSection() {
    const { h, src } = heading('Compare live', 'live-compare-src');
    this.compareSrc = src;
    src.textContent = '— not measured yet (Compare live measures it)';
    this.compareBox = el('section', { class: 'live-section live-compare', 'data-testid': 'live-compare' }, h,
      el('div', { class: 'live-compare-head compare-head', 'data-testid': 'live-compare-head' }),
      el('div', { class: 'live-compare-plot' }));
    return this.compareBox;
  }

  relayUrl() {
    return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}`;
  }

  async refreshTargets() {
    try {
      // Relative: the relay answers `targets` itself; a plain file server (the kit,
      // `pgasync serve`) serves web/targets, which says there is no relay (so opening
      // Live… logs no 404).
      const r = await fetch('targets', { cache: 'no-store' });
      if (!r.ok) throw new Error(`targets answered ${r.status}`);
      const json = await r.json();
      if (json && json.relay === false) {
        this.off('no relay here: the page is served by a plain file server, without live shards. Run `make demo` with PostgreSQL installed to get them.');
        return;
      }
      this.targets = targetNames(json);
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
    this.setBusy(this.busy);
  }

  off(why) {
    this.status.textContent = `Live mode is off: ${why}`;
    this.targets = [];
    this.setBusy(this.busy);
  }

  /** One live action at a time: concurrent runs would share the shards and skew the times. */
  setBusy(busy) {
    this.busy = busy;
    const off = busy || this.targets.length === 0;
    for (const b of [this.button, this.stepButton, this.compareButton]) b.disabled = off;
  }

  /**
   * Loads a scenario file into the live shards (the relay parses it; nothing of the
   * text reaches PostgreSQL as written): resolves to `{database, servers, rows,
   * coordinator_query, cached}`, or throws an Error with the file's `line`/`column`.
   */
  async loadFile(text) {
    if (this.targets.length === 0) await this.refreshTargets();
    if (this.targets.length === 0) throw loadError(0, { error: this.status.textContent });
    let r;
    try {
      r = await fetch('/sql/load', { method: 'POST', body: text, cache: 'no-store', headers: { 'content-type': 'text/plain; charset=utf-8' } });
    } catch (e) {
      throw loadError(0, { error: `the relay did not answer (${e.message || e})` });
    }
    const body = await r.json().catch(() => null);
    if (!r.ok) throw loadError(r.status, body);
    return body;
  }

  /** The database a run of `cur` opens: the scenario's, or the one its file was loaded into. */
  async database(cur) {
    if (!cur.text) return { database: cur.scenario.toLowerCase(), coordinatorQuery: undefined };
    const loaded = await this.loadFile(cur.text);
    return { database: loaded.database, coordinatorQuery: loaded.coordinator_query ?? null };
  }

  /** One live run to the end, of the built-in scenario or of the file on screen. */
  liveRun(db, cur, mode, knobs) {
    return cur.text
      ? this.wasm.runLiveSql(this.relayUrl(), db, cur.text, mode, knobs, JSON.stringify(this.targets))
      : this.wasm.runLive(this.relayUrl(), db, cur.scenario, mode, knobs, JSON.stringify(this.targets));
  }

  async exclusively(work) {
    if (this.busy) return;
    this.setBusy(true);
    try {
      if (await this.ready()) await work();
    } finally {
      this.setBusy(false);
    }
  }

  stepLive() {
    return this.exclusively(() => this.stepOnce());
  }

  /**
   * One step of a live run of the scenario on screen (opened on the first click, and
   * again when the scenario, mode or knobs change or the run has ended).
   */
  async stepOnce() {
    const cur = this.current();
    const key = `${cur.scenario}|${cur.mode}|${cur.knobs}|${cur.text ?? ''}`;
    try {
      if (!this.stepping || this.stepping.key !== key || this.stepping.run.isDone()) {
        this.stepping?.run.free();
        this.stepping = null;
        this.stepStatus.textContent = cur.text ? 'Loading the file into the live shards, then opening a socket per server…' : 'Opening a socket per server through the relay…';
        const { database } = await this.database(cur);
        const run = cur.text
          ? await this.wasm.LiveRun.openSql(this.relayUrl(), database, cur.text, cur.mode, cur.knobs, JSON.stringify(this.targets))
          : await this.wasm.LiveRun.open(this.relayUrl(), database, cur.scenario, cur.mode, cur.knobs, JSON.stringify(this.targets));
        this.stepping = { run, key, label: runLabel('Step live', cur), trace: [], names: [] };
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
    }
  }

  /** The stepped live run's state: the plan with its request states, a status line, its wire messages. */
  showStep(did) {
    const st = this.stepping;
    const snap = st.run.snapshot(st.trace.length);
    const passed = snap.step > 0 ? transitionsIn(snap.trace, 0, Infinity) : null;
    st.trace.push(...snap.trace);
    st.names = snap.connections.map((c) => c.server);
    this.planView.update(snap, passed);
    this.planSrc.textContent = `— ${st.label}, step ${snap.step}`;
    const what = did ? ` (${did})` : '';
    this.stepStatus.textContent = `live step ${snap.step}${what} · ${(snap.time_ns / 1e6).toFixed(3)} ms · ${snap.phase} — ${snap.narration}`;
    this.showWire(st.trace, st.names, `${st.label}, step ${snap.step} (times from its start, with your pauses)`);
    if (snap.phase === 'finished' || snap.phase === 'failed') {
      this.ours.textContent = snap.error ? `The live run failed: ${snap.error}` : st.run.explainText();
      this.oursHead.textContent = `pgasync (${st.label}): ${(snap.time_ns / 1e6).toFixed(3)} ms with your pauses`;
    }
  }

  run() {
    return this.exclusively(() => this.runOnce());
  }

  async runOnce() {
    const cur = this.current();
    const label = runLabel('Run live', cur);
    this.ours.textContent = cur.text ? 'loading the file into the live shards…' : 'running on the live shards…';
    this.theirs.textContent = '';
    delete this.theirs.dataset.sql;
    delete this.theirs.dataset.database;
    let db;
    let coordinatorQuery;
    try {
      ({ database: db, coordinatorQuery } = await this.database(cur));
    } catch (e) {
      const where = e.line > 0 ? `line ${e.line}, column ${e.column}: ` : '';
      this.ours.textContent = `The file could not be loaded into the live shards: ${where}${e.message || e}`;
      this.oursHead.textContent = `pgasync (${label}): not run`;
      return;
    }
    this.ours.textContent = 'running on the live shards…';
    try {
      const r = await this.liveRun(db, cur, cur.mode, cur.knobs);
      this.oursHead.textContent = `pgasync (${label}): ${r.execution_ms.toFixed(3)} ms`;
      this.ours.textContent = `${r.rows.length} row(s): ${r.rows.slice(0, 3).map((x) => x.join(', ')).join(' | ')}\n\n${r.explain_text}`;
      this.showWire(r.trace, r.connections, `${label} (real times from its start)`);
      this.showTimeline(r, cur.plan, label);
    } catch (e) {
      this.ours.textContent = `The live run failed: ${e.message || e}`;
    }
    await this.postgresSays(cur, db, coordinatorQuery);
  }

  /** `coordinatorQuery`: a file's (from /sql/load, null when there is none), else computed for the scenario. */
  async postgresSays(cur, db, coordinatorQuery) {
    let sql = coordinatorQuery ?? null;
    if (coordinatorQuery === undefined) {
      try {
        sql = this.wasm.coordinatorQuery(cur.scenario, cur.knobs);
      } catch (e) {
        this.theirs.textContent = `${e.message || e}`;
        return;
      }
    }
    if (!sql) {
      this.theirsHead.textContent = 'PostgreSQL says';
      this.theirs.textContent = cur.text
        ? 'No coordinator query for this file yet: the sandbox writes one only for sum() over foreign tables (an Append of ForeignScans); other plans need the file\'s partitioned tables on the coordinator.'
        : `No coordinator query for ${cur.scenario} yet: its plan needs partitioned tables on the coordinator (the SQL front end).`;
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
      this.theirs.dataset.sql = sql;
      this.theirs.dataset.database = db;
    } catch (e) {
      this.theirs.textContent = `PostgreSQL's run failed: ${e.message || e}`;
    }
  }

  /**
   * The live run on the same timeline as the simulated one (connections, requests,
   * rows), in real times: the trace is the executor's, only the clock was real.
   */
  showTimeline(r, plan, label) {
    const totalNs = Math.max(1, Math.round(r.total_ms * 1e6));
    const rec = { trace: fromStart(r.trace), totalNs, complete: true, recordedNs: totalNs, connections: r.connections };
    this.timelineSrc.textContent = `— ${label} (real times, ${r.total_ms.toFixed(3)} ms with the COMMITs)`;
    this.timeline.build(rec, plan);
    this.timeline.update(totalNs);
    this.timelineBox.querySelector('svg')?.setAttribute('data-testid', 'live-timeline-svg');
  }

  /** The wire messages of a live run (the latest, run or stepped), a tab per connection as in the simulated inspector. */
  showWire(trace, connections, label) {
    const shifted = fromStart(trace);
    const endNs = shifted.length ? shifted[shifted.length - 1].time_ns : 0;
    this.wire.setRecording({ trace: shifted, connections, complete: true, recordedNs: endNs });
    this.wire.update(shifted.length, true);
    this.wireSrc.textContent = `— ${label}`;
  }

  compareLive() {
    return this.exclusively(() => this.compareOnce());
  }

  /** Sync then async, per behaviour, one after another; then the measured times side by side. */
  async compareOnce() {
    const cur = this.current();
    const plan = measurePlan(cur);
    const head = this.compareBox.querySelector('.live-compare-head');
    this.compareBox.classList.remove('measured');
    this.compareBox.querySelector('.live-compare-plot').replaceChildren();
    this.compareSrc.textContent = '— measuring…';
    const measured = [];
    try {
      const { database } = await this.database(cur);
      for (const [k, m] of plan.entries()) {
        head.textContent = `measuring ${cur.text ? 'the SQL file' : cur.scenario} ${m.behaviour} ${m.mode} on the live shards (${k + 1}/${plan.length})…`;
        const r = await this.liveRun(database, cur, m.mode, m.knobs);
        measured.push({ behaviour: m.behaviour, mode: m.mode, r });
      }
    } catch (e) {
      head.textContent = `Compare live failed (${measured.length} of ${plan.length} runs done): ${e.message || e}`;
      this.compareSrc.textContent = '— failed';
      return;
    }
    const cmp = liveComparison(cur.scenario, measured);
    this.compareSrc.textContent = `— measured: ${cur.scenario}, ${cmp.pairs.map((p) => p.behaviour).join(' and ')}, sync and async, at ${cmp.at}`;
    renderLiveCompare(this.compareBox, cmp);
  }
}
