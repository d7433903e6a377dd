/**
 * Report libraries are loaded only when their report is written: a `skill-up run` whose
 * formats are `[json]` (in the suite's report.formats, or `--format json`) never loads
 * junit-report-builder (a 788 KB bundle) or Handlebars. Checked on the built CLI, with a
 * preload that lists every CommonJS module the skill-up process loaded (both libraries are
 * CommonJS) and a fresh code cache folder: the executable takes both from its vendor bundle
 * (scripts/bundle.mjs), whose code cache is written when it is first loaded. The same checks
 * see them when junit and html are written.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeCostSuite } from '../fixtures/cost-agent/suite.mjs';
import { BIN, runCli } from '../cli/helpers.js';

/** Runs the built CLI; returns the CommonJS modules its own process loaded (not the agents'). */
async function loadedModules(args: string[]): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'su-lazy-'));
  const cache = join(dir, 'cache');
  const preload = join(dir, 'list-modules.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(join(dir, 'mods-'))} + process.pid + '.json', JSON.stringify({ argv: process.argv, mods: Object.keys(require('node:module')._cache) })));\n`,
  );
  const r = await runCli(args, { env: { NODE_OPTIONS: `--require ${preload}`, SKILL_UP_CACHE_DIR: cache } });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  const lists = readdirSync(dir)
    .filter((f) => f.startsWith('mods-'))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as { argv: string[]; mods: string[] });
  const own = lists.find((l) => l.argv[1] === BIN);
  expect(own, 'the CLI process listed its modules').toBeDefined();
  const codeCache = join(cache, 'code-cache');
  const vendor = existsSync(codeCache) && readdirSync(codeCache).some((f) => f.startsWith('skill-up.@vendor.'));
  // The vendor bundle holds both packages: it stands for each of them.
  return vendor ? [...own!.mods, 'VENDOR/node_modules/junit-report-builder/', 'VENDOR/node_modules/handlebars/'] : own!.mods;
}

const uses = (mods: string[], pkg: string) => mods.some((m) => m.includes(`/node_modules/${pkg}/`));

describe('report libraries load only with their report', () => {
  it('a run writing only result.json loads neither junit-report-builder nor handlebars; junit and html load them', async () => {
    const root = mkdtempSync(join(tmpdir(), 'su-lazy-run-'));
    const skill = writeCostSuite(root, { cases: 1, formats: ['json'] });
    for (const args of [[], ['--format', 'json']]) {
      const mods = await loadedModules(['run', skill, '--output-dir', join(root, `out${args.length}`), ...args]);
      expect(mods.length).toBeGreaterThan(0);
      expect(uses(mods, 'junit-report-builder'), args.join(' ')).toBe(false);
      expect(uses(mods, 'handlebars'), args.join(' ')).toBe(false);
    }
    const all = await loadedModules(['run', skill, '--output-dir', join(root, 'all'), '--format', 'json,junit,html']);
    expect(uses(all, 'junit-report-builder')).toBe(true);
    expect(uses(all, 'handlebars')).toBe(true);
  });
});
