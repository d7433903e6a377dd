import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** A copy of examples/greeting-files in a temp folder, its eval.yaml edited by `edit`. */
function example(edit: (yaml: string) => string = (y) => y): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'su-calibrate-')), 'greeting-files');
  cpSync(join(ROOT, 'examples/greeting-files'), dir, { recursive: true });
  const file = join(dir, 'evals/eval.yaml');
  writeFileSync(file, edit(readFileSync(file, 'utf8')));
  return dir;
}
const noBaseline = (y: string) => y.replace('benchmark:\n  enabled: true', 'benchmark:\n  enabled: false');

let stdout = '';
let stderr = '';
beforeEach(() => {
  stdout = '';
  stderr = '';
  process.env.CI = '1';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
});
afterEach(() => vi.restoreAllMocks());

describe('skill-up calibrate (end to end, in process)', () => {
  it('runs with_skill with 2k trials, writes calibration.json and calibration.md, prints the table', async () => {
    const skill = example(noBaseline);
    const out = join(skill, '..', 'out');
    const code = await main(['calibrate', skill, '--trials', '2', '--splits', '200', '--output-dir', out]);
    expect(stderr).not.toContain('internal error');
    expect(code).toBe(0);
    const iteration = join(out, 'iteration-1');
    const result = JSON.parse(readFileSync(join(iteration, 'result.json'), 'utf8'));
    expect(result.jobs).toHaveLength(8);
    expect(new Set(result.jobs.map((j: { variant: string }) => j.variant))).toEqual(new Set(['with_skill']));
    expect(Math.max(...result.jobs.map((j: { trial: number }) => j.trial))).toBe(4);

    const cal = JSON.parse(readFileSync(join(iteration, 'calibration.json'), 'utf8'));
    expect(cal).toMatchObject({ schema_version: '1', splits: 200, alpha: 0.05, result_file: join(iteration, 'result.json') });
    expect(cal.engines).toHaveLength(1);
    const e = cal.engines[0];
    expect(e).toMatchObject({ engine: 'greeter-agent', variant: 'with_skill', half: 2, graded_cases: 2, flaky_cases: 0 });
    expect(e.cases.map((c: { case_id: string; passed: number; graded: number }) => [c.case_id, c.passed, c.graded])).toEqual([
      ['hello-file', 4, 4],
      ['welcome-note', 4, 4],
    ]);
    expect(e.false_differences).toMatchObject({ splits: 200, count: 0, rate: 0, sound: true });
    expect(e.noise_floor.uplift).toBe(0);
    expect(e.power.detectable_uplift).toBeNull(); // 2 cases: below the test's minimum size
    expect(e.power.rows).toHaveLength(3);
    expect(readFileSync(join(iteration, 'calibration.md'), 'utf8')).toContain('# A/A calibration');

    expect(stderr).toContain('calibrate: running with_skill with 4 trials per case (two halves of 2)');
    expect(stdout).toContain('A/A calibration of greeter-agent (with_skill): 2 case(s) × 4 trial(s); halves: trials 1–2 and 3–4');
    expect(stdout).toMatch(/hello-file +4\/4 +100% +0\.00 +2\/2; 2\/2/);
    expect(stdout).toContain('False differences: 0 of 200 A/A re-splits called a difference at α = 0.05: 0.0%');
    expect(stdout).toContain('Cases needed to detect an uplift');
    expect(stdout).toContain(`wrote ${join(iteration, 'calibration.json')}`);
    expect(existsSync(join(iteration, 'calibration.md'))).toBe(true);
  });

  it('defaults k to the suite trials (at least 2), passes filters through, uses with_skill only', async () => {
    const skill = example(); // benchmark.enabled: true; calibrate runs the run with --no-baseline
    const out = join(skill, '..', 'out');
    const code = await main(['calibrate', skill, '--case', 'hello-file', '--splits', '50', '--output-dir', out]);
    expect(stderr).not.toContain('internal error');
    expect(code).toBe(0);
    expect(stderr).toContain('two halves of 2');
    expect(stderr).not.toContain('without_skill job(s) ran');
    const doc = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
    expect(doc.jobs.every((j: { variant: string }) => j.variant === 'with_skill')).toBe(true);
    const cal = JSON.parse(readFileSync(join(out, 'iteration-1/calibration.json'), 'utf8'));
    expect(cal.engines.map((e: { variant: string }) => e.variant)).toEqual(['with_skill']);
    expect(cal.engines[0].cases.map((c: { case_id: string }) => c.case_id)).toEqual(['hello-file']);
  });

  it('exits 3 when no trial could be graded', async () => {
    const skill = example((y) => noBaseline(y).replace('command: node', 'command: "false"'));
    const out = join(skill, '..', 'out');
    const code = await main(['calibrate', skill, '--trials', '1', '--splits', '10', '--output-dir', out]);
    expect(stderr).not.toContain('internal error');
    expect(code).toBe(3);
    expect(stderr).toContain('no case has a graded with_skill trial');
    expect(existsSync(join(out, 'iteration-1/calibration.json'))).toBe(true);
  });

  it('usage: help is 0, bad flags are 2', async () => {
    expect(await main(['calibrate', '--help'])).toBe(0);
    expect(stdout).toContain('Usage: skill-up calibrate [path] [options]');
    expect(await main(['calibrate', '--splits', '0'])).toBe(2);
    expect(stderr).toContain('--splits must be an integer from 1 to 100000');
    expect(await main(['calibrate', '--alpha', '2'])).toBe(2);
    expect(await main(['calibrate', '--baseline'])).toBe(2);
    expect(await main(['calibrate', 'a', 'b'])).toBe(2);
    expect(await main(['--help'])).toBe(0);
    expect(stdout).toMatch(/calibrate \[path\] +A\/A calibration/);
  });
});

describe('skill-up calibrate on a suite that errors in some trials', () => {
  it('exits 3 and says the calibration is not to be trusted (it covers only the graded trials)', async () => {
    const { writeRandomSuite, uniformCases } = await import('../fixtures/random-agent/suite.mjs');
    const root = mkdtempSync(join(tmpdir(), 'su-cal-err-'));
    const skill = writeRandomSuite(root, { cases: uniformCases(4, 'pass_with=100 error_with=50 error_mode=exit'), trials: 2 });
    const code = await main(['calibrate', skill, '--splits', '20', '--output-dir', join(root, 'out')]);
    expect(code).toBe(3);
    expect(stderr).toMatch(/with_skill trial\(s\) errored; the calibration covers the graded trials only/);
    expect(existsSync(join(root, 'out/iteration-1/calibration.json'))).toBe(true);
  });
});
