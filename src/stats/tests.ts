/**
 * Hypothesis tests of the decision layer: the paired sign-flip permutation test over cases
 * (with/without verdict, compare), Holm's step-down correction (several engines), and the
 * exact stratified test that a run got worse than a previous one (no-regression gate).
 * Deterministic: the same input always gives the same p-value.
 */
import { seededRandom } from './distributions.js';
import type { CaseCounts } from './intervals.js';

/** A p-value and how it was computed. */
export interface TestResult {
  p: number;
  /** `exact`: full enumeration of the null distribution; `monte_carlo`: seeded resampling. */
  method: 'exact' | 'monte_carlo';
  /** Resamples drawn (monte_carlo only). */
  resamples?: number;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
const lcm = (a: number, b: number) => (a / gcd(a, b)) * b;

/** Fixed seed and size of the Monte Carlo fallback, so identical inputs give identical p-values. */
export const MONTE_CARLO_SEED = 0x5eed;
export const MONTE_CARLO_RESAMPLES = 200_000;

/**
 * Exact two-sided paired permutation (sign-flip) test of H₀ "the skill makes no difference"
 * over cases, on each case's pass-rate difference dᵢ = with − without:
 *
 *   T = Σ dᵢ,  p = P(|Σ sᵢ dᵢ| ≥ |T|) with sᵢ = ±1 independent and equally likely.
 *
 * Under H₀ the two arms of a case are exchangeable, so every sign pattern is equally likely;
 * the test is exact at any number of cases (it conditions on the observed |dᵢ|, unlike a t-test
 * it assumes no distribution, and unlike the sign test it weighs 3/3-vs-0/3 above 1/3-vs-0/3).
 * The differences are rationals with the trial counts as denominators; scaled to integers by
 * their least common multiple, the null distribution of T is built exactly by convolution
 * (O(cases × range)). When that range would exceed 4·10⁶ (unusual trial counts), a Monte Carlo
 * estimate with a fixed seed is used instead, p = (1 + #{|T*| ≥ |T|}) / (1 + B).
 *
 * Sources: R. A. Fisher, The Design of Experiments (1935), §21 (the randomisation test for
 * paired data); E. J. G. Pitman, "Significance tests which may be applied to samples from any
 * populations", JRSS Suppl. 4 (1937) 119–130; B. Phipson & G. K. Smyth, "Permutation p-values
 * should never be zero", Stat. Appl. Genet. Mol. Biol. 9 (2010) art. 39 (the Monte Carlo form).
 *
 * @param pairs per case, the graded counts of both arms (graded > 0 in both).
 * @returns p = 1 when every difference is 0.
 */
export function pairedPermutationTest(pairs: { with: CaseCounts; without: CaseCounts }[]): TestResult {
  let scale = 1;
  for (const p of pairs) scale = lcm(lcm(scale, p.with.graded), p.without.graded);
  const exact = scale <= 1e6;
  const values = pairs
    .map((p) => (exact ? Math.round((p.with.passed * scale) / p.with.graded - (p.without.passed * scale) / p.without.graded) : p.with.passed / p.with.graded - p.without.passed / p.without.graded))
    .filter((v) => v !== 0);
  if (values.length === 0) return { p: 1, method: 'exact' };
  const observed = Math.abs(values.reduce((a, b) => a + b, 0));
  const range = exact ? values.reduce((a, b) => a + Math.abs(b), 0) : Infinity;
  if (range <= 4e6) {
    // dist[s + range] = P(Σ sᵢ|dᵢ| = s) over the cases so far.
    let dist = new Float64Array(2 * range + 1);
    dist[range] = 1;
    let reach = 0;
    for (const v of values) {
      const a = Math.abs(v);
      const next = new Float64Array(2 * range + 1);
      for (let s = -reach; s <= reach; s++) {
        const q = dist[s + range]!;
        if (q === 0) continue;
        next[s + a + range]! += q / 2;
        next[s - a + range]! += q / 2;
      }
      dist = next;
      reach += a;
    }
    let p = 0;
    for (let s = -range; s <= range; s++) if (Math.abs(s) >= observed) p += dist[s + range]!;
    return { p: Math.min(1, p), method: 'exact' };
  }
  const rnd = seededRandom(MONTE_CARLO_SEED);
  let hits = 0;
  const tol = 1e-12 * values.reduce((a, b) => a + Math.abs(b), 0);
  for (let b = 0; b < MONTE_CARLO_RESAMPLES; b++) {
    let s = 0;
    for (const v of values) s += rnd() < 0.5 ? v : -v;
    if (Math.abs(s) >= observed - tol) hits++;
  }
  return { p: (1 + hits) / (1 + MONTE_CARLO_RESAMPLES), method: 'monte_carlo', resamples: MONTE_CARLO_RESAMPLES };
}

/**
 * The smallest two-sided p-value the sign-flip test can reach when `decisive` cases differ:
 * 2 · 2^−decisive (all signs as observed, or all reversed). Five decisive cases give 0.0625,
 * so no five-case sweep is significant at α = 0.05.
 */
export function minimumPermutationP(decisive: number): number {
  return Math.min(1, 2 ** (1 - decisive));
}

/** Fewest decisive cases for which the sign-flip test can reach p ≤ alpha (6 at α = 0.05). */
export function minimumDecisiveCases(alpha: number): number {
  let k = 1;
  while (minimumPermutationP(k) > alpha && k < 64) k++;
  return k;
}

/**
 * Holm's step-down adjusted p-values (family-wise error ≤ α for any dependence):
 * p̃₍ᵢ₎ = max_{j ≤ i} min(1, (m − j + 1) · p₍ⱼ₎) over the ascending order; returned in input order.
 * Source: S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist.
 * 6 (1979) 65–70.
 */
export function holm(ps: number[]): number[] {
  const m = ps.length;
  const order = ps.map((p, i) => [p, i] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out = new Array<number>(m);
  let running = 0;
  order.forEach(([p, i], j) => {
    running = Math.max(running, Math.min(1, (m - j) * p));
    out[i] = running;
  });
  return out;
}

function logChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 1; i <= k; i++) s += Math.log(n - k + i) - Math.log(i);
  return s;
}

/** Hypergeometric pmf of X = passes among the `drawn` new trials, given `passes` over `total` trials. */
function hypergeometric(total: number, passes: number, drawn: number): { min: number; pmf: number[] } {
  const min = Math.max(0, drawn - (total - passes));
  const max = Math.min(drawn, passes);
  const pmf: number[] = [];
  const denom = logChoose(total, drawn);
  for (let x = min; x <= max; x++) pmf.push(Math.exp(logChoose(passes, x) + logChoose(total - passes, drawn - x) - denom));
  return { min, pmf };
}

/**
 * Exact stratified one-sided test that the new run passes less often than the old one, with
 * cases as fixed strata (the same suite run twice):
 *
 *   T = Σᵢ passes_newᵢ,  p = P(T ≤ t_obs | every case's total passes),
 *
 * each case's new passes hypergeometric under H₀ "each case passes as often as before", the
 * strata independent (the exact conditional test of a common odds ratio of 1; with one case it
 * is Fisher's exact test). One broken case of three trials (3/3 → 0/3) gives p = 1/20.
 * Source: D. R. Cox, The Analysis of Binary Data (1970), §4.3; N. Mantel & W. Haenszel, JNCI 22
 * (1959) 719–748; C. R. Mehta, N. R. Patel & R. Gray, JASA 80 (1985) 969–973 (the exact form).
 */
export function stratifiedWorseTest(strata: { old: CaseCounts; new: CaseCounts }[]): number {
  let dist = [1];
  let offset = 0; // dist[i] = P(T = offset + i)
  let observed = 0;
  for (const s of strata) {
    const total = s.old.graded + s.new.graded;
    const passes = s.old.passed + s.new.passed;
    const h = hypergeometric(total, passes, s.new.graded);
    observed += s.new.passed;
    const next = new Array<number>(dist.length + h.pmf.length - 1).fill(0);
    for (let i = 0; i < dist.length; i++) for (let j = 0; j < h.pmf.length; j++) next[i + j]! += dist[i]! * h.pmf[j]!;
    dist = next;
    offset += h.min;
  }
  let p = 0;
  for (let i = 0; i < dist.length && offset + i <= observed; i++) p += dist[i]!;
  return Math.min(1, p);
}
