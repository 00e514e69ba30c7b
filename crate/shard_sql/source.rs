//! The SQL text and its tokens, used to report PostgreSQL-style error positions.
//!
//! sqlparser reports locations as line/column pairs (both 1-based, counted in
//! characters); PostgreSQL reports a single 1-based character offset into the query
//! string. The tokens are kept so that errors can point at keywords the AST does not
//! record a span for (`DISTINCT`, `JOIN`, `UNION`, an operator, ...).
//!
//! Invariants:
//! - A position is a 1-based character (not byte) offset into the whole text, so a
//!   multi-byte character before an error moves it by one, as in PostgreSQL.
//! - A search for a keyword stops at the statement's `;`: an error never points into
//!   the next statement.
//! - An error at the end of input points just past the last character, as
//!   PostgreSQL's "at end of input" does; sqlparser's "Expected: …, found: X" becomes
//!   PostgreSQL's `syntax error at or near "X"`.
//!
//! Where it departs from PostgreSQL: `scanner_errposition` and `parser_errposition`
//! get positions from the scanner's byte offsets (converted to characters when
//! reported); here they come from sqlparser's line/column and from the tokens kept.

use sqlparser::dialect::Dialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::ParserError;
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Tokenizer};

use super::SqlError;

pub(super) struct Source<'a> {
    sql: &'a str,
    pub(super) tokens: Vec<TokenWithSpan>,
    /// 0-based character offset at which each line starts (line 1 is index 0).
    line_starts: Vec<usize>,
    nchars: usize,
}

impl<'a> Source<'a> {
    /// Tokenizes `sql` the way `Parser::try_with_sql` does, keeping the tokens.
    pub(super) fn tokenize(sql: &'a str, dialect: &dyn Dialect) -> Result<Source<'a>, SqlError> {
        let mut line_starts = vec![0];
        let mut nchars = 0;
        for c in sql.chars() {
            nchars += 1;
            if c == '\n' {
                line_starts.push(nchars);
            }
        }
        let mut src = Source { sql, tokens: Vec::new(), line_starts, nchars };
        match Tokenizer::new(dialect, sql).with_unescape(true).tokenize_with_location() {
            // PostgreSQL's operators (`===`: one token; `super::operator_tokens`).
            Ok(tokens) => src.tokens = super::operator_tokens::merge_operators(sql, tokens),
            Err(e) => {
                let position = src.position(e.location);
                return Err(SqlError::new(format!("syntax error: {}", e.message), position));
            }
        }
        Ok(src)
    }

    /// 1-based character offset of a sqlparser location; None for the empty location
    /// sqlparser uses when it does not know where a node is.
    pub(super) fn position(&self, loc: Location) -> Option<usize> {
        if loc.line == 0 || loc.column == 0 {
            return None;
        }
        let line_start = *self.line_starts.get(loc.line as usize - 1)?;
        Some(line_start + loc.column as usize)
    }

    pub(super) fn span_position(&self, span: Span) -> Option<usize> {
        self.position(span.start)
    }

    /// The text of item `k` of the list after `keyword` in the statement whose first
    /// token is at character `at` (`RETURNING a, b + 1`: item 1 is `b + 1`), split at
    /// commas outside parentheses, up to the statement's `;` (`tokens_from`): an item
    /// named in an error as the query wrote it.
    /// Neither sqlparser's printer (its whole `Display` tree, ~80 KB of code, would come
    /// into the page's module) nor the item's span (a literal has none: `'x' || a` would
    /// start at `a`).
    pub(super) fn list_item_text(&self, at: Option<usize>, keyword: Keyword, k: usize) -> Option<&'a str> {
        let first = self.tokens.iter().find(|t| at.is_some() && self.position(t.span.start) == at)?;
        let after = self
            .tokens_from(first.span.start)
            .skip_while(|t| !matches!(&t.token, Token::Word(w) if w.keyword == keyword))
            .skip(1);
        let (mut depth, mut item, mut span) = (0usize, 0usize, None::<(Location, Location)>);
        for t in after {
            match t.token {
                Token::Comma if depth == 0 => {
                    if item == k {
                        break;
                    }
                    item += 1;
                    continue;
                }
                Token::LParen | Token::LBracket => depth += 1,
                Token::RParen | Token::RBracket => depth = depth.saturating_sub(1),
                _ => {}
            }
            if item == k {
                span = Some((span.map_or(t.span.start, |s| s.0), t.span.end));
            }
        }
        let (from, to) = span?;
        let (from, to) = (self.position(from)? - 1, self.position(to)? - 1);
        let byte = |chars: usize| self.sql.char_indices().nth(chars).map_or(self.sql.len(), |(b, _)| b);
        self.sql.get(byte(from)..byte(to))
    }

    /// PostgreSQL reports "at end of input" errors just past the last character.
    pub(super) fn end_position(&self) -> usize {
        self.nchars + 1
    }

    /// The tokens (not whitespace) starting at or after `from`, up to the end of the
    /// statement containing `from` (the search stops at `;`).
    fn tokens_from(&self, from: Location) -> impl Iterator<Item = &TokenWithSpan> {
        self.tokens
            .iter()
            .filter(move |t| t.span.start >= from)
            .filter(|t| !matches!(t.token, Token::Whitespace(_)))
            .take_while(|t| t.token != Token::SemiColon)
    }

    /// Position of the first token at or after `from` satisfying `pred`, in the same
    /// statement. Used to point errors at keywords the AST keeps no span for.
    pub(super) fn find_token(&self, from: Location, pred: impl Fn(&Token) -> bool) -> Option<usize> {
        let t = self.tokens_from(from).find(|t| pred(&t.token))?;
        self.position(t.span.start)
    }

    /// Position of the first of `keywords` at or after `from`, in the same statement.
    pub(super) fn find_keyword(&self, from: Location, keywords: &[Keyword]) -> Option<usize> {
        self.find_token(from, |t| matches!(t, Token::Word(w) if keywords.contains(&w.keyword)))
    }

    /// Position of the first token at or after `from` (e.g. the operator after a
    /// binary expression's left operand).
    pub(super) fn next_token_position(&self, from: Location) -> Option<usize> {
        self.find_token(from, |_| true)
    }

    /// The original text of the token starting at `loc`, if there is one.
    fn token_text_at(&self, loc: Location) -> Option<String> {
        let token = self.tokens.iter().find(|t| t.span.start == loc)?;
        let start = self.position(token.span.start)? - 1;
        let end = self.position(token.span.end)? - 1;
        Some(self.sql.chars().skip(start).take(end.saturating_sub(start)).collect())
    }

    /// `syntax error at or near "<token>"` pointing at `token`, as PostgreSQL words it.
    pub(super) fn syntax_error_at(&self, token: &TokenWithSpan) -> SqlError {
        if token.token == Token::EOF {
            return SqlError::new("syntax error at end of input", Some(self.end_position()));
        }
        let text = self.token_text_at(token.span.start).unwrap_or_else(|| token.token.to_string());
        SqlError::new(format!("syntax error at or near \"{text}\""), self.position(token.span.start))
    }

    /// Converts a sqlparser error. Its messages end with " at Line: L, Column: C"
    /// (absent when the offending token is the end of input), and "Expected: ..., found:
    /// TOKEN" messages are reworded as PostgreSQL's "syntax error at or near".
    pub(super) fn parser_error(&self, e: ParserError) -> SqlError {
        let message = match e {
            ParserError::ParserError(m) | ParserError::TokenizerError(m) => m,
            ParserError::RecursionLimitExceeded => {
                return SqlError::new("stack depth limit exceeded", None);
            }
        };
        let (text, loc) = split_location(&message);
        match (text.rsplit_once("found: "), loc) {
            (Some((_, "EOF")), _) => SqlError::new("syntax error at end of input", Some(self.end_position())),
            (Some((_, found)), Some(loc)) => {
                let near = self.token_text_at(loc).unwrap_or_else(|| found.to_string());
                SqlError::new(format!("syntax error at or near \"{near}\""), self.position(loc))
            }
            (Some((_, found)), None) => SqlError::new(format!("syntax error at or near \"{found}\""), None),
            (None, loc) => SqlError::new(format!("syntax error: {text}"), loc.and_then(|l| self.position(l))),
        }
    }
}

/// Splits sqlparser's " at Line: L, Column: C" suffix off a message.
fn split_location(message: &str) -> (&str, Option<Location>) {
    let Some((text, rest)) = message.rsplit_once(" at Line: ") else {
        return (message, None);
    };
    let Some((line, column)) = rest.split_once(", Column: ") else {
        return (message, None);
    };
    match (line.trim().parse(), column.trim().parse()) {
        (Ok(line), Ok(column)) => (text, Some(Location::new(line, column))),
        _ => (message, None),
    }
}
