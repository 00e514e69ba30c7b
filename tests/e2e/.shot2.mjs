import { startServer, CHROMIUM, CHROMIUM_ARGS } from './lib.mjs';
import { chromium } from 'playwright-core';
const srv = await startServer();
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
const ctx = await browser.newContext({ viewport: { width: 1280, height: 720 } });
const p = await ctx.newPage();
p.on('pageerror', (e) => console.log('pageerror', e.message));
for (const [name, q, steps] of [['r-pg15', '?scenario=R&mode=async', 70], ['r-through', '?scenario=R&mode=async&async_through_nodes=1', 70], ['h-hazard', '?scenario=H&mode=async&async_through_nodes=1&no_descendant_check=1', 400]]) {
  await p.goto(srv.url + q);
  await p.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  for (let i = 0; i < steps; i++) { if (await p.locator('[data-testid=step-event]').isDisabled()) break; await p.click('[data-testid=step-event]'); }
  await p.waitForTimeout(300);
  await p.screenshot({ path: `/tmp/shots/${name}.png` });
  const states = await p.locator('[data-testid=request-state]').allTextContents();
  const err = await p.locator('[data-testid=error]').isVisible() ? await p.textContent('[data-testid=error]') : '';
  console.log(name, 'states:', states.join(' | '), 'narration:', (await p.textContent('[data-testid=narration]')).slice(0, 200), 'error:', err.slice(0, 200));
}
await browser.close(); await srv.stop();
