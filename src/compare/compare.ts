/**
 * The comparison stage of `skill-up compare`: two arms of trials (arms.ts) → per case the
 * with_skill pass rate before and after, per group the paired test and interval of the mean
 * change, and the regression verdict, which is the `no_regression` gate of gate/gates.ts with
 * the old arm as the previous run (so `compare` and `run --no-regression` decide identically).
 * Pure and deterministic. Rates and margins are fractions (0.1 = 10 points).
 */
import { evaluateGates, exitCodeOf, type GateResult, type OnInconclusive, type PreviousRun } from '../gate/gates.js';
import { clusteredInterval, correlation, moverDifference, type CaseCounts, type ClusteredInterval } from '../stats/intervals.js';
import { summarise, type ArmErrors, type CaseStats, type Interval, type RunStats } from '../stats/summarise.js';
import { holm, minimumPermutationP, pairedPermutationTest } from '../stats/tests.js';
import type { ArmPair, CompareMode, Group } from './arms.js';

/** Settings of a comparison. */
export interface CompareOptions {
  /** Significance level of the paired test and the gate's one-sided test. */
  alpha: number;
  /** Largest drop in pass rate (fraction) the gate still passes. */
  margin: number;
  /** Highest error rate (errors / non-skipped trials) of the new arm that still passes. */
  maxErrorRate: number;
  /** Count `error` trials as `fail` in both arms. Default false. */
  errorsAsFailures?: boolean;
  /** Exit code of an inconclusive gate: `pass` → 0, `fail` → 1, unset → 4. */
  onInconclusive?: OnInconclusive;
}

/** One case in one arm: its counts and pass rate as the stats stage gives them (summarise.ts). */
export type CaseSide = Pick<CaseStats, 'trials' | 'passed' | 'failed' | 'errors' | 'skipped' | 'passRate'>;

/** How a case changed; `not_graded`: in both arms, but one has no graded trial (only errors or skips). */
export type ChangeLabel = 'regressed' | 'improved' | 'unchanged' | 'new' | 'removed' | 'not_graded';

/** One case of one group, before → after. */
export interface CaseChange {
  /** The group (comparison.groups[].name). */
  engine: string;
  caseId: string;
  /** null for a new case. */
  before: CaseSide | null;
  /** null for a removed case. */
  after: CaseSide | null;
  /** after.passRate − before.passRate; null unless both were graded. */
  delta: number | null;
  /** By the point change: any drop is `regressed`, any rise `improved` (whether it is significant is the gate's and the test's call). */
  change: ChangeLabel;
}

/** The paired comparison of one group over its cases graded in both arms. */
export interface GroupComparison extends Group {
  /** Cases graded in both arms: the set every figure below is computed on. */
  pairedCases: number;
  counts: Record<ChangeLabel, number>;
  /** Mean of the paired cases' pass rates in each arm (each case weighs the same); null when none is paired. */
  oldRate: number | null;
  newRate: number | null;
  /** newRate − oldRate. */
  delta: number | null;
  /** 95 % case-clustered Wilson interval of each arm's mean over the paired cases (stats/intervals.ts). */
  oldInterval: ClusteredInterval | null;
  newInterval: ClusteredInterval | null;
  /** 95 % interval of delta: MOVER over the two clustered intervals with the case-rate correlation (as the with/without uplift). */
  interval: Interval | null;
  /** Pearson correlation of the paired cases' old and new rates (0 used when undefined). */
  correlation: number | null;
  /** Exact two-sided paired permutation test over the paired cases (stats/tests.ts); null when none is paired. */
  p: number | null;
  /** p after Holm's correction across the groups. */
  pAdjusted: number | null;
  pMethod: 'exact' | 'monte_carlo' | null;
  /** Smallest p the test can reach with this many differing cases (2 · 2^−k). */
  minimumP: number | null;
  /** Errors among the non-skipped trials of each arm. */
  oldErrors: ArmErrors;
  newErrors: ArmErrors;
}

/** Overall outcome, independent of --on-inconclusive. */
export type CompareVerdict = 'no_regression' | 'regression' | 'errors' | 'inconclusive';

/** Everything `compare` returns. */
export interface Comparison {
  mode: CompareMode;
  old: { source: string; skill: string; iteration: number; trials: number };
  new: { source: string; skill: string; iteration: number; trials: number };
  options: Required<Omit<CompareOptions, 'onInconclusive'>> & { onInconclusive: OnInconclusive | null };
  groups: GroupComparison[];
  /** Engines left out of the comparison, and why (arms.ts). */
  excluded: { engine: string; reason: string }[];
  /** Per group, cases sorted: regressed (largest drop first), improved (largest rise first), new, removed, not graded, unchanged. */
  cases: CaseChange[];
  /** max_error_rate (new arm), then no_regression per group. */
  gates: GateResult[];
  verdict: CompareVerdict;
  /** 0 pass, 1 a regression is proven, 3 errors above the allowed rate, 4 inconclusive (gates.ts exitCodeOf). */
  exitCode: number;
}

const EPS = 1e-12;
const RANK: ChangeLabel[] = ['regressed', 'improved', 'new', 'removed', 'not_graded', 'unchanged'];

const side = (c: CaseStats): CaseSide => ({ trials: c.trials, passed: c.passed, failed: c.failed, errors: c.errors, skipped: c.skipped, passRate: c.passRate });
const counts = (s: CaseSide): CaseCounts => ({ passed: s.passed, graded: s.passed + s.failed });
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

function label(before: CaseSide | null, after: CaseSide | null): { change: ChangeLabel; delta: number | null } {
  if (!before) return { change: 'new', delta: null };
  if (!after) return { change: 'removed', delta: null };
  if (before.passRate === null || after.passRate === null) return { change: 'not_graded', delta: null };
  const delta = after.passRate - before.passRate;
  return { change: delta < -EPS ? 'regressed' : delta > EPS ? 'improved' : 'unchanged', delta };
}

/** Every case of `group`, sorted as documented on {@link Comparison.cases}. */
function caseChanges(group: string, oldStats: RunStats, newStats: RunStats): CaseChange[] {
  const of = (s: RunStats) => new Map(s.cases.filter((c) => c.engine === group && c.variant === 'with_skill').map((c) => [c.caseId, side(c)]));
  const before = of(oldStats);
  const after = of(newStats);
  const ids = [...new Set([...after.keys(), ...before.keys()])];
  const out = ids.map((caseId): CaseChange => {
    const b = before.get(caseId) ?? null;
    const a = after.get(caseId) ?? null;
    return { engine: group, caseId, before: b, after: a, ...label(b, a) };
  });
  const order = new Map(ids.map((id, i) => [id, i]));
  return out.sort((x, y) => {
    const r = RANK.indexOf(x.change) - RANK.indexOf(y.change);
    if (r) return r;
    if (x.change === 'regressed') return x.delta! - y.delta! || order.get(x.caseId)! - order.get(y.caseId)!;
    if (x.change === 'improved') return y.delta! - x.delta! || order.get(x.caseId)! - order.get(y.caseId)!;
    return order.get(x.caseId)! - order.get(y.caseId)!;
  });
}

function armErrors(cases: CaseChange[], pick: (c: CaseChange) => CaseSide | null): ArmErrors {
  const sides = cases.map(pick).filter((s): s is CaseSide => s !== null);
  return { errors: sides.reduce((a, s) => a + s.errors, 0), trials: sides.reduce((a, s) => a + s.trials - s.skipped, 0) };
}

/** The paired figures of one group (before Holm, which needs every group's p). */
function groupComparison(g: Group, cases: CaseChange[]): GroupComparison {
  const paired = cases.filter((c) => c.delta !== null);
  const olds = paired.map((c) => counts(c.before!));
  const news = paired.map((c) => counts(c.after!));
  const oldRates = paired.map((c) => c.before!.passRate!);
  const newRates = paired.map((c) => c.after!.passRate!);
  const oldInterval = clusteredInterval(olds);
  const newInterval = clusteredInterval(news);
  const oldRate = mean(oldRates);
  const newRate = mean(newRates);
  const r = correlation(newRates, oldRates);
  const interval = oldInterval && newInterval && oldRate !== null && newRate !== null ? moverDifference(newRate, newInterval, oldRate, oldInterval, r ?? 0) : null;
  const test = paired.length ? pairedPermutationTest(paired.map((_, i) => ({ with: news[i]!, without: olds[i]! }))) : null;
  const tally = Object.fromEntries(RANK.map((l) => [l, cases.filter((c) => c.change === l).length])) as Record<ChangeLabel, number>;
  return {
    ...g,
    pairedCases: paired.length,
    counts: tally,
    oldRate,
    newRate,
    delta: oldRate !== null && newRate !== null ? newRate - oldRate : null,
    oldInterval,
    newInterval,
    interval,
    correlation: r,
    p: test ? test.p : null,
    pAdjusted: test ? test.p : null,
    pMethod: test ? test.method : null,
    minimumP: paired.length ? minimumPermutationP(tally.regressed + tally.improved) : null,
    oldErrors: armErrors(cases, (c) => c.before),
    newErrors: armErrors(cases, (c) => c.after),
  };
}

function verdictOf(gates: GateResult[]): CompareVerdict {
  if (gates.some((g) => g.name === 'max_error_rate' && g.state === 'fail')) return 'errors';
  if (gates.some((g) => g.state === 'fail')) return 'regression';
  if (gates.some((g) => g.state === 'inconclusive')) return 'inconclusive';
  return 'no_regression';
}

/**
 * Compares the arms. Both are re-summarised from their trials by the stats stage (the stored
 * summary of a result.json is not trusted); the verdict is `evaluateGates(newStats,
 * {maxErrorRate, alpha, noRegression: {previous: old arm's with_skill counts, margin}})`, whose
 * no_regression gate FAILs on a significant drop (exact stratified one-sided test, p ≤ alpha),
 * PASSes when the 95 % interval of the change stays above −margin, else is INCONCLUSIVE. A group
 * with no trial in the new arm gets an INCONCLUSIVE no_regression gate (nothing to compare).
 *
 * @throws RangeError for alpha outside (0, 1), a margin outside [0, 1] or a maxErrorRate outside
 *   [0, 1] (and what `summarise` throws for malformed trials).
 */
export function compareArms(pair: ArmPair, options: CompareOptions): Comparison {
  const { alpha, margin, maxErrorRate } = options;
  const errorsAsFailures = options.errorsAsFailures ?? false;
  if (!(margin >= 0 && margin <= 1)) throw new RangeError(`compare: margin must be in [0, 1], got ${margin}`);
  const sOpts = { alpha, errorsAsFailures, maxErrorRate };
  const oldStats = summarise(pair.old.trials, sOpts);
  const newStats = summarise(pair.new.trials, sOpts);

  const cases = pair.groups.flatMap((g) => caseChanges(g.name, oldStats, newStats));
  const groups = pair.groups.map((g) => groupComparison(g, cases.filter((c) => c.engine === g.name)));
  const tested = groups.filter((g) => g.p !== null);
  holm(tested.map((g) => g.p!)).forEach((p, i) => (tested[i]!.pAdjusted = p));

  const previous: PreviousRun = {
    source: pair.old.source,
    iteration: pair.old.iteration,
    cases: oldStats.cases.filter((c) => c.variant === 'with_skill').map((c) => ({ engine: c.engine, caseId: c.caseId, passed: c.passed, failed: c.failed })),
  };
  const gates = evaluateGates(newStats, { maxErrorRate, alpha, noRegression: { previous, margin } });
  const gated = new Set(gates.map((g) => g.engine));
  for (const g of pair.groups) {
    if (gated.has(g.name)) continue;
    gates.push({
      name: 'no_regression',
      engine: g.name,
      threshold: -margin,
      figure: null,
      interval: null,
      state: 'inconclusive',
      reason: `${g.newEngine} has no with_skill trial in ${pair.new.source}, so nothing can be compared with ${pair.old.source}`,
    });
  }
  if (pair.groups.length === 0) {
    gates.push({ name: 'no_regression', engine: null, threshold: -margin, figure: null, interval: null, state: 'inconclusive', reason: `no with_skill case in ${pair.old.source} or ${pair.new.source}: nothing to compare` });
  }
  const order = new Map(pair.groups.map((g, i) => [g.name, i]));
  gates.sort((a, b) => (a.engine === null ? -1 : b.engine === null ? 1 : order.get(a.engine)! - order.get(b.engine)!));

  const arm = (a: ArmPair['old']) => ({ source: a.source, skill: a.skill, iteration: a.iteration, trials: a.trials.length });
  return {
    mode: pair.mode,
    old: arm(pair.old),
    new: arm(pair.new),
    options: { alpha, margin, maxErrorRate, errorsAsFailures, onInconclusive: options.onInconclusive ?? null },
    groups,
    excluded: pair.excluded,
    cases,
    gates,
    verdict: verdictOf(gates),
    exitCode: exitCodeOf(gates, options.onInconclusive),
  };
}
