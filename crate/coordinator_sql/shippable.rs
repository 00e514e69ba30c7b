//! Which of a query's conditions a foreign scan sends to the remote server, and which
//! are pseudoconstants that gate a scan instead: postgres_fdw's `is_foreign_expr`
//! (deparse.c, `foreign_expr_walker`; `is_shippable` in shippable.c) and the
//! planner's pseudoconstant quals (`distribute_qual_to_rels` in initsplan.c marks a
//! qual without Vars and without volatile functions `pseudoconstant`;
//! `create_gating_plan` in createplan.c puts it in a Result's One-Time Filter).
//!
//! The rule of [`is_foreign_expr`], for the expressions the sandbox has:
//!
//! | expression | shipped | why (PostgreSQL 15) |
//! |---|---|---|
//! | a column, a constant | yes | Var of the foreign relation, Const |
//! | `= <> < <= > >= + - * / %`, AND, OR, NOT, IS [NOT] NULL, `x = ANY (array)` (an IN list) | yes | built-in immutable operators (`is_shippable`: a built-in object, OID below `FirstGenbkiObjectId`), BoolExpr, NullTest |
//! | `text || text` (`textcat`), `length`, `upper`, `lower`, `substr`, `~~ !~~ ~~* !~~*` ([NOT] [I]LIKE), unary minus, `abs` | yes | built-in immutable functions and operators (`contain_mutable_functions` is false) |
//! | a cast between numeric types (`int4(float8)`, `numeric(int4)`, …) | yes | a FuncExpr of a built-in immutable cast function |
//! | a cast to text of a non-text value (what `text || int` makes: `anytextcat`) | no | a CoerceViaIO (the type's output function), which `foreign_expr_walker` does not accept; `anytextcat` itself is stable |
//! | a cast of a text to a number (`name::int`) | no | a CoerceViaIO too (the number's input function) |
//! | `CASE WHEN c THEN r … ELSE e END`, `CASE x WHEN v …`, `round(numeric, int)`, `round(float8)` | yes | CaseExpr (and CaseTestExpr) are among the nodes `foreign_expr_walker` accepts; `round` is a built-in immutable function (`round(numeric)` is inlined to `round(x, 0)`) |
//! | a comparison of a CASE of text constants with a text constant (`CASE … THEN 'a' … END = 'a'`) | no | the operator's input collation comes from no Var of the scan (FDW_COLLATE_NONE), which the walker refuses for a collatable input |
//! | `COALESCE`, `NULLIF`, `GREATEST`, `LEAST` | no | CoalesceExpr, NullIfExpr, MinMaxExpr: not accepted by PostgreSQL 15's walker (a local Filter; never in Remote SQL) |
//! | CURRENT_USER, SESSION_USER | no | SQLValueFunction: not among the node types `foreign_expr_walker` accepts (and stable) |
//! | `random()`, `setseed()`, `to_char()` | no | volatile, or stable (`to_char` reads the locale) |
//!
//! A condition that is not shipped is checked locally, in the Foreign Scan's `Filter:`
//! (the scan then fetches the columns it reads). A condition that reads no column and
//! is not folded to a constant at planning (`eval_const_expressions` folds only
//! immutable functions) is a **pseudoconstant**: evaluated once, before the scan, in a
//! gating Result (`One-Time Filter:`), never sent and never a per-row filter.
//!
//! | a user-defined operator or function (`CREATE OPERATOR ===`, `CREATE FUNCTION … LANGUAGE internal`) | only if a member of postgres_fdw (`ALTER EXTENSION postgres_fdw ADD …`), immutable, and the server's `extensions` lists postgres_fdw | `is_shippable`: not built in, so only a listed extension's members; then written `OPERATOR(public.===)` |
//! | a call of a SQL function PostgreSQL inlines | as its inlined expression | `inline_function` replaced the call before postgres_fdw saw it (`shard_sql::inline`) |
//!
//! Invariants: shipping is decided per top-level AND-ed condition, as postgres_fdw
//! classifies `baserestrictinfo` into `remote_conds` and `local_conds`; the rule reads
//! the expression and, for user-defined objects, the scanned table's server's
//! `extensions` option.

use super::catalog::{Node, RelKind, Relation};
use super::functioncmds::lists_postgres_fdw;
use crate::plan::userfunc::Volatility;
use crate::plan::{Expr, Func, SqlType};

/// `is_foreign_expr`: may the remote server evaluate `e` (see the module's table)?
/// A server whose `extensions` lists none: only built-ins ship.
pub fn is_foreign_expr(e: &Expr) -> bool {
    foreign_expr_walker(e, false)
}

/// `is_foreign_expr` for a scan of `rel` (a foreign table of `coord`): a member of
/// postgres_fdw ships too when the table's server lists it in `extensions`
/// (shippable.c's `lookup_shippable`), if it is immutable (`is_foreign_expr` refuses
/// any mutable function, `contain_mutable_functions`).
pub fn is_foreign_expr_on(e: &Expr, coord: &Node, rel: &Relation) -> bool {
    let listed = match &rel.kind {
        RelKind::Foreign { server, .. } => {
            lists_postgres_fdw(coord.server(server).and_then(|s| s.option("extensions")))
        }
        _ => false,
    };
    foreign_expr_walker(e, listed)
}

/// `foreign_expr_walker`: every node of the expression must be shippable.
fn foreign_expr_walker(e: &Expr, members_ship: bool) -> bool {
    let walk = |x: &Expr| foreign_expr_walker(x, members_ship);
    match e {
        // A parameter is sent as `$n` with its value bound (deparse.c's printRemoteParam).
        Expr::Col(_) | Expr::Const(_) | Expr::Param(..) | Expr::ExecParam(..) => true,
        // A text comparison whose collation derives from no foreign Var (a CASE of
        // text constants against a constant): foreign_expr_walker's collation check
        // (the operator's input collation must come from a Var of the scan, state
        // FDW_COLLATE_SAFE) refuses it.
        Expr::Bin(op, l, r) if op.is_comparison() && collation_not_from_var(l, r) => false,
        Expr::Bin(_, l, r) => walk(l) && walk(r),
        Expr::Func(Func::Like { .. } | Func::ScalarArrayOp { .. }, args)
            if args.len() > 1 && args[1..].iter().all(|a| collation_not_from_var(&args[0], a)) =>
        {
            false
        }
        Expr::Not(x) | Expr::IsNull(x, _) => walk(x),
        Expr::Func(Func::User(u), args) => {
            members_ship && u.in_extension && u.volatility == Volatility::Immutable && args.iter().all(walk)
        }
        Expr::Func(f, args) => is_shippable(*f) && args.iter().all(walk),
    }
}

/// Are `a` and `b` texts whose collation no column gives (foreign_expr_walker's
/// FDW_COLLATE_NONE): a CASE whose results are text constants, beside a constant or
/// another such CASE. A text column on either side gives the comparison its
/// collation (FDW_COLLATE_SAFE).
fn collation_not_from_var(a: &Expr, b: &Expr) -> bool {
    fn const_text_case(e: &Expr) -> bool {
        let Expr::Func(Func::Case { simple }, args) = e else { return false };
        let rest = if *simple { &args[1..] } else { &args[..] };
        let results = rest.iter().enumerate().filter(|(i, _)| i % 2 == 1 || *i + 1 == rest.len()).map(|(_, r)| r);
        let mut any_text = false;
        for r in results {
            match r {
                Expr::Const(crate::types::Datum::Text(_)) => any_text = true,
                Expr::Const(crate::types::Datum::Null) => {}
                Expr::Func(Func::Cast { to: SqlType::Text, .. }, x)
                    if matches!(x.first(), Some(Expr::Const(crate::types::Datum::Null))) => {}
                other if const_text_case(other) => any_text = true,
                _ => return false,
            }
        }
        any_text
    }
    let none = |e: &Expr| const_text_case(e) || matches!(e, Expr::Const(crate::types::Datum::Text(_)));
    (const_text_case(a) || const_text_case(b)) && none(a) && none(b)
}

/// `is_shippable` for a function or operator: built-in and immutable.
fn is_shippable(f: Func) -> bool {
    match f {
        // A cast to text of a non-text value is an I/O conversion (CoerceViaIO).
        Func::Cast { to: SqlType::Text, from, .. } => from == Some(SqlType::Text) || from.is_none(),
        // So is a cast of a text to another type (`name::int`: there is no cast
        // function from text, the type's input function reads it): not shipped.
        Func::Cast { from: Some(SqlType::Text), .. } | Func::NumericTypmod { from: Some(SqlType::Text), .. } => false,
        Func::Cast { .. }
        | Func::NumericTypmod { .. }
        | Func::Neg
        | Func::IntNarrowNeg(_)
        | Func::Abs
        | Func::TextCat
        | Func::Length
        | Func::Upper
        | Func::Lower
        | Func::Substr
        | Func::Round
        | Func::Like { .. } => true,
        // CaseExpr, searched or simple (its CaseTestExpr too).
        Func::Case { .. } => true,
        // CoalesceExpr, NullIfExpr, MinMaxExpr: not among the node types PostgreSQL
        // 15's foreign_expr_walker accepts (a local Filter or projection).
        Func::Coalesce | Func::NullIf | Func::MinMax { .. } => false,
        // ScalarArrayOpExpr with a built-in operator; its array (a Const or an
        // ArrayExpr) ships if its elements do.
        Func::ScalarArrayOp { .. } => true,
        Func::CurrentUser | Func::SessionUser | Func::Random | Func::SetSeed | Func::ToChar => false,
        // PostgreSQL 15's foreign_expr_walker has no case for a BooleanTest (`x IS
        // TRUE`): it is evaluated locally, the scan fetching `x`'s columns.
        Func::BoolTest(_) => false,
        // A hashed SubPlan's table is the coordinator's: it is never sent.
        Func::HashedSubPlan(_) | Func::SubPlan { .. } => false,
        // Not built in: shipped only where its extension is listed (`is_foreign_expr_on`).
        Func::User(_) => false,
    }
}

/// Does `e` call a volatile function (`random()`, a user function declared so)?
/// (`contain_volatile_functions`)
pub fn contains_volatile(e: &Expr) -> bool {
    match e {
        Expr::Col(_) | Expr::Const(_) | Expr::Param(..) | Expr::ExecParam(..) => false,
        Expr::Bin(_, l, r) => contains_volatile(l) || contains_volatile(r),
        Expr::Not(x) | Expr::IsNull(x, _) => contains_volatile(x),
        Expr::Func(Func::User(u), _) if u.volatility == Volatility::Volatile => true,
        Expr::Func(f, args) => matches!(f, Func::Random | Func::SetSeed) || args.iter().any(contains_volatile),
    }
}

/// Is `e` a pseudoconstant qual: no column, no volatile function, and not a constant
/// (constants are folded at planning: `WHERE 1 = 2`)? It then gates the scan.
pub fn is_pseudoconstant(e: &Expr) -> bool {
    fn reads_column(e: &Expr) -> bool {
        let mut any = false;
        e.for_each_col(&mut |_| any = true);
        any
    }
    fn stable_call(e: &Expr) -> bool {
        match e {
            Expr::Col(_) | Expr::Const(_) => false,
            // A generic plan's parameter is not folded at planning: like a stable call,
            // its value is known only when the plan runs.
            Expr::Param(..) | Expr::ExecParam(..) => true,
            Expr::Bin(_, l, r) => stable_call(l) || stable_call(r),
            Expr::Not(x) | Expr::IsNull(x, _) => stable_call(x),
            Expr::Func(Func::User(u), _) if u.volatility == Volatility::Stable => true,
            Expr::Func(f, args) => matches!(f, Func::CurrentUser | Func::SessionUser) || args.iter().any(stable_call),
        }
    }
    !reads_column(e) && !contains_volatile(e) && stable_call(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::BinOp;
    use crate::types::Datum;

    fn text(s: &str) -> Expr {
        Expr::Const(Datum::text(s))
    }

    #[test]
    fn built_in_immutable_text_functions_ship_stable_ones_do_not() {
        let like = Expr::func(Func::Like { negated: true, ilike: false }, vec![Expr::Col(0), text("n1%")]);
        assert!(is_foreign_expr(&like));
        let cat = Expr::func(Func::TextCat, vec![Expr::Col(0), text("x")]);
        assert!(is_foreign_expr(&Expr::bin(BinOp::Eq, cat, text("c1x"))));
        let lower = Expr::func(Func::Lower, vec![Expr::Col(1)]);
        assert!(is_foreign_expr(&Expr::bin(BinOp::Eq, lower, text("c3"))));
        // text || int: the int goes through its output function.
        let as_text = Expr::func(
            Func::Cast { from: Some(SqlType::Int8), to: SqlType::Text, implicit: false },
            vec![Expr::Col(0)],
        );
        let anycat = Expr::func(Func::TextCat, vec![Expr::Col(1), as_text]);
        assert!(!is_foreign_expr(&Expr::bin(BinOp::Eq, anycat, text("c11"))));
        let user = Expr::bin(BinOp::Eq, Expr::Col(1), Expr::func(Func::CurrentUser, vec![]));
        assert!(!is_foreign_expr(&user));
        // text::int reads the text with int4in (CoerceViaIO): kept local; a number's
        // cast to another number is a cast function: shipped.
        let text_to_int =
            |from| Expr::func(Func::Cast { from: Some(from), to: SqlType::Int4, implicit: false }, vec![Expr::Col(1)]);
        assert!(!is_foreign_expr(&Expr::bin(BinOp::Gt, text_to_int(SqlType::Text), Expr::int(3))));
        assert!(is_foreign_expr(&Expr::bin(BinOp::Gt, text_to_int(SqlType::Numeric), Expr::int(3))));
        // An IN list ships when its elements do.
        let saop = |elem: Expr| {
            Expr::func(
                Func::ScalarArrayOp { op: BinOp::Eq, use_or: true, elem: SqlType::Text },
                vec![Expr::Col(1), text("a"), elem],
            )
        };
        assert!(is_foreign_expr(&saop(text("b"))));
        assert!(!is_foreign_expr(&saop(Expr::func(Func::CurrentUser, vec![]))));
    }

    #[test]
    fn a_stable_qual_without_columns_is_a_pseudoconstant() {
        let users = Expr::bin(BinOp::Eq, Expr::func(Func::CurrentUser, vec![]), Expr::func(Func::SessionUser, vec![]));
        assert!(is_pseudoconstant(&users));
        // Reads a column: a plain qual.
        assert!(!is_pseudoconstant(&Expr::bin(BinOp::Eq, Expr::Col(0), Expr::func(Func::CurrentUser, vec![]))));
        // A constant is folded, not gated; a volatile call is evaluated per row.
        assert!(!is_pseudoconstant(&Expr::bin(BinOp::Eq, Expr::int(1), Expr::int(2))));
        let random = Expr::bin(BinOp::Lt, Expr::func(Func::Random, vec![]), Expr::int(1));
        assert!(!is_pseudoconstant(&random));
    }

    /// PostgreSQL 15's walker: a CASE ships (searched or simple), COALESCE, NULLIF
    /// and GREATEST do not; a CASE of text constants compared with a text constant
    /// has no collation from a column and stays local, one with a text column ships.
    #[test]
    fn case_ships_coalesce_does_not_and_a_constant_text_case_stays_local() {
        let searched = |then: Expr| {
            let cond = Expr::bin(BinOp::Gt, Expr::Col(1), Expr::int(5));
            Expr::func(Func::Case { simple: false }, vec![cond, then, text("small")])
        };
        let numbers = Expr::func(
            Func::Case { simple: false },
            vec![Expr::bin(BinOp::Gt, Expr::Col(1), Expr::int(5)), Expr::int(1), Expr::int(0)],
        );
        assert!(is_foreign_expr(&Expr::bin(BinOp::Eq, numbers, Expr::int(1))));
        let simple = Expr::func(
            Func::Case { simple: true },
            vec![
                Expr::Col(1),
                Expr::bin(BinOp::Eq, Expr::Col(1), Expr::int(3)),
                Expr::Const(Datum::Bool(true)),
                Expr::Const(Datum::Bool(false)),
            ],
        );
        assert!(is_foreign_expr(&simple));
        assert!(!is_foreign_expr(&Expr::bin(BinOp::Eq, searched(text("big")), text("big"))));
        assert!(is_foreign_expr(&Expr::bin(BinOp::Eq, searched(Expr::Col(0)), text("big"))));
        for f in [Func::Coalesce, Func::NullIf, Func::MinMax { greatest: true }] {
            let call = Expr::func(f, vec![Expr::Col(1), Expr::int(0)]);
            assert!(!is_foreign_expr(&Expr::bin(BinOp::Gt, call, Expr::int(3))));
        }
        let round = Expr::func(Func::Round, vec![Expr::Col(2), Expr::int(0)]);
        assert!(is_foreign_expr(&Expr::bin(BinOp::Gt, round, Expr::int(3))));
    }
}
