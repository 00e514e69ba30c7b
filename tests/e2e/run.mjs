// End-to-end test of the demo page: `node run.mjs` (from tests/e2e, after `npm install`).
// Starts `pgasync serve`, drives headless Chromium through the page, saves screenshots
// into screenshots/, and exits non-zero naming the first check that failed.

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { HERE, startServer, launchBrowser, newPage, waitReady } from './lib.mjs';

const SHOTS = path.join(HERE, 'screenshots');
const started = Date.now();
const errors = []; // console errors and page errors
let checks = 0;

class CheckFailed extends Error {}

function check(name, ok, detail = '') {
  checks++;
  detail = String(detail ?? '');
  if (ok && detail.length > 160) detail = detail.slice(0, 157) + '…';
  if (!ok) throw new CheckFailed(`${name}${detail ? `: ${detail}` : ''}`);
  console.log(`  ok  ${name}${detail ? ` (${detail})` : ''}`);
}

function noErrorsSoFar(where) {
  check(`no console/page errors ${where}`, errors.length === 0, errors.join(' | '));
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(SHOTS, name) });
  console.log(`  --  screenshot ${name}`);
}

const step = async (page) => Number(await page.getAttribute('[data-testid=step]', 'data-step'));
const cursorX = async (page) => Number(await page.getAttribute('[data-testid=time-cursor]', 'x1'));
const sessionSerial = async (page) => Number(await page.getAttribute('body', 'data-session'));

/** Waits until the page has built a new session (after a knob change). */
async function waitNewSession(page, before) {
  await page.waitForFunction((b) => Number(document.body.dataset.session) > b, before, { timeout: 15000 });
}

async function main() {
  mkdirSync(SHOTS, { recursive: true });
  const server = await startServer();
  console.log(`server: ${server.url}`);
  let browser;
  try {
    browser = await launchBrowser();
    const page = await newPage(browser, errors);

    // 1. Load.
    console.log('load');
    await page.goto(server.url);
    await waitReady(page);
    check('page title', (await page.title()).includes('pgasync'));
    check('no error banner on load', await page.locator('[data-testid=error]').isHidden());
    const narration0 = (await page.textContent('[data-testid=narration]')).trim();
    check('narration shown on load', narration0.length > 0, narration0);
    const nOptions = await page.locator('[data-testid=scenario] option').count();
    check('scenario select lists all 10 scenarios', nOptions === 10, `${nOptions}`);
    check('plan tree drawn', (await page.locator('[data-testid=plan-node]').count()) > 0);
    check('timeline drawn', await page.locator('[data-testid=timeline-svg]').isVisible());
    check('window.pgasync exposed', await page.evaluate(() => typeof window.pgasync?.snapshot === 'function' && window.pgasync.snapshot().step === 0));
    await shot(page, '01-loaded.png');
    noErrorsSoFar('on load');

    // 2. Scenario E, async (go through another scenario so the select really rebuilds).
    console.log('scenario E, async');
    let s0 = await sessionSerial(page);
    await page.selectOption('[data-testid=scenario]', 'D');
    await waitNewSession(page, s0);
    const explD = await page.textContent('[data-testid=explanation]');
    s0 = await sessionSerial(page);
    await page.selectOption('[data-testid=scenario]', 'E');
    await waitNewSession(page, s0);
    s0 = await sessionSerial(page);
    await page.selectOption('[data-testid=mode]', 'sync');
    await waitNewSession(page, s0);
    check('sync mode has no async requests', (await page.locator('[data-testid=request-state]').count()) === 0);
    s0 = await sessionSerial(page);
    await page.selectOption('[data-testid=mode]', 'async');
    await waitNewSession(page, s0);
    const explE = await page.textContent('[data-testid=explanation]');
    check('explanation follows the scenario', explE !== explD && /dedicated connection/.test(explE), explE);
    check('URL holds scenario and mode', /scenario=E/.test(page.url()) && /mode=async/.test(page.url()), page.url());
    const nReq = await page.locator('[data-testid=request-state]').count();
    check('E async: 4 async requests drawn', nReq === 4, `${nReq}`);
    const idle = await page.locator('[data-testid=request-state][data-state=Idle]').count();
    check('requests start Idle, labelled', idle === 4 && (await page.locator('[data-testid=request-state]').first().textContent()).includes('Idle'));

    // 3. Step until a request shows "Callback pending".
    console.log('step until Callback pending');
    const pendingSel = '[data-testid=plan] [data-state="CallbackPending"]';
    let stepsTaken = 0;
    while ((await page.locator(pendingSel).count()) === 0 && stepsTaken < 30) {
      const before = await step(page);
      await page.click('[data-testid=step-event]');
      await page.waitForFunction((b) => Number(document.querySelector('[data-testid=step]').dataset.step) > b, before, { timeout: 5000 });
      stepsTaken++;
      if (stepsTaken === 1) {
        const w = await page.locator('[data-testid=request-state][data-state=Waiting]').count();
        check('after the first step every request is Waiting', w === 4, `${w}`);
        const ws = await page.textContent('[data-testid=wait-set]');
        check('event loop waits on the four servers', ['s1', 's2', 's3', 's4'].every((s) => ws.includes(s)), ws.trim());
      }
    }
    const pending = page.locator(pendingSel).first();
    check('a request shows Callback pending', (await page.locator(pendingSel).count()) > 0, `after ${stepsTaken} steps`);
    check('the Callback pending label is visible', await pending.isVisible());
    const pendingText = (await pending.locator('text').allTextContents()).join(' ').trim();
    check('the label says "Callback pending"', pendingText.includes('Callback pending'), pendingText);
    const fired = (await page.textContent('[data-testid=fired]')).trim();
    check('event loop shows fired requests', /#\d/.test(fired), fired);
    const wireN = await page.locator('[data-testid=wire-line]').count();
    check('wire inspector shows protocol messages', wireN > 0 && (await page.textContent('[data-testid=wire]')).includes('Query: '), `${wireN} lines`);
    check('URL holds the step', page.url().includes(`step=${await step(page)}`), page.url());
    await shot(page, '02-callback-pending.png');

    // keyboard: → steps, ← steps back
    const k0 = await step(page);
    await page.locator('body').press('ArrowRight');
    await page.waitForFunction((b) => Number(document.querySelector('[data-testid=step]').dataset.step) === b + 1, k0, { timeout: 5000 });
    await page.locator('body').press('ArrowLeft');
    await page.waitForFunction((b) => Number(document.querySelector('[data-testid=step]').dataset.step) === b, k0, { timeout: 5000 });
    check('keys → and ← step forward and back', (await step(page)) === k0);
    await page.locator('body').press('Space');
    await page.waitForSelector('[data-testid=run].on', { timeout: 5000 });
    await page.locator('body').press('Space');
    await page.waitForSelector('[data-testid=run]:not(.on)', { timeout: 5000 });
    check('space runs and pauses', (await page.textContent('[data-testid=run]')).includes('Run'));
    await page.locator('body').press('r');
    await page.waitForFunction(() => document.querySelector('[data-testid=step]').dataset.step === '0', null, { timeout: 5000 });
    check('key r resets', (await step(page)) === 0 && (await page.locator('[data-testid=request-state][data-state=Idle]').count()) === 4);
    noErrorsSoFar('while stepping');

    // 4. Run to the end with Run (fastest speed).
    console.log('run to the end');
    await page.locator('[data-testid=speed]').fill('8');
    await page.click('[data-testid=run]');
    await page.waitForFunction(() => document.querySelector('[data-testid=phase]').textContent.trim() === 'finished', null, { timeout: 30000 });
    check('run reaches the end', (await page.textContent('[data-testid=phase]')).trim() === 'finished');
    const total = Number(await page.textContent('#st-total'));
    check('step counter at the last step', (await step(page)) === total, `${await step(page)}/${total}`);
    check('Run button back to "Run"', (await page.textContent('[data-testid=run]')).includes('Run'));
    const rowsText = await page.textContent('[data-testid=rows]');
    check('result row shown', /sum/.test(rowsText) && /\d/.test(rowsText), rowsText.trim());
    const explain = await page.locator('[data-testid=explain]').innerText();
    const asyncLines = explain.split('\n').filter((l) => /Async Foreign Scan/.test(l) && /rows=/.test(l));
    check('EXPLAIN shows exactly 4 "Async Foreign Scan … rows=" lines', asyncLines.length === 4, `${asyncLines.length}`);
    check('EXPLAIN shows the execution time', /Execution Time: [\d.]+ ms/.test(explain));
    await page.click('[data-testid=copy-explain]');
    await page.waitForFunction(() => document.getElementById('copy-msg').textContent !== '', null, { timeout: 5000 });
    check('Copy button answers', (await page.textContent('#copy-msg')).length > 0, await page.textContent('#copy-msg'));
    await shot(page, '03-finished.png');
    noErrorsSoFar('after running to the end');

    // 5. Compare view: async faster than sync.
    console.log('compare');
    const cmp = page.locator('[data-testid=compare]');
    await cmp.scrollIntoViewIfNeeded();
    check('compare view visible', await cmp.isVisible());
    const syncMs = parseFloat(await page.textContent('[data-testid=compare-sync-ms]'));
    const asyncMs = parseFloat(await page.textContent('[data-testid=compare-async-ms]'));
    check('compare shows both totals', Number.isFinite(syncMs) && Number.isFinite(asyncMs), `sync ${syncMs} ms, async ${asyncMs} ms`);
    check('async total < sync total', asyncMs < syncMs, `${asyncMs} < ${syncMs}`);
    const gain = parseFloat(await page.textContent('[data-testid=compare-gain]'));
    check('gain shown and positive', gain > 0, `${gain}%`);
    const bound = await page.evaluate(() => {
      const g = document.querySelector('[data-testid=compare-bound]');
      const l = g?.querySelector('line');
      return l ? { x: Number(l.getAttribute('x1')), h: Number(l.getAttribute('y2')) - Number(l.getAttribute('y1')), label: g.textContent } : null;
    });
    check('limit line drawn and labelled', bound && bound.h > 20 && /limit [\d.]+%/.test(bound.label), bound?.label);
    const bars = await page.evaluate(() => ['sync', 'async'].map((r) => Number(document.querySelector(`[data-testid=compare-bar-${r}]`).getAttribute('width'))));
    check('async bar shorter than sync bar', bars[1] < bars[0], `${bars[1].toFixed(0)} px < ${bars[0].toFixed(0)} px`);
    const runTime = parseFloat(await page.textContent('[data-testid=time]'));
    check('the stepped run took the compare view\'s async time', Math.abs(runTime - asyncMs) < 0.0015, `${runTime} vs ${asyncMs}`);
    await shot(page, '04-compare.png');

    // 6. Seek back by clicking the timeline at a third of its width.
    console.log('seek back on the timeline');
    const stepBefore = await step(page);
    const xBefore = await cursorX(page);
    // a third of the way along the time axis (the plot area right of the lane labels)
    const box = await page.locator('[data-testid=timeline-svg] .plot-bg').boundingBox();
    await page.mouse.click(box.x + box.width / 3, box.y + box.height / 2);
    await page.waitForFunction((b) => Number(document.querySelector('[data-testid=step]').dataset.step) < b, stepBefore, { timeout: 5000 });
    const stepAfter = await step(page);
    const xAfter = await cursorX(page);
    check('step decreased', stepAfter < stepBefore, `${stepBefore} → ${stepAfter}`);
    check('time cursor moved left', xAfter < xBefore, `${xBefore.toFixed(1)} → ${xAfter.toFixed(1)}`);
    check('phase back to executing', (await page.textContent('[data-testid=phase]')).trim() === 'executing');
    await shot(page, '05-seek-back.png');

    // 7. Reload from the URL: same step, time and narration.
    console.log('reload from the URL');
    await page.waitForFunction((s) => location.search.includes(`step=${s}`), stepAfter, { timeout: 5000 });
    const url = page.url();
    const view = async () => ({
      step: await step(page),
      time: (await page.textContent('[data-testid=time]')).trim(),
      narration: (await page.textContent('[data-testid=narration]')).trim(),
      scenario: await page.inputValue('[data-testid=scenario]'),
      mode: await page.inputValue('[data-testid=mode]'),
      fetch: await page.inputValue('[data-testid=knob-fetch]'),
    });
    const before = await view();
    await page.goto(url);
    await waitReady(page);
    const after = await view();
    for (const k of Object.keys(before)) check(`reload keeps ${k}`, before[k] === after[k], `${JSON.stringify(before[k])} vs ${JSON.stringify(after[k])}`);
    check('reload keeps the cursor', Math.abs((await cursorX(page)) - xAfter) < 0.5);
    await shot(page, '06-reloaded.png');
    noErrorsSoFar('after reload');

    // 8. Bad knobs: the error is shown in the page, the page keeps working.
    console.log('bad knobs');
    const serialBad = await sessionSerial(page);
    await page.fill('[data-testid=knob-shards]', '0');
    await page.press('[data-testid=knob-shards]', 'Tab');
    await page.waitForSelector('[data-testid=error]:visible', { timeout: 5000 });
    const err1 = (await page.textContent('[data-testid=error]')).trim();
    check('shards = 0 shows an error in the page', /shards/.test(err1) && /range/.test(err1), err1);
    check('the bad input is marked', await page.locator('[data-testid=knob-shards].invalid').count() === 1);
    check('no new session for a bad knob', (await sessionSerial(page)) === serialBad);
    const st = await step(page);
    await page.click('[data-testid=step-event]');
    check('the page still steps after a bad knob', (await step(page)) === st + 1);
    await page.fill('[data-testid=knob-shards]', '');
    await page.press('[data-testid=knob-shards]', 'Tab');
    await waitNewSession(page, serialBad);
    check('a good knob clears the error', await page.locator('[data-testid=error]').isHidden());
    await page.fill('[data-testid=knob-fetch]', '0');
    await page.press('[data-testid=knob-fetch]', 'Tab');
    await page.waitForSelector('[data-testid=error]:visible', { timeout: 5000 });
    const err2 = (await page.textContent('[data-testid=error]')).trim();
    check('fetch size 0 shows an error in the page', /fetch_size/.test(err2), err2);
    await page.fill('[data-testid=knob-rtts]', '1,x,3');
    await page.press('[data-testid=knob-rtts]', 'Tab');
    const err3 = (await page.textContent('[data-testid=error]')).trim();
    check('a non-number shows an error in the page', /not a number/.test(err3), err3);
    await shot(page, '07-bad-knob.png');
    check('page did not crash', await page.evaluate(() => document.body.dataset.ready === '1' && typeof window.pgasync.snapshot === 'function'));
    noErrorsSoFar('after bad knobs');

    // 9. Every scenario, both modes, loads from its URL and runs to the end.
    console.log('all scenarios');
    const ids = await page.$$eval('[data-testid=scenario] option', (os) => os.map((o) => o.value));
    const seen = [];
    for (const id of ids) {
      for (const mode of ['sync', 'async']) {
        await page.goto(`${server.url}?scenario=${id}&mode=${mode}&rows=300&fetch=100`);
        await waitReady(page);
        await page.click('[data-testid=to-end]');
        await page.waitForFunction(() => document.querySelector('[data-testid=phase]').textContent.trim() === 'finished', null, { timeout: 15000 });
        const ok = (await page.locator('[data-testid=error]').isHidden()) && (await page.locator('[data-testid=compare-async-ms]').count()) === 1;
        if (!ok) check(`scenario ${id} ${mode} runs without an error`, false, await page.textContent('[data-testid=error]'));
        seen.push(`${id}/${mode}`);
      }
    }
    check('every scenario runs to the end in both modes', seen.length === 2 * ids.length, `${seen.length} runs`);
    await page.goto(`${server.url}?scenario=D&mode=async&sharing=pipelined&rtts=1,2,5,1&step=4`);
    await waitReady(page);
    check('sharing and per-shard RTT come back from the URL', (await page.inputValue('[data-testid=sharing]')) === 'pipelined' && (await page.isChecked('[data-testid=pipeline]')) && (await page.inputValue('[data-testid=knob-rtts]')) === '1,2,5,1');
    check('step comes back from the URL', (await step(page)) === 4);
    noErrorsSoFar('at the end');
  } finally {
    if (browser) await browser.close().catch(() => {});
    await server.stop();
  }
}

main().then(
  () => {
    console.log(`PASS: ${checks} checks in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    process.exit(0);
  },
  (e) => {
    if (errors.length) console.error(`console/page errors seen: ${errors.join(' | ')}`);
    console.error(`FAIL: ${e instanceof CheckFailed ? 'check failed: ' : ''}${e.message}`);
    if (!(e instanceof CheckFailed) && e.stack) console.error(e.stack);
    process.exit(1);
  },
);
