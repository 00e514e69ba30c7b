//! The one plan rewrite the sandbox does: a Sort on one column directly over a SeqScan
//! of a table with an index on that column becomes an IndexScan (what lets the seed's
//! `ORDER BY score DESC LIMIT n` on an indexed shard table return at once).

use super::{Expr, Plan};
use crate::types::Catalog;

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
        Plan::Agg { child, strategy, group_by, aggs } => {
            Plan::Agg { child: Box::new(use_indexes(*child, catalog)), strategy, group_by, aggs }
        }
        other => other,
    }
}
