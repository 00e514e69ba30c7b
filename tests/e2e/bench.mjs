// Browser-side numbers of the demo (printed, not asserted): `node bench.mjs`.
//  * wasm size, raw and gzipped;
//  * time per Step-event (model step + synchronous render + forced layout) with 16 shards
//    on screen, mean over 50 steps, measured in the page with performance.now();
//  * local throughput of LocalScan(1,000,000).run() in Chromium (median of 5) beside the
//    native figure from `pgasync bench --scenarios A --fetch-size 100`.

import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT, BIN, startServer, launchBrowser, newPage, waitReady } from './lib.mjs';

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
  const wasmPath = path.join(ROOT, 'pkg/pgasync_bg.wasm');
  const raw = readFileSync(wasmPath);
  const gz = gzipSync(raw, { level: 9 });
  console.log(`wasm size: ${kb(raw.length)} raw, ${kb(gz.length)} gzipped (${path.relative(process.cwd(), wasmPath)})`);

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

    const r = await page.evaluate((n) => {
      const p = window.pgasync;
      const total = p.snapshot().total_steps;
      // Step-event clicks as the button does them: model step + render, then a forced layout.
      const ui = [];
      p.profile(true);
      while (ui.length < n) {
        if (p.isDone()) p.seek(0);
        const t = performance.now();
        p.stepEvent();
        void document.body.offsetHeight;
        ui.push(performance.now() - t);
      }
      const parts = p.profile(false);
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
      return { total, ui, parts, model, snap, lanes: document.querySelectorAll('[data-testid=request-state]').length };
    }, STEPS);
    console.log(`\ntime per Step-event, 16 shards on screen (E async, 1000 rows/shard, fetch 100; ${r.total} steps per run, ${r.lanes} requests drawn):`);
    console.log(`  step + render + layout: mean ${mean(r.ui).toFixed(2)} ms, median ${median(r.ui).toFixed(2)} ms, max ${Math.max(...r.ui).toFixed(2)} ms over ${r.ui.length} steps`);
    console.log(`  model alone:            step mean ${mean(r.model).toFixed(2)} ms, snapshot mean ${mean(r.snap).toFixed(2)} ms`);
    const nR = r.parts.renders || 1;
    const parts = Object.entries(r.parts).filter(([k]) => k !== 'renders').map(([k, v]) => `${k} ${(v / nR).toFixed(2)}`);
    console.log(`  render parts (mean ms): ${parts.join(', ')}`);
    console.log(`  page load to ready (session + recording + compare): ${loadMs} ms`);

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
    const med = median(scans);
    browserRate = SCAN_ROWS / (med / 1000);
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
  console.log(`  ${'wasm (Chromium, median of 5)'.padEnd(32)} ${'native (pgasync bench)'}`);
  console.log(`  ${fmt(browserRate).padEnd(32)} ${fmt(nativeRate)}${browserRate && nativeRate ? `   (wasm/native = ${(browserRate / nativeRate).toFixed(2)})` : ''}`);
  console.log(`  native line: ${nativeLine.trim()}`);
}

main().catch((e) => {
  console.error(`bench failed: ${e.message}`);
  process.exit(1);
});
