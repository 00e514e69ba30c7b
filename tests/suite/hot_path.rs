//! DESIGN §2: rows are not allocated per tuple on the hot path. A counting allocator
//! compares whole runs of E (sync, and async: Append's request rounds, one a row) at
//! two sizes, each shard's rows in one batch: what grows with the rows is per-row work.
//! Allocations that only double a buffer grow with the logarithm of the rows.

use pgasync::clock::Clock;
use pgasync::knobs::Knobs;
use pgasync::scenario::Scenario;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use wasm_bindgen_test::wasm_bindgen_test;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded to the system allocator with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations of one run (built outside the count), E with `rows` per shard.
fn allocations(rows: usize, async_mode: bool) -> u64 {
    let k = Knobs { shards: Some(4), rows_per_shard: Some(rows), fetch_size: Some(100_000), ..Default::default() };
    let s = Scenario::build("E", &k).unwrap();
    let mut run = s.start(async_mode, Clock::virtual_clock(), false).unwrap();
    run.keep_rows = false;
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    run.run_to_end().unwrap();
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[wasm_bindgen_test(unsupported = test)]
fn no_allocation_per_row_sync_or_async() {
    for async_mode in [false, true] {
        let (small, large) = (allocations(5_000, async_mode), allocations(20_000, async_mode));
        let per_row = large.saturating_sub(small) as f64 / (4.0 * 15_000.0);
        assert!(per_row < 0.01, "async={async_mode}: {small} → {large} allocations, {per_row:.3} a row");
    }
}
