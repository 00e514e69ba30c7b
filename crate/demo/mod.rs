//! The teaching demo built on the model: what the page and the workshop add to a run.
//!
//! * [`session`]: a steppable, seekable run of one query (`DemoSession`) with
//!   snapshots the page draws;
//! * [`lesson`]: the guided lessons (notes tied to trace events, the answers checked);
//! * [`breakpoint`]: what "Run to" can stop at;
//! * [`export`]: a run written out (the trace as JSON or CSV, EXPLAIN as text or JSON,
//!   the timeline as SVG), the same bytes from the page and from `pgasync trace`;
//! * [`trace_pack`]: a run's trace as numbers, for the page's recording;
//! * [`wasm_api`]: the JavaScript face of all of the above (wasm-bindgen).
//!
//! Invariants:
//! - Nothing here changes how a query runs. A demo run is started from the same run
//!   description (`scenario::Scenario`) and the same `Scenario::start_on` (through
//!   `Scenario::start`, or directly for live runs) as every other run, so what the page
//!   shows is what the CLI and the tests run.
//! - The model never imports this folder (`crate::demo`): the dependency goes one way.
//! - Everything here is deterministic on the virtual clock (history is replay).
//!
//! PostgreSQL has no counterpart: this is the teaching layer. It names PostgreSQL's
//! functions (breakpoints, lesson notes) but implements none of them.

pub mod breakpoint;
pub mod export;
pub mod lesson;
pub mod session;
pub mod trace_pack;
pub mod wasm_api;
