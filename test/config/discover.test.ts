/** resolveEvalFile: which eval file a command means, and clear errors when there is none. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/diagnostics.js';
import { expandGlob, skillRootOf } from '../../src/config/discover.js';
import { loadSuite, resolveEvalFile } from '../../src/config/load.js';
import { MINIMAL_CASE, MINIMAL_EVAL, writeSkill } from './helpers.js';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('resolveEvalFile', () => {
  const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': MINIMAL_CASE, 'src/deep/x.txt': '' });
  const evalFile = path.join(dir, 'evals', 'eval.yaml');

  it('accepts the eval file itself, relative or absolute', () => {
    expect(resolveEvalFile(evalFile, '/')).toBe(evalFile);
    expect(resolveEvalFile('evals/eval.yaml', dir)).toBe(evalFile);
  });

  it('accepts a skill folder holding evals/eval.yaml, and its SKILL.md', () => {
    expect(resolveEvalFile(dir, '/')).toBe(evalFile);
    expect(resolveEvalFile('.', dir)).toBe(evalFile);
    expect(resolveEvalFile(path.join(dir, 'SKILL.md'), '/')).toBe(evalFile);
  });

  it('accepts a folder holding eval.yaml (the evals folder itself)', () => {
    expect(resolveEvalFile(path.join(dir, 'evals'), '/')).toBe(evalFile);
  });

  it('accepts eval.yml', () => {
    const other = writeSkill({ 'evals/eval.yml': MINIMAL_EVAL });
    expect(resolveEvalFile(other, '/')).toBe(path.join(other, 'evals', 'eval.yml'));
  });

  it('walks up from cwd to the first folder with SKILL.md and evals/eval.yaml', () => {
    expect(resolveEvalFile(undefined, path.join(dir, 'src', 'deep'))).toBe(evalFile);
    expect(resolveEvalFile(undefined, dir)).toBe(evalFile);
  });

  it('does not stop at a folder holding SKILL.md but no evals', () => {
    const nested = path.join(dir, 'vendor', 'inner-skill');
    mkdirSync(nested, { recursive: true });
    writeFileSync(path.join(nested, 'SKILL.md'), '---\nname: inner-skill\n---\n');
    expect(resolveEvalFile(undefined, nested)).toBe(evalFile);
  });

  it('explains what it looked for when nothing is found', () => {
    const err = configError(() => resolveEvalFile(undefined, '/'));
    expect(err.diagnostics).toHaveLength(1);
    expect(err.message).toMatch(/no skill with evals found: looked for a folder holding SKILL\.md and evals\/eval\.yaml in \/ and every folder above it/);
  });

  it('a missing target', () => {
    const err = configError(() => resolveEvalFile('nope', dir));
    expect(err.diagnostics[0]!.file).toBe(path.join(dir, 'nope'));
    expect(err.message).toMatch(/not found: nope/);
  });

  it('a folder without an eval file names the places it looked, and hints at evals.json', () => {
    const bare = writeSkill({ 'evals/evals.json': '{}' });
    const err = configError(() => resolveEvalFile(bare, '/'));
    expect(err.message).toMatch(/looked for evals\/eval\.yaml, evals\/eval\.yml, eval\.yaml, eval\.yml/);
    expect(err.message).toMatch(/skill-up import evals\/evals\.json/);
  });

  it('loadSuite rejects with the same ConfigError', async () => {
    await expect(loadSuite('missing-folder', { cwd: dir })).rejects.toBeInstanceOf(ConfigError);
  });
});

describe('skill root', () => {
  it('is the parent of evals/, else the eval file’s folder', () => {
    expect(skillRootOf('/a/skill/evals/eval.yaml')).toBe('/a/skill');
    expect(skillRootOf('/a/skill/eval.yaml')).toBe('/a/skill');
  });

  it('an eval.yaml next to SKILL.md works, with paths relative to that folder', async () => {
    const dir = writeSkill({ 'eval.yaml': 'schema_version: v1alpha1\ncases: {files: [cases/*.yaml]}\n', 'cases/a.yaml': MINIMAL_CASE });
    const { suite } = await loadSuite(dir, { cwd: '/' });
    expect(suite.skillDir).toBe(dir);
    expect(suite.cases[0]!.file).toBe(path.join(dir, 'cases', 'a.yaml'));
  });
});

describe('expandGlob', () => {
  it('matches relative to the root, sorted, skipping node_modules and dot-files', () => {
    const dir = writeSkill({ 'evals/cases/b.yaml': '', 'evals/cases/a.yaml': '', 'evals/cases/sub/c.yaml': '', 'evals/cases/.hidden.yaml': '', 'evals/node_modules/x.yaml': '' });
    const rel = (files: string[]) => files.map((f) => path.relative(dir, f));
    expect(rel(expandGlob(dir, 'evals/cases/*.yaml'))).toEqual(['evals/cases/a.yaml', 'evals/cases/b.yaml']);
    expect(rel(expandGlob(dir, './evals/**/*.yaml'))).toEqual(['evals/cases/a.yaml', 'evals/cases/b.yaml', 'evals/cases/sub/c.yaml']);
    expect(expandGlob(dir, 'nothing/*.yaml')).toEqual([]);
  });
});
