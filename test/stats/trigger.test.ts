/**
 * Trigger statistics (src/stats/trigger.ts): the confusion counts, errors left out, the
 * misfired queries, determinism, the separation from the pass-rate statistics, and, by seeded
 * simulation, the coverage of every interval at known true rates.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/stats/distributions.js';
import { summarise, type TrialResult } from '../../src/stats/index.js';
import { f1Interval, summariseTriggers } from '../../src/stats/trigger.js';

function trial(caseId: string, shouldTrigger: boolean, activated: boolean, status?: TrialResult['status'], engine = 'claude_code', n = 1): TrialResult {
  return {
    caseId,
    engine,
    variant: 'with_skill',
    trial: n,
    status: status ?? (activated === shouldTrigger ? 'pass' : 'fail'),
    durationMs: 1,
    tokens: 1,
    trigger: { query: `query of ${caseId}`, shouldTrigger, activated },
  };
}

describe('summariseTriggers', () => {
  it('counts TP/FP/FN/TN over graded trials, leaves errors out and counts them, and lists the misfired queries with their rates', () => {
    const trials = [
      trial('a', true, true, undefined, 'claude_code', 1),
      trial('a', true, true, undefined, 'claude_code', 2),
      trial('b', true, false, undefined, 'claude_code', 1),
      trial('b', true, true, undefined, 'claude_code', 2),
      // An error is never a miss, whatever the activation says.
      trial('b', true, false, 'error', 'claude_code', 3),
      trial('c', false, true, undefined, 'claude_code', 1),
      trial('c', false, false, undefined, 'claude_code', 2),
      trial('d', false, false, undefined, 'claude_code', 1),
      trial('d', false, false, 'skipped', 'claude_code', 2),
    ];
    const s = summariseTriggers(trials)!;
    expect(s.engines).toHaveLength(1);
    const e = s.engines[0]!;
    expect({ tp: e.tp, fp: e.fp, fn: e.fn, tn: e.tn, graded: e.graded, errors: e.errors, skipped: e.skipped, trials: e.trials }).toEqual({ tp: 3, fp: 1, fn: 1, tn: 2, graded: 7, errors: 1, skipped: 1, trials: 9 });
    expect(e.precision.value).toBeCloseTo(3 / 4);
    expect(e.recall.value).toBeCloseTo(3 / 4);
    expect(e.accuracy.value).toBeCloseTo(5 / 7);
    expect(e.f1.value).toBeCloseTo((2 * 3) / (2 * 3 + 1 + 1));
    expect(e.queries).toBe(4);
    expect([e.shouldTriggerQueries, e.shouldNotTriggerQueries]).toEqual([2, 2]);
    expect(e.missed.map((q) => [q.caseId, q.triggered, q.graded, q.triggerRate, q.errors])).toEqual([['b', 1, 2, 0.5, 1]]);
    expect(e.falseTriggers.map((q) => [q.caseId, q.triggered, q.graded, q.triggerRate])).toEqual([['c', 1, 2, 0.5]]);
    for (const m of [e.precision, e.recall, e.accuracy, e.f1]) {
      expect(m.interval!.low).toBeLessThanOrEqual(m.value!);
      expect(m.interval!.high).toBeGreaterThanOrEqual(m.value!);
    }
  });

  it('is per engine, null without trigger trials, undefined figures are null, and identical input gives identical output', () => {
    expect(summariseTriggers([])).toBeNull();
    const never = summariseTriggers([trial('a', true, false), trial('b', false, false, undefined, 'codex')])!;
    expect(never.engines.map((e) => e.engine)).toEqual(['claude_code', 'codex']);
    // Never activated: precision undefined; recall 0; codex has no should-trigger query: recall and F1 undefined.
    expect(never.engines[0]!.precision).toMatchObject({ value: null, interval: null });
    expect(never.engines[0]!.recall.value).toBe(0);
    expect(never.engines[0]!.f1.value).toBe(0);
    expect(never.engines[0]!.f1.interval!.low).toBe(0);
    expect(never.engines[0]!.f1.interval!.high).toBeGreaterThan(0);
    expect(never.engines[1]!.recall.value).toBeNull();
    expect(never.engines[1]!.f1).toMatchObject({ value: null, interval: null });
    const input = [trial('a', true, true), trial('b', false, true), trial('c', true, false)];
    expect(JSON.stringify(summariseTriggers(input))).toBe(JSON.stringify(summariseTriggers(input.map((t) => ({ ...t })))));
  });

  it('a perfect score still has a non-degenerate F1 interval', () => {
    const i = f1Interval(6, 0, 0)!;
    expect(i.high).toBe(1);
    expect(i.low).toBeGreaterThan(0.3);
    expect(i.low).toBeLessThan(1);
  });

  it('trigger trials stay out of the pass rates and the uplift (summarise)', () => {
    const task = (variant: 'with_skill' | 'without_skill', status: 'pass' | 'fail'): TrialResult => ({ caseId: 'task', engine: 'claude_code', variant, trial: 1, status, durationMs: 1, tokens: 1 });
    const stats = summarise([task('with_skill', 'pass'), task('without_skill', 'fail'), trial('t1', true, false), trial('t2', false, true)]);
    const w = stats.variants.find((v) => v.variant === 'with_skill')!;
    expect([w.trials, w.passed, w.failed]).toEqual([1, 1, 0]);
    expect(stats.cases.map((c) => c.caseId)).toEqual(['task', 'task']);
    expect(stats.uplift[0]!.comparedCases).toBe(1);
    expect(stats.uplift[0]!.dropped).toEqual([]);
  });
});

describe('interval coverage at known true rates (seeded simulation)', () => {
  /**
   * A trigger set of `pos` should-trigger and `neg` should-not-trigger queries, `k` trials each;
   * a trial triggers with probability `recall` on a positive and `falseRate` on a negative.
   * The true figures are those of the expected counts.
   */
  function coverage(opts: { pos: number; neg: number; k: number; recall: number; falseRate: number; runs: number; seed: number }) {
    const r = seededRandom(opts.seed);
    const tpE = opts.pos * opts.k * opts.recall;
    const fpE = opts.neg * opts.k * opts.falseRate;
    const fnE = opts.pos * opts.k - tpE;
    const tnE = opts.neg * opts.k - fpE;
    const truth = { precision: tpE / (tpE + fpE), recall: opts.recall, accuracy: (tpE + tnE) / ((opts.pos + opts.neg) * opts.k), f1: (2 * tpE) / (2 * tpE + fpE + fnE) };
    const hits = { precision: 0, recall: 0, accuracy: 0, f1: 0 };
    const defined = { precision: 0, recall: 0, accuracy: 0, f1: 0 };
    for (let run = 0; run < opts.runs; run++) {
      const trials: TrialResult[] = [];
      for (let q = 0; q < opts.pos + opts.neg; q++) {
        const should = q < opts.pos;
        for (let t = 1; t <= opts.k; t++) trials.push(trial(`q${q}`, should, r() < (should ? opts.recall : opts.falseRate), undefined, 'claude_code', t));
      }
      const e = summariseTriggers(trials)!.engines[0]!;
      for (const k of ['precision', 'recall', 'accuracy', 'f1'] as const) {
        const i = e[k].interval;
        if (!i) continue;
        defined[k]++;
        if (i.low <= truth[k] + 1e-12 && truth[k] <= i.high + 1e-12) hits[k]++;
      }
    }
    return Object.fromEntries((['precision', 'recall', 'accuracy', 'f1'] as const).map((k) => [k, hits[k] / defined[k]])) as Record<keyof typeof hits, number>;
  }

  it.each([
    { pos: 10, neg: 10, k: 3, recall: 0.8, falseRate: 0.1, seed: 1 },
    { pos: 8, neg: 12, k: 3, recall: 0.6, falseRate: 0.25, seed: 2 },
    { pos: 20, neg: 20, k: 1, recall: 0.9, falseRate: 0.05, seed: 3 },
  ])('95% intervals cover the true precision, recall and accuracy ≥ 93% and F1 ≥ 95% of the time (%o)', (p) => {
    const c = coverage({ ...p, runs: 2000 });
    expect(c.precision).toBeGreaterThanOrEqual(0.93);
    expect(c.recall).toBeGreaterThanOrEqual(0.93);
    expect(c.accuracy).toBeGreaterThanOrEqual(0.93);
    // Bonferroni over two 97.5% intervals: conservative by construction.
    expect(c.f1).toBeGreaterThanOrEqual(0.95);
    // And not vacuous: the intervals are informative (they miss sometimes at these sizes).
    expect(c.recall).toBeLessThan(1);
  });
});
