//! UPDATE and DELETE of a partitioned table: one result relation per partition left
//! after pruning (PostgreSQL 14+'s inherited UPDATE/DELETE: createplan.c's
//! `make_modifytable` over the Append of the partitions' scans, with postgres_fdw's
//! `postgresPlanDirectModify` asked for each foreign partition, and
//! `postgresPlanForeignModify` for those it refuses).
//!
//! Each member of the child (an Append's, or the one scan left by pruning) is one
//! partition's, and that partition is changed its own way:
//! - a foreign partition whose scan ships every qual (no local Filter) while every SET
//!   expression is shippable: direct modify, the member becomes `Foreign Update` /
//!   `Foreign Delete` (its remote statement sent when the Append reaches it);
//! - another foreign partition: postgres_fdw's foreign modify, the member scans
//!   `… FOR UPDATE` with the ctid, and each row is changed by `… WHERE ctid = $1`
//!   (`fdw_modify`);
//! - a local partition: its scan returns the rows to change, ModifyTable changes them.
//!
//! What PostgreSQL 15 prints, run against it (`update pt set c = 'q' where a = 5`, pt1
//! and pt2 foreign, pt3 local): ModifyTable names every result relation under its
//! Output (`Foreign Update on public.pt1 pt_1`, with a foreign modify's `Remote SQL:`
//! two spaces deeper; `Update on public.pt3 pt_3`), also when one is left; a local
//! member's scan outputs the new values in the columns' order, `pt_3.tableoid`,
//! `pt_3.ctid` and, in an UPDATE with a foreign partition, `NULL::record` (the
//! whole-row identity column the foreign ones need); a foreign modify's scan the new
//! values, `pt_1.tableoid`, `pt_1.ctid`, `pt_1.*` (DELETE: the tableoid and ctid).
//!
//! Invariants: one `PartitionTarget` per member, in the members' order; every partition
//! has its parent's columns in the same order (others are refused), so the rows of
//! every member read as the parent's columns where RETURNING needs them.
//!
//! Refused by name: runtime partition pruning (the members are then not known when
//! planning), a partition that is itself partitioned, a local partition's UPDATE of a
//! partition key column (PostgreSQL would move the row to another partition), a member
//! that is not a plain scan of its partition.

use sqlparser::tokenizer::Location;

use super::catalog::{Node, RelKind, Relation};
use super::fdw_modify::{plan_foreign_modify, ModifyRequest};
use super::FrontError;
use crate::plan::modifytable::{CmdType, PartitionModify, PartitionTarget};
use crate::plan::{Expr, Plan, RowMark, ScanName};
use crate::sql_text::quote_identifier;

/// What the statement asks, as `modifytable::plan_direct_modify` analysed it.
pub(super) struct PartitionedRequest<'a> {
    pub operation: CmdType,
    pub rel: &'a Relation,
    /// The SET list over the table's columns (empty for DELETE).
    pub sets: &'a [(usize, Expr)],
    /// Every SET expression is shippable (`is_foreign_expr`).
    pub sets_shippable: bool,
    /// The columns RETURNING uses, in the table's order.
    pub returned: &'a [usize],
    /// The target's name in the statement: its alias (`UPDATE pt AS x`), else its
    /// name (the lone partition left by pruning is named `x_1`).
    pub refname: &'a str,
}

/// The members of the child and their result relations, from the plan of `SELECT *
/// FROM pt WHERE …` (`scan_plan`). `direct` makes a foreign scan's direct modify.
pub(super) fn plan_partitioned_modify(
    coord: &Node,
    req: &PartitionedRequest,
    scan_plan: Plan,
    direct: &dyn Fn(&crate::plan::ForeignScanPlan) -> Plan,
    at: Location,
) -> Result<(Plan, Vec<PartitionTarget>), FrontError> {
    let members = match scan_plan {
        Plan::Append { children, prune: None, ordered: false } => children,
        Plan::Append { .. } => return Err(refused(req, "with partitions pruned at run time", at)),
        // Pruned to one partition: its scan alone, named as a member (`pt_1`: the
        // parent is in the range table as the nominal target).
        mut one => {
            rename_single(&mut one, req.refname);
            vec![one]
        }
    };
    // PostgreSQL adds the whole-row identity column of a foreign UPDATE to every
    // partition's targetlist (NULL in a local one) once any result relation is foreign.
    let mut parts = Vec::with_capacity(members.len());
    for m in &members {
        let (name, alias) =
            member_relation(m).ok_or_else(|| refused(req, "over a scan that is not a partition's", at))?;
        let part =
            coord.relation(&name).ok_or_else(|| FrontError::at(format!("relation \"{name}\" does not exist"), at))?;
        parts.push((part, alias));
    }
    let any_foreign = parts.iter().any(|(p, _)| matches!(p.kind, RelKind::Foreign { .. }));
    let mut children = Vec::with_capacity(members.len());
    let mut targets = Vec::with_capacity(members.len());
    for (member, (part, alias)) in members.into_iter().zip(parts) {
        same_columns(req, part, at)?;
        let alias_name = alias.as_ref().map_or_else(|| part.name.clone(), |a| a.alias.clone());
        let qualified: Vec<String> = part
            .columns
            .iter()
            .map(|c| format!("{}.{}", quote_identifier(&alias_name), quote_identifier(&c.name)))
            .collect();
        let new_values = shown_sets(req, &qualified);
        let identity = |whole_row: &str| -> Vec<String> {
            let mut out = new_values.clone();
            out.push(format!("{}.tableoid", quote_identifier(&alias_name)));
            out.push(format!("{}.ctid", quote_identifier(&alias_name)));
            if req.operation == CmdType::Update && !whole_row.is_empty() {
                out.push(whole_row.to_string());
            }
            out
        };
        let (child, how, shown) = match &part.kind {
            RelKind::Foreign { .. } => match member {
                Plan::ForeignScan(f) if req.sets_shippable => {
                    (direct(&f), PartitionModify::Direct { returned: req.returned.to_vec() }, vec![])
                }
                scan => {
                    let fdw =
                        ModifyRequest { operation: req.operation, rel: part, sets: req.sets, returned: req.returned };
                    let (mut child, modify) = plan_foreign_modify(&fdw, scan, at)?;
                    let shown = identity(&format!("{}.*", quote_identifier(&alias_name)));
                    set_row_mark(&mut child, &shown);
                    (child, PartitionModify::ForeignRow { modify, returned: req.returned.to_vec() }, vec![])
                }
            },
            RelKind::Table(_) => {
                if req.operation == CmdType::Update {
                    refuse_key_update(req, part, at)?;
                }
                let shown = identity(if any_foreign { "NULL::record" } else { "" });
                (member, PartitionModify::Local { sets: req.sets.to_vec() }, shown)
            }
            RelKind::Partitioned { .. } => {
                return Err(refused(req, &format!("whose partition \"{}\" is itself partitioned", part.name), at))
            }
        };
        children.push(child);
        targets.push(PartitionTarget { relation: part.name.clone(), alias: alias_name, how, shown });
    }
    let child = if children.len() == 1 {
        children.pop().unwrap_or(Plan::EmptyResult { columns: vec![], rels: vec![], joined: false })
    } else {
        Plan::Append { children, prune: None, ordered: false }
    };
    Ok((child, targets))
}

/// The partition a member scans, and its alias: through the Results of its Filter.
fn member_relation(plan: &Plan) -> Option<(String, Option<ScanName>)> {
    match plan {
        Plan::ForeignScan(f) => Some((f.relation.clone(), f.alias.clone())),
        Plan::SeqScan { table, alias, .. }
        | Plan::IndexScan { table, alias, .. }
        | Plan::BitmapHeapScan { table, alias, .. } => Some((table.clone(), alias.clone())),
        Plan::Result { child, targets: None, .. } => member_relation(child),
        _ => None,
    }
}

/// A lone partition's scan, named `parent_1` as PostgreSQL names the one child of
/// the target (a SELECT names it after the parent).
fn rename_single(plan: &mut Plan, parent: &str) {
    let alias = match plan {
        Plan::ForeignScan(f) => &mut f.alias,
        Plan::SeqScan { alias, .. } | Plan::IndexScan { alias, .. } | Plan::BitmapHeapScan { alias, .. } => alias,
        Plan::Result { child, targets: None, .. } => return rename_single(child, parent),
        _ => return,
    };
    match alias {
        Some(a) if a.alias == parent => a.alias = format!("{parent}_1"),
        Some(_) => {}
        None => {
            *alias = Some(ScanName {
                alias: format!("{parent}_1"),
                parent: None,
                member: true,
                tlist: None,
                direct: false,
                alone: false,
                unqualified: false,
            })
        }
    }
}

/// The SET values as PostgreSQL's EXPLAIN shows them in a member's Output: in the
/// columns' order, over the partition's qualified columns, a text constant typed.
fn shown_sets(req: &PartitionedRequest, qualified: &[String]) -> Vec<String> {
    let mut sets: Vec<&(usize, Expr)> = req.sets.iter().collect();
    sets.sort_by_key(|(c, _)| *c);
    sets.iter().map(|(_, e)| e.to_sql(qualified)).collect()
}

/// A foreign modify's scan prints the modify's row (`RowMark`'s Output).
fn set_row_mark(child: &mut Plan, shown: &[String]) {
    match child {
        Plan::ForeignScan(f) => f.remote.row_mark = Some(RowMark { shown: shown.to_vec() }),
        Plan::Result { child, .. } => set_row_mark(child, shown),
        _ => {}
    }
}

/// A partition must have its parent's columns, in order (its rows are read as the
/// parent's).
fn same_columns(req: &PartitionedRequest, part: &Relation, at: Location) -> Result<(), FrontError> {
    let rel = req.rel;
    let same = part.columns.len() == rel.columns.len()
        && part.columns.iter().zip(&rel.columns).all(|(a, b)| a.name == b.name && a.ty == b.ty);
    if same {
        Ok(())
    } else {
        Err(refused(req, &format!("whose partition \"{}\" has other columns than its parent", part.name), at))
    }
}

/// An UPDATE of a partition key column of a local partition: PostgreSQL checks the
/// new row against the partition's bound and moves it to another partition (a DELETE
/// and an INSERT routed anew), which the sandbox does not.
fn refuse_key_update(req: &PartitionedRequest, part: &Relation, at: Location) -> Result<(), FrontError> {
    let RelKind::Partitioned { key, .. } = &req.rel.kind else { return Ok(()) };
    match req.sets.iter().find(|(c, _)| key.contains(c)) {
        Some((c, _)) => Err(refused(
            req,
            &format!(
                "setting its partition key column \"{}\" in the local partition \"{}\" (moving a row to another \
                 partition)",
                req.rel.columns[*c].name, part.name
            ),
            at,
        )),
        None => Ok(()),
    }
}

fn refused(req: &PartitionedRequest, what: &str, at: Location) -> FrontError {
    FrontError::unsupported(format!("{} of \"{}\" {what}", req.operation.word().to_uppercase(), req.rel.name), at)
}

#[cfg(test)]
mod tests {
    use crate::clock::Clock;
    use crate::coordinator_sql::SqlScenario;
    use crate::instrument::ExplainOptions;
    use crate::knobs::{Knobs, Source};

    /// pt over b: pt1 [0, 30) on s1, pt2 [30, 60) on s2, pt3 [60, 90) local; a = b % 10.
    const SETUP: &str = "-- @shard s1\ncreate table t1 (a int, b int, c text);\n\
        insert into t1 select i % 10, i, 'x' from generate_series(0, 29) i;\n\
        -- @shard s2\ncreate table t2 (a int, b int, c text);\n\
        insert into t2 select i % 10, i, 'y' from generate_series(30, 59) i;\n\
        -- @coordinator\ncreate extension postgres_fdw;\n\
        create server s1 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');\n\
        create server s2 foreign data wrapper postgres_fdw options (dbname 'postgres', async_capable 'true');\n\
        create table pt (a int, b int, c text) partition by range (b);\n\
        create foreign table pt1 partition of pt for values from (0) to (30) server s1 options (table_name 't1');\n\
        create foreign table pt2 partition of pt for values from (30) to (60) server s2 options (table_name 't2');\n\
        create table pt3 partition of pt for values from (60) to (90);\n\
        insert into pt3 select i % 10, i, 'z' from generate_series(60, 89) i;\n";

    struct Ran {
        explain: String,
        rows: Vec<String>,
        logs: Vec<Vec<String>>,
        /// Every table's rows afterwards, sorted: t1, t2 on the shards (those the
        /// statement used), pt3 locally.
        tables: Vec<(String, Vec<String>)>,
    }

    fn run(query: &str, async_mode: bool) -> Ran {
        let s = SqlScenario::load(SETUP).unwrap().with_query(query).unwrap();
        let sc = s.scenario(&Knobs::default(), Source::Json).unwrap();
        let mut r = sc.start(async_mode, Clock::virtual_clock(), false).unwrap();
        r.keep_rows = true;
        r.run_to_end().unwrap();
        let text = |t: &crate::types::Table| {
            let mut v: Vec<String> =
                (0..t.nrows()).map(|i| t.row(i).iter().map(|d| d.to_string()).collect::<Vec<_>>().join("|")).collect();
            v.sort();
            v
        };
        let mut tables: Vec<(String, Vec<String>)> =
            r.host.servers.iter().flat_map(|s| s.catalog.tables.iter().map(|t| (t.name.clone(), text(t)))).collect();
        let mut local = crate::types::Catalog::default();
        for rel in &s.cluster.nodes[0].relations {
            if let super::super::catalog::RelKind::Table(t) = &rel.kind {
                local.add_shared(t.clone());
            }
        }
        r.es.local_changes.apply(&mut local);
        tables.push(("pt3".into(), text(local.get("pt3").unwrap())));
        Ran {
            explain: r.explain_text_with(&ExplainOptions::POSTGRES_VERBOSE),
            rows: r.rows.iter().map(|x| x.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("|")).collect(),
            logs: r.host.servers.iter().map(|s| s.statement_log().into_iter().map(|(_, l)| l).collect()).collect(),
            tables,
        }
    }

    /// The plan's lines without the times (`(actual rows=… loops=…)` kept), and
    /// without the type of a text constant in a Filter (the sandbox's filters do not
    /// write it: a difference of every scan, in the corpus's ledger).
    fn lines(explain: &str) -> Vec<String> {
        explain
            .lines()
            .take_while(|l| !l.starts_with("Planning Time"))
            .map(|l| match (l.find("(actual time="), l.find(" rows=")) {
                (Some(a), Some(r)) => format!("{}(actual{}", &l[..a], &l[r..]),
                _ => l.to_string(),
            })
            .map(|l| if l.trim_start().starts_with("Filter:") { l.replace("'::text", "'") } else { l })
            .collect()
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn update_of_foreign_and_local_partitions() {
        // PostgreSQL 15's EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF), run.
        let expected = [
            "Update on public.pt (actual rows=9 loops=1)",
            "  Output: pt_1.a, (pt_1.b + 1)",
            "  Foreign Update on public.pt1 pt_1",
            "  Foreign Update on public.pt2 pt_2",
            "  Update on public.pt3 pt_3",
            "  ->  Append (actual rows=9 loops=1)",
            "        ->  Foreign Update on public.pt1 pt_1 (actual rows=3 loops=1)",
            "              Remote SQL: UPDATE public.t1 SET c = 'q'::text WHERE ((a = 5)) RETURNING a, b",
            "        ->  Foreign Update on public.pt2 pt_2 (actual rows=3 loops=1)",
            "              Remote SQL: UPDATE public.t2 SET c = 'q'::text WHERE ((a = 5)) RETURNING a, b",
            "        ->  Seq Scan on public.pt3 pt_3 (actual rows=3 loops=1)",
            "              Output: 'q'::text, pt_3.tableoid, pt_3.ctid, NULL::record",
            "              Filter: (pt_3.a = 5)",
            "              Rows Removed by Filter: 27",
        ];
        for async_mode in [false, true] {
            let r = run("update pt set c = 'q' where a = 5 returning a, b + 1;", async_mode);
            assert_eq!(lines(&r.explain), lines(&expected.join("\n")), "{}", r.explain);
            assert_eq!(r.rows, ["5|6", "5|16", "5|26", "5|36", "5|46", "5|56", "5|66", "5|76", "5|86"]);
            for (k, log) in r.logs.iter().enumerate() {
                let sent = format!(
                    "execute <unnamed>: UPDATE public.t{} SET c = 'q'::text WHERE ((a = 5)) RETURNING a, b",
                    k + 1
                );
                assert_eq!(log[6..], [sent.as_str(), "statement: COMMIT TRANSACTION"], "{log:#?}");
            }
            for (_, t) in &r.tables {
                assert_eq!(t.len(), 30);
                let changed: Vec<&String> = t.iter().filter(|x| x.ends_with("|q")).collect();
                assert_eq!(changed.len(), 3, "{t:?}");
                assert!(changed.iter().all(|x| x.starts_with("5|")), "{t:?}");
            }
        }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn a_local_filter_makes_the_foreign_partitions_foreign_modifies() {
        let expected = [
            "Update on public.pt (actual rows=9 loops=1)",
            "  Output: pt_1.a, pt_1.b, pt_1.c",
            "  Foreign Update on public.pt1 pt_1",
            "    Remote SQL: UPDATE public.t1 SET c = $2 WHERE ctid = $1 RETURNING a, b, c",
            "  Foreign Update on public.pt2 pt_2",
            "    Remote SQL: UPDATE public.t2 SET c = $2 WHERE ctid = $1 RETURNING a, b, c",
            "  Update on public.pt3 pt_3",
            "  ->  Append (actual rows=9 loops=1)",
            "        ->  Async Foreign Scan on public.pt1 pt_1 (actual rows=3 loops=1)",
            "              Output: 'q'::text, pt_1.tableoid, pt_1.ctid, pt_1.*",
            "              Filter: ((pt_1.c || (pt_1.b)::text) <> 'zz'::text)",
            "              Remote SQL: SELECT a, b, c, ctid FROM public.t1 WHERE ((a = 5)) FOR UPDATE",
            "        ->  Async Foreign Scan on public.pt2 pt_2 (actual rows=3 loops=1)",
            "              Output: 'q'::text, pt_2.tableoid, pt_2.ctid, pt_2.*",
            "              Filter: ((pt_2.c || (pt_2.b)::text) <> 'zz'::text)",
            "              Remote SQL: SELECT a, b, c, ctid FROM public.t2 WHERE ((a = 5)) FOR UPDATE",
            "        ->  Seq Scan on public.pt3 pt_3 (actual rows=3 loops=1)",
            "              Output: 'q'::text, pt_3.tableoid, pt_3.ctid, NULL::record",
            "              Filter: ((pt_3.a = 5) AND ((pt_3.c || (pt_3.b)::text) <> 'zz'::text))",
            "              Rows Removed by Filter: 27",
        ];
        let r = run("update pt set c = 'q' where a = 5 and c || b <> 'zz' returning *;", true);
        assert_eq!(lines(&r.explain), lines(&expected.join("\n")), "{}", r.explain);
        let mut rows = r.rows.clone();
        rows.sort();
        assert_eq!(rows, ["5|15|q", "5|25|q", "5|35|q", "5|45|q", "5|55|q", "5|5|q", "5|65|q", "5|75|q", "5|85|q"]);
        // PostgreSQL 15 returns the local partition's rows first (its scan runs while
        // the async requests are out).
        assert_eq!(r.rows[..3], ["5|65|q", "5|75|q", "5|85|q"], "{:?}", r.rows);
        for (k, log) in r.logs.iter().enumerate() {
            let prep = format!("pgsql_fdw_prep_{}", k + 1);
            let updates = log.iter().filter(|l| l.starts_with(&format!("execute {prep}: UPDATE"))).count();
            assert_eq!(updates, 3, "{log:#?}");
            let dealloc = log.iter().position(|l| *l == format!("statement: DEALLOCATE {prep}"));
            let close = log.iter().position(|l| l.starts_with("statement: CLOSE"));
            assert!(dealloc.is_some() && dealloc < close, "{log:#?}");
        }
        for (_, t) in &r.tables {
            assert_eq!(t.iter().filter(|x| x.ends_with("|q")).count(), 3, "{t:?}");
        }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn delete_pruned_to_the_local_partition_and_across_all() {
        let r = run("delete from pt where b > 85;", false);
        let expected = [
            "Delete on public.pt (actual rows=0 loops=1)",
            "  Delete on public.pt3 pt_1",
            "  ->  Seq Scan on public.pt3 pt_1 (actual rows=4 loops=1)",
            "        Output: pt_1.tableoid, pt_1.ctid",
            "        Filter: (pt_1.b > 85)",
            "        Rows Removed by Filter: 26",
        ];
        assert_eq!(lines(&r.explain), lines(&expected.join("\n")), "{}", r.explain);
        assert_eq!(r.tables, [("pt3".to_string(), r.tables[0].1.clone())]);
        assert_eq!(r.tables[0].1.len(), 26);
        assert!(r.logs.is_empty(), "{:?}", r.logs);
        let r = run("delete from pt where a = 5 and c || b <> 'zz' returning b;", true);
        assert!(
            r.explain.contains("    Remote SQL: DELETE FROM public.t2 WHERE ctid = $1 RETURNING b\n"),
            "{}",
            r.explain
        );
        assert!(r.explain.contains("Output: pt_2.tableoid, pt_2.ctid\n"), "{}", r.explain);
        assert!(r.explain.contains("Output: pt_3.tableoid, pt_3.ctid\n"), "{}", r.explain);
        assert_eq!(r.rows.len(), 9);
        assert_eq!(r.tables.len(), 3);
        assert!(
            r.tables.iter().all(|(_, t)| t.len() == 27 && !t.iter().any(|x| x.starts_with("5|"))),
            "{:?}",
            r.tables
        );
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn moving_a_row_of_a_local_partition_is_refused_by_name() {
        let base = SqlScenario::load(SETUP).unwrap();
        let e = base.with_query("update pt set b = b + 1 where a = 3;").unwrap().plan().unwrap_err();
        assert!(e.to_string().contains("partition key column \"b\" in the local partition \"pt3\""), "{e}");
        // Pruned to the foreign partitions, the key is the remote server's to change.
        assert!(base.with_query("update pt set b = b + 1 where b < 50;").unwrap().plan().is_ok());
    }
}
