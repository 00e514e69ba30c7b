//! postgres_fdw's `use_remote_estimate` on the coordinator: which foreign tables use
//! it (`postgresGetForeignRelSize`'s option lookup), and planning with the shards'
//! answers (the cost model's side is `plan::remote_estimate`).
//!
//! PostgreSQL's planner sends `EXPLAIN <remote query>` on the foreign server's
//! connection while it prices each path of such a table and waits for the answer.
//! The sandbox's planner never waits: [`plan_with_remote_estimates`] plans, takes the
//! EXPLAINs the cost model asked for and could not price yet, has the shards answer
//! them, and plans again until nothing is missing. A shard answers as PostgreSQL 15
//! would answer on it: the remote query planned and priced by the sandbox's planner
//! against the shard's own tables ([`explain_on_shard`]), its top line printed and
//! read back as `get_remote_estimate` reads it (costs to the cent, whole rows). The
//! final round's questions, in PostgreSQL's order, go on the wire before the query
//! runs (`scenario::PlanningExplain`).
//!
//! Invariants:
//! - the table's own `use_remote_estimate` overrides its server's (PostgreSQL 15's
//!   precedence); off by default;
//! - a plan priced with a question left unanswered is never returned: the loop ends
//!   when every question had its answer, or fails;
//! - a statement planned outside the loop (a prepared statement, DML, the setup's
//!   INSERT … SELECT) that would ask is refused by name ([`refuse_outside`]), never
//!   priced locally as if the option were off;
//! - a two-relation join asks what `postgresGetForeignPaths` asks for each foreign
//!   relation: its scan ordered by the join key and its scan parameterized by the
//!   join clause, the parameter written `((SELECT null::integer)::integer)`, which
//!   the shard plans as an InitPlan whose value is unknown ([`explain_on_shard`]);
//! - a join postgres_fdw pushes down to one server asks its own remote query
//!   (`postgresGetForeignJoinPaths`' bare join path) and, with an ORDER BY of its
//!   columns, its ordered variant, after the relations' questions; the join uses
//!   remote estimates when any of its relations does (`merge_fdw_options`);
//! - what the sandbox has not matched with PostgreSQL 15's wire sequence is refused:
//!   an aggregate or LIMIT pushed down (`postgresGetForeignUpperPaths`' EXPLAINs, also
//!   over a pushed-down join); a scan with a correlated SubPlan's parameter plans the
//!   statement locally;
//! - a plain EXPLAIN sends the same planning EXPLAINs and commits them
//!   (`SqlScenario::plan_only_run`).

use super::catalog::{Cluster, Node, RelKind};
use super::planner::{plan_query, Planned};
use super::statement::{parse_statements, Stmt};
use super::FrontError;
use crate::plan::costsize::{cost_plan, CostParams, Estimate};
use crate::plan::remote_estimate::{
    parse_top_line, top_line, RemoteAnswer, RemoteExplain, Variant, JOIN_RELATION_SEPARATOR,
};
use crate::scenario::{PlanningExplain, ServerSpec};
use sqlparser::tokenizer::Location;

/// Rounds of planning before the answers must have settled (each round can only ask
/// for the paths the previous answers made worth pricing; two suffice in practice).
const MAX_ROUNDS: usize = 8;

const NOWHERE: Location = Location { line: 0, column: 0 };

/// Does the foreign table `relation` of `node` price its scans by remote EXPLAIN?
/// The table's option if it has one, else its server's, else off.
pub fn uses_remote_estimate(node: &Node, relation: &str) -> Option<String> {
    let rel = node.relation(relation)?;
    let RelKind::Foreign { server, options, .. } = &rel.kind else { return None };
    let own = options.iter().find(|(k, _)| k == "use_remote_estimate").map(|(_, v)| v.as_str());
    let on = own
        .or_else(|| node.server(server).and_then(|s| s.option("use_remote_estimate")))
        .and_then(super::settings::parse_bool)
        .unwrap_or(false);
    on.then(|| server.clone())
}

/// The cost model's question for `relation`'s scan with remote query `sql`
/// (`CostCatalog::remote_estimate` of the coordinator).
pub fn ask(node: &Node, relation: &str, sql: &str, variant: Variant) -> RemoteAnswer {
    let server = match variant {
        // A pushed-down join (`relation` names its relations): it uses remote
        // estimates when any of its relations does (`merge_fdw_options`); they are
        // all on one server.
        Variant::Join | Variant::JoinOrdered | Variant::Upper | Variant::OtherParam
            if relation.contains(JOIN_RELATION_SEPARATOR) =>
        {
            relation.split(JOIN_RELATION_SEPARATOR).find_map(|r| uses_remote_estimate(node, r))
        }
        _ => uses_remote_estimate(node, relation),
    };
    match server {
        None => RemoteAnswer::Local,
        Some(server) => node.remote_estimates.ask(RemoteExplain {
            relation: relation.to_string(),
            server,
            sql: sql.to_string(),
            variant,
        }),
    }
}

/// Plans with `plan` until every remote estimate it asks for is answered by the
/// cluster's shards; the plan of the last round.
pub fn plan_with_remote_estimates(
    cluster: &Cluster,
    plan: &dyn Fn() -> Result<Planned, FrontError>,
) -> Result<Planned, FrontError> {
    let r = &cluster.coordinator().remote_estimates;
    r.reset();
    r.arm(true);
    let result = rounds(cluster, plan);
    r.arm(false);
    result
}

fn rounds(cluster: &Cluster, plan: &dyn Fn() -> Result<Planned, FrontError>) -> Result<Planned, FrontError> {
    let r = &cluster.coordinator().remote_estimates;
    for _ in 0..MAX_ROUNDS {
        r.begin_round();
        let planned = plan()?;
        // The final plan's scans are priced too: a plan chosen by rule asked nothing
        // yet, and EXPLAIN prints its estimates (PostgreSQL prices every base
        // relation, `set_base_rel_sizes`).
        let coord = cluster.coordinator();
        let params = CostParams::from_settings(&|name| coord.setting(name).map(str::to_string));
        cost_plan(&planned.plan, coord, &params);
        if r.asked().iter().any(|q| q.variant == Variant::OtherParam) {
            return plan_locally(cluster, plan);
        }
        let missing = r.missing();
        if missing.is_empty() {
            check_supported(&r.asked())?;
            return Ok(planned);
        }
        for q in missing {
            let e = explain_on_shard(cluster, &q)?;
            r.answer(&q.server, &q.sql, e);
        }
    }
    Err(FrontError::at("internal error: the remote estimates did not settle", NOWHERE))
}

/// `cost` (a costing of a plan made by [`plan_with_remote_estimates`]) with the remote
/// estimates it asks for answered by the shards: a plan made on another copy of the
/// cluster (whose answers are not in this one) is priced as its planning priced it,
/// not with local estimates in their place. A plan planned locally (a scan with
/// another parameter, [`plan_locally`]) stays priced locally.
pub fn cost_with_answers<T>(cluster: &Cluster, cost: &dyn Fn() -> T) -> Result<T, FrontError> {
    let r = &cluster.coordinator().remote_estimates;
    for _ in 0..MAX_ROUNDS {
        r.begin_round();
        let out = cost();
        let asked = r.asked();
        let missing = r.missing();
        r.begin_round();
        if missing.is_empty() || asked.iter().any(|q| q.variant == Variant::OtherParam) {
            return Ok(out);
        }
        for q in missing {
            let e = explain_on_shard(cluster, &q)?;
            r.answer(&q.server, &q.sql, e);
        }
    }
    Err(FrontError::at("internal error: the remote estimates did not settle", NOWHERE))
}

/// A scan with a parameter other than a Nested Loop's (a correlated SubPlan's) over
/// a table with remote estimates: the statement is planned with local estimates, no
/// EXPLAIN sent (the departure settings.rs states): pricing some scans remotely and
/// others locally would weigh the paths on two scales.
fn plan_locally(cluster: &Cluster, plan: &dyn Fn() -> Result<Planned, FrontError>) -> Result<Planned, FrontError> {
    let r = &cluster.coordinator().remote_estimates;
    r.reset();
    r.set_local_only(true);
    let planned = plan();
    r.set_local_only(false);
    r.begin_round();
    planned
}

/// A planning outside [`plan_with_remote_estimates`] that asked for a remote
/// estimate: refused by name (its plan was priced locally).
pub fn refuse_outside(node: &Node, at: Location) -> Result<(), FrontError> {
    let asked = node.remote_estimates.asked_unarmed();
    match asked.first() {
        None => Ok(()),
        Some(q) => Err(FrontError::unsupported(
            format!(
                "use_remote_estimate of {} in this statement (only a query of its own is planned with the shards' \
                 EXPLAIN)",
                relation_name(&q.relation)
            ),
            at,
        )),
    }
}

/// How a message names the relation of a question: `foreign table "f"`, or for a
/// pushed-down join `the join of foreign tables f2, f1`.
fn relation_name(relation: &str) -> String {
    match relation.contains(JOIN_RELATION_SEPARATOR) {
        true => {
            let names: Vec<&str> = relation.split(JOIN_RELATION_SEPARATOR).collect();
            format!("the join of foreign tables {}", names.join(", "))
        }
        false => format!("foreign table \"{relation}\""),
    }
}

/// What the sandbox has matched with PostgreSQL 15's planning EXPLAINs: scans of
/// foreign tables (and partitions) with their quals, in any order, the base
/// relations of joins and two-relation joins pushed down; not pushed-down aggregates
/// or LIMITs.
fn check_supported(asked: &[RemoteExplain]) -> Result<(), FrontError> {
    if let Some(q) = asked.iter().find(|q| q.variant == Variant::Upper) {
        if q.relation.contains(JOIN_RELATION_SEPARATOR) {
            return Err(FrontError::unsupported(
                format!(
                    "use_remote_estimate of {} with an aggregate or LIMIT pushed down to its server (postgres_fdw's \
                     upper-relation EXPLAINs)",
                    relation_name(&q.relation)
                ),
                NOWHERE,
            ));
        }
        return Err(FrontError::unsupported(
            format!(
                "use_remote_estimate of foreign table \"{}\" with an aggregate or LIMIT pushed down to its server \
                 (postgres_fdw's upper-relation EXPLAINs)",
                q.relation
            ),
            NOWHERE,
        ));
    }
    // A join is planned with the base relations' remote estimates; postgres_fdw's
    // parameterized variants (a Nested Loop's inner scans, `paramfdw`) are priced
    // locally and their EXPLAINs are not sent: the departure settings.rs states.
    Ok(())
}

/// The shard's answer to `EXPLAIN <q.sql>`: the query planned and priced on the
/// shard's node as PostgreSQL 15 plans it there, its top line as EXPLAIN prints it
/// and `get_remote_estimate` reads it back.
pub fn explain_on_shard(cluster: &Cluster, q: &RemoteExplain) -> Result<Estimate, FrontError> {
    let fail = |m: String| FrontError::at(format!("EXPLAIN on server \"{}\": {m}", q.server), NOWHERE);
    let n = cluster.node_index(&q.server).filter(|&n| n > 0).ok_or_else(|| {
        fail(format!(
            "server \"{}\" is not a shard of this scenario (add a section `-- @shard {}`)",
            q.server, q.server
        ))
    })?;
    let shard = &cluster.nodes[n];
    let (sql, init_plans) = placeholders_as_params(&q.sql);
    let stmts = parse_statements(&sql, 1).map_err(|e| fail(e.message))?;
    let [st] = stmts.as_slice() else { return Err(fail("not one statement".into())) };
    let Stmt::Select(query) = &st.stmt else { return Err(fail("not a SELECT".into())) };
    let mut query = query.clone();
    unnest_joined_from(&mut query);
    let planned = plan_query(shard, &query, &sql).map_err(|e| fail(e.message))?;
    let params = CostParams::from_settings(&|name| shard.setting(name).map(str::to_string));
    let mut top = *cost_plan(&planned.plan, shard, &params).first().ok_or_else(|| fail("no plan".into()))?;
    // Each placeholder is an InitPlan (a Result of one row, cpu_tuple_cost) charged
    // to the top node's startup and total (`SS_charge_for_initplans`).
    let init_cost = init_plans as f64 * params.cpu_tuple_cost;
    top.startup += init_cost;
    top.total += init_cost;
    parse_top_line(&answer_line(&top)).ok_or_else(|| fail("could not interpret EXPLAIN output".into()))
}

/// A pushed-down join's FROM as deparse.c writes it, `(t2 r1 INNER JOIN t1 r2 ON …)`,
/// read without its parentheses: the same join, which the planner's join search
/// takes as FROM's list of joins (a parenthesized join at the left of another,
/// `((a JOIN b) JOIN c)`, is that join list extended: joined left to right as
/// written, it is the same join).
fn unnest_joined_from(query: &mut sqlparser::ast::Query) {
    use sqlparser::ast::{SetExpr, TableFactor};
    let SetExpr::Select(select) = query.body.as_mut() else { return };
    let [from] = select.from.as_mut_slice() else { return };
    while let TableFactor::NestedJoin { table_with_joins, alias: None } = &from.relation {
        let inner = table_with_joins.as_ref().clone();
        let outer_joins = std::mem::take(&mut from.joins);
        from.relation = inner.relation;
        from.joins = inner.joins.into_iter().chain(outer_joins).collect();
    }
}

/// The remote statement with each of postgres_fdw's placeholders for a parameter
/// (`((SELECT null::T)::T)`, `printRemotePlaceholder`) written `$n::T`, and their
/// number. The shard plans the placeholder as an InitPlan whose value planning does
/// not know: as a generic plan's parameter (`var = $n` is `var_eq_non_const`, an
/// index may look it up), the InitPlan's cost charged by the caller.
fn placeholders_as_params(sql: &str) -> (String, usize) {
    const OPEN: &str = "((SELECT null::";
    let (mut out, mut rest, mut n) = (String::new(), sql, 0);
    while let Some(at) = rest.find(OPEN) {
        let after = &rest[at + OPEN.len()..];
        let Some((ty, tail)) = after.split_once(")::") else { break };
        let close = format!("{ty})");
        let Some(tail) = tail.strip_prefix(close.as_str()) else { break };
        n += 1;
        out.push_str(&rest[..at]);
        out.push_str(&format!("${n}::{ty}"));
        rest = tail;
    }
    out.push_str(rest);
    (out, n)
}

/// The line a shard's EXPLAIN answers with (its plan's top line; postgres_fdw reads
/// no other).
pub fn answer_line(e: &Estimate) -> String {
    top_line("Plan", e)
}

/// The last planning's EXPLAINs, in PostgreSQL's order, on the servers that answer
/// them (`servers[i]` is the server `names[i]`): sent before the query runs.
pub fn planning_explains(node: &Node, names: &[String], servers: &mut [ServerSpec]) -> Result<(), FrontError> {
    for (order, q) in node.remote_estimates.wire_order().into_iter().enumerate() {
        let lost = || {
            FrontError::at(format!("internal error: no answer to EXPLAIN {} on server {}", q.sql, q.server), NOWHERE)
        };
        let i = names.iter().position(|n| *n == q.server).ok_or_else(lost)?;
        let e = node.remote_estimates.known(&q.server, &q.sql).ok_or_else(lost)?;
        let spec = servers.get_mut(i).ok_or_else(lost)?;
        spec.planning.push(PlanningExplain { order, statement: q.statement(), answer: answer_line(&e) });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::placeholders_as_params;

    /// deparse.c's parenthesized join is read as FROM's list of joins (the planner's
    /// join search refuses a parenthesized join).
    #[test]
    fn a_pushed_down_joins_from_is_read_without_its_parentheses() {
        use crate::coordinator_sql::statement::{parse_statements, Stmt};
        let sql = "SELECT r1.a, r3.c FROM ((public.t2 r1 INNER JOIN public.t1 r2 ON (((r1.a = r2.b)))) \
                   LEFT JOIN public.t3 r3 ON (((r2.a = r3.a))))";
        let stmts = parse_statements(sql, 1).unwrap();
        let Stmt::Select(query) = &stmts[0].stmt else { panic!("a SELECT") };
        let mut query = query.clone();
        super::unnest_joined_from(&mut query);
        let sqlparser::ast::SetExpr::Select(select) = query.body.as_ref() else { panic!("a SELECT") };
        let [from] = select.from.as_slice() else { panic!("one FROM item") };
        assert_eq!(from.relation.to_string(), "public.t2 AS r1");
        assert_eq!(from.joins.len(), 2);
        assert_eq!(from.joins[1].relation.to_string(), "public.t3 AS r3");
    }

    #[test]
    fn postgres_fdw_placeholders_become_parameters() {
        let sql = "SELECT a, b, c FROM public.t1 WHERE ((((SELECT null::integer)::integer) = b)) AND ((a < 90))";
        let (out, n) = placeholders_as_params(sql);
        assert_eq!(out, "SELECT a, b, c FROM public.t1 WHERE (($1::integer = b)) AND ((a < 90))");
        assert_eq!(n, 1);
        let (out, n) = placeholders_as_params("SELECT a FROM t WHERE ((b = ((SELECT null::text)::text)))");
        assert_eq!((out.as_str(), n), ("SELECT a FROM t WHERE ((b = $1::text))", 1));
        assert_eq!(placeholders_as_params("SELECT a FROM t"), ("SELECT a FROM t".to_string(), 0));
    }
}
