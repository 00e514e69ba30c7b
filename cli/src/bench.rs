//! `pgasync bench`: every scenario in sync and async mode, one row per scenario,
//! behaviour and fetch size, with the gain and the best gain the scenario's model
//! allows.
//!
//! Without `--behaviour` or a behaviour knob flag, each scenario runs twice: as
//! PostgreSQL 15 does (`pg15`) and with every improvement on (`improved`).
//!
//! On the virtual clock the figures are the cost model's and are exactly reproducible.
//! On the real clock each mode is run repeatedly (sync and async interleaved, so drift
//! hits both) and the median wall time is reported; the simulated network's delays are
//! really slept, and the shards' work runs on the same thread as the executor.
//!
//! Invariants:
//! - A time counts only if its run's rows match the scenario's reference result: a
//!   wrong answer is an error, never a gain.
//! - `limit_pct` comes from the virtual-clock sync run's lower bound on both clocks, so
//!   it is the model's limit, not a measurement.
//! - Scenario M's OFFSET and LIMIT come from a fixed pseudo-random series, the same
//!   for both modes and every run.
//! - Sizes are the seeds' (`scenario::bench_size`), not the page's; `--delay-ms`,
//!   `--runs` and `--dir` belong to `--live` and are refused without it.
//!
//! Where it departs from PostgreSQL: the seeds measured with pgbench against real
//! clusters; here the figures are the cost model's (or a real clock over simulated
//! shards). `--live` (`live_bench.rs`) measures a real coordinator next to pgasync.

use crate::args::{self, BenchKnobs};
use crate::CliError;
use pgasync::behaviour::Preset;
use pgasync::clock::Clock;
use pgasync::knobs::Knobs;
use pgasync::knobs::{Kind, KnobSpec, Source};
use pgasync::run::QueryRun;
use pgasync::scenario::{LocalScan, Scenario, SCAN_ROWS, SCAN_RUNS, SCAN_WARMUP, SCENARIOS};
use std::time::{Duration, Instant};

/// `--queries`: how many queries scenario M runs (the seed's pgbench series).
pub const QUERIES: (u64, u64, u64) = (1, 1000, 20); // lo, hi, default

const HEADER: [&str; 9] =
    ["scenario", "shards", "sharing", "behaviour", "fetch_size", "sync_ms", "async_ms", "gain_pct", "limit_pct"];

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Table,
    Tsv,
}

struct Options {
    real: bool,
    format: Format,
    ids: Vec<&'static str>,
    fetch_sizes: Vec<usize>,
    queries: usize,
    /// One entry per behaviour to run: the knobs of every row of that behaviour.
    variants: Vec<Knobs>,
}

struct Row {
    scenario: String,
    shards: usize,
    sharing: String,
    behaviour: String,
    fetch_size: usize,
    sync_ms: f64,
    async_ms: f64,
    /// None when the model gives no bound (a run that took no time).
    limit_pct: Option<f64>,
}

pub const ABOUT_LINE: &str =
    "Every scenario in sync and async mode: a row per scenario, behaviour and fetch size (--live: on real PostgreSQL)";
pub const USAGE: &str = "pgasync bench [--clock virtual|real] [--scenarios A,B,...] [--queries N] [--format table|tsv]
              [--profile FILE] [KNOBS]
pgasync bench --local [--rows 1000000]
pgasync bench --live [--rows 30000] [--delay-ms 0,2,10] [--fetch-size 100,1000] [--runs 3]
              [--format table|tsv] [--dir DIR] [--profile FILE]";
pub const ABOUT: &str = "one row per scenario, behaviour and fetch size (100, 200, 1000 unless --fetch-size);
without --behaviour or a behaviour knob, each scenario runs as pg15 and as improved;
--queries N (1 to 1000, default 20): queries in scenario M's series of random OFFSET/LIMIT;
--format tsv prints only the table on stdout, the other lines on stderr; KNOBS but --offset/--limit;
--profile FILE: knobs from a JSON file (pgasync calibrate writes one); flags override it;
the last line is the local throughput (SeqScan + sum over 1,000,000 local rows, natively: the
median and best of 30 runs after 10 untimed; bench --local prints only it, with each run's time;
bench --local --rows N: a table of N rows, 1000 to 1000000 dividing 1000000, scanned
1000000/N times a run, e.g. 100000: 4.8 MB, in the CPU's caches, where the memory's own speed
does not count)
bench --live: 4 shard clusters and a coordinator under DIR (a fresh temporary folder), E and D
loaded, a delay proxy per shard (half of --delay-ms each way); per scenario, delay and fetch
size the median Execution Time of the real coordinator (postgres_fdw, async_capable off/on)
and of pgasync pg15 and improved (sync/async) on the same shards, runs interleaved, with
their min-max spread; then the calibrated simulation of E against live, and the relay's
throughput and added latency against direct TCP; every cluster is stopped at the end, on
error and on Ctrl-C";

/// The help's heading of `bench --live`'s own flags.
const LIVE: &str =
    "bench --live (also --rows 1000 to 1000000 [default: 30000], --fetch-size N,N,... [default: 100,1000])";

/// `pgasync bench`'s flags, and `bench --live`'s (`live_bench`).
#[derive(clap::Args, Default)]
pub struct Flags {
    /// Real PostgreSQL shards and coordinator, side by side with pgasync (bench --live)
    #[arg(long)]
    pub live: bool,
    /// Only the local throughput (SeqScan + sum over 1,000,000 rows; --rows N: a table of N scanned 1,000,000/N times a run): each timed run's ms, the median and best
    #[arg(long)]
    pub local: bool,
    /// Async beyond Append against pg15: gains on R, K, pf0, pf1 at 0, 2, 10 ms, and the real-clock overhead on local plans (t0, pl, nested loops)
    #[arg(long)]
    pub designs: bool,
    /// The virtual clock (the cost model's figures, reproducible) or the real one [default: virtual]
    #[arg(long, value_name = "virtual|real")]
    pub clock: Option<String>,
    /// The scenarios to run [default: all]
    #[arg(long, value_name = "A,B,...")]
    pub scenarios: Option<String>,
    /// The series of random OFFSET/LIMIT queries scenario M runs
    #[arg(long, value_name = "N", help = format!(
        "Queries in scenario M's series of random OFFSET/LIMIT ({} to {}) [default: {}]", QUERIES.0, QUERIES.1, QUERIES.2
    ))]
    pub queries: Option<String>,
    /// The table aligned, or tab-separated with only the table on stdout [default: table]
    #[arg(long, value_name = "table|tsv")]
    pub format: Option<String>,
    /// Knobs from a JSON file (`pgasync calibrate` writes one); flags override it
    #[arg(long, value_name = "FILE")]
    pub profile: Option<String>,
    /// bench --live: round trips each shard's proxy adds, ms (each 0 to 10000) [default: 0,2,10]
    #[arg(long, value_name = "MS,MS,...", help_heading = LIVE)]
    pub delay_ms: Option<String>,
    /// bench --live: runs of each kind, the median reported (1 to 100) [default: 3]
    #[arg(long, value_name = "N", help_heading = LIVE)]
    pub runs: Option<String>,
    /// bench --live: the clusters' folder, removed at the end [default: a fresh temporary folder]
    #[arg(long, value_name = "DIR", help_heading = LIVE)]
    pub dir: Option<String>,
    #[command(flatten)]
    pub knobs: BenchKnobs,
}

impl Flags {
    /// The flags but `--live`, `--local` and the knobs, by name, in the order a usage
    /// error looks for them, and whether each was given.
    fn given_flags(&self) -> [(&'static str, bool); 9] {
        [
            ("designs", self.designs),
            ("clock", self.clock.is_some()),
            ("scenarios", self.scenarios.is_some()),
            ("queries", self.queries.is_some()),
            ("format", self.format.is_some()),
            ("profile", self.profile.is_some()),
            ("delay-ms", self.delay_ms.is_some()),
            ("runs", self.runs.is_some()),
            ("dir", self.dir.is_some()),
        ]
    }

    /// What a mode refuses rather than ignores, named: the first of the flags
    /// `refused` given, else the first knob given that `knob` refuses.
    fn first_refused(&self, refused: &[&str], knob: impl Fn(&KnobSpec) -> bool) -> Option<&'static str> {
        let all = self.given_flags();
        debug_assert!(refused.iter().all(|r| all.iter().any(|(f, _)| f == r)), "a flag bench does not have");
        let flag = all.into_iter().find(|(f, given)| *given && refused.contains(f)).map(|(f, _)| f);
        flag.or_else(|| self.knobs.given().map(|(s, _)| s).find(|s| knob(s)).map(|s| s.cli))
    }
}

pub fn run(a: Flags) -> Result<(), CliError> {
    // One mode at a time: a second one would be left aside without a word.
    let modes: Vec<&str> =
        [("live", a.live), ("designs", a.designs), ("local", a.local)].iter().filter(|m| m.1).map(|m| m.0).collect();
    if let [first, second, ..] = modes[..] {
        return Err(CliError::Usage(format!("--{first} and --{second} are separate modes of bench: give one")));
    }
    // `--live`: real PostgreSQL shards and coordinator (live_bench.rs).
    if a.live {
        return crate::live_bench::run(live_flags(a)?);
    }
    if a.designs {
        return designs(a);
    }
    if a.local {
        return local(a);
    }
    if let Some(flag) = a.first_refused(&["delay-ms", "runs", "dir"], |_| false) {
        return Err(CliError::Usage(format!("--{flag} is bench --live's (give --live)")));
    }
    let o = options(&a)?;
    print_line(o.format, &HEADER.map(String::from));
    let mut rows = Vec::new();
    for id in &o.ids {
        for knobs in &o.variants {
            for &fs in &o.fetch_sizes {
                let k = Knobs { fetch_size: Some(fs), ..knobs.clone() };
                let row = if *id == "M" { bench_merge(&k, o.queries, o.real)? } else { bench_one(id, &k, o.real)? };
                print_row(&row, o.format);
                rows.push(row);
            }
        }
    }
    for r in rows.iter().filter(|r| r.scenario == "M") {
        note(o.format, &merge_summary(r));
    }
    note(o.format, &local_throughput(SCAN_ROWS)?.summary());
    Ok(())
}

/// `bench --local`: the local throughput alone, with each timed run's time (the page's
/// bench runs it between its own wasm runs, so both sides are measured alternately).
/// It takes no other flag: the probe's size and runs are fixed, so that every figure
/// of it, native or wasm, measures the same work.
fn local(a: Flags) -> Result<(), CliError> {
    let own = ["designs", "clock", "scenarios", "queries", "format", "profile", "delay-ms", "runs", "dir"];
    if let Some(flag) = a.first_refused(&own, |s| s.cli != "rows") {
        return Err(CliError::Usage(format!(
            "--{flag} is not bench --local's (its scan, 1,000,000 rows a run and {} + {} runs, is fixed; \
             --rows sets the table's size)",
            pgasync::scenario::SCAN_WARMUP,
            pgasync::scenario::SCAN_RUNS
        )));
    }
    let t = local_throughput(local_rows(a.knobs.get("rows"))?)?;
    let ms = |v: &[f64]| v.iter().map(|s| format!("{:.3}", s * 1e3)).collect::<Vec<_>>().join(" ");
    println!("local scan runs (ms): {}", ms(&t.secs));
    println!("local scan runs, CPU (ms): {}", ms(&t.cpu_secs));
    println!("{}", t.summary());
    Ok(())
}

/// `bench --designs` (bench_designs.rs): it sets the design, the round trips and the
/// clocks itself, so those flags are refused rather than ignored.
fn designs(a: Flags) -> Result<(), CliError> {
    let own = ["clock", "scenarios", "queries", "format", "delay-ms", "runs", "dir"];
    let knob = |s: &KnobSpec| matches!(s.kind, Kind::Preset | Kind::Switch) || s.cli.starts_with("rtt-ms");
    if let Some(flag) = a.first_refused(&own, knob) {
        return Err(CliError::Usage(format!(
            "--{flag} is not bench --designs' (it compares pg15 with async_through_nodes at 0, 2 and 10 ms itself)"
        )));
    }
    let base = crate::knobs_with_profile(&a.knobs, a.profile.as_deref())?;
    crate::bench_designs::run_designs(&base)
}

/// `bench --live`'s flags: `--rows` and `--fetch-size` (its own ranges and lists), and
/// no other knob, nor the simulated bench's flags.
fn live_flags(a: Flags) -> Result<crate::live_bench::Flags, CliError> {
    let not_live = ["clock", "scenarios", "queries"];
    if let Some(flag) = a.first_refused(&not_live, |s| !matches!(s.cli, "rows" | "fetch-size")) {
        return Err(CliError::Usage(format!(
            "--{flag} is not bench --live's (it takes --rows, --delay-ms, --fetch-size, --runs, --format, --dir, --profile)"
        )));
    }
    Ok(crate::live_bench::Flags {
        rows: a.knobs.get("rows").map(String::from),
        fetch_size: a.knobs.get("fetch-size").map(String::from),
        delay_ms: a.delay_ms,
        runs: a.runs,
        format: a.format,
        dir: a.dir,
        profile: a.profile,
    })
}

fn options(a: &Flags) -> Result<Options, CliError> {
    let real = args::choice("clock", a.clock.as_deref(), &["virtual", "real"], "virtual")? == "real";
    let format = if args::choice("format", a.format.as_deref(), &["table", "tsv"], "table")? == "tsv" {
        Format::Tsv
    } else {
        Format::Table
    };
    let ids: Vec<&'static str> = match a.scenarios.as_deref() {
        None => SCENARIOS.iter().map(|s| s.id).collect(),
        Some(list) => list
            .split(',')
            .map(|id| {
                pgasync::scenario::scenario_info(id.trim()).map(|s| s.id).map_err(|e| format!("--scenarios: {e}"))
            })
            .collect::<Result<_, _>>()?,
    };
    let mut base = crate::knobs_with_profile(&a.knobs, a.profile.as_deref())?;
    let fetch_sizes = match base.fetch_size {
        Some(n) => vec![n],
        None => vec![100, 200, 1000],
    };
    let (lo, hi, default) = QUERIES;
    let queries = args::int("queries", a.queries.as_deref(), lo, hi)?.unwrap_or(default) as usize;
    if real && base.rows_per_shard.is_none() {
        base.rows_per_shard = Some(20_000); // the real clock really waits: keep runs short
    }
    let chosen = a.knobs.given().any(|(s, _)| matches!(s.kind, Kind::Preset | Kind::Switch));
    let variants = if chosen {
        vec![base]
    } else {
        [Preset::Pg15, Preset::Improved].map(|p| Knobs { behaviour: Some(p), ..base.clone() }).to_vec()
    };
    // Every combination is checked before anything runs, so a bad value is a usage error.
    for id in &ids {
        for k in &variants {
            for &fs in &fetch_sizes {
                Scenario::check(id, &Knobs { fetch_size: Some(fs), ..k.clone() }, Source::Cli)
                    .map_err(|e| format!("scenario {id}: {e}"))?;
            }
        }
    }
    Ok(Options { real, format, ids, fetch_sizes, queries, variants })
}

/// A percentage of `num / den` below 100, or None when `den` is not positive.
fn gain_pct(num: f64, den: f64) -> Option<f64> {
    (den > 0.0).then(|| 100.0 * (1.0 - num / den))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.1}"))
}

fn print_row(r: &Row, format: Format) {
    let cells = [
        r.scenario.clone(),
        r.shards.to_string(),
        r.sharing.clone(),
        r.behaviour.clone(),
        r.fetch_size.to_string(),
        format!("{:.3}", r.sync_ms),
        format!("{:.3}", r.async_ms),
        pct(gain_pct(r.async_ms, r.sync_ms)),
        pct(r.limit_pct),
    ];
    print_line(format, &cells);
}

fn print_line(format: Format, c: &[String; 9]) {
    match format {
        Format::Tsv => println!("{}", c.join("\t")),
        Format::Table => println!(
            "{:<8} {:>6} {:<9} {:<9} {:>10} {:>12} {:>12} {:>9} {:>9}",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
        ),
    }
}

/// A line that is not part of the table: on stdout under the table, on stderr with
/// `--format tsv` (whose stdout is only the table).
fn note(format: Format, line: &str) {
    match format {
        Format::Table => println!("{line}"),
        Format::Tsv => eprintln!("{line}"),
    }
}

fn merge_summary(r: &Row) -> String {
    let tps = |ms: f64| if ms > 0.0 { format!("{:.1}", 1000.0 / ms) } else { "-".into() };
    let ratio = if r.async_ms > 0.0 { format!("{:.2}x", r.sync_ms / r.async_ms) } else { "-".into() };
    format!(
        "M {} fetch_size {}: {} tps sync, {} tps async ({ratio})",
        r.behaviour,
        r.fetch_size,
        tps(r.sync_ms),
        tps(r.async_ms)
    )
}

fn real_clock() -> (Clock, pgasync::host::sim::Sleeper) {
    let start = Instant::now();
    let clock = Clock::from_host(Box::new(move || start.elapsed().as_nanos() as u64));
    (clock, std::rc::Rc::new(|ns| std::thread::sleep(Duration::from_nanos(ns))))
}

/// Runs one query to the end; returns its elapsed time (ns) and the finished run.
fn run_once(s: &Scenario, async_mode: bool, real: bool) -> Result<(u64, QueryRun), CliError> {
    let mut run = if real {
        let (clock, sleeper) = real_clock();
        let mut r = s.start(async_mode, clock, false)?;
        r.host.set_sleeper(sleeper);
        r
    } else {
        s.start(async_mode, Clock::virtual_clock(), false)?
    };
    run.keep_rows = true;
    let t0 = run.es.now();
    run.run_to_end().map_err(|e| CliError::Failed(format!("scenario {}: {e}", s.id)))?;
    if !s.matches_reference(&run.rows) {
        return Err(CliError::Failed(format!("scenario {}: result differs from the reference", s.id)));
    }
    Ok((run.es.now() - t0, run))
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// Timed runs of two kinds, interleaved (one of each a round, so that load that
/// comes and goes falls on both alike): `round` runs both and returns their times.
/// At least `min` rounds, then more while `budget` lasts, `max` at the most.
pub(crate) fn time_runs(
    min: usize,
    max: usize,
    budget: Duration,
    mut round: impl FnMut() -> Result<(u64, u64), CliError>,
) -> Result<(Vec<u64>, Vec<u64>), CliError> {
    let (mut a, mut b) = (vec![], vec![]);
    let started = Instant::now();
    while a.len() < min || (started.elapsed() < budget && a.len() < max) {
        let (x, y) = round()?;
        a.push(x);
        b.push(y);
    }
    Ok((a, b))
}

/// Median real times of sync and async runs, interleaved, for about two seconds.
fn real_medians(s: &Scenario) -> Result<(u64, u64), CliError> {
    let (ts, ta) =
        time_runs(5, 201, Duration::from_secs(2), || Ok((run_once(s, false, true)?.0, run_once(s, true, true)?.0)))?;
    Ok((median(ts), median(ta)))
}

fn row_of(s: &Scenario, sync_ns: u64, async_ns: u64, limit_pct: Option<f64>) -> Row {
    Row {
        scenario: s.id.clone(),
        shards: s.shards,
        sharing: s.sharing.map_or("-", |x| x.name()).to_string(),
        behaviour: s.behaviour.label().to_string(),
        // A and B read no foreign table: postgres_fdw's default stands for "not used".
        fetch_size: s.servers.first().map_or(pgasync::knobs::DEFAULT_FETCH_SIZE, |x| x.server.options.fetch_size),
        sync_ms: sync_ns as f64 / 1e6,
        async_ms: async_ns as f64 / 1e6,
        limit_pct,
    }
}

fn bench_one(id: &str, knobs: &Knobs, real: bool) -> Result<Row, CliError> {
    let s = Scenario::build_from(id, &pgasync::scenario::bench_size(id, knobs), Source::Cli)?;
    let (virt_sync, sync_run) = run_once(&s, false, false)?;
    let bound = s.lower_bound_ns(&sync_run);
    let (sync_ns, async_ns) = if real { real_medians(&s)? } else { (virt_sync, run_once(&s, true, false)?.0) };
    Ok(row_of(&s, sync_ns, async_ns, gain_pct(bound as f64, virt_sync as f64)))
}

/// Scenario M as the seed ran it with pgbench: a series of queries with random OFFSET
/// 0–200 and LIMIT 10–20 (a fixed pseudo-random series, the same for both modes).
/// The row gives the mean time per query.
fn bench_merge(knobs: &Knobs, queries: usize, real: bool) -> Result<Row, CliError> {
    let mut seed: u64 = 42;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let (mut sync_ns, mut async_ns, mut bound_ns, mut virt_sync_ns) = (0u64, 0u64, 0u64, 0u64);
    let mut last = None;
    for _ in 0..queries.max(1) {
        let k =
            Knobs { offset: Some(next(201)), limit: Some(10 + next(11)), ..pgasync::scenario::bench_size("M", knobs) };
        let s = Scenario::build_from("M", &k, Source::Cli)?;
        let (vs, run) = run_once(&s, false, false)?;
        bound_ns += s.lower_bound_ns(&run);
        virt_sync_ns += vs;
        if real {
            sync_ns += run_once(&s, false, true)?.0;
            async_ns += run_once(&s, true, true)?.0;
        } else {
            sync_ns += vs;
            async_ns += run_once(&s, true, false)?.0;
        }
        last = Some(s);
    }
    let s = last.expect("at least one query");
    let q = queries.max(1) as u64;
    Ok(row_of(&s, sync_ns / q, async_ns / q, gain_pct(bound_ns as f64, virt_sync_ns as f64)))
}

/// `bench --local --rows N`: the table's rows, which divide `SCAN_ROWS` (a run scans
/// `SCAN_ROWS` rows whatever the table's size, so the figures compare). A table small
/// enough to stay in the CPU's caches measures the code alone: on a shared machine a
/// 48 MB table's speed depends on where its memory lies (a plain JavaScript read of
/// 48 MB, the same code, took 2.2 to 5.3 ms from one allocation to the next).
fn local_rows(given: Option<&str>) -> Result<usize, CliError> {
    let Some(text) = given else { return Ok(SCAN_ROWS) };
    match text.parse::<usize>() {
        Ok(n) if (1000..=SCAN_ROWS).contains(&n) && SCAN_ROWS % n == 0 => Ok(n),
        _ => Err(CliError::Usage(format!(
            "--rows {text}: bench --local takes 1000 to {SCAN_ROWS} rows, a divisor of {SCAN_ROWS} \
             (each run scans {SCAN_ROWS} rows: the table {SCAN_ROWS}/N times)"
        ))),
    }
}

/// The timed runs of the local throughput probe (`scenario::LocalScan`): each run's
/// wall time and the CPU time of the thread that ran it, in seconds; `table`: the rows
/// of the table each run scans `SCAN_ROWS / table` times.
struct Throughput {
    secs: Vec<f64>,
    cpu_secs: Vec<f64>,
    table: usize,
}

impl Throughput {
    fn summary(&self) -> String {
        let mut v = self.secs.clone();
        v.sort_by(f64::total_cmp);
        let rate = |s: f64| SCAN_ROWS as f64 / s / 1e6;
        let (best, median, worst) = (v[0], v[v.len() / 2], v[v.len() - 1]);
        let cpu = self.cpu_secs.iter().sum::<f64>() / self.cpu_secs.len() as f64;
        let table = if self.table == SCAN_ROWS {
            String::new()
        } else {
            format!(" (a table of {} scanned {} times)", self.table, SCAN_ROWS / self.table)
        };
        format!(
            "local throughput (SeqScan + sum over 1,000,000 rows{table}, native): median {:.1} M rows/s, best {:.1} \
             ({} runs after {} untimed; {:.2}-{:.2} ms a run, {:.2} ms of CPU on average)",
            rate(median),
            rate(best),
            v.len(),
            SCAN_WARMUP,
            best * 1e3,
            worst * 1e3,
            cpu * 1e3
        )
    }
}

/// SeqScan + sum over `SCAN_ROWS` local rows, natively: `SCAN_WARMUP` untimed runs,
/// then `SCAN_RUNS` timed, each whole `LocalScan::run`s over a table of `table` rows,
/// `SCAN_ROWS / table` of them (the page times the same calls in wasm the same way).
/// The CPU time beside the wall time: on a shared machine a run may wait for a core,
/// which its wall time counts and its CPU time does not.
fn local_throughput(table: usize) -> Result<Throughput, CliError> {
    let scan = LocalScan::new(table).map_err(CliError::Failed)?;
    let one_run = || -> Result<(), CliError> {
        for _ in 0..SCAN_ROWS / table {
            scan.run().map_err(CliError::Failed)?;
        }
        Ok(())
    };
    for _ in 0..SCAN_WARMUP {
        one_run()?;
    }
    let (mut secs, mut cpu_secs) = (Vec::with_capacity(SCAN_RUNS), Vec::with_capacity(SCAN_RUNS));
    for _ in 0..SCAN_RUNS {
        let (t, c) = (Instant::now(), thread_cpu_secs());
        one_run()?;
        cpu_secs.push(thread_cpu_secs() - c);
        secs.push(t.elapsed().as_secs_f64());
    }
    Ok(Throughput { secs, cpu_secs, table })
}

/// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), in seconds.
fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given, which lives until it returns.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}
