// Debian's chromium driven by playwright-core (no browser download), with
// the page guards every test relies on: the CSP is enforced and any
// violation is recorded, every request must go to the console's own
// origin, long tasks are recorded, and axe checks WCAG 2.2 A/AA.
import { chromium } from 'playwright-core';
import { readFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { until } from './stack.mjs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SCREENS = path.join(HERE, '..', '..', 'test-results', 'screens');

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export async function launch() {
  // launch() gives each browser a fresh temporary --user-data-dir of its own.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

// Runs in every page before its scripts: records CSP violations and long tasks.
function guards() {
  window.__csp = [];
  window.__longTasks = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  // When the first run row appears (the cold-load measure of the runs page).
  const rows = new MutationObserver(() => {
    if (document.querySelector('a.run-link')) {
      window.__firstRow = performance.now();
      rows.disconnect();
    }
  });
  rows.observe(document, { childList: true, subtree: true });
  try {
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) window.__longTasks.push(e.duration);
    }).observe({ type: 'longtask', buffered: true });
  } catch {
    /* no longtask support */
  }
}

/** A fresh context signed in with `token` (kept in sessionStorage as "remember in this tab" does). */
export async function newSession(browser, stack, { token = stack.admin, theme = 'light', signedIn = true } = {}) {
  const ctx = await browser.newContext({ baseURL: stack.url, viewport: { width: 1280, height: 860 }, acceptDownloads: true });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.url });
  await ctx.addInitScript(guards);
  await ctx.addInitScript(
    ([t, th]) => {
      if (t) sessionStorage.setItem('taugate.token', t);
      localStorage.setItem('taugate.theme', th);
    },
    [signedIn ? token : null, theme],
  );
  const origin = new URL(stack.url).origin;
  const foreign = [];
  const consoleErrors = [];
  ctx.on('request', (r) => {
    const u = new URL(r.url());
    if (!['data:', 'blob:'].includes(u.protocol) && u.origin !== origin) foreign.push(r.url());
  });
  ctx.on('page', (p) => p.on('console', (m) => { if (m.type() === 'error' && /Content.Security.Policy|Refused to/i.test(m.text())) consoleErrors.push(m.text()); }));
  const page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error' && /Content.Security.Policy|Refused to/i.test(m.text())) consoleErrors.push(m.text()); });
  return {
    ctx,
    page,
    /** Throws when the page broke the CSP or called another origin. */
    async checkGuards() {
      const csp = await page.evaluate(() => window.__csp).catch(() => []);
      if (csp.length || consoleErrors.length) throw new Error(`CSP violations: ${JSON.stringify([...csp, ...consoleErrors])}`);
      if (foreign.length) throw new Error(`requests to another origin: ${foreign.join(', ')}`);
    },
    async close() {
      await ctx.close();
    },
  };
}

/** axe-core WCAG 2.2 A/AA on the page as it is now; returns the violations. */
export async function axe(page) {
  const has = await page.evaluate(() => typeof window.axe !== 'undefined');
  if (!has) await page.evaluate(AXE + '\n;0');
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] }, resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ' :: ' + n.failureSummary) }));
  });
}

export async function screenshot(page, name) {
  mkdirSync(SCREENS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENS, `${name}.png`), fullPage: false });
}

/** The connection indicator's word. */
export const indicator = (p) => p.locator('header .conn').textContent();

export const waitIndicator = (p, word, ms = 10_000) => until(async () => (await indicator(p)) === word, ms, `the indicator to say ${word}`);

/** Wait until the page shows no "Loading …" status. */
export async function settle(p) {
  await p.waitForFunction(() => ![...document.querySelectorAll('main [role=status], main p.muted')].some((e) => /^Loading|Verifying|Connecting/.test(e.textContent ?? '')), null, { timeout: 15_000 });
}
