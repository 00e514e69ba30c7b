//! INSERT in the query section: parse analysis of the target and its columns
//! (analyze.c's `transformInsertStmt`, `checkInsertTargets`), the source planned as
//! any SELECT (`planner`), and the ModifyTable plan over it (createplan.c's
//! `make_modifytable`), with postgres_fdw's planning of a foreign target
//! (`postgresPlanForeignModify`: the remote `INSERT INTO … (every column) VALUES
//! ($1, …)`, deparse.c's `deparseInsertSql`) and its batch size
//! (`postgresGetForeignModifyBatchSize`: the table's `batch_size` option, else the
//! server's, else 1, at most 65,535 parameters a statement).
//!
//! The rules:
//! - without a column list the source fills the table's first columns in order (and
//!   may not have more columns than the table); with one, exactly the columns named,
//!   each once;
//! - a column not filled is NULL (the sandbox has no column defaults);
//! - `VALUES` of one row is planned as a SELECT of its values without FROM (PostgreSQL
//!   plans it the same way, a Result); more rows would be a Values Scan, which the
//!   sandbox lacks: refused by name;
//! - a partitioned target routes each row at run time (`executor::node_modifytable`);
//!   its partitions must have its columns in its order.
//!
//! Where it departs from PostgreSQL: no RETURNING, ON CONFLICT, OVERRIDING, DEFAULT
//! VALUES or column defaults; the source's types are cast to the columns' at run time
//! rather than checked at parse analysis (a text column inserted into an integer
//! column is an error only for a value that does not read as one).

use sqlparser::ast;
use sqlparser::tokenizer::Location;

use super::catalog::{ident, relation_name, Node, RelKind, Relation};
use super::planner::{plan_query, Planned};
use super::statement::Stmt;
use super::FrontError;
use crate::plan::modifytable::{CmdType, ForeignModify, ModifyTablePlan, PartitionRouting, ResultRel};
use crate::plan::Plan;
use crate::sql_text::quote_identifier;

/// libpq's bound on a statement's parameters (`PQ_QUERY_PARAM_MAX_LIMIT`).
const PARAM_MAX: usize = 65_535;

/// The plan of the query section's INSERT.
pub fn plan_modify(coord: &Node, stmt: &Stmt, text: &str, at: Location) -> Result<Planned, FrontError> {
    let Stmt::Insert { table, columns, source } = stmt else {
        return Err(FrontError::at("internal error: not an INSERT", at));
    };
    let name = relation_name(table).map_err(|m| FrontError::at(m, at))?;
    let rel = coord.relation(&name).ok_or_else(|| FrontError::at(format!("relation \"{name}\" does not exist"), at))?;
    let targets = insert_targets(rel, columns)?;
    let query = values_as_select(source, at)?;
    let mut planned = plan_query(coord, &query, text)?;
    let width = planned.columns.len();
    if width > targets.len() {
        return Err(FrontError::at("INSERT has more expressions than target columns", at));
    }
    if !columns.is_empty() && width < targets.len() {
        return Err(FrontError::at("INSERT has more target columns than expressions", at));
    }
    let source = (0..rel.columns.len()).map(|c| targets.iter().take(width).position(|&t| t == c)).collect();
    let target = result_rel(coord, rel, &mut planned.servers, at)?;
    let plan = Plan::ModifyTable(Box::new(ModifyTablePlan {
        operation: CmdType::Insert,
        relation: name,
        target,
        columns: rel.columns.iter().map(|c| (c.name.clone(), c.ty)).collect(),
        source,
        child: planned.plan,
    }));
    Ok(Planned { plan, columns: vec![], servers: planned.servers, order_key: None, order_keys: vec![] })
}

/// checkInsertTargets: the columns the source fills, in its order.
fn insert_targets(rel: &Relation, columns: &[ast::Ident]) -> Result<Vec<usize>, FrontError> {
    if columns.is_empty() {
        return Ok((0..rel.columns.len()).collect());
    }
    let mut out = Vec::with_capacity(columns.len());
    for c in columns {
        let n = ident(c);
        let i = rel.column_index(&n).ok_or_else(|| {
            FrontError::at(format!("column \"{n}\" of relation \"{}\" does not exist", rel.name), c.span.start)
        })?;
        if out.contains(&i) {
            return Err(FrontError::at(format!("column \"{n}\" specified more than once"), c.span.start));
        }
        out.push(i);
    }
    Ok(out)
}

/// The source as a query: `VALUES (one row)` becomes `SELECT its values`.
fn values_as_select(source: &ast::Query, at: Location) -> Result<ast::Query, FrontError> {
    let ast::SetExpr::Values(v) = source.body.as_ref() else {
        return Ok(source.clone());
    };
    let [row] = v.rows.as_slice() else {
        return Err(FrontError::unsupported(
            "INSERT … VALUES of more than one row (PostgreSQL's Values Scan); write INSERT … SELECT … UNION ALL SELECT …",
            at,
        ));
    };
    let mut sql = String::from("SELECT ");
    sql.push_str(&row.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", "));
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let parsed = sqlparser::parser::Parser::new(&dialect)
        .with_recursion_limit(crate::shard_sql::nesting::MAX_RECURSION)
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_query())
        .map_err(|e| FrontError::at(format!("syntax error: {e}"), at))?;
    Ok(*parsed)
}

/// The ResultRelInfo of `rel`: a local table, a foreign table's foreign modify, or a
/// partitioned table's routing over its partitions (their servers added to `servers`).
fn result_rel(coord: &Node, rel: &Relation, servers: &mut Vec<String>, at: Location) -> Result<ResultRel, FrontError> {
    Ok(match &rel.kind {
        RelKind::Table(_) => ResultRel::Local { table: rel.name.clone() },
        RelKind::Foreign { server, remote_schema, remote_table, options } => {
            if !servers.contains(server) {
                servers.push(server.clone());
            }
            let option = |o: &[(String, String)]| o.iter().find(|(k, _)| k == "batch_size").map(|(_, v)| v.clone());
            let server_options = coord.server(server).map(|s| s.options.clone()).unwrap_or_default();
            let batch: usize =
                option(options).or_else(|| option(&server_options)).and_then(|v| v.parse().ok()).unwrap_or(1);
            let ncols = rel.columns.len().max(1);
            ResultRel::Foreign(ForeignModify {
                relation: rel.name.clone(),
                server: server.clone(),
                remote_table: format!("{}.{}", quote_identifier(remote_schema), quote_identifier(remote_table)),
                columns: rel.columns.iter().map(|c| c.name.clone()).collect(),
                batch_size: batch.clamp(1, (PARAM_MAX / ncols).max(1)),
            })
        }
        RelKind::Partitioned { strategy, key, partitions } => {
            let mut parts = Vec::with_capacity(partitions.len());
            for p in partitions {
                let part =
                    coord.relation(p).ok_or_else(|| FrontError::at(format!("relation \"{p}\" does not exist"), at))?;
                let same = part.columns.len() == rel.columns.len()
                    && part.columns.iter().zip(&rel.columns).all(|(a, b)| a.name == b.name && a.ty == b.ty);
                if !same {
                    return Err(FrontError::unsupported(
                        format!("INSERT into \"{}\": partition \"{p}\" has other columns than its parent", rel.name),
                        at,
                    ));
                }
                let Some((_, bound)) = &part.partition_of else {
                    return Err(FrontError::at(format!("internal error: \"{p}\" is not a partition"), at));
                };
                parts.push((bound.clone(), result_rel(coord, part, servers, at)?));
            }
            ResultRel::Partitioned(PartitionRouting {
                relation: rel.name.clone(),
                strategy: *strategy,
                key: key.iter().map(|&k| (k, rel.columns[k].ty)).collect(),
                partitions: parts,
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::clock::Clock;
    use crate::coordinator_sql::SqlScenario;
    use crate::instrument::ExplainOptions;
    use crate::knobs::{Knobs, Source};

    const SETUP: &str =
        "-- @shard s1\ncreate table t1 (a int, b int, c text);\ncreate table ft_remote (a int, b int, c text);\n\
        insert into t1 select i % 100, i, 'x' from generate_series(0, 249) i;\n\
        -- @shard s2\ncreate table t2 (a int, b int, c text);\n\
        insert into t2 select i % 100, i, 'y' from generate_series(250, 499) i;\n\
        -- @coordinator\ncreate extension postgres_fdw;\n\
        create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');\n\
        create server s2 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');\n\
        create table pt (a int, b int, c text) partition by range (b);\n\
        create foreign table pt1 partition of pt for values from (0) to (250) server s1 options (table_name 't1');\n\
        create foreign table pt2 partition of pt for values from (250) to (500) server s2 options (table_name 't2');\n\
        create foreign table ft (a int, b int, c text) server s1 options (table_name 'ft_remote', batch_size '4');\n\
        create table loc (a int, b int, c text);\n";

    /// Runs `query` in `async_mode`: EXPLAIN (ANALYZE, VERBOSE, COSTS OFF), the
    /// shards' statement logs and their tables' rows afterwards.
    fn run(query: &str, async_mode: bool) -> (String, Vec<Vec<String>>, Vec<(String, usize)>, usize) {
        let base = SqlScenario::load(SETUP).unwrap();
        let s = base.with_query(query).unwrap();
        let sc = s.scenario(&Knobs::default(), Source::Json).unwrap();
        let mut run = sc.start(async_mode, Clock::virtual_clock(), false).unwrap();
        run.run_to_end().unwrap();
        let explain = run.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE);
        let logs = run.host.servers.iter().map(|s| s.statement_log().into_iter().map(|(_, l)| l).collect()).collect();
        let rows = run
            .host
            .servers
            .iter()
            .flat_map(|s| s.catalog.tables.iter().map(|t| (format!("{}.{}", s.name, t.name), t.nrows())))
            .collect();
        (explain, logs, rows, run.es.local_changes.inserted.len())
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn insert_into_a_foreign_table_in_batches() {
        for async_mode in [false, true] {
            let (explain, logs, rows, local) = run("insert into ft select * from pt where a < 3;", async_mode);
            assert!(explain.starts_with("Insert on public.ft"), "{explain}");
            assert!(
                explain.contains("Remote SQL: INSERT INTO public.ft_remote(a, b, c) VALUES ($1, $2, $3)"),
                "{explain}"
            );
            assert!(explain.contains("Batch Size: 4"), "{explain}");
            assert_eq!(explain.contains("Async Foreign Scan"), async_mode, "{explain}");
            assert!(rows.contains(&("s1.ft_remote".to_string(), 15)), "{rows:?}");
            assert_eq!(local, 0);
            let s1 = logs.iter().find(|l| l.iter().any(|x| x.contains("ft_remote"))).unwrap();
            let inserts: Vec<&String> = s1.iter().filter(|l| l.contains("INSERT")).collect();
            // 15 rows: three batches of four, then one of three, prepared anew.
            assert_eq!(inserts.len(), 4, "{s1:#?}");
            assert!(
                inserts[0].starts_with(
                    "execute pgsql_fdw_prep_1: INSERT INTO public.ft_remote(a, b, c) VALUES ($1, $2, $3), ($4"
                ),
                "{s1:#?}"
            );
            assert!(inserts[3].starts_with("execute pgsql_fdw_prep_2: "), "{s1:#?}");
            assert!(s1.iter().any(|l| l == "statement: DEALLOCATE pgsql_fdw_prep_1"), "{s1:#?}");
            assert_eq!(s1.last().map(String::as_str), Some("statement: COMMIT TRANSACTION"), "{s1:#?}");
        }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn insert_routes_rows_and_keeps_local_ones() {
        let (explain, _, rows, local) = run("insert into pt select a, b + 1, c from pt where a = 5;", true);
        assert!(explain.starts_with("Insert on public.pt"), "{explain}");
        // b = 5, 105, 205 → t1 (b + 1 < 250); 305, 405 → t2.
        assert!(rows.contains(&("s1.t1".to_string(), 253)), "{rows:?}");
        assert!(rows.contains(&("s2.t2".to_string(), 252)), "{rows:?}");
        assert_eq!(local, 0);
        let (_, _, _, local) = run("insert into loc (c, a) select c, a from pt where b = 7;", false);
        assert_eq!(local, 1);
        // EXPLAIN without ANALYZE plans only: nothing is sent, nothing is stored.
        let base = SqlScenario::load(SETUP).unwrap();
        let s = base.with_query("explain (verbose, costs off) insert into ft select * from pt;").unwrap();
        let run = s.plan_only_run(&Knobs::default(), Source::Json, true).unwrap();
        assert!(run.host.servers.iter().all(|s| s.statement_log().is_empty()));
    }
}
