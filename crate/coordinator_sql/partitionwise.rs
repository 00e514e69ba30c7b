//! Partitionwise join of two relations (`enable_partitionwise_join`), as PostgreSQL 15
//! plans it: `build_joinrel_partition_info` and `have_partkey_equi_join` (relnode.c)
//! decide whether the join relation is partitioned like its sides,
//! `try_partitionwise_join` (joinrels.c) pairs the partitions and joins each pair,
//! `generate_partitionwise_join_paths` / `add_paths_to_append_rel` (allpaths.c) put
//! an Append over the pairs' cheapest paths, and `apply_scanjoin_target_to_paths`
//! (planner.c) computes the select list (or the aggregate's input) inside each pair.
//!
//! The protocol, as PostgreSQL runs it:
//!
//! 1. Two partitioned tables with the same partitioning scheme (strategy, number and
//!    types of key columns) joined by an equality of their partition keys, column for
//!    column (an inner join's clause, an outer join's ON clause, or a semi or anti
//!    join's: an IN / EXISTS / NOT EXISTS pulled up), make a join relation
//!    partitioned alike (`Join::partition_pairs`).
//! 2. Partitions with the same bound are paired (`partition_bounds_equal`: both
//!    tables have the same bounds); when the bounds differ, the partitions pruning
//!    leaves are matched by `partition_bounds_merge` (partbounds.rs: ranges that
//!    overlap, lists that share a value, one to one; hash bounds never), and if they
//!    do not match one to one the join is planned as usual. A pair that cannot return
//!    a row is left out: an inner (semi) join's pair with either side pruned or
//!    missing, an outer (anti) join's with its preserved side pruned or missing
//!    (FULL: both). When an outer join's preserved partition is left without its
//!    partner (pruned, or no partition matches it), the join is not partitionwise at
//!    all (`try_partitionwise_join` sets `nparts = 0`): it is planned as usual.
//! 3. Each pair is a join relation of its own, planned as any join of two relations
//!    (`Join::choose`: method and order by cost), its sides the two partitions' scans
//!    with the join's conditions on each side pushed in; its cheapest path is a member
//!    of the Append. Two foreign partitions on one server are also offered as one
//!    Foreign Scan of their join (postgres_fdw's `postgresGetForeignJoinPaths` for a
//!    child join relation), whose remote query names each partition by its
//!    range-table index: the query's own entries, then the first relation's
//!    partitions left by pruning, then the second's (`expand_partitioned_rtentry`).
//! 4. At the top of the query `apply_scanjoin_target_to_paths` drops every path of a
//!    partitioned join relation and keeps only the Append of the pairs, the scan/join
//!    target computed in each pair: with two relations the partitionwise plan is the
//!    one taken whatever the other paths cost, and each pair's join outputs the select
//!    list (or the aggregate's input columns); the aggregate, LIMIT, … go above.
//!
//! Invariants: a pair is named `alias_k` (k counting the pairs, in bound order) with the
//! parent's alias as its scan's parent, so EXPLAIN prints the Append's output with the
//! parents' names; a lone pair is not under an Append (setrefs.c removes it) and its
//! scans go by the parents' aliases. Every case PostgreSQL would join partitionwise and
//! the sandbox does not is refused by name, never planned differently.
//!
//! Where it departs from PostgreSQL (each refused by name when the setting is on):
//! bounds that differ with a default partition or a list partition accepting NULL
//! (PostgreSQL 15's `partition_bounds_merge` can still pair them), sub-partitioned
//! partitions, ORDER BY over foreign pairs or by a
//! partition key (PostgreSQL weighs a Merge Append of the ordered pairs; with local
//! pairs ordered otherwise it is a Sort above the Append, planned here), and a GROUP BY
//! key that is not a column. A lone pair pushed down has its partitions' widths, not
//! the parents' (`build_child_join_reltarget`: EXPLAIN's width can differ by a byte).
//! Joins of three or more relations partitioned alike are partitionwise_joinrels.rs's.

use super::partbounds::{partition_bounds_merge, Merge, Merged};
use super::*;

/// A pair of partitions to join: the first relation's and the second's.
type Pair<'r> = [&'r Relation; 2];

impl<'r> Join<'r> {
    /// The pairs of partitions to join one by one, in bound order; None when the join
    /// is planned as usual (the setting off, sides not partitioned alike or not joined
    /// on their keys, or an outer join whose nullable side lost a partition its
    /// preserved side kept).
    pub(super) fn partition_pairs(&self) -> Result<Option<Vec<Pair<'r>>>, FrontError> {
        if !self.coord.setting_on("enable_partitionwise_join", false) || self.clauseless {
            return Ok(None);
        }
        let [a, b] = &self.sides;
        let (RelKind::Partitioned { strategy: sa, key: ka, .. }, RelKind::Partitioned { strategy: sb, key: kb, .. }) =
            (&a.rel.kind, &b.rel.kind)
        else {
            return Ok(None);
        };
        let same_types = ka.iter().zip(kb).all(|(&x, &y)| a.rel.columns[x].ty == b.rel.columns[y].ty);
        if sa != sb || ka.len() != kb.len() || !same_types || !self.joins_partition_keys(ka, kb) {
            return Ok(None);
        }
        let names = format!("\"{}\" and \"{}\"", a.rel.name, b.rel.name);
        if !matches!(
            self.join_type,
            JoinType::Inner | JoinType::Left | JoinType::Right | JoinType::Full | JoinType::Semi | JoinType::Anti
        ) {
            return Err(self.refuse(format!("a partitionwise join of type {:?} ({names})", self.join_type)));
        }
        let (pa, pb) = (self.partitions(a.rel), self.partitions(b.rel));
        if pa.iter().chain(&pb).any(|(_, r)| matches!(r.kind, RelKind::Partitioned { .. })) {
            return Err(self.refuse(format!("a partitionwise join of sub-partitioned tables ({names})")));
        }
        let (live_a, live_b) = (self.live(a), self.live(b));
        if same_bounds(&pa, &pb) {
            // `partition_bounds_equal`: the partitions at the same place pair up, a
            // pruned one missing from its pair.
            let live = |r: &'r Relation, names: &[&str]| names.contains(&r.name.as_str()).then_some(r);
            let matched: Vec<Merged> =
                pa.iter().zip(&pb).map(|(&(_, x), &(_, y))| (live(x, &live_a), live(y, &live_b))).collect();
            return Ok(self.live_pairs(&matched));
        }
        // `partition_bounds_merge` over the partitions pruning leaves.
        let keep = |parts: &[(&'r Bound, &'r Relation)], names: &[&str]| -> Vec<(&'r Bound, &'r Relation)> {
            parts.iter().filter(|(_, r)| names.contains(&r.name.as_str())).copied().collect()
        };
        match partition_bounds_merge(&keep(&pa, &live_a), &keep(&pb, &live_b)) {
            Merge::Partitions(matched) => Ok(self.live_pairs(&matched)),
            Merge::NotPartitionwise => Ok(None),
            Merge::Unsupported(what) => Err(self.refuse(format!(
                "a partitionwise join of tables whose partition bounds differ ({names}), with {what}: PostgreSQL 15 \
                 may still pair their partitions (partition_bounds_merge)"
            ))),
        }
    }

    /// `have_partkey_equi_join`: every key column of the first relation is equal to
    /// the same key column of the second by one of the join's equalities (its key, or
    /// for an inner join another equality between the sides).
    fn joins_partition_keys(&self, ka: &[usize], kb: &[usize]) -> bool {
        let [a, b] = &self.sides;
        let wa = a.rel.columns.len();
        let mut equal = vec![(a.key, b.key)];
        if self.join_type == JoinType::Inner {
            equal.extend(self.rest.iter().filter_map(|c| join_key(c, wa)).map(|(x, y, _)| (x, y - wa)));
        }
        ka.iter().zip(kb).all(|(&x, &y)| equal.contains(&(x, y)))
    }

    /// A partitioned relation's partitions with their bounds, in bound order.
    fn partitions(&self, rel: &'r Relation) -> Vec<(&'r Bound, &'r Relation)> {
        let RelKind::Partitioned { partitions, .. } = &rel.kind else { return vec![] };
        let mut parts: Vec<(&Bound, &Relation)> = partitions
            .iter()
            .filter_map(|p| self.coord.relation(p))
            .filter_map(|r| r.partition_of.as_ref().map(|(_, b)| (b, r)))
            .collect();
        parts.sort_by(|x, y| bound_order(x.0, y.0));
        parts
    }

    /// The names of a side's partitions its own conditions leave (pruning).
    fn live(&self, s: &JoinSide<'r>) -> Vec<&'r str> {
        let p = Planner::new(self.coord, vec![]);
        p.leaves(s.rel, s.conjuncts).iter().map(|r| r.name.as_str()).collect()
    }

    /// `try_partitionwise_join`'s loop over the merged partitions (`matched`, a
    /// partition None where pruned or without a partner): the pairs that can return
    /// rows; None when a preserved side's partition is left without its partner.
    fn live_pairs(&self, matched: &[Merged<'r>]) -> Option<Vec<Pair<'r>>> {
        // Which sides' rows the join keeps without a match.
        let (keeps_a, keeps_b) = match self.join_type {
            JoinType::Left | JoinType::Anti => (true, false),
            JoinType::Right => (false, true),
            JoinType::Full => (true, true),
            _ => (false, false),
        };
        let mut pairs = vec![];
        for m in matched {
            match *m {
                (Some(x), Some(y)) => pairs.push([x, y]),
                // A missing partition has no relation to join (`child_rel == NULL`):
                // PostgreSQL gives up the partitionwise join unless the pair is empty.
                (Some(_), None) if keeps_a => return None,
                (None, Some(_)) if keeps_b => return None,
                _ => {}
            }
        }
        Some(pairs)
    }

    /// Each partition's range-table index, as `expand_partitioned_rtentry` appends
    /// them after the query's own entries: the first relation's partitions left by its
    /// pruning, in bound order, then the second's. A pushed-down pair's remote query
    /// names its tables by them (`r<index>`).
    fn partition_rt_indexes(&self) -> Vec<(&'r str, usize)> {
        let p = Planner::new(self.coord, vec![]);
        let [a, b] = &self.sides;
        let live = p.leaves(a.rel, a.conjuncts).into_iter().chain(p.leaves(b.rel, b.conjuncts));
        live.enumerate().map(|(i, r)| (r.name.as_str(), self.range_table + 1 + i)).collect()
    }

    fn refuse(&self, what: String) -> FrontError {
        FrontError::unsupported(format!("enable_partitionwise_join = on: {what}"), self.at)
    }

    /// The query planned over the Append of the pairs' joins (`pairs` from
    /// [`Self::partition_pairs`]): each pair joined as a two-relation join of its
    /// own, computing the scan/join target; the aggregate and LIMIT above.
    pub(super) fn choose_partitionwise(
        &self,
        pairs: &[Pair<'r>],
        l: &Layers,
        servers: &mut Vec<String>,
    ) -> Result<Planned, FrontError> {
        if l.sort.is_some() {
            self.check_sort(pairs, l)?;
        }
        let (target, map) = self.scanjoin_target(l)?;
        let [a, b] = &self.sides;
        let n = pairs.len();
        // EXPLAIN's names: alias_k under an Append, the parent's alias for a lone pair.
        let names: Vec<[String; 2]> = (1..=n)
            .map(|k| match n {
                1 => [a.name.to_string(), b.name.to_string()],
                _ => [format!("{}_{k}", a.name), format!("{}_{k}", b.name)],
            })
            .collect();
        let pair_layers =
            Layers { limit: None, targets: Some(target.clone()), sort: None, having: None, agg: None, filter: None };
        let rt_indexes = self.partition_rt_indexes();
        let rt_index = |r: &Relation| rt_indexes.iter().find(|(n, _)| *n == r.name).map_or(0, |(_, i)| *i);
        let mut children = vec![];
        for (pair, [na, nb]) in pairs.iter().zip(&names) {
            // A pair of foreign partitions on one server may be one Foreign Scan of
            // their join (postgres_fdw's join pushdown), weighed by `choose` as for
            // two foreign tables.
            let join = Join {
                coord: self.coord,
                sides: [pair_side(a, pair[0], na, rt_index(pair[0])), pair_side(b, pair[1], nb, rt_index(pair[1]))],
                rest: self.rest,
                above: self.above,
                join_type: self.join_type,
                key_b_first: self.key_b_first,
                clauseless: self.clauseless,
                columns: self.columns,
                range_table: self.range_table,
                at: self.at,
            };
            let mut plan = join.choose(&pair_layers, servers)?.plan;
            // A lone pair's scans keep it too: the cost model reads them as a child
            // join's members (their own statistics), and EXPLAIN prints no parent.
            name_parents(&mut plan, &[(na, a.name), (nb, b.name)]);
            children.push(plan);
        }
        let append = match children.len() {
            // Every pair empty: the dummy join relation (a Result with One-Time Filter: false).
            0 => Plan::EmptyResult {
                columns: self.target_columns(&target),
                rels: self.target_rels(&target),
                joined: true,
            },
            _ => append(children),
        };
        let plan = match l.agg {
            Some(_) => finish(agg_over_join(append, l, &map), l.sort.clone(), l.targets.clone(), l.limit),
            None => self.sort_above(append, target, l),
        };
        let order_keys = order_keys_of(l);
        Ok(Planned {
            plan,
            columns: self.columns.to_vec(),
            servers: vec![],
            order_key: order_keys.first().copied(),
            order_keys,
        })
    }

    /// The scan/join target each pair computes (`apply_scanjoin_target_to_paths`), in
    /// the join's numbering, and where each join column lands in it: the select list
    /// (every column without one); under an aggregate its input as
    /// `make_group_input_target` orders it: the select list's grouping columns and
    /// the columns its other entries read, in order, then the other grouping
    /// columns and the aggregates' (HAVING's) columns.
    fn scanjoin_target(&self, l: &Layers) -> Result<(Vec<(Expr, String)>, Vec<Option<usize>>), FrontError> {
        let [a, b] = &self.sides;
        let wa = a.rel.columns.len();
        let n = wa + b.rel.columns.len();
        let name = |c: usize| if c < wa { a.rel.columns[c].name.clone() } else { b.rel.columns[c - wa].name.clone() };
        scanjoin_target(l, n, &name, self.columns).map_err(|m| self.refuse(m))
    }
}

/// [`Join::scanjoin_target`] over `n` join columns named by `name`, the query's
/// output `columns`; the error names what is not planned.
pub(super) fn scanjoin_target(
    l: &Layers,
    n: usize,
    name: &dyn Fn(usize) -> String,
    columns: &[Column],
) -> Result<(Vec<(Expr, String)>, Vec<Option<usize>>), String> {
    {
        let Some((_, keys, aggs)) = &l.agg else {
            let mut target: Vec<(Expr, String)> = match &l.targets {
                Some(t) => t.clone(),
                None => {
                    (0..n).map(|c| (Expr::Col(c), columns.get(c).map_or_else(|| name(c), |k| k.name.clone()))).collect()
                }
            };
            // ORDER BY's keys not in the select list: resjunk entries at its end.
            for k in l.sort.iter().flatten() {
                if !target.iter().any(|(e, _)| *e == k.expr) {
                    let label = match k.expr {
                        Expr::Col(c) => name(c),
                        _ => "?column?".to_string(),
                    };
                    target.push((k.expr.clone(), label));
                }
            }
            return Ok((target, vec![None; n]));
        };
        let mut cols: Vec<usize> = vec![];
        let mut add = |e: &Expr| {
            e.for_each_col(&mut |c| {
                if !cols.contains(&c) {
                    cols.push(c)
                }
            })
        };
        let nkeys = keys.len();
        if keys.iter().any(|k| !matches!(k, Expr::Col(_))) {
            return Err(
                "a GROUP BY expression that is not a column over a partitionwise join: not planned yet".to_string()
            );
        }
        // The aggregate's output: the keys, then the aggregates.
        let output_ref = |i: usize| -> Vec<&Expr> {
            match i.checked_sub(nkeys) {
                None => keys.get(i).into_iter().collect(),
                Some(j) => aggs.get(j).and_then(|g| g.arg.as_ref()).into_iter().collect(),
            }
        };
        for (e, _) in l.targets.iter().flatten() {
            e.for_each_col(&mut |i| output_ref(i).into_iter().for_each(&mut add));
        }
        keys.iter().for_each(&mut add);
        aggs.iter().filter_map(|g| g.arg.as_ref()).for_each(&mut add);
        let mut map = vec![None; n];
        for (pos, &c) in cols.iter().enumerate() {
            map[c] = Some(pos);
        }
        Ok((cols.iter().map(|&c| (Expr::Col(c), name(c))).collect(), map))
    }
}

impl<'r> Join<'r> {
    /// ORDER BY over a partitionwise join, where the sandbox plans what PostgreSQL
    /// does: a Sort above the Append (`create_ordered_paths` over the cheapest path).
    /// That is when no pair has a path in an order the query could use: every
    /// partition a local table (postgres_fdw offers remote-ordered paths, which a
    /// Merge Append of the pairs would keep), and no ORDER BY key (GROUP BY key under
    /// an aggregate) a partition key (the pairs' Merge Joins are ordered by the join
    /// key: a Merge Append of them, or an Incremental Sort over it, competes).
    fn check_sort(&self, pairs: &[Pair], l: &Layers) -> Result<(), FrontError> {
        let [a, b] = &self.sides;
        let local = pairs.iter().flatten().all(|r| matches!(r.kind, RelKind::Table(_)));
        let key_cols: Vec<usize> = [a, b]
            .iter()
            .flat_map(|s| match &s.rel.kind {
                RelKind::Partitioned { key, .. } => key.iter().map(|k| s.first + k).collect(),
                _ => vec![],
            })
            .collect();
        let ordered_by: Vec<&Expr> = match &l.agg {
            Some((_, keys, _)) => keys.iter().collect(),
            None => l.sort.iter().flatten().map(|k| &k.expr).collect(),
        };
        let on_key = ordered_by.iter().any(|e| {
            let mut hit = false;
            e.for_each_col(&mut |c| hit |= key_cols.contains(&c));
            hit
        });
        if local && !on_key {
            return Ok(());
        }
        Err(self.refuse(
            "ORDER BY over a partitionwise join of foreign partitions, or by (or grouped by) a partition key \
             (PostgreSQL weighs a Merge Append of the ordered pairs against a Sort above the Append): not \
             planned yet"
                .to_string(),
        ))
    }

    /// The Sort (over the target's positions), the select list without the resjunk
    /// ORDER BY entries, and the LIMIT above the Append of the pairs.
    fn sort_above(&self, append: Plan, target: Vec<(Expr, String)>, l: &Layers) -> Plan {
        let position = |e: &Expr| target.iter().position(|(t, _)| t == e).unwrap_or(0);
        let sort = l
            .sort
            .as_ref()
            .map(|keys| keys.iter().map(|k| SortKey { expr: Expr::Col(position(&k.expr)), desc: k.desc }).collect());
        let visible = l.targets.as_ref().map_or(target.len(), Vec::len);
        let targets = (visible < target.len()).then(|| {
            target.iter().take(visible).enumerate().map(|(i, (_, name))| (Expr::Col(i), name.clone())).collect()
        });
        finish(append, sort, targets, l.limit)
    }

    /// The target's columns, named and typed (the dummy relation's).
    /// The alias of the side each target column is a Var of (None for an
    /// expression): the dummy join relation's columns, qualified as Vars.
    fn target_rels(&self, target: &[(Expr, String)]) -> Vec<Option<String>> {
        let [a, b] = &self.sides;
        let split = a.rel.columns().len();
        target
            .iter()
            .map(|(e, _)| match e {
                Expr::Col(c) if *c < split => Some(a.name.to_string()),
                Expr::Col(_) => Some(b.name.to_string()),
                _ => None,
            })
            .collect()
    }

    fn target_columns(&self, target: &[(Expr, String)]) -> Vec<Column> {
        let [a, b] = &self.sides;
        let input: Vec<Column> = a.rel.columns().into_iter().chain(b.rel.columns()).collect();
        target.iter().map(|(e, name)| Column::new(name, e.col_type(&input))).collect()
    }
}

/// A side of a pair's join: the partition `rel` of the join's side `s`, named `name`,
/// with the side's conditions, columns and key (partitions have their parent's
/// columns, so the numbering is the same).
fn pair_side<'x>(s: &JoinSide<'x>, rel: &'x Relation, name: &'x str, rt_index: usize) -> JoinSide<'x> {
    JoinSide { rel, name, conjuncts: s.conjuncts, used: s.used.clone(), key: s.key, first: s.first, rt_index }
}

/// `partition_bounds_equal`: the same number of partitions with the same bounds, in
/// bound order (a list partition's values as a set).
pub(super) fn same_bounds(pa: &[(&Bound, &Relation)], pb: &[(&Bound, &Relation)]) -> bool {
    let equal = |x: &Bound, y: &Bound| match (x, y) {
        (Bound::List(u), Bound::List(v)) => u.len() == v.len() && u.iter().all(|d| v.contains(d)),
        _ => x == y,
    };
    pa.len() == pb.len() && pa.iter().zip(pb).all(|((x, _), (y, _))| equal(x, y))
}

/// Gives the scans named `alias_k` in a pair's plan their parent's alias (`alias`),
/// which EXPLAIN prints the Append's output with (`parent` is not printed), and
/// marks them as partitions' scans (appendrel members: no physical target list).
pub(super) fn name_parents(plan: &mut Plan, names: &[(&String, &str)]) {
    let set = |n: &mut Option<ScanName>| {
        if let Some(n) = n {
            if let Some((_, parent)) = names.iter().find(|(alias, _)| **alias == n.alias) {
                n.parent = Some(parent.to_string());
                n.member = true;
            }
        }
    };
    match plan {
        Plan::SeqScan { alias, .. } | Plan::IndexScan { alias, .. } => set(alias),
        Plan::BitmapHeapScan { alias, child, .. } => {
            set(alias);
            name_parents(child, names);
        }
        Plan::ForeignScan(f) => match f.remote.join.as_deref_mut() {
            // A pair pushed to its server: each of its relations names its parent.
            Some(j) => {
                for r in j.rels.iter_mut() {
                    if let Some((_, parent)) = names.iter().find(|(alias, _)| **alias == r.alias) {
                        r.parent = Some(parent.to_string());
                    }
                }
            }
            None => set(&mut f.alias),
        },
        Plan::HashJoin { outer, inner, .. }
        | Plan::NestLoop { outer, inner, .. }
        | Plan::MergeJoin { outer, inner, .. } => {
            name_parents(outer, names);
            name_parents(inner, names);
        }
        Plan::Result { child, .. }
        | Plan::Sort { child, .. }
        | Plan::Material { child }
        | Plan::Memoize { child, .. }
        | Plan::Gating { child, .. }
        | Plan::Limit { child, .. }
        | Plan::Agg { child, .. }
        | Plan::Unique { child, .. }
        | Plan::WindowAgg { child, .. } => name_parents(child, names),
        Plan::Append { children, .. } | Plan::MergeAppend { children, .. } => {
            children.iter_mut().for_each(|c| name_parents(c, names))
        }
        _ => {}
    }
}
