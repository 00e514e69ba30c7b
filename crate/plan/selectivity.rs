//! Selectivity: the fraction of a relation's rows a condition keeps, as PostgreSQL
//! 15's `clausesel.c` and `selfuncs.c` estimate it from the statistics ANALYZE left
//! ([`super::stats`]), or from their defaults without them.
//!
//! | condition | PostgreSQL | here |
//! |---|---|---|
//! | `col = const` | `eqsel` → `var_eq_const`: the MCV's frequency, else the rest spread over the other distinct values; no stats: `1 / get_variable_numdistinct` | [`var_eq_const`] |
//! | `col <> const` | `neqsel`: `1 − eq − nullfrac` | the same |
//! | `col < > <= >= const` | `scalarineqsel`: MCVs that satisfy it plus the histogram's share (`ineq_histogram_selectivity`, interpolated by `convert_to_scalar`); no stats: `DEFAULT_INEQ_SEL` (1/3) | [`scalarineqsel`] |
//! | `col IS [NOT] NULL` | `nulltestsel`: `stanullfrac`; no stats 0.005 / 0.995 | [`nulltestsel`] |
//! | `x IS [NOT] TRUE / FALSE / UNKNOWN` | `booltestsel`: the column's null fraction and most common value; no stats: 0.005 / 0.995 for UNKNOWN, else `x`'s own selectivity (or its complement) | [`booltestsel`] |
//! | AND | `clauselist_selectivity`: the product, a `<`/`>` pair on one column as a range (`hi + lo − 1`, `DEFAULT_RANGE_INEQ_SEL` with a default bound) | [`clauselist_selectivity`] |
//! | OR | `s1 + s2 − s1·s2` | the same |
//! | NOT | `1 − s` | the same |
//! | `x = ANY (array)`, `x <> ALL (array)` (IN lists) | `scalararraysel`: per element, summed for `= ANY` | [`scalararraysel`] |
//! | `a = b` between two relations | `eqjoinsel_inner`: MCV lists matched, else `1 / max(nd1, nd2)` scaled by the non-null fractions | [`eqjoinsel`] |
//! | GROUP BY columns | `estimate_num_groups`: the product of the columns' distinct counts, clamped to the input rows | [`estimate_num_groups`] |
//!
//! A condition compares a column with a constant when one side is a column and the
//! other has no column (folded to a constant first, as `estimate_expression_value`
//! does); anything else gets PostgreSQL's default for its operator.
//!
//! Invariants: every result is in [0, 1] (`CLAMP_PROBABILITY`); nothing here reads a
//! row, only statistics.
//!
//! Where it departs from PostgreSQL: `get_actual_variable_range` (probing an index for
//! the current minimum and maximum of a histogram's end bins) is not done; no
//! extended statistics.

use super::stats::ColumnStats;
use super::{BinOp, Expr};
use crate::types::Datum;

/// `DEFAULT_EQ_SEL`.
pub const DEFAULT_EQ_SEL: f64 = 0.005;
/// `DEFAULT_INEQ_SEL`.
pub const DEFAULT_INEQ_SEL: f64 = 1.0 / 3.0;
/// `DEFAULT_RANGE_INEQ_SEL`.
pub const DEFAULT_RANGE_INEQ_SEL: f64 = 0.005;
/// `DEFAULT_UNK_SEL` (IS NULL without statistics).
pub const DEFAULT_UNK_SEL: f64 = 0.005;
/// `DEFAULT_NUM_DISTINCT`.
pub const DEFAULT_NUM_DISTINCT: f64 = 200.0;

/// What `examine_variable` finds for a column: its statistics, if ANALYZE made them,
/// and its relation's row count (`rel->tuples`).
#[derive(Clone, Copy, Debug)]
pub struct VarData<'a> {
    pub stats: Option<&'a ColumnStats>,
    pub tuples: f64,
    /// A boolean column (`vartype == BOOLOID`): two distinct values without statistics.
    pub is_bool: bool,
}

impl VarData<'_> {
    /// An expression that is not a plain column: no statistics.
    pub fn none(tuples: f64) -> VarData<'static> {
        VarData { stats: None, tuples, is_bool: false }
    }
}

fn clamp(p: f64) -> f64 {
    if p.is_nan() {
        0.0
    } else {
        p.clamp(0.0, 1.0)
    }
}

/// `clamp_row_est`: at least one row, a whole number.
pub fn clamp_row_est(rows: f64) -> f64 {
    if rows <= 1.0 || rows.is_nan() {
        1.0
    } else {
        // rint(): half to even.
        rows.round_ties_even()
    }
}

/// `get_variable_numdistinct`: the column's distinct values; with `is_default` when
/// it is the default 200.
pub fn get_variable_numdistinct(v: &VarData) -> (f64, bool) {
    // Without statistics a boolean column presumably has its two values.
    let stadistinct = v.stats.map_or(if v.is_bool { 2.0 } else { 0.0 }, |s| s.n_distinct);
    if stadistinct > 0.0 {
        return (clamp_row_est(stadistinct), false);
    }
    let ntuples = v.tuples;
    if ntuples <= 0.0 {
        return (DEFAULT_NUM_DISTINCT, true);
    }
    if stadistinct < 0.0 {
        return (clamp_row_est(-stadistinct * ntuples), false);
    }
    if ntuples < DEFAULT_NUM_DISTINCT {
        return (clamp_row_est(ntuples), false);
    }
    (DEFAULT_NUM_DISTINCT, true)
}

/// `var_eq_const`: `col = c` (`negate`: `col <> c`).
pub fn var_eq_const(v: &VarData, c: &Datum, negate: bool) -> f64 {
    if c.is_null() {
        return 0.0;
    }
    let nullfrac = v.stats.map_or(0.0, |s| s.null_frac);
    let selec = match v.stats {
        Some(s) => match s.mcv.iter().find(|(m, _)| m == c) {
            Some((_, f)) => *f,
            None => {
                let sumcommon: f64 = s.mcv.iter().map(|m| m.1).sum();
                let mut selec = clamp(1.0 - sumcommon - nullfrac);
                let otherdistinct = get_variable_numdistinct(v).0 - s.mcv.len() as f64;
                if otherdistinct > 1.0 {
                    selec /= otherdistinct;
                }
                if let Some(least) = s.mcv.last().map(|m| m.1) {
                    selec = selec.min(least);
                }
                selec
            }
        },
        None => 1.0 / get_variable_numdistinct(v).0,
    };
    clamp(if negate { 1.0 - selec - nullfrac } else { selec })
}

/// `convert_to_scalar` for the sandbox's types: numbers as they are; strings by
/// `convert_string_to_scalar` (C collation: the common prefix stripped, then each
/// character a digit in the base of the characters' range). None: not comparable.
fn convert_to_scalar(value: &Datum, lo: &Datum, hi: &Datum) -> Option<(f64, f64, f64)> {
    match (value, lo, hi) {
        (Datum::Text(v), Datum::Text(l), Datum::Text(h)) => Some(convert_string_to_scalar(v, l, h)),
        _ => Some((value.as_f64()?, lo.as_f64()?, hi.as_f64()?)),
    }
}

fn convert_string_to_scalar(value: &str, lo: &str, hi: &str) -> (f64, f64, f64) {
    let (v, l, h) = (value.as_bytes(), lo.as_bytes(), hi.as_bytes());
    let (mut rangelo, mut rangehi) = (h.first().copied().unwrap_or(0) as i32, h.first().copied().unwrap_or(0) as i32);
    for &c in l.iter().chain(h) {
        rangelo = rangelo.min(c as i32);
        rangehi = rangehi.max(c as i32);
    }
    for (a, z) in [(b'A', b'Z'), (b'a', b'z'), (b'0', b'9')] {
        if rangelo <= z as i32 && rangehi >= a as i32 {
            rangelo = rangelo.min(a as i32);
            rangehi = rangehi.max(z as i32);
        }
    }
    if rangehi - rangelo < 9 {
        rangelo = b' ' as i32;
        rangehi = 127;
    }
    let mut p = 0;
    while p < l.len() && p < h.len() && p < v.len() && l[p] == h[p] && l[p] == v[p] {
        p += 1;
    }
    let one = |s: &[u8]| {
        let base = (rangehi - rangelo + 1) as f64;
        let (mut num, mut denom) = (0.0, base);
        for &c in s.iter().take(12) {
            let ch = (c as i32).clamp(rangelo - 1, rangehi + 1);
            num += (ch - rangelo) as f64 / denom;
            denom *= base;
        }
        num
    };
    (one(&v[p.min(v.len())..]), one(&l[p.min(l.len())..]), one(&h[p.min(h.len())..]))
}

fn compare(op: BinOp, a: &Datum, b: &Datum) -> bool {
    match op {
        BinOp::Lt => a < b,
        BinOp::LtEq => a <= b,
        BinOp::Gt => a > b,
        BinOp::GtEq => a >= b,
        _ => false,
    }
}

/// `ineq_histogram_selectivity`: the histogram's share of `col op c`; None without a
/// histogram of at least two bounds.
fn ineq_histogram_selectivity(v: &VarData, s: &ColumnStats, op: BinOp, c: &Datum) -> Option<f64> {
    let hist = &s.histogram;
    if hist.len() < 2 {
        return None;
    }
    let isgt = matches!(op, BinOp::Gt | BinOp::GtEq);
    let iseq = matches!(op, BinOp::LtEq | BinOp::GtEq);
    // The leftmost bound for which `op` fails (isgt: succeeds).
    let (mut lo, mut hi) = (0usize, hist.len());
    while lo < hi {
        let probe = (lo + hi) / 2;
        let mut ltcmp = compare(op, &hist[probe], c);
        if isgt {
            ltcmp = !ltcmp;
        }
        if ltcmp {
            lo = probe + 1;
        } else {
            hi = probe;
        }
    }
    let histfrac = if lo == 0 {
        0.0
    } else if lo >= hist.len() {
        1.0
    } else {
        let i = lo;
        let mut eq_selec = 0.0;
        if i == 1 || isgt == iseq {
            let otherdistinct = get_variable_numdistinct(v).0 - s.mcv.len() as f64;
            if otherdistinct > 1.0 {
                eq_selec = 1.0 / otherdistinct;
            }
        }
        let binfrac = match convert_to_scalar(c, &hist[i - 1], &hist[i]) {
            Some((val, low, high)) => {
                if high <= low {
                    0.5
                } else if val <= low {
                    0.0
                } else if val >= high {
                    1.0
                } else {
                    let b = (val - low) / (high - low);
                    if b.is_nan() || !(0.0..=1.0).contains(&b) {
                        0.5
                    } else {
                        b
                    }
                }
            }
            None => 0.5,
        };
        let mut histfrac = ((i - 1) as f64 + binfrac) / (hist.len() - 1) as f64;
        if i == 1 {
            histfrac += eq_selec * (1.0 - binfrac);
        }
        if isgt == iseq {
            histfrac -= eq_selec;
        }
        histfrac
    };
    let sel = if isgt { 1.0 - histfrac } else { histfrac };
    let cutoff = 0.01 / (hist.len() - 1) as f64;
    Some(sel.clamp(cutoff, 1.0 - cutoff))
}

/// `scalarineqsel`: `col op c` for `<`, `<=`, `>`, `>=`.
pub fn scalarineqsel(v: &VarData, op: BinOp, c: &Datum) -> f64 {
    if c.is_null() {
        return 0.0;
    }
    let Some(s) = v.stats else { return DEFAULT_INEQ_SEL };
    let mcv_selec: f64 = s.mcv.iter().filter(|(m, _)| compare(op, m, c)).map(|m| m.1).sum();
    let sumcommon: f64 = s.mcv.iter().map(|m| m.1).sum();
    let mut selec = 1.0 - s.null_frac - sumcommon;
    match ineq_histogram_selectivity(v, s, op, c) {
        Some(h) => selec *= h,
        None => selec *= 0.5,
    }
    clamp(selec + mcv_selec)
}

/// `nulltestsel`.
pub fn nulltestsel(v: &VarData, is_not_null: bool) -> f64 {
    match v.stats {
        Some(s) if is_not_null => 1.0 - s.null_frac,
        Some(s) => s.null_frac,
        None if is_not_null => 1.0 - DEFAULT_UNK_SEL,
        None => DEFAULT_UNK_SEL,
    }
}

/// An expression's value when it reads no column (`estimate_expression_value`).
fn constant(e: &Expr) -> Option<Datum> {
    let mut has_col = false;
    e.for_each_col(&mut |_| has_col = true);
    // A parameter's value is unknown when a generic plan is costed, and so is an
    // InitPlan's (PARAM_EXEC) when any plan is: neither is a Const to scalarineqsel.
    if has_col || contains_volatile(e) || e.has_param() || e.has_exec_param() {
        return None;
    }
    // One that raises (`1/0`) has no value to estimate with; the executor raises it.
    e.eval(&[]).ok()
}

fn contains_volatile(e: &Expr) -> bool {
    match e {
        Expr::Func(f, args) => {
            matches!(f, super::Func::Random | super::Func::SetSeed) || args.iter().any(contains_volatile)
        }
        Expr::Bin(_, l, r) => contains_volatile(l) || contains_volatile(r),
        Expr::Not(x) | Expr::IsNull(x, _) => contains_volatile(x),
        _ => false,
    }
}

/// `col op const` in either order, the operator commuted to put the column on the left.
fn var_op_const(op: BinOp, l: &Expr, r: &Expr) -> Option<(usize, BinOp, Datum)> {
    let commute = |op: BinOp| match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::LtEq => BinOp::GtEq,
        BinOp::Gt => BinOp::Lt,
        BinOp::GtEq => BinOp::LtEq,
        o => o,
    };
    match (l, r) {
        (Expr::Col(i), other) => constant(other).map(|c| (*i, op, c)),
        (other, Expr::Col(i)) => constant(other).map(|c| (*i, commute(op), c)),
        _ => None,
    }
}

/// `column op expr` where expr is a parameter (no column, a `$n`): the column.
fn var_op_param(l: &Expr, r: &Expr) -> Option<usize> {
    let pseudo_constant = |e: &Expr| {
        let mut has_col = false;
        e.for_each_col(&mut |_| has_col = true);
        !has_col && (e.has_param() || e.has_exec_param())
    };
    match (l, r) {
        (Expr::Col(i), p) | (p, Expr::Col(i)) if pseudo_constant(p) => Some(*i),
        _ => None,
    }
}

/// `var_eq_non_const`: `column = value not known at planning` (a generic plan's
/// parameter): 1 − nullfrac over the distinct values, at most the most common value's
/// frequency; with no statistics 1 / the default number of distinct values.
pub fn var_eq_non_const(v: &VarData) -> f64 {
    match v.stats {
        Some(s) => {
            let mut selec = 1.0 - s.null_frac;
            let ndistinct = get_variable_numdistinct(v).0;
            if ndistinct > 1.0 {
                selec /= ndistinct;
            }
            if let Some(top) = s.mcv.first().map(|m| m.1) {
                selec = selec.min(top);
            }
            clamp(selec)
        }
        None => clamp(1.0 / get_variable_numdistinct(v).0),
    }
}

/// `clause_selectivity` of one condition; `var(i)`: column i's statistics.
pub fn clause_selectivity<'a>(e: &Expr, var: &dyn Fn(usize) -> VarData<'a>, tuples: f64) -> f64 {
    match e {
        Expr::Bin(BinOp::And, ..) => {
            let mut parts = vec![];
            split_and(e, &mut parts);
            clauselist_selectivity(&parts, var, tuples)
        }
        Expr::Bin(BinOp::Or, l, r) => {
            let (s1, s2) = (clause_selectivity(l, var, tuples), clause_selectivity(r, var, tuples));
            s1 + s2 - s1 * s2
        }
        Expr::Not(x) => match negate_clause(x) {
            Some(n) => clause_selectivity(&n, var, tuples),
            None => 1.0 - clause_selectivity(x, var, tuples),
        },
        Expr::IsNull(x, not) => match x.as_ref() {
            Expr::Col(i) => nulltestsel(&var(*i), *not),
            _ => nulltestsel(&VarData::none(tuples), *not),
        },
        Expr::Bin(op @ (BinOp::Eq | BinOp::NotEq), l, r) if var_op_param(l, r).is_some() => {
            let i = var_op_param(l, r).unwrap_or(0);
            let v = var(i);
            let selec = var_eq_non_const(&v);
            let nullfrac = v.stats.map_or(0.0, |s| s.null_frac);
            clamp(if *op == BinOp::NotEq { 1.0 - selec - nullfrac } else { selec })
        }
        Expr::Bin(op, l, r) if op.is_comparison() => match var_op_const(*op, l, r) {
            Some((i, BinOp::Eq, c)) => var_eq_const(&var(i), &c, false),
            Some((i, BinOp::NotEq, c)) => var_eq_const(&var(i), &c, true),
            Some((i, op, c)) => scalarineqsel(&var(i), op, &c),
            None => match op {
                // eqsel / neqsel on an expression: no statistics.
                BinOp::Eq => 1.0 / get_variable_numdistinct(&VarData::none(tuples)).0,
                BinOp::NotEq => 1.0 - 1.0 / get_variable_numdistinct(&VarData::none(tuples)).0,
                _ => DEFAULT_INEQ_SEL,
            },
        },
        Expr::Func(super::Func::ScalarArrayOp { op, use_or, .. }, args) if !args.is_empty() => {
            scalararraysel(*op, *use_or, &args[0], &args[1..], var, tuples)
        }
        Expr::Func(super::Func::BoolTest(test), args) if args.len() == 1 => {
            let v = match &args[0] {
                Expr::Col(i) => var(*i),
                _ => VarData::none(tuples),
            };
            booltestsel(*test, &v, &|| clause_selectivity(&args[0], var, tuples))
        }
        Expr::Const(d) => {
            if d.is_true() {
                1.0
            } else {
                0.0
            }
        }
        // boolvarsel: a boolean column is `col = true` when it has statistics.
        Expr::Col(i) => {
            let v = var(*i);
            if v.stats.is_some() {
                var_eq_const(&v, &Datum::Bool(true), false)
            } else {
                0.5
            }
        }
        // A boolean function: boolvarsel's default.
        _ => 0.5,
    }
}

/// `booltestsel` (selfuncs.c) of `x IS [NOT] TRUE | FALSE | UNKNOWN`: with `x`'s
/// statistics, its null fraction and the frequency of its most common value (the
/// other's is what remains), a 50-50 split without a most common value; without
/// statistics, IS [NOT] UNKNOWN's defaults and `x`'s own selectivity (`arg_sel`) for
/// IS TRUE and IS NOT FALSE, its complement for IS FALSE and IS NOT TRUE.
fn booltestsel(test: super::BoolTestType, v: &VarData, arg_sel: &dyn Fn() -> f64) -> f64 {
    use super::BoolTestType::*;
    let selec = match v.stats {
        Some(s) => {
            let freq_null = s.null_frac;
            match s.mcv.first() {
                Some((value, freq)) => {
                    let freq_true = if value.is_true() { *freq } else { 1.0 - freq - freq_null };
                    let freq_false = 1.0 - freq_true - freq_null;
                    match test {
                        IsUnknown => freq_null,
                        IsNotUnknown => 1.0 - freq_null,
                        IsTrue => freq_true,
                        IsNotTrue => 1.0 - freq_true,
                        IsFalse => freq_false,
                        IsNotFalse => 1.0 - freq_false,
                    }
                }
                None => match test {
                    IsUnknown => freq_null,
                    IsNotUnknown => 1.0 - freq_null,
                    IsTrue | IsFalse => (1.0 - freq_null) / 2.0,
                    IsNotTrue | IsNotFalse => (1.0 - freq_null) / 2.0 + freq_null,
                },
            }
        }
        None => match test {
            IsUnknown => DEFAULT_UNK_SEL,
            IsNotUnknown => 1.0 - DEFAULT_UNK_SEL,
            IsTrue | IsNotFalse => arg_sel(),
            IsFalse | IsNotTrue => 1.0 - arg_sel(),
        },
    };
    clamp(selec)
}

/// `scalararraysel` (selfuncs.c) for `x op ANY/ALL (array)` over a constant array or
/// an ArrayExpr: each element's `x op element` estimated as its operator's
/// restriction estimator would (`eqsel`, `neqsel`, `scalarineqsel`, a parameter as
/// `var_eq_non_const`), combined as independent (`s1 + s2 − s1·s2` for ANY, the
/// product for ALL); for `= ANY` the elements are taken as disjoint instead and the
/// sum used, and for `<> ALL` `1 + Σ(s2 − 1)`, when that stays within [0, 1].
fn scalararraysel<'a>(
    op: BinOp,
    use_or: bool,
    x: &Expr,
    elems: &[Expr],
    var: &dyn Fn(usize) -> VarData<'a>,
    tuples: f64,
) -> f64 {
    let (is_equality, is_inequality) = (op == BinOp::Eq, op == BinOp::NotEq);
    let mut s1 = if use_or { 0.0 } else { 1.0 };
    let mut s1disjoint = s1;
    for e in elems {
        let s2 = clause_selectivity(&Expr::bin(op, x.clone(), e.clone()), var, tuples);
        if use_or {
            s1 = s1 + s2 - s1 * s2;
            if is_equality {
                s1disjoint += s2;
            }
        } else {
            s1 *= s2;
            if is_inequality {
                s1disjoint += s2 - 1.0;
            }
        }
    }
    if (if use_or { is_equality } else { is_inequality }) && (0.0..=1.0).contains(&s1disjoint) {
        s1 = s1disjoint;
    }
    clamp(s1)
}

/// `negate_clause` (as `eval_const_expressions` applies it): NOT pushed through AND,
/// OR, IS NULL and a comparison (its negator: NOT (a > b) is a <= b). None: kept as NOT.
fn negate_clause(e: &Expr) -> Option<Expr> {
    let not = |x: &Expr| negate_clause(x).unwrap_or_else(|| Expr::Not(Box::new(x.clone())));
    Some(match e {
        Expr::Bin(op, l, r) if op.is_comparison() => {
            let neg = match op {
                BinOp::Eq => BinOp::NotEq,
                BinOp::NotEq => BinOp::Eq,
                BinOp::Lt => BinOp::GtEq,
                BinOp::LtEq => BinOp::Gt,
                BinOp::Gt => BinOp::LtEq,
                _ => BinOp::Lt,
            };
            Expr::Bin(neg, l.clone(), r.clone())
        }
        Expr::Bin(BinOp::And, l, r) => Expr::bin(BinOp::Or, not(l), not(r)),
        Expr::Bin(BinOp::Or, l, r) => Expr::bin(BinOp::And, not(l), not(r)),
        Expr::Not(x) => (**x).clone(),
        Expr::IsNull(x, n) => Expr::IsNull(x.clone(), !n),
        Expr::Func(super::Func::BoolTest(t), args) => Expr::Func(super::Func::BoolTest(t.negated()), args.clone()),
        Expr::Func(super::Func::ScalarArrayOp { op, use_or, elem }, args) if op.is_comparison() => {
            let negated = match negate_clause(&Expr::bin(*op, Expr::Col(0), Expr::Col(0))) {
                Some(Expr::Bin(neg, ..)) => neg,
                _ => return None,
            };
            Expr::Func(super::Func::ScalarArrayOp { op: negated, use_or: !use_or, elem: *elem }, args.clone())
        }
        _ => return None,
    })
}

fn split_and(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Bin(BinOp::And, l, r) => {
            split_and(l, out);
            split_and(r, out);
        }
        e => out.push(e.clone()),
    }
}

/// `clause_selectivity` of a join clause (varRelid 0, the clause reading both sides):
/// an OR's arms are join clauses too (`clauselist_selectivity_or`, s1 + s2 - s1 s2),
/// so an arm `a.x = b.y` is estimated by the join operator's `eqjoinsel`, not as a
/// restriction on an expression; a NOT is 1 minus its argument's; anything else as
/// `clause_selectivity` has it (`a.x < b.y`: `scalarltjoinsel`'s DEFAULT_INEQ_SEL).
pub fn join_clause_selectivity<'a>(e: &Expr, var: &dyn Fn(usize) -> VarData<'a>, tuples: f64) -> f64 {
    match e {
        Expr::Bin(BinOp::Or, l, r) => {
            let (s1, s2) = (join_clause_selectivity(l, var, tuples), join_clause_selectivity(r, var, tuples));
            s1 + s2 - s1 * s2
        }
        Expr::Bin(BinOp::And, l, r) => {
            join_clause_selectivity(l, var, tuples) * join_clause_selectivity(r, var, tuples)
        }
        Expr::Bin(BinOp::Eq, l, r) => match (l.as_ref(), r.as_ref()) {
            (Expr::Col(a), Expr::Col(b)) => eqjoinsel(&var(*a), &var(*b)),
            _ => clause_selectivity(e, var, tuples),
        },
        _ => clause_selectivity(e, var, tuples),
    }
}

/// `clauselist_selectivity` of conjuncts: the product, except that a `<`-type and a
/// `>`-type bound on the same column make one range (`addRangeClause`).
pub fn clauselist_selectivity<'a>(clauses: &[Expr], var: &dyn Fn(usize) -> VarData<'a>, tuples: f64) -> f64 {
    if clauses.len() == 1 {
        return clause_selectivity(&clauses[0], var, tuples);
    }
    let mut s1 = 1.0;
    // Per column: (lobound, hibound) selectivities of `>` and `<` clauses.
    let mut ranges: Vec<(usize, Option<f64>, Option<f64>)> = vec![];
    for c in clauses {
        let s2 = clause_selectivity(c, var, tuples);
        if let Expr::Bin(op @ (BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq), l, r) = c {
            // A parameter is a pseudo-constant too (addRangeClause takes `var op
            // $n`): its default selectivity makes the pair DEFAULT_RANGE_INEQ_SEL.
            let param_bound = var_op_param(l, r).map(|i| {
                let var_left = matches!(l.as_ref(), Expr::Col(_));
                let op = match (var_left, *op) {
                    (true, o) => o,
                    (false, BinOp::Lt) => BinOp::Gt,
                    (false, BinOp::LtEq) => BinOp::GtEq,
                    (false, BinOp::Gt) => BinOp::Lt,
                    (false, _) => BinOp::LtEq,
                };
                (i, op)
            });
            if let Some((i, op)) = var_op_const(*op, l, r).map(|(i, op, _)| (i, op)).or(param_bound) {
                let slot = match ranges.iter().position(|r| r.0 == i) {
                    Some(p) => p,
                    None => {
                        ranges.push((i, None, None));
                        ranges.len() - 1
                    }
                };
                let r = &mut ranges[slot];
                if matches!(op, BinOp::Gt | BinOp::GtEq) {
                    r.1 = Some(r.1.map_or(s2, |s: f64| s.min(s2)));
                } else {
                    r.2 = Some(r.2.map_or(s2, |s: f64| s.min(s2)));
                }
                continue;
            }
        }
        s1 *= s2;
    }
    for (i, lo, hi) in ranges {
        match (lo, hi) {
            (Some(lo), Some(hi)) => {
                let s2 = if lo == DEFAULT_INEQ_SEL || hi == DEFAULT_INEQ_SEL {
                    DEFAULT_RANGE_INEQ_SEL
                } else {
                    let s = hi + lo - 1.0 + nulltestsel(&var(i), false);
                    if s <= 0.0 {
                        if s < -0.01 {
                            DEFAULT_RANGE_INEQ_SEL
                        } else {
                            1.0e-10
                        }
                    } else {
                        s
                    }
                };
                s1 *= s2;
            }
            (Some(s), None) | (None, Some(s)) => s1 *= s,
            (None, None) => {}
        }
    }
    clamp(s1)
}

/// `eqjoinsel_inner`: `a = b` between two relations' columns.
pub fn eqjoinsel(a: &VarData, b: &VarData) -> f64 {
    let (nd1, _) = get_variable_numdistinct(a);
    let (nd2, _) = get_variable_numdistinct(b);
    let nullfrac1 = a.stats.map_or(0.0, |s| s.null_frac);
    let nullfrac2 = b.stats.map_or(0.0, |s| s.null_frac);
    if let (Some(s1), Some(s2)) = (a.stats, b.stats) {
        if !s1.mcv.is_empty() && !s2.mcv.is_empty() {
            // Match the MCV lists: matched pairs' frequencies exactly, the rest spread
            // over the other distinct values.
            let mut hasmatch2 = vec![false; s2.mcv.len()];
            let (mut matchprodfreq, mut matchfreq1, mut unmatchfreq1) = (0.0, 0.0, 0.0);
            let mut nmatches = 0.0;
            for (v1, f1) in &s1.mcv {
                let mut matched = false;
                for (j, (v2, f2)) in s2.mcv.iter().enumerate() {
                    if !hasmatch2[j] && v1 == v2 {
                        hasmatch2[j] = true;
                        matchprodfreq += f1 * f2;
                        matchfreq1 += f1;
                        nmatches += 1.0;
                        matched = true;
                        break;
                    }
                }
                if !matched {
                    unmatchfreq1 += f1;
                }
            }
            let matchfreq2: f64 = s2.mcv.iter().zip(&hasmatch2).filter(|(_, m)| **m).map(|(m, _)| m.1).sum();
            let unmatchfreq2: f64 = s2.mcv.iter().zip(&hasmatch2).filter(|(_, m)| !**m).map(|(m, _)| m.1).sum();
            let otherfreq1 = clamp(1.0 - nullfrac1 - (matchfreq1 + unmatchfreq1));
            let otherfreq2 = clamp(1.0 - nullfrac2 - (matchfreq2 + unmatchfreq2));
            let mut totalsel1 = matchprodfreq;
            if nd2 > s2.mcv.len() as f64 {
                totalsel1 += unmatchfreq1 * otherfreq2 / (nd2 - s2.mcv.len() as f64);
            }
            if nd2 > nmatches {
                totalsel1 += otherfreq1 * (otherfreq2 + unmatchfreq2) / (nd2 - nmatches);
            }
            let mut totalsel2 = matchprodfreq;
            if nd1 > s1.mcv.len() as f64 {
                totalsel2 += unmatchfreq2 * otherfreq1 / (nd1 - s1.mcv.len() as f64);
            }
            if nd1 > nmatches {
                totalsel2 += otherfreq2 * (otherfreq1 + unmatchfreq1) / (nd1 - nmatches);
            }
            return clamp(totalsel1.min(totalsel2));
        }
    }
    let mut selec = (1.0 - nullfrac1) * (1.0 - nullfrac2);
    selec /= nd1.max(nd2);
    clamp(selec)
}

/// `estimate_num_groups` for GROUP BY columns of one relation (an expression that is
/// not a column comes as a [`VarData::none`]): the product of their distinct counts,
/// clamped to the relation's tuples (a tenth of them for several columns, but not below
/// the largest count), scaled down when a restriction keeps only `rel_rows` of the
/// relation's tuples, then at most the input rows.
pub fn estimate_num_groups(vars: &[VarData], rel_rows: f64, input_rows: f64) -> f64 {
    if vars.is_empty() {
        return 1.0;
    }
    let tuples = vars[0].tuples;
    let (mut reldistinct, mut relmax) = (1.0f64, 1.0f64);
    for v in vars {
        let (nd, _) = get_variable_numdistinct(v);
        reldistinct *= nd;
        relmax = relmax.max(nd);
    }
    let mut numdistinct = 1.0;
    if tuples > 0.0 {
        let clamp_to = if vars.len() > 1 { (tuples / 10.0).max(relmax).min(tuples) } else { tuples };
        reldistinct = reldistinct.min(clamp_to);
        if reldistinct > 0.0 && rel_rows < tuples {
            reldistinct *= 1.0 - ((tuples - rel_rows) / tuples).powf(tuples / reldistinct);
        }
        numdistinct *= clamp_row_est(reldistinct);
    }
    numdistinct.ceil().min(input_rows).max(1.0)
}

/// `get_variable_range`: the smallest and largest value the statistics know of (the
/// histogram's first and last bounds, widened by the MCVs); None without statistics.
fn get_variable_range(v: &VarData) -> Option<(Datum, Datum)> {
    let s = v.stats?;
    let mut range: Option<(Datum, Datum)> = match (s.histogram.first(), s.histogram.last()) {
        (Some(lo), Some(hi)) => Some((lo.clone(), hi.clone())),
        _ => None,
    };
    for (m, _) in &s.mcv {
        range = match range {
            None => Some((m.clone(), m.clone())),
            Some((lo, hi)) => Some((if *m < lo { m.clone() } else { lo }, if *m > hi { m.clone() } else { hi })),
        };
    }
    range
}

/// `mergejoinscansel` for `left = right` merged ascending, NULLs last: the fractions
/// of each input read before the first join pair (`*start`) and by the time one
/// input is exhausted (`*end`), as (left start, left end, right start, right end).
/// Only one side's end can be below 1 (the smaller estimate is believed) and only
/// one side's start above 0 (the larger); without ranges from both sides' statistics,
/// 0 and 1.
pub fn mergejoinscansel(left: &VarData, right: &VarData) -> (f64, f64, f64, f64) {
    let (mut ls, mut le, mut rs, mut re) = (0.0, 1.0, 0.0, 1.0);
    let (Some((lmin, lmax)), Some((rmin, rmax))) = (get_variable_range(left), get_variable_range(right)) else {
        return (ls, le, rs, re);
    };
    // The share of each side at or below the other's largest value.
    let sel = scalarineqsel(left, BinOp::LtEq, &rmax);
    if sel != DEFAULT_INEQ_SEL {
        le = sel;
    }
    let sel = scalarineqsel(right, BinOp::LtEq, &lmax);
    if sel != DEFAULT_INEQ_SEL {
        re = sel;
    }
    if le > re {
        le = 1.0;
    } else if le < re {
        re = 1.0;
    } else {
        (le, re) = (1.0, 1.0);
    }
    // The share of each side below the other's smallest value.
    let sel = scalarineqsel(left, BinOp::Lt, &rmin);
    if sel != DEFAULT_INEQ_SEL {
        ls = sel;
    }
    let sel = scalarineqsel(right, BinOp::Lt, &lmin);
    if sel != DEFAULT_INEQ_SEL {
        rs = sel;
    }
    if ls < rs {
        ls = 0.0;
    } else if ls > rs {
        rs = 0.0;
    } else {
        (ls, rs) = (0.0, 0.0);
    }
    if ls >= le {
        (ls, le) = (0.0, 1.0);
    }
    if rs >= re {
        (rs, re) = (0.0, 1.0);
    }
    (ls, le, rs, re)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::SqlType;

    fn param(n: u16) -> Expr {
        Expr::Param(n, SqlType::Int4, None)
    }

    /// A generic plan's conditions on a parameter: `var = $1` is var_eq_non_const (here
    /// without statistics, 1 / DEFAULT_NUM_DISTINCT), `var < $1` DEFAULT_INEQ_SEL, and a
    /// pair of bounds on one column DEFAULT_RANGE_INEQ_SEL (clauselist's addRangeClause).
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn parameters_get_plancache_defaults() {
        let none = |_: usize| VarData::none(1000.0);
        let eq = Expr::bin(BinOp::Eq, Expr::Col(0), param(1));
        assert!((clause_selectivity(&eq, &none, 1000.0) - 1.0 / 200.0).abs() < 1e-12);
        let lt = Expr::bin(BinOp::Lt, param(1), Expr::Col(0));
        assert_eq!(clause_selectivity(&lt, &none, 1000.0), DEFAULT_INEQ_SEL);
        let ge = Expr::bin(BinOp::GtEq, Expr::Col(0), param(1));
        let lt2 = Expr::bin(BinOp::Lt, Expr::Col(0), param(2));
        assert_eq!(clauselist_selectivity(&[ge, lt2], &none, 1000.0), DEFAULT_RANGE_INEQ_SEL);
    }

    /// (h23n) A join clause `a.x = b.y OR a.z = b.w` (a Nested Loop's Join Filter):
    /// each arm is the join operator's `eqjoinsel` (here 1/50: two columns of 50
    /// rows without statistics), combined as `s1 + s2 − s1·s2`; not the restriction
    /// estimate of an equality of expressions (1/200 of the join's 1000 rows).
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn an_or_of_join_equalities_is_estimated_by_eqjoinsel() {
        let small = |_: usize| VarData::none(50.0);
        let or = Expr::bin(
            BinOp::Or,
            Expr::bin(BinOp::Eq, Expr::Col(0), Expr::Col(2)),
            Expr::bin(BinOp::Eq, Expr::Col(1), Expr::Col(3)),
        );
        let s = eqjoinsel(&VarData::none(50.0), &VarData::none(50.0));
        assert!((s - 1.0 / 50.0).abs() < 1e-12, "{s}");
        let got = join_clause_selectivity(&or, &small, 1000.0);
        assert!((got - (2.0 * s - s * s)).abs() < 1e-12, "{got}");
        assert!((clause_selectivity(&or, &small, 1000.0) - got).abs() > 1e-3);
        // An inequality between the sides: scalarltjoinsel's default.
        let lt = Expr::bin(BinOp::Lt, Expr::Col(0), Expr::Col(2));
        assert_eq!(join_clause_selectivity(&lt, &small, 1000.0), DEFAULT_INEQ_SEL);
    }

    /// scalararraysel: `= ANY` sums its elements' `eqsel` (disjoint values), where the
    /// same equalities ORed combine as `s1 + s2 − s1·s2`; `<> ALL` is `1 + Σ(s2 − 1)`;
    /// `< ANY` combines as independent; a NULL element counts nothing.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn scalar_array_ops_sum_disjoint_equalities() {
        let stats = ColumnStats {
            null_frac: 0.1,
            avg_width: 4,
            n_distinct: 10.0,
            mcv: vec![(Datum::Int(1), 0.4), (Datum::Int(2), 0.3)],
            histogram: vec![],
            correlation: None,
        };
        let var = |_: usize| VarData { stats: Some(&stats), tuples: 1000.0, is_bool: false };
        let saop = |op, use_or, elems: &[i64]| {
            let mut args = vec![Expr::Col(0)];
            args.extend(elems.iter().map(|v| Expr::int(*v)));
            Expr::func(crate::plan::Func::ScalarArrayOp { op, use_or, elem: SqlType::Int4 }, args)
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // 0.4 + 0.3, not 0.4 + 0.3 − 0.12.
        assert!(close(clause_selectivity(&saop(BinOp::Eq, true, &[1, 2]), &var, 1000.0), 0.7));
        let ored = Expr::bin(
            BinOp::Or,
            Expr::bin(BinOp::Eq, Expr::Col(0), Expr::int(1)),
            Expr::bin(BinOp::Eq, Expr::Col(0), Expr::int(2)),
        );
        assert!(close(clause_selectivity(&ored, &var, 1000.0), 0.58));
        // <> ALL: (1 − 0.4 − 0.1) + (1 − 0.3 − 0.1) − 1 = 0.1.
        assert!(close(clause_selectivity(&saop(BinOp::NotEq, false, &[1, 2]), &var, 1000.0), 0.1));
        // NOT (= ANY) is <> ALL.
        let not = Expr::Not(Box::new(saop(BinOp::Eq, true, &[1, 2])));
        assert!(close(clause_selectivity(&not, &var, 1000.0), 0.1));
        let mut with_null = saop(BinOp::Eq, true, &[1]);
        if let Expr::Func(f, args) = with_null {
            let mut args = args.into_vec();
            args.push(Expr::Const(Datum::Null));
            with_null = Expr::Func(f, args.into_boxed_slice());
        }
        assert!(close(clause_selectivity(&with_null, &var, 1000.0), 0.4));
    }
}
