//! The databases a scenario file builds, and its DDL and INSERTs run against them.
//!
//! A [`Cluster`] is the coordinator and one node per shard, each a [`Node`] with its
//! relations: plain tables (rows held in a [`Table`]), partitioned tables (a key and
//! their partitions), and foreign tables (a server and the remote table's name).
//! A foreign server is one of the scenario's shards, found by its name: `CREATE
//! SERVER s2 …` is the shard of the `-- @shard s2` section; its `host`, `port` and
//! `dbname` options are kept (a live run reaches the shard through the relay by name).
//!
//! Routing an inserted row follows PostgreSQL: a partitioned table hands it to the
//! partition whose bound holds its key (hash partitions by PostgreSQL's own hash
//! functions, [`pgfuncs`]), else to the default partition, else fails with
//! PostgreSQL's message; a foreign table hands it to its shard's table, counted in
//! batches of the server's or table's `batch_size` (postgres_fdw's option, default 1).
//!
//! Invariants:
//! - the rows and bytes a load inserts are counted over every node before each row is
//!   stored, so a load never holds more than its [`Limits`] (a browser tab would run out
//!   of memory first); a generate_series too wide for the bytes left is refused before its
//!   first row;
//! - a partitioned table's partitions never overlap and it has at most one default
//!   partition (checked when one is created or attached), so an inserted row has one
//!   place to go;
//! - a row is cast to its table's column types before it is stored; a row through a
//!   foreign table goes to the remote table's columns by name, as postgres_fdw's INSERT
//!   names its columns;
//! - each node has its own `random()` state, as each server has its own.
//!
//! Where it departs from PostgreSQL: there are no system catalogs, each node's relations
//! and servers are a list; a row inserted through a foreign table is copied into the
//! shard's table directly, and its batches are only counted, not sent.

use sqlparser::ast::{self, ColumnDef, Ident, ObjectName};
use sqlparser::tokenizer::Location;

use super::eval::{self, Analyzed, Env, Val};
use super::pgfuncs;
use super::settings;
use super::statement::{BoundSpec, ForeignSpec, Located, PartitionBy, RangeDatum, Stmt, Strategy};
use super::FrontError;
use crate::plan::stats::{self, RelStats};
use crate::plan::SqlType;
use crate::types::{Column, Datum, Table};
use std::rc::Rc;

/// The most rows a scenario file may insert in all (as `scenario::MAX_TOTAL_ROWS`).
pub const MAX_ROWS: usize = crate::knobs::MAX_TOTAL_ROWS;

/// The most bytes of rows a scenario file may insert in all (see [`row_bytes`]): 2 GiB,
/// what 16,000,000 rows of a few narrow columns take, so the row cap is what binds
/// ordinary files; a few wide values × many rows is refused before it is made.
pub const MAX_BYTES: usize = 2 << 30;

/// What a load may insert in all: rows, and bytes of rows as they are held
/// ([`row_bytes`]). Each is checked before a row is stored, and an INSERT … SELECT
/// from generate_series is refused before its first row when its rows × the width of
/// its first row would pass the bytes left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub rows: usize,
    pub bytes: usize,
}

impl Limits {
    /// The CLI's (`pgasync sql`, `trace`): [`MAX_ROWS`] and [`MAX_BYTES`].
    pub const SANDBOX: Limits = Limits { rows: MAX_ROWS, bytes: MAX_BYTES };
}

/// The memory a stored row takes: a 16-byte `Datum` per value, and for a text its
/// `Rc<String>` (40 bytes) and its bytes.
pub fn row_bytes(row: &[Datum]) -> usize {
    // A loop, not `map().sum()`: counted for every row a file inserts, and the tests
    // run it unoptimized (issue 20).
    let mut bytes = row.len() * std::mem::size_of::<Datum>();
    for d in row {
        if let Datum::Text(t) = d {
            bytes += 40 + t.len();
        }
    }
    bytes
}

/// Bytes in messages: "128 MiB", "2 GiB", "477.2 MiB", "4.7 GiB", "5000 bytes". In
/// u128 so that an estimate past 4 GiB reads the same on wasm32 (32-bit `usize`).
fn size_text(bytes: u128) -> String {
    for (unit, name) in [(1u128 << 30, "GiB"), (1 << 20, "MiB")] {
        if bytes >= unit {
            return match bytes % unit {
                0 => format!("{} {name}", bytes / unit),
                _ => format!("{:.1} {name}", bytes as f64 / unit as f64),
            };
        }
    }
    format!("{bytes} bytes")
}

#[derive(Clone, Debug)]
pub struct ColumnInfo {
    pub name: String,
    pub ty: SqlType,
}

/// A partition's bound, with its values evaluated.
#[derive(Clone, Debug, PartialEq)]
pub enum Bound {
    Hash { modulus: u64, remainder: u64 },
    List(Vec<Datum>),
    Range { from: Vec<RangeValue>, to: Vec<RangeValue> },
    Default,
}

#[derive(Clone, Debug, PartialEq)]
pub enum RangeValue {
    Min,
    Max,
    Value(Datum),
}

#[derive(Clone, Debug)]
pub enum RelKind {
    /// A plain table's rows, shared copy-on-write (`Rc::make_mut` where they change):
    /// a clone of the cluster (`SqlScenario::with_query`, a query planned against a
    /// loaded scenario) and the executor's catalog (`SqlScenario::scenario`) share
    /// the rows instead of copying every table (issue 20: the corpus and the suite
    /// copied each of them several times per query).
    Table(Rc<Table>),
    Partitioned {
        strategy: Strategy,
        key: Vec<usize>,
        partitions: Vec<String>,
    },
    Foreign {
        server: String,
        remote_schema: String,
        remote_table: String,
        options: Vec<(String, String)>,
    },
}

#[derive(Clone, Debug)]
pub struct Relation {
    pub name: String,
    pub columns: Vec<ColumnInfo>,
    pub kind: RelKind,
    /// The parent and this partition's bound, for a partition.
    pub partition_of: Option<(String, Bound)>,
    /// Indexed columns (a plain table's are also in its `Table`).
    pub indexes: Vec<usize>,
    /// Rows sent to a foreign table and the batches they went in.
    pub rows_sent: usize,
    pub batches_sent: usize,
    /// What ANALYZE or VACUUM left in `pg_class` and `pg_statistic` (None: never run;
    /// for a partitioned table, the inherited statistics of its whole tree).
    pub stats: Option<RelStats>,
    /// Unique indexes (PRIMARY KEY, UNIQUE, CREATE UNIQUE INDEX) of the
    /// coordinator's plain table, each on one column (`crate::plan::on_conflict`).
    pub unique: Vec<crate::plan::on_conflict::UniqueKey>,
}

impl Relation {
    /// A relation just created: not attached, no index, nothing sent yet.
    fn new(name: String, columns: Vec<ColumnInfo>, kind: RelKind) -> Relation {
        Relation {
            name,
            columns,
            kind,
            partition_of: None,
            indexes: vec![],
            rows_sent: 0,
            batches_sent: 0,
            stats: None,
            unique: vec![],
        }
    }

    pub fn columns(&self) -> Vec<Column> {
        self.columns.iter().map(|c| Column::typed(&c.name, c.ty)).collect()
    }
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

#[derive(Clone, Debug)]
pub struct Server {
    pub name: String,
    pub options: Vec<(String, String)>,
}

impl Server {
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// One database: the coordinator or a shard.
#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub relations: Vec<Relation>,
    pub servers: Vec<Server>,
    /// `SET name = value`, lower-case names.
    pub settings: Vec<(String, String)>,
    pub random: pgfuncs::PgRandom,
    /// `PREPARE`d statements and their plan cache entries (the coordinator's).
    pub prepared: Vec<super::prepared::PreparedStatement>,
    /// The functions and operators created on this node (`super::functioncmds`).
    pub routines: crate::shard_sql::inline::Routines,
    /// use_remote_estimate: the planning's EXPLAIN questions and the shards' answers
    /// (`super::remote_estimate`).
    pub remote_estimates: crate::plan::remote_estimate::RemoteEstimates,
    /// The cost model's view of each relation, kept while a join search runs
    /// ([`CostRelations::scope`]): it reads every local table's rows (its heap pages,
    /// its indexes' sizes), and the search costs thousands of paths over the same
    /// relations, none of which change while it plans.
    pub cost_relations: CostRelations,
}

/// The relations [`Node`]'s cost catalog computed during a join search (None: none
/// under way, each question computed afresh).
#[derive(Clone, Debug, Default)]
pub struct CostRelations {
    kept: std::cell::RefCell<Option<std::collections::HashMap<String, Option<Rc<crate::plan::costsize::RelInfo>>>>>,
    /// The merge clauses' `mergejoinscansel` answers, kept for the same scope.
    scansel: crate::plan::costsize::ScanselCache,
}

impl CostRelations {
    /// Keeps the relations computed until the guard is dropped (a scope inside one
    /// keeps the outer one's).
    pub fn scope(&self) -> CostRelationsScope<'_> {
        let outer = self.kept.borrow().is_some();
        if !outer {
            *self.kept.borrow_mut() = Some(Default::default());
            self.scansel.start();
        }
        CostRelationsScope { of: self, outer }
    }
}

/// See [`CostRelations::scope`].
pub struct CostRelationsScope<'a> {
    of: &'a CostRelations,
    outer: bool,
}

impl Drop for CostRelationsScope<'_> {
    fn drop(&mut self) {
        if !self.outer {
            *self.of.kept.borrow_mut() = None;
            self.of.scansel.stop();
        }
    }
}

impl Node {
    pub fn new(name: &str) -> Node {
        Node {
            name: name.into(),
            relations: vec![],
            servers: vec![],
            settings: vec![],
            random: pgfuncs::PgRandom::new(),
            prepared: vec![],
            routines: Default::default(),
            remote_estimates: Default::default(),
            cost_relations: Default::default(),
        }
    }
    pub fn relation(&self, name: &str) -> Option<&Relation> {
        self.relations.iter().find(|r| r.name == name)
    }
    /// The position of relation `name` in `relations`.
    fn relation_index(&self, name: &str) -> Option<usize> {
        self.relations.iter().position(|r| r.name == name)
    }
    fn relation_mut(&mut self, name: &str) -> Option<&mut Relation> {
        self.relations.iter_mut().find(|r| r.name == name)
    }
    /// Whether `name` is taken in the node's namespace of relations, where PostgreSQL
    /// puts indexes too (`CREATE INDEX x` over a table `x` fails).
    fn relation_or_index_exists(&self, name: &str) -> bool {
        self.relation(name).is_some()
            || self.relations.iter().any(|r| {
                r.unique.iter().any(|u| u.name == name)
                    || matches!(&r.kind, RelKind::Table(t) if t.indexes.iter().any(|i| i.name == name))
            })
    }
    pub fn setting(&self, name: &str) -> Option<&str> {
        self.settings.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    /// A boolean GUC as PostgreSQL reads it.
    pub fn setting_on(&self, name: &str, default: bool) -> bool {
        match self.setting(name) {
            Some(v) => matches!(v, "on" | "true" | "yes" | "1" | "t"),
            None => default,
        }
    }
    pub fn server(&self, name: &str) -> Option<&Server> {
        self.servers.iter().find(|s| s.name == name)
    }
}

/// The coordinator (node 0) and the shards.
#[derive(Clone, Debug)]
pub struct Cluster {
    pub nodes: Vec<Node>,
    pub total_rows: usize,
    /// Bytes of the rows inserted so far ([`row_bytes`]).
    pub total_bytes: usize,
    /// What the scripts may insert in all ([`Limits::SANDBOX`] unless lowered).
    pub limits: Limits,
    /// Whose limits they are, for the messages ("the sandbox", "the step-by-step page").
    pub limit_name: &'static str,
}

/// A statement started by [`Cluster::begin`]: done, or an INSERT to run in slices.
pub enum Begun {
    Done(Option<Vec<Val>>),
    Insert(InsertJob),
}

/// An INSERT in progress: its target, and the source rows not inserted yet.
pub struct InsertJob {
    n: usize,
    rel: String,
    targets: Vec<usize>,
    columns: Vec<ColumnInfo>,
    at: Location,
    source: InsertSource,
    /// Rows inserted so far.
    pub inserted: usize,
    /// A series' values passed the assignment's type check
    /// ([`super::parse_coerce::check_assignment`]) on a row: their types are the
    /// projection's, the same for every row, so the later rows are only cast.
    types_checked: bool,
}

enum InsertSource {
    /// `VALUES` rows, evaluated when the INSERT started.
    Values(std::vec::IntoIter<Vec<Val>>),
    /// `SELECT exprs FROM generate_series(…) name`: the expressions, analysed once
    /// over the series' column; the next value, the step and how many are left.
    /// `filter`: the WHERE over the series' column (a row it is not true for is not
    /// inserted).
    Series { next: i64, step: i64, left: usize, projection: Vec<Analyzed>, filter: Option<Analyzed> },
}

/// Name of a relation as written (`public.t` or `t`), folded as PostgreSQL folds it.
pub fn relation_name(name: &ObjectName) -> Result<String, String> {
    let parts: Vec<String> = name.0.iter().map(ident).collect();
    match parts.as_slice() {
        [t] => Ok(t.clone()),
        [s, t] if s == "public" => Ok(t.clone()),
        _ => Err(format!("relation \"{}\" does not exist", parts.join("."))),
    }
}

pub fn ident(i: &Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

fn object_at(name: &ObjectName) -> Location {
    name.0.first().map(|i| i.span.start).unwrap_or(Location { line: 0, column: 0 })
}

impl Cluster {
    pub fn new(shards: &[String]) -> Cluster {
        let mut nodes = vec![Node::new("coordinator")];
        nodes.extend(shards.iter().map(|s| Node::new(s)));
        Cluster { nodes, total_rows: 0, total_bytes: 0, limits: Limits::SANDBOX, limit_name: "the sandbox" }
    }

    /// Indexes are built from the rows (`Table::create_index`), so rows inserted after
    /// `CREATE INDEX` need the index built again; done once, after the setup.
    pub fn rebuild_indexes(&mut self) {
        for n in 0..self.nodes.len() {
            for r in 0..self.nodes[n].relations.len() {
                self.rebuild_indexes_of(n, r);
            }
        }
    }

    /// `rebuild_indexes` for relation `r` of node `n` only (the page does one at a time);
    /// returns the rows it sorted.
    pub fn rebuild_indexes_of(&mut self, n: usize, r: usize) -> usize {
        let Some(RelKind::Table(t)) =
            self.nodes.get_mut(n).and_then(|node| node.relations.get_mut(r)).map(|r| &mut r.kind)
        else {
            return 0;
        };
        let t = Rc::make_mut(t);
        let cols: Vec<usize> = t.indexes.iter().map(|i| i.column).collect();
        for &c in &cols {
            t.create_index(c);
        }
        t.nrows() * cols.len()
    }

    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    pub fn coordinator(&self) -> &Node {
        &self.nodes[0]
    }

    /// Runs one statement on node `n`. SELECT and EXPLAIN are the planner's; here they
    /// are errors, except a SELECT without FROM (`SELECT setseed(…)`), evaluated.
    pub fn execute(&mut self, n: usize, s: &Located) -> Result<Option<Vec<Val>>, FrontError> {
        match self.begin(n, s)? {
            Begun::Done(result) => Ok(result),
            Begun::Insert(mut job) => {
                self.insert_some(&mut job, usize::MAX)?;
                Ok(None)
            }
        }
    }

    /// Starts one statement on node `n`: an INSERT is returned as a job to run in
    /// slices ([`Cluster::insert_some`]); anything else runs to its end here.
    pub fn begin(&mut self, n: usize, s: &Located) -> Result<Begun, FrontError> {
        let at = s.at;
        if matches!(
            s.stmt,
            Stmt::Analyze { .. }
                | Stmt::CreateIndex { .. }
                | Stmt::CreateTable { .. }
                | Stmt::CreatePartition { .. }
                | Stmt::AttachPartition { .. }
                | Stmt::AlterServer { .. }
                | Stmt::AlterForeignTable { .. }
                | Stmt::CreateServer { .. }
                | Stmt::Routine(_)
        ) {
            super::prepared::invalidate_generic_plans(&mut self.nodes[n]);
        }
        if let Stmt::Insert { table, columns, source, returning, on_conflict } = &s.stmt {
            if !returning.is_empty() {
                return Err(FrontError::unsupported("INSERT … RETURNING in a setup section", at));
            }
            if on_conflict.is_some() {
                return Err(FrontError::unsupported("INSERT … ON CONFLICT in a setup section", at));
            }
            return self.insert_begin(n, table, columns, source, at).map(Begun::Insert);
        }
        self.execute_other(n, s).map(Begun::Done)
    }

    fn execute_other(&mut self, n: usize, s: &Located) -> Result<Option<Vec<Val>>, FrontError> {
        let at = s.at;
        match &s.stmt {
            Stmt::Accepted(_) => Ok(None),
            Stmt::Analyze { vacuum, analyze, tables } => self.analyze(n, *vacuum, *analyze, tables, at).map(|_| None),
            Stmt::CreateServer { name, options, .. } => self.create_server(n, name, options).map(|_| None),
            Stmt::CreateTable { name, columns, partition_by, foreign } => {
                self.create_table(n, name, columns, partition_by.as_ref(), foreign.as_ref()).map(|_| None)
            }
            Stmt::CreatePartition { name, parent, bound, partition_by, foreign } => {
                self.create_partition(n, name, parent, bound, partition_by.as_ref(), foreign.as_ref(), at).map(|_| None)
            }
            Stmt::AttachPartition { parent, name, bound } => self.attach(n, parent, name, bound, at).map(|_| None),
            Stmt::CreateIndex { table, columns, unique: false, name } => {
                self.create_index(n, table, columns, name.as_deref()).map(|_| None)
            }
            Stmt::CreateIndex { table, columns, unique: true, name } => {
                self.create_unique_index(n, table, columns, name.as_deref()).map(|_| None)
            }
            Stmt::Insert { table, columns, source, .. } => {
                let mut job = self.insert_begin(n, table, columns, source, at)?;
                self.insert_some(&mut job, usize::MAX)?;
                Ok(None)
            }
            Stmt::Set { name, value } => {
                self.nodes[n].settings.push((name.clone(), value.clone()));
                Ok(None)
            }
            Stmt::ResetAll => {
                self.nodes[n].settings.clear();
                Ok(None)
            }
            Stmt::AlterServer { name, edits } => {
                let server = ident(name);
                let Some(s) = self.nodes[n].servers.iter_mut().find(|s| s.name == server) else {
                    return Err(FrontError::at(format!("server \"{server}\" does not exist"), name.span.start));
                };
                super::statement::apply_option_edits(&mut s.options, edits)?;
                Ok(None)
            }
            Stmt::AlterForeignTable { name, edits } => {
                let rel = relation_name(name).map_err(|m| FrontError::at(m, object_at(name)))?;
                let missing = || FrontError::at(format!("relation \"{rel}\" does not exist"), object_at(name));
                let r = self.nodes[n].relation_mut(&rel).ok_or_else(missing)?;
                let RelKind::Foreign { options, remote_schema, remote_table, .. } = &mut r.kind else {
                    return Err(FrontError::at(format!("\"{rel}\" is not a foreign table"), object_at(name)));
                };
                super::statement::apply_option_edits(options, edits)?;
                // The remote relation follows its options, as CREATE FOREIGN TABLE reads them.
                let option = |k: &str| options.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
                *remote_schema = option("schema_name").unwrap_or_else(|| "public".into());
                *remote_table = option("table_name").unwrap_or_else(|| rel.clone());
                Ok(None)
            }
            Stmt::Select(q) => self.select_constant(n, q, at).map(Some),
            Stmt::Update { .. } => {
                Err(FrontError::unsupported("UPDATE in a setup section (it runs as the query, -- @query)", at))
            }
            // `setup_dml`: the rows removed, for the load's log.
            Stmt::Delete { returning, .. } if !returning.is_empty() => {
                Err(FrontError::unsupported("DELETE … RETURNING in a setup section", at))
            }
            Stmt::Delete { alias, using, .. } if alias.is_some() || !using.is_empty() => Err(FrontError::unsupported(
                "DELETE with an alias or USING in a setup section (it runs as the query, -- @query)",
                at,
            )),
            Stmt::Delete { table, selection, .. } => {
                let n = self.delete_where(n, table, selection.as_ref(), at)?;
                Ok(Some(vec![Val { datum: Datum::Int(n as i64), ty: None }]))
            }
            Stmt::Truncate(tables) => self.truncate(n, tables, at).map(|_| None),
            Stmt::With { .. } => {
                Err(FrontError::unsupported("WITH in a setup section (it runs as the query, -- @query)", at))
            }
            Stmt::Explain { .. } | Stmt::ExplainModify { .. } | Stmt::Execute { explain: Some(_), .. } => {
                Err(FrontError::at("EXPLAIN runs in the query section (-- @query)", at))
            }
            Stmt::Prepare { name, types, query } => {
                let ps = super::prepared::prepare(&self.nodes[n], name, types, query, at)?;
                self.nodes[n].prepared.push(ps);
                Ok(None)
            }
            Stmt::Execute { name, args, explain: None } => {
                // The plan cache counts the execution; its rows are not computed here
                // (only the query section's statement runs: prepared.rs).
                let node = &self.nodes[n];
                let mut ps = super::prepared::lookup(node, name, at)?.clone();
                let values = super::prepared::evaluate_params(&ps, args, at)?;
                super::prepared::get_cached_plan(&mut ps, node, &values, at)?;
                if let Some(p) = self.nodes[n].prepared.iter_mut().find(|p| p.name == *name) {
                    *p = ps;
                }
                Ok(None)
            }
            Stmt::Deallocate(None) => {
                self.nodes[n].prepared.clear();
                Ok(None)
            }
            Stmt::Routine(r) => super::functioncmds::execute(&mut self.nodes[n].routines, r, at).map(|_| None),
            Stmt::Deallocate(Some(name)) => {
                super::prepared::lookup(&self.nodes[n], name, at)?;
                self.nodes[n].prepared.retain(|p| p.name != *name);
                Ok(None)
            }
        }
    }

    fn create_server(&mut self, n: usize, name: &Ident, options: &[(String, String)]) -> Result<(), FrontError> {
        let node = &mut self.nodes[n];
        let server = ident(name);
        if node.server(&server).is_some() {
            return Err(FrontError::at(format!("server \"{server}\" already exists"), name.span.start));
        }
        for (k, v) in options {
            settings::check_server_option(k, v).map_err(|m| FrontError::at(m, name.span.start))?;
        }
        node.servers.push(Server { name: server, options: options.to_vec() });
        Ok(())
    }

    fn new_relation_name(&self, n: usize, name: &ObjectName) -> Result<String, FrontError> {
        let rel = relation_name(name).map_err(|m| FrontError::at(m, object_at(name)))?;
        if self.nodes[n].relation(&rel).is_some() {
            return Err(FrontError::at(format!("relation \"{rel}\" already exists"), object_at(name)));
        }
        Ok(rel)
    }

    fn create_table(
        &mut self,
        n: usize,
        name: &ObjectName,
        defs: &[ColumnDef],
        partition_by: Option<&PartitionBy>,
        foreign: Option<&ForeignSpec>,
    ) -> Result<(), FrontError> {
        let rel = self.new_relation_name(n, name)?;
        let mut columns = Vec::new();
        for d in defs {
            let cname = ident(&d.name);
            if columns.iter().any(|c: &ColumnInfo| c.name == cname) {
                return Err(FrontError::at(format!("column \"{cname}\" specified more than once"), d.name.span.start));
            }
            columns.push(ColumnInfo { name: cname, ty: SqlType::from_ast(&d.data_type, d.name.span.start)? });
        }
        let kind = self.relation_kind(n, &rel, &columns, partition_by, foreign)?;
        self.nodes[n].relations.push(Relation::new(rel.clone(), columns, kind));
        // PRIMARY KEY / UNIQUE of a column: a unique index on it, named as
        // PostgreSQL's ChooseConstraintName names it.
        for d in defs {
            for o in &d.options {
                if let ast::ColumnOption::Unique { is_primary, .. } = &o.option {
                    let col = ident(&d.name);
                    let name = if *is_primary { format!("{rel}_pkey") } else { format!("{rel}_{col}_key") };
                    self.add_unique(n, &rel, &col, (name, *is_primary, true), d.name.span.start)?;
                }
            }
        }
        Ok(())
    }

    /// A unique index on one column of the coordinator's plain table or partitioned
    /// table: the index the planner sees, and the key ModifyTable checks
    /// (`crate::plan::on_conflict`). `(name, primary, constraint)`: its name, whether
    /// it is the primary key, whether a constraint made it. A partitioned table's is
    /// on its partition key (DefineIndex: "unique constraint on partitioned table must
    /// include all partitioning columns"), never with a foreign partition, and each
    /// partition gets its own copy (`clone_unique`). Elsewhere refused by name: a
    /// shard's table (its INSERT checks no key), a partition or a foreign table, a
    /// partitioned table with partitioned partitions.
    fn add_unique(
        &mut self,
        n: usize,
        rel: &str,
        col: &str,
        (name, primary, constraint): (String, bool, bool),
        at: Location,
    ) -> Result<(), FrontError> {
        let what = if primary { "PRIMARY KEY" } else { "a unique index" };
        if n != 0 {
            return Err(FrontError::unsupported(
                format!("{what} on a shard's table (the simulated shard checks no unique key)"),
                at,
            ));
        }
        let Some(r) = self.nodes[n].relation(rel) else {
            return Err(FrontError::at(format!("relation \"{rel}\" does not exist"), at));
        };
        let partitions = match &r.kind {
            RelKind::Table(_) if r.partition_of.is_none() => vec![],
            RelKind::Partitioned { key, partitions, .. } => {
                self.check_partitioned_unique(n, rel, key, partitions, (col, what), at)?;
                partitions.clone()
            }
            _ => {
                return Err(FrontError::unsupported(
                    format!(
                        "{what} on \"{rel}\": only a plain or partitioned table that is no partition has unique keys \
                         in the sandbox"
                    ),
                    at,
                ))
            }
        };
        if self.nodes[n].relation_or_index_exists(&name) {
            return Err(FrontError::at(format!("relation \"{name}\" already exists"), at));
        }
        let Some(r) = self.nodes[n].relation_mut(rel) else {
            return Err(FrontError::at(format!("relation \"{rel}\" does not exist"), at));
        };
        let Some(column) = r.column_index(col) else {
            return Err(FrontError::at(format!("column \"{col}\" does not exist"), at));
        };
        if primary && r.unique.iter().any(|u| u.primary) {
            return Err(FrontError::at(format!("multiple primary keys for table \"{rel}\" are not allowed"), at));
        }
        let key = crate::plan::on_conflict::UniqueKey { name, column, primary, constraint, parent: None };
        r.unique.push(key.clone());
        if !r.indexes.contains(&column) {
            r.indexes.push(column);
        }
        if let RelKind::Table(t) = &mut r.kind {
            Rc::make_mut(t).create_index_named(column, key.name.clone());
        }
        for p in partitions {
            self.clone_unique(n, &p, &key);
        }
        Ok(())
    }

    /// DefineIndex's checks of a unique index on a partitioned table: on its
    /// partition key, and no foreign partition (a foreign table has no index).
    fn check_partitioned_unique(
        &self,
        n: usize,
        rel: &str,
        key: &[usize],
        partitions: &[String],
        (col, what): (&str, &str),
        at: Location,
    ) -> Result<(), FrontError> {
        let node = &self.nodes[n];
        let r = node.relation(rel).expect("the caller found it");
        if let Some(&k) = key.iter().find(|&&k| r.columns[k].name != col) {
            // The DETAIL names the constraint's kind and the column it lacks.
            let kind = if what == "PRIMARY KEY" { "PRIMARY KEY" } else { "UNIQUE" };
            return Err(FrontError::at(
                format!(
                    "unique constraint on partitioned table must include all partitioning columns ({kind} constraint \
                     on table \"{rel}\" lacks column \"{}\" which is part of the partition key)",
                    r.columns[k].name
                ),
                at,
            ));
        }
        for p in partitions {
            match node.relation(p).map(|c| &c.kind) {
                Some(RelKind::Foreign { .. }) => {
                    return Err(FrontError::at(
                        format!(
                            "cannot create unique index on partitioned table \"{rel}\" (table \"{rel}\" contains \
                             partitions that are foreign tables)"
                        ),
                        at,
                    ))
                }
                Some(RelKind::Partitioned { .. }) => {
                    return Err(FrontError::unsupported(
                        format!("{what} on \"{rel}\", whose partition \"{p}\" is itself partitioned"),
                        at,
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A partition's copy of its parent's unique index `key` (DefineIndex on each
    /// partition, AttachPartitionEnsureIndexes), named as ChooseIndexName names it:
    /// `part_pkey`, `part_col_key` for a constraint, `part_col_idx` for an index, with
    /// a number added while the name is taken (ChooseRelationName).
    fn clone_unique(&mut self, n: usize, part: &str, key: &crate::plan::on_conflict::UniqueKey) {
        let node = &self.nodes[n];
        let Some(r) = node.relation(part) else { return };
        let col = r.columns[key.column].name.clone();
        let base = if key.primary {
            format!("{part}_pkey")
        } else if key.constraint {
            format!("{part}_{col}_key")
        } else {
            format!("{part}_{col}_idx")
        };
        let taken = |name: &str| {
            node.relation(name).is_some() || node.relations.iter().any(|r| r.unique.iter().any(|u| u.name == name))
        };
        let mut name = base.clone();
        let mut i = 0;
        while taken(&name) {
            i += 1;
            name = format!("{base}{i}");
        }
        let Some(r) = self.nodes[n].relation_mut(part) else { return };
        let column = key.column;
        r.unique.push(crate::plan::on_conflict::UniqueKey {
            name: name.clone(),
            parent: Some(key.name.clone()),
            ..key.clone()
        });
        if !r.indexes.contains(&column) {
            r.indexes.push(column);
        }
        if let RelKind::Table(t) = &mut r.kind {
            Rc::make_mut(t).create_index_named(column, name);
        }
    }

    fn relation_kind(
        &self,
        n: usize,
        rel: &str,
        columns: &[ColumnInfo],
        partition_by: Option<&PartitionBy>,
        foreign: Option<&ForeignSpec>,
    ) -> Result<RelKind, FrontError> {
        if let Some(f) = foreign {
            let server = ident(&f.server);
            if self.nodes[n].server(&server).is_none() {
                return Err(FrontError::at(format!("server \"{server}\" does not exist"), f.server.span.start));
            }
            let option = |k: &str| f.options.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
            for (k, v) in &f.options {
                settings::check_table_option(k, v).map_err(|m| FrontError::at(m, f.server.span.start))?;
            }
            return Ok(RelKind::Foreign {
                server,
                remote_schema: option("schema_name").unwrap_or_else(|| "public".into()),
                remote_table: option("table_name").unwrap_or_else(|| rel.to_string()),
                options: f.options.clone(),
            });
        }
        if let Some(pb) = partition_by {
            let mut key = Vec::new();
            for c in &pb.columns {
                let name = ident(c);
                let i = columns.iter().position(|x| x.name == name).ok_or_else(|| {
                    FrontError::at(format!("column \"{name}\" named in partition key does not exist"), c.span.start)
                })?;
                key.push(i);
            }
            if pb.strategy == Strategy::List && key.len() != 1 {
                return Err(FrontError::at("cannot use \"list\" partition strategy with more than one column", pb.at));
            }
            return Ok(RelKind::Partitioned { strategy: pb.strategy, key, partitions: vec![] });
        }
        let cols: Vec<Column> = columns.iter().map(|c| Column::typed(&c.name, c.ty)).collect();
        Ok(RelKind::Table(Rc::new(Table::new(rel, cols))))
    }

    #[allow(clippy::too_many_arguments)]
    fn create_partition(
        &mut self,
        n: usize,
        name: &ObjectName,
        parent: &ObjectName,
        bound: &BoundSpec,
        partition_by: Option<&PartitionBy>,
        foreign: Option<&ForeignSpec>,
        at: Location,
    ) -> Result<(), FrontError> {
        let rel = self.new_relation_name(n, name)?;
        let parent_name = relation_name(parent).map_err(|m| FrontError::at(m, object_at(parent)))?;
        let Some(p) = self.nodes[n].relation(&parent_name) else {
            return Err(FrontError::at(format!("relation \"{parent_name}\" does not exist"), object_at(parent)));
        };
        let columns = p.columns.clone();
        let kind = self.relation_kind(n, &rel, &columns, partition_by, foreign)?;
        self.nodes[n].relations.push(Relation::new(rel.clone(), columns, kind));
        self.attach_named(n, &parent_name, &rel, bound, true, at)
    }

    fn attach(
        &mut self,
        n: usize,
        parent: &ObjectName,
        name: &ObjectName,
        bound: &BoundSpec,
        at: Location,
    ) -> Result<(), FrontError> {
        let parent_name = relation_name(parent).map_err(|m| FrontError::at(m, object_at(parent)))?;
        let rel = relation_name(name).map_err(|m| FrontError::at(m, object_at(name)))?;
        let node = &self.nodes[n];
        let (Some(p), Some(child)) = (node.relation(&parent_name), node.relation(&rel)) else {
            let missing = if node.relation(&parent_name).is_none() { &parent_name } else { &rel };
            return Err(FrontError::at(format!("relation \"{missing}\" does not exist"), at));
        };
        // PostgreSQL requires the same columns (by name and type) in any order; the
        // sandbox keeps rows in the parent's order, so it asks for the same order.
        let same = p.columns.len() == child.columns.len()
            && p.columns.iter().zip(&child.columns).all(|(a, b)| a.name == b.name && a.ty == b.ty);
        if !same {
            return Err(FrontError::at(
                format!("table \"{rel}\" must have the same columns, in the same order, as the partitioned table \"{parent_name}\""),
                at,
            ));
        }
        if child.partition_of.is_some() {
            return Err(FrontError::at(format!("\"{rel}\" is already a partition"), at));
        }
        if matches!(&child.kind, RelKind::Table(t) if t.nrows() > 0) {
            let bound = self.bound(n, &parent_name, bound, at)?;
            if let Some(RelKind::Table(t)) = self.nodes[n].relation(&rel).map(|r| &r.kind) {
                for i in 0..t.nrows() {
                    if !self.row_fits(n, &parent_name, &bound, t.row(i)) {
                        return Err(FrontError::at(
                            format!("partition constraint of relation \"{rel}\" is violated by some row"),
                            at,
                        ));
                    }
                }
            }
        }
        self.attach_named(n, &parent_name, &rel, bound, false, at)
    }

    fn attach_named(
        &mut self,
        n: usize,
        parent: &str,
        rel: &str,
        bound: &BoundSpec,
        creating: bool,
        at: Location,
    ) -> Result<(), FrontError> {
        let b = self.bound(n, parent, bound, at)?;
        let keys = self.partition_keys(n, parent, rel, creating, at)?;
        let node = &mut self.nodes[n];
        if node.relation(rel).is_some_and(|r| !r.unique.is_empty()) {
            return Err(FrontError::unsupported(format!("attaching \"{rel}\", which has a unique key of its own"), at));
        }
        let siblings: Vec<Bound> = match &node.relation(parent).map(|p| &p.kind) {
            Some(RelKind::Partitioned { partitions, .. }) => partitions
                .iter()
                .filter_map(|c| node.relation(c).and_then(|r| r.partition_of.as_ref().map(|(_, b)| b.clone())))
                .collect(),
            _ => return Err(FrontError::at(format!("table \"{parent}\" is not partitioned"), at)),
        };
        if b == Bound::Default && siblings.contains(&Bound::Default) {
            return Err(FrontError::at(format!("partition \"{rel}\" conflicts with existing default partition"), at));
        }
        if let Some(overlap) = siblings.iter().find(|s| overlaps(s, &b)) {
            let _ = overlap;
            return Err(FrontError::at(format!("partition \"{rel}\" would overlap another partition"), at));
        }
        if let Some(RelKind::Partitioned { partitions, .. }) = node.relation_mut(parent).map(|p| &mut p.kind) {
            partitions.push(rel.to_string());
        }
        if let Some(r) = node.relation_mut(rel) {
            r.partition_of = Some((parent.to_string(), b));
        }
        for key in &keys {
            self.clone_unique(n, rel, key);
        }
        Ok(())
    }

    /// The parent's unique indexes a new partition `rel` gets a copy of; a foreign
    /// table cannot be one (it has no index: DefineRelation's and ATTACH PARTITION's
    /// errors), nor, in the sandbox, a partitioned one.
    fn partition_keys(
        &self,
        n: usize,
        parent: &str,
        rel: &str,
        creating: bool,
        at: Location,
    ) -> Result<Vec<crate::plan::on_conflict::UniqueKey>, FrontError> {
        let node = &self.nodes[n];
        let keys = node.relation(parent).map(|p| p.unique.clone()).unwrap_or_default();
        if keys.is_empty() {
            return Ok(keys);
        }
        match node.relation(rel).map(|r| &r.kind) {
            Some(RelKind::Foreign { .. }) if creating => Err(FrontError::at(
                format!(
                    "cannot create foreign partition of partitioned table \"{parent}\" (table \"{parent}\" contains \
                     indexes that are unique)"
                ),
                at,
            )),
            Some(RelKind::Foreign { .. }) => Err(FrontError::at(
                format!(
                    "cannot attach foreign table \"{rel}\" as partition of partitioned table \"{parent}\" \
                     (partitioned table \"{parent}\" contains unique indexes)"
                ),
                at,
            )),
            Some(RelKind::Partitioned { .. }) => Err(FrontError::unsupported(
                format!("a partitioned partition \"{rel}\" of \"{parent}\", which has unique keys"),
                at,
            )),
            _ => Ok(keys),
        }
    }

    /// A bound with its values evaluated and checked against the parent's strategy.
    fn bound(&mut self, n: usize, parent: &str, spec: &BoundSpec, at: Location) -> Result<Bound, FrontError> {
        let Some(RelKind::Partitioned { strategy, key, .. }) = self.nodes[n].relation(parent).map(|p| p.kind.clone())
        else {
            return Err(FrontError::at(format!("table \"{parent}\" is not partitioned"), at));
        };
        let key_types: Vec<SqlType> = {
            let p = self.nodes[n].relation(parent).expect("checked above");
            key.iter().map(|&i| p.columns[i].ty).collect()
        };
        let wrong = |s: &str| FrontError::at(format!("invalid bound specification for a {s} partition"), at);
        let value = |e: &ast::Expr, ty: SqlType, node: &mut Node| -> Result<Datum, FrontError> {
            let v = eval::eval(e, &mut node.random)?;
            eval::cast(v, ty, at)
        };
        let node = &mut self.nodes[n];
        Ok(match (spec, strategy) {
            (BoundSpec::Default, Strategy::Hash) => {
                return Err(FrontError::at("a hash-partitioned table may not have a default partition", at))
            }
            (BoundSpec::Default, _) => Bound::Default,
            (BoundSpec::Hash { modulus, remainder }, Strategy::Hash) => {
                Bound::Hash { modulus: *modulus, remainder: *remainder }
            }
            (BoundSpec::Hash { .. }, _) => return Err(wrong("hash")),
            (BoundSpec::List(values), Strategy::List) => {
                Bound::List(values.iter().map(|e| value(e, key_types[0], node)).collect::<Result<_, _>>()?)
            }
            (BoundSpec::List(_), _) => return Err(wrong("list")),
            (BoundSpec::Range { from, to }, Strategy::Range) => {
                if from.len() != key.len() || to.len() != key.len() {
                    return Err(FrontError::at(
                        "FROM and TO must specify exactly one value per partitioning column",
                        at,
                    ));
                }
                let mut conv = |v: &[RangeDatum]| -> Result<Vec<RangeValue>, FrontError> {
                    v.iter()
                        .zip(&key_types)
                        .map(|(d, ty)| match d {
                            RangeDatum::MinValue => Ok(RangeValue::Min),
                            RangeDatum::MaxValue => Ok(RangeValue::Max),
                            RangeDatum::Value(e) => value(e, *ty, node).map(RangeValue::Value),
                        })
                        .collect()
                };
                let b = Bound::Range { from: conv(from)?, to: conv(to)? };
                if let Bound::Range { from, to } = &b {
                    if range_cmp(from, to) != std::cmp::Ordering::Less {
                        return Err(FrontError::at("empty range bound specified for partition", at));
                    }
                }
                b
            }
            (BoundSpec::Range { .. }, _) => return Err(wrong("range")),
        })
    }

    /// `CREATE INDEX [name] ON t (col)`: the index `name`, or `t_col_idx`; on a
    /// partitioned table, each partition's own (`part_col_idx`, ChooseIndexName).
    fn create_index(
        &mut self,
        n: usize,
        table: &ObjectName,
        columns: &[ast::Expr],
        name: Option<&str>,
    ) -> Result<(), FrontError> {
        let rel = relation_name(table).map_err(|m| FrontError::at(m, object_at(table)))?;
        if let Some(name) = name {
            if self.nodes[n].relation_or_index_exists(name) {
                return Err(FrontError::at(format!("relation \"{name}\" already exists"), object_at(table)));
            }
        }
        let node = &mut self.nodes[n];
        let Some(r) = node.relation_mut(&rel) else {
            return Err(FrontError::at(format!("relation \"{rel}\" does not exist"), object_at(table)));
        };
        let [ast::Expr::Identifier(col)] = columns else {
            return Err(FrontError::unsupported("an index on anything but one column", object_at(table)));
        };
        let cname = ident(col);
        let Some(i) = r.column_index(&cname) else {
            return Err(FrontError::at(format!("column \"{cname}\" does not exist"), col.span.start));
        };
        if !r.indexes.contains(&i) {
            r.indexes.push(i);
        }
        // A partitioned table's index is created on each partition, as PostgreSQL does.
        let parts = match &mut r.kind {
            RelKind::Table(t) => {
                let t = Rc::make_mut(t);
                match name {
                    Some(name) => t.create_index_named(i, name.to_string()),
                    None => t.create_index(i),
                }
                vec![]
            }
            RelKind::Partitioned { partitions, .. } => partitions.clone(),
            RelKind::Foreign { .. } => {
                return Err(FrontError::at(format!("cannot create index on foreign table \"{rel}\""), object_at(table)))
            }
        };
        for p in parts {
            if let Some(RelKind::Table(t)) = node.relation_mut(&p).map(|r| &mut r.kind) {
                Rc::make_mut(t).create_index(i);
            }
        }
        Ok(())
    }

    /// `CREATE UNIQUE INDEX [name] ON t (col)`: a unique index on one column, named
    /// `t_col_idx` when no name is given (ChooseIndexName).
    fn create_unique_index(
        &mut self,
        n: usize,
        table: &ObjectName,
        columns: &[ast::Expr],
        name: Option<&str>,
    ) -> Result<(), FrontError> {
        let rel = relation_name(table).map_err(|m| FrontError::at(m, object_at(table)))?;
        let [ast::Expr::Identifier(col)] = columns else {
            return Err(FrontError::unsupported("a unique index on anything but one column", object_at(table)));
        };
        let cname = ident(col);
        let name = name.map_or_else(|| format!("{rel}_{cname}_idx"), str::to_string);
        self.add_unique(n, &rel, &cname, (name, false, false), col.span.start)
    }

    /// `SELECT expr, …` without FROM: evaluated here (`SELECT setseed(0.5)`).
    fn select_constant(&mut self, n: usize, q: &ast::Query, at: Location) -> Result<Vec<Val>, FrontError> {
        let ast::SetExpr::Select(s) = q.body.as_ref() else {
            return Err(FrontError::at("a SELECT with FROM runs in the query section (-- @query)", at));
        };
        if !s.from.is_empty() || q.order_by.is_some() || q.limit.is_some() {
            return Err(FrontError::at("a SELECT with FROM runs in the query section (-- @query)", at));
        }
        let mut out = Vec::new();
        for item in &s.projection {
            match item {
                ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                    out.push(eval::eval(e, &mut self.nodes[n].random)?);
                }
                _ => return Err(FrontError::unsupported("* without FROM", at)),
            }
        }
        Ok(out)
    }

    /// The INSERT's target and source, checked; no row is inserted yet.
    fn insert_begin(
        &mut self,
        n: usize,
        table: &ObjectName,
        cols: &[Ident],
        source: &ast::Query,
        at: Location,
    ) -> Result<InsertJob, FrontError> {
        let rel = relation_name(table).map_err(|m| FrontError::at(m, object_at(table)))?;
        let Some(r) = self.nodes[n].relation(&rel) else {
            return Err(FrontError::at(format!("relation \"{rel}\" does not exist"), object_at(table)));
        };
        let columns = r.columns.clone();
        // Which target column each value goes to (all, in order, when not listed).
        let targets: Vec<usize> = if cols.is_empty() {
            (0..columns.len()).collect()
        } else {
            cols.iter()
                .map(|c| {
                    let name = ident(c);
                    columns.iter().position(|x| x.name == name).ok_or_else(|| {
                        FrontError::at(format!("column \"{name}\" of relation \"{rel}\" does not exist"), c.span.start)
                    })
                })
                .collect::<Result<_, _>>()?
        };
        let source = self.source_rows(n, source, at)?;
        Ok(InsertJob { n, rel, targets, columns, at, source, inserted: 0, types_checked: false })
    }

    /// Inserts at most `budget` more rows of `job`, evaluating and routing each in
    /// turn as PostgreSQL does; true when the INSERT is done. What does not depend on
    /// the row is done once per call, not per row (issue 20: a scenario file's load
    /// is mostly this loop): the relations routing reaches are looked up by name once
    /// ([`Routing`]), and the row's buffers are reused.
    pub fn insert_some(&mut self, job: &mut InsertJob, budget: usize) -> Result<bool, FrontError> {
        let at = job.at;
        let mut routing = Routing::default();
        let mut target: Option<usize> = None;
        let mut vals: Vec<Val> = Vec::new();
        let mut row: Vec<Datum> = Vec::new();
        for _ in 0..budget {
            match &mut job.source {
                InsertSource::Values(rows) => match rows.next() {
                    Some(v) => vals = v,
                    None => break,
                },
                InsertSource::Series { next, step, left, projection, filter } => {
                    if *left == 0 {
                        break;
                    }
                    let i = *next;
                    *left -= 1;
                    *next = next.saturating_add(*step);
                    // The WHERE first (ExecScan's qual before the projection); a value
                    // it is not true for is passed over (and counts in the budget).
                    if let Some(f) = filter {
                        let random = &mut self.nodes[job.n].random;
                        if !matches!(f.eval(&[Datum::Int(i)], random)?.datum, Datum::Bool(true)) {
                            continue;
                        }
                    }
                    series_row(&mut self.nodes[job.n].random, i, projection, &mut vals)?
                }
            };
            if vals.len() > job.targets.len() {
                return Err(FrontError::at("INSERT has more expressions than target columns", at));
            }
            row.clear();
            row.resize(job.columns.len(), Datum::Null);
            // Indexes, not `drain().zip()`: the tests run this unoptimized, per value.
            for i in 0..vals.len() {
                let (t, v) = (job.targets[i], std::mem::replace(&mut vals[i], Val::NULL));
                row[t] = if job.types_checked {
                    eval::cast(v, job.columns[t].ty, at)?
                } else {
                    eval::assign(v, (&job.columns[t].name, job.columns[t].ty), at)?
                };
            }
            vals.clear();
            job.types_checked = matches!(job.source, InsertSource::Series { .. });
            self.total_rows += 1;
            if self.total_rows > self.limits.rows {
                return Err(FrontError::at(
                    format!("more than {} rows in all: too many for {}", self.limits.rows, self.limit_name),
                    at,
                ));
            }
            // Counted before the row is stored: the running total is the guarantee
            // (a series' rows may widen as they go).
            self.total_bytes += row_bytes(&row);
            if self.total_bytes > self.limits.bytes {
                return Err(FrontError::at(
                    format!(
                        "more than {} of rows in all: too many for {}",
                        size_text(self.limits.bytes as u128),
                        self.limit_name
                    ),
                    at,
                ));
            }
            let r = match target {
                Some(r) => r,
                None => *target
                    .insert(self.nodes[job.n].relation_index(&job.rel).expect("routing names an existing relation")),
            };
            self.route(&mut routing, job.n, r, &mut row, at)?;
            job.inserted += 1;
        }
        let done = match &job.source {
            InsertSource::Values(rows) => rows.len() == 0,
            InsertSource::Series { left, .. } => *left == 0,
        };
        if done {
            self.flush_batches(job.n);
        }
        Ok(done)
    }

    /// The rows of `VALUES (…), …` (evaluated now) or of `SELECT exprs [FROM
    /// generate_series(a, b [, step]) [alias]]` (evaluated row by row as they are
    /// inserted).
    fn source_rows(&mut self, n: usize, q: &ast::Query, at: Location) -> Result<InsertSource, FrontError> {
        if q.order_by.is_some() || q.limit.is_some() || q.offset.is_some() || q.with.is_some() {
            return Err(FrontError::unsupported("ORDER BY, LIMIT, OFFSET or WITH in INSERT … SELECT", at));
        }
        match q.body.as_ref() {
            ast::SetExpr::Values(v) => {
                let mut out = Vec::new();
                for row in &v.rows {
                    let mut vals = Vec::new();
                    for e in row {
                        vals.push(eval::eval(e, &mut self.nodes[n].random)?);
                    }
                    out.push(vals);
                }
                Ok(InsertSource::Values(out.into_iter()))
            }
            ast::SetExpr::Select(s) => self.select_rows(n, s, at),
            _ => Err(FrontError::unsupported("this form of INSERT source", at)),
        }
    }

    fn select_rows(&mut self, n: usize, s: &ast::Select, at: Location) -> Result<InsertSource, FrontError> {
        if s.having.is_some() || s.distinct.is_some() {
            return Err(FrontError::unsupported("HAVING or DISTINCT in a setup section's INSERT … SELECT", at));
        }
        if !matches!(&s.group_by, ast::GroupByExpr::Expressions(k, _) if k.is_empty()) {
            return Err(FrontError::unsupported("GROUP BY in INSERT … SELECT", at));
        }
        let (name, (start, stop, step)) = match s.from.as_slice() {
            [] => (String::new(), (0, 0, 1)),
            [from] if from.joins.is_empty() => series(&from.relation, &mut self.nodes[n].random, at)?,
            _ => return Err(FrontError::unsupported("a join in INSERT … SELECT", at)),
        };
        // The values a query's Function Scan would return (funcscan::series_len).
        let count = super::funcscan::series_len(start, stop, step) as u128;
        if count > self.limits.rows as u128 {
            return Err(FrontError::at(
                format!("generate_series of {count} rows: more than {}'s {}", self.limit_name, self.limits.rows),
                at,
            ));
        }
        let names = [name];
        let env = Env { names: &names, types: &[SqlType::Int4] };
        let mut projection = Vec::with_capacity(s.projection.len());
        for item in &s.projection {
            match item {
                ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                    projection.push(eval::analyze(e, &env)?)
                }
                _ => return Err(FrontError::unsupported("* in INSERT … SELECT", at)),
            }
        }
        let filter = s.selection.as_ref().map(|w| eval::analyze(w, &env)).transpose()?;
        if let Some(f) = &filter {
            if f.ty.is_some_and(|t| t != SqlType::Bool) {
                return Err(FrontError::at("argument of WHERE must be type boolean", at));
            }
        }
        // A WHERE leaves fewer rows than the series has: each is checked as it is
        // stored, not the series ahead.
        if count > 0 && filter.is_none() {
            self.check_series_bytes(n, start, count as usize, &projection, at)?;
        }
        Ok(InsertSource::Series { next: start, step, left: count as usize, projection, filter })
    }

    /// Refuses a series whose rows, each as wide as its first, would pass the bytes
    /// left, before any is made (its first row is evaluated with a copy of the random
    /// generator, so the rows drawn later are the same).
    fn check_series_bytes(
        &self,
        n: usize,
        first: i64,
        count: usize,
        projection: &[Analyzed],
        at: Location,
    ) -> Result<(), FrontError> {
        let mut random = self.nodes[n].random.clone();
        let mut vals = Vec::with_capacity(projection.len());
        series_row(&mut random, first, projection, &mut vals)?;
        let row: Vec<Datum> = vals.into_iter().map(|v| v.datum).collect();
        let width = row_bytes(&row);
        let estimate = (width as u128) * (count as u128);
        let left = self.limits.bytes.saturating_sub(self.total_bytes) as u128;
        if estimate > left {
            return Err(FrontError::at(
                format!(
                    "generate_series of {count} rows of about {width} bytes each (about {}): more than {}'s {} of \
                     rows{}",
                    size_text(estimate),
                    self.limit_name,
                    size_text(self.limits.bytes as u128),
                    if self.total_bytes > 0 { " with the rows before it" } else { "" }
                ),
                at,
            ));
        }
        Ok(())
    }

    /// Hands a row to relation `r` of node `n`, as PostgreSQL's tuple routing does;
    /// `row` is left empty (its buffer is the caller's to reuse).
    fn route(
        &mut self,
        routing: &mut Routing,
        n: usize,
        r: usize,
        row: &mut Vec<Datum>,
        at: Location,
    ) -> Result<(), FrontError> {
        let node = &self.nodes[n];
        let rel = &node.relations[r];
        match &rel.kind {
            RelKind::Table(t) => {
                // Checked only where there is a key: `columns()` builds the column list
                // (its names copied) for the not-null message, once per row stored (~10%
                // of a scenario file's load, most of whose tables have no key).
                if !rel.unique.is_empty() {
                    crate::executor::on_conflict::check_unique(&rel.name, &rel.unique, &rel.columns(), t, row)
                        .map_err(|m| FrontError::at(m, at))?;
                }
                if let RelKind::Table(t) = &mut self.nodes[n].relations[r].kind {
                    Rc::make_mut(t).push_row_owned(row);
                }
                Ok(())
            }
            RelKind::Partitioned { strategy, key, partitions } => {
                let mut key_vals = std::mem::take(&mut routing.key);
                key_vals.clear();
                key_vals.extend(key.iter().map(|&k| (rel.columns[k].ty, row[k].clone())));
                let parts = routing.partitions(node, n, r, partitions);
                // The first partition whose bound holds, else the default partition.
                // Plain loops: the tests run this unoptimized, once per row.
                let (mut target, mut default) = (None, None);
                // A hash key is hashed once, not once per partition tried.
                let mut hash = None;
                for &p in parts.iter().flatten() {
                    let Some((_, b)) = &node.relations[p].partition_of else { continue };
                    let holds = match (strategy, b) {
                        (_, Bound::Default) => {
                            default = default.or(Some(p));
                            continue;
                        }
                        (Strategy::Hash, Bound::Hash { modulus, remainder }) => {
                            *hash.get_or_insert_with(|| partition_hash(&key_vals)) % modulus == *remainder
                        }
                        _ => bound_holds(*strategy, b, &key_vals),
                    };
                    if holds {
                        target = Some(p);
                        break;
                    }
                }
                let Some(target) = target.or(default) else {
                    let names: Vec<&str> = key.iter().map(|&k| rel.columns[k].name.as_str()).collect();
                    let vals: Vec<String> = key_vals.iter().map(|(_, d)| d.to_string()).collect();
                    return Err(FrontError::at(
                        format!(
                            "no partition of relation \"{}\" found for row (partition key of the failing row contains ({}) = ({}))",
                            rel.name,
                            names.join(", "),
                            vals.join(", ")
                        ),
                        at,
                    ));
                };
                routing.key = key_vals;
                self.route(routing, n, target, row, at)
            }
            RelKind::Foreign { server, remote_table, .. } => {
                let (shard, remote_r, positions) = routing.foreign(self, (n, r), (server, remote_table), at)?;
                let remote = &self.nodes[shard].relations[remote_r];
                // postgres_fdw's INSERT names the columns: values go by name, and a
                // column the remote table lacks is the remote server's error.
                let mut remote_row = vec![Datum::Null; remote.columns.len()];
                for ((c, v), i) in rel.columns.iter().zip(row.drain(..)).zip(positions) {
                    let Some(i) = *i else {
                        return Err(FrontError::at(
                            format!(
                                "column \"{}\" of relation \"{remote_table}\" does not exist (on server \"{server}\")",
                                c.name
                            ),
                            at,
                        ));
                    };
                    remote_row[i] = eval::cast(Val { datum: v, ty: Some(c.ty) }, remote.columns[i].ty, at)?;
                }
                self.nodes[n].relations[r].rows_sent += 1;
                self.route(routing, shard, remote_r, &mut remote_row, at)
            }
        }
    }

    /// postgres_fdw sends inserted rows in batches of `batch_size` (default 1).
    fn flush_batches(&mut self, n: usize) {
        let servers = self.nodes[n].servers.clone();
        for r in self.nodes[n].relations.iter_mut() {
            if let RelKind::Foreign { server, options, .. } = &r.kind {
                let table = options.iter().find(|(k, _)| k == "batch_size").map(|(_, v)| v.clone());
                let server =
                    servers.iter().find(|s| &s.name == server).and_then(|s| s.option("batch_size").map(String::from));
                let size: usize = table.or(server).and_then(|v| v.parse().ok()).unwrap_or(1).max(1);
                r.batches_sent = r.rows_sent.div_ceil(size);
            }
        }
    }

    fn row_fits(&self, n: usize, parent: &str, b: &Bound, row: &[Datum]) -> bool {
        let Some(p) = self.nodes[n].relation(parent) else { return false };
        let RelKind::Partitioned { strategy, key, .. } = &p.kind else { return false };
        let key_vals: Vec<(SqlType, Datum)> = key.iter().map(|&k| (p.columns[k].ty, row[k].clone())).collect();
        *b == Bound::Default || bound_holds(*strategy, b, &key_vals)
    }
}

/// What tuple routing looks up by name, looked up once per [`Cluster::insert_some`]
/// call instead of once per row (PostgreSQL sets its routing up once per statement,
/// `ExecSetupPartitionTupleRouting`): a partitioned table's partitions, a foreign
/// table's shard, remote table and column positions. Filled as rows first reach a
/// relation, so a row meets the same error, with the same message, as when each row
/// looked its relations up; rebuilt for each call, so it never outlives the catalog it
/// read (nothing else runs while one call inserts).
#[derive(Default)]
struct Routing {
    /// (node, partitioned table) → each partition's relation index (None: no relation
    /// of that name), in the partitions' order.
    partitions: Vec<((usize, usize), Vec<Option<usize>>)>,
    /// (node, foreign table) → the shard's node, the remote table, and each column's
    /// position in the remote table (None: it has no column of that name).
    foreign: Vec<((usize, usize), (usize, usize, Vec<Option<usize>>))>,
    /// The partition key's values of the row being routed (a buffer, reused).
    key: Vec<(SqlType, Datum)>,
}

impl Routing {
    fn partitions(&mut self, node: &Node, n: usize, r: usize, names: &[String]) -> &[Option<usize>] {
        let i = match self.partitions.iter().position(|(k, _)| *k == (n, r)) {
            Some(i) => i,
            None => {
                let parts = names.iter().map(|p| node.relation_index(p)).collect();
                self.partitions.push(((n, r), parts));
                self.partitions.len() - 1
            }
        };
        &self.partitions[i].1
    }

    /// Where foreign table `r` of node `n` sends its rows; the error a row routed there
    /// meets when its server is not a shard or the remote table does not exist.
    fn foreign(
        &mut self,
        cluster: &Cluster,
        (n, r): (usize, usize),
        (server, remote_table): (&str, &str),
        at: Location,
    ) -> Result<(usize, usize, &[Option<usize>]), FrontError> {
        if let Some(i) = self.foreign.iter().position(|(k, _)| *k == (n, r)) {
            let (shard, remote, positions) = &self.foreign[i].1;
            return Ok((*shard, *remote, positions));
        }
        let rel = &cluster.nodes[n].relations[r];
        let shard = cluster.node_index(server).ok_or_else(|| {
            FrontError::at(
                format!("server \"{server}\" is not a shard of this scenario (add a section `-- @shard {server}`)"),
                at,
            )
        })?;
        let Some(remote) = cluster.nodes[shard].relation_index(remote_table) else {
            return Err(FrontError::at(
                format!(
                    "relation \"public.{remote_table}\" does not exist (on server \"{server}\", for foreign table \"{}\")",
                    rel.name
                ),
                at,
            ));
        };
        let remote_rel = &cluster.nodes[shard].relations[remote];
        let positions = rel.columns.iter().map(|c| remote_rel.column_index(&c.name)).collect();
        self.foreign.push(((n, r), (shard, remote, positions)));
        let (shard, remote, positions) = &self.foreign[self.foreign.len() - 1].1;
        Ok((*shard, *remote, positions))
    }
}

/// `generate_series(a, b [, step]) [alias]` in FROM: the column's name and the
/// start, stop and step (1 by default; zero is PostgreSQL's error, as in a query's
/// Function Scan, `funcscan::plan_function_scan`).
fn series(
    f: &ast::TableFactor,
    random: &mut pgfuncs::PgRandom,
    at: Location,
) -> Result<(String, (i64, i64, i64)), FrontError> {
    let ast::TableFactor::Table { name, alias, args: Some(args), .. } = f else {
        return Err(FrontError::unsupported("INSERT … SELECT from a table (only generate_series)", at));
    };
    if name.to_string().to_lowercase() != "generate_series" {
        return Err(FrontError::at(format!("function {name}() is not available in the sandbox"), at));
    }
    let mut bounds = Vec::new();
    for a in &args.args {
        let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) = a else {
            return Err(FrontError::unsupported("this generate_series argument", at));
        };
        match eval::cast(eval::eval(e, random)?, SqlType::Int8, at)? {
            Datum::Int(i) => bounds.push(i),
            _ => return Err(FrontError::at("generate_series() bounds must not be NULL", at)),
        }
    }
    let (a, b, step) = match bounds.as_slice() {
        [a, b] => (*a, *b, 1),
        [a, b, step] => (*a, *b, *step),
        _ => {
            return Err(FrontError::at(
                format!("function generate_series with {} arguments does not exist", bounds.len()),
                at,
            ))
        }
    };
    if step == 0 {
        return Err(FrontError::at("step size cannot equal zero", at));
    }
    let col = match alias {
        Some(al) => al.columns.first().map(|c| ident(&c.name)).unwrap_or_else(|| ident(&al.name)),
        None => "generate_series".into(),
    };
    Ok((col, (a, b, step)))
}

/// One row of `SELECT exprs FROM generate_series(…) name`: the expressions with `name` = `i`,
/// into `vals` (emptied first; its buffer reused from row to row).
fn series_row(
    random: &mut pgfuncs::PgRandom,
    i: i64,
    projection: &[Analyzed],
    vals: &mut Vec<Val>,
) -> Result<(), FrontError> {
    let row = [Datum::Int(i)];
    vals.clear();
    // A loop, not `collect::<Result<Vec<_>, _>>()`: that adapter chain, unoptimized,
    // was a sixth of a scenario file's load in the debug build the tests run (issue 20).
    for e in projection {
        vals.push(e.eval(&row, random)?);
    }
    Ok(())
}

/// PostgreSQL's hash of a partition key (`compute_partition_hash_value`), each value
/// hashed by its column's type. Each column is hashed and combined as it is read
/// (`compute_partition_hash_value`'s fold, in key order, NULLs skipped), with no list
/// of the values made first: routing hashes each row a hash-partitioned table takes.
pub fn partition_hash(key: &[(SqlType, Datum)]) -> u64 {
    let mut hash = 0;
    for (t, d) in key {
        let numeric = match (t, d) {
            (SqlType::Numeric, Datum::Int(_) | Datum::Float(_) | Datum::Numeric(_)) => {
                pgfuncs::Numeric::parse(&d.to_string()).ok()
            }
            _ => None,
        };
        let value = match (t, d, &numeric) {
            (_, Datum::Null, _) => pgfuncs::KeyValue::Null,
            (SqlType::Int2, Datum::Int(v), _) => pgfuncs::KeyValue::Int2(*v as i16),
            (SqlType::Int4, Datum::Int(v), _) => pgfuncs::KeyValue::Int4(*v as i32),
            (SqlType::Numeric, _, Some(n)) => pgfuncs::KeyValue::Numeric(n),
            (_, Datum::Int(v), _) => pgfuncs::KeyValue::Int8(*v),
            (_, Datum::Text(s), _) => pgfuncs::KeyValue::Text(s.as_str()),
            // bool_ops hashes with hashcharextended: hash_uint32_extended of the byte,
            // as hashint4extended hashes an int4.
            (_, Datum::Bool(b), _) => pgfuncs::KeyValue::Int4(i32::from(*b)),
            // float8 keys use hashfloat8extended, which the sandbox lacks: hashed as text.
            (_, Datum::Float(_), _) => pgfuncs::KeyValue::Null,
            // A numeric in a non-numeric key column cannot be stored there (the
            // assignment cast converted it); hashed as NULL rather than guessed.
            (_, Datum::Numeric(_), _) => pgfuncs::KeyValue::Null,
        };
        if let Some(h) = value.hash_extended(pgfuncs::HASH_PARTITION_SEED) {
            hash = pgfuncs::hash_combine64(hash, h);
        }
    }
    hash
}

/// Does the key belong to bound `b` (not Default)?
pub fn bound_holds(strategy: Strategy, b: &Bound, key: &[(SqlType, Datum)]) -> bool {
    match (strategy, b) {
        (Strategy::Hash, Bound::Hash { modulus, remainder }) => partition_hash(key) % modulus == *remainder,
        (Strategy::List, Bound::List(values)) => values.iter().any(|v| match (v, &key[0].1) {
            (Datum::Null, Datum::Null) => true,
            (Datum::Null, _) | (_, Datum::Null) => false,
            (a, b) => a == b,
        }),
        (Strategy::Range, Bound::Range { from, to }) => {
            if key.iter().any(|(_, d)| d.is_null()) {
                return false;
            }
            // from <= key < to, the key compared in place (no copy of it per bound).
            bound_cmp(from, key) != std::cmp::Ordering::Greater && bound_cmp(to, key) == std::cmp::Ordering::Greater
        }
        _ => false,
    }
}

/// A range bound against a key of values: [`range_cmp`] of the bound and the key's
/// values, without making a bound of the key.
fn bound_cmp(bound: &[RangeValue], key: &[(SqlType, Datum)]) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    // Indexes, not `zip`: this runs for each partition a row is tried against, and the
    // tests run it unoptimized.
    for i in 0..bound.len().min(key.len()) {
        let o = match &bound[i] {
            RangeValue::Min => return Less,
            RangeValue::Max => return Greater,
            RangeValue::Value(v) => v.cmp(&key[i].1),
        };
        if o != Equal {
            return o;
        }
    }
    Equal
}

/// Orders range bounds column by column; MINVALUE/MAXVALUE end the comparison.
fn range_cmp(a: &[RangeValue], b: &[RangeValue]) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (RangeValue::Min, RangeValue::Min) | (RangeValue::Max, RangeValue::Max) => return Equal,
            (RangeValue::Min, _) | (_, RangeValue::Max) => return Less,
            (RangeValue::Max, _) | (_, RangeValue::Min) => return Greater,
            (RangeValue::Value(p), RangeValue::Value(q)) => p.cmp(q),
        };
        if o != Equal {
            return o;
        }
    }
    Equal
}

fn overlaps(a: &Bound, b: &Bound) -> bool {
    match (a, b) {
        (Bound::Hash { modulus: m1, remainder: r1 }, Bound::Hash { modulus: m2, remainder: r2 }) => {
            // Moduli must divide one another in PostgreSQL; equal residues overlap.
            let m = (*m1).min(*m2);
            r1 % m == r2 % m
        }
        (Bound::List(x), Bound::List(y)) => x.iter().any(|v| y.contains(v)),
        (Bound::Range { from: f1, to: t1 }, Bound::Range { from: f2, to: t2 }) => {
            range_cmp(f1, t2) == std::cmp::Ordering::Less && range_cmp(f2, t1) == std::cmp::Ordering::Less
        }
        _ => false,
    }
}

// ---------------------------------------------------------------------------------
// ANALYZE and VACUUM (analyze.c, vacuum.c, postgres_fdw's postgresAnalyzeForeignTable).

/// A relation as ANALYZE reads it: its heap pages, its row count, and the rows of its
/// sample (only those are copied: a table of millions of rows is not duplicated).
struct Sampled {
    types: Vec<SqlType>,
    sample: Vec<Vec<Datum>>,
    rows: usize,
    pages: f64,
}

impl Cluster {
    /// `ANALYZE [tables]` / `VACUUM [ANALYZE] [tables]` on node `n`:
    /// - a table: `relpages` (its heap pages), `reltuples` (its rows) and, with ANALYZE,
    ///   every column's statistics (`plan::stats::analyze_sample`);
    /// - a foreign table (ANALYZE only, as PostgreSQL's VACUUM skips it with a WARNING
    ///   the sandbox cannot send, so it is refused): postgres_fdw's
    ///   `postgresAnalyzeForeignTable` asks the remote for `pg_relation_size(…) / 8192`
    ///   (the remote table's heap pages) and `postgresAcquireSampleRowsFunc` reads every
    ///   remote row (`SELECT cols FROM table` through a cursor): reltuples is their
    ///   count;
    /// - a partitioned table: each partition as above, then the parent's inherited
    ///   statistics over all its leaves' rows (`acquire_inherited_sample_rows`: each
    ///   leaf gives its share of the sample, by rows); VACUUM of a partitioned table
    ///   vacuums its partitions.
    /// Without tables: every table and partitioned table of the node, foreign tables
    /// only when named (as PostgreSQL).
    pub fn analyze(
        &mut self,
        n: usize,
        vacuum: bool,
        analyze: bool,
        tables: &[ObjectName],
        at: Location,
    ) -> Result<(), FrontError> {
        let target = self.nodes[n]
            .setting("default_statistics_target")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(stats::DEFAULT_STATISTICS_TARGET)
            .max(1);
        let names: Vec<(String, Location)> = if tables.is_empty() {
            self.nodes[n]
                .relations
                .iter()
                .filter(|r| !matches!(r.kind, RelKind::Foreign { .. }))
                .map(|r| (r.name.clone(), at))
                .collect()
        } else {
            tables
                .iter()
                .map(|t| relation_name(t).map(|name| (name, object_at(t))).map_err(|m| FrontError::at(m, object_at(t))))
                .collect::<Result<_, _>>()?
        };
        for (name, at) in names {
            self.analyze_one(n, &name, vacuum, analyze, target, at)?;
        }
        Ok(())
    }

    fn analyze_one(
        &mut self,
        n: usize,
        name: &str,
        vacuum: bool,
        analyze: bool,
        target: usize,
        at: Location,
    ) -> Result<(), FrontError> {
        let Some(rel) = self.nodes[n].relation(name) else {
            return Err(FrontError::at(format!("relation \"{name}\" does not exist"), at));
        };
        if let RelKind::Partitioned { partitions, .. } = &rel.kind {
            for p in partitions.clone() {
                self.analyze_one(n, &p, vacuum, analyze, target, at)?;
            }
            if analyze {
                let mut leaves = vec![];
                self.leaves(n, name, &mut leaves, at)?;
                let total: usize = leaves.iter().map(|(_, rows)| rows).sum();
                let targrows = 300 * target;
                let mut sample = vec![];
                for (leaf, rows) in leaves {
                    // A leaf's share of the sample, by rows (all of them when the tree
                    // is under the sample size).
                    let share = if total <= targrows {
                        rows
                    } else {
                        (targrows as f64 * rows as f64 / total as f64).round() as usize
                    };
                    sample.extend(self.sample(n, &leaf, share, at)?.sample);
                }
                let st = stats::analyze_sample(&self.types_of(n, name), &sample, total as f64, -1.0, target);
                self.set_stats(n, name, st);
            }
            return Ok(());
        }
        if vacuum && matches!(rel.kind, RelKind::Foreign { .. }) {
            return Err(FrontError::unsupported(
                format!(
                    "VACUUM of foreign table \"{name}\" (PostgreSQL skips it with a WARNING, which the sandbox does not \
                     send): write ANALYZE {name}"
                ),
                at,
            ));
        }
        let s = self.sample(n, name, 300 * target, at)?;
        if vacuum {
            // lazy_scan_heap: a table without dead tuples has every page all-visible.
            if let Some(RelKind::Table(t)) = self.nodes[n].relation_mut(name).map(|r| &mut r.kind) {
                Rc::make_mut(t).all_visible = true;
            }
        }
        let st = if analyze {
            stats::analyze_sample(&s.types, &s.sample, s.rows as f64, s.pages, target)
        } else {
            // VACUUM: pg_class's figures only (vac_update_relstats); column statistics kept.
            let columns = self.nodes[n]
                .relation(name)
                .and_then(|r| r.stats.as_ref().map(|st| st.columns.clone()))
                .unwrap_or_else(|| vec![None; s.types.len()]);
            RelStats { relpages: s.pages, reltuples: s.rows as f64, columns }
        };
        self.set_stats(n, name, st);
        Ok(())
    }

    fn set_stats(&mut self, n: usize, name: &str, st: RelStats) {
        if let Some(r) = self.nodes[n].relation_mut(name) {
            r.stats = Some(st);
        }
    }

    fn types_of(&self, n: usize, name: &str) -> Vec<SqlType> {
        self.nodes[n].relation(name).map(|r| r.columns.iter().map(|c| c.ty).collect()).unwrap_or_default()
    }

    /// A table's or foreign table's heap pages, rows, and a sample of `targrows` of its
    /// rows (the local columns, in order; `stats::sample_positions`).
    fn sample(&self, n: usize, name: &str, targrows: usize, at: Location) -> Result<Sampled, FrontError> {
        let rel = self.nodes[n].relation(name).ok_or_else(|| FrontError::at("relation vanished", at))?;
        let types: Vec<SqlType> = rel.columns.iter().map(|c| c.ty).collect();
        match &rel.kind {
            RelKind::Table(t) => {
                let pages = stats::heap_pages(&types, (0..t.nrows()).map(|i| t.row(i))) as f64;
                let sample =
                    stats::sample_positions(t.nrows(), targrows).into_iter().map(|i| t.row(i).to_vec()).collect();
                Ok(Sampled { types, sample, rows: t.nrows(), pages })
            }
            RelKind::Foreign { server, remote_table, .. } => {
                let shard = self.node_index(server).ok_or_else(|| {
                    FrontError::at(format!("server \"{server}\" is not a shard of this scenario"), at)
                })?;
                let remote = self.nodes[shard].relation(remote_table).ok_or_else(|| {
                    FrontError::at(
                        format!("relation \"public.{remote_table}\" does not exist (on server \"{server}\")"),
                        at,
                    )
                })?;
                let RelKind::Table(t) = &remote.kind else {
                    return Err(FrontError::unsupported(
                        format!("ANALYZE of foreign table \"{name}\": its remote relation is not a plain table"),
                        at,
                    ));
                };
                let remote_types: Vec<SqlType> = remote.columns.iter().map(|c| c.ty).collect();
                let pages = stats::heap_pages(&remote_types, (0..t.nrows()).map(|i| t.row(i))) as f64;
                // The local columns by name, as postgres_fdw's SELECT names them.
                let map: Vec<Option<usize>> = rel.columns.iter().map(|c| remote.column_index(&c.name)).collect();
                let sample = stats::sample_positions(t.nrows(), targrows)
                    .into_iter()
                    .map(|i| {
                        let r = t.row(i);
                        map.iter().map(|m| m.and_then(|j| r.get(j).cloned()).unwrap_or(Datum::Null)).collect()
                    })
                    .collect();
                Ok(Sampled { types, sample, rows: t.nrows(), pages })
            }
            RelKind::Partitioned { .. } => Err(FrontError::at("internal error: sample of a partitioned table", at)),
        }
    }

    /// Every leaf under a partitioned table, with its row count.
    fn leaves(&self, n: usize, name: &str, into: &mut Vec<(String, usize)>, at: Location) -> Result<(), FrontError> {
        let rel = self.nodes[n].relation(name).ok_or_else(|| FrontError::at("relation vanished", at))?;
        if let RelKind::Partitioned { partitions, .. } = &rel.kind {
            for p in partitions {
                self.leaves(n, p, into, at)?;
            }
            return Ok(());
        }
        let rows = self.sample(n, name, 0, at)?.rows;
        into.push((name.to_string(), rows));
        Ok(())
    }
}

/// The coordinator's relations as the cost model sees them (`plan::costsize`): a
/// table's heap pages now (`RelationGetNumberOfBlocks`) and `pg_class`'s figures, a
/// foreign table's with its server's `fdw_startup_cost` and `fdw_tuple_cost`
/// (postgres_fdw's defaults 100 and 0.01), a partitioned table's.
impl crate::plan::costsize::CostCatalog for Node {
    fn scansel_cache(&self) -> Option<&crate::plan::costsize::ScanselCache> {
        Some(&self.cost_relations.scansel)
    }

    fn relation_rc(&self, name: &str) -> Option<Rc<crate::plan::costsize::RelInfo>> {
        use crate::plan::costsize::CostCatalog;
        if let Some(kept) = self.cost_relations.kept.borrow().as_ref().and_then(|k| k.get(name)) {
            return kept.clone();
        }
        let r = CostCatalog::relation(self, name).map(Rc::new);
        if let Some(kept) = self.cost_relations.kept.borrow_mut().as_mut() {
            kept.insert(name.to_string(), r.clone());
        }
        r
    }

    fn relation(&self, name: &str) -> Option<crate::plan::costsize::RelInfo> {
        use crate::plan::costsize::{RelInfo, RelSize};
        let r = self.relation(name)?;
        let (relpages, reltuples) = r.stats.as_ref().map_or((0.0, -1.0), |s| (s.relpages, s.reltuples));
        let types: Vec<SqlType> = r.columns.iter().map(|c| c.ty).collect();
        let size = match &r.kind {
            RelKind::Table(t) => RelSize::Table {
                curpages: stats::heap_pages(&types, (0..t.nrows()).map(|i| t.row(i))) as f64,
                relpages,
                reltuples,
                // relallvisible / curpages (estimate_rel_size): all or none here.
                allvisfrac: if t.all_visible { 1.0 } else { 0.0 },
            },
            RelKind::Foreign { server, .. } => {
                let option = |k: &str, d: f64| {
                    self.server(server)
                        .and_then(|s| s.option(k))
                        .and_then(|v| v.trim().parse::<f64>().ok())
                        .unwrap_or(d)
                };
                RelSize::Foreign {
                    relpages,
                    reltuples,
                    fdw_startup_cost: option("fdw_startup_cost", 100.0),
                    fdw_tuple_cost: option("fdw_tuple_cost", 0.01),
                }
            }
            RelKind::Partitioned { .. } => RelSize::Partitioned { reltuples },
        };
        let columns = r
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), c.ty, r.stats.as_ref().and_then(|s| s.columns.get(i).cloned().flatten())))
            .collect();
        // The topmost partitioned ancestor (bounded: a cycle cannot be built, but a
        // walk over a list should not trust that).
        let mut parent = None;
        let mut at = r;
        for _ in 0..64 {
            let Some(p) = at.partition_of.as_ref().and_then(|(p, _)| self.relation(p)) else { break };
            parent = Some(p.name.clone());
            at = p;
        }
        let indexes = match &r.kind {
            RelKind::Table(t) => t.indexes.iter().map(|i| index_info(t, &types, i)).collect(),
            _ => vec![],
        };
        Some(RelInfo { name: r.name.clone(), parent, size, columns, indexes })
    }

    fn remote_estimate(
        &self,
        relation: &str,
        sql: &str,
        variant: crate::plan::remote_estimate::Variant,
    ) -> crate::plan::remote_estimate::RemoteAnswer {
        super::remote_estimate::ask(self, relation, sql, variant)
    }
}

/// A table's index as the planner sees it (`get_relation_info`'s `IndexOptInfo`):
/// its name, and the pages and height of the B-tree its
/// rows, inserted in row order, build (`plan::indexcost::btree_size`).
fn index_info(t: &Table, types: &[SqlType], index: &crate::types::Index) -> crate::plan::indexcost::IndexInfo {
    let ty = types.get(index.column).copied().unwrap_or(SqlType::Int4);
    // Each row's rank in the index's order (equal keys by row number).
    let mut rank = vec![0u64; t.nrows()];
    for (pos, &row) in index.order.iter().enumerate() {
        if let Some(r) = rank.get_mut(row as usize) {
            *r = pos as u64;
        }
    }
    let keys: Vec<(Option<usize>, u64)> = (0..t.nrows())
        .map(|i| {
            let d = &t.row(i)[index.column];
            let size = (!d.is_null()).then(|| stats::value_width(ty, d));
            (size, rank[i])
        })
        .collect();
    let (pages, tree_height) = crate::plan::indexcost::btree_size(&keys);
    crate::plan::indexcost::IndexInfo { column: index.column, name: index.name.clone(), pages, tree_height }
}
