/**
 * A/A calibration: one arm of a suite run with 2k trials per case, analysed as if its two
 * halves were the with and without arms of a comparison. Nothing differs between the halves,
 * so every "difference" the verdict finds is a false one. The analysis reports, per engine:
 *
 * - flakiness per case: pass rate over all graded trials, flaky flag, per-trial variance p(1−p);
 * - the false-difference rate: over `splits` seeded random re-splits of each case's trials into
 *   two equal halves, the share whose verdict (stats/summarise.ts: exact paired permutation
 *   test) is `improves` or `regresses` at `alpha`. Within a case the re-split halves are
 *   exchangeable, so for a sound test the rate is ≤ alpha (the test is discrete: usually below);
 * - the noise floor: the 95th percentile of |uplift| over those re-splits, and the mean
 *   half-width of the uplift's 95 % interval;
 * - the fixed split (trials 1..k against k+1..2k), which, unlike the re-splits, keeps the trial
 *   order and so shows drift over time (a warm cache, rate limits);
 * - the noise model (stats/power.ts `estimateNoise`) of the fixed halves, the power table it
 *   implies, and the smallest uplift the suite as it is (cases × k trials) can detect.
 *
 * Units: rates, uplifts and interval widths are fractions (0.08 = 8 points); variances are
 * fractions². Pure and deterministic: a fixed seed drives the re-splits.
 */
import { wilson } from '../stats/estimators.js';
import type { CaseCounts } from '../stats/intervals.js';
import { ASSUMED_NOISE, detectableUplift, estimateNoise, powerTable, type NoiseModel, type PowerRow } from '../stats/power.js';
import { seededRandom } from '../stats/distributions.js';
import { summarise, type Interval, type TrialResult, type Uplift, type Variant } from '../stats/summarise.js';
import { fixedSplit, groupOutcomes, quantile, randomSplit, type CaseOutcomes, type SplitCase } from './split.js';

/** Seed of the re-splits: the same trials always give the same calibration. */
export const CALIBRATION_SEED = 0xa11a;
/** Re-splits drawn by default. */
export const DEFAULT_SPLITS = 1000;
/** Power the power table and the detectable uplift are computed at. */
export const CALIBRATION_POWER = 0.8;
/** Quantile of |uplift| over the re-splits reported as the noise floor. */
export const NOISE_FLOOR_QUANTILE = 0.95;

/** One case's flakiness in the calibrated arm. */
export interface CaseFlakiness {
  caseId: string;
  /** Every trial recorded, whatever its status. */
  trials: number;
  /** pass + fail trials. */
  graded: number;
  passed: number;
  errors: number;
  skipped: number;
  /** passed / graded over all 2k trials; null when none was graded. */
  passRate: number | null;
  /** Some graded trials passed and some failed. */
  flaky: boolean;
  /** Per-trial Bernoulli variance p(1−p) of the case (fraction²); null when none was graded. */
  trialVariance: number | null;
  /** Graded counts of the fixed halves: trials 1..k (a) and k+1..2k (b). */
  halves: { a: CaseCounts; b: CaseCounts };
}

/** How often an A/A comparison is called a difference. */
export interface FalseDifferences {
  /** Re-splits drawn (0 when no case has 2 graded trials). */
  splits: number;
  /** Re-splits whose verdict was `improves` / `regresses`. */
  improves: number;
  regresses: number;
  /** improves + regresses. */
  count: number;
  /** count / splits; null when no split was drawn. */
  rate: number | null;
  /** 95 % Wilson interval of rate; null when no split was drawn. */
  interval: Interval | null;
  /** The level the verdicts were decided at. */
  alpha: number;
  /** False when the whole interval lies above alpha: the test finds differences that are not there. */
  sound: boolean;
}

/** How large an uplift pure noise produces. */
export interface NoiseFloor {
  /** The quantile reported (0.95). */
  quantile: number;
  /** That quantile of |uplift| over the re-splits (fraction); null when no split was drawn. */
  uplift: number | null;
  /** Mean half-width of the uplift's 95 % interval over the re-splits (fraction); null when none had one. */
  meanHalfWidth: number | null;
}

/** The comparison of trials 1..k against k+1..2k, as `run` would report it. */
export interface FixedSplit {
  comparedCases: number;
  /** Mean over cases of (A − B) pass rate (fraction); null when no case has trials in both halves. */
  uplift: number | null;
  interval: Interval | null;
  p: number;
  verdict: Uplift['verdict'];
  reason: string;
}

/** Sizing of a with/without comparison on this suite, from the noise of its halves. */
export interface CalibrationPower {
  alpha: number;
  power: number;
  /** The noise model (observed from the fixed halves; ASSUMED_NOISE when no case has both). */
  noise: NoiseModel;
  /** Cases needed per trial count to detect +10/+20/+30 points. */
  rows: PowerRow[];
  /** The suite as it is: cases graded in both halves, and k trials per arm. */
  cases: number;
  trials: number;
  /** Smallest uplift (fraction) the suite as it is detects; null below the test's minimum size. */
  detectableUplift: number | null;
}

/** The calibration of one engine's arm. */
export interface EngineCalibration {
  engine: string;
  variant: Variant;
  /** k: trials per half of the fixed split. */
  half: number;
  cases: CaseFlakiness[];
  /** Cases with at least one graded trial. */
  gradedCases: number;
  /** Cases with at least 2 graded trials (those the re-splits use). */
  splitCases: number;
  flakyCases: number;
  /** Mean of the graded cases' p(1−p); null when no case was graded. */
  meanTrialVariance: number | null;
  falseDifferences: FalseDifferences;
  noiseFloor: NoiseFloor;
  fixedSplit: FixedSplit;
  power: CalibrationPower;
}

/** The whole calibration. */
export interface Calibration {
  seed: number;
  splits: number;
  alpha: number;
  errorsAsFailures: boolean;
  /** One entry per engine with trials in the calibrated variant, in first-appearance order. */
  engines: EngineCalibration[];
}

/** Options of {@link calibrate}. */
export interface CalibrateOptions {
  /** k: trials per half of the fixed split. Default: ⌊largest trial number / 2⌋, at least 1. */
  half?: number;
  /** Re-splits to draw. Default 1000. */
  splits?: number;
  /** Two-sided significance level of the verdicts. Default 0.05. */
  alpha?: number;
  /** The arm to calibrate. Default `with_skill`. */
  variant?: Variant;
  /** Count errors as failures (as `run --errors-as-failures`). Default false. */
  errorsAsFailures?: boolean;
  /** Seed of the re-splits. Default CALIBRATION_SEED. */
  seed?: number;
}

const counts = (xs: boolean[]): CaseCounts => ({ passed: xs.filter(Boolean).length, graded: xs.length });

/** A split as the trials of a with/without run, for `summarise`. */
function asTrials(split: SplitCase[]): TrialResult[] {
  const out: TrialResult[] = [];
  for (const c of split) {
    const arm = (xs: boolean[], variant: Variant) =>
      xs.forEach((pass, i) => out.push({ caseId: c.caseId, engine: 'aa', variant, trial: i + 1, status: pass ? 'pass' : 'fail', durationMs: 0, tokens: 0 }));
    arm(c.a, 'with_skill');
    arm(c.b, 'without_skill');
  }
  return out;
}

/** The uplift `run` would report for this split; null when no case has trials in both halves. */
function compare(split: SplitCase[], alpha: number): Uplift | null {
  const usable = split.filter((c) => c.a.length > 0 && c.b.length > 0);
  if (usable.length === 0) return null;
  return summarise(asTrials(usable), { alpha }).uplift[0] ?? null;
}

function flakiness(c: CaseOutcomes, k: number): CaseFlakiness {
  const passed = c.outcomes.filter(Boolean).length;
  const graded = c.outcomes.length;
  const p = graded ? passed / graded : null;
  const [half] = fixedSplit([c], k);
  return {
    caseId: c.caseId,
    trials: c.trials,
    graded,
    passed,
    errors: c.errors,
    skipped: c.skipped,
    passRate: p,
    flaky: passed > 0 && passed < graded,
    trialVariance: p === null ? null : p * (1 - p),
    halves: { a: counts(half!.a), b: counts(half!.b) },
  };
}

function calibrateEngine(engine: string, variant: Variant, trials: TrialResult[], opts: Required<Omit<CalibrateOptions, 'half'>> & { half?: number }): EngineCalibration {
  const grouped = groupOutcomes(trials, opts.errorsAsFailures);
  const k = opts.half ?? Math.max(1, Math.floor(trials.reduce((m, t) => Math.max(m, t.trial), 0) / 2));
  const cases = grouped.map((c) => flakiness(c, k));
  const graded = cases.filter((c) => c.graded > 0);
  // Split in case-id order, so the re-splits do not depend on the order jobs were recorded in.
  const splittable = grouped.filter((c) => c.outcomes.length >= 2).sort((a, b) => (a.caseId < b.caseId ? -1 : a.caseId > b.caseId ? 1 : 0));

  const rnd = seededRandom(opts.seed);
  let improves = 0;
  let regresses = 0;
  const uplifts: number[] = [];
  const halfWidths: number[] = [];
  const splits = splittable.length ? opts.splits : 0;
  for (let s = 0; s < splits; s++) {
    const u = compare(randomSplit(splittable, rnd), opts.alpha);
    if (!u) continue;
    if (u.verdict === 'improves') improves++;
    if (u.verdict === 'regresses') regresses++;
    if (u.passRateDelta !== null) uplifts.push(Math.abs(u.passRateDelta));
    if (u.interval) halfWidths.push((u.interval.high - u.interval.low) / 2);
  }
  const count = improves + regresses;
  const interval = splits ? wilson(count, splits) : null;

  const fixed = compare(fixedSplit(grouped, k), opts.alpha);
  const pairs = cases.filter((c) => c.halves.a.graded > 0 && c.halves.b.graded > 0).map((c) => c.halves);
  const noise = estimateNoise(pairs) ?? ASSUMED_NOISE;
  return {
    engine,
    variant,
    half: k,
    cases,
    gradedCases: graded.length,
    splitCases: splittable.length,
    flakyCases: cases.filter((c) => c.flaky).length,
    meanTrialVariance: graded.length ? graded.reduce((a, c) => a + c.trialVariance!, 0) / graded.length : null,
    falseDifferences: {
      splits,
      improves,
      regresses,
      count,
      rate: splits ? count / splits : null,
      interval,
      alpha: opts.alpha,
      sound: interval === null || interval.low <= opts.alpha,
    },
    noiseFloor: {
      quantile: NOISE_FLOOR_QUANTILE,
      uplift: quantile(uplifts, NOISE_FLOOR_QUANTILE),
      meanHalfWidth: halfWidths.length ? halfWidths.reduce((a, b) => a + b, 0) / halfWidths.length : null,
    },
    fixedSplit: fixed
      ? { comparedCases: fixed.comparedCases, uplift: fixed.passRateDelta, interval: fixed.interval, p: fixed.p, verdict: fixed.verdict, reason: fixed.reason }
      : { comparedCases: 0, uplift: null, interval: null, p: 1, verdict: 'inconclusive', reason: `no case has graded trials in both trials 1–${k} and ${k + 1}–${2 * k}` },
    power: {
      alpha: opts.alpha,
      power: CALIBRATION_POWER,
      noise,
      rows: powerTable(noise, opts.alpha, CALIBRATION_POWER),
      cases: pairs.length,
      trials: k,
      detectableUplift: detectableUplift(pairs.length, k, noise, opts.alpha, CALIBRATION_POWER),
    },
  };
}

/**
 * Calibrates every engine's `variant` arm in `trials` (other variants are ignored).
 * Deterministic: the same trials and options give the same result.
 *
 * @throws RangeError for alpha outside (0, 1), a non-positive half or splits below 1.
 */
export function calibrate(trials: TrialResult[], options: CalibrateOptions = {}): Calibration {
  const opts = {
    splits: options.splits ?? DEFAULT_SPLITS,
    alpha: options.alpha ?? 0.05,
    variant: options.variant ?? 'with_skill',
    errorsAsFailures: options.errorsAsFailures ?? false,
    seed: options.seed ?? CALIBRATION_SEED,
    half: options.half,
  };
  if (!(opts.alpha > 0 && opts.alpha < 1)) throw new RangeError(`calibrate: alpha must be in (0, 1), got ${opts.alpha}`);
  if (!Number.isInteger(opts.splits) || opts.splits < 1) throw new RangeError(`calibrate: splits must be an integer ≥ 1, got ${opts.splits}`);
  if (opts.half !== undefined && !(Number.isInteger(opts.half) && opts.half >= 1)) throw new RangeError(`calibrate: half must be an integer ≥ 1, got ${opts.half}`);
  const arm = trials.filter((t) => t.variant === opts.variant);
  const engines = [...new Set(arm.map((t) => t.engine))];
  return {
    seed: opts.seed,
    splits: opts.splits,
    alpha: opts.alpha,
    errorsAsFailures: opts.errorsAsFailures,
    engines: engines.map((e) => calibrateEngine(e, opts.variant, arm.filter((t) => t.engine === e), opts)),
  };
}

/** True when some engine has a case with graded trials (the calibration says something). */
export function hasGradedTrials(c: Calibration): boolean {
  return c.engines.some((e) => e.gradedCases > 0);
}
