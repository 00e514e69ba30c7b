//! A `pgasync relay --port 0 …` child process for the tests: its port read from the
//! URL it prints on stdout, its stderr (the relay's log) collected as it comes, killed
//! on drop so that a failing test leaves no relay behind.
#![allow(dead_code)] // each test file uses its own part of the support module

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

pub struct RelayProcess {
    pub child: Child,
    pub port: u16,
    stderr: Arc<Mutex<String>>,
}

impl RelayProcess {
    /// `pgasync relay --port 0` with `args`; returns once it has printed its URL.
    pub fn spawn(args: &[&str]) -> RelayProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pgasync"))
            .args(["relay", "--port", "0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the relay runs");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (mut err, sink) = (child.stderr.take().unwrap(), stderr.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line
            .split("://127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no URL in {line:?}; stderr: {}", stderr.lock().unwrap()));
        RelayProcess { child, port, stderr }
    }

    /// What the relay has logged so far.
    pub fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for RelayProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
