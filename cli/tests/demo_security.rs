//! A running `pgasync demo` (real PostgreSQL 15 clusters) probed as a hostile client
//! would: WebSocket clients speaking PostgreSQL's protocol through the relay with
//! startups the page never sends, the read-only role trying what a superuser may, and
//! plain TCP to the clusters without the demo's password.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock, Weak};

mod support;
use support::demo::DemoProcess;
use support::pgws::PgWs;
use support::postgres_installed;

/// The demo the tests share: started by the first, stopped by the last.
fn demo() -> Option<Arc<DemoProcess>> {
    if !postgres_installed() {
        eprintln!("skipped: PostgreSQL is not installed");
        return None;
    }
    static SHARED: OnceLock<Mutex<Weak<DemoProcess>>> = OnceLock::new();
    let mut slot = SHARED.get_or_init(|| Mutex::new(Weak::new())).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = slot.upgrade() {
        return Some(d);
    }
    let dir = std::env::temp_dir().join(format!("pgasync-security-{}", std::process::id()));
    let d = Arc::new(DemoProcess::start(&dir, 300));
    *slot = Arc::downgrade(&d);
    Some(d)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

#[test]
fn startups_beyond_the_read_only_role_are_refused_before_the_server() {
    let Some(d) = demo() else { return };
    let cases: [(&[(&str, &str)], &str, &str); 7] = [
        (&[("user", "postgres"), ("database", "postgres")], "28000", "role \"postgres\""),
        (&[("user", "postgres"), ("database", "e")], "28000", "role \"postgres\""),
        (&[("user", "pgasync"), ("database", "postgres")], "3D000", "database \"postgres\""),
        (&[("user", "pgasync"), ("database", "template1")], "3D000", "database \"template1\""),
        (&[("user", "pgasync"), ("database", "e"), ("replication", "database")], "28000", "replication"),
        (
            &[("user", "pgasync"), ("database", "e"), ("options", "-c default_transaction_read_only=off")],
            "28000",
            "\"options\"",
        ),
        (
            &[("user", "pgasync"), ("database", "e"), ("session_replication_role", "replica")],
            "28000",
            "\"session_replication_role\"",
        ),
    ];
    runtime().block_on(async {
        for target in ["s1", "coordinator"] {
            for (params, code, words) in cases {
                let err = PgWs::login(&d.url(target), params)
                    .await
                    .err()
                    .unwrap_or_else(|| panic!("{target} {params:?} was let in"));
                assert_eq!(err.0, code, "{target} {params:?}: {err:?}");
                assert!(err.1.contains(words), "{target} {params:?}: {err:?}");
            }
            // The page's own startup still works.
            let mut c =
                PgWs::login(&d.url(target), &[("user", "pgasync"), ("database", "e"), ("application_name", "t")])
                    .await
                    .unwrap_or_else(|e| panic!("{target}: the page's startup refused: {e:?}"));
            let rows = c.simple("SELECT current_user, current_database()").await.unwrap();
            assert_eq!(rows, vec![vec!["pgasync".to_string(), "e".to_string()]]);
        }
    });
    let log = d.log();
    assert!(log.contains("refused: role \"postgres\" is not permitted"), "the refusal is logged:\n{log}");
    // Nothing of those startups reached a server: no cluster logged a connection as postgres
    // from the relay (log_connections is off, so look at what the servers ran instead).
    let s1_log = std::fs::read_to_string(d.dir.join("s1.log")).unwrap_or_default();
    assert!(!s1_log.contains("default_transaction_read_only=off"), "the options startup reached s1");
}

#[test]
fn the_read_only_role_cannot_write_create_or_reach_the_machine() {
    let Some(d) = demo() else { return };
    let pwned = d.dir.join("pwned.txt");
    let attacks = [
        format!("COPY (SELECT 1) TO PROGRAM 'id > {}'", pwned.display()),
        "SELECT pg_read_file('/etc/passwd')".to_string(),
        "SELECT rolpassword FROM pg_authid".to_string(),
        "CREATE TABLE x (a int)".to_string(),
        "CREATE TEMP TABLE y (a int)".to_string(),
        "CREATE DATABASE z".to_string(),
        "ALTER ROLE pgasync SUPERUSER".to_string(),
        "CREATE ROLE intruder LOGIN".to_string(),
        "SELECT lo_import('/etc/passwd')".to_string(),
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity".to_string(),
        "SELECT pg_cancel_backend(pid) FROM pg_stat_activity".to_string(),
    ];
    runtime().block_on(async {
        for target in ["s1", "coordinator"] {
            let mut c = PgWs::login(&d.url(target), &[("user", "pgasync"), ("database", "e")]).await.unwrap();
            for sql in &attacks {
                let err = c.simple(sql).await.err().unwrap_or_else(|| panic!("{target}: `{sql}` succeeded"));
                assert_eq!(err.0, "42501", "{target}: `{sql}` failed otherwise: {err:?}");
            }
            // Writing to the scenario's own table (the coordinator's is foreign).
            let table = if target == "s1" { "t1" } else { "ft1" };
            let err = c.simple(&format!("DELETE FROM {table}")).await.unwrap_err();
            assert_eq!(err.0, "42501", "{target}: DELETE: {err:?}");
            assert!(c.simple(&format!("SELECT count(*) FROM {table}")).await.is_ok(), "{target}: reading works");
        }
    });
    assert!(!pwned.exists(), "COPY TO PROGRAM ran");
}

fn psql(port: u16, user: &str, passfile: Option<&Path>) -> std::process::Output {
    let mut cmd = Command::new(support::pg::psql());
    cmd.args(["-X", "-w", "-A", "-t", "-h", "127.0.0.1", "-p", &port.to_string(), "-U", user, "-d", "postgres"])
        .args(["-c", "SELECT current_user"])
        .env_remove("PGPASSWORD")
        .env("PGCONNECT_TIMEOUT", "5");
    match passfile {
        Some(p) => cmd.env("PGPASSFILE", p),
        None => cmd.env("PGPASSFILE", "/nonexistent"),
    };
    cmd.output().expect("psql runs")
}

#[test]
fn the_superuser_needs_the_demos_password_even_on_loopback() {
    let Some(d) = demo() else { return };
    let passfile = d.dir.join("superuser.pgpass");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&passfile).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "the password file is private: {mode:o}");
    for name in ["s1", "s4", "coordinator"] {
        let port = d.target_port(name);
        let out = psql(port, "postgres", None);
        assert!(!out.status.success(), "{name}: postgres without a password got in");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("password"), "{name}: {err}");
        // A replication connection is refused whoever asks.
        let repl = Command::new(support::pg::psql())
            .args(["-X", "-w", "-c", "IDENTIFY_SYSTEM"])
            .arg(format!("host=127.0.0.1 port={port} user=pgasync dbname=e replication=database"))
            .output()
            .unwrap();
        assert!(!repl.status.success(), "{name}: a replication connection was accepted");
        // The demo's own tools, with the password file, do get in.
        let ok = psql(port, "postgres", Some(&passfile));
        assert!(ok.status.success(), "{name}: {}", String::from_utf8_lossy(&ok.stderr));
    }
    let toml = std::fs::read_to_string(d.dir.join("relay.toml")).unwrap();
    assert!(!toml.contains(&std::fs::read_to_string(&passfile).unwrap().trim().rsplit(':').next().unwrap().to_string()));
}
