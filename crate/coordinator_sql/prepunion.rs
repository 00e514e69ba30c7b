//! Set operations (`UNION [ALL]`, `INTERSECT [ALL]`, `EXCEPT [ALL]`) planned as
//! PostgreSQL 15's `prepunion.c` plans them.
//!
//! The tree of set operations is walked from the top (`recurse_set_operations`); each
//! leaf, a `SELECT` or a parenthesized query with its own ORDER BY / LIMIT, is planned
//! as a query of its own (`planner::plan_query_into`). Then:
//!
//! - **UNION [ALL]** (`generate_union_paths`): the children of a UNION that are UNIONs
//!   too are folded into it when they have the same ALL flag, or when the child is
//!   UNION ALL (`plan_union_children`); their plans go under one Append (a dummy child,
//!   a constant-false branch, is left out, as `set_append_rel_size` skips it). Without
//!   ALL, duplicates are removed above the Append (`make_union_unique`): a
//!   HashAggregate on every column, or a Unique over a Sort on every column, whichever
//!   `choose_hashed_setop` finds cheaper.
//! - **INTERSECT / EXCEPT [ALL]** (`generate_nonunion_paths`): each input gets a flag
//!   column (0 for the left input, 1 for the right), a leaf's through a Subquery Scan
//!   (`"*SELECT* n"`, n counting leaves from the left, as the range table does), a set
//!   operation's in its own target list; both go under an Append, the input with fewer
//!   estimated groups first for INTERSECT (a smaller hash table), the left one first
//!   for EXCEPT; above it a SetOp: hashed (HashSetOp), or sorted over a Sort on every
//!   column and the flag, chosen by `choose_hashed_setop`.
//!
//! A leaf whose plan outputs more than its select list (ORDER BY on a column it does
//! not return) keeps a Subquery Scan that projects it (`set_subqueryscan_references`
//! removes the others, `trivial_subqueryscan`).
//!
//! Invariants:
//! - every input has as many columns as the first, of the same types; the output's
//!   names are the first (leftmost) leaf's;
//! - a SetOp's input rows carry the flag in the column after the query's columns, and
//!   the SetOp returns the query's columns only;
//! - nesting is bounded by `planner::MAX_NESTING`, as for subqueries.
//!
//! Where it departs from PostgreSQL: the branches' column types must match exactly
//! (PostgreSQL resolves a common type, `select_common_type`, and casts); the Sort
//! below a Unique or SetOp sorts on every column in ascending order as PostgreSQL's,
//! with NULLs last.

use sqlparser::ast::{self, SetExpr};
use sqlparser::tokenizer::Location;

use super::catalog::Node;
use super::planner::{live_members, plan_over, plan_query_into, query_location, wrapper_query, Planned, MAX_NESTING};
use super::{parse_coerce, FrontError};
use crate::plan::costsize::{cost_plan, cost_tuplesort, CostParams, Estimate};
use crate::plan::stats::type_avg_width;
use crate::plan::{AggStrategy, Expr, Func, Plan, SetOpCmd, SetOpStrategy, SortKey, SqlType};
use crate::types::{ColType, Column, Datum};

/// One input of a set operation, planned.
struct Input {
    plan: Plan,
    columns: Vec<Column>,
    /// A leaf (a query of its own) or a set operation: only a leaf's flag goes
    /// through a Subquery Scan.
    leaf: bool,
    /// PostgreSQL's estimate of its distinct rows (`pNumGroups`): for a leaf without
    /// grouping `estimate_num_groups` over its columns, else its rows.
    groups: f64,
}

/// An input of INTERSECT / EXCEPT with its flag column.
struct Flagged {
    plan: Plan,
    rows: f64,
    columns: Vec<Column>,
    groups: f64,
}

/// What the walk carries: where to plan, the leaves numbered so far.
struct SetOpPlanner<'a> {
    coord: &'a Node,
    text: &'a str,
    servers: &'a mut Vec<String>,
    depth: usize,
    /// Leaves seen so far, left to right: the next Subquery Scan is `*SELECT* (n+1)`.
    leaves: usize,
    /// The query's LIMIT, as rows (PostgreSQL's `root->tuple_fraction` when ≥ 1).
    limit_rows: Option<f64>,
    at: Location,
    /// The whole query: a SELECT branch is planned as a copy of it with that body and
    /// nothing else.
    template: &'a ast::Query,
    /// The set operation's column types, resolved before any leaf is planned
    /// (`parse_coerce.rs`): each leaf is coerced to them.
    col_types: Vec<SqlType>,
    /// The EXPLAIN names the branches planned so far took: a later branch's relation
    /// of the same name gets the next free `_N` (`subselect::take_free_scan_names`).
    scan_names: Vec<String>,
}

/// `plan_set_operations`: the query `q` whose body is a set operation, with its ORDER
/// BY / LIMIT over the whole.
pub(super) fn plan_set_operations(
    coord: &Node,
    q: &ast::Query,
    text: &str,
    servers: &mut Vec<String>,
    depth: usize,
) -> Result<Planned, FrontError> {
    let at = query_location(q);
    let limit_rows = limit_rows(q);
    let col_types = {
        let mut typing = |leaf: &SetExpr| -> Result<Vec<SqlType>, FrontError> {
            // A leaf the text does not type: planned on the side for its columns.
            let query = leaf_query(q, leaf, at)?;
            let planned = plan_query_into(coord, &query, text, &mut servers.clone(), depth + 2)?;
            Ok(planned.columns.iter().map(|c| planned_type(c.ty)).collect())
        };
        parse_coerce::resolve_set_operation(coord, q.body.as_ref(), &mut typing, at)?
    };
    let mut p = SetOpPlanner {
        coord,
        text,
        servers,
        depth,
        leaves: 0,
        limit_rows,
        at,
        template: q,
        col_types,
        scan_names: vec![],
    };
    let top = p.recurse_set_operations(q.body.as_ref(), depth + 1)?;
    let planned =
        Planned { plan: top.plan, columns: top.columns, servers: vec![], order_key: None, order_keys: vec![] };
    if q.order_by.is_none() && q.limit.is_none() && q.offset.is_none() && q.fetch.is_none() {
        return Ok(planned);
    }
    // ORDER BY / LIMIT of the whole set operation: a query over it, as over a subquery.
    let outer = wrapper_query(q, "unnamed_subquery", &planned.columns, at)?;
    plan_over(&outer, text, "unnamed_subquery", planned)
}

/// LIMIT + OFFSET of `q` as rows, when both are plain numbers.
fn limit_rows(q: &ast::Query) -> Option<f64> {
    let number = |e: &ast::Expr| match e {
        ast::Expr::Value(ast::Value::Number(n, _)) => n.parse::<f64>().ok(),
        _ => None,
    };
    let count = number(q.limit.as_ref()?)?;
    let offset = q.offset.as_ref().and_then(|o| number(&o.value)).unwrap_or(0.0);
    Some(count + offset)
}

/// A parenthesized part without ORDER BY / LIMIT of its own is just its body (the
/// parser keeps the parentheses; PostgreSQL's tree does not).
fn unparenthesized(e: &SetExpr) -> &SetExpr {
    match e {
        SetExpr::Query(inner)
            if inner.with.is_none()
                && inner.order_by.is_none()
                && inner.limit.is_none()
                && inner.offset.is_none()
                && inner.fetch.is_none() =>
        {
            unparenthesized(inner.body.as_ref())
        }
        other => other,
    }
}

impl SetOpPlanner<'_> {
    /// `cost_plan`'s estimate of a plan's top node, with the coordinator's settings.
    fn estimate(&self, plan: &Plan) -> Estimate {
        cost_plan(plan, self.coord, &self.params())[0]
    }

    fn params(&self) -> CostParams {
        CostParams::from_settings(&|n| self.coord.setting(n).map(str::to_string))
    }

    /// `recurse_set_operations`: a leaf planned as a query, or a set operation.
    fn recurse_set_operations(&mut self, e: &SetExpr, depth: usize) -> Result<Input, FrontError> {
        if depth > MAX_NESTING {
            return Err(FrontError::at("set operations nested too deeply", self.at));
        }
        match unparenthesized(e) {
            SetExpr::SetOperation { op: ast::SetOperator::Union, set_quantifier, .. } => {
                let all = is_all(set_quantifier, self.at)?;
                self.generate_union_paths(unparenthesized(e), all, depth)
            }
            SetExpr::SetOperation { op, set_quantifier, left, right } => {
                let all = is_all(set_quantifier, self.at)?;
                let cmd = match (op, all) {
                    (ast::SetOperator::Intersect, false) => SetOpCmd::Intersect,
                    (ast::SetOperator::Intersect, true) => SetOpCmd::IntersectAll,
                    (ast::SetOperator::Except, false) => SetOpCmd::Except,
                    (ast::SetOperator::Except, true) => SetOpCmd::ExceptAll,
                    (other, _) => return Err(FrontError::unsupported(format!("the set operation {other}"), self.at)),
                };
                self.generate_nonunion_paths(cmd, left, right, depth)
            }
            leaf => self.plan_leaf(leaf),
        }
    }

    /// A leaf: a SELECT, or a parenthesized query with its own ORDER BY / LIMIT.
    fn plan_leaf(&mut self, e: &SetExpr) -> Result<Input, FrontError> {
        // Its columns' types as written, its untyped literals coerced in place.
        let mut no_typing = |_: &SetExpr| Err(FrontError::at("a set operation's branch typed twice", self.at));
        let types = parse_coerce::leaf_types(self.coord, e, &mut no_typing).ok();
        let mut leaf = e.clone();
        if let Some(t) = &types {
            parse_coerce::coerce_unknown_literals(&mut leaf, t, &self.col_types);
        }
        let query = leaf_query(self.template, &leaf, self.at)?;
        self.leaves += 1;
        let mut planned = plan_query_into(self.coord, &query, self.text, self.servers, self.depth + 1)?;
        // Each branch is a subquery of its own, its range-table entries after the
        // earlier branches' in the statement's: set_rtable_names gives a relation that
        // one of those named already the next free name (a second `f` is `f_1`).
        super::subselect::take_free_scan_names(&mut planned.plan, &mut self.scan_names);
        let types = match types {
            Some(t) if t.len() == planned.columns.len() => t,
            _ => planned.columns.iter().map(|c| Some(planned_type(c.ty))).collect(),
        };
        let sort_keys = query.order_by.as_ref().map_or(0, |o| o.exprs.len());
        let grouped = match e {
            SetExpr::Select(s) => {
                s.having.is_some()
                    || s.distinct.is_some()
                    || !matches!(&s.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty())
            }
            _ => true,
        } || top_is_agg(&planned.plan);
        // ORDER BY a column the select list leaves out: the subquery's plan returns that
        // column too, and a Subquery Scan projects it away (not trivial).
        let plan = if planned.order_keys.len() < sort_keys {
            self.subquery_scan(planned.plan, &planned.columns, None)
        } else {
            planned.plan
        };
        let plan = self.coerce_leaf(plan, &planned.columns, &types);
        let groups = if grouped { self.estimate(&plan).rows } else { self.num_groups(&plan, planned.columns.len()) };
        Ok(Input { plan, columns: planned.columns, leaf: true, groups })
    }

    /// `estimate_num_groups` over every output column of `plan`: what a HashAggregate
    /// on them would estimate.
    fn num_groups(&self, plan: &Plan, ncols: usize) -> f64 {
        let agg = Plan::Agg {
            child: Box::new(plan.clone()),
            strategy: AggStrategy::Hashed,
            group_by: (0..ncols).map(Expr::Col).collect(),
            aggs: vec![],
            split: crate::plan::AggSplit::Simple,
        };
        self.estimate(&agg).rows
    }

    /// `generate_setop_tlist`'s coercions: a leaf column of another type than the set
    /// operation's is cast (implicitly) in a Subquery Scan over the leaf, which
    /// PostgreSQL keeps as it is not trivial. An untyped literal was coerced in place
    /// ([`parse_coerce::coerce_unknown_literals`]) and needs none.
    fn coerce_leaf(&self, plan: Plan, columns: &[Column], types: &[Option<SqlType>]) -> Plan {
        let cast = |i: usize| match types.get(i).copied().flatten() {
            Some(from) if self.col_types.get(i).is_some_and(|to| *to != from) => {
                Some(Func::Cast { from: Some(from), to: self.col_types[i], implicit: true })
            }
            _ => None,
        };
        if (0..columns.len()).all(|i| cast(i).is_none()) {
            return plan;
        }
        let coerced = |i: usize, e: Expr| match cast(i) {
            Some(f) => Expr::func(f, vec![e]),
            None => e,
        };
        match plan {
            Plan::SubqueryScan { child, alias, targets } => {
                let targets = targets.into_iter().enumerate().map(|(i, (e, n))| (coerced(i, e), n)).collect();
                Plan::SubqueryScan { child, alias, targets }
            }
            plan => {
                let targets =
                    columns.iter().enumerate().map(|(i, c)| (coerced(i, Expr::Col(i)), c.name.clone())).collect();
                Plan::SubqueryScan { child: Box::new(plan), alias: format!("*SELECT* {}", self.leaves), targets }
            }
        }
    }

    /// `Subquery Scan on "*SELECT* n"` over a leaf's plan (n is the leaf's number),
    /// returning its columns and, with `flag`, the flag constant after them.
    fn subquery_scan(&self, plan: Plan, columns: &[Column], flag: Option<i64>) -> Plan {
        let mut targets: Vec<(Expr, String)> =
            columns.iter().enumerate().map(|(i, c)| (Expr::Col(i), c.name.clone())).collect();
        if let Some(f) = flag {
            targets.push((Expr::Const(Datum::Int(f)), "flag".into()));
        }
        Plan::SubqueryScan { child: Box::new(plan), alias: format!("*SELECT* {}", self.leaves), targets }
    }

    /// `generate_union_paths`: one Append over the folded children; without ALL, the
    /// duplicates removed above it (`make_union_unique`).
    fn generate_union_paths(&mut self, e: &SetExpr, all: bool, depth: usize) -> Result<Input, FrontError> {
        let mut children = Vec::new();
        self.plan_union_children(e, all, depth, &mut children)?;
        let columns =
            check_columns(&children.iter().map(|c| &c.columns).collect::<Vec<_>>(), &self.col_types, "UNION", self.at)?;
        let plan = live_members(children.into_iter().map(|c| c.plan).collect());
        if all {
            let groups = self.estimate(&plan).rows;
            return Ok(Input { plan, columns, leaf: false, groups });
        }
        // PostgreSQL 15 takes the groups to be as many as the input rows (the worst case).
        let input = Estimate { width: setop_width(&columns, &self.col_types), ..self.estimate(&plan) };
        let ncols = columns.len();
        let hashed = self.choose_hashed_setop(&input, ncols, input.rows, input.rows);
        let plan = if hashed {
            Plan::Agg {
                child: Box::new(plan),
                strategy: AggStrategy::Hashed,
                group_by: (0..ncols).map(Expr::Col).collect(),
                aggs: vec![],
                split: crate::plan::AggSplit::Simple,
            }
        } else {
            let keys = (0..ncols).map(SortKey::asc).collect();
            Plan::Unique { child: Box::new(Plan::Sort { child: Box::new(plan), keys }), ncols }
        };
        Ok(Input { plan, columns, leaf: false, groups: input.rows })
    }

    /// `plan_union_children`: a child UNION with the same ALL flag, or a UNION ALL
    /// child, is folded into this one; anything else is planned as an input.
    fn plan_union_children(
        &mut self,
        e: &SetExpr,
        all: bool,
        depth: usize,
        out: &mut Vec<Input>,
    ) -> Result<(), FrontError> {
        if let SetExpr::SetOperation { op: ast::SetOperator::Union, set_quantifier, left, right } = unparenthesized(e) {
            let child_all = is_all(set_quantifier, self.at)?;
            // A chain of UNIONs is one list, not nesting: the depth stays (the parser's
            // nesting check bounds how deep the chain's tree can be).
            if child_all == all || child_all {
                self.plan_union_children(left, all, depth, out)?;
                return self.plan_union_children(right, all, depth, out);
            }
        }
        out.push(self.recurse_set_operations(e, depth + 1)?);
        Ok(())
    }

    /// `generate_nonunion_paths`: INTERSECT [ALL] / EXCEPT [ALL] of two inputs.
    fn generate_nonunion_paths(
        &mut self,
        cmd: SetOpCmd,
        left: &SetExpr,
        right: &SetExpr,
        depth: usize,
    ) -> Result<Input, FrontError> {
        let left = self.recurse_set_operations(left, depth + 1)?;
        let left = self.with_flag(left, 0);
        let right = self.recurse_set_operations(right, depth + 1)?;
        let right = self.with_flag(right, 1);
        let what = match cmd {
            SetOpCmd::Intersect | SetOpCmd::IntersectAll => "INTERSECT",
            SetOpCmd::Except | SetOpCmd::ExceptAll => "EXCEPT",
        };
        let columns = check_columns(&[&left.columns, &right.columns], &self.col_types, what, self.at)?;
        let (lrows, rrows) = (left.rows, right.rows);
        let (lgroups, rgroups) = (left.groups, right.groups);
        // EXCEPT keeps the left input first; INTERSECT puts first the input with fewer
        // groups (the hash table holds the first input's groups).
        let intersect = matches!(cmd, SetOpCmd::Intersect | SetOpCmd::IntersectAll);
        let (first, second, first_flag) =
            if !intersect || lgroups <= rgroups { (left.plan, right.plan, 0) } else { (right.plan, left.plan, 1) };
        let (groups, output_rows) = if intersect {
            let g = lgroups.min(rgroups);
            (g, if matches!(cmd, SetOpCmd::IntersectAll) { lrows.min(rrows) } else { g })
        } else {
            (lgroups, if matches!(cmd, SetOpCmd::ExceptAll) { lrows } else { lgroups })
        };
        let ncols = columns.len();
        let append = Plan::Append { children: vec![first, second], prune: None, ordered: false };
        // The flag is an int4 after the columns.
        let input = Estimate { width: setop_width(&columns, &self.col_types) + 4, ..self.estimate(&append) };
        let hashed = self.choose_hashed_setop(&input, ncols, groups, output_rows);
        let (strategy, child) = if hashed {
            (SetOpStrategy::Hashed, append)
        } else {
            // On the columns, not the flag (generate_setop_grouplist leaves out the
            // resjunk flag): SetOp counts a run's rows of each input whatever their order.
            let keys = (0..ncols).map(SortKey::asc).collect();
            (SetOpStrategy::Sorted, Plan::Sort { child: Box::new(append), keys })
        };
        let plan = Plan::SetOp { child: Box::new(child), cmd, strategy, ncols, first_flag };
        let rows = self.estimate(&plan).rows;
        Ok(Input { plan, columns, leaf: false, groups: rows })
    }

    /// An input with its flag column after its columns: a leaf through its Subquery
    /// Scan (`*SELECT* n`, n the number of the leaf planned last), a set operation in
    /// its own target list (a Result that EXPLAIN folds into it).
    fn with_flag(&self, input: Input, flag: i64) -> Flagged {
        let rows = self.estimate(&input.plan).rows;
        let flag_target = (Expr::Const(Datum::Int(flag)), "flag".to_string());
        let mut targets: Vec<(Expr, String)> =
            input.columns.iter().enumerate().map(|(i, c)| (Expr::Col(i), c.name.clone())).collect();
        targets.push(flag_target.clone());
        let plan = match (input.leaf, input.plan) {
            // A leaf that projects already: the flag goes into its Subquery Scan.
            (true, Plan::SubqueryScan { child, alias, mut targets }) => {
                targets.push(flag_target);
                Plan::SubqueryScan { child, alias, targets }
            }
            (true, plan) => {
                Plan::SubqueryScan { child: Box::new(plan), alias: format!("*SELECT* {}", self.leaves), targets }
            }
            (false, plan) => Plan::Result { child: Box::new(plan), filter: None, targets: Some(targets) },
        };
        Flagged { plan, rows, columns: input.columns, groups: input.groups }
    }

    /// `choose_hashed_setop`: hash when `enable_hashagg` is on, the table fits in
    /// `work_mem × hash_mem_multiplier`, and hashing costs no more than sorting the
    /// input and comparing neighbours (`cost_agg` against `cost_sort` + `cost_group`),
    /// weighed at the query's LIMIT as a fraction of the output rows.
    fn choose_hashed_setop(&self, input: &Estimate, ncols: usize, groups: f64, output_rows: f64) -> bool {
        if !self.coord.setting_on("enable_hashagg", true) {
            return false;
        }
        let p = self.params();
        let maxalign = |w: f64| (w / 8.0).ceil() * 8.0;
        // MAXALIGN(width) + MAXALIGN(SizeofMinimalTupleHeader).
        let entry = maxalign(input.width as f64) + 16.0;
        if entry * groups > p.work_mem * 1024.0 * p.hash_mem_multiplier {
            return false;
        }
        let per_col = p.cpu_operator_cost * ncols as f64;
        let hashed_startup = input.total + per_col * input.rows;
        let hashed = (hashed_startup, hashed_startup + p.cpu_tuple_cost * groups);
        let (sort_startup, sort_run) = cost_tuplesort(input.rows, input.width as f64, None, &p);
        let sorted_startup = input.total + sort_startup;
        let sorted = (sorted_startup, sorted_startup + sort_run + per_col * input.rows);
        let fraction = match self.limit_rows {
            Some(n) if output_rows > 0.0 => n / output_rows,
            _ => 0.0,
        };
        compare_fractional_path_costs(hashed, sorted, fraction) < 0.0
    }
}

/// The width of a set operation's rows as PostgreSQL sizes its target list: its
/// output columns are not a relation's, so each is its type's default width
/// (`get_typavgwidth`: 4 for an integer, 8 for a bigint, 32 for text and numeric),
/// whatever the branches' statistics say: the resolved types' widths.
fn setop_width(columns: &[Column], types: &[SqlType]) -> i64 {
    let ty = |(i, c): (usize, &Column)| match (types.get(i), c.ty) {
        (Some(t), _) => *t,
        (None, t) => planned_type(t),
    };
    columns.iter().enumerate().map(|c| type_avg_width(ty(c))).sum::<f64>() as i64
}

/// `compare_fractional_path_costs`: negative when the first (startup, total) is
/// cheaper at `fraction` of its rows (totals when the fraction is 0 or ≥ 1).
fn compare_fractional_path_costs(a: (f64, f64), b: (f64, f64), fraction: f64) -> f64 {
    if fraction <= 0.0 || fraction >= 1.0 {
        return if a.1 != b.1 { a.1 - b.1 } else { a.0 - b.0 };
    }
    let at = |c: (f64, f64)| c.0 + fraction * (c.1 - c.0);
    at(a) - at(b)
}

/// Is the quantifier ALL? DISTINCT is the default; BY NAME forms are not SQL of
/// PostgreSQL's.
fn is_all(q: &ast::SetQuantifier, at: Location) -> Result<bool, FrontError> {
    match q {
        ast::SetQuantifier::All => Ok(true),
        ast::SetQuantifier::None | ast::SetQuantifier::Distinct => Ok(false),
        other => Err(FrontError::unsupported(format!("set quantifier {other}"), at)),
    }
}

/// Does the plan aggregate at its top (under its Limit, Sort and projections)? Such a
/// leaf's rows are its groups (`recurse_set_operations`).
fn top_is_agg(plan: &Plan) -> bool {
    match plan {
        Plan::Limit { child, .. } | Plan::Sort { child, .. } | Plan::Result { child, .. } => top_is_agg(child),
        Plan::Agg { .. } => true,
        Plan::ForeignScan(f) => f.remote.aggregated(),
        _ => false,
    }
}

/// The inputs' columns agree in number: the first input's names, of the set
/// operation's resolved types (`parse_coerce.rs` checked that they can be matched).
fn check_columns(
    inputs: &[&Vec<Column>],
    types: &[SqlType],
    what: &str,
    at: Location,
) -> Result<Vec<Column>, FrontError> {
    let Some(first) = inputs.first() else { return Ok(vec![]) };
    if inputs.iter().any(|other| other.len() != first.len()) {
        return Err(FrontError::at(format!("each {what} query must have the same number of columns"), at));
    }
    Ok(first
        .iter()
        .enumerate()
        .map(|(i, c)| match types.get(i) {
            // An integer's width is the first branch's (the types here take an
            // unknown integer as int4, for costs).
            Some(t) if !t.is_integer() => Column::typed(&c.name, *t),
            Some(t) => Column { ty: t.col_type(), ..c.clone() },
            None => c.clone(),
        })
        .collect())
}

/// A SELECT branch as a query of its own: the whole query's copy with that body and
/// nothing else; a parenthesized one is its own query.
fn leaf_query(template: &ast::Query, e: &SetExpr, at: Location) -> Result<ast::Query, FrontError> {
    Ok(match e {
        SetExpr::Select(_) => {
            let mut q = template.clone();
            q.body = Box::new(e.clone());
            q.order_by = None;
            q.limit = None;
            q.offset = None;
            q.fetch = None;
            q
        }
        SetExpr::Query(inner) => inner.as_ref().clone(),
        SetExpr::Values(_) => return Err(FrontError::unsupported("VALUES as a set operation's branch", at)),
        _ => return Err(FrontError::unsupported("this set operation branch", at)),
    })
}

/// The SQL type of a planned column, where the text did not tell it (the sandbox's
/// integers are costed as int4).
fn planned_type(t: ColType) -> SqlType {
    match t {
        ColType::Int => SqlType::Int4,
        ColType::Float => SqlType::Float8,
        ColType::Numeric => SqlType::Numeric,
        ColType::Text => SqlType::Text,
        ColType::Bool => SqlType::Bool,
    }
}
