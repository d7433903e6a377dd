/**
 * `casesNeeded` finds the fewest cases by binary search (src/stats/power.ts): the same answer
 * as scanning every case count, over a grid of noise models, levels, powers, uplifts and trials.
 */
import { describe, expect, it } from 'vitest';
import { casesNeeded, detectableUplift, type NoiseModel } from '../../src/stats/power.js';

/** The scan casesNeeded did before: every count from 2 to 200, then steps of 2 %. */
function scan(uplift: number, trials: number, noise: NoiseModel, alpha: number, power: number): number | null {
  for (let n = 2; n <= 10_000; n = n < 200 ? n + 1 : Math.ceil(n * 1.02)) {
    const d = detectableUplift(n, trials, noise, alpha, power);
    if (d !== null && d <= uplift + 1e-12) return n;
  }
  return null;
}

describe('casesNeeded', () => {
  it('answers as a scan over every case count does', () => {
    let answered = 0;
    let none = 0;
    for (const noise of [
      { caseVariance: 0.04, trialVariance: 0.5, source: 'assumed' },
      { caseVariance: 0, trialVariance: 0.25, source: 'observed' },
      { caseVariance: 0.2, trialVariance: 0, source: 'observed' },
      { caseVariance: 0.01, trialVariance: 0.05, source: 'observed' },
    ] satisfies NoiseModel[]) {
      for (const alpha of [0.01, 0.05, 0.2]) {
        for (const power of [0.5, 0.8, 0.95]) {
          for (const uplift of [0.005, 0.02, 0.1, 0.2, 0.3, 0.6, 1]) {
            for (const trials of [1, 3, 10]) {
              const want = scan(uplift, trials, noise, alpha, power);
              expect(casesNeeded(uplift, trials, noise, alpha, power), JSON.stringify({ noise, alpha, power, uplift, trials })).toBe(want);
              if (want === null) none++;
              else answered++;
            }
          }
        }
      }
    }
    // Both outcomes (a count, and "more than 10,000") are covered.
    expect(answered).toBeGreaterThan(100);
    expect(none).toBeGreaterThan(0);
  });
});
