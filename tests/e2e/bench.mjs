// Browser-side numbers of the demo (printed, not asserted): `node bench.mjs`.
//  * wasm size, raw and gzipped: the page's module and the SQL front end's (the editor's);
//  * the longest main-thread block (Long Tasks API) while loading the heaviest allowed
//    run (64 shards × 4,400 rows, rtt 10 s), seeking to its middle and running to its end;
//  * time per Step-event (model step + synchronous render + forced layout) with 16 shards
//    on screen, over 50 steps from the start and 50 from the middle of the run, measured
//    in the page with performance.now(); one step back; Run at the fastest speed;
//  * local throughput of LocalScan(1,000,000).run() in Chromium beside the native figure
//    from `pgasync bench --scenarios A --fetch-size 100`: the same scan (scenario A, one
//    shard of 1,000,000 local rows), each the best of 5 runs, so the ratio compares like
//    with like (a median on one side and a best on the other flattered native).
// PGASYNC_WEB=dir and PGASYNC_PKG=dir measure another build's page and package (e.g.
// main's, built once into a folder of its own) with this script: run the two in turn
// on a loaded machine and compare their ratios, not one run's figures with another's.

import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, BIN, PKG, startServer, launchBrowser, newPage, waitReady, watchLongTasks, waitDrawn, waitFinished } from './lib.mjs';

const STEPS = Number(process.env.BENCH_STEPS ?? 50);
const SCAN_ROWS = 1_000_000;

const median = (xs) => {
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;

async function main() {
  for (const [file, what] of [['pgasync_bg.wasm', "the page's module"], ['pgasync_sql_bg.wasm', "the SQL front end's module, loaded when the editor opens"]]) {
    const wasmPath = path.join(PKG, file);
    const raw = readFileSync(wasmPath);
    const gz = gzipSync(raw); // gzip's default level, as `make pkg` measures
    console.log(`wasm size: ${raw.length.toLocaleString('en-US')} bytes raw, ${gz.length.toLocaleString('en-US')} gzipped (${kb(gz.length)}): ${path.relative(ROOT, wasmPath)}, ${what}`);
  }

  const errors = [];
  const server = await startServer();
  let browser;
  let browserRate = null;
  try {
    browser = await launchBrowser();
    const page = await newPage(browser, errors);
    const query = '?scenario=E&mode=async&shards=16&rows=1000&fetch=100&step=0';
    const t0 = Date.now();
    await page.goto(server.url + query);
    await waitReady(page, 60000);
    const loadMs = Date.now() - t0;
    // Where the load's time went: the page's own marks (web/main.js `loadMark`), in ms
    // from the navigation's start; the comparison (a worker's) may come after ready.
    await page.waitForFunction(() => performance.getEntriesByName('pgasync:compared').length > 0, null, { timeout: 60000 }).catch(() => {});
    const loadAllMs = Date.now() - t0;
    const phases = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const marks = performance.getEntriesByType('mark').filter((m) => m.name.startsWith('pgasync:'));
      return [['html', nav.responseEnd], ['scripts', nav.domContentLoadedEventEnd], ...marks.map((m) => [m.name.slice(8), m.startTime])].map(([k, v]) => [k, Math.round(v)]);
    });

    const r = await page.evaluate((n) => {
      const p = window.pgasync;
      const total = p.snapshot().total_steps;
      // Step-event clicks as the button does them: model step + render, then a forced
      // layout; from the start of the run and from its middle (steady state).
      const clicks = (from) => {
        p.seek(from);
        const times = [];
        while (times.length < n) {
          if (p.isDone()) p.seek(from);
          const t = performance.now();
          p.stepEvent();
          void document.body.offsetHeight;
          times.push(performance.now() - t);
        }
        return times;
      };
      p.profile(true);
      const ui = clicks(0);
      const parts = p.profile(false);
      const mid = clicks(Math.floor(total / 2));
      // One step back from the middle: the run replays from its nearest checkpoint.
      const back = [];
      for (let i = 0; i < 5; i++) {
        p.seek(Math.floor(total / 2));
        const t = performance.now();
        p.seek(Math.floor(total / 2) - 1);
        void document.body.offsetHeight;
        back.push(performance.now() - t);
      }
      // The model's share: the step alone, and the step plus a snapshot.
      p.seek(0);
      const model = [];
      const snap = [];
      while (model.length < n) {
        if (p.session.isDone()) p.session.reset();
        let t = performance.now();
        p.session.stepEvent();
        model.push(performance.now() - t);
        t = performance.now();
        p.snapshot();
        snap.push(performance.now() - t);
      }
      p.seek(0);
      p.render();
      return { total, ui, mid, back, parts, model, snap, lanes: document.querySelectorAll('[data-testid=request-state]').length };
    }, STEPS);
    const line = (xs) => `mean ${mean(xs).toFixed(2)} ms, median ${median(xs).toFixed(2)} ms, max ${Math.max(...xs).toFixed(2)} ms over ${xs.length} steps`;
    console.log(`\ntime per Step-event, 16 shards on screen (E async, 1000 rows/shard, fetch 100; ${r.total} steps per run, ${r.lanes} requests drawn):`);
    console.log(`  step + render + layout, from step 0:      ${line(r.ui)}`);
    console.log(`  step + render + layout, from mid-run:     ${line(r.mid)}`);
    console.log(`  model alone:            step mean ${mean(r.model).toFixed(3)} ms, snapshot mean ${mean(r.snap).toFixed(2)} ms`);
    const nR = r.parts.renders || 1;
    const parts = Object.entries(r.parts).filter(([k]) => k !== 'renders').map(([k, v]) => `${k} ${(v / nR).toFixed(2)}`);
    console.log(`  render parts (mean ms): ${parts.join(', ')}`);
    console.log(`  one step back from mid-run (replay from the nearest checkpoint + render): median ${median(r.back).toFixed(1)} ms`);
    console.log(`  page load to ready (session + recording + compare): ${loadAllMs} ms (goto → ready and the comparison drawn; ready alone ${loadMs} ms)`);
    console.log(`    phases, ms from navigation start: ${phases.map(([k, v]) => `${k} ${v}`).join(', ')}`);

    // Run at the fastest speed for 2 s: steps per second reached, and frames.
    const run = await page.evaluate(async () => {
      const p = window.pgasync;
      p.seek(0);
      const speed = document.querySelector('[data-testid=speed]');
      speed.value = speed.max;
      speed.dispatchEvent(new Event('input'));
      const s0 = p.session.step();
      let frames = 0;
      let worst = 0;
      let last = performance.now();
      const t0 = last;
      document.querySelector('[data-testid=run]').click();
      await new Promise((done) => {
        const f = (ts) => {
          frames++;
          worst = Math.max(worst, ts - last);
          last = ts;
          if (ts - t0 < 2000 && !p.isDone()) requestAnimationFrame(f);
          else done();
        };
        requestAnimationFrame(f);
      });
      const s1 = p.session.step();
      const secs = (performance.now() - t0) / 1000;
      document.querySelector('[data-testid=run]').click(); // pause
      return { label: document.getElementById('speed-label').textContent, steps: s1 - s0, secs, frames, worst };
    });
    console.log(`  Run at ${run.label}: ${(run.steps / run.secs).toFixed(0)} steps/s reached (${run.steps} steps in ${run.secs.toFixed(2)} s, ${(run.frames / run.secs).toFixed(0)} frames/s, longest frame ${run.worst.toFixed(1)} ms)`);

    // The longest main-thread block at the heaviest allowed setting (as the e2e's
    // responsiveness section measures it): load, seek to the middle, run to the end.
    const heavy = await newPage(browser, errors);
    await watchLongTasks(heavy);
    const blocks = [];
    const block = async (what, f) => {
      await heavy.evaluate(() => window.__longTasks && (window.__longTasks.length = 0));
      const t = Date.now();
      await f();
      await heavy.waitForTimeout(300);
      const tasks = await heavy.evaluate(() => window.__longTasks.slice());
      blocks.push({ what, longest: Math.max(0, ...tasks), n: tasks.length, ms: Date.now() - t });
    };
    const idle = () => heavy.waitForFunction(() => document.querySelector('[data-testid=busy]').hidden, null, { timeout: 120000 });
    await block('load', async () => {
      await heavy.goto(server.url + '?scenario=E&shards=64&rows=4400&fetch=100&rtt=10000');
      await waitReady(heavy, 120000);
    });
    const heavyTotal = await heavy.evaluate(() => window.pgasync.recording.totalSteps);
    await block('seek to the middle', async () => {
      await heavy.$eval('[data-testid=scrub]', (el, v) => {
        el.value = String(v);
        el.dispatchEvent(new Event('input'));
      }, Math.floor(heavyTotal / 2));
      await idle();
      await waitDrawn(heavy, { step: Math.floor(heavyTotal / 2) }, 120000);
    });
    await block('run to the end', async () => {
      await heavy.click('[data-testid=to-end]');
      await idle();
      await waitFinished(heavy, 120000);
    });
    await heavy.close();
    console.log(`\nlongest main-thread block, 64 shards × 4,400 rows, rtt 10 s (${heavyTotal} steps; tasks over 50 ms):`);
    for (const b of blocks) console.log(`  ${b.what.padEnd(20)} ${String(b.longest).padStart(5)} ms longest (${b.n} tasks over 50 ms, ${b.ms} ms in all)`);
    console.log(`  longest overall:     ${String(Math.max(...blocks.map((b) => b.longest))).padStart(5)} ms`);

    const scans = await page.evaluate((rows) => {
      // The table is built once (outside the timing); each run is SeqScan + sum.
      const scan = new window.pgasync.wasm.LocalScan(rows);
      const out = [];
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        scan.run();
        out.push(performance.now() - t);
      }
      scan.free();
      return out;
    }, SCAN_ROWS);
    browserRate = SCAN_ROWS / (Math.min(...scans) / 1000);
    console.log(`\nLocalScan(${SCAN_ROWS.toLocaleString('en-US')}).run() in Chromium: ${scans.map((x) => x.toFixed(1)).join(', ')} ms`);
    if (errors.length) console.log(`(console/page errors seen: ${errors.join(' | ')})`);
  } finally {
    if (browser) await browser.close().catch(() => {});
    await server.stop();
  }

  let nativeLine = '';
  let nativeRate = null;
  try {
    const out = execFileSync(BIN, ['bench', '--scenarios', 'A', '--fetch-size', '100'], { cwd: ROOT, encoding: 'utf8' });
    nativeLine = out.split('\n').find((l) => /local throughput/i.test(l)) ?? '';
    const m = nativeLine.match(/([\d.]+)\s*M rows\/s/);
    if (m) nativeRate = Number(m[1]) * 1e6;
  } catch (e) {
    nativeLine = `(native bench failed: ${e.message})`;
  }
  const fmt = (x) => (x == null ? 'n/a' : `${(x / 1e6).toFixed(1)} M rows/s`);
  console.log(`\nlocal throughput (SeqScan + sum over ${SCAN_ROWS.toLocaleString('en-US')} rows):`);
  console.log(`  ${'wasm (Chromium, best of 5)'.padEnd(32)} ${'native (pgasync bench, best of 5)'}`);
  console.log(`  ${fmt(browserRate).padEnd(32)} ${fmt(nativeRate)}${browserRate && nativeRate ? `   (wasm/native = ${(browserRate / nativeRate).toFixed(2)})` : ''}`);
  console.log(`  native line: ${nativeLine.trim()}`);
}

main().catch((e) => {
  console.error(`bench failed: ${e.message}`);
  process.exit(1);
});
