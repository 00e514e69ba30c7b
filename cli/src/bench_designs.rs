//! `pgasync bench --designs`: async beyond Append (issue 18) against PostgreSQL 15.
//!
//! Two tables:
//! - **gains** on the virtual clock: R, K, pf0 and pf1 at 0, 2 and 10 ms round trip,
//!   each run async in `pg15` and with `async_through_nodes` (the rest of `pg15`
//!   unchanged), with the gain of the new design over `pg15`;
//! - **overhead** on the real clock, on local plans where there is nothing to overlap:
//!   t0 (a Seq Scan), pl (an Append of four) and NL — Robert Haas's test in seed 000, "a
//!   plan with multiple nested loop joins with inner index-scans, which will call
//!   ExecProcNode() a lot": two Nested Loops, each inner side an Index Scan of a local
//!   table. Both designs run interleaved (so drift hits both); each reports the median
//!   with its min–max spread, and the overhead is the medians' difference.
//!
//! Invariants: a time counts only if its rows equal the reference (computed from the
//! data, straight); the designs differ in `async_through_nodes` only.
//!
//! Where it departs from the seeds: Kyotaro's figures came from pgbench on real clusters;
//! here the gains are the cost model's, and the overhead is this executor's own (the
//! branch `AsyncInputs::next` adds per row), not PostgreSQL's ExecProcNode.

use crate::CliError;
use pgasync::clock::Clock;
use pgasync::knobs::{Knobs, Source};
use pgasync::plan::{Expr, Plan};
use pgasync::scenario::Scenario;
use pgasync::types::{Catalog, ColType, Column, Datum, Table};
use std::time::{Duration, Instant};

const GAIN_IDS: [&str; 4] = ["R", "K", "pf0", "pf1"];
const RTTS_MS: [f64; 3] = [0.0, 2.0, 10.0];

fn design(k: &Knobs, through: bool) -> Knobs {
    Knobs { async_through_nodes: Some(through), ..k.clone() }
}

/// One run to the end; its elapsed time (ns), checked against the reference.
fn run(s: &Scenario, async_mode: bool, clock: Clock) -> Result<u64, CliError> {
    let mut r = s.start(async_mode, clock, false)?;
    r.keep_rows = true;
    let t0 = r.es.now();
    r.run_to_end().map_err(|e| CliError::Failed(format!("scenario {}: {e}", s.id)))?;
    if !s.matches_reference(&r.rows) {
        return Err(CliError::Failed(format!("scenario {}: result differs from the reference", s.id)));
    }
    Ok(r.es.now() - t0)
}

fn gains(base: &Knobs) -> Result<(), CliError> {
    println!("gains (virtual clock, async runs; gain of async_through_nodes over pg15)");
    println!(
        "{:<9}{:>7}{:>12}{:>12}{:>20}{:>10}",
        "scenario", "rtt_ms", "sync_ms", "pg15_ms", "async_through_ms", "gain_pct"
    );
    for id in GAIN_IDS {
        for rtt in RTTS_MS {
            let k = Knobs { rtt_ms: Some(rtt), ..pgasync::scenario::bench_size(id, base) };
            let pg = Scenario::build_from(id, &design(&k, false), Source::Cli)?;
            let through = Scenario::build_from(id, &design(&k, true), Source::Cli)?;
            let sync = run(&pg, false, Clock::virtual_clock())?;
            let a = run(&pg, true, Clock::virtual_clock())?;
            let b = run(&through, true, Clock::virtual_clock())?;
            println!(
                "{id:<9}{rtt:>7}{:>12.1}{:>12.1}{:>20.1}{:>10.1}",
                sync as f64 / 1e6,
                a as f64 / 1e6,
                b as f64 / 1e6,
                100.0 * (1.0 - b as f64 / a as f64)
            );
        }
    }
    Ok(())
}

/// NL: `Nested Loop (Nested Loop (Seq Scan o, Index Scan m), Index Scan i)` over local
/// tables o (100 keys), m and i (1,000 rows each, 10 per key, indexed on a).
fn nested_loops() -> Result<Scenario, CliError> {
    let mut s = Scenario::build("t0", &Knobs { shards: Some(1), rows_per_shard: Some(1), ..Default::default() })?;
    let table = |name: &str, rows: i64, keys: i64, index: bool| {
        let mut t = Table::new(name, vec![Column::new("a", ColType::Int)]);
        for i in 0..rows {
            t.push_row(&[Datum::Int(i % keys)]);
        }
        if index {
            t.create_index(0);
        }
        t
    };
    let (o, m, i) = (table("o", 100, 100, false), table("m", 1000, 100, true), table("i", 1000, 100, true));
    let count = |t: &Table, a: &Datum| (0..t.nrows()).filter(|&r| &t.row(r)[0] == a).count();
    let mut reference = vec![];
    for r in 0..o.nrows() {
        let a = o.row(r)[0].clone();
        for _ in 0..count(&m, &a) * count(&i, &a) {
            reference.push(vec![a.clone(), a.clone(), a.clone()]);
        }
    }
    let a = || vec![Column::new("a", ColType::Int)];
    let index_scan = |t: &str| Plan::IndexScan {
        table: t.into(),
        columns: a(),
        column: 0,
        desc: false,
        alias: None,
        index_only: false,
        quals: vec![],
        nest_param: None,
    };
    let inner = Plan::NestLoop {
        outer: Box::new(Plan::SeqScan { table: "o".into(), columns: a(), alias: None }),
        inner: Box::new(index_scan("m")),
        outer_key: Expr::Col(0),
        inner_key: Expr::Col(0),
        filter_inner_first: false,
        join_type: pgasync::plan::JoinType::Inner,
        joinrel_rows: None,
    };
    s.plan = Plan::NestLoop {
        outer: Box::new(inner),
        inner: Box::new(index_scan("i")),
        outer_key: Expr::Col(0),
        inner_key: Expr::Col(0),
        filter_inner_first: false,
        join_type: pgasync::plan::JoinType::Inner,
        joinrel_rows: None,
    };
    let mut local = Catalog::default();
    for t in [o, m, i] {
        local.add(t);
    }
    s.local = local;
    s.id = "NL".into();
    s.reference = reference;
    Ok(s)
}

fn real_clock() -> Clock {
    let start = Instant::now();
    Clock::from_host(Box::new(move || start.elapsed().as_nanos() as u64))
}

fn stats(mut v: Vec<u64>) -> (f64, f64, f64) {
    v.sort_unstable();
    let ms = |x: u64| x as f64 / 1e6;
    (ms(v[v.len() / 2]), ms(v[0]), ms(v[v.len() - 1]))
}

fn overhead(base: &Knobs) -> Result<(), CliError> {
    println!();
    println!("overhead (real clock, async mode, local plans: median and min-max of interleaved runs)");
    println!(
        "{:<9}{:>6}{:>24}{:>30}{:>14}",
        "plan", "runs", "pg15_ms (min-max)", "async_through_ms (min-max)", "overhead_pct"
    );
    let mut plans = vec![];
    for id in ["t0", "pl"] {
        let k = pgasync::scenario::bench_size(id, base);
        plans.push((
            Scenario::build_from(id, &design(&k, false), Source::Cli)?,
            Scenario::build_from(id, &design(&k, true), Source::Cli)?,
        ));
    }
    let nl = nested_loops()?;
    let mut nl_through = nl.clone();
    nl_through.behaviour.async_through_nodes = true;
    plans.push((nl, nl_through));
    for (pg, through) in plans {
        let (a, b) = crate::bench::time_runs(5, 101, Duration::from_secs(3), || {
            Ok((run(&pg, true, real_clock())?, run(&through, true, real_clock())?))
        })?;
        let n = a.len();
        let ((am, alo, ahi), (bm, blo, bhi)) = (stats(a), stats(b));
        println!(
            "{:<9}{n:>6}{:>24}{:>30}{:>14.1}",
            pg.id,
            format!("{am:.2} ({alo:.2}-{ahi:.2})"),
            format!("{bm:.2} ({blo:.2}-{bhi:.2})"),
            100.0 * (bm / am - 1.0)
        );
    }
    Ok(())
}

/// `pgasync bench --designs`.
pub fn run_designs(base: &Knobs) -> Result<(), CliError> {
    gains(base)?;
    overhead(base)
}
