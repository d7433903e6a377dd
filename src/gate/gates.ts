/**
 * Gates: the decisions a CI acts on, each PASS, FAIL or INCONCLUSIVE, decided on intervals
 * (never on point estimates), separate from the with/without verdict. Pure: plain stats in,
 * plain results out; the exit code follows from the list (see {@link exitCodeOf}).
 */
import { moverDifference, wilsonInterval } from '../stats/intervals.js';
import { formatP } from '../stats/summarise.js';
import type { Interval, RunStats } from '../stats/summarise.js';
import { minimumDecisiveCases, stratifiedWorseTest } from '../stats/tests.js';

export type GateState = 'pass' | 'fail' | 'inconclusive';

export type GateName = 'all_trials_passed' | 'min_pass_rate' | 'min_uplift' | 'no_regression' | 'max_error_rate' | 'min_trigger_precision' | 'min_trigger_recall' | 'max_tool_loop_rate' | 'max_silent_failure_rate' | 'min_claims_verified_rate';

/** One with_skill case of a previous run, as the no-regression gate pairs it. */
export interface PreviousCase {
  engine: string;
  caseId: string;
  passed: number;
  failed: number;
}

/** The run a no-regression gate compares against. */
export interface PreviousRun {
  /** Where it was read from (result.json path), for messages. */
  source: string;
  iteration?: number;
  cases: PreviousCase[];
}

/** What the gates check. Rates and margins are fractions (0.8 = 80 %, 0.1 = 10 points). */
export interface GateConfig {
  /** with_skill pass rate to reach. */
  minPassRate?: number;
  /** Uplift (with − without) to reach, a fraction in [−1, 1]. */
  minUplift?: number;
  /** Compare with a previous run: FAIL when significantly worse, PASS when any drop is proven smaller than `margin`. */
  noRegression?: { previous: PreviousRun; margin: number };
  /** Highest error rate (errors / non-skipped trials, whole run) that still passes. Default 0. */
  maxErrorRate: number;
  /** One-sided level of the no-regression test. Default 0.05. */
  alpha: number;
  /** Engine id → the name the suite gives it (a custom engine's `engine.name`), for reasons. */
  engineNames?: Record<string, string>;
  /**
   * Every engine of the run, in order, trigger-only ones included (decide.ts passes the trials'
   * engines). Each per-engine gate is evaluated for each of them, so a gate asked for is
   * INCONCLUSIVE, never absent, on an engine without data. Default: the engines of `stats`.
   */
  engines?: string[];
}

/** One gate's outcome, as printed and written to result.json `gates`. */
export interface GateResult {
  name: GateName;
  /** The engine it is about; null for run-wide gates. */
  engine: string | null;
  /** The configured threshold (fraction), null for all_trials_passed. */
  threshold: number | null;
  /** The measured figure (fraction). */
  figure: number | null;
  /** The 95 % interval the state was decided on; null when decided on counts. */
  interval: Interval | null;
  state: GateState;
  /** One sentence: what was compared with what. */
  reason: string;
  /** no_regression: the cases whose pass rate dropped, worst first. */
  regressions?: { caseId: string; before: number; after: number }[];
  /** no_regression: the exact stratified one-sided p-value. */
  p?: number;
}

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
const pts = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}`;
const range = (i: Interval, f: (x: number) => string) => `[${f(i.low)}, ${f(i.high)}]`;

/** PASS when the interval's lower bound reaches θ, FAIL when its upper bound is below θ, else INCONCLUSIVE. */
export function intervalState(interval: Interval, threshold: number): GateState {
  const eps = 1e-9;
  if (interval.low >= threshold - eps) return 'pass';
  if (interval.high < threshold - eps) return 'fail';
  return 'inconclusive';
}

/**
 * Whether any gate beyond the error-rate gate is configured; without one, the default gate
 * is alibaba/skill-up's "every with_skill trial passed".
 */
export function hasStatisticalGate(c: GateConfig): boolean {
  return c.minPassRate !== undefined || c.minUplift !== undefined || c.noRegression !== undefined;
}

/**
 * Evaluates every configured gate. Order: max_error_rate, then per engine min_pass_rate,
 * min_uplift, no_regression (or all_trials_passed when none of those is configured).
 */
export function evaluateGates(stats: RunStats, config: GateConfig): GateResult[] {
  const out: GateResult[] = [errorGate(stats, config.maxErrorRate, config.engineNames ?? {})];
  const engines = config.engines ?? [...new Set(stats.variants.map((v) => v.engine))];
  if (!hasStatisticalGate(config)) out.push(allTrialsGate(stats));
  for (const engine of engines) {
    if (config.minPassRate !== undefined) out.push(passRateGate(stats, engine, config.minPassRate));
    if (config.minUplift !== undefined) out.push(upliftGate(stats, engine, config.minUplift));
    if (config.noRegression) out.push(regressionGate(stats, engine, config.noRegression.previous, config.noRegression.margin, config.alpha));
  }
  // No trial at all (every case filtered out or skipped before a job): the gates asked for are still listed, undecided.
  if (engines.length === 0) out.push(...noTrialGates(config));
  return out;
}

/** The per-engine gates configured, each INCONCLUSIVE with engine null: the run has no trial on any engine. */
function noTrialGates(config: GateConfig): GateResult[] {
  const none = (name: GateName, threshold: number): GateResult => ({ name, engine: null, threshold, figure: null, interval: null, state: 'inconclusive', reason: 'no trial was recorded on any engine, so there is nothing to decide on' });
  const out: GateResult[] = [];
  if (config.minPassRate !== undefined) out.push(none('min_pass_rate', config.minPassRate));
  if (config.minUplift !== undefined) out.push(none('min_uplift', config.minUplift));
  if (config.noRegression) out.push(none('no_regression', -config.noRegression.margin));
  return out;
}

/**
 * max_error_rate, per arm (engine × variant) as the verdict counts it: FAIL when any arm's
 * errors / non-skipped trials exceed `max`. With `errorsAsFailures` errors are failures and
 * this gate passes, saying how many were counted so.
 */
function errorGate(stats: RunStats, max: number, names: Record<string, string>): GateResult {
  const errors = stats.variants.reduce((a, v) => a + v.errors, 0);
  const trials = stats.variants.reduce((a, v) => a + v.trials - v.skipped, 0);
  const arms = stats.variants.map((v) => ({ v, rate: v.trials - v.skipped > 0 ? v.errors / (v.trials - v.skipped) : 0 }));
  const worst = arms.reduce<(typeof arms)[number] | null>((w, a) => (!w || a.rate > w.rate ? a : w), null);
  const rate = worst?.rate ?? 0;
  const base = { name: 'max_error_rate' as const, engine: null, threshold: max, figure: rate, interval: null };
  if (stats.options.errorsAsFailures) {
    return { ...base, state: 'pass', reason: `${errors} of ${trials} trial(s) errored, counted as failures (--errors-as-failures)` };
  }
  const ok = rate <= max + 1e-12;
  const where = worst && worst.v.errors > 0 ? `; worst arm ${names[worst.v.engine] ?? worst.v.engine} ${worst.v.variant}: ${worst.v.errors} of ${worst.v.trials - worst.v.skipped} (${pct(rate)})` : '';
  return { ...base, state: ok ? 'pass' : 'fail', reason: `${errors} of ${trials} trial(s) errored${where}, ${ok ? 'within' : 'above'} the allowed ${pct(max)} per arm` };
}

function allTrialsGate(stats: RunStats): GateResult {
  const w = stats.variants.filter((v) => v.variant === 'with_skill');
  const passed = w.reduce((a, v) => a + v.passed, 0);
  const failed = w.reduce((a, v) => a + v.failed, 0);
  const graded = passed + failed;
  return {
    name: 'all_trials_passed',
    engine: null,
    threshold: null,
    figure: graded ? passed / graded : null,
    interval: null,
    state: graded === 0 ? 'inconclusive' : failed === 0 ? 'pass' : 'fail',
    reason:
      graded === 0
        ? 'no with_skill trial was graded'
        : `${passed} of ${graded} graded with_skill trial(s) passed (the default gate: every with_skill trial must pass; set a gate such as --min-pass-rate to decide on intervals)`,
  };
}

function passRateGate(stats: RunStats, engine: string, threshold: number): GateResult {
  const v = stats.variants.find((x) => x.engine === engine && x.variant === 'with_skill');
  const base = { name: 'min_pass_rate' as const, engine, threshold };
  if (!v || !v.interval || v.passRate === null) {
    const why = v ? `${v.trials} ran: ${v.errors} error(s), ${v.skipped} skipped` : 'none ran';
    return { ...base, figure: null, interval: null, state: 'inconclusive', reason: `no with_skill trial of a task case was graded (${why}), so there is no pass rate to gate` };
  }
  const state = intervalState(v.interval, threshold);
  return {
    ...base,
    figure: v.passRate,
    interval: { low: v.interval.low, high: v.interval.high },
    state,
    reason: `with_skill pass rate ${pct(v.passRate)} ${range(v.interval, pct)} (95% CI clustered by case, ${v.interval.cases} case(s)) ${state === 'pass' ? 'is at least' : state === 'fail' ? 'is below' : 'may or may not reach'} ${pct(threshold)}`,
  };
}

function upliftGate(stats: RunStats, engine: string, threshold: number): GateResult {
  const u = stats.uplift.find((x) => x.engine === engine);
  const base = { name: 'min_uplift' as const, engine, threshold };
  if (!u) {
    const ran = stats.variants.some((v) => v.engine === engine);
    const reason = ran ? 'the without_skill arm did not run (use --baseline), so there is no uplift to gate' : 'no task case ran on this engine, so there is no uplift to gate';
    return { ...base, figure: null, interval: null, state: 'inconclusive', reason };
  }
  if (!u.interval || u.passRateDelta === null) return { ...base, figure: null, interval: null, state: 'inconclusive', reason: u.reason };
  const need = minimumDecisiveCases(u.alpha);
  if (u.comparedCases < need) {
    return { ...base, figure: u.passRateDelta, interval: u.interval, state: 'inconclusive', reason: `only ${u.comparedCases} case(s) compared; at α = ${u.alpha} at least ${need} are needed for any uplift to be established` };
  }
  const state = intervalState(u.interval, threshold);
  return {
    ...base,
    figure: u.passRateDelta,
    interval: u.interval,
    state,
    reason: `uplift ${pts(u.passRateDelta)} points ${range(u.interval, pts)} (95% CI clustered by case, ${u.comparedCases} case(s)) ${state === 'pass' ? 'is at least' : state === 'fail' ? 'is below' : 'may or may not reach'} ${pts(threshold)} points`,
  };
}

/**
 * no_regression, per engine, on the with_skill cases of both runs paired by case id:
 * FAIL when the new run is significantly worse (exact stratified one-sided test, p ≤ alpha;
 * cases are fixed strata: the same suite run twice); else PASS when the 95 % interval of the
 * change in pass rate (Newcombe's hybrid score interval on the two runs' mean case rates, each
 * a Wilson interval over its graded trials: valid for fixed cases) has its lower bound ≥ −margin;
 * else INCONCLUSIVE.
 */
function regressionGate(stats: RunStats, engine: string, previous: PreviousRun, margin: number, alpha: number): GateResult {
  const base = { name: 'no_regression' as const, engine, threshold: -margin };
  const before = new Map(previous.cases.filter((c) => c.engine === engine && c.passed + c.failed > 0).map((c) => [c.caseId, c]));
  const pairs = stats.cases
    .filter((c) => c.engine === engine && c.variant === 'with_skill' && c.passed + c.failed > 0 && before.has(c.caseId))
    .map((c) => ({ caseId: c.caseId, old: before.get(c.caseId)!, now: c }));
  if (pairs.length === 0) {
    return { ...base, figure: null, interval: null, state: 'inconclusive', reason: `no with_skill case was graded in both this run and ${previous.source}` };
  }
  const rate = (p: number, f: number) => p / (p + f);
  const oldMean = pairs.reduce((a, p) => a + rate(p.old.passed, p.old.failed), 0) / pairs.length;
  const newMean = pairs.reduce((a, p) => a + rate(p.now.passed, p.now.failed), 0) / pairs.length;
  const oldN = pairs.reduce((a, p) => a + p.old.passed + p.old.failed, 0);
  const newN = pairs.reduce((a, p) => a + p.now.passed + p.now.failed, 0);
  const interval = moverDifference(newMean, wilsonInterval(newMean, newN, 1.959964), oldMean, wilsonInterval(oldMean, oldN, 1.959964));
  const p = stratifiedWorseTest(pairs.map((x) => ({ old: { passed: x.old.passed, graded: x.old.passed + x.old.failed }, new: { passed: x.now.passed, graded: x.now.passed + x.now.failed } })));
  const regressions = pairs
    .map((x) => ({ caseId: x.caseId, before: rate(x.old.passed, x.old.failed), after: rate(x.now.passed, x.now.failed) }))
    .filter((x) => x.after < x.before - 1e-12)
    .sort((a, b) => b.before - b.after - (a.before - a.after) || a.caseId.localeCompare(b.caseId));
  const delta = newMean - oldMean;
  const state: GateState = p <= alpha ? 'fail' : interval.low >= -margin - 1e-9 ? 'pass' : 'inconclusive';
  const named = regressions.slice(0, 5).map((r) => `${r.caseId} ${pct(r.before)}→${pct(r.after)}`).join(', ');
  const head = `pass rate ${pts(delta)} points ${range(interval, pts)} vs ${previous.source} over ${pairs.length} case(s); one-sided p = ${formatP(p)}`;
  const reason =
    state === 'fail'
      ? `${head} ≤ ${alpha}: regressed${named ? ` (${named}${regressions.length > 5 ? `, and ${regressions.length - 5} more` : ''})` : ''}`
      : state === 'pass'
        ? `${head}: no drop larger than ${(margin * 100).toFixed(0)} points`
        : `${head}: neither a significant drop nor one proven smaller than ${(margin * 100).toFixed(0)} points${named ? ` (dropped: ${named})` : ''}`;
  return { ...base, figure: delta, interval, state, reason, regressions, p };
}

/** How an inconclusive gate maps to an exit code: `pass` → 0, `fail` → 1, unset → 4. */
export type OnInconclusive = 'pass' | 'fail' | undefined;

/**
 * The exit code of a finished run from its gates. Precedence, first match wins:
 *   3  the max_error_rate gate failed (errors above the allowed rate: fix the harness first);
 *   1  any other gate failed;
 *   4  any gate is inconclusive (0 with onInconclusive `pass`, 1 with `fail`);
 *   0  every gate passed.
 * (2, usage or config error, and 130/143, interrupted, are decided before any gate.)
 */
export function exitCodeOf(gates: GateResult[], onInconclusive?: OnInconclusive): number {
  if (gates.some((g) => g.name === 'max_error_rate' && g.state === 'fail')) return 3;
  if (gates.some((g) => g.state === 'fail')) return 1;
  if (gates.some((g) => g.state === 'inconclusive')) return onInconclusive === 'pass' ? 0 : onInconclusive === 'fail' ? 1 : 4;
  return 0;
}
