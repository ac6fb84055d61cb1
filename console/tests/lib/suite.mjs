// What every browser test file shares: one stack (gateway + kubesim +
// PostgreSQL) and one browser, started before the file's first test and
// stopped after its last (each test opens its own browser context), a
// folder for the flag files scripts wait on, and the runs the pages show.
import { before, after } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Stack } from './stack.mjs';
import { launch } from './browser.mjs';

/** Registers the file's before/after hooks. `ready` is called with
 * { stack, browser } once both have started, before the first test; the
 * returned object holds `flagDir` at once. */
export function browserSuite(ready) {
  const suite = { stack: undefined, browser: undefined, flagDir: mkdtempSync(path.join(tmpdir(), 'console-flags-')) };
  before(async () => {
    suite.stack = await Stack.start();
    suite.browser = await launch();
    ready(suite);
  });
  after(async () => {
    await suite.browser?.close();
    await suite.stack?.stop();
    rmSync(suite.flagDir, { recursive: true, force: true });
  });
  return suite;
}

/** Two finished runs: `done` with metrics (the last one NaN) and a
 * checkpoint, `other` with one line; both Succeeded when this returns. */
export async function finishedRuns(stack) {
  const done = await stack.submit('console-done', [
    'for i in $(seq 1 20); do echo "step $i"; echo "TAU_METRIC {\\"_step\\": $i, \\"loss\\": 0.$((100 - i))}"; done',
    'echo \'TAU_METRIC {"_step": 21, "loss": "NaN"}\'',
    'echo \'TAU_CHECKPOINT {"path": "/outputs/ckpt-20", "step": 20}\'',
  ].join('\n'));
  const other = await stack.submit('console-other', 'echo other');
  await stack.waitState(done.id, ['Succeeded']);
  await stack.waitState(other.id, ['Succeeded']);
  return { done, other };
}

/** A run that stays Running until the file `flagDir/never` exists (it never does). */
export async function idleRun(stack, flagDir) {
  const run = await stack.submit('console-idle', `while [ ! -e ${flagDir}/never ]; do sleep 0.2; done`);
  await stack.waitState(run.id, ['Running']);
  return run;
}
