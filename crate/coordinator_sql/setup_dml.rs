//! DELETE and TRUNCATE in a scenario file's setup sections (as a seed's script runs
//! them between its INSERTs): the rows are removed from the node's tables at load
//! time, as PostgreSQL's `ExecDelete` / `ExecuteTruncate` would leave them.
//!
//! - `DELETE FROM t [WHERE cond]`: the condition is analysed over `t`'s columns and
//!   every row where it is true is removed; a partitioned table's partitions are each
//!   done in turn, a foreign table's rows on its server's shard (its remote table,
//!   columns matched by name, as postgres_fdw's remote `DELETE` would).
//! - `TRUNCATE [TABLE] t [, …]`: every row, through partitions and foreign tables
//!   alike (postgres_fdw's `postgresExecForeignTruncate` sends `TRUNCATE` to the
//!   remote table).
//!
//! Invariants: a row is removed only if the condition is true for it (NULL keeps it);
//! the row limits (`catalog::Limits`) count rows inserted, so a DELETE frees nothing
//! of them; a table's indexes keep their columns and are rebuilt after the setup as
//! for INSERT.
//!
//! Where it departs from PostgreSQL: no RETURNING, USING, ONLY or CASCADE; the
//! setup's DELETE runs at load time and is not part of the query the sandbox steps.

use sqlparser::ast;
use sqlparser::tokenizer::Location;

use super::catalog::{relation_name, Cluster, RelKind};
use super::eval::{analyze, Env};
use super::FrontError;
use crate::types::{Datum, Table};

impl Cluster {
    /// `DELETE FROM table [WHERE selection]` on node `n`: the rows removed.
    pub fn delete_where(
        &mut self,
        n: usize,
        table: &ast::ObjectName,
        selection: Option<&ast::Expr>,
        at: Location,
    ) -> Result<usize, FrontError> {
        let name = relation_name(table).map_err(|m| FrontError::at(m, at))?;
        self.delete_from(n, &name, selection, at)
    }

    /// `TRUNCATE t, …` on node `n`: every row of each.
    pub fn truncate(&mut self, n: usize, tables: &[ast::ObjectName], at: Location) -> Result<usize, FrontError> {
        let mut removed = 0;
        for t in tables {
            removed += self.delete_where(n, t, None, at)?;
        }
        Ok(removed)
    }

    fn delete_from(
        &mut self,
        n: usize,
        name: &str,
        selection: Option<&ast::Expr>,
        at: Location,
    ) -> Result<usize, FrontError> {
        let rel = self.nodes[n]
            .relation(name)
            .ok_or_else(|| FrontError::at(format!("relation \"{name}\" does not exist"), at))?
            .clone();
        let names: Vec<String> = rel.columns.iter().map(|c| c.name.clone()).collect();
        let types: Vec<_> = rel.columns.iter().map(|c| c.ty).collect();
        let cond = selection.map(|e| analyze(e, &Env { names: &names, types: &types })).transpose()?;
        match &rel.kind {
            RelKind::Table(_) => {
                let mut random = self.nodes[n].random.clone();
                let r = self.nodes[n].relations.iter_mut().find(|r| r.name == name).expect("looked up above");
                let RelKind::Table(t) = &mut r.kind else { unreachable!("a table") };
                let mut kept = Table::new(&t.name, t.columns.clone());
                kept.indexes = t.indexes.clone();
                let mut removed = 0;
                for i in 0..t.nrows() {
                    let row = t.row(i);
                    let hit = match &cond {
                        Some(c) => c.eval(row, &mut random)?.datum.is_true(),
                        None => true,
                    };
                    if hit {
                        removed += 1;
                    } else {
                        kept.push_row(row);
                    }
                }
                *t = std::rc::Rc::new(kept);
                self.nodes[n].random = random;
                Ok(removed)
            }
            RelKind::Partitioned { partitions, .. } => {
                let mut removed = 0;
                for p in partitions {
                    removed += self.delete_from(n, p, selection, at)?;
                }
                Ok(removed)
            }
            RelKind::Foreign { server, remote_table, .. } => {
                let shard = self.node_index(server).ok_or_else(|| {
                    FrontError::at(
                        format!(
                            "server \"{server}\" is not a shard of this scenario (add a section `-- @shard {server}`)"
                        ),
                        at,
                    )
                })?;
                let remote = self.nodes[shard].relation(remote_table).ok_or_else(|| {
                    FrontError::at(
                        format!("relation \"public.{remote_table}\" does not exist (on server \"{server}\")"),
                        at,
                    )
                })?;
                // The foreign table's columns in the remote row, by name.
                let map: Vec<Option<usize>> = names.iter().map(|c| remote.column_index(c)).collect();
                let mut random = self.nodes[n].random.clone();
                let r =
                    self.nodes[shard].relations.iter_mut().find(|r| &r.name == remote_table).expect("looked up above");
                let RelKind::Table(t) = &mut r.kind else {
                    return Err(FrontError::unsupported(
                        format!("DELETE through \"{name}\" of a remote table that is not a plain table"),
                        at,
                    ));
                };
                let mut kept = Table::new(&t.name, t.columns.clone());
                kept.indexes = t.indexes.clone();
                let mut removed = 0;
                for i in 0..t.nrows() {
                    let row = t.row(i);
                    let local: Vec<Datum> = map.iter().map(|m| m.map_or(Datum::Null, |j| row[j].clone())).collect();
                    let hit = match &cond {
                        Some(c) => c.eval(&local, &mut random)?.datum.is_true(),
                        None => true,
                    };
                    if hit {
                        removed += 1;
                    } else {
                        kept.push_row(row);
                    }
                }
                *t = std::rc::Rc::new(kept);
                Ok(removed)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::coordinator_sql::catalog::RelKind;
    use crate::coordinator_sql::SqlScenario;
    use crate::types::Datum;

    fn rows(s: &SqlScenario, node: &str, table: &str) -> usize {
        let n = s.cluster.node_index(node).unwrap();
        match &s.cluster.nodes[n].relation(table).unwrap().kind {
            RelKind::Table(t) => t.nrows(),
            _ => panic!("{table} is not a table"),
        }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn delete_and_truncate_in_the_setup() {
        let text = "-- @shard s1\ncreate table t1 (a int, b text);\ncreate table t2 (a int, b text);\n\
            -- @coordinator\ncreate server s1 foreign data wrapper postgres_fdw;\n\
            create table pt (a int, b text) partition by range (a);\n\
            create table p0 partition of pt for values from (minvalue) to (10);\n\
            create foreign table p1 partition of pt for values from (10) to (maxvalue) server s1 options (table_name 't1');\n\
            create foreign table ft (b text, a int) server s1 options (table_name 't2');\n\
            create table loc (a int);\n\
            insert into pt select i, 'x' || i from generate_series(0, 19) i;\n\
            insert into ft select 'y', i from generate_series(1, 6) i;\n\
            insert into loc select i from generate_series(1, 5) i;\n\
            delete from pt where a % 2 = 0;\n\
            delete from ft where a > 4;\n\
            delete from loc where a > 100;\n\
            truncate loc;\n\
            -- @query\nselect * from pt;\n";
        let s = SqlScenario::load(text).unwrap();
        assert_eq!(rows(&s, "coordinator", "p0"), 5);
        assert_eq!(rows(&s, "s1", "t1"), 5);
        // By name: t2 has (a, b), ft (b, a).
        assert_eq!(rows(&s, "s1", "t2"), 4);
        assert_eq!(rows(&s, "coordinator", "loc"), 0);
        let log = s.log.join("\n");
        assert!(log.contains("coordinator: DELETE 10") && log.contains("coordinator: DELETE 2"), "{log}");
        assert!(log.contains("coordinator: DELETE 0") && log.contains("coordinator: TRUNCATE TABLE"), "{log}");
        let e = SqlScenario::load("create table t (a int);\ntruncate t cascade;\n").unwrap_err();
        assert!(e.message.contains("TRUNCATE ONLY / RESTART IDENTITY / CASCADE"), "{e}");
        let e = SqlScenario::load("create table t (a int);\nupdate t set a = 1;\n").unwrap_err();
        assert!(e.message.contains("UPDATE in a setup section"), "{e}");
    }

    /// A setup INSERT's `generate_series(a, b, step)` inserts what the query's Function
    /// Scan returns (`funcscan::series_len`): every step-th value, downward too, none
    /// for a step away from the stop, and a zero step is PostgreSQL's error.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn setup_insert_from_a_series_with_a_step() {
        let text = "create table t (a int);\n\
            insert into t select i from generate_series(1, 10, 3) i;\n\
            insert into t select i * 2 from generate_series(10, 1, -4) i;\n\
            insert into t select i from generate_series(1, 10, -1) i;\n\
            -- @query\nselect * from t;\n";
        let s = SqlScenario::load(text).unwrap();
        let n = s.cluster.node_index("coordinator").unwrap();
        let RelKind::Table(t) = &s.cluster.nodes[n].relation("t").unwrap().kind else { panic!("t is a table") };
        let vals: Vec<Datum> = (0..t.nrows()).map(|i| t.row(i)[0].clone()).collect();
        let want: Vec<Datum> = [1, 4, 7, 10, 20, 12, 4].into_iter().map(Datum::Int).collect();
        assert_eq!(vals, want);
        let e = SqlScenario::load("create table t (a int);\ninsert into t select i from generate_series(1, 5, 0) i;\n")
            .unwrap_err();
        assert!(e.message.contains("step size cannot equal zero"), "{e}");
    }

    /// A setup INSERT's WHERE over the series (as the query section's INSERT …
    /// SELECT takes it): only the values it is true for, NULL as false.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn setup_insert_from_a_series_with_a_where() {
        let text = "create table t (a int, b text);\n\
            insert into t select i, 'x' || i from generate_series(1, 20) i where i % 5 = 0 or i = 3;\n\
            insert into t select i, null from generate_series(1, 4) i where i % 2 = 0 or null;\n\
            -- @query\nselect * from t;\n";
        let s = SqlScenario::load(text).unwrap();
        let n = s.cluster.node_index("coordinator").unwrap();
        let RelKind::Table(t) = &s.cluster.nodes[n].relation("t").unwrap().kind else { panic!("t is a table") };
        let vals: Vec<Datum> = (0..t.nrows()).map(|i| t.row(i)[0].clone()).collect();
        let want: Vec<Datum> = [3, 5, 10, 15, 20, 2, 4].into_iter().map(Datum::Int).collect();
        assert_eq!(vals, want);
        assert_eq!(t.row(1)[1], Datum::text("x5"));
        let e = SqlScenario::load(
            "create table t (a int);\ninsert into t select i from generate_series(1, 5) i where i;\n",
        )
        .unwrap_err();
        assert!(e.message.contains("argument of WHERE must be type boolean"), "{e}");
    }
}
