// Native only (not in tests/suite): starts PostgreSQL clusters (processes, sockets, files).
#![cfg(not(target_arch = "wasm32"))]
//! `frontend::pgfuncs` against a real PostgreSQL 15: one cluster (tests/support/pg.rs),
//! and for each function the rows PostgreSQL itself produced.
//!
//! - hash partitioning: tables `PARTITION BY HASH` on `int` (modulus 4, and mixed
//!   moduli 2/4/4), `smallint`, `bigint`, `text` (modulus 3), `varchar`, `char(n)`,
//!   `numeric` and `(int, text)` (modulus 5), filled from generate_series with negative
//!   numbers, extremes and NULLs; every row's partition (`tableoid::regclass`) must be
//!   the one [`hash_partition_index`] / [`find_hash_partition`] predicts;
//! - `setseed(s); random()` for several seeds, 1000 values each, compared as text
//!   (float8out), and `random()*100` through the casts an INSERT does (`int`,
//!   `smallint`, `bigint`, `numeric` columns); the setseed range errors;
//! - float8out and float8 → numeric on edge values, exact ties, powers of two and
//!   doubles with random bit patterns (sent as round-trip literals); float8 →
//!   int2/int4/int8 at the edges;
//! - `to_char(int, …)` for pictures of `0`, `9` and `FM`;
//! - numeric (`pgasync::numeric`): arithmetic `+ - * / %` over pairs of literals of
//!   many scales and magnitudes (division's scale is `select_div_scale`'s), unary
//!   minus, abs, comparisons, casts between int, bigint, float8, numeric and text, the
//!   literal forms, NaN and Infinity, evaluated by the coordinator's analyser and
//!   evaluator; and `sum`, `avg`, `min`, `max` and arithmetic inside them over a
//!   generated local table, run by the sandbox's executor (`SqlScenario`), grouped and
//!   not. Every value is compared as the text PostgreSQL prints.
//!
//! Missing PostgreSQL binaries fail the test (`make test` installs them).

mod support;

use pgasync::coordinator_sql::pgfuncs::*;
use support::pg::Cluster;

/// psql's unaligned rows, fields split on `|`; empty lines (the row of a `void`
/// function such as setseed) are dropped.
fn rows(c: &Cluster, sql: &str) -> Vec<Vec<String>> {
    c.psql(sql).lines().filter(|l| !l.is_empty()).map(|l| l.split('|').map(str::to_string).collect()).collect()
}

/// How an INSERT turns a float8 into a column's text.
type Cast = fn(f64) -> String;
/// One group of comparisons against the cluster.
type Check = fn(&Cluster, &mut Report);

/// Collects disagreements so that one run reports every check that failed.
#[derive(Default)]
struct Report {
    /// The first disagreements, written out.
    failures: Vec<String>,
    failed: usize,
    checked: usize,
}

impl Report {
    fn check(&mut self, what: &str, got: &str, want: &str) {
        self.checked += 1;
        if got != want {
            self.failed += 1;
            if self.failures.len() < 40 {
                self.failures.push(format!("{what}: pgfuncs says {got:?}, PostgreSQL {want:?}"));
            }
        }
    }
}

/// A partitioned table's rows as (key fields, partition name); `keys` are SQL
/// expressions, each read back as `is_null` + text so NULL and '' stay apart.
fn partition_rows(c: &Cluster, table: &str, keys: &[&str]) -> Vec<(Vec<Option<String>>, String)> {
    let cols: Vec<String> = keys.iter().map(|k| format!("{k} IS NULL, {k}")).collect();
    let sql = format!("SELECT {}, tableoid::regclass FROM {table}", cols.join(", "));
    let out = rows(c, &sql);
    assert!(!out.is_empty(), "{table} is empty");
    out.into_iter()
        .map(|r| {
            assert_eq!(r.len(), 2 * keys.len() + 1, "a key holds '|' or a newline: {r:?}");
            let vals = (0..keys.len()).map(|i| if r[2 * i] == "t" { None } else { Some(r[2 * i + 1].clone()) });
            (vals.collect(), r[2 * keys.len()].clone())
        })
        .collect()
}

/// `CREATE TABLE t (cols) PARTITION BY HASH (key)` with one partition `t_<r>` per
/// remainder of `modulus`.
fn hash_table(table: &str, cols: &str, key: &str, modulus: u64) -> String {
    let mut sql = format!("CREATE TABLE {table} ({cols}) PARTITION BY HASH ({key});\n");
    for r in 0..modulus {
        sql += &format!(
            "CREATE TABLE {table}_{r} PARTITION OF {table} FOR VALUES WITH (MODULUS {modulus}, REMAINDER {r});\n"
        );
    }
    sql
}

fn check_single_key_table(
    c: &Cluster,
    rep: &mut Report,
    table: &str,
    modulus: u64,
    key_of: impl Fn(Option<&str>) -> (Option<Numeric>, KeyKind),
) {
    for (vals, part) in partition_rows(c, table, &["k"]) {
        let text = vals[0].as_deref();
        let (numeric, kind) = key_of(text);
        let key = kind.key(text, numeric.as_ref());
        let r = hash_partition_index(&[key], modulus);
        rep.check(&format!("{table} row {text:?}"), &format!("{table}_{r}"), &part);
    }
}

/// How a column's text is read back into a key value.
#[derive(Clone, Copy)]
enum KeyKind {
    Int2,
    Int4,
    Int8,
    Text,
    Bpchar,
    Numeric,
}

impl KeyKind {
    fn key<'a>(self, text: Option<&'a str>, numeric: Option<&'a Numeric>) -> KeyValue<'a> {
        let Some(t) = text else { return KeyValue::Null };
        match self {
            KeyKind::Int2 => KeyValue::Int2(t.parse().unwrap()),
            KeyKind::Int4 => KeyValue::Int4(t.parse().unwrap()),
            KeyKind::Int8 => KeyValue::Int8(t.parse().unwrap()),
            KeyKind::Text => KeyValue::Text(t),
            KeyKind::Bpchar => KeyValue::Bpchar(t),
            KeyKind::Numeric => KeyValue::Numeric(numeric.unwrap()),
        }
    }
}

fn plain(kind: KeyKind) -> impl Fn(Option<&str>) -> (Option<Numeric>, KeyKind) {
    move |_| (None, kind)
}

fn check_partitions(c: &Cluster, rep: &mut Report) {
    let mut setup = String::new();
    setup += &hash_table("h_int", "k int", "k", 4);
    setup += &hash_table("h_int2", "k smallint", "k", 4);
    setup += &hash_table("h_int8", "k bigint", "k", 4);
    setup += &hash_table("h_text", "k text", "k", 3);
    setup += &hash_table("h_varchar", "k varchar(40)", "k", 3);
    setup += &hash_table("h_bpchar", "k char(6)", "k", 3);
    setup += &hash_table("h_num", "k numeric", "k", 4);
    setup += &hash_table("h_two", "id int, k text", "id, k", 5);
    setup += "
        CREATE TABLE h_mixed (k int) PARTITION BY HASH (k);
        CREATE TABLE h_mixed_a PARTITION OF h_mixed FOR VALUES WITH (MODULUS 2, REMAINDER 0);
        CREATE TABLE h_mixed_b PARTITION OF h_mixed FOR VALUES WITH (MODULUS 4, REMAINDER 1);
        CREATE TABLE h_mixed_c PARTITION OF h_mixed FOR VALUES WITH (MODULUS 4, REMAINDER 3);
        INSERT INTO h_int SELECT g FROM generate_series(-1000, 1000) g;
        INSERT INTO h_int VALUES (NULL), (2147483647), (-2147483648);
        INSERT INTO h_mixed SELECT g FROM generate_series(-500, 500) g;
        INSERT INTO h_mixed VALUES (NULL);
        INSERT INTO h_int2 SELECT g FROM generate_series(-32768, 32767, 97) g;
        INSERT INTO h_int2 VALUES (NULL), (32767);
        INSERT INTO h_int8 SELECT g * 3000000007 FROM generate_series(-400, 400) g;
        INSERT INTO h_int8 SELECT g FROM generate_series(-300, 300) g;
        INSERT INTO h_int8 VALUES (NULL), (9223372036854775807), (-9223372036854775808);
        -- Texts of every length 0..40 (lookup3 works in 12-byte blocks), multibyte
        -- characters, the empty string and NULL.
        INSERT INTO h_text SELECT 'k' || g FROM generate_series(-500, 500) g;
        INSERT INTO h_text SELECT md5(g::text) FROM generate_series(1, 200) g;
        INSERT INTO h_text SELECT repeat('ab', g) || 'c' FROM generate_series(0, 20) g;
        INSERT INTO h_text SELECT left(md5(g::text) || md5(g::text), g) FROM generate_series(0, 40) g;
        INSERT INTO h_text SELECT 'Größe ' || g || ' €' FROM generate_series(1, 100) g;
        INSERT INTO h_text VALUES (''), (NULL), ('trailing  ');
        INSERT INTO h_varchar SELECT k FROM h_text WHERE length(k) <= 40 OR k IS NULL;
        INSERT INTO h_bpchar SELECT left('x' || g, (g % 6) + 1) FROM generate_series(0, 300) g;
        INSERT INTO h_bpchar VALUES (''), (NULL), ('ab  ');
        INSERT INTO h_num SELECT g * 1.37 FROM generate_series(-300, 300) g;
        INSERT INTO h_num SELECT g::numeric / 1000 FROM generate_series(-300, 300) g;
        INSERT INTO h_num SELECT 10::numeric ^ g FROM generate_series(-20, 25) g;
        INSERT INTO h_num VALUES (NULL), ('NaN'), ('Infinity'), ('-Infinity'), (0.000),
          (12345678901234567890.123456789), (-0.00001), (100000000), (1e-30);
        INSERT INTO h_two SELECT g, 'k' || (g % 17) FROM generate_series(-300, 300) g;
        INSERT INTO h_two SELECT g, NULL FROM generate_series(-20, 20) g;
        INSERT INTO h_two SELECT NULL, 'n' || g FROM generate_series(-20, 20) g;
        INSERT INTO h_two VALUES (NULL, NULL);
    ";
    c.psql(&setup);

    check_single_key_table(c, rep, "h_int", 4, plain(KeyKind::Int4));
    check_single_key_table(c, rep, "h_int2", 4, plain(KeyKind::Int2));
    check_single_key_table(c, rep, "h_int8", 4, plain(KeyKind::Int8));
    check_single_key_table(c, rep, "h_text", 3, plain(KeyKind::Text));
    check_single_key_table(c, rep, "h_varchar", 3, plain(KeyKind::Text));
    check_single_key_table(c, rep, "h_bpchar", 3, plain(KeyKind::Bpchar));
    check_single_key_table(c, rep, "h_num", 4, |t| (t.map(|t| Numeric::parse(t).unwrap()), KeyKind::Numeric));

    for (vals, part) in partition_rows(c, "h_two", &["id", "k"]) {
        let keys = [KeyKind::Int4.key(vals[0].as_deref(), None), KeyKind::Text.key(vals[1].as_deref(), None)];
        let r = hash_partition_index(&keys, 5);
        rep.check(&format!("h_two row {vals:?}"), &format!("h_two_{r}"), &part);
    }

    let bounds = [(2, 0), (4, 1), (4, 3)];
    for (vals, part) in partition_rows(c, "h_mixed", &["k"]) {
        let key = [KeyKind::Int4.key(vals[0].as_deref(), None)];
        let got = match find_hash_partition(&key, &bounds) {
            Some(i) => format!("h_mixed_{}", ["a", "b", "c"][i]),
            None => "no partition".to_string(),
        };
        rep.check(&format!("h_mixed row {vals:?}"), &got, &part);
    }
}

fn check_random(c: &Cluster, rep: &mut Report) {
    for seed in [0.5, -0.25, 0.0, 1.0, -1.0, 1e-10, 0.123456789] {
        let pg = rows(c, &format!("SELECT setseed({seed:e}); SELECT random() FROM generate_series(1, 1000)"));
        assert_eq!(pg.len(), 1000, "seed {seed}");
        let mut ours = PgRandom::new();
        ours.setseed(seed).unwrap();
        for (i, row) in pg.iter().enumerate() {
            rep.check(&format!("setseed({seed}) random() #{}", i + 1), &float8_out(ours.random()), &row[0]);
        }
    }

    // random()*100 as INSERT casts it into each column type (one random() per row,
    // in insertion order).
    c.psql("CREATE TABLE r_int (v int); CREATE TABLE r_int2 (v smallint); CREATE TABLE r_int8 (v bigint); CREATE TABLE r_num (v numeric);");
    let cases: [(&str, f64, Cast); 5] = [
        ("r_int", 100.0, |x| dtoi4(x).unwrap().to_string()),
        ("r_int2", 100.0, |x| dtoi2(x).unwrap().to_string()),
        ("r_int8", 1e12, |x| dtoi8(x).unwrap().to_string()),
        ("r_num", 100.0, float8_numeric),
        ("r_num", 1e-3, float8_numeric),
    ];
    for (i, (table, scale, cast)) in cases.into_iter().enumerate() {
        let seed = 0.5 - 0.1 * i as f64;
        let pg = rows(
            c,
            &format!(
                "TRUNCATE {table}; SELECT setseed({seed:e}); \
                 INSERT INTO {table} SELECT random() * '{scale:e}'::float8 FROM generate_series(1, 1000); \
                 SELECT v FROM {table} ORDER BY ctid"
            ),
        );
        assert_eq!(pg.len(), 1000, "{table}");
        let mut ours = PgRandom::new();
        ours.setseed(seed).unwrap();
        for (n, row) in pg.iter().enumerate() {
            rep.check(&format!("{table} random()*{scale} row {}", n + 1), &cast(ours.random() * scale), &row[0]);
        }
    }
    // And as an explicit cast in a query.
    let pg = rows(c, "SELECT setseed(-0.25); SELECT (random() * 100)::int FROM generate_series(1, 1000)");
    let mut ours = PgRandom::new();
    ours.setseed(-0.25).unwrap();
    for (n, row) in pg.iter().enumerate() {
        rep.check(
            &format!("(random()*100)::int #{}", n + 1),
            &dtoi4(ours.random() * 100.0).unwrap().to_string(),
            &row[0],
        );
    }

    // setseed's range check and its message.
    c.psql(
        "CREATE FUNCTION try_setseed(x float8) RETURNS text LANGUAGE plpgsql AS $$
         BEGIN PERFORM setseed(x); RETURN 'ok'; EXCEPTION WHEN others THEN RETURN SQLERRM; END $$;",
    );
    let seeds =
        ["2", "-1.5", "1.0000001", "-1e10", "NaN", "-Infinity", "Infinity", "1234567", "1", "-1", "0.999", "1e-300"];
    let list: Vec<String> = seeds.iter().map(|s| format!("('{s}'::float8)")).collect();
    let pg = rows(c, &format!("SELECT x, try_setseed(x) FROM (VALUES {}) v(x)", list.join(", ")));
    for (s, row) in seeds.iter().zip(&pg) {
        let ours = match PgRandom::new().setseed(parse_f64(s)) {
            Ok(()) => "ok".to_string(),
            Err(e) => e,
        };
        rep.check(&format!("setseed({s})"), &ours, &row[1]);
    }
}

/// Rust reads `Infinity`, `NaN`, `1e-05` itself; this only keeps the spelling PostgreSQL
/// prints for float8 readable by both.
fn parse_f64(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("not a float: {s}"))
}

fn check_float_output(c: &Cluster, rep: &mut Report) {
    let mut values: Vec<f64> = vec![
        0.0,
        -0.0,
        1e-5,
        1.2345e16,
        1e15,
        123456789012345.0,
        999999999999999.0,
        1e-4,
        0.00012345,
        9.999e-5,
        5e-324,
        2.2250738585072014e-308,
        f64::MAX,
        f64::MIN,
        0.1,
        1.0 / 3.0,
        2.0 / 3.0,
        100.0,
        1e22,
        // Shortest digits on the interval's end (PostgreSQL: 9.999999999999999e+22) and
        // an exact tie at 17 digits (…489.12, to even).
        1e23,
        1_886_935_280_443_913.0 / 8.0, // 235866910055489.125
        // %.15g ties (16-digit integers ending in 5, exact in a double): half to even.
        1234567890123455.0,
        1000000000000005.0,
        9007199254740985.0,
        1000000000000015.0,
        9007199254740991.0,
        0.5,
        2.5,
        -2.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    // Doubles with random bit patterns over the whole exponent range, and random
    // values in [0, 1000) as random() produces them.
    let mut g = PgRandom::new();
    g.setseed(0.77).unwrap();
    while values.len() < 1200 {
        let v = f64::from_bits(g.next_u64());
        if v.is_finite() {
            values.push(v);
        }
    }
    while values.len() < 1500 {
        values.push(g.random() * 1000.0);
    }
    // Exact ties at the last of 17 digits (n + 1/8 …) and powers of two (the gap below
    // is half the gap above).
    while values.len() < 1600 {
        let n = (1u64 << 46) + g.next_u64() % (1 << 49);
        values.push(n as f64 + [0.125, 0.375, 0.625, 0.875][values.len() % 4]);
        values.push(f64::from_bits(g.next_u64() & !((1 << 52) - 1) & !(1 << 63)));
    }
    // Round-trip literals: Rust's {:e} is exact, PostgreSQL's float8in reads it back.
    let literal = |v: f64| match v {
        v if v.is_nan() => "'NaN'".to_string(),
        v if v.is_infinite() => format!("'{}Infinity'", if v < 0.0 { "-" } else { "" }),
        v => format!("'{v:e}'"),
    };
    let list: Vec<String> = values.iter().map(|&v| format!("({}::float8)", literal(v))).collect();
    let pg = rows(c, &format!("SELECT x, x::numeric FROM (VALUES {}) v(x)", list.join(", ")));
    assert_eq!(pg.len(), values.len());
    for (&v, row) in values.iter().zip(&pg) {
        rep.check(&format!("float8out({v:e})"), &float8_out(v), &row[0]);
        rep.check(&format!("float8 {v:e} ::numeric"), &float8_numeric(v), &row[1]);
    }

    c.psql(
        "CREATE FUNCTION try_casts(x float8) RETURNS text LANGUAGE plpgsql AS $$
         DECLARE r text := '';
         BEGIN
           BEGIN r := r || x::int2; EXCEPTION WHEN others THEN r := r || SQLERRM; END;
           r := r || '/';
           BEGIN r := r || x::int4; EXCEPTION WHEN others THEN r := r || SQLERRM; END;
           r := r || '/';
           BEGIN r := r || x::int8; EXCEPTION WHEN others THEN r := r || SQLERRM; END;
           RETURN r;
         END $$;",
    );
    let edges: Vec<f64> = vec![
        0.5,
        1.5,
        2.5,
        -0.5,
        -1.5,
        -2.5,
        0.49999999999999994,
        32767.4,
        32767.5,
        -32768.5,
        -32768.6,
        2147483647.4,
        2147483647.5,
        -2147483648.5,
        -2147483648.6,
        9223372036854775807.0,
        -9223372036854775808.0,
        -9223372036854777856.0,
        1e19,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        98.5,
        99.5,
    ];
    let list: Vec<String> = edges.iter().map(|&v| format!("({}::float8)", literal(v))).collect();
    let pg = rows(c, &format!("SELECT try_casts(x) FROM (VALUES {}) v(x)", list.join(", ")));
    for (&v, row) in edges.iter().zip(&pg) {
        let ours = format!(
            "{}/{}/{}",
            dtoi2(v).map(|i| i.to_string()).unwrap_or_else(|e| e),
            dtoi4(v).map(|i| i.to_string()).unwrap_or_else(|e| e),
            dtoi8(v).map(|i| i.to_string()).unwrap_or_else(|e| e)
        );
        rep.check(&format!("casts of {v:e}"), &ours, &row[0]);
    }
}

fn check_to_char(c: &Cluster, rep: &mut Report) {
    let formats = ["FM00000", "00000", "99999", "FM99999", "9909", "0999", "FM9990000", "fm000", "0", "9", "FM", ""];
    let cols: Vec<String> = formats.iter().map(|f| format!("to_char(i, '{f}')")).collect();
    let sql = format!(
        "SELECT i, {} FROM (SELECT generate_series(-123456, 123456, 997) UNION ALL VALUES (0), (1), (-1), (5), (-5), \
         (99999), (100000), (-99999), (-100000), (9999), (10000), (2147483647), (-2147483648)) v(i)",
        cols.join(", ")
    );
    for row in rows(c, &sql) {
        let i: i64 = row[0].parse().unwrap();
        for (f, want) in formats.iter().zip(&row[1..]) {
            rep.check(&format!("to_char({i}, '{f}')"), &to_char_int(i, f).unwrap(), want);
        }
    }
    // bigint
    let sql = "SELECT i, to_char(i, 'FM000000000000'), to_char(i, '9999999999990') \
               FROM (SELECT g::bigint * 100003 FROM generate_series(-200, 200, 7) g UNION ALL VALUES (9223372036854775807)) v(i)";
    for row in rows(c, sql) {
        let i: i64 = row[0].parse().unwrap();
        rep.check(
            &format!("to_char({i}::bigint, 'FM000000000000')"),
            &to_char_int(i, "FM000000000000").unwrap(),
            &row[1],
        );
        rep.check(
            &format!("to_char({i}::bigint, '9999999999990')"),
            &to_char_int(i, "9999999999990").unwrap(),
            &row[2],
        );
    }
}

#[test]
fn pgfuncs_agree_with_postgres_15() {
    let c = Cluster::start("pgfuncs");
    let version = c.psql("SHOW server_version_num");
    assert!(version.trim().starts_with("15"), "PostgreSQL 15 expected, got {version}");

    let mut rep = Report::default();
    let checks: [(&str, Check); 6] = [
        ("hash partitions", check_partitions),
        ("random/setseed", check_random),
        ("float8 output and casts", check_float_output),
        ("to_char", check_to_char),
        ("numeric expressions", check_numeric_expressions),
        ("numeric aggregates", check_numeric_aggregates),
    ];
    for (name, check) in checks {
        let (before, failed_before) = (rep.checked, rep.failed);
        check(&c, &mut rep);
        eprintln!("{name}: {} values compared, {} differences", rep.checked - before, rep.failed - failed_before);
    }
    assert_eq!(
        rep.failed,
        0,
        "disagreements with PostgreSQL 15 (first {}):\n{}",
        rep.failures.len(),
        rep.failures.join("\n")
    );
}

/// Operands of the numeric checks: scales 0 to 9, signs, tiny and large magnitudes,
/// the literal forms `1e3` and `1.5e-3`, integers of int4 and int8 size.
const NUMERIC_OPERANDS: [&str; 24] = [
    "1",
    "-1",
    "2",
    "3",
    "7",
    "10",
    "0.5",
    "1.50",
    "-2.25",
    "0.001",
    "123456.789",
    "1e3",
    "1.5e-3",
    "99999999",
    "0.3333",
    "-0.70",
    "12345678901234",
    "0.00000001",
    "1e20",
    "3000000000",
    "9999.9999",
    "0.000123456789",
    "-987654321.123456789",
    "100.000",
];

/// The coordinator's analysis and evaluation of one expression, as its text (a
/// comparison's Int 1/0 as PostgreSQL's `true`/`false`), or its error.
fn sandbox_expr(text: &str) -> String {
    use pgasync::coordinator_sql::eval;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;
    let e = Parser::new(&PostgreSqlDialect {}).try_with_sql(text).and_then(|mut p| p.parse_expr());
    let e = e.unwrap_or_else(|err| panic!("{text}: {err}"));
    match eval::eval(&e, &mut PgRandom::new()) {
        // PostgreSQL's side is `(e)::text`: a boolean's text cast is `true`/`false`
        // (booltext), not boolout's `t`/`f`.
        Ok(v) if v.ty == Some(pgasync::plan::SqlType::Bool) => {
            (if v.datum.is_true() { "true" } else { "false" }).to_string()
        }
        Ok(v) if v.datum.is_null() => "NULL".to_string(),
        Ok(v) => eval::text_of(&v),
        Err(e) => format!("ERROR: {}", e.message),
    }
}

/// The expressions compared; PostgreSQL evaluates each in its own `EXECUTE`, so an
/// error (division by zero, out of range) is compared as its message.
fn numeric_expressions() -> Vec<String> {
    let mut out = Vec::new();
    let ops = NUMERIC_OPERANDS;
    for (i, a) in ops.iter().enumerate() {
        for (j, b) in ops.iter().enumerate() {
            // Every pair divides; the other operators on a deterministic third of them.
            out.push(format!("({a}) / ({b})"));
            if (i * 7 + j) % 3 == 0 {
                out.push(format!("({a}) + ({b})"));
                out.push(format!("({a}) - ({b})"));
                out.push(format!("({a}) % ({b})"));
            }
            if (i * 5 + j) % 4 == 0 {
                out.push(format!("({a}) * ({b})"));
                out.push(format!("(({a}) < ({b}))"));
            }
        }
        out.push(format!("- ({a})"));
        out.push(format!("abs({a})"));
        out.push(format!("({a})::text"));
        out.push(format!("({a})::float8"));
        out.push(format!("({a})::numeric::float8::numeric"));
        out.push(format!("({a}) * 2 / 3"));
        out.push(format!("({a}) + 1 / 3"));
        out.push(format!("({a})::numeric / 3000000000"));
        if !a.contains("e20") && !a.contains("12345678901234") && !a.contains("3000000000") {
            out.push(format!("({a})::bigint"));
            out.push(format!("({a})::int"));
        }
    }
    for f in ["0.1", "2.5", "-3.5", "1e-7", "123456789.123456789", "1e15", "0.3333333333333333"] {
        out.push(format!("({f})::float8::numeric"));
        out.push(format!("({f})::float8::numeric + 1"));
    }
    for i in ["0", "7", "-2147483648", "9223372036854775807"] {
        out.push(format!("({i})::bigint::numeric / 7"));
    }
    for t in ["'NaN'", "'Infinity'", "'-inf'", "' 1.50 '", "'1e-3'", "'-0.000'"] {
        out.push(format!("{t}::numeric"));
        out.push(format!("{t}::numeric + 1"));
        out.push(format!("{t}::numeric * 0"));
        out.push(format!("{t}::numeric / 3"));
        out.push(format!("({t}::numeric < 'NaN'::numeric)"));
    }
    out
}

fn check_numeric_expressions(c: &Cluster, rep: &mut Report) {
    c.psql(
        "CREATE FUNCTION try_text(e text) RETURNS text LANGUAGE plpgsql AS $$ DECLARE r text; \
         BEGIN EXECUTE 'SELECT (' || e || ')::text' INTO r; RETURN coalesce(r, 'NULL'); \
         EXCEPTION WHEN others THEN RETURN 'ERROR: ' || sqlerrm; END $$",
    );
    let mut exprs = numeric_expressions();
    exprs.extend(
        ["1.5 / 0", "1.5 % 0", "'NaN'::numeric::int", "'1e10'::numeric::int", "'x1'::numeric"].map(String::from),
    );
    for chunk in exprs.chunks(200) {
        let items: Vec<String> = chunk.iter().map(|e| format!("'{}'", e.replace('\'', "''"))).collect();
        let sql = format!(
            "SELECT try_text(e) FROM unnest(ARRAY[{}]::text[]) WITH ORDINALITY AS u(e, n) ORDER BY n",
            items.join(", ")
        );
        let want: Vec<String> = c.psql(&sql).lines().map(str::to_string).collect();
        assert_eq!(want.len(), chunk.len(), "one line per expression");
        for (e, w) in chunk.iter().zip(&want) {
            rep.check(e, &sandbox_expr(e), w);
        }
    }
}

/// The data of the aggregate checks: int, bigint and numeric columns with NULLs,
/// negative values and scales 0 to 3.
const AGG_SETUP: &str = "create table t (g int, i int, b bigint, n numeric, m numeric);
insert into t select k % 7, k % 23 - 11, k * 1000003, (k % 97) * 0.125 - 3, (k % 13) * 1.1 from generate_series(1, 400) k;
insert into t (g, n) values (1, 2.005), (2, null), (3, -0.001);
insert into t (g, i, b) values (4, 2147483647, 9223372036854775807), (4, 2147483647, 9223372036854775807);";

const AGG_QUERIES: [&str; 10] = [
    "select sum(n), avg(n), min(n), max(n), count(n) from t",
    "select sum(i), avg(i), sum(b), avg(b) from t",
    "select g, sum(n), avg(n), avg(i), avg(m) from t group by g",
    "select g, sum(b), avg(b), min(m), max(m) from t group by g",
    "select sum(n * 2), avg(n / 3), sum(n + i), avg(m - 0.5) from t",
    "select g, avg(n * m), sum(m / 7), sum(i * 0.5) from t group by g",
    "select avg(i::numeric), sum(n::int), avg(b::numeric / 1000) from t",
    "select g, avg(i) * 2, sum(n) / count(*), max(n) - min(n) from t group by g",
    "select n, m, n * m, n / m, n % m from t where m > 5 and n > 2",
    "select i, b, i * 0.1, b / 3.0, i / 4 from t where g = 4 or i = -11",
];

/// The sandbox's rows of a query over [`AGG_SETUP`], each a `|`-joined line.
fn sandbox_rows(base: &pgasync::coordinator_sql::SqlScenario, query: &str) -> Vec<String> {
    use pgasync::clock::Clock;
    use pgasync::knobs::{Knobs, Source};
    let s = base.with_query(&format!("{query};")).unwrap_or_else(|e| panic!("{query}: {e}"));
    let scenario = s.scenario(&Knobs::default(), Source::Json).unwrap_or_else(|e| panic!("{query}: {e}"));
    let mut run = scenario.start(false, Clock::virtual_clock(), false).unwrap_or_else(|e| panic!("{query}: {e}"));
    run.keep_rows = true;
    run.run_to_end().unwrap_or_else(|e| panic!("{query}: {e}"));
    run.rows
        .iter()
        .map(|r| {
            r.iter().map(|d| if d.is_null() { String::new() } else { d.to_string() }).collect::<Vec<_>>().join("|")
        })
        .collect()
}

fn check_numeric_aggregates(c: &Cluster, rep: &mut Report) {
    c.psql(AGG_SETUP);
    let base = pgasync::coordinator_sql::SqlScenario::load(&format!("-- @coordinator\n{AGG_SETUP}\n"))
        .unwrap_or_else(|e| panic!("the aggregate check's setup: {e}"));
    for q in AGG_QUERIES {
        let mut want: Vec<String> = c.psql(q).lines().map(str::to_string).collect();
        let mut got = sandbox_rows(&base, q);
        // Grouped rows come in hash order in PostgreSQL, first-seen order here.
        want.sort();
        got.sort();
        rep.check(&format!("{q}: row count"), &got.len().to_string(), &want.len().to_string());
        for (g, w) in got.iter().zip(&want) {
            rep.check(q, g, w);
        }
    }
}
