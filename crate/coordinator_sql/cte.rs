//! `WITH` in the query section: common table expressions, read (`parse_with`) and
//! planned (`plan_with`) as PostgreSQL 15 plans them (parse_cte.c's
//! `transformWithClause`, subselect.c's `SS_process_ctes`, nodeCtescan.c at run time:
//! `executor::node_ctescan`).
//!
//! The rules, PostgreSQL's:
//! - a CTE is a SELECT, an INSERT, an UPDATE or a DELETE; so is the statement after
//!   WITH;
//! - a data-modifying CTE is always planned, as a subplan (`CTE name`), and run to its
//!   end even when the query reads none or part of its rows (ExecPostprocessPlan); a
//!   query that reads it needs its RETURNING;
//! - a SELECT CTE that the query does not read is dropped; one read once and not
//!   MATERIALIZED is inlined as a subquery in FROM (`inline_cte`); one read more than
//!   once (and not NOT MATERIALIZED) or MATERIALIZED is a subplan read by CTE Scans;
//! - the subplans are numbered first, in WITH's order (`CTE t` is plan 1), and
//!   attached to the query's top node; each CTE Scan costs `cpu_tuple_cost` a row of
//!   its CTE's estimate (`cost_ctescan`).
//!
//! How the query over a CTE is planned here: the CTE stands in the catalog as a table
//! of its columns while the statement after WITH is planned as any other (joins,
//! aggregates, INSERT … SELECT), and each scan of that table then becomes the CTE
//! Scan (`to_cte_scans`). The stand-in table's statistics give it the CTE's row
//! estimate on one page, so the planner's choices (join order and method) see the
//! rows PostgreSQL sees, at one page's cost more; EXPLAIN's costs are the CTE
//! Scan's own (`plan::costsize`'s `cost_ctescan`).
//!
//! Refused by name: WITH RECURSIVE, a column list after a CTE's name, a CTE read by
//! another CTE or inside a subquery expression, and a query with both CTEs and
//! InitPlans.

use sqlparser::ast::{self, Query, SetExpr, TableFactor};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan};

use super::catalog::{ident, ColumnInfo, Node, RelKind, Relation};
use super::planner::{plan_query, Planned};
use super::statement::{expect_word, parse_one, parser_error, peek_word, syntax_error, Stmt};
use super::FrontError;
use crate::plan::costsize::{cost_plan, CostParams};
use crate::plan::{CtePlan, Plan};
use crate::types::{Column, Table};

/// One `name AS [[NOT] MATERIALIZED] (statement)` of a WITH clause.
#[derive(Clone, Debug, PartialEq)]
pub struct Cte {
    pub name: String,
    /// `MATERIALIZED` (Some(true)), `NOT MATERIALIZED` (Some(false)), neither (None).
    pub materialized: Option<bool>,
    /// A `Stmt::Select`, `Insert`, `Update` or `Delete`.
    pub stmt: Stmt,
    pub at: Location,
}

impl Cte {
    fn modifying(&self) -> bool {
        !matches!(self.stmt, Stmt::Select(_))
    }
}

/// The most tokens a look-ahead for `EXPLAIN (…) WITH` walks (a bound keeps it
/// linear; longer options are sqlparser's to refuse).
const LOOKAHEAD: usize = 512;

/// The tokens of a parenthesized part, read from `p` after its `(` up to the matching
/// `)`, which is consumed too.
fn take_parenthesized(p: &mut Parser, open: Location) -> Result<Vec<TokenWithSpan>, FrontError> {
    let mut out = vec![];
    let mut depth = 0usize;
    loop {
        let t = p.next_token();
        match t.token {
            Token::EOF => {
                return Err(FrontError::at("syntax error at end of input: a WITH query's ( is not closed", open))
            }
            Token::LParen => depth += 1,
            Token::RParen if depth == 0 => return Ok(out),
            Token::RParen => depth -= 1,
            _ => {}
        }
        out.push(t);
    }
}

/// The tokens of the rest of the statement (up to its `;`, not consumed).
fn take_statement(p: &mut Parser) -> Vec<TokenWithSpan> {
    let mut out = vec![];
    let mut depth = 0usize;
    loop {
        let t = p.peek_token();
        match t.token {
            Token::EOF => return out,
            Token::SemiColon if depth == 0 => return out,
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ => {}
        }
        out.push(p.next_token());
    }
}

/// One statement read from `tokens` alone (all of them).
fn parse_part(tokens: Vec<TokenWithSpan>, at: Location) -> Result<Stmt, FrontError> {
    let Some(first) = tokens.first().map(|t| t.span.start) else {
        return Err(FrontError::at("syntax error: a statement is missing in WITH", at));
    };
    let dialect = PostgreSqlDialect {};
    let mut sub = Parser::new(&dialect)
        .with_recursion_limit(crate::shard_sql::nesting::MAX_RECURSION)
        .with_tokens_with_locations(tokens);
    let stmt = parse_one(&mut sub)?;
    let next = sub.peek_token();
    if next.token != Token::EOF {
        return Err(syntax_error(&next));
    }
    match stmt {
        // The join of UPDATE … FROM / DELETE … USING is planned for a statement of its
        // own only (a CTE's name in its FROM list would be another rule to follow).
        Stmt::Update { ref from, .. } if !from.is_empty() => {
            Err(FrontError::unsupported("UPDATE … FROM in a WITH query or after WITH", first))
        }
        Stmt::Delete { ref using, .. } if !using.is_empty() => {
            Err(FrontError::unsupported("DELETE … USING in a WITH query or after WITH", first))
        }
        Stmt::Select(_) | Stmt::Insert { .. } | Stmt::Update { .. } | Stmt::Delete { .. } => Ok(stmt),
        Stmt::With { .. } => Err(FrontError::unsupported("WITH inside a WITH query or after WITH", first)),
        _ => Err(FrontError::at("syntax error: WITH takes a SELECT, INSERT, UPDATE or DELETE", first)),
    }
}

/// `WITH name AS [[NOT] MATERIALIZED] (statement) [, …] statement` (gram.y's
/// `with_clause` and `common_table_expr`).
pub fn parse_with(p: &mut Parser, at: Location) -> Result<Stmt, FrontError> {
    expect_word(p, "with")?;
    if peek_word(p, "recursive") {
        return Err(FrontError::unsupported("WITH RECURSIVE", p.peek_token().span.start));
    }
    let mut ctes: Vec<Cte> = vec![];
    loop {
        let name_at = p.peek_token().span.start;
        let name = ident(&p.parse_identifier(false).map_err(|e| parser_error(e, name_at))?);
        if p.peek_token().token == Token::LParen {
            return Err(FrontError::unsupported("a column list after a WITH query's name", p.peek_token().span.start));
        }
        expect_word(p, "as")?;
        let materialized = if peek_word(p, "materialized") {
            p.next_token();
            Some(true)
        } else if peek_word(p, "not") {
            p.next_token();
            expect_word(p, "materialized")?;
            Some(false)
        } else {
            None
        };
        let open = p.next_token();
        if open.token != Token::LParen {
            return Err(syntax_error(&open));
        }
        let tokens = take_parenthesized(p, open.span.start)?;
        let stmt = parse_part(tokens, open.span.start)?;
        // parse_cte.c: "WITH query name \"%s\" specified more than once".
        if ctes.iter().any(|c| c.name == name) {
            return Err(FrontError::at(format!("WITH query name \"{name}\" specified more than once"), name_at));
        }
        ctes.push(Cte { name, materialized, stmt, at: name_at });
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    let body = parse_part(take_statement(p), at)?;
    Ok(Stmt::With { ctes, body: Box::new(body) })
}

/// How many tokens `EXPLAIN [ANALYZE] [VERBOSE] | EXPLAIN (…)` takes before a `WITH`
/// (None: no WITH follows it).
fn explain_prefix(p: &Parser) -> Option<usize> {
    let word = |i: usize| match p.peek_nth_token(i).token {
        Token::Word(w) if w.quote_style.is_none() => w.value.to_lowercase(),
        _ => String::new(),
    };
    let mut i = 1;
    if p.peek_nth_token(1).token == Token::LParen {
        let mut depth = 0usize;
        loop {
            match p.peek_nth_token(i).token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                Token::EOF | Token::SemiColon => return None,
                _ => {}
            }
            i += 1;
            if i > LOOKAHEAD {
                return None;
            }
        }
    } else {
        while matches!(word(i).as_str(), "analyze" | "analyse" | "verbose") {
            i += 1;
        }
    }
    (word(i) == "with").then_some(i)
}

/// Is the statement at `p` an EXPLAIN of a WITH?
pub fn explains_with(p: &Parser) -> bool {
    explain_prefix(p).is_some()
}

/// `EXPLAIN [options] WITH …`: the options read as sqlparser reads them for
/// `EXPLAIN [options] SELECT 1`, then the WITH.
pub fn parse_explain_with(p: &mut Parser, at: Location) -> Result<Stmt, FrontError> {
    let Some(n) = explain_prefix(p) else { return Err(FrontError::at("internal error: EXPLAIN … WITH", at)) };
    let mut prefix: Vec<TokenWithSpan> = (0..n).map(|_| p.next_token()).collect();
    let span = p.peek_token().span;
    for token in [Token::make_keyword("SELECT"), Token::Number("1".into(), false)] {
        prefix.push(TokenWithSpan { token, span });
    }
    let options = match parse_part_explain(prefix, at)? {
        Stmt::Explain { options, .. } => options,
        _ => return Err(FrontError::at("internal error: EXPLAIN's options", at)),
    };
    let with = parse_with(p, at)?;
    Ok(Stmt::ExplainModify { options, stmt: Box::new(with) })
}

fn parse_part_explain(tokens: Vec<TokenWithSpan>, at: Location) -> Result<Stmt, FrontError> {
    let dialect = PostgreSqlDialect {};
    let mut sub = Parser::new(&dialect).with_tokens_with_locations(tokens);
    parse_one(&mut sub).map_err(|e| if e.message.contains("internal") { FrontError::at(e.message, at) } else { e })
}

/// The FROM items of `q` (and of its subqueries in FROM) that name `name`, as a
/// table, unqualified.
fn count_refs(q: &Query, name: &str) -> usize {
    fn set_expr(s: &SetExpr, name: &str) -> usize {
        match s {
            SetExpr::Select(s) => s
                .from
                .iter()
                .map(|t| factor(&t.relation, name) + t.joins.iter().map(|j| factor(&j.relation, name)).sum::<usize>())
                .sum(),
            SetExpr::SetOperation { left, right, .. } => set_expr(left, name) + set_expr(right, name),
            SetExpr::Query(q) => count_refs(q, name),
            _ => 0,
        }
    }
    fn factor(f: &TableFactor, name: &str) -> usize {
        match f {
            TableFactor::Table { name: n, args: None, .. } => {
                usize::from(matches!(n.0.as_slice(), [one] if ident(one) == name))
            }
            TableFactor::Derived { subquery, .. } => count_refs(subquery, name),
            TableFactor::NestedJoin { table_with_joins, .. } => {
                factor(&table_with_joins.relation, name)
                    + table_with_joins.joins.iter().map(|j| factor(&j.relation, name)).sum::<usize>()
            }
            _ => 0,
        }
    }
    set_expr(&q.body, name)
}

/// The query a statement reads its rows from (a SELECT's own, an INSERT's source).
fn query_of(stmt: &Stmt) -> Option<&Query> {
    match stmt {
        Stmt::Select(q) => Some(q),
        Stmt::Insert { source, .. } => Some(source),
        _ => None,
    }
}

fn query_of_mut(stmt: &mut Stmt) -> Option<&mut Query> {
    match stmt {
        Stmt::Select(q) => Some(q),
        Stmt::Insert { source, .. } => Some(source),
        _ => None,
    }
}

/// Does the statement's text name `name` as a word outside FROM (a subquery
/// expression, UPDATE's or DELETE's WHERE)? Then `count_refs` missed a reference.
fn named_elsewhere(stmt: &Stmt, name: &str, counted: usize) -> bool {
    let text = match stmt {
        Stmt::Select(q) => q.to_string(),
        Stmt::Insert { source, returning, .. } => {
            format!("{source} {}", returning.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(" "))
        }
        Stmt::Update { sets, selection, returning, .. } => format!(
            "{} {} {}",
            sets.iter().map(|(_, e)| e.to_string()).collect::<Vec<_>>().join(" "),
            selection.as_ref().map(|e| e.to_string()).unwrap_or_default(),
            returning.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(" ")
        ),
        Stmt::Delete { selection, returning, .. } => format!(
            "{} {}",
            selection.as_ref().map(|e| e.to_string()).unwrap_or_default(),
            returning.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(" ")
        ),
        _ => String::new(),
    };
    let words = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '"'))
        .filter(|w| w.trim_matches('"') == name)
        .count();
    // A column of the CTE qualified by its name (`t.a`) is a word too: only a
    // reference in a FROM the walk did not reach is counted as one.
    let lower = text.to_lowercase();
    let from_words = followed_by_name(&lower, "from ", name) + followed_by_name(&lower, "join ", name);
    words > 0 && from_words > counted
}

/// How many times `keyword` is followed by `name` as a whole word in `text`.
fn followed_by_name(text: &str, keyword: &str, name: &str) -> usize {
    let pattern = format!("{keyword}{name}");
    text.match_indices(&pattern)
        .filter(|(i, _)| {
            let after = text[i + pattern.len()..].chars().next();
            !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
        .count()
}

/// Replaces each FROM item naming `name` with the CTE's query as a subquery named
/// as the item was (PostgreSQL's `inline_cte`).
fn inline_cte(q: &mut Query, name: &str, cte: &Query) {
    fn set_expr(s: &mut SetExpr, name: &str, cte: &Query) {
        match s {
            SetExpr::Select(s) => {
                for t in &mut s.from {
                    factor(&mut t.relation, name, cte);
                    t.joins.iter_mut().for_each(|j| factor(&mut j.relation, name, cte));
                }
            }
            SetExpr::SetOperation { left, right, .. } => {
                set_expr(left, name, cte);
                set_expr(right, name, cte);
            }
            SetExpr::Query(q) => inline_cte(q, name, cte),
            _ => {}
        }
    }
    fn factor(f: &mut TableFactor, name: &str, cte: &Query) {
        match f {
            TableFactor::Table { name: n, args: None, alias, .. } if matches!(n.0.as_slice(), [one] if ident(one) == name) =>
            {
                let alias = alias.clone().unwrap_or(ast::TableAlias { name: n.0[0].clone(), columns: vec![] });
                *f = TableFactor::Derived { lateral: false, subquery: Box::new(cte.clone()), alias: Some(alias) };
            }
            TableFactor::Derived { subquery, .. } => inline_cte(subquery, name, cte),
            TableFactor::NestedJoin { table_with_joins, .. } => {
                factor(&mut table_with_joins.relation, name, cte);
                table_with_joins.joins.iter_mut().for_each(|j| factor(&mut j.relation, name, cte));
            }
            _ => {}
        }
    }
    set_expr(&mut q.body, name, cte)
}

/// A CTE planned as a subplan: its name, columns and row estimate, for its scans.
struct Kept {
    name: String,
    columns: Vec<Column>,
    rows: f64,
}

/// Plans `WITH ctes body` (the query section's statement; `text` is the padded section
/// text the spans refer to).
pub fn plan_with(coord: &Node, ctes: &[Cte], body: &Stmt, text: &str, at: Location) -> Result<Planned, FrontError> {
    let mut body = body.clone();
    let params = CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
    let mut plans: Vec<CtePlan> = vec![];
    let mut kept: Vec<Kept> = vec![];
    let mut servers: Vec<String> = vec![];
    for (k, cte) in ctes.iter().enumerate() {
        // A CTE read by a later one: its scan would be planned inside another subplan.
        for later in &ctes[k + 1..] {
            let n = query_of(&later.stmt).map_or(0, |q| count_refs(q, &cte.name));
            if n > 0 || named_elsewhere(&later.stmt, &cte.name, n) {
                return Err(FrontError::unsupported(
                    format!("a WITH query (\"{}\") that reads another (\"{}\")", later.name, cte.name),
                    later.at,
                ));
            }
        }
        let refs = query_of(&body).map_or(0, |q| count_refs(q, &cte.name));
        if named_elsewhere(&body, &cte.name, refs) {
            return Err(FrontError::unsupported(
                format!("WITH query \"{}\" read in a subquery expression or a WHERE", cte.name),
                cte.at,
            ));
        }
        match (&cte.stmt, cte.materialized, refs) {
            // SS_process_ctes: an unread SELECT is not planned at all.
            (Stmt::Select(_), _, 0) => continue,
            // An inlined CTE: read once and not MATERIALIZED, or NOT MATERIALIZED.
            (Stmt::Select(q), None, 1) | (Stmt::Select(q), Some(false), _) => {
                if let Some(bq) = query_of_mut(&mut body) {
                    inline_cte(bq, &cte.name, q);
                }
                continue;
            }
            _ => {}
        }
        let returns = match &cte.stmt {
            Stmt::Insert { returning, .. } | Stmt::Update { returning, .. } | Stmt::Delete { returning, .. } => {
                !returning.is_empty()
            }
            _ => true,
        };
        if refs > 0 && !returns {
            // parse_relation.c's error for a data-modifying CTE without RETURNING.
            return Err(FrontError::at(
                format!("WITH query \"{}\" does not have a RETURNING clause", cte.name),
                cte.at,
            ));
        }
        let planned = match &cte.stmt {
            Stmt::Select(q) => plan_query(coord, q, text)?,
            dml => super::modifytable::plan_modify(coord, dml, text, cte.at)?,
        };
        if contains_init_plans(&planned.plan) {
            return Err(FrontError::unsupported("a subquery expression inside a WITH query", cte.at));
        }
        let rows = cost_plan(&planned.plan, coord, &params).first().map_or(0.0, |e| e.rows);
        servers.extend(planned.servers.iter().cloned());
        kept.push(Kept { name: cte.name.clone(), columns: planned.columns.clone(), rows });
        plans.push(CtePlan {
            name: cte.name.clone(),
            plan_id: plans.len() + 1,
            plan: planned.plan,
            modifying: cte.modifying(),
        });
    }
    let main = plan_body(coord, &kept, &body, text, at)?;
    if plans.is_empty() {
        return Ok(main);
    }
    if contains_init_plans(&main.plan) {
        return Err(FrontError::unsupported(
            "a subquery expression in a query with a WITH query kept as a subplan: not planned yet",
            at,
        ));
    }
    let mut plan = main.plan;
    to_cte_scans(&mut plan, &kept).map_err(|m| FrontError::at(format!("internal error: {m}"), at))?;
    servers.extend(main.servers.iter().cloned());
    // The connections' order (the COMMITs follow it) is the user mappings' order.
    servers.sort_by_key(|s| coord.servers.iter().position(|d| d.name == *s).unwrap_or(usize::MAX));
    servers.dedup();
    Ok(Planned { plan: Plan::WithCtes { child: Box::new(plan), ctes: plans }, servers, ..main })
}

/// The statement after WITH, planned over the kept CTEs standing in the catalog as
/// tables of their columns (no row).
fn plan_body(coord: &Node, kept: &[Kept], body: &Stmt, text: &str, at: Location) -> Result<Planned, FrontError> {
    let mut node = coord.clone();
    for k in kept {
        node.relations.retain(|r| r.name != k.name);
        let columns: Vec<ColumnInfo> = k
            .columns
            .iter()
            .map(|c| ColumnInfo { name: c.name.clone(), ty: c.sql_type.unwrap_or(sql_type(c.ty)) })
            .collect();
        // One page of one (NULL) row, whose statistics say the CTE's estimate: the
        // planner's Seq Scan of it sees the CTE's rows (set_cte_size_estimates), at
        // one page's cost more than the CTE Scan's.
        let mut table = Table::new(&k.name, k.columns.clone());
        table.push_row(&vec![crate::types::Datum::Null; k.columns.len()]);
        let stats =
            crate::plan::stats::RelStats { relpages: 1.0, reltuples: k.rows, columns: vec![None; columns.len()] };
        node.relations.push(Relation {
            name: k.name.clone(),
            columns,
            kind: RelKind::Table(std::rc::Rc::new(table)),
            partition_of: None,
            indexes: vec![],
            rows_sent: 0,
            batches_sent: 0,
            stats: Some(stats),
            unique: vec![],
        });
    }
    match body {
        Stmt::Select(q) => plan_query(&node, q, text),
        Stmt::Insert { table, .. } | Stmt::Update { table, .. } | Stmt::Delete { table, .. } => {
            let target = super::catalog::relation_name(table).map_err(|m| FrontError::at(m, at))?;
            if kept.iter().any(|k| k.name == target) {
                return Err(FrontError::at(
                    format!("relation \"{target}\" cannot be the target of a modifying statement"),
                    at,
                ));
            }
            super::modifytable::plan_modify(&node, body, text, at)
        }
        _ => Err(FrontError::at("syntax error: WITH takes a SELECT, INSERT, UPDATE or DELETE", at)),
    }
}

fn sql_type(t: crate::types::ColType) -> crate::plan::SqlType {
    use crate::plan::SqlType;
    use crate::types::ColType;
    match t {
        ColType::Int => SqlType::Int4,
        ColType::Float => SqlType::Float8,
        ColType::Numeric => SqlType::Numeric,
        ColType::Text => SqlType::Text,
        ColType::Bool => SqlType::Bool,
    }
}

fn contains_init_plans(plan: &Plan) -> bool {
    matches!(plan, Plan::WithInitPlans { .. }) || plan.children().into_iter().any(contains_init_plans)
}

/// The stand-in scan under an Aggregate, through filters only: its table's name.
fn stand_in_under_agg<'a>(plan: &'a Plan, kept: &[Kept]) -> Option<&'a str> {
    let Plan::Agg { child, .. } = plan else { return None };
    let mut n = child.as_ref();
    while let Plan::Result { child, filter: Some(_), targets: None } = n {
        n = child;
    }
    match n {
        Plan::SeqScan { table, .. } if kept.iter().any(|k| k.name == *table) => Some(table),
        _ => None,
    }
}

/// Under an Aggregate (through filters) the CTE Scan returns its CTE's whole row, as
/// PostgreSQL's does there (create_scan_plan's `use_physical_tlist`: the Aggregate
/// asks for no exact target list): the scan's columns become all of the CTE's, and
/// the expressions above it read them where they now are.
fn widen_under_agg(plan: &mut Plan, kept: &[Kept]) {
    let Some(table) = stand_in_under_agg(plan, kept) else { return };
    let Some(cte) = kept.iter().find(|k| k.name == table) else { return };
    let mut old: Vec<String> = vec![];
    let mut n: &Plan = plan;
    while let Some(&c) = n.children().first() {
        n = c;
    }
    if let Plan::SeqScan { columns, .. } = n {
        old = columns.iter().map(|c| c.name.clone()).collect();
    }
    let Some(map) = old.iter().map(|o| cte.columns.iter().position(|c| c.name == *o)).collect::<Option<Vec<usize>>>()
    else {
        return;
    };
    plan.for_each_expr_mut(&mut |e| *e = e.map_cols(&|i| map.get(i).copied().unwrap_or(i)));
    let mut n: &mut Plan = plan;
    loop {
        match n {
            Plan::Agg { child, .. } | Plan::Result { child, .. } => n = child,
            Plan::SeqScan { columns, .. } => {
                *columns = cte.columns.clone();
                return;
            }
            _ => return,
        }
    }
}

/// Each scan of a kept CTE's stand-in table becomes a CTE Scan of it, returning the
/// columns the scan returned.
fn to_cte_scans(plan: &mut Plan, kept: &[Kept]) -> Result<(), String> {
    let name_of = |t: &str| kept.iter().position(|k| k.name == t);
    widen_under_agg(plan, kept);
    match plan {
        Plan::SeqScan { table, columns, alias } if name_of(table).is_some() => {
            let k = name_of(table).unwrap_or_default();
            let cte = &kept[k];
            let positions = columns
                .iter()
                .map(|c| cte.columns.iter().position(|d| d.name == c.name))
                .collect::<Option<Vec<usize>>>()
                .ok_or("a CTE Scan's column is not its CTE's")?;
            let alias = alias.as_ref().map(|a| a.alias.clone()).filter(|a| *a != cte.name);
            *plan = Plan::CteScan {
                cte: k,
                name: cte.name.clone(),
                alias,
                columns: columns.clone(),
                positions,
                rows: cte.rows,
            };
            Ok(())
        }
        Plan::IndexScan { table, .. } | Plan::BitmapHeapScan { table, .. } if name_of(table).is_some() => {
            Err(format!("an index scan of the WITH query \"{table}\""))
        }
        _ => plan.children_mut().into_iter().try_for_each(|c| to_cte_scans(c, kept)),
    }
}

#[cfg(test)]
mod tests {
    use crate::clock::Clock;
    use crate::coordinator_sql::SqlScenario;
    use crate::instrument::ExplainOptions;
    use crate::knobs::{Knobs, Source};

    const SETUP: &str =
        "-- @shard s1\ncreate table t1 (a int, b int, c text);\ncreate table ft_remote (a int, b int, c text);\n\
        insert into t1 select i % 100, i, 'x' from generate_series(0, 249) i;\n\
        -- @shard s2\ncreate table t2 (a int, b int, c text);\n\
        insert into t2 select i % 100, i, 'y' from generate_series(250, 499) i;\n\
        -- @coordinator\ncreate extension postgres_fdw;\n\
        create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');\n\
        create server s2 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');\n\
        create table pt (a int, b int, c text) partition by range (b);\n\
        create foreign table pt1 partition of pt for values from (0) to (250) server s1 options (table_name 't1');\n\
        create foreign table pt2 partition of pt for values from (250) to (500) server s2 options (table_name 't2');\n\
        create foreign table ft (a int, b int, c text) server s1 options (table_name 'ft_remote');\n\
        create table loc (a int, b int, c text);\ninsert into loc values (1, 10, 'p'), (2, 20, 'q'), (3, 30, 'r');\n";

    /// Runs `query` in async mode: EXPLAIN (ANALYZE, VERBOSE, COSTS OFF), its rows,
    /// and the shards' statement logs.
    fn run(query: &str) -> (String, Vec<String>, Vec<Vec<String>>) {
        let base = SqlScenario::load(SETUP).unwrap();
        let s = base.with_query(query).unwrap_or_else(|e| panic!("{query}: {e}"));
        let sc = s.scenario(&Knobs::default(), Source::Json).unwrap_or_else(|e| panic!("{query}: {e}"));
        let mut run = sc.start(true, Clock::virtual_clock(), false).unwrap();
        run.keep_rows = true;
        run.run_to_end().unwrap_or_else(|e| panic!("{query}: {e}"));
        let explain = run.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE);
        let rows = run.rows.iter().map(|r| r.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("|")).collect();
        let logs = run.host.servers.iter().map(|s| s.statement_log().into_iter().map(|(_, l)| l).collect()).collect();
        (explain, rows, logs)
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn an_update_in_with_is_read_by_a_cte_scan() {
        let (explain, rows, _) = run("with t as (update loc set b = b + 1 where a < 3 returning *) select * from t;");
        assert_eq!(rows, ["1|11|p", "2|21|q"], "{explain}");
        assert!(explain.contains("CTE t\n") && explain.contains("CTE Scan on t"), "{explain}");
        assert!(explain.contains("Update on public.loc"), "{explain}");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_delete_nobody_reads_runs_to_its_end() {
        let (explain, rows, logs) =
            run("with d as (delete from pt where a = 9 returning b) select count(*) from pt where a < 2;");
        assert_eq!(rows, ["10"], "{explain}");
        assert!(explain.contains("CTE d"), "{explain}");
        // The DELETEs went to both shards, after the query's own scans.
        for log in &logs {
            let delete = log.iter().position(|l| l.contains("DELETE FROM")).unwrap_or_else(|| panic!("{log:#?}"));
            let declare = log.iter().position(|l| l.contains("DECLARE")).unwrap_or_else(|| panic!("{log:#?}"));
            assert!(declare < delete, "{log:#?}");
        }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_cte_read_twice_shares_its_rows() {
        let (explain, rows, _) = run(
            "with m as (select a, b from pt where b < 3) select x.b, y.b from m x join m y on x.a = y.a order by 1;",
        );
        assert_eq!(rows, ["0|0", "1|1", "2|2"], "{explain}");
        assert_eq!(explain.matches("CTE Scan on m").count(), 2, "{explain}");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn explain_of_with_and_the_refusals() {
        let (explain, rows, _) = run(
            "explain (analyze, verbose, costs off) with i as (insert into ft select * from pt where a = 5 returning *) \
             select count(*) from i;",
        );
        assert!(rows.is_empty() || explain.contains("CTE i"), "{explain}");
        let base = SqlScenario::load(SETUP).unwrap();
        for (q, m) in [
            ("with recursive t as (select 1) select * from t;", "WITH RECURSIVE"),
            ("with t (x) as (select 1) select * from t;", "column list"),
            ("with t as (delete from loc) select * from t;", "does not have a RETURNING clause"),
            ("with t as (select 1), t as (select 2) select * from t;", "specified more than once"),
        ] {
            let e = base.with_query(q).and_then(|s| s.plan().map(|_| ())).unwrap_err();
            assert!(e.message.contains(m), "{q}: {e}");
        }
    }
}
