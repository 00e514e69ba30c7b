//! `CREATE FUNCTION`, `CREATE OPERATOR` and `ALTER EXTENSION … ADD`: PostgreSQL 15's
//! `CreateFunction` (commands/functioncmds.c), `DefineOperator` (operatorcmds.c) and
//! `ExecAlterExtensionContentsStmt` (extension.c), for what the sandbox can run.
//!
//! | statement | accepted | refused by name |
//! |---|---|---|
//! | `CREATE FUNCTION … LANGUAGE sql AS 'SELECT <expr>'` (or `RETURN <expr>`) | parameters and result of the sandbox's types (or a boolean result), IMMUTABLE / STABLE / VOLATILE, STRICT | a body with FROM, WHERE, … (PostgreSQL would not inline it, and the sandbox does not run SQL functions); OUT parameters, defaults |
//! | `CREATE FUNCTION … LANGUAGE internal AS 'int4abs'` | a built-in procedure the sandbox has (`plan::userfunc::builtin_proc`) | other languages (plpgsql, C, …) |
//! | `CREATE OPERATOR op (LEFTARG, RIGHTARG, PROCEDURE or FUNCTION, COMMUTATOR)` | over a built-in procedure or a `LANGUAGE internal` function | a prefix operator, NEGATOR, RESTRICT, JOIN, HASHES, MERGES (they change plans the sandbox does not make) |
//! | `ALTER EXTENSION postgres_fdw ADD FUNCTION f(types) / OPERATOR op (types)` | marks the object a member: postgres_fdw ships it to servers whose `extensions` lists postgres_fdw | other extensions (only postgres_fdw exists) |
//!
//! A SQL function's body is checked when it is created (PostgreSQL's
//! `check_function_bodies`): it is planned over the parameters. Its parameters are
//! kept as `"$1"`, `"$2"`, … whether the body wrote `$1` or the parameter's name.
//!
//! Invariants: a node's functions and operators are its own (`Node::routines`); a name
//! and argument types identify one (CREATE OR REPLACE replaces it, CREATE again is
//! PostgreSQL's "already exists" error).

use sqlparser::ast::{
    self, ArgMode, CreateFunction, CreateFunctionBody, FunctionBehavior, FunctionCalledOnNull, ObjectName, Value,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Token, Tokenizer};

use super::FrontError;
use crate::plan::userfunc::{builtin_proc, Proc, Volatility};
use crate::plan::SqlType;
use crate::shard_sql::inline::{plan_body, FunctionBody, FunctionDef, OperatorDef, Routines};
use crate::shard_sql::operator_tokens::merge_operators;

/// One of the statements of this module, parsed and checked.
#[derive(Clone, Debug, PartialEq)]
pub enum RoutineStmt {
    CreateFunction {
        def: FunctionDef,
        or_replace: bool,
    },
    /// The procedure is named, and found when the statement runs.
    CreateOperator {
        name: String,
        left: SqlType,
        right: SqlType,
        proc: String,
    },
    /// `ALTER EXTENSION postgres_fdw ADD …`.
    AddToExtension(Member),
}

/// An object named in `ALTER EXTENSION … ADD`.
#[derive(Clone, Debug, PartialEq)]
pub enum Member {
    Function { name: String, params: Vec<SqlType> },
    Operator { name: String, left: Option<SqlType>, right: SqlType },
}

/// The sandbox's name of a routine's object (`public.name` or `name`).
fn object_name(name: &ObjectName, at: Location) -> Result<String, FrontError> {
    let parts: Vec<String> = name.0.iter().map(crate::shard_sql::ident_name).collect();
    match parts.as_slice() {
        [n] => Ok(n.clone()),
        [schema, n] if schema == "public" => Ok(n.clone()),
        _ => Err(FrontError::unsupported(format!("the schema of {name} (the sandbox has only public)"), at)),
    }
}

/// `CREATE FUNCTION`, as sqlparser parsed it.
pub fn create_function(cf: CreateFunction, at: Location) -> Result<RoutineStmt, FrontError> {
    if cf.temporary || cf.if_not_exists || cf.using.is_some() {
        return Err(FrontError::unsupported("this form of CREATE FUNCTION", at));
    }
    let name = object_name(&cf.name, at)?;
    let mut params = Vec::new();
    let mut names = Vec::new();
    for a in cf.args.unwrap_or_default() {
        if !matches!(a.mode, None | Some(ArgMode::In)) || a.default_expr.is_some() {
            return Err(FrontError::unsupported("OUT, INOUT and default parameters", at));
        }
        params.push(SqlType::from_ast(&a.data_type, at)?);
        names.push(a.name.map(|n| crate::shard_sql::ident_name(&n)));
    }
    let Some(returns) = cf.return_type else {
        return Err(FrontError::at("function result type must be specified", at));
    };
    let returns = SqlType::from_ast(&returns, at)?;
    let volatility = match cf.behavior {
        Some(FunctionBehavior::Immutable) => Volatility::Immutable,
        Some(FunctionBehavior::Stable) => Volatility::Stable,
        Some(FunctionBehavior::Volatile) | None => Volatility::Volatile,
    };
    let strict =
        matches!(cf.called_on_null, Some(FunctionCalledOnNull::Strict | FunctionCalledOnNull::ReturnsNullOnNullInput));
    let language = cf.language.map(|l| l.value.to_lowercase());
    let body = match (language.as_deref(), cf.function_body) {
        (Some("sql") | None, Some(CreateFunctionBody::Return(e))) => sql_body_expr(&e.to_string(), &names, at)?,
        (Some("sql"), Some(CreateFunctionBody::AsBeforeOptions(e) | CreateFunctionBody::AsAfterOptions(e))) => {
            sql_body(&body_string(&e, at)?, &names, at)?
        }
        (Some("internal"), Some(CreateFunctionBody::AsBeforeOptions(e) | CreateFunctionBody::AsAfterOptions(e))) => {
            internal_body(&body_string(&e, at)?, &params, at)?
        }
        (None, _) => return Err(FrontError::at("no language specified", at)),
        (Some("sql" | "internal"), _) => return Err(FrontError::at("no function body specified", at)),
        (Some(other), _) => {
            return Err(FrontError::unsupported(
                format!("LANGUAGE {other} functions (the sandbox runs LANGUAGE sql bodies it can inline, and LANGUAGE internal)"),
                at,
            ))
        }
    };
    if let FunctionBody::Sql(text) = &body {
        // check_function_bodies: the body must plan over the parameters.
        plan_body(text, &params).map_err(|e| FrontError::at(e.message, at))?;
    }
    let def = FunctionDef { name, params, returns, volatility, strict, body, in_extension: false };
    Ok(RoutineStmt::CreateFunction { def, or_replace: cf.or_replace })
}

/// The string of `AS '…'` / `AS $$…$$`.
fn body_string(e: &ast::Expr, at: Location) -> Result<String, FrontError> {
    match e {
        ast::Expr::Value(Value::SingleQuotedString(s)) => Ok(s.clone()),
        ast::Expr::Value(Value::DollarQuotedString(d)) => Ok(d.value.clone()),
        _ => Err(FrontError::at("syntax error: a function body is a string", at)),
    }
}

/// A `LANGUAGE sql` body: `SELECT <one expression>` (a `;` may follow).
fn sql_body(text: &str, names: &[Option<String>], at: Location) -> Result<FunctionBody, FrontError> {
    let dialect = PostgreSqlDialect {};
    let refuse = || {
        FrontError::unsupported(
            "a SQL function whose body is not SELECT of one expression (PostgreSQL would not inline it, and the \
             sandbox does not run SQL functions)",
            at,
        )
    };
    let syntax = |m: String| FrontError::at(format!("syntax error in the function's body: {m}"), at);
    let tokens = Tokenizer::new(&dialect, text).tokenize_with_location().map_err(|e| syntax(e.message))?;
    // A body is weighed as a statement is (`nesting`): no tree deeper than the stack allows.
    if let Some(_) = crate::shard_sql::nesting::too_deep(&tokens, crate::shard_sql::nesting::MAX_WEIGHT) {
        return Err(FrontError::at(crate::shard_sql::nesting::message(crate::shard_sql::nesting::MAX_WEIGHT), at));
    }
    let stmts = Parser::new(&dialect)
        .with_recursion_limit(crate::shard_sql::nesting::MAX_RECURSION)
        .with_tokens_with_locations(merge_operators(text, tokens))
        .parse_statements()
        .map_err(|e| syntax(e.to_string()))?;
    let [ast::Statement::Query(q)] = stmts.as_slice() else {
        return Err(refuse());
    };
    let plain =
        q.with.is_none() && q.order_by.is_none() && q.limit.is_none() && q.offset.is_none() && q.fetch.is_none();
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return Err(refuse());
    };
    let bare = s.from.is_empty()
        && s.selection.is_none()
        && s.having.is_none()
        && s.distinct.is_none()
        && matches!(&s.group_by, ast::GroupByExpr::Expressions(g, m) if g.is_empty() && m.is_empty());
    let expr = match s.projection.as_slice() {
        [ast::SelectItem::UnnamedExpr(e)] | [ast::SelectItem::ExprWithAlias { expr: e, .. }] if plain && bare => e,
        _ => return Err(refuse()),
    };
    sql_body_expr(&expr.to_string(), names, at)
}

/// The body's expression with every parameter written `"$k"` (a `$k` placeholder, or
/// the parameter's name where it is not a function's name or a qualified name's part).
fn sql_body_expr(text: &str, names: &[Option<String>], at: Location) -> Result<FunctionBody, FrontError> {
    let dialect = PostgreSqlDialect {};
    let tokens: Vec<Token> = Tokenizer::new(&dialect, text)
        .tokenize_with_location()
        .map(|t| merge_operators(text, t))
        .map_err(|e| FrontError::at(format!("syntax error in the function's body: {}", e.message), at))?
        .into_iter()
        .map(|t| t.token)
        .collect();
    let mut out = String::new();
    for (i, t) in tokens.iter().enumerate() {
        let next = tokens[i + 1..].iter().find(|t| !matches!(t, Token::Whitespace(_)));
        let prev = tokens[..i].iter().rev().find(|t| !matches!(t, Token::Whitespace(_)));
        let param = match t {
            Token::Placeholder(p) => p.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()),
            Token::Word(w) if !matches!(next, Some(Token::LParen | Token::Period)) && prev != Some(&Token::Period) => {
                let name = if w.quote_style.is_some() { w.value.clone() } else { w.value.to_lowercase() };
                names.iter().position(|n| n.as_deref() == Some(name.as_str())).map(|k| k + 1)
            }
            _ => None,
        };
        match param {
            Some(k) if k >= 1 && k <= names.len() => out.push_str(&format!("\"${k}\"")),
            Some(k) => return Err(FrontError::at(format!("there is no parameter ${k}"), at)),
            None => out.push_str(&t.to_string()),
        }
    }
    Ok(FunctionBody::Sql(out))
}

/// A `LANGUAGE internal` body: the built-in procedure's name, its arguments of the
/// declared parameters' families.
fn internal_body(proc: &str, params: &[SqlType], at: Location) -> Result<FunctionBody, FrontError> {
    let Some(sig) = builtin_proc(proc.trim()) else {
        return Err(FrontError::at(format!("there is no built-in function named \"{}\"", proc.trim()), at));
    };
    let fits = sig.args.len() == params.len() && sig.args.iter().zip(params).all(|(a, p)| *a == p.col_type());
    if !fits {
        return Err(FrontError::unsupported(
            format!("LANGUAGE internal function over {proc} with other argument types than the procedure's"),
            at,
        ));
    }
    Ok(FunctionBody::Internal(sig.proc))
}

/// `CREATE OPERATOR name ( … )`, the parser after `CREATE OPERATOR`.
pub fn create_operator(p: &mut Parser, at: Location) -> Result<RoutineStmt, FrontError> {
    let name = operator_name(p, at)?;
    expect(p, Token::LParen, at)?;
    let (mut left, mut right, mut proc) = (None, None, None);
    loop {
        let t = p.next_token();
        let key = match &t.token {
            Token::Word(w) => w.value.to_lowercase(),
            other => return Err(FrontError::at(format!("syntax error at or near \"{other}\""), t.span.start)),
        };
        expect(p, Token::Eq, t.span.start)?;
        match key.as_str() {
            "leftarg" | "rightarg" => {
                let ty = p.parse_data_type().map_err(|e| FrontError::at(format!("syntax error: {e}"), t.span.start))?;
                let ty = SqlType::from_ast(&ty, t.span.start)?;
                if key == "leftarg" {
                    left = Some(ty)
                } else {
                    right = Some(ty)
                }
            }
            "procedure" | "function" => {
                let n = p
                    .parse_object_name(false)
                    .map_err(|e| FrontError::at(format!("syntax error: {e}"), t.span.start))?;
                proc = Some(object_name(&n, t.span.start)?);
            }
            // Only the planner's commuting of the operands reads it (index and join
            // clauses over operator classes, which user operators here have none of).
            "commutator" => {
                operator_name(p, t.span.start)?;
            }
            other => {
                return Err(FrontError::unsupported(
                    format!("CREATE OPERATOR's {} (it changes plans the sandbox does not make)", other.to_uppercase()),
                    t.span.start,
                ))
            }
        }
        if p.consume_token(&Token::RParen) {
            break;
        }
        expect(p, Token::Comma, at)?;
    }
    let Some(proc) = proc else {
        return Err(FrontError::at("operator function must be specified", at));
    };
    let Some(right) = right else {
        return Err(FrontError::unsupported("a postfix operator (PostgreSQL 15 has none) or one without RIGHTARG", at));
    };
    let Some(left) = left else {
        return Err(FrontError::unsupported("a prefix operator", at));
    };
    Ok(RoutineStmt::CreateOperator { name, left, right, proc })
}

/// The procedure of an operator over `types`: a built-in one, or a user function of
/// `LANGUAGE internal` with those parameters.
fn operator_proc(
    name: &str,
    types: [SqlType; 2],
    routines: &Routines,
    at: Location,
) -> Result<(Proc, Volatility), FrontError> {
    let listed = format!("function {name}({}, {}) does not exist", types[0].name(), types[1].name());
    if let Some(sig) = builtin_proc(name) {
        let fits = sig.args.len() == 2 && sig.args.iter().zip(types).all(|(a, t)| *a == t.col_type());
        return if fits { Ok((sig.proc, Volatility::Immutable)) } else { Err(FrontError::at(listed, at)) };
    }
    let user = routines.functions.iter().find(|f| f.name == name && f.params == types);
    match user.map(|f| (&f.body, f.volatility)) {
        Some((FunctionBody::Internal(proc), volatility)) => Ok((*proc, volatility)),
        Some((FunctionBody::Sql(_), _)) => {
            Err(FrontError::unsupported(format!("an operator over the SQL function {name}"), at))
        }
        None => Err(FrontError::at(listed, at)),
    }
}

/// An operator's name: one operator token (`===`, `<<>>`), optionally `public.`.
fn operator_name(p: &mut Parser, at: Location) -> Result<String, FrontError> {
    let t = p.next_token();
    let t = match &t.token {
        Token::Word(w) if w.value.eq_ignore_ascii_case("public") && p.consume_token(&Token::Period) => p.next_token(),
        _ => t,
    };
    let text = t.token.to_string();
    if text.is_empty() || !text.chars().all(|c| "+-*/<>=~!@#%^&|`?".contains(c)) {
        return Err(FrontError::at(format!("syntax error at or near \"{text}\""), at));
    }
    Ok(text)
}

fn expect(p: &mut Parser, want: Token, at: Location) -> Result<(), FrontError> {
    let t = p.next_token();
    if t.token == want {
        return Ok(());
    }
    let at = if t.span.start.line > 0 { t.span.start } else { at };
    Err(FrontError::at(format!("syntax error at or near \"{}\"", t.token), at))
}

/// `ALTER EXTENSION name ADD FUNCTION f(types) | OPERATOR op (left, right)`, the
/// parser after `ALTER EXTENSION`.
pub fn alter_extension(p: &mut Parser, at: Location) -> Result<RoutineStmt, FrontError> {
    let ext = p.parse_identifier(false).map_err(|e| FrontError::at(format!("syntax error: {e}"), at))?;
    if ext.value.to_lowercase() != "postgres_fdw" {
        return Err(FrontError::at(format!("extension \"{}\" does not exist", ext.value), at));
    }
    let word = |p: &mut Parser| match p.next_token().token {
        Token::Word(w) => w.value.to_lowercase(),
        _ => String::new(),
    };
    if word(p) != "add" {
        return Err(FrontError::unsupported("ALTER EXTENSION other than ADD FUNCTION or ADD OPERATOR", at));
    }
    let types = |p: &mut Parser| -> Result<Vec<SqlType>, FrontError> {
        expect(p, Token::LParen, at)?;
        let mut out = vec![];
        if p.consume_token(&Token::RParen) {
            return Ok(out);
        }
        loop {
            let t = p.parse_data_type().map_err(|e| FrontError::at(format!("syntax error: {e}"), at))?;
            out.push(SqlType::from_ast(&t, at)?);
            if p.consume_token(&Token::RParen) {
                return Ok(out);
            }
            expect(p, Token::Comma, at)?;
        }
    };
    match word(p).as_str() {
        "function" => {
            let n = p.parse_object_name(false).map_err(|e| FrontError::at(format!("syntax error: {e}"), at))?;
            let name = object_name(&n, at)?;
            Ok(RoutineStmt::AddToExtension(Member::Function { name, params: types(p)? }))
        }
        "operator" => {
            let name = operator_name(p, at)?;
            match types(p)?.as_slice() {
                [l, r] => Ok(RoutineStmt::AddToExtension(Member::Operator { name, left: Some(*l), right: *r })),
                _ => Err(FrontError::unsupported("an operator of other than two arguments", at)),
            }
        }
        _ => Err(FrontError::unsupported("ALTER EXTENSION other than ADD FUNCTION or ADD OPERATOR", at)),
    }
}

/// Runs one of these statements on a node's routines.
pub fn execute(routines: &mut Routines, stmt: &RoutineStmt, at: Location) -> Result<(), FrontError> {
    match stmt {
        RoutineStmt::CreateFunction { def, or_replace } => {
            let same = routines.functions.iter().position(|f| f.name == def.name && f.params == def.params);
            match (same, or_replace) {
                (Some(i), true) => routines.functions[i] = def.clone(),
                (Some(_), false) => {
                    return Err(FrontError::at(
                        format!("function \"{}\" already exists with same argument types", def.name),
                        at,
                    ));
                }
                (None, _) => routines.functions.push(def.clone()),
            }
        }
        RoutineStmt::CreateOperator { name, left, right, proc } => {
            if routines.operators.iter().any(|o| o.name == *name && o.left == Some(*left) && o.right == *right) {
                return Err(FrontError::at(format!("operator {name} already exists"), at));
            }
            let (proc, volatility) = operator_proc(proc, [*left, *right], routines, at)?;
            let def = OperatorDef {
                name: name.clone(),
                left: Some(*left),
                right: *right,
                proc,
                volatility,
                in_extension: false,
            };
            routines.operators.push(def);
        }
        RoutineStmt::AddToExtension(Member::Function { name, params }) => {
            let Some(f) = routines.functions.iter_mut().find(|f| f.name == *name && f.params == *params) else {
                let types: Vec<&str> = params.iter().map(|t| t.name()).collect();
                return Err(FrontError::at(format!("function {name}({}) does not exist", types.join(", ")), at));
            };
            f.in_extension = true;
        }
        RoutineStmt::AddToExtension(Member::Operator { name, left, right }) => {
            let Some(o) =
                routines.operators.iter_mut().find(|o| o.name == *name && o.left == *left && o.right == *right)
            else {
                return Err(FrontError::at(format!("operator does not exist: {name}"), at));
            };
            o.in_extension = true;
        }
    }
    Ok(())
}

/// Does a server's `extensions` option (a comma-separated list of names, as
/// `ExtractExtensionList` reads it) list postgres_fdw?
pub fn lists_postgres_fdw(option: Option<&str>) -> bool {
    option.is_some_and(|v| v.split(',').any(|n| n.trim().trim_matches('"').eq_ignore_ascii_case("postgres_fdw")))
}
