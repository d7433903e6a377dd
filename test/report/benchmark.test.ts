import { describe, expect, it } from 'vitest';
import { buildBenchmarks, calculateStats, evalIds, gradingJson, signed } from '../../src/report/benchmark.js';
import { job, makeDoc, makeResult } from './helpers.js';

describe('calculateStats (aggregate_benchmark.py calculate_stats)', () => {
  it('uses the sample standard deviation and rounds to 4 decimals', () => {
    expect(calculateStats([1, 2, 3, 4])).toEqual({ mean: 2.5, stddev: 1.291, min: 1, max: 4 });
    expect(calculateStats([2 / 3, 1 / 3])).toEqual({ mean: 0.5, stddev: 0.2357, min: 0.3333, max: 0.6667 });
  });
  it('gives 0 deviation for one value and zeros for none', () => {
    expect(calculateStats([7])).toEqual({ mean: 7, stddev: 0, min: 7, max: 7 });
    expect(calculateStats([])).toEqual({ mean: 0, stddev: 0, min: 0, max: 0 });
  });
});

describe('signed', () => {
  it('formats like Python `+.Nf`', () => {
    expect(signed(0.5, 2)).toBe('+0.50');
    expect(signed(-0.25, 2)).toBe('-0.25');
    expect(signed(0, 1)).toBe('+0.0');
    expect(signed(1700, 0)).toBe('+1700');
    expect(signed(-13.04, 1)).toBe('-13.0');
  });
});

describe('evalIds', () => {
  it('keeps the number of eval-<n> folders and numbers the other cases from 1 in order, skipping taken ids', () => {
    const ids = evalIds(['eval-3', 'hello', 'eval-1-pdf-form', 'world', 'hello', 'eval-3-dup']);
    expect(Object.fromEntries(ids)).toEqual({ 'eval-3': 3, hello: 2, 'eval-1-pdf-form': 1, world: 4, 'eval-3-dup': 5 });
  });
});

describe('gradingJson', () => {
  it("has skill-creator's fields with counts from the job, and the job's verdict under new keys", () => {
    const g = gradingJson(makeDoc([job('c', 'with_skill', 2, [['a', true], ['b', false]])]).jobs[0]!);
    expect(Object.keys(g)).toEqual(['expectations', 'summary', 'execution_metrics', 'timing', 'claims', 'user_notes_summary', 'status']);
    expect(g.summary).toEqual({ passed: 1, failed: 1, total: 2, pass_rate: 0.5 });
    expect(g.execution_metrics).toEqual({
      tool_calls: { Write: 2, Bash: 1 },
      total_tool_calls: 3,
      total_steps: 1,
      errors_encountered: 1, // the Bash call of trial 2 reported an error
      output_chars: 'answer of c with_skill 2'.length,
      transcript_chars: 'prompt of c'.length + 'answer of c with_skill 2'.length,
    });
    expect(g.timing).toEqual({ executor_duration_seconds: 1.6, total_duration_seconds: 2.5 });
    expect(g.status).toBe('fail');
  });

  it('records an error as one error encountered and puts its reason where the viewer and aggregator show notes', () => {
    const g = gradingJson(makeDoc([makeResult({ status: 'error', reason: 'engine error in turn 1: boom', assertions: [] })]).jobs[0]!);
    expect(g.summary).toEqual({ passed: 0, failed: 0, total: 0, pass_rate: 0 });
    expect(g.execution_metrics.errors_encountered).toBe(1);
    expect(g.user_notes_summary.needs_review).toEqual(['error: engine error in turn 1: boom']);
    expect(g.reason).toBe('engine error in turn 1: boom');
  });
});

describe('buildBenchmarks', () => {
  const results = [
    job('alpha', 'with_skill', 1, [['x', true], ['y', true]]),
    job('alpha', 'with_skill', 2, [['x', true], ['y', false]]),
    job('alpha', 'without_skill', 1, [['x', true], ['y', false]]),
    job('alpha', 'without_skill', 2, [['x', true], ['y', false]]),
    job('beta', 'with_skill', 1, [['z', true]]),
    job('beta', 'with_skill', 2, [], { status: 'error', reason: 'case timed out after 60 s', assertions: [] }),
    job('beta', 'without_skill', 1, [['z', false]]),
    job('beta', 'without_skill', 2, [['z', false]]),
  ];

  it('builds one bundle at the iteration folder for a single-engine run, with run_summary over graded runs only', () => {
    const [b, ...rest] = buildBenchmarks(makeDoc(results));
    expect(rest).toHaveLength(0);
    expect(b!.root).toBe('');
    const bm = b!.benchmark;
    expect(bm.metadata).toMatchObject({ skill_name: 'my-skill', skill_path: '/skills/my-skill', executor_model: 'agent', timestamp: '2026-01-01T00:00:00Z', evals_run: [1, 2], runs_per_configuration: 2 });
    expect(bm.runs).toHaveLength(8);
    expect(bm.runs.map((r) => `${r.configuration}:${r.eval_id}:${r.run_number}`).slice(0, 4)).toEqual(['with_skill:1:1', 'with_skill:1:2', 'with_skill:2:1', 'with_skill:2:2']);
    // with_skill graded runs: alpha 1.0, alpha 0.5, beta 1.0 (the error is left out)
    expect(bm.run_summary.with_skill!.pass_rate).toEqual(calculateStats([1, 0.5, 1]));
    expect(bm.run_summary.without_skill!.pass_rate).toEqual(calculateStats([0.5, 0.5, 0, 0]));
    expect(bm.run_summary.delta).toEqual({
      pass_rate: signed(calculateStats([1, 0.5, 1]).mean - 0.25, 2),
      time_seconds: signed(calculateStats([1.5, 2.5, 1.5]).mean - calculateStats([1, 2, 1, 2]).mean, 1),
      tokens: signed(calculateStats([115, 215, 115]).mean - calculateStats([110, 210, 110, 210]).mean, 0),
    });
    const err = bm.runs.find((r) => r.status === 'error')!;
    expect(err).toMatchObject({ eval_name: 'beta', configuration: 'with_skill', run_number: 2, reason: 'case timed out after 60 s', output_dir: 'beta/with_skill/run-2' });
    expect(err.result.errors).toBeGreaterThanOrEqual(1);
    expect(bm.notes[0]).toMatch(/^1 run\(s\) ended in error and 0 were skipped/);
  });

  it('leaves trigger jobs out: the benchmark compares the variants on tasks, and a trigger-only run has none', () => {
    const trigger = (t: number, activated: boolean) =>
      job(`trigger-q${t}`, 'with_skill', 1, [['the skill is activated by this query', activated]], { trigger: { skill: 'my-skill', shouldTrigger: true, activated, query: `q${t}` } });
    const bm = buildBenchmarks(makeDoc([...results, trigger(1, true), trigger(2, false)]))[0]!.benchmark;
    expect(bm.runs).toHaveLength(8);
    expect(bm.runs.some((r) => r.eval_name.startsWith('trigger-'))).toBe(false);
    expect(bm.run_summary.with_skill!.pass_rate).toEqual(calculateStats([1, 0.5, 1]));
    expect(buildBenchmarks(makeDoc([trigger(1, true), trigger(2, false)]))).toEqual([]);
  });

  it("puts skill-up's statistics under the new key `statistics`, not into run_summary", () => {
    const bm = buildBenchmarks(makeDoc(results))[0]!.benchmark;
    expect(Object.keys(bm)).toEqual(['metadata', 'runs', 'run_summary', 'notes', 'statistics']);
    const withStats = bm.statistics.configurations.with_skill!;
    expect(withStats).toMatchObject({ trials: 4, passed: 2, failed: 1, errors: 1, error_rate: 0.25, job_pass_rate: 2 / 3, mean_eval_pass_rate: 0.75 });
    // The variant's interval is the case-clustered one, around the mean of the eval rates, named for what it is.
    expect(withStats).not.toHaveProperty('wilson_95');
    expect(withStats.ci_95_clustered).toMatchObject({ method: 'case-clustered Wilson', level: 0.95, cases: 2, trials: 3 });
    expect(withStats.ci_95_clustered!.low).toBeLessThan(0.75);
    expect(withStats.ci_95_clustered!.high).toBeGreaterThan(0.75);
    const u = bm.statistics.uplift!;
    expect(u).toMatchObject({ compared_evals: 2, pass_rate_delta: 0.75, wins: 2, ties: 0, losses: 0, sign_test_p: 0.5, verdict: 'inconclusive', p_method: 'exact', holm_engines: 1, alpha: 0.05 });
    expect(u.reason).toMatch(/^1 of 4 with_skill trials errored \(25%\), above the allowed error rate of 0%/);
    expect(u.errors).toEqual({ with_skill: { errors: 1, trials: 4 }, without_skill: { errors: 0, trials: 4 } });
    expect(u.ci_95_clustered!.low).toBeLessThan(0.75);
    expect(u.with_skill_pass_rate).toBe(0.75);
    expect(u.without_skill_pass_rate).toBe(0);
    expect(u.dropped).toEqual([]);
    expect(bm.statistics.gates.map((g) => `${g.name}:${g.state}`)).toEqual(['max_error_rate:fail', 'all_trials_passed:fail']);
    expect(bm.statistics.definitions).toContain('ci_95_clustered');
    const alphaWith = bm.statistics.per_eval.find((e) => e.eval_name === 'alpha' && e.configuration === 'with_skill')!;
    expect(alphaWith).toMatchObject({ eval_id: 1, passed: 1, failed: 1, flaky: true, pass_at_k: { '1': 0.5, '2': 1 }, pass_hat_k: { '1': 0.5, '2': 0 } });
  });

  it('writes eval_metadata for each case folder and each variant folder, with the prompt and assertion texts', () => {
    const b = buildBenchmarks(makeDoc(results))[0]!;
    expect(b.evalMetadata.map((m) => m.dir)).toEqual(['alpha', 'alpha/with_skill', 'alpha/without_skill', 'beta', 'beta/with_skill', 'beta/without_skill']);
    expect(b.evalMetadata[0]!.metadata).toEqual({ eval_id: 1, eval_name: 'alpha', prompt: 'prompt of alpha', assertions: ['x', 'y'], case_id: 'alpha' });
    expect(b.gradings.map((g) => g.dir)).toContain('beta/with_skill/run-2');
  });

  it('joins the prompts of a multi-turn case and takes them from a job that has turns', () => {
    const turn = (index: number, prompt: string) => ({ index, prompt, status: 'completed' as const, finalText: 'ok', durationMs: 1, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, toolCalls: [], skillActivations: [] });
    const b = buildBenchmarks(
      makeDoc([
        makeResult({ id: 'm/with_skill/run-1', outputDir: 'm/with_skill/run-1', caseId: 'm', status: 'error', turns: [] }),
        makeResult({ id: 'm/with_skill/run-2', outputDir: 'm/with_skill/run-2', caseId: 'm', trial: 2, turns: [turn(1, 'first'), turn(2, 'second')] }),
      ]),
    )[0]!;
    expect(b.evalMetadata[0]!.metadata.prompt).toBe('first\n\n---\n\nsecond');
  });

  it('omits a configuration with no graded run, and the delta with it', () => {
    const bm = buildBenchmarks(
      makeDoc([job('a', 'with_skill', 1, [['x', true]]), job('a', 'without_skill', 1, [], { status: 'error', reason: 'boom', assertions: [] })]),
    )[0]!.benchmark;
    expect(Object.keys(bm.run_summary)).toEqual(['with_skill']);
    expect(bm.runs).toHaveLength(2);
  });

  it('notes assertions that pass, or fail, in every run of both configurations', () => {
    const bm = buildBenchmarks(makeDoc(results))[0]!.benchmark;
    expect(bm.notes).toContain('Eval 1 (alpha): assertion "x" passes in every run of both configurations - it may not differentiate the skill.');
    expect(bm.notes.some((n) => n.includes('"y"'))).toBe(false);
    expect(bm.notes.some((n) => n.startsWith('Eval 1 (alpha) is flaky with_skill: 1/2'))).toBe(true);
  });

  it('makes one bundle per engine folder when several engines ran', () => {
    const multi = ['claude_code', 'codex'].flatMap((engine) => [job('a', 'with_skill', 1, [['x', true]], { engine }), job('a', 'without_skill', 1, [['x', false]], { engine })]);
    const doc = makeDoc(multi, {
      engines: [
        { name: 'claude_code', displayName: 'claude_code', model: { provider: 'anthropic', name: 'claude-sonnet-4-5' }, kwargs: {} },
        { name: 'codex', displayName: 'codex', model: {}, kwargs: {} },
      ],
    });
    const bundles = buildBenchmarks(doc);
    expect(bundles.map((b) => [b.root, b.engine, b.benchmark.runs.length])).toEqual([
      ['claude_code', 'claude_code', 2],
      ['codex', 'codex', 2],
    ]);
    expect(bundles[0]!.benchmark.metadata.executor_model).toBe('anthropic/claude-sonnet-4-5 (claude_code)');
    expect(bundles[1]!.evalMetadata.map((m) => m.dir)).toEqual(['codex/a', 'codex/a/with_skill', 'codex/a/without_skill']);
    expect(bundles[1]!.benchmark.statistics.per_eval.every((e) => e.eval_name === 'a')).toBe(true);
    // Each engine's uplift says its p is Holm-adjusted over both, and its gates are its own and the run-wide ones.
    expect(bundles.map((b) => b.benchmark.statistics.uplift!.holm_engines)).toEqual([2, 2]);
    expect(bundles[0]!.markdown).toMatch(/\n- p = [^\n]*; Holm-adjusted over 2 engines, unadjusted [^\n]*\), α = 0\.05\n/);
    expect(bundles[1]!.benchmark.statistics.gates.every((g) => g.engine === null || g.engine === 'codex')).toBe(true);
  });

  it('lists the evals left out of the uplift, with their eval ids and why, in benchmark.json, its notes and benchmark.md', () => {
    const b = buildBenchmarks(
      makeDoc([
        ...results,
        job('gamma', 'with_skill', 1, [], { status: 'error', reason: 'engine crashed', assertions: [] }),
        job('gamma', 'without_skill', 1, [['x', true]]),
      ]),
    )[0]!;
    expect(b.benchmark.statistics.uplift!.dropped).toEqual([{ eval_id: 3, eval_name: 'gamma', reason: 'with_skill has no graded trial (1 error(s))' }]);
    expect(b.benchmark.notes).toContain('1 eval(s) left out of the uplift: 3 (gamma): with_skill has no graded trial (1 error(s)).');
    expect(b.markdown).toContain('\n- Left out of the comparison (1): eval 3 (gamma): with_skill has no graded trial (1 error(s))\n');
  });

  it("benchmark.md starts with skill-creator's summary table and adds job pass rates with intervals", () => {
    const md = buildBenchmarks(makeDoc(results))[0]!.markdown;
    const lines = md.split('\n');
    expect(lines.slice(0, 13)).toEqual([
      '# Skill Benchmark: my-skill',
      '',
      '**Model**: agent',
      '**Date**: 2026-01-01T00:00:00Z',
      '**Evals**: 1, 2 (2 runs each per configuration)',
      '',
      '## Summary',
      '',
      '| Metric | With Skill | Without Skill | Delta |',
      '|--------|------------|---------------|-------|',
      '| Pass Rate | 83% ± 29% | 25% ± 29% | +0.58 |',
      '| Time | 1.8s ± 0.6s | 1.5s ± 0.6s | +0.3s |',
      '| Tokens | 148 ± 58 | 160 ± 58 | -12 |',
    ]);
    expect(md).toContain('| Configuration | Pass rate [95% CI, clustered by eval] | Errors | Passed / graded |');
    expect(md).toContain('\n| With Skill | 75% [8%–99%] | 1 | 2/3 | 0 | 1.8s | 148 |\n');
    expect(md).toContain('\n**Uplift**: +75 points [-19, +99] (95% CI, clustered by case) over 2 compared cases · verdict: **inconclusive**\n');
    expect(md).toContain('\n- Why: 1 of 4 with_skill trials errored (25%), above the allowed error rate of 0%');
    expect(md).toContain('\n- p = 0.5 (exact paired permutation test over 2 cases), α = 0.05\n');
    expect(md).toContain('\n- Evals: 2 better, 0 same, 0 worse (secondary: sign test p = 0.5)\n');
    expect(md).toContain('\n- Errors: with_skill 1 error in 4 trials, without_skill 0 errors in 4 trials\n');
    expect(md).not.toContain('wilson');
    expect(md).toContain('| Configuration | Runs | Pass rate [95% Wilson CI] |');
    expect(md).toContain('### alpha (eval 1)');
    expect(md).toContain('| y | 1/2 | 0/2 |');
  });

  it('escapes table cells in benchmark.md', () => {
    const md = buildBenchmarks(makeDoc([job('a', 'with_skill', 1, [['pipe | and <b>tag</b>\nnewline', true]])]))[0]!.markdown;
    expect(md).toContain('| pipe \\| and &lt;b>tag&lt;/b> newline | 1/1 |');
  });
});
