// Load one of the console's TypeScript modules (with no imports) in Node:
// transpiled by the TypeScript compiler the build uses, nothing bundled.
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');
const out = mkdtempSync(path.join(tmpdir(), 'console-ts-'));

export async function loadTs(rel) {
  const js = ts.transpileModule(readFileSync(path.join(SRC, rel), 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const file = path.join(out, rel.replace(/[/\\]/g, '_').replace(/\.ts$/, '.mjs'));
  writeFileSync(file, js);
  return import(pathToFileURL(file).href);
}
