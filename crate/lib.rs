//! pgasync: a sandbox for PostgreSQL-style asynchronous query execution.
//!
//! The crate root holds two kinds of module. The model: `types`, `clock`, `trace`,
//! `plan`, `executor`, `remote`, `host`, `sim`, `shard_sql`, `coordinator_sql`,
//! `sql_text`, `instrument`, `run`, `scenario`, `knobs`, `behaviour`. The teaching demo
//! built on it: `demo` (session, lesson, breakpoint, export, wasm_api).
//!
//! The core is sans-IO: it never opens a socket, sleeps or reads a clock. A host
//! (`host::sim::SimHost` for simulated shards, `host::tcp` natively, `host::ws` in the
//! browser) moves bytes and time; the executor returns Wait when it cannot progress.
//!
//! Invariants:
//! - Only `host::tcp`, `host::ws` and `demo::wasm_api` touch sockets or read a real
//!   clock; everything else takes time from `clock::Clock`, so a run on the virtual
//!   clock is the same run natively, in Node and in a browser.
//! - The model never imports `demo`: the page can only show what a model run does.
//! - No re-export aliases here: a module's path is the folder it lives in.
//!
//! PostgreSQL has no counterpart to the crate as a whole: it is one backend's executor
//! and postgres_fdw, and each module's doc names the PostgreSQL file it follows.

pub mod behaviour;
pub mod clock;
pub mod coordinator_sql;
pub mod demo;
pub mod executor;
pub mod host;
pub mod instrument;
pub mod knobs;
pub mod numeric;
pub mod numeric_typmod;
pub mod plan;
pub mod remote;
pub mod run;
pub mod scenario;
pub mod shard_sql;
pub mod sim;
pub mod sql_text;
pub mod trace;
pub mod types;

// On wasm32 the core's suite (tests/suite/main.rs, natively `--test suite`) is compiled
// into the library's unit-test binary: `make test-wasm` then compiles the library once,
// with its tests, instead of a second time as the suite's dependency (issue 20: a third
// of that build). Its tests reach the library as `pgasync::…` either way.
#[cfg(all(test, target_arch = "wasm32"))]
extern crate self as pgasync;
#[cfg(all(test, target_arch = "wasm32"))]
#[path = "../tests/suite/main.rs"]
mod suite;
