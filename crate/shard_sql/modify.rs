//! The shard's INSERT and DEALLOCATE: what postgres_fdw's foreign modify sends
//! (postgres_fdw.c's `prepare_foreign_modify` and `execute_foreign_modify`, deparse.c's
//! `deparseInsertSql` and `rebuildInsertSql`):
//!
//! ```text
//! INSERT INTO public.t(a, b, c) VALUES ($1, $2, $3)              (batch_size 1)
//! INSERT INTO public.t(a, b, c) VALUES ($1, $2, $3), ($4, $5, $6) (a batch of two)
//! DEALLOCATE pgsql_fdw_prep_1
//! UPDATE public.t SET b = (b + 1) WHERE ((a < 3))                 (direct modify)
//! DELETE FROM public.t WHERE ((a < 3))
//! ```
//!
//! An UPDATE's or DELETE's WHERE and an UPDATE's SET expressions are planned over the
//! table's columns as a SELECT's are (`expr`); the new values of a row are computed
//! from its old values (every SET reads the row as it was). postgres_fdw's foreign
//! modify sends `UPDATE public.t SET c = $2 WHERE ctid = $1` / `DELETE FROM public.t
//! WHERE ctid = $1`, prepared: a SET parameter takes its column's type, and `ctid =
//! $n` compares the row's ctid (`Table::ctid`) with the parameter's text.
//!
//! An INSERT's values are parameters, constants (numbers, strings, NULL, booleans) or
//! DEFAULT-less: each `$n` takes the type of the column it is inserted into, as
//! PostgreSQL's parse analysis types an unknown parameter from its target column
//! (`transformInsertRow` → `transformAssignedExpr`), so its text from Bind is read by
//! that type's input function. A constant is cast to the column's type at plan time.
//!
//! Invariants: the column list names each column at most once and every row is as
//! wide as it; the rows are stored only when the statement runs (`sim::server`), in
//! the transaction's copy of the catalog, so a ROLLBACK forgets them.
//!
//! Where it departs from PostgreSQL: no expressions other than parameters and
//! constants in VALUES (postgres_fdw sends none), no `INSERT … SELECT`, RETURNING of columns only,
//! ON CONFLICT only as DO NOTHING without a target (a shard's table has no unique
//! index, so nothing conflicts), no column defaults (a column not named is NULL, as postgres_fdw's
//! INSERT always names every column of the foreign table).

use sqlparser::ast::{self, Statement};
use sqlparser::keywords::Keyword;

use super::node_span::NodeSpan;
use super::source::Source;
use super::{ident_name, ShardStatement, SqlError};
use crate::plan::{Expr, SqlType};
use crate::types::{Catalog, ColType};

/// The SQL type a parameter inserted into a column of `ty` is read as.
fn param_type(ty: ColType) -> SqlType {
    match ty {
        ColType::Int => SqlType::Int8,
        ColType::Float => SqlType::Float8,
        ColType::Numeric => SqlType::Numeric,
        ColType::Text => SqlType::Text,
        ColType::Bool => SqlType::Bool,
    }
}

/// `INSERT INTO [public.]t [(col, …)] VALUES (…), …`: planned against `catalog`.
pub(super) fn plan_insert(
    ins: &ast::Insert,
    here: Option<usize>,
    src: &Source,
    catalog: &Catalog,
) -> Result<ShardStatement, SqlError> {
    // `ON CONFLICT DO NOTHING` without a target (what postgres_fdw ships): a shard's
    // table has no unique index (the catalog refuses one there), so no row conflicts
    // and the INSERT stores every row.
    let do_nothing = matches!(
        &ins.on,
        Some(ast::OnInsert::OnConflict(ast::OnConflict {
            conflict_target: None,
            action: ast::OnConflictAction::DoNothing
        }))
    );
    if (ins.on.is_some() && !do_nothing) || ins.overwrite || ins.partitioned.is_some() {
        return Err(SqlError::unsupported("INSERT … ON CONFLICT other than DO NOTHING without a target", here));
    }
    let parts: Vec<String> = ins.table_name.0.iter().map(ident_name).collect();
    let name = match parts.as_slice() {
        [t] => t.clone(),
        [s, t] if s == "public" => t.clone(),
        _ => return Err(SqlError::new(format!("relation \"{}\" does not exist", parts.join(".")), here)),
    };
    let table = catalog
        .get(&name)
        .ok_or_else(|| SqlError::new(format!("relation \"{}\" does not exist", parts.join(".")), here))?;
    let mut targets = Vec::new();
    if ins.columns.is_empty() {
        targets.extend(0..table.ncols());
    }
    for c in &ins.columns {
        let n = ident_name(c);
        let i = table.column_index(&n).ok_or_else(|| {
            SqlError::new(format!("column \"{n}\" of relation \"{name}\" does not exist"), src.position(c.span.start))
        })?;
        if targets.contains(&i) {
            return Err(SqlError::new(format!("column \"{n}\" specified more than once"), src.position(c.span.start)));
        }
        targets.push(i);
    }
    let Some(source) = &ins.source else {
        return Err(SqlError::unsupported("INSERT … DEFAULT VALUES", here));
    };
    let ast::SetExpr::Values(values) = source.body.as_ref() else {
        return Err(SqlError::unsupported("INSERT … SELECT", here));
    };
    let mut rows = Vec::with_capacity(values.rows.len());
    for row in &values.rows {
        if row.len() > targets.len() {
            return Err(SqlError::new("INSERT has more expressions than target columns", here));
        }
        if row.len() < targets.len() {
            return Err(SqlError::new("INSERT has more target columns than expressions", here));
        }
        let mut out = Vec::with_capacity(row.len());
        for (e, &t) in row.iter().zip(&targets) {
            out.push(value_expr(e, param_type(table.columns[t].ty), here)?);
        }
        rows.push(out);
    }
    let rel =
        super::expr::Relation { table: name.clone(), alias: None, columns: table.columns.clone(), members: vec![] };
    let returning_cols = returning_columns(ins.returning.as_deref(), &rel, here, src)?;
    let returning = returning_cols.iter().map(|&c| rel.columns[c].clone()).collect();
    Ok(ShardStatement::Insert { table: name, targets, rows, returning, returning_cols })
}

/// One value of a VALUES row: a parameter typed by its column, or a constant cast to it.
fn value_expr(e: &ast::Expr, ty: SqlType, here: Option<usize>) -> Result<Expr, SqlError> {
    match e {
        ast::Expr::Value(ast::Value::Placeholder(p)) => {
            let n = p.strip_prefix('$').and_then(|d| d.parse::<u16>().ok()).filter(|&n| n > 0);
            n.map(|n| Expr::Param(n, ty, None)).ok_or_else(|| SqlError::unsupported(format!("parameter {p}"), here))
        }
        ast::Expr::Value(v) => {
            let d = super::expr::literal(v, here)?;
            let d = crate::plan::eval::cast(d, None, ty)
                .map_err(|k| SqlError::new(crate::plan::eval::EvalError::from(k).to_string(), here))?;
            Ok(Expr::Const(d))
        }
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Minus, expr } => match expr.as_ref() {
            ast::Expr::Value(ast::Value::Number(digits, _)) => {
                value_expr(&ast::Expr::Value(ast::Value::Number(format!("-{digits}"), false)), ty, here)
            }
            _ => Err(SqlError::unsupported("an expression in INSERT … VALUES", here)),
        },
        _ => Err(SqlError::unsupported("an expression in INSERT … VALUES (only parameters and constants)", here)),
    }
}

/// One table of an UPDATE or DELETE: `[public.]t`, no alias, no join, no ONLY.
fn modified_table(
    t: &ast::TableWithJoins,
    here: Option<usize>,
    catalog: &Catalog,
) -> Result<super::expr::Relation, SqlError> {
    let ast::TableFactor::Table { name, alias: None, args: None, .. } = &t.relation else {
        return Err(SqlError::unsupported("this target of UPDATE or DELETE (an alias, a function)", here));
    };
    if !t.joins.is_empty() {
        return Err(SqlError::unsupported("a join in UPDATE or DELETE", here));
    }
    let parts: Vec<String> = name.0.iter().map(ident_name).collect();
    let table = match parts.as_slice() {
        [t] => t.clone(),
        [s, t] if s == "public" => t.clone(),
        _ => return Err(SqlError::new(format!("relation \"{}\" does not exist", parts.join(".")), here)),
    };
    let t = catalog
        .get(&table)
        .ok_or_else(|| SqlError::new(format!("relation \"{}\" does not exist", parts.join(".")), here))?;
    Ok(super::expr::Relation { table, alias: None, columns: t.columns.clone(), members: vec![] })
}

/// The WHERE of an UPDATE or DELETE over `rel`. `ctid = $n` (postgres_fdw's foreign
/// modify names its row so, deparse.c's `deparseUpdateSql`) compares the row's ctid,
/// read as the column after the table's last ([`ctid_column`]), with the parameter.
fn plan_where(
    selection: &Option<ast::Expr>,
    src: &Source,
    rel: &super::expr::Relation,
) -> Result<Option<Expr>, SqlError> {
    if let Some(ast::Expr::BinaryOp { left, op: ast::BinaryOperator::Eq, right }) = selection {
        if matches!(left.as_ref(), ast::Expr::Identifier(i) if ident_name(i) == "ctid")
            && rel.column_index(&ast::Ident::new("ctid")).is_none()
        {
            let here = src.span_position(right.node_span());
            let value = value_expr(right, SqlType::Text, here)?;
            return Ok(Some(Expr::bin(crate::plan::BinOp::Eq, Expr::Col(rel.columns.len()), value)));
        }
    }
    let planner = super::expr::ExprPlanner { src, rel };
    selection
        .as_ref()
        .map(|c| {
            planner.plan_condition(c, &mut super::expr::Scope::Rows { no_agg: super::expr::NO_AGG_IN_WHERE }, "WHERE")
        })
        .transpose()
}

/// `UPDATE [public.]t SET col = expr, … [WHERE …] [RETURNING col, …]` (no FROM).
pub(super) fn plan_update(
    statement: &Statement,
    here: Option<usize>,
    src: &Source,
    catalog: &Catalog,
) -> Result<ShardStatement, SqlError> {
    let Statement::Update { table, assignments, from, selection, returning, or: _ } = statement else {
        return Err(SqlError::unsupported("this UPDATE", here));
    };
    if from.is_some() {
        return Err(SqlError::unsupported("UPDATE … FROM", here));
    }
    let rel = modified_table(table, here, catalog)?;
    let returning_cols = returning_columns(returning.as_deref(), &rel, here, src)?;
    let planner = super::expr::ExprPlanner { src, rel: &rel };
    let mut sets = Vec::with_capacity(assignments.len());
    for a in assignments {
        let ast::AssignmentTarget::ColumnName(name) = &a.target else {
            return Err(SqlError::unsupported("UPDATE … SET (a, b) = …", here));
        };
        let [col] = name.0.as_slice() else {
            return Err(SqlError::unsupported(format!("the SET target {name}"), here));
        };
        let c = rel.column_index(col).ok_or_else(|| {
            SqlError::new(format!("column \"{}\" of relation \"{}\" does not exist", ident_name(col), rel.table), here)
        })?;
        if sets.iter().any(|(x, _)| *x == c) {
            return Err(SqlError::new(format!("multiple assignments to same column \"{}\"", ident_name(col)), here));
        }
        // `SET col = $n` (a foreign modify's new value): the parameter takes the
        // column's type, as parse analysis types an assigned unknown parameter.
        let e = match &a.value {
            ast::Expr::Value(ast::Value::Placeholder(_)) => value_expr(&a.value, param_type(rel.columns[c].ty), here)?,
            _ => planner.plan(
                &a.value,
                &mut super::expr::Scope::Rows { no_agg: "aggregate functions are not allowed in UPDATE" },
            )?,
        };
        sets.push((c, e));
    }
    let filter = plan_where(selection, src, &rel)?;
    let returning = returning_cols.iter().map(|&c| rel.columns[c].clone()).collect();
    Ok(ShardStatement::Update { table: rel.table.clone(), sets, filter, returning, returning_cols })
}

/// `DELETE FROM [public.]t [WHERE …] [RETURNING col, …]` (no USING).
pub(super) fn plan_delete(
    d: &ast::Delete,
    here: Option<usize>,
    src: &Source,
    catalog: &Catalog,
) -> Result<ShardStatement, SqlError> {
    if d.using.is_some() || !d.tables.is_empty() || !d.order_by.is_empty() || d.limit.is_some() {
        return Err(SqlError::unsupported("DELETE … USING", here));
    }
    let (ast::FromTable::WithFromKeyword(from) | ast::FromTable::WithoutKeyword(from)) = &d.from;
    let [table] = from.as_slice() else {
        return Err(SqlError::unsupported("DELETE from several tables", here));
    };
    let rel = modified_table(table, here, catalog)?;
    let filter = plan_where(&d.selection, src, &rel)?;
    let returning_cols = returning_columns(d.returning.as_deref(), &rel, here, src)?;
    let returning = returning_cols.iter().map(|&c| rel.columns[c].clone()).collect();
    Ok(ShardStatement::Delete { table: rel.table.clone(), filter, returning, returning_cols })
}

/// Does an UPDATE's or DELETE's WHERE read the row's ctid (column `ncols`)?
pub fn ctid_column(filter: Option<&Expr>, ncols: usize) -> bool {
    let mut reads = false;
    if let Some(f) = filter {
        f.for_each_col(&mut |c| reads |= c >= ncols);
    }
    reads
}

/// `RETURNING col, …` as deparse.c's `deparseReturningList` writes it: columns only.
fn returning_columns(
    returning: Option<&[ast::SelectItem]>,
    rel: &super::expr::Relation,
    here: Option<usize>,
    src: &Source,
) -> Result<Vec<usize>, SqlError> {
    let mut out = Vec::new();
    for (k, item) in returning.unwrap_or_default().iter().enumerate() {
        let ast::SelectItem::UnnamedExpr(ast::Expr::Identifier(i)) = item else {
            let item = src.list_item_text(here, Keyword::RETURNING, k).unwrap_or("an expression");
            return Err(SqlError::unsupported(format!("RETURNING {item} (only columns)"), here));
        };
        let c = rel
            .column_index(i)
            .ok_or_else(|| SqlError::new(format!("column \"{}\" does not exist", ident_name(i)), here))?;
        out.push(c);
    }
    Ok(out)
}

/// `DEALLOCATE [PREPARE] name` (postgres_fdw's `deallocate_query`), or `DEALLOCATE
/// ALL` (its `pgfdw_abort_cleanup` after a transaction that prepared statements).
pub(super) fn plan_deallocate(statement: &Statement, here: Option<usize>) -> Result<ShardStatement, SqlError> {
    match statement {
        Statement::Deallocate { name, .. } if name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all") => {
            Ok(ShardStatement::DeallocateAll)
        }
        Statement::Deallocate { name, .. } => Ok(ShardStatement::Deallocate { name: ident_name(name) }),
        _ => Err(SqlError::unsupported("this DEALLOCATE", here)),
    }
}
