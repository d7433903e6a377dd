/**
 * Review finding 4: picomatch compiles a glob into a backtracking JS regex, and the names it
 * is matched against come from the agent. `@(a*|a*)+(a*)*x` in `collect_artifacts` against a
 * file `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!` blocked the event loop for 15 s (92 s at 40
 * characters), so no timeout could fire. User globs are now compiled with `noextglob`, and
 * the constructs that still make slow regexes (groups, `|`, more than two `*` in a segment,
 * very long globs) are refused with a clear message (src/skill/files.ts globError).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectArtifacts } from '../../src/runtime/artifacts.js';
import { compileGlob, GlobError, globError, globMatcher, MAX_GLOB_LENGTH } from '../../src/skill/files.js';
import { PlanError, selectCases } from '../../src/plan/plan.js';
import type { Suite } from '../../src/config/types.js';

const EVIL = '@(a*|a*)+(a*)*x';
const NAME = `${'a'.repeat(30)}!`;

describe('user globs cannot block the event loop', () => {
  it('collect_artifacts with the extglob and that file name refuses the glob before matching it', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'su-glob-'));
    writeFileSync(join(ws, NAME), 'x');
    writeFileSync(join(ws, `@${NAME}`), 'x');
    const dest = mkdtempSync(join(tmpdir(), 'su-glob-out-'));
    await expect(collectArtifacts(ws, [EVIL], dest)).rejects.toThrow(/extglob or regex groups are not supported/);
  });

  it('globError refuses groups, `|`, many `*` in a segment and long globs, and accepts ordinary ones', () => {
    for (const bad of [EVIL, '(a*|a*)(a*|a*)x', 'a|b', '*a*a*a*x', '{a*,a*}{a*,a*}x', 'x'.repeat(MAX_GLOB_LENGTH + 1)]) {
      expect(globError(bad), bad).toBeTypeOf('string');
    }
    for (const ok of ['**', '*.py', 'out/**', 'src/**/*.ts', '**/*.{ts,tsx}', '*.test.*', 'a/*/b/*-*.md', 'file\\(1\\).txt', '[abc]*.txt']) {
      expect(globError(ok), ok).toBeUndefined();
    }
  });

  it('an accepted glob with a pathological name matches; escaped parentheses match literally', () => {
    const m = compileGlob(['*a*x', '**/*.{ts,tsx}', 'file\\(1\\).txt'], { dot: true });
    expect(m('a'.repeat(255))).toBe(false);
    expect(m('file(1).txt')).toBe(true);
    expect(m('src/x.tsx')).toBe(true);
    expect(() => globMatcher([EVIL])).toThrow(GlobError);
  });

  it('--case with an extglob is a plan (usage) error, not a hang', () => {
    const suite = { cases: [{ id: NAME, tags: [] }] } as unknown as Suite;
    expect(() => selectCases(suite, { cases: [EVIL] })).toThrow(PlanError);
    expect(selectCases(suite, { cases: ['a*'] })).toHaveLength(1);
  });
});
