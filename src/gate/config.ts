/**
 * The gate settings of a run: eval.yaml `gates:` overridden field by field by the command
 * line's values (already parsed into numbers by src/cli/run.ts), checked for the settings that
 * need another one. The previous run of a no_regression gate is only named here; the run
 * stage loads it (src/run/previous.ts `runDecisionConfig`).
 */
import { relative, resolve } from 'node:path';
import type { SuiteGates } from '../config/types.js';
import { UsageError } from '../util/args.js';
import { DEFAULT_DECISION, DEFAULT_REGRESSION_MARGIN, type DecisionConfig } from './decide.js';

/**
 * The gate values given on the command line; each undefined one falls back to eval.yaml's.
 * Rates are fractions (0.8), uplift and margin are points (10 = +10 points), as the flags take them.
 */
export interface GateOverrides {
  alpha?: number;
  minPassRate?: number;
  /** `--min-uplift`, in points. */
  minUplift?: number;
  maxErrorRate?: number;
  /** `--margin`, in points. */
  margin?: number;
  onInconclusive?: 'pass' | 'fail';
  /** `--errors-as-failures` given (eval.yaml's `errors_as_failures: true` also sets it). */
  errorsAsFailures: boolean;
  /** `--no-regression <run>` as given (a path relative to the current folder; '' is refused). */
  noRegression?: string;
  /** `--min-trigger-precision` / `--min-trigger-recall`, fractions. */
  minTriggerPrecision?: number;
  minTriggerRecall?: number;
  /** `--max-tool-loop-rate`, `--max-silent-failure-rate`, `--min-claims-verified-rate`, fractions (src/gate/behaviour.ts). */
  maxToolLoopRate?: number;
  maxSilentFailureRate?: number;
  minClaimsVerifiedRate?: number;
}

/** What {@link resolveGates} decided: the settings, and the no_regression baseline still to load. */
export interface ResolvedGates {
  /** Every setting but `noRegression`, which needs the previous run loaded. */
  config: DecisionConfig;
  /** The no_regression gate's baseline: absolute `file`, `from` naming the flag or setting, margin as a fraction. */
  previous?: { file: string; from: string; margin: number };
}

/**
 * Merges the command line's gate values over eval.yaml's `gates:` (defaults: gate/decide.ts
 * DEFAULT_DECISION). `baseline` says whether the run has the without_skill arm; `engineNames`
 * maps engine id → display name for the reasons' wording.
 * @throws UsageError for a min_uplift gate without the without_skill arm, an empty
 * `--no-regression`, or `--margin` without a no_regression gate.
 */
export function resolveGates(flags: GateOverrides, suite: { gates: SuiteGates; evalFile: string }, opts: { baseline: boolean; engineNames: Record<string, string> }): ResolvedGates {
  const g = suite.gates;
  const evalFile = relative(process.cwd(), suite.evalFile) || suite.evalFile;
  const alpha = flags.alpha ?? g.alpha ?? DEFAULT_DECISION.alpha;
  const minPassRate = flags.minPassRate ?? g.minPassRate;
  const upliftPoints = flags.minUplift ?? g.minUplift;
  const maxErrorRate = flags.maxErrorRate ?? g.maxErrorRate ?? DEFAULT_DECISION.maxErrorRate;
  const marginPoints = flags.margin ?? g.noRegression?.margin;
  const onInconclusive = flags.onInconclusive ?? g.onInconclusive;
  const errorsAsFailures = flags.errorsAsFailures || Boolean(g.errorsAsFailures);
  if (upliftPoints !== undefined && !opts.baseline) {
    // Name where the gate came from: the flag, or eval.yaml's `gates.min_uplift`.
    const from = flags.minUplift !== undefined ? '--min-uplift' : `gates.min_uplift of ${evalFile}`;
    throw new UsageError(`${from} needs the without_skill arm: add --baseline (or benchmark.enabled: true in eval.yaml)`);
  }
  if (flags.noRegression !== undefined && flags.noRegression.trim() === '') throw new UsageError('--no-regression needs a previous result.json or its iteration folder, got an empty value');
  const previousFile = flags.noRegression ? resolve(flags.noRegression) : g.noRegression?.baseline;
  if (flags.margin !== undefined && !previousFile) throw new UsageError('--margin is the tolerance of --no-regression: give --no-regression <previous result.json> too');
  const config: DecisionConfig = { alpha, errorsAsFailures, maxErrorRate, engineNames: opts.engineNames };
  if (minPassRate !== undefined) config.minPassRate = minPassRate;
  if (upliftPoints !== undefined) config.minUplift = upliftPoints / 100;
  if (onInconclusive) config.onInconclusive = onInconclusive;
  const minTriggerPrecision = flags.minTriggerPrecision ?? g.minTriggerPrecision;
  const minTriggerRecall = flags.minTriggerRecall ?? g.minTriggerRecall;
  if (minTriggerPrecision !== undefined) config.minTriggerPrecision = minTriggerPrecision;
  if (minTriggerRecall !== undefined) config.minTriggerRecall = minTriggerRecall;
  for (const k of ['maxToolLoopRate', 'maxSilentFailureRate', 'minClaimsVerifiedRate'] as const) {
    const v = flags[k] ?? g[k];
    if (v !== undefined) config[k] = v;
  }
  if (!previousFile) return { config };
  const from = flags.noRegression ? '--no-regression' : `gates.no_regression.baseline of ${evalFile}`;
  return { config, previous: { file: previousFile, from, margin: marginPoints !== undefined ? marginPoints / 100 : DEFAULT_REGRESSION_MARGIN } };
}
