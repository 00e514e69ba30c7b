//! `pgasync bench`: every scenario in sync and async mode, one row per scenario,
//! sharing and fetch size, with the gain and the best gain the scenario's model allows.
//!
//! On the virtual clock the figures are the cost model's and are exactly reproducible.
//! On the real clock each mode is run repeatedly (sync and async interleaved, so drift
//! hits both) and the median wall time is reported; the simulated network's delays are
//! really slept, and the shards' work runs on the same thread as the executor.

use crate::args::Args;
use crate::CliError;
use pgasync::clock::Clock;
use pgasync::run::QueryRun;
use pgasync::scenario::{Knobs, Scenario, Sharing};
use std::time::{Duration, Instant};

const ALL: &[&str] = &["A", "B", "C", "D", "E", "F", "G", "pf1", "M", "X"];

struct Row {
    scenario: String,
    shards: usize,
    sharing: String,
    fetch_size: usize,
    sync_ms: f64,
    async_ms: f64,
    limit_pct: f64,
}

pub fn run(argv: &[String]) -> Result<(), CliError> {
    let a = Args::parse(argv, &["clock", "scenarios", "shards", "fetch-size", "rows", "rtt-ms", "format", "queries"])?;
    let real = a.choice("clock", &["virtual", "real"], "virtual")? == "real";
    let format = a.choice("format", &["table", "tsv"], "table")?;
    let ids: Vec<String> = match a.get("scenarios") {
        None => ALL.iter().map(|s| s.to_string()).collect(),
        Some(list) => list.split(',').map(|s| s.trim().to_string()).collect(),
    };
    for id in &ids {
        if !ALL.contains(&id.as_str()) {
            return Err(CliError::Usage(format!("unknown scenario \"{id}\" (built-in: {})", ALL.join(","))));
        }
    }
    let fetch_sizes: Vec<usize> = match a.num::<usize>("fetch-size")? {
        Some(n) => vec![n],
        None => vec![100, 200, 1000],
    };
    let queries = a.num::<usize>("queries")?.unwrap_or(20);
    let mut base = crate::knobs_from(&a)?;
    if real && base.rows_per_shard.is_none() {
        base.rows_per_shard = Some(20_000); // the real clock really waits: keep runs short
    }
    // Validate knobs once, up front, so a bad value is a usage error.
    Scenario::build("E", &Knobs { fetch_size: Some(fetch_sizes[0]), ..base.clone() })?;

    let mut rows = Vec::new();
    if format == "tsv" {
        println!("scenario\tshards\tsharing\tfetch_size\tsync_ms\tasync_ms\tgain_pct\tlimit_pct");
    } else {
        println!(
            "{:<8} {:>6} {:<10} {:>10} {:>12} {:>12} {:>9} {:>9}",
            "scenario", "shards", "sharing", "fetch_size", "sync_ms", "async_ms", "gain_pct", "limit_pct"
        );
    }
    for id in &ids {
        let sharings: Vec<Option<Sharing>> = match id.as_str() {
            "D" | "F" => vec![Some(Sharing::Shared), Some(Sharing::Pipelined)],
            _ => vec![None],
        };
        for sharing in sharings {
            for &fs in &fetch_sizes {
                let knobs = Knobs { fetch_size: Some(fs), sharing: sharing.or(base.sharing), ..base.clone() };
                let row = if id == "M" { bench_merge(&knobs, queries, real)? } else { bench_one(id, &knobs, real)? };
                print_row(&row, format);
                rows.push(row);
            }
        }
    }
    if ids.iter().any(|i| i == "M") {
        let m: Vec<&Row> = rows.iter().filter(|r| r.scenario == "M").collect();
        for r in m {
            println!(
                "M fetch_size {}: {:.1} tps sync, {:.1} tps async ({:.2}x)",
                r.fetch_size,
                1000.0 / r.sync_ms,
                1000.0 / r.async_ms,
                r.sync_ms / r.async_ms
            );
        }
    }
    local_throughput();
    Ok(())
}

fn print_row(r: &Row, format: &str) {
    let gain = 100.0 * (1.0 - r.async_ms / r.sync_ms);
    if format == "tsv" {
        println!(
            "{}\t{}\t{}\t{}\t{:.3}\t{:.3}\t{:.1}\t{:.1}",
            r.scenario, r.shards, r.sharing, r.fetch_size, r.sync_ms, r.async_ms, gain, r.limit_pct
        );
    } else {
        println!(
            "{:<8} {:>6} {:<10} {:>10} {:>12.3} {:>12.3} {:>9.1} {:>9.1}",
            r.scenario, r.shards, r.sharing, r.fetch_size, r.sync_ms, r.async_ms, gain, r.limit_pct
        );
    }
}

fn real_clock() -> (Clock, Box<dyn Fn(u64)>) {
    let start = Instant::now();
    let clock = Clock::from_host(Box::new(move || start.elapsed().as_nanos() as u64));
    (clock, Box::new(|ns| std::thread::sleep(Duration::from_nanos(ns))))
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

fn bench_one(id: &str, knobs: &Knobs, real: bool) -> Result<Row, CliError> {
    let s = Scenario::build(id, knobs)?;
    let (virt_sync, sync_run) = run_once(&s, false, false)?;
    let bound = s.lower_bound_ns(&sync_run);
    let (sync_ns, async_ns) = if real {
        let (mut ts, mut ta) = (vec![], vec![]);
        let started = Instant::now();
        while ts.len() < 5 || (started.elapsed() < Duration::from_secs(2) && ts.len() < 201) {
            ts.push(run_once(&s, false, true)?.0);
            ta.push(run_once(&s, true, true)?.0);
        }
        (median(ts), median(ta))
    } else {
        (virt_sync, run_once(&s, true, false)?.0)
    };
    Ok(Row {
        scenario: id.to_string(),
        shards: s.shards,
        sharing: s.sharing.map_or("-", |x| x.name()).to_string(),
        fetch_size: s.fetch_size,
        sync_ms: sync_ns as f64 / 1e6,
        async_ms: async_ns as f64 / 1e6,
        limit_pct: 100.0 * (1.0 - bound as f64 / virt_sync as f64),
    })
}

/// Scenario M as the seed ran it with pgbench: a series of queries with random OFFSET
/// 0–200 and LIMIT 10–20 (a fixed pseudo-random series, the same for both modes).
fn bench_merge(knobs: &Knobs, queries: usize, real: bool) -> Result<Row, CliError> {
    let mut seed: u64 = 42;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let (mut sync_ns, mut async_ns, mut bound_ns) = (0u64, 0u64, 0u64);
    let mut shards = 0;
    let mut sharing = String::new();
    for _ in 0..queries {
        let k = Knobs { offset: Some(next(201)), limit: Some(10 + next(11)), ..knobs.clone() };
        let s = Scenario::build("M", &k)?;
        shards = s.shards;
        sharing = s.sharing.map_or("-", |x| x.name()).to_string();
        let (vs, run) = run_once(&s, false, false)?;
        bound_ns += s.lower_bound_ns(&run);
        if real {
            sync_ns += run_once(&s, false, true)?.0;
            async_ns += run_once(&s, true, true)?.0;
        } else {
            sync_ns += vs;
            async_ns += run_once(&s, true, false)?.0;
        }
    }
    let q = queries.max(1) as f64;
    Ok(Row {
        scenario: "M".into(),
        shards,
        sharing,
        fetch_size: knobs.fetch_size.unwrap_or(100),
        sync_ms: sync_ns as f64 / 1e6 / q,
        async_ms: async_ns as f64 / 1e6 / q,
        limit_pct: 100.0 * (1.0 - bound_ns as f64 / sync_ns.max(1) as f64),
    })
}

/// SeqScan + sum over 1,000,000 local rows, natively, in rows per second.
fn local_throughput() {
    let knobs = Knobs { shards: Some(1), rows_per_shard: Some(1_000_000), ..Default::default() };
    let s = Scenario::build("A", &knobs).expect("scenario A");
    let mut best = f64::MAX;
    for _ in 0..5 {
        let mut run = s.start(false, Clock::virtual_clock(), false).expect("start");
        let t = Instant::now();
        run.run_to_end().expect("scenario A runs");
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("local throughput (SeqScan + sum over 1,000,000 rows, native): {:.1} M rows/s", 1.0 / best);
}
