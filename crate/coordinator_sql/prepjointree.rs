//! Sublinks pulled up into joins, as PostgreSQL 15's `pull_up_sublinks`
//! (prepjointree.c) does with the help of subselect.c's `convert_ANY_sublink_to_join`
//! and `convert_EXISTS_sublink_to_join`:
//!
//! - `x IN (SELECT y FROM t …)` and `x = ANY (SELECT y FROM t …)` whose subquery does
//!   not refer to the outer query become a **semi join** of the outer relation and `t`
//!   on `x = y` (with the subquery's WHERE as conditions on `t`);
//! - `EXISTS (SELECT … FROM t WHERE …)` whose WHERE refers to the outer query becomes a
//!   semi join on that WHERE, `NOT EXISTS` an **anti join**;
//!
//! each only as a conjunct of WHERE's top-level AND (a sublink under OR or NOT, or in
//! the select list, stays a subplan: `subselect.rs`). `NOT IN` is never pulled up (its
//! NULL semantics are not an anti join's); it stays a hashed SubPlan, as in PostgreSQL 15.
//! Every such conjunct is pulled up, each a join of its own; and inside a pulled-up
//! subquery's WHERE, a sublink that refers to the subquery's relation only is pulled
//! up into the join's right side (`j->rarg`: `a ⋉ (b ⋉ c)`), and under an EXISTS one
//! that refers to the outer query's relation only (two levels up from its own) beside
//! it (`pull_up_sublinks_qual_recurse` stacks it onto the join's left side, `j->larg`).
//!
//! Protocol: [`pull_up_sublinks`] rewrites the query into a join of the outer relation
//! and each subquery's relation, in range-table order (each sublink's relation, then
//! those pulled up from inside it), each with the operator `LEFT SEMI JOIN` / `LEFT ANTI
//! JOIN` (sqlparser's names; the planner takes these only from here, a query that
//! spells them is refused by [`refuse_written_semi_joins`]) and hands it to the join
//! planner (`planner::plan_join` for two relations, `joinrels` for more), which plans
//! each as PostgreSQL's `JOIN_SEMI`/`JOIN_ANTI`: never with the subquery's side outside
//! (PostgreSQL 15 has no right semi or anti join), or as an inner join over the
//! subquery's side made unique (`JOIN_UNIQUE_INNER`/`JOIN_UNIQUE_OUTER`).
//! Names are resolved as PostgreSQL resolves them in the two scopes: the outer query's
//! bare column names are qualified with the outer relation's name, the subquery's
//! with the subquery's relation when it has the column, else the outer's (a correlated
//! reference), so that joining the two scopes makes no name ambiguous.
//!
//! Invariants: a query is rewritten only when every sublink of it can be pulled up
//! (one left is refused by name); the rewritten query returns the same rows (a semi
//! join returns each outer row once, as the sublink's test does); every relation of
//! the join goes by its own name.
//!
//! Where it departs from PostgreSQL: only a query over one relation, its sublinks
//! making a join the join search plans (`joinrels`: GEQO's size refused
//! by name); sublinks nested one level only (one nested in a nested
//! subquery is left a sublink: refused); the subquery must
//! read one relation, without aggregates, GROUP BY, DISTINCT, LIMIT or set operations
//! (PostgreSQL pulls up a subquery that is a join too); the subquery's relation must go
//! by another name than the outer one (EXPLAIN's `h_1` naming of a second `h` is not
//! done here); the semi join is not yet also planned as an inner join over the
//! subquery's rows made unique (`JOIN_UNIQUE_INNER`/`JOIN_UNIQUE_OUTER`).

use sqlparser::ast::{self, SelectItem, SetExpr};

use super::catalog::{ident, relation_name, Node};
use super::FrontError;

/// Refuses a query that writes a semi or anti join itself (PostgreSQL has no such
/// syntax; the planner takes these operators only from [`pull_up_sublinks`]).
pub(super) fn refuse_written_semi_joins(q: &ast::Query, at: sqlparser::tokenizer::Location) -> Result<(), FrontError> {
    let SetExpr::Select(s) = q.body.as_ref() else { return Ok(()) };
    for j in s.from.iter().flat_map(|f| &f.joins) {
        use ast::JoinOperator as J;
        if matches!(
            j.join_operator,
            J::Semi(_) | J::LeftSemi(_) | J::RightSemi(_) | J::Anti(_) | J::LeftAnti(_) | J::RightAnti(_)
        ) {
            return Err(FrontError::at("syntax error: SEMI and ANTI joins are not SQL (write IN or EXISTS)", at));
        }
    }
    Ok(())
}

/// The query with its one pullable sublink made a semi or anti join, or None when it
/// has none (or is not a query over one relation).
pub(super) fn pull_up_sublinks(
    coord: &Node,
    q: &ast::Query,
    at: sqlparser::tokenizer::Location,
) -> Result<Option<ast::Query>, FrontError> {
    let SetExpr::Select(s) = q.body.as_ref() else { return Ok(None) };
    let [from] = s.from.as_slice() else { return Ok(None) };
    let ast::TableFactor::Table { name, alias, args: None, .. } = &from.relation else { return Ok(None) };
    if !from.joins.is_empty() {
        return Ok(None);
    }
    let Some(selection) = &s.selection else { return Ok(None) };
    let Ok(outer_rel) = relation_name(name) else { return Ok(None) };
    let Some(outer) = coord.relation(&outer_rel) else { return Ok(None) };
    let outer_name = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_else(|| outer_rel.clone());
    let outer_cols: Vec<String> = outer.columns.iter().map(|c| c.name.clone()).collect();

    let mut conjuncts = vec![];
    split_and(selection, &mut conjuncts);
    // Each pullable sublink in WHERE's top-level AND, with the sublinks pulled up
    // from inside it (`pull_up_sublinks_qual_recurse`), in range-table order.
    let outer_scope_names = vec![(outer_name.clone(), outer_cols.clone())];
    let mut found: Vec<(usize, Vec<Pulled>)> = vec![];
    for (i, c) in conjuncts.iter().enumerate() {
        if let Some(p) = convertible(coord, c, &outer_scope_names, 0) {
            found.push((i, p));
        }
    }
    if found.is_empty() {
        return Ok(None);
    }
    let pulled: Vec<Pulled> = found.iter().flat_map(|(_, p)| p.iter().cloned()).collect();
    let rest: Vec<&ast::Expr> =
        conjuncts.iter().enumerate().filter(|(i, _)| !found.iter().any(|(k, _)| k == i)).map(|(_, c)| *c).collect();
    if rest.iter().any(|c| has_sublink(c))
        || s.projection.iter().any(|i| match i {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => has_sublink(e),
            _ => false,
        })
        || s.having.as_ref().is_some_and(has_sublink)
    {
        return Err(FrontError::unsupported(
            "a sublink pulled up into a semi or anti join beside another subquery in the same query: not planned yet",
            at,
        ));
    }
    // Each relation of the join goes by its own name.
    let mut names = vec![outer_name.clone()];
    for p in &pulled {
        if names.contains(&p.inner_name) {
            return Err(FrontError::unsupported(
                format!(
                    "a subquery over a relation named \"{}\" like {}, pulled up into a join: name one of them \
                     differently (an alias) — EXPLAIN's naming of the second is not done yet",
                    p.inner_name,
                    if p.inner_name == outer_name { "the outer one" } else { "another of the query" }
                ),
                at,
            ));
        }
        names.push(p.inner_name.clone());
    }

    // The outer query's names, qualified with the outer relation's.
    let outer_scope = Scope { names: vec![(outer_name.clone(), outer_cols.clone())] };
    let mut q2 = q.clone();
    let SetExpr::Select(s2) = q2.body.as_mut() else { return Ok(None) };
    let output_names = output_names(&s2.projection);
    for item in s2.projection.iter_mut() {
        match item {
            SelectItem::UnnamedExpr(e) => {
                // Keep the output column's name (`id`, not `?column?`).
                if let ast::Expr::Identifier(x) = e {
                    let alias = x.clone();
                    let mut e2 = e.clone();
                    outer_scope.qualify(&mut e2);
                    if e2 != *e {
                        *item = SelectItem::ExprWithAlias { expr: e2, alias };
                    }
                    continue;
                }
                outer_scope.qualify(e)
            }
            SelectItem::ExprWithAlias { expr, .. } => outer_scope.qualify(expr),
            SelectItem::Wildcard(o) => {
                *item = SelectItem::QualifiedWildcard(ast::ObjectName(vec![ast::Ident::new(&outer_name)]), o.clone())
            }
            SelectItem::QualifiedWildcard(..) => {}
        }
    }
    let mut rest: Vec<ast::Expr> = rest.into_iter().cloned().collect();
    rest.iter_mut().for_each(|e| outer_scope.qualify(e));
    s2.selection = and_all(rest);
    if let ast::GroupByExpr::Expressions(v, _) = &mut s2.group_by {
        // GROUP BY names an input column before an output one (unlike ORDER BY).
        v.iter_mut().for_each(|e| outer_scope.qualify(e));
    }
    if let Some(h) = s2.having.as_mut() {
        outer_scope.qualify(h);
    }
    if let Some(ob) = q2.order_by.as_mut() {
        for o in ob.exprs.iter_mut() {
            if !is_output_name(&o.expr, &output_names) {
                outer_scope.qualify(&mut o.expr);
            }
        }
    }
    let SetExpr::Select(s2) = q2.body.as_mut() else { return Ok(None) };
    for pulled in pulled {
        let constraint = ast::JoinConstraint::On(pulled.condition);
        s2.from[0].joins.push(ast::Join {
            relation: pulled.relation,
            global: false,
            join_operator: if pulled.anti {
                ast::JoinOperator::LeftAnti(constraint)
            } else {
                ast::JoinOperator::LeftSemi(constraint)
            },
        });
    }
    Ok(Some(q2))
}

/// A sublink made a join: the subquery's relation, the join condition (its names
/// qualified), and whether it is an anti join.
#[derive(Clone)]
struct Pulled {
    relation: ast::TableFactor,
    inner_name: String,
    condition: ast::Expr,
    anti: bool,
}

/// `convert_ANY_sublink_to_join` / `convert_EXISTS_sublink_to_join` for one WHERE
/// conjunct: the join it becomes, then those its subquery's WHERE pulls up in turn
/// (`pull_up_sublinks_qual_recurse` over the new join's quals), or None when
/// PostgreSQL would leave it a sublink (or the sandbox cannot pull it up).
///
/// `outer` is the relations the sublink may refer to (innermost first: only the
/// query's relation here, `available_rels`). A sublink inside an EXISTS subquery's
/// WHERE that refers to the query's relation alone stacks onto the query's side
/// (`j->larg`), a join of the same form; one that refers to the subquery's relation
/// would nest inside its side (`j->rarg`, a semi join as the right side of another):
/// not pulled up here, so the whole is left to the subplan's rules.
fn convertible(coord: &Node, c: &ast::Expr, outer: &[(String, Vec<String>)], depth: usize) -> Option<Vec<Pulled>> {
    let c = strip_nested(c);
    let (lhs, sub, anti) = match c {
        ast::Expr::InSubquery { expr, subquery, negated: false } => (Some(expr.as_ref()), subquery.as_ref(), false),
        ast::Expr::AnyOp { left, compare_op: ast::BinaryOperator::Eq, right, .. } => match strip_nested(right) {
            ast::Expr::Subquery(q) => (Some(left.as_ref()), q.as_ref(), false),
            _ => return None,
        },
        ast::Expr::Exists { subquery, negated } => (None, subquery.as_ref(), *negated),
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Not, expr } => match strip_nested(expr) {
            ast::Expr::Exists { subquery, negated: false } => (None, subquery.as_ref(), true),
            _ => return None,
        },
        _ => return None,
    };
    let (relation, inner_name, inner_cols, s) = simple_subquery(coord, sub, lhs.is_none())?;
    let mut names = vec![(inner_name.clone(), inner_cols.clone())];
    names.extend(outer.iter().cloned());
    let scope = Scope { names };
    let refers_outer = |e: &ast::Expr| (1..scope.names.len()).any(|level| scope.refers_to(e, level));
    // The subquery's WHERE: its own conditions, and the sublinks among them (pulled
    // up in turn below an EXISTS, else left: then this sublink is not pulled up).
    let mut own: Vec<&ast::Expr> = vec![];
    let mut nested: Vec<&ast::Expr> = vec![];
    if let Some(w) = &s.selection {
        let mut parts = vec![];
        split_and(w, &mut parts);
        for p in parts {
            if has_sublink(p) {
                nested.push(p);
            } else {
                own.push(p);
            }
        }
    }
    if !nested.is_empty() && depth >= 1 {
        return None;
    }
    let mut conds: Vec<ast::Expr> = vec![];
    if let Some(lhs) = lhs {
        // convert_ANY_sublink_to_join: the subquery must not refer to the outer query.
        let [SelectItem::UnnamedExpr(item) | SelectItem::ExprWithAlias { expr: item, .. }] = s.projection.as_slice()
        else {
            return None;
        };
        if own.iter().any(|e| refers_outer(e)) || refers_outer(item) || has_sublink(lhs) {
            return None;
        }
        let mut l = lhs.clone();
        Scope { names: outer.to_vec() }.qualify(&mut l);
        let mut r = item.clone();
        scope.qualify(&mut r);
        conds.push(ast::Expr::BinaryOp { left: Box::new(l), op: ast::BinaryOperator::Eq, right: Box::new(r) });
    } else {
        // convert_EXISTS_sublink_to_join: only a WHERE that refers to the outer query
        // (an uncorrelated EXISTS is an InitPlan).
        if !own.iter().any(|e| refers_outer(e)) {
            return None;
        }
    }
    for p in own {
        let mut p = p.clone();
        scope.qualify(&mut p);
        conds.push(p);
    }
    let mut out = vec![Pulled { relation, inner_name, condition: and_all(conds)?, anti }];
    // The sublinks of its WHERE (resolved in the subquery's scope, this relation
    // innermost, as PostgreSQL resolves a bare name): one that reads this subquery's
    // relation alone joins it inside this join's right side (`j->rarg`: the join
    // planner sees its condition read no relation outside that side); one that reads
    // the outer query alone joins beside this one (`j->larg`), under an EXISTS only
    // (under NOT EXISTS PostgreSQL leaves it a sublink; IN is not pulled up then);
    // one that reads both is left a sublink (so this one is not pulled up).
    for n in nested {
        let inner = convertible(coord, n, &scope.names, depth + 1)?;
        let [p] = inner.as_slice() else { return None };
        let middle = reads_relation(&p.condition, &out[0].inner_name);
        let outside = outer.iter().any(|(name, _)| reads_relation(&p.condition, name));
        match (middle, outside) {
            (true, false) => {}
            (false, true) if lhs.is_none() && !anti => {}
            _ => return None,
        }
        out.extend(inner);
    }
    Some(out)
}

/// Does a pulled-up condition (its names qualified) read the relation named `name`?
fn reads_relation(e: &ast::Expr, name: &str) -> bool {
    let mut found = false;
    walk(e, &mut |x| {
        if let ast::Expr::CompoundIdentifier(p) = x {
            found |= p.len() >= 2 && ident(&p[p.len() - 2]) == name;
        }
    });
    found
}

/// The subquery's one relation, its name and columns, and its SELECT, when it is
/// simple enough to be a join's side: one table, no join, aggregate, GROUP BY, HAVING,
/// DISTINCT, LIMIT, OFFSET or set operation, no sublink; ORDER BY only under EXISTS
/// (`simplify_EXISTS_query` drops it).
fn simple_subquery(
    coord: &Node,
    sub: &ast::Query,
    exists: bool,
) -> Option<(ast::TableFactor, String, Vec<String>, ast::Select)> {
    if sub.with.is_some() || sub.limit.is_some() || sub.offset.is_some() || sub.fetch.is_some() {
        return None;
    }
    if sub.order_by.is_some() && !exists {
        return None;
    }
    let SetExpr::Select(s) = sub.body.as_ref() else { return None };
    let [from] = s.from.as_slice() else { return None };
    if !from.joins.is_empty() || s.distinct.is_some() || s.having.is_some() {
        return None;
    }
    if !matches!(&s.group_by, ast::GroupByExpr::Expressions(v, _) if v.is_empty()) {
        return None;
    }
    let items_ok = s.projection.iter().all(|i| match i {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => !has_aggregate(e) && !has_sublink(e),
        _ => exists,
    });
    // (Sublinks in its WHERE: `convertible` pulls them up or gives up.)
    if !items_ok {
        return None;
    }
    let ast::TableFactor::Table { name, alias, args: None, .. } = &from.relation else { return None };
    let rel = coord.relation(&relation_name(name).ok()?)?;
    let inner_name = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_else(|| rel.name.clone());
    let cols = rel.columns.iter().map(|c| c.name.clone()).collect();
    Some((from.relation.clone(), inner_name, cols, (**s).clone()))
}

/// The relations a bare column name may belong to, innermost first.
struct Scope {
    names: Vec<(String, Vec<String>)>,
}

impl Scope {
    /// The relation a bare column belongs to (the innermost that has it).
    fn owner(&self, col: &str) -> Option<usize> {
        self.names.iter().position(|(_, cols)| cols.iter().any(|c| c == col))
    }

    /// Does `e` read a column of the scope's relation `level` (bare or qualified)?
    fn refers_to(&self, e: &ast::Expr, level: usize) -> bool {
        let mut found = false;
        walk(e, &mut |x| match x {
            ast::Expr::Identifier(i) => found |= self.owner(&ident(i)) == Some(level),
            ast::Expr::CompoundIdentifier(p) if p.len() >= 2 => {
                found |= ident(&p[p.len() - 2]) == self.names[level].0
                    && self.names.iter().position(|(n, _)| *n == ident(&p[p.len() - 2])) == Some(level)
            }
            _ => {}
        });
        found
    }

    /// Qualifies every bare column name in `e` with its relation's name.
    fn qualify(&self, e: &mut ast::Expr) {
        walk_mut(e, &mut |x| {
            if let ast::Expr::Identifier(i) = x {
                if let Some(level) = self.owner(&ident(i)) {
                    *x = ast::Expr::CompoundIdentifier(vec![ast::Ident::new(&self.names[level].0), i.clone()]);
                }
            }
        });
    }
}

fn is_output_name(e: &ast::Expr, names: &[String]) -> bool {
    matches!(e, ast::Expr::Identifier(i) if names.contains(&ident(i)))
}

fn strip_nested(e: &ast::Expr) -> &ast::Expr {
    match e {
        ast::Expr::Nested(x) => strip_nested(x),
        e => e,
    }
}

/// The conjuncts of WHERE's top-level AND (through parentheses).
fn split_and<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
    match e {
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::And, right } => {
            split_and(left, out);
            split_and(right, out);
        }
        ast::Expr::Nested(x) if matches!(x.as_ref(), ast::Expr::BinaryOp { op: ast::BinaryOperator::And, .. }) => {
            split_and(x, out)
        }
        e => out.push(e),
    }
}

fn and_all(v: Vec<ast::Expr>) -> Option<ast::Expr> {
    v.into_iter().reduce(|a, b| ast::Expr::BinaryOp {
        left: Box::new(a),
        op: ast::BinaryOperator::And,
        right: Box::new(b),
    })
}

fn has_sublink(e: &ast::Expr) -> bool {
    let mut found = false;
    walk(e, &mut |x| {
        found |= matches!(x, ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. })
    });
    found
}

fn has_aggregate(e: &ast::Expr) -> bool {
    let mut found = false;
    walk(e, &mut |x| {
        found |= matches!(x, ast::Expr::Function(f)
            if ["count", "sum", "avg", "min", "max"].contains(&f.name.to_string().to_lowercase().as_str()))
    });
    found
}

/// Calls `f` on `e` and every expression below it, sublinks' operands included but
/// not their subqueries.
fn walk(e: &ast::Expr, f: &mut impl FnMut(&ast::Expr)) {
    let mut e = e.clone();
    walk_mut(&mut e, &mut |x| f(x));
}

/// Calls `f` on every expression below `e`, then on `e` (children first, so that `f`
/// may replace a leaf).
pub(super) fn walk_mut(e: &mut ast::Expr, f: &mut impl FnMut(&mut ast::Expr)) {
    match e {
        ast::Expr::BinaryOp { left, right, .. }
        | ast::Expr::AnyOp { left, right, .. }
        | ast::Expr::AllOp { left, right, .. } => {
            walk_mut(left, f);
            walk_mut(right, f);
        }
        ast::Expr::IsDistinctFrom(l, r) | ast::Expr::IsNotDistinctFrom(l, r) => {
            walk_mut(l, f);
            walk_mut(r, f);
        }
        ast::Expr::Nested(x)
        | ast::Expr::UnaryOp { expr: x, .. }
        | ast::Expr::IsNull(x)
        | ast::Expr::IsNotNull(x)
        | ast::Expr::IsTrue(x)
        | ast::Expr::IsFalse(x)
        | ast::Expr::IsNotTrue(x)
        | ast::Expr::IsNotFalse(x)
        | ast::Expr::IsUnknown(x)
        | ast::Expr::IsNotUnknown(x)
        | ast::Expr::Cast { expr: x, .. }
        | ast::Expr::InSubquery { expr: x, .. } => walk_mut(x, f),
        ast::Expr::Between { expr, low, high, .. } => {
            walk_mut(expr, f);
            walk_mut(low, f);
            walk_mut(high, f);
        }
        ast::Expr::Like { expr, pattern, .. } | ast::Expr::ILike { expr, pattern, .. } => {
            walk_mut(expr, f);
            walk_mut(pattern, f);
        }
        ast::Expr::InList { expr, list, .. } => {
            walk_mut(expr, f);
            list.iter_mut().for_each(|x| walk_mut(x, f));
        }
        ast::Expr::Case { operand, conditions, results, else_result } => {
            if let Some(o) = operand {
                walk_mut(o, f);
            }
            conditions.iter_mut().chain(results.iter_mut()).for_each(|x| walk_mut(x, f));
            if let Some(x) = else_result {
                walk_mut(x, f);
            }
        }
        ast::Expr::Function(func) => {
            if let ast::FunctionArguments::List(l) = &mut func.args {
                for a in l.args.iter_mut() {
                    if let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))
                    | ast::FunctionArg::Named { arg: ast::FunctionArgExpr::Expr(x), .. } = a
                    {
                        walk_mut(x, f);
                    }
                }
            }
            if let Some(x) = func.filter.as_mut() {
                walk_mut(x, f);
            }
            // A window call's PARTITION BY and ORDER BY are expressions over the query's
            // columns too (a pulled-up subquery's references in them are replaced).
            if let Some(ast::WindowType::WindowSpec(spec)) = func.over.as_mut() {
                walk_window_spec_mut(spec, f);
            }
        }
        _ => {}
    }
    f(e);
}

/// [`walk_mut`] over a window's PARTITION BY and ORDER BY expressions.
fn walk_window_spec_mut(spec: &mut ast::WindowSpec, f: &mut impl FnMut(&mut ast::Expr)) {
    spec.partition_by.iter_mut().for_each(|x| walk_mut(x, f));
    spec.order_by.iter_mut().for_each(|o| walk_mut(&mut o.expr, f));
}

/// `reduce_outer_joins`' second rule: a LEFT JOIN whose WHERE demands `x IS NULL` for a
/// column `x` of the nullable side that the join's own condition cannot pass NULL for
/// (`find_forced_null_vars` meets `find_nonnullable_vars`) keeps only the outer rows
/// that matched nothing: an anti join. The IS NULL conditions on such columns are then
/// redundant and dropped (`check_redundant_nullability_qual`).
///
/// `jt` is the join as `reduce_outer_joins`' first rule left it; `on` and `where_` the
/// bound conditions over the join's columns (`wa`: the first relation's width). Returns
/// the join type and the positions in `where_` to drop.
pub(super) fn reduce_left_join_to_anti(
    jt: crate::plan::JoinType,
    on: &[crate::plan::Expr],
    where_: &[crate::plan::Expr],
    wa: usize,
) -> (crate::plan::JoinType, Vec<usize>) {
    use crate::plan::{Expr, JoinType};
    if jt != JoinType::Left {
        return (jt, vec![]);
    }
    let mut nonnullable = vec![];
    on.iter().for_each(|c| nonnullable_vars(c, &mut nonnullable));
    let forced: Vec<usize> = where_
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c, Expr::IsNull(x, false) if matches!(x.as_ref(), Expr::Col(v) if *v >= wa && nonnullable.contains(v))))
        .map(|(i, _)| i)
        .collect();
    if forced.is_empty() {
        (jt, forced)
    } else {
        (JoinType::Anti, forced)
    }
}

/// `find_nonnullable_vars`: the columns a condition cannot be true with NULL in (a
/// strict operator's operands; both sides of AND; nothing under OR, NOT, IS [NOT] NULL
/// or a function, which may accept NULLs).
fn nonnullable_vars(e: &crate::plan::Expr, out: &mut Vec<usize>) {
    use crate::plan::{BinOp, Expr};
    match e {
        Expr::Col(c) => out.push(*c),
        Expr::Bin(BinOp::Or, ..) => {}
        Expr::Bin(_, l, r) => {
            nonnullable_vars(l, out);
            nonnullable_vars(r, out);
        }
        _ => {}
    }
}

/// `create_unique_path` for a semi join's inner relation planned as one side of an
/// inner join (`JOIN_UNIQUE_INNER`/`JOIN_UNIQUE_OUTER`): its rows made unique on the
/// join key, its only output column, by a HashAggregate or by a Unique over a Sort,
/// whichever costs less (the sort when `enable_hashagg` is off).
///
/// Departs from PostgreSQL: the Unique's rows are estimated as its input's (the
/// sandbox's Unique is costed as a UNION's), not as the number of groups.
pub(super) fn create_unique_path(coord: &Node, input: crate::plan::Plan) -> crate::plan::Plan {
    use crate::plan::costsize::{cost_plan, CostParams};
    use crate::plan::{AggSplit, AggStrategy, Expr, Plan, SortKey};
    let key = Expr::Col(0);
    let hashed = Plan::Agg {
        child: Box::new(input.clone()),
        strategy: AggStrategy::Hashed,
        group_by: vec![key.clone()],
        aggs: vec![],
        split: AggSplit::Simple,
    };
    let sorted = Plan::Unique {
        child: Box::new(Plan::Sort { child: Box::new(input), keys: vec![SortKey { expr: key, desc: false }] }),
        ncols: 1,
    };
    let params = CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
    let total = |p: &Plan| cost_plan(p, coord, &params).first().map_or(f64::INFINITY, |e| e.total);
    if coord.setting_on("enable_hashagg", true) && total(&hashed) < total(&sorted) {
        hashed
    } else {
        sorted
    }
}

/// A semi or anti join's target list (PostgreSQL builds a join relation's target from
/// what is read above it, `build_joinrel_tlist`): a projection of the `needed` columns
/// (join numbering, in order) right above the join, which EXPLAIN folds into it, so
/// the subquery's key it joined on is not among its outputs. Returns the plan, the map
/// from join numbering to the plan's output, and the output names (None: unchanged, for
/// other joins or when everything is read above).
#[allow(clippy::type_complexity)]
pub(super) fn semi_join_target(
    (plan, map): (crate::plan::Plan, Vec<Option<usize>>),
    jt: crate::plan::JoinType,
    listed: bool,
    needed: &[usize],
    name: &dyn Fn(usize) -> String,
) -> (crate::plan::Plan, Vec<Option<usize>>, Option<Vec<String>>) {
    use crate::plan::{Expr, JoinType, Plan};
    let semi = matches!(jt, JoinType::Semi | JoinType::Anti | JoinType::UniqueInner | JoinType::UniqueOuter);
    if !semi || !listed || needed.iter().any(|&c| map.get(c).copied().flatten().is_none()) {
        return (plan, map, None);
    }
    let targets: Vec<(Expr, String)> = needed.iter().filter_map(|&c| Some((Expr::Col(map[c]?), name(c)))).collect();
    let names = targets.iter().map(|(_, n)| n.clone()).collect();
    let projected: Vec<Option<usize>> = (0..map.len()).map(|c| needed.iter().position(|&x| x == c)).collect();
    (Plan::Result { child: Box::new(plan), filter: None, targets: Some(targets) }, projected, Some(names))
}

/// The names a select list gives its outputs (an alias, or a bare column's name); an
/// item with neither names nothing.
pub(super) fn output_names(projection: &[SelectItem]) -> Vec<String> {
    projection
        .iter()
        .filter_map(|i| match i {
            SelectItem::ExprWithAlias { alias, .. } => Some(ident(alias)),
            SelectItem::UnnamedExpr(ast::Expr::Identifier(x)) => Some(ident(x)),
            _ => None,
        })
        .collect()
}
