//! `pgasync serve`: serves the demo page (`web/`) and the wasm package (`pkg/`) with
//! the bounded static-file service of `static_files` (regular files under those two
//! folders only, Host checking, size and time limits, connection caps). Loopback by
//! default; binding beyond loopback prints a warning. Ctrl-C shuts down gracefully.

use crate::args::Args;
use crate::static_files::{self, Config, HostCheck};
use crate::CliError;
use std::path::PathBuf;
use std::time::Duration;

pub fn run(argv: &[String]) -> Result<(), CliError> {
    let (argv, allow_hosts) = take_allow_hosts(argv)?;
    let a = Args::parse(
        &argv,
        &[
            "port",
            "bind",
            "root",
            "web",
            "pkg",
            "header-timeout-ms",
            "idle-timeout-ms",
            "max-connections",
            "max-per-client",
        ],
    )?;
    let port: u16 = a.num("port")?.unwrap_or(8080);
    let bind = a.get("bind").unwrap_or("127.0.0.1").to_string();
    let root = PathBuf::from(a.get("root").unwrap_or("."));
    let defaults = Config::default();
    let mut config = Config {
        web_root: a.get("web").map_or_else(|| root.join("web"), PathBuf::from),
        pkg_root: a.get("pkg").map_or_else(|| root.join("pkg"), PathBuf::from),
        header_timeout: millis(&a, "header-timeout-ms", defaults.header_timeout)?,
        idle_timeout: millis(&a, "idle-timeout-ms", defaults.idle_timeout)?,
        max_connections: positive(&a, "max-connections", defaults.max_connections)?,
        max_per_client: positive(&a, "max-per-client", defaults.max_per_client)?,
        ..defaults
    };
    if !config.web_root.join("index.html").is_file() {
        return Err(CliError::Usage(format!(
            "{}/index.html not found (run from the repository root or pass --root or --web)",
            config.web_root.display()
        )));
    }
    if !config.pkg_root.join("pgasync_bg.wasm").is_file() {
        return Err(CliError::Usage(format!(
            "{}/pgasync_bg.wasm not found: build it with `make pkg`",
            config.pkg_root.display()
        )));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(e.to_string()))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind((bind.as_str(), port))
            .await
            .map_err(|e| CliError::Failed(format!("cannot listen on {bind}:{port}: {e}")))?;
        let addr = listener.local_addr().map_err(|e| CliError::Failed(e.to_string()))?;
        let loopback = addr.ip().is_loopback();
        config.host_check =
            if loopback || !allow_hosts.is_empty() { HostCheck::Allow(allow_hosts.clone()) } else { HostCheck::Off };
        if !loopback {
            let hosts = if allow_hosts.is_empty() {
                "Host checking is off (pass --allow-host NAME to accept only localhost and the names you list)"
                    .to_string()
            } else {
                format!("Host checking accepts only localhost and {}", allow_hosts.join(", "))
            };
            eprintln!(
                "pgasync: warning: listening on {addr}, beyond loopback: anyone who can reach this \
                 machine on the network can read the demo page and every file under {} and {}. {hosts}.",
                config.web_root.display(),
                config.pkg_root.display()
            );
        }
        println!("pgasync serve: http://{addr}/  (Ctrl-C to stop)");
        static_files::serve(listener, config, async {
            let _ = tokio::signal::ctrl_c().await;
            println!("pgasync: shutting down");
        })
        .await
        .map_err(|e| CliError::Failed(e.to_string()))
    })
}

/// Splits the repeatable `--allow-host NAME` (or `--allow-host=NAME`) out of `argv`.
fn take_allow_hosts(argv: &[String]) -> Result<(Vec<String>, Vec<String>), CliError> {
    let (mut rest, mut hosts) = (Vec::new(), Vec::new());
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        let name = if a == "--allow-host" {
            it.next().ok_or_else(|| CliError::Usage("--allow-host needs a value".into()))?.clone()
        } else if let Some(v) = a.strip_prefix("--allow-host=") {
            v.to_string()
        } else {
            rest.push(a.clone());
            continue;
        };
        let plain = name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._[]:".contains(&b));
        if !plain || !static_files::host_allowed(&name, std::slice::from_ref(&name)) {
            return Err(CliError::Usage(format!("--allow-host: \"{name}\" is not a host name")));
        }
        hosts.push(name);
    }
    Ok((rest, hosts))
}

fn millis(a: &Args, name: &str, default: Duration) -> Result<Duration, CliError> {
    match a.num::<u64>(name)? {
        Some(0) => Err(CliError::Usage(format!("--{name} must be at least 1"))),
        Some(ms) => Ok(Duration::from_millis(ms)),
        None => Ok(default),
    }
}

fn positive(a: &Args, name: &str, default: usize) -> Result<usize, CliError> {
    match a.num::<usize>(name)? {
        Some(0) => Err(CliError::Usage(format!("--{name} must be at least 1"))),
        Some(n) => Ok(n),
        None => Ok(default),
    }
}
