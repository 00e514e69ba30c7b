//! What the CLI tests that start PostgreSQL clusters share.

pub mod certs;
pub mod demo;
#[path = "../../../tests/support/initdb_template.rs"]
pub mod initdb_template;
pub mod pg;
pub mod pgws;
pub mod relay;

use std::path::Path;
use std::process::Command;

/// Whether PostgreSQL's server binaries are installed (`make test`'s set-up installs
/// them; `PGASYNC_PG_BIN` names another bin directory).
#[allow(dead_code)] // not every test file checks
pub fn postgres_installed() -> bool {
    if let Ok(dir) = std::env::var("PGASYNC_PG_BIN") {
        return Path::new(&dir).join("initdb").exists();
    }
    std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().any(|e| e.path().join("bin/initdb").exists()))
        .unwrap_or(false)
}

/// Server processes whose command line names `dir` (each cluster's postmaster has
/// `-D dir/NAME`).
#[allow(dead_code)]
pub fn postgres_left(dir: &Path) -> Vec<String> {
    let out = Command::new("ps").args(["-eo", "pid,args"]).output().expect("ps runs");
    let needle = dir.display().to_string();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(&needle) && l.contains("postgres"))
        .map(str::to_string)
        .collect()
}

/// Stops, on drop, any PostgreSQL server still running from `dir`: a test that kills a
/// demo outright (its clusters left up on purpose) and then fails before the next demo
/// cleans them up must not leave them running. SIGQUIT is PostgreSQL's immediate
/// shutdown; the postmaster takes its backends down with it.
#[allow(dead_code)]
pub struct StopPostgresLeft(pub std::path::PathBuf);

impl Drop for StopPostgresLeft {
    fn drop(&mut self) {
        for line in postgres_left(&self.0) {
            if let Some(pid) = line.split_whitespace().next().and_then(|p| p.parse::<i32>().ok()) {
                unsafe {
                    libc::kill(pid, libc::SIGQUIT);
                }
            }
        }
    }
}
