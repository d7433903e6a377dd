/** Test helpers: write a throw-away skill folder and collect what loadSuite reports. */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { ConfigError, formatDiagnostic, type Diagnostic } from '../../src/config/diagnostics.js';
import { loadSuite, type LoadResult } from '../../src/config/load.js';

export const SKILL_MD = `---
name: demo-skill
description: A demo skill used by skill-up's config tests. Use it when testing.
---

# Demo
`;

export const MINIMAL_EVAL = `schema_version: v1alpha1
cases:
  files: [evals/cases/*.yaml]
`;

export const MINIMAL_CASE = `input:
  prompt: "Say hello"
`;

/**
 * Writes `files` (path relative to the skill folder → content) into a fresh
 * `<tmp>/demo-skill/` folder. `SKILL.md` is added unless given (pass `null` to leave it out).
 * A file whose content starts with `#!` is made executable.
 */
export function writeSkill(files: Record<string, string | null>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'skill-up-config-'));
  const dir = path.join(root, 'demo-skill');
  mkdirSync(dir);
  const all: Record<string, string | null> = { 'SKILL.md': SKILL_MD, ...files };
  for (const [rel, content] of Object.entries(all)) {
    if (content === null) continue;
    const file = path.join(dir, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
    if (content.startsWith('#!')) chmodSync(file, 0o755);
  }
  return dir;
}

/** Loads `dir` and returns the ConfigError's diagnostics; fails the test if loading succeeds or throws anything else. */
export async function loadErrors(dir: string): Promise<Diagnostic[]> {
  try {
    await loadSuite(dir, { cwd: dir });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.diagnostics.filter((d) => d.severity === 'error');
  }
  throw new Error('expected loadSuite to throw a ConfigError');
}

/** Loads `dir`, which must be valid. */
export async function loadOk(dir: string): Promise<LoadResult> {
  try {
    return await loadSuite(dir, { cwd: dir });
  } catch (e) {
    if (e instanceof ConfigError) throw new Error(`unexpected errors:\n${e.message}`, { cause: e });
    throw e;
  }
}

/** The one error whose message matches `re`; fails when there is none or several. */
export function only(diags: Diagnostic[], re: RegExp): Diagnostic {
  const hits = diags.filter((d) => re.test(d.message));
  expect(hits, `one error matching ${re} in:\n${diags.map((d) => formatDiagnostic(d)).join('\n')}`).toHaveLength(1);
  return hits[0]!;
}

/** `file:line:col: path: message` relative to `dir`, for readable assertions. */
export function show(diags: Diagnostic[], dir: string): string[] {
  return diags.map((d) => formatDiagnostic(d, dir));
}
