// Issue 10 in the browser (run.mjs calls it; PGASYNC_E2E_ONLY=lessons runs it alone):
// every lesson from the Lessons menu run start to end with its notes at their steps,
// every question answered once right and once wrong (a reload between), the knob
// walk-throughs, each "run to" breakpoint kind once, seeking from the narration
// history, and a lesson at 1280×720 and at 150% zoom with no panel under 300 px.

import { waitDrawn, waitFinished } from './lib.mjs';

/** Every step of the run on screen, a few at a time: the notes shown "now" at each step. */
async function stepToEnd(page) {
  const seen = {}; // note index → steps where it showed as "now"
  const said = {}; // step → its narration in full (every action)
  for (;;) {
    const part = await page.evaluate(() => {
      const out = [];
      for (let i = 0; i < 60 && !window.pgasync.isDone(); i++) {
        const step = window.pgasync.stepEvent();
        const now = [...document.querySelectorAll('[data-testid=lesson-note][data-state=now]')].map((n) => Number(n.dataset.note));
        const words = (window.pgasync.session.narrationLog(step, step)[0] ?? []).join(' | ');
        out.push([step, now, words]);
      }
      return { out, done: window.pgasync.isDone() };
    });
    for (const [step, now, words] of part.out) {
      said[step] = words;
      for (const n of now) (seen[n] ??= []).push(step);
    }
    if (part.done) return { seen, said };
  }
}

/**
 * Whether a step's narration shows the event a note is attached to (issue 19: a note is
 * current only where its event happens), read from the words the student reads. null:
 * not decidable from the words (a request's from=, a step= note).
 */
function narrationHas(on, words) {
  const w = words.toLowerCase();
  switch (on.on) {
    case 'request':
      if (on.from) return null;
      return w.includes({ waiting: 'is now waiting', callbackpending: '(callback pending', complete: '(complete)' }[on.state]);
    case 'wait':
      return w.includes('execasyncconfigurewait') && w.includes('the event loop waits on');
    case 'notify':
      return w.includes('execasyncnotify: input for request');
    case 'append_row':
      return w.includes('append returned a row');
    case 'startup':
      return w.includes('sent the startup packet');
    case 'send':
      return w.includes(`sent "${on.prefix.toLowerCase()}`);
    case 'queued':
      return w.includes('queued "');
    case 'row':
      return w.includes('reached the top of the plan');
    default:
      return null;
  }
}

/** The notes as drawn: index, first step (the model's), state, whether it names code. */
const notes = (page) =>
  page.$$eval('[data-testid=lesson-note]', (xs) =>
    xs.map((x) => ({ i: Number(x.dataset.note), first: x.dataset.first === '' ? null : Number(x.dataset.first), state: x.dataset.state, code: x.querySelectorAll('.note-text code').length, text: x.textContent })),
  );

/** Each question's verdict, the run's answer and the explanation shown. */
const verdicts = (page) =>
  page.$$eval('[data-testid=question]', (qs) =>
    qs.map((q) => {
      const r = q.querySelector('[data-testid=question-result]');
      return { verdict: r.dataset.verdict ?? null, answer: r.dataset.answer ?? null, text: r.hidden ? '' : r.textContent, truth: q.querySelector('.q-choice.truth')?.dataset.choice ?? null };
    }),
  );

/** Panels on screen narrower than `min` px (the dock's included). */
const narrowPanels = (page, min) =>
  page.$$eval(
    '.panel',
    (ps, min) =>
      ps
        .filter((p) => p.getClientRects().length > 0 && getComputedStyle(p).display !== 'none')
        .map((p) => ({ id: p.id, w: Math.round(p.getBoundingClientRect().width) }))
        .filter((p) => p.w < min),
    min,
  );

const panelWidths = (page) =>
  page.$$eval('.panel', (ps) => ps.filter((p) => p.getClientRects().length > 0).map((p) => `${p.id}:${Math.round(p.getBoundingClientRect().width)}`).join(' '));

/**
 * A page of its own at 1280×720 that opens the lessons `pick(k)` selects (the menu's
 * k-th, from 0) and walks each: opening, predictions, every step to the end, the notes,
 * the answers after a reload, a knob walk-through. `checkMenu`: this page checks the
 * menu itself. Resolves with the page (still open) and each run's steps.
 */
async function walkLessons(browser, server, { check, shot, errors, waitReady }, pick, checkMenu) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && errors.push(`console.error: ${m.text()}`));
  const serial = async () => Number(await page.getAttribute('body', 'data-session'));
  const stepNow = async () => Number(await page.getAttribute('[data-testid=step]', 'data-step'));
  const ready = async () => {
    await waitReady(page, 60000);
    await page.waitForSelector('body[data-lessons]', { timeout: 15000 });
  };
  const stepsByMode = {};
  try {
    await page.goto(server.url);
    await ready();
    const menu = await page.$$eval('[data-testid=lesson-select] option', (os) => os.filter((o) => o.value).map((o) => ({ id: o.value, title: o.textContent, disabled: o.disabled })));
    if (checkMenu) check('the Lessons menu lists the eight lessons (web/lessons/index.json)', menu.length === 8 && menu.every((m) => !m.disabled), menu.map((m) => m.id).join(', '));
    for (const { id } of menu.filter((_, k) => pick(k))) {
      // Open: the lesson's run through the page's URL/state path, at step 0.
      const s0 = await serial();
      await page.selectOption('[data-testid=lesson-select]', id);
      await page.waitForFunction((b) => Number(document.body.dataset.session) > b, s0, { timeout: 30000 });
      await page.waitForFunction((id) => document.body.dataset.lessonReady === id, id, { timeout: 30000 });
      const l = await page.evaluate(() => window.pgasync.config);
      const lesson = await page.evaluate((id) => fetch(`lessons/${id}.txt`).then((r) => r.text()).then((t) => window.pgasync.wasm.parseLesson(t)), id);
      check(`${id}: opening sets the lesson's scenario and mode (URL too)`, l.scenario === lesson.scenario && l.mode === (lesson.async_mode ? 'async' : 'sync') && page.url().includes(`scenario=${lesson.scenario}`) && page.url().includes(`#lesson=${id}`), page.url());
      const title = (await page.textContent('[data-testid=lesson-title]')).trim();
      check(`${id}: the panel shows the title and the intro`, title === lesson.title && (await page.locator('[data-testid=lesson-intro] p').count()) > 0, title);
      check(`${id}: at step 0 no note is shown yet`, (await page.locator('[data-testid=lesson-note]:visible').count()) === 0);

      if (id === 'E') {
        // Run to next note (issue 19): the kind is offered first with a lesson open; the
        // message goes when the run moves on (Reset, a lesson switch, a knob change).
        const kind = await page.inputValue('[data-testid=run-to-kind]');
        await page.locator('body').press('n');
        await page.waitForFunction(() => document.querySelector('[data-testid=run-to-msg]').dataset.result === 'found', null, { timeout: 15000 });
        await waitDrawn(page, {}, 15000);
        const msg = (await page.textContent('[data-testid=run-to-msg]')).trim();
        const at = await stepNow();
        const current = await page.$$eval('[data-testid=lesson-note][data-state=now]', (xs) => xs.length);
        check('E: Run to next note stops at the first note\'s step, a note current there', kind === 'note' && msg === `note at step ${at}` && current > 0, `${kind} / ${msg} / step ${at} / ${current} current`);
        await page.locator('body').press('r');
        await waitDrawn(page, { step: 0 });
        check('E: the Run-to message is gone after Reset', (await page.textContent('[data-testid=run-to-msg]')).trim() === '');
      }

      // Predict at step 0: the first choice of every question.
      const nq = lesson.questions.length;
      for (let q = 0; q < nq; q++) await page.click(`[data-testid=question][data-q="${q}"] [data-testid=question-choice] >> nth=0`);
      let v = await verdicts(page);
      // Predict, then step to see (issue 19): a click keeps the prediction, no answer yet.
      check(`${id}: each of ${nq} predictions kept, no answer shown before the end`, v.length === nq && v.every((x) => x.verdict === null && x.truth === null && /You predicted/.test(x.text)), JSON.stringify(v.map((x) => [x.verdict, x.text.slice(0, 30)])));

      // Start to end: each note shows as "now" at its first step at least.
      const { seen, said } = await stepToEnd(page);
      // Each note "now" exactly at the steps whose narration shows its event.
      const wrong = [];
      lesson.notes.forEach((n, i) => {
        for (const [k, words] of Object.entries(said)) {
          const has = narrationHas(n.on, words);
          if (has === null) continue;
          const now = (seen[i] ?? []).includes(Number(k));
          if (now !== has) wrong.push(`note ${i} (${n.on.on}${n.on.state ? ':' + n.on.state : ''}${n.on.prefix ? ':' + n.on.prefix : ''}) ${now ? 'current' : 'not current'} at step ${k}: ${words.slice(0, 160)}`);
        }
      });
      check(`${id}: every note is current exactly at the steps where its event happens (${Object.keys(said).length} steps)`, wrong.length === 0, wrong.slice(0, 5).join(' || '));
      v = await verdicts(page);
      check(`${id}: at the end each of ${nq} questions revealed with the run's answer and its explanation`, v.length === nq && v.every((x, q) => x.verdict && lesson.questions[q].choices.includes(x.answer) && x.truth === x.answer && x.text.includes(lesson.questions[q].explain.slice(0, 20))), JSON.stringify(v.map((x) => [x.verdict, x.answer])));
      const first = v.map((x) => x.verdict);
      const ns = await notes(page);
      stepsByMode[`${lesson.scenario} ${l.mode}`] = await stepNow();
      check(`${id}: ran to the end (${await stepNow()} steps)`, (await page.textContent('[data-testid=phase]')).trim() === 'finished');
      check(`${id}: every note (${ns.length}) showed at the step of its event`, ns.length === lesson.notes.length && ns.every((n) => n.first != null && seen[n.i]?.includes(n.first)), JSON.stringify(ns.map((n) => [n.i, n.first, seen[n.i]?.slice(0, 3)])));
      check(`${id}: every note names PostgreSQL's function or file as code`, ns.every((n) => n.code > 0), ns.filter((n) => !n.code).map((n) => n.text.slice(0, 60)).join(' | '));
      check(`${id}: at the end every note is shown (seen or now)`, ns.every((n) => n.state === 'seen' || n.state === 'now'));
      if (id === 'E') await shot(page, '20-lesson-E-end.png');

      // Reload (the lesson stays open from #lesson=), back to step 0, answer the other way.
      await page.reload();
      await ready();
      await page.waitForFunction((id) => document.body.dataset.lessonReady === id, id, { timeout: 30000 });
      await page.locator('body').press('r');
      await waitDrawn(page, { step: 0 });
      check(`${id}: after a reload the questions are open again`, (await verdicts(page)).every((x) => x.verdict === null));
      for (let q = 0; q < nq; q++) {
        const { answer } = v[q];
        const choice = first[q] === 'right' ? lesson.questions[q].choices.find((c) => c !== answer) : answer;
        await page.click(`[data-testid=question][data-q="${q}"] [data-testid=question-choice][data-choice="${choice}"]`);
      }
      await page.click('[data-testid=to-end]');
      await waitFinished(page, 60000);
      await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=question-result]')].every((r) => r.dataset.verdict), null, { timeout: 30000 });
      v = await verdicts(page);
      check(`${id}: every question answered once right and once wrong`, v.every((x, q) => x.verdict && x.verdict !== first[q]), `${first.join(',')} then ${v.map((x) => x.verdict).join(',')}`);

      // Knob walk-throughs: the knob on against pg15, shown by the page's own controls.
      for (const [knob] of lesson.knob_walks.slice(0, 1)) {
        const s1 = await serial();
        await page.click(`[data-testid=knob-walk][data-knob=${knob}] [data-testid=knob-walk-on]`);
        await page.waitForFunction((b) => Number(document.body.dataset.session) > b, s1, { timeout: 30000 });
        await page.waitForSelector(`[data-testid=knob-walk][data-knob=${knob}] [data-testid=knob-walk-with-ms]`, { timeout: 30000 });
        const diff = await page.$$eval('[data-testid=difference]', (xs) => xs.map((x) => x.dataset.knob));
        const head = (await page.textContent(`[data-testid=knob-walk][data-knob=${knob}] [data-testid=knob-walk-head]`)).trim();
        const ms = await page.$$eval(`[data-testid=knob-walk][data-knob=${knob}] [data-testid^=knob-walk-][data-testid$=-ms]`, (xs) => xs.map((x) => parseFloat(x.textContent)));
        check(`${id}: knob walk ${knob}: on against pg15 (checkbox, differences panel, URL)`, (await page.isChecked(`[data-testid=knob-${knob}]`)) && diff.join(',') === knob && page.url().includes(`${knob}=1`), `${diff.join(',')} ${page.url()}`);
        check(`${id}: knob walk ${knob}: pg15 and the knob's run compared`, ms.length === 2 && ms[0] > 0 && ms[1] > 0 && ms[0] !== ms[1] && (await page.locator(`[data-testid=knob-walk][data-knob=${knob}] [data-testid=knob-walk-svg]`).count()) === 1, head);
        if (id === 'E') {
          await page.$eval(`[data-testid=knob-walk][data-knob=${knob}]`, (el) => el.scrollIntoView({ block: 'center' }));
          await shot(page, '22-lesson-knob-walk.png');
        }
        const s2 = await serial();
        await page.click(`[data-testid=knob-walk][data-knob=${knob}] [data-testid=knob-walk-off]`);
        await page.waitForFunction((b) => Number(document.body.dataset.session) > b, s2, { timeout: 30000 });
        await page.waitForFunction((k) => !location.search.includes(`${k}=1`), knob, { timeout: 5000 }).catch(() => {});
        check(`${id}: back to pg15`, !(await page.isChecked(`[data-testid=knob-${knob}]`)) && !page.url().includes(`${knob}=1`));
      }
    }
  } catch (e) {
    await context.close();
    throw e;
  }
  return { context, page, stepsByMode };
}

/**
 * The lessons section. The walk of the eight lessons (each stepped start to end, every
 * step's notes read from the page) is most of its time and all of it the page's
 * rendering on one core: it runs in two pages side by side, about half of the steps
 * each (issue 20; the same lessons, steps and checks as one page after the other): the
 * second page takes the menu's 3rd, 5th and 7th lessons (D, H and R, 2,543 of the 4,956
 * steps on 2026-12-05), the first the others, then the rest of the section. `out()`
 * gives each half its own check/shot/log, so the two halves' lines do not interleave:
 * they are printed half after half, then the rest of the section.
 */
export async function checkLessons(browser, server, { check, shot, errors, waitReady, log = console.log, out = null }) {
  log('lessons, run to, narration history (issue 10)');
  const halves = [0, 1].map((h) => (out ? out() : { check, shot, log, lines: null }));
  const opened = await Promise.allSettled(
    halves.map((o, h) => walkLessons(browser, server, { ...o, errors, waitReady }, (k) => (k % 2 === 0 && k > 0) === (h === 1), h === 0)),
  );
  for (const o of halves) if (o.lines) for (const line of o.lines) log(line);
  const failed = opened.find((r) => r.status === 'rejected');
  if (failed) {
    for (const r of opened) if (r.status === 'fulfilled') await r.value.context.close();
    throw failed.reason;
  }
  const stepsByMode = { ...opened[0].value.stepsByMode, ...opened[1].value.stepsByMode };
  await opened[1].value.context.close();
  const { context, page } = opened[0].value;
  const serial = async () => Number(await page.getAttribute('body', 'data-session'));
  const stepNow = async () => Number(await page.getAttribute('[data-testid=step]', 'data-step'));
  const ready = async () => {
    await waitReady(page, 60000);
    await page.waitForSelector('body[data-lessons]', { timeout: 15000 });
  };
  try {
    log(`  --  steps of each lesson's run: ${JSON.stringify(stepsByMode)}`);
    // One step is the same kind of thing in both modes: E has as many steps in each.
    const total = {};
    for (const mode of ['sync', 'async']) {
      await page.goto(`${server.url}?scenario=E&mode=${mode}&rows=250&fetch=100`);
      await waitReady(page, 60000);
      total[mode] = await page.evaluate(() => window.pgasync.recording.totalSteps);
    }
    const ratio = total.async / total.sync;
    check('a step is the same kind of thing in sync and async mode (E, 4 × 250 rows)', total.sync > 1000 && ratio > 0.8 && ratio < 1.25, JSON.stringify(total));

    // Run to: each breakpoint kind once, on the E lesson's run (drain: M improved on a
    // shared connection without pipeline, where a scan drains another's FETCH).
    await page.goto(`${server.url}?scenario=E&mode=async&rows=250&fetch=100#lesson=E`);
    await ready();
    await page.waitForFunction(() => document.body.dataset.lessonReady === 'E', null, { timeout: 30000 });
    const kinds = await page.$$eval('[data-testid=run-to-kind] option', (os) => os.map((o) => o.value));
    check('Run to lists the kinds, wire once per connection', ['notify', 'configure_wait', 'drain', 'append_row', 'append_call', 'wire', 'wire:0', 'wire:3'].every((k) => kinds.includes(k)), kinds.join(', '));
    const says = { notify: /ExecAsyncNotify/, configure_wait: /ExecAsyncConfigureWait/, drain: /drained the FETCH in flight/, append_row: /Append returned a row/, append_call: /Append (was called|returned a row to its parent and was called|started)/, 'wire:1': /connection s2|on s2/ };
    const runTo = async (kind, how = 'click') => {
      const before = await stepNow();
      await page.selectOption('[data-testid=run-to-kind]', kind);
      await page.evaluate(() => {
        const m = document.querySelector('[data-testid=run-to-msg]');
        m.dataset.result = '';
      });
      if (how === 'key') {
        await page.locator('[data-testid=run-to-kind]').blur();
        await page.locator('body').press('n');
      } else await page.click('[data-testid=run-to]');
      await page.waitForFunction(() => document.querySelector('[data-testid=run-to-msg]').dataset.result, null, { timeout: 30000 });
      // The message is set with the status, the history (read below) frames later.
      await waitDrawn(page, {}, 30000);
      const after = await stepNow();
      const result = await page.getAttribute('[data-testid=run-to-msg]', 'data-result');
      const entry = (await page.textContent(`[data-testid=history-entry][data-step="${after}"]`)) ?? '';
      return { before, after, result, entry };
    };
    for (const kind of ['notify', 'configure_wait', 'append_row', 'append_call', 'wire:1']) {
      const r = await runTo(kind);
      check(`run to ${kind}: stops at the next step with such an event`, r.result === 'found' && r.after > r.before && says[kind].test(r.entry), `${r.before} → ${r.after}: ${r.entry.slice(0, 140)}`);
    }
    const k = await runTo('notify', 'key');
    check('the key n runs to the next one', k.result === 'found' && k.after > k.before && says.notify.test(k.entry), `${k.before} → ${k.after}`);
    await page.goto(`${server.url}?scenario=M&mode=async&rows=250&fetch=100&sharing=shared&behaviour=improved&pipeline=0`);
    await waitReady(page, 60000);
    await page.click('[data-testid=history-toggle]');
    const d = await runTo('drain');
    check('run to drain (process_pending_request) on M improved, one shared connection', d.result === 'found' && says.drain.test(d.entry), `${d.before} → ${d.after}: ${d.entry.slice(0, 160)}`);
    await page.click('[data-testid=to-end]');
    await waitFinished(page, 15000);
    const none = await runTo('drain');
    check('at the end, run to says the run ended', none.result === 'end', JSON.stringify(none));

    // Issue 18, lesson H: with the guard off (no_descendant_check), Run to "re-entry
    // hazard" stops at the hazard's step, whose narration says it, and the query fails
    // with the message the lesson quotes; with the guard on the same plan runs to its end.
    const hazardMsg = 'Append re-entered while executing its child Hash Join';
    const toEnd = () =>
      page.evaluate(() => {
        while (!window.pgasync.isDone()) window.pgasync.stepEvent();
        return [document.querySelector('[data-testid=phase]').textContent.trim(), document.querySelector('[data-testid=narration]').textContent.trim()];
      });
    await page.goto(`${server.url}?scenario=H&mode=async&rows=200&fetch=100&async_through_nodes=1&no_descendant_check=1#lesson=H`);
    await ready();
    await page.waitForFunction(() => document.body.dataset.lessonReady === 'H', null, { timeout: 30000 });
    const hz = await runTo('reentry');
    const hzWords = await page.evaluate((st) => (window.pgasync.session.narrationLog(st, st)[0] ?? []).join(' | '), hz.after);
    check('H, no_descendant_check: run to re-entry hazard stops at the step that says it', hz.result === 'found' && hzWords.includes('hazard') && hzWords.includes(hazardMsg), `${hz.before} → ${hz.after}: ${hzWords.slice(0, 200)}`);
    const [hzPhase, hzLine] = await toEnd();
    check('H, no_descendant_check: the query fails with the lesson\'s message', hzPhase === 'failed' && hzLine.includes(hazardMsg), `${hzPhase}: ${hzLine.slice(0, 160)}`);
    await page.goto(`${server.url}?scenario=H&mode=async&rows=200&fetch=100&async_through_nodes=1#lesson=H`);
    await ready();
    await page.waitForFunction(() => document.body.dataset.lessonReady === 'H', null, { timeout: 30000 });
    const safe = await runTo('reentry');
    const [okPhase] = await toEnd();
    check('H with the guard: no hazard, the run ends with every row', safe.result === 'end' && okPhase === 'finished' && (await page.evaluate(() => window.pgasync.snapshot().rows_total)) === 300, `${safe.result} ${okPhase}`);

    // The narration history: every step so far, in full; a click seeks there.
    await page.goto(`${server.url}?scenario=E&mode=async&rows=250&fetch=100#lesson=E`);
    await ready();
    await page.waitForFunction(() => document.body.dataset.lessonReady === 'E', null, { timeout: 30000 });
    await page.evaluate(() => {
      for (let i = 0; i < 120; i++) window.pgasync.stepEvent();
    });
    const entries = () => page.$$eval('[data-testid=history-entry]', (xs) => xs.map((x) => ({ step: Number(x.dataset.step), items: x.querySelectorAll('li').length, text: x.textContent, cls: x.className })));
    let hist = await entries();
    check('the history lists every step so far', hist.length === 120 && hist.every((e, i) => e.step === i + 1) && hist[119].cls.includes('cur'), `${hist.length} entries`);
    // Past 400 steps the oldest are drawn on demand; step 444 of E is a busy one.
    await page.evaluate(() => window.pgasync.seek(450));
    await waitDrawn(page, { step: 450 });
    hist = await entries();
    check('450 steps: the last 400 drawn, the earlier ones a click away', hist.length === 400 && hist[0].step === 51 && (await page.isVisible('[data-testid=history-earlier]')), `${hist.length} entries from ${hist[0]?.step}`);
    await page.click('[data-testid=history-earlier]');
    hist = await entries();
    check('"earlier steps" draws them', hist.length === 450 && hist.every((e, i) => e.step === i + 1), `${hist.length} entries`);
    await page.click('[data-testid=history-entry][data-step="37"]');
    // A seek drawn in stages (main.js inFrames) updates the step first and the
    // history frames later: wait until every panel shows the step (data-drawn-step).
    await waitDrawn(page, { step: 37 });
    const after = await page.$$eval('[data-testid=history-entry]', (xs) => ({ n: xs.length, ahead: xs.filter((x) => x.classList.contains('ahead')).length, cur: xs.find((x) => x.classList.contains('cur'))?.dataset.step }));
    check('a click on a history entry seeks there; the later steps stay, faded', after.cur === '37' && after.n === 400 && after.ahead === 363, JSON.stringify(after));
    const line = (await page.textContent('[data-testid=narration]')).trim();
    check('the narration line is that step\'s', hist[36].text.includes(line.slice(0, 30)), line.slice(0, 80));

    const busy = hist.find((e) => e.items > 6);
    const line444 = await page.evaluate(() => {
      window.pgasync.seek(444);
      return document.querySelector('[data-testid=narration]').textContent;
    });
    check('a busy step is listed in full where the narration line cuts it', busy && /actions in this step/.test(line444) && !hist.some((e) => /actions in this step/.test(e.text)), busy ? `step ${busy.step}: ${busy.items} actions; the line: ${line444.slice(-40)}` : 'none');

    // Layouts: a lesson at 1280×720 and at 150% zoom (853×480 CSS px at 1.5 device
    // pixels per CSS pixel, as the browser zooms): no panel narrower than 300 px.
    await page.evaluate(() => window.pgasync.seek(60));
    await waitDrawn(page, { step: 60 });
    await page.waitForTimeout(300); // the resize relayout of the grid
    await shot(page, '21-lesson-1280x720.png');
    check('1280×720 with a lesson: no panel narrower than 300 px', (await narrowPanels(page, 300)).length === 0, await panelWidths(page));
    const zoomed = await browser.newContext({ viewport: { width: 853, height: 480 }, deviceScaleFactor: 1.5 });
    const zp = await zoomed.newPage();
    zp.on('pageerror', (e) => errors.push(`page error (zoom): ${e.message}`));
    try {
      await zp.goto(`${server.url}?scenario=E&mode=async&rows=250&fetch=100&step=60#lesson=E`);
      await waitReady(zp, 60000);
      await zp.waitForFunction(() => document.body.dataset.lessonReady === 'E', null, { timeout: 30000 });
      await zp.waitForTimeout(300);
      await shot(zp, '23-lesson-zoom150.png');
      await shot(zp, '24-lesson-zoom150-page.png', { screenshot: (o) => zp.screenshot({ ...o, fullPage: true }) });
      const zn = await narrowPanels(zp, 300);
      check('150% zoom with a lesson: no panel narrower than 300 px', zn.length === 0, await panelWidths(zp));
      const lessonVisible = await zp.locator('[data-testid=lesson]').isVisible();
      check('150% zoom: the lesson panel is on the page', lessonVisible);
    } finally {
      await zoomed.close();
    }
  } finally {
    await context.close();
  }
}
