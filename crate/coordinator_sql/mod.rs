//! The SQL front end of the coordinator: scenario files, their statements, the
//! catalog they build, and the planner that turns a SELECT into a [`Plan`] the
//! executor runs.
//!
//! A scenario file ([`script`]) holds SQL for the coordinator and for each shard,
//! in the order the seeds' own scripts run them ("s2 instance: …"), then the query.
//! Running it:
//!
//! 1. every section's statements are parsed ([`statement`]) with sqlparser's
//!    PostgreSQL dialect; what sqlparser lacks (`CREATE SERVER`, `CREATE FOREIGN
//!    TABLE`, `PARTITION OF … FOR VALUES …`, `ATTACH PARTITION`, `ANALYZE`, …) is
//!    parsed here with sqlparser's own tokenizer and parser primitives;
//! 2. statements run against a [`catalog::Cluster`]: the coordinator and one node per
//!    shard, each with its relations; rows inserted through a partitioned table go to
//!    the partition PostgreSQL would pick, and rows for a foreign table go to its
//!    server's shard;
//! 3. the query is planned ([`planner`]) as PostgreSQL 15 plans it for the cases the
//!    sandbox supports (an `EXECUTE` of a prepared statement: the custom or generic
//!    plan plancache.c would choose, [`prepared`]): Append over partitions, partition
//!    pruning (at plan time, or at executor startup for a generic plan), WHERE / ORDER BY /
//!    LIMIT pushed into foreign scans where postgres_fdw pushes them, MergeAppend,
//!    aggregation above the Append or per partition (partitionwise aggregate);
//! 4. [`SqlScenario::scenario`] gives the executor's [`Scenario`]: the plan, the
//!    coordinator's local tables and a simulated shard per server.
//!
//! Errors carry the line and column in the scenario file ([`FrontError`]); nothing
//! here panics on any input.
//!
//! # Bounds (hostile files: the page, the relay's `/sql/load` and the CLI share them)
//! * Text: at most [`script::MAX_SCRIPT_BYTES`] (1 MiB); a section at most
//!   [`statement::MAX_TOKENS`] (100,000) tokens and [`statement::MAX_STATEMENTS`]
//!   (1,000) statements, checked on its tokens before sqlparser builds trees of them
//!   (~450 bytes a token, ~8 KB a statement: 1 MiB of `(1),` or of `select 1;` took
//!   450 MB and 860 MB).
//! * Nesting: every statement is weighed on its tokens before sqlparser parses it
//!   ([`crate::shard_sql::nesting`]): more than [`crate::shard_sql::nesting::MAX_WEIGHT`] (256)
//!   tokens in one chain of operators, parentheses and set operations (`1+1+…`, `a ||
//!   …`, `x AND …`, `UNION ALL …`) is refused at the token that passes it, "statement
//!   nested too deeply", and sqlparser's own recursion (parentheses, prefix operators,
//!   subqueries) stops at [`crate::shard_sql::nesting::MAX_RECURSION`] (20) levels, so no tree
//!   deeper than the stack allows is ever built or walked: everything here recurses
//!   over trees, and a stack overflow aborts a process (or the page) with no error to
//!   catch. The deepest files let through load, plan and run in 1 MiB of stack in a
//!   debug build (tests/suite/sql_bounds.rs); the scenario files and the corpus weigh at most
//!   32. Subqueries nest at most 32 deep in the planner.
//! * Rows: a load inserts at most its [`catalog::Limits`], in rows and in bytes of
//!   rows as held ([`catalog::row_bytes`]): the CLI's [`catalog::Limits::SANDBOX`],
//!   16,000,000 rows and 2 GiB; the page's and the relay's
//!   [`crate::demo::session::DEMO_LIMITS`], 400,000 rows and 128 MiB. Both are checked
//!   before each row is stored, and an `INSERT … SELECT … FROM generate_series` (without
//!   a WHERE, which leaves fewer rows) whose
//!   rows × the width of its first row would pass the bytes left is refused before
//!   its first row is made (100,000 characters × 5000 rows: at its line and column).
//!
//! Invariants (the bounds below say how each is kept):
//! - every error is a [`FrontError`] with its line and column (0 when there is none);
//! - no tree deeper than the nesting bounds is built, so no stack overflows;
//! - a load stores at most its `catalog::Limits`, counted before each row is stored.
//!
//! Where it departs from PostgreSQL: the grammar is sqlparser's PostgreSQL dialect plus
//! the statements above, not PostgreSQL's gram.y, and what it cannot run is refused by
//! name; the catalog is one in-memory list per node, not system catalogs; the planner
//! follows the rules in [`planner`], and PostgreSQL 15's cost model
//! (`crate::plan::costsize`) estimates the plan it chose for EXPLAIN without choosing it.

pub mod catalog;
pub mod cte;
pub mod eval;
mod fdw_modify;
pub mod funcscan;
pub mod functioncmds;
mod indxpath;
mod modify_join;
pub mod modifytable;
mod on_conflict;
pub mod paramfdw;
mod parse_clause;
mod parse_coerce;
mod partition_modify;
pub mod pgfuncs;
pub mod planner;
pub mod postgres_fdw_join;
pub mod prepared;
mod prepjointree;
mod prepunion;
mod pullup_subquery;
mod qual_pushdown;
pub mod remote_estimate;
pub mod script;
pub mod settings;
mod setup_dml;
pub mod shippable;
pub mod statement;
mod subselect;
mod windowagg;

use std::fmt;

pub use script::SqlScenario;

/// An error in a scenario file: PostgreSQL's wording where PostgreSQL has one, and
/// where it is (1-based line and column of the file; 0 when unknown).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FrontError {
    pub message: String,
    pub line: usize,
    pub column: usize,
}

impl FrontError {
    pub fn new(message: impl Into<String>, line: usize, column: usize) -> FrontError {
        FrontError { message: message.into(), line, column }
    }
    /// An error at a sqlparser location.
    pub fn at(message: impl Into<String>, loc: sqlparser::tokenizer::Location) -> FrontError {
        FrontError::new(message, loc.line as usize, loc.column as usize)
    }
    /// A construct the sandbox does not run, named.
    pub fn unsupported(what: impl fmt::Display, loc: sqlparser::tokenizer::Location) -> FrontError {
        FrontError::at(format!("not supported by the sandbox: {what}"), loc)
    }
}

impl fmt::Display for FrontError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
        } else {
            write!(f, "{}", self.message)
        }
    }
}

impl std::error::Error for FrontError {}
