// Where the page's load goes, phase by phase (printed, not asserted): `node
// loadprof.mjs [light|heavy] [runs]` loads the page under a Chrome trace with CPU samples
// and, for each phase between two of the page's marks (`pgasync:session` →
// `pgasync:recorded`, …), prints the main thread's CPU samples by function (self time),
// and their share in wasm, in JSON.parse, in the garbage collector and in the rest of
// JavaScript. Wasm functions have names only in a module built with them (PKG=dir, as
// profile.mjs says); PGASYNC_WEB names another page.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT, BIN, WEB, launchBrowser, newPage, waitReady } from './lib.mjs';

const URLS = { light: '?scenario=E&mode=async&shards=16&rows=1000&fetch=100&step=0', heavy: '?scenario=E&shards=64&rows=4400&fetch=100&rtt=10000' };
const which = process.argv[2] ?? 'light';
const runs = Number(process.argv[3] ?? 1);
const TOP = Number(process.env.TOP ?? 12);
const PKG = path.resolve(process.env.PKG ?? process.env.PGASYNC_PKG ?? path.join(ROOT, 'pkg'));
const proc = spawn(BIN, ['serve', '--port', '0', '--web', WEB, '--pkg', PKG], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
const server = await new Promise((res) => {
  let out = '';
  proc.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/pgasync serve: (http:\/\/\S+)/);
    if (m) res({ url: m[1] });
  });
});
const browser = await launchBrowser();
try {
  for (let r = 0; r < runs; r++) {
    const page = await newPage(browser, []);
    await browser.startTracing(page, { categories: ['toplevel', 'devtools.timeline', 'blink.user_timing', 'disabled-by-default-v8.cpu_profiler', 'v8'] });
    await page.goto(server.url + (URLS[which] ?? which));
    await waitReady(page, 180000);
    await page.waitForFunction(() => performance.getEntriesByName('pgasync:compared').length > 0, null, { timeout: 180000 });
    const marks = await page.evaluate(() => performance.getEntriesByType('mark').filter((m) => m.name.startsWith('pgasync:')).map((m) => [m.name.slice(8), m.startTime]));
    await page.waitForTimeout(200);
    const trace = JSON.parse((await browser.stopTracing()).toString()).traceEvents;
    await page.close();
    analyze(trace, marks);
  }
} finally {
  await browser.close();
  proc.kill('SIGINT');
}

function analyze(evs, marks) {
  const mains = new Set(evs.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  const nav = evs.find((e) => e.name === 'navigationStart' && mains.has(`${e.pid}:${e.tid}`))?.ts;
  const nodes = new Map();
  const parent = new Map();
  const samples = [];
  const last = new Map();
  for (const e of evs) {
    if (e.name === 'Profile' && mains.has(`${e.pid}:${e.tid}`)) last.set(e.id, e.args.data.startTime);
    if (e.name !== 'ProfileChunk' || !last.has(e.id)) continue;
    const d = e.args.data;
    for (const n of d.cpuProfile?.nodes ?? []) {
      nodes.set(`${e.id}:${n.id}`, n);
      if (n.parent) parent.set(`${e.id}:${n.id}`, `${e.id}:${n.parent}`);
    }
    let t = last.get(e.id) ?? 0;
    const s = d.cpuProfile?.samples ?? [];
    for (let i = 0; i < s.length; i++) {
      t += d.timeDeltas[i];
      samples.push([(t - nav) / 1000, `${e.id}:${s[i]}`]);
    }
    last.set(e.id, t);
  }
  samples.sort((a, b) => a[0] - b[0]);
  const name = (n) => `${n.callFrame.functionName || '(anon)'} ${(n.callFrame.url ?? '').split('/').pop()}`;
  const kind = (id) => {
    // The innermost frame decides: wasm code, JSON.parse, GC, idle/program, else JS.
    const n = nodes.get(id);
    const f = n.callFrame;
    if (f.functionName === '(garbage collector)') return 'gc';
    if (f.functionName === '(program)' || f.functionName === '(idle)' || f.functionName === '(root)') return 'program';
    if (/\.wasm/.test(f.url ?? '') || /^\$?wasm-function|^\$/.test(f.functionName) || f.codeType === 'wasm') return 'wasm';
    if (f.functionName === 'parse' && !f.url) return 'JSON.parse';
    return 'js';
  };
  const bounds = [['nav', 0], ...marks];
  console.log(`marks: ${marks.map(([k, v]) => `${k} ${Math.round(v)}`).join(', ')}`);
  for (let i = 1; i < bounds.length; i++) {
    const [from, a] = bounds[i - 1];
    const [to, b] = bounds[i];
    const inside = samples.filter(([t]) => t > a && t <= b);
    if (!inside.length) continue;
    // each sample stands for the time until the next one
    const self = new Map();
    const incl = new Map();
    const kinds = new Map();
    let total = 0;
    const callees = new Map();
    for (let j = 0; j < inside.length; j++) {
      const dt = (j + 1 < inside.length ? inside[j + 1][0] : b) - inside[j][0];
      const id = inside[j][1];
      const n = nodes.get(id);
      if (!n) continue;
      if (process.env.FOCUS) {
        let hit = false;
        for (let p = id; p && !hit; p = parent.get(p)) hit = new RegExp(process.env.FOCUS).test(name(nodes.get(p)));
        if (!hit) continue;
      }
      if (process.env.CALLEES) {
        // the frames FOCUS calls, two levels down, from its outermost occurrence
        const stack = [];
        for (let p = id; p; p = parent.get(p)) stack.push(name(nodes.get(p)));
        const at = stack.findLastIndex((x) => new RegExp(process.env.FOCUS).test(x));
        const path = stack.slice(Math.max(0, at - Number(process.env.CALLEES)), at).reverse().map((x) => x.replace(/ pgasync_bg.wasm$/, '').replace(/::h[0-9a-f]{16}/, '')).join(' > ') || '(self)';
        callees.set(path, (callees.get(path) ?? 0) + (j + 1 < inside.length ? inside[j + 1][0] : b) - inside[j][0]);
      }
      const k = kind(id);
      if (k === 'program' && n.callFrame.functionName === '(idle)') continue;
      total += dt;
      kinds.set(k, (kinds.get(k) ?? 0) + dt);
      self.set(name(n), (self.get(name(n)) ?? 0) + dt);
      const seen = new Set();
      for (let p = id; p; p = parent.get(p)) {
        const nm = name(nodes.get(p));
        if (seen.has(nm)) continue;
        seen.add(nm);
        incl.set(nm, (incl.get(nm) ?? 0) + dt);
      }
    }
    const top = (m) => [...m].filter(([x]) => !/^\((root|program|idle)\)/.test(x)).sort((x, y) => y[1] - x[1]).slice(0, TOP).map(([x, v]) => `      ${v.toFixed(1).padStart(6)}  ${x}`).join('\n');
    console.log(`\n== ${from} → ${to}: ${(b - a).toFixed(0)} ms wall, ${total.toFixed(0)} ms sampled busy: ${[...kinds].sort((x, y) => y[1] - x[1]).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ')}`);
    console.log(`    self:\n${top(self)}`);
    if (process.env.CALLEES) console.log(`    callees:\n${top(callees)}`);
    if (process.env.INCL) console.log(`    inclusive:\n${top(incl)}`);
  }
}
