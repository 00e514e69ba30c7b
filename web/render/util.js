// Small helpers shared by the renderers: SVG/HTML building, formatting, state colours.

export const SVG_NS = 'http://www.w3.org/2000/svg';

/** Creates an SVG element with attributes; `text` sets its text content. */
export function svg(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Creates an HTML element with attributes; `children` are nodes or strings. */
export function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

/** Sets an element's text only when it differs (a text write invalidates layout even when equal). */
export function setText(el, text) {
  if (el.__text !== text) {
    el.__text = text;
    el.textContent = text;
  }
}

/**
 * Scrolls `box` at the next frame so that `el` is in view, at `place(top, box)` when it
 * is not. Reading a position forces a layout; when many steps are taken in one task (a
 * seek, a lesson walked step by step) one layout per frame does, so only the last
 * request for a box is carried out. `keepInView(box, null)` drops a pending one.
 */
export function keepInView(box, el, place) {
  box.__keep = el ? { el, place } : null;
  if (!el || box.__keepScheduled) return;
  box.__keepScheduled = true;
  requestAnimationFrame(() => {
    box.__keepScheduled = false;
    const k = box.__keep;
    box.__keep = null;
    if (!k || !k.el.isConnected) return;
    const top = k.el.offsetTop; // the box is positioned: offsets are within it
    if (top < box.scrollTop || top + k.el.offsetHeight > box.scrollTop + box.clientHeight) box.scrollTop = Math.max(0, k.place(top, box));
  });
}

export function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

/** Async request states: colour and the words shown next to the colour. */
export const STATES = {
  Idle: { label: 'Idle', color: '#8a94a6', text: '#ffffff' },
  Waiting: { label: 'Waiting', color: '#d97706', text: '#ffffff' },
  CallbackPending: { label: 'Callback pending', color: '#7c3aed', text: '#ffffff' },
  Complete: { label: 'Complete', color: '#15803d', text: '#ffffff' },
  Cancelled: { label: 'Cancelled', color: '#dc2626', text: '#ffffff' },
};
export const STATE_ORDER = ['Idle', 'Waiting', 'CallbackPending', 'Complete', 'Cancelled'];

export function stateInfo(s) {
  return STATES[s] ?? { label: String(s), color: '#555', text: '#fff' };
}

export function fmtMs(ns, digits = 3) {
  return (ns / 1e6).toFixed(digits) + ' ms';
}

export function fmtBytes(b) {
  if (b < 1024) return b + ' B';
  if (b < 100 * 1024) return (b / 1024).toFixed(1) + ' kB';
  if (b < 1024 * 1024) return (b / 1024).toFixed(0) + ' kB';
  return (b / 1024 / 1024).toFixed(2) + ' MB';
}

/**
 * `n` with thousands separators, as `toLocaleString('en-US')` writes it (up to 3
 * decimals), without Intl: the first `toLocaleString` of a page loads ICU's number
 * formats, 40-80 ms of main-thread block that the page's load would pay.
 */
export function fmtInt(n) {
  const x = Number(n);
  if (!Number.isFinite(x) || Math.abs(x) >= 1e21) return x.toLocaleString('en-US');
  const r = Number.isInteger(x) ? Math.abs(x) : Math.round(Math.abs(x) * 1000) / 1000;
  const [int, frac] = String(r).split('.');
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  return sign + int.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (frac ? `.${frac}` : '');
}

/** "Nice" axis ticks over [0, max]. */
export function ticks(max, approx = 6) {
  if (!(max > 0)) return [0];
  const raw = max / approx;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out = [];
  for (let v = 0; v <= max * 1.0001; v += step) out.push(v);
  return out;
}

/** Tick label for a time in ns, with a precision suited to the axis length. */
export function tickLabel(ns, maxNs) {
  const ms = ns / 1e6;
  const maxMs = maxNs / 1e6;
  const d = maxMs >= 50 ? 0 : maxMs >= 5 ? 1 : maxMs >= 0.5 ? 2 : 3;
  return ms.toFixed(d);
}

/**
 * Merges intervals [a, b] (in px) that touch or are closer than `gap` px, and widens
 * each to at least `minW` px: keeps the SVG small when a lane has thousands of them.
 */
export function mergePx(intervals, gap = 0.75, minW = 1) {
  const sorted = intervals.slice().sort((p, q) => p[0] - q[0]);
  const out = [];
  for (const [a, b0] of sorted) {
    const b = Math.max(b0, a + minW);
    const last = out[out.length - 1];
    if (last && a <= last[1] + gap) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** Merges tick positions (px) closer than `gap`, counting them. */
export function mergeTicks(xs, gap = 2) {
  const sorted = xs.slice().sort((a, b) => a - b);
  const out = [];
  for (const x of sorted) {
    const last = out[out.length - 1];
    if (last && x - last.x < gap) last.n++;
    else out.push({ x, n: 1 });
  }
  return out;
}

/** Flattens a plan tree depth-first: [{node, depth, parent}]. */
export function flattenPlan(root) {
  const out = [];
  const walk = (n, depth, parent) => {
    out.push({ node: n, depth, parent });
    for (const c of n.children ?? []) walk(c, depth + 1, n);
  };
  if (root) walk(root, 0, null);
  return out;
}

/**
 * A request's requestee as PostgreSQL names it (`nodes`: id → node): a Result EXPLAIN
 * prints as part of the node below it (a Foreign Scan's own qual and projection,
 * `printed_as`) is that node, as execAsync.c's `areq->requestee` is the ForeignScanState.
 */
export function requesteeNode(nodes, id) {
  const n = nodes.get(id);
  return n?.printed_as != null ? (nodes.get(n.printed_as) ?? n) : n;
}

/**
 * Is `r` a request inside one node of PostgreSQL's: from a Result folded into a Foreign
 * Scan (the scan's qual and projection) to that scan? PostgreSQL has one request there,
 * the requestor's to the scan.
 */
export function insideScan(nodes, r) {
  return nodes.get(r.requestor)?.printed_as != null;
}

/** Short name of a node for lists: its relation if it has one, else its type. */
export function shortName(node) {
  if (!node) return '?';
  return node.relation ?? node.node_type;
}

/**
 * How much the drawings (plan, timeline, compare: SVG) are magnified for the projector:
 * large text (A+) ×1.65, a full-screen panel ×1.35 (both: ×2.2). A drawing is laid out
 * at its width divided by this and shown at its real width through its viewBox, so its
 * text (11 px at the least) grows by the factor — 18 px and more with A+ — and every
 * box, lane and label grows with it: nothing is laid out for one size and drawn at
 * another.
 */
export const LARGE_DRAWING_SCALE = 1.65;
export const FULL_DRAWING_SCALE = 1.35;
export function drawingScale(el) {
  const large = document.documentElement.dataset.large === '1';
  const full = !!el?.closest?.('section.panel.full');
  return (large ? LARGE_DRAWING_SCALE : 1) * (full ? FULL_DRAWING_SCALE : 1);
}
