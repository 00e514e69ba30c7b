#![cfg(not(target_arch = "wasm32"))]
//! The SQL front end never panics (issue 9): generated and mutated scenario files are
//! loaded, planned, built and run; every outcome must be a value or a `FrontError`.
//!
//! `make test` runs PGASYNC_SQL_FUZZ cases (default 20,000); `make fuzz` runs a million
//! in release mode. PGASYNC_SQL_FUZZ_SEED=n replays a run. The generator is a small
//! xorshift so that a seed reproduces a run exactly, here and on any machine.

use pgasync::clock::Clock;
use pgasync::frontend::SqlScenario;
use pgasync::knobs::Source;
use pgasync::scenario::Knobs;
use std::panic::{catch_unwind, AssertUnwindSafe};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

/// Small worlds: a few shards, partitioned and foreign tables, tens of rows.
const BASES: &[&str] = &[
    "-- @shard s1\ncreate table t1 (a int, b int, c text);\n-- @shard s2\ncreate table t2 (a int, b int, c text);\ncreate index on t2(b);\n\
     -- @coordinator\ncreate extension postgres_fdw;\ncreate server s1 foreign data wrapper postgres_fdw options (async_capable 'on', fetch_size '7');\n\
     create server s2 foreign data wrapper postgres_fdw options (async_capable 'off');\ncreate table pt (a int, b int, c text) partition by hash (a);\n\
     create foreign table p1 partition of pt for values with (modulus 2, remainder 0) server s1 options (table_name 't1');\n\
     create foreign table p2 partition of pt for values with (modulus 2, remainder 1) server s2 options (table_name 't2');\n\
     insert into pt select i % 7, i, 'v' || i from generate_series(1, 40) i;\n-- @query\nselect a, count(*) from pt where b > 3 group by a order by a limit 5;\n",
    "-- @shard s1\ncreate table t1 (a int, b int, c text);\n-- @coordinator\ncreate server s1 foreign data wrapper postgres_fdw options (dbname 'x');\n\
     create table r (a int, b int, c text) partition by range (a);\ncreate table r1 partition of r for values from (minvalue) to (10);\n\
     create foreign table r2 partition of r for values from (10) to (maxvalue) server s1 options (table_name 't1');\n\
     insert into r values (1, 2, 'x'), (11, 12, null), (5, null, 'y');\nset enable_partitionwise_aggregate = on;\n\
     -- @query\n\\set n random(1, 5)\nselect c, b from r where a >= :n order by b desc offset 1 limit 3;\n-- @knobs\nrtt_ms = 2\n",
    "create table l (k int, v text) partition by list (k);\ncreate table l1 partition of l for values in (1, 2);\ncreate table ld partition of l default;\n\
     insert into l select i % 4, to_char(i, 'FM000') from generate_series(0, 20) i;\nselect setseed(0.25);\n-- @query\nselect sum(k), min(v), max(v) from l where k = 1;\n",
];

const TOKENS: &[&str] = &[
    "select",
    "from",
    "where",
    "group by",
    "order by",
    "limit",
    "offset",
    "union all",
    "join",
    "on",
    "(",
    ")",
    ",",
    ";",
    "'",
    "\"",
    "*",
    "count(*)",
    "sum(a)",
    "avg(b)",
    "1",
    "0",
    "-1",
    "99999999999999999999",
    "null",
    "not",
    "and",
    "or",
    "=",
    "<",
    ">=",
    "||",
    "::int",
    "::text",
    "partition of",
    "for values",
    "with (modulus 0, remainder 0)",
    "in (",
    "from (",
    "to (",
    "minvalue",
    "maxvalue",
    "default",
    "server",
    "options",
    "create",
    "table",
    "foreign",
    "insert into",
    "values",
    "generate_series(",
    "random()",
    "\n-- @query\n",
    "\n-- @shard s9\n",
    "\n-- @coordinator\n",
    "\n-- @knobs\n",
    "\n-- @bogus\n",
    ":n",
    "\\set",
    "explain (analyze, verbose)",
    "é",
    "\u{0}",
    "set enable_async_append = off",
    "alter table",
    "attach partition",
    "create index on",
    "analyze",
    "vacuum",
    "to_char(",
    "'FM0'",
];

fn mutate(rng: &mut Rng, base: &str) -> String {
    let mut s: Vec<char> = base.chars().collect();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(s.len() + 1).min(s.len());
        match rng.below(5) {
            0 if !s.is_empty() => {
                let end = (at + 1 + rng.below(12)).min(s.len());
                s.drain(at..end);
            }
            1 => {
                let t = format!(" {} ", rng.pick(TOKENS));
                s.splice(at..at, t.chars());
            }
            2 if !s.is_empty() => {
                let end = (at + rng.below(30)).min(s.len());
                let piece: Vec<char> = s[at..end].to_vec();
                let to = rng.below(s.len() + 1).min(s.len());
                s.splice(to..to, piece);
            }
            3 if at < s.len() => {
                let c = s[at];
                s[at] = if c.is_ascii_digit() {
                    char::from(b'0' + rng.below(10) as u8)
                } else {
                    rng.pick(&["x", "(", "'", "9", " "]).chars().next().unwrap()
                };
            }
            _ => s.truncate(at),
        }
    }
    s.into_iter().collect()
}

/// A statement sequence made of tokens only (mostly nonsense, some valid).
fn generate(rng: &mut Rng) -> String {
    let mut s = String::new();
    for _ in 0..1 + rng.below(30) {
        s.push_str(rng.pick(TOKENS));
        s.push(' ');
    }
    s
}

/// Everything the front end does with a text, end to end; panics propagate.
fn exercise(text: &str) -> bool {
    let Ok(sql) = SqlScenario::load_limited(text, 500) else { return false };
    let Ok(scenario) = sql.scenario(&Knobs::default(), Source::Json) else { return false };
    for async_mode in [false, true] {
        if let Ok(mut run) = scenario.start(async_mode, Clock::virtual_clock(), false) {
            let _ = run.run_to_end();
        }
    }
    true
}

#[test]
fn the_front_end_never_panics() {
    let cases: usize = std::env::var("PGASYNC_SQL_FUZZ").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let seed: u64 = std::env::var("PGASYNC_SQL_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_0009);
    let mut rng = Rng(seed | 1);
    // The bases themselves must run (else the mutations test little).
    for b in BASES {
        assert!(exercise(b), "base scenario fails:\n{b}\n{:?}", SqlScenario::load(b).err());
    }
    let (mut ran, mut generated) = (0usize, 0usize);
    for i in 0..cases {
        let text = if rng.below(4) == 0 {
            generated += 1;
            generate(&mut rng)
        } else {
            let base = BASES[rng.below(BASES.len())];
            mutate(&mut rng, base)
        };
        match catch_unwind(AssertUnwindSafe(|| exercise(&text))) {
            Ok(true) => ran += 1,
            Ok(false) => {}
            Err(_) => panic!("case {i} (seed {seed}) panicked on:\n{text}"),
        }
    }
    println!(
        "sql fuzz: {cases} cases ({generated} generated, {} mutated), {ran} ran end to end, no panic",
        cases - generated
    );
}
