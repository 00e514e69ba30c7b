// The compare view: the synchronous run above, the asynchronous run below, on one time
// axis; each run's total as a bar with its time; the lower bound as a vertical line.
// The live drawer draws its measured runs with the same plot (renderComparePlot).

import { svg, esc, drawingScale } from './util.js';
import { connectionIntervals } from './traceview.js';
import { drawBars, drawAxis, COLORS, LABEL_W, MIN_LABELED_LANE } from './timeline.js';

const AXIS_H = 22;
/**
 * Bars with a tooltip each, at most, in one plot (as the timeline's budget): past it,
 * each lane's bars are merged per pixel into one path without tooltips. At 64 shards
 * the two runs have ~6,000 bars, and a rect and a title each made the plot 14,000
 * elements: a 150 ms block to draw, and every later query of the page slower.
 */
const TOOLTIP_BARS = 1500;
export const SYNC_COLOR = '#64748b';
export const ASYNC_COLOR = '#15803d';

function ms(ns) {
  return (ns / 1e6).toFixed(3);
}

/** Shows the comparison `cmp` of scenario `scenarioId`: the totals line and the plot. */
export function renderCompare(container, cmp, scenarioId) {
  renderTotals(container.querySelector('.compare-head'), cmp);
  renderComparePlot(container.querySelector('.compare-plot'), {
    runs: [
      { name: 'sync', key: 'sync', ns: cmp.sync_ns, trace: cmp.sync_trace, color: SYNC_COLOR },
      { name: 'async', key: 'async', ns: cmp.async_ns, trace: cmp.async_trace, color: ASYNC_COLOR },
    ],
    connections: cmp.connections,
    bound: { ns: cmp.bound_ns, limitPct: cmp.limit_pct },
  });
  container.dataset.scenario = scenarioId;
}

/**
 * Runs on one time axis, each a total bar over its connection lanes (plain data, so
 * the live drawer draws its measured runs with it too): `runs` [{name, key, ns, trace,
 * color, endNs}] (the trace's times from the run's start; lanes go on to `endNs` when a
 * run's work outlasts the time its bar shows), `connections` the lane names,
 * `bound` {ns, limitPct} or null, `testid` of the svg, `labelW` room for run names.
 */
export function renderComparePlot(plot, { runs, connections, bound = null, testid = 'compare-svg', labelW = LABEL_W }) {
  // Laid out at the width divided by the projector's scale, drawn at the real width.
  const scale = drawingScale(plot);
  // Room for the longest run name (13 px bold: ~8 px a character) and lane name, so no
  // name runs into its bar ("+parallel_commit").
  const names = Math.max(...runs.map((r) => r.name.length * 8 + 14), ...connections.map((c) => String(c).length * 7 + 12));
  const L = layoutCompare(runs, connections.length, bound, plot, Math.max(labelW, names), scale);
  // Each run's lanes, from its trace (computed once: counted, then drawn).
  const lanes = runs.map((run) => connectionIntervals(run.trace, L.n, run.endNs ?? run.ns));
  const nBars = lanes.flat().reduce((n, l) => n + l.busy.length + l.startups.length, 0);
  L.tooltips = nBars <= TOOLTIP_BARS;
  const root = svg('svg', { width: L.W * scale, height: L.H * scale, viewBox: `0 0 ${L.W} ${L.H}`, class: 'compare-svg', 'data-testid': testid, 'data-scale': scale });
  root.append(svg('rect', { x: L.x0, y: L.top - 4, width: L.x1 - L.x0, height: runs.length * L.groupH, fill: '#fbfdff' }));
  drawAxis(root, L.x, L.x0, L.x1, L.axisY, L.maxNs, L.top - 4);
  runs.forEach((run, gi) => root.append(drawRun(run, lanes[gi], L.top + gi * L.groupH, connections, L)));
  const label = bound ? drawBound(bound, L) : null;
  if (label) {
    root.append(label.g);
    placeBoundLabel(label, L, plot);
  }
  plot.replaceChildren(root);
}

/** The line above the plot: both totals, the gain, the limit and the verdict. */
function renderTotals(head, cmp) {
  const faster = cmp.async_ns < cmp.sync_ns;
  head.innerHTML = `
    <span class="cmp-item sync">sync <b data-testid="compare-sync-ms" data-ns="${cmp.sync_ns}">${ms(cmp.sync_ns)} ms</b></span>
    <span class="cmp-item async">async <b data-testid="compare-async-ms" data-ns="${cmp.async_ns}">${ms(cmp.async_ns)} ms</b></span>
    <span class="cmp-item gain ${faster ? 'pos' : 'neg'}">gain <b data-testid="compare-gain">${cmp.gain_pct.toFixed(1)}%</b></span>
    <span class="cmp-item limit">limit <b data-testid="compare-limit">${cmp.limit_pct.toFixed(1)}%</b> (lower bound ${ms(cmp.bound_ns)} ms)</span>
    <span class="cmp-item verdict">${faster ? `async is <b>${(cmp.sync_ns / Math.max(1, cmp.async_ns)).toFixed(2)}×</b> faster` : cmp.async_ns === cmp.sync_ns ? 'no difference' : 'async is slower'}</span>`;
}

/**
 * The layout, before anything is drawn: one time scale `x` for all runs (a little past
 * the longest total and the bound), and the height of a run's group (its total bar,
 * then one lane per connection) so that every group fits the panel.
 */
function layoutCompare(runs, n, bound, plot, labelW, scale) {
  const W = Math.max(200, Math.max(400, plot.clientWidth - 2) / scale);
  const availH = Math.max(150, (plot.clientHeight - 4) / scale);
  const groups = runs.length;
  const maxNs = Math.max(...runs.map((r) => Math.max(r.ns, r.endNs ?? 0)), bound?.ns ?? 0, 1) * 1.02;
  const x0 = labelW;
  const x1 = W - 12;
  const x = (ns) => x0 + (Math.min(Math.max(ns, 0), maxNs) / maxNs) * (x1 - x0);
  const barH = 22;
  // Never below a labelled lane: the plot scrolls rather than drop a connection's name.
  const laneH = Math.max(MIN_LABELED_LANE, Math.min(18, Math.floor((availH - AXIS_H - groups * (barH + 8) - 26) / Math.max(1, groups * n))));
  const groupH = barH + 6 + n * laneH + 8;
  // The bound's label has a band of its own above the runs (see `placeBoundLabel`).
  const top = bound ? 24 : 18;
  const H = top + groups * groupH + AXIS_H + 6;
  return { W, H, x0, x1, x, maxNs, n, barH, laneH, groupH, top, axisY: top + groups * groupH };
}

/** One run's group at height `gy`: its total bar, its connection lanes and a dashed line where it ends. */
function drawRun(run, lanes, gy, connections, L) {
  const g = svg('g', { 'data-testid': `compare-run-${run.key}`, 'data-ns': run.ns });
  drawTotalBar(g, run, gy, L);
  drawRunLanes(g, run, lanes, gy + L.barH + 6, connections, L);
  g.append(svg('line', { x1: L.x(run.ns), x2: L.x(run.ns), y1: gy, y2: gy + L.groupH - 6, stroke: run.color, 'stroke-width': 1.5, 'stroke-dasharray': '3 2' }));
  return g;
}

/** The run's total as a bar from 0, named on the left, its time inside the bar when it fits. */
function drawTotalBar(g, run, gy, { x, x0, barH }) {
  const bw = x(run.ns) - x0;
  g.append(svg('rect', { x: x0, y: gy, width: Math.max(2, bw), height: barH, rx: 3, fill: run.color, 'data-testid': `compare-bar-${run.key}` }));
  g.append(svg('text', { x: 6, y: gy + barH / 2 + 5, class: 'cmp-run-label' }, run.name));
  const inside = bw > 90;
  g.append(svg('text', { x: inside ? x0 + bw - 6 : x0 + bw + 6, y: gy + barH / 2 + 5, 'text-anchor': inside ? 'end' : 'start', class: 'cmp-bar-label', fill: inside ? '#fff' : '#0f172a' }, `${ms(run.ns)} ms`));
}

/**
 * One lane per connection from height `top` (`lanes`: the run's connection intervals),
 * each labelled: start-up and queries in flight as bars, with tooltips within the budget.
 */
function drawRunLanes(g, run, lanes, top, connections, { x, x0, x1, laneH, tooltips }) {
  lanes.forEach((l, k) => {
    const ly = top + k * laneH;
    g.append(svg('text', { x: x0 - 6, y: ly + laneH / 2 + 4, 'text-anchor': 'end', class: 'lane-label', style: laneH < 14 ? 'font-size:11px' : null }, connections[k] ?? `conn ${k}`));
    g.append(svg('line', { x1: x0, x2: x1, y1: ly + laneH - 0.5, y2: ly + laneH - 0.5, stroke: '#eef2f7' }));
    drawBars(g, l.busy, x, ly + 1, Math.max(3, laneH - 3), COLORS.busy, tooltips && ((iv) => `${run.name} ${connections[k]}: ${iv.sql}\n${ms(iv.start)} → ${ms(iv.end)} ms`));
    drawBars(g, l.startups, x, ly + 1, Math.max(3, laneH - 3), COLORS.startup, tooltips && ((iv) => `${run.name} ${connections[k]}: connecting\n${ms(iv.start)} → ${ms(iv.end)} ms`));
  });
}

/** The limit: the lower bound as a vertical line across the runs, and its label (placed once drawn). */
function drawBound({ ns, limitPct }, { x, top, axisY }) {
  const bx = x(ns);
  const g = svg('g', { 'data-testid': 'compare-bound', 'data-ns': ns });
  g.append(svg('line', { x1: bx, x2: bx, y1: top - 18, y2: axisY, stroke: COLORS.bound, 'stroke-width': 2, 'stroke-dasharray': '6 3' }));
  const back = svg('rect', { x: 0, y: top - 20, width: 0, height: 15, fill: '#ffffff' });
  const words = [`lower bound ${ms(ns)} ms = limit ${limitPct.toFixed(1)}%`, `bound ${ms(ns)} ms = limit ${limitPct.toFixed(1)}%`, `limit ${limitPct.toFixed(1)}%`];
  const text = svg('text', { x: bx + 5, y: top - 8, 'text-anchor': 'start', class: 'bound-label', fill: COLORS.bound, 'data-testid': 'compare-bound-label' }, words[0]);
  g.append(svg('title', {}, words[0]), back, text);
  return { g, text, back, bx, words };
}

/**
 * The width of `text`, an svg text element of a plot not yet in the page, measured in a
 * small hidden svg of the plot's kind put in `plot` for the time it takes: the browser
 * lays out that one element. Measured in the new plot once it was in the page, it laid
 * out the whole plot inside the comparison's task (at 64 shards ~1,000 elements: half
 * the task), which the browser does in its own frame anyway.
 */
function measureAlone(text, plot) {
  const home = text.parentNode;
  const next = text.nextSibling;
  const probe = svg('svg', { class: 'compare-svg', width: 0, height: 0, style: 'position:absolute;visibility:hidden' });
  probe.append(text);
  plot.append(probe);
  try {
    return text.getBBox().width;
  } finally {
    probe.remove();
    home.insertBefore(text, next);
  }
}

/**
 * Puts the bound's label where it fits whole, measured once drawn: right of the line,
 * else left of it, else as far as the drawing allows, on a white backing so the dashed
 * line never runs through its words (fetch size 1: the bound near the left edge, a long
 * label).
 */
function placeBoundLabel({ text, back, bx, words }, { W }, plot) {
  const width = () => {
    try {
      return measureAlone(text, plot);
    } catch {
      return text.textContent.length * 7.2;
    }
  };
  // The longest wording that fits the drawing (a narrow panel with A+): never cut off.
  let w = width();
  for (const shorter of words.slice(1)) {
    if (w <= W - 4) break;
    text.textContent = shorter;
    w = width();
  }
  let left;
  if (bx + 5 + w <= W - 2) left = bx + 5;
  else if (bx - 5 - w >= 2) left = bx - 5 - w;
  else left = Math.max(2, Math.min(W - 2 - w, bx - w / 2));
  text.setAttribute('x', left);
  text.setAttribute('text-anchor', 'start');
  back.setAttribute('x', left - 3);
  back.setAttribute('width', w + 6);
  text.parentNode.dataset.labelLeft = String(left);
  text.parentNode.dataset.labelRight = String(left + w);
}

/** Why there is nothing to compare (not an error): an EXPLAIN without ANALYZE runs nothing. */
export function renderCompareNote(container, message) {
  container.querySelector('.compare-head').innerHTML = `<span class="none" data-testid="compare-note">${esc(message)}</span>`;
  container.querySelector('.compare-plot').replaceChildren();
}

export function renderCompareError(container, message) {
  container.querySelector('.compare-head').innerHTML = `<span class="error-inline">compare failed: ${esc(message)}</span>`;
  container.querySelector('.compare-plot').replaceChildren();
}
