// Workshop features of the page (issue 10), apart from main.js: the lesson player, the
// "run to" breakpoints and the narration history. main.js hands over a small API
// (`installWorkshop`) and calls `update(snap)` after each render; everything here goes
// through the page's own paths: a lesson's run is set through the normal config/URL
// state (`applyConfig`, so the rest of the page shows that run), seeks through the
// page's seek, long model work through its sliced runner (the page never blocks).
//
// * Lessons: listed in web/lessons/index.json (the one list), each file parsed by the
//   model (`wasm.parseLesson`). Opening one applies its scenario, mode and knobs at
//   step 0 and puts `#lesson=ID` in the URL, so a reload keeps it open. A hidden run of
//   the lesson (`wasm.LessonRun`, in slices) gives every question's answer and the
//   steps at which each note's event happens; the questions are all offered at the
//   start (predict before running to the end), each revealed right or wrong with its
//   explanation when answered. A knob walk-through switches its knob on against pg15
//   (the behaviour checkboxes and the differences panel follow, as for a click there)
//   and draws pg15 and the knob's run with the compare view's plot.
// * Run to: the next step with an event of a chosen kind (`session.runTo`), key `n`.
// * History: every step's narration so far, in full; a click seeks there.

import { KNOB_FIELDS, DEFAULT_CONFIG, cloneConfig, configToQuery, knobsJson, inSlices, nextSlice, copyTrace } from './state.js';
import { LessonPanel } from './render/lesson.js';
import { NarrationHistory } from './render/history.js';
import { h, fmtInt } from './render/util.js';

const INDEX = 'lessons/index.json';
const NO_TRACE = 0xffffffff;
const STEP_SLICE = 256;
/** While running, the history is redrawn at most this often (ms). */
const HISTORY_MS = 250;

export function installWorkshop(api) {
  const w = new Workshop(api);
  w.install();
  return w;
}

/** The config a lesson names: its scenario and mode, its knobs over the scenario's defaults. */
export function lessonConfig(l) {
  const c = cloneConfig(DEFAULT_CONFIG);
  for (const k of Object.keys(c.fields)) c.fields[k] = '';
  c.scenario = l.scenario;
  c.mode = l.async_mode ? 'async' : 'sync';
  for (const [k, v] of l.knobs) {
    const f = KNOB_FIELDS.find((x) => x.knob === k || x.url === k);
    if (f) c.fields[f.url] = v;
    else if (k === 'sharing') c.sharing = v;
    else if (k === 'behaviour') c.behaviour = v;
    else c.switches[k] = v;
  }
  c.step = 0;
  return c;
}

/** A config without its step: two runs with the same key are the same run. */
function runKey(c) {
  return configToQuery({ ...c, step: 0 });
}

function message(e) {
  return e instanceof Error ? e.message : String(e);
}

class Workshop {
  /**
   * `api`: {wasm, session(), recording(), config(), applyConfig(c) → Promise<bool>,
   * seek(step), runInFrames(work, label, then), showError(msg), running()}.
   */
  constructor(api) {
    this.api = api;
    this.lessons = []; // [{id, file, text, lesson}] in index order
    this.open = null; // the lesson on screen: {entry, key, outcome, answers: {i: choice}, walk}
    this.noteRuns = new Map(); // run key → {steps, status} of the notes in that run
    this.sessionSeen = null;
    this.historyAt = -Infinity;
    this.historyOn = false;
  }

  install() {
    // A new size (the lesson full screen, A+, the window): the walk-through's plot is
    // laid out again, not stretched.
    let pending = 0;
    window.addEventListener('resize', () => {
      cancelAnimationFrame(pending);
      pending = requestAnimationFrame(() => this.panel?.redrawWalk());
    });
    this.buildControls();
    this.buildDock();
    this.wireKeys();
    // The run already on screen (main.js renders before installing us).
    const s = this.api.session();
    if (s) this.update(s.snapshot(NO_TRACE));
    this.loadLessons().then(() => this.fromHash());
  }

  // ---- DOM: the controls go beside the page's own; the dock after the grid ----
  buildControls() {
    const scen = document.querySelector('label.scen');
    this.lessonSelect = h('select', { id: 'lesson-select', 'data-testid': 'lesson-select', title: 'workshop lessons: each sets its run and walks through it' }, h('option', { value: '' }, '—'));
    this.lessonSelect.addEventListener('change', () => {
      const id = this.lessonSelect.value;
      if (id) this.openLesson(id);
      else this.closeLesson();
      this.lessonSelect.blur();
    });
    scen.after(h('label', { class: 'lesson-pick' }, 'lesson ', this.lessonSelect));

    this.kindSelect = h('select', { id: 'run-to-kind', 'data-testid': 'run-to-kind', title: 'the kind of event to run to' });
    const go = h('button', { type: 'button', id: 'b-run-to', 'data-testid': 'run-to', title: 'run to the next step with an event of this kind (n)' }, 'Run to ▸');
    go.addEventListener('click', () => {
      this.runTo();
      go.blur();
    });
    this.runToMsg = h('span', { class: 'run-to-msg', 'data-testid': 'run-to-msg', 'aria-live': 'polite' });
    this.historyButton = h('button', { type: 'button', id: 'b-history', 'data-testid': 'history-toggle', title: 'every step\'s narration so far; click one to go there' }, 'History');
    this.historyButton.addEventListener('click', () => {
      this.toggleHistory();
      this.historyButton.blur();
    });
    document.getElementById('b-row').after(h('span', { class: 'run-to' }, this.kindSelect, go), this.historyButton);
    document.querySelector('.bar3').append(this.runToMsg);
    const keys = document.querySelector('.keys');
    if (keys) keys.append(' · ', h('kbd', {}, 'n'), ' run to');
    this.fillKinds([]);
  }

  buildDock() {
    this.lessonBox = h('section', { class: 'panel', id: 'p-lesson', 'data-testid': 'lesson', hidden: true });
    const histBody = h('div', { class: 'body scroll history', 'data-testid': 'history-body' });
    this.historyBox = h(
      'section',
      { class: 'panel', id: 'p-history', 'data-testid': 'history', hidden: true },
      h('h2', {}, 'Narration history ', h('span', { class: 'hint' }, 'every step so far, in full · click to go there')),
      histBody,
    );
    this.dock = h('aside', { class: 'dock', id: 'p-dock', 'data-testid': 'dock', hidden: true }, this.lessonBox, this.historyBox);
    document.querySelector('main.grid').after(this.dock);
    this.history = new NarrationHistory(histBody, (k) => this.api.seek(k));
    this.panel = new LessonPanel(this.lessonBox, {
      close: () => this.closeLesson(),
      seek: (k) => this.api.seek(k),
      answer: (i, choice) => this.answer(i, choice),
      walk: (knob) => this.walk(knob),
      unwalk: () => this.unwalk(),
      resetAnswers: () => this.resetAnswers(),
    });
  }

  /** Shows or hides the dock (a lesson, the history); the grid is laid out again. */
  layoutDock() {
    const show = !this.lessonBox.hidden || !this.historyBox.hidden;
    if (this.dock.hidden === !show) return;
    this.dock.hidden = !show;
    document.body.classList.toggle('dock-open', show);
    // main.js lays out the timeline and plan again on a resize.
    window.dispatchEvent(new Event('resize'));
  }

  toggleHistory(on = this.historyBox.hidden) {
    this.historyOn = on;
    this.historyBox.hidden = !on;
    this.historyButton.classList.toggle('on', on);
    this.layoutDock();
    if (on) this.updateHistory(true);
  }

  // ---- run to ----
  /** The breakpoint kinds, "wire" once per connection of the run on screen. */
  fillKinds(connections) {
    const was = this.kindSelect.value;
    const opts = [];
    for (const k of this.api.wasm.breakpointKinds()) {
      if (k.id === 'wire') {
        opts.push(h('option', { value: 'wire', title: k.postgres }, 'wire message (any connection)'));
        connections.forEach((c, i) => opts.push(h('option', { value: `wire:${i}`, title: k.postgres }, `wire message on ${c}`)));
      } else opts.push(h('option', { value: k.id, title: k.postgres }, k.label));
    }
    if (this.open) opts.unshift(h('option', { value: 'note', title: 'the next step at which one of the lesson\'s notes is current' }, 'next note'));
    this.kindSelect.replaceChildren(...opts);
    if ([...this.kindSelect.options].some((o) => o.value === was)) this.kindSelect.value = was;
    this.connections = connections.join(',');
  }

  /** The message says where the last Run to stopped: gone once the run on screen moves. */
  clearRunToMsg() {
    this.pendingRunTo = null;
    this.runToMsg.textContent = '';
    this.runToMsg.dataset.result = '';
    this.runToAt = null;
  }

  setRunToMsg(result, kind, text, session) {
    this.runToMsg.dataset.result = result;
    this.runToMsg.dataset.kind = kind;
    this.runToMsg.textContent = text;
    this.runToAt = { session, step: session.step() };
  }

  /** The next step after `step` at which a note of the open lesson is current, and the note. */
  nextNote(step) {
    const run = this.open && this.noteRuns.get(runKey(this.api.config()));
    if (!run?.steps) return null;
    let best = null;
    run.steps.forEach((steps, i) => {
      const k = steps.find((x) => x > step);
      if (k !== undefined && (!best || k < best.step)) best = { step: k, note: i };
    });
    return best;
  }

  runTo() {
    const s = this.api.session();
    if (!s) return;
    const kind = this.kindSelect.value;
    const label = this.kindSelect.selectedOptions[0]?.textContent ?? kind;
    let result = 'more';
    this.clearRunToMsg();
    if (kind === 'note') {
      const next = this.nextNote(s.step());
      if (!next) {
        const known = this.open && this.noteRuns.get(runKey(this.api.config()))?.steps;
        this.setRunToMsg('end', kind, known ? 'no more notes in this run' : 'the notes\' steps are not known yet', s);
        return;
      }
      // The message once the page's seek has arrived there (`update`).
      this.pendingRunTo = { step: next.step, kind, text: `note at step ${fmtInt(next.step)}` };
      this.api.seek(next.step);
      return;
    }
    this.api.runInFrames(
      () => {
        result = s.runTo(kind, STEP_SLICE);
        return result !== 'more';
      },
      (x) => `Running to the next ${label}: step ${fmtInt(x.step())}…`,
      () => this.setRunToMsg(result, kind, result === 'found' ? `${label} at step ${fmtInt(s.step())}` : `no more ${label}: the run ended`, s),
    );
  }

  // ---- keys: n runs to the next event of the chosen kind (not while typing) ----
  wireKeys() {
    window.addEventListener('keydown', (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey || e.key !== 'n') return;
      const t = e.target;
      const typing = t instanceof HTMLElement && (t.matches('input:not([type=range]):not([type=checkbox]), select, textarea') || t.isContentEditable);
      if (typing) return;
      e.preventDefault();
      this.runTo();
    });
  }

  // ---- after every render (main.js) ----
  update(snap, { full = true } = {}) {
    const session = this.api.session();
    if (!session) return;
    if (session !== this.sessionSeen) {
      this.sessionSeen = session;
      this.history.reset();
      this.historyAt = -Infinity;
      const conns = snap.connections.map((c) => c.server);
      if (conns.join(',') !== this.connections) this.fillKinds(conns);
      if (this.open) this.notesForRun();
    }
    if (this.open) {
      this.showNotes(snap.step);
      const ended = snap.phase === 'finished' || !!session.isDone();
      if (ended !== this.revealedAt) {
        this.revealedAt = ended;
        this.revealAnswers();
      }
    }
    if (this.pendingRunTo && snap.step === this.pendingRunTo.step) {
      const p = this.pendingRunTo;
      this.pendingRunTo = null;
      this.setRunToMsg('found', p.kind, p.text, session);
    }
    if (this.runToAt && (this.runToAt.session !== session || this.runToAt.step !== snap.step)) this.clearRunToMsg();
    this.updateHistory(full);
  }

  updateHistory(full) {
    if (this.historyBox.hidden) return;
    const now = performance.now();
    if (!full && this.api.running() && now - this.historyAt < HISTORY_MS) return;
    this.historyAt = now;
    const session = this.api.session();
    const rec = this.api.recording();
    const times = rec ? (k) => (k <= rec.totalSteps ? rec.stepTimesNs[k] : null) : null;
    try {
      this.history.update(session, session.step(), times);
    } catch (e) {
      this.api.showError(`narration history: ${message(e)}`);
    }
  }

  // ---- lessons ----
  async loadLessons() {
    let files;
    try {
      const r = await fetch(INDEX);
      if (!r.ok) throw new Error(`${INDEX}: HTTP ${r.status}`);
      files = await r.json();
    } catch (e) {
      this.lessonSelect.replaceChildren(h('option', { value: '' }, '(no lessons)'));
      this.lessonSelect.title = `lessons could not be loaded: ${message(e)}`;
      return;
    }
    const entries = await Promise.all(
      files.map(async (file) => {
        const id = file.replace(/\.txt$/, '');
        try {
          const r = await fetch(`lessons/${file}`);
          if (!r.ok) throw new Error(`HTTP ${r.status}`);
          const text = await r.text();
          return { id, file, text, lesson: this.api.wasm.parseLesson(text) };
        } catch (e) {
          return { id, file, error: message(e) };
        }
      }),
    );
    this.lessons = entries.filter((e) => !e.error);
    this.lessonSelect.replaceChildren(
      h('option', { value: '' }, '—'),
      ...entries.map((e) => h('option', { value: e.id, disabled: !!e.error, title: e.error ?? e.lesson.title }, e.error ? `${e.file}: ${e.error}` : e.lesson.title)),
    );
    document.body.dataset.lessons = String(this.lessons.length);
  }

  /** `#lesson=ID` in the URL: that lesson, on the run the URL describes (a reload). */
  fromHash() {
    const m = /(?:^#|&)lesson=([^&]+)/.exec(location.hash);
    if (m) this.openLesson(decodeURIComponent(m[1]), { apply: false });
  }

  setHash(id) {
    const hash = id ? `#lesson=${encodeURIComponent(id)}` : '';
    history.replaceState(null, '', location.pathname + location.search + hash);
  }

  /**
   * Opens lesson `id`: with `apply`, its run (scenario, mode, knobs) at step 0 through
   * the page's config; then the hidden run that answers the questions.
   */
  async openLesson(id, { apply = true } = {}) {
    const entry = this.lessons.find((e) => e.id === id);
    if (!entry) {
      this.api.showError(`no lesson "${id}" (lessons: ${this.lessons.map((e) => e.id).join(', ')})`);
      return;
    }
    this.cancelJobs();
    const config = lessonConfig(entry.lesson);
    this.open = { entry, config, key: runKey(config), outcome: null, answers: {}, walk: null };
    this.noteRuns.clear();
    this.lessonSelect.value = id;
    this.setHash(id);
    this.clearRunToMsg();
    this.fillKinds(this.connections ? this.connections.split(',') : []);
    this.kindSelect.value = 'note';
    this.panel.show(id, entry.lesson);
    this.lessonBox.hidden = false;
    this.historyBox.hidden = false; // the history goes with a lesson
    this.historyButton.classList.add('on');
    this.layoutDock();
    document.body.dataset.lesson = id;
    if (apply) await this.api.applyConfig(config);
    this.lessonOutcome();
    this.notesForRun();
    this.showNotes(this.api.session()?.step() ?? 0);
    this.updateHistory(true);
  }

  closeLesson() {
    this.cancelJobs();
    this.open = null;
    this.clearRunToMsg();
    this.fillKinds(this.connections ? this.connections.split(',') : []);
    this.lessonSelect.value = '';
    this.setHash('');
    this.lessonBox.hidden = true;
    this.lessonBox.replaceChildren();
    this.historyBox.hidden = !this.historyOn;
    this.historyButton.classList.toggle('on', this.historyOn);
    delete document.body.dataset.lesson;
    this.layoutDock();
  }

  cancelJobs() {
    this.gen = (this.gen ?? 0) + 1;
  }

  /** Runs a LessonRun to its end in slices; the outcome, or null if superseded. */
  async runLesson(args, gen) {
    let job;
    try {
      job = new this.api.wasm.LessonRun(...args);
      let out;
      const done = await inSlices(
        () => {
          out = job.advance(STEP_SLICE);
          return out !== undefined;
        },
        { cancelled: () => gen !== this.gen },
      );
      return done ? out : null;
    } finally {
      job?.free();
    }
  }

  /** The lesson's own run: the answers, and the notes' steps in that run. */
  async lessonOutcome() {
    const open = this.open;
    try {
      const out = await this.runLesson([open.entry.text], this.gen);
      if (!out || open !== this.open) return;
      open.outcome = out;
      this.noteRuns.set(open.key, { steps: out.note_steps });
      this.revealAnswers();
      document.body.dataset.lessonReady = open.entry.id;
      this.refreshNotes();
    } catch (e) {
      if (open === this.open) this.noteRuns.set(open.key, { steps: null, status: `The lesson's run failed: ${message(e)}` });
      this.refreshNotes();
    }
  }

  /** The notes' steps in the run on screen (the lesson's, or one the student changed). */
  async notesForRun() {
    const open = this.open;
    const c = this.api.config();
    const key = runKey(c);
    if (!open || this.noteRuns.has(key) || key === open.key) return this.refreshNotes();
    this.noteRuns.set(key, { steps: null, status: 'finding where each note happens in this run…' });
    this.refreshNotes();
    try {
      const out = await this.runLesson([open.entry.text, c.scenario, c.mode, knobsJson(c)], this.gen);
      if (!out || open !== this.open) return;
      this.noteRuns.set(key, { steps: out.note_steps, status: 'This run differs from the lesson\'s: the notes follow the run on screen, the answers the lesson\'s run.' });
    } catch (e) {
      this.noteRuns.set(key, { steps: null, status: `Notes unavailable for this run: ${message(e)}` });
    }
    this.refreshNotes();
  }

  refreshNotes() {
    const s = this.api.session();
    if (this.open && s) this.showNotes(s.step());
  }

  showNotes(step) {
    const run = this.noteRuns.get(runKey(this.api.config()));
    const status = run?.status ?? (run?.steps ? '' : 'finding where each note happens…');
    this.panel.showNotes(step, run?.steps ?? null, status);
  }

  /**
   * Question `i` answered: the prediction is kept; the answer shows once the run on
   * screen, the lesson's own, has reached its end ("Predict, then step to see").
   */
  answer(i, choice) {
    const open = this.open;
    if (!open || open.answers[i] !== undefined) return;
    open.answers[i] = choice;
    this.revealAnswers();
  }

  /** Each prediction: revealed if the lesson's run on screen has ended, else kept. */
  revealAnswers() {
    const open = this.open;
    if (!open) return;
    const s = this.api.session();
    const c = this.api.config();
    // The lesson's own run, ended: its config (a URL may spell the same knobs otherwise,
    // e.g. the default fetch size written out after a reload: then the same scenario and
    // mode and as many steps as the lesson's run).
    const same = runKey(c) === open.key || (c.scenario === open.config.scenario && c.mode === open.config.mode && open.outcome != null && s?.step() === open.outcome.total_steps);
    const ended = !!s?.isDone() && same;
    for (const [k, choice] of Object.entries(open.answers)) {
      const i = Number(k);
      let answer = ended ? open.outcome?.answers[i] ?? null : null;
      if (ended && answer == null) {
        try {
          answer = s.lessonAnswers(open.entry.text)[i];
        } catch {
          answer = null;
        }
      }
      this.panel.showAnswer(i, choice, answer, ended);
    }
  }

  resetAnswers() {
    if (!this.open) return;
    this.open.answers = {};
    this.panel.clearAnswers();
  }

  // ---- knob walk-throughs ----
  async walk(knob) {
    const open = this.open;
    if (!open) return;
    open.walk = knob;
    this.panel.showWalk(knob);
    const c = cloneConfig(open.config);
    c.behaviour = '';
    c.switches = { [knob]: '1' };
    this.panel.showWalkResult(knob, 'running pg15 and the knob\'s run…');
    await this.api.applyConfig(c);
    try {
      const r = await this.walkRuns(open.config, c);
      if (r && open === this.open && open.walk === knob) this.panel.showWalkResult(knob, r);
    } catch (e) {
      if (open === this.open) this.panel.showWalkResult(knob, `cannot compare: ${message(e)}`);
    }
  }

  async unwalk() {
    const open = this.open;
    if (!open) return;
    open.walk = null;
    this.panel.showWalk(null);
    await this.api.applyConfig(cloneConfig(open.config));
  }

  /** pg15 (config `a`) and the knob's run (`b`) to their ends, in slices: times and wire traces. */
  async walkRuns(a, b) {
    const gen = this.gen;
    const { wasm } = this.api;
    const runs = [];
    try {
      for (const c of [a, b]) {
        const s = new wasm.Session(c.scenario, c.mode, knobsJson(c));
        runs.push(s);
        const done = await inSlices(() => s.runSome(STEP_SLICE), { cancelled: () => gen !== this.gen });
        if (!done) return null;
        await nextSlice();
      }
      const wire = (s) => {
        const n = s.snapshot(NO_TRACE).trace_len;
        const out = [];
        for (let i = 0; i < n; i += 16384) for (const e of copyTrace(s, i, Math.min(n, i + 16384), [])) if (e.kind === 'Send' || e.kind === 'Response') out.push(e);
        return out;
      };
      const [sa, sb] = runs;
      const last = sa.snapshot(NO_TRACE);
      return {
        baseNs: last.time_ns,
        withNs: sb.snapshot(NO_TRACE).time_ns,
        baseTrace: wire(sa),
        withTrace: wire(sb),
        connections: last.connections.map((x) => x.server),
      };
    } finally {
      for (const s of runs) s.free();
    }
  }
}
