/**
 * The gates of trigger evaluation (src/stats/trigger.ts), and how trigger trials enter the
 * run-wide gates, which src/gate/gates.ts computes on the non-trigger trials only:
 *
 * - `min_trigger_precision` / `min_trigger_recall` (per engine): PASS when the Wilson
 *   interval's lower bound reaches the threshold, FAIL when its upper bound is below it, else
 *   INCONCLUSIVE (also when nothing is in the denominator);
 * - `all_trials_passed` (the default gate): a trigger trial is a with_skill trial that passed
 *   or failed, so it counts there, unless a trigger gate is set (then those decide on triggers);
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

/**
 * `gates` (from evaluateGates on the non-trigger trials) with the trigger trials folded into
 * `max_error_rate` and the default `all_trials_passed`, and the configured trigger gates
 * appended per engine. `withSkill` is the passed and failed with_skill (non-trigger) trials,
 * which `all_trials_passed` counted, and all with_skill (non-trigger) trials recorded: with none
 * and a trigger gate set, `all_trials_passed` is dropped. Pure. Unchanged `gates` when `triggers` is null.
 */
export function withTriggerGates(gates: GateResult[], triggers: TriggerStats | null, config: TriggerGateConfig, withSkill: { passed: number; failed: number; trials: number }): GateResult[] {
  if (!triggers) return gates;
  const name = (e: string) => config.engineNames?.[e] ?? e;
  const correct = triggers.engines.reduce((a, e) => a + e.tp + e.tn, 0);
  const wrong = triggers.engines.reduce((a, e) => a + e.fp + e.fn, 0);
  // A trigger gate decides on the trigger trials; with no task trial at all (`--trigger-only`) the default gate has nothing left to judge.
  const kept = hasTriggerGate(config) && withSkill.trials === 0 ? gates.filter((g) => g.name !== 'all_trials_passed') : gates;
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
      const passed = withSkill.passed + correct;
      const graded = passed + withSkill.failed + wrong;
      const reason =
        graded === 0
          ? 'no with_skill trial was graded (trigger trials included)'
          : `${passed} of ${graded} graded with_skill trial(s) passed, ${correct + wrong} of them trigger trials (${wrong} misfired) (the default gate: every with_skill trial must pass; set --min-pass-rate or gates.min_trigger_precision / min_trigger_recall to decide on intervals)`;
      return { ...g, figure: graded ? passed / graded : null, state: graded === 0 ? 'inconclusive' : withSkill.failed + wrong === 0 ? 'pass' : 'fail', reason };
    }
    return g;
  });
  for (const e of triggers.engines) {
    const counts = `TP ${e.tp}, FP ${e.fp}, FN ${e.fn}, TN ${e.tn}`;
    if (config.minTriggerPrecision !== undefined) out.push(metricGate('min_trigger_precision', e.engine, e.precision, config.minTriggerPrecision, counts));
    if (config.minTriggerRecall !== undefined) out.push(metricGate('min_trigger_recall', e.engine, e.recall, config.minTriggerRecall, counts));
  }
  return out;
}
