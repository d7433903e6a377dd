/**
 * The behaviour checks end to end: the real Claude Code binary against the scripted model
 * (test/fixtures/behaviour/report-writer), through `skill-up run` to every file it writes.
 * An agent that claims a file it never wrote fails `claims_verified`, with evidence; one that
 * writes it and says so passes; the same `run` three times fails `no_tool_loop`; a failed
 * command the answer does not mention fails `no_silent_failure`; the skill context tokens are
 * > 0 with the skill and 0 without. The behaviour gates and their flags are decided and
 * validated; a bad behaviour rule is a config error at its line (exit 2).
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun } from './helpers.js';
import { behaviourFromSaved } from '../../src/judge/behaviour/index.js';
import { behaviourJson } from '../../src/report/behaviour.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'behaviour', 'report-writer');

interface Job {
  id: string;
  case_id: string;
  variant: string;
  status: string;
  output_dir: string;
  assertions: { text: string; passed: boolean; evidence: string }[];
  behaviour: {
    claims: { kind: string; path?: string; verified: boolean; evidence: string }[];
    tool_loop: { longest_run: number; tool?: string; detected: boolean };
    silent_failure: { detected: boolean; unmentioned: { tool: string; error: string }[] };
    skill_context: { observed: boolean; listing_tokens?: number; body_tokens?: number };
  };
}

describe('behaviour checks on real Claude Code (scripted model)', () => {
  let run: CliRun;
  let iteration: string;
  let jobs: Job[];
  const job = (caseId: string, variant = 'with_skill') => jobs.find((j) => j.case_id === caseId && j.variant === variant)!;

  beforeAll(async () => {
    const out = mkdtempSync(join(tmpdir(), 'skill-up-behaviour-'));
    run = await runCli(['run', FIXTURE, '--baseline', '--output-dir', out, '--max-tool-loop-rate', '0.5', '--max-silent-failure-rate', '0.9']);
    iteration = join(out, 'iteration-1');
    jobs = (JSON.parse(readFileSync(join(iteration, 'result.json'), 'utf8')) as { jobs: Job[] }).jobs;
  }, 240_000);

  it('an agent that claims a file it never wrote fails claims_verified, with evidence; one that wrote it passes', () => {
    expect(run.code, run.stderr).toBe(1);
    for (const variant of ['with_skill', 'without_skill']) {
      const lying = job('claims-unwritten', variant);
      expect(lying.status).toBe('fail');
      expect(lying.assertions).toEqual([
        {
          text: 'claims_verified',
          passed: false,
          evidence: '0 of 1 claim(s) verified; NOT verified: file_created report.md (turn 1, "Created report.md with the summary."): report.md is not among the files the agent added or modified (added: none; modified: none)',
        },
      ]);
      expect(lying.behaviour.claims).toMatchObject([{ kind: 'file_created', path: 'report.md', verified: false }]);
      const honest = job('claims-written', variant);
      expect(honest.status).toBe('pass');
      expect(honest.assertions[0]!.evidence).toContain('report.md was added by the agent');
    }
    // grading.json carries the claims in skill-creator's shape.
    const grading = JSON.parse(readFileSync(join(iteration, job('claims-unwritten').output_dir, 'grading.json'), 'utf8'));
    expect(grading.claims).toEqual([
      { claim: 'file created: report.md (Created report.md with the summary.)', type: 'factual', verified: false, evidence: 'report.md is not among the files the agent added or modified (added: none; modified: none)' },
    ]);
  });

  it('the same run three times is a tool loop; an unmentioned failed command is a silent failure', () => {
    const loop = job('tool-loop');
    expect(loop.status).toBe('fail');
    expect(loop.behaviour.tool_loop).toMatchObject({ longest_run: 3, tool: 'Bash', detected: true });
    expect(loop.assertions[0]!.evidence).toMatch(/^Bash called 3 time\(s\) in a row with the same input in turn 1: \{"command":"ls"/);
    const silent = job('silent-failure');
    expect(silent.status).toBe('fail');
    expect(silent.behaviour.silent_failure.detected).toBe(true);
    expect(silent.behaviour.silent_failure.unmentioned[0]).toMatchObject({ tool: 'Bash' });
    expect(silent.behaviour.silent_failure.unmentioned[0]!.error).toContain('notes-that-do-not-exist.txt');
    // The other jobs neither loop nor fail silently.
    expect(job('claims-written').behaviour.tool_loop.detected).toBe(false);
    expect(job('claims-written').behaviour.silent_failure.detected).toBe(false);
  });

  it('skill context tokens are > 0 with the skill, from the requests Claude Code sent, and 0 without', () => {
    for (const j of jobs) {
      expect(j.behaviour.skill_context.observed, j.id).toBe(true);
      if (j.variant === 'with_skill') {
        expect(j.behaviour.skill_context.listing_tokens, j.id).toBeGreaterThan(10);
        expect(j.behaviour.skill_context.body_tokens, j.id).toBeGreaterThan(40);
      } else {
        expect(j.behaviour.skill_context, j.id).toMatchObject({ listing_tokens: 0, body_tokens: 0 });
      }
    }
    const doc = JSON.parse(readFileSync(join(iteration, 'result.json'), 'utf8'));
    const arms = doc.behaviour.by_arm as { variant: string; jobs: number; tool_loops: number; silent_failures: number; claims: number; claims_verified: number; listing_tokens_mean: number }[];
    expect(arms.map((a) => [a.variant, a.jobs, a.claims_verified, a.claims, a.tool_loops, a.silent_failures])).toEqual([
      ['with_skill', 4, 1, 2, 1, 1],
      ['without_skill', 4, 1, 2, 1, 1],
    ]);
    expect(arms[0]!.listing_tokens_mean).toBeGreaterThan(10);
    expect(arms[1]!.listing_tokens_mean).toBe(0);
  });

  it('the saved job folders are enough to compute the same behaviour again (what regrading needs)', async () => {
    for (const j of jobs) {
      const saved = await behaviourFromSaved(join(iteration, j.output_dir), {
        skillsInstalled: j.variant === 'with_skill' ? ['report-writer'] : [],
        turnStatus: ['completed'],
        scripted: true,
        changesKnown: true,
      });
      expect(behaviourJson(saved), j.id).toEqual(j.behaviour);
    }
  });

  it('prints the behaviour line and the behaviour gates, and writes the behaviour columns into summary.md and report.html', () => {
    expect(run.stdout).toMatch(/claude_code with_skill behaviour: 1\/2 claim\(s\) verified, 1 of 4 job\(s\) with a tool loop, 1 with a silent failure, skill context ≈ [\d.]+ \+ [\d.]+ tokens \(listing \+ body, estimate\)/);
    expect(run.stdout).toContain('INCONCLUSIVE max_tool_loop_rate (claude_code): 1 of 4 graded with_skill job(s) had a tool loop: 25% [5%, 70%]');
    expect(run.stdout).toContain('max_silent_failure_rate (claude_code)');
    const md = readFileSync(join(iteration, 'summary.md'), 'utf8');
    expect(md).toContain('### Behaviour checks');
    expect(md).toMatch(/\| `tool-loop` \| claude_code \| with_skill \| 1 \| — \| 1 \| 0 \| \d+ \| \d+ \|/);
    const html = readFileSync(join(iteration, 'report.html'), 'utf8');
    expect(html).toContain('id="h-behaviour"');
    expect(html).toContain('Skill listing tokens');
  });
});

describe('behaviour rules and gates: bad settings are one clear message, exit 2', () => {
  it('a bad rule argument names its file, line and field', async () => {
    const root = mkdtempSync(join(tmpdir(), 'skill-up-behaviour-bad-'));
    const dir = join(root, 'report-writer');
    cpSync(FIXTURE, dir, { recursive: true });
    writeFileSync(join(dir, 'evals/cases/tool-loop.yaml'), 'input:\n  prompt: Please look around the project.\njudge:\n  type: rule_based\n  success:\n    - no_tool_loop: { max_repeats: 1 }\n    - claims_verified: { kinds: [files] }\n');
    const r = await runCli(['validate', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('tool-loop.yaml:6:');
    expect(r.stderr).toContain('judge.success[0].no_tool_loop.max_repeats: expected a whole number from 2 to 10000');
    expect(r.stderr).toContain('tool-loop.yaml:7:');
    expect(r.stderr).toContain('judge.success[1].claims_verified.kinds[0]');
  });

  it('a bad gate value in eval.yaml or on the command line is refused', async () => {
    const root = mkdtempSync(join(tmpdir(), 'skill-up-behaviour-gate-'));
    const dir = join(root, 'report-writer');
    cpSync(FIXTURE, dir, { recursive: true });
    const evalFile = join(dir, 'evals/eval.yaml');
    writeFileSync(evalFile, `${readFileSync(evalFile, 'utf8')}gates:\n  max_tool_loop_rate: 2\n`);
    const r = await runCli(['validate', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/eval\.yaml:\d+:\d+: gates\.max_tool_loop_rate: expected a number from 0 to 1/);
    const flag = await runCli(['run', FIXTURE, '--dry-run', '--min-claims-verified-rate', 'lots']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--min-claims-verified-rate');
  });
});
