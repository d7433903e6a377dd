/**
 * Trigger evaluation (the stats stage): did the skill under test get activated when it should,
 * and only then? From the trials of trigger cases (TrialResult.trigger; one query = one case),
 * per engine: the confusion counts over graded trials, precision, recall, accuracy and F1 with
 * 95 % intervals, and the queries that misfired with their trigger rate over trials.
 *
 * Counting, over graded trials (status pass or fail) of one engine:
 *   TP = should trigger and activated,     FN = should trigger and not activated,
 *   FP = should not trigger but activated, TN = should not trigger and not activated;
 *   precision = TP / (TP + FP), recall = TP / (TP + FN), accuracy = (TP + TN) / graded,
 *   F1 = 2·TP / (2·TP + FP + FN) (the harmonic mean of precision and recall).
 * An `error` trial (the engine or harness broke) is never a miss: it is left out of every
 * count and counted in `errors` (unlike skill-creator's run_eval.py, which counts a failed
 * query as not triggered). A `skipped` trial is counted in `skipped` only.
 *
 * Trials are treated as independent draws (as skill-creator's trigger rate does): each
 * proportion's interval is Wilson's over its trials. Units: counts and fractions only.
 */
import { normalQuantile } from './distributions.js';
import { wilsonInterval } from './intervals.js';
import type { Interval, TrialResult } from './summarise.js';

/** Most misfired queries kept per list and engine; the rest are counted in `*More`. */
export const MAX_MISFIRES_LISTED = 100;

/** One figure with its interval. */
export interface TriggerMetric {
  /** The point estimate, a fraction; null when undefined (no trial in its denominator). */
  value: number | null;
  /** Two-sided interval at the stats' `level`; null when `value` is null. */
  interval: Interval | null;
  /** Trials in the denominator (for F1: 2·TP + FP + FN is not a trial count; graded trials). */
  n: number;
  /** How the interval was computed, for labels. */
  method: 'Wilson' | 'Bonferroni-combined Wilson';
}

/** One query (trigger case) of one engine. */
export interface TriggerQuery {
  caseId: string;
  query: string;
  shouldTrigger: boolean;
  /** Every trial recorded, whatever its status. */
  trials: number;
  /** Trials that passed or failed. */
  graded: number;
  /** Graded trials in which the skill was activated. */
  triggered: number;
  errors: number;
  skipped: number;
  /** triggered / graded; null when nothing was graded. */
  triggerRate: number | null;
}

/** The trigger figures of one engine. */
export interface TriggerEngineStats {
  engine: string;
  /** Queries (trigger cases) with at least one trial, and how many of them should / should not trigger. */
  queries: number;
  shouldTriggerQueries: number;
  shouldNotTriggerQueries: number;
  /** Trials recorded, graded (pass or fail), errored (left out of every count) and skipped. */
  trials: number;
  graded: number;
  errors: number;
  skipped: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  precision: TriggerMetric;
  recall: TriggerMetric;
  f1: TriggerMetric;
  accuracy: TriggerMetric;
  /** Should-trigger queries not activated in some graded trial, lowest trigger rate first (at most MAX_MISFIRES_LISTED). */
  missed: TriggerQuery[];
  /** Missed queries beyond the list. */
  missedMore: number;
  /** Should-not-trigger queries activated in some graded trial, highest trigger rate first (at most MAX_MISFIRES_LISTED). */
  falseTriggers: TriggerQuery[];
  falseTriggersMore: number;
}

/** The trigger evaluation of a run: one entry per engine with trigger trials, in first-appearance order. */
export interface TriggerStats {
  /** Confidence level of every interval (0.95). */
  level: number;
  engines: TriggerEngineStats[];
}

/** F1 from precision and recall: their harmonic mean, 0 when both are 0. */
function f1Of(p: number, r: number): number {
  return p + r > 0 ? (2 * p * r) / (p + r) : 0;
}

/**
 * The interval of F1 = 2PR/(P + R). F1 increases in P and in R (∂F1/∂P = 2R²/(P + R)² ≥ 0),
 * so if P ∈ [Pl, Ph] and R ∈ [Rl, Rh] then F1 ∈ [F1(Pl, Rl), F1(Ph, Rh)]. Each of the two is a
 * Wilson interval at level 1 − (1 − `level`)/2, so by the Bonferroni inequality both hold
 * together, and so the F1 interval covers, with probability ≥ `level` (conservative; it is
 * never degenerate, also at a perfect score, unlike a bootstrap on few queries). A precision
 * with no trial in its denominator (the skill never activated) is known only to lie in [0, 1].
 * Sources: C. J. van Rijsbergen, Information Retrieval, 2nd ed. (1979), ch. 7 (F as the
 * harmonic mean); C. E. Bonferroni (1936) / R. G. Miller, Simultaneous Statistical Inference
 * (1981), §1.3 (simultaneous intervals by the Bonferroni inequality); coverage checked by
 * seeded simulation in test/stats/trigger.test.ts.
 */
export function f1Interval(tp: number, fp: number, fn: number, level = 0.95): Interval | null {
  if (tp + fn === 0) return null;
  const z = normalQuantile(1 - (1 - level) / 4);
  const p = tp + fp > 0 ? wilsonInterval(tp / (tp + fp), tp + fp, z) : { low: 0, high: 1 };
  const r = wilsonInterval(tp / (tp + fn), tp + fn, z);
  return { low: f1Of(p.low, r.low), high: f1Of(p.high, r.high) };
}

/** A proportion with its Wilson interval at `z`. */
function proportion(hits: number, n: number, z: number): TriggerMetric {
  if (n === 0) return { value: null, interval: null, n, method: 'Wilson' };
  const w = wilsonInterval(hits / n, n, z);
  return { value: hits / n, interval: { low: hits === 0 ? 0 : w.low, high: hits === n ? 1 : w.high }, n, method: 'Wilson' };
}

/**
 * Summarises the trigger trials of a run (those with `trigger` set; any other is ignored).
 * Pure and deterministic: identical input gives identical output.
 * @returns null when there is no trigger trial.
 */
export function summariseTriggers(trials: readonly TrialResult[], level = 0.95): TriggerStats | null {
  const engines = new Map<string, Map<string, TriggerQuery>>();
  for (const t of trials) {
    if (!t.trigger) continue;
    let queries = engines.get(t.engine);
    if (!queries) engines.set(t.engine, (queries = new Map()));
    let q = queries.get(t.caseId);
    if (!q) {
      q = { caseId: t.caseId, query: t.trigger.query, shouldTrigger: t.trigger.shouldTrigger, trials: 0, graded: 0, triggered: 0, errors: 0, skipped: 0, triggerRate: null };
      queries.set(t.caseId, q);
    }
    q.trials++;
    if (t.status === 'error') q.errors++;
    else if (t.status === 'skipped') q.skipped++;
    else {
      q.graded++;
      if (t.trigger.activated) q.triggered++;
    }
  }
  if (engines.size === 0) return null;
  const z = normalQuantile(1 - (1 - level) / 2);
  const out: TriggerStats = { level, engines: [] };
  for (const [engine, queries] of engines) {
    const qs = [...queries.values()];
    for (const q of qs) q.triggerRate = q.graded > 0 ? q.triggered / q.graded : null;
    const sum = (f: (q: TriggerQuery) => number, should?: boolean) => qs.reduce((a, q) => a + (should === undefined || q.shouldTrigger === should ? f(q) : 0), 0);
    const tp = sum((q) => q.triggered, true);
    const fn = sum((q) => q.graded - q.triggered, true);
    const fp = sum((q) => q.triggered, false);
    const tn = sum((q) => q.graded - q.triggered, false);
    const graded = tp + fn + fp + tn;
    const f1Value = tp + fn > 0 ? (2 * tp) / (2 * tp + fp + fn) : null;
    const missed = qs.filter((q) => q.shouldTrigger && q.triggered < q.graded).sort((a, b) => a.triggerRate! - b.triggerRate! || a.caseId.localeCompare(b.caseId));
    const falseTriggers = qs.filter((q) => !q.shouldTrigger && q.triggered > 0).sort((a, b) => b.triggerRate! - a.triggerRate! || a.caseId.localeCompare(b.caseId));
    out.engines.push({
      engine,
      queries: qs.length,
      shouldTriggerQueries: qs.filter((q) => q.shouldTrigger).length,
      shouldNotTriggerQueries: qs.filter((q) => !q.shouldTrigger).length,
      trials: sum((q) => q.trials),
      graded,
      errors: sum((q) => q.errors),
      skipped: sum((q) => q.skipped),
      tp,
      fp,
      fn,
      tn,
      precision: proportion(tp, tp + fp, z),
      recall: proportion(tp, tp + fn, z),
      f1: { value: f1Value, interval: f1Value === null ? null : f1Interval(tp, fp, fn, level), n: graded, method: 'Bonferroni-combined Wilson' },
      accuracy: proportion(tp + tn, graded, z),
      missed: missed.slice(0, MAX_MISFIRES_LISTED),
      missedMore: Math.max(0, missed.length - MAX_MISFIRES_LISTED),
      falseTriggers: falseTriggers.slice(0, MAX_MISFIRES_LISTED),
      falseTriggersMore: Math.max(0, falseTriggers.length - MAX_MISFIRES_LISTED),
    });
  }
  return out;
}
