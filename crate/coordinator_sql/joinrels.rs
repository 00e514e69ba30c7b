//! Join order for three or more relations: PostgreSQL 15's `deconstruct_jointree`
//! (initsplan.c) for the subproblems, `make_rel_from_joinlist` and
//! `standard_join_search` (allpaths.c) with `join_search_one_level`,
//! `make_rels_by_clause_joins`, `make_rels_by_clauseless_joins`, `make_join_rel`,
//! `join_is_legal`, `have_relevant_joinclause` and `have_join_order_restriction`
//! (joinrels.c), `make_outerjoininfo` (initsplan.c) for the outer joins' ordering
//! restrictions, and equivalence classes (equivclass.c) for the join clauses an
//! inner join's equalities imply.
//!
//! The protocol, as PostgreSQL runs it:
//!
//! 1. The FROM list is flattened into base relations (range-table order) and
//!    *special joins* (`SpecialJoin`, PostgreSQL's `SpecialJoinInfo`): one per outer
//!    join that `reduce_outer_joins` leaves (a strict WHERE condition on a nullable
//!    side makes a LEFT join inner, a FULL join LEFT), and one per semi or anti join
//!    (the IN/EXISTS/NOT EXISTS sublinks `prepjointree::pull_up_sublinks` made joins:
//!    a semi join's quals are placed as an inner join's, into classes; its right side
//!    joins nothing but its left side, or, made unique, joins as an inner join:
//!    `join_is_legal`'s semi-join rules, `populate_joinrel_with_paths`' JOIN_SEMI
//!    case), each with its syntactic sides
//!    and the minimal sides (`min_lefthand`, `min_righthand`) that must be joined
//!    before it can be (identity 3 of optimizer/README lets `(a ⟕ b) ⟕ c ON Pbc`
//!    become `a ⟕ (b ⟕ c)`).
//! 2. Each condition is placed (`deconstruct_jointree`, `distribute_qual_to_rels`):
//!    on one relation that no outer join below it nulls, into that relation's scans
//!    (a foreign one's remote query); an equality of two such relations' columns
//!    joins an equivalence class (`EquivClass`), which gives one join clause between
//!    any two relations holding members (its first member on each side); anything
//!    else is a join clause evaluated at the first join relation that holds every
//!    relation it needs (for a condition reading a nullable side, that outer join's
//!    minimal sides too, `check_outerjoin_delay`: it must see the null-extended rows).
//! 3. The joinlist (`deconstruct_jointree`): the written JOINs of a FROM item fold
//!    into one list while both inputs of a JOIN have at most `join_collapse_limit`
//!    (8) entries together, else each input stays a subproblem (`join_collapse_limit =
//!    1` keeps the written order); a FULL join is always a subproblem; the FROM items
//!    fold while the list stays within `from_collapse_limit` (8) entries. Each
//!    subproblem is searched on its own (`make_rel_from_joinlist`) and joins the list
//!    above as one relation. A search of `geqo_threshold` (12) or more entries with
//!    `geqo` on is PostgreSQL's genetic search: refused by name; with `geqo` off the
//!    exhaustive search runs up to `MAX_SEARCH_ITEMS` (11) entries.
//! 4. Level 1 is the search's initial relations (a subproblem's join relation, or a
//!    base relation with its unordered path: its scans, an Append of its partitions,
//!    `Planner::side`; and, for a foreign or partitioned
//!    relation holding the query's ORDER BY columns, a path in that order (a remote
//!    ORDER BY, a Merge Append); a local table also has an ordered index path for
//!    each index whose key orders usefully above it (a merge key of a join to come,
//!    the query's ORDER BY: `index_order_paths`), and a partitioned one a path in
//!    such a column's order where some leaf reads in it on its own (an ordered Append
//!    of range partitions, else a Merge Append: `partition_order_paths`), which a
//!    Merge Join takes as a presorted side and a Nested Loop over it keeps. Level k joins a relation of
//!    level k-1 with an initial relation it has a join clause or a join order
//!    restriction with (`make_rels_by_clause_joins`), then level j
//!    with level k-j (bushy plans), each pair only if `join_is_legal`. A join relation
//!    (a set of base relations) keeps every path no other beats on cost and ordering
//!    (`add_path`: fuzzily, as `add_path_keeps` decides; an ordering beats none);
//!    each pair adds paths both ways round, every method `Method::tried` allows (the
//!    `enable_*` settings as PostgreSQL applies them). A join relation is sized
//!    once, when the first pair of sides in this order makes it (`build_join_rel`'s
//!    `set_joinrel_size_estimates` with that pair's restrictlist: `size_joinrel`),
//!    and every path of it has those rows whichever pair it joins (its join node
//!    carries them, `Plan`'s `joinrel_rows`; a pushed-down join's estimate replaces
//!    them for the paths after it, as `postgresGetForeignJoinPaths` sets
//!    `joinrel->rows`): a Merge Join over the
//!    cheapest-total paths and over each outer path already in a merge key's order, a
//!    Nested Loop over every outer path (keeping its order), a Hash Join over the
//!    cheapest-total paths. A Nested Loop's inner side may also be *parameterized*
//!    (`get_join_index_paths`, `param_inner_path`): a local table probed by its index
//!    with the outer row's key (`Index Cond: (b.id = s.big_id)`, a NestLoop parameter
//!    numbered by the inner relation), costed per probe with the loop count
//!    (`cost_index`'s `index_pages_fetched` over `loop_count`), and that side under a
//!    Memoize too (`get_memoize_path`, `memoize_path`: not for a semi or anti join),
//!    whose rescans `cost_memoize_rescan` prices by the outer key's distinct values.
//! 5. The upper levels (aggregate, ORDER BY, select list, LIMIT) go over each path of
//!    the final relation (no Sort over one already in the ORDER BY's order); the
//!    cheapest whole plan wins.
//!
//! Invariants: at most `MAX_RELS` (32) relations, a relation set being a `u32`
//! bitset; one search over at most `MAX_SEARCH_ITEMS` entries (2^11 - 1 join
//! relations at most), the join relations found by their set in a map
//! (`JoinRels`, PostgreSQL's `join_rel_hash`); the cost model's view of each relation
//! computed once per query (`CostRelations`); every join node has an equality between its sides as its
//! key, or is an inner join's Nested Loop without one (`match_unsorted_outer` alone:
//! no merge or hash clause), its conditions between the sides its Join Filter (none
//! for a CROSS JOIN, a FROM item with no join clause, or sides an equivalence class
//! with a constant links); when no join of a level is found, each relation of the
//! level below joins every initial relation so (`join_search_one_level`'s last-ditch
//! effort). An outer, semi or anti join without an equality is refused by name (its
//! Join Filter would decide matches), as are subqueries as members, a parenthesized
//! join with an alias, and one on the right of a JOIN but an inner join of inner
//! joins (`from_members`); a condition is evaluated exactly
//! once, at the lowest join relation that can evaluate it; an outer join's ON
//! clause only at the join that implements it; a path's recorded order is one its
//! plan delivers (a Merge Join's outer key for inner and LEFT joins, a Nested Loop's
//! outer side's).
//!
//! Where it departs from PostgreSQL: pathkeys are one ascending column (or the
//! query's ORDER BY as a whole), so a Merge Join merges on one key and no path is
//! ordered on several; the inner side of a join is a relation's cheapest-total path
//! or one ordered for a merge (a local table's ordered index path among them), or,
//! for a Nested Loop, a parameterized path of one local table only (no parameterized
//! join relation, foreign scan or Append of partitions here, no parameterized bitmap
//! path); a semi or anti join relation's rows are each path's own estimate (the
//! cost model computes them node by node, as `calc_joinrel_size_estimate` would from
//! that path's clauses), where PostgreSQL's unique-ified paths share the semi
//! join's; an equivalence class with a constant (`a.x =
//! b.y AND a.x = 5`) gives every member its restriction (`super::equivclass`) only
//! when every join is inner (with an outer join the constant stays on its relation
//! as written, and its equalities join as before: PostgreSQL's
//! `reconsider_outer_join_clauses` is not followed); a RIGHT
//! JOIN whose other side is a join takes that whole side as its minimal side; an
//! outer join's ON clause must be one equality between its sides (plus conditions on
//! its nullable side alone, pushed into that relation's scans). Two-relation joins
//! stay `planner::plan_join`'s. GEQO is not followed (refused by name), and the search
//! is bounded (`MAX_SEARCH_ITEMS` entries; `MAX_PATHS_COSTED` paths, above every
//! search PostgreSQL runs exhaustively by default; refused by name beyond). The page
//! plans a scenario file's query in slices of a few milliseconds, each planning it
//! again and taking its searches up where they stopped (`join_search_slices`), so
//! its main thread is never blocked long. As in PostgreSQL a path is a small record (`RelPath`): its
//! own nodes (the join node with its Sort, Materialize, filter and projection) over a
//! placeholder per input path, the input paths shared (`Rc`), its figures for the cost
//! model (`RelPath::costed`: a join path is costed from its inputs' figures,
//! `costsize::cost_path`, as `add_paths_to_joinrel` costs it from its inputs' costs
//! and rows), its rows and pathkeys; `add_path` keeps it or not; the plan tree is made
//! once, at the end, for the paths the upper levels weigh (`create_plan`). A base
//! relation's paths, a parameterized or memoized inner side, a pushed-down join and a
//! unique-ified side hold their whole plan (they are made once per relation). PostgreSQL
//! searches as many entries as `geqo` off and the collapse limits give it.
//! A pulled-up sublink nested in another's subquery is a chain member here, so a
//! collapse limit that would split such a join is refused by name.
//!
//! postgres_fdw's join pushdown (`postgresGetForeignJoinPaths`,
//! `super::postgres_fdw_join`) is tried once per join relation, for the first pair of
//! sides that makes it (as `joinrel->fdw_private` makes PostgreSQL do): two base
//! foreign tables on one server, or relations already pushed there (a join of three
//! or more is one Foreign Scan of nested joins). Whether or not `add_path` keeps it,
//! the pushed join is remembered (`RelInfo::fdw`) for the levels above, and for the
//! aggregate pushed over it (`add_foreign_grouping_paths`). With
//! `enable_partitionwise_join` and every relation partitioned alike, each child join
//! is searched the same way (partitionwise_joinrels.rs).

use sqlparser::ast::{self, TableFactor};
use sqlparser::tokenizer::Location;

use super::grouping_planner::{cheapest, group_pathkeys, grouping_candidates, input_pathkeys, Cand};
use super::*;
use crate::plan::costsize::CostedPath;
use std::rc::Rc;

/// Partitionwise join of three or more relations (`try_partitionwise_join` inside
/// the search): a child module, so it extends `JoinProblem`.
#[path = "partitionwise_joinrels.rs"]
mod partitionwise_joinrels;

/// A join search in slices, taken up where it stopped (the page's planning): a child
/// module, so it holds `JoinRels`.
#[path = "join_search_slices.rs"]
mod join_search_slices;
use join_search_slices::{Found, SearchCursor, Signature, Slot, StoppedSearch};
pub use join_search_slices::{KeptPlanning, KeptSearches};

/// The most base relations one query's join may have here: relation sets are `u32`
/// bitsets (`Relids`); refused beyond by name.
pub(super) const MAX_RELS: usize = 32;

/// The most items one `standard_join_search` runs over (a joinlist's length, after
/// the collapse limits): what PostgreSQL's exhaustive search reaches with its default
/// `geqo_threshold` (12: GEQO from there). With `geqo` off PostgreSQL searches any
/// number; the sandbox refuses a search beyond this by name (a star of 11 relations
/// costs 76,822 paths, 1.5 s natively in the dev profile: `MAX_PATHS_COSTED`).
pub(super) const MAX_SEARCH_ITEMS: usize = 11;

/// The most paths one query's join search may cost: a bound on memory only, above
/// every search PostgreSQL runs exhaustively by default (up to `MAX_SEARCH_ITEMS`
/// items, stars included). Natively (the CLI, the tests) and in the page's planning
/// of a scenario file's query, which runs in slices of a few milliseconds
/// (`join_search_slices`: the page's main thread is never blocked for more than about
/// 50 ms, issue 20). What the page plans at once, outside those slices (a setup
/// statement's query, `Session.fromSql` in the console), is bounded by
/// `MAX_PATHS_COSTED_AT_ONCE_IN_PAGE` instead.
///
/// Measured with `examples/join_search_bench.rs` (natively, paths costed per query:
/// stars of 4, 6, 8 and 10 local tables with indexes 188, 1,212, 6,736, 34,580; of 8,
/// 10 and 11 with foreign dimensions 3,593, 18,443, 40,972; chains of 8, 10 and 11
/// 1,206, 2,327 and 3,082) and `tests/e2e/join_search_bench.mjs` (the editor's wasm
/// module in Node): see `MAX_PATHS_COSTED_AT_ONCE_IN_PAGE` and the report of issue 23.
const MAX_PATHS_COSTED: usize = 200_000;

/// The page's bound on a search planned at once on its main thread (wasm, outside
/// `join_search_slices`): the paths a search costs in about 50 ms. Measured with
/// `tests/e2e/join_search_bench.mjs` (release wasm in Node, a 2-core machine under
/// heavy load, CPU time): a star of 6 local tables (1,212 paths) 33 ms, a chain of 8
/// (1,206) 22 ms, a star of 6 with foreign dimensions (647) 18 ms: 18 to 27 µs a
/// path. So 2,000 paths, at most about 55 ms. Sizing each join relation once
/// (`size_joinrel`) costs one path more per join relation (measured natively: star of
/// 6 1,243 paths, chain of 8 1,234, star of 6 with foreign dimensions 678; chain of 10
/// 2,372, star of 11 77,845): the same searches fit the bound.
const MAX_PATHS_COSTED_AT_ONCE_IN_PAGE: usize = 2_000;

/// The bound on this search's paths: `MAX_PATHS_COSTED`, or in the page outside a
/// planning in slices `MAX_PATHS_COSTED_AT_ONCE_IN_PAGE`.
fn max_paths_costed() -> usize {
    if cfg!(target_arch = "wasm32") && !join_search_slices::kept_planning() {
        MAX_PATHS_COSTED_AT_ONCE_IN_PAGE
    } else {
        MAX_PATHS_COSTED
    }
}

/// Why a search past `bound` is refused, where it runs.
fn paths_bound_reason(bound: usize) -> &'static str {
    if bound < MAX_PATHS_COSTED {
        "the page plans this statement at once on its main thread and stops a search where it would pass about \
         50 ms; the query section of a scenario file is planned in slices, and the CLI (`pgasync sql`) plans it"
    } else {
        "the sandbox's bound on a search's memory"
    }
}

thread_local! {
    /// How many paths the last join search of this thread costed (refused or not).
    static LAST_PATHS_COSTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many paths the last join search of this thread costed, for
/// `examples/join_search_bench.rs`, which sizes `MAX_PATHS_COSTED`.
pub fn last_search_paths_costed() -> usize {
    LAST_PATHS_COSTED.with(|c| c.get())
}

/// A path's order that is the query's ORDER BY (`RelPath::order`), whatever its keys.
const QUERY_ORDER: usize = usize::MAX;

/// A set of base relations, as PostgreSQL's `Relids` (bit i: the i-th in FROM order).
type Relids = u32;

fn overlap(a: Relids, b: Relids) -> bool {
    a & b != 0
}

fn subset(a: Relids, b: Relids) -> bool {
    a & !b == 0
}

/// How many base relations a FROM clause has, counting each join member and the
/// members of a parenthesized join.
pub(super) fn count_relations(s: &ast::Select) -> usize {
    fn factor(f: &TableFactor) -> usize {
        match f {
            TableFactor::NestedJoin { table_with_joins, .. } => item(table_with_joins),
            _ => 1,
        }
    }
    fn item(t: &ast::TableWithJoins) -> usize {
        factor(&t.relation) + t.joins.iter().map(|j| factor(&j.relation)).sum::<usize>()
    }
    s.from.iter().map(item).sum()
}

/// A relation of the join as written.
struct BaseRel<'r> {
    rel: &'r Relation,
    name: String,
    /// Its first column in the query's numbering (FROM order).
    first: usize,
    /// Its range-table index: each written JOIN adds an entry of its own after its
    /// right-hand relation (a pushed-down join's remote query names it `r<index>`).
    rt_index: usize,
}

/// An outer join that `reduce_outer_joins` left (`SpecialJoinInfo`): LEFT (RIGHT
/// joins are made LEFT by exchanging their sides) or FULL; or a semi or anti join
/// (an IN/EXISTS or NOT EXISTS sublink `pull_up_sublinks` made a join).
#[derive(Clone, Debug)]
struct SpecialJoin {
    jt: JoinType,
    syn_lhs: Relids,
    syn_rhs: Relids,
    min_lhs: Relids,
    min_rhs: Relids,
    /// Its ON clause between the sides (an equality), in the query's numbering. A
    /// semi join's equalities are equivalence classes' (`distribute_qual_to_rels`
    /// treats its quals as an inner join's): this is its first, for reference only.
    clause: Expr,
    /// A semi join whose right side may be made unique on its key and joined as an
    /// inner join (`create_unique_path` succeeds: `compute_semijoin_info` found
    /// equalities only between the sides; the sandbox's unique path takes one key).
    unique_ok: bool,
}

/// A condition over several relations, evaluated at the first join relation that
/// holds `relids` (for one over a nullable side, the outer join's scope too).
#[derive(Clone, Debug)]
struct JoinClause {
    expr: Expr,
    relids: Relids,
}

/// An equivalence class: columns an inner join's equalities make equal, in the order
/// the conditions named them (`ec_members`).
#[derive(Clone, Debug, Default)]
struct EquivClass {
    members: Vec<usize>,
}

/// One path of a relation (PostgreSQL's `Path`): how its plan is made, the columns
/// (query numbering) it returns in order, and its estimate. A join path holds its
/// own nodes only: `plan` is the join node with its wrappers (Sort, Materialize, its
/// filter and projection) over a placeholder for each input path (an `EmptyResult`
/// with the input's columns), and `inputs` are those paths, outer first; a path of
/// any other kind (a base relation's scans, a parameterized or memoized inner side, a
/// pushed-down join, a unique-ified side) holds its whole plan and no inputs. The
/// plan tree is made once, for the paths that reach the upper levels (`create_plan`).
#[derive(Clone, Debug)]
struct RelPath {
    plan: Plan,
    inputs: Vec<Rc<RelPath>>,
    cols: Vec<usize>,
    est: Estimate,
    /// Its figures for the cost model: a join path over it is costed from them, not by
    /// costing its plan again (`cost_path`).
    costed: CostedPath,
    /// Its pathkeys, as far as the search tracks them: ordered ascending (NULLs last)
    /// by this column (query numbering), or by any member of its equivalence class;
    /// `QUERY_ORDER`: in the query's ORDER BY's order.
    order: Option<usize>,
    /// Its plan's output columns (`Plan::output_columns`), found once: every join path
    /// over it puts a placeholder with them where its plan is (`cut_inputs`).
    out_columns: std::cell::OnceCell<Vec<Column>>,
}

/// A relation of the search (`RelOptInfo`): a base relation or a join of several.
#[derive(Clone)]
struct RelInfo {
    relids: Relids,
    /// Kept in order of total cost (`add_path`); shared with the join paths above
    /// that read them.
    paths: Vec<Rc<RelPath>>,
    /// postgres_fdw's `fdw_private` of the relation: its pushdown-safe scan (a base
    /// foreign table's plain scan, a join pushed to its server), kept whether or not
    /// `add_path` kept it, as a join above may push it further.
    fdw: Option<RelPath>,
    /// Was `GetForeignJoinPaths` called for this join relation? postgres_fdw tries
    /// only the first pair of sides the search meets (`joinrel->fdw_private` set).
    fdw_tried: bool,
    /// A join relation's rows (`joinrel->rows`), fixed when the first pair of
    /// sides makes it (`set_joinrel_size_estimates`, `size_joinrel`) and shared by
    /// every path made after (`Plan`'s `joinrel_rows` on its join node); replaced
    /// by postgres_fdw's estimate once it pushes the join (`postgresGetForeignJoinPaths`
    /// sets `joinrel->rows`). None: a base relation, or a semi or anti join (each
    /// path keeps its own estimate).
    rows: Option<f64>,
}

/// The query's join problem, once conditions are placed.
struct JoinProblem<'r> {
    coord: &'r Node,
    rels: Vec<BaseRel<'r>>,
    /// Columns in the query's numbering.
    n: usize,
    sjs: Vec<SpecialJoin>,
    ecs: Vec<EquivClass>,
    clauses: Vec<JoinClause>,
    /// Columns used above the join (select list, aggregates, ORDER BY).
    upper: Vec<usize>,
    /// Columns of the join clauses a pinned equivalence class made redundant
    /// (`carry_constants`), needed until the join holds the clause's relations.
    pinned_needed: Vec<(usize, Relids)>,
    /// The relations of each equivalence class a constant pins: they count as joined
    /// by it (`have_relevant_eclass_joinclause`), with no clause (a Nested Loop
    /// without one, `Plan::NestLoop`'s clauseless keys).
    pinned_ecs: Vec<Relids>,
    /// The query's ORDER BY (no aggregate above the join), and its one column when it
    /// is one ascending column (a Merge Join's order then is the query's).
    query_sort: Option<Vec<SortKey>>,
    query_key: Option<usize>,
    /// `root->query_pathkeys` (the GROUP BY keys' order, else ORDER BY's), over the
    /// query's numbering: a foreign base relation holding a member of each has a
    /// path sorted so remotely (`Planner::scan_pathkeys`).
    query_pathkeys: Option<Vec<SortKey>>,
    consider_startup: bool,
    /// The columns of the final scan/join target in its order (`columns_in_order`):
    /// each base relation's `reltarget` starts with these, and the top join
    /// relation's is that target (`apply_scanjoin_target_to_paths`).
    tlist_order: Vec<usize>,
    /// How many range-table entries the query has (the relations and each written
    /// JOIN): partitions' entries come after them.
    range_table: usize,
    /// The join search's subproblems (`deconstruct_jointree`).
    joinlist: Vec<JoinItem>,
    /// How many paths the search has costed so far (bounded by `MAX_PATHS_COSTED`).
    costed: std::cell::Cell<usize>,
    /// The rows of the join relation `make_join_rel` is adding paths to
    /// (`RelInfo::rows`), which `join_path` gives each join node it makes.
    joinrel_rows: std::cell::Cell<Option<f64>>,
    /// The first relation of the pair `make_join_rel` is joining (its `rel1`, after
    /// `join_is_legal`'s reversal): an equivalence class's clause names its member
    /// first on either path's side (`restrictlist`). 0: none.
    pair_first: std::cell::Cell<Relids>,
    /// The cost settings, read once for the search.
    params: CostParams,
    /// Each base relation's own conditions (`baserestrictinfo`), for its
    /// parameterized index paths (`param_inner_path`); set by `join_rel`.
    base_quals: std::cell::RefCell<Vec<Vec<Expr>>>,
    /// Which columns each join relation returns (`needed`, by column), found once per
    /// relation set: every path of the relation asks.
    needed_by_rel: std::cell::RefCell<std::collections::HashMap<Relids, Rc<[bool]>>>,
    /// Every relation's columns in the query's numbering (the names projections give).
    all_columns: std::cell::OnceCell<Vec<Column>>,
    /// Where the search is among the kept ones, and where it goes on (`join_rel`).
    slices: SliceState,
    at: Location,
}

/// A search's state for planning in slices (`join_search_slices`): its slot, the
/// remote estimates asked before it (a search that asks one is never stopped), the
/// subproblems searched so far (their tops, in order) and the next one's number, and
/// where the search under way goes on (set when resuming it, and when it stops).
#[derive(Default)]
struct SliceState {
    slot: std::cell::Cell<Option<Slot>>,
    asks: std::cell::Cell<u64>,
    done: std::cell::RefCell<Vec<usize>>,
    search_no: std::cell::Cell<usize>,
    cursor: std::cell::RefCell<Option<SearchCursor>>,
}

/// An entry of a joinlist (`deconstruct_jointree`'s output): a base relation (its
/// index in FROM order), or a subproblem whose own join search makes one relation
/// (`make_rel_from_joinlist`).
#[derive(Clone, Debug, PartialEq)]
enum JoinItem {
    Rel(usize),
    Sub(Vec<JoinItem>),
}

/// `deconstruct_jointree`'s joinlist for the FROM list: each FROM item's joins fold
/// left to right (a written join chain nests to the left), a JOIN's two inputs into
/// one list while together they have at most `join_limit` entries, else each input
/// stays a subproblem of its own (a lone entry is not wrapped); a FULL join is always
/// a subproblem of its two inputs (its order is forced there). A RIGHT join that
/// stays outer had its inputs exchanged (`reduce_outer_joins` makes it LEFT), so its
/// right side comes first. The FROM items then join one list while it stays within
/// `from_limit` entries (counting the items still to come); an item's list that would
/// exceed it stays a subproblem (one-entry lists always join).
fn deconstruct_jointree(
    members: &[Member],
    joins: &[WrittenJoin],
    from_limit: usize,
    join_limit: usize,
) -> Vec<JoinItem> {
    let part = |mut list: Vec<JoinItem>| if list.len() == 1 { list.remove(0) } else { JoinItem::Sub(list) };
    let items = members.iter().map(|m| m.2 + 1).max().unwrap_or(0);
    let mut joinlist = vec![];
    for item in 0..items {
        let Some(first) = members.iter().position(|m| m.2 == item) else { continue };
        let mut list = vec![JoinItem::Rel(first)];
        for j in joins.iter().filter(|j| j.item == item) {
            let (mut left, mut right) = (list, vec![JoinItem::Rel(j.pos)]);
            if j.jt != JoinType::Inner && overlap(j.lhs, 1 << j.pos) {
                std::mem::swap(&mut left, &mut right);
            }
            list = if j.jt == JoinType::Full {
                vec![JoinItem::Sub(vec![JoinItem::Sub(left), JoinItem::Sub(right)])]
            } else if left.len() + right.len() <= join_limit {
                left.extend(right);
                left
            } else {
                vec![part(left), part(right)]
            };
        }
        let remaining = items - item - 1;
        if list.len() <= 1 || joinlist.len() + list.len() + remaining <= from_limit {
            joinlist.extend(list);
        } else {
            joinlist.push(JoinItem::Sub(list));
        }
    }
    joinlist
}

/// The relations of a join search (`root->join_rel_list` with its hash): base
/// relations first (index i: the i-th in FROM order), then each join relation as
/// `make_join_rel` first builds it, found by its set of relations.
struct JoinRels {
    list: Vec<RelInfo>,
    by_relids: std::collections::HashMap<Relids, usize>,
}

impl JoinRels {
    fn new(base: Vec<RelInfo>) -> JoinRels {
        let by_relids = base.iter().enumerate().map(|(i, r)| (r.relids, i)).collect();
        JoinRels { list: base, by_relids }
    }

    /// `find_join_rel`.
    fn find(&self, relids: Relids) -> Option<usize> {
        self.by_relids.get(&relids).copied()
    }

    fn add(&mut self, rel: RelInfo) -> usize {
        self.by_relids.insert(rel.relids, self.list.len());
        self.list.push(rel);
        self.list.len() - 1
    }
}

/// A FROM list of three or more relations with inner, LEFT, RIGHT and FULL joins,
/// planned by `standard_join_search`.
pub(super) fn plan_join_search(
    coord: &Node,
    q: &ast::Query,
    s: &ast::Select,
    text: &str,
    servers: &mut Vec<String>,
    at: Location,
) -> Result<Planned, FrontError> {
    let n_rels = count_relations(s);
    if n_rels > MAX_RELS {
        return Err(FrontError::unsupported(
            format!("a join of {n_rels} relations (the sandbox's relation sets hold {MAX_RELS})"),
            at,
        ));
    }
    // The cost model's relations are computed once for the whole search.
    let _kept = coord.cost_relations.scope();
    let limit = |name: &str| coord.setting(name).and_then(|v| v.parse::<usize>().ok()).unwrap_or(8);
    let members = from_members(s, limit("join_collapse_limit"), at)?;
    let rels = base_rels(coord, &members, at)?;
    let range_table = super::super::pullup_subquery::range_table_len(
        members.len() + members.iter().filter(|m| m.1.is_some()).count(),
    );
    let (l, columns, on, where_conj) = bind_conditions(q, s, text, &members, &rels, at)?;
    let numbering =
        Numbering { firsts: rels.iter().map(|r| r.first).collect(), n: rels.iter().map(|r| r.rel.columns.len()).sum() };
    // EXPLAIN's column order: the relations' reltargets over the join clauses as
    // written (each JOIN's ON, then WHERE).
    let clauses: Vec<Expr> = on.iter().flatten().chain(&where_conj).cloned().collect();
    let names: Vec<(String, usize, Vec<String>)> = rels
        .iter()
        .map(|r| (r.name.clone(), r.first, r.rel.columns.iter().map(|c| c.name.clone()).collect()))
        .collect();
    let mut joins = written_joins(&members, on);
    reduce_outer_joins(&mut joins, &where_conj, &numbering);
    // The equalities that may make equivalence classes: WHERE's and the ON conditions
    // of inner and semi joins (an outer join's, its outer side's, may not).
    let ec_clauses: Vec<Expr> = joins
        .iter()
        .filter(|j| matches!(j.jt, JoinType::Inner | JoinType::Semi))
        .flat_map(|j| j.quals.iter().cloned())
        .chain(where_conj.iter().cloned())
        .collect();
    let targets =
        super::tlist_order::reltarget_columns(&l, &clauses, &ec_clauses, numbering.n, &|c| numbering.rel_of(c));
    let joinlist = deconstruct_jointree(&members, &joins, limit("from_collapse_limit"), limit("join_collapse_limit"));
    let (where_conj, pinned_needed, pinned_ecs) = carry_constants(&mut joins, where_conj, &rels, &numbering);
    let placed = place_conditions(&joins, &where_conj, &numbering, at)?;
    refuse_inequality_index_params(coord, &placed.clauses, &rels, &numbering, at)?;
    if placed.nested_semi && joinlist.iter().any(|i| matches!(i, JoinItem::Sub(_))) {
        return Err(FrontError::unsupported(
            "join_collapse_limit or from_collapse_limit splitting a join with an IN/EXISTS sublink nested in a \
             pulled-up subquery (its join tree is not a chain)",
            at,
        ));
    }
    let n = numbering.n;
    let upper = {
        let mut u = used_columns(&Layers { filter: None, ..l.clone_layers() }, n);
        u.sort_unstable();
        u
    };
    let problem = JoinProblem {
        coord,
        rels,
        n,
        sjs: placed.sjs,
        ecs: placed.ecs,
        clauses: placed.clauses,
        upper,
        pinned_needed,
        pinned_ecs,
        query_sort: l.sort.clone().filter(|_| l.agg.is_none()),
        query_key: match (l.sort.as_deref(), &l.agg) {
            (Some([SortKey { expr: Expr::Col(c), desc: false }]), None) => Some(*c),
            _ => None,
        },
        query_pathkeys: query_pathkeys(&l, &where_conj),
        consider_startup: matches!(l.limit, Some((_, Some(_)))),
        tlist_order: columns_in_order(&l, n),
        range_table,
        joinlist,
        costed: Default::default(),
        joinrel_rows: Default::default(),
        pair_first: Default::default(),
        params: CostParams::from_settings(&|n| coord.setting(n).map(str::to_string)),
        base_quals: Default::default(),
        needed_by_rel: Default::default(),
        all_columns: Default::default(),
        slices: Default::default(),
        at,
    };
    let searched = problem.search(&placed.base_quals, &l, &columns, servers);
    LAST_PATHS_COSTED.with(|c| c.set(problem.costed.get()));
    let mut planned = searched?;
    let rels: Vec<super::tlist_order::BaseRelName> = names
        .iter()
        .map(|(name, first, columns)| super::tlist_order::BaseRelName { name, first: *first, columns: columns.clone() })
        .collect();
    super::tlist_order::mark_scans(&mut planned.plan, &rels, &targets);
    Ok(planned)
}

/// Equivalence classes with a constant (`super::equivclass`), when every join is
/// inner: the ON conditions join WHERE's (one level, as `deconstruct_jointree` sees
/// inner joins) and each pinned class's constant goes to all its members. Returns
/// the conditions, the columns the dropped join clauses still need (with their
/// relations), and each pinned class's relations (joins by them have no clause: a
/// Nested Loop without one). Kept only if the equalities left and the pinned classes
/// connect every relation: else the conditions stay as written.
fn carry_constants(
    joins: &mut [WrittenJoin],
    where_conj: Vec<Expr>,
    rels: &[BaseRel],
    numbering: &Numbering,
) -> (Vec<Expr>, Vec<(usize, Relids)>, Vec<Relids>) {
    if joins.iter().any(|j| j.jt != JoinType::Inner) {
        return (where_conj, vec![], vec![]);
    }
    let all: Vec<Expr> = joins.iter().flat_map(|j| j.quals.iter().cloned()).chain(where_conj.iter().cloned()).collect();
    let ty = |c: usize| {
        let r = &rels[numbering.rel_of(c)];
        &r.rel.columns[c - r.first].ty
    };
    let Some(derived) = super::equivclass::reconsider_constants(&all, &|x, y| ty(x) == ty(y)) else {
        return (where_conj, vec![], vec![]);
    };
    let col_relids = |c: usize| -> Relids { 1 << numbering.rel_of(c) };
    let pinned: Vec<Relids> =
        derived.pinned_classes.iter().map(|cols| cols.iter().fold(0, |acc, &c| acc | col_relids(c))).collect();
    // The relations the equalities between two of them connect (a union of relid sets).
    let mut groups: Vec<Relids> = (0..rels.len()).map(|i| 1 << i).collect();
    let links = derived.conjuncts.iter().filter(|c| is_col_eq_col(c)).map(|c| numbering.relids_of(c));
    for r in links.chain(pinned.iter().copied()) {
        if r.count_ones() >= 2 {
            let joined = groups.iter().filter(|&&g| overlap(g, r)).fold(0, |acc, g| acc | g);
            groups.retain(|&g| !overlap(g, r));
            groups.push(joined);
        }
    }
    if groups.len() != 1 {
        return (where_conj, vec![], vec![]);
    }
    for j in joins.iter_mut() {
        j.quals.clear();
    }
    let needed = derived
        .still_needed
        .iter()
        .flat_map(|&(a, b)| [(a, col_relids(a) | col_relids(b)), (b, col_relids(a) | col_relids(b))]);
    (derived.conjuncts, needed.collect(), pinned)
}

/// A member of the FROM list: the relation as written, the join that brings it in
/// (its type and ON condition; None for a FROM item's first relation), its FROM
/// item, and its range-table index.
/// A CROSS JOIN is an inner join without an ON condition (None).
type Member<'q> = (&'q TableFactor, Option<(JoinType, Option<ast::Expr>)>, usize, usize);

/// The FROM list's relations in order (the range table's), refusing the joins the
/// search does not plan. A parenthesized join is its relations in place
/// (`transformFromClauseItem` numbers a join's left side, its right side, then the
/// join itself): on the left of a JOIN it is the chain the parentheses group anyway
/// (`(a JOIN b ON x) JOIN c ON y` is `a JOIN b ON x JOIN c ON y`); on the right
/// (`a JOIN (b JOIN c ON y) ON x`) an inner join of inner joins only, whose relations
/// `deconstruct_jointree` folds into one list with the others while
/// `join_collapse_limit` allows (`join_limit`; refused beyond): its conditions are
/// placed first (`deconstruct_recurse` distributes the nested join's before its own),
/// so the JOIN's ON joins the group's last member's.
fn from_members(s: &ast::Select, join_limit: usize, at: Location) -> Result<Vec<Member<'_>>, FrontError> {
    let mut members: Vec<Member> = vec![];
    let mut rt = 0;
    for (item, f) in s.from.iter().enumerate() {
        let walk = Walk { item, join_limit: join_limit.max(1), relations: count_relations(s), at };
        walk.members(&f.relation, &f.joins, None, &mut members, &mut rt)?;
    }
    Ok(members)
}

/// One FROM item walked for `from_members`.
struct Walk {
    item: usize,
    join_limit: usize,
    relations: usize,
    at: Location,
}

impl Walk {
    /// The members of `relation` and its `joins` (a JOIN chain), the first brought in
    /// by `lead` (the join a right-nested group stands for, or None).
    fn members<'q>(
        &self,
        relation: &'q TableFactor,
        joins: &'q [ast::Join],
        lead: Option<(JoinType, Option<ast::Expr>)>,
        members: &mut Vec<Member<'q>>,
        rt: &mut usize,
    ) -> Result<(), FrontError> {
        match relation {
            TableFactor::NestedJoin { table_with_joins: t, alias: None } => {
                self.members(&t.relation, &t.joins, lead, members, rt)?
            }
            TableFactor::NestedJoin { alias: Some(_), .. } => return Err(self.aliased()),
            _ => {
                *rt += 1;
                members.push((relation, lead, self.item, *rt));
            }
        }
        for j in joins {
            let (jt, on) = join_of(j, self.at)?;
            match &j.relation {
                TableFactor::NestedJoin { table_with_joins: t, alias: None } => {
                    if jt != JoinType::Inner || !all_inner(t) || self.relations > self.join_limit {
                        return Err(FrontError::unsupported(
                            "a parenthesized join on the right of a JOIN other than an inner join of inner joins \
                             within join_collapse_limit (PostgreSQL keeps its join tree: a subproblem or an outer \
                             join's side)",
                            self.at,
                        ));
                    }
                    self.members(&t.relation, &t.joins, Some((JoinType::Inner, None)), members, rt)?;
                    if let (Some(on), Some((_, Some((_, last_on)), ..))) = (on, members.last_mut()) {
                        *last_on = Some(match last_on.take() {
                            None => on,
                            Some(before) => ast::Expr::BinaryOp {
                                left: Box::new(ast::Expr::Nested(Box::new(before))),
                                op: ast::BinaryOperator::And,
                                right: Box::new(ast::Expr::Nested(Box::new(on))),
                            },
                        });
                    }
                }
                TableFactor::NestedJoin { alias: Some(_), .. } => return Err(self.aliased()),
                r => {
                    *rt += 1;
                    members.push((r, Some((jt, on)), self.item, *rt));
                }
            }
            // The join's own range-table entry, after its two sides'.
            *rt += 1;
        }
        Ok(())
    }

    fn aliased(&self) -> FrontError {
        FrontError::unsupported(
            "a parenthesized join with an alias (its columns named through the join's alias)",
            self.at,
        )
    }
}

/// Are all the joins of a parenthesized join (and of those nested in it) inner or
/// CROSS joins?
fn all_inner(t: &ast::TableWithJoins) -> bool {
    let nested_ok = |f: &TableFactor| match f {
        TableFactor::NestedJoin { table_with_joins, .. } => all_inner(table_with_joins),
        _ => true,
    };
    nested_ok(&t.relation)
        && t.joins.iter().all(|j| {
            matches!(j.join_operator, ast::JoinOperator::Inner(_) | ast::JoinOperator::CrossJoin)
                && nested_ok(&j.relation)
        })
}

/// A written join's type and ON condition (None: a CROSS JOIN).
pub(super) fn join_of(j: &ast::Join, at: Location) -> Result<(JoinType, Option<ast::Expr>), FrontError> {
    let (jt, c) = match &j.join_operator {
        // `a CROSS JOIN b`: an inner join without a condition (its own range-table
        // entry, as any written JOIN).
        ast::JoinOperator::CrossJoin => return Ok((JoinType::Inner, None)),
        ast::JoinOperator::Inner(c) => (JoinType::Inner, c),
        ast::JoinOperator::LeftOuter(c) => (JoinType::Left, c),
        ast::JoinOperator::RightOuter(c) => (JoinType::Right, c),
        ast::JoinOperator::FullOuter(c) => (JoinType::Full, c),
        // Only from pull_up_sublinks (prepjointree.rs), which refuses them written.
        ast::JoinOperator::LeftSemi(c) => (JoinType::Semi, c),
        ast::JoinOperator::LeftAnti(c) => (JoinType::Anti, c),
        _ => {
            return Err(FrontError::unsupported(
                "semi, anti, LATERAL and other joins (only inner, CROSS, LEFT, RIGHT and FULL joins)",
                at,
            ))
        }
    };
    let ast::JoinConstraint::On(e) = c else {
        return Err(FrontError::unsupported("JOIN … USING and NATURAL JOIN (write ON a.x = b.y)", at));
    };
    Ok((jt, Some(e.clone())))
}

/// The catalog relation of each member, and where its columns start in the query's
/// numbering (the members' columns one after another).
fn base_rels<'r>(coord: &'r Node, members: &[Member], at: Location) -> Result<Vec<BaseRel<'r>>, FrontError> {
    let mut rels: Vec<BaseRel> = vec![];
    let mut first = 0;
    for &(f, _, _, rt_index) in members {
        let (rel, name) = join_member(coord, f, at)?;
        if rels.iter().any(|r| r.name == name) {
            return Err(FrontError::at(format!("table name \"{name}\" specified more than once"), at));
        }
        // (A pulled-up subquery's relation: its index in PostgreSQL's range table.)
        let rt_index = super::super::pullup_subquery::rt_index(&name, rt_index);
        rels.push(BaseRel { rel, name, first, rt_index });
        first += rel.columns.len();
    }
    Ok(rels)
}

/// The query bound by the shard planner over the members' columns: its layers, its
/// output columns, each join's ON conjuncts and WHERE's. The ON conditions and WHERE
/// are bound as one AND (in that order) and told apart again by their counts.
fn bind_conditions(
    q: &ast::Query,
    s: &ast::Select,
    text: &str,
    members: &[Member],
    rels: &[BaseRel],
    at: Location,
) -> Result<(Layers, Vec<Column>, Vec<Vec<Expr>>, Vec<Expr>), FrontError> {
    let mut parts: Vec<ast::Expr> = vec![];
    let mut counts: Vec<usize> = vec![];
    for (_, j, _, _) in members {
        if let Some((_, e)) = j {
            counts.push(e.as_ref().map_or(0, ast_conjuncts));
            parts.extend(e.iter().cloned());
        }
    }
    let where_count = s.selection.as_ref().map_or(0, ast_conjuncts);
    if let Some(w) = &s.selection {
        parts.push(w.clone());
    }
    let mut q2 = q.clone();
    if let SetExpr::Select(s2) = q2.body.as_mut() {
        s2.from.truncate(1);
        s2.from[0].joins.clear();
        s2.selection = parts.into_iter().map(|e| ast::Expr::Nested(Box::new(e))).reduce(|a, b| ast::Expr::BinaryOp {
            left: Box::new(a),
            op: ast::BinaryOperator::And,
            right: Box::new(b),
        });
    }
    let list: Vec<(String, String, Vec<Column>)> =
        rels.iter().map(|r| (r.name.clone(), r.rel.name.clone(), r.rel.columns())).collect();
    let (logical, columns) = crate::shard_sql::plan_select_join(&q2, text, &list).map_err(|e| sql_error(e, text))?;
    let mut l = peel(logical).map_err(|m| FrontError::at(format!("internal error: {m}"), at))?;
    if let Some(f) = l.filter.as_mut() {
        let types: Vec<crate::plan::SqlType> = rels.iter().flat_map(|r| r.rel.columns.iter().map(|c| c.ty)).collect();
        f.widen_saop_to_columns(&types);
    }
    let conjuncts = l.filter.as_ref().map(split_and).unwrap_or_default();
    if conjuncts.len() != counts.iter().sum::<usize>() + where_count {
        return Err(FrontError::unsupported(
            "constant conditions in a join of several relations (PostgreSQL folds them; write the join without them)",
            at,
        ));
    }
    let mut on: Vec<Vec<Expr>> = vec![];
    let mut rest = conjuncts.as_slice();
    for &k in &counts {
        on.push(rest[..k].to_vec());
        rest = &rest[k..];
    }
    Ok((l, columns, on, rest.to_vec()))
}

/// The query's column numbering: where each member's columns start, and how many
/// there are in all.
struct Numbering {
    firsts: Vec<usize>,
    n: usize,
}

impl Numbering {
    /// The member a column of the query's numbering belongs to.
    fn rel_of(&self, c: usize) -> usize {
        self.firsts.iter().rposition(|&f| f <= c).unwrap_or(0)
    }

    /// The members an expression reads.
    fn relids_of(&self, e: &Expr) -> Relids {
        columns_of(e, self.n).iter().fold(0, |acc, &c| acc | 1 << self.rel_of(c))
    }

    /// The members the strict conditions among `quals` read (a condition that cannot
    /// be true with a NULL in a column it reads: `may_accept_null`).
    fn strict_relids(&self, quals: &[Expr]) -> Relids {
        quals.iter().filter(|c| !may_accept_null(c)).fold(0, |acc, c| acc | self.relids_of(c))
    }
}

/// A join as written, left to right in its FROM item (RIGHT made LEFT by exchanging
/// its sides), with its type once `reduce_outer_joins` has run.
#[derive(Clone, Debug)]
struct WrittenJoin {
    /// The position of the member it brings in, and its FROM item: what is below it.
    pos: usize,
    item: usize,
    jt: JoinType,
    lhs: Relids,
    rhs: Relids,
    quals: Vec<Expr>,
}

/// Each join of the FROM list: its left side is what its FROM item joined before it.
fn written_joins(members: &[Member], on: Vec<Vec<Expr>>) -> Vec<WrittenJoin> {
    let mut on = on.into_iter();
    let mut joins = vec![];
    for (i, (_, jo, item, _)) in members.iter().enumerate() {
        let Some((jt, _)) = jo else { continue };
        let before =
            members[..i].iter().enumerate().filter(|(_, m)| m.2 == *item).fold(0 as Relids, |a, (k, _)| a | 1 << k);
        let me: Relids = 1 << i;
        let quals = on.next().unwrap_or_default();
        let (jt, lhs, rhs) = if *jt == JoinType::Right { (JoinType::Left, me, before) } else { (*jt, before, me) };
        joins.push(WrittenJoin { pos: i, item: *item, jt, lhs, rhs, quals });
    }
    joins
}

/// `reduce_outer_joins`, top down: a strict condition above an outer join (WHERE, or
/// the ON of an inner join above it in its FROM item, one reduced already included)
/// on its nullable side removes the null-extended rows, so that side is not
/// nullable: a LEFT join becomes inner, a FULL one LEFT (or inner).
fn reduce_outer_joins(joins: &mut [WrittenJoin], where_conj: &[Expr], numbering: &Numbering) {
    let where_strict = numbering.strict_relids(where_conj);
    for k in (0..joins.len()).rev() {
        let above = joins[k + 1..]
            .iter()
            .filter(|x| x.item == joins[k].item && x.jt == JoinType::Inner)
            .fold(where_strict, |acc, x| acc | numbering.strict_relids(&x.quals));
        let j = &mut joins[k];
        let (lhs_forced, rhs_forced) = (overlap(above, j.lhs), overlap(above, j.rhs));
        match j.jt {
            JoinType::Left if rhs_forced => j.jt = JoinType::Inner,
            JoinType::Full => match (lhs_forced, rhs_forced) {
                (true, true) => j.jt = JoinType::Inner,
                (true, false) => j.jt = JoinType::Left,
                (false, true) => (j.jt, j.lhs, j.rhs) = (JoinType::Left, j.rhs, j.lhs),
                (false, false) => {}
            },
            _ => {}
        }
    }
}

/// Where the conditions go (`deconstruct_jointree`): each relation's own conditions,
/// the special joins, the equivalence classes and the other join clauses.
struct Placed {
    base_quals: Vec<Vec<Expr>>,
    sjs: Vec<SpecialJoin>,
    ecs: Vec<EquivClass>,
    clauses: Vec<JoinClause>,
    /// Is a semi or anti join nested in another's right side (`nested_semi_join`)?
    nested_semi: bool,
}

/// Places every condition (`distribute_qual_to_rels`): an outer join's ON clause
/// becomes its special join's (conditions on its nullable relation alone go into
/// that relation's scans); the inner-level conditions, each inner join's ON in FROM
/// order, then WHERE, go as the module's doc says.
fn place_conditions(
    joins: &[WrittenJoin],
    where_conj: &[Expr],
    numbering: &Numbering,
    at: Location,
) -> Result<Placed, FrontError> {
    let mut base_quals: Vec<Vec<Expr>> = vec![vec![]; numbering.firsts.len()];
    let mut push_base = |c: Expr, r: Relids| {
        let i = r.trailing_zeros() as usize;
        let first = numbering.firsts[i];
        base_quals[i].push(c.map_cols(&|k| k - first));
    };
    // Each special join, with its position and FROM item (what is below it).
    let mut sjs: Vec<SpecialJoin> = vec![];
    let mut sj_at: Vec<(usize, usize)> = vec![];
    let mut nested_semi = false;
    for j in joins.iter().filter(|j| j.jt != JoinType::Inner) {
        let (j, nest) = nested_semi_join(j, &sjs, numbering);
        nested_semi |= nest.is_some();
        let j = &j;
        // The joins below it (`make_outerjoininfo` reads `join_info_list`). A join
        // nested in an earlier one's right side is below that one: PostgreSQL's
        // `deconstruct_jointree` meets it first, so the joins it is nested in are not
        // among its lower joins (else a semi join's quals over its own left side
        // would take the outer join's left side into its minimal left side).
        let lower: Vec<SpecialJoin> =
            sjs.iter().filter(|x| !nest.is_some_and(|inside| subset(inside, x.syn_rhs))).cloned().collect();
        if j.jt == JoinType::Semi {
            sjs.push(semi_join_info(j, numbering, &lower, at)?);
        } else {
            let (clause, on_base) = outer_join_clause(j, numbering, at)?;
            for c in on_base {
                let r = numbering.relids_of(&c);
                push_base(c, r);
            }
            let clause_relids = numbering.relids_of(&clause);
            let sj = make_outerjoininfo((j.jt, j.lhs, j.rhs), clause, clause_relids, &lower);
            sjs.push(sj);
        }
        sj_at.push((j.pos, j.item));
        // The joins whose right side it is nested in take it in: a semi or anti join
        // above a lower one in its right side keeps it below (`make_outerjoininfo`
        // adds the lower one's sides to its minimal right side).
        if let Some(inside) = nest {
            for x in sjs.iter_mut().filter(|x| subset(inside, x.syn_rhs)) {
                x.syn_rhs |= j.rhs;
                x.min_rhs |= j.rhs;
            }
        }
    }
    // check_outerjoin_delay: a condition reading a relation an outer join below it
    // nulls is evaluated no lower than that join (its minimal sides), and so on for
    // the relations those bring in. An outer join is below a WHERE condition, and
    // below an ON condition when earlier in the same FROM item (joins nest to the left).
    // A semi join nulls nothing (its right side is not read above it); a join nested
    // in a special join's right side is below it, not above.
    let delay = |r: Relids, written: Option<(usize, usize)>| -> Relids {
        let below = |k: usize| {
            written
                .is_none_or(|(pos, item)| sj_at[k].1 == item && sj_at[k].0 < pos && !overlap(sjs[k].syn_rhs, 1 << pos))
        };
        let mut scope = r;
        loop {
            let more = sjs
                .iter()
                .enumerate()
                .filter(|&(k, sj)| {
                    sj.jt != JoinType::Semi
                        && below(k)
                        && (overlap(scope, sj.syn_rhs) || (sj.jt == JoinType::Full && overlap(scope, sj.syn_lhs)))
                })
                .fold(scope, |acc, (_, sj)| acc | sj.min_lhs | sj.min_rhs);
            if more == scope {
                return scope;
            }
            scope = more;
        }
    };
    // A semi join's quals are placed as an inner join's (`deconstruct_recurse` gives
    // JOIN_SEMI no `ojscope`): on one relation, into classes, or as join clauses.
    let inner_quals = joins
        .iter()
        .filter(|j| matches!(j.jt, JoinType::Inner | JoinType::Semi))
        .flat_map(|j| j.quals.iter().map(move |c| (c.clone(), Some((j.pos, j.item)))))
        .chain(where_conj.iter().map(|c| (c.clone(), None)));
    let mut ecs: Vec<EquivClass> = vec![];
    let mut clauses: Vec<JoinClause> = vec![];
    for (c, written) in inner_quals {
        if is_pseudoconstant(&c) || columns_of(&c, numbering.n).is_empty() {
            return Err(FrontError::unsupported(
                "a condition without columns in a join of several relations (a gating qual)",
                at,
            ));
        }
        let r = numbering.relids_of(&c);
        let scope = delay(r, written);
        let equality = match &c {
            Expr::Bin(BinOp::Eq, x, y) => match (x.as_ref(), y.as_ref()) {
                (Expr::Col(a), Expr::Col(b)) => Some((*a, *b)),
                _ => None,
            },
            _ => None,
        };
        if scope == r && r.count_ones() == 1 {
            push_base(c, r);
        } else if let (true, 2, Some((a, b))) = (scope == r, r.count_ones(), equality) {
            add_to_eclass(&mut ecs, a, b);
        } else {
            clauses.push(JoinClause { relids: scope, expr: c });
        }
    }
    // An equality with an expression for a side (`a.x = b.y + 1`) is a merge and hash
    // clause to PostgreSQL (`check_hashjoinable`: its sides read disjoint relations),
    // which the sandbox's keys (column = column) are not: where no equality of
    // columns links its two sides as well, its join would be a Nested Loop here and a
    // Hash or Merge Join there, so it is refused by name.
    for k in &clauses {
        let Some((l, r)) = expression_equality_sides(&k.expr, numbering) else { continue };
        let linked = |x: Relids| overlap(x, l) && overlap(x, r);
        let ec_links =
            ecs.iter().any(|ec| linked(ec.members.iter().fold(0 as Relids, |acc, &c| acc | 1 << numbering.rel_of(c))));
        let clause_links = clauses.iter().any(|o| is_col_eq_col(&o.expr) && linked(numbering.relids_of(&o.expr)));
        if !ec_links && !clause_links {
            return Err(FrontError::unsupported(
                "a join key that is an expression (an equality between two relations with an expression for a side, \
                 as f.id = loc.id + 500): the sandbox joins on column = column only",
                at,
            ));
        }
    }
    Ok(Placed { base_quals, sjs, ecs, clauses, nested_semi })
}

/// A join clause comparing two relations' columns by `<`, `<=`, `>` or `>=` where one
/// is a local table's indexed column: PostgreSQL's `match_unsorted_outer` weighs a
/// Nested Loop over that table's Index Scan parameterized by the clause (`Index
/// Cond: (id > b.id)`, `build_index_paths` takes any btree operator), which the
/// sandbox's parameterized paths (equalities only) do not have: refused by name
/// rather than planned without that path.
fn refuse_inequality_index_params(
    coord: &Node,
    clauses: &[JoinClause],
    rels: &[BaseRel],
    numbering: &Numbering,
    at: Location,
) -> Result<(), FrontError> {
    // A local table's index on the column, or a local partition's (a parameterized
    // Append of its partitions' paths).
    fn has_index(coord: &Node, rel: &Relation, col: usize, depth: usize) -> bool {
        match &rel.kind {
            RelKind::Table(t) => t.index_on(col).is_some(),
            RelKind::Partitioned { partitions, .. } if depth < 8 => {
                partitions.iter().filter_map(|p| coord.relation(p)).any(|p| has_index(coord, p, col, depth + 1))
            }
            _ => false,
        }
    }
    let indexed = |c: usize| {
        let b = &rels[numbering.rel_of(c)];
        has_index(coord, b.rel, c - b.first, 0)
    };
    for k in clauses {
        let Expr::Bin(BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq, x, y) = &k.expr else { continue };
        let (Expr::Col(a), Expr::Col(b)) = (x.as_ref(), y.as_ref()) else { continue };
        if numbering.rel_of(*a) != numbering.rel_of(*b) && (indexed(*a) || indexed(*b)) {
            return Err(FrontError::unsupported(
                "a join by an inequality on a local table's indexed column (PostgreSQL weighs a Nested Loop over \
                 an Index Scan parameterized by it, Index Cond: (id > b.id); the sandbox's parameterized index \
                 paths take equalities only)",
                at,
            ));
        }
    }
    Ok(())
}

/// The relations of each side of an equality whose sides read disjoint relations,
/// one side not a plain column (`a.x = b.y + 1`); None for any other condition.
fn expression_equality_sides(c: &Expr, numbering: &Numbering) -> Option<(Relids, Relids)> {
    let Expr::Bin(BinOp::Eq, x, y) = c else { return None };
    if matches!((x.as_ref(), y.as_ref()), (Expr::Col(_), Expr::Col(_))) {
        return None;
    }
    let (l, r) = (numbering.relids_of(x), numbering.relids_of(y));
    (l != 0 && r != 0 && !overlap(l, r)).then_some((l, r))
}

/// An outer join's ON condition: one equality between its sides (its clause), and
/// conditions on its nullable relation alone (into that relation's scans: they
/// decide matches); anything else is refused, naming it.
fn outer_join_clause(j: &WrittenJoin, numbering: &Numbering, at: Location) -> Result<(Expr, Vec<Expr>), FrontError> {
    let (cross, one_side): (Vec<Expr>, Vec<Expr>) = j.quals.iter().cloned().partition(|c| {
        let r = numbering.relids_of(c);
        overlap(r, j.lhs) && overlap(r, j.rhs)
    });
    let [clause] = cross.as_slice() else {
        return Err(FrontError::unsupported(
            "an outer join's ON clause with other than one equality between its sides (a Join Filter deciding \
             matches)",
            at,
        ));
    };
    if !is_col_eq_col(clause) {
        return Err(FrontError::unsupported("a join without an equality between its two relations", at));
    }
    for c in &one_side {
        let r = numbering.relids_of(c);
        if !(matches!(j.jt, JoinType::Left | JoinType::Anti) && r.count_ones() == 1 && subset(r, j.rhs)) {
            return Err(FrontError::unsupported(
                "an outer join's ON condition other than its key over the preserved side or both sides (a Join \
                 Filter deciding matches); put it in WHERE or in a subquery",
                at,
            ));
        }
    }
    Ok((clause.clone(), one_side))
}

/// A semi or anti join whose quals read, besides its own relation, only relations of
/// an earlier semi or anti join's right side is nested in that side
/// (`pull_up_sublinks` writes `a ⋉ (b ⋉ c)`, a sublink inside a pulled-up subquery
/// reading the subquery's relation, as `a ⋉ b ⋉ c` with c's condition over b and c:
/// in a flat chain b could not be read after its semi join). Its left side is then
/// that right side (the innermost holding what it reads); returned with it.
fn nested_semi_join(j: &WrittenJoin, sjs: &[SpecialJoin], numbering: &Numbering) -> (WrittenJoin, Option<Relids>) {
    let mut j = j.clone();
    if !matches!(j.jt, JoinType::Semi | JoinType::Anti) {
        return (j, None);
    }
    let reads = j.quals.iter().fold(0, |acc, c| acc | numbering.relids_of(c)) & !j.rhs;
    let inside = sjs
        .iter()
        .filter(|x| matches!(x.jt, JoinType::Semi | JoinType::Anti) && reads != 0 && subset(reads, x.syn_rhs))
        .map(|x| x.syn_rhs)
        .min_by_key(|r| r.count_ones());
    if let Some(r) = inside {
        j.lhs = r;
    }
    (j, inside)
}

/// A semi join's `SpecialJoinInfo` (`make_outerjoininfo` for JOIN_SEMI over the
/// relids all its quals read): it needs an equality between its sides (a Nested Loop
/// with a Join Filter alone is not planned here); its right side can be made unique
/// when that equality is its only condition between the sides (`compute_semijoin_info`).
fn semi_join_info(
    j: &WrittenJoin,
    numbering: &Numbering,
    lower: &[SpecialJoin],
    at: Location,
) -> Result<SpecialJoin, FrontError> {
    let cross: Vec<&Expr> = j
        .quals
        .iter()
        .filter(|c| {
            let r = numbering.relids_of(c);
            overlap(r, j.lhs) && overlap(r, j.rhs)
        })
        .collect();
    let Some(clause) = cross.iter().find(|c| is_col_eq_col(c)) else {
        return Err(FrontError::unsupported(
            "an IN/EXISTS subquery pulled up into a semi join without an equality between the subquery's relation and \
             the outer query (a Nested Loop Semi Join with a Join Filter alone)",
            at,
        ));
    };
    let clause_relids = j.quals.iter().fold(0, |acc, c| acc | numbering.relids_of(c));
    let mut sj = make_outerjoininfo((JoinType::Semi, j.lhs, j.rhs), (*clause).clone(), clause_relids, lower);
    sj.unique_ok = cross.len() == 1;
    Ok(sj)
}

/// Is `c` `column = column`?
fn is_col_eq_col(c: &Expr) -> bool {
    matches!(c, Expr::Bin(BinOp::Eq, x, y) if matches!((x.as_ref(), y.as_ref()), (Expr::Col(_), Expr::Col(_))))
}

/// May a condition be true (or not false) when a column it reads is NULL? As
/// `planner::reduce_outer_join` judges strictness: IS [NOT] NULL, a function or an OR
/// may; comparisons and arithmetic of columns may not.
fn may_accept_null(e: &Expr) -> bool {
    match e {
        // A ScalarArrayOpExpr over a non-empty array is strict in its scalar
        // (`is_strict_saop`): NULL there makes it NULL.
        Expr::Func(crate::plan::Func::ScalarArrayOp { .. }, args) if args.len() > 1 => may_accept_null(&args[0]),
        Expr::IsNull(..) | Expr::Func(..) | Expr::Bin(BinOp::Or, ..) => true,
        Expr::Bin(_, l, r) => may_accept_null(l) || may_accept_null(r),
        Expr::Not(x) => may_accept_null(x),
        Expr::Col(_) | Expr::Const(_) | Expr::Param(..) | Expr::ExecParam(..) => false,
    }
}

/// `process_equivalence`: `a = b` merges the classes of its two columns (a new one
/// for a column in none), members in the order the conditions name them.
fn add_to_eclass(ecs: &mut Vec<EquivClass>, a: usize, b: usize) {
    let ia = ecs.iter().position(|e| e.members.contains(&a));
    let ib = ecs.iter().position(|e| e.members.contains(&b));
    match (ia, ib) {
        (Some(x), Some(y)) if x == y => {}
        (Some(x), Some(y)) => {
            let moved = ecs[y.max(x)].members.clone();
            let keep = x.min(y);
            for m in moved {
                if !ecs[keep].members.contains(&m) {
                    ecs[keep].members.push(m);
                }
            }
            ecs.remove(x.max(y));
        }
        (Some(x), None) => ecs[x].members.push(b),
        (None, Some(y)) => ecs[y].members.push(a),
        (None, None) => ecs.push(EquivClass { members: vec![a, b] }),
    }
}

impl JoinProblem<'_> {
    fn rel_of(&self, c: usize) -> usize {
        self.rels.iter().rposition(|r| r.first <= c).unwrap_or(0)
    }

    fn relids_of_col(&self, c: usize) -> Relids {
        1 << self.rel_of(c)
    }

    fn ec_relids(&self, ec: &EquivClass) -> Relids {
        ec.members.iter().fold(0, |acc, &c| acc | self.relids_of_col(c))
    }

    /// Is column `c` needed above the join relation `relids` (`build_joinrel_tlist`:
    /// its `attr_needed` reaches outside): used by the upper levels, or by a clause,
    /// class or outer join not yet complete within `relids`.
    fn needed(&self, c: usize, relids: Relids) -> bool {
        if self.upper.contains(&c) {
            return true;
        }
        let outside = |r: Relids| !subset(r, relids);
        self.pinned_needed.iter().any(|&(k, r)| k == c && outside(r))
            || self.ecs.iter().any(|ec| ec.members.contains(&c) && outside(self.ec_relids(ec)))
            || self.clauses.iter().any(|k| outside(k.relids) && columns_of(&k.expr, self.n).contains(&c))
            || self
                .sjs
                .iter()
                .any(|sj| outside(self.clause_relids(&sj.clause)) && columns_of(&sj.clause, self.n).contains(&c))
    }

    /// [`Self::needed`] for every column, once per relation set.
    fn needed_mask(&self, relids: Relids) -> Rc<[bool]> {
        if let Some(m) = self.needed_by_rel.borrow().get(&relids) {
            return m.clone();
        }
        let mask: Rc<[bool]> = (0..self.n).map(|c| self.needed(c, relids)).collect();
        self.needed_by_rel.borrow_mut().insert(relids, mask.clone());
        mask
    }

    /// Every relation's columns in the query's numbering.
    fn all_columns(&self) -> &[Column] {
        self.all_columns.get_or_init(|| self.rels.iter().flat_map(|r| r.rel.columns()).collect())
    }

    /// `have_relevant_joinclause`: a clause, class or outer join ON clause joining
    /// the two.
    fn have_relevant_joinclause(&self, a: Relids, b: Relids) -> bool {
        let both = |r: Relids| overlap(r, a) && overlap(r, b);
        self.pinned_ecs.iter().any(|&r| both(r))
            || self.ecs.iter().any(|ec| both(self.ec_relids(ec)))
            || self.clauses.iter().any(|k| both(k.relids))
            || self.sjs.iter().any(|sj| both(self.clause_relids(&sj.clause)))
    }

    fn clause_relids(&self, e: &Expr) -> Relids {
        columns_of(e, self.n).iter().fold(0, |acc, &c| acc | self.relids_of_col(c))
    }

    /// Has the relation a join clause to some relation outside it?
    fn has_joinclauses(&self, r: Relids) -> bool {
        let joins = |x: Relids| overlap(x, r) && !subset(x, r);
        self.pinned_ecs.iter().any(|&x| joins(x))
            || self.ecs.iter().any(|ec| joins(self.ec_relids(ec)))
            || self.clauses.iter().any(|k| joins(k.relids))
            || self.sjs.iter().any(|sj| joins(self.clause_relids(&sj.clause)))
    }

    /// `has_join_restriction`: inside an outer join's side without the whole join.
    fn has_join_restriction(&self, r: Relids) -> bool {
        self.sjs.iter().any(|sj| {
            sj.jt != JoinType::Full
                && !(subset(sj.min_lhs, r) && subset(sj.min_rhs, r))
                && (overlap(sj.min_lhs, r) || overlap(sj.min_rhs, r))
        })
    }

    /// `have_join_order_restriction`, without `has_legal_joinclause`'s relaxation
    /// (every join here has a clause or a pinned class: no other clauseless one is
    /// planned).
    fn have_join_order_restriction(&self, a: Relids, b: Relids) -> bool {
        self.sjs.iter().any(|sj| {
            sj.jt != JoinType::Full
                && ((subset(sj.min_lhs, a) && subset(sj.min_rhs, b))
                    || (subset(sj.min_lhs, b) && subset(sj.min_rhs, a))
                    || (overlap(sj.min_rhs, a) && overlap(sj.min_rhs, b))
                    || (overlap(sj.min_lhs, a) && overlap(sj.min_lhs, b)))
        })
    }

    fn join_is_legal(&self, a: Relids, b: Relids) -> Option<(Option<usize>, bool)> {
        join_is_legal(&self.sjs, a, b)
    }

    /// `standard_join_search` over the base relations: level 1 their paths, each
    /// level up to all of them by `join_search_one_level`, then the upper levels over
    /// the final relation's paths.
    fn search(
        &self,
        base_quals: &[Vec<Expr>],
        l: &Layers,
        columns: &[Column],
        servers: &mut Vec<String>,
    ) -> Result<Planned, FrontError> {
        let planned = match self.partitionwise_children(base_quals)? {
            Some(children) => self.plan_partitionwise(&children, base_quals, l, columns, self.range_table)?,
            None => self.final_plan(&self.join_rel(base_quals)?, l, columns)?,
        };
        collect_servers(&planned.plan, servers);
        Ok(planned)
    }

    /// The join relation of every base relation, with its paths: level 1 the base
    /// relations' (`set_base_rel_pathlists`), then `make_rel_from_joinlist` over the
    /// joinlist. In a planning in slices (`join_search_slices`), the search kept for
    /// this one is taken up: its result if it finished, else where it stopped; and
    /// when it stops again (out of time), it is kept.
    fn join_rel(&self, base_quals: &[Vec<Expr>]) -> Result<RelInfo, FrontError> {
        *self.base_quals.borrow_mut() = base_quals.to_vec();
        let base = self.base_paths(base_quals)?;
        let sig = self.signature(&base);
        let (slot, found) = join_search_slices::enter(&sig);
        self.slices.slot.set(Some(slot));
        self.slices.asks.set(self.coord.remote_estimates.asks());
        self.slices.search_no.set(0);
        let mut rels = match found {
            Found::Done(top, costed) => {
                self.costed.set(costed);
                return Ok(top);
            }
            Found::Stopped(stopped) => {
                self.costed.set(stopped.costed);
                *self.slices.done.borrow_mut() = stopped.done;
                *self.slices.cursor.borrow_mut() = Some(stopped.cursor);
                stopped.rels
            }
            Found::Nothing => JoinRels::new(base),
        };
        match self.make_rel_from_joinlist(&mut rels, &self.joinlist) {
            Ok(top) => {
                let top = rels.list.swap_remove(top);
                if !self.asked_remote_estimates() {
                    join_search_slices::keep_done(slot, sig, &top, self.costed.get());
                }
                Ok(top)
            }
            Err(e) => {
                if let Some(cursor) = self.slices.cursor.borrow_mut().take() {
                    let done = std::mem::take(&mut *self.slices.done.borrow_mut());
                    let stopped = StoppedSearch { rels, done, cursor, costed: self.costed.get() };
                    join_search_slices::keep_stopped(slot, sig, stopped);
                }
                Err(e)
            }
        }
    }

    /// What tells this search from another (`join_search_slices::Signature`).
    fn signature(&self, base: &[RelInfo]) -> Signature {
        let figures = base
            .iter()
            .flat_map(|r| &r.paths)
            .flat_map(|p| [p.est.startup.to_bits(), p.est.total.to_bits(), p.est.rows.to_bits()])
            .collect();
        Signature {
            names: self.rels.iter().map(|r| r.name.clone()).collect(),
            at: (self.at.line, self.at.column),
            figures,
        }
    }

    /// Has this search asked a remote estimate (`use_remote_estimate`)? Then it is
    /// neither stopped nor kept: each planning round must ask its questions again.
    fn asked_remote_estimates(&self) -> bool {
        self.coord.remote_estimates.asks() != self.slices.asks.get()
    }

    /// Should the search stop here, to go on at the next slice of planning?
    fn out_of_time(&self) -> bool {
        let slot = self.slices.slot.get();
        slot.is_some_and(join_search_slices::out_of_time) && !self.asked_remote_estimates()
    }

    /// `make_rel_from_joinlist`: each entry's relation (a base relation, or a
    /// subproblem's, searched first), then one join search over them: refused by name
    /// where PostgreSQL would run GEQO (`geqo` on and at least `geqo_threshold`
    /// entries), or beyond the sandbox's bound; else `standard_join_search`.
    fn make_rel_from_joinlist(&self, rels: &mut JoinRels, joinlist: &[JoinItem]) -> Result<usize, FrontError> {
        let mut initial = vec![];
        for item in joinlist {
            initial.push(match item {
                JoinItem::Rel(i) => *i,
                JoinItem::Sub(list) => self.make_rel_from_joinlist(rels, list)?,
            });
        }
        let levels_needed = initial.len();
        if levels_needed == 1 {
            return Ok(initial[0]);
        }
        let threshold = self.coord.setting("geqo_threshold").and_then(|v| v.parse::<usize>().ok()).unwrap_or(12);
        if self.coord.setting_on("geqo", true) && levels_needed >= threshold {
            return Err(FrontError::unsupported(
                format!(
                    "geqo (a join of {levels_needed} relations ≥ geqo_threshold {threshold}: PostgreSQL plans it by \
                     its genetic search, which the sandbox does not have; SET geqo TO off for the exhaustive search, or \
                     join_collapse_limit / from_collapse_limit to split it)"
                ),
                self.at,
            ));
        }
        if levels_needed > MAX_SEARCH_ITEMS {
            return Err(FrontError::unsupported(
                format!(
                    "an exhaustive join search over {levels_needed} relations (the sandbox's stops at \
                     {MAX_SEARCH_ITEMS}, as PostgreSQL's default geqo_threshold leaves it, so that planning never \
                     freezes the page; lower join_collapse_limit / from_collapse_limit to split it)"
                ),
                self.at,
            ));
        }
        // Taken up in slices: a subproblem searched at an earlier slice is not searched
        // again (the searches are numbered in the order they run).
        let no = self.slices.search_no.get();
        self.slices.search_no.set(no + 1);
        if let Some(&top) = self.slices.done.borrow().get(no) {
            return Ok(top);
        }
        let top = self.standard_join_search(rels, initial)?;
        self.slices.done.borrow_mut().push(top);
        Ok(top)
    }

    /// `standard_join_search`: level 1 the initial relations, each level up to all
    /// of them by `join_search_one_level`; the relation of all of them. A level's
    /// pairs are listed first and joined one by one, so that the search can stop after
    /// any of them (out of time: it fails with `stopped_error`, its cursor kept in
    /// `slices`) and go on from there, its cursor given back.
    fn standard_join_search(&self, rels: &mut JoinRels, initial: Vec<usize>) -> Result<usize, FrontError> {
        let all: Relids = initial.iter().fold(0, |acc, &i| acc | rels.list[i].relids);
        let levels_needed = initial.len();
        let mut c = self.slices.cursor.borrow_mut().take().unwrap_or_else(|| SearchCursor {
            levels: vec![vec![], initial],
            level: 1,
            pairs: vec![],
            next: 0,
            last_ditch: false,
        });
        while c.next < c.pairs.len()
            || c.level < levels_needed
            || (c.level > 1 && c.levels[c.level].is_empty() && !c.last_ditch)
        {
            if c.next == c.pairs.len() {
                // join_search_one_level's last-ditch effort: no join of this level
                // found (every relation has join clauses, none usable yet: a
                // subproblem whose clauses join relations outside it), so each
                // relation of the level below joins every initial relation without
                // a clause (`make_rels_by_clauseless_joins`; no bushy pairs).
                if c.level > 1 && c.levels[c.level].is_empty() && !c.last_ditch {
                    c.pairs = self.clauseless_pairs(rels, &c.levels, c.level);
                    (c.next, c.last_ditch) = (0, true);
                    continue;
                }
                c.level += 1;
                c.levels.push(vec![]);
                c.pairs = self.join_search_one_level(rels, &c.levels, c.level);
                (c.next, c.last_ditch) = (0, false);
                continue;
            }
            let (old, other) = c.pairs[c.next];
            c.next += 1;
            self.make_join_rel(rels, &mut c.levels, c.level, old, other)?;
            if self.out_of_time() && (c.next < c.pairs.len() || c.level < levels_needed) {
                *self.slices.cursor.borrow_mut() = Some(c);
                return Err(join_search_slices::stopped_error());
            }
        }
        match rels.find(all) {
            Some(top) if !rels.list[top].paths.is_empty() => Ok(top),
            _ => Err(FrontError::unsupported(
                "a join whose relations are not all linked by equalities between their columns where an outer, semi \
                 or anti join would need a Join Filter deciding matches",
                self.at,
            )),
        }
    }

    /// Level 1 (`set_base_rel_pathlists`): each base relation's scans, returning the
    /// columns needed above it, and a path in the query's ORDER BY where it has one
    /// (postgres_fdw's remote ORDER BY, a Merge Append of ordered partitions, as
    /// `Join::side_order` has it).
    fn base_paths(&self, base_quals: &[Vec<Expr>]) -> Result<Vec<RelInfo>, FrontError> {
        let mut rels = vec![];
        for (i, b) in self.rels.iter().enumerate() {
            let relids: Relids = 1 << i;
            let cols: Vec<usize> =
                (b.first..b.first + b.rel.columns.len()).filter(|&c| self.needed(c, relids)).collect();
            let used: Vec<usize> = cols.iter().map(|c| c - b.first).collect();
            let mut p = Planner::new(self.coord, vec![]);
            // Its cheapest path: a foreign scan sorted by the query's pathkeys where
            // that path costs the same (`Planner::scan`).
            p.scan_pathkeys = self.base_pathkeys(b);
            let plan = p.side(b.rel, &b.name, &base_quals[i], &used, None, self.at)?;
            p.scan_pathkeys = None;
            let plain = self.plain_path(plan, cols.clone(), None);
            // A pushed-down join is deparsed from the relations, not their paths.
            let fdw = match (&b.rel.kind, &plain.plan) {
                (RelKind::Foreign { .. }, Plan::ForeignScan(f)) if f.remote.order_by.is_empty() => Some(plain.clone()),
                (RelKind::Foreign { .. }, Plan::ForeignScan(_)) => {
                    let plan = p.side(b.rel, &b.name, &base_quals[i], &used, None, self.at)?;
                    Some(self.plain_path(plan, cols.clone(), None))
                }
                _ => None,
            };
            let mut paths = vec![Rc::new(plain)];
            if let Some(keys) = self.base_order(b, &cols) {
                let plan = p.side(b.rel, &b.name, &base_quals[i], &used, Some(&keys), self.at)?;
                let path = self.plain_path(plan, cols.clone(), Some(QUERY_ORDER));
                add_rel_path(&mut paths, path, self.consider_startup, &|x, y| self.same_order(x, y));
            }
            let ordered = self.index_order_paths(b, relids, &base_quals[i], &cols)?;
            for path in ordered.into_iter().chain(self.partition_order_paths(b, relids, &base_quals[i], &cols)?) {
                add_rel_path(&mut paths, path, self.consider_startup, &|x, y| self.same_order(x, y));
            }
            rels.push(RelInfo { relids, paths, fdw, fdw_tried: false, rows: None });
        }
        Ok(rels)
    }

    /// A local table's ordered index paths (`build_index_paths` with the pathkeys
    /// `pathkeys_useful_for_merging` or the query's ORDER BY ask for): for each index
    /// whose key is a returned column and whose order is useful above the relation
    /// (`useful_order`), the Index (Only) Scan in that order, ascending, recorded as
    /// ordered by that column. `add_rel_path` keeps it beside the cheaper unordered
    /// path; a Merge Join then takes it as a presorted side (no Sort), and a Nested
    /// Loop keeps its order for the levels above.
    fn index_order_paths(
        &self,
        b: &BaseRel,
        relids: Relids,
        quals: &[Expr],
        cols: &[usize],
    ) -> Result<Vec<RelPath>, FrontError> {
        let RelKind::Table(t) = &b.rel.kind else { return Ok(vec![]) };
        let used: Vec<usize> = cols.iter().map(|c| c - b.first).collect();
        let mut out = vec![];
        for index in &t.indexes {
            let c = b.first + index.column;
            let Some(at) = cols.iter().position(|&x| x == c) else { continue };
            if !self.useful_order(c, relids) {
                continue;
            }
            // `force_index`: the presorted index path itself, whatever a Sort over the
            // cheapest scan costs (that one is the unordered path plus a Sort, which
            // the join methods add where they need it).
            let mut p = Planner { force_index: true, ..Planner::new(self.coord, vec![]) };
            let keys = vec![SortKey { expr: Expr::Col(at), desc: false }];
            let plan = p.side(b.rel, &b.name, quals, &used, Some(&keys), self.at)?;
            if matches!(plan, Plan::Sort { .. }) {
                continue;
            }
            out.push(self.plain_path(plan, cols.to_vec(), Some(c)));
        }
        Ok(out)
    }

    /// A partitioned table's paths in a column's order from `generate_orderedappend_paths`
    /// (over `all_child_pathkeys`): for each returned column whose order is useful
    /// above the relation (`useful_order`) and that some leaf reads in order on its
    /// own (a local partition by its index on it, a foreign one with
    /// `use_remote_estimate` by its remote ORDER BY), the leaves in that order, the
    /// others sorted: an ordered Append when the partitions are in the column's bound
    /// order, else a Merge Append (`Planner::side`). Recorded as ordered by that
    /// column, kept beside the cheaper unordered path as an index path is.
    fn partition_order_paths(
        &self,
        b: &BaseRel,
        relids: Relids,
        quals: &[Expr],
        cols: &[usize],
    ) -> Result<Vec<RelPath>, FrontError> {
        if !matches!(b.rel.kind, RelKind::Partitioned { .. }) {
            return Ok(vec![]);
        }
        let mut p = Planner { force_index: true, ..Planner::new(self.coord, vec![]) };
        let leaves = p.leaves(b.rel, quals);
        if leaves.len() < 2 {
            return Ok(vec![]);
        }
        let used: Vec<usize> = cols.iter().map(|c| c - b.first).collect();
        let presorted = |r: &&Relation, column: usize| match &r.kind {
            RelKind::Table(t) => t.index_on(column).is_some(),
            RelKind::Foreign { .. } => {
                super::super::remote_estimate::uses_remote_estimate(self.coord, &r.name).is_some()
            }
            _ => false,
        };
        let mut out = vec![];
        for (at, &c) in cols.iter().enumerate() {
            if !self.useful_order(c, relids) || !leaves.iter().any(|r| presorted(r, c - b.first)) {
                continue;
            }
            // The query's own order asks every foreign leaf for its remote ORDER BY;
            // a merge key's only those with remote estimates (`merge_order`).
            p.merge_order = !self.same_order(Some(c), self.query_key);
            let keys = vec![SortKey { expr: Expr::Col(at), desc: false }];
            let plan = p.side(b.rel, &b.name, quals, &used, Some(&keys), self.at)?;
            out.push(self.plain_path(plan, cols.to_vec(), Some(c)));
        }
        Ok(out)
    }

    /// `join_search_one_level`: the pairs of relations whose join relations are
    /// those of `level` initial relations, in the order `make_join_rel` takes them: a
    /// relation of the level below and an initial relation it has a join clause or
    /// join order restriction with (`make_rels_by_clause_joins`; at level 2 each pair
    /// once), then bushy: level k with level `level - k` (k ≤ level - k). A relation
    /// with neither joins every initial relation (`make_rels_by_clauseless_joins`:
    /// a Nested Loop without a join clause). (The levels below are
    /// complete, and what decides a pair is the relations' sets only, so listing them
    /// first is joining them as PostgreSQL's loops meet them.)
    fn join_search_one_level(&self, rels: &JoinRels, levels: &[Vec<usize>], level: usize) -> Vec<(usize, usize)> {
        let mut pairs = vec![];
        for pos in 0..levels[level - 1].len() {
            let old = levels[level - 1][pos];
            let r = rels.list[old].relids;
            let clauseful = self.has_joinclauses(r) || self.has_join_restriction(r);
            let start = if level == 2 && clauseful { pos + 1 } else { 0 };
            for i in start..levels[1].len() {
                let other = levels[1][i];
                let o = rels.list[other].relids;
                if !overlap(r, o)
                    && (!clauseful || self.have_relevant_joinclause(r, o) || self.have_join_order_restriction(r, o))
                {
                    pairs.push((old, other));
                }
            }
        }
        let mut k = 2;
        while k <= level - k {
            let other_level = level - k;
            for pos in 0..levels[k].len() {
                let old = levels[k][pos];
                let r = rels.list[old].relids;
                if !(self.has_joinclauses(r) || self.has_join_restriction(r)) {
                    continue;
                }
                let start = if k == other_level { pos + 1 } else { 0 };
                for i in start..levels[other_level].len() {
                    let other = levels[other_level][i];
                    let o = rels.list[other].relids;
                    if !overlap(r, o) && (self.have_relevant_joinclause(r, o) || self.have_join_order_restriction(r, o))
                    {
                        pairs.push((old, other));
                    }
                }
            }
            k += 1;
        }
        pairs
    }

    /// `make_rels_by_clauseless_joins` for every relation of the level below: the
    /// pairs of `join_search_one_level`'s last-ditch effort.
    fn clauseless_pairs(&self, rels: &JoinRels, levels: &[Vec<usize>], level: usize) -> Vec<(usize, usize)> {
        let mut pairs = vec![];
        for &old in &levels[level - 1] {
            for &other in &levels[1] {
                if !overlap(rels.list[old].relids, rels.list[other].relids) {
                    pairs.push((old, other));
                }
            }
        }
        pairs
    }

    /// The upper levels over each path of the final relation (`grouping_planner`),
    /// and the cheapest whole plan (least total cost, then least startup; the first
    /// among equals).
    fn final_plan(&self, top: &RelInfo, l: &Layers, columns: &[Column]) -> Result<Planned, FrontError> {
        let order_keys = order_keys_of(l);
        let planned = |plan| Planned {
            plan,
            columns: columns.to_vec(),
            servers: vec![],
            order_key: order_keys.first().copied(),
            order_keys: order_keys.clone(),
        };
        // The top relation's pushed join returns the scan/join target's columns.
        let paths: Vec<RelPath> = top.paths.iter().map(|p| self.at_top(p, &self.tlist_order)).collect();
        let fdw = top.fdw.as_ref().map(|p| self.at_top(p, &self.tlist_order));
        // postgres_fdw's `GetForeignUpperPaths` for the aggregate, after the local
        // ones: the grouping pushed over the join pushed to the server.
        let pushed_agg = fdw.as_ref().and_then(|path| self.pushed_aggregate(path, l));
        if let Some((_, keys, _)) = &l.agg {
            if !keys.is_empty() {
                // The grouped relation's paths (`add_paths_to_grouping_rel`) over
                // each path of the join, then the pushed one, by cost.
                let mut candidates: Vec<Cand> = paths.iter().flat_map(|p| self.grouping_paths(p, l)).collect();
                candidates.extend(pushed_agg.map(|plan| Cand { plan, ordered: false, presorted: false }));
                let plan = cheapest(self.coord, candidates, &upper_of(l), vec![])
                    .ok_or_else(|| FrontError::at("internal error: no path for the join", self.at))?;
                return Ok(planned(plan));
            }
        }
        let mut candidates: Vec<Planned> = paths.iter().map(|path| self.upper_plan(path, l, columns)).collect();
        candidates.extend(pushed_agg.map(|plan| planned(finish(plan, l.sort.clone(), l.targets.clone(), l.limit))));
        // The pushed join's ordered path and final path (ORDER BY, LIMIT in the
        // remote query: `add_paths_with_pathkeys_for_rel`, `add_foreign_final_paths`).
        if l.agg.is_none() && (l.sort.is_some() || l.limit.is_some()) {
            candidates.extend(fdw.as_ref().map(|path| planned(self.pushed_final(path, l))));
        }
        // The whole plans go through `add_path` as the final (ordered) relation's
        // paths: all in its one order, compared fuzzily (a path dearer by less than
        // 1% but starting sooner beats a Sort over the cheapest), then `set_cheapest`.
        let mut finals: Vec<Rc<RelPath>> = vec![];
        for (i, p) in candidates.iter().enumerate() {
            let costed = self.estimate(&p.plan, &[]);
            let path =
                RelPath::new(Plan::EmptyResult { columns: vec![], rels: vec![], joined: false }, vec![i], None, costed);
            add_rel_path(&mut finals, path, self.consider_startup, &|_, _| true);
        }
        let mut best: Option<&Rc<RelPath>> = None;
        for f in &finals {
            let better = match best {
                None => true,
                Some(b) => f.est.total < b.est.total || (f.est.total == b.est.total && f.est.startup < b.est.startup),
            };
            if better {
                best = Some(f);
            }
        }
        let at = best.map(|b| b.cols[0]);
        at.and_then(|i| candidates.into_iter().nth(i))
            .ok_or_else(|| FrontError::at("internal error: no path for the join", self.at))
    }

    /// The query's aggregate pushed into the pushed-down join `path` (postgres_fdw's
    /// `add_foreign_grouping_paths` over a join relation, `push_aggregate`), HAVING
    /// with it; None without an aggregate, or when `foreign_grouping_ok` refuses it.
    fn pushed_aggregate(&self, path: &RelPath, l: &Layers) -> Option<Plan> {
        let (_, keys, aggs) = l.agg.as_ref()?;
        let mut map = vec![None; self.n];
        for (p, &c) in path.cols.iter().enumerate() {
            map[c] = Some(p);
        }
        let keys: Vec<Expr> = keys.iter().map(|e| rewrite(e, &map)).collect();
        let aggs: Vec<AggCall> = aggs
            .iter()
            .map(|a| AggCall { func: a.func, arg: a.arg.as_ref().map(|e| rewrite(e, &map)), distinct: a.distinct })
            .collect();
        crate::coordinator_sql::postgres_fdw_join::push_aggregate(path.plan.clone(), &keys, &aggs, l.having.as_ref())
            .ok()
    }

    /// The levels above the top relation's pushed join `path` with ORDER BY (its keys
    /// columns the scan returns) and LIMIT in the remote query or not, by cost, as for
    /// a plain foreign table (`Planner::foreign_upper`).
    fn pushed_final(&self, path: &RelPath, l: &Layers) -> Plan {
        let mut map = vec![None; self.n];
        for (p, &c) in path.cols.iter().enumerate() {
            map[c] = Some(p);
        }
        let sort: Option<Vec<SortKey>> = l
            .sort
            .as_ref()
            .map(|keys| keys.iter().map(|k| SortKey { expr: rewrite(&k.expr, &map), desc: k.desc }).collect());
        let (targets, identity) = self.final_targets(l, &map, &path.cols);
        // The scan sorted remotely: each key a column it returns.
        let ordered = match (&path.plan, &sort) {
            (Plan::ForeignScan(f), Some(keys)) => {
                let remote: Option<Vec<SortKey>> = keys
                    .iter()
                    .map(|k| match &k.expr {
                        Expr::Col(i) => match f.remote.targets.get(*i) {
                            Some(RemoteTarget::Col(c)) => Some(SortKey { expr: Expr::Col(*c), desc: k.desc }),
                            _ => None,
                        },
                        _ => None,
                    })
                    .collect();
                remote.map(|order_by| {
                    let mut f = f.clone();
                    f.remote.order_by = order_by;
                    Plan::ForeignScan(f)
                })
            }
            _ => None,
        };
        let upper = Upper {
            having: None,
            sort: sort.as_deref(),
            targets: (!identity).then_some(targets.as_slice()),
            limit: l.limit,
        };
        let p = Planner::new(self.coord, vec![]);
        p.foreign_upper(path.plan.clone(), ordered, &upper, true)
    }

    /// `add_paths_to_grouping_rel` over one path of the join: a GroupAggregate over
    /// it sorted by the group keys, a HashAggregate over it, each with HAVING
    /// (`grouping_planner::grouping_candidates`).
    fn grouping_paths(&self, path: &RelPath, l: &Layers) -> Vec<Cand> {
        let mut map = vec![None; self.n];
        for (p, &c) in path.cols.iter().enumerate() {
            map[c] = Some(p);
        }
        grouped_over(path.plan.clone(), &map, l)
    }

    /// A pushed-down join at the top of the search returns `order`'s columns first, in
    /// that order (its relation's `reltarget` is the scan/join target there); any
    /// other path is as it is.
    fn at_top(&self, path: &RelPath, order: &[usize]) -> RelPath {
        let pushed = matches!(&path.plan, Plan::ForeignScan(f) if f.remote.join.is_some());
        if !pushed {
            return create_plan(path);
        }
        let mut wanted: Vec<usize> = order.iter().copied().filter(|c| path.cols.contains(c)).collect();
        wanted.extend(path.cols.iter().copied().filter(|c| !order.contains(c)));
        let map: Vec<Option<usize>> = (0..self.n).map(|c| path.cols.iter().position(|&x| x == c)).collect();
        let (plan, _) = crate::coordinator_sql::postgres_fdw_join::keep_outputs(path.plan.clone(), &map, &wanted);
        // Its estimate is the pushed join's (the remote query's columns reordered).
        RelPath {
            plan,
            inputs: vec![],
            cols: wanted,
            est: path.est,
            costed: path.costed.clone(),
            order: path.order,
            out_columns: Default::default(),
        }
    }

    /// A base relation's columns `cols` in its `reltarget`'s order: those of the final
    /// target first, in its order (`build_base_rel_tlists`), then those only its join
    /// clauses read (here in table order).
    fn reltarget_order(&self, cols: &[usize], relids: Relids) -> Vec<usize> {
        if relids.count_ones() != 1 {
            return cols.to_vec();
        }
        let first: Vec<usize> = self.tlist_order.iter().copied().filter(|c| cols.contains(c)).collect();
        let rest = cols.iter().copied().filter(|c| !first.contains(c));
        first.iter().copied().chain(rest).collect()
    }

    /// The select list over a path returning `cols` (`map`: a column's place in it),
    /// or every column in FROM order without one; and whether it is the path's own
    /// output as it is (no projection needed).
    fn final_targets(&self, l: &Layers, map: &[Option<usize>], cols: &[usize]) -> (Vec<(Expr, String)>, bool) {
        let all: Vec<Column> = self.rels.iter().flat_map(|r| r.rel.columns()).collect();
        let every_column = || (0..self.n).map(|c| (Expr::Col(c), all[c].name.clone())).collect::<Vec<_>>();
        let targets: Vec<(Expr, String)> = l
            .targets
            .clone()
            .unwrap_or_else(every_column)
            .iter()
            .map(|(e, name)| (rewrite(e, map), name.clone()))
            .collect();
        let identity = targets.len() == cols.len()
            && targets.iter().enumerate().all(|(i, (e, name))| *e == Expr::Col(i) && *name == all[cols[i]].name);
        (targets, identity)
    }

    /// `make_join_rel`: when legal, the join relation of `a` and `b` (found or made
    /// at `level`) gets the paths of both orders.
    fn make_join_rel(
        &self,
        rels: &mut JoinRels,
        levels: &mut [Vec<usize>],
        level: usize,
        a: usize,
        b: usize,
    ) -> Result<(), FrontError> {
        let (ra, rb) = (rels.list[a].relids, rels.list[b].relids);
        let Some((sj, reversed)) = self.join_is_legal(ra, rb) else { return Ok(()) };
        let (a, b) = if reversed { (b, a) } else { (a, b) };
        self.pair_first.set(rels.list[a].relids);
        let joinrelids = ra | rb;
        let jt = sj.map_or(JoinType::Inner, |k| self.sjs[k].jt);
        let idx = match rels.find(joinrelids) {
            Some(i) => i,
            None => {
                // build_join_rel: the relation is sized once, from this first pair.
                let rows = self.size_joinrel((&rels.list[a], &rels.list[b]), jt, sj);
                let i = rels.add(RelInfo { relids: joinrelids, paths: vec![], fdw: None, fdw_tried: false, rows });
                levels[level].push(i);
                i
            }
        };
        let (rel_a, rel_b) = (&rels.list[a], &rels.list[b]);
        if rel_a.paths.is_empty() || rel_b.paths.is_empty() {
            return Ok(());
        }
        let (ra, rb) = (rel_a.relids, rel_b.relids);
        self.joinrel_rows.set(rels.list[idx].rows);
        let mut new_paths = vec![];
        let mut pushed_here = None;
        match jt {
            JoinType::Semi | JoinType::Anti => {
                let sjk = &self.sjs[sj.unwrap_or(0)];
                new_paths.extend(self.semi_join_paths(sjk, (&rel_a.paths, ra), (&rel_b.paths, rb), sj));
            }
            _ => {
                new_paths.extend(self.add_paths_to_joinrel((&rel_a.paths, ra), (&rel_b.paths, rb), jt, sj));
                // GetForeignJoinPaths, at the end of the first add_paths_to_joinrel of
                // the first pair that makes the relation.
                if !rels.list[idx].fdw_tried {
                    let pushed = self.foreign_join_path(rel_a, rel_b, jt, sj)?;
                    // postgresGetForeignJoinPaths sets joinrel->rows to its own
                    // estimate: the paths made after it share that.
                    if let (Some(p), Some(_)) = (&pushed, rels.list[idx].rows) {
                        self.joinrel_rows.set(Some(p.est.rows));
                    }
                    new_paths.extend(pushed.clone());
                    new_paths.extend(pushed.as_ref().and_then(|p| self.ordered_foreign_join_path(p)));
                    pushed_here = Some(pushed);
                }
                new_paths.extend(self.add_paths_to_joinrel((&rel_b.paths, rb), (&rel_a.paths, ra), jt.commuted(), sj));
            }
        }
        let joinrel = &mut rels.list[idx];
        if let Some(pushed) = pushed_here {
            joinrel.fdw_tried = true;
            joinrel.fdw = pushed;
        }
        joinrel.rows = self.joinrel_rows.take();
        for p in new_paths {
            add_rel_path(&mut joinrel.paths, p, self.consider_startup, &|x, y| self.same_order(x, y));
        }
        let bound = max_paths_costed();
        if self.costed.get() > bound {
            return Err(FrontError::unsupported(
                format!(
                    "a join search costing more than {bound} paths ({}; lower join_collapse_limit / \
                     from_collapse_limit to split it)",
                    paths_bound_reason(bound)
                ),
                self.at,
            ));
        }
        Ok(())
    }

    /// `populate_joinrel_with_paths` for a semi or anti join of `a` (its left side, as
    /// `join_is_legal` ordered them) and `b`: the join itself when each side holds
    /// its minimal side (PostgreSQL 15 has no right semi or anti join: one order
    /// only); for a semi join whose right side is one input whole and can be made
    /// unique, an inner join with that side unique-ified as its inner side
    /// (`JOIN_UNIQUE_INNER`) or its outer side (`JOIN_UNIQUE_OUTER`). postgres_fdw
    /// pushes down none of them (`foreign_join_ok`).
    fn semi_join_paths(
        &self,
        sj: &SpecialJoin,
        (outers, ra): (&[Rc<RelPath>], Relids),
        (inners, rb): (&[Rc<RelPath>], Relids),
        k: Option<usize>,
    ) -> Vec<RelPath> {
        let mut out = vec![];
        if sj.jt == JoinType::Anti || (subset(sj.min_lhs, ra) && subset(sj.min_rhs, rb)) {
            out.extend(self.add_paths_to_joinrel((outers, ra), (inners, rb), sj.jt, k));
        }
        if sj.jt != JoinType::Semi || !sj.unique_ok {
            return out;
        }
        for ((x, rx), (y, ry)) in [((outers, ra), (inners, rb)), ((inners, rb), (outers, ra))] {
            // y: the semi join's right side whole, made unique.
            if sj.syn_rhs != ry {
                continue;
            }
            let Some(unique) = self.unique_path(y) else { continue };
            let unique = &[Rc::new(unique)][..];
            out.extend(self.add_paths_to_joinrel((x, rx), (unique, ry), JoinType::UniqueInner, None));
            out.extend(self.add_paths_to_joinrel((unique, ry), (x, rx), JoinType::UniqueOuter, None));
        }
        out
    }

    /// `create_unique_path` over a relation's cheapest-total path, when it returns its
    /// key alone (a HashAggregate or a Unique over a Sort: unordered).
    fn unique_path(&self, paths: &[Rc<RelPath>]) -> Option<RelPath> {
        let cheapest = paths.first()?;
        if cheapest.cols.len() != 1 {
            return None;
        }
        // `create_unique_path` costs its two ways over the whole input plan.
        let cheapest = &create_plan(cheapest);
        let plan = crate::coordinator_sql::prepjointree::create_unique_path(self.coord, cheapest.plan.clone());
        let known: Vec<(&Plan, &CostedPath)> =
            below_wrappers(&plan, &cheapest.plan).map(|i| (i, &cheapest.costed)).into_iter().collect();
        let costed = self.estimate(&plan, &known);
        Some(RelPath::new(plan, cheapest.cols.clone(), None, costed))
    }

    /// postgres_fdw's join path for two relations whose scans are pushdown-safe on
    /// one server (`super::postgres_fdw_join`): base foreign tables, or joins already
    /// pushed (a partitioned table pruned to one foreign partition is an appendrel,
    /// which no FDW joins). An outer join's ON clause is its join clause and the
    /// clauses first complete here its WHERE; an inner join's clauses in the
    /// restrictlist's order (clauses of no class, then the classes' equalities). It
    /// returns what is needed above the join relation.
    fn foreign_join_path(
        &self,
        outer: &RelInfo,
        inner: &RelInfo,
        jt: JoinType,
        sj: Option<usize>,
    ) -> Result<Option<RelPath>, FrontError> {
        let (ra, rb) = (outer.relids, inner.relids);
        let (Some(pa), Some(pb)) = (outer.fdw.clone(), inner.fdw.clone()) else { return Ok(None) };
        let (Plan::ForeignScan(fa), Plan::ForeignScan(fb)) = (&pa.plan, &pb.plan) else { return Ok(None) };
        let cols: Vec<usize> = pa.cols.iter().chain(&pb.cols).copied().collect();
        let map: Vec<Option<usize>> = (0..self.n).map(|c| cols.iter().position(|&x| x == c)).collect();
        let out = |e: &Expr| rewrite(e, &map);
        let joinrelids = ra | rb;
        let here: Vec<Expr> = self
            .clauses
            .iter()
            .filter(|k| subset(k.relids, joinrelids) && !subset(k.relids, ra) && !subset(k.relids, rb))
            .map(|k| out(&k.expr))
            .collect();
        let ec_eqs: Vec<Expr> = self
            .restrictlist(ra, rb, None)
            .iter()
            .filter(|c| !self.clauses.iter().any(|k| k.expr == **c))
            .map(out)
            .collect();
        let (join_clauses, other_conds) = match sj {
            Some(k) => {
                let mut others = here;
                others.extend(ec_eqs);
                (vec![out(&self.sjs[k].clause)], others)
            }
            None => {
                let mut clauses = here;
                clauses.extend(ec_eqs);
                (clauses, vec![])
            }
        };
        // A base relation's name and range-table index (a join side has its own).
        let side = |scan, r: Relids| {
            let base = (r.count_ones() == 1).then(|| &self.rels[r.trailing_zeros() as usize]);
            crate::coordinator_sql::postgres_fdw_join::ForeignSide {
                scan,
                alias: base.map_or("", |b| b.name.as_str()),
                rt_index: base.map_or(0, |b| b.rt_index),
            }
        };
        let (sa, sb) = (side(fa, ra), side(fb, rb));
        use crate::coordinator_sql::postgres_fdw_join::{foreign_join_path, full_join_needs_subquery};
        if full_join_needs_subquery(sa, sb, jt, &join_clauses, &other_conds) {
            return Err(FrontError::unsupported(
                "a FULL JOIN of foreign tables on one server with conditions on a side: postgres_fdw pushes it with \
                 that side as a subquery of the remote query (s4(c1, …)), which the sandbox does not deparse",
                self.at,
            ));
        }
        let Some(f) = foreign_join_path(sa, sb, jt, &join_clauses, &other_conds) else { return Ok(None) };
        // The join relation's reltarget: the first side's, then the second's
        // (`build_joinrel_tlist`), what is needed above it.
        let ordered = self.reltarget_order(&pa.cols, ra).into_iter().chain(self.reltarget_order(&pb.cols, rb));
        let keep: Vec<usize> = ordered.filter(|&c| self.needed(c, joinrelids)).collect();
        let (plan, _) = crate::coordinator_sql::postgres_fdw_join::keep_outputs(Plan::ForeignScan(f), &map, &keep);
        Ok(Some(self.plain_path(plan, keep, None)))
    }

    /// postgres_fdw's `add_paths_with_pathkeys_for_rel` for a pushed-down join
    /// relation: the same remote join with the query's ORDER BY in its remote query
    /// (`get_useful_pathkeys_for_relation`: `root->query_pathkeys` when every key has
    /// a member the join returns; without remote estimates nothing else), priced as
    /// the unordered one times `DEFAULT_FDW_SORT_MULTIPLIER`. Its order is the
    /// query's, so a Merge Join above takes it presorted and LIMIT needs no Sort.
    fn ordered_foreign_join_path(&self, pushed: &RelPath) -> Option<RelPath> {
        let Plan::ForeignScan(f) = &pushed.plan else { return None };
        let order_by: Vec<SortKey> = self
            .query_sort
            .as_ref()?
            .iter()
            .map(|k| {
                let Expr::Col(c) = k.expr else { return None };
                // The key's column, or its equivalence class's member, that the
                // join returns (`find_em_for_rel`), as the remote query numbers it.
                let at = pushed.cols.iter().position(|&x| x == c).or_else(|| {
                    let ec = self.ecs.iter().find(|e| e.members.contains(&c))?;
                    pushed.cols.iter().position(|x| ec.members.contains(x))
                })?;
                match f.remote.targets.get(at)? {
                    RemoteTarget::Col(rc) => Some(SortKey { expr: Expr::Col(*rc), desc: k.desc }),
                    _ => None,
                }
            })
            .collect::<Option<_>>()?;
        let mut f = f.clone();
        f.remote.order_by = order_by;
        Some(self.plain_path(Plan::ForeignScan(f), pushed.cols.clone(), Some(QUERY_ORDER)))
    }

    /// The join's conditions between `outer` and `inner` (`build_joinrel_restrictlist`):
    /// the outer join's ON clause when this join implements it, one equality per class
    /// with members on both sides (its first member on each), and the clauses first
    /// complete here.
    fn restrictlist(&self, outer: Relids, inner: Relids, sj: Option<usize>) -> Vec<Expr> {
        let joinrelids = outer | inner;
        let mut out = vec![];
        if let Some(k) = sj.filter(|&k| self.sjs[k].jt != JoinType::Semi) {
            out.push(self.sjs[k].clause.clone());
        }
        // generate_join_implied_equalities builds a class's clause once for the pair
        // (rel1's member first, `build_joinrel_restrictlist`), which both orders of
        // the sides share: a Nested Loop keeps it as built in its Join Filter.
        let first = match self.pair_first.get() {
            0 => outer,
            f => f,
        };
        for ec in &self.ecs {
            let o = ec.members.iter().find(|&&c| overlap(self.relids_of_col(c), outer));
            let i = ec.members.iter().find(|&&c| overlap(self.relids_of_col(c), inner));
            if let (Some(&o), Some(&i)) = (o, i) {
                let (l, r) = if overlap(first, inner) && !overlap(first, outer) { (i, o) } else { (o, i) };
                out.push(Expr::bin(BinOp::Eq, Expr::Col(l), Expr::Col(r)));
            }
        }
        for k in &self.clauses {
            if subset(k.relids, joinrelids) && !subset(k.relids, outer) && !subset(k.relids, inner) {
                out.push(k.expr.clone());
            }
        }
        out
    }

    /// `add_paths_to_joinrel` for one order of the sides: `sort_inner_and_outer`'s
    /// Merge Join over the cheapest-total paths (sorted where not already in the
    /// merge order), `match_unsorted_outer`'s Nested Loops (plain and over a
    /// Materialize of the cheapest-total inner path) over every outer path, keeping
    /// its order, and Merge Joins over each outer path already in a merge key's order
    /// (the inner side sorted, or a path of it in that order), then
    /// `hash_inner_and_outer`'s Hash Join; each method only as `Method::tried`
    /// allows.
    fn add_paths_to_joinrel(
        &self,
        (outers, outer_relids): (&[Rc<RelPath>], Relids),
        (inners, inner_relids): (&[Rc<RelPath>], Relids),
        jt: JoinType,
        sj: Option<usize>,
    ) -> Vec<RelPath> {
        let joinrelids = outer_relids | inner_relids;
        let (keys, rest) = self.join_keys(outer_relids, inner_relids, jt, sj);
        let (Some(cheap_o), Some(cheap_i)) = (outers.first(), inners.first()) else { return vec![] };
        // No equality between the sides (no merge or hash clause:
        // `select_mergejoin_clauses`, `hash_inner_and_outer`): an inner join is a
        // Nested Loop only (`match_unsorted_outer`), its other clauses, if any, its
        // Join Filter (a cross join's, or a pinned class's, none:
        // `clauseless_join_keys`). An outer, semi or anti join's Join Filter decides
        // matches, which the Result above a join cannot: no path here.
        let clauseless = keys.is_empty();
        if clauseless && !(jt == JoinType::Inner && sj.is_none()) {
            return vec![];
        }
        let mut out = vec![];
        // The inner relation's parameterized index paths, one per key whose inner
        // column a local table indexes (`cheapest_parameterized_paths`; none over a
        // unique-ified inner side, which is a path of its own).
        let param_inners: Vec<(usize, Rc<RelPath>)> = match jt {
            JoinType::UniqueInner => vec![],
            _ => keys
                .iter()
                .enumerate()
                .filter_map(|(k, &(ko, ki, _))| Some((k, Rc::new(self.param_inner_path(inner_relids, ko, ki)?))))
                .collect(),
        };
        let memoized: Vec<(usize, Rc<RelPath>)> = match self.memoize_ok(jt) {
            true => param_inners.iter().map(|(k, pi)| (*k, Rc::new(self.memoize_path(pi)))).collect(),
            false => vec![],
        };
        // A unique-ified side makes an inner join (no Materialize over a unique inner
        // side: `match_unsorted_outer`).
        let methods = Method::tried(self.coord, inner_kind(jt))
            .into_iter()
            .filter(|m| !(jt == JoinType::UniqueInner && *m == Method::NestLoop { material: true }));
        for method in methods.filter(|m| !clauseless || matches!(m, Method::NestLoop { .. })) {
            // (outer path, inner path, the key merged or hashed on)
            let mut combos: Vec<(&Rc<RelPath>, &Rc<RelPath>, usize)> = vec![];
            match method {
                Method::Merge => {
                    combos.push((cheap_o, cheap_i, 0));
                    for (n, o) in outers.iter().enumerate() {
                        let Some(k) = keys.iter().position(|key| self.same_order(o.order, Some(key.0))) else {
                            continue;
                        };
                        if n > 0 || k > 0 {
                            combos.push((o, cheap_i, k));
                        }
                        if let Some(i) = inners.iter().find(|i| self.same_order(i.order, Some(keys[k].1))) {
                            combos.push((o, i, k));
                        }
                    }
                }
                Method::NestLoop { material } => {
                    combos.extend(outers.iter().map(|o| (o, cheap_i, 0)));
                    // match_unsorted_outer: each outer path over each parameterized
                    // inner path its relations satisfy (never materialized).
                    if !material {
                        for (k, pi) in &param_inners {
                            combos.extend(outers.iter().map(|o| (o, pi, *k)));
                        }
                        // get_memoize_path: each parameterized inner path under a
                        // Memoize too, for an outer relation of two rows or more.
                        for (k, pi) in &memoized {
                            combos.extend(outers.iter().filter(|o| o.est.rows >= 2.0).map(|o| (o, pi, *k)));
                        }
                    }
                }
                Method::Hash => combos.push((cheap_o, cheap_i, 0)),
                // postgres_fdw's path, not one `Method::tried` makes.
                Method::Foreign => {}
            }
            for (o, i, k) in combos {
                out.extend(self.join_path((o, i), (method, jt), (&keys, k), &rest, joinrelids));
            }
        }
        out
    }

    /// The restrictlist of a join of `outer_relids` and `inner_relids` split into its
    /// keys, the equalities between the sides as (outer column, inner column,
    /// written inner side first) (an inner or semi join hashes on every equality, a
    /// semi join's being its classes'; an outer join's key is its one ON equality),
    /// and the rest.
    fn join_keys(
        &self,
        outer_relids: Relids,
        inner_relids: Relids,
        jt: JoinType,
        sj: Option<usize>,
    ) -> (Vec<(usize, usize, bool)>, Vec<Expr>) {
        let clauses = self.restrictlist(outer_relids, inner_relids, sj);
        let side = |c: usize| overlap(self.relids_of_col(c), outer_relids);
        let mut keys: Vec<(usize, usize, bool)> = vec![];
        let mut rest: Vec<Expr> = vec![];
        let inner_like = matches!(jt, JoinType::Inner | JoinType::Semi | JoinType::UniqueInner | JoinType::UniqueOuter);
        for c in &clauses {
            let pair = match c {
                Expr::Bin(BinOp::Eq, x, y) => match (x.as_ref(), y.as_ref()) {
                    (Expr::Col(p), Expr::Col(q)) if side(*p) != side(*q) => Some((*p, *q)),
                    _ => None,
                },
                _ => None,
            };
            match pair {
                Some((p, q)) if inner_like || keys.is_empty() => {
                    keys.push(if side(p) { (p, q, false) } else { (q, p, true) });
                }
                _ => rest.push(c.clone()),
            }
        }
        (keys, rest)
    }

    /// `set_joinrel_size_estimates` for a join relation the pair (`outer`, `inner`)
    /// makes first (`build_join_rel`): the rows of their join over their
    /// cheapest-total paths with every clause of the restrictlist (a Hash Join's
    /// estimate, its keys' `eqjoinsel` and its other clauses' selectivity: which
    /// method does not matter to the rows), each path of the relation sharing it
    /// whatever pair of sides it joins. None for a semi or anti join (each of its
    /// paths, the unique-ified ones among them, keeps its own estimate here) and when
    /// the pair has no path.
    fn size_joinrel(&self, (outer, inner): (&RelInfo, &RelInfo), jt: JoinType, sj: Option<usize>) -> Option<f64> {
        if matches!(jt, JoinType::Semi | JoinType::Anti) {
            return None;
        }
        let (o, i) = (outer.paths.first()?, inner.paths.first()?);
        let (keys, rest) = self.join_keys(outer.relids, inner.relids, jt, sj);
        // No key: the Nested Loop without a join clause of a pinned class.
        let method = if keys.is_empty() { Method::NestLoop { material: false } } else { Method::Hash };
        self.joinrel_rows.set(None);
        let path = self.join_path((o, i), (method, jt), (&keys, 0), &rest, outer.relids | inner.relids)?;
        Some(path.est.rows)
    }

    /// A Nested Loop's inner side probed by its index (indxpath.c's
    /// `get_join_index_paths`, a path parameterized by the outer relation): when the
    /// inner relation is one local table with an index on the key's inner column
    /// `ki`, its Index (Only) Scan with the Index Cond `ki = ko` (the outer row's
    /// value, a NestLoop parameter numbered by the inner relation, so that nested
    /// loops never share one), its own conditions as before (an index qual on the
    /// key among them, the rest its Filter); None otherwise.
    fn param_inner_path(&self, inner_relids: Relids, ko: usize, ki: usize) -> Option<RelPath> {
        if inner_relids.count_ones() != 1 {
            return None;
        }
        let i = inner_relids.trailing_zeros() as usize;
        let b = self.rels.get(i)?;
        let RelKind::Table(t) = &b.rel.kind else { return None };
        let key = ki.checked_sub(b.first)?;
        t.index_on(key)?;
        let quals = self.base_quals.borrow().get(i)?.clone();
        // A condition without columns gates the scan (`Planner::gate`): left to the
        // plain paths.
        if quals.iter().any(|q| columns_of(q, b.rel.columns.len()).is_empty()) {
            return None;
        }
        let cols: Vec<usize> =
            (b.first..b.first + b.rel.columns.len()).filter(|&c| self.needed(c, inner_relids)).collect();
        let used: Vec<usize> = cols.iter().map(|c| c - b.first).collect();
        let mut where_cols: Vec<usize> = quals.iter().flat_map(|q| columns_of(q, b.rel.columns.len())).collect();
        where_cols.sort_unstable();
        where_cols.dedup();
        let req = crate::coordinator_sql::indxpath::ScanRequest {
            rel: b.rel,
            name: (b.name != b.rel.name).then(|| ScanName {
                alias: b.name.clone(),
                parent: None,
                member: false,
                tlist: None,
                direct: true,
                alone: false,
                unqualified: false,
            }),
            conjuncts: &quals,
            used: &used,
            where_cols: &where_cols,
        };
        // The outer column as EXPLAIN names it (its relation's alias).
        let ob = &self.rels[self.rel_of(ko)];
        let outer_key = format!(
            "{}.{}",
            crate::sql_text::quote_identifier(&ob.name),
            crate::sql_text::quote_identifier(&ob.rel.columns[ko - ob.first].name)
        );
        let plan = crate::coordinator_sql::indxpath::param_scan(self.coord, &req, key, outer_key, i + 1);
        Some(self.plain_path(plan, cols, None))
    }

    /// May a parameterized inner side be memoized (`get_memoize_path`)? With
    /// `enable_memoize`, and not for a semi or anti join: their Nested Loop leaves an
    /// inner pass at its first match, so the cache entry would never be complete
    /// (PostgreSQL allows it when the inner side is proven unique, which needs a
    /// unique index: the sandbox's indexes are not).
    fn memoize_ok(&self, jt: JoinType) -> bool {
        self.coord.setting_on("enable_memoize", true) && !matches!(jt, JoinType::Semi | JoinType::Anti)
    }

    /// `create_memoize_path` over a parameterized inner path: a Memoize keyed by the
    /// Nested Loop's parameter (its outer column as EXPLAIN names it).
    fn memoize_path(&self, inner: &RelPath) -> RelPath {
        fn cache_key(p: &Plan) -> String {
            match p {
                Plan::IndexScan { nest_param: Some(np), .. } => np.outer.clone(),
                Plan::Result { child, .. } => cache_key(child),
                _ => String::new(),
            }
        }
        let plan = Plan::Memoize { child: Box::new(inner.plan.clone()), cache_key: cache_key(&inner.plan) };
        let known: Vec<(&Plan, &CostedPath)> =
            below_wrappers(&plan, &inner.plan).map(|i| (i, &inner.costed)).into_iter().collect();
        let costed = self.estimate(&plan, &known);
        RelPath::new(plan, inner.cols.clone(), None, costed)
    }

    /// One join path: the join node of `method` over the two paths on key `k` (a Hash
    /// Join's Hash Cond holds every equality, a Merge Join or Nested Loop has the
    /// others in its Join Filter), the join's other conditions, and the columns the
    /// join relation returns (`build_joinrel_tlist`).
    fn join_path(
        &self,
        (outer, inner): (&Rc<RelPath>, &Rc<RelPath>),
        (method, jt): (Method, JoinType),
        (keys, k): (&[(usize, usize, bool)], usize),
        rest: &[Expr],
        joinrelids: Relids,
    ) -> Option<RelPath> {
        let pos = |cols: &[usize], c: usize| cols.iter().position(|&x| x == c);
        // No key: a Nested Loop without a join clause (`add_paths_to_joinrel`).
        let (ko, ki, inner_first) = keys.get(k).copied().unwrap_or((usize::MAX, usize::MAX, false));
        let node_keys = match keys.get(k) {
            Some(_) => (Expr::Col(pos(&outer.cols, ko)?), Expr::Col(pos(&inner.cols, ki)?)),
            None => crate::plan::clauseless_join_keys(),
        };
        let mut join_cols = outer.cols.clone();
        join_cols.extend(&inner.cols);
        let mut map = vec![None; self.n];
        for (p, &c) in join_cols.iter().enumerate() {
            map[c] = Some(p);
        }
        let others = keys.iter().enumerate().filter(|&(j, _)| j != k).map(|(_, key)| *key);
        let (filter_keys, more_keys): (Vec<(usize, usize, bool)>, Vec<(Expr, Expr)>) = if method == Method::Hash {
            let more = others
                .filter_map(|(o, i, _)| Some((Expr::Col(pos(&outer.cols, o)?), Expr::Col(pos(&inner.cols, i)?))))
                .collect();
            (vec![], more)
        } else {
            (others.collect(), vec![])
        };
        let presorted = Presorted {
            outer: method == Method::Merge && self.same_order(outer.order, Some(ko)),
            inner: method == Method::Merge && self.same_order(inner.order, Some(ki)),
            ..Presorted::NONE
        };
        let filter = filter_keys
            .iter()
            .map(|&(o, i, _)| Expr::bin(BinOp::Eq, Expr::Col(o), Expr::Col(i)))
            .chain(rest.iter().cloned())
            .map(|e| rewrite(&e, &map))
            .reduce(|x, y| Expr::bin(BinOp::And, x, y));
        let needed = self.needed_mask(joinrelids);
        let kept: Vec<usize> = join_cols.iter().copied().filter(|&c| needed[c]).collect();
        let targets: Option<Vec<(Expr, String)>> = (kept.len() != join_cols.len()).then(|| {
            let all = self.all_columns();
            kept.iter().map(|&c| (Expr::Col(map[c].unwrap_or(0)), all[c].name.clone())).collect()
        });
        // The join node over the two inputs' plans, its Join Filter and projection.
        let make = |outer_plan: Plan, inner_plan: Plan| {
            let mut plan = join_node(
                self.coord,
                (method, jt, presorted),
                (outer_plan, inner_plan),
                (node_keys.clone(), more_keys.clone()),
                inner_first,
                Some((&outer.costed, &inner.costed)),
            );
            plan.set_joinrel_rows(self.joinrel_rows.get());
            if let Some(f) = &filter {
                plan = Plan::Result { child: Box::new(plan), filter: Some(f.clone()), targets: None };
            }
            if let Some(t) = &targets {
                plan = Plan::Result { child: Box::new(plan), filter: None, targets: Some(t.clone()) };
            }
            plan
        };
        // build_join_pathkeys: a Merge Join's output is in its outer key's order (but
        // a Right or Full join's, whose null-extended rows break it), a Nested Loop's
        // in its outer side's.
        let order = match method {
            Method::Merge if method.sorted(inner_kind(jt)) => Some(ko),
            Method::NestLoop { .. } => outer.order,
            _ => None,
        };
        let order = order.filter(|&c| self.useful_order(c, joinrelids));
        // Made over the inputs' own nodes (a join input's: its join node over
        // placeholders), costed from their figures (`final_cost_*join` over the input
        // paths), then each input cut off again: the path keeps its own nodes.
        let mut plan = make(outer.plan.clone(), inner.plan.clone());
        let found = {
            let mut join = &plan;
            while let Plan::Result { child, .. } = join {
                join = child;
            }
            match join {
                Plan::HashJoin { outer: o, inner: i, .. }
                | Plan::NestLoop { outer: o, inner: i, .. }
                | Plan::MergeJoin { outer: o, inner: i, .. } => {
                    below_wrappers(o, &outer.plan).zip(below_wrappers(i, &inner.plan))
                }
                _ => None,
            }
        };
        let Some((o, i)) = found else {
            // Not the structure the inputs are found in: the whole plan, costed whole.
            let plan = make(create_plan(outer).plan, create_plan(inner).plan);
            let costed = self.estimate(&plan, &[]);
            return Some(RelPath::new(plan, kept, order, costed));
        };
        let costed = self.estimate(&plan, &[(o, &outer.costed), (i, &inner.costed)]);
        let at = [(o as *const Plan, &**outer), (i as *const Plan, &**inner)];
        cut_inputs(&mut plan, &at);
        let mut path = RelPath::new(plan, kept, order, costed);
        path.inputs = vec![outer.clone(), inner.clone()];
        Some(path)
    }

    /// Sort keys (the query's numbering) as base relation `b` has them: each key its
    /// own column or its member of the key's equivalence class (`find_em_for_rel`),
    /// that column placed by `place` (its index in the query's numbering); None when
    /// a key has no member there or `place` finds none.
    fn keys_on_base(
        &self,
        b: &BaseRel,
        keys: &[SortKey],
        place: impl Fn(usize) -> Option<usize>,
    ) -> Option<Vec<SortKey>> {
        let own = |c: usize| c >= b.first && c < b.first + b.rel.columns.len();
        keys.iter()
            .map(|k| {
                let Expr::Col(c) = k.expr else { return None };
                let member = if own(c) {
                    c
                } else {
                    let ec = self.ecs.iter().find(|e| e.members.contains(&c))?;
                    *ec.members.iter().find(|&&m| own(m))?
                };
                Some(SortKey { expr: Expr::Col(place(member)?), desc: k.desc })
            })
            .collect()
    }

    /// The query's pathkeys as base relation `b` has them, over its own columns
    /// (`is_foreign_pathkey`'s `find_em_for_rel`); None when a key has no member there.
    fn base_pathkeys(&self, b: &BaseRel) -> Option<Vec<SortKey>> {
        self.keys_on_base(b, self.query_pathkeys.as_ref()?, |member| Some(member - b.first))
    }

    /// The query's ORDER BY over a base relation's returned columns `cols`, when every
    /// key is its column or one of its equivalence class, for a relation that can be
    /// read in an order without an index (a foreign table sorts remotely, a
    /// partitioned one merges its ordered partitions); None otherwise.
    fn base_order(&self, b: &BaseRel, cols: &[usize]) -> Option<Vec<SortKey>> {
        if !matches!(b.rel.kind, RelKind::Foreign { .. } | RelKind::Partitioned { .. }) {
            return None;
        }
        self.keys_on_base(b, self.query_sort.as_ref()?, |member| cols.iter().position(|&x| x == member))
    }

    /// `truncate_useless_pathkeys`: is a join relation's order by column `c` (or the
    /// query's, `QUERY_ORDER`) of use above it: the query's ORDER BY, or a merge key
    /// of a join still to come (`pathkeys_useful_for_merging`: its class has a member
    /// outside `relids`, or an outer join's clause outside reads it)? A useless order
    /// is dropped, so that it does not keep a dearer path alive.
    fn useful_order(&self, c: usize, relids: Relids) -> bool {
        if c == QUERY_ORDER || self.same_order(Some(c), self.query_key) {
            return true;
        }
        let outside = |r: Relids| !subset(r, relids);
        self.ecs.iter().any(|e| e.members.contains(&c) && outside(self.ec_relids(e)))
            || self.sjs.iter().any(|sj| {
                outside(self.clause_relids(&sj.clause))
                    && columns_of(&sj.clause, self.n).iter().any(|&k| self.same_order(Some(k), Some(c)))
            })
    }

    /// Are two orderings one (`pathkeys` of one equivalence class; the query's ORDER
    /// BY is its one ascending key's)?
    fn same_order(&self, a: Option<usize>, b: Option<usize>) -> bool {
        let norm = |o: Option<usize>| match o {
            Some(QUERY_ORDER) => self.query_key.or(o),
            o => o,
        };
        let (a, b) = (norm(a), norm(b));
        match (a, b) {
            (Some(QUERY_ORDER), Some(QUERY_ORDER)) => true,
            (Some(QUERY_ORDER), _) | (_, Some(QUERY_ORDER)) => false,
            (None, None) => true,
            (Some(x), Some(y)) => x == y || self.ecs.iter().any(|e| e.members.contains(&x) && e.members.contains(&y)),
            _ => false,
        }
    }

    /// The query's upper levels over one path of the whole join (as `Join::build`
    /// does over a two-relation join).
    fn upper_plan(&self, path: &RelPath, l: &Layers, columns: &[Column]) -> Planned {
        let mut map = vec![None; self.n];
        for (p, &c) in path.cols.iter().enumerate() {
            map[c] = Some(p);
        }
        let order_keys = order_keys_of(l);
        let planned = |plan| Planned {
            plan,
            columns: columns.to_vec(),
            servers: vec![],
            order_key: order_keys.first().copied(),
            order_keys: order_keys.clone(),
        };
        let plan = path.plan.clone();
        if l.agg.is_some() {
            let plan = match distinct_join::is_distinct(l) {
                true => distinct_join::distinct_over(self.coord, plan, l, &map),
                false => agg_over_join(plan, l, &map),
            };
            return planned(finish(plan, l.sort.clone(), l.targets.clone(), l.limit));
        }
        // The path already in the ORDER BY's order (one key, ascending: a Merge
        // Join's, or a Nested Loop's over one): no Sort (`pathkeys_contained_in`).
        let presorted = path.order.is_some() && self.same_order(path.order, Some(QUERY_ORDER));
        let sort = l
            .sort
            .as_ref()
            .filter(|_| !presorted)
            .map(|keys| keys.iter().map(|k| SortKey { expr: rewrite(&k.expr, &map), desc: k.desc }).collect());
        let (targets, identity) = self.final_targets(l, &map, &path.cols);
        planned(finish(plan, sort, (!identity).then_some(targets), l.limit))
    }

    /// A plan costed with the coordinator's settings: `cost_plan`'s estimate of its top
    /// node, the nodes `known` (input paths' plans inside it) taken at their figures.
    fn estimate(&self, plan: &Plan, known: &[(&Plan, &CostedPath)]) -> CostedPath {
        self.costed.set(self.costed.get() + 1);
        crate::plan::costsize::cost_path(plan, known, self.coord, &self.params)
    }

    /// A path of a plan costed on its own (no input path inside it).
    fn plain_path(&self, plan: Plan, cols: Vec<usize>, order: Option<usize>) -> RelPath {
        let costed = self.estimate(&plan, &[]);
        RelPath::new(plan, cols, order, costed)
    }
}

impl RelPath {
    fn new(plan: Plan, cols: Vec<usize>, order: Option<usize>, costed: CostedPath) -> RelPath {
        RelPath { plan, inputs: vec![], cols, est: costed.estimate(), costed, order, out_columns: Default::default() }
    }

    /// Its plan's output columns (computed once).
    fn output_columns(&self) -> &[Column] {
        self.out_columns.get_or_init(|| self.plan.output_columns())
    }
}

/// Where an input path's plan is inside a path built over it: the node itself, or
/// below the Sort, Materialize, Memoize or unique-ifying Agg/Unique put over it (at
/// most three), found by equality with the input's plan (so a path whose structure is
/// not that is simply costed whole).
fn below_wrappers<'p>(node: &'p Plan, input: &Plan) -> Option<&'p Plan> {
    let mut at = node;
    for _ in 0..4 {
        if at == input {
            return Some(at);
        }
        match at {
            Plan::Sort { child, .. }
            | Plan::Material { child }
            | Plan::Memoize { child, .. }
            | Plan::Agg { child, .. }
            | Plan::Unique { child, .. }
            | Plan::WindowAgg { child, .. } => at = child,
            _ => return None,
        }
    }
    None
}

/// Replaces the input paths' plans inside a join path's plan (the nodes at `at`,
/// below the join node and its wrappers) by placeholders with their columns: the
/// path keeps its own nodes only (`RelPath`).
fn cut_inputs(plan: &mut Plan, at: &[(*const Plan, &RelPath)]) {
    // The input's plan is there whole (found equal to it): its columns are its path's.
    if let Some((_, input)) = at.iter().find(|(a, _)| std::ptr::eq(plan as *const Plan, *a)) {
        *plan = Plan::EmptyResult { columns: input.output_columns().to_vec(), rels: vec![], joined: false };
        return;
    }
    for input in own_node_inputs(plan) {
        cut_inputs(input, at);
    }
}

/// What a path's own nodes sit over, in the order `cut_inputs` and `create_plan`
/// walk it: a wrapper's child (Result, Sort, Material, Memoize, Agg, Unique), a
/// join's outer then inner side; nothing below any other node.
fn own_node_inputs(plan: &mut Plan) -> Vec<&mut Plan> {
    match plan {
        Plan::Result { child, .. }
        | Plan::Sort { child, .. }
        | Plan::Material { child }
        | Plan::Memoize { child, .. }
        | Plan::Agg { child, .. }
        | Plan::Unique { child, .. }
        | Plan::WindowAgg { child, .. } => vec![child.as_mut()],
        Plan::HashJoin { outer, inner, .. }
        | Plan::NestLoop { outer, inner, .. }
        | Plan::MergeJoin { outer, inner, .. } => vec![outer.as_mut(), inner.as_mut()],
        _ => vec![],
    }
}

/// `create_plan`: a path with its whole plan, each input's placeholder (in the order
/// `cut_inputs` left them: outer first) replaced by that input's plan, made the same
/// way. A path without inputs is as it is.
fn create_plan(path: &RelPath) -> RelPath {
    fn fill(plan: &mut Plan, inputs: &mut std::slice::Iter<'_, Rc<RelPath>>) {
        if let Plan::EmptyResult { .. } = plan {
            if let Some(p) = inputs.next() {
                *plan = create_plan(p).plan;
            }
            return;
        }
        for input in own_node_inputs(plan) {
            fill(input, inputs);
        }
    }
    let mut whole = RelPath { inputs: vec![], ..path.clone() };
    if !path.inputs.is_empty() {
        fill(&mut whole.plan, &mut path.inputs.iter());
    }
    whole
}

/// A join over a unique-ified side is an inner join to the methods (`add_paths_to_joinrel`
/// makes JOIN_UNIQUE_INNER/OUTER JOIN_INNER).
fn inner_kind(jt: JoinType) -> JoinType {
    match jt {
        JoinType::UniqueInner | JoinType::UniqueOuter => JoinType::Inner,
        jt => jt,
    }
}

/// `make_outerjoininfo` for an outer join of `lhs` and `rhs` (RIGHT already made
/// LEFT) whose ON clause is `clause`, over `clause_relids`, above the special joins
/// `lower`: a FULL join's minimal sides are its syntactic ones; a LEFT join's minimal
/// left side is the left relations its clause reads, and every lower outer join in
/// its left side that it cannot commute with (a FULL one, or a LEFT one whose
/// nullable side the clause reads without being strict there: never, as the clause
/// is an equality, so identity 3 applies). Its minimal right side is its syntactic
/// one (a single relation, or for a RIGHT join a whole join: kept whole, a departure).
fn make_outerjoininfo(
    (jt, lhs, rhs): (JoinType, Relids, Relids),
    clause: Expr,
    clause_relids: Relids,
    lower: &[SpecialJoin],
) -> SpecialJoin {
    let mut sj = SpecialJoin { jt, syn_lhs: lhs, syn_rhs: rhs, min_lhs: lhs, min_rhs: rhs, clause, unique_ok: false };
    if !matches!(jt, JoinType::Left | JoinType::Semi | JoinType::Anti) {
        return sj;
    }
    sj.min_lhs = clause_relids & lhs;
    // A semi or anti join above a lower one whose right side its quals read keeps it
    // below (`make_outerjoininfo`: `jointype == JOIN_SEMI || jointype == JOIN_ANTI`).
    let semi = matches!(jt, JoinType::Semi | JoinType::Anti);
    for other in lower.iter().filter(|o| overlap(lhs, o.syn_rhs)) {
        if other.jt == JoinType::Full
            || (overlap(clause_relids, other.syn_rhs) && (semi || !overlap(clause_relids, other.min_rhs)))
        {
            sj.min_lhs |= other.syn_lhs | other.syn_rhs;
        }
    }
    if sj.min_lhs == 0 {
        sj.min_lhs = lhs;
    }
    sj
}

/// `join_is_legal`: may `a` and `b` be joined given the special joins, and as which
/// (its index, and whether reversed: `b` is its left side; None: an inner join)?
/// None: not legal. A join that reaches into an outer join's minimal right side
/// without its left one is legal only to build up that right side, or as the
/// implementation of another special join (identity 3 of optimizer/README).
fn join_is_legal(sjs: &[SpecialJoin], a: Relids, b: Relids) -> Option<(Option<usize>, bool)> {
    let joinrelids = a | b;
    let mut matched: Option<(usize, bool)> = None;
    let mut is_valid_inner = true;
    for (k, sj) in sjs.iter().enumerate() {
        if !overlap(sj.min_rhs, joinrelids) || subset(joinrelids, sj.min_rhs) {
            continue;
        }
        if (subset(sj.min_lhs, a) && subset(sj.min_rhs, a)) || (subset(sj.min_lhs, b) && subset(sj.min_rhs, b)) {
            continue;
        }
        // A semi join's right side already joined to other relations in an input was
        // made unique there: the semi join is done.
        let proper = |x: Relids| subset(sj.syn_rhs, x) && sj.syn_rhs != x;
        if sj.jt == JoinType::Semi && (proper(a) || proper(b)) {
            continue;
        }
        if subset(sj.min_lhs, a) && subset(sj.min_rhs, b) {
            if matched.is_some() {
                return None;
            }
            matched = Some((k, false));
        } else if subset(sj.min_lhs, b) && subset(sj.min_rhs, a) {
            if matched.is_some() {
                return None;
            }
            matched = Some((k, true));
        } else if sj.jt == JoinType::Semi && sj.unique_ok && (sj.syn_rhs == b || sj.syn_rhs == a) {
            // The right side whole, made unique, joins anything as an inner join.
            if matched.is_some() {
                return None;
            }
            matched = Some((k, sj.syn_rhs == a));
        } else if !(overlap(a, sj.min_rhs) && overlap(b, sj.min_rhs)) {
            // A semi or anti join's right side takes in no other relation (only a LEFT
            // join's may, identity 3).
            if matches!(sj.jt, JoinType::Semi | JoinType::Anti) {
                return None;
            }
            is_valid_inner = false;
        }
    }
    if !is_valid_inner && matched.is_none() {
        return None;
    }
    Some(match matched {
        Some((k, reversed)) => (Some(k), reversed),
        None => (None, false),
    })
}

/// `add_path`: `new` joins the pathlist unless a path there is as good on cost
/// (fuzzily) and ordering; the paths it beats so leave it. An ordering is better than
/// none, two different ones are not comparable (`compare_pathkeys`); the list is kept
/// in order of total cost.
fn add_rel_path(
    pathlist: &mut Vec<Rc<RelPath>>,
    new: RelPath,
    consider_startup: bool,
    same: &dyn Fn(Option<usize>, Option<usize>) -> bool,
) {
    let mut i = 0;
    while i < pathlist.len() {
        let old = &pathlist[i];
        let keys = if same(new.order, old.order) {
            Costs::Equal
        } else {
            match (new.order, old.order) {
                (Some(_), None) => Costs::Better1,
                (None, Some(_)) => Costs::Better2,
                _ => Costs::Different,
            }
        };
        let kept = match (compare_path_costs_fuzzily(&new.est, &old.est, STD_FUZZ_FACTOR, consider_startup), keys) {
            (_, Costs::Different) | (Costs::Different, _) => Kept::Both,
            (Costs::Equal, Costs::Better1) => Kept::New,
            (Costs::Equal, Costs::Better2) => Kept::Old,
            (Costs::Equal, _) => add_path_keeps(&new.est, &old.est, consider_startup),
            (Costs::Better1, k) if k != Costs::Better2 => Kept::New,
            (Costs::Better2, k) if k != Costs::Better1 => Kept::Old,
            _ => Kept::Both,
        };
        match kept {
            Kept::Old => return,
            Kept::New => {
                pathlist.remove(i);
            }
            Kept::Both => i += 1,
        }
    }
    let at = pathlist.iter().position(|p| new.est.total < p.est.total).unwrap_or(pathlist.len());
    pathlist.insert(at, Rc::new(new));
}

/// The levels above the aggregate (`grouping_planner::Upper`).
fn upper_of(l: &Layers) -> Upper<'_> {
    Upper { having: l.having.as_ref(), sort: l.sort.as_deref(), targets: l.targets.as_deref(), limit: l.limit }
}

/// The grouped relation's paths over one input (`grouping_planner::grouping_candidates`):
/// the query's group keys and aggregates over `input`'s output (`map`: the query's
/// numbering to it).
fn grouped_over(input: Plan, map: &[Option<usize>], l: &Layers) -> Vec<Cand> {
    let Some((_, keys, aggs)) = &l.agg else { return vec![] };
    let keys: Vec<Expr> = keys.iter().map(|e| rewrite(e, map)).collect();
    let aggs: Vec<AggCall> = aggs
        .iter()
        .map(|a| AggCall { func: a.func, arg: a.arg.as_ref().map(|e| rewrite(e, map)), distinct: a.distinct })
        .collect();
    // A DISTINCT's sorted path is a Unique (`create_distinct_paths`).
    let distinct = distinct_join::is_distinct(l);
    let agg = |input: Plan, strategy: AggStrategy| Plan::Agg {
        child: Box::new(input),
        strategy: match strategy {
            AggStrategy::Sorted if distinct => AggStrategy::Unique,
            other => other,
        },
        group_by: keys.clone(),
        aggs: aggs.clone(),
        split: crate::plan::AggSplit::Simple,
    };
    let pathkeys = group_pathkeys(keys.len(), l.sort.as_deref());
    let input_keys = input_pathkeys(&keys, &pathkeys);
    grouping_candidates(&input, None, &input_keys, &pathkeys, &agg, &upper_of(l))
}

/// The foreign servers a plan reads, in the order its scans start (the executor
/// opens connections as it initializes the tree, outer side first).
fn collect_servers(plan: &Plan, servers: &mut Vec<String>) {
    if let Plan::ForeignScan(f) = plan {
        if !servers.contains(&f.server) {
            servers.push(f.server.clone());
        }
    }
    for c in plan.children() {
        collect_servers(c, servers);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equalities_merge_into_classes_in_the_order_named() {
        let mut ecs = vec![];
        add_to_eclass(&mut ecs, 1, 5);
        add_to_eclass(&mut ecs, 9, 12);
        add_to_eclass(&mut ecs, 5, 9);
        assert_eq!(ecs.len(), 1);
        assert_eq!(ecs[0].members, vec![1, 5, 9, 12]);
    }

    fn eq(a: usize, b: usize) -> Expr {
        Expr::bin(BinOp::Eq, Expr::Col(a), Expr::Col(b))
    }

    /// `a ⟕ b ON a=b ⟕ c ON b=c` (relids 1, 2, 4): identity 3 lets b join c first;
    /// a may not join c alone, nor b before a but as the upper join's left side.
    #[test]
    fn a_chain_of_left_joins_commutes_by_identity_3() {
        let (a, b, c) = (1, 2, 4);
        let sj0 = make_outerjoininfo((JoinType::Left, a, b), eq(0, 1), a | b, &[]);
        let sj1 = make_outerjoininfo((JoinType::Left, a | b, c), eq(1, 2), b | c, std::slice::from_ref(&sj0));
        assert_eq!((sj1.min_lhs, sj1.min_rhs), (b, c));
        let sjs = [sj0, sj1];
        assert_eq!(join_is_legal(&sjs, a, b), Some((Some(0), false)));
        assert_eq!(join_is_legal(&sjs, b, a), Some((Some(0), true)));
        assert_eq!(join_is_legal(&sjs, b, c), Some((Some(1), false)));
        assert_eq!(join_is_legal(&sjs, a, c), None);
        assert_eq!(join_is_legal(&sjs, a | b, c), Some((Some(1), false)));
        assert_eq!(join_is_legal(&sjs, a, b | c), Some((Some(0), false)));
    }

    /// `a FULL b ON a=b ⟕ c ON b=c`: the LEFT join does not commute with the FULL
    /// one below it (its minimal left side is both), so c joins only a ⋈ b.
    #[test]
    fn a_left_join_above_a_full_join_waits_for_it() {
        let (a, b, c) = (1, 2, 4);
        let sj0 = make_outerjoininfo((JoinType::Full, a, b), eq(0, 1), a | b, &[]);
        let sj1 = make_outerjoininfo((JoinType::Left, a | b, c), eq(1, 2), b | c, std::slice::from_ref(&sj0));
        assert_eq!(sj1.min_lhs, a | b);
        let sjs = [sj0, sj1];
        assert_eq!(join_is_legal(&sjs, b, c), None);
        assert_eq!(join_is_legal(&sjs, a, c), None);
        assert_eq!(join_is_legal(&sjs, a, b), Some((Some(0), false)));
        assert_eq!(join_is_legal(&sjs, c, a | b), Some((Some(1), true)));
    }

    /// An inner join's relations join in any order; inside an outer join's nullable
    /// side (a RIGHT join over `a ⋈ b`, made `c ⟕ (a ⋈ b)`) they build that side up.
    #[test]
    fn inner_joins_commute_and_build_up_a_nullable_side() {
        let (a, b, c) = (1, 2, 4);
        assert_eq!(join_is_legal(&[], a, c), Some((None, false)));
        let sj = make_outerjoininfo((JoinType::Left, c, a | b), eq(4, 0), a | c, &[]);
        assert_eq!((sj.min_lhs, sj.min_rhs), (c, a | b));
        let sjs = [sj];
        assert_eq!(join_is_legal(&sjs, a, b), Some((None, false)));
        assert_eq!(join_is_legal(&sjs, a, c), None);
        assert_eq!(join_is_legal(&sjs, a | b, c), Some((Some(0), true)));
    }

    /// (h17s) `a ⋉ b ON a=b ⋉ c ON a=c` (two IN/EXISTS sublinks pulled up): each
    /// semi join's minimal left side is a alone, so either joins a first; b and c
    /// never join each other (each is a semi join's right side), and b or c whole,
    /// made unique, joins a as an inner join; an anti join's right side is joined to
    /// its left side only.
    #[test]
    fn semi_joins_keep_their_right_sides_apart() {
        let (a, b, c) = (1, 2, 4);
        let semi = |lhs, rhs, clause, relids, lower: &[SpecialJoin]| {
            let mut sj = make_outerjoininfo((JoinType::Semi, lhs, rhs), clause, relids, lower);
            sj.unique_ok = true;
            sj
        };
        let sj0 = semi(a, b, eq(0, 1), a | b, &[]);
        let sj1 = semi(a | b, c, eq(0, 2), a | c, std::slice::from_ref(&sj0));
        assert_eq!((sj1.min_lhs, sj1.min_rhs), (a, c));
        let sjs = [sj0.clone(), sj1];
        assert_eq!(join_is_legal(&sjs, a, b), Some((Some(0), false)));
        assert_eq!(join_is_legal(&sjs, b, a), Some((Some(0), true)));
        assert_eq!(join_is_legal(&sjs, a, c), Some((Some(1), false)));
        assert_eq!(join_is_legal(&sjs, b, c), None);
        assert_eq!(join_is_legal(&sjs, a | b, c), Some((Some(1), false)));
        assert_eq!(join_is_legal(&sjs, c, a | b), Some((Some(1), true)));
        assert_eq!(join_is_legal(&sjs, a | c, b), Some((Some(0), false)));
        // A semi join reading the right side of the one below it waits for it.
        let sj2 = semi(a | b, c, eq(1, 2), b | c, std::slice::from_ref(&sj0));
        assert_eq!((sj2.min_lhs, sj2.min_rhs), (a | b, c));
        // An anti join: its right side joins nothing but its left side.
        let anti = make_outerjoininfo((JoinType::Anti, a, b), eq(0, 1), a | b, &[]);
        let sjs = [anti, semi(a | b, c, eq(0, 2), a | c, &[])];
        assert_eq!(join_is_legal(&sjs, b, c), None);
        assert_eq!(join_is_legal(&sjs, a | c, b), Some((Some(0), false)));
        assert_eq!(join_is_legal(&sjs, a | b, c), Some((Some(1), false)));
        // `a ⋉ (b ⋉ c ON b=c) ON a=b` (a sublink nested in a pulled-up subquery, reading
        // its relation): the inner join first, then the outer one over both.
        let mut sj0 = semi(a, b, eq(0, 1), a | b, &[]);
        let sj1 = semi(b, c, eq(1, 2), b | c, &[]);
        // Its minimal left side is b alone: the outer semi join is above it, not
        // among its lower joins (`deconstruct_jointree` meets the nested one first).
        assert_eq!((sj1.min_lhs, sj1.min_rhs), (b, c));
        (sj0.syn_rhs, sj0.min_rhs) = (b | c, b | c);
        let sjs = [sj0, sj1];
        assert_eq!(join_is_legal(&sjs, a, b), None);
        assert_eq!(join_is_legal(&sjs, b, c), Some((Some(1), false)));
        assert_eq!(join_is_legal(&sjs, a, b | c), Some((Some(0), false)));
        assert_eq!(join_is_legal(&sjs, b | c, a), Some((Some(0), true)));
    }

    #[test]
    fn relid_sets() {
        assert!(subset(0b010, 0b110));
        assert!(!subset(0b011, 0b110));
        assert!(overlap(0b011, 0b110));
        assert!(!overlap(0b001, 0b110));
    }
}
