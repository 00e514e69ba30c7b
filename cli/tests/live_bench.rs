//! `pgasync bench --live` and `pgasync calibrate --live` against real PostgreSQL 15
//! clusters they start themselves (skipped, with a note, when PostgreSQL is not
//! installed). The figures are not asserted: only the output's shape, that every
//! cluster is stopped afterwards, and that a calibration profile loads.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

mod support;
use support::{postgres_installed, postgres_left};

const BIN: &str = env!("CARGO_BIN_EXE_pgasync");

/// A fresh folder under the temporary directory, readable by the `postgres` user.
fn work_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pgasync-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn bench_live_prints_a_row_per_scenario_delay_and_fetch_size_and_stops_its_clusters() {
    if !postgres_installed() {
        eprintln!("PostgreSQL is not installed: skipped");
        return;
    }
    let dir = work_dir("bench-live");
    let t = Instant::now();
    let out = Command::new(BIN)
        .args(["bench", "--live", "--rows", "2000", "--delay-ms", "0,2", "--fetch-size", "100", "--runs", "1"])
        .args(["--format", "tsv", "--dir", &dir.display().to_string()])
        .output()
        .expect("pgasync runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}", out.status);
    let lines: Vec<Vec<&str>> = stdout.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(
        lines[0],
        [
            "scenario",
            "delay_ms",
            "fetch_size",
            "postgres_sync_ms",
            "postgres_async_ms",
            "postgres_gain_pct",
            "pg15_sync_ms",
            "pg15_async_ms",
            "pg15_gain_pct",
            "improved_sync_ms",
            "improved_async_ms",
            "improved_gain_pct"
        ]
    );
    let rows = &lines[1..];
    let keys: Vec<(&str, &str, &str)> = rows.iter().map(|r| (r[0], r[1], r[2])).collect();
    assert_eq!(keys, [("E", "0", "100"), ("E", "2", "100"), ("D", "0", "100"), ("D", "2", "100")], "{stdout}");
    for r in rows {
        assert_eq!(r.len(), 12, "{r:?}");
        for (i, cell) in r[3..].iter().enumerate() {
            let v: f64 = cell.parse().unwrap_or_else(|_| panic!("{cell} in {r:?} is not a number"));
            assert!(v.is_finite(), "{r:?}");
            if i % 3 != 2 {
                assert!(v > 0.0, "a time must be positive: {r:?}");
            }
        }
    }
    // The other figures go to stderr with tsv.
    assert!(stderr.contains("relay throughput"), "{stderr}");
    assert!(stderr.contains("relay latency"), "{stderr}");
    assert!(stderr.contains("simulated"), "{stderr}");
    // Every cluster is stopped and the folder removed.
    let left = postgres_left(&dir);
    assert!(left.is_empty(), "postgres processes left for {}: {left:?}", dir.display());
    assert!(!dir.exists(), "{} is left", dir.display());
    eprintln!("bench --live took {:?}", t.elapsed());
}

#[test]
fn calibrate_live_writes_a_profile_that_explain_loads() {
    if !postgres_installed() {
        eprintln!("PostgreSQL is not installed: skipped");
        return;
    }
    let dir = work_dir("calibrate");
    let out_file = std::env::temp_dir().join(format!("pgasync-test-profile-{}.json", std::process::id()));
    let out = Command::new(BIN)
        .args(["calibrate", "--live", "--rows", "2000", "--out", &out_file.display().to_string()])
        .args(["--dir", &dir.display().to_string()])
        .output()
        .expect("pgasync runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&out_file).expect("the profile is written");
    let v: serde_json::Value = serde_json::from_str(&text).expect("the profile is JSON");
    let obj = v.as_object().expect("an object");
    let keys = [
        "rtt_ms",
        "server_row_us",
        "server_query_us",
        "bandwidth_mbps",
        "connect_ms",
        "coordinator_row_us",
        "coordinator_answer_us",
        "coordinator_async_us",
    ];
    assert_eq!(obj.len(), keys.len(), "{text}");
    for key in keys {
        let x = obj.get(key).and_then(|x| x.as_f64()).unwrap_or_else(|| panic!("{key} in {text}"));
        assert!(x.is_finite() && x >= 0.0, "{key} = {x}");
        if ["rtt_ms", "bandwidth_mbps", "connect_ms"].contains(&key) {
            assert!(x > 0.0, "{key} = {x}"); // a clamp at 0 is possible for the fitted costs
        }
    }
    assert!(postgres_left(&dir).is_empty(), "clusters left under {}", dir.display());
    // explain and bench load it; a flag overrides it.
    let profile = out_file.display().to_string();
    let e = Command::new(BIN)
        .args(["explain", "--scenario", "E", "--rows", "500", "--profile", &profile])
        .output()
        .expect("explain runs");
    assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
    assert!(String::from_utf8_lossy(&e.stdout).contains("reference matches"));
    let slow = Command::new(BIN)
        .args(["explain", "--scenario", "E", "--rows", "500", "--profile", &profile, "--rtt-ms", "50"])
        .output()
        .expect("explain runs");
    let time = |o: &std::process::Output| -> f64 {
        let s = String::from_utf8_lossy(&o.stdout).into_owned();
        let l = s.lines().find(|l| l.starts_with("Execution Time:")).expect("Execution Time").to_string();
        l.trim_start_matches("Execution Time:").trim().trim_end_matches("ms").trim().parse().unwrap()
    };
    assert!(time(&slow) > time(&e) + 50.0, "--rtt-ms 50 overrides the profile's rtt_ms");
    let b = Command::new(BIN)
        .args(["bench", "--scenarios", "E", "--rows", "500", "--fetch-size", "100", "--format", "tsv"])
        .args(["--profile", &profile])
        .output()
        .expect("bench runs");
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    // A profile with an unknown key is refused by name.
    let bad = std::env::temp_dir().join(format!("pgasync-test-bad-profile-{}.json", std::process::id()));
    std::fs::write(&bad, "{\"rtt_ms\": 1, \"warp\": 9}").unwrap();
    let r = Command::new(BIN)
        .args(["explain", "--scenario", "E", "--profile", &bad.display().to_string()])
        .output()
        .expect("explain runs");
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("warp"));
    let _ = std::fs::remove_file(&out_file);
    let _ = std::fs::remove_file(&bad);
}
