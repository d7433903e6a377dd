#!/usr/bin/env node
// `npm run sync:engines`: rewrites the two static copies of the engine registry
// (engines/index.ts) from the built registry (dist/engines/index.js, so run `npm run build`
// first; the npm script does): the engine table of README.md (the table above "#### Adding an
// engine") and the engine-name `description` and `examples` of schemas/eval.schema.json.
// test/engines/registry.test.ts fails when either disagrees with the registry.
//
//   node scripts/sync-engines.mjs [--root DIR] [--check]
//
// --root: the folder holding README.md and schemas/ (default: this repository).
// --check: write nothing; exit 1 and name the files that are out of date.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** @typedef {import('../src/engine/definition.js').EngineDefinition} EngineDefinition */

/** The header of the README's engine table (its first line). */
const TABLE_HEADER = '| `engine.name` |';
/** The table's last row, which is not an engine of the registry. */
const CUSTOM_ROW = '| any other name';

/**
 * The README engine-table row of a definition: name, npm package and tested version (and what
 * else it needs), the folder skills are installed at, how a skill's activation shows.
 * @param {EngineDefinition} d
 * @returns {string}
 */
export function readmeRow(d) {
  const needs = d.needs ? ` (needs ${d.needs})` : '';
  return `| \`${d.name}\` | \`${d.npmPackage}\` ${d.testedVersion}${needs} | \`${d.skillDirs[0]}/<name>/\` | ${d.activation} |`;
}

/**
 * `readme` with its engine table's engine rows replaced by one row per definition, in registry
 * order (the header and the custom-engine row kept).
 * @param {string} readme
 * @param {readonly EngineDefinition[]} defs
 * @returns {string}
 * @throws {Error} when the README has no engine table.
 */
export function syncReadme(readme, defs) {
  const lines = readme.split('\n');
  const header = lines.findIndex((l) => l.startsWith(TABLE_HEADER));
  if (header < 0) throw new Error(`README.md has no engine table (a line starting ${TABLE_HEADER})`);
  const first = header + 2; // past the header and the |---| line
  let end = first;
  while (end < lines.length && lines[end].startsWith('|') && !lines[end].startsWith(CUSTOM_ROW)) end++;
  return [...lines.slice(0, first), ...defs.map(readmeRow), ...lines.slice(end)].join('\n');
}

/**
 * The `engine.name` description of schemas/eval.schema.json: every canonical name with its
 * aliases, then the custom engine.
 * @param {readonly EngineDefinition[]} defs
 * @returns {string}
 */
export function schemaNameDescription(defs) {
  let aliasWord = 'alias ';
  const parts = defs.map((d) => {
    if (d.aliases.length === 0) return `\`${d.name}\``;
    const text = `\`${d.name}\` (${aliasWord}${d.aliases.map((a) => `\`${a}\``).join(', ')})`;
    aliasWord = ''; // said once, at the first engine with aliases
    return text;
  });
  return `${parts.join(', ')}, or any name together with \`custom\`.`;
}

/**
 * `schemaText` (schemas/eval.schema.json) with the `description` and `examples` of
 * `$defs.engine.properties.name` rewritten from the registry, the rest of the text untouched.
 * @param {string} schemaText
 * @param {readonly EngineDefinition[]} defs
 * @returns {string}
 * @throws {Error} when the schema has no such property.
 */
export function syncSchema(schemaText, defs) {
  const current = JSON.parse(schemaText).$defs?.engine?.properties?.name;
  if (!current || !Array.isArray(current.examples)) throw new Error('schemas/eval.schema.json has no $defs.engine.properties.name.examples');
  const examples = defs.flatMap((d) => [d.name, ...d.aliases]);
  const replaceOnce = (text, from, to) => {
    const at = text.indexOf(from);
    if (at < 0) throw new Error(`schemas/eval.schema.json: cannot find ${from}`);
    return text.slice(0, at) + to + text.slice(at + from.length);
  };
  // The two values are replaced where they stand (found by their current JSON text), so the
  // file's layout stays as it is.
  let out = replaceOnce(schemaText, `"examples": ${JSON.stringify(current.examples).replaceAll(',', ', ')}`, `"examples": ${JSON.stringify(examples).replaceAll(',', ', ')}`);
  out = replaceOnce(out, `"description": ${JSON.stringify(current.description)}`, `"description": ${JSON.stringify(schemaNameDescription(defs))}`);
  return out;
}

/**
 * Rewrites README.md and schemas/eval.schema.json under `root` from `defs`.
 * @param {string} root
 * @param {readonly EngineDefinition[]} defs
 * @param {{ check?: boolean }} [opts] check: write nothing
 * @returns {string[]} the files that changed (or, with `check`, would change), root-relative
 */
export function syncEngineDocs(root, defs, opts = {}) {
  const changed = [];
  for (const [file, sync] of [
    ['README.md', syncReadme],
    [join('schemas', 'eval.schema.json'), syncSchema],
  ]) {
    const path = join(root, file);
    const before = readFileSync(path, 'utf8');
    const after = sync(before, defs);
    if (after === before) continue;
    changed.push(file);
    if (!opts.check) writeFileSync(path, after);
  }
  return changed;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--root');
  const root = at >= 0 ? resolve(args[at + 1] ?? '.') : resolve(import.meta.dirname, '..');
  const check = args.includes('--check');
  const { engineDefinitions } = await import('../dist/engines/index.js');
  const changed = syncEngineDocs(root, engineDefinitions(), { check });
  if (changed.length === 0) console.log('sync:engines: README.md and schemas/eval.schema.json agree with engines/index.ts');
  else console.log(`sync:engines: ${check ? 'out of date' : 'rewrote'}: ${changed.join(', ')}`);
  if (check && changed.length > 0) process.exitCode = 1;
}
