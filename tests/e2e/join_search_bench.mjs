// Planning time of the join search in wasm (issue 23 with issue 20's 50 ms bound on
// the page's main thread): the shapes of `cargo run --release --example
// join_search_bench` (stars and chains of 4 to 11 relations, local tables with indexes;
// a star whose dimensions are foreign tables), each an `EXPLAIN` without ANALYZE
// loaded by the editor's module (`SqlLoader`) and planned by `session()`: what the page
// runs on its main thread when the query is submitted. Prints the median and least
// CPU time (the process's: a loaded machine's wall clock counts the other
// processes' turns) and wall time of `session()` over RUNS plannings (at once), and
// the page's way since issue 20: `plan(ms)` in slices, its longest call, then `session()`.
//
//     node tests/e2e/join_search_bench.mjs [PKG_DIR] [RUNS]
//
// PKG_DIR: a directory with pgasync_sql.js and pgasync_sql_bg.wasm (`make pkg` puts
// them in target/pkg-sql; default). Not a test: wall-clock figures depend on the machine.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

const pkgDir = resolve(process.argv[2] ?? new URL('../../target/pkg-sql', import.meta.url).pathname);
const runs = Math.max(1, Number(process.argv[3] ?? 5));
const wasm = await import(resolve(pkgDir, 'pgasync_sql.js'));
wasm.initSync({ module: readFileSync(resolve(pkgDir, 'pgasync_sql_bg.wasm')) });
wasm.init?.();

const SIZES = [4, 6, 8, 10, 11];

function setup(dims, foreign) {
  let s = '';
  if (foreign) {
    s += '-- @shard s1\n';
    for (let k = 1; k < dims; k++) {
      s += `create table d${k} (k int, t text);\n`;
      s += `insert into d${k} select i, 't' || i from generate_series(1, ${20 + 7 * k}) i;\n`;
    }
  }
  s += '-- @coordinator\n';
  if (foreign) {
    s += 'create extension postgres_fdw;\n';
    s += "create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres');\n";
    s += 'create user mapping for public server s1;\n';
  }
  const factCols = [];
  const factVals = [];
  for (let k = 1; k < dims; k++) {
    factCols.push(`d${k} int`);
    factVals.push(`i % ${20 + 7 * k}`);
  }
  s += `create table f (id int, ${factCols.join(', ')}, v int);\n`;
  s += `insert into f select i, ${factVals.join(', ')}, i from generate_series(1, 2000) i;\n`;
  for (let k = 1; k < dims; k++) {
    if (foreign) {
      s += `create foreign table d${k} (k int, t text) server s1;\n`;
    } else {
      s += `create table d${k} (k int, t text);\n`;
      s += `insert into d${k} select i, 't' || i from generate_series(1, ${20 + 7 * k}) i;\n`;
      s += `create index on d${k} (k);\nanalyze d${k};\n`;
    }
  }
  s += 'analyze f;\n';
  s += 'set from_collapse_limit = 12;\nset join_collapse_limit = 12;\n';
  for (let k = 1; k <= dims; k++) {
    s += `create table c${k} (k int, v int);\n`;
    s += `insert into c${k} select i % ${50 + 10 * k}, i from generate_series(1, ${100 * k}) i;\n`;
    s += `create index on c${k} (k);\nanalyze c${k};\n`;
  }
  return s;
}

function star(n) {
  const from = ['f'];
  const on = [];
  const select = ['f.id'];
  for (let k = 1; k < n; k++) {
    from.push(`d${k}`);
    on.push(`f.d${k} = d${k}.k`);
    select.push(`d${k}.t`);
  }
  return `select ${select.join(', ')} from ${from.join(', ')} where ${on.join(' and ')};`;
}

function chain(n) {
  const from = [];
  const on = [];
  for (let k = 1; k <= n; k++) from.push(`c${k}`);
  for (let k = 2; k <= n; k++) on.push(`c${k}.k = c${k - 1}.v`);
  return `select count(*), sum(c${n}.v) from ${from.join(', ')} where ${on.join(' and ')};`;
}

/** (CPU ms, wall ms) of `session()` (the planning) for each run, sorted; or the error. */
function planTimes(setupText, query) {
  const text = `${setupText}-- @query\nexplain ${query}\n`;
  const times = [];
  for (let r = 0; r <= runs; r++) {
    const loader = new wasm.SqlLoader(text, 'async', '{}');
    while (!loader.advance(100000)) { /* load the setup */ }
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    let session;
    try {
      session = loader.session();
    } catch (e) {
      loader.free();
      return { error: String(e.message ?? e) };
    }
    const c = process.cpuUsage(c0);
    const t = performance.now() - t0;
    session.free();
    loader.free();
    if (r > 0) times.push([(c.user + c.system) / 1000, t]); // the first warms up
  }
  times.sort((a, b) => a[0] - b[0]);
  return { times };
}

/**
 * The page's way (issue 20): `plan(PLAN_CALL_MS)` until it returns true, then
 * `session()`: the longest call's CPU time (the longest main-thread block the
 * planning makes, on an idle machine), the calls, and `session()`'s CPU time after them.
 * (The plan call stops on its wall clock: under load it does less per call.)
 */
const PLAN_CALL_MS = 12; // web/main.js
function slicedTimes(setupText, query) {
  const text = `${setupText}-- @query\nexplain ${query}\n`;
  const loader = new wasm.SqlLoader(text, 'async', '{}');
  try {
    while (!loader.advance(100000)) { /* load the setup */ }
    let longest = 0;
    let calls = 0;
    const cpuMs = (c) => (c.user + c.system) / 1000;
    for (let done = false; !done; calls++) {
      const c0 = process.cpuUsage();
      done = loader.plan(PLAN_CALL_MS);
      longest = Math.max(longest, cpuMs(process.cpuUsage(c0)));
    }
    const c0 = process.cpuUsage();
    loader.session().free();
    return { longest, calls, session: cpuMs(process.cpuUsage(c0)) };
  } catch (e) {
    return { error: String(e.message ?? e) };
  } finally {
    loader.free();
  }
}

const max = Math.max(...SIZES);
console.log(`join search planning time, wasm in Node ${process.version} (${pkgDir}; ${runs} runs each, ms: the process's CPU time of a planning, median and least; the median's wall time)`);
console.log(`(at once: session() alone; in slices: plan(${PLAN_CALL_MS}) until done, its longest call's CPU time and its calls, then session()'s CPU time)`);
console.log(`${'query'.padEnd(24)} ${'cpu median'.padStart(10)} ${'cpu least'.padStart(10)} ${'wall'.padStart(10)} ${'slices: longest'.padStart(16)} ${'calls'.padStart(6)} ${'session'.padStart(8)}`);
for (const foreign of [false, true]) {
  const text = setup(max, foreign);
  const shapes = foreign ? [['star (foreign dims)', star]] : [['star', star], ['chain', chain]];
  for (const [name, shape] of shapes) {
    for (const n of SIZES) {
      const label = `${name} ${n}`.padEnd(24);
      const r = planTimes(text, shape(n));
      const sl = slicedTimes(text, shape(n));
      const sliced = sl.error ? ` slices refused: ${sl.error}` : ` ${sl.longest.toFixed(2).padStart(16)} ${String(sl.calls).padStart(6)} ${sl.session.toFixed(2).padStart(8)}`;
      if (r.error) console.log(`${label} refused: ${r.error}${sliced}`);
      else {
        const median = r.times[Math.floor(r.times.length / 2)];
        console.log(`${label} ${median[0].toFixed(2).padStart(10)} ${r.times[0][0].toFixed(2).padStart(10)} ${median[1].toFixed(2).padStart(10)}${sliced}`);
      }
    }
  }
}
