//! What a Sort's EXPLAIN ANALYZE says of its tuplesort (`Sort Method: quicksort
//! Memory: 25kB`, `Sort Method: top-N heapsort  Memory: 33kB`): PostgreSQL 15's
//! memory accounting (tuplesort.c's `USEMEM`/`FREEMEM` of `GetMemoryChunkSpace`)
//! replayed over the rows the Sort was given, in the order it was given them.
//!
//! The accounting, as tuplesort.c and the memory contexts under it do it:
//!
//! | what | bytes counted |
//! |---|---|
//! | the `SortTuple` array (`memtuples`) | 1024 entries of 24 bytes (`INITIAL_MEMTUPSIZE`), one AllocSet chunk over 8 kB: its size + a 16-byte header; doubled (`grow_memtuples`) when the tuples reach one less than its size |
//! | a tuple (`copytup_heap`: a MinimalTuple, `t_len` = the heap tuple's length − 8) | in a Generation context (`MAXALIGN(t_len)` + a 24-byte header), or an AllocSet when the sort may be bounded (`TUPLESORT_ALLOWBOUNDED`: a Limit above set a bound; the power of two ≥ `t_len`, at least 8, + 16) |
//! | a Datum sort (nodeSort.c's `datumSort`: one output column of a pass-by-value type) | nothing per row: the value lives in the `SortTuple` |
//!
//! A bounded sort (`tuplesort_set_bound`, from `ExecSetTupleBound`) keeps every tuple
//! until it holds more than twice the bound; the next one turns the array into a heap
//! of `bound` tuples (`make_bounded_heap`): a tuple not below the heap's top is freed,
//! one below it replaces the top, *which is not freed* (it stays counted until the
//! sort ends). From then on each tuple either is freed or replaces the top, which is
//! freed. The method is then `top-N heapsort`; a bounded sort that never grew past twice
//! its bound is a `quicksort` (in an AllocSet all the same).
//!
//! EXPLAIN prints the space in use when it asks (`tuplesort_get_stats`), rounded up
//! to kB. Comparisons are the Sort's own ([`compare_rows`]); ties are equal, as
//! tuplesort's `comparetup_heap` finds them.
//!
//! A tuple is laid out as PostgreSQL's is: its columns in PostgreSQL's target-list
//! order (`tlist_order`), with the columns PostgreSQL keeps that the sandbox's rows
//! drop (a SetOp's flag), each of the type the planner gives it (`plan::costsize`'s
//! `output_types`: a relation's column's, an expression's `exprType`).
//!
//! **Past `work_mem`** (`allowedMem`, at least 64 kB) the replay follows tuplesort.c
//! onto tapes: `puttuple_common` switches when a put leaves `availMem` negative or the
//! array full after `grow_memtuples` (which doubles while at most half the memory is
//! used, then grows once by the ratio of the memory allowed to the memory used);
//! `inittapes` takes `tuplesort_merge_order` tapes (at least 6), charging their
//! buffers only when they and the array fit; `dumptuples` writes each run sorted to
//! the next tape (round robin once every tape has a run) and frees its tuples. On
//! tape a tuple is its length word and the MinimalTuple's body (`writetup_heap`: its
//! `t_len` less 10, plus 4), a pass-by-value Datum its length word and 8 bytes, a run
//! ends with a zero word (`markrunend`). logtape.c lays the bytes into 8 kB blocks of
//! 8176 payload bytes (a 16-byte trailer), each tape taking the lowest free block or
//! a new one as it fills one (`ltsGetFreeBlock`; a serial sort does not preallocate).
//! When there are more runs than tapes, `mergeruns`' balanced merge passes are
//! replayed too: the input tapes read through buffers of `merge_read_buffer_size`
//! (blocks freed as they are read), the output tapes written as the merge heap
//! (tuplesort's, the same sift steps) emits tuples. The last pass merges on the fly
//! (`TSS_FINALMERGE`, no more writes), and EXPLAIN prints the blocks the tape set's
//! file grew to (`LogicalTapeSetBlocks` × BLCKSZ, in kB): `external merge  Disk:
//! 88kB`.
//!
//! Where it departs from PostgreSQL: the sandbox's sort itself is in memory and
//! stable; the replay only computes what tuplesort.c would report. A sort that needs
//! random access (under a Merge Join's mark and restore) would write a trailing length
//! word and freeze its last run (`external sort`): the sandbox's Sort does not know
//! its parent's flags, and replays a sort without random access. Tied rows within a
//! run keep the sandbox's stable order, where PostgreSQL's quicksort leaves it open:
//! when tied rows differ in size (a column that is not a key), a multi-pass merge's
//! block boundaries may fall elsewhere. A value's size is its stored (packed) size, which is
//! what a MinimalTuple holds; a column whose type the planner does not know (a
//! boolean, a partial aggregate's serialized state) is sized by its value (an integer
//! as int8); a Sort key that is an expression is evaluated on the fly, where
//! PostgreSQL's input computes it as a resjunk column the tuple holds.

use super::node_sort::compare_rows;
use crate::plan::stats::{fixed, tuple_len};
use crate::plan::{SortKey, SqlType};
use crate::types::Datum;
use std::cmp::Ordering;

/// `INITIAL_MEMTUPSIZE`.
const INITIAL_MEMTUPSIZE: usize = 1024;
/// `sizeof(SortTuple)`.
const SORT_TUPLE: usize = 24;
/// A MinimalTuple is a heap tuple without its first 8 bytes (`MINIMAL_TUPLE_OFFSET`).
const MINIMAL_TUPLE_OFFSET: usize = 8;

/// The method EXPLAIN names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortMethod {
    Quicksort,
    TopNHeapsort,
    /// Runs on tapes merged on the fly (`TSS_FINALMERGE`).
    ExternalMerge,
}

impl SortMethod {
    pub fn name(self) -> &'static str {
        match self {
            SortMethod::Quicksort => "quicksort",
            SortMethod::TopNHeapsort => "top-N heapsort",
            SortMethod::ExternalMerge => "external merge",
        }
    }
}

/// A finished sort's method and space in kB (memory, or disk for an external sort),
/// as `show_sort_info` prints them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortSpace {
    pub method: SortMethod,
    pub kb: u64,
}

impl SortSpace {
    /// The TEXT line's value: `quicksort  Memory: 25kB`, `external merge  Disk: 88kB`.
    pub fn text(&self) -> String {
        let space = if self.method == SortMethod::ExternalMerge { "Disk" } else { "Memory" };
        format!("{}  {space}: {}kB", self.method.name(), self.kb)
    }
}

/// The rows a sort was given (`width` values each, packed in `rows`, in input order),
/// their column types where known, the sort's keys and its bound.
pub struct SortInput<'a> {
    pub rows: &'a [Datum],
    pub width: usize,
    pub types: &'a [Option<SqlType>],
    pub keys: &'a [SortKey],
    pub bound: Option<u64>,
    /// The columns in the order PostgreSQL's tuples hold them (`tlist_order`; empty:
    /// the rows' own): alignment padding depends on it.
    pub order: &'a [usize],
    /// Columns PostgreSQL's tuples hold after those (`tlist_order::junk_columns`: a
    /// SetOp's flag), never null.
    pub junk: &'a [SqlType],
    /// `work_mem` in kB (tuplesort's `allowedMem` is at least 64 kB of it).
    pub work_mem_kb: u64,
}

/// `BLCKSZ`: a tape block.
const BLCKSZ: usize = 8192;
/// A block's payload: BLCKSZ less its `TapeBlockTrailer` (two longs).
const TAPE_PAYLOAD: usize = BLCKSZ - 16;
/// `MINORDER`, `MAXORDER`, `MERGE_BUFFER_SIZE` (TAPE_BUFFER_OVERHEAD is a block).
const MINORDER: usize = 6;
const MAXORDER: usize = 500;
const MERGE_BUFFER_SIZE: usize = BLCKSZ * 32;
/// `SLAB_SLOT_SIZE`: a merge's tuple slots.
const SLAB_SLOT_SIZE: usize = 1024;
/// A run's end on tape (`markrunend`: a zero length word).
const RUN_END: usize = 4;

/// The space the tuplesort would be using at the end of the input, or the disk its
/// tapes took.
pub fn sort_space(input: &SortInput) -> SortSpace {
    let w = input.width.max(1);
    let n = input.rows.len() / w;
    let row = |i: usize| &input.rows[i * w..(i + 1) * w];
    let types = column_types(input);
    let bounded_ctx = input.bound.is_some();
    let order = stored_order(input.order, types.len());
    let stored_types: Vec<SqlType> = order.iter().map(|&c| types[c]).chain(input.junk.iter().copied()).collect();
    let datum_sort = stored_types.len() == 1 && fixed(stored_types[0]).is_some();
    let stored = |i: usize| -> Vec<Datum> {
        let junk = input.junk.iter().map(|_| Datum::Int(0));
        order.iter().map(|&c| row(i)[c].clone()).chain(junk).collect()
    };
    let chunk = |i: usize| if datum_sort { 0 } else { tuple_chunk(&stored_types, &stored(i), bounded_ctx) };
    let cmp = |i: usize, j: usize| compare_rows(input.keys, row(i), row(j));
    let bound = input.bound.filter(|&b| b > 0).map(|b| b as usize);
    let allowed = input.work_mem_kb.max(64) as i64 * 1024;
    let (tuples, method, memtupsize) = match replay_puts(n, &chunk, allowed, bound) {
        Puts::InMemory { memtupsize } => ((0..n).map(&chunk).sum(), SortMethod::Quicksort, memtupsize),
        Puts::Bounded { first, memtupsize } => {
            let b = bound.unwrap_or(0);
            (bounded_heap_space(n, b, first, &chunk, &cmp), SortMethod::TopNHeapsort, memtupsize)
        }
        Puts::External { runs, max_tapes, tape_space } => {
            // writetup_heap / writetup_datum: what a tuple takes on tape.
            let bytes = |i: usize| match (datum_sort, row(i).iter().all(Datum::is_null)) {
                (true, true) => 4,
                (true, false) => 4 + 8,
                (false, _) => tuple_len(&stored_types, &stored(i)) - MINIMAL_TUPLE_OFFSET - 10 + 4,
            };
            // mergeruns: the array and the tapes' charge go, the slab and the
            // heap's array come; what is left is the tapes' buffers.
            let out_tapes = runs.len().min(max_tapes);
            let slab = if datum_sort { 0 } else { (out_tapes + 1) * SLAB_SLOT_SIZE };
            let heap_array = allocset_chunk(out_tapes * SORT_TUPLE);
            let buffers = allowed - tape_space as i64 - slab as i64 - heap_array as i64;
            let blocks = tape_blocks(runs, max_tapes, &bytes, &cmp, buffers);
            return SortSpace { method: SortMethod::ExternalMerge, kb: (blocks * BLCKSZ as u64).div_ceil(1024) };
        }
    };
    let used = allocset_chunk(memtupsize * SORT_TUPLE) + tuples;
    SortSpace { method, kb: used.div_ceil(1024) as u64 }
}

/// Where `puttuple_common` left the sort at the end of its input.
enum Puts {
    /// Every tuple in the array (`TSS_INITIAL`): a quicksort.
    InMemory { memtupsize: usize },
    /// `make_bounded_heap` ran after `first` puts (`TSS_BOUNDED`).
    Bounded { first: usize, memtupsize: usize },
    /// `TSS_BUILDRUNS`: the runs (row indexes, in input order), the tapes and the
    /// tape buffers' charge (`inittapestate`).
    External { runs: Vec<Vec<usize>>, max_tapes: usize, tape_space: usize },
}

/// Replays `puttuple_common` over the `n` rows, each taking `chunk(i)` bytes of
/// memory, in `allowed` bytes; the runs it dumps are left unsorted (their rows in
/// input order) for the caller to sort.
fn replay_puts(n: usize, chunk: &dyn Fn(usize) -> usize, allowed: i64, bound: Option<usize>) -> Puts {
    let mut size = INITIAL_MEMTUPSIZE;
    let mut growing = true;
    let mut avail = allowed - allocset_chunk(size * SORT_TUPLE) as i64;
    let mut current: Vec<usize> = Vec::new();
    let mut held: i64 = 0;
    let mut runs: Vec<Vec<usize>> = Vec::new();
    let mut tapes: Option<(usize, usize)> = None;
    for i in 0..n {
        let c = chunk(i) as i64;
        avail -= c;
        held += c;
        if tapes.is_none() {
            if current.len() >= size - 1 {
                grow_memtuples(&mut size, &mut growing, &mut avail, allowed);
            }
            current.push(i);
            if let Some(b) = bound {
                if current.len() > 2 * b || (current.len() > b && avail < 0) {
                    return Puts::Bounded { first: current.len(), memtupsize: size };
                }
            }
            if current.len() < size && avail >= 0 {
                continue;
            }
            // inittapes: the tapes' buffers are charged only if they and the array fit.
            let max_tapes = merge_order(allowed);
            let tape_space = max_tapes * BLCKSZ;
            let tape_space =
                if ((tape_space + allocset_chunk(size * SORT_TUPLE)) as i64) < allowed { tape_space } else { 0 };
            avail -= tape_space as i64;
            tapes = Some((max_tapes, tape_space));
        } else {
            current.push(i);
            if current.len() < size && avail >= 0 {
                continue;
            }
        }
        // dumptuples: the run goes to tape, its tuples are freed.
        runs.push(std::mem::take(&mut current));
        avail += held;
        held = 0;
    }
    match tapes {
        None => Puts::InMemory { memtupsize: size },
        Some((max_tapes, tape_space)) => {
            if !current.is_empty() {
                runs.push(current);
            }
            Puts::External { runs, max_tapes, tape_space }
        }
    }
}

/// `grow_memtuples`: double while at most half the memory is used; then one last
/// growth by the ratio of the memory allowed to the memory used, if it fits.
fn grow_memtuples(size: &mut usize, growing: &mut bool, avail: &mut i64, allowed: i64) {
    if !*growing {
        return;
    }
    let used = allowed - *avail;
    let new_size = if used <= *avail {
        *size * 2
    } else {
        *growing = false;
        (*size as f64 * (allowed as f64 / used as f64)) as usize
    };
    if new_size <= *size || *avail < ((new_size - *size) * SORT_TUPLE) as i64 {
        *growing = false;
        return;
    }
    *avail += allocset_chunk(*size * SORT_TUPLE) as i64;
    *size = new_size;
    *avail -= allocset_chunk(*size * SORT_TUPLE) as i64;
}

/// `tuplesort_merge_order`: input tapes for `allowed` bytes (each input tape wants a
/// block and MERGE_BUFFER_SIZE, each output tape a block).
fn merge_order(allowed: i64) -> usize {
    let order = allowed as usize / (2 * BLCKSZ + MERGE_BUFFER_SIZE);
    order.clamp(MINORDER, MAXORDER)
}

/// `merge_read_buffer_size`: the read buffer of each input tape of a pass.
fn merge_read_buffer_size(avail: i64, input_tapes: usize, input_runs: usize, max_tapes: usize) -> usize {
    let output_tapes = input_runs.div_ceil(input_tapes).min(max_tapes);
    ((avail - (BLCKSZ * output_tapes) as i64) / input_tapes as i64).max(0) as usize
}

/// logtape.c's tape set: blocks handed out lowest free first (`ltsGetFreeBlock`, a
/// min-heap of freed blocks), else at the end of the file.
#[derive(Default)]
struct TapeSet {
    allocated: u64,
    free: std::collections::BinaryHeap<std::cmp::Reverse<u64>>,
}

impl TapeSet {
    fn get_block(&mut self) -> u64 {
        match self.free.pop() {
            Some(std::cmp::Reverse(b)) => b,
            None => {
                self.allocated += 1;
                self.allocated - 1
            }
        }
    }
}

/// One logical tape: the blocks written (number, payload bytes), the block being
/// filled, and, once rewound, the read position; `runs` are its runs' rows.
#[derive(Default)]
struct Tape {
    blocks: Vec<(u64, usize)>,
    current: Option<u64>,
    pos: usize,
    buffer_size: usize,
    next_block: usize,
    loaded: usize,
    consumed: usize,
    runs: std::collections::VecDeque<Vec<usize>>,
    run_pos: usize,
}

impl Tape {
    /// `LogicalTapeWrite`: a new block is taken when the current one is full and
    /// more bytes come.
    fn write(&mut self, lts: &mut TapeSet, mut n: usize) {
        let mut current = match self.current {
            Some(b) => b,
            None => lts.get_block(),
        };
        while n > 0 {
            if self.pos >= TAPE_PAYLOAD {
                let next = lts.get_block();
                self.blocks.push((current, TAPE_PAYLOAD));
                current = next;
                self.pos = 0;
            }
            let part = n.min(TAPE_PAYLOAD - self.pos);
            self.pos += part;
            n -= part;
        }
        self.current = Some(current);
    }

    /// `LogicalTapeRewindForRead`: the last block is flushed; reads go through a
    /// buffer of whole blocks.
    fn rewind(&mut self, buffer_size: usize) {
        if let Some(b) = self.current.take() {
            self.blocks.push((b, self.pos));
        }
        self.buffer_size = buffer_size.max(BLCKSZ) / BLCKSZ * BLCKSZ;
    }

    /// `LogicalTapeRead` of `n` bytes; `ltsReadFillBuffer` reads blocks while a
    /// whole one still fits in the buffer, freeing each as it is read.
    fn read(&mut self, lts: &mut TapeSet, mut n: usize) {
        while n > 0 {
            if self.consumed == self.loaded {
                let mut nbytes = 0;
                while let Some(&(block, bytes)) = self.blocks.get(self.next_block) {
                    self.next_block += 1;
                    lts.free.push(std::cmp::Reverse(block));
                    nbytes += bytes;
                    if self.next_block == self.blocks.len() || self.buffer_size - nbytes <= BLCKSZ {
                        break;
                    }
                }
                if nbytes == 0 {
                    return;
                }
                self.loaded += nbytes;
            }
            let part = n.min(self.loaded - self.consumed);
            self.consumed += part;
            n -= part;
        }
    }

    /// `mergereadnext`: the next row of the current run, None at its end.
    fn read_next(&mut self, lts: &mut TapeSet, bytes: &dyn Fn(usize) -> usize) -> Option<usize> {
        self.read(lts, 4);
        let run = self.runs.front()?;
        if let Some(&i) = run.get(self.run_pos) {
            self.run_pos += 1;
            self.read(lts, bytes(i) - 4);
            Some(i)
        } else {
            self.runs.pop_front();
            self.run_pos = 0;
            None
        }
    }
}

/// The blocks of the tape set's file when the final merge begins: the runs (input
/// order) sorted and written round robin, then `mergeruns`' passes until each input
/// tape holds one run.
fn tape_blocks(
    runs: Vec<Vec<usize>>,
    max_tapes: usize,
    bytes: &dyn Fn(usize) -> usize,
    cmp: &dyn Fn(usize, usize) -> Ordering,
    buffers: i64,
) -> u64 {
    let mut lts = TapeSet::default();
    let mut outputs: Vec<Tape> = Vec::new();
    let mut n_runs = 0;
    for mut run in runs {
        crate::types::sort_indexes_by(&mut run, cmp);
        if outputs.len() < max_tapes {
            outputs.push(Tape::default());
        }
        let tape = &mut outputs[n_runs % max_tapes];
        for &i in &run {
            tape.write(&mut lts, bytes(i));
        }
        tape.write(&mut lts, RUN_END);
        tape.runs.push_back(run);
        n_runs += 1;
    }
    loop {
        let mut inputs = std::mem::take(&mut outputs);
        let n_inputs = inputs.len();
        let mut input_runs = n_runs;
        let buffer = merge_read_buffer_size(buffers, n_inputs, input_runs, max_tapes);
        for tape in &mut inputs {
            tape.rewind(buffer);
        }
        if input_runs <= n_inputs {
            return lts.allocated;
        }
        n_runs = 0;
        while input_runs > 0 {
            // selectnewtape, then mergeonerun.
            if outputs.len() < max_tapes {
                outputs.push(Tape::default());
            }
            let dest = n_runs % outputs.len();
            n_runs += 1;
            let mut heap_rows: Vec<usize> = Vec::new();
            let mut tape_of = std::collections::HashMap::new();
            let rev = |a: usize, b: usize| cmp(b, a);
            let mut heap = Heap { items: Vec::new(), cmp: &rev };
            for (t, tape) in inputs.iter_mut().enumerate().take(n_inputs.min(input_runs)) {
                if let Some(i) = tape.read_next(&mut lts, bytes) {
                    tape_of.insert(i, t);
                    heap.insert(i);
                }
            }
            while let Some(&top) = heap.items.first() {
                outputs[dest].write(&mut lts, bytes(top));
                heap_rows.push(top);
                let t = tape_of[&top];
                match inputs[t].read_next(&mut lts, bytes) {
                    Some(i) => {
                        tape_of.insert(i, t);
                        heap.replace_top(i);
                    }
                    None => {
                        heap.delete_top();
                        input_runs -= 1;
                    }
                }
            }
            outputs[dest].write(&mut lts, RUN_END);
            outputs[dest].runs.push_back(heap_rows);
        }
    }
}

/// `order` when it is a permutation of the `n` columns, else the identity.
pub(crate) fn stored_order(order: &[usize], n: usize) -> Vec<usize> {
    let mut seen = vec![false; n];
    let valid = order.len() == n && order.iter().all(|&c| c < n && !std::mem::replace(&mut seen[c], true));
    if valid {
        order.to_vec()
    } else {
        (0..n).collect()
    }
}

/// Each column's type: the planner's, else one guessed from the first non-null value.
fn column_types(input: &SortInput) -> Vec<SqlType> {
    let w = input.width.max(1);
    (0..input.width.max(1))
        .map(|c| {
            input.types.get(c).copied().flatten().unwrap_or_else(|| {
                let value = input.rows.iter().skip(c).step_by(w).find(|d| !d.is_null());
                match value {
                    Some(Datum::Float(_)) => SqlType::Float8,
                    Some(Datum::Numeric(_)) => SqlType::Numeric,
                    Some(Datum::Text(_)) => SqlType::Text,
                    _ => SqlType::Int8,
                }
            })
        })
        .collect()
}

/// The chunk space of one tuple in the "Caller tuples" context.
fn tuple_chunk(types: &[SqlType], row: &[Datum], allocset: bool) -> usize {
    let t_len = tuple_len(types, row) - MINIMAL_TUPLE_OFFSET;
    if allocset {
        allocset_chunk(t_len)
    } else {
        t_len.next_multiple_of(8) + 24
    }
}

/// `AllocSetGetChunkSpace` of a request: a power-of-two chunk below the 8 kB chunk
/// limit, an exact (MAXALIGNed) block above it, with its 16-byte header.
fn allocset_chunk(size: usize) -> usize {
    if size > 8192 {
        size.next_multiple_of(8) + 16
    } else {
        size.max(8).next_power_of_two() + 16
    }
}

/// The tuples' space of a bounded sort of `n` rows that switched to a heap after
/// `first` puts (`2 * bound + 1`, or fewer when memory ran out): those are kept, then
/// `make_bounded_heap` and the bounded puts replay the heap (a max-heap of the
/// `bound` least rows, as `reversedirection` makes it) with their frees.
fn bounded_heap_space(
    n: usize,
    bound: usize,
    first: usize,
    chunk: &dyn Fn(usize) -> usize,
    cmp: &dyn Fn(usize, usize) -> Ordering,
) -> usize {
    let mut used: usize = (0..first).map(chunk).sum();
    let mut heap = Heap { items: Vec::with_capacity(bound), cmp };
    for i in 0..first {
        if heap.items.len() < bound {
            heap.insert(i);
        } else if cmp(i, heap.items[0]) != Ordering::Less {
            used -= chunk(i);
        } else {
            // The old top is overwritten, not freed: it stays counted.
            heap.replace_top(i);
        }
    }
    for i in first..n {
        if cmp(i, heap.items[0]) == Ordering::Less {
            used -= chunk(heap.items[0]);
            used += chunk(i);
            heap.replace_top(i);
        }
    }
    used
}

/// The rows a bounded sort of `n > 2 * bound` rows returns, in order: the heap
/// `make_bounded_heap` built over the first `2 * bound + 1` and the puts after kept
/// (as [`bounded_heap_space`] replays it), emptied by `sort_bounded_heap` (each top
/// deleted and put after the remaining heap), which leaves ties in the heap's order.
pub fn bounded_order(n: usize, bound: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut heap = Heap { items: Vec::with_capacity(bound), cmp };
    for i in 0..n {
        if heap.items.len() < bound {
            heap.insert(i);
        } else if cmp(i, heap.items[0]) == Ordering::Less {
            heap.replace_top(i);
        }
    }
    let mut out = Vec::with_capacity(bound);
    while let Some(&top) = heap.items.first() {
        heap.delete_top();
        out.push(top);
    }
    out.reverse();
    out
}

/// tuplesort's heap of row indexes with the largest row on top
/// (`tuplesort_heap_insert`, `tuplesort_heap_replace_top`: the same sift steps, so
/// the same rows stay when keys tie).
struct Heap<'a> {
    items: Vec<usize>,
    cmp: &'a dyn Fn(usize, usize) -> Ordering,
}

impl Heap<'_> {
    /// Is `a` above `b` in the heap (larger in the sort's order)?
    fn above(&self, a: usize, b: usize) -> bool {
        (self.cmp)(a, b) == Ordering::Greater
    }

    fn insert(&mut self, t: usize) {
        let mut j = self.items.len();
        self.items.push(t);
        while j > 0 {
            let i = (j - 1) / 2;
            if !self.above(t, self.items[i]) {
                break;
            }
            self.items[j] = self.items[i];
            j = i;
        }
        self.items[j] = t;
    }

    /// `tuplesort_heap_delete_top`: the last item replaces the top.
    fn delete_top(&mut self) {
        if let Some(last) = self.items.pop() {
            if !self.items.is_empty() {
                self.replace_top(last);
            }
        }
    }

    fn replace_top(&mut self, t: usize) {
        let n = self.items.len();
        let mut i = 0;
        loop {
            let mut j = 2 * i + 1;
            if j >= n {
                break;
            }
            if j + 1 < n && self.above(self.items[j + 1], self.items[j]) {
                j += 1;
            }
            if !self.above(self.items[j], t) {
                break;
            }
            self.items[i] = self.items[j];
            i = j;
        }
        self.items[i] = t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Expr;
    use std::rc::Rc;

    fn keys(col: usize) -> Vec<SortKey> {
        vec![SortKey { expr: Expr::Col(col), desc: false }]
    }

    /// `t(a int, b int, c text)` with a = i, b = i % 7, c = 'x' || i, i in 1..=1000.
    fn rows(cols: &[usize]) -> Vec<Datum> {
        let mut out = vec![];
        for i in 1..=1000i64 {
            let all = [Datum::Int(i), Datum::Int(i % 7), Datum::Text(Rc::new(format!("x{i}")))];
            out.extend(cols.iter().map(|&c| all[c].clone()));
        }
        out
    }

    const INT4: Option<SqlType> = Some(SqlType::Int4);
    const TEXT: Option<SqlType> = Some(SqlType::Text);

    /// The figures PostgreSQL 15 printed for these sorts of that table.
    #[test]
    fn agrees_with_postgresql_15() {
        let ab = rows(&[0, 1]);
        let cases: [(&[Datum], usize, &[Option<SqlType>], usize, Option<u64>, &str); 5] = [
            // select a, b from t order by b
            (&ab, 2, &[INT4, INT4], 1, None, "quicksort  Memory: 71kB"),
            // select a, b from t order by b limit 10
            (&ab, 2, &[INT4, INT4], 1, Some(10), "top-N heapsort  Memory: 25kB"),
            // select a, b from t where a <= 30 order by b
            (&ab[..60], 2, &[INT4, INT4], 1, None, "quicksort  Memory: 26kB"),
            // select c from t order by c: text is by reference, so a tuple sort
            (&rows(&[2]), 1, &[TEXT], 0, None, "quicksort  Memory: 71kB"),
            // select a from t order by a desc: a Datum sort
            (&rows(&[0]), 1, &[INT4], 0, None, "quicksort  Memory: 25kB"),
        ];
        for (rows, width, types, key, bound, want) in cases {
            let keys = keys(key);
            let got = sort_space(&SortInput {
                rows,
                width,
                types,
                keys: &keys,
                bound,
                order: &[],
                junk: &[],
                work_mem_kb: 4096,
            });
            assert_eq!(got.text(), want, "{width} columns, key {key}, bound {bound:?}");
        }
    }

    /// The replaced tops of make_bounded_heap stay counted: select a, b, c from t
    /// order by c limit 100 is 33kB in PostgreSQL 15 (29kB if they were freed).
    #[test]
    fn make_bounded_heap_keeps_the_tops_it_replaces() {
        let abc = rows(&[0, 1, 2]);
        let keys = keys(2);
        let got = sort_space(&SortInput {
            rows: &abc,
            width: 3,
            types: &[INT4, INT4, TEXT],
            keys: &keys,
            bound: Some(100),
            order: &[],
            junk: &[],
            work_mem_kb: 4096,
        });
        assert_eq!(got.text(), "top-N heapsort  Memory: 33kB");
    }

    /// select id from h intersect select id from f where id < 100 order by id: the
    /// Sort above the HashSetOp holds its 99 rows with the flag column (29kB in
    /// PostgreSQL 15), not a Datum sort of the ids alone (25kB).
    #[test]
    fn a_setops_flag_column_is_stored() {
        let ids = &rows(&[0])[..99];
        let keys = keys(0);
        let input = |junk: &'static [SqlType]| SortInput {
            rows: ids,
            width: 1,
            types: &[INT4],
            keys: &keys,
            bound: None,
            order: &[],
            junk,
            work_mem_kb: 4096,
        };
        assert_eq!(sort_space(&input(&[SqlType::Int4])).text(), "quicksort  Memory: 29kB");
        assert_eq!(sort_space(&input(&[])).text(), "quicksort  Memory: 25kB");
    }

    /// Sorts past work_mem, as PostgreSQL 15 printed them for `t` (1000 rows, as
    /// above) and `t2` (the same columns, i in 1..=20000): one merge pass when the runs
    /// fit the six tapes of 64 kB, several passes over reused blocks when they do not,
    /// a Datum sort's runs of 8-byte values.
    #[test]
    fn external_merges_agree_with_postgresql_15() {
        let t2 = |cols: &[usize]| {
            let mut out = vec![];
            for i in 1..=20000i64 {
                let all = [Datum::Int(i), Datum::Int(i % 7), Datum::Text(Rc::new(format!("x{i}")))];
                out.extend(cols.iter().map(|&c| all[c].clone()));
            }
            out
        };
        let (ab, abc, t2abc, t2a, t2ab) = (rows(&[0, 1]), rows(&[0, 1, 2]), t2(&[0, 1, 2]), t2(&[0]), t2(&[0, 1]));
        let k = |col: usize, desc: bool| vec![SortKey { expr: Expr::Col(col), desc }];
        let cases: [(&[Datum], usize, &[Option<SqlType>], Vec<SortKey>, u64, &str); 7] = [
            // select a, b from t order by b
            (&ab, 2, &[INT4, INT4], k(1, false), 64, "external merge  Disk: 24kB"),
            // select a, b, c from t order by c
            (&abc, 3, &[INT4, INT4, TEXT], k(2, false), 64, "external merge  Disk: 32kB"),
            // select a, b, c from t2 order by c: 25 runs, three passes
            (&t2abc, 3, &[INT4, INT4, TEXT], k(2, false), 64, "external merge  Disk: 504kB"),
            // select a, b, c from t2 order by b
            (&t2abc, 3, &[INT4, INT4, TEXT], k(1, false), 64, "external merge  Disk: 504kB"),
            // select a from t2 order by a desc: a Datum sort
            (&t2a, 1, &[INT4], k(0, true), 64, "external merge  Disk: 280kB"),
            // select a, b from t2 order by b
            (&t2ab, 2, &[INT4, INT4], k(1, false), 64, "external merge  Disk: 392kB"),
            // set work_mem = '200kB'; select a, b, c from t2 order by c
            (&t2abc, 3, &[INT4, INT4, TEXT], k(2, false), 200, "external merge  Disk: 512kB"),
        ];
        for (rows, width, types, keys, work_mem_kb, want) in cases {
            let input = SortInput { rows, width, types, keys: &keys, bound: None, order: &[], junk: &[], work_mem_kb };
            assert_eq!(
                sort_space(&input).text(),
                want,
                "{width} columns, {} rows, {work_mem_kb}kB",
                rows.len() / width
            );
        }
    }

    #[test]
    fn the_array_doubles_one_short_of_full() {
        let size = |puts: usize| match replay_puts(puts, &|_| 0, 4096 * 1024, None) {
            Puts::InMemory { memtupsize } => memtupsize,
            _ => 0,
        };
        assert_eq!(size(1022), 1024);
        assert_eq!(size(1023), 1024);
        assert_eq!(size(1024), 2048);
    }
}
