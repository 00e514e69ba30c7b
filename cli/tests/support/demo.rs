//! A `pgasync demo` child for the tests that need the whole demo (real clusters, the
//! relay): started in its own process group on `--port 0`, its log collected, its
//! relay's port read from what it prints; Ctrl-C to the group on drop (killed outright
//! if it has not stopped within a minute), so a failing test leaves nothing running.
#![allow(dead_code)] // each test file uses its own part of the support module

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

pub struct DemoProcess {
    pub child: Child,
    pub port: u16,
    pub dir: PathBuf,
    log: Arc<Mutex<String>>,
}

impl DemoProcess {
    /// `pgasync demo --port 0 --rows ROWS --dir DIR`, once its relay has printed its URL.
    pub fn start(dir: &Path, rows: usize) -> DemoProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pgasync"))
            .args(["demo", "--port", "0", "--rows", &rows.to_string(), "--dir", &dir.display().to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("pgasync demo starts");
        let log = Arc::new(Mutex::new(String::new()));
        let (err, sink) = (child.stderr.take().unwrap(), log.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("pgasync relay: http://127.0.0.1:") {
                    let _ = tx.send(rest.split('/').next().unwrap_or("").parse::<u16>().unwrap_or(0));
                }
            }
        });
        let port = rx.recv_timeout(Duration::from_secs(300));
        let demo = DemoProcess { child, port: port.unwrap_or(0), dir: dir.to_path_buf(), log };
        assert!(demo.port > 0, "the demo did not print the relay's URL within 300 s:\n{}", demo.log());
        demo
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// `[targets.NAME] addr`'s port, from the demo's relay.toml.
    pub fn target_port(&self, name: &str) -> u16 {
        let toml = std::fs::read_to_string(self.dir.join("relay.toml")).unwrap();
        let section = toml.split(&format!("[targets.{name}]")).nth(1).expect("the target");
        let addr = section.lines().find(|l| l.starts_with("addr")).unwrap();
        addr.trim_end_matches('"').rsplit(':').next().unwrap().parse().unwrap()
    }

    /// The relay's pid: the process whose command line is `pgasync relay --config
    /// DIR/relay.toml …`.
    pub fn relay_pid(&self) -> Option<u32> {
        let config = self.dir.join("relay.toml").display().to_string();
        std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            let relay = args.get(1) == Some(&&b"relay"[..]) && args.contains(&config.as_bytes());
            relay.then_some(pid)
        })
    }

    /// A WebSocket URL of the relay's target `name`.
    pub fn url(&self, name: &str) -> String {
        format!("ws://127.0.0.1:{}/shard/{name}", self.port)
    }

    /// `GET path` from the relay, the body.
    pub fn get(&self, path: &str) -> Result<String, String> {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
        let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n", self.port);
        s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
        let mut answer = String::new();
        s.read_to_string(&mut answer).map_err(|e| e.to_string())?;
        let (head, body) = answer.split_once("\r\n\r\n").ok_or("no HTTP answer")?;
        if !head.starts_with("HTTP/1.1 200") {
            return Err(head.lines().next().unwrap_or("").to_string());
        }
        Ok(body.to_string())
    }

    /// Backends of the read-only role on cluster `name`, as its superuser sees them.
    pub fn backends(&self, name: &str) -> Result<usize, String> {
        let out = Command::new(super::pg::psql())
            .args(["-X", "-w", "-A", "-t", "-q", "-h", "127.0.0.1", "-p", &self.target_port(name).to_string()])
            .args(["-U", "postgres", "-d", "postgres"])
            .args(["-c", "SELECT count(*) FROM pg_stat_activity WHERE usename = 'pgasync'"])
            .env("PGPASSFILE", self.dir.join("superuser.pgpass"))
            .env("PGCONNECT_TIMEOUT", "5")
            .env_remove("PGPASSWORD")
            .output()
            .map_err(|e| format!("psql: {e}"))?;
        if !out.status.success() {
            return Err(format!("psql on {name}: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        String::from_utf8_lossy(&out.stdout).trim().parse().map_err(|e| format!("psql on {name}: {e}"))
    }
}

impl Drop for DemoProcess {
    /// Ctrl-C to the demo's group (the demo stops the relay and every cluster); killed
    /// outright if it has not stopped within a minute.
    fn drop(&mut self) {
        let group = -(self.child.id() as i32);
        unsafe {
            libc::kill(group, libc::SIGINT);
        }
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(60) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        unsafe {
            libc::kill(group, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}
