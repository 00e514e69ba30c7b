//! `pgasync serve` as a client meets it: the real binary on `--port 0` with a temporary
//! root, spoken to with raw TCP requests. Only regular files under web/ and pkg/ come
//! out; absolute paths, escapes, symlinks out, FIFOs, devices and directories are 404;
//! Host is checked; heads, time and connections are bounded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const INDEX: &str = "<!doctype html><title>demo</title>\n";
const APP_JS: &str = "console.log('demo');\n";
const WASM: &[u8] = b"\0asm\x01\0\0\0";

/// A temporary root with web/ and pkg/, a secret beside them and the traps inside.
struct Root(PathBuf);

impl Root {
    fn new() -> Root {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "pgasync-serve-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let web = dir.join("web");
        std::fs::create_dir_all(web.join("sub")).unwrap();
        std::fs::create_dir_all(dir.join("pkg")).unwrap();
        std::fs::write(web.join("index.html"), INDEX).unwrap();
        std::fs::write(web.join("app.js"), APP_JS).unwrap();
        std::fs::write(web.join("sub/page.txt"), "page\n").unwrap();
        std::fs::write(web.join(".hidden"), "hidden\n").unwrap();
        std::fs::write(dir.join("pkg/pgasync_bg.wasm"), WASM).unwrap();
        std::fs::write(dir.join("secret.txt"), "SECRET\n").unwrap();
        std::os::unix::fs::symlink("../secret.txt", web.join("escape")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", web.join("passwd")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", web.join("zero")).unwrap();
        std::os::unix::fs::symlink("app.js", web.join("inside.js")).unwrap();
        let fifo = std::ffi::CString::new(web.join("fifo").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0, "mkfifo");
        Root(dir)
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running `pgasync serve --port 0 --root ROOT ...`, killed on drop.
struct Server {
    child: Child,
    addr: SocketAddr,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    _root: Root,
}

impl Server {
    fn start(extra: &[&str]) -> Server {
        Server::start_in(Root::new(), extra)
    }

    fn start_in(root: Root, extra: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pgasync"))
            .args(["serve", "--port", "0", "--root", root.0.to_str().unwrap()])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("runs");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0; 4096];
            while let Ok(n @ 1..) = err.read(&mut buf) {
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        // Keep reading stdout, as a terminal would (the server writes on shutdown).
        let stdout = Arc::new(Mutex::new(String::new()));
        let sink = stdout.clone();
        std::thread::spawn(move || {
            let mut rest = String::new();
            while out.read_line(&mut rest).is_ok_and(|n| n > 0) {
                sink.lock().unwrap().push_str(&rest);
                rest.clear();
            }
        });
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("no address in {line:?}; stderr: {}", stderr.lock().unwrap()));
        let mut addr: SocketAddr = addr.parse().unwrap();
        if addr.ip().is_unspecified() {
            addr.set_ip(Ipv4Addr::LOCALHOST.into());
        }
        Server { child, addr, stdout, stderr, _root: root }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s
    }

    /// Sends `raw` and reads the whole answer (requests say `Connection: close`).
    fn raw(&self, raw: &[u8]) -> Reply {
        let mut s = self.connect();
        s.write_all(raw).unwrap();
        read_reply(&mut s)
    }

    fn request(&self, method: &str, path: &str, host: &str) -> Reply {
        self.raw(format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes())
    }

    fn get(&self, path: &str) -> Reply {
        self.request("GET", path, &self.addr.to_string())
    }

    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Reply {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Reads until the server closes (or a read fails: a reset counts as the end).
fn read_reply(s: &mut TcpStream) -> Reply {
    let mut all = Vec::new();
    let mut buf = [0; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => all.extend_from_slice(&buf[..n]),
        }
    }
    let split = all.windows(4).position(|w| w == b"\r\n\r\n").map_or(all.len(), |p| p + 4);
    let head = String::from_utf8_lossy(&all[..split]).into_owned();
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    Reply { status, head, body: all[split..].to_vec() }
}

/// A TCP connection to `dst` from the loopback address `src` (127.0.0.0/8 is all ours).
fn connect_from(src: Ipv4Addr, dst: SocketAddr) -> TcpStream {
    use std::os::fd::FromRawFd;
    let sockaddr = |ip: Ipv4Addr, port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(ip).to_be() },
        sin_zero: [0; 8],
    };
    let SocketAddr::V4(dst) = dst else { panic!("IPv4 expected") };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0);
        let s = TcpStream::from_raw_fd(fd);
        let from = sockaddr(src, 0);
        assert_eq!(libc::bind(fd, &from as *const _ as *const libc::sockaddr, len), 0, "bind {src}");
        let to = sockaddr(*dst.ip(), dst.port());
        assert_eq!(libc::connect(fd, &to as *const _ as *const libc::sockaddr, len), 0, "connect from {src}");
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s
    }
}

#[test]
fn serves_regular_files_under_the_roots_with_types_and_lengths() {
    let srv = Server::start(&[]);
    let r = srv.get("/");
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.body, INDEX.as_bytes());
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(r.header("content-length"), Some(INDEX.len().to_string().as_str()));
    let r = srv.get("/app.js");
    assert_eq!((r.status, r.body.as_slice()), (200, APP_JS.as_bytes()));
    assert_eq!(r.header("content-type"), Some("text/javascript; charset=utf-8"));
    let r = srv.get("/pkg/pgasync_bg.wasm");
    assert_eq!((r.status, r.body.as_slice()), (200, WASM));
    assert_eq!(r.header("content-type"), Some("application/wasm"));
    let r = srv.get("/sub/page.txt");
    assert_eq!((r.status, r.header("content-type")), (200, Some("text/plain; charset=utf-8")));
    // A symlink that stays inside the root is followed.
    let r = srv.get("/inside.js");
    assert_eq!((r.status, r.body.as_slice()), (200, APP_JS.as_bytes()));
}

#[test]
fn absolute_escaping_and_odd_paths_are_404() {
    let srv = Server::start(&[]);
    for path in [
        "//etc/passwd",
        "/%2Fetc%2Fhostname",
        "/%2fetc/passwd",
        "/pkg//etc/passwd",
        "/pkg/%2Fetc/passwd",
        "//proc/self/cmdline",
        "/../Cargo.toml",
        "/../secret.txt",
        "/%2e%2e/x",
        "/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/sub/../../secret.txt",
        "/./index.html",
        "/sub%5c..%5c..%5csecret.txt",
        "/index.html%00.js",
        "/.hidden",
        "/escape",
        "/passwd",
        "/sub",
        "/sub/",
        "/pkg/",
        "/pkg",
        "/missing.js",
        "/%zz",
    ] {
        let r = srv.get(path);
        assert_eq!(r.status, 404, "{path}: {r:?}");
        assert_eq!(r.body, b"not found\n", "{path}");
    }
}

#[test]
fn fifo_and_device_are_404_at_once_without_reading() {
    let srv = Server::start(&[]);
    let before = srv.rss_kib();
    for path in ["/fifo", "/zero", "//dev/zero"] {
        let t = Instant::now();
        let r = srv.get(path);
        assert_eq!(r.status, 404, "{path}: {r:?}");
        assert!(t.elapsed() < Duration::from_secs(2), "{path} took {:?}", t.elapsed());
    }
    assert!(srv.rss_kib() < before + 16 * 1024, "memory grew: {} -> {} KiB", before, srv.rss_kib());
    // Still serving.
    assert_eq!(srv.get("/").status, 200);
}

#[test]
fn head_is_headers_only_and_other_methods_are_405() {
    let srv = Server::start(&[]);
    let r = srv.request("HEAD", "/app.js", "localhost");
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.header("content-length"), Some(APP_JS.len().to_string().as_str()));
    assert_eq!(r.header("content-type"), Some("text/javascript; charset=utf-8"));
    assert!(r.body.is_empty(), "{r:?}");
    assert_eq!(srv.request("HEAD", "//etc/passwd", "localhost").status, 404);
    for m in ["POST", "PUT", "DELETE", "OPTIONS"] {
        let r = srv.request(m, "/app.js", "localhost");
        assert_eq!(r.status, 405, "{m}: {r:?}");
        assert_eq!(r.header("allow"), Some("GET, HEAD"), "{m}");
    }
}

#[test]
fn host_header_is_checked_on_loopback() {
    let srv = Server::start(&["--allow-host", "demo.test", "--allow-host=other.test"]);
    for host in ["localhost", "localhost:1234", "127.0.0.1", "[::1]:8080", "demo.test", "DEMO.test:99", "other.test"] {
        assert_eq!(srv.request("GET", "/", host).status, 200, "{host}");
    }
    for host in ["evil.example", "evil.example:80", "127.0.0.2", "localhost.evil.example", "demo.test.evil"] {
        let r = srv.request("GET", "/", host);
        assert_eq!(r.status, 403, "{host}: {r:?}");
        assert!(!r.body.starts_with(INDEX.as_bytes()));
    }
    // Missing Host on HTTP/1.1, two Hosts, and a foreign absolute-form target.
    assert_eq!(srv.raw(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n").status, 400);
    assert_eq!(
        srv.raw(b"GET / HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n").status,
        400
    );
    assert_eq!(
        srv.raw(b"GET http://evil.example/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").status,
        403
    );
}

#[test]
fn beyond_loopback_warns_and_stops_checking_host() {
    let srv = Server::start(&["--bind", "0.0.0.0"]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !srv.stderr.lock().unwrap().contains("Host checking is off") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let err = srv.stderr.lock().unwrap().clone();
    assert!(err.contains("warning") && err.contains("anyone") && err.contains("network"), "{err}");
    assert!(err.contains("Host checking is off") && err.contains("--allow-host"), "{err}");
    assert_eq!(srv.request("GET", "/", "192.0.2.7:8080").status, 200);
    assert_eq!(srv.get("//etc/passwd").status, 404);
}

#[test]
fn oversized_head_is_refused() {
    let srv = Server::start(&[]);
    let big = format!("GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: {}\r\nConnection: close\r\n\r\n", "a".repeat(9000));
    let r = srv.raw(big.as_bytes());
    assert_eq!(r.status, 431, "{r:?}");
    // A huge head is refused (431) or the connection cut, well before it is all sent.
    let mut s = srv.connect();
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n");
    let mut sent = 0;
    while sent < 1 << 20 {
        if s.write_all(format!("X-{sent}: {}\r\n", "b".repeat(1000)).as_bytes()).is_err() {
            break;
        }
        sent += 1000;
    }
    let r = read_reply(&mut s);
    assert!(r.status == 431 || r.status == 0, "{r:?}");
    assert_eq!(srv.get("/").status, 200);
}

#[test]
fn slow_clients_are_cut_off() {
    let root = Root::new();
    // A body much larger than the socket buffers, for the reader that never reads.
    std::fs::write(root.0.join("web/big.bin"), vec![7u8; 48 << 20]).unwrap();
    let srv = Server::start_in(root, &["--header-timeout-ms", "300", "--idle-timeout-ms", "300"]);

    // Half a request head, then silence.
    let mut s = srv.connect();
    let t = Instant::now();
    s.write_all(b"GET / HTTP/1.1\r\nHost: 127.0").unwrap();
    let r = read_reply(&mut s);
    assert!(r.status == 0 || r.status == 408, "{r:?}");
    assert!(t.elapsed() >= Duration::from_millis(250) && t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());

    // A head trickled one byte every 50 ms is cut off by the same deadline.
    let mut s = srv.connect();
    let t = Instant::now();
    for b in b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ".iter().chain([b'z'; 200].iter()) {
        if s.write_all(&[*b]).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        if t.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    assert!(t.elapsed() < Duration::from_secs(2), "trickling client kept for {:?}", t.elapsed());

    // A client that asks for a big file and does not read: cut off once the socket
    // buffers are full and nothing moves for the idle timeout.
    let mut s = srv.connect();
    s.write_all(b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let r = read_reply(&mut s);
    assert_eq!(r.status, 200);
    assert!(r.body.len() < 48 << 20, "the stalled reader got the whole file");

    assert_eq!(srv.get("/").status, 200);
}

#[test]
fn connections_are_capped_in_total_and_per_client() {
    let srv = Server::start(&["--max-connections", "5", "--max-per-client", "2", "--header-timeout-ms", "15000"]);
    let ip = |d: u8| Ipv4Addr::new(127, 0, 0, d);
    let busy = |s: &mut TcpStream| {
        let r = read_reply(s);
        assert_eq!(r.status, 503, "{r:?}");
    };
    // Per client: two idle connections from 127.0.0.1 are held, the next ones refused...
    let held: Vec<TcpStream> = (0..2).map(|_| connect_from(ip(1), srv.addr)).collect();
    for _ in 0..10 {
        busy(&mut connect_from(ip(1), srv.addr));
    }
    // ...while another client is served.
    let mut s = connect_from(ip(2), srv.addr);
    s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    assert_eq!(read_reply(&mut s).status, 200);
    drop(s);
    std::thread::sleep(Duration::from_millis(200));
    // In total: three more idle connections fill the five slots; a sixth client is refused.
    let more: Vec<TcpStream> = [3, 3, 4].into_iter().map(|d| connect_from(ip(d), srv.addr)).collect();
    busy(&mut connect_from(ip(5), srv.addr));
    // Slots come back when connections close.
    drop(held);
    drop(more);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = srv.get("/");
        if r.status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "not served again: {r:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_c_stops_the_server() {
    let mut srv = Server::start(&[]);
    assert_eq!(srv.get("/").status, 200);
    unsafe { libc::kill(srv.child.id() as libc::pid_t, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = srv.child.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(Instant::now() < deadline, "still running after SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    assert!(srv.stdout.lock().unwrap().contains("shutting down"), "{}", srv.stdout.lock().unwrap());
}

#[test]
fn bad_serve_flags_exit_with_2() {
    let root = Root::new();
    let r = root.0.to_str().unwrap();
    for args in [
        vec!["serve", "--root", r, "--max-connections", "0"],
        vec!["serve", "--root", r, "--max-per-client", "x"],
        vec!["serve", "--root", r, "--header-timeout-ms", "0"],
        vec!["serve", "--root", r, "--allow-host", ""],
        vec!["serve", "--root", r, "--allow-host", "a/b"],
        vec!["serve", "--root", r, "--allow-host"],
        vec!["serve", "--root", "/nonexistent-pgasync-root"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_pgasync")).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}
