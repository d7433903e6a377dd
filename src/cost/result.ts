/**
 * The cost parts of a run's record: result.json's `cost` block (per engine and variant, the
 * notes on how each engine was priced, the `--max-cost` budget) and the console lines.
 */
import type { EngineConfig } from '../config/types.js';
import type { JobResult } from '../run/types.js';
import { costBasis, noEstimateReason } from './estimate.js';
import { costByArm, costTotal, formatCost, type CostedJob } from './totals.js';

/** What a run knows about its cost besides the jobs' own figures (RunMeta.cost). */
export interface RunCostMeta {
  /** One sentence per engine on how its jobs were priced (see {@link costNotes}). */
  notes?: string[];
  /** `--max-cost`: the budget, what was spent (all attempts, all iterations so far), whether it stopped the run. */
  budget?: { maxUsd: number; spentUsd: number; stopped: boolean; notRun: number };
}

/** How each engine's jobs got (or did not get) their cost, in one sentence per engine that needs one. */
export function costNotes(engines: readonly EngineConfig[], results: readonly Pick<JobResult, 'engine' | 'costUsd' | 'costEstimated'>[]): string[] {
  const out: string[] = [];
  for (const e of engines) {
    const mine = results.filter((r) => r.engine === e.name);
    const name = e.displayName && e.displayName !== e.name ? e.displayName : e.name;
    const basis = costBasis(e);
    if (basis.kind === 'scripted') {
      out.push(`${name}: no cost: scripted model (its tokens are made up)`);
      continue;
    }
    const estimated = mine.filter((r) => r.costEstimated).length;
    const priced = mine.filter((r) => r.costUsd !== undefined).length;
    if (estimated && basis.kind === 'priced') out.push(`${name}: ${estimated} of ${mine.length} job cost(s) estimated from tokens at ${basis.source}`);
    if (mine.length && priced === 0) out.push(`${name}: the engine reported no cost; ${noEstimateReason(e) ?? 'no job had tokens to estimate from'}`);
  }
  return out;
}

/** result.json's `cost` block. */
export function costJson(meta: RunCostMeta | undefined, jobs: readonly CostedJob[]) {
  const total = costTotal(jobs);
  return {
    total_usd: total.usd,
    estimated: total.estimated,
    priced_jobs: total.priced,
    by_arm: costByArm(jobs).map((a) => ({ engine: a.engine, variant: a.variant, usd: a.usd, estimated: a.estimated, priced_jobs: a.priced, jobs: a.jobs })),
    notes: meta?.notes ?? [],
    ...(meta?.budget
      ? { budget: { max_usd: meta.budget.maxUsd, spent_usd: meta.budget.spentUsd, stopped: meta.budget.stopped, not_run: meta.budget.notRun } }
      : {}),
  };
}

/**
 * The console's cost lines: per engine its variants' totals (`~$0.42 (estimated)` when any
 * part was estimated), the run's total, and the notes.
 */
export function costConsoleLines(jobs: readonly CostedJob[], notes: readonly string[], names: Map<string, string>): string[] {
  const arms = costByArm(jobs);
  const total = costTotal(jobs);
  const out: string[] = [];
  const engines = [...new Set(arms.map((a) => a.engine))];
  for (const e of engines) {
    const mine = arms.filter((a) => a.engine === e && a.usd !== null);
    if (!mine.length) continue;
    out.push(`${names.get(e) ?? e} cost: ${mine.map((a) => `${a.variant} ${formatCost(a, { coverage: true })}`).join(', ')}`);
  }
  if (total.usd !== null && arms.filter((a) => a.usd !== null).length > 1) out.push(`total cost: ${formatCost(total, { coverage: true })}`);
  const indent = out.length ? '  ' : '';
  for (const n of notes) out.push(`${indent}cost note: ${n}`);
  return out;
}

