//! Native only as a binary of its own: its counting allocator counts every thread's
//! allocations, and the suite (tests/suite) runs its tests on parallel threads; on wasm32
//! (one thread, one test at a time) the same file is a module of the suite.
#![cfg(not(target_arch = "wasm32"))]

#[path = "suite/hot_path.rs"]
mod hot_path;
