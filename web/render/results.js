// Result rows and the EXPLAIN ANALYZE text.

import { esc, fmtInt } from './util.js';

export function renderRows(container, countEl, page) {
  const cols = page.columns ?? [];
  const rows = page.rows ?? [];
  countEl.textContent = `${fmtInt(page.total ?? rows.length)} row${page.total === 1 ? '' : 's'}${page.total > rows.length ? ` (first ${rows.length} shown)` : ''}`;
  if (!rows.length) {
    container.innerHTML = `<div class="none">no rows yet</div>`;
    return;
  }
  const head = cols.map((c) => `<th>${esc(c)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((v) => `<td>${esc(v)}</td>`).join('')}</tr>`).join('');
  container.innerHTML = `<table class="rows" data-testid="rows-table"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

export function renderExplain(pre, text) {
  if (pre.textContent !== text) pre.textContent = text;
}
