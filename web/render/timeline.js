// The timeline: one lane per connection (queries in flight, answers arriving), one per
// async request (when it was Waiting, when its callback became pending), and the rows
// leaving the plan. The whole recorded run is drawn once; each render only moves the
// cursor and the veil over the future. Clicking seeks to that time.

import { svg, ticks, tickLabel, mergePx, mergeTicks, STATES, flattenPlan, shortName, requesteeNode, insideScan, fmtMs, drawingScale } from './util.js';
import { traceViews, prepareTraceViews } from './traceview.js';

export const LABEL_W = 104;
const AXIS_H = 22;
/** Room above the lanes for the cursor's time label, which must not cover a header. */
const TOP = 18;
const HEADER_H = 15;
/** The width of a character of a lane header (11 px, bold), for fitting it. */
const HEADER_CHAR_W = 6.4;
/** The thinnest lane that still holds its label (10 px type): below it the panel scrolls. */
export const MIN_LABELED_LANE = 12;

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

/** Bars with a tooltip each, at most, in one timeline (see `layoutTimeline`). */
const TOOLTIP_BARS = 1500;

/**
 * A bar's tooltip is made when the pointer first comes over the bar (one listener for
 * the page): at the load, a <title> per bar drawn was a third of the page's elements
 * (1,239 of 3,636 at 16 shards: the timeline's and the compare view's), each made,
 * filled with its text and styled though few are ever read.
 */
const pendingTips = new WeakMap();
if (typeof document !== 'undefined') {
  document.addEventListener(
    'mouseover',
    (e) => {
      const tip = pendingTips.get(e.target);
      if (!tip) return;
      pendingTips.delete(e.target);
      e.target.append(svg('title', {}, tip()));
    },
    true,
  );
}

/** Draws one lane's intervals (ns) as bars; merged per pixel (always without `titleFn`). */
export function drawBars(parent, intervals, x, y, h, color, titleFn) {
  const px = intervals.map((iv) => [x(iv.start), x(iv.end), iv]);
  if (px.length <= 400 && titleFn) {
    for (const [a, b, iv] of px) {
      const r = svg('rect', { x: a, y, width: Math.max(1, b - a), height: h, fill: color, rx: 1.5 });
      pendingTips.set(r, () => titleFn(iv));
      parent.append(r);
    }
  } else {
    // One path for the lane: thousands of rects are what makes a wide timeline slow.
    const d = mergePx(px.map(([a, b]) => [a, b]))
      .map(([a, b]) => `M${a.toFixed(1)} ${y}h${(b - a).toFixed(1)}v${h}h${(a - b).toFixed(1)}z`)
      .join('');
    if (d) parent.append(svg('path', { d, fill: color }));
  }
}

function drawTicks(parent, times, x, y, h, color, w = 1.5) {
  const ts = mergeTicks(times.map(x));
  // Dense ticks (a tick every few px) would paint the lane solid: draw them faint.
  const span = ts.length > 1 ? ts[ts.length - 1].x - ts[0].x : 0;
  const dense = ts.length > 8 && span / ts.length < 5;
  const d = ts.map((t) => `M${(t.x - w / 2).toFixed(1)} ${y}h${w}v${h}h${-w}z`).join('');
  if (d) parent.append(svg('path', { d, fill: color, opacity: dense ? 0.3 : null }));
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

/**
 * The part of `build` that depends on the recording only (its lanes' intervals and row
 * ticks, traceview.js `prepareTraceViews`: one walk over its trace, which also gives
 * the wire inspector's lines), in tasks of their own (`pause()` yields between parts).
 */
export async function prepareTimeline(rec, pause = async () => {}) {
  await prepareTraceViews(rec, pause);
}

/**
 * The lanes top to bottom, from the recording: a header before each group, one lane per
 * connection, one per async request (named after the node that runs it), and the rows
 * leaving the plan. Each lane carries its intervals up to where the kept trace ends.
 */
function listLanes(rec, plan) {
  const nodes = new Map(flattenPlan(plan).map((r) => [r.node.id, r.node]));
  const { conns, reqs } = traceViews(rec);
  const lanes = [];
  if (conns.length) lanes.push({ header: ['connections: connecting (grey), queries in flight (blue), answers (ticks)', 'connections: connecting (grey), in flight (blue), answers (ticks)', 'connections (grey connecting, blue in flight, ticks answers)'] });
  conns.forEach((l, k) => lanes.push({ kind: 'conn', k, l, label: `${rec.connections[k] ?? 'conn ' + k}` }));
  if (reqs.length) lanes.push({ header: ['async requests: Waiting (bars), Callback pending (ticks)', 'requests: Waiting (bars), Callback pending (ticks)', 'requests (bars Waiting, ticks Callback pending)'] });
  // Each lane names its requestee as PostgreSQL does (the Foreign Scan, not the Result
  // of its qual and projection); a request of that Result to the scan, one node in
  // PostgreSQL, says so.
  for (const r of reqs) {
    const n = requesteeNode(nodes, r.requestee);
    lanes.push({ kind: 'req', r, label: `#${r.id} ${shortName(n)}${insideScan(nodes, r) ? ' (qual)' : ''}` });
  }
  lanes.push({ kind: 'rows', label: 'rows out' });
  return lanes;
}

/**
 * The layout, before anything is drawn: lane and bar heights, the drawing's height, the
 * plot's left and right edges and the time scale `x` (ns → px, clamped to the run).
 */
function layoutTimeline(lanes, W, availH, endNs) {
  const nHeaders = lanes.filter((l) => l.header).length;
  const nLanes = lanes.length - nHeaders;
  // Lanes shrink to fit the panel (16 shards = 33 lanes), but never below a labelled
  // lane: every lane keeps its label, and the panel scrolls instead (64 shards).
  const laneH = Math.max(MIN_LABELED_LANE, Math.min(24, Math.floor((availH - TOP - AXIS_H - nHeaders * HEADER_H - 4) / nLanes)));
  const barH = laneH > 12 ? laneH - 6 : laneH > 7 ? laneH - 3 : Math.max(2, laneH - 1);
  const H = TOP + nHeaders * HEADER_H + nLanes * laneH + AXIS_H + 4;
  const x0 = LABEL_W;
  const x1 = W - 12;
  const x = (ns) => x0 + (Math.min(Math.max(ns, 0), endNs) / endNs) * (x1 - x0);
  // Thousands of bars each with a tooltip (64 shards) take the page ~100 ms to build:
  // past the budget, bars are merged per pixel and go without tooltips.
  const nBars = lanes.reduce((n, l) => n + (l.kind === 'conn' ? l.l.busy.length + l.l.startups.length : l.kind === 'req' ? l.r.waiting.length : 0), 0);
  return { W, H, axisY: H - AXIS_H, x0, x1, x, endNs, nLanes, laneH, barH, tooltips: nBars <= TOOLTIP_BARS };
}

/**
 * Draws the lanes top to bottom: each lane's grid line, label and marks go into `data`,
 * the group headers into `headers` (the caller puts them above the veil).
 */
function drawLanes(lanes, rowsOut, L) {
  const data = svg('g', { class: 'lanes' });
  const headers = svg('g', { class: 'headers' });
  let y = TOP;
  for (const lane of lanes) {
    if (lane.header) {
      // The longest wording that fits the drawing's width (11 px bold: ~6.4 px a
      // character), the full one as its tooltip: never cut off at the edge.
      const room = L.W - 8;
      const text = lane.header.find((t) => t.length * HEADER_CHAR_W <= room) ?? lane.header[lane.header.length - 1];
      const t = svg('text', { x: 4, y: y + 11, class: 'lane-header' }, text);
      if (text.length * HEADER_CHAR_W > room) {
        t.setAttribute('textLength', room);
        t.setAttribute('lengthAdjust', 'spacingAndGlyphs');
      }
      t.append(svg('title', {}, lane.header[0]));
      headers.append(t);
      y += HEADER_H;
      continue;
    }
    data.append(svg('line', { x1: L.x0, x2: L.x1, y1: y + L.laneH - 0.5, y2: y + L.laneH - 0.5, stroke: '#eef2f7' }));
    data.append(laneLabel(lane.label, y, L));
    if (lane.kind === 'conn') drawConnectionLane(data, lane, y, L);
    else if (lane.kind === 'req') drawRequestLane(data, lane, y, L);
    else drawTicks(data, rowsOut.map((r) => r.t), L.x, y + (L.laneH > 8 ? 2 : 0), Math.max(3, L.laneH - (L.laneH > 8 ? 4 : 0)), COLORS.row, 2);
    y += L.laneH;
  }
  return { data, headers };
}

/** A lane's name, right-aligned left of the plot, for the lane at height `y`. */
function laneLabel(text, y, { x0, laneH }) {
  return svg('text', { x: x0 - 6, y: y + laneH / 2 + 4, 'text-anchor': 'end', class: 'lane-label', style: laneH < 14 ? 'font-size:11px' : null }, text);
}

/** A connection's lane: queries in flight (bars), answers arriving (ticks), start-up (grey bars). */
function drawConnectionLane(parent, lane, y, { x, laneH, barH, tooltips }) {
  const by = y + (laneH - barH) / 2;
  drawBars(parent, lane.l.busy, x, by, barH, COLORS.busy, tooltips && ((iv) => `${lane.label}: ${iv.sql}\n${fmtMs(iv.start)} → ${fmtMs(iv.end)}${iv.rows != null ? ` (${iv.rows} rows)` : ''}`));
  drawTicks(parent, lane.l.arrivals.map((a) => a.t), x, y + (laneH > 6 ? 1 : 0), laneH - (laneH > 6 ? 2 : 0), COLORS.arrival, 2);
  drawBars(parent, lane.l.startups, x, by, barH, COLORS.startup, tooltips && ((iv) => `${lane.label}: connecting (start-up packet → ReadyForQuery)\n${fmtMs(iv.start)} → ${fmtMs(iv.end)}`));
}

/** An async request's lane: while it was Waiting (bars), when its callback became pending (ticks). */
function drawRequestLane(parent, lane, y, { x, laneH, barH, tooltips }) {
  const by = y + (laneH - barH) / 2;
  drawBars(parent, lane.r.waiting, x, by, barH, COLORS.waiting, tooltips && ((iv) => `${lane.label} Waiting ${fmtMs(iv.start)} → ${fmtMs(iv.end)}`));
  drawTicks(parent, lane.r.pending.map((p) => p.t), x, y + (laneH > 6 ? 1 : 0), laneH - (laneH > 6 ? 2 : 0), COLORS.pending, 1.5);
}

/** Hatches the part of the run after `recEnd`, whose trace was not kept, and says so. */
function drawUnrecorded(root, { x, x1, axisY }, recEnd) {
  const defs = svg('defs');
  const pat = svg('pattern', { id: 'tl-hatch', width: 8, height: 8, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' });
  pat.append(svg('rect', { width: 3, height: 8, fill: '#e2e8f0' }));
  defs.append(pat);
  root.append(defs);
  const hx = x(recEnd);
  root.append(svg('rect', { x: hx, y: TOP - 4, width: Math.max(0, x1 - hx), height: axisY - TOP + 4, fill: 'url(#tl-hatch)' }));
  root.append(svg('text', { x: x1 - 4, y: axisY - 6, 'text-anchor': 'end', class: 'lane-header' }, `trace not kept after ${fmtMs(recEnd)} (too long for the page)`));
}

export class Timeline {
  constructor(container, onSeek) {
    this.container = container;
    this.onSeek = onSeek;
    this.root = null;
  }

  /** Builds the static part from a recording (call again when the session or the size changes). */
  build(rec, plan) {
    // Laid out at the width divided by the projector's scale, drawn at the real width.
    const scale = drawingScale(this.container);
    const realW = Math.max(400, this.container.clientWidth - 2);
    const W = Math.max(200, realW / scale);
    const availH = Math.max(140, (this.container.clientHeight - 4) / scale);
    const endNs = Math.max(1, rec.totalNs);
    // A run whose trace was too long to keep is drawn up to where the trace stops.
    const recEnd = rec.complete ? endNs : rec.recordedNs;
    const lanes = listLanes(rec, plan);
    const L = layoutTimeline(lanes, W, availH, endNs);
    this.x = L.x;
    this.x0 = L.x0;
    this.x1 = L.x1;
    this.endNs = endNs;

    const root = svg('svg', { width: W * scale, height: L.H * scale, viewBox: `0 0 ${W} ${L.H}`, class: 'timeline-svg', 'data-testid': 'timeline-svg', 'data-scale': scale });
    root.append(svg('rect', { x: L.x0, y: 0, width: L.x1 - L.x0, height: L.axisY, fill: '#fbfdff', class: 'plot-bg' }));
    // Clicks anywhere on the drawing seek (seekOnClick listens on the svg). The hit area
    // lies under everything else, so the pointer reaches a bar's tooltip and a header's.
    root.append(svg('rect', { x: 0, y: 0, width: W, height: L.H, fill: 'transparent', class: 'hit' }));
    drawAxis(root, L.x, L.x0, L.x1, L.axisY, endNs, TOP - 4);
    const { data, headers } = drawLanes(lanes, traceViews(rec).rows, L);
    root.append(data);
    if (!rec.complete) drawUnrecorded(root, L, recEnd);
    // The future, veiled; the cursor at the current time. The lane headers go above the
    // veil, so they read the same at any time.
    this.drawCursor(L);
    root.append(this.veil, headers, this.cursor, this.cursorBack, this.cursorLabel);
    this.seekOnClick(root, L);
    this.root = root;
    this.timeNs = null;
    this.container.replaceChildren(root);
  }

  /** The veil over the future and the cursor with its time label; `update` moves them. */
  drawCursor({ x0, axisY }) {
    this.veil = svg('rect', { x: x0, y: 0, width: 0, height: axisY, fill: '#ffffff', opacity: 0.62, class: 'veil' });
    this.cursor = svg('line', { x1: x0, x2: x0, y1: 2, y2: axisY, stroke: COLORS.cursor, 'stroke-width': 2, 'data-testid': 'time-cursor' });
    // In the band above the first header (TOP), with a white backing: it never covers
    // a header's words ("connecting") nor a lane label.
    this.cursorBack = svg('rect', { x: x0, y: 0, width: 0, height: 13, fill: '#ffffff', opacity: 0.9 });
    this.cursorLabel = svg('text', { x: x0, y: 11, class: 'cursor-label', fill: COLORS.cursor }, '');
  }

  /** A click anywhere on the drawing seeks to the time under it (clamped to the plot). */
  seekOnClick(root, { W, x0, x1, endNs }) {
    root.addEventListener('click', (ev) => {
      const b = root.getBoundingClientRect();
      const px = ((ev.clientX - b.left) / b.width) * W; // W: the drawing's own (viewBox) width
      const ns = ((Math.min(Math.max(px, x0), x1) - x0) / (x1 - x0)) * endNs;
      this.onSeek(ns / 1e6);
    });
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
    const lx = right ? cx - 4 : cx + 4;
    this.cursorLabel.setAttribute('x', lx);
    this.cursorLabel.setAttribute('text-anchor', right ? 'end' : 'start');
    const w = label.length * 6.6 + 4; // 11 px bold digits
    this.cursorBack.setAttribute('x', right ? lx - w + 2 : lx - 2);
    this.cursorBack.setAttribute('width', w);
  }
}
