// The event loop (what it waits on, what fired, the FIFO of waiting requests) and the
// state of each connection.
//
// The frame (rows, the connections table) is built once per session; a step rewrites
// only the parts whose content changed, each compared by a small key.

import { esc, fmtBytes, stateInfo, flattenPlan, shortName, requesteeNode, setText } from './util.js';

export class EventLoopView {
  constructor(container) {
    this.container = container;
    this.key = null;
  }

  invalidate() {
    this.key = null;
  }

  build(conns) {
    this.container.innerHTML = `
      <div class="el-row"><span class="el-k">waits on</span><span class="el-v" data-testid="wait-set"></span></div>
      <div class="el-row"><span class="el-k">fired</span><span class="el-v" data-testid="fired"></span></div>
      <div class="el-row"><span class="el-k">waiting (FIFO)</span><span class="el-v" data-testid="waiting-queue"></span></div>
      <div class="el-note" data-testid="max-events"></div>
      ${
        conns.length
          ? `<table class="conns" data-testid="connections"><thead><tr><th>conn</th><th>state</th><th>in flight</th><th>queued</th><th>xact</th><th>sent</th><th>recv</th><th>rtt ms</th></tr></thead><tbody>${conns
              .map((c) => `<tr data-conn="${c.id}"><td><b>${esc(c.server)}</b></td><td></td><td class="sql"></td><td class="num"></td><td></td><td class="num"></td><td class="num"></td><td class="num"></td></tr>`)
              .join('')}</tbody></table>`
          : '<div class="el-note">no remote connections in this scenario</div>'
      }`;
    const q = (t) => this.container.querySelector(`[data-testid=${t}]`);
    this.waitSet = { el: q('wait-set'), key: null };
    this.fired = { el: q('fired'), key: null };
    this.queue = { el: q('waiting-queue'), key: null };
    this.maxEvents = q('max-events');
    this.rows = [...this.container.querySelectorAll('tr[data-conn]')].map((tr) => {
      const td = tr.children;
      return { state: { el: td[1], key: null }, sql: { el: td[2], key: null }, queued: td[3], xact: td[4], sent: td[5], recv: td[6], rtt: td[7] };
    });
  }

  update(snap) {
    const conns = snap.connections ?? [];
    const key = conns.map((c) => c.server).join(',');
    if (key !== this.key) {
      this.build(conns);
      this.key = key;
    }
    const el = snap.event_loop ?? { wait_set: [], waiting: [], fired: [], max_events: 0 };
    const reqs = snap.requests ?? [];
    const reqState = (id) => reqs.find((r) => r.id === id)?.state ?? '?';
    const connName = (k) => conns[k]?.server ?? `conn ${k}`;
    const none = (s) => `<span class="none">${s}</span>`;
    let nodes = null; // looked up only when a chip list changed
    const reqChip = (id) => {
      nodes ??= new Map(flattenPlan(snap.plan).map((r) => [r.node.id, r.node]));
      const r = reqs.find((x) => x.id === id);
      const node = r ? requesteeNode(nodes, r.requestee) : null;
      const st = stateInfo(r?.state);
      return `<span class="chip req" data-request="${id}" data-state="${esc(r?.state ?? '')}" style="border-color:${st.color}" title="${esc(node?.label ?? '')} (${esc(st.label)})"><b>#${id}</b> ${esc(shortName(node))}</span>`;
    };
    const put = (slot, k, html) => {
      if (slot.key === k) return;
      slot.key = k;
      slot.el.innerHTML = html();
    };

    put(this.waitSet, el.wait_set.join(','), () => (el.wait_set.length ? el.wait_set.map((k) => `<span class="chip conn">${esc(connName(k))}</span>`).join('') : none('nothing')));
    put(this.fired, el.fired.map((id) => `${id}${reqState(id)}`).join(','), () => (el.fired.length ? el.fired.map(reqChip).join('') : none('none')));
    put(this.queue, el.waiting.map((id) => `${id}${reqState(id)}`).join(','), () =>
      el.waiting.length ? el.waiting.map((id, i) => `<span class="fifo-pos">${i + 1}.</span>${reqChip(id)}`).join('<span class="fifo-arrow">→</span>') : none('empty'),
    );
    setText(this.maxEvents, `max events per wait: ${el.max_events}`);

    for (let i = 0; i < this.rows.length; i++) {
      const c = conns[i];
      const row = this.rows[i];
      if (!c) continue;
      put(row.state, c.busy ? 'b' : 'i', () => (c.busy ? '<span class="busy">busy</span>' : '<span class="idle">idle</span>'));
      put(row.sql, c.in_flight.join('\n'), () => (c.in_flight.length ? c.in_flight.map((s) => esc(s)).join('<br>') : '<span class="none">—</span>'));
      setText(row.queued, String(c.queued));
      setText(row.xact, c.xact_open ? 'open' : '—');
      setText(row.sent, fmtBytes(c.bytes_sent));
      setText(row.recv, fmtBytes(c.bytes_received));
      row.sent.dataset.bytes = String(c.bytes_sent); // exact, for checking the panels against each other (e2e)
      row.recv.dataset.bytes = String(c.bytes_received);
      setText(row.rtt, c.rtt_ms.toFixed(2));
    }
  }
}
