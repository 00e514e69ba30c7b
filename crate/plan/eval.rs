//! The expression evaluator: the one place an [`Expr`] is given a value, for the
//! executor's rows (filters, projections, aggregate arguments, sort and join keys)
//! and for the coordinator's scripts (`INSERT … VALUES`, `INSERT … SELECT … FROM
//! generate_series`, `SELECT setseed(0.5)`, partition bounds), as PostgreSQL's
//! `execExprInterp.c` is its one evaluator for every node and for utility statements.
//!
//! Why here, over `plan::Expr`, and not over sqlparser's tree: PostgreSQL evaluates
//! what parse analysis produced (types resolved, implicit casts made explicit,
//! operators bound to functions), never the raw parse tree; the coordinator's
//! analysis (`coordinator_sql::eval`) and the shards' (`shard_sql::expr`) both
//! produce an `Expr`, so one set of operators and casts serves both.
//!
//! Invariants:
//! - Evaluation looks at values only: every type decision was made when the `Expr`
//!   was built. Integers are checked i64 arithmetic (below), an integer with a numeric is exact numeric arithmetic
//!   ([`crate::numeric`], PostgreSQL's result scales), either with a float8 is float8
//!   arithmetic (PostgreSQL's implicit casts), division or modulo by zero is
//!   "division by zero"; comparisons use `Datum`'s order; AND and OR are SQL's
//!   three-valued logic and skip their right side when the left decides.
//! - Casts ([`cast`]) are PostgreSQL's: float8 → integer rounds half to even
//!   (`rint`, `dtoi4`), numeric → integer half away from zero (`numeric_int4`), both
//!   range-checked for the target; float8 prints as `float8out` does.
//! - An error is raised ([`EvalError`], PostgreSQL's wording and SQLSTATE), in the
//!   executor as in the coordinator's scripts: it ends the statement, as
//!   `ereport(ERROR)` does (the executor's `ExecError::Eval`; a simulated shard sends
//!   it as an ErrorResponse). The executor's path ([`Expr::eval`]) allocates nothing
//!   for integer arithmetic and comparisons; only a raised error is boxed.
//! - What is evaluated is what PostgreSQL evaluates, in its order, so the same rows
//!   meet the same errors: AND and OR stop when the left side decides (`x <> 0 AND
//!   1/x > 1` never divides by zero); a scan's quals run cheapest first, as
//!   `order_qual_clauses` sorts them (`plan::costsize::order_qual_clauses`, on the
//!   coordinator's scans and on the simulated shards), so `1/x > 1 AND x <> 0` does
//!   not divide by zero either; a target list left to right; a sort key that is an
//!   expression as each row comes in (`executor::node_sort::check_keys`), as
//!   PostgreSQL's child projection computes it.
//! - `random()` and `setseed()` use the generator the caller passes
//!   ([`ExprContext::random`]: a session's, as in a PostgreSQL backend); without one,
//!   `random()` is an error (the executor's plans never call it).
//!
//! - Integer operators are PostgreSQL's by their result type: the analysis binds
//!   `+` over two int4s as [`BinOp::IntNarrow`] (`int4pl`), computed in int8 and
//!   checked against int4's range ("integer out of range"; int2's "smallint out of
//!   range"), and over an int8 as the plain operator (`int8pl`, `int48pl`: "bigint
//!   out of range"). No int4 or int2 operation overflows int8, so the check is one
//!   comparison and nothing is allocated. A cast between integer types (`int84`) is
//!   range-checked; text to an integer is `int4in`'s ("invalid input syntax for type
//!   integer", "value … is out of range for type integer").
//!
//! Departs from PostgreSQL: a join's and a HAVING's quals keep their written order
//! (PostgreSQL sorts those by cost too). A column whose declared type the plan does
//! not know (the built-in scenarios' tables, `ColType` only) is taken as an int8, so
//! its arithmetic is int8's. Constant expressions are folded by the analysis
//! (`shard_sql::expr`'s `fold_constant`), which raises their errors while planning
//! as PostgreSQL's eval_const_expressions does.

use std::fmt;
use std::rc::Rc;

use super::{BinOp, Expr, Func, SqlType};
use crate::coordinator_sql::pgfuncs;
use crate::numeric::{Numeric, NumericError};
use crate::types::Datum;

/// What an evaluation may use beyond the row (PostgreSQL's `ExprContext` and the
/// backend's state): the session's random generator.
pub struct ExprContext<'a> {
    pub random: Option<&'a mut pgfuncs::PgRandom>,
}

impl ExprContext<'_> {
    /// The executor's: no generator (its plans never call `random()`).
    pub fn executor() -> ExprContext<'static> {
        ExprContext { random: None }
    }
    /// A script's: its session's generator.
    pub fn raising(random: &mut pgfuncs::PgRandom) -> ExprContext<'_> {
        ExprContext { random: Some(random) }
    }
}

/// `ereport(ERROR)`: the evaluation ends with `kind`. Boxed, so a result stays 16
/// bytes and the success path never allocates.
#[cold]
fn fail(kind: ErrorKind) -> Result<Datum, EvalError> {
    Err(EvalError(Box::new(kind)))
}

/// An error raised by an evaluation, with PostgreSQL's wording ([`fmt::Display`]).
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError(Box<ErrorKind>);

#[derive(Clone, Debug, PartialEq)]
pub enum ErrorKind {
    DivisionByZero,
    /// A value out of the range of this integer type.
    OutOfRange(SqlType),
    InvalidInput(SqlType, String),
    /// An operator or function applied to values it has no version for (the
    /// coordinator's analysis refuses these first; only the executor meets them).
    WrongType(&'static str),
    /// Something the sandbox does not implement, named.
    Unsupported(&'static str),
    /// A function's own message (setseed's range, to_char's picture).
    Function(String),
}

impl From<ErrorKind> for EvalError {
    fn from(kind: ErrorKind) -> EvalError {
        EvalError(Box::new(kind))
    }
}

impl EvalError {
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// PostgreSQL's SQLSTATE for it (what a simulated shard's ErrorResponse carries).
    pub fn sqlstate(&self) -> &'static str {
        match self.kind() {
            ErrorKind::DivisionByZero => "22012",
            ErrorKind::OutOfRange(_) => "22003",
            ErrorKind::InvalidInput(..) => "22P02",
            ErrorKind::WrongType(_) => "42883",
            ErrorKind::Unsupported(_) => "0A000",
            ErrorKind::Function(m) if m.contains("overflow") || m.contains("out of range") => "22003",
            ErrorKind::Function(m) if m.starts_with("cannot convert") => "0A000",
            ErrorKind::Function(m) if m.contains("substring length") => "22011",
            ErrorKind::Function(_) => "22023",
        }
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind() {
            ErrorKind::DivisionByZero => write!(f, "division by zero"),
            ErrorKind::OutOfRange(t) => write!(f, "{} out of range", t.name()),
            ErrorKind::InvalidInput(t, s) => write!(f, "invalid input syntax for type {}: \"{s}\"", t.name()),
            ErrorKind::WrongType(what) => write!(f, "operator does not exist for these types: {what}"),
            ErrorKind::Unsupported(what) => write!(f, "not supported by the sandbox: {what}"),
            ErrorKind::Function(m) => write!(f, "{m}"),
        }
    }
}

impl Expr {
    /// The executor's evaluation: an error is raised ([`EvalError`]) and ends the
    /// statement, as PostgreSQL's `ereport(ERROR)` does. Integer arithmetic and
    /// comparisons never allocate. A lone column or constant (an aggregate's
    /// argument, a sort or join key) is read directly, as PostgreSQL's `ExecJustVar` /
    /// `ExecJustConst` skip the interpreter.
    #[inline]
    pub fn eval(&self, row: &[Datum]) -> Result<Datum, EvalError> {
        match self {
            Expr::Col(i) => Ok(row[*i].clone()),
            Expr::Const(d) => Ok(d.clone()),
            _ => self.eval_in(row, &mut ExprContext::executor()),
        }
    }

    /// A qual over `row`: true only if it evaluates to true (NULL and false reject the
    /// row, as `ExecQual` does); an error is raised.
    #[inline]
    pub fn qual(&self, row: &[Datum]) -> Result<bool, EvalError> {
        Ok(self.eval(row)?.is_true())
    }

    /// Evaluates the expression over `row` (PostgreSQL's `ExecEvalExpr`).
    pub fn eval_in(&self, row: &[Datum], cx: &mut ExprContext) -> Result<Datum, EvalError> {
        match self {
            Expr::Col(i) => Ok(row[*i].clone()),
            Expr::Const(d) => Ok(d.clone()),
            Expr::Param(_, _, v) => Ok(v.clone().unwrap_or(Datum::Null)),
            Expr::Not(e) => Ok(match e.eval_in(row, cx)? {
                Datum::Null => Datum::Null,
                d => Datum::Bool(!d.is_true()),
            }),
            Expr::IsNull(e, negated) => Ok(Datum::Bool(e.eval_in(row, cx)?.is_null() != *negated)),
            Expr::Bin(op, l, r) => eval_bin(*op, l, r, row, cx),
            Expr::Func(Func::ScalarArrayOp { op, use_or, .. }, args) => scalar_array_op(*op, *use_or, args, row, cx),
            Expr::Func(Func::Case { simple }, args) => case(*simple, args, row, cx),
            Expr::Func(Func::Coalesce, args) => {
                for a in args.iter() {
                    let v = a.eval_in(row, cx)?;
                    if !v.is_null() {
                        return Ok(v);
                    }
                }
                Ok(Datum::Null)
            }
            Expr::Func(Func::MinMax { greatest }, args) => min_max(*greatest, args, row, cx),
            Expr::Func(f, args) => call(*f, args, row, cx),
            // The executor binds every InitPlan value before it evaluates
            // (`executor::node_subplan`); an unbound one is a planner bug, not a value.
            Expr::ExecParam(..) => fail(ErrorKind::Unsupported("an InitPlan value that was not bound")),
        }
    }
}

/// `CASE` (execExprInterp.c's CASE steps): the first WHEN whose condition is true
/// gives its result, else the ELSE; only the chosen result is evaluated. A simple
/// CASE's `x` is evaluated once per WHEN here (its conditions are `x = v`), which
/// differs from PostgreSQL only for a volatile `x`, which the analysis refuses.
fn case(simple: bool, args: &[Expr], row: &[Datum], cx: &mut ExprContext) -> Result<Datum, EvalError> {
    let rest = if simple { args.get(1..).unwrap_or(&[]) } else { args };
    let (pairs, default) = rest.split_at(rest.len().saturating_sub(1));
    for pair in pairs.chunks(2) {
        if let [cond, result] = pair {
            if cond.eval_in(row, cx)?.is_true() {
                return result.eval_in(row, cx);
            }
        }
    }
    match default {
        [e] => e.eval_in(row, cx),
        _ => Ok(Datum::Null),
    }
}

/// `GREATEST`/`LEAST` (`ExecEvalMinMax`): every argument evaluated, NULLs ignored,
/// the largest (smallest) of the others by the type's comparison.
fn min_max(greatest: bool, args: &[Expr], row: &[Datum], cx: &mut ExprContext) -> Result<Datum, EvalError> {
    let mut best = Datum::Null;
    for a in args {
        let v = a.eval_in(row, cx)?;
        if v.is_null() {
            continue;
        }
        let better = best.is_null() || if greatest { v > best } else { v < best };
        if better {
            best = v;
        }
    }
    Ok(best)
}

/// An operand: a column or constant read here (the common `col op const` costs no
/// further call, as PostgreSQL's `EEOP_SCAN_VAR` steps are inline), else evaluated.
#[inline(always)]
fn operand(e: &Expr, row: &[Datum], cx: &mut ExprContext) -> Result<Datum, EvalError> {
    match e {
        Expr::Col(i) => Ok(row[*i].clone()),
        Expr::Const(d) => Ok(d.clone()),
        _ => e.eval_in(row, cx),
    }
}

fn eval_bin(op: BinOp, l: &Expr, r: &Expr, row: &[Datum], cx: &mut ExprContext) -> Result<Datum, EvalError> {
    let a = operand(l, row, cx)?;
    match op {
        BinOp::And => bool_and(a, || r.eval_in(row, cx)),
        BinOp::Or => bool_or(a, || r.eval_in(row, cx)),
        _ => {
            let b = operand(r, row, cx)?;
            if a.is_null() || b.is_null() {
                return Ok(Datum::Null);
            }
            match compare(op, &a, &b) {
                Some(holds) => Ok(Datum::Bool(holds)),
                None => arith(op, &a, &b).or_else(fail),
            }
        }
    }
}

/// A comparison of two non-NULL values; None when `op` is not a comparison.
fn compare(op: BinOp, a: &Datum, b: &Datum) -> Option<bool> {
    Some(match op {
        BinOp::Eq => a == b,
        BinOp::NotEq => a != b,
        BinOp::Lt => a < b,
        BinOp::LtEq => a <= b,
        BinOp::Gt => a > b,
        BinOp::GtEq => a >= b,
        _ => return None,
    })
}

/// `x op ANY (array)` / `x op ALL (array)` (execExprInterp.c's
/// `ExecEvalScalarArrayOp`, the operator strict): the array's elements are evaluated
/// first (as its ArrayExpr is), then ANY is true at the first element it holds for,
/// ALL false at the first it fails; otherwise NULL if `x` or an element was NULL,
/// else false for ANY, true for ALL. An empty array gives false for ANY, true for ALL.
fn scalar_array_op(
    op: BinOp,
    use_or: bool,
    args: &[Expr],
    row: &[Datum],
    cx: &mut ExprContext,
) -> Result<Datum, EvalError> {
    let Some((x, elems)) = args.split_first() else {
        return fail(ErrorKind::Unsupported("a ScalarArrayOpExpr without its operand"));
    };
    let x = operand(x, row, cx)?;
    let mut values = Vec::with_capacity(elems.len());
    for e in elems {
        values.push(operand(e, row, cx)?);
    }
    if values.is_empty() {
        return Ok(Datum::Bool(!use_or));
    }
    if x.is_null() {
        return Ok(Datum::Null);
    }
    let mut saw_null = false;
    for v in &values {
        if v.is_null() {
            saw_null = true;
            continue;
        }
        let Some(holds) = compare(op, &x, v) else {
            return fail(ErrorKind::WrongType(op.sql()));
        };
        if holds == use_or {
            return Ok(Datum::Bool(use_or));
        }
    }
    Ok(if saw_null { Datum::Null } else { Datum::Bool(!use_or) })
}

/// SQL's AND: false if either side is false, else NULL if either is NULL.
fn bool_and(a: Datum, r: impl FnOnce() -> Result<Datum, EvalError>) -> Result<Datum, EvalError> {
    if a.is_false() {
        return Ok(Datum::Bool(false));
    }
    Ok(match (a, r()?) {
        (_, b) if b.is_false() => Datum::Bool(false),
        (Datum::Null, _) | (_, Datum::Null) => Datum::Null,
        _ => Datum::Bool(true),
    })
}

/// SQL's OR: true if either side is true, else NULL if either is NULL.
fn bool_or(a: Datum, r: impl FnOnce() -> Result<Datum, EvalError>) -> Result<Datum, EvalError> {
    if a.is_true() {
        return Ok(Datum::Bool(true));
    }
    Ok(match (a, r()?) {
        (_, b) if b.is_true() => Datum::Bool(true),
        (Datum::Null, _) | (_, Datum::Null) => Datum::Null,
        _ => Datum::Bool(false),
    })
}

/// `+ - * / %` over two non-NULL values: int8 arithmetic for two integers
/// (`int8pl`, …), float8 when either is a float8 (`float8pl`, …), else numeric
/// (`numeric_add`, …; an integer operand converted by `int8_numeric`).
fn arith(op: BinOp, l: &Datum, r: &Datum) -> Result<Datum, ErrorKind> {
    match (l, r) {
        (Datum::Int(a), Datum::Int(b)) => match op {
            // int4pl, int2mul, …: in int8 (no int4 or int2 operation overflows it),
            // then the result type's range.
            BinOp::IntNarrow(arith, ty) => int_in_range(int_arith(arith.op(), *a, *b)?, ty),
            _ => int_arith(op, *a, *b).map(Datum::Int),
        },
        _ if op != op.base() => arith(op.base(), l, r),
        (Datum::Float(_), _) | (_, Datum::Float(_)) => match (l.as_f64(), r.as_f64()) {
            (Some(a), Some(b)) => float_arith(op, a, b).map(Datum::Float),
            _ => Err(ErrorKind::WrongType(op.sql())),
        },
        _ => match (l.as_numeric(), r.as_numeric()) {
            (Some(a), Some(b)) => numeric_arith(op, &a, &b).map(Datum::numeric),
            _ => Err(ErrorKind::WrongType(op.sql())),
        },
    }
}

fn numeric_arith(op: BinOp, a: &Numeric, b: &Numeric) -> Result<Numeric, ErrorKind> {
    match op {
        BinOp::Plus => a.add(b),
        BinOp::Minus => a.sub(b),
        BinOp::Multiply => a.mul(b),
        BinOp::Divide => a.div(b),
        BinOp::Modulo => a.rem(b),
        _ => return Err(ErrorKind::WrongType(op.sql())),
    }
    .map_err(numeric_error)
}

/// A numeric operation's failure as the evaluator reports it.
pub fn numeric_error(e: NumericError) -> ErrorKind {
    match e {
        NumericError::DivisionByZero => ErrorKind::DivisionByZero,
        NumericError::InvalidInput(s) => ErrorKind::InvalidInput(SqlType::Numeric, s),
        other => ErrorKind::Function(other.to_string()),
    }
}

fn int_arith(op: BinOp, a: i64, b: i64) -> Result<i64, ErrorKind> {
    let v = match op {
        BinOp::Plus => a.checked_add(b),
        BinOp::Minus => a.checked_sub(b),
        BinOp::Multiply => a.checked_mul(b),
        BinOp::Divide | BinOp::Modulo if b == 0 => return Err(ErrorKind::DivisionByZero),
        BinOp::Divide => a.checked_div(b),
        // int8mod: the smallest bigint modulo -1 is 0, not an overflow.
        BinOp::Modulo if b == -1 => Some(0),
        BinOp::Modulo => a.checked_rem(b),
        _ => return Err(ErrorKind::WrongType(op.sql())),
    };
    v.ok_or(ErrorKind::OutOfRange(SqlType::Int8))
}

fn float_arith(op: BinOp, a: f64, b: f64) -> Result<f64, ErrorKind> {
    Ok(match op {
        BinOp::Plus => a + b,
        BinOp::Minus => a - b,
        BinOp::Multiply => a * b,
        BinOp::Divide | BinOp::Modulo if b == 0.0 => return Err(ErrorKind::DivisionByZero),
        BinOp::Divide => a / b,
        BinOp::Modulo => a % b,
        _ => return Err(ErrorKind::WrongType(op.sql())),
    })
}

/// A function call: its arguments evaluated left to right, then the function.
fn call(f: Func, args: &[Expr], row: &[Datum], cx: &mut ExprContext) -> Result<Datum, EvalError> {
    let mut vals = [Datum::Null, Datum::Null, Datum::Null];
    // Indexes, not `zip`: a scenario file's load calls this per row, unoptimized in
    // the tests (issue 20).
    for i in 0..args.len().min(vals.len()) {
        vals[i] = args[i].eval_in(row, cx)?;
    }
    let [a, b, c] = vals;
    let result = match f {
        Func::Cast { from, to, .. } => cast(a, from, to),
        Func::NumericTypmod { from, typmod } => numeric_typmod(a, from, typmod),
        Func::Random => random(cx),
        Func::SetSeed => setseed(&a, cx),
        Func::Substr => substr(&a, &b, (args.len() > 2).then_some(&c)),
        Func::Round => round(&a, (args.len() > 1).then_some(&b)),
        // NULLIF: `a` unless `a = b` holds (the operator strict: a NULL never equals).
        Func::NullIf => Ok(if !a.is_null() && !b.is_null() && a == b { Datum::Null } else { a }),
        // A user function or operator runs its built-in procedure on the values.
        Func::User(u) => {
            let values = [a, b].into_iter().take(args.len()).map(Expr::Const).collect();
            return u.proc.call(values).eval_in(row, cx);
        }
        _ => scalar(f, a, b),
    };
    result.or_else(fail)
}

/// The functions of one or two values that need nothing else.
fn scalar(f: Func, a: Datum, b: Datum) -> Result<Datum, ErrorKind> {
    match f {
        Func::Neg => neg(a),
        // int4um, int2um: the int8 negation, then the type's range.
        Func::IntNarrowNeg(ty) => match neg(a)? {
            Datum::Int(i) => int_in_range(i, ty),
            other => Ok(other),
        },
        Func::BoolTest(test) => match a {
            Datum::Null => Ok(Datum::Bool(test.test(None))),
            Datum::Bool(b) => Ok(Datum::Bool(test.test(Some(b)))),
            _ => Err(ErrorKind::WrongType(test.sql())),
        },
        Func::Abs => abs(a),
        Func::TextCat => Ok(text_cat(&a, &b)),
        Func::ToChar => to_char(&a, &b),
        Func::Length | Func::Upper | Func::Lower => Ok(text_func(f, &a)),
        Func::Like { negated, ilike } => Ok(like(&a, &b, negated, ilike)),
        Func::CurrentUser | Func::SessionUser => Ok(Datum::text(SESSION_USER)),
        // The executor binds a SubPlan before it evaluates (`executor::node_subplan`).
        Func::HashedSubPlan(_) => Err(ErrorKind::Unsupported("a hashed SubPlan that was not bound")),
        Func::SubPlan { .. } => Err(ErrorKind::Unsupported("a SubPlan that was not bound")),
        Func::ScalarArrayOp { .. } => Err(ErrorKind::Unsupported("a ScalarArrayOpExpr evaluated as a call")),
        Func::Case { .. } | Func::Coalesce | Func::MinMax { .. } => {
            Err(ErrorKind::Unsupported("a conditional expression evaluated as a call"))
        }
        Func::Cast { .. }
        | Func::NumericTypmod { .. }
        | Func::Random
        | Func::SetSeed
        | Func::Substr
        | Func::Round
        | Func::NullIf
        | Func::User(_) => {
            unreachable!("called with their context")
        }
    }
}

/// `round(numeric, int)` (`numeric_round`: half away from zero, a negative scale
/// rounds left of the point) and `round(float8)` (`dround`: `rint`, half to even).
fn round(a: &Datum, scale: Option<&Datum>) -> Result<Datum, ErrorKind> {
    match (a, scale) {
        (Datum::Null, _) | (_, Some(Datum::Null)) => Ok(Datum::Null),
        (Datum::Float(x), None) => Ok(Datum::Float(x.round_ties_even())),
        (Datum::Numeric(n), Some(Datum::Int(s))) => {
            // numeric_round clamps the scale (NUMERIC_MAX_RESULT_SCALE).
            let s = (*s).clamp(-2000, 2000);
            n.round(s as i32).map(Datum::numeric).map_err(numeric_error)
        }
        (Datum::Numeric(n), None) => n.round(0).map(Datum::numeric).map_err(numeric_error),
        _ => Err(ErrorKind::WrongType("round")),
    }
}

fn neg(a: Datum) -> Result<Datum, ErrorKind> {
    match a {
        Datum::Int(i) => i.checked_neg().map(Datum::Int).ok_or(ErrorKind::OutOfRange(SqlType::Int8)),
        Datum::Float(x) => Ok(Datum::Float(-x)),
        Datum::Numeric(n) => Ok(Datum::numeric(n.neg())),
        Datum::Null => Ok(Datum::Null),
        Datum::Text(_) => Err(ErrorKind::WrongType("- text")),
        Datum::Bool(_) => Err(ErrorKind::WrongType("- boolean")),
    }
}

/// `abs`: of a number (`int8abs`: the smallest bigint has none); any other value is
/// returned as it is.
fn abs(a: Datum) -> Result<Datum, ErrorKind> {
    Ok(match a {
        Datum::Int(i) => Datum::Int(i.checked_abs().ok_or(ErrorKind::OutOfRange(SqlType::Int8))?),
        Datum::Float(x) => Datum::Float(x.abs()),
        Datum::Numeric(n) => Datum::numeric(n.abs()),
        other => other,
    })
}

/// `textcat`: NULL if either is NULL. The analyser has cast both to text; a value
/// that is not one prints as `Datum` does.
fn text_cat(a: &Datum, b: &Datum) -> Datum {
    if a.is_null() || b.is_null() {
        return Datum::Null;
    }
    Datum::text(&format!("{a}{b}"))
}

fn to_char(v: &Datum, picture: &Datum) -> Result<Datum, ErrorKind> {
    match (v, picture) {
        (Datum::Int(i), Datum::Text(p)) => {
            pgfuncs::to_char_int(*i, p).map(|s| Datum::Text(Rc::new(s))).map_err(|m| ErrorKind::Function(m.to_string()))
        }
        (Datum::Null, _) | (_, Datum::Null) => Ok(Datum::Null),
        _ => Err(ErrorKind::Unsupported("to_char() of anything but an integer")),
    }
}

/// `length`, `upper`, `lower` of a text (the analyser casts the argument to text).
fn text_func(f: Func, a: &Datum) -> Datum {
    if a.is_null() {
        return Datum::Null;
    }
    let s = a.to_string();
    match f {
        Func::Length => Datum::Int(s.chars().count() as i64),
        Func::Upper => Datum::text(&s.to_uppercase()),
        _ => Datum::text(&s.to_lowercase()),
    }
}

/// The user the sandbox's session runs as, for CURRENT_USER and SESSION_USER: it has
/// no roles and no SET ROLE, so both are always this one (the superuser a fresh
/// cluster's `initdb -U postgres` creates, as the tests' real clusters have).
pub const SESSION_USER: &str = "postgres";

/// `textlike` / `texticlike` and their negations: NULL if either side is NULL.
fn like(a: &Datum, pattern: &Datum, negated: bool, ilike: bool) -> Datum {
    let (Datum::Text(_), Datum::Text(_)) = (a, pattern) else {
        return Datum::Null;
    };
    let (s, p) = (a.to_string(), pattern.to_string());
    let matched = if ilike { like_match(&s.to_lowercase(), &p.to_lowercase()) } else { like_match(&s, &p) };
    Datum::Bool(matched != negated)
}

/// `MatchText` (like_match.c): `%` matches any run of characters, `_` one character,
/// and a backslash makes the next pattern character literal (LIKE's default escape).
/// Backtracks only to the last `%`, which is enough: a later `%` can match everything
/// an earlier one could.
pub fn like_match(text: &str, pattern: &str) -> bool {
    let (t, p): (Vec<char>, Vec<char>) = (text.chars().collect(), pattern.chars().collect());
    let (mut ti, mut pi) = (0, 0);
    // Where the last `%` was, and the text position it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('%') => {
                star = Some((pi, ti));
                pi += 1;
                continue;
            }
            Some('_') => {
                ti += 1;
                pi += 1;
                continue;
            }
            Some('\\') if p.get(pi + 1) == Some(&t[ti]) => {
                ti += 1;
                pi += 2;
                continue;
            }
            Some(c) if *c != '\\' && *c == t[ti] => {
                ti += 1;
                pi += 1;
                continue;
            }
            _ => {}
        }
        match star {
            // Let the last `%` take one more character and try again.
            Some((sp, st)) => {
                star = Some((sp, st + 1));
                pi = sp + 1;
                ti = st + 1;
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|c| *c == '%')
}

/// `text_substr` / `text_substr_no_len`: characters from the 1-based `from`, `count`
/// of them; positions before 1 count but return nothing; a negative count is an error.
fn substr(s: &Datum, from: &Datum, count: Option<&Datum>) -> Result<Datum, ErrorKind> {
    let (Datum::Text(_), Datum::Int(from)) = (s, from) else { return Ok(Datum::Null) };
    let end = match count {
        None => i64::MAX,
        Some(Datum::Int(n)) if *n < 0 => {
            return Err(ErrorKind::Function("negative substring length not allowed".into()));
        }
        Some(Datum::Int(n)) => from.saturating_add(*n),
        Some(_) => return Ok(Datum::Null),
    };
    let text = s.to_string();
    let out: String = text
        .chars()
        .enumerate()
        .filter(|(i, _)| {
            let pos = *i as i64 + 1;
            pos >= *from && pos < end
        })
        .map(|(_, c)| c)
        .collect();
    Ok(Datum::text(&out))
}

/// `drandom`: the next value of the session's generator.
fn random(cx: &mut ExprContext) -> Result<Datum, ErrorKind> {
    match cx.random.as_deref_mut() {
        Some(g) => Ok(Datum::Float(g.random())),
        None => Err(ErrorKind::Unsupported("random() here")),
    }
}

/// `setseed(float8)`: seeds the session's generator; returns void (empty text).
fn setseed(seed: &Datum, cx: &mut ExprContext) -> Result<Datum, ErrorKind> {
    let Some(seed) = seed.as_f64() else {
        return Err(ErrorKind::Function("setseed() takes a number".into()));
    };
    let Some(g) = cx.random.as_deref_mut() else {
        return Err(ErrorKind::Unsupported("setseed() here"));
    };
    g.setseed(seed).map_err(ErrorKind::Function)?;
    Ok(Datum::text(""))
}

/// Converts a value of type `from` (None: untyped, a literal's text or NULL) to `to`,
/// as PostgreSQL's assignment and explicit casts do.
pub fn cast(v: Datum, from: Option<SqlType>, to: SqlType) -> Result<Datum, ErrorKind> {
    let _ = from;
    match (v, to) {
        (Datum::Null, _) => Ok(Datum::Null),
        (Datum::Int(i), t) if t.is_integer() => int_in_range(i, t),
        (Datum::Int(i), SqlType::Numeric) => Ok(Datum::numeric(Numeric::from_i64(i))),
        (Datum::Int(i), SqlType::Float8) => Ok(Datum::Float(i as f64)),
        (Datum::Float(f), t) if t.is_integer() => float_to_int(f, t),
        (Datum::Float(f), SqlType::Numeric) => Numeric::from_f64(f).map(Datum::numeric).map_err(numeric_error),
        (Datum::Float(f), SqlType::Float8) => Ok(Datum::Float(f)),
        (Datum::Numeric(n), t) if t.is_integer() => numeric_to_int(&n, t),
        (Datum::Numeric(n), SqlType::Numeric) => Ok(Datum::Numeric(n)),
        (Datum::Numeric(n), SqlType::Float8) => Ok(Datum::Float(n.to_f64())),
        // int4 → boolean (`int4_bool`: zero is false); boolean → int4 (`bool_int4`).
        (Datum::Int(i), SqlType::Bool) => Ok(Datum::Bool(i != 0)),
        (Datum::Bool(b), t) if t.is_integer() => Ok(Datum::Int(i64::from(b))),
        (Datum::Bool(b), SqlType::Bool) => Ok(Datum::Bool(b)),
        // `booltext`: a boolean as text is `true`/`false`, not `boolout`'s `t`/`f`.
        (Datum::Bool(b), SqlType::Text) => Ok(Datum::text(if b { "true" } else { "false" })),
        (Datum::Bool(_), _) | (Datum::Float(_) | Datum::Numeric(_), SqlType::Bool) => {
            Err(ErrorKind::Unsupported("this cast from or to boolean (PostgreSQL has none)"))
        }
        // The output function's text moved into the datum, not formatted through
        // `Datum`'s Display and then copied: `i::text` is a scenario file's per-row cast
        // (issue 20). `i64`'s own `to_string` is the standard library's optimized code,
        // cheaper in the unoptimized tests than `types::push_decimal`, measured.
        (Datum::Int(i), _) => Ok(Datum::Text(Rc::new(i.to_string()))),
        (d @ (Datum::Float(_) | Datum::Numeric(_)), _) => Ok(Datum::Text(Rc::new(d.to_string()))),
        (Datum::Text(s), SqlType::Text) => Ok(Datum::Text(s)),
        (Datum::Text(s), t) => text_in(&s, t),
    }
}

/// `x::numeric(p, s)`: the cast to numeric, then the length coercion
/// (`apply_typmod`: rounded to the scale, "numeric field overflow" past the precision).
pub fn numeric_typmod(
    v: Datum,
    from: Option<SqlType>,
    typmod: crate::numeric_typmod::NumericTypmod,
) -> Result<Datum, ErrorKind> {
    match cast(v, from, SqlType::Numeric)? {
        Datum::Numeric(n) => typmod.apply(&n).map(Datum::numeric).map_err(|e| ErrorKind::Function(e.to_string())),
        other => Ok(other),
    }
}

/// The text form PostgreSQL's output function gives a value (`float8out`,
/// `numeric_out`, …): a value carries its type, so `ty` is not needed.
pub fn text_out(d: &Datum, ty: Option<SqlType>) -> String {
    let _ = ty;
    d.to_string()
}

fn int_in_range(i: i64, t: SqlType) -> Result<Datum, ErrorKind> {
    let ok = match t {
        SqlType::Int2 => i16::try_from(i).is_ok(),
        SqlType::Int4 => i32::try_from(i).is_ok(),
        _ => true,
    };
    if ok {
        Ok(Datum::Int(i))
    } else {
        Err(ErrorKind::OutOfRange(t))
    }
}

/// `int2in`, `int4in`, `int8in` (numutils.c's `pg_strtoint16/32/64`): spaces around,
/// an optional sign, decimal digits. Digits past the type's range are "value … is out
/// of range for type integer" (the text as written); anything else is invalid input.
fn int_in(s: &str, t: SqlType) -> Result<Datum, ErrorKind> {
    let trimmed = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let digits = trimmed.strip_prefix(['+', '-']).unwrap_or(trimmed);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ErrorKind::InvalidInput(t, s.to_string()));
    }
    let out_of_range = || ErrorKind::Function(format!("value \"{s}\" is out of range for type {}", t.name()));
    let v = trimmed.parse::<i64>().map_err(|_| out_of_range())?;
    int_in_range(v, t).map_err(|_| out_of_range())
}

/// float8 → integer rounds half to even (`rint` in `dtoi4`).
fn float_to_int(f: f64, t: SqlType) -> Result<Datum, ErrorKind> {
    if !f.is_finite() || f.abs() >= 9.3e18 {
        return Err(ErrorKind::OutOfRange(t));
    }
    int_in_range(f.round_ties_even() as i64, t)
}

/// numeric → integer rounds half away from zero (`numeric_int4`, `numeric_int8`);
/// NaN and Infinity cannot be converted.
fn numeric_to_int(n: &Numeric, t: SqlType) -> Result<Datum, ErrorKind> {
    match n.to_i64() {
        Ok(Some(i)) => int_in_range(i, t),
        Ok(None) => Err(ErrorKind::OutOfRange(t)),
        Err(NumericError::NotFinite(what)) => {
            Err(ErrorKind::Function(format!("cannot convert {what} to {}", t.name())))
        }
        Err(e) => Err(numeric_error(e)),
    }
}

/// A type's input function over a text (`int4in`, `numeric_in`, …), spaces trimmed.
fn text_in(s: &str, t: SqlType) -> Result<Datum, ErrorKind> {
    let invalid = || ErrorKind::InvalidInput(t, s.to_string());
    let trimmed = s.trim();
    if t == SqlType::Bool {
        crate::types::parse_bool(s).map(Datum::Bool).ok_or_else(invalid)
    } else if t.is_integer() {
        int_in(s, t)
    } else if t == SqlType::Numeric {
        Numeric::parse(s).map(Datum::numeric).map_err(numeric_error)
    } else {
        trimmed.parse::<f64>().map(Datum::Float).map_err(|_| invalid())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raise(e: &Expr) -> Result<Datum, String> {
        let mut g = pgfuncs::PgRandom::new();
        e.eval_in(&[], &mut ExprContext::raising(&mut g)).map_err(|e| e.to_string())
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn the_executor_raises_as_scripts_do() {
        let div = Expr::bin(BinOp::Divide, Expr::int(1), Expr::int(0));
        assert_eq!(raise(&div), Err("division by zero".into()));
        let err = div.eval(&[]).unwrap_err();
        assert_eq!((err.to_string().as_str(), err.sqlstate()), ("division by zero", "22012"));
        // `1/0 IS NULL` is an error too, not true: the error is not a value.
        assert!(Expr::IsNull(Box::new(div.clone()), false).eval(&[]).is_err());
        // AND skips its right side when the left decides (so does CASE in PostgreSQL).
        let guarded = Expr::bin(BinOp::And, Expr::Const(Datum::Bool(false)), Expr::bin(BinOp::Eq, div, Expr::int(1)));
        assert_eq!(guarded.eval(&[]), Ok(Datum::Bool(false)));
        let big = Expr::bin(BinOp::Multiply, Expr::int(i64::MAX), Expr::int(2));
        assert_eq!(raise(&big), Err("bigint out of range".into()));
        assert_eq!(big.eval(&[]).unwrap_err().sqlstate(), "22003");
        let neg = Expr::func(Func::Neg, vec![Expr::int(i64::MIN)]);
        assert_eq!(neg.eval(&[]).map_err(|e| e.to_string()), Err("bigint out of range".into()));
        assert_eq!(Expr::bin(BinOp::Plus, Expr::col(0), Expr::int(1)).eval(&[Datum::Int(41)]), Ok(Datum::Int(42)));
    }

    /// int4um and int2um check their type's range (`-x` of the smallest int4 is no
    /// int4); int8um int8's.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn negation_checks_the_operands_range() {
        let neg = |ty, v| Expr::func(Func::IntNarrowNeg(ty), vec![Expr::int(v)]).eval(&[]).map_err(|e| e.to_string());
        assert_eq!(neg(SqlType::Int4, -2_147_483_648), Err("integer out of range".into()));
        assert_eq!(neg(SqlType::Int4, -2_147_483_647), Ok(Datum::Int(2_147_483_647)));
        assert_eq!(neg(SqlType::Int2, -32_768), Err("smallint out of range".into()));
        assert_eq!(neg(SqlType::Int2, 5), Ok(Datum::Int(-5)));
        let wide = Expr::func(Func::Neg, vec![Expr::int(-2_147_483_648)]).eval(&[]);
        assert_eq!(wide, Ok(Datum::Int(2_147_483_648)));
    }

    /// A BooleanTest is two-valued: NULL is unknown, not a NULL result.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn boolean_tests_are_never_null() {
        use crate::plan::BoolTestType::*;
        let test = |t, v: Datum| Expr::func(Func::BoolTest(t), vec![Expr::Const(v)]).eval(&[]).unwrap();
        let (t, f, n) = (Datum::Bool(true), Datum::Bool(false), Datum::Null);
        let table = [
            (IsTrue, [true, false, false]),
            (IsNotTrue, [false, true, true]),
            (IsFalse, [false, true, false]),
            (IsNotFalse, [true, false, true]),
            (IsUnknown, [false, false, true]),
            (IsNotUnknown, [true, true, false]),
        ];
        for (kind, want) in table {
            let got = [test(kind, t.clone()), test(kind, f.clone()), test(kind, n.clone())];
            assert_eq!(got, want.map(Datum::Bool), "{}", kind.sql());
            assert_eq!(kind.negated().negated(), kind);
        }
        let wrong = Expr::func(Func::BoolTest(IsTrue), vec![Expr::int(1)]).eval(&[]);
        assert!(wrong.is_err());
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn casts_round_as_postgresql_does() {
        let c = |v: f64, from| cast(Datum::Float(v), Some(from), SqlType::Int4);
        assert_eq!(c(2.5, SqlType::Float8), Ok(Datum::Int(2)));
        let half = Datum::numeric(Numeric::parse("2.5").unwrap());
        assert_eq!(cast(half, Some(SqlType::Numeric), SqlType::Int4), Ok(Datum::Int(3)));
        assert_eq!(c(3e9, SqlType::Float8), Err(ErrorKind::OutOfRange(SqlType::Int4)));
        assert_eq!(cast(Datum::Float(0.1), Some(SqlType::Float8), SqlType::Text), Ok(Datum::text("0.1")));
        assert_eq!(
            cast(Datum::text(" x"), None, SqlType::Int8),
            Err(ErrorKind::InvalidInput(SqlType::Int8, " x".into()))
        );
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn result_stays_two_words() {
        assert_eq!(std::mem::size_of::<Result<Datum, EvalError>>(), 16);
    }

    /// ScalarArrayOpExpr's three-valued result (ExecEvalScalarArrayOp): ANY is true
    /// at a match, else NULL if an element or the operand is NULL, else false; ALL
    /// the converse; an empty array is false for ANY and true for ALL.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn scalar_array_op_is_three_valued() {
        let saop = |op, use_or, x: Datum, elems: &[Datum]| {
            let mut args = vec![Expr::Const(x)];
            args.extend(elems.iter().cloned().map(Expr::Const));
            Expr::func(Func::ScalarArrayOp { op, use_or, elem: SqlType::Int4 }, args).eval(&[]).unwrap()
        };
        let (i, null) = (Datum::Int, Datum::Null);
        let (t, f) = (Datum::Bool(true), Datum::Bool(false));
        assert_eq!(saop(BinOp::Eq, true, i(2), &[i(1), i(2)]), t);
        assert_eq!(saop(BinOp::Eq, true, i(3), &[i(1), i(2)]), f);
        assert_eq!(saop(BinOp::Eq, true, i(3), &[i(1), null.clone()]), null);
        assert_eq!(saop(BinOp::Eq, true, i(1), &[i(1), null.clone()]), t);
        assert_eq!(saop(BinOp::Eq, true, null.clone(), &[i(1)]), null);
        assert_eq!(saop(BinOp::Eq, true, null.clone(), &[]), f);
        assert_eq!(saop(BinOp::NotEq, false, i(3), &[i(1), i(2)]), t);
        assert_eq!(saop(BinOp::NotEq, false, i(2), &[i(1), i(2)]), f);
        assert_eq!(saop(BinOp::NotEq, false, i(3), &[i(1), null.clone()]), null);
        assert_eq!(saop(BinOp::NotEq, false, i(1), &[null.clone(), i(1)]), f);
        assert_eq!(saop(BinOp::Lt, false, i(0), &[]), t);
        assert_eq!(saop(BinOp::Lt, true, i(5), &[i(1), i(9)]), t);
    }

    /// CASE evaluates only the branch it takes (`1/0` in another is never raised);
    /// COALESCE stops at its first value that is not NULL; GREATEST and LEAST skip
    /// NULLs; NULLIF is NULL only when its operands are equal; round(numeric) rounds
    /// half away from zero, round(float8) half to even.
    #[test]
    fn conditional_expressions_evaluate_as_postgresql_does() {
        let div0 = Expr::bin(BinOp::Divide, Expr::int(1), Expr::Col(0));
        let case = Expr::func(
            Func::Case { simple: false },
            vec![Expr::bin(BinOp::Eq, Expr::Col(0), Expr::int(0)), Expr::int(-1), div0.clone()],
        );
        assert_eq!(case.eval(&[Datum::Int(0)]).unwrap(), Datum::Int(-1));
        assert_eq!(case.eval(&[Datum::Int(1)]).unwrap(), Datum::Int(1));
        let coalesce = Expr::func(Func::Coalesce, vec![Expr::Col(1), Expr::int(7), div0]);
        assert_eq!(coalesce.eval(&[Datum::Int(0), Datum::Null]).unwrap(), Datum::Int(7));
        let greatest = Expr::func(Func::MinMax { greatest: true }, vec![Expr::Col(0), Expr::Col(1)]);
        assert_eq!(greatest.eval(&[Datum::Null, Datum::Int(3)]).unwrap(), Datum::Int(3));
        assert_eq!(greatest.eval(&[Datum::Null, Datum::Null]).unwrap(), Datum::Null);
        let least = Expr::func(Func::MinMax { greatest: false }, vec![Expr::Col(0), Expr::Col(1)]);
        assert_eq!(least.eval(&[Datum::Int(2), Datum::Int(3)]).unwrap(), Datum::Int(2));
        let nullif = Expr::func(Func::NullIf, vec![Expr::Col(0), Expr::int(1)]);
        assert_eq!(nullif.eval(&[Datum::Int(1)]).unwrap(), Datum::Null);
        assert_eq!(nullif.eval(&[Datum::Int(2)]).unwrap(), Datum::Int(2));
        let n = |s: &str| Datum::numeric(Numeric::parse(s).unwrap());
        let round = Expr::func(Func::Round, vec![Expr::Col(0), Expr::int(0)]);
        assert_eq!(round.eval(&[n("2.5")]).unwrap(), n("3"));
        assert_eq!(round.eval(&[n("-2.5")]).unwrap(), n("-3"));
        let dround = Expr::func(Func::Round, vec![Expr::Col(0)]);
        assert_eq!(dround.eval(&[Datum::Float(2.5)]).unwrap(), Datum::Float(2.0));
    }
}
