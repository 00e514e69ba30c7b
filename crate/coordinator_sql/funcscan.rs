//! `generate_series(start, stop [, step])` in FROM, planned as PostgreSQL 15 plans a
//! set-returning function there: a Function Scan (`Function Scan on
//! pg_catalog.generate_series`, nodeFunctionscan.c), under the query's filter,
//! aggregate, sort and select list as over any relation.
//!
//! Invariants:
//! - the arguments are integer constants (PostgreSQL's `generate_series(int4, int4,
//!   int4)` with constant arguments; anything else is refused by name), evaluated at
//!   planning; a zero step is PostgreSQL's error;
//! - the one column is named as PostgreSQL names it: the alias's column alias, else
//!   the table alias (a function returning a scalar names its column after it), else
//!   `generate_series`;
//! - a series longer than [`MAX_SERIES_ROWS`] is refused before it runs: the sandbox
//!   bounds what a query can make (the inserts' own limits are in `catalog.rs`).

use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, TableFactor};
use sqlparser::tokenizer::Location;

use super::catalog::ident;
use super::planner::Planned;
use super::FrontError;
use crate::plan::Plan;
use crate::types::Column;

/// The most rows one generate_series in a query may return here.
pub const MAX_SERIES_ROWS: i64 = 1_000_000;

/// The Function Scan of `f` (a FROM item `generate_series(…) [alias]`), and the name
/// the query refers to it by.
pub(super) fn plan_function_scan(f: &TableFactor, at: Location) -> Result<(String, Planned), FrontError> {
    let TableFactor::Table { name, alias, args: Some(args), with_ordinality, .. } = f else {
        return Err(FrontError::at("internal error: not a function in FROM", at));
    };
    let fname = name.0.iter().map(ident).collect::<Vec<_>>();
    let is_series = matches!(fname.as_slice(), [n] if n == "generate_series")
        || matches!(fname.as_slice(), [s, n] if s == "pg_catalog" && n == "generate_series");
    if !is_series {
        return Err(FrontError::unsupported(format!("the function {name}() in FROM (only generate_series)"), at));
    }
    if *with_ordinality {
        return Err(FrontError::unsupported("WITH ORDINALITY", at));
    }
    let values: Vec<i64> = args.args.iter().map(|a| integer_arg(a, at)).collect::<Result<_, _>>()?;
    let (start, stop, step) = match values.as_slice() {
        [a, b] => (*a, *b, 1),
        [a, b, c] => (*a, *b, *c),
        _ => {
            return Err(FrontError::at(
                format!("function generate_series with {} arguments does not exist", values.len()),
                at,
            ))
        }
    };
    if step == 0 {
        return Err(FrontError::at("step size cannot equal zero", at));
    }
    let rows = series_len(start, stop, step);
    if rows > MAX_SERIES_ROWS {
        return Err(FrontError::at(
            format!("generate_series of {rows} rows: more than the sandbox's {MAX_SERIES_ROWS} in a query"),
            at,
        ));
    }
    let table_alias = alias.as_ref().map(|a| ident(&a.name));
    let column = alias
        .as_ref()
        .and_then(|a| a.columns.first())
        .map(|c| ident(&c.name))
        .or_else(|| table_alias.clone())
        .unwrap_or_else(|| "generate_series".to_string());
    let refname = table_alias.clone().unwrap_or_else(|| "generate_series".to_string());
    // generate_series(int4, int4[, int4]) is int4's; a bigint bound makes it int8's.
    let int4 = [start, stop, step].iter().all(|v| i32::try_from(*v).is_ok());
    let ty = if int4 { crate::plan::SqlType::Int4 } else { crate::plan::SqlType::Int8 };
    let plan = Plan::FunctionScan { alias: table_alias, column: Column::typed(&column, ty), start, stop, step };
    let columns = plan.output_columns();
    Ok((refname, Planned { plan, columns, servers: vec![], order_key: None, order_keys: vec![] }))
}

/// How many values `generate_series(start, stop, step)` returns (step ≠ 0).
pub fn series_len(start: i64, stop: i64, step: i64) -> i64 {
    let span = i128::from(stop) - i128::from(start);
    if (span < 0 && step > 0) || (span > 0 && step < 0) {
        return 0;
    }
    (span / i128::from(step) + 1).min(i128::from(i64::MAX)) as i64
}

/// An argument: an integer literal, optionally negated.
fn integer_arg(a: &FunctionArg, at: Location) -> Result<i64, FrontError> {
    let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = a else {
        return Err(FrontError::unsupported("this generate_series argument", at));
    };
    let (negative, e) = match e {
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Minus, expr } => (true, expr.as_ref()),
        e => (false, e),
    };
    match e {
        ast::Expr::Value(ast::Value::Number(n, _)) => {
            let v: i64 =
                n.parse().map_err(|_| FrontError::unsupported("generate_series over other than integers", at))?;
            i32::try_from(if negative { -v } else { v })
                .map(i64::from)
                .map_err(|_| FrontError::at(format!("value \"{n}\" is out of range for type integer"), at))
        }
        ast::Expr::Value(ast::Value::Null) => {
            Err(FrontError::unsupported("generate_series with a NULL argument (no rows in PostgreSQL)", at))
        }
        _ => Err(FrontError::unsupported("generate_series arguments other than integer constants", at)),
    }
}

#[cfg(test)]
mod tests {
    use super::series_len;

    #[test]
    fn series_lengths_count_both_ends_and_empty_directions() {
        assert_eq!(series_len(1, 10, 3), 4); // 1 4 7 10
        assert_eq!(series_len(10, 1, -2), 5); // 10 8 6 4 2
        assert_eq!(series_len(1, 10, -1), 0);
        assert_eq!(series_len(5, 5, 7), 1);
    }
}
