// The timeline: one lane per connection (queries in flight, answers arriving), one per
// async request (when it was Waiting, when its callback became pending), and the rows
// leaving the plan. The whole recorded run is drawn once; each render only moves the
// cursor and the veil over the future. Clicking seeks to that time.

import { svg, ticks, tickLabel, mergePx, mergeTicks, STATES, flattenPlan, shortName, fmtMs } from './util.js';
import { connectionIntervals, requestIntervals, rowTicks } from './traceview.js';

export const LABEL_W = 104;
const AXIS_H = 22;
const TOP = 16;

export const COLORS = {
  busy: '#2563eb',
  arrival: '#0f172a',
  startup: '#94a3b8',
  waiting: STATES.Waiting.color,
  pending: STATES.CallbackPending.color,
  row: '#0f766e',
  cursor: '#dc2626',
  bound: '#be123c',
};

/** Draws one lane's intervals (ns) as bars; merged per pixel. */
export function drawBars(parent, intervals, x, y, h, color, titleFn) {
  const px = intervals.map((iv) => [x(iv.start), x(iv.end), iv]);
  if (px.length <= 400 && titleFn) {
    for (const [a, b, iv] of px) {
      const r = svg('rect', { x: a, y, width: Math.max(1, b - a), height: h, fill: color, rx: 1.5 });
      r.append(svg('title', {}, titleFn(iv)));
      parent.append(r);
    }
  } else {
    for (const [a, b] of mergePx(px.map(([a, b]) => [a, b]))) parent.append(svg('rect', { x: a, y, width: b - a, height: h, fill: color, rx: 1.5 }));
  }
}

function drawTicks(parent, times, x, y, h, color, w = 1.5) {
  const ts = mergeTicks(times.map(x));
  // Dense ticks (a tick every few px) would paint the lane solid: draw them faint.
  const span = ts.length > 1 ? ts[ts.length - 1].x - ts[0].x : 0;
  const dense = ts.length > 8 && span / ts.length < 5;
  for (const t of ts) parent.append(svg('rect', { x: t.x - w / 2, y, width: w, height: h, fill: color, opacity: dense ? 0.3 : null }));
}

export function drawAxis(parent, x, x0, x1, y, maxNs, gridTop) {
  const g = svg('g', { class: 'axis' });
  g.append(svg('line', { x1: x0, x2: x1, y1: y, y2: y, stroke: '#64748b' }));
  for (const v of ticks(maxNs, Math.max(3, Math.floor((x1 - x0) / 80)))) {
    const xx = x(v);
    if (gridTop != null) g.append(svg('line', { x1: xx, x2: xx, y1: gridTop, y2: y, stroke: '#e2e8f0' }));
    g.append(svg('line', { x1: xx, x2: xx, y1: y, y2: y + 4, stroke: '#64748b' }));
    g.append(svg('text', { x: xx, y: y + 15, 'text-anchor': 'middle', class: 'axis-label' }, tickLabel(v, maxNs)));
  }
  g.append(svg('text', { x: x0 - 18, y: y + 15, 'text-anchor': 'end', class: 'axis-unit' }, 'ms'));
  parent.append(g);
}

export class Timeline {
  constructor(container, onSeek) {
    this.container = container;
    this.onSeek = onSeek;
    this.root = null;
  }

  /** Builds the static part from a recording (call again when the session or the size changes). */
  build(rec, plan) {
    const W = Math.max(400, this.container.clientWidth - 2);
    const availH = Math.max(140, this.container.clientHeight - 4);
    const endNs = Math.max(1, rec.totalNs);
    const nodes = new Map(flattenPlan(plan).map((r) => [r.node.id, r.node]));
    // A run whose trace was too long to keep is drawn up to where the trace stops.
    const recEnd = rec.complete ? endNs : rec.recordedNs;
    const conns = connectionIntervals(rec.trace, rec.connections.length, recEnd);
    const reqs = requestIntervals(rec.trace, recEnd);
    const rowsOut = rowTicks(rec.trace);

    const lanes = [];
    if (conns.length) lanes.push({ header: 'connections: connecting (grey), queries in flight (blue), answers (ticks)' });
    conns.forEach((l, k) => lanes.push({ kind: 'conn', k, l, label: `${rec.connections[k] ?? 'conn ' + k}` }));
    if (reqs.length) lanes.push({ header: 'async requests: Waiting (bars), Callback pending (ticks)' });
    for (const r of reqs) {
      const n = nodes.get(r.requestee);
      lanes.push({ kind: 'req', r, label: `#${r.id} ${shortName(n)}` });
    }
    lanes.push({ kind: 'rows', label: 'rows out' });
    const nHeaders = lanes.filter((l) => l.header).length;
    const headerH = 14;
    const nLanes = lanes.length - nHeaders;
    // Lanes shrink to fit the panel (16 shards = 33 lanes); labels thin out below.
    const laneH = Math.max(4, Math.min(24, Math.floor((availH - TOP - AXIS_H - nHeaders * headerH - 4) / nLanes)));
    const barH = laneH > 12 ? laneH - 6 : laneH > 7 ? laneH - 3 : Math.max(2, laneH - 1);
    const H = TOP + nHeaders * headerH + nLanes * laneH + AXIS_H + 4;

    const x0 = LABEL_W;
    const x1 = W - 12;
    const x = (ns) => x0 + (Math.min(Math.max(ns, 0), endNs) / endNs) * (x1 - x0);
    this.x = x;
    this.x0 = x0;
    this.x1 = x1;
    this.endNs = endNs;

    const root = svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'timeline-svg', 'data-testid': 'timeline-svg' });
    root.append(svg('rect', { x: x0, y: 0, width: x1 - x0, height: H - AXIS_H, fill: '#fbfdff', class: 'plot-bg' }));
    const gridTop = TOP - 4;
    const axisY = H - AXIS_H;
    drawAxis(root, x, x0, x1, axisY, endNs, gridTop);

    const labelEvery = Math.ceil(11 / laneH); // label every k-th lane when lanes are thin
    let laneNo = 0;
    let y = TOP;
    const data = svg('g', { class: 'lanes' });
    const headers = svg('g', { class: 'headers' });
    for (const lane of lanes) {
      if (lane.header) {
        headers.append(svg('text', { x: 4, y: y + 10, class: 'lane-header' }, lane.header));
        y += headerH;
        continue;
      }
      const by = y + (laneH - barH) / 2;
      data.append(svg('line', { x1: x0, x2: x1, y1: y + laneH - 0.5, y2: y + laneH - 0.5, stroke: '#eef2f7' }));
      const k = laneNo++;
      if (lane.kind === 'rows' || (k % labelEvery === 0 && nLanes - 1 - k >= labelEvery)) data.append(svg('text', { x: x0 - 6, y: y + laneH / 2 + 4, 'text-anchor': 'end', class: 'lane-label', style: laneH < 12 ? 'font-size:10px' : null }, lane.label));
      if (lane.kind === 'conn') {
        drawBars(data, lane.l.busy, x, by, barH, COLORS.busy, (iv) => `${lane.label}: ${iv.sql}\n${fmtMs(iv.start)} → ${fmtMs(iv.end)}${iv.rows != null ? ` (${iv.rows} rows)` : ''}`);
        drawTicks(data, lane.l.arrivals.map((a) => a.t), x, y + (laneH > 6 ? 1 : 0), laneH - (laneH > 6 ? 2 : 0), COLORS.arrival, 2);
        drawBars(data, lane.l.startups, x, by, barH, COLORS.startup, (iv) => `${lane.label}: connecting (start-up packet → ReadyForQuery)\n${fmtMs(iv.start)} → ${fmtMs(iv.end)}`);
      } else if (lane.kind === 'req') {
        drawBars(data, lane.r.waiting, x, by, barH, COLORS.waiting, (iv) => `${lane.label} Waiting ${fmtMs(iv.start)} → ${fmtMs(iv.end)}`);
        drawTicks(data, lane.r.pending.map((p) => p.t), x, y + (laneH > 6 ? 1 : 0), laneH - (laneH > 6 ? 2 : 0), COLORS.pending, 1.5);
      } else {
        drawTicks(data, rowsOut.map((r) => r.t), x, y + (laneH > 8 ? 2 : 0), Math.max(3, laneH - (laneH > 8 ? 4 : 0)), COLORS.row, 2);
      }
      y += laneH;
    }
    root.append(data);
    if (!rec.complete) {
      const defs = svg('defs');
      const pat = svg('pattern', { id: 'tl-hatch', width: 8, height: 8, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' });
      pat.append(svg('rect', { width: 3, height: 8, fill: '#e2e8f0' }));
      defs.append(pat);
      root.append(defs);
      const hx = x(recEnd);
      root.append(svg('rect', { x: hx, y: TOP - 4, width: Math.max(0, x1 - hx), height: axisY - TOP + 4, fill: 'url(#tl-hatch)' }));
      const note = svg('text', { x: x1 - 4, y: axisY - 6, 'text-anchor': 'end', class: 'lane-header' }, `trace not kept after ${fmtMs(recEnd)} (too long for the page)`);
      root.append(note);
    }

    // The future, veiled; the cursor at the current time.
    this.veil = svg('rect', { x: x0, y: 0, width: 0, height: axisY, fill: '#ffffff', opacity: 0.62, class: 'veil' });
    root.append(this.veil);
    this.cursor = svg('line', { x1: x0, x2: x0, y1: 2, y2: axisY, stroke: COLORS.cursor, 'stroke-width': 2, 'data-testid': 'time-cursor' });
    this.cursorLabel = svg('text', { x: x0, y: 10, class: 'cursor-label', fill: COLORS.cursor }, '');
    root.append(headers, this.cursor, this.cursorLabel);
    root.append(svg('rect', { x: 0, y: 0, width: W, height: H, fill: 'transparent', class: 'hit' }));

    root.addEventListener('click', (ev) => {
      const b = root.getBoundingClientRect();
      const px = ((ev.clientX - b.left) / b.width) * W;
      const ns = ((Math.min(Math.max(px, x0), x1) - x0) / (x1 - x0)) * endNs;
      this.onSeek(ns / 1e6);
    });
    this.root = root;
    this.timeNs = null;
    this.container.replaceChildren(root);
  }

  update(timeNs) {
    if (!this.root || timeNs === this.timeNs) return;
    this.timeNs = timeNs;
    const cx = this.x(timeNs);
    this.cursor.setAttribute('x1', cx);
    this.cursor.setAttribute('x2', cx);
    this.cursor.setAttribute('data-time-ns', String(timeNs));
    this.veil.setAttribute('x', cx);
    this.veil.setAttribute('width', Math.max(0, this.x1 - cx));
    const label = fmtMs(timeNs);
    this.cursorLabel.textContent = label;
    const right = cx > this.x1 - 70;
    this.cursorLabel.setAttribute('x', right ? cx - 4 : cx + 4);
    this.cursorLabel.setAttribute('text-anchor', right ? 'end' : 'start');
  }
}
