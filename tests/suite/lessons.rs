//! The workshop lessons (web/lessons/*.txt) against the runs they describe: every
//! question's answer, computed from the run, is one of its choices; every note's event
//! happens in the run (a note that never shows is a defect); every knob walk-through
//! changes the run against pg15.

use pgasync::clock::Clock;
use pgasync::lesson::{self, NoteOn};
use pgasync::run::QueryRun;
use pgasync::scenario::{Knobs, Scenario};
use pgasync::sim::SimHost;
use wasm_bindgen_test::wasm_bindgen_test;

/// web/lessons/*.txt, embedded so that the suite runs where there is no file system
/// (wasm32); natively `the_page_index_lists_every_lesson` checks this is every file.
const LESSON_FILES: [(&str, &str); 6] = [
    ("web/lessons/AB.txt", include_str!("../../web/lessons/AB.txt")),
    ("web/lessons/C.txt", include_str!("../../web/lessons/C.txt")),
    ("web/lessons/D.txt", include_str!("../../web/lessons/D.txt")),
    ("web/lessons/E.txt", include_str!("../../web/lessons/E.txt")),
    ("web/lessons/M.txt", include_str!("../../web/lessons/M.txt")),
    ("web/lessons/X.txt", include_str!("../../web/lessons/X.txt")),
];

fn lessons() -> Vec<(String, lesson::Lesson)> {
    let mut out = Vec::new();
    for (path, text) in LESSON_FILES {
        let l = lesson::parse(text).unwrap_or_else(|e| panic!("{path}: {e}"));
        out.push((path.to_string(), l));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 6, "one lesson per seed scenario");
    out
}

fn run(id: &str, k: &Knobs, async_mode: bool) -> QueryRun<SimHost> {
    let s = Scenario::build(id, k).unwrap_or_else(|e| panic!("{id}: {e}"));
    let mut r = s.start(async_mode, Clock::virtual_clock(), true).unwrap();
    r.run_to_end().unwrap_or_else(|e| panic!("{id}: {e}"));
    r
}

#[wasm_bindgen_test(unsupported = test)]
fn every_answer_is_a_choice_and_every_note_shows() {
    for (file, l) in lessons() {
        let k = l.scenario_knobs().unwrap_or_else(|e| panic!("{file}: {e}"));
        let r = run(&l.scenario, &k, l.async_mode);
        let labels = pgasync::session::node_labels(&r.explain());
        for q in &l.questions {
            let a = lesson::answer(&q.answer, &r, &labels);
            assert!(q.choices.contains(&a), "{file}: \"{}\": the run answers {a}, not one of {:?}", q.ask, q.choices);
            println!("{file}: {} → {a}", q.ask);
        }
        for n in &l.notes {
            if let NoteOn::Step { .. } = n.on {
                continue;
            }
            assert!(
                r.es.trace.events.iter().any(|e| lesson::note_matches(&n.on, e)),
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
