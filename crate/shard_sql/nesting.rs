//! How deeply a SQL text nests, measured on its tokens before sqlparser builds a tree.
//!
//! sqlparser bounds its own recursion (50 levels: parentheses, prefix operators,
//! subqueries), but it builds chains of left-associative operators (`1+1+…+1`, `a ||
//! b || …`, `x AND y AND …`, `::int::int…`, `UNION ALL …`) in a loop, as a tree as
//! deep as the chain is long; everything that then walks that tree recurses — its
//! spans, our evaluator and planner, `Display`, `Clone`, even dropping it — and a
//! few thousand terms overflow a thread's stack (the process aborts: no panic to
//! catch). So the depth is bounded here, iteratively, before parsing: a text
//! heavier than the limit is refused at the token where it passes it, and nothing
//! deep is ever built.
//!
//! # The weight (an upper bound of the tree's depth)
//! * Within one pair of brackets (`()`, `[]`, `{}`; the statement itself is the
//!   outermost), the comma-separated items are siblings in every tree sqlparser
//!   builds (select lists, VALUES rows, arguments, columns): no operator chain spans
//!   a comma. An item weighs one per token of its own (an opening bracket is one of
//!   them) plus the heaviest bracketed list it holds.
//! * A list weighs its heaviest item plus its set operators (`UNION`, `INTERSECT`,
//!   `EXCEPT`), which do chain across commas (`select a, b union all select c, d …`).
//! * A statement (up to a `;` outside brackets) weighs its outermost list.
//!
//! Every level of sqlparser's trees consumes at least one token of its own level,
//! or opens a bracket, so a tree is never deeper than its text's weight (plus a few
//! fixed levels per query). Weights are computed in one pass with a stack of open
//! lists, the path's weight kept as a running sum: the check costs O(1) per token.
//!
//! What sqlparser does build recursively (parentheses, prefix operators, CASE,
//! function calls, subqueries) it bounds itself, with the limit we give it,
//! [`MAX_RECURSION`]. Both refusals read the same within a front end: "stack depth
//! limit exceeded" on a shard (PostgreSQL's words, from `check_stack_depth`), and the
//! coordinator's "statement nested too deeply" ([`message`]).
//!
//! Invariants:
//! - A tree is never deeper than its text's weight plus a few fixed levels (the
//!   argument above), so a text under [`MAX_WEIGHT`] cannot overflow the stack of any
//!   walk of its tree: the process abort this module exists to prevent.
//! - The check itself never recurses and costs O(1) per token, so the refusal of a
//!   hostile text is as cheap as reading it.
//! - Both front ends (`shard_sql`, `coordinator_sql`) check with the same two limits
//!   before they parse.
//!
//! Where it departs from PostgreSQL: PostgreSQL's grammar is a bison LALR parser that
//! builds left-associative chains without recursing, and its walks check
//! `check_stack_depth()` against `max_stack_depth` (2 MB by default) as they go; here
//! the depth is bounded up front, in tokens, because a Rust stack overflow cannot be
//! caught.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan};

/// The heaviest statement accepted. The scenario files and the corpus weigh at most
/// 69, a join of seven relations (tests/suite/sql_bounds.rs checks the margin); at this limit every walk of the
/// deepest trees fits in 1 MiB of stack in a debug build (the wasm page's whole
/// stack; tests/suite/sql_bounds.rs runs them there), and the walks' quadratic span
/// computations stay cheap.
pub const MAX_WEIGHT: usize = 256;

/// sqlparser's own recursion limit (parentheses, prefix operators, CASE, function
/// calls, subqueries), lowered from its default 50: in a debug build a level takes up
/// to ~36 KB of stack (its `parse_prefix`), so 50 levels would not fit in 1 MiB. The
/// scenario files and the corpus need at most 5.
pub const MAX_RECURSION: usize = 20;

/// One open bracketed list (or the statement): the item being read and the heaviest
/// before it.
#[derive(Clone, Copy, Default)]
struct List {
    /// Tokens of the current item at this level (opening brackets included).
    item: usize,
    /// The heaviest list closed within the current item.
    inner: usize,
    /// The heaviest finished item.
    best: usize,
    /// Set operators at this level (not reset by commas).
    set_ops: usize,
}

impl List {
    fn weight(&self) -> usize {
        self.set_ops + self.best.max(self.item + self.inner)
    }
}

/// The weights of the lists open at one point of the text, and of the path to it.
struct Scan {
    open: Vec<List>,
    /// Σ (item + set_ops) over the open lists: with the innermost's `inner`, a lower
    /// bound of the statement's weight that reaches it at the token that decides it.
    path: usize,
}

impl Scan {
    fn new() -> Scan {
        Scan { open: vec![List::default()], path: 0 }
    }

    fn top(&mut self) -> &mut List {
        self.open.last_mut().expect("the statement's list is never closed")
    }

    /// The weight known so far along the open path.
    fn known(&self) -> usize {
        self.path + self.open.last().map_or(0, |l| l.inner)
    }

    fn token(&mut self, t: &Token) {
        match t {
            Token::Whitespace(_) => {}
            Token::SemiColon if self.open.len() == 1 => *self = Scan::new(),
            Token::Comma => {
                let top = self.top();
                let done = top.item;
                top.best = top.best.max(top.item + top.inner);
                (top.item, top.inner) = (0, 0);
                self.path -= done;
            }
            Token::LParen | Token::LBracket | Token::LBrace => {
                self.top().item += 1;
                self.path += 1;
                self.open.push(List::default());
            }
            Token::RParen | Token::RBracket | Token::RBrace if self.open.len() > 1 => {
                let closed = self.open.pop().expect("more than one open");
                self.path -= closed.item + closed.set_ops;
                let top = self.top();
                top.inner = top.inner.max(closed.weight());
            }
            Token::Word(w) if matches!(w.keyword, Keyword::UNION | Keyword::INTERSECT | Keyword::EXCEPT) => {
                self.top().set_ops += 1;
                self.path += 1;
            }
            _ => {
                self.top().item += 1;
                self.path += 1;
            }
        }
    }
}

/// The first token at which a statement of `tokens` weighs more than `limit`, if one
/// does.
pub fn too_deep(tokens: &[TokenWithSpan], limit: usize) -> Option<Location> {
    let mut scan = Scan::new();
    for t in tokens {
        scan.token(&t.token);
        if scan.known() > limit {
            return Some(t.span.start);
        }
    }
    None
}

/// The heaviest statement of `tokens` (tests measure the margin of real files).
pub fn weight(tokens: &[TokenWithSpan]) -> usize {
    let mut scan = Scan::new();
    let mut most = 0;
    for t in tokens {
        scan.token(&t.token);
        most = most.max(scan.known());
    }
    most
}

/// The message for a text over the limit.
pub fn message(limit: usize) -> String {
    format!(
        "statement nested too deeply: more than {limit} tokens in one chain of operators, parentheses and set \
         operations (split the expression, or insert rows with generate_series)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn tokens(sql: &str) -> Vec<TokenWithSpan> {
        Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize_with_location().unwrap()
    }

    fn weigh(sql: &str) -> usize {
        weight(&tokens(sql))
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn chains_weigh_their_length() {
        let chain = |n: usize, op: &str| vec!["1"; n].join(op);
        assert_eq!(weigh(&chain(10, "+")), 19);
        assert_eq!(weigh(&format!("select {}", chain(10, " and "))), 20);
        // Commas separate siblings: a long list is light.
        assert_eq!(weigh(&format!("values ({})", chain(1000, ", "))), 3);
        // Set operations chain across the select lists' commas.
        let union = vec!["select 1, 2"; 50].join(" union all ");
        assert_eq!(weigh(&union), 49 + 4, "49 UNIONs, and `2 all select 1`");
        // Brackets nest; each level weighs at least two (the bracket and what it holds).
        let parens = format!("{}1{}", "(".repeat(40), ")".repeat(40));
        assert_eq!(weigh(&parens), 41);
        assert_eq!(weigh(&format!("x{}", "[1]".repeat(30))), 1 + 30 + 1);
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn an_inner_list_adds_to_its_item_wherever_it_is() {
        // The heavy list first, the long item around it after: both count.
        let text = format!("f(({}) {})", "1+".repeat(20) + "1", "+ 1".repeat(30));
        assert_eq!(weigh(&text), 2 + (1 + 60) + 41);
        // Statements are weighed one at a time.
        assert_eq!(weigh(&format!("{}; select 1", "1+".repeat(50) + "1")), 101);
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn the_first_token_over_the_limit_is_named() {
        let sql = format!("select {}", vec!["1"; 100].join("+"));
        let at = too_deep(&tokens(&sql), 50).expect("over 50");
        // `select` then 1 + 1 + …: the 51st token passes 50; it is the chain's 50th
        // token, at column 8 + 49.
        assert_eq!((at.line, at.column), (1, 8 + 49));
        assert_eq!(too_deep(&tokens(&sql), 1000), None);
        // A million open parentheses: refused at the limit's, not after reading them all.
        let deep = "(".repeat(1_000_000);
        let at = too_deep(&tokens(&deep), 100).unwrap();
        assert_eq!(at.column, 101);
        // Unbalanced closers do not underflow.
        assert_eq!(too_deep(&tokens(")))) select 1;)"), 10), None);
    }
}
