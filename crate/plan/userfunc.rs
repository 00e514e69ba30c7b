//! A user-defined function or operator over a built-in procedure, as an expression
//! node: `CREATE FUNCTION my_abs(int) … LANGUAGE internal AS 'int4abs'`, or `CREATE
//! OPERATOR === (… PROCEDURE = int4eq)`. PostgreSQL keeps such an object in
//! `pg_proc` / `pg_operator` with an OID of its own (at or above
//! `FirstNormalObjectId`), and its `FuncExpr` / `OpExpr` names that OID; the executor
//! calls the built-in C function (`fmgr_internal_function`).
//!
//! What that changes, and why the node is not simply the built-in one:
//! - EXPLAIN prints the user's name (`(h0.id === 5)`, `my_abs(h0.id)`), as ruleutils.c
//!   prints the operator or function the node names;
//! - postgres_fdw ships it only when its extension is listed in the server's
//!   `extensions` option (shippable.c's `is_shippable`: not built in), and then writes
//!   it schema-qualified (deparse.c: `OPERATOR(public.===)`, `public.my_abs(id)`).
//!
//! Invariants: the node is `Copy` (as [`super::Func`] is), so its name is held inline,
//! at most `NAMEDATALEN - 1` (63) bytes, the length PostgreSQL truncates names to;
//! evaluating it is evaluating [`Proc::call`], the built-in expression of the same
//! arguments.

use super::{BinOp, Expr, Func, SqlType};
use crate::types::ColType;
use serde::{Serialize, Serializer};

/// PostgreSQL's `NAMEDATALEN - 1`: the longest name, in bytes.
pub const MAX_NAME_BYTES: usize = 63;

/// A name held inline (PostgreSQL's `NameData`), truncated as `truncate_identifier`
/// truncates: to 63 bytes, never inside a character.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PgName {
    len: u8,
    bytes: [u8; MAX_NAME_BYTES],
}

impl PgName {
    pub fn new(name: &str) -> PgName {
        let mut end = name.len().min(MAX_NAME_BYTES);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0u8; MAX_NAME_BYTES];
        bytes[..end].copy_from_slice(&name.as_bytes()[..end]);
        PgName { len: end as u8, bytes }
    }
    pub fn as_str(&self) -> &str {
        // Always whole characters of a `str` (cut at a boundary in `new`).
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }
}

impl std::fmt::Debug for PgName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl Serialize for PgName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The built-in procedures a user function or operator may run (`prosrc` of a
/// `LANGUAGE internal` function, an operator's `PROCEDURE`): each is one of the
/// sandbox's own expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Proc {
    /// `int4eq`, `int8lt`, `texteq`, `numeric_add`, `int4pl`, …: a binary operator.
    Bin(BinOp),
    /// `int4abs`, `int8abs`, `numeric_abs`.
    Abs,
    /// `textlen` (`length(text)`).
    Length,
    Upper,
    Lower,
    /// `textcat` (`text || text`).
    TextCat,
}

/// The argument types a procedure takes, by type family (the sandbox's `ColType`:
/// the integer types are one), and whether it returns a boolean.
pub struct ProcSig {
    pub proc: Proc,
    pub args: &'static [ColType],
}

/// PostgreSQL's name of each procedure the sandbox runs (`pg_proc.prosrc` of the
/// built-in), and what it takes.
pub fn builtin_proc(name: &str) -> Option<ProcSig> {
    use ColType::{Int, Numeric, Text};
    let cmp = |suffix: &str| -> Option<BinOp> {
        Some(match suffix {
            "eq" => BinOp::Eq,
            "ne" => BinOp::NotEq,
            "lt" => BinOp::Lt,
            "le" => BinOp::LtEq,
            "gt" => BinOp::Gt,
            "ge" => BinOp::GtEq,
            _ => return None,
        })
    };
    let arith = |suffix: &str| -> Option<BinOp> {
        Some(match suffix {
            "pl" | "add" => BinOp::Plus,
            "mi" | "sub" => BinOp::Minus,
            "mul" => BinOp::Multiply,
            "div" => BinOp::Divide,
            "mod" => BinOp::Modulo,
            _ => return None,
        })
    };
    const INTS: &[ColType] = &[ColType::Int, ColType::Int];
    const NUMS: &[ColType] = &[ColType::Numeric, ColType::Numeric];
    const TEXTS: &[ColType] = &[ColType::Text, ColType::Text];
    let sig = |proc, args| Some(ProcSig { proc, args });
    match name {
        "int4abs" | "int8abs" | "int2abs" => sig(Proc::Abs, &[Int]),
        "numeric_abs" => sig(Proc::Abs, &[Numeric]),
        "textlen" => sig(Proc::Length, &[Text]),
        "upper" => sig(Proc::Upper, &[Text]),
        "lower" => sig(Proc::Lower, &[Text]),
        "textcat" => sig(Proc::TextCat, TEXTS),
        "text_lt" | "text_le" | "text_gt" | "text_ge" => sig(Proc::Bin(cmp(&name[5..])?), TEXTS),
        "texteq" | "textne" => sig(Proc::Bin(cmp(&name[4..])?), TEXTS),
        _ => {
            if let Some(rest) = name.strip_prefix("numeric_") {
                let op = cmp(rest).or_else(|| arith(rest))?;
                return sig(Proc::Bin(op), NUMS);
            }
            let types = [("int2", SqlType::Int2), ("int4", SqlType::Int4), ("int8", SqlType::Int8)];
            let (rest, ty) = types.iter().find_map(|(p, t)| name.strip_prefix(p).map(|r| (r, *t)))?;
            // int4pl checks int4's range, int2mul int2's ([`BinOp::IntNarrow`]).
            let op = cmp(rest).or_else(|| arith(rest).map(|op| op.with_int_result(ty)))?;
            sig(Proc::Bin(op), INTS)
        }
    }
}

impl Proc {
    /// The built-in expression of `args` this procedure computes.
    pub fn call(self, mut args: Vec<Expr>) -> Expr {
        match self {
            Proc::Bin(op) if args.len() == 2 => {
                let r = args.pop().unwrap_or(Expr::Const(crate::types::Datum::Null));
                let l = args.pop().unwrap_or(Expr::Const(crate::types::Datum::Null));
                Expr::bin(op, l, r)
            }
            Proc::Bin(_) => Expr::Const(crate::types::Datum::Null),
            Proc::Abs => Expr::func(Func::Abs, args),
            Proc::Length => Expr::func(Func::Length, args),
            Proc::Upper => Expr::func(Func::Upper, args),
            Proc::Lower => Expr::func(Func::Lower, args),
            Proc::TextCat => Expr::func(Func::TextCat, args),
        }
    }

    /// The result's type family, given the first argument's.
    pub fn col_type(self, arg: Option<ColType>) -> ColType {
        match self {
            Proc::Bin(op) if op.is_comparison() => ColType::Bool,
            Proc::Bin(_) | Proc::Abs => arg.unwrap_or(ColType::Int),
            Proc::Length => ColType::Int,
            Proc::Upper | Proc::Lower | Proc::TextCat => ColType::Text,
        }
    }
}

/// `pg_proc.provolatile`: CREATE FUNCTION's IMMUTABLE, STABLE or VOLATILE (the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Volatility {
    Immutable,
    Stable,
    Volatile,
}

/// A user-defined function or operator in an expression (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct UserFunc {
    /// Its name (without schema: the sandbox has only `public`).
    pub name: PgName,
    pub proc: Proc,
    /// An operator (`a === b`), else a function (`f(a)`).
    pub operator: bool,
    /// `provolatile`: an operator has its procedure's (immutable for the built-ins).
    pub volatility: Volatility,
    /// A member of the extension postgres_fdw (`ALTER EXTENSION postgres_fdw ADD …`):
    /// shipped to a server whose `extensions` lists postgres_fdw.
    pub in_extension: bool,
}

impl UserFunc {
    /// EXPLAIN's text (ruleutils.c: the name unqualified, as `public` is on the
    /// search path): `(a === b)`, `f(a, b)`.
    pub fn sql(&self, args: &[String]) -> String {
        match (self.operator, args) {
            (true, [a, b]) => format!("({a} {} {b})", self.name.as_str()),
            (true, [a]) => format!("({} {a})", self.name.as_str()),
            _ => format!("{}({})", crate::sql_text::quote_identifier(self.name.as_str()), args.join(", ")),
        }
    }

    /// deparse.c's text for the remote query: schema-qualified, as the object is not
    /// in `pg_catalog` (`deparseOperatorName`, `appendFunctionName`).
    pub fn remote_sql(&self, args: &[String]) -> String {
        match (self.operator, args) {
            (true, [a, b]) => format!("({a} OPERATOR(public.{}) {b})", self.name.as_str()),
            (true, [a]) => format!("(OPERATOR(public.{}) {a})", self.name.as_str()),
            _ => format!("public.{}({})", crate::sql_text::quote_identifier(self.name.as_str()), args.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_truncated_to_63_bytes_at_a_character() {
        let long = "é".repeat(40); // 80 bytes
        let n = PgName::new(&long);
        assert_eq!(n.as_str().len(), 62);
        assert_eq!(PgName::new("===").as_str(), "===");
    }

    #[test]
    fn builtin_procedures_by_name() {
        assert_eq!(builtin_proc("int4eq").map(|s| s.proc), Some(Proc::Bin(BinOp::Eq)));
        assert_eq!(builtin_proc("int8pl").map(|s| s.proc), Some(Proc::Bin(BinOp::Plus)));
        let int4pl = BinOp::IntNarrow(super::super::Arith::Plus, SqlType::Int4);
        assert_eq!(builtin_proc("int4pl").map(|s| s.proc), Some(Proc::Bin(int4pl)));
        assert_eq!(builtin_proc("text_lt").map(|s| s.proc), Some(Proc::Bin(BinOp::Lt)));
        assert_eq!(builtin_proc("numeric_abs").map(|s| s.proc), Some(Proc::Abs));
        assert!(builtin_proc("int4frob").is_none());
        let f = UserFunc {
            name: PgName::new("==="),
            proc: Proc::Bin(BinOp::Eq),
            operator: true,
            volatility: Volatility::Immutable,
            in_extension: false,
        };
        assert_eq!(f.sql(&["a".into(), "5".into()]), "(a === 5)");
        assert_eq!(f.remote_sql(&["a".into(), "5".into()]), "(a OPERATOR(public.===) 5)");
    }
}
