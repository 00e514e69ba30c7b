//! Plans: the description of a query, from which executor state trees are built.
//!
//! A `Plan` is plain data (like PostgreSQL's `Plan` nodes); `executor::init_plan`
//! turns it into a tree of `PlanState`s. Expressions reference input columns by
//! position. Remote queries of foreign scans are kept as structured data and deparsed
//! to SQL text only when sent, like postgres_fdw's `deparse.c`.
//!
//! Invariants:
//! - An [`Expr`] is already analysed, as PostgreSQL's planner receives it: every
//!   column is a position in its input row, every type question (which `+`, which
//!   cast, how a value prints as text) was answered when it was built, so evaluating
//!   it ([`eval`], the one evaluator) looks at values only. The shards' SQL
//!   (`shard_sql`) and the coordinator's front end (`coordinator_sql::eval`) both
//!   build `Expr`s; the executor and the coordinator both evaluate them.
//! - `Expr::Func` holds the function calls ([`Func`]: casts, `random()`, `||`,
//!   `to_char`, `length`, LIKE, CURRENT_USER, …): the coordinator's scripts call them,
//!   and queries' text functions and LIKE, which the shards' planner builds too; which
//!   of them a foreign scan ships is `coordinator_sql::shippable`'s rule.
//!
//! Departs from PostgreSQL: a value's integer width is not stored with it (a `Datum`
//! is Bool, Int, Float, Numeric, Text or Null), so an `Expr` that
//! needs one (a cast from float8 rather than numeric) carries it in the node.

use crate::types::{ColType, Column, Datum};
use serde::Serialize;

pub mod costsize;
pub mod eval;
pub mod incsort;
pub mod indexcost;
pub mod modifytable;
pub mod on_conflict;
mod optimize;
pub mod remote_estimate;
pub mod selectivity;
pub mod semiantijoin;
pub mod stats;
pub mod userfunc;
pub use optimize::{order_quals, use_indexes};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BinOp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    And,
    Or,
    Plus,
    Minus,
    Multiply,
    Divide,
    Modulo,
    /// `+ - * / %` whose result is an int4 or an int2 (the second field): the
    /// operator `make_op` binds for two integers of which neither is an int8
    /// (`int4pl`, `int24mul`, `int2div`, …; int.c). It computes in int8 as the first
    /// field's operator does, then checks the result against its type's range
    /// ("integer out of range", "smallint out of range"), as those functions do. The
    /// plain `+ - * / %` are int8's (`int8pl`, `int48pl`, …), numeric's and float8's.
    IntNarrow(Arith, SqlType),
}

/// The arithmetic of an [`BinOp::IntNarrow`] operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Arith {
    Plus,
    Minus,
    Multiply,
    Divide,
    Modulo,
}

impl Arith {
    /// The int8 operator computing the same arithmetic.
    pub fn op(self) -> BinOp {
        match self {
            Arith::Plus => BinOp::Plus,
            Arith::Minus => BinOp::Minus,
            Arith::Multiply => BinOp::Multiply,
            Arith::Divide => BinOp::Divide,
            Arith::Modulo => BinOp::Modulo,
        }
    }
}

impl BinOp {
    /// The operator of two integers whose result type is `result` (the wider of the
    /// operands' integer types, as int.c's and int8.c's operators are declared): an
    /// int2 or int4 result is [`BinOp::IntNarrow`], an int8 one the plain operator.
    /// Anything but `+ - * / %` is returned as it is.
    pub fn with_int_result(self, result: SqlType) -> BinOp {
        let arith = match self.base() {
            BinOp::Plus => Arith::Plus,
            BinOp::Minus => Arith::Minus,
            BinOp::Multiply => Arith::Multiply,
            BinOp::Divide => Arith::Divide,
            BinOp::Modulo => Arith::Modulo,
            other => return other,
        };
        match result {
            SqlType::Int2 | SqlType::Int4 => BinOp::IntNarrow(arith, result),
            _ => arith.op(),
        }
    }
    /// The plain operator an [`BinOp::IntNarrow`] computes with; any other is itself.
    pub fn base(self) -> BinOp {
        match self {
            BinOp::IntNarrow(a, _) => a.op(),
            other => other,
        }
    }
    /// `= <> < <= > >=`: the operators whose result is a boolean.
    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq)
    }
    pub fn sql(self) -> &'static str {
        match self {
            BinOp::Eq => "=",
            BinOp::NotEq => "<>",
            BinOp::Lt => "<",
            BinOp::LtEq => "<=",
            BinOp::Gt => ">",
            BinOp::GtEq => ">=",
            BinOp::And => "AND",
            BinOp::Or => "OR",
            BinOp::Plus => "+",
            BinOp::Minus => "-",
            BinOp::Multiply => "*",
            BinOp::Divide => "/",
            BinOp::Modulo => "%",
            BinOp::IntNarrow(a, _) => a.op().sql(),
        }
    }
}

/// The SQL types the sandbox stores and casts between (a column's declared type).
/// Values of the three integer types are all `Datum::Int`, numeric is
/// `Datum::Numeric`, float8 `Datum::Float`: the type decides range checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SqlType {
    Int2,
    Int4,
    Int8,
    Numeric,
    Float8,
    Text,
    Bool,
}

impl SqlType {
    /// Every type, for looking one up by name.
    pub const ALL: [SqlType; 7] =
        [SqlType::Int2, SqlType::Int4, SqlType::Int8, SqlType::Numeric, SqlType::Float8, SqlType::Text, SqlType::Bool];
    /// The name PostgreSQL's messages use (`format_type`).
    pub fn name(self) -> &'static str {
        match self {
            SqlType::Int2 => "smallint",
            SqlType::Int4 => "integer",
            SqlType::Int8 => "bigint",
            SqlType::Numeric => "numeric",
            SqlType::Float8 => "double precision",
            SqlType::Text => "text",
            SqlType::Bool => "boolean",
        }
    }
    /// The order of implicit casts in the numeric category (parse_coerce.c's
    /// `select_common_type` prefers the later): each converts implicitly to every
    /// later one (`int2 → int4 → int8 → numeric → float8`), never back; text and
    /// boolean, other categories, are 0.
    pub fn widening_rank(self) -> u8 {
        match self {
            SqlType::Int2 => 0,
            SqlType::Int4 => 1,
            SqlType::Int8 => 2,
            SqlType::Numeric => 3,
            SqlType::Float8 => 4,
            SqlType::Text | SqlType::Bool => 0,
        }
    }
    pub fn col_type(self) -> ColType {
        match self {
            SqlType::Int2 | SqlType::Int4 | SqlType::Int8 => ColType::Int,
            SqlType::Numeric => ColType::Numeric,
            SqlType::Float8 => ColType::Float,
            SqlType::Text => ColType::Text,
            SqlType::Bool => ColType::Bool,
        }
    }
    pub fn is_integer(self) -> bool {
        matches!(self, SqlType::Int2 | SqlType::Int4 | SqlType::Int8)
    }
}

/// A function call the evaluator implements, resolved when the expression was
/// analysed (PostgreSQL's `FuncExpr` with its function's OID; an operator such as
/// `||` is its function, as `OpExpr` is).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Func {
    /// A cast from `from` (None: an untyped literal or NULL) to `to`: assignment and
    /// explicit casts are the same here (`int4(float8)`, `float8out`, `int4in`, …).
    Cast {
        from: Option<SqlType>,
        to: SqlType,
        /// Inserted by the analyser to make an operator's operands one type
        /// (COERCE_IMPLICIT_CAST, `(k)::numeric` in `k > 7.5`): EXPLAIN shows it as an
        /// operand's cast, but deparse.c leaves it out of the remote query.
        implicit: bool,
    },
    /// Unary minus (`int8um`, `float8um`, `numeric_uminus`).
    Neg,
    /// Unary minus of an int4 or int2 (`int4um`, `int2um`; int.c): computed in int8,
    /// then checked against the type's range, so `-x` of the smallest int4 is
    /// "integer out of range" (as [`BinOp::IntNarrow`] checks `int4mi`).
    IntNarrowNeg(SqlType),
    /// PostgreSQL's `BooleanTest`: `x IS [NOT] TRUE`, `IS [NOT] FALSE`, `IS [NOT]
    /// UNKNOWN` (never NULL itself). postgres_fdw's `foreign_expr_walker` has no case
    /// for it in PostgreSQL 15, so it never ships: a foreign scan's local Filter.
    BoolTest(BoolTestType),
    /// `||` over two texts (`textcat`); the analyser casts each operand to text.
    TextCat,
    Random,
    SetSeed,
    /// `to_char(integer, text)`.
    ToChar,
    Abs,
    Length,
    Upper,
    Lower,
    /// `substr(text, from [, count])` (`text_substr`, `text_substr_no_len`).
    Substr,
    /// `text LIKE pattern` (the operator `~~`, `textlike`); `negated`: NOT LIKE
    /// (`!~~`); `ilike`: ILIKE (`~~*`, `texticlike`) and NOT ILIKE (`!~~*`).
    Like {
        negated: bool,
        ilike: bool,
    },
    /// CURRENT_USER and SESSION_USER (`current_user`, `session_user`): stable, so
    /// postgres_fdw never ships them, and a qual over them alone is a pseudoconstant.
    CurrentUser,
    SessionUser,
    /// `x IN (SELECT …)` run as a hashed SubPlan (the argument is `x`; the number is
    /// the SubPlan's): the subquery's rows are read once into a table, then looked up
    /// per row. The executor binds it before evaluating (`node_subplan`).
    HashedSubPlan(usize),
    /// A correlated scalar subquery's value: SubPlan `plan_id` re-run for each row
    /// with its parameters set from the arguments (the outer row's values it reads;
    /// nodeSubplan.c's `ExecScanSubPlan`), of type `ty`. The executor binds it per row.
    SubPlan {
        plan_id: usize,
        ty: SqlType,
    },
    /// `x::numeric(p, s)`: `x` (of type `from`; None for an untyped literal) cast to
    /// numeric, then rounded to the type modifier's scale and checked against its
    /// precision (the length coercion function `numeric(numeric, int4)`,
    /// `crate::numeric_typmod`). EXPLAIN and deparse write it `(x)::numeric(p,s)`, the
    /// input's own cast hidden, as ruleutils.c and deparse.c do.
    NumericTypmod {
        from: Option<SqlType>,
        typmod: crate::numeric_typmod::NumericTypmod,
    },
    /// A user-defined function or operator over a built-in procedure (`CREATE
    /// OPERATOR`, `CREATE FUNCTION … LANGUAGE internal`; [`userfunc`]).
    User(userfunc::UserFunc),
    /// PostgreSQL's `ScalarArrayOpExpr`: `x op ANY (array)` (`use_or`) or `x op ALL
    /// (array)`, what `x IN (a, b)` and `x NOT IN (a, b)` become (`transformAExprIn`
    /// in parse_expr.c: `= ANY`, `<> ALL`). The arguments are `x` then the array's
    /// elements, of type `elem`: when every element is a constant the array is one
    /// constant (`'{a,b}'::text[]`, as eval_const_expressions folds the ArrayExpr),
    /// else an `ARRAY[$1, $2]` expression ([`saop_sql`]).
    ScalarArrayOp {
        op: BinOp,
        use_or: bool,
        elem: SqlType,
    },
    /// PostgreSQL's `CaseExpr`. The arguments: each WHEN's condition followed by its
    /// result, then the ELSE result (always there: the parser makes a missing ELSE
    /// a NULL of the result type). `simple`: `CASE x WHEN v …`, whose arguments start
    /// with `x` and whose conditions are `x = v` (the CaseTestExpr's comparison,
    /// `transformCaseExpr`), printed as `CASE x WHEN v`. The results were coerced to
    /// one type (`select_common_type`) by the analysis; only the chosen branch is
    /// evaluated.
    Case {
        simple: bool,
    },
    /// `COALESCE(a, b, …)` (`CoalesceExpr`): the first argument that is not NULL,
    /// those after it not evaluated; the arguments coerced to one type.
    Coalesce,
    /// `NULLIF(a, b)` (`NullIfExpr`): NULL when `a = b`, else `a`; the operands
    /// coerced as `=` coerces them (so the result has `a`'s coerced type).
    NullIf,
    /// `GREATEST(…)`/`LEAST(…)` (`MinMaxExpr`): the largest (smallest) argument that
    /// is not NULL; NULL only if all are.
    MinMax {
        greatest: bool,
    },
    /// `round(numeric, int)` (`numeric_round`; `round(numeric)` is the SQL function
    /// `round($1, 0)`, inlined so), and `round(float8)` (`dround`: `rint`, half to
    /// even) with one argument.
    Round,
}

/// The test of a [`Func::BoolTest`] (`BoolTestType` in primnodes.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BoolTestType {
    IsTrue,
    IsNotTrue,
    IsFalse,
    IsNotFalse,
    IsUnknown,
    IsNotUnknown,
}

impl BoolTestType {
    /// As ruleutils.c and the parser write it.
    pub fn sql(self) -> &'static str {
        match self {
            BoolTestType::IsTrue => "IS TRUE",
            BoolTestType::IsNotTrue => "IS NOT TRUE",
            BoolTestType::IsFalse => "IS FALSE",
            BoolTestType::IsNotFalse => "IS NOT FALSE",
            BoolTestType::IsUnknown => "IS UNKNOWN",
            BoolTestType::IsNotUnknown => "IS NOT UNKNOWN",
        }
    }
    /// The opposite test (`negate_clause`'s case for a BooleanTest: NOT (x IS TRUE)
    /// is x IS NOT TRUE, …), which holds exactly where this one does not.
    pub fn negated(self) -> BoolTestType {
        match self {
            BoolTestType::IsTrue => BoolTestType::IsNotTrue,
            BoolTestType::IsNotTrue => BoolTestType::IsTrue,
            BoolTestType::IsFalse => BoolTestType::IsNotFalse,
            BoolTestType::IsNotFalse => BoolTestType::IsFalse,
            BoolTestType::IsUnknown => BoolTestType::IsNotUnknown,
            BoolTestType::IsNotUnknown => BoolTestType::IsUnknown,
        }
    }
    /// The EEOP_BOOLTEST_* steps of execExprInterp.c over a value (None: NULL):
    /// NULL is unknown, and the result is never NULL.
    pub fn test(self, v: Option<bool>) -> bool {
        match self {
            BoolTestType::IsTrue => v == Some(true),
            BoolTestType::IsNotTrue => v != Some(true),
            BoolTestType::IsFalse => v == Some(false),
            BoolTestType::IsNotFalse => v != Some(false),
            BoolTestType::IsUnknown => v.is_none(),
            BoolTestType::IsNotUnknown => v.is_some(),
        }
    }
}

/// The array of a [`Func::ScalarArrayOp`] whose elements are all constants: its text
/// as `array_out` writes it (`{north,west}`, `{1,NULL}`), an element double-quoted
/// when it is empty, reads as NULL, or holds a space or one of `{},"\` (quotes and
/// backslashes escaped). None when an element is not a constant.
pub fn const_array_text(elems: &[Expr]) -> Option<String> {
    let mut parts = Vec::with_capacity(elems.len());
    for e in elems {
        let Expr::Const(d) = e else { return None };
        parts.push(match d {
            Datum::Null => "NULL".to_string(),
            Datum::Numeric(n) => n.to_string(),
            other => {
                let s = other.to_string();
                let plain = !s.is_empty()
                    && !s.eq_ignore_ascii_case("NULL")
                    && !s
                        .chars()
                        .any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || c.is_ascii_whitespace() || c == '\u{b}');
                if plain {
                    s
                } else {
                    let mut q = String::from('"');
                    for c in s.chars() {
                        if c == '"' || c == '\\' {
                            q.push('\\');
                        }
                        q.push(c);
                    }
                    q.push('"');
                    q
                }
            }
        });
    }
    Some(format!("{{{}}}", parts.join(",")))
}

/// A [`Func::ScalarArrayOp`]'s text, its operands already written: `(x = ANY (arr))`
/// (ruleutils.c's and deparse.c's ScalarArrayOpExpr both parenthesize it).
pub fn saop_sql(op: BinOp, use_or: bool, x: &str, array: &str) -> String {
    format!("({x} {} {} ({array}))", op.sql(), if use_or { "ANY" } else { "ALL" })
}

/// The name of an array of `elem` (`format_type` of the array type: `integer[]`).
pub fn array_type_name(elem: SqlType) -> String {
    format!("{}[]", elem.name())
}

impl Func {
    pub fn name(self) -> &'static str {
        match self {
            Func::Cast { .. } => "cast",
            Func::Neg | Func::IntNarrowNeg(_) => "-",
            Func::BoolTest(t) => t.sql(),
            Func::TextCat => "||",
            Func::Random => "random",
            Func::SetSeed => "setseed",
            Func::ToChar => "to_char",
            Func::Abs => "abs",
            Func::Length => "length",
            Func::Upper => "upper",
            Func::Lower => "lower",
            Func::Substr => "substr",
            Func::Like { negated: false, ilike: false } => "~~",
            Func::Like { negated: true, ilike: false } => "!~~",
            Func::Like { negated: false, ilike: true } => "~~*",
            Func::Like { negated: true, ilike: true } => "!~~*",
            Func::CurrentUser => "CURRENT_USER",
            Func::SessionUser => "SESSION_USER",
            Func::HashedSubPlan(_) => "hashed SubPlan",
            Func::SubPlan { .. } => "SubPlan",
            Func::NumericTypmod { .. } => "numeric",
            Func::User(_) => "user-defined function",
            Func::ScalarArrayOp { .. } => "ScalarArrayOpExpr",
            Func::Case { .. } => "CASE",
            Func::Coalesce => "COALESCE",
            Func::NullIf => "NULLIF",
            Func::MinMax { greatest: true } => "GREATEST",
            Func::MinMax { greatest: false } => "LEAST",
            Func::Round => "round",
        }
    }

    /// SQL text of a call, its arguments already written (for EXPLAIN and deparse).
    pub fn sql(self, args: &[String]) -> String {
        match (self, args) {
            (Func::Cast { to, .. }, [x]) => format!("({x})::{}", to.name()),
            (Func::NumericTypmod { typmod, .. }, [x]) => format!("({x})::{}", typmod.type_name()),
            (Func::Neg | Func::IntNarrowNeg(_), [x]) => format!("(- {x})"),
            (Func::BoolTest(t), [x]) => format!("({x} {})", t.sql()),
            (Func::TextCat, [a, b]) => format!("({a} || {b})"),
            (Func::Like { .. }, [a, b]) => format!("({a} {} {b})", self.name()),
            (Func::CurrentUser | Func::SessionUser, []) => self.name().to_string(),
            // EXPLAIN names the SubPlan, not its test expression.
            (Func::HashedSubPlan(k), _) => format!("(hashed SubPlan {k})"),
            (Func::SubPlan { plan_id, .. }, _) => format!("(SubPlan {plan_id})"),
            (Func::User(u), _) => u.sql(args),
            (Func::ScalarArrayOp { op, use_or, .. }, [x, elems @ ..]) => {
                saop_sql(op, use_or, x, &format!("ARRAY[{}]", elems.join(", ")))
            }
            (Func::Case { simple }, _) => case_sql(simple, args),
            _ => format!("{}({})", self.name(), args.join(", ")),
        }
    }

    /// Result type, given the first argument's (None for no argument).
    fn col_type(self, arg: Option<ColType>) -> ColType {
        match self {
            // The analysis coerced every result to one type; `Expr::col_type` passes
            // a result's (the ELSE's) for CASE.
            Func::Case { .. } | Func::Coalesce | Func::NullIf | Func::MinMax { .. } => arg.unwrap_or(ColType::Text),
            Func::Round => arg.unwrap_or(ColType::Numeric),
            Func::Cast { to, .. } => to.col_type(),
            Func::Neg | Func::Abs => arg.unwrap_or(ColType::Int),
            Func::IntNarrowNeg(_) => ColType::Int,
            Func::BoolTest(_) => ColType::Bool,
            Func::Random => ColType::Float,
            Func::Length => ColType::Int,
            Func::Like { .. } | Func::HashedSubPlan(_) | Func::ScalarArrayOp { .. } => ColType::Bool,
            Func::SubPlan { ty, .. } => ty.col_type(),
            Func::NumericTypmod { .. } => ColType::Numeric,
            Func::User(u) => u.proc.col_type(arg),
            Func::TextCat
            | Func::SetSeed
            | Func::ToChar
            | Func::Upper
            | Func::Lower
            | Func::Substr
            | Func::CurrentUser
            | Func::SessionUser => ColType::Text,
        }
    }
}

/// A CASE's text from its arguments' (ruleutils.c's `get_rule_expr` of a CaseExpr:
/// no parentheses of its own; `CASE x WHEN v` for a simple CASE, whose condition
/// texts are then the compared values). deparse.c's adds parentheses around it.
pub fn case_sql(simple: bool, args: &[String]) -> String {
    let (head, rest) = if simple && !args.is_empty() { (Some(&args[0]), &args[1..]) } else { (None, args) };
    let mut s = String::from("CASE");
    if let Some(x) = head {
        s.push(' ');
        s.push_str(x);
    }
    let (pairs, default) = rest.split_at(rest.len().saturating_sub(1));
    for pair in pairs.chunks(2) {
        if let [w, t] = pair {
            s.push_str(&format!(" WHEN {w} THEN {t}"));
        }
    }
    if let [e] = default {
        s.push_str(&format!(" ELSE {e}"));
    }
    s.push_str(" END");
    s
}

/// The argument of a [`Func::Case`], [`Func::Coalesce`], [`Func::MinMax`] or
/// [`Func::NullIf`] whose type is the expression's (the ELSE result of a CASE, the
/// first argument of the others).
pub fn typed_arg(f: Func, args: &[Expr]) -> Option<&Expr> {
    match f {
        Func::Case { .. } => args.last(),
        _ => args.first(),
    }
}

/// Written before an InitPlan's number where EXPLAIN will print `$`: EXPLAIN's own
/// `$N` stands for an input column (`instrument::explain`), so the value `$0` of an
/// InitPlan is kept apart until it is printed.
pub const PARAM_MARK: char = '\u{E000}';

/// The placeholder the coordinator's planner puts where a sublink was, so that the
/// expression analysis makes it an `Expr::Param` (`coordinator_sql::subselect`). Its
/// marker character cannot come from SQL text (the tokenizer's `$name` is ASCII).
pub fn init_plan_placeholder(param: usize, ty: SqlType) -> String {
    format!("${PARAM_MARK}{param}:{}", ty.name())
}

/// The function name the coordinator's planner gives `x IN (SELECT …)` run as hashed
/// SubPlan `plan_id`, so that the expression analysis makes it a
/// `Func::HashedSubPlan` of `x` (the marker cannot come from SQL text).
pub fn hashed_subplan_name(plan_id: usize) -> String {
    format!("{PARAM_MARK}hashed_subplan_{plan_id}")
}

/// The function name the coordinator's planner gives a correlated scalar subquery
/// run as SubPlan `plan_id` (its arguments the outer values it reads), so that the
/// expression analysis makes it a `Func::SubPlan`.
pub fn subplan_name(plan_id: usize, ty: SqlType) -> String {
    format!("{PARAM_MARK}subplan_{plan_id}:{}", ty.name())
}

/// The SubPlan and type a [`subplan_name`] stands for.
pub fn subplan_ref(name: &str) -> Option<(usize, SqlType)> {
    let (k, ty) = name.strip_prefix(PARAM_MARK)?.strip_prefix("subplan_")?.split_once(':')?;
    let ty = SqlType::ALL.into_iter().find(|t| t.name() == ty)?;
    Some((k.parse().ok()?, ty))
}

/// The SubPlan a [`hashed_subplan_name`] stands for.
pub fn hashed_subplan_ref(name: &str) -> Option<usize> {
    name.strip_prefix(PARAM_MARK)?.strip_prefix("hashed_subplan_")?.parse().ok()
}

/// The InitPlan value an [`init_plan_placeholder`] stands for.
pub fn init_plan_ref(placeholder: &str) -> Option<(usize, SqlType)> {
    let rest = placeholder.strip_prefix('$')?.strip_prefix(PARAM_MARK)?;
    let (n, ty) = rest.split_once(':')?;
    let ty = SqlType::ALL.into_iter().find(|t| t.name() == ty)?;
    Some((n.parse().ok()?, ty))
}

/// A scalar expression over the columns of one input row; [`eval`] evaluates it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Expr {
    Col(usize),
    Const(#[serde(skip)] Datum),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    IsNull(Box<Expr>, bool),
    Func(Func, Box<[Expr]>),
    /// A prepared statement's parameter `$n` in a generic plan (PostgreSQL's `Param`
    /// of kind PARAM_EXTERN): its number (from 1), its type, and the value bound for
    /// this execution (`bind_params`, as ExecutorStart receives the ParamListInfo;
    /// None until bound, and evaluated as NULL then). EXPLAIN and remote SQL print
    /// the parameter, never its value.
    Param(u16, SqlType, #[serde(skip)] Option<Datum>),
    /// PostgreSQL's `Param` of kind PARAM_EXEC: the value an InitPlan computes
    /// (`$n` in EXPLAIN), of the given type (the remote SQL casts it, `$1::numeric`).
    /// The executor binds it to a constant before evaluating (`node_subplan`).
    ExecParam(usize, SqlType),
}

impl Expr {
    pub fn col(i: usize) -> Expr {
        Expr::Col(i)
    }
    pub fn int(v: i64) -> Expr {
        Expr::Const(Datum::Int(v))
    }
    pub fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::Bin(op, Box::new(l), Box::new(r))
    }
    pub fn func(f: Func, args: Vec<Expr>) -> Expr {
        Expr::Func(f, args.into_boxed_slice())
    }

    /// The same expression with every column `i` read as column `f(i)` (the planner
    /// moves expressions between inputs of different shapes).
    pub fn map_cols(&self, f: &impl Fn(usize) -> usize) -> Expr {
        match self {
            Expr::Col(i) => Expr::Col(f(*i)),
            Expr::Const(d) => Expr::Const(d.clone()),
            Expr::Bin(op, l, r) => Expr::bin(*op, l.map_cols(f), r.map_cols(f)),
            Expr::Not(x) => Expr::Not(Box::new(x.map_cols(f))),
            Expr::IsNull(x, neg) => Expr::IsNull(Box::new(x.map_cols(f)), *neg),
            Expr::Func(func, args) => Expr::Func(*func, args.iter().map(|a| a.map_cols(f)).collect()),
            Expr::Param(..) => self.clone(),
            Expr::ExecParam(n, t) => Expr::ExecParam(*n, *t),
        }
    }

    /// The same condition with each `x op ANY/ALL (array)` in it (at the top or
    /// under AND and OR) written as the OR (ANY) or AND (ALL) of `x op element`, as
    /// partprune.c's `match_clause_to_partition_key` turns a ScalarArrayOpExpr into
    /// pruning steps; a NULL element of an ANY is left out (the strict operator
    /// cannot hold for it), and an ANY whose elements are all NULL is `false`.
    pub fn saop_as_comparisons(&self) -> Expr {
        match self {
            Expr::Bin(op @ (BinOp::And | BinOp::Or), l, r) => {
                Expr::bin(*op, l.saop_as_comparisons(), r.saop_as_comparisons())
            }
            Expr::Func(Func::ScalarArrayOp { op, use_or, .. }, args) if args.len() > 1 => {
                let x = &args[0];
                let combine = if *use_or { BinOp::Or } else { BinOp::And };
                args[1..]
                    .iter()
                    .filter(|e| !(*use_or && matches!(e, Expr::Const(Datum::Null))))
                    .map(|e| Expr::bin(*op, x.clone(), e.clone()))
                    .reduce(|a, b| Expr::bin(combine, a, b))
                    .unwrap_or(Expr::Const(Datum::Bool(false)))
            }
            other => other.clone(),
        }
    }

    /// Each `col op ANY (array)` of integers in the expression with its element type
    /// widened to bigint when `col` is declared bigint (`types[col]`): the analysis
    /// knows a column only as an integer, where `select_common_type` of a bigint
    /// column and int4 constants is bigint (`'{1,2}'::bigint[]`).
    pub fn widen_saop_to_columns(&mut self, types: &[SqlType]) {
        match self {
            Expr::Func(Func::ScalarArrayOp { elem, .. }, args) => {
                if let Some(Expr::Col(i)) = args.first() {
                    if types.get(*i) == Some(&SqlType::Int8) && matches!(*elem, SqlType::Int2 | SqlType::Int4) {
                        *elem = SqlType::Int8;
                    }
                }
                args.iter_mut().for_each(|a| a.widen_saop_to_columns(types));
            }
            Expr::Func(_, args) => args.iter_mut().for_each(|a| a.widen_saop_to_columns(types)),
            Expr::Bin(_, l, r) => {
                l.widen_saop_to_columns(types);
                r.widen_saop_to_columns(types);
            }
            Expr::Not(x) | Expr::IsNull(x, _) => x.widen_saop_to_columns(types),
            Expr::Col(_) | Expr::Const(_) | Expr::Param(..) | Expr::ExecParam(..) => {}
        }
    }

    /// Does the expression read a parameter (`$n`)?
    pub fn has_param(&self) -> bool {
        match self {
            Expr::Param(..) => true,
            Expr::Col(_) | Expr::Const(_) | Expr::ExecParam(..) => false,
            Expr::Bin(_, l, r) => l.has_param() || r.has_param(),
            Expr::Not(x) | Expr::IsNull(x, _) => x.has_param(),
            Expr::Func(_, args) => args.iter().any(Expr::has_param),
        }
    }

    /// The same expression with each parameter's bound value as a constant (what
    /// PostgreSQL's pruning steps compare, once ExecInitPartitionPruning evaluated
    /// their expressions).
    pub fn params_as_consts(&self) -> Expr {
        match self {
            Expr::Param(_, _, v) => Expr::Const(v.clone().unwrap_or(Datum::Null)),
            Expr::Col(_) | Expr::Const(_) | Expr::ExecParam(..) => self.clone(),
            Expr::Bin(op, l, r) => Expr::bin(*op, l.params_as_consts(), r.params_as_consts()),
            Expr::Not(x) => Expr::Not(Box::new(x.params_as_consts())),
            Expr::IsNull(x, neg) => Expr::IsNull(Box::new(x.params_as_consts()), *neg),
            Expr::Func(func, args) => Expr::Func(*func, args.iter().map(Expr::params_as_consts).collect()),
        }
    }

    /// Binds each parameter `$n` to `values[n - 1]` (ExecutorStart's ParamListInfo).
    pub fn bind_params(&mut self, values: &[Datum]) {
        match self {
            Expr::Param(n, _, v) => *v = values.get(usize::from(*n).wrapping_sub(1)).cloned(),
            Expr::Col(_) | Expr::Const(_) | Expr::ExecParam(..) => {}
            Expr::Bin(_, l, r) => {
                l.bind_params(values);
                r.bind_params(values);
            }
            Expr::Not(x) | Expr::IsNull(x, _) => x.bind_params(values),
            Expr::Func(_, args) => args.iter_mut().for_each(|a| a.bind_params(values)),
        }
    }

    /// Calls `f` with every column the expression reads.
    pub fn for_each_col(&self, f: &mut impl FnMut(usize)) {
        match self {
            Expr::Col(i) => f(*i),
            Expr::Const(_) | Expr::Param(..) | Expr::ExecParam(..) => {}
            Expr::Bin(_, l, r) => {
                l.for_each_col(f);
                r.for_each_col(f);
            }
            Expr::Not(x) | Expr::IsNull(x, _) => x.for_each_col(f),
            Expr::Func(_, args) => args.iter().for_each(|a| a.for_each_col(f)),
        }
    }

    /// Result type, given the input columns.
    pub fn col_type(&self, input: &[Column]) -> ColType {
        match self {
            Expr::Col(i) => input[*i].ty,
            Expr::Const(Datum::Text(_)) => ColType::Text,
            Expr::Const(Datum::Float(_)) => ColType::Float,
            Expr::Const(Datum::Numeric(_)) => ColType::Numeric,
            Expr::Const(Datum::Bool(_)) => ColType::Bool,
            Expr::Const(_) => ColType::Int,
            Expr::Param(_, t, _) => t.col_type(),
            Expr::Bin(BinOp::Divide, l, r)
            | Expr::Bin(BinOp::Plus, l, r)
            | Expr::Bin(BinOp::Minus, l, r)
            | Expr::Bin(BinOp::Multiply, l, r)
            | Expr::Bin(BinOp::Modulo, l, r)
            | Expr::Bin(BinOp::IntNarrow(..), l, r) => {
                // An integer meets a numeric as a numeric, either meets a float8 as a
                // float8 (PostgreSQL's implicit casts).
                match (l.col_type(input), r.col_type(input)) {
                    (ColType::Float, _) | (_, ColType::Float) => ColType::Float,
                    (ColType::Numeric, _) | (_, ColType::Numeric) => ColType::Numeric,
                    _ => ColType::Int,
                }
            }
            Expr::Func(f, args) => f.col_type(typed_arg(*f, args).map(|a| a.col_type(input))),
            Expr::ExecParam(_, t) => t.col_type(),
            // Comparisons, AND, OR, NOT, IS [NOT] NULL.
            Expr::Bin(..) | Expr::Not(_) | Expr::IsNull(..) => ColType::Bool,
        }
    }

    /// The integer type of an expression `col_type` calls an integer (`exprType` for
    /// the integer family): a column's declared type, a constant's as the parser
    /// types a literal (int4 when it fits), an operator's result type
    /// ([`BinOp::IntNarrow`]'s, else int8), a cast's target. It decides which
    /// operator `+` over it is (`int4pl` or `int8pl`, …). None: not known (a column
    /// whose input does not say, the built-in scenarios'), which operators take as an
    /// int8 and a cast to an integer type leaves out, as before types were known.
    pub fn int_type(&self, input: &[Column]) -> Option<SqlType> {
        match self {
            Expr::Col(i) => input.get(*i).and_then(|c| c.sql_type).filter(|t| t.is_integer()),
            Expr::Const(Datum::Int(v)) => Some(if i32::try_from(*v).is_ok() { SqlType::Int4 } else { SqlType::Int8 }),
            Expr::Param(_, t, _) | Expr::ExecParam(_, t) => Some(*t).filter(|t| t.is_integer()),
            Expr::Bin(BinOp::IntNarrow(_, t), ..) => Some(*t),
            Expr::Bin(op, l, r) if !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or) => {
                l.int_type(input).and(r.int_type(input)).map(|_| SqlType::Int8)
            }
            Expr::Func(Func::Cast { to, .. } | Func::SubPlan { ty: to, .. }, _) => Some(*to).filter(|t| t.is_integer()),
            Expr::Func(Func::Length, _) => Some(SqlType::Int4),
            Expr::Func(Func::Neg | Func::Abs, args) if !args.is_empty() => args[0].int_type(input),
            Expr::Func(Func::IntNarrowNeg(t), _) => Some(*t),
            Expr::Func(f @ (Func::Case { .. } | Func::Coalesce | Func::NullIf | Func::MinMax { .. }), args) => {
                let mut typed = args.iter().filter(|a| !matches!(a, Expr::Const(Datum::Null)));
                match f {
                    Func::Case { .. } => typed_arg(*f, args).and_then(|a| a.int_type(input)),
                    _ => typed.find_map(|a| a.int_type(input)),
                }
            }
            _ => None,
        }
    }

    /// The output column `name` that this expression over `input` makes: its
    /// `ColType`, and its integer type when it is an integer.
    pub fn output_column(&self, name: &str, input: &[Column]) -> Column {
        let ty = self.col_type(input);
        let sql_type = match (self, ty) {
            (Expr::Col(i), _) => input.get(*i).and_then(|c| c.sql_type),
            (_, ColType::Int) => self.int_type(input),
            _ => None,
        };
        Column { name: name.to_string(), ty, sql_type }
    }

    /// The operands of a chain of `op` (AND or OR), in order.
    fn flatten<'e>(&'e self, op: BinOp, out: &mut Vec<&'e Expr>) {
        match self {
            Expr::Bin(o, l, r) if *o == op => {
                l.flatten(op, out);
                r.flatten(op, out);
            }
            other => out.push(other),
        }
    }

    /// SQL text of the expression with the given column names (for remote SQL and EXPLAIN).
    pub fn to_sql(&self, names: &[String]) -> String {
        match self {
            Expr::Col(i) => names.get(*i).cloned().unwrap_or_else(|| format!("${i}")),
            Expr::Const(d) => const_sql(d, true),
            Expr::Not(e) => format!("(NOT {})", e.to_sql(names)),
            Expr::IsNull(e, false) => format!("({} IS NULL)", e.to_sql(names)),
            Expr::IsNull(e, true) => format!("({} IS NOT NULL)", e.to_sql(names)),
            // AND and OR are n-ary in PostgreSQL (the parser and eval_const_expressions
            // flatten nested ones): `(a AND b AND c)`.
            Expr::Bin(op @ (BinOp::And | BinOp::Or), _, _) => {
                let mut args = Vec::new();
                self.flatten(*op, &mut args);
                let parts: Vec<String> = args.iter().map(|a| a.to_sql(names)).collect();
                format!("({})", parts.join(&format!(" {} ", op.sql())))
            }
            Expr::Bin(op, l, r) => {
                format!("({} {} {})", l.to_sql(names), op.sql(), r.to_sql(names))
            }
            Expr::Func(f, args) => match (f, &args[..]) {
                // A constant coerced to its own type (ruleutils.c's get_coercion_expr):
                // the constant undecorated, then the cast.
                (Func::Cast { to: SqlType::Text, .. }, [Expr::Const(d @ Datum::Text(_))]) => {
                    format!("{}::text", const_sql(d, false))
                }
                // A NULL of a type (rewriteTargetListIU's for a column an INSERT does not
                // fill, `NULL::integer` in a query): one typed Const after
                // eval_const_expressions, which get_const_expr prints `NULL::type`.
                (Func::Cast { to, .. }, [Expr::Const(Datum::Null)]) => format!("NULL::{}", to.name()),
                // A constant of an integer type other than int4 (`shard_sql`'s
                // typed_const): get_const_expr quotes it and labels it with its type.
                (
                    Func::Cast { from: None, to: to @ (SqlType::Int8 | SqlType::Int2), implicit: false },
                    [Expr::Const(d)],
                ) => {
                    format!("'{d}'::{}", to.name())
                }
                // get_rule_expr's ScalarArrayOpExpr: a constant array as get_const_expr
                // writes it (`'{2,5}'::integer[]`), else the ArrayExpr (`ARRAY[$1, $2]`).
                (Func::ScalarArrayOp { op, use_or, elem }, [x, elems @ ..]) => {
                    let array = match const_array_text(elems) {
                        Some(t) => format!("'{}'::{}", t.replace('\'', "''"), array_type_name(*elem)),
                        None => {
                            let parts: Vec<String> = elems.iter().map(|e| e.to_sql(names)).collect();
                            format!("ARRAY[{}]", parts.join(", "))
                        }
                    };
                    saop_sql(*op, *use_or, &x.to_sql(names), &array)
                }
                // A simple CASE prints each WHEN's compared value, not its `x = v`.
                (Func::Case { simple: true }, [x, rest @ ..]) => {
                    let mut parts = vec![x.to_sql(names)];
                    let n = rest.len();
                    for (i, a) in rest.iter().enumerate() {
                        parts.push(match a {
                            Expr::Bin(BinOp::Eq, _, v) if i % 2 == 0 && i + 1 < n => v.to_sql(names),
                            other => other.to_sql(names),
                        });
                    }
                    case_sql(true, &parts)
                }
                _ => f.sql(&args.iter().map(|a| a.to_sql(names)).collect::<Vec<_>>()),
            },
            // `$$n`: EXPLAIN's text resolves `$i` as input column i; `$$` stays a `$`.
            Expr::Param(n, _, _) => format!("$${n}"),
            Expr::ExecParam(n, _) => format!("{PARAM_MARK}{n}"),
        }
    }

    /// Does the expression read an InitPlan's value (`Expr::ExecParam`) or a hashed
    /// SubPlan's table (`Func::HashedSubPlan`)? The executor binds both first.
    pub fn has_exec_param(&self) -> bool {
        match self {
            Expr::ExecParam(..) | Expr::Func(Func::HashedSubPlan(_) | Func::SubPlan { .. }, _) => true,
            Expr::Col(_) | Expr::Const(_) | Expr::Param(..) => false,
            Expr::Bin(_, l, r) => l.has_exec_param() || r.has_exec_param(),
            Expr::Not(x) | Expr::IsNull(x, _) => x.has_exec_param(),
            Expr::Func(_, args) => args.iter().any(Expr::has_exec_param),
        }
    }

    /// The hashed SubPlans the expression reads, in order of appearance.
    pub fn hashed_subplans(&self, out: &mut Vec<usize>) {
        match self {
            Expr::Func(Func::HashedSubPlan(k), args) => {
                out.push(*k);
                args.iter().for_each(|a| a.hashed_subplans(out));
            }
            Expr::Col(_) | Expr::Const(_) | Expr::Param(..) | Expr::ExecParam(..) => {}
            Expr::Bin(_, l, r) => {
                l.hashed_subplans(out);
                r.hashed_subplans(out);
            }
            Expr::Not(x) | Expr::IsNull(x, _) => x.hashed_subplans(out),
            Expr::Func(_, args) => args.iter().for_each(|a| a.hashed_subplans(out)),
        }
    }

    /// Calls `f` with every InitPlan value the expression reads, in order of appearance.
    pub fn for_each_param(&self, f: &mut impl FnMut(usize, SqlType)) {
        match self {
            Expr::ExecParam(n, t) => f(*n, *t),
            Expr::Col(_) | Expr::Const(_) | Expr::Param(..) => {}
            Expr::Bin(_, l, r) => {
                l.for_each_param(f);
                r.for_each_param(f);
            }
            Expr::Not(x) | Expr::IsNull(x, _) => x.for_each_param(f),
            Expr::Func(_, args) => args.iter().for_each(|a| a.for_each_param(f)),
        }
    }

    /// The same expression with every `Param` replaced by `f`'s answer (the executor
    /// binds InitPlan values as constants; a foreign scan renumbers them `$1`, `$2`, …).
    pub fn map_params(&self, f: &impl Fn(usize, SqlType) -> Expr) -> Expr {
        match self {
            Expr::ExecParam(n, t) => f(*n, *t),
            Expr::Col(_) | Expr::Const(_) | Expr::Param(..) => self.clone(),
            Expr::Bin(op, l, r) => Expr::bin(*op, l.map_params(f), r.map_params(f)),
            Expr::Not(x) => Expr::Not(Box::new(x.map_params(f))),
            Expr::IsNull(x, neg) => Expr::IsNull(Box::new(x.map_params(f)), *neg),
            Expr::Func(func, args) => Expr::Func(*func, args.iter().map(|a| a.map_params(f)).collect()),
        }
    }
}

/// A numeric constant as PostgreSQL writes it: postgres_fdw's `deparseConst` for
/// remote SQL (`remote`), ruleutils' `get_const_expr` for EXPLAIN. A value with a
/// point is written as it prints; both label an integral one `::numeric` (else it
/// would read back as an integer), `deparseConst` unquoted and a signed one in
/// parentheses (`12::numeric`, `(-1.5)`), `get_const_expr` quoting every value that
/// does not start with a digit or has no point (`'12'::numeric`, `'-1.5'::numeric`);
/// NaN and Infinity are quoted by both.
/// A constant as EXPLAIN prints it (ruleutils.c's get_const_expr): an int4 or a
/// numeric that reads back as itself bare (`5`, `2.5`), anything else quoted and,
/// when `typed`, with its type (`'east'::text`, `'-2'::integer`,
/// `'5000000000'::bigint`, `'2'::numeric`, `'0.5'::double precision`); the parser
/// types an unknown literal from its context, so only these stay bare.
pub fn const_sql(d: &Datum, typed: bool) -> String {
    let label = |quoted: String, ty: &str| if typed { format!("{quoted}::{ty}") } else { quoted };
    match d {
        Datum::Null => "NULL".to_string(),
        // get_const_expr and deparseConst write a boolean as a keyword.
        Datum::Bool(b) => b.to_string(),
        Datum::Text(s) => label(format!("'{}'", s.replace('\'', "''")), "text"),
        Datum::Int(v) if i32::try_from(*v).is_ok_and(|v| v >= 0) => v.to_string(),
        Datum::Int(v) if i32::try_from(*v).is_ok() => label(format!("'{v}'"), "integer"),
        Datum::Int(v) => label(format!("'{v}'"), "bigint"),
        Datum::Float(_) => label(format!("'{d}'"), "double precision"),
        Datum::Numeric(n) if typed => numeric_const_sql(n, false),
        Datum::Numeric(n) => n.to_string(),
    }
}

pub fn numeric_const_sql(n: &crate::numeric::Numeric, remote: bool) -> String {
    let s = n.to_string();
    let (point, neg) = (s.contains('.'), s.starts_with('-'));
    let finite = matches!(n, crate::numeric::Numeric::Finite { .. });
    if !finite || !remote && (neg || !point) {
        return format!("'{s}'::numeric");
    }
    let s = if neg { format!("({s})") } else { s };
    if point {
        s
    } else {
        s + "::numeric"
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
}

impl AggFunc {
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::CountStar | AggFunc::Count => "count",
            AggFunc::Sum => "sum",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::Avg => "avg",
        }
    }
    /// PostgreSQL's result types: `avg` of an integer or numeric is numeric, of a
    /// float8 float8; `sum` keeps its argument's type here (an integer sum is an Int
    /// while it fits in int8, a numeric past it: `node_agg`) but for a bigint's, below.
    pub fn result_type(self, arg: ColType) -> ColType {
        match self {
            AggFunc::CountStar | AggFunc::Count => ColType::Int,
            AggFunc::Avg if arg == ColType::Float => ColType::Float,
            AggFunc::Avg => ColType::Numeric,
            _ => arg,
        }
    }

    /// The result type of this aggregate over an argument of `arg`, whose integer
    /// type is `int` when known: `result_type`, but `sum(bigint)` is numeric
    /// (pg_aggregate's sum(int8) is `int8_avg_accum` with `numeric_poly_sum` as its
    /// final function, which returns numeric; `sum(int4)`'s `int4_sum` is bigint). An
    /// integer of unknown width (the built-in scenarios' tables) keeps the Int sum.
    pub fn result_type_of(self, arg: ColType, int: Option<SqlType>) -> ColType {
        match (self, arg, int) {
            (AggFunc::Sum, ColType::Int, Some(SqlType::Int8)) => ColType::Numeric,
            _ => self.result_type(arg),
        }
    }
}

/// One aggregate call, e.g. `sum(a)`; `arg` is None only for `count(*)`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AggCall {
    pub func: AggFunc,
    pub arg: Option<Expr>,
    /// `count(DISTINCT x)`, `sum(DISTINCT x)`, …: each distinct value of the argument
    /// once per group (an Aggref's `aggdistinct`). Such an aggregate is never hashed
    /// (`numOrderedAggs`), nor split into partial ones.
    pub distinct: bool,
}

impl AggCall {
    /// The Agg's output column for this call over `input`: min and max of an integer
    /// keep its integer type (`int4larger`); count and sum of integers are bigint
    /// (`int4_sum`'s int8), which an unknown integer type is taken as.
    pub fn output_column(&self, input: &[Column]) -> Column {
        let ty = self.arg.as_ref().map(|e| e.col_type(input)).unwrap_or(ColType::Int);
        let int = self.arg.as_ref().and_then(|e| e.int_type(input));
        let mut c = Column::new(self.func.name(), self.func.result_type_of(ty, int));
        c.sql_type = match (self.func, &self.arg, c.ty) {
            (AggFunc::Min | AggFunc::Max, Some(arg), ColType::Int) => arg.int_type(input),
            (AggFunc::Count | AggFunc::CountStar | AggFunc::Sum, _, ColType::Int) => Some(SqlType::Int8),
            _ => None,
        };
        c
    }
}

/// What a window function computes (PostgreSQL's `WindowFunc.winfnoid`), the subset
/// the sandbox runs: the built-in window functions (windowfuncs.c) and the plain
/// aggregates used as window aggregates (`executor::node_windowagg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum WinKind {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    /// `ntile(n)`: its bucket count the call's first extra argument.
    Ntile,
    /// `lag(x [, offset [, default]])`: offset and default the extra arguments.
    Lag,
    Lead,
    FirstValue,
    LastValue,
    /// `nth_value(x, n)`: n the extra argument.
    NthValue,
    Agg(AggFunc),
}

impl WinKind {
    pub fn name(self) -> &'static str {
        match self {
            WinKind::RowNumber => "row_number",
            WinKind::Rank => "rank",
            WinKind::DenseRank => "dense_rank",
            WinKind::PercentRank => "percent_rank",
            WinKind::CumeDist => "cume_dist",
            WinKind::Ntile => "ntile",
            WinKind::Lag => "lag",
            WinKind::Lead => "lead",
            WinKind::FirstValue => "first_value",
            WinKind::LastValue => "last_value",
            WinKind::NthValue => "nth_value",
            WinKind::Agg(f) => f.name(),
        }
    }
}

/// One window function call of a WindowAgg: its kind, its argument (a column of the
/// WindowAgg's input; None for the ranking functions, `ntile` and `count(*)`) and its
/// further arguments, constants (lag/lead's offset and default, nth_value's n,
/// ntile's bucket count), evaluated by the WindowAgg as PostgreSQL evaluates them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WindowFunc {
    pub kind: WinKind,
    pub arg: Option<usize>,
    pub extra: Vec<Expr>,
}

impl WindowFunc {
    /// The WindowAgg's output column for this call over `input`: the ranking
    /// functions and count are bigint, ntile integer, percent_rank and cume_dist
    /// float8, the value functions their argument's type; the aggregates' as an
    /// Agg's ([`AggCall::output_column`]).
    pub fn output_column(&self, input: &[Column]) -> Column {
        let typed = |ty: ColType, sql: SqlType| {
            let mut c = Column::new(self.kind.name(), ty);
            c.sql_type = Some(sql);
            c
        };
        match self.kind {
            WinKind::Agg(func) => AggCall { func, arg: self.arg.map(Expr::Col), distinct: false }.output_column(input),
            WinKind::Ntile => typed(ColType::Int, SqlType::Int4),
            WinKind::PercentRank | WinKind::CumeDist => typed(ColType::Float, SqlType::Float8),
            WinKind::Lag | WinKind::Lead | WinKind::FirstValue | WinKind::LastValue | WinKind::NthValue => {
                let mut c =
                    self.arg.and_then(|a| input.get(a)).cloned().unwrap_or_else(|| Column::new("", ColType::Int));
                c.name = self.kind.name().to_string();
                c
            }
            _ => typed(ColType::Int, SqlType::Int8),
        }
    }
}

/// A window's frame (PostgreSQL's `frameOptions` with `startOffset` / `endOffset`):
/// ROWS counts rows from the current one, RANGE compares the single ORDER BY
/// column's value with the current row's (CURRENT ROW: its peers). The default is
/// `RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WinFrame {
    pub rows: bool,
    pub start: FrameBound,
    pub end: FrameBound,
}

impl Default for WinFrame {
    fn default() -> Self {
        WinFrame { rows: false, start: FrameBound::UnboundedPreceding, end: FrameBound::CurrentRow }
    }
}

/// One end of a frame; an offset is a constant (a row count for ROWS, a distance in
/// the ORDER BY column's type for RANGE).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(Expr),
    CurrentRow,
    Following(Expr),
    UnboundedFollowing,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SortKey {
    pub expr: Expr,
    pub desc: bool,
}

impl SortKey {
    pub fn asc(col: usize) -> SortKey {
        SortKey { expr: Expr::Col(col), desc: false }
    }
    pub fn desc(col: usize) -> SortKey {
        SortKey { expr: Expr::Col(col), desc: true }
    }
}

/// One output column of a remote query: a column of the remote table or an
/// aggregate over one (aggregate pushdown, as postgres_fdw does for partitionwise
/// aggregation).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum RemoteTarget {
    Col(usize),
    /// An aggregate of a column (None: `count(*)`); true: with DISTINCT
    /// (`count(DISTINCT grp)`, which postgres_fdw's appendAggregate writes so).
    Agg(AggFunc, Option<usize>, bool),
    /// A constant of an aggregated query's select list, shipped as it is: postgres_fdw's
    /// `foreign_grouping_ok` puts a shippable expression that is no grouping key into
    /// the grouped relation's remote target list (`SELECT 'f'::text, count(*)`).
    Const(#[serde(skip)] Datum),
}

/// The query a ForeignScan sends, before deparsing. Column numbers refer to
/// `table_columns`, the remote table's columns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RemoteQuery {
    pub table: String,
    #[serde(skip)]
    pub table_columns: Vec<Column>,
    pub targets: Vec<RemoteTarget>,
    pub quals: Vec<Expr>,
    pub group_by: Vec<usize>,
    /// HAVING conjuncts of an aggregated query, over the target list (`Col(i)` is the
    /// i-th target; past its end, the `i - targets.len()`-th of [`Self::having_aggs`]),
    /// as postgres_fdw ships a pushed-down aggregate's HAVING.
    pub having: Vec<Expr>,
    /// Aggregates only a shipped HAVING reads: written in it, not selected
    /// (`foreign_grouping_ok` puts a remote condition's aggregates into no target list).
    pub having_aggs: Vec<RemoteTarget>,
    /// ORDER BY over the table's columns; for an aggregated query ([`Self::aggregated`])
    /// over the target list, like `having`.
    pub order_by: Vec<SortKey>,
    pub limit: Option<u64>,
    /// OFFSET, sent with LIMIT when postgres_fdw pushes a query's LIMIT/OFFSET down
    /// (a plain foreign table; `add_foreign_final_paths`).
    pub offset: Option<u64>,
    /// A join of foreign tables on one server pushed down as one query
    /// (postgres_fdw's `postgresGetForeignJoinPaths`): `table_columns` are then the
    /// joined relations' columns one relation after another, and `quals` the
    /// join's WHERE ([`RemoteJoin`]). None for a scan of one table.
    pub join: Option<Box<RemoteJoin>>,
    /// The scan of postgres_fdw's foreign modify (UPDATE/DELETE that is no direct
    /// modify): the rows are locked, `… , ctid FROM t … FOR UPDATE`, and each comes
    /// with its ctid as a last column. None for any other scan.
    #[serde(skip)]
    pub row_mark: Option<RowMark>,
    /// The scan of a relation an UPDATE or DELETE reads beside its target (its FROM /
    /// USING list, a semi join's side): postgres_fdw reads its whole row, which the
    /// row mark keeps (`ROW_MARK_COPY`, preprocess_targetlist's `wholerow` junk
    /// column): every column goes into the remote select list, then `ctid` when a
    /// partitioned parent's mark reads it too; the scan outputs `targets` still.
    /// None for any other scan.
    #[serde(skip)]
    pub whole_row: Option<WholeRowMark>,
}

/// See [`RemoteQuery::whole_row`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WholeRowMark {
    /// Every column in the remote select list (the row mark's or an UPDATE's
    /// `wholerow`); false: `targets` only.
    pub whole: bool,
    /// The rows' `ctid` too (a partition of a partitioned relation, whose parent's
    /// `ROW_MARK_REFERENCE` asks for it).
    pub ctid: bool,
    /// `FOR UPDATE` (the target of a foreign modify over a join, its `ctid` a column
    /// of the scan: `coordinator_sql::modify_join`).
    pub for_update: bool,
}

/// A foreign modify's row mark on its scan (`postgresPlanForeignModify`'s scan,
/// deparse.c's `deparseLockingClause`): the scan sends `ctid` after its targets and
/// `FOR UPDATE`; `shown` is what EXPLAIN prints as the scan's Output, the modify's row
/// as PostgreSQL's subplan projects it (`'q'::text, ctid, ft.*`).
#[derive(Clone, Debug, PartialEq)]
pub struct RowMark {
    pub shown: Vec<String>,
}

/// A pushed-down join's relations and how they are joined (postgres_fdw's join
/// `PgFdwRelationInfo`, deparsed by `deparseFromExprForRel`). Every expression is over
/// the owning [`RemoteQuery::table_columns`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RemoteJoin {
    /// The base relations, in the order their columns are laid out.
    pub rels: Vec<RemoteRel>,
    pub tree: RemoteJoinTree,
}

/// One base relation of a pushed-down join.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RemoteRel {
    /// The remote table (`public.f_remote`).
    pub table: String,
    /// The local foreign table (`public.f`, EXPLAIN's Relations).
    pub relation: String,
    /// The name the query gives it (`d`; the relation's own name without an alias).
    pub alias: String,
    /// Its range-table index: the remote query calls it `r<rt_index>`.
    pub rt_index: usize,
    /// Its first column in `table_columns`, and how many it has.
    pub first: usize,
    pub ncols: usize,
    /// Its own conditions (its `remote_conds`), over `table_columns`: costed as its
    /// scan's, and placed in the join's ON or WHERE by the planner.
    pub quals: Vec<Expr>,
    /// A partitionwise join's partition: its parent's alias (the cost model reads the
    /// scan as a child join's member), None otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// A join tree of base relations (`deparseFromExprForRel`'s recursion).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum RemoteJoinTree {
    /// An index into [`RemoteJoin::rels`].
    Rel(usize),
    Join {
        /// Inner, Left or Full (a right join is a left join with its sides swapped).
        join_type: JoinType,
        outer: Box<RemoteJoinTree>,
        inner: Box<RemoteJoinTree>,
        /// The ON conditions, in the order deparsed; `join_clauses` of them are the
        /// join's own clauses (between its sides, the rest its sides' conditions
        /// pulled up): the core's row estimate reads those.
        on: Vec<Expr>,
        join_clauses: usize,
    },
}

impl RemoteJoinTree {
    /// The base relations under this node, in tree order.
    pub fn rels(&self) -> Vec<usize> {
        match self {
            RemoteJoinTree::Rel(r) => vec![*r],
            RemoteJoinTree::Join { outer, inner, .. } => {
                let mut v = outer.rels();
                v.extend(inner.rels());
                v
            }
        }
    }
}

impl RemoteQuery {
    /// `SELECT <cols> FROM table`, no quals.
    pub fn scan(table: &str, table_columns: Vec<Column>, cols: &[usize]) -> RemoteQuery {
        RemoteQuery {
            table: table.to_string(),
            table_columns,
            targets: cols.iter().map(|&c| RemoteTarget::Col(c)).collect(),
            quals: vec![],
            group_by: vec![],
            having: vec![],
            having_aggs: vec![],
            order_by: vec![],
            limit: None,
            offset: None,
            join: None,
            row_mark: None,
            whole_row: None,
        }
    }
    /// Does the query aggregate (GROUP BY or an aggregate in the target list or HAVING)?
    pub fn aggregated(&self) -> bool {
        !self.group_by.is_empty()
            || !self.having_aggs.is_empty()
            || self.targets.iter().any(|t| matches!(t, RemoteTarget::Agg(..)))
    }
    /// A pushed-down grouping's outputs that are its GROUP BY keys (none for a join or
    /// a query that does not group): what a select list over the scan that leaves them
    /// out still returns, as PostgreSQL's resjunk target entries.
    pub fn group_outputs(&self) -> Vec<usize> {
        if self.join.is_some() {
            return vec![];
        }
        (self.targets.iter().enumerate())
            .filter(|(_, t)| matches!(t, RemoteTarget::Col(c) if self.group_by.contains(c)))
            .map(|(i, _)| i)
            .collect()
    }
    /// Columns the foreign scan outputs.
    pub fn output_columns(&self) -> Vec<Column> {
        self.targets
            .iter()
            .map(|t| match t {
                RemoteTarget::Col(c) => self.table_columns[*c].clone(),
                RemoteTarget::Agg(f, arg, _) => {
                    let ty = arg.map(|c| self.table_columns[c].ty).unwrap_or(ColType::Int);
                    let int = arg.and_then(|c| self.table_columns[c].sql_type).filter(|t| t.is_integer());
                    Column::new(f.name(), f.result_type_of(ty, int))
                }
                RemoteTarget::Const(d) => Expr::Const(d.clone()).output_column("?column?", &[]),
            })
            .chain(self.row_mark.as_ref().map(|_| Column::new("ctid", ColType::Text)))
            .collect()
    }
}

/// A foreign table's scan: which server, and what it asks the server for.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForeignScanPlan {
    /// Local name of the foreign table (what EXPLAIN prints after "on").
    pub relation: String,
    pub server: String,
    pub remote: RemoteQuery,
    /// How EXPLAIN names the scan, when it reads a partition (see [`ScanName`]).
    pub alias: Option<ScanName>,
}

/// The names PostgreSQL's EXPLAIN gives a partition's scan: its range-table alias
/// (`players_1`) and, when the plan refers to the partitioned parent (an Append over
/// its partitions), the parent's (`players`), which the Append's output carries.
/// Output columns are then qualified, as PostgreSQL does with several range-table
/// entries.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScanName {
    pub alias: String,
    pub parent: Option<String>,
    /// A partition's scan (PostgreSQL's appendrel member, `RELOPT_OTHER_MEMBER_REL`),
    /// pruned to alone or not: never given a physical target list
    /// (`use_physical_tlist` takes base relations only; `instrument::explain`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub member: bool,
    /// In a join, the order EXPLAIN prints the relation's columns in (PostgreSQL's
    /// target lists, [`RelTlist`]); None elsewhere.
    #[serde(skip)]
    pub tlist: Option<RelTlist>,
    /// The scan reads the relation the query (or a partitionwise child join) names
    /// itself, under another alias: a partition so named is a plain base relation
    /// with its own statistics (`examine_variable` on its own `pg_statistic`), not its
    /// partitioned parent's lone remaining partition, whose columns carry the
    /// parent's (`plan::costsize`). Not printed.
    #[serde(skip)]
    pub direct: bool,
    /// The one partition that pruning left of a partitioned table: PostgreSQL plans
    /// an Append of this one scan, which setrefs.c removes (`set_append_references`),
    /// so EXPLAIN shows the scan alone. That Append was no async member of any Append
    /// above it (a set operation's, a UNION ALL subquery's: `mark_async_capable_plan`
    /// takes no Append path), and did not consider async for its one child
    /// (`create_append_plan` does only for more than one subpath): the scan never runs
    /// asynchronously. Not printed.
    #[serde(skip)]
    pub alone: bool,
    /// The query's one relation, named under an alias (`from f x`): EXPLAIN's title
    /// names the alias (`Foreign Scan on public.f x`), but with one range-table entry
    /// `Output:` is not qualified (explain.c's `useprefix`), where every other name
    /// here is one of several entries. Not printed.
    #[serde(skip)]
    pub unqualified: bool,
}

/// A base relation of a join as PostgreSQL's target lists order it, for EXPLAIN
/// (`coordinator_sql::tlist_order`): its place among the query's relations (a join
/// relation's target list is its relations' columns in that order,
/// `build_joinrel_tlist` over the join search's first pair, FROM order when every
/// relation joins every other) and its columns in its `reltarget`'s order (the final
/// target list's, then the join clauses', `build_base_rel_tlists` and
/// `add_vars_to_targetlist`). The executor runs its own column order; only EXPLAIN's
/// `Output:` lines follow this one.
#[derive(Clone, Debug, PartialEq)]
pub struct RelTlist {
    pub rank: usize,
    pub columns: Vec<String>,
    /// For each of `columns`: its place in the query's whole reltarget order (the
    /// final target list's columns first, in its order) and its `attr_needed` as a bit
    /// set (bit 63 the upper levels, bit k the k-th relation), from which EXPLAIN
    /// tells which columns a join relation returns (`build_joinrel_tlist`).
    pub needed: Vec<(usize, u64)>,
}

/// What ExecInitPartitionPruning needs to prune an Append's children at executor
/// startup (PostgreSQL's `PartitionPruneInfo` with initial pruning steps): the
/// partitioned table's key, each child's bound (in child order), every bound of the
/// table (a default partition holds what the others do not), and the conditions on
/// the key, over the table's columns, whose parameters are bound at startup.
#[derive(Clone, Debug, PartialEq)]
pub struct PartPruneInfo {
    pub strategy: crate::coordinator_sql::statement::Strategy,
    pub key: Vec<usize>,
    pub key_types: Vec<SqlType>,
    pub bounds: Vec<crate::coordinator_sql::catalog::Bound>,
    pub all_bounds: Vec<crate::coordinator_sql::catalog::Bound>,
    pub conjuncts: Vec<Expr>,
}

/// PostgreSQL's `JoinType` for the joins the sandbox executes: which side's rows
/// without a match are returned, null-extended on the other side's columns (the
/// outer side's for `Left`, the inner side's for `Right`, both for `Full`). The sides
/// are the plan node's outer and inner, not the query's left and right: a query's
/// LEFT JOIN whose left relation is the inner side runs as `Right`.
///
/// `Semi` and `Anti` (PostgreSQL's `JOIN_SEMI`, `JOIN_ANTI`: an `IN`/`EXISTS` or
/// `NOT EXISTS` sublink pulled up into a join, `pull_up_sublinks`) return outer rows
/// only: a semi join each outer row that has a match, once (the executor stops at its
/// first match, `single_match`), an anti join each outer row that has none, with
/// NULLs for the inner side. Their sides never swap (PostgreSQL 15 has no right semi
/// or anti join).
///
/// `UniqueInner` and `UniqueOuter` are a semi join planned the other way PostgreSQL
/// plans it (`JOIN_UNIQUE_INNER`, `JOIN_UNIQUE_OUTER`): an inner join with the
/// subquery's side made unique on the join key (a HashAggregate, or Unique over a
/// Sort: `create_unique_path`) as its inner or outer side. Both are `Inner` joins in
/// EXPLAIN; the join relation's rows are still the semi join's, and over a unique
/// inner side the executor stops at the first match (`inner_unique`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum JoinType {
    Inner,
    Left,
    Right,
    Full,
    Semi,
    Anti,
    UniqueInner,
    UniqueOuter,
}

impl JoinType {
    /// The word EXPLAIN puts in a join's name (`Hash Left Join`) and in JSON's
    /// `Join Type`.
    pub fn name(self) -> &'static str {
        match self {
            JoinType::Inner | JoinType::UniqueInner | JoinType::UniqueOuter => "Inner",
            JoinType::Left => "Left",
            JoinType::Right => "Right",
            JoinType::Full => "Full",
            JoinType::Semi => "Semi",
            JoinType::Anti => "Anti",
        }
    }
    /// Are the outer side's unmatched rows returned (null-extended)? An anti join's
    /// are its only rows.
    pub fn fills_outer(self) -> bool {
        matches!(self, JoinType::Left | JoinType::Full | JoinType::Anti)
    }
    /// Does the join stop at an outer row's first match (`js.single_match` for
    /// `JOIN_SEMI` and `JOIN_ANTI`)?
    pub fn single_match(self) -> bool {
        matches!(self, JoinType::Semi | JoinType::Anti | JoinType::UniqueInner)
    }
    /// Are the matched pairs returned (not by an anti join)?
    pub fn returns_matches(self) -> bool {
        self != JoinType::Anti
    }
    /// Are the inner side's unmatched rows returned?
    pub fn fills_inner(self) -> bool {
        matches!(self, JoinType::Right | JoinType::Full)
    }
    /// The same join with its sides exchanged.
    pub fn commuted(self) -> JoinType {
        match self {
            JoinType::Left => JoinType::Right,
            JoinType::Right => JoinType::Left,
            t => t,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum AggStrategy {
    Plain,
    Hashed,
    /// GroupAggregate (`AGG_SORTED`): the input comes sorted by the group keys, so a
    /// group is complete when the key changes and goes out at once.
    Sorted,
    /// SELECT DISTINCT's sorted path (`create_upper_unique_path`, a Unique node over
    /// input sorted by the DISTINCT list): executed as a sorted grouping without
    /// aggregates, shown as `Unique`, costed as a Unique. In the shards' logical plan
    /// it marks the Agg that stands for a DISTINCT, whose strategy the coordinator's
    /// planner then chooses (Unique or HashAggregate, `create_distinct_paths`).
    Unique,
}

/// PostgreSQL's `AggSplit`: a whole aggregation (`AGGSPLIT_SIMPLE`), or its two
/// halves when each partition aggregates partially (partitionwise aggregation without
/// the partition key grouped): `Partial` returns each group's transition values
/// (EXPLAIN: `PARTIAL count(*)`), `Finalize` combines the partial values of a group
/// (a count sums the partial counts, a min takes their min) and finishes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Default)]
pub enum AggSplit {
    #[default]
    Simple,
    Partial,
    Finalize,
}

impl AggSplit {
    pub fn is_simple(&self) -> bool {
        *self == AggSplit::Simple
    }
}

/// Which set operation a SetOp node computes (PostgreSQL's `SetOpCmd`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SetOpCmd {
    Intersect,
    IntersectAll,
    Except,
    ExceptAll,
}

impl SetOpCmd {
    /// The name EXPLAIN prints after `SetOp` / `HashSetOp`.
    pub fn explain_name(self) -> &'static str {
        match self {
            SetOpCmd::Intersect => "Intersect",
            SetOpCmd::IntersectAll => "Intersect All",
            SetOpCmd::Except => "Except",
            SetOpCmd::ExceptAll => "Except All",
        }
    }
}

/// How a SetOp finds equal rows (PostgreSQL's `SetOpStrategy`): over input sorted on
/// every column, or in a hash table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SetOpStrategy {
    Sorted,
    Hashed,
}

/// A plan tree. Every node's output columns are given by `Plan::output_columns`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Plan {
    SeqScan {
        table: String,
        #[serde(skip)]
        columns: Vec<Column>,
        /// How EXPLAIN names the scan of a partition.
        alias: Option<ScanName>,
    },
    /// Reads a table in the order of its index on `column` (backwards when `desc`):
    /// an Index Scan, or an Index Only Scan when `index_only` (every column it returns
    /// is the index's). `quals` are its Index Cond, over its `columns`, each on the
    /// indexed column (`coordinator_sql::indxpath`; `executor::node_indexscan`).
    IndexScan {
        table: String,
        #[serde(skip)]
        columns: Vec<Column>,
        column: usize,
        desc: bool,
        #[serde(skip)]
        alias: Option<ScanName>,
        index_only: bool,
        #[serde(skip)]
        quals: Vec<Expr>,
        /// A parameterized scan (a Nested Loop's inner side): one more Index Cond,
        /// `key = ` the outer row's join key, which the Nested Loop above sets before
        /// each pass.
        #[serde(skip)]
        nest_param: Option<NestParam>,
    },
    /// Bitmap Heap Scan (`executor::node_bitmapheapscan`): the rows whose row numbers
    /// its child, a `BitmapIndexScan` of the same table, collected, read in heap
    /// order; `recheck` (over `columns`) is its Recheck Cond, the index's conditions.
    /// `types` are the table's column types, which lay out its heap pages.
    BitmapHeapScan {
        table: String,
        #[serde(skip)]
        columns: Vec<Column>,
        #[serde(skip)]
        alias: Option<ScanName>,
        #[serde(skip)]
        recheck: Vec<Expr>,
        #[serde(skip)]
        types: Vec<SqlType>,
        child: Box<Plan>,
    },
    /// Bitmap Index Scan (`executor::node_bitmapheapscan`): the row numbers of the
    /// index entries of `table`'s index on `column` that satisfy `quals` (over one
    /// column, the index key), for the Bitmap Heap Scan above.
    BitmapIndexScan {
        table: String,
        column: usize,
        #[serde(skip)]
        quals: Vec<Expr>,
        /// The Index Cond as EXPLAIN prints it: the heap scan's conditions over its
        /// columns, whose names the heap scan's output gives.
        #[serde(skip)]
        cond: Vec<Expr>,
    },
    ForeignScan(ForeignScanPlan),
    Append {
        children: Vec<Plan>,
        /// Run-time partition pruning (a generic plan's Append over a partitioned
        /// table with conditions on its key that compare with parameters).
        #[serde(skip)]
        prune: Option<Box<PartPruneInfo>>,
        /// An ordered Append (`generate_orderedappend_paths` over partitions whose
        /// bounds are in the query's order, `partitions_are_ordered`): its members, in
        /// that order, each return their rows in it, so their concatenation is ordered.
        /// None of them runs asynchronously (`create_append_plan` considers async
        /// members only for an Append without pathkeys).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        ordered: bool,
    },
    MergeAppend {
        children: Vec<Plan>,
        keys: Vec<SortKey>,
        /// Run-time partition pruning, as an Append's.
        #[serde(skip)]
        prune: Option<Box<PartPruneInfo>>,
    },
    Sort {
        child: Box<Plan>,
        keys: Vec<SortKey>,
    },
    /// Incremental Sort (nodeIncrementalSort.c, `create_incremental_sort_path`): the
    /// input is already ordered by the first `presorted` of `keys` (an index scan, an
    /// ordered Append); rows are sorted a group of equal prefix values at a time.
    /// Invariant: `0 < presorted < keys.len()`.
    IncrementalSort {
        child: Box<Plan>,
        keys: Vec<SortKey>,
        presorted: usize,
    },
    Limit {
        child: Box<Plan>,
        offset: u64,
        count: Option<u64>,
    },
    Agg {
        child: Box<Plan>,
        strategy: AggStrategy,
        group_by: Vec<Expr>,
        aggs: Vec<AggCall>,
        /// Whole, or one half of a partial aggregation (`AggSplit`).
        #[serde(skip_serializing_if = "AggSplit::is_simple")]
        split: AggSplit,
    },
    /// Projection and filter (PostgreSQL puts these on every node; we make them a node
    /// so the demo shows where rows are dropped). With no targets, the input passes through.
    Result {
        child: Box<Plan>,
        filter: Option<Expr>,
        targets: Option<Vec<(Expr, String)>>,
    },
    /// Hash Join: the inner side hashed on `inner_key`; the Hash Cond is
    /// `outer_key = inner_key` and each pair of `more_keys` (outer, inner) equal too.
    HashJoin {
        outer: Box<Plan>,
        inner: Box<Plan>,
        outer_key: Expr,
        inner_key: Expr,
        more_keys: Vec<(Expr, Expr)>,
        join_type: JoinType,
        /// The join relation's rows, as PostgreSQL sizes a join relation once
        /// (`set_joinrel_size_estimates`, from the first pair of inputs that makes
        /// it) and every path of it shares them: this join's rows after its Join
        /// Filter. None: estimated from this node's own inputs and clauses.
        #[serde(skip_serializing_if = "Option::is_none")]
        joinrel_rows: Option<f64>,
    },
    /// Nested Loop with a Join Filter `outer_key = inner_key`; the inner side is
    /// rescanned for each outer row (`executor::node_nestloop`). Keys that are both
    /// constants ([`clauseless_join_keys`]) make a Nested Loop without a join clause
    /// (its every pair joins): PostgreSQL's join of relations whose equality an
    /// equivalence class with a constant made redundant (`coordinator_sql::equivclass`).
    NestLoop {
        outer: Box<Plan>,
        inner: Box<Plan>,
        outer_key: Expr,
        inner_key: Expr,
        /// The Join Filter names the inner side's key first: the join condition as
        /// the query has it, its first relation inner once the planner swapped the
        /// sides by cost (PostgreSQL keeps a Nested Loop's join clause as written;
        /// only a Hash Join's clauses are switched to put the outer side first).
        filter_inner_first: bool,
        /// `Inner` or `Left` (nodeNestloop.c cannot return the inner side's
        /// unmatched rows).
        join_type: JoinType,
        /// The join relation's rows, as PostgreSQL sizes a join relation once
        /// (`set_joinrel_size_estimates`, from the first pair of inputs that makes
        /// it) and every path of it shares them: this join's rows after its Join
        /// Filter. None: estimated from this node's own inputs and clauses.
        #[serde(skip_serializing_if = "Option::is_none")]
        joinrel_rows: Option<f64>,
    },
    /// Merge Join (`executor::node_mergejoin`): both inputs ordered by their key,
    /// ascending with NULLs last (a Sort under each, or an input already in that
    /// order); the Merge Cond is `outer_key = inner_key`. `join_type` says which
    /// side's unmatched rows come out null-extended.
    MergeJoin {
        outer: Box<Plan>,
        inner: Box<Plan>,
        outer_key: Expr,
        inner_key: Expr,
        join_type: JoinType,
        /// The join relation's rows, as PostgreSQL sizes a join relation once
        /// (`set_joinrel_size_estimates`, from the first pair of inputs that makes
        /// it) and every path of it shares them: this join's rows after its Join
        /// Filter. None: estimated from this node's own inputs and clauses.
        #[serde(skip_serializing_if = "Option::is_none")]
        joinrel_rows: Option<f64>,
    },
    /// Materialize: keeps its child's rows; a rescan replays them
    /// (`executor::node_material`).
    Material {
        child: Box<Plan>,
    },
    /// Memoize: a cache of its parameterized child's rows by the Nested Loop's
    /// parameter value (`executor::node_memoize`); `cache_key` is the outer column as
    /// EXPLAIN's `Cache Key:` names it (`s.big_id`).
    Memoize {
        child: Box<Plan>,
        cache_key: String,
    },
    /// No input at all: every partition was pruned. PostgreSQL plans a dummy relation
    /// as a Result node whose one-time filter is `false` (set_dummy_rel_pathlist), so it
    /// returns no row without reading anything.
    EmptyResult {
        #[serde(skip)]
        columns: Vec<Column>,
        /// Each column's relation alias, when it is a Var of that relation (a base or
        /// join relation made dummy), which EXPLAIN qualifies where it qualifies any (a
        /// sort key under VERBOSE: `Sort Key: h.id`); empty for a placeholder.
        #[serde(skip)]
        rels: Vec<Option<String>>,
        /// The dummy relation is a join: the range table has several entries, so
        /// `Output:` is qualified too (`Output: a.id, b.u`).
        #[serde(skip)]
        joined: bool,
    },
    /// `child` with InitPlans attached (PostgreSQL's `Plan.initPlan` of the query
    /// level's top node): not a node of its own. The executor starts the InitPlans
    /// before the child (`executor::node_subplan`); EXPLAIN shows them under the
    /// child's top node, before its children.
    WithInitPlans {
        child: Box<Plan>,
        init_plans: Vec<InitPlan>,
    },
    /// `child` with the query's common table expressions attached (PostgreSQL's CTE
    /// subplans, `SS_process_ctes`, kept in the query level's `initPlan` list): not a
    /// node of its own. The executor starts the CTEs' plans before the child and
    /// runs the data-modifying ones to completion after it (`executor::node_ctescan`);
    /// EXPLAIN shows each as `CTE name` under the child's top node.
    WithCtes {
        child: Box<Plan>,
        ctes: Vec<CtePlan>,
    },
    /// CTE Scan (nodeCtescan.c): reads CTE `cte` (an index into the enclosing
    /// [`Plan::WithCtes`]'s list) from the tuplestore its CTE Scans share
    /// (`executor::node_ctescan`).
    CteScan {
        cte: usize,
        /// The CTE's name, and the alias the query gives it (if another).
        name: String,
        alias: Option<String>,
        #[serde(skip)]
        columns: Vec<Column>,
        /// Where each of `columns` is in the CTE's row.
        positions: Vec<usize>,
        /// The CTE plan's row estimate (`set_cte_size_estimates`).
        rows: f64,
    },
    /// PostgreSQL's gating Result (`create_gating_plan`): `qual`, a pseudoconstant (no
    /// column: a stable function such as CURRENT_USER, a generic plan's parameter, or
    /// only InitPlan values, `($0 > 2)`), is checked once before the child runs
    /// (`One-Time Filter:`); when it is not true the child never runs
    /// (`executor::node_result`).
    Gating {
        child: Box<Plan>,
        qual: Expr,
    },
    /// `generate_series(start, stop, step)` in FROM over integers: a Function Scan
    /// (`executor::node_functionscan`) returning one column.
    FunctionScan {
        alias: Option<String>,
        #[serde(skip)]
        column: Column,
        start: i64,
        stop: i64,
        step: i64,
    },
    /// A set operation's branch as a subquery (`Subquery Scan on "*SELECT* 1"`): its
    /// target list over the branch's output, e.g. the branch's columns and the flag
    /// constant of INTERSECT / EXCEPT (`executor::node_subqueryscan`).
    SubqueryScan {
        child: Box<Plan>,
        alias: String,
        targets: Vec<(Expr, String)>,
    },
    /// WindowAgg (nodeWindowAgg.c): its input sorted on `part` then `order` (a Sort
    /// below, or input already in that order), returns each input row followed by
    /// the value of each of `funcs` for it, over its partition (rows equal on `part`)
    /// over `frame` (by default from the partition's start to the row's last peer, rows
    /// equal on `order`; the whole partition without `order`)
    /// (`executor::node_windowagg`). Output: the input's columns, then one per func.
    /// Several windows stack WindowAggs, each passing the ones below's results up.
    WindowAgg {
        child: Box<Plan>,
        funcs: Vec<WindowFunc>,
        part: Vec<usize>,
        order: Vec<SortKey>,
        frame: WinFrame,
        /// On the top WindowAgg of a query (under its select list's projection): the
        /// input columns that are resjunk entries of the final target list, every
        /// window's PARTITION BY / ORDER BY expressions (`findTargetlistEntrySQL99`),
        /// in target list order; empty on the WindowAggs below it.
        resjunk: Vec<usize>,
    },
    /// Unique (nodeUnique.c): drops a row equal, on its first `ncols` columns, to the
    /// row before it; the input is sorted on them (`executor::node_unique`).
    Unique {
        child: Box<Plan>,
        ncols: usize,
    },
    /// SetOp (nodeSetOp.c): INTERSECT [ALL] / EXCEPT [ALL] over an Append of the two
    /// inputs, each row carrying its input's flag (0 or 1) in column `ncols`; rows
    /// whose flag is `first_flag` came from the first input (`executor::node_setop`).
    SetOp {
        child: Box<Plan>,
        cmd: SetOpCmd,
        strategy: SetOpStrategy,
        ncols: usize,
        first_flag: i64,
    },
    /// ModifyTable (nodeModifyTable.c): an INSERT of its child's rows
    /// ([`modifytable`], `executor::node_modifytable`); it returns no row.
    ModifyTable(Box<modifytable::ModifyTablePlan>),
    /// postgres_fdw's direct modify: `Foreign Update` / `Foreign Delete`
    /// ([`modifytable::DirectModifyPlan`]); under a ModifyTable, returns no row.
    DirectModify(Box<modifytable::DirectModifyPlan>),
    /// `INSERT … VALUES`'s source (`executor::node_modifytable`): one row is a Result
    /// without an input (nodeResult.c with no outer plan), more a Values Scan
    /// (nodeValuesscan.c) on `"*VALUES*"`.
    ConstResult {
        /// The rows, each an expression per column (constants).
        rows: Vec<Vec<Expr>>,
        #[serde(skip)]
        columns: Vec<Column>,
    },
}

/// The keys of a Nested Loop without a join clause (`Plan::NestLoop`): two equal
/// constants, always true; EXPLAIN prints no Join Filter and the cost model counts
/// neither a comparison nor a selectivity for them.
pub fn clauseless_join_keys() -> (Expr, Expr) {
    (Expr::Const(crate::types::Datum::Bool(true)), Expr::Const(crate::types::Datum::Bool(true)))
}

/// Are a Nested Loop's keys [`clauseless_join_keys`]?
pub fn is_clauseless_join(outer_key: &Expr, inner_key: &Expr) -> bool {
    matches!((outer_key, inner_key), (Expr::Const(_), Expr::Const(_)))
}

/// A Nested Loop's parameter in its inner Index Scan's Index Cond (PostgreSQL's
/// `NestLoopParam`): its number in `EState::nest_params`, and the outer column it
/// stands for as EXPLAIN prints it (`h.id`).
#[derive(Clone, Debug, PartialEq)]
pub struct NestParam {
    pub no: usize,
    pub outer: String,
}

/// What a sublink asks of its subquery (PostgreSQL's `SubLinkType`, the kinds the
/// sandbox runs as InitPlans).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SubLinkKind {
    /// `(SELECT …)` as a value: its one row's first column, NULL without a row, an
    /// error with more than one (EXPR_SUBLINK).
    Expr,
    /// `x IN (SELECT …)` as a hashed SubPlan (ANY_SUBLINK, `useHashTable`): all its
    /// rows' first column, looked up per outer row; no parameter.
    Hashed,
    /// `EXISTS (SELECT …)`: true at its first row (EXISTS_SUBLINK).
    Exists,
    /// A correlated `EXISTS (SELECT … WHERE inner = outer …)` under OR or NOT, run as
    /// the hashed alternative PostgreSQL plans beside it and picks by cost
    /// (`convert_EXISTS_to_ANY`, `fix_alternative_subplan`): `outer = ANY (SELECT inner
    /// …)` hashed, with `unknownEqFalse` (a NULL comparison counts as no match, so the
    /// test is never NULL, as EXISTS is not). Its argument is the outer expression.
    HashedExists,
    /// `x op ALL (SELECT …)` (`all`) or `x op ANY (SELECT …)` not made a join nor
    /// hashed (ALL_SUBLINK / ANY_SUBLINK with an operator that does not hash): a
    /// SubPlan over its subquery (materialized), run for each outer row with `x` as its
    /// call's argument, folding `x op v` over the rows with SQL's NULL rules.
    AnyAll { op: BinOp, all: bool },
    /// `(SELECT …)` as a value that reads the outer row (a correlated EXPR_SUBLINK):
    /// a SubPlan run again for each outer row with its parameters (`InitPlan::args`)
    /// set, its value as `Expr`'s. It returns no parameter (`param` is unused).
    Correlated,
}

impl SubLinkKind {
    /// A hashed SubPlan (its rows read once into a table, no parameter of its own)?
    pub fn is_hashed(self) -> bool {
        matches!(self, SubLinkKind::Hashed | SubLinkKind::HashedExists)
    }
}

/// An uncorrelated subquery run at most once, on the first use of its value
/// (PostgreSQL's initPlan SubPlan): `InitPlan <plan_id> (returns $<param>)`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InitPlan {
    /// 1-based, in the order PostgreSQL numbers its subplans.
    pub plan_id: usize,
    /// The PARAM_EXEC number of its value (`Expr::ExecParam`).
    pub param: usize,
    pub kind: SubLinkKind,
    pub plan: Plan,
    /// A correlated SubPlan's parameters (PARAM_EXEC numbers), in the order of its
    /// `Func::SubPlan` call's arguments (`SubPlan.parParam`/`args`); empty otherwise.
    pub args: Vec<usize>,
    /// How EXPLAIN names each of `args` inside the SubPlan: the outer column it
    /// stands for (`h.grp`), as ruleutils.c prints a PARAM_EXEC that an outer Var
    /// became; empty otherwise.
    pub arg_names: Vec<String>,
}

/// A common table expression kept as a subplan (PostgreSQL's CTE SubPlan,
/// `CTE_SUBLINK`): its plan, run once into a tuplestore that its CTE Scans read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CtePlan {
    /// The CTE's name (EXPLAIN: `CTE name`).
    pub name: String,
    /// 1-based: PostgreSQL numbers the CTEs' subplans first, in WITH's order.
    pub plan_id: usize,
    pub plan: Plan,
    /// INSERT, UPDATE or DELETE: run to completion even when nothing reads it all
    /// (ExecPostprocessPlan).
    pub modifying: bool,
}

impl Plan {
    pub fn output_columns(&self) -> Vec<Column> {
        match self {
            Plan::SeqScan { columns, .. }
            | Plan::IndexScan { columns, .. }
            | Plan::BitmapHeapScan { columns, .. }
            | Plan::EmptyResult { columns, .. } => columns.clone(),
            // Row numbers, one per entry.
            Plan::BitmapIndexScan { .. } => vec![Column::new("ctid", ColType::Int)],
            Plan::ForeignScan(f) => f.remote.output_columns(),
            Plan::Append { children, .. } | Plan::MergeAppend { children, .. } => {
                children.first().map(|c| c.output_columns()).unwrap_or_default()
            }
            Plan::Sort { child, .. } | Plan::Limit { child, .. } | Plan::Material { child } => child.output_columns(),
            Plan::Memoize { child, .. } => child.output_columns(),
            Plan::IncrementalSort { child, .. } => child.output_columns(),
            Plan::Unique { child, .. } | Plan::Gating { child, .. } | Plan::WithInitPlans { child, .. } => {
                child.output_columns()
            }
            Plan::WindowAgg { child, funcs, .. } => {
                let mut out = child.output_columns();
                let input = out.clone();
                out.extend(funcs.iter().map(|f| f.output_column(&input)));
                out
            }
            Plan::FunctionScan { column, .. } => vec![column.clone()],
            Plan::CteScan { columns, .. } => columns.clone(),
            Plan::WithCtes { child, .. } => child.output_columns(),
            Plan::ModifyTable(m) => {
                // An INSERT's RETURNING reads the inserted row (the table's columns); an
                // UPDATE's or DELETE's, the child's row.
                let input = match (&m.target, m.operation) {
                    // A foreign modify's: the columns its remote statement returns.
                    (modifytable::ResultRel::ForeignRow(f), _) => f.returned.clone(),
                    // A partitioned UPDATE's or DELETE's: the table's row.
                    (modifytable::ResultRel::Partitions(_), _) | (_, modifytable::CmdType::Insert) => {
                        m.columns.iter().map(|(n, t)| Column::typed(n, *t)).collect()
                    }
                    _ => m.child.output_columns(),
                };
                m.returning.iter().map(|(e, n)| e.output_column(n, &input)).collect()
            }
            Plan::DirectModify(d) => d.returning.clone(),
            Plan::ConstResult { columns, .. } => columns.clone(),
            Plan::SetOp { child, ncols, .. } => child.output_columns().into_iter().take(*ncols).collect(),
            Plan::SubqueryScan { child, targets, .. } => {
                let input = child.output_columns();
                targets.iter().map(|(e, n)| e.output_column(n, &input)).collect()
            }
            Plan::Agg { child, group_by, aggs, .. } => {
                let input = child.output_columns();
                let mut out: Vec<Column> = group_by
                    .iter()
                    .map(|e| match e {
                        Expr::Col(i) => input[*i].clone(),
                        e => e.output_column("?column?", &input),
                    })
                    .collect();
                for a in aggs {
                    out.push(a.output_column(&input));
                }
                out
            }
            Plan::Result { child, targets, .. } => {
                let input = child.output_columns();
                match targets {
                    None => input,
                    Some(t) => t.iter().map(|(e, n)| e.output_column(n, &input)).collect(),
                }
            }
            Plan::HashJoin { outer, inner, .. }
            | Plan::NestLoop { outer, inner, .. }
            | Plan::MergeJoin { outer, inner, .. } => {
                let mut c = outer.output_columns();
                c.extend(inner.output_columns());
                c
            }
        }
    }

    /// Calls `f` with every expression of the tree: filters, projections, keys,
    /// aggregate arguments, remote quals and HAVING, pruning conditions.
    pub fn for_each_expr_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match self {
            Plan::SeqScan { .. } | Plan::EmptyResult { .. } => {}
            Plan::IndexScan { quals, .. } => quals.iter_mut().for_each(f),
            Plan::BitmapHeapScan { recheck, child, .. } => {
                recheck.iter_mut().for_each(&mut *f);
                child.for_each_expr_mut(f);
            }
            Plan::BitmapIndexScan { quals, cond, .. } => quals.iter_mut().chain(cond.iter_mut()).for_each(f),
            Plan::ForeignScan(s) => s.remote.quals.iter_mut().chain(s.remote.having.iter_mut()).for_each(f),
            Plan::Append { children, prune, .. } => {
                if let Some(p) = prune {
                    p.conjuncts.iter_mut().for_each(&mut *f);
                }
                children.iter_mut().for_each(|c| c.for_each_expr_mut(f));
            }
            Plan::MergeAppend { children, keys, prune } => {
                if let Some(p) = prune {
                    p.conjuncts.iter_mut().for_each(&mut *f);
                }
                keys.iter_mut().for_each(|k| f(&mut k.expr));
                children.iter_mut().for_each(|c| c.for_each_expr_mut(f));
            }
            Plan::Sort { child, keys } | Plan::IncrementalSort { child, keys, .. } => {
                keys.iter_mut().for_each(|k| f(&mut k.expr));
                child.for_each_expr_mut(f);
            }
            Plan::WindowAgg { child, order, .. } => {
                order.iter_mut().for_each(|k| f(&mut k.expr));
                child.for_each_expr_mut(f);
            }
            Plan::Limit { child, .. }
            | Plan::Material { child }
            | Plan::Memoize { child, .. }
            | Plan::Unique { child, .. }
            | Plan::SetOp { child, .. } => child.for_each_expr_mut(f),
            Plan::FunctionScan { .. } | Plan::CteScan { .. } => {}
            Plan::WithCtes { child, ctes } => {
                ctes.iter_mut().for_each(|c| c.plan.for_each_expr_mut(f));
                child.for_each_expr_mut(f);
            }
            Plan::ModifyTable(m) => {
                m.returning.iter_mut().for_each(|(e, _)| f(e));
                m.child.for_each_expr_mut(f)
            }
            Plan::DirectModify(_) => {}
            Plan::ConstResult { rows, .. } => rows.iter_mut().flatten().for_each(f),
            Plan::WithInitPlans { child, init_plans } => {
                init_plans.iter_mut().for_each(|i| i.plan.for_each_expr_mut(f));
                child.for_each_expr_mut(f);
            }
            Plan::Gating { child, qual } => {
                f(qual);
                child.for_each_expr_mut(f);
            }
            Plan::SubqueryScan { child, targets, .. } => {
                targets.iter_mut().for_each(|(e, _)| f(e));
                child.for_each_expr_mut(f);
            }
            Plan::Agg { child, group_by, aggs, .. } => {
                group_by.iter_mut().for_each(&mut *f);
                aggs.iter_mut().filter_map(|a| a.arg.as_mut()).for_each(&mut *f);
                child.for_each_expr_mut(f);
            }
            Plan::Result { child, filter, targets } => {
                filter.iter_mut().for_each(&mut *f);
                targets.iter_mut().flatten().for_each(|(e, _)| f(e));
                child.for_each_expr_mut(f);
            }
            Plan::HashJoin { outer, inner, outer_key, inner_key, more_keys, .. } => {
                f(outer_key);
                f(inner_key);
                more_keys.iter_mut().for_each(|(o, i)| {
                    f(o);
                    f(i)
                });
                outer.for_each_expr_mut(f);
                inner.for_each_expr_mut(f);
            }
            Plan::NestLoop { outer, inner, outer_key, inner_key, .. }
            | Plan::MergeJoin { outer, inner, outer_key, inner_key, .. } => {
                f(outer_key);
                f(inner_key);
                outer.for_each_expr_mut(f);
                inner.for_each_expr_mut(f);
            }
        }
    }

    /// The parameters (`$n`) the plan reads, by number, each once, with its type.
    pub fn params(&mut self) -> Vec<(u16, SqlType)> {
        fn walk(e: &Expr, out: &mut Vec<(u16, SqlType)>) {
            match e {
                Expr::Param(n, t, _) => {
                    if !out.iter().any(|(m, _)| m == n) {
                        out.push((*n, *t));
                    }
                }
                Expr::Col(_) | Expr::Const(_) | Expr::ExecParam(..) => {}
                Expr::Bin(_, l, r) => {
                    walk(l, out);
                    walk(r, out);
                }
                Expr::Not(x) | Expr::IsNull(x, _) => walk(x, out),
                Expr::Func(_, args) => args.iter().for_each(|a| walk(a, out)),
            }
        }
        let mut out = Vec::new();
        self.for_each_expr_mut(&mut |e| walk(e, &mut out));
        crate::types::sort_short_by_key(&mut out, |(n, _)| *n);
        out
    }

    /// A join node's type (`Inner` for any other node).
    pub fn join_type(&self) -> JoinType {
        match self {
            Plan::MergeJoin { join_type, .. } | Plan::HashJoin { join_type, .. } | Plan::NestLoop { join_type, .. } => {
                *join_type
            }
            _ => JoinType::Inner,
        }
    }

    /// Gives a join node its join relation's rows (`joinrel_rows`); any other node
    /// is left as it is.
    pub fn set_joinrel_rows(&mut self, rows: Option<f64>) {
        if let Plan::HashJoin { joinrel_rows, .. }
        | Plan::NestLoop { joinrel_rows, .. }
        | Plan::MergeJoin { joinrel_rows, .. } = self
        {
            *joinrel_rows = rows;
        }
    }

    /// The input whose rows this node passes on, its columns first and in their
    /// order: a Sort, Incremental Sort, Limit, Material, Memoize, Unique, WindowAgg
    /// (its window values after them), gating Result, or a Result that does not
    /// project. None for any other node (a scan, a join, a projection, an aggregate).
    pub fn passes_rows_on(&self) -> Option<&Plan> {
        match self {
            Plan::Sort { child, .. }
            | Plan::IncrementalSort { child, .. }
            | Plan::Limit { child, .. }
            | Plan::Material { child }
            | Plan::Memoize { child, .. }
            | Plan::Unique { child, .. }
            | Plan::WindowAgg { child, .. }
            | Plan::Gating { child, .. }
            | Plan::Result { child, targets: None, .. } => Some(child),
            _ => None,
        }
    }

    pub fn children(&self) -> Vec<&Plan> {
        match self {
            Plan::SeqScan { .. }
            | Plan::IndexScan { .. }
            | Plan::BitmapIndexScan { .. }
            | Plan::ForeignScan(_)
            | Plan::EmptyResult { .. }
            | Plan::ConstResult { .. }
            | Plan::DirectModify(_)
            | Plan::FunctionScan { .. }
            | Plan::CteScan { .. } => vec![],
            Plan::BitmapHeapScan { child, .. } => vec![child],
            Plan::Append { children, .. } | Plan::MergeAppend { children, .. } => children.iter().collect(),
            Plan::Sort { child, .. }
            | Plan::IncrementalSort { child, .. }
            | Plan::Limit { child, .. }
            | Plan::Agg { child, .. }
            | Plan::Result { child, .. }
            | Plan::Material { child }
            | Plan::Memoize { child, .. }
            | Plan::SubqueryScan { child, .. }
            | Plan::Unique { child, .. }
            | Plan::WindowAgg { child, .. }
            | Plan::Gating { child, .. }
            | Plan::SetOp { child, .. } => {
                vec![child]
            }
            Plan::HashJoin { outer, inner, .. }
            | Plan::NestLoop { outer, inner, .. }
            | Plan::MergeJoin { outer, inner, .. } => vec![outer, inner],
            Plan::ModifyTable(m) => vec![&m.child],
            // The InitPlans first: the executor starts them first, and ids follow.
            Plan::WithInitPlans { child, init_plans } => {
                init_plans.iter().map(|i| &i.plan).chain(std::iter::once(child.as_ref())).collect()
            }
            // The CTEs first, as the InitPlans: the executor starts them first.
            Plan::WithCtes { child, ctes } => {
                ctes.iter().map(|c| &c.plan).chain(std::iter::once(child.as_ref())).collect()
            }
        }
    }

    /// The nodes below, mutably, in `children`'s order.
    pub fn children_mut(&mut self) -> Vec<&mut Plan> {
        match self {
            Plan::SeqScan { .. }
            | Plan::IndexScan { .. }
            | Plan::BitmapIndexScan { .. }
            | Plan::ForeignScan(_)
            | Plan::EmptyResult { .. }
            | Plan::ConstResult { .. }
            | Plan::DirectModify(_)
            | Plan::FunctionScan { .. }
            | Plan::CteScan { .. } => vec![],
            Plan::BitmapHeapScan { child, .. } => vec![child.as_mut()],
            Plan::Append { children, .. } | Plan::MergeAppend { children, .. } => children.iter_mut().collect(),
            Plan::Sort { child, .. }
            | Plan::IncrementalSort { child, .. }
            | Plan::Limit { child, .. }
            | Plan::Agg { child, .. }
            | Plan::Result { child, .. }
            | Plan::Material { child }
            | Plan::Memoize { child, .. }
            | Plan::SubqueryScan { child, .. }
            | Plan::Unique { child, .. }
            | Plan::WindowAgg { child, .. }
            | Plan::Gating { child, .. }
            | Plan::SetOp { child, .. } => vec![child.as_mut()],
            Plan::HashJoin { outer, inner, .. }
            | Plan::NestLoop { outer, inner, .. }
            | Plan::MergeJoin { outer, inner, .. } => vec![outer.as_mut(), inner.as_mut()],
            Plan::ModifyTable(m) => vec![&mut m.child],
            Plan::WithInitPlans { child, init_plans } => {
                init_plans.iter_mut().map(|i| &mut i.plan).chain(std::iter::once(child.as_mut())).collect()
            }
            Plan::WithCtes { child, ctes } => {
                ctes.iter_mut().map(|c| &mut c.plan).chain(std::iter::once(child.as_mut())).collect()
            }
        }
    }
}

#[cfg(test)]
mod const_tests {
    use super::*;

    /// ruleutils.c's get_const_expr: what reads back as itself is bare, the rest typed.
    #[test]
    fn constants_print_as_explain_prints_them() {
        let sql = |d: Datum| Expr::Const(d).to_sql(&[]);
        assert_eq!(sql(Datum::Int(5)), "5");
        assert_eq!(sql(Datum::Int(-2)), "'-2'::integer");
        assert_eq!(sql(Datum::Int(5_000_000_000)), "'5000000000'::bigint");
        assert_eq!(sql(Datum::text("it's")), "'it''s'::text");
        assert_eq!(sql(Datum::Null), "NULL");
        let a = Expr::bin(BinOp::Gt, Expr::col(0), Expr::int(1));
        let and = Expr::bin(BinOp::And, Expr::bin(BinOp::And, a.clone(), a.clone()), a.clone());
        assert_eq!(and.to_sql(&["x".into()]), "((x > 1) AND (x > 1) AND (x > 1))");
        let or_in_and = Expr::bin(BinOp::And, Expr::bin(BinOp::Or, a.clone(), a.clone()), a);
        assert_eq!(or_in_and.to_sql(&["x".into()]), "(((x > 1) OR (x > 1)) AND (x > 1))");
    }

    /// A ScalarArrayOpExpr's array as get_const_expr and array_out write it (checked
    /// against PostgreSQL 15: `'{"a b","x\\"y","","null",it''s,"c\\\\d"}'::text[]`),
    /// over a bigint column a bigint array, and pruning's expansion of it.
    #[test]
    fn scalar_array_ops_print_and_expand_as_postgresql() {
        let texts = ["a b", "x\"y", "", "null", "it's", "c\\d"];
        let mut args = vec![Expr::Col(0)];
        args.extend(texts.iter().map(|t| Expr::Const(Datum::text(t))));
        let saop = Expr::func(Func::ScalarArrayOp { op: BinOp::Eq, use_or: true, elem: SqlType::Text }, args);
        assert_eq!(saop.to_sql(&["s".into()]), r#"(s = ANY ('{"a b","x\"y","","null",it''s,"c\\d"}'::text[]))"#);
        let ints = |elem| {
            Expr::func(
                Func::ScalarArrayOp { op: BinOp::NotEq, use_or: false, elem },
                vec![Expr::Col(0), Expr::int(1), Expr::Const(Datum::Null)],
            )
        };
        let mut wide = ints(SqlType::Int4);
        wide.widen_saop_to_columns(&[SqlType::Int8]);
        assert_eq!(wide.to_sql(&["b".into()]), "(b <> ALL ('{1,NULL}'::bigint[]))");
        let mut narrow = ints(SqlType::Int4);
        narrow.widen_saop_to_columns(&[SqlType::Int4]);
        assert_eq!(narrow.to_sql(&["a".into()]), "(a <> ALL ('{1,NULL}'::integer[]))");
        // Pruning: <> ALL is the AND of its comparisons; an ANY drops its NULLs.
        assert_eq!(narrow.saop_as_comparisons().to_sql(&["a".into()]), "((a <> 1) AND (a <> NULL))");
        let any = Expr::func(
            Func::ScalarArrayOp { op: BinOp::Eq, use_or: true, elem: SqlType::Int4 },
            vec![Expr::Col(0), Expr::int(1), Expr::Const(Datum::Null), Expr::int(2)],
        );
        assert_eq!(any.saop_as_comparisons().to_sql(&["a".into()]), "((a = 1) OR (a = 2))");
    }
}
