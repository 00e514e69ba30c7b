//! `pgasync demo` with real PostgreSQL 15 (installed by `make test`'s set-up): shard
//! clusters, the postgres_fdw coordinator and the relay come up; `pgasync explain
//! --live` runs scenarios on those shards with the simulator's result; a demo killed
//! outright (its clusters left running) is cleaned up by the next one, which then stops
//! everything on Ctrl-C.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

mod support;
use support::demo::DemoProcess;
use support::{postgres_installed, postgres_left, StopPostgresLeft};

const BIN: &str = env!("CARGO_BIN_EXE_pgasync");

fn explain_live(dir: &Path, scenario: &str, mode: &str) -> String {
    let out = Command::new(BIN)
        .args(["explain", "--scenario", scenario, "--mode", mode, "--rows", "300", "--counters", "on"])
        .args(["--live", &dir.join("relay.toml").display().to_string()])
        .output()
        .expect("pgasync explain runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "explain --live {scenario} {mode}: {:?}\n{text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// `pgasync sql --file crate/coordinator_sql/scenarios/m.sql` (seed 003) with `extra` flags.
fn sql_file(extra: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(["sql", "--file", "../crate/coordinator_sql/scenarios/m.sql", "--log", "off", "--rows", "100"])
        .args(extra)
        .output()
        .expect("pgasync sql runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "sql {extra:?}: {}\n{text}", String::from_utf8_lossy(&out.stderr));
    text
}

/// EXPLAIN without actual times (the estimates stay), then the rows' scores (ties at score 100 come in the
/// shards' own order, which differs between PostgreSQL and the simulator).
fn masked(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.contains(" Time: ") && !l.starts_with('('))
        .map(|l| if l.contains(" | ") { l.rsplit(" | ").next().unwrap_or(l).to_string() } else { l.to_string() })
        .map(|l| match l.find("actual time=").and_then(|a| Some((a, a + l[a..].find(" rows=")?))) {
            Some((a, r)) => format!("{}{}", &l[..a], &l[r..]),
            None => l.to_string(),
        })
        .collect()
}

#[test]
fn demo_comes_up_runs_live_and_cleans_up_after_a_crash() {
    assert!(postgres_installed(), "PostgreSQL is not installed (make test's set-up installs it)");
    let dir: PathBuf = std::env::temp_dir().join(format!("pgasync-test-demo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Dropped last: whatever this test leaves running when it fails is stopped.
    let _left = StopPostgresLeft(dir.clone());

    // Both demos are stopped with Ctrl-C on drop (support::demo) if the test fails.
    let first = DemoProcess::start(&dir, 300);
    // Every built-in scenario, sync and async, on the demo's clusters: each server is
    // reached where the demo put its data (scenario::live_targets), whatever its name
    // (M's s2 and s3 from seed 003, X's server1).
    for info in pgasync::scenario::SCENARIOS {
        for mode in ["sync", "async"] {
            let text = explain_live(&dir, info.id, mode);
            assert!(text.contains("reference matches"), "{} {mode} live:\n{text}", info.id);
            assert!(text.contains("live shards from"), "{text}");
        }
    }
    // A scenario file (seed 003) loaded into the live shards: the same plan, the same
    // row counts per node and the same scores as the simulator's run of it.
    let sim = sql_file(&[]);
    let live = sql_file(&["--live", &dir.join("relay.toml").display().to_string()]);
    assert!(live.contains("live shards, real clock"), "{live}");
    assert_eq!(masked(&live), masked(&sim), "seed 003 live and simulated differ:\n{live}\n{sim}");
    // A crash: the demo and its relay die at once; the clusters stay up.
    let mut first = first;
    unsafe {
        libc::kill(-(first.child.id() as i32), libc::SIGKILL);
    }
    let _ = first.child.wait();
    assert!(!postgres_left(&dir).is_empty(), "the crashed demo's clusters are still running");

    // The next demo removes them first, comes up, and stops everything on Ctrl-C.
    let mut second = DemoProcess::start(&dir, 300);
    let text = explain_live(&dir, "E", "async");
    assert!(text.contains("reference matches"), "{text}");
    unsafe {
        libc::kill(second.child.id() as i32, libc::SIGINT);
    }
    let t = Instant::now();
    let status = loop {
        if let Some(s) = second.child.try_wait().unwrap() {
            break s;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "the demo did not stop within 60 s of Ctrl-C");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "demo exit after Ctrl-C: {status:?}");
    assert!(postgres_left(&dir).is_empty(), "clusters left: {:?}", postgres_left(&dir));
    assert!(!dir.exists(), "the work folder is removed");
}
