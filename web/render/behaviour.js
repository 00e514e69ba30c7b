// Behaviour controls, the "Differences from PostgreSQL 15" panel, and the glossary of
// request states.
//
// * The behaviour selector (pg15 / improved / custom) and a checkbox per behaviour knob
//   (names and one-line reasons from the model, `wasm.behaviourKnobs()`). The config
//   holds `behaviour` ('' = pg15, the default, or 'improved') and `switches`, the knobs
//   set explicitly ({fetch_ahead: '1'}); both round-trip through the URL
//   (`behaviour=improved`, `fetch_ahead=1`).
// * The differences panel shows the behaviour of the run on screen (`session.behaviour()`):
//   every knob that is on and what it changes, or that this is what PostgreSQL 15 does.
// * The glossary: what each request state means in PostgreSQL's terms, as tooltips on
//   the legend and as a panel.

import { STATE_ORDER, stateInfo } from './util.js';

/**
 * What each request state means: one definition per state, against the 2016 design's
 * enum and PostgreSQL 14+'s flags, from the model (`wasm.stateTerms()`, the Rust
 * `exec_async::STATE_TERMS`: the README, the handout and the lessons say the same
 * words). Filled by `setStateTerms` once the model is loaded.
 */
export const GLOSSARY = {};
/** The terms as the model gives them, by state ({state, label, short, meaning, design_2016, postgres_14}). */
export const STATE_TERMS = {};

/** Takes the model's state definitions. */
export function setStateTerms(terms) {
  for (const t of terms) {
    STATE_TERMS[t.state] = t;
    GLOSSARY[t.state] = `${t.short}: ${t.meaning} 2016 design: ${t.design_2016}. PostgreSQL 14+: ${t.postgres_14}.`;
  }
}

const NONE = 'none: this is what PostgreSQL 15 does';

const el = (tag, props = {}, ...children) => {
  const e = document.createElement(tag);
  Object.assign(e, props);
  e.append(...children);
  return e;
};

/** The part of a reason that says what the knob changes (before "; PostgreSQL 15 …"). */
export function whatItChanges(reason) {
  return reason.split(';')[0];
}

export class BehaviourControls {
  /**
   * `knobs`: [{name, reason, improved}] from the model (`improved`: on in that preset); `select` the pg15/improved/custom select;
   * `box` where the checkboxes go; `panel` the differences panel; `onChange` is called
   * after the user changed the behaviour (the page then reads `fromInputs`).
   */
  constructor(knobs, { select, box, panel }, onChange) {
    this.knobs = knobs;
    this.select = select;
    this.panel = panel;
    this.checks = {};
    for (const k of knobs) {
      const input = el('input', { type: 'checkbox', id: `bk-${k.name}` });
      input.dataset.testid = `knob-${k.name}`;
      input.dataset.knob = k.name;
      const label = el('label', { className: 'check bknob', title: `${k.name}: ${k.reason}` }, input, ` ${k.name.replace(/_/g, ' ')}`);
      box.append(label);
      this.checks[k.name] = input;
      input.addEventListener('change', () => {
        this.showSelect();
        onChange();
      });
    }
    select.addEventListener('change', () => {
      if (select.value === 'custom') return; // the checkboxes say which knobs
      const on = select.value === 'improved';
      for (const k of this.knobs) this.checks[k.name].checked = on && k.improved;
      onChange();
    });
  }

  /** Knob values a config resolves to: the preset, then the explicit switches. */
  resolved(c) {
    const base = c.behaviour === 'improved';
    const out = {};
    for (const k of this.knobs) {
      const v = c.switches?.[k.name];
      out[k.name] = v == null || v === '' ? base && k.improved : ['1', 'on', 'true'].includes(String(v));
    }
    return out;
  }

  toInputs(c) {
    const values = this.resolved(c);
    for (const [name, input] of Object.entries(this.checks)) input.checked = values[name];
    this.showSelect();
  }

  /** The behaviour the inputs show, written into config `c`. */
  fromInputs(c) {
    c.switches = {};
    if (this.isImproved()) {
      c.behaviour = 'improved';
    } else {
      c.behaviour = '';
      for (const [name, input] of Object.entries(this.checks)) if (input.checked) c.switches[name] = '1';
    }
  }

  /** The inputs are exactly the preset `improved` (its knobs on, the teaching-only ones off). */
  isImproved() {
    return this.knobs.every((k) => this.checks[k.name].checked === k.improved);
  }

  showSelect() {
    const on = Object.values(this.checks).map((i) => i.checked);
    this.select.value = this.isImproved() ? 'improved' : on.some(Boolean) ? 'custom' : 'pg15';
  }

  /** The run on screen: `session.behaviour()` = {name, knobs, differences}. */
  showRun(b) {
    const head = el('h3', {}, 'Differences from PostgreSQL 15');
    const tag = el('span', { className: `btag ${b.name}` }, b.name);
    tag.dataset.testid = 'behaviour-name';
    head.append(' ', tag);
    let body;
    if (b.differences.length === 0) {
      body = el('span', { className: 'none-diff' }, NONE);
    } else {
      body = el(
        'ul',
        {},
        ...b.differences.map((d) => {
          const li = el('li', { title: d.reason }, el('code', {}, d.name), ': ', whatItChanges(d.reason));
          li.dataset.testid = 'difference';
          li.dataset.knob = d.name;
          return li;
        }),
      );
    }
    this.panel.replaceChildren(head, body);
    this.panel.dataset.behaviour = b.name;
  }
}

/** Tooltips on the legend's state names (after `renderLegend`). */
export function decorateLegend(legend) {
  const byLabel = Object.fromEntries(STATE_ORDER.map((s) => [stateInfo(s).label, s]));
  for (const item of legend.querySelectorAll('.legend-item')) {
    const s = byLabel[item.textContent.trim()];
    if (s && GLOSSARY[s]) {
      item.title = `${stateInfo(s).label}: ${GLOSSARY[s]}`;
      item.dataset.state = s;
    }
  }
}

/** The glossary panel (hidden until `toggle` is clicked). */
export function renderGlossary(panel, toggle) {
  const dl = el('dl');
  for (const s of STATE_ORDER) {
    const t = STATE_TERMS[s];
    if (!t) continue;
    const i = stateInfo(s);
    const dt = el('dt', {}, el('i', { style: `background:${i.color}` }), i.label, el('span', { className: 'hint' }, ` — ${t.short}`));
    const dd = el(
      'dd',
      {},
      t.meaning,
      el('div', { className: 'g-2016' }, el('b', {}, '2016 design: '), t.design_2016),
      el('div', { className: 'g-pg14' }, el('b', {}, 'PostgreSQL 14+: '), t.postgres_14),
    );
    dt.dataset.state = s;
    dl.append(dt, dd);
  }
  panel.replaceChildren(el('h3', {}, 'Request states ', el('a', { href: 'handout.html', target: '_blank', className: 'hint' }, 'printable handout')), dl);
  toggle.addEventListener('click', () => {
    panel.hidden = !panel.hidden;
    toggle.classList.toggle('on', !panel.hidden);
    toggle.blur();
  });
}
