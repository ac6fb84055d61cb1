// The console's pure logic against independent oracles: the canonical JSON
// the browser recomputes hashes with is compared to jansson itself (a tiny
// C program built here against the same libjansson the gateway uses), on
// random documents; LTTB and the line diff on their defining properties.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadTs } from './lib/ts.mjs';

let dir;
let oracle;
let canon;

const ORACLE_C = `
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* One JSON document per line in, its canonical form (as the gateway writes
   event hashes and evidence) per line out. */
int main(void) {
    static char line[1 << 20];
    while (fgets(line, sizeof(line), stdin)) {
        json_error_t err;
        json_t *v = json_loads(line, JSON_DECODE_ANY, &err);
        if (!v) { printf("!error %s\\n", err.text); continue; }
        char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        fputs(s, stdout); fputc('\\n', stdout);
        free(s); json_decref(v);
    }
    return 0;
}`;

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'console-oracle-'));
  writeFileSync(path.join(dir, 'oracle.c'), ORACLE_C);
  oracle = path.join(dir, 'oracle');
  const cflags = execFileSync('pkg-config', ['--cflags', '--libs', 'jansson'], { encoding: 'utf8' }).trim().split(/\s+/).filter(Boolean);
  execFileSync('cc', ['-O1', '-o', oracle, path.join(dir, 'oracle.c'), ...cflags]);
  canon = await loadTs('lib/canonical.ts');
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** A deterministic PRNG, so a failure can be replayed. */
function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

function randomReal(r) {
  const pick = r();
  if (pick < 0.1) return [0.1, 0.2, 1 / 3, 3, 1e17, 1e-5, 1e21, 5e-324, 1.7976931348623157e308, 123456789012345680][Math.floor(r() * 10)];
  const mag = 10 ** Math.floor(r() * 44 - 22);
  return (r() < 0.5 ? -1 : 1) * r() * mag;
}

const CHARS = ['a', 'Z', '0', ' ', '"', '\\\\', '/', '\u0001', '\u001f', '\u007f', '\n', '\t', 'é', '€', '漢', '\u2028', '😀'];

function randomString(r) {
  let s = '';
  const n = Math.floor(r() * 8);
  for (let i = 0; i < n; i++) s += CHARS[Math.floor(r() * CHARS.length)];
  return s;
}

/** Random JSON text with reals written as reals (1.5, 1e17) and integers as integers. */
function randomDoc(r, depth = 0) {
  const k = r();
  if (depth > 3 || k < 0.35) {
    const t = Math.floor(r() * 6);
    if (t === 0) return JSON.stringify(Math.floor((r() - 0.5) * 2 ** 40));
    if (t === 1) {
      const x = randomReal(r);
      const s = String(x);
      return /[.eE]/.test(s) ? s : s + '.0';
    }
    if (t === 2) return JSON.stringify(randomString(r));
    return ['true', 'false', 'null'][t - 3];
  }
  if (k < 0.65) return '[' + Array.from({ length: Math.floor(r() * 4) }, () => randomDoc(r, depth + 1)).join(',') + ']';
  const keys = new Set(Array.from({ length: Math.floor(r() * 5) }, () => randomString(r)));
  return '{' + [...keys].map((key) => JSON.stringify(key) + ':' + randomDoc(r, depth + 1)).join(',') + '}';
}

test('canonical JSON equals jansson on 3,000 random documents', () => {
  const r = rng(19);
  const docs = Array.from({ length: 3000 }, () => randomDoc(r));
  const out = spawnSync(oracle, { input: docs.join('\n') + '\n', encoding: 'utf8', maxBuffer: 64 << 20 });
  const want = out.stdout.split('\n').slice(0, docs.length);
  let checked = 0;
  docs.forEach((d, i) => {
    if (want[i].startsWith('!error')) return; // a double jansson cannot read (none expected)
    assert.equal(canon.canonical(canon.parseExact(d)), want[i], `document ${i}: ${d}`);
    checked++;
  });
  assert.equal(checked, docs.length);
});

test('reals are written as %.17g with jansson\'s ".0" and exponent rules', () => {
  const r = rng(7);
  const xs = [0.1, 3, -2, 1e17, 1e-5, 1e16, 12345678901234567890, 2 ** -1074, ...Array.from({ length: 2000 }, () => randomReal(r))];
  const texts = xs.map((x) => (/[.eE]/.test(String(x)) ? String(x) : String(x) + '.0'));
  const out = spawnSync(oracle, { input: texts.join('\n') + '\n', encoding: 'utf8' }).stdout.split('\n');
  xs.forEach((x, i) => assert.equal(canon.formatReal(x), out[i], `x = ${x}`));
});

test('the event chain check accepts a chain and names the first altered event', async () => {
  const runId = '409d0024-3dc3-4d3f-8e1b-be25561b1c1e';
  const events = [];
  let prev = null;
  for (let seq = 1; seq <= 4; seq++) {
    const e = { seq, at: `2026-12-02T11:32:3${seq}.000000Z`, state: seq === 4 ? 'Succeeded' : null, reason: null, message: `m${seq}`, source: 'job', data: { attempt: 1, ratio: 0.25 * seq } };
    // Hash as docs/evidence.md says, the canonical text from jansson (the oracle).
    const body = JSON.stringify({ run_id: runId, seq, at: e.at, state: e.state, reason: null, message: e.message, source: 'job', data: { attempt: 1, ratio: e.data.ratio } }).replace(/"ratio":(\d+)(?=[,}])/, '"ratio":$1.0');
    const canonical = spawnSync(oracle, { input: body + '\n', encoding: 'utf8' }).stdout.trim();
    const hash = await canon.sha256Hex((prev ?? '') + '\n' + canonical);
    events.push({ ...e, prev_hash: prev, hash });
    prev = hash;
  }
  const text = JSON.stringify({ items: events }).replace(/"ratio":(\d+)(?=[,}])/g, '"ratio":$1.0');
  const ok = await canon.checkChain(runId, canon.parseExact(text).items);
  assert.deepEqual(ok, { ok: true, events: 4, head: prev });
  const tampered = canon.parseExact(text.replace('"m3"', '"m3!"')).items;
  assert.deepEqual(await canon.checkChain(runId, tampered), { ok: false, events: 4, brokenAt: 3 });
  const relinked = canon.parseExact(text).items;
  relinked[1].prev_hash = relinked[0].prev_hash;
  assert.equal((await canon.checkChain(runId, relinked)).brokenAt, 2);
});

test('LTTB keeps the ends, the threshold and a lone spike', async () => {
  const { lttb } = await loadTs('lib/lttb.ts');
  const xs = Array.from({ length: 100_000 }, (_, i) => i);
  const ys = xs.map((x) => Math.sin(x / 500));
  ys[54_321] = 50;
  const [dx, dy] = lttb(xs, ys, 1600);
  assert.equal(dx.length, 1600);
  assert.equal(dx[0], 0);
  assert.equal(dx.at(-1), 99_999);
  assert.ok(dx.includes(54_321) && dy.includes(50), 'the spike is kept');
  assert.ok(dx.every((x, i) => i === 0 || x > dx[i - 1]), 'x stays ordered');
  const [sx] = lttb(xs.slice(0, 10), ys.slice(0, 10), 1600);
  assert.equal(sx.length, 10);
});

test('the line diff rebuilds both texts', async () => {
  const { lineDiff } = await loadTs('lib/diff.ts');
  const r = rng(3);
  for (let n = 0; n < 200; n++) {
    const gen = () => Array.from({ length: Math.floor(r() * 12) }, () => 'abcde'[Math.floor(r() * 5)]).join('\n');
    const a = gen();
    const b = gen();
    const d = lineDiff(a, b);
    assert.equal(d.filter((x) => x.op !== '+').map((x) => x.line).join('\n'), a);
    assert.equal(d.filter((x) => x.op !== '-').map((x) => x.line).join('\n'), b);
  }
});
