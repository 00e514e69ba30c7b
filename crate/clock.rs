//! The executor's clock. The core never reads a clock itself: time is either virtual
//! (advanced by the cost model and by the simulated network) or read through a
//! function the host provides (`Instant` natively, `performance.now()` in a browser).
//! `CostModel` is the price list of local work that the virtual clock charges.
//!
//! Invariants:
//! - Time never goes backwards: `charge` adds, `advance_to` ignores a time before now.
//! - On the virtual clock, time moves only by `charge` (local work, by the cost model)
//!   and `advance_to` (the host, while the executor waits): the same run gives the same
//!   times to the nanosecond, natively and in wasm32.
//! - On a host clock, `charge` does not move time (real time passes by itself) but is
//!   still counted in `cpu_ns`, so the lower bound of a run (local CPU against the
//!   network) is computed the same way on both clocks.
//! - `async_request_ns` is 0 by default, so the built-in figures are the documented
//!   ones; only the knob `coordinator_async_us` (what `pgasync calibrate` measures)
//!   sets it.
//!
//! Where it departs from PostgreSQL: EXPLAIN ANALYZE reads a real clock
//! (`INSTR_TIME_SET_CURRENT`, `src/include/portability/instr_time.h`) and its
//! planner's costs (`costsize.c`) are unitless estimates, never time. Here the cost
//! model is time on the virtual clock: it is what makes a simulated run's times
//! deterministic.

use std::rc::Rc;

/// Cost of local work, in nanoseconds of virtual time. These figures are the
/// documented cost model of the sandbox: a run on the virtual clock charges them
/// and nothing else, so the same run gives the same times on any machine.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CostModel {
    /// SeqScan: fetch one row from an in-memory heap.
    pub seqscan_row_ns: u64,
    /// Result: evaluate a filter or projection for one row.
    pub result_row_ns: u64,
    /// Aggregate: advance the transition state by one input row.
    pub agg_row_ns: u64,
    /// Sort: per row and per comparison level (n log n is charged).
    pub sort_cmp_ns: u64,
    /// Append / MergeAppend / Limit: pass one row up.
    pub passthrough_row_ns: u64,
    /// HashJoin: build or probe one row.
    pub hashjoin_row_ns: u64,
    /// ForeignScan: turn one DataRow into a tuple (postgres_fdw's make_tuple_from_result_row).
    pub foreign_row_ns: u64,
    /// Handling one protocol message batch (a FETCH result, a CommandComplete).
    pub message_ns: u64,
    /// An asynchronous request (ExecAsyncRequest through the requestor's response),
    /// beyond what the synchronous path costs. Zero by default, so the built-in figures
    /// stay the documented ones; `pgasync calibrate --live` measures pgasync's own.
    pub async_request_ns: u64,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            seqscan_row_ns: 40,
            result_row_ns: 15,
            agg_row_ns: 25,
            sort_cmp_ns: 10,
            passthrough_row_ns: 5,
            hashjoin_row_ns: 60,
            foreign_row_ns: 120,
            message_ns: 2_000,
            async_request_ns: 0,
        }
    }
}

/// Where time comes from.
#[derive(Clone)]
pub enum Clock {
    /// Virtual nanoseconds. Local work advances it by the cost model; the simulated
    /// network advances it when the executor waits.
    Virtual { now: u64, cpu: u64 },
    /// Real time read through the host's function; charges only count CPU for the bound.
    Host { read: Rc<dyn Fn() -> u64>, cpu: u64 },
}

impl Clock {
    pub fn virtual_clock() -> Clock {
        Clock::Virtual { now: 0, cpu: 0 }
    }
    pub fn from_host(read: Box<dyn Fn() -> u64>) -> Clock {
        Clock::Host { read: Rc::from(read), cpu: 0 }
    }
    /// Virtual time: local work takes exactly what the cost model charges.
    pub fn is_virtual(&self) -> bool {
        matches!(self, Clock::Virtual { .. })
    }
    #[inline]
    pub fn now(&self) -> u64 {
        match self {
            Clock::Virtual { now, .. } => *now,
            Clock::Host { read, .. } => read(),
        }
    }
    /// Charges local CPU work.
    #[inline]
    pub fn charge(&mut self, ns: u64) {
        match self {
            Clock::Virtual { now, cpu } => {
                *now += ns;
                *cpu += ns;
            }
            Clock::Host { cpu, .. } => *cpu += ns,
        }
    }
    /// Total local CPU charged by the cost model (the "local CPU" resource of the bound).
    pub fn cpu_ns(&self) -> u64 {
        match self {
            Clock::Virtual { cpu, .. } | Clock::Host { cpu, .. } => *cpu,
        }
    }
    /// Moves virtual time forward to `t` (the host does this while waiting). No-op on
    /// a real clock, and time never goes backwards.
    pub fn advance_to(&mut self, t: u64) {
        if let Clock::Virtual { now, .. } = self {
            if t > *now {
                *now = t;
            }
        }
    }
}
