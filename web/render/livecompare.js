// Live compare: the scenario run live twice per behaviour, sync (async_capable off) then
// async, and their measured times side by side. The model part (liveComparison) turns
// runLive results into plain data; the render part draws it with the simulated compare's
// plot (renderComparePlot), without its lower bound: that is the model's, not the shards'.

import { esc } from './util.js';
import { renderComparePlot } from './compare.js';

/** Colours per behaviour and mode: sync grey, async green, improved a shade darker. */
const COLORS = {
  sync: ['#64748b', '#334155'],
  async: ['#15803d', '#0f766e'],
};

/** A live run's trace with times from its first event (the live clock is performance.now()). */
export function fromStart(trace) {
  const t0 = trace.length ? trace[0].time_ns : 0;
  return trace.map((e) => ({ ...e, time_ns: e.time_ns - t0 }));
}

/**
 * The runs to measure: the behaviour on screen (`behaviour`: pg15, improved or custom,
 * with `knobs`), then `improved` unless that is the one on screen; each sync then async.
 */
export function measurePlan({ behaviour, knobs, improvedKnobs }) {
  const behaviours = [{ behaviour, knobs }];
  if (behaviour !== 'improved') behaviours.push({ behaviour: 'improved', knobs: improvedKnobs });
  return behaviours.flatMap((b) => ['sync', 'async'].map((mode) => ({ ...b, mode })));
}

function gainPct(syncMs, asyncMs) {
  return 100 * (1 - asyncMs / Math.max(syncMs, 1e-6));
}

/**
 * Plain data from the measured runs ([{behaviour, mode, r}] with `r` a runLive result):
 * per behaviour, both runs' Execution Time (EXPLAIN's, the bars) and total to the last
 * COMMIT, the gain of async in each, and whether both returned the same rows.
 */
export function liveComparison(scenario, measured, at = new Date()) {
  const pairs = [];
  for (const m of measured) {
    let p = pairs.find((x) => x.behaviour === m.behaviour);
    if (!p) pairs.push((p = { behaviour: m.behaviour }));
    p[m.mode] = { executionMs: m.r.execution_ms, totalMs: m.r.total_ms, rows: m.r.rows, trace: fromStart(m.r.trace) };
  }
  for (const p of pairs) {
    p.gainPct = gainPct(p.sync.executionMs, p.async.executionMs);
    p.totalGainPct = gainPct(p.sync.totalMs, p.async.totalMs);
    p.sameRows = JSON.stringify(p.sync.rows) === JSON.stringify(p.async.rows);
    p.nRows = p.sync.rows.length;
  }
  return { scenario, at: at.toLocaleTimeString(), pairs, connections: measured[0]?.r.connections ?? [] };
}

/** The compare box: a line per behaviour (times and gain), what was measured, then the plot. */
export function renderLiveCompare(box, cmp) {
  box.querySelector('.live-compare-head').innerHTML = cmp.pairs.map(pairHtml).join('') + noteHtml(cmp);
  box.classList.add('measured');
  renderComparePlot(box.querySelector('.live-compare-plot'), {
    runs: cmp.pairs.flatMap((p, bi) => ['sync', 'async'].map((mode) => plotRun(p, mode, bi))),
    connections: cmp.connections,
    testid: 'live-compare-svg',
    labelW: 132,
  });
}

function plotRun(p, mode, bi) {
  const run = p[mode];
  return {
    name: `${p.behaviour} ${mode}`,
    key: `live-${p.behaviour}-${mode}`,
    ns: Math.round(run.executionMs * 1e6),
    endNs: Math.round(run.totalMs * 1e6),
    trace: run.trace,
    color: COLORS[mode][Math.min(bi, 1)],
  };
}

function pairHtml(p) {
  const b = esc(p.behaviour);
  const faster = p.async.executionMs < p.sync.executionMs;
  const rows = p.sameRows ? '' : ' <span class="error-inline">the two runs returned different rows</span>';
  return `<div class="cmp-line" data-testid="live-compare-${b}">
    <span class="cmp-item beh"><b>${b}</b></span>
    <span class="cmp-item sync">sync <b data-testid="live-compare-${b}-sync-ms" data-ms="${p.sync.executionMs}">${p.sync.executionMs.toFixed(3)} ms</b></span>
    <span class="cmp-item async">async <b data-testid="live-compare-${b}-async-ms" data-ms="${p.async.executionMs}">${p.async.executionMs.toFixed(3)} ms</b></span>
    <span class="cmp-item gain ${faster ? 'pos' : 'neg'}">gain <b data-testid="live-compare-${b}-gain">${p.gainPct.toFixed(1)}%</b></span>
    <span class="cmp-item total">to the last COMMIT ${p.sync.totalMs.toFixed(3)} → ${p.async.totalMs.toFixed(3)} ms (${p.totalGainPct.toFixed(1)}%)</span>${rows}
  </div>`;
}

function noteHtml(cmp) {
  const runs = cmp.pairs.length * 2;
  return `<p class="live-compare-note" data-testid="live-compare-note">Real times measured on the live shards at ${esc(cmp.at)}: ${esc(cmp.scenario)}, ${runs} runs one after another (sync, then async), <b>one measurement each</b>: with shards this close (no round trip added), one run's noise can be as large as the difference, so run it again to see the spread. The bars are EXPLAIN's Execution Time (connection set-up to the CLOSEs); the COMMITs after it are drawn in the lanes, past the dashed line. No lower bound here: that is the simulator's model.</p>`;
}
