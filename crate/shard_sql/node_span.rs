//! Where a node of a shard statement's tree is in the text, for error positions.
//!
//! Why not sqlparser's `Spanned` everywhere (issue 20: package size): its `span()`
//! of an `Expr` can reach a subquery, so a `Query`, so every `Statement`'s span; in
//! the page's first module (built without the `sql` feature) that pulled ~67 KB of
//! raw code in for the few node forms the page's shard parser (`fdw_grammar`) builds.
//! So the planner asks [`NodeSpan::node_span`]: with the `sql` feature it is
//! sqlparser's `span()`, unchanged; without it, the functions below compute the same
//! value for the forms `fdw_grammar` builds, by sqlparser's rules (a node's span is
//! the union of its parts' spans; a `Value`, a `*` argument, a keyword the tree keeps
//! no token for have none).
//!
//! sqlparser is the oracle: the tests compare these functions with `Spanned::span`
//! on every node of every tree the page's shard parser reads in its tests (presets,
//! lessons, protocol, grammar cases, function bodies).
//!
//! A form `fdw_grammar` never builds (a subquery, a join, `CASE`, …) gets the empty
//! span here, i.e. an error about it carries no position; in the page's first module
//! no such tree exists (whatever the small parser does not read, it refuses).

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, ObjectName, OrderByExpr, Query,
    Select, SelectItem, SetExpr, TableFactor, TableWithJoins, WildcardAdditionalOptions,
};
use sqlparser::tokenizer::Span;

/// A node's span in the text (1-based line/column, as sqlparser's `Spanned`).
pub(super) trait NodeSpan {
    fn node_span(&self) -> Span;
}

macro_rules! node_span {
    ($($node:ty => $ours:ident),* $(,)?) => {$(
        impl NodeSpan for $node {
            fn node_span(&self) -> Span {
                #[cfg(feature = "sql")]
                return sqlparser::ast::Spanned::span(self);
                #[cfg(not(feature = "sql"))]
                return $ours(self);
            }
        }
    )*};
}

node_span! {
    Expr => expr_span,
    Query => query_span,
    SetExpr => set_expr_span,
    SelectItem => select_item_span,
    TableFactor => table_factor_span,
    ObjectName => object_name_span,
    OrderByExpr => order_by_expr_span,
}

fn union(spans: impl IntoIterator<Item = Span>) -> Span {
    Span::union_iter(spans)
}

#[cfg_attr(feature = "sql", allow(dead_code))]
fn expr_span(e: &Expr) -> Span {
    match e {
        Expr::Identifier(ident) => ident.span,
        Expr::CompoundIdentifier(idents) => union(idents.iter().map(|i| i.span)),
        Expr::IsNull(inner) | Expr::IsNotNull(inner) | Expr::Nested(inner) | Expr::UnaryOp { expr: inner, .. } => {
            expr_span(inner)
        }
        Expr::BinaryOp { left, right, .. } => expr_span(left).union(&expr_span(right)),
        Expr::Function(f) => function_span(f),
        // sqlparser 0.53's `Value` keeps no span; other forms: see the module doc.
        _ => Span::empty(),
    }
}

fn function_span(f: &Function) -> Span {
    let Function { name, args, parameters, filter, within_group, .. } = f;
    union(
        name.0
            .iter()
            .map(|i| i.span)
            .chain([function_arguments_span(args), function_arguments_span(parameters)])
            .chain(filter.iter().map(|e| expr_span(e)))
            .chain(within_group.iter().map(order_by_expr_span)),
    )
}

fn function_arguments_span(args: &FunctionArguments) -> Span {
    match args {
        FunctionArguments::List(list) if list.clauses.is_empty() => union(list.args.iter().map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => expr_span(e),
            _ => Span::empty(),
        })),
        _ => Span::empty(),
    }
}

#[cfg_attr(feature = "sql", allow(dead_code))]
fn query_span(q: &Query) -> Span {
    let Query { with, body, order_by, limit, limit_by, offset, fetch, .. } = q;
    if with.is_some() || fetch.is_some() {
        return Span::empty();
    }
    union(
        std::iter::once(set_expr_span(body))
            .chain(order_by.iter().flat_map(|o| o.exprs.iter().map(order_by_expr_span)))
            .chain(limit.iter().map(expr_span))
            .chain(limit_by.iter().map(expr_span))
            .chain(offset.iter().map(|o| expr_span(&o.value))),
    )
}

#[cfg_attr(feature = "sql", allow(dead_code))]
fn set_expr_span(s: &SetExpr) -> Span {
    match s {
        SetExpr::Select(select) => select_span(select),
        SetExpr::Query(q) => query_span(q),
        SetExpr::SetOperation { left, right, .. } => set_expr_span(left).union(&set_expr_span(right)),
        _ => Span::empty(),
    }
}

fn select_span(s: &Select) -> Span {
    let group_by = match &s.group_by {
        GroupByExpr::Expressions(exprs, _) => union(exprs.iter().map(expr_span)),
        GroupByExpr::All(_) => Span::empty(),
    };
    union(
        std::iter::once(s.select_token.0.span)
            .chain(s.projection.iter().map(select_item_span))
            .chain(s.from.iter().map(table_with_joins_span))
            .chain(s.selection.iter().map(expr_span))
            .chain([group_by])
            .chain(s.cluster_by.iter().map(expr_span))
            .chain(s.distribute_by.iter().map(expr_span))
            .chain(s.sort_by.iter().map(expr_span))
            .chain(s.having.iter().map(expr_span))
            .chain(s.qualify.iter().map(expr_span)),
    )
}

fn table_with_joins_span(t: &TableWithJoins) -> Span {
    match t.joins.is_empty() {
        true => table_factor_span(&t.relation),
        false => Span::empty(),
    }
}

#[cfg_attr(feature = "sql", allow(dead_code))]
fn select_item_span(item: &SelectItem) -> Span {
    match item {
        SelectItem::UnnamedExpr(e) => expr_span(e),
        SelectItem::ExprWithAlias { expr, alias } => expr_span(expr).union(&alias.span),
        SelectItem::Wildcard(options) if plain_wildcard(options) => options.wildcard_token.0.span,
        SelectItem::QualifiedWildcard(name, options) if plain_wildcard(options) => {
            object_name_span(name).union(&options.wildcard_token.0.span)
        }
        _ => Span::empty(),
    }
}

/// `*` without the ILIKE / EXCLUDE / EXCEPT / REPLACE / RENAME other dialects add.
fn plain_wildcard(o: &WildcardAdditionalOptions) -> bool {
    o.opt_ilike.is_none()
        && o.opt_exclude.is_none()
        && o.opt_except.is_none()
        && o.opt_replace.is_none()
        && o.opt_rename.is_none()
}

#[cfg_attr(feature = "sql", allow(dead_code))]
fn table_factor_span(t: &TableFactor) -> Span {
    match t {
        TableFactor::Table { name, alias, .. } => union(name.0.iter().map(|i| i.span).chain(
            alias.iter().map(|a| union(std::iter::once(a.name.span).chain(a.columns.iter().map(|c| c.name.span)))),
        )),
        _ => Span::empty(),
    }
}

#[cfg_attr(feature = "sql", allow(dead_code))]
fn object_name_span(name: &ObjectName) -> Span {
    union(name.0.iter().map(|i| i.span))
}

#[cfg_attr(feature = "sql", allow(dead_code))]
fn order_by_expr_span(o: &OrderByExpr) -> Span {
    match o.with_fill {
        None => expr_span(&o.expr),
        Some(_) => Span::empty(),
    }
}

#[cfg(test)]
pub(super) mod tests {
    //! The oracle: sqlparser's `Spanned::span` on every node of a tree.
    use super::*;
    use sqlparser::ast::{Spanned, Statement};

    fn same<T: Spanned + std::fmt::Debug>(node: &T, ours: fn(&T) -> Span, nodes: &mut usize) {
        assert_eq!(ours(node), node.span(), "span of {node:?}");
        *nodes += 1;
    }

    /// Compares every node of `statement` reachable through the forms the page's
    /// shard parser builds; returns how many nodes were compared.
    pub(crate) fn assert_spans_as_sqlparser(statement: &Statement) -> usize {
        let mut nodes = 0;
        match statement {
            Statement::Query(q) => query(q, &mut nodes),
            Statement::Declare { stmts } => {
                for d in stmts {
                    if let Some(q) = &d.for_query {
                        query(q, &mut nodes);
                    }
                }
            }
            Statement::SetVariable { value, .. } => value.iter().for_each(|e| expr(e, &mut nodes)),
            _ => {}
        }
        nodes
    }

    fn query(q: &Query, nodes: &mut usize) {
        same(q, query_span, nodes);
        same(q.body.as_ref(), set_expr_span, nodes);
        if let SetExpr::Select(s) = q.body.as_ref() {
            for item in &s.projection {
                same(item, select_item_span, nodes);
                if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item {
                    expr(e, nodes);
                }
            }
            for t in &s.from {
                same(&t.relation, table_factor_span, nodes);
                if let TableFactor::Table { name, .. } = &t.relation {
                    same(name, object_name_span, nodes);
                }
            }
            s.selection.iter().for_each(|e| expr(e, nodes));
            if let GroupByExpr::Expressions(exprs, _) = &s.group_by {
                exprs.iter().for_each(|e| expr(e, nodes));
            }
            s.having.iter().for_each(|e| expr(e, nodes));
        }
        for o in q.order_by.iter().flat_map(|o| &o.exprs) {
            same(o, order_by_expr_span, nodes);
            expr(&o.expr, nodes);
        }
        q.limit.iter().for_each(|e| expr(e, nodes));
        q.offset.iter().for_each(|o| expr(&o.value, nodes));
    }

    pub(crate) fn expr(e: &Expr, nodes: &mut usize) {
        same(e, expr_span, nodes);
        match e {
            Expr::IsNull(inner) | Expr::IsNotNull(inner) | Expr::Nested(inner) | Expr::UnaryOp { expr: inner, .. } => {
                expr(inner, nodes)
            }
            Expr::BinaryOp { left, right, .. } => {
                expr(left, nodes);
                expr(right, nodes);
            }
            Expr::Function(f) => {
                same(&f.name, object_name_span, nodes);
                if let FunctionArguments::List(list) = &f.args {
                    for a in &list.args {
                        if let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = a {
                            expr(e, nodes);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}
