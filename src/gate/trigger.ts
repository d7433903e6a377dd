/**
 * The gates of trigger evaluation (src/stats/trigger.ts), and how trigger trials enter the
 * run-wide gates, which src/gate/gates.ts computes on the non-trigger trials only:
 *
 * - `min_trigger_precision` / `min_trigger_recall` (per engine): PASS when the Wilson
 *   interval's lower bound reaches the threshold, FAIL when its upper bound is below it, else
 *   INCONCLUSIVE (also when nothing is in the denominator);
 * - `all_trials_passed` (the default gate): a trigger trial is a with_skill trial that passed
 *   or failed, so it counts there, unless a trigger gate is set (then those decide on triggers);
 *   with a statistical gate and no trigger gate it is kept on the trigger trials alone;
 * - every gate asked for is listed: with nothing to decide on it is INCONCLUSIVE (exit 4) with
 *   the reason, never absent (a trigger gate on a run without trigger cases included);
 * - `max_error_rate`: each engine's trigger trials are one more arm (`<engine> trigger`): an
 *   error is never a miss, but it is an error (also with `--errors-as-failures`, which makes
 *   only task trials' errors failures).
 */
import type { Interval } from '../stats/summarise.js';
import type { TriggerMetric, TriggerStats } from '../stats/trigger.js';
import { intervalState, type GateResult } from './gates.js';

/** The trigger gate settings (fractions). */
export interface TriggerGateConfig {
  minTriggerPrecision?: number;
  minTriggerRecall?: number;
  maxErrorRate: number;
  /** Engine id → display name, for reasons. */
  engineNames?: Record<string, string>;
}

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
const range = (i: Interval) => `[${pct(i.low)}, ${pct(i.high)}]`;

function metricGate(name: 'min_trigger_precision' | 'min_trigger_recall', engine: string, m: TriggerMetric, threshold: number, counts: string): GateResult {
  const what = name === 'min_trigger_precision' ? 'trigger precision' : 'trigger recall';
  const base = { name, engine, threshold } as const;
  if (m.value === null || !m.interval) {
    const why = name === 'min_trigger_precision' ? 'the skill was never activated in a graded trigger trial' : 'no should-trigger query had a graded trial';
    return { ...base, figure: null, interval: null, state: 'inconclusive', reason: `${what} is undefined: ${why}` };
  }
  const state = intervalState(m.interval, threshold);
  const verb = state === 'pass' ? 'is at least' : state === 'fail' ? 'is below' : 'may or may not reach';
  return { ...base, figure: m.value, interval: { ...m.interval }, state, reason: `${what} ${pct(m.value)} ${range(m.interval)} (95% Wilson over ${m.n} trial(s); ${counts}) ${verb} ${pct(threshold)}` };
}

/** Whether a trigger gate is configured. */
export function hasTriggerGate(c: Pick<TriggerGateConfig, 'minTriggerPrecision' | 'minTriggerRecall'>): boolean {
  return c.minTriggerPrecision !== undefined || c.minTriggerRecall !== undefined;
}

/** The run's task (non-trigger) trials as the trigger gates need them. */
export interface TaskTrials {
  /** with_skill task trials that passed / failed (what `all_trials_passed` counted), and all recorded. */
  passed: number;
  failed: number;
  trials: number;
  /** Every engine of the run, in order, trigger-only ones included. */
  engines: readonly string[];
  /** The engines with at least one task trial (either variant). */
  taskEngines: readonly string[];
}

/** Gates that decide on task trials only, whose reason gains a note on an engine that ran only trigger cases. */
const TASK_GATES = new Set<GateResult['name']>(['min_pass_rate', 'min_uplift', 'no_regression']);

/**
 * `gates` (from evaluateGates on the non-trigger trials) with the trigger trials folded in, so
 * that every gate asked for is listed and no misfire goes unjudged:
 *
 * - `max_error_rate` gains the trigger arms;
 * - trigger trials are decided by the trigger gates when one is set; else by `all_trials_passed`:
 *   the default gate counts them with the task trials, and when a statistical gate replaced the
 *   default one (`--min-pass-rate` …, which judge task trials only) `all_trials_passed` is added
 *   back on the trigger trials alone, so a misfire never exits 0 unseen;
 * - with a trigger gate and no task trial (`--trigger-only`), `all_trials_passed` is dropped;
 * - each configured trigger gate is listed per engine, INCONCLUSIVE with the reason where the
 *   engine (or the run) has no trigger trial;
 * - a task gate left INCONCLUSIVE on an engine that ran only trigger cases says so.
 *
 * Pure. `triggers` null: the run has no trigger trial.
 */
export function withTriggerGates(gates: GateResult[], triggers: TriggerStats | null, config: TriggerGateConfig, task: TaskTrials): GateResult[] {
  const name = (e: string) => config.engineNames?.[e] ?? e;
  const engines = [...new Set([...task.engines, ...(triggers?.engines.map((e) => e.engine) ?? [])])];
  const triggerGates = (): GateResult[] => {
    const out: GateResult[] = [];
    const none = (n: 'min_trigger_precision' | 'min_trigger_recall', threshold: number, engine: string | null): GateResult => ({
      name: n,
      engine,
      threshold,
      figure: null,
      interval: null,
      state: 'inconclusive',
      reason: triggers
        ? `no trigger trial ran on ${name(engine ?? '')}, so there is no trigger ${n === 'min_trigger_precision' ? 'precision' : 'recall'} to gate`
        : 'no trigger case ran: no case sets `should_trigger` and eval.yaml has no `triggers.file`, or the case selection (--case, --tag, --shard) left them out',
    });
    for (const engine of engines.length ? engines : [null]) {
      const e = engine === null ? undefined : triggers?.engines.find((x) => x.engine === engine);
      const counts = e ? `TP ${e.tp}, FP ${e.fp}, FN ${e.fn}, TN ${e.tn}` : '';
      if (config.minTriggerPrecision !== undefined) out.push(e ? metricGate('min_trigger_precision', e.engine, e.precision, config.minTriggerPrecision, counts) : none('min_trigger_precision', config.minTriggerPrecision, engine));
      if (config.minTriggerRecall !== undefined) out.push(e ? metricGate('min_trigger_recall', e.engine, e.recall, config.minTriggerRecall, counts) : none('min_trigger_recall', config.minTriggerRecall, engine));
    }
    return out;
  };
  if (!triggers) return [...gates, ...triggerGates()];
  const correct = triggers.engines.reduce((a, e) => a + e.tp + e.tn, 0);
  const wrong = triggers.engines.reduce((a, e) => a + e.fp + e.fn, 0);
  const taskEngines = new Set(task.taskEngines);
  // A trigger gate decides on the trigger trials; with no task trial at all (`--trigger-only`) the default gate has nothing left to judge.
  const kept = hasTriggerGate(config) && task.trials === 0 ? gates.filter((g) => g.name !== 'all_trials_passed') : gates;
  const out = kept.map((g): GateResult => {
    if (g.name === 'max_error_rate') {
      const errors = triggers.engines.reduce((a, e) => a + e.errors, 0);
      const trials = triggers.engines.reduce((a, e) => a + e.trials - e.skipped, 0);
      const arms = triggers.engines.map((e) => ({ e, rate: e.trials - e.skipped > 0 ? e.errors / (e.trials - e.skipped) : 0 }));
      const worst = arms.reduce<(typeof arms)[number] | null>((w, a) => (!w || a.rate > w.rate ? a : w), null);
      const note = `; trigger cases: ${errors} of ${trials} trial(s) errored (never counted as misses)`;
      if (!worst || worst.rate <= (g.figure ?? 0)) return { ...g, reason: `${g.reason}${note}` };
      const ok = worst.rate <= config.maxErrorRate + 1e-12;
      const state = g.state === 'fail' || !ok ? 'fail' : 'pass';
      return { ...g, figure: worst.rate, state, reason: `${g.reason}${note}; worst trigger arm ${name(worst.e.engine)}: ${worst.e.errors} of ${worst.e.trials - worst.e.skipped} (${pct(worst.rate)}), ${ok ? 'within' : 'above'} the allowed ${pct(config.maxErrorRate)}` };
    }
    if (g.name === 'all_trials_passed' && !hasTriggerGate(config)) {
      const passed = task.passed + correct;
      const graded = passed + task.failed + wrong;
      const reason =
        graded === 0
          ? 'no with_skill trial was graded (trigger trials included)'
          : `${passed} of ${graded} graded with_skill trial(s) passed, ${correct + wrong} of them trigger trials (${wrong} misfired) (the default gate: every with_skill trial must pass; set --min-pass-rate or gates.min_trigger_precision / min_trigger_recall to decide on intervals)`;
      return { ...g, figure: graded ? passed / graded : null, state: graded === 0 ? 'inconclusive' : task.failed + wrong === 0 ? 'pass' : 'fail', reason };
    }
    if (TASK_GATES.has(g.name) && g.state === 'inconclusive' && g.figure === null && g.engine !== null && !taskEngines.has(g.engine) && triggers.engines.some((e) => e.engine === g.engine)) {
      return { ...g, reason: `${g.reason}; only trigger cases ran on ${name(g.engine)}: they judge whether the skill was activated, not the task (gate them with --min-trigger-precision / --min-trigger-recall)` };
    }
    return g;
  });
  if (!hasTriggerGate(config) && !out.some((g) => g.name === 'all_trials_passed')) {
    // A statistical gate replaced the default one and decides on task trials only: the trigger trials keep "every trial right".
    const graded = correct + wrong;
    out.splice(Math.min(1, out.length), 0, {
      name: 'all_trials_passed',
      engine: null,
      threshold: null,
      figure: graded ? correct / graded : null,
      interval: null,
      state: graded === 0 ? 'inconclusive' : wrong === 0 ? 'pass' : 'fail',
      reason:
        graded === 0
          ? 'no trigger trial was graded'
          : `${correct} of ${graded} graded trigger trial(s) right (${wrong} misfired): with no trigger gate set every trigger trial must be right, since the pass-rate gates judge task cases only (set --min-trigger-precision / --min-trigger-recall to decide on intervals)`,
    });
  }
  out.push(...triggerGates());
  return out;
}

/** The trigger gate settings recorded in result.json `decision.config` (snake_case, null when unset), back as camelCase fields for a DecisionConfig. */
export function triggerConfigOf(c: Record<string, unknown> | undefined): Pick<TriggerGateConfig, 'minTriggerPrecision' | 'minTriggerRecall'> {
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const out: Pick<TriggerGateConfig, 'minTriggerPrecision' | 'minTriggerRecall'> = {};
  const precision = num(c?.min_trigger_precision);
  const recall = num(c?.min_trigger_recall);
  if (precision !== undefined) out.minTriggerPrecision = precision;
  if (recall !== undefined) out.minTriggerRecall = recall;
  return out;
}
