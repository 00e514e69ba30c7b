//! The page's shard parser: the text postgres_fdw's deparser writes, read into
//! sqlparser's own AST without sqlparser's `Parser` (issue 20: package size).
//!
//! Why it exists: the page's first module (`make pkg`'s pkg/pgasync_bg.wasm, built
//! without the `sql` feature) runs only the preset scenarios and the lessons, whose
//! shards receive what our deparser (`sql_text`, postgres_fdw's deparse.c) and the
//! connection's protocol write. sqlparser's `Parser` for that was measured at ~87 KB of
//! the module gzipped (760,618 → 673,824 bytes with the parser unreachable and the
//! tokenizer kept; the tokenizer is another ~13 KB, and it stays: the tokens, their
//! spans and the operator merging are the same as the full front end's). So that
//! module reads shard SQL with this small recursive-descent parser, which builds the
//! very `ast::Statement`s sqlparser builds, spans included, from sqlparser's tokens:
//! `shard_sql`'s planning code is the same in both modules. Everywhere else (natively,
//! and in the SQL editor's module, whose scenario files send much more) sqlparser
//! parses shard SQL, and it is this parser's oracle: a differential test (below)
//! parses every text the presets, the lessons and the protocol send to a shard, and
//! the scenario-file corpus's, with both and requires the same tree (`PartialEq`, which
//! ignores spans, and `Debug`, which does not).
//!
//! The grammar read (what the shard plans, as the deparser writes it):
//! * the first word of a statement a shard does not run (`EXPLAIN`, `VACUUM`, …) or of
//!   none (`SELEC`) gives the full front end's error;
//! * `SET [SESSION | LOCAL] name[.name] {= | TO} value [, value]`;
//!   `START TRANSACTION [ISOLATION LEVEL …] [READ ONLY | READ WRITE]`, `BEGIN
//!   [TRANSACTION | WORK]`, `COMMIT` / `END` / `ROLLBACK` / `ABORT [TRANSACTION | WORK]`;
//! * `DEALLOCATE [PREPARE] name | ALL` (postgres_fdw's `deallocate_query`);
//! * `DECLARE c [NO] [SCROLL] CURSOR [WITH[OUT] HOLD] FOR <select>`, `FETCH [FORWARD]
//!   n | ALL | NEXT [FROM | IN] c`, `CLOSE c`;
//! * `SELECT [DISTINCT] items FROM schema.table [[AS] alias] [WHERE e] [GROUP BY e, …]
//!   [HAVING e] [ORDER BY e [ASC | DESC] [NULLS FIRST | LAST], …] [LIMIT e] [OFFSET e]
//!   [FOR UPDATE]`, items `*` or `e [AS alias]`;
//! * expressions: column references (`a`, `r1.a`), numbers, strings, NULL, TRUE,
//!   FALSE, `OR AND NOT`, `IS [NOT] NULL`, `= <> != < <= > >= + - * / %`, unary `-`
//!   and `+`, parentheses, function calls `f(*)`, `f([DISTINCT] e, …)`, with
//!   sqlparser's precedences (PostgreSqlDialect's).
//!
//! Anything else is refused with an error that names where it stops ("unsupported in
//! the page's shard parser: the text at or near "IN" …"), never read some other way:
//! the tests require that whatever this parser accepts, sqlparser reads as the same
//! tree. Such a refusal is not a syntax error (the text may well be valid SQL, which
//! the editor's module reads).

use sqlparser::ast::helpers::attached_token::AttachedToken;
use sqlparser::ast::{
    BeginTransactionKind, BinaryOperator, CloseCursor, Declare, DeclareType, Distinct, Expr, FetchDirection, Function,
    FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments, GroupByExpr, Ident, LockClause, LockType,
    ObjectName, Offset, OffsetRows, OneOrManyWithParens, OrderBy, OrderByExpr, Query, Select, SelectItem, SetExpr,
    Statement, TableAlias, TableFactor, TableWithJoins, TransactionAccessMode, TransactionIsolationLevel,
    TransactionMode, UnaryOperator, Value, WildcardAdditionalOptions,
};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Span, Token, TokenWithSpan, Word};

use super::source::Source;
use super::{Parsed, SqlError};

/// sqlparser's precedences for PostgreSqlDialect (its `prec_value`).
const OR_PREC: u8 = 10;
const AND_PREC: u8 = 20;
const NOT_PREC: u8 = 30;
const IS_PREC: u8 = 40;
const EQ_PREC: u8 = 50;
const PLUS_MINUS_PREC: u8 = 80;
const MUL_DIV_MOD_PREC: u8 = 90;

/// Words sqlparser reads as something other than a column name where an expression
/// starts (its `parse_expr_prefix_by_reserved_word`): refused by name.
const SPECIAL_WORDS: &[Keyword] = &[
    Keyword::ARRAY,
    Keyword::CASE,
    Keyword::CAST,
    Keyword::CEIL,
    Keyword::CONVERT,
    Keyword::CURRENT_CATALOG,
    Keyword::CURRENT_DATE,
    Keyword::CURRENT_TIME,
    Keyword::CURRENT_TIMESTAMP,
    Keyword::CURRENT_USER,
    Keyword::EXISTS,
    Keyword::EXTRACT,
    Keyword::FLOOR,
    Keyword::INTERVAL,
    Keyword::LOCALTIME,
    Keyword::LOCALTIMESTAMP,
    Keyword::MAP,
    Keyword::MATCH,
    Keyword::OVERLAY,
    Keyword::POSITION,
    Keyword::PRIOR,
    Keyword::SAFE_CAST,
    Keyword::SELECT,
    Keyword::SESSION_USER,
    Keyword::STRUCT,
    Keyword::SUBSTRING,
    Keyword::TRIM,
    Keyword::TRY_CAST,
    Keyword::TRY_CONVERT,
    Keyword::USER,
    Keyword::WITH,
];

/// Parses every statement of `src` (separated by `;`), as `parse_shard_sql` does
/// with sqlparser.
pub(super) fn parse_statements(src: &Source) -> Result<Vec<Parsed>, SqlError> {
    let mut p = Reader::new(src);
    let mut out = Vec::new();
    loop {
        while p.eat(&Token::SemiColon) {}
        if p.peek().token == Token::EOF {
            return Ok(out);
        }
        out.push(p.statement()?);
        if !matches!(p.peek().token, Token::SemiColon | Token::EOF) {
            return Err(p.refuse());
        }
    }
}

/// Parses `src` as one expression (a SQL function's body, `inline::plan_body`).
pub(super) fn parse_expression(src: &Source) -> Result<Expr, SqlError> {
    let mut p = Reader::new(src);
    let e = p.expr()?;
    match p.peek().token {
        Token::EOF => Ok(e),
        _ => Err(p.refuse()),
    }
}

/// The tokens (whitespace left out) and the position of the next one.
struct Reader<'s, 'a> {
    src: &'s Source<'a>,
    tokens: Vec<&'s TokenWithSpan>,
    at: usize,
    /// sqlparser's recursion counter, counted where sqlparser counts it (a query and
    /// each sub-expression: every parenthesis and prefix operator nests one), with
    /// the same limit ([`nesting::MAX_RECURSION`]) and the same refusal: the weight
    /// check alone lets through text nested deeper than this parser's frames fit
    /// in the page's 1 MiB stack, and deeper than sqlparser reads.
    remaining_depth: usize,
}

impl<'s, 'a> Reader<'s, 'a> {
    fn new(src: &'s Source<'a>) -> Reader<'s, 'a> {
        let tokens = src.tokens.iter().filter(|t| !matches!(t.token, Token::Whitespace(_))).collect();
        Reader { src, tokens, at: 0, remaining_depth: super::nesting::MAX_RECURSION }
    }

    fn peek(&self) -> &'s TokenWithSpan {
        self.peek_nth(0)
    }

    fn peek_nth(&self, n: usize) -> &'s TokenWithSpan {
        match self.tokens.get(self.at + n) {
            Some(t) => t,
            None => &EOF,
        }
    }

    fn next(&mut self) -> &'s TokenWithSpan {
        let t = self.peek();
        self.at += 1;
        t
    }

    fn eat(&mut self, t: &Token) -> bool {
        if &self.peek().token == t {
            self.at += 1;
            return true;
        }
        false
    }

    /// Whether the token `n` ahead is the keyword `k` (unquoted).
    fn is_keyword(&self, n: usize, k: Keyword) -> bool {
        matches!(&self.peek_nth(n).token, Token::Word(w) if w.keyword == k && w.quote_style.is_none())
    }

    fn eat_keyword(&mut self, k: Keyword) -> bool {
        if self.is_keyword(0, k) {
            self.at += 1;
            return true;
        }
        false
    }

    fn eat_keywords(&mut self, ks: &[Keyword]) -> bool {
        if ks.iter().enumerate().all(|(n, &k)| self.is_keyword(n, k)) {
            self.at += ks.len();
            return true;
        }
        false
    }

    /// An optional choice between two keyword sequences, as sqlparser keeps it:
    /// `Some(true)` for `yes` (`ASC`, `NULLS FIRST`, `SCROLL`, `WITH HOLD`), `Some(false)`
    /// for `no`, `None` when neither is written.
    fn eat_either(&mut self, yes: &[Keyword], no: &[Keyword]) -> Option<bool> {
        if self.eat_keywords(yes) {
            Some(true)
        } else if self.eat_keywords(no) {
            Some(false)
        } else {
            None
        }
    }

    fn expect(&mut self, t: &Token) -> Result<(), SqlError> {
        if self.eat(t) {
            return Ok(());
        }
        Err(self.refuse())
    }

    fn expect_keyword(&mut self, k: Keyword) -> Result<(), SqlError> {
        if self.eat_keyword(k) {
            return Ok(());
        }
        Err(self.refuse())
    }

    /// The refusal at the next token: this grammar stops there. Never a syntax error,
    /// even at the end of the text (`SELECT 1` is PostgreSQL's, not this grammar's).
    fn refuse(&self) -> SqlError {
        let t = self.peek();
        let (near, position) = match &t.token {
            Token::EOF => ("at end of input".to_string(), Some(self.src.end_position())),
            Token::Word(w) => (format!("at or near \"{w}\""), self.src.position(t.span.start)),
            other => (format!("at or near \"{other}\""), self.src.position(t.span.start)),
        };
        SqlError::new(
            format!(
                "unsupported in the page's shard parser: the text {near} (the SQL editor's module reads the whole grammar)"
            ),
            position,
        )
    }

    /// An identifier: any word, as sqlparser's `parse_identifier` takes it.
    fn ident(&mut self) -> Result<Ident, SqlError> {
        match &self.peek().token {
            Token::Word(w) => {
                let t = self.next();
                Ok(w.to_ident(t.span))
            }
            _ => Err(self.refuse()),
        }
    }

    /// `name[.name…]`.
    fn object_name(&mut self) -> Result<ObjectName, SqlError> {
        let mut parts = vec![self.ident()?];
        while self.eat(&Token::Period) {
            parts.push(self.ident()?);
        }
        Ok(ObjectName(parts))
    }

    fn number(&mut self) -> Result<Value, SqlError> {
        match &self.peek().token {
            Token::Number(n, long) => {
                self.at += 1;
                Ok(Value::Number(n.clone(), *long))
            }
            _ => Err(self.refuse()),
        }
    }

    // ---- statements ---------------------------------------------------------------

    fn statement(&mut self) -> Result<Parsed, SqlError> {
        let first = self.peek().clone();
        let Token::Word(w) = &first.token else {
            return Err(match first.token {
                Token::LParen => self.refuse(),
                _ => self.src.syntax_error_at(&first),
            });
        };
        let keyword = if w.quote_style.is_none() { w.keyword } else { Keyword::NoKeyword };
        self.at += 1;
        let statement = match keyword {
            Keyword::ABORT => {
                let _ = self.eat_keyword(Keyword::TRANSACTION) || self.eat_keyword(Keyword::WORK);
                return Ok(Parsed::Abort);
            }
            Keyword::SELECT => {
                self.at -= 1;
                Statement::Query(Box::new(self.query()?))
            }
            Keyword::START => {
                self.expect_keyword(Keyword::TRANSACTION)?;
                Statement::StartTransaction {
                    modes: self.transaction_modes()?,
                    begin: false,
                    transaction: Some(BeginTransactionKind::Transaction),
                    modifier: None,
                }
            }
            Keyword::BEGIN => {
                let transaction = if self.eat_keyword(Keyword::TRANSACTION) {
                    Some(BeginTransactionKind::Transaction)
                } else if self.eat_keyword(Keyword::WORK) {
                    Some(BeginTransactionKind::Work)
                } else {
                    None
                };
                Statement::StartTransaction {
                    modes: self.transaction_modes()?,
                    begin: true,
                    transaction,
                    modifier: None,
                }
            }
            Keyword::COMMIT | Keyword::END => {
                let _ = self.eat_keyword(Keyword::TRANSACTION) || self.eat_keyword(Keyword::WORK);
                Statement::Commit { chain: false }
            }
            Keyword::ROLLBACK => {
                let _ = self.eat_keyword(Keyword::TRANSACTION) || self.eat_keyword(Keyword::WORK);
                Statement::Rollback { chain: false, savepoint: None }
            }
            Keyword::SET => self.set()?,
            Keyword::DEALLOCATE => {
                let prepare = self.eat_keyword(Keyword::PREPARE);
                Statement::Deallocate { name: self.ident()?, prepare }
            }
            Keyword::DECLARE => self.declare()?,
            Keyword::FETCH => self.fetch()?,
            Keyword::CLOSE => match self.is_keyword(0, Keyword::ALL) {
                true => return Err(self.refuse()),
                false => Statement::Close { cursor: CloseCursor::Specific { name: self.ident()? } },
            },
            // Other statements sqlparser reads: this grammar does not.
            Keyword::WITH | Keyword::VALUES | Keyword::INSERT | Keyword::UPDATE | Keyword::DELETE => {
                self.at -= 1;
                return Err(self.refuse());
            }
            // PostgreSQL's statements a shard does not run, and words that start none,
            // as the full front end refuses them (`parse_shard_statement`).
            _ if super::POSTGRES_STATEMENTS.contains(&super::statement_keyword(&first).as_str()) => {
                return Err(SqlError::unsupported(
                    super::statement_keyword(&first),
                    self.src.position(first.span.start),
                ))
            }
            _ => return Err(self.src.syntax_error_at(&first)),
        };
        Ok(Parsed::Statement(Box::new(statement), first))
    }

    /// `ISOLATION LEVEL …`, `READ ONLY`, `READ WRITE`, optionally comma-separated
    /// (a comma requires another mode).
    fn transaction_modes(&mut self) -> Result<Vec<TransactionMode>, SqlError> {
        let mut modes = Vec::new();
        let mut required = false;
        loop {
            let mode = if self.eat_keywords(&[Keyword::ISOLATION, Keyword::LEVEL]) {
                let level = if self.eat_keywords(&[Keyword::READ, Keyword::UNCOMMITTED]) {
                    TransactionIsolationLevel::ReadUncommitted
                } else if self.eat_keywords(&[Keyword::READ, Keyword::COMMITTED]) {
                    TransactionIsolationLevel::ReadCommitted
                } else if self.eat_keywords(&[Keyword::REPEATABLE, Keyword::READ]) {
                    TransactionIsolationLevel::RepeatableRead
                } else if self.eat_keyword(Keyword::SERIALIZABLE) {
                    TransactionIsolationLevel::Serializable
                } else {
                    return Err(self.refuse());
                };
                TransactionMode::IsolationLevel(level)
            } else if self.eat_keywords(&[Keyword::READ, Keyword::ONLY]) {
                TransactionMode::AccessMode(TransactionAccessMode::ReadOnly)
            } else if self.eat_keywords(&[Keyword::READ, Keyword::WRITE]) {
                TransactionMode::AccessMode(TransactionAccessMode::ReadWrite)
            } else if required {
                return Err(self.refuse());
            } else {
                return Ok(modes);
            };
            modes.push(mode);
            required = self.eat(&Token::Comma);
        }
    }

    /// `SET [SESSION | LOCAL] name {= | TO} value, …` (not SET ROLE, TIME ZONE,
    /// TRANSACTION, … : refused at their word).
    fn set(&mut self) -> Result<Statement, SqlError> {
        let local = self.eat_keyword(Keyword::LOCAL);
        if !local {
            self.eat_keyword(Keyword::SESSION);
        }
        let special = [Keyword::ROLE, Keyword::TIME, Keyword::TRANSACTION, Keyword::HIVEVAR];
        if special.iter().any(|&k| self.is_keyword(0, k)) || self.peek().token == Token::LParen {
            return Err(self.refuse());
        }
        let name = self.object_name()?;
        if !(self.eat(&Token::Eq) || self.eat_keyword(Keyword::TO)) {
            return Err(self.refuse());
        }
        let mut value = vec![self.set_value()?];
        while self.eat(&Token::Comma) {
            value.push(self.set_value()?);
        }
        Ok(Statement::SetVariable { local, hivevar: false, variables: OneOrManyWithParens::One(name), value })
    }

    /// A SET value: an expression that does not start a subquery (`(`), as sqlparser
    /// tries a subquery first.
    fn set_value(&mut self) -> Result<Expr, SqlError> {
        if self.peek().token == Token::LParen {
            return Err(self.refuse());
        }
        self.expr()
    }

    /// `DECLARE c [BINARY] [NO SCROLL | SCROLL] CURSOR [WITH | WITHOUT HOLD] FOR query`.
    fn declare(&mut self) -> Result<Statement, SqlError> {
        let name = self.ident()?;
        let binary = Some(self.eat_keyword(Keyword::BINARY));
        if self.is_keyword(0, Keyword::INSENSITIVE) || self.is_keyword(0, Keyword::ASENSITIVE) {
            return Err(self.refuse());
        }
        let scroll = self.eat_either(&[Keyword::SCROLL], &[Keyword::NO, Keyword::SCROLL]);
        self.expect_keyword(Keyword::CURSOR)?;
        let hold = self.eat_either(&[Keyword::WITH, Keyword::HOLD], &[Keyword::WITHOUT, Keyword::HOLD]);
        self.expect_keyword(Keyword::FOR)?;
        if !self.is_keyword(0, Keyword::SELECT) {
            return Err(self.refuse());
        }
        let query = self.query()?;
        Ok(Statement::Declare {
            stmts: vec![Declare {
                names: vec![name],
                data_type: None,
                assignment: None,
                declare_type: Some(DeclareType::Cursor),
                binary,
                sensitive: None,
                scroll,
                hold,
                for_query: Some(Box::new(query)),
            }],
        })
    }

    /// `FETCH [FORWARD] n | FORWARD ALL | ALL | NEXT {FROM | IN} c`.
    fn fetch(&mut self) -> Result<Statement, SqlError> {
        let direction = if self.eat_keyword(Keyword::NEXT) {
            FetchDirection::Next
        } else if self.eat_keyword(Keyword::FORWARD) {
            match self.eat_keyword(Keyword::ALL) {
                true => FetchDirection::ForwardAll,
                false => FetchDirection::Forward { limit: Some(self.number()?) },
            }
        } else if self.eat_keyword(Keyword::ALL) {
            FetchDirection::All
        } else {
            FetchDirection::Count { limit: self.number()? }
        };
        if !(self.eat_keyword(Keyword::FROM) || self.eat_keyword(Keyword::IN)) {
            return Err(self.refuse());
        }
        let name = self.ident()?;
        if self.is_keyword(0, Keyword::INTO) {
            return Err(self.refuse());
        }
        Ok(Statement::Fetch { name, direction, into: None })
    }

    // ---- SELECT -----------------------------------------------------------------

    fn query(&mut self) -> Result<Query, SqlError> {
        self.nested(Self::query_inner)
    }

    /// `read` one level deeper, or sqlparser's refusal (`RecursionLimitExceeded`, which
    /// `Source::error` words as PostgreSQL's `check_stack_depth`) past the limit.
    fn nested<T>(&mut self, read: impl FnOnce(&mut Self) -> Result<T, SqlError>) -> Result<T, SqlError> {
        if self.remaining_depth == 0 {
            return Err(SqlError::new("stack depth limit exceeded", None));
        }
        self.remaining_depth -= 1;
        let result = read(self);
        self.remaining_depth += 1;
        result
    }

    fn query_inner(&mut self) -> Result<Query, SqlError> {
        let select_token = self.next().clone(); // SELECT
        let distinct = if self.eat_keyword(Keyword::DISTINCT) {
            if self.is_keyword(0, Keyword::ON) {
                return Err(self.refuse());
            }
            Some(Distinct::Distinct)
        } else {
            self.eat_keyword(Keyword::ALL);
            None
        };
        let mut projection = vec![self.select_item()?];
        while self.eat(&Token::Comma) {
            projection.push(self.select_item()?);
        }
        self.expect_keyword(Keyword::FROM)?;
        let from = vec![TableWithJoins { relation: self.table()?, joins: vec![] }];
        let selection = if self.eat_keyword(Keyword::WHERE) { Some(self.expr()?) } else { None };
        let mut group_by = Vec::new();
        if self.eat_keywords(&[Keyword::GROUP, Keyword::BY]) {
            // sqlparser's GROUP BY ALL, ROLLUP, CUBE, GROUPING SETS: not column names.
            loop {
                if [Keyword::ALL, Keyword::ROLLUP, Keyword::CUBE, Keyword::GROUPING]
                    .iter()
                    .any(|&k| self.is_keyword(0, k))
                {
                    return Err(self.refuse());
                }
                group_by.push(self.expr()?);
                if !self.eat(&Token::Comma) {
                    break;
                }
            }
        }
        let having = if self.eat_keyword(Keyword::HAVING) { Some(self.expr()?) } else { None };
        let select = Select {
            select_token: AttachedToken(select_token),
            distinct,
            top: None,
            top_before_distinct: false,
            projection,
            into: None,
            from,
            lateral_views: vec![],
            prewhere: None,
            selection,
            group_by: GroupByExpr::Expressions(group_by, vec![]),
            cluster_by: vec![],
            distribute_by: vec![],
            sort_by: vec![],
            having,
            named_window: vec![],
            qualify: None,
            window_before_qualify: false,
            value_table_mode: None,
            connect_by: None,
        };
        let order_by = if self.eat_keywords(&[Keyword::ORDER, Keyword::BY]) {
            let mut exprs = vec![self.order_by_expr()?];
            while self.eat(&Token::Comma) {
                exprs.push(self.order_by_expr()?);
            }
            Some(OrderBy { exprs, interpolate: None })
        } else {
            None
        };
        let limit = if self.eat_keyword(Keyword::LIMIT) {
            if self.is_keyword(0, Keyword::ALL) {
                return Err(self.refuse());
            }
            Some(self.expr()?)
        } else {
            None
        };
        let offset = if self.eat_keyword(Keyword::OFFSET) {
            let value = self.expr()?;
            if self.is_keyword(0, Keyword::ROW) || self.is_keyword(0, Keyword::ROWS) {
                return Err(self.refuse());
            }
            Some(Offset { value, rows: OffsetRows::None })
        } else {
            None
        };
        let mut locks = Vec::new();
        if self.eat_keywords(&[Keyword::FOR, Keyword::UPDATE]) {
            if self.is_keyword(0, Keyword::OF)
                || self.is_keyword(0, Keyword::NOWAIT)
                || self.is_keyword(0, Keyword::SKIP)
            {
                return Err(self.refuse());
            }
            locks.push(LockClause { lock_type: LockType::Update, of: None, nonblock: None });
        }
        Ok(Query {
            with: None,
            body: Box::new(SetExpr::Select(Box::new(select))),
            order_by,
            limit,
            limit_by: vec![],
            offset,
            fetch: None,
            locks,
            for_clause: None,
            settings: None,
            format_clause: None,
        })
    }

    fn select_item(&mut self) -> Result<SelectItem, SqlError> {
        if self.peek().token == Token::Mul {
            let star = self.next().clone();
            return Ok(SelectItem::Wildcard(WildcardAdditionalOptions {
                wildcard_token: AttachedToken(star),
                ..Default::default()
            }));
        }
        let expr = self.expr()?;
        if self.eat_keyword(Keyword::AS) {
            return Ok(SelectItem::ExprWithAlias { expr, alias: self.ident()? });
        }
        Ok(SelectItem::UnnamedExpr(expr))
    }

    /// `schema.table [[AS] alias]`: a relation, not a join, subquery or function.
    fn table(&mut self) -> Result<TableFactor, SqlError> {
        if !matches!(self.peek().token, Token::Word(_)) {
            return Err(self.refuse());
        }
        let name = self.object_name()?;
        let alias = if self.eat_keyword(Keyword::AS) {
            Some(self.ident()?)
        } else {
            match &self.peek().token {
                Token::Word(w) if w.keyword == Keyword::NoKeyword || w.quote_style.is_some() => Some(self.ident()?),
                _ => None,
            }
        };
        if self.peek().token == Token::LParen {
            return Err(self.refuse());
        }
        Ok(super::plain_table(name, alias.map(|name| TableAlias { name, columns: vec![] })))
    }

    fn order_by_expr(&mut self) -> Result<OrderByExpr, SqlError> {
        let expr = self.expr()?;
        let asc = self.eat_either(&[Keyword::ASC], &[Keyword::DESC]);
        let nulls_first = self.eat_either(&[Keyword::NULLS, Keyword::FIRST], &[Keyword::NULLS, Keyword::LAST]);
        if self.is_keyword(0, Keyword::USING) {
            return Err(self.refuse());
        }
        Ok(OrderByExpr { expr, asc, nulls_first, with_fill: None })
    }

    // ---- expressions (sqlparser's parse_subexpr: precedence climbing) --------------

    fn expr(&mut self) -> Result<Expr, SqlError> {
        self.subexpr(0)
    }

    fn subexpr(&mut self, precedence: u8) -> Result<Expr, SqlError> {
        self.nested(|p| p.subexpr_inner(precedence))
    }

    fn subexpr_inner(&mut self, precedence: u8) -> Result<Expr, SqlError> {
        let mut e = self.prefix()?;
        loop {
            let next = self.infix_precedence()?;
            if precedence >= next {
                return Ok(e);
            }
            e = self.infix(e, next)?;
        }
    }

    /// The precedence of the operator at the next token; 0 ends the expression. A
    /// token sqlparser would read as an operator this grammar does not is refused.
    fn infix_precedence(&self) -> Result<u8, SqlError> {
        let t = &self.peek().token;
        Ok(match t {
            Token::Word(w) if w.quote_style.is_none() => match w.keyword {
                Keyword::OR => OR_PREC,
                Keyword::AND => AND_PREC,
                Keyword::IS => IS_PREC,
                Keyword::NOT
                | Keyword::IN
                | Keyword::BETWEEN
                | Keyword::LIKE
                | Keyword::ILIKE
                | Keyword::SIMILAR
                | Keyword::RLIKE
                | Keyword::REGEXP
                | Keyword::OPERATOR
                | Keyword::DIV
                | Keyword::XOR
                | Keyword::AT
                | Keyword::COLLATE => return Err(self.refuse()),
                _ => 0,
            },
            Token::Eq | Token::Neq | Token::Lt | Token::LtEq | Token::Gt | Token::GtEq => EQ_PREC,
            Token::Plus | Token::Minus => PLUS_MINUS_PREC,
            Token::Mul | Token::Div | Token::Mod => MUL_DIV_MOD_PREC,
            Token::Comma | Token::RParen | Token::SemiColon | Token::EOF | Token::Word(_) => 0,
            _ => return Err(self.refuse()),
        })
    }

    fn infix(&mut self, left: Expr, precedence: u8) -> Result<Expr, SqlError> {
        let op = match &self.next().token {
            Token::Word(w) if w.keyword == Keyword::IS => {
                let negated = self.eat_keyword(Keyword::NOT);
                if !self.eat_keyword(Keyword::NULL) {
                    return Err(self.refuse());
                }
                return Ok(match negated {
                    true => Expr::IsNotNull(Box::new(left)),
                    false => Expr::IsNull(Box::new(left)),
                });
            }
            Token::Word(w) if w.keyword == Keyword::OR => BinaryOperator::Or,
            Token::Word(w) if w.keyword == Keyword::AND => BinaryOperator::And,
            Token::Eq => BinaryOperator::Eq,
            Token::Neq => BinaryOperator::NotEq,
            Token::Lt => BinaryOperator::Lt,
            Token::LtEq => BinaryOperator::LtEq,
            Token::Gt => BinaryOperator::Gt,
            Token::GtEq => BinaryOperator::GtEq,
            Token::Plus => BinaryOperator::Plus,
            Token::Minus => BinaryOperator::Minus,
            Token::Mul => BinaryOperator::Multiply,
            Token::Div => BinaryOperator::Divide,
            Token::Mod => BinaryOperator::Modulo,
            _ => {
                self.at -= 1;
                return Err(self.refuse());
            }
        };
        // ANY/ALL/SOME after a comparison: sqlparser's array comparisons.
        if [Keyword::ANY, Keyword::ALL, Keyword::SOME].iter().any(|&k| self.is_keyword(0, k)) {
            return Err(self.refuse());
        }
        let right = self.subexpr(precedence)?;
        Ok(Expr::BinaryOp { left: Box::new(left), op, right: Box::new(right) })
    }

    fn prefix(&mut self) -> Result<Expr, SqlError> {
        let t = self.peek();
        match &t.token {
            Token::Number(..) => Ok(Expr::Value(self.number()?)),
            Token::SingleQuotedString(s) => {
                self.at += 1;
                Ok(Expr::Value(Value::SingleQuotedString(s.clone())))
            }
            Token::Minus | Token::Plus => {
                let op = if t.token == Token::Minus { UnaryOperator::Minus } else { UnaryOperator::Plus };
                self.at += 1;
                Ok(Expr::UnaryOp { op, expr: Box::new(self.subexpr(MUL_DIV_MOD_PREC)?) })
            }
            Token::LParen => {
                self.at += 1;
                if self.is_keyword(0, Keyword::SELECT) || self.is_keyword(0, Keyword::WITH) {
                    return Err(self.refuse());
                }
                let e = self.expr()?;
                if self.peek().token == Token::Comma {
                    return Err(self.refuse());
                }
                self.expect(&Token::RParen)?;
                Ok(Expr::Nested(Box::new(e)))
            }
            Token::Word(w) => self.word_prefix(w),
            _ => Err(self.refuse()),
        }
    }

    fn word_prefix(&mut self, w: &Word) -> Result<Expr, SqlError> {
        let span = self.peek().span;
        // `type 'literal'` (a typed string, `date '…'`) is sqlparser's, not read here.
        if matches!(self.peek_nth(1).token, Token::SingleQuotedString(_)) {
            return Err(self.refuse());
        }
        if w.quote_style.is_none() {
            match w.keyword {
                Keyword::NULL => {
                    self.at += 1;
                    return Ok(Expr::Value(Value::Null));
                }
                Keyword::TRUE | Keyword::FALSE => {
                    self.at += 1;
                    return Ok(Expr::Value(Value::Boolean(w.keyword == Keyword::TRUE)));
                }
                Keyword::NOT => {
                    self.at += 1;
                    if self.is_keyword(0, Keyword::EXISTS) {
                        return Err(self.refuse());
                    }
                    return Ok(Expr::UnaryOp { op: UnaryOperator::Not, expr: Box::new(self.subexpr(NOT_PREC)?) });
                }
                k if SPECIAL_WORDS.contains(&k) => return Err(self.refuse()),
                _ => {}
            }
        }
        let first = w.to_ident(span);
        self.at += 1;
        match &self.peek().token {
            Token::Period => {
                let mut parts = vec![first];
                while self.eat(&Token::Period) {
                    match &self.peek().token {
                        Token::Word(_) => parts.push(self.ident()?),
                        _ => return Err(self.refuse()), // `t.*`, `t.1`
                    }
                }
                if self.peek().token == Token::LParen {
                    return Err(self.refuse()); // a qualified function name
                }
                Ok(Expr::CompoundIdentifier(parts))
            }
            Token::LParen => self.function(first),
            _ => Ok(Expr::Identifier(first)),
        }
    }

    /// `name(*)` or `name([DISTINCT | ALL] e, …)`, with no FILTER, OVER, WITHIN GROUP,
    /// ORDER BY, named arguments or null treatment (refused where they start).
    fn function(&mut self, name: Ident) -> Result<Expr, SqlError> {
        self.expect(&Token::LParen)?;
        let mut args = Vec::new();
        let mut duplicate_treatment = None;
        if self.peek().token == Token::Mul && self.peek_nth(1).token == Token::RParen {
            self.at += 1;
            args.push(FunctionArg::Unnamed(FunctionArgExpr::Wildcard));
        } else if self.peek().token != Token::RParen {
            if self.eat_keyword(Keyword::DISTINCT) {
                duplicate_treatment = Some(sqlparser::ast::DuplicateTreatment::Distinct);
            } else if self.eat_keyword(Keyword::ALL) {
                duplicate_treatment = Some(sqlparser::ast::DuplicateTreatment::All);
            }
            loop {
                if matches!(self.peek().token, Token::Mul)
                    || matches!(self.peek_nth(1).token, Token::RArrow | Token::Assignment)
                {
                    return Err(self.refuse());
                }
                args.push(FunctionArg::Unnamed(FunctionArgExpr::Expr(self.expr()?)));
                if !self.eat(&Token::Comma) {
                    break;
                }
            }
        }
        self.expect(&Token::RParen)?;
        let after = [Keyword::WITHIN, Keyword::FILTER, Keyword::OVER, Keyword::IGNORE, Keyword::RESPECT];
        if after.iter().any(|&k| self.is_keyword(0, k)) {
            return Err(self.refuse());
        }
        Ok(Expr::Function(Function {
            name: ObjectName(vec![name]),
            uses_odbc_syntax: false,
            parameters: FunctionArguments::None,
            args: FunctionArguments::List(FunctionArgumentList { duplicate_treatment, args, clauses: vec![] }),
            filter: None,
            null_treatment: None,
            over: None,
            within_group: vec![],
        }))
    }
}

/// The token past the end of the text.
static EOF: TokenWithSpan = TokenWithSpan { token: Token::EOF, span: Span::empty() };

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::RefCell;

    use crate::behaviour::Preset;
    use crate::clock::Clock;
    use crate::knobs::{Knobs, Sharing};
    use crate::scenario::{Scenario, SCENARIOS};

    use super::super::source::Source;
    use super::super::{Parsed, SqlError};
    use super::parse_statements;
    use crate::shard_sql::node_span::tests::assert_spans_as_sqlparser;
    use sqlparser::ast::Statement;
    use sqlparser::tokenizer::TokenWithSpan;

    thread_local! {
        static RECORDED: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
    }

    /// Called by `parse_shard_sql` with every text a shard parses, while a test records.
    pub(crate) fn record(sql: &str) {
        RECORDED.with(|r| {
            if let Some(v) = r.borrow_mut().as_mut() {
                v.push(sql.to_string());
            }
        });
    }

    fn recording(f: impl FnOnce()) -> Vec<String> {
        RECORDED.with(|r| *r.borrow_mut() = Some(Vec::new()));
        f();
        let mut v = RECORDED.with(|r| r.borrow_mut().take()).unwrap();
        v.sort();
        v.dedup();
        v
    }

    fn run(id: &str, k: &Knobs, async_mode: bool) {
        let s = Scenario::build(id, k).unwrap_or_else(|e| panic!("{id}: {e}"));
        let mut r = s.start(async_mode, Clock::virtual_clock(), true).unwrap();
        r.run_to_end().unwrap_or_else(|e| panic!("{id}: {e}"));
    }

    fn preset_texts() -> Vec<String> {
        recording(|| {
            for s in SCENARIOS {
                for behaviour in [Preset::Pg15, Preset::Improved] {
                    for sharing in [None, Some(Sharing::Dedicated), Some(Sharing::Shared)] {
                        for limit in [None, Some(5)] {
                            let k = Knobs {
                                behaviour: Some(behaviour),
                                sharing,
                                limit,
                                offset: limit.map(|_| 3),
                                ..Default::default()
                            };
                            for async_mode in [false, true] {
                                if Scenario::build(s.id, &k).is_ok() {
                                    run(s.id, &k, async_mode);
                                }
                            }
                        }
                    }
                }
            }
        })
    }

    /// web/lessons/*.txt: each lesson's run, and with each knob it walks through on.
    const LESSON_FILES: [&str; 8] = [
        include_str!("../../web/lessons/AB.txt"),
        include_str!("../../web/lessons/C.txt"),
        include_str!("../../web/lessons/D.txt"),
        include_str!("../../web/lessons/E.txt"),
        include_str!("../../web/lessons/H.txt"),
        include_str!("../../web/lessons/M.txt"),
        include_str!("../../web/lessons/R.txt"),
        include_str!("../../web/lessons/X.txt"),
    ];

    fn lesson_texts() -> Vec<String> {
        recording(|| {
            for text in LESSON_FILES {
                let l = crate::demo::lesson::parse(text).unwrap();
                let k = l.scenario_knobs().unwrap();
                run(&l.scenario, &k, l.async_mode);
                for (knob, _) in &l.knob_walks {
                    let mut on = k.clone();
                    crate::knobs::set_text(&mut on, crate::knobs::Source::Json, knob, "true").unwrap();
                    run(&l.scenario, &on, l.async_mode);
                }
            }
        })
    }

    /// What the connection itself sends (postgres_fdw's connection.c and
    /// deparse.c's fixed statements), in every form the shard plans.
    const PROTOCOL: &[&str] = &[
        "SET search_path = pg_catalog",
        "SET timezone = 'GMT'",
        "SET datestyle = ISO",
        "SET intervalstyle = postgres",
        "SET extra_float_digits = 3",
        "START TRANSACTION ISOLATION LEVEL REPEATABLE READ",
        "START TRANSACTION ISOLATION LEVEL SERIALIZABLE",
        "COMMIT TRANSACTION",
        "ABORT TRANSACTION",
        "ROLLBACK TRANSACTION",
        "BEGIN",
        "COMMIT",
        "FETCH 100 FROM c1",
        "FETCH 100 FROM c1; FETCH 100 FROM c2",
        "CLOSE c1",
        "DEALLOCATE pgsql_fdw_prep_1",
        "DEALLOCATE ALL",
    ];

    /// Both parsers' reading of `sql`: the statements (None for ABORT) with their
    /// first tokens, or the error.
    type Reading = Result<Vec<Option<(Statement, TokenWithSpan)>>, SqlError>;

    fn read_both(sql: &str) -> (Reading, Reading) {
        let src = Source::tokenize(sql, &sqlparser::dialect::PostgreSqlDialect {}).unwrap();
        let flat = |r: Result<Vec<Parsed>, SqlError>| -> Reading {
            r.map(|v| {
                v.into_iter()
                    .map(|p| match p {
                        Parsed::Abort => None,
                        Parsed::Statement(st, first) => Some((*st, first)),
                    })
                    .collect()
            })
        };
        (flat(parse_statements(&src)), flat(super::super::parse_statements_with_sqlparser(&src)))
    }

    /// The small parser reads `sql` as sqlparser does: the same trees (PartialEq,
    /// which ignores spans) and the same Debug text (which shows them).
    fn assert_same(sql: &str) {
        let (small, full) = read_both(sql);
        let small = small.unwrap_or_else(|e| panic!("the page's shard parser refuses {sql:?}: {e}"));
        let full = full.unwrap_or_else(|e| panic!("sqlparser refuses {sql:?}: {e}"));
        assert_eq!(small, full, "{sql}");
        assert_eq!(format!("{small:?}"), format!("{full:?}"), "{sql}: spans");
        for (statement, _) in small.iter().flatten() {
            SPAN_NODES.with(|n| n.set(n.get() + assert_spans_as_sqlparser(statement)));
        }
    }

    thread_local! {
        /// Nodes whose `node_span` (the page's module's) was compared with sqlparser's.
        static SPAN_NODES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Every text a preset scenario's or a lesson's shards receive, and the
    /// protocol's statements, read by the page's shard parser exactly as sqlparser
    /// reads them: the page's first module runs them with it.
    #[test]
    fn the_page_shard_parser_reads_every_preset_and_lesson_as_sqlparser() {
        let presets = preset_texts();
        let lessons = lesson_texts();
        assert!(presets.len() >= 40 && lessons.len() >= 10, "{} {}", presets.len(), lessons.len());
        let mut n = 0;
        for sql in presets.iter().chain(&lessons).map(String::as_str).chain(PROTOCOL.iter().copied()) {
            assert_same(sql);
            n += 1;
        }
        println!(
            "{n} texts ({} presets, {} lessons, {} protocol) read alike",
            presets.len(),
            lessons.len(),
            PROTOCOL.len()
        );
        let nodes = SPAN_NODES.with(|n| n.get());
        println!("{nodes} nodes' spans (node_span) as sqlparser's");
        assert!(nodes >= 500, "the spans of the texts' nodes were compared: {nodes}");
    }

    /// Each piece of the grammar, read as sqlparser reads it (precedences, spans,
    /// every optional word).
    const GRAMMAR: &[&str] = &[
        "SELECT a, b FROM public.t1 WHERE ((a > 1)) AND ((b <= -2))",
        "SELECT r1.a FROM public.t1 r1 WHERE (r1.a = 1 OR r1.b <> 2 AND NOT r1.c IS NULL)",
        "SELECT a FROM public.t1 WHERE a >= 1 AND b < 2 OR c != 3 AND d IS NOT NULL",
        "SELECT count(*), sum(a), avg(b), min(c), max(d), count(DISTINCT a), count(ALL a) FROM public.t1 GROUP BY a, b HAVING ((sum(a) > 10))",
        "SELECT DISTINCT a FROM public.t1 ORDER BY a ASC NULLS LAST, b DESC, c NULLS FIRST LIMIT 10 OFFSET 5",
        "SELECT ALL a FROM public.t1 LIMIT (1 + 2)",
        "SELECT * FROM public.t1 FOR UPDATE",
        "SELECT a AS x, (a + b) * 2 - c / 3 % 4, -a * b, - - c, +d FROM public.t1 AS t WHERE a IS NOT NULL",
        "SELECT 'it''s', 1.5, 10, TRUE, FALSE, NULL FROM public.t1",
        "SELECT \"A\", \"T\".\"B\" FROM \"Public\".\"T1\" \"T\" WHERE \"A\" != 1",
        "SELECT f(), g(a, b + 1) FROM t1 WHERE NOT NOT a = 1",
        "SELECT a FROM public.t1\nWHERE\n  a = 1;\nFETCH 100 FROM c1",
        "DECLARE c2 SCROLL CURSOR WITH HOLD FOR SELECT a FROM public.t1",
        "DECLARE c3 NO SCROLL CURSOR WITHOUT HOLD FOR SELECT a FROM public.t1",
        "DECLARE c4 BINARY CURSOR FOR SELECT a FROM public.t1",
        "FETCH FORWARD 10 FROM c1",
        "FETCH FORWARD ALL FROM c1",
        "FETCH ALL IN c1",
        "FETCH NEXT FROM c1",
        "fetch 7 from C1",
        "BEGIN TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY",
        "BEGIN WORK",
        "START TRANSACTION ISOLATION LEVEL READ COMMITTED READ WRITE",
        "START TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
        "START TRANSACTION",
        "SET LOCAL search_path TO public, pg_catalog",
        "SET SESSION statement_timeout = 0",
        "SET a.b = -1",
        "ROLLBACK WORK",
        "COMMIT WORK",
        "ABORT",
        "ABORT WORK",
        "END",
        "END TRANSACTION",
        "DEALLOCATE PREPARE p1",
        "SET x = 1; SELECT a FROM public.t1;; CLOSE c1;",
        "",
        ";",
    ];

    /// Text sqlparser reads and this grammar does not: refused at the word where it
    /// stops, by name (not as a syntax error: it is valid SQL).
    const REFUSED: &[&str] = &[
        "SELECT CASE WHEN a > 1 THEN 1 END FROM public.t1",
        "SELECT a::text FROM public.t1",
        "SELECT a FROM public.t1 WHERE a IN (1, 2)",
        "SELECT a FROM public.t1 WHERE a NOT IN (1, 2)",
        "SELECT a FROM public.t1 WHERE a BETWEEN 1 AND 2",
        "SELECT a FROM public.t1 WHERE b LIKE 'x%'",
        "SELECT t1.* FROM public.t1",
        "SELECT a FROM (public.t1 r1 INNER JOIN public.t2 r2 ON (TRUE))",
        "SELECT a FROM public.t1 r1 INNER JOIN public.t2 r2 ON (TRUE)",
        "SELECT a FROM (SELECT a FROM public.t1) s",
        "SELECT date '2020-01-01' FROM public.t1",
        "SELECT sum(a) OVER () FROM public.t1",
        "SELECT count(*) FILTER (WHERE a > 1) FROM public.t1",
        "SELECT a FROM public.t1 WHERE a = ANY ('{1,2}'::integer[])",
        "SELECT a FROM public.t1 WHERE a = $1",
        "SELECT a FROM public.t1 WHERE EXISTS (SELECT 1 FROM public.t2)",
        "SELECT a FROM public.t1 WHERE a IS TRUE",
        "SELECT a FROM public.t1 UNION ALL SELECT a FROM public.t2",
        "SELECT DISTINCT ON (a) a FROM public.t1",
        "SELECT a b FROM public.t1",
        "SELECT a || b FROM public.t1",
        "SELECT a FROM public.t1 FOR UPDATE OF t1",
        "SELECT a FROM public.t1 LIMIT ALL",
        "SELECT a FROM public.t1 GROUP BY ALL",
        "SELECT a FROM public.t1 GROUP BY a, ROLLUP (a)",
        "SELECT a FROM public.t1 GROUP BY CUBE (a)",
        "SELECT a FROM public.t1 GROUP BY GROUPING SETS ((a))",
        "SELECT a FROM public.t1 WINDOW w AS ()",
        "SELECT a FROM public.t1, public.t2",
        "SELECT a FROM public.t1 LEFT JOIN public.t2 ON TRUE",
        "SELECT a FROM public.t1 WITH ORDINALITY",
        "SELECT a INTO t2 FROM public.t1",
        "SELECT a FROM public.t1 FOR SHARE",
        "SELECT a FROM public.t1 OFFSET 1 LIMIT 2",
        "SELECT a[1] FROM public.t1",
        "SELECT pg_catalog.count(*) FROM public.t1",
        "WITH x AS (SELECT 1) SELECT * FROM x",
        "SELECT 1",
        "INSERT INTO public.t1 (a) VALUES ($1)",
        "UPDATE public.t1 SET a = 1",
        "DELETE FROM public.t1",
        "SET TIME ZONE 'UTC'",
        "SET ROLE postgres",
        "CLOSE ALL",
        "FETCH PRIOR FROM c1",
        "FETCH 10 FROM c1 INTO x",
        "COMMIT AND CHAIN",
    ];

    /// Hostile nesting: the page's shard parser recurses once per parenthesis and
    /// prefix operator and has no recursion limit of its own, so what bounds it is
    /// `nesting::too_deep`, which `parse_shard_sql` runs first. The deepest texts that
    /// check lets through are read (or refused) on a 1 MiB stack, the wasm page's
    /// whole stack, in whatever build the tests run: no overflow. (Natively only: the
    /// stacks are threads', which wasm32 has not.)
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn the_page_shard_parser_survives_the_deepest_text_the_weight_check_lets_through() {
        use crate::shard_sql::nesting::{too_deep, MAX_WEIGHT};
        type Shape = fn(usize) -> String;
        let shapes: [(&str, Shape); 4] = [
            ("parentheses", |n| format!("SELECT a FROM public.t1 WHERE {}a = 1{}", "(".repeat(n), ")".repeat(n))),
            ("NOT", |n| format!("SELECT a FROM public.t1 WHERE {}a = 1", "NOT ".repeat(n))),
            ("unary minus", |n| format!("SELECT {}1 FROM public.t1", "- ".repeat(n))),
            ("mixed", |n| {
                format!("DECLARE c1 CURSOR FOR SELECT a FROM public.t1 WHERE {}a{}", "(-(".repeat(n), "))".repeat(n))
            }),
        ];
        std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                for (what, shape) in shapes {
                    let weight_ok = |n: usize| {
                        let sql = shape(n);
                        let src = Source::tokenize(&sql, &sqlparser::dialect::PostgreSqlDialect {}).unwrap();
                        too_deep(&src.tokens, MAX_WEIGHT).is_none()
                    };
                    // The largest n the weight check accepts (it weighs at least one per level).
                    let n = (1..=MAX_WEIGHT).take_while(|&n| weight_ok(n)).last();
                    let n = n.unwrap_or_else(|| panic!("{what}: even one level is too deep"));
                    assert!(n >= 50, "{what}: the weight check stops at {n}");
                    let sql = shape(n);
                    let read =
                        parse_statements(&Source::tokenize(&sql, &sqlparser::dialect::PostgreSqlDialect {}).unwrap());
                    println!("{what}: {n} levels, {}", if read.is_ok() { "read" } else { "refused" });
                }
            })
            .unwrap()
            .join()
            .expect("the page's shard parser overflowed a 1 MiB stack");
        // Where sqlparser's recursion limit refuses, this parser refuses alike (on a roomy
        // stack: sqlparser's own debug frames need more than 1 MiB at its limit).
        std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn(move || {
                for (what, shape) in shapes {
                    for depth in 1..40 {
                        let (small, full) = read_both(&shape(depth));
                        match (&small, &full) {
                            (Ok(a), Ok(b)) => assert_eq!(a, b, "{what} {depth}"),
                            (Err(a), Err(b)) if b.message == "stack depth limit exceeded" => {
                                assert_eq!(a, b, "{what} {depth}")
                            }
                            _ => assert!(full.is_ok() || small.is_err(), "{what} {depth}: {small:?} / {full:?}"),
                        }
                    }
                }
            })
            .unwrap()
            .join()
            .unwrap();
    }

    /// A SQL function's body (`inline::plan_body`) read as sqlparser's `parse_expr`
    /// reads it.
    #[test]
    fn the_page_shard_parser_reads_function_bodies_as_sqlparser() {
        for body in ["\"$1\" + 1", "(\"$1\" * 2) - \"$2\" % 3", "\"$1\" IS NULL OR NOT \"$2\" > 0", "abs(\"$1\")"] {
            let src = Source::tokenize(body, &sqlparser::dialect::PostgreSqlDialect {}).unwrap();
            let small = super::parse_expression(&src).unwrap();
            let full = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
                .with_tokens_with_locations(src.tokens.clone())
                .parse_expr()
                .unwrap();
            assert_eq!(format!("{small:?}"), format!("{full:?}"), "{body}");
            let mut nodes = 0;
            crate::shard_sql::node_span::tests::expr(&small, &mut nodes);
            assert!(nodes > 1, "{body}: its spans compared with sqlparser's");
        }
        let src = Source::tokenize("\"$1\" + 1 2", &sqlparser::dialect::PostgreSqlDialect {}).unwrap();
        assert!(super::parse_expression(&src).is_err(), "text after the expression is refused");
    }

    /// Text both refuse with the same error: statements a shard does not run (by
    /// name), and words no statement starts with (PostgreSQL's syntax error).
    const SAME_ERROR: &[&str] = &["EXPLAIN SELECT a FROM public.t1", "VACUUM", "SELEC 1", "1", "SET x = 1; LOCK t"];

    #[test]
    fn the_page_shard_parser_reads_its_grammar_as_sqlparser_and_refuses_the_rest_by_name() {
        for sql in SAME_ERROR {
            let (small, full) = read_both(sql);
            assert!(small.is_err(), "{sql}");
            assert_eq!(small.err(), full.err(), "{sql}");
        }
        for sql in GRAMMAR {
            assert_same(sql);
        }
        for sql in REFUSED {
            let (small, full) = read_both(sql);
            assert!(full.is_ok(), "{sql}: sqlparser reads it: {full:?}");
            let e = small.expect_err(sql);
            assert!(e.message.starts_with("unsupported in the page's shard parser: the text at"), "{sql}: {e}");
            assert!(e.position.is_some(), "{sql}: {e}");
        }
    }

    /// The scenario files' shard SQL (the SQL editor's module sends it, with
    /// sqlparser as the shard's parser): where the page's shard parser reads a text,
    /// it reads it as sqlparser does; where it does not, it refuses it by name, never
    /// reads it otherwise.
    /// (With the `sql` feature only: without it the shards of a scenario file's run
    /// would parse with this parser, which refuses some of what they are sent.)
    #[cfg(feature = "sql")]
    #[test]
    fn the_page_shard_parser_reads_scenario_files_as_sqlparser_or_refuses_them() {
        use crate::coordinator_sql::script::SCENARIO_FILES;
        use crate::coordinator_sql::SqlScenario;
        let texts = recording(|| {
            for (id, text) in SCENARIO_FILES {
                let sql = SqlScenario::load(text).unwrap_or_else(|e| panic!("{id}: {e:?}"));
                let s = sql.scenario(&Knobs::default(), crate::knobs::Source::Json).unwrap();
                let mut r = s.start(true, Clock::virtual_clock(), false).unwrap();
                r.run_to_end().unwrap_or_else(|e| panic!("{id}: {e}"));
            }
        });
        let (mut read, mut refused) = (0, 0);
        for sql in &texts {
            match read_both(sql) {
                (Ok(_), _) => {
                    assert_same(sql);
                    read += 1;
                }
                (Err(e), _) => {
                    assert!(e.message.starts_with("unsupported in the page's shard parser: the text at"), "{sql}: {e}");
                    refused += 1;
                }
            }
        }
        assert!(read >= 10 && refused >= 1, "{read} read, {refused} refused");
        println!("scenario files: {} texts, {read} read alike, {refused} refused by name", texts.len());
    }
}
