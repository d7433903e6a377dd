/**
 * The import path proven end to end, offline: examples/internal-comms (a real public skill with
 * an Anthropic skill-creator evals/evals.json) run by the CLI on the real Claude Code binary
 * against the scripted model (`--model-script`), whose `judge: true` rules make the agent_judge's
 * grader read 3p-update.md from its copy of the workspace and answer with evidence quoted from it.
 * With the skill the case passes, without it fails, criterion by criterion, both through
 * `run --auto` (converted in memory) and through the eval.yaml `skill-up import` writes.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../cli/helpers.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/internal-comms', import.meta.url));
const EXPECTATIONS = (JSON.parse(readFileSync(join(EXAMPLE, 'evals/evals.json'), 'utf8')) as { evals: { expectations: string[] }[] }).evals[0]!.expectations;

interface Job {
  id: string;
  variant: string;
  status: string;
  reason?: string;
  workspace?: string;
}
interface Graded {
  text: string;
  passed: boolean;
  evidence: string;
}

/** A copy of the example in a fresh folder (import writes into it; the repository stays as it is). */
function copyExample(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'su-agent-judge-example-')), 'internal-comms');
  cpSync(EXAMPLE, dir, { recursive: true });
  return dir;
}

/** `skill-up run <args> --model-script <skill>/evals/model.yaml --trials 1 --keep-workspaces` into a fresh output folder. */
async function run(skill: string, args: string[]): Promise<{ r: CliRun; iteration: string; jobs: Job[] }> {
  const out = mkdtempSync(join(tmpdir(), 'su-agent-judge-out-'));
  const r = await runCli(['run', ...args, skill, '--model-script', join(skill, 'evals/model.yaml'), '--trials', '1', '--keep-workspaces', '--output-dir', out]);
  const iteration = join(out, 'iteration-1');
  const result = join(iteration, 'result.json');
  if (!existsSync(result)) throw new Error(`no result.json (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  return { r, iteration, jobs: (JSON.parse(readFileSync(result, 'utf8')) as { jobs: Job[] }).jobs };
}

/** The criteria entries of a job's grading.json: the agent_judge's, `c<n>: <evals.json text>` in order. */
function criteria(iteration: string, jobId: string): Graded[] {
  const grading = JSON.parse(readFileSync(join(iteration, jobId, 'grading.json'), 'utf8')) as { expectations: Graded[] };
  return EXPECTATIONS.map((statement, i) => {
    const text = `c${i + 1}: ${statement}`;
    const found = grading.expectations.find((e) => e.text === text);
    if (!found) throw new Error(`grading.json of ${jobId} has no expectation "${text}"; it has: ${grading.expectations.map((e) => e.text).join(' | ')}`);
    return found;
  });
}

/** The phrases an evidence quotes ('…'). */
function quotes(evidence: string): string[] {
  return [...evidence.matchAll(/'([^']+)'/g)].map((m) => m[1]!);
}

/** Asserts the with_skill / without_skill outcome of one run, criterion by criterion. */
function expectSkillDecides(iteration: string, jobs: Job[]): void {
  const withSkill = jobs.find((j) => j.variant === 'with_skill')!;
  const without = jobs.find((j) => j.variant === 'without_skill')!;
  expect(withSkill.status, withSkill.reason).toBe('pass');
  expect(without.status, without.reason).toBe('fail');

  // with_skill: every criterion holds, each on lines quoted from the file the agent wrote.
  const written = readFileSync(join(withSkill.workspace!, '3p-update.md'), 'utf8');
  expect(written.split('\n')[0]).toBe('🚀 Platform team (March 3-7, 2025)');
  const good = criteria(iteration, withSkill.id);
  expect(good.map((c) => c.passed)).toEqual([true, true, true, true]);
  for (const c of good) {
    expect(quotes(c.evidence).length, c.evidence).toBeGreaterThan(0);
    for (const q of quotes(c.evidence)) expect(written, `evidence of "${c.text}"`).toContain(q);
  }

  // without_skill: a prose update; only "two on-call engineers are out sick" holds (1 of 4 < 0.7).
  const prose = readFileSync(join(without.workspace!, '3p-update.md'), 'utf8');
  expect(prose.startsWith('# Weekly update')).toBe(true);
  const bad = criteria(iteration, without.id);
  expect(bad.map((c) => c.passed)).toEqual([false, false, false, true]);
  for (const c of bad) {
    expect(c.evidence).not.toBe('');
    for (const q of quotes(c.evidence)) expect(prose, `evidence of "${c.text}"`).toContain(q);
  }
  expect(quotes(bad[3]!.evidence)).toEqual(['Two on-call engineers are out sick.']);
}

describe('run --model-script', () => {
  it('exits 2 for a missing or empty rule file, naming it, before any job runs', async () => {
    const skill = copyExample();
    const missing = await runCli(['run', '--auto', skill, '--model-script', join(skill, 'evals/nope.yaml'), '--dry-run']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${join(skill, 'evals/nope.yaml')}: cannot read model script: file not found`);
    const empty = await runCli(['run', '--auto', skill, '--model-script', ' ', '--dry-run']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("--model-script needs the scripted model's rule file");
  });
});

describe('examples/internal-comms: an evals.json graded by a scripted agent_judge', () => {
  it('run --auto: with_skill passes and without_skill fails, on evidence read from the files', async () => {
    const skill = copyExample();
    const { r, iteration, jobs } = await run(skill, ['--auto']);
    expect(r.stderr).toContain('--auto: no eval.yaml; running');
    expect(r.stderr).toContain("1 with agent_judge criteria, graded by a grader agent on each job's engine and model");
    expect(jobs.map((j) => `${j.id} ${j.status}`).sort()).toEqual(['eval-1/with_skill/run-1 pass', 'eval-1/without_skill/run-1 fail']);
    expectSkillDecides(iteration, jobs);
    // The grader's own exchanges are filed in its job's folder, apart from the agent's.
    const agentLog = readFileSync(join(iteration, 'eval-1/with_skill/run-1/model-requests.jsonl'), 'utf8');
    expect(agentLog).not.toContain('"judge":true');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // Nothing was written into the skill.
    expect(existsSync(join(skill, 'evals/eval.yaml'))).toBe(false);
  }, 300_000);

  it('a deliberately wrong workspace fails the criterion it breaks, and only that one', async () => {
    const skill = copyExample();
    // The agent, with the skill, now drops the figure from the Progress line.
    const script = join(skill, 'evals/model.yaml');
    const text = readFileSync(script, 'utf8');
    const wrong = text.replace('Progress: Shipped the new billing API; p95 latency is down 30%.\n', 'Progress: Shipped the new billing API.\n');
    expect(wrong).not.toBe(text);
    writeFileSync(script, wrong);
    const { iteration, jobs } = await run(skill, ['--auto', '--no-baseline']);
    const withSkill = jobs.find((j) => j.variant === 'with_skill')!;
    const written = readFileSync(join(withSkill.workspace!, '3p-update.md'), 'utf8');
    expect(written).toContain('Progress: Shipped the new billing API.\n');
    const graded = criteria(iteration, withSkill.id);
    expect(graded.map((c) => c.passed)).toEqual([true, true, false, true]);
    expect(graded[2]!.evidence).toContain("'Progress: Shipped the new billing API.'");
    for (const c of graded) for (const q of quotes(c.evidence)) expect(written, `evidence of "${c.text}"`).toContain(q);
    // 3 of 4 criteria hold: at least pass_threshold (0.7), so the case still passes.
    expect(withSkill.status, withSkill.reason).toBe('pass');
  }, 300_000);

  it('skill-up import writes an eval.yaml that runs the same way', async () => {
    const skill = copyExample();
    const imported = await runCli(['import', skill]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('✓ 1 case(s) converted and valid; 1 use an agent_judge, graded by a grader agent on claude_code');
    const evalYaml = readFileSync(join(skill, 'evals/eval.yaml'), 'utf8');
    expect(evalYaml).toContain('a grader agent checks them on a copy of the finished workspace');
    const { r, iteration, jobs } = await run(skill, []);
    expect(r.stderr).not.toContain('--auto');
    expectSkillDecides(iteration, jobs);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  }, 300_000);
});
