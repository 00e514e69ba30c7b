// Issue 10's remaining page checks (run.mjs calls it; PGASYNC_E2E_ONLY=panels runs it
// alone):
// * the panels agree at every step: each foreign scan's box (its exact bytes in
//   data-sent/data-recv), the connection table (data-bytes) and the wire inspector's
//   lines (data-bytes, data-conn, data-node) add up, step after step, in E and D;
// * the Export menu downloads the files `pgasync trace` writes, byte for byte, and the
//   page answers meanwhile (no long task over 100 ms) at a large size;
// * at 16 shards no lane label is missing (timeline and compare), at 1280×720 and at
//   150% zoom: the panels scroll instead;
// * ticking then unticking "pipeline" in E leaves E as it was (sharing unset, four
//   dedicated connections), not D;
// * the projector aids: large text (A+) scales the page's text and is kept across a
//   reload; any panel goes full screen (⤢, Esc to leave), its drawing laid out again
//   for the larger size, the lesson panel included.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { BIN, ROOT, watchLongTasks } from './lib.mjs';

/** Steps the page `n` times (or to the end), checking the three panels after each step. */
async function stepAndCompare(page, n) {
  return page.evaluate((n) => {
    const sum = (xs) => xs.reduce((a, x) => a + Number(x.dataset.bytes), 0);
    const bad = [];
    let pendingSeen = 0;
    let steps = 0;
    for (; steps < n && !window.pgasync.isDone(); steps++) {
      const k = window.pgasync.stepEvent();
      const lines = [...document.querySelectorAll('[data-testid=wire] [data-testid=wire-line][data-bytes]')];
      const fe = lines.filter((l) => l.classList.contains('fe'));
      const be = lines.filter((l) => l.classList.contains('be') || l.classList.contains('err'));
      for (const tr of document.querySelectorAll('[data-testid=connections] tr[data-conn]')) {
        const c = tr.dataset.conn;
        const sent = Number(tr.children[5].dataset.bytes);
        const recv = Number(tr.children[6].dataset.bytes);
        const wsent = sum(fe.filter((l) => l.dataset.conn === c));
        const wrecv = sum(be.filter((l) => l.dataset.conn === c));
        if (sent !== wsent || recv !== wrecv) bad.push(`step ${k}: connection ${c} table ${sent}/${recv} B, wire ${wsent}/${wrecv} B`);
      }
      for (const g of document.querySelectorAll('[data-testid=plan-node][data-recv]')) {
        const id = g.dataset.node;
        const wsent = sum(fe.filter((l) => l.dataset.node === id));
        const wrecv = sum(be.filter((l) => l.dataset.node === id));
        if (Number(g.dataset.sent) !== wsent || Number(g.dataset.recv) !== wrecv) bad.push(`step ${k}: node ${id} box ${g.dataset.sent}/${g.dataset.recv} B, wire ${wsent}/${wrecv} B`);
      }
      // The moment of the report: a result ready, not yet taken by the Append (Callback pending).
      for (const p of document.querySelectorAll('[data-testid=request-state][data-state=CallbackPending]')) {
        pendingSeen++;
        const box = document.querySelector(`[data-testid=plan-node][data-node="${p.parentNode.dataset.requestee}"]`);
        if (!(Number(box?.dataset.recv) > 0)) bad.push(`step ${k}: request ${p.dataset.request} is Callback pending, its scan's box says recv ${box?.dataset.recv}`);
      }
      if (bad.length > 5) break;
    }
    return { bad, steps, pendingSeen, lines: document.querySelectorAll('[data-testid=wire-line]').length };
  }, n);
}

async function checkPanelsAgree(page, server, { check, shot }) {
  console.log('panels agree at every step');
  for (const [name, query, n] of [
    ['E async pg15', '?scenario=E&mode=async&rows=300&fetch=100', 2000],
    ['D async improved (one shared connection, pipelined)', '?scenario=D&mode=async&rows=300&fetch=100&behaviour=improved', 2000],
    ['M sync', '?scenario=M&mode=sync&rows=300&fetch=100', 2000],
  ]) {
    await page.goto(server.url + query);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
    const r = await stepAndCompare(page, n);
    check(`${name}: boxes, connection table and wire inspector agree at each of ${r.steps} steps`, r.bad.length === 0 && r.steps > 50, r.bad.join('; ') || `${r.lines} wire lines at the end`);
    // The report ("ft3's box shows recv 0 B" while the answer had arrived) is the moment
    // a request is Callback pending: those steps were among the ones compared.
    if (name.startsWith('E')) check('E async: steps with a result ready, not yet taken by the requestor (Callback pending), were compared', r.pendingSeen > 0, `${r.pendingSeen} pending requests seen`);
  }
  // Step 8 of E async, as in the report, in a screenshot.
  await page.goto(`${server.url}?scenario=E&mode=async&rows=300&fetch=100&step=8`);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  await shot(page, '30-panels-e-async-step8.png');
}

/** What `pgasync trace` prints for these arguments. */
function cli(args) {
  return execFileSync(BIN, ['trace', ...args], { cwd: ROOT, maxBuffer: 1 << 30 });
}

/** Clicks an Export item and resolves with {name, bytes} of the download. */
async function download(page, format) {
  await page.click('[data-testid=export] summary');
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 120000 }), page.click(`[data-testid=export-${format}]`)]);
  const path = await d.path();
  return { name: d.suggestedFilename(), bytes: readFileSync(path) };
}

async function checkExport(browser, server, { check, shot, errors }) {
  console.log('export menu: the bytes `pgasync trace` writes');
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, acceptDownloads: true });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  await watchLongTasks(page);
  try {
    const formats = ['json', 'csv', 'explain-text', 'explain-json', 'svg'];
    for (const [query, args, file] of [
      ['?scenario=E&mode=async&rows=300&fetch=100', ['--scenario', 'E', '--mode', 'async', '--rows', '300', '--fetch-size', '100'], 'E-async-pg15'],
      ['?scenario=D&mode=sync&rows=200&fetch=50&behaviour=improved&shards=3', ['--scenario', 'D', '--mode', 'sync', '--rows', '200', '--fetch-size', '50', '--behaviour', 'improved', '--shards', '3'], 'D-sync-improved'],
      ['?scenario=M&mode=async&rows=300&fetch=100&async_merge_append=1', ['--scenario', 'M', '--mode', 'async', '--rows', '300', '--fetch-size', '100', '--async-merge-append'], 'M-async-custom'],
    ]) {
      await page.goto(server.url + query);
      await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
      check(`export menu lists the five formats (${file})`, (await page.locator('[data-testid=export] button').count()) === 5);
      if (file === 'E-async-pg15') {
        await page.click('[data-testid=export] summary');
        check('the menu opens with its five items visible', (await page.locator('[data-testid=export] button:visible').count()) === 5);
        await shot(page, '31-export-menu.png');
        await page.click('[data-testid=export] summary');
      }
      for (const f of formats) {
        const got = await download(page, f);
        const want = cli([...args, '--format', f]);
        const ext = { json: 'trace.json', csv: 'trace.csv', 'explain-text': 'explain.txt', 'explain-json': 'explain.json', svg: 'timeline.svg' }[f];
        check(`export ${f} of ${file}: named ${file}.${ext}, the CLI's bytes`, got.name === `${file}.${ext}` && Buffer.compare(got.bytes, want) === 0, `${got.name}: ${got.bytes.length} B, CLI ${want.length} B`);
      }
    }
    await shot(page, '31-export-done.png');
    // A large export stays in slices: no long task over 100 ms while it is made.
    await page.goto(`${server.url}?scenario=E&shards=4&rows=20000&fetch=100`);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 120000 });
    // The page's own work after a load (the sync/async comparison, in slices) first:
    // only the export's tasks are measured.
    await page.waitForSelector('[data-testid=compare-sync-ms]', { timeout: 120000 });
    await page.waitForTimeout(1000);
    await page.evaluate(() => (window.__longTasks.length = 0));
    const t0 = Date.now();
    const big = await download(page, 'csv');
    await page.waitForTimeout(300);
    // Read before the CLI runs below: it would compete with the page for the CPU.
    const tasks = await page.evaluate(() => window.__longTasks.slice());
    const want = cli(['--scenario', 'E', '--shards', '4', '--rows', '20000', '--fetch-size', '100', '--format', 'csv']);
    check('a large CSV export (E, 4 × 20,000 rows) is the CLI\'s bytes', Buffer.compare(big.bytes, want) === 0, `${(big.bytes.length / 1e6).toFixed(1)} MB in ${Date.now() - t0} ms`);
    check('the page answered while it was made: no long task over 100 ms', Math.max(0, ...tasks) <= 100, `long tasks: ${tasks.join(', ') || 'none'}`);
  } finally {
    await context.close();
  }
}

/** Lane labels drawn in the timeline and compare view, and whether each can be seen by scrolling. */
async function laneLabels(page) {
  return page.evaluate(() => {
    const labels = (sel) =>
      [...document.querySelectorAll(`${sel} .lane-label`)].map((t) => {
        const b = t.getBBox();
        return { text: t.textContent, x: b.x, y: b.y, h: b.height, w: b.width };
      });
    const box = (el) => ({ client: el.clientHeight, overflowY: getComputedStyle(el).overflowY });
    return {
      timeline: labels('[data-testid=timeline-svg]'),
      compare: labels('[data-testid=compare-svg]'),
      timelineBox: box(document.getElementById('timeline')),
      compareBox: box(document.querySelector('#p-compare .compare-plot')),
      timelineH: Number(document.querySelector('[data-testid=timeline-svg]').getAttribute('height')),
      compareH: Number(document.querySelector('[data-testid=compare-svg]').getAttribute('height')),
    };
  });
}

/**
 * No two labels overlap, none is cut off the drawing, and the panel reaches all of them:
 * the drawing fits, or the panel scrolls.
 */
function legible(ls, svgH, box) {
  const sorted = [...ls].sort((a, b) => a.y - b.y);
  const overlaps = sorted.filter((l, i) => i > 0 && l.y < sorted[i - 1].y + sorted[i - 1].h - 1).length;
  const cut = ls.filter((l) => l.x < 0 || l.y + l.h > svgH + 1).length;
  const reachable = svgH <= box.client + 1 || ['auto', 'scroll'].includes(box.overflowY);
  return { ok: overlaps === 0 && cut === 0 && reachable, overlaps, cut, reachable };
}

async function checkLaneLabels(browser, server, { check, shot, errors }) {
  console.log('16 shards: every lane labelled');
  const shards = 16;
  const conns = Array.from({ length: shards }, (_, i) => `s${i + 1}`);
  for (const [name, opts] of [
    ['1280×720', { viewport: { width: 1280, height: 720 } }],
    ['150% zoom', { viewport: { width: 853, height: 480 }, deviceScaleFactor: 1.5 }],
  ]) {
    const context = await browser.newContext(opts);
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push(`page error (${name}): ${e.message}`));
    try {
      await page.goto(`${server.url}?scenario=E&mode=async&shards=${shards}&rows=300&fetch=100`);
      await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
      await page.waitForSelector('[data-testid=compare-svg]', { timeout: 60000 });
      const l = await laneLabels(page);
      const t = l.timeline.map((x) => x.text);
      const want = [...conns, ...Array.from({ length: shards }, (_, i) => `#${i} `), 'rows out'];
      const missing = want.filter((w) => !t.some((x) => (w.endsWith(' ') ? x.startsWith(w) : x === w)));
      check(`${name}: no timeline lane label missing at 16 shards (${t.length} labels)`, missing.length === 0 && t.length === 2 * shards + 1, `missing: ${missing.join(', ') || 'none'}`);
      const tl = legible(l.timeline, l.timelineH, l.timelineBox);
      check(`${name}: timeline labels apart and reachable (the panel scrolls)`, tl.ok, JSON.stringify({ ...tl, ...l.timelineBox, svg: l.timelineH }));
      const c = l.compare.map((x) => x.text);
      const cmissing = ['sync', 'async'].flatMap((run, g) => conns.filter((s) => c.filter((x) => x === s).length < 2).map((s) => `${run} ${s}`)).slice(0, 16);
      check(`${name}: no compare lane label missing at 16 shards (${c.length} labels)`, cmissing.length === 0 && c.length === 2 * shards, `missing: ${cmissing.join(', ') || 'none'}`);
      const cl = legible(l.compare, l.compareH, l.compareBox);
      check(`${name}: compare labels apart and reachable (the plot scrolls)`, cl.ok, JSON.stringify({ ...cl, ...l.compareBox, svg: l.compareH }));
      const exportBox = await page.locator('[data-testid=export] summary').boundingBox();
      const vw = page.viewportSize().width;
      check(`${name}: the Export… button is on screen`, exportBox && exportBox.x >= 0 && exportBox.x + exportBox.width <= vw, JSON.stringify(exportBox));
      await shot(page, `32-16-shards-${name.replace(/[^0-9a-z]+/gi, '')}.png`);
      await page.locator('#p-timeline').scrollIntoViewIfNeeded();
      await shot(page, `33-16-shards-timeline-${name.replace(/[^0-9a-z]+/gi, '')}.png`, page.locator('#p-timeline'));
    } finally {
      await context.close();
    }
  }
}

/** The report: ticking then unticking "pipeline" in E set sharing to `shared` (E became D). */
async function checkPipelineUntick(page, server, { check }) {
  console.log('pipeline ticked then unticked in E');
  await page.goto(`${server.url}?scenario=E&mode=async&rows=300&fetch=100`);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30000 });
  const serial = async () => Number(await page.getAttribute('body', 'data-session'));
  const state = () =>
    page.evaluate(() => ({
      sharing: document.querySelector('[data-testid=sharing]').value,
      scenario: document.querySelector('[data-testid=scenario]').value,
      conns: window.pgasync.snapshot().connections.map((c) => c.server).join(','),
      url: location.search,
      config: window.pgasync.config.sharing,
    }));
  const before = await state();
  for (const action of ['check', 'uncheck']) {
    const s0 = await serial();
    await page[action]('[data-testid=knob-pipeline]');
    await page.waitForFunction((b) => Number(document.body.dataset.session) > b, s0, { timeout: 15000 });
  }
  await page.waitForFunction(() => !/pipeline=/.test(location.search), null, { timeout: 5000 });
  const after = await state();
  check('E before: dedicated connections s1…s4, sharing unset', before.sharing === '' && before.conns === 's1,s2,s3,s4', JSON.stringify(before));
  check('pipeline ticked then unticked: still E, sharing unset (select, config, URL), four dedicated connections', after.scenario === 'E' && after.sharing === '' && !after.config && !/sharing=/.test(after.url) && after.conns === before.conns && (await page.inputValue('[data-testid=behaviour]')) === 'pg15', JSON.stringify(after));
}

async function checkProjector(browser, server, { check, shot, errors }) {
  console.log('projector aids: large text, a panel full screen');
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`page error (projector): ${e.message}`));
  const ready = async () => {
    await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    await page.waitForSelector('[data-testid=compare-svg]', { timeout: 60000 });
  };
  const fontPx = (sel) => page.$eval(sel, (el) => parseFloat(getComputedStyle(el).fontSize));
  try {
    await page.goto(`${server.url}?scenario=E&mode=async&shards=16&rows=300&fetch=100`);
    await ready();
    const [n0, h0, w0] = [await fontPx('[data-testid=narration]'), await fontPx('#p-plan h2'), await fontPx('pre.explain')];
    await page.click('[data-testid=large-text]');
    const [n1, h1, w1] = [await fontPx('[data-testid=narration]'), await fontPx('#p-plan h2'), await fontPx('pre.explain')];
    check('A+: the narration, panel headings and EXPLAIN text are 1.3 times larger', [n1 / n0, h1 / h0, w1 / w0].every((r) => Math.abs(r - 1.3) < 0.02), `${n0}→${n1}, ${h0}→${h1}, ${w0}→${w1} px`);
    const narrow = await page.$$eval('main.grid > section.panel', (ps) => ps.filter((p) => !p.hidden && p.getBoundingClientRect().width < 300).map((p) => p.id));
    check('A+: no panel narrower than 300 px', narrow.length === 0, narrow.join(', ') || 'none');
    const l = await laneLabels(page);
    check('A+: every timeline lane still labelled at 16 shards', l.timeline.length === 33, `${l.timeline.length} labels`);
    await shot(page, '34-large-text.png');
    await page.reload();
    await ready();
    check('A+ is kept across a reload', (await page.getAttribute('html', 'data-large')) === '1' && (await fontPx('[data-testid=narration]')) === n1);
    await page.click('[data-testid=large-text]');
    check('A+ again: back to the normal size', (await page.getAttribute('html', 'data-large')) === null && (await fontPx('[data-testid=narration]')) === n0);

    const svgW = () => page.$eval('[data-testid=timeline-svg]', (el) => Number(el.getAttribute('width')));
    const before = { box: await page.locator('#p-timeline').boundingBox(), svg: await svgW() };
    await page.click('#p-timeline [data-testid=maximize]');
    await page.waitForFunction((w) => Number(document.querySelector('[data-testid=timeline-svg]').getAttribute('width')) > w, before.svg, { timeout: 5000 }).catch(() => {});
    const full = { box: await page.locator('#p-timeline').boundingBox(), svg: await svgW() };
    check('⤢ on the timeline: the panel covers the window', full.box.width >= 1200 && full.box.height >= 680, JSON.stringify(full.box));
    check('⤢: the timeline is drawn again for its new size', full.svg > before.svg * 2, `${before.svg} → ${full.svg} px wide`);
    const lf = await laneLabels(page);
    check('⤢: every lane labelled, apart', lf.timeline.length === 33 && legible(lf.timeline, lf.timelineH, lf.timelineBox).ok, `${lf.timeline.length} labels`);
    await shot(page, '35-timeline-full-screen.png');
    await page.keyboard.press('Escape');
    await page.waitForFunction((w) => Number(document.querySelector('[data-testid=timeline-svg]').getAttribute('width')) === w, before.svg, { timeout: 5000 }).catch(() => {});
    const back = { box: await page.locator('#p-timeline').boundingBox(), svg: await svgW() };
    check('Esc: the panel is back in the grid, drawn for its size again', Math.abs(back.box.width - before.box.width) < 2 && back.svg === before.svg, JSON.stringify({ before, back }));
    const buttons = await page.$$eval('main.grid > section.panel', (ps) => ps.filter((p) => !p.querySelector(':scope > h2 [data-testid=maximize]')).map((p) => p.id));
    check('every panel has its full-screen button', buttons.length === 0, buttons.join(', ') || 'all');

    // Issue 19: the drawings' text grows with A+ and in full screen (18 px and more
    // with A+ at 1280×720: readable at the back of a room), and nothing is cut off.
    const drawingText = () =>
      page.evaluate(() => {
        const out = {};
        for (const [name, sel] of [['plan', '#p-plan svg.plan-svg'], ['timeline', '[data-testid=timeline-svg]'], ['compare', '[data-testid=compare-svg]']]) {
          const svgEl = document.querySelector(sel);
          if (!svgEl) continue;
          const k = svgEl.getBoundingClientRect().width / svgEl.viewBox.baseVal.width;
          const texts = [...svgEl.querySelectorAll('text')].filter((t) => t.textContent.trim() && t.getBBox().width > 0);
          const px = texts.map((t) => parseFloat(getComputedStyle(t).fontSize) * k);
          const W = svgEl.viewBox.baseVal.width;
          const cut = texts.filter((t) => !t.hasAttribute('textLength') && (t.getBBox().x < -0.5 || t.getBBox().x + t.getBBox().width > W + 0.5)).map((t) => t.textContent.slice(0, 40));
          out[name] = { min: Math.min(...px), n: px.length, cut };
        }
        return out;
      });
    const t0 = await drawingText();
    await page.click('[data-testid=large-text]');
    await page.waitForTimeout(300);
    const t1 = await drawingText();
    const fmt = (t) => Object.entries(t).map(([k, v]) => `${k} ${v.min.toFixed(1)} px (${v.n} texts)`).join(', ');
    check('A+: the drawings\' smallest text is 18 px or more (plan, timeline, compare)', ['plan', 'timeline', 'compare'].every((k) => t1[k] && t1[k].min >= 18), `${fmt(t0)} → ${fmt(t1)}`);
    check('A+: no drawing text cut off at its edge', Object.values(t1).every((v) => v.cut.length === 0), JSON.stringify(Object.fromEntries(Object.entries(t1).map(([k, v]) => [k, v.cut]))));
    await shot(page, '37-large-text-drawings.png');
    await page.click('#p-timeline [data-testid=maximize]');
    await page.waitForTimeout(300);
    const t2 = await drawingText();
    check('A+ and full screen: the timeline\'s text grows again', t2.timeline.min > t1.timeline.min * 1.2, `${t1.timeline.min.toFixed(1)} → ${t2.timeline.min.toFixed(1)} px`);
    await shot(page, '38-large-text-timeline-full.png');
    await page.keyboard.press('Escape');
    await page.click('[data-testid=large-text]');
    await page.waitForTimeout(300);

    // Esc closes the Live drawer; on a plain file server opening it logs no 404.
    const consoleErrors = [];
    const onConsole = (m) => m.type() === 'error' && consoleErrors.push(m.text());
    page.on('console', onConsole);
    await page.click('[data-testid=live-toggle]');
    await page.waitForFunction(() => /Live mode is off/.test(document.querySelector('[data-testid=live-status]')?.textContent ?? ''), null, { timeout: 10000 });
    const liveStatus = await page.textContent('[data-testid=live-status]');
    check('Live… on a plain file server: "no relay here", no console error', /no relay here/.test(liveStatus) && consoleErrors.length === 0, `${liveStatus} | ${consoleErrors.join(' | ')}`);
    await page.keyboard.press('Escape');
    check('Esc closes the Live drawer', await page.locator('[data-testid=live]').isHidden());
    page.off('console', onConsole);

    await page.selectOption('[data-testid=lesson-select]', 'E');
    await page.waitForSelector('#p-lesson:not([hidden]) [data-testid=maximize]', { timeout: 30000 });
    await page.click('#p-lesson [data-testid=maximize]');
    const lb = await page.locator('#p-lesson').boundingBox();
    check('⤢ on the lesson panel: the lesson fills the window', lb.width >= 1200 && lb.height >= 680, JSON.stringify(lb));
    await shot(page, '36-lesson-full-screen.png');
    await page.click('#p-lesson [data-testid=maximize]');
    const lb2 = await page.locator('#p-lesson').boundingBox();
    check('⤢ again: the lesson is back in its dock', lb2.width < 1000, JSON.stringify(lb2));
  } finally {
    await context.close();
  }
}

/**
 * Issue 19: at 150% zoom of a 1280×720 screen (853×480 CSS px) the lesson is a sheet at
 * the bottom of the window and each panel scrolls whole into the space above it: the
 * lesson's text and the panel it talks about on screen together. The compare plot's
 * bound label is whole at fetch size 1, the timeline's headers are not cut off.
 */
async function checkZoom(browser, server, { check, shot, errors }) {
  console.log('150% zoom: the lesson beside each panel; labels whole');
  const context = await browser.newContext({ viewport: { width: 853, height: 480 }, deviceScaleFactor: 1.5 });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`page error (zoom): ${e.message}`));
  try {
    await page.goto(`${server.url}#lesson=E`);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    await page.waitForFunction(() => document.body.dataset.lessonReady === 'E', null, { timeout: 30000 });
    const together = [];
    for (const id of ['p-plan', 'p-timeline', 'p-wire', 'p-loop']) {
      await page.$eval(`#${id}`, (el) => el.scrollIntoView({ block: 'start' }));
      await page.waitForTimeout(150);
      const r = await page.evaluate((id) => {
        const vh = window.innerHeight;
        const p = document.getElementById(id).getBoundingClientRect();
        const l = document.getElementById('p-lesson').getBoundingClientRect();
        const text = document.querySelector('#p-lesson [data-testid=lesson-intro]').getBoundingClientRect();
        return { panelTop: p.top, panelBottom: p.bottom, lessonTop: l.top, lessonBottom: l.bottom, textH: text.height, vh };
      }, id);
      const ok = r.panelTop >= -1 && r.panelBottom <= r.lessonTop + 1 && r.lessonBottom <= r.vh + 1 && r.lessonTop < r.vh - 100;
      together.push(`${id}:${ok ? 'ok' : JSON.stringify(r)}`);
      if (id === 'p-plan') await shot(page, '39-zoom150-lesson-plan.png');
      if (id === 'p-timeline') await shot(page, '40-zoom150-lesson-timeline.png');
    }
    check('150%: the lesson sheet and each panel (plan, timeline, wire, event loop) whole on screen together', together.every((t) => t.endsWith(':ok')), together.join(' '));

    // The compare plot at fetch size 1: the bound's label whole, not crossed by its line.
    await page.goto(`${server.url}?scenario=E&mode=async&rows=300&fetch=1`);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    await page.waitForSelector('[data-testid=compare-bound-label]', { timeout: 60000 });
    const b = await page.evaluate(() => {
      const g = document.querySelector('[data-testid=compare-bound]');
      const svgEl = g.ownerSVGElement;
      const x = Number(g.querySelector('line').getAttribute('x1'));
      const bb = g.querySelector('text').getBBox();
      const back = g.querySelector('rect');
      return { W: svgEl.viewBox.baseVal.width, x, left: bb.x, right: bb.x + bb.width, backed: Number(back.getAttribute('width')) >= bb.width };
    });
    check('fetch size 1: the lower bound\'s label is whole and the dashed line does not run through its words', b.left >= 0 && b.right <= b.W && (b.x < b.left - 1 || b.x > b.right + 1 || b.backed), JSON.stringify(b));
    const headers = await page.$$eval('[data-testid=timeline-svg] .lane-header', (ts) => ts.map((t) => ({ right: t.getBBox().x + t.getBBox().width, W: t.ownerSVGElement.viewBox.baseVal.width, text: t.textContent })));
    check('150%: the timeline\'s headers are not cut off', headers.length > 0 && headers.every((h) => h.right <= h.W + 0.5), JSON.stringify(headers));
    await shot(page, '41-zoom150-compare-fetch1.png');
  } finally {
    await context.close();
  }
}

export async function checkPanels(browser, server, { check, shot, errors, newPage }) {
  const page = await newPage(browser, errors);
  try {
    await checkPanelsAgree(page, server, { check, shot });
    await checkPipelineUntick(page, server, { check });
  } finally {
    await page.context().close();
  }
  await checkLaneLabels(browser, server, { check, shot, errors });
  await checkProjector(browser, server, { check, shot, errors });
  await checkZoom(browser, server, { check, shot, errors });
  await checkExport(browser, server, { check, shot, errors });
}
