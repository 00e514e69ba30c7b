//! Sublinks (subqueries in expressions), as PostgreSQL 15's subselect.c plans the
//! cases the sandbox supports, in a query over one relation:
//!
//! - an **uncorrelated scalar subquery** — `(SELECT …)` as a value in the select
//!   list, WHERE or HAVING — becomes an **InitPlan** (`make_subplan` → `build_subplan`
//!   with `isInitPlan`): planned on its own, run at most once on the first use of its
//!   value, which the parent reads as the parameter `$n` (`Expr::Param`). A WHERE
//!   conjunct `b > $0` is shipped to a foreign table like any other (postgres_fdw sends
//!   the value as `$1::numeric`);
//! - an **uncorrelated EXISTS** — in WHERE's top-level AND (which
//!   `convert_EXISTS_sublink_to_join` leaves alone), under OR or NOT, or as a value in
//!   the select list — becomes an InitPlan too, its subquery simplified
//!   (`simplify_EXISTS_query`: no select list, no ORDER BY);
//! - a WHERE conjunct that reads InitPlan values and no column (`$0`, `$0 > 2`) is
//!   pseudo-constant: a gating Result's `One-Time Filter` right above the scan, each
//!   partition's under an Append (`create_gating_plan`);
//! - **NOT IN (SELECT …)**, and IN inside an expression (not pulled up), uncorrelated:
//!   a **hashed SubPlan** (`subplan_is_hashable`), its rows read once into a table;
//! - **`x op ALL (SELECT …)`**, and `x op ANY (SELECT …)` under OR or NOT, with an
//!   operator that does not hash (`<`, `<>`, …), uncorrelated: a **SubPlan** over a
//!   Materialize of its subquery, run for each outer row with `x` as its argument
//!   (`SubLinkKind::AnyAll`); `= ANY` is IN (a semi join, or hashed); `op ANY` in
//!   WHERE's top-level AND, which PostgreSQL makes a semi join with a join filter, is
//!   refused by name;
//! - a **correlated EXISTS under OR or NOT or in the select list** (`… WHERE inner =
//!   outer AND …`): the
//!   hashed alternative PostgreSQL keeps over the plain SubPlan it plans first
//!   (`convert_EXISTS_to_ANY`, `fix_alternative_subplan`), `hashed SubPlan 2`, with
//!   EXISTS's NULL rule (`unknownEqFalse`, `SubLinkKind::HashedExists`);
//! - a **correlated scalar subquery in the select list** — one that reads the outer
//!   row's columns — becomes a **SubPlan** (`make_subplan` without `isInitPlan`): each
//!   outer column it reads is a PARAM_EXEC parameter (`replace_outer_var`, numbered
//!   with the InitPlans' values), the select list calls it with the outer row's values
//!   (`Func::SubPlan`), and the executor runs it again for every row
//!   (`node_subplan::bind_row`), evaluated below the query's Sort, in the scan
//!   (`project_below_sort`). (IN / EXISTS / NOT EXISTS in WHERE's top-level AND are
//!   semi and anti joins: `prepjointree.rs`.)
//!
//! Protocol: `pull_init_plans` walks the select list, then WHERE, then HAVING (the
//! order `preprocess_expression` processes them in, which numbers the parameters and
//! the subplans), plans each subquery (`plan_query_into`, one level deeper) and puts a
//! placeholder in its place (`plan::init_plan_placeholder`, `plan::hashed_subplan_name`)
//! that the expression analysis turns into `Expr::Param` or `Func::HashedSubPlan`. The
//! caller plans the rewritten query and attaches the subplans to its top
//! (`Plan::WithInitPlans`), after `check_params` has made sure the values are only
//! read where the executor binds them.
//!
//! A correlated `x IN (SELECT …)`, `NOT IN`, `x op ANY` or `x op ALL` — one whose
//! subquery reads the outer row, which `convert_ANY_sublink_to_join` does not pull up
//! and `subplan_is_hashable` does not hash — is a plain **SubPlan with parameters**
//! (`SubLinkKind::AnyAll` with `args`): run for each outer row, no Materialize
//! (`build_subplan` materializes only a SubPlan without parameters). In the
//! subquery, a `column = $n` equality comes after its other conditions, as the
//! clause PostgreSQL derives from the equivalence class the outer value makes.
//!
//! A subquery may hold **uncorrelated scalar subqueries of its own** (`plan_nested`):
//! planned first, as `subquery_planner` one level down does, they are InitPlans
//! numbered before the subplan that holds them (`InitPlan 1 (returns $0)` inside
//! `SubPlan 2`), attached to its top. A nested subquery that reads a query two levels
//! up, a SubPlan or hashed SubPlan inside a subquery, and a nested EXISTS are refused
//! by name here (an EXISTS in WHERE's top-level AND whose own WHERE holds a sublink
//! reading the outer query is pulled up with it into semi and anti joins first:
//! `prepjointree.rs`).
//!
//! A correlated scalar subquery in HAVING is a SubPlan too, called with the group's
//! key values (the outer columns it reads must be grouped): the aggregate's Filter,
//! or, over an aggregate pushed to a foreign server, the foreign scan's local Filter
//! (a SubPlan does not ship: foreign_grouping_ok's local_conds).
//!
//! Invariants: a subquery that refers to the outer query is a SubPlan in the select
//! list, WHERE and HAVING; elsewhere it is refused, never planned as if it did not; a scalar
//! subquery has one output column; subplans are numbered in PostgreSQL's order,
//! parameters for InitPlans' values and correlated SubPlans' outer columns.
//!
//! An InitPlan's value compared with a partitioned table's key prunes its partitions
//! at run time (exec pruning, `node_append`): the Append gets the conditions, and at
//! its first call, the InitPlan run, the partitions that cannot match are never
//! executed.
//!
//! Departs from PostgreSQL: no sublink in a subquery in FROM or a UNION branch, only
//! uncorrelated scalar ones inside another sublink, and none in a join query; no run-time
//! partition pruning by an InitPlan's value under a Merge Append (refused); a
//! hashed SubPlan only over a plain local or foreign table (over a foreign one it is
//! the foreign scan's local Filter, not shippable; over a partitioned one it is in
//! each partition's scan in PostgreSQL, refused here).

use sqlparser::ast::{self, SelectItem, SetExpr};
use sqlparser::tokenizer::Location;

use super::catalog::{ident, relation_name, Node, RelKind};
use super::planner::{plan_query_into, Planned};
use super::FrontError;
use crate::plan::{init_plan_placeholder, Expr, InitPlan, Plan, SqlType, SubLinkKind};
use crate::types::ColType;

/// What planning the sublinks needs from the outer query.
pub(super) struct Outer<'a> {
    pub coord: &'a Node,
    pub text: &'a str,
    pub depth: usize,
    /// The outer relation's name and alias and its columns: a subquery that names one
    /// of them (and fails to plan without it) is correlated.
    pub names: Vec<String>,
    pub at: Location,
}

/// Does the query hold a sublink anywhere the sandbox looks for one (select list,
/// WHERE, HAVING)?
pub(super) fn has_sublinks(q: &ast::Query) -> bool {
    let SetExpr::Select(s) = q.body.as_ref() else { return false };
    let mut found = false;
    let mut visit = |e: &ast::Expr| {
        found |= matches!(e, ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. })
    };
    for item in &s.projection {
        if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item {
            walk(e, &mut visit);
        }
    }
    s.selection.iter().chain(s.having.iter()).for_each(|e| walk(e, &mut visit));
    found
}

/// The query with its scalar sublinks replaced by InitPlan parameters, and the
/// InitPlans (numbered from 1 and `$0`, in PostgreSQL's order).
pub(super) fn pull_init_plans(
    q: &ast::Query,
    outer: &Outer,
    servers: &mut Vec<String>,
) -> Result<(ast::Query, Vec<InitPlan>), FrontError> {
    pull_numbered(q, outer, servers, Numbering::default())
}

/// The subplan and parameter numbers taken before a query's own sublinks: PostgreSQL
/// numbers both across the whole statement (`glob->subplans`, `glob->paramExecTypes`),
/// so a subquery's own InitPlans continue from its parent's.
#[derive(Clone, Copy, Default)]
struct Numbering {
    /// The highest subplan number given out so far (0: none).
    plans: usize,
    /// How many PARAM_EXEC parameters are given out (the next is `$params`).
    params: usize,
}

/// [`pull_init_plans`] for a query whose subplans are numbered after `base`.
fn pull_numbered(
    q: &ast::Query,
    outer: &Outer,
    servers: &mut Vec<String>,
    base: Numbering,
) -> Result<(ast::Query, Vec<InitPlan>), FrontError> {
    let scope = single_from(q).and_then(|(rel, alias)| {
        let r = outer.coord.relation(&rel)?;
        Some((alias.unwrap_or(rel), r.columns.iter().map(|c| (c.name.clone(), c.ty)).collect()))
    });
    let mut q = q.clone();
    let mut init_plans = vec![];
    let SetExpr::Select(s) = q.body.as_mut() else { return Ok((q, init_plans)) };
    let mut cx =
        Pull { outer, servers, init_plans: &mut init_plans, scope, in_select_list: true, skipped_params: 0, base };
    for item in s.projection.iter_mut() {
        // An unnamed `(SELECT max(b) …)` is named after the subquery's column, as
        // FigureColname names an EXPR sublink.
        if let SelectItem::UnnamedExpr(ast::Expr::Subquery(sub)) = item {
            let (expr, name) = cx.scalar(sub)?;
            *item = SelectItem::ExprWithAlias { expr, alias: ast::Ident::new(name) };
            continue;
        }
        // An unnamed `EXISTS (…)` is named `exists` (FigureColname).
        if let SelectItem::UnnamedExpr(e @ ast::Expr::Exists { negated: false, .. }) = item {
            let mut expr = e.clone();
            cx.replace(&mut expr, false)?;
            *item = SelectItem::ExprWithAlias { expr, alias: ast::Ident::new("exists") };
            continue;
        }
        if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item {
            cx.replace(e, false)?;
        }
    }
    if let Some(w) = s.selection.as_mut() {
        cx.replace(w, true)?;
    }
    if let Some(h) = s.having.as_mut() {
        cx.replace(h, false)?;
    }
    Ok((q, init_plans))
}

struct Pull<'o, 'a> {
    outer: &'o Outer<'a>,
    servers: &'o mut Vec<String>,
    init_plans: &'o mut Vec<InitPlan>,
    /// The outer relation's name (alias) and columns, for a correlated subquery's
    /// references to them.
    scope: Option<(String, Vec<(String, crate::plan::SqlType)>)>,
    /// Sublinks of the select list, WHERE or HAVING are being replaced (where a
    /// correlated scalar one may be a SubPlan).
    in_select_list: bool,
    /// PARAM_EXEC numbers taken by the plain SubPlans PostgreSQL plans beside a hashed
    /// EXISTS alternative and discards.
    skipped_params: usize,
    /// The numbers taken before this query's sublinks, and by the InitPlans inside
    /// its subqueries (planned before the subplan that holds them).
    base: Numbering,
}

impl Pull<'_, '_> {
    /// Replaces every scalar sublink in `e`; `top_and` while `e` is a conjunct of
    /// WHERE's top-level AND (where PostgreSQL pulls IN and EXISTS up into joins).
    fn replace(&mut self, e: &mut ast::Expr, top_and: bool) -> Result<(), FrontError> {
        let at = self.outer.at;
        match e {
            ast::Expr::Subquery(sub) => {
                *e = self.scalar(sub)?.0;
                Ok(())
            }
            // A correlated IN, NOT IN or `= ANY` anywhere: convert_ANY_sublink_to_join
            // leaves it (its subquery reads the outer query), and a SubPlan with
            // parameters is never hashed (subplan_is_hashable): a plain SubPlan.
            ast::Expr::InSubquery { expr, subquery, negated } if !self.outer_refs(subquery).is_empty() => {
                self.replace(expr, false)?;
                let call = self.any_all_subplan(subquery, *expr.clone(), &ast::BinaryOperator::Eq, false)?;
                *e = if *negated {
                    ast::Expr::UnaryOp { op: ast::UnaryOperator::Not, expr: Box::new(call) }
                } else {
                    call
                };
                Ok(())
            }
            ast::Expr::InSubquery { negated: false, .. } if top_and => Err(FrontError::unsupported(
                "x IN (SELECT …) in WHERE, which PostgreSQL turns into a semi join (pull_up_sublinks): not planned \
                 yet for this subquery",
                at,
            )),
            // NOT IN, or IN inside an expression: not pulled up; uncorrelated and
            // small, PostgreSQL hashes the subquery's rows (a hashed SubPlan).
            ast::Expr::InSubquery { expr, subquery, negated } => {
                self.replace(expr, false)?;
                let planned = self.plan_as(
                    subquery,
                    "x IN (SELECT …) whose subquery refers to the outer query, which PostgreSQL re-runs per outer \
                     row as a SubPlan: not planned yet",
                )?;
                if planned.columns.len() != 1 {
                    return Err(FrontError::at("subquery has too many columns", at));
                }
                let plan_id = self.next_plan_id();
                self.init_plans.push(InitPlan {
                    plan_id,
                    param: usize::MAX,
                    kind: SubLinkKind::Hashed,
                    plan: planned.plan,
                    args: vec![],
                    arg_names: vec![],
                });
                let test = hashed_call(plan_id, *expr.clone());
                *e = if *negated {
                    ast::Expr::UnaryOp {
                        op: ast::UnaryOperator::Not,
                        expr: Box::new(ast::Expr::Nested(Box::new(test))),
                    }
                } else {
                    test
                };
                Ok(())
            }
            // An uncorrelated EXISTS: an InitPlan (make_subplan makes every EXISTS
            // without parameters one), whose value gates the scan in WHERE's top-level
            // AND (a One-Time Filter) and is `$n` elsewhere (the select list, under OR).
            // A correlated one in WHERE's top-level AND would be a semi or anti join
            // (convert_EXISTS_sublink_to_join).
            ast::Expr::Exists { subquery, negated } if top_and || self.outer_refs(subquery).is_empty() => {
                let not = if *negated { "NOT " } else { "" };
                let join = if *negated { "an anti join" } else { "a semi join" };
                let correlated = if top_and {
                    format!(
                        "{not}EXISTS (SELECT …) that refers to the outer query, which PostgreSQL turns into {join} \
                         (convert_EXISTS_sublink_to_join): not planned yet"
                    )
                } else {
                    format!(
                        "{not}EXISTS (SELECT …) in an expression, whose subquery refers to the outer query in a way \
                         not planned yet"
                    )
                };
                let sub = simplify_exists_query(subquery);
                let planned = self.plan_as(&sub, &correlated)?;
                // Its constant select list is no output of PostgreSQL's (an EXISTS
                // subplan's target list is empty): only whether a row comes counts.
                // The scan still reads its qual's columns: an empty projection over it
                // (EXPLAIN prints no Output, as for PostgreSQL's empty tlist).
                let plan = match planned.plan {
                    Plan::Result { child, filter: None, targets: Some(_) } => {
                        Plan::Result { child, filter: None, targets: Some(vec![]) }
                    }
                    plan => plan,
                };
                let (plan_id, param) = self.next_ids();
                self.init_plans.push(InitPlan {
                    plan_id,
                    param,
                    kind: SubLinkKind::Exists,
                    plan,
                    args: vec![],
                    arg_names: vec![],
                });
                let value = ast::Expr::Value(ast::Value::Placeholder(init_plan_placeholder(param, SqlType::Bool)));
                *e = if *negated {
                    ast::Expr::UnaryOp { op: ast::UnaryOperator::Not, expr: Box::new(value) }
                } else {
                    value
                };
                Ok(())
            }
            // A correlated EXISTS under OR or NOT: PostgreSQL plans it as a SubPlan and,
            // beside it, a hashed `outer = ANY (SELECT inner …)`, and keeps the cheaper
            // (`fix_alternative_subplan`): the hashed one for any outer relation of
            // more than a few rows, the one planned here.
            ast::Expr::Exists { subquery, negated } => {
                let test = self.exists_as_hashed(subquery, *negated)?;
                *e = if *negated {
                    ast::Expr::UnaryOp {
                        op: ast::UnaryOperator::Not,
                        expr: Box::new(ast::Expr::Nested(Box::new(test))),
                    }
                } else {
                    test
                };
                Ok(())
            }
            ast::Expr::AnyOp { right, .. } | ast::Expr::AllOp { right, .. }
                if matches!(right.as_ref(), ast::Expr::Subquery(_)) =>
            {
                let all = matches!(e, ast::Expr::AllOp { .. });
                let (left, compare_op, right) = match &*e {
                    ast::Expr::AnyOp { left, compare_op, right, .. } | ast::Expr::AllOp { left, compare_op, right } => {
                        (left, compare_op, right)
                    }
                    _ => return Ok(()),
                };
                let ast::Expr::Subquery(sub) = right.as_ref() else { return Ok(()) };
                let (sub, mut left, op) = (sub.clone(), left.clone(), compare_op.clone());
                if !all && op == ast::BinaryOperator::Eq && self.outer_refs(&sub).is_empty() {
                    // `= ANY` is IN: a semi join at the top, else a hashed SubPlan.
                    *e = ast::Expr::InSubquery { expr: left, subquery: sub, negated: false };
                    return self.replace(e, top_and);
                }
                if !all && top_and && self.outer_refs(&sub).is_empty() {
                    return Err(FrontError::unsupported(
                        "x op ANY (SELECT …) in WHERE's top-level AND, which PostgreSQL pulls up into a semi join \
                         with a join filter (convert_ANY_sublink_to_join): not planned yet",
                        at,
                    ));
                }
                self.replace(&mut left, false)?;
                *e = self.any_all_subplan(&sub, *left, &op, all)?;
                Ok(())
            }
            ast::Expr::BinaryOp { left, op, right } => {
                let and = top_and && *op == ast::BinaryOperator::And;
                self.replace(left, and)?;
                self.replace(right, and)
            }
            ast::Expr::Nested(x) => self.replace(x, top_and),
            ast::Expr::UnaryOp { expr: x, .. }
            | ast::Expr::IsNull(x)
            | ast::Expr::IsNotNull(x)
            | ast::Expr::IsTrue(x)
            | ast::Expr::IsNotTrue(x)
            | ast::Expr::IsFalse(x)
            | ast::Expr::IsNotFalse(x)
            | ast::Expr::IsUnknown(x)
            | ast::Expr::IsNotUnknown(x)
            | ast::Expr::Cast { expr: x, .. } => self.replace(x, false),
            ast::Expr::Between { expr, low, high, .. } => {
                self.replace(expr, false)?;
                self.replace(low, false)?;
                self.replace(high, false)
            }
            ast::Expr::InList { expr, list, .. } => {
                self.replace(expr, false)?;
                list.iter_mut().try_for_each(|x| self.replace(x, false))
            }
            ast::Expr::Function(f) => match &mut f.args {
                ast::FunctionArguments::List(l) => l.args.iter_mut().try_for_each(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))
                    | ast::FunctionArg::Named { arg: ast::FunctionArgExpr::Expr(x), .. } => self.replace(x, false),
                    _ => Ok(()),
                }),
                _ => Ok(()),
            },
            // Anything else: a sublink inside it is refused by the expression analysis.
            _ => Ok(()),
        }
    }

    /// `EXISTS (SELECT … FROM rel WHERE inner = outer AND …)` as its hashed
    /// alternative (`convert_EXISTS_to_ANY`): `outer IN (SELECT inner FROM rel WHERE
    /// …)`, the subquery's other conditions kept, numbered after the plain SubPlan
    /// PostgreSQL plans first and discards (so it is `hashed SubPlan 2`), its
    /// parameters counted. Anything else is refused by name.
    fn exists_as_hashed(&mut self, sub: &ast::Query, negated: bool) -> Result<ast::Expr, FrontError> {
        let refuse = |why: &str| {
            FrontError::unsupported(
                format!(
                    "{}EXISTS (SELECT …) inside an expression {why}: not planned yet",
                    if negated { "NOT " } else { "" }
                ),
                self.outer.at,
            )
        };
        let Some((outer_name, outer_cols)) = self.scope.clone() else {
            return Err(refuse("over anything but one relation"));
        };
        let SetExpr::Select(s) = sub.body.as_ref() else { return Err(refuse("over a set operation")) };
        let simple = s.from.len() == 1
            && s.from[0].joins.is_empty()
            && s.having.is_none()
            && s.distinct.is_none()
            && matches!(&s.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty())
            && sub.limit.is_none()
            && sub.offset.is_none();
        let ast::TableFactor::Table { name, alias, args: None, .. } = &s.from[0].relation else {
            return Err(refuse("whose subquery reads anything but one table"));
        };
        let rel = relation_name(name).ok().and_then(|n| self.outer.coord.relation(&n));
        let Some(rel) = rel.filter(|_| simple) else {
            return Err(refuse("whose subquery is not a plain SELECT from one table"));
        };
        let inner_name = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_else(|| rel.name.clone());
        let inner_cols: Vec<String> = rel.columns.iter().map(|c| c.name.clone()).collect();
        let side = |e: &ast::Expr| -> (bool, bool) {
            let (mut outer, mut inner) = (false, false);
            walk(e, &mut |x| match x {
                ast::Expr::Identifier(i) if inner_cols.contains(&ident(i)) => inner = true,
                ast::Expr::Identifier(i) if outer_cols.iter().any(|(c, _)| *c == ident(i)) => outer = true,
                ast::Expr::CompoundIdentifier(p) if p.len() == 2 && ident(&p[0]) == inner_name => inner = true,
                ast::Expr::CompoundIdentifier(p) if p.len() == 2 && ident(&p[0]) == outer_name => outer = true,
                _ => {}
            });
            (outer, inner)
        };
        let mut conjuncts = vec![];
        if let Some(w) = &s.selection {
            and_conjuncts(w, &mut conjuncts);
        }
        let (mut key, mut rest) = (None, vec![]);
        for c in conjuncts {
            let eq = match c {
                ast::Expr::BinaryOp { left, op: ast::BinaryOperator::Eq, right } => match (side(left), side(right)) {
                    ((true, false), (false, true)) => Some((left.as_ref(), right.as_ref())),
                    ((false, true), (true, false)) => Some((right.as_ref(), left.as_ref())),
                    _ => None,
                },
                _ => None,
            };
            match (eq, side(c).0) {
                (Some(pair), _) if key.is_none() => key = Some(pair),
                (Some(_), _) => return Err(refuse("with more than one correlated equality")),
                (None, true) => return Err(refuse("with a correlated condition other than inner = outer")),
                (None, false) => rest.push(c.clone()),
            }
        }
        let Some((outer_expr, inner_expr)) = key else {
            return Err(refuse("without a correlated equality (inner = outer)"));
        };
        // The plain alternative's parameters: one per outer column its key reads.
        let mut outer_refs: Vec<String> = vec![];
        walk(outer_expr, &mut |x| {
            let c = match x {
                ast::Expr::Identifier(i) => Some(ident(i)),
                ast::Expr::CompoundIdentifier(p) if p.len() == 2 => Some(ident(&p[1])),
                _ => None,
            };
            if let Some(c) = c.filter(|c| !outer_refs.contains(c)) {
                outer_refs.push(c);
            }
        });
        let mut hashed = sub.clone();
        hashed.order_by = None;
        if let SetExpr::Select(hs) = hashed.body.as_mut() {
            hs.projection = vec![SelectItem::UnnamedExpr(inner_expr.clone())];
            hs.selection = rest.into_iter().reduce(|a, b| ast::Expr::BinaryOp {
                left: Box::new(a),
                op: ast::BinaryOperator::And,
                right: Box::new(b),
            });
        }
        let planned = self.plan_as(&hashed, "EXISTS (SELECT …) whose subquery refers to the outer query elsewhere")?;
        let plan_id = self.next_plan_id() + 1;
        self.skipped_params += outer_refs.len();
        self.init_plans.push(InitPlan {
            plan_id,
            param: usize::MAX,
            kind: SubLinkKind::HashedExists,
            plan: planned.plan,
            args: vec![],
            arg_names: vec![],
        });
        Ok(hashed_call(plan_id, outer_expr.clone()))
    }

    /// `x op ALL (SELECT …)`, or `x op ANY (SELECT …)` that is neither a join nor
    /// hashed: a SubPlan run for each outer row with `x` as its argument
    /// (`Func::SubPlan` of `SubLinkKind::AnyAll`), its uncorrelated subquery under a
    /// Materialize that keeps its rows for the next row (`build_subplan`'s
    /// `materialize_finished_plan`, with enable_material, unless its top node keeps
    /// its output already). A correlated one is refused by name.
    fn any_all_subplan(
        &mut self,
        sub: &ast::Query,
        lhs: ast::Expr,
        op: &ast::BinaryOperator,
        all: bool,
    ) -> Result<ast::Expr, FrontError> {
        let which = if all { "ALL" } else { "ANY" };
        let op = match op {
            ast::BinaryOperator::Eq => crate::plan::BinOp::Eq,
            ast::BinaryOperator::NotEq => crate::plan::BinOp::NotEq,
            ast::BinaryOperator::Lt => crate::plan::BinOp::Lt,
            ast::BinaryOperator::LtEq => crate::plan::BinOp::LtEq,
            ast::BinaryOperator::Gt => crate::plan::BinOp::Gt,
            ast::BinaryOperator::GtEq => crate::plan::BinOp::GtEq,
            other => {
                return Err(FrontError::unsupported(
                    format!("x {other} {which} (SELECT …): not planned yet"),
                    self.outer.at,
                ))
            }
        };
        let correlated =
            format!("x op {which} (SELECT …) whose subquery refers to the outer query in a way not planned yet");
        // A correlated subquery reads the outer row through parameters (build_subplan's
        // parParam), set from the call's arguments after `x`.
        let refs = self.outer_refs(sub);
        let (plan_id, first_param) = self.next_ids_after_nested(sub);
        let (rewritten, params) = self.parameterize(sub, &refs, first_param);
        let planned = self.plan_as(&rewritten, &correlated)?;
        if planned.columns.len() != 1 {
            return Err(FrontError::at("subquery has too many columns", self.outer.at));
        }
        // build_subplan materializes only a SubPlan without parameters (with
        // parameters, every run reads other rows).
        let keeps_rows = matches!(planned.plan, Plan::Sort { .. } | Plan::Material { .. } | Plan::FunctionScan { .. });
        let plan = if refs.is_empty() && self.outer.coord.setting_on("enable_material", true) && !keeps_rows {
            Plan::Material { child: Box::new(planned.plan) }
        } else {
            planned.plan
        };
        let outer_name = self.scope.as_ref().map(|(n, _)| n.clone()).unwrap_or_default();
        self.init_plans.push(InitPlan {
            plan_id,
            param: usize::MAX,
            kind: SubLinkKind::AnyAll { op, all },
            plan,
            args: params,
            arg_names: refs.iter().map(|(c, _)| format!("{outer_name}.{c}")).collect(),
        });
        let mut call = hashed_call(plan_id, lhs);
        if let ast::Expr::Function(f) = &mut call {
            f.name = ast::ObjectName(vec![ast::Ident::new(crate::plan::subplan_name(plan_id, SqlType::Bool))]);
            if let ast::FunctionArguments::List(l) = &mut f.args {
                l.args.extend(refs.iter().map(|(c, _)| outer_column_arg(&outer_name, c)));
            }
        }
        Ok(call)
    }

    /// The next subplan's number: after every one planned (and discarded) so far.
    fn next_plan_id(&self) -> usize {
        self.init_plans.iter().map(|p| p.plan_id).max().unwrap_or(0).max(self.base.plans) + 1
    }

    /// A scalar subquery's replacement and its column's name: an InitPlan's value, or
    /// (correlated, in the select list) a SubPlan's.
    fn scalar(&mut self, sub: &ast::Query) -> Result<(ast::Expr, String), FrontError> {
        let refs = self.outer_refs(sub);
        if refs.is_empty() || !self.in_select_list {
            let planned = self.plan(sub)?;
            let name = planned.columns.first().map(|c| c.name.clone()).unwrap_or_default();
            return Ok((self.attach(sub, planned)?, name));
        }
        self.correlated(sub, refs)
    }

    /// The outer query's columns a subquery reads (a bare name its own relation lacks,
    /// or one qualified with the outer relation's name), each once, in order of
    /// appearance in its select list, WHERE and HAVING; with its type.
    fn outer_refs(&self, sub: &ast::Query) -> Vec<(String, crate::plan::SqlType)> {
        let Some((outer_name, outer_cols)) = &self.scope else { return vec![] };
        let SetExpr::Select(s) = sub.body.as_ref() else { return vec![] };
        let [from] = s.from.as_slice() else { return vec![] };
        let ast::TableFactor::Table { name, alias, .. } = &from.relation else { return vec![] };
        let Some(rel) = relation_name(name).ok().and_then(|n| self.outer.coord.relation(&n)) else { return vec![] };
        let inner_name = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_else(|| rel.name.clone());
        if !from.joins.is_empty() || inner_name == *outer_name {
            return vec![];
        }
        let mut refs: Vec<(String, crate::plan::SqlType)> = vec![];
        let mut visit = |e: &ast::Expr| {
            let col = match e {
                ast::Expr::Identifier(i) if !rel.columns.iter().any(|c| c.name == ident(i)) => Some(ident(i)),
                ast::Expr::CompoundIdentifier(p) if p.len() == 2 && ident(&p[0]) == *outer_name => Some(ident(&p[1])),
                _ => None,
            };
            if let Some((c, ty)) = col.and_then(|c| outer_cols.iter().find(|(n, _)| *n == c)) {
                if !refs.iter().any(|(n, _)| n == c) {
                    refs.push((c.clone(), *ty));
                }
            }
        };
        for item in &s.projection {
            if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item {
                walk(e, &mut visit);
            }
        }
        s.selection.iter().chain(s.having.iter()).for_each(|e| walk(e, &mut visit));
        refs
    }

    /// A correlated scalar subquery in the select list: a SubPlan (`make_subplan`
    /// without `isInitPlan`) whose references to the outer row are PARAM_EXEC
    /// parameters (`replace_outer_var`), numbered after those already given out; the
    /// select list calls it with the outer values (`Func::SubPlan`).
    fn correlated(
        &mut self,
        sub: &ast::Query,
        refs: Vec<(String, crate::plan::SqlType)>,
    ) -> Result<(ast::Expr, String), FrontError> {
        let Some((outer_name, _)) = self.scope.clone() else {
            return Err(FrontError::unsupported("a correlated subquery here: not planned yet", self.outer.at));
        };
        let (plan_id, first_param) = self.next_ids_after_nested(sub);
        let (rewritten, params) = self.parameterize(sub, &refs, first_param);
        let planned = self.plan(&rewritten)?;
        let name = planned.columns.first().map(|c| c.name.clone()).unwrap_or_default();
        let ty = sublink_type(self.outer.coord, sub, planned.columns[0].ty);
        self.init_plans.push(InitPlan {
            plan_id,
            param: usize::MAX,
            kind: SubLinkKind::Correlated,
            plan: planned.plan,
            args: params,
            arg_names: refs.iter().map(|(c, _)| format!("{outer_name}.{c}")).collect(),
        });
        let args = refs.iter().map(|(c, _)| outer_column_arg(&outer_name, c)).collect();
        let call = ast::Expr::Function(ast::Function {
            name: ast::ObjectName(vec![ast::Ident::new(crate::plan::subplan_name(plan_id, ty))]),
            uses_odbc_syntax: false,
            parameters: ast::FunctionArguments::None,
            args: ast::FunctionArguments::List(ast::FunctionArgumentList {
                duplicate_treatment: None,
                args,
                clauses: vec![],
            }),
            filter: None,
            null_treatment: None,
            over: None,
            within_group: vec![],
        });
        Ok((call, name))
    }

    /// `replace_outer_var`: the subquery with each outer column it reads (`refs`)
    /// replaced by a PARAM_EXEC parameter, numbered from `first_param`; and the
    /// parameters, in `refs`' order.
    fn parameterize(
        &self,
        sub: &ast::Query,
        refs: &[(String, crate::plan::SqlType)],
        first_param: usize,
    ) -> (ast::Query, Vec<usize>) {
        let outer_name = self.scope.as_ref().map(|(n, _)| n.clone()).unwrap_or_default();
        let params: Vec<usize> = (first_param..first_param + refs.len()).collect();
        let mut rewritten = sub.clone();
        if let SetExpr::Select(s) = rewritten.body.as_mut() {
            let own: Vec<String> = match s.from.first().map(|f| &f.relation) {
                Some(ast::TableFactor::Table { name, .. }) => relation_name(name)
                    .ok()
                    .and_then(|n| self.outer.coord.relation(&n))
                    .map(|r| r.columns.iter().map(|c| c.name.clone()).collect())
                    .unwrap_or_default(),
                _ => vec![],
            };
            let mut to_param = |e: &mut ast::Expr| {
                let col = match &*e {
                    ast::Expr::Identifier(i) if !own.contains(&ident(i)) => Some(ident(i)),
                    ast::Expr::CompoundIdentifier(p) if p.len() == 2 && ident(&p[0]) == outer_name => {
                        Some(ident(&p[1]))
                    }
                    _ => None,
                };
                if let Some(k) = col.and_then(|c| refs.iter().position(|(n, _)| *n == c)) {
                    *e = ast::Expr::Value(ast::Value::Placeholder(init_plan_placeholder(params[k], refs[k].1)));
                }
            };
            for item in s.projection.iter_mut() {
                if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item {
                    super::prepjointree::walk_mut(e, &mut to_param);
                }
            }
            for e in s.selection.iter_mut().chain(s.having.iter_mut()) {
                super::prepjointree::walk_mut(e, &mut to_param);
            }
            s.selection = s.selection.take().map(equalities_with_params_last);
        }
        (rewritten, params)
    }

    /// Plans an uncorrelated subquery; a correlated one is refused.
    fn plan(&mut self, sub: &ast::Query) -> Result<Planned, FrontError> {
        let planned = self.plan_as(
            sub,
            "a correlated subquery (one that refers to the outer query, which PostgreSQL re-runs per outer row as a \
             SubPlan): not planned yet",
        )?;
        if planned.columns.len() != 1 {
            return Err(FrontError::at("subquery must return only one column", self.outer.at));
        }
        Ok(planned)
    }

    /// Plans a subquery one level down; if it refers to the outer query, refused with
    /// `correlated`.
    fn plan_as(&mut self, sub: &ast::Query, correlated: &str) -> Result<Planned, FrontError> {
        let o = self.outer;
        if has_sublinks(sub) {
            return self.plan_nested(sub, correlated);
        }
        match plan_query_into(o.coord, sub, o.text, self.servers, o.depth + 1) {
            Ok(p) => Ok(p),
            Err(e) if self.names_outer(&e.to_string()) => Err(FrontError::unsupported(correlated, o.at)),
            Err(e) => Err(e),
        }
    }

    /// A subquery with sublinks of its own (`subquery_planner` one level down, whose
    /// `preprocess_expression` makes its sublinks subplans first): its uncorrelated
    /// scalar subqueries become InitPlans numbered before the subplan that
    /// holds them (`InitPlan 1 (returns $0)` inside `SubPlan 2`), attached to its
    /// top. A nested sublink that reads the outer row, or its own outer relation
    /// (a SubPlan inside a SubPlan), is refused by name.
    fn plan_nested(&mut self, sub: &ast::Query, correlated: &str) -> Result<Planned, FrontError> {
        let o = self.outer;
        let refuse = |what: &str| FrontError::unsupported(format!("{what}: not planned yet"), o.at);
        let Some((rel_name, alias)) = single_from(sub) else {
            return Err(refuse("a subquery over a join, a subquery or a set operation holding a subquery"));
        };
        let nested = Outer {
            coord: o.coord,
            text: o.text,
            depth: o.depth + 1,
            names: outer_names(o.coord, &rel_name, alias.as_deref()),
            at: o.at,
        };
        let base = Numbering { plans: self.next_plan_id() - 1, params: self.next_ids().1 };
        let (rewritten, mut init_plans) = match pull_numbered(sub, &nested, self.servers, base) {
            Ok(x) => x,
            Err(e) if self.names_outer(&e.to_string()) => {
                return Err(refuse(
                    "a subquery inside a subquery that refers to a query two levels up (a Param PostgreSQL sets \
                     from the outer-outer row, re-running the InitPlan it makes)",
                ))
            }
            Err(e) => return Err(e),
        };
        if let Some(p) = init_plans.iter().find(|p| p.kind != SubLinkKind::Expr) {
            let what = match p.kind {
                SubLinkKind::Correlated | SubLinkKind::AnyAll { .. } => {
                    "a SubPlan inside a subquery (a correlated \
                     subquery, or op ANY/ALL, nested in another)"
                }
                // Below an aggregate pushed to the server PostgreSQL ships its value
                // (`WHERE ($1::boolean)`) rather than gating the scan.
                SubLinkKind::Exists => "an uncorrelated EXISTS inside a subquery",
                _ => "a hashed SubPlan (IN / NOT IN) inside a subquery",
            };
            return Err(refuse(what));
        }
        if rewritten == *sub {
            return Err(refuse("a subquery expression inside another expression of a subquery"));
        }
        let mut planned = match plan_query_into(o.coord, &rewritten, o.text, self.servers, o.depth + 1) {
            Err(e) if self.names_outer(&e.to_string()) => return Err(FrontError::unsupported(correlated, o.at)),
            r => r?,
        };
        check_params(&planned.plan, o.at)?;
        name_init_plan_relations(&planned.plan, &mut init_plans);
        // The numbers the nested InitPlans took are this query's no more.
        self.base.plans = init_plans.iter().map(|p| p.plan_id).max().unwrap_or(base.plans);
        self.base.params += init_plans.len();
        planned.plan = Plan::WithInitPlans { child: Box::new(planned.plan), init_plans };
        Ok(planned)
    }

    /// The next subplan's number (every subplan counts) and parameter number (only
    /// the InitPlans', which return a value).
    fn next_ids(&self) -> (usize, usize) {
        let values = self.init_plans.iter().filter(|p| matches!(p.kind, SubLinkKind::Expr | SubLinkKind::Exists));
        let args: usize = self.init_plans.iter().map(|p| p.args.len()).sum();
        (self.next_plan_id(), self.base.params + values.count() + args + self.skipped_params)
    }

    /// [`Self::next_ids`] for a SubPlan whose subquery holds sublinks of its own: those
    /// are planned first (each an InitPlan with one value, [`Self::plan_nested`]), so
    /// they take the next numbers, and the SubPlan and its parameters come after them.
    fn next_ids_after_nested(&self, sub: &ast::Query) -> (usize, usize) {
        let (plan_id, param) = self.next_ids();
        let SetExpr::Select(s) = sub.body.as_ref() else { return (plan_id, param) };
        let mut nested = 0;
        let mut visit =
            |e: &ast::Expr| nested += usize::from(matches!(e, ast::Expr::Subquery(_) | ast::Expr::Exists { .. }));
        for item in &s.projection {
            if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item {
                walk(e, &mut visit);
            }
        }
        s.selection.iter().chain(s.having.iter()).for_each(|e| walk(e, &mut visit));
        (plan_id + nested, param + nested)
    }

    /// Does a planning error name one of the outer query's relations or columns?
    fn names_outer(&self, message: &str) -> bool {
        let unknown = message.contains("does not exist") || message.contains("missing FROM-clause entry");
        // As the messages name them: `column "x"`, `column t.x`, `table "t"`.
        let named = |n: &String| {
            message.contains(&format!("\"{n}\""))
                || message.contains(&format!("column {n} "))
                || message.contains(&format!("{n}."))
        };
        unknown && self.outer.names.iter().any(named)
    }

    /// Records the InitPlan and returns the placeholder that reads its value.
    fn attach(&mut self, sub: &ast::Query, planned: Planned) -> Result<ast::Expr, FrontError> {
        let (plan_id, param) = self.next_ids();
        let ty = sublink_type(self.outer.coord, sub, planned.columns[0].ty);
        self.init_plans.push(InitPlan {
            plan_id,
            param,
            kind: SubLinkKind::Expr,
            plan: planned.plan,
            args: vec![],
            arg_names: vec![],
        });
        Ok(ast::Expr::Value(ast::Value::Placeholder(init_plan_placeholder(param, ty))))
    }
}

/// The subquery's WHERE with its `column = $n` conjuncts last. To the subquery an
/// outer reference is a constant, so such an equality joins an equivalence class with
/// a constant (`process_equivalence`), and the clause PostgreSQL derives from it
/// (`generate_base_implied_equalities_const`) is placed after the relation's other
/// conditions: `WHERE ((amount > 50::numeric)) AND ((id = $1::integer))`.
fn equalities_with_params_last(w: ast::Expr) -> ast::Expr {
    fn is_param_equality(c: &ast::Expr) -> bool {
        let ast::Expr::BinaryOp { left, op: ast::BinaryOperator::Eq, right } = c else { return false };
        let column = |e: &ast::Expr| matches!(e, ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_));
        let constant_with_param = |e: &ast::Expr| {
            let (mut param, mut var) = (false, false);
            walk(e, &mut |x| match x {
                ast::Expr::Value(ast::Value::Placeholder(_)) => param = true,
                ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) => var = true,
                _ => {}
            });
            param && !var
        };
        (column(left) && constant_with_param(right)) || (column(right) && constant_with_param(left))
    }
    let mut conjuncts = vec![];
    and_conjuncts(&w, &mut conjuncts);
    let (eqs, rest): (Vec<&ast::Expr>, Vec<&ast::Expr>) = conjuncts.into_iter().partition(|c| is_param_equality(c));
    if eqs.is_empty() || rest.is_empty() {
        return w;
    }
    rest.into_iter()
        .chain(eqs)
        .cloned()
        .reduce(|a, b| ast::Expr::BinaryOp { left: Box::new(a), op: ast::BinaryOperator::And, right: Box::new(b) })
        .unwrap_or(w)
}

/// A SubPlan call's argument: the outer relation's column `outer.col`.
fn outer_column_arg(outer: &str, col: &str) -> ast::FunctionArg {
    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::CompoundIdentifier(vec![
        ast::Ident::new(outer),
        ast::Ident::new(col),
    ])))
}

/// The call the expression analysis makes `Func::HashedSubPlan(plan_id)` of `lhs`.
fn hashed_call(plan_id: usize, lhs: ast::Expr) -> ast::Expr {
    ast::Expr::Function(ast::Function {
        name: ast::ObjectName(vec![ast::Ident::new(crate::plan::hashed_subplan_name(plan_id))]),
        uses_odbc_syntax: false,
        parameters: ast::FunctionArguments::None,
        args: ast::FunctionArguments::List(ast::FunctionArgumentList {
            duplicate_treatment: None,
            args: vec![ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(lhs))],
            clauses: vec![],
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: vec![],
    })
}

/// The conjuncts of an AND tree (through parentheses).
fn and_conjuncts<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
    match e {
        ast::Expr::BinaryOp { left, op: ast::BinaryOperator::And, right } => {
            and_conjuncts(left, out);
            and_conjuncts(right, out);
        }
        ast::Expr::Nested(x) => and_conjuncts(x, out),
        other => out.push(other),
    }
}

/// An EXISTS subquery as PostgreSQL plans it (`simplify_EXISTS_query`): its select
/// list does not matter, so it selects a constant (the scans fetch no column, `SELECT
/// NULL` remotely), and its ORDER BY is dropped. One that aggregates or groups is left
/// as it is.
fn simplify_exists_query(sub: &ast::Query) -> ast::Query {
    let mut q = sub.clone();
    if let SetExpr::Select(s) = q.body.as_mut() {
        let grouped = !matches!(&s.group_by, ast::GroupByExpr::Expressions(v, _) if v.is_empty())
            || s.having.is_some()
            || s.projection.iter().any(|i| match i {
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                    let mut agg = false;
                    walk(e, &mut |x| {
                        agg |= matches!(x, ast::Expr::Function(f)
                            if ["count", "sum", "avg", "min", "max"].contains(&f.name.to_string().to_lowercase().as_str()))
                    });
                    agg
                }
                _ => false,
            });
        if !grouped {
            s.projection = vec![SelectItem::UnnamedExpr(ast::Expr::Value(ast::Value::Number("1".into(), false)))];
            q.order_by = None;
        }
    }
    q
}

/// Calls `f` on `e` and every expression below it (not into subqueries).
fn walk(e: &ast::Expr, f: &mut impl FnMut(&ast::Expr)) {
    f(e);
    if let Some(x) = crate::shard_sql::expr::single_operand(e) {
        return walk(x, f);
    }
    match e {
        ast::Expr::BinaryOp { left, right, .. } => {
            walk(left, f);
            walk(right, f);
        }
        ast::Expr::Between { expr, low, high, .. } => {
            walk(expr, f);
            walk(low, f);
            walk(high, f);
        }
        ast::Expr::InList { expr, list, .. } => {
            walk(expr, f);
            list.iter().for_each(|x| walk(x, f));
        }
        ast::Expr::AnyOp { left, right, .. } | ast::Expr::AllOp { left, right, .. } => {
            walk(left, f);
            walk(right, f);
        }
        ast::Expr::Function(func) => {
            if let ast::FunctionArguments::List(l) = &func.args {
                for a in &l.args {
                    if let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))
                    | ast::FunctionArg::Named { arg: ast::FunctionArgExpr::Expr(x), .. } = a
                    {
                        walk(x, f);
                    }
                }
            }
        }
        _ => {}
    }
}

/// The SQL type of a scalar subquery's value (its remote cast, `$1::numeric`): an
/// aggregate's result type over a column's declared type (`avg(int)` is numeric,
/// `sum(int)` and `count` bigint), a column's declared type, else from the value.
fn sublink_type(coord: &Node, sub: &ast::Query, ty: ColType) -> SqlType {
    let fallback = match ty {
        ColType::Int => SqlType::Int4,
        ColType::Float => SqlType::Float8,
        ColType::Numeric => SqlType::Numeric,
        ColType::Text => SqlType::Text,
        ColType::Bool => SqlType::Bool,
    };
    let SetExpr::Select(s) = sub.body.as_ref() else { return fallback };
    let (Some(item), [from]) = (s.projection.first(), s.from.as_slice()) else { return fallback };
    let ast::TableFactor::Table { name, .. } = &from.relation else { return fallback };
    let Some(rel) = relation_name(name).ok().and_then(|n| coord.relation(&n)) else { return fallback };
    let column_type = |e: &ast::Expr| match e {
        ast::Expr::Identifier(i) => rel.columns.iter().find(|c| c.name == ident(i)).map(|c| c.ty),
        ast::Expr::CompoundIdentifier(p) => {
            p.last().and_then(|i| rel.columns.iter().find(|c| c.name == ident(i)).map(|c| c.ty))
        }
        _ => None,
    };
    let expr = match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
        _ => return fallback,
    };
    if let Some(t) = column_type(expr) {
        return t;
    }
    let ast::Expr::Function(f) = expr else { return fallback };
    let name = f.name.to_string().to_lowercase();
    let arg = match &f.args {
        ast::FunctionArguments::List(l) => match l.args.as_slice() {
            [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))] => column_type(x),
            _ => None,
        },
        _ => None,
    };
    match (name.as_str(), arg) {
        ("count", _) => SqlType::Int8,
        ("avg", Some(SqlType::Float8)) => SqlType::Float8,
        ("avg", Some(_)) => SqlType::Numeric,
        ("sum", Some(SqlType::Int2 | SqlType::Int4)) => SqlType::Int8,
        ("sum", Some(SqlType::Int8 | SqlType::Numeric)) => SqlType::Numeric,
        ("sum" | "min" | "max", Some(t)) => t,
        _ => fallback,
    }
}

/// The outer relation's names a correlated subquery could refer to.
pub(super) fn outer_names(coord: &Node, rel_name: &str, alias: Option<&str>) -> Vec<String> {
    let mut names = vec![rel_name.to_string()];
    names.extend(alias.map(str::to_string));
    if let Some(r) = coord.relation(rel_name) {
        names.extend(r.columns.iter().map(|c| c.name.clone()));
    }
    names
}

/// Checks that the plan reads InitPlan values only where the executor binds them (a
/// Result's filter and targets, a foreign scan's remote conditions) and where
/// PostgreSQL would plan nothing else (no run-time pruning of `partitioned`'s
/// partitions by the value, no One-Time Filter).
pub(super) fn check_params(plan: &Plan, at: Location) -> Result<(), FrontError> {
    let refuse = |what: &str| FrontError::unsupported(format!("a subquery's value (an InitPlan's $n) {what}"), at);
    fn walk_plan(p: &Plan, f: &mut dyn FnMut(&Plan) -> Result<(), FrontError>) -> Result<(), FrontError> {
        f(p)?;
        p.children().into_iter().try_for_each(|c| walk_plan(c, f))
    }
    walk_plan(plan, &mut |p| match p {
        Plan::Agg { group_by, aggs, .. } => {
            if group_by.iter().any(Expr::has_exec_param)
                || aggs.iter().any(|a| a.arg.as_ref().is_some_and(Expr::has_exec_param))
            {
                return Err(refuse("in an aggregate's argument or GROUP BY is not planned yet"));
            }
            Ok(())
        }
        Plan::Sort { keys, .. } | Plan::MergeAppend { keys, .. } if keys.iter().any(|k| k.expr.has_exec_param()) => {
            Err(refuse("in ORDER BY is not planned yet"))
        }
        // Exec pruning (`node_append`) is the Append's; a Merge Append's is not done.
        Plan::MergeAppend { prune: Some(p), .. } if p.conjuncts.iter().any(Expr::has_exec_param) => Err(refuse(
            "compared with the partition key under a Merge Append (PostgreSQL prunes its partitions at run time, \
             exec pruning) is not planned yet",
        )),
        // PostgreSQL computes the select list in each partition's scan
        // (`apply_scanjoin_target_to_paths`), so the InitPlan runs (ExecSetParamPlan,
        // from ExecEvalParamExec) when the first row a member scan returns is
        // projected. The sandbox's Result above evaluates its targets at its first
        // input row, which is that row where the nodes between hand it straight up
        // (an Append, a Limit); a Sort or a Merge Append directly below the Result
        // is told to run the InitPlans at its own first input row
        // (`ExecNode::set_projection_params`). Deeper than that (a Merge Append under
        // a Sort, an Incremental Sort) the InitPlan would run later than in
        // PostgreSQL: refused.
        Plan::Result { targets: Some(t), child, filter: None }
            if t.iter().any(|(e, _)| e.has_exec_param()) && !projects_at_first_row(child) =>
        {
            Err(refuse(
                "in the select list over a partitioned table under a Sort over a Merge Append or an Incremental \
                 Sort is not planned yet: PostgreSQL computes it in each partition's scan (the target list pushed \
                 into the Append's children), where the first row a member returns runs the InitPlan",
            ))
        }
        // EXPLAIN names a Merge Append's keys through the select list folded into its
        // members: a key column the select list does not return in its own place
        // (a resjunk sort column, `Output: …, $0, pt_1.c`) is not printed as
        // PostgreSQL prints it yet.
        Plan::Result { targets: Some(t), child, filter: None }
            if t.iter().any(|(e, _)| e.has_exec_param())
                && matches!(child.as_ref(), Plan::MergeAppend { keys, .. } if !keys_in_place(keys, t)) =>
        {
            Err(refuse(
                "in the select list over a Merge Append of partitions ordered by a column the select list does not \
                 return first (PostgreSQL's resjunk sort column in each member's Output) is not planned yet",
            ))
        }
        Plan::Result { filter: Some(f), .. } => qual(f).map_err(|_| {
            refuse("in a WHERE condition that reads no column (PostgreSQL's One-Time Filter) is not planned yet")
        }),
        Plan::ForeignScan(fs) => {
            for q in &fs.remote.quals {
                if q.has_exec_param() && !reads_column(q) {
                    return Err(refuse(
                        "in a WHERE condition that reads no column (PostgreSQL's One-Time Filter) is not planned yet",
                    ));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    })
}

/// Does every column the keys read come out of the select list `t` in its own place?
fn keys_in_place(keys: &[crate::plan::SortKey], t: &[(Expr, String)]) -> bool {
    let mut ok = true;
    for k in keys {
        k.expr.for_each_col(&mut |c| ok &= matches!(t.get(c), Some((Expr::Col(d), _)) if *d == c));
    }
    ok
}

/// Does the InitPlan of a projection over `p` run at the first row a partition's
/// scan returns, as PostgreSQL's projection inside that scan runs it? The Result
/// hands a Sort or a Merge Append directly below it the values to compute at their
/// first input row; further down, see [`hands_first_row_up`].
fn projects_at_first_row(p: &Plan) -> bool {
    match p {
        Plan::MergeAppend { .. } => true,
        Plan::Sort { child, .. } => hands_first_row_up(child),
        p => hands_first_row_up(p),
    }
}

/// Does `p` return the first row a partition's scan below it returns as soon as it
/// gets it? An Append and a Limit do; a Sort or Merge Append over partitions reads
/// more rows first. True when no Append of partitions is below (not through an
/// aggregate, which PostgreSQL projects above).
fn hands_first_row_up(p: &Plan) -> bool {
    match p {
        Plan::Append { .. } => true,
        Plan::MergeAppend { .. } => false,
        Plan::Sort { child, .. } | Plan::IncrementalSort { child, .. } => !projects_over_append(child),
        Plan::Limit { child, .. } | Plan::Result { child, .. } | Plan::Gating { child, .. } => {
            hands_first_row_up(child)
        }
        _ => true,
    }
}

/// Is the projection's input an Append of partitions (through a Sort or Limit, not an
/// aggregate, which PostgreSQL projects above)?
fn projects_over_append(p: &Plan) -> bool {
    match p {
        Plan::Append { .. } | Plan::MergeAppend { .. } => true,
        Plan::Sort { child, .. }
        | Plan::IncrementalSort { child, .. }
        | Plan::Limit { child, .. }
        | Plan::Result { child, .. }
        | Plan::Gating { child, .. } => projects_over_append(child),
        _ => false,
    }
}

fn reads_column(e: &Expr) -> bool {
    let mut any = false;
    e.for_each_col(&mut |_| any = true);
    any
}

/// A filter whose conjuncts each read a column where they read a parameter.
fn qual(f: &Expr) -> Result<(), ()> {
    match f {
        Expr::Bin(crate::plan::BinOp::And, l, r) => {
            qual(l)?;
            qual(r)
        }
        e if e.has_exec_param() && !reads_column(e) => Err(()),
        _ => Ok(()),
    }
}

/// The query's outer relation name and alias (a single relation in FROM).
pub(super) fn single_from(q: &ast::Query) -> Option<(String, Option<String>)> {
    let SetExpr::Select(s) = q.body.as_ref() else { return None };
    let [from] = s.from.as_slice() else { return None };
    let ast::TableFactor::Table { name, alias, .. } = &from.relation else { return None };
    Some((relation_name(name).ok()?, alias.as_ref().map(|a| ident(&a.name))))
}

/// Gives the InitPlans' scans the names PostgreSQL's EXPLAIN gives them: the range
/// table is the outer query's relations first, then each subquery's, and a name
/// already taken gets the next free `_N` (ruleutils.c's `set_rtable_names`), so the
/// outer `h` with partitions `h_1`…`h_4` leaves `h_5` to the subquery's `h` and
/// `h_6`… to its partitions, and a second `f` is `f_1`.
pub(super) fn name_init_plan_relations(child: &Plan, init_plans: &mut [InitPlan]) {
    let mut used: Vec<String> = vec![];
    note_scan_names(child, &mut used);
    for ip in init_plans.iter_mut() {
        take_free_scan_names(&mut ip.plan, &mut used);
    }
}

/// Adds the names EXPLAIN uses for `plan`'s scans to `used`: a scan's alias (and its
/// partitioned parent's), else its relation's name (a partition `pt2` scanned as
/// `pt_2` leaves `pt2` free).
pub(super) fn note_scan_names(plan: &Plan, used: &mut Vec<String>) {
    for_each_scan_name(plan, &mut |base, name| {
        let names = match name {
            Some(n) => vec![Some(n.alias.clone()), n.parent.clone()],
            None => vec![Some(base.to_string())],
        };
        for n in names.into_iter().flatten() {
            if !used.contains(&n) {
                used.push(n);
            }
        }
    });
}

/// Renames the scans of `plan`, a query level planned on its own (an InitPlan's
/// subquery, a set operation's branch), whose range-table entries come after those
/// whose names are `used` (`set_rtable_names`): each name it planned, in range-table
/// order (a partitioned parent before its partitions), becomes the next free one, and
/// is then used.
pub(super) fn take_free_scan_names(plan: &mut Plan, used: &mut Vec<String>) {
    let mut renames: Vec<(String, String)> = vec![];
    let mut take = |old: &str, base: &str, used: &mut Vec<String>| {
        if renames.iter().any(|(o, _)| o == old) {
            return;
        }
        let new = if used.iter().any(|u| u == base) {
            (1..).map(|i| format!("{base}_{i}")).find(|c| !used.contains(c)).expect("a free name")
        } else {
            base.to_string()
        };
        used.push(new.clone());
        renames.push((old.to_string(), new));
    };
    for_each_scan_name(plan, &mut |base, name| match name {
        Some(n) => {
            let parent = n.parent.clone();
            if let Some(p) = &parent {
                take(p, p, used);
            }
            // A partition pruning left alone is read under its parent's alias
            // (its child range-table entry's refname in set_rtable_names), so it
            // takes the next free `h_N`, as its siblings would; any other scan's
            // refname is its alias, or its relation's name when the alias is one an
            // inner level already gave it (an InitPlan's `f_1` inside a SubPlan,
            // renamed again with the SubPlan: PostgreSQL names the InitPlan's
            // relations first, as they come first in the range table).
            let own = if renamed_from(&n.alias, base) { base } else { n.alias.as_str() };
            take(&n.alias, parent.as_deref().unwrap_or(own), used);
        }
        None => take(base, base, used),
    });
    rename_scans(plan, &renames);
}

/// Whether `alias` is `base` or a name [`take_free_scan_names`] made from it (`f_1`).
fn renamed_from(alias: &str, base: &str) -> bool {
    alias == base
        || alias
            .strip_prefix(base)
            .and_then(|rest| rest.strip_prefix('_'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Calls `f` with each scan's relation name and EXPLAIN names, in plan order.
fn for_each_scan_name(p: &Plan, f: &mut dyn FnMut(&str, Option<&crate::plan::ScanName>)) {
    match p {
        Plan::SeqScan { table, alias, .. } => f(table, alias.as_ref()),
        Plan::IndexScan { table, alias, .. } | Plan::BitmapHeapScan { table, alias, .. } => f(table, alias.as_ref()),
        Plan::ForeignScan(fs) => f(&fs.relation, fs.alias.as_ref()),
        other => other.children().into_iter().for_each(|c| for_each_scan_name(c, f)),
    }
}

fn rename_scans(p: &mut Plan, renames: &[(String, String)]) {
    let new = |old: &str| renames.iter().find(|(o, _)| o == old).map(|(_, n)| n.clone());
    for_each_scan_name_mut(p, &mut |base, name| match name {
        Some(n) => {
            if let Some(a) = new(&n.alias) {
                n.alias = a;
            }
            if let Some(p) = n.parent.as_mut().and_then(|p| new(p)) {
                n.parent = Some(p);
            }
        }
        None => {
            if let Some(a) = new(base).filter(|a| a != base) {
                *name = Some(crate::plan::ScanName {
                    alias: a,
                    parent: None,
                    member: false,
                    tlist: None,
                    direct: true,
                    alone: false,
                    unqualified: false,
                });
            }
        }
    });
}

/// Names each scan of a FROM subquery's plan that has no EXPLAIN name yet by its
/// relation: the subquery is a range-table entry of its own, so the statement's range
/// table has more than one entry and EXPLAIN qualifies its columns (`f.id`), as
/// explain.c's `useprefix` does for `Output:` when `list_length(es->rtable) > 1`.
pub(super) fn name_subquery_scans(p: &mut Plan) {
    for_each_scan_name_mut(p, &mut |base, name| {
        // A relation the subquery names under an alias is one entry of several now.
        if let Some(n) = name.as_mut() {
            n.unqualified = false;
        }
        if name.is_none() {
            *name = Some(crate::plan::ScanName {
                alias: base.to_string(),
                parent: None,
                member: false,
                tlist: None,
                direct: true,
                alone: false,
                unqualified: false,
            });
        }
    });
}

/// Calls `f` with each scan's relation name and its EXPLAIN name, to change.
fn for_each_scan_name_mut(p: &mut Plan, f: &mut dyn FnMut(&str, &mut Option<crate::plan::ScanName>)) {
    match p {
        Plan::SeqScan { table, alias, .. } => f(&table.clone(), alias),
        Plan::ForeignScan(fs) => f(&fs.relation.clone(), &mut fs.alias),
        Plan::IndexScan { table, alias, .. } | Plan::BitmapHeapScan { table, alias, .. } => f(&table.clone(), alias),
        Plan::BitmapIndexScan { .. } | Plan::EmptyResult { .. } => {}
        Plan::Append { children, .. } | Plan::MergeAppend { children, .. } => {
            children.iter_mut().for_each(|c| for_each_scan_name_mut(c, f))
        }
        Plan::Sort { child, .. }
        | Plan::IncrementalSort { child, .. }
        | Plan::Limit { child, .. }
        | Plan::Agg { child, .. }
        | Plan::Result { child, .. }
        | Plan::Material { child }
        | Plan::Memoize { child, .. }
        | Plan::Gating { child, .. }
        | Plan::SubqueryScan { child, .. }
        | Plan::Unique { child, .. }
        | Plan::WindowAgg { child, .. }
        | Plan::SetOp { child, .. } => for_each_scan_name_mut(child, f),
        Plan::ModifyTable(m) => for_each_scan_name_mut(&mut m.child, f),
        Plan::ConstResult { .. } | Plan::DirectModify(_) => {}
        Plan::FunctionScan { .. } | Plan::CteScan { .. } => {}
        Plan::WithCtes { child, ctes } => {
            for_each_scan_name_mut(child, f);
            ctes.iter_mut().for_each(|c| for_each_scan_name_mut(&mut c.plan, f));
        }
        Plan::HashJoin { outer, inner, .. }
        | Plan::NestLoop { outer, inner, .. }
        | Plan::MergeJoin { outer, inner, .. } => {
            for_each_scan_name_mut(outer, f);
            for_each_scan_name_mut(inner, f);
        }
        Plan::WithInitPlans { child, init_plans } => {
            for_each_scan_name_mut(child, f);
            init_plans.iter_mut().for_each(|i| for_each_scan_name_mut(&mut i.plan, f));
        }
    }
}

/// WHERE's conjuncts split into the pseudo-constant ones — they read InitPlan values
/// and no column (`$0`, `($0 > 2)`), PostgreSQL's `pseudoconstant` restrictions — and
/// the rest: (one-time filter, remaining filter).
pub(super) fn split_one_time_filter(filter: Option<Expr>) -> (Option<Expr>, Option<Expr>) {
    let Some(f) = filter else { return (None, None) };
    let mut conjuncts = vec![];
    fn split(e: Expr, out: &mut Vec<Expr>) {
        match e {
            Expr::Bin(crate::plan::BinOp::And, l, r) => {
                split(*l, out);
                split(*r, out);
            }
            e => out.push(e),
        }
    }
    split(f, &mut conjuncts);
    let and = |v: Vec<Expr>| v.into_iter().reduce(|a, b| Expr::bin(crate::plan::BinOp::And, a, b));
    let (pseudo, rest): (Vec<Expr>, Vec<Expr>) =
        conjuncts.into_iter().partition(|c| c.has_exec_param() && !reads_column(c));
    (and(pseudo), and(rest))
}

/// Puts the gating Result right above the relation's scan (each partition's, under the
/// Append), below the aggregate, sort, projection and limit, where
/// `create_gating_plan` puts it.
pub(super) fn insert_gating(plan: Plan, qual: Expr) -> Plan {
    match plan {
        Plan::Limit { child, offset, count } => {
            Plan::Limit { child: Box::new(insert_gating(*child, qual)), offset, count }
        }
        Plan::Sort { child, keys } => Plan::Sort { child: Box::new(insert_gating(*child, qual)), keys },
        Plan::Agg { child, strategy, group_by, aggs, split } => {
            Plan::Agg { child: Box::new(insert_gating(*child, qual)), strategy, group_by, aggs, split }
        }
        Plan::Result { child, filter: None, targets } => {
            Plan::Result { child: Box::new(insert_gating(*child, qual)), filter: None, targets }
        }
        Plan::Result { child, filter: Some(having), targets } if matches!(child.as_ref(), Plan::Agg { .. }) => {
            Plan::Result { child: Box::new(insert_gating(*child, qual)), filter: Some(having), targets }
        }
        // A partitioned relation: each partition is a relation of its own with the
        // parent's restrictions, so each gets its gating Result (and, no longer a
        // foreign scan, is no async child of the Append).
        Plan::Append { children, prune, ordered } => Plan::Append {
            children: children.into_iter().map(|c| insert_gating(c, qual.clone())).collect(),
            prune,
            ordered,
        },
        Plan::MergeAppend { children, keys, prune } => Plan::MergeAppend {
            children: children.into_iter().map(|c| insert_gating(c, qual.clone())).collect(),
            keys,
            prune,
        },
        scan => Plan::Gating { child: Box::new(scan), qual },
    }
}

/// Hashed SubPlans only over a plain local or foreign table (over a foreign one, the
/// foreign scan's local Filter: a SubPlan is not shippable, postgres_fdw's
/// `is_foreign_expr`): over a partitioned table PostgreSQL evaluates the condition in
/// each partition's scan (a SubPlan state, and table, per partition), which the
/// sandbox does not plan.
pub(super) fn check_hashed_subplans(
    coord: &Node,
    rel_name: &str,
    init_plans: &[InitPlan],
    at: Location,
) -> Result<(), FrontError> {
    // A plain local or foreign table: the SubPlan is its scan's Filter (a foreign
    // scan's local one: a SubPlan is not shippable, `is_foreign_expr`).
    let plain = matches!(coord.relation(rel_name).map(|r| &r.kind), Some(RelKind::Table(_) | RelKind::Foreign { .. }));
    if plain || init_plans.iter().all(|p| !p.kind.is_hashed()) {
        return Ok(());
    }
    Err(FrontError::unsupported(
        format!(
            "x [NOT] IN (SELECT …) as a hashed SubPlan over \"{rel_name}\", a partitioned table: PostgreSQL \
             evaluates it in each partition's scan (a foreign partition's local filter: a SubPlan is not \
             shippable), which the sandbox does not plan yet"
        ),
        at,
    ))
}

/// The select list evaluated below the query's Sort, in the scan (PostgreSQL's final
/// target list is the scan/join relation's, `apply_scanjoin_target_to_paths`, and the
/// Sort sorts the computed values): so a correlated SubPlan in it runs per scanned
/// row, in scan order, attached to the scan, as PostgreSQL runs it. Done where each
/// sort key is one of the select list's values (else the plan is left as it is).
pub(super) fn project_below_sort(plan: Plan) -> Plan {
    match plan {
        Plan::Limit { child, offset, count } => {
            Plan::Limit { child: Box::new(project_below_sort(*child)), offset, count }
        }
        Plan::Result { child, filter: None, targets: Some(t) } => match *child {
            Plan::Sort { child: input, keys } => {
                let moved: Option<Vec<crate::plan::SortKey>> = keys
                    .iter()
                    .map(|k| {
                        let at = t.iter().position(|(e, _)| *e == k.expr)?;
                        Some(crate::plan::SortKey { expr: Expr::Col(at), desc: k.desc })
                    })
                    .collect();
                match moved {
                    Some(keys) => Plan::Sort {
                        child: Box::new(Plan::Result { child: input, filter: None, targets: Some(t) }),
                        keys,
                    },
                    None => Plan::Result {
                        child: Box::new(Plan::Sort { child: input, keys }),
                        filter: None,
                        targets: Some(t),
                    },
                }
            }
            other => Plan::Result { child: Box::new(other), filter: None, targets: Some(t) },
        },
        other => other,
    }
}

/// A correlated SubPlan is evaluated by one node: a WHERE condition calling it that
/// went into several partitions' scans (PostgreSQL gives each its own SubPlan state,
/// and EXPLAIN prints `SubPlan 1` under each) is refused.
pub(super) fn check_subplan_uses(plan: &Plan, at: Location) -> Result<(), FrontError> {
    fn count(p: &Plan, uses: &mut Vec<usize>) {
        if let Plan::Result { filter, targets, .. } = p {
            for e in filter.iter().chain(targets.iter().flatten().map(|(e, _)| e)) {
                crate::executor::node_subplan::correlated_subplans(e, uses);
            }
        }
        p.children().into_iter().for_each(|c| count(c, uses));
    }
    let mut uses = vec![];
    count(plan, &mut uses);
    uses.sort_unstable();
    if uses.windows(2).any(|w| w[0] == w[1]) {
        return Err(FrontError::unsupported(
            "a correlated subquery in WHERE over a partitioned table's partitions: PostgreSQL runs a SubPlan in \
             each partition's scan, which the sandbox does not plan yet",
            at,
        ));
    }
    Ok(())
}
