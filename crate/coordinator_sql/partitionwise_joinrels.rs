//! Partitionwise join of three or more relations (`enable_partitionwise_join`), as
//! PostgreSQL 15 plans it inside `standard_join_search`: `try_partitionwise_join`
//! (joinrels.c) runs beside every `make_join_rel` of two partitioned relations and
//! makes the matching *child join relations*, each given paths exactly as its parent
//! is (`populate_joinrel_with_paths` over the children of the pair's sides, and
//! postgres_fdw's `GetForeignJoinPaths` for the first pair that makes it: a child
//! join of foreign partitions on one server is pushed there, a join of pushed joins
//! pushed further); `generate_partitionwise_join_paths` (allpaths.c) puts an Append
//! over each child's cheapest path, and `apply_scanjoin_target_to_paths` (planner.c)
//! keeps only that Append at the top, the scan/join target computed in each child.
//!
//! The protocol, as the sandbox follows it:
//!
//! 1. Every relation of the join is partitioned, with one partitioning scheme
//!    (strategy, key columns' number and types) and the same bounds
//!    (`partition_bounds_equal`), no partition partitioned again; and every two
//!    relations the search may join (a join clause between them) are joined on their
//!    partition keys (`have_partkey_equi_join`: an inner join's equivalence class
//!    holding both keys, or an outer join's ON clause equating them). Then every join
//!    relation the search makes is partitioned alike, and so is the top one.
//! 2. Child `k` of the join is the same join problem over each relation's `k`-th
//!    partition (partitions have their parent's columns, so conditions, classes and
//!    outer joins carry over unchanged), searched level by level as its parent is:
//!    the same pairs in the same order, so postgres_fdw sees the same first pair.
//! 3. A child that cannot return a row is left out: with only inner joins, a child
//!    with any relation's partition pruned. With an outer join, partitions pruned
//!    unevenly are refused by name (PostgreSQL's answer depends on which sides are
//!    nullable: `try_partitionwise_join`'s `nparts = 0` or a dummy child).
//! 4. Each child's scans are named `alias_k` (k counting the children in bound order,
//!    the parents' aliases for a lone child), each partition's range-table index
//!    the query's own entries, then every relation's live partitions in turn
//!    (`expand_partitioned_rtentry`): a pushed child join's remote query calls its
//!    tables `r<index>`.
//!
//! Invariants: the Append's children are the children's cheapest total paths
//! (`add_paths_to_append_rel`), each computing the scan/join target; the aggregate,
//! LIMIT, … go above it; any case the rules above do not cover is refused by name,
//! never planned another way.
//!
//! When no two relations partitioned alike are joined on their keys, no join
//! relation is partitioned (`build_joinrel_partition_info`) and the join is planned
//! as usual, the setting without effect, as in PostgreSQL.
//!
//! Where it departs from PostgreSQL (refused by name): relations of which only some
//! are partitioned alike or joined on their keys (PostgreSQL joins those pairs
//! partitionwise below a plain join with the others), ORDER BY over the join (PostgreSQL weighs a Merge Append of
//! the children's ordered paths), and bounds that differ (`partition_bounds_merge`).

use super::*;

/// The children of a partitionwise join: for each, the partition of every relation
/// (FROM order).
type Children<'r> = Vec<Vec<&'r Relation>>;

impl<'r> JoinProblem<'r> {
    /// Whether the join is partitionwise (rule 1): its children (rule 3), None when
    /// the setting is off or no two relations are partitioned alike; an error naming
    /// what is not planned when PostgreSQL would join some partitionwise and the
    /// sandbox cannot.
    pub(super) fn partitionwise_children(&self, base_quals: &[Vec<Expr>]) -> Result<Option<Children<'r>>, FrontError> {
        if !self.coord.setting_on("enable_partitionwise_join", false) {
            return Ok(None);
        }
        // No two relations partitioned alike joined on their keys: no join relation
        // the search makes is partitioned (`build_joinrel_partition_info`), the join is
        // planned as usual.
        let Some(pair) = self.partkey_joined_pair() else { return Ok(None) };
        let Some(scheme) = self.common_scheme() else {
            let [a, b] = [pair.0, pair.1].map(|i| &self.rels[i].rel.name);
            return Err(FrontError::unsupported(
                format!(
                    "enable_partitionwise_join = on for a join of two tables partitioned alike and joined on their \
                     partition keys (\"{a}\" and \"{b}\") with relations partitioned otherwise: PostgreSQL may join \
                     those two partition by partition, and the sandbox plans a partitionwise join of two relations, \
                     or of relations all partitioned alike"
                ),
                self.at,
            ));
        };
        let refuse = |what: &str| {
            FrontError::unsupported(
                format!(
                    "enable_partitionwise_join = on: a partitionwise join of {} relations: {what}",
                    self.rels.len()
                ),
                self.at,
            )
        };
        if !self.joined_on_keys(&scheme) {
            return Err(refuse(
                "two of its relations joined other than on their partition keys (PostgreSQL then joins only some \
                 of them partition by partition)",
            ));
        }
        let parts: Vec<Vec<&'r Relation>> = self.rels.iter().map(|b| self.partitions(b.rel)).collect();
        if parts.iter().flatten().any(|r| matches!(r.kind, RelKind::Partitioned { .. })) {
            return Err(refuse("sub-partitioned tables"));
        }
        let bounds = |i: usize| -> Vec<(&Bound, &Relation)> {
            parts[i].iter().filter_map(|r| r.partition_of.as_ref().map(|(_, b)| (b, *r))).collect()
        };
        if (1..parts.len()).any(|i| !super::partitionwise::same_bounds(&bounds(0), &bounds(i))) {
            return Err(refuse(
                "partition bounds that differ (PostgreSQL 15 pairs the partitions by merging the bounds, \
                 partition_bounds_merge)",
            ));
        }
        let live = self.live_partitions(base_quals);
        let mut children = vec![];
        for k in 0..parts[0].len() {
            let here: Vec<bool> =
                (0..parts.len()).map(|i| live[i].iter().any(|r| r.name == parts[i][k].name)).collect();
            if here.iter().all(|&x| x) {
                children.push((0..parts.len()).map(|i| parts[i][k]).collect());
            } else if here.iter().any(|&x| x) && !self.sjs.is_empty() {
                return Err(refuse("an outer join whose relations' partitions are pruned unevenly"));
            }
        }
        Ok(Some(children))
    }

    /// The partitioning scheme every relation shares (strategy and key columns), None
    /// when some relation is not partitioned or is partitioned otherwise.
    fn common_scheme(&self) -> Option<Vec<Vec<usize>>> {
        let mut keys = vec![];
        let mut first: Option<(&Strategy, Vec<crate::plan::SqlType>)> = None;
        for b in &self.rels {
            let RelKind::Partitioned { strategy, key, .. } = &b.rel.kind else { return None };
            let types: Vec<crate::plan::SqlType> = key.iter().map(|&k| b.rel.columns[k].ty).collect();
            match &first {
                None => first = Some((strategy, types)),
                Some((s, t)) if *s == strategy && *t == types => {}
                Some(_) => return None,
            }
            keys.push(key.iter().map(|&k| b.first + k).collect());
        }
        Some(keys)
    }

    /// `have_partkey_equi_join` for every pair the search may join: the two
    /// relations' key columns, one for one, equal by an equivalence class or by an
    /// outer join's ON clause; and no other join clause joining two relations.
    fn joined_on_keys(&self, keys: &[Vec<usize>]) -> bool {
        let equal = |x: usize, y: usize| self.keys_equal(x, y);
        let n = self.rels.len();
        for i in 0..n {
            for j in i + 1..n {
                let (a, b) = (1 << i, 1 << j);
                let on_keys = keys[i].iter().zip(&keys[j]).all(|(&x, &y)| equal(x, y));
                if self.have_relevant_joinclause(a, b) && !on_keys {
                    return false;
                }
            }
        }
        // Classes of other columns and other clauses make pairs the keys do not join.
        let key_cols: Vec<usize> = keys.iter().flatten().copied().collect();
        let ecs_on_keys = self
            .ecs
            .iter()
            .all(|ec| self.ec_relids(ec).count_ones() < 2 || ec.members.iter().all(|c| key_cols.contains(c)));
        let sjs_on_keys = self.sjs.iter().all(|sj| columns_of(&sj.clause, self.n).iter().all(|c| key_cols.contains(c)));
        ecs_on_keys && sjs_on_keys && self.clauses.is_empty() && self.pinned_ecs.is_empty()
    }

    /// Two columns (query numbering) equal in a join: by an equivalence class, or by
    /// an outer (semi) join's ON clause.
    fn keys_equal(&self, x: usize, y: usize) -> bool {
        self.ecs.iter().any(|ec| ec.members.contains(&x) && ec.members.contains(&y))
            || self.sjs.iter().any(|sj| {
                let cols = columns_of(&sj.clause, self.n);
                cols.contains(&x) && cols.contains(&y)
            })
    }

    /// `build_joinrel_partition_info`'s test on two base relations: both partitioned
    /// with one scheme (strategy, key columns' types) and their keys equal column for
    /// column (`have_partkey_equi_join`). A join relation is partitioned only when its
    /// sides are and are joined so, so without such a pair none is: the first pair
    /// (FROM order), None without.
    fn partkey_joined_pair(&self) -> Option<(usize, usize)> {
        let scheme = |b: &BaseRel| match &b.rel.kind {
            RelKind::Partitioned { strategy, key, .. } => {
                let types: Vec<crate::plan::SqlType> = key.iter().map(|&k| b.rel.columns[k].ty).collect();
                Some((*strategy, types, key.iter().map(|&k| b.first + k).collect::<Vec<usize>>()))
            }
            _ => None,
        };
        let n = self.rels.len();
        (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).find(|&(i, j)| {
            match (scheme(&self.rels[i]), scheme(&self.rels[j])) {
                (Some((sa, ta, ka)), Some((sb, tb, kb))) => {
                    sa == sb && ta == tb && ka.iter().zip(&kb).all(|(&x, &y)| self.keys_equal(x, y))
                }
                _ => false,
            }
        })
    }

    /// A partitioned relation's partitions, in bound order.
    fn partitions(&self, rel: &'r Relation) -> Vec<&'r Relation> {
        let RelKind::Partitioned { partitions, .. } = &rel.kind else { return vec![] };
        let mut parts: Vec<(&Bound, &'r Relation)> = partitions
            .iter()
            .filter_map(|p| self.coord.relation(p))
            .filter_map(|r| r.partition_of.as_ref().map(|(_, b)| (b, r)))
            .collect();
        parts.sort_by(|x, y| bound_order(x.0, y.0));
        parts.into_iter().map(|(_, r)| r).collect()
    }

    /// Each relation's partitions that its own conditions leave (pruning).
    fn live_partitions(&self, base_quals: &[Vec<Expr>]) -> Vec<Vec<&'r Relation>> {
        let p = Planner::new(self.coord, vec![]);
        self.rels.iter().zip(base_quals).map(|(b, q)| p.leaves(b.rel, q)).collect()
    }

    /// The query planned over the Append of the children's joins (rule 2, 4): each
    /// child searched as its parent, its cheapest path computing the scan/join
    /// target; the aggregate and LIMIT above.
    pub(super) fn plan_partitionwise(
        &self,
        children: &Children<'r>,
        base_quals: &[Vec<Expr>],
        l: &Layers,
        columns: &[Column],
        range_table: usize,
    ) -> Result<Planned, FrontError> {
        if l.sort.is_some() {
            return Err(FrontError::unsupported(
                format!(
                    "enable_partitionwise_join = on: ORDER BY over a partitionwise join of {} relations (PostgreSQL \
                     weighs a Merge Append of the children's ordered paths against a Sort above the Append): not \
                     planned yet",
                    self.rels.len()
                ),
                self.at,
            ));
        }
        let all: Vec<Column> = self.rels.iter().flat_map(|r| r.rel.columns()).collect();
        let name = |c: usize| all[c].name.clone();
        let (target, map) = super::partitionwise::scanjoin_target(l, self.n, &name, columns)
            .map_err(|m| FrontError::unsupported(format!("enable_partitionwise_join = on: {m}"), self.at))?;
        // Range-table indexes: every relation's live partitions after the query's entries.
        let live = self.live_partitions(base_quals);
        let rt_of =
            |r: &Relation| live.iter().flatten().position(|x| x.name == r.name).map_or(0, |i| range_table + 1 + i);
        let n = children.len();
        let mut plans = vec![];
        for (k, parts) in children.iter().enumerate() {
            let names: Vec<String> = self
                .rels
                .iter()
                .map(|b| if n == 1 { b.name.clone() } else { format!("{}_{}", b.name, k + 1) })
                .collect();
            let rels: Vec<BaseRel> = self
                .rels
                .iter()
                .zip(parts)
                .zip(&names)
                .map(|((b, part), name)| BaseRel {
                    rel: part,
                    name: name.clone(),
                    first: b.first,
                    rt_index: rt_of(part),
                })
                .collect();
            let child = JoinProblem {
                coord: self.coord,
                rels,
                n: self.n,
                sjs: self.sjs.clone(),
                ecs: self.ecs.clone(),
                clauses: self.clauses.clone(),
                upper: self.upper.clone(),
                pinned_needed: self.pinned_needed.clone(),
                pinned_ecs: self.pinned_ecs.clone(),
                query_sort: None,
                query_key: None,
                query_pathkeys: self.query_pathkeys.clone(),
                consider_startup: self.consider_startup,
                tlist_order: self.tlist_order.clone(),
                range_table,
                joinlist: self.joinlist.clone(),
                costed: Default::default(),
                joinrel_rows: Default::default(),
                pair_first: Default::default(),
                params: self.params,
                base_quals: Default::default(),
                needed_by_rel: Default::default(),
                all_columns: Default::default(),
                slices: Default::default(),
                at: self.at,
            };
            let top = child.join_rel(base_quals)?;
            let path =
                top.paths.first().ok_or_else(|| FrontError::at("internal error: no path for a child join", self.at))?;
            let mut plan = child.with_target(path, &target);
            let parents: Vec<(&String, &str)> =
                names.iter().zip(&self.rels).map(|(name, b)| (name, b.name.as_str())).collect();
            super::partitionwise::name_parents(&mut plan, &parents);
            plans.push(plan);
        }
        let append = match plans.len() {
            // No pair left: the dummy join relation, its columns the Vars of the
            // relations they come from.
            0 => Plan::EmptyResult {
                columns: target.iter().map(|(e, name)| Column::new(name, e.col_type(&all))).collect(),
                rels: target
                    .iter()
                    .map(|(e, _)| match e {
                        Expr::Col(c) => self
                            .rels
                            .iter()
                            .find(|b| (b.first..b.first + b.rel.columns.len()).contains(c))
                            .map(|b| b.name.clone()),
                        _ => None,
                    })
                    .collect(),
                joined: true,
            },
            1 => plans.pop().expect("one child"),
            _ => Plan::Append { children: plans, prune: None, ordered: false },
        };
        let plan = match &l.agg {
            // The grouped relation's paths over the Append, by cost.
            Some((_, keys, _)) if !keys.is_empty() => {
                let candidates = grouped_over(append, &map, l);
                cheapest(self.coord, candidates, &upper_of(l), vec![])
                    .ok_or_else(|| FrontError::at("internal error: no path for the aggregate", self.at))?
            }
            Some(_) => finish(agg_over_join(append, l, &map), None, l.targets.clone(), l.limit),
            None => finish(append, None, None, l.limit),
        };
        let order_keys = order_keys_of(l);
        Ok(Planned {
            plan,
            columns: columns.to_vec(),
            servers: vec![],
            order_key: order_keys.first().copied(),
            order_keys,
        })
    }

    /// The scan/join target (over the query's numbering) computed over one path of the
    /// join relation: the path as it is when it returns just that.
    fn with_target(&self, path: &RelPath, target: &[(Expr, String)]) -> Plan {
        let mut order: Vec<usize> = vec![];
        for (e, _) in target {
            e.for_each_col(&mut |c| {
                if !order.contains(&c) {
                    order.push(c)
                }
            });
        }
        let path = &self.at_top(path, &order);
        let mut map = vec![None; self.n];
        for (p, &c) in path.cols.iter().enumerate() {
            map[c] = Some(p);
        }
        let targets: Vec<(Expr, String)> = target.iter().map(|(e, name)| (rewrite(e, &map), name.clone())).collect();
        let all: Vec<Column> = self.rels.iter().flat_map(|r| r.rel.columns()).collect();
        let identity = targets.len() == path.cols.len()
            && targets.iter().enumerate().all(|(i, (e, name))| *e == Expr::Col(i) && *name == all[path.cols[i]].name);
        finish(path.plan.clone(), None, (!identity).then_some(targets), None)
    }
}
