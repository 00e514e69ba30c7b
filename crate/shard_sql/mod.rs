//! The SQL front end of a simulated shard: query text in, plans out.
//!
//! A shard receives SQL over the simple query protocol, so one query string may hold
//! several statements separated by `;`. Text is parsed with `sqlparser`
//! (`PostgreSqlDialect`) and each statement becomes a [`ShardStatement`]; in the
//! page's first module (no feature `sql`) the text is read by [`fdw_grammar`] instead,
//! a small parser of what postgres_fdw's deparser writes that builds the same
//! sqlparser trees (issue 20: package size; sqlparser is its oracle in the tests).
//! Only what a coordinator (postgres_fdw-style) sends is accepted:
//!
//! * transaction control: `BEGIN`, `START TRANSACTION [ISOLATION LEVEL ...]`, `COMMIT`,
//!   `END`, `ROLLBACK`, `ABORT`; `SET name = value` / `SET name TO value` (a no-op
//!   here: the simulated server's `sim::guc` checks and stores the setting);
//! * cursors: `DECLARE c [NO SCROLL] CURSOR [WITH HOLD] FOR <select>`,
//!   `FETCH [FORWARD] n | ALL | NEXT FROM c`, `CLOSE c`;
//! * postgres_fdw's foreign insert: `INSERT INTO t (cols) VALUES ($1, …), …` and
//!   `DEALLOCATE name`, and its direct modify: `UPDATE t SET … [WHERE …]`, `DELETE
//!   FROM t [WHERE …]` (`modify`);
//! * a single-table `SELECT targets FROM t [alias] [WHERE ...] [GROUP BY ...]
//!   [HAVING ...] [ORDER BY ...] [LIMIT n] [OFFSET m]`, whose targets may be `*`,
//!   expressions and the aggregates `count(*)`, `count`, `sum`, `min`, `max`, `avg`;
//!   its FROM may instead be postgres_fdw's pushed-down join in parentheses
//!   (`(public.t1 r1 INNER JOIN public.t2 r2 ON (…))`, `join`).
//!
//! Expressions: column references (`a`, `t.a`, `public.t.a`), integer, decimal and
//! string literals, `NULL`, `TRUE`/`FALSE` (Int 1/0), `= <> != < <= > >= AND OR + - *
//! / %`, `NOT`, unary minus, `IS [NOT] NULL`, `[NOT] BETWEEN` (desugared), `[NOT] IN
//! (list)` and `x op ANY/ALL (array)` over an array literal (`'{1,2}'::integer[]`) or
//! `ARRAY[…]` (a ScalarArrayOpExpr, as postgres_fdw sends an IN list), and casts to integer, numeric or text types that do not change
//! a column's type (constants are converted at plan time).
//!
//! `SELECT DISTINCT` and aggregates over DISTINCT arguments (postgres_fdw sends
//! `count(DISTINCT x)`) are planned too.
//!
//! Everything else (joins, subqueries, other functions, window functions, DISTINCT ON,
//! set operations, CTEs, RETURNING, ...) is rejected with a [`SqlError`] that names the
//! construct and, when it can be located, carries its position in the query text
//! (a 1-based character offset, like PostgreSQL's error position). Unquoted
//! identifiers are folded to lower case, as in PostgreSQL.
//!
//! Text nested deeper than [`nesting::MAX_WEIGHT`] (chains of operators, parentheses,
//! set operations) or than sqlparser's recursion limit [`nesting::MAX_RECURSION`] is
//! refused before a tree is built, as PostgreSQL words it: "stack depth limit
//! exceeded" (see [`nesting`]).
//!
//! Planning of SELECT lives in `select`, expressions in `expr`, and positions in
//! `source`.
//!
//! Invariants:
//! - Never accepted and ignored: whatever is not planned is refused by name. What is
//!   accepted without effect is said here: isolation levels and access modes (a shard
//!   has no concurrency), `SCROLL`/`NO SCROLL` and `WITH HOLD` (a forward fetch inside
//!   one transaction), and SET (above).
//! - The whole text is parsed before anything is planned, and statements must be
//!   separated by `;`: a syntax error anywhere wins over a semantic error earlier, as
//!   in PostgreSQL, where the whole Query string goes through `raw_parser` first (the
//!   simulated server relies on this to reject a Query before it runs any of it).
//! - The nesting check runs on the tokens before sqlparser sees them, so no text can
//!   overflow the stack (`nesting`).
//! - An error's position is a 1-based character offset into the text given (not a
//!   byte offset, not line/column), as PostgreSQL's `P` field.
//!
//! Where it departs from PostgreSQL: this stands for a shard's `raw_parser` (gram.y),
//! parse analysis (`parse_analyze`) and planner at once, for the one statement shape a
//! postgres_fdw coordinator sends; it has no catalog lookups beyond table and column
//! names, no functions but the aggregates, and three types (`types::ColType`).

use std::fmt;

use sqlparser::ast::{self, CloseCursor, DeclareType, FetchDirection, Ident, Statement};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::plan::Plan;
use crate::types::{Catalog, Column};

pub(crate) mod expr;
// The page's first module's parser, and natively the tests that hold it to sqlparser.
#[cfg(any(test, not(feature = "sql")))]
pub mod fdw_grammar;
pub mod inline;
mod join;
mod modify;
pub use modify::ctid_column;
pub mod nesting;
mod node_span;
pub mod operator_tokens;
mod select;
mod source;

use source::Source;

/// An error in a shard query: a message worded like PostgreSQL's and, when known,
/// the 1-based character offset into the SQL text it refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    pub message: String,
    pub position: Option<usize>,
}

impl SqlError {
    pub fn new(message: impl Into<String>, position: Option<usize>) -> SqlError {
        SqlError { message: message.into(), position }
    }

    /// A construct this front end deliberately does not handle.
    pub fn unsupported(what: impl fmt::Display, position: Option<usize>) -> SqlError {
        SqlError::new(format!("unsupported in a shard query: {what}"), position)
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(p) => write!(f, "{} (position {p})", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for SqlError {}

/// One statement of a shard query, ready for the shard to run.
#[derive(Clone, Debug, PartialEq)]
pub enum ShardStatement {
    /// `BEGIN` / `START TRANSACTION [ISOLATION LEVEL ...]`.
    Begin,
    /// `COMMIT` / `END`.
    Commit,
    /// `ROLLBACK` / `ABORT`.
    Rollback,
    /// `SET name = value` / `SET name TO value`: accepted and ignored.
    Set,
    /// `DECLARE name CURSOR FOR <select>`; `columns` are the select list's.
    /// `for_update`: the table whose rows' `ctid` the query reads (a `SELECT … FOR
    /// UPDATE`'s, or a `SELECT …, ctid` of a joined partition; postgres_fdw's foreign
    /// modify), planned and run over it with its `ctid` as a last column.
    DeclareCursor { name: String, plan: Plan, columns: Vec<Column>, for_update: Option<String> },
    /// `FETCH n FROM cursor`; `count` None means `ALL`.
    Fetch { cursor: String, count: Option<u64> },
    /// `CLOSE cursor`.
    Close { cursor: String },
    /// A plain SELECT; `columns` are the select list's.
    Select { plan: Plan, columns: Vec<Column> },
    /// `INSERT INTO t (cols) VALUES (…), …` (postgres_fdw's foreign insert,
    /// `modify`): `targets` are the table's columns in the order named, each row's
    /// values a parameter or a constant.
    /// `returning`: the columns of `RETURNING col, …` (the inserted rows').
    Insert {
        table: String,
        targets: Vec<usize>,
        rows: Vec<Vec<crate::plan::Expr>>,
        returning: Vec<Column>,
        returning_cols: Vec<usize>,
    },
    /// `DEALLOCATE name` (postgres_fdw's `deallocate_query`).
    Deallocate { name: String },
    /// `DEALLOCATE ALL`: every prepared statement of the session.
    DeallocateAll,
    /// `UPDATE t SET … [WHERE …]` (postgres_fdw's direct modify): each SET column's
    /// new value over the old row, and the WHERE over it.
    /// `returning`: the columns of `RETURNING col, …` (the rows as updated).
    Update {
        table: String,
        sets: Vec<(usize, crate::plan::Expr)>,
        filter: Option<crate::plan::Expr>,
        returning: Vec<Column>,
        returning_cols: Vec<usize>,
    },
    /// `DELETE FROM t [WHERE …] [RETURNING col, …]` (postgres_fdw's direct modify).
    Delete { table: String, filter: Option<crate::plan::Expr>, returning: Vec<Column>, returning_cols: Vec<usize> },
}

/// Parses and plans every statement of `sql` (separated by `;`) against `catalog`.
/// An empty (or all-`;`) string yields no statements.
pub fn parse_shard_sql(sql: &str, catalog: &Catalog) -> Result<Vec<ShardStatement>, SqlError> {
    #[cfg(test)]
    fdw_grammar::tests::record(sql);
    if let Some(fetch) = postgres_fdw_fetch(sql) {
        return Ok(vec![fetch]);
    }
    let dialect = PostgreSqlDialect {};
    let src = Source::tokenize(sql, &dialect)?;
    // As deep as a parse nesting past sqlparser's recursion limit: PostgreSQL's words.
    if let Some(at) = nesting::too_deep(&src.tokens, nesting::MAX_WEIGHT) {
        return Err(SqlError::new("stack depth limit exceeded", src.position(at)));
    }
    let statements = parse_statements(&src)?;
    statements
        .into_iter()
        .map(|parsed| match parsed {
            Parsed::Abort => Ok(ShardStatement::Rollback),
            Parsed::Statement(statement, first) => convert_statement(&statement, &first, &src, catalog),
        })
        .collect()
}

/// The statements of `src`, read by sqlparser (natively and in the SQL editor's
/// module) or by the page's shard parser (`fdw_grammar`, the page's first module:
/// issue 20), each with its first token.
fn parse_statements(src: &Source) -> Result<Vec<Parsed>, SqlError> {
    #[cfg(not(feature = "sql"))]
    return fdw_grammar::parse_statements(src);
    #[cfg(feature = "sql")]
    return parse_statements_with_sqlparser(src);
}

/// What `parse_shard_sql` reads with sqlparser: every statement, each through its
/// own entry point (`parse_shard_statement`).
#[cfg_attr(not(feature = "sql"), allow(dead_code))]
fn parse_statements_with_sqlparser(src: &Source) -> Result<Vec<Parsed>, SqlError> {
    // The parser gets a copy of the tokens so that `src` keeps them for positions.
    let mut parser = Parser::new(&PostgreSqlDialect {})
        .with_recursion_limit(nesting::MAX_RECURSION)
        .with_tokens_with_locations(where_before_bare_returning(src.tokens.clone()));
    let mut statements = Vec::new();
    loop {
        while parser.consume_token(&Token::SemiColon) {}
        if parser.peek_token().token == Token::EOF {
            return Ok(statements);
        }
        let parsed = parse_one(&mut parser, src)?;
        // Unlike `Parser::parse_statements` we insist on a `;` between statements, so
        // trailing junk is a syntax error rather than silently ignored. It is checked
        // before planning: as in PostgreSQL, syntax errors win over semantic ones.
        let next = parser.peek_token();
        if !matches!(next.token, Token::SemiColon | Token::EOF) {
            return Err(src.syntax_error_at(&next));
        }
        statements.push(parsed);
    }
}

/// `FETCH n FROM cK` exactly as postgres_fdw writes it (`fetch_more_data`: "FETCH %d
/// FROM c%u"), the statement a run sends most: read without the tokenizer and the
/// parser, which were a fifth of the page's recording of a 16-shard run. The statement
/// the parser gives for the same text; any other text (spacing, case, a `;`, another
/// cursor name) takes the parser.
fn postgres_fdw_fetch(sql: &str) -> Option<ShardStatement> {
    let (count, cursor) = sql.strip_prefix("FETCH ")?.split_once(" FROM ")?;
    let digits = |s: &str| !s.is_empty() && s.len() <= 18 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(count) || !cursor.strip_prefix('c').is_some_and(digits) {
        return None;
    }
    Some(ShardStatement::Fetch { cursor: cursor.to_string(), count: Some(count.parse().ok()?) })
}

/// `DELETE FROM t RETURNING …` (postgres_fdw's direct modify of every row): RETURNING
/// is reserved in PostgreSQL's grammar, but sqlparser reads it as the table's alias;
/// the parser is given `WHERE TRUE` before it (the same rows; the statement's text,
/// as logged, is unchanged).
fn where_before_bare_returning(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let word = |t: &TokenWithSpan, k: Keyword| matches!(&t.token, Token::Word(w) if w.keyword == k);
    let solid: Vec<usize> = (0..tokens.len()).filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_))).collect();
    let mut at = Vec::new();
    for (j, &i) in solid.iter().enumerate() {
        if !word(&tokens[i], Keyword::DELETE) || !solid.get(j + 1).is_some_and(|&f| word(&tokens[f], Keyword::FROM)) {
            continue;
        }
        // The table's name: `t` or `schema.t`, then RETURNING.
        let name_end = match (solid.get(j + 3).map(|&k| &tokens[k].token), solid.get(j + 5)) {
            (Some(Token::Period), Some(_)) => j + 4,
            _ => j + 2,
        };
        if let Some(&r) = solid.get(name_end + 1).filter(|&&r| word(&tokens[r], Keyword::RETURNING)) {
            at.push(r);
        }
    }
    let mut out = tokens;
    for &r in at.iter().rev() {
        let span = out[r].span;
        let make = |t: Token| TokenWithSpan { token: t, span };
        let space = || make(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space));
        let inserted = [make(Token::make_keyword("WHERE")), space(), make(Token::make_keyword("TRUE")), space()];
        out.splice(r..r, inserted);
    }
    out
}

/// Whether `e` calls an aggregate (not as a window function): what makes a query or
/// a condition aggregated.
pub fn contains_aggregate_call(e: &ast::Expr) -> bool {
    expr::contains_aggregate(e)
}

/// Plans a single-table SELECT already parsed from `sql` against `catalog` (the
/// coordinator's front end plans its logical query with the shard planner, over a
/// catalog holding the one relation it reads; positions refer to `sql`).
pub fn plan_select(query: &ast::Query, sql: &str, catalog: &Catalog) -> Result<(Plan, Vec<Column>), SqlError> {
    let src = Source::tokenize(sql, &PostgreSqlDialect {})?;
    select::plan_query(query, &src, catalog)
}

/// Plans a SELECT over a join of `members` — (the name each is referred to by, its
/// table, its columns) — as one relation whose columns are the members' in order; the
/// query's FROM is not looked at (the coordinator's planner resolved it, and moved
/// the join conditions into WHERE).
pub fn plan_select_join(
    query: &ast::Query,
    sql: &str,
    members: &[(String, String, Vec<Column>)],
) -> Result<(Plan, Vec<Column>), SqlError> {
    let src = Source::tokenize(sql, &PostgreSqlDialect {})?;
    select::check_query_clauses(query, &src)?;
    let body = select::query_body(query, &src)?;
    select::check_select_clauses(body, &src)?;
    let mut columns = Vec::new();
    let mut list = Vec::new();
    for (name, table, cols) in members {
        list.push(expr::Member { name: name.clone(), table: table.clone(), start: columns.len(), len: cols.len() });
        columns.extend(cols.iter().cloned());
    }
    let rel = expr::Relation { table: "join".into(), alias: None, columns, members: list };
    select::plan_query_over(query, body, &src, rel, None)
}

/// A statement parsed but not yet planned.
enum Parsed {
    /// PostgreSQL's `ABORT [TRANSACTION | WORK]` (ROLLBACK), which sqlparser lacks.
    Abort,
    /// A sqlparser statement and its first token (to name and locate it in errors).
    Statement(Box<Statement>, TokenWithSpan),
}

/// Parses the statement at the parser's position.
fn parse_one(parser: &mut Parser, src: &Source) -> Result<Parsed, SqlError> {
    let first = parser.peek_token();
    if parser.parse_keyword(Keyword::ABORT) {
        let _ = parser.parse_one_of_keywords(&[Keyword::TRANSACTION, Keyword::WORK]);
        return Ok(Parsed::Abort);
    }
    let statement = parse_shard_statement(parser, &first, src)?;
    Ok(Parsed::Statement(Box::new(statement), first))
}

/// First words of PostgreSQL statements a shard does not run: refused by name, where
/// any other word is a syntax error at that word, as in PostgreSQL.
const POSTGRES_STATEMENTS: &[&str] = &[
    "ALTER",
    "ANALYZE",
    "CALL",
    "CHECKPOINT",
    "CLUSTER",
    "COMMENT",
    "COPY",
    "CREATE",
    "DISCARD",
    "DO",
    "DROP",
    "EXECUTE",
    "EXPLAIN",
    "GRANT",
    "IMPORT",
    "LISTEN",
    "LOAD",
    "LOCK",
    "MERGE",
    "MOVE",
    "NOTIFY",
    "PREPARE",
    "REFRESH",
    "REINDEX",
    "RELEASE",
    "RESET",
    "REVOKE",
    "SAVEPOINT",
    "SECURITY",
    "SHOW",
    "TABLE",
    "TRUNCATE",
    "UNLISTEN",
    "VACUUM",
];

/// The statements a shard runs, each through its own sqlparser entry point (as
/// `Parser::parse_statement` dispatches on the first word). `parse_statement` itself
/// reaches sqlparser's whole grammar — DDL of every dialect, ~450 KB of the page's
/// module — for statements a shard refuses anyway; any other first word is refused
/// here by name, before the rest of its text is read (`convert_statement` refused the
/// same statements after parsing them; only a malformed one now gets that error
/// rather than a syntax error).
fn parse_shard_statement(parser: &mut Parser, first: &TokenWithSpan, src: &Source) -> Result<Statement, SqlError> {
    let keyword = match &first.token {
        Token::Word(w) => w.keyword,
        Token::LParen => Keyword::SELECT,
        _ => return Err(src.syntax_error_at(first)),
    };
    let parsed = match keyword {
        Keyword::SELECT | Keyword::WITH | Keyword::VALUES => parser.parse_query().map(Statement::Query),
        Keyword::START | Keyword::BEGIN | Keyword::END | Keyword::COMMIT | Keyword::ROLLBACK => {
            parser.next_token();
            match keyword {
                Keyword::START => parser.parse_start_transaction(),
                Keyword::BEGIN => parser.parse_begin(),
                Keyword::END => parser.parse_end(),
                Keyword::COMMIT => parser.parse_commit(),
                _ => parser.parse_rollback(),
            }
        }
        Keyword::SET | Keyword::DECLARE | Keyword::FETCH | Keyword::CLOSE => {
            parser.next_token();
            match keyword {
                Keyword::SET => parser.parse_set(),
                Keyword::DECLARE => parser.parse_declare(),
                Keyword::FETCH => parser.parse_fetch_statement(),
                _ => parser.parse_close(),
            }
        }
        // postgres_fdw's foreign modify and direct modify (`modify`).
        Keyword::INSERT | Keyword::UPDATE | Keyword::DELETE | Keyword::DEALLOCATE => {
            parser.next_token();
            match keyword {
                Keyword::INSERT => parser.parse_insert(),
                Keyword::UPDATE => parser.parse_update(),
                Keyword::DELETE => parser.parse_delete(),
                _ => parser.parse_deallocate(),
            }
        }
        _ if POSTGRES_STATEMENTS.contains(&statement_keyword(first).as_str()) => {
            return Err(SqlError::unsupported(statement_keyword(first), src.position(first.span.start)))
        }
        // No statement starts so (`SELEC 1`): PostgreSQL's grammar fails on that word.
        _ => return Err(src.syntax_error_at(first)),
    };
    parsed.map_err(|e| src.parser_error(e))
}

fn convert_statement(
    statement: &Statement,
    first: &TokenWithSpan,
    src: &Source,
    catalog: &Catalog,
) -> Result<ShardStatement, SqlError> {
    let here = src.position(first.span.start);
    match statement {
        // Isolation levels and access modes are accepted: a shard has no concurrency.
        Statement::StartTransaction { .. } => Ok(ShardStatement::Begin),
        Statement::Commit { chain: false } => Ok(ShardStatement::Commit),
        Statement::Commit { chain: true } => Err(SqlError::unsupported("COMMIT AND CHAIN", here)),
        Statement::Rollback { chain: false, savepoint: None } => Ok(ShardStatement::Rollback),
        Statement::Rollback { savepoint: Some(_), .. } => Err(SqlError::unsupported("ROLLBACK TO SAVEPOINT", here)),
        Statement::Rollback { chain: true, .. } => Err(SqlError::unsupported("ROLLBACK AND CHAIN", here)),
        // Session settings (search_path, timezone, ...) do not affect our executor.
        Statement::SetVariable { .. } | Statement::SetTimeZone { .. } | Statement::SetTransaction { .. } => {
            Ok(ShardStatement::Set)
        }
        Statement::Declare { stmts } => declare_cursor(stmts, here, src, catalog),
        Statement::Fetch { name, direction, into } => {
            if into.is_some() {
                return Err(SqlError::unsupported("FETCH ... INTO", here));
            }
            let count = fetch_count(direction, here)?;
            Ok(ShardStatement::Fetch { cursor: ident_name(name), count })
        }
        Statement::Close { cursor: CloseCursor::Specific { name } } => {
            Ok(ShardStatement::Close { cursor: ident_name(name) })
        }
        Statement::Close { cursor: CloseCursor::All } => Err(SqlError::unsupported("CLOSE ALL", here)),
        Statement::Query(query) => {
            let (plan, columns) = select::plan_query(query, src, catalog)?;
            Ok(ShardStatement::Select { plan, columns })
        }
        Statement::Insert(ins) => modify::plan_insert(ins, here, src, catalog),
        Statement::Deallocate { .. } => modify::plan_deallocate(statement, here),
        Statement::Update { .. } => modify::plan_update(statement, here, src, catalog),
        Statement::Delete(d) => modify::plan_delete(d, here, src, catalog),
        _ => Err(SqlError::unsupported(statement_keyword(first), here)),
    }
}

fn declare_cursor(
    stmts: &[ast::Declare],
    here: Option<usize>,
    src: &Source,
    catalog: &Catalog,
) -> Result<ShardStatement, SqlError> {
    let [declare] = stmts else {
        return Err(SqlError::unsupported("DECLARE of several names", here));
    };
    let (Some(DeclareType::Cursor), [name], Some(query)) =
        (&declare.declare_type, declare.names.as_slice(), &declare.for_query)
    else {
        return Err(SqlError::unsupported("DECLARE other than a cursor", here));
    };
    // Rows travel in text format; SCROLL/NO SCROLL and WITH/WITHOUT HOLD make no
    // difference to a forward-only fetch within one transaction.
    if declare.binary == Some(true) {
        return Err(SqlError::unsupported("BINARY cursors", here));
    }
    if !query.locks.is_empty() {
        let table = select::for_update(query, src, catalog)?;
        let with_ctid = with_ctid_column(catalog, &table);
        let (plan, columns) = select::plan_for_update(query, src, &with_ctid)?;
        return Ok(ShardStatement::DeclareCursor { name: ident_name(name), plan, columns, for_update: Some(table) });
    }
    if let Some(table) = select::reads_ctid(query, src, catalog) {
        let with_ctid = with_ctid_column(catalog, &table);
        let (plan, columns) = select::plan_query(query, src, &with_ctid)?;
        return Ok(ShardStatement::DeclareCursor { name: ident_name(name), plan, columns, for_update: Some(table) });
    }
    let (plan, columns) = select::plan_query(query, src, catalog)?;
    Ok(ShardStatement::DeclareCursor { name: ident_name(name), plan, columns, for_update: None })
}

/// `catalog` with `table` given its rows' `ctid` as a last column (the system column
/// postgres_fdw's foreign modify reads and names rows by).
pub fn with_ctid_column(catalog: &Catalog, table: &str) -> Catalog {
    let mut out = catalog.clone();
    if let Some(t) = out.tables.iter_mut().find(|t| t.name == table) {
        *t = std::rc::Rc::new(t.with_ctid_column());
    }
    out
}

/// Rows a FETCH asks for; None means all. Only forward fetches are supported.
fn fetch_count(direction: &FetchDirection, here: Option<usize>) -> Result<Option<u64>, SqlError> {
    let number = |v: &ast::Value| match v {
        ast::Value::Number(s, _) => s.parse::<u64>().map_err(|_| SqlError::unsupported(format!("FETCH {s}"), here)),
        other => Err(SqlError::unsupported(format!("FETCH {other}"), here)),
    };
    match direction {
        FetchDirection::Next | FetchDirection::Forward { limit: None } => Ok(Some(1)),
        FetchDirection::Count { limit } | FetchDirection::Forward { limit: Some(limit) } => number(limit).map(Some),
        FetchDirection::All | FetchDirection::ForwardAll => Ok(None),
        other => Err(SqlError::unsupported(format!("FETCH {other}"), here)),
    }
}

/// The statement's first keyword, to name an unsupported statement (`INSERT`, ...).
fn statement_keyword(first: &TokenWithSpan) -> String {
    match &first.token {
        Token::Word(w) => w.value.to_uppercase(),
        other => other.to_string(),
    }
}

/// An identifier as PostgreSQL sees it: unquoted names are folded to lower case.
pub(crate) fn ident_name(ident: &Ident) -> String {
    match ident.quote_style {
        Some(_) => ident.value.clone(),
        None => ident.value.to_lowercase(),
    }
}

/// A plain table reference, `name [alias]`, as sqlparser builds it: for the trees this
/// crate writes itself (the page's shard parser, the coordinator's subquery pull-up).
pub(crate) fn plain_table(name: ast::ObjectName, alias: Option<ast::TableAlias>) -> ast::TableFactor {
    ast::TableFactor::Table {
        name,
        alias,
        args: None,
        with_hints: vec![],
        version: None,
        with_ordinality: false,
        partitions: vec![],
        json_path: None,
    }
}

#[cfg(test)]
mod fetch_tests {
    use super::*;

    /// postgres_fdw's FETCH read without the parser is the parser's statement; any
    /// other text is left to the parser (and gives what it gives).
    #[test]
    fn postgres_fdw_fetch_is_the_parsers_fetch() {
        let catalog = Catalog::default();
        let parsed = |sql: &str| {
            let dialect = PostgreSqlDialect {};
            let src = Source::tokenize(sql, &dialect).unwrap();
            let mut parser = Parser::new(&dialect).with_tokens_with_locations(src.tokens.clone());
            match parse_one(&mut parser, &src).unwrap() {
                Parsed::Statement(st, first) => convert_statement(&st, &first, &src, &catalog).unwrap(),
                Parsed::Abort => ShardStatement::Rollback,
            }
        };
        for sql in ["FETCH 100 FROM c1", "FETCH 1 FROM c12", "FETCH 50000 FROM c3", "FETCH 007 FROM c0"] {
            let fast = postgres_fdw_fetch(sql).expect(sql);
            assert_eq!(fast, parsed(sql), "{sql}");
            assert_eq!(parse_shard_sql(sql, &catalog).unwrap(), vec![fast], "{sql}");
        }
        for sql in [
            "fetch 100 from c1",
            "FETCH  100 FROM c1",
            "FETCH 100 FROM c1;",
            "FETCH 100 FROM C1",
            "FETCH 100 FROM \"c1\"",
            "FETCH ALL FROM c1",
            "FETCH 100 FROM cur",
            "FETCH 100 FROM c1 FROM c2",
            "FETCH -1 FROM c1",
            "FETCH 100 FROM c",
            "FETCH 99999999999999999999 FROM c1",
        ] {
            assert_eq!(postgres_fdw_fetch(sql), None, "{sql}");
        }
    }
}
