// Shared by run.mjs and bench.mjs: start `pgasync serve`, launch headless Chromium.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../..');
export const BIN = process.env.PGASYNC_BIN ? path.resolve(process.env.PGASYNC_BIN) : path.join(ROOT, 'target/release/pgasync');
/**
 * What `pgasync serve` serves: the page (web/) and the model's package (pkg/) of this
 * checkout, or others named by PGASYNC_WEB and PGASYNC_PKG (bench.mjs compares two
 * builds on the same machine under the same load that way).
 */
export const WEB = process.env.PGASYNC_WEB ? path.resolve(process.env.PGASYNC_WEB) : path.join(ROOT, 'web');
export const PKG = process.env.PGASYNC_PKG ? path.resolve(process.env.PGASYNC_PKG) : path.join(ROOT, 'pkg');
export const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
];

/**
 * Starts `pgasync serve --port 0` from the repository root and resolves with
 * {url, stop}. Rejects if the server exits or prints no URL within `timeoutMs`.
 */
export function startServer(timeoutMs = 15000) {
  if (!existsSync(BIN)) {
    return Promise.reject(new Error(`${BIN} not found: build it with \`cargo build --release -p pgasync-cli\` or set PGASYNC_BIN`));
  }
  const proc = spawn(BIN, ['serve', '--port', '0', '--web', WEB, '--pkg', PKG], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const stop = () =>
    new Promise((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      const t = setTimeout(() => proc.kill('SIGKILL'), 3000);
      proc.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      proc.kill('SIGINT'); // the server shuts down gracefully on Ctrl-C
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no URL from \`pgasync serve\` within ${timeoutMs} ms; stdout: ${out} stderr: ${err}`));
    }, timeoutMs);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/pgasync serve: (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        // `exited()`: how the server ended and what it wrote on stderr, if it has ended.
        const exited = () => (proc.exitCode !== null || proc.signalCode !== null ? `exit ${proc.exitCode ?? proc.signalCode}; stderr: ${err.trim().slice(-2000)}` : null);
        resolve({ url: m[1], stop, proc, exited });
      }
    });
    proc.stderr.on('data', (d) => (err += d));
    proc.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`\`pgasync serve\` exited (${code ?? sig}) before printing its URL; stderr: ${err.trim()}`));
    });
    proc.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/**
 * Starts `pgasync demo --port 0` (shard clusters, a postgres_fdw coordinator and the
 * relay serving the page) in a fresh work folder and resolves with {url, stop, log}
 * once the relay prints its URL; null when PostgreSQL is not installed (the demo then
 * says so and serves the simulated page only). `stop()` sends Ctrl-C and waits for the
 * demo to stop its clusters.
 */
export function startDemo(dir, timeoutMs = 240000) {
  const proc = spawn(BIN, ['demo', '--port', '0', '--dir', dir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const stop = () =>
    new Promise((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve(proc.exitCode);
      const t = setTimeout(() => proc.kill('SIGKILL'), 60000);
      proc.once('exit', (code) => {
        clearTimeout(t);
        resolve(code);
      });
      proc.kill('SIGINT');
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no URL from \`pgasync demo\` within ${timeoutMs} ms; stderr: ${err.slice(-2000)}`));
    }, timeoutMs);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/pgasync relay: (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], stop, log: () => err });
      }
    });
    proc.stderr.on('data', (d) => {
      err += d;
      if (/PostgreSQL is not installed/.test(err)) {
        clearTimeout(timer);
        stop().then(() => resolve(null));
      }
    });
    proc.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`\`pgasync demo\` exited (${code ?? sig}) before its URL; stderr: ${err.slice(-2000)}`));
    });
  });
}

export async function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** A page at 1600×1000 that records console errors and page errors into `errors`. */
export async function newPage(browser, errors) {
  const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console.error: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('crash', () => errors.push('page crashed'));
  return page;
}

/** Waits until the page has booted (wasm loaded, first session built). */
export async function waitReady(page, timeout = 20000) {
  await page.waitForSelector('body[data-ready="1"]', { timeout });
}

/**
 * Records every main-thread task over 50 ms (the Long Tasks API) in
 * `window.__longTasks`, from the page's first script on, reloads included.
 */
export async function watchLongTasks(page) {
  await page.addInitScript(() => {
    window.__longTasks = [];
    window.__longTaskStarts = []; // each one's start (ms from the navigation), in step with __longTasks (clear both)
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        window.__longTasks.push(Math.round(e.duration));
        window.__longTaskStarts.push(Math.round(e.startTime));
      }
    }).observe({ type: 'longtask', buffered: true });
  });
}

/**
 * Runs `f` and gives the longest main-thread task over 50 ms it caused (`watchLongTasks`
 * on `page`), and how many: those after the page's first paint apart from those before
 * it (the document's parse, first style, layout and paint: nothing on screen yet to
 * freeze). `{ longest, n, before, ms }`, `ms` the wall time of `f` and the wait after it.
 */
export async function longTasksDuring(page, f) {
  await page.evaluate(() => {
    if (!window.__longTasks) return;
    window.__longTasks.length = 0;
    window.__longTaskStarts.length = 0;
  });
  const t0 = Date.now();
  await f();
  await page.waitForTimeout(300); // let the last task finish and be reported
  const { tasks, starts, painted } = await page.evaluate(() => ({
    tasks: window.__longTasks.slice(),
    starts: window.__longTaskStarts.slice(),
    painted: performance.getEntriesByName('first-paint')[0]?.startTime ?? 0,
  }));
  const after = tasks.filter((_, i) => starts[i] >= painted);
  const before = tasks.filter((_, i) => starts[i] < painted);
  return { longest: Math.max(0, ...after), n: after.length, before: Math.max(0, ...before), ms: Date.now() - t0 };
}

/**
 * Waits until every panel of the page shows one step (`body[data-drawn-step]`, set by
 * web/main.js at the end of a render, of its last stage when split) and that step is
 * `step` (or above `above`, below `below`); resolves with it. Wait on this, not on the
 * status's `data-step`, before reading the event loop, the wire inspector, rows,
 * EXPLAIN, the workshop's panels or the history: a long seek draws the status, plan
 * and timeline first and the other panels in stages, a frame apart.
 */
export async function waitDrawn(page, { step = null, above = null, below = null } = {}, timeout = 10000) {
  const h = await page.waitForFunction(
    ({ step, above, below }) => {
      const d = document.body.dataset.drawnStep;
      if (d === undefined || d !== document.querySelector('[data-testid=step]').dataset.step) return false;
      const k = Number(d);
      return (step === null || k === step) && (above === null || k > above) && (below === null || k < below) && k + 1;
    },
    { step, above, below },
    { timeout },
  );
  return (await h.jsonValue()) - 1;
}

/**
 * Waits until the run on screen has ended (its phase one of `phases`) and every panel
 * shows its last step (`waitDrawn`).
 */
export async function waitFinished(page, timeout = 15000, phases = ['finished']) {
  await page.waitForFunction(
    (phases) => {
      const d = document.body.dataset.drawnStep;
      return d !== undefined && d === document.querySelector('[data-testid=step]').dataset.step && phases.includes(document.querySelector('[data-testid=phase]').textContent.trim());
    },
    phases,
    { timeout },
  );
}

/**
 * Waits for `window.pgasync.settled()` (web/main.js): every panel drawn for one step and
 * no seek, run, rebuild or comparison under way; resolves with the step on screen.
 */
export async function waitSettled(page, timeout = 30000) {
  return page.evaluate(
    (t) => Promise.race([window.pgasync.settled(), new Promise((_, no) => setTimeout(() => no(new Error(`the page did not settle within ${t} ms`)), t))]),
    timeout,
  );
}
