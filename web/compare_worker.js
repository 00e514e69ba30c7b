// The sync/async comparison in a worker (issue 20): two whole runs of the scenario,
// computed on another thread while the page builds, records and draws the run on
// screen, instead of in slices on the page's main thread after it (at load they were
// a fifth of the main thread's work, and the last part of it).
//
// Protocol (main.js's `requestCompare`):
// * the page posts `{module}` first: the model's compiled WebAssembly.Module (shared,
//   not compiled again), or null (the worker then fetches and compiles it itself);
// * then `{id, scenario, knobs}` for each run it shows (a built-in scenario: a scenario
//   file's comparison needs its loaded tables, and the page computes that one itself);
// * the worker answers `{id, comparison}` (the model's CompareJob result, as the page's
//   own computation gives it) or `{id, error, broken}`; `broken`: the model could not
//   be instantiated or trapped (a Rust panic), so the page stops using this worker.
// A newer request (or `{id}` alone) cancels an older one between two slices of work; a
// cancelled request gets no answer (the page has stopped waiting for it).

import initModel, * as model from './pkg/pgasync.js';
import { STEP_SLICE, SLICE_MS, nextSlice } from './state.js';

let started = null; // the model's instantiation (once)
let latest = -1; // the newest request's id: older ones stop

self.onmessage = (e) => {
  const m = e.data;
  if ('module' in m) {
    started = initModel(m.module ? { module_or_path: m.module } : undefined).then(() => model.init());
    return;
  }
  latest = m.id; // `{id}` alone: the page stopped waiting (its run is a scenario file's)
  if (m.scenario !== undefined) compare(m);
};

async function compare({ id, scenario, knobs }) {
  let job = null;
  try {
    await started;
  } catch (e) {
    self.postMessage({ id, error: e instanceof Error ? e.message : String(e), broken: true });
    return;
  }
  if (id !== latest) return;
  try {
    job = new model.CompareJob(scenario, knobs);
    for (;;) {
      if (job.run(STEP_SLICE, SLICE_MS)) {
        self.postMessage({ id, comparison: job.result() });
        return;
      }
      await nextSlice(); // a newer request may be waiting
      if (id !== latest) return;
    }
  } catch (e) {
    self.postMessage({ id, error: e instanceof Error ? e.message : String(e), broken: e instanceof WebAssembly.RuntimeError });
  } finally {
    // After a trap the instance is unusable: freeing would touch it again.
    try {
      job?.free();
    } catch {
      // the trapped instance refuses
    }
  }
}
