//! Settings, postgres_fdw options and EXPLAIN's options in scenario files (issue 23,
//! items 1 and 2): each one is honoured as PostgreSQL 15 honours it, or refused with an
//! error that names it, at its place in the file (crate/coordinator_sql/settings.rs and
//! `statement::explain_flags` have the tables). EXPLAIN without ANALYZE plans without
//! running: nothing reaches a shard. tests/sql_seeds.rs compares EXPLAIN without
//! ANALYZE with a real PostgreSQL 15's, text and JSON.

use pgasync::coordinator_sql::{FrontError, SqlScenario};
use pgasync::instrument::{explain_doc_json_text, explain_doc_text, ExplainOptions};
use pgasync::knobs::{Knobs, Source};
use pgasync::plan::{AggSplit, AggStrategy, Plan};
use wasm_bindgen_test::wasm_bindgen_test;

/// Two servers; `t` range-partitioned over two foreign partitions, `u` over two local
/// ones, `loc` a local table with an index.
const SETUP: &str = "-- @shard s1
create table t1 (id int, v int);
-- @shard s2
create table t2 (id int, v int);
-- @coordinator
create extension postgres_fdw;
create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create server s2 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');
create table t (id int, v int) partition by range (id);
create foreign table t1 partition of t for values from (0) to (100) server s1;
create foreign table t2 partition of t for values from (100) to (200) server s2;
insert into t select i, i % 7 from generate_series(0, 199) i;
create table u (id int, v int) partition by range (id);
create table u1 partition of u for values from (0) to (100);
create table u2 partition of u for values from (100) to (200);
insert into u select i, i % 5 from generate_series(0, 199) i;
create table loc (id int, w int);
insert into loc select i, i from generate_series(0, 9) i;
create index on loc (id);
";

/// The file: the setup, `extra` on the coordinator, then the query.
fn file(extra: &str, query: &str) -> String {
    format!("{SETUP}{extra}\n-- @query\n{query}\n")
}

/// The 1-based line of `text` that holds `needle` (its first).
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle} not in the file")) + 1
}

fn load_err(extra: &str, query: &str) -> (FrontError, String) {
    let text = file(extra, query);
    match SqlScenario::load(&text) {
        Ok(_) => panic!("loaded:\n{extra}\n{query}"),
        Err(e) => (e, text),
    }
}

fn planned(extra: &str, query: &str) -> Plan {
    let text = file(extra, query);
    let s = SqlScenario::load(&text).unwrap_or_else(|e| panic!("{extra} {query}: {e}"));
    s.plan().unwrap_or_else(|e| panic!("{extra} {query}: {e}")).plan
}

fn plan_err(extra: &str, query: &str) -> FrontError {
    let text = file(extra, query);
    let s = SqlScenario::load(&text).unwrap_or_else(|e| panic!("{extra} {query}: {e}"));
    match s.plan() {
        Ok(p) => panic!("{extra} {query}: planned {:?}", p.plan),
        Err(e) => e,
    }
}

const REFUSED: &str = "not supported by the sandbox: ";

#[wasm_bindgen_test(unsupported = test)]
fn a_setting_the_sandbox_cannot_honour_is_refused_by_name_at_its_name() {
    for set in [
        "hash_mem_multiplier = 1",
        "effective_cache_size = '1GB'",
        "geqo_effort = 3",
        "search_path = public",
        "extra_float_digits = 3",
        "seed = 0.5",
        "no_such_setting = 1",
        "myext.knob = 1",
        "max_parallel_workers_per_gather = 4",
        "jit = on",
        "statement_timeout = 1000",
    ] {
        let name = set.split_whitespace().next().unwrap();
        let (e, text) = load_err(&format!("select 1;\nset {set};"), "select * from t;");
        assert!(e.message.starts_with(REFUSED) && e.message.contains(name), "{set}: {e}");
        assert_eq!((e.line, e.column), (line_of(&text, &format!("set {set}")), 5), "{set}: {e}");
    }
    // PostgreSQL's own errors for a bad value, at the name.
    for (set, message) in [
        ("enable_hashjoin = maybe", "parameter \"enable_hashjoin\" requires a Boolean value"),
        (
            "max_parallel_workers_per_gather = many",
            "invalid value for parameter \"max_parallel_workers_per_gather\": \"many\"",
        ),
        ("client_min_messages = loud", "invalid value for parameter \"client_min_messages\": \"loud\""),
        ("enable_sort = on, off", "SET enable_sort takes only one argument"),
        // (h23g) the join search's limits, as guc_tables.c bounds them.
        (
            "join_collapse_limit = 0",
            "0 is outside the valid range for parameter \"join_collapse_limit\" (1 .. 2147483647)",
        ),
        ("geqo_threshold = 1", "1 is outside the valid range for parameter \"geqo_threshold\" (2 .. 2147483647)"),
    ] {
        let (e, text) = load_err(&format!("set {set};"), "select * from t;");
        assert_eq!(e.message, message);
        assert_eq!((e.line, e.column), (line_of(&text, &format!("set {set}")), 5), "{set}");
    }
    let (e, text) = load_err("set local enable_hashjoin = off;", "select * from t;");
    assert!(e.message.starts_with(REFUSED) && e.message.contains("SET LOCAL enable_hashjoin"), "{e}");
    assert_eq!(e.line, line_of(&text, "set local"));
    // RESET of a setting the sandbox does not know is refused as its SET is.
    let (e, _) = load_err("reset effective_cache_size;", "select * from t;");
    assert!(e.message.starts_with(REFUSED) && e.message.contains("effective_cache_size"), "{e}");
    // In a shard's section too.
    let (e, _) = load_err("-- @shard s1\nset hash_mem_multiplier = 1;", "select * from t;");
    assert!(e.message.contains("hash_mem_multiplier"), "{e}");
}

#[wasm_bindgen_test(unsupported = test)]
fn the_settings_the_sandbox_honours_are_accepted() {
    for set in [
        "enable_async_append = off",
        "enable_partition_pruning = false",
        "enable_partitionwise_aggregate = on",
        "enable_partitionwise_join = on",
        "join_collapse_limit = 1",
        "from_collapse_limit = 20",
        "geqo = off",
        "geqo_threshold = 14",
        "enable_nestloop = off",
        "enable_mergejoin to false",
        "enable_material = 0",
        "enable_memoize = off",
        "max_parallel_workers_per_gather = 0",
        "jit = off",
        "statement_timeout = 0",
        "client_min_messages = warning",
        "application_name = 'lesson 3'",
        "enable_hashjoin to default",
    ] {
        planned(&format!("set {set};"), "select id, v from t where id < 150;");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn an_enable_setting_is_refused_where_the_plan_has_its_node_and_honoured_where_not() {
    let join = "select t.id, l.w from t join loc l on t.id = l.id;";
    fn has(plan: &Plan, node: &str) -> bool {
        pgasync::executor::async_through::plan_node_name(plan) == node || plan.children().iter().any(|c| has(c, node))
    }
    // No join, no Hash Join: PostgreSQL's plan has none either.
    planned("set enable_hashjoin = off;", "select * from t;");
    // The join methods' settings are honoured by cost, as PostgreSQL honours them:
    // off, the method is not planned while another can be.
    let default = planned("", join);
    let off = planned("set enable_hashjoin = off;", join);
    assert!(!has(&off, "Hash Join") && (has(&off, "Merge Join") || has(&off, "Nested Loop")), "{off:?}");
    let nl = planned("set enable_hashjoin = off;\nset enable_mergejoin = off;", join);
    assert!(has(&nl, "Nested Loop") && !has(&nl, "Merge Join"), "{nl:?}");
    let mj = planned("set enable_hashjoin = off;\nset enable_nestloop = off;", join);
    assert!(has(&mj, "Merge Join") && !has(&mj, "Nested Loop"), "{mj:?}");
    // RESET, RESET ALL and SET … TO DEFAULT put it back.
    for back in ["reset enable_hashjoin;", "reset all;", "set enable_hashjoin to default;", "set enable_hashjoin = on;"]
    {
        assert_eq!(planned(&format!("set enable_hashjoin = off;\n{back}"), join), default, "{back}");
    }
    // enable_hashagg and enable_sort: honoured by cost where the query has another
    // path (a GroupAggregate; a Merge Append of remotely sorted partitions), refused
    // where the sandbox has none (a join's HashAggregate; a local table's Sort).
    fn agg_strategy(plan: &Plan) -> Option<AggStrategy> {
        match plan {
            Plan::Agg { strategy, .. } => Some(strategy.clone()),
            p => p.children().into_iter().find_map(agg_strategy),
        }
    }
    let grouped = "select v, count(*) from t group by v;";
    assert_eq!(agg_strategy(&planned("", grouped)), Some(AggStrategy::Hashed));
    assert_eq!(agg_strategy(&planned("set enable_hashagg = off;", grouped)), Some(AggStrategy::Sorted));
    let e =
        plan_err("set enable_hashagg = off;", "select t.v, count(*) from t join loc l on t.id = l.id group by t.v;");
    assert!(e.message.starts_with(REFUSED) && e.message.contains("enable_hashagg = off"), "{e}");
    planned("set enable_hashagg = off;", "select count(*) from t;");
    let sorted = planned("set enable_sort = off;", "select * from t order by v;");
    assert!(has(&sorted, "Merge Append") && !has(&sorted, "Sort"), "{sorted:?}");
    let e = plan_err("set enable_sort = off;", "select * from loc order by w;");
    assert!(e.message.starts_with(REFUSED) && e.message.contains("enable_sort = off"), "{e}");
    planned("set enable_sort = off;", "select * from t where id = 3;");
    // The scan settings are honoured by cost, as PostgreSQL honours them: off, the
    // scan costs disable_cost more, so another is taken where one can be (an Index
    // Cond makes an index path), and the disabled one stays where none can.
    let seq = planned("set enable_seqscan = off;", "select * from loc;");
    assert!(has(&seq, "Seq Scan"), "no index path without an Index Cond: {seq:?}");
    let idx = planned("set enable_seqscan = off;", "select * from loc where id < 1000;");
    assert!(!has(&idx, "Seq Scan") && (has(&idx, "Index Scan") || has(&idx, "Bitmap Heap Scan")), "{idx:?}");
    let bitmap =
        planned("set enable_seqscan = off;\nset enable_indexscan = off;", "select * from loc where id < 1000;");
    assert!(has(&bitmap, "Bitmap Heap Scan"), "{bitmap:?}");
    planned("set enable_seqscan = off;", "select * from u;");
}

fn leaves(p: &Plan) -> usize {
    match p {
        Plan::Append { children, .. } | Plan::MergeAppend { children, .. } => children.iter().map(leaves).sum(),
        Plan::Sort { child, .. }
        | Plan::Limit { child, .. }
        | Plan::Agg { child, .. }
        | Plan::Result { child, .. }
        | Plan::Material { child } => leaves(child),
        Plan::HashJoin { outer, inner, .. } | Plan::NestLoop { outer, inner, .. } => leaves(outer) + leaves(inner),
        _ => 1,
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn partition_pruning_and_partitionwise_settings_are_honoured_or_refused() {
    let q = "select * from t where id = 5;";
    assert_eq!(leaves(&planned("", q)), 1, "pruned to t1");
    assert_eq!(leaves(&planned("set enable_partition_pruning = off;", q)), 2, "every partition scanned");
    assert_eq!(leaves(&planned("set enable_partition_pruning = off;\nreset enable_partition_pruning;", q)), 1);
    // Partitionwise aggregate: full (the key grouped) and partial (a Partial Aggregate
    // per partition, a Finalize Aggregate above) honoured; partial avg refused.
    let full = planned("set enable_partitionwise_aggregate = on;", "select id, count(*) from t group by id;");
    assert!(matches!(full, Plan::Append { .. }), "an aggregate per partition under the Append: {full:?}");
    let partial = planned("set enable_partitionwise_aggregate = on;", "select count(*) from t;");
    assert!(
        matches!(&partial, Plan::Agg { split: AggSplit::Finalize, child, .. }
            if matches!(child.as_ref(), Plan::Append { children, .. }
                if children.iter().all(|c| matches!(c, Plan::Agg { split: AggSplit::Partial, .. })))),
        "{partial:?}"
    );
    assert!(matches!(planned("", "select count(*) from t;"), Plan::Agg { split: AggSplit::Simple, .. }));
    let e = plan_err("set enable_partitionwise_aggregate = on;", "select v, avg(id) from t group by v;");
    assert!(e.message.starts_with(REFUSED) && e.message.contains("avg()"), "{e}");
    // Partitionwise join (partitionwise.rs): t and u have the same bounds, so with the
    // setting on their join is an Append of one join per pair of partitions.
    let on = "set enable_partitionwise_join = on;";
    let two = "select t.id, u.v from t join u on t.id = u.id;";
    // A join, or a join under its select list (a Result: EXPLAIN's Output of the join).
    fn is_join(p: &Plan) -> bool {
        match p {
            Plan::HashJoin { .. } | Plan::NestLoop { .. } | Plan::MergeJoin { .. } => true,
            Plan::Result { child, filter: None, .. } => is_join(child),
            _ => false,
        }
    }
    let pairs = planned(on, two);
    assert!(
        matches!(&pairs, Plan::Append { children, .. } if children.len() == 2 && children.iter().all(|c| is_join(c))),
        "{pairs:?}"
    );
    assert!(is_join(&planned("", two)), "off: one join over the two Appends");
    // t pruned to t1: one pair, no Append (setrefs.c removes a one-child Append).
    assert!(is_join(&planned(on, "select t.id, u.v from t join u on t.id = u.id where t.id < 50;")));
    // Not on the partition key, or with a plain table: no effect, as in PostgreSQL.
    assert!(is_join(&planned(on, "select t.id, u.v from t join u on t.v = u.id;")));
    planned(on, "select t.id, l.w from t join loc l on t.id = l.id;");
    // Three relations, the two partitioned alike not joined on their keys: no join
    // relation is partitioned (build_joinrel_partition_info), planned as usual.
    planned(on, "select t.id, u.v, l.w from t join u on t.v = u.v join loc l on l.id = t.id;");
    // Bounds that differ (partbounds.rs): w2 overlaps t1 and t2, so they do not merge
    // and the join is planned as usual; x's partitions match t's one to one.
    let w = "create table w (id int, v int) partition by range (id);\n\
             create table w1 partition of w for values from (0) to (50);\n\
             create table w2 partition of w for values from (50) to (200);\n";
    assert!(is_join(&planned(&format!("{w}{on}"), "select t.id, w.v from t join w on t.id = w.id;")));
    let x = "create table x (id int, v int) partition by range (id);\n\
             create table x1 partition of x for values from (0) to (80);\n\
             create table x2 partition of x for values from (150) to (300);\n";
    let merged = planned(&format!("{x}{on}"), "select t.id, x.v from t join x on t.id = x.id;");
    assert!(
        matches!(&merged, Plan::Append { children, .. } if children.len() == 2 && children.iter().all(|c| is_join(c))),
        "{merged:?}"
    );
    // t's first partition has no partner in y's: a LEFT join is not partitionwise.
    let y = "create table y (id int, v int) partition by range (id);\n\
             create table y1 partition of y for values from (100) to (200);\n";
    assert!(is_join(&planned(&format!("{y}{on}"), "select t.id, y.v from t left join y on t.id = y.id;")));
    // What PostgreSQL would plan partitionwise and the sandbox does not: refused by name.
    let z = "create table z (id int, v int) partition by range (id);\n\
             create table z1 partition of z for values from (0) to (100);\n\
             create table z2 partition of z default;\n";
    for (extra, query, named) in [
        (on.to_string(), "select t.id, u.v from t join u on t.id = u.id order by u.v;", "ORDER BY"),
        (format!("{z}{on}"), "select t.id, z.v from t join z on t.id = z.id;", "default partition"),
        (on.to_string(), "select t.id, u.v, l.w from t join u on t.id = u.id join loc l on l.id = t.v;", "otherwise"),
    ] {
        let e = plan_err(&extra, query);
        assert!(e.message.starts_with(REFUSED) && e.message.contains(named), "{query}: {e}");
    }
}

#[wasm_bindgen_test(unsupported = test)]
fn postgres_fdw_options_are_honoured_or_refused_by_name() {
    let server = "create server s3 foreign data wrapper postgres_fdw options (dbname 'postgres', ";
    for (option, refused) in [
        ("use_remote_estimate 'maybe'", false),
        ("fdw_startup_cost '-1'", false),
        ("fdw_tuple_cost 'cheap'", false),
        ("keep_connections 'off'", true),
        ("updatable 'false'", true),
        ("application_name 'x'", true),
        ("sslmode 'require'", true),
        ("options '-c work_mem=1GB'", true),
        ("user 'bob'", false),
        ("password 'secret'", false),
        ("analyze_sampling 'off'", false),
        ("nonsense 'x'", false),
        ("fetch_size '0'", false),
        ("async_capable 'maybe'", false),
    ] {
        let name = option.split_whitespace().next().unwrap();
        let (e, text) = load_err(&format!("{server}{option});"), "select * from t;");
        if refused {
            assert!(e.message.starts_with(REFUSED) && e.message.contains(name), "{option}: {e}");
        } else {
            assert!(!e.message.starts_with(REFUSED) && e.message.contains(name), "{option}: {e}");
        }
        let line = line_of(&text, "create server s3");
        assert_eq!(
            (e.line, e.column),
            (line, text.lines().nth(line - 1).unwrap().rfind(option).unwrap() + 1),
            "{option}"
        );
    }
    for honoured in [
        // PostgreSQL warns that cube is not installed; postgres_fdw's members ship.
        "extensions 'cube'",
        "extensions 'postgres_fdw'",
        "use_remote_estimate 'false'",
        "use_remote_estimate 'true'",
        "keep_connections 'on'",
        "updatable 'true'",
        "sslmode 'prefer'",
        "batch_size '10'",
    ] {
        planned(&format!("{server}{honoured});"), "select * from t;");
    }
    // Table options: the ones read per server are refused on a table.
    for (option, message) in [
        ("async_capable 'true'", "foreign table option async_capable"),
        ("fetch_size '10'", "foreign table option fetch_size"),
        ("use_remote_estimate 'maybe'", "use_remote_estimate requires a Boolean value"),
        ("nonsense 'x'", "invalid option \"nonsense\""),
    ] {
        let (e, _) = load_err(&format!("create foreign table ft (id int) server s1 options ({option});"), "select 1;");
        assert!(e.message.contains(message), "{option}: {e}");
    }
    planned("create foreign table ft (id int) server s1 options (table_name 't1');", "select * from ft;");
    // User mappings: accepted without options; an option would be ignored, so refused.
    planned("create user mapping for public server s1;", "select * from t;");
    let (e, text) = load_err("create user mapping for public server s1 options (user 'bob');", "select * from t;");
    assert!(e.message.starts_with("not supported by the sandbox: user mapping option user"), "{e}");
    assert_eq!((e.line, e.column), (line_of(&text, "create user mapping"), 51));
    let (e, _) = load_err("create user mapping for public server s1 options (port '1');", "select * from t;");
    assert_eq!(e.message, "invalid option \"port\"");
}

#[wasm_bindgen_test(unsupported = test)]
fn alter_server_options_add_set_and_drop_take_effect() {
    let title = |extra: &str| {
        let s = SqlScenario::load(&file(extra, "explain (costs off) select * from t;")).unwrap();
        let tree = s.plan_only(&Knobs::default(), Source::Json, true).unwrap();
        explain_doc_text(&tree, &ExplainOptions::POSTGRES, &s.explain_doc(), 0, 0)
    };
    assert_eq!(title(""), "Append\n  ->  Async Foreign Scan on t1 t_1\n  ->  Async Foreign Scan on t2 t_2\n");
    assert_eq!(
        title("alter server s1 options (set async_capable 'false');"),
        "Append\n  ->  Foreign Scan on t1 t_1\n  ->  Async Foreign Scan on t2 t_2\n"
    );
    assert_eq!(
        title("alter server s2 options (drop async_capable);"),
        title("alter server s2 options (set async_capable 'off');")
    );
    let s = SqlScenario::load(&file("alter server s1 options (add fetch_size '7');", "select * from t;")).unwrap();
    let sc = s.scenario(&Knobs::default(), Source::Json).unwrap();
    assert_eq!(sc.servers[0].server.options.fetch_size, 7);
    for (alter, message) in [
        ("alter server s1 options (add async_capable 'false');", "option \"async_capable\" provided more than once"),
        ("alter server s1 options (set fetch_size '5');", "option \"fetch_size\" not found"),
        ("alter server s1 options (drop fetch_size);", "option \"fetch_size\" not found"),
        ("alter server s9 options (add fetch_size '5');", "server \"s9\" does not exist"),
        ("alter server s1 owner to bob;", "not supported by the sandbox: ALTER SERVER other than"),
    ] {
        let (e, text) = load_err(alter, "select * from t;");
        assert!(e.message.starts_with(message), "{alter}: {e}");
        assert_eq!(e.line, line_of(&text, alter), "{alter}");
    }
    // parallel_commit: every server the plan reads, or refused.
    let both =
        "alter server s1 options (add parallel_commit 'true');\nalter server s2 options (add parallel_commit 'true');";
    let s = SqlScenario::load(&file(both, "select * from t;")).unwrap();
    assert!(s.scenario(&Knobs::default(), Source::Json).unwrap().behaviour.parallel_commit);
    let s =
        SqlScenario::load(&file("alter server s1 options (add parallel_commit 'true');", "select * from t;")).unwrap();
    let Err(e) = s.scenario(&Knobs::default(), Source::Json) else { panic!("ran") };
    assert!(e.message.starts_with(REFUSED) && e.message.contains("parallel_commit"), "{e}");
    // Only s1 read: its parallel_commit alone is every server's.
    let s = SqlScenario::load(&file(
        "alter server s1 options (add parallel_commit 'true');",
        "select * from t where id = 1;",
    ))
    .unwrap();
    assert!(s.scenario(&Knobs::default(), Source::Json).unwrap().behaviour.parallel_commit);
}

#[wasm_bindgen_test(unsupported = test)]
fn explain_options_are_honoured_or_refused_as_postgres_does() {
    let q = "select * from t where v = 1;";
    for (options, message, at_option) in [
        ("(analyze, costs off, buffers)", "not supported by the sandbox: EXPLAIN option BUFFERS", Some("buffers")),
        ("(costs off, buffers on)", "not supported by the sandbox: EXPLAIN option BUFFERS", Some("buffers")),
        ("(analyze, costs off, wal)", "not supported by the sandbox: EXPLAIN option WAL", Some("wal")),
        ("(costs off, format xml)", "not supported by the sandbox: EXPLAIN option FORMAT XML", Some("format")),
        ("(costs off, format yaml)", "not supported by the sandbox: EXPLAIN option FORMAT YAML", Some("format")),
        ("(costs off, wal)", "EXPLAIN option WAL requires ANALYZE", None),
        ("(costs off, timing)", "EXPLAIN option TIMING requires ANALYZE", None),
        ("(costs off, format csv)", "unrecognized value for EXPLAIN option \"format\": \"csv\"", Some("format")),
        ("(costs off, generic_plan)", "unrecognized EXPLAIN option \"generic_plan\"", Some("generic_plan")),
        ("(costs off, serialize)", "unrecognized EXPLAIN option \"serialize\"", Some("serialize")),
        ("(costs off, analyze yes)", "analyze requires a Boolean value", Some("analyze yes")),
        ("(costs off, verbose 2)", "verbose requires a Boolean value", Some("verbose 2")),
        ("(costs 'yes')", "costs requires a Boolean value", Some("costs 'yes'")),
    ] {
        let query = format!("explain {options} {q}");
        let (e, text) = load_err("", &query);
        assert!(e.message.starts_with(message), "{query}: {e}");
        let line = line_of(&text, &query);
        let column = match at_option {
            Some(o) => query.find(o).unwrap() + 1,
            None => 1,
        };
        assert_eq!((e.line, e.column), (line, column), "{query}: {e}");
    }
    // Defaults as ExplainQuery settles them.
    let flags = |options: &str| {
        SqlScenario::load(&file("", &format!("explain {options} {q}"))).unwrap().explain_flags().unwrap()
    };
    let f = flags("(costs 'off')");
    assert!(!f.costs && !f.analyze);
    let f = flags("(analyze, costs off)");
    assert!(f.analyze && f.timing && f.summary && !f.verbose && !f.settings && !f.json);
    let f = flags("(costs off)");
    assert!(!f.analyze && !f.timing && !f.summary);
    let f = flags("(costs false, summary, settings true, verbose 1, format json, buffers off, wal 0)");
    assert!(!f.analyze && f.summary && f.settings && f.verbose && f.json);
    let f = flags("(analyze 1, costs off, timing off, summary off, format text)");
    assert!(f.analyze && !f.timing && !f.summary && !f.json);
}

#[wasm_bindgen_test(unsupported = test)]
fn explain_without_analyze_plans_and_sends_nothing() {
    let text = file(
        "set enable_partition_pruning = off;",
        "explain (costs off, settings, summary) select * from t where id = 5;",
    );
    let s = SqlScenario::load(&text).unwrap();
    assert!(s.is_plan_only());
    // No run: the page and the scenario refuse it, at the EXPLAIN.
    let Err(e) = s.scenario(&Knobs::default(), Source::Json) else { panic!("ran") };
    assert!(e.message.contains("EXPLAIN without ANALYZE"), "{e}");
    assert_eq!((e.line, e.column), (line_of(&text, "explain (costs off"), 1));
    assert!(s.clone().into_scenario(&Knobs::default(), Source::Json).is_err());
    // The plan: initialized, never run; no remote estimate asked, so no shard received
    // anything (planning's EXPLAINs are all a plain EXPLAIN sends: pg15_fidelity_remote_estimate).
    let run = s.plan_only_run(&Knobs::default(), Source::Json, s.async_append()).unwrap();
    assert!(run.host.link_stats().iter().all(|l| l.queries == 0 && l.fetches == 0 && l.max_in_flight == 0));
    let tree = run.explain();
    let doc = s.explain_doc();
    assert_eq!(
        explain_doc_text(&tree, &ExplainOptions::POSTGRES, &doc, 0, 0),
        "Append\n  ->  Async Foreign Scan on t1 t_1\n  ->  Async Foreign Scan on t2 t_2\n\
         Settings: enable_partition_pruning = 'off'\nPlanning Time: 0.000 ms\n"
    );
    let verbose = explain_doc_text(&tree, &ExplainOptions::POSTGRES_VERBOSE, &doc, 0, 0);
    assert!(verbose.contains("Remote SQL: SELECT id, v FROM public.t1 WHERE ((id = 5))"), "{verbose}");
    for text in [&verbose, &explain_doc_json_text(&tree, &ExplainOptions::POSTGRES_VERBOSE, &doc, 0, 0)] {
        assert!(!text.contains("actual") && !text.contains("Actual") && !text.contains("never executed"), "{text}");
        assert!(!text.contains("Execution Time") && !text.contains("Triggers"), "{text}");
    }
    let json = explain_doc_json_text(&tree, &ExplainOptions::POSTGRES, &doc, 0, 0);
    assert!(json.contains("\"Settings\": {\n      \"enable_partition_pruning\": \"off\"\n    },"), "{json}");
    // Without SUMMARY no Planning Time; a run's EXPLAIN (ANALYZE, TIMING OFF) counts rows only.
    let s = SqlScenario::load(&file("", "explain (costs off) select * from t;")).unwrap();
    let tree = s.plan_only(&Knobs::default(), Source::Json, true).unwrap();
    assert!(!explain_doc_text(&tree, &ExplainOptions::POSTGRES, &s.explain_doc(), 0, 0).contains("Planning"));
    let s =
        SqlScenario::load(&file("", "explain (analyze, costs off, timing off, summary off) select * from t;")).unwrap();
    let mut run = s
        .scenario(&Knobs::default(), Source::Json)
        .unwrap()
        .start(true, pgasync::clock::Clock::virtual_clock(), false)
        .unwrap();
    run.es.timing = s.explain_flags().unwrap().timing;
    run.run_to_end().unwrap();
    let out = explain_doc_text(&run.explain(), &ExplainOptions::POSTGRES, &s.explain_doc(), 0, run.execution_ns());
    assert_eq!(
        out,
        "Append (actual rows=200 loops=1)\n  ->  Async Foreign Scan on t1 t_1 (actual rows=100 loops=1)\n  \
         ->  Async Foreign Scan on t2 t_2 (actual rows=100 loops=1)\n"
    );
}

/// postgres_fdw's use_remote_estimate (`coordinator_sql::remote_estimate`): on a server
/// its partitions' scans are priced by the shard's EXPLAIN (here the shard's seq scan
/// of a never-analyzed table, as PostgreSQL 15's shard answers: 10 pages of 2260
/// tuples by the heap's own density, where postgres_fdw's local estimate assumes
/// 2560; numbers measured on PostgreSQL 15); a table's own option overrides its
/// server's; an EXPLAIN goes on
/// the wire before the query's DECLARE; a statement the sandbox does not plan with
/// the shards' answers is refused by name.
#[wasm_bindgen_test(unsupported = test)]
fn use_remote_estimate_prices_scans_by_the_shards_explain() {
    let explain = |extra: &str, query: &str| {
        let s = SqlScenario::load(&file(extra, query)).unwrap_or_else(|e| panic!("{extra}: {e}"));
        let tree = s.plan_only(&Knobs::default(), Source::Json, true).unwrap_or_else(|e| panic!("{extra}: {e}"));
        explain_doc_text(&tree, &ExplainOptions::POSTGRES, &s.explain_doc(), 0, 0)
    };
    let q = "explain select * from t1;";
    let local = explain("", q);
    assert_eq!(local, "Foreign Scan on t1  (cost=100.00..186.80 rows=2560 width=8)\n");
    let remote = explain("alter server s1 options (add use_remote_estimate 'true');", q);
    assert_eq!(remote, "Foreign Scan on t1  (cost=100.00..177.80 rows=2260 width=8)\n");
    let off = "alter server s1 options (add use_remote_estimate 'true');\n\
               alter foreign table t1 options (add use_remote_estimate 'false');";
    assert_eq!(explain(off, q), local, "the table's option overrides its server's");
    // The EXPLAIN goes to the shard after the session's set-up, before the DECLARE.
    let s = SqlScenario::load(&file("alter server s1 options (add use_remote_estimate 'true');", "select * from t1;"))
        .unwrap();
    let sc = s.scenario(&Knobs::default(), Source::Json).unwrap();
    let mut run = sc.start(false, pgasync::clock::Clock::virtual_clock(), false).unwrap();
    run.run_to_end().unwrap();
    let log: Vec<String> = run.host.servers[0].statement_log().into_iter().map(|(_, l)| l).collect();
    let at = |needle: &str| log.iter().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle}: {log:?}"));
    assert_eq!(log[at("EXPLAIN")], "statement: EXPLAIN SELECT id, v FROM public.t1");
    assert!(at("START TRANSACTION") < at("EXPLAIN") && at("EXPLAIN") < at("DECLARE"), "{log:?}");
    assert_eq!(log.iter().filter(|l| l.contains("START TRANSACTION")).count(), 1, "{log:?}");
    // A prepared statement is planned without the shards: refused, never priced locally.
    let e = plan_err(
        "alter server s1 options (add use_remote_estimate 'true');\nprepare p as select * from t1;",
        "execute p;",
    );
    assert!(e.message.starts_with("not supported by the sandbox: use_remote_estimate of foreign table \"t1\""), "{e}");
}
