//! The plan rewrites the simulated shard does to every plan it runs (`sim::server`;
//! the coordinator's plans do not go through them): [`use_indexes`], a Sort on one
//! column directly over a SeqScan of a table with an index on that column becomes an
//! IndexScan (what lets the seed's `ORDER BY score DESC LIMIT n` on an indexed shard
//! table return at once); [`order_quals`], its filters' conjuncts cheapest first.
//!
//! Invariants:
//! - The rewrite changes how rows are produced, never which rows or their key order: it
//!   fires only when the Sort's single key is a plain column of the scanned table and
//!   nothing (no filter) sits between the Sort and the scan.
//! - Rows with equal keys may come in another order (an index breaks ties by row
//!   number, and a DESC scan walks it backwards, where the stable Sort keeps row order):
//!   SQL leaves that order open, as PostgreSQL's backward index scan does.
//! - It descends only through Limit, Result and Agg; a Sort anywhere else is left.
//!
//! Where it departs from PostgreSQL: the planner considers index paths for a query's
//! pathkeys (`build_index_paths` in indxpath.c) and keeps the cheapest path by cost
//! (costsize.c); here the index is taken whenever the shape matches, with or without a
//! LIMIT, and no cost is computed.

use super::{Expr, Plan};
use crate::types::Catalog;

/// The shard's quals in the order a PostgreSQL server evaluates them: each Result's
/// filter split into its conjuncts and ordered by cost (`order_qual_clauses`), so a
/// pushed `100 / a > 1 AND a <> 0` meets no zero, as on a real server. Descends
/// through Limit, Result, Agg and Sort, as [`use_indexes`] does.
pub fn order_quals(plan: Plan) -> Plan {
    match plan {
        Plan::Result { child, filter, targets } => Plan::Result {
            child: Box::new(order_quals(*child)),
            filter: filter.map(super::costsize::order_qual_tree),
            targets,
        },
        Plan::Limit { child, offset, count } => Plan::Limit { child: Box::new(order_quals(*child)), offset, count },
        Plan::Agg { child, strategy, group_by, aggs, split } => {
            Plan::Agg { child: Box::new(order_quals(*child)), strategy, group_by, aggs, split }
        }
        Plan::Sort { child, keys } => Plan::Sort { child: Box::new(order_quals(*child)), keys },
        other => other,
    }
}

pub fn use_indexes(plan: Plan, catalog: &Catalog) -> Plan {
    match plan {
        Plan::Sort { child, keys } => {
            let child = use_indexes(*child, catalog);
            if let (Plan::SeqScan { table, columns, .. }, [key]) = (&child, keys.as_slice()) {
                if let Expr::Col(c) = key.expr {
                    if catalog.get(table).is_some_and(|t| t.index_on(c).is_some()) {
                        return Plan::IndexScan {
                            table: table.clone(),
                            columns: columns.clone(),
                            column: c,
                            desc: key.desc,
                            alias: None,
                            index_only: false,
                            quals: vec![],
                            nest_param: None,
                        };
                    }
                }
            }
            Plan::Sort { child: Box::new(child), keys }
        }
        Plan::Limit { child, offset, count } => {
            Plan::Limit { child: Box::new(use_indexes(*child, catalog)), offset, count }
        }
        Plan::Result { child, filter, targets } => {
            Plan::Result { child: Box::new(use_indexes(*child, catalog)), filter, targets }
        }
        Plan::Agg { child, strategy, group_by, aggs, split } => {
            Plan::Agg { child: Box::new(use_indexes(*child, catalog)), strategy, group_by, aggs, split }
        }
        other => other,
    }
}
