// The page's load, two builds side by side on a loaded machine (printed, not asserted):
// `BASE_WEB=dir BASE_PKG=dir node loadcpu.mjs [runs]` loads the 16-shard page (light)
// and the 64-shard one (heavy) from that build and from this checkout (NEW_WEB /
// NEW_PKG to name others), alternately, and prints the page's main-thread CPU time
// (the trace's thread times) until `recorded`, `ready` and `compared`, and its longest
// task in CPU time: on a machine shared with builds, wall times swing several-fold
// with the load, CPU times much less. GAPS=1 also lists the idle gaps and long tasks;
// PHASES=1 also gives each phase's CPU (the tasks starting between two marks).
import { spawn } from 'node:child_process';
import { BIN, ROOT, launchBrowser, newPage, waitReady } from './lib.mjs';
const REP = Number(process.argv[2] ?? 3);
const URLS = { light: '?scenario=E&mode=async&shards=16&rows=1000&fetch=100&step=0', heavy: '?scenario=E&shards=64&rows=4400&fetch=100&rtt=10000' };
const which = (process.env.WHICH ?? 'light,heavy').split(',');
if (!process.env.BASE_WEB || !process.env.BASE_PKG) throw new Error('BASE_WEB and BASE_PKG: the build to compare with (its web/ and pkg/ folders)');
const sides = { base: [process.env.BASE_WEB, process.env.BASE_PKG], new: [process.env.NEW_WEB ?? ROOT + '/web', process.env.NEW_PKG ?? ROOT + '/pkg'] };
function serve([web, pkg]) {
  const proc = spawn(BIN, ['serve', '--port', '0', '--web', web, '--pkg', pkg], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((res) => { let out = ''; proc.stdout.on('data', (d) => { out += d; const m = out.match(/pgasync serve: (http:\/\/\S+)/); if (m) res({ url: m[1], proc }); }); });
}
const servers = { base: await serve(sides.base), new: await serve(sides.new) };
const browser = await launchBrowser();
const res = {};
try {
  for (let i = 0; i < REP; i++) for (const w of which) for (const side of i % 2 ? ['new', 'base'] : ['base', 'new']) {
    const page = await newPage(browser, []);
    await browser.startTracing(page, { categories: ['toplevel', 'devtools.timeline', 'blink.user_timing'] });
    await page.goto(servers[side].url + URLS[w]);
    await waitReady(page, 180000);
    await page.waitForFunction(() => performance.getEntriesByName('pgasync:compared').length > 0, null, { timeout: 180000 });
    const marks = await page.evaluate(() => Object.fromEntries(performance.getEntriesByType('mark').filter((m) => m.name.startsWith('pgasync:')).map((m) => [m.name.slice(8), m.startTime])));
    await page.waitForTimeout(200);
    const trace = JSON.parse((await browser.stopTracing()).toString()).traceEvents;
    await page.close();
    // The renderer's main thread: the one with the most RunTask time.
    const mains = new Set(trace.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
    const isTask = (e) => e.ph === 'X' && (e.name === 'ThreadControllerImpl::RunTask' || e.name === 'RunTask') && mains.has(`${e.pid}:${e.tid}`);
    const byTid = new Map();
    for (const e of trace) if (isTask(e)) { const k = `${e.pid}:${e.tid}`; byTid.set(k, (byTid.get(k) ?? 0) + (e.tdur ?? e.dur)); }
    const main = [...byTid.entries()].sort((a, b) => b[1] - a[1])[0][0];
    const tasks = trace.filter((e) => isTask(e) && `${e.pid}:${e.tid}` === main).map((e) => ({ ...e, tdur: e.tdur ?? e.dur }));
    if (!trace.some((e) => isTask(e) && e.tdur != null)) console.log('(no thread times in the trace: wall times)');
    const nav = trace.find((e) => e.name === 'navigationStart' && `${e.pid}:${e.tid}` === main)?.ts ?? tasks[0].ts;
    const cpuUntil = (ms) => tasks.filter((e) => e.ts - nav <= ms * 1000).reduce((a, e) => a + e.tdur, 0) / 1000;
    const r = { cpuReady: cpuUntil(marks.ready), cpuCompared: cpuUntil(marks.compared), cpuRecorded: cpuUntil(marks.recorded), longCpu: Math.max(...tasks.map((e) => e.tdur)) / 1000, over50cpu: tasks.filter((e) => e.tdur > 50000).length };
    if (process.env.PHASES) {
      // The CPU of each phase: the tasks that start between two of the page's marks.
      const order = Object.entries(marks).sort((a, b) => a[1] - b[1]);
      order.forEach(([to, at], i) => {
        const [from, since] = i ? order[i - 1] : ['nav', 0];
        r[`${from}→${to}`] = cpuUntil(at) - cpuUntil(since);
      });
    }
    if (process.env.GAPS) {
      const ts = tasks.filter((e) => e.ts >= nav).sort((a, b) => a.ts - b.ts);
      let prevEnd = nav; const gaps = [];
      for (const e of ts) { const g = (e.ts - prevEnd) / 1000; if (g > 5) gaps.push(`${Math.round((prevEnd - nav) / 1000)}+${Math.round(g)}`); prevEnd = Math.max(prevEnd, e.ts + e.dur); if ((e.ts - nav) / 1000 > marks.compared) break; }
      console.log('gaps (start+ms):', gaps.join(' '), '| marks', JSON.stringify(Object.fromEntries(Object.entries(marks).map(([k, v]) => [k, Math.round(v)]))));
      const big = ts.filter((e) => e.dur > 15000 && (e.ts - nav) / 1000 < marks.compared).map((e) => `${Math.round((e.ts - nav) / 1000)}:${Math.round(e.dur / 1000)}/${Math.round(e.tdur / 1000)}`);
      console.log('tasks >15ms (start:wall/cpu):', big.join(' '));
    }
    const key = `${w}/${side}`;
    (res[key] ??= []).push(r);
    console.log(key, JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.round(v)]))));
  }
  const med = (xs) => { const s = xs.slice().sort((a, b) => a - b); return s[s.length >> 1]; };
  for (const w of which) for (const k of Object.keys(res[`${w}/base`][0])) {
    const b = med(res[`${w}/base`].map((r) => r[k])); const n = med(res[`${w}/new`].map((r) => r[k]));
    console.log(`${w} ${k.padEnd(12)} median base ${b.toFixed(0)} new ${n.toFixed(0)} ratio ${(n / b).toFixed(2)}`);
  }
} finally { await browser.close(); servers.base.proc.kill('SIGINT'); servers.new.proc.kill('SIGINT'); }
