//! `JOIN … USING (cols)` and `NATURAL JOIN`, as PostgreSQL's parser resolves them
//! (parse_clause.c: `transformFromClauseItem`, `transformJoinUsingClause`,
//! `buildMergedJoinVar`), rewritten into the `ON` form the join planner takes.
//!
//! Protocol: [`expand_join_using`] takes a query and returns it rewritten when its
//! FROM list holds a USING or NATURAL join (None otherwise):
//! - each such join's constraint becomes `ON l.c1 = r.c1 AND l.c2 = r.c2 …` in the
//!   USING list's order, the left operand the left side's column, as
//!   `transformJoinUsingClause` builds its `=` expressions;
//! - the merged column (`buildMergedJoinVar`) is the left side's column for an inner
//!   or LEFT join and the right side's for a RIGHT join, so an unqualified reference
//!   to it in the select list, WHERE, GROUP BY, HAVING and ORDER BY becomes that side's
//!   qualified column (PostgreSQL's EXPLAIN prints the merged column so qualified);
//! - `*` is expanded as `expandRTE` expands the join's columns: the merged columns
//!   first (in USING order), then the left side's others, then the right side's.
//!
//! Invariants: a FULL JOIN … USING (its merged column is `COALESCE(l.c, r.c)`) and a
//! USING join over a subquery or a function are refused by name; PostgreSQL's errors
//! for a USING column missing on a side or present twice on the left side are kept.
//! Subqueries in expressions are not looked into (a correlated reference to a
//! merged column stays as written).

use sqlparser::ast::{self, Ident, SetExpr, TableFactor};
use sqlparser::tokenizer::Location;

use super::catalog::{ident, relation_name, Node};
use super::FrontError;

/// A column as the rewritten query names it: its relation's reference name and
/// its own name.
#[derive(Clone, Debug, PartialEq)]
struct Ref {
    rel: String,
    col: String,
}

/// A FROM member: the name it is referred to by and its columns.
struct MemberCols {
    name: String,
    columns: Vec<String>,
}

/// The query with its USING and NATURAL joins written as ON joins (see the module
/// doc), or None when it has none.
pub(super) fn expand_join_using(coord: &Node, q: &ast::Query, at: Location) -> Result<Option<ast::Query>, FrontError> {
    let SetExpr::Select(s) = q.body.as_ref() else {
        return Ok(None);
    };
    let uses = |j: &ast::Join| {
        matches!(constraint(&j.join_operator), Some(ast::JoinConstraint::Using(_) | ast::JoinConstraint::Natural))
    };
    if !s.from.iter().any(|f| f.joins.iter().any(uses)) {
        return Ok(None);
    }
    let mut out = q.clone();
    let SetExpr::Select(s) = out.body.as_mut() else {
        return Ok(None);
    };
    // The query level's columns as `*` lists them, and the merged columns an
    // unqualified name resolves to.
    let mut star: Vec<Ref> = vec![];
    let mut merged: Vec<Ref> = vec![];
    for item in s.from.iter_mut() {
        let first = member_columns(coord, &item.relation, at)?;
        let mut members = vec![first];
        let mut cols: Vec<Ref> = refs(&members[0]);
        for j in item.joins.iter_mut() {
            let right = member_columns(coord, &j.relation, at)?;
            let using: Vec<String> = match constraint(&j.join_operator) {
                Some(ast::JoinConstraint::Using(names)) => names.iter().map(ident).collect(),
                // transformFromClauseItem: NATURAL is USING the left side's column
                // names that the right side has too, in the left side's order.
                Some(ast::JoinConstraint::Natural) => {
                    let mut common: Vec<String> = vec![];
                    for c in &cols {
                        if right.columns.contains(&c.col) && !common.contains(&c.col) {
                            common.push(c.col.clone());
                        }
                    }
                    common
                }
                _ => {
                    cols.extend(refs(&right));
                    members.push(right);
                    continue;
                }
            };
            let right_side = matches!(j.join_operator, ast::JoinOperator::RightOuter(_));
            if matches!(j.join_operator, ast::JoinOperator::FullOuter(_)) {
                return Err(FrontError::unsupported(
                    "FULL JOIN … USING or NATURAL FULL JOIN (the merged column is COALESCE of both sides; write ON \
                     a.x = b.x)",
                    at,
                ));
            }
            if !matches!(j.join_operator, ast::JoinOperator::Inner(_) | ast::JoinOperator::LeftOuter(_)) && !right_side
            {
                return Err(FrontError::unsupported("this kind of join with USING or NATURAL", at));
            }
            let mut conds: Vec<ast::Expr> = vec![];
            let mut merged_here: Vec<Ref> = vec![];
            for (i, c) in using.iter().enumerate() {
                if using[..i].contains(c) {
                    return Err(FrontError::at(
                        format!("column name \"{c}\" appears more than once in USING clause"),
                        at,
                    ));
                }
                let on_left: Vec<&Ref> = cols.iter().filter(|r| &r.col == c).collect();
                let left = match on_left.as_slice() {
                    [] => {
                        return Err(FrontError::at(
                            format!("column \"{c}\" specified in USING clause does not exist in left table"),
                            at,
                        ))
                    }
                    [one] => (*one).clone(),
                    _ => {
                        return Err(FrontError::at(
                            format!("common column name \"{c}\" appears more than once in left table"),
                            at,
                        ))
                    }
                };
                if !right.columns.contains(c) {
                    return Err(FrontError::at(
                        format!("column \"{c}\" specified in USING clause does not exist in right table"),
                        at,
                    ));
                }
                let right_ref = Ref { rel: right.name.clone(), col: c.clone() };
                conds.push(ast::Expr::BinaryOp {
                    left: Box::new(qualified(&left)),
                    op: ast::BinaryOperator::Eq,
                    right: Box::new(qualified(&right_ref)),
                });
                merged_here.push(if right_side { right_ref } else { left });
            }
            let on = conds.into_iter().reduce(|a, b| ast::Expr::BinaryOp {
                left: Box::new(a),
                op: ast::BinaryOperator::And,
                right: Box::new(b),
            });
            // A NATURAL join without a common column is a cross join (PostgreSQL's ON
            // is then `true`), which the join planner does not plan.
            let Some(on) = on else {
                return Err(FrontError::unsupported("NATURAL JOIN without a common column (a cross join)", at));
            };
            set_constraint(&mut j.join_operator, on);
            // expandRTE over the join: the merged columns, then each side's others.
            let mut next: Vec<Ref> = merged_here.clone();
            next.extend(cols.iter().filter(|r| !using.contains(&r.col)).cloned());
            next.extend(refs(&right).into_iter().filter(|r| !using.contains(&r.col)));
            cols = next;
            merged.retain(|m| !using.contains(&m.col));
            merged.extend(merged_here);
            members.push(right);
        }
        star.extend(cols);
    }
    // A merged column's name that another member of FROM has too is ambiguous
    // unqualified, as in PostgreSQL: left as written for the binder to refuse.
    merged.retain(|m| star.iter().filter(|r| r.col == m.col).count() == 1);
    for item in s.projection.iter_mut() {
        if let ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } = item {
            qualify_merged(e, &merged);
        }
    }
    let aliases: Vec<String> = s
        .projection
        .iter()
        .filter_map(|i| match i {
            ast::SelectItem::ExprWithAlias { alias, .. } => Some(ident(alias)),
            _ => None,
        })
        .collect();
    s.projection = s
        .projection
        .drain(..)
        .flat_map(|item| match item {
            ast::SelectItem::Wildcard(_) => {
                star.iter().map(|r| ast::SelectItem::UnnamedExpr(qualified(r))).collect::<Vec<_>>()
            }
            other => vec![other],
        })
        .collect();
    if let Some(w) = s.selection.as_mut() {
        qualify_merged(w, &merged);
    }
    if let Some(h) = s.having.as_mut() {
        qualify_merged(h, &merged);
    }
    if let ast::GroupByExpr::Expressions(list, _) = &mut s.group_by {
        for e in list.iter_mut() {
            // GROUP BY an output column's name stays (findTargetlistEntrySQL92).
            if !is_output_alias(e, &aliases) {
                qualify_merged(e, &merged);
            }
        }
    }
    if let Some(o) = out.order_by.as_mut() {
        for k in o.exprs.iter_mut() {
            if !is_output_alias(&k.expr, &aliases) {
                qualify_merged(&mut k.expr, &merged);
            }
        }
    }
    Ok(Some(out))
}

/// The join's constraint, for the joins that have one.
fn constraint(op: &ast::JoinOperator) -> Option<&ast::JoinConstraint> {
    match op {
        ast::JoinOperator::Inner(c)
        | ast::JoinOperator::LeftOuter(c)
        | ast::JoinOperator::RightOuter(c)
        | ast::JoinOperator::FullOuter(c)
        | ast::JoinOperator::Semi(c)
        | ast::JoinOperator::LeftSemi(c)
        | ast::JoinOperator::RightSemi(c)
        | ast::JoinOperator::Anti(c)
        | ast::JoinOperator::LeftAnti(c)
        | ast::JoinOperator::RightAnti(c) => Some(c),
        _ => None,
    }
}

fn set_constraint(op: &mut ast::JoinOperator, on: ast::Expr) {
    match op {
        ast::JoinOperator::Inner(c)
        | ast::JoinOperator::LeftOuter(c)
        | ast::JoinOperator::RightOuter(c)
        | ast::JoinOperator::FullOuter(c) => *c = ast::JoinConstraint::On(on),
        _ => {}
    }
}

/// A FROM member's reference name and columns: a table of the catalog (a subquery
/// or a function beside USING is refused by name).
fn member_columns(coord: &Node, f: &TableFactor, at: Location) -> Result<MemberCols, FrontError> {
    let TableFactor::Table { name, alias, args: None, .. } = f else {
        return Err(FrontError::unsupported(
            "JOIN … USING or NATURAL JOIN beside a subquery, a function or a parenthesized join",
            at,
        ));
    };
    let rel_name = relation_name(name).map_err(|m| FrontError::at(m, at))?;
    let Some(rel) = coord.relation(&rel_name) else {
        return Err(FrontError::at(format!("relation \"{rel_name}\" does not exist"), at));
    };
    if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
        return Err(FrontError::unsupported("column aliases in FROM beside JOIN … USING", at));
    }
    let name = alias.as_ref().map(|a| ident(&a.name)).unwrap_or(rel_name);
    Ok(MemberCols { name, columns: rel.columns.iter().map(|c| c.name.clone()).collect() })
}

fn refs(m: &MemberCols) -> Vec<Ref> {
    m.columns.iter().map(|c| Ref { rel: m.name.clone(), col: c.clone() }).collect()
}

/// An identifier as written for a name already folded: quoted unless it is
/// lower-case letters, digits and underscores.
fn name_ident(name: &str) -> Ident {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        Ident::new(name)
    } else {
        Ident::with_quote('"', name)
    }
}

fn qualified(r: &Ref) -> ast::Expr {
    ast::Expr::CompoundIdentifier(vec![name_ident(&r.rel), name_ident(&r.col)])
}

fn is_output_alias(e: &ast::Expr, aliases: &[String]) -> bool {
    matches!(e, ast::Expr::Identifier(i) if aliases.contains(&ident(i)))
}

/// Unqualified references to a merged column made the merged side's column.
fn qualify_merged(e: &mut ast::Expr, merged: &[Ref]) {
    super::prepjointree::walk_mut(e, &mut |x| {
        if let ast::Expr::Identifier(i) = x {
            let name = ident(i);
            if let Some(r) = merged.iter().find(|m| m.col == name) {
                *x = qualified(r);
            }
        }
    });
}
