//! Real remote shards: the relay in front of a PostgreSQL cluster configured as a
//! managed server is (`ssl = on` with a certificate the test makes, SCRAM-SHA-256 and
//! MD5 roles, TLS required by pg_hba), opening it on the browser's behalf. The browser
//! side still speaks trust authentication only; the credentials stay in the relay.
//! Certificates are made with the `openssl` command (support::certs).

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::certs::{make_ca, make_server_cert};
use support::pg::{log_of, Cluster};
use support::pgws::PgWs;
use support::postgres_installed;
use support::relay::RelayProcess;

const BIN: &str = env!("CARGO_BIN_EXE_pgasync");

/// Only TLS connections with a password, but for `postgres` on the Unix socket (the
/// test's own psql) and the plain-TCP line the `tls = disable` case is refused by.
const HBA: &str = "local all postgres trust\n\
host all postgres 127.0.0.1/32 trust\n\
hostssl all scram_user 127.0.0.1/32 scram-sha-256\n\
hostssl all md5_user 127.0.0.1/32 md5\n\
hostssl all pgasync 127.0.0.1/32 scram-sha-256\n";

struct Setup {
    dir: PathBuf,
    cluster: Cluster,
}

fn setup(test: &str) -> Option<Setup> {
    if !postgres_installed() {
        eprintln!("skipped: PostgreSQL is not installed");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("pgasync-tls-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    make_ca(&dir, "ca");
    make_ca(&dir, "other_ca");
    make_server_cert(&dir, "ca");
    let crt = std::fs::read(dir.join("server.crt")).unwrap();
    let key = std::fs::read(dir.join("server.key")).unwrap();
    let cluster = Cluster::start_custom(
        &format!("tls-{test}"),
        "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\npassword_encryption = 'scram-sha-256'\n\
         log_statement = 'all'\nlog_line_prefix = '%p|'\n",
        Some(HBA),
        &[("server.crt", &crt), ("server.key", &key)],
    );
    for sql in [
        "CREATE ROLE scram_user LOGIN PASSWORD 'scram-secret'",
        "SET password_encryption = 'md5'; CREATE ROLE md5_user LOGIN PASSWORD 'md5-secret'",
        "CREATE ROLE pgasync LOGIN PASSWORD 'reader-secret'",
    ] {
        cluster.query("postgres", "postgres", sql).unwrap();
    }
    Some(Setup { dir, cluster })
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A private password file.
fn password_file(dir: &Path, name: &str, password: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("{password}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

#[test]
fn tls_and_passwords_to_a_managed_style_server() {
    let Some(s) = setup("auth") else { return };
    let port = s.cluster.port;
    let d = s.dir.display();
    let right = password_file(&s.dir, "right.pw", "scram-secret");
    let wrong = password_file(&s.dir, "wrong.pw", "not-the-password");
    let config = format!(
        r#"
[targets.verified]
addr = "localhost:{port}"
user = "scram_user"
databases = ["postgres"]
tls = "verify-full"
ca_file = "{d}/ca.crt"
password_env = "PGASYNC_TEST_SCRAM"

[targets.required]
addr = "127.0.0.1:{port}"
user = "scram_user"
tls = "require"
password_file = "{right}"

[targets.md5]
addr = "127.0.0.1:{port}"
user = "md5_user"
tls = "require"
password_env = "PGASYNC_TEST_MD5"

[targets.wrong_ca]
addr = "localhost:{port}"
user = "scram_user"
tls = "verify-full"
ca_file = "{d}/other_ca.crt"
password_env = "PGASYNC_TEST_SCRAM"

[targets.wrong_host]
addr = "127.0.0.1:{port}"
user = "scram_user"
tls = "verify-full"
ca_file = "{d}/ca.crt"
password_env = "PGASYNC_TEST_SCRAM"

[targets.wrong_password]
addr = "localhost:{port}"
user = "scram_user"
tls = "verify-full"
ca_file = "{d}/ca.crt"
password_file = "{wrong}"

[targets.no_password]
addr = "localhost:{port}"
user = "scram_user"
tls = "verify-full"
ca_file = "{d}/ca.crt"

[targets.no_tls]
addr = "127.0.0.1:{port}"
user = "scram_user"
password_env = "PGASYNC_TEST_SCRAM"
"#,
        right = right.display(),
        wrong = wrong.display()
    );
    let config_path = s.dir.join("relay.toml");
    std::fs::write(&config_path, config).unwrap();
    std::env::set_var("PGASYNC_TEST_SCRAM", "scram-secret");
    std::env::set_var("PGASYNC_TEST_MD5", "md5-secret");
    let relay = RelayProcess::spawn(&["--config", config_path.to_str().unwrap()]);
    let url = |t: &str| format!("ws://127.0.0.1:{}/shard/{t}", relay.port);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        for (target, user) in [("verified", "scram_user"), ("required", "scram_user"), ("md5", "md5_user")] {
            let mut c = PgWs::login(&url(target), &[("user", user), ("database", "postgres")])
                .await
                .unwrap_or_else(|e| panic!("{target}: {e:?}\n{}", relay.log()));
            let rows = c.simple("SELECT current_user, ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").await;
            assert_eq!(rows.unwrap(), vec![vec![user.to_string(), "t".to_string()]], "{target}: a TLS session");
        }
        let refused = [
            ("wrong_ca", "08006", "TLS"),
            ("wrong_host", "08006", "TLS"),
            ("wrong_password", "28P01", "password authentication failed"),
            ("no_password", "28P01", "password_env or password_file"),
            ("no_tls", "28000", "no encryption"),
        ];
        for (target, code, words) in refused {
            let err = PgWs::login(&url(target), &[("user", "scram_user"), ("database", "postgres")])
                .await
                .err()
                .unwrap_or_else(|| panic!("{target} was let in"));
            assert_eq!(err.0, code, "{target}: {err:?}");
            assert!(err.1.contains(words), "{target}: {err:?}");
        }
    });
    let log = relay.log();
    for line in ["UnknownIssuer", "certificate not valid for name \"127.0.0.1\""] {
        assert!(log.contains(line), "the relay's log says why TLS failed ({line}):\n{log}");
    }
    for secret in ["scram-secret", "md5-secret", "not-the-password"] {
        assert!(!log.contains(secret), "a password in the relay's log:\n{log}");
    }
}

/// The shards' statements of `explain --live` runs of scenario E (sync and async),
/// per backend, in order: what the server received, with the cursor and session
/// details that legitimately differ masked out (none do today).
fn statements_of_run(cluster: &Cluster, config: &Path) -> Vec<Vec<String>> {
    let before = log_of(cluster).len();
    for mode in ["sync", "async"] {
        let out = Command::new(BIN)
            .args(["explain", "--scenario", "E", "--mode", mode, "--rows", "300"])
            .args(["--live", config.to_str().unwrap()])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "explain --live {mode}: {text}{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("reference matches"), "{mode}: {text}");
    }
    let log = log_of(cluster)[before..].to_string();
    let mut by_pid: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for line in log.lines() {
        let Some((pid, rest)) = line.split_once('|') else { continue };
        if let Some(stmt) = rest.split_once("LOG:  ").map(|(_, s)| s) {
            if stmt.starts_with("statement:") || stmt.starts_with("execute") {
                by_pid.entry(pid.to_string()).or_default().push(stmt.to_string());
            }
        }
    }
    let mut sessions: Vec<Vec<String>> = by_pid.into_values().collect();
    sessions.sort();
    sessions
}

#[test]
fn a_live_run_through_tls_and_scram_sends_what_it_sends_through_trust() {
    let Some(s) = setup("live") else { return };
    let trust = Cluster::start_with("tls-trust", "log_statement = 'all'\nlog_line_prefix = '%p|'\n");
    let sc = pgasync::scenario::Scenario::build(
        "E",
        &pgasync::knobs::Knobs { rows_per_shard: Some(300), ..Default::default() },
    )
    .unwrap();
    // Scenario E's four servers' tables, in database `e` of each cluster.
    for c in [&s.cluster, &trust] {
        if c.name == "tls-trust" {
            c.query("postgres", "postgres", "CREATE ROLE pgasync LOGIN").unwrap();
        }
        c.query("postgres", "postgres", "CREATE DATABASE e").unwrap();
        for spec in &sc.servers {
            let script = pgasync::sql_text::load::load_sql(&spec.catalog, "pgasync");
            let path = s.dir.join("load.sql");
            std::fs::write(&path, script).unwrap();
            let out = Command::new(support::pg::psql())
                .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-U", "postgres", "-d", "e"])
                .args(["-p", &c.port.to_string(), "-f", path.to_str().unwrap()])
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        }
    }
    let pw = password_file(&s.dir, "reader.pw", "reader-secret");
    let (mut tls_cfg, mut trust_cfg) = (String::new(), String::new());
    for spec in &sc.servers {
        let name = &spec.server.name;
        tls_cfg.push_str(&format!(
            "[targets.{name}]\naddr = \"localhost:{}\"\ntls = \"verify-full\"\nca_file = \"{}\"\npassword_file = \"{}\"\n",
            s.cluster.port,
            s.dir.join("ca.crt").display(),
            pw.display()
        ));
        trust_cfg.push_str(&format!("[targets.{name}]\naddr = \"127.0.0.1:{}\"\n", trust.port));
    }
    let (tls_path, trust_path) = (s.dir.join("tls.toml"), s.dir.join("trust.toml"));
    std::fs::write(&tls_path, tls_cfg).unwrap();
    std::fs::write(&trust_path, trust_cfg).unwrap();
    let through_tls = statements_of_run(&s.cluster, &tls_path);
    let through_trust = statements_of_run(&trust, &trust_path);
    assert_eq!(through_tls.len(), 2 * sc.servers.len(), "a backend per server per run: {through_tls:#?}");
    assert!(through_tls.iter().flatten().any(|st| st.contains("DECLARE c1 CURSOR")), "{through_tls:#?}");
    assert_eq!(through_tls, through_trust, "the same statements on every connection");
}
