//! Settings (`SET`, `RESET`) and postgres_fdw's options (`CREATE SERVER`, `CREATE
//! FOREIGN TABLE`, `ALTER SERVER … OPTIONS (ADD | SET | DROP …)`): each one is honoured
//! as PostgreSQL 15 honours it, or refused with an error that names it ("not supported
//! by the sandbox: …"). Nothing is accepted and ignored.
//!
//! A value is checked as PostgreSQL checks it (`parameter "enable_hashjoin" requires a
//! Boolean value`, postgres_fdw's `"fetch_size" must be an integer value greater than
//! zero`) before the sandbox asks whether it can honour it. Some settings are accepted
//! by `SET` and refused when a query is planned, because whether the sandbox can honour
//! them depends on the plan: `enable_sort = off` is honoured by a query without a Sort
//! (PostgreSQL's plan has none either) and refused for a query with one, since the
//! sandbox has no cost model to weigh the paths PostgreSQL would take instead
//! ([`check_plan`]).
//!
//! # Settings: here vs PostgreSQL 15
//!
//! | setting | PostgreSQL 15 | here |
//! |---|---|---|
//! | `enable_async_append` | Append runs async-capable foreign children asynchronously | honoured: the mode of `pgasync sql` (unless `--mode`), of the corpus and of EXPLAIN without ANALYZE (`Async Foreign Scan`); the page's sync/async switch sets it for the page's run |
//! | `enable_partition_pruning` | plan-time pruning of partitions | honoured: off scans every partition |
//! | `enable_partitionwise_aggregate` | aggregates per partition, fully (the key grouped) or partially | on: honoured: with the partition key among the GROUP BY keys, per-partition aggregates (pushed to the shards); without, a Partial Aggregate per partition and a Finalize Aggregate above (avg refused: its partial state is not planned); each against the ordinary paths, by cost |
//! | `enable_partitionwise_join` | joins partitioned tables partition by partition | on: honoured for two relations partitioned alike with equal bounds, joined on their keys (an Append of per-pair joins, partitionwise.rs), and for three or more relations all partitioned alike and joined on their keys (an Append of per-child joins, each searched as its parent, partitionwise_joinrels.rs); refused by name where PostgreSQL would join partitionwise and the sandbox does not (three or more relations of which only some are partitioned alike, differing bounds, ORDER BY over foreign pairs, by a key, or over a join of three or more); foreign partitions on one server may be pushed down as one Foreign Scan of their join (of two or more); no effect on other queries, as in PostgreSQL |
//! | `enable_hashjoin`, `enable_mergejoin`, `enable_nestloop`, `enable_material` | discourage their join method (Materialize) | honoured as PostgreSQL 15 honours them (planner.rs, `Method::tried`; `plan::costsize`): off, no hash or merge join path is made (`add_paths_to_joinrel`), a Nested Loop costs `disable_cost` more, no Materialize is tried over a Nested Loop's inner side nor chosen over a Merge Join's (only where the inner side needs one to mark and restore) |
//! | `enable_hashagg` | discourages HashAggregate | off: a HashAggregate costs `disable_cost` more (`plan::costsize`), so a grouped query over one relation chooses GroupAggregate, as PostgreSQL does; refused when the plan still has a HashAggregate (a join's aggregate, a set operation: no sorted path there) |
//! | `enable_sort` | discourages explicit Sort steps | off: a Sort costs `disable_cost` more (`plan::costsize`), so a join chooses a method without one and ORDER BY a Merge Append or an ordered Append where there is one, as PostgreSQL does; refused when the plan still has a Sort (the sandbox lacks PostgreSQL's other paths there) |
//! | `enable_seqscan`, `enable_indexscan`, `enable_bitmapscan`, `enable_indexonlyscan` | discourage their scan | honoured as PostgreSQL 15 honours them (`indxpath.rs`, `plan::costsize`): off, a Seq Scan, Index Scan (or Index Only Scan) or Bitmap Heap Scan costs `disable_cost` more, and no Index Only Scan path is built |
//! | `enable_incremental_sort` | considers an Incremental Sort over a path ordered by a prefix of ORDER BY (`create_ordered_paths`) | honoured (`incsort.rs`): off, no Incremental Sort path is built |
//! | `enable_memoize` | considers a Memoize over a Nested Loop's parameterized inner side (`get_memoize_path`) | honoured (planner.rs for two relations, joinrels.rs for more): off, no Memoize path is built |
//! | `enable_tidscan`, `enable_gathermerge`, `enable_parallel_append`, `enable_parallel_hash` | discourage their node | honoured: the sandbox never plans these nodes |
//! | `max_parallel_workers_per_gather` | workers per Gather (2) | `0` honoured (the sandbox plans no parallel query); any other value refused |
//! | `jit` | JIT compilation of costly queries (on) | `off` honoured; `on` refused (no JIT) |
//! | `statement_timeout` | cancels long statements | `0` honoured; any other value refused |
//! | `client_min_messages` | the least level sent to the client | honoured: the sandbox sends the client no NOTICE or WARNING, at any level |
//! | `application_name` | shown in `pg_stat_activity` | honoured: the sandbox shows it nowhere, as a client would not see it |
//! | `seq_page_cost`, `random_page_cost`, `cpu_tuple_cost`, `cpu_index_tuple_cost`, `cpu_operator_cost`, `work_mem` | the cost model | honoured: `plan::costsize` prints the estimates by them (the sandbox's planner still chooses its plan by rule) |
//! | `plan_cache_mode` | custom or generic plans for prepared statements (`choose_custom_plan`) | honoured: `prepared.rs`, plancache.c's choice, the first five executions custom in `auto` |
//! | `default_statistics_target` | ANALYZE's sample (300 × it rows), MCVs and histogram bounds | honoured (`plan::stats`) |
//! | `join_collapse_limit`, `from_collapse_limit` | how many explicit JOINs / FROM items `deconstruct_jointree` folds into one join search (8) | honoured (`joinrels.rs`): a join list longer than the limit is planned as subproblems, `join_collapse_limit = 1` keeps the written JOIN order |
//! | `geqo`, `geqo_threshold` | the genetic search for a join search of at least `geqo_threshold` (12) items | honoured: the sandbox has no genetic search, so a join search of that many items with `geqo` on is refused by name; with `geqo` off (or a higher threshold) the exhaustive search runs, up to the sandbox's bound (`joinrels::MAX_SEARCH_ITEMS`) |
//! | `parallel_*_cost`, `effective_cache_size`, `hash_mem_multiplier`, `geqo_effort` and geqo's other knobs, `constraint_exclusion`, `cursor_tuple_fraction`, `jit_above_cost`, … | the planner | refused: the sandbox's cost model does not use them |
//! | `extra_float_digits`, `DateStyle`, `TimeZone`, `IntervalStyle`, `bytea_output`, `lc_*` | how values are written | refused: PostgreSQL's defaults only |
//! | `search_path` | where names are looked up | refused: one schema, `public` |
//! | `seed` | seeds `random()` | refused: write `SELECT setseed(…)` |
//! | any other | | refused, named |
//!
//! `SET name TO DEFAULT` and `RESET name` restore the default, `RESET ALL` every
//! default; `SET LOCAL` is refused (outside a transaction block PostgreSQL ignores it
//! with a WARNING, and scenario files have no transaction blocks). `set_config()` is
//! not a function the sandbox has (refused as an unknown function). `EXPLAIN
//! (SETTINGS)` lists the planner settings changed from their defaults, as PostgreSQL
//! does ([`explain_settings`]).
//!
//! # postgres_fdw's options: here vs PostgreSQL 15
//!
//! | option | on | PostgreSQL 15 | here |
//! |---|---|---|---|
//! | `async_capable` | server | scans may run asynchronously | honoured |
//! | `fetch_size` | server | rows per FETCH | honoured |
//! | `parallel_commit` | server | COMMITs on every such connection at once | honoured when every server the plan reads says so (the `parallel_commit` behaviour); refused when only some do |
//! | `batch_size` | server, table | rows per remote INSERT | honoured (the setup's INSERTs count their batches) |
//! | `host`, `hostaddr`, `port`, `dbname`, `connect_timeout` | server | where the server is | kept: a server is the shard of its name (a live run: the relay's target of that name) |
//! | `sslmode` | server | TLS | `disable`, `allow`, `prefer` honoured (the simulated shards speak no TLS); `require`, `verify-*` refused |
//! | `use_remote_estimate` | server, table | asks the remote for EXPLAIN estimates at planning | honoured, the table's overriding its server's (`coordinator_sql::remote_estimate`): the Foreign Scans are priced by the shards' EXPLAIN, sent on the wire before the query runs, in PostgreSQL 15's order; in a two-relation join also each foreign relation's scan ordered by the join key and its scan parameterized by the join clause (`… WHERE ((((SELECT null::integer)::integer) = b))`), which price a Nested Loop's parameterized Foreign Scans (`paramfdw`). A join of two foreign tables on one server that postgres_fdw can push down asks the join's own query (`SELECT r1.…, r2.… FROM (… INNER JOIN …)`) and, with an ORDER BY of its columns, the same ordered, after the relations' questions; the pushed-down join (ordered or not) is priced from the answers. A plain EXPLAIN sends the planning's EXPLAINs and commits, as PostgreSQL 15 does. Departs: a scan reading a correlated SubPlan's parameter makes the statement planned with local estimates, no EXPLAIN sent; refused by name for a pushed-down aggregate or LIMIT (also over a pushed-down join), a prepared statement or DML over such a table |
//! | `fdw_startup_cost`, `fdw_tuple_cost` | server | the cost model | honoured: the Foreign Scans' estimates (`plan::costsize`) |
//! | `extensions` | server | which extensions' functions are shipped | honoured: postgres_fdw's members (`ALTER EXTENSION postgres_fdw ADD`) ship; postgres_fdw is the only extension |
//! | `keep_connections` | server | closes connections at transaction end when off | `on` honoured; `off` refused |
//! | `updatable` | server, table | allows INSERT, UPDATE, DELETE | `true` honoured; `false` refused (the setup inserts through foreign tables) |
//! | `truncatable` | server, table | allows TRUNCATE | honoured (the sandbox has no TRUNCATE) |
//! | `schema_name`, `table_name` | table | the remote table | honoured |
//! | `async_capable`, `fetch_size` | table | per table | refused: the sandbox reads them per server (set them on the server) |
//! | `application_name` | server | the remote session's name | refused: the sandbox's connections are `postgres_fdw`'s default |
//! | libpq's other options (`options`, `keepalives`, `service`, …) | server | | refused, named |
//! | `user`, `password`, `sslcert`, … (user mapping options), `analyze_sampling` (PostgreSQL 16), any unknown | server, table | `invalid option "…"` | PostgreSQL 15's error |
//! | `user`, `password`, `password_required`, `sslcert`, `sslkey`, `sslpassword` | user mapping | the remote role and its credentials | refused: the sandbox's connections log in as its own role (`statement::create_user_mapping`) |
//!
//! Invariants:
//! - every setting and option is honoured or refused by name, never accepted and ignored;
//! - a value is stored in one spelling (booleans as `on`/`off`, enums in lower case), so
//!   what reads it (`Node::setting_on`, EXPLAIN (SETTINGS)) sees `'false'` and `off` alike;
//! - a plan with a node that an `enable_*` set to off governs, and for which the sandbox
//!   has no other path, is refused ([`check_plan`]), never run as if the setting were on.

use crate::plan::{AggStrategy, Plan};

/// What a setting's value may be.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Bool,
    Int,
    /// A floating-point value, at least 0 (the cost constants).
    Real,
    /// A size in kB, with PostgreSQL's units (`kB`, `MB`, `GB`, `TB`; none: kB), at
    /// least 64 kB (`work_mem`).
    Memory,
    Enum(&'static [&'static str]),
    Text,
}

/// How the sandbox honours a setting.
#[derive(Clone, Copy, Debug)]
enum How {
    /// Honoured everywhere (the planner, the executor, or nothing to show).
    Honoured,
    /// An `enable_*` whose node the sandbox plans with no alternative: off is checked
    /// against each plan ([`check_plan`]).
    Disables,
    /// An `enable_*` whose node the sandbox never plans.
    NeverPlanned,
    /// Only these values; others refused with the reason.
    Only(&'static [&'static str], &'static str),
}

struct Guc {
    name: &'static str,
    kind: Kind,
    /// PostgreSQL 15's default, as `SHOW` prints it.
    boot: &'static str,
    /// GUC_EXPLAIN: listed by `EXPLAIN (SETTINGS)` when changed.
    explain: bool,
    how: How,
}

/// `plan_cache_mode`'s values (plancache.c's `choose_custom_plan` reads it).
pub const PLAN_CACHE_MODES: &[&str] = &["auto", "force_custom_plan", "force_generic_plan"];

const LEVELS: &[&str] =
    &["debug5", "debug4", "debug3", "debug2", "debug1", "debug", "log", "notice", "warning", "error", "info"];

const GUCS: &[Guc] = &[
    Guc { name: "enable_async_append", kind: Kind::Bool, boot: "on", explain: true, how: How::Honoured },
    Guc { name: "enable_partition_pruning", kind: Kind::Bool, boot: "on", explain: true, how: How::Honoured },
    Guc { name: "enable_partitionwise_aggregate", kind: Kind::Bool, boot: "off", explain: true, how: How::Honoured },
    Guc { name: "enable_partitionwise_join", kind: Kind::Bool, boot: "off", explain: true, how: How::Honoured },
    Guc { name: "enable_hashjoin", kind: Kind::Bool, boot: "on", explain: true, how: How::Honoured },
    Guc { name: "enable_hashagg", kind: Kind::Bool, boot: "on", explain: true, how: How::Disables },
    Guc { name: "enable_sort", kind: Kind::Bool, boot: "on", explain: true, how: How::Disables },
    Guc { name: "enable_indexscan", kind: Kind::Bool, boot: "on", explain: true, how: How::Honoured },
    Guc { name: "enable_seqscan", kind: Kind::Bool, boot: "on", explain: true, how: How::Honoured },
    Guc { name: "enable_nestloop", kind: Kind::Bool, boot: "on", explain: true, how: How::Honoured },
    Guc { name: "enable_mergejoin", kind: Kind::Bool, boot: "on", explain: true, how: How::Honoured },
    Guc { name: "enable_material", kind: Kind::Bool, boot: "on", explain: true, how: How::Honoured },
    Guc { name: "enable_memoize", kind: Kind::Bool, boot: "on", explain: true, how: How::Honoured },
    Guc { name: "enable_bitmapscan", kind: Kind::Bool, boot: "on", explain: true, how: How::Honoured },
    Guc { name: "enable_indexonlyscan", kind: Kind::Bool, boot: "on", explain: true, how: How::Honoured },
    Guc { name: "enable_tidscan", kind: Kind::Bool, boot: "on", explain: true, how: How::NeverPlanned },
    Guc { name: "enable_incremental_sort", kind: Kind::Bool, boot: "on", explain: true, how: How::Honoured },
    Guc { name: "enable_gathermerge", kind: Kind::Bool, boot: "on", explain: true, how: How::NeverPlanned },
    Guc { name: "enable_parallel_append", kind: Kind::Bool, boot: "on", explain: true, how: How::NeverPlanned },
    Guc { name: "enable_parallel_hash", kind: Kind::Bool, boot: "on", explain: true, how: How::NeverPlanned },
    Guc {
        name: "max_parallel_workers_per_gather",
        kind: Kind::Int,
        boot: "2",
        explain: true,
        how: How::Only(&["0"], "the sandbox plans no parallel query: 0 (no workers) is what it does"),
    },
    Guc {
        name: "jit",
        kind: Kind::Bool,
        boot: "on",
        explain: true,
        how: How::Only(&["off"], "the sandbox compiles no expression: off is what it does"),
    },
    Guc {
        name: "statement_timeout",
        kind: Kind::Int,
        boot: "0",
        explain: false,
        how: How::Only(&["0"], "the sandbox cancels no statement on a timer"),
    },
    Guc { name: "seq_page_cost", kind: Kind::Real, boot: "1", explain: true, how: How::Honoured },
    Guc { name: "random_page_cost", kind: Kind::Real, boot: "4", explain: true, how: How::Honoured },
    Guc { name: "cpu_tuple_cost", kind: Kind::Real, boot: "0.01", explain: true, how: How::Honoured },
    Guc { name: "cpu_index_tuple_cost", kind: Kind::Real, boot: "0.005", explain: true, how: How::Honoured },
    Guc { name: "cpu_operator_cost", kind: Kind::Real, boot: "0.0025", explain: true, how: How::Honoured },
    Guc { name: "work_mem", kind: Kind::Memory, boot: "4MB", explain: true, how: How::Honoured },
    Guc { name: "default_statistics_target", kind: Kind::Int, boot: "100", explain: false, how: How::Honoured },
    Guc { name: "from_collapse_limit", kind: Kind::Int, boot: "8", explain: true, how: How::Honoured },
    Guc { name: "join_collapse_limit", kind: Kind::Int, boot: "8", explain: true, how: How::Honoured },
    Guc { name: "geqo", kind: Kind::Bool, boot: "on", explain: true, how: How::Honoured },
    Guc { name: "geqo_threshold", kind: Kind::Int, boot: "12", explain: true, how: How::Honoured },
    Guc {
        name: "plan_cache_mode",
        kind: Kind::Enum(PLAN_CACHE_MODES),
        boot: "auto",
        explain: true,
        how: How::Honoured,
    },
    Guc { name: "client_min_messages", kind: Kind::Enum(LEVELS), boot: "notice", explain: false, how: How::Honoured },
    Guc { name: "application_name", kind: Kind::Text, boot: "", explain: false, how: How::Honoured },
];

/// Settings PostgreSQL 15 has that belong to the cost model.
const COST_MODEL: &[&str] = &[
    "parallel_setup_cost",
    "parallel_tuple_cost",
    "min_parallel_table_scan_size",
    "min_parallel_index_scan_size",
    "effective_cache_size",
    "effective_io_concurrency",
    "hash_mem_multiplier",
    "constraint_exclusion",
    "cursor_tuple_fraction",
    "geqo_effort",
    "geqo_pool_size",
    "geqo_generations",
    "geqo_selection_bias",
    "geqo_seed",
    "jit_above_cost",
    "jit_inline_above_cost",
    "jit_optimize_above_cost",
    "force_parallel_mode",
    "parallel_leader_participation",
    "max_parallel_workers",
    "max_parallel_maintenance_workers",
    "recursive_worktree_factor",
];

/// Settings that change how values are written.
const FORMATS: &[&str] = &[
    "extra_float_digits",
    "datestyle",
    "timezone",
    "intervalstyle",
    "bytea_output",
    "lc_numeric",
    "lc_monetary",
    "lc_time",
    "lc_messages",
    "xmloption",
];

/// The names of the settings the sandbox honours (some values only), for messages.
fn honoured_names() -> String {
    GUCS.iter().map(|g| g.name).collect::<Vec<_>>().join(", ")
}

fn refused(what: impl std::fmt::Display) -> String {
    format!("not supported by the sandbox: {what}")
}

/// `SET name = value` (`value` None: `SET name TO DEFAULT` or `RESET name`): the
/// setting's name and its value as PostgreSQL's `SHOW` prints it, or the error
/// (PostgreSQL's for a bad value; "not supported by the sandbox: …" for what the
/// sandbox does not honour).
pub fn check_set(name: &str, value: Option<&str>) -> Result<(String, String), String> {
    let Some(g) = GUCS.iter().find(|g| g.name == name) else {
        if COST_MODEL.contains(&name) {
            return Err(refused(format!(
                "SET {name}: the sandbox's cost model (seq_page_cost, random_page_cost, cpu_*_cost, work_mem, \
                 default_statistics_target) does not use it, and its planner chooses paths by rule (issue 23)"
            )));
        }
        if FORMATS.contains(&name) {
            return Err(refused(format!("SET {name}: the sandbox writes values in PostgreSQL's default formats only")));
        }
        if name == "search_path" {
            return Err(refused("SET search_path: the sandbox has one schema, public"));
        }
        if name == "seed" {
            return Err(refused("SET seed: write SELECT setseed(…) instead"));
        }
        if name.contains('.') {
            return Err(refused(format!("SET {name}: the sandbox has no extension settings")));
        }
        return Err(refused(format!("SET {name} (the settings the sandbox honours: {})", honoured_names())));
    };
    let value = match value {
        None => g.boot.to_string(),
        Some(v) => match g.kind {
            Kind::Bool => match parse_bool(v) {
                Some(true) => "on".to_string(),
                Some(false) => "off".to_string(),
                None => return Err(format!("parameter \"{name}\" requires a Boolean value")),
            },
            Kind::Int => match v.trim().parse::<i64>() {
                Ok(n) if name == "default_statistics_target" && !(1..=10000).contains(&n) => {
                    return Err(format!("{n} is outside the valid range for parameter \"{name}\" (1 .. 10000)"))
                }
                // The join search's limits (guc_tables.c: 1 .. INT_MAX, geqo_threshold 2 ..).
                Ok(n) if name.ends_with("_collapse_limit") && !(1..=i32::MAX as i64).contains(&n) => {
                    return Err(format!("{n} is outside the valid range for parameter \"{name}\" (1 .. 2147483647)"))
                }
                Ok(n) if name == "geqo_threshold" && !(2..=i32::MAX as i64).contains(&n) => {
                    return Err(format!("{n} is outside the valid range for parameter \"{name}\" (2 .. 2147483647)"))
                }
                Ok(n) => n.to_string(),
                Err(_) => return Err(format!("invalid value for parameter \"{name}\": \"{v}\"")),
            },
            Kind::Real => match v.trim().parse::<f64>() {
                Ok(x) if x < 0.0 || !x.is_finite() => {
                    return Err(format!("{x} is outside the valid range for parameter \"{name}\" (0 .. 1.79769e+308)"))
                }
                Ok(x) => format!("{x}"),
                Err(_) => return Err(format!("parameter \"{name}\" requires a numeric value")),
            },
            Kind::Memory => match memory_kb(v) {
                Some(kb) if kb < 64 => {
                    return Err(format!(
                        "{kb} kB is outside the valid range for parameter \"{name}\" (64 .. 2147483647)"
                    ))
                }
                Some(kb) => show_memory(kb),
                None => return Err(format!("invalid value for parameter \"{name}\": \"{v}\"")),
            },
            Kind::Enum(values) => {
                let l = v.to_lowercase();
                if !values.contains(&l.as_str()) {
                    return Err(format!("invalid value for parameter \"{name}\": \"{v}\""));
                }
                l
            }
            Kind::Text => v.to_string(),
        },
    };
    if let How::Only(values, why) = g.how {
        if !values.contains(&value.as_str()) {
            return Err(refused(format!("SET {name} = {value}: {why}")));
        }
    }
    Ok((name.to_string(), value))
}

/// `EXPLAIN (SETTINGS)`: the planner settings (GUC_EXPLAIN) whose value differs from
/// PostgreSQL's default, by name, as `get_explain_guc_options` lists them.
/// `setting(name)` is the coordinator's value, None when never set. (The catalog is
/// passed as closures, not as a `Node`, so this module does not import the catalog,
/// which imports the statements, which import this module's checks.)
pub fn explain_settings(setting: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = GUCS
        .iter()
        .filter(|g| g.explain)
        .filter_map(|g| setting(g.name).filter(|v| v != g.boot).map(|v| (g.name.to_string(), v)))
        .collect();
    out.sort();
    out
}

/// Is the boolean setting off on this node (its default when never set)?
fn off(setting: &dyn Fn(&str) -> Option<String>, name: &str) -> bool {
    let boot = GUCS.iter().find(|g| g.name == name).map_or("on", |g| g.boot);
    setting(name).as_deref().unwrap_or(boot) == "off"
}

/// The settings a plan cannot honour: an `enable_*` that is off while the plan has
/// the node it governs, which the sandbox has no other path for. PostgreSQL would
/// weigh the other paths (the setting adds `disable_cost`); the sandbox has neither
/// the paths nor a cost model, so it refuses rather than plan what PostgreSQL may not.
/// `setting` as for [`explain_settings`]. (The scan settings act through the costs:
/// `indxpath.rs`.)
pub fn check_plan(setting: &dyn Fn(&str) -> Option<String>, plan: &Plan) -> Result<(), String> {
    let coord = setting;
    let mut found: Option<String> = None;
    walk(plan, &mut |p| {
        if found.is_some() {
            return;
        }
        let hit = match p {
            Plan::Agg { strategy: AggStrategy::Hashed, .. } if off(coord, "enable_hashagg") => Some((
                "enable_hashagg",
                "the plan has a HashAggregate where the sandbox has no GroupAggregate path to plan instead",
            )),
            Plan::Sort { .. } if off(coord, "enable_sort") => Some((
                "enable_sort",
                "the plan has a Sort, and the sandbox has no cost model to weigh the paths PostgreSQL would take instead",
            )),
            _ => None,
        };
        if let Some((name, why)) = hit {
            found = Some(refused(format!("{name} = off: {why}")));
        }
    });
    match found {
        Some(m) => Err(m),
        None => Ok(()),
    }
}

/// A size setting in kB (`4096`, `4096kB`, `64MB`, `1GB`, `1TB`), as PostgreSQL's
/// `parse_int` with `GUC_UNIT_KB` reads it.
pub fn memory_kb(v: &str) -> Option<i64> {
    let v = v.trim();
    let digits = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let n: i64 = v[..digits].parse().ok()?;
    let mult = match v[digits..].trim() {
        "" | "kB" => 1,
        "MB" => 1024,
        "GB" => 1024 * 1024,
        "TB" => 1024 * 1024 * 1024,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// A kB size as `SHOW` prints it: the largest unit that divides it.
fn show_memory(kb: i64) -> String {
    if kb % (1024 * 1024) == 0 {
        format!("{}GB", kb / (1024 * 1024))
    } else if kb % 1024 == 0 {
        format!("{}MB", kb / 1024)
    } else {
        format!("{kb}kB")
    }
}

/// PostgreSQL's boolean spellings (parse_bool).
pub fn parse_bool(v: &str) -> Option<bool> {
    match v.to_lowercase().as_str() {
        "on" | "true" | "t" | "yes" | "y" | "1" => Some(true),
        "off" | "false" | "f" | "no" | "n" | "0" => Some(false),
        _ => None,
    }
}

fn walk(plan: &Plan, f: &mut dyn FnMut(&Plan)) {
    f(plan);
    match plan {
        Plan::Append { children, .. } | Plan::MergeAppend { children, .. } => children.iter().for_each(|c| walk(c, f)),
        Plan::Sort { child, .. }
        | Plan::IncrementalSort { child, .. }
        | Plan::Limit { child, .. }
        | Plan::Agg { child, .. }
        | Plan::Result { child, .. }
        | Plan::Material { child }
        | Plan::Memoize { child, .. }
        | Plan::SubqueryScan { child, .. }
        | Plan::Unique { child, .. }
        | Plan::WindowAgg { child, .. }
        | Plan::Gating { child, .. }
        | Plan::SetOp { child, .. }
        | Plan::BitmapHeapScan { child, .. } => walk(child, f),
        Plan::ModifyTable(m) => walk(&m.child, f),
        Plan::ConstResult { .. } | Plan::DirectModify(_) => {}
        Plan::HashJoin { outer, inner, .. }
        | Plan::NestLoop { outer, inner, .. }
        | Plan::MergeJoin { outer, inner, .. } => {
            walk(outer, f);
            walk(inner, f);
        }
        Plan::SeqScan { .. }
        | Plan::IndexScan { .. }
        | Plan::BitmapIndexScan { .. }
        | Plan::ForeignScan(_)
        | Plan::EmptyResult { .. }
        | Plan::FunctionScan { .. }
        | Plan::CteScan { .. } => {}
        Plan::WithInitPlans { child, init_plans } => {
            init_plans.iter().for_each(|i| walk(&i.plan, f));
            walk(child, f);
        }
        Plan::WithCtes { child, ctes } => {
            ctes.iter().for_each(|c| walk(&c.plan, f));
            walk(child, f);
        }
    }
}

/// libpq's options a PostgreSQL 15 server takes that the sandbox does not honour
/// (`user`, `password`, `sslcert`, … belong to user mappings: `invalid option`).
const LIBPQ: &[&str] = &[
    "service",
    "passfile",
    "channel_binding",
    "options",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "sslcompression",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "gssencmode",
    "krbsrvname",
    "gsslib",
    "target_session_attrs",
];

fn bool_option(k: &str, v: &str) -> Result<bool, String> {
    parse_bool(v).ok_or_else(|| format!("{k} requires a Boolean value"))
}

fn positive(k: &str, v: &str) -> Result<(), String> {
    match v.trim().parse::<i64>() {
        Ok(n) if n > 0 => Ok(()),
        _ => Err(format!("\"{k}\" must be an integer value greater than zero")),
    }
}

/// An option of `CREATE SERVER` or `ALTER SERVER`: PostgreSQL's error for a bad one,
/// "not supported by the sandbox: …" for one it would honour and the sandbox cannot.
pub fn check_server_option(k: &str, v: &str) -> Result<(), String> {
    match k {
        "host" | "hostaddr" | "port" | "dbname" | "connect_timeout" => Ok(()),
        "sslmode" => match v {
            "disable" | "allow" | "prefer" => Ok(()),
            _ => Err(refused(format!("server option sslmode '{v}': the simulated shards speak no TLS"))),
        },
        "async_capable" | "parallel_commit" | "truncatable" => bool_option(k, v).map(|_| ()),
        "fetch_size" | "batch_size" => positive(k, v),
        // `true` also enables the parameterized foreign paths (paramfdw.rs).
        "use_remote_estimate" => bool_option(k, v).map(|_| ()),
        "keep_connections" => match bool_option(k, v)? {
            true => Ok(()),
            false => Err(refused(
                "server option keep_connections 'false': the sandbox does not close connections at transaction end",
            )),
        },
        "updatable" => match bool_option(k, v)? {
            true => Ok(()),
            false => Err(refused(
                "server option updatable 'false': the setup's INSERTs through foreign tables would be refused",
            )),
        },
        "fdw_startup_cost" | "fdw_tuple_cost" => match v.trim().parse::<f64>() {
            Ok(x) if x >= 0.0 => Ok(()),
            Ok(_) => Err(format!("\"{k}\" must be a floating point value greater than or equal to zero")),
            Err(_) => Err(format!("invalid value for floating point option \"{k}\": {v}")),
        },
        // A list of extension names; postgres_fdw is the only extension there is
        // (`functioncmds`): its members ship (`shippable::is_foreign_expr_on`).
        "extensions" => Ok(()),
        "application_name" => {
            Err(refused("server option application_name: the sandbox's connections keep postgres_fdw's default name"))
        }
        _ if LIBPQ.contains(&k) => Err(refused(format!("server option {k}"))),
        _ => Err(format!("invalid option \"{k}\"")),
    }
}

/// An option of `CREATE FOREIGN TABLE … OPTIONS (…)`.
pub fn check_table_option(k: &str, v: &str) -> Result<(), String> {
    match k {
        "schema_name" | "table_name" => Ok(()),
        "truncatable" => bool_option(k, v).map(|_| ()),
        "batch_size" => positive(k, v),
        "use_remote_estimate" | "updatable" => {
            check_server_option(k, v).map_err(|m| m.replace("server option", "foreign table option"))
        }
        "async_capable" | "fetch_size" => {
            if k == "async_capable" {
                bool_option(k, v)?;
            } else {
                positive(k, v)?;
            }
            Err(refused(format!("foreign table option {k}: the sandbox reads it per server (set it on the server)")))
        }
        _ => Err(format!("invalid option \"{k}\"")),
    }
}
