/**
 * What the agent_judge graders spent, per engine × variant, for every report (console summary,
 * summary.md, report.html, benchmark files): tokens, wall time and cost apart from the
 * agent's, which never include them (result.json `jobs[].judge`, `totals.judge`).
 */
import type { JobJson, JudgeJson } from './result-json.js';

/** The graders' spend of one engine × variant: grader runs, tokens (total), wall ms, USD (undefined: no cost reported or estimated). */
export interface JudgeSpendArm {
  engine: string;
  variant: JobJson['variant'];
  jobs: number;
  runs: number;
  tokens: number;
  durationMs: number;
  costUsd?: number;
  costEstimated: boolean;
  /** Mean agreement of the jobs graded with repeats > 1 (0..1), when any. */
  agreement?: number;
}

/** The spend of `jobs` with a `judge` block, grouped by engine and variant in first-seen order; empty when no job ran an agent_judge. */
export function judgeSpendByArm(jobs: readonly Pick<JobJson, 'engine' | 'variant' | 'judge'>[]): JudgeSpendArm[] {
  const arms = new Map<string, JudgeSpendArm & { agreements: number[] }>();
  for (const j of jobs) {
    const s: JudgeJson | undefined = j.judge;
    if (!s) continue;
    const key = `${j.engine}\u0000${j.variant}`;
    let a = arms.get(key);
    if (!a) arms.set(key, (a = { engine: j.engine, variant: j.variant, jobs: 0, runs: 0, tokens: 0, durationMs: 0, costEstimated: false, agreements: [] }));
    a.jobs++;
    a.runs += s.runs;
    a.tokens += s.tokens.total;
    a.durationMs += s.duration_ms;
    if (s.cost_usd !== undefined) a.costUsd = (a.costUsd ?? 0) + s.cost_usd;
    if (s.cost_estimated) a.costEstimated = true;
    if (s.agreement !== undefined) a.agreements.push(s.agreement);
  }
  return [...arms.values()].map(({ agreements, ...a }) => (agreements.length ? { ...a, agreement: agreements.reduce((x, y) => x + y, 0) / agreements.length } : a));
}

/** `$0.0123` or `~$0.0123 (estimated)`, or `no cost` when none was reported or estimated. */
export function judgeCostText(a: Pick<JudgeSpendArm, 'costUsd' | 'costEstimated'>): string {
  if (a.costUsd === undefined) return 'no cost';
  const usd = `$${a.costUsd < 0.01 ? a.costUsd.toFixed(4) : a.costUsd.toFixed(2)}`;
  return a.costEstimated ? `~${usd} (estimated)` : usd;
}

/** One line per arm: `judges: <engine> <variant>: N grader run(s) over J job(s), T tokens, S s, $C[, agreement A%]`, then what they are not part of. */
export function judgeSpendLines(jobs: readonly Pick<JobJson, 'engine' | 'variant' | 'judge'>[], name: (engine: string) => string = (e) => e): string[] {
  const arms = judgeSpendByArm(jobs);
  if (!arms.length) return [];
  const lines = arms.map(
    (a) =>
      `judges: ${name(a.engine)} ${a.variant}: ${a.runs} grader run(s) over ${a.jobs} job(s), ${a.tokens} tokens, ${(a.durationMs / 1000).toFixed(1)} s, ${judgeCostText(a)}${a.agreement !== undefined ? `, agreement ${Math.round(a.agreement * 100)}%` : ''}`,
  );
  lines.push("  (the graders' tokens, time and cost are not part of the agents' figures above or the cost totals)");
  return lines;
}
