//! Planning a single-table SELECT.
//!
//! The plan is built bottom-up, like PostgreSQL's simplest plans:
//!
//! ```text
//! Limit                      LIMIT / OFFSET
//!   Result (targets)         the select list (left out when it is the identity)
//!     Sort                   ORDER BY
//!       Result (filter)      HAVING
//!         Agg                GROUP BY / aggregates (Hashed with keys, else Plain)
//!           Result (filter)  WHERE
//!             SeqScan
//! ```
//!
//! Sorting below the projection lets ORDER BY use expressions that are not in the
//! select list; its keys are planned in the same scope as the select list (table
//! rows, or Agg output), so ordinals and output names simply reuse select items.
//!
//! Invariants:
//! - One table in FROM: a join, a comma list, a subquery or a set operation is refused
//!   with the position of its keyword, and so is every clause not planned here
//!   (`check_query_clauses`, `check_select_clauses`).
//! - Each expression is planned in the scope where PostgreSQL evaluates it: WHERE and
//!   GROUP BY over table rows, with no aggregates; the select list, HAVING and ORDER BY
//!   of an aggregated query over the Agg's output, where a bare column outside GROUP BY
//!   is PostgreSQL's "must appear in the GROUP BY clause" error, not a wrong answer.
//! - The projection is left out only when it is the identity, names included, so the
//!   output columns (`finish`) are always named as the select list names them.
//!
//! Where it departs from PostgreSQL (`grouping_planner` in planner.c): a grouped query
//! always gets a hashed Agg (PostgreSQL chooses sorted or hashed by cost); nothing is
//! costed; the Sort is below the projection, where PostgreSQL sorts rows that carry
//! sort-only expressions as resjunk columns. The one index rewrite is `plan::optimize`,
//! made by the shard when it runs the plan.

use sqlparser::ast::{
    self, GroupByExpr, OrderByExpr, Query, Select, SelectItem, SetExpr, TableFactor, UnaryOperator, Value,
    WildcardAdditionalOptions,
};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

use super::expr::{
    contains_aggregate, output_name, ExprPlanner, Grouping, Relation, Scope, NO_AGG_IN_GROUP_BY, NO_AGG_IN_WHERE,
};
use super::node_span::NodeSpan;
use super::source::Source;
use super::{ident_name, SqlError};
use crate::plan::{AggStrategy, Expr, Func, Plan, SortKey, SqlType};
use crate::types::{Catalog, Column, Datum, Table};

/// Plans a SELECT; returns the plan and its output columns named after the select list.
pub(super) fn plan_query(q: &Query, src: &Source, catalog: &Catalog) -> Result<(Plan, Vec<Column>), SqlError> {
    check_query_clauses(q, src)?;
    plan_checked_query(q, src, catalog)
}

/// `plan_query` for a `SELECT … FOR UPDATE` that [`for_update`] accepted: its locking
/// clause is left out of the plan (a shard has no concurrency), the query's other
/// clauses checked as `plan_query` checks them. The tree is read in place: cloning a
/// `Query` to drop its locks would link sqlparser's whole AST `Clone` (~100 KB of
/// the page's wasm module).
pub(super) fn plan_for_update(q: &Query, src: &Source, catalog: &Catalog) -> Result<(Plan, Vec<Column>), SqlError> {
    check_with_clause(q, src)?;
    check_other_query_clauses(q)?;
    plan_checked_query(q, src, catalog)
}

/// `plan_query` once the query-level clauses are checked.
fn plan_checked_query(q: &Query, src: &Source, catalog: &Catalog) -> Result<(Plan, Vec<Column>), SqlError> {
    let select = query_body(q, src)?;
    check_select_clauses(select, src)?;
    let (rel, base) = resolve_from(select, src, catalog)?;
    plan_query_over(q, select, src, rel, base)
}

/// Plans a SELECT over the relation `rel` its FROM clause was resolved to (the
/// coordinator gives a join's relations as one, with `members`).
pub(super) fn plan_query_over(
    q: &Query,
    select: &Select,
    src: &Source,
    rel: Relation,
    base: Option<Plan>,
) -> Result<(Plan, Vec<Column>), SqlError> {
    let planner = ExprPlanner { src, rel: &rel };
    let items = select_items(select, &rel, src)?;
    let order_by: &[OrderByExpr] = q.order_by.as_ref().map_or(&[], |o| o.exprs.as_slice());
    let (count, offset) = limit_and_offset(q, src)?;

    // A pushed-down join's rows come from its join plan (`super::join`).
    let mut plan =
        base.unwrap_or_else(|| Plan::SeqScan { table: rel.table.clone(), columns: rel.columns.clone(), alias: None });
    if let Some(condition) = &select.selection {
        let filter = planner.plan_condition(condition, &mut Scope::Rows { no_agg: NO_AGG_IN_WHERE }, "WHERE")?;
        plan = Plan::Result { child: Box::new(plan), filter: Some(filter), targets: None };
    }
    let distinct = matches!(select.distinct, Some(ast::Distinct::Distinct));
    let body = if is_aggregated(select, &items, order_by) {
        if distinct {
            let position = src.find_keyword(select.select_token.0.span.start, &[Keyword::DISTINCT]);
            return Err(SqlError::unsupported("DISTINCT in an aggregated query", position));
        }
        plan_grouped(&planner, select, &items, order_by, plan)?
    } else if distinct {
        plan_distinct(&planner, &items, order_by, plan)?
    } else {
        // No aggregate appears anywhere, so the message below is never used.
        let mut scope = Scope::Rows { no_agg: "aggregate functions are not allowed here" };
        let targets = plan_targets(&planner, &items, &mut scope)?;
        let sort_keys = plan_sort_keys(&planner, order_by, &targets, &items, &mut scope)?;
        Body { plan, targets, sort_keys }
    };
    Ok(finish(body, count, offset))
}

/// A plan still to be topped with Sort, the projection and Limit: `targets` (the
/// select list) and `sort_keys` are expressions over `plan`'s output.
struct Body {
    plan: Plan,
    targets: Vec<(Expr, String)>,
    sort_keys: Vec<SortKey>,
}

/// One select-list entry before planning: an expression, or a column of `*`.
struct Item<'q> {
    source: ItemSource<'q>,
    /// Output column name (alias, column name, aggregate name or `?column?`).
    name: String,
    position: Option<usize>,
}

enum ItemSource<'q> {
    Expr(&'q ast::Expr),
    Column(usize),
}

/// `SELECT … FROM t … FOR UPDATE` (postgres_fdw's scan for a foreign modify): the
/// table it locks (the query is then planned by [`plan_for_update`]). Only a plain `FOR
/// UPDATE` of the one table read (a shard has no concurrency: the lock changes
/// nothing but what may be read, the rows' `ctid`).
pub(super) fn for_update(q: &Query, src: &Source, catalog: &Catalog) -> Result<String, SqlError> {
    let position = src.find_keyword(q.body.node_span().end, &[Keyword::FOR]);
    let plain = matches!(q.locks.as_slice(), [l] if l.lock_type == ast::LockType::Update && l.of.is_none() && l.nonblock.is_none());
    if !plain {
        return Err(SqlError::unsupported("FOR SHARE, FOR UPDATE OF, NOWAIT or SKIP LOCKED", position));
    }
    let select = query_body(q, src)?;
    let (rel, join) = resolve_from(select, src, catalog)?;
    if join.is_some() || !rel.members.is_empty() {
        return Err(SqlError::unsupported("FOR UPDATE over a join", position));
    }
    Ok(rel.table)
}

/// `SELECT …, ctid FROM t …` without FOR UPDATE (postgres_fdw's scan of a partition
/// another relation's UPDATE or DELETE joins to: its parent's row mark reads the
/// rows' `ctid`, preprocess_targetlist's junk column): the one table read, when the
/// select list names `ctid` and the table has no column of that name.
pub(super) fn reads_ctid(q: &Query, src: &Source, catalog: &Catalog) -> Option<String> {
    let select = query_body(q, src).ok()?;
    let named = select
        .projection
        .iter()
        .any(|item| matches!(item, ast::SelectItem::UnnamedExpr(ast::Expr::Identifier(i)) if i.value == "ctid"));
    if !named {
        return None;
    }
    let (rel, join) = resolve_from(select, src, catalog).ok()?;
    let table = catalog.tables.iter().find(|t| t.name == rel.table)?;
    (join.is_none() && rel.members.is_empty() && table.column_index("ctid").is_none()).then_some(rel.table)
}

/// Rejects query-level clauses other than ORDER BY / LIMIT / OFFSET / FETCH FIRST.
pub(super) fn check_query_clauses(q: &Query, src: &Source) -> Result<(), SqlError> {
    check_with_clause(q, src)?;
    if !q.locks.is_empty() {
        let position = src.find_keyword(q.body.node_span().end, &[Keyword::FOR]);
        return Err(SqlError::unsupported("FOR UPDATE/SHARE", position));
    }
    check_other_query_clauses(q)
}

fn check_with_clause(q: &Query, src: &Source) -> Result<(), SqlError> {
    match &q.with {
        Some(with) => Err(SqlError::unsupported("WITH", src.span_position(with.with_token.0.span))),
        None => Ok(()),
    }
}

/// The clauses of other dialects (LIMIT BY, FOR XML, SETTINGS, FORMAT, INTERPOLATE).
fn check_other_query_clauses(q: &Query) -> Result<(), SqlError> {
    let other = if !q.limit_by.is_empty() {
        Some("LIMIT BY")
    } else if q.for_clause.is_some() {
        Some("FOR XML/JSON")
    } else if q.settings.is_some() {
        Some("SETTINGS")
    } else if q.format_clause.is_some() {
        Some("FORMAT")
    } else if q.order_by.as_ref().is_some_and(|o| o.interpolate.is_some()) {
        Some("INTERPOLATE")
    } else {
        None
    };
    match other {
        Some(what) => Err(SqlError::unsupported(what, None)),
        None => Ok(()),
    }
}

/// The query's SELECT; set operations, VALUES and the like are rejected.
pub(super) fn query_body<'q>(q: &'q Query, src: &Source) -> Result<&'q Select, SqlError> {
    match q.body.as_ref() {
        SetExpr::Select(select) => Ok(select),
        SetExpr::SetOperation { op, left, .. } => {
            let keywords = [Keyword::UNION, Keyword::EXCEPT, Keyword::INTERSECT];
            Err(SqlError::unsupported(op, src.find_keyword(left.node_span().end, &keywords)))
        }
        SetExpr::Query(inner) => {
            Err(SqlError::unsupported("parenthesized queries", src.span_position(inner.node_span())))
        }
        SetExpr::Values(_) => Err(SqlError::unsupported("VALUES", None)),
        SetExpr::Table(_) => Err(SqlError::unsupported("TABLE", None)),
        SetExpr::Insert(_) => Err(SqlError::unsupported("INSERT", None)),
        SetExpr::Update(_) => Err(SqlError::unsupported("UPDATE", None)),
    }
}

/// Rejects SELECT clauses we do not plan (HAVING and GROUP BY expressions are planned).
pub(super) fn check_select_clauses(s: &Select, src: &Source) -> Result<(), SqlError> {
    let start = s.select_token.0.span.start;
    let at = |keyword: Keyword| src.find_keyword(start, &[keyword]);
    let (what, position) = if matches!(s.distinct, Some(ast::Distinct::On(_))) {
        ("DISTINCT ON", at(Keyword::DISTINCT))
    } else if s.top.is_some() {
        ("TOP", at(Keyword::TOP))
    } else if s.into.is_some() {
        ("SELECT INTO", at(Keyword::INTO))
    } else if !s.named_window.is_empty() {
        ("WINDOW", at(Keyword::WINDOW))
    } else if matches!(s.group_by, GroupByExpr::All(_)) {
        ("GROUP BY ALL", at(Keyword::GROUP))
    } else if matches!(&s.group_by, GroupByExpr::Expressions(_, modifiers) if !modifiers.is_empty()) {
        ("GROUP BY modifiers", at(Keyword::GROUP))
    } else if !s.lateral_views.is_empty() {
        ("LATERAL VIEW", None)
    } else if s.prewhere.is_some() {
        ("PREWHERE", None)
    } else if !s.cluster_by.is_empty() || !s.distribute_by.is_empty() || !s.sort_by.is_empty() {
        ("CLUSTER/DISTRIBUTE/SORT BY", None)
    } else if s.qualify.is_some() {
        ("QUALIFY", None)
    } else if s.connect_by.is_some() {
        ("CONNECT BY", None)
    } else if s.value_table_mode.is_some() {
        ("SELECT AS STRUCT/VALUE", None)
    } else {
        return Ok(());
    };
    Err(SqlError::unsupported(what, position))
}

/// The one table of the FROM clause, or a pushed-down join written in parentheses
/// (with the plan of its rows, `super::join`).
fn resolve_from(s: &Select, src: &Source, catalog: &Catalog) -> Result<(Relation, Option<Plan>), SqlError> {
    let Some(first) = s.from.first() else {
        return Err(SqlError::unsupported("SELECT without FROM", src.span_position(s.select_token.0.span)));
    };
    let after_first = first.relation.node_span().end;
    if !first.joins.is_empty() {
        // Point at the join keyword that follows the first table.
        let keywords = [
            Keyword::JOIN,
            Keyword::INNER,
            Keyword::LEFT,
            Keyword::RIGHT,
            Keyword::FULL,
            Keyword::CROSS,
            Keyword::NATURAL,
            Keyword::OUTER,
        ];
        return Err(SqlError::unsupported("JOIN", src.find_keyword(after_first, &keywords)));
    }
    if s.from.len() > 1 {
        // `FROM a, b` is a cross join.
        let position = src.find_token(after_first, |t| *t == Token::Comma);
        return Err(SqlError::unsupported("JOIN", position));
    }
    if let TableFactor::NestedJoin { table_with_joins, alias: None } = &first.relation {
        let (rel, plan) = super::join::resolve_join(table_with_joins, src, catalog)?;
        return Ok((rel, Some(plan)));
    }
    Ok((table_relation(&first.relation, src, catalog)?, None))
}

pub(super) fn table_relation(factor: &TableFactor, src: &Source, catalog: &Catalog) -> Result<Relation, SqlError> {
    let position = src.span_position(factor.node_span());
    let TableFactor::Table { name, alias, args, with_hints, version, with_ordinality, partitions, json_path } = factor
    else {
        let what = match factor {
            TableFactor::Derived { .. } => "subqueries in FROM",
            TableFactor::NestedJoin { .. } => "JOIN",
            _ => "table functions and other FROM items",
        };
        return Err(SqlError::unsupported(what, position));
    };
    if args.is_some() {
        return Err(SqlError::unsupported("table functions", position));
    }
    if !with_hints.is_empty() || version.is_some() || *with_ordinality || !partitions.is_empty() || json_path.is_some()
    {
        return Err(SqlError::unsupported("this form of table reference", position));
    }
    if let Some(alias) = alias {
        if !alias.columns.is_empty() {
            return Err(SqlError::unsupported("column aliases in FROM", src.span_position(alias.name.span)));
        }
    }
    let table = lookup_table(name, catalog).ok_or_else(|| {
        let written = name.0.iter().map(ident_name).collect::<Vec<_>>().join(".");
        SqlError::new(format!("relation \"{written}\" does not exist"), position)
    })?;
    Ok(Relation {
        table: table.name.clone(),
        alias: alias.as_ref().map(|a| ident_name(&a.name)),
        columns: table.columns.clone(),
        members: vec![],
    })
}

/// Finds `name` (optionally qualified with `public`) in the catalog. An unquoted name
/// also matches case-insensitively, forgiving catalogs with upper-case names.
fn lookup_table<'c>(name: &ast::ObjectName, catalog: &'c Catalog) -> Option<&'c Table> {
    let ident = match name.0.as_slice() {
        [table] => table,
        [schema, table] if ident_name(schema) == "public" => table,
        _ => return None,
    };
    let folded = ident_name(ident);
    if let Some(t) = catalog.get(&folded) {
        return Some(t);
    }
    if ident.quote_style.is_some() {
        return None;
    }
    let mut matches = catalog.tables.iter().filter(|t| t.name.eq_ignore_ascii_case(&folded));
    match (matches.next(), matches.next()) {
        (Some(t), None) => Some(t),
        _ => None,
    }
}

/// The select list with `*` expanded into the table's columns.
fn select_items<'q>(s: &'q Select, rel: &Relation, src: &Source) -> Result<Vec<Item<'q>>, SqlError> {
    let mut items = Vec::new();
    for item in &s.projection {
        let position = src.span_position(item.node_span());
        match item {
            SelectItem::UnnamedExpr(e) => {
                items.push(Item { source: ItemSource::Expr(e), name: output_name(e), position })
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                items.push(Item { source: ItemSource::Expr(expr), name: ident_name(alias), position })
            }
            SelectItem::Wildcard(options) => {
                check_wildcard_options(options, position)?;
                items.extend(all_columns(rel, position));
            }
            SelectItem::QualifiedWildcard(qualifier, options) => {
                check_wildcard_options(options, position)?;
                if let Some(m) = rel.member(&qualifier.0) {
                    items.extend(all_columns(rel, position).skip(m.start).take(m.len));
                    continue;
                }
                if !rel.is_named(&qualifier.0) {
                    let table = qualifier.0.iter().map(ident_name).collect::<Vec<_>>().join(".");
                    return Err(SqlError::new(format!("missing FROM-clause entry for table \"{table}\""), position));
                }
                items.extend(all_columns(rel, position));
            }
        }
    }
    Ok(items)
}

fn all_columns<'q>(rel: &Relation, position: Option<usize>) -> impl Iterator<Item = Item<'q>> + '_ {
    rel.columns.iter().enumerate().map(move |(i, c)| Item {
        source: ItemSource::Column(i),
        name: c.name.clone(),
        position,
    })
}

/// `* EXCEPT (...)` and friends come from other dialects.
fn check_wildcard_options(o: &WildcardAdditionalOptions, position: Option<usize>) -> Result<(), SqlError> {
    let plain = o.opt_ilike.is_none()
        && o.opt_exclude.is_none()
        && o.opt_except.is_none()
        && o.opt_replace.is_none()
        && o.opt_rename.is_none();
    if plain {
        Ok(())
    } else {
        Err(SqlError::unsupported("* with modifiers", position))
    }
}

/// Whether the query aggregates: GROUP BY, HAVING, or an aggregate call in the
/// select list or ORDER BY (as in PostgreSQL, `SELECT 1 FROM t ORDER BY count(*)`
/// yields one row).
fn is_aggregated(s: &Select, items: &[Item], order_by: &[OrderByExpr]) -> bool {
    let group_by = matches!(&s.group_by, GroupByExpr::Expressions(keys, _) if !keys.is_empty());
    group_by
        || s.having.is_some()
        || items.iter().any(|it| matches!(it.source, ItemSource::Expr(e) if contains_aggregate(e)))
        || order_by.iter().any(|o| contains_aggregate(&o.expr))
}

/// Plans an aggregated query above `input`: the Agg (and HAVING filter), plus the
/// select list and sort keys over the Agg's output.
fn plan_grouped(
    planner: &ExprPlanner,
    s: &Select,
    items: &[Item],
    order_by: &[OrderByExpr],
    input: Plan,
) -> Result<Body, SqlError> {
    let key_exprs: &[ast::Expr] = match &s.group_by {
        GroupByExpr::Expressions(keys, _) => keys,
        GroupByExpr::All(_) => &[], // rejected by check_select_clauses
    };
    let keys = key_exprs.iter().map(|e| plan_group_key(planner, e, items)).collect::<Result<Vec<_>, _>>()?;
    let mut grouping = Grouping { keys, aggs: Vec::new() };
    let mut scope = Scope::Groups(&mut grouping);
    let targets = plan_targets(planner, items, &mut scope)?;
    let having = s.having.as_ref().map(|h| planner.plan_condition(h, &mut scope, "HAVING")).transpose()?;
    let sort_keys = plan_sort_keys(planner, order_by, &targets, items, &mut scope)?;

    let strategy = if grouping.keys.is_empty() { AggStrategy::Plain } else { AggStrategy::Hashed };
    let mut plan = Plan::Agg {
        child: Box::new(input),
        strategy,
        group_by: grouping.keys,
        aggs: grouping.aggs,
        split: crate::plan::AggSplit::Simple,
    };
    if let Some(filter) = having {
        plan = Plan::Result { child: Box::new(plan), filter: Some(filter), targets: None };
    }
    Ok(Body { plan, targets, sort_keys })
}

/// `SELECT DISTINCT` (`transformDistinctClause`): a grouping without aggregates on
/// the select list's expressions, whose output is the select list. Its Agg is marked
/// [`AggStrategy::Unique`] over its input sorted by those expressions (so that the
/// logical plan runs as it is on a shard); the coordinator's planner chooses between
/// Unique over sorted input and a HashAggregate by cost (`create_distinct_paths`).
/// ORDER BY may only name what the select list has.
fn plan_distinct(
    planner: &ExprPlanner,
    items: &[Item],
    order_by: &[OrderByExpr],
    input: Plan,
) -> Result<Body, SqlError> {
    let mut rows = Scope::Rows { no_agg: "aggregate functions are not allowed here" };
    let keys = items.iter().map(|item| plan_item(planner, item, &mut rows)).collect::<Result<Vec<_>, _>>()?;
    let targets: Vec<(Expr, String)> =
        items.iter().enumerate().map(|(i, item)| (Expr::Col(i), item.name.clone())).collect();
    let mut grouping = Grouping { keys, aggs: Vec::new() };
    let mut scope = Scope::Groups(&mut grouping);
    let sort_keys = plan_sort_keys(planner, order_by, &targets, items, &mut scope).map_err(|e| {
        if e.message.contains("must appear in the GROUP BY clause") {
            SqlError::new("for SELECT DISTINCT, ORDER BY expressions must appear in select list", e.position)
        } else {
            e
        }
    })?;
    let sort = Plan::Sort {
        child: Box::new(input),
        keys: grouping.keys.iter().cloned().map(|expr| SortKey { expr, desc: false }).collect(),
    };
    let plan = Plan::Agg {
        child: Box::new(sort),
        strategy: AggStrategy::Unique,
        group_by: grouping.keys,
        aggs: vec![],
        split: crate::plan::AggSplit::Simple,
    };
    Ok(Body { plan, targets, sort_keys })
}

/// A GROUP BY item: a select-list ordinal, a select-list name that is not an input
/// column (input columns win, as in PostgreSQL), or an expression over the table.
fn plan_group_key(planner: &ExprPlanner, e: &ast::Expr, items: &[Item]) -> Result<Expr, SqlError> {
    let mut scope = Scope::Rows { no_agg: NO_AGG_IN_GROUP_BY };
    if let Some(i) = ordinal(e, items.len(), "GROUP BY")? {
        return plan_item(planner, &items[i], &mut scope);
    }
    if let ast::Expr::Identifier(ident) = e {
        if planner.rel.column_index(ident).is_none() {
            let name = ident_name(ident);
            if let Some(item) = items.iter().find(|it| it.name == name) {
                return plan_item(planner, item, &mut scope);
            }
        }
    }
    planner.plan(e, &mut scope)
}

fn plan_targets(planner: &ExprPlanner, items: &[Item], scope: &mut Scope) -> Result<Vec<(Expr, String)>, SqlError> {
    items.iter().map(|item| Ok((resolve_unknown(plan_item(planner, item, scope)?), item.name.clone()))).collect()
}

/// `resolveTargetListUnknowns` (parse_target.c): a select item still of type unknown,
/// a bare NULL, is coerced to text, so EXPLAIN shows `NULL::text` and the column is a
/// text. (A quoted literal is a text here already; a set operation's branch and an
/// INSERT's source give their NULLs the column's type before they are planned.)
fn resolve_unknown(e: Expr) -> Expr {
    match e {
        Expr::Const(Datum::Null) => {
            Expr::func(Func::Cast { from: None, to: SqlType::Text, implicit: false }, vec![Expr::Const(Datum::Null)])
        }
        e => e,
    }
}

fn plan_item(planner: &ExprPlanner, item: &Item, scope: &mut Scope) -> Result<Expr, SqlError> {
    match item.source {
        ItemSource::Expr(e) => planner.plan(e, scope),
        ItemSource::Column(i) => planner.input_column(i, &item.name, item.position, scope),
    }
}

/// ORDER BY keys, over the same rows as the select list's `targets`.
fn plan_sort_keys(
    planner: &ExprPlanner,
    order_by: &[OrderByExpr],
    targets: &[(Expr, String)],
    items: &[Item],
    scope: &mut Scope,
) -> Result<Vec<SortKey>, SqlError> {
    let mut keys = Vec::new();
    for o in order_by {
        let desc = o.asc == Some(false);
        check_nulls_order(o, desc, planner.src)?;
        if o.with_fill.is_some() {
            return Err(SqlError::unsupported("WITH FILL", None));
        }
        let expr = sort_key_expr(planner, &o.expr, targets, items, scope)?;
        keys.push(SortKey { expr, desc });
    }
    Ok(keys)
}

/// A sort key: a select-list ordinal, an output column name, or an expression.
fn sort_key_expr(
    planner: &ExprPlanner,
    e: &ast::Expr,
    targets: &[(Expr, String)],
    items: &[Item],
    scope: &mut Scope,
) -> Result<Expr, SqlError> {
    if let Some(i) = ordinal(e, items.len(), "ORDER BY")? {
        return Ok(targets[i].0.clone());
    }
    // As in PostgreSQL, a bare name refers to an output column before an input column.
    if let ast::Expr::Identifier(ident) = e {
        let name = ident_name(ident);
        let mut matching = targets.iter().filter(|(_, n)| *n == name).map(|(x, _)| x);
        if let Some(first) = matching.next() {
            if matching.any(|x| x != first) {
                let position = planner.src.span_position(ident.span);
                return Err(SqlError::new(format!("ORDER BY \"{name}\" is ambiguous"), position));
            }
            return Ok(first.clone());
        }
    }
    planner.plan(e, scope)
}

/// Our sort puts NULLs last ascending and first descending (PostgreSQL's defaults),
/// so NULLS FIRST/LAST is accepted only where it asks for that order (postgres_fdw
/// always spells it out).
fn check_nulls_order(o: &OrderByExpr, desc: bool, src: &Source) -> Result<(), SqlError> {
    match o.nulls_first {
        Some(nulls_first) if nulls_first != desc => {
            let what = if nulls_first { "NULLS FIRST with ASC" } else { "NULLS LAST with DESC" };
            Err(SqlError::unsupported(what, src.find_keyword(o.expr.node_span().end, &[Keyword::NULLS])))
        }
        _ => Ok(()),
    }
}

/// The 0-based select item an integer constant in GROUP BY / ORDER BY refers to.
fn ordinal(e: &ast::Expr, nitems: usize, clause: &str) -> Result<Option<usize>, SqlError> {
    let ast::Expr::Value(Value::Number(digits, _)) = e else {
        return Ok(None);
    };
    // Other constants (`ORDER BY 1.5`) are plain expressions, as in PostgreSQL.
    let Ok(n) = digits.parse::<usize>() else {
        return Ok(None);
    };
    if n == 0 || n > nitems {
        // sqlparser keeps no position for literals.
        return Err(SqlError::new(format!("{clause} position {n} is not in select list"), None));
    }
    Ok(Some(n - 1))
}

/// LIMIT (or FETCH FIRST) count and OFFSET, which must be constants.
fn limit_and_offset(q: &Query, src: &Source) -> Result<(Option<u64>, u64), SqlError> {
    let mut count = match &q.limit {
        Some(e) => constant_count(e, "LIMIT", src)?,
        None => None,
    };
    if let Some(fetch) = &q.fetch {
        if q.limit.is_some() || fetch.percent || fetch.with_ties {
            return Err(SqlError::unsupported("this form of FETCH FIRST", None));
        }
        count = match &fetch.quantity {
            Some(e) => constant_count(e, "FETCH FIRST", src)?,
            None => Some(1),
        };
    }
    let offset = match &q.offset {
        Some(o) => constant_count(&o.value, "OFFSET", src)?.unwrap_or(0),
        None => 0,
    };
    Ok((count, offset))
}

/// A row count given as a constant; NULL means no limit.
fn constant_count(e: &ast::Expr, clause: &str, src: &Source) -> Result<Option<u64>, SqlError> {
    let position = src.span_position(e.node_span());
    match e {
        ast::Expr::Value(Value::Number(digits, _)) => digits
            .parse::<u64>()
            .map(Some)
            .map_err(|_| SqlError::unsupported(format!("non-integer {clause}"), position)),
        ast::Expr::Value(Value::Null) => Ok(None),
        ast::Expr::Nested(inner) => constant_count(inner, clause, src),
        // postgres_fdw sends `LIMIT 5::bigint`.
        ast::Expr::Cast {
            expr,
            data_type: ast::DataType::BigInt(_) | ast::DataType::Int(_) | ast::DataType::Integer(_),
            format: None,
            ..
        } => constant_count(expr, clause, src),
        ast::Expr::UnaryOp { op: UnaryOperator::Minus, expr }
            if matches!(**expr, ast::Expr::Value(Value::Number(..))) =>
        {
            Err(SqlError::new(format!("{clause} must not be negative"), position))
        }
        _ => Err(SqlError::unsupported(format!("non-constant {clause}"), position)),
    }
}

/// Puts Sort, the projection and Limit on top of `plan`; the returned columns carry
/// the select list's names.
fn finish(body: Body, count: Option<u64>, offset: u64) -> (Plan, Vec<Column>) {
    let Body { mut plan, targets, sort_keys } = body;
    if !sort_keys.is_empty() {
        plan = Plan::Sort { child: Box::new(plan), keys: sort_keys };
    }
    if !is_identity(&targets, &plan.output_columns()) {
        plan = Plan::Result { child: Box::new(plan), filter: None, targets: Some(targets.clone()) };
    }
    if count.is_some() || offset > 0 {
        plan = Plan::Limit { child: Box::new(plan), offset, count };
    }
    let columns = plan
        .output_columns()
        .into_iter()
        .zip(&targets)
        .map(|(c, (_, name))| Column { name: name.clone(), ..c.clone() })
        .collect();
    (plan, columns)
}

/// Whether projecting `targets` would return the input unchanged (names included).
fn is_identity(targets: &[(Expr, String)], input: &[Column]) -> bool {
    targets.len() == input.len()
        && targets.iter().zip(input).enumerate().all(|(i, ((e, name), c))| *e == Expr::Col(i) && *name == c.name)
}
