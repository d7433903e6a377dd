import { describe, expect, it } from 'vitest';
import { passAtK, passHatK, signTest, wilson } from '../../src/stats/index.js';

/** Exact C(n, k) as a BigInt, for checking the product forms. */
function binom(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let r = 1n;
  for (let i = 0; i < k; i++) r = (r * BigInt(n - i)) / BigInt(i + 1);
  return r;
}
/** a / b for big integers, as a float with ~15 significant digits. */
function ratio(a: bigint, b: bigint): number {
  const scale = 10n ** 18n;
  return Number((a * scale) / b) / 1e18;
}

describe('wilson', () => {
  it('matches published values', () => {
    const w = wilson(8, 10);
    expect(w.low).toBeCloseTo(0.4902, 4);
    expect(w.high).toBeCloseTo(0.9433, 4);
    const half = wilson(5, 10);
    expect(half.low).toBeCloseTo(0.2366, 4);
    expect(half.high).toBeCloseTo(0.7634, 4);
  });
  it('is clamped at the boundaries and never degenerate', () => {
    const none = wilson(0, 10);
    expect(none.low).toBe(0);
    expect(none.high).toBeCloseTo(0.2775, 4);
    const all = wilson(10, 10);
    expect(all.low).toBeCloseTo(0.7225, 4);
    expect(all.high).toBe(1);
  });
  it('returns {0, 1} for n = 0', () => {
    expect(wilson(0, 0)).toEqual({ low: 0, high: 1 });
  });
  it('narrows with a smaller z', () => {
    const w = wilson(8, 10, 1);
    expect(w.low).toBeGreaterThan(0.4902);
    expect(w.high).toBeLessThan(0.9433);
  });
  it('rejects impossible counts', () => {
    expect(() => wilson(11, 10)).toThrow(RangeError);
    expect(() => wilson(-1, 10)).toThrow(RangeError);
    expect(() => wilson(1.5, 10)).toThrow(RangeError);
    expect(() => wilson(1, 10, 0)).toThrow(RangeError);
  });
});

describe('passAtK', () => {
  it('gives exact small values', () => {
    expect(passAtK(10, 3, 1)).toBeCloseTo(0.3, 12);
    expect(passAtK(5, 1, 5)).toBe(1);
    expect(passAtK(5, 0, 3)).toBe(0);
    expect(passAtK(10, 3, 2)).toBeCloseTo(1 - 21 / 45, 12);
    expect(passAtK(4, 2, 2)).toBeCloseTo(5 / 6, 12);
    expect(passAtK(1, 1, 1)).toBe(1);
  });
  it('is stable for large n (agrees with exact binomials)', () => {
    const v = passAtK(1000, 500, 100);
    const exact = 1 - ratio(binom(500, 100), binom(1000, 100));
    expect(Number.isFinite(v)).toBe(true);
    expect(v).toBeCloseTo(exact, 12);
    const w = passAtK(200, 3, 50);
    expect(w).toBeCloseTo(1 - ratio(binom(197, 50), binom(200, 50)), 12);
  });
  it('rejects invalid arguments', () => {
    expect(() => passAtK(3, 4, 1)).toThrow(RangeError);
    expect(() => passAtK(3, 1, 0)).toThrow(RangeError);
    expect(() => passAtK(3, 1, 4)).toThrow(RangeError);
  });
});

describe('passHatK', () => {
  it('gives exact small values', () => {
    expect(passHatK(5, 5, 5)).toBe(1);
    expect(passHatK(5, 4, 5)).toBe(0);
    expect(passHatK(10, 3, 1)).toBeCloseTo(0.3, 12);
    expect(passHatK(10, 7, 2)).toBeCloseTo(21 / 45, 12);
    expect(passHatK(4, 3, 2)).toBeCloseTo(0.5, 12);
  });
  it('differs from the biased p^k for small n', () => {
    // p̂ = 0.75, p̂² = 0.5625, but the unbiased estimate is C(3,2)/C(4,2) = 0.5
    expect(passHatK(4, 3, 2)).not.toBeCloseTo(0.5625, 3);
  });
  it('is stable for large n', () => {
    expect(passHatK(1000, 900, 100)).toBeCloseTo(ratio(binom(900, 100), binom(1000, 100)), 12);
  });
  it('rejects invalid arguments', () => {
    expect(() => passHatK(2, 3, 1)).toThrow(RangeError);
    expect(() => passHatK(2, 1, 3)).toThrow(RangeError);
  });
});

describe('signTest', () => {
  it('gives exact two-sided p-values', () => {
    expect(signTest(6, 0)).toBeCloseTo(0.03125, 12);
    expect(signTest(0, 6)).toBeCloseTo(0.03125, 12);
    expect(signTest(5, 0)).toBeCloseTo(0.0625, 12);
    expect(signTest(8, 2)).toBeCloseTo(0.109375, 12);
    expect(signTest(9, 1)).toBeCloseTo(0.021484375, 12);
  });
  it('is 1 for balanced or empty votes', () => {
    expect(signTest(3, 3)).toBe(1);
    expect(signTest(0, 0)).toBe(1);
    expect(signTest(5, 4)).toBe(1);
  });
  it('does not overflow for many votes', () => {
    const p = signTest(600, 400);
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(1e-9);
    expect(signTest(5000, 5000)).toBe(1);
  });
  it('agrees with exact arithmetic beyond the direct-sum range', () => {
    const m = 1200;
    let tail = 0n;
    for (let i = 0; i <= 560; i++) tail += binom(m, i);
    const exact = 2 * ratio(tail, 2n ** BigInt(m));
    expect(signTest(640, 560) / exact).toBeCloseTo(1, 9);
  });
  it('rejects invalid counts', () => {
    expect(() => signTest(-1, 2)).toThrow(RangeError);
    expect(() => signTest(1.5, 2)).toThrow(RangeError);
  });
});
