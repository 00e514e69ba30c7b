//! The relay's configuration, read once at start: its targets (`[targets.NAME]` in the
//! TOML file, `--target NAME=HOST:PORT`, `--delay NAME=20ms`) and `[sql_load]`.
//! `pgasync demo` writes the file; the CLI's `--live` runs and `calibrate --config`
//! read the same one, so a target means the same everywhere.
//!
//! # Invariants
//! * A bad entry is an error at start naming the file, the target and the field: TLS
//!   configurations are built and passwords read here, never at a client's first
//!   connection.
//! * Names (targets, roles, databases) are plain (letters, digits, `_`, `-`): the relay
//!   compares them byte for byte, with no quoting to get wrong.
//! * A password file others may read is refused, as libpq refuses such a `.pgpass`;
//!   passwords are never printed (`gateway::Secret`).
//!
//! PostgreSQL has no counterpart to the relay; a target's fields take libpq's names and
//! meanings where libpq has them (`tls` as `sslmode`, the password file as `.pgpass`).

use crate::gateway::{self, Access, Secret, Upstream};
use crate::tls::{self, TlsMode};
use crate::CliError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The largest `--delay`.
const MAX_DELAY: Duration = Duration::from_secs(10);

/// One configured server.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    /// `host:port`, resolved at each connect.
    pub(crate) addr: String,
    /// Added to each round trip (half each way).
    pub(crate) delay: Duration,
    /// The one role (and its databases) a client may open through this target.
    pub(crate) access: Access,
    /// TLS and the password the relay authenticates with on the client's behalf.
    pub(crate) upstream: Upstream,
}

impl Target {
    /// Whether a native client (the CLI's `--live`) needs the loopback gateway to open it.
    pub(crate) fn needs_gateway(&self) -> bool {
        self.upstream.tls != TlsMode::Disable || self.upstream.password.is_some()
    }

    pub(crate) fn local(&self) -> gateway::LocalTarget {
        gateway::LocalTarget { addr: self.addr.clone(), access: self.access.clone(), upstream: self.upstream.clone() }
    }

    /// A `--target NAME=HOST:PORT`: the sandbox's read-only role, any database, no TLS,
    /// no password.
    fn plain(addr: String) -> Target {
        let access = Access { user: pgasync::remote::USER.to_string(), databases: None };
        Target { addr, delay: Duration::ZERO, access, upstream: Upstream::plain() }
    }
}

/// The relay's configuration file: `[targets.NAME]` tables, and `[sql_load]` (see
/// [`sql_load`]: the page's scenario files loaded into local targets; `pgasync demo`
/// writes it for its own clusters).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    targets: BTreeMap<String, FileTarget>,
    #[serde(default)]
    sql_load: Option<SqlLoadConfig>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FileTarget {
    addr: String,
    /// Like `--delay`: `"20ms"`.
    #[serde(default)]
    delay: Option<String>,
    /// The role clients log in as (default: the sandbox's read-only role `pgasync`).
    #[serde(default)]
    user: Option<String>,
    /// The databases they may open (default: any the role may connect to).
    #[serde(default)]
    databases: Option<Vec<String>>,
    /// `disable` (default), `require` or `verify-full`, as libpq's `sslmode`.
    #[serde(default)]
    tls: Option<TlsMode>,
    /// PEM roots for `verify-full` (default: the bundled Mozilla roots).
    #[serde(default)]
    ca_file: Option<PathBuf>,
    /// The environment variable holding the role's password.
    #[serde(default)]
    password_env: Option<String>,
    /// A file (readable by its owner only) holding the role's password.
    #[serde(default)]
    password_file: Option<PathBuf>,
}

impl FileTarget {
    /// The target this entry describes, with its TLS configuration built and its
    /// password read now (so a bad entry stops the relay at start, naming itself).
    fn resolve(self, path: &str, name: &str) -> Result<Target, CliError> {
        let bad = |e: String| CliError::Usage(format!("--config {path}: targets.{name}: {e}"));
        let delay = self.delay.as_deref().map(parse_delay).transpose().map_err(|e| bad(format!("delay: {e}")))?;
        let user = self.user.unwrap_or_else(|| pgasync::remote::USER.to_string());
        if !plain_name(&user) {
            return Err(bad(format!("user \"{user}\": a plain role name is expected")));
        }
        if let Some(db) = self.databases.iter().flatten().find(|d| !plain_name(d.strip_suffix('*').unwrap_or(d))) {
            return Err(bad(format!("databases: \"{db}\" is not a plain database name")));
        }
        let tls = self.tls.unwrap_or(TlsMode::Disable);
        if self.ca_file.is_some() && tls != TlsMode::VerifyFull {
            return Err(bad("ca_file is used with tls = \"verify-full\" only".into()));
        }
        let tls_config = tls::client_config(tls, self.ca_file.as_deref()).map_err(bad)?;
        let password = match (self.password_env, self.password_file) {
            (Some(_), Some(_)) => return Err(bad("give password_env or password_file, not both".into())),
            (Some(var), None) => {
                Some(std::env::var(&var).map_err(|_| bad(format!("password_env: ${var} is not set")))?)
            }
            (None, Some(file)) => Some(read_password(&file).map_err(bad)?),
            (None, None) => None,
        };
        let upstream = Upstream { tls, tls_config, password: password.map(Secret) };
        let access = Access { user, databases: self.databases };
        Ok(Target { addr: checked_addr(&self.addr)?, delay: delay.unwrap_or_default(), access, upstream })
    }
}

/// A role or database name the relay compares byte for byte: no quoting games.
fn plain_name(n: &str) -> bool {
    !n.is_empty() && n.len() <= 63 && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A password file: its first line. Refused when others may read it, as libpq refuses
/// such a `.pgpass`.
pub(crate) fn read_password(file: &Path) -> Result<String, String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(file).map_err(|e| format!("password_file {}: {e}", file.display()))?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!("password_file {}: others may read it (chmod 600 it)", file.display()));
    }
    let text = crate::input::read_text(&file.display().to_string(), "a password file", 4096)
        .map_err(|e| format!("password_file {}: {e}", file.display()))?;
    let line = text.lines().next().unwrap_or("").to_string();
    if line.is_empty() {
        return Err(format!("password_file {}: empty", file.display()));
    }
    Ok(line)
}

/// The targets of `--config` and `--target` (a flag replaces the file's entry of the
/// same name), with `--delay` applied.
pub(crate) fn targets_from(
    config: Option<&str>,
    flags: &[String],
    delays: &[String],
) -> Result<BTreeMap<String, Target>, CliError> {
    let mut targets = BTreeMap::new();
    if let Some(path) = config {
        let file = read_config(path)?;
        for (name, t) in file.targets {
            let target = t.resolve(path, &name)?;
            targets.insert(checked_name(&name)?, target);
        }
    }
    for f in flags {
        let (name, addr) =
            f.split_once('=').ok_or_else(|| CliError::Usage(format!("--target {f}: expected NAME=HOST:PORT")))?;
        targets.insert(checked_name(name)?, Target::plain(checked_addr(addr)?));
    }
    for d in delays {
        let (name, value) =
            d.split_once('=').ok_or_else(|| CliError::Usage(format!("--delay {d}: expected NAME=20ms")))?;
        let t =
            targets.get_mut(name).ok_or_else(|| CliError::Usage(format!("--delay {d}: no target named \"{name}\"")))?;
        t.delay = parse_delay(value).map_err(|e| CliError::Usage(format!("--delay {d}: {e}")))?;
    }
    Ok(targets)
}

fn read_config(path: &str) -> Result<FileConfig, CliError> {
    let text = crate::input::read_text(path, "a relay configuration", crate::input::CONFIG_BYTES)
        .map_err(|e| CliError::Usage(format!("--config {path}: {e}")))?;
    toml::from_str(&text).map_err(|e| CliError::Usage(format!("--config {path}: {e}")))
}

/// The configuration file's `[sql_load]`, if any (then `POST /sql/load` works).
pub(crate) fn sql_load_from(config: Option<&str>) -> Result<Option<SqlLoadConfig>, CliError> {
    let Some(path) = config else { return Ok(None) };
    let Some(c) = read_config(path)?.sql_load else { return Ok(None) };
    let plain = !c.superuser.is_empty() && c.superuser.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !plain || c.max_databases == 0 || c.timeout_ms == 0 {
        return Err(CliError::Usage(format!(
            "--config {path}: sql_load: superuser must be a plain role name, max_databases and timeout_ms at least 1"
        )));
    }
    Ok(Some(c))
}

/// A target name: what may follow `/shard/` in a URL path as it is.
fn checked_name(name: &str) -> Result<String, CliError> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    ok.then(|| name.to_string())
        .ok_or_else(|| CliError::Usage(format!("target name \"{name}\": use 1 to 63 letters, digits, _ or -")))
}

/// `host:port` or `[v6]:port`.
fn checked_addr(addr: &str) -> Result<String, CliError> {
    let port = addr.rsplit_once(':').map(|(h, p)| (h, p.parse::<u16>()));
    match port {
        Some((host, Ok(p))) if !host.is_empty() && p > 0 => Ok(addr.to_string()),
        _ => Err(CliError::Usage(format!("target address \"{addr}\": expected HOST:PORT"))),
    }
}

/// `20ms`, `1.5ms`, `500us`, `2s` or `0`; at most [`MAX_DELAY`].
fn parse_delay(text: &str) -> Result<Duration, String> {
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (num, unit) = text.split_at(split);
    let plain = !num.is_empty() && num.matches('.').count() <= 1 && !num.starts_with('.') && !num.ends_with('.');
    let value: f64 = num.parse().ok().filter(|_| plain).ok_or_else(|| format!("\"{text}\" is not a duration"))?;
    let scale = match unit {
        "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "" if value == 0.0 => 0.0,
        _ => return Err(format!("\"{text}\": give a unit: us, ms or s")),
    };
    let d = Duration::from_secs_f64(value * scale);
    if d > MAX_DELAY {
        return Err(format!("\"{text}\" is above {MAX_DELAY:?}"));
    }
    Ok(d)
}

/// `[sql_load]` in the relay's configuration file (`pgasync demo` writes it).
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SqlLoadConfig {
    /// The role psql logs in as on the local targets.
    pub(crate) superuser: String,
    /// Its pgpass file (`PGPASSFILE`; `pgasync demo` writes one only its owner may
    /// read): the superuser's password stays in the relay's process and psql's.
    #[serde(default)]
    pub(crate) passfile: Option<std::path::PathBuf>,
    #[serde(default = "default_max_databases")]
    pub(crate) max_databases: usize,
    #[serde(default = "default_timeout_ms")]
    pub(crate) timeout_ms: u64,
}

fn default_max_databases() -> usize {
    8
}

fn default_timeout_ms() -> u64 {
    60_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays() {
        assert_eq!(parse_delay("20ms"), Ok(Duration::from_millis(20)));
        assert_eq!(parse_delay("1.5ms"), Ok(Duration::from_micros(1500)));
        assert_eq!(parse_delay("0"), Ok(Duration::ZERO));
        assert_eq!(parse_delay("2s"), Ok(Duration::from_secs(2)));
        for bad in ["", "ms", "20", "1e3ms", "-1ms", ".5ms", "11s", "20 ms", "1.2.3ms"] {
            assert!(parse_delay(bad).is_err(), "{bad}");
        }
    }
}
