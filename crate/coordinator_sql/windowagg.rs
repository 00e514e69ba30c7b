//! Window functions in the select list, planned as PostgreSQL 15's `grouping_planner`
//! plans them for a query without GROUP BY or DISTINCT (`create_window_paths` →
//! `create_one_window_path`): over the scan/join input, one WindowAgg per window
//! (`WindowClause`) that has functions, stacked in `select_active_windows`' order, a
//! Sort (or an Incremental Sort, when the input is sorted on a prefix) below each
//! whose PARTITION BY then ORDER BY pathkeys (`make_pathkeys_for_window`) the input
//! below it does not give already; the top one projects the final target list.
//! postgres_fdw never ships a window function (`foreign_expr_walker` has no case
//! for `WindowFunc`), so the input is the query without them: its scans under an
//! Append stay async, the remote queries fetch the columns the windows read.
//!
//! Protocol: [`plan_windows`] takes a query whose select list holds window function
//! calls (each a whole item), resolves each call's window (`transformWindowFuncCall`:
//! a named window of the WINDOW clause, `OVER (w ORDER BY …)` copying w's PARTITION
//! BY, identical unnamed windows merged), orders the windows that have calls
//! (`select_active_windows` / `common_prefix_cmp`: by their clauses' sort group
//! references, higher first, the longer first when one is a prefix of the other),
//! builds the input query — the other items, then every expression a window reads
//! (`make_window_input_target`) — and plans it with an ORDER BY on the first
//! window's pathkeys, so that the input comes sorted as cheaply as the planner finds
//! (a Sort over an async Append, or a Merge Append of remotely sorted scans, or an
//! index scan: `create_window_paths` tries the presorted paths too). Then each
//! window in turn: its Sort when needed, its WindowAgg (`Plan::WindowAgg`: its
//! functions' results after its input's columns), and over the last the select
//! list's projection (a Result that EXPLAIN folds into the WindowAgg).
//!
//! Each select-list position of a window call is its WindowAgg's output column: the
//! input's width, plus the calls of the windows below, plus its place among its own
//! window's calls (`find_window_functions` lists them in target list order).
//!
//! Refused by name: window functions other than row_number, rank, dense_rank,
//! percent_rank, cume_dist, ntile, lag, lead, first_value, last_value, nth_value,
//! count, sum, avg, min and max; their further arguments (offsets, defaults) other
//! than constants; GROUPS frames and EXCLUDE; RANGE offsets over other than one
//! integer or numeric ORDER BY column; FILTER and DISTINCT in a window call; NULLS
//! FIRST / LAST in a window's ORDER BY; a window function inside an expression other
//! than arithmetic over calls, columns and constants; DISTINCT or GROUP BY ALL in the
//! same query; an ORDER BY the windows' Sorts do not give on other than output
//! columns. (EXCLUDE is a syntax error of the parser.)
//!
//! GROUP BY: the input query keeps its GROUP BY and HAVING, so the input is the
//! Agg's output; GROUP BY's expressions are among the input's sort group entries
//! (`make_window_input_target`). An ORDER BY the windows do not give is a Sort over
//! the select list's output (`create_ordered_paths`).
//!
//! Where it departs from PostgreSQL: the input's order is chosen for the first
//! window alone (the cheapest sorted input, or the cheapest for a LIMIT's fraction),
//! where PostgreSQL compares whole stacks of window paths (`add_path` over each input
//! path); a plain select item that is an expression is computed below the windows,
//! where PostgreSQL computes it over the top WindowAgg from the columns it reads.

use sqlparser::ast::{
    self, FunctionArg, FunctionArgExpr, FunctionArguments, NamedWindowExpr, SelectItem, SetExpr, WindowFrameBound,
    WindowFrameUnits, WindowType,
};
use sqlparser::tokenizer::Location;

use super::catalog::Node;
use super::planner::{plan_query_into, query_location, Planned};
use super::FrontError;
use crate::numeric::Numeric;
use crate::plan::{AggFunc, Expr, FrameBound, Plan, SortKey, WinFrame, WinKind, WindowFunc};
use crate::types::{ColType, Datum};

/// Does the query's select list call a window function (as an item, or inside one,
/// which `plan_windows` refuses by name)?
pub(super) fn has_window_items(q: &ast::Query) -> bool {
    let SetExpr::Select(s) = q.body.as_ref() else { return false };
    s.projection.iter().any(|i| item_expr(i).is_some_and(contains_window_call))
}

/// Does `e` call a window function anywhere in it?
fn contains_window_call(e: &ast::Expr) -> bool {
    use ast::Expr as E;
    match e {
        E::Function(f) if f.over.is_some() => true,
        E::Function(f) => match &f.args {
            FunctionArguments::List(l) => l.args.iter().any(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(x))
                | FunctionArg::Named { arg: FunctionArgExpr::Expr(x), .. } => contains_window_call(x),
                _ => false,
            }),
            _ => false,
        },
        E::Nested(x) | E::UnaryOp { expr: x, .. } | E::Cast { expr: x, .. } | E::IsNull(x) | E::IsNotNull(x) => {
            contains_window_call(x)
        }
        E::BinaryOp { left, right, .. } => contains_window_call(left) || contains_window_call(right),
        E::Case { operand, conditions, results, else_result } => {
            operand.iter().chain(else_result).any(|x| contains_window_call(x))
                || conditions.iter().chain(results).any(contains_window_call)
        }
        _ => false,
    }
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
/// argument, its further constant arguments, and its window as written.
struct Call<'q> {
    kind: WinKind,
    arg: Option<&'q ast::Expr>,
    extra: Vec<Datum>,
    over: &'q WindowType,
}

/// A window (PostgreSQL's `WindowClause`): its name in the WINDOW clause, the name
/// of the window it copies (`OVER (w ORDER BY …)`), its PARTITION BY, ORDER BY and
/// frame, and the calls over it (indexes into the calls, in select list order).
struct Window<'q> {
    name: Option<String>,
    refname: Option<String>,
    partition: Vec<&'q ast::Expr>,
    order: Vec<&'q ast::OrderByExpr>,
    frame: Option<&'q ast::WindowFrame>,
    calls: Vec<usize>,
}

impl Window<'_> {
    /// The window as `transformWindowFuncCall` compares unnamed windows: its copied
    /// name, clauses and frame.
    fn signature(&self) -> String {
        let p: Vec<String> = self.partition.iter().map(|e| expr_key(e)).collect();
        let o: Vec<String> = self.order.iter().map(|o| format!("{} {:?}", expr_key(&o.expr), o.asc)).collect();
        format!("{:?}|{p:?}|{o:?}|{}", self.refname, self.frame.map(|f| format!("{f:?}")).unwrap_or_default())
    }

    /// Its PARTITION BY then ORDER BY expressions, each as (key, descending).
    fn clauses(&self) -> Vec<(String, bool)> {
        let part = self.partition.iter().map(|e| (expr_key(e), false));
        part.chain(self.order.iter().map(|o| (expr_key(&o.expr), o.asc == Some(false)))).collect()
    }
}

/// The function a window call names, in the sandbox's subset.
fn win_kind(f: &ast::Function, star: bool, at: Location) -> Result<WinKind, FrontError> {
    let name = f.name.to_string().to_lowercase();
    Ok(match name.as_str() {
        "row_number" => WinKind::RowNumber,
        "rank" => WinKind::Rank,
        "dense_rank" => WinKind::DenseRank,
        "percent_rank" => WinKind::PercentRank,
        "cume_dist" => WinKind::CumeDist,
        "ntile" => WinKind::Ntile,
        "lag" => WinKind::Lag,
        "lead" => WinKind::Lead,
        "first_value" => WinKind::FirstValue,
        "last_value" => WinKind::LastValue,
        "nth_value" => WinKind::NthValue,
        "count" if star => WinKind::Agg(AggFunc::CountStar),
        "count" => WinKind::Agg(AggFunc::Count),
        "sum" => WinKind::Agg(AggFunc::Sum),
        "avg" => WinKind::Agg(AggFunc::Avg),
        "min" => WinKind::Agg(AggFunc::Min),
        "max" => WinKind::Agg(AggFunc::Max),
        _ => return Err(FrontError::unsupported(format!("window function {name}()"), at)),
    })
}

/// A constant argument (an offset, a default, a count): a number, a string, NULL,
/// a negative number. None for anything else.
fn constant(e: &ast::Expr) -> Option<Datum> {
    match e {
        ast::Expr::Nested(x) => constant(x),
        ast::Expr::Value(ast::Value::Null) => Some(Datum::Null),
        ast::Expr::Value(ast::Value::SingleQuotedString(s)) => Some(Datum::text(s)),
        ast::Expr::Value(ast::Value::Number(n, _)) => match n.parse::<i64>() {
            Ok(i) if i32::try_from(i).is_ok() => Some(Datum::Int(i)),
            _ => Numeric::parse(n).ok().map(Datum::numeric),
        },
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Minus, expr } => match constant(expr)? {
            Datum::Int(i) => Some(Datum::Int(-i)),
            Datum::Numeric(n) => Numeric::from_i64(0).sub(&n).ok().map(Datum::numeric),
            _ => None,
        },
        _ => None,
    }
}

/// How many arguments each function takes: (its value argument, the fewest and the
/// most further constant arguments).
fn arity(kind: WinKind) -> (bool, usize, usize) {
    match kind {
        WinKind::Lag | WinKind::Lead => (true, 0, 2),
        WinKind::NthValue => (true, 1, 1),
        WinKind::FirstValue | WinKind::LastValue => (true, 0, 0),
        WinKind::Ntile => (false, 1, 1),
        WinKind::Agg(AggFunc::CountStar) => (false, 0, 0),
        WinKind::Agg(_) => (true, 0, 0),
        _ => (false, 0, 0),
    }
}

/// Parses one window call, refusing by name what the sandbox does not run.
fn parse_call(f: &ast::Function, at: Location) -> Result<Call<'_>, FrontError> {
    let Some(over) = &f.over else { return Err(FrontError::at("not a window function call", at)) };
    if f.filter.is_some() {
        return Err(FrontError::unsupported("FILTER in a window function call", at));
    }
    if let WindowType::WindowSpec(spec) = over {
        if spec.order_by.iter().any(|o| o.nulls_first.is_some()) {
            return Err(FrontError::unsupported("NULLS FIRST / LAST in a window's ORDER BY", at));
        }
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
    let star = matches!(args.as_slice(), [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)]);
    let exprs: Vec<&ast::Expr> = match star {
        true => vec![],
        false => args
            .iter()
            .map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
                _ => Err(FrontError::unsupported(format!("window function {}() with these arguments", f.name), at)),
            })
            .collect::<Result<_, _>>()?,
    };
    let kind = win_kind(f, star, at)?;
    let (valued, least, most) = arity(kind);
    let given = exprs.len().saturating_sub(usize::from(valued));
    if (valued && exprs.is_empty()) || given < least || given > most {
        return Err(FrontError::at(format!("function {}() with {} arguments does not exist", f.name, exprs.len()), at));
    }
    let (arg, rest) = if valued { (exprs.first().copied(), &exprs[1..]) } else { (None, &exprs[..]) };
    let extra = rest
        .iter()
        .map(|e| {
            constant(e).ok_or_else(|| {
                FrontError::unsupported(format!("an argument of {}() other than a constant", kind.name()), at)
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if matches!(kind, WinKind::Lag | WinKind::Lead | WinKind::Ntile | WinKind::NthValue)
        && extra.first().is_some_and(|d| !matches!(d, Datum::Int(_) | Datum::Null))
    {
        return Err(FrontError::unsupported(format!("a non-integer count or offset of {}()", kind.name()), at));
    }
    Ok(Call { kind, arg, extra, over })
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
    } else if aggregated && !matches!(&s.group_by, ast::GroupByExpr::Expressions(..)) {
        Some("window functions over GROUP BY ALL")
    } else {
        None
    };
    match refused {
        Some(what) => Err(FrontError::unsupported(what, at)),
        None => Ok(()),
    }
}

/// A frame as written, checked as `transformFrameOffset` and the grammar check it
/// (PostgreSQL's errors), GROUPS refused by name. Offsets are constants; a RANGE
/// offset's type is checked against the ORDER BY column's once it is known.
fn parse_frame(frame: Option<&ast::WindowFrame>, order: usize, at: Location) -> Result<WinFrame, FrontError> {
    let Some(fr) = frame else { return Ok(WinFrame::default()) };
    let rows = match fr.units {
        WindowFrameUnits::Rows => true,
        WindowFrameUnits::Range => false,
        WindowFrameUnits::Groups => return Err(FrontError::unsupported("GROUPS window frames", at)),
    };
    let offset = |e: &ast::Expr| {
        let d =
            constant(e).ok_or_else(|| FrontError::unsupported("a window frame offset other than a constant", at))?;
        match (&d, rows) {
            (Datum::Int(i), _) if *i < 0 => {
                Err(FrontError::at("invalid preceding or following size in window function", at))
            }
            (Datum::Int(_), _) | (Datum::Numeric(_), false) => Ok(Expr::Const(d)),
            (Datum::Null, _) => Err(FrontError::at("frame offset must not be null", at)),
            _ => Err(FrontError::unsupported("this window frame offset", at)),
        }
    };
    let bound = |b: &WindowFrameBound| -> Result<FrameBound, FrontError> {
        Ok(match b {
            WindowFrameBound::CurrentRow => FrameBound::CurrentRow,
            WindowFrameBound::Preceding(None) => FrameBound::UnboundedPreceding,
            WindowFrameBound::Following(None) => FrameBound::UnboundedFollowing,
            WindowFrameBound::Preceding(Some(e)) => FrameBound::Preceding(offset(e)?),
            WindowFrameBound::Following(Some(e)) => FrameBound::Following(offset(e)?),
        })
    };
    let start = bound(&fr.start_bound)?;
    let end = match &fr.end_bound {
        Some(b) => bound(b)?,
        None => FrameBound::CurrentRow,
    };
    let error = match (&start, &end) {
        (FrameBound::UnboundedFollowing, _) => Some("frame start cannot be UNBOUNDED FOLLOWING"),
        (_, FrameBound::UnboundedPreceding) => Some("frame end cannot be UNBOUNDED PRECEDING"),
        (FrameBound::CurrentRow, FrameBound::Preceding(_)) => {
            Some("frame starting from current row cannot have preceding rows")
        }
        (FrameBound::Following(_), FrameBound::Preceding(_) | FrameBound::CurrentRow) => {
            Some("frame starting from following row cannot have preceding rows")
        }
        _ => None,
    };
    if let Some(e) = error {
        return Err(FrontError::at(e, at));
    }
    let offsets = [&start, &end].iter().any(|b| matches!(b, FrameBound::Preceding(_) | FrameBound::Following(_)));
    if !rows && offsets && order != 1 {
        return Err(FrontError::at("RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column", at));
    }
    Ok(WinFrame { rows, start, end })
}

/// The windows of the query (`transformWindowFuncCall`, `transformWindowDefinitions`):
/// the WINDOW clause's first, in order, then each unnamed window as a call first
/// uses it (an identical one reused). Each call is added to its window's calls.
fn resolve_windows<'q>(s: &'q ast::Select, calls: &[Call<'q>], at: Location) -> Result<Vec<Window<'q>>, FrontError> {
    let mut windows: Vec<Window<'q>> = Vec::new();
    let find = |windows: &[Window], name: &str| windows.iter().position(|w| w.name.as_deref() == Some(name));
    for def in &s.named_window {
        let name = def.0.value.to_lowercase();
        let w = match &def.1 {
            NamedWindowExpr::WindowSpec(spec) => copy_window(&windows, Some(name), spec, at)?,
            NamedWindowExpr::NamedWindow(other) => {
                let i = find(&windows, &other.value.to_lowercase())
                    .ok_or_else(|| FrontError::at(format!("window \"{}\" does not exist", other.value), at))?;
                let o = &windows[i];
                Window {
                    name: Some(name),
                    refname: None,
                    partition: o.partition.clone(),
                    order: o.order.clone(),
                    frame: o.frame,
                    calls: vec![],
                }
            }
        };
        if find(&windows, w.name.as_deref().unwrap_or_default()).is_some() {
            return Err(FrontError::at(format!("window \"{}\" is already defined", def.0.value), at));
        }
        windows.push(w);
    }
    for (k, call) in calls.iter().enumerate() {
        let i = match call.over {
            WindowType::NamedWindow(name) => find(&windows, &name.value.to_lowercase())
                .ok_or_else(|| FrontError::at(format!("window \"{}\" does not exist", name.value), at))?,
            WindowType::WindowSpec(spec) => {
                let w = copy_window(&windows, None, spec, at)?;
                let sig = w.signature();
                match windows.iter().position(|x| x.name.is_none() && x.signature() == sig) {
                    Some(i) => i,
                    None => {
                        windows.push(w);
                        windows.len() - 1
                    }
                }
            }
        };
        windows[i].calls.push(k);
    }
    Ok(windows)
}

/// A window written as a specification, perhaps copying an earlier named one
/// (`OVER (w ORDER BY …)`: its PARTITION BY, with PostgreSQL's restrictions).
fn copy_window<'q>(
    windows: &[Window<'q>],
    name: Option<String>,
    spec: &'q ast::WindowSpec,
    at: Location,
) -> Result<Window<'q>, FrontError> {
    if spec.order_by.iter().any(|o| o.nulls_first.is_some()) {
        return Err(FrontError::unsupported("NULLS FIRST / LAST in a window's ORDER BY", at));
    }
    let mut w = Window {
        name,
        refname: None,
        partition: spec.partition_by.iter().collect(),
        order: spec.order_by.iter().collect(),
        frame: spec.window_frame.as_ref(),
        calls: vec![],
    };
    if let Some(r) = &spec.window_name {
        let rname = r.value.to_lowercase();
        let Some(base) = windows.iter().find(|x| x.name.as_deref() == Some(rname.as_str())) else {
            return Err(FrontError::at(format!("window \"{}\" does not exist", r.value), at));
        };
        if !spec.partition_by.is_empty() {
            return Err(FrontError::at(format!("cannot override PARTITION BY clause of window \"{}\"", r.value), at));
        }
        if !base.order.is_empty() && !spec.order_by.is_empty() {
            return Err(FrontError::at(format!("cannot override ORDER BY clause of window \"{}\"", r.value), at));
        }
        if base.frame.is_some() {
            return Err(FrontError::at(
                format!("cannot copy window \"{}\" because it has a frame clause", r.value),
                at,
            ));
        }
        w.partition = base.partition.clone();
        if w.order.is_empty() {
            w.order = base.order.clone();
        }
        w.refname = Some(rname);
    }
    Ok(w)
}

/// `select_active_windows`: the windows that have calls, ordered by
/// `common_prefix_cmp` over their PARTITION BY then ORDER BY clauses without the
/// ORDER BY entries PARTITION BY has (`list_concat_unique`): entry by entry the
/// higher sort group reference first, then the descending one (its operator's oid
/// is the higher), then the longer list; ties keep the windows' order (the sort is
/// an insertion sort at these sizes).
fn active_windows(windows: &[Window], refs: &[String]) -> Vec<usize> {
    let unique = |w: &Window| {
        let mut out: Vec<(usize, bool)> = Vec::new();
        for (k, desc) in w.clauses() {
            let r = refs.iter().position(|x| *x == k).map_or(0, |i| i + 1);
            if !out.contains(&(r, desc)) {
                out.push((r, desc));
            }
        }
        out
    };
    let mut active: Vec<(usize, Vec<(usize, bool)>)> =
        windows.iter().enumerate().filter(|(_, w)| !w.calls.is_empty()).map(|(i, w)| (i, unique(w))).collect();
    let cmp = |a: &[(usize, bool)], b: &[(usize, bool)]| {
        for (x, y) in a.iter().zip(b) {
            let o = y.0.cmp(&x.0).then(y.1.cmp(&x.1));
            if o != std::cmp::Ordering::Equal {
                return o;
            }
        }
        b.len().cmp(&a.len())
    };
    // A stable sort, as pg_qsort's insertion sort for fewer than 7 windows.
    active.sort_by(|a, b| cmp(&a.1, &b.1));
    active.into_iter().map(|(i, _)| i).collect()
}

/// The sort group references in the order the parser assigns them: ORDER BY's
/// expressions, GROUP BY's, then each window's ORDER BY and PARTITION BY
/// (`addTargetToSortList` gives an expression its reference the first time a clause
/// uses it); the resjunk entries of the target list come in the same order.
fn sort_group_refs(q: &ast::Query, windows: &[Window]) -> Vec<String> {
    let mut refs: Vec<String> = Vec::new();
    let order = q.order_by.iter().flat_map(|o| o.exprs.iter().map(|e| expr_key(&e.expr)));
    let group = group_by(q).into_iter().map(expr_key);
    // `transformWindowDefinitions` transforms a window's ORDER BY before its PARTITION
    // BY (which reuses the ORDER BY's references).
    let window = windows.iter().flat_map(|w| {
        let order = w.order.iter().map(|o| expr_key(&o.expr));
        order.chain(w.partition.iter().map(|e| expr_key(e))).collect::<Vec<_>>()
    });
    for k in order.chain(group).chain(window) {
        if !refs.contains(&k) {
            refs.push(k);
        }
    }
    refs
}

/// The query's GROUP BY expressions.
fn group_by(q: &ast::Query) -> Vec<&ast::Expr> {
    match q.body.as_ref() {
        SetExpr::Select(s) => match &s.group_by {
            ast::GroupByExpr::Expressions(g, _) => g.iter().collect(),
            _ => vec![],
        },
        _ => vec![],
    }
}

/// Where each select item goes: an input column (or, for `*`, several), or a window
/// function's result.
enum Slot {
    /// A plain item; true for `*` (or `t.*`).
    Plain(bool),
    Window(usize),
    /// An expression over window calls (its index among such items).
    Expr(usize),
}

/// A part of an expression over window calls that the input provides: a call (its
/// argument), or a column it reads (`pull_var_clause`).
enum Part<'q> {
    Call(&'q ast::Function),
    Column(&'q ast::Expr),
}

/// The parts of an expression over window calls, in walk order; what the sandbox
/// does not compute over a WindowAgg's output is refused by name: arithmetic
/// (`+ - * / %`), signs, parentheses, constants and columns only.
fn compound_parts<'q>(e: &'q ast::Expr, out: &mut Vec<Part<'q>>, at: Location) -> Result<(), FrontError> {
    use ast::Expr as E;
    match e {
        E::Function(f) if f.over.is_some() => out.push(Part::Call(f)),
        E::Nested(x) | E::UnaryOp { op: ast::UnaryOperator::Minus | ast::UnaryOperator::Plus, expr: x } => {
            compound_parts(x, out, at)?
        }
        E::BinaryOp { left, op, right } if arith(op).is_some() => {
            compound_parts(left, out, at)?;
            compound_parts(right, out, at)?;
        }
        E::Identifier(_) | E::CompoundIdentifier(_) => out.push(Part::Column(e)),
        E::Value(ast::Value::Number(..)) => {}
        _ => return Err(FrontError::unsupported(format!("a window function inside the expression {e}"), at)),
    }
    Ok(())
}

/// Is `e` arithmetic over columns (at least one) and constants, which the
/// projection over the top WindowAgg computes (a bare column or constant is not)?
fn flattenable(e: &ast::Expr) -> bool {
    if matches!(
        e,
        ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) | ast::Expr::Value(_) | ast::Expr::Nested(_)
    ) {
        return false;
    }
    let mut parts = Vec::new();
    compound_parts(e, &mut parts, Location::of(1, 1)).is_ok() && parts.iter().any(|p| matches!(p, Part::Column(_)))
}

fn count_calls(e: &ast::Expr) -> usize {
    let mut parts = Vec::new();
    let _ = compound_parts(e, &mut parts, Location::of(1, 1));
    parts.iter().filter(|p| matches!(p, Part::Call(_))).count()
}

fn arith(op: &ast::BinaryOperator) -> Option<crate::plan::Arith> {
    use crate::plan::Arith;
    Some(match op {
        ast::BinaryOperator::Plus => Arith::Plus,
        ast::BinaryOperator::Minus => Arith::Minus,
        ast::BinaryOperator::Multiply => Arith::Multiply,
        ast::BinaryOperator::Divide => Arith::Divide,
        ast::BinaryOperator::Modulo => Arith::Modulo,
        _ => return None,
    })
}

/// An expression over window calls as the projection over the top WindowAgg
/// computes it, with its type: each call its output column (`next_call` numbers
/// them), a column the input's, a constant coerced to the other operand's type as
/// `make_op` coerces an unknown-free literal (`'2'::numeric`, `'100'::double
/// precision`), two int4s combined by int4's operator, else int8's, numeric's or
/// float8's.
fn over_windows(
    e: &ast::Expr,
    next_call: &mut usize,
    out_col: &[usize],
    cols: &[crate::types::Column],
    col: &dyn Fn(&str) -> usize,
    at: Location,
) -> Result<(Expr, Option<crate::plan::SqlType>), FrontError> {
    use crate::plan::{BinOp, SqlType};
    use ast::Expr as E;
    let typed = |c: usize| (Expr::Col(c), cols.get(c).and_then(|x| x.sql_type.or(col_sql(x.ty))));
    Ok(match e {
        E::Function(f) if f.over.is_some() => {
            let c = out_col[*next_call];
            *next_call += 1;
            typed(c)
        }
        E::Nested(x) | E::UnaryOp { op: ast::UnaryOperator::Plus, expr: x } => {
            over_windows(x, next_call, out_col, cols, col, at)?
        }
        E::UnaryOp { op: ast::UnaryOperator::Minus, expr: x } => match constant(e) {
            Some(d) => const_typed(d),
            None => {
                let (x, t) = over_windows(x, next_call, out_col, cols, col, at)?;
                (Expr::bin(BinOp::Minus, Expr::int(0), x), t)
            }
        },
        E::Identifier(_) | E::CompoundIdentifier(_) => typed(col(&expr_key(e))),
        E::Value(_) => const_typed(constant(e).ok_or_else(|| FrontError::unsupported("this constant", at))?),
        E::BinaryOp { left, op, right } => {
            let a = arith(op).ok_or_else(|| FrontError::unsupported("this operator over a window function", at))?;
            let (l, lt) = over_windows(left, next_call, out_col, cols, col, at)?;
            let (r, rt) = over_windows(right, next_call, out_col, cols, col, at)?;
            let wider = |x: Option<SqlType>| match x {
                Some(SqlType::Float8) => 3,
                Some(SqlType::Numeric) => 2,
                Some(SqlType::Int8) | None => 1,
                _ => 0,
            };
            let ty = if wider(lt) >= wider(rt) { lt } else { rt };
            let coerce = |x: Expr| match (x, ty) {
                (Expr::Const(Datum::Int(v)), Some(SqlType::Numeric)) => {
                    Expr::Const(Datum::numeric(Numeric::from_i64(v)))
                }
                (Expr::Const(Datum::Int(v)), Some(SqlType::Float8)) => Expr::Const(Datum::Float(v as f64)),
                (x, _) => x,
            };
            let (l, r) = (coerce(l), coerce(r));
            let op = match (wider(lt), wider(rt)) {
                (0, 0) => BinOp::IntNarrow(a, SqlType::Int4),
                _ => match a {
                    crate::plan::Arith::Plus => BinOp::Plus,
                    crate::plan::Arith::Minus => BinOp::Minus,
                    crate::plan::Arith::Multiply => BinOp::Multiply,
                    crate::plan::Arith::Divide => BinOp::Divide,
                    crate::plan::Arith::Modulo => BinOp::Modulo,
                },
            };
            let ty = if wider(ty) == 0 { Some(SqlType::Int4) } else { ty.or(Some(SqlType::Int8)) };
            (Expr::bin(op, l, r), ty)
        }
        _ => return Err(FrontError::unsupported(format!("a window function inside the expression {e}"), at)),
    })
}

fn col_sql(t: ColType) -> Option<crate::plan::SqlType> {
    use crate::plan::SqlType;
    match t {
        ColType::Numeric => Some(SqlType::Numeric),
        ColType::Float => Some(SqlType::Float8),
        ColType::Text => Some(SqlType::Text),
        _ => None,
    }
}

fn const_typed(d: Datum) -> (Expr, Option<crate::plan::SqlType>) {
    use crate::plan::SqlType;
    let t = match &d {
        Datum::Int(_) => Some(SqlType::Int4),
        Datum::Numeric(_) => Some(SqlType::Numeric),
        Datum::Text(_) => Some(SqlType::Text),
        _ => None,
    };
    (Expr::Const(d), t)
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
    let mut items = Vec::new();
    let mut compound: Vec<(&SelectItem, &ast::Expr, Vec<Flat>)> = Vec::new();
    let mut plain: Vec<SelectItem> = Vec::new();
    for item in &s.projection {
        match item_expr(item).and_then(window_call) {
            Some(f) => {
                slots.push(Slot::Window(calls.len()));
                calls.push(parse_call(f, at)?);
                items.push(item);
            }
            None if item_expr(item).is_some_and(contains_window_call) => {
                // An expression over window functions: computed by the projection
                // over the top WindowAgg, each call a column of it.
                let e = item_expr(item).unwrap_or(&ast::Expr::Value(ast::Value::Null));
                let mut parts = Vec::new();
                compound_parts(e, &mut parts, at)?;
                let mut flats = Vec::new();
                for part in parts {
                    match part {
                        Part::Call(f) => {
                            let call = parse_call(f, at)?;
                            flats.extend(call.arg.map(Flat::Arg));
                            calls.push(call);
                            items.push(item);
                        }
                        Part::Column(c) => flats.push(Flat::Arg(c)),
                    }
                }
                slots.push(Slot::Expr(compound.len()));
                compound.push((item, e, flats));
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
    let windows = resolve_windows(s, &calls, at)?;
    let refs = sort_group_refs(q, &windows);
    let active = active_windows(&windows, &refs);
    // The input target: the active windows' clause expressions in target list order
    // (each once), then the rest.
    // GROUP BY's expressions are such entries too (`make_window_input_target` keeps
    // them whole: the Agg below computes them).
    let mut clause: Vec<&ast::Expr> = Vec::new();
    for k in &refs {
        let mut found = group_by(q).into_iter().chain(active.iter().flat_map(|&i| {
            let w = &windows[i];
            w.partition.iter().copied().chain(w.order.iter().map(|o| &o.expr))
        }));
        if let Some(e) = found.find(|e| expr_key(e) == *k) {
            clause.push(e);
        }
    }
    // A plain item that is arithmetic over columns (not a window clause's or GROUP
    // BY's expression) is computed over the top WindowAgg from the columns it reads
    // (`make_window_input_target` flattens it: `pull_var_clause`).
    let clause_keys: Vec<String> = clause.iter().map(|e| expr_key(e)).collect();
    let old_plain = std::mem::take(&mut plain);
    let mut j = 0;
    for (pos, slot) in slots.iter_mut().enumerate() {
        let Slot::Plain(star) = *slot else { continue };
        let item = &s.projection[pos];
        let flat = item_expr(item).filter(|e| !star && flattenable(e) && !clause_keys.contains(&expr_key(e)));
        match flat {
            Some(e) => {
                let mut parts = Vec::new();
                compound_parts(e, &mut parts, at)?;
                let flats = parts
                    .into_iter()
                    .filter_map(|p| match p {
                        Part::Column(c) => Some(Flat::Arg(c)),
                        Part::Call(_) => None,
                    })
                    .collect();
                *slot = Slot::Expr(compound.len());
                compound.push((item, e, flats));
            }
            None => plain.push(old_plain[j].clone()),
        }
        j += 1;
    }
    let mut rest: Vec<Flat> = Vec::new();
    let mut j = 0;
    for slot in &slots {
        match slot {
            Slot::Plain(_) => {
                rest.push(Flat::Item(j));
                j += 1;
            }
            Slot::Window(k) => rest.extend(calls[*k].arg.map(Flat::Arg)),
            Slot::Expr(i) => rest.extend(compound[*i].2.iter().copied()),
        }
    }
    let input = window_input(&plain, &clause, &rest);
    let mut query = q.clone();
    if let SetExpr::Select(is) = query.body.as_mut() {
        is.projection = input.items.clone();
        is.named_window.clear();
    }
    // The input ordered on the first window's pathkeys: the planner's cheapest
    // sorted input (`create_window_paths` over the presorted paths and the cheapest).
    let first_keys = active.first().map(|&i| window_pathkeys(&windows[i])).unwrap_or_default();
    query.order_by = match first_keys.is_empty() {
        true => None,
        false => Some(ast::OrderBy {
            exprs: first_keys
                .iter()
                .map(|(e, desc)| ast::OrderByExpr {
                    expr: (*e).clone(),
                    asc: desc.then_some(false),
                    nulls_first: None,
                    with_fill: None,
                })
                .collect(),
            interpolate: None,
        }),
    };
    (query.limit, query.offset) = (None, None);
    let limit = constant_limit(q, at)?;
    let sub = plan_input(coord, &query, q, text, servers, depth + 1)?;
    let width = sub.columns.len();
    // A `*` among the items: its columns are the input's first ones (see `window_input`).
    let shift = width.saturating_sub(input.items.len());
    let find = |k: &str| input.keys.iter().position(|x| x.as_deref() == Some(k)).map(|i| i + shift);
    let col = |k: &str| find(k).unwrap_or(0);
    let keys_of = |w: &Window| -> Vec<SortKey> {
        window_pathkeys(w).iter().map(|(e, desc)| SortKey { expr: Expr::Col(col(&expr_key(e))), desc: *desc }).collect()
    };
    // Each call's output column: after the input, the calls of the windows below.
    let mut out_col = vec![0; calls.len()];
    let mut next = width;
    for &i in &active {
        for &k in &windows[i].calls {
            out_col[k] = next;
            next += 1;
        }
    }
    let resjunk: Vec<usize> = clause.iter().map(|e| col(&expr_key(e))).collect();
    let mut stack: Vec<Stage> = Vec::new();
    let mut current: Vec<SortKey> = keys_of(&windows[active[0]]);
    for (n, &i) in active.iter().enumerate() {
        let w = &windows[i];
        let keys = keys_of(w);
        // `pathkeys_count_contained_in`: sorted when the window's keys are a prefix
        // of the input's order; else a Sort, or an Incremental Sort over a sorted
        // prefix (`create_one_window_path`).
        let sorted = keys.len() <= current.len() && keys[..] == current[..keys.len()];
        let sort = match sorted || n == 0 {
            true => None,
            false => {
                let presorted = keys.iter().zip(&current).take_while(|(a, b)| a == b).count();
                current = keys.clone();
                Some((keys, presorted))
            }
        };
        let funcs = w
            .calls
            .iter()
            .map(|&k| {
                let c = &calls[k];
                let arg = c.arg.map(|e| col(&expr_key(e)));
                let extra = call_extra(c, arg.map(|a| sub.columns[a].ty), at)?;
                Ok(WindowFunc { kind: c.kind, arg, extra })
            })
            .collect::<Result<Vec<_>, FrontError>>()?;
        let frame = parse_frame(w.frame, w.order.len(), at)?;
        if let Some(e) = w.order.first().filter(|_| frame_has_range_offset(&frame)) {
            let ty = sub.columns[col(&expr_key(&e.expr))].ty;
            if !matches!(ty, ColType::Int | ColType::Numeric) {
                return Err(FrontError::unsupported("RANGE offsets over a column not integer or numeric", at));
            }
        }
        let part: Vec<usize> = w.partition.iter().map(|e| col(&expr_key(e))).collect();
        let order: Vec<SortKey> = w
            .order
            .iter()
            .map(|o| SortKey { expr: Expr::Col(col(&expr_key(&o.expr))), desc: o.asc == Some(false) })
            .collect();
        let top = n + 1 == active.len();
        let resjunk = if top { resjunk.clone() } else { vec![] };
        stack.push(Stage { sort, funcs, part, order, frame, resjunk });
    }
    // The top WindowAgg's output columns (the input's, then each window's calls),
    // for the types of the expressions over them.
    let mut top_cols = sub.columns.clone();
    top_cols.resize(next, crate::types::Column::new("", ColType::Int));
    for (k, c) in calls.iter().enumerate() {
        let arg = c.arg.map(|e| col(&expr_key(e)));
        top_cols[out_col[k]] = WindowFunc { kind: c.kind, arg, extra: vec![] }.output_column(&sub.columns);
    }
    let mut exprs = Vec::new();
    let first_call: Vec<usize> = {
        // Each compound item's first call: the calls are numbered in select list order.
        let mut out = vec![0; compound.len()];
        let mut k = 0;
        for slot in &slots {
            match slot {
                Slot::Window(_) => k += 1,
                Slot::Expr(i) => {
                    out[*i] = k;
                    k += count_calls(compound[*i].1);
                }
                Slot::Plain(_) => {}
            }
        }
        out
    };
    for (i, (_, e, _)) in compound.iter().enumerate() {
        let mut next_call = first_call[i];
        let (x, _) = over_windows(e, &mut next_call, &out_col, &top_cols, &col, at)?;
        exprs.push(x);
    }
    let targets = select_targets(&slots, &items, &calls, &out_col, &sub, &input, shift, &compound, &exprs);
    // ORDER BY: given by the windows' sorts, else a Sort above the top WindowAgg
    // (`create_ordered_paths` over the window paths).
    let (above, order_keys) = match query_order(q, &current, &targets, &find, at) {
        Ok(keys) => (None, keys),
        Err(refused) => match order_above(q, &targets, &find) {
            Some((keys, out)) => (Some(keys), out),
            None => return Err(refused),
        },
    };
    let plan = over_input(sub.plan, |input| {
        let mut plan = input;
        for st in stack {
            plan = match st.sort {
                None => plan,
                Some((keys, 0)) => Plan::Sort { child: Box::new(plan), keys },
                Some((keys, presorted)) => Plan::IncrementalSort { child: Box::new(plan), keys, presorted },
            };
            let Stage { funcs, part, order, frame, resjunk, .. } = st;
            plan = Plan::WindowAgg { child: Box::new(plan), funcs, part, order, frame, resjunk };
        }
        let mut projected = Plan::Result { child: Box::new(plan), filter: None, targets: Some(targets) };
        if let Some(keys) = above {
            projected = Plan::Sort { child: Box::new(projected), keys };
        }
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

/// Plans the windows' input. Under a LIMIT PostgreSQL chooses the cheapest path for
/// the fraction of rows the LIMIT reads (`get_cheapest_fractional_path` over window
/// paths built on every presorted input path), so a presorted input with a cheaper
/// start (a Merge Append of remotely sorted scans) wins over a Sort: the input is
/// planned with the query's LIMIT for that choice, and the Limit node taken off (a
/// LIMIT the planner pushed into a remote query instead, which the input must not
/// have, makes it plan the input again without).
fn plan_input(
    coord: &Node,
    input: &ast::Query,
    q: &ast::Query,
    text: &str,
    servers: &mut Vec<String>,
    depth: usize,
) -> Result<Planned, FrontError> {
    if q.limit.is_some() {
        let mut limited = input.clone();
        (limited.limit, limited.offset) = (q.limit.clone(), q.offset.clone());
        let before = servers.len();
        let mut sub = plan_query_into(coord, &limited, text, servers, depth)?;
        let stripped = match sub.plan {
            Plan::Limit { child, .. } => Some(*child),
            Plan::WithInitPlans { child, init_plans } => match *child {
                Plan::Limit { child, .. } => Some(Plan::WithInitPlans { child, init_plans }),
                other => {
                    sub.plan = Plan::WithInitPlans { child: Box::new(other), init_plans };
                    None
                }
            },
            other => {
                sub.plan = other;
                None
            }
        };
        if let Some(plan) = stripped {
            return Ok(Planned { plan, ..sub });
        }
        servers.truncate(before);
    }
    plan_query_into(coord, input, text, servers, depth)
}

/// One WindowAgg of the stack, bottom first: the Sort below it (its keys and how
/// many of them the input is already sorted on), and the node's own parts.
struct Stage {
    sort: Option<(Vec<SortKey>, usize)>,
    funcs: Vec<WindowFunc>,
    part: Vec<usize>,
    order: Vec<SortKey>,
    frame: WinFrame,
    resjunk: Vec<usize>,
}

/// `make_pathkeys_for_window`: PARTITION BY's expressions ascending, then ORDER BY's,
/// each expression once (a redundant pathkey is dropped: ORDER BY a PARTITION BY
/// column).
fn window_pathkeys<'q>(w: &Window<'q>) -> Vec<(&'q ast::Expr, bool)> {
    let mut out: Vec<(&ast::Expr, bool)> = Vec::new();
    let all = w.partition.iter().map(|e| (*e, false)).chain(w.order.iter().map(|o| (&o.expr, o.asc == Some(false))));
    for (e, desc) in all {
        if !out.iter().any(|(x, _)| expr_key(x) == expr_key(e)) {
            out.push((e, desc));
        }
    }
    out
}

fn frame_has_range_offset(f: &WinFrame) -> bool {
    !f.rows && [&f.start, &f.end].iter().any(|b| matches!(b, FrameBound::Preceding(_) | FrameBound::Following(_)))
}

/// A call's constant arguments as the WindowAgg evaluates them: lag/lead's default
/// coerced to the value's type (an integer default of a numeric value is a numeric,
/// `'0'::numeric`); a default of another type is refused by name.
fn call_extra(c: &Call, arg_ty: Option<ColType>, at: Location) -> Result<Vec<Expr>, FrontError> {
    let mut out = Vec::with_capacity(c.extra.len());
    for (i, d) in c.extra.iter().enumerate() {
        let d = match (i, c.kind, d, arg_ty) {
            (1, WinKind::Lag | WinKind::Lead, Datum::Int(v), Some(ColType::Numeric)) => {
                Datum::numeric(Numeric::from_i64(*v))
            }
            (1, WinKind::Lag | WinKind::Lead, Datum::Null, _) => Datum::Null,
            (1, WinKind::Lag | WinKind::Lead, d, Some(ty)) if datum_type(d) != Some(ty) => {
                return Err(FrontError::unsupported("a default of lag() / lead() of another type than its value", at));
            }
            (_, _, d, _) => d.clone(),
        };
        out.push(Expr::Const(d));
    }
    Ok(out)
}

fn datum_type(d: &Datum) -> Option<ColType> {
    match d {
        Datum::Int(_) => Some(ColType::Int),
        Datum::Numeric(_) => Some(ColType::Numeric),
        Datum::Text(_) => Some(ColType::Text),
        Datum::Float(_) => Some(ColType::Float),
        Datum::Bool(_) => Some(ColType::Bool),
        Datum::Null => None,
    }
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

/// An ORDER BY the windows' sorts do not give, as the keys of a Sort over the select
/// list's output, and those keys as output columns: each key an output column, by
/// its name (`findTargetlistEntrySQL92`: an output column's name or alias first), its
/// position, or its expression (a plain item's). None when a key is none of these
/// (or has NULLS FIRST / LAST).
fn order_above(
    q: &ast::Query,
    targets: &[(Expr, String)],
    col: &dyn Fn(&str) -> Option<usize>,
) -> Option<(Vec<SortKey>, Vec<usize>)> {
    let order_by = q.order_by.as_ref()?;
    let mut keys = Vec::new();
    let mut out = Vec::new();
    for o in &order_by.exprs {
        if o.nulls_first.is_some() {
            return None;
        }
        let by_name = match &o.expr {
            ast::Expr::Identifier(i) => {
                let name = i.value.to_lowercase();
                let mut found = targets.iter().enumerate().filter(|(_, (_, n))| *n == name);
                match (found.next(), found.next()) {
                    (Some((k, _)), None) => Some(k),
                    _ => None,
                }
            }
            ast::Expr::Value(ast::Value::Number(n, _)) => {
                n.parse::<usize>().ok().filter(|&k| k >= 1 && k <= targets.len()).map(|k| k - 1)
            }
            _ => None,
        };
        let k = match by_name {
            Some(k) => k,
            None => {
                let c = col(&expr_key(&o.expr))?;
                targets.iter().position(|(e, _)| *e == Expr::Col(c))?
            }
        };
        keys.push(SortKey { expr: Expr::Col(k), desc: o.asc == Some(false) });
        out.push(k);
    }
    Some((keys, out))
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
/// rest of the select list and the functions' arguments, in target list order
/// (`pull_var_clause` over the remaining entries), each once. A `*` item goes
/// first, whole, and the rest after it (`keys` None for it): the sandbox does not
/// expand it here.
struct WindowInput {
    items: Vec<SelectItem>,
    keys: Vec<Option<String>>,
    /// Each plain select item's index in `items`.
    plain_at: Vec<usize>,
}

fn window_input(plain: &[SelectItem], clause: &[&ast::Expr], rest: &[Flat]) -> WindowInput {
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
    // The rest in target list order: a plain item, or a call's argument
    // (`pull_var_clause` over the flattenable entries, recursing into WindowFuncs).
    for entry in rest {
        match *entry {
            Flat::Item(j) if plain_keys[j].is_some() && !referenced(&plain_keys[j]) => {
                w.plain_at[j] = w.items.len();
                w.items.push(plain[j].clone());
                w.keys.push(plain_keys[j].clone());
            }
            Flat::Item(_) => {}
            Flat::Arg(e) => add(&mut w, e),
        }
    }
    w
}

/// A select-list entry the WindowAgg's input gets after the windows' clause
/// expressions: a plain item (its index among them) or a window call's argument.
#[derive(Clone, Copy)]
enum Flat<'q> {
    Item(usize),
    Arg(&'q ast::Expr),
}

/// The select list over the WindowAgg's output (the input's `width` columns, then one
/// per call); a `*` item's columns are the input's first `shift` + 1. A call is named
/// as PostgreSQL names it (its alias, else the function's name).
fn select_targets(
    slots: &[Slot],
    items: &[&SelectItem],
    calls: &[Call],
    out_col: &[usize],
    sub: &Planned,
    input: &WindowInput,
    shift: usize,
    compound: &[(&SelectItem, &ast::Expr, Vec<Flat>)],
    exprs: &[Expr],
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
                let name = match items[*k] {
                    SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                    _ => calls[*k].kind.name().to_string(),
                };
                targets.push((Expr::Col(out_col[*k]), name));
            }
            Slot::Expr(i) => {
                let name = match compound[*i].0 {
                    SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                    _ => "?column?".to_string(),
                };
                targets.push((exprs[*i].clone(), name));
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

    /// The windows of a select list, resolved and ordered as PostgreSQL stacks them.
    fn stacked(sql: &str) -> Vec<usize> {
        let s = select(sql);
        let calls: Vec<Call> = s
            .projection
            .iter()
            .filter_map(|i| item_expr(i).and_then(window_call))
            .map(|f| parse_call(f, Location::of(1, 1)).unwrap())
            .collect();
        let windows = resolve_windows(&s, &calls, Location::of(1, 1)).unwrap();
        let q = ast::Query { body: Box::new(SetExpr::Select(Box::new(s.clone()))), ..empty_query() };
        active_windows(&windows, &sort_group_refs(&q, &windows))
    }

    fn empty_query() -> ast::Query {
        let mut st = Parser::parse_sql(&PostgreSqlDialect {}, "select 1").unwrap();
        let ast::Statement::Query(q) = st.remove(0) else { panic!("a query") };
        *q
    }

    /// `select_active_windows` (as PostgreSQL 15 plans these, EXPLAIN checked): the
    /// window whose first clause has the higher sort group reference goes first (at
    /// the bottom); equal clauses keep their order; a prefix goes after the longer.
    #[test]
    fn windows_stack_in_common_prefix_order() {
        assert_eq!(stacked("select id, row_number() over (order by id), rank() over (order by grp) from h"), [1, 0]);
        assert_eq!(
            stacked(
                "select id, row_number() over (partition by grp order by id), rank() over (partition by grp), \
                 sum(id) over (order by grp, id) from h"
            ),
            [0, 2, 1]
        );
        // A named window and an identical unnamed one stay two windows.
        assert_eq!(
            stacked("select row_number() over w, rank() over (order by id) from h window w as (order by id)"),
            [0, 1]
        );
        // Identical unnamed windows are one.
        assert_eq!(stacked("select row_number() over (order by id), rank() over (order by id) from h"), [0]);
        // ORDER BY's expressions get their references before PARTITION BY's: grp's is
        // the higher, so the window ordered by grp goes first.
        assert_eq!(
            stacked("select row_number() over (partition by id order by grp), rank() over (order by id) from h"),
            [0, 1]
        );
        // DESC sorts before ASC on the same expression.
        assert_eq!(stacked("select row_number() over (order by id), rank() over (order by id desc) from h"), [1, 0]);
    }

    /// `OVER (w ORDER BY …)` copies w's PARTITION BY; PostgreSQL's errors otherwise.
    #[test]
    fn copied_windows() {
        let s = select("select sum(id) over (w order by id) from h window w as (partition by grp)");
        let f = window_call(item_expr(&s.projection[0]).unwrap()).unwrap();
        let calls = vec![parse_call(f, Location::of(1, 1)).unwrap()];
        let w = resolve_windows(&s, &calls, Location::of(1, 1)).unwrap();
        assert_eq!(w[1].clauses(), [("grp".to_string(), false), ("id".to_string(), false)]);
        let s = select("select sum(id) over (w order by id) from h window w as (order by grp)");
        let f = window_call(item_expr(&s.projection[0]).unwrap()).unwrap();
        let calls = vec![parse_call(f, Location::of(1, 1)).unwrap()];
        let err = resolve_windows(&s, &calls, Location::of(1, 1)).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("cannot override ORDER BY clause of window \"w\""), "{err}");
    }

    /// Frames as written: the shorthand ends at the current row; PostgreSQL's errors.
    #[test]
    fn frames_parse_and_check() {
        let frame = |sql: &str| {
            let s = select(sql);
            let f = window_call(item_expr(&s.projection[0]).unwrap()).unwrap();
            let WindowType::WindowSpec(spec) = f.over.as_ref().unwrap() else { panic!("a spec") };
            parse_frame(spec.window_frame.as_ref(), spec.order_by.len(), Location::of(1, 1)).map_err(|e| e.to_string())
        };
        let f = frame("select sum(id) over (order by id rows 2 preceding) from h").unwrap();
        assert_eq!((f.rows, f.end), (true, FrameBound::CurrentRow));
        assert_eq!(f.start, FrameBound::Preceding(Expr::Const(Datum::Int(2))));
        let e = frame("select sum(id) over (order by id rows between current row and 1 preceding) from h");
        assert!(e.unwrap_err().contains("frame starting from current row cannot have preceding rows"));
        let e = frame("select sum(id) over (order by id, grp range between 1 preceding and current row) from h");
        assert!(e.unwrap_err().contains("requires exactly one ORDER BY column"));
        let e = frame("select sum(id) over (order by id groups 1 preceding) from h");
        assert!(e.unwrap_err().contains("not supported by the sandbox: GROUPS"));
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
        let w = resolve_windows(&s, std::slice::from_ref(&call), Location::of(1, 1)).unwrap();
        let clause: Vec<&ast::Expr> =
            w[0].partition.iter().copied().chain(w[0].order.iter().map(|o| &o.expr)).collect();
        let w = window_input(&plain, &clause, &[Flat::Item(0), Flat::Item(1), Flat::Arg(call.arg.unwrap())]);
        let keys: Vec<&str> = w.keys.iter().map(|k| k.as_deref().unwrap()).collect();
        assert_eq!(keys, ["id", "grp", "name", "amount"]);
        assert_eq!(w.plain_at, [0, 2]);
    }

    /// What the sandbox does not run is refused by name, not planned wrong.
    #[test]
    fn refused_by_name() {
        for (sql, what) in [
            ("select string_agg(name, ',') over (order by id) from h", "window function string_agg()"),
            ("select lag(id, grp) over (order by id) from h", "an argument of lag() other than a constant"),
            ("select count(id) filter (where id > 1) over () from h", "FILTER"),
        ] {
            let s = select(sql);
            let f = window_call(item_expr(&s.projection[0]).unwrap()).unwrap();
            let err = parse_call(f, Location::of(1, 1)).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(err.contains(what), "{sql}: {err}");
        }
    }
}
