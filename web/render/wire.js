// The wire inspector: the protocol messages on each connection up to now, newest at
// the bottom. Lines are derived once per recording; each render shows the prefix of the
// trace the run has reached.

import { esc } from './util.js';
import { wireLines } from './traceview.js';

const MAX_LINES = 400;

export class WireInspector {
  constructor(tabs, list) {
    this.tabs = tabs;
    this.list = list;
    this.filter = 'all';
    this.lines = [];
    this.names = [];
    this.traceLen = 0;
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
    this.lines = wireLines(rec.trace);
    this.names = rec.connections;
    if (this.filter !== 'all' && Number(this.filter) >= this.names.length) this.filter = 'all';
    this.renderTabs();
  }

  renderTabs() {
    const opts = [['all', 'all'], ...this.names.map((n, k) => [String(k), n])];
    this.tabs.innerHTML = opts
      .map(([k, n]) => `<button type="button" data-conn="${k}" class="tab${this.filter === k ? ' on' : ''}" data-testid="wire-tab-${esc(n)}">${esc(n)}</button>`)
      .join('');
  }

  update(traceLen, force = false) {
    if (!force && traceLen === this.traceLen && this.list.childElementCount) return;
    this.traceLen = traceLen;
    const stick = this.list.scrollTop + this.list.clientHeight >= this.list.scrollHeight - 24;
    const f = this.filter;
    const shown = [];
    for (const l of this.lines) {
      if (l.i >= traceLen) break;
      if (f === 'all' || String(l.conn) === f || l.conn === null) shown.push(l);
    }
    const cut = shown.length > MAX_LINES ? shown.length - MAX_LINES : 0;
    const html = [];
    if (cut) html.push(`<div class="wire-more">… ${cut} earlier messages not shown</div>`);
    if (!shown.length) html.push(`<div class="wire-more">no messages yet</div>`);
    for (let i = cut; i < shown.length; i++) {
      const l = shown[i];
      const arrow = l.dir === 'be' || l.dir === 'err' ? '←' : l.dir === 'queued' ? '⋯' : '→';
      const conn = l.conn === null ? '' : esc(this.names[l.conn] ?? l.conn);
      html.push(
        `<div class="wl ${l.dir}" data-testid="wire-line"><span class="wt">${(l.t / 1e6).toFixed(3)}</span><span class="wc">${conn}</span><span class="wd">${arrow}</span><span class="wm">${esc(l.text)}</span>${l.bytes ? `<span class="wb">${l.bytes} B</span>` : ''}</div>`,
      );
    }
    this.list.innerHTML = html.join('');
    if (stick || force) this.list.scrollTop = this.list.scrollHeight;
  }
}
