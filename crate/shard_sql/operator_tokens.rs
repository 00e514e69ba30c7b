//! Operator tokens as PostgreSQL's lexer reads them (scan.l, the `{operator}` rule):
//! the longest run of operator characters `+ - * / < > = ~ ! @ # % ^ & | ` ?` is one
//! operator, so `a === b` is `a`, `===`, `b`. sqlparser's tokenizer reads `===` as
//! `==` then `=` (and `<=>`, `!==` likewise as several tokens); [`merge_operators`]
//! joins such touching tokens back into one, which sqlparser's parser takes as a
//! custom operator (`BinaryOperator::Custom`).
//!
//! scan.l's rule for a run that ends in `+` or `-`: unless the run holds one of
//! `~ ! @ # % ^ & | ` ?`, the trailing `+`/`-` characters are not part of the
//! operator (`a=-1` is `a`, `=`, `-`, `1`). A run that is one of sqlparser's own
//! tokens is left as it is.
//!
//! Invariants: only touching operator tokens change (joined, or a run re-cut where
//! scan.l cuts it), read from their source text (sqlparser prints `!=` as `<>`); each
//! new token spans exactly its characters; whitespace or a comment between two
//! operator tokens keeps them apart, as in PostgreSQL.

use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Tokenizer};

const OP_CHARS: &str = "+-*/<>=~!@#%^&|`?";
/// scan.l's characters that let an operator end in `+` or `-`.
const KEEP_SIGN: &str = "~!@#%^&|`?";

/// Byte offsets of sqlparser locations (1-based line and character column) in the
/// text, met mostly in order: the walk goes on from the last one, so a whole text
/// costs one pass.
struct Cursor<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
    at: (u64, u64, usize),
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Cursor<'a> {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Cursor { text, line_starts, at: (1, 1, 0) }
    }

    fn byte(&mut self, loc: Location) -> Option<usize> {
        if loc.line == 0 || loc.column == 0 {
            return None;
        }
        if (loc.line, loc.column) < (self.at.0, self.at.1) || loc.line != self.at.0 {
            let start = *self.line_starts.get(loc.line as usize - 1)?;
            self.at = (loc.line, 1, start);
        }
        while self.at.1 < loc.column {
            let c = self.text[self.at.2..].chars().next()?;
            if c == '\n' {
                return None;
            }
            self.at = (self.at.0, self.at.1 + 1, self.at.2 + c.len_utf8());
        }
        Some(self.at.2)
    }

    /// The source text of a token on one line.
    fn slice(&mut self, span: Span) -> Option<&'a str> {
        if span.start.line != span.end.line {
            return None;
        }
        let start = self.byte(span.start)?;
        let end = self.byte(span.end)?;
        self.text.get(start..end)
    }
}

/// Joins touching operator tokens of `sql` into PostgreSQL's operators, and splits a
/// trailing sign off one (see the module doc).
pub fn merge_operators(sql: &str, tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut cursor = Cursor::new(sql);
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    // The run of touching operator tokens, with their source text.
    let mut run: Vec<(TokenWithSpan, String)> = Vec::new();
    for t in tokens {
        let display = t.token.to_string();
        let is_op = !display.is_empty() && display.chars().all(|c| OP_CHARS.contains(c));
        let text = if is_op { cursor.slice(t.span).filter(|s| s.chars().all(|c| OP_CHARS.contains(c))) } else { None };
        let Some(text) = text else {
            flush(&mut run, &mut out);
            out.push(t);
            continue;
        };
        let touches = run.last().is_some_and(|(last, _)| last.span.end == t.span.start);
        if !touches {
            flush(&mut run, &mut out);
        }
        run.push((t, text.to_string()));
    }
    flush(&mut run, &mut out);
    out
}

/// Emits a run of touching operator tokens as scan.l reads their text: operator
/// after operator, each one token.
fn flush(run: &mut Vec<(TokenWithSpan, String)>, out: &mut Vec<TokenWithSpan>) {
    let run = std::mem::take(run);
    let Some((first, first_text)) = run.first() else { return };
    let whole: String = run.iter().map(|(_, s)| s.as_str()).collect();
    if run.len() == 1 && operator_length(&whole) == whole.chars().count() && first.token.to_string() == *first_text {
        out.push(first.clone());
        return;
    }
    let (line, mut column) = (first.span.start.line, first.span.start.column);
    let mut rest: &str = &whole;
    while !rest.is_empty() {
        let n = operator_length(rest).max(1);
        let end = rest.char_indices().nth(n).map_or(rest.len(), |(i, _)| i);
        let op = &rest[..end];
        let span = Span::new(Location::new(line, column), Location::new(line, column + n as u64));
        out.push(TokenWithSpan::new(operator_token(op), span));
        column += n as u64;
        rest = &rest[end..];
    }
}

/// The token of one operator: sqlparser's own where it has one (`>=`, `<>`, `-`), a
/// custom operator otherwise (`===`).
fn operator_token(op: &str) -> Token {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, op).tokenize().unwrap_or_default();
    match tokens.as_slice() {
        [t] if t.to_string() == op || matches!(t, Token::Neq) => t.clone(),
        _ => Token::CustomBinaryOperator(op.to_string()),
    }
}

/// The length in characters of the operator scan.l reads at the start of `run`.
fn operator_length(run: &str) -> usize {
    let chars: Vec<char> = run.chars().collect();
    // A comment start ends the operator.
    let mut n = chars.len();
    for i in 0..chars.len().saturating_sub(1) {
        if (chars[i] == '/' && chars[i + 1] == '*') || (chars[i] == '-' && chars[i + 1] == '-') {
            n = i;
            break;
        }
    }
    if n > 1 && !chars[..n].iter().any(|c| KEEP_SIGN.contains(*c)) {
        while n > 1 && matches!(chars[n - 1], '+' | '-') {
            n -= 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(sql: &str) -> Vec<String> {
        let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize_with_location().unwrap();
        merge_operators(sql, tokens)
            .into_iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_)))
            .map(|t| t.token.to_string())
            .collect()
    }

    #[test]
    fn touching_operator_characters_are_one_operator() {
        assert_eq!(lex("a === b"), ["a", "===", "b"]);
        assert_eq!(lex("a!==b"), ["a", "!==", "b"]);
        assert_eq!(lex("a!=b"), ["a", "<>", "b"]);
        assert_eq!(lex("OPERATOR(public.===)"), ["OPERATOR", "(", "public", ".", "===", ")"]);
    }

    #[test]
    fn a_trailing_sign_is_an_operand_and_spaces_separate() {
        assert_eq!(lex("a=-1"), ["a", "=", "-", "1"]);
        assert_eq!(lex("a>=-1"), ["a", ">=", "-", "1"]);
        assert_eq!(lex("a = = b"), ["a", "=", "=", "b"]);
        assert_eq!(lex("a <> b"), ["a", "<>", "b"]);
        assert_eq!(lex("a @- b"), ["a", "@-", "b"]);
        // sqlparser reads `>=-` as one operator; PostgreSQL as `>=` and a sign.
        assert_eq!(lex("x<-1 and y=-1"), ["x", "<", "-", "1", "and", "y", "=", "-", "1"]);
    }
}
