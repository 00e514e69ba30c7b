// Result rows and the EXPLAIN ANALYZE text.

import { esc, fmtInt, setText } from './util.js';

/** `page` = session.rows(0, limit): {columns, rows, total, plan_only}. */
export function renderRows(container, countEl, page) {
  const cols = page.columns ?? [];
  const rows = page.rows ?? [];
  if (page.plan_only) {
    // EXPLAIN without ANALYZE: PostgreSQL plans the query and fetches no row.
    setText(countEl, 'not run');
    container.innerHTML = `<div class="none" data-testid="rows-plan-only">EXPLAIN without ANALYZE: the query was planned, not run, so it returned no rows (its plan, with the planner's estimates, is in the plan and EXPLAIN panels)</div>`;
    return;
  }
  setText(countEl, `${fmtInt(page.total ?? rows.length)} row${page.total === 1 ? '' : 's'}${page.total > rows.length ? ` (first ${rows.length} shown)` : ''}`);
  if (!rows.length) {
    container.innerHTML = `<div class="none">no rows yet</div>`;
    return;
  }
  const head = cols.map((c) => `<th>${esc(c)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((v) => `<td>${esc(v)}</td>`).join('')}</tr>`).join('');
  container.innerHTML = `<table class="rows" data-testid="rows-table"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

function lineClass(t) {
  // A node's line: its title, then `(cost=…)` (COSTS) or `(actual …)` (ANALYZE).
  return /^(->\s+)?[A-Z][A-Za-z ]+(on \S+( \S+)?\s+)?\s*\((actual|cost=)/.test(t) ? 'node' : /^Async:/.test(t) ? 'async' : /^Execution Time/.test(t) ? 'total' : '';
}

/**
 * One block per line (so wrapped lines hang under their text); the raw text stays in
 * `explainRaw(pre)`. A step changes a few numbers on a few lines: only those lines'
 * text is rewritten; the blocks are rebuilt when the number of lines changes.
 */
export function renderExplain(pre, text) {
  if (pre.__raw === text) return;
  pre.__raw = text;
  const lines = text.replace(/\n$/, '').split('\n');
  let spans = pre.__spans;
  if (!spans || spans.length !== lines.length) {
    pre.innerHTML = lines
      .map((line) => {
        const ind = line.length - line.trimStart().length;
        const t = line.trimStart();
        return `<span class="xl ${lineClass(t)}" style="--ind:${ind}"></span>`;
      })
      .join('');
    spans = pre.__spans = [...pre.children];
    pre.__lines = new Array(lines.length).fill(null);
  }
  const prev = pre.__lines;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (prev[i] === line) continue;
    const ind = line.length - line.trimStart().length;
    const t = line.trimStart();
    const span = spans[i];
    if (prev[i] === null || prev[i].length - prev[i].trimStart().length !== ind) span.style.setProperty('--ind', String(ind));
    const cls = `xl ${lineClass(t)}`;
    if (span.className !== cls) span.className = cls;
    span.textContent = t || ' ';
    prev[i] = line;
  }
}

/** The EXPLAIN text last rendered into `pre` (for Copy). */
export function explainRaw(pre) {
  return pre.__raw ?? pre.innerText;
}
