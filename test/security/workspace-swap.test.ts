/**
 * An agent that puts a link to a folder outside in place of its own workspace or home: the
 * background removal of finished workspaces (src/runtime/removal.ts) unlinks the link and never
 * empties the folder it points to (found by review of the removal queue).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, writeSkill } from '../cli/helpers.js';

describe('a workspace or home swapped for a link to a folder outside', () => {
  it.each([
    ['workspace', '"$PWD"'],
    ['home', '"$HOME"'],
  ])('the %s link is removed, the folder it points to keeps every file', async (_what, target) => {
    const outside = mkdtempSync(join(tmpdir(), 'su-outside-'));
    mkdirSync(join(outside, 'sub'));
    writeFileSync(join(outside, 'precious.txt'), 'mine');
    writeFileSync(join(outside, 'sub', 'f2'), 'also mine');
    const skill = writeSkill({
      'evals/eval.yaml': 'schema_version: v1alpha1\nengine:\n  name: a\n  custom:\n    transport: local\n    response_format: text\n    local: { command: ./evals/agent.sh, args: [] }\ncases:\n  files: [evals/cases/*.yaml]\n',
      'evals/cases/a.yaml': 'input: { prompt: swap }\nexpect: { exit_code: 0 }\n',
      // Runs in the workspace; moves the folder away and leaves a link to `outside` in its place.
      'evals/agent.sh': `#!/bin/sh\nt=${target}\nmv "$t" "$t.moved"\nln -s '${outside}' "$t"\necho done\n`,
    });
    const r = await runCli(['run', skill, '--output-dir', join(skill, '..', 'out')]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(outside, 'precious.txt'), 'utf8')).toBe('mine');
    expect(readFileSync(join(outside, 'sub', 'f2'), 'utf8')).toBe('also mine');
    expect(existsSync(outside)).toBe(true);
  }, 60_000);
});
