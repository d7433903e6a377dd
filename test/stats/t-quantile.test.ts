/**
 * tQuantile (src/stats/distributions.ts) is remembered and skips most tCdf evaluations of its
 * bisection; it must still give the number the plain bisection gave, bit for bit, over a grid
 * of levels and degrees of freedom (the power table's, intervals', tails and fractions).
 */
import { describe, expect, it } from 'vitest';
import { bisectTQuantile, normalQuantile, tCdf, tQuantile } from '../../src/stats/distributions.js';

/** tQuantile as it was before the shortcut: bisection on tCdf, every point evaluated. */
function plain(p: number, df: number): number {
  if (df > 1e6) return normalQuantile(p);
  if (p < 0.5) return -plain(1 - p, df);
  let lo = 0;
  let hi = 1;
  while (tCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-10; i++) {
    const mid = (lo + hi) / 2;
    if (tCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

const PS = [0.5, 0.5000001, 0.51, 0.6, 0.75, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9999, 0.99999, 0.05, 0.2, 0.025, 1e-6];
const DFS = (() => {
  const out = [0.5, 1, 1.5, 2, 2.5, 3, 7.25, 1e6, 2e6];
  for (let n = 1; n <= 400; n++) out.push(n);
  for (let n = 400; n <= 10_000; n = Math.ceil(n * 1.02)) out.push(n - 1);
  return out;
})();

describe('tQuantile', () => {
  it('equals the plain bisection bit for bit', () => {
    let compared = 0;
    const differ: string[] = [];
    for (const p of PS) {
      for (const df of DFS) {
        const want = plain(p, df);
        if (!Object.is(tQuantile(p, df), want)) differ.push(`p=${p} df=${df}: ${tQuantile(p, df)} vs ${want}`);
        // Remembered: asked again, the same number.
        if (!Object.is(tQuantile(p, df), want)) differ.push(`again p=${p} df=${df}`);
        compared++;
      }
    }
    expect(differ).toEqual([]);
    expect(compared).toBeGreaterThan(8000);
  });

  it('is the plain bisection without a bracket, and gives the published values', () => {
    expect(bisectTQuantile(0.975, 10)).toBe(plain(0.975, 10));
    expect(Object.is(bisectTQuantile(0.8, 3.5), plain(0.8, 3.5))).toBe(true);
    expect(tQuantile(0.975, 1)).toBeCloseTo(12.7062, 3);
    expect(tQuantile(0.975, 30)).toBeCloseTo(2.0423, 3);
  });

  it('still refuses bad arguments', () => {
    expect(() => tQuantile(0, 3)).toThrow(RangeError);
    expect(() => tQuantile(1, 3)).toThrow(RangeError);
    expect(() => tQuantile(0.5, 0)).toThrow(RangeError);
    expect(() => tQuantile(Number.NaN, 3)).toThrow(RangeError);
  });
});
