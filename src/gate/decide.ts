/**
 * The decision stage (stats → decide → report): from graded trials and the gate settings to
 * the run's statistics, its gates and its exit code, in one pure call so that `run`,
 * `report`, `compare` and the benchmarks decide identically on identical input.
 */
import { summarise, type RunStats, type TrialResult } from '../stats/summarise.js';
import { evaluateGates, exitCodeOf, type GateConfig, type GateResult, type OnInconclusive, type PreviousRun } from './gates.js';
import { summariseTriggers, type TriggerStats } from '../stats/trigger.js';
import { withTriggerGates } from './trigger.js';
import { behaviourGates } from './behaviour.js';

/** Everything a decision depends on. Rates and margins are fractions. */
export interface DecisionConfig {
  alpha: number;
  errorsAsFailures: boolean;
  maxErrorRate: number;
  minPassRate?: number;
  minUplift?: number;
  noRegression?: { previous: PreviousRun; margin: number };
  /** Trigger precision / recall to reach per engine, fractions (src/gate/trigger.ts). */
  minTriggerPrecision?: number;
  minTriggerRecall?: number;
  /** Behaviour gates, fractions (src/gate/behaviour.ts): highest tool-loop and silent-failure rates, lowest claims-verified rate, per engine. */
  maxToolLoopRate?: number;
  maxSilentFailureRate?: number;
  minClaimsVerifiedRate?: number;
  onInconclusive?: OnInconclusive;
  /** Engine id → display name, for the wording of reasons only. */
  engineNames?: Record<string, string>;
}

/** Defaults: α = 0.05, errors are errors (not failures), no error allowed, no statistical gate. */
export const DEFAULT_DECISION: DecisionConfig = { alpha: 0.05, errorsAsFailures: false, maxErrorRate: 0 };

/** Default margin of the no-regression gate: 10 points. */
export const DEFAULT_REGRESSION_MARGIN = 0.1;

/** The outcome of {@link decide}. */
export interface Decision {
  stats: RunStats;
  /** The trigger evaluation (src/stats/trigger.ts) of the trigger trials; null when the run has none. Absent in a decision made before trigger evaluation existed. */
  triggers?: TriggerStats | null;
  gates: GateResult[];
  /** 0, 1, 3 or 4 (gates.ts `exitCodeOf`). */
  exitCode: number;
  config: DecisionConfig;
}

/** Summarises the trials and evaluates the gates. Pure and deterministic. */
export function decide(trials: TrialResult[], config: DecisionConfig = DEFAULT_DECISION): Decision {
  const stats = summarise(trials, { alpha: config.alpha, errorsAsFailures: config.errorsAsFailures, maxErrorRate: config.maxErrorRate });
  const gateConfig: GateConfig = {
    maxErrorRate: config.maxErrorRate,
    alpha: config.alpha,
    ...(config.engineNames ? { engineNames: config.engineNames } : {}),
    ...(config.minPassRate !== undefined ? { minPassRate: config.minPassRate } : {}),
    ...(config.minUplift !== undefined ? { minUplift: config.minUplift } : {}),
    ...(config.noRegression ? { noRegression: config.noRegression } : {}),
    // Every engine of the run, trigger-only ones too: a per-engine gate asked for is listed on each.
    engines: [...new Set(trials.map((t) => t.engine))],
  };
  // Trigger trials are not in `stats` (summarise leaves them out): their own figures, folded into the gates here.
  const triggers = summariseTriggers(trials);
  const withSkill = stats.variants.filter((v) => v.variant === 'with_skill');
  const gates = withTriggerGates(evaluateGates(stats, gateConfig), triggers, config, {
    passed: withSkill.reduce((a, v) => a + v.passed, 0),
    failed: withSkill.reduce((a, v) => a + v.failed, 0),
    trials: withSkill.reduce((a, v) => a + v.trials, 0),
    engines: gateConfig.engines!,
    taskEngines: [...new Set(stats.variants.map((v) => v.engine))],
  });
  // Behaviour gates read the trials' behaviour flags (src/gate/behaviour.ts).
  gates.push(...behaviourGates(trials, config, config.engineNames));
  return { stats, triggers, gates, exitCode: exitCodeOf(gates, config.onInconclusive), config };
}

/** The settings as written to result.json `decision.config` (the previous run by its path only). */
export function configJson(c: DecisionConfig) {
  return {
    alpha: c.alpha,
    errors_as_failures: c.errorsAsFailures,
    max_error_rate: c.maxErrorRate,
    min_pass_rate: c.minPassRate ?? null,
    min_uplift: c.minUplift ?? null,
    no_regression: c.noRegression ? { baseline: c.noRegression.previous.source, margin: c.noRegression.margin } : null,
    on_inconclusive: c.onInconclusive ?? null,
    min_trigger_precision: c.minTriggerPrecision ?? null,
    min_trigger_recall: c.minTriggerRecall ?? null,
    max_tool_loop_rate: c.maxToolLoopRate ?? null,
    max_silent_failure_rate: c.maxSilentFailureRate ?? null,
    min_claims_verified_rate: c.minClaimsVerifiedRate ?? null,
  };
}
