//! The coordinator's expressions (`INSERT … VALUES`, `INSERT … SELECT … FROM
//! generate_series`, `SELECT` without FROM such as `SELECT setseed(0.5)`, partition
//! bounds): analysed here into the plan's [`Expr`], then evaluated by the one
//! evaluator, [`crate::plan::eval`], which the executor uses too.
//!
//! This module is PostgreSQL's parse analysis for them (`parse_expr.c`,
//! `parse_oper.c`, `parse_coerce.c`): it resolves names, gives every expression its
//! type, binds operators and functions, and makes implicit casts explicit, so that
//! evaluation looks at values only. The types follow PostgreSQL where the seeds'
//! scripts depend on them:
//!
//! - integer literals are int4 (int8 past int4's range), other numbers numeric;
//!   `random()` is float8 (PostgreSQL 15's generator, [`pgfuncs::PgRandom`], so
//!   `setseed` reproduces PostgreSQL's rows);
//! - int / int truncates; int with numeric gives numeric, with float8 float8;
//! - an untyped string literal next to a number takes a number's type (parsed now);
//! - `||`, `length`, `upper`, `lower` cast their operands to text, so a float8 prints
//!   as `float8out` does; `to_char(int, 'FM00000')`;
//! - storing into a column casts as PostgreSQL's assignment cast does ([`cast`]).
//!
//! Invariants: names, operators, functions and their arities are checked here, before
//! any row is evaluated (PostgreSQL's parser does the same); an error of evaluation
//! (division by zero, out of range, invalid input) is reported at the expression
//! being evaluated. Nothing here panics on any input.
//!
//! Departs from PostgreSQL: arithmetic and comparisons take numbers only (a text
//! comparison is refused), AND/OR/NOT are not accepted here.
//! Integer operators are bound by their operands' types as `make_op` binds them
//! (`int4pl` for two int4s, range-checked as int4: [`BinOp::IntNarrow`]; `-x` of an
//! int4 is `int4um`, [`Func::IntNarrowNeg`]); `abs(x)` of an int4 is computed in int8
//! and checked by an implicit cast to int4 (an UPDATE's SET shows that cast in EXPLAIN
//! VERBOSE, where PostgreSQL shows none).

use sqlparser::ast::{
    self, BinaryOperator, CastKind, FunctionArg, FunctionArgExpr, FunctionArguments, UnaryOperator, Value,
};
use sqlparser::tokenizer::Location;

use super::pgfuncs;
use super::FrontError;
use crate::numeric::{Numeric, NumericError};
use crate::plan::eval::{self as evaluator, ErrorKind, EvalError, ExprContext};
use crate::plan::{BinOp, Expr, Func, SqlType};
use crate::types::Datum;

/// A value with its SQL type (None: NULL or an untyped string literal).
#[derive(Clone, Debug, PartialEq)]
pub struct Val {
    pub datum: Datum,
    pub ty: Option<SqlType>,
}

impl Val {
    /// NULL, untyped (what a value taken out of a row leaves behind).
    pub const NULL: Val = Val { datum: Datum::Null, ty: None };
}

/// Names bound in the current row (`i` of `generate_series(…) i`) and their types;
/// the values come with each row ([`Analyzed::eval`]).
pub struct Env<'a> {
    pub names: &'a [String],
    pub types: &'a [SqlType],
}

impl Env<'_> {
    pub const EMPTY: Env<'static> = Env { names: &[], types: &[] };
}

/// An analysed expression: what the evaluator runs, its type, and where it is.
#[derive(Clone, Debug)]
pub struct Analyzed {
    pub expr: Expr,
    pub ty: Option<SqlType>,
    at: Location,
}

impl Analyzed {
    /// Evaluates over one row of the [`Env`] it was analysed in.
    pub fn eval(&self, row: &[Datum], random: &mut pgfuncs::PgRandom) -> Result<Val, FrontError> {
        match self.expr.eval_in(row, &mut ExprContext::raising(random)) {
            Ok(datum) => Ok(Val { datum, ty: self.ty }),
            Err(e) => Err(error(&e, self.at)),
        }
    }
}

/// Analyses and evaluates `e` once (a VALUES item, a bound, `SELECT setseed(…)`).
pub fn eval(e: &ast::Expr, random: &mut pgfuncs::PgRandom) -> Result<Val, FrontError> {
    analyze(e, &Env::EMPTY)?.eval(&[], random)
}

/// The text form PostgreSQL gives a value (float8 as float8out does).
pub fn text_of(v: &Val) -> String {
    evaluator::text_out(&v.datum, v.ty)
}

/// Stores a value into `column` of type `target`: refused where PostgreSQL has no
/// assignment cast ([`super::parse_coerce::check_assignment`]), else [`cast`].
pub fn assign(v: Val, (column, target): (&str, SqlType), at: Location) -> Result<Datum, FrontError> {
    super::parse_coerce::check_assignment(column, target, v.ty, at)?;
    cast(v, target, at)
}

/// Converts a value to `target` as PostgreSQL's assignment (and explicit) casts do.
pub fn cast(v: Val, target: SqlType, at: Location) -> Result<Datum, FrontError> {
    evaluator::cast(v.datum, v.ty, target).map_err(|k| error(&EvalError::from(k), at))
}

/// An evaluation error as the front end reports it.
fn error(e: &EvalError, at: Location) -> FrontError {
    match e.kind() {
        ErrorKind::Unsupported(what) => FrontError::unsupported(what, at),
        _ => FrontError::at(e.to_string(), at),
    }
}

fn loc(e: &ast::Expr) -> Location {
    use sqlparser::ast::Spanned;
    e.span().start
}

/// Parse analysis of `e` in `env` (PostgreSQL's `transformExpr`).
pub fn analyze(e: &ast::Expr, env: &Env) -> Result<Analyzed, FrontError> {
    let (expr, ty) = transform(e, env)?;
    Ok(Analyzed { expr, ty, at: loc(e) })
}

/// An expression and its type (None: NULL or an untyped literal).
type Typed = (Expr, Option<SqlType>);

fn transform(e: &ast::Expr, env: &Env) -> Result<Typed, FrontError> {
    match e {
        ast::Expr::Identifier(id) => column(env, &id.value.to_lowercase(), id.span.start),
        ast::Expr::CompoundIdentifier(parts) => {
            let last = parts.last().expect("a compound identifier has parts");
            // A name bound with its qualifier (`excluded.b` of ON CONFLICT) first.
            let full: Vec<String> = parts.iter().map(|p| p.value.to_lowercase()).collect();
            let full = full.join(".");
            if env.names.iter().any(|n| *n == full) {
                return column(env, &full, last.span.start);
            }
            column(env, &last.value.to_lowercase(), last.span.start)
        }
        ast::Expr::Value(v) => literal(v, loc(e)),
        ast::Expr::Nested(inner) => transform(inner, env),
        // `-5` is one constant, as the grammar's doNegate makes it (so the smallest
        // int4 is an int4 too).
        ast::Expr::UnaryOp { op: UnaryOperator::Minus, expr } => match expr.as_ref() {
            ast::Expr::Value(Value::Number(n, long)) => literal(&Value::Number(format!("-{n}"), *long), loc(e)),
            _ => negate(transform(expr, env)?, loc(e)),
        },
        ast::Expr::UnaryOp { op: UnaryOperator::Plus, expr } => transform(expr, env),
        ast::Expr::BinaryOp { left, op, right } => binary(op, transform(left, env)?, transform(right, env)?, loc(e)),
        ast::Expr::Cast { kind: CastKind::Cast | CastKind::DoubleColon, expr, data_type, .. } => {
            let (x, from) = transform(expr, env)?;
            let typmod =
                crate::numeric_typmod::NumericTypmod::of_data_type(data_type).map_err(|m| FrontError::at(m, loc(e)))?;
            if let Some(typmod) = typmod {
                return Ok((Expr::func(Func::NumericTypmod { from, typmod }, vec![x]), Some(SqlType::Numeric)));
            }
            let to = SqlType::from_ast(data_type, loc(e))?;
            Ok((Expr::func(Func::Cast { from, to, implicit: false }, vec![x]), Some(to)))
        }
        ast::Expr::Function(f) => function(f, env, loc(e)),
        other => Err(FrontError::unsupported(format!("the expression {other} here"), loc(e))),
    }
}

fn column(env: &Env, name: &str, at: Location) -> Result<Typed, FrontError> {
    match env.names.iter().position(|n| n == name) {
        Some(i) => Ok((Expr::Col(i), Some(env.types[i]))),
        None => Err(FrontError::at(format!("column \"{name}\" does not exist"), at)),
    }
}

/// The type of an integer: int4 when it fits, else int8 (as PostgreSQL types a literal).
fn int_type(v: i64) -> SqlType {
    if i32::try_from(v).is_ok() {
        SqlType::Int4
    } else {
        SqlType::Int8
    }
}

fn literal(v: &Value, at: Location) -> Result<Typed, FrontError> {
    Ok(match v {
        Value::Number(n, _) => match n.parse::<i64>() {
            Ok(i) => (Expr::int(i), Some(int_type(i))),
            Err(_) => match Numeric::parse(n) {
                Ok(v) => (Expr::Const(Datum::numeric(v)), Some(SqlType::Numeric)),
                Err(NumericError::InvalidInput(_)) => {
                    return Err(FrontError::at(format!("invalid number \"{n}\""), at))
                }
                Err(e) => return Err(FrontError::at(e.to_string(), at)),
            },
        },
        Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => (Expr::Const(Datum::text(s)), None),
        Value::Null => (Expr::Const(Datum::Null), None),
        Value::Boolean(b) => (Expr::Const(Datum::Bool(*b)), Some(SqlType::Bool)),
        other => return Err(FrontError::unsupported(format!("the literal {other}"), at)),
    })
}

fn type_name(ty: Option<SqlType>) -> &'static str {
    ty.map(|t| t.name()).unwrap_or("unknown")
}

/// Is this a text (typed, or an untyped literal's)?
fn is_text(x: &Typed) -> bool {
    matches!(x, (_, Some(SqlType::Text)) | (Expr::Const(Datum::Text(_)), None))
}

fn negate(x: Typed, at: Location) -> Result<Typed, FrontError> {
    if is_text(&x) {
        return Err(FrontError::at("operator does not exist: - text", at));
    }
    // int4um, int2um: `-x` of the smallest int4 is out of int4's range.
    let func = match x.1 {
        Some(t @ (SqlType::Int2 | SqlType::Int4)) => Func::IntNarrowNeg(t),
        _ => Func::Neg,
    };
    Ok((Expr::func(func, vec![x.0]), x.1))
}

/// `e`, an int8 computation of an int4 or int2 value (`abs(x)`), with its result
/// checked against that type's range, as int4abs checks it.
fn narrowed(e: Expr, ty: Option<SqlType>) -> Expr {
    match ty {
        Some(t @ (SqlType::Int2 | SqlType::Int4)) => {
            Expr::func(Func::Cast { from: Some(SqlType::Int8), to: t, implicit: true }, vec![e])
        }
        _ => e,
    }
}

/// `x` as a number operand: an untyped literal is read as a number now (its type
/// taken from its text, as the evaluator did before analysis existed); a text is
/// not a number (None).
fn as_number(x: Typed) -> Option<Typed> {
    match x {
        (Expr::Const(Datum::Text(s)), None) => {
            let s = s.trim();
            match s.parse::<i64>() {
                Ok(i) => Some((Expr::int(i), Some(int_type(i)))),
                Err(_) => Numeric::parse(s).ok().map(|v| (Expr::Const(Datum::numeric(v)), Some(SqlType::Numeric))),
            }
        }
        (_, Some(SqlType::Text)) => None,
        x => Some(x),
    }
}

fn binary(op: &BinaryOperator, l: Typed, r: Typed, at: Location) -> Result<Typed, FrontError> {
    if *op == BinaryOperator::StringConcat {
        let args = vec![to_text(l), to_text(r)];
        return Ok((Expr::func(Func::TextCat, args), Some(SqlType::Text)));
    }
    let names = (type_name(l.1), type_name(r.1));
    // AND / OR (transformBoolExpr): each operand coerced to boolean.
    if let Some(bin) = match op {
        BinaryOperator::And => Some(BinOp::And),
        BinaryOperator::Or => Some(BinOp::Or),
        _ => None,
    } {
        let word = if bin == BinOp::And { "AND" } else { "OR" };
        let as_bool = |x: &Typed| {
            bool_operand(x, at, |t| {
                FrontError::at(format!("argument of {word} must be type boolean, not type {}", type_name(t)), at)
            })
        };
        return Ok((Expr::bin(bin, as_bool(&l)?, as_bool(&r)?), Some(SqlType::Bool)));
    }
    if l.1 == Some(SqlType::Bool) || r.1 == Some(SqlType::Bool) {
        return bool_comparison(op, l, r, at);
    }
    let (Some(l), Some(r)) = (as_number(l), as_number(r)) else {
        return Err(FrontError::at(format!("operator does not exist: {} {op} {}", names.0, names.1), at));
    };
    let Some(bin) = bin_op(op) else {
        return Err(FrontError::unsupported(format!("the operator {op} here"), at));
    };
    let wider = operator_type(l.1, r.1);
    let (l, r) = (coerce_operand(l, wider), coerce_operand(r, wider));
    let ty = if bin.is_comparison() { Some(SqlType::Bool) } else { arith_type(l.1, r.1) };
    // Two integers: the operator of their wider type (int4pl's range check for int4s).
    let bin = match (l.1, r.1, ty) {
        (Some(a), Some(b), Some(t)) if a.is_integer() && b.is_integer() => bin.with_int_result(t),
        _ => bin,
    };
    Ok((Expr::bin(bin, l.0, r.0), ty))
}

/// A comparison with a boolean operand (`booleq`, `boollt`, …): the other must be a
/// boolean, NULL, or an untyped literal (read now by `boolin`).
fn bool_comparison(op: &BinaryOperator, l: Typed, r: Typed, at: Location) -> Result<Typed, FrontError> {
    let refuse = || FrontError::at(format!("operator does not exist: {} {op} {}", type_name(l.1), type_name(r.1)), at);
    let bin = bin_op(op).filter(|b| b.is_comparison()).ok_or_else(refuse)?;
    let as_bool = |x: &Typed| bool_operand(x, at, |_| refuse());
    Ok((Expr::bin(bin, as_bool(&l)?, as_bool(&r)?), Some(SqlType::Bool)))
}

/// An operand where PostgreSQL wants a boolean: a boolean, NULL, or an untyped literal
/// (read now by `boolin`); any other type is `wrong(its type)`.
fn bool_operand(
    x: &Typed,
    at: Location,
    wrong: impl FnOnce(Option<SqlType>) -> FrontError,
) -> Result<Expr, FrontError> {
    match x {
        (e, Some(SqlType::Bool)) | (e @ Expr::Const(Datum::Null), None) => Ok(e.clone()),
        (Expr::Const(d @ Datum::Text(_)), None) => {
            evaluator::cast(d.clone(), None, SqlType::Bool).map(Expr::Const).map_err(|k| error(&EvalError::from(k), at))
        }
        (_, t) => Err(wrong(*t)),
    }
}

/// The operand type of the operator `make_op` (parse_oper.c) resolves for two numbers
/// of different categories: float8 over anything, numeric over integers; None when no
/// operand needs a coercion (integers of either width are one type to the sandbox).
fn operator_type(l: Option<SqlType>, r: Option<SqlType>) -> Option<SqlType> {
    match (l?, r?) {
        (a, b) if a == b => None,
        (SqlType::Float8, _) | (_, SqlType::Float8) => Some(SqlType::Float8),
        (SqlType::Numeric, _) | (_, SqlType::Numeric) => Some(SqlType::Numeric),
        _ => None,
    }
}

/// An operand coerced to the operator's type `to` (parse_coerce.c's `coerce_type`): a
/// constant becomes a constant of that type, as the planner folds it (`amount * 2` is
/// `amount * '2'::numeric`, sent as `2::numeric`); anything else an implicit cast
/// (`(k)::numeric`, which deparse.c leaves out of the remote query).
fn coerce_operand(x: Typed, to: Option<SqlType>) -> Typed {
    let (Some(to), Some(from)) = (to, x.1) else { return x };
    if from == to || from == SqlType::Text {
        return x;
    }
    match x.0 {
        Expr::Const(Datum::Null) => (Expr::Const(Datum::Null), Some(from)),
        Expr::Const(d) => match evaluator::cast(d.clone(), Some(from), to) {
            Ok(v) => (Expr::Const(v), Some(to)),
            Err(_) => (Expr::Const(d), Some(from)),
        },
        e => (Expr::func(Func::Cast { from: Some(from), to, implicit: true }, vec![e]), Some(to)),
    }
}

/// The type of `+ - * / %`: integer if both are (the wider: int8 if either is, int2
/// if both are), float8 if either is, else numeric; NULL takes the other's.
fn arith_type(l: Option<SqlType>, r: Option<SqlType>) -> Option<SqlType> {
    use SqlType::*;
    let (Some(a), Some(b)) = (l, r) else { return l.or(r) };
    Some(match (a, b) {
        (Float8, _) | (_, Float8) => Float8,
        (Int8, b) | (b, Int8) if b.is_integer() => Int8,
        (Int2, Int2) => Int2,
        (a, b) if a.is_integer() && b.is_integer() => Int4,
        _ => Numeric,
    })
}

fn bin_op(op: &BinaryOperator) -> Option<BinOp> {
    Some(match op {
        BinaryOperator::Plus => BinOp::Plus,
        BinaryOperator::Minus => BinOp::Minus,
        BinaryOperator::Multiply => BinOp::Multiply,
        BinaryOperator::Divide => BinOp::Divide,
        BinaryOperator::Modulo => BinOp::Modulo,
        BinaryOperator::Eq => BinOp::Eq,
        BinaryOperator::NotEq => BinOp::NotEq,
        BinaryOperator::Lt => BinOp::Lt,
        BinaryOperator::LtEq => BinOp::LtEq,
        BinaryOperator::Gt => BinOp::Gt,
        BinaryOperator::GtEq => BinOp::GtEq,
        _ => return None,
    })
}

/// `x` cast to text (its output function), unless it is one already.
fn to_text(x: Typed) -> Expr {
    match x {
        (e, Some(SqlType::Text)) => e,
        (e, from) => Expr::func(Func::Cast { from, to: SqlType::Text, implicit: false }, vec![e]),
    }
}

fn args(f: &ast::Function, at: Location) -> Result<Vec<&ast::Expr>, FrontError> {
    match &f.args {
        FunctionArguments::None => Ok(vec![]),
        FunctionArguments::List(list) => list
            .args
            .iter()
            .map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
                _ => Err(FrontError::unsupported(format!("the argument form in {}()", f.name), at)),
            })
            .collect(),
        FunctionArguments::Subquery(_) => Err(FrontError::unsupported("a subquery as function argument", at)),
    }
}

/// A function call, bound to the evaluator's [`Func`] (`ParseFuncOrColumn`).
fn function(f: &ast::Function, env: &Env, at: Location) -> Result<Typed, FrontError> {
    let name = f.name.to_string().to_lowercase();
    let a = args(f, at)?;
    let (func, arity) = match name.as_str() {
        "random" => (Func::Random, 0),
        "setseed" => (Func::SetSeed, 1),
        "to_char" => (Func::ToChar, 2),
        "abs" => (Func::Abs, 1),
        "length" => (Func::Length, 1),
        "upper" => (Func::Upper, 1),
        "lower" => (Func::Lower, 1),
        other => return Err(FrontError::at(format!("function {other}() is not available in the sandbox"), at)),
    };
    if a.len() != arity {
        return Err(FrontError::at(format!("function {name} with {} arguments does not exist", a.len()), at));
    }
    let typed: Vec<Typed> = a.iter().map(|e| transform(e, env)).collect::<Result<_, _>>()?;
    call(func, typed, at)
}

/// The call's arguments coerced as the function takes them, and its result type.
fn call(func: Func, mut typed: Vec<Typed>, at: Location) -> Result<Typed, FrontError> {
    let ty = match func {
        Func::Random => Some(SqlType::Float8),
        Func::SetSeed => {
            let seed = typed.pop().and_then(as_number);
            let seed = seed.ok_or_else(|| FrontError::at("setseed() takes a number", at))?;
            typed.push(seed);
            Some(SqlType::Text)
        }
        Func::Abs => typed[0].1,
        Func::Length | Func::Upper | Func::Lower => {
            let arg = to_text(typed.pop().expect("one argument"));
            typed.push((arg, Some(SqlType::Text)));
            Some(if func == Func::Length { SqlType::Int4 } else { SqlType::Text })
        }
        _ => Some(SqlType::Text),
    };
    let e = Expr::func(func, typed.into_iter().map(|(e, _)| e).collect());
    Ok((if func == Func::Abs { narrowed(e, ty) } else { e }, ty))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyzed(sql: &str, names: &[&str], types: &[SqlType]) -> Expr {
        let e = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_expr())
            .unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        analyze(&e, &Env { names: &names, types }).unwrap().expr
    }

    /// make_op's implicit cast of a constant operand, folded: an integer next to a
    /// numeric is the numeric `2` (deparse.c sends `2::numeric`), next to a float8 a
    /// float8; two integers stay integers.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_constant_operand_takes_the_operators_type() {
        let names = ["amount", "k", "r"];
        let types = [SqlType::Numeric, SqlType::Int4, SqlType::Float8];
        let sql = |e: &str| {
            crate::sql_text::deparse::deparse_expr(
                &analyzed(e, &names, &types),
                &["amount".into(), "k".into(), "r".into()],
            )
        };
        assert_eq!(sql("amount * 2"), "(amount * 2::numeric)");
        assert_eq!(sql("1 + amount"), "(1::numeric + amount)");
        assert_eq!(sql("r * 2"), "(r * 2::double precision)");
        assert_eq!(sql("k + 1"), "(k + 1)");
        assert_eq!(sql("k + 1.5"), "(k + 1.5)");
    }
}
