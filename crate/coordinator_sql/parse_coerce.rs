//! A set operation's column types, resolved as PostgreSQL 15's parse analysis resolves
//! them (`transformSetOperationTree` in analyze.c with parse_coerce.c's
//! `select_common_type`), and the coercions the planner then makes
//! (`generate_setop_tlist` in prepunion.c).
//!
//! Protocol: [`resolve_set_operation`] types each leaf's select list from the query
//! text and the catalog ([`leaf_types`]: a column's declared type, a literal's, a
//! cast's, an aggregate's result type; an untyped literal or NULL is *unknown*), then
//! walks the tree bottom-up: each set operation's column type is
//! [`select_common_type`] of its two inputs'. The planner (`prepunion.rs`) then
//!
//! - rewrites an unknown literal of a leaf into a constant of the column's type
//!   ([`coerce_unknown_literals`]; PostgreSQL coerces it in place, so `select 1 union
//!   select '2'` has no coercion left and `select 1 union select 'a'` fails with
//!   integer's input error), and
//! - puts a leaf whose column has another type under a Subquery Scan that casts it
//!   (`(x)::numeric`, an implicit cast: EXPLAIN hides it at the top of the scan's
//!   Output), which PostgreSQL keeps as it is not trivial (and which makes a foreign
//!   scan under it synchronous).
//!
//! `select_common_type`'s rules over the sandbox's types: an unknown input takes the
//! other's type, two unknowns make text; the numeric category (smallint, integer,
//! bigint, numeric, double precision) resolves to the one every other converts to
//! implicitly (the widest); text only matches text; anything else is PostgreSQL's
//! error, "UNION types integer and text cannot be matched".
//!
//! Invariants: every set operation's types are resolved before any leaf is planned;
//! a nested set operation whose types differ from its parent's is refused by name
//! (PostgreSQL projects its output through a Result, not planned here), so every leaf
//! is coerced to the top's types.

use sqlparser::ast::{self, SelectItem, SetExpr};
use sqlparser::tokenizer::Location;

use super::catalog::{ident, relation_name, Node};
use super::FrontError;
use crate::plan::SqlType;

/// A leaf column's type: None for an untyped literal or NULL (PostgreSQL's `unknown`).
pub(super) type LeafType = Option<SqlType>;

/// `TYPCATEGORY_NUMERIC` (else `TYPCATEGORY_STRING` or `TYPCATEGORY_BOOLEAN`).
fn is_numeric(t: SqlType) -> bool {
    !matches!(t, SqlType::Text | SqlType::Bool)
}

/// `select_common_type` over the inputs' types, in order: `context` names the set
/// operation in the error ("UNION", "INTERSECT", "EXCEPT").
pub(super) fn select_common_type(types: &[LeafType], context: &str, at: Location) -> Result<SqlType, FrontError> {
    let mut common: Option<SqlType> = None;
    for t in types.iter().flatten() {
        match common {
            None => common = Some(*t),
            Some(c) if c == *t => {}
            Some(c) if is_numeric(c) != is_numeric(*t) => {
                return Err(FrontError::at(
                    format!("{context} types {} and {} cannot be matched", c.name(), t.name()),
                    at,
                ))
            }
            Some(c) => {
                if t.widening_rank() > c.widening_rank() {
                    common = Some(*t);
                }
            }
        }
    }
    // All unknown: text (`resolveTargetListUnknowns`' choice too).
    Ok(common.unwrap_or(SqlType::Text))
}

/// The resolved types of the whole set operation `body`, checked as PostgreSQL's parse
/// analysis checks them, with a nested operation whose types differ refused.
pub(super) fn resolve_set_operation(
    coord: &Node,
    body: &SetExpr,
    fallback: &mut dyn FnMut(&SetExpr) -> Result<Vec<SqlType>, FrontError>,
    at: Location,
) -> Result<Vec<SqlType>, FrontError> {
    let types = node_types(coord, body, fallback, at)?;
    Ok(types.into_iter().map(|t| t.unwrap_or(SqlType::Text)).collect())
}

/// A node's column types: a leaf's as written (unknowns kept), a set operation's
/// resolved from its inputs'.
fn node_types(
    coord: &Node,
    e: &SetExpr,
    fallback: &mut dyn FnMut(&SetExpr) -> Result<Vec<SqlType>, FrontError>,
    at: Location,
) -> Result<Vec<LeafType>, FrontError> {
    let SetExpr::SetOperation { op, left, right, .. } = unparenthesized(e) else {
        return leaf_types(coord, e, fallback);
    };
    let context = match op {
        ast::SetOperator::Union => "UNION",
        ast::SetOperator::Intersect => "INTERSECT",
        ast::SetOperator::Except => "EXCEPT",
    };
    let (l, r) = (node_types(coord, left, fallback, at)?, node_types(coord, right, fallback, at)?);
    if l.len() != r.len() {
        return Err(FrontError::at(format!("each {context} query must have the same number of columns"), at));
    }
    let resolved: Vec<SqlType> =
        l.iter().zip(&r).map(|(a, b)| select_common_type(&[*a, *b], context, at)).collect::<Result<_, _>>()?;
    for (child, types) in [(left, &l), (right, &r)] {
        let nested = matches!(unparenthesized(child), SetExpr::SetOperation { .. });
        if nested && types.iter().zip(&resolved).any(|(t, c)| *t != Some(*c)) {
            return Err(FrontError::unsupported(
                format!(
                    "a nested set operation whose column types {context} converts (PostgreSQL projects its output \
                     through a Result): not planned yet"
                ),
                at,
            ));
        }
    }
    Ok(resolved.into_iter().map(Some).collect())
}

/// A parenthesized part without ORDER BY / LIMIT is its body (as `prepunion.rs` reads it).
fn unparenthesized(e: &SetExpr) -> &SetExpr {
    match e {
        SetExpr::Query(q)
            if q.with.is_none()
                && q.order_by.is_none()
                && q.limit.is_none()
                && q.offset.is_none()
                && q.fetch.is_none() =>
        {
            unparenthesized(q.body.as_ref())
        }
        other => other,
    }
}

/// A leaf's output types from its text: a SELECT's items typed by [`item_type`], a
/// parenthesized query's by its body; where the text does not tell (an expression
/// of another kind), the leaf's planned columns (`fallback`).
pub(super) fn leaf_types(
    coord: &Node,
    leaf: &SetExpr,
    fallback: &mut dyn FnMut(&SetExpr) -> Result<Vec<SqlType>, FrontError>,
) -> Result<Vec<LeafType>, FrontError> {
    let select = match leaf {
        SetExpr::Select(s) => s,
        SetExpr::Query(q) => match q.body.as_ref() {
            SetExpr::Select(s) => s,
            body @ SetExpr::SetOperation { .. } => {
                let at = Location { line: 0, column: 0 };
                return Ok(resolve_set_operation(coord, body, fallback, at)?.into_iter().map(Some).collect());
            }
            _ => return Ok(fallback(leaf)?.into_iter().map(Some).collect()),
        },
        _ => return Ok(fallback(leaf)?.into_iter().map(Some).collect()),
    };
    let scope = from_columns(coord, select);
    let mut out: Vec<Option<LeafType>> = vec![];
    for item in &select.projection {
        match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => out.push(item_type(e, &scope)),
            SelectItem::Wildcard(_) => out.extend(scope.iter().map(|(_, _, t)| Some(Some(*t)))),
            SelectItem::QualifiedWildcard(name, _) => {
                let q = name.0.last().map(ident).unwrap_or_default();
                out.extend(scope.iter().filter(|(r, _, _)| *r == q).map(|(_, _, t)| Some(Some(*t))));
            }
        }
    }
    if out.iter().any(Option::is_none) {
        let planned = fallback(leaf)?;
        if planned.len() == out.len() {
            return Ok(out.into_iter().zip(planned).map(|(t, p)| t.unwrap_or(Some(p))).collect());
        }
        return Ok(planned.into_iter().map(Some).collect());
    }
    Ok(out.into_iter().flatten().collect())
}

/// The columns a SELECT's FROM brings: (the name a column is qualified by, its name,
/// its declared type), relations in order.
fn from_columns(coord: &Node, s: &ast::Select) -> Vec<(String, String, SqlType)> {
    let mut out = vec![];
    let mut add = |f: &ast::TableFactor| {
        let ast::TableFactor::Table { name, alias, args: None, .. } = f else { return };
        let Some(rel) = relation_name(name).ok().and_then(|n| coord.relation(&n)) else { return };
        let q = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_else(|| rel.name.clone());
        out.extend(rel.columns.iter().map(|c| (q.clone(), c.name.clone(), c.ty)));
    };
    for t in &s.from {
        add(&t.relation);
        t.joins.iter().for_each(|j| add(&j.relation));
    }
    out
}

/// An expression's type from its text (`exprType` after parse analysis), for the
/// forms a set operation's branch selects; None when the text does not tell (the
/// planned column's type is used), Some(None) for an untyped literal or NULL.
fn item_type(e: &ast::Expr, scope: &[(String, String, SqlType)]) -> Option<LeafType> {
    let column = |q: Option<&str>, n: &str| {
        let mut found = scope.iter().filter(|(r, c, _)| c == n && q.map_or(true, |q| q == r));
        found.next().map(|(_, _, t)| *t)
    };
    match e {
        ast::Expr::Value(ast::Value::SingleQuotedString(_) | ast::Value::Null) => Some(None),
        ast::Expr::Value(ast::Value::Number(n, _)) => Some(Some(number_type(n))),
        ast::Expr::Identifier(i) => column(None, &ident(i)).map(Some),
        ast::Expr::CompoundIdentifier(p) if p.len() == 2 => column(Some(&ident(&p[0])), &ident(&p[1])).map(Some),
        ast::Expr::Nested(x) => item_type(x, scope),
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Minus | ast::UnaryOperator::Plus, expr } => {
            item_type(expr, scope).filter(Option::is_some)
        }
        ast::Expr::Cast { data_type, .. } => cast_type(data_type).map(Some),
        ast::Expr::BinaryOp { left, op, right } => binary_type(op, item_type(left, scope)?, item_type(right, scope)?),
        ast::Expr::Function(f) => function_type(f, scope),
        _ => None,
    }
}

/// An unquoted number's type: integer, bigint past int4, numeric with a point or
/// exponent (the scanner's and `make_const`'s choice).
fn number_type(n: &str) -> SqlType {
    if n.parse::<i32>().is_ok() {
        SqlType::Int4
    } else if n.parse::<i64>().is_ok() {
        SqlType::Int8
    } else {
        SqlType::Numeric
    }
}

fn cast_type(t: &ast::DataType) -> Option<SqlType> {
    if matches!(crate::numeric_typmod::NumericTypmod::of_data_type(t), Ok(Some(_))) {
        return Some(SqlType::Numeric);
    }
    SqlType::from_ast(t, Location { line: 0, column: 0 }).ok()
}

/// Arithmetic over numbers takes the wider operand's type (an unknown operand is the
/// other's); `||` is text; anything else is left to the planned column.
fn binary_type(op: &ast::BinaryOperator, l: LeafType, r: LeafType) -> Option<LeafType> {
    use ast::BinaryOperator::*;
    match op {
        StringConcat => Some(Some(SqlType::Text)),
        Plus | Minus | Multiply | Divide | Modulo => {
            let t = match (l, r) {
                (Some(a), Some(b)) if is_numeric(a) && is_numeric(b) => {
                    // int2 arithmetic is int4's in PostgreSQL only past int2 operators;
                    // the sandbox has int2 columns nowhere it selects them.
                    if a.widening_rank() >= b.widening_rank() {
                        a
                    } else {
                        b
                    }
                }
                (Some(a), None) | (None, Some(a)) if is_numeric(a) => a,
                _ => return None,
            };
            Some(Some(t))
        }
        _ => None,
    }
}

/// The result types of the aggregates and functions a branch selects.
fn function_type(f: &ast::Function, scope: &[(String, String, SqlType)]) -> Option<LeafType> {
    let name = f.name.to_string().to_lowercase();
    let arg = match &f.args {
        ast::FunctionArguments::List(l) => match l.args.as_slice() {
            [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)), ..] => item_type(x, scope).flatten(),
            _ => None,
        },
        _ => None,
    };
    let t = match (name.as_str(), arg) {
        ("count", _) => SqlType::Int8,
        ("length", _) => SqlType::Int4,
        ("upper" | "lower" | "substr" | "substring", _) => SqlType::Text,
        ("avg", Some(SqlType::Float8)) => SqlType::Float8,
        ("avg", Some(_)) => SqlType::Numeric,
        ("sum", Some(SqlType::Int2 | SqlType::Int4)) => SqlType::Int8,
        ("sum", Some(SqlType::Int8 | SqlType::Numeric)) => SqlType::Numeric,
        ("sum" | "min" | "max", Some(t)) => t,
        _ => return None,
    };
    Some(Some(t))
}

/// Rewrites the unknown literals of a SELECT leaf whose column resolved to a type
/// other than text into a cast of the literal to that type, which the planner folds
/// into a constant (or fails on, with the type's input error), as PostgreSQL coerces
/// an UNKNOWN Const in place. An unnamed one keeps PostgreSQL's name, `?column?`.
pub(super) fn coerce_unknown_literals(leaf: &mut SetExpr, types: &[LeafType], targets: &[SqlType]) {
    let SetExpr::Select(s) = leaf else { return };
    // Only a list of plain items lines up with the types one to one.
    if s.projection.len() != types.len() {
        return;
    }
    for ((item, t), target) in s.projection.iter_mut().zip(types).zip(targets) {
        if t.is_some() || *target == SqlType::Text {
            continue;
        }
        let (expr, alias) = match item {
            SelectItem::UnnamedExpr(e) => (e.clone(), ast::Ident::with_quote('"', "?column?")),
            SelectItem::ExprWithAlias { expr, alias } => (expr.clone(), alias.clone()),
            _ => continue,
        };
        let cast = ast::Expr::Cast {
            kind: ast::CastKind::DoubleColon,
            expr: Box::new(expr),
            data_type: data_type(*target),
            format: None,
        };
        *item = SelectItem::ExprWithAlias { expr: cast, alias };
    }
}

pub(super) fn data_type(t: SqlType) -> ast::DataType {
    match t {
        SqlType::Int2 => ast::DataType::SmallInt(None),
        SqlType::Int4 => ast::DataType::Integer(None),
        SqlType::Int8 => ast::DataType::BigInt(None),
        SqlType::Numeric => ast::DataType::Numeric(ast::ExactNumberInfo::None),
        SqlType::Float8 => ast::DataType::DoublePrecision,
        SqlType::Text => ast::DataType::Text,
        SqlType::Bool => ast::DataType::Boolean,
    }
}

/// An assignment to a column of type `to` of a value of type `from` (None: a NULL or
/// an untyped literal, which become the column's type), as transformAssignedExpr
/// coerces it (`COERCION_ASSIGNMENT`): the integer types, numeric and float8 convert
/// among themselves and anything converts to text (an I/O conversion cast), nothing
/// else: a boolean and a number never do, a text only by an explicit cast.
pub fn check_assignment(column: &str, to: SqlType, from: Option<SqlType>, at: Location) -> Result<(), FrontError> {
    let Some(from) = from else { return Ok(()) };
    let number = |t: SqlType| t.is_integer() || matches!(t, SqlType::Numeric | SqlType::Float8);
    if from == to || to == SqlType::Text || (number(from) && number(to)) {
        return Ok(());
    }
    Err(FrontError::at(
        format!("column \"{column}\" is of type {} but expression is of type {}", to.name(), from.name()),
        at,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: Location = Location { line: 1, column: 1 };

    #[test]
    fn the_numeric_category_resolves_to_the_widest_type() {
        let t = |v: &[LeafType]| select_common_type(v, "UNION", AT).unwrap();
        assert_eq!(t(&[Some(SqlType::Int4), Some(SqlType::Numeric)]), SqlType::Numeric);
        assert_eq!(t(&[Some(SqlType::Int8), Some(SqlType::Int4)]), SqlType::Int8);
        assert_eq!(t(&[Some(SqlType::Float8), Some(SqlType::Numeric)]), SqlType::Float8);
        assert_eq!(t(&[None, Some(SqlType::Int4)]), SqlType::Int4);
        assert_eq!(t(&[None, None]), SqlType::Text);
        assert_eq!(t(&[Some(SqlType::Text), None]), SqlType::Text);
    }

    #[test]
    fn categories_that_differ_are_postgres_error() {
        let e = select_common_type(&[Some(SqlType::Int4), Some(SqlType::Text)], "UNION", AT).unwrap_err();
        assert!(e.to_string().contains("UNION types integer and text cannot be matched"), "{e}");
        let e = select_common_type(&[Some(SqlType::Text), None, Some(SqlType::Numeric)], "EXCEPT", AT).unwrap_err();
        assert!(e.to_string().contains("EXCEPT types text and numeric cannot be matched"), "{e}");
    }

    #[test]
    fn literals_are_typed_as_the_scanner_types_them() {
        assert_eq!(number_type("7"), SqlType::Int4);
        assert_eq!(number_type("3000000000"), SqlType::Int8);
        assert_eq!(number_type("1.5"), SqlType::Numeric);
        assert_eq!(item_type(&ast::Expr::Value(ast::Value::Null), &[]), Some(None));
    }
}
