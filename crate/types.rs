//! Values, rows and in-memory tables: what every layer passes around (the executor's
//! slots, a shard's heap, a FETCH's rows).
//!
//! A `Datum` is cheap to clone: integers are copied and text is an `Rc<String>`, so
//! copying a row into a node's slot never allocates. Rows of a table are stored
//! flat (`ncols` values per row) so a scan walks contiguous memory.
//!
//! Invariants:
//! - A `Datum` is two words (16 bytes; a test checks it): `Rc<String>`, not `Rc<str>`.
//! - `Ord` is total and `Eq`/`Hash` agree with it: NULL sorts after every value (ASC's
//!   NULLS LAST) and equals NULL, Int, Numeric and Float compare by value and hash
//!   alike when equal (Int with Numeric exactly; with a Float through `f64`, as
//!   PostgreSQL compares numeric with float8), booleans (false before true, as
//!   `boolcmp`) sort before numbers and text after them. This order is for sorting, grouping and hashing;
//!   SQL's `=` with NULL is the evaluator's (`plan::Expr::eval` answers NULL).
//! - A table's `data` holds `nrows × ncols` values (`push_row` checks the width in
//!   debug builds).
//! - An `Index` is a snapshot of the rows when it was built: `push_row` does not update
//!   it, so whoever loads rows after `CREATE INDEX` rebuilds it
//!   (`Cluster::rebuild_indexes` in `coordinator_sql`).
//! - A `Catalog` holds one table per name: `add` replaces.
//!
//! Where it departs from PostgreSQL: a PostgreSQL `Datum` (`src/include/postgres.h`) is
//! an untyped machine word read through the column's type in a `TupleDesc`; ours carries
//! its type. Five types only (`ColType`: int8, numeric, float8, text, boolean, by their
//! OIDs); numeric is exact ([`crate::numeric::Numeric`], behind an `Rc`
//! so a Datum stays two words); text compares by bytes (the `C` collation), and a
//! value that does not parse as its column's type becomes text rather than an error.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use crate::numeric::Numeric;

/// Sorts a short list (tens of items: a plan node's children, a statement's
/// parameters, a run's servers) by `key`, stably: an insertion sort. The standard
/// library's sort is several kilobytes of code for each use, which the page's wasm
/// module carried a dozen times (issue 20); this is a few hundred bytes. Quadratic, so
/// never for rows.
pub fn sort_short_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_short_by(v, |a, b| key(a).cmp(&key(b)));
}

/// [`sort_short_by_key`] with a comparison (a key that is not `Ord`, such as a cost).
pub fn sort_short_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && cmp(&v[j - 1], &v[j]) == Ordering::Greater {
            v.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// Sorts `order`, indexes into what the caller holds (a table's rows, a scenario's
/// reference rows, a sort's run), stably by `cmp`: the one copy of the standard
/// library's stable sort that these long lists share. Its code is monomorphized for each
/// element type and comparator; through a `&dyn Fn` they are all one (issue 20: the
/// page's module carried eight copies, ~8 KB each). Not for the executor's row path,
/// which sorts with `node_sort::pg_qsort`.
pub fn sort_indexes_by(order: &mut [usize], cmp: &dyn Fn(usize, usize) -> Ordering) {
    order.sort_by(|&a, &b| cmp(a, b));
}

/// `rows` sorted (as `Vec::sort` orders them) through [`sort_indexes_by`].
pub fn sorted_rows(mut rows: Vec<Vec<Datum>>) -> Vec<Vec<Datum>> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    sort_indexes_by(&mut order, &|a, b| rows[a].cmp(&rows[b]));
    // Each index once: every row is moved out, none copied.
    order.into_iter().map(|i| std::mem::take(&mut rows[i])).collect()
}

/// One SQL value. NULL sorts after every other value (PostgreSQL's default for ASC).
#[derive(Clone, Debug, Default)]
pub enum Datum {
    #[default]
    Null,
    /// boolean: what comparisons, AND/OR/NOT, IS NULL, IN, EXISTS and LIKE produce,
    /// and a `boolean` column holds (`t`/`f` in text format, as `boolout` writes).
    Bool(bool),
    Int(i64),
    /// float8.
    Float(f64),
    /// numeric, exact (`Rc`: an `i128` mantissa would double a Datum's size).
    Numeric(Rc<Numeric>),
    /// `Rc<String>` rather than `Rc<str>`: a thin pointer keeps a Datum at 16 bytes,
    /// so scans move a third less memory per row.
    Text(Rc<String>),
}

impl Datum {
    pub fn text(s: &str) -> Datum {
        Datum::Text(Rc::new(s.to_string()))
    }
    pub fn is_null(&self) -> bool {
        matches!(self, Datum::Null)
    }
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Datum::Int(v) => Some(*v),
            _ => None,
        }
    }
    pub fn numeric(n: Numeric) -> Datum {
        Datum::Numeric(Rc::new(n))
    }
    /// A number as a float8 (a numeric as `numeric_float8` converts it).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Datum::Int(v) => Some(*v as f64),
            Datum::Float(v) => Some(*v),
            Datum::Numeric(n) => Some(n.to_f64()),
            _ => None,
        }
    }
    /// An integer or numeric as a numeric (`int8_numeric`); None for anything else.
    pub fn as_numeric(&self) -> Option<Numeric> {
        match self {
            Datum::Int(v) => Some(Numeric::from_i64(*v)),
            Datum::Numeric(n) => Some((**n).clone()),
            _ => None,
        }
    }
    /// Truth value of a boolean expression result: only `true` is; NULL and false
    /// are not (`ExecQual`).
    pub fn is_true(&self) -> bool {
        matches!(self, Datum::Bool(true))
    }
    /// Is this boolean false (not NULL)? AND's and OR's short cut.
    pub fn is_false(&self) -> bool {
        matches!(self, Datum::Bool(false))
    }
    /// Bytes of this value in PostgreSQL's text format, used by the wire protocol
    /// and the simulated network's transfer-time model.
    pub fn write_text(&self, out: &mut Vec<u8>) {
        use std::io::Write;
        match self {
            Datum::Null => {}
            Datum::Bool(b) => out.push(if *b { b't' } else { b'f' }),
            Datum::Int(v) => push_decimal(out, *v, 1),
            Datum::Float(v) => {
                let _ = write!(out, "{}", format_float(*v));
            }
            Datum::Numeric(n) => {
                let _ = write!(out, "{n}");
            }
            Datum::Text(s) => out.extend_from_slice(s.as_bytes()),
        }
    }
}

/// `v` in decimal (PostgreSQL's `int8out`), its digits zero-padded to at least
/// `min_digits` (at most 20) after the sign, appended to `out`: what `write!(out, "{v}")` writes,
/// without the formatting machinery, which was a tenth of the page's recording (a
/// shard writes a number per integer it sends) and most of its data's generation.
pub fn push_decimal(out: &mut Vec<u8>, v: i64, min_digits: usize) {
    if v < 0 {
        out.push(b'-');
    }
    let mut digits = [b'0'; 20]; // u64::MAX has 20
    let (mut n, mut at) = (v.unsigned_abs(), digits.len());
    while n > 0 || at == digits.len() {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&digits[at.min(digits.len().saturating_sub(min_digits))..]);
}

/// A float8 as PostgreSQL's `float8out` prints it (the shortest text that reads back
/// as the same value, `extra_float_digits` 1).
pub fn format_float(v: f64) -> String {
    crate::coordinator_sql::pgfuncs::float8_out(v)
}

impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Null => write!(f, "NULL"),
            Datum::Bool(b) => write!(f, "{}", if *b { "t" } else { "f" }),
            Datum::Int(v) => write!(f, "{v}"),
            Datum::Float(v) => write!(f, "{}", format_float(*v)),
            Datum::Numeric(n) => write!(f, "{n}"),
            Datum::Text(s) => write!(f, "{s}"),
        }
    }
}

impl PartialEq for Datum {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Datum {}

impl PartialOrd for Datum {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Datum {
    fn cmp(&self, other: &Self) -> Ordering {
        use Datum::*;
        match (self, other) {
            (Null, Null) => Ordering::Equal,
            (Null, _) => Ordering::Greater,
            (_, Null) => Ordering::Less,
            (Bool(a), Bool(b)) => a.cmp(b),
            (Bool(_), _) => Ordering::Less,
            (_, Bool(_)) => Ordering::Greater,
            (Int(a), Int(b)) => a.cmp(b),
            (Text(a), Text(b)) => a.cmp(b),
            (Text(_), _) => Ordering::Greater,
            (_, Text(_)) => Ordering::Less,
            (Numeric(a), Numeric(b)) => a.cmp(b),
            (Int(a), Numeric(b)) => crate::numeric::Numeric::from_i64(*a).cmp(b),
            (Numeric(a), Int(b)) => (**a).cmp(&crate::numeric::Numeric::from_i64(*b)),
            (a, b) => a.as_f64().unwrap().total_cmp(&b.as_f64().unwrap()),
        }
    }
}

impl Hash for Datum {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Datum::Null => 0u8.hash(state),
            Datum::Bool(b) => (1u8, *b).hash(state),
            // Int and Float that compare equal must hash equal.
            Datum::Int(v) => (*v as f64).to_bits().hash(state),
            Datum::Float(v) => v.to_bits().hash(state),
            // Equal numerics have equal float8 values; one equal to an Int is an
            // integer, whose float8 is the Int's.
            Datum::Numeric(n) => n.to_f64().to_bits().hash(state),
            Datum::Text(s) => s.hash(state),
        }
    }
}

/// Column types the sandbox knows, with their PostgreSQL type OIDs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum ColType {
    Int,
    /// float8 (`random()`, a cast to float8).
    Float,
    Numeric,
    Text,
    /// boolean.
    Bool,
}

impl ColType {
    pub fn oid(self) -> u32 {
        match self {
            ColType::Int => 20,       // int8
            ColType::Float => 701,    // float8
            ColType::Numeric => 1700, // numeric
            ColType::Text => 25,      // text
            ColType::Bool => 16,      // bool
        }
    }
    pub fn from_oid(oid: u32) -> ColType {
        match oid {
            20 | 21 | 23 | 26 => ColType::Int,
            700 | 701 => ColType::Float,
            1700 => ColType::Numeric,
            16 => ColType::Bool,
            _ => ColType::Text,
        }
    }
    /// Parses one value received in text format.
    pub fn parse(self, bytes: &[u8]) -> Datum {
        let s = std::str::from_utf8(bytes).unwrap_or("");
        match self {
            ColType::Int => s.parse().map(Datum::Int).unwrap_or_else(|_| Datum::text(s)),
            ColType::Float => s.parse().map(Datum::Float).unwrap_or_else(|_| Datum::text(s)),
            ColType::Numeric => Numeric::parse(s).map(Datum::numeric).unwrap_or_else(|_| Datum::text(s)),
            ColType::Text => Datum::text(s),
            // `boolout` writes `t` or `f`; anything else `boolin` reads too.
            ColType::Bool => parse_bool(s).map(Datum::Bool).unwrap_or_else(|| Datum::text(s)),
        }
    }
}

/// `boolin`: `t`/`true`/`yes`/`on`/`1` and `f`/`false`/`no`/`off`/`0`, any case,
/// a unique prefix of a word (`tr`, `n`; `o` alone is ambiguous), spaces around
/// ignored; None for anything else.
pub fn parse_bool(s: &str) -> Option<bool> {
    let t = s.trim().to_ascii_lowercase();
    if t.is_empty() {
        return None;
    }
    match t.as_str() {
        "1" => return Some(true),
        "0" => return Some(false),
        "o" => return None,
        _ => {}
    }
    for (word, v) in [("true", true), ("false", false), ("yes", true), ("no", false), ("on", true), ("off", false)] {
        // "on"/"off" need two letters ("o" is ambiguous), the others one.
        if word.starts_with(&t) {
            return Some(v);
        }
    }
    None
}

/// A named, typed column. Two columns are equal when their names and `ColType`s
/// are: `sql_type` is what the analysis knows of it, not what the column is (an
/// aggregate's output column knows it is an int8, the same column read back through
/// a catalog of `ColType`s does not).
#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    pub ty: ColType,
    /// The SQL type when it is known (a table's declared type, an expression's
    /// `exprType`): what tells an int4 column from an int8 one, which one `ColType`
    /// does not, so that `+` over it is int4's operator (`int4pl`, range-checked as
    /// int4) or int8's. None: not known, an integer then taken as an int8 (the
    /// built-in scenarios' tables, whose operators never check a narrower range).
    pub sql_type: Option<crate::plan::SqlType>,
}

impl PartialEq for Column {
    fn eq(&self, other: &Column) -> bool {
        self.name == other.name && self.ty == other.ty
    }
}

impl Column {
    pub fn new(name: &str, ty: ColType) -> Column {
        Column { name: name.to_string(), ty, sql_type: None }
    }
    /// A column of a declared SQL type.
    pub fn typed(name: &str, t: crate::plan::SqlType) -> Column {
        Column { name: name.to_string(), ty: t.col_type(), sql_type: Some(t) }
    }
}

/// Rows a heap page holds, for `ctid`s: PostgreSQL's for a narrow row of a few
/// columns is of this order (it depends on the row's width there; here it is fixed).
pub const CTID_ROWS_PER_PAGE: u32 = 100;

/// An in-memory heap table: rows stored flat, `columns.len()` values per row.
#[derive(Clone, Debug)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
    pub data: Vec<Datum>,
    /// B-tree indexes (`CREATE INDEX ON t(col)`), as sorted row numbers.
    pub indexes: Vec<Index>,
    /// The visibility map marks every page all-visible: VACUUM sets it, `push_row`
    /// clears it (a change clears its page's bit). An Index Only Scan then fetches
    /// no heap tuple (`Heap Fetches: 0`), and is costed so (`allvisfrac`).
    pub all_visible: bool,
    /// Each row's tuple identifier, in row order (`ctid` on a shard: postgres_fdw's
    /// foreign modify names a row by it). A row keeps its tid while it is not changed;
    /// an updated row is a new version with a new tid, as in PostgreSQL's heap.
    pub tids: Vec<u32>,
    /// The tid the next row stored gets.
    pub next_tid: u32,
}

/// An index on one column: the row numbers in ascending order of that column, and
/// the index's name (EXPLAIN's `using t_pkey`).
#[derive(Clone, Debug)]
pub struct Index {
    pub column: usize,
    pub order: Vec<u32>,
    pub name: String,
}

impl Table {
    pub fn new(name: &str, columns: Vec<Column>) -> Table {
        Table {
            name: name.to_string(),
            columns,
            data: Vec::new(),
            indexes: Vec::new(),
            all_visible: false,
            tids: Vec::new(),
            next_tid: 0,
        }
    }
    pub fn ncols(&self) -> usize {
        self.columns.len()
    }
    pub fn nrows(&self) -> usize {
        if self.columns.is_empty() {
            0
        } else {
            self.data.len() / self.columns.len()
        }
    }
    pub fn row(&self, i: usize) -> &[Datum] {
        let n = self.ncols();
        &self.data[i * n..(i + 1) * n]
    }
    pub fn push_row(&mut self, row: &[Datum]) {
        let tid = self.next_tid;
        self.push_row_with_tid(row, tid);
    }
    /// [`Table::push_row`], the row's values moved in rather than cloned (a scenario
    /// file's INSERT: its rows are made for the table); `row` is left empty, its
    /// buffer kept for the next row.
    pub fn push_row_owned(&mut self, row: &mut Vec<Datum>) {
        debug_assert_eq!(row.len(), self.ncols());
        self.data.append(row);
        self.note_row_tid(self.next_tid);
    }
    /// Stores a row under a given tid (a row a rebuilt table keeps unchanged).
    pub fn push_row_with_tid(&mut self, row: &[Datum], tid: u32) {
        debug_assert_eq!(row.len(), self.ncols());
        self.data.extend_from_slice(row);
        self.note_row_tid(tid);
    }
    /// The bookkeeping of a row just stored: its tid, the next free one, and the table
    /// no longer all-visible (a new row is not, until a VACUUM).
    fn note_row_tid(&mut self, tid: u32) {
        self.all_visible = false;
        self.tids.push(tid);
        self.next_tid = self.next_tid.max(tid.saturating_add(1));
    }
    /// Row `i`'s `ctid` as PostgreSQL writes it, `(block,offset)`: tids numbered in
    /// storage order, [`CTID_ROWS_PER_PAGE`] to a page, offsets from 1.
    pub fn ctid(&self, i: usize) -> String {
        let tid = self.tids.get(i).copied().unwrap_or(i as u32);
        format!("({},{})", tid / CTID_ROWS_PER_PAGE, tid % CTID_ROWS_PER_PAGE + 1)
    }
    /// The same table with its rows' `ctid` as a last text column (what a shard's
    /// `SELECT …, ctid … FOR UPDATE` reads).
    pub fn with_ctid_column(&self) -> Table {
        let mut columns = self.columns.clone();
        columns.push(Column::new("ctid", ColType::Text));
        let mut t = Table::new(&self.name, columns);
        t.data.reserve(self.nrows() * (self.ncols() + 1));
        for i in 0..self.nrows() {
            t.data.extend_from_slice(self.row(i));
            t.data.push(Datum::text(&self.ctid(i)));
        }
        t.tids = self.tids.clone();
        t.next_tid = self.next_tid;
        t.indexes = self.indexes.clone();
        t.all_visible = self.all_visible;
        t
    }
    /// Builds an index on a column (after the rows are loaded), or rebuilds the one it
    /// has, keeping its name; a new one is named as `CREATE INDEX ON t (c)` names it
    /// (`t_c_idx`).
    pub fn create_index(&mut self, column: usize) {
        let name = match self.index_on(column) {
            Some(i) => i.name.clone(),
            None => format!("{}_{}_idx", self.name, self.columns.get(column).map_or("", |c| c.name.as_str())),
        };
        self.create_index_named(column, name);
    }

    /// Builds the index `name` on a column, in place of any index it had (the sandbox
    /// keeps one index per column).
    pub fn create_index_named(&mut self, column: usize, name: String) {
        let mut order: Vec<usize> = (0..self.nrows()).collect();
        // The column's values gathered once, not found in their rows at each of the
        // sort's comparisons (a scenario file's indexes are built as it loads).
        let ncols = self.ncols();
        let keys: Vec<&Datum> = self.data.iter().skip(column).step_by(ncols.max(1)).collect();
        sort_indexes_by(&mut order, &|a, b| keys[a].cmp(keys[b]));
        let order = order.into_iter().map(|i| i as u32).collect();
        self.indexes.retain(|i| i.column != column);
        self.indexes.push(Index { column, order, name });
    }

    pub fn index_on(&self, column: usize) -> Option<&Index> {
        self.indexes.iter().find(|i| i.column == column)
    }

    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// The tables one database holds (the coordinator's local tables, or one shard's).
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    pub tables: Vec<Rc<Table>>,
}

impl Catalog {
    pub fn get(&self, name: &str) -> Option<&Rc<Table>> {
        self.tables.iter().find(|t| t.name == name)
    }
    pub fn add(&mut self, t: Table) {
        self.add_shared(Rc::new(t));
    }
    /// [`Catalog::add`] of rows shared with their owner (copied when written:
    /// `Rc::make_mut`).
    pub fn add_shared(&mut self, t: Rc<Table>) {
        self.tables.retain(|x| x.name != t.name);
        self.tables.push(t);
    }
}

#[cfg(test)]
mod tests {
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_datum_is_two_words() {
        assert_eq!(std::mem::size_of::<super::Datum>(), 16);
    }

    /// `push_decimal` writes what the formatter writes, padded as `{:0w$}` pads a
    /// number that is not negative.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn decimals_are_the_formatters() {
        let text = |v: i64, w: usize| {
            let mut out = Vec::new();
            super::push_decimal(&mut out, v, w);
            String::from_utf8(out).unwrap()
        };
        for v in [0, 1, 9, 10, 99, 100, 12345, 123456, -1, -10, -12345, i64::MAX, i64::MIN, i64::MIN + 1] {
            assert_eq!(text(v, 1), format!("{v}"));
            assert_eq!(text(v, 0), format!("{v}"));
        }
        for v in [0i64, 7, 42, 99999, 100000, 1234567, i64::MAX] {
            assert_eq!(text(v, 5), format!("{v:05}"));
            assert_eq!(text(v, 20), format!("{v:020}"));
        }
        assert_eq!(text(-42, 5), "-00042"); // the sign is not one of the digits
    }

    /// `boolin`'s words and prefixes; `boolout`'s `t`/`f`; false sorts before true.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn booleans_read_and_print_as_postgresql_does() {
        use super::{parse_bool, ColType, Datum};
        for (s, v) in [("t", true), ("TRUE", true), (" yes ", true), ("on", true), ("1", true), ("tr", true)] {
            assert_eq!(parse_bool(s), Some(v), "{s}");
        }
        for (s, v) in [("f", false), ("no", false), ("of", false), ("0", false), ("False", false)] {
            assert_eq!(parse_bool(s), Some(v), "{s}");
        }
        for s in ["o", "", "2", "yess", "t rue"] {
            assert_eq!(parse_bool(s), None, "{s}");
        }
        assert_eq!(ColType::Bool.parse(b"t"), Datum::Bool(true));
        assert_eq!(ColType::from_oid(16), ColType::Bool);
        assert_eq!(Datum::Bool(false).to_string(), "f");
        assert!(Datum::Bool(false) < Datum::Bool(true) && Datum::Bool(true) < Datum::Null);
    }
}
