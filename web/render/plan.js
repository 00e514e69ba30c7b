// The plan tree: one box per plan node with its EXPLAIN ANALYZE counters, and each
// async request as a labelled, coloured chip on an arrow from requestor to requestee.

import { svg, stateInfo, STATE_ORDER, STATES, flattenPlan, fmtBytes, fmtInt, morphInto } from './util.js';

const PAD = 8;
const INDENT = 14;
const LINE = 15;
const CHIP_W = 160;
const CHIP_H = 20;
const PASSED_H = 16;
const BUS_W = 12;
const GAP = 8;

function isForeign(n) {
  return /Foreign/.test(n.node_type) || n.requests > 0 || n.round_trips > 0;
}

function counterLines(n) {
  const lines = [`rows ${fmtInt(n.rows)} · loops ${n.loops} · time ${n.startup_ms.toFixed(3)}..${n.total_ms.toFixed(3)} ms`];
  if (isForeign(n)) {
    lines.push(`requests ${fmtInt(n.requests)} · waits ${n.waits} · wait time ${n.wait_ms.toFixed(3)} ms`);
    lines.push(`batches ${n.batches} · round trips ${n.round_trips} · sent ${fmtBytes(n.bytes_sent)} · recv ${fmtBytes(n.bytes_received)}`);
  }
  return lines;
}

function server(n) {
  const d = (n.details ?? []).find(([k]) => k === 'Server');
  return d ? d[1] : null;
}

/**
 * Draws the plan into `container` (replacing its content).
 * `passed`: Map request id → Map state → count, the states each request entered during
 * the current step (a step is one event-loop turn, so "Callback pending" and "Complete"
 * are usually passed through inside it).
 */
export function renderPlan(container, snap, passed) {
  const W = Math.max(360, container.clientWidth - 2);
  const rows = flattenPlan(snap.plan);
  const requests = snap.requests ?? [];
  const hasReq = requests.length > 0;
  const reqByNode = new Map();
  for (const r of requests) {
    if (!reqByNode.has(r.requestee)) reqByNode.set(r.requestee, []);
    reqByNode.get(r.requestee).push(r);
  }
  // The model may leave `running` set on nodes of a run that has ended.
  const ended = snap.phase === 'finished' || snap.phase === 'failed';
  const boxRight = W - PAD - (hasReq ? CHIP_W + BUS_W + 2 * GAP : 0);

  // Layout: row heights from the box text and the request chips on that row.
  let y = PAD;
  const pos = new Map();
  for (const row of rows) {
    const n = row.node;
    const lines = counterLines(n);
    const boxH = 8 + LINE * (1 + lines.length) + 2;
    const chips = (reqByNode.get(n.id) ?? []).map((r) => {
      const m = passed?.get(r.id);
      const extra = m ? STATE_ORDER.filter((s) => m.has(s) && s !== r.state) : [];
      return { r, extra, h: CHIP_H + extra.length * (PASSED_H + 2) };
    });
    const chipsH = chips.reduce((a, c) => a + c.h + 4, 0);
    const rowH = Math.max(boxH, chipsH);
    pos.set(n.id, { x: PAD + row.depth * INDENT, y, w: boxRight - PAD - row.depth * INDENT, h: boxH, rowH, lines, chips, n, depth: row.depth });
    y += rowH + GAP;
  }
  const H = y + PAD;

  const root = svg('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: 'plan-svg', role: 'img', 'aria-label': 'plan tree' });
  const defs = svg('defs');
  for (const [k, s] of Object.entries(STATES)) {
    const m = svg('marker', { id: `arrow-${k}`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
    m.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', fill: s.color }));
    defs.append(m);
  }
  root.append(defs);

  // Tree edges (parent → child), drawn first.
  const edges = svg('g', { class: 'plan-edges' });
  for (const row of rows) {
    if (!row.parent) continue;
    const p = pos.get(row.parent.id);
    const c = pos.get(row.node.id);
    const x = p.x + 8;
    edges.append(svg('path', { d: `M${x},${p.y + p.h} V${c.y + 14} H${c.x}`, fill: 'none', stroke: '#94a3b8', 'stroke-width': 1.2 }));
  }
  root.append(edges);

  // Node boxes.
  for (const p of pos.values()) {
    const n = p.n;
    const running = n.running && !ended;
    const g = svg('g', { 'data-testid': 'plan-node', 'data-node': n.id, class: 'plan-node' + (running ? ' running' : '') });
    const title = svg('title', {}, [n.label, ...(n.details ?? []).map(([k, v]) => `${k}: ${v}`)].join('\n'));
    g.append(title);
    g.append(svg('rect', { x: p.x, y: p.y, width: p.w, height: p.h, rx: 5, class: 'box' + (n.async_capable ? ' async' : '') }));
    if (n.async_capable) g.append(svg('rect', { x: p.x, y: p.y, width: 5, height: p.h, rx: 2, fill: STATES.CallbackPending.color }));
    const srv = server(n);
    const head = svg('text', { x: p.x + 10, y: p.y + 5 + LINE - 3, class: 'node-label' });
    head.append(svg('tspan', {}, n.label));
    if (srv) head.append(svg('tspan', { class: 'node-server', dx: 6 }, `@${srv}`));
    g.append(head);
    if (running) {
      const dot = svg('circle', { cx: p.x + p.w - 9, cy: p.y + 10, r: 4.5, class: 'node-running-dot' });
      dot.append(svg('title', {}, 'running: called and not finished'));
      g.append(dot);
    }
    p.lines.forEach((l, i) => g.append(svg('text', { x: p.x + 10, y: p.y + 5 + LINE * (i + 2) - 3, class: 'node-counters', 'data-testid': i === 0 ? 'node-counters' : undefined }, l)));
    root.append(g);
  }

  // Requests: bus from the requestor, chip with the state, arrow into the requestee.
  if (hasReq) {
    const busX = W - PAD - 2;
    const chipX = boxRight + GAP + 6;
    const layer = svg('g', { class: 'requests' });
    const drawnBus = new Set();
    for (const p of pos.values()) {
      let cy = p.y;
      for (const c of p.chips) {
        const r = c.r;
        const st = stateInfo(r.state);
        const from = pos.get(r.requestor);
        const midChip = cy + CHIP_H / 2;
        const g = svg('g', { 'data-testid': 'request', 'data-request': r.id, 'data-requestor': r.requestor, 'data-requestee': r.requestee });
        if (from) {
          const fy = from.y + 14;
          const busKey = `${r.requestor}`;
          if (!drawnBus.has(busKey)) {
            drawnBus.add(busKey);
            g.append(svg('path', { d: `M${from.x + from.w},${fy} H${busX}`, stroke: '#64748b', 'stroke-width': 1.5, fill: 'none' }));
            g.append(svg('circle', { cx: from.x + from.w, cy: fy, r: 3, fill: '#64748b' }));
          }
          g.append(svg('path', { d: `M${busX},${fy} V${midChip} H${chipX + CHIP_W + 3}`, stroke: '#64748b', 'stroke-width': 1.5, fill: 'none' }));
        }
        // arrow from the chip into the requestee's box
        g.append(svg('path', { d: `M${chipX},${midChip} H${p.x + p.w + 1}`, stroke: st.color, 'stroke-width': 2.5, fill: 'none', 'marker-end': `url(#arrow-${r.state})` }));
        const pill = svg('g', { 'data-testid': 'request-state', 'data-state': r.state, 'data-request': r.id, class: 'pill' });
        pill.append(svg('title', {}, `request ${r.id}: ${from ? from.n.label : r.requestor} → ${p.n.label}${r.conn != null ? ` (connection ${snap.connections[r.conn]?.server ?? r.conn})` : ''}\nstate: ${st.label}`));
        pill.append(svg('rect', { x: chipX, y: cy, width: CHIP_W, height: CHIP_H, rx: CHIP_H / 2, fill: st.color }));
        pill.append(svg('text', { x: chipX + 9, y: cy + 14.5, class: 'pill-id', fill: st.text }, `#${r.id}`));
        pill.append(svg('text', { x: chipX + 38, y: cy + 14.5, class: 'pill-text', fill: st.text }, st.label));
        g.append(pill);
        // the states passed through during this step
        let py = cy + CHIP_H + 2;
        const m = passed?.get(r.id);
        for (const s of c.extra) {
          const si = stateInfo(s);
          const pg = svg('g', { 'data-testid': 'request-passed', 'data-state': s, 'data-request': r.id, class: 'pill passed' });
          pg.append(svg('title', {}, `during this step request ${r.id} became ${si.label} ${m.get(s)} time(s)`));
          pg.append(svg('rect', { x: chipX, y: py, width: CHIP_W, height: PASSED_H, rx: 4, fill: '#fff', stroke: si.color, 'stroke-width': 1.5 }));
          pg.append(svg('rect', { x: chipX, y: py, width: 6, height: PASSED_H, rx: 2, fill: si.color }));
          pg.append(svg('text', { x: chipX + 10, y: py + 12, class: 'passed-text', fill: si.color }, `↳ ${si.label} ×${m.get(s)}`));
          g.append(pg);
          py += PASSED_H + 2;
        }
        layer.append(g);
        cy += c.h + 4;
      }
    }
    root.append(layer);
  }
  morphInto(container, root);
}

/** The colour legend for request states (static). */
export function renderLegend(container) {
  const items = STATE_ORDER.map((s) => {
    const i = stateInfo(s);
    const span = document.createElement('span');
    span.className = 'legend-item';
    span.innerHTML = `<i style="background:${i.color}"></i>${i.label}`;
    return span;
  });
  container.replaceChildren(...items);
}
