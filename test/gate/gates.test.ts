import { describe, expect, it } from 'vitest';
import { decide, exitCodeOf, intervalState, type DecisionConfig, type GateResult, type PreviousRun } from '../../src/gate/index.js';
import type { TrialResult, TrialStatus, Variant } from '../../src/stats/index.js';

const base: DecisionConfig = { alpha: 0.05, errorsAsFailures: false, maxErrorRate: 0 };
function trials(caseId: string, variant: Variant, statuses: TrialStatus[], engine = 'claude_code'): TrialResult[] {
  return statuses.map((status, i) => ({ caseId, engine, variant, trial: i + 1, status, durationMs: 1, tokens: 1 }));
}
const ids = (n: number) => Array.from({ length: n }, (_, i) => `case-${i + 1}`);
const gate = (gs: GateResult[], name: GateResult['name']) => gs.find((g) => g.name === name)!;

describe('errors are data', () => {
  it('a skill that crashes the agent in 2 of 3 trials neither scores 100% nor "improves"', () => {
    const rs = ids(8).flatMap((c) => [...trials(c, 'with_skill', ['pass', 'error', 'error']), ...trials(c, 'without_skill', ['fail', 'fail', 'fail'])]);
    const d = decide(rs, base);
    const w = d.stats.variants.find((v) => v.variant === 'with_skill')!;
    expect(w.errors).toBe(16);
    expect(w.errorRate).toBeCloseTo(16 / 24, 12);
    expect(d.stats.uplift[0]!.verdict).toBe('inconclusive');
    expect(d.stats.uplift[0]!.reason).toMatch(/16 of 24 with_skill trials errored \(67%\), above the allowed error rate of 0%/);
    expect(gate(d.gates, 'max_error_rate').state).toBe('fail');
    expect(d.exitCode).toBe(3);
    // The worst case: errors as failures, still counted and shown.
    const worst = decide(rs, { ...base, errorsAsFailures: true });
    const ww = worst.stats.variants.find((v) => v.variant === 'with_skill')!;
    expect(ww.passRate).toBeCloseTo(1 / 3, 12);
    expect(ww).toMatchObject({ passed: 8, failed: 16, errors: 16 });
    expect(gate(worst.gates, 'max_error_rate')).toMatchObject({ state: 'pass', reason: '16 of 48 trial(s) errored, counted as failures (--errors-as-failures)' });
    expect(worst.exitCode).toBe(1); // the default gate: not every with_skill trial passed
  });
  it('lists a case whose with_skill trials all errored as left out, with the reason', () => {
    const rs = [
      ...ids(6).flatMap((c) => [...trials(c, 'with_skill', ['pass', 'pass', 'pass']), ...trials(c, 'without_skill', ['fail', 'fail', 'fail'])]),
      ...trials('broken', 'with_skill', ['error', 'error', 'error']),
      ...trials('broken', 'without_skill', ['fail', 'fail', 'fail']),
    ];
    const d = decide(rs, { ...base, maxErrorRate: 0.5 });
    const u = d.stats.uplift[0]!;
    expect(u.dropped).toEqual([{ caseId: 'broken', reason: 'with_skill has no graded trial (3 error(s))' }]);
    expect(u.comparedCases).toBe(6);
    expect(u.withoutRate).toBe(0); // over the compared cases only: the same set as withRate
    expect(u.errors.with).toEqual({ errors: 3, trials: 21 });
    expect(u.verdict).toBe('improves');
  });
});

describe('gates', () => {
  it('max_error_rate is per arm, as the verdict counts errors', () => {
    // 12 of 18 with_skill trials error (67%), none without: 33% over the run, but one arm is above 50%.
    const rs = ids(6).flatMap((c) => [...trials(c, 'with_skill', ['pass', 'error', 'error']), ...trials(c, 'without_skill', ['fail', 'fail', 'fail'])]);
    const d = decide(rs, { ...base, maxErrorRate: 0.5, minUplift: 0.1 });
    expect(gate(d.gates, 'max_error_rate')).toMatchObject({ state: 'fail', reason: expect.stringContaining('worst arm claude_code with_skill: 12 of 18 (67%)') });
    expect(d.stats.uplift[0]!.verdict).toBe('inconclusive');
    expect(d.exitCode).toBe(3);
  });
  it('min_uplift cannot pass where the verdict cannot: a 5–0 sweep is inconclusive', () => {
    const rs = ids(5).flatMap((c) => [...trials(c, 'with_skill', ['pass', 'pass', 'pass']), ...trials(c, 'without_skill', ['fail', 'fail', 'fail'])]);
    const g = gate(decide(rs, { ...base, minUplift: 0.1 }).gates, 'min_uplift');
    expect(g.state).toBe('inconclusive');
    expect(g.reason).toMatch(/only 5 case\(s\) compared; at α = 0.05 at least 6 are needed/);
    const six = ids(6).flatMap((c) => [...trials(c, 'with_skill', ['pass', 'pass', 'pass']), ...trials(c, 'without_skill', ['fail', 'fail', 'fail'])]);
    expect(gate(decide(six, { ...base, minUplift: 0.1 }).gates, 'min_uplift').state).toBe('pass');
  });
  it('decides on intervals: PASS above, FAIL below, INCONCLUSIVE across the threshold', () => {
    expect(intervalState({ low: 0.82, high: 0.95 }, 0.8)).toBe('pass');
    expect(intervalState({ low: 0.5, high: 0.79 }, 0.8)).toBe('fail');
    expect(intervalState({ low: 0.7, high: 0.9 }, 0.8)).toBe('inconclusive');
  });
  it('without a statistical gate uses "every with_skill trial passed", named as such', () => {
    const ok = decide(ids(3).flatMap((c) => trials(c, 'with_skill', ['pass', 'pass'])), base);
    expect(ok.gates.map((g) => `${g.name}:${g.state}`)).toEqual(['max_error_rate:pass', 'all_trials_passed:pass']);
    expect(ok.exitCode).toBe(0);
    const one = decide([...ids(3).flatMap((c) => trials(c, 'with_skill', ['pass', 'pass'])), ...trials('x', 'with_skill', ['fail'])], base);
    expect(gate(one.gates, 'all_trials_passed')).toMatchObject({ state: 'fail', figure: 6 / 7 });
    expect(one.exitCode).toBe(1);
  });
  it('min_pass_rate: a near-perfect 20×3 suite passes 0.8 and is inconclusive at 0.95', () => {
    const rs = [...ids(18).flatMap((c) => trials(c, 'with_skill', ['pass', 'pass', 'pass'])), ...trials('a', 'with_skill', ['pass', 'fail', 'pass']), ...trials('b', 'with_skill', ['pass', 'pass', 'pass'])];
    expect(gate(decide(rs, { ...base, minPassRate: 0.8 }).gates, 'min_pass_rate').state).toBe('pass');
    const hi = decide(rs, { ...base, minPassRate: 0.99 });
    expect(gate(hi.gates, 'min_pass_rate').state).toBe('inconclusive');
    expect(hi.exitCode).toBe(4);
    expect(decide(rs, { ...base, minPassRate: 0.99, onInconclusive: 'pass' }).exitCode).toBe(0);
    expect(decide(rs, { ...base, minPassRate: 0.99, onInconclusive: 'fail' }).exitCode).toBe(1);
    expect(gate(decide(ids(20).flatMap((c) => trials(c, 'with_skill', ['fail', 'fail', 'pass'])), { ...base, minPassRate: 0.8 }).gates, 'min_pass_rate').state).toBe('fail');
  });
  it('min_uplift needs the without_skill arm and is decided on the uplift interval', () => {
    const solo = decide(ids(6).flatMap((c) => trials(c, 'with_skill', ['pass'])), { ...base, minUplift: 0.1 });
    expect(gate(solo.gates, 'min_uplift')).toMatchObject({ state: 'inconclusive', reason: expect.stringMatching(/--baseline/) });
    const big = ids(20).flatMap((c) => [...trials(c, 'with_skill', ['pass', 'pass', 'pass']), ...trials(c, 'without_skill', ['fail', 'fail', 'fail'])]);
    const d = decide(big, { ...base, minUplift: 0.5 });
    expect(gate(d.gates, 'min_uplift')).toMatchObject({ state: 'pass', figure: 1 });
    expect(d.exitCode).toBe(0);
  });
  it('exit codes: 3 errors above the rate > 1 failed > 4 inconclusive > 0', () => {
    const g = (name: GateResult['name'], state: GateResult['state']): GateResult => ({ name, state, engine: null, threshold: null, figure: null, interval: null, reason: '' });
    expect(exitCodeOf([g('max_error_rate', 'fail'), g('min_pass_rate', 'fail'), g('min_uplift', 'inconclusive')])).toBe(3);
    expect(exitCodeOf([g('max_error_rate', 'pass'), g('min_pass_rate', 'fail'), g('min_uplift', 'inconclusive')])).toBe(1);
    expect(exitCodeOf([g('max_error_rate', 'pass'), g('min_pass_rate', 'pass'), g('min_uplift', 'inconclusive')])).toBe(4);
    expect(exitCodeOf([g('max_error_rate', 'pass'), g('min_uplift', 'inconclusive')], 'fail')).toBe(1);
    expect(exitCodeOf([g('max_error_rate', 'pass'), g('min_pass_rate', 'pass')])).toBe(0);
  });
  it('gives the same answer on identical input', () => {
    const rs = ids(12).flatMap((c, i) => [...trials(c, 'with_skill', i % 3 ? ['pass', 'fail', 'pass'] : ['pass', 'pass', 'pass']), ...trials(c, 'without_skill', i % 2 ? ['fail', 'pass', 'fail'] : ['fail', 'fail', 'fail'])]);
    const cfg = { ...base, minPassRate: 0.6, minUplift: 0.2 };
    expect(JSON.stringify(decide(rs, cfg))).toBe(JSON.stringify(decide(rs, cfg)));
  });
  it('Holm-corrects the verdict across engines', () => {
    const rs = ['claude_code', 'codex', 'opencode'].flatMap((e) =>
      ids(6).flatMap((c) => [...trials(c, 'with_skill', ['pass', 'pass', 'pass'], e), ...trials(c, 'without_skill', ['fail', 'fail', 'fail'], e)]),
    );
    const d = decide(rs, base);
    for (const u of d.stats.uplift) {
      expect(u.p).toBeCloseTo(1 / 32, 12);
      expect(u.pAdjusted).toBeCloseTo(3 / 32, 12);
      expect(u.verdict).toBe('inconclusive');
    }
  });
});

describe('no_regression', () => {
  const prev = (cases: { id: string; passed: number; failed: number }[]): PreviousRun => ({ source: 'old/result.json', iteration: 1, cases: cases.map((c) => ({ engine: 'claude_code', caseId: c.id, passed: c.passed, failed: c.failed })) });
  it('fails and names the case when one of 6 deterministic cases breaks (3/3 → 0/3)', () => {
    const previous = prev(ids(6).map((id) => ({ id, passed: 3, failed: 0 })));
    const rs = ids(6).flatMap((c, i) => trials(c, 'with_skill', i === 3 ? ['fail', 'fail', 'fail'] : ['pass', 'pass', 'pass']));
    const d = decide(rs, { ...base, noRegression: { previous, margin: 0.1 } });
    const g = gate(d.gates, 'no_regression');
    expect(g.state).toBe('fail');
    expect(g.regressions).toEqual([{ caseId: 'case-4', before: 1, after: 0 }]);
    expect(g.reason).toMatch(/case-4 100%→0%/);
    expect(d.exitCode).toBe(1);
  });
  it('passes an unchanged deterministic 20×3 suite and is inconclusive when the suite is too small to rule out a 10-point drop', () => {
    const same = (n: number) => decide(ids(n).flatMap((c) => trials(c, 'with_skill', ['pass', 'pass', 'pass'])), { ...base, noRegression: { previous: prev(ids(n).map((id) => ({ id, passed: 3, failed: 0 }))), margin: 0.1 } });
    expect(gate(same(20).gates, 'no_regression').state).toBe('pass');
    expect(same(20).exitCode).toBe(0);
    expect(gate(same(6).gates, 'no_regression').state).toBe('inconclusive');
  });
  it('pairs by case id and engine, and says so when nothing pairs', () => {
    const d = decide(trials('new-case', 'with_skill', ['pass']), { ...base, noRegression: { previous: prev([{ id: 'old-case', passed: 1, failed: 0 }]), margin: 0.1 } });
    expect(gate(d.gates, 'no_regression')).toMatchObject({ state: 'inconclusive', reason: expect.stringMatching(/no with_skill case was graded in both/) });
  });
});
