//! The statements of a Query message's text, one by one, as the shard's SQL front end
//! sees them (the same sqlparser tokenizer, split at `;`), with what the front end does
//! not keep: the command tag of a transaction start (`BEGIN` or `START TRANSACTION`),
//! the name and value of a SET, and whether a statement ends a transaction (the only
//! kind PostgreSQL runs in a failed transaction).
//!
//! Invariants:
//! - Pieces are in text order and `char_start + position in the piece` is a position
//!   in the whole Query text, so an error inside the third statement points where
//!   PostgreSQL points (its `stmt_location` plays this part).
//! - Splitting uses the front end's tokenizer and dialect, so a `;` inside a string,
//!   a quoted identifier or a comment never splits a statement, and a piece is exactly
//!   what `shard_sql` will parse.
//! - Empty statements are left out; a text the tokenizer rejects gives no pieces, so
//!   the front end, not this file, reports the error.
//! - `statement_info` looks only at the first token, unquoted: `"commit"` (a quoted
//!   identifier) is not a COMMIT.
//!
//! Where it departs from PostgreSQL: `pg_parse_query` (postgres.c) gets statement
//! boundaries and kinds from the grammar's raw parse trees, and `IsTransactionExitStmt`
//! and the command tag from the node type; here they come from tokens, which is enough
//! for the statements the shard accepts (`shard_sql`).

use super::guc::{parse_set, SetCommand};
use crate::shard_sql::SqlError;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, Tokenizer};

/// One statement of a query text.
#[derive(Clone, Debug)]
pub struct Piece {
    /// From its first token to its `;` (or the end).
    pub text: String,
    /// Characters of the query before `text`: a position in `text` plus this is a
    /// position in the query.
    pub char_start: usize,
    /// Its tokens, whitespace and comments left out.
    pub tokens: Vec<Token>,
}

/// What the server needs to know of a statement beyond the front end's plan.
#[derive(Clone, Debug, PartialEq)]
pub struct StmtInfo {
    /// The command tag of a transaction start.
    pub begin_tag: &'static str,
    /// The SET, if the statement is one.
    pub set: Option<SetCommand>,
    /// COMMIT, END, ROLLBACK or ABORT (PostgreSQL's `IsTransactionExitStmt`).
    pub is_exit: bool,
}

impl Default for StmtInfo {
    fn default() -> Self {
        StmtInfo { begin_tag: "BEGIN", set: None, is_exit: false }
    }
}

/// Splits `sql` into statements; empty statements (`;;`, comments) are left out, as
/// the front end leaves them out. A text the tokenizer rejects gives no pieces (the
/// front end reports the error).
pub fn split_statements(sql: &str) -> Vec<Piece> {
    let Ok(tokens) = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize_with_location() else {
        return Vec::new();
    };
    let index = CharIndex::new(sql);
    let mut pieces = Vec::new();
    let mut current: Option<(usize, Vec<Token>)> = None;
    for t in tokens {
        match t.token {
            Token::Whitespace(_) => {}
            Token::SemiColon => {
                if let Some((start, toks)) = current.take() {
                    pieces.push(index.piece(start, index.char_at(t.span.start), toks));
                }
            }
            token => current.get_or_insert_with(|| (index.char_at(t.span.start), Vec::new())).1.push(token),
        }
    }
    if let Some((start, toks)) = current {
        pieces.push(index.piece(start, index.chars(), toks));
    }
    pieces
}

/// Maps the tokenizer's (line, column) locations to character and byte offsets.
#[derive(Clone)]
struct CharIndex<'a> {
    sql: &'a str,
    /// Byte offset of every character, and of the end.
    bytes: Vec<usize>,
    /// Character offset of every line's start.
    lines: Vec<usize>,
}

impl<'a> CharIndex<'a> {
    fn new(sql: &'a str) -> CharIndex<'a> {
        let mut bytes: Vec<usize> = sql.char_indices().map(|(b, _)| b).collect();
        bytes.push(sql.len());
        let newlines = sql.chars().enumerate().filter(|(_, c)| *c == '\n').map(|(i, _)| i + 1);
        let lines = std::iter::once(0).chain(newlines).collect();
        CharIndex { sql, bytes, lines }
    }

    fn chars(&self) -> usize {
        self.bytes.len() - 1
    }

    fn char_at(&self, loc: Location) -> usize {
        let line = self.lines.get((loc.line as usize).saturating_sub(1)).copied().unwrap_or(0);
        (line + (loc.column as usize).saturating_sub(1)).min(self.chars())
    }

    fn piece(&self, start: usize, end: usize, tokens: Vec<Token>) -> Piece {
        let (a, b) = (self.bytes[start.min(end)], self.bytes[end]);
        Piece { text: self.sql[a..b].to_string(), char_start: start, tokens }
    }
}

/// The extra facts of a statement, from its tokens.
pub fn statement_info(tokens: &[Token]) -> StmtInfo {
    let first = match tokens.first() {
        Some(Token::Word(w)) if w.quote_style.is_none() => w.keyword,
        _ => Keyword::NoKeyword,
    };
    StmtInfo {
        begin_tag: if first == Keyword::START { "START TRANSACTION" } else { "BEGIN" },
        set: if first == Keyword::SET { parse_set(tokens) } else { None },
        is_exit: matches!(first, Keyword::COMMIT | Keyword::END | Keyword::ROLLBACK | Keyword::ABORT),
    }
}

/// A syntax error makes PostgreSQL reject a whole Query message before running any of
/// its statements (and before logging it); other errors stop at their statement.
pub fn is_syntax_error(e: &SqlError) -> bool {
    e.message.starts_with("syntax error") || e.message == "stack depth limit exceeded"
}
