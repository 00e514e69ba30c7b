// The plan tree: one box per plan node with its EXPLAIN ANALYZE counters, and each
// async request as a labelled, coloured chip on an arrow from requestor to requestee.
// A scenario file's nodes also carry the planner's estimate (`cost=S..T rows=R
// width=W`, EXPLAIN's figures), on a line above the actual ones; an EXPLAIN without
// ANALYZE (`snap.plan_only`) was planned and never run: its boxes show the estimate
// only, as PostgreSQL prints no actual figures for it.
//
// The layout (boxes, edges, chips, arrows) depends only on the plan's shape and the set
// of requests, which do not change during a run; it is built once per session (and on
// resize). Each step then only rewrites the text and attributes that changed: a run has
// thousands of steps, and rebuilding the SVG on each would cost more than the step.

import { svg, stateInfo, STATE_ORDER, STATES, flattenPlan, fmtBytes, fmtInt, setText, drawingScale } from './util.js';

const PAD = 8;
const INDENT = 14;
const LINE = 15;
const CHIP_W = 178;
const CHIP_H = 20;
const PASSED_H = 16;
const BUS_W = 12;
const GAP = 8;
const MAX_PASSED_LINES = 2;
/**
 * Rows a stage of a staged drawing adds (`PlanView.update(…, {staged})`): a 64-shard
 * plan's ~1,400 elements in one frame were its first render's longest block.
 */
const ROWS_PER_STAGE = 16;

function isForeign(n) {
  return /Foreign/.test(n.node_type) || n.requests > 0 || n.round_trips > 0;
}

/**
 * What a foreign scan's byte counters mean (its box's tooltip). They count at the moment
 * the connection table and the wire inspector do: a statement when it goes on the wire,
 * an answer when it has fully arrived, even if the scan reads it later (postgres_fdw
 * reads a batch only when the scan asks for it: that is when "batches" counts it).
 */
const WIRE_COUNTERS =
  'sent / recv: bytes of this scan\'s statements and answers, counted when a statement goes on the wire and when an answer has fully arrived, as the connection table and the wire inspector count them; round trips: its statements sent; batches: the answers it has read (postgres_fdw reads a batch only when the scan asks for it, so an answer can have arrived and not be read yet: the request is still Waiting until ExecAsyncNotify reads it)';

/** The planner's estimate as EXPLAIN prints it (the same numbers as the EXPLAIN panel). */
function estimateLine(e) {
  return `estimate: cost=${e.startup.toFixed(2)}..${e.total.toFixed(2)} rows=${Math.round(e.rows)} width=${e.width}`;
}

/** The line of a node EXPLAIN prints as part of the node below it (a Result over a scan: its target list and qual). */
const FOLDED = 'in EXPLAIN: part of the node below';

/**
 * What each line under a node's label holds, top to bottom: 'estimate' (when the node
 * has one) or, in a plan with estimates, 'folded' (a node EXPLAIN prints as part of the
 * one below, whose estimate is there), then the actual counters ('actual': one line,
 * three for a foreign scan), none of which a plan that never ran has. `shown`:
 * {planOnly, estimates} of the whole plan.
 */
function lineRoles(n, shown) {
  const roles = n.estimate ? ['estimate'] : shown.estimates ? ['folded'] : [];
  if (!shown.planOnly) for (let i = isForeign(n) ? 3 : 1; i > 0; i--) roles.push('actual');
  return roles;
}

/** The text of each line of `lineRoles(n, shown)`. */
function counterLines(n, shown) {
  const lines = n.estimate ? [estimateLine(n.estimate)] : shown.estimates ? [FOLDED] : [];
  if (shown.planOnly) return lines;
  lines.push(`rows ${fmtInt(n.rows)} · loops ${n.loops} · time ${n.startup_ms.toFixed(3)}..${n.total_ms.toFixed(3)} ms`);
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

/** What the layout depends on: plan shape, counter line counts, requests, width. */
function shapeKey(rows, requests, W, shown) {
  let k = `${W}|${shown.planOnly ? 'p' : ''}${shown.estimates ? 'e' : ''}`;
  for (const r of rows) k += `${r.node.id}:${r.depth}:${lineRoles(r.node, shown).length}:${r.node.label},`;
  k += '|';
  for (const q of requests) k += `${q.id}:${q.requestor}>${q.requestee},`;
  return k;
}

/** The requests grouped by the node that runs them (the requestee): their chips sit on its row. */
function requestsByNode(requests) {
  const byNode = new Map();
  for (const r of requests) {
    if (!byNode.has(r.requestee)) byNode.set(r.requestee, []);
    byNode.get(r.requestee).push(r);
  }
  return byNode;
}

/**
 * The layout, before anything is drawn: a box per node (indented by depth, one row each),
 * the right edge of the boxes (the chips and the bus take the column right of it) and
 * the height of the whole tree.
 */
function layoutTree(rows, requests, W, shown) {
  const reqByNode = requestsByNode(requests);
  const boxRight = W - PAD - (requests.length > 0 ? CHIP_W + BUS_W + 2 * GAP : 0);
  let y = PAD;
  const pos = new Map();
  for (const row of rows) {
    const { box, rowH } = layoutRow(row, reqByNode.get(row.node.id) ?? [], boxRight, y, shown);
    pos.set(row.node.id, box);
    y += rowH + GAP;
  }
  return { pos, H: y + PAD, boxRight };
}

/**
 * One node's box at height `y`, and the height of its row. The row fits the box text and
 * the request chips on that row. Each chip gets room below it for the "passed during this
 * step" lines: as much as the box height leaves (up to two lines), and at least one.
 */
function layoutRow(row, reqs, boxRight, y, shown) {
  const n = row.node;
  const roles = lineRoles(n, shown);
  const nLines = Math.max(1, roles.length);
  const boxH = 8 + LINE * (1 + nLines) + 2;
  let passedLines = 0;
  let rowH = boxH;
  if (reqs.length) {
    const room = Math.floor((boxH / reqs.length - CHIP_H - 4) / (PASSED_H + 2));
    passedLines = Math.max(1, Math.min(MAX_PASSED_LINES, room));
    rowH = Math.max(boxH, reqs.length * (CHIP_H + passedLines * (PASSED_H + 2) + 4));
  }
  const box = { x: PAD + row.depth * INDENT, y, w: boxRight - PAD - row.depth * INDENT, h: boxH, nLines, roles, planOnly: shown.planOnly, reqs, passedLines, n };
  return { box, rowH };
}

/** One arrowhead per request state, so that an arrow's head takes the colour of its state. */
function arrowMarkers() {
  const defs = svg('defs');
  for (const [k, s] of Object.entries(STATES)) {
    const m = svg('marker', { id: `arrow-${k}`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
    m.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', fill: s.color }));
    defs.append(m);
  }
  return defs;
}

/** The tree edges (parent → child): down from the parent's box, then right into the child's. */
function drawEdges(rows, pos) {
  const edges = svg('g', { class: 'plan-edges' });
  for (const row of rows) {
    if (!row.parent) continue;
    const p = pos.get(row.parent.id);
    const c = pos.get(row.node.id);
    const x = p.x + 8;
    edges.append(svg('path', { d: `M${x},${p.y + p.h} V${c.y + 14} H${c.x}`, fill: 'none', stroke: '#94a3b8', 'stroke-width': 1.2 }));
  }
  return edges;
}

/**
 * One node's box: the node's details as a tooltip, the async-capable stripe, the label
 * with the foreign server, the running dot and the counter lines (left empty: `apply`
 * fills them). Returns the parts a step changes.
 */
function drawNodeBox(p) {
  const n = p.n;
  const g = svg('g', { 'data-testid': 'plan-node', 'data-node': n.id, class: 'plan-node' });
  const tip = [n.label, ...(n.details ?? []).map(([k, v]) => `${k}: ${v}`)];
  if (n.estimate) tip.push(`the planner's estimate (EXPLAIN's cost=startup..total rows=… width=…)${p.planOnly ? '; EXPLAIN without ANALYZE: planned, never run, so no actual figures' : ''}`);
  if (isForeign(n) && !p.planOnly) tip.push(WIRE_COUNTERS);
  g.append(svg('title', {}, tip.join('\n')));
  g.append(svg('rect', { x: p.x, y: p.y, width: p.w, height: p.h, rx: 5, class: 'box' + (n.async_capable ? ' async' : '') }));
  if (n.async_capable) g.append(svg('rect', { x: p.x, y: p.y, width: 5, height: p.h, rx: 2, fill: STATES.CallbackPending.color }));
  g.append(drawNodeLabel(p));
  const dot = svg('circle', { cx: p.x + p.w - 9, cy: p.y + 10, r: 4.5, class: 'node-running-dot', visibility: 'hidden' });
  dot.append(svg('title', {}, 'running: inside a call right now'));
  g.append(dot);
  const lines = [];
  const firstActual = p.roles.indexOf('actual');
  for (let i = 0; i < p.nLines; i++) {
    const estimate = p.roles[i] === 'estimate' || p.roles[i] === 'folded';
    const testid = estimate ? `node-${p.roles[i]}` : i === firstActual ? 'node-counters' : undefined;
    const t = svg('text', { x: p.x + 10, y: p.y + 5 + LINE * (i + 2) - 3, class: estimate ? 'node-counters node-estimate' : 'node-counters', 'data-testid': testid }, '');
    lines.push(t);
    g.append(t);
  }
  return { g, dot, lines, running: null };
}

/** The first line of a node's box: its label, and "@server" for a foreign scan. */
function drawNodeLabel(p) {
  const srv = server(p.n);
  const head = svg('text', { x: p.x + 10, y: p.y + 5 + LINE - 3, class: 'node-label' });
  head.append(svg('tspan', {}, p.n.label));
  if (srv) head.append(svg('tspan', { class: 'node-server', dx: 6 }, `@${srv}`));
  return head;
}

/**
 * The requests of one requestee's row `p`, in the column right of the boxes: its chips
 * top to bottom, each wired from its requestor, into `layer`; each one's parts a step
 * changes go into `views` by request id. `drawnBus`: the requestors whose bus is drawn.
 */
function drawRowRequests(p, pos, cols, drawnBus, layer, views) {
  let cy = p.y;
  for (const r of p.reqs) {
    // The requestee as PostgreSQL names it: the Foreign Scan a folded Result belongs to.
    const named = p.n.printed_as != null ? (pos.get(p.n.printed_as)?.n ?? p.n) : p.n;
    const { g, view } = drawRequest(r, p, pos.get(r.requestor), cy, cols, drawnBus, named);
    layer.append(g);
    views.set(r.id, view);
    cy += CHIP_H + p.passedLines * (PASSED_H + 2) + 4;
  }
}

/**
 * One request with its chip at height `cy`: the wire from its requestor (`from`, absent
 * when the requestor is not in the plan), the arrow into the requestee's box `p`, the
 * state pill and the lines for the states passed through during a step.
 */
function drawRequest(r, p, from, cy, cols, drawnBus, named) {
  const { chipX } = cols;
  const midChip = cy + CHIP_H / 2;
  const g = svg('g', { 'data-testid': 'request', 'data-request': r.id, 'data-requestor': r.requestor, 'data-requestee': r.requestee });
  if (from) drawWire(g, r, from, midChip, cols, drawnBus);
  // the arrow from the chip into the requestee's box, in the state's colour
  const arrow = svg('path', { d: `M${chipX},${midChip} H${p.x + p.w + 1}`, 'stroke-width': 2.5, fill: 'none' });
  g.append(arrow);
  const { pill, title, bg, idText, label } = drawStatePill(r, chipX, cy);
  g.append(pill);
  // The states passed through during a step (secondary cue): each line is drawn the
  // first time it has something to show (`apply`), not up front: at 64 shards the
  // lines were half the plan's 2,000 elements, and most never show.
  const passed = [];
  for (let i = 0; i < p.passedLines; i++) passed.push({ y: cy + CHIP_H + 2 + i * (PASSED_H + 2), slot: null });
  const fromLabel = from ? from.n.label : String(r.requestor);
  const to = named === p.n ? p.n.label : `${named.label} (its qual and projection, this Result)`;
  const view = { g, r, chipX, pill, title, bg, idText, label, arrow, passed, state: null, conn: undefined, desc: `request ${r.id}: ${fromLabel} → ${to}` };
  return { g, view };
}

/**
 * The wire from a requestor to one of its chips: a bus out of the requestor's box to the
 * right edge (drawn once per requestor: its requests share it), then down the bus and
 * left to the chip at height `midChip`.
 */
function drawWire(g, r, from, midChip, { busX, chipX }, drawnBus) {
  const fy = from.y + 14;
  if (!drawnBus.has(r.requestor)) {
    drawnBus.add(r.requestor);
    g.append(svg('path', { d: `M${from.x + from.w},${fy} H${busX}`, stroke: '#64748b', 'stroke-width': 1.5, fill: 'none' }));
    g.append(svg('circle', { cx: from.x + from.w, cy: fy, r: 3, fill: '#64748b' }));
  }
  g.append(svg('path', { d: `M${busX},${fy} V${midChip} H${chipX + CHIP_W + 3}`, stroke: '#64748b', 'stroke-width': 1.5, fill: 'none' }));
}

/** The request's main label: its id and the state it is in now (filled in by `apply`). */
function drawStatePill(r, chipX, cy) {
  const pill = svg('g', { 'data-testid': 'request-state', 'data-request': r.id, class: 'pill' });
  const title = svg('title', {}, '');
  const bg = svg('rect', { x: chipX, y: cy, width: CHIP_W, height: CHIP_H, rx: CHIP_H / 2 });
  const idText = svg('text', { x: chipX + 9, y: cy + 14.5, class: 'pill-id' }, `#${r.id}`);
  const label = svg('text', { x: chipX + 36, y: cy + 14.5, class: 'pill-text' }, '');
  pill.append(title, bg, idText, label);
  return { pill, title, bg, idText, label };
}

/** One "passed during this step" line at height `py`, hidden until `apply` has a state for it. */
function drawPassedLine(r, chipX, py) {
  const g = svg('g', { 'data-testid': 'request-passed', 'data-request': r.id, class: 'pill passed', visibility: 'hidden' });
  const title = svg('title', {}, '');
  const frame = svg('rect', { x: chipX, y: py, width: CHIP_W, height: PASSED_H, rx: 4, fill: '#fff', 'stroke-width': 1.5 });
  const bar = svg('rect', { x: chipX, y: py, width: 6, height: PASSED_H, rx: 2 });
  const text = svg('text', { x: chipX + 10, y: py + 12, class: 'passed-text' }, '');
  g.append(title, frame, bar, text);
  return { g, title, frame, bar, text, key: '' };
}

export class PlanView {
  /** `container`: the scrolling panel body. */
  constructor(container) {
    this.container = container;
    this.key = null;
    this.width = 0;
  }

  /** Forgets the layout (the panel was resized, or a new session starts). */
  invalidate() {
    this.key = null;
    this.width = 0;
    this.layout = null;
  }

  /**
   * Shows `snap`. `passed`: Map request id → Map state → count, the states each request
   * entered during the current step besides the one it is in now (the secondary cue:
   * a step can take a request through several states, e.g. Complete then Callback
   * pending again when the next batch is already buffered).
   * `staged`: a new layout draws its first ROWS_PER_STAGE rows only, and `drawMore`
   * the others, a stage at a time (a wide plan's first drawing); an update that is not
   * staged draws whatever rows are still missing first.
   */
  update(snap, passed, { staged = false } = {}) {
    // The width is read only when the layout is (re)built: reading it on every step
    // would force a layout of the page in the middle of the render.
    if (!this.width) {
      // Laid out at the width divided by the projector's scale, drawn at the real width.
      this.scale = drawingScale(this.container);
      this.width = Math.max(360, (this.container.clientWidth - 2) / this.scale);
    }
    const rows = flattenPlan(snap.plan);
    const requests = snap.requests ?? [];
    // What the boxes show besides the actual counters (the same for a whole session).
    const shown = { planOnly: !!snap.plan_only, estimates: rows.some((r) => r.node.estimate) };
    const key = `${shapeKey(rows, requests, this.width, shown)}|${this.scale}`;
    if (key !== this.key) {
      this.build(rows, requests, shown);
      this.key = key;
      this.drawRows(staged ? ROWS_PER_STAGE : Infinity);
    } else if (!staged) this.drawRows(Infinity);
    this.shows = [rows, requests, snap, passed, shown];
    this.apply(...this.shows);
  }

  /** Rows of the layout not drawn yet (a staged drawing under way). */
  undrawn() {
    return this.layout ? this.layout.boxes.length - this.layout.drawn : 0;
  }

  /**
   * The next stage of a staged drawing: ROWS_PER_STAGE more rows, showing what the last
   * `update` showed. True while rows remain.
   */
  drawMore() {
    if (!this.undrawn()) return false;
    this.drawRows(ROWS_PER_STAGE);
    this.apply(...this.shows);
    return this.undrawn() > 0;
  }

  /**
   * Lays the tree out and draws what does not depend on the rows drawn: the svg at its
   * full size (so rows drawn later change no size: the browser lays out only what they
   * add), the arrowheads and the edges, and the layers the rows' boxes and requests go
   * into (`drawRows`), the boxes under the requests. `this.nodes` and `this.requests`
   * keep the elements a step changes, for `apply`.
   */
  build(rows, requests, shown) {
    const W = this.width;
    const { pos, H, boxRight } = layoutTree(rows, requests, W, shown);
    const k = this.scale ?? 1;
    const root = svg('svg', { width: W * k, height: H * k, viewBox: `0 0 ${W} ${H}`, class: 'plan-svg', role: 'img', 'aria-label': 'plan tree', 'data-scale': k });
    // Edges first, so the boxes are drawn over their ends.
    const boxLayer = svg('g', { class: 'plan-boxes' });
    const requestLayer = svg('g', { class: 'requests' });
    root.append(arrowMarkers(), drawEdges(rows, pos), boxLayer, requestLayer);
    this.nodes = new Map();
    this.requests = new Map();
    const cols = { busX: W - PAD - 2, chipX: boxRight + GAP + 6 };
    this.layout = { pos, boxes: [...pos.values()], drawn: 0, cols, drawnBus: new Set(), boxLayer, requestLayer };
    this.container.replaceChildren(root);
  }

  /** Draws the next `n` rows of the layout: each one's box and the requests to it. */
  drawRows(n) {
    const l = this.layout;
    const end = Math.min(l.boxes.length, l.drawn + n);
    for (; l.drawn < end; l.drawn++) {
      const p = l.boxes[l.drawn];
      const v = drawNodeBox(p);
      l.boxLayer.append(v.g);
      this.nodes.set(p.n.id, v);
      drawRowRequests(p, l.pos, l.cols, l.drawnBus, l.requestLayer, this.requests);
    }
  }

  apply(rows, requests, snap, passed, shown) {
    for (const { node: n } of rows) {
      const v = this.nodes.get(n.id);
      if (!v) continue;
      if (v.running !== n.running) {
        v.running = n.running;
        v.g.classList.toggle('running', n.running);
        v.dot.setAttribute('visibility', n.running ? 'visible' : 'hidden');
      }
      // A step changes the counters of a few nodes: the others are not formatted again.
      const counters = `${n.rows},${n.loops},${n.startup_ms},${n.total_ms},${n.requests},${n.waits},${n.wait_ms},${n.batches},${n.round_trips},${n.bytes_sent},${n.bytes_received}`;
      if (v.counters !== counters) {
        v.counters = counters;
        const lines = counterLines(n, shown);
        for (let i = 0; i < v.lines.length; i++) setText(v.lines[i], lines[i] ?? '');
      }
      // The exact byte counts, for checking the panels against each other (e2e).
      if (v.bytes !== `${n.bytes_sent}/${n.bytes_received}`) {
        v.bytes = `${n.bytes_sent}/${n.bytes_received}`;
        v.g.dataset.sent = String(n.bytes_sent);
        v.g.dataset.recv = String(n.bytes_received);
      }
    }
    for (const r of requests) {
      const v = this.requests.get(r.id);
      if (!v) continue;
      if (v.state !== r.state || v.conn !== r.conn) {
        v.state = r.state;
        v.conn = r.conn;
        const st = stateInfo(r.state);
        v.pill.setAttribute('data-state', r.state);
        v.bg.setAttribute('fill', st.color);
        v.idText.setAttribute('fill', st.text);
        v.label.setAttribute('fill', st.text);
        v.label.textContent = st.label;
        v.arrow.setAttribute('stroke', st.color);
        v.arrow.setAttribute('marker-end', `url(#arrow-${STATES[r.state] ? r.state : 'Idle'})`);
        const conn = r.conn != null ? ` (connection ${snap.connections?.[r.conn]?.server ?? r.conn})` : '';
        v.title.textContent = `${v.desc}${conn}\nstate now: ${st.label}`;
      }
      // passed: the states entered during this step other than the current one
      const m = passed?.get(r.id);
      const extra = m ? STATE_ORDER.filter((s) => m.has(s) && s !== r.state) : [];
      for (let i = 0; i < v.passed.length; i++) {
        // the last line takes the rest when there are more states than lines
        const here = i === v.passed.length - 1 ? extra.slice(i) : extra.slice(i, i + 1);
        let slot = v.passed[i].slot;
        if (!slot) {
          if (!here.length) continue; // not drawn yet: nothing to hide
          slot = v.passed[i].slot = drawPassedLine(v.r, v.chipX, v.passed[i].y);
          v.g.append(slot.g);
        }
        const key = here.map((s) => `${s}${m.get(s)}`).join(',');
        if (key === slot.key) continue;
        slot.key = key;
        if (!here.length) {
          slot.g.setAttribute('visibility', 'hidden');
          slot.g.removeAttribute('data-state');
          continue;
        }
        const si = stateInfo(here[0]);
        slot.g.setAttribute('visibility', 'visible');
        slot.g.setAttribute('data-state', here[0]);
        slot.frame.setAttribute('stroke', si.color);
        slot.bar.setAttribute('fill', si.color);
        slot.text.setAttribute('fill', si.color);
        slot.text.textContent = here.length === 1 ? `↳ ${si.label} ×${m.get(here[0])}` : `↳ ${si.label} ×${m.get(here[0])} +${here.length - 1} more`;
        slot.title.textContent = `during this step request ${r.id} also became: ${here.map((s) => `${stateInfo(s).label} ×${m.get(s)}`).join(', ')}`;
      }
    }
  }
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
