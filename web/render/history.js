// The narration history (issue 10): every step's narration so far, in full (the
// narration line above the grid cuts a busy step after a few actions; here each entry
// lists them all), newest at the bottom; a click on an entry seeks to that step.
//
// The model narrates any step taken so far (`session.narrationLog(from, to)`: the
// actions of each step). Entries are cached here, so after a seek back the steps
// already seen stay listed (faded: they are ahead of the current step). At most
// WINDOW entries are drawn at a time, around the current step; "earlier steps" draws
// more, so a run of 300,000 steps never builds 300,000 elements.

import { h, keepInView } from './util.js';

const WINDOW = 400;
/** A step's actions are joined into one line up to this many (the narration's cut). */
const INLINE_PARTS = 6;

export class NarrationHistory {
  /** `box` the scrolling list's container; `onSeek(step)` when an entry is clicked. */
  constructor(box, onSeek) {
    this.box = box;
    this.onSeek = onSeek;
    this.list = h('ol', { class: 'history-list', 'data-testid': 'history-list' });
    this.more = h('button', { type: 'button', class: 'small history-more', 'data-testid': 'history-earlier', hidden: true }, 'earlier steps');
    this.more.addEventListener('click', () => this.earlier());
    box.replaceChildren(this.more, this.list);
    this.list.addEventListener('click', (e) => {
      const li = e.target instanceof Element ? e.target.closest('li[data-step]') : null;
      if (li) this.onSeek(Number(li.dataset.step));
    });
    this.reset();
  }

  /** A new run: nothing cached. */
  reset() {
    this.texts = []; // texts[k]: the actions of step k (k ≥ 1), once fetched
    this.lo = 1;
    this.hi = 0;
    this.step = -1;
    this.list.replaceChildren();
    this.more.hidden = true;
  }

  /**
   * Shows the history at `step` of `session`; `timeNs(k)` is the time at the end of
   * step k (from the recording), or null. Fetches what the cache lacks.
   */
  update(session, step, timeNs) {
    this.session = session;
    this.timeNs = timeNs;
    // Steps after the current one stay listed while their text is cached.
    let hi = step;
    while (this.texts[hi + 1] !== undefined) hi++;
    let lo = Math.max(1, Math.min(this.lo, step - WINDOW + 1));
    if (hi - lo + 1 > WINDOW) lo = Math.max(1, step - WINDOW + 1);
    if (step < lo) lo = Math.max(1, step - WINDOW + 1);
    if (hi - lo + 1 > WINDOW) hi = lo + WINDOW - 1;
    this.fetch(lo, step);
    if (lo !== this.lo || hi < this.hi || this.list.children.length !== this.hi - this.lo + 1) {
      this.lo = lo;
      this.hi = hi;
      this.list.replaceChildren(...range(lo, hi).map((k) => this.entry(k)));
    } else if (hi > this.hi) {
      this.list.append(...range(this.hi + 1, hi).map((k) => this.entry(k)));
      this.hi = hi;
    }
    this.more.hidden = this.lo <= 1;
    this.more.textContent = `earlier steps (1–${this.lo - 1})`;
    if (step !== this.step) this.mark(step);
  }

  /** Fetches steps `from..to` (all at most the current step) the cache lacks. */
  fetch(from, to) {
    let a = from;
    while (a <= to) {
      while (a <= to && this.texts[a] !== undefined) a++;
      if (a > to) break;
      let b = a;
      while (b < to && this.texts[b + 1] === undefined) b++;
      const parts = this.session.narrationLog(a, b);
      parts.forEach((p, i) => (this.texts[a + i] = p));
      a = b + 1;
    }
  }

  earlier() {
    const lo = Math.max(1, this.lo - WINDOW);
    this.fetch(lo, this.lo - 1);
    const first = this.list.firstElementChild;
    this.list.prepend(...range(lo, this.lo - 1).map((k) => this.entry(k)));
    this.lo = lo;
    this.more.hidden = this.lo <= 1;
    this.more.textContent = `earlier steps (1–${this.lo - 1})`;
    first?.scrollIntoView({ block: 'start' });
  }

  entry(k) {
    const parts = this.texts[k] ?? ['…'];
    const t = this.timeNs?.(k);
    const head = h('span', { class: 'h-step' }, `${k}`);
    const time = h('span', { class: 'h-time' }, t != null ? `${(t / 1e6).toFixed(3)} ms` : '');
    let body;
    if (parts.length <= INLINE_PARTS) body = h('span', { class: 'h-text' }, parts.join('; '));
    else body = h('span', { class: 'h-text' }, `${parts.length} actions:`, h('ul', {}, ...parts.map((p) => h('li', {}, p))));
    return h('li', { 'data-step': String(k), 'data-testid': 'history-entry', title: `go to step ${k}` }, head, time, body);
  }

  /** Marks the current step, fades the steps after it, and keeps it in view. */
  mark(step) {
    this.step = step;
    for (const li of this.list.querySelectorAll('li.cur, li.ahead')) li.classList.remove('cur', 'ahead');
    let cur = null;
    for (const li of this.list.children) {
      const k = Number(li.dataset.step);
      if (k === step) {
        li.classList.add('cur');
        cur = li;
      } else if (k > step) li.classList.add('ahead');
    }
    if (cur) keepInView(this.box, cur, (top, box) => top - box.clientHeight / 2);
    else if (step === 0) {
      keepInView(this.box, null);
      this.box.scrollTop = 0;
    }
  }
}

function range(a, b) {
  const out = [];
  for (let k = a; k <= b; k++) out.push(k);
  return out;
}
