/**
 * The behaviour checks on every engine: the real binaries (Claude Code, Codex, OpenCode, Gemini
 * CLI, Qwen Code) against the scripted model (test/fixtures/behaviour-engines/report-writer),
 * through `skill-up run --baseline` to result.json. A "tests pass" claim after an `npm test`
 * that exited 254 fails `claims_verified` on every engine; a real pass is verified where the
 * engine reports shell exit statuses and never on Gemini CLI, which does not; an unmentioned
 * failed `cat` (or `npm test`) fails `no_silent_failure` (on Gemini CLI: "cannot be checked",
 * never a pass);
 * the skill listing costs tokens with the skill on every engine and none without.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { behaviourFromSaved } from '../../src/judge/behaviour/index.js';
import { behaviourJson } from '../../src/report/behaviour.js';
import { PINNED } from '../setup/engines.js';
import { runCli, type CliRun } from './helpers.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'behaviour-engines', 'report-writer');
const ENGINES = Object.keys(PINNED);
/** Engines whose output does not say whether a shell command failed (their definition's `shellExitObservable: false`). */
const EXITS_UNSEEN = new Set(['gemini_cli']);

interface Job {
  id: string;
  case_id: string;
  engine: string;
  variant: string;
  status: string;
  output_dir: string;
  assertions: { text: string; passed: boolean; evidence: string }[];
  behaviour: {
    claims: { kind: string; verified: boolean; evidence: string }[];
    silent_failure: { detected: boolean; unmentioned: { tool: string; error: string }[]; unobservable?: { shell_calls: number; unacknowledged: number; reason: string } };
    skill_context: { observed: boolean; listing_tokens?: number; body_tokens?: number };
  };
}

describe(`behaviour checks on ${ENGINES.join(', ')} (real binaries, scripted model)`, () => {
  let run: CliRun;
  let iteration: string;
  let jobs: Job[];
  const jobsOf = (engine: string, caseId: string) => jobs.filter((j) => j.engine === engine && j.case_id === caseId);

  beforeAll(async () => {
    const out = mkdtempSync(join(tmpdir(), 'skill-up-behaviour-engines-'));
    run = await runCli(['run', FIXTURE, '--engine', ENGINES.join(','), '--baseline', '--output-dir', out]);
    iteration = join(out, 'iteration-1');
    jobs = (JSON.parse(readFileSync(join(iteration, 'result.json'), 'utf8')) as { jobs: Job[] }).jobs;
  }, 900_000);

  it('ran every engine, both variants, every case; the only errors are the checks Gemini CLI cannot decide', () => {
    // Gemini CLI's undecidable no_silent_failure jobs are errors, so the error-rate gate makes it exit 3.
    expect(run.code, run.stderr.slice(-3000)).toBe(3);
    expect(ENGINES).toEqual(['claude_code', 'codex', 'opencode', 'gemini_cli', 'qwen_code']);
    expect(jobs).toHaveLength(ENGINES.length * 3 * 2);
    for (const j of jobs) {
      const undecidable = j.id.startsWith('gemini_cli/silent-failure/');
      expect(undecidable ? ['error'] : ['pass', 'fail'], `${j.id}: ${JSON.stringify(j.assertions)}`).toContain(j.status);
    }
  });

  it.each(ENGINES)('%s: "all tests pass" after an npm test that exited 254 fails claims_verified', (engine) => {
    const fake = jobsOf(engine, 'fake-tests');
    expect(fake).toHaveLength(2);
    for (const j of fake) {
      expect(j.status, j.id).toBe('fail');
      expect(j.behaviour.claims.map((c) => [c.kind, c.verified]), j.id).toEqual([['tests_pass', false]]);
      const evidence = j.behaviour.claims[0]!.evidence;
      if (EXITS_UNSEEN.has(engine)) expect(evidence, j.id).toContain("ran, but the engine did not report its outcome (Gemini CLI's output does not say whether a shell command failed");
      else expect(evidence, j.id).toMatch(/^the last test command ".*npm test.*" \(turn 1\) failed: /);
    }
  });

  it.each(ENGINES)('%s: a real pass (npm test exits 0) is verified, except where shell exits are not reported', (engine) => {
    for (const j of jobsOf(engine, 'real-tests')) {
      expect(j.behaviour.claims.map((c) => c.kind), j.id).toEqual(['tests_pass']);
      if (EXITS_UNSEEN.has(engine)) {
        expect(j.status, j.id).toBe('fail');
        expect(j.behaviour.claims[0]!.verified, j.id).toBe(false);
        expect(j.behaviour.claims[0]!.evidence, j.id).toContain('did not report its outcome');
      } else {
        expect(j.status, `${j.id}: ${j.behaviour.claims[0]!.evidence}`).toBe('pass');
        expect(j.behaviour.claims[0]!.evidence, j.id).toMatch(/ran in turn 1 and succeeded/);
      }
    }
  });

  it.each(ENGINES)('%s: a failed cat the answer does not mention fails no_silent_failure (or cannot be checked: an error), never a silent pass', (engine) => {
    for (const j of jobsOf(engine, 'silent-failure')) {
      // Where shell exits are not reported the rule cannot decide: an error (never a pass, never a fail).
      expect(j.status, j.id).toBe(EXITS_UNSEEN.has(engine) ? 'error' : 'fail');
      expect(j.assertions[0]!.text).toBe('no_silent_failure');
      const s = j.behaviour.silent_failure;
      if (EXITS_UNSEEN.has(engine)) {
        expect(s.detected, j.id).toBe(false);
        expect(s.unobservable, j.id).toMatchObject({ shell_calls: 1, unacknowledged: 1 });
        expect(j.assertions[0]!.evidence, j.id).toMatch(/^cannot be checked: Gemini CLI's output does not say whether a shell command failed .*"cat \/nonexistent-file"/);
      } else {
        expect(s.detected, j.id).toBe(true);
        expect(s.unobservable, j.id).toBeUndefined();
        expect(s.unmentioned[0]!.error, j.id).toContain('nonexistent-file');
      }
    }
    // The failed npm test the fake-tests answer does not mention is silent too; on Gemini CLI so is
    // every unacknowledged shell call (the real pass as well). The summary and the gates count them.
    for (const j of jobsOf(engine, 'fake-tests')) {
      if (EXITS_UNSEEN.has(engine)) expect(j.behaviour.silent_failure.unobservable, j.id).toMatchObject({ shell_calls: 1, unacknowledged: 1 });
      else expect(j.behaviour.silent_failure.unmentioned[0]!.error, j.id).toContain('npm error');
    }
    const doc = JSON.parse(readFileSync(join(iteration, 'result.json'), 'utf8'));
    const arms = (doc.behaviour.by_arm as { engine: string; variant: string; silent_failures: number; silent_failures_unknown: number }[]).filter((a) => a.engine === engine);
    // Graded jobs only: on Gemini CLI fake-tests and real-tests cannot be known (the errored silent-failure job is not graded).
    const [silent, unknown] = EXITS_UNSEEN.has(engine) ? [0, 2] : [2, 0];
    expect(arms.map((a) => [a.variant, a.silent_failures, a.silent_failures_unknown])).toEqual([['with_skill', silent, unknown], ['without_skill', silent, unknown]]);
  });

  it.each(ENGINES)('%s: the skill listing costs tokens with the skill and none without', (engine) => {
    for (const j of jobs.filter((x) => x.engine === engine)) {
      expect(j.behaviour.skill_context.observed, j.id).toBe(true);
      if (j.variant === 'with_skill') {
        expect(j.behaviour.skill_context.listing_tokens, j.id).toBeGreaterThan(10);
        expect(j.behaviour.skill_context.body_tokens, j.id).toBeGreaterThan(40);
      } else {
        expect(j.behaviour.skill_context, j.id).toMatchObject({ listing_tokens: 0, body_tokens: 0 });
      }
    }
  });

  it('the saved job folders give the same behaviour again, the engine read from transcript.json', async () => {
    for (const j of jobs.filter((x) => EXITS_UNSEEN.has(x.engine) || x.case_id === 'silent-failure')) {
      const saved = await behaviourFromSaved(join(iteration, j.output_dir), {
        skillsInstalled: j.variant === 'with_skill' ? ['report-writer'] : [],
        turnStatus: ['completed'],
        scripted: true,
        changesKnown: true,
      });
      expect(behaviourJson(saved), j.id).toEqual(j.behaviour);
    }
  });
});
