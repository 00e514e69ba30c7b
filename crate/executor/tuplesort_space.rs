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
//! Where it departs from PostgreSQL: the sandbox sorts in memory only, so a sort past
//! `work_mem` is still reported as an in-memory quicksort (PostgreSQL switches to
//! tapes, `inittapes`/`dumptuples`, and reports the logical tape set's blocks,
//! `external merge  Disk: …`: not modelled); a value's size is its stored (packed) size, which is
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
}

impl SortMethod {
    pub fn name(self) -> &'static str {
        match self {
            SortMethod::Quicksort => "quicksort",
            SortMethod::TopNHeapsort => "top-N heapsort",
        }
    }
}

/// A finished sort's method and memory in kB, as `show_sort_info` prints them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortSpace {
    pub method: SortMethod,
    pub kb: u64,
}

impl SortSpace {
    /// The TEXT line's value: `quicksort  Memory: 25kB`.
    pub fn text(&self) -> String {
        format!("{}  Memory: {}kB", self.method.name(), self.kb)
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
}

/// The space the tuplesort would be using at the end of the input.
pub fn sort_space(input: &SortInput) -> SortSpace {
    let w = input.width.max(1);
    let n = input.rows.len() / w;
    let row = |i: usize| &input.rows[i * w..(i + 1) * w];
    let types = column_types(input);
    let bounded_ctx = input.bound.is_some();
    let order = stored_order(input.order, types.len());
    let stored_types: Vec<SqlType> = order.iter().map(|&c| types[c]).chain(input.junk.iter().copied()).collect();
    let datum_sort = stored_types.len() == 1 && fixed(stored_types[0]).is_some();
    let chunk = |i: usize| {
        if datum_sort {
            return 0;
        }
        let junk = input.junk.iter().map(|_| Datum::Int(0));
        let stored: Vec<Datum> = order.iter().map(|&c| row(i)[c].clone()).chain(junk).collect();
        tuple_chunk(&stored_types, &stored, bounded_ctx)
    };
    let bound = input.bound.filter(|&b| b > 0).map(|b| b as usize);
    let (tuples, method, array_for) = match bound {
        Some(b) if n > 2 * b => (
            bounded_heap_space(n, b, &chunk, &|i, j| compare_rows(input.keys, row(i), row(j))),
            SortMethod::TopNHeapsort,
            2 * b + 1,
        ),
        _ => ((0..n).map(&chunk).sum(), SortMethod::Quicksort, n),
    };
    let used = array_space(array_for) + tuples;
    SortSpace { method, kb: used.div_ceil(1024) as u64 }
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

/// The `memtuples` array after `puts` tuples were put before any heap: it doubles
/// when the tuples reach one less than its size (puttuple_common's `grow_memtuples`).
fn array_space(puts: usize) -> usize {
    let mut size = INITIAL_MEMTUPSIZE;
    for count in 0..puts {
        if count >= size - 1 {
            size *= 2;
        }
    }
    allocset_chunk(size * SORT_TUPLE)
}

/// The tuples' space of a bounded sort of `n` rows (`n > 2 * bound`): the first
/// `2 * bound + 1` are kept, then `make_bounded_heap` and the bounded puts replay
/// the heap (a max-heap of the `bound` least rows, as `reversedirection` makes it)
/// with their frees.
fn bounded_heap_space(
    n: usize,
    bound: usize,
    chunk: &dyn Fn(usize) -> usize,
    cmp: &dyn Fn(usize, usize) -> Ordering,
) -> usize {
    let first = 2 * bound + 1;
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
            let got = sort_space(&SortInput { rows, width, types, keys: &keys, bound, order: &[], junk: &[] });
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
        };
        assert_eq!(sort_space(&input(&[SqlType::Int4])).text(), "quicksort  Memory: 29kB");
        assert_eq!(sort_space(&input(&[])).text(), "quicksort  Memory: 25kB");
    }

    #[test]
    fn the_array_doubles_one_short_of_full() {
        assert_eq!(array_space(1022), 1024 * 24 + 16);
        assert_eq!(array_space(1023), 1024 * 24 + 16);
        assert_eq!(array_space(1024), 2048 * 24 + 16);
    }
}
