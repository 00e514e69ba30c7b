//! EXPLAIN ANALYZE output as PostgreSQL 15 prints it, in its TEXT and JSON formats.
//!
//! The sandbox's own views (the page, a plain SELECT's EXPLAIN ANALYZE) print as
//! `EXPLAIN (…, COSTS OFF)`; an EXPLAIN statement with COSTS (PostgreSQL's default)
//! carries the estimates of `plan::costsize` in [`ExplainDoc::costs`], printed as
//! PostgreSQL prints them (TEXT `  (cost=S..T rows=R width=W)` after the node's name,
//! JSON "Startup Cost", "Total Cost", "Plan Rows", "Plan Width" after its relation).
//! `VERBOSE` is an option ([`ExplainOptions::verbose`]) and the statement's own
//! options (ANALYZE or the plan only, SETTINGS, SUMMARY) are in [`ExplainDoc`]; TIMING OFF is the tree's own
//! ([`ExplainNode::timed`]). Checked line for line
//! against a real coordinator (tests/pg15_fidelity.rs):
//!
//! - TEXT: `Aggregate (actual time=… rows=1 loops=1)` (one space: COSTS OFF),
//!   `->  Async Foreign Scan on public.ft1 (…)` (the schema only with VERBOSE), then
//!   with VERBOSE the node's `Output:` (not for Append and Merge Append, as PostgreSQL),
//!   its other properties, and `Remote SQL:` / `Relations:` of foreign scans; then
//!   `Planning Time:` and `Execution Time:`.
//! - JSON: PostgreSQL's keys in PostgreSQL's order ("Node Type", "Strategy",
//!   "Partial Mode", "Operation", "Parent Relationship", "Parallel Aware",
//!   "Async Capable", "Relation Name", "Schema", "Alias", the actual times, rows and
//!   loops, "Output", the node's properties, "Subplans Removed", "Plans"), laid out as
//!   PostgreSQL lays it out ([`explain_json_text`]); [`explain_json`] gives the same as
//!   a `serde_json::Value` (whose keys keep that order only with serde_json's
//!   `preserve_order` feature).
//!
//! Our own counters (what PostgreSQL's output leaves out: requests, waits, time
//! waiting, batches, round trips, bytes) are printed only with
//! [`ExplainOptions::counters`]: in TEXT as the lines `Remote: …` and `Async: …` under
//! a foreign scan, in JSON under the one key `"pgasync"`.
//!
//! What nodes tell EXPLAIN beyond the fields of [`ExplainNode`] goes in its `details`,
//! in PostgreSQL's order; a few keys are interpreted here (see [`ExplainNode::push_output`]):
//! - `"Output"`, one entry per output column. In a scan, a column's name, unquoted
//!   (quoted here as PostgreSQL's `quote_identifier` would, and qualified with the
//!   relation's alias when the plan has more than one relation, as PostgreSQL does),
//!   or an expression in parentheses, printed as it is (a pushed-down aggregate:
//!   `(count(*))`). In other nodes, an expression in which `$N` stands for the
//!   N-th output column of the node's first child (`sum($0)` prints `sum(ft1.a)`). A
//!   node without Output entries passes its first child's through (Limit, Sort,
//!   Append, …; Hash Join its two children's).
//! - `"Schema"`, `"Alias"`: of a scan's relation (default `public` and the relation).
//! - `"Server"`: ours, printed with the counters only.
//! - `"Remote SQL"`: printed only with VERBOSE, as postgres_fdw does; `"Relations"`
//!   always, its relations schema-qualified only with VERBOSE.
//!
//! `$N` is replaced in every property of a non-scan node, so `Group Key: $0` works too.
//!
//! The sandbox's Result nodes (a WHERE or HAVING filter, a select list: one node each,
//! so that the page's plan shows where rows are dropped) are PostgreSQL's quals and
//! target lists, which it evaluates inside the node below (`ExecScan`'s qual and
//! projection, `ExecAgg`'s HAVING qual). Printed, they are folded into that node
//! (`fold`): its `Filter:` and `Rows Removed by Filter:`, its `Output:`, and the rows
//! that come out of the Result.
//!
//! Invariants:
//! - printing is a function of the tree and the options: the tree is not changed (`fold`
//!   works on a copy), so TEXT and JSON of one run agree and can be printed again;
//! - with `counters` off nothing of ours is printed (no `Remote:`/`Async:` line, no
//!   "Server", no "pgasync" key): the output is what tests/pg15_fidelity.rs compares with
//!   a real coordinator's;
//! - figures are per loop (times and rows divided by `nloops`); a node never run prints
//!   `(never executed)` in TEXT and zeros in JSON, as PostgreSQL does;
//! - names are quoted only through `sql_text::quote_identifier`.

use super::Instrumentation;
use crate::plan::costsize::Estimate;
use crate::sql_text::deparse::REMOTE_SCHEMA;
use crate::sql_text::quote_identifier;
use serde_json::Value;

/// A node as EXPLAIN shows it; built by the executor from its state tree.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ExplainNode {
    pub id: usize,
    /// PostgreSQL's node type name: "Append", "Foreign Scan", "Seq Scan", ...
    pub node_type: String,
    /// Async Foreign Scan (PostgreSQL prints the "Async" prefix in TEXT, "Async Capable" in JSON).
    pub async_capable: bool,
    /// "Plain", "Hashed" or "Sorted" for Aggregate.
    pub strategy: Option<String>,
    pub relation: Option<String>,
    /// "Outer", "Inner" or "Member", as in PostgreSQL's JSON.
    pub parent_relationship: Option<String>,
    /// Properties in PostgreSQL's order, e.g. ("Remote SQL", "SELECT a FROM public.t1");
    /// see the module documentation for the keys interpreted here.
    pub details: Vec<(String, String)>,
    pub instr: Instrumentation,
    /// The node's times were measured (EXPLAIN's TIMING, `EState::timing`); without
    /// them only rows and loops are shown, as PostgreSQL shows them with TIMING OFF.
    pub timed: bool,
    pub children: Vec<ExplainNode>,
}

impl ExplainNode {
    /// Adds one output column (see the module documentation): a column name in a scan,
    /// an expression over `$N` (the first child's N-th output) elsewhere.
    pub fn push_output(&mut self, expr: impl Into<String>) {
        self.details.push(("Output".into(), expr.into()));
    }

    /// The alias of a scan's relation, when it differs from the relation's name
    /// (a partition `t_p1` scanned as `pt_1`).
    pub fn set_alias(&mut self, alias: impl Into<String>) {
        self.details.push(("Alias".into(), alias.into()));
    }

    /// A join's type (EXPLAIN names `Hash Left Join`; JSON's `Join Type`); kept as a
    /// detail EXPLAIN does not print as such. An inner join needs none. Over a semi
    /// join's unique-ified inner side the inner is unique (PostgreSQL's `inner_unique`,
    /// which EXPLAIN VERBOSE prints).
    pub fn set_join_type(&mut self, t: crate::plan::JoinType) {
        if t != crate::plan::JoinType::Inner {
            self.details.push(("JoinType".into(), t.name().into()));
        }
        if t == crate::plan::JoinType::UniqueInner {
            self.details.push(("Inner Unique".into(), "true".into()));
        }
        // A semi join's side made unique (`create_unique_path`): not printed, read by
        // `use_physical_tlists` (create_unique_plan passes its flags through).
        match t {
            crate::plan::JoinType::UniqueInner => self.details.push((UNIQUE_SIDE.into(), "inner".into())),
            crate::plan::JoinType::UniqueOuter => self.details.push((UNIQUE_SIDE.into(), "outer".into())),
            _ => {}
        }
    }

    /// Is it a join node (its `$N` count over the outer's outputs, then the inner's)?
    fn is_join(&self) -> bool {
        matches!(self.node_type.as_str(), "Hash Join" | "Nested Loop" | "Merge Join")
    }

    /// The join's type, `Inner` unless set otherwise.
    fn join_type(&self) -> &str {
        self.detail("JoinType").unwrap_or("Inner")
    }

    pub fn detail(&self, key: &str) -> Option<&str> {
        self.details.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    pub(crate) fn is_scan(&self) -> bool {
        self.relation.is_some() && self.node_type.ends_with("Scan")
    }

    fn alias(&self) -> Option<&str> {
        self.detail("Alias").or(self.relation.as_deref())
    }

    fn schema(&self) -> &str {
        self.detail("Schema").unwrap_or(REMOTE_SCHEMA)
    }
}

/// The options of `EXPLAIN (ANALYZE, COSTS OFF, …)` the sandbox honours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExplainOptions {
    /// PostgreSQL's VERBOSE: `Output:` lines, schema-qualified relations, `Remote SQL:`.
    pub verbose: bool,
    /// Our counters (`Remote:` / `Async:` lines, the JSON key "pgasync"); not PostgreSQL's.
    pub counters: bool,
}

impl Default for ExplainOptions {
    /// The sandbox's default: VERBOSE, with our counters.
    fn default() -> Self {
        ExplainOptions { verbose: true, counters: true }
    }
}

impl ExplainOptions {
    /// Exactly `EXPLAIN (ANALYZE, VERBOSE, COSTS OFF)`: nothing of ours.
    pub const POSTGRES_VERBOSE: ExplainOptions = ExplainOptions { verbose: true, counters: false };
    /// Exactly `EXPLAIN (ANALYZE, COSTS OFF)`.
    pub const POSTGRES: ExplainOptions = ExplainOptions { verbose: false, counters: false };
}

/// What EXPLAIN's statement-level options put around the plan (explain.c's
/// `ExplainOnePlan` and `ExplainPrintPlan`):
/// - without ANALYZE the plan only: no actual figures, no "never executed", no
///   `Rows Removed by Filter`, no Triggers, no Execution Time;
/// - `Settings:` (JSON: an object) after the plan when SETTINGS is on: PostgreSQL's
///   `get_explain_guc_options`, the changed planner settings (TEXT prints nothing when
///   there are none, JSON an empty object);
/// - `Planning Time` with SUMMARY, `Execution Time` with SUMMARY and ANALYZE.
#[derive(Clone, Debug, PartialEq)]
pub struct ExplainDoc {
    pub analyze: bool,
    pub summary: bool,
    /// COSTS (PostgreSQL's default): each node's estimate, indexed by
    /// [`ExplainNode::id`] (`plan::costsize::cost_plan`'s order); None: COSTS OFF.
    pub costs: Option<Vec<Estimate>>,
    /// With SETTINGS: the changed settings as (name, value), in PostgreSQL's order.
    pub settings: Option<Vec<(String, String)>>,
}

impl ExplainDoc {
    /// `EXPLAIN (ANALYZE, …)` with its defaults: SUMMARY on, no SETTINGS.
    pub const ANALYZE: ExplainDoc = ExplainDoc { analyze: true, summary: true, costs: None, settings: None };
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn per_loop(ns: u64, loops: u64) -> f64 {
    ms(ns) / loops.max(1) as f64
}

/// Rows per loop as explain.c prints them (`%.0f`: an exact half rounds to even, as
/// Rust's `{:.0}` does).
fn rows_per_loop(i: &Instrumentation) -> u64 {
    format!("{:.0}", i.ntuples as f64 / i.nloops.max(1) as f64).parse().unwrap_or(0)
}

// ---------------------------------------------------------------------------------
// Output columns and `$N` references.

/// Each node's resolved output columns, in the shape of the tree.
///
/// A column is printed two ways: as the node's own `Output:` shows it (`cols`), and as
/// a node above that reads it shows it (`refs`). They differ for a column the node
/// computes (an aggregate, an expression, a constant): PostgreSQL's upper node reads it
/// through a Var of its own target list, which ruleutils.c's `get_variable` prints as
/// the expression below in parentheses ("our caller probably assumed a Var is a simple
/// expression"): `Output: cat, (count(*))` above a HashAggregate whose Output is
/// `cat, count(*)`. A column that is itself a reference (a relation's column, the
/// input's column passed up) is printed as it is, however deep the chain.
///
/// `qualified` is `cols` with every column qualified by its relation's alias: keys
/// and quals under VERBOSE (explain.c's `useprefix` is `es->verbose` or more than one
/// range-table entry for them, the range table alone for `Output:`).
struct Outputs {
    cols: Vec<String>,
    /// Whether each column is a reference (a Var in PostgreSQL's target list) rather
    /// than computed by the node.
    vars: Vec<bool>,
    qualified: Vec<String>,
    children: Vec<Outputs>,
    /// What `Output:` prints instead of `cols` (a scan's physical target list,
    /// [`use_physical_tlists`]); `cols` still name what the parent's `$N` refer to.
    physical: Option<Vec<String>>,
}

impl Outputs {
    /// The columns `Output:` prints.
    fn printed(&self) -> &[String] {
        self.physical.as_deref().unwrap_or(&self.cols)
    }
}

impl Outputs {
    /// The columns as a node above prints its references to them (`qualified`: the
    /// qualified spelling).
    fn refs(&self, qualified: bool) -> Vec<String> {
        let cols = if qualified { &self.qualified } else { &self.cols };
        cols.iter().zip(&self.vars).map(|(c, &var)| if var { c.clone() } else { format!("({c})") }).collect()
    }

    /// The columns as the node prints them (`qualified`: the qualified spelling).
    fn shown(&self, qualified: bool) -> &[String] {
        if qualified {
            &self.qualified
        } else {
            &self.cols
        }
    }

    /// Each column a reference, spelt as `from`'s references (a node that passes its
    /// input's columns up: Sort, Limit, Hash, a join's sides).
    fn passing(from: &[&Outputs], children: Vec<Outputs>) -> Outputs {
        let cols: Vec<String> = from.iter().flat_map(|o| o.refs(false)).collect();
        let qualified = from.iter().flat_map(|o| o.refs(true)).collect();
        Outputs { vars: vec![true; cols.len()], cols, qualified, children, physical: None }
    }
}

/// Is `s` a column's name, as EXPLAIN prints a Var: `name`, `alias.name`, `alias.*`
/// (each part an identifier, quoted or not)?
fn is_column_text(s: &str) -> bool {
    let s = resolve_qualifiers(s, true);
    let mut rest = s.as_str();
    let mut parts = 0;
    loop {
        let part_len = if let Some(q) = rest.strip_prefix('"') {
            // A quoted identifier: up to the closing quote (`""` inside).
            let mut i = 0;
            let b = q.as_bytes();
            loop {
                match b.get(i) {
                    None => return false,
                    Some(b'"') if b.get(i + 1) == Some(&b'"') => i += 2,
                    Some(b'"') => break i + 2,
                    Some(_) => i += 1,
                }
            }
        } else if rest.starts_with('*') && parts > 0 {
            1
        } else {
            let n = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).unwrap_or(rest.len());
            if n == 0 || rest.starts_with(|c: char| c.is_ascii_digit() || c == '$') {
                return false;
            }
            n
        };
        parts += 1;
        rest = &rest[part_len..];
        match rest.strip_prefix('.') {
            Some(r) => rest = r,
            None => return rest.is_empty(),
        }
    }
}

/// A Finalize aggregate's entry `f($k)` over its input's partial aggregate `PARTIAL
/// f(x)`: ruleutils.c's `get_agg_expr` prints a combining aggregate as the original
/// aggregate of the partial one's arguments (`get_agg_combine_expr`), `f(x)`, not
/// `f((PARTIAL f(x)))`. None for any other entry.
fn combined_aggregate(entry: &str, input: &Outputs) -> Option<String> {
    let open = entry.find('(')?;
    let k = input_ref(entry[open + 1..].strip_suffix(')')?)?;
    // Read directly from the partial aggregate, or through a node that passes it on
    // (a Sort, an Append: its reference, parenthesized).
    let col = input.cols.get(k)?;
    let col =
        col.strip_prefix('(').and_then(|c| c.strip_suffix(')')).filter(|c| c.starts_with("PARTIAL ")).unwrap_or(col);
    col.strip_prefix("PARTIAL ").map(str::to_string)
}

/// A constant as a scan's Output prints it, never a column's name: a number (a set
/// operation's flag) or a typed NULL (`NULL::integer`, an INSERT's unfilled column).
fn is_constant_text(c: &str) -> bool {
    c.starts_with(|d: char| d.is_ascii_digit()) || c.starts_with("NULL::")
}

/// The `N` of an Output entry that is exactly `$N` (a reference to the input's N-th
/// column).
fn input_ref(entry: &str) -> Option<usize> {
    entry.strip_prefix('$').filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))?.parse().ok()
}

/// A Result PostgreSQL has not: its filter and target list are the node's below
/// (see `as_postgres_prints`), which it is folded into.
fn folds_into_child(n: &ExplainNode) -> bool {
    n.node_type == "Result"
        && n.children.iter().filter(|c| !is_init_plan(c)).count() == 1
        && n.detail("One-Time Filter").is_none()
}

/// Replaces `$N` by `inputs[N]` (left as is when there is no such input).
fn substitute(text: &str, inputs: &[String]) -> String {
    if !text.contains('$') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '$' && text[i + 1..].starts_with('$') {
            // `$$n`: a parameter (`Expr::Param`), printed `$n` and not resolved.
            chars.next();
            out.push('$');
            continue;
        }
        if c == '$' {
            let start = i + 1;
            let mut end = start;
            while let Some(&(j, d)) = chars.peek() {
                if d.is_ascii_digit() {
                    end = j + 1;
                    chars.next();
                } else {
                    break;
                }
            }
            if let Some(s) = text[start..end].parse::<usize>().ok().and_then(|n| inputs.get(n)) {
                out.push_str(s);
                continue;
            }
            out.push_str(&text[i..end]);
            continue;
        }
        out.push(c);
    }
    out
}

/// The detail under which a foreign modify's scan gives the Output PostgreSQL prints
/// for it (the modify's row: new values, `ctid`, the whole row), its own `Output`
/// entries still naming the columns its quals read.
pub const ROW_MARK_OUTPUT: &str = "Row Mark Output";

/// A Subquery Scan's output column `N` that is a set operation's implicit cast to a
/// type, `N<TAB>type`: its Output prints the argument (ruleutils.c hides an implicit
/// cast at the top of a target entry), a node above reads the cast and prints it
/// whole in parentheses (`(("*SELECT* 1".id)::bigint)`, get_variable's deparse of the
/// referenced entry).
pub const IMPLICIT_CAST: &str = "Implicit Cast";

/// A foreign scan sorted remotely: its outputs that are its ORDER BY keys, `i,j`
/// (a select list folded into it keeps them as resjunk columns after its own).
pub const SORT_OUTPUTS: &str = "Sort Outputs";

/// An Aggregate (not a partial one) or a foreign scan of a pushed-down grouping (an
/// upper relation): its outputs that are GROUP BY keys, `i,j`. A select list folded into it that leaves a key out
/// keeps it as a resjunk entry after its own (transformGroupClause adds the key's
/// target entry, resjunk, to the query's target list), which the scan returns and
/// EXPLAIN prints (`Output: (count(*)), cat`).
pub const GROUP_OUTPUTS: &str = "Group Outputs";

/// A Result whose target list is empty (a scan under an Append or at a subplan's
/// top that returns no column, its qual's columns read and dropped): it projects to
/// nothing, so the node it folds into prints no Output (createplan.c's
/// CP_EXACT_TLIST of an empty reltarget), where a Result without one passes its
/// input's columns on.
pub const EMPTY_TLIST: &str = "Empty Tlist";

/// A scan of a base relation: one entry per column of the relation, in order (its
/// physical target list, which `use_physical_tlists` may print as its Output).
pub const PHYSICAL_TLIST: &str = "Physical Tlist";

/// A join's base relation's scan: its relation's place among the query's relations
/// and its columns in PostgreSQL's target-list order, `rank<TAB>column<TAB>…`
/// (`plan::RelTlist`; printed by [`order_tlists`]).
pub const TLIST_ORDER: &str = "Tlist Order";

/// Beside [`TLIST_ORDER`], for each of its columns `place:needed`: the column's place
/// in the query's whole reltarget order and its `attr_needed` bit set (`plan::RelTlist`;
/// [`join_tlist`] keeps the columns a join relation returns).
pub const TLIST_NEEDED: &str = "Tlist Needed";
/// A join over a semi join's side made unique (`JOIN_UNIQUE_INNER` / `_OUTER`):
/// `inner` or `outer`, the side whose HashAggregate or Unique is `create_unique_path`'s
/// (not printed; [`use_physical_tlists`]).
pub const UNIQUE_SIDE: &str = "Unique Side";

/// A Hash Join's inner rows its Hash node did not insert (NULL keys): the Hash node
/// EXPLAIN prints counts the rows inserted (MultiExecPrivateHash), not its child's.
pub const HASH_UNHASHED: &str = "Hash Rows Not Inserted";

/// A partitioned UPDATE's or DELETE's result relation, which ModifyTable names under
/// its Output (show_modifytable_info): `operation\trelation\talias`, printed in TEXT as
/// `Foreign Update on public.pt1 pt_1`; in JSON PostgreSQL's "Target Tables".
pub const TARGET_TABLE: &str = "Target Table";
/// A foreign modify's Remote SQL, printed under the last [`TARGET_TABLE`] (VERBOSE).
pub const TARGET_REMOTE_SQL: &str = "Target Remote SQL";

/// Every node's output columns (see [`Outputs`]), with `Output:`'s prefix rule
/// (`prefix`: the plan's range table has more than one entry).
fn resolve_outputs(n: &ExplainNode, prefix: bool) -> Outputs {
    let rule = resolve_columns(n, prefix);
    let qualified = resolve_columns(n, true);
    fn merge(mut rule: Outputs, qualified: Outputs) -> Outputs {
        rule.qualified = qualified.cols;
        rule.children = rule.children.into_iter().zip(qualified.children).map(|(r, q)| merge(r, q)).collect();
        rule
    }
    merge(rule, qualified)
}

/// The columns of every node, spelt with or without (`prefix`) their relations'
/// aliases (`qualified` left as `cols`).
fn resolve_columns(n: &ExplainNode, prefix: bool) -> Outputs {
    let children: Vec<Outputs> = n.children.iter().map(|c| resolve_columns(c, prefix)).collect();
    let own: Vec<&str> = n.details.iter().filter(|(k, _)| k == "Output").map(|(_, v)| v.as_str()).collect();
    let row_mark: Vec<String> =
        n.details.iter().filter(|(k, _)| k == ROW_MARK_OUTPUT).map(|(_, v)| v.clone()).collect();
    let computed = |cols: Vec<String>, children: Vec<Outputs>| {
        let vars = cols.iter().map(|c| is_column_text(c)).collect();
        Outputs { qualified: cols.clone(), cols, vars, children, physical: None }
    };
    let mut out = if !row_mark.is_empty() {
        // A foreign modify's scan: the modify's row, as written.
        computed(row_mark, children)
    } else if n.is_scan() {
        // A column name, quoted and qualified; an expression as it is.
        let alias = n.alias().map(quote_identifier).unwrap_or_default();
        let cols = own
            .iter()
            // A constant (a set operation's flag) as it is too.
            // A Values Scan's columns are qualified already (`"*VALUES*".column1`).
            .map(|c| match (c.starts_with('(') || is_constant_text(c) || c.starts_with("\"*VALUES*\"."), prefix) {
                (true, _) => c.to_string(),
                (false, true) => format!("{alias}.{}", quote_identifier(c)),
                (false, false) => quote_identifier(c),
            })
            .collect();
        let mut out = computed(cols, children);
        for (_, v) in n.details.iter().filter(|(k, _)| k == IMPLICIT_CAST) {
            let Some((i, ty)) = v.split_once('\t') else { continue };
            let Some(i) = i.parse::<usize>().ok().filter(|&i| i < out.cols.len()) else { continue };
            out.physical.get_or_insert_with(|| out.cols.clone());
            out.cols[i] = format!("({})::{ty}", out.cols[i]);
            out.qualified[i] = out.cols[i].clone();
            out.vars[i] = false;
        }
        out
    } else if n.detail(EMPTY_TLIST).is_some() {
        computed(vec![], children)
    } else if !own.is_empty() {
        // `$N`: the input's N-th column. A Result folded into its input is that node's
        // target list: it computes what it does not take as it is (`count(*)`, not
        // `(count(*))`, from a HashAggregate).
        let folds = folds_into_child(n);
        let input = match children.first() {
            Some(c) if folds => c.cols.clone(),
            Some(c) => c.refs(false),
            None => vec![],
        };
        let input_vars = |i: usize| match children.first() {
            Some(c) if folds => c.vars.get(i).copied().unwrap_or(false),
            _ => true,
        };
        // A foreign scan of a join or of an upper relation (no relation of its own):
        // each column a Var of its scan target list, `(count(*))` a reference too.
        let scan_tlist = n.detail("Relations").is_some() && n.children.is_empty();
        let finalize = n.detail("Partial Mode") == Some("Finalize");
        let mut cols: Vec<String> = own
            .iter()
            .map(|c| {
                let combined = children.first().filter(|_| finalize).and_then(|child| combined_aggregate(c, child));
                resolve_qualifiers(&combined.unwrap_or_else(|| substitute(c, &input)), prefix)
            })
            .collect();
        let mut vars: Vec<bool> = own
            .iter()
            .zip(&cols)
            .map(|(c, text)| match input_ref(c) {
                Some(i) => input_vars(i),
                None => scan_tlist || (children.is_empty() && is_column_text(text)),
            })
            .collect();
        if folds {
            // The select list projected over a Sort (or a Limit over one, or a foreign
            // scan sorted remotely): ORDER BY's columns it leaves out are resjunk
            // entries of PostgreSQL's final target list, at its end
            // (transformSortClause), which the Sort and the nodes above it return.
            if let (Some(sort), Some(c)) = (n.children.first(), children.first()) {
                // ORDER BY's resjunk entries, then GROUP BY's (the parser's order:
                // transformSortClause before transformGroupClause).
                for k in resjunk_sort_keys(sort).into_iter().chain(resjunk_group_keys(sort)) {
                    if let Some(col) = c.cols.get(k).filter(|col| !cols.contains(col)) {
                        cols.push(col.clone());
                        vars.push(true);
                    }
                }
            }
        }
        Outputs { qualified: cols.clone(), cols, vars, children, physical: None }
    } else if n.is_join() {
        let sides: Vec<&Outputs> = children.iter().collect();
        let passed = Outputs::passing(&sides, vec![]);
        Outputs { children, ..passed }
    } else if let Some(parents) = partition_parents(n) {
        // An Append over a partitioned table's partitions returns the parent's rows
        // (over a partitionwise join's pairs, each side's parent's).
        let passed = Outputs::passing(&children.iter().take(1).collect::<Vec<_>>(), vec![]);
        let cols: Vec<String> = passed.cols.iter().map(|s| as_parents(&parents, s)).collect();
        Outputs { qualified: cols.clone(), cols, vars: passed.vars, children, physical: None }
    } else if folds_into_child(n) && children.len() == 1 {
        // A Result that only filters (HAVING over an Aggregate, WHERE over a scan) is
        // its input's node in PostgreSQL: the same columns, computed (`sum(x)`) or
        // not, not references to them (`(sum(x))`).
        let c = &children[0];
        let (cols, vars, qualified) = (c.cols.clone(), c.vars.clone(), c.qualified.clone());
        Outputs { cols, vars, qualified, children, physical: None }
    } else {
        let passed = Outputs::passing(&children.iter().take(1).collect::<Vec<_>>(), vec![]);
        Outputs { children, ..passed }
    };
    if n.node_type == "Bitmap Heap Scan" {
        // Its Bitmap Index Scan's Index Cond names the heap scan's columns, qualified
        // where the heap scan's are and, marked, where VERBOSE would qualify them.
        // Its own columns, not its output: under a DML's projection the heap scan
        // returns (tableoid, ctid), while its conditions are over the table's columns.
        // Qualified with VERBOSE only, as show_scan_qual prefixes a scan's quals.
        let own = qual_cols(n);
        for c in &mut out.children {
            c.vars = vec![true; own.len()];
            c.cols = own.clone();
            c.qualified = own.clone();
        }
    }
    out
}

/// The input columns (`$N`) a Sort, Incremental Sort or Merge Append orders by, when
/// each key is one (none when a key is an expression). A select list projected over
/// them leaves out the ones it does not select, which stay resjunk entries of its
/// target list (`make_sort_input_target`); a Merge Append's keys name those entries
/// of its own target list (show_merge_append_keys: `Sort Key: h.grp` under `Output:
/// h.id, h.grp`).
fn resjunk_sort_keys(sort: &ExplainNode) -> Vec<usize> {
    if sort.node_type == "Limit" {
        // A Limit returns its input's rows: the Sort's below it.
        let input = sort.children.iter().filter(|c| !is_init_plan(c)).collect::<Vec<_>>();
        return match input.as_slice() {
            [only] => resjunk_sort_keys(only),
            _ => vec![],
        };
    }
    if let Some(keys) = sort.detail(SORT_OUTPUTS) {
        return keys.split(',').filter_map(|k| k.parse().ok()).collect();
    }
    if !matches!(sort.node_type.as_str(), "Sort" | "Incremental Sort" | "Merge Append") {
        return vec![];
    }
    let Some(keys) = sort.detail("Sort Key") else { return vec![] };
    let mut out = vec![];
    for key in keys.split(", ") {
        match input_ref(key.strip_suffix(" DESC").unwrap_or(key)) {
            Some(k) => out.push(k),
            None => return vec![],
        }
    }
    out
}

/// The input columns (`$N`) of an Aggregate or a pushed-down grouping's foreign scan
/// that are its GROUP BY keys ([`GROUP_OUTPUTS`]), under a Limit, a Sort or a Result
/// that only filters (HAVING) too: they return their input's columns.
fn resjunk_group_keys(input: &ExplainNode) -> Vec<usize> {
    let filters = input.node_type == "Result" && input.detail("Output").is_none() && folds_into_child(input);
    if matches!(input.node_type.as_str(), "Limit" | "Sort" | "Incremental Sort") || filters {
        let below = input.children.iter().filter(|c| !is_init_plan(c)).collect::<Vec<_>>();
        return match below.as_slice() {
            [only] => resjunk_group_keys(only),
            _ => vec![],
        };
    }
    input.detail(GROUP_OUTPUTS).map_or(vec![], |keys| keys.split(',').filter_map(|k| k.parse().ok()).collect())
}

/// A scan's own columns as its quals name them, each marked as qualifiable with the
/// relation's alias (`resolve_qualifiers` keeps or drops the prefix); an expression
/// or constant as it is.
fn qual_cols(n: &ExplainNode) -> Vec<String> {
    let alias = n.alias().unwrap_or_default().to_string();
    n.details
        .iter()
        .filter(|(k, _)| k == "Output")
        .map(|(_, c)| match c.starts_with('(') || is_constant_text(c) {
            true => c.clone(),
            false => qualifiable(&alias, c),
        })
        .collect()
}

/// A pushed-down join's detail naming one of its relations' partitionwise parent:
/// `alias<TAB>parent` (not printed; `partition_parents` reads it).
pub const PAIR_PARENT: &str = "Pair Parent";

/// For an Append or Merge Append over a partitioned table's partitions: its first
/// scan's alias and the parent's name; over a partitionwise join's pairs, those of
/// each scan of the first pair. None when the first member reads no partition.
fn partition_parents(n: &ExplainNode) -> Option<Vec<(String, String)>> {
    if !matches!(n.node_type.as_str(), "Append" | "Merge Append") {
        return None;
    }
    fn collect(c: &ExplainNode, out: &mut Vec<(String, String)>) {
        // A pair pushed to its server as one Foreign Scan: each relation's alias and
        // its parent's (PAIR_PARENT details).
        for (_, v) in c.details.iter().filter(|(k, _)| k == PAIR_PARENT) {
            if let Some((alias, parent)) = v.split_once('\t') {
                out.push((alias.to_string(), parent.to_string()));
            }
        }
        if c.is_scan() {
            if let (Some(alias), Some(parent)) = (c.alias(), c.detail("Parent")) {
                out.push((alias.to_string(), parent.to_string()));
            }
        } else if c.is_join() {
            c.children.iter().for_each(|k| collect(k, out));
        } else if let Some(k) = c.children.first() {
            collect(k, out);
        }
    }
    let mut out = vec![];
    collect(n.children.first()?, &mut out);
    (!out.is_empty()).then_some(out)
}

/// A partition member's column as its Append returns it: each member's alias renamed
/// to its parent's ([`partition_parents`]).
fn as_parents(parents: &[(String, String)], s: &str) -> String {
    parents.iter().fold(s.to_string(), |s, (alias, parent)| {
        rename_qualifier(&s, &format!("{}.", quote_identifier(alias)), &format!("{}.", quote_identifier(parent)))
    })
}

/// `s` with each qualifier `from` (`a_1.`) that starts a name replaced by `to`.
fn rename_qualifier(s: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(from) {
        let starts_name = rest[..i].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '"'));
        out.push_str(&rest[..i]);
        out.push_str(if starts_name { to } else { from });
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}

/// Whether output columns are qualified: PostgreSQL qualifies them when its range
/// table has more than one entry (several relations, or a partitioned table).
fn qualified(n: &ExplainNode) -> bool {
    fn any_qualify(n: &ExplainNode) -> bool {
        n.detail("Qualify").is_some() || n.children.iter().any(any_qualify)
    }
    several_relations(n) || any_qualify(n)
}

/// The tree with its details as the page shows them: `$N` resolved to column names,
/// Output as the resolved columns, the keys only EXPLAIN interprets left out (but
/// "Server"). Not folded: the page shows every node the executor runs.
pub fn with_resolved_details(root: &ExplainNode) -> ExplainNode {
    let outputs = page_outputs(root);
    fn walk(n: &ExplainNode, o: &Outputs) -> ExplainNode {
        let opts = ExplainOptions { verbose: true, counters: false };
        let mut details = Vec::new();
        if shows_output(n) && !o.cols.is_empty() {
            details.push(("Output".to_string(), unmark(&o.cols.join(", "))));
        }
        details.extend(properties(n, o, &opts));
        if let Some(s) = n.detail("Server") {
            details.push(("Server".into(), s.to_string()));
        }
        let children = n.children.iter().zip(&o.children).map(|(c, co)| walk(c, co)).collect();
        ExplainNode { details, children, ..n.clone() }
    }
    walk(root, &outputs)
}

thread_local! {
    /// The last tree [`with_resolved_details`] resolved, and its outputs: the page asks
    /// for the same plan at every step, with new counters only, and resolving the
    /// columns was most of a step's work.
    static PAGE_OUTPUTS: std::cell::RefCell<Option<(ExplainNode, std::rc::Rc<Outputs>)>> =
        const { std::cell::RefCell::new(None) };
}

/// `resolve_outputs` of `root` for the page, kept while the tree keeps everything they
/// are computed from ([`same_shape`]: all but the counters).
fn page_outputs(root: &ExplainNode) -> std::rc::Rc<Outputs> {
    PAGE_OUTPUTS.with(|cell| {
        let mut last = cell.borrow_mut();
        if let Some((tree, outputs)) = last.as_ref() {
            if same_shape(tree, root) {
                return outputs.clone();
            }
        }
        let outputs = std::rc::Rc::new(resolve_outputs(root, qualified(root)));
        *last = Some((root.clone(), outputs.clone()));
        outputs
    })
}

/// Whether two trees agree in every field the columns are resolved from: all but
/// `instr` and `timed`, which `resolve_outputs` does not read.
fn same_shape(a: &ExplainNode, b: &ExplainNode) -> bool {
    a.id == b.id
        && a.node_type == b.node_type
        && a.async_capable == b.async_capable
        && a.strategy == b.strategy
        && a.relation == b.relation
        && a.parent_relationship == b.parent_relationship
        && a.details == b.details
        && a.children.len() == b.children.len()
        && a.children.iter().zip(&b.children).all(|(x, y)| same_shape(x, y))
}

/// The tree as PostgreSQL prints it, with every node's output resolved:
/// - a Result node (our projection and filter node; PostgreSQL evaluates quals and
///   target lists inside the node below) is folded into its child: its filter becomes
///   the child's `Filter:` with `Rows Removed by Filter:`, its target list the child's
///   Output, its row count the child's;
/// - a Hash Join's inner child goes under a `Hash` node, as PostgreSQL's plans have it.
/// `verbose`: a scan's Filter names its columns with the relation's alias, as
/// PostgreSQL's `show_scan_qual` does under VERBOSE (with several relations always).
fn as_postgres_prints(root: &ExplainNode, verbose: bool) -> (ExplainNode, Outputs) {
    let prefix = qualified(root);
    let root = project_below_sort(root.clone());
    let outputs = resolve_outputs(&root, prefix);
    let (root, mut outputs) = fold(root, outputs, verbose);
    use_physical_tlists(&root, &mut outputs, TlistFlags::Exact, prefix);
    project_in_members(&root, &mut outputs);
    let mut orders = vec![];
    collect_tlist_orders(&root, &mut orders);
    if !orders.is_empty() {
        order_tlists(&root, &mut outputs, &orders, false);
    }
    (root, outputs)
}

/// The final target list under a Sort, as `grouping_planner` places it: PostgreSQL
/// computes the select list below the Sort (`make_sort_input_target`: the sort input's
/// target is the final one, each sort expression not in the select list added as a
/// resjunk column), in the Sort's input when that node can project
/// (`is_projection_capable_path`; over a partitioned table in each partition's scan,
/// `apply_scanjoin_target_to_paths`). The Sort and every node above then read those
/// columns, printed in parentheses where they are computed (`Output: h.id,
/// ((h.amount * '2'::numeric))`, `($0)`). The sandbox sorts first and projects in a
/// Result above the Sort (`planner::finish`); printed, that Result goes under the Sort,
/// with the Sort's keys renumbered over its columns, so `fold` folds it into the
/// node that computes it. The InitPlans stay at the top (the Sort) and the Sort keeps
/// the Result's id (the estimate it printed with before), the moved Result its input's.
/// Nothing is moved when the input cannot project (an Append of a UNION ALL gets a
/// Result of its own in PostgreSQL), nor under an Incremental Sort.
fn project_below_sort(mut n: ExplainNode) -> ExplainNode {
    n.children = std::mem::take(&mut n.children).into_iter().map(project_below_sort).collect();
    let Some((targets, keys)) = sort_input_target(&n) else { return n };
    let mut r = n;
    let subplan_name = r.detail("Subplan Name").map(str::to_string);
    let at = r.children.iter().position(|c| !is_init_plan(c)).expect("one input");
    let mut sort = r.children.remove(at);
    // The Result's InitPlans belong to the top node; its SubPlans (a select list's
    // correlated subqueries) to the node that evaluates them.
    let (inits, subplans): (Vec<ExplainNode>, Vec<ExplainNode>) =
        r.children.into_iter().partition(|c| c.parent_relationship.as_deref() == Some("InitPlan"));
    let input_at = sort.children.iter().position(|c| !is_init_plan(c)).expect("one input");
    let input = sort.children.remove(input_at);
    let mut details: Vec<(String, String)> =
        r.details.into_iter().filter(|(k, _)| k != "Output" && k != "Subplan Name").collect();
    details.extend(targets.into_iter().map(|t| ("Output".to_string(), t)));
    let mut children = vec![input];
    children.extend(subplans);
    let project = ExplainNode {
        id: children[0].id,
        node_type: "Result".into(),
        async_capable: false,
        strategy: None,
        relation: None,
        parent_relationship: children[0].parent_relationship.clone(),
        details,
        instr: r.instr,
        timed: r.timed,
        children,
    };
    sort.children.insert(input_at, project);
    sort.children.extend(inits);
    for (k, v) in sort.details.iter_mut() {
        if k == "Sort Key" {
            *v = keys.clone();
        }
    }
    if let Some(name) = subplan_name {
        sort.details.insert(0, ("Subplan Name".into(), name));
    }
    sort.id = r.id;
    sort.parent_relationship = r.parent_relationship;
    sort
}

/// For a select-list Result directly over a Sort whose input can project: the target
/// list to compute below the Sort (the Result's, then the sort expressions it lacks)
/// and the Sort's keys over it. None for any other node.
fn sort_input_target(r: &ExplainNode) -> Option<(Vec<String>, String)> {
    if !folds_into_child(r) || r.detail("Filter").is_some() || r.detail("Output").is_none() {
        return None;
    }
    let sort = r.children.iter().find(|c| !is_init_plan(c))?;
    if sort.node_type != "Sort" || sort.children.iter().filter(|c| !is_init_plan(c)).count() != 1 {
        return None;
    }
    let input = sort.children.iter().find(|c| !is_init_plan(c))?;
    let mut targets: Vec<String> = r.details.iter().filter(|(k, _)| k == "Output").map(|(_, v)| v.clone()).collect();
    if !can_project(input, &targets) {
        return None;
    }
    let mut keys = Vec::new();
    for key in split_top_level(sort.detail("Sort Key")?) {
        let (expr, dir) = match key.strip_suffix(" DESC") {
            Some(e) => (e, " DESC"),
            None => (key, ""),
        };
        // The sort clause's target entry (its sortgroupref), else a resjunk one.
        let at = match targets.iter().position(|t| t == expr) {
            Some(i) => i,
            None => {
                targets.push(expr.to_string());
                targets.len() - 1
            }
        };
        keys.push(format!("${at}{dir}"));
    }
    Some((targets, keys.join(", ")))
}

/// `is_projection_capable_plan` for the nodes the sandbox puts under a Sort: scans,
/// joins, aggregates, Results; an Append only over a partitioned table's scans, whose
/// members project (`project_in_members`), or over a partitionwise join's pairs when
/// the target list only selects columns (each pair's join passes them). A foreign
/// scan of a join or an upper relation is left alone (its target list is the remote
/// query's).
fn can_project(n: &ExplainNode, targets: &[String]) -> bool {
    if n.detail("Relations").is_some() {
        return false;
    }
    if n.is_scan() || n.is_join() || matches!(n.node_type.as_str(), "Aggregate" | "Result") {
        return true;
    }
    let members_project = n.children.first().is_some_and(|c| c.is_scan() && c.detail("Parent").is_some())
        || targets.iter().all(|t| input_ref(t).is_some());
    partition_parents(n).is_some() && !n.children.iter().any(is_init_plan) && members_project
}

/// A list as `sort_key_text` joins it: split at the `, ` that are outside
/// parentheses and quotes.
fn split_top_level(s: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut quote, mut start) = (Vec::new(), 0i32, None::<char>, 0);
    let bytes = s.as_bytes();
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'') | (None, '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ',') if depth == 0 && bytes.get(i + 1) == Some(&b' ') => {
                parts.push(&s[start..i]);
                start = i + 2;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// `apply_scanjoin_target_to_paths` (planner.c) over a partitioned table: the final
/// target list, when it is not the Append's own output, is computed by each
/// partition's scan (`Output: h_1.id, length(h_1.name)`), not above the Append. The
/// sandbox projects in a Result above the Append, which EXPLAIN folds into it: its
/// columns are printed as each member scan's, named after the member.
fn project_in_members(n: &ExplainNode, o: &mut Outputs) {
    for (c, co) in n.children.iter().zip(o.children.iter_mut()) {
        project_in_members(c, co);
    }
    if partition_parents(n).is_none() {
        return;
    }
    let Some(first) = n.children.first() else { return };
    let member_names = |c: &ExplainNode| -> Option<(String, String)> {
        let (alias, parent) = (c.alias()?, c.detail("Parent")?);
        Some((format!("{}.", quote_identifier(alias)), format!("{}.", quote_identifier(parent))))
    };
    let Some((alias, parent)) = member_names(first) else { return };
    // What the Append shows when it only passes its first member's rows on (its
    // references to them, parenthesized where the member computes the column).
    let own: Vec<String> = o.children[0].refs(false).iter().map(|s| rename_qualifier(s, &alias, &parent)).collect();
    if own == o.cols {
        return;
    }
    for (c, co) in n.children.iter().zip(o.children.iter_mut()) {
        if let (true, Some((alias, parent))) = (c.is_scan(), member_names(c)) {
            co.physical = Some(o.cols.iter().map(|s| rename_qualifier(s, &parent, &alias)).collect());
        }
    }
}

/// A relation's target-list order ([`TLIST_ORDER`]) under each name its columns are
/// printed with: the scan's alias, and its partitioned parent's.
struct RelOrder {
    names: Vec<String>,
    rank: usize,
    columns: Vec<String>,
    /// Each column's place in the whole order and its attr_needed ([`TLIST_NEEDED`]).
    needed: Vec<(usize, u64)>,
}

/// `attr_needed`'s bit for the query's upper levels (`coordinator_sql::tlist_order`).
const NEEDED_ABOVE: u64 = 1 << 63;

fn collect_tlist_orders(n: &ExplainNode, out: &mut Vec<RelOrder>) {
    if let Some(v) = n.detail(TLIST_ORDER) {
        let mut parts = v.split('\t');
        let rank = parts.next().and_then(|r| r.parse().ok()).unwrap_or(usize::MAX);
        let mut names: Vec<String> = n.alias().into_iter().map(quote_identifier).collect();
        names.extend(n.detail("Parent").map(quote_identifier));
        let columns: Vec<String> = parts.map(quote_identifier).collect();
        let needed: Vec<(usize, u64)> = n
            .detail(TLIST_NEEDED)
            .map(|v| {
                v.split('\t')
                    .filter_map(|e| {
                        let (at, bits) = e.split_once(':')?;
                        Some((at.parse().ok()?, bits.parse().ok()?))
                    })
                    .collect()
            })
            .unwrap_or_default();
        // Without a full attr_needed (an older tree), nothing is filtered.
        let needed = if needed.len() == columns.len() { needed } else { vec![] };
        out.push(RelOrder { names, rank, columns, needed });
    }
    n.children.iter().filter(|c| !is_init_plan(c)).for_each(|c| collect_tlist_orders(c, out));
}

/// The relations (their bits, by rank) whose scans are under `n`: a join relation's
/// relids. None when a scan under it is not a marked base relation's (a pushed-down
/// join, a subquery): the set is then not known.
fn join_relids(n: &ExplainNode) -> Option<u64> {
    if n.detail("Relations").is_some() && n.children.is_empty() {
        return None;
    }
    if n.is_scan() {
        let rank: usize = n.detail(TLIST_ORDER)?.split('\t').next()?.parse().ok()?;
        return (rank < 63).then_some(1u64 << rank);
    }
    let mut bits = 0;
    for c in n.children.iter().filter(|c| !is_init_plan(c)) {
        bits |= join_relids(c)?;
    }
    Some(bits)
}

/// The join's target list as PostgreSQL's `build_joinrel_tlist` makes it, when every
/// column of `cols` is a marked relation's: the columns needed beyond the join
/// relation's own relations (`bms_nonempty_difference(attr_needed, relids)`: by the
/// upper levels, or by a clause with a relation not yet joined), in its relations'
/// order (`under_join`), or at the top of the join tree in the final target list's
/// order (the scan/join target, `apply_scanjoin_target_to_paths`). None when a column
/// is not a marked relation's, or the join's relations are not known.
fn join_tlist(n: &ExplainNode, cols: &[String], orders: &[RelOrder], under_join: bool) -> Option<Vec<String>> {
    let relids = join_relids(n)?;
    let mut keyed: Vec<((usize, usize), &String)> = vec![];
    for c in cols {
        let (alias, column) = c.split_once('.')?;
        let rel = orders.iter().find(|r| r.names.iter().any(|a| a == alias))?;
        let at = rel.columns.iter().position(|x| x == column)?;
        let &(place, needed) = rel.needed.get(at)?;
        if needed & NEEDED_ABOVE == 0 && needed & !relids == 0 {
            continue;
        }
        let key = if under_join { (rel.rank, at) } else { (place, 0) };
        if keyed.iter().any(|(k, _)| *k == key) {
            // A column twice: a select list projected in the join, printed as it is.
            return None;
        }
        keyed.push((key, c));
    }
    crate::types::sort_short_by_key(&mut keyed, |(k, _)| *k);
    Some(keyed.into_iter().map(|(_, c)| c.clone()).collect())
}

/// Where PostgreSQL's target lists put a printed column `alias.column`: its relation's
/// rank and its place in the relation's order. None for anything else (an expression).
fn tlist_place(col: &str, orders: &[RelOrder]) -> Option<(usize, usize)> {
    let (alias, column) = col.split_once('.')?;
    let rel = orders.iter().find(|r| r.names.iter().any(|a| a == alias))?;
    Some((rel.rank, rel.columns.iter().position(|c| c == column)?))
}

/// `cols` in PostgreSQL's target-list order, when every one is a column of a known
/// relation (else None: a projection is printed as it is).
fn in_tlist_order(cols: &[String], orders: &[RelOrder]) -> Option<Vec<String>> {
    let mut keyed: Vec<((usize, usize), &String)> =
        cols.iter().map(|c| tlist_place(c, orders).map(|k| (k, c))).collect::<Option<_>>()?;
    crate::types::sort_short_by_key(&mut keyed, |(k, _)| *k);
    Some(keyed.into_iter().map(|(_, c)| c.clone()).collect())
}

/// The `Output:` of a join's scans and joins in PostgreSQL's column order
/// (`coordinator_sql::tlist_order`), where the sandbox's own order (table order,
/// outer side first) differs: a scan's columns in its relation's reltarget order
/// (unless it prints its physical target list), a join's as [`join_tlist`] makes it
/// (only the columns needed above it, `build_joinrel_tlist`), a partitioned table's
/// Append's in its parent's order, a node that passes its input's rows on (Sort, Hash,
/// Materialize, Limit, a gating Result) as its input prints them. A node that
/// projects (its own Output entries: the query's select list) is left as it is, and so
/// is the topmost join (`under_join` false) when the select list projected in it has
/// an expression or a column twice.
fn order_tlists(n: &ExplainNode, o: &mut Outputs, orders: &[RelOrder], under_join: bool) {
    for (c, co) in n.children.iter().zip(o.children.iter_mut()) {
        if !is_init_plan(c) {
            order_tlists(c, co, orders, under_join || n.is_join());
        }
    }
    if o.physical.is_none() && partition_parents(n).is_some() {
        // An Append over a partitioned table's members returns the parent's columns in
        // its reltarget's order (not printed; a Sort, Hash or Materialize above prints
        // them so).
        o.physical = in_tlist_order(&o.cols, orders);
        return;
    }
    if o.physical.is_some() || !shows_output(n) {
        return;
    }
    if n.is_scan() {
        // A scan's own columns (its Output entries name them) in its relation's order.
        o.physical = in_tlist_order(&o.cols, orders);
    } else if n.is_join() && n.detail("Output").is_none() {
        // A join (whatever the sandbox's join returns, its inputs' rows or a
        // projection of their columns): the join relation's target list. At the top
        // of the join tree, a projection of plain columns in the final target list's
        // order is PostgreSQL's scan/join target too.
        o.physical = join_tlist(n, &o.cols, orders, under_join);
    } else if n.detail("Output").is_some() {
        // A projection (the select list, an aggregate's results): as it is.
    } else if let Some(first) = o.children.first() {
        let passes_on =
            matches!(n.node_type.as_str(), "Sort" | "Incremental Sort" | "Hash" | "Materialize" | "Memoize" | "Limit")
                || (n.node_type == "Result" && n.detail("One-Time Filter").is_some());
        if passes_on && first.cols == o.cols {
            o.physical = first.physical.clone();
        }
    }
}

/// What a plan node asks of its input's target list (createplan.c's `CP_*` flags, as
/// `create_plan_recurse` passes them down).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TlistFlags {
    /// `CP_EXACT_TLIST`: exactly the columns asked for (the plan's top, an Append's or
    /// a Merge Append's members, a subplan's top, ModifyTable's input).
    Exact,
    /// `CP_SMALL_TLIST`: as few columns as possible, for a node that stores its input
    /// (Sort, Incremental Sort, Hash, Materialize).
    Small,
    /// 0 or `CP_LABEL_TLIST`: any superset will do (a Nested Loop's sides, a Hash
    /// Join's outer side, a Merge Join's unsorted side, an Aggregate's input).
    Any,
}

/// The flags `create_plan_recurse` passes to a node's input, given the flags it got.
fn input_flags(parent: &ExplainNode, child: &ExplainNode, got: TlistFlags) -> TlistFlags {
    if is_init_plan(child) {
        // A subplan is planned on its own; its top gives an exact target list.
        return TlistFlags::Exact;
    }
    match parent.node_type.as_str() {
        // create_sort_plan (flags | CP_SMALL_TLIST), create_incrementalsort_plan,
        // create_material_plan, create_hashjoin_plan's inner side.
        "Sort" | "Incremental Sort" | "Materialize" | "Hash" | "Memoize" => TlistFlags::Small,
        // create_hashjoin_plan's outer side (CP_SMALL_TLIST only with several batches,
        // which the sandbox's hash joins never need), create_nestloop_plan's sides,
        // create_mergejoin_plan's sides (a side it sorts is under that Sort).
        "Hash Join" | "Nested Loop" | "Merge Join" => TlistFlags::Any,
        // create_agg_plan and create_group_plan: CP_LABEL_TLIST.
        "Aggregate" | "Group" => TlistFlags::Any,
        // create_limit_plan: flags | CP_LABEL_TLIST, the caller's demand stands.
        "Limit" => got,
        // A gating Result projects: create_scan_plan clears the scan's flags when it
        // has pseudoconstant quals ("no requirements on the child's tlist").
        "Result" if parent.detail("One-Time Filter").is_some() => TlistFlags::Any,
        // Append and Merge Append (CP_EXACT_TLIST for each member), ModifyTable,
        // Unique, SetOp, Subquery Scan, and whatever else: exact, as asked.
        _ => TlistFlags::Exact,
    }
}

/// PostgreSQL's `use_physical_tlist` (createplan.c), applied to the printed plan: a scan
/// of a base relation (a table or a foreign table, not a partition) whose caller
/// accepts any superset of the columns it needs returns the relation's whole row, so
/// EXPLAIN prints every column (`Output: f.id, f.cat, f.val, f.score`; postgres_fdw
/// fetches the needed ones, the others are NULL). Not when the scan projects an
/// expression (its target list is then exactly the expressions), nor for a foreign
/// modify's scan (it returns `ctid` and the whole row), nor an Index Only Scan (the
/// executor pushes no physical target list for those: [`PHYSICAL_TLIST`]).
fn use_physical_tlists(n: &ExplainNode, o: &mut Outputs, flags: TlistFlags, prefix: bool) {
    physical_tlists_below(n, o, flags, prefix, false);
}

/// [`use_physical_tlists`] over `n`, which got `flags`; `unique_side`: `n` is on a
/// join's unique-ified side ([`UNIQUE_SIDE`]) at or above its unique path (under the
/// Sort, Hash or Materialize the join put over it). That path's HashAggregate or
/// Unique is `create_unique_plan`'s, which passes the flags it got to its input
/// ("Unique doesn't project, so tlist requirements pass through"): under a Sort or a
/// Hash (CP_SMALL_TLIST) its scan returns only the key, where an aggregate's input
/// (CP_LABEL_TLIST) may return the relation's whole row.
fn physical_tlists_below(n: &ExplainNode, o: &mut Outputs, flags: TlistFlags, prefix: bool, unique_side: bool) {
    let physical: Vec<&str> = n.details.iter().filter(|(k, _)| k == PHYSICAL_TLIST).map(|(_, v)| v.as_str()).collect();
    if flags == TlistFlags::Any && n.is_scan() && !physical.is_empty() && n.detail(ROW_MARK_OUTPUT).is_none() {
        let alias = n.alias().map(quote_identifier).unwrap_or_default();
        let name = |c: &str| match prefix {
            true => format!("{alias}.{}", quote_identifier(c)),
            false => quote_identifier(c),
        };
        let whole: Vec<String> = physical.iter().map(|c| name(c)).collect();
        // Only plain columns of the relation: no projection is needed.
        if o.cols.iter().all(|c| whole.contains(c)) {
            o.physical = Some(whole);
        }
    }
    for (i, (c, co)) in n.children.iter().zip(o.children.iter_mut()).enumerate() {
        if n.node_type == "Merge Join" && c.node_type == "Materialize" {
            // create_mergejoin_plan's materialize_inner: the Material node is made over
            // the inner plan, which was made with the join's own flags (0), not
            // through create_material_plan's disuse_physical_tlist.
            for (m, mo) in c.children.iter().zip(co.children.iter_mut()) {
                use_physical_tlists(m, mo, TlistFlags::Any, prefix);
            }
            // It stores and returns its input's rows as they are.
            if let Some(first) = co.children.first().filter(|f| f.cols == co.cols) {
                co.physical = first.physical.clone();
            }
            continue;
        }
        let unique_path = unique_side && matches!(n.node_type.as_str(), "Aggregate" | "Unique");
        let child_flags = if unique_path { flags } else { input_flags(n, c, flags) };
        // The join's unique side, and below it the nodes the join put over the path.
        let side = match n.detail(UNIQUE_SIDE) {
            Some("outer") => Some(0),
            Some("inner") => Some(1),
            _ => None,
        };
        let below = (n.is_join() && side == Some(i))
            || (unique_side && matches!(n.node_type.as_str(), "Sort" | "Hash" | "Materialize"));
        physical_tlists_below(c, co, child_flags, prefix, below);
    }
}

fn fold(n: ExplainNode, o: Outputs, verbose: bool) -> (ExplainNode, Outputs) {
    // A node's InitPlans (the last children) stay with the node it folds into: the
    // node PostgreSQL attaches them to.
    let (n, o, inits) = split_init_plans(n, o);
    let (mut folded, mut out) = fold_node(n, o, verbose);
    // Folded into a scan, the Result's subplans (its select list's) come before the
    // scan's own (its Filter's): a scan node initializes its projection before its
    // qual (ExecInitSeqScan), and EXPLAIN lists SubPlans in initialization order.
    let mut at = folded.children.len();
    while at > 0 && is_init_plan(&folded.children[at - 1]) && out.children.len() == folded.children.len() {
        at -= 1;
    }
    for (c, co) in inits {
        let (c, co) = fold(c, co, verbose);
        folded.children.insert(at, c);
        out.children.insert(at, co);
        at += 1;
    }
    (folded, out)
}

/// An InitPlan or a SubPlan: a subplan attached to the node, not its input.
fn is_init_plan(n: &ExplainNode) -> bool {
    matches!(n.parent_relationship.as_deref(), Some("InitPlan" | "SubPlan"))
}

/// The node without its InitPlan children, and those children with their outputs.
fn split_init_plans(mut n: ExplainNode, mut o: Outputs) -> (ExplainNode, Outputs, Vec<(ExplainNode, Outputs)>) {
    let mut inits = vec![];
    while n.children.last().is_some_and(is_init_plan) && o.children.len() == n.children.len() {
        let (c, co) = (n.children.pop().expect("a child"), o.children.pop().expect("its outputs"));
        inits.insert(0, (c, co));
    }
    (n, o, inits)
}

/// The children in the order PostgreSQL prints them: InitPlans, the inputs, then
/// SubPlans (ExplainNode).
fn print_order<'a>(n: &'a ExplainNode, o: &'a Outputs) -> Vec<(&'a ExplainNode, &'a Outputs)> {
    let pairs: Vec<(&ExplainNode, &Outputs)> = n.children.iter().zip(&o.children).collect();
    let rank = |c: &ExplainNode| match c.parent_relationship.as_deref() {
        Some("InitPlan") => 0,
        Some("SubPlan") => 2,
        _ => 1,
    };
    let mut ordered = pairs;
    crate::types::sort_short_by_key(&mut ordered, |(c, _)| rank(c));
    ordered
}

/// A column of a pushed-down aggregate (`avg(val)` of an upper foreign scan), written
/// by the node as `qualifiable(alias, column)`: qualified with the alias where EXPLAIN
/// qualifies columns (several relations in the plan), bare otherwise, as PostgreSQL
/// prints `(avg(f_1.val))` beside an InitPlan and `(avg(val))` alone.
pub fn qualifiable(alias: &str, column: &str) -> String {
    format!("{QUAL_OPEN}{}.{QUAL_CLOSE}{}", quote_identifier(alias), quote_identifier(column))
}

const QUAL_OPEN: char = '\u{E001}';
const QUAL_CLOSE: char = '\u{E002}';

/// Keeps (`prefix`) or drops the qualifiers `qualifiable` wrote.
fn resolve_qualifiers(s: &str, prefix: bool) -> String {
    if !s.contains(QUAL_OPEN) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut inside = false;
    for c in s.chars() {
        match c {
            QUAL_OPEN => inside = true,
            QUAL_CLOSE => inside = false,
            c if !inside || prefix => out.push(c),
            _ => {}
        }
    }
    out
}

/// An InitPlan's value in EXPLAIN: `$N` (the marker keeps `substitute` from taking
/// it for an input column, see `plan::PARAM_MARK`).
fn unmark(s: &str) -> String {
    s.replace(crate::plan::PARAM_MARK, "$")
}

fn fold_node(mut n: ExplainNode, o: Outputs, verbose: bool) -> (ExplainNode, Outputs) {
    let mut kids = Vec::new();
    let mut kid_outputs = Vec::new();
    for (c, co) in std::mem::take(&mut n.children).into_iter().zip(o.children) {
        let (c, co) = fold(c, co, verbose);
        kids.push(c);
        kid_outputs.push(co);
    }
    if result_folds(&n, kids.len()) {
        let mut child = kids.pop().expect("one child");
        let child_out = kid_outputs.pop().expect("one child");
        if let Some(f) = n.detail("Filter") {
            let (inst, out) = (child.instr.finished(), n.instr.finished());
            // show_instrumentation_count: the total over the loops, printed (TEXT: when
            // not zero) divided by the loops with `%.0f` (halves to even).
            let removed = inst.ntuples.saturating_sub(out.ntuples);
            let per_loop = format!("{:.0}", removed as f64 / inst.nloops.max(1) as f64);
            // Before a foreign scan's Relations / Remote SQL, after everything else;
            // PostgreSQL's TEXT format prints the removed rows only when there are some.
            let at = child
                .details
                .iter()
                .position(|(k, _)| matches!(k.as_str(), "Relations" | "Remote SQL" | "Heap Fetches" | "Heap Blocks"))
                .unwrap_or(child.details.len());
            // A foreign or local modify's scan outputs the modify's row (ROW_MARK_OUTPUT),
            // not the columns its qual reads: the qual names its own columns, then.
            let row_marked = child.details.iter().any(|(k, _)| k == ROW_MARK_OUTPUT);
            // show_scan_qual: a scan's quals are qualified with VERBOSE only (but a
            // Subquery Scan's, always); show_upper_qual qualifies the others' where the
            // range table has several entries.
            let own_quals = child.is_scan() && (verbose || row_marked || child.node_type != "Subquery Scan");
            let f = match own_quals {
                true => resolve_qualifiers(&substitute(f, &qual_cols(&child)), verbose),
                false => substitute(f, child_out.shown(verbose)),
            };
            if child.is_join() && child.join_type() == "Inner" {
                // An inner join's other conditions are its Join Filter (create_*join_plan
                // treats every clause of an inner join alike), after its own; over an
                // outer join they are WHERE's, a Filter.
                join_filter(&mut child, f, removed);
            } else {
                let mut props = vec![("Filter".to_string(), f)];
                if removed > 0 {
                    props.push(("Rows Removed by Filter".to_string(), per_loop));
                }
                child.details.splice(at..at, props);
            }
            child.instr.ntuples = n.instr.ntuples;
        }
        // The Result's target list, or its input's passed as they are.
        let projects = n.detail("Output").is_some() || n.detail(EMPTY_TLIST).is_some();
        let own = if projects { Outputs { children: child_out.children, ..o } } else { child_out };
        // An InitPlan's name stays with the node it is printed as.
        if let Some(name) = n.detail("Subplan Name") {
            child.details.insert(0, ("Subplan Name".into(), name.to_string()));
        }
        child.parent_relationship = n.parent_relationship;
        // The Result's estimate is the folded node's (its quals and target list are
        // PostgreSQL's, inside that node): estimates are looked up by id.
        child.id = n.id;
        return (child, own);
    }
    if n.node_type == "Hash Join" && kids.len() == 2 {
        // The table's figures are the Hash's (show_hash_info).
        let buckets = n.details.iter().position(|(k, _)| k == "Buckets").map(|i| n.details.remove(i));
        let unhashed = n.details.iter().position(|(k, _)| k == HASH_UNHASHED).map(|i| n.details.remove(i).1);
        let unhashed: u64 = unhashed.and_then(|v| v.parse().ok()).unwrap_or(0);
        let inner = kids.pop().expect("two children");
        let inner_out = kid_outputs.pop().expect("two children");
        let hash = ExplainNode {
            id: inner.id,
            node_type: "Hash".into(),
            async_capable: false,
            strategy: None,
            relation: None,
            parent_relationship: Some("Inner".into()),
            details: buckets.into_iter().collect(),
            timed: inner.timed,
            instr: Instrumentation { ntuples: inner.instr.ntuples.saturating_sub(unhashed), ..inner.instr.clone() },
            children: vec![ExplainNode { parent_relationship: Some("Outer".into()), ..inner }],
        };
        let passed = Outputs::passing(&[&inner_out], vec![]);
        let hash_out = Outputs { children: vec![inner_out], ..passed };
        kids.push(hash);
        kid_outputs.push(hash_out);
    }
    n.children = kids;
    (n, Outputs { children: kid_outputs, ..o })
}

/// Adds `f` to a join's Join Filter (ANDed after a Nested Loop's own equality), with
/// the rows it removed: `Rows Removed by Join Filter` is kept as the total over the
/// join's loops, as the Nested Loop keeps its own (`properties` divides it).
fn join_filter(join: &mut ExplainNode, f: String, total: u64) {
    match join.details.iter().position(|(k, _)| k == "Join Filter") {
        Some(i) => {
            let own = std::mem::take(&mut join.details[i].1);
            join.details[i].1 = format!("({own} AND {f})");
        }
        None => join.details.push(("Join Filter".into(), f)),
    }
    match join.details.iter_mut().find(|(k, _)| k == "Rows Removed by Join Filter") {
        Some((_, v)) => *v = (v.parse::<u64>().unwrap_or(0) + total).to_string(),
        None if total > 0 => join.details.push(("Rows Removed by Join Filter".into(), total.to_string())),
        None => {}
    }
}

/// Does the plan read more than one relation? (PostgreSQL qualifies column names in
/// VERBOSE output when its range table has more than one entry.)
fn several_relations(n: &ExplainNode) -> bool {
    // A pushed-down aggregate's scan (an upper relation: "Relations") reads one too.
    fn count(n: &ExplainNode) -> usize {
        // A Bitmap Index Scan names its index, not another relation.
        // An INSERT's target is an entry of its range table too (UPDATE and DELETE
        // scan theirs).
        let own = (n.is_scan() && n.node_type != "Bitmap Index Scan")
            || n.detail("Relations").is_some()
            || n.node_type == "Insert";
        own as usize + n.children.iter().map(count).sum::<usize>()
    }
    count(n) > 1
}

/// PostgreSQL prints no Output for Append and Merge Append.
fn shows_output(n: &ExplainNode) -> bool {
    // ModifyTable has only RETURNING's output (`Insert on …` without it has none).
    match n.node_type.as_str() {
        "Append" | "Merge Append" | "Bitmap Index Scan" => false,
        "Insert" | "Update" | "Delete" => n.detail("Output").is_some(),
        _ => true,
    }
}

/// The properties PostgreSQL prints for a node, in order, with `$N` resolved.
fn properties(n: &ExplainNode, o: &Outputs, opts: &ExplainOptions) -> Vec<(String, String)> {
    // Keys and quals are qualified under VERBOSE even over one relation (explain.c's
    // `useprefix` for show_sort_group_keys and show_upper_qual).
    let q = opts.verbose;
    // A Merge Append's keys name its own output (the partitioned parent's columns):
    // its members' columns as it returns them, before a select list folded into it
    // projects them (whose own order may differ: `$0` is the members' first).
    let input: Vec<String> = if n.node_type == "Merge Append" {
        match (partition_parents(n), o.children.first()) {
            (Some(parents), Some(first)) => first.refs(q).iter().map(|s| as_parents(&parents, s)).collect(),
            _ => o.shown(q).to_vec(),
        }
    } else if n.is_join() {
        // `$N` counts over the outer's outputs, then the inner's.
        o.children.iter().flat_map(|c| c.refs(q)).collect()
    } else {
        o.children.first().map(|c| c.refs(q)).unwrap_or_default()
    };
    // An Aggregate's Group Key is printed from its input's target list
    // (show_agg_keys: the outer plan's columns as that plan prints them).
    let group_input: Vec<String> = o.children.first().map(|c| c.shown(q).to_vec()).unwrap_or_default();
    n.details
        .iter()
        .filter(|(k, _)| match k.as_str() {
            "Output" | "Schema" | "Alias" | "Server" | "Qualify" | "Parent" | "JoinType" | "Partial Mode"
            | IMPLICIT_CAST | ROW_MARK_OUTPUT | TARGET_TABLE | TARGET_REMOTE_SQL | PAIR_PARENT | PHYSICAL_TLIST
            | TLIST_ORDER | TLIST_NEEDED | HASH_UNHASHED | EMPTY_TLIST | SORT_OUTPUTS | UNIQUE_SIDE | GROUP_OUTPUTS => {
                false
            }
            // TEXT prints it only with VERBOSE, and only when true (explain.c).
            "Remote SQL" | "Inner Unique" | "Batch Size" => opts.verbose,
            _ => true,
        })
        .map(|(k, v)| {
            // postgres_fdw prints Relations with or without VERBOSE, its relations
            // schema-qualified only with VERBOSE (postgresExplainForeignScan).
            if k == "Relations" && !opts.verbose {
                return (k.clone(), v.replace(&format!("({}.", quote_identifier(REMOTE_SCHEMA)), "("));
            }
            if matches!(k.as_str(), "Index Cond" | "Recheck Cond") {
                // Over the scan's own columns (a Bitmap Index Scan's are its heap
                // scan's), prefixed with VERBOSE only, as `show_scan_qual` prefixes
                // them: not its output, which under a DML's projection is (tableoid,
                // ctid).
                let cols = if n.node_type != "Bitmap Index Scan" { qual_cols(n) } else { o.cols.clone() };
                return (k.clone(), unmark(&resolve_qualifiers(&substitute(v, &cols), opts.verbose)));
            }
            // (`Heap Fetches` is printed as kept, the total over the loops: explain.c
            // prints `instrument->ntuples2` as it is.)
            if k == "Rows Removed by Join Filter" {
                // show_instrumentation_count: the node's total over its loops.
                let loops = n.instr.finished().nloops.max(1) as f64;
                return (k.clone(), format!("{:.0}", v.parse::<f64>().unwrap_or(0.0) / loops));
            }
            if k == "Group Key" && n.node_type == "Aggregate" {
                return (k.clone(), unmark(&substitute(v, &group_input)));
            }
            // A foreign modify's Remote SQL has parameters of its own, not inputs.
            let own_params =
                n.is_scan() || (matches!(n.node_type.as_str(), "Insert" | "Update" | "Delete") && k == "Remote SQL");
            (k.clone(), unmark(&if own_params { v.clone() } else { substitute(v, &input) }))
        })
        .collect()
}

// ---------------------------------------------------------------------------------
// TEXT.

fn title(n: &ExplainNode, opts: &ExplainOptions) -> String {
    let mut t = String::new();
    if n.async_capable {
        t.push_str("Async ");
    }
    // A partial aggregation's halves: `Partial HashAggregate`, `Finalize Aggregate`.
    if let Some(mode) = n.detail("Partial Mode") {
        t.push_str(mode);
        t.push(' ');
    }
    match (n.node_type.as_str(), n.strategy.as_deref()) {
        ("Aggregate", Some("Hashed")) => t.push_str("HashAggregate"),
        ("Aggregate", Some("Sorted")) => t.push_str("GroupAggregate"),
        // `Hash Left Join`, `Merge Full Join`, `Nested Loop Left Join`.
        (ty, _) if n.is_join() && n.join_type() != "Inner" => match ty.strip_suffix(" Join") {
            Some(method) => t.push_str(&format!("{method} {} Join", n.join_type())),
            None => t.push_str(&format!("{ty} {} Join", n.join_type())),
        },
        (ty, _) => t.push_str(ty),
    }
    // `Index Scan Backward using t_c_idx on t`: TEXT puts the direction and the index
    // in the title (JSON has them as "Scan Direction" and "Index Name").
    if n.detail("Scan Direction") == Some("Backward") {
        t.push_str(" Backward");
    }
    if let Some(index) = n.detail("Index Name") {
        t.push_str(" using ");
        t.push_str(&quote_identifier(index));
    }
    if let Some(r) = &n.relation {
        t.push_str(" on ");
        // A subquery's scan names its alias only (`Subquery Scan on "*SELECT* 1"`).
        // An index is named without its schema (ExplainIndexScanDetails).
        if opts.verbose && !n.schema().is_empty() && n.node_type != "Bitmap Index Scan" {
            t.push_str(&quote_identifier(n.schema()));
            t.push('.');
        }
        t.push_str(&quote_identifier(r));
        if let Some(a) = n.detail("Alias").filter(|a| *a != r) {
            t.push(' ');
            t.push_str(&quote_identifier(a));
        }
    }
    t
}

fn actual(i: &Instrumentation, timed: bool) -> String {
    if i.nloops == 0 {
        return "(never executed)".to_string();
    }
    if !timed {
        return format!("(actual rows={} loops={})", rows_per_loop(i), i.nloops);
    }
    format!(
        "(actual time={:.3}..{:.3} rows={} loops={})",
        per_loop(i.startup_ns, i.nloops),
        per_loop(i.total_ns, i.nloops),
        rows_per_loop(i),
        i.nloops
    )
}

fn is_remote(n: &ExplainNode) -> bool {
    n.node_type == "Foreign Scan"
}

/// Our counters: remote (every foreign scan) and async (async-capable ones).
fn counter_lines(n: &ExplainNode, i: &Instrumentation) -> Vec<String> {
    let r = &i.remote;
    let server = n.detail("Server").map(|s| format!("server={s} ")).unwrap_or_default();
    let mut lines = vec![format!(
        "Remote: {server}batches={} round trips={} bytes sent={} received={}",
        r.batches, r.round_trips, r.bytes_sent, r.bytes_received
    )];
    if n.async_capable {
        lines.push(format!("Async: requests={} waits={} wait time={:.3} ms", r.requests, r.waits, ms(r.wait_ns)));
    }
    lines
}

/// A node's estimate: its own, or for the Hash PostgreSQL puts under a Hash Join its
/// input's, all of it paid at startup (`create_hashjoin_plan` copies it).
fn estimate(n: &ExplainNode, costs: Option<&[Estimate]>) -> Option<Estimate> {
    Some(estimate_as_printed(&n.node_type, *costs?.get(n.id)?))
}

/// Whether EXPLAIN prints node `n` (with `inputs` children besides its InitPlans) as
/// part of its child: the sandbox's projecting or filtering Result over a node is that
/// node's target list and qual in PostgreSQL's plan. A gating Result (One-Time Filter)
/// is a node of its own in PostgreSQL's plan too.
fn result_folds(n: &ExplainNode, inputs: usize) -> bool {
    n.node_type == "Result" && inputs == 1 && n.detail("One-Time Filter").is_none()
}

/// Each executor node's estimate as EXPLAIN prints it, indexed by node id (the page's
/// plan tree shows the EXPLAIN text's figures): a Result EXPLAIN folds into its child
/// has none of its own and lends the child its estimate (the folded node is printed
/// with the Result's id, `fold_node`); `costs` indexed by node id.
pub fn printed_estimates(root: &ExplainNode, costs: &[Estimate]) -> Vec<Option<Estimate>> {
    fn walk(n: &ExplainNode, lent: Option<Estimate>, costs: &[Estimate], out: &mut Vec<Option<Estimate>>) {
        if out.len() <= n.id {
            out.resize(n.id + 1, None);
        }
        let inputs = n.children.iter().filter(|c| !is_init_plan(c)).count();
        let own = lent.or_else(|| costs.get(n.id).copied());
        let folds = result_folds(n, inputs);
        out[n.id] = if folds { None } else { own.map(|e| estimate_as_printed(&n.node_type, e)) };
        for c in &n.children {
            let lend = if folds && !is_init_plan(c) { own } else { None };
            walk(c, lend, costs, out);
        }
    }
    let mut out = vec![];
    walk(root, None, costs, &mut out);
    out
}

/// Each executor node's id as EXPLAIN prints it, indexed by node id: its own, or for a
/// Result EXPLAIN folds into its child (its Filter and Output are the child's, a
/// Foreign Scan's own qual and projection above all), the node it is printed in (the
/// first below that does not fold). PostgreSQL's names: an async request the sandbox
/// sends to such a Result is, in PostgreSQL, a request to the Foreign Scan
/// (execAsync.c: `areq->requestee` is the ForeignScanState).
pub fn printed_as(root: &ExplainNode) -> Vec<usize> {
    fn walk(n: &ExplainNode, out: &mut Vec<usize>) -> usize {
        if out.len() <= n.id {
            out.resize(n.id + 1, 0);
        }
        let inputs = n.children.iter().filter(|c| !is_init_plan(c)).count();
        let mut printed = n.id;
        for c in &n.children {
            let below = walk(c, out);
            if result_folds(n, inputs) && !is_init_plan(c) {
                printed = below;
            }
        }
        out[n.id] = printed;
        printed
    }
    let mut out = vec![];
    walk(root, &mut out);
    out
}

/// A node's estimate as EXPLAIN prints it, for a node of type `node_type`.
pub fn estimate_as_printed(node_type: &str, e: Estimate) -> Estimate {
    if node_type == "Hash" {
        Estimate { startup: e.total, ..e }
    } else {
        e
    }
}

/// TEXT's `  (cost=S..T rows=R width=W)` (explain.c's format).
fn cost_text(e: &Estimate) -> String {
    format!("  (cost={:.2}..{:.2} rows={:.0} width={})", e.startup, e.total, e.rows, e.width)
}

fn write_text(
    n: &ExplainNode,
    o: &Outputs,
    opts: &ExplainOptions,
    (analyze, costs): (bool, Option<&[Estimate]>),
    (depth, shift): (usize, usize),
    out: &mut String,
) {
    let indent = if depth == 0 { String::new() } else { " ".repeat(6 * (depth - 1) + 2 + shift) };
    let detail_indent = if depth == 0 { "  ".to_string() } else { " ".repeat(6 * depth + 2 + shift) };
    let arrow = if depth == 0 { "" } else { "->  " };
    let inst = n.instr.finished();
    let cost = estimate(n, costs).map(|e| cost_text(&e)).unwrap_or_default();
    if analyze {
        out.push_str(&format!("{indent}{arrow}{}{cost} {}\n", title(n, opts), actual(&inst, n.timed)));
    } else {
        out.push_str(&format!("{indent}{arrow}{}{cost}\n", title(n, opts)));
    }
    if opts.verbose && shows_output(n) && !o.printed().is_empty() {
        out.push_str(&format!("{detail_indent}Output: {}\n", unmark(&o.printed().join(", "))));
    }
    write_target_tables(n, opts, &detail_indent, out);
    for (k, v) in properties(n, o, opts) {
        if k == "Subplan Name" || !text_property(&k, analyze) {
            continue;
        }
        out.push_str(&format!("{detail_indent}{k}: {v}\n"));
    }
    if analyze && opts.counters && is_remote(n) && inst.nloops > 0 {
        for line in counter_lines(n, &inst) {
            out.push_str(&format!("{detail_indent}{line}\n"));
        }
    }
    for (c, co) in print_order(n, o) {
        // An InitPlan: its name at the node's detail indent, the plan two deeper.
        match c.detail("Subplan Name") {
            Some(name) => {
                out.push_str(&format!("{detail_indent}{}\n", unmark(name)));
                write_text(c, co, opts, (analyze, costs), (depth + 1, shift + 2), out);
            }
            None => write_text(c, co, opts, (analyze, costs), (depth + 1, shift), out),
        }
    }
}

/// show_modifytable_info in TEXT: each result relation of a partitioned target
/// (`Foreign Update on public.pt1 pt_1`, ExplainTargetRel), a foreign modify's Remote
/// SQL two spaces deeper (VERBOSE).
fn write_target_tables(n: &ExplainNode, opts: &ExplainOptions, indent: &str, out: &mut String) {
    for (k, v) in &n.details {
        if k == TARGET_REMOTE_SQL {
            if opts.verbose {
                out.push_str(&format!("{indent}  Remote SQL: {v}\n"));
            }
            continue;
        }
        if k != TARGET_TABLE {
            continue;
        }
        let mut parts = v.split('\t');
        let (operation, relation, alias) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next());
        let schema = if opts.verbose { format!("{}.", quote_identifier(REMOTE_SCHEMA)) } else { String::new() };
        let alias = alias.filter(|a| *a != relation).map(|a| format!(" {}", quote_identifier(a))).unwrap_or_default();
        out.push_str(&format!("{indent}{operation} on {schema}{}{alias}\n", quote_identifier(relation)));
    }
}

/// Whether TEXT prints a property: the scan direction and the index are in the
/// title; an index scan's heap fetches and a bitmap scan's heap blocks are actual
/// figures, printed under ANALYZE only (`Heap Blocks` only when some were read).
fn text_property(k: &str, analyze: bool) -> bool {
    match k {
        "Scan Direction" | "Index Name" => false,
        "Heap Fetches" => analyze,
        "Heap Blocks" => analyze,
        // ON CONFLICT's counts (show_modifytable_info): actual figures.
        "Tuples Inserted" | "Conflicting Tuples" | "Rows Removed by Conflict Filter" => analyze,
        _ => true,
    }
}

/// PostgreSQL's TEXT format with the given options, then `Planning Time:` and
/// `Execution Time:`.
pub fn explain_text_with(root: &ExplainNode, opts: &ExplainOptions, planning_ns: u64, execution_ns: u64) -> String {
    explain_doc_text(root, opts, &ExplainDoc::ANALYZE, planning_ns, execution_ns)
}

/// PostgreSQL's TEXT format of one EXPLAIN statement: the plan, `Settings:`, `Planning
/// Time:` and `Execution Time:` as `doc` says ([`ExplainDoc`]).
pub fn explain_doc_text(
    root: &ExplainNode,
    opts: &ExplainOptions,
    doc: &ExplainDoc,
    planning_ns: u64,
    execution_ns: u64,
) -> String {
    let (root, outputs) = as_postgres_prints(root, opts.verbose);
    let mut out = String::new();
    write_text(&root, &outputs, opts, (doc.analyze, doc.costs.as_deref()), (0, 0), &mut out);
    if let Some(settings) = doc.settings.as_ref().filter(|s| !s.is_empty()) {
        let list: Vec<String> = settings.iter().map(|(k, v)| format!("{k} = '{v}'")).collect();
        out.push_str(&format!("Settings: {}\n", list.join(", ")));
    }
    if doc.summary {
        out.push_str(&format!("Planning Time: {:.3} ms\n", ms(planning_ns)));
    }
    if doc.summary && doc.analyze {
        out.push_str(&format!("Execution Time: {:.3} ms\n", ms(execution_ns)));
    }
    out
}

/// TEXT with the sandbox's default options (VERBOSE, our counters), planning time 0.
pub fn explain_text(root: &ExplainNode, execution_ns: u64) -> String {
    explain_text_with(root, &ExplainOptions::default(), 0, execution_ns)
}

// ---------------------------------------------------------------------------------
// JSON.

/// A JSON value kept in PostgreSQL's key order and layout.
enum J {
    Str(String),
    /// A number or boolean, already formatted.
    Raw(String),
    /// A list of strings, printed on one line as PostgreSQL prints "Output".
    List(Vec<String>),
    Obj(Vec<(String, J)>),
    /// An array of objects ("Plans", "Triggers").
    Arr(Vec<J>),
}

fn escape_json(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn write_json(v: &J, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        J::Str(s) => out.push_str(&escape_json(s)),
        J::Raw(s) => out.push_str(s),
        J::List(items) => {
            let items: Vec<String> = items.iter().map(|s| escape_json(s)).collect();
            out.push_str(&format!("[{}]", items.join(", ")));
        }
        J::Obj(entries) => {
            out.push_str("{\n");
            for (i, (k, v)) in entries.iter().enumerate() {
                out.push_str(&format!("{pad}  {}: ", escape_json(k)));
                write_json(v, indent + 2, out);
                out.push_str(if i + 1 < entries.len() { ",\n" } else { "\n" });
            }
            out.push_str(&format!("{pad}}}"));
        }
        J::Arr(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&format!("{pad}  "));
                write_json(item, indent + 2, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&format!("{pad}]"));
        }
    }
}

fn to_value(v: &J) -> Value {
    match v {
        J::Str(s) => Value::String(s.clone()),
        J::Raw(s) => serde_json::from_str(s).unwrap_or(Value::Null),
        J::List(items) => Value::Array(items.iter().map(|s| Value::String(s.clone())).collect()),
        J::Obj(entries) => Value::Object(entries.iter().map(|(k, v)| (k.clone(), to_value(v))).collect()),
        J::Arr(items) => Value::Array(items.iter().map(to_value).collect()),
    }
}

fn time3(ms: f64) -> J {
    J::Raw(format!("{ms:.3}"))
}

fn int(v: u64) -> J {
    J::Raw(v.to_string())
}

fn boolean(v: bool) -> J {
    J::Raw(v.to_string())
}

/// Splits `a, f(b, c), d` at its top-level commas (PostgreSQL's list properties).
fn split_list(s: &str) -> Vec<String> {
    let (mut parts, mut depth, mut cur, mut quoted) = (vec![], 0i32, String::new(), false);
    for c in s.chars() {
        match c {
            '\'' | '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                parts.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        parts.push(cur.trim().to_string());
    }
    parts
}

/// An Incremental Sort's group line (`1  Sort Method: quicksort  Average Memory: 25kB
/// Peak Memory: 25kB`, as TEXT prints it) as `show_incremental_sort_group_info`'s
/// JSON group: the count, the methods, the memory in kB.
fn sort_groups_json(v: &str) -> J {
    let mut parts = v.split("  ");
    let count = parts.next().and_then(|c| c.parse().ok()).unwrap_or(0);
    let mut m = vec![("Group Count".to_string(), int(count))];
    let (mut avg, mut peak) = (None, None);
    for p in parts {
        if let Some((_, methods)) = p.split_once(": ").filter(|(k, _)| k.starts_with("Sort Method")) {
            m.push(("Sort Methods Used".into(), J::List(methods.split(", ").map(str::to_string).collect())));
        } else if let Some(kb) = p.strip_prefix("Average Memory: ") {
            avg = kb.trim_end_matches("kB").parse().ok();
        } else if let Some(kb) = p.strip_prefix("Peak Memory: ") {
            peak = kb.trim_end_matches("kB").parse().ok();
        }
    }
    if let (Some(a), Some(p)) = (avg, peak) {
        let space = vec![("Average Sort Space Used".to_string(), int(a)), ("Peak Sort Space Used".to_string(), int(p))];
        m.push(("Sort Space Memory".into(), J::Obj(space)));
    }
    J::Obj(m)
}

/// Properties PostgreSQL prints as lists in JSON.
const LIST_KEYS: &[&str] = &["Group Key", "Sort Key", "Presorted Key", "Output", "Conflict Arbiter Indexes"];

fn json_node(n: &ExplainNode, o: &Outputs, opts: &ExplainOptions, (analyze, costs): (bool, Option<&[Estimate]>)) -> J {
    let inst = n.instr.finished();
    let mut m: Vec<(String, J)> = vec![];
    let mut put = |k: &str, v: J| m.push((k.to_string(), v));
    let (node_type, operation) = json_node_type(n);
    put("Node Type", J::Str(node_type.into()));
    if n.node_type == "Aggregate" {
        put("Strategy", J::Str(n.strategy.clone().unwrap_or_else(|| "Plain".into())));
        put("Partial Mode", J::Str(n.detail("Partial Mode").unwrap_or("Simple").into()));
    } else if let Some(s) = &n.strategy {
        put("Strategy", J::Str(s.clone()));
    }
    if let Some(op) = operation {
        put("Operation", J::Str(op.into()));
    }
    if let Some(p) = &n.parent_relationship {
        put("Parent Relationship", J::Str(p.clone()));
    }
    if let Some(name) = n.detail("Subplan Name") {
        put("Subplan Name", J::Str(unmark(name)));
    }
    put("Parallel Aware", boolean(false));
    put("Async Capable", boolean(n.async_capable));
    // ExplainIndexScanDetails: an index scan's direction and index before its relation;
    // a Bitmap Index Scan names its index only.
    let bitmap_index = n.node_type == "Bitmap Index Scan";
    if matches!(n.node_type.as_str(), "Index Scan" | "Index Only Scan") {
        put("Scan Direction", J::Str(n.detail("Scan Direction").unwrap_or("Forward").to_string()));
    }
    if let Some(index) = n.detail("Index Name").or(n.relation.as_deref().filter(|_| bitmap_index)) {
        put("Index Name", J::Str(index.to_string()));
    }
    if let Some(r) = n.relation.as_ref().filter(|_| !bitmap_index) {
        put("Relation Name", J::Str(r.clone()));
        if opts.verbose {
            put("Schema", J::Str(n.schema().to_string()));
        }
        put("Alias", J::Str(n.alias().unwrap_or(r).to_string()));
    }
    // The sandbox's joins are proven unique only over a semi join's unique-ified inner
    // side (no unique index): `Inner Unique` set by the join (JOIN_UNIQUE_INNER).
    let join = n.is_join();
    if join {
        put("Join Type", J::Str(n.join_type().into()));
    }
    if let Some(e) = estimate(n, costs) {
        put("Startup Cost", J::Raw(format!("{:.2}", e.startup)));
        put("Total Cost", J::Raw(format!("{:.2}", e.total)));
        put("Plan Rows", J::Raw(format!("{:.0}", e.rows)));
        put("Plan Width", int(e.width.max(0) as u64));
    }
    if analyze && n.timed {
        put("Actual Startup Time", time3(if inst.nloops == 0 { 0.0 } else { per_loop(inst.startup_ns, inst.nloops) }));
        put("Actual Total Time", time3(if inst.nloops == 0 { 0.0 } else { per_loop(inst.total_ns, inst.nloops) }));
    }
    if analyze {
        put("Actual Rows", int(rows_per_loop(&inst)));
        put("Actual Loops", int(inst.nloops));
    }
    if opts.verbose && shows_output(n) && !o.printed().is_empty() {
        put("Output", J::List(o.printed().iter().map(|c| unmark(c)).collect()));
    }
    if join {
        put("Inner Unique", boolean(n.detail("Inner Unique").is_some()));
    }
    if let Some(targets) = target_tables_json(n, opts) {
        put("Target Tables", targets);
    }
    // show_hashagg_info: with COSTS, a HashAggregate's planned spill partitions (0: the
    // sandbox's estimate assumes its groups fit in work_mem), after its Filter.
    let mut planned_partitions = estimate(n, costs).is_some() && n.strategy.as_deref() == Some("Hashed");
    for (k, v) in properties(n, o, opts) {
        // Put below, always (ExplainMissingMembers in a non-text format), or not a
        // member of its own (a SubPlan's name).
        if k == "Subplans Removed" || k == "Subplan Name" || k == "Inner Unique" {
            continue;
        }
        if matches!(
            k.as_str(),
            "Heap Fetches"
                | "Heap Blocks"
                | "Tuples Inserted"
                | "Conflicting Tuples"
                | "Rows Removed by Conflict Filter"
        ) && !analyze
        {
            continue;
        }
        // show_memoize_info: TEXT's one line `Hits: N  Misses: N  …  Memory Usage: NkB`
        // is five members in JSON.
        if k == "Hits" {
            // "N", "Misses: N", …, "Memory Usage: NkB": the figure after each colon.
            let mut figures =
                v.split("  ").filter_map(|f| f.rsplit(": ").next()?.trim_end_matches("kB").parse::<u64>().ok());
            for key in ["Cache Hits", "Cache Misses", "Cache Evictions", "Cache Overflows", "Peak Memory Usage"] {
                put(key, int(figures.next().unwrap_or(0)));
            }
            continue;
        }
        // Put above ("Scan Direction", "Index Name") or below (the heap blocks).
        if matches!(k.as_str(), "Scan Direction" | "Index Name" | "Heap Blocks") {
            continue;
        }
        if planned_partitions && k == "Rows Removed by Filter" {
            put("Planned Partitions", int(0));
            planned_partitions = false;
        }
        // show_hash_info: TEXT's line is five members in JSON.
        if k == "Buckets" {
            let nums: Vec<u64> = v
                .split(|c: char| !c.is_ascii_digit())
                .filter(|t| !t.is_empty())
                .filter_map(|t| t.parse().ok())
                .collect();
            // `N  Batches: B  Memory Usage: K` or `N (originally O)  Batches: B (originally P)  …`.
            let (b, ob, bt, obt, kb) = match nums[..] {
                [b, bt, kb] => (b, b, bt, bt, kb),
                [b, ob, bt, obt, kb] => (b, ob, bt, obt, kb),
                _ => (0, 0, 0, 0, 0),
            };
            put("Hash Buckets", int(b));
            put("Original Hash Buckets", int(ob));
            put("Hash Batches", int(bt));
            put("Original Hash Batches", int(obt));
            put("Peak Memory Usage", int(kb));
            continue;
        }
        // show_sort_info: TEXT's one line is three members in JSON.
        if k == "Sort Method" {
            let (method, kind, space) = match v.split_once("  Disk: ") {
                Some((m, s)) => (m, "Disk", s),
                None => v.split_once("  Memory: ").map_or((v.as_str(), "Memory", "0kB"), |(m, s)| (m, "Memory", s)),
            };
            put("Sort Method", J::Str(method.to_string()));
            put("Sort Space Used", int(space.trim_end_matches("kB").parse().unwrap_or(0)));
            put("Sort Space Type", J::Str(kind.into()));
            continue;
        }
        let v = if LIST_KEYS.contains(&k.as_str()) {
            J::List(split_list(&v))
        } else if matches!(k.as_str(), "Full-sort Groups" | "Pre-sorted Groups") {
            sort_groups_json(&v)
        } else if matches!(
            k.as_str(),
            "Rows Removed by Filter"
                | "Rows Removed by Join Filter"
                | "Heap Fetches"
                | "Batch Size"
                | "Tuples Inserted"
                | "Conflicting Tuples"
                | "Rows Removed by Conflict Filter"
        ) {
            int(v.parse().unwrap_or(0))
        } else {
            J::Str(v)
        };
        put(&k, v);
        // show_instrumentation_count prints the rows an index recheck removed (none
        // here: no lossy page) in every format but TEXT, after the scan's index quals.
        let rechecked = (k == "Index Cond" && matches!(n.node_type.as_str(), "Index Scan" | "Index Only Scan"))
            || k == "Recheck Cond";
        if analyze && rechecked {
            put("Rows Removed by Index Recheck", int(0));
        }
    }
    if analyze && n.node_type == "Bitmap Heap Scan" {
        // show_tidbitmap_info: both counts, always, in JSON.
        let exact = n.detail("Heap Blocks").and_then(|v| v.strip_prefix("exact=")).and_then(|v| v.parse().ok());
        put("Exact Heap Blocks", int(exact.unwrap_or(0)));
        put("Lossy Heap Blocks", int(0));
    }
    if planned_partitions {
        put("Planned Partitions", int(0));
    }
    if matches!(n.node_type.as_str(), "Append" | "Merge Append") {
        put("Subplans Removed", int(n.detail("Subplans Removed").and_then(|v| v.parse().ok()).unwrap_or(0)));
    }
    if analyze && opts.counters && is_remote(n) {
        let r = &inst.remote;
        let mut ours = vec![];
        if let Some(s) = n.detail("Server") {
            ours.push(("Server".to_string(), J::Str(s.to_string())));
        }
        for (k, v) in [
            ("Remote Batches", int(r.batches)),
            ("Remote Round Trips", int(r.round_trips)),
            ("Remote Bytes Sent", int(r.bytes_sent)),
            ("Remote Bytes Received", int(r.bytes_received)),
            ("Async Requests", int(r.requests)),
            ("Async Waits", int(r.waits)),
            ("Async Wait Time", time3(ms(r.wait_ns))),
        ] {
            ours.push((k.to_string(), v));
        }
        put("pgasync", J::Obj(ours));
    }
    if !n.children.is_empty() {
        let plans = print_order(n, o).into_iter().map(|(c, co)| json_node(c, co, opts, (analyze, costs))).collect();
        put("Plans", J::Arr(plans));
    }
    J::Obj(m)
}

/// ExplainNode's "Node Type" and "Operation" in the formats other than TEXT:
/// ModifyTable is `ModifyTable` with its operation (`Insert on …` in TEXT), a direct
/// modify a `Foreign Scan` with its (`Foreign Update on …`), any other foreign scan a
/// `Select`.
fn json_node_type(n: &ExplainNode) -> (&str, Option<&str>) {
    match n.node_type.as_str() {
        op @ ("Insert" | "Update" | "Delete") => ("ModifyTable", Some(op)),
        "Foreign Update" => ("Foreign Scan", Some("Update")),
        "Foreign Delete" => ("Foreign Scan", Some("Delete")),
        "Foreign Insert" => ("Foreign Scan", Some("Insert")),
        t if is_remote(n) => (t, Some("Select")),
        t => (t, None),
    }
}

/// show_modifytable_info's "Target Tables" group (a partitioned UPDATE's or DELETE's
/// result relations, [`TARGET_TABLE`]): an object per relation with ExplainTargetRel's
/// "Relation Name", "Schema" (VERBOSE) and "Alias", then a foreign modify's "Remote
/// SQL" (postgresExplainForeignModify, VERBOSE). None when there is no such relation.
fn target_tables_json(n: &ExplainNode, opts: &ExplainOptions) -> Option<J> {
    let mut targets: Vec<Vec<(String, J)>> = vec![];
    for (k, v) in &n.details {
        if k == TARGET_REMOTE_SQL {
            if let (Some(t), true) = (targets.last_mut(), opts.verbose) {
                t.push(("Remote SQL".into(), J::Str(v.clone())));
            }
            continue;
        }
        if k != TARGET_TABLE {
            continue;
        }
        let mut parts = v.split('\t');
        let (_, relation, alias) = (parts.next(), parts.next().unwrap_or(""), parts.next());
        let mut t = vec![("Relation Name".to_string(), J::Str(relation.into()))];
        if opts.verbose {
            t.push(("Schema".into(), J::Str(REMOTE_SCHEMA.into())));
        }
        t.push(("Alias".into(), J::Str(alias.unwrap_or(relation).into())));
        targets.push(t);
    }
    (!targets.is_empty()).then(|| J::Arr(targets.into_iter().map(J::Obj).collect()))
}

fn json_doc(root: &ExplainNode, opts: &ExplainOptions, doc: &ExplainDoc, planning_ns: u64, execution_ns: u64) -> J {
    let (root, outputs) = as_postgres_prints(root, opts.verbose);
    let mut top = vec![("Plan".to_string(), json_node(&root, &outputs, opts, (doc.analyze, doc.costs.as_deref())))];
    if let Some(settings) = &doc.settings {
        top.push(("Settings".into(), J::Obj(settings.iter().map(|(k, v)| (k.clone(), J::Str(v.clone()))).collect())));
    }
    if doc.summary {
        top.push(("Planning Time".into(), time3(ms(planning_ns))));
    }
    if doc.analyze {
        top.push(("Triggers".into(), J::Arr(vec![])));
    }
    if doc.summary && doc.analyze {
        top.push(("Execution Time".into(), time3(ms(execution_ns))));
    }
    J::Arr(vec![J::Obj(top)])
}

/// PostgreSQL's JSON format as text, keys in PostgreSQL's order and its layout.
pub fn explain_json_text(root: &ExplainNode, opts: &ExplainOptions, planning_ns: u64, execution_ns: u64) -> String {
    explain_doc_json_text(root, opts, &ExplainDoc::ANALYZE, planning_ns, execution_ns)
}

/// [`explain_doc_text`] in PostgreSQL's JSON format, as text.
pub fn explain_doc_json_text(
    root: &ExplainNode,
    opts: &ExplainOptions,
    doc: &ExplainDoc,
    planning_ns: u64,
    execution_ns: u64,
) -> String {
    let mut out = String::new();
    write_json(&json_doc(root, opts, doc, planning_ns, execution_ns), 0, &mut out);
    out
}

/// PostgreSQL's JSON format as a value: `[{"Plan": {...}, "Planning Time": …,
/// "Triggers": [], "Execution Time": …}]`.
pub fn explain_json_with(root: &ExplainNode, opts: &ExplainOptions, planning_ns: u64, execution_ns: u64) -> Value {
    to_value(&json_doc(root, opts, &ExplainDoc::ANALYZE, planning_ns, execution_ns))
}

/// JSON with the sandbox's default options (VERBOSE, our counters), planning time 0.
pub fn explain_json(root: &ExplainNode, execution_ns: u64) -> Value {
    explain_json_with(root, &ExplainOptions::default(), 0, execution_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(ty: &str, relation: Option<&str>, details: &[(&str, &str)], children: Vec<ExplainNode>) -> ExplainNode {
        ExplainNode {
            id: 0,
            node_type: ty.into(),
            async_capable: false,
            strategy: None,
            relation: relation.map(str::to_string),
            parent_relationship: None,
            details: details.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            instr: Instrumentation::default(),
            timed: false,
            children,
        }
    }

    fn plan_text(root: &ExplainNode, verbose: bool) -> Vec<String> {
        let opts = ExplainOptions { verbose, counters: false };
        let doc = ExplainDoc { analyze: false, summary: false, costs: None, settings: None };
        explain_doc_text(root, &opts, &doc, 0, 0).lines().map(|l| l.trim().to_string()).collect()
    }

    /// `select cat, count(*) from loc group by cat order by cat`: the Sort reads the
    /// HashAggregate's count(*), which it prints in parentheses, the column as it is;
    /// keys are qualified under VERBOSE (one relation: Output is not).
    #[test]
    fn a_reference_to_a_computed_column_is_parenthesized() {
        let scan = node("Seq Scan", Some("loc"), &[("Schema", "public"), ("Output", "cat")], vec![]);
        let mut agg =
            node("Aggregate", None, &[("Output", "$0"), ("Output", "count(*)"), ("Group Key", "$0")], vec![scan]);
        agg.strategy = Some("Hashed".into());
        let sort = node("Sort", None, &[("Sort Key", "$0")], vec![agg]);
        let text = plan_text(&sort, true);
        assert_eq!(text[1], "Output: cat, (count(*))", "{text:#?}");
        assert_eq!(text[2], "Sort Key: loc.cat", "{text:#?}");
        assert_eq!(text[4], "Output: cat, count(*)", "{text:#?}");
        assert_eq!(text[5], "Group Key: loc.cat", "{text:#?}");
        // Without VERBOSE, keys over one relation are not qualified.
        let text = plan_text(&sort, false);
        assert_eq!(text[1], "Sort Key: cat", "{text:#?}");
    }

    /// `select id, amount * 2 from loc order by id`: PostgreSQL computes the select
    /// list in the scan, below the Sort, which reads the product parenthesized; a
    /// sort expression not selected is a resjunk column of both (`order by qty`).
    #[test]
    fn a_select_list_over_a_sort_is_computed_below_it() {
        let scan =
            node("Seq Scan", Some("loc"), &[("Schema", "public"), ("Output", "id"), ("Output", "amount")], vec![]);
        let sort = node("Sort", None, &[("Sort Key", "$0")], vec![scan.clone()]);
        let project = node("Result", None, &[("Output", "$0"), ("Output", "($1 * '2'::numeric)")], vec![sort]);
        let text = plan_text(&project, true);
        assert_eq!(text[0], "Sort", "{text:#?}");
        assert_eq!(text[1], "Output: id, ((amount * '2'::numeric))", "{text:#?}");
        assert_eq!(text[2], "Sort Key: loc.id", "{text:#?}");
        assert_eq!(text[4], "Output: id, (amount * '2'::numeric)", "{text:#?}");
        // Sorted by a column the select list drops, and by an expression it computes.
        let sort = node("Sort", None, &[("Sort Key", "$1 DESC, ($1 * '2'::numeric)")], vec![scan]);
        let project = node("Result", None, &[("Output", "$0"), ("Output", "($1 * '2'::numeric)")], vec![sort]);
        let text = plan_text(&project, true);
        assert_eq!(text[1], "Output: id, ((amount * '2'::numeric)), amount", "{text:#?}");
        assert_eq!(text[2], "Sort Key: loc.amount DESC, ((loc.amount * '2'::numeric))", "{text:#?}");
        assert_eq!(text[4], "Output: id, (amount * '2'::numeric), amount", "{text:#?}");
    }

    /// A Finalize aggregate prints the aggregates it combines as the original ones
    /// (`sum(amount)`), its input their partial states in parentheses.
    #[test]
    fn a_finalize_aggregate_prints_the_original_aggregate() {
        let scan =
            node("Seq Scan", Some("h"), &[("Schema", "public"), ("Output", "grp"), ("Output", "amount")], vec![]);
        let partial = node(
            "Aggregate",
            None,
            &[("Output", "$0"), ("Output", "PARTIAL sum($1)"), ("Partial Mode", "Partial"), ("Group Key", "$0")],
            vec![scan],
        );
        let sort = node("Sort", None, &[("Sort Key", "$0")], vec![partial]);
        let fin = node(
            "Aggregate",
            None,
            &[("Output", "$0"), ("Output", "sum($1)"), ("Output", "count(*)"), ("Partial Mode", "Finalize")],
            vec![sort],
        );
        let text = plan_text(&fin, true);
        assert_eq!(text[1], "Output: grp, sum(amount), count(*)", "{text:#?}");
        assert_eq!(text[3], "Output: grp, (PARTIAL sum(amount))", "{text:#?}");
    }

    /// A UNION branch's column cast to the union's type: the Subquery Scan prints the
    /// argument, the nodes above the cast, in parentheses.
    #[test]
    fn a_set_operations_implicit_cast_is_printed_where_it_is_read() {
        let scan = node("Seq Scan", Some("loc"), &[("Schema", "public"), ("Output", "id")], vec![]);
        let sub = node(
            "Subquery Scan",
            Some("*SELECT* 1"),
            &[("Schema", ""), ("Output", "id"), (IMPLICIT_CAST, "0\tbigint")],
            vec![scan],
        );
        let other = node("Seq Scan", Some("big"), &[("Schema", "public"), ("Output", "v")], vec![]);
        let append = node("Append", None, &[], vec![sub, other]);
        let mut agg = node("Aggregate", None, &[("Output", "$0"), ("Group Key", "$0")], vec![append]);
        agg.strategy = Some("Hashed".into());
        let text = plan_text(&agg, true);
        assert_eq!(text[1], "Output: ((\"*SELECT* 1\".id)::bigint)", "{text:#?}");
        assert_eq!(text[2], "Group Key: ((\"*SELECT* 1\".id)::bigint)", "{text:#?}");
        assert_eq!(text[5], "Output: \"*SELECT* 1\".id", "{text:#?}");
    }

    #[test]
    fn sort_keys_split_outside_parentheses_and_quotes() {
        assert_eq!(split_top_level("$0, f($1, $2) DESC, 'a, b'"), vec!["$0", "f($1, $2) DESC", "'a, b'"]);
        assert_eq!(split_top_level("$3"), vec!["$3"]);
    }

    /// A Result folded into the node below is that node's target list: it computes
    /// the expression (no parentheses), and a node above it reads it parenthesized,
    /// however many pass-through nodes are between (one pair, not one per level).
    #[test]
    fn a_folded_projection_is_computed_where_it_is_folded() {
        let scan = node("Seq Scan", Some("loc"), &[("Schema", "public"), ("Output", "qty")], vec![]);
        let project = node("Result", None, &[("Output", "($0 + 1)")], vec![scan]);
        let sort = node("Sort", None, &[("Sort Key", "$0")], vec![project]);
        let limit = node("Limit", None, &[], vec![sort]);
        let text = plan_text(&limit, true);
        assert_eq!(text[1], "Output: ((qty + 1))", "{text:#?}");
        assert_eq!(text[3], "Output: ((qty + 1))", "{text:#?}");
        assert_eq!(text[4], "Sort Key: ((loc.qty + 1))", "{text:#?}");
        assert_eq!(text[6], "Output: (qty + 1)", "{text:#?}");
    }

    /// A marked scan of a join's base relation: its rank, its columns in reltarget
    /// order with their (place, attr_needed), and its Output in table order.
    fn marked_scan(table: &str, rank: usize, tlist: &[(&str, usize, u64)], output: &[&str]) -> ExplainNode {
        let order = std::iter::once(rank.to_string()).chain(tlist.iter().map(|t| t.0.to_string())).collect::<Vec<_>>();
        let needed: Vec<String> = tlist.iter().map(|t| format!("{}:{}", t.1, t.2)).collect();
        let mut details = vec![
            ("Schema".to_string(), "public".to_string()),
            (TLIST_ORDER.to_string(), order.join("\t")),
            (TLIST_NEEDED.to_string(), needed.join("\t")),
        ];
        details.extend(output.iter().map(|c| ("Output".to_string(), c.to_string())));
        ExplainNode { details, ..node("Seq Scan", Some(table), &[], vec![]) }
    }

    /// `select id from loc order by qty limit 5`: the select list projected over the
    /// Sort leaves out its key, a resjunk entry of PostgreSQL's target list that the
    /// Sort and the Limit return.
    #[test]
    fn an_order_by_column_not_selected_is_a_resjunk_output() {
        let scan = node("Seq Scan", Some("loc"), &[("Schema", "public"), ("Output", "id"), ("Output", "qty")], vec![]);
        let sort = node("Sort", None, &[("Sort Key", "$1 DESC, $0")], vec![scan]);
        let project = node("Result", None, &[("Output", "$0")], vec![sort]);
        let limit = node("Limit", None, &[], vec![project]);
        let text = plan_text(&limit, true);
        assert_eq!(text[1], "Output: id, qty", "{text:#?}");
        assert_eq!(text[3], "Output: id, qty", "{text:#?}");
        assert_eq!(text[4], "Sort Key: loc.qty DESC, loc.id", "{text:#?}");
    }

    /// `select count(*) from f group by cat`, pushed down: the select list folded into
    /// the upper relation's scan leaves the key out, a resjunk entry PostgreSQL's scan
    /// still returns (`Output: (count(*)), cat`); a key selected is not repeated, and a
    /// scan that is no grouping adds nothing.
    #[test]
    fn a_group_by_key_not_selected_is_a_resjunk_output() {
        let upper = |extra: &[(&'static str, &'static str)]| {
            let mut details =
                vec![("Output", "(count(*))"), ("Output", "cat"), ("Relations", "Aggregate on (public.f)")];
            details.extend_from_slice(extra);
            node("Foreign Scan", None, &details, vec![])
        };
        let text = plan_text(&node("Result", None, &[("Output", "$0")], vec![upper(&[(GROUP_OUTPUTS, "1")])]), true);
        assert_eq!(text[1], "Output: (count(*)), cat", "{text:#?}");
        assert!(!text.iter().any(|l| l.contains(GROUP_OUTPUTS)), "{text:#?}");
        let text = plan_text(
            &node("Result", None, &[("Output", "$1"), ("Output", "$0")], vec![upper(&[(GROUP_OUTPUTS, "1")])]),
            true,
        );
        assert_eq!(text[1], "Output: cat, (count(*))", "{text:#?}");
        let limit = node("Limit", None, &[], vec![upper(&[(GROUP_OUTPUTS, "1")])]);
        let text = plan_text(&node("Result", None, &[("Output", "$0")], vec![limit]), true);
        assert_eq!(text[1], "Output: (count(*)), cat", "{text:#?}");
        let text = plan_text(&node("Result", None, &[("Output", "$0")], vec![upper(&[])]), true);
        assert_eq!(text[1], "Output: (count(*))", "{text:#?}");
        // A local HashAggregate (`Output: count(*), cat`), under a HAVING's filter too.
        let scan = node("Seq Scan", Some("loc"), &[("Schema", "public"), ("Output", "cat")], vec![]);
        let details = [("Output", "$0"), ("Output", "count(*)"), ("Group Key", "$0"), (GROUP_OUTPUTS, "0")];
        let mut agg = node("Aggregate", None, &details, vec![scan]);
        agg.strategy = Some("Hashed".into());
        let having = node("Result", None, &[("Filter", "($1 > 1)")], vec![agg]);
        let text = plan_text(&node("Result", None, &[("Output", "$1")], vec![having]), true);
        assert_eq!(text[1], "Output: count(*), cat", "{text:#?}");
    }

    /// A Merge Join's materialized inner side (create_mergejoin_plan's
    /// materialize_inner) returns its scan's whole row; a Nested Loop's Materialize
    /// (create_material_plan) only the columns needed.
    #[test]
    fn a_merge_joins_material_node_keeps_the_physical_tlist() {
        let scan = |table: &str| {
            let details: Vec<(&str, &str)> = vec![
                ("Schema", "public"),
                ("Output", "id"),
                (PHYSICAL_TLIST, "id"),
                (PHYSICAL_TLIST, "cat"),
                (PHYSICAL_TLIST, "qty"),
            ];
            node("Index Scan", Some(table), &details, vec![])
        };
        let outer = node("Seq Scan", Some("r"), &[("Schema", "public"), ("Output", "k")], vec![]);
        let mat = node("Materialize", None, &[], vec![scan("loc")]);
        let merge = node("Merge Join", None, &[("Merge Cond", "($0 = $1)")], vec![outer.clone(), mat]);
        let project = node("Result", None, &[("Output", "$0")], vec![merge]);
        let text = plan_text(&project, true);
        let at = text.iter().position(|l| l == "->  Materialize").expect("the Materialize");
        assert_eq!(text[at + 1], "Output: loc.id, loc.cat, loc.qty", "{text:#?}");
        let mat = node("Materialize", None, &[], vec![scan("loc")]);
        let nl = node("Nested Loop", None, &[("Join Filter", "($0 = $1)")], vec![outer, mat]);
        let project = node("Result", None, &[("Output", "$0")], vec![nl]);
        let text = plan_text(&project, true);
        let at = text.iter().position(|l| l == "->  Materialize").expect("the Materialize");
        assert_eq!(text[at + 1], "Output: loc.id", "{text:#?}");
    }

    /// `select * from dim where cat in (select cat from loc)` planned as an inner join
    /// with loc made unique by a HashAggregate (`create_unique_path`): the aggregate is
    /// `create_unique_plan`'s, which passes its Hash's CP_SMALL_TLIST to its scan (only
    /// the key); an aggregate of the query's own (CP_LABEL_TLIST) lets its scan return
    /// the whole row.
    #[test]
    fn a_unique_ified_sides_scan_returns_only_what_its_parent_asks() {
        let plan = |unique: bool| {
            let details: Vec<(&str, &str)> = vec![
                ("Schema", "public"),
                ("Output", "cat"),
                (PHYSICAL_TLIST, "id"),
                (PHYSICAL_TLIST, "cat"),
                (PHYSICAL_TLIST, "qty"),
            ];
            let scan = node("Seq Scan", Some("loc"), &details, vec![]);
            let agg = ExplainNode {
                strategy: Some("Hashed".into()),
                ..node("Aggregate", None, &[("Output", "$0"), ("Group Key", "$0")], vec![scan])
            };
            let outer = node("Seq Scan", Some("dim"), &[("Schema", "public"), ("Output", "cat")], vec![]);
            let mut join = node("Hash Join", None, &[("Hash Cond", "($0 = $1)")], vec![outer, agg]);
            if unique {
                join.set_join_type(crate::plan::JoinType::UniqueInner);
            }
            plan_text(&node("Result", None, &[("Output", "$0")], vec![join]), true)
        };
        let text = plan(true);
        let at = text.iter().position(|l| l.starts_with("->  Seq Scan on public.loc")).expect("loc's scan");
        assert_eq!(text[at + 1], "Output: loc.cat", "{text:#?}");
        assert!(!text.iter().any(|l| l.contains(UNIQUE_SIDE)), "{text:#?}");
        let text = plan(false);
        let at = text.iter().position(|l| l.starts_with("->  Seq Scan on public.loc")).expect("loc's scan");
        assert_eq!(text[at + 1], "Output: loc.id, loc.cat, loc.qty", "{text:#?}");
    }

    /// `select count(*) from a join b on a.x = b.x`: the join's columns are needed by
    /// its own clause only (attr_needed {a, b}, its own relations), so its target list
    /// is empty (`build_joinrel_tlist`): no Output line.
    #[test]
    fn a_join_under_count_star_returns_no_columns() {
        let a = marked_scan("a", 0, &[("x", 0, 0b11)], &["x"]);
        let b = marked_scan("b", 1, &[("x", 1, 0b11)], &["x"]);
        let join = node("Nested Loop", None, &[("Join Filter", "($0 = $1)")], vec![a, b]);
        let agg = node("Aggregate", None, &[("Output", "count(*)")], vec![join]);
        let text = plan_text(&agg, true);
        assert_eq!(text[2], "->  Nested Loop", "{text:#?}");
        assert_eq!(text[3], "Join Filter: (a.x = b.x)", "{text:#?}");
    }

    /// `select c.v, b.w from a join b on a.x = b.x join c on c.y = a.y`: the join of
    /// a and b keeps b.w (needed above) and a.y (needed by the clause with c), not
    /// the columns of its own clause, in its relations' order (a's, then b's); the top
    /// join returns the final target list's columns in its order.
    #[test]
    fn a_join_keeps_the_columns_needed_beyond_its_relations() {
        const ABOVE: u64 = NEEDED_ABOVE;
        let a = marked_scan("a", 0, &[("x", 2, 0b011), ("y", 3, 0b101)], &["x", "y"]);
        let b = marked_scan("b", 1, &[("w", 1, ABOVE), ("x", 4, 0b011)], &["x", "w"]);
        let c = marked_scan("c", 2, &[("v", 0, ABOVE), ("y", 5, 0b101)], &["v", "y"]);
        let ab = node("Hash Join", None, &[("Hash Cond", "($2 = $0)")], vec![b, a]);
        let top = node("Hash Join", None, &[("Hash Cond", "($5 = $1)")], vec![c, ab]);
        let text = plan_text(&top, true);
        assert_eq!(text[1], "Output: c.v, b.w", "{text:#?}");
        let inner = text.iter().position(|l| l == "->  Hash Join").expect("the inner join");
        assert_eq!(text[inner + 1], "Output: a.y, b.w", "{text:#?}");
    }
}
