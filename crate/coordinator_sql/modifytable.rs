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
//! - `VALUES` of one row is a Result without input (`Plan::ConstResult`), of more a
//!   Values Scan on `"*VALUES*"`, as in PostgreSQL;
//! - a partitioned target routes each row at run time (`executor::node_modifytable`);
//!   its partitions must have its columns in its order.
//!
//! - a source that is not pulled up (aggregates, ORDER BY, LIMIT, …) whose row is not
//!   the table's row as it is (columns missing or in another order, other types)
//!   stays a subquery, `Subquery Scan on "*SELECT*"` (setrefs.c keeps a subquery scan
//!   that is not trivial).
//!
//! UPDATE and DELETE (`plan_direct_modify`): of a foreign table, postgres_fdw's direct
//! modify (or its foreign modify, `fdw_modify`); of a partitioned table, a result
//! relation per partition left after pruning (`partition_modify`); of a plain local
//! table, ModifyTable over the scan of its rows (`UPDATE … SET` values computed over
//! the old row); RETURNING projected by ModifyTable.
//!
//! Where it departs from PostgreSQL: integer types are one type to the sandbox's
//! rows, so a bigint (`count(*)`) into an integer column counts as the same type for
//! the Subquery Scan rule (PostgreSQL casts it, and keeps the Subquery Scan); no OVERRIDING, DEFAULT
//! VALUES or column defaults; the source's types are cast to the columns' at run time
//! rather than checked at parse analysis (a text column inserted into an integer
//! column is an error only for a value that does not read as one).

use sqlparser::ast;
use sqlparser::tokenizer::Location;

use super::catalog::{ident, relation_name, Node, RelKind, Relation};
use super::planner::{plan_query, Planned};
use super::statement::Stmt;
use super::FrontError;
use crate::plan::modifytable::{
    CmdType, DirectModifyPlan, ForeignModify, ModifyTablePlan, PartitionRouting, ResultRel,
};
use crate::plan::Plan;
use crate::sql_text::quote_identifier;

/// libpq's bound on a statement's parameters (`PQ_QUERY_PARAM_MAX_LIMIT`).
const PARAM_MAX: usize = 65_535;

/// The plan of the query section's INSERT.
pub fn plan_modify(coord: &Node, stmt: &Stmt, text: &str, at: Location) -> Result<Planned, FrontError> {
    let (table, columns, source, returning, on_conflict) = match stmt {
        Stmt::Insert { table, columns, source, returning, on_conflict } => {
            (table, columns, source, returning, on_conflict)
        }
        Stmt::Update { table, alias, sets, from, selection, returning } => {
            let target = ModifyTarget { table, alias: alias.as_ref(), from };
            let source = ModifySource { sets: Some(sets), selection, returning, text };
            return plan_direct_modify(coord, &target, &source, at);
        }
        Stmt::Delete { table, alias, using, selection, returning } => {
            let target = ModifyTarget { table, alias: alias.as_ref(), from: using };
            let source = ModifySource { sets: None, selection, returning, text };
            return plan_direct_modify(coord, &target, &source, at);
        }
        _ => return Err(FrontError::at("internal error: not an INSERT, UPDATE or DELETE", at)),
    };
    let name = relation_name(table).map_err(|m| FrontError::at(m, at))?;
    let rel = coord.relation(&name).ok_or_else(|| FrontError::at(format!("relation \"{name}\" does not exist"), at))?;
    let targets = insert_targets(rel, columns)?;
    let on_conflict = super::on_conflict::plan_on_conflict(rel, on_conflict.as_ref(), at)?;
    let do_nothing =
        on_conflict.as_ref().is_some_and(|o| o.action == crate::plan::on_conflict::ConflictAction::Nothing);
    let mut planned = match values_rows(source, at)? {
        Some(rows) => const_result(coord, rel, &targets, rows, at)?,
        None => plan_query(coord, &nulls_typed(source, rel, &targets), text)?,
    };
    let width = planned.columns.len();
    if width > targets.len() {
        return Err(FrontError::at("INSERT has more expressions than target columns", at));
    }
    if !columns.is_empty() && width < targets.len() {
        return Err(FrontError::at("INSERT has more target columns than expressions", at));
    }
    let untyped = untyped_outputs(source, width);
    for ((c, &t), untyped) in planned.columns.iter().zip(&targets).zip(untyped) {
        let from = if untyped { None } else { source_type(c) };
        super::parse_coerce::check_assignment(&rel.columns[t].name, rel.columns[t].ty, from, at)?;
    }
    let source: Vec<Option<usize>> =
        (0..rel.columns.len()).map(|c| targets.iter().take(width).position(|&t| t == c)).collect();
    if !pulled_up(source_query(stmt), &planned.plan) && !trivial_projection(rel, &source, &planned.columns) {
        planned.plan = select_subquery_scan(planned.plan);
    }
    let source = whole_row(rel, source, &mut planned.plan);
    // RETURNING over the inserted row (its columns, in the table's order); a foreign
    // table returns the columns it uses, one row a statement.
    let names: Vec<String> = rel.columns.iter().map(|c| c.name.clone()).collect();
    let types: Vec<crate::plan::SqlType> = rel.columns.iter().map(|c| c.ty).collect();
    let ret = returning_items(returning, &super::eval::Env { names: &names, types: &types }, &name, at)?;
    let mut used: Vec<usize> = Vec::new();
    for (e, _) in &ret {
        e.for_each_col(&mut |c| used.push(c));
    }
    used.sort_unstable();
    used.dedup();
    if !ret.is_empty() && used.is_empty() {
        return Err(FrontError::unsupported("RETURNING that names no column", at));
    }
    let target = result_rel(coord, rel, &mut planned.servers, &used, do_nothing, at)?;
    let qualified: Vec<String> =
        names.iter().map(|n| format!("{}.{}", quote_identifier(&name), quote_identifier(n))).collect();
    let returning_sql: Vec<String> = ret.iter().map(|(e, _)| e.to_sql(&qualified)).collect();
    let input = rel.columns();
    let returning_cols: Vec<crate::types::Column> =
        ret.iter().map(|(e, n)| crate::types::Column::new(n, e.col_type(&input))).collect();
    let plan = Plan::ModifyTable(Box::new(ModifyTablePlan {
        operation: CmdType::Insert,
        relation: name,
        alias: None,
        target,
        columns: rel.columns.iter().map(|c| (c.name.clone(), c.ty)).collect(),
        source,
        child: planned.plan,
        returning: ret,
        returning_sql,
        on_conflict,
        unique: rel.unique.clone(),
    }));
    Ok(Planned { plan, columns: returning_cols, servers: planned.servers, order_key: None, order_keys: vec![] })
}

/// RETURNING's items as expressions over the target's columns, with their names.
pub(super) fn returning_items(
    items: &[ast::SelectItem],
    env: &super::eval::Env,
    refname: &str,
    at: Location,
) -> Result<Vec<(crate::plan::Expr, String)>, FrontError> {
    let mut ret = Vec::new();
    for item in items {
        match item {
            ast::SelectItem::Wildcard(_) => {
                ret.extend(env.names.iter().enumerate().map(|(i, n)| (crate::plan::Expr::Col(i), n.clone())))
            }
            // `t.*`: the target's columns (its alias or name).
            ast::SelectItem::QualifiedWildcard(q, _) => {
                let named = q.0.last().map(ident).unwrap_or_default();
                if q.0.len() != 1 || named != refname {
                    return Err(FrontError::at(format!("missing FROM-clause entry for table \"{named}\""), at));
                }
                ret.extend(env.names.iter().enumerate().map(|(i, n)| (crate::plan::Expr::Col(i), n.clone())))
            }
            ast::SelectItem::UnnamedExpr(e) => {
                let a = super::eval::analyze(e, env)?;
                // FigureColname: a column's name, qualified or not.
                let name = match e {
                    ast::Expr::Identifier(i) => ident(i),
                    ast::Expr::CompoundIdentifier(parts) => parts.last().map(ident).unwrap_or_default(),
                    _ => "?column?".to_string(),
                };
                ret.push((a.expr, name));
            }
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                ret.push((super::eval::analyze(expr, env)?.expr, ident(alias)));
            }
        }
    }
    Ok(ret)
}

/// UPDATE (`sets`) or DELETE (None) of a plain local table (ModifyTable over the scan
/// of its rows, `ResultRel::LocalModify`), of a partitioned table (a result relation
/// per partition, `partition_modify`), or of a foreign table as postgres_fdw's direct
/// modify
/// (`postgresPlanDirectModify`): the scan of the target's rows that the WHERE leaves
/// (`SELECT * FROM target WHERE …`, planned as any query: partitions pruned, quals
/// shipped) must be Foreign Scans whose quals all go to the remote server, and every
/// SET expression must be shippable (`is_foreign_expr`); each scan becomes a `Foreign
/// Update` / `Foreign Delete` whose Remote SQL is `UPDATE remote SET col = expr, …
/// WHERE …` / `DELETE FROM remote WHERE …` (deparse.c's `deparseDirectUpdateSql`,
/// `deparseDirectDeleteSql`), else as its foreign modify (`SELECT … FOR UPDATE`, then
/// `… WHERE ctid = $1`, `fdw_modify`).
fn plan_direct_modify(
    coord: &Node,
    target: &ModifyTarget,
    source: &ModifySource,
    at: Location,
) -> Result<Planned, FrontError> {
    let ModifySource { sets, selection, returning, text } = *source;
    let table = target.table;
    let operation = if sets.is_some() { CmdType::Update } else { CmdType::Delete };
    let verb = operation.word().to_uppercase();
    let name = relation_name(table).map_err(|m| FrontError::at(m, at))?;
    let rel = coord.relation(&name).ok_or_else(|| FrontError::at(format!("relation \"{name}\" does not exist"), at))?;
    let alias = target.alias.map(ident);
    if !target.from.is_empty() {
        return super::modify_join::plan_joined_modify(coord, target, rel, source, at);
    }
    // The SET list, deparsed over the target's columns (a partition's are the same).
    let names: Vec<String> = rel.columns.iter().map(|c| c.name.clone()).collect();
    let types: Vec<crate::plan::SqlType> = rel.columns.iter().map(|c| c.ty).collect();
    let env = super::eval::Env { names: &names, types: &types };
    let mut set_sql: Vec<(usize, String)> = Vec::new();
    // A plain local table: ModifyTable changes its rows itself (`ResultRel::LocalModify`).
    let local = matches!(rel.kind, RelKind::Table(_));
    let mut set_exprs: Vec<(usize, crate::plan::Expr)> = Vec::new();
    // A SET expression that is not shippable leaves postgres_fdw's foreign modify.
    let mut sets_shippable = true;
    for (col, e) in sets.into_iter().flatten() {
        let c = ident(col);
        if rel.column_index(&c).is_none() {
            return Err(FrontError::at(
                format!("column \"{c}\" of relation \"{name}\" does not exist"),
                col.span.start,
            ));
        }
        let a = super::eval::analyze(e, &env)?;
        let index = rel.column_index(&c).unwrap_or(0);
        super::parse_coerce::check_assignment(&c, types[index], a.ty, sqlparser::ast::Spanned::span(e).start)?;
        let set_expr = match &a.expr {
            // A NULL assigned is a NULL of the column's type (`NULL::boolean`).
            crate::plan::Expr::Const(crate::types::Datum::Null) => {
                typed_null_or(crate::types::Datum::Null, types[rel.column_index(&c).unwrap_or(0)])
            }
            e => e.clone(),
        };
        set_exprs.push((rel.column_index(&c).unwrap_or(0), set_expr));
        if !local && !super::shippable::is_foreign_expr(&a.expr) {
            sets_shippable = false;
        }
        // A string constant with its type (`name = 'x'::text`), a NULL with the
        // column's (`grp = NULL::integer`): deparseConst's.
        let index = rel.column_index(&c).unwrap_or(0);
        let v = match &a.expr {
            crate::plan::Expr::Const(crate::types::Datum::Null) => format!("NULL::{}", types[index].name()),
            e => crate::sql_text::deparse::deparse_expr(e, &names),
        };
        set_sql.push((index, format!("{} = {v}", quote_identifier(&c))));
    }
    // deparseDirectUpdateSql: the SET list in the table's column order (the
    // planner's update target list is in attribute order), not as written.
    set_sql.sort_by_key(|(i, _)| *i);
    let set_sql: Vec<String> = set_sql.into_iter().map(|(_, s)| s).collect();
    // RETURNING: its expressions over the table's columns; the remote statement
    // returns the columns they use, in the table's order.
    let refname = alias.clone().unwrap_or_else(|| name.clone());
    let ret = returning_items(returning, &env, &refname, at)?;
    let mut used: Vec<usize> = Vec::new();
    for (e, _) in &ret {
        e.for_each_col(&mut |c| used.push(c));
    }
    used.sort_unstable();
    used.dedup();
    let returning_sql = if ret.is_empty() {
        String::new()
    } else if used.is_empty() {
        " RETURNING NULL".to_string()
    } else {
        format!(" RETURNING {}", used.iter().map(|&c| quote_identifier(&names[c])).collect::<Vec<_>>().join(", "))
    };
    let returned: Vec<crate::types::Column> = used.iter().map(|&c| rel.columns()[c].clone()).collect();
    // The projection reads the returned columns.
    let ret_full = ret.clone();
    let ret: Vec<(crate::plan::Expr, String)> =
        ret.into_iter().map(|(e, n)| (e.map_cols(&|c| used.iter().position(|&u| u == c).unwrap_or(c)), n)).collect();
    // The rows to modify: the target's scan.
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let mut query = sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(&format!("SELECT * FROM {table}"))
        .and_then(|mut p| p.parse_query())
        .map_err(|e| FrontError::at(format!("syntax error: {e}"), at))?;
    if let ast::SetExpr::Select(s) = query.body.as_mut() {
        s.selection = selection.clone();
        set_target_alias(s, target.alias);
    }
    let mut planned = plan_query(coord, &query, text)?;
    let not_direct = |what: &str| {
        FrontError::unsupported(
            format!(
                "{verb} of \"{name}\" {what}: postgres_fdw's direct modify does not apply, and the sandbox runs its \
                 foreign modify (SELECT … FOR UPDATE, then {verb} … WHERE ctid = $1) only for a plain foreign table"
            ),
            at,
        )
    };
    let direct = |f: &crate::plan::ForeignScanPlan| -> Plan {
        let select = crate::sql_text::deparse::deparse_remote_query(&f.remote);
        let where_sql = select.find(" WHERE ").map_or("", |i| &select[i..]);
        let remote = crate::sql_text::deparse::qualified_table(&f.remote.table);
        let sql = match operation {
            CmdType::Delete => format!("DELETE FROM {remote}{where_sql}{returning_sql}"),
            _ => format!("UPDATE {remote} SET {}{where_sql}{returning_sql}", set_sql.join(", ")),
        };
        Plan::DirectModify(Box::new(DirectModifyPlan { operation, scan: f.clone(), sql, returning: returned.clone() }))
    };
    if local {
        // A semi join's other relation (`WHERE id IN (SELECT …)` pulled up) is
        // row-marked as a FROM relation is.
        super::modify_join::mark_other_relations(&mut planned.plan, at)?;
        // ExecUpdate / ExecDelete of each row the scan returns (its full row).
        let returning_shown = ret_full.iter().map(|(e, _)| e.to_sql(&names)).collect();
        let input = rel.columns();
        let returning_cols: Vec<crate::types::Column> =
            ret_full.iter().map(|(e, n)| crate::types::Column::new(n, e.col_type(&input))).collect();
        let child =
            std::mem::replace(&mut planned.plan, Plan::EmptyResult { columns: vec![], rels: vec![], joined: false });
        planned.plan = Plan::ModifyTable(Box::new(ModifyTablePlan {
            operation,
            relation: name.clone(),
            alias: alias.clone(),
            target: ResultRel::LocalModify { table: name, sets: set_exprs, joined: false },
            columns: rel.columns.iter().map(|c| (c.name.clone(), c.ty)).collect(),
            source: vec![],
            child,
            returning: ret_full,
            returning_sql: returning_shown,
            on_conflict: None,
            unique: rel.unique.clone(),
        }));
        planned.columns = returning_cols;
        planned.order_key = None;
        planned.order_keys = vec![];
        return Ok(planned);
    }
    if matches!(rel.kind, RelKind::Partitioned { .. }) {
        // A result relation per partition (`partition_modify`).
        let req = super::partition_modify::PartitionedRequest {
            operation,
            rel,
            sets: &set_exprs,
            sets_shippable,
            returned: &used,
            refname: alias.as_deref().unwrap_or(&name),
        };
        let scan =
            std::mem::replace(&mut planned.plan, Plan::EmptyResult { columns: vec![], rels: vec![], joined: false });
        let (child, parts) = super::partition_modify::plan_partitioned_modify(coord, &req, scan, &direct, at)?;
        // RETURNING over the table's row, written over the first result relation's
        // alias (`pt_1.a`), as PostgreSQL writes it.
        let first = parts.first().map_or_else(|| name.clone(), |p| p.alias.clone());
        let shown: Vec<String> =
            names.iter().map(|n| format!("{}.{}", quote_identifier(&first), quote_identifier(n))).collect();
        let returning_shown = ret_full.iter().map(|(e, _)| e.to_sql(&shown)).collect();
        let input = rel.columns();
        planned.columns = ret_full.iter().map(|(e, n)| crate::types::Column::new(n, e.col_type(&input))).collect();
        planned.plan = Plan::ModifyTable(Box::new(ModifyTablePlan {
            operation,
            relation: name,
            alias: alias.clone(),
            target: ResultRel::Partitions(parts),
            columns: rel.columns.iter().map(|c| (c.name.clone(), c.ty)).collect(),
            source: vec![],
            child,
            returning: ret_full,
            returning_sql: returning_shown,
            on_conflict: None,
            unique: vec![],
        }));
        planned.order_key = None;
        planned.order_keys = vec![];
        return Ok(planned);
    }
    // A foreign table that cannot be a direct modify (a local Filter, a SET that is
    // not shippable): postgres_fdw's foreign modify, a row at a time by ctid.
    let direct_applies = sets_shippable && matches!(&planned.plan, Plan::ForeignScan(_));
    if matches!(rel.kind, RelKind::Foreign { .. }) && !direct_applies {
        let req = super::fdw_modify::ModifyRequest { operation, rel, sets: &set_exprs, returned: &used };
        let scan =
            std::mem::replace(&mut planned.plan, Plan::EmptyResult { columns: vec![], rels: vec![], joined: false });
        let (child, target) = super::fdw_modify::plan_foreign_modify(&req, scan, at)?;
        let returning_shown = ret.iter().map(|(e, _)| e.to_sql(&used_names(&used, &names))).collect();
        let returning_cols: Vec<crate::types::Column> =
            ret.iter().map(|(e, n)| crate::types::Column::new(n, e.col_type(&returned))).collect();
        planned.plan = Plan::ModifyTable(Box::new(ModifyTablePlan {
            operation,
            relation: name,
            alias: alias.clone(),
            target: ResultRel::ForeignRow(target),
            columns: rel.columns.iter().map(|c| (c.name.clone(), c.ty)).collect(),
            source: vec![],
            child,
            returning: ret,
            returning_sql: returning_shown,
            on_conflict: None,
            unique: vec![],
        }));
        planned.columns = returning_cols;
        planned.order_key = None;
        planned.order_keys = vec![];
        return Ok(planned);
    }
    if !sets_shippable {
        return Err(not_direct("with a SET expression that is not shippable"));
    }
    let child = match &planned.plan {
        Plan::ForeignScan(f) => direct(f),
        _ => return Err(not_direct("with a WHERE not all shipped to the remote server")),
    };
    // EXPLAIN writes the returned columns as the first result relation's (`pt_1.b`
    // for a partitioned table, `b` for a foreign table).
    let qualifier = match &child {
        Plan::Append { children, .. } => match children.first() {
            Some(Plan::DirectModify(d)) => d.scan.alias.as_ref().map(|a| a.alias.clone()),
            _ => None,
        },
        Plan::DirectModify(d) => d.scan.alias.as_ref().filter(|a| a.parent.is_some()).map(|a| a.alias.clone()),
        _ => None,
    };
    let shown: Vec<String> = returned
        .iter()
        .map(|c| match &qualifier {
            Some(q) => format!("{}.{}", quote_identifier(q), quote_identifier(&c.name)),
            None => quote_identifier(&c.name),
        })
        .collect();
    let returning_shown = ret.iter().map(|(e, _)| e.to_sql(&shown)).collect();
    let returning_cols: Vec<crate::types::Column> =
        ret.iter().map(|(e, n)| crate::types::Column::new(n, e.col_type(&returned))).collect();
    planned.plan = Plan::ModifyTable(Box::new(ModifyTablePlan {
        operation,
        relation: name,
        alias,
        target: ResultRel::Direct,
        columns: vec![],
        source: vec![],
        child,
        returning: ret,
        returning_sql: returning_shown,
        on_conflict: None,
        unique: vec![],
    }));
    planned.columns = returning_cols;
    planned.order_key = None;
    planned.order_keys = vec![];
    Ok(planned)
}

/// The table an UPDATE or DELETE changes, as written: its name, its alias, and the
/// other relations of `UPDATE … FROM` / `DELETE … USING` (empty without them).
pub(super) struct ModifyTarget<'a> {
    pub table: &'a ast::ObjectName,
    pub alias: Option<&'a ast::Ident>,
    pub from: &'a [ast::TableWithJoins],
}

/// What an UPDATE or DELETE asks of its target, as written: the SET list (None for
/// a DELETE), the WHERE, the RETURNING list, and the statement's text (for the
/// planner's errors). The plain and the joined plans both read it.
#[derive(Clone, Copy)]
pub(super) struct ModifySource<'a> {
    pub sets: Option<&'a Vec<(ast::Ident, ast::Expr)>>,
    pub selection: &'a Option<ast::Expr>,
    pub returning: &'a [ast::SelectItem],
    pub text: &'a str,
}

/// The scan of the target's rows (`SELECT … FROM target`) under the target's alias,
/// so that the WHERE's `x.col` and EXPLAIN's `Seq Scan on public.t x` name it.
pub(super) fn set_target_alias(s: &mut ast::Select, alias: Option<&ast::Ident>) {
    let Some(alias) = alias else { return };
    if let Some(ast::TableFactor::Table { alias: a, .. }) = s.from.first_mut().map(|t| &mut t.relation) {
        *a = Some(ast::TableAlias { name: alias.clone(), columns: vec![] });
    }
}

/// The names of the returned columns (`used`), as a foreign table's RETURNING shows them.
fn used_names(used: &[usize], names: &[String]) -> Vec<String> {
    used.iter().map(|&c| quote_identifier(&names[c])).collect()
}

/// The INSERT's source query.
fn source_query(stmt: &Stmt) -> Option<&ast::Query> {
    match stmt {
        Stmt::Insert { source, .. } => Some(source),
        _ => None,
    }
}

/// Is the source SELECT pulled up into the INSERT's query (prepjointree.c's
/// `is_simple_subquery`): no aggregates, GROUP BY, HAVING, DISTINCT, ORDER BY,
/// LIMIT, OFFSET or set operation. A VALUES row is.
fn pulled_up(q: Option<&ast::Query>, plan: &Plan) -> bool {
    let Some(q) = q else { return true };
    if q.order_by.is_some() || q.limit.is_some() || q.offset.is_some() || q.fetch.is_some() || q.with.is_some() {
        return false;
    }
    let simple = match q.body.as_ref() {
        ast::SetExpr::Select(s) => {
            s.having.is_none()
                && s.distinct.is_none()
                && matches!(&s.group_by, ast::GroupByExpr::Expressions(k, _) if k.is_empty())
        }
        ast::SetExpr::Values(_) => true,
        _ => false,
    };
    simple && !has_agg(plan)
}

/// An aggregate at the top of the plan (under the nodes above it).
fn has_agg(plan: &Plan) -> bool {
    match plan {
        Plan::Agg { .. } => true,
        Plan::Result { child, .. }
        | Plan::Sort { child, .. }
        | Plan::Limit { child, .. }
        | Plan::Gating { child, .. } => has_agg(child),
        Plan::WithInitPlans { child, .. } => has_agg(child),
        _ => false,
    }
}

/// The type of an INSERT's source column where the plan knows it for sure: None for
/// an integer of no known width (a NULL is one), which the check lets through. An
/// untyped literal is a text here: [`untyped_outputs`] tells it apart.
pub(super) fn source_type(c: &crate::types::Column) -> Option<crate::plan::SqlType> {
    use crate::plan::SqlType;
    use crate::types::ColType;
    match c.ty {
        ColType::Bool => Some(SqlType::Bool),
        ColType::Int => c.sql_type,
        ColType::Numeric => Some(SqlType::Numeric),
        ColType::Float => Some(SqlType::Float8),
        ColType::Text => Some(SqlType::Text),
    }
}

/// Which of an INSERT's `width` source columns are still of type unknown: a quoted
/// literal or NULL written as an item of a plain SELECT (transformInsertStmt analyses
/// the SELECT without resolving its unknowns, so the assignment coerces them to the
/// column's type: `'yes'` into a boolean). Anything else is typed, a text column
/// among them (`column "b" is of type boolean but expression is of type text`).
/// Items after a `*` are counted from the end.
fn untyped_outputs(source: &ast::Query, width: usize) -> Vec<bool> {
    let mut out = vec![false; width];
    let ast::SetExpr::Select(s) = source.body.as_ref() else { return out };
    let untyped = |item: &ast::SelectItem| {
        let (ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. }) = item else {
            return false;
        };
        let mut e = e;
        while let ast::Expr::Nested(x) = e {
            e = x;
        }
        matches!(e, ast::Expr::Value(ast::Value::SingleQuotedString(_) | ast::Value::Null))
    };
    let is_star =
        |item: &ast::SelectItem| matches!(item, ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..));
    let first_star = s.projection.iter().position(is_star).unwrap_or(s.projection.len());
    for (i, item) in s.projection[..first_star].iter().enumerate() {
        if i < width {
            out[i] = untyped(item);
        }
    }
    let last_star = s.projection.iter().rposition(is_star);
    if let Some(last) = last_star {
        for (k, item) in s.projection[last + 1..].iter().rev().enumerate() {
            if k < width {
                out[width - 1 - k] = untyped(item);
            }
        }
    }
    out
}

/// Is the INSERT's row the source's row as it is (setrefs.c's
/// `trivial_subqueryscan`): every column filled, in order, by a value of its type?
fn trivial_projection(rel: &Relation, source: &[Option<usize>], columns: &[crate::types::Column]) -> bool {
    source.iter().enumerate().all(|(c, s)| *s == Some(c))
        && columns.len() == rel.columns.len()
        && columns.iter().zip(&rel.columns).all(|(s, t)| s.ty == t.ty.col_type())
}

/// rewriteTargetListIU (rewriteHandler.c): an INSERT's target list is the table's
/// whole row in the table's order, a column the statement does not fill a NULL of the
/// column's type (the sandbox has no column defaults); the planner computes it in the
/// source's top node (a Subquery Scan's projection, else the scan's target list), so
/// EXPLAIN prints `Output: f.id, NULL::integer, NULL::numeric, f.cat`. When the source
/// gives the table's columns in order already, nothing changes; otherwise the source's
/// top projects the row (the Subquery Scan's targets, else a Result over it) and
/// ModifyTable takes each column from its own place.
fn whole_row(rel: &Relation, source: Vec<Option<usize>>, plan: &mut Plan) -> Vec<Option<usize>> {
    let width = plan.output_columns().len();
    if width == rel.columns.len() && source.iter().enumerate().all(|(c, s)| *s == Some(c)) {
        return source;
    }
    let row = |input: &[(crate::plan::Expr, String)]| -> Vec<(crate::plan::Expr, String)> {
        source
            .iter()
            .zip(&rel.columns)
            .map(|(s, col)| match s.and_then(|i| input.get(i)) {
                // A NULL the source writes is coerced to the column's type, a Const of
                // it after eval_const_expressions (`NULL::boolean`).
                Some((crate::plan::Expr::Const(crate::types::Datum::Null), name)) => {
                    (typed_null_or(crate::types::Datum::Null, col.ty), name.clone())
                }
                Some(t) => t.clone(),
                None => (
                    crate::plan::Expr::Func(
                        crate::plan::Func::Cast { from: None, to: col.ty, implicit: false },
                        vec![crate::plan::Expr::Const(crate::types::Datum::Null)].into(),
                    ),
                    col.name.clone(),
                ),
            })
            .collect()
    };
    match plan {
        Plan::SubqueryScan { targets, .. } => *targets = row(targets),
        _ => {
            let names = plan.output_columns();
            let input: Vec<(crate::plan::Expr, String)> =
                names.iter().enumerate().map(|(i, c)| (crate::plan::Expr::Col(i), c.name.clone())).collect();
            let child = std::mem::replace(plan, Plan::EmptyResult { columns: vec![], rels: vec![], joined: false });
            *plan = Plan::Result { child: Box::new(child), filter: None, targets: Some(row(&input)) };
        }
    }
    (0..rel.columns.len()).map(Some).collect()
}

/// The INSERT's source with each `NULL` or quoted literal it selects cast to the type
/// of the column it fills, as transformInsertStmt coerces an unknown Const to the
/// target column's type (a Const of that type: `NULL::boolean`, `true` in EXPLAIN,
/// its type's width).
fn nulls_typed(source: &ast::Query, rel: &Relation, targets: &[usize]) -> ast::Query {
    let mut q = source.clone();
    if let ast::SetExpr::Select(s) = q.body.as_mut() {
        for (item, &t) in s.projection.iter_mut().zip(targets) {
            let (ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. }) = item else {
                continue;
            };
            // An untyped literal too (`'yes'` into a boolean): PostgreSQL coerces the
            // unknown Const to the column's type in place (`true`).
            if matches!(e, ast::Expr::Value(ast::Value::Null | ast::Value::SingleQuotedString(_))) {
                *e = ast::Expr::Cast {
                    kind: ast::CastKind::DoubleColon,
                    expr: Box::new(e.clone()),
                    data_type: super::parse_coerce::data_type(rel.columns[t].ty),
                    format: None,
                };
            }
        }
    }
    q
}

/// A value stored into a column of type `ty` as the planner's Const of that type: a
/// NULL keeps the type, which EXPLAIN prints (`NULL::boolean`), a value is itself.
pub(super) fn typed_null_or(d: crate::types::Datum, ty: crate::plan::SqlType) -> crate::plan::Expr {
    match d {
        crate::types::Datum::Null => crate::plan::Expr::Func(
            crate::plan::Func::Cast { from: None, to: ty, implicit: false },
            vec![crate::plan::Expr::Const(crate::types::Datum::Null)].into(),
        ),
        d => crate::plan::Expr::Const(d),
    }
}

/// The source kept as a subquery, `Subquery Scan on "*SELECT*"`, whose projection
/// makes the INSERT's row (a source that is not pulled up, with a projection that is
/// not trivial).
fn select_subquery_scan(child: Plan) -> Plan {
    let targets =
        child.output_columns().iter().enumerate().map(|(i, c)| (crate::plan::Expr::Col(i), c.name.clone())).collect();
    Plan::SubqueryScan { child: Box::new(child), alias: "*SELECT*".into(), targets }
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

/// `VALUES (one row)` as the source: its row (None for any other source).
fn values_rows(source: &ast::Query, at: Location) -> Result<Option<&[Vec<ast::Expr>]>, FrontError> {
    let ast::SetExpr::Values(v) = source.body.as_ref() else {
        return Ok(None);
    };
    if source.order_by.is_some() || source.limit.is_some() || source.offset.is_some() || source.with.is_some() {
        return Err(FrontError::unsupported("ORDER BY, LIMIT, OFFSET or WITH around INSERT … VALUES", at));
    }
    Ok(Some(v.rows.as_slice()))
}

/// The plan of `VALUES (…), …`: its rows, each value cast to the column it fills (an
/// untyped literal takes its column's type, as `transformInsertRow` coerces it); one
/// row is a Result without input, more a Values Scan. The values are computed when
/// planning (the sandbox's VALUES are constants and its random() is seeded: the same
/// values; PostgreSQL computes them as the rows are read).
fn const_result(
    coord: &Node,
    rel: &Relation,
    targets: &[usize],
    rows: &[Vec<ast::Expr>],
    at: Location,
) -> Result<Planned, FrontError> {
    let width = rows.first().map_or(0, |r| r.len());
    if width > targets.len() {
        return Err(FrontError::at("INSERT has more expressions than target columns", at));
    }
    if rows.iter().any(|r| r.len() != width) {
        return Err(FrontError::at("VALUES lists must all be the same length", at));
    }
    let mut random = coord.random.clone();
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let mut values = Vec::with_capacity(width);
        for (e, &t) in row.iter().zip(targets) {
            let v = super::eval::eval(e, &mut random)?;
            let col = &rel.columns[t];
            values.push(typed_null_or(super::eval::assign(v, (&col.name, col.ty), at)?, col.ty));
        }
        out.push(values);
    }
    let columns: Vec<crate::types::Column> = targets
        .iter()
        .take(width)
        .enumerate()
        .map(|(i, &t)| crate::types::Column::new(&format!("column{}", i + 1), rel.columns[t].ty.col_type()))
        .collect();
    let plan = Plan::ConstResult { rows: out, columns: columns.clone() };
    Ok(Planned { plan, columns, servers: vec![], order_key: None, order_keys: vec![] })
}

/// The ResultRelInfo of `rel`: a local table, a foreign table's foreign modify, or a
/// partitioned table's routing over its partitions (their servers added to `servers`).
fn result_rel(
    coord: &Node,
    rel: &Relation,
    servers: &mut Vec<String>,
    returning: &[usize],
    do_nothing: bool,
    at: Location,
) -> Result<ResultRel, FrontError> {
    Ok(match &rel.kind {
        RelKind::Table(_) => ResultRel::Local { table: rel.name.clone(), unique: rel.unique.clone() },
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
                // postgresGetForeignModifyBatchSize: 1 with RETURNING.
                batch_size: if returning.is_empty() { batch.clamp(1, (PARAM_MAX / ncols).max(1)) } else { 1 },
                returning: returning.to_vec(),
                do_nothing,
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
                // A foreign partition ships DO NOTHING too (postgresBeginForeignInsert).
                parts.push((bound.clone(), result_rel(coord, part, servers, returning, do_nothing, at)?));
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
        let (explain, logs, rows, _) = run("insert into ft (c, a) values ('z', 7);", true);
        assert!(explain.contains("->  Result"), "{explain}");
        assert!(rows.contains(&("s1.ft_remote".to_string(), 1)), "{rows:?}");
        assert!(
            logs.iter()
                .flatten()
                .any(|l| l == "execute pgsql_fdw_prep_1: INSERT INTO public.ft_remote(a, b, c) VALUES ($1, $2, $3)"),
            "{logs:?}"
        );
        // A data-modifying CTE is planned (`cte`): its CTE subplan holds the DELETE.
        let base = SqlScenario::load(SETUP).unwrap();
        let planned =
            base.with_query("with t as (delete from ft returning *) select * from t;").unwrap().plan().unwrap();
        assert!(matches!(planned.plan, crate::plan::Plan::WithCtes { .. }), "{:?}", planned.plan);
        // INSERT … RETURNING into the foreign table: one row a statement, returned by
        // the remote INSERT.
        let s = base.with_query("insert into ft select * from pt where a = 1 returning a, b + 1;").unwrap();
        let sc = s.scenario(&Knobs::default(), Source::Json).unwrap();
        let mut r = sc.start(false, Clock::virtual_clock(), false).unwrap();
        r.keep_rows = true;
        r.run_to_end().unwrap();
        let rows: Vec<String> = r.rows.iter().map(|x| format!("{}|{}", x[0], x[1])).collect();
        assert_eq!(rows, ["1|2", "1|102", "1|202", "1|302", "1|402"]);
        let explain = r.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE);
        assert!(explain.contains("Output: ft.a, (ft.b + 1)"), "{explain}");
        assert!(explain.contains("VALUES ($1, $2, $3) RETURNING a, b"), "{explain}");
        assert!(explain.contains("Batch Size: 1"), "{explain}");
        // UPDATE … RETURNING on the partitioned table: direct modify per partition.
        let s = base.with_query("update pt set c = 'q' where a = 5 returning a, b + 1;").unwrap();
        let sc = s.scenario(&Knobs::default(), Source::Json).unwrap();
        let mut r = sc.start(true, Clock::virtual_clock(), false).unwrap();
        r.keep_rows = true;
        r.run_to_end().unwrap();
        assert_eq!(r.rows.len(), 5);
        let explain = r.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE);
        assert!(
            explain.contains("Remote SQL: UPDATE public.t1 SET c = 'q'::text WHERE ((a = 5)) RETURNING a, b"),
            "{explain}"
        );
        assert!(explain.contains("Output: pt_1.a, (pt_1.b + 1)"), "{explain}");
        // EXPLAIN without ANALYZE plans only: nothing is sent, nothing is stored.
        let base = SqlScenario::load(SETUP).unwrap();
        let s = base.with_query("explain (verbose, costs off) insert into ft select * from pt;").unwrap();
        let run = s.plan_only_run(&Knobs::default(), Source::Json, true).unwrap();
        assert!(run.host.servers.iter().all(|s| s.statement_log().is_empty()));
    }
}
