import { describe, expect, it } from 'vitest';
import { calibrate, calibrationJson, fixedSplit, groupOutcomes, hasGradedTrials, quantile, randomSplit } from '../../src/calibrate/index.js';
import { seededRandom } from '../../src/stats/distributions.js';
import type { TrialResult, TrialStatus } from '../../src/stats/index.js';

/** `cases` × `trials` with_skill trials; `status(case, trial)` decides each outcome. */
function suite(cases: number, trials: number, status: (c: number, t: number) => TrialStatus, engine = 'sim'): TrialResult[] {
  const out: TrialResult[] = [];
  for (let c = 0; c < cases; c++) {
    for (let t = 1; t <= trials; t++) out.push({ caseId: `case-${c}`, engine, variant: 'with_skill', trial: t, status: status(c, t), durationMs: 10, tokens: 5 });
  }
  return out;
}

function coinFlips(seed: number, cases = 20, trials = 6): TrialResult[] {
  const r = seededRandom(seed);
  return suite(cases, trials, () => (r() < 0.5 ? 'pass' : 'fail'));
}

describe('calibrate: A/A analysis', () => {
  it('a deterministic suite has no false difference and a noise floor of 0', () => {
    const cal = calibrate(suite(10, 6, (c) => (c % 3 === 0 ? 'fail' : 'pass')), { half: 3, splits: 200 });
    expect(cal.engines).toHaveLength(1);
    const e = cal.engines[0]!;
    expect(e.flakyCases).toBe(0);
    expect(e.meanTrialVariance).toBe(0);
    expect(e.cases.every((c) => c.trialVariance === 0 && !c.flaky)).toBe(true);
    expect(e.falseDifferences).toMatchObject({ splits: 200, count: 0, rate: 0, sound: true });
    expect(e.noiseFloor.uplift).toBe(0);
    expect(e.fixedSplit).toMatchObject({ comparedCases: 10, uplift: 0, verdict: 'inconclusive' });
    expect(e.power.noise).toMatchObject({ trialVariance: 0, caseVariance: 0, source: 'observed' });
    // No noise: only the test's resolution limits it (6 cases must differ by a trial in 3).
    expect(e.power.detectableUplift).toBeCloseTo(6 / (10 * 3));
  });

  it('a coin-flip suite (20 cases × 6 trials): flakiness ≈ 0.5, false-difference rate ≤ 0.07', () => {
    const cal = calibrate(coinFlips(11), { half: 3 });
    const e = cal.engines[0]!;
    const rate = e.cases.reduce((a, c) => a + c.passed, 0) / e.cases.reduce((a, c) => a + c.graded, 0);
    expect(rate).toBeGreaterThan(0.4);
    expect(rate).toBeLessThan(0.6);
    expect(e.flakyCases).toBeGreaterThanOrEqual(15);
    expect(e.meanTrialVariance!).toBeGreaterThan(0.15);
    expect(e.falseDifferences.splits).toBe(1000);
    expect(e.falseDifferences.count).toBe(e.falseDifferences.improves + e.falseDifferences.regresses);
    expect(e.falseDifferences.rate!).toBeLessThanOrEqual(0.07);
    expect(e.falseDifferences.sound).toBe(true);
    expect(e.noiseFloor.uplift!).toBeGreaterThan(0.05);
    expect(e.noiseFloor.uplift!).toBeLessThan(0.35);
    expect(e.noiseFloor.meanHalfWidth!).toBeGreaterThan(0.05);
    // The observed noise is close to a coin flip's (w = 0.5 over both arms, τ² ≈ 0).
    expect(e.power.noise.source).toBe('observed');
    expect(e.power.noise.trialVariance).toBeGreaterThan(0.3);
    expect(e.power.rows.map((r) => r.uplift)).toEqual([0.1, 0.2, 0.3]);
    expect(e.power.rows[0]!.casesNeeded[3]!).toBeGreaterThan(e.power.rows[2]!.casesNeeded[3]!);
    expect(e.power.detectableUplift!).toBeGreaterThan(0.1);
  });

  it('stays at or below alpha over several coin-flip suites', () => {
    const rates = [1, 2, 3, 4].map((seed) => calibrate(coinFlips(100 + seed), { half: 3, splits: 300 }).engines[0]!.falseDifferences.rate!);
    for (const r of rates) expect(r).toBeLessThanOrEqual(0.07);
    expect(rates.reduce((a, b) => a + b, 0) / rates.length).toBeLessThanOrEqual(0.05);
  });

  it('is deterministic: the same trials give the same calibration; the seed drives the re-splits', () => {
    const trials = coinFlips(5);
    const a = calibrate(trials, { half: 3, splits: 300 });
    expect(calibrate(trials, { half: 3, splits: 300 })).toEqual(a);
    // Input order does not matter (cases keep first-appearance order; trials are sorted by number).
    expect(calibrate([...trials].reverse(), { half: 3, splits: 300 }).engines[0]!.falseDifferences).toEqual(a.engines[0]!.falseDifferences);
    const other = calibrate(trials, { half: 3, splits: 300, seed: 99 });
    expect(calibrate(trials, { half: 3, splits: 300, seed: 99 })).toEqual(other);
    expect(other.seed).toBe(99);
  });

  it('infers k from the trial numbers, ignores without_skill, and calibrates each engine apart', () => {
    const trials = [
      ...suite(3, 4, () => 'pass', 'a'),
      ...suite(3, 4, (c, t) => (t % 2 ? 'pass' : 'fail'), 'b'),
      ...suite(3, 4, () => 'fail', 'a').map((t) => ({ ...t, variant: 'without_skill' as const })),
    ];
    const cal = calibrate(trials, { splits: 50 });
    expect(cal.engines.map((e) => [e.engine, e.half, e.variant])).toEqual([
      ['a', 2, 'with_skill'],
      ['b', 2, 'with_skill'],
    ]);
    expect(cal.engines[0]!.cases.every((c) => c.passRate === 1)).toBe(true);
    expect(cal.engines[1]!.cases.every((c) => c.flaky && c.trialVariance === 0.25)).toBe(true);
    expect(cal.engines[1]!.cases[0]!.halves).toEqual({ a: { passed: 1, graded: 2 }, b: { passed: 1, graded: 2 } });
    expect(calibrate(trials, { variant: 'without_skill', splits: 10 }).engines.map((e) => e.engine)).toEqual(['a']);
  });

  it('leaves errors and skips out of every rate, or counts errors as failures when asked', () => {
    const trials = suite(6, 4, (c, t) => (c === 0 ? 'error' : c === 1 && t === 1 ? 'skipped' : 'pass'));
    const e = calibrate(trials, { half: 2, splits: 20 }).engines[0]!;
    expect(e.cases[0]).toMatchObject({ graded: 0, errors: 4, passRate: null, trialVariance: null, flaky: false });
    expect(e.cases[1]).toMatchObject({ graded: 3, skipped: 1, passRate: 1, halves: { a: { passed: 1, graded: 1 }, b: { passed: 2, graded: 2 } } });
    expect(e.gradedCases).toBe(5);
    expect(e.splitCases).toBe(5);
    expect(e.meanTrialVariance).toBe(0);
    const worst = calibrate(trials, { half: 2, splits: 20, errorsAsFailures: true }).engines[0]!;
    expect(worst.cases[0]).toMatchObject({ graded: 4, passed: 0, errors: 0, passRate: 0 });
  });

  it('says nothing can be calibrated when no trial was graded, and falls back to the assumed noise', () => {
    const cal = calibrate(suite(3, 4, () => 'error'), { half: 2, splits: 10 });
    expect(hasGradedTrials(cal)).toBe(false);
    const e = cal.engines[0]!;
    expect(e.falseDifferences).toMatchObject({ splits: 0, rate: null, interval: null, sound: true });
    expect(e.noiseFloor.uplift).toBeNull();
    expect(e.fixedSplit.comparedCases).toBe(0);
    expect(e.power.noise.source).toBe('assumed');
    expect(e.power.detectableUplift).toBeNull();
    expect(hasGradedTrials(calibrate([], {}))).toBe(false);
  });

  it('rejects bad options', () => {
    expect(() => calibrate([], { alpha: 0 })).toThrow(RangeError);
    expect(() => calibrate([], { splits: 0 })).toThrow(RangeError);
    expect(() => calibrate([], { half: 0 })).toThrow(RangeError);
  });

  it('writes snake_case JSON with its source', () => {
    const cal = calibrate(suite(2, 2, () => 'pass'), { half: 1, splits: 5 });
    const json = calibrationJson(cal, { resultFile: '/x/result.json', toolVersion: '9.9.9' }) as Record<string, any>;
    expect(json).toMatchObject({ schema_version: '1', tool: { name: 'skill-up', version: '9.9.9' }, result_file: '/x/result.json', splits: 5 });
    expect(json.engines[0]).toHaveProperty('false_differences.rate', 0);
    expect(json.engines[0]).toHaveProperty('noise_floor.mean_half_width');
    expect(json.engines[0].power.rows[0]).toHaveProperty('cases_needed');
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
  });
});

describe('calibrate: splitting', () => {
  const cases = groupOutcomes(suite(2, 5, (c, t) => (t <= c + 2 ? 'pass' : 'fail')));

  it('groups graded outcomes per case in trial order', () => {
    const shuffled = groupOutcomes([...suite(1, 4, (_, t) => (t === 4 ? 'fail' : 'pass'))].reverse());
    expect(shuffled[0]).toMatchObject({ caseId: 'case-0', outcomes: [true, true, true, false], trialNumbers: [1, 2, 3, 4] });
  });

  it('fixed split: trials 1..k against k+1..2k', () => {
    expect(fixedSplit(cases, 2)).toEqual([
      { caseId: 'case-0', a: [true, true], b: [false, false] },
      { caseId: 'case-1', a: [true, true], b: [true, false] },
    ]);
  });

  it('random split: equal halves of a permutation, odd outcome left out', () => {
    const r = seededRandom(1);
    for (let i = 0; i < 20; i++) {
      for (const [j, s] of randomSplit(cases, r).entries()) {
        expect(s.a).toHaveLength(2);
        expect(s.b).toHaveLength(2);
        const passes = [...s.a, ...s.b].filter(Boolean).length;
        const total = cases[j]!.outcomes.filter(Boolean).length;
        expect(passes === total || passes === total - 1).toBe(true);
      }
    }
    expect(randomSplit(groupOutcomes(suite(1, 1, () => 'pass')), r)).toEqual([]);
  });

  it('quantile: type 7 (linear interpolation)', () => {
    expect(quantile([], 0.5)).toBeNull();
    expect(quantile([3], 0.95)).toBe(3);
    expect(quantile([1, 2, 3, 4, 5], 0.5)).toBe(3);
    expect(quantile([5, 1, 4, 2, 3], 0.95)).toBeCloseTo(4.8);
    expect(quantile([0, 10], 0.25)).toBeCloseTo(2.5);
  });
});
