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
fn bench_prints_a_row_per_behaviour_and_only_the_table_in_tsv() {
    let (code, out, err) =
        pgasync(&["bench", "--scenarios", "D,E", "--rows", "300", "--fetch-size", "100", "--format", "tsv"]);
    assert_eq!(code, 0, "{out}{err}");
    let mut lines = out.lines();
    assert_eq!(
        lines.next().unwrap(),
        "scenario\tshards\tsharing\tbehaviour\tfetch_size\tsync_ms\tasync_ms\tgain_pct\tlimit_pct"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 4, "stdout is only the table: {out}");
    assert_eq!(rows[0][..5], ["D", "4", "shared", "pg15", "100"]);
    assert_eq!(rows[1][..5], ["D", "4", "shared", "improved", "100"]);
    assert_eq!(rows[2][..5], ["E", "4", "dedicated", "pg15", "100"]);
    assert_eq!(rows[3][..5], ["E", "4", "dedicated", "improved", "100"]);
    for r in &rows {
        assert_eq!(r.len(), 9, "{r:?}");
        let gain: f64 = r[7].parse().unwrap();
        let limit: f64 = r[8].parse().unwrap();
        assert!(gain.is_finite() && limit.is_finite(), "{r:?}");
        assert!(gain <= limit + 0.05, "{r:?}: gain above the model's limit");
    }
    assert!(err.contains("local throughput"), "{err}");
}

#[test]
fn bench_table_and_one_behaviour_when_asked() {
    let (code, out, err) =
        pgasync(&["bench", "--scenarios", "M", "--rows", "200", "--fetch-size", "50", "--queries", "2", "--pipeline"]);
    assert_eq!(code, 0, "{out}{err}");
    let head: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        head,
        ["scenario", "shards", "sharing", "behaviour", "fetch_size", "sync_ms", "async_ms", "gain_pct", "limit_pct"]
    );
    let rows: Vec<Vec<&str>> = out.lines().skip(1).take(1).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows[0][..5], ["M", "4", "shared", "custom", "50"]);
    assert!(out.contains("M custom fetch_size 50:") && out.contains("tps sync"), "{out}");
    assert!(out.contains("local throughput"), "{out}");
}

#[test]
fn bench_with_no_rows_prints_finite_figures() {
    let (code, out, err) =
        pgasync(&["bench", "--scenarios", "A,C,E,X", "--rows", "0", "--fetch-size", "100", "--format", "tsv"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.lines().count(), 1 + 8, "{out}");
    for cell in out.lines().skip(1).flat_map(|l| l.split('\t').skip(5)) {
        assert!(cell == "-" || cell.parse::<f64>().is_ok_and(f64::is_finite), "{cell:?} in {out}");
    }
    let low = (out.clone() + &err).to_lowercase();
    assert!(!low.contains("nan") && !low.contains("inf"), "{out}{err}");
}

/// The count of numbers (ms) on `out`'s line starting with `head`.
fn runs_in(out: &str, head: &str) -> usize {
    let line = out.lines().find(|l| l.starts_with(head)).unwrap_or_else(|| panic!("no {head:?} in {out}"));
    line[head.len()..].split_whitespace().map(|x| x.parse::<f64>().expect("a number of ms")).count()
}

/// `bench --local`: the local throughput probe alone, every timed run's wall and CPU
/// time (what the page's bench reads), the summary; its runs are fixed and --rows only
/// sizes its table, so any other flag is refused rather than ignored. (No figure is checked: times are not.)
#[test]
fn bench_local_prints_each_run_and_takes_no_other_flag() {
    let (code, out, err) = pgasync(&["bench", "--local"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(runs_in(&out, "local scan runs (ms):"), pgasync::scenario::SCAN_RUNS, "{out}");
    assert_eq!(runs_in(&out, "local scan runs, CPU (ms):"), pgasync::scenario::SCAN_RUNS, "{out}");
    assert!(out.contains("local throughput (SeqScan + sum over 1,000,000 rows, native): median"), "{out}");
    // --rows: the table's size, each run still 1,000,000 rows; a size that does not
    // divide them, or out of range, is refused.
    let (code, out, err) = pgasync(&["bench", "--local", "--rows", "100000"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(runs_in(&out, "local scan runs (ms):"), pgasync::scenario::SCAN_RUNS, "{out}");
    let table = "local throughput (SeqScan + sum over 1,000,000 rows (a table of 100000 scanned 10 times), native)";
    assert!(out.contains(table), "{out}");
    for rows in ["5", "300000", "2000000", "x"] {
        let (code, _, err) = pgasync(&["bench", "--local", "--rows", rows]);
        assert_eq!(code, 2, "--rows {rows}: {err}");
        assert!(err.contains(&format!("--rows {rows}: bench --local takes 1000 to 1000000 rows")), "{err}");
    }
    for flag in [&["--fetch-size", "5"][..], &["--scenarios", "A"], &["--format", "tsv"], &["--pipeline"]] {
        let (code, _, err) = pgasync(&[&["bench", "--local"][..], flag].concat());
        assert_eq!(code, 2, "{flag:?}: {err}");
        assert!(err.contains("is not bench --local's"), "{flag:?}: {err}");
    }
    // Another mode beside it is refused, not left aside.
    for other in ["--designs", "--live"] {
        let (code, _, err) = pgasync(&["bench", "--local", other]);
        assert_eq!(code, 2, "{other}: {err}");
        assert!(err.contains("are separate modes of bench: give one"), "{other}: {err}");
    }
}

#[test]
fn explain_names_the_behaviour_and_its_differences() {
    let base = ["explain", "--scenario", "E", "--rows", "200"];
    let run = |extra: &[&str]| {
        let (code, out, err) = pgasync(&[&base[..], extra].concat());
        assert_eq!(code, 0, "{extra:?}: {err}");
        out.lines().find(|l| l.starts_with("Behaviour: ")).unwrap_or_default().to_string()
    };
    assert_eq!(run(&[]), "Behaviour: pg15; differences from PostgreSQL 15: none");
    assert_eq!(
        run(&["--behaviour", "improved"]),
        "Behaviour: improved; differences from PostgreSQL 15: fetch_ahead, pipelined_setup, parallel_commit, \
         parallel_close, pipeline, fifo_results, async_merge_append, async_through_nodes"
    );
    assert_eq!(
        run(&["--fetch-ahead", "--pipeline=on"]),
        "Behaviour: custom; differences from PostgreSQL 15: fetch_ahead, pipeline"
    );
    assert_eq!(
        run(&[
            "--behaviour=improved",
            "--fetch-ahead=off",
            "--pipelined-setup=0",
            "--parallel-commit=false",
            "--parallel-close=off"
        ]),
        "Behaviour: custom; differences from PostgreSQL 15: pipeline, fifo_results, async_merge_append, \
         async_through_nodes"
    );
}

#[test]
fn help_documents_every_knob_and_the_queries_bound() {
    let (code, out, _) = pgasync(&["--help"]);
    assert_eq!(code, 0);
    for spec in pgasync::knobs::SPECS {
        assert!(out.contains(&format!("--{}", spec.cli)), "--{} missing from usage:\n{out}", spec.cli);
    }
    for info in pgasync::behaviour::KNOBS {
        let what = info.reason.split(';').next().unwrap();
        assert!(out.contains(what), "{} reason missing", info.name);
    }
    assert!(out.contains("--queries N (1 to 1000, default 20)"), "{out}");
    assert!(out.contains("--shards N") && out.contains("(1 to 64)"), "{out}");
    assert!(!out.contains("pipelined|") && !out.contains("|pipelined"), "{out}");
}

/// Exit code 2, one line, starting with `pgasync: ` and containing each `needles`.
fn refused(args: &[&str], needles: &[&str]) {
    let (code, out, err) = pgasync(args);
    assert_eq!(code, 2, "{args:?}: {out}{err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("pgasync: "), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err:?} does not contain {n:?}");
    }
}

#[test]
fn non_finite_numbers_are_refused_naming_the_flag() {
    let e = ["explain", "--scenario", "E"];
    refused(&[&e[..], &["--bandwidth-mbps", "NaN"]].concat(), &["--bandwidth-mbps NaN: not a finite number"]);
    refused(&[&e[..], &["--rtt-ms", "inf"]].concat(), &["--rtt-ms inf: not a finite number"]);
    refused(&[&e[..], &["--rtt-ms=-inf"]].concat(), &["--rtt-ms -inf: not a finite number"]);
    refused(&[&e[..], &["--rtt-ms", "1e999"]].concat(), &["--rtt-ms 1e999: not a finite number"]);
    refused(&["bench", "--rtt-ms", "nan"], &["--rtt-ms nan: not a finite number"]);
    refused(&[&e[..], &["--rtts", "1,NaN,1,1"]].concat(), &["--rtts 1,NaN,1,1", "not a finite number"]);
}

#[test]
fn integers_must_be_plain_decimal() {
    let e = ["explain", "--scenario", "E"];
    for bad in ["0x10", "1e3", "+5", " 5", "5.0", "5x"] {
        refused(&[&e[..], &["--shards", bad]].concat(), &[&format!("--shards {bad}: not a decimal integer")]);
    }
    refused(&[&e[..], &["--fetch-size", "abc"]].concat(), &["--fetch-size abc: not a decimal integer"]);
    refused(&["bench", "--queries", "1e3"], &["--queries 1e3: not a decimal integer"]);
}

#[test]
fn every_knob_is_range_checked_with_its_range() {
    let e = ["explain", "--scenario", "M"];
    for (flag, v, range) in [
        ("--shards", "0", "(1 to 64)"),
        ("--shards", "65", "(1 to 64)"),
        ("--rows", "10000001", "(0 to 10000000)"),
        ("--fetch-size", "0", "(1 to 1000000)"),
        ("--rtt-ms", "-1", "(0 to 10000)"),
        ("--rtt-ms", "10001", "(0 to 10000)"),
        ("--bandwidth-mbps", "0", "(0.001 to 1000000)"),
        ("--server-row-us", "-0.5", "(0 to 1000000)"),
        ("--offset", "1000001", "(0 to 1000000)"),
        ("--limit", "0", "(1 to 1000000)"),
        ("--rtts", "1,2,3,99999", "(0 to 10000)"),
    ] {
        refused(&[&e[..], &[flag, v]].concat(), &[&format!("{flag} {v}: out of range {range}")]);
    }
    refused(&["bench", "--queries", "0"], &["--queries 0: out of range (1 to 1000)"]);
    refused(&["bench", "--queries", "1001"], &["--queries 1001: out of range (1 to 1000)"]);
}

#[test]
fn per_shard_lists_need_one_value_per_shard() {
    refused(
        &["explain", "--scenario", "E", "--rtts", "1,2,3"],
        &["--rtts 1,2,3: 3 values for 4 shards (the scenario's default); give exactly one per shard"],
    );
    refused(
        &["explain", "--scenario", "E", "--shards", "2", "--rtts", "1,2,3"],
        &["--rtts 1,2,3: 3 values for 2 shards; give exactly one per shard"],
    );
    refused(&["explain", "--scenario", "E", "--rtts", "1,,2,3"], &["--rtts 1,,2,3: \"\" is not a number"]);
    refused(
        &["bench", "--scenarios", "E,C", "--rtts", "1,2,3,4"],
        &["scenario C: --rtts 1,2,3,4: 4 values for 1 shards"],
    );
    let (code, out, err) = pgasync(&["explain", "--scenario", "E", "--rows", "100", "--rtts", "1,2,3,4"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn unknown_and_repeated_flags_and_bad_choices_are_refused_by_name() {
    refused(&["explain", "--scenario", "E", "--bogus", "1"], &["unknown option --bogus"]);
    refused(&["bench", "--offset", "3"], &["unknown option --offset"]);
    refused(&["explain", "--scenario", "E", "--shards", "2", "--shards", "3"], &["--shards is given twice"]);
    refused(
        &["explain", "--scenario", "E", "--sharing", "pipelined"],
        &["--sharing pipelined", "behaviour knob \"pipeline\""],
    );
    refused(&["explain", "--scenario", "E", "--behaviour", "pg16"], &["--behaviour pg16: not pg15 or improved"]);
    refused(&["explain", "--scenario", "E", "--fetch-ahead=maybe"], &["--fetch-ahead maybe: not on or off"]);
    refused(
        &["explain", "--scenario", "E", "--fetch-ahead", "off"],
        &["unexpected argument \"off\"", "--fetch-ahead=off"],
    );
    refused(&["explain", "--scenario", "E", "--mode", "fast"], &["--mode fast: not one of sync, async"]);
    refused(&["bench", "--scenarios", "A,Q"], &["--scenarios: unknown scenario \"Q\""]);
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

/// The page's Export menu (`ExportJob::for_page`, knobs as the page sends them, JSON)
/// writes the bytes `pgasync trace` prints for the same scenario and knobs.
#[test]
fn the_pages_export_is_the_trace_commands_output() {
    use pgasync::demo::export::{ExportJob, Format};
    let runs: [(&str, bool, &str, &[&str]); 3] = [
        ("E", true, r#"{"rows_per_shard": "300", "fetch_size": "100"}"#, &["--rows", "300", "--fetch-size", "100"]),
        (
            "D",
            false,
            r#"{"rows_per_shard": "200", "fetch_size": "50", "shards": "3", "behaviour": "improved"}"#,
            &["--rows", "200", "--fetch-size", "50", "--shards", "3", "--behaviour", "improved"],
        ),
        (
            "M",
            true,
            r#"{"rows_per_shard": "300", "async_merge_append": "1"}"#,
            &["--rows", "300", "--async-merge-append"],
        ),
    ];
    for (id, async_mode, knobs, flags) in runs {
        let knobs = pgasync::knobs::from_json(knobs).unwrap();
        for format in Format::ALL {
            let page = ExportJob::for_page(id, &knobs, async_mode, format).unwrap().finish().unwrap();
            let mode = if async_mode { "async" } else { "sync" };
            let mut args = vec!["trace", "--scenario", id, "--mode", mode, "--format", format.name()];
            args.extend_from_slice(flags);
            let (code, cli, err) = pgasync(&args);
            assert_eq!(code, 0, "{args:?}: {err}");
            assert!(page == cli, "{id} {mode} {format:?}: the page's {} B, the CLI's {} B", page.len(), cli.len());
        }
    }
}

#[test]
fn trace_exports_json_csv_svg_and_explain() {
    let (code, json, err) = pgasync(&["trace", "--scenario", "E", "--rows", "200"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("trace JSON parses");
    assert_eq!(v["connections"].as_array().unwrap().len(), 4);
    let events = v["events"].as_array().unwrap();
    assert!(events.iter().any(|e| e["kind"] == "Request" && e["to"] == "CallbackPending"), "no request events");
    let (code, csv, _) = pgasync(&["trace", "--scenario", "E", "--rows", "200", "--format", "csv"]);
    assert_eq!(code, 0);
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("time_ms,kind,connection"));
    // A record per event; postgres_fdw's DECLARE holds a newline, quoted in its field.
    let records = lines.filter(|l| l.starts_with(|c: char| c.is_ascii_digit())).count();
    assert_eq!(records, events.len(), "one CSV record per event");
    assert!(csv.contains("\"DECLARE c1 CURSOR FOR\nSELECT a FROM public.t1\""), "multi-line SQL is quoted");
    assert!(csv.contains(",send,s2,") && csv.contains("FETCH 100 FROM c"), "{}", &csv[..300.min(csv.len())]);
    let (code, svg, _) = pgasync(&["trace", "--scenario", "E", "--rows", "200", "--format", "svg"]);
    assert_eq!(code, 0);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("conn s4") && svg.contains("request 3: Async Foreign Scan on ft4"));
    let (code, text, _) =
        pgasync(&["trace", "--scenario", "E", "--rows", "200", "--format", "explain-text", "--mode", "sync"]);
    assert_eq!(code, 0);
    assert!(text.contains("->  Foreign Scan on public.ft1") && !text.contains("Async"), "{text}");
    let (code, _, err) = pgasync(&["trace"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--scenario ID or --file F"), "{err}");
}

#[test]
fn sql_runs_a_scenario_file_and_reports_errors_at_their_line() {
    let dir = std::env::temp_dir().join(format!("pgasync-cli-sql-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.sql");
    std::fs::write(
        &good,
        "-- @shard s1\ncreate table t (a int);\ninsert into t select i from generate_series(1, 10) i;\n-- @coordinator\n\
         create server s1 foreign data wrapper postgres_fdw options (async_capable 'true');\n\
         create foreign table ft (a int) server s1 options (table_name 't');\n-- @query\nselect sum(a) from ft;\n",
    )
    .unwrap();
    let (code, out, err) = pgasync(&["sql", "--file", good.to_str().unwrap(), "--log", "off"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Relations: Aggregate on (public.ft)") && out.contains("\n55\n"), "{out}");
    let bad = dir.join("bad.sql");
    std::fs::write(&bad, "create table t (a int);\n-- @query\nselect b from t;\n").unwrap();
    let (code, _, err) = pgasync(&["sql", "--file", bad.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("bad.sql:3:8: column \"b\" does not exist"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A query written as EXPLAIN prints as PostgreSQL prints it: without ANALYZE the plan
/// only (no actual figures, no rows, no Execution Time), with ANALYZE its options and
/// (COSTS, PostgreSQL's default) the estimates; an option error is given at its place.
#[test]
fn sql_prints_an_explain_query_as_postgres_runs_it() {
    let dir = std::env::temp_dir().join(format!("pgasync-cli-sql-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let setup = "-- @shard s1\ncreate table t (a int);\ninsert into t select i from generate_series(1, 10) i;\n\
                 -- @coordinator\ncreate server s1 foreign data wrapper postgres_fdw options (async_capable 'true');\n\
                 create foreign table ft (a int) server s1 options (table_name 't');\nset jit = off;\n-- @query\n";
    let run = |query: &str, extra: &[&str]| {
        let f = dir.join("q.sql");
        std::fs::write(&f, format!("{setup}{query}\n")).unwrap();
        let mut args = vec!["sql", "--file", f.to_str().unwrap(), "--log", "off"];
        args.extend_from_slice(extra);
        pgasync(&args)
    };
    let (code, out, err) = run("explain (costs off, settings, summary) select a from ft where a > 3;", &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "Foreign Scan on ft\nSettings: jit = 'off'\nPlanning Time: 0.000 ms\n");
    let (code, out, err) = run("explain (costs off, settings) select a from ft;", &["--mode", "sync"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "Foreign Scan on ft\nSettings: enable_async_append = 'off', jit = 'off'\n");
    let (code, out, err) = run("explain (verbose, costs off, format json) select a from ft;", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"Remote SQL\": \"SELECT a FROM public.t\"") && !out.contains("Actual"), "{out}");
    let (code, out, err) = run("explain (analyze, costs off, timing off, summary off) select a from ft;", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Foreign Scan on ft (actual rows=10 loops=1)\na\n1\n"), "{out}");
    // COSTS, PostgreSQL's default: postgres_fdw's estimate for a table never analyzed
    // (10 pages, 81920 / (4 + 24) rows), then the actual figures.
    let (code, out, err) = run("\n  explain analyze select a from ft;", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Foreign Scan on ft  (cost=100.00..197.75 rows=2925 width=4) (actual time="), "{out}");
    // A plain SELECT: EXPLAIN (ANALYZE, VERBOSE) with the estimates unless --costs off;
    // --costs with an EXPLAIN query is refused (its own COSTS says).
    let (code, out, err) = run("select a from ft;", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("Foreign Scan on public.ft  (cost=100.00..197.75 rows=2925 width=4) (actual time="),
        "{out}"
    );
    let (code, out, err) = run("select a from ft;", &["--costs", "off"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Foreign Scan on public.ft (actual time="), "{out}");
    let (code, _, err) = run("explain analyze select a from ft;", &["--costs", "off"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--costs off: ") && err.contains("q.sql:9:1: the query is an EXPLAIN"), "{err}");
    let (code, _, err) = run("explain (costs off, timing) select a from ft;", &[]);
    assert_eq!(code, 1);
    assert!(err.contains("q.sql:9:1: EXPLAIN option TIMING requires ANALYZE"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every command answers `--help`, `-h` and `pgasync help CMD` on stdout with exit 0,
/// listing its own flags; knob flags show the knob table's range and default.
#[test]
fn every_command_has_its_own_help() {
    let (code, out, err) = pgasync(&["relay", "--help"]);
    assert_eq!(code, 0, "{err}");
    for flag in ["--config <FILE>", "--target <NAME=HOST:PORT>", "--tls-cert <FILE>", "--allow-host <NAME>"] {
        assert!(out.contains(flag), "{flag} missing from relay --help:\n{out}");
    }
    assert!(out.contains("Usage: pgasync relay [--config FILE]"), "{out}");
    let (code, out, _) = pgasync(&["sql", "-h"]);
    assert_eq!(code, 0);
    assert!(out.contains("--file <F>") && out.contains("--log <on|off>") && out.contains("--fetch-size <N>"), "{out}");
    let (code, out, _) = pgasync(&["help", "bench"]);
    assert_eq!(code, 0);
    assert!(out.contains("--queries <N>") && out.contains("(1 to 1000) [default: 20]"), "{out}");
    assert!(out.contains("--delay-ms") && !out.contains("--offset <N>"), "bench takes no --offset: {out}");
    // A knob's range and default, from pgasync::knobs::SPECS.
    let (code, out, _) = pgasync(&["explain", "--help"]);
    assert_eq!(code, 0);
    let spec = pgasync::knobs::spec(pgasync::knobs::Source::Cli, "fetch-size").unwrap();
    let pgasync::knobs::Kind::Int { lo, hi } = spec.kind else { panic!("fetch size is an integer") };
    let default = pgasync::knobs::DEFAULT_FETCH_SIZE;
    assert!(out.contains(&format!("{} ({lo} to {hi}) [default: {default}]", spec.help)), "{out}");
    assert!(out.contains("--fetch-ahead[=<on|off>]") && out.contains("[default: off (pg15)]"), "{out}");
    for cmd in ["explain", "bench", "sql", "trace", "calibrate", "serve", "demo", "relay", "completions"] {
        for help in [&[cmd, "--help"][..], &[cmd, "-h"], &["help", cmd]] {
            let (code, out, err) = pgasync(help);
            assert_eq!(code, 0, "{help:?}: {err}");
            assert!(out.contains(&format!("Usage: pgasync {cmd}")), "{help:?}: {out}");
        }
    }
    // The top-level help lists every command.
    let (_, out, _) = pgasync(&["-h"]);
    for cmd in ["explain", "bench", "sql", "trace", "calibrate", "serve", "demo", "relay", "completions", "help"] {
        assert!(out.contains(&format!("\n  {cmd} ")), "{cmd} missing from pgasync -h:\n{out}");
    }
}

#[test]
fn a_misspelt_flag_or_command_gets_a_suggestion_on_one_line() {
    refused(
        &["explain", "--scenario", "E", "--fetch-szie", "100"],
        &["unknown option --fetch-szie", "a similar argument exists: '--fetch-size'"],
    );
    refused(&["relay", "--tls-crt", "c.pem"], &["unknown option --tls-crt", "'--tls-cert'"]);
    refused(&["bnech"], &["unknown command \"bnech\"", "a similar command exists: 'bench'"]);
    refused(&["sql", "--file"], &["--file needs a value"]);
    refused(&["relay", "--port", "1", "--port", "2"], &["--port is given twice"]);
    refused(&["bench", "--runs", "2"], &["--runs is bench --live's"]);
    refused(&["bench", "--live", "--shards", "2"], &["--shards is not bench --live's"]);
    refused(&["completions", "tcsh"], &["completions tcsh: not one of bash"]);
}

#[test]
fn completions_for_bash_zsh_and_fish() {
    for (shell, needle) in [("bash", "_pgasync()"), ("zsh", "#compdef pgasync"), ("fish", "complete -c pgasync")] {
        let (code, out, err) = pgasync(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains(needle), "{shell}: {}", &out[..200.min(out.len())]);
        assert!(out.contains("fetch-size") && out.contains("allow-origin"), "{shell}: knob and relay flags");
    }
}
