import { describe, expect, it } from 'vitest';
import {
  holm,
  minimumDecisiveCases,
  minimumPermutationP,
  normalQuantile,
  pairedPermutationTest,
  stratifiedWorseTest,
  tCdf,
  tQuantile,
  clusteredInterval,
  moverDifference,
  wilson,
  wilsonInterval,
} from '../../src/stats/index.js';
import { rng } from './simulate.js';

/** Brute force: every one of the 2^n sign patterns. */
function bruteForceP(d: number[]): number {
  const nz = d.filter((x) => Math.abs(x) > 1e-12);
  const t = Math.abs(nz.reduce((a, b) => a + b, 0));
  let hits = 0;
  for (let mask = 0; mask < 1 << nz.length; mask++) {
    let s = 0;
    nz.forEach((x, i) => (s += mask & (1 << i) ? x : -x));
    if (Math.abs(s) >= t - 1e-9) hits++;
  }
  return nz.length ? hits / (1 << nz.length) : 1;
}

describe('pairedPermutationTest', () => {
  it('equals full enumeration of the sign patterns on 300 random suites', () => {
    const r = rng(7);
    for (let k = 0; k < 300; k++) {
      const n = 1 + Math.floor(r() * 12);
      const pairs = Array.from({ length: n }, () => {
        const mw = 1 + Math.floor(r() * 5);
        const mo = 1 + Math.floor(r() * 5);
        return { with: { passed: Math.floor(r() * (mw + 1)), graded: mw }, without: { passed: Math.floor(r() * (mo + 1)), graded: mo } };
      });
      const d = pairs.map((p) => p.with.passed / p.with.graded - p.without.passed / p.without.graded);
      const got = pairedPermutationTest(pairs);
      expect(got.method).toBe('exact');
      expect(got.p).toBeCloseTo(bruteForceP(d), 10);
    }
  });
  it('gives 2/2^k for k identical wins and 1 for no difference', () => {
    const win = { with: { passed: 3, graded: 3 }, without: { passed: 0, graded: 3 } };
    expect(pairedPermutationTest(Array(6).fill(win)).p).toBeCloseTo(2 / 64, 15);
    expect(pairedPermutationTest(Array(5).fill(win)).p).toBeCloseTo(0.0625, 15);
    const tie = { with: { passed: 2, graded: 3 }, without: { passed: 2, graded: 3 } };
    expect(pairedPermutationTest([tie, tie]).p).toBe(1);
  });
  it('falls back to a seeded Monte Carlo for unusual trial counts, the same p every time', () => {
    const primes = [7, 11, 13, 17, 19, 23, 29, 31];
    const pairs = primes.map((m, i) => ({ with: { passed: m - (i % 2), graded: m }, without: { passed: Math.floor(m / 3), graded: primes[(i + 3) % 8]! } }));
    const a = pairedPermutationTest(pairs);
    const b = pairedPermutationTest(pairs);
    expect(a.method).toBe('monte_carlo');
    expect(a.p).toBe(b.p);
    const d = pairs.map((p) => p.with.passed / p.with.graded - p.without.passed / p.without.graded);
    expect(a.p).toBeCloseTo(bruteForceP(d), 2);
  });
  it('knows its resolution: 6 decisive cases at α = 0.05, 8 at 0.01', () => {
    expect(minimumPermutationP(5)).toBe(0.0625);
    expect(minimumDecisiveCases(0.05)).toBe(6);
    expect(minimumDecisiveCases(0.01)).toBe(8);
  });
});

describe('holm', () => {
  it('matches the step-down values of Holm (1979)', () => {
    const adj = holm([0.01, 0.04, 0.03, 0.005]);
    expect(adj[3]).toBeCloseTo(0.02, 12);
    expect(adj[0]).toBeCloseTo(0.03, 12);
    expect(adj[2]).toBeCloseTo(0.06, 12);
    expect(adj[1]).toBeCloseTo(0.06, 12); // monotone: max(0.06, 0.04)
    expect(holm([0.2])).toEqual([0.2]);
    expect(holm([0.9, 0.8])).toEqual([1, 1]);
    expect(holm([0.02, 0.04])).toEqual([0.04, 0.04]);
  });
});

describe('stratifiedWorseTest', () => {
  const c = (passed: number, graded: number) => ({ passed, graded });
  it('is Fisher exact for one case: 3/3 → 0/3 gives 1/20', () => {
    expect(stratifiedWorseTest([{ old: c(3, 3), new: c(0, 3) }])).toBeCloseTo(0.05, 12);
    expect(stratifiedWorseTest([{ old: c(5, 5), new: c(0, 5) }])).toBeCloseTo(1 / 252, 12);
    expect(stratifiedWorseTest([{ old: c(0, 3), new: c(3, 3) }])).toBe(1);
  });
  it('ignores cases that cannot move (all pass or all fail in both runs) and multiplies independent evidence', () => {
    const same = Array.from({ length: 19 }, () => ({ old: c(3, 3), new: c(3, 3) }));
    expect(stratifiedWorseTest([...same, { old: c(3, 3), new: c(0, 3) }])).toBeCloseTo(0.05, 12);
    expect(stratifiedWorseTest([...same, { old: c(3, 3), new: c(0, 3) }, { old: c(3, 3), new: c(0, 3) }])).toBeCloseTo(0.0025, 12);
    expect(stratifiedWorseTest(same)).toBe(1);
  });
  it('agrees with enumeration over two mixed strata', () => {
    // P(T ≤ t) by enumerating both hypergeometric draws.
    const choose = (n: number, k: number) => (k < 0 || k > n ? 0 : Array.from({ length: k }, (_, i) => (n - i) / (i + 1)).reduce((a, b) => a * b, 1));
    const strata = [
      { old: c(2, 3), new: c(1, 4) },
      { old: c(4, 5), new: c(2, 5) },
    ];
    let p = 0;
    const pmf = (s: (typeof strata)[number], x: number) => {
      const total = s.old.graded + s.new.graded;
      const passes = s.old.passed + s.new.passed;
      return (choose(passes, x) * choose(total - passes, s.new.graded - x)) / choose(total, s.new.graded);
    };
    for (let a = 0; a <= 4; a++) for (let b = 0; b <= 5; b++) if (a + b <= 3) p += pmf(strata[0]!, a) * pmf(strata[1]!, b);
    expect(stratifiedWorseTest(strata)).toBeCloseTo(p, 12);
  });
});

describe('distributions', () => {
  it('matches published quantiles', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 6);
    expect(normalQuantile(0.8)).toBeCloseTo(0.841621, 6);
    expect(tQuantile(0.975, 1)).toBeCloseTo(12.7062, 3);
    expect(tQuantile(0.975, 9)).toBeCloseTo(2.26216, 4);
    expect(tQuantile(0.975, 19)).toBeCloseTo(2.09302, 4);
    expect(tQuantile(0.8, 19)).toBeCloseTo(0.860951, 4);
    expect(tQuantile(0.025, 5)).toBeCloseTo(-2.57058, 4);
    expect(tCdf(0, 7)).toBeCloseTo(0.5, 12);
  });
});

describe('intervals', () => {
  it('clustered interval: trials of a case are not independent evidence', () => {
    // 10 cases, each always passing or always failing (ICC 1): about 10 effective trials, not 100
    // (9 with the unbiased sample variance of the case rates: s² = 10·0.25/9).
    const split = [...Array(5).fill({ passed: 10, graded: 10 }), ...Array(5).fill({ passed: 0, graded: 10 })];
    const iv = clusteredInterval(split)!;
    expect(iv.designEffect).toBeCloseTo(100 / 9, 6);
    expect(iv.effectiveTrials).toBeCloseTo(9, 6);
    expect(iv.icc).toBe(1);
    expect(iv.high - iv.low).toBeGreaterThan(wilson(50, 100).high - wilson(50, 100).low);
    // Homogeneous interior cases (all at 2/3): no inflation beyond the binomial floor.
    const homogeneous = clusteredInterval(Array(20).fill({ passed: 2, graded: 3 }))!;
    expect(homogeneous.designEffect).toBe(1);
    expect(homogeneous.effectiveTrials).toBe(60);
    // Every case at 100 %: nothing shows how correlated trials are, so the cases are the draws
    // (Wilson of 20/20 = [0.839, 1]), not the 60 trials (which would claim [0.94, 1]).
    const perfect = clusteredInterval(Array(20).fill({ passed: 3, graded: 3 }))!;
    expect(perfect).toMatchObject({ effectiveTrials: 20, designEffect: 3, high: 1 });
    expect(perfect.low).toBeCloseTo(wilson(20, 20).low, 7);
    expect(clusteredInterval([])).toBeNull();
  });
  it('MOVER with r = 0 is Newcombe’s hybrid score interval (his example: 56/70 vs 48/80)', () => {
    const d = moverDifference(56 / 70, wilsonInterval(56 / 70, 70, 1.959964), 48 / 80, wilsonInterval(48 / 80, 80, 1.959964));
    expect(d.low).toBeCloseTo(0.0524, 4);
    expect(d.high).toBeCloseTo(0.3339, 4);
  });
});
