//! The page's first load natively (issue 20): the data, the session, the recording and
//! the comparison of a preset scenario, as the page makes them (the page's first screen
//! is E async, 16 shards of 1,000 rows, fetch 100: the defaults here), with each
//! part's wall time on stderr; for callgrind, which counts what the page's wasm runs.
//!
//!     cargo run --release --example load_profile [-- SHARDS ROWS REPEAT]
//!     valgrind --tool=callgrind target/release/examples/load_profile
//!
//! Environment: `SCEN` (a scenario id, E), `MODE` (async or sync), `EXTRA` (more knobs,
//! JSON members: `"sharing":"shared"`), `SLICE` (build the data as the page does, this
//! many rows a call, and time its parts), `WHAT` (the parts to run, record,compare;
//! `fingerprint` prints a hash of everything the page reads of the run: the packed
//! trace, snapshots, narration, EXPLAIN and the shards' statement logs after seeks back
//! and forth, and the comparison: two builds of the same toolchain that print the same
//! line recorded the same run).

use pgasync::demo::session::{CompareJob, Comparison, DemoSession};
use pgasync::knobs::{self, Knobs, Source};
use pgasync::scenario::Scenario;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.to_string());
    let env = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.to_string());
    let (shards, rows, repeat) = (arg(0, "16"), arg(1, "1000"), arg(2, "1").parse::<usize>().expect("REPEAT"));
    let (scenario_id, what) = (env("SCEN", "E"), env("WHAT", "record,compare"));
    let async_mode = env("MODE", "async") == "async";
    let slice = std::env::var("SLICE").ok().map(|s| s.parse::<usize>().expect("SLICE: rows per slice"));
    let extra = std::env::var("EXTRA").ok().filter(|e| !e.is_empty()).map(|e| format!(",{e}")).unwrap_or_default();
    let knobs: Knobs =
        knobs::from_json(&format!(r#"{{"shards":"{shards}","rows_per_shard":"{rows}","fetch_size":"100"{extra}}}"#))
            .expect("knobs");
    for _ in 0..repeat {
        let t = Instant::now();
        let scenario = match slice {
            Some(rows) => build_in_slices(&scenario_id, &knobs, rows),
            None => Scenario::build(&scenario_id, &knobs).expect("scenario"),
        };
        let data = t.elapsed();
        let mut s = DemoSession::with_scenario(scenario, &scenario_id, async_mode, knobs.clone()).expect("session");
        let session = t.elapsed();
        if what.contains("record") {
            s.run_to_end();
        }
        let recorded = t.elapsed();
        if what.contains("compare") {
            compare(&s);
        }
        let compared = t.elapsed();
        if what.contains("fingerprint") {
            fingerprint(&mut s);
        }
        eprintln!(
            "{} steps, {} events | data {data:?}, session {:?}, recording {:?}, comparison {:?}",
            s.steps(),
            s.trace_slice(0, usize::MAX).len(),
            session - data,
            recorded - session,
            compared - recorded,
        );
    }
}

/// The scenario as the page builds it (`SessionBuild.data`): its tables listed, made
/// `rows` rows a call, then the build from them; each part's time on stderr.
fn build_in_slices(id: &str, knobs: &Knobs, rows: usize) -> Scenario {
    let t = Instant::now();
    let mut stock = Scenario::stock_for(id, knobs, Source::Json).expect("scenario");
    let listed = t.elapsed();
    let (mut calls, mut longest) = (0, Duration::ZERO);
    loop {
        let c = Instant::now();
        let done = stock.make(rows);
        (calls, longest) = (calls + 1, longest.max(c.elapsed()));
        if done {
            break;
        }
    }
    let made = t.elapsed();
    let scenario = Scenario::build_with(id, knobs, Source::Json, &mut stock).expect("scenario");
    eprintln!(
        "data in slices of {rows} rows: listed {listed:?}, made {:?} in {calls} calls (longest {longest:?}), built {:?}",
        made - listed,
        t.elapsed() - made
    );
    scenario
}

/// The comparison the page makes beside a recorded session (its other run).
fn compare(s: &DemoSession) -> Comparison {
    let mut job = CompareJob::for_session(s).expect("comparison");
    loop {
        if let Some(c) = job.advance(usize::MAX).expect("comparison's runs") {
            return c;
        }
    }
}

fn fingerprint(s: &mut DemoSession) {
    let hash = |f: &mut dyn FnMut(&mut DefaultHasher)| {
        let mut h = DefaultHasher::new();
        f(&mut h);
        h.finish()
    };
    let trace = hash(&mut |h| {
        let (mut nums, mut strs) = (vec![], vec![]);
        pgasync::demo::trace_pack::pack(s.trace_slice(0, usize::MAX), &mut nums, &mut strs);
        nums.iter().for_each(|n| n.to_bits().hash(h));
        strs.hash(h);
    });
    let n = s.steps();
    let snapshots = hash(&mut |h| {
        for step in [n / 2, 1, n.saturating_sub(1), 257, 3 * n / 4, 0, 5000.min(n), n] {
            s.seek(step).expect("seek");
            serde_json::to_string(&s.snapshot(0)).expect("snapshot").hash(h);
            s.narration_log(step.saturating_sub(3), step).hash(h);
            s.explain_text().hash(h);
            s.run().host.servers.iter().for_each(|server| server.statement_log().hash(h));
        }
    });
    let comparison = hash(&mut |h| serde_json::to_string(&compare(s)).expect("comparison").hash(h));
    println!("fingerprint steps {n} trace {trace:016x} snaps {snapshots:016x} compare {comparison:016x}");
}
