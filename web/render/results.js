// Result rows and the EXPLAIN ANALYZE text.

import { esc, fmtInt, morphHtml } from './util.js';

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
  morphHtml(container, `<table class="rows" data-testid="rows-table"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`);
}

/** One block per line (so wrapped lines hang under their text); the raw text stays in `pre.dataset`. */
export function renderExplain(pre, text) {
  if (pre.dataset.raw === text) return;
  pre.dataset.raw = text;
  const html = text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => {
      const ind = line.length - line.trimStart().length;
      const t = line.trimStart();
      const cls = /^(->\s+)?[A-Z][A-Za-z ]+(on \S+\s+)?\s*\(actual/.test(t) ? 'node' : /^Async:/.test(t) ? 'async' : /^Execution Time/.test(t) ? 'total' : '';
      return `<span class="xl ${cls}" style="--ind:${ind}">${esc(t) || ' '}</span>`;
    })
    .join('');
  morphHtml(pre, html);
}
