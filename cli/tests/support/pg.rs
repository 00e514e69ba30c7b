//! A PostgreSQL cluster for a test: initdb into a temporary folder, started on a free
//! port (as the `postgres` user when we are root: the server refuses root), trust
//! authentication for `postgres` on 127.0.0.1; stopped and removed on drop.
#![allow(dead_code)] // each test file uses its own part of the support module

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn pg_bin() -> PathBuf {
    std::env::var("PGASYNC_PG_BIN").map(PathBuf::from).unwrap_or_else(|_| PathBuf::from("/usr/lib/postgresql/15/bin"))
}

/// PostgreSQL's own psql, from [`pg_bin`], not Debian's pg_wrapper (/usr/bin/psql): why,
/// in the root crate's tests/support/pg.rs (`psql_bin`) and `pgasync demo`'s
/// `psql_program`.
pub fn psql() -> PathBuf {
    let psql = pg_bin().join("psql");
    if !psql.exists() {
        panic!("no psql in {}: install Debian's postgresql-client of that version", pg_bin().display());
    }
    psql
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Runs a server program, as `postgres` when we are root.
fn run(program: &str, args: &[&str]) -> std::process::Output {
    let bin = pg_bin().join(program);
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(&bin);
        c
    } else {
        Command::new(&bin)
    };
    cmd.args(args).output().unwrap_or_else(|e| panic!("{} does not run: {e}", bin.display()))
}

pub struct Cluster {
    pub name: String,
    pub port: u16,
    dir: PathBuf,
}

impl Cluster {
    pub fn start(name: &str) -> Cluster {
        Cluster::start_with(name, "")
    }

    /// A cluster with `extra_conf` appended to its postgresql.conf (e.g. more connections).
    pub fn start_with(name: &str, extra_conf: &str) -> Cluster {
        Cluster::start_custom(name, extra_conf, None, &[])
    }

    /// A cluster with `extra_conf`, its pg_hba.conf replaced by `hba` if given, and
    /// `files` (name, bytes) written into its data folder with mode 0600 (a TLS key and
    /// certificate), all before it starts.
    pub fn start_custom(name: &str, extra_conf: &str, hba: Option<&str>, files: &[(&str, &[u8])]) -> Cluster {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("pgasync-test-{name}-{}-{port}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        if is_root() {
            let ok = Command::new("chown").args(["postgres:postgres", dir.to_str().unwrap()]).status();
            assert!(ok.is_ok_and(|s| s.success()), "chown postgres {dir:?}");
        }
        let data = dir.join("data");
        let data_s = data.to_str().unwrap();
        // A copy of the data directory `initdb` makes (made once: initdb_template.rs).
        super::initdb_template::init_data_dir(&pg_bin().join("initdb"), &data).unwrap_or_else(|e| panic!("{e}"));
        let conf = format!(
            "\nport = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\nfsync = off\n\
             shared_buffers = 32MB\nautovacuum = off\n{extra_conf}\n",
            dir.display()
        );
        let mut f = std::fs::OpenOptions::new().append(true).open(data.join("postgresql.conf")).unwrap();
        f.write_all(conf.as_bytes()).unwrap();
        if let Some(hba) = hba {
            std::fs::write(data.join("pg_hba.conf"), hba).unwrap();
        }
        for (file, bytes) in files {
            use std::os::unix::fs::PermissionsExt;
            let path = data.join(file);
            std::fs::write(&path, bytes).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            if is_root() {
                let ok = Command::new("chown").args(["postgres:postgres", path.to_str().unwrap()]).status();
                assert!(ok.is_ok_and(|s| s.success()), "chown postgres {path:?}");
            }
        }
        let log = dir.join("log");
        let out = run("pg_ctl", &["-D", data_s, "-l", log.to_str().unwrap(), "-w", "-t", "60", "start"]);
        assert!(out.status.success(), "pg_ctl start: {}", String::from_utf8_lossy(&out.stderr));
        Cluster { name: name.to_string(), port, dir }
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// psql's unaligned, tuples-only output of `sql` in `db` as `user`, or its error.
    pub fn query(&self, user: &str, db: &str, sql: &str) -> Result<String, String> {
        let out = Command::new(psql())
            .args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", user, "-d", db, "-c", sql])
            .output()
            .expect("psql runs");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }

    /// The databases whose names start with `prefix`, sorted.
    pub fn databases(&self, prefix: &str) -> Vec<String> {
        let list = self.query("postgres", "postgres", "SELECT datname FROM pg_database ORDER BY 1").unwrap();
        list.lines().filter(|d| d.starts_with(prefix)).map(str::to_string).collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = run("pg_ctl", &["-D", data.to_str().unwrap(), "-m", "immediate", "-w", "stop"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The server's log so far.
pub fn log_of(c: &Cluster) -> String {
    std::fs::read_to_string(c.dir.join("log")).unwrap_or_default()
}

pub fn dir_of(c: &Cluster) -> &Path {
    &c.dir
}
