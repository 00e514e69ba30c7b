//! Equivalence classes with a constant: PostgreSQL 15's `process_equivalence` and
//! `generate_base_implied_equalities_const` (optimizer/path/equivclass.c) for the
//! inner-join conditions of the sandbox's join planners (`planner::plan_join` for two
//! relations, `joinrels` for three or more).
//!
//! The protocol, as PostgreSQL runs it:
//!
//! 1. Each mergejoinable equality of the inner-join level, `x = y` with x and y
//!    columns or one of them a *pseudoconstant* (a constant, or a prepared
//!    statement's parameter in a generic plan), merges the classes of its two sides
//!    (`process_equivalence`): members in the order the conditions name them, a class
//!    for each side named for the first time; a member equal to one already in a
//!    class is that member (two equal constants are one, so `a.x = 5 AND b.y = 5`
//!    makes one class).
//! 2. A class holding a constant and two or more columns is *pinned*: every column in
//!    it equals the constant. `generate_base_implied_equalities_const` then makes, for
//!    every column member in order, the restriction `member = constant`, which goes
//!    to that member's relation as any condition on it alone does (into a foreign
//!    scan's remote WHERE, the partition pruning of a partitioned table, a local
//!    scan's filter or index condition). These come after the relation's own
//!    conditions: PostgreSQL generates them after `deconstruct_jointree` has
//!    distributed the written ones.
//! 3. The equalities that made a pinned class are not evaluated as written: a join
//!    clause between two of its columns is redundant once both sides are restricted
//!    to the constant, and `generate_join_implied_equalities` makes none for a class
//!    with a constant (`ec_has_const`). The estimates follow without more work: the
//!    restrictions' selectivity is each relation's, and the join has no clause from
//!    that class to multiply in.
//!
//! Invariants: `reconsider_constants` returns None unless it changes something; it
//! never drops a condition it does not regenerate (a pinned class's column = column
//! equalities are implied by its restrictions, its column = constant ones are made
//! again); the columns of the dropped equalities stay needed (`still_needed`). A join
//! left without any equality between its sides is a Nested Loop without a join
//! clause (`plan::clauseless_join_keys`), as PostgreSQL's is: `planner::plan_join`
//! makes one when a dropped equality joined the two relations, `joinrels` between
//! relations a pinned class links (`pinned_classes`); when the classes cannot be used
//! so (an outer join in a join of several; no pinned class linking the sides), the
//! callers keep the conditions as written.
//!
//! Where it departs from PostgreSQL: only classes with exactly one constant member
//! are pinned (PostgreSQL also folds `a.x = 5 AND b.y = 6 AND a.x = b.y` to a false
//! restriction); a column = column equality joins a class only when both columns have
//! one type (PostgreSQL's cross-type operators of one btree family, `int4 = int8`,
//! would join them too); a class of columns of one relation without a constant does
//! not give that relation a `a.x = a.z` restriction here
//! (`generate_base_implied_equalities_no_const`): such classes are left as written;
//! the 2-member class `a.x = 5` is the relation's own condition, untouched (as
//! PostgreSQL keeps the original clause for a class of two members). Outer joins are
//! left as written (PostgreSQL's `reconsider_outer_join_clauses` derives a constant
//! for the nullable side of `a LEFT JOIN b ON a.x = b.y WHERE a.x = 5`; not here), as
//! are the inner joins of a two-relation outer join reduced to inner; an ORDER BY or
//! GROUP BY on a pinned column still sorts or groups (PostgreSQL finds its pathkey
//! redundant and drops it).

use crate::plan::{BinOp, Expr};

/// A member of a class: a column (query numbering) or the one pseudoconstant.
#[derive(Clone, Debug, PartialEq)]
enum Member {
    Col(usize),
    Const(Expr),
}

/// An equivalence class (`EquivalenceClass`): its members in the order the
/// conditions named them, and the conditions that made it (`ec_sources`, indexes
/// into the conjunct list).
#[derive(Clone, Debug, Default)]
struct EquivClass {
    members: Vec<Member>,
    sources: Vec<usize>,
}

impl EquivClass {
    fn constants(&self) -> usize {
        self.members.iter().filter(|m| matches!(m, Member::Const(_))).count()
    }

    fn columns(&self) -> impl Iterator<Item = usize> + '_ {
        self.members.iter().filter_map(|m| match m {
            Member::Col(c) => Some(*c),
            Member::Const(_) => None,
        })
    }

    /// Pinned: one constant and at least two columns.
    fn pinned(&self) -> bool {
        self.constants() == 1 && self.columns().count() >= 2
    }
}

/// Is the expression a pseudoconstant a class may hold: a constant or an external
/// parameter (not an InitPlan's value: PostgreSQL's PARAM_EXEC is volatile-free too,
/// but the sandbox evaluates it per execution of the InitPlan, not at bind time).
fn is_const_member(e: &Expr) -> bool {
    matches!(e, Expr::Const(_) | Expr::Param(..))
}

/// The two members of a mergejoinable equality, if `c` is one the classes take.
/// `same_type` says whether two columns compare with one type's operator.
fn equality_members(c: &Expr, same_type: &dyn Fn(usize, usize) -> bool) -> Option<(Member, Member)> {
    let Expr::Bin(BinOp::Eq, x, y) = c else { return None };
    match (x.as_ref(), y.as_ref()) {
        (Expr::Col(a), Expr::Col(b)) if a != b && same_type(*a, *b) => Some((Member::Col(*a), Member::Col(*b))),
        (Expr::Col(a), k) if is_const_member(k) => Some((Member::Col(*a), Member::Const(k.clone()))),
        (k, Expr::Col(b)) if is_const_member(k) => Some((Member::Const(k.clone()), Member::Col(*b))),
        _ => None,
    }
}

/// `process_equivalence` over the conjuncts in order: the classes they make.
fn build_classes(conjuncts: &[Expr], same_type: &dyn Fn(usize, usize) -> bool) -> Vec<EquivClass> {
    let mut ecs: Vec<EquivClass> = vec![];
    for (i, c) in conjuncts.iter().enumerate() {
        let Some((a, b)) = equality_members(c, same_type) else { continue };
        // A member matches an equal one already in a class, a constant too: `a.x = 5
        // AND b.y = 5` is one class (PostgreSQL's equal() on the member expressions;
        // it skips constants only below an outer join, which never comes here).
        let find = |ecs: &[EquivClass], m: &Member| ecs.iter().position(|e| e.members.contains(m));
        let (ia, ib) = (find(&ecs, &a), find(&ecs, &b));
        match (ia, ib) {
            (Some(x), Some(y)) if x == y => ecs[x].sources.push(i),
            (Some(x), Some(y)) => {
                let (keep, gone) = (x.min(y), x.max(y));
                let moved = ecs.remove(gone);
                ecs[keep].members.extend(moved.members);
                ecs[keep].sources.extend(moved.sources);
                ecs[keep].sources.push(i);
            }
            (Some(x), None) => {
                ecs[x].members.push(b);
                ecs[x].sources.push(i);
            }
            (None, Some(y)) => {
                ecs[y].members.push(a);
                ecs[y].sources.push(i);
            }
            (None, None) => ecs.push(EquivClass { members: vec![a, b], sources: vec![i] }),
        }
    }
    ecs
}

/// What `reconsider_constants` makes of the conjuncts.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Reconsidered {
    /// The conjuncts that made no pinned class, in order, then each pinned class's
    /// `member = constant` restrictions (classes in the order they were made, members
    /// in theirs).
    pub conjuncts: Vec<Expr>,
    /// The columns of each dropped column = column equality: PostgreSQL marked them
    /// needed up to the join of their relations (`add_vars_to_targetlist` in
    /// `distribute_qual_to_rels`, before the classes were made), so the scans still
    /// return them.
    pub still_needed: Vec<(usize, usize)>,
    /// Each pinned class's columns: its relations still count as joined by it
    /// (`have_relevant_eclass_joinclause` does not look at `ec_has_const`), though
    /// the join between them has no clause from it.
    pub pinned_classes: Vec<Vec<usize>>,
}

/// The inner-join level's conjuncts with the pinned classes' constants carried to
/// every member. None when no class is pinned.
pub(super) fn reconsider_constants(
    conjuncts: &[Expr],
    same_type: &dyn Fn(usize, usize) -> bool,
) -> Option<Reconsidered> {
    let pinned: Vec<EquivClass> = build_classes(conjuncts, same_type).into_iter().filter(EquivClass::pinned).collect();
    if pinned.is_empty() {
        return None;
    }
    let consumed = |i: usize| pinned.iter().any(|ec| ec.sources.contains(&i));
    let (dropped, kept): (Vec<(usize, &Expr)>, Vec<(usize, &Expr)>) =
        conjuncts.iter().enumerate().partition(|&(i, _)| consumed(i));
    let mut out: Vec<Expr> = kept.into_iter().map(|(_, c)| c.clone()).collect();
    let mut still_needed: Vec<(usize, usize)> = vec![];
    for (_, c) in dropped {
        if let Expr::Bin(_, x, y) = c {
            if let (Expr::Col(a), Expr::Col(b)) = (x.as_ref(), y.as_ref()) {
                still_needed.push((*a, *b));
            }
        }
    }
    for ec in &pinned {
        let Some(k) = ec.members.iter().find_map(|m| match m {
            Member::Const(k) => Some(k.clone()),
            Member::Col(_) => None,
        }) else {
            continue;
        };
        out.extend(ec.columns().map(|c| Expr::bin(BinOp::Eq, Expr::Col(c), k.clone())));
    }
    let pinned_classes = pinned.iter().map(|ec| ec.columns().collect()).collect();
    Some(Reconsidered { conjuncts: out, still_needed, pinned_classes })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eq(a: Expr, b: Expr) -> Expr {
        Expr::bin(BinOp::Eq, a, b)
    }
    fn any_type(_: usize, _: usize) -> bool {
        true
    }

    #[test]
    fn a_constant_reaches_every_member_and_the_join_clause_goes() {
        // a.x = b.y AND a.x = 5 AND b.z > 1 (a: 0..2, b: 2..4)
        let c = [
            eq(Expr::Col(0), Expr::Col(2)),
            eq(Expr::Col(0), Expr::int(5)),
            Expr::bin(BinOp::Gt, Expr::Col(3), Expr::int(1)),
        ];
        let out = reconsider_constants(&c, &any_type).expect("pinned").conjuncts;
        assert_eq!(
            out,
            vec![
                Expr::bin(BinOp::Gt, Expr::Col(3), Expr::int(1)),
                eq(Expr::Col(0), Expr::int(5)),
                eq(Expr::Col(2), Expr::int(5)),
            ]
        );
    }

    #[test]
    fn a_constant_written_first_and_a_chain_of_three() {
        // 7 = c.w AND a.x = b.y AND b.y = c.w: one class, members in naming order.
        let c = [eq(Expr::int(7), Expr::Col(5)), eq(Expr::Col(0), Expr::Col(2)), eq(Expr::Col(2), Expr::Col(5))];
        let out = reconsider_constants(&c, &any_type).expect("pinned").conjuncts;
        assert_eq!(
            out,
            vec![eq(Expr::Col(5), Expr::int(7)), eq(Expr::Col(0), Expr::int(7)), eq(Expr::Col(2), Expr::int(7))]
        );
    }

    #[test]
    fn classes_without_a_constant_and_two_member_classes_are_left_alone() {
        let c = [eq(Expr::Col(0), Expr::Col(2)), eq(Expr::Col(1), Expr::int(3))];
        assert_eq!(reconsider_constants(&c, &any_type), None);
    }

    #[test]
    fn two_constants_or_two_types_pin_nothing() {
        let c = [eq(Expr::Col(0), Expr::Col(2)), eq(Expr::Col(0), Expr::int(3)), eq(Expr::Col(2), Expr::int(4))];
        assert_eq!(reconsider_constants(&c, &any_type), None);
        let c = [eq(Expr::Col(0), Expr::Col(2)), eq(Expr::Col(0), Expr::int(3))];
        assert_eq!(reconsider_constants(&c, &|_, _| false), None);
    }

    #[test]
    fn another_class_keeps_its_join_clause() {
        // a.x = b.y AND a.z = b.w AND a.x = 5: the second class stays a join clause.
        let c = [eq(Expr::Col(0), Expr::Col(2)), eq(Expr::Col(1), Expr::Col(3)), eq(Expr::Col(0), Expr::int(5))];
        let out = reconsider_constants(&c, &any_type).expect("pinned").conjuncts;
        assert_eq!(
            out,
            vec![eq(Expr::Col(1), Expr::Col(3)), eq(Expr::Col(0), Expr::int(5)), eq(Expr::Col(2), Expr::int(5))]
        );
    }

    #[test]
    fn equal_constants_are_one_member() {
        // a.x = 5 AND b.y = 5 AND a.z = b.w: one pinned class of a.x, b.y; the join
        // clause stays.
        let c = [eq(Expr::Col(0), Expr::int(5)), eq(Expr::Col(2), Expr::int(5)), eq(Expr::Col(1), Expr::Col(3))];
        let r = reconsider_constants(&c, &any_type).expect("pinned");
        assert_eq!(
            r.conjuncts,
            vec![eq(Expr::Col(1), Expr::Col(3)), eq(Expr::Col(0), Expr::int(5)), eq(Expr::Col(2), Expr::int(5))]
        );
        assert!(r.still_needed.is_empty());
    }

    #[test]
    fn the_dropped_join_clause_columns_stay_needed() {
        let c = [eq(Expr::Col(1), Expr::Col(3)), eq(Expr::Col(0), Expr::Col(2)), eq(Expr::Col(2), Expr::int(5))];
        let r = reconsider_constants(&c, &any_type).expect("pinned");
        assert_eq!(r.still_needed, vec![(0, 2)]);
        assert_eq!(r.pinned_classes, vec![vec![0, 2]]);
    }
}
