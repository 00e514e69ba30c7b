//! Loads built-in scenario files (issue 20: the cost of a load, for callgrind):
//!
//!     cargo run --example load_file [-- ID…]
//!     valgrind --tool=callgrind target/debug/examples/load_file t0
//!
//! With no id every file of `SCENARIO_FILES` is loaded once; each load's rows and wall
//! time go to stderr. `--fingerprint` prints instead a hash of everything each load
//! leaves (the cluster's Debug: rows, their order, tids, indexes; the log; the errors
//! of loads with small row limits, and of a few routing errors): two builds that print
//! the same lines loaded the same.

use pgasync::coordinator_sql::script::{SqlLoad, SqlScenario, SCENARIO_FILES};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Instant;

/// Routing's cases beside the files': hash, list and default partitions, foreign
/// tables whose remote table or column is missing, a row no partition takes.
const ROUTING: &[(&str, &str)] = &[
    (
        "list",
        "create table l (a int, b text) partition by list (a);\ncreate table l1 partition of l for values in (1, 2);\n\
         create table ld partition of l default;\ninsert into l select i % 5, i::text from generate_series(1, 50) i;\n\
         insert into l values (null, 'x'), (2, 'y');\n",
    ),
    (
        "hash",
        "create table h (a int, b int) partition by hash (a);\n\
         create table h0 partition of h for values with (modulus 3, remainder 0);\n\
         create table h1 partition of h for values with (modulus 3, remainder 1);\n\
         create table h2 partition of h for values with (modulus 3, remainder 2);\n\
         insert into h select i, i * 2 from generate_series(1, 300) i;\n",
    ),
    (
        "nopart",
        "create table r (a int) partition by range (a);\ncreate table r1 partition of r for values from (0) to (10);\n\
         insert into r select i from generate_series(0, 20) i;\n",
    ),
    (
        "noremote",
        "-- @shard s1\ncreate table t (a int);\n-- @coordinator\ncreate extension postgres_fdw;\n\
         create server s1 foreign data wrapper postgres_fdw;\ncreate foreign table f (a int) server s1 options (table_name 'u');\n\
         insert into f select i from generate_series(1, 5) i;\n",
    ),
    (
        "nocolumn",
        "-- @shard s1\ncreate table t (a int);\n-- @coordinator\ncreate extension postgres_fdw;\n\
         create server s1 foreign data wrapper postgres_fdw;\ncreate foreign table f (a int, b int) server s1 options (table_name 't');\n\
         insert into f select i, i from generate_series(1, 5) i;\n",
    ),
    (
        "noshard",
        "create extension postgres_fdw;\ncreate server s9 foreign data wrapper postgres_fdw;\n\
         create foreign table f (a int) server s9 options (table_name 't');\ninsert into f values (1);\n",
    ),
    (
        "assign",
        "create table t (a int, b text);\ninsert into t select i, i from generate_series(1, 3) i;\n\
         insert into t values (1, 'a'), (null, null), ('2', 3);\ninsert into t select 'x' || i from generate_series(1, 3) i;\n",
    ),
    (
        "where",
        "create table t (a bigint, b text, c text, d numeric);\n\
         insert into t select i, to_char(i, '9909'), to_char(-i, 'FM000'), i::numeric / 7 \
         from generate_series(-2000, 2000, 3) i where i % 5 <> 1;\n\
         insert into t select i * 1000000000000, i::text, (i * 0.5)::text, i from generate_series(-5, 5) i;\n",
    ),
];

fn main() {
    let mut ids: Vec<String> = std::env::args().skip(1).collect();
    let fingerprint = ids.iter().any(|a| a == "--fingerprint");
    ids.retain(|a| a != "--fingerprint");
    let files = SCENARIO_FILES.iter().chain(if fingerprint { ROUTING } else { &[] });
    for (id, text) in files {
        if !ids.is_empty() && !ids.iter().any(|i| i == id) {
            continue;
        }
        if fingerprint {
            let mut h = DefaultHasher::new();
            format!("{:?}", SqlScenario::load(text)).hash(&mut h);
            for rows in [0, 1, 999, 5000] {
                format!("{:?}", SqlScenario::load_limited(text, rows).map(|s| s.log)).hash(&mut h);
            }
            // In slices of 100 units: how many calls, and the rows after each.
            let mut progress = vec![];
            if let Ok(mut load) = SqlLoad::new(text, pgasync::coordinator_sql::catalog::Limits::SANDBOX) {
                loop {
                    match load.advance(100) {
                        Ok(false) => progress.push(load.rows()),
                        Ok(true) => break,
                        Err(e) => {
                            format!("{e:?}").hash(&mut h);
                            break;
                        }
                    }
                }
            }
            progress.hash(&mut h);
            if std::env::var("SHOW").is_ok() {
                eprintln!("{id}: {:?}", SqlScenario::load(text).map(|s| s.log));
            }
            println!("{id}: {:016x} ({} slices)", h.finish(), progress.len());
            continue;
        }
        let t = Instant::now();
        let s = SqlScenario::load(text).expect("the file loads");
        eprintln!("{id}: {} rows in {:?}", s.cluster.total_rows, t.elapsed());
    }
}
