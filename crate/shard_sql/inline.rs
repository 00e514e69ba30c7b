//! User-defined functions and operators when an expression is planned: the lookup of
//! a name in the session's `pg_proc` / `pg_operator` ([`Routines`]), and the inlining
//! of a SQL function, as PostgreSQL 15's `inline_function` (optimizer/util/clauses.c)
//! does it during `eval_const_expressions`.
//!
//! A SQL function whose body is `SELECT <expression>` is replaced by that expression,
//! its parameters by the call's arguments (coerced to the declared types), when all of
//! these hold (PostgreSQL's conditions; otherwise the call stays a call):
//! - the body is one expression, with no FROM, WHERE, GROUP BY, … (the sandbox refuses
//!   any other body at CREATE FUNCTION);
//! - an IMMUTABLE function's body calls nothing mutable, a STABLE one's nothing volatile;
//! - a STRICT function's body is strict (no AND, OR, NOT, IS [NOT] NULL) and reads every
//!   parameter;
//! - a parameter read more than once is not given an argument that is volatile, holds a
//!   SubPlan, or costs more than ten operators.
//!
//! The inlined expression is then an ordinary one: postgres_fdw ships it when its parts
//! are built in (`coordinator_sql::shippable`), and EXPLAIN shows it, not the call.
//! A call that PostgreSQL would not inline runs the function for each row
//! (`fmgr_sql`); the sandbox does not run SQL functions, so it refuses such a call by name.
//!
//! The routines are the planning session's: [`with_routines`] makes a node's
//! routines the ones expressions see while a statement is planned (as PostgreSQL's
//! syscache is the backend's), and nothing is in scope otherwise.
//!
//! Where it departs from PostgreSQL: argument types are matched by family (the integer
//! types are one), and an explicit `::text` of a number counts as mutable (the sandbox
//! cannot tell it from `anytextcat`'s, which is stable).

use std::cell::RefCell;

use sqlparser::ast::BinaryOperator;
use sqlparser::dialect::PostgreSqlDialect;
#[cfg(feature = "sql")]
use sqlparser::parser::Parser;

use super::expr::{ExprPlanner, Relation, Scope};
use super::source::Source;
use super::SqlError;
use crate::plan::userfunc::{Proc, UserFunc, Volatility};
use crate::plan::{BinOp, Expr, Func, SqlType};
use crate::types::{ColType, Column};

/// A function of `pg_proc` the user created.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionDef {
    pub name: String,
    pub params: Vec<SqlType>,
    pub returns: SqlType,
    pub volatility: Volatility,
    pub strict: bool,
    pub body: FunctionBody,
    /// Added to the extension postgres_fdw (`ALTER EXTENSION … ADD FUNCTION`).
    pub in_extension: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FunctionBody {
    /// `LANGUAGE sql`: the body's one expression, its parameters written `"$1"`, `"$2"`, …
    Sql(String),
    /// `LANGUAGE internal`: the built-in procedure it runs.
    Internal(Proc),
}

/// An operator of `pg_operator` the user created (binary; `left` None: prefix).
#[derive(Clone, Debug, PartialEq)]
pub struct OperatorDef {
    pub name: String,
    pub left: Option<SqlType>,
    pub right: SqlType,
    pub proc: Proc,
    /// Its procedure's: immutable for a built-in, the declared one for a user function.
    pub volatility: Volatility,
    pub in_extension: bool,
}

/// The user's functions and operators on one node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Routines {
    pub functions: Vec<FunctionDef>,
    pub operators: Vec<OperatorDef>,
}

thread_local! {
    static IN_SCOPE: RefCell<Routines> = RefCell::new(Routines::default());
}

/// Runs `f` with `routines` the ones expressions see (then the previous ones again).
pub fn with_routines<R>(routines: &Routines, f: impl FnOnce() -> R) -> R {
    let previous = IN_SCOPE.with(|s| std::mem::replace(&mut *s.borrow_mut(), routines.clone()));
    let out = f();
    IN_SCOPE.with(|s| *s.borrow_mut() = previous);
    out
}

fn family(t: SqlType) -> ColType {
    t.col_type()
}

/// The user operator `name` for operands of type families `left`, `right` (an
/// integer also fits a numeric operand: an implicit cast).
pub(super) fn find_operator(name: &str, left: ColType, right: ColType) -> Option<OperatorDef> {
    let fits = |declared: SqlType, given: ColType| {
        family(declared) == given || family(declared) == ColType::Numeric && given == ColType::Int
    };
    IN_SCOPE.with(|s| {
        let s = s.borrow();
        s.operators
            .iter()
            .find(|o| o.name == name && o.left.is_some_and(|l| fits(l, left)) && fits(o.right, right))
            .cloned()
    })
}

/// The user function `name` with `n` arguments, if one exists.
pub(super) fn find_function(name: &str, types: &[ColType]) -> Option<FunctionDef> {
    IN_SCOPE.with(|s| {
        let s = s.borrow();
        let same_arity = || s.functions.iter().filter(|f| f.name == name && f.params.len() == types.len());
        let exact = same_arity().find(|f| f.params.iter().zip(types).all(|(p, t)| family(*p) == *t));
        exact.or_else(|| same_arity().next()).cloned()
    })
}

impl ExprPlanner<'_> {
    /// `l op r` for a user operator `op` (`===`, or `OPERATOR(public.===)`).
    pub(super) fn user_operator(
        &self,
        op: &BinaryOperator,
        (l, r): (Expr, Expr),
        (lt, rt): (ColType, ColType),
        position: Option<usize>,
    ) -> Result<Expr, SqlError> {
        let name = match op {
            BinaryOperator::Custom(name) => name.clone(),
            BinaryOperator::PGCustomBinaryOperator(parts) => match parts.as_slice() {
                [schema, name] if schema == "public" || schema == "pg_catalog" => name.clone(),
                [name] => name.clone(),
                _ => return Err(SqlError::unsupported(format!("operator {op}"), position)),
            },
            other => return Err(SqlError::unsupported(format!("operator {other}"), position)),
        };
        let Some(def) = find_operator(&name, lt, rt) else {
            return Err(SqlError::new(
                format!("operator does not exist: {} {name} {}", type_name(lt), type_name(rt)),
                position,
            ));
        };
        let left = coerce_arg(l, lt, def.left.unwrap_or(def.right), position)?;
        let right = coerce_arg(r, rt, def.right, position)?;
        let u = UserFunc {
            name: crate::plan::userfunc::PgName::new(&def.name),
            proc: def.proc,
            operator: true,
            volatility: def.volatility,
            in_extension: def.in_extension,
        };
        Ok(Expr::func(Func::User(u), vec![left, right]))
    }

    /// A call of a user function with planned `args` of `types`: a `LANGUAGE
    /// internal` one as itself, a SQL one inlined (or refused when PostgreSQL would
    /// not inline it). None: no user function of that name.
    pub(super) fn user_function(
        &self,
        name: &str,
        args: Vec<Expr>,
        types: &[ColType],
        position: Option<usize>,
    ) -> Result<Option<Expr>, SqlError> {
        let Some(def) = find_function(name, types) else {
            return Ok(None);
        };
        let mut coerced = Vec::new();
        for ((a, t), p) in args.into_iter().zip(types).zip(&def.params) {
            if *t != family(*p) && !(family(*p) == ColType::Numeric && *t == ColType::Int) {
                let list: Vec<&str> = types.iter().map(|t| type_name(*t)).collect();
                return Err(SqlError::new(format!("function {name}({}) does not exist", list.join(", ")), position));
            }
            coerced.push(coerce_arg(a, *t, *p, position)?);
        }
        match &def.body {
            FunctionBody::Internal(proc) => {
                let u = UserFunc {
                    name: crate::plan::userfunc::PgName::new(&def.name),
                    proc: *proc,
                    operator: false,
                    volatility: def.volatility,
                    in_extension: def.in_extension,
                };
                Ok(Some(Expr::func(Func::User(u), coerced)))
            }
            FunctionBody::Sql(body) => inline_function(&def, body, coerced, position).map(Some),
        }
    }
}

fn type_name(t: ColType) -> &'static str {
    match t {
        ColType::Int => "integer",
        ColType::Numeric => "numeric",
        ColType::Float => "double precision",
        ColType::Text => "text",
        ColType::Bool => "boolean",
    }
}

/// An argument of family `from` as a parameter of type `to`: an integer becomes a
/// numeric by an implicit cast (a constant converted now), as `make_fn_arguments` does.
fn coerce_arg(e: Expr, from: ColType, to: SqlType, position: Option<usize>) -> Result<Expr, SqlError> {
    if from == family(to) || matches!(e, Expr::Const(crate::types::Datum::Null)) {
        return Ok(e);
    }
    if let Expr::Const(d) = &e {
        return super::expr::convert_const(d, to, position).map(Expr::Const);
    }
    Ok(Expr::func(Func::Cast { from: Some(SqlType::Int8), to, implicit: true }, vec![e]))
}

/// Plans a SQL function's body over its parameters (column k is `$k+1`): the body's
/// expression and its type. Used at CREATE FUNCTION (to check it) and at each call.
pub fn plan_body(body: &str, params: &[SqlType]) -> Result<Expr, SqlError> {
    let dialect = PostgreSqlDialect {};
    let src = Source::tokenize(body, &dialect)?;
    // The page's first module reads it with its own parser (`fdw_grammar`, issue 20).
    #[cfg(not(feature = "sql"))]
    let expr = super::fdw_grammar::parse_expression(&src)?;
    #[cfg(feature = "sql")]
    let expr = Parser::new(&dialect)
        .with_recursion_limit(super::nesting::MAX_RECURSION)
        .with_tokens_with_locations(src.tokens.clone())
        .parse_expr()
        .map_err(|e| SqlError::new(format!("syntax error in the function's body: {e}"), None))?;
    let columns = params.iter().enumerate().map(|(k, t)| Column::typed(&format!("${}", k + 1), *t)).collect();
    let rel = Relation { table: String::new(), alias: None, columns, members: vec![] };
    let planner = ExprPlanner { src: &src, rel: &rel };
    // Analysed, not planned: a constant that raises (`1 / 0`) is the executor's.
    super::expr::quietly(|| {
        planner.plan(&expr, &mut Scope::Rows { no_agg: "aggregate functions are not allowed in a function's body" })
    })
}

/// `inline_function`: the body with the arguments in place of its parameters, or the
/// refusal naming why PostgreSQL would call the function instead.
fn inline_function(def: &FunctionDef, body: &str, args: Vec<Expr>, position: Option<usize>) -> Result<Expr, SqlError> {
    let planned = plan_body(body, &def.params)?;
    if let Some(why) = not_inlinable(def, &planned, &args) {
        return Err(SqlError::unsupported(
            format!(
                "calling SQL function {}(), which PostgreSQL would not inline ({why}): the sandbox does not run SQL functions",
                def.name
            ),
            position,
        ));
    }
    let out = substitute(&planned, &args);
    // check_sql_fn_retval: the body's type made the declared one.
    let body_type = planned.col_type(&param_columns(&def.params));
    if body_type != family(def.returns) {
        return coerce_arg(out, body_type, def.returns, position);
    }
    Ok(out)
}

fn param_columns(params: &[SqlType]) -> Vec<Column> {
    params.iter().map(|t| Column::typed("p", *t)).collect()
}

/// Why `inline_function` would give up on this call, if it would.
pub(super) fn not_inlinable(def: &FunctionDef, body: &Expr, args: &[Expr]) -> Option<&'static str> {
    match def.volatility {
        Volatility::Immutable if contains_mutable(body) => return Some("an IMMUTABLE function whose body is not"),
        Volatility::Stable if contains_volatile(body) => return Some("a STABLE function whose body is volatile"),
        _ => {}
    }
    let mut uses = vec![0usize; def.params.len()];
    body.for_each_col(&mut |k| {
        if let Some(u) = uses.get_mut(k) {
            *u += 1;
        }
    });
    if def.strict && (!strict_only(body) || uses.contains(&0)) {
        return Some("a STRICT function whose body is not strict in every parameter");
    }
    for (a, n) in args.iter().zip(&uses) {
        if *n > 1 && (contains_volatile(a) || a.has_exec_param() || cost(a) > 10) {
            return Some("a parameter used more than once given a volatile or costly argument");
        }
    }
    None
}

/// `contain_mutable_functions`: anything but immutable built-ins.
fn contains_mutable(e: &Expr) -> bool {
    any_node(e, &|x| match x {
        Expr::Func(Func::User(u), _) => u.volatility != Volatility::Immutable,
        Expr::Func(Func::Cast { to: SqlType::Text, from: Some(f), .. }, _) => *f != SqlType::Text,
        Expr::Func(f, _) => {
            matches!(f, Func::Random | Func::SetSeed | Func::ToChar | Func::CurrentUser | Func::SessionUser)
        }
        Expr::Param(..) | Expr::ExecParam(..) => false,
        _ => false,
    })
}

fn contains_volatile(e: &Expr) -> bool {
    any_node(e, &|x| match x {
        Expr::Func(Func::User(u), _) => u.volatility == Volatility::Volatile,
        Expr::Func(f, _) => matches!(f, Func::Random | Func::SetSeed),
        _ => false,
    })
}

/// `contain_nonstrict_functions` is false: no AND, OR, NOT, IS [NOT] NULL.
fn strict_only(e: &Expr) -> bool {
    !any_node(e, &|x| matches!(x, Expr::Bin(BinOp::And | BinOp::Or, ..) | Expr::Not(_) | Expr::IsNull(..)))
}

/// The argument's cost in operators (`cost_qual_eval`: each operator or function
/// `cpu_operator_cost`; inline_function refuses more than ten).
fn cost(e: &Expr) -> usize {
    let mut n = 0;
    count_nodes(e, &mut n);
    n
}

fn count_nodes(e: &Expr, n: &mut usize) {
    match e {
        Expr::Bin(_, l, r) => {
            *n += 1;
            count_nodes(l, n);
            count_nodes(r, n);
        }
        Expr::Func(Func::Cast { implicit: true, .. }, args) => args.iter().for_each(|a| count_nodes(a, n)),
        Expr::Func(_, args) => {
            *n += 1;
            args.iter().for_each(|a| count_nodes(a, n));
        }
        Expr::Not(x) | Expr::IsNull(x, _) => count_nodes(x, n),
        Expr::Col(_) | Expr::Const(_) | Expr::Param(..) | Expr::ExecParam(..) => {}
    }
}

fn any_node(e: &Expr, test: &dyn Fn(&Expr) -> bool) -> bool {
    test(e)
        || match e {
            Expr::Bin(_, l, r) => any_node(l, test) || any_node(r, test),
            Expr::Func(_, args) => args.iter().any(|a| any_node(a, test)),
            Expr::Not(x) | Expr::IsNull(x, _) => any_node(x, test),
            Expr::Col(_) | Expr::Const(_) | Expr::Param(..) | Expr::ExecParam(..) => false,
        }
}

/// `substitute_actual_parameters`: column k of the body is argument k.
fn substitute(body: &Expr, args: &[Expr]) -> Expr {
    match body {
        Expr::Col(k) => args.get(*k).cloned().unwrap_or(Expr::Const(crate::types::Datum::Null)),
        Expr::Bin(op, l, r) => Expr::bin(*op, substitute(l, args), substitute(r, args)),
        Expr::Func(f, xs) => Expr::func(*f, xs.iter().map(|x| substitute(x, args)).collect()),
        Expr::Not(x) => Expr::Not(Box::new(substitute(x, args))),
        Expr::IsNull(x, n) => Expr::IsNull(Box::new(substitute(x, args)), *n),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Datum;

    fn def(body: &str, params: &[SqlType], volatility: Volatility, strict: bool) -> FunctionDef {
        FunctionDef {
            name: "f".into(),
            params: params.to_vec(),
            returns: SqlType::Int4,
            volatility,
            strict,
            body: FunctionBody::Sql(body.into()),
            in_extension: false,
        }
    }

    #[test]
    fn a_simple_body_is_inlined_with_its_arguments() {
        let d = def("\"$1\" + 1", &[SqlType::Int4], Volatility::Immutable, false);
        let e = inline_function(&d, "\"$1\" + 1", vec![Expr::Col(3)], None).unwrap();
        // int4pl: the parameter is an int4.
        let int4pl = BinOp::Plus.with_int_result(SqlType::Int4);
        assert_eq!(e, Expr::bin(int4pl, Expr::Col(3), Expr::Const(Datum::Int(1))));
    }

    // A body reading CURRENT_USER: the page's first module (no feature `sql`, where
    // no user function exists) does not read it (`fdw_grammar`).
    #[cfg(feature = "sql")]
    #[test]
    fn postgres_rules_for_not_inlining() {
        let int = [SqlType::Int4];
        // An IMMUTABLE function reading CURRENT_USER (stable): called, not inlined.
        let body = plan_body("length(current_user) + \"$1\"", &int).unwrap();
        let d = def("", &int, Volatility::Immutable, false);
        assert!(not_inlinable(&d, &body, &[Expr::Col(0)]).is_some());
        let d = def("", &int, Volatility::Volatile, false);
        assert!(not_inlinable(&d, &body, &[Expr::Col(0)]).is_none());
        // STRICT with a non-strict body (IS NULL), or a parameter unused.
        let body = plan_body("\"$1\" is null", &int).unwrap();
        assert!(not_inlinable(&def("", &int, Volatility::Immutable, true), &body, &[Expr::Col(0)]).is_some());
        assert!(not_inlinable(&def("", &int, Volatility::Immutable, false), &body, &[Expr::Col(0)]).is_none());
        let body = plan_body("1", &int).unwrap();
        assert!(not_inlinable(&def("", &int, Volatility::Immutable, true), &body, &[Expr::Col(0)]).is_some());
        // A parameter read twice, given a volatile argument.
        let body = plan_body("\"$1\" + \"$1\"", &int).unwrap();
        let random = Expr::func(Func::Random, vec![]);
        let d = def("", &int, Volatility::Volatile, false);
        assert!(not_inlinable(&d, &body, &[random]).is_some());
        assert!(not_inlinable(&d, &body, &[Expr::Col(0)]).is_none());
    }
}
