// The compare view: the synchronous run above, the asynchronous run below, on one time
// axis; each run's total as a bar with its time; the lower bound as a vertical line.

import { svg, esc } from './util.js';
import { connectionIntervals } from './traceview.js';
import { drawBars, drawAxis, COLORS, LABEL_W } from './timeline.js';

const AXIS_H = 22;

function ms(ns) {
  return (ns / 1e6).toFixed(3);
}

export function renderCompare(container, cmp, scenarioId) {
  const head = container.querySelector('.compare-head');
  const plot = container.querySelector('.compare-plot');
  const faster = cmp.async_ns < cmp.sync_ns;
  head.innerHTML = `
    <span class="cmp-item sync">sync <b data-testid="compare-sync-ms" data-ns="${cmp.sync_ns}">${ms(cmp.sync_ns)} ms</b></span>
    <span class="cmp-item async">async <b data-testid="compare-async-ms" data-ns="${cmp.async_ns}">${ms(cmp.async_ns)} ms</b></span>
    <span class="cmp-item gain ${faster ? 'pos' : 'neg'}">gain <b data-testid="compare-gain">${cmp.gain_pct.toFixed(1)}%</b></span>
    <span class="cmp-item limit">limit <b data-testid="compare-limit">${cmp.limit_pct.toFixed(1)}%</b> (lower bound ${ms(cmp.bound_ns)} ms)</span>
    <span class="cmp-item verdict">${faster ? `async is <b>${(cmp.sync_ns / Math.max(1, cmp.async_ns)).toFixed(2)}×</b> faster` : cmp.async_ns === cmp.sync_ns ? 'no difference' : 'async is slower'}</span>`;

  const W = Math.max(400, plot.clientWidth - 2);
  const availH = Math.max(150, plot.clientHeight - 4);
  const n = cmp.connections.length;
  const maxNs = Math.max(cmp.sync_ns, cmp.async_ns, cmp.bound_ns, 1) * 1.02;
  const x0 = LABEL_W;
  const x1 = W - 12;
  const x = (ns) => x0 + (Math.min(Math.max(ns, 0), maxNs) / maxNs) * (x1 - x0);
  const barH = 22;
  const titleH = 0;
  const laneH = Math.max(6, Math.min(18, Math.floor((availH - AXIS_H - 2 * (barH + 8) - 26 - 2 * titleH) / Math.max(1, 2 * n))));
  const groupH = barH + 6 + n * laneH + 8;
  const top = 18;
  const H = top + 2 * groupH + AXIS_H + 6;

  const root = svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'compare-svg', 'data-testid': 'compare-svg' });
  root.append(svg('rect', { x: x0, y: top - 4, width: x1 - x0, height: 2 * groupH, fill: '#fbfdff' }));
  const axisY = top + 2 * groupH;
  drawAxis(root, x, x0, x1, axisY, maxNs, top - 4);

  const runs = [
    { name: 'sync', ns: cmp.sync_ns, trace: cmp.sync_trace, color: '#64748b' },
    { name: 'async', ns: cmp.async_ns, trace: cmp.async_trace, color: '#15803d' },
  ];
  runs.forEach((run, gi) => {
    const gy = top + gi * groupH;
    const g = svg('g', { 'data-testid': `compare-run-${run.name}`, 'data-ns': run.ns });
    const bw = x(run.ns) - x0;
    g.append(svg('rect', { x: x0, y: gy, width: Math.max(2, bw), height: barH, rx: 3, fill: run.color, 'data-testid': `compare-bar-${run.name}` }));
    g.append(svg('text', { x: 6, y: gy + barH / 2 + 5, class: 'cmp-run-label' }, run.name));
    const label = `${ms(run.ns)} ms`;
    const inside = bw > 90;
    g.append(svg('text', { x: inside ? x0 + bw - 6 : x0 + bw + 6, y: gy + barH / 2 + 5, 'text-anchor': inside ? 'end' : 'start', class: 'cmp-bar-label', fill: inside ? '#fff' : '#0f172a' }, label));
    const lanes = connectionIntervals(run.trace, n, run.ns);
    const every = Math.ceil(11 / laneH);
    lanes.forEach((l, k) => {
      const ly = gy + barH + 6 + k * laneH;
      if (k % every === 0) g.append(svg('text', { x: x0 - 6, y: ly + laneH / 2 + 4, 'text-anchor': 'end', class: 'lane-label', style: laneH < 12 ? 'font-size:10px' : null }, cmp.connections[k] ?? `conn ${k}`));
      g.append(svg('line', { x1: x0, x2: x1, y1: ly + laneH - 0.5, y2: ly + laneH - 0.5, stroke: '#eef2f7' }));
      drawBars(g, l.busy, x, ly + 1, Math.max(3, laneH - 3), COLORS.busy, (iv) => `${run.name} ${cmp.connections[k]}: ${iv.sql}\n${ms(iv.start)} → ${ms(iv.end)} ms`);
      drawBars(g, l.startups, x, ly + 1, Math.max(3, laneH - 3), COLORS.startup, (iv) => `${run.name} ${cmp.connections[k]}: connecting\n${ms(iv.start)} → ${ms(iv.end)} ms`);
    });
    // end of the run
    g.append(svg('line', { x1: x(run.ns), x2: x(run.ns), y1: gy, y2: gy + groupH - 6, stroke: run.color, 'stroke-width': 1.5, 'stroke-dasharray': '3 2' }));
    root.append(g);
  });

  // The limit: the lower bound as a vertical line across both runs.
  const bx = x(cmp.bound_ns);
  const bound = svg('g', { 'data-testid': 'compare-bound', 'data-ns': cmp.bound_ns });
  bound.append(svg('line', { x1: bx, x2: bx, y1: top - 14, y2: axisY, stroke: COLORS.bound, 'stroke-width': 2, 'stroke-dasharray': '6 3' }));
  const right = bx > x1 - 260;
  bound.append(svg('text', { x: right ? bx - 5 : bx + 5, y: top - 5, 'text-anchor': right ? 'end' : 'start', class: 'bound-label', fill: COLORS.bound }, `lower bound ${ms(cmp.bound_ns)} ms = limit ${cmp.limit_pct.toFixed(1)}%`));
  root.append(bound);
  plot.replaceChildren(root);
  container.dataset.scenario = scenarioId;
}

export function renderCompareError(container, message) {
  container.querySelector('.compare-head').innerHTML = `<span class="error-inline">compare failed: ${esc(message)}</span>`;
  container.querySelector('.compare-plot').replaceChildren();
}
