/**
 * Sizing a suite: the smallest uplift a suite of n cases × m trials can detect with the
 * paired permutation test, and how many cases it takes to detect a given one.
 *
 * Model: the per-case difference dᵢ = with − without has variance σ²(m) = τ² + w/m, where
 * τ² is the between-case variance of the true differences and w the trial-to-trial variance
 * of one trial in each arm (p(1−p) summed over both arms, averaged over cases: the suite's
 * flakiness). The test on the mean of n differences detects δ with power 1 − β when
 *
 *   δ ≥ (t_{n−1, 1−α/2} + t_{n−1, 1−β}) · σ(m) / √n,
 *
 * and never below the test's resolution: at least k = minimumDecisiveCases(α) cases must
 * differ, by at least one trial in m each, so δ ≥ k / (n·m); below k cases nothing is
 * detectable at all. Source: the normal-approximation sample size for a paired comparison
 * (J. Cohen, Statistical Power Analysis for the Behavioral Sciences, 2nd ed. (1988), ch. 2),
 * with t quantiles for small n; checked against seeded simulation in test/stats/power.test.ts.
 */
import { tQuantile } from './distributions.js';
import type { CaseCounts } from './intervals.js';
import { minimumDecisiveCases } from './tests.js';

/** The noise a suite's comparison has to see through. Variances of pass rates (fractions²). */
export interface NoiseModel {
  /** w: variance of one trial's outcome, summed over both arms, averaged over cases. */
  trialVariance: number;
  /** τ²: between-case variance of the true per-case differences. */
  caseVariance: number;
  /** Where the figures come from: `observed` (this run), or `assumed` (no run yet). */
  source: 'observed' | 'assumed';
}

/**
 * The assumption used before any run: every trial a coin flip (p = 0.5 in both arms, w = 0.5)
 * and true per-case uplifts spread with SD 0.2 (τ² = 0.04). Pessimistic on purpose: a real
 * suite is usually less flaky, and `calibrate` measures it.
 */
export const ASSUMED_NOISE: NoiseModel = { trialVariance: 0.5, caseVariance: 0.04, source: 'assumed' };

/** Unbiased per-trial Bernoulli variance of one arm of one case (p(1−p) when it has one trial). */
function trialVar(c: CaseCounts): number {
  const p = c.passed / c.graded;
  return c.graded > 1 ? (p * (1 - p) * c.graded) / (c.graded - 1) : p * (1 - p);
}

/**
 * Estimates the noise model from paired per-case counts (with/without, or two A/A runs):
 * w = mean of the two arms' per-trial variances, τ² = max(0, s²_d − mean of Var(dᵢ | case)).
 * @returns null for no pairs.
 */
export function estimateNoise(pairs: { a: CaseCounts; b: CaseCounts }[]): NoiseModel | null {
  const ps = pairs.filter((p) => p.a.graded > 0 && p.b.graded > 0);
  if (ps.length === 0) return null;
  const n = ps.length;
  const w = ps.reduce((s, p) => s + trialVar(p.a) + trialVar(p.b), 0) / n;
  const within = ps.reduce((s, p) => s + trialVar(p.a) / p.a.graded + trialVar(p.b) / p.b.graded, 0) / n;
  const d = ps.map((p) => p.a.passed / p.a.graded - p.b.passed / p.b.graded);
  const mean = d.reduce((a, b) => a + b, 0) / n;
  const sd2 = n > 1 ? d.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1) : 0;
  return { trialVariance: w, caseVariance: Math.max(0, sd2 - within), source: 'observed' };
}

/**
 * Smallest uplift (a fraction: 0.2 = 20 points) detectable with probability `power` at
 * two-sided level `alpha` by a suite of `cases` × `trials`.
 * @returns null when the suite has too few cases for any result to be significant.
 */
export function detectableUplift(cases: number, trials: number, noise: NoiseModel, alpha = 0.05, power = 0.8): number | null {
  const k = minimumDecisiveCases(alpha);
  if (cases < Math.max(2, k)) return null;
  const sigma = Math.sqrt(noise.caseVariance + noise.trialVariance / trials);
  const z = tQuantile(1 - alpha / 2, cases - 1) + tQuantile(power, cases - 1);
  return Math.min(1, Math.max((z * sigma) / Math.sqrt(cases), k / (cases * trials)));
}

/** The case counts {@link casesNeeded} answers in: every count from 2 to 200, then steps of 2 %, up to 10,000. */
const CASE_COUNTS: readonly number[] = (() => {
  const out: number[] = [];
  for (let n = 2; n <= 10_000; n = n < 200 ? n + 1 : Math.ceil(n * 1.02)) out.push(n);
  return out;
})();

/**
 * Fewest cases (≤ 10,000, from {@link CASE_COUNTS}) at `trials` per case and arm to detect
 * `uplift`; null beyond that. A binary search: {@link detectableUplift} never grows with the
 * case count (t quantiles fall with the degrees of freedom, both terms shrink with n; null
 * only below the decisive minimum), so the first count that detects `uplift` is the same one
 * a scan finds, in 10 evaluations instead of hundreds (a dry run prints 12 such cells).
 */
export function casesNeeded(uplift: number, trials: number, noise: NoiseModel, alpha = 0.05, power = 0.8): number | null {
  const detects = (n: number) => {
    const d = detectableUplift(n, trials, noise, alpha, power);
    return d !== null && d <= uplift + 1e-12;
  };
  let lo = 0;
  let hi = CASE_COUNTS.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (detects(CASE_COUNTS[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo < CASE_COUNTS.length ? CASE_COUNTS[lo]! : null;
}

/** One row of a power table: the uplift to detect, and per trial count the cases needed. */
export interface PowerRow {
  /** Uplift as a fraction. */
  uplift: number;
  /** trials → cases needed (null: more than 10,000). */
  casesNeeded: Record<number, number | null>;
}

/** Uplifts and trial counts a power table covers by default. */
export const POWER_UPLIFTS = [0.1, 0.2, 0.3];
export const POWER_TRIALS = [1, 3, 5, 10];

/** The power table: cases × trials needed to detect +10/+20/+30 points at 80 % power. */
export function powerTable(noise: NoiseModel, alpha = 0.05, power = 0.8, uplifts = POWER_UPLIFTS, trials = POWER_TRIALS): PowerRow[] {
  return uplifts.map((u) => ({ uplift: u, casesNeeded: Object.fromEntries(trials.map((m) => [m, casesNeeded(u, m, noise, alpha, power)])) }));
}
