// The lesson panel (issue 10): a workshop lesson (web/lessons/*.txt, parsed by the model,
// crate/demo/lesson.rs) as the student meets it: the introduction, the notes whose event
// happens in the current step (and those met before, faded), the predict-then-reveal
// questions, and the knob walk-throughs. Rendering only: web/workshop.js decides what
// to show (which notes, which answers) from the model's LessonRun outcome.

import { h, keepInView } from './util.js';
import { renderComparePlot, SYNC_COLOR, ASYNC_COLOR } from './compare.js';

/** Text with `backticked` names as code elements (function and file names in notes). */
export function richText(text) {
  const out = [];
  String(text)
    .split(/(`[^`\n]+`)/)
    .forEach((part) => {
      if (part.length > 2 && part.startsWith('`') && part.endsWith('`')) out.push(h('code', {}, part.slice(1, -1)));
      else if (part) out.push(part);
    });
  return out;
}

/** Paragraphs (blank-line separated; the lines of one paragraph joined). */
function paragraphs(text, cls) {
  return String(text)
    .split(/\n\s*\n/)
    .filter((p) => p.trim())
    .map((p) => h('p', { class: cls }, richText(p.replace(/\s*\n\s*/g, ' ').trim())));
}

/** What a note is attached to, in words (its `on` from the model). */
export function noteTrigger(on) {
  switch (on.on) {
    case 'step':
      return `step ${on.step}`;
    case 'request': {
      const what = { waiting: 'a request goes Waiting', callbackpending: 'a request goes Callback pending', complete: 'a request goes Complete' }[on.state] ?? `request ${on.state}`;
      const from = { idle: ' (a child\'s first request, ExecAppendAsyncBegin)', complete: ' (a child asked again)' }[on.from] ?? '';
      return what + from;
    }
    case 'wait':
      return 'the Append sleeps on its wait event set';
    case 'notify':
      return 'ExecAsyncNotify runs (a socket fired)';
    case 'append_row':
      return 'a row passes through the Append';
    case 'startup':
      return 'a connection starts up';
    case 'send':
      return `${on.prefix} is sent`;
    case 'queued':
      return 'a statement is queued';
    case 'row':
      return 'a row reaches the top';
    default:
      return on.on;
  }
}

export class LessonPanel {
  /**
   * `panel` the section to fill; `actions` = {close, seek(step), answer(i, choice),
   * walk(knob), unwalk(), resetAnswers()} (workshop.js).
   */
  constructor(panel, actions) {
    this.panel = panel;
    this.actions = actions;
    this.lesson = null;
  }

  /** Draws lesson `l` (from `wasm.parseLesson`), notes and answers not known yet. */
  show(id, l) {
    this.lesson = l;
    this.id = id;
    const close = h('button', { type: 'button', class: 'small', title: 'close the lesson', 'data-testid': 'lesson-close' }, '✕');
    close.addEventListener('click', () => this.actions.close());
    const again = h('button', { type: 'button', class: 'small', title: 'forget the answers given, to predict again', 'data-testid': 'lesson-reset' }, 'answer again');
    again.addEventListener('click', () => this.actions.resetAnswers());
    const mode = l.async_mode ? 'async' : 'sync';
    const knobs = l.knobs.map(([k, v]) => `${k}=${v}`).join(' ');
    this.notesBox = h('div', { class: 'lesson-notes', 'data-testid': 'lesson-notes' });
    this.notesStatus = h('div', { class: 'lesson-status', 'data-testid': 'lesson-notes-status' }, 'finding where each note happens…');
    this.questionsBox = h('div', { class: 'lesson-questions' }, ...l.questions.map((q, i) => this.question(q, i)));
    this.walksBox = h('div', { class: 'lesson-walks' }, ...l.knob_walks.map(([knob, text]) => this.walk(knob, text)));
    this.body = h(
      'div',
      { class: 'body scroll lesson-body' },
      h('div', { class: 'lesson-run', 'data-testid': 'lesson-run' }, `scenario ${l.scenario} · ${mode}${knobs ? ' · ' + knobs : ''}`),
      h('div', { class: 'lesson-intro', 'data-testid': 'lesson-intro' }, ...paragraphs(l.intro)),
      l.questions.length ? h('h3', {}, 'Predict, then step to see ', h('span', { class: 'hint' }, '(pick before the run reaches its end; the answer shows at the end)')) : null,
      this.questionsBox,
      h('h3', {}, 'Notes ', h('span', { class: 'hint' }, 'shown at the step where their event happens')),
      this.notesStatus,
      this.notesBox,
      l.knob_walks.length ? h('h3', {}, 'Knob walk-throughs ', h('span', { class: 'hint' }, 'one knob on, against pg15')) : null,
      this.walksBox,
    );
    this.panel.replaceChildren(h('h2', {}, h('span', { class: 'lesson-title', 'data-testid': 'lesson-title' }, l.title), h('span', { class: 'spacer' }), again, close), this.body);
    this.panel.dataset.lesson = id;
    this.noteEls = [];
    this.lastKey = null;
  }

  question(q, i) {
    const result = h('div', { class: 'q-result', 'data-testid': 'question-result', hidden: true });
    const choices = h(
      'div',
      { class: 'q-choices' },
      ...q.choices.map((c) => {
        const b = h('button', { type: 'button', class: 'q-choice', 'data-testid': 'question-choice', 'data-choice': c }, c);
        b.addEventListener('click', () => this.actions.answer(i, c));
        return b;
      }),
    );
    return h('div', { class: 'question', 'data-testid': 'question', 'data-q': String(i) }, h('div', { class: 'q-ask' }, richText(q.ask)), choices, result);
  }

  /**
   * Question `i` answered `choice`. `ended`: the lesson's run on screen has reached its
   * end, so the answer shows (`answer`, the run's; null: still computing); before that
   * only the prediction does.
   */
  showAnswer(i, choice, answer, ended = true) {
    const box = this.questionsBox.children[i];
    if (!box) return;
    for (const b of box.querySelectorAll('.q-choice')) {
      b.disabled = true;
      b.classList.toggle('picked', b.dataset.choice === choice);
      b.classList.toggle('truth', ended && answer != null && b.dataset.choice === answer);
    }
    const result = box.querySelector('.q-result');
    result.hidden = false;
    result.className = 'q-result';
    delete result.dataset.verdict;
    delete result.dataset.answer;
    if (!ended) {
      result.dataset.predicted = choice;
      result.replaceChildren(`You predicted ${choice}. Step on: the run's answer shows when the lesson's run reaches its end (End ▶▶ goes there).`);
      return;
    }
    if (answer == null) {
      result.replaceChildren('Running the lesson to its end to see…');
      return;
    }
    const right = choice === answer;
    result.dataset.verdict = right ? 'right' : 'wrong';
    result.dataset.answer = answer;
    result.className = `q-result ${right ? 'right' : 'wrong'}`;
    const q = this.lesson.questions[i];
    result.replaceChildren(
      h('b', {}, right ? '✓ Right' : '✗ Not this time'),
      ` — the run says ${answer}${right ? '' : ` (you said ${choice})`}. `,
      ...richText(q.explain),
    );
  }

  /** Every question open again. */
  clearAnswers() {
    for (const box of this.questionsBox.children) {
      for (const b of box.querySelectorAll('.q-choice')) {
        b.disabled = false;
        b.classList.remove('picked', 'truth');
      }
      const r = box.querySelector('.q-result');
      r.hidden = true;
      r.className = 'q-result';
      delete r.dataset.verdict;
      delete r.dataset.predicted;
      r.replaceChildren();
    }
  }

  walk(knob, text) {
    const on = h('button', { type: 'button', class: 'walk-on', 'data-testid': 'knob-walk-on', title: `run the lesson's query with ${knob} on (everything else PostgreSQL 15)` }, `Switch ${knob} on`);
    on.addEventListener('click', () => this.actions.walk(knob));
    const off = h('button', { type: 'button', class: 'walk-off small', 'data-testid': 'knob-walk-off', hidden: true, title: 'back to the lesson\'s own run' }, 'back to pg15');
    off.addEventListener('click', () => this.actions.unwalk());
    const head = h('div', { class: 'walk-head', 'data-testid': 'knob-walk-head' });
    const plot = h('div', { class: 'walk-plot', 'data-testid': 'knob-walk-plot', hidden: true });
    return h(
      'div',
      { class: 'knob-walk', 'data-testid': 'knob-walk', 'data-knob': knob },
      h('div', { class: 'walk-bar' }, h('code', {}, knob), ' ', on, ' ', off),
      h('div', { class: 'walk-text' }, ...paragraphs(text)),
      head,
      plot,
    );
  }

  /** The walk-through's plot drawn again for its panel's size now. */
  redrawWalk() {
    if (!this.lastWalk || !this.walksBox?.isConnected) return;
    const { knob, r } = this.lastWalk;
    const w = [...this.walksBox.children].find((x) => x.dataset.knob === knob);
    if (!w || w.querySelector('.walk-plot').hidden) return;
    this.showWalkResult(knob, r);
  }

  /** Which walk-through is on (null: the lesson's own run). */
  showWalk(knob) {
    for (const w of this.walksBox.children) {
      const on = w.dataset.knob === knob;
      w.classList.toggle('on', on);
      w.querySelector('.walk-off').hidden = !on;
      if (!on) {
        w.querySelector('.walk-plot').hidden = true;
        w.querySelector('.walk-head').replaceChildren();
      }
    }
  }

  /** The walk-through's comparison: pg15 and the knob's run, or a message. */
  showWalkResult(knob, r) {
    // Kept, so a new size (full screen, A+) draws the plot again for it (`redrawWalk`).
    this.lastWalk = typeof r === 'string' ? null : { knob, r };
    const w = [...this.walksBox.children].find((x) => x.dataset.knob === knob);
    if (!w) return;
    const head = w.querySelector('.walk-head');
    const plot = w.querySelector('.walk-plot');
    if (typeof r === 'string') {
      head.replaceChildren(r);
      plot.hidden = true;
      return;
    }
    const ms = (ns) => (ns / 1e6).toFixed(3);
    const gain = 100 * (1 - r.withNs / Math.max(1, r.baseNs));
    head.replaceChildren(
      'pg15 ',
      h('b', { 'data-testid': 'knob-walk-base-ms' }, `${ms(r.baseNs)} ms`),
      ` → with ${knob} `,
      h('b', { 'data-testid': 'knob-walk-with-ms' }, `${ms(r.withNs)} ms`),
      ` (${gain >= 0 ? '−' : '+'}${Math.abs(gain).toFixed(1)}%)`,
    );
    plot.hidden = false;
    renderComparePlot(plot, {
      runs: [
        { name: 'pg15', key: 'pg15', ns: r.baseNs, trace: r.baseTrace, color: SYNC_COLOR },
        { name: `+${knob}`, key: 'knob', ns: r.withNs, trace: r.withTrace, color: ASYNC_COLOR },
      ],
      connections: r.connections,
      testid: 'knob-walk-svg',
    });
  }

  /**
   * The notes at step `step`: `steps[i]` are the steps of note i's event (null: not
   * known yet). A note shows once its first step is reached; those of this step are
   * marked and scrolled into view.
   */
  showNotes(step, steps, status) {
    if (!this.lesson) return;
    const key = `${step}|${steps ? 'k' : 'u'}|${status}`;
    if (key === this.lastKey) return;
    this.lastKey = key;
    this.notesStatus.textContent = status;
    this.notesStatus.hidden = !status;
    if (!steps) {
      this.notesBox.replaceChildren();
      this.noteEls = [];
      return;
    }
    const notes = this.lesson.notes.map((n, i) => ({ n, i, steps: steps[i] ?? [] }));
    // In the order the run meets them; notes the run never meets last.
    notes.sort((a, b) => (a.steps[0] ?? Infinity) - (b.steps[0] ?? Infinity) || a.i - b.i);
    if (this.noteEls.length !== notes.length || this.noteEls.some((e, k) => Number(e.dataset.note) !== notes[k].i)) {
      this.noteEls = notes.map(({ n, i, steps: s }) => this.note(n, i, s));
      this.notesBox.replaceChildren(...this.noteEls);
    }
    let ahead = 0;
    let first = null;
    notes.forEach(({ steps: s }, k) => {
      const el = this.noteEls[k];
      const now = includes(s, step);
      const seen = s.length > 0 && s[0] <= step;
      const state = now ? 'now' : seen ? 'seen' : s.length ? 'ahead' : 'never';
      if (el.dataset.state !== state) el.dataset.state = state;
      el.hidden = !(now || seen);
      if (state === 'ahead') ahead++;
      if (now && !first) first = el;
    });
    const left = ahead ? `${ahead} more note${ahead === 1 ? '' : 's'} ahead in this run.` : '';
    this.notesStatus.textContent = [status, left].filter(Boolean).join(' ');
    this.notesStatus.hidden = !this.notesStatus.textContent;
    // Scroll the note into view inside the panel only (the page must not jump).
    if (first) keepInView(this.body, first, (top) => top - 8);
  }

  note(n, i, steps) {
    const at = steps.length
      ? h('button', { type: 'button', class: 'note-step small', title: 'go to the first step where this happens' }, `step ${steps[0]}`)
      : h('span', { class: 'note-step never' }, 'not in this run');
    if (steps.length) at.addEventListener('click', () => this.actions.seek(steps[0]));
    const more = steps.length > 1 ? h('span', { class: 'hint' }, ` and ${steps.length - 1 >= 2000 ? 'many' : steps.length - 1} more`) : null;
    return h(
      'div',
      { class: 'note', 'data-testid': 'lesson-note', 'data-note': String(i), 'data-first': String(steps[0] ?? ''), hidden: true },
      h('div', { class: 'note-head' }, at, more, h('span', { class: 'note-on' }, ` when ${noteTrigger(n.on)}`)),
      h('div', { class: 'note-text' }, ...paragraphs(n.text)),
    );
  }
}

/** Whether sorted `xs` holds `x`. */
function includes(xs, x) {
  let lo = 0;
  let hi = xs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] === x) return true;
    if (xs[mid] < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}
