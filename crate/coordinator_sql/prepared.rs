//! Prepared statements and the plan cache: `PREPARE`, `EXECUTE`, `DEALLOCATE`, and
//! the choice between a custom and a generic plan that PostgreSQL 15 makes in
//! `plancache.c` (`GetCachedPlan`, `choose_custom_plan`, `cached_plan_cost`).
//!
//! Protocol of one `EXECUTE name(args)` ([`get_cached_plan`]):
//!
//! 1. the arguments are evaluated and cast to the parameters' types (prepare.c's
//!    `EvaluateParams`), their number checked;
//! 2. [`choose_custom_plan`]: no parameters, a generic plan; `plan_cache_mode`
//!    `force_generic_plan` / `force_custom_plan` decide; else the first five
//!    executions are custom, and after that generic when the generic plan's cost is
//!    below the average custom cost (planning included, see [`cached_plan_cost`]);
//! 3. when the choice is generic and no generic plan was built yet, it is built (its
//!    `$n` left as parameters: `Expr::Param`), its cost kept in `generic_cost`, and
//!    the choice made again with that cost known (PostgreSQL does the same, so a
//!    generic plan that loses is built once, costed, and never run);
//! 4. a custom plan is planned with the values in place of the parameters (as
//!    PostgreSQL's planner folds PARAM_EXTERN values into constants for a custom
//!    plan), and its cost plus the planning term added to `total_custom_cost`.
//!
//! A generic plan is planned from the statement with each `$n` written `$n::type`
//! (the type parse analysis gave it); the shard planner turns that into
//! `Expr::Param`. Its values are bound for an execution by [`bind_plan_params`]
//! (ExecutorStart's ParamListInfo): the executor's initial pruning
//! (`executor::node_append`, ExecInitPartitionPruning), local filters and the remote
//! query's Bind read them; EXPLAIN prints `$n`.
//!
//! Parameter types: declared ones (`PREPARE p(int) AS …`), else inferred as parse
//! analysis infers an unknown `$n` (`variable_coerce_param_hook`): the type of the
//! other operand of a comparison or arithmetic operator, of the expression of
//! BETWEEN or IN, of a cast's target; both sides of `$1 op $2` text; LIMIT and OFFSET
//! bigint; an output column `$n` still unknown then text (resolveTargetListUnknowns).
//! Otherwise PostgreSQL's error, `could not determine data type of parameter $n`
//! (checked against PostgreSQL 15's pg_prepared_statements: the unit tests' cases).
//!
//! Invariants: the plan cache's counters change only when an EXECUTE runs
//! ([`get_cached_plan`] on the stored statement); planning the query section's
//! EXECUTE for EXPLAIN or a run works on a copy, so it is the same however often it is
//! asked. The generic plan, once built, is reused as it was planned (settings changed
//! since do not replan it, as in PostgreSQL) until DDL, ANALYZE or ALTER SERVER
//! invalidates it ([`invalidate_generic_plans`]); its cost stays known meanwhile.
//!
//! Departs from PostgreSQL: invalidation drops every statement's generic plan, not only
//! those reading the relation changed; a setup section's EXECUTE counts in the plan
//! cache but its rows are not computed (only the query section's statement runs); the
//! range table's size (the planning term) is counted as the plan's scans plus the
//! partitioned tables the query reads; a custom plan's values are written into the
//! statement as literals (an int8 or numeric value as a number: EXPLAIN then prints it
//! as the sandbox prints a literal, without PostgreSQL's `::bigint` label).

use sqlparser::ast::{self, SetExpr, TableFactor};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Location, Token, Tokenizer};

use super::catalog::{ident, relation_name, Node};
use super::planner::{plan_query, Planned};
use super::statement::{parse_statements, Stmt};
use super::{pgfuncs, FrontError};
use crate::plan::costsize::{cost_plan, CostParams};
use crate::plan::{Plan, SqlType};
use crate::types::Datum;

/// A prepared statement and its plan cache entry (`CachedPlanSource`).
#[derive(Clone, Debug)]
pub struct PreparedStatement {
    pub name: String,
    /// The type of `$1`, `$2`, …
    pub param_types: Vec<SqlType>,
    /// The SELECT, as sqlparser writes it back, its `$n` in place.
    pub text: String,
    pub num_custom_plans: u64,
    pub num_generic_plans: u64,
    pub total_custom_cost: f64,
    /// The generic plan's cost (`cached_plan_cost` without planning); None until one
    /// was built (PostgreSQL's -1). It outlives an invalidated plan, as in PostgreSQL.
    pub generic_cost: Option<f64>,
    /// The generic plan (`gplan`), kept and reused until invalidated
    /// ([`invalidate_generic_plans`]); its parameters unbound.
    pub gplan: Option<Planned>,
}

/// PlanCacheRelCallback / PlanCacheSysCallback: DDL, ANALYZE and ALTER SERVER make the
/// generic plans stale; the next generic execution plans (and costs) one anew. The
/// sandbox invalidates every statement's, not only those that read the relation
/// changed (PostgreSQL's relcache invalidation is per relation; a foreign server's
/// change resets every plan).
pub fn invalidate_generic_plans(node: &mut Node) {
    for p in node.prepared.iter_mut() {
        p.gplan = None;
    }
}

/// `plan_cache_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanCacheMode {
    Auto,
    ForceCustomPlan,
    ForceGenericPlan,
}

impl PlanCacheMode {
    pub fn of(coord: &Node) -> PlanCacheMode {
        match coord.setting("plan_cache_mode") {
            Some("force_custom_plan") => PlanCacheMode::ForceCustomPlan,
            Some("force_generic_plan") => PlanCacheMode::ForceGenericPlan,
            _ => PlanCacheMode::Auto,
        }
    }
}

/// One execution's plan: which kind, and the plan (parameters bound if generic).
#[derive(Clone, Debug)]
pub struct CachedPlan {
    pub planned: Planned,
    pub custom: bool,
}

/// PREPARE (prepare.c's `PrepareQuery`): the statement, its parameters typed.
pub fn prepare(
    coord: &Node,
    name: &str,
    declared: &[SqlType],
    query: &ast::Query,
    at: Location,
) -> Result<PreparedStatement, FrontError> {
    if coord.prepared.iter().any(|p| p.name == name) {
        return Err(FrontError::at(format!("prepared statement \"{name}\" already exists"), at));
    }
    let text = query.to_string();
    let count = placeholders(&text, at)?.into_iter().max().unwrap_or(0).max(declared.len());
    let mut types: Vec<Option<SqlType>> = (0..count).map(|i| declared.get(i).copied()).collect();
    infer_query(coord, query, &mut types);
    let param_types = types
        .iter()
        .enumerate()
        .map(|(i, t)| {
            t.ok_or_else(|| FrontError::at(format!("could not determine data type of parameter ${}", i + 1), at))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(PreparedStatement {
        name: name.to_string(),
        param_types,
        text,
        num_custom_plans: 0,
        num_generic_plans: 0,
        total_custom_cost: 0.0,
        generic_cost: None,
        gplan: None,
    })
}

/// The numbers of the `$n` in `text`.
fn placeholders(text: &str, at: Location) -> Result<Vec<usize>, FrontError> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, text)
        .with_unescape(false)
        .tokenize()
        .map_err(|e| FrontError::at(format!("syntax error: {}", e.message), at))?;
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Placeholder(p) => Some(param_number(p, at)),
            _ => None,
        })
        .collect()
}

fn param_number(p: &str, at: Location) -> Result<usize, FrontError> {
    p.strip_prefix('$')
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| (1..=u16::MAX as usize).contains(n))
        .ok_or_else(|| FrontError::unsupported(format!("the parameter {p} (write $1, $2, …)"), at))
}

/// EvaluateParams: each argument evaluated and cast to its parameter's type.
pub fn evaluate_params(ps: &PreparedStatement, args: &[ast::Expr], at: Location) -> Result<Vec<Datum>, FrontError> {
    if args.len() != ps.param_types.len() {
        return Err(FrontError::at(
            format!(
                "wrong number of parameters for prepared statement \"{}\" (expected {} parameters but got {})",
                ps.name,
                ps.param_types.len(),
                args.len()
            ),
            at,
        ));
    }
    let mut random = pgfuncs::PgRandom::new();
    args.iter()
        .zip(&ps.param_types)
        .map(|(a, t)| super::eval::cast(super::eval::eval(a, &mut random)?, *t, at))
        .collect()
}

/// choose_custom_plan.
pub fn choose_custom_plan(ps: &PreparedStatement, mode: PlanCacheMode) -> bool {
    if ps.param_types.is_empty() {
        return false; // no boundParams: nothing a custom plan could use
    }
    match mode {
        PlanCacheMode::ForceGenericPlan => return false,
        PlanCacheMode::ForceCustomPlan => return true,
        PlanCacheMode::Auto => {}
    }
    if ps.num_custom_plans < 5 {
        return true;
    }
    let avg_custom_cost = ps.total_custom_cost / ps.num_custom_plans as f64;
    // A generic plan not costed yet (PostgreSQL's -1) is preferred: it will be built.
    if ps.generic_cost.unwrap_or(-1.0) < avg_custom_cost {
        return false;
    }
    true
}

/// GetCachedPlan: the plan for one execution with `values`, the statement's counters
/// updated as PostgreSQL updates them.
pub fn get_cached_plan(
    ps: &mut PreparedStatement,
    coord: &Node,
    values: &[Datum],
    at: Location,
) -> Result<CachedPlan, FrontError> {
    let mode = PlanCacheMode::of(coord);
    let mut custom = choose_custom_plan(ps, mode);
    if !custom && ps.gplan.is_none() {
        // CheckCachedPlan failed: build the generic plan, learn its cost, choose again.
        let g = plan_generic(ps, coord, at)?;
        ps.generic_cost = Some(cached_plan_cost(coord, &g, false));
        ps.gplan = Some(g);
        custom = choose_custom_plan(ps, mode);
    }
    if custom {
        let planned = plan_text(coord, &custom_text(ps, values, at)?, at)?;
        ps.total_custom_cost += cached_plan_cost(coord, &planned, true);
        ps.num_custom_plans += 1;
        return Ok(CachedPlan { planned, custom: true });
    }
    ps.num_generic_plans += 1;
    let mut planned = ps.gplan.clone().ok_or_else(|| FrontError::at("internal error: no generic plan", at))?;
    bind_plan_params(&mut planned.plan, values);
    Ok(CachedPlan { planned, custom: false })
}

/// The generic plan: every `$n` a parameter of its type.
fn plan_generic(ps: &PreparedStatement, coord: &Node, at: Location) -> Result<Planned, FrontError> {
    let text = rewrite_params(&ps.text, at, &|n| {
        let t = ps.param_types.get(n - 1).copied().unwrap_or(SqlType::Text);
        format!("${n}::{}", t.name())
    })?;
    plan_text(coord, &text, at)
}

/// The custom plan's text: each `$n` its value, as a constant of its type.
fn custom_text(ps: &PreparedStatement, values: &[Datum], at: Location) -> Result<String, FrontError> {
    rewrite_params(&ps.text, at, &|n| {
        let t = ps.param_types.get(n - 1).copied().unwrap_or(SqlType::Text);
        match values.get(n - 1).unwrap_or(&Datum::Null) {
            Datum::Null => format!("NULL::{}", t.name()),
            Datum::Text(_) => super::super::sql_text::deparse::deparse_string_literal(&values[n - 1].to_string()),
            d => {
                let s = d.to_string();
                if s.starts_with('-') {
                    format!("({s})")
                } else {
                    s
                }
            }
        }
    })
}

/// `text` with each `$n` token replaced by `with(n)`, the rest as written.
fn rewrite_params(text: &str, at: Location, with: &dyn Fn(usize) -> String) -> Result<String, FrontError> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, text)
        .with_unescape(false)
        .tokenize()
        .map_err(|e| FrontError::at(format!("syntax error: {}", e.message), at))?;
    let mut out = String::with_capacity(text.len() + 16);
    for t in &tokens {
        match t {
            Token::Placeholder(p) => out.push_str(&format!(" {} ", with(param_number(p, at)?))),
            other => out.push_str(&other.to_string()),
        }
    }
    Ok(out)
}

fn plan_text(coord: &Node, text: &str, at: Location) -> Result<Planned, FrontError> {
    let stmts = parse_statements(text, 1)?;
    let [st] = stmts.as_slice() else {
        return Err(FrontError::at("internal error: a prepared statement is one SELECT", at));
    };
    let Stmt::Select(q) = &st.stmt else {
        return Err(FrontError::at("internal error: a prepared statement is one SELECT", at));
    };
    plan_query(coord, q, text)
}

/// cached_plan_cost: the plan's total cost, and with `include_planner` PostgreSQL's
/// crude planning term, 1000 × cpu_operator_cost × (range table entries + 1).
pub fn cached_plan_cost(coord: &Node, planned: &Planned, include_planner: bool) -> f64 {
    let params = CostParams::from_settings(&|n| coord.setting(n).map(str::to_string));
    let total = cost_plan(&planned.plan, coord, &params).first().map_or(0.0, |e| e.total);
    if !include_planner {
        return total;
    }
    total + 1000.0 * params.cpu_operator_cost * (range_table_len(coord, &planned.plan) + 1) as f64
}

/// The range table's entries: one per scan, and one per partitioned table whose
/// partitions are scanned (its own entry, the Append's parent).
fn range_table_len(coord: &Node, plan: &Plan) -> usize {
    fn walk(coord: &Node, p: &Plan, parents: &mut Vec<String>) -> usize {
        let own = match p {
            Plan::SeqScan { table, .. } | Plan::IndexScan { table, .. } | Plan::BitmapHeapScan { table, .. } => {
                parent_of(coord, table, parents);
                1
            }
            Plan::ForeignScan(f) => {
                parent_of(coord, &f.relation, parents);
                1
            }
            _ => 0,
        };
        own + p.children().into_iter().map(|c| walk(coord, c, parents)).sum::<usize>()
    }
    fn parent_of(coord: &Node, rel: &str, parents: &mut Vec<String>) {
        let mut r = coord.relation(rel);
        while let Some((parent, _)) = r.and_then(|r| r.partition_of.as_ref()) {
            if !parents.contains(parent) {
                parents.push(parent.clone());
            }
            r = coord.relation(parent);
        }
    }
    let mut parents = Vec::new();
    let scans = walk(coord, plan, &mut parents);
    scans + parents.len()
}

/// Binds the parameters of every expression of `plan` (ExecutorStart's
/// ParamListInfo): filters, projections, keys, remote quals, pruning steps.
pub fn bind_plan_params(plan: &mut Plan, values: &[Datum]) {
    plan.for_each_expr_mut(&mut |e| e.bind_params(values));
}

/// The estimates of `plan`'s nodes (`cost_plan`, one per node in executor order) for
/// the nodes the executor initializes: a child removed by initial run-time pruning has
/// no node, so its subtree's estimates are left out (the Append keeps its own, made
/// over every child, as PostgreSQL's EXPLAIN shows it).
pub fn estimates_after_pruning<E: Clone>(plan: &Plan, estimates: &[E]) -> Vec<E> {
    fn size(p: &Plan) -> usize {
        1 + p.children().into_iter().map(size).sum::<usize>()
    }
    fn walk<E: Clone>(p: &Plan, ests: &[E], at: &mut usize, out: &mut Vec<E>) {
        if let Some(e) = ests.get(*at) {
            out.push(e.clone());
        }
        *at += 1;
        let keep = match p {
            Plan::Append { prune: Some(info), .. } | Plan::MergeAppend { prune: Some(info), .. } => {
                super::planner::find_matching_subplans(info)
            }
            _ => vec![true; p.children().len()],
        };
        for (c, k) in p.children().into_iter().zip(keep) {
            if k {
                walk(c, ests, at, out);
            } else {
                *at += size(c);
            }
        }
    }
    let mut out = Vec::with_capacity(estimates.len());
    walk(plan, estimates, &mut 0, &mut out);
    out
}

/// The types of the query's relations' columns, by column name (the first relation
/// of the FROM list that has one), for inferring parameter types.
fn infer_query(coord: &Node, q: &ast::Query, types: &mut [Option<SqlType>]) {
    let SetExpr::Select(s) = q.body.as_ref() else { return };
    let mut rels = Vec::new();
    for f in &s.from {
        for t in std::iter::once(&f.relation).chain(f.joins.iter().map(|j| &j.relation)) {
            if let TableFactor::Table { name, .. } = t {
                if let Some(r) = relation_name(name).ok().and_then(|n| coord.relation(&n)) {
                    rels.push(r);
                }
            }
        }
    }
    let column = |name: &str| -> Option<SqlType> {
        rels.iter().find_map(|r| r.columns.iter().find(|c| c.name == name).map(|c| c.ty))
    };
    let mut inf = Infer { column: &column, types };
    for e in s.selection.iter().chain(s.having.iter()) {
        inf.walk(e);
    }
    let items: Vec<&ast::Expr> = s
        .projection
        .iter()
        .filter_map(|i| match i {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
            _ => None,
        })
        .collect();
    for e in &items {
        inf.walk(e);
    }
    // resolveTargetListUnknowns: an output column still of unknown type is text.
    for e in &items {
        inf.set(e, Some(SqlType::Text));
    }
    let bigint = |e: &ast::Expr, types: &mut [Option<SqlType>]| {
        if let Some(n) = placeholder(e) {
            if let Some(t @ None) = types.get_mut(n - 1) {
                *t = Some(SqlType::Int8);
            }
        }
    };
    if let Some(l) = &q.limit {
        bigint(l, inf.types);
    }
    if let Some(o) = &q.offset {
        bigint(&o.value, inf.types);
    }
    // Parameters in a subquery of FROM.
    for f in &s.from {
        if let TableFactor::Derived { subquery, .. } = &f.relation {
            infer_query(coord, subquery, inf.types);
        }
    }
}

fn placeholder(e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Value(ast::Value::Placeholder(p)) => {
            p.strip_prefix('$').and_then(|n| n.parse().ok()).filter(|n| *n >= 1)
        }
        ast::Expr::Nested(x) => placeholder(x),
        _ => None,
    }
}

/// variable_coerce_param_hook's inference, over the constructs the sandbox plans.
struct Infer<'a> {
    column: &'a dyn Fn(&str) -> Option<SqlType>,
    types: &'a mut [Option<SqlType>],
}

impl Infer<'_> {
    fn type_of(&self, e: &ast::Expr) -> Option<SqlType> {
        match e {
            ast::Expr::Identifier(i) => (self.column)(&ident(i)),
            ast::Expr::CompoundIdentifier(parts) => parts.last().and_then(|i| (self.column)(&ident(i))),
            ast::Expr::Value(ast::Value::Number(n, _)) => Some(if n.parse::<i32>().is_ok() {
                SqlType::Int4
            } else if n.parse::<i64>().is_ok() {
                SqlType::Int8
            } else {
                SqlType::Numeric
            }),
            ast::Expr::Nested(x) => self.type_of(x),
            ast::Expr::Cast { data_type, .. } => SqlType::from_ast(data_type, Location { line: 0, column: 0 }).ok(),
            _ => placeholder(e).and_then(|n| self.types.get(n - 1).copied().flatten()),
        }
    }

    fn set(&mut self, e: &ast::Expr, t: Option<SqlType>) {
        if let (Some(n), Some(t)) = (placeholder(e), t) {
            if let Some(slot @ None) = self.types.get_mut(n - 1) {
                *slot = Some(t);
            }
        }
    }

    fn walk(&mut self, e: &ast::Expr) {
        match e {
            ast::Expr::BinaryOp { left, right, .. } => {
                self.walk(left);
                self.walk(right);
                let (lt, rt) = (self.type_of(left), self.type_of(right));
                self.set(left, rt);
                self.set(right, lt);
                // unknown op unknown: the operator resolves as text's (`$1 = $2`).
                if lt.is_none() && rt.is_none() && placeholder(left).is_some() && placeholder(right).is_some() {
                    self.set(left, Some(SqlType::Text));
                    self.set(right, Some(SqlType::Text));
                }
            }
            ast::Expr::Between { expr, low, high, .. } => {
                for x in [expr, low, high] {
                    self.walk(x);
                }
                let t = self.type_of(expr).or(self.type_of(low)).or(self.type_of(high));
                for x in [expr, low, high] {
                    self.set(x, t);
                }
            }
            ast::Expr::InList { expr, list, .. } => {
                self.walk(expr);
                list.iter().for_each(|x| self.walk(x));
                let t = self.type_of(expr).or_else(|| list.iter().find_map(|x| self.type_of(x)));
                self.set(expr, t);
                for x in list {
                    self.set(x, t);
                }
            }
            ast::Expr::Cast { expr, data_type, .. } => {
                self.walk(expr);
                self.set(expr, SqlType::from_ast(data_type, Location { line: 0, column: 0 }).ok());
            }
            ast::Expr::Nested(x)
            | ast::Expr::UnaryOp { expr: x, .. }
            | ast::Expr::IsNull(x)
            | ast::Expr::IsNotNull(x) => self.walk(x),
            _ => {}
        }
    }
}

/// The prepared statement `name` of the coordinator, or PostgreSQL's error.
pub fn lookup<'n>(coord: &'n Node, name: &str, at: Location) -> Result<&'n PreparedStatement, FrontError> {
    coord
        .prepared
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| FrontError::at(format!("prepared statement \"{name}\" does not exist"), at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator_sql::SqlScenario;

    /// A coordinator with `r` range-partitioned on k over two local partitions.
    fn world(extra: &str) -> SqlScenario {
        let text = format!(
            "create table r (k int, v int, t text) partition by range (k);\n\
             create table r1 partition of r for values from (0) to (100);\n\
             create table r2 partition of r for values from (100) to (200);\n\
             insert into r select i, i % 7, 'x' from generate_series(0, 199) i;\nanalyze r, r1, r2;\n{extra}"
        );
        SqlScenario::load(&text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn run(s: &mut SqlScenario, sql: &str) -> Result<(), FrontError> {
        for st in parse_statements(sql, 1)? {
            s.cluster.execute(0, &st)?;
        }
        Ok(())
    }

    fn stmt<'a>(s: &'a SqlScenario, name: &str) -> &'a PreparedStatement {
        lookup(s.cluster.coordinator(), name, Location { line: 0, column: 0 }).unwrap()
    }

    fn ps(custom: u64, total: f64, generic: Option<f64>) -> PreparedStatement {
        PreparedStatement {
            name: "p".into(),
            param_types: vec![SqlType::Int4],
            text: String::new(),
            num_custom_plans: custom,
            num_generic_plans: 0,
            total_custom_cost: total,
            generic_cost: generic,
            gplan: None,
        }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn choose_custom_plan_is_plancache_c() {
        use PlanCacheMode::*;
        assert!(choose_custom_plan(&ps(0, 0.0, None), Auto), "the first five are custom");
        assert!(choose_custom_plan(&ps(4, 40.0, Some(1.0)), Auto));
        assert!(!choose_custom_plan(&ps(5, 50.0, None), Auto), "no generic cost yet: try the generic plan");
        assert!(!choose_custom_plan(&ps(5, 50.0, Some(9.99)), Auto), "cheaper than the average custom cost");
        assert!(choose_custom_plan(&ps(5, 50.0, Some(10.0)), Auto), "not cheaper: custom (a strict <)");
        assert!(!choose_custom_plan(&ps(0, 0.0, None), ForceGenericPlan));
        assert!(choose_custom_plan(&ps(9, 1.0, Some(0.0)), ForceCustomPlan));
        let mut none = ps(0, 0.0, None);
        none.param_types.clear();
        assert!(!choose_custom_plan(&none, ForceCustomPlan), "no parameters: always the generic plan");
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn parameter_types_are_inferred_or_refused() {
        let mut s = world("");
        run(&mut s, "prepare a as select k from r where k < $1 and t = $2 limit $3;").unwrap();
        assert_eq!(stmt(&s, "a").param_types, [SqlType::Int4, SqlType::Text, SqlType::Int8]);
        run(&mut s, "prepare b(bigint) as select k from r where v in ($2, 3) and k = $1;").unwrap();
        assert_eq!(stmt(&s, "b").param_types, [SqlType::Int8, SqlType::Int4]);
        // As PostgreSQL 15 types them (pg_prepared_statements.parameter_types).
        run(&mut s, "prepare t1 as select $1 from r;").unwrap();
        assert_eq!(stmt(&s, "t1").param_types, [SqlType::Text]);
        run(&mut s, "prepare t2 as select k from r where $1 = $2;").unwrap();
        assert_eq!(stmt(&s, "t2").param_types, [SqlType::Text, SqlType::Text]);
        run(&mut s, "prepare t3 as select k from r where k < $1 + 1 limit $2;").unwrap();
        assert_eq!(stmt(&s, "t3").param_types, [SqlType::Int4, SqlType::Int8]);
        let e = run(&mut s, "prepare c as select k from r where $1 is null;").unwrap_err();
        assert_eq!(e.message, "could not determine data type of parameter $1");
        let e = run(&mut s, "prepare a as select 1 from r;").unwrap_err();
        assert_eq!(e.message, "prepared statement \"a\" already exists");
        let e = run(&mut s, "execute a(1, 'x');").unwrap_err();
        assert!(e.message.starts_with("wrong number of parameters for prepared statement \"a\""), "{e}");
        let e = run(&mut s, "execute nope(1);").unwrap_err();
        assert_eq!(e.message, "prepared statement \"nope\" does not exist");
        run(&mut s, "deallocate a;").unwrap();
        assert!(run(&mut s, "deallocate a;").is_err());
        run(&mut s, "deallocate all;").unwrap();
        assert!(s.cluster.coordinator().prepared.is_empty());
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn five_custom_plans_then_the_costs_decide() {
        let mut s = world("prepare p(int) as select k, v from r where k = $1;");
        for i in 1..=5 {
            run(&mut s, &format!("execute p({i});")).unwrap();
        }
        let five = stmt(&s, "p").clone();
        assert_eq!((five.num_custom_plans, five.num_generic_plans, five.generic_cost), (5, 0, None));
        // Each custom plan: one partition (pruned at plan time), plus the planning term
        // of three range-table entries (r, its partition, + 1): 1000 × 0.0025 × 3.
        assert!(five.total_custom_cost / 5.0 > 7.5);
        run(&mut s, "execute p(6);").unwrap();
        let p = stmt(&s, "p").clone();
        let generic = p.generic_cost.expect("the sixth builds the generic plan to cost it");
        // Chose as plancache.c: generic when cheaper than the average custom plan.
        let went_generic = p.num_generic_plans == 1;
        assert_eq!(went_generic, generic < five.total_custom_cost / 5.0, "{p:?}");
        assert_eq!(p.num_custom_plans + p.num_generic_plans, 6);
        // The same choice again at the seventh when the generic plan won (its cost is
        // known and the custom average unchanged).
        run(&mut s, "execute p(7);").unwrap();
        if went_generic {
            assert_eq!(stmt(&s, "p").num_generic_plans, 2);
        }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_generic_plan_prunes_at_startup_and_analyze_invalidates_it() {
        let mut s =
            world("set plan_cache_mode = force_generic_plan;\nprepare g(int) as select k from r where k >= $1;");
        run(&mut s, "execute g(150);").unwrap();
        assert!(stmt(&s, "g").gplan.is_some());
        let s2 = s.with_query("execute g(150);").unwrap();
        let planned = s2.plan().unwrap();
        let Plan::Append { children, prune: Some(info), .. } = &planned.plan else { panic!("{:?}", planned.plan) };
        assert_eq!(children.len(), 2, "every partition in the plan");
        assert_eq!(crate::coordinator_sql::planner::find_matching_subplans(info), [false, true]);
        let mut low = info.clone();
        low.conjuncts.iter_mut().for_each(|c| c.bind_params(&[Datum::Int(50)]));
        assert_eq!(crate::coordinator_sql::planner::find_matching_subplans(&low), [true, true]);
        low.conjuncts.iter_mut().for_each(|c| c.bind_params(&[Datum::Null]));
        assert_eq!(crate::coordinator_sql::planner::find_matching_subplans(&low), [false, false]);
        run(&mut s, "analyze r;").unwrap();
        assert!(stmt(&s, "g").gplan.is_none(), "ANALYZE invalidates the generic plan");
        assert!(stmt(&s, "g").generic_cost.is_some(), "its cost stays known");
    }
}
