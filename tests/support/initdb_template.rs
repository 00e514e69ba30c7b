//! `initdb` once, then copies: a template data directory for the tests' clusters.
//!
//! Every PostgreSQL-backed test starts clusters of its own, and `initdb` (bootstrap
//! mode, the catalogs, template1 and postgres, ~1 s of CPU each) was most of a
//! cluster's start-up. The data directory `initdb` writes depends only on the program
//! and its arguments, so it is made once per machine and copied (`cp -a`, ~0.1 s) for
//! each cluster; the copy is what `initdb` would have written, except that every copy
//! shares the template's system identifier (pg_control), which nothing the tests do
//! reads (no replication between them), and that the zeros after the WAL segment's
//! records are holes (the same bytes read; less to copy).
//!
//! Invariants:
//! - the template lives in the system temp folder under a name made of the `initdb`
//!   program's path, size and modification time and of its arguments: another
//!   PostgreSQL, another option, another template;
//! - it appears complete or not at all: it is written in a folder of its own and renamed
//!   into place (rename is atomic; the loser of a race among test processes removes its
//!   copy and uses the winner's);
//! - one `initdb` per process at most for a given key (a lock around the check), so the
//!   tests of a binary, which run in parallel threads, do not all run it at once.
//!
//! Used by tests/support/pg.rs and cli/tests/support/pg.rs (included there by path).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The arguments every test cluster is made with (after `-D DIR`).
pub const INITDB_ARGS: [&str; 8] = ["-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"];

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0\n")).unwrap_or(false)
}

/// Runs `program args` as the `postgres` user when we are root (the server's programs
/// refuse root), else as ourselves.
fn run_as_server_user(program: &Path, args: &[&str]) -> Result<(), String> {
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    let out = cmd.args(args).output().map_err(|e| format!("{} does not run: {e}", program.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} {args:?} failed: {}{}",
            program.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A folder the server's user may write into.
fn make_server_owned_dir(path: &Path) -> Result<(), String> {
    std::fs::create_dir_all(path).map_err(|e| format!("mkdir {path:?}: {e}"))?;
    if is_root() {
        let ok = Command::new("chown").args(["postgres:postgres"]).arg(path).status().is_ok_and(|s| s.success());
        if !ok {
            return Err(format!("chown postgres {path:?} (is there a `postgres` user?)"));
        }
    }
    Ok(())
}

/// The template's folder name for this `initdb` program and these arguments.
fn template_key(initdb: &Path, args: &[&str]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    initdb.hash(&mut h);
    if let Ok(m) = std::fs::metadata(initdb) {
        m.len().hash(&mut h);
        m.modified().ok().hash(&mut h);
    }
    args.hash(&mut h);
    format!("pgasync-initdb-template-{:016x}", h.finish())
}

/// The template data directory for `initdb args`, made if it is not there yet.
fn template(initdb: &Path, args: &[&str]) -> Result<PathBuf, String> {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let base = std::env::temp_dir().join(template_key(initdb, args));
    let data = base.join("data");
    if data.join("PG_VERSION").exists() {
        return Ok(data);
    }
    // Built aside, then renamed into place whole.
    let aside = std::env::temp_dir().join(format!("{}.new-{}", template_key(initdb, args), std::process::id()));
    let _ = std::fs::remove_dir_all(&aside);
    make_server_owned_dir(&aside)?;
    let aside_data = aside.join("data");
    let mut full = vec!["-D", aside_data.to_str().ok_or("temp folder path is not UTF-8")?];
    full.extend_from_slice(args);
    let made = run_as_server_user(initdb, &full).and_then(|()| wal_with_holes(&aside_data));
    if let Err(e) = made {
        let _ = std::fs::remove_dir_all(&aside);
        return Err(e);
    }
    if std::fs::rename(&aside, &base).is_err() {
        // Another process put its template there first: use that one.
        let _ = std::fs::remove_dir_all(&aside);
    }
    if data.join("PG_VERSION").exists() {
        Ok(data)
    } else {
        Err(format!("the initdb template {data:?} is not there after initdb"))
    }
}

/// Rewrites the WAL segments in `data` with holes where they hold zeros. `initdb`
/// leaves one 16 MB segment of ~5 MB of records and zeros after them (wal_init_zero);
/// the same bytes for every reader, but `cp -a` keeps holes, so each copy writes 27 MB,
/// not 39 (per copy, 20 each way: 0.066-0.071 s of system CPU on tmpfs, 0.075-0.078
/// without holes; 0.09-0.10 s on ext4, 0.13-0.35 without). `cp -a` keeps the owner
/// and mode.
fn wal_with_holes(data: &Path) -> Result<(), String> {
    let wal = data.join("pg_wal");
    let entries = std::fs::read_dir(&wal).map_err(|e| format!("{wal:?}: {e}"))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{wal:?}: {e}"))?.path();
        if !path.is_file() {
            continue;
        }
        let sparse = path.with_extension("sparse");
        let out = Command::new("cp")
            .args(["-a", "--sparse=always"])
            .arg(&path)
            .arg(&sparse)
            .output()
            .map_err(|e| format!("cp does not run: {e}"))?;
        if !out.status.success() {
            return Err(format!("cp --sparse=always {path:?}: {}", String::from_utf8_lossy(&out.stderr)));
        }
        std::fs::rename(&sparse, &path).map_err(|e| format!("{sparse:?} -> {path:?}: {e}"))?;
    }
    Ok(())
}

/// Makes `data` (which must not exist; its parent belongs to the server's user) the
/// data directory `initdb -D data INITDB_ARGS` would make: a copy of the template.
pub fn init_data_dir(initdb: &Path, data: &Path) -> Result<(), String> {
    let template = template(initdb, &INITDB_ARGS)?;
    // `cp -a` keeps the owner (the server's user) and the modes PostgreSQL checks
    // (0700 on the folder).
    let out =
        Command::new("cp").arg("-a").arg(&template).arg(data).output().map_err(|e| format!("cp does not run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("cp -a {template:?} {data:?} failed: {}", String::from_utf8_lossy(&out.stderr)))
    }
}
