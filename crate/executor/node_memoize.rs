//! Memoize (nodeMemoize.c): a cache, keyed by a Nested Loop's parameter, of the rows
//! its parameterized child (an Index Scan probing by the outer row's key) returns,
//! so that an outer row whose key was seen before is answered from the cache without
//! running the child again.
//!
//! The protocol, as `ExecMemoize` runs it (its `mstatus`):
//!
//! 1. **Lookup** (`MEMO_CACHE_LOOKUP`), at a pass's first call: the parameter's value
//!    (`EState::nest_params[n]`, which the Nested Loop set from the outer row before
//!    the rescan) is looked up. A complete entry is a *hit*: its rows are returned
//!    (`MEMO_CACHE_FETCH_NEXT_TUPLE`) and the child is not touched. Otherwise a *miss*:
//!    a new entry for the key, and the child (rescanned if it ran before: its
//!    parameter changed) is read.
//! 2. **Filling** (`MEMO_FILLING_CACHE`): each row the child returns is stored in the
//!    entry and returned; at the child's end the entry is marked complete.
//! 3. **End of scan** (`MEMO_END_OF_SCAN`) until the next rescan.
//!
//! Invariants:
//! - a key's rows come out the same whether from the child or the cache, in the
//!   child's order; only a complete entry is ever a hit (a pass left before its end,
//!   by a rescan, drops its entry, as `cache_lookup` would find it incomplete);
//! - the child runs only on misses (its loops in EXPLAIN ANALYZE are the misses);
//! - a NULL key is a key like any other (its entry holds no rows: `=` matches none).
//!
//! EXPLAIN: `Cache Key:` (the outer column), `Cache Mode: logical` (the join's `=` is
//! hashable: keys compared by equality, not bit by bit), and with ANALYZE once the
//! child ran, `Hits: N  Misses: N  Evictions: N  Overflows: N  Memory Usage: NkB`.
//!
//! Where it departs from PostgreSQL: entries live in a list searched in order, not a
//! hash table; the cache is never full (no LRU eviction at `hash_mem`: Evictions and
//! Overflows stay 0); the memory counted is each entry's key and rows as
//! `relation_byte_size` sizes them with the entry's overheads, not the allocator's
//! chunks, so `Memory Usage` may differ from PostgreSQL's by a kilobyte or so.

use super::{exec_proc_node, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::types::Datum;

/// One cache entry (`MemoizeEntry`): a key and the rows the child returned for it.
#[derive(Clone)]
struct Entry {
    key: Datum,
    rows: Vec<Vec<Datum>>,
    /// The child reached its end for this key (`entry->complete`).
    complete: bool,
}

/// Where the current pass is (`mstatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Lookup,
    /// Returning the rows of entry `.0` from position `.1`.
    FetchNext(usize, usize),
    /// Reading the child into entry `.0`.
    Filling(usize),
    EndOfScan,
}

#[derive(Clone)]
pub struct MemoizeState {
    children: Vec<PlanState>,
    /// The Nested Loop parameter the child reads (`EState::nest_params`).
    param: usize,
    cache_key: String,
    entries: Vec<Entry>,
    status: Status,
    /// The child ran since its last rescan.
    child_dirty: bool,
    hits: u64,
    misses: u64,
    /// Bytes the entries take (`mem_used`).
    mem_used: u64,
    slot: Vec<Datum>,
}

impl MemoizeState {
    pub fn init(child: PlanState, param: usize, cache_key: String) -> Self {
        MemoizeState {
            children: vec![child],
            param,
            cache_key,
            entries: Vec::new(),
            status: Status::Lookup,
            child_dirty: false,
            hits: 0,
            misses: 0,
            mem_used: 0,
            slot: Vec::new(),
        }
    }

    /// The bytes one row or key takes in the cache: its values' sizes and a
    /// MemoizeTuple's header.
    fn row_bytes(row: &[Datum]) -> u64 {
        16 + row.iter().map(datum_bytes).sum::<u64>()
    }

    /// `cache_lookup`: a hit on a complete entry, else a new entry for the key (a
    /// stale incomplete one dropped first).
    fn lookup(&mut self, es: &mut EState) -> ExecResult<()> {
        let key = es.nest_params.get(self.param).cloned().unwrap_or(Datum::Null);
        if let Some(at) = self.entries.iter().position(|e| e.key == key && e.complete) {
            self.hits += 1;
            self.status = Status::FetchNext(at, 0);
            return Ok(());
        }
        self.drop_incomplete();
        self.misses += 1;
        // A MemoizeEntry and a MemoizeKey, and the key itself.
        self.mem_used += 48 + datum_bytes(&key);
        self.entries.push(Entry { key, rows: Vec::new(), complete: false });
        if self.child_dirty {
            exec_rescan(&mut self.children[0], es)?;
        }
        self.child_dirty = true;
        self.status = Status::Filling(self.entries.len() - 1);
        Ok(())
    }

    /// An entry whose pass was left before the child's end cannot answer a hit.
    fn drop_incomplete(&mut self) {
        if let Some(at) = self.entries.iter().position(|e| !e.complete) {
            let e = self.entries.remove(at);
            let bytes = 48 + datum_bytes(&e.key) + e.rows.iter().map(|r| Self::row_bytes(r)).sum::<u64>();
            self.mem_used = self.mem_used.saturating_sub(bytes);
        }
    }
}

/// A value's size in the cache (an int4's 4 bytes, a text's length and header, …).
fn datum_bytes(d: &Datum) -> u64 {
    match d {
        Datum::Null => 0,
        Datum::Text(s) => 4 + s.len() as u64,
        _ => 8,
    }
}

impl ExecNode for MemoizeState {
    /// ExecMemoize.
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if self.status == Status::Lookup {
            self.lookup(es)?;
        }
        match self.status {
            Status::FetchNext(at, pos) => {
                let Some(row) = self.entries[at].rows.get(pos) else {
                    self.status = Status::EndOfScan;
                    return Ok(ExecStatus::Done);
                };
                super::copy_row(&mut self.slot, row);
                self.status = Status::FetchNext(at, pos + 1);
                Ok(ExecStatus::Row)
            }
            Status::Filling(at) => match exec_proc_node(&mut self.children[0], es)? {
                ExecStatus::Row => {
                    let row = self.children[0].node.slot().to_vec();
                    super::copy_row(&mut self.slot, &row);
                    self.mem_used += Self::row_bytes(&row);
                    self.entries[at].rows.push(row);
                    Ok(ExecStatus::Row)
                }
                ExecStatus::Done => {
                    self.entries[at].complete = true;
                    self.status = Status::EndOfScan;
                    Ok(ExecStatus::Done)
                }
                ExecStatus::Wait => Ok(ExecStatus::Wait),
            },
            Status::Lookup | Status::EndOfScan => Ok(ExecStatus::Done),
        }
    }

    /// ExecReScanMemoize: the next call looks the (new) parameter up; the child is
    /// rescanned only on a miss.
    fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
        self.status = Status::Lookup;
        Ok(())
    }

    fn exec_end(&mut self, es: &mut EState) {
        super::exec_end_node(&mut self.children[0], es);
    }

    fn slot(&self) -> &[Datum] {
        &self.slot
    }

    fn children(&self) -> &[PlanState] {
        &self.children
    }

    /// show_memoize_info.
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Memoize".into();
        e.details.push(("Cache Key".into(), self.cache_key.clone()));
        e.details.push(("Cache Mode".into(), "logical".into()));
        if self.misses > 0 {
            let kb = self.mem_used.div_ceil(1024);
            let line =
                format!("{}  Misses: {}  Evictions: 0  Overflows: 0  Memory Usage: {kb}kB", self.hits, self.misses);
            e.details.push(("Hits".into(), line));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::executor::test_rows::empty_explain;

    /// A parameterized child: each pass returns the rows of `table` whose first
    /// column equals `nest_params[0]`.
    #[derive(Clone)]
    struct Probe {
        table: Vec<(i64, i64)>,
        next: usize,
        slot: Vec<Datum>,
    }

    impl ExecNode for Probe {
        fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
            let key = es.nest_params[0].clone();
            while let Some(&(k, v)) = self.table.get(self.next) {
                self.next += 1;
                if Datum::Int(k) == key {
                    self.slot = vec![Datum::Int(k), Datum::Int(v)];
                    return Ok(ExecStatus::Row);
                }
            }
            self.next = usize::MAX;
            Ok(ExecStatus::Done)
        }
        fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
            self.next = 0;
            Ok(())
        }
        fn exec_end(&mut self, _es: &mut EState) {}
        fn slot(&self) -> &[Datum] {
            &self.slot
        }
        fn explain(&self, _e: &mut ExplainNode) {}
    }

    #[test]
    fn repeated_keys_are_answered_from_the_cache() {
        let mut es = EState::new(Clock::virtual_clock(), vec![], false, true);
        es.instr.push(Default::default());
        es.instr.push(Default::default());
        es.nest_params = vec![Datum::Null];
        let probe = Probe { table: vec![(1, 10), (2, 20), (1, 11), (3, 30)], next: 0, slot: vec![] };
        let mut m = MemoizeState::init(PlanState { id: 1, node: Box::new(probe) }, 0, "o.k".into());
        let mut out = vec![];
        for (pass, key) in [1, 2, 1, 1, 4, 2].into_iter().enumerate() {
            es.nest_params[0] = Datum::Int(key);
            if pass > 0 {
                m.exec_rescan(&mut es).unwrap();
            }
            let mut rows = vec![];
            while m.exec_next(&mut es).unwrap() == ExecStatus::Row {
                rows.push(m.slot()[1].clone());
            }
            out.push(rows);
        }
        let ints = |v: &[i64]| v.iter().map(|&i| Datum::Int(i)).collect::<Vec<_>>();
        assert_eq!(out, vec![ints(&[10, 11]), ints(&[20]), ints(&[10, 11]), ints(&[10, 11]), vec![], ints(&[20])]);
        assert_eq!((m.hits, m.misses), (3, 3));
        let mut e = empty_explain();
        m.explain(&mut e);
        assert_eq!(e.node_type, "Memoize");
        assert!(e.detail("Hits").is_some_and(|h| h.starts_with("3  Misses: 3  Evictions: 0")));
    }

    #[test]
    fn datum_sizes_count_text_by_length() {
        assert_eq!(datum_bytes(&Datum::Null), 0);
        assert_eq!(datum_bytes(&Datum::Text(std::rc::Rc::new("abc".to_string()))), 7);
        assert_eq!(MemoizeState::row_bytes(&[Datum::Int(1), Datum::Null]), 24);
    }
}
