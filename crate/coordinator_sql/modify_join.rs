//! `UPDATE t SET … FROM other … WHERE …` and `DELETE FROM t USING other … WHERE …`:
//! the target joined to other relations, the join planned under ModifyTable as any
//! SELECT (PostgreSQL's planner plans the join of the target with the FROM / USING
//! list as a query's; `grouping_planner` puts ModifyTable on top).
//!
//! The plan of a plain local target: the query `SELECT t.col1, …, t.colN, set_expr1,
//! … FROM t [alias], other … WHERE …` planned by `planner::plan_query`; ModifyTable
//! reads each of its rows as the target's old row (its first N columns) and the SET
//! values after them (`ResultRel::LocalModify` with `joined`). Of a foreign target:
//! `SELECT t.ctid, set_expr1, … FROM …`, the planner seeing `ctid` as the target's last
//! column; the target's Foreign Scan locks its rows (`… ctid FROM … FOR UPDATE`, an
//! UPDATE's whole row) and ModifyTable is postgres_fdw's foreign modify
//! (`ResultRel::ForeignRow`: `UPDATE … WHERE ctid = $1` a row, `fdw_modify`).
//!
//! The rules (PostgreSQL 15's, run against it):
//! - a local target row that joins to several rows is changed once, by the first
//!   joined row (ExecUpdate / ExecDelete find it changed by this command already,
//!   `TM_SelfModified`, and skip it: no second change, no RETURNING row);
//! - the SET expressions and the WHERE may name the other relations' columns; each
//!   SET column once ("multiple assignments to same column");
//! - RETURNING over the target's new row (the deleted row for DELETE); of a foreign
//!   target, from the remote statement;
//! - every other relation of the join tree has a row mark (preprocess_rowmarks): a
//!   foreign table's scan reads its whole row, a partition of a partitioned one its
//!   whole row and `ctid` (`mark_other_relations`).
//!
//! Where it departs from PostgreSQL:
//! - a partitioned target with FROM / USING (a result relation per partition under
//!   the join) and a join of the other relations pushed down to their server (its
//!   whole-row references, the EvalPlanQual recheck plan) are refused by name;
//! - RETURNING may not name the other relations' columns (nor `*`, which returns
//!   theirs too): refused by name;
//! - the join's rows carry the target's columns (a foreign target's `ctid`) rather
//!   than PostgreSQL's junk columns (`loc.ctid`, `pt.*`, `pt.tableoid`): EXPLAIN's
//!   `Output:` lines differ from PostgreSQL's, the nodes and the Remote SQL do not;
//!   a local target's rows are named by value, so of its equal rows (all changed
//!   alike) the first joined values may go to another copy than PostgreSQL's; a
//!   foreign target row joined twice is sent twice (PostgreSQL's second UPDATE finds
//!   the row moved to another ctid and changes nothing; the sandbox's shard keeps
//!   the ctid).

use sqlparser::ast;
use sqlparser::tokenizer::Location;

use super::catalog::{ident, Node, RelKind, Relation};
use super::modifytable::{set_target_alias, ModifySource, ModifyTarget};
use super::planner::{plan_query, Planned};
use super::FrontError;
use crate::plan::modifytable::{CmdType, ModifyTablePlan, ResultRel};
use crate::plan::{Expr, Plan};

/// The plan of an UPDATE … FROM or DELETE … USING of `rel`.
pub(super) fn plan_joined_modify(
    coord: &Node,
    target: &ModifyTarget,
    rel: &Relation,
    source: &ModifySource,
    at: Location,
) -> Result<Planned, FrontError> {
    let ModifySource { sets, selection, returning, text } = *source;
    let operation = if sets.is_some() { CmdType::Update } else { CmdType::Delete };
    let clause = if sets.is_some() { "UPDATE … FROM" } else { "DELETE … USING" };
    let name = rel.name.clone();
    if matches!(rel.kind, RelKind::Partitioned { .. }) {
        return Err(FrontError::unsupported(
            format!(
                "{clause} of a partitioned table (\"{name}\"): a result relation per partition under a join \
                 (their ctid, tableoid and whole rows carried through it); the sandbox joins to a plain local or \
                 foreign target only"
            ),
            at,
        ));
    }
    let sets = set_columns(rel, sets.map_or(&[][..], |s| s.as_slice()))?;
    let qualifier =
        target.alias.cloned().or_else(|| target.table.0.last().cloned()).unwrap_or_else(|| ast::Ident::new(&name));
    if matches!(rel.kind, RelKind::Foreign { .. }) {
        let req = JoinRequest { coord, target, rel, sets: &sets, qualifier: &qualifier, source };
        return plan_foreign_joined(&req, operation, at);
    }
    let query = join_query(target, rel, &qualifier, &sets, selection, at)?;
    let mut planned = plan_query(coord, &query, text)?;
    let ncols = rel.columns.len();
    if planned.columns.len() != ncols + sets.len() {
        return Err(FrontError::at(format!("internal error: the join of {clause} returns other columns"), at));
    }
    // transformAssignedExpr: each value assignable to its column (an untyped
    // literal takes the column's type).
    for (i, (c, e)) in sets.iter().enumerate() {
        let from = match e {
            ast::Expr::Value(_) => None,
            _ => super::modifytable::source_type(&planned.columns[ncols + i]),
        };
        let col = &rel.columns[*c];
        super::parse_coerce::check_assignment(&col.name, col.ty, from, ast::Spanned::span(*e).start)?;
    }
    mark_other_relations(&mut planned.plan, at)?;
    let set_exprs: Vec<(usize, Expr)> = sets.iter().enumerate().map(|(i, (c, _))| (*c, Expr::Col(ncols + i))).collect();
    let (ret, shown) = returning_items(coord, rel, target, returning, clause, at)?;
    let input = rel.columns();
    planned.columns = ret.iter().map(|(e, n)| crate::types::Column::new(n, e.col_type(&input))).collect();
    let child =
        std::mem::replace(&mut planned.plan, Plan::EmptyResult { columns: vec![], rels: vec![], joined: false });
    planned.plan = Plan::ModifyTable(Box::new(ModifyTablePlan {
        operation,
        relation: name.clone(),
        alias: target.alias.map(ident),
        target: ResultRel::LocalModify { table: name, sets: set_exprs, joined: true },
        columns: rel.columns.iter().map(|c| (c.name.clone(), c.ty)).collect(),
        source: vec![],
        child,
        returning: ret,
        returning_sql: shown,
        on_conflict: None,
        unique: rel.unique.clone(),
    }));
    planned.order_key = None;
    planned.order_keys = vec![];
    Ok(planned)
}

/// What `plan_joined_modify` read of the statement.
struct JoinRequest<'a> {
    coord: &'a Node,
    target: &'a ModifyTarget<'a>,
    rel: &'a Relation,
    sets: &'a [(usize, &'a ast::Expr)],
    qualifier: &'a ast::Ident,
    source: &'a ModifySource<'a>,
}

/// A foreign target joined to other relations: postgres_fdw's foreign modify
/// (postgresAddForeignUpdateTargets' `ctid`, postgresPlanForeignModify's `UPDATE …
/// WHERE ctid = $1`), its scan in the join locking its rows (`… FOR UPDATE`) and
/// reading, for an UPDATE, its whole row. The join's row: the target's `ctid`, then
/// the SET values; the rows are changed one at a time as the join returns them.
fn plan_foreign_joined(req: &JoinRequest, operation: CmdType, at: Location) -> Result<Planned, FrontError> {
    let rel = req.rel;
    let name = rel.name.clone();
    // The planner sees `ctid` as the target's last column (a system column to
    // PostgreSQL, which postgres_fdw fetches when the scan needs it).
    let mut node = req.coord.clone();
    let ncols = rel.columns.len();
    if let Some(r) = node.relations.iter_mut().find(|r| r.name == name) {
        r.columns.push(super::catalog::ColumnInfo { name: "ctid".into(), ty: crate::plan::SqlType::Text });
        if let Some(st) = &mut r.stats {
            st.columns.push(None);
        }
    }
    let mut query = join_query(req.target, rel, req.qualifier, req.sets, req.source.selection, at)?;
    if let ast::SetExpr::Select(s) = query.body.as_mut() {
        // `ctid` and the SET values, not the target's columns.
        s.projection.drain(..ncols);
        let mut col = ast::Ident::new("ctid");
        col.quote_style = Some('"');
        let ctid = ast::Expr::CompoundIdentifier(vec![req.qualifier.clone(), col]);
        s.projection.insert(0, ast::SelectItem::UnnamedExpr(ctid));
    }
    let mut planned = plan_query(&node, &query, req.source.text)?;
    if planned.columns.len() != 1 + req.sets.len() {
        return Err(FrontError::at("internal error: the join of a foreign modify returns other columns", at));
    }
    for (i, (c, e)) in req.sets.iter().enumerate() {
        let from = match e {
            ast::Expr::Value(_) => None,
            _ => super::modifytable::source_type(&planned.columns[1 + i]),
        };
        let col = &rel.columns[*c];
        super::parse_coerce::check_assignment(&col.name, col.ty, from, ast::Spanned::span(*e).start)?;
    }
    let refname = ident(req.qualifier);
    if !mark_target(&mut planned.plan, &name, &refname, operation == CmdType::Update) {
        return Err(FrontError::unsupported(
            format!("a foreign modify of \"{name}\" whose scan is not a plain Foreign Scan in the join"),
            at,
        ));
    }
    mark_other_relations(&mut planned.plan, at)?;
    // RETURNING comes back from the remote statement: the columns it uses.
    let (ret, _) = returning_items(req.coord, rel, req.target, req.source.returning, "the join", at)?;
    let mut used: Vec<usize> = Vec::new();
    for (e, _) in &ret {
        e.for_each_col(&mut |c| used.push(c));
    }
    used.sort_unstable();
    used.dedup();
    let sets: Vec<(usize, Expr)> = req.sets.iter().enumerate().map(|(i, (c, _))| (*c, Expr::Col(1 + i))).collect();
    let modify_req = super::fdw_modify::ModifyRequest { operation, rel, sets: &sets, returned: &used };
    let modify = super::fdw_modify::foreign_row_modify(&modify_req, 0, at)?;
    let returned: Vec<crate::types::Column> = used.iter().map(|&c| rel.columns()[c].clone()).collect();
    let ret: Vec<(Expr, String)> =
        ret.into_iter().map(|(e, n)| (e.map_cols(&|c| used.iter().position(|&u| u == c).unwrap_or(c)), n)).collect();
    let q = crate::sql_text::quote_identifier(&refname);
    let shown_names: Vec<String> =
        used.iter().map(|&c| format!("{q}.{}", crate::sql_text::quote_identifier(&rel.columns[c].name))).collect();
    let returning_sql = ret.iter().map(|(e, _)| e.to_sql(&shown_names)).collect();
    planned.columns = ret.iter().map(|(e, n)| crate::types::Column::new(n, e.col_type(&returned))).collect();
    let child =
        std::mem::replace(&mut planned.plan, Plan::EmptyResult { columns: vec![], rels: vec![], joined: false });
    planned.plan = Plan::ModifyTable(Box::new(ModifyTablePlan {
        operation,
        relation: name,
        alias: req.target.alias.map(ident),
        target: ResultRel::ForeignRow(modify),
        columns: rel.columns.iter().map(|c| (c.name.clone(), c.ty)).collect(),
        source: vec![],
        child,
        returning: ret,
        returning_sql,
        on_conflict: None,
        unique: vec![],
    }));
    planned.order_key = None;
    planned.order_keys = vec![];
    Ok(planned)
}

/// The target's Foreign Scan in the join (named `refname`): its rows locked, an
/// UPDATE's read whole. False when it is not a plain scan of its own.
fn mark_target(plan: &mut Plan, relation: &str, refname: &str, whole: bool) -> bool {
    match plan {
        Plan::ForeignScan(f) if f.relation == relation => {
            let named = f.alias.as_ref().map_or(relation, |a| a.alias.as_str());
            if named != refname || f.remote.join.is_some() || f.remote.aggregated() {
                return false;
            }
            f.remote.whole_row = Some(crate::plan::WholeRowMark { whole, ctid: false, for_update: true });
            true
        }
        Plan::SubqueryScan { .. } | Plan::CteScan { .. } => false,
        other => other.children_mut().into_iter().any(|c| mark_target(c, relation, refname, whole)),
    }
}

/// preprocess_rowmarks for an UPDATE or DELETE: every relation of the join tree but
/// the target gets a row mark, a foreign table `ROW_MARK_COPY` (its whole row: all
/// its columns fetched), a partitioned table `ROW_MARK_REFERENCE` over its partitions'
/// (`ctid` and the whole row: a foreign partition's remote select list ends with
/// `ctid`). Over the scans of `plan` but those of a subquery (a query level of its
/// own, marked as a whole). A join of them pushed down to their server is refused by
/// name: PostgreSQL's has the whole-row references in its remote query and the local
/// join it rechecks rows with (EvalPlanQual's `fdw_outerplan`) under it.
pub(super) fn mark_other_relations(plan: &mut Plan, at: Location) -> Result<(), FrontError> {
    match plan {
        Plan::ForeignScan(f) if f.remote.join.is_some() => {
            return Err(FrontError::unsupported(
                "UPDATE or DELETE with a join of other relations pushed down to their server (postgres_fdw's \
                 whole-row references and the EvalPlanQual recheck plan under it)",
                at,
            ))
        }
        Plan::ForeignScan(f) => {
            // (The target's own scan is marked already.)
            let plain = f.remote.join.is_none()
                && f.remote.row_mark.is_none()
                && f.remote.whole_row.is_none()
                && !f.remote.aggregated()
                && f.remote.targets.iter().all(|t| matches!(t, crate::plan::RemoteTarget::Col(_)));
            if plain {
                let partition = f.alias.as_ref().is_some_and(|a| a.member && !a.direct);
                f.remote.whole_row =
                    Some(crate::plan::WholeRowMark { whole: true, ctid: partition, for_update: false });
            }
        }
        Plan::SubqueryScan { .. } | Plan::CteScan { .. } => {}
        Plan::WithInitPlans { child, .. } | Plan::WithCtes { child, .. } => mark_other_relations(child, at)?,
        other => {
            for c in other.children_mut() {
                mark_other_relations(c, at)?;
            }
        }
    }
    Ok(())
}

/// The SET list as (column, expression), each column the target's and named once
/// (transformUpdateTargetList).
fn set_columns<'a>(
    rel: &Relation,
    sets: &'a [(ast::Ident, ast::Expr)],
) -> Result<Vec<(usize, &'a ast::Expr)>, FrontError> {
    let mut out: Vec<(usize, &ast::Expr)> = Vec::with_capacity(sets.len());
    for (col, e) in sets {
        let c = ident(col);
        let Some(index) = rel.column_index(&c) else {
            return Err(FrontError::at(
                format!("column \"{c}\" of relation \"{}\" does not exist", rel.name),
                col.span.start,
            ));
        };
        if out.iter().any(|(i, _)| *i == index) {
            return Err(FrontError::at(format!("multiple assignments to same column \"{c}\""), col.span.start));
        }
        out.push((index, e));
    }
    Ok(out)
}

/// `SELECT q.col1, …, q.colN, set values… FROM target [alias], from… WHERE …`, `q`
/// the target's alias or name.
fn join_query(
    target: &ModifyTarget,
    rel: &Relation,
    qualifier: &ast::Ident,
    sets: &[(usize, &ast::Expr)],
    selection: &Option<ast::Expr>,
    at: Location,
) -> Result<ast::Query, FrontError> {
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let mut query = sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(&format!("SELECT * FROM {}", target.table))
        .and_then(|mut p| p.parse_query())
        .map_err(|e| FrontError::at(format!("syntax error: {e}"), at))?;
    let ast::SetExpr::Select(s) = query.body.as_mut() else {
        return Err(FrontError::at("internal error: the join of UPDATE … FROM", at));
    };
    let mut projection: Vec<ast::SelectItem> = rel
        .columns
        .iter()
        .map(|c| {
            let mut col = ast::Ident::new(&c.name);
            col.quote_style = Some('"');
            ast::SelectItem::UnnamedExpr(ast::Expr::CompoundIdentifier(vec![qualifier.clone(), col]))
        })
        .collect();
    projection.extend(sets.iter().map(|(_, e)| ast::SelectItem::UnnamedExpr((*e).clone())));
    s.projection = projection;
    set_target_alias(s, target.alias);
    s.from.extend(target.from.iter().cloned());
    s.selection = selection.clone();
    Ok(*query)
}

/// RETURNING over the target's row (its new values; the deleted row), and how
/// EXPLAIN writes each item. The other relations' columns are refused by name.
fn returning_items(
    coord: &Node,
    rel: &Relation,
    target: &ModifyTarget,
    returning: &[ast::SelectItem],
    clause: &str,
    at: Location,
) -> Result<(Vec<(Expr, String)>, Vec<String>), FrontError> {
    let others = other_names(target.from);
    let names: Vec<String> = rel.columns.iter().map(|c| c.name.clone()).collect();
    // The other relations' columns (those the coordinator knows): an unqualified
    // name among them and the target's is ambiguous (scanRTEForColumn's error).
    let other_columns: Vec<String> = other_tables(target.from)
        .iter()
        .filter_map(|t| coord.relation(t))
        .flat_map(|r| r.columns.iter().map(|c| c.name.clone()))
        .collect();
    for item in returning {
        let refused = match item {
            ast::SelectItem::Wildcard(_) => true,
            ast::SelectItem::QualifiedWildcard(q, _) => {
                q.0.last().is_some_and(|n| others.contains(&ident(n).to_lowercase()))
            }
            other => {
                let t = other.to_string().to_lowercase();
                others.iter().any(|n| names_relation(&t, n))
            }
        };
        if refused {
            return Err(FrontError::unsupported(
                format!("RETURNING the other relations' columns of {clause} ({item})"),
                at,
            ));
        }
        if let ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } = item {
            let mut bare = Vec::new();
            unqualified_names(e, &mut bare);
            if let Some(n) = bare.iter().find(|n| names.contains(n) && other_columns.contains(n)) {
                return Err(FrontError::at(format!("column reference \"{n}\" is ambiguous"), at));
            }
        }
    }
    let types: Vec<crate::plan::SqlType> = rel.columns.iter().map(|c| c.ty).collect();
    let env = super::eval::Env { names: &names, types: &types };
    let q = target.alias.map(ident).unwrap_or_else(|| rel.name.clone());
    let ret = super::modifytable::returning_items(returning, &env, &q, at)?;
    // EXPLAIN qualifies the target's columns: the statement has several relations.
    let qualified: Vec<String> = names
        .iter()
        .map(|n| format!("{}.{}", crate::sql_text::quote_identifier(&q), crate::sql_text::quote_identifier(n)))
        .collect();
    let shown = ret.iter().map(|(e, _)| e.to_sql(&qualified)).collect();
    Ok((ret, shown))
}

/// The names the FROM / USING list gives its relations (an alias, else the table's
/// name), lower case.
fn other_names(from: &[ast::TableWithJoins]) -> Vec<String> {
    let mut out = Vec::new();
    let mut add = |f: &ast::TableFactor| match f {
        ast::TableFactor::Table { alias: Some(a), .. } | ast::TableFactor::Derived { alias: Some(a), .. } => {
            out.push(ident(&a.name).to_lowercase())
        }
        ast::TableFactor::Table { name, alias: None, .. } => {
            if let Some(last) = name.0.last() {
                out.push(ident(last).to_lowercase())
            }
        }
        _ => {}
    };
    for t in from {
        add(&t.relation);
        for j in &t.joins {
            add(&j.relation);
        }
    }
    out
}

/// The tables the FROM / USING list names (their names, for their columns).
fn other_tables(from: &[ast::TableWithJoins]) -> Vec<String> {
    let mut out = Vec::new();
    for t in from {
        for f in std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)) {
            if let ast::TableFactor::Table { name, .. } = f {
                if let Ok(n) = super::catalog::relation_name(name) {
                    out.push(n);
                }
            }
        }
    }
    out
}

/// The unqualified column names an expression reads (its common forms; a name
/// inside another form is not looked for).
fn unqualified_names(e: &ast::Expr, out: &mut Vec<String>) {
    match e {
        ast::Expr::Identifier(i) => out.push(ident(i)),
        ast::Expr::BinaryOp { left, right, .. } => {
            unqualified_names(left, out);
            unqualified_names(right, out);
        }
        ast::Expr::UnaryOp { expr, .. }
        | ast::Expr::Nested(expr)
        | ast::Expr::Cast { expr, .. }
        | ast::Expr::IsNull(expr)
        | ast::Expr::IsNotNull(expr) => unqualified_names(expr, out),
        ast::Expr::Function(f) => {
            if let ast::FunctionArguments::List(l) = &f.args {
                for a in &l.args {
                    if let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) = a {
                        unqualified_names(x, out);
                    }
                }
            }
        }
        _ => {}
    }
}

/// Does the expression's text name `rel.` (a column of that relation)?
fn names_relation(text: &str, rel: &str) -> bool {
    let pattern = format!("{rel}.");
    text.match_indices(&pattern).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
    })
}

#[cfg(test)]
mod tests {
    use crate::clock::Clock;
    use crate::coordinator_sql::SqlScenario;
    use crate::instrument::ExplainOptions;
    use crate::knobs::{Knobs, Source};

    const SETUP: &str = "-- @shard s1\ncreate table t1 (a int, b int, c text);\n\
        insert into t1 select i % 10, i, 'x' || i from generate_series(0, 99) i;\n\
        -- @coordinator\ncreate extension postgres_fdw;\n\
        create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');\n\
        create table pt (a int, b int, c text) partition by range (b);\n\
        create foreign table pt1 partition of pt for values from (0) to (100) server s1 options (table_name 't1');\n\
        create foreign table ft (a int, b int, c text) server s1 options (table_name 't1');\n\
        create table loc (a int, b int, c text);\n\
        insert into loc select i, i * 10, 'l' || i from generate_series(0, 4) i;\n";

    /// The query's rows (as text), its EXPLAIN (ANALYZE, VERBOSE, COSTS OFF), the
    /// shard's statements and the coordinator's changed rows (old, new) afterwards.
    fn run(query: &str) -> Result<(Vec<String>, String, Vec<String>, usize), String> {
        let base = SqlScenario::load(SETUP).map_err(|e| e.to_string())?;
        let s = base.with_query(query).map_err(|e| e.to_string())?;
        let sc = s.scenario(&Knobs::default(), Source::Json).map_err(|e| e.to_string())?;
        let mut r = sc.start(true, Clock::virtual_clock(), false).map_err(|e| e.to_string())?;
        r.keep_rows = true;
        r.run_to_end().map_err(|e| e.to_string())?;
        let rows = r.rows.iter().map(|x| x.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("|")).collect();
        let explain = r.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE);
        let log = r.host.servers.iter().flat_map(|s| s.statement_log().into_iter().map(|(_, l)| l)).collect();
        Ok((rows, explain, log, r.es.local_changes.modified.len()))
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_target_row_joined_to_many_is_changed_once() {
        // Each loc row (a = 0..4) joins to the ten rows of t1 with that a.
        let (rows, explain, log, changed) =
            run("update loc set b = pt.a + 100 from pt where pt.a = loc.a returning loc.a, loc.b;").unwrap();
        let mut rows = rows;
        rows.sort();
        assert_eq!(rows, ["0|100", "1|101", "2|102", "3|103", "4|104"], "{explain}");
        assert_eq!(changed, 5);
        assert!(explain.starts_with("Update on public.loc"), "{explain}");
        assert!(explain.contains("Join"), "{explain}");
        // The partition's row mark: its whole row and ctid, no lock.
        assert!(
            log.iter().any(|l| l.contains("SELECT a, b, c, ctid FROM public.t1") && !l.contains("FOR UPDATE")),
            "{log:#?}"
        );
        // DELETE … USING, the plain foreign table's whole row (no ctid).
        let (_, explain, log, changed) = run("delete from loc using ft where ft.b = loc.b;").unwrap();
        assert_eq!(changed, 5, "{explain}");
        assert!(log.iter().any(|l| l.contains("SELECT a, b, c FROM public.t1")), "{log:#?}");
        // FROM a, b and the target's alias.
        let (rows, explain, _, _) = run(
            "update loc x set c = ft.c from ft, pt where ft.b = x.b and pt.b = ft.b and x.a < 2 returning x.a, x.c;",
        )
        .unwrap();
        assert_eq!(rows.len(), 2, "{explain}");
        assert!(explain.starts_with("Update on public.loc x"), "{explain}");
        assert!(rows.contains(&"1|x10".to_string()), "{rows:?}");
    }

    /// A foreign target: its scan in the join locks its rows and reads their ctid
    /// (an UPDATE's whole row), each joined row then changes one remote row.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_foreign_target_joined_is_a_foreign_modify() {
        let (rows, explain, log, _) =
            run("update ft set c = loc.c from loc where loc.b = ft.b returning ft.b, ft.c;").unwrap();
        let mut rows = rows;
        rows.sort();
        assert_eq!(rows, ["0|l0", "10|l1", "20|l2", "30|l3", "40|l4"], "{explain}");
        assert!(
            explain.contains("Remote SQL: UPDATE public.t1 SET c = $2 WHERE ctid = $1 RETURNING b, c"),
            "{explain}"
        );
        assert!(log.iter().any(|l| l.contains("SELECT a, b, c, ctid FROM public.t1 FOR UPDATE")), "{log:#?}");
        let updates = log.iter().filter(|l| l.contains("UPDATE public.t1 SET c = $2 WHERE ctid = $1")).count();
        assert_eq!(updates, 5, "{log:#?}");
        // DELETE: only the columns the join reads, and ctid.
        let (_, explain, log, _) = run("delete from ft using loc where loc.b = ft.b and loc.a > 2;").unwrap();
        assert!(explain.contains("Remote SQL: DELETE FROM public.t1 WHERE ctid = $1"), "{explain}");
        assert!(log.iter().any(|l| l.contains("SELECT b, ctid FROM public.t1 FOR UPDATE")), "{log:#?}");
        assert_eq!(log.iter().filter(|l| l.contains("DELETE FROM public.t1 WHERE ctid = $1")).count(), 2, "{log:#?}");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn what_the_join_form_refuses() {
        let err = run("delete from pt using loc where loc.a = pt.a;").unwrap_err();
        assert!(err.contains("DELETE … USING of a partitioned table"), "{err}");
        // PostgreSQL's error for a name both relations have.
        let err = run("update loc set b = 1 from ft where ft.a = loc.a returning a;").unwrap_err();
        assert!(err.contains("column reference \"a\" is ambiguous"), "{err}");
        let err = run("update loc set b = 1 from ft where ft.a = loc.a returning ft.c;").unwrap_err();
        assert!(err.contains("RETURNING the other relations' columns"), "{err}");
        let err = run("update loc set b = 1, b = 2 from ft where ft.a = loc.a;").unwrap_err();
        assert!(err.contains("multiple assignments to same column \"b\""), "{err}");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_row_assignment_and_an_alias() {
        let (rows, explain, _, changed) =
            run("update loc as x set (b, c) = (x.b + 1, 'y') where x.a < 2 returning x.*;").unwrap();
        let mut rows = rows;
        rows.sort();
        assert_eq!(rows, ["0|1|y", "1|11|y"], "{explain}");
        assert_eq!(changed, 2);
        assert!(explain.contains("Seq Scan on public.loc x"), "{explain}");
        let (_, explain, log, _) = run("update ft t set (b, c) = (t.b * 2, 'z') where t.a = 3;").unwrap();
        assert!(explain.contains("Foreign Update on public.ft t"), "{explain}");
        assert!(
            log.iter().any(|l| l.contains("UPDATE public.t1 SET b = (b * 2), c = 'z'::text WHERE ((a = 3))")),
            "{log:#?}"
        );
        let err = run("update loc set (b, c) = (1, 2, 3) where a = 1;").unwrap_err();
        assert!(err.contains("number of columns does not match number of values"), "{err}");
        let err = run("update loc set (b, c) = (1) where a = 1;").unwrap_err();
        assert!(err.contains("must be a sub-SELECT or ROW() expression"), "{err}");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_relation_named_in_returning() {
        assert!(super::names_relation("pt.v + 1", "pt"));
        assert!(super::names_relation("(1 + pt.v)", "pt"));
        assert!(!super::names_relation("xpt.v", "pt"));
        assert!(!super::names_relation("loc.v", "pt"));
    }
}
