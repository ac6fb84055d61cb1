// The console's browser suite: Debian's chromium (playwright-core) against
// the real gateway + kubesim + PostgreSQL (stack.py). One stack and one
// browser for the whole file; each test opens its own context. Every page
// runs with the gateway's CSP enforced and fails on a violation or on a
// request to another origin. Screenshots land in test-results/screens.
// No test here measures time: the timing budgets are in budget.test.mjs,
// which `make test` runs alone, last; the accessibility sweep is in
// a11y.test.mjs, which runs beside this file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { until, jobSpec } from './lib/stack.mjs';
import { newSession, axe, screenshot, waitIndicator, settle } from './lib/browser.mjs';
import { browserSuite, finishedRuns, idleRun } from './lib/suite.mjs';

let stack;
let browser;
const { flagDir } = browserSuite((s) => ({ stack, browser } = s));

/** Press Tab until the focused element matches `selector` (keyboard only). */
async function tabTo(page, selector, max = 80) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
  }
  throw new Error(`Tab never reached ${selector}`);
}

// Space on the focused file input opens its chooser. Under load the press can
// land while the page re-renders and the chooser never opens: the fact awaited
// is the chooser; focus is checked (and restored by Tab) before each press.
async function chooserByKeyboard(page, selector, tries = 3) {
  for (let i = 0; i < tries; i++) {
    if (!(await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector))) await tabTo(page, selector);
    const opened = page.waitForEvent('filechooser', { timeout: 10_000 }).catch(() => null);
    await page.keyboard.press('Space');
    const chooser = await opened;
    if (chooser) return chooser;
  }
  throw new Error(`Space on ${selector} never opened the file chooser (${tries} tries)`);
}

// Runs the other tests share: one with metrics and a checkpoint, sealed; another.
let doneRun;
let otherRun;

test('two finished runs exist (kubesim runs them)', async () => {
  ({ done: doneRun, other: otherRun } = await finishedRuns(stack));
});

test('initial load of the runs page is within budget and never loads chart code', async () => {
  const s = await newSession(browser, stack);
  const scripts = [];
  s.page.on('request', (r) => {
    const u = new URL(r.url());
    if (/\.(js|css)$/.test(u.pathname)) scripts.push(u.pathname);
  });
  // The gateway's root sends a browser to the console.
  await s.page.goto('/');
  assert.match(new URL(s.page.url()).pathname, /^\/ui\//);
  for (const p of ['/ui/w/ray/runs', '/ui/w/ray', '/ui/w/ray/queue', '/ui/admin/nodes', '/ui/admin/quota-requests']) {
    await s.page.goto(p);
    // Not "networkidle": a workspace page keeps its change stream open.
    await s.page.locator('main h1').first().waitFor();
    await settle(s.page);
  }
  assert.deepEqual(scripts.filter((x) => /Chart/.test(x)), [], 'chart code loaded on a list page');
  // The initial files are those index.html names; their bytes as the gateway
  // serves them (identity), gzipped here.
  const html = await (await fetch(stack.url + '/ui/')).text();
  const entry = [...html.matchAll(/(?:src|href)="(\/ui\/assets\/[^"]+)"/g)].map((m) => m[1]);
  assert.ok(entry.some((e) => e.endsWith('.js')) && entry.some((e) => e.endsWith('.css')), html);
  for (const e of entry) assert.ok(scripts.includes(e), `${e} was not loaded`);
  const size = async (e) => gzipSync(Buffer.from(await (await fetch(stack.url + e, { headers: { 'Accept-Encoding': 'identity' } })).arrayBuffer()), { level: 9 }).length;
  let js = 0;
  let css = 0;
  for (const e of entry) {
    if (e.endsWith('.js')) js += await size(e);
    else if (e.endsWith('.css')) css += await size(e);
  }
  assert.ok(js > 1024 && css > 256, `implausible sizes: JS ${js} B, CSS ${css} B`);
  console.log(`# initial JS ${(js / 1024).toFixed(1)} KB gz, CSS ${(css / 1024).toFixed(1)} KB gz`);
  assert.ok(js <= 60 * 1024, `initial JS ${js} B gz`);
  assert.ok(css <= 15 * 1024, `CSS ${css} B gz`);
  await s.checkGuards();
  await s.close();
});


test('live: the change stream resumes after a cut with Last-Event-ID; polling stands in when it is refused; offline says so', async () => {
  const s = await newSession(browser, stack);
  const p = s.page;
  const resumes = [];
  p.on('request', (r) => {
    if (r.url().includes('/v1/workspaces/ray/run-changes') && r.headers()['last-event-id']) resumes.push(r.headers()['last-event-id']);
  });
  await p.goto('/ui/w/ray/runs');
  await p.locator('.vbody a.run-link').first().waitFor();
  await waitIndicator(p, 'live');
  // Cut: the feed comes back from where it was, and a run made meanwhile shows.
  assert.ok(stack.cutAll() > 0, 'nothing to cut');
  const during = await stack.submit('console-after-cut', 'echo cut');
  await until(async () => resumes.length > 0, 30_000, 'a resume with Last-Event-ID');
  assert.match(resumes[0], /^\d+$/);
  await waitIndicator(p, 'live');
  // Deadlines here are for facts, not budgets: the 2 s budget of a change is
  // measured alone in budget.test.mjs; a loaded machine may take longer.
  await p.locator('.vbody a.run-link', { hasText: 'console-after-cut' }).waitFor({ timeout: 30_000 });
  await stack.waitState(during.id, ['Succeeded']);
  await s.close();

  // A gateway that refuses the stream: the page polls (updated_since) and says "polling".
  const f = await newSession(browser, stack);
  const fp = f.page;
  await fp.route('**/v1/workspaces/ray/run-changes*', (route) =>
    route.fulfill({ status: 404, contentType: 'application/problem+json', body: JSON.stringify({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'no stream here', instance: 'x' }) }),
  );
  const polls = [];
  fp.on('request', (r) => {
    if (r.url().includes('updated_since=')) polls.push(r.url());
  });
  await fp.goto('/ui/w/ray/runs');
  await fp.locator('.vbody a.run-link').first().waitFor();
  await waitIndicator(fp, 'polling');
  const polled = await stack.submit('console-polled', 'echo polled');
  await fp.locator('.vbody [role=row]').first().locator('a.run-link', { hasText: 'console-polled' }).waitFor({ timeout: 30_000 });
  await stack.waitState(polled.id, ['Succeeded']);
  await fp.locator('.vbody [role=row]', { has: fp.locator('a.run-link', { hasText: 'console-polled' }) }).locator('.badge', { hasText: 'Succeeded' }).waitFor({ timeout: 30_000 });
  assert.ok(polls.some((u) => u.includes('sort=updated_at')), 'polling asks for updated_since in updated_at order');
  // No gateway at all: offline, then back.
  await fp.route('**/v1/**', (route) => route.abort('internetdisconnected'));
  await waitIndicator(fp, 'offline');
  await fp.unroute('**/v1/**');
  await waitIndicator(fp, 'polling');
  await f.checkGuards();
  await f.close();
});

test('counts and grouping come from the counts endpoint and match it', async () => {
  await stack.cmd('seed_runs', { workspace: 'bulk', n: 10000 });
  const want = await stack.json('GET', '/v1/workspaces/bulk/run-counts', { token: stack.researcher });
  assert.equal(want.total, 10000);
  const s = await newSession(browser, stack, { token: stack.researcher });
  const p = s.page;
  await p.goto('/ui/w/bulk/runs?by=state');
  const groups = p.locator('table.groups tbody tr');
  await groups.first().waitFor();
  const shown = Object.fromEntries(
    (await groups.evaluateAll((rows) => rows.map((r) => [r.querySelector('th').textContent.trim(), r.querySelector('td').textContent.trim()]))).map(([k, v]) => [k, Number(v.replace(/[^\d]/g, ''))]),
  );
  const expected = Object.fromEntries(Object.entries(want.by_state).filter(([, n]) => n > 0));
  assert.deepEqual(shown, expected);
  assert.match(await p.locator('.runs-page [role=status]').textContent(), /of 10000 runs loaded/);
  await screenshot(p, 'runs-grouped');
  // By owner, then open one group: it becomes a filter.
  await p.locator('.filters select').last().selectOption('owner');
  await p.locator('table.groups th', { hasText: 'bob@example.com' }).waitFor();
  const bob = want.by_owner.find((o) => o.owner === 'bob@example.com');
  assert.equal(await p.locator('table.groups tr', { hasText: 'bob@example.com' }).locator('td').first().textContent(), String(bob.count));
  await p.locator('table.groups a', { hasText: 'bob@example.com' }).click();
  await p.waitForURL(/owner=bob%40example\.com/);
  await p.locator('.vbody a.run-link').first().waitFor();
  const owners = await p.locator('.vbody [role=row] [role=cell]:nth-child(5)').allTextContents();
  assert.ok(owners.length && owners.every((o) => o === 'bob@example.com'), owners.join());
  assert.match(await p.locator('.runs-page [role=status]').textContent(), new RegExp(`of ${bob.count} runs`));
  await s.checkGuards();
  await s.close();
});

test('log follow: bounded DOM, three cuts, the text equals the plain-text log byte for byte', async () => {
  const lines = 30000;
  const run = await stack.submit('console-logs', `for b in $(seq 0 59); do seq $((b*500+1)) $((b*500+500)) | sed 's/^/line /'; sleep 0.1; done`);
  const s = await newSession(browser, stack);
  const p = s.page;
  const resumes = [];
  p.on('request', (r) => {
    if (r.url().includes(`/v1/runs/${run.id}/logs`) && r.headers()['last-event-id']) resumes.push(r.headers()['last-event-id']);
  });
  await stack.waitState(run.id, ['Running', 'Succeeded']);
  await p.goto(`/ui/runs/${run.id}/logs`);
  let maxLines = 0;
  const sample = async () => {
    maxLines = Math.max(maxLines, await p.locator('.log-inner .line').count());
  };
  for (let cut = 0; cut < 3; cut++) {
    const before = await p.evaluate(() => document.querySelectorAll('.log-inner .line').length);
    await until(async () => (await p.locator('.log-status').textContent()).match(/([\d,]+) lines/)?.[1].replace(/,/g, '') > (cut + 1) * 2000, 30_000, 'lines arriving');
    await sample();
    assert.ok(stack.cutAll() > 0, 'nothing to cut');
    await until(async () => resumes.length > cut, 10_000, `resume ${cut + 1} with Last-Event-ID`);
    void before;
  }
  await p.locator('.log-status', { hasText: 'The log is complete.' }).waitFor({ timeout: 90_000 });
  await sample();
  await screenshot(p, 'run-logs');
  await p.getByRole('button', { name: 'Copy loaded text' }).click();
  const copied = await p.evaluate(() => navigator.clipboard.readText());
  const plain = await (await stack.api('GET', `/v1/runs/${run.id}/logs`, { headers: { Accept: 'text/plain' } })).text();
  console.log(`# ${resumes.length} resumes; at most ${maxLines} line elements; ${copied.length} bytes copied`);
  assert.equal(plain.split('\n').length - 1, lines);
  assert.equal(copied, plain);
  assert.ok(maxLines <= 500, `${maxLines} line elements`);
  assert.ok(resumes.length >= 3);
  await s.checkGuards();
  await s.close();
});

test('a 1,000,000-line log downloads whole', async () => {
  const run = await stack.submit('console-million', 'seq 1 1000000');
  await stack.waitState(run.id, ['Succeeded'], 120_000);
  await stack.waitSealed(run.id, 180_000);
  const s = await newSession(browser, stack);
  const p = s.page;
  await p.goto(`/ui/runs/${run.id}/logs?tail=5&follow=0`);
  await p.locator('.log-status', { hasText: 'complete' }).waitFor({ timeout: 30_000 });
  const [dl] = await Promise.all([p.waitForEvent('download', { timeout: 120_000 }), p.getByRole('button', { name: 'Download full log' }).click()]);
  const file = await dl.path();
  const text = readFileSync(file, 'utf8');
  const n = text.split('\n').length - 1;
  console.log(`# downloaded ${n} lines, ${text.length} bytes`);
  assert.equal(n, 1_000_000);
  assert.ok(text.startsWith('1\n2\n') && text.endsWith('\n999999\n1000000\n'));
  await s.checkGuards();
  await s.close();
});

test('a 422 places every error at its line and column; a double click submits one run', async () => {
  const s = await newSession(browser, stack, { token: stack.researcher });
  const p = s.page;
  const bad = 'name: Bad_Name\nengine: spaceship\nentrypoint: run.sh\ncompute:\n  gpus: -1\n';
  const want = await stack.api('POST', '/v1/workspaces/ray/runs:validate', { token: stack.researcher, body: { spec: bad, files: {} } });
  assert.equal(want.status, 422);
  const errors = (await want.json()).errors.filter((e) => e.line);
  assert.ok(errors.length >= 2, JSON.stringify(errors));
  await p.goto('/ui/w/ray/submit');
  await p.locator('#spec-editor').fill(bad);
  for (const e of errors) await p.locator('.diags li', { hasText: `line ${e.line}, column ${e.column}` }).filter({ hasText: e.message.slice(0, 30) }).first().waitFor();
  assert.equal(await p.locator('.gutter .bad').count(), new Set(errors.map((e) => e.line)).size);
  await screenshot(p, 'submit-422');
  const good = jobSpec('console-dblclick', 'echo once');
  await p.locator('#spec-editor').fill(good.spec);
  await p.locator('#spec-files').setInputFiles({ name: 'run.sh', mimeType: 'text/x-sh', buffer: Buffer.from(good.files['run.sh'], 'base64') });
  await p.locator('.verdict.good').waitFor();
  await p.getByRole('button', { name: 'Submit run' }).dblclick();
  await p.waitForURL(/\/ui\/runs\/[0-9a-f-]+$/);
  const list = await stack.json('GET', '/v1/workspaces/ray/runs?name=console-dblclick');
  assert.equal(list.items.length, 1);
  await s.checkGuards();
  await s.close();
});

test('experiments: project → experiment → group, its runs, and a comparison (config differences, metric summaries, charts reduced on the server)', async () => {
  const metrics = (n) => `for i in $(seq 1 ${n}); do echo "TAU_METRIC {\\"_step\\": $i, \\"loss\\": $i}"; done`;
  const a = await stack.submit('sweep-a', metrics(5000), stack.admin, { experiment: 'sweep', group: 'lr-1', cpu: '10m' });
  const b = await stack.submit('sweep-b', metrics(30), stack.admin, { experiment: 'sweep', group: 'lr-2', cpu: '20m' });
  await Promise.all([stack.waitState(a.id, ['Succeeded']), stack.waitState(b.id, ['Succeeded'])]);
  const lossCount = async (id) => (await stack.json('GET', `/v1/runs/${id}/metrics`)).items.find((m) => m.name === 'loss')?.count;
  await until(async () => (await lossCount(a.id)) === 5000 && (await lossCount(b.id)) === 30, 60_000, 'the metrics of both runs');
  const s = await newSession(browser, stack);
  const p = s.page;
  await p.goto('/ui/w/ray/experiments');
  const sweep = p.locator('table.experiments tr', { has: p.locator('th a', { hasText: /^sweep$/ }) });
  await sweep.waitFor();
  assert.equal((await sweep.locator('td').first().textContent()).trim(), '2');
  // A group, then the whole experiment.
  await sweep.locator('a', { hasText: 'lr-1' }).click();
  await p.waitForURL(/group=lr-1/);
  await until(async () => (await p.locator('table.experiment-runs tbody a').allTextContents()).join() === 'sweep-a', 10_000, 'the group lr-1 alone');
  await sweep.locator('th a').click();
  await until(async () => (await p.locator('table.experiment-runs tbody tr').count()) === 2, 10_000, 'both runs of sweep');
  await screenshot(p, 'experiments');
  for (const r of [a, b]) await p.getByRole('checkbox', { name: new RegExp(`^Select sweep-. ${r.id.slice(0, 8)}$`) }).check();
  const points = [];
  p.on('response', async (r) => {
    if (r.url().includes('max_points=')) points.push({ url: r.url(), body: await r.json().catch(() => null) });
  });
  await p.getByRole('button', { name: 'Compare 2 selected' }).click();
  await p.waitForURL(/\/compare\?runs=/);
  const want = await stack.json('GET', `/v1/workspaces/ray/runs:compare?ids=${a.id},${b.id}`);
  assert.ok(want.config_differences.some((d) => /cpu/.test(d.path)), JSON.stringify(want.config_differences));
  await p.locator('table.config-diff').waitFor();
  const paths = await p.locator('table.config-diff tbody th').allTextContents();
  assert.deepEqual(paths, want.config_differences.map((d) => d.path));
  const loss = p.locator('table.metric-summaries tr', { has: p.locator('th', { hasText: /^loss$/ }) });
  assert.deepEqual(await loss.locator('td').allTextContents(), ['1 / 5000 / 5000', '1 / 30 / 30']);
  await p.locator('.chart canvas').waitFor();
  await screenshot(p, 'compare');
  const ofA = points.find((x) => x.url.includes(a.id));
  assert.ok(ofA && ofA.body.reduced === true && ofA.body.total_points === 5000 && ofA.body.items.length <= 2000, JSON.stringify(ofA?.body?.total_points));
  assert.match(await p.locator('main').textContent(), /1 of 2 series reduced on the server/);
  // The run's own chart says how much it shows.
  await p.goto(`/ui/runs/${a.id}/metrics?m=loss`);
  await p.locator('.chart canvas').waitFor();
  assert.match(await p.locator('main').textContent(), new RegExp(`${ofA.body.items.length.toLocaleString('en-US')} of 5,000 points shown \\(reduced on the server`));
  await s.checkGuards();
  await s.close();
});

test('evidence verifies in the browser; one altered byte or a tampered event is caught', async () => {
  await stack.waitSealed(doneRun.id);
  const s = await newSession(browser, stack);
  const p = s.page;
  await p.goto(`/ui/runs/${doneRun.id}/evidence`);
  await p.locator('.verdict', { hasText: 'Verified with key' }).waitFor();
  await screenshot(p, 'run-evidence');
  await p.route(`**/v1/runs/${doneRun.id}/evidence`, async (route) => {
    const res = await route.fetch();
    const ev = await res.json();
    const i = ev.canonical.indexOf('"name":"console-done"') + 9;
    ev.canonical = ev.canonical.slice(0, i) + 'C' + ev.canonical.slice(i + 1);
    await route.fulfill({ response: res, json: ev });
  });
  await p.reload();
  await p.locator('.verdict.bad', { hasText: 'Not verified' }).waitFor();
  await p.locator('.verdict.bad', { hasText: 'sha256 does not match' }).waitFor();
  await p.unroute(`**/v1/runs/${doneRun.id}/evidence`);
  await p.goto(`/ui/runs/${doneRun.id}/events`);
  await p.locator('.verdict.good', { hasText: 'Chain intact' }).waitFor();
  await p.route(`**/v1/runs/${doneRun.id}/events?*`, async (route) => {
    const res = await route.fetch();
    const body = await res.json();
    if (body.items[1]) body.items[1].message = (body.items[1].message ?? '') + '!';
    await route.fulfill({ response: res, json: body });
  });
  await p.reload();
  await p.locator('.verdict.bad', { hasText: 'Chain broken at event 2' }).waitFor();
  await s.checkGuards();
  await s.close();
});

test('keyboard only: sign in, filter, open a run, follow its logs, cancel, submit, approve a quota request, cordon and uncordon a node', async () => {
  const idle = await idleRun(stack, flagDir);
  const s = await newSession(browser, stack, { signedIn: false });
  const p = s.page;
  const key = (k) => p.keyboard.press(k);
  // Sign in.
  await p.goto('/ui/w/ray/runs');
  await tabTo(p, '#login-token');
  await p.keyboard.type(stack.admin_long);
  await tabTo(p, 'input[type=checkbox]'); // remember in this tab: the journey reloads pages
  await key('Space');
  await key('Enter');
  await p.locator('.runs-page').waitFor();
  // Filter runs: "/" jumps to the name filter.
  await p.locator('.vbody a.run-link').first().waitFor();
  await p.locator('body').focus();
  await key('/');
  assert.equal(await p.evaluate(() => document.activeElement?.id), 'runs-filter-name');
  await p.keyboard.type('console-done');
  await key('Enter');
  await until(async () => (await p.locator('.vbody a.run-link').allTextContents()).join() === 'console-done', 10_000, 'the filtered list');
  // Open the run.
  await tabTo(p, 'a.run-link');
  await key('Enter');
  await p.waitForURL(`**/ui/runs/${doneRun.id}`);
  // Follow its logs.
  await tabTo(p, 'nav.tabs a[href$="/logs"]');
  await key('Enter');
  await p.locator('.log-status', { hasText: 'The log is complete.' }).waitFor();
  // Cancel a running run, with the confirmation; Escape first returns focus.
  await p.goto(`/ui/runs/${idle.id}`);
  await p.locator('.run-state .badge', { hasText: 'Running' }).waitFor({ timeout: 10_000 }).catch(async (e) => {
    throw new Error(`${e.message}; the API says ${JSON.stringify(await stack.json('GET', `/v1/runs/${idle.id}`))}`);
  });
  await tabTo(p, 'button.danger');
  await key('Enter');
  await p.locator('dialog[open]').waitFor();
  await key('Escape');
  await p.locator('dialog[open]').waitFor({ state: 'detached' });
  assert.equal(await p.evaluate(() => document.activeElement?.textContent), 'Cancel run');
  await key('Enter');
  await p.locator('dialog[open]').waitFor();
  await tabTo(p, 'dialog[open] button.danger');
  await key('Enter');
  await p.locator('.run-state .badge', { hasText: 'Cancelled' }).waitFor({ timeout: 30_000 });
  // Submit a spec: type it, attach the file through the file chooser the keyboard opens.
  await p.goto('/ui/w/ray/submit');
  const spec = jobSpec('console-keyboard', 'echo typed');
  await tabTo(p, '#spec-editor');
  await key('Control+A');
  await p.keyboard.type(spec.spec);
  // the typed spec's check has come back (it re-renders the page below the
  // editor) before the keyboard moves on
  await p.locator('#spec-diags .card h2', { hasText: /^(Valid|Problems)$/ }).waitFor();
  await tabTo(p, '#spec-files');
  const chooser = await chooserByKeyboard(p, '#spec-files');
  await chooser.setFiles({ name: 'run.sh', mimeType: 'text/x-sh', buffer: Buffer.from(spec.files['run.sh'], 'base64') });
  await p.locator('.verdict.good').waitFor();
  await tabTo(p, 'button.primary');
  await key('Enter');
  await p.waitForURL(/\/ui\/runs\/[0-9a-f-]+$/);
  // Approve a quota request.
  const req = await stack.json('POST', '/v1/workspaces/ray/quota-requests', { token: stack.researcher, body: { resource: 'memory', amount: '1Gi', reason: 'keyboard journey' } });
  await p.goto('/ui/admin/quota-requests');
  await p.locator('td', { hasText: 'keyboard journey' }).waitFor();
  await tabTo(p, `button[aria-label="Approve 1Gi memory for ray"]`);
  await key('Enter');
  await tabTo(p, '#decision-note');
  await p.keyboard.type('approved from the keyboard');
  await tabTo(p, 'dialog[open] button.primary');
  await key('Enter');
  await until(async () => (await stack.json('GET', `/v1/admin/quota-requests/${req.id}`)).state === 'approved', 10_000, 'the request approved');
  // Open a node.
  await p.goto('/ui/admin');
  await tabTo(p, 'nav.tabs a[href="/ui/admin/nodes"]');
  await key('Enter');
  await tabTo(p, 'a[href^="/ui/admin/nodes/"]');
  await key('Enter');
  await p.waitForURL(/\/ui\/admin\/nodes\/.+/);
  await p.locator('dl.facts').waitFor();
  // Cordon it, with a reason, then uncordon it.
  const nodeName = decodeURIComponent(new URL(p.url()).pathname.split('/').pop());
  const node = () => stack.json('GET', `/v1/admin/nodes/${nodeName}`);
  await tabTo(p, 'button.op-cordon');
  await key('Enter');
  await tabTo(p, '#node-op-reason');
  await p.keyboard.type('keyboard maintenance');
  await tabTo(p, 'dialog[open] button[type=submit]');
  await key('Enter');
  await until(async () => (await node()).cordon?.reason === 'keyboard maintenance', 10_000, 'the node cordoned');
  await p.locator('dl.facts dd', { hasText: 'cordoned by' }).waitFor();
  await tabTo(p, 'button.op-uncordon');
  await key('Enter');
  await tabTo(p, 'dialog[open] button[type=submit]');
  await key('Enter');
  await until(async () => !(await node()).unschedulable, 10_000, 'the node uncordoned');
  await p.locator('dl.facts dd', { hasText: /^no$/ }).waitFor();
  await s.checkGuards();
  await s.close();
});

test('a token revoked mid-session asks to sign in again over the page, which keeps its state', async () => {
  const pat = await stack.json('POST', '/v1/tokens', { token: stack.researcher, body: { name: 'console-reauth', workspace: 'ray', role: 'researcher', expires_in_days: 1 } });
  const s = await newSession(browser, stack, { token: pat.token });
  const p = s.page;
  await p.goto('/ui/w/ray/runs?state=Succeeded');
  await p.locator('.vbody a.run-link').first().waitFor();
  assert.ok((await stack.api('DELETE', `/v1/tokens/${pat.id}`, { token: stack.researcher })).ok);
  const dialog = p.locator('dialog[open]', { hasText: 'Your session has ended' });
  await dialog.waitFor({ timeout: 15_000 });
  await p.keyboard.press('Escape');
  assert.equal(await dialog.count(), 1, 'Escape does not dismiss the sign-in');
  assert.equal(await p.evaluate(() => sessionStorage.getItem('taugate.token')), pat.token);
  await dialog.locator('#reauth-token').fill(stack.researcher);
  await dialog.getByRole('button', { name: 'Sign in' }).click();
  await dialog.waitFor({ state: 'detached' });
  assert.match(p.url(), /\/ui\/w\/ray\/runs\?state=Succeeded$/);
  assert.equal(await p.locator('.filters select').first().inputValue(), 'Succeeded');
  await p.locator('.vbody a.run-link').first().waitFor();
  assert.equal(await p.evaluate(() => sessionStorage.getItem('taugate.token')), null, 'the new token is kept in memory only');
  await s.checkGuards();
  await s.close();
});

test('drain a node from its page: a reason, a confirmation, what became of each pod; then uncordon', async () => {
  const nodes = (await stack.json('GET', '/v1/admin/nodes')).items;
  const target = nodes.find((n) => n.runs?.length) ?? nodes[0];
  const s = await newSession(browser, stack);
  const p = s.page;
  await p.goto(`/ui/admin/nodes/${target.name}`);
  await p.locator('button.op-drain').click();
  const dialog = p.locator('dialog[open]');
  await dialog.getByRole('button', { name: 'Drain node' }).click();
  // The reason is required: nothing is sent without one.
  assert.equal(await dialog.locator('#node-op-reason:invalid').count(), 1);
  await dialog.locator('#node-op-reason').fill('console drain test');
  await dialog.locator('#node-op-grace').fill('1');
  await dialog.getByRole('button', { name: 'Drain node' }).click();
  await dialog.locator('[role=status]', { hasText: `${target.name} is cordoned` }).waitFor({ timeout: 30_000 });
  const after = await stack.json('GET', `/v1/admin/nodes/${target.name}`);
  assert.equal(after.cordon?.drain, true);
  assert.equal(after.cordon?.reason, 'console drain test');
  const rows = await dialog.locator('table.drain-result tbody tr').count();
  assert.match(await dialog.locator('[role=status]').textContent(), new RegExp(`${rows} pods? considered`));
  assert.deepEqual(await axe(p), []);
  await screenshot(p, 'admin-node-drained');
  await dialog.getByRole('button', { name: 'Done' }).click();
  await p.locator('dl.facts dd', { hasText: 'drained by' }).waitFor();
  await p.locator('button.op-uncordon').click();
  await p.locator('dialog[open]').getByRole('button', { name: 'Uncordon node' }).click();
  await until(async () => !(await stack.json('GET', `/v1/admin/nodes/${target.name}`)).unschedulable, 10_000, 'the node uncordoned');
  await s.checkGuards();
  await s.close();
});
