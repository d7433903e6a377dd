/**
 * Aggregates graded trials into per-case, per-variant and with/without statistics
 * (design.md, `stats/`; method from prior-art notes (d), "Recommended statistics").
 *
 * The case is the unit: trials of one case are reduced first (pass rate, Wilson interval,
 * pass@k, pass^k, flaky), and the with/without comparison votes once per case (win, tie or
 * loss) and tests the votes with an exact sign test. Errors and skips are never counted as
 * fails: they are reported, and excluded from every rate.
 *
 * Units: durations in milliseconds, tokens as counts (input + output as the caller reports
 * them), cost in USD.
 */
import { passAtK, passHatK, signTest, wilson } from './estimators.js';

export type TrialStatus = 'pass' | 'fail' | 'error' | 'skipped';
export type Variant = 'with_skill' | 'without_skill';

/** One graded trial, as the aggregator consumes it. */
export interface TrialResult {
  caseId: string;
  engine: string;
  variant: Variant;
  /** 1-based trial number. */
  trial: number;
  status: TrialStatus;
  /** Wall time of the trial, ms. */
  durationMs: number;
  /** Tokens used by the trial (all turns). */
  tokens: number;
  /** USD, when the engine reported it. */
  costUsd?: number;
}

/** A two-sided confidence interval for a proportion, both ends in [0, 1]. */
export interface Interval {
  low: number;
  high: number;
}

/** Statistics of one (engine, case, variant). */
export interface CaseStats {
  engine: string;
  caseId: string;
  variant: Variant;
  /** Every trial recorded, whatever its status. */
  trials: number;
  passed: number;
  failed: number;
  errors: number;
  skipped: number;
  /** passed / (passed + failed); null when no trial was graded. */
  passRate: number | null;
  /** 95 % Wilson interval of passRate over the graded trials; {0, 1} when none. */
  wilson: Interval;
  /** Unbiased pass@k for k = 1 and k = n (n = graded trials); empty when n = 0. Keys are k. */
  passAtK: Record<number, number>;
  /** Unbiased pass^k for k = 1 and k = n; empty when n = 0. Keys are k. */
  passHatK: Record<number, number>;
  /** Some graded trials passed and some failed. */
  flaky: boolean;
  /** Mean wall time of the graded trials, ms; null when none. */
  meanDurationMs: number | null;
  /** Mean tokens of the graded trials; null when none. */
  meanTokens: number | null;
  /** Total USD of every trial that reported a cost (errors included: money spent is spent); null when none did. */
  costUsd: number | null;
}

/** Statistics of one (engine, variant) over its cases. */
export interface VariantStats {
  engine: string;
  variant: Variant;
  /** Cases with at least one trial in this variant. */
  cases: number;
  /** Cases with at least one graded trial (those averaged into passRate). */
  gradedCases: number;
  /** Mean of the per-case pass rates (each case weighs the same); null when no case was graded. */
  passRate: number | null;
  trials: number;
  passed: number;
  failed: number;
  errors: number;
  skipped: number;
  /** Wilson interval over the pooled graded trials (descriptive: trials of one case are not independent). */
  wilson: Interval;
  /** Mean wall time over the pooled graded trials, ms; null when none. */
  meanDurationMs: number | null;
  /** Mean tokens over the pooled graded trials; null when none. */
  meanTokens: number | null;
  /** Total USD over every trial that reported a cost; null when none did. */
  costUsd: number | null;
}

/** One case's with/without comparison. */
export interface CaseComparison {
  caseId: string;
  /** Pass rate with the skill. */
  with: number;
  /** Pass rate without the skill. */
  without: number;
  /** with − without. */
  delta: number;
  verdict: 'win' | 'tie' | 'loss';
}

/** The paired with/without comparison of one engine. */
export interface Uplift {
  engine: string;
  /** Mean of (with − without) over the cases graded in both variants; null when there are none. */
  passRateDelta: number | null;
  perCase: CaseComparison[];
  wins: number;
  ties: number;
  losses: number;
  /** Exact two-sided sign test over the non-tied cases (1 when there are none). */
  signTestP: number;
  /**
   * `underpowered` when fewer than `minDecisive` (default 5) cases are non-tied; else
   * `improves` / `regresses` when signTestP ≤ alpha (default 0.05) in that direction; else
   * `no_difference`.
   */
  verdict: 'improves' | 'regresses' | 'no_difference' | 'underpowered';
  /** Mean over compared cases of (with − without) mean tokens; null when not computable. */
  tokensDelta: number | null;
  /** Mean over compared cases of (with − without) mean duration, ms; null when not computable. */
  durationMsDelta: number | null;
}

/** Everything `summarise` returns. Arrays are in first-appearance order of engine and case, `with_skill` first. */
export interface RunStats {
  cases: CaseStats[];
  variants: VariantStats[];
  /** One entry per engine that has trials in both variants. */
  uplift: Uplift[];
}

/** Tuning of the with/without verdict. */
export interface SummariseOptions {
  /** Significance level of the sign test. Default 0.05. */
  alpha?: number;
  /**
   * Fewest non-tied cases for a verdict other than `underpowered`. Default 5, the smallest
   * number for which a one-sided sign test can reach p ≤ 0.05 (0.5⁴ = 0.0625; dotnet/skills gate).
   */
  minDecisive?: number;
}

const VARIANTS: Variant[] = ['with_skill', 'without_skill'];
const EPS = 1e-12;

function mean(xs: number[]): number | null {
  return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
}

function costTotal(rs: TrialResult[]): number | null {
  const costs = rs.map((r) => r.costUsd).filter((c): c is number => typeof c === 'number');
  return costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0);
}

function validate(r: TrialResult, i: number): void {
  const where = `summarise: results[${i}] (${r.engine}/${r.caseId}/${r.variant}#${r.trial})`;
  if (!VARIANTS.includes(r.variant)) throw new RangeError(`${where}: unknown variant ${JSON.stringify(r.variant)}`);
  if (!['pass', 'fail', 'error', 'skipped'].includes(r.status)) throw new RangeError(`${where}: unknown status ${JSON.stringify(r.status)}`);
  if (!Number.isFinite(r.durationMs) || r.durationMs < 0) throw new RangeError(`${where}: durationMs must be a finite number ≥ 0, got ${r.durationMs}`);
  if (!Number.isFinite(r.tokens) || r.tokens < 0) throw new RangeError(`${where}: tokens must be a finite number ≥ 0, got ${r.tokens}`);
  if (r.costUsd !== undefined && (!Number.isFinite(r.costUsd) || r.costUsd < 0)) {
    throw new RangeError(`${where}: costUsd must be a finite number ≥ 0, got ${r.costUsd}`);
  }
}

/** Reduces the trials of one (engine, case, variant). */
export function caseStats(engine: string, caseId: string, variant: Variant, rs: TrialResult[]): CaseStats {
  const passed = rs.filter((r) => r.status === 'pass').length;
  const failed = rs.filter((r) => r.status === 'fail').length;
  const errors = rs.filter((r) => r.status === 'error').length;
  const skipped = rs.filter((r) => r.status === 'skipped').length;
  const n = passed + failed;
  const graded = rs.filter((r) => r.status === 'pass' || r.status === 'fail');
  const atK: Record<number, number> = {};
  const hatK: Record<number, number> = {};
  if (n > 0) {
    for (const k of new Set([1, n])) {
      atK[k] = passAtK(n, passed, k);
      hatK[k] = passHatK(n, passed, k);
    }
  }
  return {
    engine,
    caseId,
    variant,
    trials: rs.length,
    passed,
    failed,
    errors,
    skipped,
    passRate: n === 0 ? null : passed / n,
    wilson: wilson(passed, n),
    passAtK: atK,
    passHatK: hatK,
    flaky: passed > 0 && failed > 0,
    meanDurationMs: mean(graded.map((r) => r.durationMs)),
    meanTokens: mean(graded.map((r) => r.tokens)),
    costUsd: costTotal(rs),
  };
}

function variantStats(engine: string, variant: Variant, cases: CaseStats[], rs: TrialResult[]): VariantStats {
  const rates = cases.map((c) => c.passRate).filter((p): p is number => p !== null);
  const sum = (f: (c: CaseStats) => number) => cases.reduce((a, c) => a + f(c), 0);
  const passed = sum((c) => c.passed);
  const failed = sum((c) => c.failed);
  const graded = rs.filter((r) => r.status === 'pass' || r.status === 'fail');
  return {
    engine,
    variant,
    cases: cases.length,
    gradedCases: rates.length,
    passRate: mean(rates),
    trials: sum((c) => c.trials),
    passed,
    failed,
    errors: sum((c) => c.errors),
    skipped: sum((c) => c.skipped),
    wilson: wilson(passed, passed + failed),
    meanDurationMs: mean(graded.map((r) => r.durationMs)),
    meanTokens: mean(graded.map((r) => r.tokens)),
    costUsd: costTotal(rs),
  };
}

function uplift(engine: string, withCases: CaseStats[], withoutCases: CaseStats[], opts: Required<SummariseOptions>): Uplift {
  const without = new Map(withoutCases.map((c) => [c.caseId, c]));
  const perCase: CaseComparison[] = [];
  const tokenDeltas: number[] = [];
  const durationDeltas: number[] = [];
  for (const w of withCases) {
    const b = without.get(w.caseId);
    if (!b || w.passRate === null || b.passRate === null) continue;
    const delta = w.passRate - b.passRate;
    const verdict = delta > EPS ? 'win' : delta < -EPS ? 'loss' : 'tie';
    perCase.push({ caseId: w.caseId, with: w.passRate, without: b.passRate, delta, verdict });
    if (w.meanTokens !== null && b.meanTokens !== null) tokenDeltas.push(w.meanTokens - b.meanTokens);
    if (w.meanDurationMs !== null && b.meanDurationMs !== null) durationDeltas.push(w.meanDurationMs - b.meanDurationMs);
  }
  const wins = perCase.filter((c) => c.verdict === 'win').length;
  const losses = perCase.filter((c) => c.verdict === 'loss').length;
  const ties = perCase.length - wins - losses;
  const p = signTest(wins, losses);
  let verdict: Uplift['verdict'];
  if (wins + losses < opts.minDecisive) verdict = 'underpowered';
  else if (p <= opts.alpha && wins !== losses) verdict = wins > losses ? 'improves' : 'regresses';
  else verdict = 'no_difference';
  return {
    engine,
    passRateDelta: mean(perCase.map((c) => c.delta)),
    perCase,
    wins,
    ties,
    losses,
    signTestP: p,
    verdict,
    tokensDelta: mean(tokenDeltas),
    durationMsDelta: mean(durationDeltas),
  };
}

/**
 * Summarises a run's trials. Every entry of `results` counts (the caller de-duplicates
 * retried trials). Pure; does not mutate its input.
 *
 * @throws RangeError for an unknown variant or status, or a negative or non-finite
 *   duration, token count or cost.
 */
export function summarise(results: TrialResult[], options: SummariseOptions = {}): RunStats {
  const opts: Required<SummariseOptions> = { alpha: options.alpha ?? 0.05, minDecisive: options.minDecisive ?? 5 };
  results.forEach(validate);

  const engines: string[] = [];
  const caseOrder = new Map<string, string[]>(); // engine → case ids in first-appearance order
  const seen = new Set<string>(); // engine + case pairs already in caseOrder (linear, not quadratic)
  const groups = new Map<string, TrialResult[]>(); // key(engine, case, variant) → trials
  const key = (e: string, c: string, v: Variant) => JSON.stringify([e, c, v]);
  for (const r of results) {
    if (!caseOrder.has(r.engine)) {
      engines.push(r.engine);
      caseOrder.set(r.engine, []);
    }
    const ids = caseOrder.get(r.engine)!;
    const pair = JSON.stringify([r.engine, r.caseId]);
    if (!seen.has(pair)) {
      seen.add(pair);
      ids.push(r.caseId);
    }
    const k = key(r.engine, r.caseId, r.variant);
    const g = groups.get(k);
    if (g) g.push(r);
    else groups.set(k, [r]);
  }

  const out: RunStats = { cases: [], variants: [], uplift: [] };
  for (const engine of engines) {
    const byVariant = new Map<Variant, CaseStats[]>();
    for (const variant of VARIANTS) {
      const stats: CaseStats[] = [];
      const trials: TrialResult[] = [];
      for (const caseId of caseOrder.get(engine)!) {
        const rs = groups.get(key(engine, caseId, variant));
        if (!rs) continue;
        stats.push(caseStats(engine, caseId, variant, rs));
        trials.push(...rs);
      }
      if (stats.length === 0) continue;
      byVariant.set(variant, stats);
      out.variants.push(variantStats(engine, variant, stats, trials));
    }
    // Case stats grouped by case, with_skill first.
    for (const caseId of caseOrder.get(engine)!) {
      for (const variant of VARIANTS) {
        const c = byVariant.get(variant)?.find((s) => s.caseId === caseId);
        if (c) out.cases.push(c);
      }
    }
    const w = byVariant.get('with_skill');
    const wo = byVariant.get('without_skill');
    if (w && wo) out.uplift.push(uplift(engine, w, wo, opts));
  }
  return out;
}
