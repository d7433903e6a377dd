/**
 * Estimators for pass/fail trials. Pure functions; every argument is validated and a bad
 * one throws `RangeError` (they are programming errors, not user input).
 */

function checkCounts(fn: string, n: number, c: number): void {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${fn}: n must be a non-negative integer, got ${n}`);
  if (!Number.isInteger(c) || c < 0 || c > n) throw new RangeError(`${fn}: c must be an integer in [0, n=${n}], got ${c}`);
}

/**
 * Wilson score interval for a binomial proportion `passes / n`.
 *
 * With p̂ = passes/n and z the normal quantile (1.959964 for 95 %):
 *
 *   centre = (p̂ + z²/2n) / (1 + z²/n)
 *   half   = z / (1 + z²/n) · √( p̂(1−p̂)/n + z²/4n² )
 *
 * Sources: E. B. Wilson, "Probable inference, the law of succession, and statistical
 * inference", JASA 22 (1927) 209–212; A. Agresti & B. A. Coull, "Approximate is better than
 * 'exact' for interval estimation of binomial proportions", The American Statistician 52
 * (1998) 119–126 (why Wilson rather than the Wald interval for small n).
 *
 * @returns `{low, high}` clamped to [0, 1]; `{0, 1}` when n = 0 (nothing is known).
 * @throws RangeError when n or passes is not a valid count, or z is not positive.
 */
export function wilson(passes: number, n: number, z = 1.959964): { low: number; high: number } {
  checkCounts('wilson', n, passes);
  if (!(z > 0) || !Number.isFinite(z)) throw new RangeError(`wilson: z must be positive, got ${z}`);
  if (n === 0) return { low: 0, high: 1 };
  const p = passes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z / denom) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At p̂ = 0 (p̂ = 1) the lower (upper) bound is exactly 0 (1); set it so rounding cannot show 1e-17.
  return {
    low: passes === 0 ? 0 : Math.max(0, centre - half),
    high: passes === n ? 1 : Math.min(1, centre + half),
  };
}

function checkK(fn: string, n: number, k: number): void {
  if (!Number.isInteger(k) || k < 1 || k > n) throw new RangeError(`${fn}: k must be an integer in [1, n=${n}], got ${k}`);
}

/**
 * Unbiased estimate of pass@k (probability that at least one of k trials drawn without
 * replacement from n, of which c passed, passes):
 *
 *   pass@k = 1 − C(n−c, k) / C(n, k)  =  1 − ∏_{i=n−c+1}^{n} (1 − k/i)
 *
 * The product form avoids huge binomials (the numerically stable form of the reference code).
 * Source: M. Chen et al., "Evaluating Large Language Models Trained on Code", arXiv:2107.03374
 * (2021), section 2.1 and figure 3.
 *
 * @throws RangeError unless 0 ≤ c ≤ n and 1 ≤ k ≤ n (all integers).
 */
export function passAtK(n: number, c: number, k: number): number {
  checkCounts('passAtK', n, c);
  checkK('passAtK', n, k);
  if (n - c < k) return 1;
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - k / i;
  return 1 - prod;
}

/**
 * Unbiased estimate of pass^k (probability that all of k trials drawn without replacement
 * from n, of which c passed, pass — a consistency measure):
 *
 *   pass^k = C(c, k) / C(n, k)  =  ∏_{i=0}^{k−1} (c − i) / (n − i)
 *
 * Source: S. Yao et al., "τ-bench: A Benchmark for Tool-Agent-User Interaction in Real-World
 * Domains", arXiv:2406.12045 (2024), section 3 (pass^k). Unlike p̂^k it is unbiased for small n.
 *
 * @throws RangeError unless 0 ≤ c ≤ n and 1 ≤ k ≤ n (all integers).
 */
export function passHatK(n: number, c: number, k: number): number {
  checkCounts('passHatK', n, c);
  checkK('passHatK', n, k);
  if (c < k) return 0;
  let prod = 1;
  for (let i = 0; i < k; i++) prod *= (c - i) / (n - i);
  return prod;
}

/**
 * Exact two-sided sign test: the probability, under H0 "wins and losses are equally likely",
 * of a split at least as uneven as the one observed (ties discarded beforehand):
 *
 *   p = min(1, 2 · Σ_{i=0}^{min(w,l)} C(m, i) / 2^m),  m = w + l
 *
 * Terms are built by the recurrence C(m,i+1) = C(m,i)·(m−i)/(i+1); beyond m = 1000 in log
 * space, so large m does not overflow. Source: W. J. Dixon & A. M. Mood, "The statistical sign test", JASA 41
 * (1946) 557–566; also the dotnet/skills evaluation gate (per-case votes, see
 * prior-art notes (d)).
 *
 * @returns 1 when there are no non-tied cases.
 * @throws RangeError when wins or losses is not a non-negative integer.
 */
export function signTest(wins: number, losses: number): number {
  for (const [name, v] of [['wins', wins], ['losses', losses]] as const) {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`signTest: ${name} must be a non-negative integer, got ${v}`);
  }
  const m = wins + losses;
  // A balanced split is the least extreme possible: P(X ≤ m/2) ≥ 1/2, so p = 1 exactly.
  if (m === 0 || wins === losses) return 1;
  const lo = Math.min(wins, losses);
  if (m <= 1000) {
    // C(m, i) and 2^m are finite doubles for m ≤ 1000; integer sums stay exact while < 2^53.
    let term = 1;
    let sum = 1;
    for (let i = 0; i < lo; i++) {
      term = (term * (m - i)) / (i + 1);
      sum += term;
    }
    return Math.min(1, (2 * sum) / 2 ** m);
  }
  // Large m: sum the terms in log space (log-sum-exp about the largest, the last one).
  const logs: number[] = [-m * Math.LN2];
  for (let i = 0; i < lo; i++) logs.push(logs[i]! + Math.log(m - i) - Math.log(i + 1));
  const top = logs[logs.length - 1]!;
  const tail = Math.exp(top) * logs.reduce((a, l) => a + Math.exp(l - top), 0);
  return Math.min(1, 2 * tail);
}
