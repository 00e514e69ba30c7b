// The wire inspector: the protocol messages on each connection up to now, newest at
// the bottom. Lines are derived once per recording; each render shows the prefix of the
// trace the run has reached. Stepping forward only adds the new lines; the list is a
// column-reverse flex box, so it stays scrolled to the newest line without JS reading
// the layout (which would force a synchronous layout on every step).

import { esc } from './util.js';
import { traceViews } from './traceview.js';

const MAX_LINES = 400;

export class WireInspector {
  /** `testid`: the prefix of the tabs' and lines' test ids (the live drawer has an inspector of its own). */
  constructor(tabs, list, { testid = 'wire' } = {}) {
    this.testid = testid;
    this.tabs = tabs;
    this.list = list;
    this.filter = 'all';
    this.lines = [];
    this.names = [];
    this.traceLen = -1;
    this.pos = 0; // index in this.lines of the first line not yet considered
    this.shown = 0; // lines in the list
    this.hidden = 0; // older lines dropped from the list
    tabs.addEventListener('click', (e) => {
      const b = e.target.closest('button[data-conn]');
      if (!b) return;
      this.filter = b.dataset.conn;
      this.renderTabs();
      this.update(this.traceLen, true);
      b.blur();
    });
  }

  setRecording(rec) {
    // `k`: a line's place in the list, kept on its element (data-li) for stepping back.
    this.lines = traceViews(rec).wire; // computed once per recording, numbered in place
    for (let k = 0; k < this.lines.length; k++) this.lines[k].k = k;
    this.names = rec.connections;
    this.recordedLen = rec.complete ? Infinity : (rec.traceLength ?? rec.trace.length);
    this.recordedNs = rec.recordedNs;
    if (this.filter !== 'all' && Number(this.filter) >= this.names.length) this.filter = 'all';
    this.renderTabs();
    this.traceLen = -1;
  }

  renderTabs() {
    const opts = [['all', 'all'], ...this.names.map((n, k) => [String(k), n])];
    this.tabs.innerHTML = opts
      .map(([k, n]) => `<button type="button" data-conn="${k}" class="tab${this.filter === k ? ' on' : ''}" data-testid="${this.testid}-tab-${esc(n)}">${esc(n)}</button>`)
      .join('');
  }

  lineHtml(l) {
    const arrow = l.dir === 'be' || l.dir === 'err' ? '←' : l.dir === 'queued' ? '⋯' : '→';
    const conn = l.conn === null ? '' : esc(this.names[l.conn] ?? l.conn);
    const node = l.node == null ? '' : ` data-node="${l.node}"`;
    return `<div class="wl ${l.dir}" data-testid="${this.testid}-line" data-li="${l.k}" data-conn="${l.conn ?? ''}"${node}${l.bytes ? ` data-bytes="${l.bytes}"` : ''}><span class="wt">${(l.t / 1e6).toFixed(3)}</span><span class="wc">${conn}</span><span class="wd">${arrow}</span><span class="wm">${esc(l.text)}</span>${l.bytes ? `<span class="wb">${l.bytes} B</span>` : ''}</div>`;
  }

  wanted(l) {
    return this.filter === 'all' || l.conn === null || String(l.conn) === this.filter;
  }

  tailHtml(traceLen) {
    if (traceLen <= this.recordedLen) return '';
    return `<div class="wire-more wire-tail">… messages after ${(this.recordedNs / 1e6).toFixed(3)} ms are not kept (the trace is too long for the page)</div>`;
  }

  noteHtml() {
    if (this.hidden) return `<div class="wire-more">… ${this.hidden} earlier messages not shown</div>`;
    if (!this.shown) return `<div class="wire-more">no messages yet</div>`;
    return '';
  }

  /**
   * A step back (a few lines newer than `traceLen` on screen): those lines go from the
   * top of the list and as many older ones come back at its bottom, so a step back
   * rewrites a few lines, not 400 (whose layout was most of a step back's time). False
   * when the list cannot be updated in place (a long way back, the tail note).
   */
  stepBack(traceLen) {
    const tail = this.list.querySelector('.wire-tail');
    if (tail && this.tailHtml(traceLen)) {
      // Still past the kept trace: every kept line comes before both steps, so the list
      // and its note stay as they are. (Rebuilding them here made each step back in a
      // long run's second half write and lay out 400 lines: ~25 ms at 4 x 70,000.)
      this.traceLen = traceLen;
      return true;
    }
    if (this.tailHtml(traceLen)) return false;
    // Back before the end of the kept trace: the note goes, and the lines are updated as below.
    if (tail) tail.remove();
    let pos = this.pos;
    let removed = 0;
    while (pos > 0 && this.lines[pos - 1].i >= traceLen) {
      pos--;
      if (this.wanted(this.lines[pos])) removed++;
    }
    if (removed > MAX_LINES / 4) return false;
    const note = this.list.lastElementChild;
    for (let n = 0; n < removed; n++) this.list.firstElementChild.remove();
    this.pos = pos;
    this.shown -= removed;
    this.traceLen = traceLen;
    // Refill from the line before the oldest shown, going back.
    const oldest = note.previousElementSibling;
    const html = [];
    for (let k = oldest ? Number(oldest.dataset.li) - 1 : pos - 1; k >= 0 && this.shown < MAX_LINES && this.hidden > 0; k--) {
      if (!this.wanted(this.lines[k])) continue;
      html.push(this.lineHtml(this.lines[k]));
      this.shown++;
      this.hidden--;
    }
    if (html.length) note.insertAdjacentHTML('beforebegin', html.join(''));
    note.innerHTML = this.noteHtml();
    return true;
  }

  update(traceLen, force = false) {
    if (!force && traceLen === this.traceLen) return;
    if (!force && traceLen < this.traceLen && this.traceLen >= 0 && this.stepBack(traceLen)) return;
    if (force || traceLen < this.traceLen || this.traceLen < 0) {
      // Rebuild: the last MAX_LINES wanted lines before traceLen.
      const shown = [];
      let pos = 0;
      for (; pos < this.lines.length && this.lines[pos].i < traceLen; pos++) if (this.wanted(this.lines[pos])) shown.push(this.lines[pos]);
      this.pos = pos;
      const cut = Math.max(0, shown.length - MAX_LINES);
      this.hidden = cut;
      this.shown = shown.length - cut;
      const html = [];
      for (let i = shown.length - 1; i >= cut; i--) html.push(this.lineHtml(shown[i])); // newest first (column-reverse)
      this.list.innerHTML = this.tailHtml(traceLen) + html.join('') + `<div class="wire-note">${this.noteHtml()}</div>`;
      this.traceLen = traceLen;
      return;
    }
    // Forward: add the lines between the old and the new trace length.
    const add = [];
    for (; this.pos < this.lines.length && this.lines[this.pos].i < traceLen; this.pos++) {
      const l = this.lines[this.pos];
      if (this.wanted(l)) add.push(l);
    }
    this.traceLen = traceLen;
    if (add.length > MAX_LINES) {
      // A jump ahead (a seek, Run to end): only the newest MAX_LINES lines are shown,
      // so the list is written once with them, not grown by thousands and cut back.
      this.hidden += this.shown + add.length - MAX_LINES;
      this.shown = MAX_LINES;
      const html = [];
      for (let i = add.length - 1; i >= add.length - MAX_LINES; i--) html.push(this.lineHtml(add[i]));
      this.list.innerHTML = this.tailHtml(traceLen) + html.join('') + `<div class="wire-note">${this.noteHtml()}</div>`;
      return;
    }
    if (add.length) {
      const html = [];
      for (let i = add.length - 1; i >= 0; i--) html.push(this.lineHtml(add[i]));
      this.list.insertAdjacentHTML('afterbegin', html.join(''));
      this.shown += add.length;
      const note = this.list.lastElementChild;
      while (this.shown > MAX_LINES) {
        note.previousElementSibling.remove();
        this.shown--;
        this.hidden++;
      }
      note.innerHTML = this.noteHtml();
    }
    // past the kept trace: say so below the last line (no lines come after it)
    const tail = this.tailHtml(traceLen);
    if (tail && !this.list.querySelector('.wire-tail')) this.list.insertAdjacentHTML('afterbegin', tail);
  }
}
