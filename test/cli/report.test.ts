import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { reportFormats } from '../../src/run/suite.js';
import { makeResult } from '../run/helpers.js';
import { runCli } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (p: string) => readFileSync(p, 'utf8');

describe('skill-up run writes summary.md and the skill-creator files; skill-up report regenerates them', () => {
  let iteration: string;
  let runOut: string;

  beforeAll(async () => {
    const out = mkdtempSync(join(tmpdir(), 'su-report-cli-'));
    const r = await runCli(['run', join(ROOT, 'examples/greeting-files'), '--trials', '2', '--output-dir', out]);
    runOut = r.stdout;
    expect(r.code).toBe(0);
    iteration = join(out, 'iteration-1');
  }, 120_000);

  it('a run with both variants writes summary.md, benchmark.json/.md and per-run grading.json in skill-creator shape', () => {
    for (const f of ['result.json', 'report.xml', 'summary.md', 'benchmark.json', 'benchmark.md']) expect(runOut).toContain(`wrote ${join(iteration, f)}\n`);
    const md = read(join(iteration, 'summary.md'));
    expect(md).toMatch(/^## ✅ skill-up: greeting-files passed\n\nEvery gate passed \(exit code 0\)\.\n/);
    expect(md).toContain('| `all_trials_passed` | — | every trial passes | 100% | — | ✅ PASS |');
    expect(md).toContain('| greeter-agent (custom) | with_skill | 100% \\[34%–100%\\] | 0 | 2/2 | 4/4 | 4 | 0 |');
    expect(md).toContain('**Uplift (greeter-agent (custom))**: +100 points \\[+7, +100\\] (95% CI, clustered by case) over 2 compared cases · verdict: **inconclusive**');
    const b = JSON.parse(read(join(iteration, 'benchmark.json')));
    expect(b.metadata.evals_run).toEqual([1, 2]);
    expect(b.runs).toHaveLength(8);
    expect(b.run_summary.delta.pass_rate).toMatch(/^\+0\.\d\d$/);
    expect(b.statistics.uplift).toMatchObject({ wins: 2, compared_evals: 2, pass_rate_delta: 1, verdict: 'inconclusive' });
    expect(b.statistics.configurations.with_skill.ci_95_clustered).toMatchObject({ method: 'case-clustered Wilson', cases: 2, trials: 4 });
    const g = JSON.parse(read(join(iteration, 'hello-file/with_skill/run-1/grading.json')));
    expect(Object.keys(g)).toEqual(['expectations', 'summary', 'execution_metrics', 'timing', 'claims', 'user_notes_summary', 'status']);
    expect(g.execution_metrics.tool_calls.write_file).toBe(1);
    expect(JSON.parse(read(join(iteration, 'hello-file/eval_metadata.json')))).toMatchObject({ eval_id: 1, eval_name: 'hello-file', prompt: 'Create hello.md with a greeting saying "Hello, World".' });
  });

  it('report regenerates the same files from result.json alone', async () => {
    const before = Object.fromEntries(['report.xml', 'summary.md', 'benchmark.json', 'benchmark.md', 'welcome-note/without_skill/run-2/grading.json'].map((f) => [f, read(join(iteration, f))]));
    for (const f of Object.keys(before)) rmSync(join(iteration, f));
    const r = await runCli(['report', join(iteration, 'result.json')]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').slice(0, 10)).toEqual([
      '✅ greeting-files, iteration 1: every gate passed (exit code 0)',
      'custom with_skill: pass rate 100% [34%–100%] (95% CI, clustered by case, 2 case(s)), 0 errors; 4/4 graded trial(s) passed',
      'custom without_skill: pass rate 0% [0%–66%] (95% CI, clustered by case, 2 case(s)), 0 errors; 0/4 graded trial(s) passed',
      'custom uplift: +100 points [+7, +100] (95% CI, clustered by case) over 2 compared cases',
      '  verdict: inconclusive: only 2 case(s) differ between the variants; at α = 0.05 at least 6 must differ for any result to be significant (smallest reachable p = 0.5)',
      '  p = 0.5 (exact paired permutation test over 2 cases), α = 0.05; 2 better, 0 same, 0 worse (secondary: sign test p = 0.5)',
      '  with_skill 100% [34%–100%] vs without_skill 0% [0%–66%] over the compared cases; errors: with_skill 0 errors in 4 trials, without_skill 0 errors in 4 trials',
      'gate max_error_rate: PASS: 0 of 8 trial(s) errored, within the allowed 0% per arm',
      'gate all_trials_passed: PASS: 4 of 4 graded with_skill trial(s) passed (the default gate: every with_skill trial must pass; set a gate such as --min-pass-rate to decide on intervals)',
      `wrote ${join(iteration, 'report.xml')}`,
    ]);
    for (const [f, text] of Object.entries(before)) expect(read(join(iteration, f)), f).toBe(text);
    expect(existsSync(join(iteration, 'report.html'))).toBe(true);
  });

  it('writes only the asked formats, into --output-dir with a copy of result.json', async () => {
    const out = mkdtempSync(join(tmpdir(), 'su-report-out-'));
    const r = await runCli(['report', iteration, '--format', 'markdown,benchmark', '--output-dir', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`wrote ${join(out, 'summary.md')}\n`);
    expect(existsSync(join(out, 'report.xml'))).toBe(false);
    expect(existsSync(join(out, 'result.json'))).toBe(false);
    expect(JSON.parse(read(join(out, 'hello-file/with_skill/run-2/grading.json'))).summary.total).toBeGreaterThan(0);
    const all = await runCli(['report', iteration, '--output-dir', join(out, 'all')]);
    expect(all.code).toBe(0);
    expect(JSON.parse(read(join(out, 'all/result.json')))).toEqual(JSON.parse(read(join(iteration, 'result.json'))));
  });
});

describe('skill-up report: bad input is one message and exit code 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'su-report-bad-'));

  it('names what a wrong file is and what was expected', async () => {
    writeFileSync(join(dir, 'benchmark.json'), JSON.stringify({ metadata: {}, runs: [], run_summary: {} }));
    let r = await runCli(['report', 'benchmark.json'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'skill-up report: benchmark.json: is a skill-creator benchmark.json (the summary of a run); expected a skill-up result.json (written by `skill-up run` into its iteration folder), found in the same iteration folder (see skill-up report --help)\n',
    );
    writeFileSync(join(dir, 'evals.json'), JSON.stringify({ skill_name: 'x', evals: [] }));
    r = await runCli(['report', 'evals.json'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is an Anthropic evals.json (eval definitions, not results); convert it with `skill-up import`');
    r = await runCli(['report', 'missing.json'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('missing.json: not found; expected a skill-up result.json');
    writeFileSync(join(dir, 'v1.json'), JSON.stringify({ schema_version: '1', tool: { name: 'skill-up', version: '0.1.0' }, jobs: [], summary: { variants: [{ wilson: { low: 0, high: 1 } }] } }));
    r = await runCli(['report', 'v1.json'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'skill-up report: v1.json: is a result.json of schema_version "1" (written by skill-up 0.1.0); this skill-up reads schema_version "2" only (its statistics changed: case-clustered intervals, a three-state verdict, gates): run the suite again with `skill-up run` to get a result.json it can report on (see skill-up report --help)\n',
    );
    writeFileSync(join(dir, 'broken.json'), '{"schema_version": "1",');
    r = await runCli(['report', 'broken.json'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^skill-up report: broken\.json(:\d+:\d+)?: not valid JSON; expected a skill-up result\.json/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('checks its options', async () => {
    let r = await runCli(['report']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('report needs the result.json of a run');
    r = await runCli(['report', 'a.json', '--format', 'benchmrk']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('skill-up report: unknown format `benchmrk` (formats: json, junit, markdown, benchmark, html); did you mean `benchmark`? (see skill-up report --help)\n');
    r = await runCli(['report', 'a.json', 'b.json']);
    expect(r.code).toBe(2);
  });

  it('has --help with examples, and is listed by skill-up --help', async () => {
    const r = await runCli(['report', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: skill-up report <result\.json>/);
    expect(r.stdout).toContain('Examples:\n  skill-up report my-skill-workspace/iteration-3/result.json');
    const top = await runCli(['--help']);
    expect(top.stdout).toContain('report <result.json>');
    expect(top.stdout).toContain('import <evals.json>');
  });
});

describe('reportFormats (what skill-up run writes)', () => {
  it('adds summary.md always, and the skill-creator files only when both variants ran', () => {
    const w = makeResult();
    const wo = makeResult({ id: 'c/without_skill/run-1', variant: 'without_skill' });
    expect(reportFormats(['json', 'junit'], [w])).toEqual(['json', 'junit', 'markdown']);
    expect(reportFormats(['json', 'junit'], [w, wo])).toEqual(['json', 'junit', 'markdown', 'benchmark']);
    expect(reportFormats(['json', 'benchmark', 'html'], [w])).toEqual(['json', 'benchmark', 'html', 'markdown']);
  });
});
