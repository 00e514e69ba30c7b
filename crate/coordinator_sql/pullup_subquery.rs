//! Simple subqueries in a join's FROM pulled up into the join, as PostgreSQL 15's
//! `pull_up_subqueries` (prepjointree.c: `is_simple_subquery`,
//! `pull_up_simple_subquery`) does before the join search: the subquery's relation
//! becomes a member of the outer query's join, its WHERE conditions join the join
//! tree where the subquery stood, and each reference to one of its output columns
//! becomes the select-list expression it names (`pullup_replace_vars`). A WITH query
//! read once and not MATERIALIZED reaches here as such a subquery (`cte.rs`'s
//! `inline_cte`, as `SS_process_ctes` inlines it), so it is pulled up the same way.
//! The join is then planned as if it had been written over the relations themselves
//! (async Append, join pushdown and the join search all apply).
//!
//! Protocol: [`pull_up_subqueries`] takes a query whose FROM joins two or more members
//! and returns it rewritten with every subquery member replaced by its relation, or
//! None when it has no subquery member or one of them cannot be pulled up here (then
//! the join planner refuses that member by name, as before).
//!
//! Which subqueries are simple (`is_simple_subquery`): a plain SELECT (no set
//! operation) without WITH, aggregates, GROUP BY, HAVING, DISTINCT, window functions,
//! ORDER BY, LIMIT, OFFSET or FETCH, not LATERAL, whose select list calls no volatile
//! function (nor a set-returning one); the sandbox further asks that it read plain
//! relations of the catalog (one, or a chain of joins with ON, which then stands first
//! in its FROM item: its joins go before the item's, so no parenthesized join is
//! made), that it hold no subquery expression, and that the outer query hold none
//! either (its references to the subquery would need the same rewriting inside).
//!
//! Where its WHERE goes (`deconstruct_jointree` meets the pulled-up FromExpr's quals
//! where the subquery stood, before the join's own ON): into the ON of the join that
//! brings it in when that join is inner or it is that join's nullable side, first;
//! into the outer WHERE, first, when it is a member of the FROM list or the preserved
//! side of a LEFT (RIGHT) join that no later join makes nullable. Elsewhere (a FULL
//! join, a preserved side nulled by a later join) the sandbox could not place it: not
//! pulled up. On a nullable side, a select-list expression that is not a column
//! would need a PlaceHolderVar (`pullup_replace_vars` wraps non-strict expressions in
//! one): not pulled up either.
//!
//! Names: the subquery's bare column names are qualified with its relation's name (so
//! that no name becomes ambiguous in the outer scope). That name must differ from
//! every other member's and subquery alias (the subquery's range-table entry stays in
//! PostgreSQL's range table and keeps its name for EXPLAIN): a plain table is renamed
//! `name_1` as EXPLAIN's `set_rtable_names` names the later of two equal names; a
//! partitioned one is refused by name (its partitions' names would shift too).
//!
//! Invariants: the rewritten query returns the rows the written one does (each
//! output column is the expression it named; a condition moves to a place where it
//! filters the same rows); nothing is rewritten unless every subquery member is pulled
//! up.
//!
//! Where it departs from PostgreSQL: a subquery over a join that is not first in its
//! FROM item, over another subquery, or over a function is not pulled up here
//! (PostgreSQL pulls them up too); the range
//! table is not rebuilt, but a pushed-down foreign join's remote aliases
//! (`r1`, `r2`) follow PostgreSQL's range table all the same: [`RangeTable`] gives
//! each relation of the rewritten query the index it has there (the subquery's entry
//! stays where it was written, its relation is appended after the query's entries,
//! as `pull_up_simple_subquery` appends the subquery's range table).

use sqlparser::ast::{self, SelectItem, SetExpr, TableFactor};
use sqlparser::tokenizer::Location;

use std::cell::RefCell;

use super::catalog::{ident, relation_name, Node, RelKind};
use super::FrontError;

/// PostgreSQL's range-table indexes of the rewritten query's relations (by the name
/// each goes by), and the range table's length before the partitions
/// (`expand_inherited_rtentry` appends them after): what a pushed-down join's remote
/// aliases (`r4`) and a partitionwise join's partitions are numbered by.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct RangeTable {
    indexes: Vec<(String, usize)>,
    len: usize,
}

thread_local! {
    /// The range table of the rewritten query being planned (`with_range_table`).
    static RANGE_TABLE: RefCell<Option<RangeTable>> = const { RefCell::new(None) };
}

/// Plans `f` (the rewritten query's planning) with its range table in force.
pub(super) fn with_range_table<T>(rt: RangeTable, f: impl FnOnce() -> T) -> T {
    let before = RANGE_TABLE.with(|r| r.replace(Some(rt)));
    let out = f();
    RANGE_TABLE.with(|r| *r.borrow_mut() = before);
    out
}

/// The range-table index of the join member named `name`: PostgreSQL's for a query
/// rewritten here, else `written` (its index as the FROM clause numbers it).
pub(super) fn rt_index(name: &str, written: usize) -> usize {
    RANGE_TABLE.with(|r| {
        r.borrow()
            .as_ref()
            .and_then(|rt| rt.indexes.iter().find(|(n, _)| n == name).map(|(_, i)| *i))
            .unwrap_or(written)
    })
}

/// The range table's length before the partitions: PostgreSQL's for a query rewritten
/// here, else `written`.
pub(super) fn range_table_len(written: usize) -> usize {
    RANGE_TABLE.with(|r| r.borrow().as_ref().map_or(written, |rt| rt.len))
}

/// The query with its simple subqueries in FROM pulled up into its join, and its
/// range table as PostgreSQL's would be; or None.
pub(super) fn pull_up_subqueries(
    coord: &Node,
    q: &ast::Query,
    at: Location,
) -> Result<Option<(ast::Query, RangeTable)>, FrontError> {
    let SetExpr::Select(s) = q.body.as_ref() else { return Ok(None) };
    let members: usize = s.from.iter().map(|f| 1 + f.joins.len()).sum();
    if members < 2 || super::subselect::has_sublinks(q) {
        return Ok(None);
    }
    // The members in FROM order: (FROM item, None) for an item's first relation,
    // (item, Some(j)) for its j-th join's.
    let mut slots: Vec<(usize, Option<usize>)> = vec![];
    for (i, f) in s.from.iter().enumerate() {
        slots.push((i, None));
        slots.extend((0..f.joins.len()).map(|j| (i, Some(j))));
    }
    let factor = |(i, j): (usize, Option<usize>)| match j {
        None => &s.from[i].relation,
        Some(j) => &s.from[i].joins[j].relation,
    };
    if slots.iter().any(|&k| matches!(factor(k), TableFactor::NestedJoin { .. })) {
        return Ok(None);
    }
    if !slots.iter().any(|&k| matches!(factor(k), TableFactor::Derived { .. })) {
        return Ok(None);
    }
    // Every member's name and columns (a plain relation's as the catalog has them).
    let mut plain: Vec<(String, Vec<String>)> = vec![];
    let mut subs: Vec<Simple> = vec![];
    for &k in &slots {
        match factor(k) {
            TableFactor::Table { name, alias, args: None, .. } => {
                let Ok(rel_name) = relation_name(name) else { return Ok(None) };
                let Some(rel) = coord.relation(&rel_name) else { return Ok(None) };
                let n = alias.as_ref().map(|a| ident(&a.name)).unwrap_or(rel_name);
                plain.push((n, rel.columns.iter().map(|c| c.name.clone()).collect()));
            }
            TableFactor::Derived { lateral: false, subquery, alias } => {
                let Some(sub) = simple(coord, subquery, alias.as_ref(), k) else { return Ok(None) };
                subs.push(sub);
            }
            _ => return Ok(None),
        }
    }
    // Each pulled-up relation goes by a name of its own (see the module doc).
    let mut taken: Vec<String> = plain.iter().map(|(n, _)| n.clone()).collect();
    taken.extend(subs.iter().map(|x| x.alias.clone()));
    for sub in subs.iter_mut() {
        // A subquery over a join: each of its relations goes by a name the outer query
        // does not use (renaming one of several is not done here).
        if !sub.joined_names.is_empty() {
            let names = || std::iter::once(&sub.inner_name).chain(&sub.joined_names);
            if names().any(|n| taken.contains(n)) {
                return Err(FrontError::unsupported(
                    format!(
                        "a subquery in FROM over a join whose relations' names another member of the outer join \
                         has (\"{}\"): give them other aliases",
                        names().find(|n| taken.contains(n)).cloned().unwrap_or_default()
                    ),
                    at,
                ));
            }
            taken.extend(names().cloned().collect::<Vec<_>>());
            continue;
        }
        if taken.contains(&sub.inner_name) {
            if sub.partitioned {
                return Err(FrontError::unsupported(
                    format!(
                        "a subquery in FROM over the partitioned table \"{}\" whose name another member of the \
                         join has (give one of them an alias)",
                        sub.inner_name
                    ),
                    at,
                ));
            }
            let renamed = (1..).map(|n| format!("{}_{n}", sub.inner_name)).find(|c| !taken.contains(c));
            sub.rename(renamed.unwrap_or_default());
        }
        taken.push(sub.inner_name.clone());
    }
    // Where each subquery's conditions go; a subquery they cannot go anywhere for, or
    // whose non-column outputs would be nulled, is not pulled up.
    let mut placements = vec![];
    for sub in &subs {
        let Some(p) = placement(s, sub.slot) else { return Ok(None) };
        // A subquery over a join stands first in its FROM item (its joins go before
        // the item's: a join chain, not a parenthesized join).
        if !sub.joins.is_empty() && sub.slot.1.is_some() {
            return Ok(None);
        }
        if p.nullable && !sub.outputs.iter().all(|(_, e)| is_column(e)) {
            return Ok(None);
        }
        placements.push(p.place);
    }

    let scope = OuterScope { plain: &plain, subs: &subs };
    let mut q2 = q.clone();
    let SetExpr::Select(s2) = q2.body.as_mut() else { return Ok(None) };
    // The select list: `*` and `s.*` spelled out, references replaced (the output
    // column keeping its name).
    let mut projection = vec![];
    for item in std::mem::take(&mut s2.projection) {
        match item {
            SelectItem::Wildcard(_) => {
                for &k in &slots {
                    if let Some(sub) = subs.iter().find(|x| x.slot == k) {
                        projection.extend(sub.star());
                    } else {
                        let i = slots.iter().filter(|&&x| x < k && !subs.iter().any(|s| s.slot == x)).count();
                        let name = name_ident(&plain[i].0);
                        projection.push(SelectItem::QualifiedWildcard(
                            ast::ObjectName(vec![name]),
                            ast::WildcardAdditionalOptions::default(),
                        ));
                    }
                }
            }
            SelectItem::QualifiedWildcard(ref n, _) => {
                let sub = match n.0.as_slice() {
                    [one] => subs.iter().find(|x| x.alias == ident(one)),
                    _ => None,
                };
                match sub {
                    Some(sub) => projection.extend(sub.star()),
                    None => projection.push(item),
                }
            }
            SelectItem::UnnamedExpr(e) => {
                let name = match &e {
                    ast::Expr::Identifier(i) => Some(i.clone()),
                    ast::Expr::CompoundIdentifier(p) => p.last().cloned(),
                    _ => None,
                };
                let mut e2 = e.clone();
                scope.replace(&mut e2, at)?;
                match name {
                    Some(alias) if e2 != e => projection.push(SelectItem::ExprWithAlias { expr: e2, alias }),
                    _ => projection.push(SelectItem::UnnamedExpr(e2)),
                }
            }
            SelectItem::ExprWithAlias { mut expr, alias } => {
                scope.replace(&mut expr, at)?;
                projection.push(SelectItem::ExprWithAlias { expr, alias });
            }
        }
    }
    let output_names = super::prepjointree::output_names(&projection);
    s2.projection = projection;
    if let Some(w) = s2.selection.as_mut() {
        scope.replace(w, at)?;
    }
    for f in s2.from.iter_mut() {
        for j in f.joins.iter_mut() {
            if let Some(ast::JoinConstraint::On(c)) = constraint_mut(&mut j.join_operator) {
                scope.replace(c, at)?;
            }
        }
    }
    if let ast::GroupByExpr::Expressions(v, _) = &mut s2.group_by {
        // GROUP BY names an input column before an output one.
        for e in v.iter_mut() {
            scope.replace(e, at)?;
        }
    }
    if let Some(h) = s2.having.as_mut() {
        scope.replace(h, at)?;
    }
    // `WINDOW w AS (…)`: its keys are the query's expressions as an OVER's are.
    for ast::NamedWindowDefinition(_, def) in s2.named_window.iter_mut() {
        if let ast::NamedWindowExpr::WindowSpec(spec) = def {
            scope.replace_in_window(spec, at)?;
        }
    }
    // The subqueries' relations in their places, their conditions where they go (in
    // FROM order, each before the conditions written there).
    let mut where_first: Vec<ast::Expr> = vec![];
    for (sub, place) in subs.iter().zip(&placements) {
        let (i, j) = sub.slot;
        match j {
            None => s2.from[i].relation = sub.relation.clone(),
            Some(j) => s2.from[i].joins[j].relation = sub.relation.clone(),
        }
        let Some(quals) = sub.quals.clone() else { continue };
        match *place {
            Place::Where => where_first.push(quals),
            Place::On(i, j) => {
                let Some(ast::JoinConstraint::On(c)) = constraint_mut(&mut s2.from[i].joins[j].join_operator) else {
                    return Ok(None);
                };
                *c = and(nested(quals), nested(c.clone()));
            }
        }
    }
    // A subquery's joins, first in its FROM item's chain (after the ON conditions
    // above were placed by the item's original numbering).
    for sub in subs.iter().filter(|x| !x.joins.is_empty()) {
        let item = &mut s2.from[sub.slot.0];
        let after = std::mem::take(&mut item.joins);
        item.joins = sub.joins.iter().cloned().chain(after).collect();
    }
    if !where_first.is_empty() {
        let mut all: Vec<ast::Expr> = where_first.into_iter().map(nested).collect();
        all.extend(s2.selection.take().map(nested));
        s2.selection = all.into_iter().reduce(and);
    }
    if let Some(ob) = q2.order_by.as_mut() {
        for o in ob.exprs.iter_mut() {
            // ORDER BY names an output column before an input one.
            if !matches!(&o.expr, ast::Expr::Identifier(i) if output_names.contains(&ident(i))) {
                scope.replace(&mut o.expr, at)?;
            }
        }
    }
    // The range table: each member where it is written (a JOIN's own entry after its
    // right member), then the pulled-up relations in the order they were met.
    let mut indexes = vec![];
    let mut next = 0;
    for (&k, member) in slots.iter().zip(0..) {
        next += 1;
        if !subs.iter().any(|x| x.slot == k) {
            let i = slots.iter().take(member).filter(|&&x| !subs.iter().any(|s| s.slot == x)).count();
            indexes.push((plain[i].0.clone(), next));
        }
        next += k.1.is_some() as usize;
    }
    for sub in &subs {
        // Its own range table: its first relation, then each join's relation and the
        // join's entry.
        next += 1;
        indexes.push((sub.inner_name.clone(), next));
        for n in &sub.joined_names {
            next += 1;
            indexes.push((n.clone(), next));
            next += 1;
        }
    }
    Ok(Some((q2, RangeTable { indexes, len: next })))
}

/// A subquery member that can be pulled up.
#[derive(Debug)]
struct Simple {
    /// Its place in FROM (see `slots`).
    slot: (usize, Option<usize>),
    /// The name the outer query calls it by.
    alias: String,
    /// Its relation as it will stand in the outer FROM (aliased when renamed).
    relation: TableFactor,
    /// The relation's name in the outer query once pulled up.
    inner_name: String,
    /// Is the relation partitioned (renaming it would shift its partitions' names)?
    partitioned: bool,
    /// Its output columns: name and expression, names qualified with `inner_name`.
    outputs: Vec<(String, ast::Expr)>,
    /// Its WHERE, names qualified.
    quals: Option<ast::Expr>,
    /// The joins of its FROM after `relation` (ON conditions qualified), and the
    /// names of the relations they bring in: a subquery over a join.
    joins: Vec<ast::Join>,
    joined_names: Vec<String>,
}

impl Simple {
    /// Gives the relation another name (and its qualified references with it).
    fn rename(&mut self, to: String) {
        let from = std::mem::replace(&mut self.inner_name, to.clone());
        let requalify = |e: &mut ast::Expr| {
            super::prepjointree::walk_mut(e, &mut |x| {
                if let ast::Expr::CompoundIdentifier(p) = x {
                    if p.len() == 2 && ident(&p[0]) == from {
                        p[0] = name_ident(&to);
                    }
                }
            })
        };
        self.outputs.iter_mut().for_each(|(_, e)| requalify(e));
        if let Some(q) = self.quals.as_mut() {
            requalify(q);
        }
        if let TableFactor::Table { alias, .. } = &mut self.relation {
            *alias = Some(ast::TableAlias { name: name_ident(&to), columns: vec![] });
        }
    }

    /// Its output columns as select-list items named as the subquery names them.
    fn star(&self) -> Vec<SelectItem> {
        self.outputs.iter().map(|(n, e)| SelectItem::ExprWithAlias { expr: e.clone(), alias: name_ident(n) }).collect()
    }
}

/// `is_simple_subquery` (with the sandbox's further conditions: see the module doc),
/// and the subquery's parts qualified for the outer scope.
fn simple(
    coord: &Node,
    sub: &ast::Query,
    alias: Option<&ast::TableAlias>,
    slot: (usize, Option<usize>),
) -> Option<Simple> {
    let alias = alias?;
    if sub.with.is_some()
        || sub.order_by.is_some()
        || sub.limit.is_some()
        || sub.offset.is_some()
        || sub.fetch.is_some()
        || !sub.limit_by.is_empty()
        || sub.for_clause.is_some()
        || !sub.locks.is_empty()
        || super::subselect::has_sublinks(sub)
    {
        return None;
    }
    let SetExpr::Select(s) = sub.body.as_ref() else { return None };
    let no_group = matches!(&s.group_by, ast::GroupByExpr::Expressions(v, m) if v.is_empty() && m.is_empty());
    if s.distinct.is_some()
        || !no_group
        || s.having.is_some()
        || s.qualify.is_some()
        || !s.named_window.is_empty()
        || s.top.is_some()
        || s.into.is_some()
        || !s.lateral_views.is_empty()
        || !s.cluster_by.is_empty()
        || !s.distribute_by.is_empty()
        || !s.sort_by.is_empty()
    {
        return None;
    }
    let [from] = s.from.as_slice() else { return None };
    // Its relations: plain tables of the catalog, joined (if at all) by inner or outer
    // joins with ON, each going by its own name.
    let mut members: Vec<(String, Vec<String>)> = vec![];
    let mut first: Option<(&ast::ObjectName, &Option<ast::TableAlias>, bool)> = None;
    for f in std::iter::once(&from.relation).chain(from.joins.iter().map(|j| &j.relation)) {
        let TableFactor::Table { name, alias: rel_alias, args: None, with_hints, .. } = f else { return None };
        if !with_hints.is_empty() || rel_alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
            return None;
        }
        let rel = coord.relation(&relation_name(name).ok()?)?;
        let n = rel_alias.as_ref().map(|a| ident(&a.name)).unwrap_or_else(|| rel.name.clone());
        if members.iter().any(|(m, _)| *m == n) {
            return None;
        }
        members.push((n, rel.columns.iter().map(|c| c.name.clone()).collect()));
        first = first.or(Some((name, rel_alias, matches!(rel.kind, RelKind::Partitioned { .. }))));
    }
    let (name, rel_alias, partitioned) = first?;
    if !from.joins.iter().all(|j| matches!(constraint(&j.join_operator), Some(ast::JoinConstraint::On(_)))) {
        return None;
    }
    let inner_name = members[0].0.clone();
    // A bare column belongs to the one relation that has it (ambiguous: not pulled up).
    let mut ambiguous = false;
    let mut qualify = |e: &mut ast::Expr| {
        super::prepjointree::walk_mut(e, &mut |x| {
            if let ast::Expr::Identifier(i) = x {
                let col = ident(i);
                let mut owners = members.iter().filter(|(_, cols)| cols.contains(&col));
                match (owners.next(), owners.next()) {
                    (Some((owner, _)), None) => {
                        *x = ast::Expr::CompoundIdentifier(vec![name_ident(owner), i.clone()]);
                    }
                    (Some(_), Some(_)) => ambiguous = true,
                    _ => {}
                }
            }
        })
    };
    let mut joins = from.joins.clone();
    for j in joins.iter_mut() {
        match constraint_mut(&mut j.join_operator) {
            Some(ast::JoinConstraint::On(c)) if pullable_expr(c) => qualify(c),
            _ => return None,
        }
    }
    let mut outputs: Vec<(String, ast::Expr)> = vec![];
    for item in &s.projection {
        match item {
            SelectItem::Wildcard(_) => {
                for (m, cols) in &members {
                    outputs.extend(cols.iter().map(|c| (c.clone(), column(m, c))));
                }
            }
            SelectItem::QualifiedWildcard(n, _) => {
                let [one] = n.0.as_slice() else { return None };
                let (m, cols) = members.iter().find(|(m, _)| *m == ident(one))?;
                outputs.extend(cols.iter().map(|c| (c.clone(), column(m, c))));
            }
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                if !pullable_expr(e) {
                    return None;
                }
                let name = match item {
                    SelectItem::ExprWithAlias { alias, .. } => ident(alias),
                    _ => figure_colname(e),
                };
                let mut e = e.clone();
                qualify(&mut e);
                outputs.push((name, e));
            }
        }
    }
    // Column aliases (`(…) AS s (a, b)`) rename the outputs in order.
    if alias.columns.len() > outputs.len() {
        return None;
    }
    for (o, c) in outputs.iter_mut().zip(&alias.columns) {
        o.0 = ident(&c.name);
    }
    let mut quals = s.selection.clone();
    if let Some(w) = quals.as_mut() {
        if !pullable_expr(w) {
            return None;
        }
        qualify(w);
    }
    if ambiguous {
        return None;
    }
    let relation = crate::shard_sql::plain_table(name.clone(), rel_alias.clone());
    Some(Simple {
        slot,
        alias: ident(&alias.name),
        relation,
        inner_name,
        partitioned,
        outputs,
        quals,
        joins,
        joined_names: members.iter().skip(1).map(|(m, _)| m.clone()).collect(),
    })
}

/// May this select-list expression or condition be pulled up? Not when it calls a
/// function the sandbox does not know to be immutable (a volatile one would be
/// evaluated elsewhere than written; a set-returning one would multiply rows),
/// reads an aggregate or a window function, or holds a subquery.
fn pullable_expr(e: &ast::Expr) -> bool {
    let mut ok = true;
    let mut e = e.clone();
    super::prepjointree::walk_mut(&mut e, &mut |x| match x {
        ast::Expr::Function(f) => {
            let name = f.name.to_string().to_lowercase();
            ok &= f.over.is_none()
                && matches!(
                    name.as_str(),
                    "length" | "upper" | "lower" | "substr" | "abs" | "coalesce" | "round" | "concat"
                );
        }
        ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. } => ok = false,
        _ => {}
    });
    ok
}

/// The name PostgreSQL gives an unnamed select-list item (`FigureColname`): a
/// column's name, a function's, else `?column?`.
fn figure_colname(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(i) => ident(i),
        ast::Expr::CompoundIdentifier(p) => p.last().map(ident).unwrap_or_default(),
        ast::Expr::Function(f) => f.name.0.last().map(ident).unwrap_or_default(),
        ast::Expr::Nested(x) => figure_colname(x),
        _ => "?column?".into(),
    }
}

fn is_column(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::CompoundIdentifier(p) if p.len() == 2)
}

fn column(rel: &str, col: &str) -> ast::Expr {
    ast::Expr::CompoundIdentifier(vec![name_ident(rel), name_ident(col)])
}

/// An identifier as written for a name already folded: quoted unless it is
/// lower-case letters, digits and underscores.
fn name_ident(name: &str) -> ast::Ident {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        ast::Ident::new(name)
    } else {
        ast::Ident::with_quote('"', name)
    }
}

fn nested(e: ast::Expr) -> ast::Expr {
    match e {
        e @ (ast::Expr::Nested(_) | ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)) => e,
        e => ast::Expr::Nested(Box::new(e)),
    }
}

fn and(a: ast::Expr, b: ast::Expr) -> ast::Expr {
    ast::Expr::BinaryOp { left: Box::new(a), op: ast::BinaryOperator::And, right: Box::new(b) }
}

/// Where a pulled-up subquery's conditions go.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Place {
    /// First in the outer WHERE.
    Where,
    /// First in the ON of FROM item `.0`'s join `.1`.
    On(usize, usize),
}

struct Placement {
    place: Place,
    /// Is the member on a nullable side of some outer join?
    nullable: bool,
}

/// Where the member at `slot` takes its conditions, and whether an outer join nulls
/// it; None when neither the WHERE nor an ON filters exactly its rows (see the module
/// doc).
fn placement(s: &ast::Select, (i, j): (usize, Option<usize>)) -> Option<Placement> {
    use ast::JoinOperator as J;
    let joins = &s.from[i].joins;
    let kind = |op: &J| match op {
        J::Inner(_) | J::CrossJoin => Some('i'),
        J::LeftOuter(_) => Some('l'),
        J::RightOuter(_) => Some('r'),
        J::FullOuter(_) => Some('f'),
        _ => None,
    };
    let kinds: Vec<char> = joins.iter().map(|jn| kind(&jn.join_operator)).collect::<Option<_>>()?;
    let has_on = |k: usize| matches!(constraint(&joins[k].join_operator), Some(ast::JoinConstraint::On(_)));
    // The joins after the one that brings the member in: a RIGHT or FULL one nulls
    // everything to its left.
    let first_after = j.map_or(1, |j| j + 1);
    let nulled_later = kinds.iter().skip(first_after).any(|&k| k == 'r' || k == 'f');
    match j {
        // The leftmost member of its FROM item.
        None => match kinds.first() {
            None => Some(Placement { place: Place::Where, nullable: false }),
            Some('i') if has_on(0) => Some(Placement { place: Place::On(i, 0), nullable: nulled_later }),
            Some('l') if !nulled_later => Some(Placement { place: Place::Where, nullable: false }),
            Some('r') if has_on(0) => Some(Placement { place: Place::On(i, 0), nullable: true }),
            _ => None,
        },
        Some(j) => match kinds[j] {
            'i' if has_on(j) => Some(Placement { place: Place::On(i, j), nullable: nulled_later }),
            'l' if has_on(j) => Some(Placement { place: Place::On(i, j), nullable: true }),
            'r' if !nulled_later => Some(Placement { place: Place::Where, nullable: false }),
            _ => None,
        },
    }
}

fn constraint(op: &ast::JoinOperator) -> Option<&ast::JoinConstraint> {
    use ast::JoinOperator as J;
    match op {
        J::Inner(c) | J::LeftOuter(c) | J::RightOuter(c) | J::FullOuter(c) => Some(c),
        _ => None,
    }
}

fn constraint_mut(op: &mut ast::JoinOperator) -> Option<&mut ast::JoinConstraint> {
    use ast::JoinOperator as J;
    match op {
        J::Inner(c) | J::LeftOuter(c) | J::RightOuter(c) | J::FullOuter(c) => Some(c),
        _ => None,
    }
}

/// The outer query's names: its plain members and its pulled-up subqueries.
struct OuterScope<'a> {
    plain: &'a [(String, Vec<String>)],
    subs: &'a [Simple],
}

impl OuterScope<'_> {
    /// [`Self::replace`] in a named window's PARTITION BY and ORDER BY.
    fn replace_in_window(&self, spec: &mut ast::WindowSpec, at: Location) -> Result<(), FrontError> {
        for e in spec.partition_by.iter_mut().chain(spec.order_by.iter_mut().map(|o| &mut o.expr)) {
            self.replace(e, at)?;
        }
        Ok(())
    }

    /// Replaces each reference to a subquery's output column in `e` with the
    /// expression it names (`pullup_replace_vars`), in parentheses unless a column.
    fn replace(&self, e: &mut ast::Expr, at: Location) -> Result<(), FrontError> {
        let mut err = None;
        super::prepjointree::walk_mut(e, &mut |x| {
            let found = match &*x {
                ast::Expr::CompoundIdentifier(p) if p.len() == 2 => {
                    let (rel, col) = (ident(&p[0]), ident(&p[1]));
                    match self.subs.iter().find(|s| s.alias == rel) {
                        Some(sub) => match sub.outputs.iter().filter(|(n, _)| *n == col).count() {
                            1 => sub.outputs.iter().find(|(n, _)| *n == col).map(|(_, e)| e.clone()),
                            0 => {
                                err = Some(format!("column {rel}.{col} does not exist"));
                                None
                            }
                            _ => {
                                err = Some(format!("column reference \"{col}\" is ambiguous"));
                                None
                            }
                        },
                        None => None,
                    }
                }
                ast::Expr::Identifier(i) => {
                    let col = ident(i);
                    let in_plain = self.plain.iter().filter(|(_, cols)| cols.contains(&col)).count();
                    let in_subs: Vec<&ast::Expr> = self
                        .subs
                        .iter()
                        .flat_map(|s| s.outputs.iter().filter(|(n, _)| *n == col).map(|(_, e)| e))
                        .collect();
                    match (in_plain, in_subs.as_slice()) {
                        (0, [one]) => Some((*one).clone()),
                        (_, []) => None,
                        _ => {
                            err = Some(format!("column reference \"{col}\" is ambiguous"));
                            None
                        }
                    }
                }
                _ => None,
            };
            if let Some(r) = found {
                *x = nested(r);
            }
        });
        match err {
            Some(m) => Err(FrontError::at(m, at)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    fn node() -> Node {
        let text = "-- @shard s1\ncreate table t1 (id int, v int);\n-- @coordinator\n\
            create extension postgres_fdw;\n\
            create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres');\n\
            create user mapping for public server s1;\n\
            create table pt (id int, v int) partition by range (id);\n\
            create foreign table pt1 partition of pt for values from (1) to (1001) server s1 options (table_name 't1');\n\
            create table loc (id int, v int, name text);\n-- @query\nselect 1;\n";
        let sc = super::super::SqlScenario::load(text).expect("scenario parses");
        sc.cluster.coordinator().clone()
    }

    fn rewrite(sql: &str) -> Option<String> {
        let q = match Parser::parse_sql(&PostgreSqlDialect {}, sql).expect("parses").remove(0) {
            ast::Statement::Query(q) => q,
            _ => panic!("not a query"),
        };
        let at = Location { line: 0, column: 0 };
        pull_up_subqueries(&node(), &q, at).expect("no error").map(|(q, _)| q.to_string())
    }

    #[test]
    fn subquery_becomes_its_relation_with_its_where_in_on() {
        assert_eq!(
            rewrite("select * from (select id, v from pt where id < 3) s join loc on s.id = loc.id").as_deref(),
            Some("SELECT pt.id AS id, pt.v AS v, loc.* FROM pt JOIN loc ON (pt.id < 3) AND (pt.id = loc.id)")
        );
    }

    #[test]
    fn expressions_replace_references_and_keep_names() {
        assert_eq!(
            rewrite("select s.w, name from loc, (select id, v + 1 as w from pt) s where s.id = loc.id and w > 2")
                .as_deref(),
            Some("SELECT (pt.v + 1) AS w, name FROM loc, pt WHERE pt.id = loc.id AND (pt.v + 1) > 2")
        );
    }

    /// A window's keys are the query's expressions: an OVER's and a named window's
    /// references to the subquery are replaced as the select list's are.
    #[test]
    fn window_keys_replace_references() {
        assert_eq!(
            rewrite("select s.id, lag(loc.id) over (partition by s.v order by s.id) from (select id, v from pt) s join loc on s.id = loc.id")
                .as_deref(),
            Some("SELECT pt.id AS id, lag(loc.id) OVER (PARTITION BY pt.v ORDER BY pt.id) FROM pt JOIN loc ON pt.id = loc.id")
        );
        assert_eq!(
            rewrite(
                "select rank() over w from (select id from pt) s join loc on s.id = loc.id window w as (order by s.id)"
            )
            .as_deref(),
            Some("SELECT rank() OVER w FROM pt JOIN loc ON pt.id = loc.id WINDOW w AS (ORDER BY pt.id)")
        );
    }

    #[test]
    fn left_join_nullable_side_takes_its_where_in_on_and_preserved_side_in_where() {
        assert_eq!(
            rewrite("select loc.id from loc left join (select id from pt where v = 1) s on s.id = loc.id").as_deref(),
            Some("SELECT loc.id FROM loc LEFT JOIN pt ON (pt.v = 1) AND (pt.id = loc.id)")
        );
        assert_eq!(
            rewrite("select s.id from (select id from pt where v = 1) s left join loc on s.id = loc.id").as_deref(),
            Some("SELECT pt.id AS id FROM pt LEFT JOIN loc ON pt.id = loc.id WHERE (pt.v = 1)")
        );
    }

    #[test]
    fn what_is_not_simple_or_cannot_be_placed_stays() {
        // Aggregate, DISTINCT, LIMIT, a volatile select list: not simple.
        assert_eq!(
            rewrite("select * from (select id, count(*) from pt group by id) s join loc on s.id = loc.id"),
            None
        );
        assert_eq!(rewrite("select * from (select distinct id from pt) s join loc on s.id = loc.id"), None);
        assert_eq!(rewrite("select * from (select id from pt limit 3) s join loc on s.id = loc.id"), None);
        assert_eq!(rewrite("select * from (select id, random() r from pt) s join loc on s.id = loc.id"), None);
        // A FULL join's side with a WHERE: no place filters exactly its rows.
        assert_eq!(rewrite("select * from (select id from pt where v = 1) s full join loc on s.id = loc.id"), None);
        // A non-column output on a nullable side would need a PlaceHolderVar.
        assert_eq!(rewrite("select * from loc left join (select id, v + 1 w from pt) s on s.id = loc.id"), None);
    }

    #[test]
    fn a_plain_table_of_the_same_name_is_renamed_as_explain_names_it() {
        assert_eq!(
            rewrite("select s.id from (select id from loc) s join loc on s.id = loc.id").as_deref(),
            Some("SELECT loc_1.id AS id FROM loc AS loc_1 JOIN loc ON loc_1.id = loc.id")
        );
    }

    #[test]
    fn pulled_up_relations_follow_the_query_in_the_range_table() {
        let q = match Parser::parse_sql(
            &PostgreSqlDialect {},
            "select 1 from (select id from pt) a join (select id from loc) b on a.id = b.id, loc c",
        )
        .expect("parses")
        .remove(0)
        {
            ast::Statement::Query(q) => q,
            _ => panic!("not a query"),
        };
        let (_, rt) = pull_up_subqueries(&node(), &q, Location { line: 0, column: 0 }).unwrap().unwrap();
        // a 1, b 2, the JOIN 3, c 4; then pt 5 and loc 6.
        let expected = [("c", 4), ("pt", 5), ("loc", 6)].map(|(n, i)| (n.to_string(), i));
        assert_eq!(rt, RangeTable { indexes: expected.to_vec(), len: 6 });
        with_range_table(rt, || {
            assert_eq!((rt_index("pt", 1), rt_index("x", 9), range_table_len(3)), (5, 9, 6));
        });
        assert_eq!((rt_index("pt", 1), range_table_len(3)), (1, 3));
    }

    #[test]
    fn a_subquery_over_a_join_leads_its_chain() {
        assert_eq!(
            rewrite(
                "select s.v, c.name from (select a.id, b.v from pt a join loc b on a.id = b.id where b.v = 1) s \
                 join loc c on s.id = c.id"
            )
            .as_deref(),
            Some(
                "SELECT b.v AS v, c.name FROM pt AS a JOIN loc AS b ON a.id = b.id JOIN loc AS c ON (b.v = 1) AND \
                 (a.id = c.id)"
            )
        );
        // Not first in its FROM item: not pulled up.
        assert_eq!(
            rewrite("select 1 from loc c join (select a.id from pt a join loc b on a.id = b.id) s on s.id = c.id"),
            None
        );
    }

    #[test]
    fn unknown_column_of_a_subquery_is_an_error() {
        let q = match Parser::parse_sql(
            &PostgreSqlDialect {},
            "select s.v from (select id from pt) s join loc on s.id = loc.id",
        )
        .expect("parses")
        .remove(0)
        {
            ast::Statement::Query(q) => q,
            _ => panic!("not a query"),
        };
        let e = pull_up_subqueries(&node(), &q, Location { line: 0, column: 0 }).unwrap_err();
        assert!(e.message.contains("column s.v does not exist"), "{}", e.message);
    }
}
