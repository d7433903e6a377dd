#!/usr/bin/env node
// Writes the reference pages docs/reference/*.md from schemas/eval.schema.json,
// case.schema.json and model-script.schema.json (src/docs/reference.ts, from dist/: run by
// `npm run docs:reference` after the build). test/docs/reference.test.ts fails while a page
// differs from what this writes.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { REFERENCE_PAGES, renderReferencePage } = await import(join(root, 'dist/src/docs/reference.js'));

// The pages refer to each other's schemas: all three documents, by `$id`.
const docs = new Map(REFERENCE_PAGES.map((p) => [p.schemaId, JSON.parse(readFileSync(join(root, 'schemas', p.schemaFile), 'utf8'))]));
for (const page of REFERENCE_PAGES) {
  const out = join(root, page.output);
  const text = renderReferencePage(page.kind, docs);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
  process.stdout.write(`wrote ${page.output} (${text.length} bytes)\n`);
}
