//! Window functions in the select list, planned as PostgreSQL 15's `grouping_planner`
//! plans them for a query without GROUP BY or DISTINCT
//! (`create_window_paths` → `create_one_window_path`): a Sort on the window's
//! PARTITION BY then ORDER BY expressions (`make_pathkeys_for_window`) over the
//! scan/join input, a WindowAgg above it computing the window functions, which
//! projects the final target list. postgres_fdw never ships a window function
//! (`foreign_expr_walker` has no case for `WindowFunc`), so the input is the query
//! without them: its scans under an Append stay async, the remote queries fetch
//! the columns the windows read.
//!
//! Protocol: [`plan_windows`] takes a query whose select list holds window function
//! calls (each a whole item), builds the input query — the other items, then every
//! expression a window reads (arguments, PARTITION BY, ORDER BY) — plans that as any
//! query, and puts the Sort, the WindowAgg (`Plan::WindowAgg`, its functions'
//! results after its input's columns) and the select list's projection (a Result
//! that EXPLAIN folds into the WindowAgg) above it.
//!
//! Refused by name: window functions other than row_number, rank, dense_rank,
//! count, sum, avg, min and max; named windows (`WINDOW w AS`, `OVER w`); explicit
//! frames; FILTER and DISTINCT in a window call; NULLS FIRST / LAST in a window's
//! ORDER BY; several different windows in one query (PostgreSQL stacks WindowAggs,
//! `select_active_windows`); a window function inside an expression, or with GROUP
//! BY, aggregates or DISTINCT in the same query, or an ORDER BY that the
//! window's Sort does not give.

use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments, SelectItem, SetExpr, WindowType};
use sqlparser::tokenizer::Location;

use super::catalog::Node;
use super::planner::{plan_query_into, query_location, Planned};
use super::FrontError;
use crate::plan::{AggFunc, Expr, Plan, SortKey, WinKind, WindowFunc};

/// Does the query's select list call a window function as one of its items?
pub(super) fn has_window_items(q: &ast::Query) -> bool {
    let SetExpr::Select(s) = q.body.as_ref() else { return false };
    s.projection.iter().any(|i| item_expr(i).is_some_and(|e| window_call(e).is_some()))
}

fn item_expr(i: &SelectItem) -> Option<&ast::Expr> {
    match i {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
        _ => None,
    }
}

/// The call, when `e` is a window function call (parenthesized or not).
fn window_call(e: &ast::Expr) -> Option<&ast::Function> {
    match e {
        ast::Expr::Nested(x) => window_call(x),
        ast::Expr::Function(f) if f.over.is_some() => Some(f),
        _ => None,
    }
}

/// A window function call of the select list, parsed: what it computes, its
/// argument, and its window's PARTITION BY and ORDER BY.
struct Call<'q> {
    kind: WinKind,
    arg: Option<&'q ast::Expr>,
    partition: &'q [ast::Expr],
    order: &'q [ast::OrderByExpr],
}

/// The function a window call names, in the sandbox's subset.
fn win_kind(f: &ast::Function, star: bool, at: Location) -> Result<WinKind, FrontError> {
    let name = f.name.to_string().to_lowercase();
    Ok(match name.as_str() {
        "row_number" => WinKind::RowNumber,
        "rank" => WinKind::Rank,
        "dense_rank" => WinKind::DenseRank,
        "count" if star => WinKind::Agg(AggFunc::CountStar),
        "count" => WinKind::Agg(AggFunc::Count),
        "sum" => WinKind::Agg(AggFunc::Sum),
        "avg" => WinKind::Agg(AggFunc::Avg),
        "min" => WinKind::Agg(AggFunc::Min),
        "max" => WinKind::Agg(AggFunc::Max),
        _ => return Err(FrontError::unsupported(format!("window function {name}()"), at)),
    })
}

/// Parses one window call, refusing by name what the sandbox does not run.
fn parse_call(f: &ast::Function, at: Location) -> Result<Call<'_>, FrontError> {
    let spec = match &f.over {
        Some(WindowType::WindowSpec(s)) if s.window_name.is_none() => s,
        _ => return Err(FrontError::unsupported("named windows (WINDOW w AS …, OVER w)", at)),
    };
    if spec.window_frame.is_some() {
        return Err(FrontError::unsupported("window frames (ROWS / RANGE / GROUPS …)", at));
    }
    if f.filter.is_some() {
        return Err(FrontError::unsupported("FILTER in a window function call", at));
    }
    if spec.order_by.iter().any(|o| o.nulls_first.is_some()) {
        return Err(FrontError::unsupported("NULLS FIRST / LAST in a window's ORDER BY", at));
    }
    let args: Vec<&FunctionArg> = match &f.args {
        FunctionArguments::None => vec![],
        FunctionArguments::List(l) if l.duplicate_treatment.is_some() || !l.clauses.is_empty() => {
            return Err(FrontError::unsupported("DISTINCT or ORDER BY in a window function's arguments", at));
        }
        FunctionArguments::List(l) => l.args.iter().collect(),
        FunctionArguments::Subquery(_) => {
            return Err(FrontError::unsupported("a subquery as a window function's argument", at))
        }
    };
    let (star, arg) = match args.as_slice() {
        [] => (false, None),
        [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] => (true, None),
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(e))] => (false, Some(e)),
        _ => return Err(FrontError::unsupported(format!("window function {}() with these arguments", f.name), at)),
    };
    let kind = win_kind(f, star, at)?;
    let needs_arg = matches!(kind, WinKind::Agg(func) if func != AggFunc::CountStar);
    if needs_arg != arg.is_some() {
        let what = if arg.is_some() { "(an argument)" } else { "()" };
        return Err(FrontError::at(format!("function {}{what} does not exist", f.name), at));
    }
    Ok(Call { kind, arg, partition: &spec.partition_by, order: &spec.order_by })
}

/// The query's clauses a window query may not have here, refused by name.
fn refuse_clauses(q: &ast::Query, s: &ast::Select, at: Location) -> Result<(), FrontError> {
    let aggregated = !matches!(&s.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty())
        || s.having.is_some()
        || s.projection
            .iter()
            .filter_map(item_expr)
            .any(|e| window_call(e).is_none() && crate::shard_sql::contains_aggregate_call(e));
    let refused = if q.fetch.is_some() || !q.limit_by.is_empty() {
        Some("FETCH in a query with window functions")
    } else if s.distinct.is_some() {
        Some("DISTINCT in a query with window functions")
    } else if aggregated {
        Some("window functions over an aggregated query (GROUP BY, HAVING, aggregates)")
    } else if !s.named_window.is_empty() {
        Some("named windows (WINDOW w AS …, OVER w)")
    } else {
        None
    };
    match refused {
        Some(what) => Err(FrontError::unsupported(what, at)),
        None => Ok(()),
    }
}

/// Where each select item goes: an input column (or, for `*`, several), or a window
/// function's result.
enum Slot {
    /// A plain item; true for `*` (or `t.*`).
    Plain(bool),
    Window(usize),
}

/// Plans a query whose select list calls window functions (see the module doc).
pub(super) fn plan_windows(
    coord: &Node,
    q: &ast::Query,
    text: &str,
    servers: &mut Vec<String>,
    depth: usize,
) -> Result<Planned, FrontError> {
    let at = query_location(q);
    let SetExpr::Select(s) = q.body.as_ref() else {
        return Err(FrontError::unsupported("window functions in a set operation", at));
    };
    refuse_clauses(q, s, at)?;
    let mut slots = Vec::new();
    let mut calls = Vec::new();
    let mut plain: Vec<SelectItem> = Vec::new();
    for item in &s.projection {
        match item_expr(item).and_then(window_call) {
            Some(f) => {
                slots.push(Slot::Window(calls.len()));
                calls.push((parse_call(f, at)?, item));
            }
            None => {
                slots.push(Slot::Plain(matches!(item, SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..))));
                plain.push(item.clone());
            }
        }
    }
    if slots.iter().filter(|s| matches!(s, Slot::Plain(true))).count() > 1 {
        return Err(FrontError::unsupported("more than one * beside window functions", at));
    }
    // One window for every call (PostgreSQL merges identical window clauses).
    let window = |c: &Call| {
        let p: Vec<String> = c.partition.iter().map(ToString::to_string).collect();
        let o: Vec<String> = c.order.iter().map(ToString::to_string).collect();
        (p, o)
    };
    let first = window(&calls[0].0);
    if calls.iter().any(|(c, _)| window(c) != first) {
        return Err(FrontError::unsupported("several different windows in one query (stacked WindowAggs)", at));
    }
    let (c0, _) = &calls[0];
    let clause: Vec<&ast::Expr> = c0.partition.iter().chain(c0.order.iter().map(|o| &o.expr)).collect();
    let args: Vec<Option<&ast::Expr>> = calls.iter().map(|(c, _)| c.arg).collect();
    let input = window_input(&plain, &clause, &args);
    let mut query = q.clone();
    if let SetExpr::Select(is) = query.body.as_mut() {
        is.projection = input.items.clone();
    }
    query.order_by = None;
    (query.limit, query.offset) = (None, None);
    let limit = constant_limit(q, at)?;
    let sub = plan_query_into(coord, &query, text, servers, depth + 1)?;
    let width = sub.columns.len();
    // A `*` among the items: its columns are the input's first ones (see `window_input`).
    let shift = width - input.items.len();
    let find = |k: &str| input.keys.iter().position(|x| x.as_deref() == Some(k)).map(|i| i + shift);
    let col = |k: &str| find(k).unwrap_or(0);
    let part: Vec<usize> = c0.partition.iter().map(|e| col(&expr_key(e))).collect();
    let order: Vec<SortKey> = c0
        .order
        .iter()
        .map(|o| SortKey { expr: Expr::Col(col(&expr_key(&o.expr))), desc: o.asc == Some(false) })
        .collect();
    let funcs: Vec<WindowFunc> =
        calls.iter().map(|(c, _)| WindowFunc { kind: c.kind, arg: c.arg.map(|e| col(&expr_key(e))) }).collect();
    // The Sort's pathkeys, each expression once (`make_pathkeys_for_sortclauses`
    // drops a redundant one: ORDER BY a PARTITION BY column).
    let mut keys: Vec<SortKey> = Vec::new();
    for k in part.iter().map(|&c| SortKey::asc(c)).chain(order.iter().cloned()) {
        if !keys.iter().any(|x| x.expr == k.expr) {
            keys.push(k);
        }
    }
    let targets = select_targets(&slots, &calls, &sub, &input, shift, width);
    let order_keys = query_order(q, &keys, &targets, &find, at)?;
    let plan = over_input(sub.plan, |input| {
        let sorted = match keys.is_empty() {
            true => input,
            false => Plan::Sort { child: Box::new(input), keys },
        };
        let win = Plan::WindowAgg { child: Box::new(sorted), funcs, part, order };
        let projected = Plan::Result { child: Box::new(win), filter: None, targets: Some(targets) };
        match limit {
            // The Limit over the WindowAgg (`create_limit_path`); the Sort below is
            // not bounded by it (only a Sort right under a Limit is).
            Some((offset, count)) => Plan::Limit { child: Box::new(projected), offset, count },
            None => projected,
        }
    });
    let columns = plan.output_columns();
    Ok(Planned { plan, columns, servers: vec![], order_key: order_keys.first().copied(), order_keys })
}

/// The query's ORDER BY, when the window's Sort already gives it (its keys a prefix
/// of the window's pathkeys: `create_ordered_paths` adds no Sort over a path so
/// ordered): ORDER BY's keys as output columns, as far as they are selected. Any
/// other ORDER BY (a Sort above the WindowAgg in PostgreSQL) is refused by name.
fn query_order(
    q: &ast::Query,
    keys: &[SortKey],
    targets: &[(Expr, String)],
    col: &dyn Fn(&str) -> Option<usize>,
    at: Location,
) -> Result<Vec<usize>, FrontError> {
    let Some(order_by) = &q.order_by else { return Ok(vec![]) };
    let refuse = || FrontError::unsupported("an ORDER BY other than the window's order beside window functions", at);
    if order_by.exprs.len() > keys.len() {
        return Err(refuse());
    }
    let (mut out, mut leading) = (vec![], true);
    for (o, k) in order_by.exprs.iter().zip(keys) {
        let c = col(&expr_key(&o.expr)).ok_or_else(refuse)?;
        if o.nulls_first.is_some() || k.expr != Expr::Col(c) || k.desc != (o.asc == Some(false)) {
            return Err(refuse());
        }
        // The leading keys that are output columns (`Planned::order_keys`).
        match targets.iter().position(|(e, _)| *e == Expr::Col(c)) {
            Some(i) if leading => out.push(i),
            _ => leading = false,
        }
    }
    Ok(out)
}

/// LIMIT and OFFSET as constants (offset, count); None without either. Any other
/// expression is refused by name.
fn constant_limit(q: &ast::Query, at: Location) -> Result<Option<(u64, Option<u64>)>, FrontError> {
    let number = |e: &ast::Expr| match e {
        ast::Expr::Value(ast::Value::Number(n, _)) => n.parse::<u64>().ok(),
        _ => None,
    };
    let refuse = || FrontError::unsupported("a LIMIT or OFFSET other than a constant beside window functions", at);
    let count = match &q.limit {
        None => None,
        Some(e) => Some(number(e).ok_or_else(refuse)?),
    };
    let offset = match &q.offset {
        None => 0,
        Some(o) => number(&o.value).ok_or_else(refuse)?,
    };
    Ok((count.is_some() || offset > 0).then_some((offset, count)))
}

/// An expression's identity for matching a window's expressions with the select
/// list's: a column by its name (qualified or not: one relation), else its text.
fn expr_key(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Nested(x) => expr_key(x),
        ast::Expr::Identifier(i) => i.value.to_lowercase(),
        ast::Expr::CompoundIdentifier(v) => v.last().map(|i| i.value.to_lowercase()).unwrap_or_default(),
        e => e.to_string(),
    }
}

/// The WindowAgg's input target list (`make_window_input_target`), as a select list
/// for the input query: first the entries the window's PARTITION BY / ORDER BY refer
/// to, in target list order (the select list's, then the resjunk entries
/// `findTargetlistEntrySQL99` added for the window's expressions not in it), then the
/// rest of the select list and the functions' arguments, each once. A `*` item goes
/// first, whole, and the rest after it (`keys` None for it): the sandbox does not
/// expand it here.
struct WindowInput {
    items: Vec<SelectItem>,
    keys: Vec<Option<String>>,
    /// Each plain select item's index in `items`.
    plain_at: Vec<usize>,
}

fn window_input(plain: &[SelectItem], clause: &[&ast::Expr], args: &[Option<&ast::Expr>]) -> WindowInput {
    let mut w = WindowInput { items: vec![], keys: vec![], plain_at: vec![usize::MAX; plain.len()] };
    let clause_keys: Vec<String> = clause.iter().map(|e| expr_key(e)).collect();
    let plain_keys: Vec<Option<String>> = plain.iter().map(|i| item_expr(i).map(expr_key)).collect();
    for (j, item) in plain.iter().enumerate() {
        if plain_keys[j].is_none() {
            w.plain_at[j] = w.items.len();
            w.items.push(item.clone());
            w.keys.push(None);
        }
    }
    let referenced = |k: &Option<String>| k.as_ref().is_some_and(|k| clause_keys.contains(k));
    for (j, item) in plain.iter().enumerate() {
        if referenced(&plain_keys[j]) {
            w.plain_at[j] = w.items.len();
            w.items.push(item.clone());
            w.keys.push(plain_keys[j].clone());
        }
    }
    let add = |w: &mut WindowInput, e: &ast::Expr| {
        let k = Some(expr_key(e));
        if !w.keys.contains(&k) {
            w.items.push(SelectItem::UnnamedExpr(e.clone()));
            w.keys.push(k);
        }
    };
    for e in clause {
        add(&mut w, e);
    }
    for (j, item) in plain.iter().enumerate() {
        if plain_keys[j].is_some() && !referenced(&plain_keys[j]) {
            w.plain_at[j] = w.items.len();
            w.items.push(item.clone());
            w.keys.push(plain_keys[j].clone());
        }
    }
    for e in args.iter().flatten() {
        add(&mut w, e);
    }
    w
}

/// The select list over the WindowAgg's output (the input's `width` columns, then one
/// per call); a `*` item's columns are the input's first `shift` + 1. A call is named
/// as PostgreSQL names it (its alias, else the function's name).
fn select_targets(
    slots: &[Slot],
    calls: &[(Call, &SelectItem)],
    sub: &Planned,
    input: &WindowInput,
    shift: usize,
    width: usize,
) -> Vec<(Expr, String)> {
    let mut targets = Vec::new();
    let mut j = 0;
    for slot in slots {
        match slot {
            Slot::Plain(star) => {
                let at = input.plain_at[j];
                let (from, to) = if *star { (at, at + shift + 1) } else { (at + shift, at + shift + 1) };
                for c in from..to {
                    targets.push((Expr::Col(c), sub.columns[c].name.clone()));
                }
                j += 1;
            }
            Slot::Window(k) => {
                let (call, item) = &calls[*k];
                let name = match item {
                    SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                    _ => call.kind.name().to_string(),
                };
                targets.push((Expr::Col(width + k), name));
            }
        }
    }
    targets
}

/// Puts `make` over the plan's top, below any InitPlans or CTEs attached there (they
/// stay at the top).
fn over_input(plan: Plan, make: impl FnOnce(Plan) -> Plan) -> Plan {
    match plan {
        Plan::WithInitPlans { child, init_plans } => Plan::WithInitPlans { child: Box::new(make(*child)), init_plans },
        Plan::WithCtes { child, ctes } => Plan::WithCtes { child: Box::new(make(*child)), ctes },
        p => make(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    fn select(sql: &str) -> ast::Select {
        let mut st = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap();
        let ast::Statement::Query(q) = st.remove(0) else { panic!("a query") };
        let SetExpr::Select(s) = *q.body else { panic!("a select") };
        *s
    }

    /// `make_window_input_target`'s order: the window's entries first (in select list
    /// order, then the resjunk ones), the other items and the arguments after, each
    /// expression once (`h.grp` and `grp` are one column).
    #[test]
    fn window_input_puts_window_entries_first() {
        let s = select("select id, name, sum(amount) over (partition by h.grp order by id) from h");
        let plain: Vec<SelectItem> = s.projection[..2].to_vec();
        let f = window_call(item_expr(&s.projection[2]).unwrap()).unwrap();
        let call = parse_call(f, Location::of(1, 1)).unwrap();
        let clause: Vec<&ast::Expr> = call.partition.iter().chain(call.order.iter().map(|o| &o.expr)).collect();
        let w = window_input(&plain, &clause, &[call.arg]);
        let keys: Vec<&str> = w.keys.iter().map(|k| k.as_deref().unwrap()).collect();
        assert_eq!(keys, ["id", "grp", "name", "amount"]);
        assert_eq!(w.plain_at, [0, 2]);
    }

    /// What the sandbox does not run is refused by name, not planned wrong.
    #[test]
    fn refused_by_name() {
        for (sql, what) in [
            ("select lag(id) over (order by id) from h", "window function lag()"),
            ("select sum(id) over (order by id rows between 1 preceding and current row) from h", "window frames"),
            ("select count(id) filter (where id > 1) over () from h", "FILTER"),
        ] {
            let s = select(sql);
            let f = window_call(item_expr(&s.projection[0]).unwrap()).unwrap();
            let err = parse_call(f, Location::of(1, 1)).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(err.contains(what), "{sql}: {err}");
        }
    }
}
