import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/diagnostics.js';
import { planJobs } from '../../src/plan/plan.js';
import { loadEvalsJsonSuite, resolveAutoTarget } from '../../src/import/auto.js';
import { runCli } from '../cli/helpers.js';
import { writeSkillWithEvals } from './helpers.js';

describe('resolveAutoTarget', () => {
  it('prefers eval.yaml, else evals/evals.json, from a folder, SKILL.md, a .json file or by walking up', () => {
    const dir = writeSkillWithEvals();
    const json = join(dir, 'evals/evals.json');
    expect(resolveAutoTarget(dir, '/')).toEqual({ kind: 'evals_json', file: json });
    expect(resolveAutoTarget(join(dir, 'SKILL.md'), '/')).toEqual({ kind: 'evals_json', file: json });
    expect(resolveAutoTarget('evals/evals.json', dir)).toEqual({ kind: 'evals_json', file: json });
    mkdirSync(join(dir, 'deep/er'), { recursive: true });
    expect(resolveAutoTarget(undefined, join(dir, 'deep/er'))).toEqual({ kind: 'evals_json', file: json });
    writeFileSync(join(dir, 'evals/eval.yaml'), 'schema_version: v1alpha1\n');
    expect(resolveAutoTarget(dir, '/')).toEqual({ kind: 'yaml', target: dir });
    expect(resolveAutoTarget(undefined, join(dir, 'deep/er'))).toEqual({ kind: 'yaml', target: dir });
    expect(resolveAutoTarget('/no/such/place', '/')).toEqual({ kind: 'yaml', target: '/no/such/place' });
  });
});

describe('loadEvalsJsonSuite', () => {
  it('gives a suite the planner accepts, without writing anything into the skill', async () => {
    const dir = writeSkillWithEvals();
    const before = readdirSync(join(dir, 'evals')).sort();
    const { suite, warnings } = await loadEvalsJsonSuite(join(dir, 'evals/evals.json'));
    expect(readdirSync(join(dir, 'evals')).sort()).toEqual(before);
    expect(warnings).toEqual([]);
    expect(suite.evalFile).toBe(join(dir, 'evals/evals.json'));
    expect(suite.skillDir).toBe(dir);
    expect(suite.skills.map((s) => s.path)).toEqual([dir]);
    expect(suite.cases.map((c) => c.id)).toEqual(['eval-1', 'eval-2', 'eval-3']);
    expect(suite.cases[0]!.context.files).toEqual({ 'evals/files/data.csv': 'a,b\n1,2\n' });
    expect(suite.cases[0]!.timeoutSeconds).toBe(300);
    const jobs = planJobs(suite);
    expect(jobs).toHaveLength(3 * 3 * 2);
    expect(jobs[0]!.id).toBe('eval-1/with_skill/run-1');
  });

  it('reports problems of evals.json and of SKILL.md as config errors', async () => {
    const bad = writeSkillWithEvals({ evals: [{ id: 1 }] });
    await expect(loadEvalsJsonSuite(join(bad, 'evals/evals.json'))).rejects.toThrow(ConfigError);
    const noSkill = writeSkillWithEvals(undefined, { 'SKILL.md': 'no frontmatter here\n' });
    await expect(loadEvalsJsonSuite(join(noSkill, 'evals/evals.json'))).rejects.toThrow(ConfigError);
  });
});

describe('skill-up run --auto', () => {
  it('plans the converted evals.json (dry run) and says what it runs', async () => {
    const dir = writeSkillWithEvals();
    const r = await runCli(['run', '--auto', dir, '--dry-run']);
    expect(r.stderr).toContain(`--auto: no eval.yaml; running ${join(dir, 'evals/evals.json')} (Anthropic evals.json, converted in memory: 3 case(s), 2 with agent_judge criteria, graded by a grader agent on each job's engine and model`);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Would run 18 job(s)');
    expect(r.stdout).toMatch(/eval-1\s+with_skill \+ without_skill × 3 trial\(s\) on claude_code/);
    expect(existsSync(join(dir, 'evals/eval.yaml'))).toBe(false);
  });

  it('without --auto, a skill with only evals.json is still an error that points at import', async () => {
    const dir = writeSkillWithEvals();
    const r = await runCli(['run', dir, '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('skill-up import evals/evals.json');
  });

  it('a broken evals.json under --auto is one message per problem and exit code 2', async () => {
    const dir = writeSkillWithEvals('{"evals": [{"id": 1, "prompt": 3}]}');
    const r = await runCli(['run', '--auto', dir, '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/evals\/evals\.json:1:\d+: evals\[0\]\.prompt: `prompt` must be a non-empty string/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
