//! Fuzzing both protocol decoders with generated and mutated frames: the simulated
//! shard (`ShardServer::receive`, frontend messages) and the client
//! (`Connection::receive`, backend messages).
//!
//! Each case is a byte stream: valid frames of what each side really sends, some of
//! them mutated (negative, tiny, huge and off-by-a-few length words, truncation, bit
//! flips, a wrong type byte, random bytes, junk between frames, and for DataRow wrong
//! field counts and field lengths), split at random boundaries and fed a chunk at a
//! time. After every chunk:
//! - nothing panicked (each case runs under `catch_unwind`; the seed of a case that
//!   panics is printed, and `PGASYNC_FUZZ_CASE=<seed>` replays it) or hung (a
//!   watchdog names a case that runs for more than 20 s);
//! - what the decoder keeps buffered is the tail of what it was fed, and that tail is
//!   at most one incomplete message whose length word is within the decoder's bound
//!   (so a hostile length word is an error at once, not a wait for gigabytes);
//! - the server's answers are well-formed backend messages, and the client's completed
//!   results hold `nrows × ncols` values.
//!
//! `PGASYNC_FUZZ_FRAMES` frames per decoder (default 20,000); `make fuzz` runs a million.

use super::Stopwatch;
use bytes::BytesMut;
use pgasync::remote::frame::{check_backend_frame, MAX_BACKEND_MESSAGE_LEN};
use pgasync::remote::{Connection, Proto, QueryRole, Ticket, BEGIN_SQL};
use pgasync::sim::ShardServer;
use pgasync::types::{Catalog, ColType, Column, Datum, Table};
use postgres_protocol::message::backend::Message;
use std::panic::{catch_unwind, AssertUnwindSafe};
#[cfg(not(target_arch = "wasm32"))]
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
#[cfg(not(target_arch = "wasm32"))]
use std::sync::Arc;
#[cfg(not(target_arch = "wasm32"))]
use std::time::{Duration, Instant};
use wasm_bindgen_test::wasm_bindgen_test;

// ---- a deterministic PRNG (xorshift64*) ------------------------------------------

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// 0..n (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// True with probability `per_mille`/1000.
    fn chance(&mut self, per_mille: usize) -> bool {
        self.below(1000) < per_mille
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn frames_wanted() -> usize {
    std::env::var("PGASYNC_FUZZ_FRAMES").ok().and_then(|v| v.replace('_', "").parse().ok()).unwrap_or(20_000)
}

fn master_seed() -> u64 {
    std::env::var("PGASYNC_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_0f_f022)
}

// ---- frame writers ---------------------------------------------------------------

fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn cstr(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(s.as_bytes());
    b.push(0);
}

// ---- mutations -------------------------------------------------------------------

/// Where a frame's length word is: after the type byte, or first (startup packets).
#[derive(Clone, Copy)]
enum Shape {
    Tagged,
    Untagged,
}

/// Mutates one frame; returns what it did (for the statistics only).
fn mutate(rng: &mut Rng, frame: &mut Vec<u8>, shape: Shape) {
    let at = match shape {
        Shape::Tagged => 1,
        Shape::Untagged => 0,
    };
    let set_len = |frame: &mut Vec<u8>, len: i32| {
        if frame.len() < at + 4 {
            frame.resize(at + 4, 0);
        }
        frame[at..at + 4].copy_from_slice(&len.to_be_bytes());
    };
    match rng.below(11) {
        // A negative length word.
        0 => {
            let some = -(rng.below(1 << 20) as i32) - 1;
            let len = rng.pick(&[-1, -4, i32::MIN, some]);
            set_len(frame, len)
        }
        // A length word of 0..3 (below its own size).
        1 => set_len(frame, rng.below(4) as i32),
        // A huge one.
        2 => {
            let some = (1 << 24) + rng.below(1 << 30) as i32;
            let big = [i32::MAX, 0x7fff_fff0, 1 << 30, (64 << 20) + 1, some];
            set_len(frame, rng.pick(&big))
        }
        // Off by a few either way: the stream is misframed from here on.
        3 => {
            let old = frame.get(at..at + 4).map_or(8, |w| i32::from_be_bytes([w[0], w[1], w[2], w[3]]));
            let delta = rng.below(9) as i32 - 4;
            set_len(frame, old.wrapping_add(delta))
        }
        // Truncated.
        4 => {
            let keep = rng.below(frame.len().max(1));
            frame.truncate(keep)
        }
        // A few bit flips anywhere.
        5 | 6 => {
            for _ in 0..1 + rng.below(3) {
                if !frame.is_empty() {
                    let i = rng.below(frame.len());
                    frame[i] ^= 1 << rng.below(8);
                }
            }
        }
        // Another type byte.
        7 => {
            if let (Shape::Tagged, Some(b)) = (shape, frame.first_mut()) {
                *b = rng.next() as u8;
            }
        }
        // Random bytes instead.
        8 => {
            let n = rng.below(48);
            *frame = rng.bytes(n)
        }
        // Random bytes appended (junk between frames).
        9 => {
            let n = 1 + rng.below(16);
            frame.extend(rng.bytes(n))
        }
        // A byte of the body dropped (the length word no longer matches).
        _ => {
            if frame.len() > at + 4 {
                let i = at + 4 + rng.below(frame.len() - at - 4);
                frame.remove(i);
            }
        }
    }
}

/// Splits `stream` into chunks: all at once, byte by byte, or random sizes.
fn split(rng: &mut Rng, stream: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mode = rng.below(10);
    let mut out = Vec::new();
    let mut at = 0;
    while at < stream.len() {
        let n = match mode {
            0 | 1 => stream.len(),
            2 => 1,
            3..=6 => 1 + rng.below(16),
            _ => 1 + rng.below(stream.len()),
        };
        let end = (at + n).min(stream.len());
        out.push(at..end);
        at = end;
    }
    out
}

#[derive(Default, Debug)]
struct Stats {
    cases: usize,
    frames: usize,
    mutated: usize,
    bytes: usize,
    /// Cases whose decoder reported an error (a closed connection, a protocol error).
    errors: usize,
    panics: usize,
    first_panic: Option<u64>,
}

/// Runs cases until `wanted` frames were fed; a case is `run(seed) -> (frames, mutated, bytes, error)`.
/// `PGASYNC_FUZZ_CASE=<seed>` runs that one case only, panics shown. A watchdog ends
/// the process, naming the case, if one runs for more than 20 s (a hang, which
/// `catch_unwind` cannot see). On wasm32 there is no thread for a watchdog (a hang
/// hangs the run) and a panic aborts the test (no unwinding: the case is not named).
fn drive(wanted: usize, mut run: impl FnMut(u64) -> (usize, usize, usize, bool)) -> Stats {
    let mut s = Stats::default();
    if let Some(seed) = std::env::var("PGASYNC_FUZZ_CASE").ok().and_then(|v| v.parse().ok()) {
        let (frames, mutated, bytes, error) = run(seed);
        s.cases = 1;
        (s.frames, s.mutated, s.bytes, s.errors) = (frames, mutated, bytes, error as usize);
        return s;
    }
    #[cfg(not(target_arch = "wasm32"))]
    let current = Arc::new((AtomicU64::new(0), AtomicU64::new(0), AtomicBool::new(false)));
    #[cfg(not(target_arch = "wasm32"))]
    let watched = Arc::clone(&current);
    #[cfg(not(target_arch = "wasm32"))]
    let epoch = Instant::now();
    #[cfg(not(target_arch = "wasm32"))]
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(500));
        let (seed, since, done) = (&watched.0, &watched.1, &watched.2);
        if done.load(Ordering::Relaxed) {
            return;
        }
        let running = (epoch.elapsed().as_millis() as u64).saturating_sub(since.load(Ordering::Relaxed));
        if running > 20_000 {
            let seed = seed.load(Ordering::Relaxed);
            eprintln!("a case has run for {running} ms (a hang?): replay it with PGASYNC_FUZZ_CASE={seed}");
            std::process::exit(101);
        }
    });
    let mut master = Rng::new(master_seed());
    while s.frames < wanted {
        let seed = master.next();
        #[cfg(not(target_arch = "wasm32"))]
        {
            current.0.store(seed, Ordering::Relaxed);
            current.1.store(epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
        }
        s.cases += 1;
        match catch_unwind(AssertUnwindSafe(|| run(seed))) {
            Ok((frames, mutated, bytes, error)) => {
                s.frames += frames;
                s.mutated += mutated;
                s.bytes += bytes;
                s.errors += error as usize;
            }
            Err(_) => {
                s.panics += 1;
                s.frames += 1;
                s.first_panic.get_or_insert(seed);
            }
        }
    }
    #[cfg(not(target_arch = "wasm32"))]
    current.2.store(true, Ordering::Relaxed);
    s
}

fn report(who: &str, s: &Stats, started: Stopwatch) {
    println!(
        "{who} decoder: {} frames ({} mutated, {} bytes) in {} cases, {} errors, {} panics, {:.2} s",
        s.frames,
        s.mutated,
        s.bytes,
        s.cases,
        s.errors,
        s.panics,
        started.elapsed().as_secs_f64()
    );
    if let Some(seed) = s.first_panic {
        println!("{who} decoder: the first case that panicked: replay it with PGASYNC_FUZZ_CASE={seed}");
    }
}

// ---- the simulated shard -----------------------------------------------------------

fn shard_catalog() -> Catalog {
    let mut t = Table::new("t1", vec![Column::new("a", ColType::Int), Column::new("b", ColType::Text)]);
    for i in 0..25 {
        t.push_row(&[Datum::Int(i), if i % 5 == 0 { Datum::Null } else { Datum::text(&format!("row {i}")) }]);
    }
    let mut c = Catalog::default();
    c.add(t);
    c
}

/// What postgres_fdw (and a few others) send, and some SQL the shard must refuse.
const SQL: &[&str] = &[
    "SET search_path = pg_catalog",
    "SET timezone = 'UTC'",
    "SET datestyle = ISO",
    "SET intervalstyle = postgres",
    "SET extra_float_digits = 3",
    "SET no_such_setting = 1",
    "START TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    "DECLARE c1 CURSOR FOR\nSELECT a, b FROM public.t1",
    "DECLARE c2 CURSOR FOR\nSELECT a FROM public.t1 WHERE ((a > 3)) ORDER BY a DESC NULLS FIRST",
    "FETCH 100 FROM c1",
    "FETCH 3 FROM c2",
    "CLOSE c1",
    "COMMIT TRANSACTION",
    "ABORT TRANSACTION",
    "ROLLBACK",
    "SELECT a, b FROM public.t1 WHERE a < 4",
    "SELECT count(*) FROM public.t1",
    "SELECT a FROM public.nope",
    "SELEC oops",
    "",
    ";",
    "START TRANSACTION ISOLATION LEVEL REPEATABLE READ; FETCH 5 FROM c1",
    "SELECT 1/0",
];

fn startup_packet(rng: &mut Rng) -> Vec<u8> {
    let mut b = Vec::new();
    let minor = if rng.chance(50) { 1 + rng.below(3) as i32 } else { 0 };
    b.extend_from_slice(&((3 << 16) | minor).to_be_bytes());
    let mut options = vec![("user", "postgres"), ("database", "postgres"), ("application_name", "postgres_fdw")];
    if rng.chance(100) {
        options.push(("_pq_.something", "on"));
    }
    if rng.chance(100) {
        options.push(("search_path", "pg_catalog"));
    }
    for (k, v) in options {
        cstr(&mut b, k);
        cstr(&mut b, v);
    }
    b.push(0);
    let mut v = ((b.len() + 4) as i32).to_be_bytes().to_vec();
    v.extend_from_slice(&b);
    v
}

/// A special startup packet: SSLRequest, GSSENCRequest or CancelRequest.
fn special_packet(rng: &mut Rng) -> Vec<u8> {
    let code: i32 = rng.pick(&[(1234 << 16) | 5679, (1234 << 16) | 5680, (1234 << 16) | 5678]);
    let len: i32 = if code & 0xffff == 5678 { 16 } else { 8 };
    let mut v = len.to_be_bytes().to_vec();
    v.extend_from_slice(&code.to_be_bytes());
    if code & 0xffff == 5678 {
        v.extend_from_slice(&7i32.to_be_bytes());
        v.extend_from_slice(&55i32.to_be_bytes());
    }
    v
}

fn portal_name(rng: &mut Rng) -> &'static str {
    rng.pick(&["", "", "", "p1", "c1"])
}

/// One frontend message after startup.
fn frontend_message(rng: &mut Rng) -> Vec<u8> {
    let sql = rng.pick(SQL);
    match rng.below(14) {
        0..=2 => {
            let mut b = Vec::new();
            cstr(&mut b, sql);
            msg(b'Q', &b)
        }
        3 | 4 => {
            let mut b = Vec::new();
            cstr(&mut b, rng.pick(&["", "", "s1"]));
            cstr(&mut b, sql);
            let ntypes = if rng.chance(100) { 1 } else { 0 };
            b.extend_from_slice(&(ntypes as i16).to_be_bytes());
            for _ in 0..ntypes {
                b.extend_from_slice(&23i32.to_be_bytes());
            }
            msg(b'P', &b)
        }
        5 | 6 => {
            let mut b = Vec::new();
            cstr(&mut b, portal_name(rng));
            cstr(&mut b, rng.pick(&["", "", "s1"]));
            let nformats = rng.below(3);
            b.extend_from_slice(&(nformats as i16).to_be_bytes());
            for _ in 0..nformats {
                b.extend_from_slice(&(rng.below(2) as i16).to_be_bytes());
            }
            let nparams = if rng.chance(100) { 1 } else { 0 };
            b.extend_from_slice(&(nparams as i16).to_be_bytes());
            for _ in 0..nparams {
                b.extend_from_slice(&1i32.to_be_bytes());
                b.push(b'7');
            }
            let nresult = rng.below(3);
            b.extend_from_slice(&(nresult as i16).to_be_bytes());
            for _ in 0..nresult {
                b.extend_from_slice(&(rng.below(3) as i16).to_be_bytes());
            }
            msg(b'B', &b)
        }
        7 => {
            let mut b = vec![rng.pick(b"SPPx")];
            cstr(&mut b, portal_name(rng));
            msg(b'D', &b)
        }
        8 | 9 => {
            let mut b = Vec::new();
            cstr(&mut b, portal_name(rng));
            b.extend_from_slice(&(rng.pick(&[0i32, 0, 1, 5, 100, -1])).to_be_bytes());
            msg(b'E', &b)
        }
        10 => msg(b'S', &[]),
        11 => {
            let mut b = vec![rng.pick(b"SPz")];
            cstr(&mut b, portal_name(rng));
            msg(b'C', &b)
        }
        12 => match rng.below(6) {
            0 => msg(b'X', &[]),
            1 => msg(b'H', &[]),
            2 => msg(b'd', b"copy data"),
            3 => msg(b'c', &[]),
            4 => msg(b'f', b"no copy\0"),
            _ => msg(b'F', &[0, 0, 0, 1]),
        },
        _ => msg(b'H', &[]),
    }
}

/// postgres_fdw's extended-protocol cycle: Parse/Bind/Describe/Execute/Sync.
fn fdw_cycle(rng: &mut Rng, frames: &mut Vec<(Vec<u8>, Shape)>) {
    let mut parse = Vec::new();
    cstr(&mut parse, "");
    cstr(&mut parse, rng.pick(&["DECLARE c1 CURSOR FOR\nSELECT a, b FROM public.t1", "FETCH 10 FROM c1", "CLOSE c1"]));
    parse.extend_from_slice(&0i16.to_be_bytes());
    frames.push((msg(b'P', &parse), Shape::Tagged));
    frames.push((msg(b'B', &[0, 0, 0, 0, 0, 0, 0, 0]), Shape::Tagged));
    frames.push((msg(b'D', b"P\0"), Shape::Tagged));
    frames.push((msg(b'E', &[0, 0, 0, 0, 0]), Shape::Tagged));
    frames.push((msg(b'S', &[]), Shape::Tagged));
}

/// PostgreSQL's bound on the length word of a frontend message, for the check of what
/// the server keeps buffered (the test's own table, from postgres.c's SocketBackend).
fn frontend_limit(tag: u8) -> Option<usize> {
    match tag {
        b'Q' | b'F' | b'P' | b'B' | b'd' => Some(ShardServer::LARGE_MESSAGE_LIMIT),
        b'X' | b'C' | b'D' | b'E' | b'H' | b'S' | b'c' | b'f' => Some(ShardServer::SMALL_MESSAGE_LIMIT),
        _ => None,
    }
}

fn be32(b: &[u8]) -> i64 {
    i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// Is `tail` one incomplete message (or startup packet) whose header has been checked?
fn plausible_server_tail(tail: &[u8]) -> bool {
    let n = tail.len() as i64;
    if n < 4 {
        return true; // not even a length word (or a type byte and part of one)
    }
    let startup = (8..=ShardServer::MAX_STARTUP_PACKET_LEN as i64 + 4).contains(&be32(tail)) && be32(tail) > n;
    let message = match frontend_limit(tail[0]) {
        None => false,
        Some(_) if n == 4 => true,
        Some(limit) => (4..=limit as i64).contains(&be32(&tail[1..])) && 1 + be32(&tail[1..]) > n,
    };
    startup || message
}

/// The server's answer must be whole, well-formed backend messages.
fn check_server_output(out: &[u8]) {
    let mut buf = BytesMut::from(out);
    while !buf.is_empty() {
        // The answer to SSLRequest and GSSENCRequest is the one byte `N`: it is that,
        // not a NoticeResponse, when what follows it is no NoticeResponse header.
        if buf[0] == b'N' && check_backend_frame(&buf).is_err() || buf[..] == [b'N'] {
            let _ = buf.split_to(1);
            continue;
        }
        assert_eq!(check_backend_frame(&buf), Ok(()), "a server frame: {:?}", &buf[..buf.len().min(16)]);
        if buf[0] == b'v' {
            // NegotiateProtocolVersion, which postgres-protocol does not parse.
            let len = be32(&buf[1..5]) as usize;
            assert!(buf.len() > len, "an incomplete NegotiateProtocolVersion");
            let _ = buf.split_to(1 + len);
            continue;
        }
        let head = buf[..buf.len().min(24)].to_vec();
        let m = Message::parse(&mut buf);
        assert!(matches!(m, Ok(Some(_))), "the server wrote a malformed or incomplete message: {head:?}");
    }
}

fn server_case(seed: u64) -> (usize, usize, usize, bool) {
    let mut rng = Rng::new(seed);
    let mut frames: Vec<(Vec<u8>, Shape)> = Vec::new();
    if rng.chance(100) {
        frames.push((special_packet(&mut rng), Shape::Untagged));
    }
    frames.push((startup_packet(&mut rng), Shape::Untagged));
    for _ in 0..rng.below(24) {
        if rng.chance(150) {
            fdw_cycle(&mut rng, &mut frames);
        } else {
            frames.push((frontend_message(&mut rng), Shape::Tagged));
        }
    }
    let rate = rng.pick(&[0, 30, 100, 300]);
    let mut mutated = 0;
    let mut stream = Vec::new();
    for (f, shape) in frames.iter_mut() {
        if rng.chance(rate) {
            mutate(&mut rng, f, *shape);
            mutated += 1;
        }
        stream.extend_from_slice(f);
    }
    let mut server = ShardServer::new("s1", shard_catalog(), 4242);
    let mut error = false;
    for r in split(&mut rng, &stream) {
        match server.receive(&stream[r.clone()]) {
            Ok(answer) => {
                check_server_output(&answer.bytes);
                let n = server.buffered_bytes();
                assert!(n <= r.end, "the server keeps more than it was fed");
                let tail = &stream[r.end - n..r.end];
                assert!(plausible_server_tail(tail), "the server buffers {n} bytes that are not one checked message");
            }
            Err(closed) => {
                check_server_output(&closed.answer.bytes);
                assert!(server.is_closed());
                assert_eq!(server.buffered_bytes(), 0);
                assert!(server.receive(b"Q\0\0\0\x05\0").is_err(), "a closed connection refuses input");
                error = true;
                break;
            }
        }
    }
    (frames.len(), mutated, stream.len(), error)
}

#[wasm_bindgen_test(unsupported = test)]
fn server_decoder_survives_generated_and_mutated_frames() {
    let started = Stopwatch::start();
    let s = drive(frames_wanted(), server_case);
    report("server", &s, started);
    assert_eq!(s.panics, 0, "first panicking case: PGASYNC_FUZZ_CASE={:?}", s.first_panic);
}

// ---- the client --------------------------------------------------------------------

const TYPES: &[u32] = &[23, 20, 25, 701, 1700, 16, 1043];

fn row_description(rng: &mut Rng, ncols: usize) -> Vec<u8> {
    let mut b = (ncols as i16).to_be_bytes().to_vec();
    for i in 0..ncols {
        cstr(&mut b, &format!("c{i}"));
        b.extend_from_slice(&0u32.to_be_bytes());
        b.extend_from_slice(&0i16.to_be_bytes());
        b.extend_from_slice(&rng.pick(TYPES).to_be_bytes());
        b.extend_from_slice(&(-1i16).to_be_bytes());
        b.extend_from_slice(&(-1i32).to_be_bytes());
        b.extend_from_slice(&0i16.to_be_bytes());
    }
    msg(b'T', &b)
}

/// A DataRow of `ncols` text values; when `odd`, sometimes a wrong field count, a field
/// length past the end, or a negative one.
fn data_row(rng: &mut Rng, ncols: usize, odd: bool) -> Vec<u8> {
    let count = if odd && rng.chance(30) { rng.below(ncols + 3) } else { ncols };
    let mut b = (count as i16).to_be_bytes().to_vec();
    for _ in 0..count {
        let value: String = match rng.below(6) {
            0 => {
                b.extend_from_slice(&(-1i32).to_be_bytes());
                continue;
            }
            1 => "x\u{e9}".into(),
            2 => format!("{}.5", rng.below(1000)),
            _ => (rng.next() as i64 >> rng.below(60)).to_string(),
        };
        let len = match if odd { rng.below(40) } else { 40 } {
            0 => value.len() as i32 + 1 + rng.below(100) as i32,
            1 => -2 - rng.below(100) as i32,
            2 => i32::MAX,
            _ => value.len() as i32,
        };
        b.extend_from_slice(&len.to_be_bytes());
        b.extend_from_slice(value.as_bytes());
    }
    msg(b'D', &b)
}

fn command_complete(tag: &str) -> Vec<u8> {
    let mut b = Vec::new();
    cstr(&mut b, tag);
    msg(b'C', &b)
}

fn error_response(rng: &mut Rng, tag: u8) -> Vec<u8> {
    let mut b = Vec::new();
    for (t, v) in [(b'S', "ERROR"), (b'V', "ERROR"), (b'C', "42P01"), (b'M', "relation \"t9\" does not exist")] {
        b.push(t);
        cstr(&mut b, v);
    }
    if rng.chance(300) {
        b.push(b'P');
        cstr(&mut b, rng.pick(&["15", "x", "99999999999999999999"]));
    }
    b.push(0);
    msg(tag, &b)
}

fn ready(status: u8) -> Vec<u8> {
    msg(b'Z', &[status])
}

/// The answer PostgreSQL gives to the startup packet.
fn startup_answer(rng: &mut Rng, frames: &mut Vec<Vec<u8>>) {
    frames.push(msg(b'R', &0i32.to_be_bytes()));
    for (k, v) in [("server_version", "15.0"), ("client_encoding", "UTF8"), ("TimeZone", "UTC")] {
        let mut b = Vec::new();
        cstr(&mut b, k);
        cstr(&mut b, v);
        frames.push(msg(b'S', &b));
    }
    let mut key = 4242i32.to_be_bytes().to_vec();
    key.extend_from_slice(&(rng.next() as i32).to_be_bytes());
    frames.push(msg(b'K', &key));
    frames.push(ready(b'I'));
}

/// An answer to one statement: rows, a tag, an error, a notice; when `odd`, maybe
/// something a postgres_fdw connection does not expect. Returns whether it was an error.
fn query_answer(rng: &mut Rng, frames: &mut Vec<Vec<u8>>, odd: bool) -> bool {
    let kind = rng.below(if odd { 12 } else { 9 });
    match kind {
        0..=4 => {
            let ncols = 1 + rng.below(4);
            frames.push(row_description(rng, ncols));
            let nrows = rng.below(20);
            for _ in 0..nrows {
                frames.push(data_row(rng, ncols, odd));
            }
            if odd && rng.chance(100) {
                let width = 1 + rng.below(4);
                frames.push(row_description(rng, width)); // a second result set
                frames.push(data_row(rng, 1, odd));
            }
            frames.push(command_complete(&format!("FETCH {nrows}")));
        }
        5 => frames.push(command_complete(rng.pick(&["START TRANSACTION", "DECLARE CURSOR", "CLOSE CURSOR"]))),
        6 => frames.push(error_response(rng, b'E')),
        7 => {
            frames.push(error_response(rng, b'N'));
            frames.push(command_complete("COMMIT"));
        }
        8 => frames.push(msg(b'I', &[])),
        9 => {
            // What a password-protected or odd server sends.
            let body: Vec<u8> = match rng.below(5) {
                0 => 3i32.to_be_bytes().to_vec(),
                1 => [5i32.to_be_bytes(), [1, 2, 3, 4]].concat(),
                2 => [&10i32.to_be_bytes()[..], b"SCRAM-SHA-256\0\0"].concat(),
                3 => 99i32.to_be_bytes().to_vec(),
                _ => 0i32.to_be_bytes().to_vec(),
            };
            frames.push(msg(b'R', &body));
        }
        10 => {
            let m = match rng.below(8) {
                0 => msg(b'1', &[]),
                1 => msg(b'2', &[]),
                2 => msg(b'3', &[]),
                3 => msg(b'n', &[]),
                4 => msg(b's', &[]),
                5 => msg(b't', &[0, 0]),
                6 => msg(b'A', b"\0\0\0\x07chan\0payload\0"),
                _ => msg(b'v', &[0, 0, 0, 0, 0, 0, 0, 0]),
            };
            frames.push(m)
        }
        _ => {}
    }
    frames.push(ready(if odd {
        rng.pick(b"ITEx")
    } else if kind == 6 {
        b'E'
    } else {
        b'T'
    }));
    kind == 6
}

/// The backend message types of protocol 3.0 (the test's own list, from protocol.sgml).
const BACKEND_TAGS: &[u8] = b"123AcCdDEGHIKnNRsStTVWvZ";

/// Where in `stream` a client must have seen a bad header: the offset just past the
/// first type byte that is no backend message type, or past the first length word
/// below 4 or above `MAX_BACKEND_MESSAGE_LEN`, framing the stream as a client does.
/// None if every header is good (the last message may be incomplete).
fn first_bad_header(stream: &[u8]) -> Option<usize> {
    let mut at = 0;
    while at < stream.len() {
        if !BACKEND_TAGS.contains(&stream[at]) {
            return Some(at + 1);
        }
        let word = stream.get(at + 1..at + 5)?;
        let len = be32(word);
        if !(4..=MAX_BACKEND_MESSAGE_LEN as i64).contains(&len) {
            return Some(at + 5);
        }
        at += 1 + len as usize;
    }
    None
}

/// A connection with statements in flight, as the executor makes them: the startup
/// packet, postgres_fdw's SETs, START TRANSACTION, then DECLARE/FETCH/CLOSE (simple
/// or extended protocol) and maybe COMMIT.
fn busy_connection(rng: &mut Rng) -> (Connection, Vec<Ticket>) {
    let mut conn = Connection::new(0, "s1", rng.chance(500));
    let mut tickets = vec![conn.connect(0, rng.chance(500))];
    for sql in ["SET search_path = pg_catalog", "SET extra_float_digits = 3"] {
        if rng.chance(300) {
            tickets.push(conn.send(0, Proto::Simple, sql, QueryRole::Setup).0);
        }
    }
    tickets.push(conn.send(0, Proto::Simple, BEGIN_SQL, QueryRole::BeginTransaction).0);
    for i in 0..1 + rng.below(4) {
        let proto = if rng.chance(500) { Proto::Extended } else { Proto::Simple };
        let sql = rng.pick(&["DECLARE c1 CURSOR FOR\nSELECT a FROM public.t1", "FETCH 100 FROM c1", "CLOSE c1"]);
        let role = if i > 0 && rng.chance(100) { QueryRole::EndTransaction } else { QueryRole::InTransaction };
        tickets.push(conn.send(0, proto, sql, role).0);
    }
    (conn, tickets)
}

fn client_case(seed: u64) -> (usize, usize, usize, bool) {
    let mut rng = Rng::new(seed);
    let (mut conn, tickets) = busy_connection(&mut rng);
    // The answers: startup, then one per statement (and when `odd`, maybe one more,
    // which comes with no statement in flight, and unexpected messages).
    let odd = rng.chance(250);
    let mut frames = Vec::new();
    startup_answer(&mut rng, &mut frames);
    for _ in 1..tickets.len() + if odd { rng.below(2) } else { 0 } {
        if rng.chance(200) {
            frames.push(msg(b'1', &[]));
            frames.push(msg(b'2', &[]));
            frames.push(msg(b'n', &[]));
        }
        // After an error the connection holds back what needs the transaction: no
        // more answers come (but an odd server may send some anyway).
        if query_answer(&mut rng, &mut frames, odd) && !odd {
            break;
        }
    }
    let rate = rng.pick(&[0, 20, 60, 200]);
    let mut mutated = 0;
    let mut stream = Vec::new();
    for f in frames.iter_mut() {
        if rng.chance(rate) {
            mutate(&mut rng, f, Shape::Tagged);
            mutated += 1;
        }
        stream.extend_from_slice(f);
    }
    let bad_header = first_bad_header(&stream);
    let keep_feeding_after_error = rng.chance(300);
    let mut error = false;
    for r in split(&mut rng, &stream) {
        match conn.receive(1, &stream[r.clone()]) {
            Ok(_) if error => {}
            Ok(_) => {
                // Every header fed so far was good: what the inbox holds is at most
                // one incomplete message of at most MAX_BACKEND_MESSAGE_LEN bytes.
                if let Some(at) = bad_header {
                    assert!(at > r.end, "a bad header ending at byte {at} was accepted (fed {} bytes)", r.end);
                }
                for &t in &tickets {
                    if let Some(res) = conn.take_result(t) {
                        assert_eq!(res.data.len(), res.nrows * res.ncols(), "a result's rows are ncols wide");
                        for i in 0..res.nrows {
                            assert_eq!(res.row(i).len(), res.ncols());
                        }
                    }
                }
            }
            Err(e) => {
                assert!(!e.is_empty());
                error = true;
                if !keep_feeding_after_error {
                    break;
                }
            }
        }
    }
    // Whatever happened, the connection's own bookkeeping still answers.
    let _ = (conn.is_busy(), conn.inflight_count(), conn.queued_count(), conn.is_quiescent(), conn.inflight_sql());
    (frames.len(), mutated, stream.len(), error)
}

#[wasm_bindgen_test(unsupported = test)]
fn client_decoder_survives_generated_and_mutated_frames() {
    let started = Stopwatch::start();
    let s = drive(frames_wanted(), client_case);
    report("client", &s, started);
    assert_eq!(s.panics, 0, "first panicking case: PGASYNC_FUZZ_CASE={:?}", s.first_panic);
}

/// The headers the brief names, one by one: each is an error as soon as its length
/// word is in, on both sides, however the bytes are split.
#[wasm_bindgen_test(unsupported = test)]
fn hostile_length_words_are_errors_at_once() {
    let lengths = [-1i32, i32::MIN, 0, 1, 2, 3, i32::MAX, 0x7fff_ffff, 1 << 30, (64 << 20) + 1];
    for len in lengths {
        for tag in [b'D', b'T', b'Z', b'C', b'E'] {
            let (mut conn, _) = busy_connection(&mut Rng::new(len as u64 ^ tag as u64));
            let mut header = vec![tag];
            header.extend_from_slice(&len.to_be_bytes());
            assert!(conn.receive(1, &header[..3]).is_ok(), "{len}: three bytes are not a header yet");
            assert!(conn.receive(1, &header[3..]).is_err(), "client: tag {} length {len}", tag as char);
        }
        for tag in [b'Q', b'P', b'B', b'S', b'X'] {
            let mut server = ShardServer::new("s1", shard_catalog(), 1);
            let mut rng = Rng::new(7);
            server.receive(&startup_packet(&mut rng)).unwrap();
            let mut header = vec![tag];
            header.extend_from_slice(&len.to_be_bytes());
            assert!(server.receive(&header[..2]).is_ok());
            let closed = server.receive(&header[2..]).unwrap_err();
            assert_eq!(closed.sqlstate, "08P01", "server: tag {} length {len}", tag as char);
        }
        let mut server = ShardServer::new("s1", shard_catalog(), 1);
        let closed = server.receive(&len.to_be_bytes()).unwrap_err();
        assert_eq!((closed.sqlstate, closed.message.as_str()), ("08P01", "invalid length of startup packet"));
    }
    // An unknown type is refused before its length word arrives.
    let (mut conn, _) = busy_connection(&mut Rng::new(3));
    assert!(conn.receive(1, b"Q").is_err());
    // A RowDescription that changes the width of rows already stored is refused.
    let mut conn = Connection::new(0, "s1", true);
    conn.connect(0, false);
    let (t, _) = conn.send(0, Proto::Simple, "FETCH 100 FROM c1", QueryRole::InTransaction);
    let mut rng = Rng::new(9);
    let mut frames = Vec::new();
    startup_answer(&mut rng, &mut frames);
    frames.push(row_description(&mut rng, 1));
    frames.push(msg(b'D', &[0, 1, 0, 0, 0, 1, b'7']));
    frames.push(row_description(&mut rng, 3));
    frames.push(ready(b'T'));
    assert!(conn.receive(1, &frames.concat()).is_err());
    assert!(conn.take_result(t).is_none());
}
