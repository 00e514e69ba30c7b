//! Scalar expressions: sqlparser's `ast::Expr` to our `plan::Expr`.
//!
//! An expression is planned in a [`Scope`]: either over the scanned table's rows
//! (WHERE, GROUP BY, aggregate arguments, and everything in a query without
//! aggregation), or over the output of an Agg node (select list, HAVING and ORDER BY
//! of an aggregated query), where a column may only be read through a group key and
//! aggregate calls become references to the Agg's outputs.
//!
//! Invariants:
//! - A planned expression reads only columns of its scope: in `Scope::Groups` a column
//!   is read through a group key it matches, and an aggregate call becomes a column of
//!   the Agg (the same call twice is one aggregate).
//! - No aggregate in WHERE or GROUP BY, none nested in another: PostgreSQL's messages.
//! - A cast of a constant is done while planning (as PostgreSQL folds it); of anything
//!   else it is a `Func::Cast` the evaluator runs (`(val)::numeric` in remote SQL and
//!   EXPLAIN, as PostgreSQL writes an explicit cast), or left out when it does not
//!   change the type.
//! - Unquoted identifiers are folded to lower case before they are looked up.
//! - An operator's operands are coerced as `make_op` coerces them to the operator's
//!   input types, for the numeric types: an integer (or untyped literal) next to a
//!   numeric becomes a numeric, a number next to a float8 a float8, so EXPLAIN and
//!   remote SQL show the casts PostgreSQL shows (`(k)::numeric`, `'7'::numeric`).
//! - Arithmetic and `||` over constants are folded to their value (`2 * 3` is `6`), as
//!   `eval_const_expressions` folds them before PostgreSQL plans ([`fold_constant`]);
//!   one that raises (`1 / 0`) raises here, while planning, as it does there.
//! - Two integers meet at the operator of the wider type (`int4pl` for two int4s, a
//!   [`BinOp::IntNarrow`] that checks int4's range; `int48pl`, an int8's, for an int4
//!   and an int8), by [`Expr::int_type`] over the columns' declared types.
//!
//! Functions: the aggregates, and the scalar `length`, `upper`, `lower`, `substr` over
//! text, `||` (a non-text operand cast to text, as `anytextcat` does), `[NOT] [I]LIKE`
//! and the operators `~~ !~~ ~~* !~~*` they deparse to (so a shard parses the remote
//! SQL the coordinator sends), CURRENT_USER and SESSION_USER; `abs`, `round`
//! (`round(numeric)` as the inlined `round(x, 0)`, `round(integer)` a float8's);
//! CASE (searched and simple), COALESCE, NULLIF, GREATEST, LEAST, their results
//! coerced to a common type as `select_common_type` resolves it (an untyped literal
//! or NULL takes the others' type; a NULL of that type for a missing ELSE), and
//! simplified over constants as eval_const_expressions does (a constant WHEN, NULL
//! COALESCE arguments).
//!
//! Booleans are a type (`Datum::Bool`): `b = true` is `b` and `b = false` `NOT b`, as
//! eval_const_expressions simplifies them (`simplify_boolean_equality`); a boolean
//! meets only a boolean (or an untyped literal, read by `boolin`) in an operator.
//!
//! Where it departs from PostgreSQL (`transformExpr` in parse_expr.c,
//! `parseCheckAggregates` in parse_agg.c): no operator or
//! function lookup by type beyond that coercion (one evaluator, `plan::Expr::eval`,
//! decides int8, numeric or float8 arithmetic by the values), and `BETWEEN` becomes
//! an AND of comparisons. A column of unknown integer type (a built-in scenario's) is
//! an int8. `IN (list)` is analysed as `transformAExprIn` does it (the
//! items without columns one `x = ANY (array)`, `Func::ScalarArrayOp`), except that
//! an integer column's width is not known here: its array is `integer[]` unless a
//! constant needs `bigint[]` (the coordinator widens it for a bigint column,
//! `Expr::widen_saop_to_columns`).

use sqlparser::ast::{
    self, BinaryOperator, CastKind, DataType, DuplicateTreatment, Function, FunctionArg, FunctionArgExpr,
    FunctionArguments, Ident, UnaryOperator, Value,
};

use super::node_span::NodeSpan;
use super::source::Source;
use super::{ident_name, SqlError};
use crate::numeric::{Numeric, NumericError};
use crate::plan::eval::{cast, EvalError};
use crate::plan::{AggCall, AggFunc, BinOp, BoolTestType, Expr, Func, SqlType};
use crate::types::{ColType, Column, Datum};

/// The single table a shard query reads, as named in its FROM clause.
pub(super) struct Relation {
    pub table: String,
    pub alias: Option<String>,
    pub columns: Vec<Column>,
    /// For the coordinator's joins: the relations joined, whose columns follow one
    /// another in `columns`. Empty for a single table.
    pub members: Vec<Member>,
}

/// One relation of a join: the name it is referred to by (its alias, else its table
/// name), its table, and where its columns start in the join's columns.
#[derive(Clone, Debug)]
pub struct Member {
    pub name: String,
    pub table: String,
    pub start: usize,
    pub len: usize,
}

impl Member {
    fn is_named(&self, qualifier: &[Ident]) -> bool {
        let names: Vec<String> = qualifier.iter().map(ident_name).collect();
        match names.as_slice() {
            [one] => *one == self.name,
            [schema, table] => schema == "public" && *table == self.table && self.name == self.table,
            _ => false,
        }
    }
}

impl Relation {
    /// Index of an unqualified column name. Folded names match exactly; an unquoted
    /// name also matches case-insensitively when that is unambiguous, which forgives
    /// catalogs created with upper-case column names.
    pub fn column_index(&self, ident: &Ident) -> Option<usize> {
        let name = ident_name(ident);
        if let Some(i) = self.columns.iter().position(|c| c.name == name) {
            return Some(i);
        }
        if ident.quote_style.is_some() {
            return None;
        }
        let mut matches = self.columns.iter().enumerate().filter(|(_, c)| c.name.eq_ignore_ascii_case(&name));
        match (matches.next(), matches.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        }
    }

    /// The column `qualifier.name` refers to, for a join (`members` not empty): an
    /// unqualified name must be one member's only.
    fn member_column(&self, qualifier: &[Ident], name: &Ident) -> Result<Option<usize>, String> {
        let col = ident_name(name);
        let in_member =
            |m: &Member| self.columns[m.start..m.start + m.len].iter().position(|c| c.name == col).map(|i| m.start + i);
        if !qualifier.is_empty() {
            let Some(m) = self.members.iter().find(|m| m.is_named(qualifier)) else {
                let table = qualifier.iter().map(ident_name).collect::<Vec<_>>().join(".");
                return Err(format!("missing FROM-clause entry for table \"{table}\""));
            };
            return Ok(in_member(m));
        }
        let found: Vec<usize> = self.members.iter().filter_map(in_member).collect();
        match found.as_slice() {
            [] => Ok(None),
            [i] => Ok(Some(*i)),
            _ => Err(format!("column reference \"{col}\" is ambiguous")),
        }
    }

    /// The member `qualifier` names (for `t.*`), if this is a join.
    pub fn member(&self, qualifier: &[Ident]) -> Option<&Member> {
        self.members.iter().find(|m| m.is_named(qualifier))
    }

    /// Whether `qualifier` (the parts before the column name) names this relation.
    /// With an alias, PostgreSQL only accepts the alias.
    pub fn is_named(&self, qualifier: &[Ident]) -> bool {
        let names: Vec<String> = qualifier.iter().map(ident_name).collect();
        match (names.as_slice(), &self.alias) {
            ([one], Some(alias)) => one == alias,
            ([one], None) => *one == self.table,
            ([schema, table], None) => schema == "public" && *table == self.table,
            _ => false,
        }
    }
}

/// Group keys and aggregate calls of the Agg node being planned. Expressions above
/// the Agg read its output: the keys first, then the aggregates.
pub(super) struct Grouping {
    pub keys: Vec<Expr>,
    pub aggs: Vec<AggCall>,
}

impl Grouping {
    /// Output columns of the Agg (as `Plan::output_columns` computes them).
    fn output_columns(&self, input: &[Column]) -> Vec<Column> {
        let keys = self.keys.iter().map(|k| k.output_column("?column?", input));
        let aggs = self.aggs.iter().map(|a| a.output_column(input));
        keys.chain(aggs).collect()
    }

    /// Output column of `call`, adding it to the Agg's aggregates if it is new.
    fn agg_column(&mut self, call: AggCall) -> usize {
        let j = match self.aggs.iter().position(|a| *a == call) {
            Some(j) => j,
            None => {
                self.aggs.push(call);
                self.aggs.len() - 1
            }
        };
        self.keys.len() + j
    }
}

/// What the columns of a planned expression refer to.
pub(super) enum Scope<'g> {
    /// Rows of the table. Aggregates are not allowed; `no_agg` is the error message
    /// (e.g. "aggregate functions are not allowed in WHERE").
    Rows { no_agg: &'static str },
    /// Rows of the Agg node being planned.
    Groups(&'g mut Grouping),
}

pub(super) const NO_AGG_IN_WHERE: &str = "aggregate functions are not allowed in WHERE";
pub(super) const NO_AGG_IN_GROUP_BY: &str = "aggregate functions are not allowed in GROUP BY";

/// The tail of PostgreSQL's error for a column read above an Agg that is not one of
/// its keys (`check_ungrouped_columns`).
const NOT_GROUPED: &str = " must appear in the GROUP BY clause or be used in an aggregate function";

/// A correlated SubPlan's argument (an outer column its subquery reads) that is not
/// grouped in the outer query: PostgreSQL words it from the subquery's side
/// (`check_ungrouped_columns_walker` on an outer Var), not as a column of the outer
/// select list would be.
fn ungrouped_outer_reference(e: SqlError) -> SqlError {
    match e.message.strip_suffix(NOT_GROUPED).and_then(|m| m.strip_prefix("column ")) {
        Some(column) => SqlError::new(format!("subquery uses ungrouped column {column} from outer query"), e.position),
        None => e,
    }
}
const NO_NESTED_AGG: &str = "aggregate function calls cannot contain aggregate function calls";

/// Plans expressions over one relation; `src` locates errors.
pub(super) struct ExprPlanner<'a> {
    pub src: &'a Source<'a>,
    pub rel: &'a Relation,
}

impl ExprPlanner<'_> {
    pub fn plan(&self, e: &ast::Expr, scope: &mut Scope) -> Result<Expr, SqlError> {
        if let Scope::Groups(g) = scope {
            // A whole expression that is a group key (`a + 1` with `GROUP BY a + 1`)
            // is read from the Agg's output rather than recomputed from its parts.
            if let Some(k) = self.as_group_key(e, g) {
                return Ok(Expr::Col(k));
            }
        }
        // An operator chain (`a + 1 + 1 …`, `x AND y AND …`) recurses through here once
        // per operator: kept apart from the big match below, whose frame in a debug
        // build holds every arm's temporaries (~8 KB), so the deepest chain the
        // coordinator's bound lets through fits the page's 1 MiB stack natively too
        // (tests/suite/sql_bounds.rs).
        match e {
            ast::Expr::BinaryOp { left, op, right } => self.binary(left, op, right, scope),
            ast::Expr::Nested(inner) => self.plan(inner, scope),
            _ => self.plan_node(e, scope),
        }
    }

    /// A WHERE, HAVING or JOIN/ON condition (`clause`, as PostgreSQL's message names
    /// it): planned, and refused unless it is a boolean (`coerce_to_boolean`). A NULL
    /// is accepted, and a quoted literal is read as a boolean (`'t'`), as PostgreSQL
    /// reads an untyped literal (the sandbox cannot tell `'t'` from `'t'::text` here).
    pub fn plan_condition(&self, e: &ast::Expr, scope: &mut Scope, clause: &str) -> Result<Expr, SqlError> {
        let planned = self.plan(e, scope)?;
        self.as_boolean(planned, scope, clause, self.position(e))
    }

    /// `coerce_to_boolean` of a planned operand of `clause` (WHERE, AND, NOT, …): a
    /// boolean or a NULL as it is, a quoted literal read by `boolin` (`'t'`), anything
    /// else refused with PostgreSQL's message.
    fn as_boolean(
        &self,
        planned: Expr,
        scope: &Scope,
        clause: &str,
        position: Option<usize>,
    ) -> Result<Expr, SqlError> {
        if let Expr::Const(Datum::Text(t)) = &planned {
            return match crate::types::parse_bool(t) {
                Some(b) => Ok(Expr::Const(Datum::Bool(b))),
                None => Err(SqlError::new(format!("invalid input syntax for type boolean: \"{t}\""), position)),
            };
        }
        let ty = match self.type_of(&planned, scope) {
            ColType::Bool => return Ok(planned),
            _ if matches!(planned, Expr::Const(Datum::Null)) => return Ok(planned),
            ColType::Int => self.int_type_of(&planned, scope).unwrap_or(SqlType::Int4).name(),
            ColType::Float => SqlType::Float8.name(),
            ColType::Numeric => SqlType::Numeric.name(),
            ColType::Text => SqlType::Text.name(),
        };
        Err(SqlError::new(format!("argument of {clause} must be type boolean, not type {ty}"), position))
    }

    /// Every expression but an operator or parentheses (`plan`).
    fn plan_node(&self, e: &ast::Expr, scope: &mut Scope) -> Result<Expr, SqlError> {
        let position = self.position(e);
        match e {
            ast::Expr::Identifier(ident) => self.column_ref(std::slice::from_ref(ident), scope),
            ast::Expr::CompoundIdentifier(parts) => self.column_ref(parts, scope),
            ast::Expr::Value(Value::Placeholder(p)) if crate::plan::init_plan_ref(p).is_some() => {
                let (n, t) = crate::plan::init_plan_ref(p).expect("checked");
                Ok(Expr::ExecParam(n, t))
            }
            ast::Expr::Value(v) => Ok(Expr::Const(literal(v, position)?)),
            ast::Expr::Nested(inner) => self.plan(inner, scope),
            ast::Expr::IsNull(inner) => Ok(Expr::IsNull(Box::new(self.plan(inner, scope)?), false)),
            ast::Expr::IsNotNull(inner) => Ok(Expr::IsNull(Box::new(self.plan(inner, scope)?), true)),
            ast::Expr::IsTrue(x) => self.boolean_test(x, BoolTestType::IsTrue, scope),
            ast::Expr::IsNotTrue(x) => self.boolean_test(x, BoolTestType::IsNotTrue, scope),
            ast::Expr::IsFalse(x) => self.boolean_test(x, BoolTestType::IsFalse, scope),
            ast::Expr::IsNotFalse(x) => self.boolean_test(x, BoolTestType::IsNotFalse, scope),
            ast::Expr::IsUnknown(x) => self.boolean_test(x, BoolTestType::IsUnknown, scope),
            ast::Expr::IsNotUnknown(x) => self.boolean_test(x, BoolTestType::IsNotUnknown, scope),
            ast::Expr::UnaryOp { op, expr } => self.unary(*op, expr, scope),
            ast::Expr::BinaryOp { left, op, right } => self.binary(left, op, right, scope),
            ast::Expr::Between { expr, negated, low, high } => {
                // x BETWEEN lo AND hi  ==>  x >= lo AND x <= hi
                let x = self.plan(expr, scope)?;
                let lo = self.operator(BinOp::GtEq, x.clone(), self.plan(low, scope)?, scope, position)?;
                let hi = self.operator(BinOp::LtEq, x, self.plan(high, scope)?, scope, position)?;
                Ok(negate_if(*negated, Expr::bin(BinOp::And, lo, hi)))
            }
            ast::Expr::InList { expr, list, negated } => self.in_list(expr, list, *negated, scope, position),
            ast::Expr::AnyOp { left, compare_op, right, .. } => {
                self.array_op(left, compare_op, right, true, scope, position)
            }
            ast::Expr::AllOp { left, compare_op, right } => {
                self.array_op(left, compare_op, right, false, scope, position)
            }
            ast::Expr::Cast { kind: CastKind::Cast | CastKind::DoubleColon, expr, data_type, format: None } => {
                self.cast(expr, data_type, scope)
            }
            ast::Expr::Function(f) => self.function(f, scope),
            ast::Expr::Case { operand, conditions, results, else_result } => {
                self.case(operand.as_deref(), conditions, results, else_result.as_deref(), scope, position)
            }
            ast::Expr::Like { negated, any: false, expr, pattern, escape_char: None } => {
                self.like(expr, pattern, *negated, false, scope)
            }
            ast::Expr::ILike { negated, any: false, expr, pattern, escape_char: None } => {
                self.like(expr, pattern, *negated, true, scope)
            }
            ast::Expr::Like { escape_char: Some(_), .. } | ast::Expr::ILike { escape_char: Some(_), .. } => {
                Err(SqlError::unsupported("LIKE … ESCAPE", position))
            }
            other => Err(SqlError::unsupported(construct_name(other), position)),
        }
    }

    /// `x IS [NOT] TRUE | FALSE | UNKNOWN` (`transformBooleanTest`): its operand
    /// coerced to boolean, with PostgreSQL's message naming the test; over a constant
    /// folded to its value, as eval_const_expressions folds a BooleanTest.
    fn boolean_test(&self, operand: &ast::Expr, test: BoolTestType, scope: &mut Scope) -> Result<Expr, SqlError> {
        let x = self.plan(operand, scope)?;
        let x = self.as_boolean(x, scope, test.sql(), self.position(operand))?;
        Ok(match x {
            Expr::Const(Datum::Bool(b)) => Expr::Const(Datum::Bool(test.test(Some(b)))),
            Expr::Const(Datum::Null) => Expr::Const(Datum::Bool(test.test(None))),
            x => Expr::func(Func::BoolTest(test), vec![x]),
        })
    }

    /// `x [NOT] IN (a, b, …)` as `transformAExprIn` (parse_expr.c) analyses it: the
    /// items that read no column, when there are two or more, make one
    /// `x = ANY (array)` (`x <> ALL (array)` for NOT IN) of their common type; each
    /// other item (one reading a column, or the lone item) is its own `x = item`
    /// (`x <> item`), ORed (ANDed) after it, in the order written.
    fn in_list(
        &self,
        expr: &ast::Expr,
        list: &[ast::Expr],
        negated: bool,
        scope: &mut Scope,
        position: Option<usize>,
    ) -> Result<Expr, SqlError> {
        let x = self.plan(expr, scope)?;
        let mut items = Vec::with_capacity(list.len());
        for item in list {
            items.push(self.plan(item, scope)?);
        }
        if items.is_empty() {
            return Err(SqlError::new("syntax error: empty IN list", position));
        }
        let (op, combine) = if negated { (BinOp::NotEq, BinOp::And) } else { (BinOp::Eq, BinOp::Or) };
        let mut result = None;
        if items.iter().filter(|e| !reads_column(e)).count() > 1 {
            let (vars, nonvars): (Vec<Expr>, Vec<Expr>) = items.into_iter().partition(reads_column);
            result = Some(self.scalar_array_op(op, !negated, x.clone(), nonvars, None, scope, position)?);
            items = vars;
        }
        for item in items {
            let cmp = self.operator(op, x.clone(), item, scope, position)?;
            result = Some(match result {
                None => cmp,
                Some(prev) => Expr::bin(combine, prev, cmp),
            });
        }
        result.ok_or_else(|| SqlError::new("syntax error: empty IN list", position))
    }

    /// `x op ANY (array)` / `x op ALL (array)` written out, as postgres_fdw sends an IN
    /// list (`id = ANY ('{5,6}'::integer[])`, `id = ANY (ARRAY[$1::integer,
    /// $2::integer])`): the array is a string literal cast to an array type, or an
    /// `ARRAY[…]` constructor. A subquery here was the coordinator's to plan.
    fn array_op(
        &self,
        left: &ast::Expr,
        compare_op: &BinaryOperator,
        right: &ast::Expr,
        use_or: bool,
        scope: &mut Scope,
        position: Option<usize>,
    ) -> Result<Expr, SqlError> {
        let op = bin_op(compare_op).filter(|o| o.is_comparison());
        let Some(op) = op else {
            return Err(SqlError::unsupported(format!("operator {compare_op} with ANY/ALL"), position));
        };
        let mut right = right;
        while let ast::Expr::Nested(inner) = right {
            right = inner;
        }
        let x = self.plan(left, scope)?;
        match right {
            ast::Expr::Cast {
                kind: CastKind::Cast | CastKind::DoubleColon,
                expr,
                data_type: DataType::Array(ast::ArrayElemTypeDef::SquareBracket(elem_type, None)),
                format: None,
            } => {
                let at = self.position(expr).or_else(|| self.position(right)).or(position);
                let Some(elem) = cast_target(elem_type) else {
                    let elem = crate::coordinator_sql::statement::type_name(elem_type);
                    return Err(SqlError::unsupported(format!("an array of {elem}"), at));
                };
                let ast::Expr::Value(Value::SingleQuotedString(text) | Value::EscapedStringLiteral(text)) =
                    expr.as_ref()
                else {
                    return Err(SqlError::unsupported("this kind of array", at));
                };
                let items = parse_array_literal(text).map_err(|m| SqlError::new(m, at))?;
                let mut elems = Vec::with_capacity(items.len());
                for item in items {
                    let d = item.map_or(Datum::Null, |t| Datum::text(&t));
                    elems.push(Expr::Const(convert_const(&d, elem, at)?));
                }
                self.scalar_array_op(op, use_or, x, elems, Some(elem), scope, position)
            }
            ast::Expr::Array(array) => {
                let mut elems = Vec::with_capacity(array.elem.len());
                for e in &array.elem {
                    elems.push(self.plan(e, scope)?);
                }
                if elems.is_empty() {
                    return Err(SqlError::new("cannot determine type of empty array", position));
                }
                self.scalar_array_op(op, use_or, x, elems, None, scope, position)
            }
            ast::Expr::Subquery(_) => Err(SqlError::unsupported("subqueries", position)),
            _ => Err(SqlError::unsupported("ANY/ALL over this kind of array", position)),
        }
    }

    /// A [`Func::ScalarArrayOp`] of `x` and `elems`: the elements' type is `declared`
    /// (an array literal's cast) or their common type with `x` (`select_common_type`,
    /// `x` first: an untyped literal or NULL takes the others' type, an integer meets
    /// a numeric as a numeric, anything a float8 as a float8); each element is
    /// converted to it (a constant now) and `x` cast to it when its category differs
    /// (`(id)::numeric = ANY ('{1.5,2}'::numeric[])`), as `make_scalar_array_op`
    /// finds the operator.
    #[allow(clippy::too_many_arguments)]
    fn scalar_array_op(
        &self,
        op: BinOp,
        use_or: bool,
        x: Expr,
        elems: Vec<Expr>,
        declared: Option<SqlType>,
        scope: &Scope,
        position: Option<usize>,
    ) -> Result<Expr, SqlError> {
        let xt = self.type_of(&x, scope);
        let elem = match declared {
            Some(t) => t,
            None => self.common_elem_type(&x, xt, &elems, scope, position)?,
        };
        let target = elem.col_type();
        let x = match &x {
            Expr::Const(d) => Expr::Const(convert_const(d, elem, position)?),
            _ if xt == target || target == ColType::Int || target == ColType::Text => x,
            _ => coerce(x, xt, target, position)?,
        };
        let mut args = Vec::with_capacity(elems.len() + 1);
        args.push(x);
        for e in elems {
            args.push(match e {
                Expr::Const(d) => Expr::Const(convert_const(&d, elem, position)?),
                other => {
                    let t = self.type_of(&other, scope);
                    coerce(other, t, target, position)?
                }
            });
        }
        Ok(Expr::func(Func::ScalarArrayOp { op, use_or, elem }, args))
    }

    /// `select_common_type` over `x` (of category `xt`) and `elems`: text with text
    /// (an untyped literal is text), else the widest number. An integer `x` is taken
    /// as int4 (a column's integer width is not known here); an integer constant past
    /// int4, or a bigint parameter, makes the type bigint.
    fn common_elem_type(
        &self,
        x: &Expr,
        xt: ColType,
        elems: &[Expr],
        scope: &Scope,
        position: Option<usize>,
    ) -> Result<SqlType, SqlError> {
        let sql_of = |e: &Expr| -> Option<SqlType> {
            match e {
                Expr::Const(Datum::Null) => None,
                Expr::Const(Datum::Text(_)) => None,
                Expr::Const(Datum::Int(v)) => {
                    Some(if i32::try_from(*v).is_ok() { SqlType::Int4 } else { SqlType::Int8 })
                }
                Expr::Const(Datum::Numeric(_)) => Some(SqlType::Numeric),
                Expr::Const(Datum::Float(_)) => Some(SqlType::Float8),
                Expr::Const(Datum::Bool(_)) => Some(SqlType::Bool),
                Expr::Param(_, t, _) | Expr::ExecParam(_, t) => Some(*t),
                Expr::Func(Func::Cast { to, .. }, _) => Some(*to),
                other => Some(match self.type_of(other, scope) {
                    ColType::Int => SqlType::Int4,
                    ColType::Numeric => SqlType::Numeric,
                    ColType::Float => SqlType::Float8,
                    ColType::Text => SqlType::Text,
                    ColType::Bool => SqlType::Bool,
                }),
            }
        };
        // An untyped literal next to text is text; NULLs alone are text too.
        let x_type = match x {
            Expr::Const(Datum::Text(_)) => Some(SqlType::Text),
            _ => sql_of(x),
        };
        let x_type = x_type.or(if xt == ColType::Text { Some(SqlType::Text) } else { None });
        let mut types: Vec<SqlType> = x_type.into_iter().collect();
        types.extend(elems.iter().filter_map(sql_of));
        let Some(&first) = types.first() else { return Ok(SqlType::Text) };
        if first == SqlType::Text || types.contains(&SqlType::Text) {
            if let Some(other) = types.iter().find(|t| **t != SqlType::Text) {
                let (a, b) = if first == SqlType::Text { (first, *other) } else { (first, SqlType::Text) };
                return Err(SqlError::new(
                    format!("IN types {} and {} cannot be matched", a.name(), b.name()),
                    position,
                ));
            }
            return Ok(SqlType::Text);
        }
        if types.contains(&SqlType::Bool) {
            if let Some(other) = types.iter().find(|t| **t != SqlType::Bool) {
                let (a, b) = if first == SqlType::Bool { (first, *other) } else { (first, SqlType::Bool) };
                return Err(SqlError::new(
                    format!("IN types {} and {} cannot be matched", a.name(), b.name()),
                    position,
                ));
            }
            return Ok(SqlType::Bool);
        }
        let rank = |t: &SqlType| match t {
            SqlType::Int2 => 0,
            SqlType::Int4 => 1,
            SqlType::Int8 => 2,
            SqlType::Numeric => 3,
            _ => 4,
        };
        Ok(types.into_iter().max_by_key(rank).unwrap_or(SqlType::Int4))
    }

    /// Output column of the Agg that `e` (an aggregate-free expression) is a key of.
    fn as_group_key(&self, e: &ast::Expr, g: &Grouping) -> Option<usize> {
        if contains_aggregate(e) {
            return None;
        }
        let x = self.plan(e, &mut Scope::Rows { no_agg: NO_AGG_IN_GROUP_BY }).ok()?;
        g.keys.iter().position(|k| *k == x)
    }

    /// Position of an expression's first token, when sqlparser knows it.
    fn position(&self, e: &ast::Expr) -> Option<usize> {
        self.src.span_position(e.node_span())
    }

    /// A column reference written as `parts` (`a`, `t.a` or `public.t.a`).
    fn column_ref(&self, parts: &[Ident], scope: &mut Scope) -> Result<Expr, SqlError> {
        let written = parts.iter().map(ident_name).collect::<Vec<_>>().join(".");
        let position = parts.first().and_then(|p| self.src.span_position(p.span));
        let (qualifier, name) = parts.split_at(parts.len() - 1);
        if !self.rel.members.is_empty() {
            return match self.rel.member_column(qualifier, &name[0]) {
                Ok(Some(i)) => self.input_column(i, &written, position, scope),
                Ok(None) if qualifier.is_empty() => {
                    Err(SqlError::new(format!("column \"{written}\" does not exist"), position))
                }
                Ok(None) => Err(SqlError::new(format!("column {written} does not exist"), position)),
                Err(m) => Err(SqlError::new(m, position)),
            };
        }
        if !qualifier.is_empty() && !self.rel.is_named(qualifier) {
            let table = qualifier.iter().map(ident_name).collect::<Vec<_>>().join(".");
            return Err(SqlError::new(format!("missing FROM-clause entry for table \"{table}\""), position));
        }
        let Some(i) = self.rel.column_index(&name[0]) else {
            // PostgreSQL quotes an unqualified name but not a qualified one.
            let message = if qualifier.is_empty() {
                format!("column \"{written}\" does not exist")
            } else {
                format!("column {written} does not exist")
            };
            return Err(SqlError::new(message, position));
        };
        self.input_column(i, &written, position, scope)
    }

    /// Reads input column `i` in `scope`; `written` names it for errors.
    pub fn input_column(
        &self,
        i: usize,
        written: &str,
        position: Option<usize>,
        scope: &mut Scope,
    ) -> Result<Expr, SqlError> {
        match scope {
            Scope::Rows { .. } => Ok(Expr::Col(i)),
            Scope::Groups(g) => match g.keys.iter().position(|k| *k == Expr::Col(i)) {
                Some(k) => Ok(Expr::Col(k)),
                None => Err(SqlError::new(format!("column \"{written}\"{NOT_GROUPED}"), position)),
            },
        }
    }

    fn unary(&self, op: UnaryOperator, operand: &ast::Expr, scope: &mut Scope) -> Result<Expr, SqlError> {
        match op {
            UnaryOperator::Not => {
                let x = self.plan(operand, scope)?;
                Ok(negate_clause(self.as_boolean(x, scope, "NOT", self.position(operand))?))
            }
            UnaryOperator::Plus => self.plan(operand, scope),
            UnaryOperator::Minus => {
                // Fold `-literal` so that i64::MIN is representable and plans stay small.
                if let ast::Expr::Value(Value::Number(digits, _)) = operand {
                    return Ok(Expr::Const(number(&format!("-{digits}"), self.position(operand))?));
                }
                let x = self.plan(operand, scope)?;
                // The prefix operator `-` of the operand's type: int4um and int2um check
                // their own type's range, int8um, float8um and numeric_uminus are
                // `Func::Neg`; EXPLAIN and deparse.c write it `(- x)`.
                let func = match self.type_of(&x, scope) {
                    ColType::Int => match self.int_type_of(&x, scope) {
                        Some(t @ (SqlType::Int2 | SqlType::Int4)) => Func::IntNarrowNeg(t),
                        _ => Func::Neg,
                    },
                    ColType::Float | ColType::Numeric => Func::Neg,
                    ColType::Text if matches!(x, Expr::Const(Datum::Text(_))) => {
                        return Err(SqlError::new("operator is not unique: - unknown", self.position(operand)))
                    }
                    ColType::Text => {
                        return Err(SqlError::new("operator does not exist: - text", self.position(operand)))
                    }
                    ColType::Bool => {
                        return Err(SqlError::new("operator does not exist: - boolean", self.position(operand)))
                    }
                };
                fold_constant(Expr::func(func, vec![x]))
            }
            other => Err(SqlError::unsupported(format!("operator {other}"), self.position(operand))),
        }
    }

    fn binary(
        &self,
        left: &ast::Expr,
        op: &BinaryOperator,
        right: &ast::Expr,
        scope: &mut Scope,
    ) -> Result<Expr, SqlError> {
        // The common operators in a small frame (as `plan`'s operator chain), the
        // others (LIKE, ||, user operators, the unsupported) apart.
        let Some(bop) = bin_op(op) else { return self.binary_special(left, op, right, scope) };
        let l = self.plan(left, scope)?;
        let r = if matches!(bop, BinOp::And | BinOp::Or) && decided_by_constant(&l, bop == BinOp::And) {
            quietly(|| self.plan(right, scope))?
        } else {
            self.plan(right, scope)?
        };
        self.operator(bop, l, r, scope, self.position(right))
    }

    /// `binary` for the operators `bin_op` does not map.
    fn binary_special(
        &self,
        left: &ast::Expr,
        op: &BinaryOperator,
        right: &ast::Expr,
        scope: &mut Scope,
    ) -> Result<Expr, SqlError> {
        let like = |negated, ilike| (negated, ilike);
        let like_op = match op {
            BinaryOperator::PGLikeMatch => Some(like(false, false)),
            BinaryOperator::PGNotLikeMatch => Some(like(true, false)),
            BinaryOperator::PGILikeMatch => Some(like(false, true)),
            BinaryOperator::PGNotILikeMatch => Some(like(true, true)),
            _ => None,
        };
        if let Some((negated, ilike)) = like_op {
            return self.like(left, right, negated, ilike, scope);
        }
        if *op == BinaryOperator::StringConcat {
            let args = vec![self.as_text(left, scope)?, self.as_text(right, scope)?];
            return fold_constant(Expr::func(Func::TextCat, args));
        }
        if matches!(op, BinaryOperator::Custom(_) | BinaryOperator::PGCustomBinaryOperator(_)) {
            // A user-defined operator (`===`; `super::inline`).
            let position = self.src.next_token_position(left.node_span().end).or_else(|| self.position(left));
            let (l, r) = (self.plan(left, scope)?, self.plan(right, scope)?);
            let types = (self.type_of(&l, scope), self.type_of(&r, scope));
            return self.user_operator(op, (l, r), types, position);
        }
        // Point at the operator itself: the first token after the left operand.
        let position = self.src.next_token_position(left.node_span().end).or_else(|| self.position(left));
        Err(SqlError::unsupported(format!("operator {op}"), position))
    }

    /// An operator with its operands coerced to the type it takes, as PostgreSQL's
    /// `make_op` coerces them: an integer or an untyped literal next to a numeric
    /// becomes a numeric, anything next to a float8 a float8 (`(k)::numeric`; a
    /// constant converted now, `'7'::numeric`). Integers and texts are left as they are.
    fn operator(&self, op: BinOp, l: Expr, r: Expr, scope: &Scope, position: Option<usize>) -> Result<Expr, SqlError> {
        if matches!(op, BinOp::And | BinOp::Or) {
            let clause = op.sql();
            let (l, r) = (self.as_boolean(l, scope, clause, position)?, self.as_boolean(r, scope, clause, position)?);
            return Ok(Expr::bin(op, l, r));
        }
        let groups;
        let columns = match scope {
            Scope::Rows { .. } => &self.rel.columns,
            Scope::Groups(g) => {
                groups = g.output_columns(&self.rel.columns);
                &groups
            }
        };
        let types = (l.col_type(columns), r.col_type(columns));
        if types.0 == ColType::Bool || types.1 == ColType::Bool {
            return bool_operator(op, l, r, types, position);
        }
        let target = match types {
            (ColType::Float, _) | (_, ColType::Float) => ColType::Float,
            (ColType::Numeric, _) | (_, ColType::Numeric) => ColType::Numeric,
            // Two integers: the operator of the wider type (int4pl for two int4s,
            // int48pl, an int8 result, for an int4 and an int8).
            (ColType::Int, ColType::Int) => {
                let int = |e: &Expr| e.int_type(columns).unwrap_or(SqlType::Int8);
                let result = wider_int(int(&l), int(&r));
                return fold_constant(Expr::bin(op.with_int_result(result), l, r));
            }
            _ => return fold_constant(Expr::bin(op, l, r)),
        };
        let l = coerce(l, types.0, target, position)?;
        fold_constant(Expr::bin(op, l, coerce(r, types.1, target, position)?))
    }

    /// `x::type` / `CAST(x AS type)`: constants are converted now; other expressions
    /// by the evaluator's cast, unless it does not change their type.
    fn cast(&self, inner: &ast::Expr, data_type: &DataType, scope: &mut Scope) -> Result<Expr, SqlError> {
        let position = self.position(inner);
        if let Some(typmod) = numeric_typmod(data_type, position)? {
            return self.cast_numeric_typmod(inner, typmod, scope);
        }
        let Some(to) = cast_target(data_type) else {
            return Err(SqlError::unsupported(
                format!("cast to {}", crate::coordinator_sql::statement::type_name(data_type)),
                position,
            ));
        };
        // `$n::type`: a parameter whose value comes with each execution (a generic
        // plan's, or postgres_fdw's remote parameter, bound by the DECLARE's Bind).
        if let ast::Expr::Value(Value::Placeholder(p)) = inner {
            let n = p.strip_prefix('$').and_then(|n| n.parse::<u16>().ok()).filter(|n| *n >= 1);
            let ty = SqlType::from_ast(data_type, sqlparser::tokenizer::Location { line: 0, column: 0 }).ok();
            return match (n, ty) {
                (Some(n), Some(ty)) => Ok(Expr::Param(n, ty, None)),
                _ => Err(SqlError::unsupported(format!("parameter {p}"), position)),
            };
        }
        let target = to.col_type();
        let x = self.plan(inner, scope)?;
        // A NULL keeps its type (a Const of that type, which EXPLAIN and deparse.c
        // print `NULL::bigint`, and whose width is the type's).
        if let Expr::Const(Datum::Null) = &x {
            return Ok(Expr::func(Func::Cast { from: None, to, implicit: false }, vec![x]));
        }
        if let Some(d) = const_value(&x).filter(|d| !d.is_null()) {
            return Ok(typed_const(convert_const(d, to, position)?, to));
        }
        let from = match scope {
            Scope::Rows { .. } => x.col_type(&self.rel.columns),
            Scope::Groups(g) => x.col_type(&g.output_columns(&self.rel.columns)),
        };
        // A cast between integers is one when the types differ (`int84`, which checks
        // int4's range; `int48`, after which `*` is int8's); PostgreSQL drops a cast
        // to the type the expression has (`int4col::int4`), as it drops `x::text` of
        // a text.
        let from = match from {
            ColType::Int if to.is_integer() => match self.int_type_of(&x, scope) {
                Some(from) if from != to => from,
                // The same type, or one not known (a column of a built-in scenario's
                // table): no cast, as before types were known.
                _ => return Ok(x),
            },
            _ if from == target => return Ok(x),
            other => sql_type(other),
        };
        Ok(Expr::func(Func::Cast { from: Some(from), to, implicit: false }, vec![x]))
    }

    /// `x::numeric(p, s)`: a constant converted and checked now (PostgreSQL folds it,
    /// so "numeric field overflow" comes at planning), anything else by the
    /// evaluator's length coercion (`Func::NumericTypmod`).
    fn cast_numeric_typmod(
        &self,
        inner: &ast::Expr,
        typmod: crate::numeric_typmod::NumericTypmod,
        scope: &mut Scope,
    ) -> Result<Expr, SqlError> {
        let position = self.position(inner);
        let x = self.plan(inner, scope)?;
        if let Expr::Const(d) = &x {
            let v = crate::plan::eval::numeric_typmod(d.clone(), None, typmod)
                .map_err(|e| SqlError::new(EvalError::from(e).to_string(), position))?;
            return Ok(Expr::Const(v));
        }
        let from = sql_type(self.type_of(&x, scope));
        Ok(Expr::func(Func::NumericTypmod { from: Some(from), typmod }, vec![x]))
    }

    /// The integer type of a planned integer expression in `scope` ([`Expr::int_type`]).
    fn int_type_of(&self, x: &Expr, scope: &Scope) -> Option<SqlType> {
        match scope {
            Scope::Rows { .. } => x.int_type(&self.rel.columns),
            Scope::Groups(g) => x.int_type(&g.output_columns(&self.rel.columns)),
        }
    }

    /// The type of a planned expression in `scope`.
    fn type_of(&self, x: &Expr, scope: &Scope) -> ColType {
        match scope {
            Scope::Rows { .. } => x.col_type(&self.rel.columns),
            Scope::Groups(g) => x.col_type(&g.output_columns(&self.rel.columns)),
        }
    }

    /// An operand of `||`, cast to text when it is not text (`anytextcat` /
    /// `textanycat` call the type's output function: stable, so never shipped).
    /// An untyped literal is text already (PostgreSQL resolves `unknown` to text).
    fn as_text(&self, e: &ast::Expr, scope: &mut Scope) -> Result<Expr, SqlError> {
        let x = self.plan(e, scope)?;
        if let Expr::Const(d) = &x {
            return Ok(match d {
                Datum::Null | Datum::Text(_) => x,
                // `booltext`: `true`/`false`.
                Datum::Bool(b) => Expr::Const(Datum::text(&b.to_string())),
                other => Expr::Const(Datum::text(&other.to_string())),
            });
        }
        Ok(match self.type_of(&x, scope) {
            ColType::Text => x,
            ColType::Int => {
                Expr::func(Func::Cast { from: Some(SqlType::Int8), to: SqlType::Text, implicit: false }, vec![x])
            }
            ColType::Float => {
                Expr::func(Func::Cast { from: Some(SqlType::Float8), to: SqlType::Text, implicit: false }, vec![x])
            }
            ColType::Numeric => {
                Expr::func(Func::Cast { from: Some(SqlType::Numeric), to: SqlType::Text, implicit: false }, vec![x])
            }
            ColType::Bool => {
                Expr::func(Func::Cast { from: Some(SqlType::Bool), to: SqlType::Text, implicit: false }, vec![x])
            }
        })
    }

    /// `x [NOT] [I]LIKE pattern`: both sides text (`textlike`, `texticlike`).
    fn like(
        &self,
        x: &ast::Expr,
        pattern: &ast::Expr,
        negated: bool,
        ilike: bool,
        scope: &mut Scope,
    ) -> Result<Expr, SqlError> {
        let (a, p) = (self.plan(x, scope)?, self.plan(pattern, scope)?);
        for (e, planned) in [(x, &a), (pattern, &p)] {
            let is_text = matches!(planned, Expr::Const(Datum::Text(_) | Datum::Null))
                || (!matches!(planned, Expr::Const(_)) && self.type_of(planned, scope) == ColType::Text);
            if !is_text {
                let op = if ilike { "~~*" } else { "~~" };
                return Err(SqlError::new(
                    format!("operator does not exist: {op} on a non-text operand"),
                    self.position(e).or_else(|| self.position(x)),
                ));
            }
        }
        Ok(Expr::func(Func::Like { negated, ilike }, vec![a, p]))
    }

    /// A scalar function the sandbox evaluates: `length`, `upper`, `lower`, `substr`
    /// of a text, and CURRENT_USER / SESSION_USER.
    fn scalar_function(&self, f: &Function, scope: &mut Scope) -> Result<Option<Expr>, SqlError> {
        let position = self.src.span_position(f.name.node_span());
        let names: Vec<String> = f.name.0.iter().map(ident_name).collect();
        let name = match names.as_slice() {
            [name] => name.as_str(),
            [schema, name] if schema == "pg_catalog" => name.as_str(),
            _ => return Ok(None),
        };
        let (func, arity): (Func, &[usize]) = match name {
            "current_user" | "session_user" if matches!(f.args, FunctionArguments::None) => {
                return Ok(Some(Expr::func(
                    if name == "current_user" { Func::CurrentUser } else { Func::SessionUser },
                    vec![],
                )));
            }
            "coalesce" | "greatest" | "least" | "nullif" | "abs" | "round" => {
                return self.numeric_or_conditional(name, f, scope, position).map(Some);
            }
            "length" => (Func::Length, &[1]),
            "upper" => (Func::Upper, &[1]),
            "lower" => (Func::Lower, &[1]),
            "substr" => (Func::Substr, &[2, 3]),
            _ => return Ok(None),
        };
        let FunctionArguments::List(list) = &f.args else {
            return Err(SqlError::unsupported(format!("this form of {name}()"), position));
        };
        if f.over.is_some() || f.filter.is_some() || list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
            return Err(SqlError::unsupported(format!("this form of {name}()"), position));
        }
        let mut args = Vec::new();
        for a in &list.args {
            let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = a else {
                return Err(SqlError::unsupported(format!("this form of {name}()"), position));
            };
            args.push(self.plan(e, scope)?);
        }
        if !arity.contains(&args.len()) {
            return Err(SqlError::new(
                format!("function {name} with {} arguments does not exist", args.len()),
                position,
            ));
        }
        // The first argument is text; substr's others integers.
        let types: Vec<Option<ColType>> = args
            .iter()
            .map(|a| match a {
                Expr::Const(Datum::Null) => None,
                Expr::Const(Datum::Text(_)) => Some(ColType::Text),
                Expr::Const(Datum::Int(_)) => Some(ColType::Int),
                Expr::Const(_) => Some(ColType::Float),
                x => Some(self.type_of(x, scope)),
            })
            .collect();
        let ok = types.iter().enumerate().all(|(i, t)| match (i, t) {
            (_, None) => true,
            (0, Some(t)) => *t == ColType::Text,
            (_, Some(t)) => *t == ColType::Int,
        });
        if !ok {
            return Err(SqlError::new(
                format!("function {name}() does not exist for these argument types (the sandbox has {name}(text…))"),
                position,
            ));
        }
        Ok(Some(Expr::func(func, args)))
    }

    /// `CASE` as `transformCaseExpr` analyses it: a searched CASE's conditions
    /// boolean (`coerce_to_boolean`, "CASE/WHEN"); a simple CASE's each `x = v` as
    /// the operator `=` over `x` and `v`; the results (the ELSE first, as PostgreSQL
    /// lists it for `select_common_type`) coerced to their common type, a missing ELSE
    /// a NULL of it. Constant conditions are simplified as eval_const_expressions
    /// does: a false or NULL one drops its WHEN, a true one makes its result the ELSE
    /// (and drops what follows); with no WHEN left the CASE is its ELSE.
    fn case(
        &self,
        operand: Option<&ast::Expr>,
        conditions: &[ast::Expr],
        results: &[ast::Expr],
        else_result: Option<&ast::Expr>,
        scope: &mut Scope,
        position: Option<usize>,
    ) -> Result<Expr, SqlError> {
        let x = match operand {
            Some(o) => Some(self.plan(o, scope)?),
            None => None,
        };
        let mut conds = Vec::with_capacity(conditions.len());
        for c in conditions {
            let planned = self.plan(c, scope)?;
            let at = self.position(c).or(position);
            conds.push(match &x {
                Some(x) => self.operator(BinOp::Eq, x.clone(), planned, scope, at)?,
                None => self.as_boolean(planned, scope, "CASE/WHEN", at)?,
            });
        }
        let mut outs = Vec::with_capacity(results.len() + 1);
        outs.push(match else_result {
            Some(e) => self.plan(e, scope)?,
            None => Expr::Const(Datum::Null),
        });
        for r in results {
            outs.push(self.plan(r, scope)?);
        }
        let ty = self.common_type(&outs, "CASE", scope, position)?;
        let mut outs =
            outs.into_iter().map(|e| self.coerce_to(e, ty, scope, position)).collect::<Result<Vec<_>, _>>()?;
        let mut default = outs.remove(0);
        // eval_const_expressions' simplification of constant conditions (a simple
        // CASE's `x = v` is constant only when `x` is).
        let mut pairs = Vec::with_capacity(conds.len());
        for (c, r) in conds.into_iter().zip(outs) {
            match &c {
                Expr::Const(Datum::Bool(false) | Datum::Null) => continue,
                Expr::Const(Datum::Bool(true)) => {
                    default = r;
                    break;
                }
                _ => pairs.push((c, r)),
            }
        }
        if pairs.is_empty() {
            return Ok(default);
        }
        let simple = x.is_some();
        let mut args = Vec::with_capacity(pairs.len() * 2 + 2);
        args.extend(x);
        for (c, r) in pairs {
            args.push(c);
            args.push(r);
        }
        args.push(default);
        Ok(Expr::func(Func::Case { simple }, args))
    }

    /// `COALESCE`, `GREATEST`, `LEAST`, `NULLIF` (`transformCoalesceExpr`,
    /// `transformMinMaxExpr`, `transformAExprNullIf`), `abs` and `round`.
    fn numeric_or_conditional(
        &self,
        name: &str,
        f: &Function,
        scope: &mut Scope,
        position: Option<usize>,
    ) -> Result<Expr, SqlError> {
        let FunctionArguments::List(list) = &f.args else {
            return Err(SqlError::unsupported(format!("this form of {name}()"), position));
        };
        if f.over.is_some() || f.filter.is_some() || list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
            return Err(SqlError::unsupported(format!("this form of {name}()"), position));
        }
        let mut args = Vec::with_capacity(list.args.len());
        for a in &list.args {
            let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = a else {
                return Err(SqlError::unsupported(format!("this form of {name}()"), position));
            };
            args.push(self.plan(e, scope)?);
        }
        let arity_error =
            |n: usize| SqlError::new(format!("function {name} with {n} arguments does not exist"), position);
        match name {
            "coalesce" | "greatest" | "least" => {
                if args.is_empty() {
                    return Err(SqlError::new("syntax error at or near \")\"", position));
                }
                let what = match name {
                    "coalesce" => "COALESCE",
                    "greatest" => "GREATEST",
                    _ => "LEAST",
                };
                let ty = self.common_type(&args, what, scope, position)?;
                let mut args =
                    args.into_iter().map(|e| self.coerce_to(e, ty, scope, position)).collect::<Result<Vec<_>, _>>()?;
                if name == "coalesce" {
                    // eval_const_expressions: NULL constants dropped, nothing after a
                    // constant that is not NULL; one argument left is the COALESCE.
                    args.retain(|a| !is_null_const(a));
                    if let Some(k) = args.iter().position(|a| const_value(a).is_some()) {
                        args.truncate(k + 1);
                    }
                    return Ok(match args.len() {
                        0 => null_of(ty),
                        1 => args.pop().expect("one"),
                        _ => Expr::func(Func::Coalesce, args),
                    });
                }
                Ok(Expr::func(Func::MinMax { greatest: name == "greatest" }, args))
            }
            "nullif" => {
                let [a, b]: [Expr; 2] = args.try_into().map_err(|v: Vec<Expr>| arity_error(v.len()))?;
                let eq = self.operator(BinOp::Eq, a, b, scope, position)?;
                let Expr::Bin(BinOp::Eq, a, b) = eq else {
                    return Err(SqlError::unsupported("NULLIF over these operands", position));
                };
                if let (Expr::Const(x), Expr::Const(y)) = (a.as_ref(), b.as_ref()) {
                    let v = if !x.is_null() && !y.is_null() && x == y { Datum::Null } else { x.clone() };
                    let ty = self.sql_type_of(&a, scope);
                    return Ok(if v.is_null() { null_of(ty.unwrap_or(SqlType::Text)) } else { Expr::Const(v) });
                }
                Ok(Expr::func(Func::NullIf, vec![*a, *b]))
            }
            "abs" => {
                let [x]: [Expr; 1] = args.try_into().map_err(|v: Vec<Expr>| arity_error(v.len()))?;
                match self.type_of(&x, scope) {
                    ColType::Int | ColType::Numeric | ColType::Float => {}
                    other => {
                        return Err(SqlError::new(
                            format!("function abs({}) does not exist", sql_type(other).name()),
                            position,
                        ))
                    }
                }
                fold_call(Expr::func(Func::Abs, vec![x]))
            }
            _ => {
                // round(numeric, int), round(numeric) (the SQL function `round($1, 0)`,
                // inlined), round(float8); an integer argument alone is a float8
                // (round(float8) is the one its implicit casts reach first: float8 is
                // the preferred numeric type), with a scale a numeric.
                let mut args = args.into_iter();
                let (Some(x), scale, None) = (args.next(), args.next(), args.next()) else {
                    return Err(arity_error(list.args.len()));
                };
                let xt = self.type_of(&x, scope);
                if !matches!(xt, ColType::Int | ColType::Numeric | ColType::Float) && !is_null_const(&x) {
                    return Err(SqlError::new(
                        format!("function round({}) does not exist", sql_type(xt).name()),
                        position,
                    ));
                }
                match scale {
                    None if xt == ColType::Numeric => fold_call(Expr::func(Func::Round, vec![x, Expr::int(0)])),
                    None => {
                        let x = self.coerce_to(x, SqlType::Float8, scope, position)?;
                        fold_call(Expr::func(Func::Round, vec![x]))
                    }
                    Some(s) => {
                        if xt == ColType::Float {
                            return Err(SqlError::new(
                                "function round(double precision, integer) does not exist",
                                position,
                            ));
                        }
                        if self.type_of(&s, scope) != ColType::Int && !is_null_const(&s) {
                            return Err(SqlError::new("function round(numeric, …) takes an integer scale", position));
                        }
                        let x = self.coerce_to(x, SqlType::Numeric, scope, position)?;
                        fold_call(Expr::func(Func::Round, vec![x, s]))
                    }
                }
            }
        }
    }

    /// The SQL type of a planned expression (an integer's own width when known),
    /// None for an untyped literal or a NULL (`unknown`).
    fn sql_type_of(&self, e: &Expr, scope: &Scope) -> Option<SqlType> {
        match e {
            Expr::Const(Datum::Null) | Expr::Const(Datum::Text(_)) => None,
            Expr::Const(Datum::Int(v)) => Some(if i32::try_from(*v).is_ok() { SqlType::Int4 } else { SqlType::Int8 }),
            Expr::Func(Func::Cast { to, .. }, _) => Some(*to),
            other => Some(match self.type_of(other, scope) {
                ColType::Int => self.int_type_of(other, scope).unwrap_or(SqlType::Int4),
                t => sql_type(t),
            }),
        }
    }

    /// `select_common_type` (parse_coerce.c) of `exprs`, for `what` (`CASE`,
    /// `COALESCE`, …): untyped literals and NULLs take the others' type (text when
    /// all are); the others must be of one category (PostgreSQL's message names the
    /// two that are not), a number the widest (int2 < int4 < int8 < numeric <
    /// float8, the preferred).
    fn common_type(
        &self,
        exprs: &[Expr],
        what: &str,
        scope: &Scope,
        position: Option<usize>,
    ) -> Result<SqlType, SqlError> {
        let category = |t: SqlType| match t {
            SqlType::Text => 't',
            SqlType::Bool => 'b',
            _ => 'n',
        };
        let mut common: Option<SqlType> = None;
        for e in exprs {
            let Some(t) = self.sql_type_of(e, scope) else { continue };
            common = Some(match common {
                None => t,
                Some(p) if category(p) != category(t) => {
                    return Err(SqlError::new(
                        format!("{what} types {} and {} cannot be matched", p.name(), t.name()),
                        position,
                    ));
                }
                Some(p) if t.widening_rank() > p.widening_rank() => t,
                Some(p) => p,
            });
        }
        Ok(common.unwrap_or(SqlType::Text))
    }

    /// `e` coerced to `ty` (`coerce_to_common_type`): a constant converted now (a
    /// NULL becomes a NULL of the type, which EXPLAIN prints `NULL::text`), a number
    /// of another category cast implicitly (`(grp)::numeric`); an integer of another
    /// width left as it is (the evaluator's integers are one width).
    fn coerce_to(&self, e: Expr, ty: SqlType, scope: &Scope, position: Option<usize>) -> Result<Expr, SqlError> {
        match e {
            Expr::Const(Datum::Null) => Ok(null_of(ty)),
            Expr::Const(d) => Ok(typed_const(convert_const(&d, ty, position)?, ty)),
            e => {
                let from = self.type_of(&e, scope);
                if from == ty.col_type() {
                    // An integer widened (int4 to int8: `(grp)::bigint`).
                    return Ok(match self.int_type_of(&e, scope) {
                        Some(t @ (SqlType::Int2 | SqlType::Int4)) if ty == SqlType::Int8 => {
                            Expr::func(Func::Cast { from: Some(t), to: ty, implicit: true }, vec![e])
                        }
                        _ => e,
                    });
                }
                coerce(e, from, ty.col_type(), position)
            }
        }
    }

    /// A call of a user-defined function (`super::inline`), if `f` names one.
    fn call_user_function(&self, f: &Function, scope: &mut Scope) -> Result<Option<Expr>, SqlError> {
        let position = self.src.span_position(f.name.node_span());
        let names: Vec<String> = f.name.0.iter().map(ident_name).collect();
        let name = match names.as_slice() {
            [name] => name.as_str(),
            [schema, name] if schema == "public" => name.as_str(),
            _ => return Ok(None),
        };
        let FunctionArguments::List(list) = &f.args else {
            return Ok(None);
        };
        if f.over.is_some() || f.filter.is_some() || list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
            return Ok(None);
        }
        let mut args = Vec::new();
        for a in &list.args {
            let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = a else {
                return Ok(None);
            };
            args.push(self.plan(e, scope)?);
        }
        let types: Vec<ColType> = args.iter().map(|a| self.type_of(a, scope)).collect();
        self.user_function(name, args, &types, position)
    }

    /// A function call: the aggregates, and the scalar functions `scalar_function` knows.
    fn function(&self, f: &Function, scope: &mut Scope) -> Result<Expr, SqlError> {
        let position = self.src.span_position(f.name.node_span());
        // `x IN (SELECT …)` the coordinator's planner made a hashed SubPlan.
        // A correlated scalar subquery the coordinator's planner made SubPlan k: its
        // arguments are the outer values it reads.
        if let Some((plan_id, ty)) = crate::plan::subplan_ref(&f.name.to_string()) {
            let mut args = vec![];
            if let FunctionArguments::List(l) = &f.args {
                for a in &l.args {
                    if let FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) = a {
                        args.push(self.plan(x, scope).map_err(ungrouped_outer_reference)?);
                    }
                }
            }
            return Ok(Expr::func(crate::plan::Func::SubPlan { plan_id, ty }, args));
        }
        if let Some(k) = crate::plan::hashed_subplan_ref(&f.name.to_string()) {
            if let FunctionArguments::List(l) = &f.args {
                if let [FunctionArg::Unnamed(FunctionArgExpr::Expr(x))] = l.args.as_slice() {
                    return Ok(Expr::func(crate::plan::Func::HashedSubPlan(k), vec![self.plan(x, scope)?]));
                }
            }
        }
        if let Some(name) = unimplemented_aggregate(f) {
            // Refused before its arguments are bound: bound as a plain function's, in
            // a grouped query they would fail as ungrouped columns, naming the wrong
            // thing.
            return Err(SqlError::unsupported(format!("the aggregate {name}()"), position));
        }
        if aggregate_func(f).is_none() {
            if let Some(x) = self.scalar_function(f, scope)? {
                return Ok(x);
            }
        }
        if aggregate_func(f).is_none() {
            if let Some(x) = self.call_user_function(f, scope)? {
                return Ok(x);
            }
        }
        let Some(func) = aggregate_func(f) else {
            // Not PostgreSQL's "does not exist": the name may be one of its built-ins
            // that the sandbox lacks.
            return Err(SqlError::unsupported(
                format!("function {}() (neither one the file creates nor a built-in the sandbox has)", f.name),
                position,
            ));
        };
        if f.over.is_some() {
            return Err(SqlError::unsupported("window functions", position));
        }
        let arg = aggregate_arg(f, func, position)?;
        let g = match scope {
            Scope::Groups(g) => g,
            Scope::Rows { no_agg } => return Err(SqlError::new(*no_agg, position)),
        };
        let func = if arg.is_none() { AggFunc::CountStar } else { func };
        let arg = match arg {
            None => None,
            Some(a) => Some(self.plan(a, &mut Scope::Rows { no_agg: NO_NESTED_AGG })?),
        };
        if let (AggFunc::Sum | AggFunc::Avg, Some(a)) = (func, &arg) {
            // PostgreSQL has no sum(text); our executor would not know what to do.
            if a.col_type(&self.rel.columns) == ColType::Text {
                return Err(SqlError::new(format!("function {}(text) does not exist", func.name()), position));
            }
        }
        if let (AggFunc::Sum | AggFunc::Avg | AggFunc::Min | AggFunc::Max, Some(a)) = (func, &arg) {
            // Nor sum, avg, min or max of a boolean (bool_and and bool_or are its).
            if a.col_type(&self.rel.columns) == ColType::Bool {
                return Err(SqlError::new(format!("function {}(boolean) does not exist", func.name()), position));
            }
        }
        let distinct = matches!(&f.args, FunctionArguments::List(l) if l.duplicate_treatment == Some(DuplicateTreatment::Distinct));
        Ok(Expr::Col(g.agg_column(AggCall { func, arg, distinct })))
    }
}

/// The aggregate a function call names (`count`, `sum`, `min`, `max`, `avg`,
/// optionally qualified with `pg_catalog`), if any. `count` stands for both counts.
fn aggregate_func(f: &Function) -> Option<AggFunc> {
    let names: Vec<String> = f.name.0.iter().map(ident_name).collect();
    let name = match names.as_slice() {
        [name] => name,
        [schema, name] if schema == "pg_catalog" => name,
        _ => return None,
    };
    match name.as_str() {
        "count" => Some(AggFunc::Count),
        "sum" => Some(AggFunc::Sum),
        "min" => Some(AggFunc::Min),
        "max" => Some(AggFunc::Max),
        "avg" => Some(AggFunc::Avg),
        _ => None,
    }
}

/// PostgreSQL's built-in aggregates the sandbox does not compute (pg_aggregate's
/// general-purpose, statistical and ordered-set ones), by name.
const UNIMPLEMENTED_AGGREGATES: &[&str] = &[
    "array_agg",
    "string_agg",
    "bool_and",
    "bool_or",
    "every",
    "bit_and",
    "bit_or",
    "bit_xor",
    "json_agg",
    "jsonb_agg",
    "json_object_agg",
    "jsonb_object_agg",
    "xmlagg",
    "range_agg",
    "range_intersect_agg",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "variance",
    "var_pop",
    "var_samp",
    "corr",
    "covar_pop",
    "covar_samp",
    "regr_avgx",
    "regr_avgy",
    "regr_count",
    "regr_intercept",
    "regr_r2",
    "regr_slope",
    "regr_sxx",
    "regr_sxy",
    "regr_syy",
    "mode",
    "percentile_cont",
    "percentile_disc",
];

/// The name of a PostgreSQL aggregate in [`UNIMPLEMENTED_AGGREGATES`] that `f` calls
/// (unqualified or in `pg_catalog`), if any.
fn unimplemented_aggregate(f: &Function) -> Option<String> {
    let names: Vec<String> = f.name.0.iter().map(ident_name).collect();
    let name = match names.as_slice() {
        [name] => name,
        [schema, name] if schema == "pg_catalog" => name,
        _ => return None,
    };
    UNIMPLEMENTED_AGGREGATES.contains(&name.as_str()).then(|| name.clone())
}

/// The single argument of an aggregate call; None for `count(*)`. Rejects the
/// aggregate decorations we do not implement (FILTER, ORDER BY, ...).
fn aggregate_arg(f: &Function, func: AggFunc, position: Option<usize>) -> Result<Option<&ast::Expr>, SqlError> {
    let name = func.name();
    if f.filter.is_some() {
        return Err(SqlError::unsupported("FILTER in aggregates", position));
    }
    if !f.within_group.is_empty() {
        return Err(SqlError::unsupported("WITHIN GROUP", position));
    }
    if f.null_treatment.is_some() || !matches!(f.parameters, FunctionArguments::None) {
        return Err(SqlError::unsupported(format!("this form of {name}()"), position));
    }
    let list = match &f.args {
        FunctionArguments::List(list) => list,
        FunctionArguments::Subquery(_) => return Err(SqlError::unsupported("subqueries", position)),
        FunctionArguments::None => {
            return Err(SqlError::new(format!("column \"{name}\" does not exist"), position));
        }
    };
    if list.duplicate_treatment == Some(DuplicateTreatment::Distinct)
        && matches!(list.args.as_slice(), [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)])
    {
        return Err(SqlError::new("syntax error at or near \"*\"", position));
    }
    if !list.clauses.is_empty() {
        return Err(SqlError::unsupported("ORDER BY or other clauses in aggregates", position));
    }
    match list.args.as_slice() {
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(e))] => Ok(Some(e)),
        [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] if func == AggFunc::Count => Ok(None),
        [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] => {
            Err(SqlError::new(format!("function {name}(*) does not exist"), position))
        }
        [] if func == AggFunc::Count => {
            Err(SqlError::new("count(*) must be used to call a parameterless aggregate function", position))
        }
        // By count, as the other calls with too many arguments (the arguments printed
        // by sqlparser would bring its whole printer into the page's module).
        args => Err(SqlError::new(format!("function {name} with {} arguments does not exist", args.len()), position)),
    }
}

/// The one operand of an expression that has one (parentheses, a prefix operator, a
/// NULL or boolean test, a cast), for walkers that look through them alike.
pub(crate) fn single_operand(e: &ast::Expr) -> Option<&ast::Expr> {
    match e {
        ast::Expr::Nested(x)
        | ast::Expr::UnaryOp { expr: x, .. }
        | ast::Expr::IsNull(x)
        | ast::Expr::IsNotNull(x)
        | ast::Expr::IsTrue(x)
        | ast::Expr::IsNotTrue(x)
        | ast::Expr::IsFalse(x)
        | ast::Expr::IsNotFalse(x)
        | ast::Expr::IsUnknown(x)
        | ast::Expr::IsNotUnknown(x)
        | ast::Expr::Cast { expr: x, .. } => Some(x),
        _ => None,
    }
}

/// Whether `e` calls an aggregate outside a window, i.e. makes its query aggregated.
/// Only the constructs `ExprPlanner::plan` accepts need to be looked into: anything
/// else is rejected when planned.
pub(super) fn contains_aggregate(e: &ast::Expr) -> bool {
    if let Some(x) = single_operand(e) {
        return contains_aggregate(x);
    }
    match e {
        ast::Expr::Function(f) if f.over.is_none() && aggregate_func(f).is_some() => true,
        ast::Expr::BinaryOp { left, right, .. } => contains_aggregate(left) || contains_aggregate(right),
        ast::Expr::Like { expr, pattern, .. } | ast::Expr::ILike { expr, pattern, .. } => {
            contains_aggregate(expr) || contains_aggregate(pattern)
        }
        ast::Expr::Function(f) if f.over.is_none() => match &f.args {
            FunctionArguments::List(list) => list.args.iter().any(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => contains_aggregate(e),
                _ => false,
            }),
            _ => false,
        },
        ast::Expr::Between { expr, low, high, .. } => {
            contains_aggregate(expr) || contains_aggregate(low) || contains_aggregate(high)
        }
        ast::Expr::InList { expr, list, .. } => contains_aggregate(expr) || list.iter().any(contains_aggregate),
        ast::Expr::Case { operand, conditions, results, else_result } => {
            operand.as_deref().is_some_and(contains_aggregate)
                || conditions.iter().any(contains_aggregate)
                || results.iter().any(contains_aggregate)
                || else_result.as_deref().is_some_and(contains_aggregate)
        }
        _ => false,
    }
}

/// The output column name PostgreSQL gives an unaliased select item.
pub(super) fn output_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(ident) => ident_name(ident),
        ast::Expr::CompoundIdentifier(parts) => parts.last().map(ident_name).unwrap_or_default(),
        ast::Expr::Nested(inner) | ast::Expr::Cast { expr: inner, .. } => output_name(inner),
        ast::Expr::Function(f) => f.name.0.last().map(ident_name).unwrap_or_default(),
        ast::Expr::Value(Value::Boolean(_)) => "bool".to_string(),
        // FigureColnameInternal: a CASE is named after its ELSE result when that
        // names something, else "case".
        ast::Expr::Case { else_result, .. } => match else_result.as_deref().map(output_name) {
            Some(n) if n != "?column?" => n,
            _ => "case".to_string(),
        },
        _ => "?column?".to_string(),
    }
}

/// The wider of two integer types (the result type of an operator over them).
fn wider_int(a: SqlType, b: SqlType) -> SqlType {
    let rank = |t: SqlType| match t {
        SqlType::Int2 => 0,
        SqlType::Int4 => 1,
        _ => 2,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// An arithmetic operator or `||` over constants replaced by its value, as
/// PostgreSQL's `eval_const_expressions` folds an immutable function of constants
/// while planning: `2 * 3` is `6` in EXPLAIN and in the remote query (`id = 6`), and
/// `'a' || 'b'` is `'ab'::text`. Comparisons are left to the quals' own folding
/// (booleans are Int 1/0 here, which EXPLAIN would print as numbers). A constant
/// expression that raises (`1 / 0`, `2147483647 + 1`) raises here, while planning,
/// as `evaluate_expr` does in PostgreSQL: `SELECT 1/0 FROM t WHERE false` and its
/// EXPLAIN fail, over no rows. Unless it is under an AND or an OR that a constant
/// before it already decided ([`QUIET`]): `simplify_and_arguments` stops at a
/// constant false and never simplifies what follows it. A NULL result is left
/// unfolded (EXPLAIN would print it as a typed NULL).
fn fold_constant(e: Expr) -> Result<Expr, SqlError> {
    let foldable = match &e {
        Expr::Bin(op, l, r) => {
            !op.is_comparison()
                && !matches!(op, BinOp::And | BinOp::Or)
                && const_value(l).is_some()
                && const_value(r).is_some()
        }
        Expr::Func(Func::TextCat | Func::Neg | Func::IntNarrowNeg(_), args) => {
            args.iter().all(|a| const_value(a).is_some())
        }
        _ => false,
    };
    if !foldable {
        return Ok(e);
    }
    match e.eval(&[]) {
        Ok(v) if !matches!(v, Datum::Null) => Ok(folded(&e, v)),
        // evaluate_expr's ERROR names no position.
        Err(err) if !QUIET.with(|q| q.get()) => Err(SqlError::new(err.to_string(), None)),
        _ => Ok(e),
    }
}

thread_local! {
    /// Set while the right side of an AND or OR whose left side is a deciding
    /// constant is analysed: PostgreSQL's `simplify_and_arguments` /
    /// `simplify_or_arguments` never fold what follows a constant false (true), so
    /// nothing there raises while planning (`WHERE false AND 1/0 = 1` is no error).
    /// A thread's: the analysis is single-threaded and restores it on the way out.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` (an analysis) with constant folding that does not raise: a constant
/// that would is left unfolded, for the executor (a SQL function's body, which
/// PostgreSQL's CREATE FUNCTION analyses but does not plan).
pub(super) fn quietly<T>(f: impl FnOnce() -> T) -> T {
    let was = QUIET.with(|q| q.replace(true));
    let out = f();
    QUIET.with(|q| q.set(was));
    out
}

/// Whether `e`, the left side of an AND (`and`) or an OR, holds a constant that
/// decides it: a false (true) constant or comparison of constants among its own
/// chain of the same operator, as eval_const_expressions folds them first.
fn decided_by_constant(e: &Expr, and: bool) -> bool {
    let op = if and { BinOp::And } else { BinOp::Or };
    match e {
        Expr::Bin(o, l, r) if *o == op => decided_by_constant(l, and) || decided_by_constant(r, and),
        Expr::Const(_) | Expr::Bin(_, _, _) if is_constant_comparison(e) => {
            matches!(e.eval(&[]), Ok(v) if !v.is_null() && v.is_true() != and)
        }
        _ => false,
    }
}

/// A constant, or a comparison of two constants.
fn is_constant_comparison(e: &Expr) -> bool {
    match e {
        Expr::Const(_) => true,
        Expr::Bin(op, l, r) => op.is_comparison() && matches!((&**l, &**r), (Expr::Const(_), Expr::Const(_))),
        _ => false,
    }
}

/// A NULL constant, untyped or of a type.
fn is_null_const(e: &Expr) -> bool {
    matches!(e, Expr::Const(Datum::Null))
        || matches!(e, Expr::Func(Func::Cast { .. }, a) if matches!(a.first(), Some(Expr::Const(Datum::Null))))
}

/// A constant of type `ty`: an integer of another width than int4 a Const of its
/// type, written as a cast of the value, as [`null_of`] writes a NULL (ruleutils.c's
/// get_const_expr prints it `'0'::bigint`, `'5'::smallint`; deparse.c `0::bigint`);
/// any other value as it is (its Datum says its type).
pub(crate) fn typed_const(d: Datum, ty: SqlType) -> Expr {
    match d {
        Datum::Int(_) if matches!(ty, SqlType::Int8 | SqlType::Int2) => {
            Expr::func(Func::Cast { from: None, to: ty, implicit: false }, vec![Expr::Const(d)])
        }
        d => Expr::Const(d),
    }
}

/// The value of a constant: a Const, or a Const of a type ([`typed_const`],
/// [`null_of`]).
fn const_value(e: &Expr) -> Option<&Datum> {
    match e {
        Expr::Const(d) => Some(d),
        Expr::Func(Func::Cast { from: None, implicit: false, .. }, a) => match a.first() {
            Some(Expr::Const(d)) if a.len() == 1 => Some(d),
            _ => None,
        },
        _ => None,
    }
}

/// A folded value as a constant of the expression's type: an integer expression
/// of int8 or int2 keeps its type ([`typed_const`]).
fn folded(e: &Expr, v: Datum) -> Expr {
    match (&v, e.int_type(&[])) {
        (Datum::Int(i), Some(t @ (SqlType::Int8 | SqlType::Int2))) if i32::try_from(*i).is_ok() => typed_const(v, t),
        _ => Expr::Const(v),
    }
}

/// A NULL of type `ty` (a Const of the type: `NULL::integer`).
fn null_of(ty: SqlType) -> Expr {
    Expr::func(Func::Cast { from: None, to: ty, implicit: false }, vec![Expr::Const(Datum::Null)])
}

/// A call of an immutable function folded to its value when its arguments are all
/// constants (eval_const_expressions), as [`fold_constant`] folds operators.
fn fold_call(e: Expr) -> Result<Expr, SqlError> {
    let Expr::Func(_, args) = &e else { return Ok(e) };
    if !args.iter().all(|a| const_value(a).is_some()) {
        return Ok(e);
    }
    match e.eval(&[]) {
        Ok(v) if !matches!(v, Datum::Null) => Ok(folded(&e, v)),
        Err(err) if !QUIET.with(|q| q.get()) => Err(SqlError::new(err.to_string(), None)),
        _ => Ok(e),
    }
}

fn reads_column(e: &Expr) -> bool {
    let mut has = false;
    e.for_each_col(&mut |_| has = true);
    has
}

/// The elements of a one-dimensional array literal as `array_in` reads it
/// (`{a,"b c",NULL}`): None for an unquoted NULL; quotes and backslashes escape,
/// whitespace around an unquoted element is dropped.
pub fn parse_array_literal(text: &str) -> Result<Vec<Option<String>>, String> {
    let malformed = || format!("malformed array literal: \"{text}\"");
    let inner = text.trim().strip_prefix('{').and_then(|t| t.strip_suffix('}')).ok_or_else(malformed)?;
    let mut out = Vec::new();
    if inner.trim().is_empty() {
        return Ok(out);
    }
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut item = String::new();
        let mut quoted = false;
        if chars.peek() == Some(&'"') {
            quoted = true;
            chars.next();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => item.push(chars.next().ok_or_else(malformed)?),
                    Some(c) => item.push(c),
                    None => return Err(malformed()),
                }
            }
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                if matches!(c, '{' | '}' | '"') {
                    return Err(malformed());
                }
                chars.next();
                if c == '\\' {
                    item.push(chars.next().ok_or_else(malformed)?);
                } else {
                    item.push(c);
                }
            }
            item = item.trim_end().to_string();
            if item.is_empty() {
                return Err(malformed());
            }
        }
        out.push(if !quoted && item.eq_ignore_ascii_case("NULL") { None } else { Some(item) });
        match chars.next() {
            Some(',') => {}
            None => return Ok(out),
            Some(_) => return Err(malformed()),
        }
    }
}

fn negate_if(negated: bool, e: Expr) -> Expr {
    if negated {
        negate_clause(e)
    } else {
        e
    }
}

/// `NOT e` as PostgreSQL's planner simplifies it (`negate_clause`, called by
/// eval_const_expressions), so EXPLAIN and the remote query show what PostgreSQL's
/// do: a comparison becomes its negator (`NOT (val > 0)` is `val <= 0`), `[I]LIKE`
/// its negation, `IS NULL` `IS NOT NULL`, `NOT NOT x` is `x`, and a NOT over AND or
/// OR goes inside by De Morgan's laws. The three-valued result is the same: each
/// rewrite is NULL exactly where the NOT was.
pub fn negate_clause(e: Expr) -> Expr {
    match e {
        Expr::Not(x) => *x,
        Expr::Bin(op, l, r) => match op {
            _ if op.is_comparison() => Expr::Bin(negator(op), l, r),
            BinOp::And => Expr::bin(BinOp::Or, negate_clause(*l), negate_clause(*r)),
            BinOp::Or => Expr::bin(BinOp::And, negate_clause(*l), negate_clause(*r)),
            _ => Expr::Not(Box::new(Expr::Bin(op, l, r))),
        },
        Expr::IsNull(x, negated) => Expr::IsNull(x, !negated),
        Expr::Const(Datum::Bool(b)) => Expr::Const(Datum::Bool(!b)),
        Expr::Func(Func::Like { negated, ilike }, args) => Expr::Func(Func::Like { negated: !negated, ilike }, args),
        // NOT (x IS TRUE) is x IS NOT TRUE, and so on.
        Expr::Func(Func::BoolTest(test), args) => Expr::Func(Func::BoolTest(test.negated()), args),
        // NOT (x = ANY (…)) is x <> ALL (…): the operator's negator, ANY and ALL swapped.
        Expr::Func(Func::ScalarArrayOp { op, use_or, elem }, args) if op.is_comparison() => {
            Expr::Func(Func::ScalarArrayOp { op: negator(op), use_or: !use_or, elem }, args)
        }
        other => Expr::Not(Box::new(other)),
    }
}

/// A comparison's negator (`get_negator`): `=` and `<>`, `<` and `>=`, `>` and `<=`.
fn negator(op: BinOp) -> BinOp {
    match op {
        BinOp::Eq => BinOp::NotEq,
        BinOp::NotEq => BinOp::Eq,
        BinOp::Lt => BinOp::GtEq,
        BinOp::GtEq => BinOp::Lt,
        BinOp::Gt => BinOp::LtEq,
        BinOp::LtEq => BinOp::Gt,
        other => other,
    }
}

fn bin_op(op: &BinaryOperator) -> Option<BinOp> {
    Some(match op {
        BinaryOperator::Eq => BinOp::Eq,
        BinaryOperator::NotEq => BinOp::NotEq,
        BinaryOperator::Lt => BinOp::Lt,
        BinaryOperator::LtEq => BinOp::LtEq,
        BinaryOperator::Gt => BinOp::Gt,
        BinaryOperator::GtEq => BinOp::GtEq,
        BinaryOperator::And => BinOp::And,
        BinaryOperator::Or => BinOp::Or,
        BinaryOperator::Plus => BinOp::Plus,
        BinaryOperator::Minus => BinOp::Minus,
        BinaryOperator::Multiply => BinOp::Multiply,
        BinaryOperator::Divide => BinOp::Divide,
        BinaryOperator::Modulo => BinOp::Modulo,
        _ => return None,
    })
}

/// An operator with a boolean operand (`boolean = boolean`, `boolean < boolean`, …:
/// `booleq`, `boollt`, …): the other side must be a boolean too, or an untyped
/// literal, read now by `boolin` (`b = 'yes'`). A comparison with a constant `true`
/// or `false` is simplified as `simplify_boolean_equality` does: `b = true` and
/// `b <> false` are `b`, `b = false` and `b <> true` are `NOT b`.
fn bool_operator(
    op: BinOp,
    l: Expr,
    r: Expr,
    types: (ColType, ColType),
    position: Option<usize>,
) -> Result<Expr, SqlError> {
    let refuse = || {
        let (a, b) = (sql_type(types.0).name(), sql_type(types.1).name());
        SqlError::new(format!("operator does not exist: {a} {} {b}", op.sql()), position)
    };
    if matches!(op, BinOp::And | BinOp::Or) {
        return Ok(Expr::bin(op, l, r));
    }
    if !op.is_comparison() {
        return Err(refuse());
    }
    let as_bool = |e: Expr, t: ColType| -> Result<Expr, SqlError> {
        match e {
            Expr::Const(Datum::Null) => Ok(e),
            Expr::Const(d @ Datum::Text(_)) => Ok(Expr::Const(convert_const(&d, SqlType::Bool, position)?)),
            e if t == ColType::Bool => Ok(e),
            _ => Err(refuse()),
        }
    };
    let (l, r) = (as_bool(l, types.0)?, as_bool(r, types.1)?);
    // simplify_boolean_equality: a comparison with a non-NULL boolean constant.
    if matches!(op, BinOp::Eq | BinOp::NotEq) {
        let keep = |c: bool| (op == BinOp::Eq) == c;
        match (&l, &r) {
            (_, Expr::Const(Datum::Bool(c))) if !matches!(l, Expr::Const(_)) => {
                return Ok(if keep(*c) { l } else { negate_clause(l) });
            }
            (Expr::Const(Datum::Bool(c)), _) if !matches!(r, Expr::Const(_)) => {
                return Ok(if keep(*c) { r } else { negate_clause(r) });
            }
            _ => {}
        }
    }
    Ok(Expr::bin(op, l, r))
}

/// A literal (`true` and `false` are booleans).
pub(super) fn literal(v: &Value, position: Option<usize>) -> Result<Datum, SqlError> {
    match v {
        Value::Number(digits, _) => number(digits, position),
        Value::SingleQuotedString(s)
        | Value::EscapedStringLiteral(s)
        | Value::NationalStringLiteral(s)
        | Value::UnicodeStringLiteral(s) => Ok(Datum::text(s)),
        Value::DollarQuotedString(s) => Ok(Datum::text(&s.value)),
        Value::Boolean(b) => Ok(Datum::Bool(*b)),
        Value::Null => Ok(Datum::Null),
        Value::Placeholder(p) => Err(SqlError::unsupported(format!("parameter {p}"), position)),
        other => Err(SqlError::unsupported(format!("literal {other}"), position)),
    }
}

/// A numeric literal: an integer if it fits in i64, else (decimal point, exponent or
/// too many digits) a numeric, as PostgreSQL's scanner makes it (`numeric_in`).
fn number(text: &str, position: Option<usize>) -> Result<Datum, SqlError> {
    if let Ok(v) = text.parse::<i64>() {
        return Ok(Datum::Int(v));
    }
    match Numeric::parse(text) {
        Ok(n) => Ok(Datum::numeric(n)),
        Err(NumericError::InvalidInput(_)) => {
            Err(SqlError::new(format!("invalid numeric literal \"{text}\""), position))
        }
        Err(e) => Err(SqlError::new(e.to_string(), position)),
    }
}

/// The type modifier of `numeric(p[, s])`, None for any other type.
fn numeric_typmod(
    t: &DataType,
    position: Option<usize>,
) -> Result<Option<crate::numeric_typmod::NumericTypmod>, SqlError> {
    crate::numeric_typmod::NumericTypmod::of_data_type(t).map_err(|m| SqlError::new(m, position))
}

/// The SQL type a cast names, if it is one we have (`numeric(p, s)` is
/// [`numeric_typmod`]'s).
fn cast_target(t: &DataType) -> Option<SqlType> {
    use sqlparser::ast::ExactNumberInfo;
    use DataType::*;
    match t {
        SmallInt(_) | Int2(_) => Some(SqlType::Int2),
        Int(_) | Integer(_) | Int4(_) => Some(SqlType::Int4),
        BigInt(_) | Int8(_) => Some(SqlType::Int8),
        Numeric(ExactNumberInfo::None) | Decimal(ExactNumberInfo::None) | Dec(ExactNumberInfo::None) => {
            Some(SqlType::Numeric)
        }
        Float(_) | Real | Double | DoublePrecision | Float4 | Float8 => Some(SqlType::Float8),
        Text | Varchar(_) | CharacterVarying(_) | CharVarying(_) | String(_) => Some(SqlType::Text),
        Bool | Boolean => Some(SqlType::Bool),
        _ => None,
    }
}

/// `e` of type `from` as an operand of type `target` ([`ExprPlanner::operator`]): a
/// constant converted now, a number cast, a text left alone (no implicit cast: the
/// evaluator refuses the operator, as PostgreSQL's parser does).
fn coerce(e: Expr, from: ColType, target: ColType, position: Option<usize>) -> Result<Expr, SqlError> {
    Ok(match e {
        _ if from == target || from == ColType::Text && !matches!(e, Expr::Const(_)) => e,
        Expr::Const(d) => Expr::Const(convert_const(&d, sql_type(target), position)?),
        e => Expr::func(Func::Cast { from: Some(sql_type(from)), to: sql_type(target), implicit: true }, vec![e]),
    })
}

/// The SQL type a shard's value of a `ColType` has: its integers are int8.
fn sql_type(t: ColType) -> SqlType {
    match t {
        ColType::Int => SqlType::Int8,
        ColType::Float => SqlType::Float8,
        ColType::Numeric => SqlType::Numeric,
        ColType::Text => SqlType::Text,
        ColType::Bool => SqlType::Bool,
    }
}

/// Converts a constant to `target` now, with the evaluator's casts
/// ([`crate::plan::eval::cast`]), as PostgreSQL's planner folds a constant's cast by
/// running its executor (`evaluate_expr`). A shard's integers are int8 and its
/// decimals numeric ([`ColType::oid`]); a string literal is untyped.
pub(super) fn convert_const(d: &Datum, target: SqlType, position: Option<usize>) -> Result<Datum, SqlError> {
    let from = match d {
        Datum::Int(_) => Some(ColType::Int),
        Datum::Float(_) => Some(ColType::Float),
        Datum::Numeric(_) => Some(ColType::Numeric),
        Datum::Bool(_) => Some(ColType::Bool),
        Datum::Text(_) | Datum::Null => None,
    };
    cast(d.clone(), from.map(sql_type), target)
        .map_err(|kind| SqlError::new(EvalError::from(kind).to_string(), position))
}

/// Names an unsupported expression for an error message.
fn construct_name(e: &ast::Expr) -> String {
    let name = match e {
        ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. } => "subqueries",
        ast::Expr::Case { .. } => "CASE",
        ast::Expr::Like { .. } => "LIKE",
        ast::Expr::ILike { .. } => "ILIKE",
        ast::Expr::SimilarTo { .. } => "SIMILAR TO",
        ast::Expr::IsDistinctFrom(..) | ast::Expr::IsNotDistinctFrom(..) => "IS [NOT] DISTINCT FROM",
        ast::Expr::AnyOp { .. } | ast::Expr::AllOp { .. } => "ANY/ALL",
        ast::Expr::Cast { .. } => "this form of cast",
        ast::Expr::Extract { .. } => "EXTRACT",
        ast::Expr::Substring { .. } => "SUBSTRING",
        ast::Expr::Position { .. } => "POSITION",
        ast::Expr::Trim { .. } => "TRIM",
        ast::Expr::Overlay { .. } => "OVERLAY",
        ast::Expr::Collate { .. } => "COLLATE",
        ast::Expr::AtTimeZone { .. } => "AT TIME ZONE",
        ast::Expr::Interval(_) => "INTERVAL",
        ast::Expr::TypedString { .. } => "typed literals",
        ast::Expr::Array(_) => "ARRAY",
        ast::Expr::Tuple(_) => "row constructors",
        ast::Expr::GroupingSets(_) => "GROUPING SETS",
        ast::Expr::Cube(_) => "CUBE",
        ast::Expr::Rollup(_) => "ROLLUP",
        ast::Expr::Wildcard(_) | ast::Expr::QualifiedWildcard(..) => "* in an expression",
        // Not Debug-formatting the AST here keeps its (large) Debug code out of the wasm.
        _ => "this kind of expression",
    };
    name.to_string()
}

#[cfg(test)]
mod negate_tests {
    use super::*;

    /// negate_clause: negators, IS [NOT] NULL, [NOT] LIKE, De Morgan, NOT NOT.
    #[test]
    fn not_is_simplified_as_postgresql_simplifies_it() {
        let names = ["v".to_string(), "c".to_string()];
        let sql = |e: Expr| negate_clause(e).to_sql(&names);
        let gt = Expr::bin(BinOp::Gt, Expr::col(0), Expr::int(0));
        assert_eq!(sql(gt.clone()), "(v <= 0)");
        assert_eq!(sql(Expr::IsNull(Box::new(Expr::col(1)), false)), "(c IS NOT NULL)");
        let like =
            Expr::func(Func::Like { negated: false, ilike: false }, vec![Expr::col(1), Expr::Const(Datum::text("a%"))]);
        assert_eq!(sql(like), "(c !~~ 'a%'::text)");
        let or = Expr::bin(BinOp::Or, gt.clone(), Expr::bin(BinOp::Eq, Expr::col(0), Expr::int(5)));
        assert_eq!(sql(or), "((v <= 0) AND (v <> 5))");
        assert_eq!(sql(Expr::Not(Box::new(gt.clone()))), "(v > 0)");
        let arith = Expr::bin(BinOp::Plus, Expr::col(0), Expr::int(1));
        assert_eq!(sql(arith), "(NOT (v + 1))");
    }
}

#[cfg(test)]
mod fold_tests {
    use super::*;

    /// eval_const_expressions: arithmetic and `||` over constants are their value;
    /// anything reading a column, a comparison, and a constant that raises are not.
    #[test]
    fn constants_fold_as_postgresql_folds_them() {
        let names = ["v".to_string()];
        let sql = |e: Expr| fold_constant(e).unwrap().to_sql(&names);
        let int4_mul = BinOp::Multiply.with_int_result(SqlType::Int4);
        assert_eq!(sql(Expr::bin(int4_mul, Expr::int(2), Expr::int(3))), "6");
        // int8mul's result is an int8 Const, which get_const_expr labels.
        assert_eq!(sql(Expr::bin(BinOp::Multiply, Expr::int(2), Expr::int(3))), "'6'::bigint");
        let cat = Expr::func(Func::TextCat, vec![Expr::Const(Datum::text("a")), Expr::Const(Datum::text("b"))]);
        assert_eq!(sql(cat), "'ab'::text");
        assert_eq!(sql(Expr::bin(BinOp::Multiply, Expr::col(0), Expr::int(3))), "(v * 3)");
        assert_eq!(sql(Expr::bin(BinOp::Eq, Expr::int(1), Expr::int(1))), "(1 = 1)");
        // One that raises raises now, while planning (evaluate_expr), with no position.
        let raised = fold_constant(Expr::bin(BinOp::Divide, Expr::int(1), Expr::int(0))).unwrap_err();
        assert_eq!((raised.message.as_str(), raised.position), ("division by zero", None));
        let int4 = BinOp::Plus.with_int_result(SqlType::Int4);
        let raised = fold_constant(Expr::bin(int4, Expr::int(i32::MAX as i64), Expr::int(1))).unwrap_err();
        assert_eq!(raised.message, "integer out of range");
        // Unless a constant before it decided its AND (simplify_and_arguments).
        let (t, f) = (Expr::Const(Datum::Bool(true)), Expr::Const(Datum::Bool(false)));
        assert!(decided_by_constant(&f, true));
        assert!(decided_by_constant(&Expr::bin(BinOp::Eq, Expr::int(1), Expr::int(2)), true));
        assert!(!decided_by_constant(&t, true));
        assert!(decided_by_constant(&t, false));
    }

    /// ruleutils.c's get_const_expr over each type's constant: an int4 bare (quoted
    /// and labelled when negative), an int8 or int2 always quoted and labelled, as
    /// PostgreSQL 15 prints `0::bigint`, `coalesce(b, 0)` over a bigint and `5::int2`
    /// (`'0'::bigint`, `COALESCE(b, '0'::bigint)`, `'5'::smallint`); deparse.c's
    /// deparseConst labels the int8 without quotes (`0::bigint`).
    #[test]
    fn integer_constants_keep_their_type() {
        let names = ["b".to_string()];
        let int8 = typed_const(Datum::Int(0), SqlType::Int8);
        assert_eq!(int8.to_sql(&names), "'0'::bigint");
        assert_eq!(typed_const(Datum::Int(-3), SqlType::Int8).to_sql(&names), "'-3'::bigint");
        assert_eq!(typed_const(Datum::Int(5), SqlType::Int2).to_sql(&names), "'5'::smallint");
        assert_eq!(typed_const(Datum::Int(5), SqlType::Int4).to_sql(&names), "5");
        assert_eq!(typed_const(Datum::Int(-5), SqlType::Int4).to_sql(&names), "'-5'::integer");
        assert_eq!(crate::sql_text::deparse::deparse_expr(&int8, &names), "0::bigint");
        let coalesce = Expr::func(Func::Coalesce, vec![Expr::col(0), int8.clone()]);
        assert_eq!(coalesce.to_sql(&names), "COALESCE(b, '0'::bigint)");
        // Still a constant: folded with another, the result keeps int8's type.
        assert_eq!(const_value(&int8), Some(&Datum::Int(0)));
        assert_eq!(sql_folded(Expr::bin(BinOp::Plus, int8, Expr::int(1))), "'1'::bigint");
        assert_eq!(typed_const(Datum::Int(1), SqlType::Int8).eval(&[]).unwrap(), Datum::Int(1));
    }

    fn sql_folded(e: Expr) -> String {
        fold_constant(e).unwrap().to_sql(&[])
    }
}
