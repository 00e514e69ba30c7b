// The offline kit (`make workshop`): served by a plain static file server (node's http,
// no pgasync), opened in headless Chromium with every request to any other origin
// blocked, the page boots, runs scenario E and lists the lessons' files.
import http from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { launchBrowser, newPage, waitReady, waitFinished, ROOT } from './lib.mjs';

const DIR = path.resolve(process.env.WORKSHOP_DIR ?? path.join(ROOT, 'workshop'));
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.txt': 'text/plain', '.sql': 'text/plain', '.md': 'text/markdown', '.json': 'application/json' };

function serve() {
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    const rel = decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname);
    const file = path.join(DIR, path.normalize(rel));
    if (!file.startsWith(DIR + path.sep)) { res.writeHead(404).end(); return; }
    try {
      if (!(await stat(file)).isFile()) throw new Error('not a file');
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
      res.end(await readFile(file));
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let failed = 0;
const check = (ok, what) => { console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`); if (!ok) failed++; };

const server = await serve();
const origin = `http://127.0.0.1:${server.address().port}`;
const browser = await launchBrowser();
const errors = [];
const blocked = [];
try {
  const page = await newPage(browser, errors);
  // The network is blocked for everything but the kit's own server.
  await page.route('**/*', (route) => {
    if (route.request().url().startsWith(origin + '/')) return route.continue();
    blocked.push(route.request().url());
    return route.abort();
  });
  await page.goto(`${origin}/?scenario=E&mode=async`);
  await waitReady(page, 60000);
  check(true, 'the kit boots from a plain static server, network blocked');
  await page.locator('[data-testid=speed]').fill('11');
  await page.click('[data-testid=run]');
  await waitFinished(page, 60000);
  const rows = await page.textContent('[data-testid=rows]');
  check(/sum/.test(rows) && /\d/.test(rows), `scenario E runs to its result (${rows.trim().slice(0, 60)})`);
  const explain = await page.locator('[data-testid=explain]').innerText();
  check(/Async Foreign Scan/.test(explain), 'its EXPLAIN shows the async foreign scans');
  for (const f of ['lessons/E.txt', 'scenarios/m.sql', 'README.md']) {
    const r = await page.evaluate(async (u) => (await fetch(u)).status, f);
    check(r === 200, `${f} is in the kit`);
  }
  // The handout (issue 19): one printable page, HTML and PDF, with the states, the
  // functions and the flags.
  const pdf = await page.evaluate(async () => {
    const r = await fetch('handout.pdf');
    return { status: r.status, bytes: (await r.arrayBuffer()).byteLength };
  });
  check(pdf.status === 200 && pdf.bytes > 10000, `handout.pdf is in the kit (${pdf.bytes} bytes)`);
  const hp = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  try {
    await hp.goto(`${origin}/handout.html`);
    const states = await hp.$$eval('[data-testid=handout-states] tbody tr', (rs) => rs.map((r) => r.dataset.state));
    const text = await hp.textContent('body');
    check(states.join(',') === 'Idle,Waiting,CallbackPending,Complete,Cancelled' && ['ASYNC_CALLBACK_PENDING', 'callback_pending = true', 'request_complete = true', 'ExecAppendAsyncBegin', 'ExecAsyncNotify', 'pgfdw_xact_callback', 'parallel_commit'].every((w) => text.includes(w)), `the handout renders the states (${states.join(', ')}), the functions and the flags`);
    const h = await hp.evaluate(() => document.documentElement.scrollHeight);
    await hp.emulateMedia({ media: 'print' });
    await hp.screenshot({ path: path.join(ROOT, 'tests/e2e/screenshots/42-handout.png'), fullPage: true });
    console.log(`  --  screenshot 42-handout.png (${h} px tall on screen)`);
  } finally {
    await hp.close();
  }
  check(blocked.length === 0, `no request left the kit's server (${blocked.length} blocked${blocked.length ? ': ' + blocked.slice(0, 3).join(', ') : ''})`);
  check(errors.length === 0, `no console/page errors${errors.length ? ': ' + errors.join(' | ') : ''}`);
} finally {
  await browser.close();
  server.close();
}
console.log(failed ? `FAIL: ${failed} workshop checks` : 'PASS: workshop kit');
process.exit(failed ? 1 : 0);
