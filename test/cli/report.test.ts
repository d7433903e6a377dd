import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { reportFormats } from '../../src/cli/run.js';
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
    expect(read(join(iteration, 'summary.md'))).toMatch(/^## ✅ skill-up: greeting-files passed\n\nEvery with_skill job passed \(exit code 0\)\./);
    const b = JSON.parse(read(join(iteration, 'benchmark.json')));
    expect(b.metadata.evals_run).toEqual([1, 2]);
    expect(b.runs).toHaveLength(8);
    expect(b.run_summary.delta.pass_rate).toMatch(/^\+0\.\d\d$/);
    expect(b.statistics.uplift.wins).toBe(2);
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
    expect(r.stdout).toMatch(/^✅ greeting-files, iteration 1: every with_skill job passed \(exit code 0\)\ncustom with_skill: 4\/4 passed 100% \[95% CI 51%–100%\]\ncustom without_skill: 0\/4 passed/);
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
