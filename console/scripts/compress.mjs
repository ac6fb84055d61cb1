// Precompress the built console (.br and .gz beside each text file; the
// gateway picks by Accept-Encoding) and hold the entry to its size budget:
// the JavaScript and CSS that index.html loads, gzipped.
import { readdirSync, readFileSync, writeFileSync, statSync } from 'node:fs';
import { join, extname } from 'node:path';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';

const dir = process.argv[2] ?? 'dist';
const BUDGET = { js: 60 * 1024, css: 15 * 1024 };
const TEXT = new Set(['.js', '.css', '.html', '.svg', '.json', '.txt', '.map']);

function walk(d) {
  return readdirSync(d).flatMap((n) => {
    const p = join(d, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

for (const f of walk(dir)) {
  if (!TEXT.has(extname(f))) continue;
  const data = readFileSync(f);
  if (data.length < 256) continue;
  writeFileSync(f + '.gz', gzipSync(data, { level: 9 }));
  writeFileSync(f + '.br', brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
}

// The initial load: what index.html names (script, modulepreload, stylesheet).
const html = readFileSync(join(dir, 'index.html'), 'utf8');
const refs = [...html.matchAll(/(?:src|href)="\/ui\/(assets\/[^"]+)"/g)].map((m) => m[1]);
const size = { js: 0, css: 0 };
for (const r of refs) {
  const kind = extname(r).slice(1);
  if (kind in size) size[kind] += gzipSync(readFileSync(join(dir, r)), { level: 9 }).length;
}
const report = `initial JS ${(size.js / 1024).toFixed(1)} KB gz (budget ${BUDGET.js / 1024}), CSS ${(size.css / 1024).toFixed(1)} KB gz (budget ${BUDGET.css / 1024})`;
if (size.js > BUDGET.js || size.css > BUDGET.css) {
  console.error(`console: over budget: ${report}`);
  process.exit(1);
}
console.log(`console: ${report}`);
