// Issue 23's page checks (run.mjs calls them; PGASYNC_E2E_ONLY=planonly runs them alone,
// and they are part of PGASYNC_E2E_ONLY=sql):
// * EXPLAIN without ANALYZE typed into the editor is planned, not run, as PostgreSQL
//   does: the plan tree's boxes and the EXPLAIN panel show the estimates
//   (`cost=… rows=… width=…`) and no actual figures, the narration says it was planned
//   and not run, the result says no row was fetched, and the steps (the wire
//   inspector) are what planning sent: use_remote_estimate's `EXPLAIN SELECT …` and the
//   COMMIT, no DECLARE or FETCH. `EXPLAIN (FORMAT JSON)` prints PostgreSQL's JSON with
//   the costs and no actual figures.
// * the parameterized Nested Loop over an async Append (use_remote_estimate, one outer
//   row) steps to its end in the page: its EXPLAIN shows two children "(never
//   executed)", the Remote SQL with `$1`, the estimates beside the actual figures, and
//   the plan tree's never-run scans at loops 0.

import { waitDrawn, waitFinished } from './lib.mjs';

/** The file's query replaced by `query` and the `set enable_…` lines left out. */
const withQuery = (file, query) => file.replace(/set enable_\w+ = off;\n/g, '').replace(/-- @query\n.*\n/, `-- @query\n${query}\n`);

/** The text of every plan-tree line with `testid`, by node. */
async function boxLines(page, testid) {
  return page.$$eval(`[data-testid=plan] [data-testid=plan-node]`, (gs, t) => gs.map((g) => ({ node: g.querySelector('.node-label')?.textContent ?? '', text: g.querySelector(`[data-testid=${t}]`)?.textContent ?? null })), testid);
}

export async function checkPlanOnly(browser, server, { check, shot, editorPage, runInEditor, paramNlFile }) {
  console.log('SQL editor: EXPLAIN without ANALYZE is planned, not run');
  const { context, page } = await editorPage(browser, server);
  const text = async (id) => (await page.textContent(`[data-testid=${id}]`)).trim();
  try {
    const err = await runInEditor(page, withQuery(paramNlFile, 'EXPLAIN SELECT * FROM l JOIN pt ON pt.b = l.b WHERE l.id = 1;'));
    check('EXPLAIN without ANALYZE is accepted by the page', err === '', err);
    const snap0 = await page.evaluate(() => window.pgasync.snapshot());
    check('its session is plan-only, at step 0', snap0.plan_only === true && snap0.step === 0, JSON.stringify({ plan_only: snap0.plan_only, step: snap0.step }));
    const narr0 = await text('narration');
    check('the narration says it was planned, not run, with remote estimates to step through', /planned the query and did not run it/.test(narr0) && /use_remote_estimate/.test(narr0), narr0);
    const estimates = await boxLines(page, 'node-estimate');
    const actuals = await boxLines(page, 'node-counters');
    // A Result the sandbox puts over a scan is, in PostgreSQL's EXPLAIN, part of that scan: it shows no estimate of its own.
    const shown = estimates.filter((b) => b.text !== null);
    check('every plan box shows its estimate (cost=… rows=… width=…)', shown.length >= 5 && shown.every((b) => /^estimate: cost=\d+\.\d\d\.\.\d+\.\d\d rows=\d+ width=\d+$/.test(b.text)) && estimates.every((b) => b.text !== null || /^Result/.test(b.node)), JSON.stringify(estimates.slice(0, 3)));
    const folded = (await boxLines(page, 'node-folded')).filter((b) => b.text !== null);
    check('a Result box says EXPLAIN prints it with the node below', folded.length >= 1 && folded.every((b) => /^Result/.test(b.node) && /part of the node below/.test(b.text)), JSON.stringify(folded));
    check('no plan box shows actual figures', actuals.every((b) => b.text === null), JSON.stringify(actuals.filter((b) => b.text !== null).slice(0, 2)));
    const explain = await page.locator('[data-testid=explain]').innerText();
    const lines = explain.split('\n');
    check('EXPLAIN: the Nested Loop with its estimate, async scans estimated', /^Nested Loop {2}\(cost=[\d.]+\.\.[\d.]+ rows=\d+ width=\d+\)$/.test(lines[0]) && lines.filter((l) => /Async Foreign Scan on pt[123] pt_[123] {2}\(cost=/.test(l)).length === 3, explain.slice(0, 500));
    check('EXPLAIN: no actual figures, no never executed, no Execution Time', !/actual|never executed|Execution Time/.test(explain), explain.slice(0, 300));
    check('the panel is titled as planned, not run', /planned, not run/.test(await text('explain-title')), await text('explain-title'));
    // The plan tree's estimates are the EXPLAIN panel's, number for number.
    const printed = (explain.match(/cost=[\d.]+\.\.[\d.]+ rows=\d+ width=\d+/g) ?? []).sort();
    const boxes = shown.map((b) => b.text.replace('estimate: ', '')).sort();
    check('the plan tree shows the EXPLAIN panel\'s estimates', JSON.stringify(printed) === JSON.stringify(boxes), `${printed.length} printed, ${boxes.length} in boxes`);
    await page.locator('[data-testid=compare-note]').waitFor({ timeout: 15000 });
    check('the compare view says there is nothing to compare (no error)', /Nothing to compare: EXPLAIN without ANALYZE/.test(await text('compare-note')), await text('compare-note'));
    check('the result says no row was fetched', (await text('rowcount')) === 'not run' && /planned, not run/.test(await text('rows')), await text('rows'));
    await shot(page, '18j-sql-explain-plan-only.png');
    await page.click('[data-testid=to-end]');
    await waitFinished(page, 30000);
    const wire = await page.textContent('[data-testid=wire]');
    check('the steps are what planning sent: remote EXPLAINs and the COMMIT', /EXPLAIN SELECT/.test(wire) && /COMMIT TRANSACTION/.test(wire), wire.slice(0, 300));
    check('nothing ran: no DECLARE, no FETCH on the wire', !/DECLARE|FETCH/.test(wire), wire.slice(0, 300));
    const narrEnd = await text('narration');
    check('at the end the narration says it was planned, never run', /planned, never run/.test(narrEnd), narrEnd);
    check('no actual figures after the last step either', (await boxLines(page, 'node-counters')).every((b) => b.text === null) && !/actual/.test(await page.locator('[data-testid=explain]').innerText()));
    await shot(page, '18k-sql-explain-plan-only-end.png');

    // FORMAT JSON: PostgreSQL's JSON, costs and no actual figures.
    await page.click('[data-testid=sql-toggle]');
    await page.locator('[data-testid=sql]').waitFor({ state: 'visible', timeout: 5000 });
    const errJson = await runInEditor(page, withQuery(paramNlFile, 'EXPLAIN (FORMAT JSON) SELECT * FROM pt WHERE b < 300;'));
    check('EXPLAIN (FORMAT JSON) is accepted by the page', errJson === '', errJson);
    const json = JSON.parse(await page.locator('[data-testid=explain]').innerText());
    const plan = json[0].Plan;
    check('EXPLAIN (FORMAT JSON): an Append with its costs and rows, no actual figures', plan['Node Type'] === 'Append' && plan['Total Cost'] > 0 && plan['Plan Rows'] > 0 && !('Actual Rows' in plan) && !JSON.stringify(json).includes('Actual'), JSON.stringify(plan).slice(0, 300));
  } finally {
    await context.close();
  }
}

export async function checkParamNestLoopPruned(browser, server, { check, shot, editorPage, runInEditor, paramNlFile }) {
  console.log('SQL editor: the parameterized Nested Loop with two children never executed');
  const { context, page } = await editorPage(browser, server);
  try {
    const err = await runInEditor(page, withQuery(paramNlFile, 'select * from l join pt on pt.b = l.b where l.id = 1;'));
    check('the one-row parameterized Nested Loop runs in the page', err === '', err);
    const narrations = [];
    for (let i = 1; i <= 60 && !narrations.some((n) => /DECLARE c1/.test(n)); i++) {
      await page.click('[data-testid=step-event]');
      await waitDrawn(page, { step: i }, 5000);
      narrations.push((await page.textContent('[data-testid=narration]')).trim());
    }
    check('Step event steps to the one cursor declared (its $1 bound)', narrations.some((n) => /DECLARE c1/.test(n)), narrations.slice(-2).join(' | '));
    await page.click('[data-testid=to-end]');
    await waitFinished(page, 30000);
    const count = (await page.textContent('[data-testid=rowcount]')).trim();
    check('the run ends with the one joined row', /^1 row/.test(count), count);
    const explain = await page.locator('[data-testid=explain]').innerText();
    const scans = explain.split('\n').filter((l) => /Async Foreign Scan on public\.pt[123]/.test(l));
    check('EXPLAIN: a Nested Loop over the Append, estimates beside actual figures', /^Nested Loop {2}\(cost=[\d.]+\.\.[\d.]+ rows=\d+ width=\d+\) \(actual time=/.test(explain), explain.slice(0, 300));
    check('EXPLAIN: two async children (never executed), one with rows=1', scans.filter((l) => /\(never executed\)$/.test(l)).length === 2 && scans.filter((l) => /actual time=[\d.]+\.\.[\d.]+ rows=1 loops=1\)$/.test(l)).length === 1, scans.join(' | '));
    check('EXPLAIN: their Remote SQL reads $1', (explain.match(/WHERE \(\(\$1::integer = b\)\)/g) ?? []).length === 3, explain.slice(0, 800));
    const boxes = await page.$$eval('[data-testid=plan] [data-testid=plan-node]', (gs) => gs.map((g) => ({ label: g.querySelector('.node-label').textContent, est: g.querySelector('[data-testid=node-estimate]')?.textContent ?? '', act: g.querySelector('[data-testid=node-counters]')?.textContent ?? '' })));
    const scanBoxes = boxes.filter((b) => /Foreign Scan on (public\.)?pt[123]/.test(b.label));
    check('the plan tree: three scans, each with its estimate; two never ran (loops 0)', scanBoxes.length === 3 && scanBoxes.every((b) => /^estimate: cost=/.test(b.est)) && scanBoxes.filter((b) => /loops 0 /.test(b.act)).length === 2, JSON.stringify(scanBoxes));
    await shot(page, '18l-sql-param-nestloop-never-executed.png');
    // The never-executed scans, scrolled into the plan panel's view.
    await page.locator('[data-testid=plan] [data-testid=plan-node]').last().scrollIntoViewIfNeeded();
    await shot(page, '18m-sql-param-nestloop-plan-scans.png');
  } finally {
    await context.close();
  }
}
