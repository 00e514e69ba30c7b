//! Parse analysis and planning of INSERT's `ON CONFLICT` (parse_clause.c's
//! `transformOnConflictClause`, plancat.c's `infer_arbiter_indexes`), and
//! postgres_fdw's part in it (`postgresPlanForeignModify`: only `DO NOTHING` without
//! a conflict target is shipped, `INSERT … ON CONFLICT DO NOTHING`).
//!
//! The rules, as PostgreSQL 15 has them:
//! - `(col)`: the arbiters are the target's unique indexes on exactly that column;
//!   none is "there is no unique or exclusion constraint matching the ON CONFLICT
//!   specification" (a foreign table has no index, so always this error);
//! - `ON CONSTRAINT name`: that unique index;
//! - `DO UPDATE` needs one of the two;
//! - `DO NOTHING` without a target checks every unique index, and names none.
//!
//! Into a partitioned table: the arbiters are the partitioned table's unique indexes
//! (on its partition key, so no foreign partition: `catalog`), and each row routed
//! to a local partition is checked against that partition's copies of them
//! (ExecInitPartitionInfo, `OnConflict::for_partition`); a foreign partition gets
//! `ON CONFLICT DO NOTHING` in its remote INSERT (postgresBeginForeignInsert), and
//! can meet nothing else (a target or DO UPDATE needs a unique index, which a table
//! with a foreign partition cannot have). DO UPDATE whose new row leaves its
//! partition is PostgreSQL's "invalid ON UPDATE specification" (`executor`).
//!
//! Invariants: `DO UPDATE`'s SET and WHERE are analysed over the table's columns
//! followed by `excluded`'s, so `Expr::Col(i)` with `i >= ncols` reads the proposed
//! row (`executor::on_conflict`).
//!
//! Departs from PostgreSQL: an inference specification of one column, without
//! expressions, opclasses or a WHERE.

use sqlparser::ast;
use sqlparser::tokenizer::Location;

use super::catalog::{ident, Relation};
use super::FrontError;
use crate::plan::on_conflict::{ConflictAction, OnConflict, UniqueKey};

const NO_MATCH: &str = "there is no unique or exclusion constraint matching the ON CONFLICT specification";

/// The planned ON CONFLICT of an INSERT into `rel`, or None without one.
pub fn plan_on_conflict(
    rel: &Relation,
    clause: Option<&ast::OnConflict>,
    at: Location,
) -> Result<Option<OnConflict>, FrontError> {
    let Some(clause) = clause else {
        return Ok(None);
    };
    let arbiters = arbiters(rel, clause.conflict_target.as_ref(), at)?;
    let action = match &clause.action {
        ast::OnConflictAction::DoNothing => ConflictAction::Nothing,
        ast::OnConflictAction::DoUpdate(u) => {
            if clause.conflict_target.is_none() {
                return Err(FrontError::at(
                    "ON CONFLICT DO UPDATE requires inference specification or constraint name",
                    at,
                ));
            }
            return do_update(rel, u, arbiters, at).map(Some);
        }
    };
    Ok(Some(OnConflict { action, arbiters, filter_sql: None }))
}

/// infer_arbiter_indexes: the unique indexes the conflict target names.
fn arbiters(rel: &Relation, target: Option<&ast::ConflictTarget>, at: Location) -> Result<Vec<UniqueKey>, FrontError> {
    match target {
        None => Ok(vec![]),
        Some(ast::ConflictTarget::Columns(cols)) => {
            let mut wanted = Vec::with_capacity(cols.len());
            for c in cols {
                let name = ident(c);
                let i = rel
                    .column_index(&name)
                    .ok_or_else(|| FrontError::at(format!("column \"{name}\" does not exist"), c.span.start))?;
                wanted.push(i);
            }
            wanted.sort_unstable();
            wanted.dedup();
            let found: Vec<UniqueKey> = rel.unique.iter().filter(|u| wanted == [u.column]).cloned().collect();
            if found.is_empty() {
                return Err(FrontError::at(NO_MATCH, at));
            }
            Ok(found)
        }
        Some(ast::ConflictTarget::OnConstraint(name)) => {
            let n = super::catalog::relation_name(name).map_err(|m| FrontError::at(m, at))?;
            match rel.unique.iter().find(|u| u.name == n) {
                Some(u) => Ok(vec![u.clone()]),
                None => {
                    Err(FrontError::at(format!("constraint \"{n}\" for table \"{}\" does not exist", rel.name), at))
                }
            }
        }
    }
}

/// `DO UPDATE SET col = expr, … [WHERE …]` over (existing row, `excluded` row).
fn do_update(
    rel: &Relation,
    u: &ast::DoUpdate,
    arbiters: Vec<UniqueKey>,
    at: Location,
) -> Result<OnConflict, FrontError> {
    let mut names: Vec<String> = rel.columns.iter().map(|c| c.name.clone()).collect();
    names.extend(rel.columns.iter().map(|c| format!("excluded.{}", c.name)));
    let mut types: Vec<crate::plan::SqlType> = rel.columns.iter().map(|c| c.ty).collect();
    types.extend(rel.columns.iter().map(|c| c.ty));
    let env = super::eval::Env { names: &names, types: &types };
    let mut sets = Vec::with_capacity(u.assignments.len());
    for a in &u.assignments {
        let col = match &a.target {
            ast::AssignmentTarget::ColumnName(n) if n.0.len() == 1 => &n.0[0],
            _ => return Err(FrontError::unsupported("ON CONFLICT DO UPDATE SET (a, b) = … or SET t.a = …", at)),
        };
        let c = ident(col);
        let i = rel.column_index(&c).ok_or_else(|| {
            FrontError::at(format!("column \"{c}\" of relation \"{}\" does not exist", rel.name), col.span.start)
        })?;
        if sets.iter().any(|(j, _)| *j == i) {
            return Err(FrontError::at(format!("multiple assignments to same column \"{c}\""), col.span.start));
        }
        sets.push((i, super::eval::analyze(&a.value, &env)?.expr));
    }
    let filter = u.selection.as_ref().map(|w| super::eval::analyze(w, &env)).transpose()?.map(|a| a.expr);
    // EXPLAIN qualifies both relations' columns (`loc.b`, `excluded.b`).
    let qualified: Vec<String> = rel
        .columns
        .iter()
        .map(|c| {
            format!("{}.{}", crate::sql_text::quote_identifier(&rel.name), crate::sql_text::quote_identifier(&c.name))
        })
        .chain(rel.columns.iter().map(|c| format!("excluded.{}", crate::sql_text::quote_identifier(&c.name))))
        .collect();
    let filter_sql = filter.as_ref().map(|f| f.to_sql(&qualified));
    Ok(OnConflict { action: ConflictAction::Update { sets, filter }, arbiters, filter_sql })
}

#[cfg(test)]
mod tests {
    use crate::clock::Clock;
    use crate::coordinator_sql::SqlScenario;
    use crate::instrument::ExplainOptions;
    use crate::knobs::{Knobs, Source};

    const SETUP: &str = "-- @shard s1\ncreate table ft_remote (a int, b int, c text);\n\
        -- @coordinator\ncreate extension postgres_fdw;\n\
        create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');\n\
        create foreign table ft (a int, b int, c text) server s1 options (table_name 'ft_remote');\n\
        create table loc (a int primary key, b int, c text);\n\
        create table loc2 (a int, b int unique, c text);\n\
        insert into loc values (1, 1, 'x'), (2, 2, 'y');\n";

    /// Runs `query`: EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) text, RETURNING's rows, the
    /// local changes (inserted, modified) and the shard's statements.
    fn run(query: &str) -> Result<(String, Vec<String>, usize, usize, Vec<String>), String> {
        run_over(SETUP, query)
    }

    /// `run` over the scenario file `setup`.
    fn run_over(setup: &str, query: &str) -> Result<(String, Vec<String>, usize, usize, Vec<String>), String> {
        let base = SqlScenario::load(setup).map_err(|e| e.to_string())?;
        let s = base.with_query(query).map_err(|e| e.to_string())?;
        let sc = s.scenario(&Knobs::default(), Source::Json).map_err(|e| e.to_string())?;
        let mut r = sc.start(true, Clock::virtual_clock(), false).map_err(|e| e.to_string())?;
        r.keep_rows = true;
        r.run_to_end().map_err(|e| e.to_string())?;
        let explain = r.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE);
        let rows = r.rows.iter().map(|x| x.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("|")).collect();
        let logs = r.host.servers.iter().flat_map(|s| s.statement_log().into_iter().map(|(_, l)| l)).collect();
        Ok((explain, rows, r.es.local_changes.inserted.len(), r.es.local_changes.modified.len(), logs))
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn do_nothing_and_do_update_on_a_local_table() {
        let (explain, _, inserted, modified, _) =
            run("insert into loc values (1, 5, 'z'), (3, 3, 'w') on conflict do nothing;").unwrap();
        assert!(explain.contains("Conflict Resolution: NOTHING\n"), "{explain}");
        assert!(!explain.contains("Arbiter"), "{explain}");
        assert!(
            explain.contains("Output: \"*VALUES*\".column1, \"*VALUES*\".column2, \"*VALUES*\".column3\n"),
            "{explain}"
        );
        assert!(explain.contains("Tuples Inserted: 1\n"), "{explain}");
        assert!(explain.contains("Conflicting Tuples: 1\n"), "{explain}");
        assert_eq!((inserted, modified), (1, 0));
        let (explain, rows, inserted, modified, _) =
            run("insert into loc values (1, 5, 'z'), (4, 3, 'w') on conflict (a) do update \
             set b = excluded.b + loc.b, c = excluded.c where loc.b < 100 returning *;")
            .unwrap();
        assert!(explain.contains("Conflict Arbiter Indexes: loc_pkey\n"), "{explain}");
        assert!(explain.contains("Conflict Filter: (loc.b < 100)\n"), "{explain}");
        assert_eq!(rows, ["1|6|z", "4|3|w"]);
        assert_eq!((inserted, modified), (1, 1));
        // The WHERE removes the update: the row conflicts, nothing changes.
        let (explain, rows, _, modified, _) =
            run("insert into loc values (2, 9, 'q') on conflict (a) do update set b = excluded.b where loc.b < 0;")
                .unwrap();
        assert!(explain.contains("Rows Removed by Conflict Filter: 1\n"), "{explain}");
        assert!(explain.contains("Tuples Inserted: 0\n"), "{explain}");
        assert_eq!((rows.len(), modified), (0, 0));
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn postgresql_errors() {
        let e = run("insert into loc values (7, 5, 'z'), (7, 6, 'q') on conflict (a) do update set b = excluded.b;")
            .unwrap_err();
        assert!(e.contains("ON CONFLICT DO UPDATE command cannot affect row a second time"), "{e}");
        let e = run("insert into loc values (1, 5, 'z');").unwrap_err();
        assert!(e.contains("duplicate key value violates unique constraint \"loc_pkey\""), "{e}");
        let e = run("insert into loc values (7, 5, 'z') on conflict (b) do nothing;").unwrap_err();
        assert!(e.contains(NO_MATCH_TEXT), "{e}");
        let e = run("insert into loc values (7, 5, 'z') on conflict do update set b = 1;").unwrap_err();
        assert!(e.contains("ON CONFLICT DO UPDATE requires inference specification or constraint name"), "{e}");
        let e = run("insert into ft values (1, 2, 'a') on conflict (a) do nothing;").unwrap_err();
        assert!(e.contains(NO_MATCH_TEXT), "{e}");
        let (_, _, _, _, _) = run("insert into loc2 values (1, 2, 'a') on conflict (b) do nothing;").unwrap();
        // An UPDATE checks the keys of each new row version.
        let e = run("update loc set a = 2 where a = 1;").unwrap_err();
        assert!(e.contains("duplicate key value violates unique constraint \"loc_pkey\""), "{e}");
        let e = run("insert into loc values (null, 5, 'z');").unwrap_err();
        assert!(e.contains("null value in column \"a\" of relation \"loc\" violates not-null constraint"), "{e}");
        let (_, _, _, modified, _) = run("update loc set a = a + 10;").unwrap();
        assert_eq!(modified, 2);
    }

    const NO_MATCH_TEXT: &str = super::NO_MATCH;

    /// A range-partitioned table with a primary key over two local partitions and a
    /// default one, and one with a foreign partition (no unique index possible).
    const PARTITIONED: &str = "-- @shard s1\ncreate table f1r (a int, b int, c text);\n\
        -- @coordinator\ncreate extension postgres_fdw;\n\
        create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');\n\
        create table qt (a int primary key, b int, c text) partition by range (a);\n\
        create table qt1 partition of qt for values from (0) to (10);\n\
        create unique index on qt (a);\n\
        create table qt2 partition of qt for values from (10) to (20);\n\
        create table qt3 partition of qt default;\n\
        insert into qt values (1, 1, 'x'), (12, 2, 'y'), (30, 3, 'z');\n\
        create table pf (a int, b int, c text) partition by range (a);\n\
        create foreign table pf1 partition of pf for values from (0) to (10) server s1 options (table_name 'f1r');\n\
        create table pf2 partition of pf for values from (10) to (20);\n";

    /// `query` over PARTITIONED: EXPLAIN (ANALYZE, VERBOSE) text, RETURNING's rows, the
    /// local changes (inserted, modified) and the shard's statements.
    fn run_partitioned(query: &str) -> Result<(String, Vec<String>, usize, usize, Vec<String>), String> {
        run_over(PARTITIONED, query)
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn into_a_partitioned_table_each_partition_checks_its_copies() {
        // The partitions got copies of the parent's indexes, named by ChooseIndexName.
        let base = SqlScenario::load(PARTITIONED).unwrap();
        let names = |rel: &str| -> Vec<String> {
            let r = base.cluster.coordinator().relation(rel).unwrap();
            r.unique.iter().map(|u| format!("{}<{}", u.name, u.parent.clone().unwrap_or_default())).collect()
        };
        assert_eq!(names("qt"), ["qt_pkey<", "qt_a_idx<"]);
        assert_eq!(names("qt1"), ["qt1_pkey<qt_pkey", "qt1_a_idx<qt_a_idx"]);
        assert_eq!(names("qt3"), ["qt3_pkey<qt_pkey", "qt3_a_idx<qt_a_idx"]);
        let (explain, _, inserted, modified, _) = run_partitioned(
            "insert into qt values (1, 5, 'a'), (5, 5, 'b'), (30, 0, 'c'), (40, 0, 'd') on conflict do nothing;",
        )
        .unwrap();
        assert!(explain.starts_with("Insert on public.qt"), "{explain}");
        assert!(explain.contains("Conflict Resolution: NOTHING\n"), "{explain}");
        assert!(explain.contains("Tuples Inserted: 2\n  Conflicting Tuples: 2\n"), "{explain}");
        assert_eq!((inserted, modified), (2, 0));
        let (explain, rows, inserted, modified, _) = run_partitioned(
            "insert into qt values (12, 5, 'a'), (13, 5, 'b') on conflict (a) do update set b = qt.b + excluded.b \
             where qt.b < 10 returning *;",
        )
        .unwrap();
        assert!(explain.contains("Conflict Arbiter Indexes: qt_pkey, qt_a_idx\n"), "{explain}");
        assert!(explain.contains("Conflict Filter: (qt.b < 10)\n"), "{explain}");
        assert_eq!(rows, ["12|7|y", "13|5|b"]);
        assert_eq!((inserted, modified), (1, 1));
        // A plain INSERT routed to a partition meets its unique index.
        let e = run_partitioned("insert into qt values (30, 1, 'q');").unwrap_err();
        assert!(e.contains("duplicate key value violates unique constraint \"qt3_pkey\""), "{e}");
        // DO UPDATE may not move the row to another partition.
        let e = run_partitioned("insert into qt values (1, 1, 'q') on conflict (a) do update set a = 11;").unwrap_err();
        assert!(e.contains("invalid ON UPDATE specification"), "{e}");
        let e = run_partitioned("insert into qt values (30, 1, 'q') on conflict (a) do update set a = 5;").unwrap_err();
        assert!(e.contains("invalid ON UPDATE specification"), "{e}");
        let (_, _, _, modified, _) =
            run_partitioned("insert into qt values (30, 1, 'q') on conflict (a) do update set a = 31;").unwrap();
        assert_eq!(modified, 1);
        let e =
            run_partitioned("insert into qt values (1, 1, 'q'), (1, 2, 'r') on conflict (a) do update set c = 'w';")
                .unwrap_err();
        assert!(e.contains("cannot affect row a second time"), "{e}");
        let e = run_partitioned("insert into qt values (1, 1, 'q') on conflict (b) do nothing;").unwrap_err();
        assert!(e.contains(NO_MATCH_TEXT), "{e}");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_foreign_partition_gets_do_nothing_and_nothing_else() {
        let (explain, _, inserted, _, logs) =
            run_partitioned("insert into pf values (1, 1, 'a'), (11, 1, 'b') on conflict do nothing;").unwrap();
        assert!(explain.contains("Conflict Resolution: NOTHING\n  Tuples Inserted: 2\n"), "{explain}");
        assert_eq!(inserted, 1);
        assert!(
            logs.iter()
                .any(|l| l.ends_with("INSERT INTO public.f1r(a, b, c) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING")),
            "{logs:?}"
        );
        // No unique index: a target or DO UPDATE matches none.
        let e = run_partitioned("insert into pf values (1, 1, 'a') on conflict (a) do nothing;").unwrap_err();
        assert!(e.contains(NO_MATCH_TEXT), "{e}");
        let e = run_partitioned("insert into pf values (1, 1, 'a') on conflict (a) do update set b = 2;").unwrap_err();
        assert!(e.contains(NO_MATCH_TEXT), "{e}");
        // DefineIndex's and DefineRelation's errors.
        let load =
            |extra: &str| SqlScenario::load(&format!("{PARTITIONED}{extra}")).map(|_| ()).unwrap_err().to_string();
        let e = load("create unique index on pf (a);\n");
        assert!(e.contains("cannot create unique index on partitioned table \"pf\""), "{e}");
        let e = load("create unique index on qt (b);\n");
        assert!(e.contains("unique constraint on partitioned table must include all partitioning columns"), "{e}");
        let e = load("create foreign table qt4 partition of qt for values from (100) to (200) server s1;\n");
        assert!(e.contains("cannot create foreign partition of partitioned table \"qt\""), "{e}");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn do_nothing_is_shipped_to_a_foreign_table() {
        let (explain, _, _, _, logs) = run("insert into ft values (1, 2, 'a') on conflict do nothing;").unwrap();
        assert!(
            explain.contains(
                "Remote SQL: INSERT INTO public.ft_remote(a, b, c) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING\n  Batch \
                 Size: 1\n  Conflict Resolution: NOTHING\n  Tuples Inserted: 1\n  Conflicting Tuples: 0\n"
            ),
            "{explain}"
        );
        assert!(logs.iter().any(|l| l.ends_with("VALUES ($1, $2, $3) ON CONFLICT DO NOTHING")), "{logs:?}");
    }
}
