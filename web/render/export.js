// The Export menu: the run on screen as files — the trace (JSON, CSV), EXPLAIN ANALYZE
// (text, JSON) and the timeline (SVG).
//
// The model's ExportJob makes them: the producer `pgasync trace --format` runs too, so
// a download holds the very bytes the CLI prints for the same scenario and knobs. The
// job runs the session's scenario again (on the virtual clock: the same run) and writes
// the format in pieces; the page calls it in slices between frames (each call stops
// after CALL_MS), takes each piece as UTF-8 bytes (no JavaScript string of megabytes:
// less for the garbage collector) and makes it a Blob at once (encoding tens of
// megabytes into one Blob at the end took the page hundreds of ms); the file is one
// Blob of those, saved by an a[download].
// One export at a time: the menu's buttons are disabled meanwhile.
// The ExportJob is in the SQL front end's module only (the page's first module is
// smaller without it, issue 20): the page loads that module at the first export, with
// a progress line, and the job runs the session's scenario there.

import { inSlices, STEP_SLICE, CALL_MS } from '../state.js';

/** Builds the file from `job` (an ExportJob) in slices: resolves {name, blob}. */
export async function exportFile(job, progress = () => {}) {
  const parts = [];
  try {
    await inSlices(
      () => {
        const done = job.advance(STEP_SLICE, CALL_MS);
        const piece = job.takeBytes();
        if (piece.length) parts.push(new Blob([piece]));
        return done;
      },
      { progress: () => progress(parts.length) },
    );
    return { name: job.fileName(), blob: new Blob(parts, { type: job.mime() }) };
  } finally {
    job.free();
  }
}

/** Saves `blob` as a file named `name` (the browser's download). */
export function saveBlob(name, blob) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  // The download has its own copy once it started; the URL can go soon after.
  setTimeout(() => URL.revokeObjectURL(url), 30000);
}

/**
 * The menu in `root` (a <details>): a button per format of `formats` ([{name, label}]
 * from `wasm.exportFormats()`). `job(format)` resolves with the ExportJob of the session
 * on screen (null when there is none or its module could not load); `busy(msg)`,
 * `idle()` and `failed(msg)` are the page's status line and error banner.
 */
export function installExportMenu(root, formats, { job, busy, idle, failed }) {
  const box = root.querySelector('.export-items');
  const buttons = formats.map((f) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = f.label;
    b.dataset.testid = `export-${f.name}`;
    b.title = `download it: the file \`pgasync trace --format ${f.name}\` writes for this scenario, mode and knobs`;
    b.addEventListener('click', () => run(f));
    return b;
  });
  box.replaceChildren(...buttons);
  let exporting = false;
  async function run(f) {
    if (exporting) return;
    exporting = true;
    for (const b of buttons) b.disabled = true;
    try {
      const j = await job(f.name);
      if (!j) return;
      busy(`Exporting ${f.label}…`);
      const { name, blob } = await exportFile(j, (n) => busy(`Exporting ${f.label}: ${n} pieces so far…`));
      saveBlob(name, blob);
      root.open = false;
    } catch (e) {
      failed(`Cannot export ${f.label}: ${e?.message ?? e}`);
    } finally {
      idle();
      exporting = false;
      for (const b of buttons) b.disabled = false;
    }
  }
}
