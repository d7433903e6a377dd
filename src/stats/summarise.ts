/**
 * Aggregates graded trials into per-case, per-variant and with/without statistics
 * (design.md, `stats/`; method from prior-art notes (d), "Recommended statistics").
 *
 * The case is the unit: trials of one case are reduced first (pass rate, Wilson interval,
 * pass@k, pass^k, flaky). A suite's pass rate is the mean of its case rates with a
 * case-clustered interval (intervals.ts); the with/without comparison tests each case's
 * pass-rate difference with an exact paired permutation test (tests.ts), gives the uplift a
 * case-clustered interval, and says `improves`, `regresses` or `inconclusive` (with why and the
 * smallest uplift the suite could detect). Wins/ties/losses and the sign test stay as secondary
 * figures. Errors and skips are never counted as fails (unless `errorsAsFailures`): they are
 * counted per arm, cases without graded trials are listed as dropped, and above
 * `maxErrorRate` the verdict is withheld.
 *
 * Units: durations in milliseconds, tokens as counts (input + output as the caller reports
 * them), cost in USD.
 */
import { passAtK, passHatK, signTest, wilson } from './estimators.js';
import { clusteredInterval, correlation, moverDifference, type CaseCounts, type ClusteredInterval } from './intervals.js';
import { detectableUplift, estimateNoise } from './power.js';
import { holm, minimumDecisiveCases, minimumPermutationP, pairedPermutationTest } from './tests.js';

import type { Variant } from '../engine/types.js';
import type { Status } from '../judge/types.js';

export type { Variant };
/** A trial's status: the one job `Status` (src/judge/types.ts). */
export type TrialStatus = Status;

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
  /**
   * Set for a trial of a trigger case (CaseSpec.shouldTrigger): such trials are left out of
   * every figure here (pass rates, uplift, verdict) and summarised by src/stats/trigger.ts.
   */
  trigger?: TriggerObservation;
  /** The trial's behaviour checks (src/judge/behaviour), for the behaviour gates (src/gate/behaviour.ts); not used here. */
  behaviour?: TrialBehaviour;
}

/** What the behaviour gates read of a trial: whether a tool loop or a silent failure was detected, and its claims. */
export interface TrialBehaviour {
  toolLoop: boolean;
  /** null: cannot be known on this job (unacknowledged shell calls whose outcome the engine does not report). */
  silentFailure: boolean | null;
  /** Claims found and claims verified. */
  claims: number;
  claimsVerified: number;
}

/** What a trigger trial observed: the query sent, what was expected, and whether the skill under test was activated. */
export interface TriggerObservation {
  query: string;
  shouldTrigger: boolean;
  activated: boolean;
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
  /** Failed trials; with `errorsAsFailures` the errored ones too. */
  failed: number;
  /** Errored trials (counted in `failed` as well with `errorsAsFailures`). */
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
  /** 95 % case-clustered Wilson interval of passRate (intervals.ts); null when no case was graded. */
  interval: ClusteredInterval | null;
  trials: number;
  passed: number;
  failed: number;
  errors: number;
  skipped: number;
  /** errors / (trials − skipped); null when every trial was skipped. */
  errorRate: number | null;
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
  /** Direction of delta (secondary: the verdict weighs the size of every difference). */
  verdict: 'win' | 'tie' | 'loss';
}

/** A case left out of the with/without comparison, and why. */
export interface DroppedCase {
  caseId: string;
  reason: string;
}

/** Error counts of one arm of a comparison: errors among trials that were not skipped. */
export interface ArmErrors {
  errors: number;
  trials: number;
}

/** The paired with/without comparison of one engine. */
export interface Uplift {
  engine: string;
  /** Cases graded in both variants: the set every figure below is computed on. */
  comparedCases: number;
  /** Mean over the compared cases of (with − without); null when there are none. */
  passRateDelta: number | null;
  /** 95 % interval of passRateDelta clustered by case (MOVER over the arms' clustered intervals, paired); null when no case is compared. */
  interval: Interval | null;
  /** with_skill and without_skill pass rates over the compared cases, with their clustered intervals. */
  withRate: number | null;
  withoutRate: number | null;
  withInterval: ClusteredInterval | null;
  withoutInterval: ClusteredInterval | null;
  perCase: CaseComparison[];
  /** Cases with trials in this engine that the comparison could not use. */
  dropped: DroppedCase[];
  wins: number;
  ties: number;
  losses: number;
  /** Exact two-sided paired permutation test over cases (tests.ts). */
  p: number;
  /** p after Holm's correction across the run's engines (equal to p with one engine). */
  pAdjusted: number;
  pMethod: 'exact' | 'monte_carlo';
  /** Exact two-sided sign test over the non-tied cases (secondary). */
  signTestP: number;
  /** Significance level the verdict used. */
  alpha: number;
  /** `improves` / `regresses` when pAdjusted ≤ alpha in that direction; else `inconclusive`. */
  verdict: 'improves' | 'regresses' | 'inconclusive';
  /** One sentence: why the verdict is what it is (for an inconclusive one, what would decide it). */
  reason: string;
  /** Smallest uplift (fraction) this suite could detect at 80 % power at its size and flakiness; null below the test's minimum size. */
  detectableUplift: number | null;
  /** Error counts per arm over every case of this engine. */
  errors: { with: ArmErrors; without: ArmErrors };
  /** Mean over compared cases of (with − without) mean tokens; null when not computable. */
  tokensDelta: number | null;
  /** Mean over compared cases of (with − without) mean duration, ms; null when not computable. */
  durationMsDelta: number | null;
}

/** Everything `summarise` returns. Arrays are in first-appearance order of engine and case, `with_skill` first. */
export interface RunStats {
  /** The options the figures were computed with (so a saved run can be re-read the same way). */
  options: Required<SummariseOptions>;
  cases: CaseStats[];
  variants: VariantStats[];
  /** One entry per engine that has trials in both variants. */
  uplift: Uplift[];
}

/** Tuning of the with/without verdict. */
export interface SummariseOptions {
  /** Two-sided significance level of the verdict. Default 0.05. */
  alpha?: number;
  /** Count `error` trials as `fail` (the worst-case view). Default false. */
  errorsAsFailures?: boolean;
  /**
   * Highest error rate (errors / non-skipped trials) of either arm at which the verdict is
   * still given; above it the verdict is `inconclusive`. Default 0.
   */
  maxErrorRate?: number;
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
export function caseStats(engine: string, caseId: string, variant: Variant, rs: TrialResult[], errorsAsFailures = false): CaseStats {
  const passed = rs.filter((r) => r.status === 'pass').length;
  const errors = rs.filter((r) => r.status === 'error').length;
  // The worst-case view counts errors as failures, and still reports how many there were.
  const failed = rs.filter((r) => r.status === 'fail').length + (errorsAsFailures ? errors : 0);
  const skipped = rs.filter((r) => r.status === 'skipped').length;
  const n = passed + failed;
  const graded = rs.filter((r) => r.status === 'pass' || r.status === 'fail' || (errorsAsFailures && r.status === 'error'));
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

const counts = (c: CaseStats): CaseCounts => ({ passed: c.passed, graded: c.passed + c.failed });
const rateOf = (e: ArmErrors) => (e.trials === 0 ? 0 : e.errors / e.trials);
const pts = (x: number) => `${Math.round(x * 100)}`;

function variantStats(engine: string, variant: Variant, cases: CaseStats[], rs: TrialResult[]): VariantStats {
  const rates = cases.map((c) => c.passRate).filter((p): p is number => p !== null);
  const sum = (f: (c: CaseStats) => number) => cases.reduce((a, c) => a + f(c), 0);
  const graded = rs.filter((r) => r.status === 'pass' || r.status === 'fail');
  const trials = sum((c) => c.trials);
  const skipped = sum((c) => c.skipped);
  const errors = sum((c) => c.errors);
  return {
    engine,
    variant,
    cases: cases.length,
    gradedCases: rates.length,
    passRate: mean(rates),
    interval: clusteredInterval(cases.map(counts)),
    trials,
    passed: sum((c) => c.passed),
    failed: sum((c) => c.failed),
    errors,
    skipped,
    errorRate: trials - skipped > 0 ? errors / (trials - skipped) : null,
    meanDurationMs: mean(graded.map((r) => r.durationMs)),
    meanTokens: mean(graded.map((r) => r.tokens)),
    costUsd: costTotal(rs),
  };
}

function armErrors(cases: CaseStats[]): ArmErrors {
  return { errors: cases.reduce((a, c) => a + c.errors, 0), trials: cases.reduce((a, c) => a + c.trials - c.skipped, 0) };
}

function dropReason(variant: Variant, c: CaseStats | undefined): string {
  if (!c) return `no ${variant} trial`;
  const parts = [c.errors ? `${c.errors} error(s)` : '', c.skipped ? `${c.skipped} skipped` : ''].filter(Boolean).join(', ');
  return `${variant} has no graded trial${parts ? ` (${parts})` : ''}`;
}

/** The paired comparison of one engine, before the verdict (which needs every engine's p for Holm). */
function uplift(engine: string, withCases: CaseStats[], withoutCases: CaseStats[], opts: Required<SummariseOptions>): Uplift {
  const withMap = new Map(withCases.map((c) => [c.caseId, c]));
  const without = new Map(withoutCases.map((c) => [c.caseId, c]));
  const ids = [...new Set([...withCases.map((c) => c.caseId), ...withoutCases.map((c) => c.caseId)])];
  const perCase: CaseComparison[] = [];
  const dropped: DroppedCase[] = [];
  const pairs: { with: CaseStats; without: CaseStats }[] = [];
  const tokenDeltas: number[] = [];
  const durationDeltas: number[] = [];
  for (const id of ids) {
    const w = withMap.get(id);
    const b = without.get(id);
    if (!w || w.passRate === null || !b || b.passRate === null) {
      dropped.push({ caseId: id, reason: !w || w.passRate === null ? dropReason('with_skill', w) : dropReason('without_skill', b) });
      continue;
    }
    const delta = w.passRate - b.passRate;
    const verdict = delta > EPS ? 'win' : delta < -EPS ? 'loss' : 'tie';
    perCase.push({ caseId: id, with: w.passRate, without: b.passRate, delta, verdict });
    pairs.push({ with: w, without: b });
    if (w.meanTokens !== null && b.meanTokens !== null) tokenDeltas.push(w.meanTokens - b.meanTokens);
    if (w.meanDurationMs !== null && b.meanDurationMs !== null) durationDeltas.push(w.meanDurationMs - b.meanDurationMs);
  }
  const wins = perCase.filter((c) => c.verdict === 'win').length;
  const losses = perCase.filter((c) => c.verdict === 'loss').length;
  const withI = clusteredInterval(pairs.map((p) => counts(p.with)));
  const withoutI = clusteredInterval(pairs.map((p) => counts(p.without)));
  const withRate = mean(pairs.map((p) => p.with.passRate!));
  const withoutRate = mean(pairs.map((p) => p.without.passRate!));
  const r = correlation(pairs.map((p) => p.with.passRate!), pairs.map((p) => p.without.passRate!)) ?? 0;
  const interval = withI && withoutI && withRate !== null && withoutRate !== null ? moverDifference(withRate, withI, withoutRate, withoutI, r) : null;
  const test = pairedPermutationTest(pairs.map((p) => ({ with: counts(p.with), without: counts(p.without) })));
  const noise = estimateNoise(pairs.map((p) => ({ a: counts(p.with), b: counts(p.without) })));
  const meanTrials = pairs.length ? pairs.reduce((a, p) => a + (counts(p.with).graded + counts(p.without).graded) / 2, 0) / pairs.length : 0;
  return {
    engine,
    comparedCases: pairs.length,
    passRateDelta: mean(perCase.map((c) => c.delta)),
    interval,
    withRate,
    withoutRate,
    withInterval: withI,
    withoutInterval: withoutI,
    perCase,
    dropped,
    wins,
    ties: perCase.length - wins - losses,
    losses,
    p: test.p,
    pAdjusted: test.p,
    pMethod: test.method,
    signTestP: signTest(wins, losses),
    alpha: opts.alpha,
    verdict: 'inconclusive',
    reason: '',
    detectableUplift: noise ? detectableUplift(pairs.length, Math.max(1, Math.round(meanTrials)), noise, opts.alpha) : null,
    errors: { with: armErrors(withCases), without: armErrors(withoutCases) },
    tokensDelta: mean(tokenDeltas),
    durationMsDelta: mean(durationDeltas),
  };
}

/** Sets verdict and reason from pAdjusted, the test's resolution and the error rates. */
function decide(u: Uplift, opts: Required<SummariseOptions>, engines: number): void {
  const decisive = u.wins + u.losses;
  const trialsPerCase = u.withInterval ? Math.max(1, Math.round(u.withInterval.trials / u.withInterval.cases)) : 0;
  const size = `${u.comparedCases} case(s) × ${trialsPerCase} trial(s)`;
  const detect = u.detectableUplift === null ? '' : `; with ${size} only an uplift of ≥ ${pts(u.detectableUplift)} points is detectable (80% power)`;
  const pText = `p = ${formatP(u.pAdjusted)}${engines > 1 ? ` (Holm-adjusted over ${engines} engines; unadjusted ${formatP(u.p)})` : ''}`;
  const over = [['with_skill', u.errors.with], ['without_skill', u.errors.without]] as const;
  const tooMany = opts.errorsAsFailures ? [] : over.filter(([, e]) => rateOf(e) > opts.maxErrorRate + EPS);
  u.verdict = 'inconclusive';
  if (u.comparedCases === 0) {
    u.reason = 'no case has graded trials in both variants';
  } else if (tooMany.length) {
    const parts = tooMany.map(([v, e]) => `${e.errors} of ${e.trials} ${v} trials errored (${pts(rateOf(e))}%)`);
    u.reason = `${parts.join(' and ')}, above the allowed error rate of ${pts(opts.maxErrorRate)}%: errors are neither passes nor fails, so the comparison is withheld (rerun, raise --max-error-rate, or use --errors-as-failures)`;
  } else if (minimumPermutationP(decisive) > opts.alpha) {
    const need = minimumDecisiveCases(opts.alpha);
    u.reason = `only ${decisive} case(s) differ between the variants; at α = ${opts.alpha} at least ${need} must differ for any result to be significant (smallest reachable p = ${formatP(minimumPermutationP(decisive))})${detect}`;
  } else if (u.pAdjusted <= opts.alpha && u.passRateDelta !== null && Math.abs(u.passRateDelta) > EPS) {
    u.verdict = u.passRateDelta > 0 ? 'improves' : 'regresses';
    u.reason = `${pText} ≤ α = ${opts.alpha}, exact paired permutation test over ${u.comparedCases} cases`;
  } else {
    u.reason = `${pText} > α = ${opts.alpha}${detect}`;
  }
}

/** A p-value for people: 3 significant digits, scientific below 0.001 (never "0.000"). */
export function formatP(p: number): string {
  if (p >= 0.001) return Number(p.toPrecision(3)).toString();
  return p.toExponential(2);
}

/**
 * Summarises a run's trials. Every entry of `results` counts (the caller de-duplicates
 * retried trials), except trigger trials (`trigger` set), which are left out (src/stats/trigger.ts
 * summarises them). Pure; does not mutate its input.
 *
 * @throws RangeError for an unknown variant or status, or a negative or non-finite
 *   duration, token count or cost.
 */
export function summarise(results: TrialResult[], options: SummariseOptions = {}): RunStats {
  const opts: Required<SummariseOptions> = {
    alpha: options.alpha ?? 0.05,
    errorsAsFailures: options.errorsAsFailures ?? false,
    maxErrorRate: options.maxErrorRate ?? 0,
  };
  if (!(opts.alpha > 0 && opts.alpha < 1)) throw new RangeError(`summarise: alpha must be in (0, 1), got ${opts.alpha}`);
  if (!(opts.maxErrorRate >= 0 && opts.maxErrorRate <= 1)) throw new RangeError(`summarise: maxErrorRate must be in [0, 1], got ${opts.maxErrorRate}`);
  results.forEach(validate);
  // Trigger trials judge activation, not the task: they would pollute the with_skill arm (src/stats/trigger.ts has them).
  results = results.filter((r) => !r.trigger);

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

  const out: RunStats = { options: opts, cases: [], variants: [], uplift: [] };
  for (const engine of engines) {
    const byVariant = new Map<Variant, CaseStats[]>();
    for (const variant of VARIANTS) {
      const stats: CaseStats[] = [];
      const trials: TrialResult[] = [];
      for (const caseId of caseOrder.get(engine)!) {
        const rs = groups.get(key(engine, caseId, variant));
        if (!rs) continue;
        stats.push(caseStats(engine, caseId, variant, rs, opts.errorsAsFailures));
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
  // One verdict per engine, Holm-corrected across engines (family-wise error ≤ alpha).
  const adjusted = holm(out.uplift.map((u) => u.p));
  out.uplift.forEach((u, i) => {
    u.pAdjusted = adjusted[i]!;
    decide(u, opts, out.uplift.length);
  });
  return out;
}
