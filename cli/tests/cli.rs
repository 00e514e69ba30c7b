//! The `pgasync` command as a user runs it: outputs, and exit code 2 with a one-line
//! message for bad arguments.

use std::process::Command;

fn pgasync(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pgasync")).args(args).output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn explain_prints_async_foreign_scans_and_a_matching_result() {
    let (code, out, _) = pgasync(&["explain", "--scenario", "E", "--rows", "500"]);
    assert_eq!(code, 0);
    assert_eq!(out.matches("Async Foreign Scan on").count(), 4, "{out}");
    assert!(out.contains("rows=500 loops=1"));
    assert!(out.contains("reference matches"));
    let (code, out, _) =
        pgasync(&["explain", "--scenario", "E", "--rows", "500", "--mode", "sync", "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v[0]["Plan"]["Node Type"], "Aggregate");
    assert_eq!(v[0]["Plan"]["Plans"][0]["Actual Rows"], 2000);
}

#[test]
fn bench_prints_the_columns_and_both_sharings_of_d_and_f() {
    let (code, out, _) =
        pgasync(&["bench", "--scenarios", "D,E", "--rows", "300", "--fetch-size", "100", "--format", "tsv"]);
    assert_eq!(code, 0, "{out}");
    let mut lines = out.lines();
    assert_eq!(lines.next().unwrap(), "scenario\tshards\tsharing\tfetch_size\tsync_ms\tasync_ms\tgain_pct\tlimit_pct");
    let rows: Vec<Vec<&str>> = lines.take(3).map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows[0][..4], ["D", "4", "shared", "100"]);
    assert_eq!(rows[1][..4], ["D", "4", "pipelined", "100"]);
    assert_eq!(rows[2][..4], ["E", "4", "dedicated", "100"]);
    for r in &rows {
        let gain: f64 = r[6].parse().unwrap();
        let limit: f64 = r[7].parse().unwrap();
        assert!(gain <= limit + 0.05, "{r:?}: gain above the model's limit");
    }
    assert!(out.contains("local throughput"));
}

#[test]
fn bad_arguments_exit_with_2_and_one_line() {
    for args in [
        vec!["explain"],
        vec!["explain", "--scenario", "Z"],
        vec!["explain", "--scenario", "E", "--shards", "0"],
        vec!["explain", "--scenario", "E", "--fetch-size", "abc"],
        vec!["explain", "--scenario", "E", "--mode", "fast"],
        vec!["bench", "--clock", "wall"],
        vec!["bench", "--scenarios", "A,Q"],
        vec!["bench", "--rtt-ms", "-1"],
        vec!["frobnicate"],
        vec!["explain", "--bogus", "1"],
        vec!["explain", "--scenario", "E", "--shards", "64", "--rows", "10000000"],
        vec!["serve", "--port", "99999"],
    ] {
        let (code, out, err) = pgasync(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("pgasync: "), "{args:?}: {err}");
    }
}
