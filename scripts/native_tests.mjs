// `make test-native`'s test run: what `cargo test --workspace` does (compile every test
// target once, run each, then the doc-tests), with the test binaries run several at a
// time instead of one after the other.
//
//   node scripts/native_tests.mjs LOG [NAME...]
//
// NAME...: only these test binaries (a test target's name, `pgasync` for the library's
// unit tests), and no doc-tests; `make test` names none.
//
// Why: most of the native run's minutes are the PostgreSQL-backed binaries (the
// corpus, the fidelity tests, the CLI's live tests), which spend them waiting on
// their clusters (start-up, psql, the statement logs settling), while the CPU-bound
// ones (the library's unit tests, the suite) would use those cores. Each binary's
// tests already run in parallel threads (libtest), and each test starts clusters of
// its own on free ports, so binaries side by side share nothing but the machine.
//
// Invariants:
// - every test target `cargo test --workspace` runs is run (cargo lists them: the
//   compile's JSON artifacts with `profile.test`), and the doc-tests too;
// - LOG holds each binary's output whole, in cargo's order, under cargo's own
//   "Running …" header, so the Makefile's count (its "test result: ok. N passed"
//   lines) is the same as with `cargo test --workspace`;
// - any failure fails the run (after every binary has run), and its output is shown;
// - PGASYNC_TEST_JOBS binaries at a time (default 2, one a core: each binary already runs
//   its tests in threads); the longest known ones start
//   first (LONGEST, measured), so the run is not left waiting on one at the end.
//
// Measured (2026-12-04, a 2-core machine shared at load average ~20, so the gain is a
// floor: the cores were rarely idle): sql_seeds, pg15_fidelity_foreign_join and
// hot_path one after the other 195 s, side by side 165 s.

import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const [LOG, ...ONLY] = process.argv.slice(2);
if (!LOG) {
  console.error('usage: node scripts/native_tests.mjs LOG [NAME...]');
  process.exit(2);
}
const JOBS = Math.max(1, Number(process.env.PGASYNC_TEST_JOBS || 2));
const ROOT = process.cwd();
// The binaries that take longest (measured with `cargo test --workspace` on a 2-core
// machine), longest first; the others follow in cargo's order.
// Measured 2026-12-04 (a shared, loaded machine): pg15_fidelity_joins 1069 s,
// pg15_fidelity_dml 274 s, the unit tests 225 s (CPU: debug code loading every
// scenario file), pg15_fidelity 196 s, live_native 121 s; sql_corpus 150-270 s.
// Measured again 2026-12-05 (clean-clone CI, load lower): sql_corpus 137 s, suite 59,
// the unit tests 35, pg15_fidelity_errors 34, demo 32, sql_seeds 23, live_scenarios 21,
// pg15_fidelity_dml 19, pg15_fidelity 18 (pg15_fidelity_joins 7 s now); the rest under
// 18 s each. Measured again 2026-12-05 evening (main's clean-clone CI, quiet machine, pkg
// and the wasm32 test build beside): sql_corpus 233 s, suite 176, the unit tests 71, demo
// 38, pg15_fidelity_errors 34, live_scenarios 34, pg15_fidelity_dml 32, sql_seeds 29,
// classroom_load 28, pg15_fidelity 26, live_bench 24, live_native 23, demo_security 19.
const LONGEST = ['sql_corpus', 'suite', 'unittests pgasync', 'demo', 'pg15_fidelity_errors', 'live_scenarios',
  'pg15_fidelity_dml', 'sql_seeds', 'classroom_load', 'pg15_fidelity', 'live_bench', 'live_native', 'demo_security'];

// The test binaries' TMPDIR. Each PostgreSQL-backed test's clusters live under it
// (tests/support/pg.rs, cli/tests/support/pg.rs, the demo's --dir), each a `cp -a` of
// the initdb template (tests/support/initdb_template.rs, 39 MB, ~1,000 files; 27 MB on
// disk since its WAL's zeros are holes), removed
// when the test ends; the template itself is made there once per run (initdb, 0.5 s of
// CPU). On ext4 that copy took 0.13-0.35 s of system CPU, on tmpfs 0.075 s (532 copies
// in one `make test`), and the servers' own writes cost less there too. Measured: the
// CPU of a binary with its servers (a cgroup each, A/B alternated, load average ~14)
// pg15_fidelity_dml 26.7, 45.3 s with TMPDIR=/tmp, 19.1, 19.0 s on /dev/shm; the CLI's
// demo test 36.7, 34.8 s, then 18.5, 17.9 s. Peak use: 268 MB (pg15_fidelity_dml),
// 682 MB (demo); /dev/shm's use peaked at 860 MB (df) over sql_corpus,
// pg15_fidelity_dml, demo and live_scenarios run two at a time, so the floor is 4 GB.
// So: a folder of this run's on /dev/shm when that is a writable tmpfs with
// SHM_FLOOR bytes free and as much memory available (tmpfs lives in memory), removed
// at the end (and at Ctrl-C); a folder a killed run left there is removed the next
// time (its name carries the run's pid). Otherwise TMPDIR is left as it is, and the
// run says why.
const SHM = '/dev/shm';
const SHM_FLOOR = 4 * 2 ** 30;
const TMPFS_MAGIC = 0x01021994;
const SHM_PREFIX = 'pgasync-tests-';

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

// /proc/meminfo's MemAvailable in bytes, or Infinity if it cannot be read.
function memAvailable() {
  let text = '';
  try {
    text = readFileSync('/proc/meminfo', 'utf8');
  } catch {}
  const m = text.match(/^MemAvailable:\s+(\d+) kB/m);
  return m ? Number(m[1]) * 1024 : Infinity;
}

// { dir, note }: the folder made for this run (null: TMPDIR left alone) and a line saying so.
function testTmpdir() {
  const gb = (n) => `${(n / 2 ** 30).toFixed(1)} GB`;
  try {
    const fs = statfsSync(SHM);
    if (fs.type !== TMPFS_MAGIC) return { dir: null, note: `${SHM} is not a tmpfs` };
    accessSync(SHM, constants.W_OK);
    for (const name of readdirSync(SHM)) {
      const pid = Number(name.slice(SHM_PREFIX.length));
      if (name.startsWith(SHM_PREFIX) && pid > 0 && !alive(pid)) rmSync(join(SHM, name), { recursive: true, force: true });
    }
    const free = Math.min(fs.bavail * fs.bsize, memAvailable());
    if (free < SHM_FLOOR) return { dir: null, note: `${SHM} has ${gb(free)} free (memory included), under ${gb(SHM_FLOOR)}` };
    const dir = join(SHM, `${SHM_PREFIX}${process.pid}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { mode: 0o755 });
    return { dir, note: `${gb(free)} free` };
  } catch (e) {
    return { dir: null, note: `${SHM}: ${e.message}` };
  }
}

// Runs a command; resolves with its exit code, its output (stdout and stderr, in the
// order they came) and its CPU time (`cpu`: user and system seconds, its child
// processes included, or null). The command runs under bash, whose `times` prints
// what its waited-for children used (getrusage(RUSAGE_CHILDREN)) on a pipe of its own:
// Node gives no child's resource usage. A PostgreSQL server a test starts is not
// counted (pg_ctl detaches it: it is nobody's waited-for child).
//
// The command runs with fd 3 closed (`3>&-`): a PostgreSQL server started under it
// would otherwise inherit that pipe and hold it open while it runs, and 'close' (all
// the pipes closed) would wait for the server, not the test: a cluster its test failed
// to stop lingers up to a minute (until it notices its data directory gone). `held`:
// the seconds between the command's exit and its pipes' closing (output still held by
// something it started), reported when over a second.
function run(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    const script = '"$@" 3>&-; rc=$?; times >&3; exit $rc';
    const child = spawn('bash', ['-c', script, 'bash', cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], ...opts });
    const chunks = [];
    let times = '';
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr.on('data', (d) => chunks.push(d));
    child.stdio[3].on('data', (d) => { times += d; });
    child.on('error', (e) => chunks.push(Buffer.from(`${cmd} does not run: ${e.message}\n`)));
    let exited = null;
    child.on('exit', () => { exited = Date.now(); });
    child.on('close', (code, signal) =>
      resolve({
        code: code ?? (signal ? 128 : 1),
        signal,
        out: Buffer.concat(chunks).toString(),
        cpu: childrenCpu(times),
        held: exited === null ? 0 : (Date.now() - exited) / 1000,
      }),
    );
  });
}

// bash's `times`: the shell's user and system time, then its children's
// (`1m2.345s 0m0.678s`); the children's, in seconds.
function childrenCpu(times) {
  const line = times.trim().split('\n')[1] || '';
  const secs = line.trim().split(/\s+/).map((t) => {
    const m = t.match(/^(\d+)m([\d.]+)s$/);
    return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
  });
  return secs.length === 2 && secs.every(Number.isFinite) ? { user: secs[0], sys: secs[1] } : null;
}

function cpuText(cpu) {
  return cpu ? `, CPU ${(cpu.user + cpu.sys).toFixed(1)} s` : '';
}

// 1. Compile every test target once; cargo's JSON names each test executable.
async function compile() {
  const args = ['test', '--workspace', '--no-run', '--message-format=json-render-diagnostics'];
  const targets = [];
  const code = await new Promise((resolve) => {
    const child = spawn('cargo', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let rest = '';
    child.stdout.on('data', (d) => {
      const lines = (rest + d.toString()).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const m = JSON.parse(line);
        if (m.reason === 'compiler-artifact' && m.profile?.test && m.executable) {
          targets.push({
            name: m.target.name,
            kind: m.target.kind[0],
            src: relative(dirname(m.manifest_path), m.target.src_path),
            dir: dirname(m.manifest_path),
            exe: m.executable,
          });
        }
      }
    });
    child.on('close', (c) => resolve(c ?? 1));
  });
  if (code !== 0) {
    console.error(`native tests: cargo ${args.join(' ')} failed`);
    process.exit(code);
  }
  return targets;
}

// cargo's header line for a test binary.
function header(t) {
  const exe = relative(ROOT, t.exe);
  const what = t.kind === 'test' || t.kind === 'bench' ? t.src : `unittests ${t.src}`;
  return `     Running ${what} (${exe})`;
}

function summary(out) {
  const m = out.match(/^test result: (\w+)\. (\d+) passed; (\d+) failed/m);
  return m ? `${m[1]}, ${m[2]} passed, ${m[3]} failed` : 'no result line';
}

async function main() {
  const t0 = Date.now();
  const targets = (await compile()).filter((t) => !ONLY.length || ONLY.includes(t.name));
  console.log(`native tests: compiled in ${((Date.now() - t0) / 1000).toFixed(0)} s; ${targets.length} test binaries and the doc-tests, ${JOBS} at a time`);
  const tmp = testTmpdir();
  const env = { ...process.env };
  if (tmp.dir) {
    env.TMPDIR = tmp.dir;
    const clean = () => rmSync(tmp.dir, { recursive: true, force: true });
    process.on('exit', clean);
    for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(128 + (sig === 'SIGINT' ? 2 : 15)));
    console.log(`native tests: the test binaries' TMPDIR is ${tmp.dir} (tmpfs, ${tmp.note}): their clusters' data directories in memory`);
  } else {
    console.log(`native tests: TMPDIR left as it is (${env.TMPDIR || '/tmp'}): ${tmp.note}`);
  }
  // Two targets can share a name (a package's lib and its binary): keyed by position.
  const jobs = targets.map((t, i) => ({
    key: i,
    label: `${t.kind === 'test' ? '' : 'unittests '}${t.name}`,
    header: header(t),
    start: () => run(t.exe, [], { cwd: t.dir, env: { ...env, CARGO_MANIFEST_DIR: t.dir } }),
  }));
  if (!ONLY.length) jobs.push({
    key: jobs.length,
    label: 'doc-tests',
    header: '',
    start: () => run('cargo', ['test', '--workspace', '--doc']),
  });
  const rank = (j) => {
    const k = LONGEST.indexOf(j.label);
    return k < 0 ? LONGEST.length : k;
  };
  const queue = [...jobs].sort((a, b) => rank(a) - rank(b) || a.key - b.key);
  const results = new Map();
  const worker = async () => {
    while (queue.length) {
      const j = queue.shift();
      const s = Date.now();
      const r = await j.start();
      r.secs = (Date.now() - s) / 1000;
      results.set(j.key, r);
      console.log(`  ${j.label}: ${r.code === 0 ? summary(r.out) : `FAILED (exit ${r.code})`} in ${r.secs.toFixed(1)} s${cpuText(r.cpu)}${r.held > 1 ? ` (its output held ${r.held.toFixed(1)} s after it exited)` : ''}`);
    }
  };
  await Promise.all(Array.from({ length: JOBS }, worker));

  // The log in cargo's order, each binary's output whole.
  const text = jobs.map((j) => `${j.header ? `${j.header}\n` : ''}${results.get(j.key).out}`).join('\n');
  writeFileSync(LOG, text);
  const failed = jobs.filter((j) => results.get(j.key).code !== 0);
  for (const j of failed) {
    console.log(`\n---- ${j.label} FAILED; its output:\n${results.get(j.key).out}`);
  }
  // The binaries' CPU in all (user + system, their children included): the figure to
  // compare across runs on a shared machine, where wall-clock time is noise.
  const cpus = jobs.map((j) => results.get(j.key).cpu);
  const cpu = cpus.every(Boolean) ? cpus.reduce((a, c) => a + c.user + c.sys, 0) : null;
  console.log(`native tests: ${failed.length ? `${failed.length} FAILED (${failed.map((j) => j.label).join(', ')})` : 'all passed'} in ${((Date.now() - t0) / 1000).toFixed(0)} s${cpu === null ? '' : ` (the binaries' CPU ${cpu.toFixed(0)} s)`} (log: ${relative(ROOT, LOG)})`);
  process.exit(failed.length ? 1 : 0);
}

main();
