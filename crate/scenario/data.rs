//! The built-in scenarios' generated tables ([`Generated`]), made whole or in slices
//! ([`TableStock`]).
//!
//! A builder (`build_foreign`, `build_merge`, …) asks its stock for every table it
//! generates from a formula, and builds the plan, the servers and the reference from
//! what it is handed. The page cannot make 64 shards' data in one task (281,600 rows
//! of `t` took 54–61 ms of Chromium's main thread, issue 20), so it goes in three
//! steps:
//!
//! 1. **list**: the builder runs against [`TableStock::listing`], which hands out empty
//!    tables and notes what was asked for (`Scenario::stock_for`);
//! 2. **make**: [`TableStock::make`] fills the noted tables, at most `max_rows` rows a
//!    call, a task each;
//! 3. **build**: the builder runs again against the filled stock, which hands the made
//!    tables out instead of making them.
//!
//! Everything else builds against [`TableStock::on_demand`], which makes each table
//! whole when it is asked for.
//!
//! Invariants:
//! - a table is made by one formula, [`Generated::push_rows`], in every path: made in
//!   slices or whole, it is the same table (the tests compare them);
//! - a table the stock was not told of is made whole when asked for: a stock that
//!   missed one builds slower, never wrongly;
//! - the listing pass builds from empty tables, so nothing a builder does may fail on
//!   one (its reference is then empty too, and thrown away).
//!
//! PostgreSQL has no counterpart: its tables are loaded by the seeds' `INSERT … SELECT
//! generate_series(…)`; these formulas give the rows those statements insert.

use crate::types::{push_decimal, ColType, Column, Datum, Table};
use std::ops::Range;
use std::rc::Rc;

/// A table made from a formula, with what names it (equal specs make equal tables).
/// (Debug in the tests only: its formatting code would be the page's.)
#[derive(Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(Debug))]
pub enum Generated {
    /// `t(a, b, c)` on shard `shard`: row `i` has `b = shard * rows + i` (the global row
    /// number), `a = b % 100`, `c = b` as text of at least five digits.
    T { name: String, shard: usize, rows: usize },
    /// Seed 003's `players(id, name, score)` partition `k` of `shards` (hash on `id`):
    /// the ids of `1..=total` with `id % shards == k`, ascending; `name = player_<id>`,
    /// `score` from [`score_of`]; indexed on `score` (seed 003's `CREATE INDEX`).
    Players { name: String, k: usize, shards: usize, total: usize },
    /// Seed 004's partitions of `pt(a, b, c)`: row `i` has `a = base + i % 10`, `b = i`,
    /// `c = i` as text of at least five digits.
    Tens { name: String, base: i64, rows: usize },
}

/// `t(a int, b int, c text)`: the columns of [`Generated::T`] and [`Generated::Tens`].
pub fn t_columns() -> Vec<Column> {
    vec![Column::new("a", ColType::Int), Column::new("b", ColType::Int), Column::new("c", ColType::Text)]
}

/// `players(id int, name text, score int)`.
pub fn players_columns() -> Vec<Column> {
    vec![Column::new("id", ColType::Int), Column::new("name", ColType::Text), Column::new("score", ColType::Int)]
}

/// A small deterministic generator (the seed used random() * 100).
pub fn score_of(id: i64) -> i64 {
    let x = (id as u64).wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    ((x >> 33) % 101) as i64
}

/// `prefix` then `n` in decimal, zero-padded to `min_digits`, straight into its `Rc`
/// (`Datum::text(&format!(…))` copies the text once more and runs the formatting
/// machinery: a third of the time of 64 shards' data).
fn text_datum(prefix: &str, n: i64, min_digits: usize) -> Datum {
    let mut text = Vec::with_capacity(prefix.len() + 8);
    text.extend_from_slice(prefix.as_bytes());
    push_decimal(&mut text, n, min_digits);
    Datum::Text(Rc::new(String::from_utf8(text).expect("ASCII digits")))
}

impl Generated {
    pub fn name(&self) -> &str {
        match self {
            Generated::T { name, .. } | Generated::Players { name, .. } | Generated::Tens { name, .. } => name,
        }
    }

    pub fn columns(&self) -> Vec<Column> {
        match self {
            Generated::T { .. } | Generated::Tens { .. } => t_columns(),
            Generated::Players { .. } => players_columns(),
        }
    }

    /// How many rows the table has.
    pub fn rows(&self) -> usize {
        match *self {
            Generated::T { rows, .. } | Generated::Tens { rows, .. } => rows,
            // The ids k, k + shards, … up to total (partition 0 starts at `shards`).
            Generated::Players { k, shards, total, .. } => {
                let first = if k == 0 { shards } else { k };
                if first > total {
                    0
                } else {
                    (total - first) / shards + 1
                }
            }
        }
    }

    /// The table with no rows yet, its storage reserved for all of them.
    pub fn empty(&self) -> Table {
        let mut t = Table::new(self.name(), self.columns());
        let rows = self.rows();
        t.data.reserve(rows * t.ncols());
        t.tids.reserve(rows);
        t
    }

    /// The table with no rows and nothing reserved (the listing pass's), indexes made.
    fn empty_unreserved(&self) -> Table {
        let mut t = Table::new(self.name(), self.columns());
        self.finish(&mut t);
        t
    }

    /// Appends rows `range` (of `0..self.rows()`) to `t`.
    pub fn push_rows(&self, t: &mut Table, range: Range<usize>) {
        match *self {
            Generated::T { shard, rows, .. } => {
                for i in range {
                    let b = (shard * rows + i) as i64;
                    t.push_row(&[Datum::Int(b % 100), Datum::Int(b), text_datum("", b, 5)]);
                }
            }
            Generated::Players { k, shards, .. } => {
                let first = if k == 0 { shards } else { k };
                for i in range {
                    let id = (first + i * shards) as i64;
                    t.push_row(&[Datum::Int(id), text_datum("player_", id, 0), Datum::Int(score_of(id))]);
                }
            }
            Generated::Tens { base, .. } => {
                for i in range {
                    let i = i as i64;
                    t.push_row(&[Datum::Int(base + i % 10), Datum::Int(i), text_datum("", i, 5)]);
                }
            }
        }
    }

    /// What is done once all the rows are in: the players' index on `score`.
    fn finish(&self, t: &mut Table) {
        if let Generated::Players { .. } = self {
            t.create_index(2);
        }
    }

    /// The whole table in one go.
    pub fn make(&self) -> Table {
        let mut t = self.empty();
        self.push_rows(&mut t, 0..self.rows());
        self.finish(&mut t);
        t
    }
}

/// Where a builder gets its generated tables (see the module's head).
#[derive(Default)]
pub struct TableStock {
    /// Hands out empty tables and notes what was asked for.
    listing: bool,
    /// The tables noted, in the order they were asked for, each with its rows so far
    /// (None once handed out).
    tables: Vec<(Generated, Option<Table>)>,
    /// `tables[..made]` are complete.
    made: usize,
}

impl TableStock {
    /// A stock that makes each table whole when it is asked for.
    pub fn on_demand() -> TableStock {
        TableStock::default()
    }

    /// A stock for the listing pass: empty tables handed out, every one noted.
    pub fn listing() -> TableStock {
        TableStock { listing: true, ..TableStock::default() }
    }

    /// The listing stock, turned into one to fill with `make` and build from.
    pub fn into_planned(self) -> TableStock {
        TableStock { listing: false, ..self }
    }

    /// The rows of all the tables noted.
    pub fn total_rows(&self) -> usize {
        self.tables.iter().map(|(g, _)| g.rows()).sum()
    }

    /// The rows made so far (of `total_rows`).
    pub fn made_rows(&self) -> usize {
        self.tables.iter().map(|(_, t)| t.as_ref().map_or(0, |t| t.nrows())).sum()
    }

    /// Makes at most `max_rows` more rows (at least one) of the noted tables, in the
    /// order they were noted; true when every one is complete.
    pub fn make(&mut self, max_rows: usize) -> bool {
        let mut budget = max_rows.max(1);
        while self.made < self.tables.len() {
            let (g, t) = &mut self.tables[self.made];
            let t = t.get_or_insert_with(|| g.empty());
            let (done, rows) = (t.nrows(), g.rows());
            if budget == 0 && done < rows {
                break;
            }
            let to = rows.min(done + budget);
            g.push_rows(t, done..to);
            budget -= to - done;
            if to == rows {
                g.finish(t);
                self.made += 1;
            }
        }
        self.made == self.tables.len()
    }

    /// The table `g`: empty while listing (and noted), the one made ahead if it is
    /// complete, else made now, whole.
    pub fn table(&mut self, g: Generated) -> Table {
        if self.listing {
            let t = g.empty_unreserved();
            self.tables.push((g, None));
            return t;
        }
        let made = self.made;
        match self.tables[..made].iter_mut().find(|(p, t)| *p == g && t.is_some()) {
            Some((_, t)) => t.take().expect("checked"),
            None => g.make(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs() -> Vec<Generated> {
        vec![
            Generated::T { name: "t1".into(), shard: 0, rows: 7 },
            Generated::T { name: "t3".into(), shard: 2, rows: 7 },
            Generated::Players { name: "players_p1".into(), k: 0, shards: 3, total: 20 },
            Generated::Players { name: "players_p2".into(), k: 1, shards: 3, total: 20 },
            Generated::Players { name: "players_p9".into(), k: 8, shards: 9, total: 5 },
            Generated::Tens { name: "p2".into(), base: 20, rows: 13 },
        ]
    }

    fn same(a: &Table, b: &Table) -> bool {
        a.name == b.name
            && a.columns == b.columns
            && a.data == b.data
            && a.tids == b.tids
            && a.next_tid == b.next_tid
            && a.indexes.iter().map(|i| (&i.order, &i.name)).eq(b.indexes.iter().map(|i| (&i.order, &i.name)))
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn the_formulas_give_the_seeds_rows() {
        let t = Generated::T { name: "t3".into(), shard: 2, rows: 7 }.make();
        assert_eq!(t.row(1), &[Datum::Int(15), Datum::Int(15), Datum::text("00015")]);
        let p = Generated::Players { name: "players_p1".into(), k: 0, shards: 3, total: 20 }.make();
        let ids: Vec<i64> = (0..p.nrows()).map(|i| p.row(i)[0].as_int().unwrap()).collect();
        assert_eq!(ids, vec![3, 6, 9, 12, 15, 18]);
        assert_eq!(p.row(0)[1], Datum::text("player_3"));
        assert_eq!(p.row(0)[2], Datum::Int(score_of(3)));
        assert_eq!(p.index_on(2).map(|i| i.order.len()), Some(6));
        let p2 = Generated::Players { name: "players_p2".into(), k: 1, shards: 3, total: 20 };
        assert_eq!(p2.rows(), 7); // 1, 4, …, 19
        assert_eq!(Generated::Players { name: "p".into(), k: 8, shards: 9, total: 5 }.rows(), 0);
        let x = Generated::Tens { name: "p2".into(), base: 20, rows: 13 }.make();
        assert_eq!(x.row(12), &[Datum::Int(22), Datum::Int(12), Datum::text("00012")]);
    }

    /// Made in slices of any size, every table is the one made whole, and the stock
    /// hands out the tables it made, in any order asked.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn slices_make_the_same_tables_as_one_go() {
        for slice in [1, 2, 5, 6, 1000] {
            let mut stock = TableStock::listing();
            for g in specs() {
                assert_eq!(stock.table(g.clone()).nrows(), 0, "listing hands out empty tables");
            }
            let mut stock = stock.into_planned();
            assert_eq!(stock.total_rows(), specs().iter().map(|g| g.rows()).sum::<usize>());
            let mut calls = 1;
            while !stock.make(slice) {
                calls += 1;
            }
            assert_eq!(calls, stock.total_rows().div_ceil(slice).max(1), "slices of {slice}");
            for g in specs().into_iter().rev() {
                assert!(same(&stock.table(g.clone()), &g.make()), "{g:?} in slices of {slice}");
            }
            // Asked again (or a table never noted): made whole, the same.
            let g = specs().remove(0);
            assert!(same(&stock.table(g.clone()), &g.make()));
        }
    }

    /// A table not yet complete is not handed out half made.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn an_incomplete_table_is_made_whole_when_asked() {
        let mut stock = TableStock::listing();
        let g = Generated::T { name: "t1".into(), shard: 0, rows: 10 };
        stock.table(g.clone());
        let mut stock = stock.into_planned();
        assert!(!stock.make(4));
        assert!(same(&stock.table(g.clone()), &g.make()));
    }
}
