/**
 * Confidence intervals for a suite's pass rate and for differences of pass rates, built so
 * they stay honest when trials of one case are correlated (they are: a case is easy or hard).
 *
 * Every interval here is two-sided at `level` (default 0.95) and clamped to the range of
 * its quantity ([0, 1] for a rate, [−1, 1] for a difference).
 */
import { normalQuantile, tQuantile } from './distributions.js';
import type { Interval } from './summarise.js';

/** Wilson score interval for a proportion p̂ observed over an effective sample size `n` (real, > 0). */
export function wilsonInterval(p: number, n: number, z: number): Interval {
  if (!(n > 0)) return { low: 0, high: 1 };
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z / denom) * Math.sqrt(Math.max(0, (p * (1 - p)) / n + z2 / (4 * n * n)));
  return { low: p <= 0 ? 0 : Math.max(0, centre - half), high: p >= 1 ? 1 : Math.min(1, centre + half) };
}

/** One case's graded trials in one arm. */
export interface CaseCounts {
  passed: number;
  /** Graded trials (passed + failed), > 0. */
  graded: number;
}

/** A pass-rate interval that accounts for trials clustered in cases. */
export interface ClusteredInterval extends Interval {
  /** What the interval is, for labels: always `case-clustered Wilson`. */
  method: 'case-clustered Wilson';
  level: number;
  /** Cases the rate is averaged over. */
  cases: number;
  /** Graded trials over those cases. */
  trials: number;
  /** Effective number of independent trials: trials / designEffect. */
  effectiveTrials: number;
  /** Variance inflation from clustering, ≥ 1 (Kish's design effect). */
  designEffect: number;
  /** Observed intraclass correlation of trial outcomes, (designEffect − 1)/(m̄ − 1); null when m̄ = 1 or undefined. */
  icc: number | null;
}

/**
 * Case-clustered Wilson interval for a suite's pass rate p̄ = mean of the per-case rates
 * (each case weighs the same), as an estimate of the pass rate over cases like these.
 *
 * The variance of p̄ is estimated from the spread of the case rates, V = s²/n (s² the sample
 * variance of the n case rates: it contains both the between-case and the trial-to-trial
 * variance), floored at the binomial variance of the pooled trials p̄(1−p̄)/N (clustering never
 * makes trials more informative than independent ones). The design effect DEFF = p̄(1−p̄)/(N·V)
 * turns N trials into N/DEFF effective ones, and the Wilson score interval is taken at that
 * size, with the normal quantile replaced by Student's t with n − 1 degrees of freedom when the
 * between-case spread dominates (few clusters), N − 1 otherwise. When every case is at 0 % or
 * at 100 %, the spread cannot show how correlated trials are; the worst case (ICC = 1) is
 * taken and the interval is Wilson's over the n cases.
 *
 * Sources: L. Kish, Survey Sampling (1965), §5.4 (design effect); the design-effect-adjusted
 * Wilson interval of S. Korn & B. Graubard, "Confidence intervals for proportions with small
 * expected number of positive counts estimated from survey data", Survey Methodology 24 (1998)
 * 193–201 (effective sample size, t degrees of freedom); coverage ≥ 93 % at ICC 0.2–0.5 is
 * checked by seeded simulation in test/stats/calibration.test.ts.
 *
 * @returns null when no case has a graded trial.
 */
export function clusteredInterval(cases: CaseCounts[], level = 0.95): ClusteredInterval | null {
  const graded = cases.filter((c) => c.graded > 0);
  const n = graded.length;
  if (n === 0) return null;
  const rates = graded.map((c) => c.passed / c.graded);
  const N = graded.reduce((a, c) => a + c.graded, 0);
  const p = rates.reduce((a, b) => a + b, 0) / n;
  const floor = (p * (1 - p)) / N;
  const between = n >= 2 ? rates.reduce((a, r) => a + (r - p) ** 2, 0) / (n - 1) / n : 0;
  const m = N / n;
  const q = 1 - (1 - level) / 2;
  if (p <= 0 || p >= 1) {
    // Every case at 0 % (or 100 %): the data says nothing about how correlated a case's trials
    // are, so take the worst case (ICC = 1): the cases, not the trials, are the draws.
    return { ...wilsonInterval(p, n, normalQuantile(q)), method: 'case-clustered Wilson', level, cases: n, trials: N, effectiveTrials: n, designEffect: m, icc: null };
  }
  const v = Math.max(floor, between);
  const deff = v / floor;
  const nEff = N / deff;
  const df = between > floor ? n - 1 : N - 1;
  const z = df >= 1 ? tQuantile(q, df) : normalQuantile(q);
  return {
    ...wilsonInterval(p, nEff, z),
    method: 'case-clustered Wilson',
    level,
    cases: n,
    trials: N,
    effectiveTrials: nEff,
    designEffect: deff,
    icc: m > 1 && floor > 0 ? Math.min(1, Math.max(0, (deff - 1) / (m - 1))) : null,
  };
}

/**
 * Interval for a difference of two estimates θ₁ − θ₂ from each one's own interval, by the
 * method of variance estimates recovery (MOVER):
 *
 *   L = d − √((θ₁−l₁)² + (u₂−θ₂)² − 2r(θ₁−l₁)(u₂−θ₂))
 *   U = d + √((u₁−θ₁)² + (θ₂−l₂)² − 2r(u₁−θ₁)(θ₂−l₂))
 *
 * with r the correlation of the two estimates (0 when independent). Built on Wilson intervals
 * it is Newcombe's hybrid score interval (r = 0) and its paired form.
 *
 * Sources: G. Y. Zou & A. Donner, "Construction of confidence limits about effect measures: a
 * general approach", Statistics in Medicine 27 (2008) 1693–1702; R. G. Newcombe, "Interval
 * estimation for the difference between independent proportions", Statistics in Medicine 17
 * (1998) 873–890 (method 10).
 */
export function moverDifference(t1: number, i1: Interval, t2: number, i2: Interval, r = 0): Interval {
  const rr = Math.max(-1, Math.min(1, Number.isFinite(r) ? r : 0));
  const d = t1 - t2;
  const a = t1 - i1.low;
  const b = i2.high - t2;
  const c = i1.high - t1;
  const e = t2 - i2.low;
  const low = d - Math.sqrt(Math.max(0, a * a + b * b - 2 * rr * a * b));
  const high = d + Math.sqrt(Math.max(0, c * c + e * e - 2 * rr * c * e));
  return { low: Math.max(-1, low), high: Math.min(1, high) };
}

/** Pearson correlation of two equal-length samples; null when either has no spread. */
export function correlation(xs: number[], ys: number[]): number | null {
  const n = xs.length;
  if (n < 2 || ys.length !== n) return null;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : null;
}
