//! Remote SQL generation for foreign scans: the text postgres_fdw's `deparse.c` sends.
//!
//! Only what the plan marks as shippable reaches here: quals, aggregates, GROUP BY,
//! ORDER BY and LIMIT were already judged safe to push down by the planner. The text
//! is what PostgreSQL 15's postgres_fdw puts on the wire (checked against a real
//! coordinator: the plain scan in tests/pg15_fidelity.rs, ORDER BY … LIMIT and a
//! grouped aggregate in the whole-EXPLAIN comparison of tests/sql_seeds.rs):
//!
//! - the table is schema-qualified (`public.t1`), identifiers quoted only when
//!   PostgreSQL's `quote_identifier` would (upper case, odd characters, keywords);
//! - an empty target list is `SELECT NULL`;
//! - each qual is wrapped in its own parentheses and joined with ` AND `
//!   (`WHERE ((a < 3)) AND ((b >= (-2)))`), every operator expression is parenthesized,
//!   AND/OR lists are flat (`((a < 3) OR (b <> 1) OR (c IS NULL))`), a negative number
//!   is parenthesized (`(-2)`), a string literal doubles its quotes and takes an `E`
//!   prefix when it holds a backslash;
//! - GROUP BY refers to the target list by position (`GROUP BY 1`); HAVING and an
//!   aggregated query's ORDER BY spell the targets out (`HAVING ((sum(val) > 10))`);
//! - ORDER BY spells the null order out (`a ASC NULLS LAST`, `b DESC NULLS FIRST`);
//! - LIMIT and OFFSET are bigint constants (`LIMIT 5::bigint OFFSET 10::bigint`).
//!
//! Invariants:
//! - The text is a pure function of the `RemoteQuery`: the same plan sends the same
//!   statement on every host and every run.
//! - Every name goes through `quote_identifier` and every string through
//!   [`deparse_string_literal`], so nothing in a scenario file's names or values can
//!   end the remote statement.
//! - The null order is always written, and it is the coordinator's own (`Datum`: NULL
//!   above every value): a shard whose default differed would hand MergeAppend rows
//!   out of the order it merges by.
//!
//! Where the sandbox departs: the planner's order of the quals (PostgreSQL sorts them
//! by cost) is the plan's order, and the target list is the plan's order (PostgreSQL
//! lists the columns by attribute number). Text and integer constants carry no type
//! label: deparse.c's `deparseConst` labels every constant that is not int4, bool or a
//! float-looking numeric (`'x'::text`, `3000000000::bigint`), here written `'x'`,
//! `3000000000`; numeric and float8 constants are labelled as it labels them
//! (`12::numeric`, `0.5::double precision`), since without the label the remote would
//! read them as another type.

use super::quote_identifier;
use crate::plan::{BinOp, Expr, Func, RemoteQuery, RemoteTarget};
use crate::types::Datum;

/// The schema remote tables live in (postgres_fdw's `schema_name` option defaults to
/// the foreign table's own schema, `public` here).
pub const REMOTE_SCHEMA: &str = "public";

pub fn deparse_remote_query(q: &RemoteQuery) -> String {
    let names: Vec<String> = q.table_columns.iter().map(|c| c.name.clone()).collect();
    // A column as the query names it: bare for one table, `r1.a` in a pushed-down join
    // (deparseColumnRef with a relation alias).
    let join = q.join.as_deref();
    let column = |i: usize| -> String {
        let name = names.get(i).map(|n| quote_identifier(n)).unwrap_or_else(|| format!("${i}"));
        match join.and_then(|j| j.rels.iter().find(|r| i >= r.first && i < r.first + r.ncols)) {
            Some(r) => format!("r{}.{name}", r.rt_index),
            None => name,
        }
    };
    let target = |t: &RemoteTarget| -> String {
        match t {
            RemoteTarget::Col(c) => column(*c),
            RemoteTarget::Agg(f, None, _) => format!("{}(*)", f.name()),
            // appendAggregate: `count(DISTINCT grp)`.
            RemoteTarget::Agg(f, Some(c), true) => format!("{}(DISTINCT {})", f.name(), column(*c)),
            RemoteTarget::Agg(f, Some(c), false) => format!("{}({})", f.name(), column(*c)),
            // deparseConst with its type (`'f'::text`), as deparseExpr writes a Const.
            RemoteTarget::Const(d) => deparse_const(d, false),
        }
    };
    let targets: Vec<String> = q.targets.iter().map(target).collect();
    // A foreign modify's scan reads the rows' ctid after its targets (and only it
    // when it needs no column).
    let mut listed = targets.clone();
    if q.row_mark.is_some() {
        listed.push("ctid".to_string());
    }
    // A relation joined to an UPDATE's or DELETE's target: its whole row
    // (deparseTargetList with the whole-row attribute: every column in order), then
    // `ctid` if its parent's row mark reads it.
    if let Some(w) = q.whole_row {
        if w.whole {
            listed = (0..q.table_columns.len()).map(column).collect();
        }
        if w.ctid {
            listed.push("ctid".to_string());
        }
    }
    let select_list = if listed.is_empty() { "NULL".to_string() } else { listed.join(", ") };
    let from = match join {
        Some(j) => super::deparse_join::deparse_from(j, &|e| deparse_with(e, &column)),
        None => qualified_table(&q.table),
    };
    let mut sql = format!("SELECT {select_list} FROM {from}");
    let params = remote_params(q);
    let renumbered: Vec<Expr> = q.quals.iter().map(|e| renumber(e, &params)).collect();
    let having: Vec<Expr> = q.having.iter().map(|e| renumber(e, &params)).collect();
    let mut quals: Vec<&Expr> = vec![];
    for e in &renumbered {
        split_and(e, &mut quals);
    }
    if !quals.is_empty() {
        let quals: Vec<String> = quals.iter().map(|e| format!("({})", deparse_with(e, &column))).collect();
        sql.push_str(&format!(" WHERE {}", quals.join(" AND ")));
    }
    if !q.group_by.is_empty() {
        let g: Vec<String> = q
            .group_by
            .iter()
            .map(|c| match q.targets.iter().position(|t| *t == RemoteTarget::Col(*c)) {
                Some(i) => (i + 1).to_string(),
                None => column(*c),
            })
            .collect();
        sql.push_str(&format!(" GROUP BY {}", g.join(", ")));
    }
    // HAVING and an aggregated query's ORDER BY refer to the target list (HAVING past
    // its end to the aggregates only it reads).
    let having_aggs: Vec<String> = q.having_aggs.iter().map(target).collect();
    let target_col = |i: usize| {
        targets
            .get(i)
            .or_else(|| having_aggs.get(i.wrapping_sub(targets.len())))
            .cloned()
            .unwrap_or_else(|| format!("${i}"))
    };
    if !having.is_empty() {
        let mut conds: Vec<&Expr> = vec![];
        for e in &having {
            split_and(e, &mut conds);
        }
        let conds: Vec<String> = conds.iter().map(|e| format!("({})", deparse_with(e, &target_col))).collect();
        sql.push_str(&format!(" HAVING {}", conds.join(" AND ")));
    }
    if !q.order_by.is_empty() {
        let keys: Vec<String> = q
            .order_by
            .iter()
            .map(|k| {
                let dir = if k.desc { "DESC NULLS FIRST" } else { "ASC NULLS LAST" };
                let key =
                    if q.aggregated() { deparse_with(&k.expr, &target_col) } else { deparse_with(&k.expr, &column) };
                format!("{key} {dir}")
            })
            .collect();
        sql.push_str(&format!(" ORDER BY {}", keys.join(", ")));
    }
    if let Some(n) = q.limit {
        sql.push_str(&format!(" LIMIT {n}::bigint"));
    }
    if let Some(n) = q.offset {
        sql.push_str(&format!(" OFFSET {n}::bigint"));
    }
    if q.row_mark.is_some() || q.whole_row.is_some_and(|w| w.for_update) {
        sql.push_str(" FOR UPDATE");
    }
    sql
}

/// `public.t1`; a name given as `schema.table` keeps its schema.
pub fn qualified_table(table: &str) -> String {
    match table.split_once('.') {
        Some((schema, t)) => format!("{}.{}", quote_identifier(schema), quote_identifier(t)),
        None => format!("{}.{}", quote_identifier(REMOTE_SCHEMA), quote_identifier(table)),
    }
}

/// The top-level conjuncts of a qual: PostgreSQL's planner keeps quals as an
/// implicitly AND-ed list, so `a AND b` deparses as two quals.
pub(super) fn split_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::Bin(BinOp::And, l, r) => {
            split_and(l, out);
            split_and(r, out);
        }
        _ => out.push(e),
    }
}

/// The operands of a chain of the same boolean operator, flattened (PostgreSQL's
/// BoolExpr is n-ary).
fn flatten<'e>(op: BinOp, e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::Bin(o, l, r) if *o == op => {
            flatten(op, l, out);
            flatten(op, r, out);
        }
        _ => out.push(e),
    }
}

/// An expression as deparse.c writes it: every operator application in parentheses.
pub fn deparse_expr(e: &Expr, names: &[String]) -> String {
    deparse_with(e, &|i| names.get(i).map(|n| quote_identifier(n)).unwrap_or_else(|| format!("${i}")))
}

/// `deparse_expr` with column `i` written as `col(i)` (a target: `sum(val)`).
fn deparse_with(e: &Expr, col: &dyn Fn(usize) -> String) -> String {
    match e {
        Expr::Col(i) => col(*i),
        Expr::Const(d) => deparse_const(d, false),
        Expr::Not(x) => format!("(NOT {})", deparse_with(x, col)),
        Expr::IsNull(x, false) => format!("({} IS NULL)", deparse_with(x, col)),
        Expr::IsNull(x, true) => format!("({} IS NOT NULL)", deparse_with(x, col)),
        Expr::Bin(op @ (BinOp::And | BinOp::Or), _, _) => {
            let mut args = vec![];
            flatten(*op, e, &mut args);
            let parts: Vec<String> = args.iter().map(|a| deparse_with(a, col)).collect();
            format!("({})", parts.join(&format!(" {} ", op.sql())))
        }
        Expr::Bin(op, l, r) => {
            let [l, r] = operands([l, r], col);
            format!("({l} {} {r})", op.sql())
        }
        // `||` and `[NOT] [I]LIKE` are operators too.
        Expr::Func(f @ (Func::TextCat | Func::Like { .. }), args) if args.len() == 2 => {
            f.sql(&operands([&args[0], &args[1]], col))
        }
        // deparseFuncExpr leaves an implicit cast out (the remote server makes the same
        // coercion: `a > $1::numeric`), and writes an explicit one without parentheses
        // of its own (`val::numeric`; an operator expression brings its own).
        Expr::Func(Func::Cast { implicit: true, .. }, args) if args.len() == 1 => deparse_with(&args[0], col),
        Expr::Func(Func::Cast { to, .. }, args) if args.len() == 1 => {
            format!("{}::{}", deparse_with(&args[0], col), to.name())
        }
        // The length coercion as an explicit cast, its input's own cast hidden
        // (`amount::numeric(4,1)`, `val::numeric(10,2)`).
        Expr::Func(Func::NumericTypmod { typmod, .. }, args) if args.len() == 1 => {
            format!("{}::{}", deparse_with(&args[0], col), typmod.type_name())
        }
        Expr::Func(Func::User(u), args) => u.remote_sql(&args.iter().map(|a| deparse_with(a, col)).collect::<Vec<_>>()),
        // deparseScalarArrayOpExpr: `(x = ANY (arr))`, a constant array through
        // deparseConst (its text a string literal labelled with the array type,
        // `'{5,6}'::integer[]`), an ArrayExpr through deparseArrayExpr
        // (`ARRAY[$1::integer, $2::integer]`).
        Expr::Func(Func::ScalarArrayOp { op, use_or, elem }, args) if !args.is_empty() => {
            let (x, elems) = (&args[0], &args[1..]);
            let array = match crate::plan::const_array_text(elems) {
                Some(t) => format!("{}::{}", deparse_string_literal(&t), crate::plan::array_type_name(*elem)),
                None if elems.is_empty() => format!("ARRAY[]::{}", crate::plan::array_type_name(*elem)),
                None => {
                    let parts: Vec<String> = elems.iter().map(|e| deparse_with(e, col)).collect();
                    format!("ARRAY[{}]", parts.join(", "))
                }
            };
            crate::plan::saop_sql(*op, *use_or, &deparse_with(x, col), &array)
        }
        // deparseCaseExpr: the CASE in parentheses of its own; a simple CASE's WHEN
        // shows the compared value (the CaseTestExpr's operator's right side).
        Expr::Func(Func::Case { simple }, args) => {
            let n = args.len();
            let parts: Vec<String> = args
                .iter()
                .enumerate()
                .map(|(i, a)| match a {
                    Expr::Bin(BinOp::Eq, _, v) if *simple && i >= 1 && (i - 1) % 2 == 0 && i + 1 < n => {
                        deparse_with(v, col)
                    }
                    other => deparse_with(other, col),
                })
                .collect();
            format!("({})", crate::plan::case_sql(*simple, &parts))
        }
        Expr::Func(f, args) => f.sql(&args.iter().map(|a| deparse_with(a, col)).collect::<Vec<_>>()),
        // printRemoteParam: the remote query's own numbering (`remote_params`), with
        // an explicit cast so the remote server infers the type without our OIDs.
        Expr::Param(n, t, _) => format!("${n}::{}", t.name()),
        // deparse.c's printRemoteParam: the scan's own parameter number (the foreign
        // scan renumbered the InitPlan values it sends), cast to the value's type.
        Expr::ExecParam(n, t) => format!("${n}::{}", t.name()),
    }
}

/// The parameters of a remote query in the order deparse.c meets them (its
/// `params_list`: targets, then quals, then HAVING), each once: the remote query's
/// `$1`, `$2`, … are these, whatever the local numbers, and their values are what
/// the DECLARE's Bind carries (postgres_fdw's `process_query_params`).
pub fn remote_params(q: &RemoteQuery) -> Vec<Expr> {
    fn collect(e: &Expr, out: &mut Vec<Expr>) {
        match e {
            Expr::Param(n, ..) => {
                if !out.iter().any(|p| matches!(p, Expr::Param(m, ..) if m == n)) {
                    out.push(e.clone());
                }
            }
            Expr::Col(_) | Expr::Const(_) | Expr::ExecParam(..) => {}
            Expr::Bin(_, l, r) => {
                collect(l, out);
                collect(r, out);
            }
            Expr::Not(x) | Expr::IsNull(x, _) => collect(x, out),
            Expr::Func(_, args) => args.iter().for_each(|a| collect(a, out)),
        }
    }
    let mut out = Vec::new();
    q.quals.iter().chain(&q.having).for_each(|e| collect(e, &mut out));
    out
}

/// `e` with each parameter renumbered to its place in `params` (from 1).
fn renumber(e: &Expr, params: &[Expr]) -> Expr {
    match e {
        Expr::Param(n, t, v) => {
            let i = params.iter().position(|p| matches!(p, Expr::Param(m, ..) if m == n)).unwrap_or(0);
            Expr::Param(i as u16 + 1, *t, v.clone())
        }
        Expr::Col(_) | Expr::Const(_) | Expr::ExecParam(..) => e.clone(),
        Expr::Bin(op, l, r) => Expr::bin(*op, renumber(l, params), renumber(r, params)),
        Expr::Not(x) => Expr::Not(Box::new(renumber(x, params))),
        Expr::IsNull(x, neg) => Expr::IsNull(Box::new(renumber(x, params)), *neg),
        Expr::Func(f, args) => Expr::Func(*f, args.iter().map(|a| renumber(a, params)).collect()),
    }
}

/// A binary operator's operands (deparseOpExpr): a constant beside a plain column of
/// its type is written without its type when it is a string literal, so the remote
/// server types it from the column (`(cat = 'c3')`, `(lower(cat) = 'c3'::text)`).
fn operands(args: [&Expr; 2], col: &dyn Fn(usize) -> String) -> [String; 2] {
    let one = |x: &Expr, other: &Expr| match (x, other) {
        (Expr::Const(d), Expr::Col(_)) => deparse_const(d, true),
        _ => deparse_with(x, col),
    };
    [one(args[0], args[1]), one(args[1], args[0])]
}

/// deparse.c's deparseConst: a number bare (negative in parentheses), with its type
/// where the remote server would read another (`2::numeric`, `5000000000::bigint`,
/// `0.5::double precision`), a string literal with its type (`'east'::text`) unless
/// `untyped_string` (beside a column of its type, see [`operands`]).
fn deparse_const(d: &Datum, untyped_string: bool) -> String {
    match d {
        Datum::Null => "NULL".to_string(),
        // deparseConst writes a boolean as a keyword.
        Datum::Bool(b) => b.to_string(),
        Datum::Text(_) if untyped_string => deparse_string_literal(&d.to_string()),
        Datum::Text(_) => deparse_string_literal(&d.to_string()) + "::text",
        Datum::Numeric(n) => crate::plan::numeric_const_sql(n, true),
        // deparseConst labels a float8 (the remote would read `0.5` as a numeric).
        Datum::Float(v) => {
            let s = d.to_string();
            let s = if !v.is_finite() {
                format!("'{s}'")
            } else if *v < 0.0 {
                format!("({s})")
            } else {
                s
            };
            s + "::double precision"
        }
        Datum::Int(v) => {
            let s = if *v < 0 { format!("({v})") } else { v.to_string() };
            // An integer beyond int4 is an int8 constant: labelled.
            if i32::try_from(*v).is_ok() {
                s
            } else {
                s + "::bigint"
            }
        }
    }
}

/// A string literal: quotes doubled; with a backslash, an `E''` literal with the
/// backslashes doubled (deparse.c's deparseStringLiteral).
pub fn deparse_string_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 3);
    if s.contains('\\') {
        out.push('E');
    }
    out.push('\'');
    for ch in s.chars() {
        if ch == '\'' || ch == '\\' {
            out.push(ch);
        }
        out.push(ch);
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod having_aggs_tests {
    use super::deparse_remote_query;
    use crate::plan::{AggFunc, BinOp, Expr, RemoteQuery, RemoteTarget};
    use crate::types::{ColType, Column, Datum};

    /// An aggregate only the HAVING reads is written there, not selected
    /// (postgres_fdw's foreign_grouping_ok: a remote condition's aggregates are in no
    /// target list); HAVING's `Col` past the targets is one of `having_aggs`.
    #[test]
    fn an_aggregate_only_having_reads_is_not_selected() {
        let cols = vec![Column::new("id", ColType::Int), Column::new("cat", ColType::Text)];
        let mut q = RemoteQuery::scan("f_remote", cols, &[1]);
        q.group_by = vec![1];
        q.having = vec![Expr::bin(BinOp::Gt, Expr::col(1), Expr::Const(Datum::Int(5)))];
        q.having_aggs = vec![RemoteTarget::Agg(AggFunc::CountStar, None, false)];
        assert_eq!(deparse_remote_query(&q), "SELECT cat FROM public.f_remote GROUP BY 1 HAVING ((count(*) > 5))");
        // Selected, it is the target the HAVING names.
        q.targets.push(RemoteTarget::Agg(AggFunc::CountStar, None, false));
        q.having_aggs.clear();
        assert_eq!(
            deparse_remote_query(&q),
            "SELECT cat, count(*) FROM public.f_remote GROUP BY 1 HAVING ((count(*) > 5))"
        );
    }
}
