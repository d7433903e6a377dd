/**
 * From grader runs to the agent_judge's verdict (pure): the majority per criterion over
 * `repeats` runs, their agreement, the `pass_threshold` decision, and the assertions reports show.
 */
import type { AgentJudgeCriterion } from '../../config/types.js';
import type { Assertion, JudgeSpend } from '../types.js';
import type { CriterionVerdict } from './parse.js';

/** One grader run: its verdicts per criterion id, or why it gave none (an engine error, an answer still unusable after the correction). */
export type GraderRun = { ok: true; results: Map<string, CriterionVerdict> } | { ok: false; reason: string };

/** The combined verdict of the runs. */
export type Combined =
  | {
      ok: true;
      /** Per criterion, in `criteria` order: the majority verdict and the evidence of a run that gave it. */
      verdicts: { criterion: AgentJudgeCriterion; passed: boolean; evidence: string; agreeing: number; valid: number }[];
      /** Mean over criteria of the share of valid runs agreeing with the majority, 0..1. */
      agreement: number;
      /** Runs that gave a usable answer, and all runs. */
      valid: number;
      runs: number;
    }
  | { ok: false; reason: string };

/**
 * Majority per criterion over the usable runs: passed iff more than half of them passed it (a
 * tie is not passed). Usable only when more than half the runs are usable; otherwise the
 * reasons of the failed runs. With one run this is that run's verdicts (agreement 1).
 */
export function combineRuns(runs: readonly GraderRun[], criteria: readonly AgentJudgeCriterion[]): Combined {
  const valid = runs.filter((r): r is Extract<GraderRun, { ok: true }> => r.ok);
  if (runs.length === 0) return { ok: false, reason: 'no grader run' };
  if (valid.length * 2 <= runs.length) {
    const reasons = runs.filter((r): r is Extract<GraderRun, { ok: false }> => !r.ok).map((r) => r.reason);
    const head = runs.length === 1 ? '' : `only ${valid.length} of ${runs.length} grader runs gave a usable answer (more than half must): `;
    return { ok: false, reason: `${head}${[...new Set(reasons)].slice(0, 3).join('; ')}` };
  }
  const verdicts = criteria.map((criterion) => {
    const given = valid.map((r) => r.results.get(criterion.id)!);
    const yes = given.filter((v) => v.passed).length;
    const passed = yes * 2 > given.length;
    const agreeing = passed ? yes : given.length - yes;
    const evidence = given.find((v) => v.passed === passed)?.evidence ?? '';
    return { criterion, passed, evidence, agreeing, valid: given.length };
  });
  const agreement = verdicts.length ? verdicts.reduce((s, v) => s + v.agreeing / v.valid, 0) / verdicts.length : 1;
  return { ok: true, verdicts, agreement, valid: valid.length, runs: runs.length };
}

/** Whether `passed` of `total` criteria meets `threshold` (a fraction 0..1): passed/total ≥ threshold. */
export function meetsThreshold(passed: number, total: number, threshold: number): boolean {
  if (total <= 0) return false;
  // A small tolerance: 7/10 meets 0.7 although 7/10 < 0.7 in binary floating point.
  return passed / total >= threshold - 1e-12;
}

/** The agent_judge's outcome from combined runs: one assertion per criterion (`<id>: <text>`), the threshold decision. */
export function agentJudgeVerdict(combined: Combined, threshold: number): { status: 'pass' | 'fail' | 'error'; assertions: Assertion[]; reason?: string } {
  if (!combined.ok) return { status: 'error', assertions: [], reason: combined.reason };
  const several = combined.runs > 1;
  const assertions: Assertion[] = combined.verdicts.map((v) => ({
    text: `${v.criterion.id}: ${v.criterion.text}`,
    passed: v.passed,
    evidence: several ? `${v.agreeing} of ${v.valid} grader runs agree: ${v.evidence}` : v.evidence,
  }));
  const passed = assertions.filter((a) => a.passed).length;
  const total = assertions.length;
  const pct = total ? Math.round((passed / total) * 100) : 0;
  const noteRuns = several ? `; ${combined.valid} of ${combined.runs} grader runs usable, agreement ${Math.round(combined.agreement * 100)}%` : '';
  if (meetsThreshold(passed, total, threshold)) {
    return { status: 'pass', assertions, ...(passed < total || several ? { reason: `${passed} of ${total} criteria passed (${pct}%), pass_threshold ${threshold}${noteRuns}` } : {}) };
  }
  return { status: 'fail', assertions, reason: `${passed} of ${total} criteria passed (${pct}%), below pass_threshold ${threshold}${noteRuns}` };
}

/**
 * Two judges' spend summed (tokens, ms, USD, runs); the agreement is the mean of those that
 * have one; a cost is estimated when either part is.
 */
export function addSpend(a: JudgeSpend | undefined, b: JudgeSpend): JudgeSpend {
  if (!a) return { ...b, usage: { ...b.usage } };
  const agreements = [a.agreement, b.agreement].filter((x): x is number => x !== undefined);
  const cost = a.costUsd !== undefined || b.costUsd !== undefined ? (a.costUsd ?? 0) + (b.costUsd ?? 0) : undefined;
  return {
    usage: { input: a.usage.input + b.usage.input, output: a.usage.output + b.usage.output, cacheRead: a.usage.cacheRead + b.usage.cacheRead, cacheWrite: a.usage.cacheWrite + b.usage.cacheWrite },
    durationMs: a.durationMs + b.durationMs,
    ...(cost !== undefined ? { costUsd: cost } : {}),
    ...(a.costEstimated || b.costEstimated ? { costEstimated: true } : {}),
    runs: a.runs + b.runs,
    ...(agreements.length ? { agreement: agreements.reduce((s, x) => s + x, 0) / agreements.length } : {}),
    ...(a.workspaces || b.workspaces ? { workspaces: [...(a.workspaces ?? []), ...(b.workspaces ?? [])] } : {}),
  };
}
