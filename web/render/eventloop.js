// The event loop (what it waits on, what fired, the FIFO of waiting requests) and the
// state of each connection.

import { esc, fmtBytes, stateInfo, flattenPlan, shortName, morphHtml } from './util.js';

export function renderEventLoop(container, snap) {
  const nodes = new Map(flattenPlan(snap.plan).map((r) => [r.node.id, r.node]));
  const reqs = new Map((snap.requests ?? []).map((r) => [r.id, r]));
  const conns = snap.connections ?? [];
  const el = snap.event_loop ?? { wait_set: [], waiting: [], fired: [], max_events: 0 };
  const connName = (k) => conns[k]?.server ?? `conn ${k}`;
  const reqChip = (id) => {
    const r = reqs.get(id);
    const node = r ? nodes.get(r.requestee) : null;
    const st = stateInfo(r?.state);
    return `<span class="chip req" data-request="${id}" style="border-color:${st.color}" title="${esc(node?.label ?? '')} (${esc(st.label)})"><b>#${id}</b> ${esc(shortName(node))}</span>`;
  };
  const none = (s) => `<span class="none">${s}</span>`;

  const waitSet = el.wait_set.length ? el.wait_set.map((k) => `<span class="chip conn">${esc(connName(k))}</span>`).join('') : none('nothing');
  const fired = el.fired.length ? el.fired.map(reqChip).join('') : none('none');
  const queue = el.waiting.length
    ? el.waiting.map((id, i) => `<span class="fifo-pos">${i + 1}.</span>${reqChip(id)}`).join('<span class="fifo-arrow">→</span>')
    : none('empty');

  const rows = conns
    .map((c) => {
      const state = c.busy ? '<span class="busy">busy</span>' : '<span class="idle">idle</span>';
      const sql = c.in_flight.length ? c.in_flight.map((s) => esc(s)).join('<br>') : '<span class="none">—</span>';
      return `<tr data-conn="${c.id}"><td><b>${esc(c.server)}</b></td><td>${state}</td><td class="sql">${sql}</td><td class="num">${c.queued}</td><td>${c.xact_open ? 'open' : '—'}</td><td class="num">${fmtBytes(c.bytes_sent)}</td><td class="num">${fmtBytes(c.bytes_received)}</td><td class="num">${c.rtt_ms.toFixed(2)}</td></tr>`;
    })
    .join('');

  morphHtml(container, `
    <div class="el-row"><span class="el-k">waits on</span><span class="el-v" data-testid="wait-set">${waitSet}</span></div>
    <div class="el-row"><span class="el-k">fired</span><span class="el-v" data-testid="fired">${fired}</span></div>
    <div class="el-row"><span class="el-k">waiting (FIFO)</span><span class="el-v" data-testid="waiting-queue">${queue}</span></div>
    <div class="el-note">max events per wait: ${el.max_events}</div>
    ${conns.length ? `<table class="conns" data-testid="connections"><thead><tr><th>conn</th><th>state</th><th>in flight</th><th>queued</th><th>xact</th><th>sent</th><th>recv</th><th>rtt ms</th></tr></thead><tbody>${rows}</tbody></table>` : '<div class="el-note">no remote connections in this scenario</div>'}
  `);
}
