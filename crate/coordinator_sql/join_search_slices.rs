//! A join search planned in slices (issue 20): the page plans a scenario file's query
//! on its main thread, which nothing may block for more than about 50 ms, while a
//! star of 8 relations costs thousands of paths (about 100 ms in wasm) and one of 11
//! tens of thousands. So the page plans it in calls of a few milliseconds
//! (`SqlLoader::plan` in the page's module), each of which plans the query from the
//! start again and finds its join searches where the last call left them.
//!
//! The protocol:
//!
//! 1. The caller holds a [`KeptSearches`] across its calls and runs each planning
//!    under [`KeptSearches::run`], with a clock (`out_of_time`) or without one.
//! 2. Each planning of the query (`SqlScenario::plan`) opens a [`KeptPlanning`]: its
//!    join searches (`JoinProblem::join_rel`) are numbered in the order they start,
//!    the same in every planning of the same loaded file, since planning is
//!    deterministic.
//! 3. The n-th search takes the n-th kept entry, if its signature (the relations,
//!    where the query says them, their level-1 paths' estimates) is the same: a
//!    finished search's relation of all its relations (its paths, shared), or a
//!    stopped one's join relations so far with where it stopped (`SearchCursor`: the
//!    level, the pairs of relations of that level and the next one to join, the
//!    subproblems already searched).
//! 4. With a clock, a search stops after a join relation once the clock says so: it
//!    is kept, the planning fails with an error no one sees, and `run` says it
//!    stopped; the caller calls again later. Without one, it runs to its end.
//!
//! Invariants: a kept search gives exactly what searching again would (the paths of
//! the same deterministic search; the sandbox's planner keeps no other state across
//! a search); a search that asked a remote estimate (`use_remote_estimate`) is never
//! stopped nor kept, since its questions must be asked again in each planning round,
//! in order (`remote_estimate`'s wire order); outside `run` and `KeptPlanning`,
//! nothing is kept and nothing stops.

use super::{JoinRels, RelInfo};
use std::cell::RefCell;

/// Where a stopped `standard_join_search` goes on: the levels built so far (level k:
/// the join relations of k initial relations, by index in `JoinRels`), the level
/// being built, its pairs of relations to join in the order `join_search_one_level`
/// takes them, and the next one.
pub(super) struct SearchCursor {
    pub(super) levels: Vec<Vec<usize>>,
    pub(super) level: usize,
    pub(super) pairs: Vec<(usize, usize)>,
    pub(super) next: usize,
    /// This level's pairs are `join_search_one_level`'s last-ditch clauseless ones.
    pub(super) last_ditch: bool,
}

/// A join search that stopped: its relations, the tops of the subproblems already
/// searched (`make_rel_from_joinlist`'s, in order), the search under way, and the
/// paths it had costed.
pub(super) struct StoppedSearch {
    pub(super) rels: JoinRels,
    pub(super) done: Vec<usize>,
    pub(super) cursor: SearchCursor,
    pub(super) costed: usize,
}

/// One join search's entry.
enum Entry {
    Stopped(StoppedSearch),
    /// Its relation of all its relations, and the paths it costed.
    Done(RelInfo, usize),
}

/// What tells one search from another of the same planning (a check: the n-th search
/// of a planning is the same search every time).
#[derive(Clone, PartialEq)]
pub(super) struct Signature {
    pub(super) names: Vec<String>,
    pub(super) at: (u64, u64),
    /// Each level-1 path's startup and total cost and rows (bits).
    pub(super) figures: Vec<u64>,
}

/// The join searches of one query kept between the calls that plan it (see the
/// module's doc).
#[derive(Default)]
pub struct KeptSearches {
    entries: Vec<Option<(Signature, Entry)>>,
    started: usize,
}

impl KeptSearches {
    /// Runs `f` with these searches kept (`f` plans the query: its plannings take up
    /// their searches where they were left); with `out_of_time`, a search stops after
    /// a join relation once it returns true. Returns `f`'s result, meaningless when
    /// a search stopped, and whether one did (then call again).
    pub fn run<T>(&mut self, out_of_time: Option<Box<dyn FnMut() -> bool>>, f: impl FnOnce() -> T) -> (T, bool) {
        let already = ACTIVE.with(|a| a.borrow().is_some());
        if already {
            // A nested run: the outer one keeps the searches.
            return (f(), false);
        }
        let kept = std::mem::take(self);
        ACTIVE.with(|a| *a.borrow_mut() = Some(Active { kept, out_of_time, planning: None, stopped: false }));
        /// Puts the searches back, also when `f` unwinds.
        struct Back<'k>(&'k mut KeptSearches, &'k mut bool);
        impl Drop for Back<'_> {
            fn drop(&mut self) {
                if let Some(a) = ACTIVE.with(|a| a.borrow_mut().take()) {
                    *self.0 = a.kept;
                    *self.1 = a.stopped;
                }
            }
        }
        let mut stopped = false;
        let out = {
            let _back = Back(self, &mut stopped);
            f()
        };
        (out, stopped)
    }

    /// The paths the kept searches have costed so far (for a progress line).
    pub fn paths_costed(&self) -> usize {
        self.entries
            .iter()
            .flatten()
            .map(|(_, e)| match e {
                Entry::Stopped(s) => s.costed,
                Entry::Done(_, costed) => *costed,
            })
            .sum()
    }

    /// How many searches ran from their start under `run`, kept or not (a planning
    /// that found all of its searches kept starts none).
    pub fn searches_started(&self) -> usize {
        self.started
    }
}

struct Active {
    kept: KeptSearches,
    out_of_time: Option<Box<dyn FnMut() -> bool>>,
    /// The open planning's next search number, if a planning is open.
    planning: Option<usize>,
    stopped: bool,
}

thread_local! {
    static ACTIVE: RefCell<Option<Active>> = const { RefCell::new(None) };
}

/// One planning of the query under `KeptSearches::run`: its searches are numbered
/// from 0 while it lives (a planning inside it numbers its own, then this one goes on).
pub struct KeptPlanning {
    outer: Option<Option<usize>>,
}

impl KeptPlanning {
    pub fn open() -> KeptPlanning {
        let outer = ACTIVE.with(|a| a.borrow_mut().as_mut().map(|a| a.planning.replace(0)));
        KeptPlanning { outer }
    }
}

impl Drop for KeptPlanning {
    fn drop(&mut self) {
        if let Some(outer) = self.outer {
            ACTIVE.with(|a| {
                if let Some(a) = a.borrow_mut().as_mut() {
                    a.planning = outer;
                }
            });
        }
    }
}

/// What a search finds kept when it starts.
pub(super) enum Found {
    /// Nothing kept (or nothing is kept here): search from the start.
    Nothing,
    Stopped(StoppedSearch),
    Done(RelInfo, usize),
}

/// A search's place among the kept ones: None outside a kept planning.
#[derive(Clone, Copy)]
pub(super) struct Slot(Option<usize>);

/// The search starting now: its slot, and what is kept for it.
pub(super) fn enter(sig: &Signature) -> (Slot, Found) {
    ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        let Some(a) = a.as_mut() else { return (Slot(None), Found::Nothing) };
        let Some(n) = a.planning.as_mut() else {
            a.kept.started += 1;
            return (Slot(None), Found::Nothing);
        };
        let slot = *n;
        *n += 1;
        let entries = &mut a.kept.entries;
        if entries.len() <= slot {
            entries.resize_with(slot + 1, || None);
        }
        let found = match entries[slot].take() {
            Some((s, Entry::Done(top, costed))) if s == *sig => {
                entries[slot] = Some((s, Entry::Done(top.clone(), costed)));
                Found::Done(top, costed)
            }
            Some((s, Entry::Stopped(stopped))) if s == *sig => Found::Stopped(stopped),
            _ => {
                a.kept.started += 1;
                Found::Nothing
            }
        };
        (Slot(Some(slot)), found)
    })
}

/// The search of `slot` stopped (kept, and `run` says so).
pub(super) fn keep_stopped(slot: Slot, sig: Signature, stopped: StoppedSearch) {
    with_slot(slot, |a, e| {
        *e = Some((sig, Entry::Stopped(stopped)));
        a.stopped = true;
    });
}

/// The search of `slot` finished with `top`.
pub(super) fn keep_done(slot: Slot, sig: Signature, top: &RelInfo, costed: usize) {
    with_slot(slot, |_, e| *e = Some((sig, Entry::Done(top.clone(), costed))));
}

fn with_slot(slot: Slot, f: impl FnOnce(&mut Active, &mut Option<(Signature, Entry)>)) {
    let Slot(Some(n)) = slot else { return };
    ACTIVE.with(|a| {
        if let Some(a) = a.borrow_mut().as_mut() {
            if let Some(mut e) = a.kept.entries.get_mut(n).map(std::mem::take) {
                f(a, &mut e);
                a.kept.entries[n] = e;
            }
        }
    });
}

/// Should the search of `slot` stop now? Only in a kept planning with a clock that
/// says so.
pub(super) fn out_of_time(slot: Slot) -> bool {
    if slot.0.is_none() {
        return false;
    }
    ACTIVE.with(|a| match a.borrow_mut().as_mut() {
        Some(Active { out_of_time: Some(clock), .. }) => clock(),
        _ => false,
    })
}

/// Is a planning under way with searches kept (the page's planning in slices, or the
/// session made after it)? The page then bounds a search by memory as the CLI does,
/// not by its main thread's time.
pub(super) fn kept_planning() -> bool {
    ACTIVE.with(|a| a.borrow().as_ref().is_some_and(|a| a.planning.is_some()))
}

/// The error a stopped search fails its planning with (`run` says it stopped: the
/// caller never shows it).
pub(super) fn stopped_error() -> super::FrontError {
    super::FrontError::new("the join search stopped for this slice of planning (it goes on at the next)", 0, 0)
}
