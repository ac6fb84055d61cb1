// Accessibility: every route of the console, with its dialogs and drawer
// open, passes axe-core's WCAG 2.2 A/AA rules in both themes, against the
// real gateway + kubesim + PostgreSQL (as console.test.mjs, in a stack of
// its own, so that `make test` runs the two files at once). Screenshots of
// every route land in test-results/screens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { until } from './lib/stack.mjs';
import { newSession, axe, screenshot, settle } from './lib/browser.mjs';
import { browserSuite, finishedRuns, idleRun } from './lib/suite.mjs';

let stack;
let browser;
const { flagDir } = browserSuite((s) => ({ stack, browser } = s));

// What the routes show: two finished runs (one with metrics, a checkpoint
// and its sealed evidence) and an experiment with a run of its own.
let doneRun;
let otherRun;

test('the runs the pages show exist (kubesim runs them)', async () => {
  ({ done: doneRun, other: otherRun } = await finishedRuns(stack));
  const sweep = await stack.submit('sweep-a', 'echo "TAU_METRIC {\\"_step\\": 1, \\"loss\\": 1}"', stack.admin, { experiment: 'sweep', group: 'lr-1' });
  await stack.waitState(sweep.id, ['Succeeded']);
  await stack.waitSealed(doneRun.id);
});


test('every route passes axe (WCAG 2.2 A/AA) in both themes, dialogs and drawer open; screenshots kept', async () => {
  const idle = await idleRun(stack, flagDir);
  await stack.json('POST', '/v1/workspaces/ray/quota-requests', { token: stack.researcher, body: { resource: 'cpu', amount: '2', reason: 'more experiments' } });
  const nodes = await until(async () => (await stack.json('GET', '/v1/admin/nodes')).items, 30_000, 'nodes observed');
  const d = doneRun.id;
  const click = (name) => async (p) => {
    await p.getByRole('button', { name, exact: true }).first().click();
    await p.locator('dialog[open]').waitFor();
  };
  const routes = [
    ['home', '/ui/w/ray'],
    ['runs', '/ui/w/ray/runs'],
    ['runs-drawer', `/ui/w/ray/runs?peek=${d}`, async (p) => p.locator('dialog.drawer[open] .facts').waitFor()],
    ['runs-bulk-cancel', '/ui/w/ray/runs?name=console-idle', async (p) => {
      await p.getByRole('checkbox', { name: 'Select console-idle' }).check();
      await click('Cancel 1 selected')(p);
    }],
    ['run-overview', `/ui/runs/${d}`],
    ['run-logs', `/ui/runs/${d}/logs`, async (p) => p.locator('.log-status', { hasText: 'complete' }).waitFor()],
    ['run-metrics', `/ui/runs/${d}/metrics?m=loss`, async (p) => p.locator('.chart canvas').waitFor()],
    ['run-checkpoints', `/ui/runs/${d}/checkpoints`],
    ['run-spec', `/ui/runs/${d}/spec`],
    ['run-evidence', `/ui/runs/${d}/evidence`, async (p) => p.locator('.verdict', { hasText: 'Verified' }).first().waitFor()],
    ['run-events', `/ui/runs/${d}/events`],
    ['run-commands', `/ui/runs/${d}/commands`],
    ['run-cancel-dialog', `/ui/runs/${idle.id}`, click('Cancel run')],
    ['submit', '/ui/w/ray/submit', async (p) => p.locator('#spec-diags .card h2', { hasText: /Valid|Problems/ }).waitFor()],
    ['compare', `/ui/w/ray/compare?runs=${d},${otherRun.id}`, async (p) => p.locator('.chart canvas').waitFor({ timeout: 10_000 }).catch(async (e) => {
      throw new Error(`${e.message}: ${await p.locator('main').innerText()}`);
    })],
    ['runs-grouped', '/ui/w/ray/runs?by=owner', async (p) => p.locator('table.groups').waitFor()],
    ['experiments', '/ui/w/ray/experiments'],
    ['experiment-runs', '/ui/w/ray/experiments?project=Console&experiment=sweep', async (p) => p.locator('table.experiment-runs tbody tr').first().waitFor()],
    ['queue', '/ui/w/ray/queue'],
    ['quota', '/ui/w/ray/quota'],
    ['quota-request-dialog', '/ui/w/ray/quota?request=1', async (p) => p.locator('dialog[open]').waitFor()],
    ['tokens', '/ui/tokens'],
    ['token-created-dialog', '/ui/tokens', async (p) => {
      await p.getByLabel('Name').fill(`axe-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`);
      await p.getByRole('button', { name: 'Create token' }).click();
      await p.locator('dialog[open] .secret').waitFor();
    }],
    ['token-revoke-dialog', '/ui/tokens', async (p) => {
      await p.locator('td button.danger').first().click();
      await p.locator('dialog[open]').waitFor();
    }],
    ['settings', '/ui/settings'],
    ['admin', '/ui/admin'],
    ['admin-quota-requests', '/ui/admin/quota-requests'],
    ['admin-approve-dialog', '/ui/admin/quota-requests', async (p) => {
      await p.locator('button.primary', { hasText: 'Approve' }).first().click();
      await p.locator('dialog[open]').waitFor();
    }],
    ['admin-workspaces', '/ui/admin/workspaces'],
    ['admin-workspace', '/ui/admin/workspaces/ray'],
    ['admin-edit-dialog', '/ui/admin/workspaces', async (p) => {
      await p.getByRole('button', { name: 'Edit ray' }).click();
      await p.locator('dialog[open]').waitFor();
    }],
    ['admin-catalog', '/ui/admin/catalog', async (p) => p.locator('.cq-usage th', { hasText: 'kind-cpu-cq' }).locator('xpath=..').locator('meter').first().waitFor()],
    ['admin-policies', '/ui/admin/policies'],
    ['admin-nodes', '/ui/admin/nodes'],
    ['admin-node', `/ui/admin/nodes/${nodes[0].name}`],
    ['admin-node-cordon-dialog', `/ui/admin/nodes/${nodes[0].name}`, async (p) => {
      await p.locator('button.op-cordon, button.op-uncordon').first().click();
      await p.locator('dialog[open] #node-op-reason').waitFor();
    }],
    ['admin-node-drain-dialog', `/ui/admin/nodes/${nodes[0].name}`, async (p) => {
      await p.locator('button.op-drain').click();
      await p.locator('dialog[open] #node-op-grace').waitFor();
    }],
    ['admin-usage', '/ui/admin/usage'],
    ['admin-audit', '/ui/admin/audit'],
    ['not-found', '/ui/no/such/page'],
  ];
  const failures = [];
  // the two themes in two browser contexts at once: nothing here changes
  // what the other sees (dialogs are opened, never confirmed)
  await Promise.all(['light', 'dark'].map(async (theme) => {
    const s = await newSession(browser, stack, { theme });
    const p = s.page;
    for (const [name, url, prepare] of routes) {
      await p.goto(url);
      await settle(p);
      if (prepare) await prepare(p);
      await settle(p);
      const v = await axe(p);
      if (v.length) failures.push({ route: name, theme, v });
      await screenshot(p, `${name}-${theme}`);
    }
    await s.checkGuards();
    await s.close();
    // Signed out, and a token the gateway refuses (the re-auth dialog).
    const out = await newSession(browser, stack, { theme, signedIn: false });
    await out.page.goto('/ui/w/ray/runs');
    await out.page.locator('#login-token').waitFor();
    let v = await axe(out.page);
    if (v.length) failures.push({ route: 'login', theme, v });
    await screenshot(out.page, `login-${theme}`);
    await out.page.locator('#login-token').fill('tgp_not_a_real_token');
    await out.page.getByRole('button', { name: 'Sign in' }).click();
    await out.page.locator('.problem').waitFor();
    v = await axe(out.page);
    if (v.length) failures.push({ route: 'login-refused', theme, v });
    await out.checkGuards();
    await out.close();
  }));
  assert.deepEqual(failures, [], JSON.stringify(failures, null, 1));
});
