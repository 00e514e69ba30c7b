//! Planning time of the join search (issue 23: `coordinator_sql::joinrels`), natively:
//! stars and chains of 4, 6, 8, 10 and 11 relations, each planned several times; prints
//! the thread's CPU time of a planning, median and least, the median's wall time, and
//! the paths the join search costed (what `MAX_PATHS_COSTED` bounds)
//! (parse, join search, upper levels: what `SqlScenario::plan` does, which is what the
//! page runs on its main thread in wasm).
//!
//!     cargo run --release --example join_search_bench [-- RUNS]
//!
//! The shapes (local tables, analyzed, each with an index on its join column so that
//! every method and the parameterized index paths are searched):
//! - star N: a fact table joined to N-1 dimension tables, each on a column of its own
//!   (`f.dK = dK.k`): every dimension joins the fact table only, so the search meets
//!   every subset holding the fact table (the widest search of N relations with a
//!   join clause each);
//! - chain N: `cK.k = c(K-1).v`: each relation joins its neighbours only;
//! - star N on foreign tables: the star with its dimensions on a postgres_fdw server
//!   (the fact table local), which adds postgres_fdw's join paths where two relations
//!   share a server (never here: each foreign dimension joins the local fact table).
//!
//! The collapse limits are raised to 12 so that each query is one search of all its
//! relations (below `geqo_threshold`, 12: PostgreSQL's exhaustive search too).
//!
//! Not a test: a wall-clock figure depends on the machine; the tests check the plans.

use pgasync::coordinator_sql::SqlScenario;
use std::time::Instant;

const SIZES: [usize; 5] = [4, 6, 8, 10, 11];

fn setup(dims: usize, foreign: bool) -> String {
    let mut s = String::new();
    if foreign {
        s.push_str("-- @shard s1\n");
        for k in 1..dims {
            s.push_str(&format!("create table d{k} (k int, t text);\n"));
            s.push_str(&format!("insert into d{k} select i, 't' || i from generate_series(1, {}) i;\n", 20 + 7 * k));
        }
    }
    s.push_str("-- @coordinator\n");
    if foreign {
        s.push_str("create extension postgres_fdw;\n");
        s.push_str("create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres');\n");
        s.push_str("create user mapping for public server s1;\n");
    }
    let fact_cols: Vec<String> = (1..dims).map(|k| format!("d{k} int")).collect();
    s.push_str(&format!("create table f (id int, {}, v int);\n", fact_cols.join(", ")));
    let fact_vals: Vec<String> = (1..dims).map(|k| format!("i % {}", 20 + 7 * k)).collect();
    s.push_str(&format!("insert into f select i, {}, i from generate_series(1, 2000) i;\n", fact_vals.join(", ")));
    for k in 1..dims {
        if foreign {
            s.push_str(&format!("create foreign table d{k} (k int, t text) server s1;\n"));
        } else {
            s.push_str(&format!("create table d{k} (k int, t text);\n"));
            s.push_str(&format!("insert into d{k} select i, 't' || i from generate_series(1, {}) i;\n", 20 + 7 * k));
            s.push_str(&format!("create index on d{k} (k);\n"));
            s.push_str(&format!("analyze d{k};\n"));
        }
    }
    s.push_str("analyze f;\n");
    // One search over all the relations (PostgreSQL's default collapse limits, 8,
    // would split a FROM list of ten into subproblems).
    s.push_str("set from_collapse_limit = 12;\nset join_collapse_limit = 12;\n");
    // The chain's tables.
    for k in 1..=dims {
        s.push_str(&format!("create table c{k} (k int, v int);\n"));
        s.push_str(&format!(
            "insert into c{k} select i % {}, i from generate_series(1, {}) i;\n",
            50 + 10 * k,
            100 * k
        ));
        s.push_str(&format!("create index on c{k} (k);\nanalyze c{k};\n"));
    }
    s
}

fn star(n: usize) -> String {
    let from: Vec<String> = std::iter::once("f".to_string()).chain((1..n).map(|k| format!("d{k}"))).collect();
    let on: Vec<String> = (1..n).map(|k| format!("f.d{k} = d{k}.k")).collect();
    let select: Vec<String> = std::iter::once("f.id".to_string()).chain((1..n).map(|k| format!("d{k}.t"))).collect();
    format!("select {} from {} where {};", select.join(", "), from.join(", "), on.join(" and "))
}

fn chain(n: usize) -> String {
    let from: Vec<String> = (1..=n).map(|k| format!("c{k}")).collect();
    let on: Vec<String> = (2..=n).map(|k| format!("c{k}.k = c{}.v", k - 1)).collect();
    format!("select count(*), sum(c{n}.v) from {} where {};", from.join(", "), on.join(" and "))
}

/// The CPU time this thread has used, in milliseconds (a loaded machine's wall clock
/// counts the other processes' turns too).
fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given, nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1.0e6
}

/// Each of `runs` plannings of `query` (after a first, warming one) as (CPU ms, wall
/// ms), sorted by CPU time, and the paths its join search costed; or the error the
/// planner gave, with those paths.
fn plan_times(world: &SqlScenario, query: &str, runs: usize) -> Result<(Vec<(f64, f64)>, usize), (String, usize)> {
    let paths = pgasync::coordinator_sql::planner::last_search_paths_costed;
    let s = world.with_query(&format!("{query}\n")).map_err(|e| (e.to_string(), 0))?;
    s.plan().map_err(|e| (e.to_string(), paths()))?;
    let mut times = vec![];
    for _ in 0..runs {
        let (cpu, wall) = (thread_cpu_ms(), Instant::now());
        let planned = s.plan().map_err(|e| (e.to_string(), paths()))?;
        times.push((thread_cpu_ms() - cpu, wall.elapsed().as_secs_f64() * 1000.0));
        std::hint::black_box(planned);
    }
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok((times, paths()))
}

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5).max(1);
    let max = *SIZES.iter().max().unwrap_or(&10);
    println!("join search planning time, native ({runs} runs each, ms: the thread's CPU time, median and least; the median's wall time)");
    println!("{:<24} {:>10} {:>10} {:>10} {:>8}", "query", "cpu median", "cpu least", "wall", "paths");
    for foreign in [false, true] {
        let world = match SqlScenario::load(&format!("{}-- @query\nselect 1;\n", setup(max, foreign))) {
            Ok(w) => w,
            Err(e) => {
                eprintln!("setup: {e}");
                std::process::exit(1);
            }
        };
        let shapes: Vec<(&str, fn(usize) -> String)> =
            if foreign { vec![("star (foreign dims)", star)] } else { vec![("star", star), ("chain", chain)] };
        for (name, shape) in shapes {
            for n in SIZES {
                let label = format!("{name} {n}");
                match plan_times(&world, &shape(n), runs) {
                    Ok((t, paths)) => {
                        let median = t[t.len() / 2];
                        println!("{label:<24} {:>10.2} {:>10.2} {:>10.2} {paths:>8}", median.0, t[0].0, median.1)
                    }
                    Err((e, paths)) => println!("{label:<24} refused after {paths} paths: {e}"),
                }
            }
        }
    }
}
