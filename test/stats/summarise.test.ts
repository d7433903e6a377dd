import { describe, expect, it } from 'vitest';
import { summarise, type TrialResult, type TrialStatus, type Variant } from '../../src/stats/index.js';

let seq = 0;
function t(caseId: string, variant: Variant, status: TrialStatus, extra: Partial<TrialResult> = {}): TrialResult {
  return { caseId, engine: 'claude_code', variant, trial: ++seq, status, durationMs: 1000, tokens: 100, ...extra };
}
function many(caseId: string, variant: Variant, statuses: TrialStatus[], extra: Partial<TrialResult> = {}): TrialResult[] {
  return statuses.map((s) => t(caseId, variant, s, extra));
}

describe('summarise: per case', () => {
  const rs = [
    ...many('mixed', 'with_skill', ['pass', 'pass', 'fail'], { durationMs: 2000, tokens: 300, costUsd: 0.01 }),
    t('mixed', 'with_skill', 'error', { durationMs: 99_999, tokens: 99_999, costUsd: 0.5 }),
    t('mixed', 'with_skill', 'skipped', { durationMs: 0, tokens: 0 }),
    ...many('broken', 'with_skill', ['error', 'error']),
  ];
  const s = summarise(rs);
  const mixed = s.cases.find((c) => c.caseId === 'mixed')!;
  const broken = s.cases.find((c) => c.caseId === 'broken')!;

  it('counts every status and excludes errors and skips from the rate', () => {
    expect(mixed).toMatchObject({ trials: 5, passed: 2, failed: 1, errors: 1, skipped: 1, flaky: true });
    expect(mixed.passRate).toBeCloseTo(2 / 3, 12);
  });
  it('gives pass@k and pass^k for k = 1 and k = n graded trials', () => {
    expect(Object.keys(mixed.passAtK).sort()).toEqual(['1', '3']);
    expect(mixed.passAtK[1]).toBeCloseTo(2 / 3, 12);
    expect(mixed.passAtK[3]).toBe(1);
    expect(mixed.passHatK[1]).toBeCloseTo(2 / 3, 12);
    expect(mixed.passHatK[3]).toBe(0);
  });
  it('gives the Wilson interval of the graded trials', () => {
    expect(mixed.wilson.low).toBeCloseTo(0.2077, 4);
    expect(mixed.wilson.high).toBeCloseTo(0.9385, 4);
  });
  it('averages time and tokens over graded trials but totals every cost', () => {
    expect(mixed.meanDurationMs).toBe(2000);
    expect(mixed.meanTokens).toBe(300);
    expect(mixed.costUsd).toBeCloseTo(0.53, 12);
  });
  it('reports a case with no graded trial as unknown, not failed', () => {
    expect(broken).toMatchObject({ trials: 2, passed: 0, failed: 0, errors: 2, passRate: null, flaky: false });
    expect(broken.wilson).toEqual({ low: 0, high: 1 });
    expect(broken.passAtK).toEqual({});
    expect(broken.meanTokens).toBeNull();
    expect(broken.costUsd).toBeNull();
  });
  it('is not flaky when all graded trials agree', () => {
    const one = summarise(many('x', 'with_skill', ['pass', 'pass', 'error']));
    expect(one.cases[0]!.flaky).toBe(false);
    expect(one.cases[0]!.passRate).toBe(1);
  });
});

describe('summarise: per variant', () => {
  it('averages per-case rates (each case weighs the same) and pools trials for Wilson', () => {
    const rs = [
      ...many('a', 'with_skill', ['pass']),
      ...many('b', 'with_skill', ['pass', 'fail', 'fail']),
      ...many('c', 'with_skill', ['error']),
    ];
    const v = summarise(rs).variants;
    expect(v).toHaveLength(1);
    expect(v[0]).toMatchObject({ engine: 'claude_code', variant: 'with_skill', cases: 3, gradedCases: 2, trials: 5, passed: 2, failed: 2, errors: 1 });
    expect(v[0]!.passRate).toBeCloseTo((1 + 1 / 3) / 2, 12); // not the pooled 2/4
    // Clustered by case: two cases at 1 and 1/3 say little about the suite (t with 1 df).
    expect(v[0]!.interval).toMatchObject({ method: 'case-clustered Wilson', cases: 2, trials: 4 });
    expect(v[0]!.interval!.low).toBeLessThan(0.2);
    expect(v[0]!.interval!.high).toBeGreaterThan(0.9);
    expect(v[0]!.errorRate).toBeCloseTo(1 / 5, 12);
  });
  it('has no uplift when only one variant ran', () => {
    expect(summarise(many('a', 'with_skill', ['pass'])).uplift).toEqual([]);
  });
});

describe('summarise: uplift', () => {
  const cases = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'];
  it('finds an improvement when 6 of 6 cases win (permutation p = 2/64)', () => {
    const rs = cases.flatMap((c) => [
      ...many(c, 'with_skill', ['pass', 'pass', 'pass'], { tokens: 250, durationMs: 3000 }),
      ...many(c, 'without_skill', ['fail', 'fail', 'pass'], { tokens: 100, durationMs: 1000 }),
    ]);
    const [u] = summarise(rs).uplift;
    expect(u).toMatchObject({ engine: 'claude_code', wins: 6, ties: 0, losses: 0, verdict: 'improves' });
    expect(u!.signTestP).toBeCloseTo(0.03125, 12);
    expect(u!.p).toBeCloseTo(0.03125, 12);
    expect(u!.pMethod).toBe('exact');
    expect(u!.passRateDelta).toBeCloseTo(2 / 3, 12);
    expect(u!.interval!.low).toBeGreaterThan(0);
    expect(u!.interval!.high).toBeLessThanOrEqual(1);
    expect(u!.tokensDelta).toBeCloseTo(150, 12);
    expect(u!.durationMsDelta).toBeCloseTo(2000, 12);
    expect(u!.perCase[0]).toMatchObject({ caseId: 'c1', with: 1, verdict: 'win' });
    expect(u!.perCase[0]!.without).toBeCloseTo(1 / 3, 12);
  });
  it('finds a regression when 6 of 6 cases lose', () => {
    const rs = cases.flatMap((c) => [...many(c, 'with_skill', ['fail']), ...many(c, 'without_skill', ['pass'])]);
    const [u] = summarise(rs).uplift;
    expect(u).toMatchObject({ wins: 0, losses: 6, verdict: 'regresses', passRateDelta: -1 });
  });
  it('is inconclusive with fewer than 6 differing cases, whatever the effect, and says why', () => {
    const rs = cases.flatMap((c, i) => [
      ...many(c, 'with_skill', ['pass']),
      ...many(c, 'without_skill', [i < 4 ? 'fail' : 'pass']),
    ]);
    const [u] = summarise(rs).uplift;
    expect(u).toMatchObject({ wins: 4, ties: 2, losses: 0, verdict: 'inconclusive' });
    expect(u!.signTestP).toBeCloseTo(0.125, 12);
    expect(u!.reason).toMatch(/only 4 case\(s\) differ.*at least 6 must differ/);
  });
  it('calls a 5–0 sweep inconclusive: no p below 0.0625 is reachable with 5 decisive cases', () => {
    const rs = cases.slice(0, 5).flatMap((c) => [...many(c, 'with_skill', ['pass', 'pass', 'pass']), ...many(c, 'without_skill', ['fail', 'fail', 'fail'])]);
    const [u] = summarise(rs).uplift;
    expect(u).toMatchObject({ wins: 5, losses: 0, verdict: 'inconclusive' });
    expect(u!.p).toBeCloseTo(0.0625, 12);
    expect(u!.reason).toMatch(/smallest reachable p = 0\.062/);
  });
  it('weighs the size of each difference: 1/3 vs 0/3 is not a full win', () => {
    const small = cases.flatMap((c) => [...many(c, 'with_skill', ['pass', 'fail', 'fail']), ...many(c, 'without_skill', ['fail', 'fail', 'fail'])]);
    const mixed = [
      ...cases.flatMap((c) => [...many(c, 'with_skill', ['pass', 'fail', 'fail']), ...many(c, 'without_skill', ['fail', 'fail', 'fail'])]),
      ...many('big-loss', 'with_skill', ['fail', 'fail', 'fail']),
      ...many('big-loss', 'without_skill', ['pass', 'pass', 'pass']),
    ];
    expect(summarise(small).uplift[0]!.verdict).toBe('improves');
    // Six +1/3 wins and one −1 loss: the sign test would call 6–1 a win (p = 0.125 either way),
    // the permutation test sees a mean of +1/7 and is far from significant.
    const u = summarise(mixed).uplift[0]!;
    expect(u.p).toBeGreaterThan(0.2);
    expect(u.verdict).toBe('inconclusive');
  });
  it('reports an inconclusive result when the split is not significant', () => {
    const rs = cases.flatMap((c, i) => [
      ...many(c, 'with_skill', [i < 3 ? 'pass' : 'fail']),
      ...many(c, 'without_skill', [i < 3 ? 'fail' : 'pass']),
    ]);
    const [u] = summarise(rs).uplift;
    expect(u).toMatchObject({ wins: 3, losses: 3, signTestP: 1, p: 1, verdict: 'inconclusive', passRateDelta: 0 });
    expect(u!.reason).toMatch(/p = 1 > α = 0\.05/);
  });
  it('compares only cases graded in both variants', () => {
    const rs = [
      ...many('both', 'with_skill', ['pass']),
      ...many('both', 'without_skill', ['fail']),
      ...many('onlyWith', 'with_skill', ['pass']),
      ...many('errored', 'with_skill', ['pass']),
      ...many('errored', 'without_skill', ['error']),
    ];
    const [u] = summarise(rs, { maxErrorRate: 1 }).uplift;
    expect(u!.perCase.map((c) => c.caseId)).toEqual(['both']);
    expect(u!.passRateDelta).toBe(1);
    expect(u!.dropped).toEqual([
      { caseId: 'onlyWith', reason: 'no without_skill trial' },
      { caseId: 'errored', reason: 'without_skill has no graded trial (1 error(s))' },
    ]);
    expect(u!.withRate).toBe(1);
    expect(u!.withoutRate).toBe(0);
  });
  it('honours alpha', () => {
    const rs = cases.slice(0, 4).flatMap((c) => [...many(c, 'with_skill', ['pass']), ...many(c, 'without_skill', ['fail'])]);
    expect(summarise(rs).uplift[0]!.verdict).toBe('inconclusive');
    expect(summarise(rs, { alpha: 0.2 }).uplift[0]!.verdict).toBe('improves'); // p = 0.125 ≤ 0.2 with 4 decisive cases
  });
});

describe('summarise: shape and validation', () => {
  it('keeps engines and cases in first-appearance order, with_skill first', () => {
    const rs: TrialResult[] = [
      { ...t('z', 'without_skill', 'pass'), engine: 'codex' },
      { ...t('a', 'with_skill', 'pass'), engine: 'codex' },
      { ...t('z', 'with_skill', 'pass'), engine: 'codex' },
      t('q', 'with_skill', 'fail'),
    ];
    const s = summarise(rs);
    expect(s.cases.map((c) => `${c.engine}/${c.caseId}/${c.variant}`)).toEqual([
      'codex/z/with_skill',
      'codex/z/without_skill',
      'codex/a/with_skill',
      'claude_code/q/with_skill',
    ]);
    expect(s.variants.map((v) => `${v.engine}/${v.variant}`)).toEqual(['codex/with_skill', 'codex/without_skill', 'claude_code/with_skill']);
    expect(s.uplift.map((u) => u.engine)).toEqual(['codex']);
  });
  it('returns empty lists for no results', () => {
    expect(summarise([])).toEqual({ options: { alpha: 0.05, errorsAsFailures: false, maxErrorRate: 0 }, cases: [], variants: [], uplift: [] });
  });
  it('rejects malformed trials', () => {
    expect(() => summarise([t('a', 'with_skill', 'pass', { durationMs: -1 })])).toThrow(/durationMs/);
    expect(() => summarise([t('a', 'with_skill', 'pass', { tokens: Number.NaN })])).toThrow(/tokens/);
    expect(() => summarise([t('a', 'other' as Variant, 'pass')])).toThrow(/variant/);
  });
});
