//! The teaching demo built on the model: what the page and the workshop add to a run.
//!
//! * [`session`]: a steppable, seekable run of one query (`DemoSession`) with
//!   snapshots the page draws;
//! * [`lesson`]: the guided lessons (notes tied to trace events, the answers checked);
//! * [`breakpoint`]: what "Run to" can stop at;
//! * [`export`]: a run written out (trace, EXPLAIN, the comparison) for the workshop;
//! * [`wasm_api`]: the JavaScript face of all of the above (wasm-bindgen).
//!
//! Invariants: nothing here changes how a query runs. A demo run is started from the
//! same run description (`scenario::Scenario`) and the same `Scenario::start_on` as
//! every other run, so what the page shows is what the CLI and the tests run.
//! Everything here is deterministic on the virtual clock (history is replay).

pub mod breakpoint;
pub mod export;
pub mod lesson;
pub mod session;
pub mod wasm_api;
