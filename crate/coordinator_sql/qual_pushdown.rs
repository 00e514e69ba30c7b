//! The outer query's WHERE pushed into a subquery in FROM, as PostgreSQL 15 places
//! it: a simple subquery is pulled up into the outer query (prepjointree.c's
//! `pull_up_simple_subquery`), so a condition on its columns is a condition on the
//! expressions they stand for, in the scan below (`Filter: ((loc.id + 1) > 3)`); a
//! grouped one is not, but `set_subquery_pathlist` pushes each safe condition into
//! it (`subquery_push_qual`): into its HAVING when it reads an aggregate, else, as
//! `subquery_planner` then moves a HAVING condition without aggregates, into its
//! WHERE (so a pushed-down aggregate's remote query carries it).
//!
//! Protocol: [`push_quals`] takes the outer query (one subquery in FROM, no join) and
//! returns it with the conditions it could push removed from its WHERE, and the
//! subquery with them added, each column reference replaced by the select-list
//! expression it names (in parentheses). The caller plans the two as before.
//!
//! Which conditions and subqueries qualify (`subquery_is_pushdown_safe`,
//! `qual_is_pushdown_safe`): the subquery is a plain SELECT without LIMIT, OFFSET,
//! FETCH, DISTINCT or sublinks; a condition is a conjunct of the outer WHERE that reads
//! only columns the subquery's select list names explicitly (or, over one table
//! without a join, its `*`), holds no sublink and calls no volatile function, and the
//! expressions it reads are not volatile. Anything else stays in the outer WHERE.
//!
//! Invariants: a condition is moved, never copied, and means the same over the
//! subquery's rows as over its output (the substituted expressions are the output);
//! a constant result of the substitution (`7 > 3`) is folded by the planner as any
//! constant condition is.

use sqlparser::ast::{self, SelectItem, SetExpr, TableFactor};

use super::catalog::{ident, relation_name, Node};

/// The outer query and its subquery with the pushable WHERE conjuncts moved into the
/// subquery; None when nothing moves.
pub(super) fn push_quals(coord: &Node, outer: &ast::Query, sub: &ast::Query) -> Option<(ast::Query, ast::Query)> {
    let SetExpr::Select(os) = outer.body.as_ref() else { return None };
    let where_ = os.selection.as_ref()?;
    let [from] = os.from.as_slice() else { return None };
    let TableFactor::Derived { alias, lateral: false, .. } = &from.relation else { return None };
    if !from.joins.is_empty() {
        return None;
    }
    let SetExpr::Select(ss) = sub.body.as_ref() else { return None };
    let safe_sub = sub.limit.is_none()
        && sub.offset.is_none()
        && sub.fetch.is_none()
        && sub.with.is_none()
        && ss.distinct.is_none()
        && ss.qualify.is_none()
        && !super::subselect::has_sublinks(sub);
    if !safe_sub {
        return None;
    }
    let outputs = output_exprs(coord, ss, alias.as_ref())?;
    let grouped = !matches!(&ss.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty())
        || ss.having.is_some()
        || ss.projection.iter().any(|i| match i {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                crate::shard_sql::contains_aggregate_call(e)
            }
            _ => false,
        });
    let alias_name = alias.as_ref().map(|a| ident(&a.name));
    let mut conjuncts = vec![];
    and_conjuncts(where_, &mut conjuncts);
    let (mut kept, mut to_where, mut to_having) = (vec![], vec![], vec![]);
    for c in conjuncts {
        match substitute(c, &outputs, alias_name.as_deref()) {
            Some(pushed) if grouped && crate::shard_sql::contains_aggregate_call(&pushed) => to_having.push(pushed),
            Some(pushed) => to_where.push(pushed),
            None => kept.push(c.clone()),
        }
    }
    if to_where.is_empty() && to_having.is_empty() {
        return None;
    }
    let mut sub = sub.clone();
    if let SetExpr::Select(ss) = sub.body.as_mut() {
        ss.selection = and_all(ss.selection.take().into_iter().chain(to_where));
        ss.having = and_all(ss.having.take().into_iter().chain(to_having));
    }
    let mut outer = outer.clone();
    if let SetExpr::Select(os) = outer.body.as_mut() {
        os.selection = and_all(kept);
    }
    Some((outer, sub))
}

/// The subquery's output columns by name, each with the expression it stands for;
/// a `*` over one plain table (no join) gives that table's columns. None when an
/// item is a `*` of another kind.
fn output_exprs(coord: &Node, s: &ast::Select, _alias: Option<&ast::TableAlias>) -> Option<Vec<(String, ast::Expr)>> {
    let mut out = vec![];
    for item in &s.projection {
        match item {
            SelectItem::ExprWithAlias { expr, alias } => out.push((ident(alias), expr.clone())),
            SelectItem::UnnamedExpr(e @ ast::Expr::Identifier(i)) => out.push((ident(i), e.clone())),
            SelectItem::UnnamedExpr(e @ ast::Expr::CompoundIdentifier(p)) => {
                out.push((p.last().map(ident).unwrap_or_default(), e.clone()))
            }
            // An unnamed expression has no name the outer query can use (`?column?`).
            SelectItem::UnnamedExpr(_) => out.push((String::new(), ast::Expr::Value(ast::Value::Null))),
            SelectItem::Wildcard(_) => {
                let [from] = s.from.as_slice() else { return None };
                let TableFactor::Table { name, args: None, .. } = &from.relation else { return None };
                if !from.joins.is_empty() {
                    return None;
                }
                let rel = relation_name(name).ok().and_then(|n| coord.relation(&n))?;
                out.extend(
                    rel.columns.iter().map(|c| (c.name.clone(), ast::Expr::Identifier(ast::Ident::new(&c.name)))),
                );
            }
            SelectItem::QualifiedWildcard(..) => return None,
        }
    }
    Some(out)
}

/// `c` with each column reference replaced by the subquery expression it names, in
/// parentheses; None when `c` may not be pushed (a sublink, a volatile function, a
/// reference to no single named output or to a volatile one).
fn substitute(c: &ast::Expr, outputs: &[(String, ast::Expr)], alias: Option<&str>) -> Option<ast::Expr> {
    let mut ok = true;
    let mut pushed = c.clone();
    super::prepjointree::walk_mut(&mut pushed, &mut |e: &mut ast::Expr| {
        let name = match &*e {
            ast::Expr::Identifier(i) => Some(ident(i)),
            ast::Expr::CompoundIdentifier(p) if p.len() == 2 && Some(ident(&p[0]).as_str()) == alias => {
                Some(ident(&p[1]))
            }
            ast::Expr::CompoundIdentifier(_) => {
                ok = false;
                None
            }
            ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. } => {
                ok = false;
                None
            }
            ast::Expr::Function(f) if is_volatile(f) => {
                ok = false;
                None
            }
            _ => None,
        };
        if let Some(n) = name {
            let mut found = outputs.iter().filter(|(o, _)| !o.is_empty() && *o == n);
            match (found.next(), found.next()) {
                (Some((_, x)), None) if !reads_volatile(x) => *e = ast::Expr::Nested(Box::new(x.clone())),
                _ => ok = false,
            }
        }
    });
    ok.then_some(pushed)
}

/// A function that may be volatile: any but the immutable built-ins and aggregates
/// (a user function's volatility is not looked up here: it is not pushed).
fn is_volatile(f: &ast::Function) -> bool {
    let name = f.name.to_string().to_lowercase();
    !matches!(name.as_str(), "length" | "upper" | "lower" | "substr" | "abs" | "count" | "sum" | "min" | "max" | "avg")
}

fn reads_volatile(e: &ast::Expr) -> bool {
    let mut volatile = false;
    let mut e = e.clone();
    super::prepjointree::walk_mut(&mut e, &mut |x: &mut ast::Expr| {
        if let ast::Expr::Function(f) = &*x {
            volatile |= is_volatile(f);
        }
        volatile |= matches!(x, ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. });
    });
    volatile
}

fn and_conjuncts<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
    match e {
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::And, right } => {
            and_conjuncts(left, out);
            and_conjuncts(right, out);
        }
        ast::Expr::Nested(x) if matches!(x.as_ref(), ast::Expr::BinaryOp { op: ast::BinaryOperator::And, .. }) => {
            and_conjuncts(x, out)
        }
        other => out.push(other),
    }
}

fn and_all(parts: impl IntoIterator<Item = ast::Expr>) -> Option<ast::Expr> {
    parts.into_iter().reduce(|a, b| ast::Expr::BinaryOp {
        left: Box::new(a),
        op: ast::BinaryOperator::And,
        right: Box::new(b),
    })
}
