/**
 * The statistical claims of the decision layer, proven by seeded simulation through the
 * library (fast; `npm run bench` repeats them through the real CLI):
 * - A/A: the verdict is significant in ≤ 5 % of ≥ 2,000 suites at 20×3 and 10×5;
 * - power: ≥ 85 % for +30 points at 20×3;
 * - the pass-rate interval covers the true rate ≥ 93 % of the time when cases differ (ICC 0.2–0.5);
 * - two identical runs' gates contradict each other (PASS vs FAIL) in ≤ 1 % of pairs.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/gate/index.js';
import { clusteredInterval, summarise } from '../../src/stats/index.js';
import { caseProbability, rng, suite } from './simulate.js';

const SUITES = 2000;

describe('A/A: the skill does nothing', () => {
  for (const [cases, trials] of [
    [20, 3],
    [10, 5],
  ] as const) {
    for (const [mean, icc] of [
      [0.5, 0],
      [0.5, 0.3],
      [0.8, 0.3],
    ] as const) {
      it(`is significant in ≤ 5% of ${SUITES} suites of ${cases}×${trials} (mean ${mean}, ICC ${icc})`, () => {
        const r = rng(1000 + cases * 7 + trials + mean * 100 + icc * 10);
        let significant = 0;
        for (let i = 0; i < SUITES; i++) if (summarise(suite(r, { cases, trials, mean, icc })).uplift[0]!.verdict !== 'inconclusive') significant++;
        expect(significant / SUITES).toBeLessThanOrEqual(0.05);
      });
    }
  }
  it('almost never lets an A/A suite pass a +10-point uplift gate (a > 3σ event), and its verdicts rarely flip', () => {
    const r = rng(42);
    let passes = 0;
    let flips = 0;
    for (let i = 0; i < 1000; i++) {
      const run = () => decide(suite(r, { cases: 20, trials: 3, mean: 0.5, icc: 0.2 }), { alpha: 0.05, errorsAsFailures: false, maxErrorRate: 0, minUplift: 0.1 });
      const a = run();
      const b = run();
      if (a.gates.some((g) => g.name === 'min_uplift' && g.state === 'pass')) passes++;
      if (a.stats.uplift[0]!.verdict !== b.stats.uplift[0]!.verdict) flips++;
    }
    expect(passes / 1000).toBeLessThanOrEqual(0.003);
    expect(flips / 1000).toBeLessThanOrEqual(0.1);
  });
});

describe('power', () => {
  it('detects a +30-point uplift (0.5 → 0.8) at 20×3 in ≥ 85% of suites', () => {
    const r = rng(3);
    let improves = 0;
    for (let i = 0; i < SUITES; i++) {
      if (summarise(suite(r, { cases: 20, trials: 3, mean: 0.5, icc: 0, withP: (p) => Math.min(1, p + 0.3) })).uplift[0]!.verdict === 'improves') improves++;
    }
    expect(improves / SUITES).toBeGreaterThanOrEqual(0.85);
  });
  it('detects a +30-point uplift when cases differ (ICC 0.2, mean 0.4) in ≥ 85% of suites', () => {
    const r = rng(4);
    let improves = 0;
    for (let i = 0; i < SUITES; i++) {
      if (summarise(suite(r, { cases: 20, trials: 3, mean: 0.4, icc: 0.2, withP: (p) => Math.min(1, p + 0.3) })).uplift[0]!.verdict === 'improves') improves++;
    }
    expect(improves / SUITES).toBeGreaterThanOrEqual(0.85);
  });
});

describe('interval coverage when cases differ', () => {
  for (const [cases, trials] of [
    [20, 3],
    [10, 5],
    [20, 10],
  ] as const) {
    for (const icc of [0.2, 0.5]) {
      for (const mean of [0.3, 0.5, 0.8]) {
        it(`covers the true pass rate ≥ 93% at ${cases}×${trials}, ICC ${icc}, mean ${mean}`, () => {
          const r = rng(cases * 1000 + trials * 10 + icc * 100 + mean * 7);
          let covered = 0;
          for (let i = 0; i < SUITES; i++) {
            const counts = Array.from({ length: cases }, () => {
              const p = caseProbability(r, mean, icc);
              let k = 0;
              for (let t = 0; t < trials; t++) if (r() < p) k++;
              return { passed: k, graded: trials };
            });
            const iv = clusteredInterval(counts)!;
            if (iv.low <= mean && mean <= iv.high) covered++;
          }
          expect(covered / SUITES).toBeGreaterThanOrEqual(0.93);
        });
      }
    }
  }
});

describe('interval coverage when every case is deterministic (ICC = 1: a case always passes or always fails)', () => {
  for (const [cases, trials] of [
    [6, 3],
    [3, 10],
    [20, 3],
  ] as const) {
    for (const mean of [0.5, 0.7, 0.9]) {
      it(`covers the true pass rate ≥ 93% at ${cases}×${trials}, mean ${mean}`, () => {
        const r = rng(cases * 31 + trials + mean * 1000);
        let covered = 0;
        for (let i = 0; i < SUITES; i++) {
          const counts = Array.from({ length: cases }, () => ({ passed: r() < mean ? trials : 0, graded: trials }));
          const iv = clusteredInterval(counts)!;
          if (iv.low <= mean && mean <= iv.high) covered++;
        }
        expect(covered / SUITES).toBeGreaterThanOrEqual(0.93);
      });
    }
  }
  it('an A/A uplift interval of deterministic cases (0.9 vs 0.9, 6×10) covers 0 in ≥ 93% of suites', () => {
    const r = rng(77);
    let covered = 0;
    for (let i = 0; i < SUITES; i++) {
      const rs = Array.from({ length: 6 }, (_, c) => {
        const w: 'pass' | 'fail' = r() < 0.9 ? 'pass' : 'fail';
        const wo: 'pass' | 'fail' = r() < 0.9 ? 'pass' : 'fail';
        return [...Array.from({ length: 10 }, (_, t) => ({ caseId: `c${c}`, engine: 'e', variant: 'with_skill' as const, trial: t + 1, status: w, durationMs: 1, tokens: 1 })), ...Array.from({ length: 10 }, (_, t) => ({ caseId: `c${c}`, engine: 'e', variant: 'without_skill' as const, trial: t + 1, status: wo, durationMs: 1, tokens: 1 }))];
      }).flat();
      const iv = summarise(rs).uplift[0]!.interval!;
      if (iv.low <= 0 && 0 <= iv.high) covered++;
    }
    expect(covered / SUITES).toBeGreaterThanOrEqual(0.93);
  });
});

describe('gates do not contradict themselves on identical runs', () => {
  const scenarios = [
    { name: 'min_pass_rate 0.8 near the truth (0.8, ICC 0.3)', mean: 0.8, icc: 0.3, withP: undefined, gate: { minPassRate: 0.8 } },
    { name: 'min_pass_rate 0.7 on a near-perfect suite', mean: 0.95, icc: 0.5, withP: undefined, gate: { minPassRate: 0.7 } },
    { name: 'min_uplift +20 on a real +20 uplift', mean: 0.4, icc: 0.2, withP: (p: number) => Math.min(1, p + 0.2), gate: { minUplift: 0.2 } },
    { name: 'min_uplift 0 on an A/A suite', mean: 0.5, icc: 0.2, withP: undefined, gate: { minUplift: 0 } },
  ];
  for (const s of scenarios) {
    it(`${s.name}: PASS on one run and FAIL on an identical one in ≤ 1% of 1000 pairs`, () => {
      const r = rng(99);
      let contradictions = 0;
      for (let i = 0; i < 1000; i++) {
        const states = [0, 1].map(
          () =>
            decide(suite(r, { cases: 20, trials: 3, mean: s.mean, icc: s.icc, withP: s.withP }), { alpha: 0.05, errorsAsFailures: false, maxErrorRate: 0, ...s.gate }).gates.find(
              (g) => g.name !== 'max_error_rate',
            )!.state,
        );
        if (states.includes('pass') && states.includes('fail')) contradictions++;
      }
      expect(contradictions / 1000).toBeLessThanOrEqual(0.01);
    });
  }
});

describe('the power model (power.ts) against simulation', () => {
  it('an uplift of the predicted detectable size is detected with about 80% power', async () => {
    const { detectableUplift, estimateNoise } = await import('../../src/stats/index.js');
    const noise = { trialVariance: 0.5, caseVariance: 0, source: 'assumed' as const }; // p = 0.5 in both arms
    for (const [cases, trials] of [
      [20, 3],
      [30, 5],
    ] as const) {
      const mde = detectableUplift(cases, trials, noise)!;
      const r = rng(cases + trials);
      let improves = 0;
      // Keep the trial variance at 0.5 by moving both arms symmetrically around 0.5.
      for (let i = 0; i < SUITES; i++) {
        if (summarise(suite(r, { cases, trials, mean: 0.5 - mde / 2, icc: 0, withP: (p) => p + mde })).uplift[0]!.verdict === 'improves') improves++;
      }
      expect(improves / SUITES).toBeGreaterThan(0.72);
      expect(improves / SUITES).toBeLessThan(0.9);
    }
    // The estimate recovers the trial variance of a coin-flip suite.
    const r = rng(5);
    const counts = Array.from({ length: 400 }, () => {
      const k = () => [0, 1, 2, 3, 4].filter(() => r() < 0.5).length;
      return { a: { passed: k(), graded: 5 }, b: { passed: k(), graded: 5 } };
    });
    const est = estimateNoise(counts)!;
    expect(est.trialVariance).toBeCloseTo(0.5, 1);
    expect(est.caseVariance).toBeLessThan(0.02);
  });
});
