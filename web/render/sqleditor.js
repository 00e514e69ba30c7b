// The SQL editor drawer: a scenario file (schema for the coordinator and each shard,
// then the query) in a textarea with line numbers, the examples it can start from,
// a Run button with a "live" switch (the file also runs on the real shards: the relay
// loads its tables, then the live drawer runs it), and an error shown where it is (the
// line highlighted, a caret under the column, the message beside it). It only renders
// and reports: main.js loads the text into the model (and the relay) and tells it what
// happened (showError, showRan).

import { h, fmtInt } from './util.js';

/** Line height of the editor in CSS pixels (style.css `.sql-edit` uses the same). */
const LINE_PX = 18;
/** Spaces a tab takes in the editor (style.css `tab-size`). */
const TAB = 4;

export class SqlEditor {
  /**
   * @param root the drawer element
   * @param files [{id, text}]: the scenario files the page ships (wasm `scenarioFiles()`;
   *   none until the SQL front end's module is in, then `setFiles`)
   * @param onRun (text) => void: Run clicked (or Ctrl+Enter)
   * @param onClose () => void: ✕ or Escape
   */
  constructor(root, files, { onRun, onClose }) {
    this.root = root;
    this.files = files;
    this.error = null;
    this.onRun = onRun;
    this.example = h('select', { 'data-testid': 'sql-example', title: 'replace the text with one of the scenario files the page ships' },
      h('option', { value: '' }, 'start from…'),
      ...files.map((f) => h('option', { value: f.id }, exampleLabel(f.id))));
    this.run = h('button', { type: 'button', class: 'primary', 'data-testid': 'sql-run', title: 'load this scenario file and run its query, simulated (Ctrl+Enter)' }, 'Run ▶');
    this.liveBox = h('input', { type: 'checkbox', 'data-testid': 'sql-live' });
    const live = h('label', { class: 'sql-live', title: 'Run also loads the file\'s shard tables into the live shards (pgasync demo) and runs the query there, beside what PostgreSQL says' }, this.liveBox, ' live');
    const close = h('button', { type: 'button', class: 'small', 'data-testid': 'sql-close', title: 'close (Esc); the run stays on screen' }, '✕');
    this.status = h('div', { class: 'sql-status', 'data-testid': 'sql-status', 'aria-live': 'polite' });
    this.gutter = h('div', { class: 'sql-gutter', 'aria-hidden': 'true' });
    this.area = h('textarea', { class: 'sql-text', 'data-testid': 'sql-text', wrap: 'off', spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off', 'aria-label': 'scenario file' });
    this.lineMark = h('div', { class: 'sql-line-mark', 'data-testid': 'sql-line-mark', hidden: true });
    this.caret = h('div', { class: 'sql-caret', 'data-testid': 'sql-caret', hidden: true },
      h('span', { class: 'sql-caret-arrow' }, '▲'), h('span', { class: 'sql-caret-msg', 'data-testid': 'sql-caret-msg' }));
    this.marks = h('div', { class: 'sql-marks', 'aria-hidden': 'true' }, this.lineMark, this.caret);
    this.box = h('div', { class: 'sql-edit' }, this.gutter, h('div', { class: 'sql-area' }, this.area, this.marks));
    this.errorBar = h('div', { class: 'sql-error', 'data-testid': 'sql-error', role: 'alert', hidden: true });
    root.replaceChildren(
      h('div', { class: 'sql-head' },
        h('h2', {}, 'SQL scenario file'),
        this.example, live, this.run, close),
      h('p', { class: 'sql-help' },
        'Sections: ', h('code', {}, '-- @shard NAME'), ' (statements run on that shard), ', h('code', {}, '-- @coordinator'),
        ' (servers, foreign tables, partitions; the default), ', h('code', {}, '-- @query'), ' (one SELECT, or an EXPLAIN of it — without ANALYZE it is planned, not run — pgbench ', h('code', {}, '\\set'),
        ' allowed), ', h('code', {}, '-- @knobs'), ' (', h('code', {}, 'rtt_ms = 2'), '…). It runs in the simulator; the knobs above (RTT, fetch size, behaviour) apply to it. With ', h('b', {}, 'live'),
        ' (and ', h('code', {}, 'make demo'), '), it also runs on the real shards: name the shards after the relay\'s (s1…s4).'),
      this.box,
      this.errorBar,
      this.status,
    );
    this.example.addEventListener('change', () => {
      const f = this.files.find((x) => x.id === this.example.value);
      this.example.value = '';
      if (f) this.setText(f.text);
    });
    this.run.addEventListener('click', () => this.onRun(this.area.value));
    close.addEventListener('click', onClose);
    this.area.addEventListener('input', () => {
      this.clearError(); // the marker would point at text that changed
      this.numberLines();
    });
    this.area.addEventListener('scroll', () => {
      this.gutter.scrollTop = this.area.scrollTop;
      this.placeMarks();
    });
    this.area.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        this.onRun(this.area.value);
      }
    });
    root.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        onClose();
      }
    });
    this.errorBar.addEventListener('click', () => this.goToError());
    window.addEventListener('resize', () => this.placeMarks());
    this.numberLines();
  }

  /** The scenario files to offer (the SQL front end's module has them: issue 20). */
  setFiles(files) {
    this.files = files;
    this.example.replaceChildren(h('option', { value: '' }, 'start from…'), ...files.map((f) => h('option', { value: f.id }, exampleLabel(f.id))));
  }

  text() {
    return this.area.value;
  }

  /** Whether the text has the keyboard's focus (someone may be typing in it). */
  focused() {
    return document.activeElement === this.area;
  }

  /** Whether Run runs the file live too. */
  wantsLive() {
    return this.liveBox.checked;
  }

  setLive(on) {
    this.liveBox.checked = on;
  }

  setText(text) {
    this.area.value = text;
    this.clearError();
    this.numberLines();
    this.area.scrollTop = 0;
    this.area.scrollLeft = 0;
  }

  /** The drawer was opened: lay out the marks (they need the box's size). */
  shown() {
    this.numberLines();
    this.gutter.scrollTop = this.area.scrollTop;
    this.placeMarks();
  }

  setBusy(busy, msg = '') {
    this.run.disabled = busy;
    this.status.textContent = msg;
    this.status.classList.remove('ok');
  }

  /** What the last successful run loaded: the setup's statements and the query as it ran. */
  showRan({ log, query }) {
    const inserts = log.filter((l) => /INSERT 0 /.test(l)).map((l) => Number(/INSERT 0 (\d+)/.exec(l)[1])).reduce((a, b) => a + b, 0);
    this.status.textContent = `Ran ${log.length} setup statement${log.length === 1 ? '' : 's'} (${fmtInt(inserts)} rows inserted); the query as it runs: ${query ?? '(none)'}`;
    this.status.title = log.join('\n');
    this.status.classList.add('ok');
  }

  /** `{message, line, column}` (line 0: no position): the message, and where it is in the text. */
  showError(err) {
    this.error = err;
    const where = err.line > 0 ? `line ${err.line}, column ${err.column}: ` : '';
    this.errorBar.textContent = `${where}${err.message}`;
    this.errorBar.title = err.line > 0 ? 'click to put the cursor there' : '';
    this.errorBar.classList.toggle('has-pos', err.line > 0);
    this.errorBar.dataset.line = String(err.line);
    this.errorBar.dataset.column = String(err.column);
    this.errorBar.hidden = false;
    this.status.textContent = '';
    this.numberLines();
    this.placeMarks(true);
  }

  clearError() {
    if (!this.error) return;
    this.error = null;
    this.errorBar.hidden = true;
    this.lineMark.hidden = true;
    this.caret.hidden = true;
    this.numberLines();
  }

  /** Puts the cursor at the error's position (and scrolls it into view). */
  goToError() {
    const e = this.error;
    if (!e || e.line <= 0) return;
    const at = offsetOf(this.area.value, e.line, e.column);
    this.area.focus();
    this.area.setSelectionRange(at, at);
    this.scrollToError();
  }

  /** The error's line in view (vertically centred when it was out of view). */
  scrollToError() {
    const e = this.error;
    if (!e || e.line <= 0) return;
    const top = (e.line - 1) * LINE_PX;
    const view = this.area.clientHeight;
    if (top < this.area.scrollTop || top + 3 * LINE_PX > this.area.scrollTop + view) {
      this.area.scrollTop = Math.max(0, top - view / 2);
    }
    this.gutter.scrollTop = this.area.scrollTop;
  }

  /** The line numbers, the error's in red. */
  numberLines() {
    const n = this.area.value.split('\n').length;
    const errLine = this.error?.line ?? 0;
    if (this.gutter.__n === n && this.gutter.__err === errLine) return;
    this.gutter.__n = n;
    this.gutter.__err = errLine;
    const lines = [];
    for (let i = 1; i <= n; i++) lines.push(i === errLine ? `<b class="err" data-testid="sql-gutter-error">${i}</b>` : String(i));
    // one extra line: the textarea scrolls a little past its last line
    this.gutter.innerHTML = lines.join('\n') + '\n ';
    // Reading the scroll position lays the page out: not while the drawer is closed
    // (at the page's set-up, that was a layout of the whole page before its first run).
    if (!this.root.hidden) this.gutter.scrollTop = this.area.scrollTop;
  }

  /** The line highlight and the caret with the message, over the text at the error's position. */
  placeMarks(scroll = false) {
    const e = this.error;
    if (!e || e.line <= 0 || this.root.hidden) {
      this.lineMark.hidden = true;
      this.caret.hidden = true;
      return;
    }
    if (scroll) this.scrollToError();
    const style = getComputedStyle(this.area);
    const padTop = parseFloat(style.paddingTop);
    const padLeft = parseFloat(style.paddingLeft);
    const lines = this.area.value.split('\n');
    const line = lines[e.line - 1] ?? '';
    // The middle of the character at the column (of a space past the line's end).
    const before = textWidth(prefix(line, e.column), style);
    const after = textWidth(prefix(line, e.column + 1), style);
    const x = padLeft + (after > before ? (before + after) / 2 : before + textWidth(' ', style) / 2) - this.area.scrollLeft;
    const y = padTop + (e.line - 1) * LINE_PX - this.area.scrollTop;
    this.lineMark.style.top = `${y}px`;
    this.lineMark.style.height = `${LINE_PX}px`;
    this.lineMark.hidden = false;
    this.caret.querySelector('.sql-caret-msg').textContent = e.message;
    this.caret.hidden = false;
    // The arrow under the column, the message from there (shifted left when it would
    // run past the right edge).
    const arrow = this.caret.querySelector('.sql-caret-arrow');
    const half = arrow.offsetWidth / 2;
    const width = this.area.clientWidth;
    const left = Math.max(2, Math.min(x - half, width - this.caret.offsetWidth - 4));
    this.caret.style.top = `${y + LINE_PX - 2}px`;
    this.caret.style.left = `${left}px`;
    arrow.style.marginLeft = `${Math.max(0, x - half - left)}px`;
  }
}

/** How the examples menu names a scenario file. */
function exampleLabel(id) {
  const names = {
    M: 'seed 003: async MergeAppend (scenario M)',
    X: 'seed 004: partitionwise aggregate (scenario X)',
  };
  return names[id] ?? `scenario ${id}'s file`;
}

/** The text of a line before (1-based) column `column`, tabs expanded as the editor shows them. */
function prefix(line, column) {
  const chars = [...line].slice(0, Math.max(0, column - 1));
  let out = '';
  for (const c of chars) out += c === '\t' ? ' '.repeat(TAB - (out.length % TAB)) : c;
  return out;
}

let canvas = null;
/** Width of `text` in the textarea's font. */
function textWidth(text, style) {
  canvas ??= document.createElement('canvas');
  const ctx = canvas.getContext('2d');
  ctx.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  return ctx.measureText(text).width;
}

/** The offset in `text` of (1-based) line and column, clamped to the text. */
function offsetOf(text, line, column) {
  const lines = text.split('\n');
  let at = 0;
  for (let i = 0; i < Math.min(line - 1, lines.length); i++) at += lines[i].length + 1;
  const cur = lines[line - 1] ?? '';
  // columns count characters; the textarea counts UTF-16 code units
  const chars = [...cur].slice(0, Math.max(0, column - 1)).join('');
  return Math.min(text.length, at + chars.length);
}
