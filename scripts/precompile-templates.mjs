#!/usr/bin/env node
// Build step (package.json `build`, after tsc): precompiles the HTML report's Handlebars
// templates into dist/src/report/html/templates.precompiled.cjs, which the built renderer
// loads with the runtime-only handlebars/runtime instead of compiling the templates on every
// run. The module carries a hash of the templates it was made from; the renderer ignores it
// when the templates differ (src/report/html/templates.ts, render.ts).
//
//   node scripts/precompile-templates.mjs [out-file]
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { readTemplateSources } = await import(join(root, 'dist/src/report/html/templates.js'));
const { precompiledModuleText } = await import(join(root, 'dist/src/report/html/precompile.js'));
// The name src/report/html/render.ts requires beside itself (a literal there: the bundle takes it from its vendor bundle).
const out = resolve(process.argv[2] ?? join(root, 'dist/src/report/html/templates.precompiled.cjs'));
const text = precompiledModuleText(readTemplateSources(join(root, 'src/report/html')));
mkdirSync(dirname(out), { recursive: true });
// Temp file + rename: a renderer starting meanwhile sees the old module or the new one, never half.
const tmp = `${out}.tmp-${process.pid}`;
writeFileSync(tmp, text);
renameSync(tmp, out);
console.log(`precompiled the HTML report templates into ${out} (${text.length} bytes)`);
