/**
 * agent_judge end to end through the built CLI: the real Claude Code binary (pinned, installed
 * by test/setup/engines.ts) drives both the agent and its grader against the scripted model
 * (test/fixtures/agent-judge/house-theme: grader rules use `judge: true`, read theme.json from
 * the grader's workspace copy and decide with `tool_result_contains`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SUITE = join(ROOT, 'test/fixtures/agent-judge/house-theme');
const schema = JSON.parse(readFileSync(join(ROOT, 'schemas/result.schema.json'), 'utf8'));
const validate = new (Ajv2020 as unknown as typeof Ajv2020.default)({ allErrors: true, validateFormats: false }).compile(schema);

interface Job {
  id: string;
  status: string;
  reason?: string;
  tokens: { total: number };
  turns: { tokens: { total: number } }[];
  judge?: { tokens: { total: number }; duration_ms: number; runs: number; cost_usd?: number };
  assertions: { text: string; passed: boolean; evidence: string }[];
}

const exchanges = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { kind: string; conversation?: { judge?: true; skillsListed?: string[] }; trace?: { ruleName?: string } })
    .filter((e) => e.kind === 'generate');

describe('agent_judge (real Claude Code, scripted model for agent and grader)', () => {
  let out: string;
  let run: CliRun;
  let doc: { jobs: Job[]; totals: { tokens: { total: number }; judge?: { runs: number; tokens: { total: number } } } };
  const job = (id: string) => doc.jobs.find((j) => j.id === id)!;
  const dir = (id: string) => join(out, 'iteration-1', id);

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'su-agent-judge-'));
    run = await runCli(['run', SUITE, '--output-dir', out]);
    doc = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
  }, 400_000);

  it('runs, and result.json validates', () => {
    expect(run.stderr).not.toContain('internal error');
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(doc.jobs).toHaveLength(6);
  });

  it('with_skill passes with per-criterion evidence the grader read from the workspace; without_skill fails', () => {
    const withSkill = job('theme/with_skill/run-1');
    expect(withSkill.status).toBe('pass');
    expect(withSkill.assertions).toEqual([
      { text: 'c1: theme.json uses the brand orange #d97757 as its accent', passed: true, evidence: 'theme.json sets the accent to #d97757' },
      { text: 'heading_font: theme.json sets Poppins as the heading font', passed: true, evidence: 'theme.json sets the heading font to Poppins' },
    ]);
    const without = job('theme/without_skill/run-1');
    expect(without.status).toBe('fail');
    expect(without.assertions.map((a) => a.passed)).toEqual([false, false]);
    expect(without.reason).toContain('0 of 2 criteria passed (0%), below pass_threshold 0.7');
    // grading.json carries each criterion as an expectation (Anthropic's viewer shows it).
    const grading = JSON.parse(readFileSync(join(dir('theme/with_skill/run-1'), 'grading.json'), 'utf8'));
    expect(grading.expectations.map((e: { text: string }) => e.text)).toEqual(withSkill.assertions.map((a) => a.text));
    // The grader read theme.json (its first step), then decided on what the tool returned.
    const graded = exchanges(join(dir('theme/with_skill/run-1'), 'judge-1/model-requests.jsonl'));
    expect(graded.map((e) => e.trace?.ruleName)).toEqual(['grader-read', 'grader-all-good']);
    expect(graded.every((e) => e.conversation?.judge === true)).toBe(true);
    // The skill under test was removed from the grader's copy: Claude Code listed it to the agent only.
    expect(graded.every((e) => !(e.conversation?.skillsListed ?? []).includes('house-theme'))).toBe(true);
    const agent = exchanges(join(dir('theme/with_skill/run-1'), 'model-requests.jsonl'));
    expect(agent.some((e) => (e.conversation?.skillsListed ?? []).includes('house-theme'))).toBe(true);
    expect(agent.some((e) => e.conversation?.judge)).toBe(false);
    // Its files were given as a material instead, with the diff against the baseline.
    const prompt = readFileSync(join(dir('theme/with_skill/run-1'), 'judge-1/prompt.txt'), 'utf8');
    expect(prompt).toContain('`.skill-up/judge/skill/house-theme/`');
    expect(prompt).toContain('`.skill-up/judge/workspace.diff`');
    expect(readFileSync(join(dir('theme/without_skill/run-1'), 'judge-1/prompt.txt'), 'utf8')).not.toContain('skill/house-theme');
  });

  it('a deliberately wrong workspace fails exactly the criterion it breaks', () => {
    const broken = job('broken-theme/with_skill/run-1');
    expect(broken.status).toBe('fail');
    expect(broken.assertions.map((a) => [a.text.split(':')[0], a.passed])).toEqual([
      ['c1', false],
      ['heading_font', true],
    ]);
    expect(broken.assertions[0]!.evidence).toBe('theme.json has no #d97757 accent');
  });

  it('a grader answering malformed twice is an error, with both raw replies kept; the other judge still ran', () => {
    const bad = job('malformed/with_skill/run-1');
    expect(bad.status).toBe('error');
    expect(bad.reason).toMatch(/grader run 1 answered unusably twice \(the answer holds no JSON object with a `results` list/);
    expect(bad.reason).toContain('judge-1/reply-1.txt and judge-1/reply-2.txt');
    for (const n of [1, 2]) expect(readFileSync(join(dir('malformed/with_skill/run-1'), `judge-1/reply-${n}.txt`), 'utf8')).toBe('Everything looks great to me!');
    // The correction resumed the grader's session and said what was wrong.
    const grader = exchanges(join(dir('malformed/with_skill/run-1'), 'judge-1/model-requests.jsonl'));
    expect(grader.map((e) => e.trace?.ruleName)).toEqual(['grader-malformed', 'grader-malformed']);
    expect(bad.assertions).toEqual([{ text: '[rules] files_exist: ["notes.md"]', passed: true, evidence: 'notes.md: exists (7 bytes)' }]);
  });

  it("reports the judges' tokens and time apart from the agent's, in result.json and the console", () => {
    for (const j of doc.jobs) {
      expect(j.judge, j.id).toBeDefined();
      expect(j.judge!.runs).toBe(1);
      expect(j.judge!.tokens.total).toBeGreaterThan(0);
      expect(j.judge!.cost_usd).toBeUndefined();
      // The agent's tokens are its turns' alone.
      expect(j.tokens.total).toBe(j.turns.reduce((s, t) => s + t.tokens.total, 0));
    }
    expect(doc.totals.judge!.runs).toBe(6);
    expect(doc.totals.judge!.tokens.total).toBe(doc.jobs.reduce((s, j) => s + j.judge!.tokens.total, 0));
    expect(doc.totals.tokens.total).toBe(doc.jobs.reduce((s, j) => s + j.tokens.total, 0));
    expect(run.stdout).toMatch(/judges: claude_code with_skill: 3 grader run\(s\) over 3 job\(s\), \d+ tokens, [\d.]+ s, no cost/);
    expect(readFileSync(join(out, 'iteration-1/summary.md'), 'utf8')).toMatch(/judges: 6 grader run\(s\), .* tokens, .*\(not in the tokens or cost\)/);
    expect(readFileSync(join(out, 'iteration-1/report.html'), 'utf8')).toContain('<dt>Judges</dt>');
    const bench = JSON.parse(readFileSync(join(out, 'iteration-1/benchmark.json'), 'utf8'));
    expect(bench.runs.every((r: { judge?: { runs: number } }) => r.judge?.runs === 1)).toBe(true);
    expect(existsSync(join(dir('theme/with_skill/run-1'), 'judge-1/transcript.json'))).toBe(true);
  });
});
