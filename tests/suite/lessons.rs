//! The workshop lessons (web/lessons/*.txt) against the runs they describe: every
//! question's answer, computed from the run, is one of its choices; every note's event
//! happens in the run (a note that never shows is a defect); every knob walk-through
//! changes the run against pg15.

use pgasync::clock::Clock;
use pgasync::demo::lesson::{self, NoteOn};
use pgasync::host::sim::SimHost;
use pgasync::knobs::Knobs;
use pgasync::run::QueryRun;
use pgasync::scenario::Scenario;
use wasm_bindgen_test::wasm_bindgen_test;

/// web/lessons/*.txt, embedded so that the suite runs where there is no file system
/// (wasm32); natively `the_page_index_lists_every_lesson` checks this is every file.
const LESSON_FILES: [(&str, &str); 8] = [
    ("web/lessons/AB.txt", include_str!("../../web/lessons/AB.txt")),
    ("web/lessons/C.txt", include_str!("../../web/lessons/C.txt")),
    ("web/lessons/D.txt", include_str!("../../web/lessons/D.txt")),
    ("web/lessons/E.txt", include_str!("../../web/lessons/E.txt")),
    ("web/lessons/H.txt", include_str!("../../web/lessons/H.txt")),
    ("web/lessons/M.txt", include_str!("../../web/lessons/M.txt")),
    ("web/lessons/R.txt", include_str!("../../web/lessons/R.txt")),
    ("web/lessons/X.txt", include_str!("../../web/lessons/X.txt")),
];

fn lessons() -> Vec<(String, lesson::Lesson)> {
    let mut out = Vec::new();
    for (path, text) in LESSON_FILES {
        let l = lesson::parse(text).unwrap_or_else(|e| panic!("{path}: {e}"));
        out.push((path.to_string(), l));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 8, "one lesson per seed scenario, and R and H (issue 18)");
    out
}

fn run(id: &str, k: &Knobs, async_mode: bool) -> QueryRun<SimHost> {
    let s = Scenario::build(id, k).unwrap_or_else(|e| panic!("{id}: {e}"));
    let mut r = s.start(async_mode, Clock::virtual_clock(), true).unwrap();
    r.es.trace_calls = true; // the Append's rows (a note's event), as the page's session records them
    r.run_to_end().unwrap_or_else(|e| panic!("{id}: {e}"));
    r
}

#[wasm_bindgen_test(unsupported = test)]
fn every_answer_is_a_choice_and_every_note_shows() {
    for (file, l) in lessons() {
        let k = l.scenario_knobs().unwrap_or_else(|e| panic!("{file}: {e}"));
        let r = run(&l.scenario, &k, l.async_mode);
        let labels = pgasync::demo::session::node_labels(&r.explain());
        for q in &l.questions {
            let a = lesson::answer(&q.answer, &r, &labels);
            assert!(q.choices.contains(&a), "{file}: \"{}\": the run answers {a}, not one of {:?}", q.ask, q.choices);
            println!("{file}: {} → {a}", q.ask);
        }
        let is_append = |n: usize| labels.get(n).is_some_and(|l| l == "Append");
        for n in &l.notes {
            if let NoteOn::Step { .. } = n.on {
                continue;
            }
            assert!(
                r.es.trace.events.iter().any(|e| lesson::note_matches(&n.on, e, &is_append)),
                "{file}: note {:?} never shows",
                n.on
            );
        }
        for (knob, _) in &l.knob_walks {
            let mut on = k.clone();
            pgasync::knobs::set_text(&mut on, pgasync::knobs::Source::Json, knob, "true").unwrap();
            let with = run(&l.scenario, &on, true);
            let base = run(&l.scenario, &k, true);
            assert_ne!(with.elapsed_ns(), base.elapsed_ns(), "{file}: knob {knob} changes nothing in this run");
        }
    }
}

/// The page lists the lessons from web/lessons/index.json (the static server lists no
/// folders): it must name every lesson file, in a stable order, and nothing else.
#[wasm_bindgen_test(unsupported = test)]
fn the_page_index_lists_every_lesson() {
    let index: Vec<String> =
        serde_json::from_str(include_str!("../../web/lessons/index.json")).expect("a JSON list of file names");
    let mut files: Vec<String> = lessons()
        .into_iter()
        .map(|(f, _)| std::path::Path::new(&f).file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut listed = index.clone();
    listed.sort();
    assert_eq!(listed, files, "web/lessons/index.json must list every web/lessons/*.txt");
    // The embedded files are every web/lessons/*.txt (natively: wasm32 has no folders).
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut on_disk: Vec<String> = std::fs::read_dir("web/lessons")
            .expect("web/lessons")
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        assert_eq!(on_disk, files, "every web/lessons/*.txt must be in LESSON_FILES (tests/suite/lessons.rs)");
    }
}

/// A lesson's run as the page steps it: every step's narration (what the student reads)
/// and the steps at which each note is current.
fn stepped(l: &lesson::Lesson) -> (Vec<String>, lesson::LessonOutcome, pgasync::demo::session::DemoSession) {
    let mut job = lesson::LessonRun::for_lesson(l.clone()).unwrap();
    let out = loop {
        if let Some(o) = job.advance(500).unwrap() {
            break o;
        }
    };
    let k = l.scenario_knobs().unwrap();
    let mut s = pgasync::demo::session::DemoSession::new(&l.scenario, l.async_mode, k).unwrap();
    s.run_to_end();
    assert_eq!(s.steps(), out.total_steps);
    let said = s.narration_log(1, s.steps()).iter().map(|p| p.join(" | ")).collect();
    (said, out, s)
}

/// Whether a step's narration shows the event note trigger `on` stands for, read from
/// the words (not from the matcher the lesson run uses). None: not decidable from the
/// words alone (a request's `from=`), checked on the trace instead.
fn narration_has(on: &NoteOn, said: &str) -> Option<bool> {
    let lower = said.to_lowercase();
    let has = |words: &str| lower.contains(&words.to_lowercase());
    Some(match on {
        NoteOn::Step { .. } => return None,
        NoteOn::Request { from: Some(_), .. } => return None,
        NoteOn::Request { state, from: None } => has(match state.as_str() {
            "waiting" => "is now Waiting",
            "callbackpending" => "(Callback pending",
            _ => "(Complete)",
        }),
        NoteOn::Wait => has("ExecAsyncConfigureWait") && has("the event loop waits on"),
        NoteOn::Notify => has("ExecAsyncNotify: input for request"),
        NoteOn::AppendRow => has("Append returned a row"),
        NoteOn::Startup => has("sent the startup packet"),
        NoteOn::Send { prefix } => has(&format!("sent \"{prefix}")),
        NoteOn::Queued => has("queued \""),
        NoteOn::Row => has("reached the top of the plan"),
    })
}

/// Issue 19: a note is current exactly at the steps where its event happens — never at
/// a step without it (the Append's event wait, not any wait; an actual ExecAsyncNotify,
/// not a row handed over from a batch already read; a row passing through the Append,
/// not only the one that reaches the top), and at every step with it.
#[test]
fn every_note_is_current_exactly_at_its_events() {
    use pgasync::executor::exec_async::AsyncState;
    use pgasync::trace::TraceKind;
    for (file, l) in lessons() {
        let (said, out, s) = stepped(&l);
        let (ends, _) = s.step_marks();
        for (n, steps) in l.notes.iter().zip(&out.note_steps) {
            let at: std::collections::BTreeSet<usize> = steps.iter().copied().collect();
            for (k, line) in said.iter().enumerate() {
                let step = k + 1;
                let has = match narration_has(&n.on, line) {
                    Some(h) => h,
                    None => match &n.on {
                        NoteOn::Step { step: st } => *st == step,
                        NoteOn::Request { state, from: Some(from) } => {
                            let start = if step == 1 { 0 } else { ends[step - 2] };
                            let name = |a: &AsyncState| format!("{a:?}").to_lowercase();
                            s.trace_slice(start, ends[step - 1]).iter().any(|e| {
                                matches!(&e.kind, TraceKind::Request { from: f, to, .. }
                                    if name(to) == *state && name(f) == *from)
                            })
                        }
                        _ => unreachable!(),
                    },
                };
                if steps.len() < 2000 || step <= *steps.last().unwrap() {
                    assert_eq!(
                        at.contains(&step),
                        has,
                        "{file}: note {:?} {} at step {step}, whose narration is: {line}",
                        n.on,
                        if has { "not current" } else { "current" }
                    );
                }
            }
        }
    }
}

/// The three notes issue 19 found at the wrong steps.
#[test]
fn the_notes_issue_19_found_misplaced() {
    let get = |name: &str| {
        let l = lesson::parse(&std::fs::read_to_string(format!("web/lessons/{name}.txt")).unwrap()).unwrap();
        let (said, out, _) = stepped(&l);
        (l, said, out)
    };
    let steps_of = |l: &lesson::Lesson, out: &lesson::LessonOutcome, on: NoteOn| {
        let i = l.notes.iter().position(|n| n.on == on).unwrap_or_else(|| panic!("{}: no note {on:?}", l.title));
        out.note_steps[i].clone()
    };
    // E: the event-wait note never at a connection's set-up, a SET or a COMMIT.
    let (l, said, out) = get("E");
    let waits = steps_of(&l, &out, NoteOn::Wait);
    assert!(!waits.is_empty() && !waits.contains(&1));
    for st in &waits {
        let line = &said[st - 1];
        assert!(!line.contains("SET ") && !line.contains("COMMIT") && !line.contains("startup"), "step {st}: {line}");
    }
    // E: the notify note only where ExecAsyncNotify runs: as many steps as notifies.
    let notifies = said.iter().filter(|s| s.contains("ExecAsyncNotify")).count();
    assert_eq!(steps_of(&l, &out, NoteOn::Notify).len(), notifies);
    // E: 4 first requests from ExecAppendAsyncBegin, 8 later ones.
    let first = NoteOn::Request { state: "waiting".into(), from: Some("idle".into()) };
    let later = NoteOn::Request { state: "waiting".into(), from: Some("complete".into()) };
    assert_eq!(steps_of(&l, &out, first).len(), 4, "E: one first request per child");
    assert_eq!(steps_of(&l, &out, later).len(), 8, "E: the later requests (250 rows, fetch 100: 3 FETCHes each)");
    // AB: the note shows while rows pass through the Append, from the first one.
    let (l, said, out) = get("AB");
    let rows = steps_of(&l, &out, NoteOn::AppendRow);
    assert!(rows.len() >= 1000, "{} steps", rows.len());
    assert!(rows[0] < 20, "first at step {}", rows[0]);
    assert!(said[rows[0] - 1].contains("Append returned a row"));
}

/// Issue 19: one definition of each request state, against the 2016 design's enum and
/// PostgreSQL 14+'s flags (`exec_async::STATE_TERMS`), in the same words in the README,
/// the handout, the lessons and the exercises (the page's glossary and the narration
/// take them from the model); and none of the older, contradicting definitions left.
#[test]
fn the_request_states_have_one_definition_everywhere() {
    use pgasync::executor::exec_async::{state_term, STATE_TERMS};
    let flat = |p: &str| {
        let t = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        t.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let readme = flat("README.md");
    let handout = flat("web/handout.html");
    for t in STATE_TERMS {
        let row = format!("| {} | {} | {} | {} | {} |", t.label, t.short, t.meaning, t.design_2016, t.postgres_14);
        assert!(readme.contains(&row), "README.md lacks the row\n{row}");
        for part in [t.label, t.short, t.meaning, t.postgres_14] {
            assert!(handout.contains(part), "web/handout.html lacks {part:?}");
        }
        assert!(handout.contains(&format!("<code>{}</code>", t.design_2016)), "handout: {}", t.design_2016);
    }
    // The PostgreSQL side: Waiting is callback_pending = true; Callback pending is
    // request_complete = true before ExecAsyncResponse; the 2016 names.
    assert!(state_term("Waiting").postgres_14.starts_with("callback_pending = true"));
    assert!(state_term("CallbackPending").postgres_14.contains("request_complete = true"));
    assert_eq!(state_term("Waiting").design_2016, "ASYNC_WAITING");
    assert!(state_term("CallbackPending").design_2016.starts_with("ASYNC_CALLBACK_PENDING"));
    assert_eq!(state_term("Complete").design_2016, "ASYNC_COMPLETE");
    // The short forms where the lessons and exercises name the states.
    let cp = format!("Callback pending ({})", state_term("CallbackPending").short);
    assert!(flat("web/lessons/E.txt").contains(&cp), "E.txt: {cp}");
    assert!(flat("web/lessons/E.txt").contains(&format!("Waiting ({})", state_term("Waiting").short)));
    let ex = format!("Callback pending: {}", state_term("CallbackPending").short);
    assert!(flat("exercises/3-async-merge-append/README.md").contains(&ex));
    assert!(flat("exercises/1-queued-twice/README.md")
        .contains(&format!("Callback pending ({}", state_term("CallbackPending").short)));
    // The definitions issue 19 found contradicting it are gone.
    for p in [
        "README.md",
        "docs/teacher-guide.md",
        "web/render/behaviour.js",
        "web/render/plan.js",
        "web/lessons/E.txt",
        "web/lessons/X.txt",
        "exercises/1-queued-twice/README.md",
        "exercises/3-async-merge-append/README.md",
        "crate/executor/exec_async.rs",
    ] {
        let t = flat(p);
        for old in [
            "ExecAsyncNotify has not run yet",
            "— Callback pending —",
            "answered, response not delivered",
            "request_complete` before the response",
        ] {
            assert!(!t.contains(old), "{p} still says {old:?}");
        }
    }
}

/// Issue 18: what the R and H lessons promise. R in pg15 has no async request under a
/// join and one FETCH in flight at a time; its walk-through, `async_through_nodes`,
/// overlaps the four joins' FETCHes. H, as the page steps it: the lesson's own run
/// (the guard on) returns the reference; with `no_descendant_check` on too, "Run to:
/// re-entry hazard" stops at a step whose narration shows the hazard, and the run ends
/// there with the message the lesson quotes, never a wrong row.
#[test]
fn the_r_and_h_lessons_show_what_they_say() {
    use pgasync::demo::breakpoint::BreakOn;
    use pgasync::demo::session::{DemoSession, RunTo};
    use pgasync::trace::TraceKind;
    let get = |name: &str| lesson::parse(&std::fs::read_to_string(format!("web/lessons/{name}.txt")).unwrap()).unwrap();
    let in_flight = |r: &QueryRun<SimHost>| {
        let (mut now, mut most) = (std::collections::HashSet::new(), 0);
        for e in &r.es.trace.events {
            match &e.kind {
                TraceKind::Send { conn, sql, queued: false, .. } if sql.starts_with("FETCH") => {
                    now.insert(*conn);
                }
                TraceKind::Response { conn, sql, .. } if sql.starts_with("FETCH") => {
                    now.remove(conn);
                }
                _ => {}
            }
            most = most.max(now.len());
        }
        most
    };

    // R: PostgreSQL 15 runs the joins one after another, nothing marked Async.
    let r = get("R");
    let k = r.scenario_knobs().unwrap();
    let pg = run("R", &k, true);
    assert!(!pg.explain_text().contains("Async"), "{}", pg.explain_text());
    assert!(!pg.es.trace.events.iter().any(|e| matches!(e.kind, TraceKind::Request { .. })));
    assert_eq!(in_flight(&pg), 1);
    assert_eq!(r.knob_walks.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["async_through_nodes"]);
    let mut on = k.clone();
    on.async_through_nodes = Some(true);
    let through = run("R", &on, true);
    assert_eq!(through.explain_text().matches("Async Foreign Scan").count(), 4, "{}", through.explain_text());
    assert_eq!(through.explain_text().matches("Async Hash Join").count(), 4, "{}", through.explain_text());
    assert_eq!(in_flight(&through), 4, "the four joins' FETCHes in flight together");
    assert!(through.elapsed_ns() < pg.elapsed_ns());
    let sorted = |r: &QueryRun<SimHost>| {
        let mut v = r.rows.clone();
        v.sort();
        v
    };
    assert_eq!(sorted(&through), sorted(&pg), "the same rows");

    // H: the lesson's run is the guarded design; it ends with every row.
    let h = get("H");
    let k = h.scenario_knobs().unwrap();
    assert_eq!(k.async_through_nodes, Some(true));
    let mut guarded = DemoSession::new("H", true, k.clone()).unwrap();
    assert_eq!(guarded.run_to(BreakOn::Reentry, 1_000_000), RunTo::End);
    let scenario = Scenario::build("H", &k).unwrap();
    assert!(scenario.matches_reference(&guarded.run().rows));
    assert!(matches!(guarded.run().phase, pgasync::run::Phase::Finished));
    // What the lesson says of PostgreSQL 15 on H: only ft1, the Append's direct child,
    // is async; one request Waiting at most.
    let pg15 = Knobs { async_through_nodes: None, ..k.clone() };
    let pg = run("H", &pg15, true);
    let explain = pg.explain_text();
    assert!(
        explain.contains("Async Foreign Scan on public.ft1") && !explain.contains("Async Foreign Scan on public.ft2"),
        "{explain}"
    );
    assert!(!explain.contains("Async Hash Join"), "{explain}");
    let labels = pgasync::demo::session::node_labels(&pg.explain());
    assert_eq!(lesson::answer(&lesson::AnswerOf::MaxWaiting, &pg, &labels), "1");
    // The student switches no_descendant_check on and runs to the hazard.
    let mut unguarded = k.clone();
    unguarded.no_descendant_check = Some(true);
    let mut s = DemoSession::new("H", true, unguarded).unwrap();
    assert_eq!(s.run_to(BreakOn::Reentry, 1_000_000), RunTo::Found);
    let said = s.narration_log(s.steps(), s.steps()).concat().join(" | ");
    let message = "Append re-entered while executing its child Hash Join";
    assert!(said.contains("hazard") && said.contains(message), "{said}");
    let intro = h.intro.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(intro.contains(message), "the lesson quotes the message the run gives");
    s.run_to_end(); // the remote transactions are aborted; the run ends failed
    let pgasync::run::Phase::Failed(e) = &s.run().phase else { panic!("the run must fail at the hazard") };
    assert_eq!(e.to_string(), message);
    let rows = &s.run().rows;
    assert!(rows.len() < scenario.reference.len());
    assert!(rows.iter().all(|r| scenario.reference.contains(r)), "no wrong row before the hazard");
}
