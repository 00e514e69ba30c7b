//! Tests of the shard SQL front end (`pgasync::shard_sql`): statement kinds, plan shapes,
//! output columns and error positions. Plans are compared structurally; running
//! them is the executor's business.

use pgasync::plan::{
    AggCall, AggFunc, AggStrategy, BinOp, Expr, Func, Plan, RemoteQuery, RemoteTarget, SortKey, SqlType,
};
use pgasync::shard_sql::{parse_shard_sql, ShardStatement, SqlError};
use pgasync::sql_text::deparse::deparse_remote_query;
use pgasync::types::{Catalog, ColType, Column, Datum, Table};
use wasm_bindgen_test::wasm_bindgen_test;

/// t_p1(a int, b int, c text) and t(a int, b int, s text, f numeric).
fn catalog() -> Catalog {
    let mut cat = Catalog::default();
    cat.add(Table::new(
        "t_p1",
        vec![Column::new("a", ColType::Int), Column::new("b", ColType::Int), Column::new("c", ColType::Text)],
    ));
    cat.add(Table::new(
        "t",
        vec![
            Column::new("a", ColType::Int),
            Column::new("b", ColType::Int),
            Column::new("s", ColType::Text),
            Column::new("f", ColType::Numeric),
        ],
    ));
    cat
}

/// A numeric constant (a decimal literal is numeric, as in PostgreSQL).
fn num(text: &str) -> Expr {
    Expr::Const(Datum::numeric(pgasync::numeric::Numeric::parse(text).unwrap()))
}

/// An integer expression coerced to numeric, as an operator next to a numeric takes it
/// (PostgreSQL's `make_op`).
fn as_numeric(e: Expr) -> Expr {
    Expr::func(Func::Cast { from: Some(SqlType::Int8), to: SqlType::Numeric, implicit: true }, vec![e])
}

fn parse(sql: &str) -> Vec<ShardStatement> {
    parse_shard_sql(sql, &catalog()).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn parse_one(sql: &str) -> ShardStatement {
    let mut v = parse(sql);
    assert_eq!(v.len(), 1, "{sql}");
    v.remove(0)
}

fn select(sql: &str) -> (Plan, Vec<Column>) {
    match parse_one(sql) {
        ShardStatement::Select { plan, columns } => (plan, columns),
        other => panic!("{sql}: not a SELECT: {other:?}"),
    }
}

fn error(sql: &str) -> SqlError {
    match parse_shard_sql(sql, &catalog()) {
        Ok(v) => panic!("{sql}: expected an error, got {v:?}"),
        Err(e) => e,
    }
}

fn scan_t_p1() -> Plan {
    Plan::SeqScan { table: "t_p1".into(), columns: catalog().get("t_p1").unwrap().columns.clone(), alias: None }
}

fn scan_t() -> Plan {
    Plan::SeqScan { table: "t".into(), columns: catalog().get("t").unwrap().columns.clone(), alias: None }
}

fn col(name: &str, ty: ColType) -> Column {
    Column::new(name, ty)
}

fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    Expr::bin(op, l, r)
}

fn text(s: &str) -> Expr {
    Expr::Const(Datum::text(s))
}

fn filter(child: Plan, e: Expr) -> Plan {
    Plan::Result { child: Box::new(child), filter: Some(e), targets: None }
}

fn project(child: Plan, targets: &[(Expr, &str)]) -> Plan {
    let targets = targets.iter().map(|(e, n)| (e.clone(), n.to_string())).collect();
    Plan::Result { child: Box::new(child), filter: None, targets: Some(targets) }
}

// ---------------------------------------------------------------- statements

#[wasm_bindgen_test(unsupported = test)]
fn empty_input_has_no_statements() {
    assert!(parse("").is_empty());
    assert!(parse("  ;; ; ").is_empty());
}

#[wasm_bindgen_test(unsupported = test)]
fn transaction_statements() {
    use ShardStatement::*;
    assert_eq!(parse_one("BEGIN"), Begin);
    assert_eq!(parse_one("begin transaction"), Begin);
    assert_eq!(parse_one("START TRANSACTION ISOLATION LEVEL REPEATABLE READ"), Begin);
    assert_eq!(parse_one("START TRANSACTION ISOLATION LEVEL SERIALIZABLE"), Begin);
    assert_eq!(parse_one("COMMIT"), Commit);
    assert_eq!(parse_one("COMMIT TRANSACTION"), Commit);
    assert_eq!(parse_one("END"), Commit);
    assert_eq!(parse_one("ROLLBACK"), Rollback);
    assert_eq!(parse_one("ABORT"), Rollback);
    assert_eq!(parse_one("abort transaction"), Rollback);
}

#[wasm_bindgen_test(unsupported = test)]
fn set_statements_are_accepted() {
    for sql in [
        "SET search_path = pg_catalog",
        "SET timezone TO 'UTC'",
        "SET datestyle = ISO",
        "SET intervalstyle = postgres",
        "SET extra_float_digits = 3",
        "SET TIME ZONE 'UTC'",
        "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    ] {
        assert_eq!(parse_one(sql), ShardStatement::Set, "{sql}");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn declare_cursor() {
    let ShardStatement::DeclareCursor { name, plan, columns, for_update } =
        parse_one("DECLARE c1 CURSOR FOR SELECT a, b FROM t_p1 WHERE a > 5")
    else {
        panic!("not a DECLARE")
    };
    assert_eq!(name, "c1");
    assert_eq!(for_update, None);
    let expected = project(
        filter(scan_t_p1(), bin(BinOp::Gt, Expr::col(0), Expr::int(5))),
        &[(Expr::col(0), "a"), (Expr::col(1), "b")],
    );
    assert_eq!(plan, expected);
    assert_eq!(columns, vec![col("a", ColType::Int), col("b", ColType::Int)]);
}

/// postgres_fdw's scan for a foreign modify: `…, ctid … FOR UPDATE` reads the table
/// with its rows' ctid as a last text column; other locking clauses are refused.
#[wasm_bindgen_test(unsupported = test)]
fn declare_cursor_for_update_reads_ctid() {
    let ShardStatement::DeclareCursor { columns, for_update, .. } =
        parse_one("DECLARE c3 CURSOR FOR SELECT a, ctid FROM public.t_p1 WHERE ((a > 5)) FOR UPDATE")
    else {
        panic!("not a DECLARE")
    };
    assert_eq!(for_update.as_deref(), Some("t_p1"));
    assert_eq!(columns, vec![col("a", ColType::Int), col("ctid", ColType::Text)]);
    let e = parse_shard_sql("DECLARE c4 CURSOR FOR SELECT a FROM t_p1 FOR SHARE", &catalog()).unwrap_err();
    assert!(e.message.contains("FOR SHARE"), "{e}");
}

#[wasm_bindgen_test(unsupported = test)]
fn declare_cursor_variants() {
    for sql in [
        "DECLARE C2 NO SCROLL CURSOR FOR SELECT * FROM t_p1",
        "DECLARE c2 CURSOR WITH HOLD FOR SELECT * FROM t_p1",
        "DECLARE c2 SCROLL CURSOR WITHOUT HOLD FOR SELECT * FROM t_p1",
    ] {
        let ShardStatement::DeclareCursor { name, plan, columns, for_update } = parse_one(sql) else {
            panic!("{sql}: not a DECLARE")
        };
        assert_eq!(name, "c2", "{sql}");
        assert_eq!(for_update, None, "{sql}");
        // SELECT * needs no projection.
        assert_eq!(plan, scan_t_p1(), "{sql}");
        assert_eq!(columns, catalog().get("t_p1").unwrap().columns, "{sql}");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn fetch_statements() {
    let fetch = |sql: &str| match parse_one(sql) {
        ShardStatement::Fetch { cursor, count } => (cursor, count),
        other => panic!("{sql}: {other:?}"),
    };
    assert_eq!(fetch("FETCH 100 FROM c1"), ("c1".to_string(), Some(100)));
    assert_eq!(fetch("FETCH FORWARD 100 FROM c1"), ("c1".to_string(), Some(100)));
    assert_eq!(fetch("FETCH ALL FROM c1"), ("c1".to_string(), None));
    assert_eq!(fetch("FETCH FORWARD ALL IN c1"), ("c1".to_string(), None));
    assert_eq!(fetch("FETCH NEXT FROM C1"), ("c1".to_string(), Some(1)));
    assert_eq!(fetch("fetch 5 from \"MyCursor\""), ("MyCursor".to_string(), Some(5)));
    let e = error("FETCH BACKWARD 10 FROM c1");
    assert!(e.message.starts_with("unsupported in a shard query: FETCH BACKWARD"), "{e}");
    assert_eq!(e.position, Some(1));
}

#[wasm_bindgen_test(unsupported = test)]
fn close_statement() {
    assert_eq!(parse_one("CLOSE c1"), ShardStatement::Close { cursor: "c1".into() });
    assert!(error("CLOSE ALL").message.contains("CLOSE ALL"));
}

#[wasm_bindgen_test(unsupported = test)]
fn multi_statement_string() {
    let v = parse(
        "START TRANSACTION ISOLATION LEVEL REPEATABLE READ; \
         DECLARE c1 CURSOR FOR SELECT a FROM t_p1;FETCH 100 FROM c1; CLOSE c1; COMMIT;",
    );
    assert_eq!(v.len(), 5);
    assert_eq!(v[0], ShardStatement::Begin);
    assert!(matches!(&v[1], ShardStatement::DeclareCursor { name, .. } if name == "c1"));
    assert_eq!(v[2], ShardStatement::Fetch { cursor: "c1".into(), count: Some(100) });
    assert_eq!(v[3], ShardStatement::Close { cursor: "c1".into() });
    assert_eq!(v[4], ShardStatement::Commit);
}

#[wasm_bindgen_test(unsupported = test)]
fn statements_need_separators() {
    let e = error("BEGIN COMMIT");
    assert_eq!(e.message, "syntax error at or near \"COMMIT\"");
    assert_eq!(e.position, Some(7));
}

// ---------------------------------------------------------------- SELECT plans

#[wasm_bindgen_test(unsupported = test)]
fn filter_sort_limit_plan_shape() {
    let (plan, columns) = select("SELECT a FROM t_p1 WHERE (a > 5) AND (b < 10) ORDER BY a DESC LIMIT 7");
    let cond = bin(BinOp::And, bin(BinOp::Gt, Expr::col(0), Expr::int(5)), bin(BinOp::Lt, Expr::col(1), Expr::int(10)));
    let sorted = Plan::Sort { child: Box::new(filter(scan_t_p1(), cond)), keys: vec![SortKey::desc(0)] };
    let expected = Plan::Limit { child: Box::new(project(sorted, &[(Expr::col(0), "a")])), offset: 0, count: Some(7) };
    assert_eq!(plan, expected);
    assert_eq!(columns, vec![col("a", ColType::Int)]);
    assert_eq!(plan.output_columns(), columns);
}

#[wasm_bindgen_test(unsupported = test)]
fn select_star_is_a_bare_scan() {
    let (plan, columns) = select("SELECT * FROM t_p1");
    assert_eq!(plan, scan_t_p1());
    assert_eq!(columns, catalog().get("t_p1").unwrap().columns);
}

#[wasm_bindgen_test(unsupported = test)]
fn group_by_with_count() {
    let (plan, columns) = select("SELECT a, count(*) FROM t GROUP BY a");
    // The select list is exactly the Agg's output, so no projection is added.
    let expected = Plan::Agg {
        child: Box::new(scan_t()),
        strategy: AggStrategy::Hashed,
        group_by: vec![Expr::col(0)],
        aggs: vec![AggCall { func: AggFunc::CountStar, arg: None, distinct: false }],
        split: pgasync::plan::AggSplit::Simple,
    };
    assert_eq!(plan, expected);
    assert_eq!(columns, vec![col("a", ColType::Int), col("count", ColType::Int)]);
}

#[wasm_bindgen_test(unsupported = test)]
fn plain_aggregate() {
    let (plan, columns) = select("SELECT sum(a) FROM t");
    let expected = Plan::Agg {
        child: Box::new(scan_t()),
        strategy: AggStrategy::Plain,
        group_by: vec![],
        aggs: vec![AggCall { func: AggFunc::Sum, arg: Some(Expr::col(0)), distinct: false }],
        split: pgasync::plan::AggSplit::Simple,
    };
    assert_eq!(plan, expected);
    assert_eq!(columns, vec![col("sum", ColType::Int)]);
}

#[wasm_bindgen_test(unsupported = test)]
fn aggregates_with_projection_having_and_order() {
    let (plan, columns) = select(
        "SELECT count(b) AS n, a, avg(f), sum(a) + 1 FROM t WHERE s <> 'x' \
         GROUP BY a HAVING max(b) > 3 ORDER BY 1 DESC, a OFFSET 2",
    );
    let agg = Plan::Agg {
        child: Box::new(filter(scan_t(), bin(BinOp::NotEq, Expr::col(2), text("x")))),
        strategy: AggStrategy::Hashed,
        group_by: vec![Expr::col(0)],
        aggs: vec![
            AggCall { func: AggFunc::Count, arg: Some(Expr::col(1)), distinct: false },
            AggCall { func: AggFunc::Avg, arg: Some(Expr::col(3)), distinct: false },
            AggCall { func: AggFunc::Sum, arg: Some(Expr::col(0)), distinct: false },
            AggCall { func: AggFunc::Max, arg: Some(Expr::col(1)), distinct: false },
        ],
        split: pgasync::plan::AggSplit::Simple,
    };
    let having = filter(agg, bin(BinOp::Gt, Expr::col(4), Expr::int(3)));
    let sorted = Plan::Sort { child: Box::new(having), keys: vec![SortKey::desc(1), SortKey::asc(0)] };
    let projected = project(
        sorted,
        &[
            (Expr::col(1), "n"),
            (Expr::col(0), "a"),
            (Expr::col(2), "avg"),
            (bin(BinOp::Plus, Expr::col(3), Expr::int(1)), "?column?"),
        ],
    );
    assert_eq!(plan, Plan::Limit { child: Box::new(projected), offset: 2, count: None });
    assert_eq!(
        columns,
        vec![
            col("n", ColType::Int),
            col("a", ColType::Int),
            col("avg", ColType::Numeric),
            col("?column?", ColType::Int)
        ]
    );
}

#[wasm_bindgen_test(unsupported = test)]
fn group_by_expression_and_ordinal() {
    let (plan, columns) = select("SELECT a % 3 AS k, count(*) FROM t GROUP BY 1 ORDER BY k");
    let key = bin(BinOp::Modulo, Expr::col(0), Expr::int(3));
    let agg = Plan::Agg {
        child: Box::new(scan_t()),
        strategy: AggStrategy::Hashed,
        group_by: vec![key],
        aggs: vec![AggCall { func: AggFunc::CountStar, arg: None, distinct: false }],
        split: pgasync::plan::AggSplit::Simple,
    };
    let sorted = Plan::Sort { child: Box::new(agg), keys: vec![SortKey::asc(0)] };
    assert_eq!(plan, project(sorted, &[(Expr::col(0), "k"), (Expr::col(1), "count")]));
    assert_eq!(columns, vec![col("k", ColType::Int), col("count", ColType::Int)]);

    // The same key written out again in the select list is read from the Agg.
    let (plan2, _) = select("SELECT a % 3, count(*) FROM t GROUP BY a % 3");
    assert!(matches!(plan2, Plan::Agg { .. }), "{plan2:?}");
}

#[wasm_bindgen_test(unsupported = test)]
fn order_by_expression_not_in_select_list() {
    let (plan, columns) = select("SELECT s FROM t ORDER BY a + b, f ASC NULLS LAST OFFSET 1 LIMIT 3");
    let sorted = Plan::Sort {
        child: Box::new(scan_t()),
        keys: vec![SortKey { expr: bin(BinOp::Plus, Expr::col(0), Expr::col(1)), desc: false }, SortKey::asc(3)],
    };
    let expected = Plan::Limit { child: Box::new(project(sorted, &[(Expr::col(2), "s")])), offset: 1, count: Some(3) };
    assert_eq!(plan, expected);
    assert_eq!(columns, vec![col("s", ColType::Text)]);
}

#[wasm_bindgen_test(unsupported = test)]
fn expressions() {
    let (plan, _) = select(
        "SELECT x0.a FROM public.t AS x0 WHERE x0.b BETWEEN -2 AND 2.5 AND s IN ('p', 'q') \
         AND NOT (f IS NULL) AND s IS NOT NULL AND a::int = '7'::integer AND TRUE AND b != -a",
    );
    let Plan::Result { child, targets: Some(targets), .. } = plan else { panic!("{plan:?}") };
    assert_eq!(targets, vec![(Expr::col(0), "a".to_string())]);
    let Plan::Result { filter: Some(cond), .. } = *child else { panic!() };
    let between = bin(
        BinOp::And,
        bin(BinOp::GtEq, Expr::col(1), Expr::int(-2)),
        bin(BinOp::LtEq, as_numeric(Expr::col(1)), num("2.5")),
    );
    // An IN list of constants is one `s = ANY ('{p,q}'::text[])` (transformAExprIn).
    let in_list = Expr::func(
        Func::ScalarArrayOp { op: BinOp::Eq, use_or: true, elem: SqlType::Text },
        vec![Expr::col(2), text("p"), text("q")],
    );
    // `NOT (x IS NULL)` is `x IS NOT NULL` (negate_clause).
    let not_null = Expr::IsNull(Box::new(Expr::col(3)), true);
    let is_not_null = Expr::IsNull(Box::new(Expr::col(2)), true);
    let cast = bin(BinOp::Eq, Expr::col(0), Expr::int(7));
    // `-a`: the prefix operator (int8um for a column of no known width), `(- a)`.
    let ne = bin(BinOp::NotEq, Expr::col(1), Expr::func(Func::Neg, vec![Expr::col(0)]));
    let mut expected = between;
    for e in [in_list, not_null, is_not_null, cast, Expr::Const(Datum::Bool(true)), ne] {
        expected = bin(BinOp::And, expected, e);
    }
    assert_eq!(cond, expected);
}

/// The WHERE condition of `SELECT a FROM t WHERE …` as EXPLAIN writes it.
fn where_text(cond: &str) -> String {
    let (plan, _) = select(&format!("SELECT * FROM t WHERE {cond}"));
    let Plan::Result { filter: Some(e), .. } = plan else { panic!("{cond}: {plan:?}") };
    let names: Vec<String> = ["a", "b", "s", "f"].iter().map(|n| n.to_string()).collect();
    e.to_sql(&names)
}

/// `IN (list)` as transformAExprIn analyses it: two or more items that read no column
/// make one ScalarArrayOpExpr of their common type, the others (or a lone item) stay
/// comparisons; NOT IN is `<> ALL`; `= ANY (ARRAY[…])` and an array literal are read
/// as the same node, and `NOT (x = ANY …)` is `x <> ALL …` (negate_clause).
#[wasm_bindgen_test(unsupported = test)]
fn in_lists_are_scalar_array_ops() {
    assert_eq!(where_text("a IN (1, 2)"), "(a = ANY ('{1,2}'::integer[]))");
    assert_eq!(where_text("a IN (5)"), "(a = 5)");
    assert_eq!(where_text("a IN (1, b, 2)"), "((a = ANY ('{1,2}'::integer[])) OR (a = b))");
    assert_eq!(where_text("a IN (b, 2)"), "((a = b) OR (a = 2))");
    assert_eq!(where_text("a NOT IN (1, 2)"), "(a <> ALL ('{1,2}'::integer[]))");
    assert_eq!(where_text("NOT (a IN (1, 2))"), "(a <> ALL ('{1,2}'::integer[]))");
    assert_eq!(where_text("s IN ('x', 'it''s', NULL)"), "(s = ANY ('{x,it''s,NULL}'::text[]))");
    assert_eq!(where_text("a IN (1, 2.5)"), "((a)::numeric = ANY ('{1,2.5}'::numeric[]))");
    assert_eq!(where_text("a IN (1, 5000000000)"), "(a = ANY ('{1,5000000000}'::bigint[]))");
    assert_eq!(where_text("a = ANY (ARRAY[1, 2])"), "(a = ANY ('{1,2}'::integer[]))");
    assert_eq!(where_text("a > ALL ('{1, 2}'::int[])"), "(a > ALL ('{1,2}'::integer[]))");
    assert_eq!(where_text("s = ANY ('{\"a b\",c}'::text[])"), "(s = ANY ('{\"a b\",c}'::text[]))");
    assert_eq!(where_text("a = ANY (ARRAY[$1::integer, $2::integer])"), "(a = ANY (ARRAY[$$1, $$2]))");
    assert_error("SELECT a FROM t WHERE s IN (1, 2)", "IN types text and integer cannot be matched", Some(23));
    assert_error("SELECT a FROM t WHERE a = ANY ('{1,{2}}'::int[])", "malformed array literal: \"{1,{2}}\"", Some(23));
}

#[wasm_bindgen_test(unsupported = test)]
fn literals_and_arithmetic_in_targets() {
    let (_, columns) = select("SELECT a * 2 + 1, f / 2, 'x' AS label, NULL, 1.5, a, -9223372036854775808 FROM t");
    let types: Vec<ColType> = columns.iter().map(|c| c.ty).collect();
    assert_eq!(
        types,
        // The NULL is a text (resolveTargetListUnknowns).
        vec![
            ColType::Int,
            ColType::Numeric,
            ColType::Text,
            ColType::Text,
            ColType::Numeric,
            ColType::Int,
            ColType::Int
        ]
    );
    assert_eq!(columns[2].name, "label");
    assert_eq!(columns[3].name, "?column?");
}

#[wasm_bindgen_test(unsupported = test)]
fn quoted_and_folded_identifiers() {
    let (plan, columns) = select("SELECT A, \"b\" AS \"Bee\" FROM T_P1 WHERE C = 'z'");
    assert_eq!(columns, vec![col("a", ColType::Int), col("Bee", ColType::Int)]);
    assert_eq!(
        plan,
        project(
            filter(scan_t_p1(), bin(BinOp::Eq, Expr::col(2), text("z"))),
            &[(Expr::col(0), "a"), (Expr::col(1), "Bee")]
        )
    );
}

/// Whatever our own postgres_fdw-style deparser sends, a shard must be able to plan.
#[wasm_bindgen_test(unsupported = test)]
fn deparsed_remote_queries_round_trip() {
    let columns = catalog().get("t").unwrap().columns.clone();
    let mut q = RemoteQuery::scan("t", columns.clone(), &[0, 2]);
    q.quals = vec![
        bin(BinOp::Gt, Expr::col(0), Expr::int(-5)),
        Expr::IsNull(Box::new(Expr::col(3)), true),
        bin(BinOp::Eq, Expr::col(2), text("it's")),
        Expr::Not(Box::new(bin(BinOp::LtEq, Expr::col(3), num("1.0")))),
        // An IN list: `(a = ANY ('{1,NULL,3}'::integer[]))`, `(s <> ALL ('{"x y",z}'::text[]))`.
        Expr::func(
            Func::ScalarArrayOp { op: BinOp::Eq, use_or: true, elem: SqlType::Int4 },
            vec![Expr::col(0), Expr::int(1), Expr::Const(Datum::Null), Expr::int(3)],
        ),
        Expr::func(
            Func::ScalarArrayOp { op: BinOp::NotEq, use_or: false, elem: SqlType::Text },
            vec![Expr::col(2), text("x y"), text("z")],
        ),
    ];
    q.order_by = vec![SortKey::desc(1), SortKey::asc(0)];
    q.limit = Some(10);
    let sql = deparse_remote_query(&q);
    assert!(sql.contains(r#"((a = ANY ('{1,NULL,3}'::integer[]))) AND ((s <> ALL ('{"x y",z}'::text[])))"#), "{sql}");
    let (plan, out) = select(&sql);
    assert_eq!(out, vec![col("a", ColType::Int), col("s", ColType::Text)]);
    // The shard simplifies the NOT as PostgreSQL's planner does (`f > 1.0`), and reads
    // the arrays back as the same ScalarArrayOpExprs.
    let mut quals = q.quals.clone();
    quals[3] = bin(BinOp::Gt, Expr::col(3), num("1.0"));
    let cond = quals.into_iter().reduce(|l, r| bin(BinOp::And, l, r)).unwrap();
    let sorted = Plan::Sort { child: Box::new(filter(scan_t(), cond)), keys: q.order_by.clone() };
    let expected = Plan::Limit {
        child: Box::new(project(sorted, &[(Expr::col(0), "a"), (Expr::col(2), "s")])),
        offset: 0,
        count: Some(10),
    };
    assert_eq!(plan, expected, "{sql}");

    let mut agg = RemoteQuery::scan("t", columns, &[]);
    agg.targets = vec![
        RemoteTarget::Col(1),
        RemoteTarget::Agg(AggFunc::CountStar, None, false),
        RemoteTarget::Agg(AggFunc::Sum, Some(0), false),
        RemoteTarget::Agg(AggFunc::Avg, Some(3), false),
    ];
    agg.group_by = vec![1];
    // An aggregated query's HAVING and ORDER BY are over its targets: b, count(*), …
    agg.having = vec![bin(BinOp::Gt, Expr::col(1), Expr::int(1))];
    agg.order_by = vec![SortKey::asc(0), SortKey::desc(1)];
    agg.limit = Some(3);
    agg.offset = Some(2);
    let sql = deparse_remote_query(&agg);
    assert!(sql.ends_with("GROUP BY 1 HAVING ((count(*) > 1)) ORDER BY b ASC NULLS LAST, count(*) DESC NULLS FIRST LIMIT 3::bigint OFFSET 2::bigint"), "{sql}");
    let (plan, out) = select(&sql);
    assert_eq!(out, agg.output_columns(), "{sql}");
    let grouped = Plan::Agg {
        child: Box::new(scan_t()),
        strategy: AggStrategy::Hashed,
        group_by: vec![Expr::col(1)],
        aggs: vec![
            AggCall { func: AggFunc::CountStar, arg: None, distinct: false },
            AggCall { func: AggFunc::Sum, arg: Some(Expr::col(0)), distinct: false },
            AggCall { func: AggFunc::Avg, arg: Some(Expr::col(3)), distinct: false },
        ],
        split: pgasync::plan::AggSplit::Simple,
    };
    let expected = Plan::Limit {
        child: Box::new(Plan::Sort {
            child: Box::new(filter(grouped, bin(BinOp::Gt, Expr::col(1), Expr::int(1)))),
            keys: vec![SortKey::asc(0), SortKey::desc(1)],
        }),
        offset: 2,
        count: Some(3),
    };
    assert_eq!(plan, expected, "{sql}");
}

// ---------------------------------------------------------------- errors

fn assert_error(sql: &str, message: &str, position: Option<usize>) {
    let e = error(sql);
    assert_eq!((e.message.as_str(), e.position), (message, position), "{sql}");
}

#[wasm_bindgen_test(unsupported = test)]
fn unknown_table() {
    assert_error("SELECT a FROM nosuch", "relation \"nosuch\" does not exist", Some(15));
    assert_error("SELECT a FROM other.t", "relation \"other.t\" does not exist", Some(15));
    let e = error("SELECT a FROM nosuch");
    assert_eq!(e.to_string(), "relation \"nosuch\" does not exist (position 15)");
}

#[wasm_bindgen_test(unsupported = test)]
fn unknown_column() {
    assert_error("SELECT x FROM t", "column \"x\" does not exist", Some(8));
    assert_error("SELECT a FROM t WHERE t.zz = 1", "column t.zz does not exist", Some(23));
    assert_error("SELECT a FROM t ORDER BY nope", "column \"nope\" does not exist", Some(26));
    assert_error("SELECT u.a FROM t", "missing FROM-clause entry for table \"u\"", Some(8));
    // With an alias the table's own name is hidden, as in PostgreSQL.
    assert_error("SELECT t.a FROM t x", "missing FROM-clause entry for table \"t\"", Some(8));
}

/// An aggregate called with more arguments than it takes is named with their count,
/// as the other calls with too many arguments (not printed back by sqlparser).
#[wasm_bindgen_test(unsupported = test)]
fn an_aggregate_with_two_arguments() {
    let e = error("SELECT sum(a, a) FROM t");
    assert_eq!(e.message, "function sum with 2 arguments does not exist", "{e:?}");
}

#[wasm_bindgen_test(unsupported = test)]
fn positions_count_characters_across_lines_and_statements() {
    assert_error("SELECT a\nFROM t\nWHERE zz = 1", "column \"zz\" does not exist", Some(23));
    assert_error("SELECT a FROM t; SELECT é, zz FROM t", "column \"é\" does not exist", Some(25));
    assert_error("SELECT 'é', zz FROM t", "column \"zz\" does not exist", Some(13));
}

#[wasm_bindgen_test(unsupported = test)]
fn syntax_errors() {
    assert_error("SELECT * FRM t", "syntax error at or near \"FRM\"", Some(10));
    assert_error("SELECT a FROM", "syntax error at end of input", Some(14));
    let e = error("SELECT * FRM t");
    assert_eq!(e.to_string(), "syntax error at or near \"FRM\" (position 10)");
    let e = error("SELECT 'abc FROM t");
    assert!(e.message.starts_with("syntax error"), "{e}");
    assert!(e.position.is_some(), "{e}");
}

#[wasm_bindgen_test(unsupported = test)]
fn grouping_errors() {
    assert_error(
        "SELECT b, count(*) FROM t GROUP BY a",
        "column \"b\" must appear in the GROUP BY clause or be used in an aggregate function",
        Some(8),
    );
    assert_error(
        "SELECT *, count(*) FROM t_p1 GROUP BY a",
        "column \"b\" must appear in the GROUP BY clause or be used in an aggregate function",
        Some(8),
    );
    assert_error("SELECT a FROM t WHERE sum(a) > 1", "aggregate functions are not allowed in WHERE", Some(23));
    assert_error(
        "SELECT count(*) FROM t GROUP BY count(*)",
        "aggregate functions are not allowed in GROUP BY",
        Some(33),
    );
    assert_error(
        "SELECT sum(max(a)) FROM t",
        "aggregate function calls cannot contain aggregate function calls",
        Some(12),
    );
    assert_error("SELECT sum(s) FROM t", "function sum(text) does not exist", Some(8));
    assert_error("SELECT a FROM t ORDER BY 3", "ORDER BY position 3 is not in select list", None);
}

#[wasm_bindgen_test(unsupported = test)]
fn unsupported_constructs() {
    let cases: &[(&str, &str, Option<usize>)] = &[
        ("SELECT a FROM t JOIN t_p1 ON t.a = t_p1.a", "JOIN", Some(17)),
        ("SELECT a FROM t LEFT JOIN t_p1 ON true", "JOIN", Some(17)),
        ("SELECT t.a FROM t, t_p1", "JOIN", Some(18)),
        ("SELECT count(*) OVER () FROM t", "window functions", Some(8)),
        ("SELECT DISTINCT a, count(*) FROM t GROUP BY a", "DISTINCT in an aggregated query", Some(8)),
        ("SELECT a FROM t UNION SELECT a FROM t_p1", "UNION", Some(17)),
        ("WITH x AS (SELECT 1) SELECT a FROM t", "WITH", Some(1)),
        (
            "SELECT initcap(s) FROM t",
            "function initcap() (neither one the file creates nor a built-in the sandbox has)",
            Some(8),
        ),
        ("SELECT a FROM t WHERE a IN (SELECT a FROM t_p1)", "subqueries", Some(23)),
        ("SELECT a FROM (SELECT a FROM t) AS q", "subqueries in FROM", Some(16)),
        ("SELECT a FROM t WHERE s LIKE 'x%' ESCAPE '!'", "LIKE … ESCAPE", Some(23)),
        ("SELECT a FROM t WHERE s SIMILAR TO 'x%'", "SIMILAR TO", Some(23)),
        ("SELECT s ^ 'x' FROM t", "operator ^", Some(10)),
        ("SELECT a FROM t ORDER BY a NULLS FIRST", "NULLS FIRST with ASC", Some(28)),
        ("SELECT a FROM t FOR UPDATE", "FOR UPDATE/SHARE", Some(17)),
        ("SELECT 1", "SELECT without FROM", Some(1)),
        ("SELECT a::date FROM t", "cast to date", Some(8)),
        // postgres_fdw's INSERT … VALUES, UPDATE and DELETE run; not these.
        ("INSERT INTO t SELECT * FROM t_p1", "INSERT … SELECT", Some(1)),
        ("BEGIN; UPDATE t SET a = 1 FROM t_p1", "UPDATE … FROM", Some(8)),
        ("DELETE FROM t USING t_p1 WHERE t.a = 1", "DELETE … USING", Some(1)),
        ("DELETE FROM t WHERE a = 1 RETURNING a + 1", "RETURNING a + 1 (only columns)", Some(1)),
        ("TRUNCATE t", "TRUNCATE", Some(1)),
        ("SAVEPOINT s1", "SAVEPOINT", Some(1)),
    ];
    for (sql, what, position) in cases {
        let e = error(sql);
        assert_eq!(e.message, format!("unsupported in a shard query: {what}"), "{sql}");
        assert_eq!(e.position, *position, "{sql}");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn distinct_selects_and_distinct_aggregates_are_planned() {
    // A shard is a PostgreSQL server: SELECT DISTINCT groups without aggregates, and
    // postgres_fdw ships `count(DISTINCT x)` (appendAggregate) for the shard to run.
    let (plan, columns) = select("SELECT DISTINCT a FROM t");
    assert_eq!(columns.len(), 1);
    assert!(matches!(&plan, Plan::Agg { strategy: AggStrategy::Unique, aggs, .. } if aggs.is_empty()), "{plan:?}");
    let (plan, _) = select("SELECT count(DISTINCT a) FROM t");
    let Plan::Agg { aggs, .. } = &plan else { panic!("not an aggregate: {plan:?}") };
    assert!(matches!(aggs.as_slice(), [AggCall { func: AggFunc::Count, distinct: true, .. }]), "{aggs:?}");
}

#[wasm_bindgen_test(unsupported = test)]
fn accepted_nulls_orders_and_constant_casts() {
    // postgres_fdw spells out the default null ordering.
    let (plan, _) = select("SELECT a FROM t ORDER BY a ASC NULLS LAST, b DESC NULLS FIRST");
    let expected = project(
        Plan::Sort { child: Box::new(scan_t()), keys: vec![SortKey::asc(0), SortKey::desc(1)] },
        &[(Expr::col(0), "a")],
    );
    assert_eq!(plan, expected);
    let (plan, _) = select("SELECT a FROM t WHERE s = 5::text AND f > CAST('1.5' AS numeric) AND a = 2.6::int");
    let Plan::Result { child, .. } = plan else { panic!() };
    let Plan::Result { filter: Some(cond), .. } = *child else { panic!() };
    let expected = bin(
        BinOp::And,
        bin(BinOp::And, bin(BinOp::Eq, Expr::col(2), text("5")), bin(BinOp::Gt, Expr::col(3), num("1.5"))),
        bin(BinOp::Eq, Expr::col(0), Expr::int(3)),
    );
    assert_eq!(cond, expected);
    // sqlparser records no position for literals.
    assert_error("SELECT a FROM t WHERE a = 'x'::int", "invalid input syntax for type integer: \"x\"", None);
    // A cast of a column that changes its type is the evaluator's, written as
    // PostgreSQL writes an explicit cast.
    let (plan, columns) = select("SELECT a::numeric / 3, f::bigint, a::text, f::numeric FROM t");
    let types: Vec<ColType> = columns.iter().map(|c| c.ty).collect();
    assert_eq!(types, vec![ColType::Numeric, ColType::Int, ColType::Text, ColType::Numeric]);
    let Plan::Result { targets: Some(targets), .. } = plan else { panic!() };
    let names: Vec<String> = ["a", "b", "s", "f"].map(String::from).to_vec();
    let sql: Vec<String> = targets.iter().map(|(e, _)| e.to_sql(&names)).collect();
    assert_eq!(sql, ["((a)::numeric / '3'::numeric)", "(f)::bigint", "(a)::text", "f"]);
}

/// Text functions and LIKE (issue 17): what the coordinator deparses (`~~`, `||`,
/// `upper(…)`) a shard parses back to the same expression.
#[wasm_bindgen_test(unsupported = test)]
fn text_functions_and_like_operators() {
    use pgasync::plan::Func;
    let like = |negated, ilike, x: Expr, p: &str| Expr::func(Func::Like { negated, ilike }, vec![x, text(p)]);
    let written = select("SELECT a FROM t WHERE s NOT ILIKE 'x%' AND upper(s) || 'y' = 'XY'").0;
    let deparsed = select("SELECT a FROM t WHERE (s !~~* 'x%') AND ((upper(s) || 'y') = 'XY')").0;
    let cat = Expr::func(Func::TextCat, vec![Expr::func(Func::Upper, vec![Expr::col(2)]), text("y")]);
    let cond = bin(BinOp::And, like(true, true, Expr::col(2), "x%"), bin(BinOp::Eq, cat, text("XY")));
    let expected = project(filter(scan_t(), cond), &[(Expr::col(0), "a")]);
    assert_eq!(written, expected);
    assert_eq!(deparsed, expected);
    // `||` with an integer casts it to text; substr takes integers after its text.
    let (plan, columns) = select("SELECT s || a, substr(s, 2, 1) FROM t");
    let as_text = Expr::func(
        Func::Cast { from: Some(pgasync::plan::SqlType::Int8), to: pgasync::plan::SqlType::Text, implicit: false },
        vec![Expr::col(0)],
    );
    let substr = Expr::func(Func::Substr, vec![Expr::col(2), Expr::int(2), Expr::int(1)]);
    let targets = [(Expr::func(Func::TextCat, vec![Expr::col(2), as_text]), "?column?"), (substr, "substr")];
    assert_eq!(plan, project(scan_t(), &targets));
    assert_eq!(columns, vec![col("?column?", ColType::Text), col("substr", ColType::Text)]);
    assert!(error("SELECT a FROM t WHERE a LIKE 'x'").message.contains("operator does not exist"));
}

/// A RETURNING item other than a column is named as the query wrote it (the item
/// between commas, literals included: sqlparser's spans leave them out), however long.
#[wasm_bindgen_test(unsupported = test)]
fn a_returning_item_is_named_as_written() {
    for (sql, item) in [
        ("DELETE FROM t WHERE a = 1 RETURNING a, 'x' || a, 1", "'x' || a"),
        ("DELETE FROM t WHERE a = 1 RETURNING 1", "1"),
        ("INSERT INTO t (a) VALUES (1) RETURNING a, (a, 2), s", "(a, 2)"),
        ("DELETE FROM t WHERE a = 1 RETURNING a, a + 1; SELECT 1", "a + 1"),
        ("DELETE FROM t WHERE a = 1 RETURNING a + 1 ;", "a + 1"),
    ] {
        assert_eq!(
            error(sql).message,
            format!("unsupported in a shard query: RETURNING {item} (only columns)"),
            "{sql}"
        );
    }
    let args = vec!["1"; 10_000].join(", ");
    let e = error(&format!("DELETE FROM t WHERE a = 1 RETURNING f({args})"));
    assert_eq!(e.message, format!("unsupported in a shard query: RETURNING f({args}) (only columns)"));
}
