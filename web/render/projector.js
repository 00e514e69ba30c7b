// Projector aids (issue 10): a large-text mode and any panel full screen.
//
// Large text scales every font the style sheets set (they are written as
// `calc(Npx * var(--fs))`) by setting `data-large` on <html>; the choice is kept in
// localStorage, so a teacher sets it once per machine. A panel goes full screen with
// the ⤢ button in its heading (or a double click on the heading) and comes back with
// the same button or Esc. Both change the panels' sizes, so both end with a window
// `resize` event: main.js lays out the timeline, compare view and plan again on it.

const LARGE_KEY = 'pgasync.large';

export function installProjector(buttons) {
  const large = document.createElement('button');
  large.type = 'button';
  large.id = 'b-large';
  large.dataset.testid = 'large-text';
  large.title = 'large text, for a projector (the choice is kept on this machine)';
  large.textContent = 'A+';
  large.addEventListener('click', () => setLarge(!isLarge(), large));
  buttons.append(large);
  // index.html has applied the stored choice already (before the first paint).
  if (isLarge()) setLarge(true, large, { store: false });

  for (const panel of document.querySelectorAll('section.panel')) watchPanel(panel);
  document.addEventListener('click', (e) => {
    const b = e.target instanceof Element ? e.target.closest('button.maximize') : null;
    if (b) toggleFull(b.closest('section.panel'));
  });
  document.addEventListener('dblclick', (e) => {
    const h2 = e.target instanceof Element ? e.target.closest('section.panel > h2') : null;
    if (h2 && !e.target.closest('button, input, select, a, summary')) toggleFull(h2.parentElement);
  });
  window.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && document.querySelector('section.panel.full')) {
      e.preventDefault();
      toggleFull(null);
    }
  });
}

/** Panels added later (the lesson and history dock) get the button too. */
export function watchPanel(panel) {
  addButton(panel);
  // The lesson panel rebuilds its heading whenever a lesson opens.
  new MutationObserver(() => addButton(panel)).observe(panel, { childList: true });
}

function addButton(panel) {
  const h2 = panel.querySelector(':scope > h2');
  if (!h2 || h2.querySelector(':scope > button.maximize')) return;
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'small maximize';
  b.dataset.testid = 'maximize';
  b.title = 'full screen (Esc or ⤢ again to leave)';
  b.textContent = '⤢';
  h2.append(b);
}

/** `f()` on localStorage, or null: storage may be refused (privacy settings), then the mode lasts for the page. */
function stored(f) {
  try {
    return f();
  } catch {
    return null;
  }
}

function isLarge() {
  return document.documentElement.dataset.large === '1';
}

function setLarge(on, button, { store = true } = {}) {
  if (on) document.documentElement.dataset.large = '1';
  else delete document.documentElement.dataset.large;
  button.classList.toggle('on', on);
  if (store) stored(() => localStorage.setItem(LARGE_KEY, on ? '1' : '0'));
  window.dispatchEvent(new Event('resize'));
}

/** `panel` full screen (the one before it leaves), or none with null or the same panel. */
function toggleFull(panel) {
  const current = document.querySelector('section.panel.full');
  if (current) current.classList.remove('full');
  if (panel && panel !== current) panel.classList.add('full');
  document.body.classList.toggle('has-full', !!document.querySelector('section.panel.full'));
  window.dispatchEvent(new Event('resize'));
}
