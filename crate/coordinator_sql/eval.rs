//! Evaluating the expressions of `INSERT … SELECT`, `INSERT … VALUES` and
//! `SELECT` without FROM (`SELECT setseed(0.5)`), row by row, with PostgreSQL's
//! types and casts where the seeds' scripts depend on them:
//!
//! - integer literals are int4/int8, others numeric; `random()` is float8
//!   (PostgreSQL 15's generator, [`pgfuncs::PgRandom`], so `setseed` reproduces
//!   PostgreSQL's rows);
//! - int / int truncates; int with numeric gives numeric, with float8 float8;
//! - `||` concatenates the text forms; `to_char(int, 'FM00000')`;
//! - storing into a column casts as PostgreSQL's assignment cast does: float8 to an
//!   integer rounds half to even (`rint`), numeric to an integer half away from zero.
//!
//! The planner does not use this module: queries run in the executor.

use sqlparser::ast::{
    self, BinaryOperator, CastKind, DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, UnaryOperator,
    Value,
};
use sqlparser::tokenizer::Location;

use super::pgfuncs;
use super::statement::SqlType;
use super::FrontError;
use crate::types::Datum;

/// A value with its SQL type (None: NULL or an untyped string literal).
#[derive(Clone, Debug, PartialEq)]
pub struct Val {
    pub datum: Datum,
    pub ty: Option<SqlType>,
}

impl Val {
    fn int(v: i64) -> Val {
        Val { datum: Datum::Int(v), ty: Some(if i32::try_from(v).is_ok() { SqlType::Int4 } else { SqlType::Int8 }) }
    }
    fn null() -> Val {
        Val { datum: Datum::Null, ty: None }
    }
    fn text(s: String) -> Val {
        Val { datum: Datum::text(&s), ty: Some(SqlType::Text) }
    }
}

/// Names bound in the current row (`i` of `generate_series(…) i`).
pub struct Env<'a> {
    pub names: &'a [String],
    pub values: &'a [Datum],
    pub types: &'a [SqlType],
}

impl Env<'_> {
    pub const EMPTY: Env<'static> = Env { names: &[], values: &[], types: &[] };
}

/// The state an evaluation may change: the session's random generator.
pub struct EvalContext<'a> {
    pub random: &'a mut pgfuncs::PgRandom,
}

fn loc(e: &Expr) -> Location {
    use sqlparser::ast::Spanned;
    e.span().start
}

pub fn eval(e: &Expr, env: &Env, cx: &mut EvalContext) -> Result<Val, FrontError> {
    match e {
        Expr::Identifier(id) => lookup(env, &id.value.to_lowercase(), id.span.start),
        Expr::CompoundIdentifier(parts) => {
            let last = parts.last().expect("a compound identifier has parts");
            lookup(env, &last.value.to_lowercase(), last.span.start)
        }
        Expr::Value(v) => literal(v, loc(e)),
        Expr::Nested(inner) => eval(inner, env, cx),
        Expr::UnaryOp { op: UnaryOperator::Minus, expr } => {
            let v = eval(expr, env, cx)?;
            Ok(match v.datum {
                Datum::Int(i) => Val::int(-i),
                Datum::Float(f) => Val { datum: Datum::Float(-f), ty: v.ty },
                Datum::Null => Val::null(),
                Datum::Text(_) => return Err(FrontError::at("operator does not exist: - text", loc(e))),
            })
        }
        Expr::UnaryOp { op: UnaryOperator::Plus, expr } => eval(expr, env, cx),
        Expr::BinaryOp { left, op, right } => {
            let l = eval(left, env, cx)?;
            let r = eval(right, env, cx)?;
            binary(op, l, r, loc(e))
        }
        Expr::Cast { kind: CastKind::Cast | CastKind::DoubleColon, expr, data_type, .. } => {
            let v = eval(expr, env, cx)?;
            let target = SqlType::from_ast(data_type, loc(e))?;
            cast(v, target, loc(e)).map(|datum| Val { datum, ty: Some(target) })
        }
        Expr::Function(f) => function(f, env, cx, loc(e)),
        other => Err(FrontError::unsupported(format!("the expression {other} here"), loc(e))),
    }
}

fn lookup(env: &Env, name: &str, at: Location) -> Result<Val, FrontError> {
    match env.names.iter().position(|n| n == name) {
        Some(i) => Ok(Val { datum: env.values[i].clone(), ty: Some(env.types[i]) }),
        None => Err(FrontError::at(format!("column \"{name}\" does not exist"), at)),
    }
}

fn literal(v: &Value, at: Location) -> Result<Val, FrontError> {
    Ok(match v {
        Value::Number(n, _) => match n.parse::<i64>() {
            Ok(i) => Val::int(i),
            Err(_) => match n.parse::<f64>() {
                Ok(f) => Val { datum: Datum::Float(f), ty: Some(SqlType::Numeric) },
                Err(_) => return Err(FrontError::at(format!("invalid number \"{n}\""), at)),
            },
        },
        Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => Val { datum: Datum::text(s), ty: None },
        Value::Null => Val::null(),
        Value::Boolean(b) => Val { datum: Datum::Int(*b as i64), ty: Some(SqlType::Int4) },
        other => return Err(FrontError::unsupported(format!("the literal {other}"), at)),
    })
}

fn is_float8(v: &Val) -> bool {
    v.ty == Some(SqlType::Float8)
}

fn binary(op: &BinaryOperator, l: Val, r: Val, at: Location) -> Result<Val, FrontError> {
    if *op == BinaryOperator::StringConcat {
        if l.datum.is_null() || r.datum.is_null() {
            return Ok(Val { datum: Datum::Null, ty: Some(SqlType::Text) });
        }
        return Ok(Val::text(format!("{}{}", text_of(&l), text_of(&r))));
    }
    if l.datum.is_null() || r.datum.is_null() {
        return Ok(Val::null());
    }
    let (Some(a), Some(b)) = (number_of(&l), number_of(&r)) else {
        return Err(FrontError::at(format!("operator does not exist: {} {op} {}", type_name(&l), type_name(&r)), at));
    };
    if let (Num::Int(x), Num::Int(y)) = (a, b) {
        let v = match op {
            BinaryOperator::Plus => x.checked_add(y),
            BinaryOperator::Minus => x.checked_sub(y),
            BinaryOperator::Multiply => x.checked_mul(y),
            BinaryOperator::Divide | BinaryOperator::Modulo if y == 0 => {
                return Err(FrontError::at("division by zero", at))
            }
            BinaryOperator::Divide => x.checked_div(y),
            BinaryOperator::Modulo => x.checked_rem(y),
            other => return comparison(other, &l, &r, at),
        };
        return v.map(Val::int).ok_or_else(|| FrontError::at("bigint out of range", at));
    }
    let ty = if is_float8(&l) || is_float8(&r) { SqlType::Float8 } else { SqlType::Numeric };
    let (x, y) = (a.f64(), b.f64());
    let v = match op {
        BinaryOperator::Plus => x + y,
        BinaryOperator::Minus => x - y,
        BinaryOperator::Multiply => x * y,
        BinaryOperator::Divide | BinaryOperator::Modulo if y == 0.0 => {
            return Err(FrontError::at("division by zero", at))
        }
        BinaryOperator::Divide => x / y,
        BinaryOperator::Modulo => x % y,
        other => return comparison(other, &l, &r, at),
    };
    Ok(Val { datum: Datum::Float(v), ty: Some(ty) })
}

fn comparison(op: &BinaryOperator, l: &Val, r: &Val, at: Location) -> Result<Val, FrontError> {
    let ord = l.datum.cmp(&r.datum);
    let b = match op {
        BinaryOperator::Eq => ord.is_eq(),
        BinaryOperator::NotEq => !ord.is_eq(),
        BinaryOperator::Lt => ord.is_lt(),
        BinaryOperator::LtEq => ord.is_le(),
        BinaryOperator::Gt => ord.is_gt(),
        BinaryOperator::GtEq => ord.is_ge(),
        other => return Err(FrontError::unsupported(format!("the operator {other} here"), at)),
    };
    Ok(Val { datum: Datum::Int(b as i64), ty: Some(SqlType::Int4) })
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Real(f64),
}

impl Num {
    fn f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Real(f) => f,
        }
    }
}

fn number_of(v: &Val) -> Option<Num> {
    match &v.datum {
        Datum::Int(i) => Some(Num::Int(*i)),
        Datum::Float(f) => Some(Num::Real(*f)),
        // An untyped literal takes the other operand's type, as in PostgreSQL.
        Datum::Text(s) if v.ty.is_none() => {
            s.trim().parse::<i64>().map(Num::Int).ok().or_else(|| s.trim().parse().ok().map(Num::Real))
        }
        _ => None,
    }
}

fn type_name(v: &Val) -> &'static str {
    v.ty.map(|t| t.name()).unwrap_or("unknown")
}

/// The text form PostgreSQL gives a value (float8 as float8out does).
pub fn text_of(v: &Val) -> String {
    match (&v.datum, v.ty) {
        (Datum::Float(f), Some(SqlType::Float8)) => pgfuncs::float8_out(*f),
        (d, _) => d.to_string(),
    }
}

/// Converts a value to `target` as PostgreSQL's assignment (and explicit) casts do.
pub fn cast(v: Val, target: SqlType, at: Location) -> Result<Datum, FrontError> {
    let out_of_range = |what: &str| FrontError::at(format!("{what} out of range"), at);
    let range_name = match target {
        SqlType::Int2 => "smallint",
        SqlType::Int4 => "integer",
        _ => "bigint",
    };
    let int_range = |i: i64| -> Result<Datum, FrontError> {
        let ok = match target {
            SqlType::Int2 => i16::try_from(i).is_ok(),
            SqlType::Int4 => i32::try_from(i).is_ok(),
            _ => true,
        };
        if ok {
            Ok(Datum::Int(i))
        } else {
            Err(out_of_range(range_name))
        }
    };
    match (v.datum, target) {
        (Datum::Null, _) => Ok(Datum::Null),
        (Datum::Int(i), SqlType::Int2 | SqlType::Int4 | SqlType::Int8) => int_range(i),
        (Datum::Int(i), SqlType::Numeric | SqlType::Float8) => Ok(Datum::Float(i as f64)),
        (Datum::Float(f), SqlType::Int2 | SqlType::Int4 | SqlType::Int8) => {
            if !f.is_finite() || f.abs() >= 9.3e18 {
                return Err(out_of_range(range_name));
            }
            // float8 → int rounds half to even (rint); numeric → int half away from zero.
            let r = if v.ty == Some(SqlType::Float8) { f.round_ties_even() } else { f.round() };
            int_range(r as i64)
        }
        (Datum::Float(f), SqlType::Numeric | SqlType::Float8) => Ok(Datum::Float(f)),
        (d @ Datum::Int(_) | d @ Datum::Float(_), SqlType::Text) => {
            Ok(Datum::text(&text_of(&Val { datum: d, ty: v.ty })))
        }
        (Datum::Text(s), SqlType::Text) => Ok(Datum::Text(s)),
        (Datum::Text(s), t) => {
            let trimmed = s.trim();
            match t {
                SqlType::Int2 | SqlType::Int4 | SqlType::Int8 => trimmed
                    .parse::<i64>()
                    .map_err(|_| FrontError::at(format!("invalid input syntax for type {}: \"{s}\"", t.name()), at))
                    .and_then(int_range),
                _ => trimmed
                    .parse::<f64>()
                    .map(Datum::Float)
                    .map_err(|_| FrontError::at(format!("invalid input syntax for type {}: \"{s}\"", t.name()), at)),
            }
        }
    }
}

fn args(f: &ast::Function, at: Location) -> Result<Vec<&Expr>, FrontError> {
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

fn function(f: &ast::Function, env: &Env, cx: &mut EvalContext, at: Location) -> Result<Val, FrontError> {
    let name = f.name.to_string().to_lowercase();
    let a = args(f, at)?;
    let arity = |n: usize| -> Result<(), FrontError> {
        if a.len() == n {
            Ok(())
        } else {
            Err(FrontError::at(format!("function {name} with {} arguments does not exist", a.len()), at))
        }
    };
    match name.as_str() {
        "random" => {
            arity(0)?;
            Ok(Val { datum: Datum::Float(cx.random.random()), ty: Some(SqlType::Float8) })
        }
        "setseed" => {
            arity(1)?;
            let v = eval(a[0], env, cx)?;
            let seed = number_of(&v).map(Num::f64).ok_or_else(|| FrontError::at("setseed() takes a number", at))?;
            cx.random.setseed(seed).map_err(|m| FrontError::at(m, at))?;
            Ok(Val { datum: Datum::text(""), ty: Some(SqlType::Text) })
        }
        "to_char" => {
            arity(2)?;
            let v = eval(a[0], env, cx)?;
            let fmt = eval(a[1], env, cx)?;
            let (Datum::Int(i), Datum::Text(pattern)) = (&v.datum, &fmt.datum) else {
                if v.datum.is_null() || fmt.datum.is_null() {
                    return Ok(Val { datum: Datum::Null, ty: Some(SqlType::Text) });
                }
                return Err(FrontError::unsupported("to_char() of anything but an integer", at));
            };
            pgfuncs::to_char_int(*i, pattern).map(Val::text).map_err(|m| FrontError::at(m.to_string(), at))
        }
        "abs" => {
            arity(1)?;
            let v = eval(a[0], env, cx)?;
            Ok(match v.datum {
                Datum::Int(i) => Val::int(i.abs()),
                Datum::Float(x) => Val { datum: Datum::Float(x.abs()), ty: v.ty },
                _ => v,
            })
        }
        "length" | "upper" | "lower" => {
            arity(1)?;
            let v = eval(a[0], env, cx)?;
            if v.datum.is_null() {
                return Ok(Val::null());
            }
            let s = text_of(&v);
            Ok(match name.as_str() {
                "length" => Val::int(s.chars().count() as i64),
                "upper" => Val::text(s.to_uppercase()),
                _ => Val::text(s.to_lowercase()),
            })
        }
        other => Err(FrontError::at(format!("function {other}() is not available in the sandbox"), at)),
    }
}

/// Type of a column declared with `t`, for a `DataType` in a cast.
pub fn data_type(t: &DataType, at: Location) -> Result<SqlType, FrontError> {
    SqlType::from_ast(t, at)
}
