//! Behaviours: what the sandbox does on the wire and in Append, compared with
//! PostgreSQL 15.
//!
//! `pg15` (the default everywhere) is exactly what PostgreSQL 15's postgres_fdw and
//! nodeAppend.c do. Every way the sandbox does better is a named knob, off in `pg15`;
//! the preset `improved` turns them all on — all but the one teaching knob,
//! `no_descendant_check`, which is not an improvement: it reproduces the reentrancy
//! hazard of the 2016 framework (seed 000, Amit Khandekar) and ends such a run with an
//! error. `improved` includes `async_through_nodes` (the guarded design of
//! `executor/async_through.rs`): it returns the same rows as `pg15`, only overlapping
//! more remote waits, so it belongs with the other improvements. The page lists every knob that is on
//! ("Differences from PostgreSQL 15") with the reason below.
//!
//! Invariants: `Behaviour::pg15()` has every knob off, and every run uses it unless a
//! knob says otherwise; `KNOBS` is the one list of knobs (the CLI's flags, the URL's
//! parameters and the page's switches are generated from it, in its order); a run's
//! behaviour is applied in one place (`Scenario::start_on` → `EState::set_behaviour`).
//! `pg15` is checked against a real PostgreSQL 15 coordinator (`tests/pg15_fidelity.rs`);
//! each knob's departure is the `reason` the page shows.

use serde::{Deserialize, Serialize};

/// A named preset of the knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// PostgreSQL 15: every knob off.
    #[default]
    Pg15,
    /// Every knob on.
    Improved,
}

impl Preset {
    pub fn parse(s: &str) -> Result<Preset, String> {
        match s {
            "pg15" => Ok(Preset::Pg15),
            "improved" => Ok(Preset::Improved),
            _ => Err(format!("unknown behaviour \"{s}\" (expected pg15 or improved)")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Preset::Pg15 => "pg15",
            Preset::Improved => "improved",
        }
    }
}

/// The resolved knobs of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Behaviour {
    /// Send the next FETCH as soon as a batch arrives, so it is in flight while the
    /// batch is consumed (PostgreSQL 15 sends it only when the batch is used up).
    pub fetch_ahead: bool,
    /// Startup, BEGIN, DECLARE and the first FETCH in one write, not waited for
    /// (PostgreSQL 15: each a round trip, server after server, at ExecInit and in
    /// fetch_more_data_begin).
    pub pipelined_setup: bool,
    /// COMMIT on every connection at once at transaction end: postgres_fdw's own
    /// `parallel_commit` server option (new in PostgreSQL 15, off by default), which
    /// changes only the COMMITs sent by `pgfdw_xact_callback`, nothing else.
    pub parallel_commit: bool,
    /// CLOSE on every connection at once at ExecEnd. Not a PostgreSQL option: in
    /// PostgreSQL 15 each `postgresEndForeignScan` closes its cursor (`close_cursor`)
    /// and waits for the answer, scan after scan, whatever `parallel_commit` says.
    pub parallel_close: bool,
    /// Several FETCHes of different scans in flight on one shared connection
    /// (PostgreSQL 15: one query at a time, `pendingAreq`).
    pub pipeline: bool,
    /// Append returns async results first-in-first-out and re-requests a child as soon
    /// as its row is taken (PostgreSQL 15: a stack, re-requests only when it is empty).
    pub fifo_results: bool,
    /// MergeAppend sends async requests to its ForeignScan children (the patch of
    /// seed 003, never committed: PostgreSQL 15's MergeAppend is synchronous).
    pub async_merge_append: bool,
    /// Hash Join, Nested Loop, Result, Agg, Sort and Limit pass async requests through
    /// to the Foreign Scans below them (`executor/async_through.rs`; PostgreSQL 15 runs
    /// a Foreign Scan asynchronously only as a direct child of an Append).
    pub async_through_nodes: bool,
    /// Teaching only, never in a preset: with `async_through_nodes`, a node waits for
    /// its child where it stands on every event of the query (the 2016 framework's
    /// ExecAsyncWaitForNode without Kyotaro Horiguchi's descendant check), so an event
    /// of another subtree re-enters a node that is executing: the run ends with the
    /// named error of `async_through::reentry`.
    pub no_descendant_check: bool,
}

/// One knob's name and what it changes, for the page and `--help`.
#[derive(Clone)]
pub struct KnobInfo {
    pub name: &'static str,
    pub reason: &'static str,
}

pub const KNOBS: &[KnobInfo] = &[
    KnobInfo {
        name: "fetch_ahead",
        reason: "the next FETCH is sent as soon as a batch arrives, so it travels while the batch is consumed; PostgreSQL 15 sends it only when the batch is used up",
    },
    KnobInfo {
        name: "pipelined_setup",
        reason: "startup, START TRANSACTION, DECLARE and the first FETCH go in one write, not waited for; PostgreSQL 15 makes each a round trip, server after server",
    },
    KnobInfo {
        name: "parallel_commit",
        reason: "COMMIT is sent on every connection at once at transaction end (postgres_fdw's parallel_commit server option, new in PostgreSQL 15 and off by default; it changes only the COMMITs); by default PostgreSQL 15 commits server after server",
    },
    KnobInfo {
        name: "parallel_close",
        reason: "CLOSE is sent on every connection at once at ExecEnd (no PostgreSQL option does this); PostgreSQL 15 closes the cursors scan after scan, each waited for, with or without parallel_commit",
    },
    KnobInfo {
        name: "pipeline",
        reason: "several scans' FETCHes are in flight on one shared connection; PostgreSQL 15 allows one query at a time (pendingAreq)",
    },
    KnobInfo {
        name: "fifo_results",
        reason: "Append hands out async rows first-in-first-out and re-requests a child as soon as its row is taken; PostgreSQL 15 keeps a stack and re-requests only when it is empty",
    },
    KnobInfo {
        name: "async_merge_append",
        reason: "MergeAppend asks every foreign child for its first row concurrently (the async MergeAppend patch of seed 003); PostgreSQL 15's MergeAppend reads its children one after another",
    },
    KnobInfo {
        name: "async_through_nodes",
        reason: "Hash Join, Nested Loop, Result, Agg, Sort and Limit pass async requests through to the Foreign Scans below them, so an Append over joins overlaps their remote waits (seed 000's design debate); PostgreSQL 15 runs a Foreign Scan asynchronously only as a direct child of an Append",
    },
    KnobInfo {
        name: "no_descendant_check",
        reason: "teaching only (never in a preset): with async_through_nodes, a node waits for its child on every event of the query, without the 2016 patch's descendant check, so an Append can be re-entered while it executes its child (seed 000's hazard): the run ends with an error; PostgreSQL 15 has no such wait",
    },
];

impl Behaviour {
    pub fn pg15() -> Behaviour {
        Behaviour {
            fetch_ahead: false,
            pipelined_setup: false,
            parallel_commit: false,
            parallel_close: false,
            pipeline: false,
            fifo_results: false,
            async_merge_append: false,
            async_through_nodes: false,
            no_descendant_check: false,
        }
    }
    pub fn improved() -> Behaviour {
        Behaviour {
            fetch_ahead: true,
            pipelined_setup: true,
            parallel_commit: true,
            parallel_close: true,
            pipeline: true,
            fifo_results: true,
            async_merge_append: true,
            async_through_nodes: true,
            no_descendant_check: false,
        }
    }
    pub fn from_preset(p: Preset) -> Behaviour {
        match p {
            Preset::Pg15 => Behaviour::pg15(),
            Preset::Improved => Behaviour::improved(),
        }
    }

    /// The knob's value by name (names as in `KNOBS`).
    pub fn get(&self, name: &str) -> Option<bool> {
        Some(match name {
            "fetch_ahead" => self.fetch_ahead,
            "pipelined_setup" => self.pipelined_setup,
            "parallel_commit" => self.parallel_commit,
            "parallel_close" => self.parallel_close,
            "pipeline" => self.pipeline,
            "fifo_results" => self.fifo_results,
            "async_merge_append" => self.async_merge_append,
            "async_through_nodes" => self.async_through_nodes,
            "no_descendant_check" => self.no_descendant_check,
            _ => return None,
        })
    }

    /// Sets a knob by name; an unknown name is an error that lists the known ones.
    pub fn set(&mut self, name: &str, on: bool) -> Result<(), String> {
        let field = match name {
            "fetch_ahead" => &mut self.fetch_ahead,
            "pipelined_setup" => &mut self.pipelined_setup,
            "parallel_commit" => &mut self.parallel_commit,
            "parallel_close" => &mut self.parallel_close,
            "pipeline" => &mut self.pipeline,
            "fifo_results" => &mut self.fifo_results,
            "async_merge_append" => &mut self.async_merge_append,
            "async_through_nodes" => &mut self.async_through_nodes,
            "no_descendant_check" => &mut self.no_descendant_check,
            _ => {
                let names: Vec<&str> = KNOBS.iter().map(|k| k.name).collect();
                return Err(format!("unknown behaviour knob \"{name}\" (known: {})", names.join(", ")));
            }
        };
        *field = on;
        Ok(())
    }

    /// The knobs that are on, with what each changes (the page's "Differences from
    /// PostgreSQL 15" panel).
    pub fn differences(&self) -> Vec<&'static KnobInfo> {
        KNOBS.iter().filter(|k| self.get(k.name) == Some(true)).collect()
    }

    /// The preset this equals, if any ("pg15", "improved"), else "custom".
    pub fn label(&self) -> &'static str {
        if *self == Behaviour::pg15() {
            "pg15"
        } else if *self == Behaviour::improved() {
            "improved"
        } else {
            "custom"
        }
    }
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour::pg15()
    }
}
