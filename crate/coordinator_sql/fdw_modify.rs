//! UPDATE and DELETE of a foreign table that cannot be a direct modify: postgres_fdw's
//! foreign modify, planned (postgres_fdw.c's `postgresAddForeignUpdateTargets` and
//! `postgresPlanForeignModify`; deparse.c's `deparseUpdateSql`, `deparseDeleteSql`
//! and `deparseLockingClause`).
//!
//! PostgreSQL falls back to it when `postgresPlanDirectModify` says no: a qual that
//! stays local (a `Filter:` on the scan, e.g. over `random()`), or a SET expression
//! that is not shippable. The plan is then
//!
//! ```text
//! Update on public.ft
//!   Remote SQL: UPDATE public.ft_remote SET c = $2 WHERE ctid = $1
//!   ->  Foreign Scan on public.ft
//!         Output: 'q'::text, ctid, ft.*
//!         Filter: ((ft.c || (ft.b)::text) <> 'zz'::text)
//!         Remote SQL: SELECT a, b, c, ctid FROM public.ft_remote WHERE ((a = 5)) FOR UPDATE
//! ```
//!
//! The rules (what PostgreSQL 15 does, run against it):
//! - the scan locks its rows and reads their ctid after its columns (`RowMark`): an
//!   UPDATE reads every column (the whole row, `ft.*`, from which the new row is
//!   made), a DELETE only the columns its local Filter needs (else `SELECT ctid`);
//! - the remote statement names the row by `ctid = $1`; an UPDATE's SET columns are
//!   `$2`, … in the table's column order, whatever order the SET list has;
//! - RETURNING comes back from the remote statement: `RETURNING` the columns its
//!   expressions use, in the table's order, projected locally (as a direct modify's).
//!
//! Invariants: the child's last column is the ctid; the SET expressions read the
//! child's columns, which for an UPDATE are the table's, in its order.
//!
//! A partitioned target's foreign partitions use it too (`partition_modify`, which
//! gives the scan's Output its `tableoid` and qualified names).
//!
//! `UPDATE … FROM` / `DELETE … USING` of a foreign table use its remote statement
//! ([`foreign_row_modify`]) over the join (`modify_join`).
//!
//! Where it departs from PostgreSQL: the scan's Output shows the SET values and `ctid`
//! but reads its rows whole (it makes the new row itself, as the executor's
//! projection of PostgreSQL's subplan would).

use sqlparser::tokenizer::Location;

use super::catalog::{RelKind, Relation};
use super::FrontError;
use crate::plan::modifytable::{CmdType, ForeignRowModify};
use crate::plan::{Expr, Plan, RemoteTarget, RowMark};
use crate::sql_text::quote_identifier;

/// What the statement asks of the foreign table, as `plan_direct_modify` analysed it.
pub(super) struct ModifyRequest<'a> {
    pub operation: CmdType,
    pub rel: &'a Relation,
    /// UPDATE's SET list: each column and its new value over the table's columns.
    pub sets: &'a [(usize, Expr)],
    /// The columns RETURNING uses, in the table's order (the remote RETURNING list).
    pub returned: &'a [usize],
}

/// The scan and the target of a foreign modify, from the plan of `SELECT * FROM ft
/// WHERE …` (`scan_plan`): the scan is given its row mark and the columns it must
/// read, its local Filter kept (re-pointed to them).
pub(super) fn plan_foreign_modify(
    req: &ModifyRequest,
    scan_plan: Plan,
    at: Location,
) -> Result<(Plan, ForeignRowModify), FrontError> {
    if !matches!(req.rel.kind, RelKind::Foreign { .. }) {
        return Err(FrontError::at("internal error: a foreign modify of a table that is not foreign", at));
    }
    let (mut scan, filter) = match scan_plan {
        Plan::ForeignScan(f) => (f, None),
        Plan::Result { child, filter: Some(filter), targets: None } => match *child {
            Plan::ForeignScan(f) => (f, Some(filter)),
            _ => return Err(refused(req, at)),
        },
        _ => return Err(refused(req, at)),
    };
    if scan.remote.aggregated() || scan.remote.limit.is_some() || !scan.remote.order_by.is_empty() {
        return Err(refused(req, at));
    }
    // The table column each of the scan's outputs was.
    let was: Vec<usize> = scan
        .remote
        .targets
        .iter()
        .map(|t| match t {
            RemoteTarget::Col(c) => Ok(*c),
            RemoteTarget::Agg(..) | RemoteTarget::Const(_) => Err(refused(req, at)),
        })
        .collect::<Result<_, _>>()?;
    // The columns read: every one for UPDATE, the Filter's for DELETE.
    let read: Vec<usize> = match req.operation {
        CmdType::Update => (0..req.rel.columns.len()).collect(),
        _ => {
            let mut cols = Vec::new();
            if let Some(f) = &filter {
                f.for_each_col(&mut |c| cols.push(was[c]));
            }
            cols.sort_unstable();
            cols.dedup();
            cols
        }
    };
    let filter = filter.map(|f| f.map_cols(&|c| read.iter().position(|&r| r == was[c]).unwrap_or(c)));
    let names: Vec<String> = req.rel.columns.iter().map(|c| c.name.clone()).collect();
    scan.remote.targets = read.iter().map(|&c| RemoteTarget::Col(c)).collect();
    scan.remote.row_mark = Some(RowMark { shown: shown_output(req, &names, scan.alias.as_ref()) });
    let ctid_col = read.len();
    let child = match filter {
        Some(filter) => Plan::Result { child: Box::new(Plan::ForeignScan(scan)), filter: Some(filter), targets: None },
        None => Plan::ForeignScan(scan),
    };
    let target = foreign_row_modify(req, ctid_col, at)?;
    Ok((child, target))
}

/// The foreign modify's remote statement and what ModifyTable sends with it
/// (deparseUpdateSql / deparseDeleteSql): the row named by its ctid, the child's
/// column `ctid_col`; `req.sets` read the child's row.
pub(super) fn foreign_row_modify(
    req: &ModifyRequest,
    ctid_col: usize,
    at: Location,
) -> Result<ForeignRowModify, FrontError> {
    let RelKind::Foreign { server, remote_schema, remote_table, .. } = &req.rel.kind else {
        return Err(FrontError::at("internal error: a foreign modify of a table that is not foreign", at));
    };
    let names: Vec<String> = req.rel.columns.iter().map(|c| c.name.clone()).collect();
    // The SET columns in the table's order: parameters $2, … (ctid is $1).
    let mut sets: Vec<&(usize, Expr)> = req.sets.iter().collect();
    sets.sort_by_key(|(c, _)| *c);
    let remote = format!("{}.{}", quote_identifier(remote_schema), quote_identifier(remote_table));
    let returning = match (req.returned.is_empty(), req.operation) {
        (true, _) => String::new(),
        (false, _) => format!(
            " RETURNING {}",
            req.returned.iter().map(|&c| quote_identifier(&names[c])).collect::<Vec<_>>().join(", ")
        ),
    };
    let sql = match req.operation {
        CmdType::Update => {
            let assigned: Vec<String> = sets
                .iter()
                .enumerate()
                .map(|(i, (c, _))| format!("{} = ${}", quote_identifier(&names[*c]), i + 2))
                .collect();
            format!("UPDATE {remote} SET {} WHERE ctid = $1{returning}", assigned.join(", "))
        }
        _ => format!("DELETE FROM {remote} WHERE ctid = $1{returning}"),
    };
    let target = ForeignRowModify {
        relation: req.rel.name.clone(),
        server: server.clone(),
        sql,
        ctid_col,
        sets: sets.iter().map(|(c, e)| (e.clone(), req.rel.columns[*c].ty)).collect(),
        returned: req.returned.iter().map(|&c| req.rel.columns()[c].clone()).collect(),
    };
    Ok(target)
}

/// The scan's Output as PostgreSQL's EXPLAIN prints the foreign modify's subplan: an
/// UPDATE's new values (in the columns' order), `ctid`, the whole row `ft.*`; a
/// DELETE's `ctid` alone (the columns its Filter reads are not shown).
fn shown_output(req: &ModifyRequest, names: &[String], alias: Option<&crate::plan::ScanName>) -> Vec<String> {
    let rel = alias.map_or(req.rel.name.as_str(), |a| a.alias.as_str());
    if req.operation != CmdType::Update {
        return vec!["ctid".to_string()];
    }
    // The new values in the table's column order (the targetlist's order, not the
    // SET list's), then the ctid and the whole row.
    let mut sets: Vec<&(usize, Expr)> = req.sets.iter().collect();
    sets.sort_by_key(|(c, _)| *c);
    let mut out: Vec<String> = sets.iter().map(|(_, e)| e.to_sql(names)).collect();
    out.push("ctid".to_string());
    out.push(format!("{}.*", quote_identifier(rel)));
    out
}

/// The refusal of a foreign modify over a scan it cannot use.
fn refused(req: &ModifyRequest, at: Location) -> FrontError {
    FrontError::unsupported(
        format!(
            "{} of \"{}\" over this scan (a join, an aggregate, a sort or a limit under it): postgres_fdw's \
             foreign modify reads the rows to change with a plain scan",
            req.operation.word().to_uppercase(),
            req.rel.name
        ),
        at,
    )
}

#[cfg(test)]
mod tests {
    use crate::clock::Clock;
    use crate::coordinator_sql::SqlScenario;
    use crate::instrument::ExplainOptions;
    use crate::knobs::{Knobs, Source};

    const SETUP: &str = "-- @shard s1\ncreate table t1 (a int, b int, c text);\n\
        insert into t1 select i % 10, i, 'x' from generate_series(0, 29) i;\n\
        -- @coordinator\ncreate extension postgres_fdw;\n\
        create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres');\n\
        create foreign table ft (a int, b int, c text) server s1 options (table_name 't1');\n";

    /// Runs `query`: its EXPLAIN (ANALYZE, VERBOSE, COSTS OFF), RETURNING's rows, s1's
    /// statements and t1's rows afterwards (sorted).
    fn run(query: &str) -> (String, Vec<String>, Vec<String>, Vec<String>) {
        let s = SqlScenario::load(SETUP).unwrap().with_query(query).unwrap();
        let sc = s.scenario(&Knobs::default(), Source::Json).unwrap();
        let mut r = sc.start(false, Clock::virtual_clock(), false).unwrap();
        r.keep_rows = true;
        r.run_to_end().unwrap();
        let explain = r.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE);
        let rows = r.rows.iter().map(|x| x.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("|")).collect();
        let s1 = &r.host.servers[0];
        let log = s1.statement_log().into_iter().map(|(_, l)| l).collect();
        let t1 = s1.catalog.get("t1").unwrap();
        let mut after: Vec<String> =
            (0..t1.nrows()).map(|i| t1.row(i).iter().map(|d| d.to_string()).collect::<Vec<_>>().join("|")).collect();
        after.sort();
        (explain, rows, log, after)
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn update_with_a_local_filter_is_a_foreign_modify() {
        let (explain, rows, log, after) =
            run("update ft set c = 'q' where a = 5 and c || b <> 'zz' returning a, b + 1;");
        eprintln!("{explain}\n{rows:?}\n{log:#?}\n{after:?}");
        assert!(
            explain.contains("Remote SQL: UPDATE public.t1 SET c = $2 WHERE ctid = $1 RETURNING a, b"),
            "{explain}"
        );
        assert!(
            explain.contains("Remote SQL: SELECT a, b, c, ctid FROM public.t1 WHERE ((a = 5)) FOR UPDATE"),
            "{explain}"
        );
        assert_eq!(rows, ["5|6", "5|16", "5|26"]);
        assert_eq!(after.iter().filter(|r| r.ends_with("|q")).count(), 3, "{after:?}");
        assert_eq!(after.len(), 30);
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn delete_with_a_local_filter_is_a_foreign_modify() {
        let (explain, rows, log, after) = run("delete from ft where a = 6 and c || b <> 'zz';");
        eprintln!("{explain}\n{rows:?}\n{log:#?}\n{after:?}");
        assert!(explain.contains("Remote SQL: DELETE FROM public.t1 WHERE ctid = $1"), "{explain}");
        assert!(
            explain.contains("Remote SQL: SELECT b, c, ctid FROM public.t1 WHERE ((a = 6)) FOR UPDATE"),
            "{explain}"
        );
        assert_eq!(after.len(), 27);
        assert!(!after.iter().any(|r| r.starts_with("6|")), "{after:?}");
        // RETURNING * comes back from the remote DELETE, though the scan reads two
        // columns only.
        let (explain, mut rows, _, _) = run("delete from ft where a = 7 and c || b <> 'zz' returning *;");
        assert!(explain.contains("DELETE FROM public.t1 WHERE ctid = $1 RETURNING a, b, c"), "{explain}");
        rows.sort();
        assert_eq!(rows, ["7|17|x", "7|27|x", "7|7|x"]);
    }
}
