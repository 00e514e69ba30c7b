// Where the page's main-thread time goes, by task (printed, not asserted): `node
// profile.mjs [heavy|load|steps]` records a Chrome trace of the heavy actions of the
// responsiveness section (load, seek to the middle, 5 steps back, run to the end, a
// step back from the end) at 64 shards × 4,400 rows (Q=?… for another URL), and for
// each main-thread task over MIN ms (45 by default) prints the browser's own events in
// it (layout, style, paint, GC) and the CPU samples inside its bounds by function,
// inclusive and self (TOP of them). Tracing slows the page about twofold: compare
// tasks with each other, not with the 50 ms goal.
// Wasm functions have names only in a module built with them: PKG=dir serves that
// pkg folder instead of pkg/ (e.g. `cargo build --release --target wasm32-unknown-unknown
// --lib --no-default-features` then `wasm-bindgen --target web --out-dir DIR …/pgasync.wasm`,
// without wasm-opt, which drops the names).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT, BIN, WEB, launchBrowser, newPage, waitReady, waitDrawn, waitFinished } from './lib.mjs';

const MIN = Number(process.env.MIN ?? 45);
const which = process.argv[2] ?? 'heavy';
const query = process.env.Q ?? '?scenario=E&shards=64&rows=4400&fetch=100&rtt=10000';
const PKG = path.resolve(process.env.PKG ?? process.env.PGASYNC_PKG ?? path.join(ROOT, 'pkg'));
const proc = spawn(BIN, ['serve', '--port', '0', '--web', WEB, '--pkg', PKG], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
const server = await new Promise((res) => { let out = ''; proc.stdout.on('data', (d) => { out += d; const m = out.match(/pgasync serve: (http:\/\/\S+)/); if (m) res({ url: m[1] }); }); });
const errors = [];
const browser = await launchBrowser();
try {
  const page = await newPage(browser, errors);
  const idle = () => page.waitForFunction(() => document.querySelector('[data-testid=busy]').hidden, null, { timeout: 120000 });
  const act = async (name, f) => {
    await browser.startTracing(page, { categories: ['toplevel', 'devtools.timeline', 'disabled-by-default-v8.cpu_profiler', 'v8.execute'] });
    const t = Date.now();
    await f();
    await page.waitForTimeout(300);
    const buf = await browser.stopTracing();
    console.log(`\n======== ${name}: ${Date.now() - t} ms`);
    analyze(JSON.parse(buf.toString()));
  };
  await act('load', async () => { await page.goto(server.url + query); await waitReady(page, 120000); });
  const total = await page.evaluate(() => window.pgasync.recording.totalSteps);
  if (which === 'load') {
    // the load alone
  } else if (which === 'heavy') {
    await act('seek to middle', async () => {
      await page.$eval('[data-testid=scrub]', (el, v) => { el.value = String(v); el.dispatchEvent(new Event('input')); }, Math.floor(total / 2));
      await idle();
      await waitDrawn(page, { step: Math.floor(total / 2) }, 120000);
    });
    await act('5 steps back', async () => {
      for (let i = 0; i < 5; i++) {
        await page.click('[data-testid=step-back]');
        await waitDrawn(page, { step: Math.floor(total / 2) - i - 1 }, 60000);
      }
    });
    await act('run to end', async () => {
      await page.click('[data-testid=to-end]');
      await idle();
      await waitFinished(page, 120000);
    });
    await act('step back from end', async () => {
      await page.click('[data-testid=step-back]');
      await waitDrawn(page, { step: total - 1 }, 60000);
    });
  } else {
    await act('steps', async () => {
      await page.evaluate(() => {
        const p = window.pgasync;
        for (const from of [0, Math.floor(p.snapshot().total_steps / 2)]) {
          p.seek(from);
          for (let i = 0; i < 50; i++) { p.stepEvent(); void document.body.offsetHeight; }
        }
      });
    });
  }
  if (errors.length) console.log('errors:', errors);
} finally {
  await browser.close();
  proc.kill('SIGINT');
}

function analyze(trace) {
  const evs = trace.traceEvents ?? trace;
  // the renderer main thread
  const names = evs.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  const mains = new Set(names.map((e) => `${e.pid}:${e.tid}`));
  const tasks = evs.filter((e) => e.ph === 'X' && mains.has(`${e.pid}:${e.tid}`) && (e.name === 'ThreadControllerImpl::RunTask' || e.name === 'RunTask') && e.dur >= MIN * 1000);
  // CPU profile chunks
  const nodes = new Map();
  const parent = new Map();
  const samples = []; // [ts, nodeId]
  const profiles = new Map();
  for (const e of evs) {
    if (e.name === 'Profile') profiles.set(e.id, e.args.data.startTime);
    if (e.name !== 'ProfileChunk') continue;
    const d = e.args.data;
    for (const n of d.cpuProfile?.nodes ?? []) {
      nodes.set(`${e.id}:${n.id}`, n);
      if (n.parent) parent.set(`${e.id}:${n.id}`, `${e.id}:${n.parent}`);
    }
    let t = profiles.get(e.id) ?? 0;
    if (!profiles.has(`${e.id}:last`)) profiles.set(`${e.id}:last`, t);
    t = profiles.get(`${e.id}:last`);
    const s = d.cpuProfile?.samples ?? [];
    const dt = d.timeDeltas ?? [];
    for (let i = 0; i < s.length; i++) {
      t += dt[i];
      samples.push([t, `${e.id}:${s[i]}`]);
    }
    profiles.set(`${e.id}:last`, t);
  }
  samples.sort((a, b) => a[0] - b[0]);
  const name = (n) => `${n.callFrame.functionName || '(anon)'} ${(n.callFrame.url ?? '').split('/').pop()}`;
  const merged = [];
  for (const t of tasks.sort((a, b) => a.ts - b.ts)) {
    if (merged.length && t.ts < merged[merged.length - 1].ts + merged[merged.length - 1].dur) continue; // nested
    merged.push(t);
  }
  {
    const all = evs.filter((e) => e.ph === 'X' && mains.has(`${e.pid}:${e.tid}`) && (e.name === 'ThreadControllerImpl::RunTask' || e.name === 'RunTask'));
    const busy = all.reduce((a, e) => a + e.dur, 0) / 1000;
    const first = Math.min(...all.map((e) => e.ts)), last = Math.max(...all.map((e) => e.ts + e.dur));
    console.log(`main thread: ${all.length} tasks, busy ${busy.toFixed(0)} ms of ${((last - first) / 1000).toFixed(0)} ms`);
  }
  console.log(`tasks over ${MIN} ms: ${merged.map((t) => (t.dur / 1000).toFixed(0)).join(', ') || 'none'}`);
  for (const t of merged) {
    const inside = samples.filter(([ts]) => ts >= t.ts && ts <= t.ts + t.dur);
    const total = new Map();
    const self = new Map();
    const per = inside.length ? t.dur / 1000 / inside.length : 0;
    for (const [, id] of inside) {
      const n = nodes.get(id);
      if (!n) continue;
      self.set(name(n), (self.get(name(n)) ?? 0) + per);
      const seen = new Set();
      for (let k = id; k; k = parent.get(k)) {
        const nm = name(nodes.get(k));
        if (seen.has(nm)) continue;
        seen.add(nm);
        total.set(nm, (total.get(nm) ?? 0) + per);
      }
    }
    // Nested trace events (layout, style, paint, GC, parse) by name, self-inclusive.
    const nested = new Map();
    for (const e of evs) {
      if (e.ph !== 'X' || !mains.has(`${e.pid}:${e.tid}`) || e === t || e.ts < t.ts || e.ts > t.ts + t.dur) continue;
      if (/RunTask|ThreadController|FunctionCall|v8.callFunction|EvaluateScript|TimerFire|V8.Execute/.test(e.name)) continue;
      nested.set(e.name, (nested.get(e.name) ?? 0) + (e.dur ?? 0) / 1000);
    }
    const events = [...nested].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ');
    const top = (m, k) => [...m].filter(([x]) => !/^\((root|program)\)/.test(x)).sort((a, b) => b[1] - a[1]).slice(0, k).map(([x, v]) => `      ${v.toFixed(1).padStart(6)}  ${x}`).join('\n');
    console.log(`  --- task ${(t.dur / 1000).toFixed(1)} ms (${inside.length} samples)\n    events: ${events}\n    inclusive:\n${top(total, Number(process.env.TOP ?? 22))}\n    self:\n${top(self, 8)}`);
  }
}
