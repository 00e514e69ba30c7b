//! Statements of a scenario file, parsed.
//!
//! sqlparser (PostgreSQL dialect) parses what it knows: `CREATE TABLE … (cols)
//! [PARTITION BY …]`, `CREATE INDEX`, `CREATE EXTENSION`, `INSERT`, `SET`, `EXPLAIN`,
//! `SELECT`, and `PREPARE … AS SELECT`, `EXECUTE`, `DEALLOCATE` (run by `prepared.rs`;
//! `EXECUTE … USING` and PREPARE of anything but a SELECT refused). PostgreSQL's foreign-data and partitioning DDL it does not know is
//! parsed here with its tokenizer and parser primitives, so both kinds of statement
//! report positions the same way: `CREATE SERVER`, `CREATE USER MAPPING`, `CREATE
//! [FOREIGN] TABLE … PARTITION OF … FOR VALUES …`, `CREATE FOREIGN TABLE … SERVER …
//! OPTIONS (…)`, `ALTER TABLE … ATTACH PARTITION …`, `ANALYZE` and `VACUUM`.
//!
//! Statements are separated by `;`; anything after a statement other than `;` is a
//! syntax error at that token, as in PostgreSQL.
//!
//! Invariants:
//! - a section's tokens are weighed (nesting) and counted (`MAX_TOKENS`,
//!   `MAX_STATEMENTS`) before sqlparser builds any tree: sqlparser's recursion could
//!   overflow the stack, and its trees take ~450 bytes a token;
//! - sqlparser's statements and ours are parsed from the same tokens of the same text,
//!   padded to the section's first line, so every position is the file's line and column;
//! - a sqlparser statement the sandbox does not run is refused by name, never run as
//!   something else; ANALYZE and VACUUM gather statistics (`Cluster::analyze`,
//!   `plan::stats`), their options beyond that (VERBOSE, FULL, FREEZE, column lists)
//!   refused by name.
//!
//! Where it departs from PostgreSQL: the grammar is sqlparser's, not gram.y, so its
//! syntax errors are worded as sqlparser words them (after "syntax error:"), except
//! trailing text after a statement, which gets PostgreSQL's `syntax error at or near`.

use sqlparser::ast::{self, ColumnDef, DataType, Ident, ObjectName, Query, Statement, Value};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

use super::FrontError;
use crate::plan::SqlType;
use crate::shard_sql::nesting;

/// How a partitioned table splits its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    Hash,
    Range,
    List,
}

/// `PARTITION BY strategy (columns)`.
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionBy {
    pub strategy: Strategy,
    pub columns: Vec<Ident>,
    pub at: Location,
}

/// One bound value of a range partition.
#[derive(Clone, Debug, PartialEq)]
pub enum RangeDatum {
    MinValue,
    MaxValue,
    Value(ast::Expr),
}

/// `FOR VALUES …` or `DEFAULT`.
#[derive(Clone, Debug, PartialEq)]
pub enum BoundSpec {
    Hash { modulus: u64, remainder: u64 },
    List(Vec<ast::Expr>),
    Range { from: Vec<RangeDatum>, to: Vec<RangeDatum> },
    Default,
}

/// Where a foreign table's rows live: `SERVER s [OPTIONS (…)]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ForeignSpec {
    pub server: Ident,
    pub options: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `CREATE [FOREIGN] TABLE name (columns) [PARTITION BY …] [SERVER … OPTIONS …]`.
    CreateTable {
        name: ObjectName,
        columns: Vec<ColumnDef>,
        partition_by: Option<PartitionBy>,
        foreign: Option<ForeignSpec>,
    },
    /// `CREATE [FOREIGN] TABLE name PARTITION OF parent FOR VALUES … | DEFAULT …`.
    CreatePartition {
        name: ObjectName,
        parent: ObjectName,
        bound: BoundSpec,
        partition_by: Option<PartitionBy>,
        foreign: Option<ForeignSpec>,
    },
    /// `ALTER TABLE parent ATTACH PARTITION name FOR VALUES …`.
    AttachPartition {
        parent: ObjectName,
        name: ObjectName,
        bound: BoundSpec,
    },
    /// `CREATE SERVER name FOREIGN DATA WRAPPER fdw OPTIONS (…)`.
    CreateServer {
        name: Ident,
        wrapper: Ident,
        options: Vec<(String, String)>,
    },
    /// `CREATE EXTENSION`, `CREATE USER MAPPING`: nothing to do in the sandbox (no
    /// roles), accepted so the seeds' scripts run as written. The text says which.
    Accepted(&'static str),
    /// `ANALYZE [table, …]`, `VACUUM [ANALYZE] [table, …]`: statistics
    /// (`plan::stats`), run by `Cluster::analyze`. No table: every table of the
    /// database (foreign tables only when named, as PostgreSQL does).
    Analyze {
        vacuum: bool,
        analyze: bool,
        tables: Vec<ObjectName>,
    },
    /// `CREATE [UNIQUE] INDEX [name] ON t (col)` (a unique index: `catalog`'s
    /// `add_unique`).
    CreateIndex {
        table: ObjectName,
        columns: Vec<ast::Expr>,
        unique: bool,
        name: Option<String>,
    },
    /// `INSERT INTO t [(cols)] source [RETURNING …]`: in a setup section run at load
    /// time (no RETURNING there), in the query section planned (`modifytable`).
    Insert {
        table: ObjectName,
        columns: Vec<Ident>,
        source: Box<Query>,
        returning: Vec<ast::SelectItem>,
        /// `ON CONFLICT …` (`modifytable`, `crate::plan::on_conflict`).
        on_conflict: Option<ast::OnConflict>,
    },
    /// `SET name = value`, `SET name TO DEFAULT`, `RESET name`: checked and normalized
    /// by [`super::settings::check_set`] (the value as `SHOW` prints it; the default's
    /// for DEFAULT and RESET).
    Set {
        name: String,
        value: String,
    },
    /// `RESET ALL`.
    ResetAll,
    /// `ALTER SERVER name OPTIONS ([ADD | SET | DROP] option ['value'], …)`, each
    /// option checked as `CREATE SERVER` checks it.
    AlterServer {
        name: Ident,
        edits: Vec<OptionEdit>,
    },
    /// `ALTER FOREIGN TABLE name OPTIONS ([ADD | SET | DROP] option ['value'], …)`,
    /// each option checked as `CREATE FOREIGN TABLE` checks it.
    AlterForeignTable {
        name: ObjectName,
        edits: Vec<OptionEdit>,
    },
    Explain {
        options: ExplainFlags,
        query: Box<Query>,
    },
    /// `UPDATE t [[AS] alias] SET col = expr, … [FROM …] [WHERE …]` in the query
    /// section (`coordinator_sql::modifytable`); `SET (a, b) = (x, y)` is read as
    /// `SET a = x, b = y` (transformUpdateTargetList's multi-assignment).
    Update {
        table: ObjectName,
        alias: Option<Ident>,
        sets: Vec<(Ident, ast::Expr)>,
        /// `FROM` (`UPDATE … FROM`): the other relations, joined to the target.
        from: Vec<ast::TableWithJoins>,
        selection: Option<ast::Expr>,
        returning: Vec<ast::SelectItem>,
    },
    /// `TRUNCATE [TABLE] t [, …]` in a setup section (`setup_dml`).
    Truncate(Vec<ObjectName>),
    /// `DELETE FROM t [[AS] alias] [USING …] [WHERE …]`: in the query section planned
    /// (`modifytable`), in a setup section run at load time (`setup_dml`, without an
    /// alias or USING).
    Delete {
        table: ObjectName,
        alias: Option<Ident>,
        /// `USING` (`DELETE … USING`): the other relations, joined to the target.
        using: Vec<ast::TableWithJoins>,
        selection: Option<ast::Expr>,
        returning: Vec<ast::SelectItem>,
    },
    /// `EXPLAIN [(options)] INSERT | UPDATE | DELETE …`: the query section's DML,
    /// explained (`coordinator_sql::modifytable`); `stmt` is one of those.
    ExplainModify {
        options: ExplainFlags,
        stmt: Box<Stmt>,
    },
    Select(Box<Query>),
    /// `PREPARE name [(type, …)] AS SELECT …` (prepare.c's `PrepareQuery`): the
    /// SELECT with its `$n` parameters, kept by [`super::prepared`]. `types` are the
    /// declared ones; the others are inferred from where `$n` stands.
    Prepare {
        name: String,
        types: Vec<SqlType>,
        query: Box<Query>,
    },
    /// `EXECUTE name [(arg, …)]`, or `EXPLAIN [(options)] EXECUTE …` when `explain`
    /// is set (prepare.c's `ExecuteQuery` and `ExplainExecuteQuery`).
    Execute {
        name: String,
        args: Vec<ast::Expr>,
        explain: Option<ExplainFlags>,
    },
    /// `DEALLOCATE [PREPARE] name`, or every prepared statement (`DEALLOCATE ALL`: None).
    Deallocate(Option<String>),
    /// `CREATE FUNCTION`, `CREATE OPERATOR`, `ALTER EXTENSION … ADD` ([`super::functioncmds`]).
    Routine(super::functioncmds::RoutineStmt),
    /// `WITH name AS [[NOT] MATERIALIZED] (statement), … statement` in the query
    /// section ([`super::cte`]): each CTE a SELECT, INSERT, UPDATE or DELETE, the body
    /// one of those too; EXPLAIN of it is an `ExplainModify` of this.
    With {
        ctes: Vec<super::cte::Cte>,
        body: Box<Stmt>,
    },
}

/// EXPLAIN's options as PostgreSQL 15's `ExplainQuery` settles them (explain.c), once
/// checked: what the sandbox does not do is refused by name before anything runs
/// ([`explain_flags`]), so every field here is honoured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExplainFlags {
    /// ANALYZE: the query runs, and the actual figures are shown.
    pub analyze: bool,
    pub verbose: bool,
    /// COSTS (on by default): each node's `(cost=… rows=… width=…)` (`plan::costsize`).
    pub costs: bool,
    /// TIMING (ANALYZE only; defaults to ANALYZE): node times, or only rows and loops.
    pub timing: bool,
    /// SUMMARY (defaults to ANALYZE): Planning Time, and with ANALYZE Execution Time.
    pub summary: bool,
    /// SETTINGS: the planner settings changed from their defaults.
    pub settings: bool,
    /// FORMAT JSON (else TEXT).
    pub json: bool,
}

/// One element of `ALTER SERVER … OPTIONS (…)`, and where it is.
#[derive(Clone, Debug, PartialEq)]
pub enum OptionEdit {
    Add(String, String, Location),
    Set(String, String, Location),
    Drop(String, Location),
}

/// A statement and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    pub stmt: Stmt,
    pub at: Location,
    /// Its text, as written (for messages and the page).
    pub text: String,
}

/// Parses the statements of `sql`, which starts at line `first_line` of its file (so
/// that positions are the file's).
pub fn parse_statements(sql: &str, first_line: usize) -> Result<Vec<Located>, FrontError> {
    let padded = format!("{}{}", "\n".repeat(first_line.saturating_sub(1)), sql);
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, &padded)
        .with_unescape(true)
        .tokenize_with_location()
        .map_err(|e| FrontError::at(format!("syntax error: {}", e.message), e.location))?;
    // PostgreSQL's operators: `===` is one token (`operator_tokens`).
    let tokens = crate::shard_sql::operator_tokens::merge_operators(&padded, tokens);
    // Before sqlparser builds a tree: one deeper than the stack allows is never built,
    // nor trees larger than memory should hold.
    if let Some(at) = nesting::too_deep(&tokens, nesting::MAX_WEIGHT) {
        return Err(FrontError::at(nesting::message(nesting::MAX_WEIGHT), at));
    }
    check_size(&tokens)?;
    let mut p = Parser::new(&dialect).with_recursion_limit(nesting::MAX_RECURSION).with_tokens_with_locations(tokens);
    let mut out = Vec::new();
    let mut offsets = Offsets::new(&padded);
    loop {
        while p.consume_token(&Token::SemiColon) {}
        let first = p.peek_token();
        if first.token == Token::EOF {
            break;
        }
        let stmt = parse_one(&mut p)?;
        let next = p.peek_token();
        if !matches!(next.token, Token::SemiColon | Token::EOF) {
            return Err(syntax_error(&next));
        }
        let text = offsets.slice(first.span.start, next.span.start);
        out.push(Located { stmt, at: first.span.start, text });
    }
    Ok(out)
}

/// The most tokens (whitespace and comments aside) one section may hold: sqlparser's
/// trees take ~450 bytes a token (a VALUES list of 250,000 rows in 1 MiB of text took
/// 450 MB), so a section's trees stay under ~50 MB. 25,000 VALUES rows; more rows
/// come from generate_series.
pub const MAX_TOKENS: usize = 100_000;

/// The most statements one section may hold: a statement's tree is ~8 KB even for
/// `select 1` (1 MiB of them took 860 MB). The scenario files hold at most 22.
pub const MAX_STATEMENTS: usize = 1_000;

/// Refuses a section over `MAX_TOKENS` or `MAX_STATEMENTS`, at the token that passes
/// the bound, before anything is parsed.
fn check_size(tokens: &[TokenWithSpan]) -> Result<(), FrontError> {
    let (mut count, mut statements, mut open) = (0, 0, false);
    for t in tokens.iter().filter(|t| !matches!(t.token, Token::Whitespace(_))) {
        count += 1;
        if count > MAX_TOKENS {
            return Err(FrontError::at(
                format!("more than {MAX_TOKENS} tokens in one section: too large a text to hold (insert many rows with generate_series)"),
                t.span.start,
            ));
        }
        match t.token {
            Token::SemiColon => open = false,
            _ if !open => {
                (open, statements) = (true, statements + 1);
                if statements > MAX_STATEMENTS {
                    return Err(FrontError::at(
                        format!("more than {MAX_STATEMENTS} statements in one section: too many to hold"),
                        t.span.start,
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Byte offsets of sqlparser locations, met in the order of the text: the walk over
/// the text is made once for all of a file's statements (from its start for each, a
/// megabyte of `select 1;` took minutes).
struct Offsets<'a> {
    text: &'a str,
    /// The location (line, column) of `byte`.
    at: (u64, u64),
    byte: usize,
}

impl<'a> Offsets<'a> {
    fn new(text: &'a str) -> Offsets<'a> {
        Offsets { text, at: (1, 1), byte: 0 }
    }

    /// The byte offset of `loc`, if it is in the text (EOF's location is 0:0).
    fn of(&mut self, loc: Location) -> Option<usize> {
        let want = (loc.line, loc.column);
        if loc.line == 0 {
            return None;
        }
        if want < self.at {
            // Not met in order (never, from `parse_statements`): walk from the start.
            *self = Offsets::new(self.text);
        }
        while self.at < want {
            let c = self.text[self.byte..].chars().next()?;
            self.byte += c.len_utf8();
            self.at = if c == '\n' { (self.at.0 + 1, 1) } else { (self.at.0, self.at.1 + 1) };
        }
        (self.at == want).then_some(self.byte)
    }

    /// The text between two locations (end exclusive), trimmed.
    fn slice(&mut self, from: Location, to: Location) -> String {
        let start = self.of(from).unwrap_or(0);
        let end = self.of(to).unwrap_or(self.text.len());
        self.text.get(start..end).unwrap_or("").trim().to_string()
    }
}

pub(super) fn syntax_error(t: &TokenWithSpan) -> FrontError {
    if t.token == Token::EOF {
        return FrontError::new("syntax error at end of input", 0, 0);
    }
    FrontError::at(format!("syntax error at or near \"{}\"", t.token), t.span.start)
}

/// sqlparser's message carries " at Line: L, Column: C"; it becomes our position.
pub(super) fn parser_error(e: ParserError, fallback: Location) -> FrontError {
    let text = match &e {
        ParserError::ParserError(m) | ParserError::TokenizerError(m) => m.clone(),
        ParserError::RecursionLimitExceeded => return FrontError::at("statement nested too deeply", fallback),
    };
    if let Some(i) = text.rfind(" at Line: ") {
        let tail = &text[i + " at Line: ".len()..];
        let mut parts = tail.split(", Column: ");
        let line = parts.next().and_then(|l| l.trim().parse().ok()).unwrap_or(0);
        let column = parts.next().and_then(|c| c.trim().parse().ok()).unwrap_or(0);
        let message = text[..i].trim_start_matches("sql parser error: ");
        return FrontError::new(format!("syntax error: {message}"), line, column);
    }
    FrontError::at(format!("syntax error: {text}"), fallback)
}

/// Is the next token the word `w` (any case, keyword or not)?
pub(super) fn peek_word(p: &Parser, w: &str) -> bool {
    matches!(&p.peek_token().token, Token::Word(word) if word.value.eq_ignore_ascii_case(w) && word.quote_style.is_none())
}

pub(super) fn expect_word(p: &mut Parser, w: &str) -> Result<(), FrontError> {
    if peek_word(p, w) {
        p.next_token();
        Ok(())
    } else {
        let t = p.peek_token();
        Err(FrontError::at(
            format!("syntax error at or near \"{}\": expected {}", t.token, w.to_uppercase()),
            t.span.start,
        ))
    }
}

pub(super) fn parse_one(p: &mut Parser) -> Result<Stmt, FrontError> {
    let first = p.peek_token();
    let at = first.span.start;
    let words: Vec<String> = p
        .peek_tokens::<4>()
        .iter()
        .map(|t| match t {
            Token::Word(w) => w.value.to_lowercase(),
            _ => String::new(),
        })
        .collect();
    let w: Vec<&str> = words.iter().map(|s| s.as_str()).collect();
    let ours = |p: &mut Parser| -> Result<Stmt, FrontError> {
        match w.as_slice() {
            ["create", "server", ..] => create_server(p),
            ["create", "user", "mapping", ..] => create_user_mapping(p),
            ["create", "foreign", "table", ..] => {
                p.next_token();
                p.next_token();
                p.next_token();
                create_table(p)
            }
            ["create", "table", ..] => create_table(p),
            ["alter", "table", ..] => attach_partition(p),
            ["alter", "server", ..] => alter_server(p),
            ["create", "operator", ..] | ["alter", "extension", ..] => {
                p.next_token();
                p.next_token();
                let routine = if w[0] == "create" {
                    super::functioncmds::create_operator(p, at)
                } else {
                    super::functioncmds::alter_extension(p, at)
                };
                routine.map(Stmt::Routine)
            }
            ["alter", "foreign", "table", ..] => alter_foreign_table(p),
            ["reset", ..] => reset(p),
            ["analyze", ..] | ["analyse", ..] => analyze(p, false),
            ["vacuum", ..] => analyze(p, true),
            _ => unreachable_ours(at),
        }
    };
    match w.as_slice() {
        ["create", "server", ..]
        | ["create", "user", "mapping", ..]
        | ["create", "foreign", "table", ..]
        | ["create", "table", ..]
        | ["alter", "table", ..]
        | ["alter", "server", ..]
        | ["create", "operator", ..]
        | ["alter", "extension", ..]
        | ["alter", "foreign", "table", ..]
        | ["reset", ..]
        | ["analyze", ..]
        | ["analyse", ..]
        | ["vacuum", ..] => ours(p),
        ["delete", "from", _, "returning"] => delete_returning(p, at),
        // `WITH …` and `EXPLAIN … WITH …`: read by `cte` (sqlparser cannot read a
        // data-modifying statement in WITH).
        ["with", ..] => super::cte::parse_with(p, at),
        ["explain", ..] if super::cte::explains_with(p) => super::cte::parse_explain_with(p, at),
        _ => {
            let stmt = p.parse_statement().map_err(|e| parser_error(e, at))?;
            let update = match &stmt {
                Statement::Explain { statement, .. } => statement.as_ref(),
                other => other,
            };
            let more_from = matches!(update, Statement::Update { from: Some(_), selection: None, returning: None, .. })
                && p.peek_token().token == Token::Comma;
            let stmt = convert(stmt, at)?;
            if more_from {
                return update_from_list(p, stmt, at);
            }
            Ok(stmt)
        }
    }
}

/// `UPDATE … FROM a, b … [WHERE …] [RETURNING …]`: sqlparser reads one FROM item and
/// stops at the comma (gram.y's `from_list` takes several); the other items, the WHERE
/// and RETURNING are read here.
fn update_from_list(p: &mut Parser, mut stmt: Stmt, at: Location) -> Result<Stmt, FrontError> {
    let err = |e| parser_error(e, at);
    let update = match &mut stmt {
        Stmt::ExplainModify { stmt, .. } => stmt.as_mut(),
        other => other,
    };
    let Stmt::Update { from, selection, returning, .. } = update else {
        return Err(FrontError::at("internal error: UPDATE … FROM", at));
    };
    while p.consume_token(&Token::Comma) {
        from.push(p.parse_table_and_joins().map_err(err)?);
    }
    if p.parse_keyword(Keyword::WHERE) {
        *selection = Some(p.parse_expr().map_err(err)?);
    }
    if p.parse_keyword(Keyword::RETURNING) {
        *returning = p.parse_comma_separated(Parser::parse_select_item).map_err(err)?;
    }
    Ok(stmt)
}

fn unreachable_ours(at: Location) -> Result<Stmt, FrontError> {
    Err(FrontError::at("internal error: statement dispatch", at))
}

/// `ANALYZE [table [, …]]` and `VACUUM [ANALYZE] [table [, …]]`. What would print or
/// do more than statistics is refused by name: VERBOSE (INFO lines the sandbox does
/// not send), FULL and FREEZE, parenthesized options, column lists.
fn analyze(p: &mut Parser, vacuum: bool) -> Result<Stmt, FrontError> {
    let what = if vacuum { "VACUUM" } else { "ANALYZE" };
    p.next_token();
    let mut analyze = !vacuum;
    loop {
        let t = p.peek_token();
        match &t.token {
            Token::Word(w) if w.quote_style.is_none() => match w.value.to_lowercase().as_str() {
                "analyze" | "analyse" if vacuum => {
                    analyze = true;
                    p.next_token();
                }
                "verbose" | "full" | "freeze" | "skip_locked" => {
                    return Err(FrontError::unsupported(
                        format!(
                            "{what} {}: the sandbox computes statistics only (no INFO messages, no rewrite)",
                            w.value.to_uppercase()
                        ),
                        t.span.start,
                    ))
                }
                _ => break,
            },
            Token::LParen => {
                return Err(FrontError::unsupported(
                    format!("{what} (options): write {what} [ANALYZE] table, …"),
                    t.span.start,
                ))
            }
            _ => break,
        }
    }
    let mut tables = vec![];
    while !matches!(p.peek_token().token, Token::SemiColon | Token::EOF) {
        let at = p.peek_token().span.start;
        tables.push(p.parse_object_name(false).map_err(|e| parser_error(e, at))?);
        let t = p.peek_token();
        match t.token {
            Token::Comma => {
                p.next_token();
            }
            Token::LParen => {
                return Err(FrontError::unsupported(
                    format!("{what} of a column list: the sandbox analyzes every column"),
                    t.span.start,
                ))
            }
            Token::SemiColon | Token::EOF => {}
            _ => return Err(FrontError::at(format!("syntax error at or near \"{}\"", t.token), t.span.start)),
        }
    }
    Ok(Stmt::Analyze { vacuum, analyze, tables })
}

/// sqlparser's statements the sandbox runs, in our form.
fn convert(stmt: Statement, at: Location) -> Result<Stmt, FrontError> {
    match stmt {
        Statement::CreateFunction(cf) => super::functioncmds::create_function(cf, at).map(Stmt::Routine),
        Statement::CreateExtension { name, .. } => {
            if name.value.to_lowercase() != "postgres_fdw" {
                return Err(FrontError::at(
                    format!("extension \"{}\" is not available in the sandbox", name.value),
                    at,
                ));
            }
            Ok(Stmt::Accepted("CREATE EXTENSION"))
        }
        Statement::CreateIndex(ci) => {
            let columns = ci.columns.into_iter().map(|o| o.expr).collect();
            let name = ci
                .name
                .as_ref()
                .map(|n| super::catalog::relation_name(n))
                .transpose()
                .map_err(|m| FrontError::at(m, at))?;
            Ok(Stmt::CreateIndex { table: ci.table_name, columns, unique: ci.unique, name })
        }
        Statement::Insert(ins) => {
            let Some(source) = ins.source else {
                return Err(FrontError::unsupported("INSERT without VALUES or SELECT", at));
            };
            let on_conflict = match ins.on {
                None => None,
                Some(ast::OnInsert::OnConflict(c)) => Some(c),
                Some(other) => return Err(FrontError::unsupported(format!("INSERT … {other}"), at)),
            };
            let returning = ins.returning.unwrap_or_default();
            Ok(Stmt::Insert { table: ins.table_name, columns: ins.columns, source, returning, on_conflict })
        }
        Statement::SetVariable { variables, value, local, hivevar: false } => {
            let ident = match variables {
                ast::OneOrManyWithParens::One(n) => n,
                _ => return Err(FrontError::unsupported("SET of several variables", at)),
            };
            let name_at = ident.0.first().map_or(at, |i| i.span.start);
            let name = ident.to_string().to_lowercase();
            if local {
                return Err(FrontError::unsupported(
                    format!(
                        "SET LOCAL {name}: outside a transaction block PostgreSQL ignores it (WARNING:  SET LOCAL can \
                         only be used in transaction blocks), and scenario files have no transaction blocks; write SET"
                    ),
                    at,
                ));
            }
            let values: Vec<String> = value.iter().map(set_value).collect();
            let value = match values.as_slice() {
                [one] if one == "default" => None,
                [one] => Some(one.as_str()),
                _ => return Err(FrontError::at(format!("SET {name} takes only one argument"), name_at)),
            };
            let (name, value) = super::settings::check_set(&name, value).map_err(|m| FrontError::at(m, name_at))?;
            Ok(Stmt::Set { name, value })
        }
        Statement::Explain { statement, options, analyze, verbose, format, query_plan, describe_alias } => {
            if query_plan || format.is_some() || describe_alias != ast::DescribeAlias::Explain {
                return Err(FrontError::at("syntax error: PostgreSQL's EXPLAIN is EXPLAIN [ANALYZE] [VERBOSE] statement or EXPLAIN (option [, …]) statement", at));
            }
            let flags = explain_flags(analyze, verbose, options.as_deref().unwrap_or_default(), at)?;
            match *statement {
                Statement::Query(query) => Ok(Stmt::Explain { options: flags, query }),
                execute @ Statement::Execute { .. } => match convert(execute, at)? {
                    Stmt::Execute { name, args, .. } => Ok(Stmt::Execute { name, args, explain: Some(flags) }),
                    _ => Err(FrontError::at("internal error: EXPLAIN EXECUTE", at)),
                },
                dml @ (Statement::Insert(_) | Statement::Update { .. } | Statement::Delete(_)) => {
                    Ok(Stmt::ExplainModify { options: flags, stmt: Box::new(convert(dml, at)?) })
                }
                _ => Err(FrontError::unsupported(
                    "EXPLAIN of anything but a SELECT, an INSERT, an UPDATE, a DELETE or an EXECUTE",
                    at,
                )),
            }
        }
        Statement::Query(q) => Ok(Stmt::Select(q)),
        Statement::Update { table, assignments, from, selection, returning, or: _ } => {
            let (name, alias) = modified_table(&table, at)?;
            let mut sets = Vec::with_capacity(assignments.len());
            for a in assignments {
                match (&a.target, a.value) {
                    (ast::AssignmentTarget::ColumnName(n), value) if n.0.len() == 1 => {
                        sets.push((n.0[0].clone(), value))
                    }
                    // transformMultiAssignRef: `SET (a, b) = (x, y)` is `SET a = x, b = y`.
                    (ast::AssignmentTarget::Tuple(cols), ast::Expr::Tuple(values))
                        if cols.iter().all(|c| c.0.len() == 1) =>
                    {
                        if cols.len() != values.len() {
                            let what = if cols.len() > values.len() { "target columns" } else { "expressions" };
                            let other = if cols.len() > values.len() { "expressions" } else { "target columns" };
                            return Err(FrontError::at(
                                format!("number of columns does not match number of values ({what} more than {other})"),
                                at,
                            ));
                        }
                        sets.extend(cols.iter().map(|c| c.0[0].clone()).zip(values));
                    }
                    (ast::AssignmentTarget::Tuple(_), ast::Expr::Subquery(_) | ast::Expr::Function(_)) => {
                        return Err(FrontError::unsupported("UPDATE … SET (a, b) = (SELECT …) or ROW(…)", at))
                    }
                    (ast::AssignmentTarget::Tuple(_), _) => {
                        return Err(FrontError::at(
                            "source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression",
                            at,
                        ))
                    }
                    _ => {
                        return Err(FrontError::unsupported(
                            "UPDATE … SET t.a = … (PostgreSQL reads t as the column, a as a field of it)",
                            at,
                        ))
                    }
                }
            }
            Ok(Stmt::Update {
                table: name,
                alias,
                sets,
                from: from.into_iter().collect(),
                selection,
                returning: returning.unwrap_or_default(),
            })
        }
        Statement::Truncate { table_names, partitions, only, identity, cascade, on_cluster, table: _ } => {
            if partitions.is_some() || only || identity.is_some() || cascade.is_some() || on_cluster.is_some() {
                return Err(FrontError::unsupported(
                    "TRUNCATE ONLY / RESTART IDENTITY / CASCADE (the sandbox has no inheritance children, sequences or foreign keys)",
                    at,
                ));
            }
            Ok(Stmt::Truncate(table_names.into_iter().map(|t| t.name).collect()))
        }
        Statement::Delete(d) => {
            if !d.tables.is_empty() || !d.order_by.is_empty() || d.limit.is_some() {
                return Err(FrontError::unsupported("DELETE with tables before FROM, ORDER BY or LIMIT (MySQL's)", at));
            }
            let (ast::FromTable::WithFromKeyword(from) | ast::FromTable::WithoutKeyword(from)) = &d.from;
            let [table] = from.as_slice() else {
                return Err(FrontError::unsupported("DELETE from several tables", at));
            };
            let (table, alias) = modified_table(table, at)?;
            Ok(Stmt::Delete {
                table,
                alias,
                using: d.using.unwrap_or_default(),
                selection: d.selection,
                returning: d.returning.unwrap_or_default(),
            })
        }
        Statement::Prepare { name, data_types, statement } => {
            let Statement::Query(query) = *statement else {
                return Err(FrontError::unsupported("PREPARE of anything but a SELECT", at));
            };
            let types = data_types.iter().map(|t| SqlType::from_ast(t, at)).collect::<Result<Vec<_>, _>>()?;
            Ok(Stmt::Prepare { name: super::catalog::ident(&name), types, query })
        }
        Statement::Execute { name, parameters, has_parentheses: _, using } => {
            if !using.is_empty() {
                return Err(FrontError::unsupported("EXECUTE … USING (PostgreSQL's is EXECUTE name(args))", at));
            }
            let [part] = name.0.as_slice() else {
                return Err(FrontError::at(
                    format!("syntax error: a prepared statement's name is one identifier, not {name}"),
                    at,
                ));
            };
            Ok(Stmt::Execute { name: super::catalog::ident(part), args: parameters, explain: None })
        }
        Statement::Deallocate { name, prepare: _ } => {
            if name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all") {
                return Ok(Stmt::Deallocate(None));
            }
            Ok(Stmt::Deallocate(Some(super::catalog::ident(&name))))
        }
        other => {
            let text = other.to_string();
            let what: String = text.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
            Err(FrontError::unsupported(format!("the statement {what} …"), at))
        }
    }
}

/// `DELETE FROM t RETURNING …` (no WHERE): RETURNING is reserved in PostgreSQL's
/// grammar, but sqlparser would read it as the table's alias and then fail on the
/// list, so this form is read here.
fn delete_returning(p: &mut Parser, at: Location) -> Result<Stmt, FrontError> {
    let err = |e| parser_error(e, at);
    p.expect_keyword(Keyword::DELETE).map_err(err)?;
    p.expect_keyword(Keyword::FROM).map_err(err)?;
    let table = p.parse_object_name(false).map_err(err)?;
    p.expect_keyword(Keyword::RETURNING).map_err(err)?;
    let returning = p.parse_comma_separated(Parser::parse_select_item).map_err(err)?;
    Ok(Stmt::Delete { table, alias: None, using: vec![], selection: None, returning })
}

/// The one table an UPDATE or DELETE names and its alias (`relation_expr_opt_alias`:
/// no column aliases; no join, ONLY or function).
fn modified_table(t: &ast::TableWithJoins, at: Location) -> Result<(ObjectName, Option<Ident>), FrontError> {
    match &t.relation {
        ast::TableFactor::Table { name, alias, args: None, with_hints, version: None, with_ordinality: false, partitions, .. }
            if t.joins.is_empty() && with_hints.is_empty() && partitions.is_empty() =>
        {
            match alias {
                None => Ok((name.clone(), None)),
                Some(a) if a.columns.is_empty() => Ok((name.clone(), Some(a.name.clone()))),
                Some(_) => Err(FrontError::at("syntax error: the table of UPDATE or DELETE takes an alias without columns", at)),
            }
        }
        _ => Err(FrontError::unsupported("a join or a function as the table of UPDATE or DELETE (PostgreSQL's grammar has FROM / USING for the other relations)", at)),
    }
}

/// The text of an EXPLAIN option's argument as PostgreSQL's `defGetString` gives it:
/// unquoted words folded to lower case, literals as written.
fn option_text(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Value(Value::SingleQuotedString(s)) => s.clone(),
        ast::Expr::Value(Value::Boolean(b)) => b.to_string(),
        ast::Expr::Value(Value::Number(n, _)) => n.clone(),
        ast::Expr::Identifier(i) if i.quote_style.is_none() => i.value.to_lowercase(),
        ast::Expr::Identifier(i) => i.value.clone(),
        other => other.to_string(),
    }
}

/// `defGetBoolean`: no argument is true; the integers 0 and 1; true, false, on, off
/// in any case.
fn option_bool(name: &str, arg: Option<&ast::Expr>, at: Location) -> Result<bool, FrontError> {
    let Some(e) = arg else { return Ok(true) };
    let text = option_text(e).to_lowercase();
    let number = matches!(e, ast::Expr::Value(Value::Number(..)));
    match (number, text.as_str()) {
        (true, "1") | (false, "true" | "on") => Ok(true),
        (true, "0") | (false, "false" | "off") => Ok(false),
        _ => Err(FrontError::at(format!("{name} requires a Boolean value"), at)),
    }
}

/// EXPLAIN's options, settled as PostgreSQL 15's `ExplainQuery` settles them (the last
/// of a repeated option wins; `TIMING` defaults to `ANALYZE`, as does `SUMMARY`), with
/// its errors and their order: an unrecognized option or FORMAT value at once, then
/// `WAL` without ANALYZE, then `TIMING` without ANALYZE. What the sandbox cannot do is
/// refused by name ("not supported by the sandbox: EXPLAIN option …"):
///
/// | option | PostgreSQL 15 | here |
/// |---|---|---|
/// | ANALYZE | runs the query, actual figures | honoured: without it the query is planned only, nothing is sent to a shard |
/// | VERBOSE | Output, schema-qualified names, Remote SQL | honoured |
/// | COSTS (on by default) | `(cost=… rows=… width=…)` | honoured: `plan::costsize`, PostgreSQL 15's cost model over the sandbox's plan |
/// | TIMING (default ANALYZE) | node times; without ANALYZE an error | honoured, with PostgreSQL's error |
/// | SUMMARY (default ANALYZE) | Planning Time (and Execution Time with ANALYZE) | honoured |
/// | SETTINGS | the changed planner settings | honoured (`settings::explain_settings`) |
/// | FORMAT TEXT, JSON | | honoured |
/// | FORMAT XML, YAML | | refused |
/// | BUFFERS | buffer usage (allowed without ANALYZE since 13) | OFF honoured; ON refused: no shared buffers to count |
/// | WAL | WAL usage; without ANALYZE an error | OFF honoured; ON: PostgreSQL's error without ANALYZE, else refused |
/// | GENERIC_PLAN, SERIALIZE, MEMORY | PostgreSQL 16 and later | `unrecognized EXPLAIN option`, as PostgreSQL 15 says |
pub fn explain_flags(
    analyze: bool,
    verbose: bool,
    options: &[ast::UtilityOption],
    at: Location,
) -> Result<ExplainFlags, FrontError> {
    let mut f = ExplainFlags { analyze, verbose, costs: true, ..ExplainFlags::default() };
    let (mut timing, mut summary, mut buffers, mut wal) = (None, None, (false, at), (false, at));
    let mut format: Option<(String, Location)> = None;
    for o in options {
        let name = o.name.value.to_lowercase();
        let here = o.name.span.start;
        let arg = o.arg.as_ref();
        match name.as_str() {
            "analyze" | "analyse" => f.analyze = option_bool("analyze", arg, here)?,
            "verbose" => f.verbose = option_bool(&name, arg, here)?,
            "costs" => f.costs = option_bool(&name, arg, here)?,
            "buffers" => buffers = (option_bool(&name, arg, here)?, here),
            "wal" => wal = (option_bool(&name, arg, here)?, here),
            "settings" => f.settings = option_bool(&name, arg, here)?,
            "timing" => timing = Some((option_bool(&name, arg, here)?, here)),
            "summary" => summary = Some(option_bool(&name, arg, here)?),
            "format" => {
                let value = arg.map(option_text).unwrap_or_default();
                if !["text", "xml", "json", "yaml"].contains(&value.as_str()) {
                    return Err(FrontError::at(
                        format!("unrecognized value for EXPLAIN option \"format\": \"{value}\""),
                        here,
                    ));
                }
                format = Some((value, here));
            }
            other => return Err(FrontError::at(format!("unrecognized EXPLAIN option \"{other}\""), here)),
        }
    }
    if wal.0 && !f.analyze {
        return Err(FrontError::at("EXPLAIN option WAL requires ANALYZE", at));
    }
    f.timing = timing.map_or(f.analyze, |t| t.0);
    if f.timing && !f.analyze {
        return Err(FrontError::at("EXPLAIN option TIMING requires ANALYZE", at));
    }
    f.summary = summary.unwrap_or(f.analyze);
    // What PostgreSQL would do and the sandbox cannot: refused by name.
    if buffers.0 {
        return Err(FrontError::unsupported(
            "EXPLAIN option BUFFERS: the sandbox's tables are not in shared buffers, it has no buffer counts to show",
            buffers.1,
        ));
    }
    if wal.0 {
        return Err(FrontError::unsupported("EXPLAIN option WAL: the sandbox keeps no write-ahead log", wal.1));
    }
    match format {
        Some((v, here)) if v == "xml" || v == "yaml" => {
            return Err(FrontError::unsupported(
                format!("EXPLAIN option FORMAT {} (TEXT and JSON only)", v.to_uppercase()),
                here,
            ))
        }
        Some((v, _)) => f.json = v == "json",
        None => {}
    }
    Ok(f)
}

fn set_value(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Value(Value::SingleQuotedString(s)) => s.clone(),
        ast::Expr::Identifier(i) => i.value.to_lowercase(),
        other => other.to_string(),
    }
}

/// `CREATE USER MAPPING FOR role SERVER name [OPTIONS (…)]`: accepted (the sandbox
/// has no roles: its connections log in as its own role); an option would be ignored,
/// so each is refused by name (`user`, `password`, … ; any other is PostgreSQL's
/// `invalid option`).
fn create_user_mapping(p: &mut Parser) -> Result<Stmt, FrontError> {
    while !matches!(p.peek_token().token, Token::SemiColon | Token::EOF) {
        if matches!(&p.peek_token().token, Token::Word(w) if w.keyword == Keyword::OPTIONS) {
            checked_options(p, |k, _| match k {
                "user" | "password" | "password_required" | "sslcert" | "sslkey" | "sslpassword" => Err(format!(
                    "not supported by the sandbox: user mapping option {k} (the sandbox's connections log in as its \
                     own role)"
                )),
                _ => Err(format!("invalid option \"{k}\"")),
            })?;
            continue;
        }
        p.next_token();
    }
    Ok(Stmt::Accepted("CREATE USER MAPPING"))
}

/// `CREATE SERVER name [TYPE '…'] [VERSION '…'] FOREIGN DATA WRAPPER fdw [OPTIONS (…)]`.
fn create_server(p: &mut Parser) -> Result<Stmt, FrontError> {
    p.next_token(); // CREATE
    p.next_token(); // SERVER
    let at = p.peek_token().span.start;
    if p.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]) {
        // accepted: a script run twice should not fail here
    }
    let name = p.parse_identifier(false).map_err(|e| parser_error(e, at))?;
    for optional in ["type", "version"] {
        if peek_word(p, optional) {
            p.next_token();
            p.parse_literal_string().map_err(|e| parser_error(e, at))?;
        }
    }
    expect_word(p, "foreign")?;
    expect_word(p, "data")?;
    expect_word(p, "wrapper")?;
    let wrapper = p.parse_identifier(false).map_err(|e| parser_error(e, at))?;
    if wrapper.value.to_lowercase() != "postgres_fdw" {
        return Err(FrontError::at(
            format!("foreign-data wrapper \"{}\" does not exist", wrapper.value),
            wrapper.span.start,
        ));
    }
    let options = checked_options(p, super::settings::check_server_option)?;
    Ok(Stmt::CreateServer { name, wrapper, options })
}

/// `[OPTIONS ( name 'value' [, …] )]`, names folded to lower case, each checked by
/// `check` (postgres_fdw's validator, and what the sandbox honours) at its name.
fn checked_options(
    p: &mut Parser,
    check: fn(&str, &str) -> Result<(), String>,
) -> Result<Vec<(String, String)>, FrontError> {
    let at = p.peek_token().span.start;
    if !p.parse_keyword(Keyword::OPTIONS) {
        return Ok(vec![]);
    }
    p.expect_token(&Token::LParen).map_err(|e| parser_error(e, at))?;
    let mut out: Vec<(String, String)> = Vec::new();
    loop {
        let name = p.parse_identifier(false).map_err(|e| parser_error(e, at))?;
        let value = p.parse_literal_string().map_err(|e| parser_error(e, at))?;
        let key = name.value.to_lowercase();
        if out.iter().any(|(k, _)| *k == key) {
            return Err(FrontError::at(format!("option \"{key}\" provided more than once"), name.span.start));
        }
        check(&key, &value).map_err(|m| FrontError::at(m, name.span.start))?;
        out.push((key, value));
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    p.expect_token(&Token::RParen).map_err(|e| parser_error(e, at))?;
    Ok(out)
}

/// `ALTER SERVER name [VERSION '…'] OPTIONS ([ADD | SET | DROP] option ['value'], …)`;
/// the other forms (OWNER TO, RENAME TO) are refused.
fn alter_server(p: &mut Parser) -> Result<Stmt, FrontError> {
    p.next_token(); // ALTER
    p.next_token(); // SERVER
    let at = p.peek_token().span.start;
    let name = p.parse_identifier(false).map_err(|e| parser_error(e, at))?;
    if peek_word(p, "version") {
        p.next_token();
        p.parse_literal_string().map_err(|e| parser_error(e, at))?;
    }
    let here = p.peek_token().span.start;
    if !p.parse_keyword(Keyword::OPTIONS) {
        return Err(FrontError::unsupported("ALTER SERVER other than ALTER SERVER … OPTIONS (…)", here));
    }
    let edits = option_edits(p, super::settings::check_server_option)?;
    Ok(Stmt::AlterServer { name, edits })
}

/// `ALTER FOREIGN TABLE name OPTIONS ([ADD | SET | DROP] option ['value'], …)`; the
/// other forms (columns, RENAME, OWNER TO, …) are refused.
fn alter_foreign_table(p: &mut Parser) -> Result<Stmt, FrontError> {
    p.next_token(); // ALTER
    p.next_token(); // FOREIGN
    p.next_token(); // TABLE
    let at = p.peek_token().span.start;
    let name = p.parse_object_name(false).map_err(|e| parser_error(e, at))?;
    let here = p.peek_token().span.start;
    if !p.parse_keyword(Keyword::OPTIONS) {
        return Err(FrontError::unsupported("ALTER FOREIGN TABLE other than ALTER FOREIGN TABLE … OPTIONS (…)", here));
    }
    let edits = option_edits(p, super::settings::check_table_option)?;
    Ok(Stmt::AlterForeignTable { name, edits })
}

/// `( [ADD | SET | DROP] option ['value'], … )` after OPTIONS, each added or set value
/// checked by `check` at its name.
fn option_edits(p: &mut Parser, check: fn(&str, &str) -> Result<(), String>) -> Result<Vec<OptionEdit>, FrontError> {
    let at = p.peek_token().span.start;
    p.expect_token(&Token::LParen).map_err(|e| parser_error(e, at))?;
    let mut edits = Vec::new();
    loop {
        let verb = ["add", "set", "drop"].into_iter().find(|w| {
            // `SET`/`ADD`/`DROP` are verbs only when an option name follows them.
            peek_word(p, w) && matches!(p.peek_nth_token(1).token, Token::Word(_))
        });
        if verb.is_some() {
            p.next_token();
        }
        let name = p.parse_identifier(false).map_err(|e| parser_error(e, at))?;
        let key = name.value.to_lowercase();
        let loc = name.span.start;
        if verb == Some("drop") {
            edits.push(OptionEdit::Drop(key, loc));
        } else {
            let value = p.parse_literal_string().map_err(|e| parser_error(e, at))?;
            check(&key, &value).map_err(|m| FrontError::at(m, loc))?;
            edits.push(if verb == Some("set") {
                OptionEdit::Set(key, value, loc)
            } else {
                OptionEdit::Add(key, value, loc)
            });
        }
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    p.expect_token(&Token::RParen).map_err(|e| parser_error(e, at))?;
    Ok(edits)
}

/// Applies `ALTER … OPTIONS (…)` to a list of options, with PostgreSQL's errors
/// (`transformGenericOptions`): ADD of an option already there, SET or DROP of one
/// that is not.
pub fn apply_option_edits(options: &mut Vec<(String, String)>, edits: &[OptionEdit]) -> Result<(), FrontError> {
    for e in edits {
        match e {
            OptionEdit::Add(k, v, at) => {
                if options.iter().any(|(key, _)| key == k) {
                    return Err(FrontError::at(format!("option \"{k}\" provided more than once"), *at));
                }
                options.push((k.clone(), v.clone()));
            }
            OptionEdit::Set(k, v, at) => match options.iter_mut().find(|(key, _)| key == k) {
                Some(o) => o.1 = v.clone(),
                None => return Err(FrontError::at(format!("option \"{k}\" not found"), *at)),
            },
            OptionEdit::Drop(k, at) => match options.iter().position(|(key, _)| key == k) {
                Some(i) => {
                    options.remove(i);
                }
                None => return Err(FrontError::at(format!("option \"{k}\" not found"), *at)),
            },
        }
    }
    Ok(())
}

/// `RESET name` (its default, as PostgreSQL's `RESET`) or `RESET ALL`.
fn reset(p: &mut Parser) -> Result<Stmt, FrontError> {
    p.next_token(); // RESET
    let t = p.next_token();
    let name = match &t.token {
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("all") => return Ok(Stmt::ResetAll),
        Token::Word(w) => w.value.to_lowercase(),
        other => return Err(FrontError::at(format!("syntax error at or near \"{other}\""), t.span.start)),
    };
    // A qualified name (`RESET postgres_fdw.application_name`).
    let mut name = name;
    while p.consume_token(&Token::Period) {
        let t = p.next_token();
        match &t.token {
            Token::Word(w) => name = format!("{name}.{}", w.value.to_lowercase()),
            other => return Err(FrontError::at(format!("syntax error at or near \"{other}\""), t.span.start)),
        }
    }
    let (name, value) = super::settings::check_set(&name, None).map_err(|m| FrontError::at(m, t.span.start))?;
    Ok(Stmt::Set { name, value })
}

/// After `CREATE [FOREIGN] TABLE`: the name, then columns or `PARTITION OF`.
fn create_table(p: &mut Parser) -> Result<Stmt, FrontError> {
    let at = p.peek_token().span.start;
    // `CREATE TABLE` (plain) arrives with both words still to consume.
    if peek_word(p, "create") {
        p.next_token();
        p.next_token();
    }
    let _ = p.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    let name = p.parse_object_name(false).map_err(|e| parser_error(e, at))?;
    if p.parse_keywords(&[Keyword::PARTITION, Keyword::OF]) {
        let parent = p.parse_object_name(false).map_err(|e| parser_error(e, at))?;
        let bound = bound_spec(p)?;
        let partition_by = partition_by(p)?;
        let foreign = foreign_spec(p)?;
        return Ok(Stmt::CreatePartition { name, parent, bound, partition_by, foreign });
    }
    let (columns, constraints) = p.parse_columns().map_err(|e| parser_error(e, at))?;
    if let Some(c) = constraints.first() {
        return Err(FrontError::unsupported(format!("table constraint {c}"), at));
    }
    if columns.is_empty() {
        return Err(FrontError::unsupported("a table without columns", at));
    }
    let partition_by = partition_by(p)?;
    let foreign = foreign_spec(p)?;
    Ok(Stmt::CreateTable { name, columns, partition_by, foreign })
}

/// `[SERVER name [OPTIONS (…)]]`.
fn foreign_spec(p: &mut Parser) -> Result<Option<ForeignSpec>, FrontError> {
    if !peek_word(p, "server") {
        return Ok(None);
    }
    p.next_token();
    let at = p.peek_token().span.start;
    let server = p.parse_identifier(false).map_err(|e| parser_error(e, at))?;
    let options = checked_options(p, super::settings::check_table_option)?;
    Ok(Some(ForeignSpec { server, options }))
}

/// `[PARTITION BY {HASH | RANGE | LIST} (col [, …])]`.
fn partition_by(p: &mut Parser) -> Result<Option<PartitionBy>, FrontError> {
    let at = p.peek_token().span.start;
    if !p.parse_keywords(&[Keyword::PARTITION, Keyword::BY]) {
        return Ok(None);
    }
    let t = p.next_token();
    let strategy = match &t.token {
        Token::Word(w) if w.value.eq_ignore_ascii_case("hash") => Strategy::Hash,
        Token::Word(w) if w.value.eq_ignore_ascii_case("range") => Strategy::Range,
        Token::Word(w) if w.value.eq_ignore_ascii_case("list") => Strategy::List,
        other => {
            return Err(FrontError::at(format!("unrecognized partitioning strategy \"{other}\""), t.span.start));
        }
    };
    p.expect_token(&Token::LParen).map_err(|e| parser_error(e, at))?;
    let columns = p.parse_comma_separated(|p| p.parse_identifier(false)).map_err(|e| parser_error(e, at))?;
    p.expect_token(&Token::RParen).map_err(|e| parser_error(e, at))?;
    Ok(Some(PartitionBy { strategy, columns, at }))
}

/// `FOR VALUES WITH (MODULUS m, REMAINDER r) | IN (…) | FROM (…) TO (…)`, or `DEFAULT`.
fn bound_spec(p: &mut Parser) -> Result<BoundSpec, FrontError> {
    let at = p.peek_token().span.start;
    if p.parse_keyword(Keyword::DEFAULT) {
        return Ok(BoundSpec::Default);
    }
    if !p.parse_keywords(&[Keyword::FOR, Keyword::VALUES]) {
        let t = p.peek_token();
        return Err(FrontError::at(
            format!("syntax error at or near \"{}\": expected FOR VALUES or DEFAULT", t.token),
            t.span.start,
        ));
    }
    let pe = |e| parser_error(e, at);
    if p.parse_keyword(Keyword::WITH) {
        p.expect_token(&Token::LParen).map_err(pe)?;
        let mut modulus = None;
        let mut remainder = None;
        loop {
            let key = p.parse_identifier(false).map_err(pe)?;
            let value = unsigned(p)?;
            match key.value.to_lowercase().as_str() {
                "modulus" => modulus = Some(value),
                "remainder" => remainder = Some(value),
                other => {
                    return Err(FrontError::at(
                        format!("unrecognized hash partition bound specification \"{other}\""),
                        key.span.start,
                    ))
                }
            }
            if !p.consume_token(&Token::Comma) {
                break;
            }
        }
        p.expect_token(&Token::RParen).map_err(pe)?;
        let (Some(modulus), Some(remainder)) = (modulus, remainder) else {
            return Err(FrontError::at("modulus and remainder must both be specified for a hash partition", at));
        };
        if modulus == 0 {
            return Err(FrontError::at("modulus for hash partition must be an integer value greater than zero", at));
        }
        if remainder >= modulus {
            return Err(FrontError::at("remainder for hash partition must be less than modulus", at));
        }
        return Ok(BoundSpec::Hash { modulus, remainder });
    }
    if p.parse_keyword(Keyword::IN) {
        p.expect_token(&Token::LParen).map_err(pe)?;
        let values = p.parse_comma_separated(|p| p.parse_expr()).map_err(pe)?;
        p.expect_token(&Token::RParen).map_err(pe)?;
        return Ok(BoundSpec::List(values));
    }
    if p.parse_keyword(Keyword::FROM) {
        let from = range_datums(p)?;
        p.expect_keyword(Keyword::TO).map_err(pe)?;
        let to = range_datums(p)?;
        return Ok(BoundSpec::Range { from, to });
    }
    let t = p.peek_token();
    Err(FrontError::at(format!("syntax error at or near \"{}\": expected WITH, IN or FROM", t.token), t.span.start))
}

fn unsigned(p: &mut Parser) -> Result<u64, FrontError> {
    let t = p.next_token();
    match &t.token {
        Token::Number(n, _) => n
            .parse::<u64>()
            .map_err(|_| FrontError::at(format!("invalid integer \"{n}\" in partition bound"), t.span.start)),
        other => Err(FrontError::at(format!("syntax error at or near \"{other}\": expected an integer"), t.span.start)),
    }
}

fn range_datums(p: &mut Parser) -> Result<Vec<RangeDatum>, FrontError> {
    let at = p.peek_token().span.start;
    p.expect_token(&Token::LParen).map_err(|e| parser_error(e, at))?;
    let values = p
        .parse_comma_separated(|p| {
            if p.parse_keyword(Keyword::MINVALUE) {
                Ok(RangeDatum::MinValue)
            } else if p.parse_keyword(Keyword::MAXVALUE) {
                Ok(RangeDatum::MaxValue)
            } else {
                p.parse_expr().map(RangeDatum::Value)
            }
        })
        .map_err(|e| parser_error(e, at))?;
    p.expect_token(&Token::RParen).map_err(|e| parser_error(e, at))?;
    Ok(values)
}

/// `ALTER TABLE parent ATTACH PARTITION name FOR VALUES …` (the only ALTER TABLE).
fn attach_partition(p: &mut Parser) -> Result<Stmt, FrontError> {
    p.next_token(); // ALTER
    p.next_token(); // TABLE
    let at = p.peek_token().span.start;
    let parent = p.parse_object_name(false).map_err(|e| parser_error(e, at))?;
    let here = p.peek_token().span.start;
    if !p.parse_keywords(&[Keyword::ATTACH, Keyword::PARTITION]) {
        return Err(FrontError::unsupported("ALTER TABLE other than ATTACH PARTITION", here));
    }
    let name = p.parse_object_name(false).map_err(|e| parser_error(e, at))?;
    let bound = bound_spec(p)?;
    Ok(Stmt::AttachPartition { parent, name, bound })
}

/// Parse analysis of a column's or a cast's type name (the type itself is the
/// evaluator's, [`SqlType`]).
impl SqlType {
    pub fn from_ast(t: &DataType, at: Location) -> Result<SqlType, FrontError> {
        Ok(match t {
            DataType::SmallInt(_) | DataType::Int2(_) => SqlType::Int2,
            DataType::Int(_) | DataType::Integer(_) | DataType::Int4(_) => SqlType::Int4,
            DataType::BigInt(_) | DataType::Int8(_) => SqlType::Int8,
            DataType::Numeric(ast::ExactNumberInfo::None)
            | DataType::Decimal(ast::ExactNumberInfo::None)
            | DataType::Dec(ast::ExactNumberInfo::None) => SqlType::Numeric,
            // numeric(p, s) rounds what is stored to its scale: not implemented.
            DataType::Numeric(_) | DataType::Decimal(_) | DataType::Dec(_) => {
                return Err(FrontError::unsupported(
                    format!("the column type {} (numeric with a precision)", type_name(t)),
                    at,
                ))
            }
            DataType::Double | DataType::DoublePrecision | DataType::Float8 | DataType::Real | DataType::Float4 => {
                SqlType::Float8
            }
            DataType::Text | DataType::Varchar(_) | DataType::CharacterVarying(_) | DataType::String(_) => {
                SqlType::Text
            }
            DataType::Bool | DataType::Boolean => SqlType::Bool,
            other => return Err(FrontError::unsupported(format!("the column type {}", type_name(other)), at)),
        })
    }
}

/// A type's name for an error message, written out here rather than by sqlparser's
/// `Display` for `DataType`: that one reaches its whole AST printer (a ClickHouse enum
/// member holds an expression, an expression a subquery, a subquery any statement),
/// ~150 KB of the page's module, where the shard only names a type it refuses.
pub fn type_name(t: &DataType) -> String {
    let name = match t {
        DataType::Custom(name, _) => return name.to_string(),
        DataType::Numeric(info) | DataType::Decimal(info) | DataType::Dec(info) => return format!("numeric{info}"),
        DataType::Date => "date",
        DataType::Time(..) => "time",
        DataType::Timestamp(..) => "timestamp",
        DataType::Interval => "interval",
        DataType::Bool | DataType::Boolean => "boolean",
        DataType::Bytea => "bytea",
        DataType::Uuid => "uuid",
        DataType::JSON => "json",
        DataType::JSONB => "jsonb",
        DataType::Regclass => "regclass",
        DataType::Char(_) | DataType::Character(_) => "character",
        DataType::Bit(_) | DataType::BitVarying(_) => "bit",
        DataType::Array(_) => "an array type",
        _ => "this type",
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn seed_003_ddl_parses() {
        let sql = "create server s2 foreign data wrapper postgres_fdw OPTIONS ( port \n'5433', dbname 'postgres', async_capable 'on');\n\
                   create foreign table players_p1 partition of players for values with \n(modulus 4, remainder 0) server s2;";
        let v = parse_statements(sql, 1).unwrap();
        assert!(matches!(&v[0].stmt, Stmt::CreateServer { options, .. } if options.len() == 3));
        assert!(matches!(
            &v[1].stmt,
            Stmt::CreatePartition { bound: BoundSpec::Hash { modulus: 4, remainder: 0 }, foreign: Some(_), .. }
        ));
        assert_eq!(v[1].at.line, 3);
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn errors_have_file_positions() {
        let e = parse_statements("select 1;\ncreate table t (a int) partition by spiral (a);", 10).unwrap_err();
        assert_eq!((e.line, e.column), (11, 37), "{e}");
        let e = parse_statements("select 1 2", 1).unwrap_err();
        assert_eq!(e.line, 1, "{e}");
    }
}
