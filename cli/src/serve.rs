//! `pgasync serve`: serves the demo page (`web/`) and the wasm package (`pkg/`) with
//! the bounded static-file service of `static_files` (regular files under those two
//! folders only, Host checking, size and time limits, connection caps). Loopback by
//! default; binding beyond loopback prints a warning. Ctrl-C shuts down gracefully.
//! It owns the page service's flags (`PageFlags`: port, bind, roots, `--allow-host`,
//! connection bounds), which the relay takes too.
//!
//! Invariants:
//! - On loopback the Host header must be a loopback name or an `--allow-host` one
//!   (DNS rebinding); beyond loopback the check is on only with `--allow-host`, and the
//!   warning on stderr says which, and which folders anyone may read.
//! - `--port 0` picks a free port, and the address actually bound is what is printed.
//!
//! PostgreSQL has no counterpart: this serves the page only.

use crate::args;
use crate::static_files::{self, Config, HostCheck};
use crate::CliError;
use std::path::PathBuf;
use std::time::Duration;

pub const ABOUT_LINE: &str = "Serves the demo page (web/) and the wasm package (pkg/)";
pub const USAGE: &str = "pgasync serve [--port 8080] [--bind 127.0.0.1] [--root .] [--web ROOT/web] [--pkg ROOT/pkg]
              [--allow-host NAME]... [--header-timeout-ms 10000] [--idle-timeout-ms 30000]
              [--max-connections 256] [--max-per-client 32]";
pub const ABOUT: &str = "serves only regular files under web/ and pkg/; loopback Host names only unless --allow-host;
--port 0 picks a free port, printed on stdout; binding beyond loopback warns on stderr";

/// The flags of the page's service, `serve`'s and the relay's.
#[derive(clap::Args, Default)]
pub struct PageFlags {
    /// The port; 0 picks a free one, printed on stdout [default: 8080]
    #[arg(long, value_name = "PORT")]
    pub port: Option<String>,
    /// The address to listen on; beyond loopback warns on stderr [default: 127.0.0.1]
    #[arg(long, value_name = "ADDRESS")]
    pub bind: Option<String>,
    /// The repository's root, holding web/ and pkg/ [default: .]
    #[arg(long, value_name = "ROOT")]
    pub root: Option<String>,
    /// The page's folder [default: ROOT/web]
    #[arg(long, value_name = "DIR")]
    pub web: Option<String>,
    /// The wasm package's folder [default: ROOT/pkg]
    #[arg(long, value_name = "DIR")]
    pub pkg: Option<String>,
    /// A Host name accepted besides loopback's (repeatable)
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<String>,
    #[arg(long, value_name = "MS", help = format!(
        "Time for a request's headers, ms [default: {}]", Config::default().header_timeout.as_millis()
    ))]
    pub header_timeout_ms: Option<String>,
    #[arg(long, value_name = "N", help = format!(
        "Connections at once [default: {}]", Config::default().max_connections
    ))]
    pub max_connections: Option<String>,
    #[arg(long, value_name = "N", help = format!(
        "Connections at once from one address [default: {}]", Config::default().max_per_client
    ))]
    pub max_per_client: Option<String>,
}

impl PageFlags {
    /// The port, 8080 unless given.
    pub fn port(&self) -> Result<u16, String> {
        Ok(args::num("port", self.port.as_deref())?.unwrap_or(8080))
    }

    /// The address to listen on, 127.0.0.1 unless given.
    pub fn bind(&self) -> String {
        self.bind.clone().unwrap_or_else(|| "127.0.0.1".into())
    }

    /// The page's and the package's folders.
    pub fn roots(&self) -> (PathBuf, PathBuf) {
        let root = PathBuf::from(self.root.as_deref().unwrap_or("."));
        (
            self.web.as_deref().map_or_else(|| root.join("web"), PathBuf::from),
            self.pkg.as_deref().map_or_else(|| root.join("pkg"), PathBuf::from),
        )
    }

    /// The `--allow-host` names, each a plain host name.
    pub fn allow_hosts(&self) -> Result<Vec<String>, CliError> {
        for name in &self.allow_host {
            let plain = name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._[]:".contains(&b));
            if !plain || !static_files::host_allowed(name, std::slice::from_ref(name)) {
                return Err(CliError::Usage(format!("--allow-host: \"{name}\" is not a host name")));
            }
        }
        Ok(self.allow_host.clone())
    }
}

/// `pgasync serve`'s flags.
#[derive(clap::Args, Default)]
pub struct Flags {
    #[command(flatten)]
    pub page: PageFlags,
    #[arg(long, value_name = "MS", help = format!(
        "A connection's time without a request, ms [default: {}]", Config::default().idle_timeout.as_millis()
    ))]
    pub idle_timeout_ms: Option<String>,
}

pub fn run(a: Flags) -> Result<(), CliError> {
    let allow_hosts = a.page.allow_hosts()?;
    let port = a.page.port()?;
    let bind = a.page.bind();
    let (web_root, pkg_root) = a.page.roots();
    let defaults = Config::default();
    let mut config = Config {
        web_root,
        pkg_root,
        header_timeout: millis("header-timeout-ms", a.page.header_timeout_ms.as_deref(), defaults.header_timeout)?,
        idle_timeout: millis("idle-timeout-ms", a.idle_timeout_ms.as_deref(), defaults.idle_timeout)?,
        max_connections: positive("max-connections", a.page.max_connections.as_deref(), defaults.max_connections)?,
        max_per_client: positive("max-per-client", a.page.max_per_client.as_deref(), defaults.max_per_client)?,
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

fn millis(name: &str, v: Option<&str>, default: Duration) -> Result<Duration, CliError> {
    match args::num::<u64>(name, v)? {
        Some(0) => Err(CliError::Usage(format!("--{name} must be at least 1"))),
        Some(ms) => Ok(Duration::from_millis(ms)),
        None => Ok(default),
    }
}

/// A count of at least 1, `default` when not given.
pub fn positive(name: &str, v: Option<&str>, default: usize) -> Result<usize, CliError> {
    match args::num::<usize>(name, v)? {
        Some(0) => Err(CliError::Usage(format!("--{name} must be at least 1"))),
        Some(n) => Ok(n),
        None => Ok(default),
    }
}
