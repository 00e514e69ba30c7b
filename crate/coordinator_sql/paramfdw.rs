//! Parameterized foreign paths: the second half of postgres_fdw's
//! `postgresGetForeignPaths` (a Foreign Scan whose Remote SQL compares a column with
//! `$1`, the outer row's value of a Nested Loop), and the Append of such scans that
//! `add_paths_to_append_rel` builds over foreign partitions, with run-time pruning
//! on the parameter (`make_partition_pruneinfo` over a PARAM_EXEC, nodeAppend.c's
//! `ExecReScanAppend` resetting `as_valid_subplans` when it changes).
//!
//! What PostgreSQL 15 does, and the sandbox with it:
//! - postgres_fdw builds parameterized paths only with `use_remote_estimate` on (the
//!   foreign table's option, else its server's): without it "we have no way to
//!   estimate whether any join clauses would be worth sending across". So a query
//!   over foreign tables without that option never gets this plan, whatever the
//!   `enable_*` settings say (measured on PostgreSQL 15: `enable_hashjoin`,
//!   `enable_mergejoin` and `enable_material` off give a Nested Loop with a Join
//!   Filter over the whole Append, not a parameterized one);
//! - the join clause `outer.k = inner.k` moves into the inner relation's scans as
//!   `$1::type = k` (the outer side first, as the equivalence class builds it), after
//!   the relation's own remote conditions (deparse.c appends the join clauses last);
//! - for a partitioned inner relation, every partition needs such a path (a foreign
//!   partition without `use_remote_estimate` has none, and `reparameterize_path` has
//!   no case for a Foreign Scan): then the Append of them is parameterized too, and
//!   since the clause is on the partition key, the Append prunes at each rescan by
//!   the parameter's value: partitions that cannot hold it are not run in that
//!   loop (`(never executed)` in EXPLAIN ANALYZE when no loop ran them);
//! - the Nested Loop sets the parameter from each outer row and rescans its inner
//!   side with the parameter marked changed (`nestParams`, `chgParam`): the Append
//!   defers each child's rescan to its next run, and a Foreign Scan that has a
//!   cursor closes it and declares it again with the new value
//!   (postgresReScanForeignScan); one never run again keeps its cursor until
//!   ExecEnd.
//!
//! Invariants: the parameter is one PARAM_EXEC number, [`NEST_FDW_PARAM`], set only
//! by the Nested Loop right above the scans that read it (a two-relation join has
//! one such Nested Loop); the parameterized clause is an equality of two columns of
//! one type, the inner one a plain column of the inner relation; nothing but a
//! Nested Loop's inner side reads it.
//!
//! Its estimate: with remote estimates, the shard's EXPLAIN of the scan with the
//! clause, `$1` written `((SELECT null::integer)::integer)` (`plan::remote_estimate`,
//! asked while the join is planned); before the answers are known, a seq scan of
//! the remote table with the clause. Where it departs from PostgreSQL: only a
//! two-relation join's inner side is parameterized so (the join search over more
//! relations, `joinrels`, does not build these paths), and only when every leaf the
//! inner relation keeps is such a foreign table.

use super::catalog::{Node, RelKind, Relation};
use crate::plan::{BinOp, Expr, Plan, SqlType};

/// The PARAM_EXEC number of the Nested Loop parameter read by parameterized Foreign
/// Scans. EXPLAIN never prints it (the Remote SQL numbers its parameters from `$1`),
/// so it is chosen far from the InitPlans' numbers (0, 1, …) it must not meet.
pub const NEST_FDW_PARAM: usize = 1 << 20;

/// postgres_fdw's `use_remote_estimate` for a foreign table: the table's option,
/// else its server's (`apply_server_options`, then `apply_table_options`), default
/// off. False for anything but a foreign table.
pub fn use_remote_estimate(coord: &Node, rel: &Relation) -> bool {
    let RelKind::Foreign { server, options, .. } = &rel.kind else { return false };
    let table = options.iter().find(|(k, _)| k == "use_remote_estimate").map(|(_, v)| v.as_str());
    let value = table.or_else(|| coord.server(server).and_then(|s| s.option("use_remote_estimate")));
    value.is_some_and(is_true)
}

/// A boolean option's value as postgres_fdw's `defGetBoolean` reads it.
fn is_true(v: &str) -> bool {
    matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "on" | "yes" | "1" | "t" | "y")
}

/// May the inner side, whose leaves (after plan-time pruning) are `leaves`, be
/// parameterized by a join clause on its column `key` of type `inner_ty` with an
/// outer column of type `outer_ty`? Every leaf must be a foreign table with
/// `use_remote_estimate` (postgresGetForeignPaths builds the path; an Append needs it
/// of every child), and the clause must be one that ships as `$1 = key` (a column of
/// the same type on each side: no cross-type operator, no cast).
pub fn has_param_path(coord: &Node, leaves: &[&Relation], inner_ty: SqlType, outer_ty: SqlType) -> bool {
    !leaves.is_empty() && inner_ty == outer_ty && leaves.iter().all(|r| use_remote_estimate(coord, r))
}

/// The join clause as the inner relation's scans evaluate it: `$p = key`, the outer
/// side's value first, as an inner or semi join's equivalence class builds it; an
/// outer or anti join's clause (no equivalence class) as written, so `key = $p` when
/// the query names the inner side first (`inner_first`).
pub fn param_clause(key: usize, outer_ty: SqlType, inner_first: bool) -> Expr {
    let (param, col) = (Expr::ExecParam(NEST_FDW_PARAM, outer_ty), Expr::Col(key));
    match inner_first {
        false => Expr::bin(BinOp::Eq, param, col),
        true => Expr::bin(BinOp::Eq, col, param),
    }
}

/// Does the expression read the Nested Loop's parameter?
fn reads_param(e: &Expr) -> bool {
    let mut found = false;
    e.for_each_param(&mut |n, _| found |= n == NEST_FDW_PARAM);
    found
}

/// Puts each Foreign Scan's parameterized clause after its other remote conditions,
/// as deparse.c appends a path's join clauses after the relation's own
/// (`remote_conds`, then `remote_param_join_conds`).
pub fn param_quals_last(plan: &mut Plan) {
    match plan {
        Plan::ForeignScan(f) => {
            let (param, own): (Vec<Expr>, Vec<Expr>) = f.remote.quals.drain(..).partition(reads_param);
            f.remote.quals = own.into_iter().chain(param).collect();
        }
        Plan::Append { children, .. } => children.iter_mut().for_each(param_quals_last),
        Plan::Result { child, .. } => param_quals_last(child),
        _ => {}
    }
}

/// Is `plan` a Nested Loop's inner side parameterized by [`NEST_FDW_PARAM`]: a
/// Foreign Scan whose remote conditions read it, or an Append of such (under the
/// filter and projection Results over them)? The Nested Loop sets the parameter
/// for it (`node_nestloop`), and the cost model costs it per outer row.
pub fn reads_nest_fdw_param(plan: &Plan) -> bool {
    match plan {
        Plan::ForeignScan(f) => f.remote.quals.iter().any(reads_param),
        Plan::Append { children, .. } => !children.is_empty() && children.iter().all(reads_nest_fdw_param),
        Plan::Result { child, .. } => reads_nest_fdw_param(child),
        _ => false,
    }
}

/// The conditions of a Foreign Scan's remote query without the parameterized
/// clause: the relation's own, which size it for the join (`plain_params` costing,
/// as PostgreSQL sizes a join from its relations, not from a parameterized path).
pub fn without_param(quals: &[Expr]) -> Vec<Expr> {
    quals.iter().filter(|q| !reads_param(q)).cloned().collect()
}
