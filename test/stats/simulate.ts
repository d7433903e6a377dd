/**
 * Seeded simulation of whole suites for the statistics tests: each case has a true pass
 * probability per arm, drawn from a Beta distribution with a given mean and intraclass
 * correlation (ICC ρ: Beta(μ(1−ρ)/ρ, (1−μ)(1−ρ)/ρ)), and every trial is a Bernoulli draw.
 */
import { seededRandom } from '../../src/stats/distributions.js';
import type { TrialResult, Variant } from '../../src/stats/index.js';

export type Rng = () => number;

export function rng(seed: number): Rng {
  return seededRandom(seed);
}

function gammaSample(r: Rng, shape: number): number {
  // Marsaglia & Tsang (2000); shape < 1 by the boost u^(1/shape).
  if (shape < 1) return gammaSample(r, shape + 1) * r() ** (1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      const u1 = r() || 1e-12;
      const u2 = r();
      x = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = r();
    if (u < 1 - 0.0331 * x ** 4 || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

/** A case pass probability with mean `mean` and ICC `icc` (icc = 0: exactly `mean`). */
export function caseProbability(r: Rng, mean: number, icc: number): number {
  if (icc <= 0 || mean <= 0 || mean >= 1) return mean;
  const s = (1 - icc) / icc;
  const a = gammaSample(r, mean * s);
  const b = gammaSample(r, (1 - mean) * s);
  return a / (a + b);
}

/** Trials of one arm of one case. */
export function arm(r: Rng, caseId: string, variant: Variant, p: number, trials: number, engine = 'sim'): TrialResult[] {
  return Array.from({ length: trials }, (_, i) => ({
    caseId,
    engine,
    variant,
    trial: i + 1,
    status: r() < p ? 'pass' : 'fail',
    durationMs: 1,
    tokens: 1,
  }));
}

/**
 * A suite of `cases` × `trials`: the without arm's case probabilities from Beta(mean, icc), the
 * with arm's from `withP(p)` (identity for an A/A suite).
 */
export function suite(r: Rng, o: { cases: number; trials: number; mean: number; icc: number; withP?: (p: number) => number; engine?: string }): TrialResult[] {
  const out: TrialResult[] = [];
  for (let c = 0; c < o.cases; c++) {
    const p = caseProbability(r, o.mean, o.icc);
    out.push(...arm(r, `case-${c}`, 'with_skill', (o.withP ?? ((x) => x))(p), o.trials, o.engine));
    out.push(...arm(r, `case-${c}`, 'without_skill', p, o.trials, o.engine));
  }
  return out;
}
