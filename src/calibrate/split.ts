/**
 * The raw material of an A/A calibration: one arm's graded trials grouped per case, the
 * fixed split into trials 1..k and k+1..2k, seeded random re-splits into two equal halves,
 * and the percentile used for the noise floor. Pure and deterministic.
 */
import type { TrialResult } from '../stats/summarise.js';

/** One case's trial outcomes in trial order (`true` = pass), graded trials only. */
export interface CaseOutcomes {
  caseId: string;
  /** Graded outcomes in trial-number order. */
  outcomes: boolean[];
  /** The trial number of each outcome (same order). */
  trialNumbers: number[];
  /** Every trial recorded for the case in this arm, whatever its status. */
  trials: number;
  errors: number;
  skipped: number;
}

/**
 * Groups one engine's trials of one variant per case, in first-appearance order of the case.
 * `pass` → true, `fail` → false; `error` and `skipped` are counted but not graded (as in
 * stats/summarise.ts), unless `errorsAsFailures` turns errors into fails.
 */
export function groupOutcomes(trials: TrialResult[], errorsAsFailures = false): CaseOutcomes[] {
  const byCase = new Map<string, TrialResult[]>();
  for (const t of trials) {
    const list = byCase.get(t.caseId);
    if (list) list.push(t);
    else byCase.set(t.caseId, [t]);
  }
  return [...byCase].map(([caseId, rs]) => {
    const sorted = [...rs].sort((a, b) => a.trial - b.trial);
    const graded = sorted.filter((r) => r.status === 'pass' || r.status === 'fail' || (errorsAsFailures && r.status === 'error'));
    return {
      caseId,
      outcomes: graded.map((r) => r.status === 'pass'),
      trialNumbers: graded.map((r) => r.trial),
      trials: rs.length,
      errors: errorsAsFailures ? 0 : rs.filter((r) => r.status === 'error').length,
      skipped: rs.filter((r) => r.status === 'skipped').length,
    };
  });
}

/** Two halves of one case's outcomes, treated as `with` (a) and `without` (b) of a comparison. */
export interface SplitCase {
  caseId: string;
  a: boolean[];
  b: boolean[];
}

/** The fixed split: trials 1..k form half A, trials k+1..2k half B (later trials are ignored). */
export function fixedSplit(cases: CaseOutcomes[], k: number): SplitCase[] {
  return cases.map((c) => ({
    caseId: c.caseId,
    a: c.outcomes.filter((_, i) => c.trialNumbers[i]! <= k),
    b: c.outcomes.filter((_, i) => c.trialNumbers[i]! > k && c.trialNumbers[i]! <= 2 * k),
  }));
}

/**
 * One random re-split: each case's graded outcomes shuffled (Fisher–Yates with `rnd`) and cut
 * into two halves of ⌊g/2⌋ each (an odd last outcome is left out). Cases with fewer than 2
 * graded trials are left out: they cannot be split.
 */
export function randomSplit(cases: CaseOutcomes[], rnd: () => number): SplitCase[] {
  const out: SplitCase[] = [];
  for (const c of cases) {
    const h = Math.floor(c.outcomes.length / 2);
    if (h === 0) continue;
    const xs = [...c.outcomes];
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
    out.push({ caseId: c.caseId, a: xs.slice(0, h), b: xs.slice(h, 2 * h) });
  }
  return out;
}

/**
 * The q-quantile (0 ≤ q ≤ 1) of `xs` by linear interpolation between order statistics
 * (Hyndman & Fan's type 7, R's default: h = (n − 1)q). Source: R. J. Hyndman & Y. Fan,
 * "Sample quantiles in statistical packages", The American Statistician 50 (1996) 361–365.
 * @returns null for an empty list.
 */
export function quantile(xs: number[], q: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const h = (s.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(s.length - 1, lo + 1);
  return s[lo]! + (h - lo) * (s[hi]! - s[lo]!);
}
