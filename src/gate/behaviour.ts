/**
 * The behaviour gates (issue 12): rates over jobs of the behaviour checks (src/judge/behaviour),
 * per engine on the with_skill arm, each decided on a 95 % Wilson interval over the jobs:
 *
 * | gate | rate | PASS | FAIL |
 * |---|---|---|---|
 * | `max_tool_loop_rate r` | jobs with a tool loop / graded jobs | upper bound ≤ r | lower bound > r |
 * | `max_silent_failure_rate r` | jobs with a silent failure / graded jobs | upper bound ≤ r | lower bound > r |
 * | `min_claims_verified_rate r` | jobs whose every claim held / graded jobs that made a claim | lower bound ≥ r | upper bound < r |
 *
 * otherwise INCONCLUSIVE (also with no job to count). Only graded jobs count (pass or fail):
 * an `error` or `skipped` job is never counted either way, `--errors-as-failures` included;
 * trigger cases are left out, as from every other gate. Jobs are treated as independent
 * trials (the behaviour is a property of each run, not of the case's difficulty). Sizing:
 * with 0 loops in n jobs the upper bound is about 3.8 / (n + 3.8), so `max_tool_loop_rate: 0`
 * can never pass and 0.1 needs about 35 clean jobs.
 */
import { wilsonInterval } from '../stats/intervals.js';
import type { TrialResult } from '../stats/summarise.js';
import { intervalState, type GateResult, type GateState } from './gates.js';

/** The behaviour gates' thresholds, fractions; each unset one is not evaluated. */
export interface BehaviourGateConfig {
  maxToolLoopRate?: number;
  maxSilentFailureRate?: number;
  minClaimsVerifiedRate?: number;
}

const Z95 = 1.959964;
const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

/** PASS when the interval's upper bound is at most θ, FAIL when its lower bound is above θ, else INCONCLUSIVE. */
export function maxRateState(interval: { low: number; high: number }, threshold: number): GateState {
  const eps = 1e-9;
  if (interval.high <= threshold + eps) return 'pass';
  if (interval.low > threshold + eps) return 'fail';
  return 'inconclusive';
}

type Name = 'max_tool_loop_rate' | 'max_silent_failure_rate' | 'min_claims_verified_rate';

function rateGate(name: Name, engine: string, threshold: number, events: number, n: number, what: { unit: string; event: string; none: string }, display: string): GateResult {
  const base = { name, engine, threshold };
  if (n === 0) return { ...base, figure: null, interval: null, state: 'inconclusive', reason: `no graded with_skill ${what.unit} on ${display}: ${what.none}` };
  const rate = events / n;
  const w = wilsonInterval(rate, n, Z95);
  const interval = { low: w.low, high: w.high };
  const isMax = name !== 'min_claims_verified_rate';
  const state = isMax ? maxRateState(interval, threshold) : intervalState(interval, threshold);
  const verb = isMax
    ? state === 'pass' ? 'is at most' : state === 'fail' ? 'is above' : 'may or may not be within'
    : state === 'pass' ? 'is at least' : state === 'fail' ? 'is below' : 'may or may not reach';
  return {
    ...base,
    figure: rate,
    interval,
    state,
    reason: `${events} of ${n} graded with_skill ${what.unit} ${what.event}: ${pct(rate)} [${pct(interval.low)}, ${pct(interval.high)}] (95% Wilson interval over jobs) ${verb} ${pct(threshold)}`,
  };
}

/**
 * The configured behaviour gates for each engine of `trials` (in first-appearance order), in
 * the order max_tool_loop_rate, max_silent_failure_rate, min_claims_verified_rate.
 */
export function behaviourGates(trials: readonly TrialResult[], config: BehaviourGateConfig, engineNames: Record<string, string> = {}): GateResult[] {
  if (config.maxToolLoopRate === undefined && config.maxSilentFailureRate === undefined && config.minClaimsVerifiedRate === undefined) return [];
  const engines = [...new Set(trials.map((t) => t.engine))];
  const out: GateResult[] = [];
  if (engines.length === 0) {
    // No trial at all: every gate asked for is still listed, undecided.
    const undecided = (name: Name, threshold: number): GateResult => ({ name, engine: null, threshold, figure: null, interval: null, state: 'inconclusive', reason: 'no trial was recorded on any engine, so there is nothing to decide on' });
    if (config.maxToolLoopRate !== undefined) out.push(undecided('max_tool_loop_rate', config.maxToolLoopRate));
    if (config.maxSilentFailureRate !== undefined) out.push(undecided('max_silent_failure_rate', config.maxSilentFailureRate));
    if (config.minClaimsVerifiedRate !== undefined) out.push(undecided('min_claims_verified_rate', config.minClaimsVerifiedRate));
    return out;
  }
  for (const engine of engines) {
    const graded = trials.filter((t) => t.engine === engine && t.variant === 'with_skill' && !t.trigger && (t.status === 'pass' || t.status === 'fail') && t.behaviour);
    const display = engineNames[engine] ?? engine;
    const taskRan = trials.some((t) => t.engine === engine && t.variant === 'with_skill' && !t.trigger);
    // Say why nothing counts: only trigger cases ran (left out of behaviour gates), or the jobs were not graded / not recorded.
    const none = taskRan ? 'its jobs have no behaviour record' : trials.some((t) => t.engine === engine && t.trigger) ? 'only trigger cases ran, and behaviour gates judge task cases' : 'no with_skill task case ran';
    if (config.maxToolLoopRate !== undefined) {
      out.push(rateGate('max_tool_loop_rate', engine, config.maxToolLoopRate, graded.filter((t) => t.behaviour!.toolLoop).length, graded.length, { unit: 'job(s)', event: 'had a tool loop', none }, display));
    }
    if (config.maxSilentFailureRate !== undefined) {
      // A job whose silent failure cannot be known (null) counts neither way, as an error does not.
      const known = graded.filter((t) => t.behaviour!.silentFailure !== null);
      out.push(rateGate('max_silent_failure_rate', engine, config.maxSilentFailureRate, known.filter((t) => t.behaviour!.silentFailure).length, known.length, { unit: 'job(s)', event: 'had a silent failure', none }, display));
    }
    if (config.minClaimsVerifiedRate !== undefined) {
      const claiming = graded.filter((t) => t.behaviour!.claims > 0);
      const held = claiming.filter((t) => t.behaviour!.claimsVerified === t.behaviour!.claims).length;
      out.push(rateGate('min_claims_verified_rate', engine, config.minClaimsVerifiedRate, held, claiming.length, { unit: 'job(s) with claims', event: 'had every claim verified', none: 'no job made a claim that could be checked' }, display));
    }
  }
  return out;
}

/** The behaviour gate settings recorded in result.json `decision.config` (snake_case), back as {@link BehaviourGateConfig}. */
export function behaviourConfigOf(c: Record<string, unknown> | undefined): BehaviourGateConfig {
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const out: BehaviourGateConfig = {};
  const loop = num(c?.max_tool_loop_rate);
  const silent = num(c?.max_silent_failure_rate);
  const claims = num(c?.min_claims_verified_rate);
  if (loop !== undefined) out.maxToolLoopRate = loop;
  if (silent !== undefined) out.maxSilentFailureRate = silent;
  if (claims !== undefined) out.minClaimsVerifiedRate = claims;
  return out;
}
