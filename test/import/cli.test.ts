import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/helpers.js';
import { writeSkillWithEvals } from './helpers.js';

describe('skill-up import', () => {
  it('converts a skill folder, lists what it wrote and proves the suite loads', async () => {
    const dir = writeSkillWithEvals();
    const r = await runCli(['import', dir], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`wrote ${join(dir, 'evals/eval.yaml')}\n`);
    expect(r.stdout).toContain(`wrote ${join(dir, 'evals/cases/eval-3.yaml')}\n`);
    expect(r.stdout).toContain('note: eval-3: no expectations in evals.json; only the exit code is checked');
    expect(r.stdout).toContain("✓ 3 case(s) converted and valid; 2 use an agent_judge, graded by a grader agent on claude_code with its default model (the job's own engine and model; `skill-up run --model` / `--model-script` change both)");
    const v = await runCli(['validate', dir]);
    expect(v.code).toBe(0);
  });

  it('refuses to overwrite without --force (exit 2), and overwrites with it', async () => {
    const dir = writeSkillWithEvals();
    expect((await runCli(['import', join(dir, 'evals/evals.json')])).code).toBe(0);
    const again = await runCli(['import', join(dir, 'evals/evals.json')], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toBe('skill-up import: would overwrite evals/eval.yaml, evals/cases/eval-1.yaml, evals/cases/eval-2.yaml, evals/cases/eval-3.yaml; pass --force to replace, or --output another folder (see skill-up import --help)\n');
    expect((await runCli(['import', join(dir, 'evals/evals.json'), '--force'])).code).toBe(0);
  });

  it('writes into --output', async () => {
    const dir = writeSkillWithEvals();
    const out = join(dir, '..', 'converted', 'evals');
    const r = await runCli(['import', join(dir, 'evals/evals.json'), '--output', out]);
    expect(r.code).toBe(0);
    expect(readFileSync(join(out, 'eval.yaml'), 'utf8')).toContain('path: ../csv-summary');
    expect(existsSync(join(dir, 'evals/eval.yaml'))).toBe(false);
  });

  it('bad input: one clear message, exit code 2, no stack trace', async () => {
    const dir = writeSkillWithEvals('{"skill_name": "x", "evals": [{"prompt": "p", "files": ["evals/files/nope.bin"]}]}');
    const missing = await runCli(['import', dir], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^evals\/evals\.json:1:\d+: evals\[0\]\.files\[0\]: input file `evals\/files\/nope\.bin` not found/);
    const notJson = await runCli(['import', join(dir, 'SKILL.md')], { cwd: dir });
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/^SKILL\.md:1:2: not valid JSON: .*; expected an Anthropic evals\.json/);
    const none = await runCli(['import']);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe('skill-up import: import needs an evals.json (e.g. my-skill/evals/evals.json) (see skill-up import --help)\n');
    for (const r of [missing, notJson, none]) expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('has --help with examples', async () => {
    const r = await runCli(['import', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: skill-up import <evals\.json>/);
    expect(r.stdout).toContain('Examples:\n  skill-up import my-skill/evals/evals.json');
  });
});
