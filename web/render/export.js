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

import { inSlices, STEP_SLICE, CALL_MS } from '../state.js';

/** Builds the file for `format` from `session` in slices: resolves {name, blob}. */
export async function exportFile(session, format, progress = () => {}) {
  const job = session.exportJob(format);
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
 * from `wasm.exportFormats()`). `session()` is the session on screen; `busy(msg)`,
 * `idle()` and `failed(msg)` are the page's status line and error banner.
 */
export function installExportMenu(root, formats, { session, busy, idle, failed }) {
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
    const s = session();
    if (!s || exporting) return;
    exporting = true;
    for (const b of buttons) b.disabled = true;
    try {
      busy(`Exporting ${f.label}…`);
      const { name, blob } = await exportFile(s, f.name, (n) => busy(`Exporting ${f.label}: ${n} pieces so far…`));
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
