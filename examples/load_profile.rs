//! The page's first load, natively: the recording of E async (16 shards, 1000 rows each,
//! fetch 100) and its comparison, as the page does them; for callgrind.
//!
//!     cargo run --release --example load_profile [-- SHARDS ROWS REPEAT]
use pgasync::demo::session::{CompareJob, DemoSession};
use pgasync::knobs::{self, Knobs};
use pgasync::scenario::Scenario;
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let shards = a.first().map_or("16", |s| s.as_str());
    let rows = a.get(1).map_or("1000", |s| s.as_str());
    let rep: usize = a.get(2).map_or(1, |s| s.parse().unwrap());
    let what = std::env::var("WHAT").unwrap_or_else(|_| "record,compare".into());
    let scen = std::env::var("SCEN").unwrap_or_else(|_| "E".into());
    let async_mode = std::env::var("MODE").map_or(true, |m| m == "async");
    let extra = std::env::var("EXTRA").map(|e| format!(",{e}")).unwrap_or_default();
    let knobs: Knobs =
        knobs::from_json(&format!(r#"{{"shards":"{shards}","rows_per_shard":"{rows}","fetch_size":"100"{extra}}}"#))
            .unwrap();
    for _ in 0..rep {
        let t = Instant::now();
        let scenario = Scenario::build(&scen, &knobs).unwrap();
        let t_data = t.elapsed();
        let mut s = DemoSession::with_scenario(scenario, &scen, async_mode, knobs.clone()).unwrap();
        let t_session = t.elapsed();
        if what.contains("record") {
            s.run_to_end();
        }
        let t_rec = t.elapsed();
        let mut h = 0u64;
        if what.contains("pack") {
            let (mut nums, mut strs) = (vec![], vec![]);
            let ev = s.trace_slice(0, usize::MAX);
            pgasync::demo::trace_pack::pack(ev, &mut nums, &mut strs);
            h = nums.len() as u64;
        }
        let t_pack = t.elapsed();
        if what.contains("compare") {
            let mut job = CompareJob::for_session(&s).unwrap();
            loop {
                if job.advance(usize::MAX).unwrap().is_some() {
                    break;
                }
            }
        }
        let t_cmp = t.elapsed();
        if what.contains("log") {
            for sv in s.run().host.servers.iter().take(2) {
                println!("{:#?}", sv.statement_log());
            }
        }
        if what.contains("fingerprint") {
            fingerprint(&mut s);
        }
        if what.contains("seek") {
            let n = s.steps();
            s.seek(n / 2 - 1).unwrap();
        }
        let t_seek = t.elapsed();
        eprintln!(
            "steps {} events {} | data {:?} session {:?} record {:?} pack {:?} ({h}) compare {:?} seek {:?}",
            s.steps(),
            s.trace_slice(0, usize::MAX).len(),
            t_data,
            t_session - t_data,
            t_rec - t_session,
            t_pack - t_rec,
            t_cmp - t_pack,
            t_seek - t_cmp
        );
    }
}

/// A hash of everything the page reads of a run: the packed trace, the snapshots of
/// some steps reached by seeks back and forth, the statement logs, the comparison.
fn fingerprint(s: &mut DemoSession) {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    let (mut nums, mut strs) = (vec![], vec![]);
    pgasync::demo::trace_pack::pack(s.trace_slice(0, usize::MAX), &mut nums, &mut strs);
    nums.iter().for_each(|n| n.to_bits().hash(&mut h));
    strs.hash(&mut h);
    let trace_h = h.finish();
    let n = s.steps();
    let mut snaps = DefaultHasher::new();
    for t in [n / 2, 1, n - 1, 257, 3 * n / 4, 0, 5000.min(n), n] {
        s.seek(t).unwrap();
        serde_json::to_string(&s.snapshot(0)).unwrap().hash(&mut snaps);
        s.narration_log(t.saturating_sub(3), t).hash(&mut snaps);
        s.explain_text().hash(&mut snaps);
        s.run().host.servers.iter().for_each(|sv| sv.statement_log().hash(&mut snaps));
    }
    let mut job = CompareJob::for_session(s).unwrap();
    let c = loop {
        if let Some(c) = job.advance(usize::MAX).unwrap() {
            break c;
        }
    };
    let cmp_h = {
        let mut h = DefaultHasher::new();
        serde_json::to_string(&c).unwrap().hash(&mut h);
        h.finish()
    };
    println!("fingerprint steps {n} trace {trace_h:016x} snaps {:016x} compare {cmp_h:016x}", snaps.finish());
}
