//! Advanced partition matching for a partitionwise join whose two sides' partition
//! bounds differ, as PostgreSQL 15's `partition_bounds_merge` (partitioning/
//! partbounds.c) does it for `try_partitionwise_join`'s `compute_partition_bounds`.
//!
//! The protocol:
//!
//! 1. Only the partitions pruning leaves take part (`get_range_partition` and
//!    `merge_list_bounds` skip a dummy partition), each side in bound order.
//! 2. Range bounds are walked side by side (`merge_range_bounds`): two partitions whose
//!    ranges overlap are matched; list bounds value by value (`merge_list_bounds`):
//!    two partitions that both accept a value are matched. A partition matched with
//!    two of the other side fails the merge (`merge_matching_partitions`): the join is
//!    then not partitionwise at all (`nparts = 0`), planned as usual.
//! 3. The matched pairs are the merged partitions, numbered in the order the walk
//!    meets them (bound order for ranges, the first common value for lists). A
//!    partition without a partner is returned alone: the caller drops it where the
//!    join cannot return its rows and otherwise gives up the partitionwise join
//!    (`try_partitionwise_join` meets a missing child relation).
//! 4. Hash bounds never merge (`partition_bounds_merge` returns NULL for them).
//!
//! Where it departs from PostgreSQL (the caller refuses by name): a default partition,
//! or a list partition accepting NULL, on either side (`merge_default_partitions`,
//! `merge_null_partitions` can still match them).
//!
//! Invariant: each partition is in at most one returned entry, and a pair's two
//! partitions are each other's only match.

use std::cmp::Ordering;

use crate::coordinator_sql::catalog::{Bound, RangeValue, Relation};
use crate::types::Datum;

/// One merged partition: the first side's partition and the second's; one of them is
/// None for a partition without a partner.
pub(super) type Merged<'r> = (Option<&'r Relation>, Option<&'r Relation>);

/// What merging two sides' bounds gives.
#[derive(Debug)]
pub(super) enum Merge<'r> {
    /// The merged partitions, matched pairs in merged order, then the partitions left
    /// alone (first side's, then second's).
    Partitions(Vec<Merged<'r>>),
    /// The bounds do not merge: the join is planned as usual.
    NotPartitionwise,
    /// A case the sandbox does not merge (what it is).
    Unsupported(&'static str),
}

/// `partition_bounds_merge` over each side's live partitions with their bounds, in
/// bound order.
pub(super) fn partition_bounds_merge<'r>(
    a: &[(&'r Bound, &'r Relation)],
    b: &[(&'r Bound, &'r Relation)],
) -> Merge<'r> {
    let all = || a.iter().chain(b).map(|(bound, _)| *bound);
    if all().any(|x| matches!(x, Bound::Default)) {
        return Merge::Unsupported("a default partition");
    }
    if all().any(|x| matches!(x, Bound::List(v) if v.iter().any(Datum::is_null))) {
        return Merge::Unsupported("a list partition that accepts NULL");
    }
    let matched = match (a.first().map(|x| x.0), b.first().map(|x| x.0)) {
        (Some(Bound::Hash { .. }), _) | (_, Some(Bound::Hash { .. })) => return Merge::NotPartitionwise,
        (Some(Bound::List(_)), _) | (_, Some(Bound::List(_))) => merge_list_bounds(a, b),
        _ => merge_range_bounds(a, b),
    };
    let Some(pairs) = matched else { return Merge::NotPartitionwise };
    let mut out: Vec<Merged> = pairs.iter().map(|&(i, j)| (Some(a[i].1), Some(b[j].1))).collect();
    out.extend((0..a.len()).filter(|i| !pairs.iter().any(|p| p.0 == *i)).map(|i| (Some(a[i].1), None)));
    out.extend((0..b.len()).filter(|j| !pairs.iter().any(|p| p.1 == *j)).map(|j| (None, Some(b[j].1))));
    Merge::Partitions(out)
}

/// The one-to-one matching (`merge_matching_partitions`): records `(i, j)` unless one
/// of them is already matched with another partition (None: the merge fails).
fn match_partitions(pairs: &mut Vec<(usize, usize)>, i: usize, j: usize) -> Option<()> {
    let of_i = pairs.iter().find(|p| p.0 == i);
    let of_j = pairs.iter().find(|p| p.1 == j);
    match (of_i, of_j) {
        (None, None) => {
            pairs.push((i, j));
            Some(())
        }
        (Some(p), Some(q)) if p == q => Some(()),
        _ => None,
    }
}

/// `merge_range_bounds`: the two sides' ranges walked in order, each overlapping pair
/// matched; the side whose range ends first moves on (both when they end together).
fn merge_range_bounds(a: &[(&Bound, &Relation)], b: &[(&Bound, &Relation)]) -> Option<Vec<(usize, usize)>> {
    let range = |x: &Bound| match x {
        Bound::Range { from, to } => Some((from.clone(), to.clone())),
        _ => None,
    };
    let mut pairs = vec![];
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let ((la, ua), (lb, ub)) = (range(a[i].0)?, range(b[j].0)?);
        // A range ending where (or before) the other begins overlaps nothing further on.
        if range_cmp(&ua, &lb) != Ordering::Greater {
            i += 1;
            continue;
        }
        if range_cmp(&ub, &la) != Ordering::Greater {
            j += 1;
            continue;
        }
        match_partitions(&mut pairs, i, j)?;
        match range_cmp(&ua, &ub) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
    }
    Some(pairs)
}

/// `merge_list_bounds`: every value either side accepts, in order; a value both accept
/// matches the two partitions that accept it.
fn merge_list_bounds(a: &[(&Bound, &Relation)], b: &[(&Bound, &Relation)]) -> Option<Vec<(usize, usize)>> {
    let values = |side: &[(&Bound, &Relation)]| -> Option<Vec<(Datum, usize)>> {
        let mut v = vec![];
        for (k, (bound, _)) in side.iter().enumerate() {
            let Bound::List(list) = bound else { return None };
            v.extend(list.iter().map(|d| (d.clone(), k)));
        }
        v.sort_by(|x, y| x.0.cmp(&y.0));
        Some(v)
    };
    let (va, vb) = (values(a)?, values(b)?);
    let mut pairs = vec![];
    for (d, i) in &va {
        if let Some((_, j)) = vb.iter().find(|(e, _)| e == d) {
            match_partitions(&mut pairs, *i, *j)?;
        }
    }
    Some(pairs)
}

/// `partition_rbound_cmp` between two range bounds' values, column by column
/// (MINVALUE below and MAXVALUE above every value).
fn range_cmp(x: &[RangeValue], y: &[RangeValue]) -> Ordering {
    for (p, q) in x.iter().zip(y) {
        let o = match (p, q) {
            (RangeValue::Min, RangeValue::Min) | (RangeValue::Max, RangeValue::Max) => Ordering::Equal,
            (RangeValue::Min, _) | (_, RangeValue::Max) => Ordering::Less,
            (RangeValue::Max, _) | (_, RangeValue::Min) => Ordering::Greater,
            (RangeValue::Value(u), RangeValue::Value(v)) => u.cmp(v),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator_sql::catalog::RelKind;

    fn rel(name: &str) -> Relation {
        Relation {
            name: name.to_string(),
            columns: vec![],
            kind: RelKind::Table(std::rc::Rc::new(crate::types::Table::new(name, vec![]))),
            partition_of: None,
            indexes: vec![],
            rows_sent: 0,
            batches_sent: 0,
            stats: None,
            unique: vec![],
        }
    }

    fn range(from: i64, to: i64) -> Bound {
        Bound::Range { from: vec![RangeValue::Value(Datum::Int(from))], to: vec![RangeValue::Value(Datum::Int(to))] }
    }

    fn names(m: &Merge) -> Vec<(String, String)> {
        let Merge::Partitions(p) = m else { return vec![("-".into(), "-".into())] };
        let n = |r: &Option<&Relation>| r.map_or("none".to_string(), |r| r.name.clone());
        p.iter().map(|(x, y)| (n(x), n(y))).collect()
    }

    #[test]
    fn range_partition_without_partner_is_left_alone() {
        let (a1, a2, a3, c1, c2) = (rel("a1"), rel("a2"), rel("a3"), rel("c1"), rel("c2"));
        let (ba1, ba2, ba3, bc1, bc2) =
            (range(0, 300), range(300, 600), range(600, 900), range(0, 300), range(600, 900));
        let a = [(&ba1, &a1), (&ba2, &a2), (&ba3, &a3)];
        let c = [(&bc1, &c1), (&bc2, &c2)];
        let m = partition_bounds_merge(&a, &c);
        let want = [("a1", "c1"), ("a3", "c2"), ("a2", "none")];
        assert_eq!(names(&m), want.map(|(x, y)| (x.to_string(), y.to_string())).to_vec());
    }

    #[test]
    fn range_overlapping_two_partitions_does_not_merge() {
        let (a1, e1, e2) = (rel("a1"), rel("e1"), rel("e2"));
        let (ba1, be1, be2) = (range(0, 300), range(0, 150), range(150, 300));
        let m = partition_bounds_merge(&[(&ba1, &a1)], &[(&be1, &e1), (&be2, &e2)]);
        assert!(matches!(m, Merge::NotPartitionwise), "{m:?}");
        // Overlapping but one to one: matched although the bounds differ.
        let (bd1, d1) = (range(100, 250), rel("d1"));
        let m = partition_bounds_merge(&[(&ba1, &a1)], &[(&bd1, &d1)]);
        assert_eq!(names(&m), vec![("a1".to_string(), "d1".to_string())]);
    }

    #[test]
    fn list_partitions_match_by_common_values() {
        let t = Datum::text;
        let (a1, a2, a3, b1, b2, b3) = (rel("a1"), rel("a2"), rel("a3"), rel("b1"), rel("b2"), rel("b3"));
        let (ba1, ba2, ba3) = (Bound::List(vec![t("a"), t("b")]), Bound::List(vec![t("c")]), Bound::List(vec![t("d")]));
        let (bb1, bb2, bb3) = (Bound::List(vec![t("a")]), Bound::List(vec![t("e"), t("c")]), Bound::List(vec![t("f")]));
        let a = [(&ba1, &a1), (&ba2, &a2), (&ba3, &a3)];
        let b = [(&bb1, &b1), (&bb2, &b2), (&bb3, &b3)];
        let m = partition_bounds_merge(&a, &b);
        let want = [("a1", "b1"), ("a2", "b2"), ("a3", "none"), ("none", "b3")];
        assert_eq!(names(&m), want.map(|(x, y)| (x.to_string(), y.to_string())).to_vec());
        // A value of a1 in b2 as well: a1 would match b1 and b2.
        let bb2x = Bound::List(vec![t("b"), t("c")]);
        let m = partition_bounds_merge(&a, &[(&bb1, &b1), (&bb2x, &b2)]);
        assert!(matches!(m, Merge::NotPartitionwise), "{m:?}");
    }

    #[test]
    fn hash_never_merges_and_defaults_are_refused() {
        let (h1, h2) = (rel("h1"), rel("h2"));
        let (b1, b2) = (Bound::Hash { modulus: 3, remainder: 0 }, Bound::Hash { modulus: 2, remainder: 0 });
        assert!(matches!(partition_bounds_merge(&[(&b1, &h1)], &[(&b2, &h2)]), Merge::NotPartitionwise));
        let d = Bound::Default;
        let r = range(0, 10);
        assert!(matches!(partition_bounds_merge(&[(&r, &h1)], &[(&d, &h2)]), Merge::Unsupported(_)));
    }
}
